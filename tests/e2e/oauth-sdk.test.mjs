// The official MCP SDK client's own OAuth flow (`auth()` through an `OAuthClientProvider`)
// against the Worker: discovery from the 401, registration (dynamic, or a Client ID Metadata
// Document served by a local test server), consent in a browser driven over HTTP, code
// exchange, tools/list, refresh, revocation, and the connection failing afterwards.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { createServer } from "node:http";
import { randomBytes } from "node:crypto";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { auth, UnauthorizedError } from "@modelcontextprotocol/sdk/client/auth.js";
import { startWorker, freePort } from "./harness.mjs";
import { Browser, consent } from "./oauth.mjs";

/** An OAuthClientProvider whose "user agent" is a browser answering our consent page. */
class TestProvider {
  constructor(worker, { redirectUrl, clientMetadataUrl, email }) {
    this.worker = worker;
    this._redirectUrl = redirectUrl;
    if (clientMetadataUrl) this.clientMetadataUrl = clientMetadataUrl;
    this.email = email;
    this.browser = new Browser(worker.url);
    this.allowConsent = true;
    this.authorizations = [];
    this.invalidated = [];
    this.consentPages = [];
  }
  get redirectUrl() {
    return this._redirectUrl;
  }
  get clientMetadata() {
    return {
      client_name: "SDK e2e client",
      redirect_uris: [this._redirectUrl],
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      token_endpoint_auth_method: "none",
    };
  }
  state() {
    this._state = randomBytes(8).toString("hex");
    return this._state;
  }
  clientInformation() {
    return this._client;
  }
  saveClientInformation(info) {
    this._client = info;
  }
  tokens() {
    return this._tokens;
  }
  saveTokens(tokens) {
    this._tokens = tokens;
  }
  saveCodeVerifier(v) {
    this._verifier = v;
  }
  codeVerifier() {
    return this._verifier;
  }
  invalidateCredentials(scope) {
    this.invalidated.push(scope);
    if (scope === "all" || scope === "client") this._client = undefined;
    if (scope === "all" || scope === "tokens") this._tokens = undefined;
  }
  async redirectToAuthorization(url) {
    this.authorizations.push(url);
    if (!this.allowConsent) return;
    const back = await consent(this.browser, url.toString(), { email: this.email, inspect: (page) => this.consentPages.push(page) });
    assert.equal(back.searchParams.get("state"), this._state);
    assert.equal(back.searchParams.get("iss"), this.worker.origin, "RFC 9207 iss");
    this.code = back.searchParams.get("code");
  }
}

/** A fetch that records what the SDK sends. */
function recorder(log) {
  return async (url, init) => {
    const res = await fetch(url, init);
    log.push({ method: init?.method ?? "GET", url: String(url), status: res.status });
    return res;
  };
}

async function connected(worker, provider, log) {
  const transport = new StreamableHTTPClientTransport(new URL(worker.mcpUrl), { authProvider: provider, fetch: recorder(log) });
  const client = new Client({ name: "sdk-oauth-e2e", version: "1.0.0" });
  await client.connect(transport);
  return client;
}

/** The SDK discovers, registers and authorizes from the first 401; then exchanges the code. */
async function authorizeWithSdk(worker, provider, log) {
  const transport = new StreamableHTTPClientTransport(new URL(worker.mcpUrl), { authProvider: provider, fetch: recorder(log) });
  const client = new Client({ name: "sdk-oauth-e2e", version: "1.0.0" });
  await assert.rejects(client.connect(transport), UnauthorizedError);
  assert.equal(provider.authorizations.length, 1);
  assert.ok(provider.code, "consent answered with a code");
  await transport.finishAuth(provider.code);
  assert.ok(provider.tokens()?.access_token);
}

async function refreshRevokeAndFail(worker, provider, log) {
  const client = await connected(worker, provider, log);
  assert.ok((await client.listTools()).tools.some((t) => t.name === "get_workspace_context"));
  await client.close();

  // Refresh through the SDK: a new pair, and the new access token works.
  const before = provider.tokens();
  assert.equal(await auth(provider, { serverUrl: new URL(worker.mcpUrl), fetchFn: recorder(log) }), "AUTHORIZED");
  const after = provider.tokens();
  assert.notEqual(after.refresh_token, before.refresh_token);
  assert.notEqual(after.access_token, before.access_token);
  assert.ok(log.some((e) => e.url.endsWith("/v1/oauth/token") && e.status === 200));
  const again = await connected(worker, provider, log);
  const result = await again.callTool({ name: "get_workspace_context", arguments: {} });
  assert.equal(result.isError, false);

  // Revocation (RFC 7009) ends the grant; the open connection fails at its next tool call,
  // the SDK's refresh is refused, and without a new consent the client stays unauthorized.
  const revoked = await fetch(`${worker.url}/v1/oauth/revoke`, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ token: after.refresh_token, token_type_hint: "refresh_token", client_id: provider.clientInformation().client_id }),
  });
  assert.equal(revoked.status, 200);
  provider.allowConsent = false;
  await assert.rejects(again.callTool({ name: "get_workspace_context", arguments: {} }), UnauthorizedError);
  assert.ok(provider.invalidated.includes("tokens"), "the refresh was refused with invalid_grant");
  assert.equal(provider.authorizations.length, 2, "the SDK had to ask the user again");
  await again.close().catch(() => {});
}

test("the SDK's own OAuth flow with dynamic registration: authorize, use, refresh, revoke", async () => {
  const worker = await startWorker();
  try {
    const log = [];
    const provider = new TestProvider(worker, { redirectUrl: `http://127.0.0.1:${await freePort()}/callback`, email: "sdk@example.com" });
    await authorizeWithSdk(worker, provider, log);
    assert.ok(log.some((e) => e.method === "POST" && e.url.endsWith("/v1/oauth/register") && e.status === 201), "registered dynamically");
    assert.ok(log.some((e) => e.url.includes("/.well-known/oauth-protected-resource/v1/mcp")), "discovered from the 401");
    assert.match(provider.clientInformation().client_id, /^vsc_/);
    await refreshRevokeAndFail(worker, provider, log);
  } finally {
    await worker.stop();
  }
});

test("the SDK's own OAuth flow with a Client ID Metadata Document served by a local server", async () => {
  const clientId = "https://client.vibesell.test/oauth/metadata.json";
  let fetched = 0;
  const server = createServer((req, res) => {
    if (req.url !== "/oauth/metadata.json") {
      res.writeHead(404);
      return res.end();
    }
    fetched++;
    res.writeHead(200, { "content-type": "application/json", "cache-control": "max-age=600" });
    res.end(
      JSON.stringify({
        client_id: clientId,
        client_name: "SDK CIMD client",
        redirect_uris: ["http://127.0.0.1/callback"],
        grant_types: ["authorization_code", "refresh_token"],
        response_types: ["code"],
        token_endpoint_auth_method: "none",
      }),
    );
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  const worker = await startWorker({ hosts: { "client.vibesell.test": `http://127.0.0.1:${server.address().port}` } });
  try {
    const log = [];
    const provider = new TestProvider(worker, {
      redirectUrl: `http://127.0.0.1:${await freePort()}/callback`,
      clientMetadataUrl: clientId,
      email: "cimd@example.com",
    });
    await authorizeWithSdk(worker, provider, log);
    assert.equal(provider.clientInformation().client_id, clientId);
    assert.ok(!log.some((e) => e.url.endsWith("/v1/oauth/register")), "no dynamic registration");
    const page = provider.consentPages[0];
    assert.match(page, /SDK CIMD client/);
    assert.match(page, /Published by<\/dt><dd><code>client\.vibesell\.test<\/code>/);
    assert.match(page, /runs on your computer/, "a loopback redirect is called out");
    assert.equal(fetched, 1, "fetched once, then served from the cache");
    await refreshRevokeAndFail(worker, provider, log);
  } finally {
    await worker.stop();
    await new Promise((resolve) => server.close(resolve));
  }
});

test("a metadata document on a private address is refused before anything is fetched", async () => {
  const worker = await startWorker();
  try {
    const browser = new Browser(worker.url);
    for (const id of [
      "https://127.0.0.1/oauth/metadata.json",
      "https://localhost/x",
      "https://10.0.0.8/x",
      "http://client.vibesell.test/x",
      // Other spellings of private addresses, read as addresses by the WHATWG parser and so by fetch.
      "https://127.1/x",
      "https://0x7f.1/x",
      "https://2130706433/x",
      "https://[::ffff:127.0.0.1]/x",
      "https://169.254.169.254/latest/meta-data",
      "https://localhost./x",
      "https://client.vibesell.test@127.0.0.1/x",
    ]) {
      const u = new URL(`${worker.url}/v1/oauth/authorize`);
      u.searchParams.set("client_id", id);
      u.searchParams.set("redirect_uri", "http://127.0.0.1/callback");
      const r = await browser.get(u.toString());
      assert.equal(r.status, 400, id);
      assert.match(r.text, /data-error="invalid_client"/, id);
    }
  } finally {
    await worker.stop();
  }
});

test("a metadata document that is too large or redirects is refused; one too slow or down is a temporary failure", async () => {
  // The fetch runs in the Worker's own `fetch` (src/edge/outbound.rs): at most 5 KB, no
  // redirect followed, 5 s for the whole exchange (src/oauth/cimd.rs). A timeout, a 5xx or a
  // network failure is `temporarily_unavailable`, never `invalid_client` (on which MCP
  // clients drop their tokens and register again).
  const server = createServer((req, res) => {
    const json = (body) => {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(body);
    };
    if (req.url === "/big.json") return json(JSON.stringify({ client_name: "x".repeat(6 * 1024) }));
    if (req.url === "/moved.json") {
      res.writeHead(302, { location: "https://client.vibesell.test/elsewhere.json" });
      return res.end();
    }
    if (req.url === "/slow.json") return setTimeout(() => json("{}"), 6_000);
    if (req.url === "/down.json") {
      res.writeHead(503);
      return res.end();
    }
    res.writeHead(404);
    res.end();
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  const worker = await startWorker({ hosts: { "client.vibesell.test": `http://127.0.0.1:${server.address().port}` } });
  try {
    const browser = new Browser(worker.url);
    // The page names a refused answer; a failed fetch's reason goes to the log only.
    for (const [path, why] of [
      ["/big.json", { log: /body larger than 5120 bytes/ }],
      ["/moved.json", { page: /answered HTTP 302/ }],
      ["/missing.json", { page: /answered HTTP 404/ }],
      ["/slow.json", { log: /timed out/, temporary: true }],
      ["/down.json", { log: /answered HTTP 503/, temporary: true }],
    ]) {
      const id = `https://client.vibesell.test${path}`;
      const u = new URL(`${worker.url}/v1/oauth/authorize`);
      u.searchParams.set("client_id", id);
      u.searchParams.set("redirect_uri", "http://127.0.0.1/callback");
      const started = Date.now();
      const r = await browser.get(u.toString());
      if (why.temporary) {
        assert.equal(r.status, 503, path);
        assert.match(r.text, /data-error="unavailable"/, path);
        assert.match(r.text, /Try again in a moment/, path);
        assert.doesNotMatch(r.text, /cannot connect/, path);
      } else {
        assert.equal(r.status, 400, path);
        assert.match(r.text, /data-error="invalid_client"/, path);
      }
      if (path === "/slow.json") assert.ok(Date.now() - started < 5_900, "given up after 5 s");
      if (why.page) assert.match(r.text, why.page, path);
      const line = worker.requestLogs().findLast((l) => l.route === "/v1/oauth/authorize");
      if (why.log) assert.match(line?.detail ?? "", why.log, `${path}: ${JSON.stringify(line)}`);
      // The token endpoint answers the same way: 503 with Retry-After, or 401 invalid_client.
      const t = await fetch(`${worker.url}/v1/oauth/token`, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams({ grant_type: "refresh_token", client_id: id, refresh_token: "vsrt_x" }),
      });
      const body = await t.json();
      assert.equal(t.status, why.temporary ? 503 : 401, path);
      assert.equal(body.error, why.temporary ? "temporarily_unavailable" : "invalid_client", path);
      assert.equal(t.headers.get("cache-control"), "no-store", path);
      if (why.temporary) assert.equal(t.headers.get("retry-after"), "30", path);
    }
  } finally {
    await worker.stop();
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});

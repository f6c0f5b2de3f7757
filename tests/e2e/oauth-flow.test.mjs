// The authorization code flow against the real Worker in workerd, driven over HTTP as a browser
// submits the pages' forms: sign-in, consent, code exchange, refresh, and what concurrency does
// to single-use secrets in Durable Objects.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { startWorker, connect, post, rpc } from "./harness.mjs";
import { Browser, pkce, registerClient, authorizeUrl, consent, tokenRequest, hidden, dataError, escapeHtml } from "./oauth.mjs";

let worker;
let client;
const redirectUri = "http://127.0.0.1:49152/callback";

before(async () => {
  // This file signs in more than the default 30 times a minute from one address; the limits
  // themselves are tested in limits.test.mjs.
  worker = await startWorker({ vars: { OAUTH_RATE_LIMITS: "authorize=300/60" } });
  client = await registerClient(worker, ["http://127.0.0.1/callback"]);
});
after(async () => {
  await worker?.stop();
});

async function codeFor(email, access = "act") {
  const { verifier, challenge } = pkce();
  const browser = new Browser(worker.url);
  const back = await consent(browser, authorizeUrl(worker, { clientId: client.client_id, redirectUri, challenge }), { email, access });
  assert.equal(back.origin + back.pathname, redirectUri);
  assert.equal(back.searchParams.get("state"), "st-e2e");
  assert.equal(back.searchParams.get("iss"), worker.origin);
  return { code: back.searchParams.get("code"), verifier, browser };
}

const redeem = (code, verifier) =>
  tokenRequest(worker, {
    grant_type: "authorization_code",
    client_id: client.client_id,
    code,
    code_verifier: verifier,
    redirect_uri: redirectUri,
    resource: `${worker.origin}/v1/mcp`,
  });

const refresh = (refreshToken) =>
  tokenRequest(worker, { grant_type: "refresh_token", client_id: client.client_id, refresh_token: refreshToken });

test("sign in, consent, exchange the code and use the token with the MCP SDK client", async () => {
  const { verifier, challenge } = pkce();
  const browser = new Browser(worker.url);
  const start = await browser.get(authorizeUrl(worker, { clientId: client.client_id, redirectUri, challenge }));
  assert.equal(start.status, 303);
  const setCookie = start.headers.getSetCookie().join("\n");
  assert.match(setCookie, /^__Host-vs_browser=[0-9a-f]{64}; Path=\/; Secure; HttpOnly; SameSite=Lax/);
  const signin = await browser.get(start.location);
  assert.equal(signin.status, 200);
  for (const [h, v] of [
    ["x-frame-options", "DENY"],
    ["cache-control", "no-store"],
    ["referrer-policy", "same-origin"],
  ]) {
    assert.equal(signin.headers.get(h), v, h);
  }
  const csp = signin.headers.get("content-security-policy");
  assert.match(csp, /frame-ancestors 'none'/);
  assert.match(csp, /default-src 'none'/);
  assert.doesNotMatch(signin.text, /<script|https?:\/\/(?!127\.0\.0\.1)/, "no script, no third-party resource");

  const back = await consent(browser, authorizeUrl(worker, { clientId: client.client_id, redirectUri, challenge }), {
    email: "flow@example.com",
  });
  const tokens = await redeem(back.searchParams.get("code"), verifier);
  assert.equal(tokens.status, 200, tokens.text);
  assert.equal(tokens.headers.get("cache-control"), "no-store");
  assert.equal(tokens.json.token_type, "Bearer");
  assert.equal(tokens.json.scope, "mcp mcp:act");
  assert.match(tokens.json.refresh_token, /^vsrt_[0-9a-f]{64}_[0-9a-f]{64}$/);
  const claims = JSON.parse(Buffer.from(tokens.json.access_token.split(".")[1], "base64url"));
  assert.equal(claims.iss, worker.origin);
  assert.equal(claims.aud, `${worker.origin}/v1/mcp`);
  assert.equal(claims.sub, "flow@example.com");
  assert.equal(claims.client_id, client.client_id);
  assert.match(claims.gid, /^gr_/);
  assert.equal(claims.exp - claims.iat, 3600);

  const sdk = await connect(worker, {}, { token: tokens.json.access_token });
  const { tools } = await sdk.listTools();
  assert.ok(tools.some((t) => t.name === "remember"));
  const result = await sdk.callTool({ name: "get_workspace_context", arguments: {} });
  assert.equal(result.isError, false);
  await sdk.close();

  const rotated = await refresh(tokens.json.refresh_token);
  assert.equal(rotated.status, 200, rotated.text);
  assert.notEqual(rotated.json.refresh_token, tokens.json.refresh_token);
  const again = await post(worker, rpc("tools/call", { name: "get_workspace_context", arguments: {} }), { token: rotated.json.access_token });
  assert.equal(again.status, 200);
});

test("a code redeemed 12 times at once has exactly one winner, and the replays revoke its grant", async () => {
  const { code, verifier } = await codeFor("race@example.com");
  const answers = await Promise.all(Array.from({ length: 12 }, () => redeem(code, verifier)));
  const winners = answers.filter((a) => a.status === 200);
  assert.equal(winners.length, 1, answers.map((a) => a.status).join(","));
  for (const a of answers.filter((a) => a.status !== 200)) {
    assert.equal(a.status, 400);
    assert.equal(a.json.error, "invalid_grant");
  }
  // RFC 6749 §10.5: the replays revoke what the winner got.
  const call = await post(worker, rpc("tools/call", { name: "get_workspace_context", arguments: {} }), {
    token: winners[0].json.access_token,
  });
  assert.equal(call.status, 401);
  assert.match(call.headers.get("www-authenticate"), /error="invalid_token"/);
  assert.equal((await refresh(winners[0].json.refresh_token)).json.error, "invalid_grant");
});

test("a used code without its verifier revokes nothing; with it, the grant ends", async () => {
  const { code, verifier } = await codeFor("replay@example.com");
  const tokens = (await redeem(code, verifier)).json;
  const callWith = (token) => post(worker, rpc("tools/call", { name: "get_workspace_context", arguments: {} }), { token });
  // Someone who saw the callback URL has the code, not the verifier: refused, and the app stays
  // connected (OAUTH-ANCHORS §1.2).
  const guessed = await redeem(code, pkce().verifier);
  assert.deepEqual([guessed.status, guessed.json.error, guessed.json.error_description], [400, "invalid_grant", "The authorization code was already used."]);
  assert.equal((await callWith(tokens.access_token)).status, 200);
  // The client sends its first scope again on refresh, offline_access included.
  const renewed = await tokenRequest(worker, {
    grant_type: "refresh_token",
    client_id: client.client_id,
    refresh_token: tokens.refresh_token,
    scope: "mcp mcp:act offline_access",
  });
  assert.deepEqual([renewed.status, renewed.json.scope], [200, "mcp mcp:act"], renewed.text);
  // The verifier with it: the code was redeemed twice by someone holding everything, so what it
  // issued is revoked (RFC 6749 §10.5).
  const replay = await redeem(code, verifier);
  assert.equal(replay.json.error, "invalid_grant");
  assert.equal((await callWith(renewed.json.access_token)).status, 401);
});

test("a refresh token presented 10 times at once rotates once; every caller gets the same new pair", async () => {
  const { code, verifier } = await codeFor("refresh-race@example.com");
  const tokens = (await redeem(code, verifier)).json;
  const answers = await Promise.all(Array.from({ length: 10 }, () => refresh(tokens.refresh_token)));
  assert.deepEqual(
    answers.map((a) => a.status),
    Array(10).fill(200),
  );
  const pairs = new Set(answers.map((a) => `${a.json.refresh_token} ${a.json.access_token}`));
  assert.equal(pairs.size, 1, "one rotation; the others are idempotent retries");
  const next = answers[0].json;
  assert.notEqual(next.refresh_token, tokens.refresh_token);
  assert.equal((await refresh(next.refresh_token)).status, 200);
  // The first token again, after its successor was used: reuse, and the grant ends.
  const reuse = await refresh(tokens.refresh_token);
  assert.equal(reuse.json.error, "invalid_grant");
  const call = await post(worker, rpc("tools/call", { name: "get_workspace_context", arguments: {} }), { token: next.access_token });
  assert.equal(call.status, 401);
});

test("narrowing to read only at consent gives a read-only token", async () => {
  const { code, verifier } = await codeFor("reader@example.com", "read");
  const tokens = await redeem(code, verifier);
  assert.equal(tokens.json.scope, "mcp");
  const sdk = await connect(worker, {}, { token: tokens.json.access_token });
  const names = (await sdk.listTools()).tools.map((t) => t.name);
  assert.ok(names.includes("get_workspace_context"));
  assert.ok(!names.includes("remember"));
  await sdk.close();
});

test("consent refuses forged forms, other browsers and reuse, and consumes nothing when it does", async () => {
  const { challenge } = pkce();
  const browser = new Browser(worker.url);
  const url = authorizeUrl(worker, { clientId: client.client_id, redirectUri, challenge });
  const start = await browser.get(url);
  let page = await browser.get(start.location);
  await browser.post("/app/signin/dev", {
    email: "csrf@example.com",
    return_to: hidden(page.text, "return_to"),
    csrf: hidden(page.text, "csrf", 'data-form="dev-signin"'),
  });
  page = await browser.get(start.location);
  const request = hidden(page.text, "request", 'data-form="consent"');
  const csrf = hidden(page.text, "csrf", 'data-form="consent"');
  const forged = await browser.post("/v1/oauth/consent", { request, csrf: "forged", decision: "approve", access: "act" });
  assert.equal(forged.status, 403);
  assert.equal(dataError(forged.text), "csrf");
  const crossSite = await browser.post("/v1/oauth/consent", { request, csrf, decision: "approve", access: "act" }, { origin: "https://evil.example" });
  assert.equal(crossSite.status, 403);
  const other = new Browser(worker.url, { ip: "192.0.2.99" });
  const seen = await other.get(start.location);
  assert.equal(seen.status, 400);
  assert.equal(dataError(seen.text), "request_unknown");
  const ok = await browser.post("/v1/oauth/consent", { request, csrf, decision: "approve", access: "act" });
  assert.equal(ok.status, 303);
  assert.ok(new URL(ok.location).searchParams.get("code"));
  const twice = await browser.post("/v1/oauth/consent", { request, csrf, decision: "approve", access: "act" });
  assert.equal(twice.status, 400);
  assert.equal(dataError(twice.text), "request_unknown");
});

test("authorize errors: bad clients and redirect URIs stay on our page; the rest go back with state and iss", async () => {
  const { challenge } = pkce();
  const browser = new Browser(worker.url);
  for (const [redirect, id, code] of [
    ["http://127.0.0.1:49152/elsewhere", client.client_id, "invalid_redirect_uri"],
    ["http://localhost:49152/callback", client.client_id, "invalid_redirect_uri"],
    ["https://evil.example/callback", client.client_id, "invalid_redirect_uri"],
    [redirectUri, "vsc_ffffffffffffffffffffffffffffffff", "unknown_client"],
  ]) {
    const r = await browser.get(authorizeUrl(worker, { clientId: id, redirectUri: redirect, challenge }));
    assert.equal(r.status, 400, redirect);
    assert.equal(r.location, null);
    assert.equal(dataError(r.text), code);
  }
  for (const [extra, code] of [
    [{ code_challenge_method: "plain" }, "invalid_request"],
    [{ code_challenge: undefined }, "invalid_request"],
    [{ scope: "mcp admin" }, "invalid_scope"],
    [{ resource: "https://evil.example/v1/mcp" }, "invalid_target"],
    [{ response_type: "token" }, "unsupported_response_type"],
  ]) {
    const u = new URL(authorizeUrl(worker, { clientId: client.client_id, redirectUri, challenge }));
    for (const [k, v] of Object.entries(extra)) v === undefined ? u.searchParams.delete(k) : u.searchParams.set(k, v);
    const r = await browser.get(u.toString());
    assert.equal(r.status, 303, JSON.stringify(extra));
    const back = new URL(r.location);
    assert.equal(back.origin + back.pathname, redirectUri);
    assert.equal(back.searchParams.get("error"), code);
    assert.equal(back.searchParams.get("state"), "st-e2e");
    assert.equal(back.searchParams.get("iss"), worker.origin);
  }
});

test("authorize: a redirect URI that differs from the registered one in any way stays on our page (RFC 9700 §4.1.3)", async () => {
  const registered = "https://app.example.com/api/mcp/auth_callback";
  const app = await registerClient(worker, [registered], { client_name: "Exact" });
  const { challenge } = pkce();
  const browser = new Browser(worker.url);
  for (const redirect of [
    "https://app.example.com/api/mcp/auth_callback/",
    "https://APP.example.com/api/mcp/auth_callback",
    "https://app.example.com:443/api/mcp/auth_callback",
    "https://app.example.com./api/mcp/auth_callback",
    "https://app.example.com/api/mcp/auth_callback?next=https://evil.example",
    "https://app.example.com/api/mcp/auth_callback#x",
    "https://app.example.com/api/mcp/%61uth_callback",
    "https://app.example.com/api/mcp/x/../auth_callback",
    "https://app.example.com@evil.example/api/mcp/auth_callback",
    "https://evil.example\\@app.example.com/api/mcp/auth_callback",
    "https://app.example.com.evil.example/api/mcp/auth_callback",
    "http://app.example.com/api/mcp/auth_callback",
  ]) {
    const r = await browser.get(authorizeUrl(worker, { clientId: app.client_id, redirectUri: redirect, challenge }));
    assert.equal(r.status, 400, redirect);
    assert.equal(r.location, null, redirect);
    assert.equal(dataError(r.text), "invalid_redirect_uri", redirect);
  }
  // The registered string itself goes on to sign-in.
  const ok = await browser.get(authorizeUrl(worker, { clientId: app.client_id, redirectUri: registered, challenge }));
  assert.equal(ok.status, 303);
  assert.ok(!ok.location.startsWith(registered));
});

test("token endpoint errors are RFC 6749 §5.2 JSON, no-store", async () => {
  const unknown = await tokenRequest(worker, { grant_type: "authorization_code", client_id: "vsc_ffffffffffffffffffffffffffffffff", code: "x", code_verifier: "y" });
  assert.equal(unknown.status, 401);
  assert.equal(unknown.json.error, "invalid_client");
  assert.match(unknown.headers.get("www-authenticate"), /^Basic /);
  const { code } = await codeFor("pkce@example.com");
  const wrong = await redeem(code, "x".repeat(43));
  assert.equal(wrong.status, 400);
  assert.equal(wrong.json.error, "invalid_grant");
  assert.equal(wrong.headers.get("cache-control"), "no-store");
  const unsupported = await tokenRequest(worker, { grant_type: "password", client_id: client.client_id });
  assert.equal(unsupported.json.error, "unsupported_grant_type");
  const missing = await tokenRequest(worker, { grant_type: "refresh_token", client_id: client.client_id });
  assert.equal(missing.json.error, "invalid_request");
});

test("a client whose redirect URIs are all Claude's gets app tokens, which list decide_approval", async () => {
  const claude = "https://claude.ai/api/mcp/auth_callback";
  const app = await registerClient(worker, [claude, "https://claude.com/api/mcp/auth_callback"], { client_name: "Claude" });
  const { verifier, challenge } = pkce();
  const back = await consent(new Browser(worker.url), authorizeUrl(worker, { clientId: app.client_id, redirectUri: claude, challenge }), {
    email: "app@example.com",
  });
  assert.equal(back.origin + back.pathname, claude);
  const tokens = await tokenRequest(worker, { grant_type: "authorization_code", client_id: app.client_id, code: back.searchParams.get("code"), code_verifier: verifier, redirect_uri: claude });
  const claims = JSON.parse(Buffer.from(tokens.json.access_token.split(".")[1], "base64url"));
  assert.equal(claims.app, true);
  const sdk = await connect(worker, {}, { token: tokens.json.access_token });
  assert.ok((await sdk.listTools()).tools.some((t) => t.name === "decide_approval"));
  await sdk.close();
  const { code, verifier: v2 } = await codeFor("app@example.com");
  const other = await redeem(code, v2);
  assert.equal(JSON.parse(Buffer.from(other.json.access_token.split(".")[1], "base64url")).app, false);
});

test("reconnecting the same app from the same browser skips the consent page; prompt=consent asks", async () => {
  const claude = "https://claude.ai/api/mcp/auth_callback";
  const app = await registerClient(worker, [claude], { client_name: "Claude (reconnecting)" });
  const browser = new Browser(worker.url);
  const exchange = (code, verifier) =>
    tokenRequest(worker, { grant_type: "authorization_code", client_id: app.client_id, code, code_verifier: verifier, redirect_uri: claude });
  const first = pkce();
  let promised = false;
  const back = await consent(browser, authorizeUrl(worker, { clientId: app.client_id, redirectUri: claude, challenge: first.challenge }), {
    email: "again@example.com",
    inspect: (html) => (promised = html.includes("without asking you again")),
  });
  assert.ok(promised, "the page says it will remember");
  assert.equal((await exchange(back.searchParams.get("code"), first.verifier)).status, 200);

  const second = pkce();
  const start = await browser.get(
    authorizeUrl(worker, { clientId: app.client_id, redirectUri: claude, challenge: second.challenge, state: "st-again" }),
  );
  assert.equal(start.status, 303);
  const answer = await browser.get(start.location);
  assert.equal(answer.status, 303, answer.text.slice(0, 300));
  const to = new URL(answer.location);
  assert.equal(to.origin + to.pathname, claude);
  assert.equal(to.searchParams.get("state"), "st-again");
  assert.equal(to.searchParams.get("iss"), worker.origin);
  const tokens = await exchange(to.searchParams.get("code"), second.verifier);
  assert.equal(tokens.status, 200);
  const sdk = await connect(worker, {}, { token: tokens.json.access_token });
  assert.ok((await sdk.listTools()).tools.some((t) => t.name === "get_workspace_context"));
  await sdk.close();
  const logged = worker.requestLogs().filter((l) => l.route === "/v1/oauth/consent" && l.method === "GET").at(-1);
  assert.match(logged.detail, /^remembered /);
  assert.equal((await browser.get(start.location)).status, 400, "the request was spent");

  const third = pkce();
  const asked = await browser.get(
    authorizeUrl(worker, { clientId: app.client_id, redirectUri: claude, challenge: third.challenge, extra: { prompt: "consent" } }),
  );
  const page = await browser.get(asked.location);
  assert.match(page.text, /data-page="consent"/);
  assert.ok(!page.text.includes("without asking you again"));
});

test("a client's name cannot become markup on the sign-in, consent or account page", async () => {
  const evil = `<script>alert('x')</script>"&> Notes`;
  const cb = "https://notes.example/cb";
  const app = await registerClient(worker, [cb], { client_name: evil });
  const browser = new Browser(worker.url);
  const shown = (page, where) => {
    assert.ok(page.text.includes(escapeHtml(evil)), `${where} shows the name escaped`);
    assert.doesNotMatch(page.text, /<script/, `${where}: no script`);
  };
  const { verifier, challenge } = pkce();
  const start = await browser.get(authorizeUrl(worker, { clientId: app.client_id, redirectUri: cb, challenge }));
  assert.equal(start.status, 303, start.text.slice(0, 300));
  const signin = await browser.get(start.location);
  assert.match(signin.text, /data-page="signin"/);
  shown(signin, "the sign-in page");
  const signedIn = await browser.post("/app/signin/dev", {
    email: "escape@example.com",
    return_to: hidden(signin.text, "return_to"),
    csrf: hidden(signin.text, "csrf", 'data-form="dev-signin"'),
  });
  assert.equal(signedIn.status, 303, signedIn.text.slice(0, 300));
  const page = await browser.get(start.location);
  assert.match(page.text, /data-page="consent"/);
  shown(page, "the consent page");
  const answer = await browser.post("/v1/oauth/consent", {
    request: hidden(page.text, "request", 'data-form="consent"'),
    csrf: hidden(page.text, "csrf", 'data-form="consent"'),
    decision: "approve",
    access: "read",
  });
  assert.equal(answer.status, 303, answer.text.slice(0, 300));
  // The app is connected once it redeems its code.
  const code = new URL(answer.location).searchParams.get("code");
  const tokens = await tokenRequest(worker, { grant_type: "authorization_code", client_id: app.client_id, code, code_verifier: verifier, redirect_uri: cb });
  assert.equal(tokens.status, 200);
  const account = await browser.get("/app/account");
  assert.equal(account.status, 200);
  shown(account, "the account page");
});

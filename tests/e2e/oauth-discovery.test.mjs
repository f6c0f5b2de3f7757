// OAuth discovery and dynamic client registration against the real Worker in workerd.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { startWorker, post, rpc } from "./harness.mjs";

let worker;
before(async () => {
  worker = await startWorker({ vars: { OAUTH_RATE_LIMITS: "register=3/3600" } });
});
after(async () => {
  await worker?.stop();
});

const register = (body, headers = {}) =>
  fetch(`${worker.url}/v1/oauth/register`, {
    method: "POST",
    headers: { "content-type": "application/json", "cf-connecting-ip": "198.51.100.1", ...headers },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });

const publicClient = (redirect) => ({
  client_name: "E2E client",
  redirect_uris: [redirect],
  token_endpoint_auth_method: "none",
  grant_types: ["authorization_code", "refresh_token"],
  response_types: ["code"],
});

test("the 401 challenge leads to the resource metadata, then to the authorization server", async () => {
  const challenge = await post(worker, rpc("initialize", {}), { token: null, headers: { origin: "http://localhost:6274" } });
  assert.equal(challenge.status, 401);
  assert.equal(challenge.headers.get("access-control-allow-origin"), "http://localhost:6274");
  assert.match(challenge.headers.get("access-control-expose-headers"), /WWW-Authenticate/);
  const www = challenge.headers.get("www-authenticate");
  const prmUrl = www.match(/resource_metadata="([^"]+)"/)[1];
  assert.equal(prmUrl, `${worker.origin}/.well-known/oauth-protected-resource/v1/mcp`);

  const prm = await fetch(prmUrl, { headers: { origin: "https://inspector.example" } });
  assert.equal(prm.status, 200);
  assert.equal(prm.headers.get("cache-control"), "public, max-age=3600");
  assert.equal(prm.headers.get("access-control-allow-origin"), "*");
  const prmText = await prm.text();
  const prmDoc = JSON.parse(prmText);
  assert.equal(prmDoc.resource, `${worker.origin}/v1/mcp`);
  assert.deepEqual(prmDoc.scopes_supported, ["mcp", "mcp:act"]);
  const rootPrm = await fetch(`${worker.url}/.well-known/oauth-protected-resource`);
  assert.equal(await rootPrm.text(), prmText, "the same document at both well-known paths");

  const asMeta = await fetch(`${worker.url}/.well-known/oauth-authorization-server`);
  assert.equal(asMeta.status, 200);
  assert.equal(asMeta.headers.get("cache-control"), "public, max-age=3600");
  const as = await asMeta.json();
  assert.equal(as.issuer, prmDoc.authorization_servers[0], "one issuer string, byte for byte");
  assert.equal(as.issuer, worker.origin);
  assert.deepEqual(as.code_challenge_methods_supported, ["S256"]);
  assert.ok(as.token_endpoint_auth_methods_supported.includes("none"));
  assert.deepEqual(as.scopes_supported, ["mcp", "mcp:act"]);
  assert.equal(as.registration_endpoint, `${worker.origin}/v1/oauth/register`);
  assert.equal(as.revocation_endpoint, `${worker.origin}/v1/oauth/revoke`);
  assert.equal(as.client_id_metadata_document_supported, true);
  assert.equal(as.authorization_response_iss_parameter_supported, true);
});

test("browsers may preflight the discovery documents and the registration endpoint", async () => {
  for (const path of ["/.well-known/oauth-authorization-server", "/.well-known/oauth-protected-resource/v1/mcp", "/v1/oauth/register"]) {
    const r = await fetch(worker.url + path, {
      method: "OPTIONS",
      headers: { origin: "https://inspector.example", "access-control-request-method": "GET", "access-control-request-headers": "mcp-protocol-version" },
    });
    assert.equal(r.status, 204, path);
    assert.equal(r.headers.get("access-control-allow-origin"), "*");
    assert.match(r.headers.get("access-control-allow-headers"), /MCP-Protocol-Version/);
  }
  const wrong = await fetch(`${worker.url}/.well-known/oauth-authorization-server`, { method: "DELETE" });
  assert.equal(wrong.status, 405);
});

test("registration returns 201 without nulls and is idempotent for identical metadata", async () => {
  const first = await register(publicClient("http://127.0.0.1/callback"));
  assert.equal(first.status, 201);
  assert.equal(first.headers.get("cache-control"), "no-store");
  const text = await first.text();
  assert.ok(!text.includes("null"), text);
  const client = JSON.parse(text);
  assert.match(client.client_id, /^vsc_[0-9a-f]{32}$/);
  assert.equal(client.client_secret, undefined);
  assert.ok(Number.isInteger(client.client_id_issued_at));
  const again = await register(publicClient("http://127.0.0.1/callback"));
  assert.equal(again.status, 201);
  assert.deepEqual(await again.json(), client);

  const confidential = await register({ redirect_uris: ["https://app.example.com/cb"] }, { "cf-connecting-ip": "198.51.100.2" });
  assert.equal(confidential.status, 201);
  const c = await confidential.json();
  assert.equal(c.token_endpoint_auth_method, "client_secret_basic");
  assert.match(c.client_secret, /^[0-9a-f]{64}$/);
  assert.equal(c.client_secret_expires_at, 0);
});

test("bad registrations get the exact RFC 7591 error", async () => {
  const cases = [
    [{ redirect_uris: ["http://evil.example.com/cb"], token_endpoint_auth_method: "none" }, "invalid_redirect_uri"],
    [{ redirect_uris: ["javascript:alert(1)//"], token_endpoint_auth_method: "none" }, "invalid_redirect_uri"],
    [{ redirect_uris: ["https://claude.ai/cb#frag"], token_endpoint_auth_method: "none" }, "invalid_redirect_uri"],
    [{ redirect_uris: ["https://user:pw@claude.ai/cb"], token_endpoint_auth_method: "none" }, "invalid_redirect_uri"],
    [{ redirect_uris: ["https://*.claude.ai/cb"], token_endpoint_auth_method: "none" }, "invalid_redirect_uri"],
    [{ redirect_uris: ["https://claude.ai/cb"], grant_types: ["client_credentials"] }, "invalid_client_metadata"],
    [{ redirect_uris: ["https://claude.ai/cb"], token_endpoint_auth_method: "private_key_jwt" }, "invalid_client_metadata"],
    [{ redirect_uris: ["https://claude.ai/cb"], client_name: "x".repeat(101) }, "invalid_client_metadata"],
    // Names that look like another's: a right-to-left override, a zero-width space.
    [{ redirect_uris: ["https://claude.ai/cb"], client_name: "Claude\u202eevil" }, "invalid_client_metadata"],
    [{ redirect_uris: ["https://claude.ai/cb"], client_name: "Clau\u200bde" }, "invalid_client_metadata"],
    ['{"redirect_uris": [', "invalid_client_metadata"],
    [JSON.stringify({ ...publicClient("http://127.0.0.1/cb"), padding: "x".repeat(20000) }), "invalid_client_metadata"],
  ];
  for (const [body, code] of cases) {
    const r = await register(body);
    assert.equal(r.status, 400, JSON.stringify(body).slice(0, 80));
    const json = await r.json();
    assert.equal(json.error, code, JSON.stringify(body).slice(0, 80));
    assert.ok(json.error_description.length > 0);
  }
});

test("redirect URIs that browsers would read otherwise than written are refused at registration (RFC 9700 §4.1.3)", async () => {
  for (const redirect of [
    "https://claude.ai@evil.example/api/mcp/auth_callback",
    "https://evil.example\\@claude.ai/api/mcp/auth_callback",
    "https://cl%61ude.ai/api/mcp/auth_callback",
    "https://claude.ai/api/mcp/evil/%2e%2e/auth_callback",
    "https:claude.ai/api/mcp/auth_callback",
    "http://127.1/callback",
    "http://0x7f.0.0.1/callback",
    "http://[::ffff:127.0.0.1]/callback",
    "https://cl\u0430ude.ai/api/mcp/auth_callback",
    "https://claude.ai/api/mcp/auth_callback\r\nSet-Cookie: x=y",
    "data:text/html,<script>alert(1)</script>",
    `https://claude.ai/${"a".repeat(600)}`,
  ]) {
    const r = await register(publicClient(redirect), { "cf-connecting-ip": "198.51.100.41" });
    assert.equal(r.status, 400, redirect);
    assert.equal((await r.json()).error, "invalid_redirect_uri", redirect);
  }
});

test("new registrations are rate limited per address; repeats are free", async () => {
  const ip = { "cf-connecting-ip": "198.51.100.77" };
  for (let i = 0; i < 3; i++) assert.equal((await register(publicClient(`http://127.0.0.1/rl${i}`), ip)).status, 201);
  const limited = await register(publicClient("http://127.0.0.1/rl-extra"), ip);
  assert.equal(limited.status, 429);
  assert.equal((await limited.json()).error, "too_many_requests");
  assert.ok(Number(limited.headers.get("retry-after")) > 0);
  assert.equal((await register(publicClient("http://127.0.0.1/rl0"), ip)).status, 201, "known metadata still answers");
});

// Sign-in with an OpenID Connect provider (code flow with PKCE, ID token checked against the
// provider's JWKS), against a local provider that follows the OpenID Connect specifications.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { createServer } from "node:http";
import { startWorker } from "./harness.mjs";
import { startFakeOidc } from "./fake-oidc.mjs";
import { Browser, pkce, registerClient, authorizeUrl, tokenRequest, hidden, dataError } from "./oauth.mjs";

let worker;
let idp;
let client;
const redirectUri = "http://127.0.0.1:49153/callback";

before(async () => {
  idp = await startFakeOidc();
  worker = await startWorker({
    vars: { OIDC_ISSUER: idp.issuer, OIDC_CLIENT_ID: idp.clientId, OIDC_CLIENT_SECRET: idp.clientSecret, OIDC_NAME: "Example ID" },
  });
  client = await registerClient(worker, ["http://127.0.0.1/callback"]);
});
after(async () => {
  await worker?.stop();
  await idp?.stop();
});

/** Authorize, then follow "Continue with Example ID" to the provider and back. */
async function signInWithProvider(browser, challenge) {
  const start = await browser.get(authorizeUrl(worker, { clientId: client.client_id, redirectUri, challenge }));
  const signin = await browser.get(start.location);
  assert.match(signin.text, /Continue with Example ID/);
  const href = signin.text.match(/href="(\/app\/signin\/oidc\?[^"]+)"/)[1].replaceAll("&amp;", "&");
  const toProvider = await browser.get(href);
  assert.equal(toProvider.status, 303, toProvider.text.slice(0, 200));
  assert.ok(toProvider.location.startsWith(`${idp.issuer}/authorize?`));
  const providerUrl = new URL(toProvider.location);
  assert.equal(providerUrl.searchParams.get("code_challenge_method"), "S256");
  assert.ok(providerUrl.searchParams.get("nonce"));
  const back = await browser.get(toProvider.location);
  assert.equal(back.status, 302);
  return { consentPath: start.location, callback: back.location };
}

test("signs in with the OpenID provider, then consents and gets tokens for that user", async () => {
  const { verifier, challenge } = pkce();
  const browser = new Browser(worker.url);
  const { consentPath, callback } = await signInWithProvider(browser, challenge);
  const done = await browser.get(callback);
  assert.equal(done.status, 303, done.text.slice(0, 300));
  assert.equal(done.location, consentPath);
  assert.ok(browser.cookies.get("__Host-vs_session")?.startsWith("vsse_"));
  const page = await browser.get(consentPath);
  assert.match(page.text, /oidc-user@example\.com/);
  const answer = await browser.post("/v1/oauth/consent", {
    request: hidden(page.text, "request", 'data-form="consent"'),
    csrf: hidden(page.text, "csrf", 'data-form="consent"'),
    decision: "approve",
    access: "act",
  });
  const code = new URL(answer.location).searchParams.get("code");
  const tokens = await tokenRequest(worker, { grant_type: "authorization_code", client_id: client.client_id, code, code_verifier: verifier, redirect_uri: redirectUri });
  assert.equal(tokens.status, 200, tokens.text);
  const claims = JSON.parse(Buffer.from(tokens.json.access_token.split(".")[1], "base64url"));
  assert.equal(claims.sub, "oidc:127.0.0.1:idp-user-1");
  // The callback URL is single use.
  const replay = await browser.get(callback);
  assert.equal(replay.status, 400);
  assert.equal(dataError(replay.text), "signin_expired");
});

test("a wrong nonce, audience, expiry or signature signs nobody in", async () => {
  for (const misbehave of ["nonce", "audience", "expired", "signature"]) {
    const { challenge } = pkce();
    const browser = new Browser(worker.url);
    const { callback } = await signInWithProvider(browser, challenge);
    idp.misbehave = misbehave;
    const done = await browser.get(callback);
    assert.equal(done.status, 400, misbehave);
    assert.equal(dataError(done.text), "signin_failed", misbehave);
    assert.equal(browser.cookies.get("__Host-vs_session"), undefined, `${misbehave}: no session`);
  }
});

test("another browser cannot finish someone's sign-in", async () => {
  const { challenge } = pkce();
  const { callback } = await signInWithProvider(new Browser(worker.url), challenge);
  const thief = new Browser(worker.url, { ip: "192.0.2.77" });
  await thief.get("/app/signin");
  const stolen = await thief.get(callback);
  assert.equal(stolen.status, 400);
  assert.equal(dataError(stolen.text), "signin_expired");
  assert.equal(thief.cookies.get("__Host-vs_session"), undefined);
});

test("a provider whose discovery document streams past 64 KB signs nobody in, and the log says why", async () => {
  // Sent in chunks without a length, so the Worker's fetch (src/edge/outbound.rs) must count
  // the bytes as they come and stop reading past the limit.
  let sent = 0;
  const server = createServer((req, res) => {
    res.writeHead(200, { "content-type": "application/json" });
    const chunk = " ".repeat(1024);
    const timer = setInterval(() => {
      if (res.destroyed || sent >= 200) {
        clearInterval(timer);
        return res.end("{}");
      }
      sent += 1;
      res.write(chunk);
    }, 5);
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  const issuer = `http://127.0.0.1:${server.address().port}`;
  const other = await startWorker({ vars: { OIDC_ISSUER: issuer, OIDC_CLIENT_ID: "c", OIDC_CLIENT_SECRET: "s", OIDC_NAME: "Streaming ID" } });
  try {
    const otherClient = await registerClient(other, ["http://127.0.0.1/callback"]);
    const browser = new Browser(other.url);
    const start = await browser.get(authorizeUrl(other, { clientId: otherClient.client_id, redirectUri, challenge: pkce().challenge }));
    const signin = await browser.get(start.location);
    const href = signin.text.match(/href="(\/app\/signin\/oidc\?[^"]+)"/)[1].replaceAll("&amp;", "&");
    const r = await browser.get(href);
    assert.equal(r.status, 503);
    assert.equal(dataError(r.text), "provider_unavailable");
    const line = other.requestLogs().findLast((l) => l.route === "/app/signin/oidc");
    assert.match(line?.detail ?? "", /body larger than 65536 bytes/, JSON.stringify(line));
    assert.ok(sent < 200, `stopped reading early (${sent} KB sent)`);
  } finally {
    await other.stop();
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});

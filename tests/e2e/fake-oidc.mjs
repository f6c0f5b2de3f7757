// A local OpenID Connect provider for the end-to-end tests, following OpenID Connect Core 1.0
// and Discovery 1.0: discovery document, authorization endpoint (signs in a fixed test user at
// once and redirects back with `code`, `state` and `iss`), token endpoint (client_secret_basic,
// PKCE S256, redirect URI check) answering an RS256 ID token, and JWKS.
// `misbehave` makes the next ID token wrong in one way, for the negative tests.
import { createServer } from "node:http";
import { createHash, createSign, generateKeyPairSync, randomBytes } from "node:crypto";

const b64url = (b) => Buffer.from(b).toString("base64url");

export async function startFakeOidc({ clientId = "vibesell-e2e", clientSecret = "e2e-secret", user = { sub: "idp-user-1", email: "oidc-user@example.com" } } = {}) {
  const { privateKey, publicKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
  const { privateKey: otherKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
  const kid = "e2e-key-1";
  const codes = new Map();
  const log = [];
  let issuer;
  const provider = { misbehave: null, log, user };

  function idToken(claims, key = privateKey) {
    const header = b64url(JSON.stringify({ alg: "RS256", typ: "JWT", kid }));
    const payload = b64url(JSON.stringify(claims));
    const sig = createSign("RSA-SHA256").update(`${header}.${payload}`).sign(key);
    return `${header}.${payload}.${b64url(sig)}`;
  }

  const json = (res, status, body) => {
    res.writeHead(status, { "content-type": "application/json", "cache-control": "no-store" });
    res.end(JSON.stringify(body));
  };

  const server = createServer(async (req, res) => {
    const url = new URL(req.url, issuer);
    log.push(`${req.method} ${url.pathname}`);
    if (url.pathname === "/.well-known/openid-configuration") {
      return json(res, 200, {
        issuer,
        authorization_endpoint: `${issuer}/authorize`,
        token_endpoint: `${issuer}/token`,
        jwks_uri: `${issuer}/jwks`,
        response_types_supported: ["code"],
        subject_types_supported: ["public"],
        id_token_signing_alg_values_supported: ["RS256"],
        token_endpoint_auth_methods_supported: ["client_secret_basic"],
        code_challenge_methods_supported: ["S256"],
        authorization_response_iss_parameter_supported: true,
      });
    }
    if (url.pathname === "/jwks") {
      const jwk = publicKey.export({ format: "jwk" });
      return json(res, 200, { keys: [{ ...jwk, kid, use: "sig", alg: "RS256" }] });
    }
    if (url.pathname === "/authorize") {
      const q = url.searchParams;
      if (q.get("client_id") !== clientId || q.get("response_type") !== "code" || q.get("code_challenge_method") !== "S256") {
        res.writeHead(400);
        return res.end("bad authorization request");
      }
      const code = b64url(randomBytes(16));
      codes.set(code, { nonce: q.get("nonce"), challenge: q.get("code_challenge"), redirect: q.get("redirect_uri") });
      const back = new URL(q.get("redirect_uri"));
      back.searchParams.set("code", code);
      back.searchParams.set("state", q.get("state"));
      back.searchParams.set("iss", issuer);
      res.writeHead(302, { location: back.toString() });
      return res.end();
    }
    if (url.pathname === "/token" && req.method === "POST") {
      let body = "";
      for await (const chunk of req) body += chunk;
      const form = new URLSearchParams(body);
      const expected = `Basic ${Buffer.from(`${encodeURIComponent(clientId)}:${encodeURIComponent(clientSecret)}`).toString("base64")}`;
      if (req.headers.authorization !== expected) return json(res, 401, { error: "invalid_client" });
      const entry = codes.get(form.get("code"));
      codes.delete(form.get("code"));
      const verifierOk = entry && b64url(createHash("sha256").update(form.get("code_verifier") ?? "").digest()) === entry.challenge;
      if (!entry || !verifierOk || form.get("redirect_uri") !== entry.redirect) return json(res, 400, { error: "invalid_grant" });
      const now = Math.floor(Date.now() / 1000);
      let claims = { iss: issuer, aud: clientId, sub: provider.user.sub, email: provider.user.email, nonce: entry.nonce, iat: now, exp: now + 300 };
      let key = privateKey;
      switch (provider.misbehave) {
        case "nonce": claims.nonce = "not-the-nonce"; break;
        case "audience": claims.aud = "someone-else"; break;
        case "expired": claims = { ...claims, iat: now - 900, exp: now - 600 }; break;
        case "signature": key = otherKey; break;
      }
      provider.misbehave = null;
      return json(res, 200, { access_token: b64url(randomBytes(16)), token_type: "Bearer", expires_in: 300, id_token: idToken(claims, key) });
    }
    res.writeHead(404);
    res.end();
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  issuer = `http://127.0.0.1:${server.address().port}`;
  provider.issuer = issuer;
  provider.clientId = clientId;
  provider.clientSecret = clientSecret;
  provider.stop = () => new Promise((resolve) => server.close(resolve));
  return provider;
}

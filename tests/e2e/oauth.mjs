// Helpers for the OAuth end-to-end suites: a browser that keeps cookies and does not follow
// redirects (so every hop of the flow is checked), PKCE, registration, and driving the sign-in
// and consent pages over HTTP exactly as a user's browser submits their forms.
import { createHash, randomBytes } from "node:crypto";
import assert from "node:assert/strict";
import { answerOf } from "./harness.mjs";

export const b64url = (buf) => Buffer.from(buf).toString("base64url");

/** A PKCE pair. */
export function pkce() {
  const verifier = b64url(randomBytes(32));
  const challenge = b64url(createHash("sha256").update(verifier).digest());
  return { verifier, challenge };
}

/** A browser: cookies by name, manual redirects, a fixed client address. */
export class Browser {
  constructor(base, { ip = "192.0.2.50" } = {}) {
    this.base = base;
    this.ip = ip;
    this.cookies = new Map();
  }

  keep(res) {
    for (const line of res.headers.getSetCookie()) {
      const [pair, ...attrs] = line.split(";");
      const eq = pair.indexOf("=");
      const name = pair.slice(0, eq).trim();
      const value = pair.slice(eq + 1).trim();
      if (attrs.some((a) => a.trim().toLowerCase() === "max-age=0")) this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
  }

  headers(extra = {}) {
    const cookie = [...this.cookies].map(([k, v]) => `${k}=${v}`).join("; ");
    return { ...(cookie ? { cookie } : {}), "cf-connecting-ip": this.ip, ...extra };
  }

  async get(path) {
    const res = await fetch(new URL(path, this.base), { redirect: "manual", headers: this.headers() });
    this.keep(res);
    return { status: res.status, headers: res.headers, text: await res.text(), location: res.headers.get("location") };
  }

  async post(path, fields, extra = {}) {
    const res = await fetch(new URL(path, this.base), {
      method: "POST",
      redirect: "manual",
      headers: this.headers({ "content-type": "application/x-www-form-urlencoded", origin: this.base, ...extra }),
      body: new URLSearchParams(fields).toString(),
    });
    this.keep(res);
    return { status: res.status, headers: res.headers, text: await res.text(), location: res.headers.get("location") };
  }
}

/** The value of a hidden input named `name` in `html` (after `from`, if given). */
export function hidden(html, name, from = "") {
  const start = from ? html.indexOf(from) : 0;
  assert.ok(start >= 0, `no ${from} in the page`);
  const m = html.slice(start).match(new RegExp(`name="${name}" value="([^"]*)"`));
  assert.ok(m, `no hidden ${name} in the page`);
  return m[1].replaceAll("&amp;", "&").replaceAll("&#39;", "'").replaceAll("&quot;", '"');
}

/** `text` as the pages' templates escape it (maud: `&`, `<`, `>` and `"`). */
export const escapeHtml = (text) =>
  text.replaceAll("&", "&amp;").replaceAll("<", "&lt;").replaceAll(">", "&gt;").replaceAll('"', "&quot;");

/** The `data-error` of an error page. */
export const dataError = (html) => html.match(/data-error="([^"]+)"/)?.[1];

/** Registers a public client; answers its registration. */
export async function registerClient(worker, redirectUris, extra = {}) {
  const res = await fetch(`${worker.url}/v1/oauth/register`, {
    method: "POST",
    headers: { "content-type": "application/json", "cf-connecting-ip": "192.0.2.60" },
    body: JSON.stringify({
      client_name: "E2E client",
      redirect_uris: redirectUris,
      token_endpoint_auth_method: "none",
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      ...extra,
    }),
  });
  assert.equal(res.status, 201);
  return res.json();
}

/** An authorization URL. */
export function authorizeUrl(worker, { clientId, redirectUri, challenge, scope = "mcp mcp:act", state = "st-e2e", extra = {} }) {
  const u = new URL(`${worker.url}/v1/oauth/authorize`);
  const params = {
    response_type: "code",
    client_id: clientId,
    redirect_uri: redirectUri,
    code_challenge: challenge,
    code_challenge_method: "S256",
    state,
    scope,
    resource: `${worker.origin}/v1/mcp`,
    ...extra,
  };
  for (const [k, v] of Object.entries(params)) if (v !== undefined) u.searchParams.set(k, v);
  return u.toString();
}

/**
 * Follows an authorization URL in `browser`: signs in with the development form if asked
 * (as `email`), then answers the consent page (`decision`, `access`). Answers the final
 * redirect to the client.
 */
export async function consent(browser, url, { email = "e2e@example.com", decision = "approve", access = "act", inspect } = {}) {
  const start = await browser.get(url);
  assert.equal(start.status, 303, start.text.slice(0, 300));
  const consentPath = start.location;
  assert.match(consentPath, /^\/v1\/oauth\/consent\?request=[0-9a-f]{64}$/);
  let page = await browser.get(consentPath);
  if (page.text.includes('data-page="signin"')) {
    const signin = await browser.post("/app/signin/dev", {
      email,
      return_to: hidden(page.text, "return_to"),
      csrf: hidden(page.text, "csrf", 'data-form="dev-signin"'),
    });
    assert.equal(signin.status, 303, signin.text.slice(0, 300));
    assert.equal(signin.location, consentPath);
    page = await browser.get(consentPath);
  }
  assert.match(page.text, /data-page="consent"/);
  inspect?.(page.text);
  const answer = await browser.post("/v1/oauth/consent", {
    request: hidden(page.text, "request", 'data-form="consent"'),
    csrf: hidden(page.text, "csrf", 'data-form="consent"'),
    decision,
    access,
  });
  assert.equal(answer.status, 303, answer.text.slice(0, 300));
  return new URL(answer.location);
}

/**
 * Opens `path` signed out in a new browser (at address `ip`, if given), signs in as `email`
 * with the development form, and comes back. Answers the browser.
 */
export async function signIn(worker, path, email, { ip } = {}) {
  const browser = new Browser(worker.url, ip ? { ip } : {});
  const first = await browser.get(path);
  assert.equal(first.status, 303, first.text.slice(0, 300));
  assert.equal(first.location, `/app/signin?return_to=${encodeURIComponent(path)}`);
  const form = await browser.get(first.location);
  assert.match(form.text, /data-page="signin"/);
  const signin = await browser.post("/app/signin/dev", {
    email,
    return_to: hidden(form.text, "return_to"),
    csrf: hidden(form.text, "csrf", 'data-form="dev-signin"'),
  });
  assert.equal(signin.status, 303, signin.text.slice(0, 300));
  assert.equal(signin.location, path, "back where they started");
  return browser;
}

/** A web page's data block, as the card's script reads it. */
export function pageData(html) {
  const m = html.match(/<script type="application\/json" id="vibesell-page">([^<]*)<\/script>/);
  assert.ok(m, "the page carries its data");
  return JSON.parse(m[1]);
}

/** A token request. */
export async function tokenRequest(worker, fields, headers = {}) {
  const res = await fetch(`${worker.url}/v1/oauth/token`, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded", "cf-connecting-ip": "192.0.2.70", ...headers },
    body: new URLSearchParams(fields).toString(),
  });
  return answerOf(res);
}

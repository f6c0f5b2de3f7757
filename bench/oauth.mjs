// The refresh-grant scenario, which joins the benchmark by itself once the Worker has a token
// endpoint (issue 3). Refresh tokens rotate on every use, so wrk needs one live grant per
// connection (bench/wrk/refresh.lua); this module gets them the way a client does: discovery
// (RFC 8414), dynamic registration (RFC 7591), the authorization request with PKCE, the
// sign-in and consent forms filled in as a person would (development sign-in by email, then
// "approve"), and the code exchange.
import { createHash, randomBytes } from "node:crypto";
import { PUBLIC_URL } from "./lib.mjs";

const REDIRECT_URI = "http://127.0.0.1:9/bench/callback";
const b64url = (buf) => Buffer.from(buf).toString("base64url");
const form = (o) => new URLSearchParams(o).toString();

class Jar {
  cookies = new Map();
  take(res) {
    for (const c of res.headers.getSetCookie?.() ?? []) {
      const [pair] = c.split(";");
      const i = pair.indexOf("=");
      if (i > 0) this.cookies.set(pair.slice(0, i).trim(), pair.slice(i + 1).trim());
    }
  }
  header() {
    return [...this.cookies].map(([k, v]) => `${k}=${v}`).join("; ");
  }
}

const attr = (tag, name) => tag.match(new RegExp(`\\b${name}\\s*=\\s*(?:"([^"]*)"|'([^']*)'|([^\\s>]+))`, "i"))?.slice(1).find((x) => x !== undefined);
const unescape = (s) => (s ?? "").replace(/&amp;/g, "&").replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&lt;/g, "<").replace(/&gt;/g, ">");

/**
 * The fields a person would submit on `html`: the page's own form (sign-in or consent), never
 * the sign-out form of the page bar, and approve, never deny.
 */
function fillForm(html, pageUrl, email) {
  const forms = html.match(/<form\b[^>]*>[\s\S]*?<\/form>/gi) ?? [];
  const formHtml = forms.find((f) => !/action\s*=\s*["']?[^"'>\s]*signout/i.test(f.match(/<form\b[^>]*>/i)[0]));
  if (!formHtml) return null;
  const open = formHtml.match(/<form\b[^>]*>/i)[0];
  const action = new URL(unescape(attr(open, "action") ?? ""), pageUrl).toString();
  const method = (attr(open, "method") ?? "GET").toUpperCase();
  const fields = {};
  let submit = null;
  for (const tag of formHtml.match(/<(input|button)\b[^>]*>/gi) ?? []) {
    const name = attr(tag, "name");
    const type = (attr(tag, "type") ?? (tag.toLowerCase().startsWith("<button") ? "submit" : "text")).toLowerCase();
    const value = unescape(attr(tag, "value") ?? "");
    if (!name) continue;
    if (type === "submit") {
      const wanted = /approve|allow|accept|continue|sign|yes|consent|grant/i.test(`${name} ${value}`) && !/deny|cancel|reject/i.test(`${name} ${value}`);
      if (wanted && !submit) submit = [name, value];
    } else if (type === "email" || /email/i.test(name)) {
      fields[name] = email;
    } else if (type === "radio" || type === "checkbox") {
      // Keep what the page checked by default (the full access it asked for).
      if (/\bchecked\b/i.test(tag)) fields[name] = value || "on";
    } else {
      fields[name] = value;
    }
  }
  if (submit) fields[submit[0]] = submit[1];
  return { action, method, fields };
}

/**
 * The three Workers share one PUBLIC_URL (so one set of access tokens works on all of them),
 * which is not where this Worker listens: its metadata, forms and redirects name PUBLIC_URL. A
 * browser would be at PUBLIC_URL; here each of those URLs is sent to the Worker's own socket, and
 * form POSTs carry PUBLIC_URL's origin, as the browser's would.
 */
const PUBLIC_ORIGIN = new URL(PUBLIC_URL).origin;
let WORKER_ORIGIN = PUBLIC_ORIGIN;
const local = (u) => {
  const url = new URL(u);
  return url.origin === PUBLIC_ORIGIN ? WORKER_ORIGIN + url.pathname + url.search : url.toString();
};

/** Runs one authorization and returns its refresh token. */
async function grant(meta, clientId, i) {
  const jar = new Jar();
  const verifier = b64url(randomBytes(32));
  const challenge = b64url(createHash("sha256").update(verifier).digest());
  const authorize = new URL(meta.authorization_endpoint);
  authorize.search = form({
    response_type: "code",
    client_id: clientId,
    redirect_uri: REDIRECT_URI,
    code_challenge: challenge,
    code_challenge_method: "S256",
    scope: "mcp mcp:act",
    state: b64url(randomBytes(8)),
    resource: `${PUBLIC_URL}/v1/mcp`,
  });
  let request = { url: authorize.toString(), method: "GET", body: undefined };
  for (let step = 0; step < 12; step++) {
    const res = await fetch(local(request.url), {
      method: request.method,
      redirect: "manual",
      headers: {
        cookie: jar.header(),
        ...(request.body ? { "content-type": "application/x-www-form-urlencoded", origin: PUBLIC_ORIGIN } : {}),
      },
      body: request.body,
    });
    jar.take(res);
    const location = res.headers.get("location");
    if (location) {
      const next = new URL(location, request.url);
      if (next.toString().startsWith(REDIRECT_URI)) {
        const code = next.searchParams.get("code");
        if (!code) throw new Error(`authorization refused: ${next.searchParams.get("error")}`);
        const token = await fetch(local(meta.token_endpoint), {
          method: "POST",
          headers: { "content-type": "application/x-www-form-urlencoded" },
          body: form({ grant_type: "authorization_code", code, redirect_uri: REDIRECT_URI, client_id: clientId, code_verifier: verifier, resource: `${PUBLIC_URL}/v1/mcp` }),
        });
        const json = await token.json().catch(() => ({}));
        if (!json.refresh_token) throw new Error(`code exchange gave no refresh token (${token.status})`);
        return json.refresh_token;
      }
      request = { url: next.toString(), method: "GET", body: undefined };
      continue;
    }
    const html = await res.text();
    const filled = fillForm(html, request.url, `bench-refresh-${i}@example.com`);
    if (!filled) throw new Error(`step ${step}: ${res.status} page without a form or redirect`);
    const body = form(filled.fields);
    request =
      filled.method === "POST"
        ? { url: filled.action, method: "POST", body }
        : { url: `${filled.action}${filled.action.includes("?") ? "&" : "?"}${body}`, method: "GET", body: undefined };
  }
  throw new Error("the authorization did not finish in 12 steps");
}

/**
 * The refresh scenario when the Worker at `origin` has a token endpoint, else null; `say`
 * explains a skip. Grants are made afresh before every run (a run cut off mid-flight leaves
 * some chains rotated server-side but unknown to wrk).
 */
export async function refreshScenario(origin, connections, say) {
  const probe = await fetch(`${origin}/v1/oauth/token`, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: form({ grant_type: "refresh_token", refresh_token: "bench-probe", client_id: "bench-probe" }),
  }).catch(() => null);
  if (!probe || probe.status === 404) {
    say("refresh grant: /v1/oauth/token does not exist in this build yet; the scenario is skipped");
    return null;
  }
  try {
    WORKER_ORIGIN = origin;
    const meta = await (await fetch(`${origin}/.well-known/oauth-authorization-server`)).json();
    const registered = await fetch(local(meta.registration_endpoint), {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        client_name: "VibeSell bench",
        redirect_uris: [REDIRECT_URI],
        grant_types: ["authorization_code", "refresh_token"],
        response_types: ["code"],
        token_endpoint_auth_method: "none",
      }),
    });
    const clientId = (await registered.json()).client_id;
    if (!clientId) throw new Error(`registration failed (${registered.status})`);
    const grants = async (n) => {
      const out = [];
      for (let i = 0; i < n; i++) out.push(await grant(meta, clientId, i));
      return out;
    };
    await grants(1);
    say(`refresh grant: token endpoint found; ${connections + 1} grants are made before each run`);
    const tokenPath = new URL(meta.token_endpoint).pathname;
    return {
      id: "refresh",
      title: "token endpoint: refresh grant",
      path: tokenPath,
      workers: ["ours", "floor"],
      script: "refresh.lua",
      wrkEnv: () => ({ BENCH_CLIENT_ID: clientId, BENCH_REFRESH_TOKENS: "" }),
      // One grant more than connections: wrk calls request() once before it opens them (for
      // a request it never sends), which takes a token out of the pool for good.
      reseed: async (name) => (name === "floor" ? {} : { BENCH_REFRESH_TOKENS: (await grants(connections + 1)).join("\n") }),
      async check(url) {
        const [token] = await grants(1);
        const res = await fetch(`${url}${tokenPath}`, {
          method: "POST",
          headers: { "content-type": "application/x-www-form-urlencoded" },
          body: form({ grant_type: "refresh_token", refresh_token: token, client_id: clientId }),
        });
        const text = await res.text();
        return { ok: res.status === 200 && /"refresh_token"/.test(text) && /"access_token"/.test(text), status: res.status, text };
      },
    };
  } catch (e) {
    say(`refresh grant: the token endpoint exists but no grant could be made (${e.message}); the scenario is skipped`);
    return { skipped: `refresh: the token endpoint exists but no grant could be made (${e.message})` };
  }
}

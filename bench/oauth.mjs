// OAuth as a client drives it, for the benchmark: the refresh-grant scenario (on every Worker
// with a token endpoint), the Cloudflare-stack baseline's own access tokens for the MCP
// scenarios, and bench/refresh-race.mjs. Refresh tokens rotate on every use, so wrk needs one live
// grant per connection (bench/wrk/refresh.lua); this module gets them the way a client does:
// discovery (RFC 8414), dynamic registration (RFC 7591), the authorization request with PKCE,
// the sign-in and consent forms filled in as a person would (development sign-in by email, then
// "approve"), and the code exchange.
import { createHash, randomBytes } from "node:crypto";

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
 * An OAuth client of the Worker listening at `origin`, registered the way a client registers
 * (RFC 8414 discovery, RFC 7591 registration). The Worker's issuer, from its metadata, is not
 * always where it listens: ours names PUBLIC_URL in its metadata, forms and redirects, so each
 * of those URLs is sent to the Worker's own socket, and form POSTs carry the issuer's origin, as
 * a browser at PUBLIC_URL would; the Cloudflare-stack baseline listens at its issuer. Resolves to
 * { clientId, tokenPath, grant(email), refresh(token) }.
 */
export async function oauthClient(origin) {
  const meta = await (await fetch(`${origin}/.well-known/oauth-authorization-server`)).json();
  const publicOrigin = new URL(meta.issuer).origin;
  const local = (u) => {
    const url = new URL(u);
    return url.origin === publicOrigin ? origin + url.pathname + url.search : url.toString();
  };
  const resource = `${publicOrigin}/v1/mcp`;
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
  const tokenUrl = local(meta.token_endpoint);

  /** Sends a refresh grant with `refreshToken`; resolves to { status, json, text }. */
  async function refresh(refreshToken) {
    const res = await fetch(tokenUrl, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: form({ grant_type: "refresh_token", refresh_token: refreshToken, client_id: clientId }),
    });
    const text = await res.text();
    let json;
    try {
      json = JSON.parse(text);
    } catch {
      json = undefined;
    }
    return { status: res.status, json, text };
  }

  /**
   * Runs one authorization for the user `email` and resolves to the token response of its code
   * exchange ({ access_token, refresh_token, … }). The user signs in as a person would on ours'
   * pages (development sign-in, then consent); `login_hint` names them to the Cloudflare-stack
   * baseline, whose consent handler approves at once, and is ignored by ours.
   */
  async function grant(email) {
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
      resource,
      login_hint: email,
    });
    let request = { url: authorize.toString(), method: "GET", body: undefined };
    for (let step = 0; step < 12; step++) {
      const res = await fetch(local(request.url), {
        method: request.method,
        redirect: "manual",
        headers: {
          cookie: jar.header(),
          ...(request.body ? { "content-type": "application/x-www-form-urlencoded", origin: publicOrigin } : {}),
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
          const token = await fetch(tokenUrl, {
            method: "POST",
            headers: { "content-type": "application/x-www-form-urlencoded" },
            body: form({ grant_type: "authorization_code", code, redirect_uri: REDIRECT_URI, client_id: clientId, code_verifier: verifier, resource }),
          });
          const json = await token.json().catch(() => ({}));
          if (!json.refresh_token) throw new Error(`code exchange gave no refresh token (${token.status})`);
          return json;
        }
        request = { url: next.toString(), method: "GET", body: undefined };
        continue;
      }
      const html = await res.text();
      const filled = fillForm(html, request.url, email);
      if (!filled) throw new Error(`step ${step}: ${res.status} page without a form or redirect: ${html.slice(0, 200)}`);
      const body = form(filled.fields);
      request =
        filled.method === "POST"
          ? { url: filled.action, method: "POST", body }
          : { url: `${filled.action}${filled.action.includes("?") ? "&" : "?"}${body}`, method: "GET", body: undefined };
    }
    throw new Error("the authorization did not finish in 12 steps");
  }

  return { clientId, tokenPath: new URL(meta.token_endpoint).pathname, grant, refresh };
}

/** Whether the Worker at `origin` has a token endpoint at ours' path. */
async function hasTokenEndpoint(origin) {
  const probe = await fetch(`${origin}/v1/oauth/token`, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: form({ grant_type: "refresh_token", refresh_token: "bench-probe", client_id: "bench-probe" }),
  }).catch(() => null);
  return probe !== null && probe.status !== 404;
}

/**
 * Access tokens a Worker issued itself, for the MCP scenarios (the Cloudflare-stack baseline's):
 * one grant for the acting user and one per spread workspace, the same users as `tokens()` in
 * lib.mjs. Its access tokens live an hour, as ours do, so a set older than half that is renewed
 * through each grant's refresh token before it is handed out again, keeping a long run's tokens
 * valid. Resolves to { act(), spread() }, each resolving to the current tokens.
 */
export async function ownTokens(client, spread = 64) {
  const RENEW_AFTER_MS = 30 * 60_000;
  const users = ["bench-user@example.com", ...Array.from({ length: spread }, (_, i) => `bench-user-${i}@example.com`)];
  let grants = [];
  for (const user of users) grants.push(await client.grant(user));
  let issuedAt = Date.now();
  const current = async () => {
    if (Date.now() - issuedAt > RENEW_AFTER_MS) {
      const renewed = [];
      for (const g of grants) {
        const r = await client.refresh(g.refresh_token);
        if (r.status !== 200 || !r.json?.access_token) throw new Error(`renewing a benchmark token failed: ${r.status} ${r.text.slice(0, 200)}`);
        renewed.push(r.json);
      }
      grants = renewed;
      issuedAt = Date.now();
    }
    return grants.map((g) => g.access_token);
  };
  return { act: async () => (await current())[0], spread: async () => (await current()).slice(1) };
}

/**
 * The refresh scenario on every Worker of `origins` (name → origin) that has a token endpoint;
 * null when none has. `clients` (name → `oauthClient`) are reused where given. `say` explains a
 * skip. Grants are made afresh before every run (a run cut off mid-flight leaves some chains
 * rotated server-side but unknown to wrk).
 */
export async function refreshScenario(origins, connections, say, clients = {}) {
  const ready = {};
  const skipped = [];
  for (const [name, origin] of Object.entries(origins)) {
    if (!(await hasTokenEndpoint(origin))) {
      say(`refresh grant: ${name} has no /v1/oauth/token; it sits out the scenario`);
      continue;
    }
    try {
      const client = clients[name] ?? (await oauthClient(origin));
      await client.grant("bench-refresh-0@example.com");
      ready[name] = client;
    } catch (e) {
      say(`refresh grant: ${name}'s token endpoint exists but no grant could be made (${e.message}); it sits out the scenario`);
      skipped.push(`refresh on ${name}: the token endpoint exists but no grant could be made (${e.message})`);
    }
  }
  if (!Object.keys(ready).length) return skipped.length ? { skipped } : null;
  say(`refresh grant: token endpoints found on ${Object.keys(ready).join(", ")}; ${connections + 1} grants are made before each run`);
  const grants = async (client, n) => {
    const out = [];
    for (let i = 0; i < n; i++) out.push((await client.grant(`bench-refresh-${i}@example.com`)).refresh_token);
    return out;
  };
  const paths = new Set(Object.values(ready).map((c) => c.tokenPath));
  if (paths.size !== 1) throw new Error(`the token endpoints differ (${[...paths].join(", ")}): the floor needs one path`);
  return {
    id: "refresh",
    title: "token endpoint: refresh grant",
    path: [...paths][0],
    workers: [...Object.keys(ready), "floor"],
    script: "refresh.lua",
    skipped,
    wrkEnv: (name) => ({ BENCH_CLIENT_ID: ready[name]?.clientId ?? "", BENCH_REFRESH_TOKENS: "" }),
    // One grant more than connections: wrk calls request() once before it opens them (for
    // a request it never sends), which takes a token out of the pool for good.
    reseed: async (name) => (ready[name] ? { BENCH_REFRESH_TOKENS: (await grants(ready[name], connections + 1)).join("\n") } : {}),
    async check(url, name) {
      const [token] = await grants(ready[name], 1);
      const r = await ready[name].refresh(token);
      return { ok: r.status === 200 && typeof r.json?.refresh_token === "string" && typeof r.json?.access_token === "string", status: r.status, text: r.text };
    },
  };
}

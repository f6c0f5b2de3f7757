// Mints access tokens signed with the local development key, exactly as the Worker's token
// endpoint would (HS256, typ at+jwt, kid, iss/aud/sub/ws/client_id/scope/app/jti/exp/iat).
// It refuses any key that is not a development key and any non-loopback PUBLIC_URL, so it can
// never produce a token a real deployment would accept.
import { createHash, createHmac, randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { join, dirname } from "node:path";
import { fileURLToPath } from "node:url";

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..", "..");

/** Reads KEY=VALUE lines (the .dev.vars format wrangler uses). */
export function readDevVars(path = join(ROOT, ".dev.vars")) {
  const vars = {};
  for (const line of readFileSync(path, "utf8").split("\n")) {
    const m = line.match(/^\s*([A-Z0-9_]+)\s*=\s*"?([^"]*)"?\s*$/);
    if (m) vars[m[1]] = m[2];
  }
  return vars;
}

/** PUBLIC_URL from wrangler.toml's [vars]. */
export function configuredPublicUrl(path = join(ROOT, "wrangler.toml")) {
  const m = readFileSync(path, "utf8").match(/^\s*PUBLIC_URL\s*=\s*"([^"]+)"/m);
  if (!m) throw new Error("wrangler.toml has no PUBLIC_URL");
  return m[1];
}

const b64url = (buf) => Buffer.from(buf).toString("base64url");

export function isLoopbackUrl(url) {
  const host = new URL(url).hostname.replace(/^\[|\]$/g, "");
  return host === "localhost" || host === "::1" || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host);
}

/** The workspace of a user: one per user (PRODUCT §10), named from the subject. */
export function workspaceFor(subject) {
  return "ws_" + createHash("sha256").update("workspace:" + subject).digest("hex").slice(0, 24);
}

/**
 * Mints a token. Options: scope ("mcp mcp:act"), app (false), sub, client, ttl (s), url
 * (the Worker's PUBLIC_URL), now (ms), keys (JWT_SIGNING_KEYS value), kid/secret overrides
 * for negative tests are NOT offered on purpose.
 */
export function mintDevToken(opts = {}) {
  const url = (opts.url ?? configuredPublicUrl()).replace(/\/$/, "");
  if (!isLoopbackUrl(url)) throw new Error(`refusing: ${url} is not a loopback address; dev tokens are for local Workers only`);
  const keys = opts.keys ?? readDevVars().JWT_SIGNING_KEYS;
  if (!keys) throw new Error("refusing: no JWT_SIGNING_KEYS in .dev.vars");
  const [first] = keys.split(",");
  const [kid, secret] = first.split(":");
  if (!kid || !secret || !kid.startsWith("dev")) throw new Error("refusing: the signing key is not the local development key");
  const scope = (opts.scope ?? "mcp mcp:act").trim().split(/\s+/).filter(Boolean).join(" ");
  for (const s of scope.split(" ").filter(Boolean)) {
    if (s !== "mcp" && s !== "mcp:act") throw new Error(`unknown scope ${s}`);
  }
  const sub = opts.sub ?? "dev-user@example.com";
  const now = Math.floor((opts.now ?? Date.now()) / 1000);
  const header = { alg: "HS256", kid, typ: "at+jwt" };
  const claims = {
    iss: url,
    aud: `${url}/v1/mcp`,
    sub,
    ws: opts.ws ?? workspaceFor(sub),
    client_id: opts.client ?? (opts.app ? "dev-claude-app" : "dev-cli"),
    scope,
    app: Boolean(opts.app),
    jti: "at_" + randomBytes(16).toString("hex"),
    exp: now + (opts.ttl ?? 3600),
    iat: now,
  };
  const input = `${b64url(JSON.stringify(header))}.${b64url(JSON.stringify(claims))}`;
  const sig = createHmac("sha256", Buffer.from(secret, "base64url")).update(input).digest();
  return `${input}.${b64url(sig)}`;
}

// The local token command: prints only a token, signs with the development key, and refuses
// anything else.
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync, spawnSync } from "node:child_process";
import { join } from "node:path";
import { ROOT, mintDevToken, workspaceFor } from "../../scripts/lib/devtoken.mjs";

const decode = (part) => JSON.parse(Buffer.from(part, "base64url").toString());

test("npm run token prints only a token with the asked scopes", () => {
  const out = execFileSync("npm", ["run", "--silent", "token", "--", "--scope", "mcp", "--app"], { cwd: ROOT, encoding: "utf8" });
  const token = out.trim();
  assert.equal(out, token + "\n");
  const [h, c] = token.split(".");
  assert.deepEqual(decode(h), { alg: "HS256", kid: "dev", typ: "at+jwt" });
  const claims = decode(c);
  assert.equal(claims.scope, "mcp");
  assert.equal(claims.app, true);
  assert.equal(claims.aud, "http://127.0.0.1:8787/v1/mcp");
  assert.equal(claims.ws, workspaceFor(claims.sub));
  assert.equal(workspaceFor("dev-user@example.com"), "ws_7774e68c50d0e5c3a9c03684", "same derivation as the Worker");
});

test("it refuses non-development keys, remote URLs and unknown scopes", () => {
  assert.throws(() => mintDevToken({ url: "https://api.vibesell.it" }), /not a loopback/);
  assert.throws(() => mintDevToken({ keys: "prod:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA" }), /not the local development key/);
  assert.throws(() => mintDevToken({ scope: "mcp admin" }), /unknown scope/);
  const r = spawnSync("node", [join(ROOT, "scripts/token.mjs"), "--url", "https://api.vibesell.it"], { encoding: "utf8" });
  assert.equal(r.status, 1);
  assert.equal(r.stdout, "");
  assert.match(r.stderr, /refusing/);
});

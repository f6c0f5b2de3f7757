// Rate limits against the real Worker in workerd: the OAuth endpoints' budgets per client
// address (`OAUTH_RATE_LIMITS`) and the budget of tool calls per workspace (`TOOL_RATE_LIMIT`),
// all small here, on one Worker. Each test spends the budgets of its own addresses, users and
// grants, so they do not meet.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { startWorker, connect } from "./harness.mjs";
import { Browser, pkce, registerClient, authorizeUrl, consent, tokenRequest, dataError, signIn, pageData } from "./oauth.mjs";

let worker;
const redirectUri = "http://127.0.0.1:49152/callback";

before(async () => {
  worker = await startWorker({
    vars: { OAUTH_RATE_LIMITS: "authorize=5/60,token=2/60,token_ip=3/60,revoke=2/60", TOOL_RATE_LIMIT: "3/60" },
  });
});
after(async () => {
  await worker?.stop();
});

/** A refusal of the OAuth JSON endpoints: 429, RFC 6749 §5.2 body, Retry-After within `window`. */
function assertTooMany(r, window) {
  assert.equal(r.status, 429, r.text.slice(0, 300));
  assert.equal(r.json.error, "too_many_requests");
  assert.ok(r.json.error_description.length > 0);
  const wait = Number(r.headers.get("retry-after"));
  assert.ok(Number.isInteger(wait) && wait >= 1 && wait <= window, `Retry-After ${r.headers.get("retry-after")}`);
  assert.equal(r.headers.get("cache-control"), "no-store");
}

/** Whether a request log line of `route` has a detail matching `pattern` (workerd's output can
 * trail the response a little, so it is waited for, up to 2 s). */
async function logged(route, pattern) {
  for (let i = 0; i < 40; i++) {
    if (worker.requestLogs().some((l) => l.route === route && pattern.test(l.detail ?? ""))) return true;
    await new Promise((r) => setTimeout(r, 50));
  }
  return false;
}

const hex64 = (c) => c.repeat(64);

test("authorization and token requests are rate limited", async () => {
  const c = await registerClient(worker, ["http://127.0.0.1/callback"]);
  const { verifier, challenge } = pkce();
  const user = new Browser(worker.url);
  const back = await consent(user, authorizeUrl(worker, { clientId: c.client_id, redirectUri, challenge }), { email: "rl@example.com" });
  const fields = { grant_type: "authorization_code", client_id: c.client_id, code: back.searchParams.get("code"), code_verifier: verifier, redirect_uri: redirectUri };
  const first = await tokenRequest(worker, fields);
  assert.equal(first.status, 200);
  const second = await tokenRequest(worker, { grant_type: "refresh_token", client_id: c.client_id, refresh_token: first.json.refresh_token });
  assert.equal(second.status, 200);
  const third = await tokenRequest(worker, { grant_type: "refresh_token", client_id: c.client_id, refresh_token: second.json.refresh_token });
  assertTooMany(third, 30);
  assert.ok(await logged("/v1/oauth/token", /^rate limited: token:[0-9a-f]{64}$/), "refused by the grant's budget");

  const crawler = new Browser(worker.url, { ip: "198.51.100.200" });
  const url = authorizeUrl(worker, { clientId: c.client_id, redirectUri, challenge });
  for (let i = 0; i < 5; i++) assert.equal((await crawler.get(url)).status, 303);
  const refused = await crawler.get(url);
  assert.equal(refused.status, 429);
  assert.equal(dataError(refused.text), "too_many_requests");
  assert.equal((await new Browser(worker.url, { ip: "198.51.100.201" }).get(url)).status, 303, "other addresses are unaffected");
});

test("token requests are counted per address before the client is authenticated", async () => {
  const ip = { "cf-connecting-ip": "198.51.100.30" };
  // Made-up clients with made-up grants (each its own, so no grant's budget runs out first), and
  // one with no grant at all: each refused by client authentication, and each counted.
  const madeUp = [
    { grant_type: "refresh_token", client_id: "vsc_00000000000000000000000000000000", refresh_token: `vsrt_${hex64("a")}_${hex64("b")}` },
    { grant_type: "authorization_code", client_id: "vsc_11111111111111111111111111111111", code: `vsac_${hex64("c")}_${hex64("d")}`, code_verifier: "x".repeat(43) },
    { grant_type: "client_credentials", client_id: "made-up", client_secret: "guess" },
  ];
  for (const fields of madeUp) {
    const r = await tokenRequest(worker, fields, ip);
    assert.equal(r.status, 401, r.text);
    assert.equal(r.json.error, "invalid_client");
  }
  const limited = await tokenRequest(worker, { ...madeUp[0], refresh_token: `vsrt_${hex64("e")}_${hex64("f")}` }, ip);
  assertTooMany(limited, 20);
  assert.ok(await logged("/v1/oauth/token", /^rate limited: token_ip$/), "refused by the address's budget");
  // So is a request with no client or grant at all, and another address is unaffected.
  assertTooMany(await tokenRequest(worker, { grant_type: "refresh_token" }, ip), 20);
  const elsewhere = await tokenRequest(worker, madeUp[0], { "cf-connecting-ip": "198.51.100.31" });
  assert.equal(elsewhere.status, 401);
});

test("revocations are counted per address before the client is authenticated", async () => {
  const c = await registerClient(worker, ["http://127.0.0.1/callback"]);
  const revoke = (fields, ip = "198.51.100.40") =>
    fetch(`${worker.url}/v1/oauth/revoke`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded", "cf-connecting-ip": ip },
      body: new URLSearchParams(fields).toString(),
    }).then(async (res) => {
      const text = await res.text();
      return { status: res.status, headers: res.headers, text, json: text ? JSON.parse(text) : undefined };
    });
  // A made-up token of a real client (RFC 7009 §2.2: 200, nothing revoked), then a made-up client.
  assert.equal((await revoke({ client_id: c.client_id, token: `vsrt_${hex64("1")}_${hex64("2")}` })).status, 200);
  const unknown = await revoke({ client_id: "vsc_00000000000000000000000000000000", token: "made-up" });
  assert.equal(unknown.status, 401);
  assert.equal(unknown.json.error, "invalid_client");
  const limited = await revoke({ client_id: c.client_id, token: "made-up" });
  assertTooMany(limited, 30);
  assert.ok(await logged("/v1/oauth/revoke", /^rate limited: revoke$/));
  assert.equal((await revoke({ client_id: c.client_id, token: "made-up" }, "198.51.100.41")).status, 200, "another address");
});

test("tool calls beyond the workspace's budget are refused as tool results, and do nothing", async () => {
  const email = "tool-budget@example.com";
  const client = await connect(worker, { sub: email });
  const results = [];
  // TOOL_RATE_LIMIT=3/60: three calls fit, the fourth is refused (a call comes back every 20 s).
  for (let i = 1; i <= 6 && !results.at(-1)?.isError; i++) {
    results.push(await client.callTool({ name: "remember", arguments: { note: `Note ${i}.`, topic: `topic-${i}` } }));
  }
  const refusal = results.at(-1);
  assert.equal(refusal.isError, true, "refused within six calls");
  assert.equal(results.length, 4, "three calls fit the budget");
  for (const r of results.slice(0, -1)) assert.notEqual(r.isError, true, JSON.stringify(r).slice(0, 300));
  assert.equal(refusal.structuredContent, undefined);
  const text = refusal.content[0].text;
  assert.match(text, /Too many tool calls/);
  assert.match(text, /Nothing was done/);
  const wait = Number(text.match(/Wait (\d+) seconds? before calling again/)?.[1]);
  assert.ok(wait >= 1 && wait <= 20, text);
  // A read tool is refused alike: the budget counts calls, not writes.
  const read = await client.callTool({ name: "get_workspace_context", arguments: {} });
  assert.equal(read.isError, true);
  assert.match(read.content[0].text, /Too many tool calls/);
  await client.close();

  // The web page reads the same workspace outside the tool budget: the refused note is not there.
  const browser = await signIn(worker, "/app", email, { ip: "198.51.100.50" });
  const [workspace] = pageData((await browser.get("/app")).text).results;
  assert.equal(workspace.kind, "workspace");
  assert.deepEqual(workspace.memories.map((m) => m.note).sort(), ["Note 1.", "Note 2.", "Note 3."]);
});

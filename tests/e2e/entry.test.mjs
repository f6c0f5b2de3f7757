// The Worker's entry module (src/edge/entry.js) in workerd, in front of a stand-in for
// worker-build's entry that keeps the same contract: a default export that is a Proxy with a
// `construct` trap over the entrypoint class, whose prototype's `fetch` calls the wasm export;
// `globalThis.__worker_init_state.criticalError` set after a trap, and the wasm instance rebuilt
// by that trap the next time it constructs an entrypoint. The real shim carries every request of
// the other end-to-end tests; this one makes the wasm trap, which the real module never does.
import { test, after } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { Miniflare } from "miniflare";
import { ROOT } from "../../scripts/lib/devtoken.mjs";
import { freePort } from "./harness.mjs";

const SHIM = `
import { WorkerEntrypoint } from "cloudflare:workers";
const state = (globalThis.__worker_init_state = { criticalError: false, instanceId: 0 });
const seen = { direct: 0, throughShim: 0, rebuilt: 0, scheduled: 0 };
class Entrypoint extends WorkerEntrypoint {}
// The wasm \`fetch\` takes the request as the entry module read it: [head, body].
Entrypoint.prototype.fetch = function ([head, body]) {
  const { pathname } = new URL(head.split("\\n")[1]);
  if (pathname.startsWith("/read") || pathname.startsWith("/v1/mcp")) return Response.json({ head, body: body === undefined ? "unread" : body === null ? null : [...body] });
  if (pathname === "/seen") return Response.json({ ...seen, criticalError: state.criticalError, instance: state.instanceId });
  if (pathname === "/trap") throw new WebAssembly.RuntimeError("unreachable");
  if (pathname === "/trap-later") return Promise.resolve().then(() => { throw new WebAssembly.RuntimeError("unreachable"); });
  if (pathname === "/error") throw new TypeError("not a trap");
  if (pathname === "/later") return Promise.resolve(new Response("later from " + state.instanceId));
  if (pathname === "/object") {
    // Workers RPC to the entry's wrapper of the shim's object class.
    const stub = this.env.WORKSPACE.get(this.env.WORKSPACE.idFromName("a"));
    return stub.call("/tool", "body").then((text) => new Response(text));
  }
  seen.direct += 1;
  return new Response("ok from " + state.instanceId);
};
Entrypoint.prototype.scheduled = function () {
  seen.scheduled += 1;
};
export default new Proxy(Entrypoint, {
  construct(target, args, newTarget) {
    seen.throughShim += 1;
    if (state.criticalError) {
      seen.rebuilt += 1;
      state.criticalError = false;
      state.instanceId += 1;
    }
    return Reflect.construct(target, args, newTarget);
  },
});
export class Named {}
// The shim's object classes: plain classes (not DurableObject's), behind a Proxy, as
// worker-build makes them.
const objectProxy = { construct(target, args, newTarget) { seen.objects = (seen.objects ?? 0) + 1; return Reflect.construct(target, args, newTarget); } };
class WorkspaceClass {
  constructor(ctx, env) { this.ctx = ctx; }
  call(path, body) { return Promise.resolve("200\\n" + path + " " + body + " in " + this.ctx.id.toString().length); }
  fetch() { return new Response("fetched"); }
  alarm() {}
}
export const Workspace = new Proxy(WorkspaceClass, objectProxy);
export const OAuthState = new Proxy(class { call() { return "200\\n"; } fetch() { return new Response(""); } alarm() {} }, objectProxy);
`;

const directPort = await freePort();
const mf = new Miniflare({
  // A socket straight into workerd: Miniflare's entry Worker hands a streamed body on with its
  // length, which would hide the read of a body sent without one.
  unsafeDirectSockets: [{ host: "127.0.0.1", port: directPort }],
  modules: [
    { type: "ESModule", path: "index.js", contents: readFileSync(join(ROOT, "src/edge/entry.js"), "utf8") },
    { type: "ESModule", path: "shim.mjs", contents: SHIM },
  ],
  compatibilityDate: "2025-11-01",
  unsafeTriggerHandlers: true,
  durableObjects: { WORKSPACE: "Workspace" },
});
after(() => mf.dispose());

const get = async (path) => {
  const response = await mf.dispatchFetch(`http://entry.test${path}`);
  return { status: response.status, text: await response.text() };
};
const seen = async () => JSON.parse((await get("/seen")).text);
const direct = `http://127.0.0.1:${directPort}/read?q=1`;
const read = async (init, url = direct) => {
  await mf.ready;
  return (await fetch(url, init)).json();
};

test("requests reach the shim's fetch without its per-request Proxies", async () => {
  const before = await seen();
  assert.deepEqual(await get("/"), { status: 200, text: "ok from 0" });
  assert.equal((await get("/later")).text, "later from 0", "a promise is passed on");
  const now = await seen();
  assert.equal(now.direct, before.direct + 1);
  assert.equal(now.throughShim, 0, "no entrypoint was constructed by the shim");
});

test("after a trap, the next request goes through the shim, which rebuilds the instance first", async () => {
  for (const trap of ["/trap", "/trap-later"]) {
    const before = await seen();
    assert.equal((await get(trap)).status, 500);
    // The request after the trap (this one) is the first to see the rebuilt instance.
    assert.deepEqual(await get("/"), { status: 200, text: `ok from ${before.instance + 1}` }, `${trap} is noted as a trap`);
    const now = await seen();
    assert.equal(now.rebuilt, before.rebuilt + 1);
    assert.equal(now.criticalError, false);
    assert.equal(now.throughShim, before.throughShim + 1, "only the request after the trap went through the shim");
  }
});

test("an error that is not a trap rebuilds nothing", async () => {
  const before = await seen();
  assert.equal((await get("/error")).status, 500);
  assert.equal((await seen()).criticalError, false);
  await get("/");
  assert.equal((await seen()).throughShim, before.throughShim);
});

test("a handler other than fetch is forwarded through the shim", async () => {
  const before = await seen();
  assert.equal((await get("/cdn-cgi/handler/scheduled")).status, 200);
  const now = await seen();
  assert.equal(now.scheduled, before.scheduled + 1);
  assert.equal(now.throughShim, before.throughShim + 1);
});

test("the object classes extend DurableObject, so the Worker reaches the shim's over RPC", async () => {
  const before = await seen();
  // A 64-hex-digit object id: the call reached the shim's class with the object's context.
  assert.deepEqual(await get("/object"), { status: 200, text: "200\n/tool body in 64" });
  assert.equal((await seen()).objects, (before.objects ?? 0) + 1, "built once, through the shim's Proxy");
  assert.deepEqual(await get("/object"), { status: 200, text: "200\n/tool body in 64" });
  assert.equal((await seen()).objects, (before.objects ?? 0) + 1, "the same instance answers the next call");
});

test("the entry module hands the wasm the request's head, with only the listed headers, and its body", async () => {
  const headers = {
    Authorization: "Bearer x",
    "Content-Type": "application/json",
    "MCP-Protocol-Version": "2025-11-25",
    "User-Agent": "not read",
    "X-Other": "not read",
  };
  const post = await read({ method: "POST", headers, body: '{"a":1}' });
  const lines = post.head.split("\n");
  assert.deepEqual(lines.slice(0, 2), ["POST", direct]);
  const pairs = Object.fromEntries(
    Array.from({ length: (lines.length - 3) / 2 }, (_, i) => [lines[2 + 2 * i], lines[3 + 2 * i]]),
  );
  assert.equal(lines.at(-1), "", "every line ends with a line feed");
  assert.equal(pairs.authorization, "Bearer x");
  assert.equal(pairs["content-type"], "application/json");
  assert.equal(pairs["mcp-protocol-version"], "2025-11-25");
  assert.equal(pairs["user-agent"], undefined, "a header the Worker does not read is left out");
  assert.equal(pairs["x-other"], undefined);
  assert.deepEqual(post.body, [...new TextEncoder().encode('{"a":1}')]);

  const got = await read({ headers });
  assert.ok(got.head.startsWith("GET\n"));
  assert.equal(got.body, "unread", "only a POST body is read");

  // A body announced as larger than MAX_BODY_BYTES is not read: the router answers 413.
  const large = await read({ method: "POST", headers: { "Content-Length": "1048577" }, body: "x".repeat(1048577) });
  assert.equal(large.body, "unread");
  const limit = await read({ method: "POST", body: "x".repeat(1048576) });
  assert.equal(limit.body.length, 1048576, "a body at the limit is read");

  // Sent without its length: read up to the limit, in however many chunks it comes.
  const chunked = (sizes) =>
    read({
      method: "POST",
      duplex: "half",
      body: new ReadableStream({
        start(controller) {
          for (const size of sizes) controller.enqueue(new Uint8Array(size).fill(0x61));
          controller.close();
        },
      }),
    });
  assert.equal((await chunked([])).body.length, 0);
  const small = await chunked([1000, 24]);
  assert.ok(!small.head.includes("content-length"), small.head);
  assert.equal(small.body.length, 1024);
  assert.equal((await chunked([524288, 524288])).body.length, 1048576, "exactly the limit is read");
  assert.equal((await chunked([524288, 524289])).body, "unread", "past the limit, the rest is not read");
});

test("the body of a POST to the MCP endpoint without an Authorization header is not read", async () => {
  const at = (path) => `http://127.0.0.1:${directPort}${path}`;
  const body = '{"jsonrpc":"2.0"}';
  const bytes = [...new TextEncoder().encode(body)];
  // The router answers such a request 401 (or 403) before it needs the body (http::post_mcp).
  for (const path of ["/v1/mcp", "/v1/mcp?x=1"]) {
    assert.equal((await read({ method: "POST", body }, at(path))).body, "unread", path);
    const withToken = await read({ method: "POST", headers: { authorization: "Bearer x" }, body }, at(path));
    assert.deepEqual(withToken.body, bytes, `${path} with a token`);
  }
  // Other paths, which the router does not take for the MCP endpoint, have their bodies read.
  for (const path of ["/v1/mcpx", "/v1/mcp/", "/read/v1/mcp"]) {
    assert.deepEqual((await read({ method: "POST", body }, at(path))).body, bytes, path);
  }
});

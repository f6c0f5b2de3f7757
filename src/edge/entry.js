// The Worker's entry module. `bin/build` installs it as build/index.js, beside worker-build's own
// entry (renamed build/shim.mjs), and re-exports everything else from that one (the Durable
// Object classes).
//
// worker-build's default export wraps the entrypoint in a Proxy whose `construct` builds another
// Proxy around every instance, and whose `get` wraps `fetch` in a third, per request, so that it
// can rebuild the wasm instance after a trap. On 2026-11-30 that was 15 µs of the 131 µs of CPU
// an `initialize` costs (`bench/ab.mjs`, 7 rounds: 152 → 135 µs; the 401 135 → 121 µs). The
// entrypoint holds no wasm state (our `fetch` is a free function), so none of that is needed to
// call it: this calls the shim's `fetch` method directly, keeps its recovery by marking a trap
// where the shim would, and sends a request through the shim itself while a trap is pending, so
// that the shim rebuilds the instance first (bench/README.md, "Where `initialize` spends its
// time"). Its default export is a plain handler object rather than a `WorkerEntrypoint` class,
// which the runtime would construct for every request (bench/README.md, "The entry as a handler
// object").
import { DurableObject } from "cloudflare:workers";
import Shim, { OAuthState as ShimOAuthState, Workspace as ShimWorkspace } from "./shim.mjs";

export * from "./shim.mjs";

// `Shim` is a Proxy with only a `construct` trap: `prototype` is the class's own, whose `fetch`
// calls the wasm export with this entrypoint's `env` and `ctx`.
const fetchExport = Shim.prototype.fetch;
// worker-build's shared state: `criticalError` is set after a trap, and the shim rebuilds the
// wasm instance the next time it constructs an entrypoint.
const initState = globalThis.__worker_init_state;

function noteTrap(error) {
  if (error instanceof WebAssembly.RuntimeError && initState) initState.criticalError = true;
}

// The request headers the Worker reads: `http::REQUEST_HEADERS`, in the same order (a native test
// in src/http_tests.rs holds the two lists equal). Asking for each by name costs less than iterating
// `Headers`, which on Cloudflare carry a dozen more (bench/README.md, "Reading the request's
// headers by name").
const REQUEST_HEADERS = [
  "accept",
  "accept-encoding",
  "authorization",
  "cf-connecting-ip",
  "cf-ray",
  "content-length",
  "content-type",
  "cookie",
  "host",
  "mcp-protocol-version",
  "origin",
  "stripe-signature",
];
// `mcp::MAX_BODY_BYTES` (held equal by the same test): a larger body is not read, or not past it.
const MAX_BODY_BYTES = 1048576;
// `config::MCP_PATH` (held equal by the same test). The MCP endpoint answers a request without
// credentials before it looks at the body (`http::post_mcp`: Host and Origin, then the bearer
// token, then the body), so such a body is not read: a client without a token cannot make the
// Worker read a megabyte only to be told it needs one.
const MCP_PATH = "/v1/mcp";
const MCP_URL = new RegExp("^[^:/?#]+://[^/?#]*" + MCP_PATH + "(?:[?#]|$)");

const AUTHORIZATION = REQUEST_HEADERS.indexOf("authorization");
const CONTENT_LENGTH = REQUEST_HEADERS.indexOf("content-length");

// `head`: `METHOD\nURL\n`, then `name\nvalue\n` for each of REQUEST_HEADERS the request has (a
// repeated name's values joined by `, `, as `Headers.get` gives them). Names and values cannot
// hold a line feed (RFC 9110 §5.5; `Headers` refuses one), so it separates them safely. Also the
// two values `readRequest` decides by, so that no header is asked for twice. The parts are
// joined once rather than appended one by one: appending made a chain of intermediate strings
// that `encodeInto` then had to flatten into a copy, and every byte of garbage a request leaves
// brings the next costly scavenge nearer (bench/README.md, "What a request leaves to the garbage
// collector").
function readHead(request, method) {
  const parts = [method, request.url];
  let authorization = null;
  let length = null;
  const headers = request.headers;
  for (let i = 0; i < REQUEST_HEADERS.length; i++) {
    const value = headers.get(REQUEST_HEADERS[i]);
    if (value === null) continue;
    parts.push(REQUEST_HEADERS[i], value);
    if (i === AUTHORIZATION) authorization = value;
    else if (i === CONTENT_LENGTH) length = value;
  }
  // The empty last part ends the head with its line feed.
  parts.push("");
  return { head: parts.join("\n"), authorization, length };
}

// The request as the wasm `fetch` takes it (`edge::fetch`): `[head, body]`, read here, so that a
// request enters the wasm once, with everything it needs, rather than calling out for its head
// and again for its body (bench/README.md, "Reading the request here"). `body` is a Uint8Array;
// `null` if reading it failed; `undefined` when it is not read: not a POST, a POST to the MCP
// endpoint without an `Authorization` header (the router answers 401 first), or larger than
// MAX_BODY_BYTES (the router answers 413).
function readRequest(request) {
  // Each read of `request.method` makes a new string.
  const method = request.method;
  const { head, authorization, length } = readHead(request, method);
  if (method !== "POST") return [head, undefined];
  if (authorization === null && MCP_URL.test(request.url)) return [head, undefined];
  const failed = () => [head, null];
  try {
    if (length === null) return readAtMost(request.body, MAX_BODY_BYTES).then((bytes) => [head, bytes], failed);
    // The runtime holds the body to its announced length, so one announced within the limit is
    // read whole.
    if (!(Number(length) <= MAX_BODY_BYTES)) return [head, undefined];
    return request.arrayBuffer().then((bytes) => [head, new Uint8Array(bytes)], failed);
  } catch {
    return failed();
  }
}

// A body sent without its length (chunked), read only up to `limit` bytes: `undefined` once it
// goes past, the rest never read. Read whole, an endless or very large body would be held in
// the isolate's memory (128 MB on Cloudflare, shared by every request it serves) before it
// could be refused.
async function readAtMost(stream, limit) {
  if (stream === null) return new Uint8Array(0);
  const reader = stream.getReader();
  const chunks = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > limit) {
      reader.cancel().catch(() => {});
      return undefined;
    }
    chunks.push(value);
  }
  if (chunks.length === 1) return chunks[0];
  const bytes = new Uint8Array(size);
  let at = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, at);
    at += chunk.byteLength;
  }
  return bytes;
}

// Hands the read request to the wasm `fetch` through the shim's method, as the shim's own class
// would: `entrypoint` is what that method reads from its `this`, the request's `env` and `ctx`.
function serve(entrypoint, read) {
  if (typeof fetchExport !== "function" || !initState || initState.criticalError) {
    return new Shim(entrypoint.ctx, entrypoint.env).fetch(read);
  }
  let answer;
  try {
    answer = fetchExport.call(entrypoint, read);
  } catch (error) {
    noteTrap(error);
    throw error;
  }
  if (answer instanceof Promise) {
    return answer.catch((error) => {
      noteTrap(error);
      throw error;
    });
  }
  return answer;
}

// A handler object, not a `WorkerEntrypoint` class: for a class the runtime constructs an
// instance per request and looks its `fetch` up on it, which cost 6–13% of the CPU of an
// `initialize`, a `tools/list` or a 401 (bench/README.md, "The entry as a handler object"). The
// Worker offers no RPC methods on its default entrypoint, which only a class could.
const Worker = {
  fetch(request, env, ctx) {
    const entrypoint = { env, ctx };
    const read = readRequest(request);
    return read instanceof Promise ? read.then((r) => serve(entrypoint, r)) : serve(entrypoint, read);
  },
};
export default Worker;

// Any other handler the shim's class has (none today: a `scheduled` or `queue` event added to the
// Rust side would appear here) goes through the shim as before, so that none is dropped. A handler
// object's handlers take `(event, env, ctx)` where the class's take `(event)` with `env` and `ctx`
// on the instance. `start` is the module's start function, which the shim also hangs on the
// class; it is not a handler.
for (const name of Object.getOwnPropertyNames(Shim.prototype)) {
  if (name === "constructor" || name === "start" || name in Worker) continue;
  Worker[name] = (event, env, ctx) => new Shim(ctx, env)[name](event);
}

// The Durable Object classes. The Worker calls them over Workers RPC (`stub.call(path, body)`,
// `edge::object_text`), which the runtime offers only on classes that extend `DurableObject`;
// the shim's classes do not, so each is wrapped in one that does. These exports take the
// place of the shim's under the same names (an export declared here shadows `export *`). Each
// holds an instance of the shim's class, built through the shim's Proxy, which keeps its
// recovery from a trap: a stale instance is rebuilt on the next call.
function hosted(ShimClass) {
  return class extends DurableObject {
    constructor(ctx, env) {
      super(ctx, env);
      this.object = new ShimClass(ctx, env);
    }
    fetch(request) {
      return this.object.fetch(request);
    }
    alarm() {
      return this.object.alarm();
    }
    call(path, body) {
      return this.object.call(path, body);
    }
  };
}
export const Workspace = hosted(ShimWorkspace);
export const OAuthState = hosted(ShimOAuthState);

// The young generation's collection that the start leaves pending, run during the start rather
// than at the end of the first request. What the module's evaluation and `start` allocate and
// keep is still in V8's young generation when the start ends, which it leaves nearly full, so
// V8 schedules a scavenge as a task; workerd runs such tasks after each request, and the first
// request paid for copying all of it: 2.3 ms (`--trace-gc`; `perf record` of a fresh workerd's first request puts
// `MinorGCJob` and `Scavenger::ScavengeObject` under it). Allocating 1 MB of short-lived arrays
// here fills the young generation, so that V8 collects it now (two scavenges, 2–3 ms, which also
// promote what survives, a copy that would otherwise fall on a later request). On Cloudflare the
// start runs while the client's TLS handshake is still going on, off the first request's path
// (bench/README.md, "The start's pending collection"). 1 MB is this workerd's young generation at
// start; 0.5 MB left the task pending, and 4 MB grew the young generation for 6 ms more of start.
// The arrays are 64 KB (few iterations, so that nothing is compiled for the loop) and go into a
// ring that escapes, so that no compiler can prove them dead and skip allocating them.
const START_CHURN_BYTES = 1024 * 1024;
{
  const ring = new Array(2);
  for (let i = 0; i < START_CHURN_BYTES / 65536; i++) ring[i & 1] = new Array(16000);
}

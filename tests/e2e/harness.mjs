// Test harness: runs the real Worker (build/index.js + its wasm) in workerd through Miniflare,
// with the bindings read from wrangler.toml and .dev.vars by wrangler itself, so tests and
// `wrangler dev` never drift apart. Local KV and Durable Objects persist to a directory when
// asked, so a test can stop the Worker and start it again on the same state.
import { createServer } from "node:net";
import { request as httpRequest } from "node:http";
import { mkdtempSync, rmSync, existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Miniflare, Response as MiniflareResponse } from "miniflare";
import { unstable_getMiniflareWorkerOptions } from "wrangler";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ROOT, mintDevToken } from "../../scripts/lib/devtoken.mjs";

export { mintDevToken };

export async function freePort() {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.unref();
    srv.on("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

let baseOptions;
function workerOptions() {
  if (!baseOptions) {
    if (!existsSync(join(ROOT, "build/index.js"))) throw new Error("build/index.js is missing: run bin/build first");
    const silence = console.log;
    console.log = () => {}; // wrangler announces ".dev.vars" on every read
    try {
      baseOptions = unstable_getMiniflareWorkerOptions(join(ROOT, "wrangler.toml")).workerOptions;
    } finally {
      console.log = silence;
    }
  }
  return baseOptions;
}

/**
 * The Worker's outbound network in a test: requests to a host named in `hosts` (e.g.
 * `{"client.vibesell.test": "http://127.0.0.1:4321"}`) go to that local server, as if DNS
 * resolved the name there; everything else goes out unchanged. This simulates name resolution,
 * not our code: the Worker's own URL checks (https, public names) still run on the URL it asked
 * for.
 */
function testNetwork(hosts) {
  return async (request) => {
    const url = new URL(request.url);
    const target = hosts[url.host];
    const to = target ? new URL(url.pathname + url.search, target).toString() : request.url;
    const headers = new Headers(request.headers);
    for (const h of ["host", "content-length", "connection"]) headers.delete(h);
    const res = await fetch(to, {
      method: request.method,
      headers,
      body: request.method === "GET" || request.method === "HEAD" ? undefined : await request.arrayBuffer(),
      redirect: "manual",
    });
    return new MiniflareResponse(await res.arrayBuffer(), { status: res.status, headers: res.headers });
  };
}

/**
 * Starts the Worker. Options: `persist` (a directory; state survives restart), `vars` (extra or
 * overriding vars), `hosts` (see `testNetwork`). Returns { url, origin, mcpUrl, logs, stop(), crash(),
 * restart(), token(opts) }.
 */
export function startWorker(options = {}) {
  return retryingPortClash(() => startWorkerOnce(options));
}

/**
 * `start()` again, up to three times, while it fails because a port `freePort` picked was taken
 * before workerd bound it (by another process, or another Worker starting): `start` picks new
 * ports each time. A runtime that failed to start for another reason is started once more, after
 * printing what it said, so that a rare failure of the machine (seen once in a full run,
 * 2026-12-03, its cause lost) is told apart from one that happens every time, which still fails
 * the test, with workerd's own words in the error.
 */
export async function retryingPortClash(start) {
  let failedToStart = 0;
  for (let attempt = 1; ; attempt++) {
    try {
      return await start();
    } catch (error) {
      if (error?.code === "ERR_RUNTIME_FAILURE" && failedToStart++ === 0) {
        console.error(`${error.message}\n(starting it once more)`);
        continue;
      }
      if (error?.code !== "ERR_ADDRESS_IN_USE" || attempt === 3) throw error;
    }
  }
}

async function startWorkerOnce({ persist, vars = {}, hosts } = {}) {
  const port = await freePort();
  const directPort = await freePort();
  const origin = `http://127.0.0.1:${port}`;
  const ownDir = persist ? null : mkdtempSync(join(tmpdir(), "vibesell-"));
  const stateDir = persist ?? ownDir;
  const logs = [];
  const base = workerOptions();
  let laterVars = {};
  const make = () =>
    new Miniflare({
      ...base,
      scriptPath: join(ROOT, "build/index.js"),
      modules: true,
      modulesRoot: join(ROOT, "build"),
      modulesRules: [{ type: "CompiledWasm", include: ["**/*.wasm"] }],
      // The tests run long journeys on one workspace, faster than a person: a budget of tool
      // calls (`TOOL_RATE_LIMIT`, 300 a minute by default) they never exhaust, unless a test
      // sets its own.
      bindings: { ...base.bindings, PUBLIC_URL: origin, TOOL_RATE_LIMIT: "1000000/60", ...vars, ...laterVars },
      ...(hosts ? { outboundService: testNetwork(hosts) } : {}),
      durableObjectsPersist: join(stateDir, "do"),
      kvPersist: join(stateDir, "kv"),
      host: "127.0.0.1",
      port,
      // Also a socket straight into workerd, as on Cloudflare (requests keep their framing:
      // Miniflare's entry Worker hands a streamed body on with its length).
      unsafeDirectSockets: [{ host: "127.0.0.1", port: directPort }],
      cf: false,
      handleRuntimeStdio(stdout, stderr) {
        for (const stream of [stdout, stderr]) {
          let buf = "";
          stream.on("data", (chunk) => {
            buf += chunk;
            let i;
            while ((i = buf.indexOf("\n")) >= 0) {
              logs.push(buf.slice(0, i));
              buf = buf.slice(i + 1);
            }
          });
        }
      },
    });
  let mf = make();
  let crashed = false;
  try {
    await mf.ready;
  } catch (error) {
    await mf.dispose().catch(() => {});
    if (ownDir) rmSync(ownDir, { recursive: true, force: true });
    // Miniflare's error only says to look "above": the output is here, not on the console.
    if (error?.code === "ERR_RUNTIME_FAILURE" && logs.length) error.message += `\nworkerd printed:\n${logs.join("\n")}`;
    throw error;
  }
  const events = (event) =>
    logs.flatMap((l) => {
      try {
        const v = JSON.parse(l);
        return v.event === event ? [v] : [];
      } catch {
        return [];
      }
    });
  const worker = {
    origin,
    url: origin,
    mcpUrl: `${origin}/v1/mcp`,
    directUrl: `http://127.0.0.1:${directPort}`,
    logs,
    /** The structured log lines (parsed JSON) of `event` ("request", "alarm", "start"…). */
    events,
    /** Structured request log lines. */
    requestLogs: () => events("request"),
    /** The workspace objects' alarms that ran `job`, as logged. */
    alarmsThatRan: (job) => events("alarm").filter((l) => l.ran?.includes(job)),
    token: (opts = {}) => mintDevToken({ url: origin, ...opts }),
    async stop() {
      if (!crashed) await mf.dispose();
      if (ownDir) rmSync(ownDir, { recursive: true, force: true });
    },
    /**
     * Kills the runtime where it stands: Miniflare's dispose ends workerd with SIGKILL (its
     * `Runtime.dispose`), so no request or alarm in flight gets to write anything more, and what
     * SQLite committed stays in the state directory. `restart()` starts it again on that state.
     */
    async crash() {
      await mf.dispose();
      crashed = true;
    },
    /**
     * Starts it again on the same state, port and origin (so its tokens and OAuth clients still
     * hold); `vars` override the ones it started with from then on (a faster sandbox clock).
     */
    async restart({ vars: more } = {}) {
      if (!crashed) await mf.dispose();
      crashed = false;
      if (more) laterVars = { ...laterVars, ...more };
      mf = make();
      await mf.ready;
    },
  };
  return worker;
}

/** An MCP SDK client connected with a bearer token. */
export async function connect(worker, tokenOpts = {}, { token } = {}) {
  const bearer = token ?? worker.token(tokenOpts);
  const transport = new StreamableHTTPClientTransport(new URL(worker.mcpUrl), {
    requestInit: { headers: { Authorization: `Bearer ${bearer}` } },
  });
  const client = new Client({ name: "vibesell-e2e", version: "1.0.0" });
  await client.connect(transport);
  return client;
}

/** A response's status, headers, text and, when the text is JSON, its value. */
export async function answerOf(res) {
  const text = await res.text();
  return { status: res.status, headers: res.headers, text, json: jsonOf(text) };
}

/** The JSON in `text`, or undefined if it holds none. */
function jsonOf(text) {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** A raw POST to the MCP endpoint. `headers` override the defaults; `body` may be a string. */
export async function post(worker, body, { token, headers = {}, path = "/v1/mcp" } = {}) {
  const h = {
    "content-type": "application/json",
    accept: "application/json, text/event-stream",
    ...(token === null ? {} : { authorization: `Bearer ${token ?? worker.token()}` }),
    ...headers,
  };
  for (const [k, v] of Object.entries(h)) if (v === undefined) delete h[k];
  const res = await fetch(worker.url + path, {
    method: "POST",
    headers: h,
    body: typeof body === "string" || body instanceof Uint8Array ? body : JSON.stringify(body),
  });
  return answerOf(res);
}

/**
 * A POST with no Content-Length (chunked transfer encoding) straight into workerd, on a connection
 * of its own: the Worker learns the body's size only by reading it, and may answer before the
 * body ends. node:http hands over that answer, where fetch can fail the request instead once the
 * Worker closes the connection under a body still being sent. `body` is the bytes or text to send,
 * or `feed(req, answered)`, which writes it (`answered()` says whether the answer has begun). The
 * connection is closed once the answer is in. Resolves to { status, headers (lower-case names),
 * text, json, waited }, `waited` being the milliseconds until the answer ended.
 */
export function postChunked(worker, path, body, headers = {}) {
  const started = Date.now();
  return new Promise((resolve, reject) => {
    let answered = false;
    const req = httpRequest(
      worker.directUrl + path,
      {
        method: "POST",
        agent: false,
        headers: { host: new URL(worker.url).host, "transfer-encoding": "chunked", ...headers },
      },
      (res) => {
        answered = true;
        const chunks = [];
        res.on("data", (c) => chunks.push(c));
        res.on("end", () => {
          req.destroy();
          const text = Buffer.concat(chunks).toString();
          resolve({ status: res.statusCode, headers: res.headers, text, json: jsonOf(text), waited: Date.now() - started });
        });
        res.on("error", reject);
      },
    );
    // Once the answer has begun, a failure to send the rest of the body is expected.
    req.on("error", (e) => answered || reject(e));
    if (typeof body === "function") body(req, () => answered);
    else req.end(body);
  });
}

/** Whether an email's text ends its footer with the unsubscribe line, then `notice` as its last line. */
export const endsWithNotice = (text, notice) =>
  text.endsWith(`\n${notice}`) && /\nDon't want to hear from us again\? Unsubscribe: \S+\n$/.test(text.slice(0, -notice.length));

/** A JSON-RPC request envelope. */
export const rpc = (method, params, id = 1) => ({ jsonrpc: "2.0", id, method, ...(params === undefined ? {} : { params }) });

export const INIT_PARAMS = (protocolVersion = "2025-11-25") => ({
  protocolVersion,
  capabilities: {},
  clientInfo: { name: "raw-e2e", version: "1.0.0" },
});

// Shared by bench/run.mjs and bench/profile.mjs: starting the four Workers in workerd
// (through Miniflare, as the end-to-end tests do), finding each one's workerd process, pinning
// it to a core, and the requests of every scenario.
import { execFileSync, spawn } from "node:child_process";
import { cpSync, mkdtempSync, readFileSync, readdirSync, rmSync, existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Miniflare } from "miniflare";
import { unstable_getMiniflareWorkerOptions } from "wrangler";
import { ROOT, mintDevToken, readDevVars } from "../scripts/lib/devtoken.mjs";
import { freePort, retryingPortClash } from "../tests/e2e/harness.mjs";

export { ROOT, freePort };

/**
 * The one issuer and audience of ours and the SDK v1 baseline, so the same tokens work on both.
 * The Cloudflare-stack baseline is its own authorization server and accepts its tokens only on
 * the origin it listens on, which is therefore its PUBLIC_URL (`cloudflareOptions`).
 */
export const PUBLIC_URL = "http://127.0.0.1:8787";
export const COMPATIBILITY_DATE = "2025-11-01";
export const WORKER_NAMES = ["ours", "cloudflare", "baseline", "floor"];
/** What each Worker is, for the report. */
export const WORKER_TITLES = {
  ours: "the Rust Worker as deployed",
  cloudflare: "agents' createMcpHandler, MCP SDK v2 and workers-oauth-provider (workers/cloudflare.ts)",
  baseline: "the MCP SDK v1 and jose, by hand (workers/baseline.ts)",
  floor: "the runtime's least (workers/floor.js)",
};

function oursOptions(build = join(ROOT, "build")) {
  if (!existsSync(join(build, "index.js"))) throw new Error(`${build}/index.js is missing: run bin/build first`);
  const quiet = console.log;
  console.log = () => {}; // wrangler announces ".dev.vars" on every read
  try {
    // A build from another checkout (bench/ab.mjs against an older commit) runs with that
    // checkout's own wrangler.toml: its compatibility flags are part of what was built.
    const own = join(build, "..", "wrangler.toml");
    const config = existsSync(own) ? own : join(ROOT, "wrangler.toml");
    const base = unstable_getMiniflareWorkerOptions(config).workerOptions;
    return {
      ...base,
      scriptPath: join(build, "index.js"),
      modules: true,
      modulesRoot: build,
      modulesRules: [{ type: "CompiledWasm", include: ["**/*.wasm"] }],
      // The OAuth endpoints' per-IP and per-grant budgets (`OAUTH_RATE_LIMITS`, 30 to 600 a minute
      // by default) would turn the refresh scenario, and the grants made before each run, into 429s:
      // the limiter still runs on every request, with budgets no run exhausts. The same for the
      // tool calls per workspace (`TOOL_RATE_LIMIT`, 300 a minute by default): the scenarios
      // drive hundreds of calls a second on one workspace.
      bindings: {
        ...base.bindings,
        PUBLIC_URL,
        OAUTH_RATE_LIMITS: "register=1000000/60,token=1000000/60,token_ip=1000000/60,revoke=1000000/60,authorize=1000000/60",
        TOOL_RATE_LIMIT: "1000000000/60",
      },
    };
  } finally {
    console.log = quiet;
  }
}

function baselineOptions() {
  const script = join(ROOT, "bench/build/baseline.js");
  if (!existsSync(script)) throw new Error("bench/build/baseline.js is missing: run bin/bench (it bundles the baseline)");
  return {
    scriptPath: script,
    modules: true,
    compatibilityDate: COMPATIBILITY_DATE,
    compatibilityFlags: ["nodejs_compat"],
    durableObjects: { WORKSPACE: { className: "Workspace", useSQLite: true } },
    bindings: { PUBLIC_URL, JWT_SIGNING_KEYS: readDevVars().JWT_SIGNING_KEYS },
  };
}

/** The Cloudflare-stack baseline (workers/cloudflare.ts), its resource at `publicUrl`. */
function cloudflareOptions(publicUrl) {
  const script = join(ROOT, "bench/build/cloudflare.js");
  if (!existsSync(script)) throw new Error("bench/build/cloudflare.js is missing: run bin/bench (it bundles the baselines)");
  return {
    scriptPath: script,
    modules: true,
    compatibilityDate: COMPATIBILITY_DATE,
    // agents' MCP handler keeps the request's auth context in `node:async_hooks`; the provider
    // fetches Client ID Metadata Documents only under `global_fetch_strictly_public` (as ours).
    compatibilityFlags: ["nodejs_compat", "global_fetch_strictly_public"],
    durableObjects: { WORKSPACE: { className: "Workspace", useSQLite: true } },
    kvNamespaces: ["OAUTH_KV"],
    bindings: { PUBLIC_URL: publicUrl },
  };
}

function floorOptions() {
  return {
    scriptPath: join(ROOT, "bench/workers/floor.js"),
    modules: true,
    compatibilityDate: COMPATIBILITY_DATE,
    durableObjects: { FLOOR_DO: { className: "FloorObject", useSQLite: true } },
  };
}

/** Each Worker's Miniflare options, given the origin its socket listens on. */
const OPTIONS = {
  ours: () => oursOptions(),
  cloudflare: (origin) => cloudflareOptions(origin),
  baseline: baselineOptions,
  floor: floorOptions,
};

/** The pids of workerd processes that are children of this Node process. */
function workerdChildren() {
  try {
    const out = execFileSync("ps", ["-o", "pid=,comm=", "--ppid", String(process.pid)], { encoding: "utf8" });
    return out
      .split("\n")
      .map((l) => l.trim().split(/\s+/))
      .filter(([pid, comm]) => pid && comm === "workerd")
      .map(([pid]) => Number(pid));
  } catch {
    return [];
  }
}

/** Pins every thread of `pid` to `cpu` (Linux `taskset`); false when that is not possible. */
export function pin(pid, cpu) {
  try {
    execFileSync("taskset", ["-a", "-p", "-c", String(cpu), String(pid)], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
}

/** Peak and current resident memory of a process, in bytes (from /proc). */
export function memoryOf(pid) {
  try {
    const status = readFileSync(`/proc/${pid}/status`, "utf8");
    const kb = (name) => Number(status.match(new RegExp(`^${name}:\\s+(\\d+) kB`, "m"))?.[1] ?? NaN) * 1024;
    return { peak_rss: kb("VmHWM"), rss: kb("VmRSS") };
  } catch {
    return { peak_rss: NaN, rss: NaN };
  }
}

/**
 * CPU milliseconds `pid` has run so far, all threads, at nanosecond resolution (Linux
 * `/proc/<pid>/task/<tid>/schedstat`, whose first field is the time on a CPU): fine enough for
 * one request, where `/proc/<pid>/stat` counts in hundredths of a second. NaN where there is no
 * procfs.
 */
export function cpuMsOf(pid) {
  try {
    let ns = 0;
    for (const task of readdirSync(`/proc/${pid}/task`)) {
      try {
        ns += Number(readFileSync(`/proc/${pid}/task/${task}/schedstat`, "utf8").split(" ")[0]);
      } catch {
        // A thread that ended between the listing and the read.
      }
    }
    return ns / 1e6;
  } catch {
    return NaN;
  }
}

/**
 * CPU seconds `pid` has used so far, user and system, all threads (Linux `/proc/<pid>/stat`,
 * fields 14 and 15, in clock ticks of 1/100 s: `getconf CLK_TCK` is 100 on Linux). NaN where
 * there is no procfs.
 */
export function cpuSecondsOf(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // The command name (field 2) is in parentheses and may hold spaces: count after it.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return NaN;
  }
}

/**
 * Starts one of the four Workers in its own workerd. `inspectorPort` enables the DevTools
 * protocol (for profiles); `build` runs ours from another build directory (bench/ab.mjs);
 * `directPort` is the port its socket takes (else a free one) and `kvSeed` a KV directory left by
 * `kvDir()` of an earlier instance, copied in before the start, so that a fresh runtime finds the
 * OAuth state made there (the Cloudflare-stack baseline's cold starts). Returns
 * { name, url, pid, kvDir(), stop() }.
 */
export function startWorker(name, options = {}) {
  return retryingPortClash(() => startWorkerOnce(name, options));
}

async function startWorkerOnce(name, { inspectorPort, onLog, build, directPort: fixedPort, kvSeed } = {}) {
  const port = await freePort();
  const directPort = fixedPort ?? (await freePort());
  const url = `http://127.0.0.1:${directPort}`;
  const state = mkdtempSync(join(tmpdir(), `vibesell-bench-${name}-`));
  if (kvSeed) cpSync(kvSeed, join(state, "kv"), { recursive: true });
  const before = new Set(workerdChildren());
  const mf = new Miniflare({
    ...(build ? oursOptions(build) : OPTIONS[name](url)),
    name,
    durableObjectsPersist: join(state, "do"),
    kvPersist: join(state, "kv"),
    host: "127.0.0.1",
    port,
    cf: false,
    // Requests go straight to the Worker, as on Cloudflare, not through Miniflare's entry
    // Worker (a JavaScript proxy that would add the same fixed cost to all three Workers and
    // flatten every ratio).
    unsafeDirectSockets: [{ host: "127.0.0.1", port: directPort }],
    ...(inspectorPort ? { inspectorPort } : {}),
    // Workers log to stdout; it must be drained or workerd blocks on a full pipe.
    handleRuntimeStdio(stdout, stderr) {
      for (const stream of [stdout, stderr]) {
        if (onLog) {
          stream.setEncoding("utf8");
          stream.on("data", onLog);
        } else {
          stream.resume();
        }
      }
    },
  });
  try {
    await mf.ready;
  } catch (error) {
    await mf.dispose().catch(() => {});
    rmSync(state, { recursive: true, force: true });
    throw error;
  }
  const pid = workerdChildren().find((p) => !before.has(p));
  let keep = false;
  return {
    name,
    url,
    pid,
    /**
     * The instance's KV directory, kept after `stop()` for `kvSeed`; the caller removes its
     * parent, the instance's state directory.
     */
    kvDir() {
      keep = true;
      return join(state, "kv");
    },
    async stop() {
      await mf.dispose();
      if (keep) rmSync(join(state, "do"), { recursive: true, force: true });
      else rmSync(state, { recursive: true, force: true });
    },
  };
}

/**
 * Access tokens for the benchmark user(s), valid on ours and the SDK v1 baseline. `own` adds the
 * tokens of Workers that issue their own (`bench/oauth.mjs`, `ownTokens`): `own.cloudflare.act()`
 * and `own.cloudflare.spread()` resolve to that Worker's equivalents of `act` and `spread(64)`.
 */
export function tokens(own = {}) {
  const token = (sub, scope = "mcp mcp:act") => mintDevToken({ url: PUBLIC_URL, scope, sub, ttl: 6 * 3600 });
  return {
    act: token("bench-user@example.com"),
    /** One token per workspace, to spread Durable Object calls. */
    spread: (n) => Array.from({ length: n }, (_, i) => token(`bench-user-${i}@example.com`)),
    own,
  };
}

// Accept-Encoding as Cloudflare's front line sets it on every request it hands a Worker,
// whatever the client sent (it decodes for clients that did not ask): requests here go straight
// into workerd, so they carry it themselves.
const MCP_HEADERS = {
  "Content-Type": "application/json",
  Accept: "application/json, text/event-stream",
  "Accept-Encoding": "br, gzip",
};

const rpc = (method, params, id = 1) => JSON.stringify({ jsonrpc: "2.0", id, method, ...(params ? { params } : {}) });

/** The revision whose requests carry their own metadata (MCP 2026-07-28, basic §per-request fields). */
export const MODERN_VERSION = "2026-07-28";

/**
 * The 2026-07-28 scenarios, one line each: the method, the tool (for `tools/call`) and what a
 * right answer holds. Every request carries the revision's `_meta` and headers (MCP-2026-07-28.md
 * §1: `MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name`). Each Worker runs the ones it answers
 * correctly; the others are reported as not measured for it. Ours joins them by itself once it
 * speaks the revision: nothing here changes then.
 */
const MODERN_SCENARIOS = [
  {
    id: "discover",
    method: "server/discover",
    expect: (r) => r?.resultType === "complete" && r.supportedVersions?.includes(MODERN_VERSION),
  },
  {
    id: "tools_list_modern",
    method: "tools/list",
    expect: (r) => r?.resultType === "complete" && r.tools?.some((t) => t.name === "get_workspace_context"),
  },
  {
    id: "tools_call_modern",
    method: "tools/call",
    tool: "get_workspace_context",
    floorPath: "/do",
    expect: (r) => r?.resultType === "complete" && r.structuredContent?.kind === "workspace" && r.isError !== true,
  },
];

function modernScenario({ id, method, tool, floorPath, expect }, tok) {
  const meta = {
    "io.modelcontextprotocol/protocolVersion": MODERN_VERSION,
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": { name: "bench", version: "1.0.0" },
  };
  const params = tool ? { name: tool, arguments: {}, _meta: meta } : { _meta: meta };
  return {
    id,
    mcp: true,
    title: `${method}${tool ? ` ${tool}` : ""} (${MODERN_VERSION})`,
    path: "/v1/mcp",
    floorPath,
    headers: { ...MCP_HEADERS, "MCP-Protocol-Version": MODERN_VERSION, "Mcp-Method": method, ...(tool ? { "Mcp-Name": tool } : {}) },
    auths: [`Bearer ${tok.act}`],
    authsBy: { cloudflare: async () => [`Bearer ${await tok.own.cloudflare.act()}`] },
    body: rpc(method, params),
    expect: (status, json) => status === 200 && expect(json?.result),
  };
}

/**
 * The scenarios: the request, which Workers run it (the floor answers every one with its
 * fixed body), and how to check an answer is the real thing before it is measured. `auths`
 * are the Authorization values of ours and the SDK v1 baseline; `authsBy` gives a Worker with
 * tokens of its own its values (`authsFor`). `mcp` marks an MCP exchange, which the report holds
 * to issue 45's throughput target against the Cloudflare-stack baseline; the 401 is answered
 * before any JSON-RPC is read, at about the floor's rate on every Worker, so it is not one.
 */
export function scenarios(tok) {
  const initialize = rpc("initialize", {
    protocolVersion: "2025-11-25",
    capabilities: {},
    clientInfo: { name: "bench", version: "1.0.0" },
  });
  const versioned = { ...MCP_HEADERS, "MCP-Protocol-Version": "2025-11-25" };
  const act = { cloudflare: async () => [`Bearer ${await tok.own.cloudflare.act()}`] };
  const spread = { cloudflare: async () => (await tok.own.cloudflare.spread()).map((t) => `Bearer ${t}`) };
  return [
    {
      id: "initialize",
      mcp: true,
      title: "initialize",
      path: "/v1/mcp",
      headers: MCP_HEADERS,
      auths: [`Bearer ${tok.act}`],
      authsBy: act,
      body: initialize,
      expect: (status, json) => status === 200 && json?.result?.protocolVersion === "2025-11-25",
    },
    {
      id: "tools_list",
      mcp: true,
      title: "tools/list (acting token)",
      path: "/v1/mcp",
      headers: versioned,
      auths: [`Bearer ${tok.act}`],
      authsBy: act,
      body: rpc("tools/list"),
      // The SDK v1 baseline declares the three workspace tools; the others list the catalogue.
      expect: (status, json) =>
        status === 200 &&
        ["get_workspace_context", "remember", "save_offer"].every((n) => json?.result?.tools?.some((t) => t.name === n)),
    },
    {
      id: "tools_call",
      mcp: true,
      title: "tools/call get_workspace_context (1 workspace)",
      path: "/v1/mcp",
      floorPath: "/do",
      headers: versioned,
      auths: [`Bearer ${tok.act}`],
      authsBy: act,
      body: rpc("tools/call", { name: "get_workspace_context", arguments: {} }),
      expect: (status, json) =>
        status === 200 && json?.result?.structuredContent?.kind === "workspace" && json.result.isError !== true,
    },
    {
      id: "tools_call_spread",
      mcp: true,
      title: "tools/call get_workspace_context (64 workspaces)",
      path: "/v1/mcp",
      floorPath: "/do",
      headers: versioned,
      auths: tok.spread(64).map((t) => `Bearer ${t}`),
      authsBy: spread,
      body: rpc("tools/call", { name: "get_workspace_context", arguments: {} }),
      expect: (status, json) =>
        status === 200 && json?.result?.structuredContent?.kind === "workspace" && json.result.isError !== true,
    },
    {
      id: "challenge_401",
      title: "401 challenge (no token)",
      path: "/v1/mcp",
      headers: versioned,
      auths: [],
      body: rpc("tools/list"),
      expectStatus: 401,
      expect: (status, json, headers) => status === 401 && /resource_metadata=/.test(headers.get("www-authenticate") ?? ""),
    },
    ...MODERN_SCENARIOS.map((m) => modernScenario(m, tok)),
  ];
}

/** The Authorization values `scenario` sends to the Worker `name`. */
export async function authsFor(scenario, name) {
  const own = scenario.authsBy?.[name];
  return own ? await own() : scenario.auths;
}

/**
 * The JSON-RPC message of an answer: the body itself, or the last `data:` event of an SSE
 * stream (how the MCP SDK's stateless transport answers a 2025-era POST by default,
 * Streamable HTTP §Sending Messages).
 */
function decodeAnswer(text, contentType) {
  if (/text\/event-stream/i.test(contentType ?? "")) {
    const events = text.split(/\r?\n\r?\n/).map((e) =>
      e
        .split(/\r?\n/)
        .filter((l) => l.startsWith("data:"))
        .map((l) => l.slice(5).trimStart())
        .join("\n"),
    );
    text = events.filter(Boolean).at(-1) ?? "";
  }
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/**
 * Sends a scenario's request once (with `auths` instead of the scenario's own, when given);
 * returns { status, json, text, headers, ms }.
 */
export async function sendOnce(url, scenario, { floor = false, auths = scenario.auths } = {}) {
  const headers = { ...scenario.headers };
  if (auths[0]) headers.Authorization = auths[0];
  const started = performance.now();
  const res = await fetch(url + (floor && scenario.floorPath ? scenario.floorPath : scenario.path), {
    method: "POST",
    headers,
    body: scenario.body,
  });
  const text = await res.text();
  const ms = performance.now() - started;
  return { status: res.status, json: decodeAnswer(text, res.headers.get("content-type")), text, headers: res.headers, ms };
}

/**
 * One cold start: starts a Worker with `start()`, sends `scenario` to it twice and stops it.
 * Resolves to the time until it was ready (workerd's own when the runner knows it), the CPU its
 * process had spent by then, the first request's latency and CPU, and the second's latency;
 * `label` names the Worker in an error. A started Worker with `auths` (tokens its fresh state
 * holds) sends those instead of the scenario's.
 */
export async function coldSample(start, scenario, { floor = false, label = "" } = {}) {
  const started = performance.now();
  const w = await start();
  const ready_ms = w.readyMs ?? performance.now() - started;
  try {
    const start_cpu_ms = cpuMsOf(w.pid);
    const auths = w.auths ?? scenario.auths;
    const first = await sendOnce(w.url, scenario, { floor, auths });
    const first_cpu_ms = cpuMsOf(w.pid) - start_cpu_ms;
    if (first.status !== 200) {
      throw new Error(`${label}: cold ${scenario.id} answered ${first.status}: ${String(first.text).slice(0, 200)}`);
    }
    const second = await sendOnce(w.url, scenario, { floor, auths });
    return { ready_ms, start_cpu_ms, first_ms: first.ms, first_cpu_ms, second_ms: second.ms };
  } finally {
    await w.stop();
  }
}

/** The wasm module of the build, if any. */
export function wasmPath() {
  const dir = join(ROOT, "build");
  const find = (d) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, e.name);
      if (e.isDirectory()) {
        const hit = find(p);
        if (hit) return hit;
      } else if (e.name.endsWith(".wasm")) return p;
    }
    return null;
  };
  return existsSync(dir) ? find(dir) : null;
}

/** Runs wrk once (on core `loadCpu` when given); resolves to its JSON figures. */
function wrk({ url, script, env: extra, seconds, connections, loadCpu }) {
  const out = join(tmpdir(), `vibesell-bench-wrk-${process.pid}-${Math.random().toString(36).slice(2)}.json`);
  const args = ["-t1", `-c${connections}`, `-d${seconds}s`, "--timeout", "10s", "-s", script, url];
  const [cmd, argv] = loadCpu === undefined ? ["wrk", args] : ["taskset", ["-c", String(loadCpu), "wrk", ...args]];
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, argv, { env: { ...process.env, ...extra, BENCH_OUT: out }, stdio: ["ignore", "pipe", "pipe"] });
    let stderr = "";
    child.stdout.resume();
    child.stderr.on("data", (d) => (stderr += d));
    child.on("error", reject);
    child.on("exit", (code) => {
      if (code !== 0) return reject(new Error(`wrk exited with ${code}: ${stderr.trim()}`));
      try {
        const r = JSON.parse(readFileSync(out, "utf8"));
        rmSync(out, { force: true });
        resolve(r);
      } catch (e) {
        reject(new Error(`wrk left no figures: ${e.message} ${stderr.trim()}`));
      }
    });
  });
}

/** The environment of the wrk script for `scenario` on the Worker `name`, sending `auths`. */
export function wrkEnv(scenario, { name, auths = scenario.auths } = {}) {
  if (scenario.wrkEnv) return scenario.wrkEnv(name);
  return {
    BENCH_METHOD: "POST",
    BENCH_BODY: scenario.body,
    BENCH_HEADERS: Object.entries(scenario.headers)
      .map(([k, v]) => `${k}: ${v}`)
      .join("\n"),
    BENCH_AUTHS: auths.join("\n"),
  };
}

/** req/s, latency percentiles and errors of one wrk run. */
function summarize(run, expectStatus) {
  const seconds = run.duration_us / 1e6;
  const e = run.errors;
  const transport = e.connect + e.read + e.write + e.timeout;
  // wrk counts any non-2xx/3xx answer as a status error: for the 401 scenario that is all of them.
  const wrongStatus = expectStatus && expectStatus >= 400 ? run.requests - e.status : e.status;
  return {
    rps: run.requests / seconds,
    p50_ms: run.latency_us.p50 / 1000,
    p99_ms: run.latency_us.p99 / 1000,
    p999_ms: run.latency_us.p999 / 1000,
    requests: run.requests,
    errors: transport + wrongStatus,
  };
}

/**
 * One measured run of `scenario` on a started Worker at `path`: a warm-up of `warmup` seconds,
 * then `seconds` under wrk. Returns req/s, latency and errors, and the Worker's CPU µs per
 * request (its workerd process, before and after). `reseedAs` names the Worker: a scenario with
 * `reseed` (the refresh grant) gets fresh tokens for it before each run, and one with `authsBy`
 * its own tokens.
 */
export async function measure(worker, scenario, { path, seconds, warmup, connections, loadCpu, expectStatus, reseedAs }) {
  const url = worker.url + path;
  const script = join(ROOT, "bench/wrk", scenario.script ?? "mcp.lua");
  const env = async () => ({
    ...wrkEnv(scenario, { name: reseedAs, auths: await authsFor(scenario, reseedAs) }),
    ...(scenario.reseed ? await scenario.reseed(reseedAs) : {}),
  });
  if (warmup > 0) await wrk({ url, script, env: await env(), seconds: warmup, connections, loadCpu });
  const measured = await env();
  const before = cpuSecondsOf(worker.pid);
  const r = summarize(await wrk({ url, script, env: measured, seconds, connections, loadCpu }), expectStatus);
  r.cpu_us = ((cpuSecondsOf(worker.pid) - before) * 1e6) / r.requests;
  return r;
}

/**
 * The DevTools protocol of the Worker `workerName` started with `inspectorPort`
 * (bench/profile.mjs, bench/heap.mjs): resolves to `{ send(method, params), close() }`, where
 * `send` resolves to the protocol's answer.
 */
export async function inspect(inspectorPort, workerName) {
  const targets = await (await fetch(`http://127.0.0.1:${inspectorPort}/json`)).json();
  const target = targets.find((t) => t.title?.includes(workerName) || t.id?.includes(workerName)) ?? targets[0];
  const ws = new WebSocket(target.webSocketDebuggerUrl);
  await new Promise((resolve, reject) => {
    ws.onopen = resolve;
    ws.onerror = reject;
  });
  let id = 0;
  const pending = new Map();
  ws.onmessage = (m) => {
    const msg = JSON.parse(m.data);
    if (msg.id && pending.has(msg.id)) {
      pending.get(msg.id)(msg);
      pending.delete(msg.id);
    }
  };
  const send = (method, params = {}) =>
    new Promise((resolve) => {
      const n = ++id;
      pending.set(n, resolve);
      ws.send(JSON.stringify({ id: n, method, params }));
    });
  return { send, close: () => ws.close() };
}

/** The median of the finite numbers among `xs` (NaN if there are none). */
export function median(xs) {
  const s = [...xs].filter(Number.isFinite).sort((a, b) => a - b);
  if (!s.length) return NaN;
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

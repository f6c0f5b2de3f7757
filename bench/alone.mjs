// Each Worker alone in a workerd of its own, for the cold start (bench/README.md, "Cold start").
//
// Miniflare runs a Worker beside simulators of its own (KV, the cache, its entry Worker), each in
// an isolate workerd creates after the Worker's. workerd tells V8 of moderate memory pressure as
// it creates every isolate (`Worker::Isolate::Isolate`), and V8 answers by flushing the Liftoff
// code of every WebAssembly module in the process (`Heap::CheckMemoryPressure`, the
// `flush_liftoff_code` flag): whatever a wasm Worker compiled at start is gone before its first
// request. JavaScript Workers keep their bytecode, so that flush falls on ours alone. Here each
// Worker gets exactly what Miniflare gives it (modules, bindings, compatibility, Durable Object
// storage, read from the config Miniflare writes for workerd) in a workerd that runs nothing
// else. Bindings to the simulators are left out: only ours has one, the KV namespace of OAuth
// clients, which no cold scenario touches.
import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import workerd from "workerd";
import { startWorker } from "./lib.mjs";

/** What Miniflare hands workerd for the Worker `name` (its service in the config), once per run. */
const described = new Map();
async function describe(name, build) {
  const key = `${name} ${build ?? ""}`;
  if (!described.has(key)) {
    const dir = mkdtempSync(join(tmpdir(), `vibesell-bench-config-${name}-`));
    const path = join(dir, "config.json");
    // Miniflare writes the config it serialises for workerd to this path, when it is set.
    process.env.MINIFLARE_WORKERD_CONFIG_DEBUG = path;
    let config;
    try {
      const w = await startWorker(name, build ? { build } : {});
      await w.stop();
      config = JSON.parse(readFileSync(path, "utf8"));
    } finally {
      delete process.env.MINIFLARE_WORKERD_CONFIG_DEBUG;
      rmSync(dir, { recursive: true, force: true });
    }
    const service = config.services.find((s) => s.name === `core:user:${name}`);
    if (!service?.worker) throw new Error(`no service core:user:${name} in Miniflare's config`);
    described.set(key, service.worker);
  }
  return described.get(key);
}

// A Cap'n Proto string literal: JSON's escapes are Cap'n Proto's but for `\u00XX`, which
// Cap'n Proto writes `\xXX` (control characters in a var or secret).
const text = (s) => JSON.stringify(s).replace(/\\(\\|u00([0-9a-f]{2}))/gi, (m, _, hex) => (hex ? `\\x${hex}` : m));
const list = (xs) => `[${xs.join(", ")}]`;

// BENCH_V8_FLAGS: V8 flags for workerd, space-separated (`--trace-gc` to see its collections),
// whose output is then passed through to stderr, unbuffered (`stdbuf -o0`: V8 prints to stdout,
// which a pipe buffers until the process is killed).
const V8_FLAGS = (process.env.BENCH_V8_FLAGS ?? "").split(" ").filter(Boolean);

/** The Worker as a workerd config in Cap'n Proto text, its modules written beside it in `dir`. */
function capnpConfig(worker, dir, v8Flags) {
  const modules = worker.modules.map((m, i) => {
    const file = `module-${i}`;
    if (typeof m.esModule === "string") {
      writeFileSync(join(dir, file), m.esModule);
      return `(name = ${text(m.name)}, esModule = embed ${text(file)})`;
    }
    if (m.wasm) {
      // A Buffer as JSON: { type: "Buffer", data: [...] }, or a typed array's indexed object.
      const bytes = Uint8Array.from(Array.isArray(m.wasm.data) ? m.wasm.data : Object.values(m.wasm));
      writeFileSync(join(dir, file), bytes);
      return `(name = ${text(m.name)}, wasm = embed ${text(file)})`;
    }
    throw new Error(`module ${m.name}: only ES modules and wasm are carried over`);
  });
  const bindings = worker.bindings.flatMap((b) => {
    if (typeof b.text === "string") return [`(name = ${text(b.name)}, text = ${text(b.text)})`];
    if (b.durableObjectNamespace) {
      return [`(name = ${text(b.name)}, durableObjectNamespace = (className = ${text(b.durableObjectNamespace.className)}))`];
    }
    if (b.kvNamespace) return []; // a simulator of Miniflare's: see the top of this file
    throw new Error(`binding ${b.name}: not carried over (${Object.keys(b).join(", ")})`);
  });
  const namespaces = (worker.durableObjectNamespaces ?? []).map(
    (ns) => `(className = ${text(ns.className)}, uniqueKey = ${text(ns.uniqueKey)}, enableSql = ${ns.enableSql === true})`,
  );
  return `using Workerd = import "/workerd/workerd.capnp";
const config :Workerd.Config = (
  services = [
    (name = "main", worker = (
      modules = ${list(modules)},
      compatibilityDate = ${text(worker.compatibilityDate)},
      compatibilityFlags = ${list((worker.compatibilityFlags ?? []).map(text))},
      bindings = ${list(bindings)},
      durableObjectNamespaces = ${list(namespaces)},
      durableObjectStorage = (localDisk = "storage"),
    )),
    (name = "storage", disk = (path = ${text(join(dir, "storage"))}, writable = true)),
  ],
  v8Flags = ${list(v8Flags.map(text))},
  sockets = [(name = "http", address = "127.0.0.1:0", http = (), service = "main")],
);
`;
}

/**
 * Starts the Worker `name` alone in a fresh workerd, with the DevTools protocol on
 * `inspectorPort` if given (bench/profile-cold.mjs); `build` runs ours from another build
 * directory. Resolves once it listens, to
 * { url, pid, readyMs, stop() }.
 */
export async function startAlone(name, { inspectorPort, build, v8Flags = V8_FLAGS } = {}) {
  const worker = await describe(name, build);
  const dir = mkdtempSync(join(tmpdir(), `vibesell-bench-alone-${name}-`));
  mkdirSync(join(dir, "storage"));
  writeFileSync(join(dir, "config.capnp"), capnpConfig(worker, dir, v8Flags));
  const inspector = inspectorPort ? [`--inspector-addr=127.0.0.1:${inspectorPort}`] : [];
  // BENCH_WORKERD: another workerd binary, or a wrapper around it (a debugger, for one).
  const binary = process.env.BENCH_WORKERD ?? workerd.default ?? workerd;
  const spawned = performance.now();
  const args = ["serve", "--experimental", "--control-fd=3", ...inspector, "config.capnp"];
  const [command, argv] = v8Flags.length > 0 ? ["stdbuf", ["-o0", binary, ...args]] : [binary, args];
  const child = spawn(command, argv, {
    cwd: dir,
    stdio: ["ignore", "pipe", "pipe", "pipe"],
  });
  let output = "";
  for (const stream of [child.stdout, child.stderr]) {
    stream.setEncoding("utf8");
    stream.on("data", (d) => {
      // Drained, or workerd blocks on a full pipe; kept short for the error below.
      output = (output + d).slice(-4000);
      if (v8Flags.length > 0) process.stderr.write(d);
    });
  }
  const port = await new Promise((resolve, reject) => {
    let buffered = "";
    child.stdio[3].setEncoding("utf8");
    child.stdio[3].on("data", (d) => {
      buffered += d;
      for (const line of buffered.split("\n").slice(0, -1)) {
        let message;
        try {
          message = JSON.parse(line);
        } catch {
          continue; // not a control message this reads
        }
        if (message.event === "listen" && message.socket === "http") resolve(message.port);
      }
      buffered = buffered.slice(buffered.lastIndexOf("\n") + 1);
    });
    // `close`, not `exit`: its output is all read by then.
    child.on("close", (code) => {
      rmSync(dir, { recursive: true, force: true });
      reject(new Error(`workerd for ${name} exited (${code}) before listening:\n${output}`));
    });
    child.on("error", (error) => {
      rmSync(dir, { recursive: true, force: true });
      reject(error);
    });
  });
  return {
    url: `http://127.0.0.1:${port}`,
    pid: child.pid,
    /** From spawning workerd to its listening (the config is written before). */
    readyMs: performance.now() - spawned,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        const exited = new Promise((r) => child.once("exit", r));
        child.kill("SIGKILL");
        await exited;
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

// The wasm's side of a request, timed inside the isolate, for two builds of ours: `node
// bench/ab-loop.mjs <build dir A> <build dir B> [modes] [rounds]` (modes comma-separated, any of
// `initialize`, `tools_list`, `challenge_401`; default all three; rounds default 30; env N: calls
// per timed request, default 1000).
//
// `bench/ab.mjs` drives whole requests with wrk, where the runtime's own work (HTTP, the
// `Response`, the entry module) is most of a request's CPU and a machine's spread is ±10%: a
// change to the wasm worth 2% of a request cannot be told from the noise there. This copies each
// build aside (`bench/build/loop-A`, `-B`), adds a route to the copy's entry module that hands the
// wasm `fetch` the same read request N times in one request, and has the copy's `respond` return a
// plain object instead of a `Response` (whose construction the runtime charges whatever the wasm
// does, and whose garbage made the loop's times wander). It then times requests to that route
// for both builds, alternating, and prints per mode the minimum, first quartile and median
// microseconds per call and B ÷ A of the quartile. What it times: the crossing into the wasm,
// taking the head and body apart, routing (the token check, JSON-RPC, the answer), the log
// decision and the answer's head handed back. bench/README.md, "A/B of two builds".
import { cpSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { ROOT, pin, startWorker, tokens } from "./lib.mjs";

const [a, b, modesArg = "initialize,tools_list,challenge_401", roundsArg = "30"] = process.argv.slice(2);
if (!a || !b) {
  process.stderr.write("usage: node bench/ab-loop.mjs <build dir A> <build dir B> [modes] [rounds]\n");
  process.exit(2);
}
const N = Number(process.env.N ?? 1000);
const ROUNDS = Number(roundsArg);
const modes = modesArg.split(",");

// The loop's route: the request as `readRequest` would hand it over, built once, then passed to
// the wasm through `serve`, as every request is. The token is the benchmark's, so the wasm checks
// it as it would a real request's (remembered after the first call, as under load).
const LOOP = `
const LOOP_BODIES = {
  initialize: '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench","version":"1.0.0"}}}',
  tools_list: '{"jsonrpc":"2.0","id":1,"method":"tools/list"}',
  challenge_401: '{"jsonrpc":"2.0","id":1,"method":"tools/list"}',
};
function loop(entrypoint, request) {
  const url = new URL(request.url);
  const mode = url.searchParams.get("mode");
  const n = Number(url.searchParams.get("n"));
  const auth = mode === "challenge_401" ? "" : "authorization\\n" + request.headers.get("x-loop-authorization") + "\\n";
  const version = mode === "initialize" ? "" : "mcp-protocol-version\\n2025-11-25\\n";
  const head = "POST\\n" + url.origin + "/v1/mcp\\naccept\\napplication/json, text/event-stream\\naccept-encoding\\nbr, gzip\\n" +
    auth + "content-type\\napplication/json\\nhost\\n" + url.host + "\\n" + version;
  const body = new TextEncoder().encode(LOOP_BODIES[mode]);
  let statuses = 0;
  for (let i = 0; i < n; i++) statuses += serve(entrypoint, [head, mode === "challenge_401" ? undefined : body.slice()]).status;
  return new Response(String(statuses / n));
}
`;

/** A copy of `build` with the loop's route, and `respond` answering `{ status }`. */
function loopCopy(build, label) {
  const dir = join(ROOT, "bench/build", `loop-${label}`);
  rmSync(dir, { recursive: true, force: true });
  cpSync(build, dir, { recursive: true });
  const shimPath = join(dir, "shim.mjs");
  const shim = readFileSync(shimPath, "utf8");
  // `respond(status, head, body)` of src/edge/mod.rs as the bundler minifies it: its first
  // statement splits the head at line feeds.
  const respond = /function ([\w$]+)\(([\w$]+),([\w$]+),([\w$]+)\)\{let ([\w$]+)=\3\.split\(/.exec(shim);
  if (!respond) throw new Error(`${build}: respond() not found in shim.mjs; update bench/ab-loop.mjs`);
  writeFileSync(shimPath, shim.replace(respond[0], `function ${respond[1]}(${respond[2]},${respond[3]},${respond[4]}){return{status:${respond[2]}};let ${respond[5]}=${respond[3]}.split(`));
  const entryPath = join(dir, "index.js");
  const entry = readFileSync(entryPath, "utf8");
  // The entry's `fetch`: a handler object's since 2026-12-02, a `WorkerEntrypoint` class's before
  // (whose `env` and `ctx` are on `this`), so that builds of either age can be compared.
  const forms = [
    ["  fetch(request, env, ctx) {\n", "{ env, ctx }"],
    ["  fetch(request) {\n", "this"],
  ];
  const form = forms.find(([line]) => entry.includes(line));
  if (!form) throw new Error(`${build}: the entry's fetch not found; update bench/ab-loop.mjs`);
  const [fetchLine, entrypoint] = form;
  const routed = entry.replace(fetchLine, `${fetchLine}    if (new URL(request.url).pathname === "/__loop") return loop(${entrypoint}, request);\n`);
  // `loop` is a function declaration, hoisted: it can go at the end of the module.
  writeFileSync(entryPath, `${routed}\n${LOOP}`);
  return dir;
}

const token = tokens().act;
const workers = {};
try {
  for (const [label, build] of [["A", a], ["B", b]]) {
    workers[label] = await startWorker("ours", { build: loopCopy(resolve(build), label) });
    if (workers[label].pid) pin(workers[label].pid, 1);
  }
  const call = async (label, mode, n) => {
    const response = await fetch(`${workers[label].url}/__loop?mode=${mode}&n=${n}`, {
      headers: { "x-loop-authorization": `Bearer ${token}` },
    });
    const text = await response.text();
    const want = mode === "challenge_401" ? 401 : 200;
    if (response.status !== 200 || Number(text) !== want) throw new Error(`${label} ${mode}: ${response.status} ${text}`);
  };
  const times = {};
  for (const mode of modes) {
    for (const label of ["A", "B"]) {
      times[mode + label] = [];
      await call(label, mode, 5 * N); // warm-up: V8 tiers the hot wasm up
    }
  }
  for (let round = 0; round < ROUNDS; round++) {
    for (const mode of modes) {
      for (const label of round % 2 ? ["B", "A"] : ["A", "B"]) {
        const started = performance.now();
        await call(label, mode, N);
        times[mode + label].push(((performance.now() - started) * 1000) / N);
      }
    }
  }
  const at = (xs, q) => [...xs].sort((x, y) => x - y)[Math.floor(q * (xs.length - 1))];
  const cells = (xs) => `${at(xs, 0).toFixed(1)} / ${at(xs, 0.25).toFixed(1)} / ${at(xs, 0.5).toFixed(1)}`;
  console.log(`A = ${resolve(a)}\nB = ${resolve(b)}\n${N} calls per timed request, ${ROUNDS} rounds\n`);
  console.log("| mode | A µs/call (min / p25 / median) | B µs/call (min / p25 / median) | B ÷ A (p25) |");
  console.log("|---|---:|---:|---:|");
  for (const mode of modes) {
    const [ta, tb] = [times[mode + "A"], times[mode + "B"]];
    console.log(`| ${mode} | ${cells(ta)} | ${cells(tb)} | ${(at(tb, 0.25) / at(ta, 0.25)).toFixed(2)}× |`);
  }
} finally {
  for (const worker of Object.values(workers)) await worker.stop();
}

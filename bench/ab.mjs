// An A/B of two builds of ours: `node bench/ab.mjs <build dir A> <build dir B> [scenarios]
// [rounds]` (scenarios comma-separated, any of bench/lib.mjs's or `refresh`; default
// initialize,tools_list,challenge_401; rounds default 5). Each round starts both builds afresh,
// each in its own workerd pinned to core 1 (A first, then B first in the next round), warms each
// for BENCH_AB_WARMUP seconds (default 4) unmeasured, then drives them in the same alternating
// order, so that drift in the machine's load, and whatever favours the process started second,
// lands on both.
// BENCH_AB_V8_FLAGS_A and BENCH_AB_V8_FLAGS_B (space-separated V8 flags, such as
// `--no-wasm-dynamic-tiering`): when either is set, each build runs alone in workerd
// (bench/alone.mjs) with its flags, so that the two sides may differ by flags alone (give the
// same build twice).
// Prints, per scenario, each build's median req/s and CPU µs per request and B ÷ A. This is
// how a change is judged before it is kept (bench/README.md): make the build before it with
// `bin/build` and copy `build/` aside, then build the change.
import { resolve } from "node:path";
import { measure, median, pin, scenarios, sendOnce, startWorker, tokens } from "./lib.mjs";
import { refreshScenario } from "./oauth.mjs";
import { startAlone } from "./alone.mjs";

const [a, b, only = "initialize,tools_list,challenge_401", roundsArg = "5"] = process.argv.slice(2);
if (!a || !b) {
  console.error("usage: node bench/ab.mjs <build dir A> <build dir B> [scenarios] [rounds]");
  process.exit(2);
}
const ROUNDS = Number(roundsArg);
const SECONDS = Number(process.env.BENCH_DURATION ?? 4);

const builds = { A: resolve(a), B: resolve(b) };
const flagsOf = (name) => (process.env[name] ?? "").split(" ").filter(Boolean);
const v8Flags = { A: flagsOf("BENCH_AB_V8_FLAGS_A"), B: flagsOf("BENCH_AB_V8_FLAGS_B") };
const alone = v8Flags.A.length + v8Flags.B.length > 0;
const start = (label) =>
  alone ? startAlone("ours", { build: builds[label], v8Flags: v8Flags[label] }) : startWorker("ours", { build: builds[label] });
// Unmeasured load on each fresh Worker before its measured runs: V8 moves a wasm function to its
// optimising tier only after it has run a while (dynamic tiering), and a run on a fresh isolate
// cost up to a quarter more CPU than the next ones.
const WARM = Number(process.env.BENCH_AB_WARMUP ?? 4);
const chosen = scenarios(tokens()).filter((s) => only.split(",").includes(s.id));
// The refresh grant needs a client registered on the Worker it runs against: its scenario is
// made again for each run (bench/oauth.mjs makes its grants on the last Worker it was made for).
if (only.split(",").includes("refresh")) chosen.push({ id: "refresh", perWorker: true });

// Both builds are started afresh for every round, in alternating order, and driven in
// alternating order. With the two workerd processes started once, the one started second ran
// faster in four of five A/Bs of a build against itself (up to 0.84× the CPU), whichever build
// it ran; restarting per round spreads that over both.
const runs = {};
let workers = {};
try {
  for (let round = 0; round < ROUNDS; round++) {
    const order = round % 2 ? ["B", "A"] : ["A", "B"];
    workers = {};
    for (const label of order) {
      workers[label] = await start(label);
      if (workers[label].pid) pin(workers[label].pid, 1);
    }
    const scenarioFor = async (s, label) => (s.perWorker ? refreshScenario(workers[label].url, 16, () => {}) : s);
    for (const s of chosen) {
      if (s.perWorker) continue;
      for (const label of order) {
        const r = await sendOnce(workers[label].url, s);
        if (!s.expect(r.status, r.json, r.headers)) throw new Error(`${label} answers ${s.id} wrongly: ${r.status}`);
        if (WARM > 0) {
          await measure(workers[label], s, { path: s.path, seconds: WARM, warmup: 0, connections: 16, loadCpu: 0, expectStatus: s.expectStatus, reseedAs: "ours" });
        }
      }
    }
    for (const s of chosen) {
      for (const label of order) {
        const scenario = await scenarioFor(s, label);
        const r = await measure(workers[label], scenario, {
          path: scenario.path,
          seconds: SECONDS,
          warmup: 1,
          connections: 16,
          loadCpu: 0,
          expectStatus: scenario.expectStatus,
          reseedAs: "ours",
        });
        ((runs[s.id] ??= { A: [], B: [] })[label]).push(r);
        process.stderr.write(`round ${round + 1} ${s.id.padEnd(14)} ${label} ${r.rps.toFixed(0).padStart(6)} req/s ${r.cpu_us.toFixed(0).padStart(5)} µs/req${r.errors ? ` ${r.errors} ERRORS` : ""}\n`);
      }
    }
    for (const w of Object.values(workers)) await w.stop();
    workers = {};
  }
  const flagNote = (label) => (alone ? ` (alone in workerd, V8 flags: ${v8Flags[label].join(" ") || "none"})` : "");
  console.log(`A = ${builds.A}${flagNote("A")}\nB = ${builds.B}${flagNote("B")}\n`);
  console.log("| scenario | A req/s | B req/s | B ÷ A | A CPU µs/req | B CPU µs/req | B ÷ A |");
  console.log("|---|---:|---:|---:|---:|---:|---:|");
  for (const [id, { A, B }] of Object.entries(runs)) {
    const [ra, rb] = [median(A.map((r) => r.rps)), median(B.map((r) => r.rps))];
    const [ca, cb] = [median(A.map((r) => r.cpu_us)), median(B.map((r) => r.cpu_us))];
    console.log(`| ${id} | ${ra.toFixed(0)} | ${rb.toFixed(0)} | ${(rb / ra).toFixed(2)}× | ${ca.toFixed(0)} | ${cb.toFixed(0)} | ${(cb / ca).toFixed(2)}× |`);
  }
} finally {
  for (const w of Object.values(workers)) await w.stop();
}

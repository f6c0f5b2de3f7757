// `npm run bench`: ours, the TypeScript SDK baseline and the floor, each in its own workerd,
// driven by wrk at fixed concurrency, in one run on one machine. See bench/README.md.
//
// Options (environment): BENCH_ROUNDS (3), BENCH_DURATION seconds per measured run (5),
// BENCH_WARMUP seconds (1), BENCH_CONNECTIONS (16), BENCH_COLD (9 cold starts per Worker and scenario),
// BENCH_ONLY (comma-separated scenario ids), BENCH_NO_PIN=1 (no core pinning).
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { gzipSync } from "node:zlib";
import os from "node:os";
import { join } from "node:path";
import {
  ROOT,
  WORKER_NAMES,
  coldSample,
  measure,
  median,
  memoryOf,
  pin,
  scenarios,
  sendOnce,
  startWorker,
  tokens,
  wasmPath,
} from "./lib.mjs";
import { refreshScenario } from "./oauth.mjs";
import { startAlone } from "./alone.mjs";

const env = (name, fallback) => (process.env[name] ? Number(process.env[name]) : fallback);
const ROUNDS = env("BENCH_ROUNDS", 3);
const DURATION = env("BENCH_DURATION", 5);
const WARMUP = env("BENCH_WARMUP", 1);
const CONNECTIONS = env("BENCH_CONNECTIONS", 16);
const COLD = env("BENCH_COLD", 9);
const ONLY = process.env.BENCH_ONLY?.split(",").filter(Boolean);
// A floor-only scenario added next to tools/list: the floor answering as many bytes as ours.
const SIZED_ID = "tools_list_sized";
// On 2 cores: workerd gets core 1 to itself, wrk (and this idle Node process) core 0.
const PIN = process.env.BENCH_NO_PIN !== "1" && os.cpus().length >= 2;
const WORKER_CPU = 1;
const LOAD_CPU = 0;

const TARGETS = {
  throughput_vs_baseline: 3,
  throughput_vs_floor: 0.7,
  p99_vs_floor: 2,
  // 600 KB read as 600,000 bytes, the stricter reading, as scripts/wasm-budget.mjs reads it.
  wasm_gzip_bytes: 600_000,
  cold_vs_floor: 2,
};

const t0 = Date.now();
const say = (msg) => process.stderr.write(`[bench +${((Date.now() - t0) / 1000).toFixed(0)}s] ${msg}\n`);

function machine() {
  const cpus = os.cpus();
  const version = (cmd, args) => {
    try {
      return execFileSync(cmd, args, { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] }).split("\n")[0].trim();
    } catch (e) {
      return (e.stdout || e.stderr || "").split("\n")[0].trim() || "unknown";
    }
  };
  const pkg = (name) => JSON.parse(readFileSync(join(ROOT, "node_modules", name, "package.json"), "utf8")).version;
  const model = cpus[0]?.model?.trim() ?? "unknown cpu";
  const slug = `${model.replace(/\(R\)|\(TM\)|Processor|CPU|@.*$/g, "").trim().split(/\s+/).slice(0, 3).join("-")}-${cpus.length}c`
    .toLowerCase()
    .replace(/[^a-z0-9-]/g, "");
  return {
    slug,
    cpu: model,
    cores: cpus.length,
    memory_gib: Math.round(os.totalmem() / 2 ** 30),
    kernel: `${os.type()} ${os.release()}`,
    node: process.version,
    workerd: pkg("@cloudflare/workerd-linux-64"),
    miniflare: pkg("miniflare"),
    mcp_sdk: pkg("@modelcontextprotocol/sdk"),
    wrk: version("wrk", ["-v"]),
    load_at_start: os.loadavg().map((x) => Number(x.toFixed(2))),
    pinned: PIN ? { workerd: WORKER_CPU, wrk: LOAD_CPU } : null,
  };
}

/**
 * The first request of freshly started runtimes (bench/README.md, "Cold start"): for each cold
 * scenario and Worker, COLD fresh workerd processes, interleaved like the throughput runs so that
 * a burst of load on the machine spreads over all of them. Each Worker runs alone in its
 * workerd (`bench/alone.mjs`); `tools/list` is also measured under Miniflare, as the end-to-end
 * tests run it, whose simulators' isolates flush a wasm Worker's compiled code before its first
 * request. The minimum is shown beside the median because a cold start is one short
 * measurement that any other process on the machine can only make longer.
 */
async function coldStarts(plan) {
  const samples = {};
  // Unmeasured: the first request this process sends pays for its HTTP client's own start.
  await coldSample(() => plan[0].start("floor"), plan[0].scenario, { floor: true });
  for (let i = 0; i < COLD; i++) {
    for (const { key, scenario, workers, start } of plan) {
      for (const name of workers) {
        const sample = await coldSample(() => start(name), scenario, { floor: name === "floor", label: name });
        ((samples[key] ??= {})[name] ??= []).push(sample);
      }
    }
  }
  const out = {};
  for (const { key, title } of plan) {
    out[key] = { title, workers: {} };
    for (const [name, s] of Object.entries(samples[key])) {
      const c = {
        ready_ms: median(s.map((x) => x.ready_ms)),
        first_request_ms: median(s.map((x) => x.first_ms)),
        first_request_min_ms: Math.min(...s.map((x) => x.first_ms)),
        first_request_cpu_ms: median(s.map((x) => x.first_cpu_ms)),
        second_request_ms: median(s.map((x) => x.second_ms)),
        samples: s,
      };
      out[key].workers[name] = c;
      say(`cold ${key} ${name}: ready in ${fmt(c.ready_ms)} ms, first request ${fmt(c.first_request_ms, 1)} ms (min ${fmt(c.first_request_min_ms, 1)}; its workerd's CPU ${fmt(c.first_request_cpu_ms, 1)} ms), second ${fmt(c.second_request_ms, 1)} ms`);
    }
  }
  return out;
}

const fmt = (x, digits = 0) => (Number.isFinite(x) ? x.toFixed(digits) : "—");
const ratio = (a, b) => (Number.isFinite(a) && Number.isFinite(b) && b > 0 ? a / b : NaN);

async function main() {
  const info = machine();
  say(`machine: ${info.cpu}, ${info.cores} cores, ${info.memory_gib} GiB; load ${info.load_at_start.join(" ")}`);
  say(`plan: ${ROUNDS} rounds × ${DURATION}s per run (+${WARMUP}s warm-up), ${CONNECTIONS} connections, wrk on core ${PIN ? LOAD_CPU : "any"}, workerd on core ${PIN ? WORKER_CPU : "any"}`);

  const wasm = wasmPath();
  const wasmBytes = wasm ? readFileSync(wasm) : null;
  const wasmInfo = wasmBytes ? { path: wasm.slice(ROOT.length + 1), raw: wasmBytes.length, gzip: gzipSync(wasmBytes, { level: 9 }).length } : null;
  if (wasmInfo) say(`wasm: ${wasmInfo.raw.toLocaleString("en")} B raw, ${wasmInfo.gzip.toLocaleString("en")} B gzip -9`);

  const tok = tokens();
  const all = scenarios(tok);

  say("starting the three Workers");
  const workers = {};
  for (const name of WORKER_NAMES) {
    workers[name] = await startWorker(name);
    if (PIN && workers[name].pid) pin(workers[name].pid, WORKER_CPU);
    say(`  ${name}: ${workers[name].url} (workerd pid ${workers[name].pid ?? "?"})`);
  }

  try {
    // The refresh grant joins once the token endpoint exists (issue 3).
    const skipped = [];
    const refresh = await refreshScenario(workers.ours.url, CONNECTIONS, say);
    if (refresh?.skipped) skipped.push(refresh.skipped);
    else if (refresh) all.push(refresh);
    else skipped.push("refresh grant: /v1/oauth/token does not exist in this build yet");
    const chosen = all.filter((s) => !ONLY || ONLY.includes(s.id));

    // Every scenario is checked once on every Worker before anything is timed: a fast wrong
    // answer must not pass for a fast answer.
    for (const s of chosen) {
      for (const name of s.workers ?? WORKER_NAMES) {
        if (name === "floor") continue;
        const r = s.check ? await s.check(workers[name].url) : await sendOnce(workers[name].url, s);
        if (!(s.check ? r.ok : s.expect(r.status, r.json, r.headers))) {
          throw new Error(`${name} gives a wrong answer to ${s.id}: ${r.status} ${String(r.text).slice(0, 300)}`);
        }
      }
    }
    say(`every Worker answers every scenario correctly (${chosen.map((s) => s.id).join(", ")})`);
    // The floor's usual answer is 40 bytes; ours to tools/list is about 157 KB. A floor answering
    // a fixed body of exactly as many bytes shows what moving that answer costs the runtime.
    const list = all.find((s) => s.id === "tools_list");
    // The bytes ours sends: its answer is compressed once the runtime has compressed it (the
    // check above asked first), so the body's length on the wire, not the decoded text's.
    let sent = await sendOnce(workers.ours.url, list);
    for (let i = 0; i < 20 && !sent.headers.get("content-encoding"); i++) {
      await new Promise((r) => setTimeout(r, 50));
      sent = await sendOnce(workers.ours.url, list);
    }
    const bytes = Number(sent.headers.get("content-length")) || Buffer.byteLength(sent.text);
    const sized = {
      ...list,
      id: SIZED_ID,
      title: `floor answering ${fmt(bytes / 1024)} KiB, as many bytes as ours sends to tools/list`,
      workers: ["floor"],
      floorPath: `/sized?bytes=${bytes}`,
    };
    if (chosen.includes(list)) chosen.splice(chosen.indexOf(list) + 1, 0, sized);

    const runs = {};
    const total = ROUNDS * chosen.reduce((n, s) => n + (s.workers ?? WORKER_NAMES).length, 0);
    let done = 0;
    for (let round = 0; round < ROUNDS; round++) {
      for (const s of chosen) {
        const names = s.workers ?? WORKER_NAMES;
        // Interleaved: the order of the Workers rotates every round, so drift in the machine's
        // load spreads over all of them instead of landing on one.
        const order = names.map((_, i) => names[(i + round) % names.length]);
        for (const name of order) {
          const r = await measure(workers[name], s, {
            path: name === "floor" && s.floorPath ? s.floorPath : s.path,
            seconds: DURATION,
            warmup: WARMUP,
            connections: CONNECTIONS,
            loadCpu: PIN ? LOAD_CPU : undefined,
            expectStatus: name === "floor" ? 200 : s.expectStatus,
            reseedAs: name,
          });
          (runs[s.id] ??= {})[name] ??= [];
          runs[s.id][name].push(r);
          done++;
          say(`[${done}/${total}] round ${round + 1} ${s.id.padEnd(18)} ${name.padEnd(8)} ${fmt(r.rps).padStart(6)} req/s  p50 ${fmt(r.p50_ms, 2)} ms  p99 ${fmt(r.p99_ms, 2)} ms  CPU ${fmt(r.cpu_us)} µs/req${r.errors ? `  ${r.errors} ERRORS` : ""}`);
        }
      }
    }

    const memory = Object.fromEntries(WORKER_NAMES.map((n) => [n, memoryOf(workers[n].pid)]));
    for (const n of WORKER_NAMES) await workers[n].stop();
    for (const n of WORKER_NAMES) delete workers[n];

    say(`cold starts: ${COLD} fresh workerd per Worker and scenario`);
    // `initialize` is the first request of every MCP session (lifecycle §initialization), so it
    // is what a fresh isolate answers first; `tools/list` has the largest answer.
    const initialize = all.find((s) => s.id === "initialize");
    const alone = (name) => startAlone(name);
    const cold = await coldStarts([
      { key: "initialize", title: "`initialize`, alone", scenario: initialize, workers: WORKER_NAMES, start: alone },
      { key: "tools_list", title: "`tools/list`, alone", scenario: list, workers: WORKER_NAMES, start: alone },
      { key: "tools_call", title: "`tools/call get_workspace_context` (a new workspace), alone", scenario: all.find((s) => s.id === "tools_call"), workers: WORKER_NAMES, start: alone },
      { key: SIZED_ID, title: `the floor answering as many bytes as ours sends to \`tools/list\` (${fmt(bytes / 1024)} KiB), alone`, scenario: sized, workers: ["floor"], start: alone },
      { key: "tools_list_miniflare", title: "`tools/list` under Miniflare", scenario: list, workers: WORKER_NAMES, start: (name) => startWorker(name) },
    ]);

    const results = {};
    for (const s of chosen) {
      const per = {};
      for (const [name, rs] of Object.entries(runs[s.id])) {
        per[name] = {
          rps: median(rs.map((r) => r.rps)),
          rps_min: Math.min(...rs.map((r) => r.rps)),
          rps_max: Math.max(...rs.map((r) => r.rps)),
          p50_ms: median(rs.map((r) => r.p50_ms)),
          p99_ms: median(rs.map((r) => r.p99_ms)),
          cpu_us: median(rs.map((r) => r.cpu_us)),
          errors: rs.reduce((n, r) => n + r.errors, 0),
          runs: rs,
        };
      }
      results[s.id] = {
        title: s.title,
        workers: per,
        ours_vs_baseline: ratio(per.ours?.rps, per.baseline?.rps),
        ours_vs_floor: ratio(per.ours?.rps, per.floor?.rps),
        p99_ours_vs_floor: ratio(per.ours?.p99_ms, per.floor?.p99_ms),
        cpu_ours_vs_baseline: ratio(per.ours?.cpu_us, per.baseline?.cpu_us),
        cpu_ours_vs_floor: ratio(per.ours?.cpu_us, per.floor?.cpu_us),
        floor_note: s.floorPath === "/do" ? "floor answers from a Durable Object (/do)" : undefined,
      };
    }
    const [listed, sizedResult] = [results.tools_list, results[SIZED_ID]];
    if (listed && sizedResult) {
      listed.ours_vs_floor_same_bytes = ratio(listed.workers.ours?.rps, sizedResult.workers.floor?.rps);
      listed.cpu_ours_vs_floor_same_bytes = ratio(listed.workers.ours?.cpu_us, sizedResult.workers.floor?.cpu_us);
    }

    const checks = [];
    for (const id of ["initialize", "tools_list"]) {
      const r = results[id];
      if (!r) continue;
      checks.push({ target: `${id}: ≥ 3× baseline throughput`, value: r.ours_vs_baseline, ok: r.ours_vs_baseline >= TARGETS.throughput_vs_baseline });
      checks.push({ target: `${id}: ≥ 70% of the floor's throughput`, value: r.ours_vs_floor, ok: r.ours_vs_floor >= TARGETS.throughput_vs_floor });
    }
    for (const [id, r] of Object.entries(results)) {
      if (!Number.isFinite(r.p99_ours_vs_floor)) continue;
      checks.push({ target: `${id}: p99 within 2× the floor's`, value: r.p99_ours_vs_floor, ok: r.p99_ours_vs_floor <= TARGETS.p99_vs_floor });
    }
    if (wasmInfo) checks.push({ target: "wasm ≤ 600 KB gzip", value: wasmInfo.gzip, ok: wasmInfo.gzip <= TARGETS.wasm_gzip_bytes });
    const coldRatio = ratio(cold.initialize.workers.ours.first_request_ms, cold.initialize.workers.floor.first_request_ms);
    checks.push({ target: "cold first request (`initialize`) within 2× the floor's", value: coldRatio, ok: coldRatio <= TARGETS.cold_vs_floor });

    const report = {
      date: new Date().toISOString(),
      machine: info,
      settings: { rounds: ROUNDS, duration_s: DURATION, warmup_s: WARMUP, connections: CONNECTIONS, cold_starts: COLD, load_generator: "wrk -t1 (closed loop)" },
      build: { wasm: wasmInfo, opt: process.env.OPT === "1" || process.env.BENCH_OPT === "1" },
      results,
      cold_start: cold,
      memory,
      skipped,
      targets: checks,
      load_at_end: os.loadavg().map((x) => Number(x.toFixed(2))),
    };
    const md = markdown(report);
    process.stdout.write("\n" + md + "\n");
    const dir = join(ROOT, "bench/results");
    mkdirSync(dir, { recursive: true });
    // The day's first run takes `<date>-<machine>`; a later one the same day adds its UTC hour
    // and minute rather than overwriting it (the README cites runs by file).
    const day = join(dir, `${report.date.slice(0, 10)}-${info.slug}`);
    const base = existsSync(`${day}.md`) ? `${day}-${report.date.slice(11, 16).replace(":", "")}` : day;
    writeFileSync(`${base}.json`, JSON.stringify(report, null, 2) + "\n");
    writeFileSync(`${base}.md`, md + "\n");
    say(`results: ${base.slice(ROOT.length + 1)}.json and .md (${((Date.now() - t0) / 1000).toFixed(0)} s in all)`);
  } finally {
    for (const w of Object.values(workers)) await w.stop().catch(() => {});
  }
}

function markdown(r) {
  const L = [];
  const m = r.machine;
  L.push(`# Benchmark ${r.date.slice(0, 16).replace("T", " ")} UTC`);
  L.push("");
  L.push(`Machine: ${m.cpu}, ${m.cores} cores, ${m.memory_gib} GiB, ${m.kernel}; Node ${m.node}, workerd ${m.workerd} (Miniflare ${m.miniflare}), MCP SDK ${m.mcp_sdk}, ${m.wrk}.`);
  L.push(`Load average ${m.load_at_start.join(" ")} at the start, ${r.load_at_end.join(" ")} at the end. ${m.pinned ? `workerd pinned to core ${m.pinned.workerd}, wrk to core ${m.pinned.wrk}.` : "No core pinning."}`);
  L.push(`Each figure is the median of ${r.settings.rounds} interleaved ${r.settings.duration_s}-second runs at ${r.settings.connections} connections (wrk, one thread, closed loop), after a ${r.settings.warmup_s}-second warm-up; req/s shows min–max across rounds.`);
  L.push("");
  L.push("| scenario | ours req/s | baseline req/s | floor req/s | ours p50 / p99 ms | baseline p50 / p99 ms | floor p50 / p99 ms | ours ÷ baseline | ours ÷ floor |");
  L.push("|---|---:|---:|---:|---:|---:|---:|---:|---:|");
  for (const [id, x] of Object.entries(r.results)) {
    const w = x.workers;
    const cell = (n) => (w[n] ? `${fmt(w[n].rps)} (${fmt(w[n].rps_min)}–${fmt(w[n].rps_max)})${w[n].errors ? ` ⚠ ${w[n].errors} errors` : ""}` : "n/a");
    const lat = (n) => (w[n] ? `${fmt(w[n].p50_ms, 2)} / ${fmt(w[n].p99_ms, 2)}` : "n/a");
    L.push(`| ${x.title}${x.floor_note ? "¹" : ""} | ${cell("ours")} | ${cell("baseline")} | ${cell("floor")} | ${lat("ours")} | ${lat("baseline")} | ${lat("floor")} | ${Number.isFinite(x.ours_vs_baseline) ? `${fmt(x.ours_vs_baseline, 2)}×` : "—"} | ${Number.isFinite(x.ours_vs_floor) ? `${fmt(x.ours_vs_floor * 100)}%` : "—"} |`);
  }
  if (Object.values(r.results).some((x) => x.floor_note)) L.push("", "¹ The floor for these answers from a Durable Object (`/do`): a Worker → Durable Object round trip and nothing else.");
  const list = r.results.tools_list;
  if (Number.isFinite(list?.ours_vs_floor_same_bytes)) {
    L.push("", `Against the floor answering as many bytes as ours (\`${SIZED_ID}\`), \`tools/list\` runs at ${fmt(list.ours_vs_floor_same_bytes * 100)}% of its throughput, for ${fmt(list.cpu_ours_vs_floor_same_bytes, 2)}× its CPU per request. The targets below are held to the usual 40-byte floor.`);
  }
  L.push("");
  L.push("CPU time of each Worker's workerd process per request (user + system, all threads, from `/proc/<pid>/stat`, median of the rounds). It varies less with the machine's load than req/s does (other processes still slow it through shared caches and cores), so it is the steadier comparison of the three Workers' per-request cost:");
  L.push("");
  L.push("| scenario | ours µs/req | baseline µs/req | floor µs/req | ours ÷ baseline | ours ÷ floor |");
  L.push("|---|---:|---:|---:|---:|---:|");
  for (const x of Object.values(r.results)) {
    const w = x.workers;
    const c = (n) => (w[n] && Number.isFinite(w[n].cpu_us) ? fmt(w[n].cpu_us) : "n/a");
    const q = (v) => (Number.isFinite(v) ? `${fmt(v, 2)}×` : "—");
    L.push(`| ${x.title} | ${c("ours")} | ${c("baseline")} | ${c("floor")} | ${q(x.cpu_ours_vs_baseline)} | ${q(x.cpu_ours_vs_floor)} |`);
  }
  for (const s of r.skipped) L.push("", `Not measured: ${s}.`);
  L.push("");
  if (r.build.wasm) L.push(`wasm (\`${r.build.wasm.path}\`${r.build.opt ? ", wasm-opt" : ""}): ${r.build.wasm.raw.toLocaleString("en")} B raw, ${r.build.wasm.gzip.toLocaleString("en")} B gzip -9.`);
  L.push("");
  L.push(`Cold start: ${r.settings.cold_starts} fresh workerd processes per Worker and scenario, interleaved. "Alone": the Worker is the only one in its workerd, as Miniflare configures it but without Miniflare's simulators (\`bench/alone.mjs\`). "Under Miniflare": as the end-to-end tests run it, where the simulators' isolates, created after the Worker's, flush a wasm Worker's compiled code before its first request (bench/README.md, "Cold start"). First request: median (minimum), and the CPU its workerd spent on it.`);
  L.push("");
  L.push("| first request | ours | baseline | floor | ours ÷ floor |");
  L.push("|---|---:|---:|---:|---:|");
  for (const x of Object.values(r.cold_start)) {
    const w = x.workers;
    const cell = (n) => (w[n] ? `${fmt(w[n].first_request_ms, 1)} ms (${fmt(w[n].first_request_min_ms, 1)}); CPU ${fmt(w[n].first_request_cpu_ms, 1)} ms` : "—");
    const q = ratio(w.ours?.first_request_ms, w.floor?.first_request_ms);
    L.push(`| ${x.title} | ${cell("ours")} | ${cell("baseline")} | ${cell("floor")} | ${Number.isFinite(q) ? `${fmt(q, 2)}×` : "—"} |`);
  }
  L.push("");
  L.push("| Worker | workerd ready (alone) | second request (\`initialize\`, alone) | peak RSS of its workerd under load |");
  L.push("|---|---:|---:|---:|");
  for (const n of WORKER_NAMES) {
    const c = r.cold_start.initialize.workers[n];
    L.push(`| ${n} | ${fmt(c.ready_ms)} ms | ${fmt(c.second_request_ms, 1)} ms | ${fmt(r.memory[n].peak_rss / 2 ** 20)} MiB |`);
  }
  L.push("");
  L.push("| target | value | met |");
  L.push("|---|---:|:---:|");
  for (const c of r.targets) {
    const v = c.target.startsWith("wasm") ? `${c.value.toLocaleString("en")} B` : c.target.includes("%") ? `${fmt(c.value * 100)}%` : `${fmt(c.value, 2)}×`;
    L.push(`| ${c.target} | ${v} | ${c.ok ? "yes" : "**no**"} |`);
  }
  return L.join("\n");
}

main().catch((e) => {
  process.stderr.write(`bench failed: ${e.stack ?? e}\n`);
  process.exit(1);
});

// `npm run bench`: ours, the two TypeScript baselines (Cloudflare's stack, and the MCP SDK v1 by
// hand) and the floor, each in its own workerd, driven by wrk at fixed concurrency, in one run on
// one machine. See bench/README.md.
//
// Options (environment): BENCH_ROUNDS (3), BENCH_DURATION seconds per measured run (5),
// BENCH_WARMUP seconds (1), BENCH_CONNECTIONS (16), BENCH_COLD (9 cold starts per Worker and scenario),
// BENCH_ONLY (comma-separated scenario ids), BENCH_NO_PIN=1 (no core pinning), BENCH_RACE (16
// concurrent refreshes of one token) and BENCH_RACE_ROUNDS (3 races per Worker).
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { gzipSync } from "node:zlib";
import os from "node:os";
import { dirname, join } from "node:path";
import {
  ROOT,
  WORKER_NAMES,
  WORKER_TITLES,
  authsFor,
  coldSample,
  freePort,
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
import { oauthClient, ownTokens, refreshScenario } from "./oauth.mjs";
import { describeRace, refreshRaces } from "./refresh-race.mjs";
import { startAlone } from "./alone.mjs";

const env = (name, fallback) => (process.env[name] ? Number(process.env[name]) : fallback);
const ROUNDS = env("BENCH_ROUNDS", 3);
const DURATION = env("BENCH_DURATION", 5);
const WARMUP = env("BENCH_WARMUP", 1);
const CONNECTIONS = env("BENCH_CONNECTIONS", 16);
const COLD = env("BENCH_COLD", 9);
const RACE_N = env("BENCH_RACE", 16);
const RACE_ROUNDS = env("BENCH_RACE_ROUNDS", 3);
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
  // scripts/wasm-budget.mjs's ceiling, read as bytes.
  wasm_gzip_bytes: 1_000_000,
  cold_vs_floor: 2,
  // Issue 45, against the Cloudflare-stack baseline and the floors.
  mcp_vs_cloudflare: 3,
  refresh_vs_cloudflare: 1,
  refresh_cpu_us: 1000,
  tools_call_cpu_vs_do_floor: 2,
  tools_list_vs_sized_floor: 0.9,
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
    mcp_sdk_v2: pkg("@modelcontextprotocol/server"),
    agents: pkg("agents"),
    workers_oauth_provider: pkg("@cloudflare/workers-oauth-provider"),
    wrk: version("wrk", ["-v"]),
    load_at_start: os.loadavg().map((x) => Number(x.toFixed(2))),
    pinned: PIN ? { workerd: WORKER_CPU, wrk: LOAD_CPU } : null,
  };
}

/**
 * The first request of freshly started runtimes (bench/README.md, "Cold start"): for each cold
 * scenario and Worker, COLD fresh workerd processes, interleaved like the throughput runs so that
 * a burst of load on the machine spreads over all of them. Each Worker runs alone in its
 * workerd (`bench/alone.mjs`) but the Cloudflare-stack baseline, which needs Miniflare's KV for
 * every request and starts under Miniflare with the OAuth state of an earlier instance
 * (`cloudflareCold`); `tools/list` is also measured under Miniflare, as the end-to-end tests run
 * it, whose simulators' isolates flush a wasm Worker's compiled code before its first request.
 * The minimum is shown beside the median because a cold start is one short measurement that
 * any other process on the machine can only make longer.
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

/**
 * Fresh runtimes of the Cloudflare-stack baseline that find a grant made before: its access
 * tokens live in KV, so a token for its cold requests is made on an instance of its own first
 * (never measured), whose KV each fresh instance starts from, on the same port, since the
 * provider accepts a token only on its resource's origin. Each fresh instance gets empty Durable
 * Object storage, so its first `tools/call` meets a new workspace, as ours' does. Resolves to
 * { start(), dispose() }.
 */
async function cloudflareCold() {
  const directPort = await freePort();
  const seed = await startWorker("cloudflare", { directPort });
  let kv;
  let token;
  try {
    const client = await oauthClient(seed.url);
    token = (await client.grant("bench-user@example.com")).access_token;
    kv = seed.kvDir();
  } finally {
    await seed.stop();
  }
  return {
    async start() {
      const w = await startWorker("cloudflare", { directPort, kvSeed: kv });
      return { ...w, auths: [`Bearer ${token}`] };
    },
    dispose: () => rmSync(dirname(kv), { recursive: true, force: true }),
  };
}

/**
 * Checks every scenario once on every Worker that runs it, before anything is timed, so that a
 * fast wrong answer cannot pass for a fast answer. A Worker that answers wrongly sits the
 * scenario out, said in `skipped`; a scenario no Worker but the floor answers is dropped.
 * Resolves to the scenarios to run, each with `names`, the Workers that run it.
 */
async function checked(chosen, workers, skipped) {
  const runnable = [];
  for (const s of chosen) {
    const names = [];
    for (const name of s.workers ?? WORKER_NAMES) {
      if (name === "floor") continue;
      const r = s.check
        ? await s.check(workers[name].url, name)
        : await sendOnce(workers[name].url, s, { auths: await authsFor(s, name) });
      if (s.check ? r.ok : s.expect(r.status, r.json, r.headers)) {
        names.push(name);
      } else {
        const why = `${s.id} on ${name}: it answers ${r.status} ${String(r.text).replace(/\s+/g, " ").slice(0, 160)}`;
        say(`not measured: ${why}`);
        skipped.push(why);
      }
    }
    if (names.length === 0) {
      skipped.push(`${s.id}: no Worker but the floor answers it`);
      continue;
    }
    if ((s.workers ?? WORKER_NAMES).includes("floor")) names.push("floor");
    runnable.push({ ...s, names });
  }
  return runnable;
}

/** The medians of a scenario's runs per Worker, and ours' ratios to the others. */
function summarizeRuns(s, runs) {
  const per = {};
  for (const [name, rs] of Object.entries(runs)) {
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
  return {
    title: s.title,
    mcp: s.mcp === true,
    workers: per,
    ours_vs_cloudflare: ratio(per.ours?.rps, per.cloudflare?.rps),
    ours_vs_baseline: ratio(per.ours?.rps, per.baseline?.rps),
    ours_vs_floor: ratio(per.ours?.rps, per.floor?.rps),
    p99_ours_vs_floor: ratio(per.ours?.p99_ms, per.floor?.p99_ms),
    cpu_ours_vs_cloudflare: ratio(per.ours?.cpu_us, per.cloudflare?.cpu_us),
    cpu_ours_vs_baseline: ratio(per.ours?.cpu_us, per.baseline?.cpu_us),
    cpu_ours_vs_floor: ratio(per.ours?.cpu_us, per.floor?.cpu_us),
    floor_note: s.floorPath === "/do" ? "floor answers from a Durable Object (/do)" : undefined,
  };
}

const times = (x) => `${fmt(x, 2)}×`;
const percent = (x) => `${fmt(x * 100)}%`;

/**
 * The target lines: the figure, what is required and whether it is met (null: not measured).
 * The issue 45 targets hold ours to the Cloudflare-stack baseline and the floors; the earlier
 * ones (the SDK v1 baseline, the floor, p99, size, cold start) stay beside them.
 */
function targetLines(results, cold, races, wasmInfo) {
  const out = [];
  // `ok` answers null for a figure reported without a target.
  const line = (target, value, show, required, ok) =>
    out.push({ target, value, figure: Number.isFinite(value) ? show(value) : "not measured", required, ok: Number.isFinite(value) ? ok(value) : null });
  // Every MCP exchange, the 2026-07-28 ones included (not the 401: `scenarios` in lib.mjs).
  for (const [id, r] of Object.entries(results)) {
    if (!r.mcp || !r.workers.cloudflare) continue;
    line(`${id}: ≥ 3× cloudflare's throughput`, r.ours_vs_cloudflare, times, "≥ 3.00×", (v) => v >= TARGETS.mcp_vs_cloudflare);
  }
  const refresh = results.refresh;
  if (refresh) {
    line("refresh: at or above cloudflare's throughput", refresh.ours_vs_cloudflare, times, "≥ 1.00×", (v) => v >= TARGETS.refresh_vs_cloudflare);
    line("refresh: CPU per request", refresh.workers.ours?.cpu_us, (v) => `${fmt(v)} µs`, "≤ 1,000 µs", (v) => v <= TARGETS.refresh_cpu_us);
  }
  const ourRaces = races?.ours ?? [];
  line(
    "concurrent refresh of one token: live refresh tokens after (ours, every race)",
    ourRaces.length ? Math.max(...ourRaces.map((r) => r.live)) : NaN,
    (v) => `${ourRaces.map((r) => r.live).join(", ")}`,
    "exactly 1",
    () => ourRaces.every((r) => r.live === 1),
  );
  if (results.tools_call) {
    line("tools_call: CPU against the Durable Object floor", results.tools_call.cpu_ours_vs_floor, times, "≤ 2.00×", (v) => v <= TARGETS.tools_call_cpu_vs_do_floor);
  }
  const firstCall = cold?.tools_call?.workers;
  if (firstCall) {
    const both = Math.min(firstCall.baseline?.first_request_ms ?? NaN, firstCall.cloudflare?.first_request_ms ?? NaN);
    line(
      "first tools/call of a new workspace: at or below both baselines'",
      ratio(firstCall.ours?.first_request_ms, both),
      (v) => `${fmt(firstCall.ours.first_request_ms, 1)} ms, ${times(v)} the faster baseline's ${fmt(both, 1)} ms`,
      "≤ 1.00×",
      (v) => v <= 1,
    );
  }
  const list = results.tools_list;
  if (list) {
    line("tools_list: against the floor sending as many bytes", list.ours_vs_floor_same_bytes, percent, "≥ 90%", (v) => v >= TARGETS.tools_list_vs_sized_floor);
    line("tools_list: against the 40-byte floor (reported, no target)", list.ours_vs_floor, percent, "—", () => null);
    line("tools_list: ≥ 3× the SDK v1 baseline's throughput", list.ours_vs_baseline, times, "≥ 3.00×", (v) => v >= TARGETS.throughput_vs_baseline);
  }
  const init = results.initialize;
  if (init) {
    line("initialize: ≥ 3× the SDK v1 baseline's throughput", init.ours_vs_baseline, times, "≥ 3.00×", (v) => v >= TARGETS.throughput_vs_baseline);
    line("initialize: against the floor's throughput", init.ours_vs_floor, percent, "≥ 70%", (v) => v >= TARGETS.throughput_vs_floor);
  }
  for (const [id, r] of Object.entries(results)) {
    if (!Number.isFinite(r.p99_ours_vs_floor)) continue;
    line(`${id}: p99 against the floor's`, r.p99_ours_vs_floor, times, "≤ 2.00×", (v) => v <= TARGETS.p99_vs_floor);
  }
  if (wasmInfo) line("wasm, gzip -9", wasmInfo.gzip, (v) => `${v.toLocaleString("en")} B`, "≤ 1,000,000 B", (v) => v <= TARGETS.wasm_gzip_bytes);
  if (cold?.initialize) {
    const w = cold.initialize.workers;
    line("cold first request (`initialize`) against the floor's", ratio(w.ours?.first_request_ms, w.floor?.first_request_ms), times, "≤ 2.00×", (v) => v <= TARGETS.cold_vs_floor);
  }
  return out;
}

async function main() {
  const info = machine();
  say(`machine: ${info.cpu}, ${info.cores} cores, ${info.memory_gib} GiB; load ${info.load_at_start.join(" ")}`);
  say(`plan: ${ROUNDS} rounds × ${DURATION}s per run (+${WARMUP}s warm-up), ${CONNECTIONS} connections, wrk on core ${PIN ? LOAD_CPU : "any"}, workerd on core ${PIN ? WORKER_CPU : "any"}`);

  const wasm = wasmPath();
  const wasmBytes = wasm ? readFileSync(wasm) : null;
  const wasmInfo = wasmBytes ? { path: wasm.slice(ROOT.length + 1), raw: wasmBytes.length, gzip: gzipSync(wasmBytes, { level: 9 }).length } : null;
  if (wasmInfo) say(`wasm: ${wasmInfo.raw.toLocaleString("en")} B raw, ${wasmInfo.gzip.toLocaleString("en")} B gzip -9`);

  say(`starting the ${WORKER_NAMES.length} Workers`);
  const workers = {};
  for (const name of WORKER_NAMES) {
    workers[name] = await startWorker(name);
    if (PIN && workers[name].pid) pin(workers[name].pid, WORKER_CPU);
    say(`  ${name}: ${workers[name].url} (workerd pid ${workers[name].pid ?? "?"})`);
  }

  try {
    const skipped = [];
    // The Cloudflare-stack baseline accepts only tokens it issued: 65 grants through its OAuth
    // flow, the users of `tokens()`.
    const clients = {
      ours: await oauthClient(workers.ours.url),
      cloudflare: await oauthClient(workers.cloudflare.url),
    };
    const tok = tokens({ cloudflare: await ownTokens(clients.cloudflare) });
    say("cloudflare: 65 grants made for its access tokens");
    const all = scenarios(tok);
    const refresh = await refreshScenario({ ours: workers.ours.url, cloudflare: workers.cloudflare.url }, CONNECTIONS, say, clients);
    if (refresh?.skipped) skipped.push(...refresh.skipped);
    if (refresh?.id) all.push(refresh);
    else if (!refresh) skipped.push("refresh grant: no Worker has /v1/oauth/token");
    const chosen = await checked(
      all.filter((s) => !ONLY || ONLY.includes(s.id)),
      workers,
      skipped,
    );
    say(`checked: ${chosen.map((s) => `${s.id} (${s.names.join(", ")})`).join("; ")}`);

    // The floor's usual answer is 40 bytes; ours to tools/list is about 100 KB. A floor answering
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
      names: ["floor"],
      floorPath: `/sized?bytes=${bytes}`,
    };
    const listAt = chosen.findIndex((s) => s.id === "tools_list");
    if (listAt >= 0) chosen.splice(listAt + 1, 0, sized);

    const runs = {};
    const total = ROUNDS * chosen.reduce((n, s) => n + s.names.length, 0);
    let done = 0;
    for (let round = 0; round < ROUNDS; round++) {
      for (const s of chosen) {
        // Interleaved: the order of the Workers rotates every round, so drift in the machine's
        // load spreads over all of them instead of landing on one.
        const order = s.names.map((_, i) => s.names[(i + round) % s.names.length]);
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
          ((runs[s.id] ??= {})[name] ??= []).push(r);
          done++;
          say(`[${done}/${total}] round ${round + 1} ${s.id.padEnd(18)} ${name.padEnd(10)} ${fmt(r.rps).padStart(6)} req/s  p50 ${fmt(r.p50_ms, 2)} ms  p99 ${fmt(r.p99_ms, 2)} ms  CPU ${fmt(r.cpu_us)} µs/req${r.errors ? `  ${r.errors} ERRORS` : ""}`);
        }
      }
    }

    say(`concurrent refresh of one token: ${RACE_ROUNDS} races of ${RACE_N} on ours and cloudflare`);
    const races = await refreshRaces(clients, RACE_N, RACE_ROUNDS);
    for (const [name, rs] of Object.entries(races)) for (const r of rs) say(`  ${name}: ${describeRace(r)}`);

    const memory = Object.fromEntries(WORKER_NAMES.map((n) => [n, memoryOf(workers[n].pid)]));
    for (const n of WORKER_NAMES) await workers[n].stop();
    for (const n of WORKER_NAMES) delete workers[n];

    say(`cold starts: ${COLD} fresh workerd per Worker and scenario`);
    // `initialize` is the first request of every MCP session (lifecycle §initialization), so it
    // is what a fresh isolate answers first; `tools/list` has the largest answer.
    const initialize = all.find((s) => s.id === "initialize");
    const cf = await cloudflareCold();
    let cold;
    try {
      const alone = (name) => (name === "cloudflare" ? cf.start() : startAlone(name));
      const underMiniflare = (name) => (name === "cloudflare" ? cf.start() : startWorker(name));
      cold = await coldStarts([
        { key: "initialize", title: "`initialize`, alone", scenario: initialize, workers: WORKER_NAMES, start: alone },
        { key: "tools_list", title: "`tools/list`, alone", scenario: list, workers: WORKER_NAMES, start: alone },
        { key: "tools_call", title: "`tools/call get_workspace_context` (a new workspace), alone", scenario: all.find((s) => s.id === "tools_call"), workers: WORKER_NAMES, start: alone },
        { key: SIZED_ID, title: `the floor answering as many bytes as ours sends to \`tools/list\` (${fmt(bytes / 1024)} KiB), alone`, scenario: sized, workers: ["floor"], start: alone },
        { key: "tools_list_miniflare", title: "`tools/list` under Miniflare", scenario: list, workers: WORKER_NAMES, start: underMiniflare },
      ]);
    } finally {
      cf.dispose();
    }

    const results = {};
    for (const s of chosen) results[s.id] = summarizeRuns(s, runs[s.id]);
    const [listed, sizedResult] = [results.tools_list, results[SIZED_ID]];
    if (listed && sizedResult) {
      listed.ours_vs_floor_same_bytes = ratio(listed.workers.ours?.rps, sizedResult.workers.floor?.rps);
      listed.cpu_ours_vs_floor_same_bytes = ratio(listed.workers.ours?.cpu_us, sizedResult.workers.floor?.cpu_us);
    }

    const report = {
      date: new Date().toISOString(),
      machine: info,
      settings: { rounds: ROUNDS, duration_s: DURATION, warmup_s: WARMUP, connections: CONNECTIONS, cold_starts: COLD, race_n: RACE_N, race_rounds: RACE_ROUNDS, load_generator: "wrk -t1 (closed loop)" },
      build: { wasm: wasmInfo, opt: process.env.OPT === "1" || process.env.BENCH_OPT === "1" },
      results,
      refresh_races: races,
      cold_start: cold,
      memory,
      skipped,
      targets: targetLines(results, cold, races, wasmInfo),
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
  const names = WORKER_NAMES;
  L.push(`# Benchmark ${r.date.slice(0, 16).replace("T", " ")} UTC`);
  L.push("");
  L.push(`Machine: ${m.cpu}, ${m.cores} cores, ${m.memory_gib} GiB, ${m.kernel}; Node ${m.node}, workerd ${m.workerd} (Miniflare ${m.miniflare}), MCP SDK ${m.mcp_sdk} (baseline) and ${m.mcp_sdk_v2} (cloudflare), agents ${m.agents}, workers-oauth-provider ${m.workers_oauth_provider}, ${m.wrk}.`);
  L.push(`Load average ${m.load_at_start.join(" ")} at the start, ${r.load_at_end.join(" ")} at the end. ${m.pinned ? `workerd pinned to core ${m.pinned.workerd}, wrk to core ${m.pinned.wrk}.` : "No core pinning."}`);
  L.push(`Each figure is the median of ${r.settings.rounds} interleaved ${r.settings.duration_s}-second runs at ${r.settings.connections} connections (wrk, one thread, closed loop), after a ${r.settings.warmup_s}-second warm-up; req/s shows min–max across rounds.`);
  L.push("");
  L.push(`Workers: ${names.map((n) => `**${n}**, ${WORKER_TITLES[n]}`).join("; ")}.`);
  L.push("");
  L.push(`| scenario | ${names.map((n) => `${n} req/s`).join(" | ")} | ours ÷ cloudflare | ours ÷ baseline | ours ÷ floor |`);
  L.push(`|---|${names.map(() => "---:").join("|")}|---:|---:|---:|`);
  const q = (v) => (Number.isFinite(v) ? times(v) : "—");
  for (const x of Object.values(r.results)) {
    const w = x.workers;
    const cell = (n) => (w[n] ? `${fmt(w[n].rps)} (${fmt(w[n].rps_min)}–${fmt(w[n].rps_max)})${w[n].errors ? ` ⚠ ${w[n].errors} errors` : ""}` : "n/a");
    L.push(`| ${x.title}${x.floor_note ? "¹" : ""} | ${names.map(cell).join(" | ")} | ${q(x.ours_vs_cloudflare)} | ${q(x.ours_vs_baseline)} | ${Number.isFinite(x.ours_vs_floor) ? percent(x.ours_vs_floor) : "—"} |`);
  }
  if (Object.values(r.results).some((x) => x.floor_note)) L.push("", "¹ The floor for these answers from a Durable Object (`/do`): a Worker → Durable Object round trip and nothing else.");
  const list = r.results.tools_list;
  if (Number.isFinite(list?.ours_vs_floor_same_bytes)) {
    L.push("", `Against the floor answering as many bytes as ours (\`${SIZED_ID}\`), \`tools/list\` runs at ${percent(list.ours_vs_floor_same_bytes)} of its throughput, for ${times(list.cpu_ours_vs_floor_same_bytes)} its CPU per request; against the usual 40-byte floor, at ${percent(list.ours_vs_floor)}.`);
  }
  L.push("");
  L.push("Latency, p50 / p99 ms (median of the rounds):");
  L.push("");
  L.push(`| scenario | ${names.join(" | ")} |`);
  L.push(`|---|${names.map(() => "---:").join("|")}|`);
  for (const x of Object.values(r.results)) {
    const lat = (n) => (x.workers[n] ? `${fmt(x.workers[n].p50_ms, 2)} / ${fmt(x.workers[n].p99_ms, 2)}` : "n/a");
    L.push(`| ${x.title} | ${names.map(lat).join(" | ")} |`);
  }
  L.push("");
  L.push("CPU time of each Worker's workerd process per request (user + system, all threads, from `/proc/<pid>/stat`, median of the rounds). It varies less with the machine's load than req/s does (other processes still slow it through shared caches and cores), so it is the steadier comparison of the Workers' per-request cost:");
  L.push("");
  L.push(`| scenario | ${names.map((n) => `${n} µs/req`).join(" | ")} | ours ÷ cloudflare | ours ÷ baseline | ours ÷ floor |`);
  L.push(`|---|${names.map(() => "---:").join("|")}|---:|---:|---:|`);
  for (const x of Object.values(r.results)) {
    const c = (n) => (x.workers[n] && Number.isFinite(x.workers[n].cpu_us) ? fmt(x.workers[n].cpu_us) : "n/a");
    L.push(`| ${x.title} | ${names.map(c).join(" | ")} | ${q(x.cpu_ours_vs_cloudflare)} | ${q(x.cpu_ours_vs_baseline)} | ${q(x.cpu_ours_vs_floor)} |`);
  }
  for (const s of r.skipped) L.push("", `Not measured: ${s}.`);
  L.push("");
  L.push(`Concurrent refresh of one token (\`bench/refresh-race.mjs\`): ${r.settings.race_n} refresh requests at once with one grant's refresh token, then each distinct refresh token returned tried once more, serially. Ours rotates in the user's workspace object, one request at a time, and answers every concurrent refresh within its retry window with the same successor (src/oauth/grants.rs); cloudflare rotates by reading and writing the grant in KV.`);
  L.push("");
  for (const [name, rs] of Object.entries(r.refresh_races)) {
    for (const x of rs) L.push(`- ${name}: ${describeRace(x)}.`);
  }
  L.push("");
  if (r.build.wasm) L.push(`wasm (\`${r.build.wasm.path}\`${r.build.opt ? ", wasm-opt" : ""}): ${r.build.wasm.raw.toLocaleString("en")} B raw, ${r.build.wasm.gzip.toLocaleString("en")} B gzip -9.`);
  L.push("");
  L.push(`Cold start: ${r.settings.cold_starts} fresh workerd processes per Worker and scenario, interleaved. "Alone": the Worker is the only one in its workerd, as Miniflare configures it but without Miniflare's simulators (\`bench/alone.mjs\`); cloudflare, which reads KV on every request, runs under Miniflare in those rows too (its JavaScript is not flushed, but its workerd's start and CPU include Miniflare's), from the KV of an earlier instance that holds its token. "Under Miniflare": as the end-to-end tests run it, where the simulators' isolates, created after the Worker's, flush a wasm Worker's compiled code before its first request (bench/README.md, "Cold start"). First request: median (minimum), and the CPU its workerd spent on it.`);
  L.push("");
  L.push(`| first request | ${names.join(" | ")} | ours ÷ floor |`);
  L.push(`|---|${names.map(() => "---:").join("|")}|---:|`);
  for (const x of Object.values(r.cold_start)) {
    const w = x.workers;
    const cell = (n) => (w[n] ? `${fmt(w[n].first_request_ms, 1)} ms (${fmt(w[n].first_request_min_ms, 1)}); CPU ${fmt(w[n].first_request_cpu_ms, 1)} ms` : "—");
    const v = ratio(w.ours?.first_request_ms, w.floor?.first_request_ms);
    L.push(`| ${x.title} | ${names.map(cell).join(" | ")} | ${q(v)} |`);
  }
  L.push("");
  L.push("| Worker | workerd ready (alone; cloudflare: Miniflare) | second request (`initialize`) | peak RSS of its workerd under load |");
  L.push("|---|---:|---:|---:|");
  for (const n of names) {
    const c = r.cold_start.initialize.workers[n];
    L.push(`| ${n} | ${fmt(c.ready_ms)} ms | ${fmt(c.second_request_ms, 1)} ms | ${fmt(r.memory[n].peak_rss / 2 ** 20)} MiB |`);
  }
  L.push("");
  L.push("| target | figure | required | met |");
  L.push("|---|---:|---:|:---:|");
  for (const c of r.targets) L.push(`| ${c.target} | ${c.figure} | ${c.required} | ${c.ok === null ? "—" : c.ok ? "yes" : "**no**"} |`);
  return L.join("\n");
}

main().catch((e) => {
  process.stderr.write(`bench failed: ${e.stack ?? e}\n`);
  process.exit(1);
});

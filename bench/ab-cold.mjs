// The first request of a fresh isolate, for two builds of ours: `node bench/ab-cold.mjs <build
// dir A> <build dir B>` (env S: the scenarios, default `initialize,tools_call`; N: fresh workerd
// processes per build and scenario, default 11). Each one runs alone in its workerd
// (bench/alone.mjs), A and B alternating, and the script prints the medians of: the time until
// workerd listens, the CPU its process had spent by then (start-up, the module's `start`
// included), and the first request's latency and CPU. bench/README.md, "A/B of two builds".
import { cpuMsOf, median, scenarios, sendOnce, tokens } from "./lib.mjs";
import { startAlone } from "./alone.mjs";

const [a, b] = process.argv.slice(2);
if (!a || !b) {
  process.stderr.write("usage: node bench/ab-cold.mjs <build dir A> <build dir B>\n");
  process.exit(2);
}
const all = scenarios(tokens());
const ids = (process.env.S ?? "initialize,tools_call").split(",");
const N = Number(process.env.N ?? 11);
const samples = {};
// Unmeasured: the first request this process sends pays for its HTTP client's own start.
const warm = await startAlone("ours", { build: a });
await sendOnce(warm.url, all.find((s) => s.id === ids[0]));
await warm.stop();
for (let i = 0; i < N; i++) {
  for (const [label, build] of [["A", a], ["B", b]]) {
    for (const id of ids) {
      const scenario = all.find((s) => s.id === id);
      if (!scenario) throw new Error(`no scenario ${id}`);
      const w = await startAlone("ours", { build });
      const ready = w.readyMs;
      const startCpu = cpuMsOf(w.pid);
      let first, cpu;
      try {
        first = await sendOnce(w.url, scenario);
        cpu = cpuMsOf(w.pid) - startCpu;
      } finally {
        await w.stop();
      }
      if (first.status !== 200) throw new Error(`${label} ${id}: ${first.status} ${String(first.text).slice(0, 200)}`);
      (samples[`${id} ${label}`] ??= []).push({ ready, startCpu, first: first.ms, cpu });
    }
  }
}
for (const id of ids) {
  for (const label of ["A", "B"]) {
    const s = samples[`${id} ${label}`];
    const m = (k) => median(s.map((x) => x[k]));
    console.log(
      `${id} ${label}: ready ${m("ready").toFixed(0)} ms (process CPU ${m("startCpu").toFixed(0)} ms), first request ${m("first").toFixed(1)} ms, its CPU ${m("cpu").toFixed(1)} ms`,
    );
  }
}

// The first request of a fresh isolate, for two builds of ours: `node bench/ab-cold.mjs <build
// dir A> <build dir B>` (env S: the scenarios, default `initialize,tools_call`; N: fresh workerd
// processes per build and scenario, default 11). Each one runs alone in its workerd
// (bench/alone.mjs), A and B alternating, and the script prints the medians of: the time until
// workerd listens, the CPU its process had spent by then (start-up, the module's `start`
// included), and the first request's latency and CPU. bench/README.md, "A/B of two builds".
import { coldSample, median, scenarios, tokens } from "./lib.mjs";
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
const scenario = (id) => {
  const found = all.find((s) => s.id === id);
  if (!found) throw new Error(`no scenario ${id}`);
  return found;
};
// Unmeasured: the first request this process sends pays for its HTTP client's own start.
await coldSample(() => startAlone("ours", { build: a }), scenario(ids[0]));
for (let i = 0; i < N; i++) {
  for (const [label, build] of [["A", a], ["B", b]]) {
    for (const id of ids) {
      const sample = await coldSample(() => startAlone("ours", { build }), scenario(id), { label });
      (samples[`${id} ${label}`] ??= []).push(sample);
    }
  }
}
for (const id of ids) {
  for (const label of ["A", "B"]) {
    const s = samples[`${id} ${label}`];
    const m = (k) => median(s.map((x) => x[k]));
    console.log(
      `${id} ${label}: ready ${m("ready_ms").toFixed(0)} ms (process CPU ${m("start_cpu_ms").toFixed(0)} ms), first request ${m("first_ms").toFixed(1)} ms, its CPU ${m("first_cpu_ms").toFixed(1)} ms`,
    );
  }
}

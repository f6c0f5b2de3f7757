// scratch: CPU per request over successive runs on one fresh worker
import { scenarios, startWorker, tokens, pin, measure } from "../lib.mjs";
const [scenarioId = "initialize", workerName = "ours", build, runs = "10"] = process.argv.slice(2);
const worker = await startWorker(workerName, build && build !== "-" ? { build } : {});
pin(worker.pid, 1);
const s = scenarios(tokens()).find((x) => x.id === scenarioId);
let total = 0;
try {
  for (let i = 0; i < Number(runs); i++) {
    const r = await measure(worker, s, { path: s.path, seconds: 3, warmup: 0, connections: 16, loadCpu: 0 });
    total += r.requests;
    console.log(`run ${i} total ${total} req/s ${Math.round(r.requests / 3)} cpu ${r.cpu_us.toFixed(0)} µs`);
  }
} finally { await worker.stop(); }

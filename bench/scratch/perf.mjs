// scratch: perf record of one worker under one scenario
import { spawn, execFileSync } from "node:child_process";
import { join } from "node:path";
import { ROOT, scenarios, startWorker, tokens, pin, wrkEnv } from "../lib.mjs";
const [scenarioId = "initialize", workerName = "ours", build] = process.argv.slice(2);
const worker = await startWorker(workerName, build ? { build } : {});
pin(worker.pid, 1);
const scenario = scenarios(tokens()).find((s) => s.id === scenarioId);
try {
  const env = { ...process.env, BENCH_OUT: "/dev/null", ...wrkEnv(scenario) };
  const wrk = spawn("taskset", ["-c", "0", "wrk", "-t1", "-c16", "-d9s", "-s", join(ROOT, "bench/wrk", scenario.script ?? "mcp.lua"), worker.url + scenario.path], { env, stdio: ["ignore", "inherit", "inherit"] });
  await new Promise((r) => setTimeout(r, 2000));
  execFileSync("perf", ["record", "-F", "4999", "-g", "-o", `/tmp/perf-${workerName}.data`, "-p", String(worker.pid), "--", "sleep", "5"], { stdio: "inherit" });
  await new Promise((r) => wrk.on("exit", r));
} finally {
  await worker.stop();
}

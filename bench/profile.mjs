// A CPU profile of one Worker under one scenario's load: `node bench/profile.mjs [scenario]
// [worker]` (defaults: tools_list, ours). It starts the Worker with the DevTools inspector,
// samples V8 (JavaScript and wasm frames, by name) while wrk drives the scenario (any of
// bench/lib.mjs's, or `refresh`, the token endpoint's refresh grant), prints the
// functions with the most self time and writes a .cpuprofile (open it in Chrome DevTools).
// Build first (bin/build or bin/bench).
import { spawn } from "node:child_process";
import { writeFileSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { ROOT, authsFor, freePort, inspect, scenarios, startWorker, tokens, pin, wrkEnv } from "./lib.mjs";
import { oauthClient, ownTokens, refreshScenario } from "./oauth.mjs";

const [scenarioId = "tools_list", workerName = "ours", secondsArg = "5"] = process.argv.slice(2);
const seconds = Number(secondsArg);

const inspectorPort = await freePort();
const worker = await startWorker(workerName, { inspectorPort });
if (worker.pid) pin(worker.pid, 1);
// The refresh grant needs grants made through the OAuth flow first (bench/oauth.mjs), and the
// Cloudflare-stack baseline its own access tokens.
const own = workerName === "cloudflare" ? { cloudflare: await ownTokens(await oauthClient(worker.url)) } : {};
const scenario =
  scenarioId === "refresh"
    ? await refreshScenario({ [workerName]: worker.url }, 16, (m) => console.error(m))
    : scenarios(tokens(own)).find((s) => s.id === scenarioId);
if (!scenario?.id) throw new Error(`no scenario ${scenarioId} on ${workerName}`);
const seeded = scenario.reseed ? await scenario.reseed(workerName) : {};

try {
  const { send, close } = await inspect(inspectorPort, workerName);
  await send("Profiler.enable");
  await send("Profiler.setSamplingInterval", { interval: 100 });
  await send("Profiler.start");
  const env = {
    ...process.env,
    BENCH_OUT: "/dev/null",
    ...wrkEnv(scenario, { name: workerName, auths: await authsFor(scenario, workerName) }),
    ...seeded,
  };
  await new Promise((resolve, reject) => {
    const args = ["-c", "0", "wrk", "-t1", "-c16", `-d${seconds}s`, "-s", join(ROOT, "bench/wrk", scenario.script ?? "mcp.lua"), worker.url + scenario.path];
    const child = spawn("taskset", args, { env, stdio: ["ignore", "inherit", "inherit"] });
    child.on("exit", (code) => (code === 0 ? resolve() : reject(new Error(`wrk ${code}`))));
  });
  const { result } = await send("Profiler.stop");
  close();
  const profile = result.profile;
  const dir = join(ROOT, "bench/results/tmp");
  mkdirSync(dir, { recursive: true });
  const file = join(dir, `${workerName}-${scenarioId}.cpuprofile`);
  writeFileSync(file, JSON.stringify(profile));

  // Self time per function from the samples.
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const counts = new Map();
  for (const s of profile.samples) counts.set(s, (counts.get(s) ?? 0) + 1);
  const self = new Map();
  for (const [nodeId, n] of counts) {
    const f = byId.get(nodeId).callFrame;
    const key = `${f.functionName || "(anonymous)"}  ${f.url ? f.url.split("/").pop() : ""}`;
    self.set(key, (self.get(key) ?? 0) + n);
  }
  const total = profile.samples.length;
  const rows = [...self].sort((a, b) => b[1] - a[1]).slice(0, 40);
  console.log(`\n${total} samples; self time by function (${workerName}, ${scenarioId}):`);
  for (const [k, n] of rows) console.log(`${((100 * n) / total).toFixed(1).padStart(5)}%  ${k}`);
  console.log(`\nprofile: ${file}`);
} finally {
  await worker.stop();
}

// What a request leaves on V8's heap, by the JavaScript function that allocated it: `node
// bench/heap.mjs [scenario] [worker] [seconds] [build dir]` (defaults: initialize, ours, 4, the
// build). It starts the Worker with the DevTools inspector, warms it under wrk for 2 seconds,
// then samples allocations (`HeapProfiler.startSampling`, one sample per 256 bytes, objects
// that either collector has since freed included) while wrk drives the scenario, and prints the
// bytes per request of each allocating function. Garbage matters here because every scavenge
// costs the same whatever brought it on (bench/README.md, "What a request leaves to the garbage
// collector"). Build first (bin/build or bin/bench).
import { freePort, inspect, measure, scenarios, startWorker, tokens, pin } from "./lib.mjs";
import { oauthClient, ownTokens } from "./oauth.mjs";

const [scenarioId = "initialize", workerName = "ours", secondsArg = "4", build] = process.argv.slice(2);
const inspectorPort = await freePort();
const worker = await startWorker(workerName, build ? { inspectorPort, build } : { inspectorPort });
// The Cloudflare-stack baseline accepts only access tokens it issued.
const own = workerName === "cloudflare" ? { cloudflare: await ownTokens(await oauthClient(worker.url)) } : {};
const scenario = scenarios(tokens(own)).find((s) => s.id === scenarioId);
if (!scenario) throw new Error(`no scenario ${scenarioId}`);
if (worker.pid) pin(worker.pid, 1);
const path = workerName === "floor" && scenario.floorPath ? scenario.floorPath : scenario.path;
/** wrk on core 0 for `seconds` (`lib.measure`); resolves to the number of requests it made. */
const load = async (seconds) =>
  (await measure(worker, scenario, { path, seconds, warmup: 0, connections: 16, loadCpu: 0, reseedAs: workerName })).requests;

try {
  const { send, close } = await inspect(inspectorPort, workerName);
  await load(2);
  await send("HeapProfiler.enable");
  await send("HeapProfiler.startSampling", {
    samplingInterval: 256,
    includeObjectsCollectedByMajorGC: true,
    includeObjectsCollectedByMinorGC: true,
  });
  const requests = await load(Number(secondsArg));
  const { result } = await send("HeapProfiler.stopSampling");
  close();

  // Self size per allocating function, over the sampled call tree.
  const self = new Map();
  let total = 0;
  const walk = (node) => {
    const f = node.callFrame;
    const key = `${f.functionName || "(anonymous)"}  ${f.url ? `${f.url.split("/").pop()}:${f.lineNumber + 1}` : ""}`;
    if (node.selfSize > 0) {
      self.set(key, (self.get(key) ?? 0) + node.selfSize);
      total += node.selfSize;
    }
    for (const child of node.children) walk(child);
  };
  walk(result.profile.head);
  console.log(`${requests} requests; ${(total / requests).toFixed(0)} bytes allocated per request (${workerName}, ${scenarioId}), by function:`);
  for (const [k, bytes] of [...self].sort((a, b) => b[1] - a[1]).slice(0, 25)) {
    console.log(`${(bytes / requests).toFixed(0).padStart(7)}  ${k}`);
  }
} finally {
  await worker.stop();
}

// The first request of a freshly started workerd, profiled: `node bench/profile-cold.mjs` (env W=ours|baseline|floor,
// S=tools_list|initialize|…). Prints the latency of the first and second request and the
// functions with the most self time over both (wasm frames by index unless built with NAMES=1).
// The Worker runs alone in its workerd (bench/alone.mjs): under Miniflare its compiled code is
// flushed before the first request.
import { freePort, scenarios, tokens, sendOnce } from "./lib.mjs";
import { startAlone } from "./alone.mjs";
const inspectorPort = await freePort();
const worker = await startAlone(process.env.W ?? "ours", { inspectorPort });
const scenario = scenarios(tokens()).find((s) => s.id === (process.env.S ?? "tools_list"));
try {
  const targets = await (await fetch(`http://127.0.0.1:${inspectorPort}/json`)).json();
  const target = targets.find((t) => t.title?.includes("ours")) ?? targets[0];
  const ws = new WebSocket(target.webSocketDebuggerUrl);
  await new Promise((r, j) => { ws.onopen = r; ws.onerror = j; });
  let id = 0; const pending = new Map();
  ws.onmessage = (m) => { const msg = JSON.parse(m.data); if (msg.id && pending.has(msg.id)) { pending.get(msg.id)(msg); pending.delete(msg.id); } };
  const send = (method, params = {}) => new Promise((r) => { const n = ++id; pending.set(n, r); ws.send(JSON.stringify({ id: n, method, params })); });
  await send("Profiler.enable");
  await send("Profiler.setSamplingInterval", { interval: 50 });
  await send("Profiler.start");
  const first = await sendOnce(worker.url, scenario, { floor: process.env.W === "floor" });
  const second = await sendOnce(worker.url, scenario, { floor: process.env.W === "floor" });
  const { result } = await send("Profiler.stop");
  ws.close();
  const p = result.profile;
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const self = new Map();
  const dt = p.timeDeltas; let total = 0;
  for (let i = 0; i < p.samples.length; i++) { const n = byId.get(p.samples[i]); const f = n.callFrame; const key = `${f.functionName || "(anon)"} ${f.url ? f.url.split("/").pop() : ""}`; self.set(key, (self.get(key) ?? 0) + (dt[i] ?? 0)); total += dt[i] ?? 0; }
  console.log(`first ${first.ms.toFixed(1)} ms, second ${second.ms.toFixed(1)} ms; profile ${(total / 1000).toFixed(1)} ms`);
  for (const [k, v] of [...self].sort((a, b) => b[1] - a[1]).slice(0, 25)) console.log((v / 1000).toFixed(2).padStart(8), "ms ", k.slice(0, 120));
} finally { await worker.stop(); }

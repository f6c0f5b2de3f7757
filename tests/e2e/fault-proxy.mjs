// Fault injection in front of any provider fake (fake-stripe, fake-apollo, fake-instantly): the
// Worker is pointed at this proxy, which passes every request on to the fake unchanged unless a
// queued fault matches it. The fakes stay what they are, the providers' documented APIs; the
// proxy adds what a network and a provider in trouble do:
//
// - `{ status }` (500, 502…): answered by the proxy, the fake never sees the request;
// - `{ status: 429, retryAfter }`: a rate limit with its Retry-After, likewise;
// - `{ hang: true }`: never answered, so the Worker's own timeout fires;
// - `{ malformed: true }`: the fake acts, and its answer arrives as a 200 that is not JSON;
// - `{ lost: true }`: the fake acts, and the connection drops before its answer (a partial
//   success: done at the provider, unknown to us);
// - `{ held: h }` (from `hold()`): the fake acts, then the answer waits until `h.release()`;
//   `h.arrived` resolves once the fake has answered, so a test can kill the runtime between the
//   provider's answer and the Worker's write.
//
// A fault with `when(body)` applies only to a request whose JSON body it accepts (Instantly's
// order and its simulation share a path).
//
// It records what reached the fake (`reached`: with its JSON body, the fault it met and the
// fake's status) and counts
// it per idempotency key (`perKey`), so a test can say that an action ran once at the provider
// however many times the Worker asked, and which calls' answers the Worker never read.
import { createServer, request } from "node:http";

export async function faultProxy(target) {
  const faults = []; // { method, path (string or RegExp), fault }
  const reached = []; // { method, path, key }: requests the fake received
  const seen = []; // every request, with the fault applied if any
  const matches = (f, req, path, body) =>
    (!f.method || f.method === req.method) &&
    (typeof f.path === "string" ? f.path === path : f.path.test(path)) &&
    (!f.fault?.when || f.fault.when(body));
  const jsonOf = (raw) => {
    try {
      return JSON.parse(raw.toString());
    } catch {
      return undefined;
    }
  };

  const forward = (req, raw) =>
    new Promise((resolve, reject) => {
      const up = request(new URL(req.url, target), { method: req.method, headers: req.headers }, (res) => {
        const chunks = [];
        res.on("data", (c) => chunks.push(c));
        res.on("end", () => resolve({ status: res.statusCode, headers: res.headers, body: Buffer.concat(chunks) }));
        res.on("error", reject);
      });
      up.on("error", reject);
      up.end(raw);
    });

  const server = createServer((req, res) => {
    const chunks = [];
    req.on("data", (c) => chunks.push(c));
    req.on("end", async () => {
      const raw = Buffer.concat(chunks);
      const path = new URL(req.url, "http://proxy").pathname;
      const body = jsonOf(raw);
      const i = faults.findIndex((f) => matches(f, req, path, body));
      const fault = i >= 0 ? faults.splice(i, 1)[0].fault : null;
      seen.push({ method: req.method, path, fault });
      // A runtime killed mid-request leaves this socket closed; writing to it is then harmless.
      res.on("error", () => {});
      if (fault?.status) {
        const headers = { "content-type": "application/json", ...(fault.retryAfter ? { "retry-after": String(fault.retryAfter) } : {}) };
        res.writeHead(fault.status, headers);
        return res.end(JSON.stringify({ error: { type: "api_error", message: "Injected failure" }, message: "Injected failure" }));
      }
      if (fault?.hang) return; // never answered
      const entry = { method: req.method, path, key: req.headers["idempotency-key"] ?? null, body, fault, at: Date.now() };
      reached.push(entry);
      let answer;
      try {
        answer = await forward(req, raw);
      } catch {
        return res.destroy();
      }
      entry.status = answer.status;
      if (fault?.lost) return res.destroy();
      if (fault?.held) {
        fault.held.arrive(answer);
        await fault.held.released;
      }
      if (fault?.malformed) {
        res.writeHead(200, { "content-type": "application/json" });
        return res.end("<html><body>502 Bad Gateway</body></html>");
      }
      const headers = { ...answer.headers };
      delete headers["transfer-encoding"];
      delete headers.connection;
      res.writeHead(answer.status, headers);
      res.end(answer.body);
    });
  });
  await new Promise((r) => server.listen(0, "127.0.0.1", r));
  return {
    url: `http://127.0.0.1:${server.address().port}`,
    seen,
    reached,
    /** Queues `fault` for the next request matching `method` and `path`; `times` queues it again. */
    inject(method, path, fault, times = 1) {
      for (let n = 0; n < times; n++) faults.push({ method, path, fault });
    },
    /** A fault that lets the fake act, then holds its answer until `release()`. */
    hold(method, path, when) {
      const h = {};
      h.arrived = new Promise((r) => (h.arrive = r));
      h.released = new Promise((r) => (h.release = r));
      faults.push({ method, path, fault: { held: h, when } });
      return h;
    },
    /** Drops the faults not yet used. */
    clear() {
      faults.length = 0;
    },
    /** How many requests matching `method` and `path` reached the fake, per idempotency key. */
    perKey(method, path) {
      const counts = {};
      for (const r of reached) if (matches({ method, path }, r, r.path)) counts[r.key] = (counts[r.key] ?? 0) + 1;
      return counts;
    },
    close: () => new Promise((r) => { server.closeAllConnections?.(); server.close(r); }),
  };
}

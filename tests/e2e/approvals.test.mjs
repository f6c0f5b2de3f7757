// The approval engine in the real Worker: the approval tools, decided by the Claude app only.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { startWorker, connect, post, rpc } from "./harness.mjs";

let worker;
before(async () => {
  worker = await startWorker();
});
after(async () => {
  await worker?.stop();
});

test("an empty workspace has no pending approval", async () => {
  const client = await connect(worker, { sub: "empty@example.com", scope: "mcp" });
  const r = await client.callTool({ name: "list_pending_approvals", arguments: {} });
  assert.equal(r.isError, false);
  assert.deepEqual(r.structuredContent, { kind: "approvals", approvals: [], total: 0 });
  assert.match(r.content[0].text, /No approval/);
  await client.close();
});

test("decide_approval is the Claude app's, and refuses an id this workspace does not have", async () => {
  const notApp = await post(worker, rpc("tools/call", { name: "decide_approval", arguments: { id: "apr_x", decision: "approve" } }), {
    token: worker.token({ sub: "decider@example.com" }),
    headers: { "mcp-protocol-version": "2025-11-25" },
  });
  assert.equal(notApp.status, 403, "not listed, not callable");
  const app = await connect(worker, { sub: "decider@example.com", app: true });
  const r = await app.callTool({ name: "decide_approval", arguments: { id: "apr_00000000000000000000000000000000", decision: "approve" } });
  assert.equal(r.isError, true);
  assert.match(r.content[0].text, /no approval `apr_0+` in this workspace/);
  const bad = await app.callTool({ name: "decide_approval", arguments: { id: "apr_1", decision: "yes" } });
  assert.equal(bad.isError, true);
  assert.match(bad.content[0].text, /decision/);
  await app.close();
});

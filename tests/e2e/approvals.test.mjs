// The approval engine in the real Worker (workerd, Durable Objects, alarms): create, return the
// same, approve, reject, expire by alarm, 10 concurrent decisions executed once, a failed
// execution that charges nothing, and another workspace's approval refused. `upgrade_plan` in
// the sandbox is the action; the sandbox's charges show how many times it really executed.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { startWorker, connect, post, rpc } from "./harness.mjs";
import { subscribed, ok, CARD_DECLINES_LATER } from "./billing-helpers.mjs";

let worker;
before(async () => {
  worker = await startWorker();
});
after(async () => {
  await worker?.stop();
});

const decideRaw = (token, id, decision, rpcId = 1) =>
  post(worker, rpc("tools/call", { name: "decide_approval", arguments: { id, decision } }, rpcId), {
    token,
    headers: { "mcp-protocol-version": "2025-11-25" },
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
  const notApp = await decideRaw(worker.token({ sub: "decider@example.com", scope: "mcp mcp:act" }), "apr_x", "approve");
  assert.equal(notApp.status, 403, "not listed, not callable");
  // It has every scope: the challenge says no scope helps, rather than asking for mcp:act.
  const challenge = notApp.headers.get("www-authenticate");
  assert.match(challenge, /error="insufficient_scope", error_description="Only the user decides approvals, in the Claude app's card/);
  assert.doesNotMatch(challenge, /needs the mcp:act scope/);
  const readOnly = await decideRaw(worker.token({ sub: "decider@example.com", scope: "mcp" }), "apr_x", "approve");
  assert.equal(readOnly.status, 403);
  assert.match(readOnly.headers.get("www-authenticate"), /needs the mcp:act scope/);
  const app = await connect(worker, { sub: "decider@example.com", app: true });
  const r = await app.callTool({ name: "decide_approval", arguments: { id: "apr_00000000000000000000000000000000", decision: "approve" } });
  assert.equal(r.isError, true);
  assert.match(r.content[0].text, /no approval `apr_0+` in this workspace/);
  const bad = await app.callTool({ name: "decide_approval", arguments: { id: "apr_1", decision: "yes" } });
  assert.equal(bad.isError, true);
  assert.match(bad.content[0].text, /decision/);
  await app.close();
});

test("create, return the same, approve, reject", async () => {
  const client = await subscribed(worker, "engine@example.com");
  const growth = await ok(client, "upgrade_plan", { plan: "growth" });
  assert.equal(growth.kind, "approval");
  assert.equal(growth.status, "pending");
  assert.equal(growth.action, "upgrade_plan");
  assert.equal(growth.decideHere, true, "the Claude app decides in the card");
  assert.equal(growth.appUrl, `${worker.origin}/app/approvals/${growth.id}`);
  assert.ok(growth.expiresAt - Date.now() > 23 * 3600_000, "24 hours by default");
  assert.ok(growth.impact.some((l) => /Charges the card on file about \$100 now/.test(l)), growth.impact.join("\n"));
  assert.deepEqual(growth.cost, { amount: 10000, currency: "usd" });

  const same = await ok(client, "upgrade_plan", { plan: "growth" });
  assert.equal(same.id, growth.id, "same action and arguments: the same approval");
  const scale = await ok(client, "upgrade_plan", { plan: "scale" });
  assert.notEqual(scale.id, growth.id);

  // A client that cannot decide in the card gets the link.
  const cli = await connect(worker, { sub: "engine@example.com" });
  const listed = await ok(cli, "list_pending_approvals");
  assert.equal(listed.total, 2);
  assert.deepEqual(listed.approvals.map((a) => a.id).sort(), [growth.id, scale.id].sort());
  assert.ok(listed.approvals.every((a) => a.decideHere === false));
  const viaCli = await cli.callTool({ name: "upgrade_plan", arguments: { plan: "growth" } });
  assert.match(viaCli.content[0].text, new RegExp(`${worker.origin}/app/approvals/${growth.id}`));
  const ctx = await ok(cli, "get_workspace_context");
  assert.equal(ctx.pendingApprovalCount, 2);
  assert.equal(ctx.plan.id, "starter");

  const approved = await ok(client, "decide_approval", { id: growth.id, decision: "approve" });
  assert.equal(approved.status, "done", approved.result);
  assert.match(approved.result, /Now on the Growth plan/);
  const plans = await ok(client, "get_plans_and_billing");
  assert.equal(plans.current.id, "growth");
  assert.equal(plans.charges.length, 2, "first month + the upgrade");

  const rejected = await ok(client, "decide_approval", { id: scale.id, decision: "reject" });
  assert.equal(rejected.status, "rejected");
  const again = await client.callTool({ name: "decide_approval", arguments: { id: scale.id, decision: "approve" } });
  assert.match(again.content[0].text, /already decided/);
  assert.equal(again.structuredContent.status, "rejected", "the loser sees the outcome");
  assert.equal((await ok(client, "get_plans_and_billing")).current.id, "growth");
  assert.equal((await ok(client, "list_pending_approvals")).total, 0);
  await client.close();
  await cli.close();
});

test("10 decisions at once: exactly one executes, all see the outcome", async () => {
  const sub = "race@example.com";
  const client = await subscribed(worker, sub);
  const token = worker.token({ sub, app: true });
  const race = async (id, decisionOf) => {
    const answers = await Promise.all(Array.from({ length: 10 }, (_, i) => decideRaw(token, id, decisionOf(i), i + 1)));
    const results = answers.map((r) => {
      assert.equal(r.status, 200);
      assert.equal(r.json.result.isError, false, r.json.result.content[0].text);
      return r.json.result;
    });
    const statuses = new Set(results.map((r) => r.structuredContent.status));
    assert.equal(statuses.size, 1, `one outcome for all: ${[...statuses]}`);
    const applied = results.filter((r) => !r.content[0].text.startsWith("This approval was already decided"));
    assert.equal(applied.length, 1, "exactly one decision applied");
    return [...statuses][0];
  };

  const growth = await ok(client, "upgrade_plan", { plan: "growth" });
  assert.equal(await race(growth.id, () => "approve"), "done");
  let plans = await ok(client, "get_plans_and_billing");
  assert.equal(plans.current.id, "growth");
  assert.equal(plans.charges.length, 2, "the first month and exactly one upgrade charge");

  const scale = await ok(client, "upgrade_plan", { plan: "scale" });
  const outcome = await race(scale.id, (i) => (i % 2 ? "approve" : "reject"));
  plans = await ok(client, "get_plans_and_billing");
  assert.equal(plans.current.id, outcome === "done" ? "scale" : "growth");
  assert.equal(plans.charges.length, outcome === "done" ? 3 : 2);
  await client.close();
});

test("a failed execution is not_done, with the reason, and charges nothing", async () => {
  const client = await subscribed(worker, "declines@example.com", "starter", CARD_DECLINES_LATER);
  const approval = await ok(client, "upgrade_plan", { plan: "scale" });
  const out = await ok(client, "decide_approval", { id: approval.id, decision: "approve" });
  assert.equal(out.status, "not_done");
  assert.match(out.result, /card was declined.*nothing was charged/);
  const plans = await ok(client, "get_plans_and_billing");
  assert.equal(plans.current.id, "starter", "nothing half-done");
  assert.equal(plans.charges.length, 1, "only the first month");
  await client.close();
});

test("another workspace's approval cannot be decided", async () => {
  const owner = await subscribed(worker, "owner@example.com");
  const approval = await ok(owner, "upgrade_plan", { plan: "growth" });
  const intruder = await connect(worker, { sub: "intruder@example.com", app: true });
  const r = await intruder.callTool({ name: "decide_approval", arguments: { id: approval.id, decision: "approve" } });
  assert.equal(r.isError, true);
  assert.match(r.content[0].text, /no approval/);
  const still = await ok(owner, "list_pending_approvals");
  assert.equal(still.approvals[0].id, approval.id);
  assert.equal(still.approvals[0].status, "pending");
  assert.equal((await ok(owner, "get_plans_and_billing")).current.id, "starter");
  await owner.close();
  await intruder.close();
});

test("the Durable Object's alarm expires an undecided approval", async () => {
  const w = await startWorker({ vars: { APPROVAL_TTL_SECONDS: "2" } });
  try {
    const client = await subscribed(w, "expiry@example.com");
    const approval = await ok(client, "upgrade_plan", { plan: "growth" });
    assert.ok(approval.expiresAt - Date.now() <= 2000);
    // Nothing is called in between: only the alarm can expire it.
    const deadline = Date.now() + 15_000;
    let fired;
    while (!fired && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 200));
      fired = w.alarmsThatRan("expire_approval")[0];
    }
    assert.ok(fired, "the alarm ran expire_approval");
    // Nothing else is scheduled but the sandbox subscription's renewal, a month on.
    assert.ok(fired.next > Date.now() + 29 * 86_400_000, `next alarm ${fired.next}`);
    const out = await ok(client, "decide_approval", { id: approval.id, decision: "approve" });
    assert.equal(out.status, "not_done");
    assert.match(out.result, /^Expired/);
    assert.equal((await ok(client, "list_pending_approvals")).total, 0);
    assert.equal((await ok(client, "get_plans_and_billing")).current.id, "starter");
    await client.close();
  } finally {
    await w.stop();
  }
});

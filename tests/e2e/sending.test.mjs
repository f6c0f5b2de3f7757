// The sending setup in the real Worker with the official MCP client, on the sandbox platform:
// sizing, the questions (answered only for their card, asked again when they changed), both
// sending sources, the order approval, then weeks of setup and warm-up run in seconds by
// restarting the same Worker state with an accelerated sandbox clock (SANDBOX_SENDING.timeScale).
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startWorker, connect } from "./harness.mjs";
import { subscribed, ok } from "./billing-helpers.mjs";

const dir = mkdtempSync(join(tmpdir(), "vibesell-sending-"));
let worker;
const OFFER = {
  product: "Ledgerly",
  description: "Close automation for finance teams",
  value_proposition: "Cuts month-end close from 10 days to 3",
  website: "https://www.ledgerly.io",
  postal_address: "1 Main St, Springfield",
};

before(async () => {
  // Real time first: the questions show dates, which must not move while the user answers.
  worker = await startWorker({ persist: dir });
});
after(async () => {
  await worker?.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** Calls a question tool again with the user's answer to the card it showed. */
async function answer(client, choice, text) {
  assert.equal(choice.kind, "choice", JSON.stringify(choice));
  const args = { ...choice.arguments, answers: [...choice.answers, { card: choice.card, answer: text }] };
  return ok(client, choice.tool, args);
}

const clients = {};

test("a question counts its answer only for its card, and is asked again when it changed", async () => {
  const client = await subscribed(worker, "brand@example.com", "growth");
  clients.brand = client;
  await ok(client, "save_offer", OFFER);
  const refused = await client.callTool({ name: "choose_sending_source", arguments: {} });
  assert.equal(refused.isError, true);
  assert.match(refused.content[0].text, /size_sending_capacity/);

  const sizing = await ok(client, "size_sending_capacity", { volume: 45, unit: "new_leads_per_day", steps: 4 });
  assert.deepEqual([sizing.mailboxes, sizing.domains, sizing.emailsPerDay, sizing.withinPlan], [6, 2, 180, true]);
  await ok(client, "confirm_sizing");
  const q = await ok(client, "choose_sending_source");
  assert.equal(q.kind, "choice");
  assert.match(q.card, /^[0-9a-f]{16}$/);
  assert.deepEqual(q.choices.map((c) => c.id), ["already_warmed", "own_names"]);
  assert.match(q.choices[1].description, /2 business days/);
  // The model is told to put it to the user and never pick.
  const raw = await client.callTool({ name: "choose_sending_source", arguments: {} });
  assert.match(raw.content[0].text, /never pick for them/);

  // The sizing changes: the old answer is for a question that no longer exists.
  await ok(client, "size_sending_capacity", { volume: 60, unit: "new_leads_per_day", steps: 4 });
  await ok(client, "confirm_sizing");
  const stale = await client.callTool({
    name: "choose_sending_source",
    arguments: { answers: [{ card: q.card, answer: "own_names" }] },
  });
  assert.equal(stale.isError, false);
  assert.equal(stale.structuredContent.kind, "choice");
  assert.notEqual(stale.structuredContent.card, q.card);
  assert.match(stale.content[0].text, /asked again/);
  await ok(client, "size_sending_capacity", { volume: 45, unit: "new_leads_per_day", steps: 4 });
  await ok(client, "confirm_sizing");
  const settled = await answer(client, await ok(client, "choose_sending_source"), "own_names");
  assert.equal(settled.kind, "sending_choice");
  assert.equal(settled.source, "own_names");
  assert.equal(settled.next.tool, "propose_domains");
});

test("own-brand domains and addresses are proposed, then ordered only once the user approves", async () => {
  const client = clients.brand;
  const d = await ok(client, "propose_domains");
  assert.equal(d.kind, "choice");
  for (const c of d.choices) {
    for (const name of c.label.split(" + ")) {
      assert.notEqual(name, "ledgerly.io", "never the primary domain");
      assert.match(name, /^[a-z]+\.(com|org)$/);
    }
  }
  const domains = await answer(client, d, "set_1");
  assert.equal(domains.kind, "sending_choice");
  assert.equal(domains.domains.length, 2);
  const e = await ok(client, "propose_email", { sender_name: "Anna Berg" });
  const step = await answer(client, e, "names");
  assert.equal(step.kind, "email_step");
  assert.equal(step.addresses.length, 6);
  assert.equal(step.addresses[0].address, `anna@${domains.domains[0].name}`);

  const approval = await ok(client, "order_sending_setup");
  assert.equal(approval.kind, "approval");
  assert.equal(approval.status, "pending");
  assert.equal(approval.irreversible, true);
  assert.equal(approval.decideHere, true);
  assert.ok(approval.impact.some((l) => /not refundable/.test(l)));
  assert.ok(approval.impact.some((l) => /Charged now/.test(l)));
  const total = domains.domains.reduce((s, x) => s + x.price.amount, 0) + 6 * 300;
  assert.equal(approval.cost.amount, total, "the full price: a year of domains and a month of mailboxes");
  const notYet = await client.callTool({ name: "get_sending_setup", arguments: {} });
  assert.equal(notYet.isError, true, "nothing ordered before the user approves");

  const decided = await ok(client, "decide_approval", { id: approval.id, decision: "approve" });
  assert.equal(decided.status, "done", decided.result);
  const again = await ok(client, "decide_approval", { id: approval.id, decision: "approve" });
  assert.equal(again.status, "done");
  const setup = await ok(client, "get_sending_setup");
  assert.equal(setup.status, "setting_up");
  assert.equal(setup.mailboxes.length, 6);
  assert.equal(setup.charged.amount, total);
  clients.brandSetup = setup;
  const warm = await ok(client, "start_warmup");
  assert.equal(warm.kind, "warmup");
  assert.equal(warm.status, "scheduled");
});

test("already-warmed addresses: the stock, a pick in the user's own words, an order", async () => {
  const client = await subscribed(worker, "warmed@example.com", "growth");
  clients.warmed = client;
  await ok(client, "save_offer", OFFER);
  const shelf = await ok(client, "list_warmed_domains");
  assert.equal(shelf.kind, "warmed_shelf");
  assert.ok(shelf.domains.length >= 2);
  await ok(client, "size_sending_capacity", { volume: 90, unit: "emails_per_day", steps: 3 });
  await ok(client, "confirm_sizing");
  const source = await answer(client, await ok(client, "choose_sending_source"), "I want to start sooner");
  assert.equal(source.source, "already_warmed");
  const d = await ok(client, "propose_warmed_domains");
  const picked = await answer(client, d, `${shelf.domains[1].name} please`);
  assert.equal(picked.kind, "sending_choice", JSON.stringify(picked));
  assert.deepEqual(picked.domains.map((x) => x.name), [shelf.domains[1].name]);
  const step = await answer(client, await ok(client, "propose_email", { sender_name: "Sam Lee" }), "short");
  assert.deepEqual(step.addresses.map((a) => a.address.split("@")[0]), ["sam", "saml", "sam.l"]);
  const approval = await ok(client, "order_sending_setup");
  assert.ok(approval.impact.some((l) => /no warm-up needed/.test(l)));
  assert.equal((await ok(client, "decide_approval", { id: approval.id, decision: "approve" })).status, "done");
});

test("weeks later (an accelerated sandbox clock): set up after 2 business days, warmed, ready", async () => {
  for (const c of Object.values(clients)) if (c.close) await c.close();
  await worker.stop();
  // The same workspaces, now with a simulated day passing in well under a second.
  worker = await startWorker({ persist: dir, vars: { SANDBOX_SENDING: JSON.stringify({ timeScale: 400000 }) } });
  const brand = await connect(worker, { sub: "brand@example.com", app: true });
  const warmed = await connect(worker, { sub: "warmed@example.com", app: true });

  const until = async (client, done) => {
    const deadline = Date.now() + 30_000;
    for (;;) {
      const v = await ok(client, "get_sending_setup");
      if (done(v) || Date.now() > deadline) return v;
      await new Promise((r) => setTimeout(r, 200));
    }
  };
  // Already-warmed addresses: ready an hour (of simulated time) after the order.
  const ready = await until(warmed, (v) => v.status === "ready");
  assert.equal(ready.status, "ready", JSON.stringify(ready));
  assert.equal(ready.source, "already_warmed");

  const seen = new Set();
  const setup = await until(brand, (v) => (seen.add(v.status), v.status === "ready"));
  assert.equal(setup.status, "ready", JSON.stringify(setup));
  assert.ok(seen.has("warming") || seen.has("ready"));
  // Set up two business days after the order, weekends not counted.
  const ordered = new Date(setup.orderedAt);
  const expected = new Date(Date.UTC(ordered.getUTCFullYear(), ordered.getUTCMonth(), ordered.getUTCDate()));
  for (let n = 0; n < 2; ) {
    expected.setUTCDate(expected.getUTCDate() + 1);
    if (expected.getUTCDay() !== 0 && expected.getUTCDay() !== 6) n++;
  }
  assert.equal(setup.timeline.find((s) => s.step === "setup").date, expected.toISOString().slice(0, 10));
  for (const m of setup.mailboxes) {
    assert.equal(m.status, "ready");
    assert.ok(m.health >= 80, JSON.stringify(m));
  }
  for (const d of setup.domains) assert.deepEqual(d.dns, { spf: "pass", dkim: "pass", dmarc: "pass", mx: "pass" });
  const warm = await ok(brand, "start_warmup");
  assert.equal(warm.status, "done");

  const ctx = await ok(brand, "get_workspace_context");
  const status = Object.fromEntries(ctx.journey.map((s) => [s.step, s.status]));
  for (const s of ["sizing", "sending_source", "domains", "setup", "warmup"]) assert.equal(status[s], "done", s);
  assert.deepEqual([ctx.sending.mailboxes, ctx.sending.mailboxesReady], [6, 6]);
  await brand.close();
  await warmed.close();
});

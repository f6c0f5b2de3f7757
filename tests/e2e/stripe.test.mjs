// Live billing against a local fake of Stripe (tests/e2e/fake-stripe.mjs): Checkout and Billing
// Portal sessions as Stripe documents them, the signed webhook (good, bad, stale, replayed, out
// of order), and upgrade_plan executed through Stripe with one idempotency key across retries.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { startWorker, connect, postChunked } from "./harness.mjs";
import { workspaceFor } from "../../scripts/lib/devtoken.mjs";
import { startFakeStripe, signStripe } from "./fake-stripe.mjs";
import { ok } from "./billing-helpers.mjs";

const WHSEC = "whsec_e2e_secret";
const PRICES = { starter: "price_starter_e2e", growth: "price_growth_e2e", scale: "price_scale_e2e" };
let stripe;
let worker;

before(async () => {
  stripe = await startFakeStripe({ secretKey: "sk_test_e2e", prices: PRICES });
  const catalogue = JSON.parse(readFileSync(new URL("../../config/plans.json", import.meta.url)));
  for (const plan of catalogue.plans) if (PRICES[plan.id]) plan.stripePrice = PRICES[plan.id];
  worker = await startWorker({
    vars: {
      PROVIDER_MODE: "live",
      STRIPE_API_BASE: stripe.url,
      STRIPE_SECRET_KEY: "sk_test_e2e",
      STRIPE_WEBHOOK_SECRET: WHSEC,
      PLANS_JSON: JSON.stringify(catalogue),
    },
  });
});
after(async () => {
  await worker?.stop();
  await stripe?.close();
});

const webhook = (payload, signature) =>
  fetch(`${worker.origin}/v1/stripe/webhook`, {
    method: "POST",
    headers: { "content-type": "application/json", ...(signature === undefined ? {} : { "stripe-signature": signature }) },
    body: payload,
  });

async function deliver(event, { secret = WHSEC, t } = {}) {
  const payload = JSON.stringify(event);
  const r = await webhook(payload, signStripe(secret, payload, t));
  return { status: r.status, body: await r.json() };
}

let seq = 0;
const nowS = () => Math.floor(Date.now() / 1000);
const evt = (type, object, created = nowS()) => ({ id: `evt_e2e_${++seq}`, object: "event", type, created, livemode: false, data: { object } });
const completed = (ws, { customer, subscription, plan }) =>
  evt("checkout.session.completed", { id: `cs_test_${seq}`, object: "checkout.session", mode: "subscription", status: "complete", payment_status: "paid", client_reference_id: ws, customer, subscription, metadata: { workspace: ws, plan } });
const subscriptionEvent = (type, ws, { id, customer, item, price, status = "active" }, created) =>
  evt(type, { id, object: "subscription", customer, status, cancel_at_period_end: false, metadata: { workspace: ws },
    items: { object: "list", data: [{ id: item, price: { id: price }, current_period_start: nowS(), current_period_end: nowS() + 30 * 86400 }] } }, created);

/** Opens `sub`'s workspace and makes it a Starter subscriber through signed webhooks. */
async function subscriber(sub, subscriptionId) {
  const client = await connect(worker, { sub, app: true });
  await ok(client, "get_workspace_context");
  const ws = workspaceFor(sub);
  const customer = `cus_${subscriptionId}`;
  const item = `si_${subscriptionId}`;
  stripe.subscriptions.set(subscriptionId, { customer, item, price: PRICES.starter, workspace: ws, start: nowS(), end: nowS() + 30 * 86400 });
  assert.equal((await deliver(completed(ws, { customer, subscription: subscriptionId, plan: "starter" }))).status, 200);
  const created = await deliver(subscriptionEvent("customer.subscription.created", ws, { id: subscriptionId, customer, item, price: PRICES.starter }));
  assert.deepEqual(created.body, { received: true, outcome: "applied" });
  return { client, ws, customer };
}

test("checkout and portal sessions are created the way Stripe documents", async () => {
  const client = await connect(worker, { sub: "live-checkout@example.com" });
  const noPortal = await client.callTool({ name: "open_billing_portal", arguments: {} });
  assert.equal(noPortal.isError, true);
  const checkout = await ok(client, "start_checkout", { plan: "growth" });
  assert.equal(checkout.simulated, false);
  assert.match(checkout.url, /^https:\/\/checkout\.stripe\.test\/c\/pay\/cs_test_fake\d+$/);
  const sent = stripe.requests.findLast((r) => r.path === "/v1/checkout/sessions");
  assert.equal(sent.headers["stripe-version"], "2025-03-31.basil");
  assert.ok(sent.headers["idempotency-key"]);
  assert.equal(sent.form["line_items[0][price]"], PRICES.growth);
  assert.equal(sent.form.client_reference_id, workspaceFor("live-checkout@example.com"));
  assert.equal(sent.form["metadata[plan]"], "growth");
  assert.equal(sent.form.success_url, `${worker.origin}/billing/return?checkout=success&session_id={CHECKOUT_SESSION_ID}`);
  assert.ok((await ok(client, "get_plans_and_billing")).simulated === false);

  // One payable page at a time: the same plan gets the same page; another plan's page is made
  // only once Stripe has expired the earlier one; a page paid meanwhile stops a second one.
  const creations = () => stripe.requests.filter((r) => r.method === "POST" && r.path === "/v1/checkout/sessions").length;
  const made = creations();
  assert.equal((await ok(client, "start_checkout", { plan: "growth" })).sessionId, checkout.sessionId);
  assert.equal(creations(), made, "no second page for the same plan");
  const starter = await ok(client, "start_checkout", { plan: "starter" });
  assert.notEqual(starter.sessionId, checkout.sessionId);
  assert.equal(stripe.sessions.get(checkout.sessionId).status, "expired");
  assert.ok(stripe.requests.some((r) => r.path === `/v1/checkout/sessions/${checkout.sessionId}/expire`));
  stripe.sessions.get(starter.sessionId).status = "complete";
  const refused = await client.callTool({ name: "start_checkout", arguments: { plan: "growth" } });
  assert.equal(refused.isError, true);
  assert.match(refused.content[0].text, /has just been paid/);
  assert.equal(creations(), made + 1, "no page made after the paid one");
  // A page Stripe no longer knows (the key was changed since) holds nothing back.
  stripe.sessions.delete(starter.sessionId);
  const fresh = await ok(client, "start_checkout", { plan: "growth" });
  assert.equal(creations(), made + 2);
  assert.notEqual(fresh.sessionId, starter.sessionId);
  await client.close();
});

test("a page closed for another plan is never handed out again, even when the new one could not be made", async () => {
  const client = await connect(worker, { sub: "live-checkout-closed@example.com" });
  const growth = await ok(client, "start_checkout", { plan: "growth" });
  stripe.failNext.set("/v1/checkout/sessions", 10);
  const failed = await client.callTool({ name: "start_checkout", arguments: { plan: "starter" } });
  assert.equal(failed.isError, true, JSON.stringify(failed));
  assert.equal(stripe.sessions.get(growth.sessionId).status, "expired", "closed before the new page was asked for");
  stripe.failNext.delete("/v1/checkout/sessions");
  const again = await ok(client, "start_checkout", { plan: "growth" });
  assert.notEqual(again.sessionId, growth.sessionId, "the closed page is not handed out");
  assert.equal(stripe.sessions.get(again.sessionId).status, "open");
  await client.close();
});

test("the webhook verifies signatures, applies each event once and in order", async () => {
  const sub = "live-webhook@example.com";
  const client = await connect(worker, { sub });
  await ok(client, "get_workspace_context");
  const ws = workspaceFor(sub);
  const event = completed(ws, { customer: "cus_w1", subscription: "sub_w1", plan: "starter" });
  const payload = JSON.stringify(event);

  const bad = await webhook(payload, signStripe("whsec_wrong", payload));
  assert.equal(bad.status, 400);
  assert.deepEqual(await bad.json(), { error: "invalid_signature" });
  const stale = await webhook(payload, signStripe(WHSEC, payload, nowS() - 301));
  assert.equal(stale.status, 400, "older than 300 s");
  const unsigned = await webhook(payload, undefined);
  assert.equal(unsigned.status, 400);
  const tampered = await webhook(payload.replace("starter", "scale"), signStripe(WHSEC, payload));
  assert.equal(tampered.status, 400, "the exact bytes are signed");
  assert.equal((await ok(client, "get_plans_and_billing")).current.id, "free", "nothing applied");

  assert.deepEqual((await deliver(event)).body, { received: true, outcome: "applied" });
  assert.equal((await ok(client, "get_plans_and_billing")).current.id, "starter");
  const replay = await deliver(event);
  assert.equal(replay.status, 200, "a replay is acknowledged…");
  assert.deepEqual(replay.body, { received: true, outcome: "duplicate" }, "…and not applied again");

  const t = nowS();
  const growth = subscriptionEvent("customer.subscription.updated", ws, { id: "sub_w1", customer: "cus_w1", item: "si_w1", price: PRICES.growth }, t);
  assert.equal((await deliver(growth)).body.outcome, "applied");
  assert.equal((await ok(client, "get_plans_and_billing")).current.id, "growth");
  const older = subscriptionEvent("customer.subscription.updated", ws, { id: "sub_w1", customer: "cus_w1", item: "si_w1", price: PRICES.starter }, t - 60);
  assert.equal((await deliver(older)).body.outcome, "stale", "an older event never undoes a newer one");
  assert.equal((await deliver(growth)).body.outcome, "duplicate");
  assert.equal((await ok(client, "get_plans_and_billing")).current.id, "growth");

  const invoice = evt("invoice.paid", { id: "in_w1", object: "invoice", amount_paid: 14900, currency: "usd", created: t, parent: { subscription_details: { metadata: { workspace: ws } } }, lines: { data: [{ description: "1 × Growth (at $149.00 / month)" }] } });
  assert.equal((await deliver(invoice)).body.outcome, "applied");
  assert.deepEqual((await ok(client, "get_plans_and_billing")).charges.map((c) => c.amount.amount), [14900]);

  const ended = subscriptionEvent("customer.subscription.deleted", ws, { id: "sub_w1", customer: "cus_w1", item: "si_w1", price: PRICES.growth, status: "canceled" });
  assert.equal((await deliver(ended)).body.outcome, "applied");
  const plans = await ok(client, "get_plans_and_billing");
  assert.equal(plans.current.id, "free");
  assert.equal(plans.current.status, "canceled");

  const other = await deliver(evt("charge.refunded", { id: "ch_1" }));
  assert.deepEqual(other.body, { received: true, ignored: true });
  const nobody = await deliver(completed(workspaceFor("never-opened@example.com"), { customer: "cus_x", subscription: "sub_x", plan: "starter" }));
  assert.deepEqual(nobody.body, { received: true, outcome: "unknown_workspace" });
  await client.close();
});

test("upgrade_plan goes through Stripe once, with one idempotency key across retries", async () => {
  const { client } = await subscriber("live-upgrade@example.com", "sub_up1");
  const approval = await ok(client, "upgrade_plan", { plan: "growth" });
  assert.ok(approval.impact.some((l) => /about \$100/.test(l)), approval.impact.join("\n"));
  stripe.failNext.set("/v1/subscriptions/sub_up1", 1);
  const done = await ok(client, "decide_approval", { id: approval.id, decision: "approve" });
  assert.equal(done.status, "done", done.result);
  assert.match(done.result, /Charged \$50 now/);
  const attempts = stripe.requests.filter((r) => r.method === "POST" && r.path === "/v1/subscriptions/sub_up1");
  assert.equal(attempts.length, 2, "a 500, then the retry");
  assert.equal(new Set(attempts.map((r) => r.headers["idempotency-key"])).size, 1, "the same key");
  assert.match(attempts[0].headers["idempotency-key"], new RegExp(approval.id));
  assert.equal(attempts[0].form["items[0][id]"], "si_sub_up1");
  assert.equal(attempts[0].form["items[0][price]"], PRICES.growth);
  assert.equal(stripe.charges.filter((c) => c.subscription === "sub_up1").length, 1, "charged once");
  const plans = await ok(client, "get_plans_and_billing");
  assert.equal(plans.current.id, "growth");
  assert.equal(plans.charges[0].amount.amount, 5000);

  const again = await client.callTool({ name: "decide_approval", arguments: { id: approval.id, decision: "approve" } });
  assert.match(again.content[0].text, /already decided/);
  assert.equal(stripe.requests.filter((r) => r.path === "/v1/subscriptions/sub_up1").length, 2, "no further call");

  const portal = await ok(client, "open_billing_portal");
  assert.match(portal.url, /^https:\/\/billing\.stripe\.test\/p\/session\/bps_fake\d+$/);
  const sent = stripe.requests.findLast((r) => r.path === "/v1/billing_portal/sessions");
  assert.equal(sent.form.customer, "cus_sub_up1");
  assert.equal(sent.form.return_url, `${worker.origin}/billing/return?portal=done`);
  await client.close();
});

test("a card Stripe declines leaves the plan as it was, not_done", async () => {
  const { client } = await subscriber("live-decline@example.com", "sub_dec1");
  stripe.declining.add("sub_dec1");
  const approval = await ok(client, "upgrade_plan", { plan: "scale" });
  const out = await ok(client, "decide_approval", { id: approval.id, decision: "approve" });
  assert.equal(out.status, "not_done");
  // Stripe's own words, attributed as such.
  assert.match(out.result, /^Stripe said: "Your card was declined\." The plan was not changed and nothing was charged\./);
  assert.equal(stripe.charges.filter((c) => c.subscription === "sub_dec1").length, 0);
  assert.equal((await ok(client, "get_plans_and_billing")).current.id, "starter");
  await client.close();
});

test("a webhook body over 1 MiB is a 413, even sent without its length, and is not applied", async () => {
  // Signed correctly, so only its size refuses it. The Worker learns the size by reading the
  // body (edge::fetch) and hands the route no body at all.
  const payload = JSON.stringify({ id: "evt_big", type: "invoice.paid", padding: "x".repeat(1024 * 1024) });
  const r = await postChunked(worker, "/v1/stripe/webhook", new TextEncoder().encode(payload), {
    "content-type": "application/json",
    "stripe-signature": signStripe(WHSEC, payload),
  });
  assert.equal(r.status, 413, r.text);
  assert.deepEqual(r.json, { error: "payload_too_large" });
});

// Plans and billing end to end in sandbox mode: the plans, a checkout paid on the sandbox's own
// page, the plan updated by the webhook-equivalent event, the billing portal, and upgrade_plan
// approved with one decide_approval call. Plans come from configuration (PLANS_JSON).
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { startWorker, connect } from "./harness.mjs";
import { payPage, ok, CARD_OK, CARD_DECLINED } from "./billing-helpers.mjs";

let worker;
before(async () => {
  worker = await startWorker();
});
after(async () => {
  await worker?.stop();
});

test("the whole billing loop works locally", async () => {
  const client = await connect(worker, { sub: "billing@example.com", app: true });
  const plans = await ok(client, "get_plans_and_billing");
  assert.equal(plans.kind, "plans");
  assert.equal(plans.simulated, true);
  assert.deepEqual(plans.plans.map((p) => p.id), ["free", "starter", "growth", "scale"]);
  assert.deepEqual(plans.plans[1].price, { amount: 4900, currency: "usd" });
  assert.deepEqual(plans.plans[1].limits, { leadsPerMonth: 1000, mailboxes: 3, activeCampaigns: 1 });
  assert.equal(plans.current.id, "free");
  assert.equal(plans.current.paying, false);
  assert.equal(plans.credits.leads, 50);
  assert.match(plans.usage.period, /^\d{4}-\d{2}$/);

  const checkout = await ok(client, "start_checkout", { plan: "starter" });
  assert.equal(checkout.kind, "checkout");
  assert.equal(checkout.plan, "starter");
  assert.ok(checkout.url.startsWith(`${worker.origin}/sandbox/checkout/ws_`), checkout.url);

  const page = await fetch(checkout.url);
  assert.equal(page.status, 200);
  assert.match(page.headers.get("content-security-policy"), /default-src 'none'/);
  assert.equal(page.headers.get("x-frame-options"), "DENY");
  const html = await page.text();
  assert.match(html, /Subscribe to VibeSell Starter/);
  assert.match(html, /\$49/);
  assert.match(html, /no real money/);

  const crossSite = await payPage(worker, checkout.url, CARD_OK, { origin: "https://evil.example" });
  assert.equal(crossSite.status, 403);
  const declined = await payPage(worker, checkout.url, CARD_DECLINED);
  assert.equal(declined.status, 402);
  assert.match(await declined.text(), /Your card was declined/);
  assert.equal((await ok(client, "get_plans_and_billing")).current.id, "free", "a declined card changes nothing");

  const paid = await payPage(worker, checkout.url, CARD_OK);
  assert.equal(paid.status, 200);
  assert.match(await paid.text(), /Payment received/);
  const twice = await payPage(worker, checkout.url, CARD_OK);
  assert.equal(twice.status, 409, "a checkout is paid once");

  const after = await ok(client, "get_plans_and_billing");
  assert.equal(after.current.id, "starter");
  assert.equal(after.current.status, "active");
  assert.equal(after.current.paying, true);
  assert.equal(after.credits.leads, 1000);
  assert.equal(after.charges.length, 1);
  assert.deepEqual(after.charges[0].amount, { amount: 4900, currency: "usd" });
  const again = await client.callTool({ name: "start_checkout", arguments: { plan: "growth" } });
  assert.equal(again.isError, true);
  assert.match(again.content[0].text, /upgrade_plan/);

  // upgrade_plan, approved with one decide_approval call.
  const approval = await ok(client, "upgrade_plan", { plan: "growth" });
  const done = await ok(client, "decide_approval", { id: approval.id, decision: "approve" });
  assert.equal(done.status, "done");
  assert.equal((await ok(client, "get_plans_and_billing")).current.id, "growth");

  const portal = await ok(client, "open_billing_portal");
  assert.equal(portal.kind, "portal");
  const portalPage = await fetch(portal.url);
  assert.equal(portalPage.status, 200);
  const portalHtml = await portalPage.text();
  assert.match(portalHtml, /Plan: <strong>Growth<\/strong>/);
  assert.match(portalHtml, /•••• 4242/);
  assert.match(portalHtml, /Upgrade to Growth \(prorated\)/);
  // The lower paid plans, as the texts say the portal offers them; no higher one (upgrade_plan's).
  assert.match(portalHtml, /<input type="hidden" name="plan" value="starter"><button type="submit">Switch to Starter \(\$49\/month\) now<\/button>/);
  assert.doesNotMatch(portalHtml, /Switch to (Growth|Scale|Free)/);
  const lowered = await fetch(portal.url, {
    method: "POST",
    headers: { origin: worker.origin, "content-type": "application/x-www-form-urlencoded" },
    body: "plan=starter",
  });
  assert.equal(lowered.status, 200);
  assert.match(await lowered.text(), /Your plan is now Starter, from today\./);
  const starter = await ok(client, "get_plans_and_billing");
  assert.deepEqual([starter.current.id, starter.current.status], ["starter", "active"]);
  const cancel = await fetch(portal.url, { method: "POST", headers: { origin: worker.origin } });
  assert.equal(cancel.status, 200);
  assert.match(await cancel.text(), /back on the free plan/);
  const canceled = await ok(client, "get_plans_and_billing");
  assert.equal(canceled.current.id, "free");
  assert.equal(canceled.current.status, "canceled");
  await client.close();
});

test("a checkout page closed unpaid by a page for another plan says it was replaced, not that it expired or is paid", async () => {
  const client = await connect(worker, { sub: "replaced-checkout@example.com", app: true });
  const starter = await ok(client, "start_checkout", { plan: "starter" });
  // The same plan again: the same page, not a second one to pay on.
  const same = await ok(client, "start_checkout", { plan: "starter" });
  assert.equal(same.url, starter.url);
  // Another plan closes the first page before the new one is made (two open pages could both
  // be paid: two subscriptions).
  const growth = await ok(client, "start_checkout", { plan: "growth" });
  assert.notEqual(growth.url, starter.url);

  // Opened again, the closed page says why it is closed and offers no form to pay on.
  const page = await fetch(starter.url);
  assert.equal(page.status, 200);
  const html = await page.text();
  assert.match(html, /Subscribe to VibeSell Starter/);
  assert.match(html, /<p class="error">A newer checkout page replaced this one: pay on the newest page, or ask for a new one\.<\/p>/);
  assert.doesNotMatch(html, /is paid|already paid|expired/);
  assert.doesNotMatch(html, /<form/);
  // Paying it anyway is refused with the same reason, not "already paid", and charges nothing.
  const paid = await payPage(worker, starter.url, CARD_OK);
  assert.equal(paid.status, 409);
  const closed = await paid.text();
  assert.match(closed, /<h1>Checkout closed<\/h1><p>A newer checkout page replaced this one: pay on the newest page, or ask for a new one\.<\/p>/);
  assert.doesNotMatch(closed, /already paid|expired/);
  let plans = await ok(client, "get_plans_and_billing");
  assert.deepEqual([plans.current.id, plans.charges.length], ["free", 0]);

  // The page that replaced it is the one that pays.
  assert.match(await (await fetch(growth.url)).text(), /<form method="post">/);
  assert.equal((await payPage(worker, growth.url, CARD_OK)).status, 200);
  plans = await ok(client, "get_plans_and_billing");
  assert.deepEqual([plans.current.id, plans.charges.length], ["growth", 1]);
  await client.close();
});

test("sandbox pages refuse what is not theirs", async () => {
  const fake = `${worker.origin}/sandbox/checkout/ws_000000000000000000000000/cs_sandbox_${"0".repeat(32)}`;
  assert.equal((await fetch(fake)).status, 404);
  assert.equal((await fetch(`${worker.origin}/sandbox/checkout/../../x`)).status, 404);
  assert.equal((await fetch(fake, { method: "PUT" })).status, 405);
  const back = await fetch(`${worker.origin}/billing/return?checkout=success&session_id=cs_1`);
  assert.equal(back.status, 200);
  assert.match(await back.text(), /Payment received/);
});

test("plans and limits are configuration", async () => {
  const catalogue = {
    currency: "eur",
    defaultPlan: "trial",
    plans: [
      { id: "trial", name: "Trial", description: "Try it.", priceMonthly: 0, limits: { leadsPerMonth: 10, mailboxes: 1, activeCampaigns: 1 } },
      { id: "team", name: "Team", description: "For teams.", priceMonthly: 9900, limits: { leadsPerMonth: 3000, mailboxes: 6, activeCampaigns: 3 } },
    ],
  };
  const w = await startWorker({ vars: { PLANS_JSON: JSON.stringify(catalogue) } });
  try {
    const client = await connect(w, { sub: "config@example.com" });
    const plans = await ok(client, "get_plans_and_billing");
    assert.deepEqual(plans.plans.map((p) => [p.id, p.price.amount, p.price.currency]), [["trial", 0, "eur"], ["team", 9900, "eur"]]);
    assert.equal(plans.current.id, "trial");
    assert.equal(plans.credits.leads, 10);
    const checkout = await ok(client, "start_checkout", { plan: "team" });
    assert.match((await (await fetch(checkout.url)).text()), /€99/);
    await client.close();
  } finally {
    await w.stop();
  }
});

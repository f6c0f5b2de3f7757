// Faults and crashes (issue 46, item 6): every approval executor and the sending sync, against
// the real Worker in workerd, with each provider fake (Stripe, Apollo, Instantly) behind a fault
// proxy (fault-proxy.mjs) that fails a chosen call: a 5xx, a 429 with Retry-After, an answer that
// is not JSON though the provider acted, an answer lost after the provider acted (a partial
// success), and the runtime killed between the provider's answer and the Worker's write, then
// started again on the same state for the watchdog to finish. Afterwards each test checks that
// the action ran once at the provider (per idempotency key where the provider has them, by the
// fake's own record where it does not), that nothing was charged twice, that the approval ended
// in a final state with its reason, and that the workspace's counts agree with the provider's.
// The watchdog waits a second here (`WATCHDOG_SECONDS`) instead of a minute.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startWorker, connect } from "./harness.mjs";
import { workspaceFor } from "../../scripts/lib/devtoken.mjs";
import { startFakeStripe, signStripe } from "./fake-stripe.mjs";
import { fakeApollo } from "./fake-apollo.mjs";
import { fakeInstantly } from "./fake-instantly.mjs";
import { faultProxy } from "./fault-proxy.mjs";

const WHSEC = "whsec_faults";
const STRIPE_KEY = "sk_test_faults";
const APOLLO_KEY = "apollo-faults-key";
const INSTANTLY_KEY = "instantly-faults-key";
const PRICES = { starter: "price_starter_f", growth: "price_growth_f", scale: "price_scale_f" };

let dir;
let worker;
let stripe, apollo, instantly;
let stripeProxy, apolloProxy, instantlyProxy;

before(async () => {
  stripe = await startFakeStripe({ secretKey: STRIPE_KEY, prices: PRICES });
  apollo = fakeApollo(APOLLO_KEY);
  instantly = fakeInstantly(INSTANTLY_KEY);
  await new Promise((r) => apollo.server.listen(0, "127.0.0.1", r));
  await new Promise((r) => instantly.server.listen(0, "127.0.0.1", r));
  stripeProxy = await faultProxy(stripe.url);
  apolloProxy = await faultProxy(`http://127.0.0.1:${apollo.server.address().port}`);
  instantlyProxy = await faultProxy(`http://127.0.0.1:${instantly.server.address().port}`);
  // The free plan sends here (live providers bill through Stripe, not the sandbox's page), with
  // one active campaign; the paid plans carry their Stripe prices for upgrades.
  const catalogue = JSON.parse(readFileSync(new URL("../../config/plans.json", import.meta.url)));
  for (const plan of catalogue.plans) {
    if (PRICES[plan.id]) plan.stripePrice = PRICES[plan.id];
    if (plan.id === "free") plan.limits = { leadsPerMonth: 1000, mailboxes: 10, activeCampaigns: 1 };
  }
  dir = mkdtempSync(join(tmpdir(), "vibesell-faults-"));
  worker = await startWorker({
    persist: dir,
    vars: {
      PROVIDER_MODE: "live",
      WATCHDOG_SECONDS: "1",
      PLANS_JSON: JSON.stringify(catalogue),
      STRIPE_API_BASE: stripeProxy.url,
      STRIPE_SECRET_KEY: STRIPE_KEY,
      STRIPE_WEBHOOK_SECRET: WHSEC,
      APOLLO_BASE_URL: `${apolloProxy.url}/api/v1`,
      APOLLO_API_KEY: APOLLO_KEY,
      INSTANTLY_BASE_URL: instantlyProxy.url,
      INSTANTLY_API_KEY: INSTANTLY_KEY,
    },
  });
});
after(async () => {
  await worker?.stop();
  for (const p of [stripeProxy, apolloProxy, instantlyProxy]) await p?.close();
  await stripe?.close();
  await new Promise((r) => apollo?.server.close(r));
  await new Promise((r) => instantly?.server.close(r));
  if (dir) rmSync(dir, { recursive: true, force: true });
});

async function ok(client, name, args = {}) {
  const r = await client.callTool({ name, arguments: args });
  assert.equal(r.isError, false, `${name}: ${r.content?.[0]?.text}`);
  return r.structuredContent;
}
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/**
 * Approval `id`'s final state, once nothing carries it out any more (the watchdog included), for
 * up to `ms`: deciding an approval already decided changes nothing and returns it.
 */
async function final(client, id, ms = 20_000) {
  const deadline = Date.now() + ms;
  while ((await ok(client, "list_pending_approvals")).approvals.some((a) => a.id === id)) {
    assert.ok(Date.now() < deadline, `${id} still open`);
    await sleep(200);
  }
  const r = await client.callTool({ name: "decide_approval", arguments: { id, decision: "approve" } });
  assert.equal(r.isError, false, r.content?.[0]?.text);
  assert.ok(["done", "not_done"].includes(r.structuredContent.status), JSON.stringify(r.structuredContent));
  assert.ok(r.structuredContent.result, "a final state says why");
  return r.structuredContent;
}

/**
 * Approves `id` as `sub` and kills the runtime once `held` (a proxy hold) has the provider's
 * answer, before the Worker can write it; then starts it again on the same state, and returns a
 * new client of `sub`'s workspace.
 */
async function approveAndCrash(client, sub, id, held) {
  const decision = client.callTool({ name: "decide_approval", arguments: { id, decision: "approve" } });
  decision.catch(() => {}); // the runtime dies under it
  await held.arrived;
  await worker.crash();
  held.release();
  await client.close().catch(() => {});
  await worker.restart();
  return connect(worker, { sub, app: true });
}

// ---- billing: upgrade_plan through Stripe ----------------------------------------------------

const nowS = () => Math.floor(Date.now() / 1000);
let evtSeq = 0;
async function deliver(type, object) {
  const payload = JSON.stringify({ id: `evt_f_${++evtSeq}`, object: "event", type, created: nowS(), livemode: false, data: { object } });
  const r = await fetch(`${worker.origin}/v1/stripe/webhook`, {
    method: "POST",
    headers: { "content-type": "application/json", "stripe-signature": signStripe(WHSEC, payload) },
    body: payload,
  });
  assert.equal(r.status, 200, await r.text());
}

/** `sub`'s workspace on Starter through Stripe's webhooks, with subscription `id` at the fake. */
async function starter(sub, id) {
  const client = await connect(worker, { sub, app: true });
  await ok(client, "get_workspace_context");
  const ws = workspaceFor(sub);
  const [customer, item] = [`cus_${id}`, `si_${id}`];
  stripe.subscriptions.set(id, { customer, item, price: PRICES.starter, workspace: ws, start: nowS(), end: nowS() + 30 * 86400 });
  await deliver("checkout.session.completed", {
    id: `cs_test_${id}`, object: "checkout.session", mode: "subscription", status: "complete", payment_status: "paid",
    client_reference_id: ws, customer, subscription: id, metadata: { workspace: ws, plan: "starter" },
  });
  await deliver("customer.subscription.created", {
    id, object: "subscription", customer, status: "active", cancel_at_period_end: false, metadata: { workspace: ws },
    items: { object: "list", data: [{ id: item, price: { id: PRICES.starter }, current_period_start: nowS(), current_period_end: nowS() + 30 * 86400 }] },
  });
  assert.equal((await ok(client, "get_plans_and_billing")).current.id, "starter");
  return { client, ws };
}

/**
 * What Stripe itself sends once an upgrade's invoice is paid, however the Worker's own call
 * ended: the charge is recorded from it when the answer was lost.
 */
async function invoicePaid(ws, charge) {
  const sub = stripe.subscriptions.get(charge.subscription);
  await deliver("invoice.paid", {
    id: charge.invoice, object: "invoice", amount_paid: charge.amount, currency: "usd", status: "paid", created: nowS(),
    parent: { subscription_details: { metadata: { workspace: ws } } }, customer: sub.customer, subscription: charge.subscription,
    lines: { data: [{ description: "Upgrade to Growth (prorated)" }] },
  });
}

/** After an upgrade: charged once at Stripe, on Growth here, that one charge recorded once. */
async function upgradedOnce(client, ws, subscription, approval, outcome) {
  assert.equal(outcome.status, "done", JSON.stringify(outcome));
  assert.match(outcome.result, /^Now on the Growth plan/);
  const charges = stripe.charges.filter((c) => c.subscription === subscription);
  assert.equal(charges.length, 1, "charged once at Stripe");
  const keys = Object.keys(stripeProxy.perKey("POST", `/v1/subscriptions/${subscription}`));
  assert.ok(keys.length >= 1 && keys.every((k) => k.startsWith(`vibesell-${approval.id}-subscription`)), keys.join());
  // Stripe tells of the invoice in any case (twice here, as it may): recorded once, whether or
  // not the Worker read it in the answer.
  await invoicePaid(ws, charges[0]);
  await invoicePaid(ws, charges[0]);
  const billing = await ok(client, "get_plans_and_billing");
  assert.equal(billing.current.id, "growth");
  assert.equal(billing.charges.filter((c) => c.amount.amount === charges[0].amount).length, 1, JSON.stringify(billing.charges));
}

const STRIPE_FAULTS = [
  ["a 500 on every try of the decision's run", (s) => stripeProxy.inject("POST", `/v1/subscriptions/${s}`, { status: 500 }, 3)],
  ["a 429 with Retry-After", (s) => stripeProxy.inject("POST", `/v1/subscriptions/${s}`, { status: 429, retryAfter: 1 })],
  // The Worker's own timeout (10 s for Stripe) ends the call; it tries again with the same key.
  ["no answer at all", (s) => stripeProxy.inject("POST", `/v1/subscriptions/${s}`, { hang: true })],
  ["an answer that is not JSON, the change made", (s) => stripeProxy.inject("POST", `/v1/subscriptions/${s}`, { malformed: true })],
  ["the answer lost, the change made", (s) => stripeProxy.inject("POST", `/v1/subscriptions/${s}`, { lost: true })],
  [
    "the answer lost on every try, then the watchdog's read failing once",
    (s) => {
      stripeProxy.inject("POST", `/v1/subscriptions/${s}`, { lost: true }, 3);
      stripeProxy.inject("GET", `/v1/subscriptions/${s}`, { status: 503 });
    },
  ],
];

for (const [i, [what, inject]] of STRIPE_FAULTS.entries()) {
  test(`upgrade_plan, Stripe failing with ${what}: charged once, done, the charge recorded once`, async () => {
    const sub = `fault-up-${i}@example.com`;
    const subscription = `sub_fault${i}`;
    const { client, ws } = await starter(sub, subscription);
    const approval = await ok(client, "upgrade_plan", { plan: "growth" });
    inject(subscription);
    await client.callTool({ name: "decide_approval", arguments: { id: approval.id, decision: "approve" } });
    const outcome = await final(client, approval.id);
    await upgradedOnce(client, ws, subscription, approval, outcome);
    await client.close();
  });
}

test("upgrade_plan, the runtime killed after Stripe charged and before the Worker wrote it: the watchdog finishes it, charged once", async () => {
  const sub = "fault-up-crash@example.com";
  const subscription = "sub_faultcrash";
  const { client, ws } = await starter(sub, subscription);
  const approval = await ok(client, "upgrade_plan", { plan: "growth" });
  const held = stripeProxy.hold("POST", `/v1/subscriptions/${subscription}`);
  const after = await approveAndCrash(client, sub, approval.id, held);
  const outcome = await final(after, approval.id);
  await upgradedOnce(after, ws, subscription, approval, outcome);
  await after.close();
});

// ---- sending: the order, the import, launch, stop, resume, and the sync -----------------------

const ORDERS = "/api/v2/dfy-email-account-orders";
const real = (b) => b?.simulation === false;
const simulated = (b) => b?.simulation !== false;
async function answer(client, choice, text) {
  assert.equal(choice.kind, "choice", JSON.stringify(choice));
  return ok(client, choice.tool, { ...choice.arguments, answers: [...choice.answers, { card: choice.card, answer: text }] });
}

/** `sub`'s workspace with its sending choices made for the brand of `website`: its order approval. */
async function orderAsked(sub, website) {
  const client = await connect(worker, { sub, app: true });
  await ok(client, "save_offer", {
    product: "Ledgerly",
    description: "Close automation",
    value_proposition: "Close in 3 days",
    website,
    postal_address: "1 Main St, Springfield",
  });
  await ok(client, "size_sending_capacity", { volume: 45, unit: "new_leads_per_day", steps: 4 });
  await ok(client, "confirm_sizing");
  await answer(client, await ok(client, "choose_sending_source"), "own_names");
  const chosen = await answer(client, await ok(client, "propose_domains"), "set_1");
  await answer(client, await ok(client, "propose_email", { sender_name: "Anna Berg" }), "names");
  const approval = await ok(client, "order_sending_setup");
  return { client, approval, domains: chosen.domains.map((d) => d.name) };
}

/** After an order: placed once at Instantly, recorded once here, its mailboxes counted once. */
async function orderedOnce(client, outcome, domains) {
  assert.equal(outcome.status, "done", JSON.stringify(outcome));
  assert.match(outcome.result, /^Ordered 2 domains and 6 mailboxes; \$43 charged\./);
  const placed = instantly.state.orders.filter((o) => domains.includes(o.domain));
  assert.deepEqual(placed.map((o) => o.domain).sort(), [...domains].sort(), "each domain bought once");
  assert.equal((await ok(client, "get_plans_and_billing")).usage.mailboxes, 6);
  const setup = await ok(client, "get_sending_setup");
  assert.deepEqual(setup.domains.map((d) => d.name).sort(), [...domains].sort());
}

test("order_sending_setup, Instantly failing at each call in turn (its simulation, its list, the order itself): bought once, done", async () => {
  const { client, approval, domains } = await orderAsked("fault-order@example.com", "https://www.ledgerly.io");
  const posts = instantly.state.realOrderPosts;
  // The decision's run: the simulation before buying fails on every try, so nothing is bought.
  instantlyProxy.inject("POST", ORDERS, { status: 500, when: simulated }, 4);
  // The watchdog's: the list of orders (is it bought already?) rate limited, the simulation
  // failing once, then the order placed with an answer that is not JSON.
  instantlyProxy.inject("GET", ORDERS, { status: 429, retryAfter: 1 });
  instantlyProxy.inject("POST", ORDERS, { status: 502, when: simulated });
  instantlyProxy.inject("POST", ORDERS, { malformed: true, when: real });
  await client.callTool({ name: "decide_approval", arguments: { id: approval.id, decision: "approve" } });
  const outcome = await final(client, approval.id);
  assert.equal(instantly.state.realOrderPosts - posts, 1, "one real order posted");
  await orderedOnce(client, outcome, domains);
  await client.close();
});

test("order_sending_setup, the runtime killed after Instantly placed the order and before the Worker wrote it: bought once, done", async () => {
  const sub = "fault-order-crash@example.com";
  const { client, approval, domains } = await orderAsked(sub, "https://www.quillbooks.io");
  const posts = instantly.state.realOrderPosts;
  const held = instantlyProxy.hold("POST", ORDERS, real);
  const after = await approveAndCrash(client, sub, approval.id, held);
  const outcome = await final(after, approval.id);
  assert.equal(instantly.state.realOrderPosts - posts, 1, "the order is found, not posted again");
  await orderedOnce(after, outcome, domains);
  await after.close();
});

const SENDER = "fault-order@example.com";
const BULK = "/api/v1/people/bulk_match";
const enriched = () =>
  apollo.state.requests.filter((r) => r.path === BULK).flatMap((r) => JSON.parse(r.body || "{}").details?.map((d) => d.id) ?? []);
const timesEach = (ids) => ids.reduce((m, id) => m.set(id, (m.get(id) ?? 0) + 1), new Map());

/**
 * After an import: the people of the enrichments whose answers the Worker never read are the only
 * ones enriched twice (Apollo has no idempotency keys, DOMAIN §2: the import's next run asks for
 * that chunk again, once), nobody is a lead twice, and the workspace counts what it holds and the
 * credits Apollo reported in the answers it read.
 */
async function importedOnce(client, outcome, before) {
  assert.equal(outcome.status, "done", JSON.stringify(outcome));
  const counts = timesEach(enriched().slice(before));
  const unread = new Set(
    apolloProxy.reached.filter((r) => r.path === BULK && (r.fault?.malformed || r.fault?.lost || r.fault?.held)).flatMap((r) => r.body.details.map((d) => d.id)),
  );
  const twice = new Set([...counts].filter(([, n]) => n > 1).map(([id]) => id));
  assert.ok([...counts.values()].every((n) => n <= 2), "nobody enriched more than twice");
  assert.ok(unread.size > 0, "an answer was lost");
  assert.deepEqual([...twice].sort(), [...unread].filter((id) => counts.has(id)).sort(), "only the people whose answer was lost are asked for again");
  const ctx = await ok(client, "get_workspace_context");
  const job = ctx.leads.imports[0];
  assert.equal(job.status, "done", JSON.stringify(job));
  assert.equal(job.credits, job.imported, "one credit per revealed address, as Apollo reported");
  assert.match(outcome.result, new RegExp(`^Imported ${job.imported} leads`));
  return job;
}

test("import_leads, Apollo failing at each call in turn (search, enrichment rate limited, enrichment unreadable): done, nobody a lead twice", async () => {
  const client = await connect(worker, { sub: SENDER, app: true });
  await ok(client, "save_target", { description: "Sales leaders in the US" });
  await ok(client, "save_target_filters", { titles: ["VP of Sales"], countries: ["United States"] });
  await ok(client, "confirm_target");
  const approval = await ok(client, "import_leads", { max_leads: 30 });
  const before = enriched().length;
  apolloProxy.inject("POST", "/api/v1/mixed_people/api_search", { status: 500 });
  apolloProxy.inject("POST", BULK, { status: 429, retryAfter: 1 });
  apolloProxy.inject("POST", BULK, { malformed: true });
  await client.callTool({ name: "decide_approval", arguments: { id: approval.id, decision: "approve" } });
  const job = await importedOnce(client, await final(client, approval.id), before);
  assert.equal((await ok(client, "get_workspace_context")).leads.total, job.imported);
  await client.close();
});

test("import_leads, the runtime killed after Apollo enriched a chunk and before the Worker wrote it: done, nobody a lead twice", async () => {
  let client = await connect(worker, { sub: SENDER, app: true });
  const total = (await ok(client, "get_workspace_context")).leads.total;
  const approval = await ok(client, "import_leads", { max_leads: 20 });
  const before = enriched().length;
  const held = apolloProxy.hold("POST", BULK);
  client = await approveAndCrash(client, SENDER, approval.id, held);
  const job = await importedOnce(client, await final(client, approval.id), before);
  assert.equal((await ok(client, "get_workspace_context")).leads.total, total + job.imported);
  await client.close();
});

const campaignPath = (pid, verb) => `/api/v2/campaigns/${pid}${verb ? `/${verb}` : ""}`;
/** Approves `tool`'s approval for `campaign` with the faults `inject` queues; its final state. */
async function approved(client, tool, campaign, inject = () => {}) {
  const approval = await ok(client, tool, { campaign_id: campaign });
  inject();
  await client.callTool({ name: "decide_approval", arguments: { id: approval.id, decision: "approve" } });
  return final(client, approval.id);
}
/**
 * The campaign as VibeSell shows it and as Instantly has it agree, and the plan's active campaigns
 * are counted as Instantly has them sending.
 */
async function agrees(client, campaign, pid, status) {
  const c = await ok(client, "get_campaign", { campaign_id: campaign });
  assert.equal(c.status, status, JSON.stringify(c));
  assert.equal(instantly.state.campaigns.get(pid).status, status === "active" ? 1 : 2);
  // Only this workspace sends through the fake's campaigns.
  const sending = [...instantly.state.campaigns.values()].filter((x) => x.status === 1).length;
  assert.equal((await ok(client, "get_plans_and_billing")).usage.activeCampaigns, sending);
}

let campaign;
let pid;
test("launch, stop and resume, Instantly failing at each of their calls: each done once, the campaign as Instantly has it", async () => {
  const client = await connect(worker, { sub: SENDER, app: true });
  instantly.completeSetup();
  await ok(client, "start_warmup");
  assert.equal((await ok(client, "get_sending_setup")).status, "warming");
  instantly.ageWarmup(20, 96);
  assert.equal((await ok(client, "get_sending_setup")).status, "ready");
  await ok(client, "save_playbook", { tone: "plain", angle: "speed", sender_name: "Anna Berg" });
  const seq = await ok(client, "save_sequence", {
    steps: [
      { subject: "{{first_name}}, a faster close", body: "Hi {{first_name|there}},\n\nShall we talk?\n\n{{sender_name}}" },
      { delay_days: 3, body: "Following up, {{first_name|there}}." },
    ],
  });
  await ok(client, "approve_sequence", { version: seq.version });
  campaign = (await ok(client, "stage_campaign")).id;
  pid = instantly.campaign().id;

  // The launch: its read of the campaign fails once, its activation's answer is lost once.
  let out = await approved(client, "launch_campaign", campaign, () => {
    instantlyProxy.inject("GET", campaignPath(pid), { status: 500 });
    instantlyProxy.inject("POST", campaignPath(pid, "activate"), { lost: true });
  });
  assert.equal(out.status, "done", JSON.stringify(out));
  await agrees(client, campaign, pid, "active");
  // The stop: its pause fails on every try of the decision's run; the watchdog's goes through.
  out = await approved(client, "stop_campaign", campaign, () => instantlyProxy.inject("POST", campaignPath(pid, "pause"), { status: 500 }, 4));
  assert.equal(out.status, "done", JSON.stringify(out));
  await agrees(client, campaign, pid, "paused");
  // The resume: rate limited, then an activation whose answer is not JSON.
  out = await approved(client, "resume_campaign", campaign, () => {
    instantlyProxy.inject("POST", campaignPath(pid, "activate"), { status: 429, retryAfter: 1 });
    instantlyProxy.inject("POST", campaignPath(pid, "activate"), { malformed: true });
  });
  assert.equal(out.status, "done", JSON.stringify(out));
  await agrees(client, campaign, pid, "active");
  await client.close();
});

for (const [tool, verb, status] of [
  ["stop_campaign", "pause", "paused"],
  ["resume_campaign", "activate", "active"],
]) {
  test(`${tool}, the runtime killed after Instantly answered and before the Worker wrote it: done once, the campaign as Instantly has it`, async () => {
    let client = await connect(worker, { sub: SENDER, app: true });
    const approval = await ok(client, tool, { campaign_id: campaign });
    const held = instantlyProxy.hold("POST", campaignPath(pid, verb));
    client = await approveAndCrash(client, SENDER, approval.id, held);
    const out = await final(client, approval.id);
    assert.equal(out.status, "done", JSON.stringify(out));
    await agrees(client, campaign, pid, status);
    await client.close();
  });
}

test("launch_campaign, the runtime killed after Instantly activated and before the Worker wrote it: done once, one campaign sending", async () => {
  let client = await connect(worker, { sub: SENDER, app: true });
  assert.equal((await approved(client, "stop_campaign", campaign)).status, "done");
  const imp = await ok(client, "import_leads", { max_leads: 10 });
  await client.callTool({ name: "decide_approval", arguments: { id: imp.id, decision: "approve" } });
  assert.equal((await final(client, imp.id)).status, "done");
  const second = (await ok(client, "stage_campaign")).id;
  const secondPid = instantly.campaign().id;
  assert.notEqual(secondPid, pid);
  const approval = await ok(client, "launch_campaign", { campaign_id: second });
  const activations = () => instantlyProxy.reached.filter((r) => r.path === campaignPath(secondPid, "activate")).length;
  const held = instantlyProxy.hold("POST", campaignPath(secondPid, "activate"));
  client = await approveAndCrash(client, SENDER, approval.id, held);
  const out = await final(client, approval.id);
  assert.equal(out.status, "done", JSON.stringify(out));
  assert.equal(activations(), 1, "found sending, not activated again");
  await agrees(client, second, secondPid, "active");
  await agrees(client, campaign, pid, "paused");
  campaign = second;
  pid = secondPid;
  await client.close();
});

// ---- the scheduler: the sending sync ----------------------------------------------------------

const EMAILS = "/api/v2/emails";
const emailReads = () => instantlyProxy.reached.filter((r) => r.path === EMAILS);
/**
 * Waits until the Worker may read the replies `n` more times within its pace of 20 a minute
 * (DOMAIN §1.1, counted from what reached the fake), so that the reads below are not put off.
 */
async function readsAllowed(n) {
  const recent = emailReads().filter((r) => r.at > Date.now() - 60_000);
  if (recent.length > 20 - n) await sleep(recent[recent.length - (20 - n) - 1].at + 60_000 - Date.now() + 100);
}
/** Calls list_replies until `done(total)`, for up to 20 s; the last answer. */
async function repliesUntil(client, done) {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const page = await ok(client, "list_replies", { limit: 25 });
    if (done(page.total)) return page;
    assert.ok(Date.now() < deadline, `replies still ${page.total}; reads: ${JSON.stringify(emailReads().map((r) => r.fault ?? r.status))}`);
    await sleep(500);
  }
}

test("the sync, Instantly failing and the runtime killed while it reads replies: each reply and bounce recorded once, suppressed once", async () => {
  await readsAllowed(12);
  let client = await connect(worker, { sub: SENDER, app: true });
  const leads = instantly.state.leads.get(pid);
  const [first, second, bounced] = leads.map((l) => l.email);
  const before = (await ok(client, "list_replies", { limit: 25 })).total;
  instantly.receive({ campaign_id: pid, lead: first, from_address_email: first, eaccount: "x", subject: "Re: a faster close", body: { text: "Could we talk Thursday?" }, step: "0_0_0", i_status: 1 });
  // Its read of the replies fails on every try, then comes back as something not JSON.
  instantlyProxy.inject("GET", EMAILS, { status: 500 }, 4);
  assert.equal((await ok(client, "list_replies", { limit: 25 })).total, before, "nothing read, nothing lost");
  instantlyProxy.inject("GET", EMAILS, { malformed: true });
  await repliesUntil(client, (n) => n === before + 1);

  // Killed once Instantly has handed over a second reply and a bounce, before they are written.
  instantly.receive({ campaign_id: pid, lead: second, from_address_email: second, eaccount: "x", subject: "Re: a faster close", body: { text: "Not now, maybe next quarter." }, step: "0_0_0" });
  instantly.setLeadStatus(pid, bounced, -1);
  instantly.setAnalytics(pid, { contacted_count: 10, emails_sent_count: 10, open_count_unique: 1, reply_count_unique: 2, bounced_count: 1, unsubscribed_count: 0 });
  const held = instantlyProxy.hold("GET", EMAILS);
  client.callTool({ name: "list_replies", arguments: { limit: 25 } }).catch(() => {});
  await held.arrived;
  await worker.crash();
  held.release();
  await client.close().catch(() => {});
  await worker.restart();
  client = await connect(worker, { sub: SENDER, app: true });
  await repliesUntil(client, (n) => n >= before + 2);
  // Read again and again: each reply is recorded once.
  await ok(client, "list_replies", { limit: 25 });
  const replies = await ok(client, "list_replies", { limit: 25 });
  assert.equal(replies.total, before + 2, JSON.stringify(replies.replies.map((r) => r.from.email)));
  for (const who of [first, second]) assert.equal(replies.replies.filter((r) => r.from.email === who).length, 1, who);
  assert.ok(instantly.state.blocklist.includes(bounced), "the bounce is suppressed and mirrored to the blocklist");
  await client.close();
});

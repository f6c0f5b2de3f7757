// The live sending platform (Instantly API v2) in the real Worker, against a local fake that
// follows Instantly's documented API (tests/e2e/fake-instantly.mjs), with leads from the Apollo
// fake: look-alike domains and the priced simulation, an order refused with a code (said in
// words), an order whose answer is lost (placed once, never twice), rate limits and server
// errors retried, accounts and warm-up, a campaign created as a closed-body draft with its
// leads, launched, its replies, bounces and unsubscribes followed (suppressed and mirrored to
// the blocklist), the bounce-threshold pause, a stopped campaign still followed for its late
// replies and bounces, and a launch and a resume approved at the same moment on a plan of one
// active campaign: the second waits for the first's activation, then finds the place taken.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { startWorker, connect } from "./harness.mjs";
import { fakeInstantly } from "./fake-instantly.mjs";
import { fakeApollo } from "./fake-apollo.mjs";

const KEY = "instantly-test-key";
const APOLLO_KEY = "apollo-test-key";
// Plans are configuration: here the free plan carries enough to test sending without Stripe
// (live providers bill through Stripe, not the sandbox's checkout page), and one active campaign,
// as the Starter plan does, which two approvals filling it at once must not pass.
const PLANS = {
  currency: "usd",
  defaultPlan: "free",
  plans: [{ id: "free", name: "Free", description: "Test", priceMonthly: 0, limits: { leadsPerMonth: 1000, mailboxes: 10, activeCampaigns: 1 } }],
};

let instantly;
let apollo;
let worker;
before(async () => {
  instantly = fakeInstantly(KEY);
  apollo = fakeApollo(APOLLO_KEY);
  await new Promise((r) => instantly.server.listen(0, "127.0.0.1", r));
  await new Promise((r) => apollo.server.listen(0, "127.0.0.1", r));
  worker = await startWorker({
    vars: {
      PROVIDER_MODE: "live",
      INSTANTLY_API_KEY: KEY,
      INSTANTLY_BASE_URL: `http://127.0.0.1:${instantly.server.address().port}`,
      APOLLO_API_KEY: APOLLO_KEY,
      APOLLO_BASE_URL: `http://127.0.0.1:${apollo.server.address().port}/api/v1`,
      PLANS_JSON: JSON.stringify(PLANS),
    },
  });
});
after(async () => {
  await worker?.stop();
  await new Promise((r) => instantly?.server.close(r));
  await new Promise((r) => apollo?.server.close(r));
});

async function ok(client, name, args = {}) {
  const r = await client.callTool({ name, arguments: args });
  assert.equal(r.isError, false, `${name}: ${r.content?.[0]?.text}`);
  return r.structuredContent;
}
async function answer(client, choice, text) {
  assert.equal(choice.kind, "choice", JSON.stringify(choice));
  return ok(client, choice.tool, { ...choice.arguments, answers: [...choice.answers, { card: choice.card, answer: text }] });
}
const sent = (method, path) => instantly.state.requests.filter((r) => r.method === method && r.path === path);
const activations = () => instantly.state.requests.filter((r) => r.method === "POST" && /^\/api\/v2\/campaigns\/[^/]+\/activate$/.test(r.path));
/** Waits until approval `id` is no longer open (decided and carried out), for up to 15 s. */
async function settled(client, id) {
  const deadline = Date.now() + 15_000;
  while ((await ok(client, "list_pending_approvals")).approvals.some((a) => a.id === id)) {
    assert.ok(Date.now() < deadline, `${id} still open`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

let client;
let senders;

test("domains, prices and an order through Instantly: simulated first, refused once in words, then placed once even when the answer is lost", async () => {
  client = await connect(worker, { sub: "live-sender@example.com", app: true });
  await ok(client, "save_offer", {
    product: "Ledgerly",
    description: "Close automation",
    value_proposition: "Close in 3 days",
    website: "https://www.ledgerly.io",
    postal_address: "1 Main St, Springfield",
  });
  await ok(client, "size_sending_capacity", { volume: 45, unit: "new_leads_per_day", steps: 4 });
  await ok(client, "confirm_sizing");
  const q = await ok(client, "choose_sending_source");
  // One warmed domain in stock, two needed: only the brand is offered.
  assert.deepEqual(q.choices.map((c) => c.id), ["own_names"]);
  assert.match(q.reason, /out of stock/);
  await answer(client, q, "own_names");

  // The availability check is rate limited once: VibeSell waits and asks again.
  instantly.state.script.push({ method: "POST", path: "/api/v2/dfy-email-account-orders/domains/check", status: 429, headers: { "retry-after": "1" }, body: { message: "Too many requests" } });
  const d = await ok(client, "propose_domains");
  assert.equal(sent("POST", "/api/v2/dfy-email-account-orders/domains/check").length, 2, "429 waited out and retried");
  const similar = sent("POST", "/api/v2/dfy-email-account-orders/domains/similar")[0];
  assert.deepEqual(similar.body, { domain: "ledgerly.io", tlds: ["com", "org"] });
  const offered = d.choices.flatMap((c) => c.label.split(" + "));
  assert.ok(!offered.includes("ledgerly.com"), "the brand on another extension is never proposed");
  assert.ok(!offered.includes("tryledgerly.com"), "taken domains are not proposed");
  assert.match(d.choices[0].description, /\$12\.50\/year/);
  const settled = await answer(client, d, "set_1");
  const e = await ok(client, "propose_email", { sender_name: "Anna Berg" });
  const step = await answer(client, e, "names");
  senders = step.addresses.map((a) => a.address);
  assert.equal(senders.length, 6);

  const approval = await ok(client, "order_sending_setup");
  const quoted = sent("POST", "/api/v2/dfy-email-account-orders").at(-1);
  assert.equal(quoted.body.simulation, true, "priced with a simulation first");
  assert.equal(quoted.body.order_type, "dfy");
  assert.equal(quoted.body.items[0].email_provider, 1);
  assert.equal(approval.cost.amount, 2 * 1250 + 6 * 300);
  assert.equal(instantly.state.realOrderPosts, 0, "nothing bought before the user approves");

  // The real order is refused, its simulation just before having passed: Instantly answers 200
  // with `order_placed: false` and a code, its Google mailboxes out of stock for the moment. The
  // approval ends not done and says why, in words rather than the code; nothing was bought.
  instantly.state.script.push({
    method: "POST",
    path: "/api/v2/dfy-email-account-orders",
    when: (b) => b.simulation === false,
    status: 200,
    body: { order_placed: false, order_is_valid: false, simulation: false, order_error: "unavailable_email_providers", unavailable_email_providers: [1] },
  });
  const refused = await ok(client, "decide_approval", { id: approval.id, decision: "approve" });
  assert.equal(refused.status, "not_done", JSON.stringify(refused));
  assert.match(refused.result, /Google mailboxes cannot be ordered right now; try again later\./);
  assert.doesNotMatch(refused.result, /unavailable_email_providers/);
  assert.equal(instantly.state.orders.length, 0, "nothing ordered");
  const setup = await client.callTool({ name: "get_sending_setup", arguments: {} });
  assert.equal(setup.isError, true);
  assert.match(setup.content[0].text, /Nothing is ordered yet/, "no setup recorded");

  // Asked again later: a new approval, priced again. This time the order goes through but its
  // answer is lost: the retry finds it, nothing is bought twice.
  const again = await ok(client, "order_sending_setup");
  assert.notEqual(again.id, approval.id);
  instantly.state.script.push({ method: "POST", path: "/api/v2/dfy-email-account-orders", when: (b) => b.simulation === false, commitThen500: true });
  const decided = await ok(client, "decide_approval", { id: again.id, decision: "approve" });
  assert.equal(decided.status, "done", JSON.stringify(decided));
  assert.equal(instantly.state.realOrderPosts, 1, "one real order");
  assert.deepEqual(instantly.state.orders.map((o) => o.domain).sort(), settled.domains.map((x) => x.name).sort());
  const real = sent("POST", "/api/v2/dfy-email-account-orders").filter((r) => r.body.simulation === false);
  assert.deepEqual(real.map((r) => r.headers["idempotency-key"]), [`vibesell-${approval.id}-order`, `vibesell-${again.id}-order`]);
  for (const r of instantly.state.requests) {
    assert.equal(r.headers.authorization, `Bearer ${KEY}`);
    assert.match(r.headers["user-agent"], /^VibeSell-Connector\//);
    assert.ok(!r.query.toString().includes(KEY), "the key never goes in a URL");
  }
});

test("accounts are set up, warmed up through a background job, and ready", async () => {
  let setup = await ok(client, "get_sending_setup");
  assert.equal(setup.status, "setting_up");
  // Warm-up asked for before the accounts exist: turned on once they do.
  const warm = await ok(client, "start_warmup");
  assert.equal(warm.status, "scheduled");
  assert.equal(sent("POST", "/api/v2/accounts/warmup/enable").length, 0);
  instantly.completeSetup();
  // A server error on one account read is retried.
  instantly.state.script.push({ method: "GET", path: `/api/v2/accounts/${encodeURIComponent(senders[0])}`, status: 502 });
  setup = await ok(client, "get_sending_setup");
  assert.equal(setup.status, "warming", JSON.stringify(setup));
  const enable = sent("POST", "/api/v2/accounts/warmup/enable");
  assert.equal(enable.length, 1);
  assert.deepEqual(enable[0].body.emails.sort(), [...senders].sort());
  assert.ok(instantly.state.requests.some((r) => r.path.startsWith("/api/v2/background-jobs/")), "the warm-up job is followed");
  assert.deepEqual(setup.domains[0].dns, { spf: "pass", dkim: "pass", dmarc: "pass", mx: "pass", tracking: "pass" });
  assert.ok(sent("GET", "/api/v2/accounts/ctd/status").some((r) => r.query.get("host") === `track.${setup.domains[0].name}`));
  instantly.ageWarmup(20, 96);
  setup = await ok(client, "get_sending_setup");
  assert.equal(setup.status, "ready", JSON.stringify(setup.mailboxes));
});

test("a campaign: a closed-body draft with its leads in batches, launched, then followed", async () => {
  await ok(client, "save_target", { description: "Sales leaders in the US" });
  await ok(client, "save_target_filters", { titles: ["VP of Sales"], countries: ["United States"] });
  await ok(client, "confirm_target");
  // More leads than the adapter reads in one sync when Instantly's pages are small (below).
  const imp = await ok(client, "import_leads", { max_leads: 60 });
  assert.equal((await ok(client, "decide_approval", { id: imp.id, decision: "approve" })).status, "done");
  await ok(client, "save_playbook", { tone: "plain", angle: "speed", sender_name: "Anna Berg" });
  const seq = await ok(client, "save_sequence", {
    steps: [
      { subject: "{{first_name}}, a faster close", body: "Hi {{first_name|there}},\n\nShall we talk?\n\n{{sender_name}}" },
      { delay_days: 3, body: "Following up, {{first_name|there}}." },
    ],
  });
  await ok(client, "approve_sequence", { version: seq.version });
  // Instantly refusing the campaign leaves no draft behind here: the refusal says nothing was
  // set up, and nothing was.
  instantly.state.script.push({ method: "POST", path: "/api/v2/campaigns", status: 400, body: { message: "schedule invalid" } });
  const refused = await client.callTool({ name: "stage_campaign", arguments: {} });
  assert.equal(refused.isError, true, refused.content?.[0]?.text);
  assert.match(refused.content[0].text, /refused: .*Nothing was set up/);
  const none = await client.callTool({ name: "get_campaign", arguments: {} });
  assert.equal(none.isError, true, "no half-staged draft");
  assert.match(none.content[0].text, /stage_campaign/);
  const draft = await ok(client, "stage_campaign");
  assert.equal(draft.status, "draft");
  // Each sender gets its own limit, and the slow ramp since these mailboxes are new (DOMAIN §3.1).
  for (const email of senders) {
    const a = instantly.state.accounts.get(email);
    assert.deepEqual([a.daily_limit, a.enable_slow_ramp], [30, true], email);
  }
  const create = sent("POST", "/api/v2/campaigns").at(-1);
  assert.ok(create, "created on Instantly");
  assert.equal(create.body.campaign_schedule.schedules[0].timezone, "America/Detroit", "US Eastern in Instantly's enum");
  assert.deepEqual(create.body.campaign_schedule.schedules[0].timing, { from: "09:00", to: "17:00" });
  assert.deepEqual(create.body.email_list.sort(), [...senders].sort());
  assert.equal(create.body.insert_unsubscribe_header, true);
  assert.equal(create.body.sequences[0].steps.length, 2);
  assert.equal(create.body.sequences[0].steps[0].delay, 3);
  // The sender's line (with the postal address) is in every step; the lead's own part of the
  // footer (the GDPR notice, the unsubscribe link) names no sender detail, so staging again after
  // those change updates every email.
  // Each of the lead's lines is a line of its own in the step's HTML: a line break inside one
  // variable would run them together there.
  assert.match(create.body.sequences[0].steps[0].variants[0].body, /1 Main St, Springfield<\/div><div>\{\{vsFooter\}\}<\/div><div>\{\{vsNotice\}\}<\/div>$/);
  const adds = sent("POST", "/api/v2/leads/add");
  assert.ok(adds.length >= 1 && adds.every((r) => r.body.leads.length <= 1000));
  const lead = adds[0].body.leads[0];
  assert.doesNotMatch(lead.custom_variables.vsFooter, /1 Main St, Springfield/);
  assert.match(lead.custom_variables.vsFooter, /^Don't want to hear from us again\? Unsubscribe: http:\/\/127\.0\.0\.1:\d+\/u\/\S+$/);
  assert.equal(typeof lead.custom_variables.vsNotice, "string");
  assert.ok(adds.every((r) => r.body.leads.every((l) => Object.values(l.custom_variables).every((v) => !String(v).includes("\n")))));
  const leads = instantly.state.leads.get(instantly.campaign().id);
  assert.equal(leads.length, draft.leads);

  const launch = await ok(client, "launch_campaign");
  assert.equal((await ok(client, "decide_approval", { id: launch.id, decision: "approve" })).status, "done");
  const cid = instantly.campaign().id;
  assert.equal(instantly.campaign().status, 1, "activated");

  // The platform reports sends, a bounce, an unsubscribe, a reply and an out-of-office.
  const [bounced, unsubscribed, replier, away] = leads.map((l) => l.email);
  instantly.setAnalytics(cid, { contacted_count: 20, emails_sent_count: 40, open_count_unique: 9, reply_count_unique: 2, reply_count_automatic_unique: 1, bounced_count: 1, unsubscribed_count: 1 });
  instantly.setLeadStatus(cid, bounced, -1);
  instantly.setLeadStatus(cid, unsubscribed, -2);
  instantly.receive({ campaign_id: cid, lead: replier, from_address_email: replier, eaccount: senders[0], subject: "Re: a faster close", body: { text: "Sounds interesting. Could we talk Thursday?" }, step: "0_0_0", i_status: 1 });
  instantly.receive({ campaign_id: cid, lead: away, from_address_email: away, eaccount: senders[1], subject: "Automatic reply", body: { text: "I am out of the office until Monday." }, is_auto_reply: 1 });
  // Its days and steps count automatic replies apart (`unique_replies_automatic`); the steps'
  // variants are summed.
  instantly.setReport(cid, {
    daily: [{ date: "2026-12-01", sent: 40, unique_replies: 2, unique_replies_automatic: 1 }],
    steps: [
      { step: "0", variant: "0", sent: 30, unique_replies: 2, unique_replies_automatic: 1 },
      { step: "0", variant: "1", sent: 10, unique_replies: 0 },
    ],
  });
  const c = await ok(client, "get_campaign");
  assert.equal(c.status, "active");
  assert.deepEqual(c.daily, [{ date: "2026-12-01", sent: 40, replies: 1 }]);
  assert.deepEqual(c.steps, [{ step: 1, sent: 40, replies: 1 }]);
  assert.deepEqual([c.stats.sent, c.stats.contacted, c.stats.bounced, c.stats.replied, c.stats.positive], [40, 20, 1, 1, 1]);
  assert.ok(c.stats.unsubscribed >= 1);
  const emailCall = sent("GET", "/api/v2/emails")[0];
  assert.equal(emailCall.query.get("email_type"), "received");
  assert.equal(emailCall.query.get("campaign_id"), cid);
  const list = sent("POST", "/api/v2/leads/list")[0];
  assert.equal(list.body.campaign, cid, "the singular campaign filter");
  // Bounced and unsubscribed addresses are suppressed and mirrored to Instantly's blocklist.
  assert.ok(instantly.state.blocklist.includes(bounced) && instantly.state.blocklist.includes(unsubscribed), instantly.state.blocklist.join());
  const replies = await ok(client, "list_replies");
  assert.deepEqual(replies.replies.map((r) => r.classification).sort(), ["interested", "out_of_office"]);
  // The reply's step as Instantly writes it (`sequence_step_variant`, "0_0_0"): the first email.
  assert.equal(replies.replies.find((r) => r.classification === "interested").step, 1);
  assert.ok(replies.replies.every((r) => r.untrusted));

  // Bounces pass the threshold: VibeSell pauses the campaign itself.
  instantly.setAnalytics(cid, { contacted_count: 90, emails_sent_count: 100, open_count_unique: 20, reply_count_unique: 2, reply_count_automatic_unique: 1, bounced_count: 6, unsubscribed_count: 1 });
  const paused = await ok(client, "get_campaign");
  assert.deepEqual([paused.status, paused.pausedBy], ["paused", "bounces"]);
  assert.equal(sent("POST", `/api/v2/campaigns/${cid}/pause`).length, 1);
  assert.equal(instantly.campaign().status, 2);

  // Resumed on the user's word, it is judged on what it sends from then on: the next read
  // does not pause it again for the bounces that paused it.
  const resume = await ok(client, "resume_campaign");
  assert.equal((await ok(client, "decide_approval", { id: resume.id, decision: "approve" })).status, "done");
  assert.equal(instantly.campaign().status, 1);
  const resumed = await ok(client, "get_campaign");
  assert.equal(resumed.status, "active", JSON.stringify(resumed));
  assert.equal(sent("POST", `/api/v2/campaigns/${cid}/pause`).length, 1);

  // A bounce far down a long list of leads: one sync reads 50 pages of leads, the next goes on
  // from there instead of starting over, and finds it.
  assert.ok(leads.length >= 60, `${leads.length} leads`);
  instantly.state.leadPageSize = 1;
  const far = leads.at(-1).email;
  instantly.setLeadStatus(cid, far, -1);
  instantly.setAnalytics(cid, { contacted_count: 90, emails_sent_count: 100, open_count_unique: 20, reply_count_unique: 2, reply_count_automatic_unique: 1, bounced_count: 7, unsubscribed_count: 1 });
  let pages = instantly.state.leadPages;
  await ok(client, "get_campaign");
  assert.equal(instantly.state.leadPages - pages, 50);
  assert.ok(!instantly.state.blocklist.includes(far));
  pages = instantly.state.leadPages;
  await ok(client, "get_campaign");
  assert.equal(instantly.state.leadPages - pages, leads.length - 50);
  assert.ok(instantly.state.blocklist.includes(far), "found on the second read");
  // Instantly counts more bounces and unsubscribes (8) than its list shows (3): once a read has
  // reached the end, the next syncs do not read every lead again for them, only hours later.
  pages = instantly.state.leadPages;
  await ok(client, "get_campaign");
  await ok(client, "get_campaign");
  assert.equal(instantly.state.leadPages, pages, "no lead read again");

  // A reply quoting our email, footer and unsubscribe link included, as mail clients do: only
  // the prospect's own words are classified.
  const quoting = leads[5].email;
  instantly.receive({
    campaign_id: cid, lead: quoting, from_address_email: quoting, eaccount: senders[0], subject: "Re: a faster close",
    body: { text: `Not right now, maybe next quarter.\n\nOn Tue, Dec 1, 2026 at 9:02 AM Anna Berg <${senders[0]}> wrote:\n> Hi there,\n> Shall we talk?\n> Anna\n> 1 Main St, Springfield\n> Unsubscribe: http://127.0.0.1/u/x` },
  });
  const quoted = (await ok(client, "list_replies", { limit: 20 })).replies.find((r) => r.from.email === quoting);
  assert.equal(quoted?.classification, "not_now", JSON.stringify(quoted));
  assert.ok(!instantly.state.blocklist.includes(quoting), "a quoted unsubscribe link is not an opt-out");
});

test("a campaign paused in Instantly's own app shows as paused by the platform, and resumes once the user approves", async () => {
  assert.equal((await ok(client, "get_campaign")).status, "active");
  instantly.campaign().status = 2; // paused in Instantly's app, not through VibeSell
  const paused = await ok(client, "get_campaign");
  assert.deepEqual([paused.status, paused.pausedBy], ["paused", "platform"]);
  assert.equal(paused.pauseReason, "Paused at the sending platform, not by VibeSell: nothing is sent until it is resumed (resume_campaign).");
  assert.equal((await ok(client, "get_plans_and_billing")).usage.activeCampaigns, 0, "its place among the active campaigns is free");
  const resume = await ok(client, "resume_campaign");
  assert.equal((await ok(client, "decide_approval", { id: resume.id, decision: "approve" })).status, "done");
  assert.equal(instantly.campaign().status, 1, "sending again on Instantly");
  assert.equal((await ok(client, "get_campaign")).status, "active");
});

test("a stopped campaign is still followed: a reply and a bounce that come in after the stop are read, and the bounce suppressed", async () => {
  const cid = instantly.campaign().id;
  const leads = instantly.state.leads.get(cid);
  // Instantly's usual pages again: one read of the leads sees them all (the test above made
  // them one lead long to reach past the adapter's pages).
  instantly.state.leadPageSize = 100;
  const stop = await ok(client, "stop_campaign");
  assert.equal((await ok(client, "decide_approval", { id: stop.id, decision: "approve" })).status, "done");
  assert.equal(instantly.campaign().status, 2, "paused on Instantly");
  const stopped = await ok(client, "get_campaign");
  assert.deepEqual([stopped.status, stopped.pausedBy], ["paused", "user"]);
  const before = await ok(client, "list_replies", { limit: 25 });

  // The emails sent before the stop are still answered: a reply and a bounce after it. The sync
  // goes on reading the stopped campaign (for 14 days), so both reach the workspace.
  const [late, bounced] = [leads[10].email, leads[11].email];
  instantly.receive({
    campaign_id: cid, lead: late, from_address_email: late, eaccount: senders[2], subject: "Re: a faster close",
    body: { text: "Sorry for the slow answer. Yes, could we talk next Tuesday?" }, step: "0_0_0", i_status: 1,
  });
  instantly.setLeadStatus(cid, bounced, -1);
  instantly.setAnalytics(cid, { contacted_count: 90, emails_sent_count: 100, open_count_unique: 20, reply_count_unique: 3, reply_count_automatic_unique: 1, bounced_count: 8, unsubscribed_count: 1 });
  const after = await ok(client, "list_replies", { limit: 25 });
  assert.equal(after.total, before.total + 1, JSON.stringify(after.replies.map((r) => r.from.email)));
  const reply = after.replies.find((r) => r.from.email === late);
  assert.equal(reply?.classification, "interested", JSON.stringify(reply));
  assert.ok(instantly.state.blocklist.includes(bounced), "the late bounce is suppressed and mirrored to the blocklist");
  const c = await ok(client, "get_campaign");
  assert.deepEqual([c.status, c.pausedBy], ["paused", "user"], "followed, not resumed");
  assert.deepEqual([c.stats.sent, c.stats.bounced], [100, 8], "the statistics are still read");
  assert.equal(instantly.campaign().status, 2, "and nothing is sent");
});

test("a launch and a resume approved at the same moment: the second waits for the first, then finds the plan's one active campaign taken", async () => {
  // The campaign stopped above is paused; a second one, of newly imported leads, is staged as a
  // draft. Both approvals are asked while no campaign is active, so each passes the plan's one
  // active campaign when proposed; only their executions can tell them apart.
  const paused = await ok(client, "get_campaign");
  assert.deepEqual([paused.status, paused.pausedBy], ["paused", "user"]);
  const pausedThere = instantly.campaign(); // each campaign as Instantly has it
  const imp = await ok(client, "import_leads", { max_leads: 10 });
  assert.equal((await ok(client, "decide_approval", { id: imp.id, decision: "approve" })).status, "done");
  const draft = await ok(client, "stage_campaign");
  assert.notEqual(draft.id, paused.id);
  assert.equal(draft.status, "draft");
  const draftThere = instantly.campaign();
  assert.notEqual(draftThere.id, pausedThere.id);
  const launch = await ok(client, "launch_campaign", { campaign_id: draft.id });
  const resume = await ok(client, "resume_campaign", { campaign_id: paused.id });
  assert.equal((await ok(client, "get_plans_and_billing")).usage.activeCampaigns, 0);

  // The launch's activation is held at Instantly: the launch has checked the limit and not yet
  // counted itself (it does once its provider answers) when the resume is approved.
  const activated = activations().length;
  const held = instantly.hold("POST", `/api/v2/campaigns/${draftThere.id}/activate`);
  const other = await connect(worker, { sub: "live-sender@example.com", app: true });
  const first = ok(client, "decide_approval", { id: launch.id, decision: "approve" });
  first.catch(() => {}); // awaited below; a failure before then is reported there
  try {
    await held.arrived;
    const second = await ok(other, "decide_approval", { id: resume.id, decision: "approve" });
    // Approved, and left to its watchdog rather than carried out beside the launch (before, both
    // passed the limit and two campaigns were active). Still being carried out is `pending` on
    // the wire, with a result that says so.
    const carryingOut = ["pending", "Approved by the user; VibeSell is carrying it out."];
    assert.deepEqual([second.status, second.result], carryingOut, JSON.stringify(second));
    // The watchdog, a second later, finds the launch still waiting and leaves the resume waiting too.
    const alarms = worker.alarmsThatRan("finish_execution").length;
    const deadline = Date.now() + 10_000;
    while (worker.alarmsThatRan("finish_execution").length === alarms) {
      assert.ok(Date.now() < deadline, "the watchdog ran");
      await new Promise((r) => setTimeout(r, 100));
    }
    const waiting = (await ok(client, "list_pending_approvals")).approvals.find((a) => a.id === resume.id);
    assert.deepEqual([waiting?.status, waiting?.result], carryingOut, JSON.stringify(waiting));
    assert.equal(activations().length, activated + 1, "only the launch's activation reached Instantly");
    assert.equal(pausedThere.status, 2, "the paused campaign still paused");
  } finally {
    held.release();
  }
  const launched = await first;
  assert.equal(launched.status, "done", JSON.stringify(launched));
  assert.equal(draftThere.status, 1, "activated");

  // Its next look, once the launch is in, checks the limit with the launch counted.
  await settled(client, resume.id);
  const refused = await ok(client, "decide_approval", { id: resume.id, decision: "approve" });
  assert.equal(refused.status, "not_done", JSON.stringify(refused));
  assert.match(refused.result, /Plan limit: the Free plan allows 1 active campaign \(1 in use\)/);
  assert.equal(activations().length, activated + 1, "the resume never reached Instantly");
  assert.deepEqual([draftThere.status, pausedThere.status], [1, 2], "one campaign sending at Instantly");
  assert.equal((await ok(client, "get_campaign", { campaign_id: draft.id })).status, "active");
  const still = await ok(client, "get_campaign", { campaign_id: paused.id });
  assert.deepEqual([still.status, still.pausedBy], ["paused", "user"]);
  const ctx = await ok(client, "get_workspace_context");
  assert.deepEqual([ctx.sending.campaign.id, ctx.sending.campaign.status], [draft.id, "active"]);
  assert.equal((await ok(client, "get_plans_and_billing")).usage.activeCampaigns, 1);
  await other.close();
});

test("the campaign deleted in Instantly's app: the read tools still answer what was last read, and say why", async () => {
  // The campaign launched above is followed, so its absence is noticed.
  instantly.deleteCampaign(instantly.campaign().id);
  for (const tool of ["get_campaign", "list_replies"]) {
    const r = await client.callTool({ name: tool, arguments: {} });
    assert.equal(r.isError, false, `${tool}: ${r.content?.[0]?.text}`);
    assert.match(r.content[0].text, /Not up to date: the sending platform/, tool);
  }
  await client.close();
});

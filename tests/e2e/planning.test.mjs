// Planning the campaign in the real Worker with the official MCP client: from an empty workspace
// to a confirmed target, a lead sample, an approved sequence, a checked first email and an
// estimate; every prerequisite refusal; the sandbox's count = sample (= import) agreement over
// random filters, and its determinism.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { startWorker, connect, endsWithNotice } from "./harness.mjs";
import { subscribed } from "./billing-helpers.mjs";
import { escapeHtml } from "./oauth.mjs";

let worker;
before(async () => {
  worker = await startWorker();
});
after(async () => {
  await worker?.stop();
});

const OFFER = {
  product: "Ledgerly",
  description: "Month-end close automation for finance teams",
  value_proposition: "Close the books in 3 days instead of 10",
  company_name: "Ledgerly Ltd",
  call_to_action: "a 20-minute call",
  postal_address: "12 Finsbury Square, London EC2A 1AS",
};
const STEPS = {
  steps: [
    {
      subject: "Closing the books at {{company}}",
      body:
        "Hi {{first_name|there}},\n\nMost finance teams at companies like {{company}} take ten days to close the month. " +
        "Ours take three, because reconciliations happen as transactions arrive.\n\nWould a short call next week be useful?\n\n{{sender_name}}",
    },
    { delay_days: 3, body: "Hi {{first_name|there}}, our customers cut reconciliation time by 68%. Happy to show you how." },
    { delay_days: 4, body: "I'll stop here, {{first_name|there}}. If month-end becomes a priority, just reply." },
  ],
};

async function call(client, name, args = {}) {
  const r = await client.callTool({ name, arguments: args });
  return r;
}
async function ok(client, name, args = {}) {
  const r = await call(client, name, args);
  assert.equal(r.isError, false, `${name}: ${r.content?.[0]?.text}`);
  return r.structuredContent;
}
async function refused(client, name, args, pattern) {
  const r = await call(client, name, args);
  assert.equal(r.isError, true, `${name} should refuse: ${r.content?.[0]?.text}`);
  assert.equal(r.structuredContent, undefined);
  assert.match(r.content[0].text, pattern, name);
  return r.content[0].text;
}
const stepStatus = (ctx, step) => ctx.journey.find((s) => s.step === step).status;

test("the planning tools are listed by scope, with their kinds", async () => {
  const read = await connect(worker, { sub: "lister@example.com", scope: "mcp" });
  const act = await connect(worker, { sub: "lister@example.com" });
  const readNames = (await read.listTools()).tools.map((t) => t.name);
  const actTools = (await act.listTools()).tools;
  for (const n of ["estimate_lead_pool", "preview_lead_sample", "check_first_email", "estimate_campaign_plan"]) {
    assert.ok(readNames.includes(n), n);
  }
  for (const n of ["save_target", "save_target_filters", "confirm_target", "save_playbook", "save_sequence", "approve_sequence"]) {
    assert.ok(!readNames.includes(n), `${n} needs mcp:act`);
  }
  const kindOf = (s) => (s.oneOf ? s.oneOf.map((v) => v.properties.kind.const).join("|") : s.properties.kind.const);
  const kinds = Object.fromEntries(actTools.map((t) => [t.name, kindOf(t.outputSchema)]));
  assert.equal(kinds.save_target, "target");
  assert.equal(kinds.estimate_lead_pool, "lead_count");
  assert.equal(kinds.preview_lead_sample, "lead_preview");
  assert.equal(kinds.save_playbook, "playbook");
  assert.equal(kinds.approve_sequence, "sequence");
  assert.equal(kinds.check_first_email, "first_email");
  assert.equal(kinds.estimate_campaign_plan, "campaign_estimate");
  const est = actTools.find((t) => t.name === "estimate_lead_pool");
  assert.equal(est.annotations.readOnlyHint, true);
  assert.equal(est.annotations.openWorldHint, true);
  await read.close();
  await act.close();
});

test("every prerequisite is refused with the step it needs", async () => {
  const c = await connect(worker, { sub: "prereq@example.com" });
  await refused(c, "save_target", { description: "CFOs" }, /save_offer/);
  await refused(c, "estimate_lead_pool", {}, /save_target_filters/);
  await refused(c, "preview_lead_sample", {}, /save_target/);
  await refused(c, "confirm_target", {}, /save_target/);
  await refused(c, "save_playbook", { tone: "plain", angle: "speed" }, /save_offer/);
  await refused(c, "save_sequence", STEPS, /save_offer/);
  await refused(c, "approve_sequence", { version: 1 }, /save_offer/);
  await refused(c, "check_first_email", {}, /save_offer/);
  await refused(c, "estimate_campaign_plan", {}, /save_sequence/);
  await refused(c, "import_leads", {}, /save_target/);
  await ok(c, "save_offer", { ...OFFER, postal_address: undefined });
  await refused(c, "save_target_filters", { titles: ["CFO"] }, /save_target/);
  await ok(c, "save_target", { description: "CFOs in Ireland" });
  await refused(c, "confirm_target", {}, /save_target_filters/);
  await refused(c, "import_leads", {}, /save_target_filters/);
  await refused(c, "save_sequence", STEPS, /save_playbook/);
  await ok(c, "save_playbook", { tone: "plain", angle: "speed", sender_name: "Anna" });
  const seq = await ok(c, "save_sequence", STEPS);
  await refused(c, "approve_sequence", { version: seq.version }, /postal_address/);
  await refused(c, "check_first_email", {}, /save_target_filters/);
  await refused(c, "estimate_campaign_plan", {}, /import_leads/);
  await ok(c, "save_target_filters", { countries: ["Ireland"], titles: ["CFO"] });
  await refused(c, "import_leads", {}, /confirm_target/);
  // Schema-invalid arguments are refusals too.
  await refused(c, "preview_lead_sample", { count: 11 }, /count/);
  await refused(c, "save_target_filters", { titles: ["CFO"], colour: "blue" }, /colour/);
  await c.close();
});

test("from an empty workspace to a confirmed target, an approved sequence and a checked first email", async () => {
  const c = await connect(worker, { sub: "planner@example.com" });
  let ctx = await ok(c, "get_workspace_context");
  assert.equal(ctx.nextStep.tool, "save_offer");
  await ok(c, "save_offer", OFFER);
  await ok(c, "save_target", { description: "Finance leaders at Irish and UK software companies of 50–500 people" });
  ctx = await ok(c, "get_workspace_context");
  assert.equal(ctx.nextStep.tool, "save_target_filters");

  const typo = await refused(c, "save_target_filters", { countries: ["Irland"], titles: ["Head of Finanse"] }, /did you mean "Ireland"/);
  assert.match(typo, /"Head of Finance"/);

  const target = await ok(c, "save_target_filters", {
    countries: ["Ireland", "UK"],
    titles: ["CFO", "Head of Finance", "Finance Director"],
    company_sizes: ["51-200", "201-500"],
    industries: ["software"],
    exclude_company_domains: ["https://www.ledgerly.io/"],
  });
  assert.deepEqual(target.filters.countries, ["Ireland", "United Kingdom"]);
  assert.deepEqual(target.filters.industries, ["Computer Software"]);
  assert.deepEqual(target.filters.excludeCompanyDomains, ["ledgerly.io"]);
  assert.equal(target.confirmed, false);

  const count = await ok(c, "estimate_lead_pool");
  assert.ok(count.total > 100, `pool of ${count.total}`);
  assert.equal(count.provider, "sandbox");
  for (const b of count.breakdowns) {
    assert.equal(b.buckets.reduce((a, x) => a + x.count, 0), count.total, `${b.by} adds up`);
  }
  assert.ok(count.companies > 0 && count.companies <= count.total);

  const preview = await ok(c, "preview_lead_sample");
  assert.equal(preview.leads.length, 10);
  assert.equal(preview.total, count.total);
  assert.equal(preview.accessLogged, true);
  for (const l of preview.leads) {
    assert.match(l.email, /^.•••@[a-z0-9.-]+$/, "masked address");
    assert.ok(["Ireland", "United Kingdom"].includes(l.country));
    assert.ok(["Chief Financial Officer", "Head of Finance", "Finance Director"].includes(l.title));
    assert.ok(["51-200", "201-500"].includes(l.companySize));
    assert.notEqual(l.companyDomain, "ledgerly.io");
  }
  ctx = await ok(c, "get_workspace_context");
  assert.equal(ctx.personalDataAccess.accesses, 1);
  assert.equal(ctx.personalDataAccess.peopleShown, 10);
  assert.equal(ctx.nextStep.tool, "confirm_target");

  const confirmed = await ok(c, "confirm_target");
  assert.equal(confirmed.confirmed, true);
  ctx = await ok(c, "get_workspace_context");
  assert.equal(stepStatus(ctx, "target"), "done");
  assert.equal(stepStatus(ctx, "lead_pool"), "done");
  assert.equal(ctx.nextStep.tool, "save_playbook");

  await ok(c, "save_playbook", {
    tone: "Plain, peer to peer",
    angle: "The ten-day close is a choice",
    rules: ["Under 120 words"],
    sender_name: "Anna Berg",
    sender_title: "Co-founder",
  });
  const seq = await ok(c, "save_sequence", STEPS);
  assert.equal(seq.version, 1);
  assert.equal(seq.approved, false);
  assert.deepEqual(seq.steps.map((s) => s.delayDays), [0, 3, 4]);
  ctx = await ok(c, "get_workspace_context");
  assert.equal(ctx.nextStep.tool, "approve_sequence");
  assert.match(ctx.nextStep.why, /after they say yes/);

  await ok(c, "approve_sequence", { version: 1 });
  // Editing un-approves; approving needs the new version.
  const edited = structuredClone(STEPS);
  edited.steps[2].body = "Last note from me, {{first_name|there}}.";
  const seq2 = await ok(c, "save_sequence", edited);
  assert.equal(seq2.approved, false);
  assert.equal(seq2.unapproved, true);
  await refused(c, "approve_sequence", { version: 1 }, /now version 2/);
  const approved = await ok(c, "approve_sequence", { version: 2 });
  assert.equal(approved.approved, true);

  const first = await ok(c, "check_first_email");
  assert.equal(first.verdict, "ready", JSON.stringify(first.checks));
  assert.equal(first.subject, `Closing the books at ${first.lead.company}`);
  assert.equal(first.lead.name, `${preview.leads[0].firstName} ${preview.leads[0].lastName}`, "the first person of the sample");
  assert.match(first.body, /12 Finsbury Square/);
  assert.match(first.body, /Unsubscribe: http:\/\/127\.0\.0\.1:\d+\/u\/[\w-]+\.[\w-]+/);
  assert.match(first.body, /legitimate interest/, "UK and Irish recipients get the GDPR notice");
  assert.match(first.html, /<a href="http:\/\/127\.0\.0\.1:\d+\/u\/[^"]+">Unsubscribe<\/a>/);
  assert.match(first.to, /•••@/);
  ctx = await ok(c, "get_workspace_context");
  for (const step of ["offer", "target", "lead_pool", "sequence", "first_email"]) assert.equal(stepStatus(ctx, step), "done", step);
  assert.equal(ctx.personalDataAccess.accesses, 2);

  const est = await ok(c, "estimate_campaign_plan", { lead_count: count.total });
  assert.equal(est.leads, count.total);
  assert.equal(est.steps, 3);
  assert.equal(est.emailsTotal, count.total * 3);
  if (est.weekly.length < 52) assert.equal(est.weekly.reduce((a, w) => a + w.emails, 0), est.emailsTotal, "the weeks add up");
  assert.ok(est.replies.low <= est.replies.mid && est.replies.mid <= est.replies.high);
  assert.ok(est.assumptions.some((a) => /not sized yet/.test(a)));
  assert.ok(est.endDate >= est.startDate);

  // Importing is an approval the user decides; the free plan allows 50 leads a month.
  const tooMany = await refused(c, "import_leads", { max_leads: 1000 }, /Plan limit/);
  assert.match(tooMany, /Starter/);
  const approval = await ok(c, "import_leads");
  assert.equal(approval.kind, "approval");
  assert.equal(approval.status, "pending");
  assert.equal(approval.action, "import_leads");
  assert.equal(approval.decideHere, false, "not the Claude app: the user decides on the VibeSell page");
  assert.ok(approval.impact.some((l) => /up to 50 leads/.test(l)) && approval.impact.some((l) => /50 credits/.test(l)), approval.impact.join("\n"));
  assert.ok(approval.impact.some((l) => /Free plan's 50 leads this month: 0 used so far, 0 left after/.test(l)), approval.impact.join("\n"));
  assert.equal((await ok(c, "get_workspace_context")).leads.total, 0, "nothing before the user decides");
  const app = await connect(worker, { sub: "planner@example.com", app: true });
  const decided = await ok(app, "decide_approval", { id: approval.id, decision: "approve" });
  assert.equal(decided.status, "done", JSON.stringify(decided));
  assert.match(decided.result, /^Imported 50 leads; 50 credits used\.$/);
  ctx = await ok(c, "get_workspace_context");
  assert.equal(ctx.leads.total, 50);
  assert.equal(ctx.leads.imports[0].imported, 50);
  assert.equal(stepStatus(ctx, "leads"), "done");
  const firstForLead = await ok(c, "check_first_email");
  assert.equal(firstForLead.lead.source, "imported");
  assert.equal(firstForLead.lead.name, first.lead.name, "the first imported lead is the first person of the sample");
  const estImported = await ok(c, "estimate_campaign_plan");
  assert.equal(estImported.leads, 50);
  assert.equal(estImported.leadsBasis, "workspace");
  await app.close();

  // Changing the target later takes the confirmation back.
  const changed = await ok(c, "save_target_filters", { countries: ["Ireland"], titles: ["CFO"] });
  assert.equal(changed.confirmed, false);
  assert.equal(changed.unconfirmed, true);
  ctx = await ok(c, "get_workspace_context");
  assert.equal(stepStatus(ctx, "target"), "current");
  await c.close();
});

/** The Art. 14 notice the footer adds for a recipient under the GDPR, in full. */
const gdprNotice = (company, source) =>
  `Why you are receiving this: we found your work contact details in a business contact database ` +
  `(${source}) and are writing to you about your role at ${company}, on the basis of legitimate interest. You can ` +
  `object at any time: reply "stop" or use the unsubscribe link above, and you will not be contacted again.`;

test("a recipient in Norway (EEA, not EU) gets the GDPR notice; one in the United States does not", async () => {
  const c = await connect(worker, { sub: "norway@example.com" });
  await ok(c, "save_offer", OFFER);
  await ok(c, "save_target", { description: "Finance leaders in Norway" });
  await ok(c, "save_playbook", { tone: "plain", angle: "speed", sender_name: "Anna Berg" });
  await ok(c, "save_sequence", STEPS);
  // The first email for the first person of the target's sample, rendered as it would be sent.
  const firstEmailIn = async (country) => {
    await ok(c, "save_target_filters", { countries: [country], titles: ["CFO", "Head of Finance", "Finance Director"] });
    const first = await ok(c, "check_first_email");
    assert.equal(first.lead.source, "sample");
    assert.equal(first.lead.country, country);
    return first;
  };
  const norway = await firstEmailIn("Norway");
  const notice = gdprNotice(norway.lead.company, "the VibeSell sandbox database");
  assert.ok(endsWithNotice(norway.body, notice), norway.body);
  // The HTML version carries it too, escaped as the footer's lines are.
  assert.ok(norway.html.includes(`>Unsubscribe</a><br>${escapeHtml(notice)}</p>`), norway.html);
  const finding = norway.checks.find((f) => f.id === "gdpr_notice");
  assert.equal(finding?.status, "info", JSON.stringify(norway.checks));
  assert.match(finding.detail, /^The recipient is in Norway, under the GDPR: the footer adds where their data came from and how to object \(Art\. 14\)\./);

  // Outside the GDPR, no notice: the notice depends on the recipient, it is not in every email.
  const us = await firstEmailIn("United States");
  assert.doesNotMatch(us.body, /Why you are receiving this|legitimate interest/);
  assert.doesNotMatch(us.html, /Why you are receiving this|legitimate interest/);
  assert.equal(us.checks.find((f) => f.id === "gdpr_notice"), undefined, JSON.stringify(us.checks));
  assert.match(us.body, /\n--\nAnna Berg, Ledgerly Ltd · 12 Finsbury Square, London EC2A 1AS\nDon't want to hear from us again\? Unsubscribe: /);
  await c.close();
});

// A seeded generator so a failure names a filter that can be replayed.
function rng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
const pick = (r, xs) => xs[Math.floor(r() * xs.length)];
const SMALL_COUNTRIES = ["Ireland", "Denmark", "Norway", "Finland", "Austria", "Portugal", "New Zealand", "Singapore", "Israel"];
const TITLES = ["Chief Financial Officer", "VP of Sales", "Head of Marketing", "Chief Technology Officer", "Operations Manager", "HR Manager", "Founder", "Head of Engineering"];
const SENIORITIES = ["c_suite", "vp", "head", "director", "owner", "founder"];
const INDUSTRIES = ["Computer Software", "Financial Services", "Manufacturing", "Retail", "Hospital & Health Care", "Management Consulting"];
const SIZES = ["1-10", "11-50", "51-200", "201-500", "501-1000", "1001-5000"];

function randomFilters(r) {
  const f = { countries: [pick(r, SMALL_COUNTRIES)] };
  if (r() < 0.5) f.titles = [...new Set([pick(r, TITLES), pick(r, TITLES)])];
  else f.seniorities = [pick(r, SENIORITIES)];
  if (r() < 0.6) f.industries = [pick(r, INDUSTRIES)];
  if (r() < 0.6) f.company_sizes = [...new Set([pick(r, SIZES), pick(r, SIZES)])];
  return f;
}

test("the sandbox's count agrees with its sample over random filters, and the same request gives the same people", async () => {
  const c = await connect(worker, { sub: "consistency@example.com" });
  await ok(c, "save_offer", OFFER);
  await ok(c, "save_target", { description: "random targets" });
  const r = rng(2026);
  let nonEmpty = 0;
  for (let i = 0; i < 25; i++) {
    const f = randomFilters(r);
    const counted = await ok(c, "estimate_lead_pool", f);
    assert.equal(counted.source, "arguments");
    const saved = await ok(c, "save_target_filters", f);
    const again = await ok(c, "estimate_lead_pool");
    assert.equal(again.total, counted.total, `count of saved filters = count of the same arguments: ${JSON.stringify(f)}`);
    const sample = await ok(c, "preview_lead_sample");
    assert.equal(sample.leads.length, Math.min(10, counted.total), JSON.stringify(f));
    assert.equal(sample.total, counted.total);
    for (const l of sample.leads) {
      assert.ok(saved.filters.countries.includes(l.country), JSON.stringify({ f, l }));
      if (f.titles) assert.ok(f.titles.includes(l.title), JSON.stringify({ f, l }));
      if (f.seniorities) assert.ok(f.seniorities.includes(l.seniority), JSON.stringify({ f, l }));
      if (f.industries) assert.ok(f.industries.includes(l.industry), JSON.stringify({ f, l }));
      if (f.company_sizes) assert.ok(f.company_sizes.includes(l.companySize), JSON.stringify({ f, l }));
    }
    const names = new Set(sample.leads.map((l) => `${l.name}|${l.companyDomain}`));
    assert.equal(names.size, sample.leads.length, "no one twice");
    const repeat = await ok(c, "preview_lead_sample");
    assert.deepEqual(repeat.leads, sample.leads, "the same request gives the same people");
    if (counted.total > 0) nonEmpty++;
  }
  assert.ok(nonEmpty >= 15, `${nonEmpty} of 25 random filters matched someone`);
  await c.close();
});

test("count = sample = import over random filters, in a workspace on the Growth plan", async () => {
  const app = await subscribed(worker, "importer@example.com", "growth");
  await ok(app, "save_offer", OFFER);
  await ok(app, "save_target", { description: "random targets" });
  const r = rng(7);
  let imported = 0;
  let checked = 0;
  for (let i = 0; i < 60 && checked < 10; i++) {
    const f = randomFilters(r);
    const counted = await ok(app, "estimate_lead_pool", f);
    if (counted.total === 0 || counted.total > 300) continue;
    await ok(app, "save_target_filters", f);
    await ok(app, "preview_lead_sample");
    await ok(app, "confirm_target");
    const approval = await ok(app, "import_leads", { max_leads: counted.total });
    const decided = await ok(app, "decide_approval", { id: approval.id, decision: "approve" });
    assert.equal(decided.status, "done", JSON.stringify(decided));
    const job = (await ok(app, "get_workspace_context")).leads.imports[0];
    assert.equal(job.requested, counted.total, JSON.stringify(f));
    assert.equal(job.cursor, counted.total, `every person walked once: ${JSON.stringify(f)}`);
    assert.equal(
      job.imported + job.skippedKnown + job.skippedDuplicate + job.skippedSuppressed + job.skippedNoEmail,
      counted.total,
      `count = imported + skipped: ${JSON.stringify({ f, job })}`,
    );
    imported += job.imported;
    checked++;
  }
  assert.ok(checked >= 8, `${checked} filters imported`);
  const ctx = await ok(app, "get_workspace_context");
  assert.equal(ctx.leads.total, imported, "the workspace holds exactly what the imports reported");
  await app.close();
});

test("counting the broadest filter is fast in the Worker", async () => {
  const c = await connect(worker, { sub: "speed@example.com", scope: "mcp" });
  const all = ["United States", "United Kingdom", "Germany", "France", "Canada", "India", "Australia", "Netherlands", "Spain", "Italy"];
  const times = [];
  let total = 0;
  for (let i = 0; i < 15; i++) {
    const t0 = performance.now();
    const r = await ok(c, "estimate_lead_pool", { countries: all });
    times.push(performance.now() - t0);
    total = r.total;
  }
  times.sort((a, b) => a - b);
  const median = times[Math.floor(times.length / 2)];
  console.log(`estimate_lead_pool over ${total.toLocaleString("en")} people: median ${median.toFixed(1)} ms per call (MCP round trip)`);
  assert.ok(total > 10_000_000, `${total}`);
  assert.ok(median < 250, `median ${median} ms`);
  await c.close();
});

test("a large import finishes within the approval's decision", async () => {
  const app = await subscribed(worker, "bulk@example.com", "growth");
  await ok(app, "save_offer", OFFER);
  await ok(app, "save_target", { description: "VPs in the UK" });
  await ok(app, "save_target_filters", { countries: ["United Kingdom"], seniorities: ["vp"] });
  const pool = await ok(app, "estimate_lead_pool");
  assert.ok(pool.total > 4000, `${pool.total}`);
  await ok(app, "preview_lead_sample");
  await ok(app, "confirm_target");
  const approval = await ok(app, "import_leads", { max_leads: 4000 });
  const t0 = performance.now();
  const decided = await ok(app, "decide_approval", { id: approval.id, decision: "approve" });
  const ms = performance.now() - t0;
  console.log(`import of 4,000 sandbox leads inside decide_approval: ${ms.toFixed(0)} ms`);
  assert.equal(decided.status, "done", JSON.stringify(decided));
  assert.match(decided.result, /^Imported 4,000 leads; 4,000 credits used\.$/);
  assert.equal((await ok(app, "get_workspace_context")).leads.total, 4000);
  await app.close();
});

test("approvals and confirmations follow what they were given for: the target, the sequence's steps, its sender values", async () => {
  const app = await subscribed(worker, "follows@example.com", "growth");
  await ok(app, "save_offer", OFFER);
  await ok(app, "save_target", { description: "Finance leaders in Ireland" });
  await ok(app, "save_target_filters", { countries: ["Ireland"], titles: ["CFO", "Head of Finance"] });
  await ok(app, "estimate_lead_pool");
  await ok(app, "preview_lead_sample");
  await ok(app, "confirm_target");
  // An import asked for, then the target changed before the user decides: nothing imported.
  const approval = await ok(app, "import_leads", { max_leads: 10 });
  assert.equal((await ok(app, "save_target_filters", { countries: ["Ireland"], titles: ["CFO"] })).confirmed, false);
  const decided = await ok(app, "decide_approval", { id: approval.id, decision: "approve" });
  assert.equal(decided.status, "not_done", JSON.stringify(decided));
  assert.match(decided.result, /^The target changed after this import was asked for, so nothing was imported\./);
  assert.equal((await ok(app, "get_workspace_context")).leads.total, 0);

  // A sizing confirmed for three steps is taken back by a sequence of four, and the estimate
  // uses the sizing rather than the defaults.
  await ok(app, "save_playbook", { tone: "plain", angle: "close faster", sender_name: "Anna Berg" });
  await ok(app, "save_sequence", STEPS);
  const sized = await ok(app, "size_sending_capacity", { volume: 40, unit: "new_leads_per_day" });
  await ok(app, "confirm_sizing");
  const est = await ok(app, "estimate_campaign_plan", { lead_count: 500 });
  assert.deepEqual([est.mailboxes, est.capacityBasis], [sized.mailboxes, "workspace"]);
  const four = { steps: [...STEPS.steps, { delay_days: 5, body: "One last note, {{first_name|there}}." }] };
  const resaved = await app.callTool({ name: "save_sequence", arguments: four });
  assert.equal(resaved.isError, false);
  assert.match(resaved.content[0].text, /size it again \(size_sending_capacity\) and have the user confirm it\./);
  const ctx = await ok(app, "get_workspace_context");
  assert.notEqual(stepStatus(ctx, "sizing"), "done", JSON.stringify(ctx.journey));
  await app.close();
});

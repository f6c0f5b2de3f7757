// The VibeSell card in a real browser behind a real MCP Apps host (issue 4): headless Chromium,
// the ext-apps host bridge, the card read with `resources/read` from the running Worker, results
// from the Worker itself where the tools exist and from tests/fixtures/card/ where they do not.
// Screenshots land in a temporary folder, or in docs/card/ with UPDATE_SCREENSHOTS=1.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, readdirSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { startWorker, connect, post, rpc } from "./harness.mjs";
import { subscribed } from "./billing-helpers.mjs";
import { launchBrowser, openHost, HOST_ORIGIN } from "./cardhost/host.mjs";
import { ROOT } from "../../scripts/lib/devtoken.mjs";

// The card's size budget, as stated in the README ("The card"): it is loaded into every
// conversation that shows a VibeSell result.
const BUDGET_RAW = 96 * 1024;
const BUDGET_GZIP = 26 * 1024;

// The fixtures' clock: Monday 7 December 2026, 10:00 UTC.
const NOW = Date.UTC(2026, 11, 7, 10, 0, 0);
const FIXTURE_DIR = join(ROOT, "tests/fixtures/card");
const FIXTURES = Object.fromEntries(
  readdirSync(FIXTURE_DIR)
    .filter((f) => f.endsWith(".json"))
    .map((f) => [f.replace(/\.json$/, ""), JSON.parse(readFileSync(join(FIXTURE_DIR, f), "utf8"))]),
);
const DARK_TOO = ["workspace", "approval", "choice", "campaign", "replies", "sending_setup", "lead_count"];

const SHOTS = process.env.UPDATE_SCREENSHOTS ? join(ROOT, "docs/card") : mkdtempSync(join(tmpdir(), "vibesell-card-"));
mkdirSync(SHOTS, { recursive: true });

// What a host like Claude hands over: theme, locale, time zone and its design tokens. The host's
// zone is neither UTC nor the browser's own (BROWSER_ZONE), so a view that formats a timestamp in
// the wrong zone shows another day or hour and fails; the browser's is west of UTC, so a calendar
// day ("2026-12-21") read as UTC midnight would show the day before, and fail too.
const LIGHT = {
  theme: "light",
  locale: "en-GB",
  timeZone: "Pacific/Auckland",
  displayMode: "inline",
  availableDisplayModes: ["inline"],
  platform: "web",
  styles: {
    variables: {
      "--color-background-primary": "#ffffff",
      "--color-background-secondary": "#f7f6f2",
      "--color-background-tertiary": "#efede6",
      "--color-text-primary": "#1f1e1b",
      "--color-text-secondary": "#64625b",
      "--color-text-tertiary": "#8d8b83",
      "--color-border-primary": "#e8e6dd",
      "--color-border-secondary": "#d6d3c8",
      "--border-radius-md": "10px",
    },
  },
};
const DARK = {
  ...LIGHT,
  theme: "dark",
  styles: {
    variables: {
      "--color-background-primary": "#30302e",
      "--color-background-secondary": "#3a3a37",
      "--color-background-tertiary": "#454541",
      "--color-text-primary": "#f5f4ee",
      "--color-text-secondary": "#b9b7ad",
      "--color-text-tertiary": "#8f8d85",
      "--color-border-primary": "#46463f",
      "--color-border-secondary": "#57574f",
      "--border-radius-md": "10px",
    },
  },
};

let worker, client, browser, page, html, cardUri;
const BROWSER_ZONE = "America/Los_Angeles";

before(async () => {
  worker = await startWorker();
  client = await connect(worker, { scope: "mcp mcp:act" });
  browser = await launchBrowser();
  page = await openHost(browser, { now: NOW, timezoneId: BROWSER_ZONE });
  // As a host does it: the tool names its card, and the card is read from the server.
  const { tools } = await client.listTools();
  cardUri = tools.find((t) => t.name === "get_workspace_context")._meta.ui.resourceUri;
  const read = await client.readResource({ uri: cardUri });
  assert.equal(read.contents[0].mimeType, "text/html;profile=mcp-app");
  html = read.contents[0].text;
});

after(async () => {
  await page?.close();
  await browser?.close();
  await client?.close();
  await worker?.stop();
  if (!process.env.UPDATE_SCREENSHOTS) rmSync(SHOTS, { recursive: true, force: true });
});

const result = (f) => ({ content: [{ type: "text", text: f.text }], structuredContent: f.structuredContent, isError: false });
const methods = (frames) => frames.map((f) => f.method ?? `reply#${f.id}`);

/**
 * Loads the card afresh (a new iframe and host bridge) in the host page; the host answers the
 * card's tool calls with `onCallTool`, by default by calling the Worker.
 */
async function open({ context = LIGHT, onCallTool, width } = {}) {
  page.reset();
  page.onCallTool = onCallTool ?? ((p) => client.callTool(p));
  await page.setTheme(context.theme);
  await page.load(html, { hostContext: context, width });
  return page;
}

/** Nothing went wrong in the page, and nothing left it. */
async function assertClean(host) {
  assert.deepEqual(host.problems, [], "no page errors, console errors or CSP refusals");
  const outside = host.requests.filter((u) => !u.startsWith(HOST_ORIGIN));
  assert.deepEqual(outside, [], "the card made no request");
  await host.page.evaluate(() => window.vsHost.unload());
}

async function view(host) {
  return host.card.locator(".view").evaluate((v) => ({ kind: v.dataset.kind, view: v.dataset.view, text: v.innerText }));
}

test("the card read from the Worker is self-contained and within its size budget", () => {
  const raw = Buffer.byteLength(html);
  const gzip = gzipSync(html, { level: 9 }).length;
  console.log(`card: ${raw} bytes raw, ${gzip} bytes gzip (budget ${BUDGET_RAW} / ${BUDGET_GZIP})`);
  assert.ok(raw <= BUDGET_RAW, `card is ${raw} bytes raw; the budget is ${BUDGET_RAW}`);
  assert.ok(gzip <= BUDGET_GZIP, `card is ${gzip} bytes gzipped; the budget is ${BUDGET_GZIP}`);
  const readme = readFileSync(join(ROOT, "README.md"), "utf8");
  assert.match(readme, new RegExp(`${BUDGET_RAW / 1024} KiB raw and ${BUDGET_GZIP / 1024} KiB gzipped`), "the README states the budget");
  assert.match(cardUri, /^ui:\/\/vibesell\/card-[0-9a-f]{12}$/);
});

test("handshake: ui/initialize with appCapabilities, then initialized, then size", async () => {
  const host = await open();
  const frames = await host.frames();
  const init = frames[0];
  assert.equal(init.method, "ui/initialize");
  assert.equal(init.params.protocolVersion, "2026-01-26");
  assert.deepEqual(init.params.appCapabilities, { availableDisplayModes: ["inline"] });
  assert.equal(init.params.appInfo.name, "vibesell-card");
  assert.equal(frames[1].method, "ui/notifications/initialized", "initialized comes right after the host's answer");
  const size = frames.find((f) => f.method === "ui/notifications/size-changed");
  assert.ok(size && size.params.height > 0 && size.params.width > 0, "the card reports its size");
  await host.settle();
  assert.ok((await host.frameHeight()) > 0, "the host gave the frame the reported height");

  // Tool input first (the host shows work in progress), then the result.
  await host.sendToolInput({});
  await host.card.getByText("Working…").waitFor();
  await host.deliver(result(FIXTURES.memory));
  assert.equal((await view(host)).kind, "memory");

  await host.sendToolCancelled("The user stopped it.");
  await host.card.getByText("The user stopped it.").waitFor();
  await assertClean(host);
});

test("ping, teardown and unknown requests are answered", async () => {
  const host = await open();
  assert.deepEqual(await host.ping(), {});
  const unknown = await host.unknownRequest();
  assert.equal(unknown.error.code, -32601);
  assert.deepEqual(await host.teardown(), {});
  await assertClean(host);
});

test("theme and CSS variables follow the host, light then dark", async () => {
  const host = await open({
    context: {
      ...LIGHT,
      styles: { variables: { ...LIGHT.styles.variables, "--color-background-primary": "#fbfaf7", "--font-sans": "serif", "--color-text-info": "url(https://example.com/x.png)",
        // The same load, written so that a filter of the literal `url(` misses it.
        "--color-background-secondary": "\\75 rl(https://example.com/y.png)", "--color-background-tertiary": 'image-set("https://example.com/z.png" 1x)',
        "--color-border-primary": "color-mix(in srgb, #b00 40%, white)" } },
    },
  });
  await host.deliver(result(FIXTURES.offer));
  const look = () =>
    host.frame().evaluate(() => {
      const cs = getComputedStyle(document.body);
      return {
        theme: document.documentElement.dataset.theme,
        bg: cs.backgroundColor,
        fg: cs.color,
        font: cs.fontFamily,
        loads: ["--color-text-info", "--color-background-secondary", "--color-background-tertiary"].map((k) =>
          document.documentElement.style.getPropertyValue(k),
        ),
        mix: document.documentElement.style.getPropertyValue("--color-border-primary"),
        lang: document.documentElement.lang,
      };
    });
  const light = await look();
  assert.equal(light.theme, "light");
  assert.equal(light.bg, "rgb(251, 250, 247)");
  assert.equal(light.fg, "rgb(31, 30, 27)");
  assert.equal(light.font, "serif");
  assert.deepEqual(light.loads, ["", "", ""], "a variable that would load something is ignored, however written");
  assert.match(light.mix, /color-mix/, "a colour function is taken");
  assert.equal(light.lang, "en-GB");

  await host.changeHostContext({ theme: "dark", styles: DARK.styles });
  await host.frame().waitForFunction(() => document.documentElement.dataset.theme === "dark");
  const dark = await look();
  assert.equal(dark.bg, "rgb(48, 48, 46)");
  assert.equal(dark.fg, "rgb(245, 244, 238)");
  await assertClean(host);
});

test("the card reports its size as its content grows and shrinks", async () => {
  const host = await open();
  await host.deliver(result(FIXTURES.workspace));
  const tall = await host.settle();
  await host.deliver(result(FIXTURES.memory));
  const short = await host.settle();
  assert.ok(tall.own > 400, `the workspace view is tall (${tall.own}px)`);
  assert.ok(short.own < tall.own - 200, `the frame shrinks with the content (${short.own}px after ${tall.own}px)`);
  assert.equal(short.shown, short.own, "the host shows the whole card, no more");
  await assertClean(host);
});

test("results from the Worker render: workspace, offer, memory, a note forgotten", async () => {
  const offer = await client.callTool({
    name: "save_offer",
    arguments: {
      product: "Ledgerly",
      description: "Month-end close automation for finance teams at mid-size companies.",
      value_proposition: "Close the books in 3 days instead of 10.",
      company_name: "Ledgerly Ltd",
      website: "https://ledgerly.io",
      pricing: "From £900 a month",
      call_to_action: "A 20-minute demo",
      postal_address: "12 Finsbury Square, London EC2A 1AS, United Kingdom",
      proof_points: ["Used by 140 finance teams", "Average close time down 68%"],
    },
  });
  assert.equal(offer.isError, false, JSON.stringify(offer.content));
  const note = await client.callTool({ name: "remember", arguments: { note: "Prefers a plain, friendly tone; no hype.", topic: "tone" } });
  const ctx = await client.callTool({ name: "get_workspace_context", arguments: {} });
  const kept = await client.callTool({ name: "remember", arguments: { note: "Closes its books on the 5th working day." } });
  const forgotten = await client.callTool({ name: "remember", arguments: { forget: kept.structuredContent.id } });
  assert.equal(forgotten.isError, false, JSON.stringify(forgotten.content));
  for (const [kind, res, expect, shot = kind] of [
    ["offer", offer, ["Ledgerly", "Close the books in 3 days instead of 10.", "Used by 140 finance teams"]],
    ["memory", note, ["Prefers a plain, friendly tone; no hype.", "tone", "Saved"]],
    ["memory", forgotten, ["Closes its books on the 5th working day.", "Forgotten", "Deleted"], "memory-forgotten"],
    ["workspace", ctx, ["Ledgerly", ctx.structuredContent.nextStep.title, "Prefers a plain, friendly tone"]],
  ]) {
    const host = await open();
    await host.deliver(res);
    const v = await view(host);
    assert.equal(v.kind, kind);
    assert.equal(v.view, "designed", `${kind} from the Worker gets its designed view`);
    for (const text of expect) assert.ok(v.text.includes(text), `${kind} shows ${text}`);
    await host.screenshot(join(SHOTS, `${shot}-worker.png`));
    await assertClean(host);
  }
});

test("before 2025-06-18 the card reads the JSON text block", async () => {
  const res = await post(worker, rpc("tools/call", { name: "get_workspace_context", arguments: {} }), {
    headers: { "mcp-protocol-version": "2025-03-26" },
  });
  const old = res.json.result;
  assert.equal(old.structuredContent, undefined);
  const host = await open();
  await host.deliver(old);
  const v = await view(host);
  assert.equal(v.kind, "workspace");
  assert.equal(v.view, "designed");
  assert.ok(!v.text.includes('"kind"'), "the JSON is rendered, not printed");
  await assertClean(host);
});

test("a refusal (isError) shows why, and nothing else", async () => {
  const refused = await client.callTool({ name: "remember", arguments: { note: "" } });
  assert.equal(refused.isError, true);
  const host = await open();
  await host.deliver(refused);
  const text = await host.card.locator("#root").innerText();
  assert.match(text, /Refused/);
  assert.ok(text.includes(refused.content[0].text.slice(0, 40)), "the refusal's own words are shown");
  assert.equal(await host.card.locator("button").count(), 0);
  await host.screenshot(join(SHOTS, "refusal.png"));
  await assertClean(host);
});

// ---- what each kind must show ------------------------------------------------------------------
// For every kind, the values of a real result the card must put on the page, formatted as the
// card formats them for the host's locale and time zone (LIGHT: en-GB, America/New_York). They are
// derived from the result itself, so a view that stops reading a field (or reads one that is gone)
// leaves a value off the page and fails here, with the fixtures and with the Worker's own results.
const LOCALE = LIGHT.locale;
const TZ = LIGHT.timeZone;
const n = (v) => new Intl.NumberFormat(LOCALE).format(v);
const pct = (v, digits = 1) => new Intl.NumberFormat(LOCALE, { style: "percent", maximumFractionDigits: digits }).format(v);
function money(m) {
  const cur = m.currency.toUpperCase();
  const digits = new Intl.NumberFormat("en", { style: "currency", currency: cur }).resolvedOptions().maximumFractionDigits;
  const a = m.amount / 10 ** digits;
  return new Intl.NumberFormat(LOCALE, { style: "currency", currency: cur, minimumFractionDigits: a % 1 === 0 ? 0 : 2, maximumFractionDigits: 2 }).format(a);
}
const priced = (m) => money(m) + ({ month: "/mo", year: "/yr" }[m.interval] ?? "");
/** A timestamp as the card writes dates (`Mon 7 Dec`) and times (`7 Dec, 10:00`), in the host's zone. */
const date = (ms) => new Intl.DateTimeFormat(LOCALE, { weekday: "short", day: "numeric", month: "short", timeZone: TZ }).format(ms);
/** A calendar day (`2026-12-15`) as the card writes it: that day, whatever the zones. */
const calendarDay = (iso) => new Intl.DateTimeFormat(LOCALE, { weekday: "short", day: "numeric", month: "short", timeZone: "UTC" }).format(new Date(`${iso}T12:00:00Z`));
const time = (ms) => new Intl.DateTimeFormat(LOCALE, { day: "numeric", month: "short", hour: "numeric", minute: "2-digit", timeZone: TZ }).format(ms);
const human = (k) => {
  const s = String(k).replace(/_/g, " ").replace(/([a-z0-9])([A-Z])/g, "$1 $2").toLowerCase();
  return s.charAt(0).toUpperCase() + s.slice(1);
};
/** The literal words of a template: what is left between its `{{variables}}`. */
const literal = (t) => t.split(/\{\{[^}]*\}\}/).map((x) => x.trim()).filter(Boolean);
const filterValues = (f) => Object.values(f ?? {}).flat();
const DNS = { spf: "SPF", dkim: "DKIM", dmarc: "DMARC", mx: "MX", tracking: "Tracking" };
const host_ = (url) => new URL(url).host;

const SHOWS = {
  workspace: (d) => [d.offer?.product, d.nextStep?.title, d.nextStep?.why, ...d.journey.map((s) => s.title), ...d.memories.map((m) => m.note), d.plan.name,
    ...d.pendingApprovals.map((a) => a.summary), d.target && `version ${d.target.version}`, d.target?.poolCount != null && `${n(d.target.poolCount)} people match`,
    d.sequence && `${n(d.sequence.steps)} step`, `${n(d.leads.total)} imported`, d.leads.suppressed > 0 && `${n(d.leads.suppressed)} suppressed`,
    d.sending.sizing && `${n(d.sending.sizing.mailboxes)} ${d.sending.sizing.onTopOf ? "more " : ""}mailbox`, ...(d.sending.domains ?? []), d.sending.ordered && `${n(d.sending.mailboxesReady)} of ${n(d.sending.mailboxes)} ready`,
    d.sending.campaign?.name, d.sending.campaign?.pauseReason, d.sending.replies > 0 && n(d.sending.replies),
    d.personalDataAccess.accesses > 0 && `${n(d.personalDataAccess.peopleShown)} people shown`],
  offer: (d) => [d.product, d.description, d.valueProposition, d.companyName, d.website, d.pricing, d.callToAction, d.postalAddress, ...(d.proofPoints ?? [])],
  memory: (d) => [d.note, d.topic, `${n(d.total)} note`],
  target: (d) => [d.description, `Version ${d.version}`, ...filterValues(d.filters), d.poolCount != null && `${n(d.poolCount)} people match`,
    d.confirmed && d.confirmedAt && `confirmed ${date(d.confirmedAt)}`, d.unconfirmed && "Confirmation taken away"],
  lead_count: (d) => [`${n(d.total)} people match`, d.provider, time(d.estimatedAt), ...filterValues(d.filters),
    ...d.breakdowns.flatMap((b) => [b.label, ...b.buckets.flatMap((x) => [x.label, n(x.count)])]), d.reachable < d.total && n(d.reachable)],
  lead_preview: (d) => [`From ${d.provider}`, d.total != null && `of ${n(d.total)}`,
    ...d.leads.flatMap((l) => [l.name, l.title, l.company, l.email, l.city, l.country, l.industry, l.companySize])],
  playbook: (d) => [d.angle, d.tone, d.persona, d.senderName, d.senderTitle, d.callToAction, ...(d.painPoints ?? []), ...(d.proofPoints ?? []), ...(d.rules ?? []),
    ...(d.objections ?? []).flatMap((o) => [o.objection, o.answer])],
  sequence: (d) => [`Version ${d.version}`, `${n(d.steps.length)} email`, ...d.steps.flatMap((s) => [...literal(s.subject), ...literal(s.body)]), ...d.variables,
    d.unapproved && "Approval taken away", d.firstEmailChecked && "first email checked"],
  first_email: (d) => [d.lead.name, d.lead.title, d.lead.company, d.from, d.to, d.subject, d.body, `sequence version ${d.sequenceVersion}`, `${n(d.wordCount)} word`,
    ...d.checks.flatMap((c) => [c.label, c.detail, c.fix && `Fix: ${c.fix}`])],
  campaign_estimate: (d) => [`${n(d.leads)} lead`, d.allContactedDate && dayMonth(d.allContactedDate), dayMonth(d.startDate), dayMonth(d.endDate), `${n(d.businessDays)} business day`,
    `${n(d.calendarDays)} day`, `follow-ups after ${d.delays.join(", ")} days`, ...["replies", "positiveReplies", "meetings"].flatMap((k) => [n(d[k].mid), `${n(d[k].low)}–${n(d[k].high)}`]),
    `${pct(d.replyRate.low, 0)}–${pct(d.replyRate.high, 0)} reply rate`, ...d.assumptions, d.beyondHorizon && "Far too little capacity"],
  sizing: (d) => [`${n(d.mailboxes)} mailbox`, `${n(d.domains)} domain`, `${n(d.newLeadsPerDay)} new leads`, `${n(d.perMailbox)} emails each`, `${n(d.mailboxesPerDomain)} mailboxes each`,
    `${n(d.capacityPerDay)} emails a day once ramped`, `${d.warmupDaysMin}–${d.warmupDaysMax} days`, `${n(d.rampDays)} sending day`, `For ${n(d.volume)} `, `${n(d.steps)} email`,
    `${d.plan}: ${n(d.planMailboxLimit)} mailbox`, ...d.notes, !d.withinPlan && "More than your plan allows", !d.withinPlan && d.upgradeTo && `the ${human(d.upgradeTo)} plan fits`],
  choice: (d) => [d.question, d.reason, ...d.choices.flatMap((c) => [c.label, c.description])],
  sending_choice: (d) => [d.label, d.description, dayMonth(d.setupDate), dayMonth(d.readyDate), ...d.domains.flatMap((x) => [x.name, priced(x.price)]), d.next.title, d.next.why],
  email_step: (d) => [`Sent as ${d.sender}`, ...d.addresses.flatMap((a) => [a.address, a.name]), ...d.domains.flatMap((x) => [x.name, priced(x.price)]), d.next.title, d.next.why],
  domain_quote: (d) => [...d.domains.flatMap((x) => [x.name, x.available && x.price && priced(x.price), x.reason]), d.total && priced(d.total)],
  warmed_shelf: (d) => d.domains.length ? d.domains.flatMap((x) => [x.name, `up to ${n(x.mailboxes)}`, x.health != null && `${x.health}/100`, x.ageDays != null && `${n(x.ageDays)} day`, x.price && priced(x.price)])
    : ["None in stock right now"],
  sending_setup: (d) => [`Ready to send ${calendarDay(d.readyDate)}`, time(d.orderedAt), d.charged && money(d.charged),
    `(${n(d.mailboxes.filter((m) => m.status === "ready").length)} ready)`, ...d.timeline.flatMap((t) => [t.title, t.detail, dayMonth(t.date)]),
    ...d.domains.flatMap((x) => [x.name, human(x.status), ...Object.keys(x.dns).map((k) => DNS[k] ?? `a label for the DNS check "${k}"`)]),
    ...d.mailboxes.flatMap((m) => [m.address, human(m.status), m.health != null && `health ${m.health}`, m.warmupDay != null && `day ${m.warmupDay} of ${m.warmupDays}`])],
  warmup: (d) => [dayMonth(d.readyDate), human(d.status), `${n(d.mailboxes)} mailbox`, d.status !== "scheduled" && `Day ${d.day} of ${d.days}`, d.startedAt && d.status !== "scheduled" && `started ${date(d.startedAt)}`,
    d.health != null && `${d.health}/100`, `${n(d.dailyLimitAfter)} cold emails a day`, ...d.timeline.flatMap((t) => [t.title, t.detail])],
  campaign: (d) => [d.name, human(d.status), d.window, `${n(d.leads)} lead`, d.remainingLeads !== d.leads && `${n(d.remainingLeads)} still reachable`, `${n(d.sequenceSteps)} step`,
    `${n(d.mailboxes)} mailbox`, `up to ${n(d.dailyLimit)} emails a day`, d.launchedAt && `Launched ${date(d.launchedAt)}`, d.pauseReason,
    d.stats.sent > 0 && `Bounce rate ${pct(d.health.bounceRate)}`, ...d.steps.map((s) => `Step ${s.step}`), `${n(d.stats.sent)} emails sent`,
    // A figure and its label, as the stat tiles show them.
    ...Object.entries({ contacted: "Contacted", opened: "Opened", replied: "Replies", positive: "Interested", bounced: "Bounced", unsubscribed: "Opted out" })
      .map(([k, label]) => `${n(d.stats[k])}${label}`),
    ...d.replies.filter((r) => r.count > 0).flatMap((r) => [human(r.class), n(r.count)])],
  replies: (d) => [`${n(d.total)} repl`, d.unread > 0 && `${n(d.unread)} new`,
    ...d.replies.flatMap((r) => [r.from.name, r.from.email, r.from.title, r.from.company, human(r.classification), time(r.receivedAt), r.step != null && `reply to step ${r.step}`])],
  plans: (d) => {
    const cur = d.plans.find((p) => p.current);
    return [cur && `You're on ${cur.name}`, d.current.renewsAt && new Intl.DateTimeFormat(LOCALE, { day: "numeric", month: "long", year: "numeric", timeZone: TZ }).format(d.current.renewsAt),
      d.current.price.amount > 0 && `${money(d.current.price)}/mo`, ...d.plans.flatMap((p) => [p.name, p.description, p.price.amount > 0 ? money(p.price) : "Free",
        `${n(p.limits.leadsPerMonth)} lead`, `${n(p.limits.mailboxes)} mailbox`, `${n(p.limits.activeCampaigns)} active campaign`]),
      cur && `${n(d.usage.leadsImported)} / ${n(cur.limits.leadsPerMonth)}`, `${n(d.credits.leads)} lead credit`, ...d.charges.flatMap((c) => [c.description, money(c.amount)]),
      d.simulated && "Payments here are simulated"];
  },
  checkout: (d) => [`Payment page for the ${d.planName} plan`, `${money(d.price)}/mo`, d.expiresAt && time(d.expiresAt), host_(d.url), d.simulated ? "Sandbox" : "billed by Stripe"],
  portal: (d) => [host_(d.url), d.expiresAt && time(d.expiresAt), d.simulated ? "Sandbox" : "Stripe's billing portal"],
  support: (d) => [d.reference, d.subject, human(d.category), d.replyTo, time(d.createdAt)],
  approval: (d) => [d.summary, human(d.action), ...d.impact, d.cost && money(d.cost), d.result],
  approvals: (d) => [`${n(d.total)} decision`, ...d.approvals.flatMap((a) => [a.summary, human(a.action), ...a.impact])],
};
const squash = (t) => String(t).replace(/\s+/g, " ").trim();

/**
 * Renders `res` and checks its view: designed, every value of SHOWS on the page, nothing blank,
 * no `undefined`/`NaN`/`[object Object]`, and third-party text only inside its frame.
 */
async function assertShows(res, { context = LIGHT, shot, label = "" } = {}) {
  const d = res.structuredContent;
  const host = await open({ context });
  await host.deliver(res);
  const v = await view(host);
  const what = `${d.kind}${label}`;
  assert.equal(v.kind, d.kind);
  assert.equal(v.view, "designed", `${what} falls back to the generic view: align card/card.js with the tool's output`);
  const page = await host.card.locator(".view").evaluate((el) => {
    const blank = [...el.querySelectorAll("h2, .sub, dt, dd, th, td, .stat .v, .stat .l, li, blockquote, figcaption")]
      .filter((x) => !x.textContent.trim() && !x.querySelector("svg, input, button, .meter"))
      .map((x) => `${x.tagName.toLowerCase()}.${x.className}`);
    return { text: el.textContent, blank };
  });
  const text = squash(page.text);
  assert.ok(!/undefined|NaN|\[object Object\]|\bnull\b/.test(text), `${what} shows no undefined/NaN/null/[object Object]: ${text}`);
  assert.deepEqual(page.blank, [], `${what} has no blank element`);
  const wants = SHOWS[d.kind](d).filter((w) => w !== null && w !== undefined && w !== false && w !== "");
  assert.ok(wants.length >= 2, `${what}: values to look for (${wants})`);
  for (const want of wants) {
    assert.ok(text.includes(squash(want)), `${what} shows “${want}”\n--- page: ${text}`);
  }
  if (d.kind === "replies") await assertFramed(host, d);
  if (shot) await host.screenshot(join(SHOTS, shot));
  await assertClean(host);
}

/** Each reply's subject and body are inside its third-party frame, as text, and nowhere else. */
async function assertFramed(host, d) {
  const frames = await host.card.locator("figure.theirs").evaluateAll((fs) =>
    fs.map((f) => ({ caption: f.querySelector("figcaption").textContent, subject: f.querySelector(".rsubj")?.textContent, body: f.querySelector("blockquote").textContent })));
  assert.equal(frames.length, d.replies.length, "one frame per reply");
  d.replies.forEach((r, i) => {
    assert.equal(frames[i].body, r.body, "the body exactly as received, inside the frame");
    assert.equal(frames[i].subject, r.subject, "the subject inside the frame too");
    assert.match(frames[i].caption, r.classification === "bounce" ? /Mail server's words/ : /Prospect's words/);
    assert.ok(frames[i].caption.includes(r.from.email), frames[i].caption);
  });
  const outside = await host.card.locator(".view").evaluate((el) => {
    const c = el.cloneNode(true);
    c.querySelectorAll("figure.theirs").forEach((f) => f.remove());
    return c.textContent;
  });
  for (const r of d.replies) assert.ok(!outside.includes(r.body), "a reply's body never appears outside its frame");
}

/** `value` with every field its output schema does not require left out, recursively. */
function requiredOnly(value, schema, defs) {
  let s = schema ?? {};
  for (let i = 0; i < 10; i++) {
    if (s.$ref) s = defs[s.$ref.split("/").pop()];
    else if (s.oneOf || s.anyOf) {
      const bs = (s.oneOf ?? s.anyOf).map((b) => (b.$ref ? defs[b.$ref.split("/").pop()] : b));
      s = bs.find((b) => b.properties?.kind && [b.properties.kind.const, ...(b.properties.kind.enum ?? [])].includes(value?.kind)) ??
        bs.find((b) => b.type !== "null" && (b.properties || b.items || b.$ref || b.oneOf || b.anyOf)) ?? {};
    } else break;
  }
  if (Array.isArray(value)) return value.map((x) => requiredOnly(x, s.items, defs));
  if (value && typeof value === "object" && s.properties) {
    return Object.fromEntries(Object.keys(value).filter((k) => k === "kind" || (s.required ?? []).includes(k)).map((k) => [k, requiredOnly(value[k], s.properties[k], defs)]));
  }
  return value;
}

test("every kind of seed 001 shows the values of its real result (fixtures), also without its optional fields", async () => {
  const kinds = Object.keys(FIXTURES).sort();
  assert.equal(kinds.length, 26, "one fixture per kind of seed 001");
  assert.deepEqual(Object.keys(SHOWS).sort(), kinds, "SHOWS says what every kind must show");
  const app = await connect(worker, { sub: "card-schemas@example.com", app: true, scope: "mcp mcp:act" });
  const { tools } = await app.listTools();
  await app.close();
  for (const kind of kinds) {
    for (const context of DARK_TOO.includes(kind) ? [LIGHT, DARK] : [LIGHT]) {
      await assertShows(result(FIXTURES[kind]), { context, shot: `${kind}${context.theme === "dark" ? "-dark" : ""}.png` });
    }
    const tool = tools.find((t) => t.name === FIXTURES[kind].tool);
    assert.ok(tool?.outputSchema, `${kind}: the fixture names its tool (${FIXTURES[kind].tool})`);
    const bare = requiredOnly(FIXTURES[kind].structuredContent, tool.outputSchema, tool.outputSchema.$defs ?? {});
    await assertShows(result({ ...FIXTURES[kind], structuredContent: bare }), { label: " (required fields only)" });
  }
});

test("results from the Worker, through the whole journey in the sandbox, show their values", async () => {
  // One workspace on the Growth plan, from the offer to a warm-up that is scheduled: every kind
  // the Worker gives without weeks passing. Campaigns and replies need weeks of sending: their
  // fixtures are the real results of the native journey in src/tools/campaigns_tests.rs
  // (`card_fixtures_are_real_campaign_outputs`), checked above.
  const app = await subscribed(worker, "card-journey@example.com", "growth");
  const free = await connect(worker, { sub: "card-free@example.com", app: true, scope: "mcp mcp:act" });
  const seen = [];
  const call = async (c, name, args = {}) => {
    const r = await c.callTool({ name, arguments: args });
    assert.equal(r.isError, false, `${name}: ${r.content[0].text}`);
    seen.push(r);
    return r.structuredContent;
  };
  const answer = (q, text) => call(app, q.tool, { ...q.arguments, answers: [...q.answers, { card: q.card, answer: text }] });
  try {
    await call(free, "start_checkout", { plan: "starter" });
    await call(app, "save_offer", {
      product: "Ledgerly", description: "Month-end close automation for finance teams.", value_proposition: "Close the books in 3 days instead of 10.",
      company_name: "Ledgerly Ltd", website: "https://ledgerly.io", postal_address: "12 Finsbury Square, London EC2A 1AS", proof_points: ["Used by 140 finance teams"],
    });
    await call(app, "remember", { note: "Prefers a plain, friendly tone.", topic: "tone" });
    await call(app, "save_target", { description: "Finance leaders at UK and Irish software companies" });
    await call(app, "save_target_filters", { countries: ["Ireland", "UK"], titles: ["CFO", "Finance Director"], exclude_company_domains: ["ledgerly.io"] });
    await call(app, "estimate_lead_pool");
    await call(app, "estimate_lead_pool", { countries: ["Ireland"], titles: ["CFO"] });
    await call(app, "preview_lead_sample", { count: 5 });
    await call(app, "confirm_target");
    const importing = await call(app, "import_leads", { max_leads: 40 });
    await call(app, "list_pending_approvals");
    await call(app, "decide_approval", { id: importing.id, decision: "approve" });
    await call(app, "save_playbook", {
      tone: "Plain, peer-to-peer", angle: "The 10-day close is a choice", persona: "CFO at a scaling software company", sender_name: "Anna Berg", sender_title: "Co-founder",
      pain_points: ["Month-end close takes 8–12 working days"], rules: ["Never more than 120 words"], objections: [{ objection: "We just bought an ERP.", answer: "Ledgerly sits on top of it." }],
    });
    const seq = await call(app, "save_sequence", {
      steps: [
        { subject: "Closing the books at {{company}}", body: "Hi {{first_name|there}},\n\nMost finance teams at {{company}} take ten days to close the month. Ours take three.\n\n{{sender_name}}" },
        { delay_days: 3, body: "Hi {{first_name|there}}, our customers cut reconciliation time by 68%." },
      ],
    });
    await call(app, "approve_sequence", { version: seq.version });
    await call(app, "check_first_email");
    await call(app, "estimate_campaign_plan");
    await call(app, "size_sending_capacity", { volume: 45, unit: "new_leads_per_day", steps: 2 });
    await call(app, "confirm_sizing");
    await call(app, "list_warmed_domains");
    await call(app, "check_domains", { domains: ["getledgerly.com", "ledgerly.io"] });
    await answer(await call(app, "choose_sending_source"), "own_names");
    await answer(await call(app, "propose_domains"), "set_1");
    await answer(await call(app, "propose_email", { sender_name: "Anna Berg" }), "names");
    const order = await call(app, "order_sending_setup");
    await call(app, "decide_approval", { id: order.id, decision: "approve" });
    await call(app, "get_sending_setup");
    await call(app, "start_warmup");
    await call(app, "get_plans_and_billing");
    await call(app, "open_billing_portal");
    await call(app, "contact_support", { subject: "DMARC still pending on one domain", message: "It has been two days.", category: "deliverability", reply_to: "anna@ledgerly.io" });
    await call(app, "get_workspace_context");
  } finally {
    await app.close();
    await free.close();
  }
  const kinds = new Set(seen.map((r) => r.structuredContent.kind));
  const missing = Object.keys(FIXTURES).filter((k) => !kinds.has(k));
  assert.deepEqual(missing, ["campaign", "replies"], "every other kind came from the Worker");
  for (const r of seen) await assertShows(r, { label: " (from the Worker)" });
});

/** "2026-12-15" → "15 Dec", as the card writes dates. */
const dayMonth = (iso) => new Date(`${iso}T00:00:00Z`).toLocaleDateString("en-GB", { day: "numeric", month: "short", timeZone: "UTC" });

test("specific views show what matters", async () => {
  const checks = {
    lead_preview: async (host) => {
      assert.equal(await host.card.locator("table tbody tr").count(), FIXTURES.lead_preview.structuredContent.leads.length);
    },
    lead_count: async (host) => assert.ok((await host.card.locator("svg.chart rect.bar").count()) >= 4, "a bar per bucket"),
    campaign_estimate: async (host) => assert.equal(await host.card.locator("svg.chart circle.dotmark").count(), 3),
    campaign: async (host) =>
      assert.equal(await host.card.locator("svg.chart").first().locator("rect.bar").count(), FIXTURES.campaign.structuredContent.daily.length),
    sending_setup: async (host) => {
      const goal = await host.card.locator(".timeline li.goal").innerText();
      assert.match(goal, /Ready to send/);
      assert.ok(goal.includes(dayMonth(FIXTURES.sending_setup.structuredContent.readyDate)), goal);
    },
    warmup: async (host) => {
      const h2 = await host.card.locator("h2").innerText();
      assert.match(h2, /Ready to send/);
      assert.ok(h2.includes(dayMonth(FIXTURES.warmup.structuredContent.readyDate)), h2);
    },
    replies: async (host) => {
      const theirs = host.card.locator("figure.theirs");
      const first = FIXTURES.replies.structuredContent.replies[0];
      assert.equal(await theirs.count(), FIXTURES.replies.structuredContent.replies.length);
      const caption = await theirs.first().locator("figcaption").innerText();
      assert.match(caption, /Prospect's words/);
      assert.ok(caption.includes(first.from.email), caption);
    },
    plans: async (host) => assert.equal(await host.card.locator(".plan").count(), FIXTURES.plans.structuredContent.plans.length),
    approval: async (host) => {
      const text = await host.card.locator("#root").innerText();
      assert.match(text, /can't be undone/);
      assert.match(text, /Expires in 23 h 40 min/);
      assert.equal(await host.card.getByRole("button", { name: "Approve" }).count(), 1);
    },
  };
  for (const [kind, check] of Object.entries(checks)) {
    const host = await open();
    await host.deliver(result(FIXTURES[kind]));
    await check(host);
    await assertClean(host);
  }
});

test("prospect text and odd fields stay text; unknown shapes get a labelled generic view", async () => {
  const evil = structuredClone(FIXTURES.replies);
  evil.structuredContent.replies[0].body = '<img src="x" onerror="parent.postMessage({jsonrpc:\'2.0\',method:\'ui/message\'},\'*\')"><script>alert(1)</script>';
  evil.structuredContent.replies[0].from.name = "<b>Mallory</b>";
  let host = await open();
  await host.deliver(result(evil));
  assert.equal(await host.card.locator("img, script:not(body > script), b").count(), 0, "no markup from the result");
  assert.match(await host.card.locator("figure.theirs blockquote").first().innerText(), /<img src="x"/);
  await assertClean(host);

  host = await open();
  await host.deliver({ content: [{ type: "text", text: "x" }], structuredContent: { kind: "lead_preview", people: [{ fullName: "Ada" }] } });
  let v = await view(host);
  assert.equal(v.view, "generic");
  assert.match(v.text, /Lead sample/);
  assert.match(v.text, /Ada/);
  await host.screenshot(join(SHOTS, "generic.png"));
  await assertClean(host);

  host = await open();
  await host.deliver({ content: [{ type: "text", text: "x" }], structuredContent: { kind: "brand_new_kind", score: 3 } });
  v = await view(host);
  assert.equal(v.view, "generic");
  assert.match(v.text, /Brand new kind/);
  await assertClean(host);

  // A kind named like an Object.prototype member finds no view or label of Object's.
  for (const kind of ["constructor", "toString", "__proto__"]) {
    host = await open();
    await host.deliver({ content: [{ type: "text", text: "x" }], structuredContent: { kind, score: 3 } });
    v = await view(host);
    assert.equal(v.view, "generic", kind);
    assert.doesNotMatch(v.text, /native code|function/, kind);
    await assertClean(host);
  }
});

test("Approve calls decide_approval through the host and shows the new status", async () => {
  // The host answers this tools/call itself, with the approval decide_approval returns once done
  // (PRODUCT §6), to check the protocol frame by frame; the tests below take the same click all
  // the way to the Worker.
  const pending = FIXTURES.approval.structuredContent;
  const calls = [];
  const host = await open({
    onCallTool: async (params) => {
      calls.push(params);
      return {
        content: [{ type: "text", text: "Approved and done." }],
        structuredContent: { ...pending, status: "done", decidedAt: NOW + 1000 },
        isError: false,
      };
    },
  });
  await host.deliver(result(FIXTURES.approval));
  const n = await host.renders();
  await host.card.getByRole("button", { name: "Approve" }).click();
  await host.card.locator(".approval.done").waitFor();
  assert.deepEqual(calls, [{ name: "decide_approval", arguments: { id: pending.id, decision: "approve" } }]);
  const sent = (await host.frames()).filter((f) => f.method === "tools/call");
  assert.equal(sent.length, 1, "exactly one tools/call");
  assert.deepEqual(sent[0].params, { name: "decide_approval", arguments: { id: pending.id, decision: "approve" } });
  const text = await host.card.locator("#root").innerText();
  assert.match(text, /Done/);
  assert.equal(await host.card.getByRole("button", { name: "Approve" }).count(), 0, "no second decision");
  await host.page.waitForFunction(() => window.vsHost.events().some((e) => e.type === "ui/update-model-context"));
  const told = (await host.events()).filter((e) => e.type === "ui/update-model-context");
  assert.deepEqual(told[0].params, { content: [{ type: "text", text: "Approved and done." }] }, "the assistant learns what the user decided");
  // The decided approval takes the pending one's place: no new render, one box.
  assert.equal(await host.renders(), n);
  assert.equal(await host.card.locator(".approval").count(), 1);
  await host.settle();
  await host.screenshot(join(SHOTS, "approval-done.png"));
  await assertClean(host);
});

test("Approve reaches decide_approval on the Worker, and its answer is shown", async () => {
  // The Claude app's connection: the only one that lists decide_approval (PRODUCT §3).
  const app = await connect(worker, { sub: "card-app@example.com", app: true, scope: "mcp mcp:act" });
  try {
    const { tools } = await app.listTools();
    const decide = tools.find((t) => t.name === "decide_approval");
    assert.deepEqual(decide._meta.ui.visibility, ["app"], "hidden from the model, callable by the card");
    const missing = "apr_" + "0".repeat(32);
    const before = worker.requestLogs().filter((l) => l.tool === "decide_approval").length;
    const host = await open({ onCallTool: (p) => app.callTool(p) });
    await host.deliver(result({ ...FIXTURES.approval, structuredContent: { ...FIXTURES.approval.structuredContent, id: missing } }));
    await host.card.getByRole("button", { name: "Approve" }).click();
    await host.card.getByText(/There is no approval `apr_0+` in this workspace/).waitFor();
    assert.equal(await host.card.getByRole("button", { name: "Approve" }).isEnabled(), true, "the user can try again");
    const logged = worker.requestLogs().filter((l) => l.tool === "decide_approval").slice(before);
    assert.equal(logged.length, 1, "the card's tools/call reached the Worker once");
    await assertClean(host);
  } finally {
    await app.close();
  }
});

test("Approve on a real pending approval: the Worker executes it once and the card shows done", async () => {
  // A real approval: upgrade_plan in the sandbox, asked for by the Claude app's connection of a
  // subscribed workspace. Its expiry is real time, so this host keeps the real clock.
  const app = await subscribed(worker, "card-upgrade@example.com");
  const host = await openHost(browser);
  try {
    const asked = await app.callTool({ name: "upgrade_plan", arguments: { plan: "growth" } });
    assert.equal(asked.isError, false, asked.content[0].text);
    const pending = asked.structuredContent;
    assert.equal(pending.status, "pending");
    assert.equal(pending.decideHere, true, "the Claude app decides in the card");
    host.onCallTool = (p) => app.callTool(p);
    await host.load(html, { hostContext: LIGHT });
    await host.deliver(asked);
    assert.match(await host.card.locator("#root").innerText(), /Expires in 23 h/);
    const before = worker.requestLogs().filter((l) => l.tool === "decide_approval").length;
    await host.card.getByRole("button", { name: "Approve" }).click();
    await host.card.locator(".approval.done").waitFor();
    const text = await host.card.locator("#root").innerText();
    assert.match(text, /Now on the Growth plan/);
    assert.equal(await host.card.getByRole("button", { name: "Approve" }).count(), 0, "nothing left to decide");
    const sent = (await host.frames()).filter((f) => f.method === "tools/call");
    assert.deepEqual(sent.map((f) => f.params), [{ name: "decide_approval", arguments: { id: pending.id, decision: "approve" } }]);
    const logged = worker.requestLogs().filter((l) => l.tool === "decide_approval").slice(before);
    assert.deepEqual(logged.map((l) => l.outcome), ["ok"], "decide_approval reached the Worker once");
    const plans = (await app.callTool({ name: "get_plans_and_billing", arguments: {} })).structuredContent;
    assert.equal(plans.current.id, "growth", "the upgrade was executed");
    assert.equal(plans.charges.length, 2, "the first month and exactly one upgrade charge");
    await host.settle();
    await host.screenshot(join(SHOTS, "approval-worker-done.png"));
    await assertClean(host);
  } finally {
    await host.close();
    await app.close();
  }
});

test("Reject, a refused decision, and a host error keep the user in control", async () => {
  const pending = FIXTURES.approval.structuredContent;
  let answer;
  const host = await open({ onCallTool: async () => answer() });
  await host.deliver(result(FIXTURES.approval));
  const approve = host.card.getByRole("button", { name: "Approve" });
  const reject = host.card.getByRole("button", { name: "Reject" });

  answer = async () => ({ content: [{ type: "text", text: "This approval expired; ask for a new one." }], isError: true });
  await approve.click();
  await host.card.getByText("This approval expired; ask for a new one.").waitFor();
  assert.equal(await approve.isEnabled(), true, "the buttons come back after a refusal");

  answer = async () => {
    throw new Error("network down");
  };
  await approve.click();
  await host.card.getByText("Could not reach VibeSell.").waitFor();
  assert.equal(await approve.isEnabled(), true);

  answer = async () => ({ content: [{ type: "text", text: "Rejected." }], structuredContent: { ...pending, status: "rejected" }, isError: false });
  await reject.click();
  await host.card.locator(".approval.rejected").waitFor();
  const calls = (await host.events()).filter((e) => e.type === "tools/call").map((e) => e.params.arguments.decision);
  assert.deepEqual(calls, ["approve", "approve", "reject"]);
  await assertClean(host);
});

test("an approval's clock ticks while it is shown, and stops once a decision replaces it", async () => {
  // The page's timers are the test's: minutes pass in an instant.
  const host = await openHost(browser, { timezoneId: BROWSER_ZONE });
  try {
    await host.page.clock.install({ time: NOW });
    const pending = FIXTURES.approval.structuredContent;
    host.onCallTool = async () => ({ content: [{ type: "text", text: "Rejected." }], structuredContent: { ...pending, status: "rejected" }, isError: false });
    await host.load(html, { hostContext: LIGHT });
    await host.deliver(result({ ...FIXTURES.approval, structuredContent: { ...pending, expiresAt: NOW + 10 * 60_000 } }));
    const frame = host.frame();
    const when = () => frame.evaluate(() => (window.shown ??= document.querySelector(".approval .when")).textContent);
    assert.match(await when(), /^Expires in 9 min/);
    await host.page.clock.runFor(3 * 60_000);
    assert.match(await when(), /^Expires in 6 min/, "the countdown moves while the approval is shown");
    await host.card.getByRole("button", { name: "Reject" }).click();
    await host.card.locator(".approval.rejected").waitFor();
    const replaced = await when();
    await host.page.clock.runFor(10 * 60_000);
    assert.equal(await frame.evaluate(() => window.shown.isConnected), false);
    assert.equal(await when(), replaced, "the replaced view's clock stopped");
    await assertClean(host);
  } finally {
    await host.page.close();
  }
});

test("an approval that expires while shown can no longer be approved", async () => {
  const host = await openHost(browser, { timezoneId: BROWSER_ZONE });
  try {
    await host.page.clock.install({ time: NOW });
    host.onCallTool = async () => assert.fail("nothing is decided after expiry");
    await host.load(html, { hostContext: LIGHT });
    const pending = FIXTURES.approval.structuredContent;
    await host.deliver(result({ ...FIXTURES.approval, structuredContent: { ...pending, expiresAt: NOW + 60_000 } }));
    const approve = host.card.getByRole("button", { name: "Approve" });
    assert.equal(await approve.isEnabled(), true);
    await host.page.clock.runFor(90_000);
    assert.match(await host.card.locator(".approval .when").innerText(), /^Expired/);
    assert.equal(await approve.isDisabled(), true);
    await assertClean(host);
  } finally {
    await host.page.close();
  }
});

test("approvals decided elsewhere link to VibeSell; expired ones cannot be approved", async () => {
  let host = await open();
  await host.deliver(result(FIXTURES.approvals));
  // The second approval has decideHere: false, so only the first has buttons.
  assert.equal(await host.card.getByRole("button", { name: "Approve" }).count(), 1);
  await host.card.getByRole("button", { name: /Decide on VibeSell/ }).click();
  await host.page.waitForFunction(() => window.vsHost.events().some((e) => e.type === "ui/open-link"));
  const links = (await host.events()).filter((e) => e.type === "ui/open-link");
  assert.deepEqual(links[0].params, { url: FIXTURES.approvals.structuredContent.approvals[1].appUrl });
  await assertClean(host);

  host = await open();
  await host.deliver(result({ ...FIXTURES.approval, structuredContent: { ...FIXTURES.approval.structuredContent, expiresAt: NOW - 60_000 } }));
  assert.match(await host.card.locator("#root").innerText(), /Expired/);
  assert.equal(await host.card.getByRole("button", { name: "Approve" }).isDisabled(), true);
  await assertClean(host);

  // Approved and being carried out: still pending, with a result, and nothing left to decide.
  host = await open();
  const executing = "Approved by the user; VibeSell is carrying it out.";
  await host.deliver(result({ ...FIXTURES.approval, structuredContent: { ...FIXTURES.approval.structuredContent, result: executing } }));
  assert.ok((await host.card.locator("#root").innerText()).includes(executing));
  assert.equal(await host.card.getByRole("button", { name: "Approve" }).count(), 0);
  await assertClean(host);
});

test("a choice sends the user's answer with ui/message and never answers by itself", async () => {
  const choice = FIXTURES.choice.structuredContent;
  let host = await open();
  await host.deliver(result(FIXTURES.choice));
  assert.equal((await host.events()).filter((e) => e.type === "ui/message").length, 0, "nothing is sent before the user picks");
  await host.card.getByRole("button", { name: /Start sooner/ }).click();
  await host.card.getByText("Sent:").waitFor();
  const messages = (await host.events()).filter((e) => e.type === "ui/message");
  assert.equal(messages.length, 1);
  assert.equal(messages[0].params.role, "user");
  const [block] = messages[0].params.content;
  assert.equal(block.type, "text");
  assert.ok(block.text.includes(choice.question) && block.text.includes(choice.card) && block.text.includes("already_warmed"), block.text);
  assert.equal(await host.card.getByRole("button", { name: /Send under my brand/ }).isDisabled(), true, "one answer per question");
  assert.equal((await host.frames()).filter((f) => f.method === "tools/call").length, 0, "the card never calls the tool itself");
  await host.screenshot(join(SHOTS, "choice-answered.png"));
  await assertClean(host);

  host = await open();
  await host.deliver(result(FIXTURES.choice));
  await host.card.getByRole("textbox").fill("Whichever is cheaper");
  await host.card.getByRole("textbox").press("Enter");
  await host.card.getByText("Sent:").waitFor();
  const [free] = (await host.events()).filter((e) => e.type === "ui/message");
  assert.ok(free.params.content[0].text.endsWith("Whichever is cheaper"), free.params.content[0].text);
  await assertClean(host);
});

test("checkout and billing portal links open through the host", async () => {
  for (const kind of ["checkout", "portal"]) {
    const host = await open();
    await host.deliver(result(FIXTURES[kind]));
    await host.card.getByRole("button", { name: /Open the/ }).click();
    await host.page.waitForFunction(() => window.vsHost.events().some((e) => e.type === "ui/open-link"));
    const [link] = (await host.events()).filter((e) => e.type === "ui/open-link");
    assert.deepEqual(link.params, { url: FIXTURES[kind].structuredContent.url });
    await assertClean(host);
  }
});

test("a host that refuses an answer or a link leaves the user a way on", async () => {
  let host = await open();
  await host.deliver(result(FIXTURES.choice));
  await host.page.evaluate(() => window.vsHost.refuse("ui/message"));
  const option = host.card.getByRole("button", { name: /Start sooner/ });
  await option.click();
  await host.card.getByText("Not sent.").waitFor();
  assert.equal(await option.isEnabled(), true, "the options come back");
  assert.equal(await host.card.locator(".option.picked").count(), 0);
  assert.equal(await host.card.getByText("Sent:").count(), 0);
  await assertClean(host);

  host = await open();
  await host.deliver(result(FIXTURES.checkout));
  await host.page.evaluate(() => window.vsHost.refuse("ui/open-link"));
  await host.card.getByRole("button", { name: /Open the/ }).click();
  const url = FIXTURES.checkout.structuredContent.url;
  await host.card.locator(".mono.sel", { hasText: url }).waitFor();
  await assertClean(host);
});

test("a long unbroken word in an email wraps on a narrow screen", async () => {
  const host = await open({ width: 360 });
  const link = `https://cal.example.com/anna-berg/intro?utm_source=vibesell&utm_campaign=${"q1close".repeat(12)}`;
  const sequence = structuredClone(FIXTURES.sequence);
  sequence.structuredContent.steps[0].body += `\n\nBook a time: ${link}`;
  await host.deliver(result(sequence));
  const clipped = await host.frame().evaluate(() =>
    [...document.querySelectorAll(".mail .body, .mail .subj")].filter((e) => e.scrollWidth > e.clientWidth).length,
  );
  assert.equal(clipped, 0, "no email text is cut off at the card's edge");
  assert.ok((await host.card.locator(".mail .body").first().innerText()).includes(link));
  await assertClean(host);
});

test("on a narrow screen the views stay readable", async () => {
  for (const kind of ["lead_preview", "sending_setup", "campaign"]) {
    const host = await open({ width: 360 });
    await host.deliver(result(FIXTURES[kind]));
    const overflow = await host.frame().evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    assert.ok(overflow <= 0, `${kind} does not scroll sideways at 360px (${overflow}px)`);
    await host.settle();
    await host.screenshot(join(SHOTS, `${kind}-narrow.png`));
    await assertClean(host);
  }
});

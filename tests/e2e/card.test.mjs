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

// What a host like Claude hands over: theme, locale, time zone and its design tokens.
const LIGHT = {
  theme: "light",
  locale: "en-GB",
  timeZone: "Europe/London",
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

before(async () => {
  worker = await startWorker();
  client = await connect(worker, { scope: "mcp mcp:act" });
  browser = await launchBrowser();
  page = await openHost(browser, { now: NOW });
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
      styles: { variables: { ...LIGHT.styles.variables, "--color-background-primary": "#fbfaf7", "--font-sans": "serif", "--color-text-info": "url(https://example.com/x.png)" } },
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
        info: document.documentElement.style.getPropertyValue("--color-text-info"),
        lang: document.documentElement.lang,
      };
    });
  const light = await look();
  assert.equal(light.theme, "light");
  assert.equal(light.bg, "rgb(251, 250, 247)");
  assert.equal(light.fg, "rgb(31, 30, 27)");
  assert.equal(light.font, "serif");
  assert.equal(light.info, "", "a variable that would load something is ignored");
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

test("results from the Worker render: workspace, offer, memory", async () => {
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
  for (const [kind, res, expect] of [
    ["offer", offer, ["Ledgerly", "Close the books in 3 days instead of 10.", "Used by 140 finance teams"]],
    ["memory", note, ["Prefers a plain, friendly tone; no hype.", "tone"]],
    ["workspace", ctx, ["Ledgerly", ctx.structuredContent.nextStep.title, "Prefers a plain, friendly tone"]],
  ]) {
    const host = await open();
    await host.deliver(res);
    const v = await view(host);
    assert.equal(v.kind, kind);
    assert.equal(v.view, "designed", `${kind} from the Worker gets its designed view`);
    for (const text of expect) assert.ok(v.text.includes(text), `${kind} shows ${text}`);
    await host.screenshot(join(SHOTS, `${kind}-worker.png`));
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

test("every kind in seed 001's table has a designed view", async () => {
  const kinds = Object.keys(FIXTURES).sort();
  assert.equal(kinds.length, 26, "one fixture per kind of seed 001");
  for (const kind of kinds) {
    for (const context of DARK_TOO.includes(kind) ? [LIGHT, DARK] : [LIGHT]) {
      const host = await open({ context });
      await host.deliver(result(FIXTURES[kind]));
      const v = await view(host);
      assert.equal(v.kind, kind);
      assert.equal(v.view, "designed", `${kind} falls back to the generic view: align the fixture or card/card.js`);
      assert.ok(!/undefined|NaN|\[object Object\]/.test(v.text), `${kind} shows no undefined/NaN/[object Object]: ${v.text}`);
      await host.screenshot(join(SHOTS, `${kind}${context.theme === "dark" ? "-dark" : ""}.png`));
      await assertClean(host);
    }
  }
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
      assert.equal(await host.card.locator("svg.chart rect.bar").count(), FIXTURES.campaign.structuredContent.daily.length),
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
      assert.ok(caption.includes(first.from.name), caption);
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
  assert.ok((await host.renders()) >= n);
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
    const host = await open({ onCallTool: (p) => app.callTool(p) });
    await host.deliver(result({ ...FIXTURES.approval, structuredContent: { ...FIXTURES.approval.structuredContent, id: missing } }));
    await host.card.getByRole("button", { name: "Approve" }).click();
    await host.card.getByText(/There is no approval `apr_0+` in this workspace/).waitFor();
    assert.equal(await host.card.getByRole("button", { name: "Approve" }).isEnabled(), true, "the user can try again");
    const logged = worker.requestLogs().filter((l) => l.tool === "decide_approval");
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

test("on a narrow screen the views stay readable", async () => {
  for (const kind of ["lead_preview", "sending_setup", "campaign"]) {
    const host = await open({ width: 360 });
    await host.deliver(result(FIXTURES[kind]));
    const overflow = await host.frame().evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    assert.ok(overflow <= 0, `${kind} does not scroll sideways at 360px (${overflow}px)`);
    await host.screenshot(join(SHOTS, `${kind}-narrow.png`));
    await assertClean(host);
  }
});

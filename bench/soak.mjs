// A soak (issue 46, item 7): N workspaces walk the whole journey at once through the MCP
// endpoint of the real Worker in workerd, on loopback only, then the invariants are checked and
// the figures printed. Bounded: it stops by itself (each wait has a deadline) and is not part of
// bin/test.
//
//   node bench/soak.mjs [workspaces=50]        (after bin/build)
//
// Each workspace: an OAuth grant the way a client gets one (registration, PKCE, the sign-in and
// consent forms), its refresh token refreshed by 3 requests at once, a subscription paid on the
// sandbox checkout page, an upgrade, an order of already-warmed mailboxes, a lead import, the
// sequence approved, one lead unsubscribed through its link; then, on the same state with the
// sandbox clock sped up (a simulated day in about a second), the campaign staged, launched,
// stopped, resumed and followed to its end, with a second refresh on the way. Every approval is
// decided twice at once, from two clients. Tools are called with the OAuth access token; the
// decisions with the Claude app's (a development token of the same user and workspace), the one
// client that decides in the card (PRODUCT §6).
//
// Invariants checked at the end, per workspace, each failure printed:
// - one execution per approval: of the two decisions, exactly one applied, both saw the same final
//   state, and what the execution does was done once (one upgrade charge, the order's mailboxes
//   counted once, the imported leads counted once, the campaign in the state of its last decision);
// - one live refresh token per grant: the concurrent refreshes all answered the same new token,
//   which then refreshes once more;
// - charges equal approvals: the charges are the first month plus one per upgrade carried out;
// - suppression honoured by every send: the lead unsubscribed before staging is not in the
//   campaign and never answers it, and the campaign contacted no more leads than it holds;
// - no 5xx: in every request the Worker logged.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { startWorker, connect } from "../tests/e2e/harness.mjs";
import { oauthClient } from "./oauth.mjs";

const N = Number(process.argv[2] ?? 50);
if (!Number.isInteger(N) || N < 1) throw new Error("usage: node bench/soak.mjs [workspaces]");
const CARD_OK = "4242 4242 4242 4242";
const FAST = JSON.stringify({ timeScale: 100000 });
const LEADS = 30;
const vars = {
  // Every request logged, so that the count of 5xx covers all of them.
  LOG_REQUESTS: "all",
  // The OAuth budgets are per client address, and every workspace here comes from loopback.
  OAUTH_RATE_LIMITS: "register=1000000/60,token=1000000/60,token_ip=1000000/60,revoke=1000000/60,authorize=1000000/60",
};

const failures = [];
const fail = (ws, what) => failures.push(`${ws}: ${what}`);
const check = (ws, cond, what) => cond || fail(ws, what);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const figures = { toolCalls: 0, decisions: 0, refreshes: 0, phase: {} };

function mcp(worker, bearer) {
  const transport = new StreamableHTTPClientTransport(new URL(worker.mcpUrl), {
    requestInit: { headers: { Authorization: `Bearer ${bearer}` } },
  });
  const client = new Client({ name: "vibesell-soak", version: "1.0.0" });
  return client.connect(transport).then(() => client);
}

async function call(client, name, args = {}) {
  figures.toolCalls++;
  const r = await client.callTool({ name, arguments: args });
  if (r.isError) throw new Error(`${name}: ${r.content?.[0]?.text}`);
  return r.structuredContent;
}
async function answer(client, choice, text) {
  return call(client, choice.tool, { ...choice.arguments, answers: [...choice.answers, { card: choice.card, answer: text }] });
}
async function until(client, tool, args, done, ms = 120_000) {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await call(client, tool, args);
    if (done(v)) return v;
    if (Date.now() > deadline) throw new Error(`${tool}: still not there after ${ms / 1000} s: ${JSON.stringify(v).slice(0, 300)}`);
    await sleep(500);
  }
}

/** The claims of a JWT (the Worker's own access token: its user and workspace). */
const claims = (jwt) => JSON.parse(Buffer.from(jwt.split(".")[1], "base64url").toString());

/** One workspace's state across both phases. */
class Walker {
  constructor(i) {
    this.i = i;
    this.email = `soak-${i}@example.com`;
    this.approvals = []; // { tool, id, status }
  }

  /** Refreshes the grant with 3 requests at once; keeps the one token they must all return. */
  async refresh(oauth) {
    const answers = await Promise.all([0, 1, 2].map(() => oauth.refresh(this.refreshToken)));
    figures.refreshes += answers.length;
    const ok = answers.filter((a) => a.status === 200);
    const distinct = new Set(ok.map((a) => a.json.refresh_token));
    check(this.email, ok.length === answers.length, `concurrent refresh statuses ${answers.map((a) => a.status)}`);
    check(this.email, distinct.size === 1, `concurrent refreshes returned ${distinct.size} refresh tokens`);
    this.refreshToken = ok[0].json.refresh_token;
    this.accessToken = ok[0].json.access_token;
  }

  async open(worker) {
    await this.tools?.close();
    await this.decider?.close();
    await this.other?.close();
    const { sub, ws } = claims(this.accessToken);
    this.tools = await mcp(worker, this.accessToken);
    // Two Claude-app clients of the same user, for decisions made twice at once.
    this.decider = await connect(worker, { sub, ws, app: true });
    this.other = await connect(worker, { sub, ws, app: true });
  }

  /** Decides approval `a` from two clients at once; both must see one final outcome. */
  async decide(a) {
    figures.decisions += 2;
    const both = await Promise.all(
      [this.decider, this.other].map((c) => c.callTool({ name: "decide_approval", arguments: { id: a.id, decision: "approve" } })),
    );
    const applied = both.filter((r) => !r.isError && !r.content[0].text.startsWith("This approval was already decided"));
    check(this.email, both.every((r) => !r.isError), `${a.action}: a decision failed: ${both.map((r) => r.content[0].text).join(" | ")}`);
    let status = both[0].structuredContent?.status;
    // The loser may have stopped waiting while the winner still carries it out.
    for (let n = 0; status === "pending" && n < 100; n++) {
      await sleep(300);
      const r = await this.decider.callTool({ name: "decide_approval", arguments: { id: a.id, decision: "approve" } });
      status = r.structuredContent?.status;
    }
    check(this.email, applied.length === 1, `${a.action}: ${applied.length} decisions applied`);
    check(this.email, status === "done", `${a.action}: ended ${status}: ${both[0].structuredContent?.result}`);
    this.approvals.push({ tool: a.action, id: a.id, status });
    return status;
  }

  async ask(tool, args) {
    return this.decide(await call(this.tools, tool, args));
  }

  async planned(worker, oauth) {
    const grant = await oauth.grant(this.email);
    this.refreshToken = grant.refresh_token;
    this.accessToken = grant.access_token;
    await this.refresh(oauth);
    await this.open(worker);
    const t = this.tools;
    const checkout = await call(t, "start_checkout", { plan: "starter" });
    const paid = await fetch(checkout.url, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded", origin: worker.origin },
      body: new URLSearchParams({ card: CARD_OK }).toString(),
    });
    if (paid.status !== 200) throw new Error(`checkout page: ${paid.status}`);
    await this.ask("upgrade_plan", { plan: "growth" });
    await call(t, "save_offer", {
      product: `Ledgerly ${this.i}`,
      description: "Close automation for finance teams",
      value_proposition: "Cuts month-end close from 10 days to 3",
      website: "https://www.ledgerly.io",
      postal_address: "1 Main St, Springfield",
    });
    await call(t, "size_sending_capacity", { volume: 90, unit: "emails_per_day", steps: 3 });
    await call(t, "confirm_sizing");
    await answer(t, await call(t, "choose_sending_source"), "already_warmed");
    await answer(t, await call(t, "propose_warmed_domains"), "set_1");
    const step = await answer(t, await call(t, "propose_email", { sender_name: "Anna Berg" }), "names");
    this.mailboxes = step.addresses.length;
    await this.ask("order_sending_setup");
    await call(t, "save_target", { description: "Finance leaders at Irish and UK software companies" });
    await call(t, "save_target_filters", { countries: ["Ireland", "UK"], titles: ["CFO", "Finance Director", "Head of Finance"] });
    await call(t, "confirm_target");
    await this.ask("import_leads", { max_leads: LEADS });
    await call(t, "save_playbook", { tone: "plain", angle: "speed", sender_name: "Anna Berg" });
    const seq = await call(t, "save_sequence", {
      steps: [
        { subject: "Closing the books at {{company}}", body: "Hi {{first_name|there}},\n\nShall we talk?\n\n{{sender_name}}" },
        { delay_days: 3, body: "Hi {{first_name|there}}, our customers cut reconciliation time by 68%." },
      ],
    });
    await call(t, "approve_sequence", { version: seq.version });
    // One lead unsubscribes through the link of its first email (the one-click POST, RFC 8058).
    const first = await call(t, "check_first_email", { lead: 1 });
    // Its address is shown masked (`j•••@acme.com`): its first letter and domain, with its name.
    this.unsubscribed = { name: first.lead.name, masked: first.to };
    const link = first.body.match(/Unsubscribe: (\S+)/)[1];
    const r = await fetch(link, { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded" }, body: "List-Unsubscribe=One-Click" });
    if (r.status !== 200) throw new Error(`unsubscribe link: ${r.status}`);
    this.ctxAfterPlan = await call(t, "get_workspace_context");
  }

  async sent(worker, oauth) {
    await this.refresh(oauth);
    await this.open(worker);
    const t = this.tools;
    await until(t, "get_sending_setup", {}, (s) => s.status === "ready");
    const draft = await call(t, "stage_campaign");
    this.draft = draft;
    await this.ask("launch_campaign");
    await until(t, "get_campaign", {}, (c) => c.stats.sent >= 10 || c.status === "completed");
    if ((await call(t, "get_campaign")).status === "active") {
      await this.ask("stop_campaign");
      await this.ask("resume_campaign");
    }
    this.done = await until(t, "get_campaign", {}, (c) => c.status === "completed");
    const replies = [];
    let cursor;
    do {
      const page = await call(t, "list_replies", { limit: 25, ...(cursor ? { cursor } : {}) });
      replies.push(...page.replies);
      cursor = page.nextCursor;
    } while (cursor);
    this.replies = replies;
    this.billing = await call(t, "get_plans_and_billing");
    this.ctx = await call(t, "get_workspace_context");
    // The refresh token the last refresh returned is the grant's one live token.
    const last = await oauth.refresh(this.refreshToken);
    figures.refreshes++;
    check(this.email, last.status === 200, `the live refresh token was refused: ${last.status}`);
  }

  invariants() {
    const e = this.email;
    const upgrades = this.approvals.filter((a) => a.tool === "upgrade_plan" && a.status === "done").length;
    check(e, this.billing.charges.length === 1 + upgrades, `charges ${this.billing.charges.length}, upgrades done ${upgrades}`);
    check(e, this.billing.current.id === "growth", `plan ${this.billing.current.id}`);
    check(e, this.billing.usage.mailboxes === this.mailboxes, `mailboxes counted ${this.billing.usage.mailboxes}, ordered ${this.mailboxes}`);
    const imported = this.ctx.leads.imports.reduce((s, j) => s + j.imported, 0);
    check(e, this.ctx.leads.total === imported, `leads ${this.ctx.leads.total}, imported ${imported}`);
    check(e, this.draft.leads === imported - 1, `staged ${this.draft.leads} of ${imported} with one unsubscribed`);
    check(e, this.done.stats.contacted <= this.draft.leads, `contacted ${this.done.stats.contacted} of ${this.draft.leads}`);
    const [initial, domain] = this.unsubscribed.masked.split("•••@");
    const isUnsubscribed = (r) => r.from.name === this.unsubscribed.name && r.from.email.startsWith(initial) && r.from.email.endsWith(`@${domain}`);
    check(e, !this.replies.some(isUnsubscribed), "the unsubscribed lead answered an email it was never to get");
    check(e, this.ctx.leads.suppressed >= 1, "the unsubscribe is on the suppression list");
  }
}

async function phase(name, walkers, step) {
  const started = Date.now();
  const results = await Promise.allSettled(walkers.map((w) => step(w)));
  results.forEach((r, i) => r.status === "rejected" && fail(walkers[i].email, `${name}: ${r.reason?.stack ?? r.reason}`));
  figures.phase[name] = { seconds: (Date.now() - started) / 1000, failed: results.filter((r) => r.status === "rejected").length };
  return walkers.filter((_, i) => results[i].status === "fulfilled");
}

const dir = mkdtempSync(join(tmpdir(), "vibesell-soak-"));
let worker;
const statuses = {};
const tally = () => {
  for (const l of worker.requestLogs()) statuses[l.status] = (statuses[l.status] ?? 0) + 1;
};
try {
  const walkers = Array.from({ length: N }, (_, i) => new Walker(i));
  // Real time while the questions are answered (their cards show dates, which must not move).
  worker = await startWorker({ persist: dir, vars });
  const oauth = await oauthClient(worker.origin);
  const planned = await phase("plan", walkers, (w) => w.planned(worker, oauth));
  for (const w of planned) {
    await w.tools?.close();
    await w.decider?.close();
    await w.other?.close();
  }
  // The same state, origin and OAuth client with the sandbox clock sped up: weeks of sending in
  // a minute or two.
  await worker.restart({ vars: { SANDBOX_SENDING: FAST } });
  const sent = await phase("send", planned, (w) => w.sent(worker, oauth));
  for (const w of sent) {
    try {
      w.invariants();
    } catch (error) {
      fail(w.email, `invariants: ${error.stack}`);
    }
    await w.tools?.close();
    await w.decider?.close();
    await w.other?.close();
  }
  tally();
  const fiveXX = Object.entries(statuses).filter(([s]) => Number(s) >= 500).reduce((n, [, c]) => n + c, 0);
  if (fiveXX) failures.push(`${fiveXX} responses with a 5xx status`);
  const requests = Object.values(statuses).reduce((a, b) => a + b, 0);
  const approvals = sent.reduce((n, w) => n + w.approvals.length, 0);
  console.log(
    JSON.stringify(
      {
        workspaces: N,
        completed: sent.length,
        approvals,
        decisions: figures.decisions,
        toolCalls: figures.toolCalls,
        refreshes: figures.refreshes,
        requests,
        statuses,
        phases: figures.phase,
        failures: failures.length,
      },
      null,
      2,
    ),
  );
  for (const f of failures) console.error(`FAIL ${f}`);
  process.exitCode = failures.length ? 1 : 0;
} finally {
  await worker?.stop();
  rmSync(dir, { recursive: true, force: true });
}

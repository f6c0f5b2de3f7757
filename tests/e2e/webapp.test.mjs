// The web page behind appUrl (issue 4) in the real Worker: over HTTP with cookies exactly as a
// browser submits the forms, then in headless Chromium. Users sign in with the development
// sign-in; the approvals are real ones, asked for by `upgrade_plan` in the sandbox, whose charges
// show how many times an approval really executed.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startWorker } from "./harness.mjs";
import { hidden, dataError, escapeHtml, signIn, pageData as data } from "./oauth.mjs";
import { subscribed, ok } from "./billing-helpers.mjs";
import { launchBrowser } from "./cardhost/host.mjs";
import { ROOT } from "../../scripts/lib/devtoken.mjs";

const SHOTS = process.env.UPDATE_SCREENSHOTS ? join(ROOT, "docs/app") : mkdtempSync(join(tmpdir(), "vibesell-app-"));
mkdirSync(SHOTS, { recursive: true });

let worker;
before(async () => {
  worker = await startWorker();
});
after(async () => {
  await worker?.stop();
  if (!process.env.UPDATE_SCREENSHOTS) rmSync(SHOTS, { recursive: true, force: true });
});

const formCsrf = (html) => hidden(html, "csrf", 'data-form="decide"');
const decide = (browser, id, fields) => browser.post(`/app/approvals/${id}`, fields);

/** A subscribed workspace of `email` with a pending upgrade to `plan`; answers the MCP client and the approval. */
async function pendingUpgrade(w, email, plan = "growth") {
  const client = await subscribed(w, email);
  const approval = await ok(client, "upgrade_plan", { plan });
  assert.equal(approval.status, "pending");
  return { client, approval };
}

test("/app: sign in and back, the workspace, its pending approvals, sign out", async () => {
  const email = "home@example.com";
  const { client, approval } = await pendingUpgrade(worker, email);
  const browser = await signIn(worker, "/app", email);
  const home = await browser.get("/app");
  assert.equal(home.status, 200);
  assert.match(home.text, /data-page="home"/);
  assert.ok(home.text.includes(`<a href="/app/approvals/${approval.id}">`), "the approval links to its page");
  assert.match(home.text, /Plan: Starter/);
  const [workspace, approvals] = data(home.text).results;
  assert.equal(workspace.kind, "workspace");
  assert.equal(workspace.plan.id, "starter");
  assert.equal(workspace.pendingApprovalCount, 1);
  assert.equal(approvals.kind, "approvals");
  assert.deepEqual(approvals.approvals.map((a) => [a.id, a.appUrl]), [[approval.id, approval.appUrl]]);
  for (const [k, v] of [["x-frame-options", "DENY"], ["cache-control", "no-store"], ["referrer-policy", "same-origin"]]) {
    assert.equal(home.headers.get(k), v, k);
  }

  const out = await browser.post("/app/signout", { csrf: hidden(home.text, "csrf", 'action="/app/signout"'), return_to: "/app" });
  assert.equal(out.status, 303);
  assert.equal((await browser.get("/app")).status, 303, "signed out: back to sign-in");
  await client.close();
});

test("a return_to with a control byte goes back to /app, not into a header the runtime refuses", async () => {
  // An audit saw a NUL here make the answer throw: a 500 after the runtime gave up on the
  // request, or no answer at all.
  const browser = await signIn(worker, "/app", "control-byte@example.com");
  const t0 = Date.now();
  const back = await browser.get("/app/signin?return_to=%2Fapp%2F%00");
  assert.equal(back.status, 303);
  assert.equal(back.headers.get("location"), "/app/account", "the default page, the byte dropped");
  assert.ok(Date.now() - t0 < 5_000);
  assert.equal((await browser.get("/app")).status, 200, "the Worker goes on answering");
});

test("approve on the page: Post/Redirect/Get, executed once, a double submit refused", async () => {
  const email = "approver@example.com";
  const { client, approval } = await pendingUpgrade(worker, email);
  const path = `/app/approvals/${approval.id}`;
  const browser = await signIn(worker, path, email);
  const page = await browser.get(path);
  assert.equal(page.status, 200);
  const csp = page.headers.get("content-security-policy");
  assert.match(csp, /^default-src 'none'; script-src 'sha256-[^']+'; style-src 'sha256-[^']+' 'sha256-[^']+';/);
  assert.match(csp, /frame-ancestors 'none'/);
  assert.doesNotMatch(csp, /unsafe/);
  assert.equal(page.headers.get("x-frame-options"), "DENY");
  assert.equal(page.headers.get("cache-control"), "no-store");
  assert.equal(page.headers.get("referrer-policy"), "same-origin");
  for (const text of [approval.summary, "Cost: <strong>$100</strong>", "Waiting for you", escapeHtml(approval.impact[0])]) {
    assert.ok(page.text.includes(text), `the page shows ${text}`);
  }
  const [shown] = data(page.text).results;
  assert.deepEqual({ ...shown, decideHere: approval.decideHere }, { ...approval, kind: "approval" }, "the approval as the tools return it");
  const csrf = formCsrf(page.text);
  assert.equal(data(page.text).decide.csrf, csrf);

  const approved = await decide(browser, approval.id, { csrf, decision: "approve" });
  assert.equal(approved.status, 303, approved.text.slice(0, 300));
  assert.equal(approved.location, path);
  const after = await browser.get(path);
  assert.match(after.text, /<strong>Done<\/strong>/);
  assert.match(after.text, /Now on the Growth plan/);
  assert.doesNotMatch(after.text, /data-form="decide"/, "no buttons once decided");

  const again = await decide(browser, approval.id, { csrf, decision: "approve" });
  assert.equal(again.status, 409);
  assert.match(again.text, /already decided; nothing more was done/);
  let plans = await ok(client, "get_plans_and_billing");
  assert.equal(plans.current.id, "growth");
  assert.equal(plans.charges.length, 2, "the first month and exactly one upgrade charge");

  // Two submits at once (a double click): one decides, the other is told it was decided.
  const scale = await ok(client, "upgrade_plan", { plan: "scale" });
  const scalePage = await browser.get(`/app/approvals/${scale.id}`);
  const scaleCsrf = formCsrf(scalePage.text);
  const both = await Promise.all([1, 2].map(() => decide(browser, scale.id, { csrf: scaleCsrf, decision: "approve" })));
  assert.deepEqual(both.map((r) => r.status).sort(), [303, 409]);
  plans = await ok(client, "get_plans_and_billing");
  assert.equal(plans.current.id, "scale");
  assert.equal(plans.charges.length, 3, "one more charge, not two");
  assert.equal((await ok(client, "list_pending_approvals")).total, 0);
  const logged = worker.requestLogs().filter((l) => l.route === `/app/approvals/${scale.id}` && l.method === "POST");
  assert.deepEqual(logged.map((l) => l.outcome).sort(), ["ok", "refused"]);
  await client.close();
});

test("another user's approval is a 404, exactly like an unknown id", async () => {
  const { client, approval } = await pendingUpgrade(worker, "owner-web@example.com");
  const intruder = await signIn(worker, "/app", "intruder-web@example.com");
  const theirs = await intruder.get(`/app/approvals/${approval.id}`);
  const unknown = await intruder.get(`/app/approvals/apr_${"0".repeat(32)}`);
  assert.equal(theirs.status, 404);
  assert.equal(unknown.status, 404);
  assert.equal(theirs.text, unknown.text, "nothing tells them apart");
  assert.ok(!theirs.text.includes(approval.id));
  const home = await intruder.get("/app");
  assert.ok(!home.text.includes(approval.id), "not listed either");
  // The owner's form token is bound to the owner's session: no good in the intruder's.
  const owner = await signIn(worker, `/app/approvals/${approval.id}`, "owner-web@example.com");
  const ownersCsrf = formCsrf((await owner.get(`/app/approvals/${approval.id}`)).text);
  const post = await decide(intruder, approval.id, { csrf: ownersCsrf, decision: "approve" });
  assert.equal(post.status, 403);
  const still = await ok(client, "list_pending_approvals");
  assert.equal(still.approvals[0].status, "pending");
  assert.equal((await ok(client, "get_plans_and_billing")).current.id, "starter");
  await client.close();
});

test("a missing, wrong or cross-site CSRF token is refused and decides nothing", async () => {
  const email = "csrf-web@example.com";
  const { client, approval } = await pendingUpgrade(worker, email);
  const path = `/app/approvals/${approval.id}`;
  const browser = await signIn(worker, path, email);
  const csrf = formCsrf((await browser.get(path)).text);
  for (const fields of [{ decision: "approve" }, { csrf: "", decision: "approve" }, { csrf: csrf.slice(1), decision: "approve" }]) {
    const r = await decide(browser, approval.id, fields);
    assert.equal(r.status, 403, JSON.stringify(fields));
    assert.equal(dataError(r.text), "csrf");
  }
  const cross = await browser.post(path, { csrf, decision: "approve" }, { origin: "https://evil.example" });
  assert.equal(cross.status, 403, "a form from another site");
  const still = await ok(client, "list_pending_approvals");
  assert.equal(still.approvals[0].status, "pending");
  assert.equal((await ok(client, "get_plans_and_billing")).charges.length, 1, "nothing charged");
  await client.close();
});

test("an expired approval shows as such, without buttons, and a POST is refused", async () => {
  const w = await startWorker({ vars: { APPROVAL_TTL_SECONDS: "2" } });
  try {
    const email = "expired-web@example.com";
    const { client, approval } = await pendingUpgrade(w, email);
    const path = `/app/approvals/${approval.id}`;
    const browser = await signIn(w, path, email);
    const csrf = formCsrf((await browser.get(path)).text);
    await new Promise((r) => setTimeout(r, Math.max(0, approval.expiresAt - Date.now()) + 300));
    const page = await browser.get(path);
    assert.equal(page.status, 200);
    assert.match(page.text, /<strong>Not done<\/strong>/);
    assert.match(page.text, /Expired/);
    assert.doesNotMatch(page.text, /data-form="decide"/);
    assert.equal(data(page.text).decide, undefined);
    const late = await decide(browser, approval.id, { csrf, decision: "approve" });
    assert.equal(late.status, 409);
    assert.match(late.text, /expired before anyone decided/);
    assert.equal((await ok(client, "get_plans_and_billing")).current.id, "starter");
    await client.close();
  } finally {
    await w.stop();
  }
});

test("in Chromium: sign in, /app, open the approval, Approve, see it done", async () => {
  const email = "chromium-web@example.com";
  const { client, approval } = await pendingUpgrade(worker, email);
  const chromium = await launchBrowser();
  const context = await chromium.newContext({ viewport: { width: 900, height: 1000 }, deviceScaleFactor: 1 });
  const page = await context.newPage();
  const problems = [];
  const requests = [];
  page.on("pageerror", (e) => problems.push(`pageerror: ${e.message}`));
  page.on("console", (m) => {
    if (m.type() === "error" || /Content Security Policy|Refused to/.test(m.text())) problems.push(`console: ${m.text()}`);
  });
  page.on("request", (r) => requests.push(r.url()));
  try {
    await page.goto(`${worker.url}/app`);
    await page.getByLabel("Email").fill(email);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.waitForURL(`${worker.url}/app`);
    // The card's own views, rendered by its script on the page.
    await page.locator('.view[data-kind="workspace"][data-view="designed"]').waitFor();
    await page.locator('.view[data-kind="approvals"][data-view="designed"]').waitFor();
    assert.match(await page.locator("#root").innerText(), /1 decision waiting for you/);
    await page.screenshot({ path: join(SHOTS, "home.png"), fullPage: true });

    await page.getByRole("link", { name: "Review and decide" }).click();
    await page.waitForURL(approval.appUrl);
    const view = page.locator('.view[data-kind="approval"][data-view="designed"]');
    await view.waitFor();
    const text = await view.innerText();
    assert.ok(text.includes(approval.summary));
    assert.match(text, /Expires in 23 h/);
    assert.match(text, /\$100/);
    await page.screenshot({ path: join(SHOTS, "approval.png"), fullPage: true });

    const csrf = await page.locator('form[data-form="decide"] input[name="csrf"]').inputValue();
    const [posted] = await Promise.all([
      page.waitForResponse((r) => r.request().method() === "POST"),
      page.getByRole("button", { name: "Approve" }).click(),
    ]);
    assert.equal(posted.status(), 303, "Post/Redirect/Get");
    await page.waitForURL(approval.appUrl);
    await page.locator(".approval.done").waitFor();
    assert.match(await page.locator("#root").innerText(), /Now on the Growth plan/);
    assert.equal(await page.getByRole("button", { name: "Approve" }).count(), 0);
    await page.screenshot({ path: join(SHOTS, "approval-done.png"), fullPage: true });

    // The same form sent again (a second tab, a resubmitted page): refused, and the page says so.
    const [again] = await Promise.all([
      page.waitForResponse((r) => r.request().method() === "POST"),
      page.evaluate(([action, token]) => {
        const f = document.createElement("form");
        f.method = "post";
        f.action = action;
        for (const [name, value] of [["csrf", token], ["decision", "approve"]]) {
          const input = document.createElement("input");
          Object.assign(input, { type: "hidden", name, value });
          f.append(input);
        }
        document.body.append(f);
        f.submit();
      }, [new URL(approval.appUrl).pathname, csrf]),
    ]);
    assert.equal(again.status(), 409);
    await page.locator("[data-notice]").waitFor();
    assert.match(await page.locator("[data-notice]").innerText(), /already decided; nothing more was done/);
    await page.locator(".approval.done").waitFor();
    await page.screenshot({ path: join(SHOTS, "approval-already-decided.png"), fullPage: true });
    await page.goto(approval.appUrl);
    await page.locator(".approval.done").waitFor();
    await page.setViewportSize({ width: 390, height: 844 });
    assert.ok(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth), "no sideways scroll on a phone");
    await page.screenshot({ path: join(SHOTS, "approval-done-narrow.png"), fullPage: true });
    await page.setViewportSize({ width: 900, height: 1000 });
    await page.emulateMedia({ colorScheme: "dark" });
    await page.reload();
    await page.locator(".approval.done").waitFor();
    assert.equal(await page.evaluate(() => document.documentElement.dataset.theme), "dark");
    await page.screenshot({ path: join(SHOTS, "approval-done-dark.png"), fullPage: true });

    // The browser reports the deliberate 409 above as a failed load; nothing else may fail.
    const unexpected = problems.filter((p) => !/status of 409 \(Conflict\)/.test(p));
    assert.deepEqual(unexpected, [], "no page errors and no CSP refusals");
    assert.equal(problems.length, 1);
    assert.deepEqual(requests.filter((u) => !u.startsWith(worker.url)), [], "nothing but the Worker");
    const plans = await ok(client, "get_plans_and_billing");
    assert.equal(plans.current.id, "growth");
    assert.equal(plans.charges.length, 2);
  } finally {
    await context.close();
    await chromium.close();
    await client.close();
  }
});

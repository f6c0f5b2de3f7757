// The sign-in, consent and account pages in a real browser (Debian's headless Chromium through
// playwright-core): the __Host- cookies are accepted and hidden from scripts, the stylesheet
// passes the page's own CSP, the form and its redirect to the client pass `form-action`, the
// pages refuse to be framed, and the account page disconnects an app.
// UPDATE_SCREENSHOTS=1 writes docs/oauth/*.png for reviewers.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { createServer } from "node:http";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { startWorker, post, rpc } from "./harness.mjs";
import { launchBrowser } from "./cardhost/host.mjs";
import { ROOT } from "../../scripts/lib/devtoken.mjs";
import { pkce, registerClient, authorizeUrl, tokenRequest } from "./oauth.mjs";

let worker;
let browser;
let callbackServer;
const received = [];

async function listen(handler) {
  const server = createServer(handler);
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  return server;
}

before(async () => {
  worker = await startWorker();
  browser = await launchBrowser();
  callbackServer = await listen((req, res) => {
    received.push(new URL(req.url, "http://127.0.0.1"));
    res.writeHead(200, { "content-type": "text/plain" });
    res.end("You can close this window.");
  });
});
after(async () => {
  await browser?.close();
  await worker?.stop();
  await new Promise((resolve) => callbackServer?.close(resolve));
});

const shots = process.env.UPDATE_SCREENSHOTS === "1";
async function screenshot(page, name) {
  if (!shots) return;
  mkdirSync(join(ROOT, "docs/oauth"), { recursive: true });
  await page.screenshot({ path: join(ROOT, "docs/oauth", `${name}.png`), fullPage: true });
}

test("a user signs in, narrows to read only and approves; the client gets the code", async () => {
  const client = await registerClient(worker, ["http://127.0.0.1/callback"], { client_name: "Claude Code" });
  const { verifier, challenge } = pkce();
  const redirectUri = `http://127.0.0.1:${callbackServer.address().port}/callback`;
  const context = await browser.newContext({ viewport: { width: 560, height: 820 } });
  const page = await context.newPage();
  const violations = [];
  page.on("console", (m) => {
    if (/Content.Security.Policy|Refused to/i.test(m.text())) violations.push(m.text());
  });

  await page.goto(authorizeUrl(worker, { clientId: client.client_id, redirectUri, challenge }));
  assert.equal(await page.locator("main").getAttribute("data-page"), "signin");
  assert.equal(await page.locator("h1").innerText(), "Sign in to connect Claude Code to VibeSell");
  await screenshot(page, "signin");
  await page.fill("#email", "browser@example.com");
  await page.click("button[type=submit]");
  await page.waitForSelector('main[data-page="consent"]');
  assert.equal(await page.evaluate(() => document.cookie), "", "the cookies are HttpOnly");
  const cookies = await context.cookies();
  for (const name of ["__Host-vs_browser", "__Host-vs_session"]) {
    const c = cookies.find((x) => x.name === name);
    assert.ok(c, `${name} was accepted`);
    assert.ok(c.httpOnly && c.secure && c.sameSite === "Lax" && c.path === "/", name);
  }
  // The stylesheet applies (its hash is in the CSP), and nothing was refused.
  const background = await page.evaluate(() => getComputedStyle(document.querySelector("main")).borderRadius);
  assert.equal(background, "14px");
  await screenshot(page, "consent");

  await page.check('input[name="access"][value="read"]');
  await Promise.all([page.waitForURL(`${redirectUri}?**`), page.click('button[value="approve"]')]);
  assert.deepEqual(violations, [], "no CSP violation, including form-action on the redirect");
  const back = received.filter((u) => u.pathname === "/callback").at(-1);
  assert.equal(back.searchParams.get("state"), "st-e2e");
  assert.equal(back.searchParams.get("iss"), worker.origin);
  const tokens = await tokenRequest(worker, {
    grant_type: "authorization_code",
    client_id: client.client_id,
    code: back.searchParams.get("code"),
    code_verifier: verifier,
    redirect_uri: redirectUri,
  });
  assert.equal(tokens.status, 200, tokens.text);
  assert.equal(tokens.json.scope, "mcp", "narrowed to read only");

  // The account page shows the app; disconnecting it stops its token.
  await page.goto(`${worker.url}/app/account`);
  assert.equal(await page.locator("main").getAttribute("data-page"), "account");
  assert.equal(await page.locator("[data-grant]").count(), 1);
  assert.match(await page.locator("[data-grant]").innerText(), /Claude Code[\s\S]*Read only/);
  await screenshot(page, "account");
  await Promise.all([page.waitForURL(`${worker.url}/app/account`), page.click('[data-grant] button')]);
  assert.equal(await page.locator("[data-grant]").count(), 0);
  const call = await post(worker, rpc("tools/call", { name: "get_workspace_context", arguments: {} }), { token: tokens.json.access_token });
  assert.equal(call.status, 401);
  assert.deepEqual(violations, []);
  await context.close();
});

test("the consent page refuses to be framed", async () => {
  const client = await registerClient(worker, ["http://127.0.0.1/callback"], { client_name: "Framed" });
  const { challenge } = pkce();
  const target = authorizeUrl(worker, { clientId: client.client_id, redirectUri: "http://127.0.0.1:1/callback", challenge });
  const attacker = await listen((req, res) => {
    res.writeHead(200, { "content-type": "text/html" });
    res.end(`<!doctype html><iframe id="f" src="${target.replaceAll("&", "&amp;")}" width="400" height="400"></iframe>`);
  });
  const context = await browser.newContext();
  const page = await context.newPage();
  try {
    // `goto` waits for the load event, which waits for the frame to load or fail.
    await page.goto(`http://127.0.0.1:${attacker.address().port}/`);
    const frame = page.frames().find((f) => f !== page.mainFrame());
    assert.match(frame.url(), /^chrome-error:/, "the browser refused to show our page in the frame");
    const loaded = await frame.evaluate(() => document.querySelector("main")?.dataset.page ?? null).catch(() => null);
    assert.equal(loaded, null, "our page did not render inside another site's frame");
  } finally {
    await context.close();
    await new Promise((resolve) => attacker.close(resolve));
  }
});

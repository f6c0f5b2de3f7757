// The Node side of the card test host. Launches Debian's headless Chromium through
// playwright-core and opens a host page built around the ext-apps host bridge
// (host.browser.mjs, bundled with the project's esbuild). The page is served from a fake origin
// by request interception, under the restrictive Content-Security-Policy that MCP Apps hosts
// apply to a view that declares no domains (MCP-CONFORMANCE APP-R7); the card's srcdoc iframe
// inherits it, so a card that reached for the network would be refused and the test would see it.
import { build } from "esbuild";
import { chromium } from "playwright-core";
import { fileURLToPath } from "node:url";
import { dirname, join } from "node:path";

const HERE = dirname(fileURLToPath(import.meta.url));
export const HOST_ORIGIN = "http://host.vibesell.test";
export const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
// TOOLCHAIN.md §9: the flags that make Debian's Chromium quiet and self-contained in a sandbox.
const CHROMIUM_ARGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-background-networking",
  "--disable-component-update",
  "--no-first-run",
  "--disable-sync",
];
const CSP =
  "default-src 'none'; script-src 'self' 'unsafe-inline'; style-src 'self' 'unsafe-inline'; " +
  "img-src 'self' data:; media-src 'self' data:; connect-src 'none'; object-src 'none'";

const HOST_PAGE = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Test host</title>
<style>
  :root { color-scheme: light; }
  html { background: #f5f4ef; font: 14px system-ui, sans-serif; }
  html[data-theme="dark"] { background: #262624; color-scheme: dark; }
  body { margin: 0; padding: 16px; }
  #chat { display: inline-block; padding: 0; border-radius: 12px; border: 1px solid #d9d7cf; background: #ffffff; overflow: hidden; }
  html[data-theme="dark"] #chat { border-color: #3d3d3a; background: #30302e; }
  iframe { display: block; border: 0; }
</style></head>
<body><div id="chat"></div><script type="module" src="/host.js"></script></body></html>`;

let bundle;
async function hostBundle() {
  if (!bundle) {
    const out = await build({
      entryPoints: [join(HERE, "host.browser.mjs")],
      bundle: true,
      format: "esm",
      platform: "browser",
      target: "chrome120",
      write: false,
      logLevel: "silent",
    });
    bundle = out.outputFiles[0].text;
  }
  return bundle;
}

/** Launches headless Chromium. */
export function launchBrowser() {
  return chromium.launch({ executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS });
}

/**
 * Opens a host page. `onCallTool(params)` answers the card's `tools/call` (a CallToolResult, or
 * throws to make the host answer with a JSON-RPC error). `now` fixes the page's clock (ms);
 * `timezoneId` sets the browser's own time zone (the machine's by default).
 */
export async function openHost(browser, { onCallTool, now, viewport = { width: 720, height: 900 }, timezoneId } = {}) {
  const context = await browser.newContext({ viewport, deviceScaleFactor: 1, timezoneId });
  const page = await context.newPage();
  const problems = []; // page errors, CSP refusals, console errors
  const requests = [];
  page.on("pageerror", (err) => problems.push(`pageerror: ${err.message}`));
  page.on("console", (msg) => {
    if (msg.type() === "error" || /Content Security Policy|Refused to/.test(msg.text())) {
      problems.push(`console ${msg.type()}: ${msg.text()} @ ${msg.location().url}`);
    }
  });
  page.on("request", (req) => requests.push(req.url()));
  const js = await hostBundle();
  await page.route("**/*", (route) => {
    const url = new URL(route.request().url());
    if (url.origin !== HOST_ORIGIN) return route.abort("blockedbyclient");
    if (url.pathname === "/") {
      return route.fulfill({ contentType: "text/html", headers: { "content-security-policy": CSP }, body: HOST_PAGE });
    }
    if (url.pathname === "/host.js") return route.fulfill({ contentType: "text/javascript", body: js });
    return route.fulfill({ status: 404, body: "" });
  });
  await page.exposeFunction("vsCallTool", async (params) => {
    if (!host.onCallTool) throw new Error("this host has no server");
    return host.onCallTool(params);
  });
  if (now !== undefined) await page.clock.setFixedTime(now);
  await page.goto(`${HOST_ORIGIN}/`);
  await page.waitForFunction(() => window.vsHost !== undefined);

  const card = page.frameLocator("#chat iframe");
  const host = {
    page,
    card,
    problems,
    requests,
    onCallTool,
    /** Forgets what earlier cards did, so one page can host many cards in turn. */
    reset() {
      problems.length = 0;
      requests.length = 0;
    },
    /** Loads the card HTML with this host context; resolves after ui/notifications/initialized. */
    load: (html, opts = {}) => page.evaluate(([h, o]) => window.vsHost.load(h, o), [html, opts]),
    setTheme: (theme) => page.evaluate((t) => window.vsHost.setTheme(t), theme),
    frames: () => page.evaluate(() => window.vsHost.frames()),
    events: () => page.evaluate(() => window.vsHost.events()),
    frameHeight: () => page.evaluate(() => window.vsHost.frameHeight()),
    sendToolInput: (args) => page.evaluate((a) => window.vsHost.sendToolInput(a), args),
    sendToolCancelled: (reason) => page.evaluate((r) => window.vsHost.sendToolCancelled(r), reason),
    changeHostContext: (ctx) => page.evaluate((c) => window.vsHost.changeHostContext(c), ctx),
    teardown: () => page.evaluate(() => window.vsHost.teardown()),
    ping: () => page.evaluate(() => window.vsHost.ping()),
    unknownRequest: () => page.evaluate(() => window.vsHost.unknownRequest()),
    /** The card's own frame (for reading its DOM and computed styles). */
    frame: () => page.frames().find((f) => f.parentFrame() !== null),
    /** How many times the card has rendered a view. */
    renders: async () => Number((await host.frame().evaluate(() => document.getElementById("root").dataset.rendered)) ?? 0),
    /** Delivers a CallToolResult and waits until the card has rendered it and the frame has its size. */
    async deliver(result) {
      const n = await host.renders();
      await page.evaluate((r) => window.vsHost.sendToolResult(r), result);
      await host.rendered(n);
    },
    /** Waits for a render after the `n`th, then for the frame to take the size the card reported. */
    async rendered(n) {
      await host.frame().waitForFunction((k) => Number(document.getElementById("root").dataset.rendered ?? 0) > k, n);
      await host.settle();
    },
    /** Waits until the card's height, its last size report and the frame's height agree. */
    async settle() {
      const deadline = Date.now() + 5000;
      for (;;) {
        const own = await host.frame().evaluate(() => Math.ceil(document.documentElement.getBoundingClientRect().height));
        const sizes = (await host.frames()).filter((f) => f.method === "ui/notifications/size-changed");
        const reported = sizes.at(-1)?.params.height;
        const shown = await host.frameHeight();
        if (reported === own && Math.abs(shown - reported) < 1) return { own, reported, shown };
        if (Date.now() > deadline) throw new Error(`size never settled: card ${own}, reported ${reported}, frame ${shown}`);
        await page.waitForTimeout(25);
      }
    },
    screenshot: (path) => page.locator("#chat").screenshot({ path }),
    close: () => context.close(),
  };
  return host;
}

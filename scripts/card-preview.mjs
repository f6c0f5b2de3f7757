// Renders the card from its sources in card/ (assembled as build.rs does) with every example
// result in tests/fixtures/card/, in headless Chromium behind the ext-apps host bridge, and writes
// a screenshot per kind: a fast loop for working on the card's look without building the Worker.
//   node scripts/card-preview.mjs [out-dir] [kind ...]      (default out-dir: /tmp/vibesell-card)
//   THEME=dark WIDTH=360 node scripts/card-preview.mjs
import { readFileSync, readdirSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { ROOT } from "./lib/devtoken.mjs";
import { launchBrowser, openHost } from "../tests/e2e/cardhost/host.mjs";

const [out = "/tmp/vibesell-card", ...only] = process.argv.slice(2);
const src = (f) => readFileSync(join(ROOT, "card", f), "utf8").trimEnd();
const html = src("card.html").replace("/*@card.css*/", src("card.css")).replace("/*@card.js*/", src("card.js"));
const dir = join(ROOT, "tests/fixtures/card");
const kinds = readdirSync(dir).filter((f) => f.endsWith(".json")).map((f) => f.slice(0, -5)).filter((k) => !only.length || only.includes(k));
const theme = process.env.THEME === "dark" ? "dark" : "light";
const width = Number(process.env.WIDTH ?? 640);
mkdirSync(out, { recursive: true });

const browser = await launchBrowser();
try {
  for (const kind of kinds) {
    const f = JSON.parse(readFileSync(join(dir, `${kind}.json`), "utf8"));
    const host = await openHost(browser, { now: Date.UTC(2026, 11, 7, 10, 0, 0), onCallTool: async () => ({ content: [{ type: "text", text: "preview" }], isError: true }) });
    await host.load(html, { hostContext: { theme, locale: "en-GB", timeZone: "Europe/London" }, width });
    await host.setTheme(theme);
    await host.deliver({ content: [{ type: "text", text: f.text }], structuredContent: f.structuredContent });
    const file = join(out, `${kind}${theme === "dark" ? "-dark" : ""}.png`);
    await host.screenshot(file);
    const view = await host.card.locator(".view").getAttribute("data-view");
    console.log(`${kind}: ${view}${host.problems.length ? " PROBLEMS " + host.problems.join(" | ") : ""} → ${file}`);
    await host.close();
  }
} finally {
  await browser.close();
}

// The live lead adapter (Apollo) in the real Worker, against a local HTTP fake that follows
// Apollo's documented API: People API Search (`POST /api/v1/mixed_people/api_search`, filters
// as `[]` query parameters, `pagination.total_entries`) and bulk enrichment
// (`POST /api/v1/people/bulk_match`, at most 10 people, `credits_consumed`), authenticated with
// `x-api-key`. It checks the requests the Worker sends, the rate-limit retry, the filter-bug
// guard, and that errors come back as refusals.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { createServer } from "node:http";
import { startWorker, connect } from "./harness.mjs";

const KEY = "apollo-test-key";

/** A fake Apollo: 230 people in the US, half VPs of Sales, half Heads of Sales. */
function fakeApollo() {
  const people = Array.from({ length: 230 }, (_, i) => ({
    id: `ap_${String(i).padStart(4, "0")}`,
    first_name: `First${i}`,
    last_name_obfuscated: "Ro***s",
    title: i % 2 === 0 ? "VP of Sales" : "Head of Sales",
    seniority: i % 2 === 0 ? "vp" : "head",
    country: "United States",
    city: "Austin",
    organization: { name: `Company ${Math.floor(i / 3)}`, primary_domain: `company${Math.floor(i / 3)}.com`, estimated_num_employees: 120 },
  }));
  const state = { requests: [], script: [], bugs: false };
  const server = createServer((req, res) => {
    let body = "";
    req.on("data", (c) => (body += c));
    req.on("end", () => {
      const url = new URL(req.url, "http://fake");
      state.requests.push({ method: req.method, path: url.pathname, query: url.searchParams, headers: req.headers, body, at: Date.now() });
      const send = (status, json, headers = {}) => {
        res.writeHead(status, { "content-type": "application/json", ...headers });
        res.end(JSON.stringify(json));
      };
      const scripted = state.script.shift();
      if (scripted) return send(scripted.status, scripted.body ?? {}, scripted.headers);
      if (req.headers["x-api-key"] !== KEY) return send(401, { error: "Invalid access credentials." });
      if (req.method !== "POST") return send(405, { error: "method" });
      if (url.pathname === "/api/v1/mixed_people/api_search") {
        const titles = url.searchParams.getAll("person_titles[]");
        const locations = url.searchParams.getAll("person_locations[]");
        const matching = people.filter(
          (p) => (!titles.length || titles.includes(p.title)) && (!locations.length || locations.includes(p.country)),
        );
        const page = Number(url.searchParams.get("page") ?? 1);
        const perPage = Math.min(100, Number(url.searchParams.get("per_page") ?? 10));
        const slice = matching.slice((page - 1) * perPage, page * perPage);
        if (state.bugs) return send(200, { people: slice.length ? slice : people.slice(0, 3), pagination: { page, per_page: perPage, total_entries: 0, total_pages: 0 } });
        return send(200, {
          people: slice,
          pagination: { page, per_page: perPage, total_entries: matching.length, total_pages: Math.ceil(matching.length / perPage) },
        });
      }
      if (url.pathname === "/api/v1/people/bulk_match") {
        const { details } = JSON.parse(body || "{}");
        if (!Array.isArray(details) || details.length > 10) return send(422, { error: "details: at most 10 records" });
        const matches = details.map(({ id }) => {
          const p = people.find((x) => x.id === id);
          if (!p) return null;
          const i = Number(id.slice(3));
          return { ...p, last_name: `Last${i}`, email: i % 10 === 4 ? "email_not_unlocked@domain.com" : `first${i}@${p.organization.primary_domain}`, email_status: "verified" };
        });
        const credits = matches.filter((m) => m && !m.email.startsWith("email_not")).length;
        return send(200, { status: "success", matches, credits_consumed: credits, missing_records: matches.filter((m) => !m).length });
      }
      send(404, { error: "no such endpoint" });
    });
  });
  return { server, state };
}

let fake;
let worker;
before(async () => {
  fake = fakeApollo();
  await new Promise((resolve) => fake.server.listen(0, "127.0.0.1", resolve));
  const { port } = fake.server.address();
  worker = await startWorker({
    vars: { PROVIDER_MODE: "live", APOLLO_BASE_URL: `http://127.0.0.1:${port}/api/v1`, APOLLO_API_KEY: KEY },
  });
});
after(async () => {
  await worker?.stop();
  await new Promise((resolve) => fake?.server.close(resolve));
});

const searches = () => fake.state.requests.filter((r) => r.path === "/api/v1/mixed_people/api_search");
async function ok(c, name, args = {}) {
  const r = await c.callTool({ name, arguments: args });
  assert.equal(r.isError, false, `${name}: ${r.content?.[0]?.text}`);
  return r.structuredContent;
}

test("the pool is counted with one free search of one result, with the documented parameters", async () => {
  const c = await connect(worker, { sub: "apollo-count@example.com" });
  fake.state.requests.length = 0;
  const r = await ok(c, "estimate_lead_pool", {
    titles: ["VP of Sales"],
    countries: ["United States"],
    company_sizes: ["51-200"],
    departments: ["sales"],
  });
  assert.equal(r.total, 115);
  assert.equal(r.provider, "apollo");
  assert.deepEqual(r.breakdowns, []);
  assert.equal(searches().length, 1);
  const q = searches()[0].query;
  assert.equal(searches()[0].method, "POST");
  assert.deepEqual(q.getAll("person_titles[]"), ["VP of Sales"]);
  assert.deepEqual(q.getAll("person_locations[]"), ["United States"]);
  assert.deepEqual(q.getAll("organization_num_employees_ranges[]"), ["51,200"]);
  assert.deepEqual(q.getAll("person_department_or_subdepartments[]"), ["master_sales"]);
  assert.equal(q.get("per_page"), "1");
  assert.equal(searches()[0].headers["x-api-key"], KEY);
  assert.ok(!searches()[0].query.toString().includes(KEY), "the key never goes in the URL");
  // Free-text titles are Apollo's to match; unknown countries are still refused.
  const free = await ok(c, "estimate_lead_pool", { titles: ["Head of Sales"] });
  assert.equal(free.total, 115);
  const bad = await c.callTool({ name: "estimate_lead_pool", arguments: { countries: ["Atlantis"] } });
  assert.equal(bad.isError, true);
  await c.close();
});

test("a 429 is waited out after its retry-after, then the call succeeds", async () => {
  const c = await connect(worker, { sub: "apollo-429@example.com" });
  fake.state.requests.length = 0;
  fake.state.script.push({ status: 429, headers: { "retry-after": "1" }, body: { error: "rate limited" } });
  const r = await ok(c, "estimate_lead_pool", { titles: ["Head of Sales"] });
  assert.equal(r.total, 115);
  const [first, second] = searches();
  assert.ok(second, "retried");
  assert.ok(second.at - first.at >= 900, `waited ${second.at - first.at} ms`);
  // A long retry-after is not slept inside the call: it is a refusal saying how long to wait.
  fake.state.script.push({ status: 429, headers: { "retry-after": "120" }, body: {} });
  const limited = await c.callTool({ name: "estimate_lead_pool", arguments: { titles: ["Head of Sales"] } });
  assert.equal(limited.isError, true);
  assert.match(limited.content[0].text, /rate limiting.*120 seconds/);
  await c.close();
});

test("errors come back as refusals that change nothing", async () => {
  const c = await connect(worker, { sub: "apollo-errors@example.com" });
  fake.state.script.push({ status: 401, body: { error: "Invalid access credentials." } });
  let r = await c.callTool({ name: "estimate_lead_pool", arguments: { titles: ["VP of Sales"] } });
  assert.equal(r.isError, true);
  assert.match(r.content[0].text, /refused the request: the API key was not accepted \(Apollo said: "Invalid access credentials\."\)/);

  fake.state.script.push({ status: 503, body: {} }, { status: 503, body: {} }, { status: 503, body: {} });
  r = await c.callTool({ name: "estimate_lead_pool", arguments: { titles: ["VP of Sales"] } });
  assert.equal(r.isError, true);
  assert.match(r.content[0].text, /unavailable right now \(HTTP 503\)/);

  fake.state.bugs = true;
  r = await c.callTool({ name: "estimate_lead_pool", arguments: { titles: ["VP of Sales"] } });
  fake.state.bugs = false;
  assert.equal(r.isError, true);
  assert.match(r.content[0].text, /ignore the filters/, "people with a zero total is a filter bug");
  await c.close();
});

test("the preview is the first search page: no emails, obfuscated surnames, logged", async () => {
  const c = await connect(worker, { sub: "apollo-preview@example.com" });
  await ok(c, "save_offer", { product: "P", description: "D", value_proposition: "V" });
  await ok(c, "save_target", { description: "Sales leaders in the US" });
  await ok(c, "save_target_filters", { titles: ["VP of Sales"], countries: ["United States"], exclude_company_domains: ["company0.com"] });
  fake.state.requests.length = 0;
  const p = await ok(c, "preview_lead_sample");
  assert.equal(p.leads.length, 10);
  assert.equal(p.provider, "apollo");
  for (const l of p.leads) {
    assert.equal(l.email, undefined, "Apollo's search reveals no address");
    assert.equal(l.lastName, "Ro***s");
    assert.notEqual(l.companyDomain, "company0.com", "the exclusion Apollo cannot apply is applied here");
  }
  assert.equal(fake.state.requests.filter((r) => r.path.endsWith("/bulk_match")).length, 0, "no credits for a preview");
  const ctx = await ok(c, "get_workspace_context");
  assert.equal(ctx.personalDataAccess.accesses, 1);
  await c.close();
});

test("an approved import pages the search and enriches ten people per call, counting credits", async () => {
  const app = await connect(worker, { sub: "apollo-import@example.com", app: true });
  await ok(app, "save_offer", { product: "P", description: "D", value_proposition: "V" });
  await ok(app, "save_target", { description: "Sales leaders in the US" });
  await ok(app, "save_target_filters", { titles: ["VP of Sales"], countries: ["United States"] });
  await ok(app, "estimate_lead_pool");
  await ok(app, "preview_lead_sample");
  await ok(app, "confirm_target");
  const approval = await ok(app, "import_leads");
  assert.ok(approval.impact.some((l) => /up to 50 leads/.test(l)), "the free plan's 50 a month");
  assert.ok(approval.impact.some((l) => /Apollo/.test(l)));
  assert.equal(approval.irreversible, true, "Apollo credits are not refunded");
  fake.state.requests.length = 0;
  const decided = await ok(app, "decide_approval", { id: approval.id, decision: "approve" });
  assert.equal(decided.status, "done", JSON.stringify(decided));
  const enrich = fake.state.requests.filter((r) => r.path === "/api/v1/people/bulk_match");
  const ids = enrich.flatMap((r) => JSON.parse(r.body).details.map((d) => d.id));
  assert.ok(enrich.every((r) => JSON.parse(r.body).details.length <= 10), "at most 10 people per bulk_match");
  assert.equal(new Set(ids).size, ids.length, "nobody is enriched twice");
  assert.ok(searches().every((r) => r.query.get("per_page") === "100"), "import pages are full pages");
  const ctx = await ok(app, "get_workspace_context");
  const job = ctx.leads.imports[0];
  assert.equal(job.imported, 50);
  assert.equal(ctx.leads.total, 50);
  assert.ok(job.skippedNoEmail > 0, "locked addresses are not imported");
  assert.equal(job.credits, 50, "one credit per revealed address, as Apollo reported");
  assert.match(decided.result, /Imported 50 leads; skipped \d+ without a work address; 50 credits used\./);
  await app.close();
});

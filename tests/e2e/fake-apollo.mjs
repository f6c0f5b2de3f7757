// A local fake of the parts of Apollo's API the connector uses, following its documentation:
// People API Search (`POST /api/v1/mixed_people/api_search`, filters as `[]` query parameters,
// `pagination.total_entries`) and bulk enrichment (`POST /api/v1/people/bulk_match`, at most 10
// people, `credits_consumed`), authenticated with `x-api-key`. `state.script` queues answers
// (rate limits, errors) before the normal ones; `state.requests` records everything.
// `state.enrichPerMinute` limits `bulk_match` calls per rolling minute as Apollo's plans do: past
// it, a 429 whose `retry-after` says when the oldest call leaves the window. `state.people` are the
// people it knows (a test may add some, e.g. from countries outside VibeSell's vocabulary), and
// `hold(path)` keeps the next request to `path` waiting until the test releases it.
import { createServer } from "node:http";

/**
 * A fake Apollo: 230 people in the US whose work address Apollo has verified, half VPs of Sales,
 * half Heads of Sales, and 20 more like them whose address it has not (`email_status`), whom only
 * a search without `contact_email_status[]=verified` finds.
 */
export function fakeApollo(KEY) {
  const people = Array.from({ length: 250 }, (_, i) => ({
    email_status: i < 230 ? "verified" : "unverified",
    id: `ap_${String(i).padStart(4, "0")}`,
    first_name: `First${i}`,
    last_name_obfuscated: "Ro***s",
    title: i % 2 === 0 ? "VP of Sales" : "Head of Sales",
    seniority: i % 2 === 0 ? "vp" : "head",
    country: "United States",
    city: "Austin",
    organization: { name: `Company ${Math.floor(i / 3)}`, primary_domain: `company${Math.floor(i / 3)}.com`, estimated_num_employees: 120 },
  }));
  const state = { people, requests: [], script: [], bugs: false, enrichPerMinute: Infinity, enrichCalls: [], holds: [] };
  const server = createServer((req, res) => {
    let body = "";
    req.on("data", (c) => (body += c));
    req.on("end", async () => {
      const url = new URL(req.url, "http://fake");
      state.requests.push({ method: req.method, path: url.pathname, query: url.searchParams, headers: req.headers, body, at: Date.now() });
      const held = state.holds.findIndex((h) => h.path === url.pathname);
      if (held >= 0) {
        const h = state.holds.splice(held, 1)[0];
        h.arrive();
        await h.released;
      }
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
        const statuses = url.searchParams.getAll("contact_email_status[]");
        const matching = people.filter(
          (p) =>
            (!titles.length || titles.includes(p.title)) &&
            (!locations.length || locations.includes(p.country)) &&
            (!statuses.length || statuses.includes(p.email_status)),
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
        const now = Date.now();
        state.enrichCalls = state.enrichCalls.filter((t) => t > now - 60_000);
        if (state.enrichCalls.length >= state.enrichPerMinute) {
          const wait = Math.max(1, Math.ceil((state.enrichCalls[0] + 60_000 - now) / 1000));
          return send(429, { error: `The maximum number of api calls allowed for api/v1/people/bulk_match is ${state.enrichPerMinute} times per minute.` }, { "retry-after": String(wait) });
        }
        state.enrichCalls.push(now);
        const { details } = JSON.parse(body || "{}");
        if (!Array.isArray(details) || details.length > 10) return send(422, { error: "details: at most 10 records" });
        const matches = details.map(({ id }) => {
          const p = people.find((x) => x.id === id);
          if (!p) return null;
          const i = Number(id.slice(3));
          return { ...p, last_name: `Last${i}`, email: i % 10 === 4 ? "email_not_unlocked@domain.com" : `first${i}@${p.organization.primary_domain}` };
        });
        const credits = matches.filter((m) => m && !m.email.startsWith("email_not")).length;
        return send(200, { status: "success", matches, credits_consumed: credits, missing_records: matches.filter((m) => !m).length });
      }
      send(404, { error: "no such endpoint" });
    });
  });
  /**
   * Holds the next request to `path` until `release()`: `arrived` resolves once it came in. The
   * answer is the one it would have had when released.
   */
  function hold(path) {
    const h = { path };
    h.arrived = new Promise((r) => (h.arrive = r));
    h.released = new Promise((r) => (h.release = r));
    state.holds.push(h);
    return h;
  }
  return { server, state, hold };
}

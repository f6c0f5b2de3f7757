// A local fake of the parts of Instantly API v2 the connector uses, following its documentation
// (DOMAIN §1): Bearer key, an explicit User-Agent (Cloudflare rejects the defaults with 1010),
// JSON bodies, DELETE without a body, closed campaign-create bodies (unknown keys → 400), leads
// added at most 1,000 at a time, cursor lists (`items`, `next_starting_after`), background jobs
// for warm-up, done-for-you orders simulated (priced, nothing charged) then placed, and
// `GET /emails` limited to 20 requests a minute (429 with Retry-After).
//
// Tests steer it: `state.script` queues scripted answers for a method and path (an error, a 429,
// or `commitThen500` to record an order and then fail, as a lost response would), `hold` keeps
// the next request to a path waiting until the test releases it, and helpers complete the setup,
// age the warm-up, set the analytics, lead statuses and received emails. Everything is recorded
// in `state.requests`, a held request as it comes in.
import { createServer } from "node:http";

const PRICE_DOMAIN = 12.5; // per year
const PRICE_ACCOUNT = 3; // per month
const CREATE_FIELDS = new Set([
  "name", "campaign_schedule", "sequences", "email_list", "email_tag_list", "daily_limit", "daily_max_leads",
  "email_gap", "random_wait_max", "text_only", "first_email_text_only", "open_tracking", "link_tracking",
  "stop_on_reply", "stop_on_auto_reply", "stop_for_company", "insert_unsubscribe_header", "prioritize_new_leads",
  "match_lead_esp", "allow_risky_contacts", "disable_bounce_protect", "is_evergreen", "pl_value", "cc_list",
  "bcc_list", "auto_variant_select", "provider_routing_rules", "limit_emails_per_company_override", "owned_by", "ai_sdr_id",
]);

// The account fields a PATCH may set (DOMAIN §1.4); anything else is refused like an unknown
// campaign field.
const ACCOUNT_FIELDS = new Set([
  "first_name", "last_name", "warmup", "daily_limit", "sending_gap", "enable_slow_ramp", "tracking_domain_name",
  "tracking_domain_status", "skip_cname_check", "remove_tracking_domain", "inbox_placement_test_limit",
]);

export function fakeInstantly(KEY) {
  const state = {
    requests: [],
    script: [], // { method, path, when, status, body, headers, commitThen500, held }
    orders: [], // { domain, order_type, timestamp_created, key }
    realOrderPosts: 0,
    accounts: new Map(),
    campaigns: new Map(),
    leads: new Map(), // campaign id -> [lead]
    emails: [],
    blocklist: [],
    analytics: new Map(),
    // Per campaign: `{daily, steps}`, the rows of the daily and per-step analytics.
    reports: new Map(),
    jobs: new Map(),
    emailCalls: [],
    taken: new Set(["tryledgerly.com"]),
    shelf: ["pipelinereach.com"],
    seq: 0,
    leadPages: 0,
    leadPageSize: 100,
  };
  const id = (p) => `${p}_${++state.seq}`;
  const iso = (ms) => new Date(ms).toISOString();

  function quote(body) {
    const items = body.items ?? [];
    const unavailable = items.filter((i) => state.taken.has(i.domain) || state.orders.some((o) => o.domain === i.domain)).map((i) => i.domain);
    const invalid = items.filter((i) => !/^[a-z0-9-]+\.(com|org)$/.test(i.domain)).map((i) => i.domain);
    const warmed = body.order_type === "pre_warmed_up";
    const orderItems = items.map((i) => ({
      domain: i.domain,
      accounts: i.accounts,
      email_provider: i.email_provider ?? 1,
      domain_price: warmed ? 0 : PRICE_DOMAIN,
      accounts_price: (warmed ? 5 : PRICE_ACCOUNT) * (i.accounts ?? []).length,
      total_price: (warmed ? 0 : PRICE_DOMAIN) + (warmed ? 5 : PRICE_ACCOUNT) * (i.accounts ?? []).length,
      total_discount: 0,
    }));
    const domains = orderItems.reduce((s, i) => s + i.domain_price, 0);
    const accounts = orderItems.reduce((s, i) => s + i.accounts_price, 0);
    return {
      order_placed: false,
      order_is_valid: unavailable.length === 0 && invalid.length === 0,
      simulation: body.simulation !== false,
      order_error: "",
      unavailable_domains: unavailable,
      blacklist_domains: [],
      invalid_domains: invalid,
      invalid_forwarding_domains: [],
      invalid_accounts: [],
      number_of_domains_ordered: items.length,
      number_of_accounts_ordered: items.reduce((s, i) => s + (i.accounts ?? []).length, 0),
      price_per_account_per_month: PRICE_ACCOUNT,
      price_per_domain_per_year: PRICE_DOMAIN,
      total_domains_price_per_year: domains,
      total_accounts_price_per_month: accounts,
      total_price_per_month: accounts,
      total_price_per_year: domains + accounts * 12,
      total_price: domains + accounts,
      total_discount: 0,
      order_items: orderItems,
      payment_method_last_4_digits: "4242",
      payment_method_brand: "visa",
    };
  }

  function place(body, key) {
    for (const item of body.items) {
      state.orders.push({ domain: item.domain, order_type: body.order_type, timestamp_created: iso(Date.now()), key });
      for (const a of item.accounts) {
        const email = `${a.email_address_prefix}@${item.domain}`;
        state.accounts.set(email, {
          email,
          first_name: a.first_name,
          last_name: a.last_name,
          status: 1,
          warmup_status: 0,
          setup_pending: true,
          is_managed_account: true,
          provider_code: 2,
        });
      }
    }
    return { ...quote({ ...body, simulation: false }), order_placed: true, order_is_valid: true, simulation: false };
  }

  function route(req, url, body, send) {
    const path = url.pathname;
    const m = (re) => path.match(re);
    if (req.method === "POST" && path === "/api/v2/dfy-email-account-orders/domains/similar") {
      const brand = body.domain.split(".")[0];
      // Instantly also proposes the brand on other extensions; VibeSell must filter those out.
      return send(200, { domains: [`${brand}.com`, `get${brand}.com`, `try${brand}.com`, `${brand}hq.com`, `hello${brand}.com`, `use${brand}.com`] });
    }
    if (req.method === "POST" && path === "/api/v2/dfy-email-account-orders/domains/check") {
      return send(200, {
        results: body.domains.map((d) =>
          state.taken.has(d) || state.orders.some((o) => o.domain === d)
            ? { domain: d, available: false, unavailable_reason: "registered" }
            : { domain: d, available: true },
        ),
      });
    }
    if (req.method === "POST" && path === "/api/v2/dfy-email-account-orders/domains/pre-warmed-up-list") {
      return send(200, { domains: state.shelf, domains_with_type: state.shelf.map((d) => ({ domain: d, account_type: 1 })) });
    }
    if (req.method === "POST" && path === "/api/v2/dfy-email-account-orders") {
      if (!["dfy", "pre_warmed_up", "extra_accounts"].includes(body.order_type)) return send(400, { message: "order_type" });
      for (const i of body.items ?? []) {
        if ((i.accounts ?? []).length > 5) return send(400, { message: "at most 5 accounts per domain" });
      }
      if (body.simulation !== false) return send(200, quote(body));
      state.realOrderPosts++;
      // Instantly documents no idempotency for orders: a second post is a second order, which
      // `realOrderPosts` lets a test catch. A refusal comes back in a 200, `order_error` a code
      // naming the field that explains it.
      const q = quote(body);
      if (!q.order_is_valid) {
        return send(200, { ...q, order_error: q.unavailable_domains.length ? "unavailable_domains" : "invalid_domains" });
      }
      return send(200, place(body, req.headers["idempotency-key"]));
    }
    if (req.method === "GET" && path === "/api/v2/dfy-email-account-orders") {
      return send(200, { items: state.orders.map((o) => ({ workspace_id: "ws", domain: o.domain, timestamp_created: o.timestamp_created, is_pre_warmed_up: o.order_type === "pre_warmed_up" })), next_starting_after: null });
    }
    if (req.method === "GET" && m(/^\/api\/v2\/accounts\/([^/]+)$/)) {
      const a = state.accounts.get(decodeURIComponent(m(/^\/api\/v2\/accounts\/([^/]+)$/)[1]));
      return a ? send(200, a) : send(404, { message: "Account not found" });
    }
    if (req.method === "PATCH" && m(/^\/api\/v2\/accounts\/([^/]+)$/)) {
      const a = state.accounts.get(decodeURIComponent(m(/^\/api\/v2\/accounts\/([^/]+)$/)[1]));
      if (!a) return send(404, { message: "Account not found" });
      const unknown = Object.keys(body).filter((k) => !ACCOUNT_FIELDS.has(k));
      if (unknown.length) return send(400, { message: `body/${unknown[0]} must NOT have additional properties` });
      if ("daily_limit" in body && !(Number.isInteger(body.daily_limit) && body.daily_limit >= 1)) return send(400, { message: "body/daily_limit must be an integer" });
      if ("enable_slow_ramp" in body && typeof body.enable_slow_ramp !== "boolean") return send(400, { message: "body/enable_slow_ramp must be boolean" });
      Object.assign(a, body);
      return send(200, a);
    }
    if (req.method === "POST" && path === "/api/v2/accounts/warmup/enable") {
      if (!Array.isArray(body.emails) || body.emails.length === 0) return send(400, { message: "emails" });
      for (const e of body.emails) {
        const a = state.accounts.get(e);
        if (!a || a.setup_pending) return send(400, { message: `${e} is not ready` });
      }
      const job = { id: id("job"), status: "pending", progress: 0, emails: body.emails };
      state.jobs.set(job.id, job);
      return send(200, { id: job.id, type: "update-warmup-accounts", status: "pending", progress: 0, workspace_id: "ws" });
    }
    if (req.method === "GET" && m(/^\/api\/v2\/background-jobs\/([^/]+)$/)) {
      const job = state.jobs.get(m(/^\/api\/v2\/background-jobs\/([^/]+)$/)[1]);
      if (!job) return send(404, { message: "no job" });
      // The job finishes on the first look.
      job.status = "success";
      for (const e of job.emails) {
        const a = state.accounts.get(e);
        a.warmup_status = 1;
        a.timestamp_warmup_start = iso(Date.now());
        a.stat_warmup_score = 45;
      }
      return send(200, { id: job.id, status: "success", progress: 100 });
    }
    if (req.method === "POST" && path === "/api/v2/accounts/test/vitals") {
      const domains = [...new Set(body.accounts.map((e) => e.split("@")[1]))];
      return send(200, { status: "success", success_list: domains.map((d) => ({ domain: d, spf: true, dkim: true, dmarc: true, mx: true, allPass: true })), failure_list: [] });
    }
    if (req.method === "GET" && path === "/api/v2/accounts/ctd/status") {
      const host = url.searchParams.get("host") ?? "";
      const domain = host.replace(/^track\./, "");
      const ready = [...state.accounts.values()].some((a) => a.email.endsWith(`@${domain}`) && !a.setup_pending);
      return send(200, { host, success: ready, cname: ready, ssl: ready });
    }
    if (req.method === "POST" && path === "/api/v2/campaigns") {
      const unknown = Object.keys(body).filter((k) => !CREATE_FIELDS.has(k));
      if (unknown.length) return send(400, { message: `body/${unknown[0]} must NOT have additional properties` });
      if (!body.name || !body.campaign_schedule?.schedules?.length) return send(400, { message: "name and campaign_schedule are required" });
      const c = { ...body, id: id("camp"), status: 0, timestamp_created: iso(Date.now()) };
      state.campaigns.set(c.id, c);
      state.leads.set(c.id, []);
      return send(200, c);
    }
    if (req.method === "GET" && path === "/api/v2/campaigns") {
      const search = url.searchParams.get("search") ?? "";
      return send(200, { items: [...state.campaigns.values()].filter((c) => c.name.includes(search)), next_starting_after: null });
    }
    let cm = m(/^\/api\/v2\/campaigns\/([^/]+)(\/(activate|pause))?$/);
    if (cm && !["analytics"].includes(cm[1])) {
      const c = state.campaigns.get(cm[1]);
      if (!c) return send(404, { message: "Campaign not found" });
      if (req.method === "GET" && !cm[3]) return send(200, c);
      if (req.method === "PATCH" && !cm[3]) {
        const unknown = Object.keys(body).filter((k) => !CREATE_FIELDS.has(k));
        if (unknown.length) return send(400, { message: `body/${unknown[0]} must NOT have additional properties` });
        Object.assign(c, body);
        return send(200, c);
      }
      if (req.method === "POST" && cm[3] === "activate") {
        c.status = 1;
        return send(200, c);
      }
      if (req.method === "POST" && cm[3] === "pause") {
        c.status = 2;
        return send(200, c);
      }
    }
    if (req.method === "GET" && path === "/api/v2/campaigns/analytics") {
      const a = state.analytics.get(url.searchParams.get("id"));
      return send(200, a ? [a] : []);
    }
    if (req.method === "GET" && (path === "/api/v2/campaigns/analytics/daily" || path === "/api/v2/campaigns/analytics/steps")) {
      const report = state.reports.get(url.searchParams.get("campaign_id")) ?? {};
      return send(200, (path.endsWith("/daily") ? report.daily : report.steps) ?? []);
    }
    if (req.method === "POST" && path === "/api/v2/leads/add") {
      if (!body.campaign_id === !body.list_id) return send(400, { message: "exactly one of campaign_id or list_id" });
      if (!Array.isArray(body.leads) || body.leads.length > 1000) return send(400, { message: "leads: at most 1000" });
      const list = state.leads.get(body.campaign_id);
      if (!list) return send(404, { message: "Campaign not found" });
      let uploaded = 0;
      let blocked = 0;
      let dup = 0;
      for (const l of body.leads) {
        if (state.blocklist.some((b) => l.email === b || l.email.endsWith(`@${b}`))) blocked++;
        else if (list.some((x) => x.email === l.email)) dup++;
        else {
          list.push({ ...l, id: id("lead"), campaign: body.campaign_id, status: 1 });
          uploaded++;
        }
      }
      return send(200, { status: "success", total_sent: body.leads.length, leads_uploaded: uploaded, in_blocklist: blocked, duplicated_leads: dup, skipped_count: 0, invalid_email_count: 0, incomplete_count: 0 });
    }
    if (req.method === "POST" && path === "/api/v2/leads/list") {
      // The singular `campaign` filter is the one that works (DOMAIN §1.9).
      // Pages of `limit` (1–100) after the `starting_after` lead id (DOMAIN §1, pagination);
      // `leadPageSize` makes pages smaller so that a test can reach past the adapter's pages.
      const list = state.leads.get(body.campaign) ?? [];
      const limit = Number(body.limit ?? 100);
      if (!Number.isInteger(limit) || limit < 1 || limit > 100) return send(400, { message: "limit: 1 to 100" });
      const from = body.starting_after ? list.findIndex((l) => l.id === body.starting_after) + 1 : 0;
      if (from === 0 && body.starting_after) return send(400, { message: "starting_after: unknown lead" });
      state.leadPages++;
      const items = list.slice(from, from + Math.min(limit, state.leadPageSize));
      const more = from + items.length < list.length;
      return send(200, { items, next_starting_after: more ? items.at(-1).id : null });
    }
    if (req.method === "GET" && path === "/api/v2/emails") {
      const now = Date.now();
      state.emailCalls = state.emailCalls.filter((t) => t > now - 60_000);
      if (state.emailCalls.length >= 20) return send(429, { message: "Too many requests" }, { "retry-after": "60" });
      state.emailCalls.push(now);
      const since = Date.parse(url.searchParams.get("min_timestamp_created") ?? "1970-01-01T00:00:00Z");
      const items = state.emails.filter(
        (e) => e.campaign_id === url.searchParams.get("campaign_id") && Date.parse(e.timestamp_created) >= since,
      );
      return send(200, { items, next_starting_after: null });
    }
    if (req.method === "POST" && path === "/api/v2/block-lists-entries") {
      if (!body.bl_value) return send(400, { message: "bl_value" });
      if (!state.blocklist.includes(body.bl_value)) state.blocklist.push(body.bl_value);
      return send(200, { id: id("bl"), bl_value: body.bl_value, is_domain: !body.bl_value.includes("@") });
    }
    return send(404, { message: `no route ${req.method} ${path}` });
  }

  const server = createServer((req, res) => {
    let raw = "";
    req.on("data", (c) => (raw += c));
    req.on("end", async () => {
      const url = new URL(req.url, "http://fake");
      const record = { method: req.method, path: url.pathname, query: url.searchParams, headers: req.headers, raw, at: Date.now() };
      state.requests.push(record);
      const send = (status, json, headers = {}) => {
        res.writeHead(status, { "content-type": "application/json", ...headers });
        res.end(JSON.stringify(json));
      };
      if (req.headers.authorization !== `Bearer ${KEY}`) return send(401, { message: "Unauthorized" });
      const ua = req.headers["user-agent"] ?? "";
      if (!ua || /urllib/i.test(ua)) return send(403, { message: "error code: 1010" });
      if (req.method === "DELETE" && (raw.length || req.headers["content-type"])) return send(400, { message: "DELETE takes no body" });
      let body = {};
      if (raw.length) {
        if (req.headers["content-type"] !== "application/json") return send(415, { message: "JSON only" });
        try {
          body = JSON.parse(raw);
        } catch {
          return send(400, { message: "bad JSON" });
        }
      }
      record.body = body;
      const i = state.script.findIndex((s) => s.method === req.method && s.path === url.pathname && (s.when ? s.when(body) : true));
      if (i >= 0) {
        const s = state.script.splice(i, 1)[0];
        if (s.held) {
          // Answered only once the test releases it, with the answer it would have had then.
          s.held.arrive();
          await s.held.released;
          return route(req, url, body, send);
        }
        if (s.commitThen500) {
          // The platform acts, but the answer is lost on the way back.
          route(req, url, body, () => {});
          return send(500, { message: "Internal error" });
        }
        return send(s.status, s.body ?? {}, s.headers ?? {});
      }
      route(req, url, body, send);
    });
  });

  return {
    server,
    state,
    /**
     * Holds the next `method` request to `path` (a scripted entry, found like the others) until
     * `release()`: `arrived` resolves once it came in. Its answer is the one it would have had
     * when released.
     */
    hold(method, path) {
      const h = { method, path };
      h.arrived = new Promise((r) => (h.arrive = r));
      h.released = new Promise((r) => (h.release = r));
      state.script.push({ method, path, held: h });
      return h;
    },
    completeSetup() {
      for (const a of state.accounts.values()) a.setup_pending = false;
    },
    /** Ages every warming account's warm-up by `days` and sets its health score. */
    ageWarmup(days, score) {
      for (const a of state.accounts.values()) {
        if (a.timestamp_warmup_start) {
          a.timestamp_warmup_start = iso(Date.parse(a.timestamp_warmup_start) - days * 86_400_000);
          a.stat_warmup_score = score;
        }
      }
    },
    campaign() {
      return [...state.campaigns.values()].at(-1);
    },
    setAnalytics(campaignId, a) {
      state.analytics.set(campaignId, { campaign_id: campaignId, leads_count: (state.leads.get(campaignId) ?? []).length, ...a });
    },
    setReport(campaignId, report) {
      state.reports.set(campaignId, report);
    },
    setLeadStatus(campaignId, email, status) {
      const l = (state.leads.get(campaignId) ?? []).find((x) => x.email === email);
      if (l) l.status = status;
    },
    receive(email) {
      state.emails.push({ id: id("em"), timestamp_created: iso(Date.now()), ...email });
    },
    /** The campaign deleted in Instantly's app: its endpoints answer 404, its analytics nothing. */
    deleteCampaign(campaignId) {
      state.campaigns.delete(campaignId);
      state.leads.delete(campaignId);
      state.analytics.delete(campaignId);
      state.reports.delete(campaignId);
    },
  };
}

// A local fake of the parts of Stripe's API the connector uses, following Stripe's documented
// requests: form-encoded bodies, Bearer secret key, a pinned Stripe-Version, and idempotency
// keys whose replays return the first answer without acting again. It refuses any request that
// does not look like what Stripe documents, and records everything for the tests to inspect.
import { createServer } from "node:http";
import { createHmac } from "node:crypto";

export function signStripe(secret, payload, t = Math.floor(Date.now() / 1000)) {
  const v1 = createHmac("sha256", secret).update(`${t}.${payload}`).digest("hex");
  return `t=${t},v1=${v1}`;
}

export async function startFakeStripe({ secretKey, prices }) {
  const requests = [];
  const charges = [];
  const idempotency = new Map();
  const failNext = new Map(); // path -> how many 500s to answer first
  const declining = new Set(); // subscription ids whose changes are declined
  const subscriptions = new Map(); // id -> { customer, item, price }
  const sessions = new Map(); // checkout session id -> session (status open, complete or expired)
  let seq = 0;
  const now = () => Math.floor(Date.now() / 1000);

  const server = createServer((req, res) => {
    let raw = "";
    req.on("data", (c) => (raw += c));
    req.on("end", () => {
      const url = new URL(req.url, "http://fake");
      const form = Object.fromEntries(new URLSearchParams(raw));
      const record = { method: req.method, path: url.pathname, headers: req.headers, form, raw };
      requests.push(record);
      const send = (status, body, store = true) => {
        const key = req.headers["idempotency-key"];
        if (key && store) idempotency.set(key, { status, body, raw });
        res.writeHead(status, { "content-type": "application/json" });
        res.end(JSON.stringify(body));
      };
      const error = (status, type, message, extra = {}) => send(status, { error: { type, message, ...extra } });
      if (req.headers.authorization !== `Bearer ${secretKey}`) return error(401, "invalid_request_error", "Invalid API Key provided");
      if (!req.headers["stripe-version"]) return error(400, "invalid_request_error", "Stripe-Version missing");
      if (req.method === "POST" && req.headers["content-type"] !== "application/x-www-form-urlencoded")
        return error(400, "invalid_request_error", "Stripe expects form-encoded bodies");
      const key = req.headers["idempotency-key"];
      if (key && idempotency.has(key)) {
        const first = idempotency.get(key);
        if (first.raw !== raw) return error(400, "idempotency_error", "Keys for idempotent requests can only be used with the same parameters");
        res.writeHead(first.status, { "content-type": "application/json", "idempotent-replayed": "true" });
        return res.end(JSON.stringify(first.body));
      }
      const fails = failNext.get(url.pathname) ?? 0;
      if (fails > 0) {
        failNext.set(url.pathname, fails - 1);
        return send(500, { error: { type: "api_error", message: "Something went wrong on Stripe's end." } }, false);
      }
      const id = (prefix) => `${prefix}_fake${++seq}`;

      if (req.method === "POST" && url.pathname === "/v1/checkout/sessions") {
        const problems = [];
        if (form.mode !== "subscription") problems.push("mode");
        if (!Object.values(prices).includes(form["line_items[0][price]"])) problems.push("line_items[0][price]");
        if (form["line_items[0][quantity]"] !== "1") problems.push("line_items[0][quantity]");
        if (!/^https?:\/\//.test(form.success_url ?? "") || !form.success_url.includes("{CHECKOUT_SESSION_ID}")) problems.push("success_url");
        if (!/^https?:\/\//.test(form.cancel_url ?? "")) problems.push("cancel_url");
        if (!/^ws_[0-9a-f]{24}$/.test(form.client_reference_id ?? "")) problems.push("client_reference_id");
        if (form["subscription_data[metadata][workspace]"] !== form.client_reference_id) problems.push("subscription_data[metadata][workspace]");
        if (form.customer && form.customer_email) problems.push("customer and customer_email");
        if (problems.length) return error(400, "invalid_request_error", `Invalid: ${problems.join(", ")}`);
        const sid = id("cs_test");
        const session = { id: sid, object: "checkout.session", mode: "subscription", status: "open", url: `https://checkout.stripe.test/c/pay/${sid}`, expires_at: now() + 86400, client_reference_id: form.client_reference_id };
        sessions.set(sid, session);
        return send(200, session);
      }
      // Expiring a session (POST /v1/checkout/sessions/:id/expire) works on open ones only;
      // retrieving one (GET) tells what became of it.
      const sessionMatch = url.pathname.match(/^\/v1\/checkout\/sessions\/(cs_[A-Za-z0-9_]+)(\/expire)?$/);
      if (sessionMatch) {
        const session = sessions.get(sessionMatch[1]);
        if (!session) return error(404, "invalid_request_error", `No such checkout.session: '${sessionMatch[1]}'`);
        if (req.method === "GET" && !sessionMatch[2]) return send(200, session, false);
        if (req.method !== "POST" || !sessionMatch[2]) return error(405, "invalid_request_error", "Unrecognized request");
        if (session.status !== "open") return error(400, "invalid_request_error", 'Only Checkout Sessions with a status in ["open"] can be expired.');
        session.status = "expired";
        session.url = null;
        return send(200, session);
      }
      if (req.method === "POST" && url.pathname === "/v1/billing_portal/sessions") {
        if (!/^cus_/.test(form.customer ?? "") || !/^https?:\/\//.test(form.return_url ?? "")) return error(400, "invalid_request_error", "customer and return_url are required");
        const pid = id("bps");
        return send(200, { id: pid, object: "billing_portal.session", customer: form.customer, url: `https://billing.stripe.test/p/session/${pid}`, return_url: form.return_url });
      }
      const subMatch = url.pathname.match(/^\/v1\/subscriptions\/(sub_[A-Za-z0-9_]+)$/);
      if (subMatch) {
        const sub = subscriptions.get(subMatch[1]);
        if (!sub) return error(404, "invalid_request_error", `No such subscription: '${subMatch[1]}'`);
        const object = (latestInvoice) => ({
          id: subMatch[1], object: "subscription", customer: sub.customer, status: "active", cancel_at_period_end: false, metadata: { workspace: sub.workspace },
          items: { object: "list", data: [{ id: sub.item, price: { id: sub.price }, current_period_start: sub.start, current_period_end: sub.end }] },
          ...(latestInvoice ? { latest_invoice: latestInvoice } : {}),
        });
        if (req.method === "GET") return send(200, object());
        if (!key) return error(400, "invalid_request_error", "the connector must send an Idempotency-Key");
        const problems = [];
        if (form["items[0][id]"] !== sub.item) problems.push("items[0][id]");
        if (!Object.values(prices).includes(form["items[0][price]"])) problems.push("items[0][price]");
        if (form.proration_behavior !== "always_invoice") problems.push("proration_behavior");
        if (form.payment_behavior !== "error_if_incomplete") problems.push("payment_behavior");
        if (problems.length) return error(400, "invalid_request_error", `Invalid: ${problems.join(", ")}`);
        if (declining.has(subMatch[1])) return error(402, "card_error", "Your card was declined.", { code: "card_declined", decline_code: "insufficient_funds" });
        sub.price = form["items[0][price]"];
        const amount = 5000;
        const invoice = id("in");
        charges.push({ subscription: subMatch[1], key, amount, invoice });
        return send(200, object({ id: invoice, object: "invoice", amount_paid: amount, currency: "usd", status: "paid", created: now() }));
      }
      error(404, "invalid_request_error", `Unrecognized request URL (${req.method}: ${url.pathname})`);
    });
  });
  await new Promise((r) => server.listen(0, "127.0.0.1", r));
  const url = `http://127.0.0.1:${server.address().port}`;
  return {
    url,
    requests,
    sessions,
    charges,
    failNext,
    declining,
    subscriptions,
    close: () => new Promise((r) => server.close(r)),
  };
}

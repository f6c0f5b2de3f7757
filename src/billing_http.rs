//! The billing routes outside MCP: Stripe's signed webhook (`POST /v1/stripe/webhook`), the
//! sandbox provider's own checkout and portal pages (`/sandbox/checkout/{ws}/{session}`,
//! `/sandbox/portal/{ws}/{session}`, sandbox mode only), and the page the provider sends the
//! user back to (`GET /billing/return`). Each reaches the right workspace's Durable Object
//! through `Platform::workspaces()`.

use maud::{DOCTYPE, Markup, html};

use crate::config::{Config, ProviderMode};
use crate::dates::utc_minute;
use crate::form;
use crate::http::{HttpRequest, HttpResponse, Platform, error_response};
use crate::mcp::Trace;
use crate::plans::Money;
use crate::providers::sandbox_billing::{
    CARD_DECLINED, CARD_DECLINES_LATER, CARD_OK, CHECKOUT_EXPIRED, CHECKOUT_REPLACED, PageSession, Paid,
};
use crate::providers::stripe;
use crate::workspace::billing::describe_limits;
use crate::workspace::{Op, OpReply};

/// Whether `s` is a workspace id (`ws_` + 24 hex digits, see `workspace::workspace_id_for`).
pub fn is_workspace_id(s: &str) -> bool {
    s.strip_prefix("ws_")
        .is_some_and(|h| h.len() == 24 && h.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)))
}

fn is_session_id(s: &str, prefix: &str) -> bool {
    s.strip_prefix(prefix).is_some_and(|h| h.len() == 32 && h.bytes().all(|b| b.is_ascii_hexdigit()))
}

fn json(status: u16, body: serde_json::Value) -> HttpResponse {
    HttpResponse::json(status, body.to_string()).with("cache-control", "no-store")
}

// ---- the Stripe webhook ------------------------------------------------------------------

/// `POST /v1/stripe/webhook`: verifies the signature over the raw body, then applies the event
/// in the workspace named by the session's `client_reference_id` or the subscription's
/// metadata, once per event id. 2xx tells Stripe to stop retrying; 5xx asks it to retry.
pub async fn stripe_webhook(
    req: &HttpRequest,
    config: &Config,
    platform: &dyn Platform,
    trace: &mut Trace,
) -> HttpResponse {
    let fail = |trace: &mut Trace, status: u16, code: &str, detail: String| {
        trace.outcome = "webhook_refused";
        trace.detail = Some(detail);
        json(status, serde_json::json!({ "error": code }))
    };
    if config.stripe.webhook_secrets.is_empty() {
        return fail(trace, 404, "not_found", "no STRIPE_WEBHOOK_SECRET configured".into());
    }
    let Some(body) = req.body.as_deref() else {
        return fail(trace, 413, "payload_too_large", "body over 1 MiB".into());
    };
    let header = req.header("stripe-signature").unwrap_or_default();
    if let Err(e) =
        stripe::verify_signature(header, body, &config.stripe.webhook_secrets, platform.now_ms() / 1000)
    {
        return fail(trace, 400, "invalid_signature", e.to_string());
    }
    let event = match stripe::parse_event(body, &config.plans) {
        Ok(Some(event)) if is_workspace_id(&event.workspace) => event,
        Ok(Some(event)) => {
            trace.outcome = "webhook_ignored";
            trace.detail = Some(format!("event {} names no workspace of ours", event.id));
            return json(200, serde_json::json!({ "received": true, "ignored": true }));
        }
        Ok(None) => {
            trace.outcome = "webhook_ignored";
            return json(200, serde_json::json!({ "received": true, "ignored": true }));
        }
        Err(e) => return fail(trace, 400, "invalid_event", e),
    };
    let workspace = event.workspace.clone();
    let event_id = event.id.clone();
    match platform.workspaces().op(&workspace, Op::BillingEvent { event }).await {
        Ok(OpReply::Billing { applied }) => {
            trace.outcome = "webhook_ok";
            trace.detail = Some(format!("{event_id}: {applied:?}"));
            let applied = serde_json::to_value(applied).unwrap_or_default();
            json(200, serde_json::json!({ "received": true, "outcome": applied }))
        }
        Ok(other) => {
            fail(trace, 500, "server_error", format!("{event_id}: unexpected reply {}", other.kind()))
        }
        Err(e) => fail(trace, 500, "server_error", format!("{event_id}: {e}")),
    }
}

// ---- pages -------------------------------------------------------------------------------

const STYLE: &str = "body{font:16px/1.5 system-ui,sans-serif;margin:0;background:#f4f5f7;color:#1d2330}\
main{max-width:30rem;margin:3rem auto;background:#fff;border-radius:12px;padding:2rem;box-shadow:0 1px 4px #0002}\
h1{font-size:1.3rem;margin:0 0 .25rem}.badge{display:inline-block;background:#fff3cd;color:#7a5b00;border-radius:6px;\
padding:.1rem .5rem;font-size:.8rem;margin-bottom:1rem}.price{font-size:2rem;font-weight:600}.muted{color:#5b6475}\
.error{background:#fde8e8;color:#9b1c1c;padding:.6rem .8rem;border-radius:8px}.ok{background:#e6f6ec;color:#14532d;\
padding:.6rem .8rem;border-radius:8px}label{display:block;margin:1rem 0 .3rem}input{font:inherit;width:100%;\
box-sizing:border-box;padding:.6rem;border:1px solid #c8ccd4;border-radius:8px}button{font:inherit;margin-top:1rem;\
width:100%;padding:.7rem;border:0;border-radius:8px;background:#3b5bdb;color:#fff;cursor:pointer}\
button.danger{background:#c92a2a}table{width:100%;border-collapse:collapse}td{padding:.3rem 0;border-bottom:1px solid #eee}";

/// A full page with the headers every HTML page of the Worker carries.
pub fn page(status: u16, title: &str, body: Markup) -> HttpResponse {
    let html = html! {
        (DOCTYPE)
        html lang="en" {
            head {
                meta charset="utf-8";
                meta name="viewport" content="width=device-width,initial-scale=1";
                title { (title) }
                (crate::html::style(STYLE))
            }
            body { main { (body) } }
        }
    };
    HttpResponse::new(status, "text/html; charset=utf-8", html.into_string())
        .with(
            "content-security-policy",
            "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
        )
        .with("x-frame-options", "DENY")
        // Not `no-referrer`, which makes browsers send `Origin: null` with the page's own POST.
        .with("referrer-policy", "same-origin")
        .with("cache-control", "no-store")
}

/// `GET /billing/return`: where Stripe sends the user back after checkout or the portal.
pub fn return_page(req: &HttpRequest) -> HttpResponse {
    let pairs = form::parse(req.query.as_deref().unwrap_or_default().as_bytes());
    let (title, text) = match (form::get(&pairs, "checkout"), form::get(&pairs, "portal")) {
        (Some("success"), _) => (
            "Payment received",
            "Thank you. Your plan changes as soon as the payment is confirmed, usually within seconds.",
        ),
        (Some(_), _) => ("Checkout closed", "Nothing was charged."),
        (_, Some(_)) => ("Billing updated", "Any change you made applies to your VibeSell workspace."),
        _ => ("VibeSell billing", "Nothing to do here."),
    };
    page(
        200,
        title,
        html! {
            h1 { (title) }
            p { (text) }
            p class="muted" { "You can close this tab and go back to your conversation." }
        },
    )
}

/// The sandbox pages' heading: what was done, under the sandbox badge.
fn sandbox_page_body(heading: &str, rest: Markup) -> Markup {
    html! {
        div class="badge" { "VibeSell sandbox: a simulation of Stripe, no real money" }
        h1 { (heading) }
        (rest)
    }
}

/// `/sandbox/{checkout|portal}/{ws}/{session}`: the sandbox provider's pages (sandbox mode only).
pub async fn sandbox_page(
    req: &HttpRequest,
    config: &Config,
    platform: &dyn Platform,
    trace: &mut Trace,
) -> HttpResponse {
    let not_found = |trace: &mut Trace| {
        trace.outcome = "http_error";
        error_response(404, "not_found", "Nothing here.")
    };
    if config.provider_mode != ProviderMode::Sandbox {
        return not_found(trace);
    }
    let parts: Vec<&str> = req.path.trim_start_matches('/').split('/').collect();
    let (kind, workspace, session) = match parts.as_slice() {
        ["sandbox", kind @ ("checkout" | "portal"), ws, session] => (*kind, *ws, *session),
        _ => return not_found(trace),
    };
    let prefix = if kind == "checkout" { "cs_sandbox_" } else { "bps_sandbox_" };
    if !is_workspace_id(workspace) || !is_session_id(session, prefix) {
        return not_found(trace);
    }
    let post = match req.method.as_str() {
        "GET" | "HEAD" => false,
        "POST" => true,
        _ => {
            trace.outcome = "http_error";
            return error_response(405, "method_not_allowed", "Use GET or POST.").with("allow", "GET, POST");
        }
    };
    // The session id in the path is the capability; a POST must also come from our own pages.
    if post && req.header("origin").is_some_and(|o| !config.is_own_origin(o)) {
        trace.outcome = "forbidden";
        return error_response(403, "forbidden", "Cross-site form posts are refused.");
    }
    let fields = form::parse(req.body.as_deref().unwrap_or_default());
    let op = match (kind, post) {
        ("checkout", true) => {
            Op::SandboxPay { session: session.into(), card: form::get(&fields, "card").unwrap_or("").into() }
        }
        ("portal", true) => {
            Op::SandboxCancel { session: session.into(), to: form::get(&fields, "plan").map(str::to_owned) }
        }
        _ => Op::SandboxPage { kind: kind.into(), session: session.into() },
    };
    let reply = match platform.workspaces().op(workspace, op).await {
        Ok(reply) => reply,
        Err(e) => {
            trace.outcome = "http_error";
            trace.detail = Some(e);
            return page(
                500,
                "Something went wrong",
                html! { h1 { "Something went wrong" } p { "Nothing was charged. Try again." } },
            );
        }
    };
    match reply {
        OpReply::SandboxPage { session: s, current_plan, .. } if kind == "checkout" => {
            checkout_page(config, &s, &current_plan, None)
        }
        OpReply::SandboxPage { session: s, current_plan, invoices } => {
            portal_page(config, &s, &current_plan, &invoices)
        }
        OpReply::SandboxPaid { outcome: Paid::Paid { .. } } => {
            trace.detail = Some("sandbox checkout paid".into());
            page(
                200,
                "Payment received",
                sandbox_page_body(
                    "Payment received",
                    html! {
                        p class="ok" { "Your VibeSell plan is updated." }
                        p class="muted" { "You can close this tab and go back to your conversation." }
                    },
                ),
            )
        }
        OpReply::SandboxPaid { outcome: Paid::Refused { reason } } => {
            // Show the form again with why; the session stays open.
            match platform
                .workspaces()
                .op(workspace, Op::SandboxPage { kind: kind.into(), session: session.into() })
                .await
            {
                Ok(OpReply::SandboxPage { session: s, current_plan, .. }) => {
                    let mut response = checkout_page(config, &s, &current_plan, Some(&reason));
                    response.status = 402;
                    response
                }
                _ => not_found(trace),
            }
        }
        OpReply::SandboxPaid { outcome: Paid::Closed { reason } } => {
            page(409, "Checkout closed", sandbox_page_body("Checkout closed", html! { p { (reason) } }))
        }
        OpReply::SandboxCanceled { canceled, to } => {
            let done = match (canceled, to) {
                (true, Some(plan)) => format!("Your plan is now {plan}, from today."),
                (true, None) => {
                    "Your subscription is canceled. The workspace is back on the free plan.".into()
                }
                (false, _) => "There was no active subscription to cancel.".into(),
            };
            page(
                200,
                "Billing portal",
                sandbox_page_body(
                    "Billing portal",
                    html! { p class="ok" { (done) } p class="muted" { "You can close this tab." } },
                ),
            )
        }
        _ => not_found(trace),
    }
}

fn checkout_page(config: &Config, s: &PageSession, current_plan: &str, error: Option<&str>) -> HttpResponse {
    let plans = &config.plans;
    let Some(plan) = s.plan.as_deref().and_then(|p| plans.find(p)) else {
        return page(404, "Checkout", html! { h1 { "This plan is no longer offered." } });
    };
    let price = plans.price(plan).display();
    let state = html! {
        @match s.status.as_str() {
            "complete" => p class="ok" { "This checkout is paid." },
            "expired" => p class="error" { (CHECKOUT_EXPIRED) },
            "replaced" => p class="error" { (CHECKOUT_REPLACED) },
            _ if current_plan == plan.id => p class="ok" { "The workspace is already on this plan." },
            _ => {
                @if let Some(error) = error { p class="error" { (error) } }
                form method="post" {
                    label for="card" { "Card number (test cards only)" }
                    input id="card" name="card" inputmode="numeric" autocomplete="off" value="4242 4242 4242 4242";
                    button type="submit" { "Pay " (price) }
                }
                p class="muted" {
                    "Test cards: " code { (group4(CARD_OK)) } " pays; " code { (group4(CARD_DECLINES_LATER)) }
                    " pays now and declines later charges; " code { (group4(CARD_DECLINED)) }
                    " is declined. The page expires at " (utc_minute(s.expires_at)) "."
                }
            }
        }
    };
    let body = html! {
        div class="price" { (price) span class="muted" { "/month" } }
        p class="muted" { (describe_limits(plan)) }
        (state)
    };
    page(
        200,
        "VibeSell checkout (sandbox)",
        sandbox_page_body(&format!("Subscribe to VibeSell {}", plan.name), body),
    )
}

fn group4(card: &str) -> String {
    card.as_bytes().chunks(4).map(|c| String::from_utf8_lossy(c).into_owned()).collect::<Vec<_>>().join(" ")
}

fn portal_page(
    config: &Config,
    s: &PageSession,
    current_plan: &str,
    invoices: &[crate::providers::billing::Invoice],
) -> HttpResponse {
    let plans = &config.plans;
    if s.status == "expired" {
        let body = html! { p class="error" { "This link has expired; ask for a new one." } };
        return page(200, "Billing portal (sandbox)", sandbox_page_body("Billing portal", body));
    }
    let plan_name = plans.find(current_plan).map_or(current_plan, |p| p.name.as_str());
    // The lower paid plans, as a portal that allows downgrades offers them; a higher one is
    // upgrade_plan's approval.
    let price = plans.find(current_plan).map_or(0, |p| p.price_monthly);
    let lower = plans.plans.iter().filter(|p| p.price_monthly > 0 && p.price_monthly < price);
    let body = html! {
        p { "Plan: " strong { (plan_name) } }
        @if let Some(card) = &s.card_last4 { p { "Card: •••• " (card) } }
        @match &s.subscription {
            Some(sub) if sub.status == "active" => {
                @if let Some(end) = sub.period_end { p class="muted" { "Renews on " (utc_minute(end)) "." } }
                @for p in lower {
                    form method="post" {
                        input type="hidden" name="plan" value=(p.id);
                        button type="submit" { "Switch to " (p.name) " (" (plans.price(p).display()) "/month) now" }
                    }
                }
                form method="post" { button class="danger" type="submit" { "Cancel the subscription now" } }
            },
            Some(sub) => p class="muted" { "Subscription " (sub.status) "." },
            None => p class="muted" { "No subscription." },
        }
        @if !invoices.is_empty() {
            h2 { "Invoices" }
            table {
                @for i in invoices {
                    tr {
                        td { (utc_minute(i.created_at)) }
                        td { (i.description) }
                        td { (Money::new(i.amount, &i.currency).display()) }
                    }
                }
            }
        }
    };
    page(200, "Billing portal (sandbox)", sandbox_page_body("Billing portal", body))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_and_card_groups() {
        assert!(is_workspace_id("ws_7774e68c50d0e5c3a9c03684"));
        assert!(!is_workspace_id("ws_7774E68C50D0E5C3A9C03684"));
        assert!(!is_workspace_id("ws_7774e68c50d0e5c3a9c0368"));
        assert!(!is_workspace_id("ws_../../etc/passwd000000"));
        assert_eq!(group4("4242424242424242"), "4242 4242 4242 4242");
    }

    #[test]
    fn every_field_of_the_sandbox_pages_is_escaped() {
        use crate::html::tests::{EVIL, assert_escaped};
        use crate::providers::billing::{Invoice, Subscription};
        let config = crate::testing::test_config();
        let paid = config.plans.plans.iter().find(|p| p.price_monthly > 0).unwrap().id.clone();
        let session = PageSession {
            id: "cs_sandbox_1".into(),
            plan: Some(paid.clone()),
            status: "open".into(),
            expires_at: 0,
            subscription: None,
            card_last4: None,
        };
        let body = |r: HttpResponse| String::from_utf8(r.body).unwrap();
        assert_escaped(&body(checkout_page(&config, &session, "free", Some(EVIL))), "declined reason");
        let mut renamed = config.clone();
        renamed.plans.plans.iter_mut().for_each(|p| p.name = EVIL.into());
        assert_escaped(&body(checkout_page(&renamed, &session, "free", None)), "plan name");

        let subscription = Subscription {
            id: "sub_1".into(),
            customer: None,
            status: "active".into(),
            plan: Some(paid.clone()),
            item: None,
            period_start: None,
            period_end: Some(0),
            cancel_at_period_end: false,
        };
        let portal = PageSession { subscription: Some(subscription.clone()), ..session };
        let invoice = Invoice {
            id: "in_1".into(),
            amount: 100,
            currency: "usd".into(),
            description: "Starter".into(),
            created_at: 0,
        };
        let cases = [
            ("current plan", portal.clone(), EVIL.to_owned(), invoice.clone()),
            (
                "card digits",
                PageSession { card_last4: Some(EVIL.into()), ..portal.clone() },
                paid.clone(),
                invoice.clone(),
            ),
            (
                "subscription status",
                PageSession {
                    subscription: Some(Subscription { status: EVIL.into(), ..subscription }),
                    ..portal.clone()
                },
                paid.clone(),
                invoice.clone(),
            ),
            ("invoice description", portal.clone(), paid, Invoice { description: EVIL.into(), ..invoice }),
        ];
        for (field, s, current, invoice) in cases {
            assert_escaped(&body(portal_page(&config, &s, &current, &[invoice])), field);
        }
        let top = config.plans.plans.iter().max_by_key(|p| p.price_monthly).unwrap().id.clone();
        let lower = body(portal_page(&renamed, &portal, &top, &[]));
        assert!(lower.contains("Switch to"), "{lower}");
        assert_escaped(&lower, "lower plan name");
    }
}

//! The Stripe adapter against a scripted fake, and webhook verification and parsing.

use hmac::{Hmac, Mac};
use serde_json::json;
use sha2::Sha256;

use super::*;
use crate::config::{Secret, StripeConfig};
use crate::form::get;
use crate::outbound::OutboundResponse;
use crate::plans::Catalogue;
use crate::testing::{FakeOutbound, block_on};

const SECRET: &str = "whsec_test_secret";
const NOW_S: i64 = 1_795_953_600;

fn config() -> StripeConfig {
    StripeConfig {
        api_base: "http://127.0.0.1:1".into(),
        secret_key: Some(Secret("sk_test_123".into())),
        webhook_secrets: vec![Secret(SECRET.into())],
    }
}

fn plans() -> Catalogue {
    let doc = crate::plans::EMBEDDED
        .replace(r#""id": "growth","#, r#""id": "growth", "stripePrice": "price_growth","#);
    Catalogue::parse(&doc).unwrap()
}

fn header(secret: &str, t: i64, payload: &[u8]) -> String {
    format!("t={t},v1={}", sign(secret, t, payload))
}

#[test]
fn signatures_follow_stripe_node() {
    // A vector computed independently: HMAC-SHA256("whsec_test_secret", "1795953600.{}").
    assert_eq!(
        sign(SECRET, NOW_S, b"{}"),
        crate::ids::hex(&{
            let mut mac = Hmac::<Sha256>::new_from_slice(SECRET.as_bytes()).unwrap();
            mac.update(b"1795953600.{}");
            mac.finalize().into_bytes()
        })
    );
    let body = br#"{"id":"evt_1"}"#;
    let secrets = [Secret(SECRET.into())];
    assert_eq!(verify_signature(&header(SECRET, NOW_S, body), body, &secrets, NOW_S), Ok(()));
    // Several v1 signatures (secret rotation) and other schemes are fine.
    let rotated =
        format!("t={NOW_S},v0=abc,v1={},v1={}", sign("whsec_old", NOW_S, body), sign(SECRET, NOW_S, body));
    assert_eq!(verify_signature(&rotated, body, &secrets, NOW_S), Ok(()));
    let two_secrets = [Secret("whsec_new".into()), Secret(SECRET.into())];
    assert_eq!(verify_signature(&header(SECRET, NOW_S, body), body, &two_secrets, NOW_S), Ok(()));

    assert_eq!(
        verify_signature(&header("whsec_wrong", NOW_S, body), body, &secrets, NOW_S),
        Err(SignatureError::Mismatch)
    );
    assert_eq!(
        verify_signature(&header(SECRET, NOW_S, body), br#"{"id":"evt_2"}"#, &secrets, NOW_S),
        Err(SignatureError::Mismatch),
        "the exact bytes are signed"
    );
    assert_eq!(
        verify_signature(&header(SECRET, NOW_S - 301, body), body, &secrets, NOW_S),
        Err(SignatureError::Stale)
    );
    assert_eq!(verify_signature(&header(SECRET, NOW_S - 300, body), body, &secrets, NOW_S), Ok(()));
    assert_eq!(
        verify_signature(&header(SECRET, NOW_S + 301, body), body, &secrets, NOW_S),
        Err(SignatureError::Stale)
    );
    for bad in ["", "v1=abc", &format!("t={NOW_S}"), "t=x,v1=abc", &format!("t={NOW_S},v0=abc")] {
        assert_eq!(verify_signature(bad, body, &secrets, NOW_S), Err(SignatureError::Malformed), "{bad}");
    }
    assert_eq!(
        verify_signature(&header(SECRET, NOW_S, body), body, &[], NOW_S),
        Err(SignatureError::NoSecret)
    );
}

#[test]
fn events_are_read_into_the_domain() {
    let plans = plans();
    let completed = json!({"id": "evt_1", "type": "checkout.session.completed", "created": NOW_S, "data": {"object": {
        "object": "checkout.session", "mode": "subscription", "client_reference_id": "ws_abc", "customer": "cus_1",
        "subscription": "sub_1", "payment_status": "paid", "status": "complete", "metadata": {"plan": "growth"}}}});
    let event = parse_event(completed.to_string().as_bytes(), &plans).unwrap().unwrap();
    assert_eq!(
        (event.id.as_str(), event.workspace.as_str(), event.created_ms),
        ("evt_1", "ws_abc", NOW_S * 1000)
    );
    assert_eq!(
        event.kind,
        EventKind::CheckoutCompleted {
            customer: Some("cus_1".into()),
            subscription: Some("sub_1".into()),
            plan: Some("growth".into()),
            paid: true
        }
    );

    let updated = json!({"id": "evt_2", "type": "customer.subscription.updated", "created": NOW_S, "data": {"object": {
        "id": "sub_1", "object": "subscription", "customer": {"id": "cus_1"}, "status": "past_due", "cancel_at_period_end": true,
        "metadata": {"workspace": "ws_abc"},
        "items": {"data": [{"id": "si_1", "price": {"id": "price_growth"}, "current_period_start": NOW_S, "current_period_end": NOW_S + 2_592_000}]}}}});
    let event = parse_event(updated.to_string().as_bytes(), &plans).unwrap().unwrap();
    let EventKind::SubscriptionChanged { subscription, deleted } = event.kind else { panic!("subscription") };
    assert!(!deleted);
    assert_eq!(subscription.plan.as_deref(), Some("growth"), "price id mapped to the plan");
    assert_eq!(subscription.customer.as_deref(), Some("cus_1"), "expanded customer");
    assert_eq!(subscription.item.as_deref(), Some("si_1"));
    assert_eq!(subscription.period_end, Some((NOW_S + 2_592_000) * 1000), "period from the item (basil)");
    assert!(subscription.cancel_at_period_end);

    let invoice = json!({"id": "evt_3", "type": "invoice.paid", "created": NOW_S, "data": {"object": {
        "id": "in_1", "amount_paid": 14900, "currency": "usd", "created": NOW_S,
        "parent": {"subscription_details": {"metadata": {"workspace": "ws_abc"}}},
        "lines": {"data": [{"description": "1 × Growth (at $149.00 / month)"}]}}}});
    let event = parse_event(invoice.to_string().as_bytes(), &plans).unwrap().unwrap();
    assert_eq!(event.workspace, "ws_abc");
    let EventKind::InvoicePaid { invoice } = event.kind else { panic!("invoice") };
    assert_eq!((invoice.amount, invoice.description.as_str()), (14900, "1 × Growth (at $149.00 / month)"));

    let other = json!({"id": "evt_4", "type": "charge.refunded", "created": NOW_S, "data": {"object": {}}});
    assert_eq!(parse_event(other.to_string().as_bytes(), &plans).unwrap(), None);
    let payment_mode = json!({"id": "evt_5", "type": "checkout.session.completed", "created": NOW_S,
        "data": {"object": {"mode": "payment", "client_reference_id": "ws_abc"}}});
    assert_eq!(parse_event(payment_mode.to_string().as_bytes(), &plans).unwrap(), None);
    let no_workspace = json!({"id": "evt_6", "type": "customer.subscription.deleted", "created": NOW_S,
        "data": {"object": {"id": "sub_9", "status": "canceled", "metadata": {}}}});
    assert_eq!(parse_event(no_workspace.to_string().as_bytes(), &plans).unwrap(), None);
    assert!(parse_event(b"not json", &plans).is_err());
    assert!(parse_event(br#"{"id":"x","type":"a","created":1}"#, &plans).is_err());
}

fn growth(plans: &Catalogue) -> &crate::plans::Plan {
    plans.find("growth").unwrap()
}

#[test]
fn checkout_and_portal_sessions_are_form_encoded_as_stripe_documents() {
    let plans = plans();
    let fake = FakeOutbound::new(vec![
        FakeOutbound::json(
            200,
            json!({"id": "cs_1", "url": "https://checkout.stripe.com/c/pay/cs_1", "expires_at": NOW_S + 86400}),
        ),
        FakeOutbound::json(200, json!({"id": "bps_1", "url": "https://billing.stripe.com/p/session/bps_1"})),
    ]);
    let config = config();
    let stripe = Stripe::new(&config, &fake);
    let session = block_on(stripe.create_checkout(CheckoutRequest {
        workspace: "ws_abc",
        plan: growth(&plans),
        customer: None,
        success_url:
            "https://vs.test/billing/return?checkout=success&session_id={CHECKOUT_SESSION_ID}".into(),
        cancel_url: "https://vs.test/billing/return?checkout=cancel".into(),
        idempotency_key: "vibesell-checkout-req_1-growth".into(),
    }))
    .unwrap();
    assert_eq!(session.url, "https://checkout.stripe.com/c/pay/cs_1");
    assert_eq!(session.expires_at, Some((NOW_S + 86400) * 1000));
    let req = fake.requests.borrow()[0].clone();
    assert_eq!((req.method.as_str(), req.url.as_str()), ("POST", "http://127.0.0.1:1/v1/checkout/sessions"));
    assert_eq!(fake.header(0, "authorization").as_deref(), Some("Bearer sk_test_123"));
    assert_eq!(fake.header(0, "content-type").as_deref(), Some("application/x-www-form-urlencoded"));
    assert_eq!(fake.header(0, "stripe-version").as_deref(), Some(API_VERSION));
    assert_eq!(fake.header(0, "idempotency-key").as_deref(), Some("vibesell-checkout-req_1-growth"));
    let form = fake.form(0);
    assert_eq!(get(&form, "mode"), Some("subscription"));
    assert_eq!(get(&form, "line_items[0][price]"), Some("price_growth"));
    assert_eq!(get(&form, "line_items[0][quantity]"), Some("1"));
    assert_eq!(get(&form, "client_reference_id"), Some("ws_abc"));
    assert_eq!(get(&form, "subscription_data[metadata][workspace]"), Some("ws_abc"));
    assert_eq!(get(&form, "metadata[plan]"), Some("growth"));
    assert!(get(&form, "success_url").unwrap().ends_with("session_id={CHECKOUT_SESSION_ID}"));
    assert_eq!(get(&form, "customer"), None, "never both customer and customer_email");

    let portal = block_on(stripe.create_portal(PortalRequest {
        workspace: "ws_abc",
        customer: "cus_1",
        return_url: "https://vs.test/billing/return?portal=done".into(),
    }))
    .unwrap();
    assert_eq!(portal.url, "https://billing.stripe.com/p/session/bps_1");
    let form = fake.form(1);
    assert_eq!(fake.requests.borrow()[1].url, "http://127.0.0.1:1/v1/billing_portal/sessions");
    assert_eq!(
        (get(&form, "customer"), get(&form, "return_url")),
        (Some("cus_1"), Some("https://vs.test/billing/return?portal=done"))
    );
}

fn subscription_response() -> serde_json::Value {
    json!({"id": "sub_1", "object": "subscription", "customer": "cus_1", "status": "active",
        "items": {"data": [{"id": "si_1", "price": {"id": "price_growth"}, "current_period_start": NOW_S, "current_period_end": NOW_S + 100}]},
        "latest_invoice": {"id": "in_9", "amount_paid": 5000, "currency": "usd", "status": "paid", "created": NOW_S}})
}

fn change<'a>(
    stripe: &Stripe<'_>,
    plans: &'a Catalogue,
    item: Option<&'a str>,
) -> Result<PlanChanged, ProviderError> {
    block_on(stripe.change_plan(ChangePlanRequest {
        workspace: "ws_abc",
        subscription: "sub_1",
        item,
        plan: growth(plans),
        idempotency_key: "vibesell-apr_1-subscription".into(),
        retry: false,
    }))
}

#[test]
fn a_plan_change_retries_an_unknown_outcome_with_the_same_key() {
    let plans = plans();
    let busy = Ok(OutboundResponse {
        status: 500,
        headers: vec![],
        body: br#"{"error":{"message":"boom"}}"#.to_vec(),
    });
    let fake = FakeOutbound::new(vec![
        busy,
        Err(crate::outbound::OutboundError("timed out".into())),
        FakeOutbound::json(200, subscription_response()),
    ]);
    let config = config();
    let stripe = Stripe::new(&config, &fake);
    let changed = change(&stripe, &plans, Some("si_1")).unwrap();
    assert_eq!(changed.subscription.plan.as_deref(), Some("growth"));
    assert_eq!(changed.invoice.as_ref().map(|i| i.amount), Some(5000));
    assert_eq!(fake.requests.borrow().len(), 3);
    for i in 0..3 {
        assert_eq!(fake.header(i, "idempotency-key").as_deref(), Some("vibesell-apr_1-subscription"));
    }
    assert_eq!(fake.requests.borrow()[0].url, "http://127.0.0.1:1/v1/subscriptions/sub_1");
    let form = fake.form(0);
    assert_eq!(get(&form, "items[0][id]"), Some("si_1"));
    assert_eq!(get(&form, "items[0][price]"), Some("price_growth"));
    assert_eq!(get(&form, "proration_behavior"), Some("always_invoice"));
    assert_eq!(get(&form, "payment_behavior"), Some("error_if_incomplete"));
    assert_eq!(get(&form, "expand[0]"), Some("latest_invoice"));
    assert_eq!(fake.slept_ms.get(), 1600);
}

/// A later run of an upgrade (the approval's watchdog) reads the subscription before changing
/// it, even with its item known: a change an earlier run made is reported and not made again;
/// one not made yet is made, under the later run's own key.
#[test]
fn a_later_run_of_a_plan_change_asks_first() {
    let plans = plans();
    let config = config();
    let later = |fake: &FakeOutbound| {
        block_on(Stripe::new(&config, fake).change_plan(ChangePlanRequest {
            workspace: "ws_abc",
            subscription: "sub_1",
            item: Some("si_1"),
            plan: growth(&plans),
            idempotency_key: "vibesell-apr_1-subscription-1795953700000".into(),
            retry: true,
        }))
    };
    let made = FakeOutbound::new(vec![FakeOutbound::json(200, subscription_response())]);
    let changed = later(&made).unwrap();
    assert_eq!(changed.subscription.plan.as_deref(), Some("growth"));
    assert_eq!(changed.invoice, None, "its charge comes with Stripe's invoice.paid");
    assert_eq!(made.requests.borrow().len(), 1);
    assert_eq!(made.requests.borrow()[0].method, "GET");
    let mut starter = subscription_response();
    starter["items"]["data"][0]["price"]["id"] = json!("price_starter");
    starter["items"]["data"][0]["id"] = json!("si_2");
    let not_yet = FakeOutbound::new(vec![
        FakeOutbound::json(200, starter),
        FakeOutbound::json(200, subscription_response()),
    ]);
    let changed = later(&not_yet).unwrap();
    assert_eq!(changed.invoice.map(|i| i.amount), Some(5000));
    assert_eq!(not_yet.requests.borrow()[1].method, "POST");
    assert_eq!(
        not_yet.header(1, "idempotency-key").as_deref(),
        Some("vibesell-apr_1-subscription-1795953700000")
    );
    assert_eq!(get(&not_yet.form(1), "items[0][id]"), Some("si_2"), "the item as read now");
}

#[test]
fn a_plan_change_reports_declines_and_refusals_as_definite() {
    let plans = plans();
    let config = config();
    let declined = FakeOutbound::new(vec![FakeOutbound::json(
        402,
        json!({"error": {"type": "card_error", "code": "card_declined", "message": "Your card was declined."}}),
    )]);
    assert_eq!(
        change(&Stripe::new(&config, &declined), &plans, Some("si_1")),
        Err(ProviderError::Declined("Stripe said: \"Your card was declined.\"".into()))
    );
    assert_eq!(declined.requests.borrow().len(), 1, "no retry of a definite answer");
    // Shown to the user: Stripe's words, attributed, without control characters, bounded.
    let long = format!("No such subscription: 'sub_1'\n{}", "x".repeat(400));
    let missing = FakeOutbound::new(vec![FakeOutbound::json(404, json!({"error": {"message": long}}))]);
    let Err(ProviderError::Rejected(said)) = change(&Stripe::new(&config, &missing), &plans, Some("si_1"))
    else {
        panic!("a definite refusal")
    };
    assert!(said.starts_with("Stripe said: \"No such subscription: 'sub_1' xxx"), "{said}");
    assert!(said.chars().count() < 180 && !said.contains('\n'), "{said}");
    let no_retry = Ok(OutboundResponse {
        status: 500,
        headers: vec![("stripe-should-retry".into(), "false".into())],
        body: b"{}".to_vec(),
    });
    let fake = FakeOutbound::new(vec![no_retry]);
    assert!(matches!(
        change(&Stripe::new(&config, &fake), &plans, Some("si_1")),
        Err(ProviderError::Unavailable(_))
    ));
    assert_eq!(fake.requests.borrow().len(), 1, "Stripe-Should-Retry: false is honoured");
    let unauthorized =
        FakeOutbound::new(vec![FakeOutbound::json(401, json!({"error": {"message": "Invalid API Key"}}))]);
    assert!(matches!(
        change(&Stripe::new(&config, &unauthorized), &plans, Some("si_1")),
        Err(ProviderError::Misconfigured(_))
    ));
    let keyless = StripeConfig { secret_key: None, ..config };
    let nothing = FakeOutbound::new(vec![]);
    assert!(matches!(
        change(&Stripe::new(&keyless, &nothing), &plans, Some("si_1")),
        Err(ProviderError::Misconfigured(_))
    ));
    assert!(nothing.requests.borrow().is_empty());
}

#[test]
fn a_conflict_on_a_retried_key_is_retried_with_the_same_key() {
    let plans = plans();
    let config = config();
    let conflict = FakeOutbound::json(
        409,
        json!({"error": {"type": "idempotency_error", "message": "There is currently another in-progress request using this Stripe-Idempotency-Key. Please try again later."}}),
    );
    let fake = FakeOutbound::new(vec![
        Err(crate::outbound::OutboundError("timed out".into())),
        conflict,
        FakeOutbound::json(200, subscription_response()),
    ]);
    let outcome = change(&Stripe::new(&config, &fake), &plans, Some("si_1"));
    assert!(
        !matches!(outcome, Err(ProviderError::Rejected(_)) | Err(ProviderError::Declined(_))),
        "a 409 idempotency conflict is no definite answer: {outcome:?}"
    );
    assert_eq!(outcome.map(|c| c.invoice.map(|i| i.amount)), Ok(Some(5000)), "retried with the same key");
    assert_eq!(fake.header(1, "idempotency-key").as_deref(), Some("vibesell-apr_1-subscription"));
    // Any other conflict (a lock) is retried too, and stays unknown when it outlasts the retries.
    let locked = || FakeOutbound::json(409, json!({"error": {"code": "lock_timeout", "message": "locked"}}));
    let fake = FakeOutbound::new(vec![locked(), locked(), locked()]);
    let outcome = change(&Stripe::new(&config, &fake), &plans, Some("si_1"));
    assert!(matches!(outcome, Err(ProviderError::Unavailable(_))), "{outcome:?}");
    assert_eq!(fake.requests.borrow().len(), 3);
}

#[test]
fn a_plan_change_without_a_known_item_reads_the_subscription_first() {
    let plans = plans();
    let fake = FakeOutbound::new(vec![
        FakeOutbound::json(
            200,
            json!({"id": "sub_1", "status": "active", "items": {"data": [{"id": "si_7"}]}}),
        ),
        FakeOutbound::json(200, subscription_response()),
    ]);
    let config = config();
    change(&Stripe::new(&config, &fake), &plans, None).unwrap();
    assert_eq!(fake.requests.borrow()[0].method, "GET");
    assert_eq!(get(&fake.form(1), "items[0][id]"), Some("si_7"));
    let no_price = Catalogue::parse(crate::plans::EMBEDDED).unwrap();
    let nothing = FakeOutbound::new(vec![]);
    assert!(matches!(
        change(&Stripe::new(&config, &nothing), &no_price, Some("si_1")),
        Err(ProviderError::Misconfigured(_))
    ));
}

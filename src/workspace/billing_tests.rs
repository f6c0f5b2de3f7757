//! Plans and billing in the sandbox, natively: the tools, the sandbox pages' ops, events.

use serde_json::{Value, json};

use super::*;
use crate::auth::{Principal, ScopeSet};
use crate::outbound::NoNetwork;
use crate::providers::billing::{BillingEvent, EventKind, Invoice, Subscription};
use crate::providers::sandbox_billing::{CARD_DECLINED, CARD_DECLINES_LATER, CARD_OK, Paid};
use crate::testing::{MemoryDb, NOW_MS, block_on, principal, test_config};
use crate::tools::{Outcome, ToolOutcome};
use crate::workspace::{self, Op, OpReply};

const HOUR: i64 = 3_600_000;

struct World {
    db: MemoryDb,
    config: Config,
    app: Principal,
}

impl World {
    fn new() -> World {
        let w = World { db: MemoryDb::new(), config: test_config(), app: principal(ScopeSet::FULL, true) };
        workspace::open(&w.db, &w.app, NOW_MS).unwrap();
        w
    }

    /// Live billing against a scripted Stripe, with a Stripe price for `plan`.
    fn live(plan: &str) -> World {
        use crate::config::{ProviderMode, Secret, StripeConfig};
        let mut w = World::new();
        w.config.provider_mode = ProviderMode::Live;
        w.config.stripe = StripeConfig {
            api_base: "http://127.0.0.1:1".into(),
            secret_key: Some(Secret("sk_test_1".into())),
            webhook_secrets: vec![],
        };
        let id = format!(r#""id": "{plan}","#);
        let priced = format!(r#""id": "{plan}", "stripePrice": "price_{plan}","#);
        w.config.plans =
            crate::plans::Catalogue::parse(&crate::plans::EMBEDDED.replace(&id, &priced)).unwrap();
        w
    }

    /// A tool call whose outbound requests `fake` answers.
    fn call_through(
        &self,
        fake: &dyn crate::outbound::Outbound,
        tool: &str,
        arguments: Value,
        now: i64,
    ) -> ToolOutcome {
        let call = workspace::ToolCall {
            tool: tool.into(),
            arguments,
            principal: self.app.clone(),
            request_id: "req_1".into(),
            structured_content: true,
        };
        block_on(workspace::call_tool(&self.db, &self.config, fake, call, now))
    }

    fn call(&self, tool: &str, arguments: Value, now: i64) -> ToolOutcome {
        crate::testing::run_tool(&self.db, &self.config, &self.app, tool, arguments, now)
    }

    fn ok(&self, tool: &str, arguments: Value, now: i64) -> Value {
        let out = self.call(tool, arguments, now);
        assert_eq!(out.outcome, Outcome::Ok, "{tool}: {}", out.text);
        out.structured.unwrap()
    }

    fn refused(&self, tool: &str, arguments: Value, now: i64) -> String {
        let out = self.call(tool, arguments, now);
        assert_eq!(out.outcome, Outcome::Refused, "{tool}: {}", out.text);
        out.text
    }

    fn op(&self, op: Op, now: i64) -> OpReply {
        let svc = Services { db: &self.db, config: &self.config, outbound: &NoNetwork, now_ms: now };
        block_on(workspace::handle_op(&svc, &workspace::Opened::default(), op)).unwrap()
    }

    /// Subscribes through the sandbox checkout page with `card`.
    fn subscribe(&self, plan: &str, card: &str) -> Value {
        let checkout = self.ok("start_checkout", json!({ "plan": plan }), NOW_MS);
        let session = checkout["sessionId"].as_str().unwrap().to_owned();
        let paid = self.op(Op::SandboxPay { session, card: card.into() }, NOW_MS);
        assert!(matches!(paid, OpReply::SandboxPaid { outcome: Paid::Paid { .. } }), "{paid:?}");
        self.ok("get_plans_and_billing", json!({}), NOW_MS)
    }
}

#[test]
fn the_sandbox_loop_subscribes_upgrades_and_cancels() {
    let w = World::new();
    let plans = w.ok("get_plans_and_billing", json!({}), NOW_MS);
    assert_eq!(plans["kind"], "plans");
    // No subscription, no status said (second journey walk: "($0/month, none)").
    assert!(
        w.call("get_plans_and_billing", json!({}), NOW_MS).text.starts_with("**Plan: Free** ($0/month)\n")
    );
    assert_eq!(
        (plans["current"]["id"].clone(), plans["current"]["paying"].clone()),
        (json!("free"), json!(false))
    );
    assert_eq!(plans["plans"].as_array().unwrap().len(), 4);
    assert_eq!(
        plans["plans"][2]["limits"],
        json!({"leadsPerMonth": 5000, "mailboxes": 10, "activeCampaigns": 5})
    );
    assert_eq!(plans["credits"]["leads"], 50);
    assert_eq!(plans["simulated"], true);

    assert!(w.refused("upgrade_plan", json!({"plan": "growth"}), NOW_MS).contains("start_checkout"));
    assert!(w.refused("start_checkout", json!({"plan": "free"}), NOW_MS).contains("free"));
    assert!(w.refused("start_checkout", json!({"plan": "platinum"}), NOW_MS).contains("`starter`"));
    assert!(w.refused("open_billing_portal", json!({}), NOW_MS).contains("no billing account"));

    let checkout = w.ok("start_checkout", json!({"plan": "Starter"}), NOW_MS);
    assert_eq!(checkout["kind"], "checkout");
    let session = checkout["sessionId"].as_str().unwrap().to_owned();
    assert_eq!(checkout["url"], format!("http://127.0.0.1:8787/sandbox/checkout/ws_1/{session}"));
    assert_eq!(checkout["price"], json!({"amount": 4900, "currency": "usd"}));
    let page = w.op(Op::SandboxPage { kind: "checkout".into(), session: session.clone() }, NOW_MS);
    let OpReply::SandboxPage { session: s, current_plan, .. } = page else { panic!("page") };
    assert_eq!(
        (s.plan.as_deref(), s.status.as_str(), current_plan.as_str()),
        (Some("starter"), "open", "free")
    );
    for card in [CARD_DECLINED, "1234"] {
        let refused = w.op(Op::SandboxPay { session: session.clone(), card: card.into() }, NOW_MS);
        assert!(matches!(refused, OpReply::SandboxPaid { outcome: Paid::Refused { .. } }), "{refused:?}");
    }
    let paid = w.op(Op::SandboxPay { session: session.clone(), card: "4242 4242 4242 4242".into() }, NOW_MS);
    assert!(matches!(paid, OpReply::SandboxPaid { outcome: Paid::Paid { .. } }));
    let again = w.op(Op::SandboxPay { session, card: CARD_OK.into() }, NOW_MS);
    assert!(matches!(again, OpReply::SandboxPaid { outcome: Paid::Closed { .. } }), "paid once");

    let plans = w.ok("get_plans_and_billing", json!({}), NOW_MS);
    assert_eq!(
        (plans["current"]["id"].clone(), plans["current"]["status"].clone()),
        (json!("starter"), json!("active"))
    );
    assert_eq!(plans["current"]["renewsAt"], NOW_MS + 30 * 24 * HOUR);
    assert_eq!(plans["credits"]["leads"], 1000);
    assert_eq!(plans["charges"][0]["amount"]["amount"], 4900);
    assert!(w.refused("start_checkout", json!({"plan": "growth"}), NOW_MS).contains("upgrade_plan"));
    assert!(w.refused("upgrade_plan", json!({"plan": "free"}), NOW_MS).contains("billing portal"));
    assert!(w.refused("upgrade_plan", json!({"plan": "starter"}), NOW_MS).contains("already on the Starter"));

    let approval = w.ok("upgrade_plan", json!({"plan": "growth"}), NOW_MS);
    assert_eq!((approval["kind"].clone(), approval["status"].clone()), (json!("approval"), json!("pending")));
    assert_eq!(approval["action"], "upgrade_plan");
    assert_eq!(approval["summary"], "Upgrade from Starter to Growth ($149/month)");
    assert_eq!(approval["cost"], json!({"amount": 10000, "currency": "usd"}), "a full period left");
    assert_eq!(approval["irreversible"], false, "a simulated charge moves no money");
    let impact = approval["impact"].to_string();
    assert!(
        impact.contains("Charges the card on file about $100 now")
            && impact.contains("5,000 leads per month"),
        "{impact}"
    );
    assert_eq!(
        w.ok("upgrade_plan", json!({"plan": "growth"}), NOW_MS + 1)["id"],
        approval["id"],
        "the same approval"
    );
    let ctx = w.ok("get_workspace_context", json!({}), NOW_MS + 1);
    assert_eq!(ctx["plan"], json!({"id": "starter", "name": "Starter", "status": "active", "paying": true}));
    assert_eq!(ctx["pendingApprovalCount"], 1);
    assert_eq!(ctx["pendingApprovals"][0]["id"], approval["id"]);

    // Decided 12 hours later: 708 of 720 hours left of the period.
    let done =
        w.ok("decide_approval", json!({"id": approval["id"], "decision": "approve"}), NOW_MS + 12 * HOUR);
    assert_eq!(done["status"], "done", "{done}");
    assert!(done["result"].as_str().unwrap().contains("Charged $98.33 now"), "{done}");
    let plans = w.ok("get_plans_and_billing", json!({}), NOW_MS + 12 * HOUR);
    assert_eq!(plans["current"]["id"], "growth");
    assert_eq!(plans["charges"].as_array().unwrap().len(), 2);
    assert_eq!(plans["charges"][0]["amount"]["amount"], 9833);

    let portal = w.ok("open_billing_portal", json!({}), NOW_MS + 13 * HOUR);
    assert_eq!(portal["kind"], "portal");
    let url = portal["url"].as_str().unwrap();
    let session = url.rsplit('/').next().unwrap().to_owned();
    assert!(url.starts_with("http://127.0.0.1:8787/sandbox/portal/ws_1/bps_sandbox_"), "{url}");
    let OpReply::SandboxPage { session: s, invoices, .. } =
        w.op(Op::SandboxPage { kind: "portal".into(), session: session.clone() }, NOW_MS + 13 * HOUR)
    else {
        panic!("portal page")
    };
    assert_eq!(s.card_last4.as_deref(), Some("4242"));
    assert_eq!(s.subscription.unwrap().plan.as_deref(), Some("growth"));
    assert_eq!(invoices.len(), 2);
    // A lower plan from the portal, as the texts say (third journey walk: the sandbox's portal
    // could only cancel); not a higher one, which is upgrade_plan's approval, nor the free plan,
    // nor a plan that does not exist, which must not read as cancelling.
    for higher in ["scale", "growth", "free", "no-such-plan"] {
        assert_eq!(
            w.op(Op::SandboxCancel { session: session.clone(), to: Some(higher.into()) }, NOW_MS + 13 * HOUR),
            OpReply::SandboxCanceled { canceled: false, to: None },
            "{higher}"
        );
    }
    assert_eq!(
        w.op(Op::SandboxCancel { session: session.clone(), to: Some("starter".into()) }, NOW_MS + 13 * HOUR),
        OpReply::SandboxCanceled { canceled: true, to: Some("Starter".into()) }
    );
    let plans = w.ok("get_plans_and_billing", json!({}), NOW_MS + 13 * HOUR);
    assert_eq!(
        (plans["current"]["id"].clone(), plans["current"]["status"].clone()),
        (json!("starter"), json!("active"))
    );
    assert_eq!(plans["charges"].as_array().unwrap().len(), 2, "no charge for moving down");
    assert_eq!(
        w.op(Op::SandboxCancel { session: session.clone(), to: None }, NOW_MS + 13 * HOUR),
        OpReply::SandboxCanceled { canceled: true, to: None }
    );
    assert_eq!(
        w.op(Op::SandboxCancel { session, to: None }, NOW_MS + 13 * HOUR),
        OpReply::SandboxCanceled { canceled: false, to: None }
    );
    let plans = w.ok("get_plans_and_billing", json!({}), NOW_MS + 13 * HOUR);
    assert_eq!(
        (plans["current"]["id"].clone(), plans["current"]["status"].clone()),
        (json!("free"), json!("canceled"))
    );
}

#[test]
fn sandbox_subscriptions_renew_and_end_when_the_card_declines() {
    const DAY: i64 = 24 * HOUR;
    let alarm = |w: &World, now: i64| {
        let svc = Services { db: &w.db, config: &w.config, outbound: &NoNetwork, now_ms: now };
        block_on(workspace::on_alarm(&svc, &workspace::Opened::default())).unwrap();
    };
    let current = |w: &World, now: i64| w.ok("get_plans_and_billing", json!({}), now)["current"].clone();
    let w = World::new();
    w.subscribe("starter", CARD_OK);
    assert_eq!(current(&w, NOW_MS)["renewsAt"], NOW_MS + 30 * DAY);
    // At the period's end: charged again, and a new period (audit finding: the renewal date went
    // by and nothing happened).
    alarm(&w, NOW_MS + 30 * DAY + 1);
    let renewed = current(&w, NOW_MS + 31 * DAY);
    assert_eq!((renewed["id"].clone(), renewed["status"].clone()), (json!("starter"), json!("active")));
    assert_eq!(renewed["renewsAt"], NOW_MS + 60 * DAY);
    let paid = invoices(&w.db, 10).unwrap();
    assert_eq!(paid.len(), 2);
    assert_eq!((paid[0].amount, paid[0].description.as_str()), (4900, "Starter plan, renewal"));

    // A card that declines later charges: past due at the renewal, still on the plan while the
    // charge is retried, then back on Free.
    let w = World::new();
    w.subscribe("starter", CARD_DECLINES_LATER);
    alarm(&w, NOW_MS + 30 * DAY + 1);
    let due = current(&w, NOW_MS + 31 * DAY);
    assert_eq!((due["id"].clone(), due["status"].clone()), (json!("starter"), json!("past_due")));
    assert_eq!(invoices(&w.db, 10).unwrap().len(), 1, "nothing charged");
    alarm(&w, NOW_MS + 44 * DAY + 1);
    let ended = current(&w, NOW_MS + 45 * DAY);
    assert_eq!((ended["id"].clone(), ended["paying"].clone()), (json!("free"), json!(false)));
}

/// Two upgrades asked from Starter, to Growth and to Scale: once Scale is approved, approving
/// the Growth one must not move the workspace down (an audit found it did, through an approval
/// that said "from Starter").
#[test]
fn an_upgrade_runs_only_from_the_plan_it_was_asked_from() {
    let w = World::new();
    w.subscribe("starter", CARD_OK);
    let growth = w.ok("upgrade_plan", json!({"plan": "growth"}), NOW_MS);
    let scale = w.ok("upgrade_plan", json!({"plan": "scale"}), NOW_MS);
    assert_ne!(growth["id"], scale["id"]);
    let done = w.ok("decide_approval", json!({"id": scale["id"], "decision": "approve"}), NOW_MS + HOUR);
    assert_eq!(done["status"], "done", "{done}");
    let out = w.ok("decide_approval", json!({"id": growth["id"], "decision": "approve"}), NOW_MS + HOUR);
    assert_eq!(out["status"], "not_done", "{out}");
    assert!(out["result"].as_str().unwrap().contains("on the Scale plan now"), "{out}");
    let plans = w.ok("get_plans_and_billing", json!({}), NOW_MS + HOUR);
    assert_eq!(plans["current"]["id"], "scale");
    assert_eq!(plans["charges"].as_array().unwrap().len(), 2, "the first month and the Scale upgrade");

    // Asked again from Scale, the same target is a new question: the old answer was about Starter.
    assert!(w.refused("upgrade_plan", json!({"plan": "growth"}), NOW_MS + HOUR).contains("not an upgrade"));
}

/// Asked again for the same upgrade, the open approval is answered while its figures hold; once
/// the prorated charge has changed, a new approval with the new figure replaces it.
#[test]
fn an_upgrade_asked_again_shows_the_current_charge() {
    let w = World::new();
    w.subscribe("starter", CARD_OK);
    let first = w.ok("upgrade_plan", json!({"plan": "growth"}), NOW_MS);
    assert_eq!(w.ok("upgrade_plan", json!({"plan": "growth"}), NOW_MS + 1)["id"], first["id"]);
    let later = w.ok("upgrade_plan", json!({"plan": "growth"}), NOW_MS + 20 * HOUR);
    assert_ne!(later["id"], first["id"]);
    assert_eq!(later["cost"], json!({"amount": 9722, "currency": "usd"}), "700 of 720 hours left");
    let pending = w.ok("list_pending_approvals", json!({}), NOW_MS + 20 * HOUR);
    let ids: Vec<&Value> = pending["approvals"].as_array().unwrap().iter().map(|a| &a["id"]).collect();
    assert_eq!(ids, vec![&later["id"]], "{pending}");
    let old = w.ok("decide_approval", json!({"id": first["id"], "decision": "approve"}), NOW_MS + 20 * HOUR);
    assert_eq!(old["status"], "not_done", "{old}");
    assert!(old["result"].as_str().unwrap().starts_with("Replaced"), "{old}");
}

#[test]
fn an_upgrade_approved_after_its_period_ended_charges_nothing() {
    let w = World::new();
    w.subscribe("starter", CARD_OK);
    // Asked an hour before the period ends: about an hour's worth of the difference.
    let asked = w.ok("upgrade_plan", json!({"plan": "growth"}), NOW_MS + 719 * HOUR);
    assert_eq!(asked["cost"], json!({"amount": 14, "currency": "usd"}), "{asked}");
    // Approved once the period has rolled over, it would be prorated over the next one.
    let out = w.ok("decide_approval", json!({"id": asked["id"], "decision": "approve"}), NOW_MS + 721 * HOUR);
    assert_eq!(out["status"], "not_done", "{out}");
    assert!(
        out["result"].as_str().unwrap().contains("has ended, so the charge would not be the one shown"),
        "{out}"
    );
    let plans = w.ok("get_plans_and_billing", json!({}), NOW_MS + 721 * HOUR);
    assert_eq!(plans["current"]["id"], "starter");
    assert_eq!(plans["charges"].as_array().unwrap().len(), 1, "only the first month");
}

#[test]
fn a_card_that_declines_leaves_the_plan_and_charges_nothing() {
    let w = World::new();
    w.subscribe("starter", CARD_DECLINES_LATER);
    let approval = w.ok("upgrade_plan", json!({"plan": "scale"}), NOW_MS);
    let out = w.ok("decide_approval", json!({"id": approval["id"], "decision": "approve"}), NOW_MS + HOUR);
    assert_eq!(out["status"], "not_done");
    assert_eq!(out["result"], "Your card was declined. The plan was not changed and nothing was charged.");
    let plans = w.ok("get_plans_and_billing", json!({}), NOW_MS + HOUR);
    assert_eq!(plans["current"]["id"], "starter");
    assert_eq!(plans["charges"].as_array().unwrap().len(), 1, "only the first month");
}

#[test]
fn the_sandbox_provider_changes_a_plan_once_per_idempotency_key() {
    use crate::providers::billing::{BillingProvider, ChangePlanRequest};
    use crate::providers::sandbox_billing::SandboxBilling;
    let w = World::new();
    w.subscribe("starter", CARD_OK);
    let state = state(&w.db).unwrap().unwrap();
    let svc = Services { db: &w.db, config: &w.config, outbound: &NoNetwork, now_ms: NOW_MS + HOUR };
    let sandbox = SandboxBilling::new(svc);
    let request = || ChangePlanRequest {
        workspace: "ws_1",
        subscription: state.subscription.as_deref().unwrap(),
        item: None,
        plan: w.config.plans.find("growth").unwrap(),
        idempotency_key: "vibesell-apr_x-subscription".into(),
        retry: false,
    };
    let first = block_on(sandbox.change_plan(request())).unwrap();
    let second = block_on(sandbox.change_plan(request())).unwrap();
    assert_eq!(first, second, "the retry gets the first answer");
    assert!(first.invoice.is_some());
    let charges: i64 =
        w.db.query(Stmt::new("SELECT COUNT(*) FROM sandbox_billing_requests", vec![]))
            .unwrap()
            .scalar_i64()
            .unwrap();
    assert_eq!(charges, 1);
}

fn checkout(id: &str, created_ms: i64, subscription: &str, plan: &str) -> BillingEvent {
    event(
        id,
        created_ms,
        EventKind::CheckoutCompleted {
            customer: Some("cus_1".into()),
            subscription: Some(subscription.into()),
            plan: Some(plan.into()),
            paid: true,
        },
    )
}

fn event(id: &str, created_ms: i64, kind: EventKind) -> BillingEvent {
    BillingEvent { id: id.into(), created_ms, workspace: "ws_1".into(), kind }
}

fn sub(id: &str, status: &str, plan: &str) -> Subscription {
    Subscription {
        id: id.into(),
        customer: Some("cus_1".into()),
        status: status.into(),
        plan: Some(plan.into()),
        item: Some("si_1".into()),
        period_start: Some(NOW_MS),
        period_end: Some(NOW_MS + 1000),
        cancel_at_period_end: false,
    }
}

#[test]
fn a_subscription_paid_for_does_not_go_back_to_waiting_for_its_first_payment() {
    let w = World::new();
    let apply = |e: &BillingEvent| apply_event(&w.db, &w.config, NOW_MS, e).unwrap();
    let changed = |id: &str, status: &str| {
        event(
            id,
            NOW_MS,
            EventKind::SubscriptionChanged { subscription: sub("sub_1", status, "growth"), deleted: false },
        )
    };
    // Checkout's `updated` (active) and the completion, then its `created` (incomplete) of the
    // same second, delivered last.
    assert_eq!(apply(&changed("evt_u", "active")), Applied::Applied);
    assert_eq!(apply(&checkout("evt_c", NOW_MS, "sub_1", "growth")), Applied::Applied);
    assert_eq!(apply(&changed("evt_i", "incomplete")), Applied::Stale);
    let now = current(&w.db, &w.config).unwrap();
    assert_eq!((now.plan.id.as_str(), state(&w.db).unwrap().unwrap().status.as_str()), ("growth", "active"));
    // In the usual order, it waits for the payment, and is paid.
    let w = World::new();
    let apply = |e: &BillingEvent| apply_event(&w.db, &w.config, NOW_MS, e).unwrap();
    assert_eq!(apply(&changed("evt_i", "incomplete")), Applied::Applied);
    assert_eq!(state(&w.db).unwrap().unwrap().status, "incomplete");
    assert_eq!(apply(&changed("evt_u", "active")), Applied::Applied);
    assert_eq!(current(&w.db, &w.config).unwrap().plan.id, "growth");
}

#[test]
fn events_apply_once_and_never_out_of_order() {
    let w = World::new();
    let apply = |e: &BillingEvent| apply_event(&w.db, &w.config, NOW_MS, e).unwrap();
    let plan = || current(&w.db, &w.config).unwrap().plan.id.clone();
    let mut foreign = event("evt_0", NOW_MS, EventKind::InvoicePaid { invoice: invoice("in_0") });
    foreign.workspace = "ws_2".into();
    assert_eq!(apply(&foreign), Applied::UnknownWorkspace);

    let completed = checkout("evt_1", NOW_MS, "sub_1", "growth");
    assert_eq!(apply(&completed), Applied::Applied);
    assert_eq!(plan(), "growth");
    assert_eq!(apply(&completed), Applied::Duplicate);

    let past_due = event(
        "evt_2",
        NOW_MS + 20,
        EventKind::SubscriptionChanged { subscription: sub("sub_1", "past_due", "growth"), deleted: false },
    );
    assert_eq!(apply(&past_due), Applied::Applied);
    assert_eq!(plan(), "growth", "past_due keeps the plan during Stripe's retries");
    let older = event(
        "evt_3",
        NOW_MS + 10,
        EventKind::SubscriptionChanged { subscription: sub("sub_1", "unpaid", "growth"), deleted: false },
    );
    assert_eq!(apply(&older), Applied::Stale);
    assert_eq!(plan(), "growth");
    let other_ended = event(
        "evt_4",
        NOW_MS + 30,
        EventKind::SubscriptionChanged { subscription: sub("sub_0", "canceled", "starter"), deleted: true },
    );
    assert_eq!(apply(&other_ended), Applied::Stale, "an older subscription's end does not end this one");
    let unpaid = event(
        "evt_5",
        NOW_MS + 40,
        EventKind::SubscriptionChanged { subscription: sub("sub_1", "unpaid", "growth"), deleted: false },
    );
    assert_eq!(apply(&unpaid), Applied::Applied);
    assert_eq!(plan(), "free", "unpaid loses the plan");
    let ended = event(
        "evt_6",
        NOW_MS + 50,
        EventKind::SubscriptionChanged { subscription: sub("sub_1", "canceled", "growth"), deleted: true },
    );
    assert_eq!(apply(&ended), Applied::Applied);
    assert_eq!(state(&w.db).unwrap().unwrap().status, "canceled");
    // An update of the same second delivered after the deletion does not turn it back on.
    let same_second = event(
        "evt_6b",
        NOW_MS + 50,
        EventKind::SubscriptionChanged { subscription: sub("sub_1", "active", "growth"), deleted: false },
    );
    assert_eq!(apply(&same_second), Applied::Stale);
    assert_eq!((plan(), state(&w.db).unwrap().unwrap().status), ("free".to_owned(), "canceled".to_owned()));
    // Nor does the checkout that started it, retried late by Stripe: it links nothing back.
    let late = checkout("evt_1b", NOW_MS, "sub_1", "growth");
    assert_eq!(apply(&late), Applied::Stale);
    assert_eq!(plan(), "free", "a late checkout keeps no paid plan alive");
    // A newer subscription, then a late checkout of an older one: the newer one stays.
    let newer = event(
        "evt_9",
        NOW_MS + 60,
        EventKind::SubscriptionChanged { subscription: sub("sub_2", "active", "scale"), deleted: false },
    );
    assert_eq!(apply(&newer), Applied::Applied);
    let older_checkout = checkout("evt_10", NOW_MS + 55, "sub_3", "starter");
    assert_eq!(apply(&older_checkout), Applied::Stale);
    let s = state(&w.db).unwrap().unwrap();
    assert_eq!((plan(), s.subscription.as_deref()), ("scale".to_owned(), Some("sub_2")));

    let paid = event("evt_7", NOW_MS, EventKind::InvoicePaid { invoice: invoice("in_1") });
    assert_eq!(apply(&paid), Applied::Applied);
    let again = event("evt_8", NOW_MS, EventKind::InvoicePaid { invoice: invoice("in_1") });
    assert_eq!(apply(&again), Applied::Applied);
    assert_eq!(invoices(&w.db, 10).unwrap().len(), 1, "an invoice is recorded once");
}

fn invoice(id: &str) -> Invoice {
    Invoice {
        id: id.into(),
        amount: 100,
        currency: "usd".into(),
        description: "x".into(),
        created_at: NOW_MS,
    }
}

/// A holder that has run one op (the web page, a webhook, a sandbox page) skips the migrations
/// check on the next: two statements, one of them a write, on every op before.
#[test]
fn a_holder_checks_the_schema_on_its_first_op_only() {
    let db = crate::testing::CountingDb::default();
    let app = principal(ScopeSet::FULL, true);
    workspace::open(&db, &app, NOW_MS).unwrap();
    let config = test_config();
    let svc = Services { db: &db, config: &config, outbound: &NoNetwork, now_ms: NOW_MS };
    let overview = || Op::Overview { subject: app.subject.clone() };
    let run = |opened: &workspace::Opened| {
        let before = db.statements.get();
        let reply = block_on(workspace::handle_op(&svc, opened, overview())).unwrap();
        (format!("{reply:?}"), db.statements.get() - before)
    };
    let opened = workspace::Opened::default();
    let (first, cold) = run(&opened);
    assert!(opened.schema_current(), "learnt by the first op");
    let (second, warm) = run(&opened);
    assert_eq!(first, second);
    assert_eq!(cold, warm + 2);
    assert_eq!(run(&workspace::Opened::default()).1, cold, "a new holder checks again");
}

#[test]
fn one_payment_page_can_be_paid_at_a_time() {
    let w = World::new();
    let pay =
        |session: &str, at: i64| w.op(Op::SandboxPay { session: session.into(), card: CARD_OK.into() }, at);
    let first = w.ok("start_checkout", json!({"plan": "starter"}), NOW_MS);
    // The same plan again: the same page, not a second one to pay on.
    let again = w.ok("start_checkout", json!({"plan": "starter"}), NOW_MS + 60_000);
    assert_eq!(
        (again["sessionId"].clone(), again["url"].clone()),
        (first["sessionId"].clone(), first["url"].clone())
    );
    // Another plan: the first page is closed before the new one is made (audit finding: both
    // could be paid, two subscriptions).
    let growth = w.ok("start_checkout", json!({"plan": "growth"}), NOW_MS + 120_000);
    assert_ne!(growth["sessionId"], first["sessionId"]);
    let closed = pay(first["sessionId"].as_str().unwrap(), NOW_MS + 180_000);
    assert!(
        matches!(&closed, OpReply::SandboxPaid { outcome: Paid::Closed { reason } } if reason.starts_with("A newer checkout page replaced this one")),
        "closed unpaid, replaced, not 'already paid' nor 'expired': {closed:?}"
    );
    // Back to the first plan: a new page again, and the growth page closed.
    let starter = w.ok("start_checkout", json!({"plan": "starter"}), NOW_MS + 240_000);
    assert!(![first["sessionId"].clone(), growth["sessionId"].clone()].contains(&starter["sessionId"]));
    let closed = pay(growth["sessionId"].as_str().unwrap(), NOW_MS + 300_000);
    assert!(matches!(closed, OpReply::SandboxPaid { outcome: Paid::Closed { .. } }), "{closed:?}");
    // Once its day has run out, a replaced page says it expired, as any other page does.
    let growth_ends = growth["expiresAt"].as_i64().unwrap();
    let closed = pay(growth["sessionId"].as_str().unwrap(), growth_ends + 1);
    assert!(
        matches!(&closed, OpReply::SandboxPaid { outcome: Paid::Closed { reason } } if reason == "This checkout page has expired; ask for a new one."),
        "{closed:?}"
    );
    // A page close to expiring is not handed out again: a fresh one is.
    let expires = starter["expiresAt"].as_i64().unwrap();
    let fresh = w.ok("start_checkout", json!({"plan": "starter"}), expires - 60_000);
    assert_ne!(fresh["sessionId"], starter["sessionId"]);
    // Paid, the page is used up and the workspace pays: no other page.
    let paid = pay(fresh["sessionId"].as_str().unwrap(), expires - 30_000);
    assert!(matches!(paid, OpReply::SandboxPaid { outcome: Paid::Paid { .. } }), "{paid:?}");
    assert!(w.refused("start_checkout", json!({"plan": "growth"}), expires).contains("upgrade_plan"));
    assert_eq!(crate::workspace::billing::last_checkout(&w.db).unwrap(), None);
}

#[test]
fn a_page_paid_just_before_it_is_closed_makes_no_second_one() {
    let w = World::new();
    let first = w.ok("start_checkout", json!({"plan": "starter"}), NOW_MS);
    let session = first["sessionId"].as_str().unwrap().to_owned();
    // Paid at the provider, its confirmation not yet applied to the workspace.
    (&w.db as &dyn crate::store::Db)
        .exec("UPDATE sandbox_billing_sessions SET status = 'complete' WHERE id = ?", vec![session.into()])
        .unwrap();
    let text = w.refused("start_checkout", json!({"plan": "growth"}), NOW_MS + 60_000);
    assert!(text.contains("has just been paid") && text.contains("Starter"), "{text}");
}

/// A subscription that ended, then a checkout paid by a delayed method (SEPA, ACH) that completes
/// unpaid: the new subscription's own update, once paid, gives its plan (an audit found the ended
/// one's `canceled` status kept it out).
#[test]
fn a_new_subscription_after_an_ended_one_is_applied() {
    let w = World::new();
    let apply = |e: &BillingEvent| apply_event(&w.db, &w.config, NOW_MS, e).unwrap();
    let plan = || current(&w.db, &w.config).unwrap().plan.id.clone();
    apply(&checkout("evt_1", NOW_MS, "sub_1", "starter"));
    let ended = event(
        "evt_2",
        NOW_MS + 1000,
        EventKind::SubscriptionChanged { subscription: sub("sub_1", "canceled", "starter"), deleted: true },
    );
    assert_eq!(apply(&ended), Applied::Applied);
    assert_eq!(plan(), "free");
    let unpaid_checkout = event(
        "evt_3",
        NOW_MS + 2000,
        EventKind::CheckoutCompleted {
            customer: Some("cus_1".into()),
            subscription: Some("sub_2".into()),
            plan: Some("growth".into()),
            paid: false,
        },
    );
    apply(&unpaid_checkout);
    assert_eq!(plan(), "free", "not paid yet");
    let activated = event(
        "evt_4",
        NOW_MS + 3000,
        EventKind::SubscriptionChanged { subscription: sub("sub_2", "active", "growth"), deleted: false },
    );
    assert_eq!(apply(&activated), Applied::Applied, "the new subscription's own update");
    assert_eq!(plan(), "growth", "paid for Growth");
}

/// An older subscription left unpaid rolls over to a new period after the user subscribed again:
/// its update does not take the workspace from the newer paid subscription.
#[test]
fn an_update_of_an_older_unpaid_subscription_keeps_the_newer_paid_one() {
    let w = World::new();
    let apply = |e: &BillingEvent| apply_event(&w.db, &w.config, NOW_MS, e).unwrap();
    let plan = || current(&w.db, &w.config).unwrap().plan.id.clone();
    apply(&checkout("evt_1", NOW_MS, "sub_1", "starter"));
    let unpaid = event(
        "evt_2",
        NOW_MS + 1000,
        EventKind::SubscriptionChanged { subscription: sub("sub_1", "unpaid", "starter"), deleted: false },
    );
    assert_eq!(apply(&unpaid), Applied::Applied);
    assert_eq!(plan(), "free");
    apply(&checkout("evt_3", NOW_MS + 2000, "sub_2", "growth"));
    apply(&event(
        "evt_4",
        NOW_MS + 2000,
        EventKind::SubscriptionChanged { subscription: sub("sub_2", "active", "growth"), deleted: false },
    ));
    assert_eq!(plan(), "growth");
    let rollover = event(
        "evt_5",
        NOW_MS + 30 * 24 * HOUR,
        EventKind::SubscriptionChanged { subscription: sub("sub_1", "unpaid", "starter"), deleted: false },
    );
    assert_eq!(apply(&rollover), Applied::Stale);
    let s = state(&w.db).unwrap().unwrap();
    assert_eq!(
        (plan(), s.subscription.as_deref()),
        ("growth".to_owned(), Some("sub_2")),
        "the paid subscription stays the workspace's"
    );
    // Once the paid one has ended, another subscription's update applies again.
    apply(&event(
        "evt_6",
        NOW_MS + 31 * 24 * HOUR,
        EventKind::SubscriptionChanged { subscription: sub("sub_2", "canceled", "growth"), deleted: true },
    ));
    let recovered = event(
        "evt_7",
        NOW_MS + 32 * 24 * HOUR,
        EventKind::SubscriptionChanged { subscription: sub("sub_1", "active", "starter"), deleted: false },
    );
    assert_eq!(apply(&recovered), Applied::Applied);
    assert_eq!(plan(), "starter");
}

/// Paid, ended, then a new page for the same plan: Stripe refuses an idempotency key used again
/// with other parameters (now with the customer), so the new page needs its own key (an audit
/// found it reused the first page's, leaving the user unable to subscribe for 24 hours).
#[test]
fn a_checkout_after_a_paid_one_has_its_own_idempotency_key() {
    use crate::testing::FakeOutbound;
    let w = World::live("starter");
    let page = |id: &str| {
        FakeOutbound::json(
            200,
            json!({"id": id, "url": format!("https://checkout.stripe.com/c/pay/{id}"), "expires_at": NOW_MS / 1000 + 86_400}),
        )
    };
    let fake = FakeOutbound::new(vec![page("cs_1"), page("cs_2")]);
    let start = |now: i64| w.call_through(&fake, "start_checkout", json!({"plan": "starter"}), now);
    let first = start(NOW_MS);
    assert_eq!(first.outcome, Outcome::Ok, "{}", first.text);
    apply_event(&w.db, &w.config, NOW_MS + 60_000, &checkout("evt_1", NOW_MS + 60_000, "sub_1", "starter"))
        .unwrap();
    let ended = event(
        "evt_2",
        NOW_MS + 2 * HOUR,
        EventKind::SubscriptionChanged { subscription: sub("sub_1", "canceled", "starter"), deleted: true },
    );
    assert_eq!(apply_event(&w.db, &w.config, NOW_MS + 2 * HOUR, &ended).unwrap(), Applied::Applied);
    let second = start(NOW_MS + 3 * HOUR);
    assert_eq!(second.outcome, Outcome::Ok, "{}", second.text);
    assert_eq!(crate::form::get(&fake.form(1), "customer"), Some("cus_1"), "other parameters this time");
    assert_ne!(
        fake.header(0, "idempotency-key"),
        fake.header(1, "idempotency-key"),
        "a new page for a new subscription must not reuse the first page's key"
    );
}

/// A live upgrade refused for a bad API key tells the user to contact support in one sentence
/// (an audit found a run of spaces in the middle of it).
#[test]
fn a_misconfigured_billing_refusal_reads_as_one_sentence() {
    use crate::testing::FakeOutbound;
    let w = World::live("growth");
    apply_event(&w.db, &w.config, NOW_MS, &checkout("evt_1", NOW_MS, "sub_1", "starter")).unwrap();
    let fake =
        FakeOutbound::new(vec![FakeOutbound::json(401, json!({"error": {"message": "Invalid API Key"}}))]);
    let call = |tool: &str, arguments: Value| w.call_through(&fake, tool, arguments, NOW_MS + HOUR);
    let approval = call("upgrade_plan", json!({"plan": "growth"}));
    let id = approval.structured.as_ref().unwrap()["id"].clone();
    let out = call("decide_approval", json!({"id": id, "decision": "approve"}));
    let result = out.structured.as_ref().unwrap()["result"].as_str().unwrap().to_owned();
    assert!(result.contains("not set up correctly"), "{result}");
    assert!(!result.contains("  "), "{result}");
}

/// Stripe's webhook for an upgrade can arrive while the upgrade's own call is still waiting for
/// Stripe's answer; what the upgrade then writes must not take the workspace back before it, or
/// an older event delivered late would undo the upgrade.
#[test]
fn an_event_applied_during_an_upgrade_is_kept() {
    use crate::outbound::{Outbound, OutboundError, OutboundRequest, OutboundResponse};
    use crate::testing::FakeOutbound;
    use crate::tools::registry::LocalBoxFuture;
    /// Applies `event` when the first request goes out, then answers as `fake`.
    struct Meanwhile<'a> {
        fake: FakeOutbound,
        w: &'a World,
        event: std::cell::RefCell<Option<BillingEvent>>,
    }
    impl Outbound for Meanwhile<'_> {
        fn fetch(&self, req: OutboundRequest) -> LocalBoxFuture<'_, Result<OutboundResponse, OutboundError>> {
            if let Some(e) = self.event.borrow_mut().take() {
                assert_eq!(
                    apply_event(&self.w.db, &self.w.config, e.created_ms, &e).unwrap(),
                    Applied::Applied
                );
            }
            self.fake.fetch(req)
        }
        fn sleep(&self, ms: u32) -> LocalBoxFuture<'_, ()> {
            self.fake.sleep(ms)
        }
    }
    let w = World::live("growth");
    apply_event(&w.db, &w.config, NOW_MS, &checkout("evt_1", NOW_MS, "sub_1", "starter")).unwrap();
    let before =
        EventKind::SubscriptionChanged { subscription: sub("sub_1", "active", "starter"), deleted: false };
    apply_event(&w.db, &w.config, NOW_MS, &event("evt_2", NOW_MS + 1, before)).unwrap();
    let approval = w.ok("upgrade_plan", json!({"plan": "growth"}), NOW_MS + HOUR);
    let changed = json!({"id": "sub_1", "object": "subscription", "customer": "cus_1", "status": "active",
        "items": {"data": [{"id": "si_1", "price": {"id": "price_growth"},
            "current_period_start": NOW_MS / 1000, "current_period_end": NOW_MS / 1000 + 86_400}]}});
    let webhook =
        EventKind::SubscriptionChanged { subscription: sub("sub_1", "active", "growth"), deleted: false };
    let outbound = Meanwhile {
        fake: FakeOutbound::new(vec![FakeOutbound::json(200, changed)]),
        w: &w,
        event: Some(event("evt_4", NOW_MS + 3 * HOUR, webhook)).into(),
    };
    let decided = w.call_through(
        &outbound,
        "decide_approval",
        json!({"id": approval["id"], "decision": "approve"}),
        NOW_MS + 3 * HOUR,
    );
    assert_eq!(decided.structured.as_ref().unwrap()["status"], "done", "{}", decided.text);
    // An event from before the upgrade, delivered late, no longer undoes it.
    let late =
        EventKind::SubscriptionChanged { subscription: sub("sub_1", "active", "starter"), deleted: false };
    assert_eq!(
        apply_event(&w.db, &w.config, NOW_MS + 4 * HOUR, &event("evt_3", NOW_MS + 2 * HOUR, late)).unwrap(),
        Applied::Stale
    );
    assert_eq!(current(&w.db, &w.config).unwrap().plan.id, "growth");
}

/// A subscription set to end at the period's end (in the billing portal) is not said to renew by
/// an upgrade's approval or its result.
#[test]
fn an_upgrade_of_a_subscription_set_to_end_does_not_promise_a_renewal() {
    let w = World::live("growth");
    apply_event(&w.db, &w.config, NOW_MS, &checkout("evt_1", NOW_MS, "sub_1", "starter")).unwrap();
    let ending = Subscription {
        cancel_at_period_end: true,
        period_end: Some(NOW_MS + 20 * 24 * HOUR),
        ..sub("sub_1", "active", "starter")
    };
    let changed = EventKind::SubscriptionChanged { subscription: ending, deleted: false };
    assert_eq!(
        apply_event(&w.db, &w.config, NOW_MS, &event("evt_2", NOW_MS + 1, changed)).unwrap(),
        Applied::Applied
    );
    let approval = w.ok("upgrade_plan", json!({"plan": "growth"}), NOW_MS + HOUR);
    let first = approval["impact"][0].as_str().unwrap();
    assert!(first.contains("when the subscription ends as set in the billing portal"), "{first}");
    assert_eq!(approval["irreversible"], true, "the prorated charge is not refunded");
    assert!(!first.contains("/month instead of"), "{first}");
    let answer = json!({"id": "sub_1", "object": "subscription", "customer": "cus_1", "status": "active",
        "cancel_at_period_end": true,
        "items": {"data": [{"id": "si_1", "price": {"id": "price_growth"},
            "current_period_start": NOW_MS / 1000, "current_period_end": NOW_MS / 1000 + 20 * 86_400}]}});
    let stripe = crate::testing::FakeOutbound::new(vec![crate::testing::FakeOutbound::json(200, answer)]);
    let decision = json!({"id": approval["id"], "decision": "approve"});
    let done = w.call_through(&stripe, "decide_approval", decision, NOW_MS + HOUR);
    let result = done.structured.as_ref().unwrap()["result"].as_str().unwrap().to_owned();
    assert!(result.contains("Ends on ") && !result.contains("Renews"), "{result}");
}

/// An upgrade whose answer from Stripe was lost (it went through) is still executing when a
/// second one is approved: the second waits for it, rather than charging from the plan the first
/// already left at Stripe, and the first, asked again, is not told that nothing was charged.
#[test]
fn an_upgrade_waits_for_an_earlier_one_whose_outcome_is_unknown() {
    use crate::testing::FakeOutbound;
    let mut w = World::live("growth");
    w.config.plans = crate::plans::Catalogue::parse(
        &crate::plans::EMBEDDED
            .replace(r#""id": "growth","#, r#""id": "growth", "stripePrice": "price_growth","#)
            .replace(r#""id": "scale","#, r#""id": "scale", "stripePrice": "price_scale","#),
    )
    .unwrap();
    apply_event(&w.db, &w.config, NOW_MS, &checkout("evt_1", NOW_MS, "sub_1", "starter")).unwrap();
    let growth = w.ok("upgrade_plan", json!({"plan": "growth"}), NOW_MS + HOUR);
    let scale = w.ok("upgrade_plan", json!({"plan": "scale"}), NOW_MS + HOUR);
    let decide = |fake: &FakeOutbound, approval: &Value, at: i64| {
        let out =
            w.call_through(fake, "decide_approval", json!({"id": approval["id"], "decision": "approve"}), at);
        out.structured.unwrap()
    };
    let carrying_out = json!("Approved by the user; VibeSell is carrying it out.");
    // Stripe cannot be reached: the outcome of the first is unknown.
    let lost = FakeOutbound::new(vec![]);
    assert_eq!(decide(&lost, &growth, NOW_MS + HOUR)["result"], carrying_out);
    // The second asks nothing of Stripe while the first is unresolved.
    let idle = FakeOutbound::new(vec![]);
    assert_eq!(decide(&idle, &scale, NOW_MS + HOUR + 1)["result"], carrying_out);
    assert!(idle.requests.borrow().is_empty(), "the second upgrade waited");
    // Stripe answers again: the first goes through (its own idempotency key); the second then
    // finds the workspace on another plan than it was asked from, and changes nothing.
    let changed = |price: &str| {
        FakeOutbound::json(
            200,
            json!({"id": "sub_1", "object": "subscription", "customer": "cus_1", "status": "active",
                "items": {"data": [{"id": "si_1", "price": {"id": price},
                    "current_period_start": NOW_MS / 1000, "current_period_end": NOW_MS / 1000 + 30 * 86_400}]}}),
        )
    };
    // The first reads the subscription's item (the checkout event named none), then changes it.
    let stripe =
        FakeOutbound::new(vec![changed("price_starter"), changed("price_growth"), changed("price_scale")]);
    let mut runs = 0;
    while let Some(due) = workspace::next_alarm(&w.db).unwrap().filter(|d| *d <= NOW_MS + 30 * HOUR) {
        let svc = Services { db: &w.db, config: &w.config, outbound: &stripe, now_ms: due };
        block_on(workspace::on_alarm(&svc, &workspace::Opened::default())).unwrap();
        runs += 1;
        assert!(runs < 1_000, "jobs keep running");
    }
    let posts: Vec<usize> = (0..stripe.requests.borrow().len())
        .filter(|i| stripe.requests.borrow()[*i].method == "POST")
        .collect();
    let prices: Vec<String> = posts
        .iter()
        .map(|i| {
            stripe
                .form(*i)
                .into_iter()
                .find(|(k, _)| k.ends_with("[price]"))
                .map(|(_, v)| v)
                .unwrap_or_default()
        })
        .collect();
    assert_eq!(prices, ["price_growth"]);
    // The first one's retry asked Stripe first (still on Starter), then changed it under a key
    // of its own: Stripe replays a 500 it kept under the first run's key.
    assert_eq!(stripe.requests.borrow()[posts[0] - 1].method, "GET", "read before the change");
    let key = stripe.header(posts[0], "idempotency-key").unwrap();
    assert!(key.starts_with(&format!("vibesell-{}-subscription-", growth["id"].as_str().unwrap())), "{key}");
    let record =
        |a: &Value| crate::workspace::approvals::load(&w.db, a["id"].as_str().unwrap()).unwrap().unwrap();
    let (first, second) = (record(&growth), record(&scale));
    assert_eq!(
        (first.state, second.state),
        (crate::workspace::approvals::State::Done, crate::workspace::approvals::State::NotDone)
    );
    assert!(second.result.unwrap().contains("on the Growth plan now"));
    assert_eq!(current(&w.db, &w.config).unwrap().plan.id, "growth");
}

/// A checkout completed unpaid (a bank debit) waits for its first payment: no second payment
/// page meanwhile (audit finding: paying again subscribed the user twice, and the first
/// subscription's events were then dropped as another subscription's).
#[test]
fn no_second_checkout_while_the_first_payment_is_being_confirmed() {
    let w = World::new();
    let unpaid = event(
        "evt_c",
        NOW_MS,
        EventKind::CheckoutCompleted {
            customer: Some("cus_1".into()),
            subscription: Some("sub_1".into()),
            plan: Some("growth".into()),
            paid: false,
        },
    );
    assert_eq!(apply_event(&w.db, &w.config, NOW_MS, &unpaid).unwrap(), Applied::Applied);
    let refused = w.refused("start_checkout", json!({ "plan": "starter" }), NOW_MS);
    assert!(refused.contains("still being confirmed") && refused.contains("subscribe twice"), "{refused}");
    let plans = w.call("get_plans_and_billing", json!({}), NOW_MS).text;
    assert!(plans.contains("still being confirmed") && !plans.contains("To subscribe"), "{plans}");
    // Paid, the plan changes; failed, a new page can be made.
    let failed = event(
        "evt_f",
        NOW_MS + 1000,
        EventKind::SubscriptionChanged {
            subscription: sub("sub_1", "incomplete_expired", "growth"),
            deleted: false,
        },
    );
    assert_eq!(apply_event(&w.db, &w.config, NOW_MS, &failed).unwrap(), Applied::Applied);
    w.ok("start_checkout", json!({ "plan": "starter" }), NOW_MS);
}

/// A payment page is made one at a time per workspace: two made side by side, for two plans, could
/// both be paid (audit finding).
#[test]
fn one_payment_page_is_made_at_a_time() {
    let w = World::new();
    let making = crate::workspace::approvals::Claim::take("checkout:ws_1").unwrap();
    let refused = w.refused("start_checkout", json!({ "plan": "starter" }), NOW_MS);
    assert!(refused.contains("being made for this workspace right now"), "{refused}");
    drop(making);
    w.ok("start_checkout", json!({ "plan": "starter" }), NOW_MS);
}

//! The workspace's plan and subscription (DOMAIN §5), changed only by verified provider events
//! (Stripe webhooks, or the sandbox's own pages) and by the `upgrade_plan` approval.
//!
//! Events are applied once per event id, and a subscription event older than the last one
//! applied never undoes it (Stripe does not deliver in order). An event for another
//! subscription than the workspace's applies only while the workspace's is not in good standing
//! (and never its end): the workspace follows the subscription that pays. Which plan the
//! workspace has is decided by one entitlement rule, [`current`]: a subscription that is
//! `active`, `trialing` or `past_due` (Stripe's retry window) gives its plan; anything else gives
//! the free plan.

use serde::{Deserialize, Serialize};

use super::Services;
use super::approvals::{Action, ExecCx, ExecError, Executed, Proposal};
use crate::config::Config;
use crate::plans::{Limit, Money, Plan};
use crate::providers::ProviderError;
use crate::providers::billing::{
    self as provider, BillingEvent, ChangePlanRequest, CheckoutSession, EventKind, Invoice, Subscription,
};
use crate::providers::sandbox_billing::prorate;
use crate::store::{Db, Stmt, StoreError, from_document, to_document};
use crate::tools::registry::{Refusal, ToolCx};

/// Subscription statuses that keep the plan's features.
const ENTITLED: [&str; 3] = ["active", "trialing", "past_due"];
/// How long processed event ids are kept for deduplication (Stripe retries for about 3 days).
const EVENT_MEMORY_MS: i64 = 30 * 86_400_000;

/// The stored subscription state.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct BillingState {
    /// The plan of the subscription.
    pub plan: String,
    /// The provider's subscription status, or `none`.
    pub status: String,
    /// The customer at the provider.
    pub customer: Option<String>,
    /// The subscription.
    pub subscription: Option<String>,
    /// The subscription's item.
    pub subscription_item: Option<String>,
    /// The current period's start (ms).
    pub period_start: Option<i64>,
    /// The current period's end (ms).
    pub period_end: Option<i64>,
    /// Whether it ends at the end of the period (0/1).
    pub cancel_at_period_end: i64,
    /// The `created` time of the last subscription event applied (ms).
    pub event_at: i64,
}

/// The stored state, if the workspace ever had billing.
pub fn state(db: &dyn Db) -> Result<Option<BillingState>, StoreError> {
    db.row(
        "SELECT plan, status, customer, subscription, subscription_item, period_start, period_end, \
         cancel_at_period_end, event_at FROM billing WHERE id = 1",
        vec![],
    )
}

fn write(state: &BillingState, now_ms: i64) -> Stmt {
    Stmt::new(
        "INSERT INTO billing (id, plan, status, customer, subscription, subscription_item, period_start, period_end, \
         cancel_at_period_end, event_at, updated_at) VALUES (1, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) \
         ON CONFLICT(id) DO UPDATE SET plan = excluded.plan, status = excluded.status, customer = excluded.customer, \
         subscription = excluded.subscription, subscription_item = excluded.subscription_item, \
         period_start = excluded.period_start, period_end = excluded.period_end, \
         cancel_at_period_end = excluded.cancel_at_period_end, event_at = excluded.event_at, updated_at = excluded.updated_at",
        vec![
            state.plan.clone().into(),
            state.status.clone().into(),
            state.customer.clone().into(),
            state.subscription.clone().into(),
            state.subscription_item.clone().into(),
            state.period_start.into(),
            state.period_end.into(),
            state.cancel_at_period_end.into(),
            state.event_at.into(),
            now_ms.into(),
        ],
    )
}

fn record_invoice(invoice: &Invoice) -> Stmt {
    Stmt::new(
        "INSERT OR IGNORE INTO invoices (id, amount, currency, description, created_at) VALUES (?, ?, ?, ?, ?)",
        vec![
            invoice.id.clone().into(),
            invoice.amount.into(),
            invoice.currency.clone().into(),
            invoice.description.clone().into(),
            invoice.created_at.into(),
        ],
    )
}

/// The workspace's plan now.
#[derive(Debug, Clone)]
pub struct Current<'c> {
    /// The plan whose limits apply.
    pub plan: &'c Plan,
    /// Whether a paid subscription is in force (upgrades are approvals; otherwise checkout).
    pub paying: bool,
    /// The stored state.
    pub state: Option<BillingState>,
}

impl Current<'_> {
    /// Whether a checkout completed and its first payment is not confirmed yet (a bank debit, SEPA
    /// or ACH, takes days): another checkout now would subscribe the user twice.
    pub fn payment_pending(&self) -> bool {
        self.state.as_ref().is_some_and(|s| s.status == "incomplete")
    }
}

/// The plan in force (the entitlement rule).
pub fn current<'c>(db: &dyn Db, config: &'c Config) -> Result<Current<'c>, StoreError> {
    let state = state(db)?;
    let plans = &config.plans;
    let entitled =
        state.as_ref().filter(|s| ENTITLED.contains(&s.status.as_str())).and_then(|s| plans.find(&s.plan));
    let plan = entitled.unwrap_or_else(|| plans.default_plan());
    Ok(Current { plan, paying: entitled.is_some_and(|p| p.price_monthly > 0), state })
}

/// Paid invoices, newest first.
pub fn invoices(db: &dyn Db, limit: i64) -> Result<Vec<Invoice>, StoreError> {
    #[derive(Deserialize)]
    struct Row {
        id: String,
        amount: i64,
        currency: String,
        description: String,
        created_at: i64,
    }
    let rows: Vec<Row> = db.rows(
        "SELECT id, amount, currency, description, created_at FROM invoices ORDER BY created_at DESC, id LIMIT ?",
        vec![limit.into()],
    )?;
    Ok(rows
        .into_iter()
        .map(|r| Invoice {
            id: r.id,
            amount: r.amount,
            currency: r.currency,
            description: r.description,
            created_at: r.created_at,
        })
        .collect())
}

/// What applying an event did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Applied {
    /// The workspace changed accordingly.
    Applied,
    /// This event id was applied before: nothing done.
    Duplicate,
    /// Older than what is already applied: recorded, not applied.
    Stale,
    /// No such workspace here (never opened, or another workspace's id).
    UnknownWorkspace,
}

/// Applies a verified provider event to the workspace, once per event id.
pub fn apply_event(
    db: &dyn Db,
    config: &Config,
    now_ms: i64,
    event: &BillingEvent,
) -> Result<Applied, StoreError> {
    if super::owner(db)?.is_none() || super::workspace_id(db)?.as_deref() != Some(event.workspace.as_str()) {
        return Ok(Applied::UnknownWorkspace);
    }
    let seen =
        db.query(Stmt::new("SELECT 1 FROM billing_events WHERE id = ?", vec![event.id.clone().into()]))?;
    if !seen.rows.is_empty() {
        return Ok(Applied::Duplicate);
    }
    let kind_name = match &event.kind {
        EventKind::CheckoutCompleted { .. } => "checkout_completed",
        EventKind::SubscriptionChanged { deleted: false, .. } => "subscription_changed",
        EventKind::SubscriptionChanged { deleted: true, .. } => "subscription_deleted",
        EventKind::InvoicePaid { .. } => "invoice_paid",
    };
    let mut stmts = vec![
        Stmt::new(
            "INSERT INTO billing_events (id, type, created_at, received_at) VALUES (?, ?, ?, ?)",
            vec![event.id.clone().into(), kind_name.into(), event.created_ms.into(), now_ms.into()],
        ),
        Stmt::new(
            "DELETE FROM billing_events WHERE received_at < ?",
            vec![(now_ms - EVENT_MEMORY_MS).into()],
        ),
    ];
    let default_plan = config.plans.default_plan().id.clone();
    let mut new = state(db)?.unwrap_or(BillingState {
        plan: default_plan.clone(),
        status: "none".into(),
        customer: None,
        subscription: None,
        subscription_item: None,
        period_start: None,
        period_end: None,
        cancel_at_period_end: 0,
        event_at: 0,
    });
    let mut outcome = Applied::Applied;
    match &event.kind {
        EventKind::CheckoutCompleted { customer, subscription, plan, paid } => {
            // The page is used up: the next `start_checkout`, if any, makes a new one.
            stmts.push(Stmt::new("DELETE FROM meta WHERE key = ?", vec![LAST_CHECKOUT.into()]));
            new.customer = customer.clone().or(new.customer);
            // A checkout older than the subscription events applied (Stripe retries a
            // completion for days, DOMAIN §5.3) links its customer and nothing else: its
            // subscription may since have ended or been replaced, and taking it back would keep
            // paid limits with nothing paying, or lower a plan the user upgraded since.
            if event.created_ms >= new.event_at {
                if subscription.is_some() && subscription != &new.subscription {
                    new.subscription = subscription.clone();
                    new.subscription_item = None;
                    // The status was the previous subscription's: kept, an ended one's `canceled`
                    // would turn away the new one's own updates. Until a payment or its own events
                    // say otherwise (SEPA and ACH complete unpaid), the new one waits for its first
                    // payment, as Stripe's `incomplete` says.
                    new.status = "incomplete".into();
                }
                if let (true, Some(plan)) = (*paid, plan) {
                    new.plan = plan.clone();
                    new.status = "active".into();
                }
            } else {
                outcome = Applied::Stale;
            }
            stmts.push(write(&new, now_ms));
        }
        EventKind::SubscriptionChanged { subscription, deleted } => {
            let other = new.subscription.as_deref().is_some_and(|s| s != subscription.id);
            // Stripe's `created` is in whole seconds: an update of the same second delivered
            // after the deletion must not turn the subscription back on. A canceled subscription
            // never becomes active again at Stripe, so nothing after it but its own end applies.
            let ended = !*deleted && !other && new.status == "canceled";
            // A subscription is `incomplete` only before its first payment, and never again: the
            // `created` event of Checkout says `incomplete` and the `updated` of the same second
            // says `active`, in either order. Delivered last, the first would drop a paying user
            // to the default plan and let them pay a second time (audit finding).
            let before_first_payment = !*deleted
                && !other
                && subscription.status == "incomplete"
                && new.subscription.is_some()
                && new.status != "incomplete";
            // Another subscription takes over only from one not in good standing: an older one
            // left unpaid goes on rolling over to new periods, and must not replace the one the
            // user pays for now (the checkout that names a new one switches to it regardless).
            let replaced = other && (*deleted || ENTITLED.contains(&new.status.as_str()));
            if event.created_ms < new.event_at || replaced || ended || before_first_payment {
                // Older than what is applied, another subscription than the one in force, a
                // change to one that has ended, or one from before its first payment.
                outcome = Applied::Stale;
            } else {
                apply_subscription(&mut new, subscription, *deleted, &default_plan);
                new.event_at = event.created_ms;
                stmts.push(write(&new, now_ms));
            }
        }
        EventKind::InvoicePaid { invoice } => stmts.push(record_invoice(invoice)),
    }
    db.batch(stmts)?;
    Ok(outcome)
}

fn apply_subscription(state: &mut BillingState, sub: &Subscription, deleted: bool, default_plan: &str) {
    state.subscription = Some(sub.id.clone());
    state.customer = sub.customer.clone().or(state.customer.take());
    state.subscription_item = sub.item.clone().or(state.subscription_item.take());
    state.period_start = sub.period_start.or(state.period_start);
    state.period_end = sub.period_end.or(state.period_end);
    state.cancel_at_period_end = i64::from(sub.cancel_at_period_end);
    if deleted {
        state.status = "canceled".into();
        state.plan = default_plan.to_owned();
    } else {
        state.status = sub.status.clone();
        if let Some(plan) = &sub.plan {
            state.plan = plan.clone();
        }
    }
}

// ---- upgrade_plan --------------------------------------------------------------------------

/// The `upgrade_plan` approval: moves a paying workspace's subscription to a higher plan,
/// charging the prorated difference now.
pub struct UpgradePlan;

/// The frozen arguments of `upgrade_plan`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct UpgradeArgs {
    /// The target plan's id.
    pub plan: String,
    /// The plan the workspace was on when the user was asked: the approval upgrades from that
    /// plan only (its charge and limits were shown against it). Empty in approvals asked before
    /// it was frozen, which are held to the upgrade check alone.
    #[serde(default)]
    pub from: String,
    /// The end of the billing period the charge shown was prorated over. Once that period is
    /// over, Stripe prorates over the next one: up to the whole difference, not the charge the
    /// user approved (audit finding), so the approval no longer runs. `None` in approvals asked
    /// before it was frozen, or without a period.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub period_end: Option<i64>,
}

/// Describes a plan's limits for people.
pub fn describe_limits(plan: &Plan) -> String {
    format!(
        "{}, {}, {}",
        Limit::LeadsPerMonth.describe(plan.limits.leads_per_month),
        Limit::Mailboxes.describe(plan.limits.mailboxes),
        Limit::ActiveCampaigns.describe(plan.limits.active_campaigns)
    )
}

impl Action for UpgradePlan {
    type Args = UpgradeArgs;
    const NAME: &'static str = "upgrade_plan";
    // An upgrade checks the plan it starts from, which an earlier one whose outcome is unknown may
    // already have changed at Stripe.
    const SERIAL: bool = true;

    async fn propose(&self, cx: &ToolCx<'_>, args: &UpgradeArgs) -> Result<Proposal, Refusal> {
        let plans = &cx.config.plans;
        let Some(target) = plans.find(&args.plan) else {
            return Err(Refusal::InvalidArguments(format!(
                "`plan` must be one of {}; get_plans_and_billing lists them",
                plans.ids()
            )));
        };
        let current = current(cx.db, cx.config)?;
        let from = current.plan;
        if target.id == from.id {
            return Err(Refusal::guidance(format!("The workspace is already on the {} plan.", from.name)));
        }
        if target.price_monthly <= from.price_monthly {
            return Err(Refusal::guidance(format!(
                "{} is not an upgrade from {}. The user lowers or cancels their plan themselves in the billing \
                 portal (open_billing_portal).",
                target.name, from.name
            )));
        }
        let state = current.state.as_ref().filter(|_| current.paying);
        let Some(state) = state.filter(|s| s.subscription.is_some()) else {
            return Err(Refusal::guidance(format!(
                "The workspace has no paid subscription yet, so there is no card to charge. Call start_checkout \
                 with plan `{}`: the user pays on the payment page and the plan changes once paid.",
                target.id
            )));
        };
        let new_price = plans.price(target);
        let old_price = plans.price(from);
        let (charge, until) = match (state.period_start, state.period_end) {
            (Some(start), Some(end)) if end > cx.now_ms => {
                (prorate(target.price_monthly - from.price_monthly, start, end, cx.now_ms), Some(end))
            }
            _ => (target.price_monthly - from.price_monthly, None),
        };
        let charge = Money::new(charge, &plans.currency);
        let simulated = provider::provider(&cx.services()).is_simulated();
        let mut impact = vec![match until {
            // Set to end in the billing portal: the upgrade does not renew it either.
            Some(end) if state.cancel_at_period_end != 0 => format!(
                "Charges the card on file about {} now for the rest of the current billing period, until {}, when \
                 the subscription ends as set in the billing portal: it does not renew unless the user renews it there.",
                charge.display(),
                crate::dates::utc_minute(end)
            ),
            // "About": the prorated amount is computed again when the user approves.
            Some(end) => format!(
                "Charges the card on file about {} now for the rest of the current billing period (until {}), then {}/month instead of {}/month.",
                charge.display(),
                crate::dates::utc_minute(end),
                new_price.display(),
                old_price.display()
            ),
            None => format!(
                "Charges the card on file up to {} now, then {}/month instead of {}/month.",
                charge.display(),
                new_price.display(),
                old_price.display()
            ),
        }];
        impact.push(format!("Limits become {} (now {}).", describe_limits(target), describe_limits(from)));
        impact.push("The prorated charge is not refunded if the plan is lowered later.".into());
        if simulated {
            impact.push("Sandbox: payments are simulated; no real money moves.".into());
        }
        Ok(Proposal {
            summary: format!("Upgrade from {} to {} ({}/month)", from.name, target.name, new_price.display()),
            impact,
            // Like bought credits or domains: a charge that is not refunded cannot be undone, even
            // though the plan can be lowered later. A simulated one moves no money.
            irreversible: charge.amount > 0 && !simulated,
            cost: Some(charge),
        })
    }

    async fn execute(&self, cx: &ExecCx<'_>, args: UpgradeArgs) -> Result<Executed, ExecError> {
        let Some(target) = cx.config.plans.find(&args.plan) else {
            return Err(ExecError::Failed(format!("The {} plan is no longer offered.", args.plan)));
        };
        let current = current(cx.db, cx.config)?;
        if current.plan.id == target.id {
            // The provider's event got here first: nothing left to do.
            return Ok(Executed { result: format!("Now on the {} plan.", target.name), writes: Vec::new() });
        }
        // The user approved a move from the plan shown then, at the charge shown then: once the
        // workspace is on another plan (another upgrade approved first, a change in the billing
        // portal), this one would charge or move otherwise than it said, or even lower the plan.
        if (!args.from.is_empty() && args.from != current.plan.id)
            || target.price_monthly <= current.plan.price_monthly
        {
            return Err(ExecError::Failed(format!(
                "The workspace is on the {} plan now, not the plan this approval was asked from, so it was not \
                 changed.",
                current.plan.name
            )));
        }
        let Some(state) = current.state.filter(|_| current.paying) else {
            return Err(ExecError::Failed(
                "The workspace no longer has a paid subscription to change.".into(),
            ));
        };
        let Some(subscription) = state.subscription.as_deref() else {
            return Err(ExecError::Failed(
                "The workspace no longer has a paid subscription to change.".into(),
            ));
        };
        if let Some(end) = args.period_end
            && (cx.now_ms >= end || state.period_end != Some(end))
        {
            return Err(ExecError::Failed(
                "The billing period this upgrade's charge was worked out for has ended, so the charge would not be \
                 the one shown: the plan was not changed and nothing was charged. Ask again (upgrade_plan) for the \
                 current charge."
                    .into(),
            ));
        }
        let svc = Services { db: cx.db, config: cx.config, outbound: cx.outbound, now_ms: cx.now_ms };
        let billing = provider::provider(&svc);
        let request = ChangePlanRequest {
            workspace: cx.workspace,
            subscription,
            item: state.subscription_item.as_deref(),
            plan: target,
            idempotency_key: if cx.first_run() {
                cx.idempotency_key("subscription")
            } else {
                format!("{}-{}", cx.idempotency_key("subscription"), cx.now_ms)
            },
            retry: !cx.first_run(),
        };
        let changed = billing.change_plan(request).await.map_err(|e| match e {
            ProviderError::Declined(reason) => {
                ExecError::Failed(format!("{reason} The plan was not changed and nothing was charged."))
            }
            ProviderError::Rejected(message) => {
                ExecError::Failed(format!("The payment provider refused the change ({message}); nothing was charged."))
            }
            ProviderError::Misconfigured(_) => ExecError::Failed(
                "VibeSell's billing is not set up correctly, so nothing was charged. Tell the user to contact \
                 support (contact_support)."
                    .into(),
            ),
            ProviderError::Unavailable(detail) => ExecError::Unknown(detail),
        })?;
        // Read again once the provider has answered: an event applied meanwhile (Stripe's webhook
        // for this very change) is built on, not written over (audit finding: its `event_at` went
        // back, so an older event delivered late could undo the change).
        let mut new = self::state(cx.db)?.unwrap_or_else(|| state.clone());
        apply_subscription(&mut new, &changed.subscription, false, &cx.config.plans.default_plan().id);
        new.plan = target.id.clone();
        let mut writes = vec![write(&new, cx.now_ms)];
        let mut result = format!("Now on the {} plan ({}).", target.name, describe_limits(target));
        if let Some(invoice) = &changed.invoice {
            writes.push(record_invoice(invoice));
            result.push_str(&format!(
                " Charged {} now.",
                Money::new(invoice.amount, &invoice.currency).display()
            ));
        }
        match new.period_end {
            Some(end) if new.cancel_at_period_end != 0 => {
                result.push_str(&format!(
                    " Ends on {}, as set in the billing portal.",
                    crate::dates::utc_minute(end)
                ));
            }
            Some(end) => result.push_str(&format!(
                " Renews on {} at {}/month.",
                crate::dates::utc_minute(end),
                cx.config.plans.price(target).display()
            )),
            None => {}
        }
        Ok(Executed { result, writes })
    }
}

// ---- the open payment page ---------------------------------------------------------------

/// The payment page last made for the workspace. There is at most one that can still be paid:
/// `start_checkout` hands it out again for the same plan and closes it before making one for
/// another, so the user cannot subscribe twice from two pages.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LastCheckout {
    /// The plan it is for.
    pub plan: String,
    /// The page.
    pub session: CheckoutSession,
}

const LAST_CHECKOUT: &str = "last_checkout";

/// The payment page last made, if any (it may have expired, been paid or been closed since).
pub fn last_checkout(db: &dyn Db) -> Result<Option<LastCheckout>, StoreError> {
    super::meta(db, LAST_CHECKOUT)?.map(|doc| from_document(&doc)).transpose()
}

/// Remembers the payment page just made.
pub fn remember_checkout(db: &dyn Db, last: &LastCheckout) -> Result<(), StoreError> {
    db.exec(
        "INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)",
        vec![LAST_CHECKOUT.into(), to_document(last)?.into()],
    )
}

#[cfg(test)]
#[path = "billing_tests.rs"]
mod tests;

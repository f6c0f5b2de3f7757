//! The sandbox billing provider: a Stripe-like simulation inside the Worker, so the whole loop
//! (checkout page → payment → plan change → portal) works locally with no network and no money.
//!
//! Its "provider-side" state lives in the workspace's own `sandbox_billing_*` tables and is
//! written at once, as a real provider's would be; our side of the state changes only through
//! the same normalised events that Stripe's webhooks produce. Test cards behave like Stripe's:
//! `4242 4242 4242 4242` pays; `4000 0000 0000 0002` is declined at checkout; `4000 0000 0000
//! 0341` pays at checkout but declines every later charge (a card that ran out of funds).
//! Plan changes honour idempotency keys: a retry returns the first answer and charges nothing.

use serde::{Deserialize, Serialize};

use super::ProviderError;
use super::billing::{
    BillingEvent, BillingProvider, ChangePlanRequest, CheckoutRequest, CheckoutSession, Closed, EventKind,
    Invoice, PlanChanged, PortalRequest, PortalSession, Subscription,
};
use crate::ids::random_id;
use crate::plans::{Catalogue, Plan};
use crate::store::{Db, Stmt, StoreError, from_document, to_document};
use crate::tools::registry::LocalBoxFuture;
use crate::workspace::Services;
use crate::workspace::schedule::{self, Job, JobCx, JobError};

/// A sandbox billing period.
const PERIOD_MS: i64 = 30 * 86_400_000;
/// How long a checkout page stays open (Stripe's default is 24 hours).
const CHECKOUT_TTL_MS: i64 = 86_400_000;
/// What a checkout page whose day ran out says.
pub const CHECKOUT_EXPIRED: &str = "This checkout page has expired; ask for a new one.";
/// What a checkout page says once the user asked for another plan's page, which closes the
/// earlier one before its time (third journey walk: such a page said it had expired).
pub const CHECKOUT_REPLACED: &str =
    "A newer checkout page replaced this one: pay on the newest page, or ask for a new one.";
/// How long a portal page stays open.
const PORTAL_TTL_MS: i64 = 3_600_000;
/// How long a subscription whose renewal was declined stays `past_due` before it ends, as
/// Stripe's retries of the charge would run.
const RETRY_WINDOW_MS: i64 = 14 * 86_400_000;

/// Test card numbers and what they do.
pub const CARD_OK: &str = "4242424242424242";
/// Declined at checkout.
pub const CARD_DECLINED: &str = "4000000000000002";
/// Pays at checkout, declines later charges.
pub const CARD_DECLINES_LATER: &str = "4000000000000341";

/// The sandbox provider for one workspace.
pub struct SandboxBilling<'a> {
    svc: Services<'a>,
}

#[derive(Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
enum Remembered {
    Changed(Box<PlanChanged>),
    Declined(String),
}

#[derive(Deserialize)]
struct SubRow {
    id: String,
    customer: String,
    item: String,
    plan: String,
    status: String,
    period_start: i64,
    period_end: i64,
}

impl<'a> SandboxBilling<'a> {
    /// The provider for the workspace behind `svc`.
    pub fn new(svc: Services<'a>) -> Self {
        SandboxBilling { svc }
    }

    fn page_url(&self, kind: &str, workspace: &str, session: &str) -> String {
        format!("{}/sandbox/{kind}/{workspace}/{session}", self.svc.config.public_url())
    }

    fn checkout(&self, req: &CheckoutRequest<'_>) -> Result<CheckoutSession, StoreError> {
        let id = random_id("cs_sandbox_");
        let expires_at = self.svc.now_ms + CHECKOUT_TTL_MS;
        self.svc.db.batch(vec![Stmt::new(
            "INSERT INTO sandbox_billing_sessions (id, kind, plan, customer, status, created_at, expires_at) \
             VALUES (?, 'checkout', ?, ?, 'open', ?, ?)",
            vec![
                id.clone().into(),
                req.plan.id.clone().into(),
                req.customer.into(),
                self.svc.now_ms.into(),
                expires_at.into(),
            ],
        )])?;
        Ok(CheckoutSession {
            url: self.page_url("checkout", req.workspace, &id),
            id,
            expires_at: Some(expires_at),
        })
    }

    fn close(&self, id: &str) -> Result<Closed, StoreError> {
        if session(&self.svc, "checkout", id)?.is_some_and(|s| s.status == "complete") {
            return Ok(Closed::Paid);
        }
        self.svc.db.exec(
            "UPDATE sandbox_billing_sessions SET status = 'expired' WHERE id = ? AND status = 'open'",
            vec![id.into()],
        )?;
        Ok(Closed::Unpaid)
    }

    fn portal(&self, req: &PortalRequest<'_>) -> Result<PortalSession, StoreError> {
        let id = random_id("bps_sandbox_");
        let expires_at = self.svc.now_ms + PORTAL_TTL_MS;
        self.svc.db.batch(vec![Stmt::new(
            "INSERT INTO sandbox_billing_sessions (id, kind, plan, customer, status, created_at, expires_at) \
             VALUES (?, 'portal', NULL, ?, 'open', ?, ?)",
            vec![id.clone().into(), req.customer.into(), self.svc.now_ms.into(), expires_at.into()],
        )])?;
        Ok(PortalSession { url: self.page_url("portal", req.workspace, &id), expires_at: Some(expires_at) })
    }

    fn change(&self, req: &ChangePlanRequest<'_>) -> Result<Result<PlanChanged, ProviderError>, StoreError> {
        let db = self.svc.db;
        #[derive(Deserialize)]
        struct Stored {
            response: String,
        }
        let stored: Option<Stored> = db.row(
            "SELECT response FROM sandbox_billing_requests WHERE idempotency_key = ?",
            vec![req.idempotency_key.clone().into()],
        )?;
        if let Some(stored) = stored {
            return Ok(match from_document::<Remembered>(&stored.response)? {
                Remembered::Changed(changed) => Ok(*changed),
                Remembered::Declined(reason) => Err(ProviderError::Declined(reason)),
            });
        }
        let Some(sub) = subscription(db, req.subscription)?.filter(|s| s.status == "active") else {
            return Ok(Err(ProviderError::Rejected(format!("no active subscription {}", req.subscription))));
        };
        let plans = &self.svc.config.plans;
        let old_price = plans.find(&sub.plan).map_or(0, |p| p.price_monthly);
        let amount =
            prorate(req.plan.price_monthly - old_price, sub.period_start, sub.period_end, self.svc.now_ms);
        let remember = |response: &Remembered| -> Result<Stmt, StoreError> {
            Ok(Stmt::new(
                "INSERT INTO sandbox_billing_requests (idempotency_key, response, created_at) VALUES (?, ?, ?)",
                vec![
                    req.idempotency_key.clone().into(),
                    to_document(response)?.into(),
                    self.svc.now_ms.into(),
                ],
            ))
        };
        if amount > 0 && declines_charges(db, &sub.customer)? {
            let reason = "Your card was declined.".to_owned();
            db.batch(vec![remember(&Remembered::Declined(reason.clone()))?])?;
            return Ok(Err(ProviderError::Declined(reason)));
        }
        let invoice = (amount > 0).then(|| {
            paid_invoice(plans, amount, format!("Upgrade to {} (prorated)", req.plan.name), self.svc.now_ms)
        });
        let changed = PlanChanged {
            subscription: Subscription {
                id: sub.id.clone(),
                customer: Some(sub.customer),
                status: "active".into(),
                plan: Some(req.plan.id.clone()),
                item: Some(sub.item),
                period_start: Some(sub.period_start),
                period_end: Some(sub.period_end),
                cancel_at_period_end: false,
            },
            invoice,
        };
        db.batch(vec![
            Stmt::new(
                "UPDATE sandbox_billing_subscriptions SET plan = ? WHERE id = ?",
                vec![req.plan.id.clone().into(), sub.id.into()],
            ),
            remember(&Remembered::Changed(Box::new(changed.clone())))?,
        ])?;
        Ok(Ok(changed))
    }
}

/// The prorated share of a monthly price difference for the rest of the period, in cents.
pub fn prorate(difference: i64, period_start: i64, period_end: i64, now_ms: i64) -> i64 {
    let length = period_end - period_start;
    let left = (period_end - now_ms).clamp(0, length.max(0));
    if length <= 0 || difference <= 0 {
        return 0;
    }
    // Rounded to the nearest cent. The product fits an i64 for any price difference below
    // $34 million a month over a 31-day period; beyond, floating point.
    match difference.checked_mul(left) {
        Some(product) => (product + length / 2) / length,
        None => (difference as f64 * left as f64 / length as f64 + 0.5).floor() as i64,
    }
}

fn store_err(e: StoreError) -> ProviderError {
    ProviderError::Unavailable(format!("sandbox storage: {e}"))
}

impl BillingProvider for SandboxBilling<'_> {
    fn create_checkout<'a>(
        &'a self,
        req: CheckoutRequest<'a>,
    ) -> LocalBoxFuture<'a, Result<CheckoutSession, ProviderError>> {
        Box::pin(async move { self.checkout(&req).map_err(store_err) })
    }
    fn close_checkout<'a>(&'a self, session: &'a str) -> LocalBoxFuture<'a, Result<Closed, ProviderError>> {
        Box::pin(async move { self.close(session).map_err(store_err) })
    }
    fn create_portal<'a>(
        &'a self,
        req: PortalRequest<'a>,
    ) -> LocalBoxFuture<'a, Result<PortalSession, ProviderError>> {
        Box::pin(async move { self.portal(&req).map_err(store_err) })
    }
    fn change_plan<'a>(
        &'a self,
        req: ChangePlanRequest<'a>,
    ) -> LocalBoxFuture<'a, Result<PlanChanged, ProviderError>> {
        Box::pin(async move { self.change(&req).map_err(store_err)? })
    }
    fn is_simulated(&self) -> bool {
        true
    }
}

// ---- the sandbox's own pages ----------------------------------------------------------------

/// A sandbox page session, as its page shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PageSession {
    /// `cs_sandbox_…` or `bps_sandbox_…`.
    pub id: String,
    /// The plan being bought (checkout).
    pub plan: Option<String>,
    /// `open`, `complete`, `expired`, or `replaced` (a checkout closed before its time).
    pub status: String,
    /// When the page stops working (ms).
    pub expires_at: i64,
    /// The customer's subscription (portal): plan, status, renewal.
    pub subscription: Option<Subscription>,
    /// The last four digits of the customer's card, when known.
    pub card_last4: Option<String>,
}

#[derive(Deserialize)]
struct SessionRow {
    id: String,
    kind: String,
    plan: Option<String>,
    customer: Option<String>,
    status: String,
    expires_at: i64,
}

fn session(svc: &Services<'_>, kind: &str, id: &str) -> Result<Option<SessionRow>, StoreError> {
    let row: Option<SessionRow> = svc.db.row(
        "SELECT id, kind, plan, customer, status, expires_at FROM sandbox_billing_sessions WHERE id = ?",
        vec![id.into()],
    )?;
    Ok(row.filter(|r| r.kind == kind))
}

/// Subscription `id`.
fn subscription(db: &dyn Db, id: &str) -> Result<Option<SubRow>, StoreError> {
    db.row(
        "SELECT id, customer, item, plan, status, period_start, period_end FROM sandbox_billing_subscriptions \
         WHERE id = ?",
        vec![id.into()],
    )
}

/// Whether the customer's card declines every charge after the first (`CARD_DECLINES_LATER`).
fn declines_charges(db: &dyn Db, customer: &str) -> Result<bool, StoreError> {
    let declines = db.query(Stmt::new(
        "SELECT declines_charges FROM sandbox_billing_customers WHERE id = ?",
        vec![customer.into()],
    ))?;
    Ok(declines.scalar_i64().is_some_and(|d| d != 0))
}

/// A paid invoice of `amount`, now.
fn paid_invoice(plans: &Catalogue, amount: i64, description: String, now: i64) -> Invoice {
    Invoice {
        id: random_id("in_sandbox_"),
        amount,
        currency: plans.currency.clone(),
        description,
        created_at: now,
    }
}

fn customer_subscription(svc: &Services<'_>, customer: &str) -> Result<Option<SubRow>, StoreError> {
    svc.db.row(
        "SELECT id, customer, item, plan, status, period_start, period_end FROM sandbox_billing_subscriptions \
         WHERE customer = ? ORDER BY created_at DESC LIMIT 1",
        vec![customer.into()],
    )
}

fn to_subscription(s: SubRow) -> Subscription {
    Subscription {
        id: s.id,
        customer: Some(s.customer),
        status: s.status,
        plan: Some(s.plan),
        item: Some(s.item),
        period_start: Some(s.period_start),
        period_end: Some(s.period_end),
        cancel_at_period_end: false,
    }
}

/// A page session of `kind` (`checkout` or `portal`), with what its page shows.
pub fn page_session(svc: &Services<'_>, kind: &str, id: &str) -> Result<Option<PageSession>, StoreError> {
    let Some(row) = session(svc, kind, id)? else { return Ok(None) };
    // A page closed before its time was replaced by a page for another plan (`close`).
    let status = match (row.status.as_str(), row.expires_at <= svc.now_ms) {
        ("open", true) => "expired".into(),
        ("expired", false) if kind == "checkout" => "replaced".into(),
        _ => row.status,
    };
    let (subscription, card_last4) = match &row.customer {
        Some(customer) => {
            #[derive(Deserialize)]
            struct Card {
                card_last4: String,
            }
            let card: Option<Card> = svc.db.row(
                "SELECT card_last4 FROM sandbox_billing_customers WHERE id = ?",
                vec![customer.into()],
            )?;
            (customer_subscription(svc, customer)?.map(to_subscription), card.map(|c| c.card_last4))
        }
        None => (None, None),
    };
    Ok(Some(PageSession {
        id: row.id,
        plan: row.plan,
        status,
        expires_at: row.expires_at,
        subscription,
        card_last4,
    }))
}

/// What paying on the sandbox checkout page did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "outcome", rename_all = "snake_case")]
pub enum Paid {
    /// Paid: these events (checkout completed, subscription created, invoice paid) are to be
    /// applied to the workspace like a webhook's.
    Paid {
        /// The events.
        events: Vec<BillingEvent>,
    },
    /// The card was refused; the page stays open. The text is for the page.
    Refused {
        /// Why.
        reason: String,
    },
    /// The page cannot be paid any more (already paid, expired, or the workspace already pays).
    Closed {
        /// Why.
        reason: String,
    },
}

/// Pays checkout session `id` with test card `card` for workspace `workspace`, whose current
/// customer at the provider is `existing_customer` and which already pays when
/// `already_subscribed`.
pub fn pay_checkout(
    svc: &Services<'_>,
    workspace: &str,
    id: &str,
    card: &str,
    existing_customer: Option<&str>,
    already_subscribed: bool,
) -> Result<Option<Paid>, StoreError> {
    let Some(row) = session(svc, "checkout", id)? else { return Ok(None) };
    let closed = |reason: &str| Ok(Some(Paid::Closed { reason: reason.to_owned() }));
    if row.status == "complete" {
        return closed("This checkout is already paid.");
    }
    if row.status != "open" && row.expires_at > svc.now_ms {
        return closed(CHECKOUT_REPLACED);
    }
    if row.status != "open" || row.expires_at <= svc.now_ms {
        return closed(CHECKOUT_EXPIRED);
    }
    if already_subscribed {
        return closed("This workspace already pays for a plan; change it from the billing portal.");
    }
    let Some(plan) = row.plan.as_deref().and_then(|p| svc.config.plans.find(p)) else {
        return closed("This plan is no longer offered.");
    };
    let card: String = card.chars().filter(char::is_ascii_digit).collect();
    let declines_later = match card.as_str() {
        CARD_OK => false,
        CARD_DECLINES_LATER => true,
        CARD_DECLINED => return Ok(Some(Paid::Refused { reason: "Your card was declined.".into() })),
        _ => {
            return Ok(Some(Paid::Refused {
                reason:
                    "Use a sandbox test card: 4242 4242 4242 4242 (pays), 4000 0000 0000 0341 (pays now, \
                         declines later charges) or 4000 0000 0000 0002 (declined)."
                        .into(),
            }));
        }
    };
    Ok(Some(Paid::Paid {
        events: subscribe(svc, workspace, &row.id, plan, &card, declines_later, existing_customer)?,
    }))
}

fn subscribe(
    svc: &Services<'_>,
    workspace: &str,
    session_id: &str,
    plan: &Plan,
    card: &str,
    declines_later: bool,
    existing_customer: Option<&str>,
) -> Result<Vec<BillingEvent>, StoreError> {
    let now = svc.now_ms;
    let customer = existing_customer
        .filter(|c| c.starts_with("cus_sandbox_"))
        .map_or_else(|| random_id("cus_sandbox_"), str::to_owned);
    let subscription = Subscription {
        id: random_id("sub_sandbox_"),
        customer: Some(customer.clone()),
        status: "active".into(),
        plan: Some(plan.id.clone()),
        item: Some(random_id("si_sandbox_")),
        period_start: Some(now),
        period_end: Some(now + PERIOD_MS),
        cancel_at_period_end: false,
    };
    let invoice =
        paid_invoice(&svc.config.plans, plan.price_monthly, format!("{} plan, first month", plan.name), now);
    svc.db.batch(vec![
        Stmt::new(
            "INSERT INTO sandbox_billing_customers (id, card_last4, declines_charges, created_at) VALUES (?, ?, ?, ?) \
             ON CONFLICT(id) DO UPDATE SET card_last4 = excluded.card_last4, declines_charges = excluded.declines_charges",
            vec![customer.clone().into(), card[card.len() - 4..].into(), declines_later.into(), now.into()],
        ),
        Stmt::new(
            "INSERT INTO sandbox_billing_subscriptions (id, customer, item, plan, status, period_start, period_end, created_at) \
             VALUES (?, ?, ?, ?, 'active', ?, ?, ?)",
            vec![
                subscription.id.clone().into(),
                customer.clone().into(),
                subscription.item.clone().into(),
                plan.id.clone().into(),
                now.into(),
                (now + PERIOD_MS).into(),
                now.into(),
            ],
        ),
        Stmt::new(
            "UPDATE sandbox_billing_sessions SET status = 'complete', customer = ?, completed_at = ? WHERE id = ?",
            vec![customer.clone().into(), now.into(), session_id.into()],
        ),
        schedule::at::<SandboxRenewal>(&subscription.id, now + PERIOD_MS),
    ])?;
    let event = |kind| BillingEvent {
        id: random_id("evt_sandbox_"),
        created_ms: now,
        workspace: workspace.to_owned(),
        kind,
    };
    Ok(vec![
        event(EventKind::CheckoutCompleted {
            customer: Some(customer),
            subscription: Some(subscription.id.clone()),
            plan: Some(plan.id.clone()),
            paid: true,
        }),
        event(EventKind::SubscriptionChanged { subscription, deleted: false }),
        event(EventKind::InvoicePaid { invoice }),
    ])
}

/// Renews a sandbox subscription at the end of its period, as Stripe does: the card is charged
/// and a new period starts (`invoice.paid`, the subscription changed). A card that declines later
/// charges leaves it `past_due`, and it ends once Stripe's retries would have run out. Our side
/// changes only through those events, as with Stripe's webhooks (audit finding: sandbox
/// subscriptions never renewed, and their renewal date went by).
pub struct SandboxRenewal;

impl Job for SandboxRenewal {
    const NAME: &'static str = "sandbox_renewal";

    async fn run(&self, cx: &JobCx<'_>, id: &str) -> Result<(), JobError> {
        let now = cx.now_ms;
        let Some(workspace) = crate::workspace::workspace_id(cx.db)? else { return Ok(()) };
        let Some(sub) = subscription(cx.db, id)? else { return Ok(()) };
        let declines = declines_charges(cx.db, &sub.customer)?;
        let event = |kind| BillingEvent {
            id: random_id("evt_sandbox_"),
            created_ms: now,
            workspace: workspace.clone(),
            kind,
        };
        let (status, start, end, next, invoice) = match sub.status.as_str() {
            // Early (the period changed since it was scheduled): at the period's end.
            "active" | "past_due" if now < sub.period_end => {
                cx.db.batch(vec![schedule::at::<SandboxRenewal>(id, sub.period_end)])?;
                return Ok(());
            }
            "active" if declines => {
                ("past_due", sub.period_start, sub.period_end, Some(sub.period_end + RETRY_WINDOW_MS), None)
            }
            "active" => {
                let Some(plan) = cx.config.plans.find(&sub.plan) else { return Ok(()) };
                // Every period that went by, as one charge of the current one (the sandbox
                // bills nothing for time its alarm did not run).
                let (mut start, mut end) = (sub.period_start, sub.period_end);
                while end <= now {
                    (start, end) = (end, end + PERIOD_MS);
                }
                let invoice = paid_invoice(
                    &cx.config.plans,
                    plan.price_monthly,
                    format!("{} plan, renewal", plan.name),
                    now,
                );
                ("active", start, end, Some(end), Some(invoice))
            }
            "past_due" if now >= sub.period_end + RETRY_WINDOW_MS => {
                ("canceled", sub.period_start, sub.period_end, None, None)
            }
            "past_due" => {
                cx.db.batch(vec![schedule::at::<SandboxRenewal>(id, sub.period_end + RETRY_WINDOW_MS)])?;
                return Ok(());
            }
            _ => return Ok(()),
        };
        let mut stmts = vec![Stmt::new(
            "UPDATE sandbox_billing_subscriptions SET status = ?, period_start = ?, period_end = ? WHERE id = ?",
            vec![status.into(), start.into(), end.into(), id.into()],
        )];
        stmts.extend(next.map(|at| schedule::at::<SandboxRenewal>(id, at)));
        cx.db.batch(stmts)?;
        let mut subscription = to_subscription(sub);
        (subscription.status, subscription.period_start, subscription.period_end) =
            (status.to_owned(), Some(start), Some(end));
        let mut events =
            vec![event(EventKind::SubscriptionChanged { subscription, deleted: status == "canceled" })];
        events.extend(invoice.map(|invoice| event(EventKind::InvoicePaid { invoice })));
        for e in &events {
            crate::workspace::billing::apply_event(cx.db, cx.config, now, e)?;
        }
        Ok(())
    }
}

/// From portal session `id`, cancels the customer's subscription at once, or with `to` moves it
/// to that lower paid plan at once, without a refund for the period, as a Stripe portal set up
/// for immediate downgrades does (third journey walk: the texts send users to the portal to
/// lower their plan, and the sandbox's could only cancel). A higher plan is `upgrade_plan`'s, an
/// approval with its charge. Returns the event to apply, or `None` when nothing changed.
pub fn change_from_portal(
    svc: &Services<'_>,
    workspace: &str,
    id: &str,
    to: Option<&Plan>,
) -> Result<Option<BillingEvent>, StoreError> {
    let Some(row) = session(svc, "portal", id)?.filter(|r| r.expires_at > svc.now_ms) else {
        return Ok(None);
    };
    let Some(customer) = row.customer else { return Ok(None) };
    let Some(sub) = customer_subscription(svc, &customer)?.filter(|s| s.status == "active") else {
        return Ok(None);
    };
    let price = |id: &str| svc.config.plans.find(id).map_or(0, |p| p.price_monthly);
    let (update, status) = match to {
        None => ("UPDATE sandbox_billing_subscriptions SET status = ? WHERE id = ?", "canceled"),
        Some(p) if p.price_monthly > 0 && p.price_monthly < price(&sub.plan) => {
            ("UPDATE sandbox_billing_subscriptions SET plan = ? WHERE id = ?", p.id.as_str())
        }
        Some(_) => return Ok(None),
    };
    svc.db.batch(vec![Stmt::new(update, vec![status.into(), sub.id.clone().into()])])?;
    let mut subscription = to_subscription(sub);
    match to {
        None => subscription.status = "canceled".into(),
        Some(p) => subscription.plan = Some(p.id.clone()),
    }
    Ok(Some(BillingEvent {
        id: random_id("evt_sandbox_"),
        created_ms: svc.now_ms,
        workspace: workspace.to_owned(),
        kind: EventKind::SubscriptionChanged { subscription, deleted: to.is_none() },
    }))
}

#[cfg(test)]
mod prorate_tests {
    #[test]
    fn prorating_rounds_to_the_nearest_cent_exactly() {
        let reference = |difference: i64, left: i64, length: i64| {
            ((i128::from(difference) * i128::from(left) + i128::from(length) / 2) / i128::from(length)) as i64
        };
        const MONTH: i64 = 30 * 86_400_000;
        for difference in [1, 99, 100, 4_900, 15_000, 1_000_000, 3_400_000_000, 10_000_000_000] {
            for left in [0, 1, MONTH / 3, MONTH / 2, MONTH - 1, MONTH] {
                assert_eq!(
                    super::prorate(difference, 0, MONTH, MONTH - left),
                    reference(difference, left, MONTH)
                );
            }
        }
        assert_eq!(super::prorate(4_900, 0, MONTH, 2 * MONTH), 0, "the period is over");
        assert_eq!(super::prorate(-100, 0, MONTH, 0), 0, "no credit for a cheaper plan");
    }
}

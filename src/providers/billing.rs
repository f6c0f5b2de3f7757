//! The billing provider port (DOMAIN §5): a hosted payment page for a plan, the billing portal,
//! changing an existing subscription's plan, and the provider events that change a workspace's
//! subscription, normalised so that Stripe's signed webhooks and the sandbox's own pages feed
//! the same code (`workspace::billing::apply_event`).

use serde::{Deserialize, Serialize};

use super::ProviderError;
use super::sandbox_billing::SandboxBilling;
use super::stripe::Stripe;
use crate::config::ProviderMode;
use crate::plans::Plan;
use crate::tools::registry::LocalBoxFuture;
use crate::workspace::Services;

/// A payment page for subscribing a workspace to a plan.
#[derive(Debug, Clone)]
pub struct CheckoutRequest<'a> {
    /// The workspace (`ws_…`), carried back by the provider's events.
    pub workspace: &'a str,
    /// What is bought.
    pub plan: &'a Plan,
    /// The workspace's existing customer at the provider, if any.
    pub customer: Option<&'a str>,
    /// Where the provider sends the user after paying.
    pub success_url: String,
    /// Where it sends them if they give up.
    pub cancel_url: String,
    /// Makes a retried creation return the same session.
    pub idempotency_key: String,
}

/// A created payment page.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CheckoutSession {
    /// The provider's session id (`cs_…`).
    pub id: String,
    /// The page the user opens.
    pub url: String,
    /// When the page stops working (ms), if the provider says.
    pub expires_at: Option<i64>,
}

/// What became of a payment page that was closed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Closed {
    /// Nobody paid on it, and nobody can now.
    Unpaid,
    /// It was paid before it could be closed.
    Paid,
}

/// A billing portal session for a customer.
#[derive(Debug, Clone)]
pub struct PortalRequest<'a> {
    /// The workspace (`ws_…`).
    pub workspace: &'a str,
    /// The customer at the provider.
    pub customer: &'a str,
    /// Where the portal's "return" link goes.
    pub return_url: String,
}

/// A created portal session.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PortalSession {
    /// The page the user opens.
    pub url: String,
    /// When the page stops working (ms), if known.
    pub expires_at: Option<i64>,
}

/// Moves an existing subscription to another plan, charging the prorated difference now.
#[derive(Debug, Clone)]
pub struct ChangePlanRequest<'a> {
    /// The workspace (`ws_…`).
    pub workspace: &'a str,
    /// The subscription (`sub_…`).
    pub subscription: &'a str,
    /// Its item to change (`si_…`), when known.
    pub item: Option<&'a str>,
    /// The new plan.
    pub plan: &'a Plan,
    /// The key of this attempt. The approval's first run uses the approval's own; a later run
    /// (the watchdog's) one of its own, because Stripe keeps a 500 under a key and replays it to
    /// every retry for 24 hours. A later run asks first (`retry`), so that a change an earlier
    /// run made is not made again.
    pub idempotency_key: String,
    /// Whether an earlier run of the same approval may have made the change.
    pub retry: bool,
}

/// A subscription as the provider reports it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Subscription {
    /// `sub_…`.
    pub id: String,
    /// `cus_…`.
    pub customer: Option<String>,
    /// The provider's status: `active`, `trialing`, `past_due`, `canceled`, `unpaid`,
    /// `incomplete`, `incomplete_expired`, `paused`.
    pub status: String,
    /// The plan it is for, when its price maps to one of the catalogue's plans.
    pub plan: Option<String>,
    /// The subscription item (`si_…`).
    pub item: Option<String>,
    /// The current period's start (ms).
    pub period_start: Option<i64>,
    /// The current period's end (ms).
    pub period_end: Option<i64>,
    /// Whether it ends at the end of the period.
    pub cancel_at_period_end: bool,
}

/// A paid invoice.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Invoice {
    /// `in_…`.
    pub id: String,
    /// Amount paid, in the minor unit.
    pub amount: i64,
    /// ISO 4217, lower-case.
    pub currency: String,
    /// What it was for.
    pub description: String,
    /// When (ms).
    pub created_at: i64,
}

/// The result of a plan change.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlanChanged {
    /// The subscription afterwards.
    pub subscription: Subscription,
    /// The prorated invoice paid now, if anything was charged.
    pub invoice: Option<Invoice>,
}

/// A provider event about one workspace, verified and normalised.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BillingEvent {
    /// The provider's event id (`evt_…`): events are applied once per id.
    pub id: String,
    /// When the provider created it (ms): older subscription events never undo newer ones.
    pub created_ms: i64,
    /// The workspace it is about (`ws_…`).
    pub workspace: String,
    /// What happened.
    pub kind: EventKind,
}

/// What a [`BillingEvent`] says.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum EventKind {
    /// A checkout finished (`checkout.session.completed`): link the workspace to the customer.
    CheckoutCompleted {
        /// `cus_…`.
        customer: Option<String>,
        /// `sub_…`.
        subscription: Option<String>,
        /// The plan bought (from the session's metadata).
        plan: Option<String>,
        /// Whether the first payment went through.
        paid: bool,
    },
    /// A subscription was created, changed or deleted (`customer.subscription.*`).
    SubscriptionChanged {
        /// Its state.
        subscription: Subscription,
        /// It ended (`customer.subscription.deleted`).
        deleted: bool,
    },
    /// An invoice was paid (`invoice.paid`).
    InvoicePaid {
        /// The invoice.
        invoice: Invoice,
    },
}

/// A billing provider.
pub trait BillingProvider {
    /// Creates a payment page for a plan.
    fn create_checkout<'a>(
        &'a self,
        req: CheckoutRequest<'a>,
    ) -> LocalBoxFuture<'a, Result<CheckoutSession, ProviderError>>;
    /// Closes a payment page so that it can no longer be paid, and says whether it was paid
    /// already.
    fn close_checkout<'a>(&'a self, session: &'a str) -> LocalBoxFuture<'a, Result<Closed, ProviderError>>;
    /// Creates a billing portal session.
    fn create_portal<'a>(
        &'a self,
        req: PortalRequest<'a>,
    ) -> LocalBoxFuture<'a, Result<PortalSession, ProviderError>>;
    /// Changes a subscription's plan, charging the prorated difference now; refused as a whole
    /// when the payment fails.
    fn change_plan<'a>(
        &'a self,
        req: ChangePlanRequest<'a>,
    ) -> LocalBoxFuture<'a, Result<PlanChanged, ProviderError>>;
    /// Whether payments are simulated (no real money).
    fn is_simulated(&self) -> bool;
}

/// The billing provider of this deployment (`PROVIDER_MODE`).
pub fn provider<'a>(svc: &Services<'a>) -> Box<dyn BillingProvider + 'a> {
    match svc.config.provider_mode {
        ProviderMode::Sandbox => Box::new(SandboxBilling::new(*svc)),
        ProviderMode::Live => Box::new(Stripe::new(&svc.config.stripe, svc.outbound)),
    }
}

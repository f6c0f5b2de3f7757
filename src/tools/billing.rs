//! Plans and billing tools (PRODUCT §7, DOMAIN §5): the plans with their prices and limits, the
//! current plan, usage and credits (`get_plans_and_billing`); moving a paying workspace up
//! (`upgrade_plan`, an approval); the payment page for a plan (`start_checkout`); and the
//! billing portal (`open_billing_portal`). Links are for the user to open.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::registry::{Access, Hints, Refusal, Reply, Tool, ToolCx};
use super::workspace::NoArguments;
use crate::plans::{Limits, Money, Plan, group_thousands};
use crate::providers::ProviderError;
use crate::providers::billing::{self as provider, CheckoutRequest, CheckoutSession, Closed, PortalRequest};
use crate::workspace::approvals::{self, ApprovalResult};
use crate::workspace::billing::{self, UpgradeArgs, UpgradePlan};
use crate::workspace::limits::{self, Usage};

/// How many charges the billing view lists.
const CHARGES_SHOWN: i64 = 10;

/// A provider failure while creating a page, as a refusal.
fn provider_refusal(e: ProviderError, what: &str) -> Refusal {
    match e {
        ProviderError::Unavailable(_) => Refusal::guidance(format!(
            "The payment provider did not answer, so no {what} was created. Try again in a moment."
        )),
        other => Refusal::Internal(format!("{what}: {other}")),
    }
}

// ---- get_plans_and_billing ---------------------------------------------------------------

/// `get_plans_and_billing`: plans, the current plan, usage and credits.
pub struct GetPlansAndBilling;

/// The workspace's plan now.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CurrentPlan {
    /// The plan's id.
    pub id: String,
    /// Its name.
    pub name: String,
    /// The subscription's status (`active`, `past_due`, `canceled`…), or `none` without one.
    pub status: String,
    /// Its monthly price.
    pub price: Money,
    /// Whether a paid subscription is in force (then upgrade_plan applies; otherwise
    /// start_checkout).
    pub paying: bool,
    /// When the current period ends and the subscription renews (ms since the epoch).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub renews_at: Option<i64>,
    /// Whether the subscription ends at the end of the period instead of renewing.
    pub cancel_at_period_end: bool,
    /// Whether the workspace has a billing account (then open_billing_portal works).
    pub has_billing_account: bool,
}

/// One plan of the catalogue.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PlanView {
    /// The plan's id, for upgrade_plan and start_checkout.
    pub id: String,
    /// Its name.
    pub name: String,
    /// What it is for.
    pub description: String,
    /// Its monthly price.
    pub price: Money,
    /// What it allows.
    pub limits: Limits,
    /// Whether it is the workspace's plan.
    pub current: bool,
}

/// Lead credits: imports left this month.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Credits {
    /// Leads that can still be imported this month (one credit per lead).
    pub leads: i64,
    /// When the monthly credits restart (ms since the epoch, UTC month start).
    pub resets_at: i64,
}

/// A payment made.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Charge {
    /// The invoice id.
    pub id: String,
    /// The amount paid.
    pub amount: Money,
    /// What it was for.
    pub description: String,
    /// When (ms since the epoch).
    pub at: i64,
}

/// Plans and billing.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(tag = "kind", rename = "plans", rename_all = "camelCase")]
pub struct PlansView {
    /// The plan in force.
    pub current: CurrentPlan,
    /// Every plan, cheapest first.
    pub plans: Vec<PlanView>,
    /// Usage now.
    pub usage: Usage,
    /// Lead credits left this month.
    pub credits: Credits,
    /// Recent payments, newest first.
    pub charges: Vec<Charge>,
    /// Whether payments are simulated (sandbox: no real money moves).
    pub simulated: bool,
}

fn limits_line(plan: &Plan) -> String {
    billing::describe_limits(plan)
}

impl Tool for GetPlansAndBilling {
    type Input = NoArguments;
    type Output = PlansView;
    const NAME: &'static str = "get_plans_and_billing";
    const TITLE: &'static str = "Get plans and billing";
    const DESCRIPTION: &'static str = "Shows the VibeSell plans with their monthly prices and limits (leads \
        imported per month, mailboxes, active campaigns), the workspace's current plan and subscription \
        status, this month's usage, the lead credits left, and recent payments. Use it when a plan limit \
        stops a step or the user asks about pricing; then upgrade_plan (already paying) or start_checkout \
        (not yet) moves them up.";
    const ACCESS: Access = Access::Read;
    const HINTS: Hints = Hints { idempotent: true, open_world: false };

    async fn call(&self, cx: &ToolCx<'_>, _: NoArguments) -> Result<Reply<PlansView>, Refusal> {
        let plans = &cx.config.plans;
        let current = billing::current(cx.db, cx.config)?;
        let plan = current.plan;
        let state = current.state.as_ref();
        let usage = limits::usage(cx.db, cx.now_ms)?;
        let simulated = provider::provider(&cx.services()).is_simulated();
        let view = PlansView {
            current: CurrentPlan {
                id: plan.id.clone(),
                name: plan.name.clone(),
                status: state.map_or_else(|| "none".to_owned(), |s| s.status.clone()),
                price: plans.price(plan),
                paying: current.paying,
                renews_at: state.filter(|_| current.paying).and_then(|s| s.period_end),
                cancel_at_period_end: state.is_some_and(|s| s.cancel_at_period_end != 0),
                has_billing_account: state.is_some_and(|s| s.customer.is_some()),
            },
            plans: plans
                .plans
                .iter()
                .map(|p| PlanView {
                    id: p.id.clone(),
                    name: p.name.clone(),
                    description: p.description.clone(),
                    price: plans.price(p),
                    limits: p.limits,
                    current: p.id == plan.id,
                })
                .collect(),
            credits: Credits {
                leads: (plan.limits.leads_per_month - usage.leads_imported).max(0),
                resets_at: limits::next_period_start(cx.now_ms),
            },
            usage,
            charges: billing::invoices(cx.db, CHARGES_SHOWN)?
                .into_iter()
                .map(|i| Charge {
                    amount: Money::new(i.amount, &i.currency),
                    id: i.id,
                    description: i.description,
                    at: i.created_at,
                })
                .collect(),
            simulated,
        };
        let c = &view.current;
        // The provider's status, when there is a subscription to have one.
        let mut text = match c.status.as_str() {
            "none" => format!("**Plan: {}** ({}/month)", c.name, c.price.display()),
            status => format!("**Plan: {}** ({}/month, {status})", c.name, c.price.display()),
        };
        if let Some(at) = c.renews_at {
            let verb = if c.cancel_at_period_end { "ends" } else { "renews" };
            text.push_str(&format!(", {verb} {}", crate::dates::utc_minute(at)));
        }
        let u = &view.usage;
        let count = |n: i64| group_thousands(n.max(0).unsigned_abs());
        text.push_str(&format!(
            "\nThis month ({}): {} of {} leads imported ({} credits left), {} of {} mailboxes, {} of {} active campaigns.\n\nPlans:\n",
            u.period,
            count(u.leads_imported),
            count(plan.limits.leads_per_month),
            count(view.credits.leads),
            count(u.mailboxes),
            count(plan.limits.mailboxes),
            count(u.active_campaigns),
            count(plan.limits.active_campaigns),
        ));
        for p in &plans.plans {
            text.push_str(&format!(
                "- `{}` {}: {}/month — {}{}\n",
                p.id,
                p.name,
                plans.price(p).display(),
                limits_line(p),
                if p.id == plan.id { " (current)" } else { "" }
            ));
        }
        text.push_str(if c.paying {
            "\nTo move up: upgrade_plan (the user approves the charge). To lower or cancel: open_billing_portal."
        } else if current.payment_pending() {
            PAYMENT_PENDING
        } else {
            "\nTo subscribe: start_checkout with a plan id gives a payment page for the user to open."
        });
        if simulated {
            text.push_str(" Payments here are simulated (sandbox).");
        }
        Ok(Reply::new(text, view))
    }
}

// ---- upgrade_plan ------------------------------------------------------------------------

/// `upgrade_plan`: an approval to move a paying workspace to a higher plan.
pub struct UpgradePlanTool;

/// The plan to move to.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PlanInput {
    /// The plan's id, as get_plans_and_billing lists it (for example `growth`).
    #[schemars(length(min = 1, max = 40))]
    pub plan: String,
}

impl Tool for UpgradePlanTool {
    type Input = PlanInput;
    type Output = ApprovalResult;
    const NAME: &'static str = "upgrade_plan";
    const TITLE: &'static str = "Upgrade the plan";
    const DESCRIPTION: &'static str = "Asks the user to approve moving their paid subscription to a higher \
        plan. Nothing changes until the user approves it in the card or on the VibeSell page: it returns \
        an approval with the prorated charge and the new limits. Only for a workspace that already pays; \
        otherwise use start_checkout. Asking again with the same plan returns the same approval.";
    const ACCESS: Access = Access::Act;
    const HINTS: Hints = Hints { idempotent: true, open_world: false };

    async fn call(&self, cx: &ToolCx<'_>, input: PlanInput) -> Result<Reply<ApprovalResult>, Refusal> {
        let current = billing::current(cx.db, cx.config)?;
        let args = UpgradeArgs {
            plan: input.plan.trim().to_ascii_lowercase(),
            from: current.plan.id.clone(),
            // The period the charge is prorated over, when there is one still running.
            period_end: current.state.as_ref().and_then(|s| s.period_end).filter(|end| *end > cx.now_ms),
        };
        approvals::request(cx, &UpgradePlan, args).await
    }
}

// ---- start_checkout ----------------------------------------------------------------------

/// While a checkout's first payment is being confirmed (audit finding: a second checkout then
/// subscribed the user twice, and the first subscription's later events were dropped).
const PAYMENT_PENDING: &str = "\nThe payment made on the last payment page is still being confirmed (a bank debit \
    takes a few days), so no new payment page is made: paying again would subscribe twice. The plan changes once it \
    is confirmed (get_plans_and_billing); if it fails, a new page can be made then.";

/// `start_checkout`: a payment page for a plan.
pub struct StartCheckout;

/// A payment page.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(tag = "kind", rename = "checkout", rename_all = "camelCase")]
pub struct CheckoutView {
    /// The plan's id.
    pub plan: String,
    /// The plan's name.
    pub plan_name: String,
    /// Its monthly price.
    pub price: Money,
    /// The payment page, for the user to open.
    pub url: String,
    /// The payment provider's session id.
    pub session_id: String,
    /// When the page stops working (ms since the epoch).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expires_at: Option<i64>,
    /// Whether payments are simulated (sandbox).
    pub simulated: bool,
}

impl Tool for StartCheckout {
    type Input = PlanInput;
    type Output = CheckoutView;
    const NAME: &'static str = "start_checkout";
    const TITLE: &'static str = "Start a checkout";
    const DESCRIPTION: &'static str = "Creates the secure payment page (Stripe Checkout) where the user \
        subscribes to a paid plan, for a workspace that does not pay yet. Returns the page's link: give it \
        to the user to open themselves; the plan changes once the payment is confirmed (check with \
        get_plans_and_billing). For a workspace that already pays, use upgrade_plan instead.";
    const ACCESS: Access = Access::Act;
    const HINTS: Hints = Hints { idempotent: false, open_world: true };

    async fn call(&self, cx: &ToolCx<'_>, input: PlanInput) -> Result<Reply<CheckoutView>, Refusal> {
        let plans = &cx.config.plans;
        let id = input.plan.trim().to_ascii_lowercase();
        let Some(plan) = plans.find(&id) else {
            return Err(Refusal::InvalidArguments(format!("`plan` must be one of {}", plans.ids())));
        };
        if plan.price_monthly == 0 {
            return Err(Refusal::guidance(format!(
                "The {} plan is free: there is nothing to pay.",
                plan.name
            )));
        }
        let current = billing::current(cx.db, cx.config)?;
        if current.paying {
            return Err(Refusal::guidance(format!(
                "The workspace already pays for the {} plan. To move up, call upgrade_plan (the user approves \
                 the prorated charge); to lower or cancel, open_billing_portal.",
                current.plan.name
            )));
        }
        if current.payment_pending() {
            return Err(Refusal::guidance(PAYMENT_PENDING.trim_start()));
        }
        // One page made at a time: the workspace's object takes other calls while the provider
        // makes one, and two made side by side, for two plans, would both be payable (audit
        // finding; `billing::LastCheckout` keeps only the last).
        let Some(_making) =
            crate::workspace::approvals::Claim::take(&format!("checkout:{}", cx.principal.workspace))
        else {
            return Err(Refusal::guidance(
                "A payment page is being made for this workspace right now: call start_checkout again in a moment.",
            ));
        };
        let customer = current.state.as_ref().and_then(|s| s.customer.clone());
        let svc = cx.services();
        let billing = provider::provider(&svc);
        // One payable page at a time, or the user could pay on two (audit finding): the last one
        // again while it has a while to go, otherwise closed before a new one is made.
        let last = billing::last_checkout(cx.db)?;
        let live = |l: &&billing::LastCheckout| l.session.expires_at.is_none_or(|at| at > cx.now_ms);
        let reused = last.as_ref().filter(|l| {
            l.plan == plan.id && l.session.expires_at.is_some_and(|at| at > cx.now_ms + REUSE_MIN_MS)
        });
        let session = if let Some(l) = reused {
            l.session.clone()
        } else {
            if let Some(l) = last.as_ref().filter(live) {
                let closed = billing
                    .close_checkout(&l.session.id)
                    .await
                    .map_err(|e| provider_refusal(e, "payment page"))?;
                if closed == Closed::Paid {
                    return Err(Refusal::guidance(format!(
                        "The payment page made earlier (for the {} plan) has just been paid, so no new one was made. \
                         The plan changes once the payment is confirmed: check with get_plans_and_billing.",
                        plans.find(&l.plan).map_or(l.plan.as_str(), |p| p.name.as_str())
                    )));
                }
                // Closed: remembered as expired now, so that it is never handed out again even if
                // the new page cannot be made (review finding), and the next page's key still
                // follows it.
                let mut ended = l.clone();
                ended.session.expires_at = Some(cx.now_ms);
                billing::remember_checkout(cx.db, &ended)?;
            }
            // A paid page is forgotten (`billing::apply_event`), and the next key must differ
            // from the one made after it: the subscription it made does.
            let after = last.as_ref().map(|l| l.session.id.as_str());
            let after = after.or(current.state.as_ref().and_then(|s| s.subscription.as_deref()));
            self.create(cx, &*billing, plan, customer.as_deref(), after.unwrap_or("none")).await?
        };
        let price = plans.price(plan);
        let simulated = billing.is_simulated();
        let mut text = format!(
            "{} for the **{}** plan ({}/month: {}): {}\nGive the user this link to open themselves; \
             only they pay. The plan changes once the payment is confirmed: check with get_plans_and_billing.",
            if reused.is_some() { "The same payment page as before" } else { "Payment page" },
            plan.name,
            price.display(),
            limits_line(plan),
            session.url
        );
        if let Some(at) = session.expires_at {
            text.push_str(&format!(" The page expires at {}.", crate::dates::utc_minute(at)));
        }
        if simulated {
            text.push_str(
                " Sandbox: the page simulates Stripe; test card 4242 4242 4242 4242 pays, no real money.",
            );
        }
        Ok(Reply::new(
            text,
            CheckoutView {
                plan: plan.id.clone(),
                plan_name: plan.name.clone(),
                price,
                url: session.url,
                session_id: session.id,
                expires_at: session.expires_at,
                simulated,
            },
        ))
    }
}

/// A payment page is handed out again only while it has at least this long to go.
const REUSE_MIN_MS: i64 = 30 * 60_000;

impl StartCheckout {
    /// Makes a new payment page and remembers it.
    async fn create(
        &self,
        cx: &ToolCx<'_>,
        billing: &dyn provider::BillingProvider,
        plan: &Plan,
        customer: Option<&str>,
        after: &str,
    ) -> Result<CheckoutSession, Refusal> {
        let base = cx.config.public_url();
        let session = billing
            .create_checkout(CheckoutRequest {
                workspace: &cx.principal.workspace,
                plan,
                customer,
                success_url: format!(
                    "{base}/billing/return?checkout=success&session_id={{CHECKOUT_SESSION_ID}}"
                ),
                cancel_url: format!("{base}/billing/return?checkout=cancel"),
                // Named after the page (or subscription) it follows: two calls at once make one
                // page, not two, while a new page after a paid one does not use that one's key
                // again, which Stripe refuses for 24 hours once the parameters differ.
                idempotency_key: format!(
                    "vibesell-checkout-{}-{}-after-{after}",
                    cx.principal.workspace, plan.id
                ),
            })
            .await
            .map_err(|e| provider_refusal(e, "payment page"))?;
        billing::remember_checkout(
            cx.db,
            &billing::LastCheckout { plan: plan.id.clone(), session: session.clone() },
        )?;
        Ok(session)
    }
}

// ---- open_billing_portal -----------------------------------------------------------------

/// `open_billing_portal`: the billing portal.
pub struct OpenBillingPortal;

/// A billing portal link.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(tag = "kind", rename = "portal", rename_all = "camelCase")]
pub struct PortalView {
    /// The billing portal, for the user to open.
    pub url: String,
    /// When the link stops working (ms since the epoch), when known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expires_at: Option<i64>,
    /// Whether payments are simulated (sandbox).
    pub simulated: bool,
}

impl Tool for OpenBillingPortal {
    type Input = NoArguments;
    type Output = PortalView;
    const NAME: &'static str = "open_billing_portal";
    const TITLE: &'static str = "Open the billing portal";
    const DESCRIPTION: &'static str = "Creates a link to the billing portal (Stripe), where the user updates \
        their card, downloads invoices, lowers or cancels their plan. Give the link to the user to open \
        themselves. Only for a workspace that has paid before; otherwise start_checkout.";
    const ACCESS: Access = Access::Act;
    const HINTS: Hints = Hints { idempotent: false, open_world: true };

    async fn call(&self, cx: &ToolCx<'_>, _: NoArguments) -> Result<Reply<PortalView>, Refusal> {
        let current = billing::current(cx.db, cx.config)?;
        let Some(customer) = current.state.as_ref().and_then(|s| s.customer.clone()) else {
            return Err(Refusal::guidance(
                "The workspace has no billing account yet because it never paid. To subscribe, call \
                 start_checkout with a plan (get_plans_and_billing lists them).",
            ));
        };
        let svc = cx.services();
        let billing = provider::provider(&svc);
        let session = billing
            .create_portal(PortalRequest {
                workspace: &cx.principal.workspace,
                customer: &customer,
                return_url: format!("{}/billing/return?portal=done", cx.config.public_url()),
            })
            .await
            .map_err(|e| provider_refusal(e, "billing portal link"))?;
        let simulated = billing.is_simulated();
        let mut text = format!(
            "Billing portal: {}\nGive the user this link to open themselves: there they update their card, \
             see invoices, and lower or cancel their plan. Changes show in get_plans_and_billing once made.",
            session.url
        );
        if simulated {
            text.push_str(" Sandbox: the portal is simulated.");
        }
        Ok(Reply::new(text, PortalView { url: session.url, expires_at: session.expires_at, simulated }))
    }
}

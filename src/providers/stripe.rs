//! The live billing adapter: Stripe's API over the [`Outbound`] port, and its signed webhooks
//! (DOMAIN §5).
//!
//! Requests are form-encoded as Stripe documents, authenticated with the secret key, pinned to
//! one API version (from `2025-03-31.basil` the billing period lives on subscription items), and
//! carry an `Idempotency-Key` so that a retry never creates or charges twice. Retries happen only
//! when the outcome is unknown (network, 409 conflict, 429, 5xx, or `Stripe-Should-Retry: true`)
//! and Stripe does not say `Stripe-Should-Retry: false`. Webhooks are verified exactly as
//! stripe-node does: HMAC-SHA256 of `t.payload` with the endpoint secret, any `v1` signature,
//! compared in constant time, within 300 seconds.

use serde_json::Value;

use super::ProviderError;
use super::billing::{
    BillingEvent, BillingProvider, ChangePlanRequest, CheckoutRequest, CheckoutSession, Closed, EventKind,
    Invoice, PlanChanged, PortalRequest, PortalSession, Subscription,
};
use crate::config::{Secret, StripeConfig};
use crate::form;
use crate::outbound::{Outbound, OutboundRequest};
use crate::plans::Catalogue;
use crate::tools::registry::LocalBoxFuture;

/// The API version every request is pinned to.
pub const API_VERSION: &str = "2025-03-31.basil";
/// How old (or how far in the future) a webhook's timestamp may be (stripe-node's default).
pub const WEBHOOK_TOLERANCE_S: i64 = 300;
/// Attempts per request when the outcome is unknown, and the waits between them.
const BACKOFF_MS: [u32; 2] = [400, 1200];
const TIMEOUT_MS: u32 = 10_000;

/// Stripe through the outbound port.
pub struct Stripe<'a> {
    config: &'a StripeConfig,
    outbound: &'a dyn Outbound,
}

impl<'a> Stripe<'a> {
    /// The adapter for an account.
    pub fn new(config: &'a StripeConfig, outbound: &'a dyn Outbound) -> Self {
        Stripe { config, outbound }
    }

    /// Sends one API request, retrying with the same idempotency key while the outcome is
    /// unknown. Returns the decoded JSON object.
    async fn call(
        &self,
        method: &str,
        path: &str,
        fields: &[(&str, &str)],
        idempotency_key: Option<&str>,
    ) -> Result<Value, ProviderError> {
        let Some(Secret(key)) = &self.config.secret_key else {
            return Err(ProviderError::Misconfigured("STRIPE_SECRET_KEY is not set".into()));
        };
        let url = format!("{}{path}", self.config.api_base);
        let mut last = ProviderError::Unavailable("no attempt".into());
        for attempt in 0..=BACKOFF_MS.len() {
            if attempt > 0 {
                self.outbound.sleep(BACKOFF_MS[attempt - 1]).await;
            }
            let mut req = if method == "GET" {
                OutboundRequest::get(url.clone())
            } else {
                OutboundRequest::post(url.clone(), "application/x-www-form-urlencoded", form::encode(fields))
            };
            req = req.header("authorization", format!("Bearer {key}")).header("stripe-version", API_VERSION);
            if let Some(k) = idempotency_key {
                req = req.header("idempotency-key", k);
            }
            req.timeout_ms = TIMEOUT_MS;
            let response = match self.outbound.fetch(req).await {
                Ok(r) => r,
                Err(e) => {
                    last = ProviderError::Unavailable(format!("{method} {path}: {e}"));
                    continue;
                }
            };
            let body: Value = serde_json::from_slice(&response.body).unwrap_or(Value::Null);
            // Shown to the user in an approval's result: Stripe's words, bounded and attributed.
            let message = || {
                body["error"]["message"]
                    .as_str()
                    .and_then(|m| crate::outbound::said("Stripe", m))
                    .unwrap_or_else(|| format!("HTTP {}", response.status))
            };
            let should_retry = response.header("stripe-should-retry");
            match response.status {
                200..=299 if body.is_object() => return Ok(body),
                200..=299 => {
                    return Err(ProviderError::Unavailable(format!("{method} {path}: unreadable body")));
                }
                // A 409 is a conflict, not a refusal: another request with this idempotency key is
                // still in progress (e.g. the one that timed out), or the object is locked. Stripe
                // says to retry it with the same key, as stripe-node does; when the retries run out
                // the outcome stays unknown, so the approval watchdog tries again later.
                status if should_retry == Some("true") || matches!(status, 409 | 429 | 500..=599) => {
                    last = ProviderError::Unavailable(format!("{method} {path}: {}", message()));
                    if should_retry == Some("false") {
                        return Err(last);
                    }
                }
                402 => return Err(ProviderError::Declined(message())),
                401 | 403 => {
                    return Err(ProviderError::Misconfigured(format!("{method} {path}: {}", message())));
                }
                // Stripe's messages explain the refusal in plain words ("No such subscription").
                _ => return Err(ProviderError::Rejected(message())),
            }
        }
        Err(last)
    }

    async fn checkout(&self, req: CheckoutRequest<'_>) -> Result<CheckoutSession, ProviderError> {
        let Some(price) = req.plan.stripe_price.as_deref() else {
            return Err(ProviderError::Misconfigured(format!("plan {} has no stripePrice", req.plan.id)));
        };
        let mut fields = vec![
            ("mode", "subscription"),
            ("line_items[0][price]", price),
            ("line_items[0][quantity]", "1"),
            ("success_url", req.success_url.as_str()),
            ("cancel_url", req.cancel_url.as_str()),
            // Both carry the workspace back: the session's to `checkout.session.completed`, the
            // subscription's to every `customer.subscription.*` and invoice event.
            ("client_reference_id", req.workspace),
            ("metadata[workspace]", req.workspace),
            ("metadata[plan]", req.plan.id.as_str()),
            ("subscription_data[metadata][workspace]", req.workspace),
            ("subscription_data[metadata][plan]", req.plan.id.as_str()),
        ];
        if let Some(customer) = req.customer {
            fields.push(("customer", customer));
        }
        let session = self.call("POST", "/v1/checkout/sessions", &fields, Some(&req.idempotency_key)).await?;
        match (session["id"].as_str(), session["url"].as_str()) {
            (Some(id), Some(url)) => Ok(CheckoutSession {
                id: id.to_owned(),
                url: url.to_owned(),
                expires_at: session["expires_at"].as_i64().map(|s| s * 1000),
            }),
            _ => Err(ProviderError::Unavailable("checkout session without id or url".into())),
        }
    }

    async fn close(&self, id: &str) -> Result<Closed, ProviderError> {
        let path = format!("/v1/checkout/sessions/{id}");
        match self.call("POST", &format!("{path}/expire"), &[], None).await {
            Ok(_) => Ok(Closed::Unpaid),
            // Only an open session can be expired: a refusal means it was paid or had expired.
            Err(ProviderError::Rejected(_)) => match self.call("GET", &path, &[], None).await {
                Ok(session) => match session["status"].as_str() {
                    Some("complete") => Ok(Closed::Paid),
                    Some("expired") => Ok(Closed::Unpaid),
                    other => {
                        Err(ProviderError::Unavailable(format!("checkout session {other:?} after expire")))
                    }
                },
                // Unknown to this account (the key was changed since): nobody pays it through us,
                // and a refusal here would keep the workspace from ever getting a new page.
                Err(ProviderError::Rejected(_)) => Ok(Closed::Unpaid),
                Err(e) => Err(e),
            },
            Err(e) => Err(e),
        }
    }

    async fn portal(&self, req: PortalRequest<'_>) -> Result<PortalSession, ProviderError> {
        let fields = [("customer", req.customer), ("return_url", req.return_url.as_str())];
        let session = self.call("POST", "/v1/billing_portal/sessions", &fields, None).await?;
        match session["url"].as_str() {
            Some(url) => Ok(PortalSession { url: url.to_owned(), expires_at: None }),
            None => Err(ProviderError::Unavailable("portal session without url".into())),
        }
    }

    async fn change(&self, req: ChangePlanRequest<'_>) -> Result<PlanChanged, ProviderError> {
        let Some(price) = req.plan.stripe_price.as_deref() else {
            return Err(ProviderError::Misconfigured(format!("plan {} has no stripePrice", req.plan.id)));
        };
        let path = format!("/v1/subscriptions/{}", form::encode_component(req.subscription));
        // A later run reads the subscription first: the change may have gone through on a run
        // whose answer was lost. It is then reported, not made again; its charge is recorded from
        // Stripe's `invoice.paid`.
        let item = match req.item.filter(|_| !req.retry) {
            Some(item) => item.to_owned(),
            None => {
                let current = self.call("GET", &path, &[], None).await?;
                let item = &current["items"]["data"][0];
                if req.retry && item["price"]["id"] == price {
                    let mut subscription = parse_subscription(&current, None)
                        .ok_or_else(|| ProviderError::Unavailable("unreadable subscription".into()))?;
                    subscription.plan = Some(req.plan.id.clone());
                    return Ok(PlanChanged { subscription, invoice: None });
                }
                item["id"]
                    .as_str()
                    .ok_or_else(|| ProviderError::Rejected("subscription without items".into()))?
                    .to_owned()
            }
        };
        let fields = [
            ("items[0][id]", item.as_str()),
            ("items[0][price]", price),
            // Charge the difference now, and refuse the whole change if that payment fails, so a
            // declined card leaves the subscription as it was.
            ("proration_behavior", "always_invoice"),
            ("payment_behavior", "error_if_incomplete"),
            ("metadata[plan]", req.plan.id.as_str()),
            ("expand[0]", "latest_invoice"),
        ];
        let sub = self.call("POST", &path, &fields, Some(&req.idempotency_key)).await?;
        let mut subscription = parse_subscription(&sub, None)
            .ok_or_else(|| ProviderError::Unavailable("unreadable subscription".into()))?;
        subscription.plan = Some(req.plan.id.clone());
        let invoice = &sub["latest_invoice"];
        let invoice = match (invoice["id"].as_str(), invoice["amount_paid"].as_i64()) {
            (Some(id), Some(amount)) if amount > 0 && invoice["status"] == "paid" => Some(Invoice {
                id: id.to_owned(),
                amount,
                currency: invoice["currency"].as_str().unwrap_or("usd").to_owned(),
                description: format!("Upgrade to {} (prorated)", req.plan.name),
                created_at: invoice["created"].as_i64().unwrap_or(0) * 1000,
            }),
            _ => None,
        };
        Ok(PlanChanged { subscription, invoice })
    }
}

impl BillingProvider for Stripe<'_> {
    fn create_checkout<'a>(
        &'a self,
        req: CheckoutRequest<'a>,
    ) -> LocalBoxFuture<'a, Result<CheckoutSession, ProviderError>> {
        Box::pin(self.checkout(req))
    }
    fn close_checkout<'a>(&'a self, session: &'a str) -> LocalBoxFuture<'a, Result<Closed, ProviderError>> {
        Box::pin(self.close(session))
    }
    fn create_portal<'a>(
        &'a self,
        req: PortalRequest<'a>,
    ) -> LocalBoxFuture<'a, Result<PortalSession, ProviderError>> {
        Box::pin(self.portal(req))
    }
    fn change_plan<'a>(
        &'a self,
        req: ChangePlanRequest<'a>,
    ) -> LocalBoxFuture<'a, Result<PlanChanged, ProviderError>> {
        Box::pin(self.change(req))
    }
    fn is_simulated(&self) -> bool {
        false
    }
}

// ---- webhooks ----------------------------------------------------------------------------

/// Why a webhook's signature was refused (for the log).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SignatureError {
    /// The header is missing or has no `t` or no `v1`.
    #[error("malformed Stripe-Signature header")]
    Malformed,
    /// No endpoint secret is configured.
    #[error("no webhook secret configured")]
    NoSecret,
    /// The timestamp is more than the tolerance away from now.
    #[error("timestamp outside the tolerance")]
    Stale,
    /// No `v1` signature matches.
    #[error("no matching signature")]
    Mismatch,
}

/// The `v1` signature of `payload` at `timestamp` with `secret`, as hex.
pub fn sign(secret: &str, timestamp: i64, payload: &[u8]) -> String {
    let mut message = format!("{timestamp}.").into_bytes();
    message.extend_from_slice(payload);
    crate::ids::hex(&crate::ids::hmac_sha256(secret.as_bytes(), &message))
}

/// Verifies a `Stripe-Signature` header (`t=…,v1=…[,v1=…][,v0=…]`) over the raw body: any `v1`
/// made with any configured secret (several while rotating), within the tolerance of `now_s`.
pub fn verify_signature(
    header: &str,
    payload: &[u8],
    secrets: &[Secret],
    now_s: i64,
) -> Result<(), SignatureError> {
    if secrets.is_empty() {
        return Err(SignatureError::NoSecret);
    }
    let mut timestamp = None;
    let mut signatures = Vec::new();
    for part in header.split(',') {
        match part.trim().split_once('=') {
            Some(("t", t)) => timestamp = t.parse::<i64>().ok(),
            Some(("v1", sig)) => signatures.push(sig),
            _ => {}
        }
    }
    let Some(timestamp) = timestamp else { return Err(SignatureError::Malformed) };
    if signatures.is_empty() {
        return Err(SignatureError::Malformed);
    }
    let matches = secrets.iter().any(|Secret(secret)| {
        let expected = sign(secret, timestamp, payload);
        signatures.iter().any(|sig| crate::ids::secret_eq(expected.as_bytes(), sig.as_bytes()))
    });
    if !matches {
        return Err(SignatureError::Mismatch);
    }
    if (now_s - timestamp).abs() > WEBHOOK_TOLERANCE_S {
        return Err(SignatureError::Stale);
    }
    Ok(())
}

/// The id of an object that may be given as an id or expanded.
fn id_of(v: &Value) -> Option<String> {
    v.as_str().or_else(|| v["id"].as_str()).map(str::to_owned)
}

fn metadata_workspace(obj: &Value) -> Option<String> {
    obj["metadata"]["workspace"].as_str().map(str::to_owned)
}

/// A subscription object (`customer.subscription.*`, or an update's response).
fn parse_subscription(obj: &Value, plans: Option<&Catalogue>) -> Option<Subscription> {
    let item = &obj["items"]["data"][0];
    let period = |field: &str| item[field].as_i64().or_else(|| obj[field].as_i64()).map(|s| s * 1000);
    let plan = plans.and_then(|plans| {
        item["price"]["id"]
            .as_str()
            .and_then(|price| plans.by_stripe_price(price))
            .map(|p| p.id.clone())
            .or_else(|| {
                obj["metadata"]["plan"].as_str().filter(|id| plans.find(id).is_some()).map(str::to_owned)
            })
    });
    Some(Subscription {
        id: obj["id"].as_str()?.to_owned(),
        customer: id_of(&obj["customer"]),
        status: obj["status"].as_str()?.to_owned(),
        plan,
        item: item["id"].as_str().map(str::to_owned),
        period_start: period("current_period_start"),
        period_end: period("current_period_end"),
        cancel_at_period_end: obj["cancel_at_period_end"].as_bool().unwrap_or(false),
    })
}

/// Reads a verified webhook body. `Ok(None)` for events this connector does not act on (other
/// types, other modes, no workspace); `Err` for a body that is not a Stripe event.
pub fn parse_event(body: &[u8], plans: &Catalogue) -> Result<Option<BillingEvent>, String> {
    let v: Value = serde_json::from_slice(body).map_err(|e| format!("not JSON: {e}"))?;
    let id = v["id"].as_str().filter(|id| id.starts_with("evt_")).ok_or("no event id")?.to_owned();
    let kind = v["type"].as_str().ok_or("no event type")?;
    let created_ms = v["created"].as_i64().ok_or("no created time")? * 1000;
    let obj = &v["data"]["object"];
    let (workspace, kind) = match kind {
        "checkout.session.completed" => {
            if obj["mode"] != "subscription" {
                return Ok(None);
            }
            let workspace =
                obj["client_reference_id"].as_str().map(str::to_owned).or_else(|| metadata_workspace(obj));
            let paid = matches!(obj["payment_status"].as_str(), Some("paid" | "no_payment_required"));
            let plan =
                obj["metadata"]["plan"].as_str().filter(|p| plans.find(p).is_some()).map(str::to_owned);
            let kind = EventKind::CheckoutCompleted {
                customer: id_of(&obj["customer"]),
                subscription: id_of(&obj["subscription"]),
                plan,
                paid,
            };
            (workspace, kind)
        }
        "customer.subscription.created"
        | "customer.subscription.updated"
        | "customer.subscription.deleted" => {
            let subscription = parse_subscription(obj, Some(plans)).ok_or("unreadable subscription")?;
            let deleted = kind == "customer.subscription.deleted";
            (metadata_workspace(obj), EventKind::SubscriptionChanged { subscription, deleted })
        }
        "invoice.paid" => {
            // From 2025-03-31.basil the subscription's metadata sits under `parent`.
            let workspace = obj["parent"]["subscription_details"]["metadata"]["workspace"]
                .as_str()
                .or_else(|| obj["subscription_details"]["metadata"]["workspace"].as_str())
                .map(str::to_owned)
                .or_else(|| metadata_workspace(obj));
            let invoice = Invoice {
                id: obj["id"].as_str().ok_or("invoice without id")?.to_owned(),
                amount: obj["amount_paid"].as_i64().unwrap_or(0),
                currency: obj["currency"].as_str().unwrap_or("usd").to_owned(),
                description: obj["lines"]["data"][0]["description"]
                    .as_str()
                    .or_else(|| obj["description"].as_str())
                    .unwrap_or("Subscription")
                    .to_owned(),
                created_at: obj["created"].as_i64().map_or(created_ms, |s| s * 1000),
            };
            (workspace, EventKind::InvoicePaid { invoice })
        }
        _ => return Ok(None),
    };
    Ok(workspace.map(|workspace| BillingEvent { id, created_ms, workspace, kind }))
}

#[cfg(test)]
#[path = "stripe_tests.rs"]
mod tests;

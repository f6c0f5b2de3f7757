//! The live sending platform: Instantly API v2 (DOMAIN §1), through the outbound HTTP port.
//!
//! - **Auth and quirks** (DOMAIN §1.1, §1.9): `Authorization: Bearer <key>`, an explicit
//!   User-Agent (Cloudflare in front of the API rejects some defaults), no body and no
//!   Content-Type on `DELETE`, closed request bodies (only documented fields are sent), the
//!   singular `campaign` filter when listing leads (and the results checked anyway).
//! - **Retries**: 429 is always retried after `Retry-After` (or 1 s, 2 s, 4 s); 5xx and network
//!   failures are retried only for requests that are safe to repeat. Placing an order is not: an
//!   order whose outcome is unknown is never posted again in the same attempt; the approval's
//!   next attempt, at least a minute later (`approvals::FinishExecution`), first lists the orders
//!   made since the approval to see whether it went through (DOMAIN §1.8 documents no idempotency
//!   for orders; the approval's key is sent as a header anyway).
//! - **Rate limits**: the workspace-wide 100 requests a second and 6,000 a minute are far above
//!   what one VibeSell workspace asks; `GET /emails` allows only 20 a minute, so those calls are
//!   paced with a sliding window kept in the workspace's database (`provider_calls`), across
//!   requests and alarms.
//! - Orders are simulated first (`simulation: true`, priced, nothing charged); campaigns are
//!   created as drafts; leads go in batches of at most 1,000.

use std::cell::Cell;

use serde::Deserialize;
use serde_json::{Value, json};

use super::calendar;
use super::names;
use super::platform::{
    Account, AccountStatus, AddedLeads, ApprovedPrices, CampaignReport, CampaignSpec, CampaignStatus, Day,
    Dns, DomainCheck, LeadSpec, OrderKind, OrderSpec, Outcome, OutcomePage, PResult, Placed, PlatformError,
    Quote, QuoteItem, Received, ReceivedPage, SendingPlatform, ShelfDomain, StepTotals, Totals,
};
use super::{InstantlyConfig, sandbox::LEADS_PER_CALL, sandbox::MAX_MAILBOXES_PER_DOMAIN};
use crate::outbound::{Outbound, OutboundRequest};
use crate::store::{Db, Stmt};

/// Attempts per request (the first and three retries).
const ATTEMPTS: u32 = 4;
/// The longest VibeSell waits in all, within one request, for the `Retry-After` of its 429s.
const MAX_WAIT_MS: u32 = 30_000;
/// `GET /api/v2/emails`: 20 requests a minute (DOMAIN §1.1).
const EMAILS_PER_MINUTE: i64 = 20;
/// Pages of received emails read per call (the rest waits for the next sync).
const EMAIL_PAGES: u32 = 3;
/// Pages of campaign leads read per call when looking for bounces and unsubscribes (the next
/// call goes on from there).
const LEAD_PAGES: u32 = 50;
/// Timeout of one request.
const TIMEOUT_MS: u32 = 20_000;

/// Whether a request may be sent again after a failure whose outcome is unknown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Repeat {
    /// Reads, simulations and writes that set a state (enable, pause, activate).
    Safe,
    /// Writes that would act twice (placing an order, creating a campaign).
    Once,
}

/// Instantly API v2 for one workspace.
pub struct Instantly<'a> {
    base: String,
    key: String,
    db: &'a dyn Db,
    outbound: &'a dyn Outbound,
    /// The clock, moved on by the time spent waiting.
    clock: Cell<i64>,
}

fn user_agent() -> String {
    format!("VibeSell-Connector/{} (+https://vibesell.it)", env!("CARGO_PKG_VERSION"))
}

/// An order's reference: its domains, which is how the order list (and so a retry) finds it.
fn order_reference(order: &OrderSpec) -> String {
    let domains: Vec<String> = order.items.iter().map(|i| i.domain.to_ascii_lowercase()).collect();
    format!("instantly:{}", domains.join(","))
}

fn cents(dollars: f64) -> i64 {
    (dollars * 100.0).round() as i64
}

fn parse_time(s: &str) -> Option<i64> {
    crate::dates::parse_rfc3339_ms(s)
}

fn iso_time(ms: i64) -> String {
    crate::dates::rfc3339_ms(ms)
}

/// The error message of an Instantly error body, if it has one, as Instantly's words: it is shown
/// to the user, and a refusal may echo what was sent (addresses) at any length.
fn message(body: &Value) -> Option<String> {
    ["message", "error", "detail"]
        .iter()
        .find_map(|k| body.get(*k).and_then(Value::as_str))
        .and_then(|m| crate::outbound::said("Instantly", m))
}

/// Plain text as the simple HTML Instantly's editor stores (escaped, line breaks kept);
/// `{{variables}}` pass through.
fn to_html(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .split('\n')
        .map(|l| format!("<div>{}</div>", if l.is_empty() { "<br>" } else { l }))
        .collect()
}

/// Percent-encodes a path segment or query value.
fn enc(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect()
}

impl<'a> Instantly<'a> {
    /// The adapter for `config`.
    pub fn new(config: &InstantlyConfig, db: &'a dyn Db, outbound: &'a dyn Outbound, now_ms: i64) -> Self {
        Instantly {
            base: config.base_url.trim_end_matches('/').to_owned(),
            key: config.api_key.0.clone(),
            db,
            outbound,
            clock: Cell::new(now_ms),
        }
    }

    async fn wait(&self, ms: u32) {
        self.outbound.sleep(ms).await;
        self.clock.set(self.clock.get() + i64::from(ms));
    }

    /// Keeps `GET /emails` under its per-minute limit: waits for room, or refuses when the wait
    /// would be long (the caller continues on the next sync).
    async fn pace_emails(&self) -> PResult<()> {
        let now = self.clock.get();
        let oldest: Option<i64> = self
            .db
            .query(Stmt::new(
                "SELECT MIN(at) FROM (SELECT at FROM provider_calls WHERE bucket = 'instantly_emails' AND at > ? ORDER BY at DESC LIMIT ?)",
                vec![(now - 60_000).into(), EMAILS_PER_MINUTE.into()],
            ))?
            .scalar_i64();
        let used = self
            .db
            .query(Stmt::new(
                "SELECT COUNT(*) FROM provider_calls WHERE bucket = 'instantly_emails' AND at > ?",
                vec![(now - 60_000).into()],
            ))?
            .scalar_i64()
            .unwrap_or(0);
        if used >= EMAILS_PER_MINUTE {
            let wait = oldest.map_or(60_000, |o| o + 60_000 - now).max(0);
            if wait > i64::from(MAX_WAIT_MS) {
                return Err(PlatformError::Unavailable(
                    "emails rate limit: continuing on the next sync".into(),
                ));
            }
            self.wait(wait as u32).await;
        }
        let at = self.clock.get();
        self.db.batch(vec![
            Stmt::new(
                "INSERT INTO provider_calls (bucket, at) VALUES ('instantly_emails', ?)",
                vec![at.into()],
            ),
            Stmt::new("DELETE FROM provider_calls WHERE at < ?", vec![(at - 3_600_000).into()]),
        ])?;
        Ok(())
    }

    /// One API call with the retry policy; returns the JSON body (`null` when empty).
    async fn call(
        &self,
        method: &str,
        path: &str,
        body: Option<&Value>,
        repeat: Repeat,
        headers: &[(&str, &str)],
    ) -> PResult<Value> {
        let url = format!("{}{path}", self.base);
        let mut attempt = 0;
        let mut waited = 0u32;
        loop {
            attempt += 1;
            let mut req = OutboundRequest {
                method: method.to_owned(),
                url: url.clone(),
                headers: vec![
                    ("authorization".into(), format!("Bearer {}", self.key)),
                    ("user-agent".into(), user_agent()),
                    ("accept".into(), "application/json".into()),
                ],
                // DELETE requests carry no body and no Content-Type (DOMAIN §1.9).
                body: None,
                timeout_ms: TIMEOUT_MS,
                follow_redirects: false,
                // Lists are paged at 100 items; nothing legitimate comes near this.
                max_body_bytes: Some(8 * 1024 * 1024),
            };
            if let Some(b) = body.filter(|_| method != "DELETE") {
                req.headers.push(("content-type".into(), "application/json".into()));
                req.body = Some(b.to_string().into_bytes());
            }
            for (k, v) in headers {
                req = req.header(k, *v);
            }
            let backoff = 1000 * (1u32 << (attempt - 1).min(4));
            let response = match self.outbound.fetch(req).await {
                Ok(r) => r,
                Err(e) => {
                    if repeat == Repeat::Safe && attempt < ATTEMPTS {
                        self.wait(backoff).await;
                        continue;
                    }
                    return Err(PlatformError::Unavailable(format!("{method} {path}: {e}")));
                }
            };
            let readable = if response.body.is_empty() {
                Some(Value::Null)
            } else {
                serde_json::from_slice(&response.body).ok()
            };
            let unreadable = readable.is_none();
            let parsed = readable.unwrap_or(Value::Null);
            match response.status {
                // A success whose body is not JSON (a proxy's page, a cut-off body) says nothing
                // of what was done: the outcome is unknown, as for a 5xx (fault test finding: an
                // order placed with such an answer was reported as not placed, nothing bought).
                200..=299 if unreadable => {
                    if repeat == Repeat::Safe && attempt < ATTEMPTS {
                        self.wait(backoff).await;
                        continue;
                    }
                    return Err(PlatformError::Unavailable(format!("{method} {path}: unreadable answer")));
                }
                200..=299 => return Ok(parsed),
                429 => {
                    // Not processed: always safe to send again, after the wait it asks for, as
                    // long as this request's waits stay within `MAX_WAIT_MS` in all. A longer one
                    // is left to the next sync rather than slept through here (audit finding: it
                    // was slept in 30-second pieces, up to 90 s inside one tool call).
                    let wait = response
                        .header("retry-after")
                        .and_then(|v| v.trim().parse::<u32>().ok())
                        .map_or(backoff, |s| s.saturating_mul(1000));
                    if attempt < ATTEMPTS && waited.saturating_add(wait) <= MAX_WAIT_MS {
                        waited += wait;
                        self.wait(wait).await;
                        continue;
                    }
                    return Err(PlatformError::Unavailable(format!(
                        "{method} {path}: rate limited, retry after {} s",
                        wait.div_ceil(1000)
                    )));
                }
                401 | 403 => {
                    return Err(PlatformError::NotConfigured(format!(
                        "{method} {path}: {} {}",
                        response.status,
                        message(&parsed).unwrap_or_default()
                    )));
                }
                402 => {
                    return Err(PlatformError::PaymentRequired(message(&parsed).unwrap_or_else(|| {
                        "The sending platform needs a paid plan or a payment method.".into()
                    })));
                }
                500..=599 => {
                    if repeat == Repeat::Safe && attempt < ATTEMPTS {
                        self.wait(backoff).await;
                        continue;
                    }
                    return Err(PlatformError::Unavailable(format!(
                        "{method} {path}: HTTP {}",
                        response.status
                    )));
                }
                status => {
                    return Err(PlatformError::Refused(message(&parsed).unwrap_or_else(|| {
                        format!("The sending platform refused the request (HTTP {status}).")
                    })));
                }
            }
        }
    }

    async fn get(&self, path: &str) -> PResult<Value> {
        self.call("GET", path, None, Repeat::Safe, &[]).await
    }

    async fn post(&self, path: &str, body: &Value) -> PResult<Value> {
        self.call("POST", path, Some(body), Repeat::Safe, &[]).await
    }

    fn order_body(order: &OrderSpec, simulation: bool) -> Value {
        json!({
            "order_type": match order.kind { OrderKind::OwnNames => "dfy", OrderKind::AlreadyWarmed => "pre_warmed_up" },
            "simulation": simulation,
            "items": order.items.iter().map(|i| json!({
                "domain": i.domain,
                // Google Workspace mailboxes: up to 5 per domain, billed per mailbox (DOMAIN §1.8).
                "email_provider": 1,
                "accounts": i.accounts.iter().map(|a| json!({
                    "email_address_prefix": a.prefix,
                    "first_name": a.first_name,
                    "last_name": a.last_name,
                })).collect::<Vec<_>>(),
            })).collect::<Vec<_>>(),
        })
    }

    fn parse_quote(v: &Value) -> Quote {
        let f = |k: &str| v.get(k).and_then(Value::as_f64).unwrap_or(0.0);
        // What the platform writes reaches the user and the model: lists of domains and words as
        // one line each, bounded, and its sentences as its own words (`outbound::said`).
        let strings = |k: &str| -> Vec<String> {
            v.get(k)
                .and_then(Value::as_array)
                .map(|a| a.iter().filter_map(|x| x.as_str().map(crate::tools::one_line)).collect())
                .unwrap_or_default()
        };
        let mut problems = Vec::new();
        let mut unavailable = strings("unavailable_domains");
        unavailable.extend(strings("blacklist_domains"));
        if !unavailable.is_empty() {
            problems.push(format!("Not available: {}.", unavailable.join(", ")));
        }
        // Every list the platform rejects an order with (DOMAIN §1.8), named for the user.
        for (key, what) in [
            ("invalid_domains", "Invalid domains"),
            ("provider_mismatch_domains", "Not sold with Google mailboxes"),
            ("domains_without_accounts", "No mailboxes asked for"),
            ("blacklist_keywords", "Words the platform does not allow in a domain"),
            ("invalid_forwarding_domains", "Invalid forwarding domains"),
            ("missing_domain_orders", "Mailboxes on domains not in the order"),
        ] {
            let domains = strings(key);
            if !domains.is_empty() {
                problems.push(format!("{what}: {}.", domains.join(", ")));
            }
        }
        // Providers by number (1, 2, 3); every order asks for Google's (`order_body`).
        if v.get("unavailable_email_providers").and_then(Value::as_array).is_some_and(|a| !a.is_empty()) {
            problems.push("Google mailboxes cannot be ordered right now; try again later.".into());
        }
        if let Some(e) = v
            .get("payment_failure_reason")
            .and_then(Value::as_str)
            .and_then(|e| crate::outbound::said("Instantly", e))
        {
            problems.push(format!("The payment failed ({e})."));
        }
        if let Some(accounts) = v.get("invalid_accounts").and_then(Value::as_array).filter(|a| !a.is_empty())
        {
            for a in accounts {
                problems.push(format!(
                    "{}: {}",
                    a.get("email")
                        .and_then(Value::as_str)
                        .map_or_else(|| "a mailbox".into(), crate::tools::one_line),
                    a.get("reason")
                        .and_then(Value::as_str)
                        .and_then(|r| crate::outbound::said("Instantly", r))
                        .unwrap_or_else(|| "invalid".into())
                ));
            }
        }
        if v.get("checkout_required").and_then(Value::as_bool) == Some(true) {
            problems.push("The sending platform needs a payment method before ordering.".into());
        }
        // `order_error` is a code naming the field above that explains it ("unavailable_domains",
        // "payment_failed"): said in words only when none of those explains the refusal.
        if problems.is_empty()
            && let Some(e) = v.get("order_error").and_then(Value::as_str).filter(|e| !e.trim().is_empty())
        {
            problems.extend(crate::outbound::said("Instantly", &e.replace('_', " ")));
        }
        let items: Vec<QuoteItem> = v
            .get("order_items")
            .and_then(Value::as_array)
            .map(|items| {
                items
                    .iter()
                    .map(|i| QuoteItem {
                        domain: i.get("domain").and_then(Value::as_str).unwrap_or_default().to_owned(),
                        domain_per_year: cents(i.get("domain_price").and_then(Value::as_f64).unwrap_or(0.0)),
                        accounts_per_month: cents(
                            i.get("accounts_price").and_then(Value::as_f64).unwrap_or(0.0),
                        ),
                    })
                    .collect()
            })
            .unwrap_or_default();
        let valid = v.get("order_is_valid").and_then(Value::as_bool).unwrap_or(false) && problems.is_empty();
        if !valid && problems.is_empty() {
            // Refused by a field not read above: still a reason the user can act on.
            problems.push(
                "The sending platform did not accept the order and gave no reason; try other domains.".into(),
            );
        }
        Quote {
            valid,
            problems,
            unavailable,
            items,
            domains_per_year: cents(f("total_domains_price_per_year")),
            accounts_per_month: cents(f("total_accounts_price_per_month")),
            due_now: cents(f("total_price")),
            currency: "usd".into(),
        }
    }

    /// The domains of the Instantly account's (not cancelled) orders made at or after
    /// `since_ms`, less a minute for the two clocks. The account is VibeSell's, shared by every
    /// workspace: an older order of the same domains is another workspace's, or another
    /// approval's (audit finding: a first attempt found an order made for another user and
    /// recorded it as its own, buying nothing).
    async fn ordered_domains(&self, since_ms: i64) -> PResult<Vec<String>> {
        let mut out = Vec::new();
        let mut cursor: Option<String> = None;
        for _ in 0..20 {
            let mut path = "/api/v2/dfy-email-account-orders?limit=100".to_owned();
            if let Some(c) = &cursor {
                path.push_str(&format!("&starting_after={}", enc(c)));
            }
            let page = self.get(&path).await?;
            for o in page.get("items").and_then(Value::as_array).into_iter().flatten() {
                let cancelled = o.get("timestamp_cancelled").is_some_and(|t| !t.is_null());
                // An order without a readable time counts: buying twice is the worse mistake.
                let older = o
                    .get("timestamp_created")
                    .and_then(Value::as_str)
                    .and_then(parse_time)
                    .is_some_and(|at| at < since_ms - 60_000);
                if let Some(d) = o.get("domain").and_then(Value::as_str)
                    && !cancelled
                    && !older
                {
                    out.push(d.to_ascii_lowercase());
                }
            }
            cursor = page.get("next_starting_after").and_then(Value::as_str).map(str::to_owned);
            if cursor.is_none() {
                break;
            }
        }
        Ok(out)
    }

    fn campaign_body(spec: &CampaignSpec) -> PResult<Value> {
        let zone = calendar::zone(&spec.timezone).ok_or_else(|| {
            PlatformError::Refused(format!("Time zone {} is not supported.", spec.timezone))
        })?;
        // Instantly's closed time-zone enum: the stand-in zone, with the window shifted so it
        // covers the same instants (calendar::ZONES).
        let hour = |h: u32| format!("{:02}:00", (h as i32 + zone.instantly_shift_h).clamp(0, 24));
        let mut schedule = json!({
            "schedules": [{
                "name": "VibeSell",
                "timing": { "from": hour(spec.from_hour), "to": hour(spec.to_hour) },
                "days": { "0": false, "1": true, "2": true, "3": true, "4": true, "5": true, "6": false },
                "timezone": zone.instantly,
            }],
        });
        if let Some(start) = &spec.start_date {
            schedule["start_date"] = Value::from(start.as_str());
        }
        let steps: Vec<Value> = spec
            .steps
            .iter()
            .map(|s| {
                json!({
                    "type": "email",
                    "delay": s.delay_days,
                    "delay_unit": "days",
                    "variants": [{ "subject": s.subject, "body": to_html(&s.body) }],
                })
            })
            .collect();
        // Only documented fields: the create body is closed (DOMAIN §1.2).
        Ok(json!({
            "name": spec.name,
            "campaign_schedule": schedule,
            "sequences": [{ "steps": steps }],
            "email_list": spec.senders,
            "daily_limit": spec.daily_limit,
            "stop_on_reply": true,
            "stop_on_auto_reply": false,
            "insert_unsubscribe_header": true,
            "open_tracking": true,
            "link_tracking": false,
            "text_only": true,
            "prioritize_new_leads": false,
        }))
    }

    /// Sets each sender's own limit (DOMAIN §1.2: the account limit caps its campaign emails a
    /// day across all campaigns; the campaign's `daily_limit` caps only the campaign) and turns
    /// the slow ramp on for the new ones. Instantly's defaults for done-for-you accounts are not
    /// documented, so they are never relied on.
    async fn limit_senders(&self, spec: &CampaignSpec) -> PResult<()> {
        for email in &spec.senders {
            let body = json!({
                "daily_limit": spec.per_mailbox,
                "enable_slow_ramp": spec.ramp.contains(email),
            });
            self.call("PATCH", &format!("/api/v2/accounts/{}", enc(email)), Some(&body), Repeat::Safe, &[])
                .await?;
        }
        Ok(())
    }

    async fn find_campaign_by_name(&self, name: &str) -> PResult<Option<String>> {
        let page = self.get(&format!("/api/v2/campaigns?limit=100&search={}", enc(name))).await?;
        Ok(page
            .get("items")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .find(|c| c.get("name").and_then(Value::as_str) == Some(name))
            .and_then(|c| c.get("id").and_then(Value::as_str))
            .map(str::to_owned))
    }
}

#[derive(Deserialize)]
struct Analytics {
    #[serde(default)]
    leads_count: i64,
    #[serde(default)]
    contacted_count: i64,
    #[serde(default)]
    emails_sent_count: i64,
    #[serde(default)]
    open_count_unique: i64,
    #[serde(default)]
    reply_count_unique: i64,
    #[serde(default)]
    reply_count_automatic_unique: i64,
    #[serde(default)]
    bounced_count: i64,
    #[serde(default)]
    unsubscribed_count: i64,
}

/// A sequence step as Instantly numbers it, from 0: a number, its text, or the
/// `sequence_step_variant` identifier its emails carry (`"0_1_0"`: the second step).
fn step_index(v: &Value) -> Option<u32> {
    if let Some(x) = v.as_u64() {
        return u32::try_from(x).ok();
    }
    let mut parts = v.as_str()?.split('_');
    match (parts.next(), parts.next(), parts.next(), parts.next()) {
        (Some(step), None, ..) | (Some(_), Some(step), Some(_), None) => step.parse().ok(),
        _ => None,
    }
}

/// The replies of a day or a step of the analytics, without the automatic ones (out of office),
/// which Instantly counts apart (`unique_replies_automatic`), as the campaign's totals do.
fn human_replies(row: &Value) -> u32 {
    let count = |key: &str| row.get(key).and_then(Value::as_i64);
    n(count("unique_replies")
        .or_else(|| count("replies"))
        .unwrap_or(0)
        .saturating_sub(count("unique_replies_automatic").unwrap_or(0)))
}

fn n(v: i64) -> u32 {
    u32::try_from(v.max(0)).unwrap_or(u32::MAX)
}

impl SendingPlatform for Instantly<'_> {
    fn now_ms(&self) -> i64 {
        self.clock.get()
    }

    fn observed_ms(&self) -> i64 {
        self.clock.get()
    }

    async fn advance(&self) -> PResult<bool> {
        // The real platform runs by itself.
        Ok(false)
    }

    async fn similar_domains(&self, primary: &str) -> PResult<Vec<String>> {
        let v = self
            .post(
                "/api/v2/dfy-email-account-orders/domains/similar",
                &json!({ "domain": primary, "tlds": names::SENDING_TLDS }),
            )
            .await?;
        let mut out: Vec<String> = v
            .get("domains")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .map(str::to_ascii_lowercase)
            .filter(|d| names::unsuitable(d, primary).is_none())
            .collect();
        out.dedup();
        if out.is_empty() {
            // Instantly proposed nothing usable: fall back to VibeSell's own look-alikes, which
            // the registrar check then filters.
            out = names::lookalikes(primary);
        }
        Ok(out)
    }

    async fn check_domains(&self, domains: &[String]) -> PResult<Vec<DomainCheck>> {
        let v = self
            .post("/api/v2/dfy-email-account-orders/domains/check", &json!({ "domains": domains }))
            .await?;
        Ok(v.get("results")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .map(|r| {
                let available = r.get("available").and_then(Value::as_bool).unwrap_or(false);
                let reason = r
                    .get("unavailable_reason")
                    .and_then(Value::as_str)
                    .map(crate::tools::one_line)
                    .or_else(|| {
                        r.get("restricted_keyword")
                            .and_then(Value::as_str)
                            .map(|k| format!("restricted keyword {}", crate::tools::one_line(k)))
                    })
                    .filter(|_| !available);
                DomainCheck {
                    domain: r.get("domain").and_then(Value::as_str).unwrap_or_default().to_ascii_lowercase(),
                    available,
                    reason: reason.or_else(|| (!available).then(|| "already registered".to_owned())),
                }
            })
            .collect())
    }

    async fn warmed_domains(&self) -> PResult<Vec<ShelfDomain>> {
        let v = self.post("/api/v2/dfy-email-account-orders/domains/pre-warmed-up-list", &json!({})).await?;
        let typed: Vec<(String, i64)> = v
            .get("domains_with_type")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|d| {
                Some((d.get("domain")?.as_str()?.to_ascii_lowercase(), d.get("account_type")?.as_i64()?))
            })
            .collect();
        let plain =
            v.get("domains").and_then(Value::as_array).into_iter().flatten().filter_map(Value::as_str);
        let mut out: Vec<ShelfDomain> = Vec::new();
        for domain in plain.map(str::to_ascii_lowercase).chain(typed.iter().map(|(d, _)| d.clone())) {
            // Orders ask for Google mailboxes (`email_provider` 1, `order_body`), which a domain
            // typed otherwise is not sold with (DOMAIN §1.8: `1` Google, `2` AirMail; Microsoft's,
            // `3`, come as 50 mailboxes each, not what a small sender needs).
            let other = typed.iter().any(|(d, t)| *d == domain && *t != 1);
            if other || out.iter().any(|s| s.domain == domain) {
                continue;
            }
            out.push(ShelfDomain {
                domain,
                max_mailboxes: MAX_MAILBOXES_PER_DOMAIN as u32,
                age_days: None,
                health: None,
            });
        }
        Ok(out)
    }

    async fn quote(&self, order: &OrderSpec) -> PResult<Quote> {
        let v = self.post("/api/v2/dfy-email-account-orders", &Self::order_body(order, true)).await?;
        Ok(Self::parse_quote(&v))
    }

    async fn placed_order(&self, order: &OrderSpec, _key: &str, since_ms: i64) -> PResult<Option<Placed>> {
        // Instantly keeps no order by our key: an order is known by its domains being ordered
        // since the attempt that may have placed it.
        let ordered = self.ordered_domains(since_ms).await?;
        Ok(order
            .items
            .iter()
            .all(|i| ordered.contains(&i.domain.to_ascii_lowercase()))
            .then(|| Placed { reference: order_reference(order), charged: None }))
    }

    async fn place_order(&self, order: &OrderSpec, key: &str, approved: &ApprovedPrices) -> PResult<Placed> {
        // Whether an earlier attempt went through is the caller's question (`placed_order`, on
        // a retry only): this one buys.
        let reference = order_reference(order);
        // The price is checked again just before buying: never more than the user approved.
        let quote = self.quote(order).await?;
        if !quote.valid {
            return Err(PlatformError::Refused(quote.problems.join(" ")));
        }
        if let Some(why) = approved.exceeded(&quote) {
            return Err(PlatformError::Refused(why));
        }
        let body = Self::order_body(order, false);
        let posted_at = self.now_ms();
        let answer = self
            .call(
                "POST",
                "/api/v2/dfy-email-account-orders",
                Some(&body),
                Repeat::Once,
                &[("idempotency-key", key)],
            )
            .await;
        match answer {
            Ok(v) => {
                if v.get("order_placed").and_then(Value::as_bool) == Some(true) {
                    return Ok(Placed {
                        reference,
                        charged: Some(cents(v.get("total_price").and_then(Value::as_f64).unwrap_or(0.0))),
                    });
                }
                if v.get("checkout_required").and_then(Value::as_bool) == Some(true) {
                    return Err(PlatformError::PaymentRequired(
                        "The sending platform needs a payment method before ordering.".into(),
                    ));
                }
                // Valid yet not placed names no problem: still a refusal that says something.
                let problems = Self::parse_quote(&v).problems;
                Err(PlatformError::Refused(if problems.is_empty() {
                    "The order was not placed.".to_owned()
                } else {
                    problems.join(" ")
                }))
            }
            // Unknown outcome: placed if the platform lists it already; otherwise left unknown, not
            // posted again now. DOMAIN §1.8 documents no idempotency for orders, and the list may
            // not show an order taken a second ago: the approval's next attempt, a minute or more
            // later, looks again first (`placed_order`) before it buys (audit finding: a second
            // post a second later could buy twice).
            Err(PlatformError::Unavailable(e)) => match self.placed_order(order, key, posted_at).await? {
                Some(placed) => Ok(placed),
                None => Err(PlatformError::Unavailable(e)),
            },
            Err(other) => Err(other),
        }
    }

    async fn accounts(&self, emails: &[String]) -> PResult<Vec<Account>> {
        let mut out = Vec::new();
        for email in emails {
            let v = match self.get(&format!("/api/v2/accounts/{}", enc(email))).await {
                Ok(v) => v,
                // Not created yet (done-for-you mailboxes appear once set up).
                Err(PlatformError::Refused(_)) => continue,
                Err(e) => return Err(e),
            };
            let status = match v.get("status").and_then(Value::as_i64).unwrap_or(1) {
                1 => AccountStatus::Active,
                2 | 3 => AccountStatus::Paused,
                _ => AccountStatus::Error,
            };
            let warmup = v.get("warmup_status").and_then(Value::as_i64).unwrap_or(0);
            out.push(Account {
                email: email.to_ascii_lowercase(),
                status,
                setup_pending: v.get("setup_pending").and_then(Value::as_bool).unwrap_or(false),
                // Instantly's account object has no setup completion time.
                setup_done_at: None,
                warmup_on: warmup == 1,
                warmup_blocked: warmup < 0,
                warmup_started_at: v
                    .get("timestamp_warmup_start")
                    .and_then(Value::as_str)
                    .and_then(parse_time),
                health: v
                    .get("stat_warmup_score")
                    .and_then(Value::as_f64)
                    .map(|s| s.round().clamp(0.0, 100.0) as u32),
            });
        }
        Ok(out)
    }

    async fn dns(&self, emails: &[String]) -> PResult<Vec<(String, Dns)>> {
        if emails.is_empty() {
            return Ok(Vec::new());
        }
        let v = self.post("/api/v2/accounts/test/vitals", &json!({ "accounts": emails })).await?;
        let mut out: Vec<(String, Dns)> = Vec::new();
        for list in ["success_list", "failure_list"] {
            for c in v.get(list).and_then(Value::as_array).into_iter().flatten() {
                let b = |k: &str| c.get(k).and_then(Value::as_bool).unwrap_or(false);
                let Some(domain) = c.get("domain").and_then(Value::as_str) else { continue };
                if !out.iter().any(|(d, _)| d == domain) {
                    out.push((
                        domain.to_ascii_lowercase(),
                        Dns {
                            spf: b("spf"),
                            dkim: b("dkim"),
                            dmarc: b("dmarc"),
                            mx: b("mx"),
                            tracking: false,
                        },
                    ));
                }
            }
        }
        // The custom tracking domain of each sending domain (DOMAIN §3.5): `track.<domain>`.
        for (domain, dns) in &mut out {
            let host = format!("track.{domain}");
            dns.tracking = match self.get(&format!("/api/v2/accounts/ctd/status?host={}", enc(&host))).await {
                Ok(v) => v.get("success").and_then(Value::as_bool).unwrap_or(false),
                Err(PlatformError::Refused(_)) => false,
                Err(e) => return Err(e),
            };
        }
        Ok(out)
    }

    async fn enable_warmup(&self, emails: &[String]) -> PResult<()> {
        let job = self.post("/api/v2/accounts/warmup/enable", &json!({ "emails": emails })).await?;
        // A background job (DOMAIN §1.9): follow it briefly; the sync reads the accounts' warm-up
        // status afterwards either way, so a job still running is reported as queued, not done.
        let Some(id) = job.get("id").and_then(Value::as_str) else { return Ok(()) };
        for _ in 0..3 {
            let j = self.get(&format!("/api/v2/background-jobs/{}", enc(id))).await?;
            match j.get("status").and_then(Value::as_str) {
                Some("success") => return Ok(()),
                Some("failed") | Some("cancelled") => {
                    return Err(PlatformError::Refused(
                        "The sending platform could not turn warm-up on.".into(),
                    ));
                }
                _ => self.wait(1_000).await,
            }
        }
        Ok(())
    }

    async fn create_campaign(&self, spec: &CampaignSpec, key: &str) -> PResult<String> {
        let body = Self::campaign_body(spec)?;
        let _ = key; // The name carries the workspace's campaign id, which makes the create findable.
        // The senders' limits first: a draft is never left sending at the accounts' defaults.
        self.limit_senders(spec).await?;
        if let Some(id) = self.find_campaign_by_name(&spec.name).await? {
            return Ok(id);
        }
        // Posted once: a create whose answer was lost may still appear a moment later, and a
        // second post would leave a duplicate draft (audit finding). Staging again finds it by
        // its name first.
        match self.call("POST", "/api/v2/campaigns", Some(&body), Repeat::Once, &[]).await {
            Ok(v) => {
                let status = v.get("status").and_then(Value::as_i64).unwrap_or(0);
                match (v.get("id").and_then(Value::as_str), status) {
                    (Some(id), 0) => Ok(id.to_owned()),
                    (Some(_), _) => Err(PlatformError::Refused("The new campaign is not a draft.".into())),
                    (None, _) => Err(PlatformError::Unavailable("campaign created without an id".into())),
                }
            }
            Err(PlatformError::Unavailable(e)) => match self.find_campaign_by_name(&spec.name).await? {
                Some(id) => Ok(id),
                None => Err(PlatformError::Unavailable(e)),
            },
            Err(other) => Err(other),
        }
    }

    async fn update_campaign(&self, id: &str, spec: &CampaignSpec) -> PResult<()> {
        let body = Self::campaign_body(spec)?;
        self.limit_senders(spec).await?;
        self.call("PATCH", &format!("/api/v2/campaigns/{}", enc(id)), Some(&body), Repeat::Safe, &[]).await?;
        Ok(())
    }

    async fn add_leads(&self, campaign: &str, leads: &[LeadSpec]) -> PResult<AddedLeads> {
        let mut added = AddedLeads::default();
        for batch in leads.chunks(LEADS_PER_CALL) {
            let body = json!({
                "campaign_id": campaign,
                "skip_if_in_campaign": true,
                "skip_if_in_workspace": true,
                "verify_leads_on_import": false,
                "leads": batch.iter().map(|l| {
                    let vars: serde_json::Map<String, Value> =
                        l.variables.iter().map(|(k, v)| (k.clone(), Value::from(v.as_str()))).collect();
                    json!({
                        "email": l.email,
                        "first_name": l.first_name,
                        "last_name": l.last_name,
                        "company_name": l.company_name,
                        "job_title": l.job_title,
                        "custom_variables": vars,
                    })
                }).collect::<Vec<_>>(),
            });
            // Adding is idempotent with skip_if_in_campaign, so a retry does not duplicate.
            let v = self.post("/api/v2/leads/add", &body).await?;
            let g = |k: &str| n(v.get(k).and_then(Value::as_i64).unwrap_or(0));
            added.uploaded += g("leads_uploaded");
            added.blocked += g("in_blocklist");
            added.skipped +=
                g("skipped_count") + g("duplicated_leads") + g("invalid_email_count") + g("incomplete_count");
        }
        Ok(added)
    }

    async fn activate(&self, campaign: &str) -> PResult<()> {
        self.post(&format!("/api/v2/campaigns/{}/activate", enc(campaign)), &json!({})).await?;
        Ok(())
    }

    async fn pause(&self, campaign: &str) -> PResult<()> {
        self.post(&format!("/api/v2/campaigns/{}/pause", enc(campaign)), &json!({})).await?;
        Ok(())
    }

    async fn report(&self, campaign: &str) -> PResult<CampaignReport> {
        let (status, totals) = self.totals(campaign).await?;
        let daily_raw =
            self.get(&format!("/api/v2/campaigns/analytics/daily?campaign_id={}", enc(campaign))).await?;
        let daily = daily_raw
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|d| {
                Some(Day {
                    date: d.get("date")?.as_str()?.chars().take(10).collect(),
                    sent: n(d.get("sent").and_then(Value::as_i64).unwrap_or(0)),
                    replies: human_replies(d),
                })
            })
            .collect();
        let steps_raw =
            self.get(&format!("/api/v2/campaigns/analytics/steps?campaign_id={}", enc(campaign))).await?;
        let mut steps: Vec<StepTotals> = Vec::new();
        for s in steps_raw.as_array().into_iter().flatten() {
            // Steps are numbered from 0 in Instantly's analytics; variants are summed.
            let Some(step) = s.get("step").and_then(step_index) else {
                continue;
            };
            let step = step + 1;
            let sent = n(s.get("sent").and_then(Value::as_i64).unwrap_or(0));
            let replies = human_replies(s);
            match steps.iter_mut().find(|x| x.step == step) {
                Some(x) => {
                    x.sent += sent;
                    x.replies += replies;
                }
                None => steps.push(StepTotals { step, sent, replies }),
            }
        }
        steps.sort_by_key(|s| s.step);
        Ok(CampaignReport { status, totals, daily, steps })
    }

    async fn totals(&self, campaign: &str) -> PResult<(CampaignStatus, Totals)> {
        let c = self.get(&format!("/api/v2/campaigns/{}", enc(campaign))).await?;
        let status = match c.get("status").and_then(Value::as_i64).unwrap_or(0) {
            0 => CampaignStatus::Draft,
            1 | 4 => CampaignStatus::Active,
            2 => CampaignStatus::Paused,
            3 => CampaignStatus::Completed,
            _ => CampaignStatus::Stopped,
        };
        let a = self.get(&format!("/api/v2/campaigns/analytics?id={}", enc(campaign))).await?;
        let row = match &a {
            Value::Array(items) => items.first().cloned(),
            other => Some(other.clone()),
        };
        let totals =
            row.and_then(|r| serde_json::from_value::<Analytics>(r).ok()).map_or_else(Totals::default, |a| {
                Totals {
                    leads: n(a.leads_count),
                    contacted: n(a.contacted_count),
                    sent: n(a.emails_sent_count),
                    opened: n(a.open_count_unique),
                    replied: n(a.reply_count_unique - a.reply_count_automatic_unique),
                    bounced: n(a.bounced_count),
                    unsubscribed: n(a.unsubscribed_count),
                }
            });
        Ok((status, totals))
    }

    async fn received(&self, campaign: &str, since_ms: i64) -> PResult<ReceivedPage> {
        let mut page = ReceivedPage::default();
        let mut cursor: Option<String> = None;
        for _ in 0..EMAIL_PAGES {
            if let Err(e) = self.pace_emails().await {
                if page.items.is_empty() {
                    return Err(e);
                }
                page.more = true;
                break;
            }
            let mut path = format!(
                "/api/v2/emails?campaign_id={}&email_type=received&sort_order=asc&limit=100&min_timestamp_created={}",
                enc(campaign),
                enc(&iso_time(since_ms))
            );
            if let Some(c) = &cursor {
                path.push_str(&format!("&starting_after={}", enc(c)));
            }
            let v = self.get(&path).await?;
            for e in v.get("items").and_then(Value::as_array).into_iter().flatten() {
                let s = |k: &str| e.get(k).and_then(Value::as_str).unwrap_or_default().to_owned();
                // Messages VibeSell's mailboxes sent are not replies (ue_type 1 and 3).
                if matches!(e.get("ue_type").and_then(Value::as_f64), Some(t) if t == 1.0 || t == 3.0) {
                    continue;
                }
                let from = s("from_address_email").to_ascii_lowercase();
                let text = e
                    .pointer("/body/text")
                    .and_then(Value::as_str)
                    .filter(|t| !t.is_empty())
                    .map(str::to_owned)
                    .or_else(|| e.get("content_preview").and_then(Value::as_str).map(str::to_owned))
                    .unwrap_or_default();
                let at = parse_time(&s("timestamp_created"))
                    .or_else(|| parse_time(&s("timestamp_email")))
                    .unwrap_or(since_ms);
                let bounce = from.starts_with("mailer-daemon@") || from.starts_with("postmaster@");
                page.items.push(Received {
                    id: s("id"),
                    lead: if s("lead").is_empty() { from.clone() } else { s("lead").to_ascii_lowercase() },
                    from,
                    mailbox: s("eaccount"),
                    subject: s("subject"),
                    text,
                    at,
                    step: e.get("step").and_then(step_index).map(|x| x + 1),
                    auto_reply: e.get("is_auto_reply").and_then(Value::as_f64).is_some_and(|x| x >= 1.0),
                    bounce,
                    interest: e.get("i_status").and_then(Value::as_f64).map(|x| x as i64),
                });
            }
            cursor = v.get("next_starting_after").and_then(Value::as_str).map(str::to_owned);
            if cursor.is_none() {
                return Ok(page);
            }
        }
        page.more = page.more || cursor.is_some();
        Ok(page)
    }

    async fn outcomes(&self, campaign: &str, after: Option<&str>) -> PResult<OutcomePage> {
        let mut out = Vec::new();
        let mut cursor = after.map(str::to_owned);
        for _ in 0..LEAD_PAGES {
            let mut body = json!({ "campaign": campaign, "limit": 100 });
            if let Some(c) = &cursor {
                body["starting_after"] = Value::from(c.as_str());
            }
            let v = self.post("/api/v2/leads/list", &body).await?;
            for l in v.get("items").and_then(Value::as_array).into_iter().flatten() {
                // `/leads/list` has returned other campaigns' leads before (DOMAIN §1.9).
                if l.get("campaign").and_then(Value::as_str).is_some_and(|c| c != campaign) {
                    continue;
                }
                let Some(email) = l.get("email").and_then(Value::as_str) else { continue };
                match l.get("status").and_then(Value::as_i64) {
                    Some(-1) => out.push((email.to_ascii_lowercase(), Outcome::Bounced)),
                    Some(-2) => out.push((email.to_ascii_lowercase(), Outcome::Unsubscribed)),
                    _ => {}
                }
            }
            cursor = v.get("next_starting_after").and_then(Value::as_str).map(str::to_owned);
            if cursor.is_none() {
                break;
            }
        }
        // A campaign of more than `LEAD_PAGES` pages is read over several syncs, each going on
        // where the last one stopped: starting over each time would never reach its last leads.
        Ok(OutcomePage { items: out, next: cursor })
    }

    async fn block(&self, value: &str) -> PResult<()> {
        match self
            .post("/api/v2/block-lists-entries", &json!({ "bl_value": value.trim().to_ascii_lowercase() }))
            .await
        {
            Ok(_) => Ok(()),
            // Already on the list.
            Err(PlatformError::Refused(m)) if m.to_ascii_lowercase().contains("exist") => Ok(()),
            Err(e) => Err(e),
        }
    }
}

#[cfg(test)]
#[path = "instantly_tests.rs"]
mod tests;

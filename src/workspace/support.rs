//! Support requests (`contact_support`): kept in the workspace with the context the team needs
//! (plan, where the user is on the journey, open approvals, the related approval), answered
//! with a reference, and forwarded to the configured webhook (`SUPPORT_WEBHOOK_URL`).
//!
//! A request is stored first, with its delivery scheduled in the same batch; delivery is then
//! tried at once, and the [`ForwardSupport`] job retries it with backoff until the webhook
//! accepts it (2xx). Each delivery carries `X-VibeSell-Delivery` (the request id, so receivers
//! can drop repeats) and, with `SUPPORT_WEBHOOK_SECRET`, `X-VibeSell-Signature: t=…,v1=…`
//! (HMAC-SHA256 of `t.body`, the scheme Stripe uses). The user's words are sent as data.

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::schedule::{self, Job, JobCx, JobError};
use crate::config::{Config, Secret};
use crate::outbound::{Outbound, OutboundRequest};
use crate::store::{Db, Stmt, StoreError};

/// The most requests a workspace sends in 24 hours.
pub const DAILY_LIMIT: i64 = 20;
/// After this many failed deliveries the request stays stored but is no longer retried.
const MAX_DELIVERY_ATTEMPTS: u32 = 24;
const TIMEOUT_MS: u32 = 5_000;
/// Crockford's base32 alphabet: no I, L, O, U, so references read aloud unambiguously.
const ALPHABET: &[u8; 32] = b"0123456789ABCDEFGHJKMNPQRSTVWXYZ";

/// What a request is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Category {
    /// Plans, payments, invoices.
    Billing,
    /// Something does not work.
    Technical,
    /// Emails landing in spam, bounces, domains, warm-up.
    Deliverability,
    /// Access, data, the workspace itself.
    Account,
    /// Anything else.
    Other,
}

impl Category {
    /// The stored name.
    pub fn as_str(self) -> &'static str {
        match self {
            Category::Billing => "billing",
            Category::Technical => "technical",
            Category::Deliverability => "deliverability",
            Category::Account => "account",
            Category::Other => "other",
        }
    }
}

/// A new request.
#[derive(Debug, Clone)]
pub struct NewRequest {
    /// What it is about.
    pub category: Category,
    /// One line.
    pub subject: String,
    /// The user's words.
    pub message: String,
    /// Where the team answers, if not the account's address.
    pub reply_to: Option<String>,
    /// Who sent it: subject, client and request id.
    pub user: String,
    /// The OAuth client it came from.
    pub client: String,
    /// The workspace and journey context, as JSON.
    pub context: Value,
}

/// A stored request.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct Stored {
    /// `sup_…`.
    pub id: String,
    /// `VS-XXXX-XXXX`, for people.
    pub reference: String,
    /// When (ms).
    pub created_at: i64,
    /// When the webhook accepted it (ms).
    pub forwarded_at: Option<i64>,
}

/// A reference people can read out: `VS-` and 8 characters of Crockford base32 (40 random bits).
pub fn new_reference() -> String {
    let bytes = crate::ids::random_bytes::<5>();
    let bits = bytes.iter().fold(0u64, |acc, b| (acc << 8) | u64::from(*b));
    let chars: String = (0..8).rev().map(|i| ALPHABET[((bits >> (i * 5)) & 31) as usize] as char).collect();
    format!("VS-{}-{}", &chars[..4], &chars[4..])
}

/// How many requests the workspace sent in the 24 hours before `now_ms`.
pub fn sent_today(db: &dyn Db, now_ms: i64) -> Result<i64, StoreError> {
    Ok(db
        .query(Stmt::new(
            "SELECT COUNT(*) FROM support_requests WHERE created_at > ?",
            vec![(now_ms - 86_400_000).into()],
        ))?
        .scalar_i64()
        .unwrap_or(0))
}

/// The request with this subject and message sent since `since_ms`, if there is one: the same
/// request sent again (a retried call, a model that lost the first answer) keeps its reference
/// rather than open a second ticket (third journey walk).
pub fn sent_before(
    db: &dyn Db,
    subject: &str,
    message: &str,
    since_ms: i64,
) -> Result<Option<Stored>, StoreError> {
    db.row(
        "SELECT id, reference, created_at, forwarded_at FROM support_requests \
         WHERE subject = ? AND message = ? AND created_at > ? ORDER BY created_at DESC LIMIT 1",
        vec![subject.into(), message.into(), since_ms.into()],
    )
}

/// Stores a request, with its delivery scheduled when a webhook is configured.
pub fn store(db: &dyn Db, config: &Config, request: &NewRequest, now_ms: i64) -> Result<Stored, StoreError> {
    let id = crate::ids::random_id("sup_");
    let reference = new_reference();
    let mut stmts = vec![Stmt::new(
        "INSERT INTO support_requests (id, reference, category, subject, message, reply_to, sender, client, context, created_at) \
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        vec![
            id.clone().into(),
            reference.clone().into(),
            request.category.as_str().into(),
            request.subject.clone().into(),
            request.message.clone().into(),
            request.reply_to.clone().into(),
            request.user.clone().into(),
            request.client.clone().into(),
            request.context.to_string().into(),
            now_ms.into(),
        ],
    )];
    if config.support_webhook.is_some() {
        stmts.push(schedule::at::<ForwardSupport>(&id, now_ms));
    }
    db.batch(stmts)?;
    Ok(Stored { id, reference, created_at: now_ms, forwarded_at: None })
}

#[derive(Deserialize)]
struct Row {
    id: String,
    reference: String,
    category: String,
    subject: String,
    message: String,
    reply_to: Option<String>,
    sender: String,
    client: String,
    context: String,
    created_at: i64,
    forwarded_at: Option<i64>,
}

fn load(db: &dyn Db, id: &str) -> Result<Option<Row>, StoreError> {
    db.row(
        "SELECT id, reference, category, subject, message, reply_to, sender, client, context, created_at, forwarded_at \
         FROM support_requests WHERE id = ?",
        vec![id.into()],
    )
}

/// The JSON body the webhook receives. `text` makes chat webhooks (Slack, Discord-style) show it
/// as is; the other fields are for ticketing systems.
fn payload(row: &Row, workspace: &str) -> Value {
    let context: Value = serde_json::from_str(&row.context).unwrap_or(Value::Null);
    json!({
        "type": "support.request",
        "id": row.id,
        "reference": row.reference,
        // Slack reads `<…>` in `text` as mentions and links (`<!channel>`, `<https://x|label>`)
        // and wants `&`, `<`, `>` escaped so; the subject is the model's words, which untrusted
        // text may have steered.
        "text": format!(
            "VibeSell support {} ({}): {}",
            row.reference,
            row.category,
            row.subject.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;")
        ),
        "category": row.category,
        "subject": row.subject,
        "message": row.message,
        "replyTo": row.reply_to,
        "user": row.sender,
        "client": row.client,
        "workspace": workspace,
        "createdAt": row.created_at,
        "context": context,
    })
}

/// Why a delivery did not go through (for the log and the retry).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DeliveryError {
    /// No webhook is configured.
    #[error("no support webhook configured")]
    NotConfigured,
    /// The webhook did not accept it.
    #[error("{0}")]
    Failed(String),
}

/// Posts request `id` to the webhook and records the delivery. `Ok(true)` once delivered (now or
/// before), `Ok(false)` when there is no such request.
pub async fn forward(
    db: &dyn Db,
    config: &Config,
    outbound: &dyn Outbound,
    id: &str,
    now_ms: i64,
) -> Result<Result<bool, DeliveryError>, StoreError> {
    let Some(webhook) = &config.support_webhook else { return Ok(Err(DeliveryError::NotConfigured)) };
    let Some(row) = load(db, id)? else { return Ok(Ok(false)) };
    if row.forwarded_at.is_some() {
        return Ok(Ok(true));
    }
    let workspace = super::workspace_id(db)?.unwrap_or_default();
    let body = payload(&row, &workspace).to_string();
    let mut req = OutboundRequest::post(webhook.url.clone(), "application/json", body.clone())
        .header("user-agent", concat!("VibeSell-Support/", env!("CARGO_PKG_VERSION")))
        .header("x-vibesell-delivery", row.id.clone());
    if let Some(Secret(secret)) = &webhook.secret {
        let t = now_ms / 1000;
        let mut message = format!("{t}.").into_bytes();
        message.extend_from_slice(body.as_bytes());
        let v1 = crate::ids::hex(&crate::ids::hmac_sha256(secret.as_bytes(), &message));
        req = req.header("x-vibesell-signature", format!("t={t},v1={v1}"));
    }
    req.timeout_ms = TIMEOUT_MS;
    let outcome = match outbound.fetch(req).await {
        Ok(r) if (200..300).contains(&r.status) => Ok(()),
        Ok(r) => Err(format!("webhook answered {}", r.status)),
        Err(e) => Err(format!("webhook unreachable: {e}")),
    };
    match outcome {
        Ok(()) => {
            db.batch(vec![
                Stmt::new(
                    "UPDATE support_requests SET forwarded_at = ?, last_error = NULL WHERE id = ? AND forwarded_at IS NULL",
                    vec![now_ms.into(), id.into()],
                ),
                schedule::cancel::<ForwardSupport>(id),
            ])?;
            Ok(Ok(true))
        }
        Err(why) => {
            db.batch(vec![Stmt::new(
                "UPDATE support_requests SET last_error = ? WHERE id = ?",
                vec![why.clone().into(), id.into()],
            )])?;
            Ok(Err(DeliveryError::Failed(why)))
        }
    }
}

/// The job that delivers a request the webhook has not accepted yet.
pub struct ForwardSupport;

impl Job for ForwardSupport {
    const NAME: &'static str = "forward_support";

    async fn run(&self, cx: &JobCx<'_>, id: &str) -> Result<(), JobError> {
        match forward(cx.db, cx.config, cx.outbound, id, cx.now_ms).await? {
            Ok(_) => Ok(()),
            // The webhook was removed from the configuration: nowhere to deliver.
            Err(DeliveryError::NotConfigured) => Ok(()),
            Err(DeliveryError::Failed(_)) if cx.attempt + 1 >= MAX_DELIVERY_ATTEMPTS => Ok(()),
            Err(DeliveryError::Failed(why)) => Err(JobError::Retry(why)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{FakeOutbound, MemoryDb, NOW_MS, block_on, test_config};
    use crate::workspace::migrations;

    fn setup(webhook: bool) -> (MemoryDb, Config) {
        let db = MemoryDb::new();
        migrations::apply(&db, NOW_MS).unwrap();
        (&db as &dyn Db).exec("INSERT INTO meta (key, value) VALUES ('workspace', 'ws_1')", vec![]).unwrap();
        let mut config = test_config();
        if webhook {
            config.support_webhook = Some(crate::config::SupportWebhook {
                url: "https://hooks.example.com/vibesell".into(),
                secret: Some(Secret("s3cret".into())),
            });
        }
        (db, config)
    }

    fn request() -> NewRequest {
        NewRequest {
            category: Category::Billing,
            subject: "Charged twice? <!channel> <https://evil.example|stripe.com> & more".into(),
            message: "I see two charges </script> in November.".into(),
            reply_to: Some("anna@ledgerly.io".into()),
            user: "user_1".into(),
            client: "client_1".into(),
            context: json!({"plan": "starter"}),
        }
    }

    #[test]
    fn references_are_readable_and_distinct() {
        let a = new_reference();
        assert_eq!(a.len(), 12);
        assert!(a.starts_with("VS-") && a.as_bytes()[7] == b'-');
        assert!(a[3..].bytes().all(|b| b == b'-' || ALPHABET.contains(&b)), "{a}");
        assert_ne!(a, new_reference());
    }

    #[test]
    fn a_request_is_delivered_signed_once() {
        let (db, config) = setup(true);
        let stored = store(&db, &config, &request(), NOW_MS).unwrap();
        assert_eq!(schedule::due_at::<ForwardSupport>(&db, &stored.id).unwrap(), Some(NOW_MS));
        let fake = FakeOutbound::new(vec![FakeOutbound::json(200, json!({"ok": true}))]);
        assert_eq!(block_on(forward(&db, &config, &fake, &stored.id, NOW_MS)).unwrap(), Ok(true));
        assert_eq!(schedule::due_at::<ForwardSupport>(&db, &stored.id).unwrap(), None);
        let req = fake.requests.borrow()[0].clone();
        assert_eq!(req.url, "https://hooks.example.com/vibesell");
        let body: Value = serde_json::from_slice(req.body.as_deref().unwrap()).unwrap();
        assert_eq!(body["reference"], stored.reference.as_str());
        assert_eq!(body["workspace"], "ws_1");
        assert_eq!(body["message"], "I see two charges </script> in November.");
        // The chat line's subject pings no one and links nowhere; the field keeps it as written.
        let text = body["text"].as_str().unwrap();
        assert!(
            text.ends_with("(billing): Charged twice? &lt;!channel&gt; &lt;https://evil.example|stripe.com&gt; &amp; more"),
            "{text}"
        );
        assert_eq!(body["subject"], "Charged twice? <!channel> <https://evil.example|stripe.com> & more");
        assert_eq!(body["context"]["plan"], "starter");
        assert_eq!(fake.header(0, "x-vibesell-delivery").as_deref(), Some(stored.id.as_str()));
        let signature = fake.header(0, "x-vibesell-signature").unwrap();
        let t = NOW_MS / 1000;
        let expected = crate::providers::stripe::sign("s3cret", t, req.body.as_deref().unwrap());
        assert_eq!(signature, format!("t={t},v1={expected}"));
        // Delivered requests are not sent again.
        let none = FakeOutbound::new(vec![]);
        assert_eq!(block_on(forward(&db, &config, &none, &stored.id, NOW_MS + 1)).unwrap(), Ok(true));
        assert!(none.requests.borrow().is_empty());
    }

    #[test]
    fn a_failed_delivery_is_retried_by_the_scheduler() {
        let (db, config) = setup(true);
        let stored = store(&db, &config, &request(), NOW_MS).unwrap();
        let down = FakeOutbound::new(vec![FakeOutbound::json(503, json!({}))]);
        let first = block_on(forward(&db, &config, &down, &stored.id, NOW_MS)).unwrap();
        assert_eq!(first, Err(DeliveryError::Failed("webhook answered 503".into())));
        let report = block_on(schedule::run_due(&db, &config, &down, NOW_MS)).unwrap();
        assert_eq!(report.retried.len(), 1, "no scripted answer left: fails again");
        let due = schedule::due_at::<ForwardSupport>(&db, &stored.id).unwrap().unwrap();
        let up = FakeOutbound::new(vec![FakeOutbound::json(204, Value::Null)]);
        let report = block_on(schedule::run_due(&db, &config, &up, due)).unwrap();
        assert_eq!(report.ran, vec!["forward_support"]);
        assert_eq!(load(&db, &stored.id).unwrap().unwrap().forwarded_at, Some(due));
        assert_eq!(schedule::next_due(&db).unwrap(), None);
    }

    #[test]
    fn without_a_webhook_requests_are_only_stored() {
        let (db, config) = setup(false);
        let stored = store(&db, &config, &request(), NOW_MS).unwrap();
        assert_eq!(schedule::next_due(&db).unwrap(), None);
        let fake = FakeOutbound::new(vec![]);
        assert_eq!(
            block_on(forward(&db, &config, &fake, &stored.id, NOW_MS)).unwrap(),
            Err(DeliveryError::NotConfigured)
        );
        assert_eq!(sent_today(&db, NOW_MS).unwrap(), 1);
        assert_eq!(sent_today(&db, NOW_MS + 86_400_001).unwrap(), 0);
    }
}

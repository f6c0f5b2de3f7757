//! `contact_support`: a request to the VibeSell team, kept with the workspace's context and
//! forwarded to the team's webhook (`workspace::support`).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;

use super::registry::{Access, Hints, Refusal, Reply, Tool, ToolCx};
use crate::config::ProviderMode;
use crate::workspace::support::{self, Category, NewRequest};
use crate::workspace::{approvals, billing, offer};

/// `contact_support`: asks the VibeSell team for help.
pub struct ContactSupport;

/// The request, in the user's words.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ContactSupportInput {
    /// What it is about; `other` when unsure.
    pub category: Option<Category>,
    /// One line that sums up the question or problem, in the user's words.
    #[schemars(length(min = 1, max = 150))]
    pub subject: String,
    /// The details: what happened, what the user expected, anything they already tried.
    #[schemars(length(min = 1, max = 4000))]
    pub message: String,
    /// An email address where the team should answer, if the user gives one.
    #[schemars(length(min = 3, max = 254))]
    pub reply_to: Option<String>,
    /// The approval the request is about (`apr_…`), if any; its state is attached for the team.
    #[schemars(length(min = 4, max = 64))]
    pub approval_id: Option<String>,
}

/// A support request received.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(tag = "kind", rename = "support", rename_all = "camelCase")]
pub struct SupportView {
    /// The reference to quote (`VS-XXXX-XXXX`).
    pub reference: String,
    /// Always `received`: the request is kept in the workspace.
    pub status: String,
    /// What it is about.
    pub category: Category,
    /// Its one-line subject.
    pub subject: String,
    /// When it was sent (ms since the epoch).
    pub created_at: i64,
    /// Whether the team's inbox already has it (otherwise delivery is retried automatically).
    pub forwarded: bool,
    /// Where the team answers, when the user gave an address.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reply_to: Option<String>,
}

fn is_email(s: &str) -> bool {
    let Some((local, domain)) = s.split_once('@') else { return false };
    !local.is_empty()
        && domain.contains('.')
        && !domain.starts_with('.')
        && !domain.ends_with('.')
        && !s.contains(char::is_whitespace)
        && !domain.contains('@')
}

impl Tool for ContactSupport {
    type Input = ContactSupportInput;
    type Output = SupportView;
    const NAME: &'static str = "contact_support";
    const TITLE: &'static str = "Contact support";
    const DESCRIPTION: &'static str = "Sends the user's question or problem to the VibeSell team, with the \
        workspace's context (plan, open approvals, the approval it is about), and returns a reference to \
        quote. Use it when the user asks for a person, for a refund or billing problem, or when a tool \
        says to contact support. Write the subject and message from what the user said; do not invent \
        details.";
    const ACCESS: Access = Access::Act;
    const HINTS: Hints = Hints { idempotent: false, open_world: true };

    async fn call(&self, cx: &ToolCx<'_>, input: ContactSupportInput) -> Result<Reply<SupportView>, Refusal> {
        let subject = input.subject.trim().to_owned();
        let message = input.message.trim().to_owned();
        if subject.is_empty() || message.is_empty() {
            return Err(Refusal::InvalidArguments("`subject` and `message` must not be blank".into()));
        }
        let reply_to = input.reply_to.map(|r| r.trim().to_owned()).filter(|r| !r.is_empty());
        if reply_to.as_deref().is_some_and(|r| !is_email(r)) {
            return Err(Refusal::InvalidArguments(
                "`reply_to` must be an email address such as anna@example.com".into(),
            ));
        }
        let category = input.category.unwrap_or(Category::Other);
        if let Some(earlier) = support::sent_before(cx.db, &subject, &message, cx.now_ms - 86_400_000)? {
            let text = format!(
                "This request was sent already, as **{}**: nothing new was sent. Give the user that reference to \
                 quote in any follow-up.",
                earlier.reference
            );
            let view = SupportView {
                reference: earlier.reference,
                status: "received".into(),
                category,
                subject,
                created_at: earlier.created_at,
                forwarded: earlier.forwarded_at.is_some(),
                reply_to,
            };
            return Ok(Reply::new(text, view));
        }
        if support::sent_today(cx.db, cx.now_ms)? >= support::DAILY_LIMIT {
            return Err(Refusal::guidance(format!(
                "This workspace already sent {} support requests in the last 24 hours; the team answers them \
                 in order. Add to an earlier request's reference instead of sending another.",
                support::DAILY_LIMIT
            )));
        }
        let current = billing::current(cx.db, cx.config)?;
        let pending: Vec<_> = approvals::open_now(cx.db, cx.now_ms, 10)?
            .newest
            .into_iter()
            .map(|a| json!({ "id": a.id, "action": a.action, "summary": a.summary }))
            .collect();
        // An id that names no approval of this workspace is refused rather than sent: the team
        // would get a request about nothing they can see (second journey walk).
        let related = match input.approval_id.as_deref().map(str::trim) {
            Some(id) => match approvals::load(cx.db, id)? {
                Some(a) => {
                    Some(json!({ "id": a.id, "action": a.action, "state": a.state, "summary": a.summary,
                                        "result": a.result, "decidedAt": a.decided_at }))
                }
                None => {
                    return Err(Refusal::InvalidArguments(format!(
                        "no approval `{id}` in this workspace: list_pending_approvals shows the open ones; \
                         leave `approval_id` out to send the request without one"
                    )));
                }
            },
            None => None,
        };
        let context = json!({
            "workspace": cx.principal.workspace,
            "plan": { "id": current.plan.id, "status": current.state.as_ref().map_or("none", |s| s.status.as_str()) },
            "offer": offer::load(cx.db)?.map(|(o, _)| o.product),
            "openApprovals": pending,
            "relatedApproval": related,
            "claudeApp": cx.principal.app,
            "requestId": cx.request_id,
            "providers": if cx.config.provider_mode == ProviderMode::Sandbox { "sandbox" } else { "live" },
        });
        let request = NewRequest {
            category,
            subject: subject.clone(),
            message,
            reply_to: reply_to.clone(),
            user: cx.principal.subject.clone(),
            client: cx.principal.client_id.clone(),
            context,
        };
        let stored = support::store(cx.db, cx.config, &request, cx.now_ms)?;
        let forwarded =
            matches!(support::forward(cx.db, cx.config, cx.outbound, &stored.id, cx.now_ms).await?, Ok(true));
        let delivery = match (forwarded, cx.config.support_webhook.is_some()) {
            (true, _) => "The VibeSell team has it",
            (false, true) => "It is saved, and VibeSell keeps delivering it to the team until they have it",
            (false, false) => "It is saved in the workspace",
        };
        let answer = match &reply_to {
            Some(address) => format!("; they answer at {address}"),
            None => String::new(),
        };
        let text = format!(
            "Support request **{}** received: “{subject}”. {delivery}{answer}. Give the user the reference \
             {} to quote in any follow-up.",
            stored.reference, stored.reference
        );
        let view = SupportView {
            reference: stored.reference,
            status: "received".into(),
            category,
            subject,
            created_at: stored.created_at,
            forwarded,
            reply_to,
        };
        Ok(Reply::new(text, view))
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use crate::auth::ScopeSet;
    use crate::outbound::NoNetwork;
    use crate::store::{Db, Stmt};
    use crate::testing::{MemoryDb, NOW_MS, block_on, principal, test_config};
    use crate::tools::{Outcome, ToolOutcome};
    use crate::workspace::{ToolCall, call_tool};

    fn call(db: &MemoryDb, arguments: Value, now: i64) -> ToolOutcome {
        let c = ToolCall {
            tool: "contact_support".into(),
            arguments,
            principal: principal(ScopeSet::FULL, true),
            request_id: "req_9".into(),
            structured_content: true,
        };
        block_on(call_tool(db, &test_config(), &NoNetwork, c, now))
    }

    #[test]
    fn a_request_is_kept_with_its_context() {
        let db = MemoryDb::new();
        let out = call(
            &db,
            json!({"category": "billing", "subject": " Charged twice ", "message": "Two charges in November.",
                   "reply_to": "anna@ledgerly.io"}),
            NOW_MS,
        );
        assert_eq!(out.outcome, Outcome::Ok, "{}", out.text);
        let data = out.structured.unwrap();
        assert_eq!(data["kind"], "support");
        assert_eq!(data["subject"], "Charged twice");
        assert_eq!(data["category"], "billing");
        assert_eq!(data["forwarded"], false, "no webhook configured");
        let reference = data["reference"].as_str().unwrap();
        assert!(out.text.contains(reference) && out.text.contains("anna@ledgerly.io"), "{}", out.text);
        let rows = (&db as &dyn Db)
            .query(Stmt::new("SELECT context, sender, client FROM support_requests", vec![]))
            .unwrap()
            .rows;
        let crate::store::SqlValue::Text(context) = &rows[0][0] else { panic!("context") };
        let context: Value = serde_json::from_str(context).unwrap();
        assert_eq!(context["plan"], json!({"id": "free", "status": "none"}));
        assert_eq!(context["relatedApproval"], Value::Null);
        assert_eq!(context["requestId"], "req_9");
        assert_eq!(rows[0][1], crate::store::SqlValue::Text("user_1".into()));
    }

    #[test]
    fn the_approval_it_is_about_is_attached() {
        let db = MemoryDb::new();
        let config = test_config();
        let who = principal(ScopeSet::FULL, true);
        crate::workspace::open(&db, &who, NOW_MS).unwrap();
        let cx = crate::tools::ToolCx {
            db: &db,
            principal: &who,
            config: &config,
            now_ms: NOW_MS,
            request_id: "req_1",
            outbound: &NoNetwork,
        };
        let args = crate::testing::ProbeArgs { label: "a".into(), outcome: crate::testing::ProbeOutcome::Ok };
        let asked =
            block_on(crate::workspace::approvals::request(&cx, &crate::testing::Probe, args)).unwrap();
        let id = asked.data.approval.id;
        let out = call(&db, json!({"subject": "s", "message": "m", "approval_id": id}), NOW_MS);
        assert_eq!(out.outcome, Outcome::Ok, "{}", out.text);
        let rows =
            (&db as &dyn Db).query(Stmt::new("SELECT context FROM support_requests", vec![])).unwrap().rows;
        let crate::store::SqlValue::Text(context) = &rows[0][0] else { panic!("context") };
        let context: Value = serde_json::from_str(context).unwrap();
        assert_eq!(context["relatedApproval"]["id"], id.as_str());
        assert_eq!(context["relatedApproval"]["action"], "probe");
        assert_eq!(context["relatedApproval"]["state"], "pending");
    }

    #[test]
    fn bad_requests_are_refused_and_a_day_has_a_limit() {
        let db = MemoryDb::new();
        for (args, needle) in [
            (json!({"subject": "x", "message": "y", "reply_to": "not an email"}), "reply_to"),
            (json!({"subject": "  ", "message": "y"}), "blank"),
            (json!({"subject": "x", "message": "y", "category": "urgent"}), "category"),
            (json!({"subject": "x", "message": "y", "approval_id": "apr_missing"}), "list_pending_approvals"),
        ] {
            let out = call(&db, args, NOW_MS);
            assert_eq!(out.outcome, Outcome::Refused);
            assert!(out.text.contains(needle), "{}", out.text);
        }
        // The same request again keeps its reference and opens no second ticket.
        let first = call(&db, json!({"subject": "Same", "message": "Twice"}), NOW_MS);
        let again = call(&db, json!({"subject": "Same", "message": "Twice"}), NOW_MS + 60_000);
        let reference = &first.structured.as_ref().unwrap()["reference"];
        assert_eq!(&again.structured.as_ref().unwrap()["reference"], reference);
        assert!(again.text.starts_with("This request was sent already"), "{}", again.text);
        let rows =
            (&db as &dyn Db).query(Stmt::new("SELECT COUNT(*) FROM support_requests", vec![])).unwrap();
        assert_eq!(rows.scalar_i64(), Some(1));
        (&db as &dyn Db).batch(vec![Stmt::new("DELETE FROM support_requests", vec![])]).unwrap();
        for i in 0..crate::workspace::support::DAILY_LIMIT {
            assert_eq!(
                call(&db, json!({"subject": "s", "message": format!("m{i}")}), NOW_MS + i).outcome,
                Outcome::Ok
            );
        }
        let over = call(&db, json!({"subject": "s", "message": "one more"}), NOW_MS + 100);
        assert_eq!(over.outcome, Outcome::Refused);
        assert!(over.text.contains("last 24 hours"));
        assert_eq!(
            call(&db, json!({"subject": "s", "message": "next day"}), NOW_MS + 86_400_001).outcome,
            Outcome::Ok
        );
    }
}

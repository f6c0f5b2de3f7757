//! Requests to a workspace's Durable Object that are not MCP tool calls: the VibeSell web page
//! deciding an approval for its signed-in owner, verified provider webhooks, and the sandbox
//! providers' own pages. The Worker reaches them through `http::Workspaces::op`; the Durable
//! Object runs [`handle_op`] next to the data, like a tool call.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::Services;
use super::approvals::{self, Approval, Decision};
use super::billing::{self, Applied};
use crate::auth::{Principal, ScopeSet};
use crate::config::ProviderMode;
use crate::providers::billing::{BillingEvent, Invoice};
use crate::providers::sandbox_billing::{self, PageSession, Paid};
use crate::store::StoreError;
use crate::tools::approvals::ListPendingApprovals;
use crate::tools::workspace::{GetWorkspaceContext, NoArguments};
use crate::tools::{Refusal, Tool, ToolCx};

/// One request to a workspace.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum Op {
    /// The approval `id`, for the workspace's signed-in owner `subject` (`/app/approvals/{id}`).
    GetApproval {
        /// The signed-in user.
        subject: String,
        /// The approval.
        id: String,
    },
    /// Decides approval `id` as the workspace's signed-in owner `subject`, from the web page.
    DecideApproval {
        /// The signed-in user.
        subject: String,
        /// The approval.
        id: String,
        /// Approve or reject.
        decision: Decision,
    },
    /// The workspace summary and open approvals, for its signed-in owner `subject` (`/app`).
    Overview {
        /// The signed-in user.
        subject: String,
    },
    /// A verified provider event (Stripe webhook) for this workspace.
    BillingEvent {
        /// The event.
        event: BillingEvent,
    },
    /// A sandbox billing page: checkout session or portal session `session`.
    SandboxPage {
        /// `checkout` or `portal`.
        kind: String,
        /// The session id.
        session: String,
    },
    /// Pays sandbox checkout `session` with a test card.
    SandboxPay {
        /// The checkout session id.
        session: String,
        /// The test card number.
        card: String,
    },
    /// Cancels the subscription from sandbox portal `session`, or moves it to a lower plan.
    SandboxCancel {
        /// The portal session id.
        session: String,
        /// The lower plan to move to; none cancels.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        to: Option<String>,
    },
    /// A verified unsubscribe link was used (`/u/<token>`): the address with this hash
    /// (`compliance::email_hash`) is never emailed again.
    Unsubscribe {
        /// The address's hash from the token.
        hash: String,
    },
}

/// The answer to an [`Op`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "reply", rename_all = "snake_case")]
pub enum OpReply {
    /// An approval, as the web page shows it (`decideHere` is true while it is pending).
    Approval {
        /// The approval.
        approval: Box<Approval>,
        /// Whether this request decided it (false: it was already decided; this is the outcome).
        applied: bool,
    },
    /// The `/app` page's content: what `get_workspace_context` and `list_pending_approvals`
    /// return (their `structuredContent`, which the card's views render), for the owner.
    Overview {
        /// The `workspace` result.
        workspace: Value,
        /// The `approvals` result.
        approvals: Value,
    },
    /// What a provider event did.
    Billing {
        /// Applied, duplicate, stale or unknown workspace.
        applied: Applied,
    },
    /// A sandbox page's session, the workspace's plan and its recent invoices.
    SandboxPage {
        /// The session.
        session: Box<PageSession>,
        /// The plan in force, by id.
        current_plan: String,
        /// Recent invoices, newest first.
        invoices: Vec<Invoice>,
    },
    /// What paying a sandbox checkout did.
    SandboxPaid {
        /// Paid (with the events applied), refused, or closed.
        outcome: Paid,
    },
    /// What the sandbox portal changed.
    SandboxCanceled {
        /// Whether a subscription was changed: ended, or moved to `to`. False when there was
        /// nothing to change.
        canceled: bool,
        /// The name of the plan it moved to, when it moved rather than ended.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        to: Option<String>,
    },
    /// The unsubscribe was recorded (whether or not the address is a known lead: the page says
    /// the same either way).
    Unsubscribed {
        /// The sending company, for the page.
        company: Option<String>,
    },
    /// No such thing for this user: the page answers 404.
    NotFound,
}

impl OpReply {
    /// The variant's name, for the log line of an answer that was not the one expected: never
    /// the answer itself, which may hold the workspace's data.
    pub fn kind(&self) -> &'static str {
        match self {
            OpReply::Approval { .. } => "approval",
            OpReply::Overview { .. } => "overview",
            OpReply::Billing { .. } => "billing",
            OpReply::SandboxPage { .. } => "sandbox_page",
            OpReply::SandboxPaid { .. } => "sandbox_paid",
            OpReply::SandboxCanceled { .. } => "sandbox_canceled",
            OpReply::Unsubscribed { .. } => "unsubscribed",
            OpReply::NotFound => "not_found",
        }
    }
}

/// Runs one op in the workspace, for a holder that keeps `opened` across ops (see [`Opened`](super::Opened)).
pub async fn handle_op(svc: &Services<'_>, opened: &super::Opened, op: Op) -> Result<OpReply, StoreError> {
    opened.migrate(svc.db, svc.now_ms)?;
    match op {
        Op::GetApproval { subject, id } => {
            Ok(match approvals::get_for_owner(svc.db, &subject, &id, svc.now_ms)? {
                Some(record) => OpReply::Approval {
                    approval: Box::new(record.view(svc.config, true, svc.now_ms)),
                    applied: false,
                },
                None => OpReply::NotFound,
            })
        }
        Op::DecideApproval { subject, id, decision } => {
            Ok(match approvals::decide_as_owner(svc, &subject, &id, decision).await? {
                Some(d) => OpReply::Approval {
                    approval: Box::new(d.record.view(svc.config, true, svc.now_ms)),
                    applied: d.applied,
                },
                None => OpReply::NotFound,
            })
        }
        Op::Overview { subject } => overview(svc, subject).await,
        Op::BillingEvent { event } => {
            Ok(OpReply::Billing { applied: billing::apply_event(svc.db, svc.config, svc.now_ms, &event)? })
        }
        Op::SandboxPage { .. } | Op::SandboxPay { .. } | Op::SandboxCancel { .. }
            if svc.config.provider_mode != ProviderMode::Sandbox =>
        {
            Ok(OpReply::NotFound)
        }
        Op::SandboxPage { kind, session } => {
            let Some(page) = sandbox_billing::page_session(svc, &kind, &session)? else {
                return Ok(OpReply::NotFound);
            };
            let current = billing::current(svc.db, svc.config)?;
            Ok(OpReply::SandboxPage {
                session: Box::new(page),
                current_plan: current.plan.id.clone(),
                invoices: billing::invoices(svc.db, 10)?,
            })
        }
        Op::SandboxPay { session, card } => {
            let Some(workspace) = super::workspace_id(svc.db)? else { return Ok(OpReply::NotFound) };
            let current = billing::current(svc.db, svc.config)?;
            let customer = current.state.as_ref().and_then(|s| s.customer.clone());
            let outcome = sandbox_billing::pay_checkout(
                svc,
                &workspace,
                &session,
                &card,
                customer.as_deref(),
                current.paying,
            )?;
            let Some(outcome) = outcome else { return Ok(OpReply::NotFound) };
            if let Paid::Paid { events } = &outcome {
                // The same path as Stripe's webhooks.
                for event in events {
                    billing::apply_event(svc.db, svc.config, svc.now_ms, event)?;
                }
            }
            Ok(OpReply::SandboxPaid { outcome })
        }
        Op::Unsubscribe { hash } => {
            super::campaigns::unsubscribe_by_hash(svc.db, &hash, svc.now_ms)?;
            let company = super::offer::load(svc.db)?.map(|(o, _)| o.company_name.unwrap_or(o.product));
            Ok(OpReply::Unsubscribed { company })
        }
        Op::SandboxCancel { session, to } => {
            let Some(workspace) = super::workspace_id(svc.db)? else { return Ok(OpReply::NotFound) };
            // A plan the form names that does not exist changes nothing: read as no plan, it
            // would cancel the subscription.
            let to = match to {
                Some(id) => match svc.config.plans.find(&id) {
                    Some(plan) => Some(plan),
                    None => return Ok(OpReply::SandboxCanceled { canceled: false, to: None }),
                },
                None => None,
            };
            let event = sandbox_billing::change_from_portal(svc, &workspace, &session, to)?;
            if let Some(event) = &event {
                billing::apply_event(svc.db, svc.config, svc.now_ms, event)?;
            }
            Ok(OpReply::SandboxCanceled {
                canceled: event.is_some(),
                to: to.filter(|_| event.is_some()).map(|p| p.name.clone()),
            })
        }
    }
}

/// The `/app` page's content, built by the very tools the assistant calls, so the page and the
/// card show the same thing. The owner reads as a connection with every scope that is not the
/// Claude app: approvals are listed with their own pages rather than decided in place.
async fn overview(svc: &Services<'_>, subject: String) -> Result<OpReply, StoreError> {
    if super::owner(svc.db)?.as_deref() != Some(subject.as_str()) {
        return Ok(OpReply::NotFound);
    }
    let principal = Principal {
        workspace: super::workspace_id(svc.db)?.unwrap_or_default(),
        subject,
        client_id: WEB_CLIENT.into(),
        scopes: ScopeSet::FULL,
        app: false,
        grant_id: None,
    };
    let cx = ToolCx {
        db: svc.db,
        principal: &principal,
        config: svc.config,
        now_ms: svc.now_ms,
        request_id: WEB_CLIENT,
        outbound: svc.outbound,
    };
    let workspace = <GetWorkspaceContext as Tool>::call(&GetWorkspaceContext, &cx, NoArguments {})
        .await
        .map_err(refused)?;
    let approvals = <ListPendingApprovals as Tool>::call(&ListPendingApprovals, &cx, NoArguments {})
        .await
        .map_err(refused)?;
    Ok(OpReply::Overview { workspace: to_value(&workspace.data)?, approvals: to_value(&approvals.data)? })
}

/// The client recorded for what the owner does on the VibeSell web page.
const WEB_CLIENT: &str = "web";

fn refused(r: Refusal) -> StoreError {
    // Reading tools only refuse when storage fails.
    StoreError::Sql(format!("overview: {r:?}"))
}

fn to_value<T: Serialize>(data: &T) -> Result<Value, StoreError> {
    serde_json::to_value(data).map_err(|e| StoreError::Document(e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// `tag`: an op and its reply cross to the object tagged by `op` and `reply`, beside their
    /// members, and a nested tagged enum keeps its own tag.
    #[test]
    fn ops_and_replies_are_tagged_in_place() {
        let op = serde_json::to_value(Op::SandboxCancel { session: "bps_1".into(), to: None }).unwrap();
        assert_eq!(op, json!({"op": "sandbox_cancel", "session": "bps_1"}));
        let read: Op = serde_json::from_value(json!({"op": "unsubscribe", "hash": "h"})).unwrap();
        assert!(matches!(read, Op::Unsubscribe { hash } if hash == "h"));
        let reply = OpReply::SandboxPaid { outcome: Paid::Refused { reason: "declined".into() } };
        let text = serde_json::to_string(&reply).unwrap();
        assert_eq!(text, r#"{"reply":"sandbox_paid","outcome":{"outcome":"refused","reason":"declined"}}"#);
        assert_eq!(serde_json::from_str::<OpReply>(&text).unwrap(), reply);
        assert_eq!(serde_json::from_str::<OpReply>(r#"{"reply":"not_found"}"#).unwrap(), OpReply::NotFound);
        let e = serde_json::from_str::<OpReply>(r#"{"reply":"later"}"#).unwrap_err().to_string();
        assert!(e.starts_with("unknown variant `later`"), "{e}");
        assert!(
            serde_json::from_value::<Op>(json!({"unsubscribe": {"hash": "h"}})).is_err(),
            "untagged form"
        );
    }
}

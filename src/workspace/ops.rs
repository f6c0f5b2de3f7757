//! Requests to a workspace's Durable Object that are not MCP tool calls: the VibeSell web page
//! deciding an approval for its signed-in owner, verified provider webhooks, and the sandbox
//! providers' own pages. The Worker reaches them through `http::Workspaces::op`; the Durable
//! Object runs [`handle_op`] next to the data, like a tool call.

use serde::{Deserialize, Serialize};

use super::Services;
use super::approvals::{self, Approval, Decision};
use super::migrations;
use crate::store::StoreError;

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
    /// No such thing for this user: the page answers 404.
    NotFound,
}

/// Runs one op in the workspace.
pub async fn handle_op(svc: &Services<'_>, op: Op) -> Result<OpReply, StoreError> {
    migrations::apply(svc.db, svc.now_ms)?;
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
    }
}

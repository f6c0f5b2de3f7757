//! Approval tools: what is waiting for the user (`list_pending_approvals`) and the user's
//! decision from the card (`decide_approval`, app-only, PRODUCT §3 and §6). The tools that ask
//! for approvals answer with the shared `approval` result of `workspace::approvals`.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::registry::{Access, Hints, Refusal, Reply, Tool, ToolCx};
use super::workspace::NoArguments;
use crate::workspace::approvals::{self, Actor, Approval, ApprovalResult, Decision};

/// The most approvals listed.
const LISTED: i64 = 25;

// ---- list_pending_approvals --------------------------------------------------------------

/// `list_pending_approvals`: the approvals waiting for the user.
pub struct ListPendingApprovals;

/// The approvals waiting for the user.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(tag = "kind", rename = "approvals", rename_all = "camelCase")]
pub struct ApprovalsView {
    /// Newest first (at most 25).
    pub approvals: Vec<Approval>,
    /// How many are open in all.
    pub total: i64,
}

impl Tool for ListPendingApprovals {
    type Input = NoArguments;
    type Output = ApprovalsView;
    const NAME: &'static str = "list_pending_approvals";
    const TITLE: &'static str = "List pending approvals";
    const DESCRIPTION: &'static str = "Lists the approvals waiting for the user's decision (plan upgrades, \
        lead imports, sending setup orders, campaign launches, stops and resumes), newest first, each with \
        its summary, impact, expiry and the link where the user decides. Also shows approvals the user \
        approved that are still being carried out. Use it to follow up on an approval; only the user \
        decides them.";
    const ACCESS: Access = Access::Read;
    const HINTS: Hints = Hints { idempotent: true, open_world: false };

    async fn call(&self, cx: &ToolCx<'_>, _: NoArguments) -> Result<Reply<ApprovalsView>, Refusal> {
        let here = approvals::decides_here(cx);
        let open = approvals::open_now(cx.db, cx.now_ms, LISTED)?;
        let list: Vec<Approval> = open.newest.iter().map(|r| r.view(cx.config, here, cx.now_ms)).collect();
        let total = open.count;
        let text = if list.is_empty() {
            "No approval is waiting for the user.".to_owned()
        } else {
            let mut t = format!("**{total} approval(s) open:**\n");
            for a in &list {
                let state =
                    if a.result.is_some() { "approved, being carried out" } else { "waiting for the user" };
                t.push_str(&format!(
                    "- {} — `{}`, {state}, expires {} (id `{}`)\n",
                    a.summary,
                    a.action,
                    crate::dates::utc_minute(a.expires_at),
                    a.id
                ));
            }
            t.push_str(if here {
                "\nThe user decides each one in the card."
            } else {
                "\nThe user decides each one on the VibeSell page at its appUrl, which they open themselves."
            });
            t.push_str(" Never decide for them.");
            t
        };
        Ok(Reply::new(text, ApprovalsView { approvals: list, total }))
    }
}

// ---- decide_approval ---------------------------------------------------------------------

/// `decide_approval`: the user's Approve or Reject, sent by the card (hidden from the model).
pub struct DecideApproval;

/// The user's decision on one approval.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DecideApprovalInput {
    /// The approval's id (`apr_…`), from its `approval` result.
    #[schemars(length(min = 4, max = 64))]
    pub id: String,
    /// What the user chose: `approve` carries the action out, `reject` drops it.
    pub decision: Decision,
}

impl Tool for DecideApproval {
    type Input = DecideApprovalInput;
    type Output = ApprovalResult;
    const NAME: &'static str = "decide_approval";
    const TITLE: &'static str = "Decide an approval";
    const DESCRIPTION: &'static str = "Records the user's own decision on an approval, sent by the VibeSell \
        card when the user clicks Approve or Reject. Approving carries the action out exactly once; a \
        failed action is not_done with the reason and nothing charged. Deciding an approval that is no \
        longer pending changes nothing and returns its outcome. Returns the approval.";
    const ACCESS: Access = Access::App;
    const HINTS: Hints = Hints { idempotent: true, open_world: true };

    async fn call(
        &self,
        cx: &ToolCx<'_>,
        input: DecideApprovalInput,
    ) -> Result<Reply<ApprovalResult>, Refusal> {
        let actor = Actor { subject: &cx.principal.subject, client: &cx.principal.client_id };
        let id = input.id.trim();
        let Some(decided) = approvals::decide(&cx.services(), actor, id, input.decision).await? else {
            return Err(Refusal::guidance(format!(
                "There is no approval `{id}` in this workspace. Call list_pending_approvals for the \
                 approvals waiting for the user."
            )));
        };
        let approval = decided.record.view(cx.config, approvals::decides_here(cx), cx.now_ms);
        let mut text = approvals::text(&approval, false);
        if !decided.applied {
            text = format!("This approval was already decided; nothing more was done.\n{text}");
        }
        Ok(Reply::new(text, ApprovalResult { approval }))
    }
}

//! The approval engine (PRODUCT §6): every step that spends money, sends email or cannot be
//! undone becomes an approval that the user, never the model, decides.
//!
//! - **Request** ([`request`]): an approval tool freezes its action and canonical arguments.
//!   Asking again for the same action with the same arguments while one is open returns it. The
//!   action's [`Action::propose`] writes the summary and impact from real figures first.
//! - **Expiry**: each approval expires (`expiresAt`, 24 hours unless the action says otherwise);
//!   the [`ExpireApproval`] job, scheduled with it, turns it into `not_done` with the reason.
//! - **Decision** ([`decide`]): one conditional `UPDATE … WHERE status = 'pending' … RETURNING`
//!   picks the single winner among concurrent decisions; the others get the outcome.
//! - **Execution**: the action's executor, found by name in [`ACTIONS`], runs with an
//!   idempotency key derived from the approval id, so a retried provider call never acts twice.
//!   Its local writes land in one batch with the `done` status; a failure is `not_done` with the
//!   reason and writes nothing. A crash mid-execution is finished by the [`FinishExecution`]
//!   watchdog job, which runs the executor again with the same key.
//! - **Audit**: database triggers record every change of status in `approval_audit` (who, when,
//!   from which client, from what to what), in the same transaction as the change.
//!
//! To add an approval action: implement [`Action`] in the file of its area, list it in
//! [`ACTIONS`], and call [`request`] from its tool, which returns the shared `approval` result.

use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::Services;
use super::schedule::{self, Job, JobCx, JobError};
use crate::config::Config;
use crate::outbound::Outbound;
use crate::plans::{Limit, Money};
use crate::store::{Db, Stmt, StoreError, from_document, to_document};
use crate::tools::registry::{Access, LocalBoxFuture, Refusal, Reply, ToolCx};

/// How long an approval waits for the user unless its action says otherwise (PRODUCT §6).
pub const DEFAULT_TTL_MS: i64 = 24 * 3_600_000;
/// When the watchdog finishes an execution that did not report back (a crash, an eviction),
/// unless the deployment says otherwise ([`Config::watchdog_ms`], for tests).
const WATCHDOG_MS: i64 = 60_000;

fn watchdog_ms(config: &Config) -> i64 {
    config.watchdog_ms.unwrap_or(WATCHDOG_MS)
}
/// When an execution that advanced ([`ExecError::Progress`]) goes on.
const PROGRESS_STEP_MS: i64 = 1_000;
/// Why the watchdog gave up: the outcome is unknown, so the approval cannot say that nothing was
/// done ([`text`] leaves that sentence out for it).
pub(crate) const UNCONFIRMED: &str = "VibeSell could not confirm the outcome with the provider, so part of it may have been \
                           carried out. Contact support (contact_support) with this approval's id so the team can \
                           check it.";
/// After this many watchdog runs without a definite outcome, the approval is `not_done`.
const MAX_EXECUTION_ATTEMPTS: u32 = 16;
/// How long a concurrent decision waits for the winner's execution to finish.
const WAIT_FOR_OUTCOME_MS: u32 = 15_000;
const WAIT_STEP_MS: u32 = 200;
/// The actor and client recorded for changes VibeSell makes itself (expiry, execution).
const SYSTEM: &str = "vibesell";

// ---- actions -----------------------------------------------------------------------------

/// What the server says about an approval before the user decides: written from real figures.
#[derive(Debug, Clone, PartialEq)]
pub struct Proposal {
    /// One line: what will be done ("Upgrade from Starter to Growth").
    pub summary: String,
    /// The consequences, one sentence each, with figures: money, emails, leads, what can't be
    /// undone.
    pub impact: Vec<String>,
    /// The money it costs, when it costs money.
    pub cost: Option<Money>,
    /// Whether it cannot be undone.
    pub irreversible: bool,
}

/// A successful execution.
#[derive(Debug)]
pub struct Executed {
    /// What was done, for the user ("Now on Growth; $66.33 charged").
    pub result: String,
    /// The workspace writes that record it, committed in one batch with the `done` status.
    pub writes: Vec<Stmt>,
}

/// Why an execution did not succeed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ExecError {
    /// Definitely not done, and nothing was charged or changed; the reason is shown to the user,
    /// so it must be safe to show ("The card was declined").
    #[error("failed: {0}")]
    Failed(String),
    /// The outcome is unknown (a timeout, a 5xx): it is retried later with the same idempotency
    /// key, which the provider uses to avoid acting twice. The text is for the log.
    #[error("unknown outcome: {0}")]
    Unknown(String),
    /// Storage failed; retried later like `Unknown`.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// Not finished, but it advanced (an import that brought in one more slice of its leads): it
    /// goes on shortly, and unlike `Unknown` this is no failure, so it never uses up the
    /// attempts after which the watchdog gives up. The text is for the log.
    #[error("in progress: {0}")]
    Progress(String),
}

/// What an executor sees.
pub struct ExecCx<'a> {
    /// The workspace's database (read what is needed; write only through [`Executed::writes`]).
    pub db: &'a dyn Db,
    /// Deployment configuration.
    pub config: &'a Config,
    /// Outbound HTTP for provider adapters.
    pub outbound: &'a dyn Outbound,
    /// The platform clock.
    pub now_ms: i64,
    /// The workspace id (for provider metadata).
    pub workspace: &'a str,
    /// The approval being executed.
    pub approval_id: &'a str,
    /// When the user approved it (ms): nothing done for it at a provider is older.
    pub decided_at: i64,
}

impl ExecCx<'_> {
    /// The idempotency key of one provider call of this execution: the same on every retry of
    /// the same approval, different for each `step` ("subscription", "order", …).
    pub fn idempotency_key(&self, step: &str) -> String {
        format!("vibesell-{}-{step}", self.approval_id)
    }

    /// Whether this is the run the decision itself started, so that no earlier run can have
    /// reached a provider: that run reads the clock once with the decision, and every later one
    /// (the watchdog) runs at least a second after it.
    pub fn first_run(&self) -> bool {
        self.now_ms == self.decided_at
    }
}

/// One kind of action that needs the user's approval, declared once.
#[allow(async_fn_in_trait)] // Futures need not be Send on a single-threaded isolate.
pub trait Action: Sync + 'static {
    /// The frozen arguments. Serialised canonically: the same arguments give the same hash.
    type Args: Serialize + DeserializeOwned;
    /// The action's name, stored with each approval and shown as `action` (the tool's name).
    const NAME: &'static str;
    /// How long the approval waits for the user.
    const TTL_MS: i64 = DEFAULT_TTL_MS;
    /// The plan limit whose gauge the execution fills (active campaigns, mailboxes).
    /// Executions filling the same one run one at a time in a workspace: each checks the limit
    /// before its provider call and counts itself after it, so two at once could both pass it.
    const LIMIT: Option<Limit> = None;
    /// Executions of this action run one at a time in a workspace, as those filling a limit do,
    /// for an action that reads a state its own execution changes at the provider (the plan an
    /// upgrade starts from).
    const SERIAL: bool = false;

    /// Checks the prerequisites and writes the summary and impact from real figures, or refuses.
    async fn propose(&self, cx: &ToolCx<'_>, args: &Self::Args) -> Result<Proposal, Refusal>;

    /// Carries the action out, exactly once per approval: provider calls use
    /// [`ExecCx::idempotency_key`]; local writes go in [`Executed::writes`]. On failure nothing
    /// may be left half-done at the provider.
    async fn execute(&self, cx: &ExecCx<'_>, args: Self::Args) -> Result<Executed, ExecError>;
}

/// The object-safe view of an [`Action`], used to execute by name.
pub trait DynAction: Sync {
    /// The action's name.
    fn name(&self) -> &'static str;
    /// The lane whose executions run one at a time in a workspace: the limit filled, or the
    /// action itself when [`Action::SERIAL`].
    fn lane(&self) -> Option<&'static str>;
    /// Decodes the frozen arguments and executes.
    fn execute<'a>(
        &'a self,
        cx: &'a ExecCx<'a>,
        args: &'a str,
    ) -> LocalBoxFuture<'a, Result<Executed, ExecError>>;
}

impl<A: Action> DynAction for A {
    fn name(&self) -> &'static str {
        A::NAME
    }
    fn lane(&self) -> Option<&'static str> {
        A::LIMIT.map(Limit::as_str).or(A::SERIAL.then_some(A::NAME))
    }
    fn execute<'a>(
        &'a self,
        cx: &'a ExecCx<'a>,
        args: &'a str,
    ) -> LocalBoxFuture<'a, Result<Executed, ExecError>> {
        Box::pin(async move {
            let args: A::Args = match from_document(args) {
                Ok(args) => args,
                Err(e) => {
                    // The stored arguments no longer fit the action (a deploy changed it).
                    return Err(ExecError::Failed(format!(
                        "This approval was made for an older version of {} and cannot be carried out ({e}); ask again.",
                        A::NAME
                    )));
                }
            };
            Action::execute(self, cx, args).await
        })
    }
}

/// Every action that can be approved. To add one: implement [`Action`] and list it here.
pub const ACTIONS: &[&dyn DynAction] = &[
    &super::billing::UpgradePlan,
    &super::leads::ImportLeads,
    &crate::tools::sending::OrderSendingSetup,
    &crate::tools::campaigns::LaunchCampaign,
    &crate::tools::campaigns::StopCampaign,
    &crate::tools::campaigns::ResumeCampaign,
];

/// The action named `name`.
pub fn find_action(name: &str) -> Option<&'static dyn DynAction> {
    ACTIONS.iter().copied().find(|a| a.name() == name).or_else(|| test_action(name))
}

#[cfg(test)]
fn test_action(name: &str) -> Option<&'static dyn DynAction> {
    crate::testing::ACTIONS.iter().copied().find(|a| a.name() == name)
}
#[cfg(not(test))]
fn test_action(_: &str) -> Option<&'static dyn DynAction> {
    None
}

// ---- the stored approval -------------------------------------------------------------------

/// An approval's stored state. `executing` is internal: approved, being carried out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum State {
    /// Waiting for the user.
    Pending,
    /// Approved; the executor is running.
    Executing,
    /// Carried out.
    Done,
    /// Not carried out: expired, or the execution failed (see `result`).
    NotDone,
    /// Rejected by the user.
    Rejected,
}

/// An approval as stored.
#[derive(Debug, Clone, PartialEq)]
pub struct Record {
    /// `apr_…`.
    pub id: String,
    /// The action's name.
    pub action: String,
    /// The frozen arguments, canonical JSON.
    pub args: String,
    /// What will be done.
    pub summary: String,
    /// Its consequences.
    pub impact: Vec<String>,
    /// What it costs.
    pub cost: Option<Money>,
    /// Whether it cannot be undone.
    pub irreversible: bool,
    /// Where it stands.
    pub state: State,
    /// What was done, or why not.
    pub result: Option<String>,
    /// Created (ms).
    pub created_at: i64,
    /// Expires (ms).
    pub expires_at: i64,
    /// Decided (ms).
    pub decided_at: Option<i64>,
}

#[derive(Deserialize)]
struct Row {
    id: String,
    action: String,
    args: String,
    summary: String,
    impact: String,
    cost: Option<String>,
    irreversible: i64,
    status: State,
    result: Option<String>,
    created_at: i64,
    expires_at: i64,
    decided_at: Option<i64>,
}

impl TryFrom<Row> for Record {
    type Error = StoreError;
    fn try_from(r: Row) -> Result<Record, StoreError> {
        Ok(Record {
            impact: from_document(&r.impact)?,
            cost: r.cost.as_deref().map(from_document).transpose()?,
            irreversible: r.irreversible != 0,
            id: r.id,
            action: r.action,
            args: r.args,
            summary: r.summary,
            state: r.status,
            result: r.result,
            created_at: r.created_at,
            expires_at: r.expires_at,
            decided_at: r.decided_at,
        })
    }
}

fn decode(rows: Vec<Row>) -> Result<Vec<Record>, StoreError> {
    rows.into_iter().map(Record::try_from).collect()
}

/// One approval by id.
pub fn load(db: &dyn Db, id: &str) -> Result<Option<Record>, StoreError> {
    let rows: Vec<Row> = db.rows(
        "SELECT id, action, args, summary, impact, cost, irreversible, status, result, created_at, expires_at, decided_at \
         FROM approvals WHERE id = ?",
        vec![id.into()],
    )?;
    Ok(decode(rows)?.into_iter().next())
}

/// The open approvals at `now_ms`, after the overdue ones expired: the newest ones (at most
/// `limit`) and how many there are in all.
#[derive(Debug)]
pub struct OpenApprovals {
    /// Newest first.
    pub newest: Vec<Record>,
    /// How many are open in all.
    pub count: i64,
}

/// How many approvals are pending or executing, and the earliest expiry among the pending ones.
/// The statement does not take the time, so a holder that remembers reads
/// ([`crate::store::Remembering`]) answers it again without SQLite until the next write.
struct Tally {
    count: i64,
    next_expiry: Option<i64>,
}

fn tally(db: &dyn Db) -> Result<Tally, StoreError> {
    let rows = db.query(Stmt::new(
        "SELECT COUNT(*), MIN(CASE WHEN status = 'pending' THEN expires_at END) \
         FROM approvals WHERE status IN ('pending', 'executing')",
        vec![],
    ))?;
    Ok(Tally { count: rows.first_i64(0).unwrap_or(0), next_expiry: rows.first_i64(1) })
}

/// The approvals waiting for the user or being carried out: expires the overdue ones, then
/// reads the open ones ([`OpenApprovals`]), in two statements when none is overdue and one when
/// none is open. Once nothing pending is overdue, "pending and not expired, or executing" is
/// simply "pending or executing", so neither read takes the time; this holds because no await
/// separates the expiry from the reads.
pub fn open_now(db: &dyn Db, now_ms: i64, limit: i64) -> Result<OpenApprovals, StoreError> {
    let mut open = tally(db)?;
    if open.next_expiry.is_some_and(|at| at <= now_ms) {
        expire(db, now_ms)?;
        open = tally(db)?;
    }
    let newest = if open.count == 0 {
        Vec::new()
    } else {
        decode(db.rows(
            "SELECT id, action, args, summary, impact, cost, irreversible, status, result, created_at, expires_at, decided_at \
             FROM approvals WHERE status IN ('pending', 'executing') ORDER BY created_at DESC, id LIMIT ?",
            vec![limit.into()],
        )?)?
    };
    Ok(OpenApprovals { newest, count: open.count })
}

/// One entry of an approval's audit trail.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AuditEntry {
    /// When (ms).
    pub at: i64,
    /// Who: the user's subject, or `vibesell` for expiry and execution.
    pub actor: String,
    /// From which client: the OAuth client id, `web` for the VibeSell page, `vibesell`.
    pub client: String,
    /// The status before (absent on creation).
    #[serde(alias = "from_status", skip_serializing_if = "Option::is_none")]
    pub from_status: Option<String>,
    /// The status after.
    #[serde(alias = "to_status")]
    pub to_status: String,
    /// The summary on creation, the result or reason afterwards.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// An approval's audit trail, oldest first.
pub fn audit(db: &dyn Db, id: &str) -> Result<Vec<AuditEntry>, StoreError> {
    db.rows(
        "SELECT at, actor, client, from_status, to_status, note FROM approval_audit WHERE approval_id = ? ORDER BY seq",
        vec![id.into()],
    )
}

// ---- the wire type shared by every approval tool ------------------------------------------

/// An approval's status on the wire (PRODUCT §6). An approved action still being carried out
/// is `pending`, with `result` saying so.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// Waiting for the user (or, once approved, being carried out).
    Pending,
    /// Carried out.
    Done,
    /// Not carried out: expired, or failed with nothing charged (see `result`).
    NotDone,
    /// Rejected by the user.
    Rejected,
}

/// An approval as tools show it: the shared shape of `kind: "approval"` results and of each
/// item of `list_pending_approvals`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Approval {
    /// The approval's id (`apr_…`), for `decide_approval`.
    pub id: String,
    /// Where it stands.
    pub status: Status,
    /// The action it approves (the tool that asked for it).
    pub action: String,
    /// What will be done, in one line.
    pub summary: String,
    /// The consequences, written by VibeSell from real figures: money, emails, leads, what
    /// can't be undone.
    pub impact: Vec<String>,
    /// What it costs, when it costs money.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cost: Option<Money>,
    /// Whether it cannot be undone.
    pub irreversible: bool,
    /// When it was asked for (ms since the epoch).
    pub created_at: i64,
    /// After this time (ms since the epoch) it can no longer be approved.
    pub expires_at: i64,
    /// When the user decided (ms since the epoch).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub decided_at: Option<i64>,
    /// What was done, or why it was not.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub result: Option<String>,
    /// Whether this client can show Approve and Reject in the card (the Claude app).
    pub decide_here: bool,
    /// The VibeSell page where the user decides otherwise; only the user opens it.
    pub app_url: String,
}

/// The `approval` result of the approval tools and `decide_approval`.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(tag = "kind", rename = "approval", rename_all = "camelCase")]
pub struct ApprovalResult {
    /// The approval.
    #[serde(flatten)]
    pub approval: Approval,
}

impl Record {
    /// The wire view. `can_decide_here`: the viewer is a client that shows decisions in the card.
    pub fn view(&self, config: &Config, can_decide_here: bool, now_ms: i64) -> Approval {
        let (status, result) = match self.state {
            State::Pending => (Status::Pending, None),
            State::Executing => {
                (Status::Pending, Some("Approved by the user; VibeSell is carrying it out.".to_owned()))
            }
            State::Done => (Status::Done, self.result.clone()),
            State::NotDone => (Status::NotDone, self.result.clone()),
            State::Rejected => (Status::Rejected, self.result.clone()),
        };
        Approval {
            id: self.id.clone(),
            status,
            action: self.action.clone(),
            summary: self.summary.clone(),
            impact: self.impact.clone(),
            cost: self.cost.clone(),
            irreversible: self.irreversible,
            created_at: self.created_at,
            expires_at: self.expires_at,
            decided_at: self.decided_at,
            result,
            decide_here: can_decide_here && self.state == State::Pending && now_ms < self.expires_at,
            app_url: config.approval_url(&self.id),
        }
    }
}

/// Whether `cx`'s client decides in the card: it may call `decide_approval` (PRODUCT §3, §6).
pub fn decides_here(cx: &ToolCx<'_>) -> bool {
    Access::App.allows(cx.principal)
}

/// The Markdown text for the model about an approval, the same for every approval tool.
/// `fresh`: it was just created (rather than found already open).
pub fn text(a: &Approval, fresh: bool) -> String {
    let mut t = String::new();
    let impact = |t: &mut String| {
        for line in &a.impact {
            t.push_str(&format!("- {line}\n"));
        }
        if a.irreversible {
            t.push_str("- **This cannot be undone.**\n");
        }
    };
    match a.status {
        Status::Pending if a.result.is_some() => {
            t.push_str(&format!("**Approved, being carried out:** {}\n", a.summary));
            t.push_str(
                "VibeSell is finishing it; call list_pending_approvals in a moment to see the outcome.",
            );
        }
        Status::Pending => {
            if fresh {
                t.push_str(&format!("**Approval needed:** {}\n", a.summary));
            } else {
                t.push_str(&format!(
                    "**Already waiting for the user** (same action and arguments): {}\n",
                    a.summary
                ));
            }
            impact(&mut t);
            if a.decide_here {
                t.push_str("\nThe user approves or rejects it in the card shown with this result.");
            } else {
                t.push_str(&format!(
                    "\nThe user decides on the VibeSell page; give them this link to open themselves: {}",
                    a.app_url
                ));
            }
            t.push_str(&format!(
                " It expires at {}. Only the user decides: do not approve it for them or press them; \
                 wait for their decision, then check it with list_pending_approvals.",
                crate::dates::utc_minute(a.expires_at)
            ));
        }
        Status::Done => {
            t.push_str(&format!("**Done:** {}\n", a.summary));
            if let Some(result) = &a.result {
                t.push_str(result);
            }
        }
        Status::NotDone => {
            t.push_str(&format!("**Not done:** {}\n", a.summary));
            if let Some(result) = &a.result {
                t.push_str(result);
            }
            if a.result.as_deref() != Some(UNCONFIRMED) {
                t.push_str(" Nothing was carried out or charged. If it is still wanted, ask for it again.");
            }
        }
        Status::Rejected => {
            t.push_str(&format!("**Rejected by the user:** {}\n", a.summary));
            t.push_str("Nothing was done. Do not ask again unless the user brings it up.");
        }
    }
    t
}

// ---- request -----------------------------------------------------------------------------

/// Canonical JSON: object keys sorted at every level, no whitespace.
pub fn canonical_json(value: &Value) -> String {
    match value {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            let fields: Vec<String> = keys
                .into_iter()
                .map(|k| format!("{}:{}", Value::from(k.as_str()), canonical_json(&map[k])))
                .collect();
            format!("{{{}}}", fields.join(","))
        }
        Value::Array(items) => {
            format!("[{}]", items.iter().map(canonical_json).collect::<Vec<_>>().join(","))
        }
        scalar => scalar.to_string(),
    }
}

fn find_open(db: &dyn Db, action: &str, hash: &str) -> Result<Option<Record>, StoreError> {
    let rows: Vec<Row> = db.rows(
        "SELECT id, action, args, summary, impact, cost, irreversible, status, result, created_at, expires_at, decided_at \
         FROM approvals WHERE action = ? AND args_hash = ? AND status IN ('pending', 'executing')",
        vec![action.into(), hash.into()],
    )?;
    Ok(decode(rows)?.into_iter().next())
}

/// Asks for the user's approval of `action` with `args`. The action is proposed again even when
/// an approval for the same action and arguments is open: the prerequisites and figures are
/// checked as they are now (a refusal is answered; the open approval stays, and its execution
/// checks again). The open approval is answered when it still says the same; when its figures
/// changed it is replaced, so that what the user is shown is never stale. The result is what
/// every approval tool answers.
///
/// Only encoding the arguments and proposing depend on `A`; the rest is in [`key`] and
/// [`create`], which exist once in the Worker rather than once per action.
pub async fn request<A: Action>(
    cx: &ToolCx<'_>,
    action: &A,
    args: A::Args,
) -> Result<Reply<ApprovalResult>, Refusal> {
    let value = serde_json::to_value(&args).map_err(|e| Refusal::Internal(format!("arguments: {e}")))?;
    let (canonical, hash) = match key(cx, A::NAME, &value)? {
        Ok(key) => key,
        Err(executing) => return Ok(executing),
    };
    let proposal = action.propose(cx, &args).await?;
    create(cx, A::NAME, A::TTL_MS, canonical, hash, proposal)
}

/// The canonical arguments and their hash, once the overdue approvals have expired; or the
/// reply of an approval for the same action and arguments that is being carried out, answered
/// as it stands (proposing it again would only describe the state it is changing). Not generic,
/// so that it exists once in the Worker rather than once per action.
fn key(
    cx: &ToolCx<'_>,
    name: &str,
    args: &Value,
) -> Result<Result<(String, String), Reply<ApprovalResult>>, Refusal> {
    if find_action(name).is_none() {
        return Err(Refusal::Internal(format!("action {name} is not listed in approvals::ACTIONS")));
    }
    let canonical = canonical_json(args);
    let hash = crate::ids::sha256_hex(format!("{name}\n{canonical}").as_bytes());
    expire_overdue(cx.db, cx.now_ms)?;
    if let Some(open) = find_open(cx.db, name, &hash)?.filter(|r| r.state == State::Executing) {
        return Ok(Err(reply(cx, &open, false)));
    }
    Ok(Ok((canonical, hash)))
}

/// Why an open approval was closed without a decision: a request for the same action and
/// arguments found other figures, and a new approval took its place. The web page tells it from
/// an expiry by this text, the only trace of it.
pub const REPLACED: &str =
    "Replaced: the figures changed, and a newer approval with the current ones took its place.";

/// Writes the proposed approval with its expiry job; answers the open approval for the same
/// action and arguments instead when it says the same, or replaces it when it does not.
fn create(
    cx: &ToolCx<'_>,
    name: &'static str,
    ttl_ms: i64,
    canonical: String,
    hash: String,
    proposal: Proposal,
) -> Result<Reply<ApprovalResult>, Refusal> {
    // No await from here to the write, so nothing else runs in this Durable Object meanwhile;
    // the unique index on open approvals backs this up.
    let mut writes = Vec::with_capacity(3);
    if let Some(existing) = find_open(cx.db, name, &hash)? {
        let same = existing.summary == proposal.summary
            && existing.impact == proposal.impact
            && existing.cost == proposal.cost
            && existing.irreversible == proposal.irreversible;
        if same || existing.state != State::Pending {
            return Ok(reply(cx, &existing, false));
        }
        writes.push(Stmt::new(
            "UPDATE approvals SET status = 'not_done', result = ?, finished_at = ?, updated_at = ?, updated_by = ?, \
             updated_client = ? WHERE id = ? AND status = 'pending'",
            vec![
                REPLACED.into(),
                cx.now_ms.into(),
                cx.now_ms.into(),
                cx.principal.subject.clone().into(),
                cx.principal.client_id.clone().into(),
                existing.id.into(),
            ],
        ));
    }
    let id = crate::ids::random_id("apr_");
    let expires_at = cx.now_ms + cx.config.approval_ttl_ms.unwrap_or(ttl_ms);
    let cost = proposal.cost.as_ref().map(to_document).transpose()?;
    writes.push(Stmt::new(
        "INSERT INTO approvals (id, action, args, args_hash, summary, impact, cost, irreversible, status, \
         created_at, expires_at, updated_at, updated_by, updated_client) \
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, 'pending', ?, ?, ?, ?, ?)",
        vec![
            id.clone().into(),
            name.into(),
            canonical.into(),
            hash.into(),
            proposal.summary.into(),
            to_document(&proposal.impact)?.into(),
            cost.into(),
            proposal.irreversible.into(),
            cx.now_ms.into(),
            expires_at.into(),
            cx.now_ms.into(),
            cx.principal.subject.clone().into(),
            cx.principal.client_id.clone().into(),
        ],
    ));
    writes.push(schedule::at::<ExpireApproval>(&id, expires_at));
    cx.db.batch(writes)?;
    let record = load(cx.db, &id)?.ok_or_else(|| Refusal::Internal(format!("approval {id} vanished")))?;
    Ok(reply(cx, &record, true))
}

fn reply(cx: &ToolCx<'_>, record: &Record, fresh: bool) -> Reply<ApprovalResult> {
    let approval = record.view(cx.config, decides_here(cx), cx.now_ms);
    Reply::new(text(&approval, fresh), ApprovalResult { approval })
}

// ---- expiry ------------------------------------------------------------------------------

const EXPIRED: &str = "Expired: the user did not decide before it expired.";

/// Turns every pending approval past its expiry into `not_done`, whether or not its alarm has
/// fired yet, so no path can approve it late.
pub fn expire_overdue(db: &dyn Db, now_ms: i64) -> Result<(), StoreError> {
    // Nothing is overdue on almost every call, and a read finds that out without the write
    // transaction an `UPDATE` opens even when it changes no row (about 5% of a
    // `get_workspace_context` call's CPU: bench/README.md, "Where tools/call spends its time");
    // the read is `tally`'s, which does not take the time, so it is remembered between writes.
    if tally(db)?.next_expiry.is_some_and(|at| at <= now_ms) {
        expire(db, now_ms)?;
    }
    Ok(())
}

fn expire(db: &dyn Db, now_ms: i64) -> Result<(), StoreError> {
    db.batch(vec![Stmt::new(
        "UPDATE approvals SET status = 'not_done', result = ?, finished_at = ?, updated_at = ?, updated_by = ?, updated_client = ? \
         WHERE status = 'pending' AND expires_at <= ?",
        vec![EXPIRED.into(), now_ms.into(), now_ms.into(), SYSTEM.into(), SYSTEM.into(), now_ms.into()],
    )])?;
    Ok(())
}

/// The job that expires one approval at its `expiresAt`.
pub struct ExpireApproval;

impl Job for ExpireApproval {
    const NAME: &'static str = "expire_approval";

    async fn run(&self, cx: &JobCx<'_>, id: &str) -> Result<(), JobError> {
        let Some(record) = load(cx.db, id)? else { return Ok(()) };
        if record.state != State::Pending {
            return Ok(());
        }
        if record.expires_at > cx.now_ms {
            // Woken early (clock skew): come back at the right time.
            cx.db.batch(vec![schedule::at::<ExpireApproval>(id, record.expires_at)])?;
            return Ok(());
        }
        cx.db.batch(vec![Stmt::new(
            "UPDATE approvals SET status = 'not_done', result = ?, finished_at = ?, updated_at = ?, updated_by = ?, updated_client = ? \
             WHERE id = ? AND status = 'pending' AND expires_at <= ?",
            vec![
                EXPIRED.into(),
                cx.now_ms.into(),
                cx.now_ms.into(),
                SYSTEM.into(),
                SYSTEM.into(),
                id.into(),
                cx.now_ms.into(),
            ],
        )])?;
        Ok(())
    }
}

// ---- decision and execution ---------------------------------------------------------------

/// The user's decision.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Decision {
    /// Carry it out.
    Approve,
    /// Do not.
    Reject,
}

/// Who decides: the user's subject and the client they decide from.
#[derive(Debug, Clone, Copy)]
pub struct Actor<'a> {
    /// The user (token `sub`, or the signed-in user of the web page).
    pub subject: &'a str,
    /// The OAuth client id, or `web` for the VibeSell page.
    pub client: &'a str,
}

/// The outcome of [`decide`].
#[derive(Debug, Clone, PartialEq)]
pub struct Decided {
    /// The approval afterwards.
    pub record: Record,
    /// Whether this call made the decision (false: it was already decided, and `record` is the
    /// outcome of that earlier decision).
    pub applied: bool,
}

/// Decides approval `id` as `actor`: exactly one of any number of concurrent decisions is
/// applied, and an approval is executed at most once. Deciding an approval that is not pending
/// changes nothing and returns its state (waiting a little for an execution in progress).
/// `Ok(None)`: no such approval in this workspace.
pub async fn decide(
    svc: &Services<'_>,
    actor: Actor<'_>,
    id: &str,
    decision: Decision,
) -> Result<Option<Decided>, StoreError> {
    let db = svc.db;
    expire_overdue(db, svc.now_ms)?;
    let Some(record) = load(db, id)? else { return Ok(None) };
    match record.state {
        State::Pending => {}
        State::Executing => {
            return Ok(Some(Decided { record: wait_for_outcome(svc, id).await?, applied: false }));
        }
        State::Done | State::NotDone | State::Rejected => {
            return Ok(Some(Decided { record, applied: false }));
        }
    }
    let (status, result) = match decision {
        Decision::Approve => ("executing", None),
        Decision::Reject => ("rejected", Some("Rejected by the user.")),
    };
    // The single conditional UPDATE that picks the winner. Everything after it in the batch is
    // harmless for a loser (the expiry job of a decided approval and the watchdog of a finished
    // one are no-ops), and the audit row is written by the trigger only for the winner.
    let mut stmts = vec![
        Stmt::new(
            "UPDATE approvals SET status = ?, result = ?, decided_at = ?, updated_at = ?, updated_by = ?, updated_client = ? \
             WHERE id = ? AND status = 'pending' AND expires_at > ? RETURNING id",
            vec![
                status.into(),
                result.into(),
                svc.now_ms.into(),
                svc.now_ms.into(),
                actor.subject.into(),
                actor.client.into(),
                id.into(),
                svc.now_ms.into(),
            ],
        ),
        schedule::cancel::<ExpireApproval>(id),
    ];
    if decision == Decision::Approve {
        stmts.push(schedule::at::<FinishExecution>(id, svc.now_ms + watchdog_ms(svc.config)));
    }
    let won = db.batch(stmts)?.first().is_some_and(|rows| !rows.rows.is_empty());
    if !won {
        let record = wait_for_outcome(svc, id).await?;
        return Ok(Some(Decided { record, applied: false }));
    }
    if decision == Decision::Approve {
        let record = load(db, id)?.ok_or_else(|| StoreError::Sql(format!("approval {id} vanished")))?;
        // An unknown outcome leaves it executing for the watchdog, which tries again no sooner
        // than a minute from now however long this run took (its first try may have come and
        // gone while this one waited on the provider); storage errors propagate.
        match execute(svc, &record).await {
            Err(ExecError::Store(e)) => return Err(e),
            Err(ExecError::Unknown(_)) => {
                let ended = svc.outbound.clock_ms().unwrap_or(svc.now_ms);
                db.batch(vec![schedule::not_before::<FinishExecution>(id, ended + watchdog_ms(svc.config))])?;
            }
            _ => {}
        }
    }
    let record = load(db, id)?.ok_or_else(|| StoreError::Sql(format!("approval {id} vanished")))?;
    Ok(Some(Decided { record, applied: true }))
}

/// For the `/app/approvals/{id}` web page: the approval, if `subject` owns this workspace.
pub fn get_for_owner(
    db: &dyn Db,
    subject: &str,
    id: &str,
    now_ms: i64,
) -> Result<Option<Record>, StoreError> {
    if super::owner(db)?.as_deref() != Some(subject) {
        return Ok(None);
    }
    expire_overdue(db, now_ms)?;
    load(db, id)
}

/// For the `/app/approvals/{id}` web page: decides as the signed-in owner of this workspace,
/// exactly once (the page's double submit gets `applied: false`). `Ok(None)` when `subject` is
/// not the owner or there is no such approval: the page answers 404 either way.
pub async fn decide_as_owner(
    svc: &Services<'_>,
    subject: &str,
    id: &str,
    decision: Decision,
) -> Result<Option<Decided>, StoreError> {
    if super::owner(svc.db)?.as_deref() != Some(subject) {
        return Ok(None);
    }
    decide(svc, Actor { subject, client: "web" }, id, decision).await
}

async fn wait_for_outcome(svc: &Services<'_>, id: &str) -> Result<Record, StoreError> {
    let mut waited = 0;
    loop {
        let record = load(svc.db, id)?.ok_or_else(|| StoreError::Sql(format!("approval {id} vanished")))?;
        if record.state != State::Executing || waited >= WAIT_FOR_OUTCOME_MS {
            return Ok(record);
        }
        svc.outbound.sleep(WAIT_STEP_MS).await;
        waited += WAIT_STEP_MS;
    }
}

thread_local! {
    /// What this isolate has claimed (`Claim`): the approvals an execution is carrying out, the
    /// lanes they hold (`lane:<workspace>:<name>`, see `execute_claimed`), and a workspace's
    /// staging or launch (`tools::campaigns::staging`). A workspace is one Durable Object
    /// instance, which lives in one isolate (with others, maybe), so this sees every execution of
    /// its approvals: the watchdog firing while the decision's own execution still waits for a
    /// provider (a minute of an import's rate limits, of a Stripe change's retries) finds it here
    /// and leaves it to that one (audit finding: the import paid for the same people twice; a
    /// second plan change met Stripe's 409).
    static EXECUTING: std::cell::RefCell<Vec<String>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// An approval (or a lane, or a staging, in a workspace) claimed in this isolate until it is
/// dropped, also when its future is.
pub(crate) struct Claim(String);

impl Claim {
    /// `None` while `id` is claimed already.
    pub(crate) fn take(id: &str) -> Option<Claim> {
        EXECUTING.with(|running| {
            let mut running = running.borrow_mut();
            if running.iter().any(|r| r == id) {
                return None;
            }
            running.push(id.to_owned());
            Some(Claim(id.to_owned()))
        })
    }
}

impl Drop for Claim {
    fn drop(&mut self) {
        EXECUTING.with(|running| running.borrow_mut().retain(|r| *r != self.0));
    }
}

/// Runs the executor of an `executing` approval and records the outcome. `Unknown` and storage
/// errors leave it `executing` for the [`FinishExecution`] watchdog; one already being carried out
/// in this isolate is left to that execution, and one that advanced goes on a second later
/// (`Progress`).
async fn execute(svc: &Services<'_>, record: &Record) -> Result<(), ExecError> {
    // An earlier execution in the same lane whose outcome is unknown (its provider call timed
    // out; the watchdog asks again later) may have changed what this one checks: it goes first,
    // and this one goes on just after its next try (audit finding: a second upgrade charged from
    // the plan the first had already left at Stripe, and the first then said nothing was charged).
    if let Some(due) = earlier_in_lane(svc.db, record)? {
        svc.db.batch(vec![schedule::at::<FinishExecution>(
            &record.id,
            due.max(svc.now_ms) + PROGRESS_STEP_MS,
        )])?;
        return Err(ExecError::Progress("waiting for an earlier execution in its lane".into()));
    }
    let outcome = execute_claimed(svc, record).await;
    if let Err(ExecError::Progress(_)) = outcome {
        // Rescheduled afresh: `schedule::at` starts the attempts over.
        svc.db.batch(vec![schedule::at::<FinishExecution>(&record.id, svc.now_ms + PROGRESS_STEP_MS)])?;
    }
    outcome
}

/// Whether an approval of `action` on `campaign` (its `campaignId` argument) was given up by the
/// watchdog with its outcome unknown: the provider may have carried it out.
pub fn given_up_on(db: &dyn Db, action: &str, campaign: &str) -> Result<bool, StoreError> {
    let found = db.query(Stmt::new(
        "SELECT COUNT(*) FROM approvals WHERE action = ? AND status = 'not_done' AND result = ? \
         AND json_extract(args, '$.campaignId') = ?",
        vec![action.into(), UNCONFIRMED.into(), campaign.into()],
    ))?;
    Ok(found.scalar_i64().unwrap_or(0) > 0)
}

/// When to look again at `record` for an approval decided before it that is still executing in
/// the same lane, if there is one: when the watchdog next tries that one.
fn earlier_in_lane(db: &dyn Db, record: &Record) -> Result<Option<i64>, StoreError> {
    let Some(lane) = find_action(&record.action).and_then(|a| a.lane()) else { return Ok(None) };
    let rows = decode(db.rows(
        "SELECT id, action, args, summary, impact, cost, irreversible, status, result, created_at, expires_at, decided_at \
         FROM approvals WHERE status = 'executing' AND id != ?",
        vec![record.id.as_str().into()],
    )?)?;
    let mine = (record.decided_at, record.id.as_str());
    let Some(earlier) = rows.iter().find(|r| {
        find_action(&r.action).and_then(|a| a.lane()) == Some(lane) && (r.decided_at, r.id.as_str()) < mine
    }) else {
        return Ok(None);
    };
    // One being carried out in this isolate now is over soon: looked at again a second later.
    if EXECUTING.with(|running| running.borrow().contains(&earlier.id)) {
        return Ok(Some(0));
    }
    Ok(Some(schedule::due_at::<FinishExecution>(db, &earlier.id)?.unwrap_or(0)))
}

async fn execute_claimed(svc: &Services<'_>, record: &Record) -> Result<(), ExecError> {
    let Some(_claim) = Claim::take(&record.id) else {
        return Err(ExecError::Progress("still being carried out".into()));
    };
    let action = find_action(&record.action);
    let workspace = super::workspace_id(svc.db)?.unwrap_or_default();
    // Its lane in this workspace (the limit it fills, or a serial action's own), held until its
    // writes are in (audit finding: two launches approved at once both passed a plan's one active
    // campaign). The second goes on a second later, and checks with the first one done. The
    // workspace is in the key: an isolate may hold other workspaces' objects too.
    let _lane = action
        .and_then(|a| a.lane())
        .map(|lane| {
            Claim::take(&format!("lane:{workspace}:{lane}"))
                .ok_or_else(|| ExecError::Progress(format!("waiting for another execution in {lane}")))
        })
        .transpose()?;
    let cx = ExecCx {
        db: svc.db,
        config: svc.config,
        outbound: svc.outbound,
        now_ms: svc.now_ms,
        workspace: &workspace,
        approval_id: &record.id,
        decided_at: record.decided_at.unwrap_or(svc.now_ms),
    };
    let outcome = match action {
        Some(action) => action.execute(&cx, &record.args).await,
        None => Err(ExecError::Failed(format!("{} is no longer available in VibeSell.", record.action))),
    };
    finish(svc.db, svc.now_ms, &record.id, outcome)
}

/// Records an execution's outcome: `done` with the executor's writes, or `not_done` with the
/// reason, in one batch; nothing when another run already finished it.
fn finish(db: &dyn Db, now_ms: i64, id: &str, outcome: Result<Executed, ExecError>) -> Result<(), ExecError> {
    // No await between this check and the batch: nothing else runs in the Durable Object.
    if load(db, id)?.is_none_or(|r| r.state != State::Executing) {
        return Ok(());
    }
    let (mut stmts, status, result) = match outcome {
        Ok(Executed { result, writes }) => (writes, "done", result),
        Err(ExecError::Failed(reason)) => (Vec::new(), "not_done", reason),
        Err(other) => return Err(other),
    };
    stmts.push(Stmt::new(
        "UPDATE approvals SET status = ?, result = ?, finished_at = ?, updated_at = ?, updated_by = ?, updated_client = ? \
         WHERE id = ? AND status = 'executing'",
        vec![
            status.into(),
            result.into(),
            now_ms.into(),
            now_ms.into(),
            SYSTEM.into(),
            SYSTEM.into(),
            id.into(),
        ],
    ));
    stmts.push(schedule::cancel::<FinishExecution>(id));
    db.batch(stmts)?;
    Ok(())
}

/// The watchdog: finishes an execution that never reported back (the Durable Object was
/// evicted mid-call, the provider's answer was lost). It runs the executor again with the same
/// idempotency keys, so the provider does not act twice; after repeated unknown outcomes it
/// gives up as `not_done`.
pub struct FinishExecution;

impl Job for FinishExecution {
    const NAME: &'static str = "finish_execution";
    // A provider whose answer was lost is given time to show what it did before it is asked
    // again (an order may take a while to appear in Instantly's list, `sending::instantly`).
    fn min_retry_ms(config: &Config) -> i64 {
        watchdog_ms(config)
    }

    async fn run(&self, cx: &JobCx<'_>, id: &str) -> Result<(), JobError> {
        let Some(record) = load(cx.db, id)? else { return Ok(()) };
        if record.state != State::Executing {
            return Ok(());
        }
        if cx.attempt >= MAX_EXECUTION_ATTEMPTS {
            return finish(cx.db, cx.now_ms, id, Err(ExecError::Failed(UNCONFIRMED.into())))
                .map_err(|e| JobError::Retry(e.to_string()));
        }
        let svc = Services { db: cx.db, config: cx.config, outbound: cx.outbound, now_ms: cx.now_ms };
        match execute(&svc, &record).await {
            Err(ExecError::Progress(_)) => Ok(()),
            other => other.map_err(|e| JobError::Retry(e.to_string())),
        }
    }
}

#[cfg(test)]
#[path = "approvals_tests.rs"]
mod tests;

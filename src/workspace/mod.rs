//! The workspace: everything a user has set up, stored in the SQLite database of the
//! workspace's Durable Object (one per workspace, named by the token's `ws` claim).
//!
//! This module is pure: it works on any [`Db`], so `cargo test` runs it on an in-memory SQLite
//! and the Worker runs it on Durable Object storage. Each area owns its tables and queries in
//! its own file; `migrations` lists every table, and `docs/storage.md` documents them.
//!
//! The Durable Object has three entry points, each a pure function here: [`call_tool`] (MCP tool
//! calls), [`handle_op`] (the web page, provider webhooks and sandbox provider pages) and
//! [`on_alarm`] (due jobs of the [`schedule`]). After each, the Worker arms the alarm for
//! [`next_alarm`].

pub mod approvals;
pub mod billing;
pub mod campaigns;
pub mod journey;
pub mod leads;
pub mod limits;
pub mod memory;
pub mod migrations;
pub mod offer;
pub mod ops;
pub mod personal_data;
pub mod planning;
pub mod playbook;
pub mod schedule;
pub mod sending;
pub mod sequence;
pub mod support;
pub mod suppression;
pub mod target;
pub mod throttle;

pub use ops::{Op, OpReply, handle_op};

use serde_json::Value;

use crate::auth::Principal;
use crate::config::Config;
use crate::outbound::Outbound;
use crate::store::{Db, StoreError};
use crate::tools::{self, Refusal, ToolCx, ToolOutcome};

/// A tool call forwarded by the Worker to the workspace's Durable Object.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolCall {
    /// The tool's name (already checked against the catalogue and the token's scopes).
    pub tool: String,
    /// The raw arguments, validated here against the tool's input schema.
    pub arguments: Value,
    /// Who is calling.
    pub principal: Principal,
    /// The request id, for references and logs.
    pub request_id: String,
    /// Whether the caller's protocol version has `structuredContent` (2025-06-18 on): the
    /// object serialises the result for it ([`crate::tools::ToolAnswer`]).
    #[serde(default)]
    pub structured_content: bool,
}

/// What workspace code needs besides the caller: storage, configuration, the outside world and
/// the time.
#[derive(Clone, Copy)]
pub struct Services<'a> {
    /// The workspace's database.
    pub db: &'a dyn Db,
    /// Deployment configuration.
    pub config: &'a Config,
    /// Outbound HTTP, for provider adapters.
    pub outbound: &'a dyn Outbound,
    /// The platform clock (ms since the epoch).
    pub now_ms: i64,
}

/// What a long-lived holder of one workspace's database (its Durable Object instance) already
/// knows: that the schema is current and who owns the workspace. Both only ever move forward
/// while the code runs (migrations are never undone, the owner is written once), so checking
/// them again on every call would only repeat three SQL round trips. A holder that erases its
/// storage must drop its `Opened` with it. It also holds the instance's in-memory budget of
/// tool calls ([`throttle`]).
#[derive(Debug, Default)]
pub struct Opened {
    owner: std::cell::RefCell<Option<String>>,
    /// The migrations have been applied by this holder (implied once `owner` is known).
    schema: std::cell::Cell<bool>,
    /// Tool calls left in this instance's budget (`TOOL_RATE_LIMIT`).
    budget: throttle::ToolBudget,
}

impl Opened {
    /// Whether this holder has already brought the schema up to date.
    pub fn schema_current(&self) -> bool {
        self.schema.get()
    }

    /// Records that the schema is up to date (after [`migrations::apply`] or [`open_for`]).
    pub fn mark_schema_current(&self) {
        self.schema.set(true);
    }

    /// Brings the schema up to date unless this holder already has: the migrations check opens
    /// a write transaction (`CREATE TABLE IF NOT EXISTS`) even when there is nothing to apply.
    pub fn migrate(&self, db: &dyn Db, now_ms: i64) -> Result<(), StoreError> {
        if !self.schema_current() {
            migrations::apply(db, now_ms)?;
            self.mark_schema_current();
        }
        Ok(())
    }
}

/// Runs one tool call against the workspace. Never fails: every problem is a refusal. Each call
/// gets a fresh [`Opened`], so nothing here is rate limited: the limit belongs to the long-lived
/// holder ([`call_tool_opened`]).
pub async fn call_tool(
    db: &dyn Db,
    config: &Config,
    outbound: &dyn Outbound,
    call: ToolCall,
    now_ms: i64,
) -> ToolOutcome {
    call_tool_opened(db, &Opened::default(), config, outbound, call, now_ms).await
}

/// [`call_tool`] for a holder that keeps an [`Opened`] across calls.
pub async fn call_tool_opened(
    db: &dyn Db,
    opened: &Opened,
    config: &Config,
    outbound: &dyn Outbound,
    call: ToolCall,
    now_ms: i64,
) -> ToolOutcome {
    let refuse = |r: Refusal| ToolOutcome::refusal(&r, &call.tool, &call.request_id);
    // MCP 2025-06-18 server/tools, Security Considerations: servers MUST rate limit tool
    // invocations. Checked first, before anything reads or writes the workspace, and answered
    // as a tool result with isError saying how long to wait, so the model can back off.
    if let Err(exhausted) = opened.budget.spend(config.tool_rate_limit, now_ms) {
        let mut outcome = refuse(Refusal::guidance(exhausted.message()));
        outcome.detail = Some(format!("tool rate limit (retry after {} s)", exhausted.retry_after_secs));
        return outcome;
    }
    let Some(tool) = tools::find(&call.tool) else {
        // The Worker checks the catalogue first; this only happens across a deploy boundary.
        return refuse(Refusal::guidance(format!(
            "Unknown tool {}. Call tools/list for the current tools.",
            call.tool
        )));
    };
    if !tool.access().allows(&call.principal) {
        return refuse(Refusal::guidance(format!("This connection may not use {}.", call.tool)));
    }
    let known_owner = opened.owner.borrow().as_deref() == Some(call.principal.subject.as_str());
    if !known_owner {
        if let Err(refusal) = open(db, &call.principal, now_ms) {
            return refuse(refusal);
        }
        *opened.owner.borrow_mut() = Some(call.principal.subject.clone());
        opened.mark_schema_current();
    }
    // A token minted by the authorization server names its grant: once the user or the client
    // revokes it (or a replayed code or refresh token ends it), its access tokens stop here,
    // before any tool touches the workspace.
    if let Some(grant_id) = &call.principal.grant_id {
        match crate::oauth::grants::is_active(db, grant_id, &call.principal.subject, now_ms) {
            Ok(true) => {}
            Ok(false) => return ToolOutcome::revoked(&call.tool),
            Err(e) => return refuse(Refusal::from(e)),
        }
    }
    let cx =
        ToolCx { db, principal: &call.principal, config, now_ms, request_id: &call.request_id, outbound };
    tool.call(&cx, call.arguments).await
}

/// Brings the schema up to date and binds the workspace to its owner on first use, refusing
/// anyone else (defence in depth: the workspace id comes from a signed token, but a token for
/// another user must never open this workspace).
pub fn open(db: &dyn Db, principal: &Principal, now_ms: i64) -> Result<(), Refusal> {
    open_for(db, &principal.subject, &principal.workspace, now_ms)
}

/// [`open`] for a subject and workspace id (the authorization server opens a workspace when it
/// records a grant or a browser session, before any token exists).
pub fn open_for(db: &dyn Db, subject: &str, workspace: &str, now_ms: i64) -> Result<(), Refusal> {
    migrations::apply(db, now_ms)?;
    let owner: Option<MetaValue> = db.row("SELECT value FROM meta WHERE key = 'owner'", vec![])?;
    match owner {
        Some(MetaValue { value }) if value == subject => Ok(()),
        Some(_) => Err(Refusal::Internal(format!(
            "workspace {workspace} is owned by another subject than {subject}"
        ))),
        None => {
            db.batch(vec![
                crate::store::Stmt::new(
                    "INSERT OR IGNORE INTO meta (key, value) VALUES ('owner', ?)",
                    vec![subject.into()],
                ),
                crate::store::Stmt::new(
                    "INSERT OR IGNORE INTO meta (key, value) VALUES ('workspace', ?)",
                    vec![workspace.into()],
                ),
                crate::store::Stmt::new(
                    "INSERT OR IGNORE INTO meta (key, value) VALUES ('created_at', ?)",
                    vec![now_ms.to_string().into()],
                ),
            ])?;
            Ok(())
        }
    }
}

#[derive(serde::Deserialize)]
struct MetaValue {
    value: String,
}

pub(crate) fn meta(db: &dyn Db, key: &str) -> Result<Option<String>, StoreError> {
    let row: Option<MetaValue> = db.row("SELECT value FROM meta WHERE key = ?", vec![key.into()])?;
    Ok(row.map(|r| r.value))
}

/// The subject that owns this workspace, once it was opened.
pub fn owner(db: &dyn Db) -> Result<Option<String>, StoreError> {
    meta(db, "owner")
}

/// This workspace's id (`ws_…`), once it was opened.
pub fn workspace_id(db: &dyn Db) -> Result<Option<String>, StoreError> {
    meta(db, "workspace")
}

/// The Durable Object's alarm: runs the due jobs and says when the next one is due. The schema
/// is checked once per instance (`opened`), as for requests: the check is a write, which would
/// also make the instance forget every read it remembers (`store::Remembering`).
pub async fn on_alarm(svc: &Services<'_>, opened: &Opened) -> Result<schedule::AlarmReport, StoreError> {
    opened.migrate(svc.db, svc.now_ms)?;
    schedule::run_due(svc.db, svc.config, svc.outbound, svc.now_ms).await
}

/// When the Durable Object's alarm should next fire (after any request): the next due job.
pub fn next_alarm(db: &dyn Db) -> Result<Option<i64>, StoreError> {
    schedule::next_due(db)
}

/// When the workspace was first opened.
pub fn created_at(db: &dyn Db) -> Result<Option<i64>, StoreError> {
    Ok(meta(db, "created_at")?.and_then(|v| v.parse().ok()))
}

/// The workspace of a user: one per user to start (PRODUCT §10), named from the subject so
/// every token of that user reaches the same Durable Object. `scripts/lib/devtoken.mjs` uses
/// the same derivation.
pub fn workspace_id_for(subject: &str) -> String {
    let digest = crate::ids::sha256_hex(format!("workspace:{subject}").as_bytes());
    format!("ws_{}", &digest[..24])
}

#[cfg(test)]
#[path = "remembered_tests.rs"]
mod remembered_tests;

#[cfg(test)]
mod tests {
    use crate::auth::ScopeSet;
    use crate::testing::{MemoryDb, NOW_MS, block_on, principal, test_config};
    use crate::tools::Outcome;

    #[test]
    fn a_remembered_opening_still_refuses_another_owner() {
        let db = MemoryDb::new();
        let opened = super::Opened::default();
        let call = |subject: &str| {
            let mut p = principal(ScopeSet::FULL, false);
            p.subject = subject.into();
            let c = super::ToolCall {
                tool: "get_workspace_context".into(),
                arguments: serde_json::json!({}),
                principal: p,
                request_id: "req_1".into(),
                structured_content: true,
            };
            block_on(super::call_tool_opened(
                &db,
                &opened,
                &test_config(),
                &crate::outbound::NoNetwork,
                c,
                NOW_MS,
            ))
        };
        assert_eq!(call("user_1").outcome, Outcome::Ok);
        assert_eq!(call("user_1").outcome, Outcome::Ok);
        assert_eq!(call("user_2").outcome, Outcome::Failed);
        assert_eq!(call("user_1").outcome, Outcome::Ok);
    }

    #[test]
    fn a_spent_budget_refuses_the_call_without_touching_the_workspace() {
        let db = crate::testing::CountingDb::default();
        let opened = super::Opened::default();
        let mut config = test_config();
        config.tool_rate_limit = crate::config::Limit { capacity: 2, window_secs: 60 };
        let call = |now_ms: i64| {
            let c = super::ToolCall {
                tool: "get_workspace_context".into(),
                arguments: serde_json::json!({}),
                principal: principal(ScopeSet::FULL, false),
                request_id: "req_1".into(),
                structured_content: true,
            };
            block_on(super::call_tool_opened(&db, &opened, &config, &crate::outbound::NoNetwork, c, now_ms))
        };
        assert_eq!(call(NOW_MS).outcome, Outcome::Ok);
        assert_eq!(call(NOW_MS).outcome, Outcome::Ok);
        let before = db.statements.get();
        let refused = call(NOW_MS + 1_000);
        assert_eq!(refused.outcome, Outcome::Refused);
        assert!(refused.text.contains("Wait 29 seconds"), "{}", refused.text);
        assert_eq!(db.statements.get(), before, "a refused call runs no SQL at all");
        let answer = refused.into_answer(true);
        assert!(answer.result.contains(r#""isError":true"#), "{}", answer.result);
        // One call's worth has come back after 30 s.
        assert_eq!(call(NOW_MS + 30_000).outcome, Outcome::Ok);
        assert_eq!(call(NOW_MS + 30_000).outcome, Outcome::Refused);
    }

    #[test]
    fn workspace_ids_derive_from_the_subject() {
        // The same value scripts/lib/devtoken.mjs computes.
        assert_eq!(super::workspace_id_for("dev-user@example.com"), "ws_7774e68c50d0e5c3a9c03684");
        assert_ne!(super::workspace_id_for("a"), super::workspace_id_for("b"));
    }
}

//! Test support: an in-memory SQLite [`Db`], a fixed clock, the development configuration and
//! token minting, and a native [`Platform`] that runs tool calls in-process, so `route` can be
//! exercised end to end without a runtime.

use std::cell::RefCell;
use std::collections::HashMap;

use rusqlite::types::{Value as RValue, ValueRef};

use crate::auth::jwt::{self, AccessClaims};
use crate::auth::{Principal, ScopeSet};
use crate::config::{Config, ConfigError};
use crate::http::{HttpRequest, HttpResponse, Platform, Workspaces, route};
use crate::mcp::{ToolBackend, Trace};
use crate::store::{Db, Rows, SqlValue, Stmt, StoreError};
use crate::tools::{ToolOutcome, registry::LocalBoxFuture};
use crate::workspace::{self, Op, OpReply, Services, ToolCall};

/// A fixed "now": 2026-11-29T12:00:00Z.
pub const NOW_MS: i64 = 1_795_953_600_000;

/// The checked-in development signing key (`.dev.vars`).
pub const DEV_KEYS: &str = "dev:ZGV2LW9ubHktc2lnbmluZy1rZXktZm9yLWxvY2FsaG9zdC0wMDAwMDA";

/// The local configuration the tests run with.
pub fn test_config() -> Config {
    let vars: HashMap<&str, &str> = [
        ("PUBLIC_URL", "http://127.0.0.1:8787"),
        ("PROVIDER_MODE", "sandbox"),
        ("JWT_SIGNING_KEYS", DEV_KEYS),
    ]
    .into_iter()
    .collect();
    Config::from_lookup(|k| vars.get(k).map(|v| (*v).to_owned())).expect("test config")
}

/// A principal of user `user_1` in workspace `ws_1`.
pub fn principal(scopes: ScopeSet, app: bool) -> Principal {
    Principal {
        subject: "user_1".into(),
        workspace: "ws_1".into(),
        client_id: "client_1".into(),
        scopes,
        app,
        grant_id: None,
    }
}

/// A valid access token for [`principal`].
pub fn test_token(scopes: ScopeSet, app: bool) -> String {
    token_for(&principal(scopes, app))
}

/// A valid access token for any principal.
pub fn token_for(p: &Principal) -> String {
    let config = test_config();
    let claims = AccessClaims {
        iss: config.issuer().to_owned(),
        aud: config.resource(),
        sub: p.subject.clone(),
        ws: p.workspace.clone(),
        client_id: p.client_id.clone(),
        scope: p.scopes.to_wire(),
        app: p.app,
        jti: crate::ids::random_id("at_"),
        gid: p.grant_id.clone(),
    };
    jwt::mint(&config, claims, NOW_MS, 3600).expect("mint")
}

/// An in-memory SQLite database behaving like Durable Object SQL storage.
pub struct MemoryDb(rusqlite::Connection);

impl MemoryDb {
    /// A fresh empty database.
    pub fn new() -> Self {
        MemoryDb(rusqlite::Connection::open_in_memory().expect("sqlite"))
    }
}

impl Default for MemoryDb {
    fn default() -> Self {
        Self::new()
    }
}

fn run(conn: &rusqlite::Connection, stmt: &Stmt) -> Result<Rows, StoreError> {
    let sql_err = |e: rusqlite::Error| StoreError::Sql(e.to_string());
    let mut prepared = conn.prepare(stmt.sql).map_err(sql_err)?;
    let columns: Vec<String> = prepared.column_names().into_iter().map(str::to_owned).collect();
    let params: Vec<RValue> = stmt
        .params
        .iter()
        .map(|v| match v {
            SqlValue::Null => RValue::Null,
            SqlValue::Integer(i) => RValue::Integer(*i),
            SqlValue::Real(f) => RValue::Real(*f),
            SqlValue::Text(s) => RValue::Text(s.clone()),
            SqlValue::Blob(b) => RValue::Blob(b.clone()),
        })
        .collect();
    let n = columns.len();
    let mut rows = prepared.query(rusqlite::params_from_iter(params)).map_err(sql_err)?;
    let mut out = Vec::new();
    while let Some(row) = rows.next().map_err(sql_err)? {
        let mut values = Vec::with_capacity(n);
        for i in 0..n {
            values.push(match row.get_ref(i).map_err(sql_err)? {
                ValueRef::Null => SqlValue::Null,
                ValueRef::Integer(i) => SqlValue::Integer(i),
                ValueRef::Real(f) => SqlValue::Real(f),
                ValueRef::Text(t) => SqlValue::Text(String::from_utf8_lossy(t).into_owned()),
                ValueRef::Blob(b) => SqlValue::Blob(b.to_vec()),
            });
        }
        out.push(values);
    }
    Ok(Rows { columns, rows: out })
}

impl Db for MemoryDb {
    fn query(&self, stmt: Stmt) -> Result<Rows, StoreError> {
        run(&self.0, &stmt)
    }

    fn batch(&self, stmts: Vec<Stmt>) -> Result<Vec<Rows>, StoreError> {
        let sql_err = |e: rusqlite::Error| StoreError::Sql(e.to_string());
        self.0.execute_batch("BEGIN").map_err(sql_err)?;
        let mut results = Vec::with_capacity(stmts.len());
        for stmt in &stmts {
            match run(&self.0, stmt) {
                Ok(rows) => results.push(rows),
                Err(e) => {
                    let _ = self.0.execute_batch("ROLLBACK");
                    return Err(e);
                }
            }
        }
        self.0.execute_batch("COMMIT").map_err(sql_err)?;
        Ok(results)
    }
}

/// A native platform: the test configuration, a settable clock, and one in-memory database per
/// workspace standing in for the Durable Objects.
pub struct TestPlatform {
    config: Result<Config, ConfigError>,
    /// The clock.
    pub now_ms: std::cell::Cell<i64>,
    workspaces: RefCell<HashMap<String, std::rc::Rc<MemoryDb>>>,
}

impl TestPlatform {
    /// A platform at [`NOW_MS`].
    pub fn new() -> Self {
        TestPlatform { config: Ok(test_config()), now_ms: NOW_MS.into(), workspaces: RefCell::default() }
    }

    /// A platform whose configuration is broken.
    pub fn misconfigured() -> Self {
        TestPlatform { config: Err(ConfigError::Missing("PUBLIC_URL")), ..TestPlatform::new() }
    }

    /// The database of a workspace.
    pub fn db(&self, workspace: &str) -> std::rc::Rc<MemoryDb> {
        std::rc::Rc::clone(self.workspaces.borrow_mut().entry(workspace.to_owned()).or_default())
    }

    /// Routes a request synchronously.
    pub fn send(&self, req: &HttpRequest) -> (HttpResponse, Trace) {
        block_on(route(req, self, "req_test"))
    }
}

impl Default for TestPlatform {
    fn default() -> Self {
        Self::new()
    }
}

impl Platform for TestPlatform {
    fn config(&self) -> Result<&Config, &ConfigError> {
        self.config.as_ref()
    }
    fn now_ms(&self) -> i64 {
        self.now_ms.get()
    }
    fn tools(&self) -> &dyn ToolBackend {
        self
    }
    fn workspaces(&self) -> &dyn Workspaces {
        self
    }
}

impl Workspaces for TestPlatform {
    fn op(&self, workspace: &str, op: Op) -> LocalBoxFuture<'_, Result<OpReply, String>> {
        let db = self.db(workspace);
        Box::pin(async move {
            let config = self.config.as_ref().map_err(ToString::to_string)?;
            let svc = Services {
                db: &*db,
                config,
                outbound: &crate::outbound::NoNetwork,
                now_ms: self.now_ms.get(),
            };
            workspace::handle_op(&svc, op).await.map_err(|e| e.to_string())
        })
    }
}

impl ToolBackend for TestPlatform {
    fn call_tool(&self, call: ToolCall) -> LocalBoxFuture<'_, Result<ToolOutcome, String>> {
        Box::pin(async move {
            let db = self.db(&call.principal.workspace);
            let config = self.config.as_ref().map_err(ToString::to_string)?;
            Ok(workspace::call_tool(&*db, config, &crate::outbound::NoNetwork, call, self.now_ms.get()).await)
        })
    }
}

/// Runs a future that never waits on I/O (all native test futures) to completion.
pub fn block_on<F: std::future::Future>(future: F) -> F::Output {
    use std::task::{Context, Poll, Waker};
    let mut cx = Context::from_waker(Waker::noop());
    let mut future = std::pin::pin!(future);
    loop {
        if let Poll::Ready(v) = future.as_mut().poll(&mut cx) {
            return v;
        }
    }
}

// ---- a test approval action -----------------------------------------------------------------

use crate::plans::Money;
use crate::tools::registry::{Refusal, ToolCx};
use crate::workspace::approvals::{Action, DynAction, ExecCx, ExecError, Executed, Proposal};

/// Approval actions only the tests know (`approvals::find_action` looks here too).
pub static ACTIONS: &[&dyn DynAction] = &[&Probe];

thread_local! {
    /// The idempotency key of every `probe` execution on this test thread, in order.
    pub static PROBE_CALLS: RefCell<Vec<String>> = const { RefCell::new(Vec::new()) };
}

/// A test action whose execution succeeds, fails or has an unknown outcome on demand.
pub struct Probe;

/// What a probe does when executed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ProbeOutcome {
    /// Succeeds and writes `meta` row `probe:<label>`.
    Ok,
    /// Fails with a reason.
    Fail,
    /// Times out the first time, then succeeds.
    UnknownOnce,
    /// Always times out.
    Unknown,
}

/// The probe's arguments.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct ProbeArgs {
    /// Names the probe; `refuse` makes the proposal refuse.
    pub label: String,
    /// What execution does.
    pub outcome: ProbeOutcome,
}

impl Action for Probe {
    type Args = ProbeArgs;
    const NAME: &'static str = "probe";

    async fn propose(&self, _: &ToolCx<'_>, args: &ProbeArgs) -> Result<Proposal, Refusal> {
        if args.label == "refuse" {
            return Err(Refusal::guidance("The probe refuses."));
        }
        Ok(Proposal {
            summary: format!("Probe {}", args.label),
            impact: vec![format!("Writes the probe {}", args.label)],
            cost: Some(Money::new(100, "usd")),
            irreversible: args.label.contains("irreversible"),
        })
    }

    async fn execute(&self, cx: &ExecCx<'_>, args: ProbeArgs) -> Result<Executed, ExecError> {
        let key = cx.idempotency_key("probe");
        let earlier = PROBE_CALLS.with(|c| {
            let mut calls = c.borrow_mut();
            calls.push(key.clone());
            calls.iter().filter(|k| **k == key).count() - 1
        });
        match args.outcome {
            ProbeOutcome::Fail => Err(ExecError::Failed("The probe failed.".into())),
            ProbeOutcome::Unknown => Err(ExecError::Unknown("timed out".into())),
            ProbeOutcome::UnknownOnce if earlier == 0 => Err(ExecError::Unknown("timed out".into())),
            ProbeOutcome::Ok | ProbeOutcome::UnknownOnce => Ok(Executed {
                result: format!("Probed {}.", args.label),
                writes: vec![Stmt::new(
                    "INSERT INTO meta (key, value) VALUES (?, ?)",
                    vec![format!("probe:{}", args.label).into(), key.into()],
                )],
            }),
        }
    }
}

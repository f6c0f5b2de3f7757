//! Test support: an in-memory SQLite [`Db`], a fixed clock, the development configuration and
//! token minting, and a native [`Platform`] that runs tool calls in-process, so `route` can be
//! exercised end to end without a runtime.

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::rc::Rc;

use rusqlite::types::{Value as RValue, ValueRef};

use crate::auth::jwt::{self, AccessClaims};
use crate::auth::{Principal, ScopeSet};
use crate::config::{Config, ConfigError};
use crate::http::{HttpRequest, HttpResponse, Platform, Workspaces, route};
use crate::kv::{Kv, KvError};
use crate::mcp::{ToolBackend, Trace};
use crate::oauth::{AccountAddr, AuthObjects, ObjectError, grants, state};
use crate::outbound::{Outbound, OutboundError, OutboundRequest, OutboundResponse};
use crate::store::{Db, Remembering, Rows, SqlValue, Stmt, StoreError};
use crate::tools::{ToolAnswer, registry::LocalBoxFuture};
use crate::workspace::{self, Op, OpReply, Services, ToolCall};

/// A fixed "now": 2026-11-29T12:00:00Z.
pub const NOW_MS: i64 = 1_795_953_600_000;

/// The checked-in development signing key (`.dev.vars`).
pub const DEV_KEYS: &str = "dev:ZGV2LW9ubHktc2lnbmluZy1rZXktZm9yLWxvY2FsaG9zdC0wMDAwMDA";

/// The local configuration the tests run with.
pub fn test_config() -> Config {
    test_config_at("http://127.0.0.1:8787")
}

/// The same configuration served at another origin (same keys, another issuer and audience).
pub fn test_config_at(public_url: &str) -> Config {
    let vars: HashMap<&str, &str> =
        [("PUBLIC_URL", public_url), ("PROVIDER_MODE", "sandbox"), ("JWT_SIGNING_KEYS", DEV_KEYS)]
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

/// A [`MemoryDb`] that counts the statements run, so that a test can see which ones a holder of
/// an `Opened` or `Tables` skips.
#[derive(Default)]
pub struct CountingDb {
    /// The database itself.
    pub db: MemoryDb,
    /// Statements run so far (each of a batch counts).
    pub statements: std::cell::Cell<usize>,
}

impl Db for CountingDb {
    fn query(&self, stmt: Stmt) -> Result<Rows, StoreError> {
        self.statements.set(self.statements.get() + 1);
        self.db.query(stmt)
    }

    fn batch(&self, stmts: Vec<Stmt>) -> Result<Vec<Rows>, StoreError> {
        self.statements.set(self.statements.get() + stmts.len());
        self.db.batch(stmts)
    }
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

/// What a fake server answers.
pub type Handler = Box<dyn Fn(&OutboundRequest) -> Result<OutboundResponse, OutboundError>>;

/// The outside world of native tests: fake servers by URL prefix, and every request made.
#[derive(Default)]
pub struct FakeNetwork {
    routes: RefCell<Vec<(String, Rc<Handler>)>>,
    /// Every outbound request, in order.
    pub requests: RefCell<Vec<OutboundRequest>>,
}

impl FakeNetwork {
    /// Serves URLs starting with `prefix` with `handler`.
    pub fn serve(
        &self,
        prefix: &str,
        handler: impl Fn(&OutboundRequest) -> Result<OutboundResponse, OutboundError> + 'static,
    ) {
        self.routes.borrow_mut().push((prefix.to_owned(), Rc::new(Box::new(handler))));
    }

    /// How many requests went to URLs starting with `prefix`.
    pub fn count(&self, prefix: &str) -> usize {
        self.requests.borrow().iter().filter(|r| r.url.starts_with(prefix)).count()
    }
}

/// A JSON response from a fake server.
pub fn json_response(status: u16, body: &serde_json::Value) -> OutboundResponse {
    OutboundResponse {
        status,
        headers: vec![("content-type".into(), "application/json".into())],
        body: body.to_string().into_bytes(),
    }
}

/// A native platform: the test configuration, a settable clock, one in-memory database per
/// workspace and per `OAuthState` object standing in for the Durable Objects, a map for KV,
/// and fake servers for outbound HTTP.
pub struct TestPlatform {
    config: Result<Config, ConfigError>,
    /// The clock.
    pub now_ms: Cell<i64>,
    /// Each behind the layer its object instance keeps (`Remembering`), as on Workers.
    workspaces: RefCell<HashMap<String, Rc<Remembering<MemoryDb>>>>,
    states: RefCell<HashMap<String, Rc<MemoryDb>>>,
    /// What each workspace object instance remembers of its storage, as on Workers.
    opened: RefCell<HashMap<String, Rc<workspace::Opened>>>,
    /// What each `OAuthState` instance remembers of its tables, as on Workers.
    state_tables: RefCell<HashMap<String, Rc<state::Tables>>>,
    /// The name of the `OAuthState` object of every operation, in order.
    state_calls: RefCell<Vec<String>>,
    routes: RefCell<HashMap<String, String>>,
    kv: RefCell<HashMap<String, (String, i64)>>,
    /// While true, KV reads miss everything, as in a location a recent write has not reached.
    pub kv_lagging: Cell<bool>,
    /// While true, every KV operation fails.
    pub kv_down: Cell<bool>,
    /// The outside world.
    pub network: FakeNetwork,
}

impl TestPlatform {
    /// A platform at [`NOW_MS`].
    pub fn new() -> Self {
        TestPlatform::with_config(test_config())
    }

    /// A platform with a given configuration.
    pub fn with_config(config: Config) -> Self {
        TestPlatform {
            config: Ok(config),
            now_ms: NOW_MS.into(),
            workspaces: RefCell::default(),
            states: RefCell::default(),
            state_tables: RefCell::default(),
            state_calls: RefCell::default(),
            opened: RefCell::default(),
            routes: RefCell::default(),
            kv: RefCell::default(),
            kv_lagging: Cell::new(false),
            kv_down: Cell::new(false),
            network: FakeNetwork::default(),
        }
    }

    /// Moves the clock.
    pub fn advance(&self, ms: i64) {
        self.now_ms.set(self.now_ms.get() + ms);
    }

    /// The database of an `OAuthState` object.
    pub fn state_db(&self, name: &str) -> Rc<MemoryDb> {
        instance(&self.states, name)
    }

    /// How many operations the `OAuthState` object `name` has run.
    pub fn state_calls(&self, name: &str) -> usize {
        self.state_calls.borrow().iter().filter(|called| *called == name).count()
    }

    /// How many `OAuthState` objects whose names start with `prefix` have storage.
    pub fn state_objects(&self, prefix: &str) -> usize {
        self.states.borrow().keys().filter(|name| name.starts_with(prefix)).count()
    }

    /// The routing id of a workspace (a Durable Object id on Workers).
    pub fn route_of(&self, workspace: &str) -> String {
        let route = crate::ids::sha256_hex(format!("test-route:{workspace}").as_bytes());
        self.routes.borrow_mut().insert(route.clone(), workspace.to_owned());
        route
    }

    /// How many live entries the `OAuthState` objects whose names start with `prefix` hold.
    pub fn state_entries(&self, prefix: &str) -> usize {
        let now = self.now_ms.get();
        self.states
            .borrow()
            .iter()
            .filter(|(name, _)| name.starts_with(prefix))
            .map(|(_, db)| {
                db.query(Stmt::new("SELECT COUNT(*) FROM entries WHERE expires_at > ?", vec![now.into()]))
                    .ok()
                    .and_then(|r| r.scalar_i64())
                    .unwrap_or(0) as usize
            })
            .sum()
    }

    /// A raw KV value.
    pub fn kv_value(&self, key: &str) -> Option<String> {
        self.kv.borrow().get(key).map(|(v, _)| v.clone())
    }

    /// Every KV key.
    pub fn kv_keys(&self) -> Vec<String> {
        let mut keys: Vec<String> = self.kv.borrow().keys().cloned().collect();
        keys.sort();
        keys
    }

    /// A platform with extra or overriding vars on top of the test configuration.
    pub fn with_vars(extra: &[(&str, &str)]) -> Self {
        let mut vars: HashMap<&str, &str> = [
            ("PUBLIC_URL", "http://127.0.0.1:8787"),
            ("PROVIDER_MODE", "sandbox"),
            ("JWT_SIGNING_KEYS", DEV_KEYS),
        ]
        .into_iter()
        .collect();
        vars.extend(extra.iter().copied());
        let config = Config::from_lookup(|k| vars.get(k).map(|v| (*v).to_owned()));
        TestPlatform { config, ..TestPlatform::new() }
    }

    /// A platform whose configuration is broken.
    pub fn misconfigured() -> Self {
        TestPlatform { config: Err(ConfigError::Missing("PUBLIC_URL")), ..TestPlatform::new() }
    }

    /// The database of a workspace, through its instance's remembered reads, as every request
    /// of the object reaches it (so a test's own writes are seen by the next request too).
    pub fn db(&self, workspace: &str) -> Rc<Remembering<MemoryDb>> {
        instance(&self.workspaces, workspace)
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
    fn kv(&self) -> &dyn Kv {
        self
    }
    fn objects(&self) -> &dyn AuthObjects {
        self
    }
    fn outbound(&self) -> &dyn Outbound {
        self
    }
    fn rs256(&self) -> &dyn crate::oauth::oidc::Rs256Verifier {
        &NativeRs256
    }
    /// Compressed at once with flate2 (the Worker has the runtime do it, after the first ask).
    fn deflated(&self, result: &Rc<str>) -> Option<Rc<crate::gzip::Deflated>> {
        use std::io::Write;
        let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        encoder.write_all(result.as_bytes()).ok()?;
        encoder.write_all(crate::mcp::jsonrpc::RESULT_TAIL.as_bytes()).ok()?;
        let member = encoder.finish().ok()?;
        crate::gzip::Deflated::from_gzip(&member, result.len() + crate::mcp::jsonrpc::RESULT_TAIL.len())
            .map(Rc::new)
    }
}

/// RS256 verification with the `rsa` crate (a dev-dependency), standing in for WebCrypto.
pub struct NativeRs256;

impl crate::oauth::oidc::Rs256Verifier for NativeRs256 {
    fn verify<'a>(
        &'a self,
        n: &'a str,
        e: &'a str,
        message: &'a [u8],
        signature: &'a [u8],
    ) -> LocalBoxFuture<'a, bool> {
        use base64::Engine as _;
        use jwt_compact::alg::{Rsa, RsaPublicKey};
        use jwt_compact::jwk::JsonWebKey;
        use jwt_compact::{Algorithm as _, AlgorithmSignature as _};
        Box::pin(async move {
            let b64 = base64::engine::general_purpose::URL_SAFE_NO_PAD;
            let (Ok(n), Ok(e)) = (b64.decode(n), b64.decode(e)) else { return false };
            let jwk = JsonWebKey::Rsa {
                modulus: std::borrow::Cow::Owned(n),
                public_exponent: std::borrow::Cow::Owned(e),
                private_parts: None,
            };
            let Ok(key) = RsaPublicKey::try_from(&jwk) else { return false };
            let Ok(signature) = <Rsa as jwt_compact::Algorithm>::Signature::try_from_slice(signature) else {
                return false;
            };
            Rsa::rs256().verify_signature(&signature, &key, message)
        })
    }
}

impl Kv for TestPlatform {
    fn get(&self, key: String) -> LocalBoxFuture<'_, Result<Option<String>, KvError>> {
        Box::pin(async move {
            if self.kv_down.get() {
                return Err(KvError("down".into()));
            }
            if self.kv_lagging.get() {
                return Ok(None);
            }
            let now = self.now_ms.get();
            Ok(self.kv.borrow().get(&key).filter(|(_, exp)| *exp > now).map(|(v, _)| v.clone()))
        })
    }
    fn put(&self, key: String, value: String, ttl_secs: u32) -> LocalBoxFuture<'_, Result<(), KvError>> {
        Box::pin(async move {
            if self.kv_down.get() {
                return Err(KvError("down".into()));
            }
            assert!(ttl_secs >= crate::kv::MIN_TTL_SECS, "KV refuses TTLs under 60 s");
            assert!(key.len() <= crate::kv::MAX_KEY_BYTES, "KV keys are at most 512 bytes");
            let expires = self.now_ms.get() + i64::from(ttl_secs) * 1000;
            self.kv.borrow_mut().insert(key, (value, expires));
            Ok(())
        })
    }
    fn delete(&self, key: String) -> LocalBoxFuture<'_, Result<(), KvError>> {
        Box::pin(async move {
            self.kv.borrow_mut().remove(&key);
            Ok(())
        })
    }
}

impl AuthObjects for TestPlatform {
    fn state(
        &self,
        name: String,
        op: state::StateOp,
    ) -> LocalBoxFuture<'_, Result<state::StateReply, ObjectError>> {
        Box::pin(async move {
            // Through JSON, as on Workers, so the ops' serde is exercised.
            let op: state::StateOp = roundtrip(&op);
            self.state_calls.borrow_mut().push(name.clone());
            let db = self.state_db(&name);
            let tables = instance(&self.state_tables, &name);
            let reply = state::apply(&*db, &tables, op, self.now_ms.get())
                .map_err(|e| ObjectError::Failed(e.to_string()))?;
            // As `edge::oauth_state`: an object left empty loses its storage.
            if state::upkeep(&*db, &tables).map_err(|e| ObjectError::Failed(e.to_string()))?
                == state::Upkeep::DeleteAll
            {
                self.states.borrow_mut().remove(&name);
            }
            Ok(roundtrip(&reply))
        })
    }
    fn account(
        &self,
        at: AccountAddr,
        op: grants::AccountOp,
    ) -> LocalBoxFuture<'_, Result<grants::AccountReply, ObjectError>> {
        Box::pin(async move {
            let (workspace, route) = match at {
                AccountAddr::Workspace(ws) => {
                    let route = self.route_of(&ws);
                    (ws, route)
                }
                AccountAddr::Route(route) => {
                    let ws = self.routes.borrow().get(&route).cloned().ok_or(ObjectError::Unroutable)?;
                    (ws, route)
                }
            };
            let op: grants::AccountOp = roundtrip(&op);
            let db = self.db(&workspace);
            let opened = instance(&self.opened, &workspace);
            grants::apply(&*db, &opened, &route, op, self.now_ms.get())
                .map(|r| roundtrip(&r))
                .map_err(|e| ObjectError::Failed(e.to_string()))
        })
    }
}

/// The one value per object name (its storage, or what its instance remembers), made on first
/// use, as a Durable Object is.
fn instance<T: Default>(map: &RefCell<HashMap<String, Rc<T>>>, name: &str) -> Rc<T> {
    Rc::clone(map.borrow_mut().entry(name.to_owned()).or_default())
}

fn roundtrip<T: serde::Serialize + serde::de::DeserializeOwned>(value: &T) -> T {
    serde_json::from_str(&serde_json::to_string(value).expect("serialize")).expect("deserialize")
}

impl Outbound for TestPlatform {
    fn fetch(&self, req: OutboundRequest) -> LocalBoxFuture<'_, Result<OutboundResponse, OutboundError>> {
        Box::pin(async move {
            self.network.requests.borrow_mut().push(req.clone());
            let handler = self
                .network
                .routes
                .borrow()
                .iter()
                .find(|(prefix, _)| req.url.starts_with(prefix.as_str()))
                .map(|(_, h)| Rc::clone(h));
            let Some(handler) = handler else {
                return Err(OutboundError(format!("no route to {}", req.url)));
            };
            let response = handler(&req)?;
            if req.max_body_bytes.is_some_and(|max| response.body.len() > max) {
                return Err(OutboundError("body too large".into()));
            }
            if !req.follow_redirects || !(300..400).contains(&response.status) {
                return Ok(response);
            }
            Err(OutboundError("the fake network does not follow redirects".into()))
        })
    }
    fn sleep(&self, _: u32) -> LocalBoxFuture<'_, ()> {
        Box::pin(async {})
    }
}

impl Workspaces for TestPlatform {
    fn op(&self, workspace: &str, op: Op) -> LocalBoxFuture<'_, Result<OpReply, String>> {
        let db = self.db(workspace);
        let opened = instance(&self.opened, workspace);
        Box::pin(async move {
            let config = self.config.as_ref().map_err(ToString::to_string)?;
            let svc = Services {
                db: &*db,
                config,
                outbound: &crate::outbound::NoNetwork,
                now_ms: self.now_ms.get(),
            };
            workspace::handle_op(&svc, &opened, op).await.map_err(|e| e.to_string())
        })
    }
}

impl ToolBackend for TestPlatform {
    fn call_tool(&self, call: ToolCall) -> LocalBoxFuture<'_, Result<ToolAnswer, String>> {
        Box::pin(async move {
            let db = self.db(&call.principal.workspace);
            let opened = instance(&self.opened, &call.principal.workspace);
            let config = self.config.as_ref().map_err(ToString::to_string)?;
            let now_ms = self.now_ms.get();
            let structured_content = call.structured_content;
            let outcome =
                workspace::call_tool_opened(&*db, &opened, config, &crate::outbound::NoNetwork, call, now_ms)
                    .await;
            // Through the frame, as on Workers, so that its encoding is exercised.
            ToolAnswer::from_frame(&outcome.into_answer(structured_content).to_frame())
        })
    }
}

/// Pending once, then ready: a wait for the "network", so that a test can run something else
/// while a future is in the middle of its work.
pub async fn yield_once() {
    let mut waited = false;
    std::future::poll_fn(|_| {
        if std::mem::replace(&mut waited, true) {
            std::task::Poll::Ready(())
        } else {
            std::task::Poll::Pending
        }
    })
    .await;
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

use crate::plans::{Limit, Money};
use crate::tools::registry::{Refusal, ToolCx};
use crate::workspace::approvals::{Action, DynAction, ExecCx, ExecError, Executed, Proposal};
use crate::workspace::limits;

/// Approval actions only the tests know (`approvals::find_action` looks here too).
pub static ACTIONS: &[&dyn DynAction] = &[&Probe, &Fill];

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
    /// Advances (`ExecError::Progress`) on its first 40 runs, then succeeds.
    Slices,
    /// Waits once for the "network", then succeeds.
    Waits,
    /// Waits for the "network" and times out the first time, then succeeds.
    WaitsUnknownOnce,
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
        if matches!(args.outcome, ProbeOutcome::Waits | ProbeOutcome::WaitsUnknownOnce) {
            yield_once().await;
        }
        match args.outcome {
            ProbeOutcome::Fail => Err(ExecError::Failed("The probe failed.".into())),
            ProbeOutcome::Unknown => Err(ExecError::Unknown("timed out".into())),
            ProbeOutcome::UnknownOnce | ProbeOutcome::WaitsUnknownOnce if earlier == 0 => {
                Err(ExecError::Unknown("timed out".into()))
            }
            ProbeOutcome::Slices if earlier < 40 => {
                Err(ExecError::Progress(format!("slice {}", earlier + 1)))
            }
            ProbeOutcome::Ok
            | ProbeOutcome::UnknownOnce
            | ProbeOutcome::Slices
            | ProbeOutcome::Waits
            | ProbeOutcome::WaitsUnknownOnce => Ok(Executed {
                result: format!("Probed {}.", args.label),
                writes: vec![Stmt::new(
                    "INSERT INTO meta (key, value) VALUES (?, ?)",
                    vec![format!("probe:{}", args.label).into(), key.into()],
                )],
            }),
        }
    }
}

/// A test action that fills one active campaign as a launch does: it checks the plan's limit,
/// waits once for the "network", then counts itself.
pub struct Fill;

impl Action for Fill {
    type Args = ProbeArgs;
    const NAME: &'static str = "fill";
    const LIMIT: Option<Limit> = Some(Limit::ActiveCampaigns);

    async fn propose(&self, cx: &ToolCx<'_>, args: &ProbeArgs) -> Result<Proposal, Refusal> {
        Probe.propose(cx, args).await
    }

    async fn execute(&self, cx: &ExecCx<'_>, args: ProbeArgs) -> Result<Executed, ExecError> {
        if let Err(Refusal::Guidance(why)) =
            limits::check(cx.db, cx.config, cx.now_ms, Limit::ActiveCampaigns, 1)
        {
            return Err(ExecError::Failed(why));
        }
        yield_once().await;
        Ok(Executed {
            result: format!("Filled {}.", args.label),
            writes: vec![limits::consume(Limit::ActiveCampaigns, 1, cx.now_ms)],
        })
    }
}

// ---- a scripted outbound HTTP fake ----------------------------------------------------------

/// An [`Outbound`] that records every request and answers from a script, in order.
#[derive(Default)]
pub struct FakeOutbound {
    /// Every request sent, in order.
    pub requests: RefCell<Vec<OutboundRequest>>,
    responses: RefCell<std::collections::VecDeque<Result<OutboundResponse, OutboundError>>>,
    /// Total milliseconds slept.
    pub slept_ms: std::cell::Cell<u64>,
}

impl FakeOutbound {
    /// A fake that answers with `responses`, in order (then fails).
    pub fn new(responses: Vec<Result<OutboundResponse, OutboundError>>) -> Self {
        FakeOutbound { responses: RefCell::new(responses.into()), ..FakeOutbound::default() }
    }

    /// A JSON answer.
    pub fn json(status: u16, body: serde_json::Value) -> Result<OutboundResponse, OutboundError> {
        Ok(OutboundResponse {
            status,
            headers: vec![("content-type".into(), "application/json".into())],
            body: body.to_string().into_bytes(),
        })
    }

    /// The form fields of request `i`.
    pub fn form(&self, i: usize) -> Vec<(String, String)> {
        let requests = self.requests.borrow();
        crate::form::parse(requests[i].body.as_deref().unwrap_or_default())
    }

    /// Header `name` of request `i`.
    pub fn header(&self, i: usize, name: &str) -> Option<String> {
        self.requests.borrow()[i].headers.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone())
    }
}

impl Outbound for FakeOutbound {
    fn fetch(&self, req: OutboundRequest) -> LocalBoxFuture<'_, Result<OutboundResponse, OutboundError>> {
        self.requests.borrow_mut().push(req);
        let next = self.responses.borrow_mut().pop_front();
        Box::pin(async move { next.unwrap_or_else(|| Err(OutboundError("no scripted response".into()))) })
    }
    fn sleep(&self, ms: u32) -> LocalBoxFuture<'_, ()> {
        self.slept_ms.set(self.slept_ms.get() + u64::from(ms));
        Box::pin(async {})
    }
}

/// Runs `tool` through `workspace::call_tool` as `principal`, for a caller with
/// `structuredContent`, and checks that a successful call's structured content conforms to the
/// tool's declared output schema (MCP tools §output-schema: the server MUST return conforming
/// structured content; MCP-CONFORMANCE TL-11). Every tool test's call goes through it.
pub fn run_tool(
    db: &dyn Db,
    config: &crate::config::Config,
    principal: &crate::auth::Principal,
    tool: &str,
    arguments: serde_json::Value,
    now_ms: i64,
) -> crate::tools::ToolOutcome {
    let call = crate::workspace::ToolCall {
        tool: tool.into(),
        arguments,
        principal: principal.clone(),
        request_id: "req_1".into(),
        structured_content: true,
    };
    let out = block_on(crate::workspace::call_tool(db, config, &crate::outbound::NoNetwork, call, now_ms));
    if out.outcome == crate::tools::Outcome::Ok
        && let (Some(t), Some(structured)) = (crate::tools::find(tool), &out.structured)
        && let Err(e) = crate::tools::schema::validate(&t.output_schema(), structured)
    {
        panic!("{tool}: structuredContent does not conform to its outputSchema: {e}\n{structured}");
    }
    out
}

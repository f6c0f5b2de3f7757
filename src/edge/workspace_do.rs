//! The workspace Durable Object: one per workspace, holding its SQLite database. Tool calls,
//! ops (web page, webhooks, sandbox pages), the user's OAuth grants and browser sessions
//! (`oauth::grants`) and the alarm run here, next to the data, one at a time per workspace.
//! After each, the alarm is armed for the next due job of the scheduler.

use std::cell::Cell;
use std::rc::Rc;

use wasm_bindgen::prelude::wasm_bindgen;
use worker::{DurableObject, Env, Request, Response, State, durable_object};

use super::db::DoDb;
use super::outbound::WorkerFetch;
use crate::oauth::grants::{self, AccountOp};
use crate::store::Remembering;
use crate::workspace::{self, Op, Services, ToolCall};

/// A workspace's Durable Object (SQLite-backed; see `docs/storage.md`). The Worker calls it over
/// Workers RPC (`call`, below), not `fetch`.
// `alarm`: fetch and alarm only. The bare attribute also exports WebSocket and `connect`
// handlers, unused here (3.4 KB of the module, gzip).
#[durable_object(alarm)]
pub struct Workspace {
    /// Shared with the futures of RPC calls, which must own what they use.
    inner: Rc<Inner>,
}

struct Inner {
    state: State,
    env: Env,
    /// The alarm this instance last set (`Some(None)`: none), so requests that schedule nothing
    /// do not touch the alarm. Unknown (`None`) after a restart.
    armed: Cell<Option<Option<i64>>>,
    /// Schema applied and owner checked, once per instance (see `workspace::Opened`).
    opened: workspace::Opened,
    /// The workspace's SQLite, the one way into it for every request and alarm of this
    /// instance, so that the reads it remembers are forgotten by every write (`Remembering`:
    /// nothing else reaches this object's storage, and a storage failure discards the instance).
    db: Remembering<DoDb>,
}

impl DurableObject for Workspace {
    fn new(state: State, env: Env) -> Self {
        let db = Remembering::new(DoDb::new(state.storage()));
        let opened = workspace::Opened::default();
        Workspace { inner: Rc::new(Inner { state, env, armed: Cell::new(None), opened, db }) }
    }

    async fn fetch(&self, _req: Request) -> worker::Result<Response> {
        super::rpc_only()
    }

    async fn alarm(&self) -> worker::Result<Response> {
        self.inner.alarm().await
    }
}

#[wasm_bindgen]
impl Workspace {
    /// The Worker's way in (Workers RPC, `stub.call(path, body)`, through the class
    /// `src/edge/entry.js` exports around this one): resolves to `STATUS\ntext`. A call skips
    /// the `Request` and `Response` of an HTTP `fetch`, about a quarter of the CPU of a bare
    /// round trip to an object (bench/README.md, "Durable Object calls").
    pub fn call(&self, path: String, body: String) -> js_sys::Promise {
        let inner = Rc::clone(&self.inner);
        super::rpc_answer(async move { inner.answer(&path, &body).await })
    }
}

impl Inner {
    /// Runs the request for `path` (`/tool`, `/op`, `/account`) with `body`, then arms the alarm;
    /// the status and text of the answer.
    async fn answer(&self, path: &str, body: &str) -> (u16, String) {
        let config = super::config(&self.env);
        let config = match config.as_ref() {
            Ok(config) => config,
            Err(e) => return (500, format!("configuration: {e}")),
        };
        let db = &self.db;
        let svc = Services { db, config, outbound: &WorkerFetch, now_ms: super::now_ms() };
        let answer = match path {
            "/tool" => match serde_json::from_str::<ToolCall>(body) {
                Ok(call) => {
                    let structured_content = call.structured_content;
                    let outcome =
                        workspace::call_tool_opened(db, &self.opened, config, &WorkerFetch, call, svc.now_ms)
                            .await;
                    (200, outcome.into_answer(structured_content).to_frame())
                }
                Err(e) => (400, format!("bad call: {e}")),
            },
            "/op" => match serde_json::from_str::<Op>(body) {
                Ok(op) => match workspace::handle_op(&svc, &self.opened, op).await {
                    Ok(reply) => super::json_answer(&reply),
                    Err(e) => (500, format!("op failed: {e}")),
                },
                Err(e) => (400, format!("bad op: {e}")),
            },
            // The object's id is the routing id carried by the user's opaque tokens.
            "/account" => match serde_json::from_str::<AccountOp>(body) {
                Ok(op) => {
                    match grants::apply(db, &self.opened, &self.state.id().to_string(), op, svc.now_ms) {
                        Ok(reply) => super::json_answer(&reply),
                        Err(e) => (500, format!("grants: {e}")),
                    }
                }
                Err(e) => (400, format!("bad op: {e}")),
            },
            other => (404, format!("no such workspace endpoint {other}")),
        };
        self.arm(db).await;
        answer
    }

    async fn alarm(&self) -> worker::Result<Response> {
        // The alarm that woke us is spent.
        self.armed.set(Some(None));
        let config = super::config(&self.env);
        let config = match config.as_ref() {
            Ok(config) => config,
            Err(e) => return Response::error(format!("configuration: {e}"), 500),
        };
        let db = &self.db;
        let svc = Services { db, config, outbound: &WorkerFetch, now_ms: super::now_ms() };
        let report = workspace::on_alarm(&svc, &self.opened).await;
        let line = match &report {
            Ok(r) => {
                serde_json::json!({ "event": "alarm", "ran": r.ran, "retried": r.retried, "next": r.next_due })
            }
            Err(e) => serde_json::json!({ "event": "alarm", "error": e.to_string() }),
        };
        worker::console_log!("{line}");
        self.arm(db).await;
        Response::ok("")
    }

    /// Sets the alarm to the next due job (or clears it), unless it is already set so. A storage
    /// failure here is logged: the next request or alarm arms it again.
    async fn arm(&self, db: &dyn crate::store::Db) {
        let next = match workspace::next_alarm(db) {
            Ok(next) => next,
            Err(e) => {
                worker::console_log!(
                    "{}",
                    serde_json::json!({ "event": "alarm_arm", "error": e.to_string() })
                );
                return;
            }
        };
        if self.armed.get() == Some(next) {
            return;
        }
        let storage = self.state.storage();
        let result = match next {
            Some(at) => storage.set_alarm(super::alarm_at(at)).await,
            None => storage.delete_alarm().await,
        };
        match result {
            Ok(()) => self.armed.set(Some(next)),
            Err(e) => {
                self.armed.set(None);
                worker::console_log!(
                    "{}",
                    serde_json::json!({ "event": "alarm_arm", "error": e.to_string() })
                );
            }
        }
    }
}

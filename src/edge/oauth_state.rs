//! The `OAuthState` Durable Object: short-lived authorization state (`oauth::state`), one object
//! per secret it guards. After every operation, and in its alarm after purging what expired, an
//! object that holds nothing deletes its storage (`state::upkeep`), so objects leave nothing
//! behind, even those named after an unknown key.

use std::rc::Rc;

use wasm_bindgen::prelude::wasm_bindgen;
use worker::{DurableObject, Env, Request, Response, State, durable_object};

use super::db::DoDb;
use crate::oauth::state::{self, StateOp};
use crate::store::StoreError;

/// Short-lived authorization state (SQLite-backed; see `docs/storage.md`). The Worker calls it
/// over Workers RPC (`call`, below), not `fetch`.
// `alarm`: fetch and alarm only. The bare attribute also exports WebSocket and `connect`
// handlers, unused here (3.4 KB of the module, gzip).
#[durable_object(alarm)]
pub struct OAuthState {
    /// Shared with the futures of RPC calls, which must own what they use.
    inner: Rc<Inner>,
}

struct Inner {
    state: State,
    /// Whether this instance has created its tables (forgotten when the alarm deletes them).
    tables: state::Tables,
}

impl Inner {
    /// Applies the operation in `body` (a [`StateOp`]): the status and text of the answer.
    async fn answer(&self, body: &str) -> (u16, String) {
        let op: StateOp = match serde_json::from_str(body) {
            Ok(op) => op,
            Err(e) => return (400, format!("bad op: {e}")),
        };
        let db = DoDb::new(self.state.storage());
        let reply = match state::apply(&db, &self.tables, op, super::now_ms()) {
            Ok(reply) => reply,
            Err(e) => return (500, format!("state: {e}")),
        };
        // A failure is only logged: the operation itself has already happened (a single-use
        // entry may be gone), and the next operation or alarm tries again.
        if let Err(e) = self.upkeep(state::upkeep(&db, &self.tables)).await {
            worker::console_log!("{}", serde_json::json!({ "event": "oauth_state_upkeep", "error": e }));
        }
        super::json_answer(&reply)
    }

    /// Carries out `state::upkeep`: sets the alarm to when the last entry expires, or deletes
    /// the storage of an object that holds nothing.
    async fn upkeep(&self, decided: Result<state::Upkeep, StoreError>) -> Result<(), String> {
        let storage = self.state.storage();
        match decided.map_err(|e| e.to_string())? {
            state::Upkeep::AlarmAt(ms) => {
                storage.set_alarm(super::alarm_at(ms)).await.map_err(|e| e.to_string())
            }
            // `upkeep` has already forgotten the tables.
            state::Upkeep::DeleteAll => storage.delete_all().await.map_err(|e| e.to_string()),
        }
    }
}

impl DurableObject for OAuthState {
    fn new(state: State, _env: Env) -> Self {
        OAuthState { inner: Rc::new(Inner { state, tables: state::Tables::default() }) }
    }

    async fn fetch(&self, _req: Request) -> worker::Result<Response> {
        super::rpc_only()
    }

    async fn alarm(&self) -> worker::Result<Response> {
        let inner = &self.inner;
        let db = DoDb::new(inner.state.storage());
        match state::purge(&db, &inner.tables, super::now_ms()) {
            // An error fails the alarm, which the runtime retries.
            Ok(decided) => inner.upkeep(Ok(decided)).await.map_err(worker::Error::RustError)?,
            Err(e) => return Response::error(format!("purge: {e}"), 500),
        }
        Response::ok("purged")
    }
}

#[wasm_bindgen]
impl OAuthState {
    /// The Worker's way in (Workers RPC, `stub.call(path, body)`, as for the workspace object):
    /// resolves to `STATUS\ntext`. The path is not read: the object has one operation.
    pub fn call(&self, _path: String, body: String) -> js_sys::Promise {
        let inner = Rc::clone(&self.inner);
        super::rpc_answer(async move { inner.answer(&body).await })
    }
}

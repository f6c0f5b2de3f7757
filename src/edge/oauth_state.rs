//! The `OAuthState` Durable Object: short-lived authorization state (`oauth::state`), one object
//! per secret it guards. After every operation, and in its alarm after purging what expired, an
//! object that holds nothing deletes its storage (`state::upkeep`), so objects leave nothing
//! behind, even those named after an unknown key.

use chrono::DateTime;
use worker::{DurableObject, Env, Request, Response, State, durable_object};

use super::db::DoDb;
use crate::oauth::state::{self, StateOp};
use crate::store::StoreError;

/// Short-lived authorization state (SQLite-backed; see `docs/storage.md`).
// `alarm`: fetch and alarm only. The bare attribute also exports WebSocket and `connect`
// handlers, unused here (3.4 KB of the module, gzip).
#[durable_object(alarm)]
pub struct OAuthState {
    state: State,
    /// Whether this instance has created its tables (forgotten when the alarm deletes them).
    tables: state::Tables,
}

impl OAuthState {
    /// Carries out `state::upkeep`: sets the alarm to when the last entry expires, or deletes
    /// the storage of an object that holds nothing.
    async fn upkeep(&self, decided: Result<state::Upkeep, StoreError>) -> Result<(), String> {
        let storage = self.state.storage();
        match decided.map_err(|e| e.to_string())? {
            state::Upkeep::AlarmAt(ms) => match DateTime::from_timestamp_millis(ms) {
                Some(at) => storage.set_alarm(at).await.map_err(|e| e.to_string()),
                None => Ok(()),
            },
            // `upkeep` has already forgotten the tables.
            state::Upkeep::DeleteAll => storage.delete_all().await.map_err(|e| e.to_string()),
        }
    }
}

impl DurableObject for OAuthState {
    fn new(state: State, _env: Env) -> Self {
        OAuthState { state, tables: state::Tables::default() }
    }

    async fn fetch(&self, mut req: Request) -> worker::Result<Response> {
        let op: StateOp = match super::read_json(&mut req).await {
            Ok(op) => op,
            Err(e) => return Response::error(format!("bad op: {e}"), 400),
        };
        let db = DoDb::new(self.state.storage());
        match state::apply(&db, &self.tables, op, super::now_ms()) {
            Ok(reply) => {
                // A failure is only logged: the operation itself has already happened (a
                // single-use entry may be gone), and the next operation or alarm tries again.
                if let Err(e) = self.upkeep(state::upkeep(&db, &self.tables)).await {
                    worker::console_log!(
                        "{}",
                        serde_json::json!({ "event": "oauth_state_upkeep", "error": e })
                    );
                }
                Response::from_json(&reply)
            }
            Err(e) => Response::error(format!("state: {e}"), 500),
        }
    }

    async fn alarm(&self) -> worker::Result<Response> {
        let db = DoDb::new(self.state.storage());
        match state::purge(&db, &self.tables, super::now_ms()) {
            // An error fails the alarm, which the runtime retries.
            Ok(decided) => self.upkeep(Ok(decided)).await.map_err(worker::Error::RustError)?,
            Err(e) => return Response::error(format!("purge: {e}"), 500),
        }
        Response::ok("purged")
    }
}

//! The `OAuthState` Durable Object: short-lived authorization state (`oauth::state`), one object
//! per secret it guards. Its alarm purges what expired and, once the object is empty, deletes
//! its storage, so objects leave nothing behind.

use chrono::DateTime;
use worker::{DurableObject, Env, Request, Response, State, durable_object};

use super::db::DoDb;
use crate::oauth::state::{self, StateOp};

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
    /// Sets the alarm to when the last entry expires (a second later). A failure is only logged:
    /// the operation itself has already happened (a single-use entry may be gone), and the next
    /// operation or alarm sets the alarm again.
    async fn schedule(&self, db: &DoDb) {
        let result = match state::last_expiry(db, &self.tables) {
            Ok(Some(ms)) => match DateTime::from_timestamp_millis(ms + 1000) {
                Some(at) => self.state.storage().set_alarm(at).await.map_err(|e| e.to_string()),
                None => Ok(()),
            },
            Ok(None) => Ok(()),
            Err(e) => Err(e.to_string()),
        };
        if let Err(e) = result {
            worker::console_log!("{}", serde_json::json!({ "event": "oauth_state_alarm", "error": e }));
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
                self.schedule(&db).await;
                Response::from_json(&reply)
            }
            Err(e) => Response::error(format!("state: {e}"), 500),
        }
    }

    async fn alarm(&self) -> worker::Result<Response> {
        let db = DoDb::new(self.state.storage());
        match state::purge(&db, &self.tables, super::now_ms()) {
            Ok(true) => {
                // Forgotten first: should the deletion fail halfway, the next operation
                // creates again whatever tables are missing.
                self.tables.forget();
                self.state.storage().delete_all().await?;
            }
            Ok(false) => self.schedule(&db).await,
            Err(e) => return Response::error(format!("purge: {e}"), 500),
        }
        Response::ok("purged")
    }
}

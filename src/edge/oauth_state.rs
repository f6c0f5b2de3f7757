//! The `OAuthState` Durable Object: short-lived authorization state (`oauth::state`), one object
//! per secret it guards. Its alarm purges what expired and, once the object is empty, deletes
//! its storage, so objects leave nothing behind.

use chrono::DateTime;
use worker::{DurableObject, Env, Request, Response, State, durable_object};

use super::db::DoDb;
use crate::oauth::state::{self, StateOp};

/// Short-lived authorization state (SQLite-backed; see `docs/storage.md`).
#[durable_object]
pub struct OAuthState {
    state: State,
}

impl OAuthState {
    /// Sets the alarm to when the last entry expires (a second later).
    async fn schedule(&self, db: &DoDb) -> worker::Result<()> {
        let last = state::last_expiry(db).map_err(|e| worker::Error::RustError(e.to_string()))?;
        if let Some(at) = last.and_then(|ms| DateTime::from_timestamp_millis(ms + 1000)) {
            self.state.storage().set_alarm(at).await?;
        }
        Ok(())
    }
}

impl DurableObject for OAuthState {
    fn new(state: State, _env: Env) -> Self {
        OAuthState { state }
    }

    async fn fetch(&self, mut req: Request) -> worker::Result<Response> {
        let op: StateOp = match req.json().await {
            Ok(op) => op,
            Err(e) => return Response::error(format!("bad op: {e}"), 400),
        };
        let db = DoDb::new(self.state.storage());
        match state::apply(&db, op, super::now_ms()) {
            Ok(reply) => {
                self.schedule(&db).await?;
                Response::from_json(&reply)
            }
            Err(e) => Response::error(format!("state: {e}"), 500),
        }
    }

    async fn alarm(&self) -> worker::Result<Response> {
        let db = DoDb::new(self.state.storage());
        match state::purge(&db, super::now_ms()) {
            Ok(true) => self.state.storage().delete_all().await?,
            Ok(false) => self.schedule(&db).await?,
            Err(e) => return Response::error(format!("purge: {e}"), 500),
        }
        Response::ok("purged")
    }
}

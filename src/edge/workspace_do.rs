//! The workspace Durable Object: one per workspace, holding its SQLite database. Tool calls run
//! here, next to the data, one request at a time per workspace.

use worker::{DurableObject, Env, Request, Response, State, durable_object};

use super::db::DoDb;
use super::outbound::WorkerFetch;
use crate::workspace::{self, ToolCall};

/// A workspace's Durable Object (SQLite-backed; see `docs/storage.md`).
#[durable_object]
pub struct Workspace {
    state: State,
    env: Env,
}

impl DurableObject for Workspace {
    fn new(state: State, env: Env) -> Self {
        Workspace { state, env }
    }

    async fn fetch(&self, mut req: Request) -> worker::Result<Response> {
        let call: ToolCall = match req.json().await {
            Ok(call) => call,
            Err(e) => return Response::error(format!("bad call: {e}"), 400),
        };
        let config = match super::config(&self.env) {
            Ok(config) => config,
            Err(e) => return Response::error(format!("configuration: {e}"), 500),
        };
        let db = DoDb::new(self.state.storage());
        let outcome = workspace::call_tool(&db, &config, &WorkerFetch, call, super::now_ms()).await;
        Response::from_json(&outcome)
    }
}

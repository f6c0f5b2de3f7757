//! The Workers edge: the only module that names the `worker` crate. It turns a
//! `worker::Request` into an [`HttpRequest`], gives the router a [`Platform`] over the Worker's
//! environment, writes the log line, and hosts the workspace Durable Object.

mod db;
mod outbound;
mod workspace_do;

use std::cell::OnceCell;

use worker::{Context, Date, Env, Method, Request, RequestInit, Response, event};

use crate::config::{Config, ConfigError};
use crate::http::{self, HttpRequest, HttpResponse, Platform, Workspaces};
use crate::mcp::{MAX_BODY_BYTES, ToolBackend};
use crate::tools::{ToolOutcome, registry::LocalBoxFuture};
use crate::workspace::{Op, OpReply, ToolCall};

/// The Durable Object binding of workspaces (wrangler.toml).
const WORKSPACE_BINDING: &str = "WORKSPACE";

thread_local! {
    /// Vars and secrets do not change during an isolate's life, so they are parsed once.
    static CONFIG: OnceCell<Result<Config, ConfigError>> = const { OnceCell::new() };
}

/// The configuration of this isolate.
pub(crate) fn config(env: &Env) -> Result<Config, ConfigError> {
    CONFIG.with(|cell| {
        cell.get_or_init(|| {
            Config::from_lookup(|name| {
                env.var(name).map(|v| v.to_string()).or_else(|_| env.secret(name).map(|s| s.to_string())).ok()
            })
        })
        .clone()
    })
}

/// Milliseconds since the epoch, from the JavaScript clock (`SystemTime` panics on wasm32).
pub(crate) fn now_ms() -> i64 {
    i64::try_from(Date::now().as_millis()).unwrap_or(i64::MAX)
}

struct EdgePlatform {
    env: Env,
    config: Result<Config, ConfigError>,
    now_ms: i64,
}

impl Platform for EdgePlatform {
    fn config(&self) -> Result<&Config, &ConfigError> {
        self.config.as_ref()
    }
    fn now_ms(&self) -> i64 {
        self.now_ms
    }
    fn tools(&self) -> &dyn ToolBackend {
        self
    }
    fn workspaces(&self) -> &dyn Workspaces {
        self
    }
}

impl EdgePlatform {
    /// POSTs `body` as JSON to `path` on workspace `workspace`'s Durable Object and decodes the
    /// JSON answer.
    async fn send<T: serde::de::DeserializeOwned>(
        &self,
        workspace: &str,
        path: &str,
        body: &impl serde::Serialize,
    ) -> Result<T, String> {
        let stub = self
            .env
            .durable_object(WORKSPACE_BINDING)
            .and_then(|ns| ns.id_from_name(workspace)?.get_stub())
            .map_err(|e| format!("workspace stub: {e}"))?;
        let body = serde_json::to_string(body).map_err(|e| format!("encoding request: {e}"))?;
        let mut init = RequestInit::new();
        init.with_method(Method::Post).with_body(Some(body.into()));
        let request =
            Request::new_with_init(&format!("https://workspace{path}"), &init).map_err(|e| e.to_string())?;
        let mut response =
            stub.fetch_with_request(request).await.map_err(|e| format!("workspace fetch: {e}"))?;
        if response.status_code() != 200 {
            let text = response.text().await.unwrap_or_default();
            return Err(format!("workspace answered {}: {text}", response.status_code()));
        }
        response.json::<T>().await.map_err(|e| format!("decoding answer: {e}"))
    }
}

impl ToolBackend for EdgePlatform {
    /// Forwards the call to the workspace's Durable Object, which runs the tool next to its data.
    fn call_tool(&self, call: ToolCall) -> LocalBoxFuture<'_, Result<ToolOutcome, String>> {
        Box::pin(async move { self.send(&call.principal.workspace.clone(), "/tool", &call).await })
    }
}

impl Workspaces for EdgePlatform {
    fn op(&self, workspace: &str, op: Op) -> LocalBoxFuture<'_, Result<OpReply, String>> {
        let workspace = workspace.to_owned();
        Box::pin(async move { self.send(&workspace, "/op", &op).await })
    }
}

#[event(fetch)]
async fn fetch(mut req: Request, env: Env, _ctx: Context) -> worker::Result<Response> {
    let started = now_ms();
    let request_id =
        req.headers().get("cf-ray").ok().flatten().unwrap_or_else(|| crate::ids::random_id("req_"));
    let http_req = read_request(&mut req).await;
    let platform = EdgePlatform { config: config(&env), env, now_ms: started };
    let (response, trace) = http::route(&http_req, &platform, &request_id).await;
    worker::console_log!(
        "{}",
        crate::log::request_line(
            &request_id,
            &http_req.method,
            &http_req.path,
            response.status,
            &trace,
            now_ms() - started
        )
    );
    to_worker_response(response)
}

async fn read_request(req: &mut Request) -> HttpRequest {
    let url = req.url().ok();
    let headers: Vec<(String, String)> =
        req.headers().entries().map(|(k, v)| (k.to_ascii_lowercase(), v)).collect();
    let declared =
        headers.iter().find(|(k, _)| k == "content-length").and_then(|(_, v)| v.trim().parse::<usize>().ok());
    let method = req.method().to_string().to_ascii_uppercase();
    // Only POST bodies are read, and never one announced as too large.
    let body = if method != "POST" || declared.is_some_and(|n| n > MAX_BODY_BYTES) {
        if method == "POST" { None } else { Some(Vec::new()) }
    } else {
        match req.bytes().await {
            Ok(bytes) if bytes.len() <= MAX_BODY_BYTES => Some(bytes),
            Ok(_) => None,
            Err(_) => Some(Vec::new()),
        }
    };
    HttpRequest {
        method,
        path: url.as_ref().map(|u| u.path().to_owned()).unwrap_or_else(|| req.path()),
        query: url.as_ref().and_then(|u| u.query().map(str::to_owned)),
        headers,
        body,
    }
}

fn to_worker_response(response: HttpResponse) -> worker::Result<Response> {
    let HttpResponse { status, headers, body } = response;
    let out = if body.is_empty() { Response::empty()? } else { Response::from_bytes(body)? };
    // A fresh header set: `from_bytes` would otherwise add its own octet-stream content type.
    let fresh = worker::Headers::new();
    for (name, value) in headers {
        fresh.append(&name, &value)?;
    }
    Ok(out.with_status(status).with_headers(fresh))
}

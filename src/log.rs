//! One structured JSON log line per request: request id, route, JSON-RPC method, tool, outcome,
//! status and duration. Never tokens, secrets, arguments or bodies.

use serde::Serialize;

use crate::mcp::Trace;

/// The facts of one finished request.
#[derive(Debug, Serialize)]
pub struct RequestLog<'a> {
    /// Always `"request"`, to filter on.
    pub event: &'static str,
    /// The request id (also sent as `X-Request-Id`).
    pub rid: &'a str,
    /// HTTP method.
    pub method: &'a str,
    /// URL path.
    pub route: &'a str,
    /// HTTP status.
    pub status: u16,
    /// JSON-RPC method, on the MCP endpoint.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rpc: Option<&'a str>,
    /// Tool name, for `tools/call`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool: Option<&'a str>,
    /// What happened.
    pub outcome: &'a str,
    /// Internal detail (error reasons), never sent to clients.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub detail: Option<&'a str>,
    /// Milliseconds spent.
    pub ms: i64,
}

/// The log line for one request.
pub fn request_line(rid: &str, method: &str, route: &str, status: u16, trace: &Trace, ms: i64) -> String {
    let record = RequestLog {
        event: "request",
        rid,
        method,
        route,
        status,
        rpc: trace.rpc_method.as_deref(),
        tool: trace.tool.as_deref(),
        outcome: trace.outcome,
        detail: trace.detail.as_deref(),
        ms,
    };
    serde_json::to_string(&record).unwrap_or_default()
}

/// The facts of an isolate's start, logged once by it.
#[derive(Debug, Serialize)]
struct StartLog<'a> {
    /// Always `"start"`.
    event: &'static str,
    /// `"ok"`, why the configuration is unusable (every request will say so too), or that the
    /// runtime gave no environment at start (the first request reads it then).
    config: &'a str,
    /// How the rehearsal of the hottest requests went (`rehearsal::rehearse`).
    rehearsal: &'a str,
}

/// The log line of an isolate's start.
pub fn start_line(config: &str, rehearsal: &str) -> String {
    serde_json::to_string(&StartLog { event: "start", config, rehearsal }).unwrap_or_default()
}

//! One structured JSON log line per request: request id, route, JSON-RPC method, tool, outcome,
//! status and duration. Never tokens, secrets, arguments or bodies.
//!
//! Routine requests (`is_routine`) get no line unless `LOG_REQUESTS=all`: one `console.log` was
//! about a quarter of the CPU of an `initialize` in workerd (164 against 120 µs in an A/B,
//! bench/README.md), and on Cloudflare every line is a billed log event. Every request that
//! reads or changes a workspace or a grant, and every failure, is still logged.

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
    // An unsubscribe link's path is its token: anyone reading the logs could use it, and its hash
    // of the address tells who acted on a link (audit finding). So is a sandbox checkout or
    // portal page's session: with it, anyone could pay for or cancel that workspace's plan.
    let route = if route.starts_with(crate::compliance::UNSUBSCRIBE_PATH) {
        "/u/…"
    } else if route.starts_with("/sandbox/checkout/") {
        "/sandbox/checkout/…"
    } else if route.starts_with("/sandbox/portal/") {
        "/sandbox/portal/…"
    } else {
        route
    };
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

/// Whether a finished request is routine: answered from what the isolate holds, with nothing
/// read or changed and nothing wrong. That is the protocol's bookkeeping on the MCP endpoint
/// (`initialize`, notifications, `ping`, listing tools and resources, reading the card), the
/// bare challenge to a request that presented no credentials (how every client starts
/// discovery), the endpoint's preflight and its 405 to a GET (the SDK's probe for a server
/// stream), and the health and discovery documents. A tool call, an invalid token, any other
/// error and every other route are not routine.
pub fn is_routine(method: &str, route: &str, status: u16, trace: &Trace) -> bool {
    use crate::oauth::{AS_METADATA_PATH, PRM_PATH};
    match (method, route) {
        ("POST", crate::config::MCP_PATH) => {
            let protocol = trace.rpc_method.as_deref().is_some_and(|m| {
                matches!(
                    m,
                    "initialize"
                        | "ping"
                        | "tools/list"
                        | "resources/list"
                        | "resources/templates/list"
                        | "resources/read"
                ) || m.starts_with("notifications/")
            });
            (protocol
                && trace.tool.is_none()
                && matches!(status, 200 | 202)
                && matches!(trace.outcome, "ok" | "accepted"))
                || (status == 401 && trace.outcome == CHALLENGE)
        }
        ("OPTIONS", crate::config::MCP_PATH) => status < 400,
        ("GET", crate::config::MCP_PATH) => status == 405,
        ("GET" | "HEAD" | "OPTIONS", "/health" | AS_METADATA_PATH | PRM_PATH | crate::http::PRM_MCP_PATH) => {
            status < 400
        }
        _ => false,
    }
}

/// The outcome of a request to the MCP endpoint that presented no credentials at all.
pub const CHALLENGE: &str = "challenge";

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn capability_paths_never_reach_the_log() {
        let line = request_line("req_1", "POST", "/u/d3NfMTpmOWNm.4sXeyHFv", 200, &Trace::default(), 3);
        assert!(line.contains(r#""route":"/u/…""#) && !line.contains("d3NfMTpm"), "{line}");
        for (path, kept) in [
            ("/sandbox/checkout/ws_1/cs_sandbox_9f8e7d", "/sandbox/checkout/…"),
            ("/sandbox/portal/ws_1/bps_sandbox_9f8e7d", "/sandbox/portal/…"),
        ] {
            let line = request_line("req_1", "POST", path, 200, &Trace::default(), 3);
            assert!(line.contains(&format!(r#""route":"{kept}""#)) && !line.contains("9f8e7d"), "{line}");
        }
        let other = request_line("req_1", "GET", "/app", 200, &Trace::default(), 3);
        assert!(other.contains(r#""route":"/app""#), "{other}");
    }
}

//! The MCP endpoint over stateless Streamable HTTP (MCP 2025-11-25 basic/transports): one POST
//! carries one JSON-RPC message (or, in 2025-03-26, a batch), gets its answer as JSON or as a
//! one-shot SSE stream, and leaves nothing behind. No session id is ever issued.
//!
//! This module knows a [`Principal`], never OAuth. Tool calls go to a [`ToolBackend`] (the
//! workspace's Durable Object on Workers, an in-process workspace in native tests).

pub mod jsonrpc;
pub mod server;
pub mod version;

use std::rc::Rc;

use serde_json::{Map, Value};

use self::jsonrpc::{Incoming, RpcError};
use self::version::Version;
use crate::auth::Principal;
use crate::auth::bearer::AuthError;
use crate::tools::{self, ToolAnswer, ToolOutcome, registry::LocalBoxFuture};
use crate::workspace::ToolCall;

/// Bodies above this size are refused with 413 before they are parsed.
pub const MAX_BODY_BYTES: usize = 1024 * 1024;

/// Runs tool calls in the caller's workspace.
pub trait ToolBackend {
    /// Forwards one call; `Err` is a platform failure (logged, answered as an internal error).
    fn call_tool(&self, call: ToolCall) -> LocalBoxFuture<'_, Result<ToolAnswer, String>>;
}

/// The HTTP facts of one POST that the MCP layer needs.
#[derive(Debug, Clone, Copy)]
pub struct McpRequest<'a> {
    /// The `Accept` header.
    pub accept: Option<&'a str>,
    /// The `Content-Type` header.
    pub content_type: Option<&'a str>,
    /// The `MCP-Protocol-Version` header.
    pub protocol_version: Option<&'a str>,
    /// The body.
    pub body: &'a [u8],
}

/// What to send back.
#[derive(Debug, Clone, PartialEq)]
pub enum McpReply {
    /// 202 Accepted, empty body: the POST held only notifications or responses.
    Accepted,
    /// A JSON-RPC answer (or a transport-level JSON-RPC error) with its HTTP status.
    Body {
        /// HTTP status.
        status: u16,
        /// The JSON text.
        json: String,
        /// Send it as one SSE `message` event rather than as `application/json`.
        sse: bool,
    },
    /// A 200 JSON answer whose result is shared for the isolate's life (`initialize`,
    /// `tools/list`, the card): the HTTP layer may send it compressed (`crate::gzip`).
    Shared(SharedAnswer),
    /// The token may not use a requested tool: HTTP 403 `insufficient_scope`, said as the
    /// error says.
    Forbidden(AuthError),
    /// The token's grant was revoked (seen when a tool reached the workspace): HTTP 401
    /// `invalid_token`, so the client authorizes again.
    GrantRevoked,
}

/// A JSON-RPC response in two parts: the envelope's head, which holds the request's id, and a
/// result that every such request shares; the envelope closes with [`jsonrpc::RESULT_TAIL`].
#[derive(Debug, Clone, PartialEq)]
pub struct SharedAnswer {
    /// `{"jsonrpc":"2.0","id":…,"result":`.
    pub head: String,
    /// The result, built once per isolate.
    pub result: Rc<str>,
}

impl SharedAnswer {
    /// The whole response.
    pub fn text(&self) -> String {
        [self.head.as_str(), &self.result, jsonrpc::RESULT_TAIL].concat()
    }
}

/// What happened, for the request's log line.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Trace {
    /// The JSON-RPC method (`batch` for a batch).
    pub rpc_method: Option<String>,
    /// The tool, for `tools/call`.
    pub tool: Option<String>,
    /// `ok`, `refused`, `failed`, `rpc_error`, `http_error`, `forbidden`, `accepted`,
    /// `unauthorized`, `challenge` (no credentials at all), or one of the OAuth and webhook
    /// outcomes.
    pub outcome: &'static str,
    /// Internal detail for the log (never sent).
    pub detail: Option<String>,
    /// Whether the request gets a log line (`http::route` decides, by `log::is_routine`).
    pub logged: bool,
}

/// Handles one authenticated POST to the MCP endpoint.
pub async fn handle(
    req: McpRequest<'_>,
    principal: &Principal,
    backend: &dyn ToolBackend,
    request_id: &str,
    trace: &mut Trace,
) -> McpReply {
    let Some(sse) = choose_format(req.accept) else {
        return transport_error(
            trace,
            406,
            "Not Acceptable: the client must accept application/json or text/event-stream",
        );
    };
    if !is_json_media_type(req.content_type) {
        return transport_error(trace, 415, "Unsupported Media Type: send Content-Type: application/json");
    }
    if req.body.len() > MAX_BODY_BYTES {
        return transport_error(trace, 413, "Payload Too Large: the body exceeds 1 MiB");
    }
    // serde_json stops at 128 levels of nesting, so hostile depth is a parse error, not a crash.
    let parsed: Value = match serde_json::from_slice(req.body) {
        Ok(v) => v,
        Err(_) => {
            trace.outcome = "rpc_error";
            let error = RpcError::new(jsonrpc::PARSE_ERROR, "Parse error: the body is not valid JSON");
            return McpReply::Body { status: 400, json: jsonrpc::error_json(None, &error), sse };
        }
    };
    let is_initialize = parsed.get("method").and_then(Value::as_str) == Some("initialize");
    // Transports §protocol-version-header: an unsupported header is a 400; a missing one means
    // 2025-03-26. `initialize` carries its version in the body instead (MCP-CONFORMANCE T-33).
    let version = match req.protocol_version {
        Some(v) => match Version::parse(v.trim()) {
            Some(v) => v,
            None if is_initialize => Version::LATEST,
            None => {
                return transport_error(trace, 400, "Bad Request: unsupported MCP-Protocol-Version");
            }
        },
        None => Version::DEFAULT_WITHOUT_HEADER,
    };
    let cx = Dispatch { principal, backend, request_id, version };
    match parsed {
        Value::Array(items) => handle_batch(&cx, items, sse, trace).await,
        single => {
            let (status, answer) = match jsonrpc::classify(single) {
                Ok(Incoming::NoReply { method }) => {
                    trace.rpc_method = method;
                    trace.outcome = "accepted";
                    return McpReply::Accepted;
                }
                Ok(Incoming::Request { id, method, params }) => {
                    trace.rpc_method = Some(method.clone());
                    match cx.request(&method, params, trace).await {
                        Answer::Result(result) => (200, jsonrpc::result_raw(&id, &result)),
                        Answer::Shared(result) if !sse => {
                            return McpReply::Shared(SharedAnswer {
                                head: jsonrpc::result_head(&id),
                                result,
                            });
                        }
                        Answer::Shared(result) => (200, jsonrpc::result_raw(&id, &result)),
                        Answer::Error(error) => {
                            trace.outcome = "rpc_error";
                            (200, jsonrpc::error_json(Some(&id), &error))
                        }
                        Answer::Forbidden(why) => return McpReply::Forbidden(why),
                        Answer::Revoked => return McpReply::GrantRevoked,
                    }
                }
                Err((id, error)) => {
                    trace.outcome = "rpc_error";
                    (400, jsonrpc::error_json(id.as_ref(), &error))
                }
            };
            McpReply::Body { status, json: answer, sse }
        }
    }
}

/// A 2025-03-26 batch: each request answered in order; notifications and responses are not.
async fn handle_batch(cx: &Dispatch<'_>, items: Vec<Value>, sse: bool, trace: &mut Trace) -> McpReply {
    trace.rpc_method = Some("batch".into());
    if !cx.version.allows_batches() {
        trace.outcome = "rpc_error";
        let error = RpcError::new(
            jsonrpc::INVALID_REQUEST,
            format!("Invalid Request: protocol version {} does not allow batches", cx.version.as_str()),
        );
        return McpReply::Body { status: 400, json: jsonrpc::error_json(None, &error), sse };
    }
    if items.is_empty() {
        trace.outcome = "rpc_error";
        let error = RpcError::new(jsonrpc::INVALID_REQUEST, "Invalid Request: empty batch");
        return McpReply::Body { status: 400, json: jsonrpc::error_json(None, &error), sse };
    }
    const MAX_BATCH: usize = 32;
    if items.len() > MAX_BATCH {
        trace.outcome = "rpc_error";
        let error = RpcError::new(
            jsonrpc::INVALID_REQUEST,
            format!("Invalid Request: at most {MAX_BATCH} messages per batch"),
        );
        return McpReply::Body { status: 400, json: jsonrpc::error_json(None, &error), sse };
    }
    // 2025-03-26 lifecycle: initialize must not be part of a batch. Such a batch is refused
    // whole (MCP-CONFORMANCE T-22), before any of its other requests runs.
    if items.iter().any(|item| item.get("method").and_then(Value::as_str) == Some("initialize")) {
        trace.outcome = "rpc_error";
        let error = RpcError::new(jsonrpc::INVALID_REQUEST, "Invalid Request: initialize cannot be batched");
        return McpReply::Body { status: 400, json: jsonrpc::error_json(None, &error), sse };
    }
    // PRODUCT §3 answers a tool call the token may not make with HTTP 403 for the whole POST,
    // which discards every answer in the batch: so, as with initialize above, no item may run
    // before that is known, or a client that steps up and retries would run the others twice.
    // Each tools/call is judged as it would run (a copy classified, batches only: cheaper in
    // the wasm than keeping every classified item).
    for item in &items {
        if item.get("method").and_then(Value::as_str) == Some("tools/call")
            && let Ok(Incoming::Request { params, .. }) = jsonrpc::classify(item.clone())
            && let Ok(tool) = requested_tool(&params)
            && let Some(why) = tool.access().refusal(cx.principal)
        {
            trace.tool = Some(tool.name().to_owned());
            trace.outcome = "forbidden";
            return McpReply::Forbidden(why);
        }
    }
    let mut answers = Vec::new();
    for item in items {
        match jsonrpc::classify(item) {
            Ok(Incoming::NoReply { .. }) => {}
            Ok(Incoming::Request { id, method, params }) => match cx.request(&method, params, trace).await {
                Answer::Result(result) => answers.push(jsonrpc::result_raw(&id, &result)),
                Answer::Shared(result) => answers.push(jsonrpc::result_raw(&id, &result)),
                Answer::Error(error) => answers.push(jsonrpc::error_json(Some(&id), &error)),
                Answer::Forbidden(why) => return McpReply::Forbidden(why),
                Answer::Revoked => return McpReply::GrantRevoked,
            },
            Err((id, error)) => answers.push(jsonrpc::error_json(id.as_ref(), &error)),
        }
    }
    if trace.outcome.is_empty() {
        trace.outcome = "ok";
    }
    if answers.is_empty() {
        return McpReply::Accepted;
    }
    McpReply::Body { status: 200, json: format!("[{}]", answers.join(",")), sse }
}

fn transport_error(trace: &mut Trace, status: u16, message: &str) -> McpReply {
    trace.outcome = "http_error";
    let error = RpcError::new(jsonrpc::SERVER_ERROR, message);
    McpReply::Body { status, json: jsonrpc::error_json(None, &error), sse: false }
}

/// JSON unless the client accepts only SSE (`None` when it accepts neither). A missing header
/// accepts anything (RFC 9110 §12.5.1).
fn choose_format(accept: Option<&str>) -> Option<bool> {
    let Some(accept) = accept else { return Some(false) };
    // What the transport tells every client to send (transports §sending-messages), answered
    // without taking the list apart, which was about 7% of an `initialize`'s routing.
    if accept == "application/json, text/event-stream" {
        return Some(false);
    }
    let mut json = false;
    let mut sse = false;
    for (media, refused) in weighted_list(accept) {
        if refused {
            continue;
        }
        // Media types are case-insensitive (RFC 9110 §8.3.1); compared without a lower-case copy.
        let is = |name: &str| media.eq_ignore_ascii_case(name);
        let any = is("*/*");
        json |= any || is("application/json") || is("application/*");
        sse |= any || is("text/event-stream") || is("text/*");
    }
    if json {
        Some(false)
    } else if sse {
        Some(true)
    } else {
        None
    }
}

/// The elements of a list header with weights (`Accept`, `Accept-Encoding`; RFC 9110 §12.4.2),
/// each as its name, trimmed, and whether its `q` parameter refuses it.
pub fn weighted_list(header: &str) -> impl Iterator<Item = (&str, bool)> {
    header.split(',').map(|element| {
        let mut parts = element.split(';');
        let name = parts.next().unwrap_or("").trim();
        let refused =
            parts.any(|p| p.trim().strip_prefix("q=").is_some_and(|q| is_refusing_qvalue(q.trim())));
        (name, refused)
    })
}

/// Whether a `q` parameter refuses its media range (or, in `Accept-Encoding`, its coding): a decimal number zero or below (RFC 9110
/// §12.4.2: "a weight of 0 means not acceptable"). Read by hand rather than with
/// `str::parse::<f32>`, whose float parser and its tables cost the Worker's wasm about 12 KB for
/// this one header parameter; plain decimals (`0`, `0.000`, `-1`, `.0`) are judged as the float
/// parser would, anything else (`1`, `0.5`, garbage) does not refuse.
fn is_refusing_qvalue(q: &str) -> bool {
    let (negative, digits) = match q.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, q.strip_prefix('+').unwrap_or(q)),
    };
    let (int, frac) = digits.split_once('.').unwrap_or((digits, ""));
    let decimal =
        !(int.is_empty() && frac.is_empty()) && int.bytes().chain(frac.bytes()).all(|b| b.is_ascii_digit());
    decimal && (negative || int.bytes().chain(frac.bytes()).all(|b| b == b'0'))
}

fn is_json_media_type(content_type: Option<&str>) -> bool {
    content_type.is_some_and(|ct| {
        let media = ct.split(';').next().unwrap_or("").trim();
        media.eq_ignore_ascii_case("application/json")
    })
}

/// A request's answer.
enum Answer {
    /// The serialised `result`.
    Result(String),
    /// A serialised `result` built once per isolate and shared by every request asking it.
    Shared(Rc<str>),
    /// A JSON-RPC error.
    Error(RpcError),
    /// HTTP 403 for the whole POST.
    Forbidden(AuthError),
    /// HTTP 401 for the whole POST: the token's grant is gone.
    Revoked,
}

struct Dispatch<'a> {
    principal: &'a Principal,
    backend: &'a dyn ToolBackend,
    request_id: &'a str,
    version: Version,
}

fn invalid_params(message: impl Into<String>) -> Answer {
    Answer::Error(RpcError::new(jsonrpc::INVALID_PARAMS, format!("Invalid params: {}", message.into())))
}

impl Dispatch<'_> {
    async fn request(&self, method: &str, params: Map<String, Value>, trace: &mut Trace) -> Answer {
        trace.outcome = "ok";
        let version = self.version;
        match method {
            "initialize" => {
                let Some(requested) = params.get("protocolVersion").and_then(Value::as_str) else {
                    return invalid_params("protocolVersion (a string) is required");
                };
                if !params.get("capabilities").is_some_and(Value::is_object) {
                    return invalid_params("capabilities (an object) is required");
                }
                // MCP-CONFORMANCE L-01: `clientInfo` is an `Implementation`, whose `name` and
                // `version` are required strings; ill-typed is -32602.
                let info = params.get("clientInfo");
                let is_string = |key| info.and_then(|i| i.get(key)).is_some_and(Value::is_string);
                if !(is_string("name") && is_string("version")) {
                    return invalid_params(
                        "clientInfo (an object with a string name and version) is required",
                    );
                }
                let negotiated = Version::negotiate(requested);
                Answer::Shared(server::initialize_json(negotiated, self.principal))
            }
            "ping" => Answer::Result("{}".into()),
            "tools/list" => {
                if has_cursor(&params) {
                    return invalid_params("unknown cursor: tools/list has a single page");
                }
                Answer::Shared(tools::list_json(self.principal, version))
            }
            "tools/call" => self.call_tool(params, trace).await,
            "resources/list" => {
                if has_cursor(&params) {
                    return invalid_params("unknown cursor: resources/list has a single page");
                }
                Answer::Result(server::resources_list(version).to_string())
            }
            "resources/templates/list" => {
                if has_cursor(&params) {
                    return invalid_params("unknown cursor: resources/templates/list has a single page");
                }
                Answer::Result(server::resource_templates_list(version).to_string())
            }
            "resources/read" => {
                let Some(uri) = params.get("uri").and_then(Value::as_str) else {
                    return invalid_params("uri (a string) is required");
                };
                if uri == crate::card::resource_uri() {
                    return Answer::Shared(server::card_read_json());
                }
                match server::resource_read(uri) {
                    Some(result) => Answer::Result(result.to_string()),
                    None => Answer::Error(
                        RpcError::new(jsonrpc::RESOURCE_NOT_FOUND, "Resource not found")
                            .with_data(serde_json::json!({ "uri": uri })),
                    ),
                }
            }
            _ => Answer::Error(RpcError::new(
                jsonrpc::METHOD_NOT_FOUND,
                format!("Method not found: {}", truncate(method, 64)),
            )),
        }
    }

    async fn call_tool(&self, mut params: Map<String, Value>, trace: &mut Trace) -> Answer {
        if let Some(Value::String(name)) = params.get("name") {
            trace.tool = Some(truncate(name, 64));
        }
        let tool = match requested_tool(&params) {
            Ok(tool) => tool,
            Err(error) => return Answer::Error(error),
        };
        if let Some(why) = tool.access().refusal(self.principal) {
            // PRODUCT §3: a tool outside the token's scopes gets HTTP 403 so the client can step
            // up. `decide_approval` from a client that is not the Claude app gets the same 403,
            // whose description says no scope helps (it read "needs mcp:act" to a token that had it).
            trace.outcome = "forbidden";
            return Answer::Forbidden(why);
        }
        let arguments = match params.remove("arguments") {
            Some(args @ Value::Object(_)) => args,
            _ => Value::Object(Map::new()),
        };
        let name = tool.name();
        let structured_content = self.version.has_structured_content();
        let call = ToolCall {
            tool: name.to_owned(),
            arguments,
            principal: self.principal.clone(),
            request_id: self.request_id.to_owned(),
            structured_content,
        };
        let answer = match self.backend.call_tool(call).await {
            Ok(answer) => answer,
            Err(detail) => ToolOutcome::refusal(&tools::Refusal::Internal(detail), name, self.request_id)
                .into_answer(structured_content),
        };
        trace.outcome = match answer.outcome {
            tools::Outcome::Ok => "ok",
            tools::Outcome::Refused => "refused",
            tools::Outcome::Failed => "failed",
            tools::Outcome::Revoked => "unauthorized",
        };
        trace.detail = answer.detail;
        if answer.outcome == tools::Outcome::Revoked {
            return Answer::Revoked;
        }
        Answer::Result(answer.result)
    }
}

/// Pagination (MCP-CONFORMANCE TL-01, R-03): every list here is one page, so any cursor is one
/// this server never issued, which is -32602.
fn has_cursor(params: &Map<String, Value>) -> bool {
    params.get("cursor").is_some_and(|c| !c.is_null())
}

/// The tool a `tools/call` names, when its params are well formed; otherwise the -32602 error
/// (tools §error-handling, MCP-CONFORMANCE TL-12: a missing name, arguments that are not an
/// object, an unknown tool). Shared by the call and the batch's access check, so both judge a
/// request alike.
fn requested_tool(params: &Map<String, Value>) -> Result<&'static dyn tools::DynTool, RpcError> {
    let invalid = |message: &str| RpcError::new(jsonrpc::INVALID_PARAMS, message);
    let Some(Value::String(name)) = params.get("name") else {
        return Err(invalid("Invalid params: name (a string) is required"));
    };
    if !matches!(params.get("arguments"), None | Some(Value::Null | Value::Object(_))) {
        return Err(invalid("Invalid params: arguments must be an object"));
    }
    // Tools §error-handling: an unknown tool is a protocol error.
    tools::find(name).ok_or_else(|| {
        RpcError::new(jsonrpc::INVALID_PARAMS, format!("Unknown tool: {}", truncate(name, 64)))
    })
}

/// Fills the per-isolate caches of `initialize` and `tools/list` for the current protocol
/// version and every kind of caller, so that the first requests do not pay for schema
/// derivation. Called by the Worker when the module loads (on Cloudflare, while the first
/// request's TLS handshake is still under way).
pub fn warm_caches() {
    for (read, act, app) in
        [(true, true, false), (true, true, true), (true, false, false), (true, false, true)]
    {
        let principal = Principal {
            subject: String::new(),
            workspace: String::new(),
            client_id: String::new(),
            scopes: crate::auth::ScopeSet { read, act },
            app,
            grant_id: None,
        };
        server::initialize_json(Version::LATEST, &principal);
        tools::list_json(&principal, Version::LATEST);
    }
}

fn truncate(s: &str, max: usize) -> String {
    s.chars().take(max).collect()
}

/// Wraps a JSON-RPC answer as one SSE event (transports §sending-messages). No event id is
/// sent: a stateless server cannot resume a stream, and an id would invite a GET reconnect
/// that can only get 405 (MCP-CONFORMANCE T-16, a documented deviation from a SHOULD).
pub fn sse_event(json: &str) -> String {
    format!("event: message\ndata: {json}\n\n")
}

/// Every JSON-RPC message in a batch answer as its own SSE event.
pub fn sse_body(json: &str) -> String {
    if json.starts_with('[')
        && let Ok(Value::Array(items)) = serde_json::from_str(json)
    {
        return items.iter().map(|item| sse_event(&item.to_string())).collect();
    }
    sse_event(json)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chooses_the_reply_format() {
        assert_eq!(choose_format(None), Some(false));
        assert_eq!(choose_format(Some("application/json, text/event-stream")), Some(false));
        assert_eq!(choose_format(Some("text/event-stream")), Some(true));
        assert_eq!(choose_format(Some("application/json")), Some(false));
        assert_eq!(choose_format(Some("*/*")), Some(false));
        assert_eq!(choose_format(Some("text/html")), None);
        assert_eq!(choose_format(Some("application/json;q=0, text/event-stream")), Some(true));
        assert_eq!(choose_format(Some("")), None);
        assert_eq!(choose_format(Some("application/json; q=0.000, text/*;q=0.5")), Some(true));
        assert_eq!(choose_format(Some("application/json;q=1, text/event-stream")), Some(false));
        assert_eq!(choose_format(Some("application/json;q=-1, text/event-stream")), Some(true));
        assert_eq!(choose_format(Some("application/json;q=0.001")), Some(false));
        assert_eq!(choose_format(Some("application/json;q=.")), Some(false));
        // The hand-written reader agrees with the float parser on plain decimals.
        for q in
            ["0", "0.", ".0", "00.000", "-0", "+0", "-1", "1", "0.5", "0.001", "+.5", "x", "", "0x0", "1.0.0"]
        {
            assert_eq!(is_refusing_qvalue(q), q.parse::<f32>().is_ok_and(|v| v <= 0.0), "{q}");
        }
    }

    #[test]
    fn checks_the_media_type() {
        assert!(is_json_media_type(Some("application/json")));
        assert!(is_json_media_type(Some("Application/JSON; charset=utf-8")));
        assert!(!is_json_media_type(Some("text/plain")));
        assert!(!is_json_media_type(Some("application/json-seq")));
        assert!(!is_json_media_type(None));
    }

    #[test]
    fn frames_sse() {
        assert_eq!(sse_event("{}"), "event: message\ndata: {}\n\n");
        assert_eq!(
            sse_body("[{\"a\":1},{\"b\":2}]"),
            "event: message\ndata: {\"a\":1}\n\nevent: message\ndata: {\"b\":2}\n\n"
        );
    }
}

//! The Worker's HTTP surface as one readable match on (method, path), over plain request and
//! response types so that `cargo test` can drive it without a runtime.
//!
//! Order of checks on the MCP endpoint (MCP-CONFORMANCE A-08): method (405) → Host and Origin
//! (403) → bearer token (401/400) → body size (413) → `Accept` (406) → `Content-Type` (415) →
//! protocol version header (400) → JSON-RPC.
//!
//! The authorization server's endpoints and pages are routed here too and handled in
//! `crate::oauth`.

use crate::auth::bearer::{self, AuthError};
use crate::billing_http;
use crate::config::{self, Config, MCP_PATH};
use crate::kv::Kv;
use std::rc::Rc;

use crate::gzip::{self, Deflated};
use crate::mcp::{self, McpReply, McpRequest, SharedAnswer, ToolBackend, Trace};
use crate::oauth::{self, AuthObjects, metadata};
use crate::outbound::Outbound;
use crate::tools::registry::LocalBoxFuture;
use crate::webapp;
use crate::workspace::{Op, OpReply};

/// Protected resource metadata for the MCP endpoint (RFC 9728 §3.1: the well-known path with the
/// resource's path appended).
pub const PRM_MCP_PATH: &str = "/.well-known/oauth-protected-resource/v1/mcp";

/// Every request header the Worker reads, by lower-case name. The edge hands the router these
/// and no others: asking the runtime for each of them (`Headers.get`) costs less than iterating
/// all of a request's headers, which on Cloudflare include the `cf-*` and forwarding ones it
/// adds (`initialize` 124 → 116 µs of CPU with the seven headers the benchmark sends,
/// bench/README.md). [`HttpRequest::header`] refuses an unlisted name in debug builds, so a
/// test that reaches code reading a new header fails until the header is listed here.
pub const REQUEST_HEADERS: &[&str] = &[
    "accept",
    "accept-encoding",
    "authorization",
    "cf-connecting-ip",
    "cf-ray",
    "content-length",
    "content-type",
    "cookie",
    "host",
    "mcp-protocol-version",
    "origin",
    "stripe-signature",
];

/// An incoming request.
#[derive(Debug, Clone, Default)]
pub struct HttpRequest {
    /// Upper-case method.
    pub method: String,
    /// The URL path.
    pub path: String,
    /// The raw query string, without `?`.
    pub query: Option<String>,
    /// Headers with lower-case names, in arrival order (repeated names kept).
    pub headers: Vec<(String, String)>,
    /// The body; `None` when it was larger than [`mcp::MAX_BODY_BYTES`] and was not read. At the
    /// edge, a POST to the MCP endpoint without an `Authorization` header is not read either: it
    /// is answered 401 (or 403) before its body is needed, which `post_mcp`'s order keeps true.
    pub body: Option<Vec<u8>>,
}

impl HttpRequest {
    /// The first value of a header (one of [`REQUEST_HEADERS`]).
    pub fn header(&self, name: &str) -> Option<&str> {
        debug_assert!(
            REQUEST_HEADERS.contains(&name),
            "request header {name} is not in http::REQUEST_HEADERS"
        );
        self.headers.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str())
    }

    /// Every value of a header (one of [`REQUEST_HEADERS`]).
    pub fn headers_named(&self, name: &str) -> Vec<&str> {
        debug_assert!(
            REQUEST_HEADERS.contains(&name),
            "request header {name} is not in http::REQUEST_HEADERS"
        );
        self.headers.iter().filter(|(k, _)| k == name).map(|(_, v)| v.as_str()).collect()
    }
}

/// An outgoing response.
#[derive(Debug, Clone, PartialEq)]
pub struct HttpResponse {
    /// Status code.
    pub status: u16,
    /// Headers.
    pub headers: Vec<(String, String)>,
    /// Body bytes.
    pub body: Vec<u8>,
}

impl HttpResponse {
    /// A response with a body and content type.
    pub fn new(status: u16, content_type: &str, body: impl Into<Vec<u8>>) -> Self {
        // Room for the headers the router adds to most answers (`x-request-id`, then `nosniff`,
        // `vary` or `www-authenticate`) without growing the vector; CORS answers grow it once.
        let mut headers = Vec::with_capacity(4);
        headers.push(("content-type".into(), content_type.into()));
        HttpResponse { status, headers, body: body.into() }
    }

    /// A JSON response.
    pub fn json(status: u16, body: impl Into<Vec<u8>>) -> Self {
        HttpResponse::new(status, "application/json", body)
    }

    /// An empty response.
    pub fn empty(status: u16) -> Self {
        HttpResponse { status, headers: Vec::new(), body: Vec::new() }
    }

    /// Adds a header. Names are lower-case: [`HttpResponse::header`] compares them exactly, and
    /// so does the edge, which hands the headers to `new Response` as a plain object and looks up
    /// `content-encoding` in it (`edge::respond`).
    pub fn with(mut self, name: &str, value: impl Into<String>) -> Self {
        debug_assert!(!name.bytes().any(|b| b.is_ascii_uppercase()), "header name {name} is not lower-case");
        self.headers.push((name.to_owned(), value.into()));
        self
    }

    /// The first value of a header.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str())
    }
}

/// What the router needs from the platform.
pub trait Platform {
    /// The configuration, or why it is unusable.
    fn config(&self) -> Result<&Config, &config::ConfigError>;
    /// Milliseconds since the Unix epoch.
    fn now_ms(&self) -> i64;
    /// Where tool calls run.
    fn tools(&self) -> &dyn ToolBackend;
    /// Where other workspace requests run (web page, webhooks, sandbox pages).
    fn workspaces(&self) -> &dyn Workspaces;
    /// Workers KV (`OAUTH_KV`): OAuth clients and cached client metadata documents.
    fn kv(&self) -> &dyn Kv;
    /// The authorization server's Durable Objects.
    fn objects(&self) -> &dyn AuthObjects;
    /// Outbound HTTP: client metadata documents and the OpenID provider.
    fn outbound(&self) -> &dyn Outbound;
    /// RS256 signature checks (the OpenID provider's ID tokens).
    fn rs256(&self) -> &dyn oauth::oidc::Rs256Verifier;
    /// The runtime's compression of a result that lives as long as the isolate (one of
    /// [`SharedAnswer`]'s), followed by [`mcp::jsonrpc::RESULT_TAIL`], if it is ready. The
    /// first asks start it and get `None`, as does a platform that cannot compress.
    fn deflated(&self, result: &Rc<str>) -> Option<Rc<Deflated>>;
}

/// Sends [`Op`]s to workspaces (their Durable Objects on Workers).
pub trait Workspaces {
    /// Runs `op` in workspace `workspace` (`ws_…`); `Err` is a platform failure, for the log.
    fn op(&self, workspace: &str, op: Op) -> LocalBoxFuture<'_, Result<OpReply, String>>;
}

/// Routes one request. Never fails: every problem is a response. The [`Trace`] feeds the log.
pub async fn route(req: &HttpRequest, platform: &dyn Platform, request_id: &str) -> (HttpResponse, Trace) {
    let mut trace = Trace::default();
    let config = match platform.config() {
        Ok(config) => config,
        Err(e) => {
            trace.outcome = "http_error";
            trace.detail = Some(format!("configuration: {e}"));
            trace.logged = true;
            return (error_response(500, "server_error", "The server is misconfigured."), trace);
        }
    };
    let response = match (req.method.as_str(), req.path.as_str()) {
        ("POST", MCP_PATH) => post_mcp(req, config, platform, request_id, &mut trace).await,
        ("OPTIONS", MCP_PATH) => preflight(req, config),
        (_, MCP_PATH) => {
            // Transports §listening-for-messages: no GET stream and no session to DELETE.
            trace.outcome = "http_error";
            HttpResponse::json(405, r#"{"error":"method_not_allowed","error_description":"Use POST."}"#)
                .with("allow", "POST, OPTIONS")
        }
        ("GET" | "HEAD", "/health") => HttpResponse::new(200, "text/plain; charset=utf-8", "ok"),
        // Discovery (RFC 8414, RFC 9728): public, cacheable, readable from any origin.
        (method @ ("GET" | "HEAD"), oauth::AS_METADATA_PATH) => {
            metadata::document(method, &metadata::authorization_server(config))
        }
        (method @ ("GET" | "HEAD"), oauth::PRM_PATH | PRM_MCP_PATH) => {
            metadata::document(method, &metadata::protected_resource(config))
        }
        ("OPTIONS", oauth::AS_METADATA_PATH | oauth::PRM_PATH | PRM_MCP_PATH) => {
            metadata::public_preflight("GET, HEAD")
        }
        (_, oauth::AS_METADATA_PATH | oauth::PRM_PATH | PRM_MCP_PATH) => {
            method_not_allowed("GET, HEAD, OPTIONS", &mut trace)
        }
        // The authorization server's JSON endpoints, callable from browser-based clients.
        ("POST", oauth::REGISTER_PATH) => {
            boxed(oauth::register::handle(req, config, platform, &mut trace)).await
        }
        ("OPTIONS", oauth::REGISTER_PATH) => metadata::public_preflight("POST"),
        (_, oauth::REGISTER_PATH) => method_not_allowed("POST, OPTIONS", &mut trace),
        ("POST", "/v1/stripe/webhook") => {
            billing_http::stripe_webhook(req, config, platform, &mut trace).await
        }
        ("GET", "/billing/return") => billing_http::return_page(req),
        (_, p) if p.starts_with(crate::compliance::UNSUBSCRIBE_PATH) => {
            crate::unsubscribe_http::handle(req, config, platform, &mut trace).await
        }
        (_, p) if p.starts_with("/sandbox/checkout/") || p.starts_with("/sandbox/portal/") => {
            billing_http::sandbox_page(req, config, platform, &mut trace).await
        }
        ("POST", oauth::TOKEN_PATH) => boxed(oauth::token::handle(req, config, platform, &mut trace)).await,
        ("OPTIONS", oauth::TOKEN_PATH) => metadata::public_preflight("POST"),
        (_, oauth::TOKEN_PATH) => method_not_allowed("POST, OPTIONS", &mut trace),
        ("POST", oauth::REVOKE_PATH) => boxed(oauth::revoke::handle(req, config, platform, &mut trace)).await,
        ("OPTIONS", oauth::REVOKE_PATH) => metadata::public_preflight("POST"),
        (_, oauth::REVOKE_PATH) => method_not_allowed("POST, OPTIONS", &mut trace),
        // The browser side: authorization, sign-in and consent pages.
        ("GET", oauth::AUTHORIZE_PATH) => {
            boxed(oauth::authorize::handle(req, config, platform, &mut trace)).await
        }
        (_, oauth::AUTHORIZE_PATH) => method_not_allowed("GET", &mut trace),
        ("GET", oauth::CONSENT_PATH) => boxed(oauth::consent::show(req, config, platform, &mut trace)).await,
        ("POST", oauth::CONSENT_PATH) => {
            boxed(oauth::consent::decide(req, config, platform, &mut trace)).await
        }
        (_, oauth::CONSENT_PATH) => method_not_allowed("GET, POST", &mut trace),
        ("GET", oauth::SIGNIN_PATH) => boxed(oauth::session::signin(req, config, platform)).await,
        ("POST", oauth::SIGNIN_DEV_PATH) => {
            boxed(oauth::session::dev_signin(req, config, platform, &mut trace)).await
        }
        ("POST", oauth::SIGNOUT_PATH) => {
            boxed(oauth::session::signout(req, config, platform, &mut trace)).await
        }
        ("GET", oauth::SIGNIN_OIDC_PATH) => {
            boxed(oauth::oidc::start(req, config, platform, &mut trace)).await
        }
        ("GET", oauth::SIGNIN_CALLBACK_PATH) => {
            boxed(oauth::oidc::callback(req, config, platform, &mut trace)).await
        }
        ("GET", oauth::ACCOUNT_PATH) => boxed(oauth::account::show(req, platform)).await,
        ("POST", oauth::ACCOUNT_REVOKE_PATH) => {
            boxed(oauth::account::revoke(req, config, platform, &mut trace)).await
        }
        // The web pages behind `appUrl`: the workspace, and deciding approvals.
        ("GET", webapp::HOME_PATH) => webapp::home(req, platform, &mut trace).await,
        (_, webapp::HOME_PATH) => method_not_allowed("GET", &mut trace),
        (_, p) if p.starts_with(webapp::APPROVAL_PREFIX) => {
            webapp::approval(req, config, platform, &mut trace).await
        }
        _ => {
            trace.outcome = "http_error";
            error_response(404, "not_found", "Nothing here.")
        }
    };
    if trace.outcome.is_empty() {
        trace.outcome = "ok";
    }
    trace.logged =
        config.log_routine || !crate::log::is_routine(&req.method, &req.path, response.status, &trace);
    // The request id names the request's log line, for support. A routine answer has no line to
    // name, and on Cloudflare, where the id is the request's `cf-ray`, the edge sends that on
    // every answer anyway (`CF-Ray`), so it carries none: each header is work for the runtime on
    // every request (bench/README.md, "The routine answers' fixed heads").
    let response = with_cors(response, req, config);
    let response = if trace.logged { response.with("x-request-id", request_id) } else { response };
    let response = if is_mcp_answer(req) {
        response
    } else {
        let response = response.with("x-content-type-options", "nosniff");
        // RFC 6797: a browser that has seen it reaches the pages (sign-in, consent, approvals)
        // over https only, where a later visit typed or linked as http could be intercepted first.
        // Meaningless (and ignored) over http, so a local deployment sends none.
        if config.public_url().starts_with("https://") {
            response.with("strict-transport-security", "max-age=31536000")
        } else {
            response
        }
    };
    (response, trace)
}

/// Whether `req` is a POST to the MCP endpoint, whose answers go without
/// `x-content-type-options: nosniff` and, when JSON, without `cache-control: no-store`. Both are
/// inert there, and each header a response carries is work for the runtime on every request
/// (dropping these two took 7% of the CPU of `initialize` and 10% of `tools/list`'s:
/// bench/README.md, "Fewer headers on the MCP answers"):
/// - A response to POST is not stored by caches unless it carries explicit freshness and a
///   `Content-Location` (RFC 9110 §9.3.3), which these never do.
/// - `nosniff` keeps a browser from reading a response as a script or stylesheet (loaded by GET)
///   or sniffing a missing or generic type into HTML; these are POST answers with an exact
///   `application/json` or `text/event-stream` type, which browsers take as given (WHATWG MIME
///   Sniffing §7). Every other response, the MCP endpoint's 405 to a GET included, keeps it.
fn is_mcp_answer(req: &HttpRequest) -> bool {
    req.method == "POST" && req.path == MCP_PATH
}

async fn post_mcp(
    req: &HttpRequest,
    config: &Config,
    platform: &dyn Platform,
    request_id: &str,
    trace: &mut Trace,
) -> HttpResponse {
    if let Some(refusal) = check_host_and_origin(req, config) {
        trace.outcome = "http_error";
        return refusal;
    }
    let principal = match bearer::authenticate(
        config,
        &req.headers_named("authorization"),
        req.query.as_deref(),
        platform.now_ms(),
    ) {
        Ok(principal) => principal,
        Err(e) => {
            trace.outcome = match &e {
                AuthError::Missing => crate::log::CHALLENGE,
                _ => "unauthorized",
            };
            if let AuthError::Invalid(reason) = &e {
                trace.detail = Some(reason.to_string());
            }
            return challenge(&e, config);
        }
    };
    // The body only after the bearer token: the entry module does not read the body of a request
    // without credentials (`src/edge/entry.js`), so it must be answered above.
    let Some(body) = req.body.as_deref() else {
        trace.outcome = "http_error";
        let error = mcp::jsonrpc::RpcError::new(
            mcp::jsonrpc::SERVER_ERROR,
            "Payload Too Large: the body exceeds 1 MiB",
        );
        return HttpResponse::json(413, mcp::jsonrpc::error_json(None, &error));
    };
    let mcp_req = McpRequest {
        accept: req.header("accept"),
        content_type: req.header("content-type"),
        protocol_version: req.header("mcp-protocol-version"),
        body,
    };
    let reply = mcp::handle(mcp_req, &principal, platform.tools(), request_id, trace).await;
    match reply {
        McpReply::Accepted => HttpResponse::empty(202),
        McpReply::Shared(answer) => shared_response(req, platform, &answer),
        // No `cache-control` on a JSON answer (`is_mcp_answer`); an event stream keeps the
        // `no-cache` that event streams conventionally carry.
        McpReply::Body { status, json, sse: false } => HttpResponse::json(status, json),
        McpReply::Body { status, json, sse: true } => {
            HttpResponse::new(status, "text/event-stream", mcp::sse_body(&json))
                .with("cache-control", "no-cache, no-store")
        }
        McpReply::Forbidden(why) => challenge(&why, config),
        McpReply::GrantRevoked => {
            challenge(&AuthError::Invalid(crate::auth::jwt::TokenError::Revoked), config)
        }
    }
}

/// Results shorter than this go as they are: `initialize`'s (1.4 KB) gained nothing measurable
/// from being compressed, and its CPU per request went up (bench/README.md).
const COMPRESS_FROM: usize = 4096;

/// A shared answer (`initialize`, `tools/list`, the card), gzip-compressed for a client that
/// accepts it once the runtime has compressed its result (`crate::gzip`): `tools/list` goes out
/// as about 20 KB instead of 157 KB. Until then, and to other clients, it goes out as it is.
fn shared_response(req: &HttpRequest, platform: &dyn Platform, answer: &SharedAnswer) -> HttpResponse {
    if answer.result.len() < COMPRESS_FROM {
        return HttpResponse::json(200, answer.text());
    }
    let compressed = gzip::accepts_gzip(req.header("accept-encoding"))
        .then(|| platform.deflated(&answer.result))
        .flatten()
        .and_then(|deflated| deflated.member_after(answer.head.as_bytes()));
    let response = match compressed {
        Some(member) => HttpResponse::json(200, member).with("content-encoding", "gzip"),
        None => HttpResponse::json(200, answer.text()),
    };
    response.with("vary", "accept-encoding")
}

fn challenge(error: &AuthError, config: &Config) -> HttpResponse {
    let wire = error.to_wire(config);
    HttpResponse::json(wire.status, wire.body).with("www-authenticate", wire.www_authenticate)
}

/// MCP transports §security: validate `Origin` (403 when present and not allowed). On a
/// loopback deployment the `Host` must be loopback too, which defeats DNS rebinding even for
/// clients that send no `Origin`.
fn check_host_and_origin(req: &HttpRequest, config: &Config) -> Option<HttpResponse> {
    let forbidden = |why: &str| {
        let error = mcp::jsonrpc::RpcError::new(mcp::jsonrpc::SERVER_ERROR, format!("Forbidden: {why}"));
        HttpResponse::json(403, mcp::jsonrpc::error_json(None, &error))
    };
    if config.is_local() && req.header("host").is_some_and(|h| !config::is_loopback_host(h)) {
        return Some(forbidden("this local server only answers loopback hosts"));
    }
    match req.header("origin") {
        Some(origin) if !config.origin_allowed(origin) => Some(forbidden("origin not allowed")),
        _ => None,
    }
}

/// The CORS preflight for browser clients (MCP Inspector, web hosts); no authentication, as
/// browsers send none on preflights.
fn preflight(req: &HttpRequest, config: &Config) -> HttpResponse {
    match req.header("origin") {
        Some(origin) if config.origin_allowed(origin) => HttpResponse::empty(204)
            .with("access-control-allow-methods", "POST, OPTIONS")
            .with(
                "access-control-allow-headers",
                "Authorization, Content-Type, Accept, MCP-Protocol-Version, Last-Event-ID",
            )
            .with("access-control-max-age", "86400"),
        _ => HttpResponse::empty(403),
    }
}

/// Lets allowed browser origins read responses, including the `WWW-Authenticate` challenge
/// (MCP-CONFORMANCE A-09).
fn with_cors(response: HttpResponse, req: &HttpRequest, config: &Config) -> HttpResponse {
    if response.header("access-control-allow-origin").is_some() {
        // Public documents and endpoints already allow every origin.
        return response;
    }
    match req.header("origin") {
        Some(origin) if config.origin_allowed(origin) => response
            .with("access-control-allow-origin", origin)
            .with("access-control-expose-headers", "WWW-Authenticate, X-Request-Id")
            .with("vary", "Origin"),
        _ => response,
    }
}

/// Awaits a handler through a `dyn` future, so that its state machine is compiled once as its
/// own function rather than inlined into `route`'s: inlining every handler (and the async
/// helpers each of them inlines) more than doubled the Worker's wasm.
async fn boxed<'a>(handler: impl std::future::Future<Output = HttpResponse> + 'a) -> HttpResponse {
    let handler: LocalBoxFuture<'a, HttpResponse> = Box::pin(handler);
    handler.await
}

fn method_not_allowed(allow: &str, trace: &mut Trace) -> HttpResponse {
    trace.outcome = "http_error";
    error_response(405, "method_not_allowed", "This method is not allowed here.").with("allow", allow)
}

/// An OAuth-style JSON error body.
pub fn error_response(status: u16, code: &str, description: &str) -> HttpResponse {
    HttpResponse::json(
        status,
        serde_json::json!({ "error": code, "error_description": description }).to_string(),
    )
    .with("cache-control", "no-store")
}

#[cfg(test)]
#[path = "http_tests.rs"]
mod tests;

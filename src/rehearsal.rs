//! A rehearsal of the hottest requests, run once when an isolate starts (`edge::start`).
//!
//! The Workers runtime compiles a wasm function the first time it is called (V8 compiles
//! WebAssembly lazily), so without this the first request of every new isolate pays for
//! compiling its whole path: the JWT check, JSON-RPC parsing, the router, the log line. That
//! was most of our cold first request (bench/README.md, "Cold start"). Cloudflare starts an
//! isolate while the first request's TLS handshake is still going on, so work done at start is
//! off that request's path. The compiled code lasts until V8 flushes the process's Liftoff code,
//! which it does whenever workerd creates another isolate (a memory-pressure notification): under
//! Miniflare, whose simulators start after the Worker, that is before the first request. The
//! edge's side of a request is rehearsed apart, through the Worker's own entry
//! (`edge::rehearse_entry`).
//!
//! The rehearsal routes real requests through [`http::route`] with its own configuration (an
//! issuer no real request can name and its own key, so nothing it mints is valid anywhere
//! else) and ports that refuse all I/O: global scope may not do I/O, and nothing a rehearsal
//! does may reach storage. Every rehearsed request completes without waiting; one that would
//! wait is dropped and reported, and the native test below fails on it.

use std::future::Future;
use std::pin::pin;
use std::task::{Context, Poll, Waker};

use crate::auth::jwt::{self, AccessClaims};
use crate::config::{Config, ConfigError};
use crate::http::{self, HttpRequest, Platform, Workspaces};
use crate::kv::{Kv, KvError};
use crate::mcp::ToolBackend;
use crate::oauth::{AccountAddr, AuthObjects, ObjectError, grants, state};
use crate::outbound::{NoNetwork, Outbound};
use crate::tools::{ToolAnswer, registry::LocalBoxFuture};
use crate::workspace::{Op, OpReply, ToolCall};

/// The rehearsal's origin: `.invalid` can never resolve (RFC 6761 §6.4), so no request names it.
const ORIGIN: &str = "https://rehearsal.invalid";
/// The rehearsal's signing key. It is no secret: only a configuration whose issuer is
/// [`ORIGIN`] accepts what it signs, and the Worker's configuration never is.
const KEYS: &str = "rehearsal:cmVoZWFyc2FsLW9ubHkta2V5LW5vdC1mb3ItYW55LXJlYWwtdG9rZW4";
/// A fixed clock: the runtime's clock does not advance at global scope, and a token minted
/// and checked at the same instant is all the rehearsal needs.
const NOW_MS: i64 = 1_767_225_600_000;

/// Routes the rehearsed requests once and says how it went, for the start log line: `"ok"`,
/// `"did not run"`, or each rehearsed request that did not answer as a real one does, with the
/// status it got (0: it did not complete at once), which means its path was not compiled ahead
/// of the first request.
pub fn rehearse() -> String {
    verdict(run().as_deref())
}

/// The verdict on rehearsed requests given as (name, status a real one gets, status got).
fn verdict(results: Option<&[(&str, u16, u16)]>) -> String {
    let Some(results) = results else { return "did not run".to_owned() };
    let off: Vec<String> = results
        .iter()
        .filter(|(_, want, got)| want != got)
        .map(|(name, _, got)| format!("{name}: {got}"))
        .collect();
    if off.is_empty() { "ok".to_owned() } else { off.join(", ") }
}

/// Routes each rehearsed request once: its name, the status a real one gets and the status it
/// got (0 if it did not complete at once). `None` if the rehearsal could not be set up.
fn run() -> Option<Vec<(&'static str, u16, u16)>> {
    let platform = Rehearsal::new();
    let config = platform.config().ok()?;
    let claims = AccessClaims {
        iss: config.issuer().to_owned(),
        aud: config.resource(),
        sub: "rehearsal@rehearsal.invalid".into(),
        ws: "ws_rehearsal".into(),
        client_id: "rehearsal".into(),
        scope: "mcp mcp:act".into(),
        app: true,
        jti: "at_rehearsal".into(),
        gid: None,
    };
    let token = jwt::mint(config, claims, NOW_MS, 600).ok()?;
    let bearer = format!("Bearer {token}");
    let rpc = |method: &str, params: &str| {
        format!(r#"{{"jsonrpc":"2.0","id":1,"method":"{method}","params":{params}}}"#)
    };
    let requests: [(&'static str, u16, HttpRequest); 6] = [
        (
            "initialize",
            200,
            post(
                Some(&bearer),
                None,
                rpc(
                    "initialize",
                    r#"{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"rehearsal","version":"1"}}"#,
                ),
            ),
        ),
        ("tools/list", 200, post(Some(&bearer), Some("2025-11-25"), rpc("tools/list", "{}"))),
        (
            "tools/call",
            200,
            post(
                Some(&bearer),
                Some("2025-11-25"),
                rpc("tools/call", r#"{"name":"get_workspace_context","arguments":{}}"#),
            ),
        ),
        ("challenge", 401, post(None, None, rpc("tools/list", "{}"))),
        ("resource metadata", 200, get("/.well-known/oauth-protected-resource")),
        ("server metadata", 200, get("/.well-known/oauth-authorization-server")),
    ];
    let results = requests
        .iter()
        .map(|(name, want, req)| {
            let status = match now(http::route(req, &platform, "rehearsal")) {
                Some((response, trace)) => {
                    // The log line is part of every request's path too.
                    let _ = crate::log::request_line(
                        "rehearsal",
                        &req.method,
                        &req.path,
                        response.status,
                        &trace,
                        0,
                    );
                    response.status
                }
                None => 0,
            };
            (*name, *want, status)
        })
        .collect();
    Some(results)
}

fn post(bearer: Option<&str>, version: Option<&str>, body: String) -> HttpRequest {
    let mut headers = vec![
        ("host".to_owned(), "rehearsal.invalid".to_owned()),
        ("content-type".to_owned(), "application/json".to_owned()),
        ("accept".to_owned(), "application/json, text/event-stream".to_owned()),
    ];
    if let Some(bearer) = bearer {
        headers.push(("authorization".to_owned(), bearer.to_owned()));
    }
    if let Some(version) = version {
        headers.push(("mcp-protocol-version".to_owned(), version.to_owned()));
    }
    HttpRequest {
        method: "POST".into(),
        path: "/v1/mcp".into(),
        query: None,
        headers,
        body: Some(body.into_bytes()),
    }
}

fn get(path: &str) -> HttpRequest {
    HttpRequest {
        method: "GET".into(),
        path: path.into(),
        query: None,
        headers: vec![("host".to_owned(), "rehearsal.invalid".to_owned())],
        body: Some(Vec::new()),
    }
}

/// Polls `future` once: the rehearsal's ports answer at once, so every rehearsed request is
/// ready on its first poll; `None` if one was not.
fn now<F: Future>(future: F) -> Option<F::Output> {
    match pin!(future).poll(&mut Context::from_waker(Waker::noop())) {
        Poll::Ready(output) => Some(output),
        Poll::Pending => None,
    }
}

/// The platform of the rehearsal: its own configuration, and ports that refuse.
struct Rehearsal {
    config: Result<Config, ConfigError>,
}

impl Rehearsal {
    fn new() -> Self {
        let config = Config::from_lookup(|name| match name {
            "PUBLIC_URL" => Some(ORIGIN.to_owned()),
            "JWT_SIGNING_KEYS" => Some(KEYS.to_owned()),
            _ => None,
        });
        Rehearsal { config }
    }
}

const REFUSED: &str = "a rehearsal does no I/O";

impl Platform for Rehearsal {
    fn config(&self) -> Result<&Config, &ConfigError> {
        self.config.as_ref()
    }
    fn now_ms(&self) -> i64 {
        NOW_MS
    }
    fn tools(&self) -> &dyn ToolBackend {
        self
    }
    fn workspaces(&self) -> &dyn Workspaces {
        self
    }
    fn kv(&self) -> &dyn Kv {
        self
    }
    fn objects(&self) -> &dyn AuthObjects {
        self
    }
    fn outbound(&self) -> &dyn Outbound {
        &NoNetwork
    }
    fn rs256(&self) -> &dyn crate::oauth::oidc::Rs256Verifier {
        self
    }
    /// Nothing is compressed yet at start: answers go out as they are.
    fn deflated(&self, _result: &std::rc::Rc<str>) -> Option<std::rc::Rc<crate::gzip::Deflated>> {
        None
    }
}

impl ToolBackend for Rehearsal {
    fn call_tool(&self, _call: ToolCall) -> LocalBoxFuture<'_, Result<ToolAnswer, String>> {
        Box::pin(async { Err(REFUSED.to_owned()) })
    }
}

impl Workspaces for Rehearsal {
    fn op(&self, _workspace: &str, _op: Op) -> LocalBoxFuture<'_, Result<OpReply, String>> {
        Box::pin(async { Err(REFUSED.to_owned()) })
    }
}

impl Kv for Rehearsal {
    fn get(&self, _key: String) -> LocalBoxFuture<'_, Result<Option<String>, KvError>> {
        Box::pin(async { Err(KvError(REFUSED.to_owned())) })
    }
    fn put(&self, _key: String, _value: String, _ttl_secs: u32) -> LocalBoxFuture<'_, Result<(), KvError>> {
        Box::pin(async { Err(KvError(REFUSED.to_owned())) })
    }
    fn delete(&self, _key: String) -> LocalBoxFuture<'_, Result<(), KvError>> {
        Box::pin(async { Err(KvError(REFUSED.to_owned())) })
    }
}

impl AuthObjects for Rehearsal {
    fn state(
        &self,
        _name: String,
        _op: state::StateOp,
    ) -> LocalBoxFuture<'_, Result<state::StateReply, ObjectError>> {
        Box::pin(async { Err(ObjectError::Failed(REFUSED.to_owned())) })
    }
    fn account(
        &self,
        _at: AccountAddr,
        _op: grants::AccountOp,
    ) -> LocalBoxFuture<'_, Result<grants::AccountReply, ObjectError>> {
        Box::pin(async { Err(ObjectError::Failed(REFUSED.to_owned())) })
    }
}

impl crate::oauth::oidc::Rs256Verifier for Rehearsal {
    fn verify<'a>(
        &'a self,
        _n: &'a str,
        _e: &'a str,
        _message: &'a [u8],
        _signature: &'a [u8],
    ) -> LocalBoxFuture<'a, bool> {
        Box::pin(async { false })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every rehearsed request completes at once with the answer a real one gets, so the
    /// rehearsal runs the paths real requests take (a 500 would rehearse the wrong one).
    #[test]
    fn every_rehearsed_request_completes_with_its_real_status() {
        let results = run().expect("the rehearsal is set up");
        assert_eq!(
            results,
            [
                ("initialize", 200, 200),
                ("tools/list", 200, 200),
                ("tools/call", 200, 200),
                ("challenge", 401, 401),
                ("resource metadata", 200, 200),
                ("server metadata", 200, 200),
            ]
        );
        assert_eq!(
            crate::log::start_line("ok", &rehearse()),
            r#"{"event":"start","config":"ok","rehearsal":"ok"}"#
        );
    }

    /// The start line names a rehearsed request that answered otherwise, and a bad configuration.
    #[test]
    fn the_start_line_reports_what_went_wrong() {
        let mut results = run().expect("the rehearsal is set up");
        results[1].2 = 0;
        assert_eq!(
            crate::log::start_line("PUBLIC_URL is missing", &verdict(Some(&results))),
            r#"{"event":"start","config":"PUBLIC_URL is missing","rehearsal":"tools/list: 0"}"#
        );
        assert!(crate::log::start_line("ok", &verdict(None)).contains(r#""rehearsal":"did not run""#));
    }

    /// Nothing the rehearsal signs is accepted by a real configuration.
    #[test]
    fn rehearsal_tokens_are_worthless_elsewhere() {
        let config = Rehearsal::new().config.expect("the rehearsal's configuration");
        let claims = AccessClaims {
            iss: crate::testing::test_config().issuer().to_owned(),
            aud: crate::testing::test_config().resource(),
            sub: "a@b.c".into(),
            ws: "ws_x".into(),
            client_id: "c".into(),
            scope: "mcp".into(),
            app: false,
            jti: "at_x".into(),
            gid: None,
        };
        let token = jwt::mint(&config, claims, crate::testing::NOW_MS, 600).expect("mint");
        assert!(jwt::verify(&crate::testing::test_config(), &token, crate::testing::NOW_MS).is_err());
    }
}

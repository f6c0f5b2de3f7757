//! `GET /v1/oauth/authorize` (OAuth 2.1 §4.1.1, RFC 7636, RFC 8707, RFC 9207).
//!
//! The client and its redirect URI are checked first; until both are known good, every problem
//! is shown on our own page and nothing is redirected (RFC 6749 §4.1.2.1). After that, errors go
//! back to the client with `error`, `state` and `iss` — automatically when the redirect URI is
//! one we trust (loopback or the Claude app's origins, for registered and metadata document
//! clients alike), otherwise through a page with a link, so that a client anyone can register
//! or publish cannot use this server as an open redirector (RFC 9700 §4.11.2).
//!
//! A valid request is stored in an `OAuthState` object behind a single-use handle, bound to the
//! browser's `__Host-vs_browser` cookie, and the browser goes to the consent page with the
//! handle. Nothing of the request travels through the browser again.

use serde::{Deserialize, Serialize};

use super::clients::{self, Client, Source};
use super::error::{ErrorCode, OAuthError};
use super::form::Form;
use super::session::Browser;
use super::state::{EntryKind, StateOp, StateReply};
use super::{CONSENT_PATH, PENDING_TTL_MS, pages, pkce, ratelimit, redirect, tokens};
use crate::auth::ScopeSet;
use crate::config::Config;
use crate::http::{HttpRequest, HttpResponse, Platform};
use crate::mcp::Trace;
use crate::urls;

/// Longest `state` echoed back.
const MAX_STATE_BYTES: usize = 1024;

/// A validated authorization request waiting for the user's decision.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Pending {
    /// The client.
    pub client_id: String,
    /// What the consent page calls it.
    pub client_name: String,
    /// Dynamic registration or metadata document.
    pub source: Source,
    /// Where the response goes (exactly as requested).
    pub redirect_uri: String,
    /// Whether the request named it.
    pub redirect_uri_in_request: bool,
    /// The client's `state`, echoed back.
    pub state: Option<String>,
    /// The most the client asked for.
    pub scope: ScopeSet,
    /// The canonical resource.
    pub resource: String,
    /// The PKCE S256 challenge.
    pub code_challenge: String,
    /// Whether the client is the Claude app.
    pub app: bool,
    /// Whether the client uses refresh tokens.
    pub refresh: bool,
    /// Whether the client asked for the consent page even if the user consented before
    /// (`prompt=consent`, `login` or `select_account`, OpenID Connect Core §3.1.2.1).
    #[serde(default)]
    pub ask_again: bool,
}

/// The `OAuthState` object and key of a pending request's handle.
pub fn pending_location(handle: &str) -> (String, String) {
    let key = tokens::hash(handle);
    (format!("flow:{key}"), key)
}

/// Whether a `resource` names this server's MCP endpoint (RFC 8707 §2). Tolerant of what clients
/// actually send (MCP-CONFORMANCE A-07): letter case of scheme and host, one trailing slash, and
/// the bare origin (some clients send `https://host/`), since this server has one resource.
pub fn resource_ok(config: &Config, presented: &str) -> bool {
    let resource = config.resource();
    let (Ok(ours), Ok(theirs)) = (urls::read(&resource), urls::read(presented)) else { return false };
    if theirs.query().is_some() || theirs.fragment().is_some() {
        return false;
    }
    let path = theirs.path().strip_suffix('/').unwrap_or(theirs.path());
    ours.origin() == theirs.origin() && (path.is_empty() || path == ours.path())
}

/// Reads `resource` (at most one: this server hosts one resource).
pub fn requested_resource(config: &Config, form: &Form) -> Result<(), OAuthError> {
    if form.count("resource") > 1 {
        return Err(OAuthError::new(
            ErrorCode::InvalidTarget,
            "Ask for one resource: this server's MCP endpoint.",
        ));
    }
    match form.get("resource")? {
        Some(r) if !resource_ok(config, r) => Err(OAuthError::new(
            ErrorCode::InvalidTarget,
            format!("The resource must be {}.", config.resource()),
        )),
        _ => Ok(()),
    }
}

/// The words of a `scope` parameter, less `offline_access`, which both grants accept and ignore.
pub fn scope_words(raw: &str) -> Vec<&str> {
    raw.split(' ').filter(|w| !w.is_empty() && *w != "offline_access").collect()
}

/// Parses `scope`: known scopes only; `offline_access` is accepted and ignored (refresh tokens
/// are issued regardless, since Claude never asks for them); empty means everything the client
/// registered, or both scopes.
pub fn requested_scope(raw: Option<&str>, client: &Client) -> Result<ScopeSet, OAuthError> {
    let registered = client.metadata.scope.as_deref().map(|s| ScopeSet::parse(s).unwrap_or_default());
    let words = scope_words(raw.unwrap_or(""));
    let asked = if words.is_empty() {
        registered.unwrap_or(ScopeSet::FULL)
    } else {
        ScopeSet::parse(&words.join(" ")).map_err(|e| {
            OAuthError::new(ErrorCode::InvalidScope, format!("{e}; this server has mcp and mcp:act."))
        })?
    };
    if !asked.read && !asked.act {
        return Err(OAuthError::new(ErrorCode::InvalidScope, "Ask for mcp, or mcp and mcp:act."));
    }
    // Against what the registration implies, not its words: a client registered for `mcp:act`
    // may ask for `mcp` alone (acting implies reading, `ScopeSet::implied`, as on refresh).
    if let Some(registered) = registered
        && !registered.implied().covers(asked)
    {
        return Err(OAuthError::new(
            ErrorCode::InvalidScope,
            "The scope exceeds what this client registered.",
        ));
    }
    Ok(asked.implied())
}

fn local_error(
    status: u16,
    code: &'static str,
    title: &str,
    message: &str,
    trace: &mut Trace,
) -> HttpResponse {
    trace.outcome = "oauth_error";
    if trace.detail.is_none() {
        trace.detail = Some(code.to_owned());
    }
    pages::error(status, code, title, message)
}

/// An error sent back to the client (after the client and redirect URI were validated).
pub fn error_to_client(
    error: &OAuthError,
    redirect_uri: &str,
    state: Option<&str>,
    trusted: bool,
    config: &Config,
    trace: &mut Trace,
) -> HttpResponse {
    trace.outcome = "oauth_error";
    trace.detail = Some(error.log.clone().unwrap_or_else(|| error.code.as_str().to_owned()));
    let Some(location) = redirect::with_params(redirect_uri, &error.redirect_params(state, config.issuer()))
    else {
        return pages::error(400, error.code.as_str(), "This request cannot continue", &error.description);
    };
    if trusted {
        pages::redirect(&location)
    } else {
        pages::error_with_return(
            400,
            error.code.as_str(),
            &error.description,
            &redirect::display_host(redirect_uri),
            &location,
        )
    }
}

/// Whether errors may go back to this redirect URI without the user clicking: a loopback URI
/// (the user's own computer) or one of the Claude app's origins, whatever the client. Not the
/// origin of a metadata document's URL: anyone can publish one naming a redirect URI on their
/// own site, exactly as anyone can register one, and an automatic error redirect there would
/// make this server an open redirector (RFC 9700 §4.11.2).
fn trusted(redirect_uri: &str, config: &Config) -> bool {
    redirect::is_loopback_uri(redirect_uri)
        || redirect::origin(redirect_uri).is_some_and(|o| config.app_origins.contains(&o))
}

/// Handles `GET /v1/oauth/authorize`.
pub async fn handle(
    req: &HttpRequest,
    config: &Config,
    platform: &dyn Platform,
    trace: &mut Trace,
) -> HttpResponse {
    if let Err(e) =
        ratelimit::check(platform.objects(), req, "authorize", config.rate_limits.authorize, trace).await
    {
        trace.outcome = "oauth_error";
        return pages::error(429, "too_many_requests", "Too many attempts", &e.description)
            .with("retry-after", e.retry_after_secs.unwrap_or(60).to_string());
    }
    let query = Form::parse(req.query.as_deref().unwrap_or("").as_bytes());
    // 1. The client, shown locally when wrong.
    let client_id = match query.get("client_id") {
        Ok(Some(id)) => id,
        Ok(None) => {
            return local_error(
                400,
                "invalid_request",
                "The app's request is incomplete",
                "It names no client_id.",
                trace,
            );
        }
        Err(_) => {
            return local_error(
                400,
                "invalid_request",
                "The app's request is malformed",
                "client_id is repeated.",
                trace,
            );
        }
    };
    let client = match clients::find(
        config,
        platform.kv(),
        platform.objects(),
        platform.outbound(),
        client_id,
        platform.now_ms(),
        true,
    )
    .await
    {
        Ok(Some(client)) => client,
        Ok(None) => {
            return local_error(
                400,
                "unknown_client",
                "Unknown app",
                "This app is not registered with VibeSell. Ask it to connect again.",
                trace,
            );
        }
        Err(e) if e.code == ErrorCode::InvalidClient => {
            trace.detail = e.log.clone();
            return local_error(400, "invalid_client", "This app cannot connect", &e.description, trace);
        }
        // Storage, or a metadata document that could not be fetched just now (`cimd.rs`): a
        // page saying to try again, not that the app cannot connect.
        Err(e) => {
            trace.detail = e.log;
            return local_error(
                503,
                "unavailable",
                "VibeSell is briefly unavailable",
                "Try again in a moment.",
                trace,
            );
        }
    };
    // 2. The redirect URI, exactly (loopback: any port), also shown locally when wrong.
    let (redirect_uri, in_request) = match query.get("redirect_uri") {
        Ok(Some(presented)) => match client.redirect_matching(presented) {
            Some(_) => (presented.to_owned(), true),
            None => {
                return local_error(
                    400,
                    "invalid_redirect_uri",
                    "This app's request cannot be trusted",
                    "Its redirect_uri is not one the app registered.",
                    trace,
                );
            }
        },
        Ok(None) => match client.metadata.redirect_uris.as_slice() {
            [only] if !redirect::is_loopback_uri(only) => (only.clone(), false),
            _ => {
                return local_error(
                    400,
                    "invalid_redirect_uri",
                    "The app's request is incomplete",
                    "It must say where to return (redirect_uri).",
                    trace,
                );
            }
        },
        Err(_) => {
            return local_error(
                400,
                "invalid_request",
                "The app's request is malformed",
                "redirect_uri is repeated.",
                trace,
            );
        }
    };
    // 3. Everything else goes back to the client.
    let state = query.get("state").ok().flatten().map(str::to_owned);
    let trusted = trusted(&redirect_uri, config);
    let back = |e: OAuthError, trace: &mut Trace| {
        error_to_client(&e, &redirect_uri, state.as_deref(), trusted, config, trace)
    };
    let pending = match validate(config, &client, &query, &redirect_uri, in_request, state.clone()) {
        Ok(pending) => pending,
        Err(e) => return back(e, trace),
    };
    let browser = Browser::of(req);
    let handle = tokens::new_secret();
    let (object, key) = pending_location(&handle);
    let doc = match serde_json::to_string(&pending) {
        Ok(doc) => doc,
        Err(e) => {
            return back(OAuthError::new(ErrorCode::ServerError, "Try again.").logged(e.to_string()), trace);
        }
    };
    let op = StateOp::Put {
        kind: EntryKind::Pending,
        key,
        binding: browser.binding(),
        doc,
        expires_at: platform.now_ms() + PENDING_TTL_MS,
    };
    match platform.objects().state(object, op).await {
        Ok(StateReply::Doc { doc: Some(_) }) => {
            trace.outcome = "ok";
            pages::redirect(&format!("{CONSENT_PATH}?request={handle}")).with("set-cookie", browser.cookie())
        }
        Ok(other) => back(OAuthError::unavailable(format!("pending put answered {}", other.kind())), trace),
        Err(e) => back(
            OAuthError::new(ErrorCode::TemporarilyUnavailable, "Try again in a moment.")
                .logged(e.to_string()),
            trace,
        ),
    }
}

fn validate(
    config: &Config,
    client: &Client,
    query: &Form,
    redirect_uri: &str,
    in_request: bool,
    state: Option<String>,
) -> Result<Pending, OAuthError> {
    for name in ["state", "response_type", "code_challenge", "code_challenge_method", "scope"] {
        query.get(name)?;
    }
    if state.as_ref().is_some_and(|s| s.len() > MAX_STATE_BYTES) {
        return Err(OAuthError::request("state is longer than 1024 bytes."));
    }
    match query.get("response_type")? {
        Some("code") => {}
        Some(_) => {
            return Err(OAuthError::new(
                ErrorCode::UnsupportedResponseType,
                "Only response_type=code is supported.",
            ));
        }
        None => return Err(OAuthError::request("response_type=code is required.")),
    }
    let challenge = query.get("code_challenge")?.ok_or_else(|| {
        OAuthError::request("PKCE is required: send code_challenge and code_challenge_method=S256.")
    })?;
    match query.get("code_challenge_method")? {
        Some("S256") => {}
        Some(_) => return Err(OAuthError::request("code_challenge_method must be S256.")),
        // RFC 7636 §4.3: absent means plain, which OAuth 2.1 and MCP do not allow.
        None => return Err(OAuthError::request("code_challenge_method=S256 is required.")),
    }
    if !pkce::valid_challenge(challenge) {
        return Err(OAuthError::request(
            "code_challenge must be the 43-character BASE64URL(SHA-256) of the verifier.",
        ));
    }
    requested_resource(config, query)?;
    let scope = requested_scope(query.get("scope")?, client)?;
    Ok(Pending {
        client_id: client.client_id.clone(),
        client_name: client.display_name(),
        source: client.source,
        redirect_uri: redirect_uri.to_owned(),
        redirect_uri_in_request: in_request,
        state,
        scope,
        resource: config.resource(),
        code_challenge: challenge.to_owned(),
        app: client.is_app(config),
        refresh: client.refresh_allowed(),
        ask_again: query
            .get("prompt")?
            .is_some_and(|p| p.split(' ').any(|v| matches!(v, "consent" | "login" | "select_account"))),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::test_config;

    #[test]
    fn tolerates_what_clients_send_as_resource() {
        let config = test_config();
        for ok in [
            "http://127.0.0.1:8787/v1/mcp",
            "http://127.0.0.1:8787/v1/mcp/",
            "HTTP://127.0.0.1:8787/v1/mcp",
            "http://127.0.0.1:8787/",
            "http://127.0.0.1:8787",
        ] {
            assert!(resource_ok(&config, ok), "{ok}");
        }
        for bad in [
            "http://127.0.0.1:8788/v1/mcp",
            "https://127.0.0.1:8787/v1/mcp",
            "http://127.0.0.1:8787/v1/mcp2",
            "http://127.0.0.1:8787/v1",
            "http://127.0.0.1:8787/v1/mcp?x=1",
            "http://127.0.0.1:8787/v1/mcp#f",
            "http://127.0.0.1:8787/v1/mcp//",
            "http://evil.example/v1/mcp",
            "http://u@127.0.0.1:8787/v1/mcp",
            "http://127.1:8787/v1/mcp",
            "http://127.0.0.1:8787/v1/x/../mcp",
            "http://127.0.0.1:8787/v1/%6Dcp",
            "http://127.0.0.1:08787/v1/mcp",
            "http://127.0.0.1:8787\\v1\\mcp",
            "mcp",
        ] {
            assert!(!resource_ok(&config, bad), "{bad}");
        }
    }
}

//! `POST /v1/oauth/token` (OAuth 2.1 §3.2, RFC 6749 §5, RFC 7636 §4.5, RFC 8707 §2.2).
//!
//! Strict form parsing (no repeated parameter), the rate limits of the address and of the grant
//! presented (one operation), client authentication by the registered method, then
//! `authorization_code` or `refresh_token`; the code or refresh token goes to the workspace
//! object named by its routing id, which redeems or rotates it atomically (`grants.rs`). The
//! answer is an access token — a short-lived JWT naming its grant — and, for clients that use
//! them, a new refresh token. Every response is `no-store`; errors are RFC 6749 §5.2 JSON.

use serde_json::{Value, json};

use super::error::{ErrorCode, OAuthError};
use super::form::{self, Form};
use super::grants::{AccountOp, AccountReply, Issued, Redemption, RefreshRequest};
use super::state::Bucket;
use super::tokens::{self, Kind};
use super::{
    ACCESS_TOKEN_TTL_SECS, AccountAddr, MAX_OAUTH_BODY_BYTES, ObjectError, authorize, clients, metadata,
    ratelimit,
};
use crate::auth::ScopeSet;
use crate::auth::jwt::{self, AccessClaims};
use crate::config::Config;
use crate::http::{HttpRequest, HttpResponse, Platform};
use crate::mcp::Trace;
use crate::workspace::workspace_id_for;

/// Handles one token request.
pub async fn handle(
    req: &HttpRequest,
    config: &Config,
    platform: &dyn Platform,
    trace: &mut Trace,
) -> HttpResponse {
    let response = match token(req, config, platform, trace).await {
        Ok(body) => {
            trace.outcome = "ok";
            HttpResponse::json(200, body.to_string())
                .with("cache-control", "no-store")
                .with("pragma", "no-cache")
        }
        Err(e) => {
            trace.outcome = "oauth_error";
            if trace.detail.is_none() {
                trace.detail = Some(e.log.clone().unwrap_or_else(|| e.description.clone()));
            }
            e.to_wire()
        }
    };
    metadata::with_public_cors(response)
}

/// Reads the form of a token or revocation request.
pub fn read_form(req: &HttpRequest) -> Result<Form, OAuthError> {
    if !form::is_form_content_type(req.header("content-type")) {
        return Err(OAuthError::request("Send the request as application/x-www-form-urlencoded."));
    }
    match req.body.as_deref() {
        Some(body) if body.len() <= MAX_OAUTH_BODY_BYTES => Ok(Form::parse(body)),
        _ => Err(OAuthError::request("The request is larger than 16 KiB.")),
    }
}

async fn token(
    req: &HttpRequest,
    config: &Config,
    platform: &dyn Platform,
    trace: &mut Trace,
) -> Result<Value, OAuthError> {
    let form = read_form(req)?;
    // Spent before the client is looked up and authenticated: a flood of unknown client_ids,
    // bad secrets or made-up grants would otherwise cost a KV read and a Durable Object call
    // (or a CIMD fetch) each without ever being counted (RFC 6749 §10.10, RFC 6819 §4.4.1.11
    // and §5.1.4.2.3: throttle guessing at the token endpoint). The grant's own budget is in
    // the same object (`rl:<address>`), so it is spent in the same operation, all or none: one
    // call of that object per token request rather than two (bench/README.md, "Where the
    // refresh grant spends its time"). Spending the grant's budget this early, before anything
    // is checked, counts only the caller's own address against it.
    let mut buckets = vec![Bucket::new("token_ip", config.rate_limits.token_ip)];
    if let Some(route) = presented_route(&form) {
        buckets.push(Bucket::new(format!("token:{route}"), config.rate_limits.token));
    }
    ratelimit::check_all(platform.objects(), req, buckets, trace).await?;
    let client = clients::authenticated(req, &form, config, platform).await?;
    let now_ms = platform.now_ms();
    let grant_type = form.require("grant_type")?;
    let (route, op) = match grant_type {
        "authorization_code" => {
            let code = form.require("code")?;
            let code_verifier = form.require("code_verifier")?.to_owned();
            let redirect_uri = form.get("redirect_uri")?.map(str::to_owned);
            // RFC 8707: checked before the code is touched, so a wrong resource does not burn it.
            authorize::requested_resource(config, &form)?;
            let opaque = tokens::parse(Kind::Code, code).ok_or_else(|| {
                OAuthError::grant("The authorization code is invalid.").logged("malformed code")
            })?;
            let op = AccountOp::RedeemCode(Redemption {
                code_hash: tokens::hash(&opaque.secret),
                client_id: client.client_id.clone(),
                redirect_uri,
                code_verifier,
            });
            (opaque.route, op)
        }
        "refresh_token" => {
            if !client.refresh_allowed() {
                return Err(OAuthError::new(
                    ErrorCode::UnauthorizedClient,
                    "This client did not register the refresh_token grant.",
                ));
            }
            let refresh_token = form.require("refresh_token")?;
            // A client may send its first request's scope again, `offline_access` included.
            let scope = match form.get("scope")?.map(authorize::scope_words) {
                Some(words) if !words.is_empty() => Some(
                    ScopeSet::parse(&words.join(" "))
                        .map_err(|e| OAuthError::new(ErrorCode::InvalidScope, e))?,
                ),
                _ => None,
            };
            // A refresh token bound to another resource (PUBLIC_URL moved) is an invalid grant,
            // not an invalid target: RFC 6749 §5.2 `invalid_grant` covers a refresh token that
            // is not valid here, and MCP SDKs re-authorize on it, whereas they give up on
            // `invalid_target`. The authorization_code grant keeps RFC 8707 §2's error.
            authorize::requested_resource(config, &form).map_err(|e| match e.code {
                ErrorCode::InvalidTarget => {
                    OAuthError::grant("The refresh token is not valid for this resource; authorize again.")
                        .logged(format!("refresh for another resource: {}", e.description))
                }
                _ => e,
            })?;
            let opaque = tokens::parse(Kind::Refresh, refresh_token).ok_or_else(|| {
                OAuthError::grant("The refresh token is invalid.").logged("malformed refresh token")
            })?;
            let op = AccountOp::Refresh(RefreshRequest {
                secret: opaque.secret,
                client_id: client.client_id.clone(),
                scope,
            });
            (opaque.route, op)
        }
        _ => {
            return Err(OAuthError::new(
                ErrorCode::UnsupportedGrantType,
                "grant_type must be authorization_code or refresh_token.",
            ));
        }
    };
    let issued = match platform.objects().account(AccountAddr::Route(route), op).await {
        Ok(AccountReply::Issued(issued)) => issued,
        Ok(AccountReply::Refused(refusal)) => {
            let code = if refusal.code == "invalid_scope" {
                ErrorCode::InvalidScope
            } else {
                ErrorCode::InvalidGrant
            };
            return Err(OAuthError::new(code, refusal.description).logged(refusal.reason));
        }
        Ok(other) => return Err(OAuthError::unavailable(format!("grant store answered {}", other.kind()))),
        Err(ObjectError::Unroutable) => {
            return Err(OAuthError::grant("The grant is invalid.").logged("unroutable token"));
        }
        Err(ObjectError::Failed(e)) => return Err(OAuthError::unavailable(e)),
    };
    // A client in use stays registered (best effort: a failure only shortens its record's life).
    if let Err(e) = clients::renew_if_old(platform.kv(), &client, now_ms).await {
        trace.detail = Some(format!("client renewal failed: {e}"));
    }
    respond(config, &issued, now_ms)
}

/// The routing id of the grant the request presents (its well-formed code or refresh token),
/// read before anything else is checked; `None` leaves the errors to the checks that follow.
fn presented_route(form: &Form) -> Option<String> {
    let (kind, field) = match form.get("grant_type").ok()?? {
        "authorization_code" => (Kind::Code, "code"),
        "refresh_token" => (Kind::Refresh, "refresh_token"),
        _ => return None,
    };
    tokens::parse(kind, form.get(field).ok()??).map(|opaque| opaque.route)
}

/// The token response for what the grant store issued.
fn respond(config: &Config, issued: &Issued, now_ms: i64) -> Result<Value, OAuthError> {
    let claims = AccessClaims {
        iss: config.issuer().to_owned(),
        aud: config.resource(),
        sub: issued.subject.clone(),
        ws: workspace_id_for(&issued.subject),
        client_id: issued.client_id.clone(),
        scope: issued.scope.to_wire(),
        app: issued.app,
        jti: issued.access_jti.clone(),
        gid: Some(issued.grant_id.clone()),
    };
    // Minted at the stored issue time, so that a retried refresh gets the very same token.
    let access_token = jwt::mint(config, claims, issued.access_iat_ms, ACCESS_TOKEN_TTL_SECS)
        .map_err(|e| OAuthError::new(ErrorCode::ServerError, "Try again.").logged(e))?;
    let elapsed = (now_ms - issued.access_iat_ms).max(0) / 1000;
    let mut body = json!({
        "access_token": access_token,
        "token_type": "Bearer",
        "expires_in": (ACCESS_TOKEN_TTL_SECS - elapsed).max(1),
        "scope": issued.scope.to_wire(),
    });
    if let Some(refresh) = &issued.refresh_token {
        body["refresh_token"] = Value::from(refresh.as_str());
    }
    Ok(body)
}

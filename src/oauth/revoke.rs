//! `POST /v1/oauth/revoke`: token revocation (RFC 7009).
//!
//! Requests are rate limited per client address (`revoke` in `OAUTH_RATE_LIMITS`) before the
//! client authenticates as at the token endpoint. A refresh token of that client ends its
//! whole grant; an access token of that client ends its grant too (access tokens are JWTs that
//! cannot be recalled one by one, and RFC 7009 §2.1 lets revoking one revoke the grant), and its
//! use stops at the next call that reaches the workspace. Anything else — unknown, expired,
//! malformed, another client's — answers 200 and changes nothing (RFC 7009 §2.2), so the answer
//! reveals nothing about tokens the caller does not own. `token_type_hint` is only a hint.

use super::error::OAuthError;
use super::grants::{AccountOp, AccountReply};
use super::tokens::{self, Kind};
use super::{AccountAddr, ObjectError, clients, metadata, ratelimit, token};
use crate::auth::jwt;
use crate::config::Config;
use crate::http::{HttpRequest, HttpResponse, Platform};
use crate::mcp::Trace;

/// Handles one revocation.
pub async fn handle(
    req: &HttpRequest,
    config: &Config,
    platform: &dyn Platform,
    trace: &mut Trace,
) -> HttpResponse {
    let response = match revoke(req, config, platform, trace).await {
        Ok(revoked) => {
            trace.outcome = "ok";
            trace.detail = Some(if revoked { "grant revoked" } else { "nothing to revoke" }.into());
            HttpResponse::empty(200).with("cache-control", "no-store")
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

async fn revoke(
    req: &HttpRequest,
    config: &Config,
    platform: &dyn Platform,
    trace: &mut Trace,
) -> Result<bool, OAuthError> {
    let form = token::read_form(req)?;
    // Before client authentication, so that unknown clients and bad secrets are counted too:
    // each otherwise costs a KV read and a Durable Object call (RFC 7009 §5: the endpoint
    // should counter denial-of-service attacks; the refusal is RFC 6749 §5.2-style JSON).
    ratelimit::check(platform.objects(), req, "revoke", config.rate_limits.revoke, trace).await?;
    let client = clients::authenticated(req, &form, config, platform).await?;
    let now_ms = platform.now_ms();
    let token = form.require("token")?;
    form.get("token_type_hint")?;
    let (at, op) = if let Some(refresh) = tokens::parse(Kind::Refresh, token) {
        let op = AccountOp::RevokeRefresh { secret: refresh.secret, client_id: client.client_id.clone() };
        (AccountAddr::Route(refresh.route), op)
    } else if let Ok((principal, claims)) = jwt::verify(config, token, now_ms) {
        match claims.gid {
            Some(grant_id) if principal.client_id == client.client_id => {
                let op = AccountOp::RevokeGrant {
                    grant_id,
                    subject: principal.subject,
                    client_id: Some(client.client_id.clone()),
                };
                (AccountAddr::Workspace(principal.workspace), op)
            }
            _ => return Ok(false),
        }
    } else {
        return Ok(false);
    };
    match platform.objects().account(at, op).await {
        Ok(AccountReply::Revoked { revoked }) => Ok(revoked),
        Ok(other) => Err(OAuthError::unavailable(format!("revocation answered {}", other.kind()))),
        Err(ObjectError::Unroutable) => Ok(false),
        Err(ObjectError::Failed(e)) => Err(OAuthError::unavailable(e)),
    }
}

//! The OAuth 2.1 authorization server (MCP authorization, RFC 6749/OAuth 2.1, 7591, 7009, 8414,
//! 8707, 9207, 9728, Client ID Metadata Documents) and the browser session of the VibeSell web
//! pages.
//!
//! Everything here is pure Rust over four ports, so `cargo test` drives whole flows natively:
//! the [`Kv`](crate::kv::Kv) (clients), [`AuthObjects`] (the Durable Objects that hold every
//! single-use or rotating secret), [`Outbound`](crate::outbound::Outbound) (client metadata
//! documents, the OpenID provider) and the platform clock. `src/edge/` implements the ports on
//! Workers.
//!
//! Where state lives (`docs/storage.md`):
//! - clients: KV `client:<id>`, with a per-client `OAuthState` object as the read-after-write
//!   fallback; client metadata documents cached in KV `cimd:<hash>`;
//! - pending authorization requests, OpenID sign-in states and rate-limit buckets: `OAuthState`
//!   objects (`state.rs`), each named by the secret it guards;
//! - grants, authorization codes, refresh tokens and browser sessions: the user's workspace
//!   object (`grants.rs`), reached from an opaque token through its routing id (`tokens.rs`), so
//!   that a revoked grant is a local check when a tool runs.

pub mod account;
pub mod authorize;
pub mod cimd;
pub mod clients;
pub mod consent;
pub mod error;
pub mod form;
pub mod grants;
pub mod metadata;
pub mod oidc;
pub mod pages;
pub mod pkce;
pub mod ratelimit;
pub mod redirect;
pub mod register;
pub mod revoke;
pub mod session;
pub mod state;
pub mod token;
pub mod tokens;

use crate::tools::registry::LocalBoxFuture;

/// RFC 8414 authorization server metadata.
pub const AS_METADATA_PATH: &str = "/.well-known/oauth-authorization-server";
/// RFC 9728 protected resource metadata (also served with the resource path appended).
pub const PRM_PATH: &str = "/.well-known/oauth-protected-resource";
/// The authorization endpoint.
pub const AUTHORIZE_PATH: &str = "/v1/oauth/authorize";
/// The consent page (GET shows it, POST decides).
pub const CONSENT_PATH: &str = "/v1/oauth/consent";
/// The token endpoint.
pub const TOKEN_PATH: &str = "/v1/oauth/token";
/// Dynamic client registration (RFC 7591).
pub const REGISTER_PATH: &str = "/v1/oauth/register";
/// Token revocation (RFC 7009).
pub const REVOKE_PATH: &str = "/v1/oauth/revoke";
/// The sign-in page of the web pages.
pub const SIGNIN_PATH: &str = "/app/signin";
/// Development sign-in by email (loopback deployments only).
pub const SIGNIN_DEV_PATH: &str = "/app/signin/dev";
/// Starts sign-in with the OpenID provider.
pub const SIGNIN_OIDC_PATH: &str = "/app/signin/oidc";
/// The OpenID provider's redirect URI.
pub const SIGNIN_CALLBACK_PATH: &str = "/app/signin/callback";
/// Ends the browser session.
pub const SIGNOUT_PATH: &str = "/app/signout";
/// The account page: connected apps.
pub const ACCOUNT_PATH: &str = "/app/account";
/// Disconnects an app from the account page.
pub const ACCOUNT_REVOKE_PATH: &str = "/app/account/revoke";

/// Lifetime of an access token (a JWT checked on every request; its grant is checked whenever
/// it touches the workspace, so revocation does not wait for expiry).
pub const ACCESS_TOKEN_TTL_SECS: i64 = 3600;
/// Lifetime of an authorization code (OAuth 2.1 §4.1.2: short; RFC 6749 §4.1.2: at most 10 min).
pub const CODE_TTL_MS: i64 = 120_000;
/// Lifetime of a pending authorization request while the user signs in and decides.
pub const PENDING_TTL_MS: i64 = 600_000;
/// A refresh token expires after this long unused (RFC 9700 §4.14.2: idle expiry).
pub const REFRESH_IDLE_TTL_MS: i64 = 30 * 86_400_000;
/// A grant ends this long after consent, however often it is refreshed.
pub const GRANT_TTL_MS: i64 = 180 * 86_400_000;
/// How long after a rotation the previous refresh token may be presented again and get the
/// same answer (a client that lost the response retries); later reuse revokes the grant.
pub const REFRESH_RETRY_WINDOW_MS: i64 = 60_000;
/// Lifetime of a browser session.
pub const SESSION_TTL_MS: i64 = 7 * 86_400_000;

/// Largest body accepted by the form and JSON endpoints of the authorization server.
pub const MAX_OAUTH_BODY_BYTES: usize = 16 * 1024;

/// Where a user's grants and sessions live: their workspace Durable Object, named by the
/// workspace id, or reached through the opaque routing id carried in one of its tokens.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AccountAddr {
    /// By workspace id (`ws_…`), when the user is known.
    Workspace(String),
    /// By the routing id found in an opaque token (64 hex digits).
    Route(String),
}

/// Why a Durable Object call failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ObjectError {
    /// The routing id names no object of ours (a forged or corrupted token).
    #[error("unroutable object id")]
    Unroutable,
    /// The platform failed; the text is for logs.
    #[error("{0}")]
    Failed(String),
}

/// The authorization server's Durable Objects.
pub trait AuthObjects {
    /// Runs `op` in the `OAuthState` object called `name`.
    fn state(
        &self,
        name: String,
        op: state::StateOp,
    ) -> LocalBoxFuture<'_, Result<state::StateReply, ObjectError>>;
    /// Runs `op` in a user's workspace object.
    fn account(
        &self,
        at: AccountAddr,
        op: grants::AccountOp,
    ) -> LocalBoxFuture<'_, Result<grants::AccountReply, ObjectError>>;
}

#[cfg(test)]
pub(crate) mod flow_tests;

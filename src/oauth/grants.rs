//! Grants, authorization codes, refresh tokens and browser sessions of one user, kept in their
//! workspace Durable Object (tables of migration `oauth_grants_v1`, `docs/storage.md`).
//!
//! Each operation is synchronous SQL inside the object, which runs one request at a time, so
//! redeeming a code is an atomic single use (of any number of concurrent redemptions exactly one
//! wins), rotation is serialized, and a revocation is seen by the very next request. Access
//! tokens carry their grant id (`gid`), and `workspace::call_tool` asks [`is_active`] before a
//! tool touches the workspace: a revoked grant's access tokens stop there.
//!
//! Refresh rotation (OAuth 2.1 §4.3.1, RFC 9700 §4.14.2): every use returns a new refresh token
//! and retires the presented one. Presenting the retired token again within
//! [`REFRESH_RETRY_WINDOW_MS`] — a client that lost the response, or two concurrent refreshes —
//! returns the very same new pair, provided the new token has not been used yet: its secret is
//! derived from the presented one and a salt kept here (so the plaintext is never stored) and the
//! access token is minted again from the stored id and issue time. Any other reuse revokes the
//! whole grant.

use serde::{Deserialize, Serialize};

use super::tokens::{self, Kind};
use super::{CODE_TTL_MS, GRANT_TTL_MS, REFRESH_IDLE_TTL_MS, REFRESH_RETRY_WINDOW_MS};
use crate::auth::ScopeSet;
use crate::ids;
use crate::store::{Db, Stmt, StoreError};
use crate::workspace;

/// Rotated refresh tokens are kept this long for reuse detection, then forgotten.
const ROTATED_KEPT_MS: i64 = 7 * 86_400_000;

/// An operation on a user's grants and sessions.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AccountOp {
    /// After consent: records the grant and its authorization code.
    CreateGrant(NewGrant),
    /// Redeems an authorization code.
    RedeemCode(Redemption),
    /// Rotates a refresh token.
    Refresh(RefreshRequest),
    /// Revokes the grant of a refresh token presented by its own client (RFC 7009).
    RevokeRefresh {
        /// The token's secret part.
        secret: String,
        /// The authenticated client.
        client_id: String,
    },
    /// Revokes a grant by id: an access token's `gid` (with its client), or the account page.
    RevokeGrant {
        /// The grant.
        grant_id: String,
        /// The user it must belong to.
        subject: String,
        /// The client it must belong to, when a client asks.
        client_id: Option<String>,
    },
    /// The user's connected apps.
    ListGrants {
        /// The user.
        subject: String,
    },
    /// Starts a browser session.
    CreateSession {
        /// The user.
        subject: String,
        /// What to call them (an email).
        display: String,
        /// SHA-256 of the session secret.
        secret_hash: String,
        /// Absolute expiry (ms).
        expires_at: i64,
    },
    /// Reads a session.
    GetSession {
        /// SHA-256 of the session secret.
        secret_hash: String,
    },
    /// Ends a session.
    DeleteSession {
        /// SHA-256 of the session secret.
        secret_hash: String,
    },
}

/// A grant to record after consent.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NewGrant {
    /// The user.
    pub subject: String,
    /// The client.
    pub client_id: String,
    /// The client's name as shown at consent.
    pub client_name: String,
    /// The redirect URI the authorization response went to.
    pub redirect_uri: String,
    /// Whether the authorization request named it (then the token request must repeat it).
    pub redirect_uri_in_request: bool,
    /// What the user granted.
    pub scope: ScopeSet,
    /// Whether the client is the Claude app.
    pub app: bool,
    /// The canonical resource (the access tokens' audience).
    pub resource: String,
    /// SHA-256 of the authorization code's secret.
    pub code_hash: String,
    /// The PKCE S256 challenge.
    pub code_challenge: String,
    /// Whether the client may use refresh tokens.
    pub refresh: bool,
}

/// A code redemption.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Redemption {
    /// SHA-256 of the code's secret.
    pub code_hash: String,
    /// The authenticated client.
    pub client_id: String,
    /// The `redirect_uri` of the token request.
    pub redirect_uri: Option<String>,
    /// The PKCE verifier.
    pub code_verifier: String,
}

/// A refresh.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RefreshRequest {
    /// The presented token's secret part.
    pub secret: String,
    /// The authenticated client.
    pub client_id: String,
    /// A narrower scope for the new access token.
    pub scope: Option<ScopeSet>,
}

/// What the token endpoint needs to answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Issued {
    /// The grant.
    pub grant_id: String,
    /// The user.
    pub subject: String,
    /// The client.
    pub client_id: String,
    /// The access token's scopes.
    pub scope: ScopeSet,
    /// Whether the client is the Claude app.
    pub app: bool,
    /// The new refresh token, if the client uses them.
    pub refresh_token: Option<String>,
    /// The access token's id.
    pub access_jti: String,
    /// The access token's issue time (ms): a retried refresh mints the same token again.
    pub access_iat_ms: i64,
}

/// Why a code or refresh token was refused: always `invalid_grant` on the wire unless `code`
/// says otherwise.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GrantRefusal {
    /// `invalid_grant` or `invalid_scope`.
    pub code: String,
    /// Safe text for the client.
    pub description: String,
    /// Internal reason for the log.
    pub reason: String,
}

/// A connected app, for the account page.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GrantSummary {
    /// The grant.
    pub grant_id: String,
    /// The client's name.
    pub client_name: String,
    /// The client.
    pub client_id: String,
    /// Where its responses went.
    pub redirect_uri: String,
    /// What it may do.
    pub scope: ScopeSet,
    /// When the user consented (ms).
    pub created_at: i64,
    /// When it last refreshed (ms).
    pub last_used_at: i64,
}

/// A browser session.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SessionInfo {
    /// The user.
    pub subject: String,
    /// What to call them.
    pub display: String,
    /// When it ends (ms).
    pub expires_at: i64,
}

/// The answer to an [`AccountOp`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AccountReply {
    /// The grant was recorded; `route` is this object's routing id for the code.
    GrantCreated {
        /// The grant.
        grant_id: String,
        /// The routing id.
        route: String,
    },
    /// Tokens to issue.
    Issued(Issued),
    /// The code or token is refused.
    Refused(GrantRefusal),
    /// Whether something was revoked.
    Revoked {
        /// True when a live grant ended.
        revoked: bool,
    },
    /// Connected apps.
    Grants {
        /// Newest first.
        grants: Vec<GrantSummary>,
    },
    /// A session, if the secret names a live one.
    Session {
        /// The session.
        session: Option<SessionInfo>,
    },
    /// A session was created; `route` is this object's routing id for the cookie.
    SessionCreated {
        /// The routing id.
        route: String,
    },
    /// Done.
    Done,
}

impl AccountReply {
    /// The variant's name, for the log line of an answer that was not the one expected: never
    /// the answer itself, which may hold tokens.
    pub fn kind(&self) -> &'static str {
        match self {
            AccountReply::GrantCreated { .. } => "grant_created",
            AccountReply::Issued(_) => "issued",
            AccountReply::Refused(_) => "refused",
            AccountReply::Revoked { .. } => "revoked",
            AccountReply::Grants { .. } => "grants",
            AccountReply::Session { .. } => "session",
            AccountReply::SessionCreated { .. } => "session_created",
            AccountReply::Done => "done",
        }
    }
}

fn refuse(description: &str, reason: &str) -> AccountReply {
    AccountReply::Refused(GrantRefusal {
        code: "invalid_grant".into(),
        description: description.into(),
        reason: reason.into(),
    })
}

/// Runs one operation in the workspace object whose routing id is `route`.
pub fn apply(
    db: &dyn Db,
    opened: &workspace::Opened,
    route: &str,
    op: AccountOp,
    now_ms: i64,
) -> Result<AccountReply, StoreError> {
    match op {
        AccountOp::CreateGrant(grant) => {
            open(db, opened, &grant.subject, now_ms)?;
            create_grant(db, route, grant, now_ms)
        }
        AccountOp::CreateSession { subject, display, secret_hash, expires_at } => {
            open(db, opened, &subject, now_ms)?;
            db.batch(vec![
                Stmt::new("DELETE FROM web_sessions WHERE expires_at <= ?", vec![now_ms.into()]),
                Stmt::new(
                    "INSERT INTO web_sessions (hash, subject, display, created_at, expires_at) VALUES (?, ?, ?, ?, ?)",
                    vec![secret_hash.into(), subject.into(), display.into(), now_ms.into(), expires_at.into()],
                ),
            ])?;
            Ok(AccountReply::SessionCreated { route: route.to_owned() })
        }
        // Everything else only reads or changes what exists: an object that was never opened
        // (a forged routing id in tests) answers "nothing here" without creating tables.
        other if !ready(db, opened, now_ms)? => Ok(match other {
            AccountOp::RedeemCode(_) => refuse("The authorization code is invalid.", "no workspace"),
            AccountOp::Refresh(_) => refuse("The refresh token is invalid.", "no workspace"),
            AccountOp::RevokeRefresh { .. } | AccountOp::RevokeGrant { .. } => {
                AccountReply::Revoked { revoked: false }
            }
            AccountOp::ListGrants { .. } => AccountReply::Grants { grants: Vec::new() },
            AccountOp::GetSession { .. } => AccountReply::Session { session: None },
            _ => AccountReply::Done,
        }),
        AccountOp::RedeemCode(r) => redeem(db, route, r, now_ms),
        AccountOp::Refresh(r) => refresh(db, route, r, now_ms),
        AccountOp::RevokeRefresh { secret, client_id } => {
            let row: Option<GrantOfToken> = db.row(
                "SELECT r.grant_id, g.client_id FROM oauth_refresh_tokens r JOIN oauth_grants g ON g.id = r.grant_id WHERE r.hash = ?",
                vec![tokens::hash(&secret).into()],
            )?;
            let revoked = match row {
                Some(row) if row.client_id == client_id => {
                    revoke(db, &row.grant_id, "revoked_by_client", now_ms)?
                }
                _ => false,
            };
            Ok(AccountReply::Revoked { revoked })
        }
        AccountOp::RevokeGrant { grant_id, subject, client_id } => {
            let row: Option<GrantOwner> = db.row(
                "SELECT subject, client_id FROM oauth_grants WHERE id = ?",
                vec![grant_id.clone().into()],
            )?;
            let owned =
                row.is_some_and(|r| r.subject == subject && client_id.is_none_or(|c| c == r.client_id));
            let revoked = owned && revoke(db, &grant_id, "revoked", now_ms)?;
            Ok(AccountReply::Revoked { revoked })
        }
        AccountOp::ListGrants { subject } => {
            let rows: Vec<SummaryRow> = db.rows(
                "SELECT id, client_name, client_id, redirect_uri, scope, created_at, last_used_at FROM oauth_grants WHERE subject = ? AND activated_at IS NOT NULL AND revoked_at IS NULL AND expires_at > ? ORDER BY created_at DESC",
                vec![subject.into(), now_ms.into()],
            )?;
            let grants = rows
                .into_iter()
                .map(|r| GrantSummary {
                    grant_id: r.id,
                    client_name: r.client_name,
                    client_id: r.client_id,
                    redirect_uri: r.redirect_uri,
                    scope: ScopeSet::parse(&r.scope).unwrap_or_default(),
                    created_at: r.created_at,
                    last_used_at: r.last_used_at,
                })
                .collect();
            Ok(AccountReply::Grants { grants })
        }
        AccountOp::GetSession { secret_hash } => {
            let session: Option<SessionInfo> = db.row(
                "SELECT subject, display, expires_at FROM web_sessions WHERE hash = ? AND expires_at > ?",
                vec![secret_hash.into(), now_ms.into()],
            )?;
            Ok(AccountReply::Session { session })
        }
        AccountOp::DeleteSession { secret_hash } => {
            db.exec("DELETE FROM web_sessions WHERE hash = ?", vec![secret_hash.into()])?;
            Ok(AccountReply::Done)
        }
    }
}

/// Opens the workspace for `subject` (migrations, owner binding), which `opened` then knows.
fn open(db: &dyn Db, opened: &workspace::Opened, subject: &str, now_ms: i64) -> Result<(), StoreError> {
    let workspace_id = workspace::workspace_id_for(subject);
    workspace::open_for(db, subject, &workspace_id, now_ms)
        .map_err(|r| StoreError::Sql(format!("opening the workspace: {r:?}")))?;
    opened.mark_schema_current();
    Ok(())
}

/// Whether the workspace has ever been opened; if so its schema is brought up to date. A holder
/// that has done so already (`opened`) skips the three statements it takes (a few percent of a
/// refresh grant's CPU, bench/README.md).
fn ready(db: &dyn Db, opened: &workspace::Opened, now_ms: i64) -> Result<bool, StoreError> {
    if opened.schema_current() {
        return Ok(true);
    }
    let exists = db
        .query(Stmt::new(
            "SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = '_migrations'",
            vec![],
        ))?
        .scalar_i64()
        .unwrap_or(0)
        > 0;
    if exists {
        opened.migrate(db, now_ms)?;
    }
    Ok(exists)
}

fn create_grant(db: &dyn Db, route: &str, g: NewGrant, now_ms: i64) -> Result<AccountReply, StoreError> {
    let grant_id = ids::random_id("gr_");
    db.batch(vec![
        // Codes nobody redeemed, and the grants they would have started, are forgotten.
        Stmt::new("DELETE FROM oauth_codes WHERE expires_at <= ?", vec![now_ms.into()]),
        Stmt::new(
            "DELETE FROM oauth_grants WHERE activated_at IS NULL AND id NOT IN (SELECT grant_id FROM oauth_codes)",
            vec![],
        ),
        Stmt::new("DELETE FROM oauth_grants WHERE expires_at <= ?", vec![now_ms.into()]),
        Stmt::new(
            "INSERT INTO oauth_grants (id, subject, client_id, client_name, redirect_uri, redirect_uri_in_request, scope, app, resource, refresh, created_at, expires_at, last_used_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            vec![
                grant_id.clone().into(),
                g.subject.into(),
                g.client_id.into(),
                g.client_name.into(),
                g.redirect_uri.into(),
                g.redirect_uri_in_request.into(),
                g.scope.to_wire().into(),
                g.app.into(),
                g.resource.into(),
                g.refresh.into(),
                now_ms.into(),
                (now_ms + GRANT_TTL_MS).into(),
                now_ms.into(),
            ],
        ),
        Stmt::new(
            "INSERT INTO oauth_codes (hash, grant_id, code_challenge, expires_at) VALUES (?, ?, ?, ?)",
            vec![g.code_hash.into(), grant_id.clone().into(), g.code_challenge.into(), (now_ms + CODE_TTL_MS).into()],
        ),
    ])?;
    Ok(AccountReply::GrantCreated { grant_id, route: route.to_owned() })
}

#[derive(Deserialize)]
struct CodeRow {
    grant_id: String,
    code_challenge: String,
    code_expires_at: i64,
    used_at: Option<i64>,
    subject: String,
    client_id: String,
    redirect_uri: String,
    redirect_uri_in_request: i64,
    scope: String,
    app: i64,
    refresh: i64,
    expires_at: i64,
    revoked_at: Option<i64>,
}

fn redeem(db: &dyn Db, route: &str, r: Redemption, now_ms: i64) -> Result<AccountReply, StoreError> {
    let row: Option<CodeRow> = db.row(
        "SELECT c.grant_id, c.code_challenge, c.expires_at AS code_expires_at, c.used_at, g.subject, g.client_id, g.redirect_uri, g.redirect_uri_in_request, g.scope, g.app, g.refresh, g.expires_at, g.revoked_at FROM oauth_codes c JOIN oauth_grants g ON g.id = c.grant_id WHERE c.hash = ?",
        vec![r.code_hash.clone().into()],
    )?;
    let Some(row) = row else { return Ok(refuse("The authorization code is invalid.", "unknown code")) };
    // The client is checked before anything else changes, so that presenting someone else's code
    // can neither use it nor destroy it.
    if row.client_id != r.client_id {
        return Ok(refuse("The authorization code was issued to another client.", "code of another client"));
    }
    if row.used_at.is_some() {
        // RFC 6749 §10.5 / OAuth 2.1 §4.1.3: a second redemption revokes what the first issued.
        // Only one that could have been the first: within the code's lifetime and with its PKCE
        // verifier. A code without its verifier redeems nothing, so presenting it proves no
        // theft; revoking for it would let anyone who saw the callback URL (browser history, a
        // log) disconnect the user's app at any later time (OAUTH-ANCHORS §1.2).
        if row.code_expires_at <= now_ms || !super::pkce::verify(&r.code_verifier, &row.code_challenge) {
            return Ok(refuse("The authorization code was already used.", "used code"));
        }
        revoke(db, &row.grant_id, "code_replay", now_ms)?;
        return Ok(refuse(
            "The authorization code was already used; the tokens issued with it are revoked.",
            "code replay",
        ));
    }
    if row.revoked_at.is_some() || row.expires_at <= now_ms {
        return Ok(refuse("The authorization was revoked.", "grant revoked"));
    }
    if row.code_expires_at <= now_ms {
        burn(db, &r.code_hash, now_ms)?;
        return Ok(refuse("The authorization code has expired; authorize again.", "code expired"));
    }
    let redirect_ok = match (&r.redirect_uri, row.redirect_uri_in_request != 0) {
        (Some(presented), _) => *presented == row.redirect_uri,
        (None, in_request) => !in_request,
    };
    if !redirect_ok {
        burn(db, &r.code_hash, now_ms)?;
        return Ok(refuse(
            "redirect_uri does not match the one of the authorization request.",
            "redirect mismatch",
        ));
    }
    if !super::pkce::verify(&r.code_verifier, &row.code_challenge) {
        // A wrong verifier burns the code: no guessing against it.
        burn(db, &r.code_hash, now_ms)?;
        return Ok(refuse("The PKCE code_verifier does not match the code_challenge.", "pkce mismatch"));
    }
    let scope = ScopeSet::parse(&row.scope).unwrap_or_default();
    let access_jti = ids::random_id("at_");
    let mut stmts = vec![
        Stmt::new(
            "UPDATE oauth_codes SET used_at = ? WHERE hash = ? AND used_at IS NULL",
            vec![now_ms.into(), r.code_hash.into()],
        ),
        Stmt::new(
            "UPDATE oauth_grants SET activated_at = ?, last_used_at = ? WHERE id = ?",
            vec![now_ms.into(), now_ms.into(), row.grant_id.clone().into()],
        ),
    ];
    let refresh_token = if row.refresh != 0 {
        let secret = tokens::new_secret();
        stmts.push(insert_refresh(
            &tokens::hash(&secret),
            &row.grant_id,
            &access_jti,
            scope,
            row.expires_at,
            now_ms,
        ));
        Some(tokens::format(Kind::Refresh, route, &secret))
    } else {
        None
    };
    db.batch(stmts)?;
    Ok(AccountReply::Issued(Issued {
        grant_id: row.grant_id,
        subject: row.subject,
        client_id: row.client_id,
        scope,
        app: row.app != 0,
        refresh_token,
        access_jti,
        access_iat_ms: now_ms,
    }))
}

fn insert_refresh(
    hash: &str,
    grant_id: &str,
    jti: &str,
    scope: ScopeSet,
    grant_expires: i64,
    now_ms: i64,
) -> Stmt {
    Stmt::new(
        "INSERT INTO oauth_refresh_tokens (hash, grant_id, created_at, expires_at, access_jti, access_iat, access_scope) VALUES (?, ?, ?, ?, ?, ?, ?)",
        vec![
            hash.into(),
            grant_id.into(),
            now_ms.into(),
            (now_ms + REFRESH_IDLE_TTL_MS).min(grant_expires).into(),
            jti.into(),
            now_ms.into(),
            scope.to_wire().into(),
        ],
    )
}

fn burn(db: &dyn Db, code_hash: &str, now_ms: i64) -> Result<(), StoreError> {
    db.exec(
        "UPDATE oauth_codes SET used_at = ? WHERE hash = ? AND used_at IS NULL",
        vec![now_ms.into(), code_hash.into()],
    )
}

/// Ends a grant; answers whether it was live.
fn revoke(db: &dyn Db, grant_id: &str, reason: &str, now_ms: i64) -> Result<bool, StoreError> {
    let results = db.batch(vec![
        Stmt::new(
            "UPDATE oauth_grants SET revoked_at = ?, revoked_reason = ? WHERE id = ? AND revoked_at IS NULL RETURNING id",
            vec![now_ms.into(), reason.into(), grant_id.into()],
        ),
        // Nothing of a revoked grant can be used again; its rows are only kept for the reply.
        Stmt::new("DELETE FROM oauth_refresh_tokens WHERE grant_id = ? AND rotated_at IS NULL", vec![grant_id.into()]),
        Stmt::new("UPDATE oauth_codes SET used_at = ? WHERE grant_id = ? AND used_at IS NULL", vec![
            now_ms.into(),
            grant_id.into(),
        ]),
    ])?;
    Ok(results.first().is_some_and(|rows| !rows.rows.is_empty()))
}

#[derive(Deserialize)]
struct RefreshRow {
    grant_id: String,
    token_expires_at: i64,
    rotated_at: Option<i64>,
    successor_salt: Option<String>,
    access_jti: String,
    access_iat: i64,
    access_scope: String,
    subject: String,
    client_id: String,
    scope: String,
    app: i64,
    expires_at: i64,
    revoked_at: Option<i64>,
}

fn find_refresh(db: &dyn Db, hash: &str) -> Result<Option<RefreshRow>, StoreError> {
    db.row(
        "SELECT r.grant_id, r.expires_at AS token_expires_at, r.rotated_at, r.successor_salt, r.access_jti, r.access_iat, r.access_scope, g.subject, g.client_id, g.scope, g.app, g.expires_at, g.revoked_at FROM oauth_refresh_tokens r JOIN oauth_grants g ON g.id = r.grant_id WHERE r.hash = ?",
        vec![hash.into()],
    )
}

/// The successor of a refresh secret: HMAC(secret, salt). Only someone holding the presented
/// token and the salt stored here can compute it.
fn successor(secret: &str, salt: &str) -> String {
    ids::hex(&ids::hmac_sha256(secret.as_bytes(), salt.as_bytes()))
}

fn refresh(db: &dyn Db, route: &str, r: RefreshRequest, now_ms: i64) -> Result<AccountReply, StoreError> {
    let Some(row) = find_refresh(db, &tokens::hash(&r.secret))? else {
        return Ok(refuse("The refresh token is invalid.", "unknown refresh token"));
    };
    if row.client_id != r.client_id {
        return Ok(refuse(
            "The refresh token was issued to another client.",
            "refresh token of another client",
        ));
    }
    if row.revoked_at.is_some() || row.expires_at <= now_ms {
        return Ok(refuse("The authorization was revoked or has expired; authorize again.", "grant ended"));
    }
    let issued = |refresh_secret: &str, jti: String, iat: i64, scope: &str| Issued {
        grant_id: row.grant_id.clone(),
        subject: row.subject.clone(),
        client_id: row.client_id.clone(),
        scope: ScopeSet::parse(scope).unwrap_or_default(),
        app: row.app != 0,
        refresh_token: Some(tokens::format(Kind::Refresh, route, refresh_secret)),
        access_jti: jti,
        access_iat_ms: iat,
    };
    if let Some(rotated_at) = row.rotated_at {
        if now_ms - rotated_at <= REFRESH_RETRY_WINDOW_MS
            && let Some(salt) = &row.successor_salt
        {
            let next = successor(&r.secret, salt);
            if let Some(next_row) = find_refresh(db, &tokens::hash(&next))?
                && next_row.rotated_at.is_none()
            {
                // An idempotent retry: the same refresh token and the same access token again.
                return Ok(AccountReply::Issued(issued(
                    &next,
                    next_row.access_jti,
                    next_row.access_iat,
                    &next_row.access_scope,
                )));
            }
        }
        revoke(db, &row.grant_id, "refresh_reuse", now_ms)?;
        return Ok(refuse(
            "The refresh token was already used; the authorization is revoked. Authorize again.",
            "refresh token reuse",
        ));
    }
    if row.token_expires_at <= now_ms {
        return Ok(refuse("The refresh token has expired; authorize again.", "refresh token expired"));
    }
    let granted = ScopeSet::parse(&row.scope).unwrap_or_default();
    // As at /authorize: a refresh asking for `mcp:act` alone gets `mcp mcp:act`, never a token
    // that can act but not list (RFC 6749 §6 lets the server decide the scope it issues within
    // what was granted).
    let asked = r.scope.map(ScopeSet::implied);
    let scope = match asked {
        None => granted,
        Some(asked) if granted.covers(asked) && asked != ScopeSet::default() => asked,
        Some(_) => {
            return Ok(AccountReply::Refused(GrantRefusal {
                code: "invalid_scope".into(),
                description: "The scope asked for exceeds what was granted.".into(),
                reason: "scope escalation on refresh".into(),
            }));
        }
    };
    let salt = tokens::new_secret();
    let next = successor(&r.secret, &salt);
    let jti = ids::random_id("at_");
    db.batch(vec![
        Stmt::new("UPDATE oauth_refresh_tokens SET rotated_at = ?, successor_salt = ? WHERE hash = ? AND rotated_at IS NULL", vec![
            now_ms.into(),
            salt.into(),
            tokens::hash(&r.secret).into(),
        ]),
        insert_refresh(&tokens::hash(&next), &row.grant_id, &jti, scope, row.expires_at, now_ms),
        Stmt::new("UPDATE oauth_grants SET last_used_at = ? WHERE id = ?", vec![now_ms.into(), row.grant_id.clone().into()]),
        Stmt::new("DELETE FROM oauth_refresh_tokens WHERE grant_id = ? AND rotated_at IS NOT NULL AND rotated_at < ?", vec![
            row.grant_id.clone().into(),
            (now_ms - ROTATED_KEPT_MS).into(),
        ]),
    ])?;
    Ok(AccountReply::Issued(issued(&next, jti, now_ms, &scope.to_wire())))
}

/// Whether the grant an access token names is still live for `subject` (checked by
/// `workspace::call_tool` before every tool call).
pub fn is_active(db: &dyn Db, grant_id: &str, subject: &str, now_ms: i64) -> Result<bool, StoreError> {
    // The expiry is compared here rather than in SQL so that the statement does not take the
    // time: it runs before every tool call, and a holder that remembers reads
    // (`store::Remembering`) then answers it without SQLite until the next write (a revocation
    // is one).
    let expiry = db
        .query(Stmt::new(
            "SELECT expires_at FROM oauth_grants WHERE id = ? AND subject = ? AND activated_at IS NOT NULL AND revoked_at IS NULL",
            vec![grant_id.into(), subject.into()],
        ))?
        .scalar_i64();
    Ok(expiry.is_some_and(|at| at > now_ms))
}

#[derive(Deserialize)]
struct GrantOfToken {
    grant_id: String,
    client_id: String,
}

#[derive(Deserialize)]
struct GrantOwner {
    subject: String,
    client_id: String,
}

#[derive(Deserialize)]
struct SummaryRow {
    id: String,
    client_name: String,
    client_id: String,
    redirect_uri: String,
    scope: String,
    created_at: i64,
    last_used_at: i64,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{CountingDb, NOW_MS};

    fn list(db: &CountingDb, opened: &workspace::Opened) -> (AccountReply, usize) {
        let before = db.statements.get();
        let reply =
            apply(db, opened, "route", AccountOp::ListGrants { subject: "u1".into() }, NOW_MS).unwrap();
        (reply, db.statements.get() - before)
    }

    #[test]
    fn a_holder_that_opened_the_workspace_skips_the_schema_checks() {
        let db = CountingDb::default();
        // Never opened: nothing there, and no table created.
        let (reply, _) = list(&db, &workspace::Opened::default());
        assert_eq!(reply, AccountReply::Grants { grants: Vec::new() });
        assert_eq!(workspace::owner(&db.db).ok(), None, "no meta table yet");

        let opened = workspace::Opened::default();
        let session = AccountOp::CreateSession {
            subject: "u1".into(),
            display: "U".into(),
            secret_hash: "h".into(),
            expires_at: NOW_MS + 1000,
        };
        apply(&db, &opened, "route", session, NOW_MS).unwrap();
        assert!(opened.schema_current());
        let (warm, warm_statements) = list(&db, &opened);
        // A fresh instance checks that the workspace exists and that its schema is current first.
        let fresh = workspace::Opened::default();
        let (cold, cold_statements) = list(&db, &fresh);
        assert_eq!(warm, cold);
        assert_eq!(cold_statements, warm_statements + 3);
        assert!(fresh.schema_current(), "learnt by the first operation");
        assert_eq!(list(&db, &fresh).1, warm_statements);
    }
}

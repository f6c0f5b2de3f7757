//! Bearer authentication of MCP requests (RFC 6750) and the challenges that lead a client to
//! OAuth discovery (MCP authorization §2.3, RFC 9728 §5.1).

use super::jwt::{self, TokenError};
use super::{ALL_SCOPES, Principal};
use crate::config::Config;

/// Why a request to the MCP endpoint is not authorised.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AuthError {
    /// No credentials at all: the bare challenge that starts discovery.
    Missing,
    /// An `Authorization` header that is not one well-formed bearer token, or a token in the
    /// query string (RFC 6750 §2.3 is forbidden by MCP): 400 `invalid_request`.
    Malformed(&'static str),
    /// The token does not verify: 401 `invalid_token`.
    Invalid(TokenError),
    /// The token is valid but lacks a scope for what was asked: 403 `insufficient_scope`.
    InsufficientScope,
    /// The token has the scopes, but the tool is for the Claude app's card and its client is
    /// not the app (PRODUCT §3): the same 403, whose description says that no scope helps.
    AppOnly,
}

/// An HTTP refusal with its `WWW-Authenticate` challenge.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Challenge {
    /// 400, 401 or 403.
    pub status: u16,
    /// The `WWW-Authenticate` header value.
    pub www_authenticate: String,
    /// The JSON body (`{"error": …, "error_description": …}`).
    pub body: String,
}

impl AuthError {
    /// The one place where authentication failures become wire text (RFC 6750 §3).
    pub fn to_wire(&self, config: &Config) -> Challenge {
        let metadata = config.resource_metadata_url();
        let (status, code, description) = match self {
            // RFC 6750 §3.1: with no credentials, no error code.
            AuthError::Missing => {
                return Challenge {
                    status: 401,
                    www_authenticate: format!(
                        r#"Bearer resource_metadata="{metadata}", scope="{ALL_SCOPES}""#
                    ),
                    body: crate::oauth::error::error_body(
                        "invalid_token",
                        "Authorization needed: send an OAuth bearer access token.",
                    ),
                };
            }
            AuthError::Malformed(why) => (400, "invalid_request", *why),
            AuthError::Invalid(_) => {
                (401, "invalid_token", "The access token is invalid or expired; get a new one.")
            }
            AuthError::InsufficientScope => (
                403,
                "insufficient_scope",
                "This needs the mcp:act scope; authorize again with read and act access.",
            ),
            AuthError::AppOnly => (
                403,
                "insufficient_scope",
                "Only the user decides approvals, in the Claude app's card or on the approval's web page; \
                 this client cannot, whatever its scopes.",
            ),
        };
        let scope = if matches!(self, AuthError::InsufficientScope | AuthError::AppOnly) {
            format!(r#", scope="{ALL_SCOPES}""#)
        } else {
            String::new()
        };
        Challenge {
            status,
            www_authenticate: format!(
                r#"Bearer error="{code}", error_description="{description}"{scope}, resource_metadata="{metadata}""#
            ),
            body: crate::oauth::error::error_body(code, description),
        }
    }
}

/// Authenticates one request from its `Authorization` header values and query string.
pub fn authenticate(
    config: &Config,
    authorization: &[&str],
    query: Option<&str>,
    now_ms: i64,
) -> Result<Principal, AuthError> {
    if query.is_some_and(|q| form_urlencoded::parse(q.as_bytes()).any(|(name, _)| name == "access_token")) {
        return Err(AuthError::Malformed("Send the access token in the Authorization header, not the URL."));
    }
    let header = match authorization {
        [] => return Err(AuthError::Missing),
        [one] => *one,
        _ => return Err(AuthError::Malformed("Send exactly one Authorization header.")),
    };
    let malformed = AuthError::Malformed("Use: Authorization: Bearer <access token>.");
    let Some(token) = bearer_token(header) else { return Err(malformed) };
    // A token verified before passed the syntax check then, as exactly this string, so a
    // remembered one skips that walk over its 500 bytes on every request (bench/README.md, "The
    // wasm's side of a request, timed inside the isolate").
    if let Some(known) = jwt::remembered(config, token, now_ms) {
        return known.map_err(AuthError::Invalid);
    }
    if !is_b64token(token) {
        return Err(malformed);
    }
    jwt::verify_and_remember(config, token, now_ms).map_err(AuthError::Invalid)
}

/// The credentials of `Bearer <token>` (scheme case-insensitive, RFC 7235 §2.1), unchecked.
fn bearer_token(header: &str) -> Option<&str> {
    let (scheme, token) = header.trim().split_once(' ')?;
    scheme.eq_ignore_ascii_case("bearer").then(|| token.trim_start_matches(' '))
}

/// Whether `token` has the b64token syntax of RFC 6750 §2.1 (and a sane length).
fn is_b64token(token: &str) -> bool {
    let body = token.trim_end_matches('=');
    !body.is_empty()
        && token.len() <= 8192
        && body.bytes().all(|b| matches!(b, b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' | b'+' | b'/'))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::auth::ScopeSet;
    use crate::testing::{NOW_MS, test_config, test_token};

    /// A token the cache remembers skips the syntax check only as exactly that string: the
    /// same token with a character the syntax refuses is still malformed, not a cache hit.
    #[test]
    fn a_remembered_token_skips_only_its_own_syntax_check() {
        let config = test_config();
        let token = test_token(ScopeSet::FULL, false);
        let header = format!("Bearer {token}");
        assert!(authenticate(&config, &[&header], None, NOW_MS).is_ok());
        assert!(authenticate(&config, &[&header], None, NOW_MS).is_ok(), "remembered");
        for bad in [format!("{header}\""), format!("{header} x"), format!("Bearer \u{e9}{token}")] {
            assert!(
                matches!(authenticate(&config, &[&bad], None, NOW_MS), Err(AuthError::Malformed(_))),
                "{bad}"
            );
        }
    }

    #[test]
    fn missing_token_gets_the_bare_challenge() {
        let config = test_config();
        let err = authenticate(&config, &[], None, NOW_MS).unwrap_err();
        assert_eq!(err, AuthError::Missing);
        let wire = err.to_wire(&config);
        assert_eq!(wire.status, 401);
        assert_eq!(
            wire.www_authenticate,
            r#"Bearer resource_metadata="http://127.0.0.1:8787/.well-known/oauth-protected-resource/v1/mcp", scope="mcp mcp:act""#
        );
    }

    #[test]
    fn malformed_headers_are_bad_requests() {
        let config = test_config();
        for h in
            ["Basic dXNlcjpwYXNz", "Bearer", "Bearer ", "Bearer a b", "Token abc", "Bearer ab\"c", "bearer"]
        {
            let err = authenticate(&config, &[h], None, NOW_MS).unwrap_err();
            assert!(matches!(err, AuthError::Malformed(_)), "{h}: {err:?}");
            assert_eq!(err.to_wire(&config).status, 400);
        }
        let token = test_token(ScopeSet::FULL, false);
        let two = [format!("Bearer {token}"), format!("Bearer {token}")];
        let two: Vec<&str> = two.iter().map(String::as_str).collect();
        assert!(matches!(authenticate(&config, &two, None, NOW_MS), Err(AuthError::Malformed(_))));
        let one = format!("Bearer {token}");
        assert!(matches!(
            authenticate(&config, &[&one], Some("access_token=x"), NOW_MS),
            Err(AuthError::Malformed(_))
        ));
    }

    #[test]
    fn accepts_a_good_token_with_any_scheme_case() {
        let config = test_config();
        let token = test_token(ScopeSet::READ, false);
        for scheme in ["Bearer", "bearer", "BEARER"] {
            let h = format!("{scheme} {token}");
            let p = authenticate(&config, &[&h], Some("x=1"), NOW_MS).unwrap();
            assert_eq!(p.scopes, ScopeSet::READ);
        }
    }

    #[test]
    fn bad_tokens_get_invalid_token() {
        let config = test_config();
        let err = authenticate(&config, &["Bearer abc.def.ghi"], None, NOW_MS).unwrap_err();
        let wire = err.to_wire(&config);
        assert_eq!(wire.status, 401);
        assert!(wire.www_authenticate.starts_with(r#"Bearer error="invalid_token""#));
        assert!(wire.www_authenticate.contains("resource_metadata="));
    }

    /// RFC 6750 §3: `error_description` holds only %x20-21 / %x23-5B / %x5D-7E, in the header
    /// and the body, whatever the request held.
    #[test]
    fn error_descriptions_keep_to_the_allowed_characters() {
        let config = test_config();
        let token = test_token(ScopeSet::FULL, false);
        let mut errors: Vec<AuthError> = ["Bearer \"é\\", "Basic x", "Bearer abc.def.ghi", "Bearer \u{202e}"]
            .iter()
            .map(|h| authenticate(&config, &[h], None, NOW_MS).unwrap_err())
            .collect();
        errors.push(authenticate(&config, &["Bearer a", "Bearer b"], None, NOW_MS).unwrap_err());
        errors.push(
            authenticate(&config, &[&format!("Bearer {token}")], Some("access_token=\""), NOW_MS)
                .unwrap_err(),
        );
        errors.extend([AuthError::Missing, AuthError::InsufficientScope, AuthError::AppOnly]);
        for err in errors {
            let wire = err.to_wire(&config);
            let body: serde_json::Value = serde_json::from_str(&wire.body).unwrap();
            let description = body["error_description"].as_str().unwrap();
            assert!(
                description.chars().all(crate::oauth::error::description_char),
                "{err:?}: {description:?}"
            );
            if err != AuthError::Missing {
                assert!(
                    wire.www_authenticate.contains(&format!("error_description=\"{description}\"")),
                    "{err:?}"
                );
            }
        }
    }

    #[test]
    fn insufficient_scope_names_every_scope() {
        for err in [AuthError::InsufficientScope, AuthError::AppOnly] {
            let wire = err.to_wire(&test_config());
            assert_eq!(wire.status, 403);
            assert!(wire.www_authenticate.contains(r#"error="insufficient_scope""#));
            assert!(wire.www_authenticate.contains(r#"scope="mcp mcp:act""#));
            assert!(wire.www_authenticate.contains("resource_metadata="));
        }
        // A client that has every scope is not told to get one.
        let app_only = AuthError::AppOnly.to_wire(&test_config());
        assert!(!app_only.body.contains("needs the mcp:act scope") && app_only.body.contains("Claude app"));
    }
}

//! OAuth errors and the one place they become wire text: JSON for the token, registration and
//! revocation endpoints (RFC 6749 §5.2, RFC 7591 §3.2.2, RFC 7009 §2.2.1), query parameters for
//! authorization responses (RFC 6749 §4.1.2.1 with RFC 9207 `iss`).

use crate::http::HttpResponse;

/// An OAuth error code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorCode {
    /// A parameter is missing, repeated, malformed or unsupported.
    InvalidRequest,
    /// Client authentication failed (unknown client, wrong secret or method): HTTP 401, which also
    /// tells MCP clients to register again.
    InvalidClient,
    /// The code or refresh token is invalid, expired, used, revoked, or bound to another client
    /// or redirect URI; or the PKCE verifier does not match.
    InvalidGrant,
    /// The client may not use this grant type.
    UnauthorizedClient,
    /// Not `authorization_code` or `refresh_token`.
    UnsupportedGrantType,
    /// Unknown scopes, or more than was granted.
    InvalidScope,
    /// The `resource` is not this server's MCP endpoint (RFC 8707 §2).
    InvalidTarget,
    /// The user said no.
    AccessDenied,
    /// Not `response_type=code`.
    UnsupportedResponseType,
    /// Registration: a redirect URI breaks the policy (RFC 7591 §3.2.2).
    InvalidRedirectUri,
    /// Registration: other metadata is invalid (RFC 7591 §3.2.2).
    InvalidClientMetadata,
    /// Revocation of a token type this server does not have (RFC 7009 §2.2.1).
    UnsupportedTokenType,
    /// A rate limit: HTTP 429 with `Retry-After`.
    TooManyRequests,
    /// Storage or the network failed: HTTP 503, try again.
    TemporarilyUnavailable,
    /// A bug or misconfiguration: HTTP 500.
    ServerError,
}

impl ErrorCode {
    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorCode::InvalidRequest => "invalid_request",
            ErrorCode::InvalidClient => "invalid_client",
            ErrorCode::InvalidGrant => "invalid_grant",
            ErrorCode::UnauthorizedClient => "unauthorized_client",
            ErrorCode::UnsupportedGrantType => "unsupported_grant_type",
            ErrorCode::InvalidScope => "invalid_scope",
            ErrorCode::InvalidTarget => "invalid_target",
            ErrorCode::AccessDenied => "access_denied",
            ErrorCode::UnsupportedResponseType => "unsupported_response_type",
            ErrorCode::InvalidRedirectUri => "invalid_redirect_uri",
            ErrorCode::InvalidClientMetadata => "invalid_client_metadata",
            ErrorCode::UnsupportedTokenType => "unsupported_token_type",
            ErrorCode::TooManyRequests => "too_many_requests",
            ErrorCode::TemporarilyUnavailable => "temporarily_unavailable",
            ErrorCode::ServerError => "server_error",
        }
    }

    /// The HTTP status on the JSON endpoints.
    pub fn status(self) -> u16 {
        match self {
            ErrorCode::InvalidClient => 401,
            ErrorCode::TooManyRequests => 429,
            ErrorCode::TemporarilyUnavailable => 503,
            ErrorCode::ServerError => 500,
            _ => 400,
        }
    }
}

/// An OAuth error with a safe description; `log` carries internal detail for the log line only.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OAuthError {
    /// The code.
    pub code: ErrorCode,
    /// What the client did wrong or should do, safe to show.
    pub description: String,
    /// For 429 and 503: seconds to wait (`Retry-After`, RFC 9110 §10.2.3).
    pub retry_after_secs: Option<u32>,
    /// Internal detail, never sent.
    pub log: Option<String>,
}

impl OAuthError {
    /// An error with a description. RFC 6749 §5.2 and §4.1.2.1 allow only `%x20-21 / %x23-5B /
    /// %x5D-7E` in `error_description` (RFC 7591 §3.2.2 asks for ASCII text too): no `"`, no
    /// `\`, nothing outside printable ASCII, so descriptions are fixed text of ours and never
    /// echo the client's. Checked in debug builds, so every error any native test reaches is.
    pub fn new(code: ErrorCode, description: impl Into<String>) -> Self {
        let description = description.into();
        debug_assert!(description.chars().all(description_char), "error_description {description:?}");
        OAuthError { code, description, retry_after_secs: None, log: None }
    }

    /// Shorthand for `invalid_request`.
    pub fn request(description: impl Into<String>) -> Self {
        OAuthError::new(ErrorCode::InvalidRequest, description)
    }

    /// Shorthand for `invalid_grant`.
    pub fn grant(description: impl Into<String>) -> Self {
        OAuthError::new(ErrorCode::InvalidGrant, description)
    }

    /// Shorthand for `invalid_client`.
    pub fn client(description: impl Into<String>) -> Self {
        OAuthError::new(ErrorCode::InvalidClient, description)
    }

    /// A storage or network failure (a client metadata document that cannot be fetched just
    /// now, too): 503 with `Retry-After` (RFC 9110 §15.6.4, §10.2.3) and the detail logged.
    pub fn unavailable(detail: impl Into<String>) -> Self {
        OAuthError {
            log: Some(detail.into()),
            retry_after_secs: Some(30),
            ..OAuthError::new(ErrorCode::TemporarilyUnavailable, "Briefly unavailable; try again shortly.")
        }
    }

    /// A rate limit.
    pub fn too_many(retry_after_secs: u32) -> Self {
        OAuthError {
            retry_after_secs: Some(retry_after_secs.max(1)),
            ..OAuthError::new(ErrorCode::TooManyRequests, "Too many requests; wait and try again.")
        }
    }

    /// Adds internal detail for the log.
    pub fn logged(mut self, detail: impl Into<String>) -> Self {
        self.log = Some(detail.into());
        self
    }

    /// The JSON error response. Every OAuth JSON response is `no-store` (RFC 6749 §5.1); an
    /// `invalid_client` carries the `WWW-Authenticate` challenge a 401 must have (RFC 6749 §5.2,
    /// RFC 9110 §15.5.2).
    pub fn to_wire(&self) -> HttpResponse {
        let mut response =
            HttpResponse::json(self.code.status(), error_body(self.code.as_str(), &self.description))
                .with("cache-control", "no-store")
                .with("pragma", "no-cache");
        if self.code == ErrorCode::InvalidClient {
            response = response.with("www-authenticate", r#"Basic realm="VibeSell OAuth", charset="UTF-8""#);
        }
        if let Some(secs) = self.retry_after_secs {
            response = response.with("retry-after", secs.to_string());
        }
        response
    }

    /// The query parameters of an error redirect to the client (RFC 6749 §4.1.2.1), with the
    /// request's `state` and the issuer (RFC 9207 §2).
    pub fn redirect_params(&self, state: Option<&str>, issuer: &str) -> Vec<(&'static str, String)> {
        let mut params =
            vec![("error", self.code.as_str().to_owned()), ("error_description", self.description.clone())];
        if let Some(state) = state {
            params.push(("state", state.to_owned()));
        }
        params.push(("iss", issuer.to_owned()));
        params
    }
}

/// An OAuth error's JSON body, `{"error":…,"error_description":…}` (RFC 6749 §5.2, RFC 6750
/// §3). Both members keep to [`description_char`] (codes are ASCII words; descriptions are held
/// to it by `OAuthError::new` and the bearer tests), which JSON never escapes, so the body is
/// written as text; anything else goes through serde_json. Built through a `Value` every time,
/// the body was half of the 401 challenge's routing (bench/README.md, "The wasm's side of a
/// request, timed inside the isolate").
pub fn error_body(code: &str, description: &str) -> String {
    if code.chars().chain(description.chars()).all(description_char) {
        [r#"{"error":""#, code, r#"","error_description":""#, description, r#""}"#].concat()
    } else {
        serde_json::json!({ "error": code, "error_description": description }).to_string()
    }
}

/// Whether `c` may appear in an `error_description` (RFC 6749 §5.2: `%x20-21 / %x23-5B /
/// %x5D-7E`).
pub fn description_char(c: char) -> bool {
    matches!(c, '\x20'..='\x21' | '\x23'..='\x5b' | '\x5d'..='\x7e')
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The body written as text is the JSON serde_json would write, and text it cannot write
    /// safely still goes out escaped.
    #[test]
    fn error_bodies_are_json() {
        let text = error_body("invalid_grant", "The code was already used.");
        assert_eq!(
            text,
            serde_json::json!({"error": "invalid_grant", "error_description": "The code was already used."})
                .to_string()
        );
        let odd: serde_json::Value =
            serde_json::from_str(&error_body("x", "a \"quoted\" \\ line\n")).unwrap();
        assert_eq!(odd["error_description"], "a \"quoted\" \\ line\n");
    }

    #[test]
    fn maps_codes_to_statuses_and_headers() {
        let e = OAuthError::client("Unknown client.").to_wire();
        assert_eq!(e.status, 401);
        assert!(e.header("www-authenticate").unwrap().starts_with("Basic "));
        assert_eq!(e.header("cache-control"), Some("no-store"));
        let body: serde_json::Value = serde_json::from_slice(&e.body).unwrap();
        assert_eq!(
            body,
            serde_json::json!({"error": "invalid_client", "error_description": "Unknown client."})
        );
        assert_eq!(OAuthError::grant("x").to_wire().status, 400);
        let limited = OAuthError::too_many(0).to_wire();
        assert_eq!((limited.status, limited.header("retry-after")), (429, Some("1")));
        let down = OAuthError::unavailable("kv: boom");
        assert_eq!(down.to_wire().status, 503);
        assert!(!String::from_utf8(down.to_wire().body).unwrap().contains("boom"), "details stay in the log");
        let params = OAuthError::new(ErrorCode::AccessDenied, "No.").redirect_params(Some("s"), "http://i");
        assert_eq!(params.last().unwrap(), &("iss", "http://i".to_owned()));
        assert!(params.contains(&("state", "s".to_owned())));
    }

    /// RFC 6749 §5.2, §4.1.2.1: the allowed characters are printable ASCII but `"` and `\`,
    /// and a description with others is a bug that debug builds (every native test) catch.
    #[test]
    fn descriptions_keep_to_the_allowed_characters() {
        assert_eq!((' '..='~').filter(|c| description_char(*c)).count(), 93, "all but \" and \\");
        for bad in ['"', '\\', '\n', '\u{e9}', '\u{202e}'] {
            assert!(!description_char(bad), "{bad:?}");
        }
        let result = std::panic::catch_unwind(|| OAuthError::request("say \"hi\""));
        assert_eq!(result.is_err(), cfg!(debug_assertions));
    }
}

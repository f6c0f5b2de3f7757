//! Redirect URI rules: what a client may register (or list in its metadata document) and how an
//! authorization request's `redirect_uri` is matched against it.
//!
//! Policy (MCP authorization §security: redirect URIs must be https or loopback; RFC 9700 §4.1:
//! exact matching; RFC 8252 §7.3: loopback ports may vary):
//! - `https://…`, or `http://` on a loopback host (`127.0.0.0/8`, `[::1]`, `localhost`);
//! - no fragment, no userinfo, no wildcard, no dot segments, no whitespace or control
//!   characters, at most [`MAX_URI_BYTES`];
//! - a request matches a registered URI when the strings are equal, or when both are loopback
//!   `http` URIs on the same host with the same path and query, whatever the ports.

use crate::uri::Url;

/// Longest redirect URI accepted.
pub const MAX_URI_BYTES: usize = 512;

/// Checks a redirect URI against the policy; `Err` says why, for the client.
pub fn validate(raw: &str) -> Result<(), String> {
    if raw.is_empty() || raw.len() > MAX_URI_BYTES {
        return Err(format!("Redirect URIs must be 1 to {MAX_URI_BYTES} bytes."));
    }
    if raw.chars().any(|c| c.is_control() || c.is_whitespace()) {
        return Err("Redirect URIs must not contain spaces or control characters.".into());
    }
    if raw.contains('#') {
        return Err("Redirect URIs must not have a fragment.".into());
    }
    if raw.contains('*') {
        return Err("Redirect URIs must not contain wildcards.".into());
    }
    if raw.contains('\\') {
        return Err("Redirect URIs must not contain backslashes.".into());
    }
    // A scheme other than http(s) is refused for what it is (`javascript:`, `cursor://`), before
    // the URL is read as one with an authority.
    if let Some((scheme, _)) = raw.split_once(':')
        && !scheme.contains('/')
        && !scheme.eq_ignore_ascii_case("https")
        && !scheme.eq_ignore_ascii_case("http")
    {
        return Err("Redirect URIs must use https (or http on a loopback address).".into());
    }
    let url = Url::parse(raw).ok_or_else(|| {
        let before_query = raw.split(['?', '#']).next().unwrap_or(raw);
        if before_query.split('/').skip(3).any(crate::uri::is_dot_segment) {
            "Redirect URIs must not contain . or .. path segments."
        } else {
            "A redirect URI must be an absolute URL in printable ASCII, without quotes, angle \
             brackets, braces, pipes, carets or backticks (percent-encode them), naming a host."
        }
        .to_owned()
    })?;
    if url.scheme == "http" && !url.host.is_loopback() {
        return Err("Redirect URIs must use https, except on a loopback address.".into());
    }
    if url.has_userinfo {
        return Err("Redirect URIs must not contain a user name or password.".into());
    }
    Ok(())
}

/// Whether a raw redirect URI is on a loopback host (for the consent page's warning).
pub fn is_loopback_uri(raw: &str) -> bool {
    Url::parse(raw).is_some_and(|u| u.host.is_loopback())
}

/// Whether the requested `presented` URI matches the registered one.
pub fn matches(registered: &str, presented: &str) -> bool {
    if validate(presented).is_err() {
        return false;
    }
    if registered == presented {
        return true;
    }
    let (Some(r), Some(p)) = (Url::parse(registered), Url::parse(presented)) else { return false };
    // RFC 8252 §7.3: a native app's loopback listener gets an ephemeral port. Same scheme, same
    // host spelling (no cross-matching of localhost and 127.0.0.1), same path and query.
    r.scheme == "http"
        && p.scheme == "http"
        && r.host.is_loopback()
        && p.host.is_loopback()
        && r.host_str == p.host_str
        && r.path == p.path
        && r.query == p.query
}

/// The origin of an http(s) URI (`https://claude.ai`), for app detection and CSP.
pub fn origin(raw: &str) -> Option<String> {
    Url::parse(raw).filter(|u| u.scheme == "https" || u.scheme == "http").map(|u| u.origin())
}

/// The host (with a non-default port) to show the user.
pub fn display_host(raw: &str) -> String {
    match Url::parse(raw) {
        Some(u) => match u.port {
            Some(port) if !u.host.is_loopback() => format!("{}:{port}", u.host_str),
            _ => u.host_str,
        },
        None => "an unknown site".to_owned(),
    }
}

/// Appends query parameters to a redirect URI, keeping its own query (RFC 6749 §3.1.2).
pub fn with_params(base: &str, params: &[(&str, String)]) -> String {
    let pairs: Vec<(&str, &str)> = params.iter().map(|(k, v)| (*k, v.as_str())).collect();
    crate::uri::with_query(base, &pairs)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_https_and_loopback() {
        for ok in [
            "https://claude.ai/api/mcp/auth_callback",
            "https://claude.com/api/mcp/auth_callback?x=1",
            "http://localhost/callback",
            "http://localhost:6274/oauth/callback",
            "http://127.0.0.1:33418/callback",
            "http://127.9.9.9/cb",
            "http://[::1]:8080/cb",
            "https://app.example.com:8443/cb",
        ] {
            assert!(validate(ok).is_ok(), "{ok}");
        }
    }

    #[test]
    fn refuses_everything_else() {
        for (bad, why) in [
            ("http://example.com/cb", "https"),
            ("http://127.0.0.1.nip.io/cb", "https"),
            ("javascript:alert(1)", "https"),
            ("JAVASCRIPT:alert(1)", "https"),
            ("data:text/html,hi", "https"),
            ("vbscript:x", "https"),
            ("file:///etc/passwd", "https"),
            ("cursor://anysphere.cursor-mcp/oauth/callback", "https"),
            ("https://claude.ai/cb#frag", "fragment"),
            ("https://claude.ai/cb#", "fragment"),
            ("https://user:pw@claude.ai/cb", "user name"),
            ("https://@claude.ai/cb", "user name"),
            ("https://*.claude.ai/cb", "wildcard"),
            ("https://claude.ai/a/../b", "segments"),
            ("https://claude.ai/a/%2e%2e/b", "segments"),
            ("https://claude.ai/./b", "segments"),
            (" https://claude.ai/cb", "spaces"),
            ("https://claude.ai/c b", "spaces"),
            ("https://claude.ai/cb\u{0}", "control"),
            ("https://claude.ai\\@evil.com/", "backslash"),
            ("/relative/cb", "absolute"),
            ("https://claude.ai/cb?x={y}", "percent-encode"),
            ("https://claude.ai/cb?x='y'", "quotes"),
            ("https://2130706433/cb", "host"),
            ("http://127.1/cb", "host"),
            ("https://claude.ai:99999/cb", "absolute"),
            ("", "bytes"),
        ] {
            let err = validate(bad).unwrap_err();
            assert!(err.contains(why), "{bad}: {err}");
        }
        assert!(validate(&format!("https://claude.ai/{}", "a".repeat(600))).is_err());
    }

    #[test]
    fn matches_exactly_or_by_loopback_port() {
        let claude = "https://claude.ai/api/mcp/auth_callback";
        assert!(matches(claude, claude));
        for bad in [
            "https://claude.ai/api/mcp/auth_callback/",
            "https://CLAUDE.ai/api/mcp/auth_callback",
            "https://claude.ai/api/mcp/auth_callback?x=1",
            "https://claude.ai:443/api/mcp/auth_callback",
            "https://claude.ai.evil.com/api/mcp/auth_callback",
            "https://claude.ai/api/mcp/auth_callback#x",
        ] {
            assert!(!matches(claude, bad), "{bad}");
        }
        assert!(matches("http://localhost/callback", "http://localhost:51234/callback"));
        assert!(matches("http://127.0.0.1:3000/callback", "http://127.0.0.1:4000/callback"));
        assert!(!matches("http://127.0.0.1/callback", "http://localhost:4000/callback"), "no cross-matching");
        assert!(!matches("http://127.0.0.1/callback", "http://127.0.0.1:4000/other"));
        assert!(!matches("http://127.0.0.1/callback", "http://127.0.0.1:4000/callback?x=1"));
        assert!(!matches("https://app.example.com:1/cb", "https://app.example.com:2/cb"), "only loopback");
    }

    #[test]
    fn derives_origins_hosts_and_params() {
        assert_eq!(origin("https://claude.ai/api/mcp/auth_callback").as_deref(), Some("https://claude.ai"));
        assert_eq!(origin("http://127.0.0.1:5/cb").as_deref(), Some("http://127.0.0.1:5"));
        assert_eq!(display_host("https://app.example.com:8443/cb"), "app.example.com:8443");
        assert_eq!(display_host("http://127.0.0.1:5/cb"), "127.0.0.1");
        assert_eq!(
            with_params("https://c.example/cb?a=1", &[("code", "x y".into()), ("iss", "http://i".into())]),
            "https://c.example/cb?a=1&code=x+y&iss=http%3A%2F%2Fi"
        );
    }
}

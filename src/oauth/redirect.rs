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

use crate::urls::{self, Misread, Url};

/// Longest redirect URI accepted.
pub const MAX_URI_BYTES: usize = 512;

/// Checks a redirect URI against the policy; `Err` says why, for the client.
pub fn validate(raw: &str) -> Result<(), String> {
    validated(raw).map(drop)
}

fn validated(raw: &str) -> Result<Url, String> {
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
    let url = urls::read(raw).map_err(|why| {
        match why {
            Misread::Userinfo => "Redirect URIs must not contain a user name or password.",
            Misread::DotSegment => "Redirect URIs must not contain . or .. path segments.",
            Misread::Host => {
                "A redirect URI's host must be written as browsers read it: a domain name, or an IP \
                 address in its usual form (127.0.0.1, [::1])."
            }
            Misread::NotAUrl | Misread::Port | Misread::Rewritten => {
                "A redirect URI must be an absolute URL in printable ASCII, without quotes, angle \
                 brackets, braces, pipes, carets or backticks (percent-encode them), naming a host."
            }
        }
        .to_owned()
    })?;
    if url.scheme() == "http" && !urls::is_loopback(url.host()) {
        return Err("Redirect URIs must use https, except on a loopback address.".into());
    }
    Ok(url)
}

/// Whether a raw redirect URI is on a loopback host (for the consent page's warning).
pub fn is_loopback_uri(raw: &str) -> bool {
    urls::read(raw).is_ok_and(|u| urls::is_loopback(u.host()))
}

/// Whether the requested `presented` URI matches the registered one.
pub fn matches(registered: &str, presented: &str) -> bool {
    let Ok(p) = validated(presented) else { return false };
    if registered == presented {
        return true;
    }
    let Ok(r) = urls::read(registered) else { return false };
    // RFC 8252 §7.3: a native app's loopback listener gets an ephemeral port. Same scheme, same
    // host spelling (no cross-matching of localhost and 127.0.0.1), same path and query.
    r.scheme() == "http"
        && p.scheme() == "http"
        && urls::is_loopback(r.host())
        && r.host_str() == p.host_str()
        && r.path() == p.path()
        && r.query() == p.query()
}

/// The origin of an http(s) URI (`https://claude.ai`), for app detection and CSP.
pub fn origin(raw: &str) -> Option<String> {
    urls::read(raw).ok().map(|u| u.origin().ascii_serialization())
}

/// The host (with a non-default port) to show the user: the name as the browser will go to it,
/// an internationalised one in its `xn--` form, so a look-alike name shows as what it is.
pub fn display_host(raw: &str) -> String {
    let Ok(u) = urls::read(raw) else { return "an unknown site".to_owned() };
    let host = u.host_str().unwrap_or_default();
    match u.port() {
        Some(port) if !urls::is_loopback(u.host()) => format!("{host}:{port}"),
        _ => host.to_owned(),
    }
}

/// Appends query parameters to a redirect URI, keeping its own query (RFC 6749 §3.1.2); `None`
/// if it is not a URL (a stored redirect URI was validated, so it always is).
pub fn with_params(base: &str, params: &[(&str, String)]) -> Option<String> {
    let pairs: Vec<(&str, &str)> = params.iter().map(|(k, v)| (*k, v.as_str())).collect();
    urls::with_query(base, &pairs)
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
            display_host("https://xn--cude-mhe.ai/cb"),
            "xn--cude-mhe.ai",
            "a look-alike shows as punycode"
        );
        assert_eq!(display_host("https://claude.ai%2f/cb"), "an unknown site");
        assert_eq!(
            with_params("https://c.example/cb?a=1", &[("code", "x y".into()), ("iss", "http://i".into())])
                .as_deref(),
            Some("https://c.example/cb?a=1&code=x+y&iss=http%3A%2F%2Fi")
        );
    }

    /// RFC 9700 §4.1.3 (and RFC 6819 §4.2.4, §5.2.3.5; OAuth 2.1 §7.12.1): a redirect URI that
    /// differs from the registered one in any way, or that browsers would read otherwise than
    /// written, is refused at registration and never matches at authorization.
    #[test]
    fn refuses_the_tricks_of_rfc_9700() {
        let claude = "https://claude.ai/api/mcp/auth_callback";
        let long = format!("{claude}?{}", "a".repeat(MAX_URI_BYTES));
        let refused = [
            // Another host behind userinfo, either way round.
            "https://claude.ai@evil.example/api/mcp/auth_callback",
            "https://evil.example@claude.ai/api/mcp/auth_callback",
            "https://claude.ai:443@evil.example/api/mcp/auth_callback",
            "https://claude.ai%40evil.example/api/mcp/auth_callback",
            // Backslashes, which browsers read as slashes.
            "https://evil.example\\@claude.ai/api/mcp/auth_callback",
            "https://claude.ai\\evil.example/api/mcp/auth_callback",
            "https://claude.ai/api\\mcp/auth_callback",
            // A path that browsers resolve to another one.
            "https://claude.ai/api/mcp/auth_callback/../../../evil",
            "https://claude.ai/api/mcp/evil/%2e%2e/auth_callback",
            "https://claude.ai/api/./mcp/auth_callback",
            // A host written otherwise than browsers read it.
            "https://cl%61ude.ai/api/mcp/auth_callback",
            "https://claude.ai%2f.evil.example/api/mcp/auth_callback",
            "https://cl\u{430}ude.ai/api/mcp/auth_callback",
            "https://claude.ai:/api/mcp/auth_callback",
            "https://claude.ai:0443/api/mcp/auth_callback",
            "https:claude.ai/api/mcp/auth_callback",
            "https:/claude.ai/api/mcp/auth_callback",
            "//claude.ai/api/mcp/auth_callback",
            // Fragments, which would carry the code to script on the page.
            "https://claude.ai/api/mcp/auth_callback#@evil.example",
            "https://claude.ai/api/mcp/auth_callback#",
            // Schemes that run script or are not the web.
            "javascript:alert(document.domain)//https://claude.ai/api/mcp/auth_callback",
            "javascript://claude.ai/%0aalert(1)",
            "data:text/html,<script>alert(1)</script>",
            "http://claude.ai/api/mcp/auth_callback",
            // Header injection and whitespace.
            "https://claude.ai/api/mcp/auth_callback\r\nLocation: https://evil.example",
            "https://claude.ai/api/mcp/auth_callback\n",
            "https://claude.ai/api/mcp/auth_callback ",
            " https://claude.ai/api/mcp/auth_callback",
            "https://claude.ai/api/mcp/auth_callback\t",
            "https://claude.ai/api/mcp/auth_callback\u{a0}",
            "https://claude.ai/api/mcp/auth_callback\u{200b}",
            // Wildcards and over-long URIs.
            "https://*.claude.ai/api/mcp/auth_callback",
            &long,
        ];
        for bad in refused {
            assert!(validate(bad).is_err(), "registered: {bad}");
            assert!(!matches(claude, bad), "presented: {bad}");
            assert!(!matches(bad, bad), "presented as stored: {bad}");
        }
        let elsewhere = [
            // Open redirectors through path, query or trailing-slash differences.
            "https://claude.ai/api/mcp/auth_callback/",
            "https://claude.ai/api/mcp/auth_callback/evil",
            "https://claude.ai/api/mcp/auth_callbackx",
            "https://claude.ai/api/mcp/auth_callback?",
            "https://claude.ai/api/mcp/auth_callback?next=https://evil.example",
            "https://claude.ai/api/mcp/auth_callback%2F..%2F..%2Fevil",
            "https://claude.ai/api/mcp/auth_callback%0d%0a",
            "https://claude.ai/api/mcp/%61uth_callback",
            "https://claude.ai/API/mcp/auth_callback",
            "https://claude.ai//api/mcp/auth_callback",
            "https://evil.example/https://claude.ai/api/mcp/auth_callback",
            // Letter case, a trailing dot, another port (also the default one written out).
            "HTTPS://claude.ai/api/mcp/auth_callback",
            "https://Claude.AI/api/mcp/auth_callback",
            "https://claude.ai./api/mcp/auth_callback",
            "https://claude.ai:443/api/mcp/auth_callback",
            "https://claude.ai:8443/api/mcp/auth_callback",
            // Other hosts, a look-alike in punycode among them.
            "https://claude.ai.evil.example/api/mcp/auth_callback",
            "https://evilclaude.ai/api/mcp/auth_callback",
            "https://xn--cude-mhe.ai/api/mcp/auth_callback",
            "https://[2001:db8::1]/api/mcp/auth_callback",
        ];
        for other in elsewhere {
            assert!(validate(other).is_ok(), "{other}: {:?}", validate(other));
            assert!(!matches(claude, other), "{other}");
        }
        assert!(matches(claude, claude));
    }

    /// The loopback exception (RFC 8252 §7.3) lets only the port vary, on an address browsers
    /// read as loopback and written as registered.
    #[test]
    fn loopback_ports_vary_and_nothing_else() {
        let registered = "http://127.0.0.1/callback";
        assert!(matches(registered, "http://127.0.0.1:4000/callback"));
        assert!(matches(registered, "http://127.0.0.1:80/callback"));
        assert!(matches("http://[::1]/callback", "http://[::1]:4000/callback"));
        for bad in [
            "http://127.1:4000/callback",
            "http://2130706433:4000/callback",
            "http://0x7f.0.0.1:4000/callback",
            "http://0177.0.0.1:4000/callback",
            "http://127.0.0.1.:4000/callback",
            "http://localhost.:4000/callback",
            "http://127.0.0.1.evil.example:4000/callback",
            "http://user@127.0.0.1:4000/callback",
            "http://[::ffff:127.0.0.1]:4000/callback",
            "http://[0:0:0:0:0:0:0:1]:4000/callback",
            "http://169.254.169.254:4000/callback",
        ] {
            assert!(validate(bad).is_err(), "{bad}");
            assert!(!matches(registered, bad), "{bad}");
        }
        for other in [
            "http://[::1]:4000/callback",
            "http://localhost:4000/callback",
            "http://127.0.0.2:4000/callback",
            "http://127.0.0.1:4000/callback/",
            "http://127.0.0.1:4000/Callback",
            "http://127.0.0.1:4000/callback?x",
            "https://127.0.0.1:4000/callback",
        ] {
            assert!(validate(other).is_ok(), "{other}");
            assert!(!matches(registered, other), "{other}");
        }
    }
}

//! http(s) URLs as browsers read them, for the authorization server's checks of redirect URIs, client
//! ids, resources, the issuer and providers' endpoints.
//!
//! The `url` crate (the WHATWG URL parser that browsers follow) reads every URL. On top of it
//! one rule: the server judges only a URL that the parser reads as written. A URL the parser
//! would rewrite into another one (`127.1` into `127.0.0.1`, `ex%61mple.com` into
//! `example.com`, `/a/../b` into `/b`, `https:host` into `https://host/`, `a\b` into `a/b`) is
//! refused rather than compared, registered or fetched under a spelling nobody reads (RFC 9700
//! §4.1.3: redirect URIs are compared as strings, so the string must mean what it says). The
//! allowed differences are the ones a URL keeps its meaning through: the letter case of scheme
//! and host, the scheme's default port written out, and an empty path. Anything refused is a
//! URL the server does not need to accept: these checks fail closed.

use url::Position;
pub use url::{Host, Url};

/// Why a URL is not read as written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum Misread {
    /// Not an absolute `http(s)://host…` URL in printable ASCII, or one with characters that
    /// browsers percent-encode or read as a separator (WHATWG URL §4.4: the path, special-query
    /// and userinfo percent-encode sets; `\` is a slash in special URLs).
    #[error("the URL is not an absolute http(s) URL in printable ASCII naming a host")]
    NotAUrl,
    /// A `user:password@` part, even an empty one, which browsers drop or show instead of the
    /// host (`https://good.example@evil.example/`).
    #[error("the URL has a user name or password")]
    Userinfo,
    /// A host the parser reads as another one: an IPv4 address not in four decimal parts, a
    /// percent-encoded or otherwise rewritten name, an IPv6 address not in its shortest form; or
    /// a name with an empty label.
    #[error("the URL's host is not written the way browsers read it")]
    Host,
    /// An empty or rewritten port.
    #[error("the URL's port is not written the way browsers read it")]
    Port,
    /// A `.` or `..` path segment (also percent-encoded), which browsers resolve away.
    #[error("the URL has . or .. path segments")]
    DotSegment,
    /// A path, query or fragment the parser rewrites.
    #[error("the URL's path, query or fragment is not written the way browsers read it")]
    Rewritten,
}

/// Printable ASCII that browsers percent-encode, strip or read as a separator in a URL.
const FORBIDDEN: &[u8] = b"\\\"'<>^`{|}";

/// Reads `raw` with the WHATWG parser, refusing a URL the parser would read otherwise than
/// written (module documentation).
pub fn read(raw: &str) -> Result<Url, Misread> {
    if !raw.bytes().all(|b| b.is_ascii_graphic() && !FORBIDDEN.contains(&b)) {
        return Err(Misread::NotAUrl);
    }
    let url = Url::parse(raw).map_err(|_| Misread::NotAUrl)?;
    let scheme = url.scheme();
    if scheme != "https" && scheme != "http" {
        return Err(Misread::NotAUrl);
    }
    let rest = raw
        .get(..scheme.len())
        .filter(|s| s.eq_ignore_ascii_case(scheme))
        .and_then(|_| raw[scheme.len()..].strip_prefix("://"))
        .ok_or(Misread::NotAUrl)?;
    let host = url.host_str().filter(|h| !h.is_empty()).ok_or(Misread::NotAUrl)?;
    // A name with an empty label (`a..b`, `.`) names no host DNS can answer for.
    if let Some(Host::Domain(d)) = url.host()
        && d.strip_suffix('.').unwrap_or(d).split('.').any(str::is_empty)
    {
        return Err(Misread::Host);
    }
    let (authority, tail) = rest.split_at(rest.find(['/', '?', '#']).unwrap_or(rest.len()));
    if authority.contains('@') {
        return Err(Misread::Userinfo);
    }
    let written_port = match authority.get(..host.len()) {
        Some(h) if h.eq_ignore_ascii_case(host) => &authority[host.len()..],
        _ => return Err(Misread::Host),
    };
    if let Some(port) = written_port.strip_prefix(':') {
        if url.port_or_known_default().is_none_or(|read| port != read.to_string()) {
            return Err(Misread::Port);
        }
    } else if !written_port.is_empty() {
        return Err(Misread::Host);
    }
    let read_tail = &url[Position::BeforePath..];
    let same_tail = tail == read_tail || (url.path() == "/" && read_tail.strip_prefix('/') == Some(tail));
    if !same_tail {
        let path = tail.split(['?', '#']).next().unwrap_or(tail);
        return Err(if path.split('/').any(is_dot_segment) {
            Misread::DotSegment
        } else {
            Misread::Rewritten
        });
    }
    Ok(url)
}

/// Whether a path segment is `.` or `..`, also percent-encoded (WHATWG URL §4.4, "single-dot
/// URL path segment" and "double-dot URL path segment").
fn is_dot_segment(segment: &str) -> bool {
    matches!(segment.to_ascii_lowercase().as_str(), "." | ".." | "%2e" | ".%2e" | "%2e." | "%2e%2e")
}

/// Whether a host is `localhost`, in `127.0.0.0/8`, or `::1`.
pub fn is_loopback(host: Option<Host<&str>>) -> bool {
    match host {
        Some(Host::Domain(d)) => d == "localhost",
        Some(Host::Ipv4(ip)) => ip.is_loopback(),
        Some(Host::Ipv6(ip)) => ip.is_loopback(),
        None => false,
    }
}

/// `base` with form-encoded `pairs` added to its query, after its own parameters (RFC 6749
/// §3.1.2), its fragment kept last; `None` if `base` is not a URL.
pub fn with_query(base: &str, pairs: &[(&str, &str)]) -> Option<String> {
    let mut url = Url::parse(base).ok()?;
    url.query_pairs_mut().extend_pairs(pairs);
    Some(url.into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_what_is_written() {
        let u = read("HTTPS://App.Example.com:8443/a/b?x=1&y#top").unwrap();
        assert_eq!((u.scheme(), u.host_str(), u.port()), ("https", Some("app.example.com"), Some(8443)));
        assert_eq!((u.path(), u.query(), u.fragment()), ("/a/b", Some("x=1&y"), Some("top")));
        assert_eq!(u.origin().ascii_serialization(), "https://app.example.com:8443");

        let u = read("https://claude.ai:443").unwrap();
        assert_eq!((u.port(), u.path(), u.query()), (None, "/", None), "default port and empty path");
        assert_eq!(
            read("http://127.0.0.1:80/cb").unwrap().origin().ascii_serialization(),
            "http://127.0.0.1"
        );
        assert_eq!(read("https://claude.ai?x").unwrap().query(), Some("x"));
        let v6 = read("http://[::1]:8080/cb").unwrap();
        assert_eq!((v6.host_str(), v6.port()), (Some("[::1]"), Some(8080)));
        assert!(is_loopback(v6.host()));
        assert!(read("https://example.com./cb").is_ok(), "a trailing dot is a domain");
        assert!(read("https://1password.com/cb").is_ok(), "digits in a label");
        assert!(read("https://a_b.example/").is_ok());
        assert!(read("https://XN--Bcher-kva.example/").is_ok(), "punycode, read without Unicode tables");
        assert!(read("https://claude.ai/a?next=/../b").is_ok(), "only the path's segments count");
        assert!(read("https://claude.ai/a;b=c/~u/!$&()*+,;=:@").is_ok());
        assert!(read("https://claude.ai/%41%zz?q=%").is_ok(), "percent signs are kept as written");
    }

    #[test]
    fn refuses_what_a_browser_would_read_otherwise() {
        for (bad, why) in [
            ("https://claude.ai\\@evil.com/", Misread::NotAUrl),
            ("https://claude.ai/c b", Misread::NotAUrl),
            ("https://claude.ai/\u{e9}", Misread::NotAUrl),
            ("https://cl\u{430}ude.ai/", Misread::NotAUrl),
            ("https://claude.ai/<x>", Misread::NotAUrl),
            ("https://claude.ai/cb\r\n", Misread::NotAUrl),
            ("https:claude.ai/cb", Misread::NotAUrl),
            ("https:/claude.ai/cb", Misread::NotAUrl),
            ("//claude.ai/cb", Misread::NotAUrl),
            ("/cb", Misread::NotAUrl),
            ("https://", Misread::NotAUrl),
            ("https:///cb", Misread::Host),
            ("javascript://claude.ai/%0aalert(1)", Misread::NotAUrl),
            ("ftp://claude.ai/", Misread::NotAUrl),
            ("https://u:p@claude.ai/", Misread::Userinfo),
            ("https://@claude.ai/", Misread::Userinfo),
            ("https://claude.ai@evil.example/", Misread::Userinfo),
            ("https://ex%61mple.com/", Misread::Host),
            ("http://2130706433/", Misread::Host),
            ("http://0x7f.1/", Misread::Host),
            ("http://0x7f000001/", Misread::Host),
            ("http://127.1/", Misread::Host),
            ("http://127.0.0.01/", Misread::Host),
            ("http://0177.0.0.1/", Misread::Host),
            ("http://127.0.0.1./", Misread::Host),
            ("http://[0:0:0:0:0:0:0:1]/", Misread::Host),
            ("http://[::ffff:127.0.0.1]/", Misread::Host),
            ("https://a..b/", Misread::Host),
            ("https://./", Misread::Host),
            ("https://claude.ai:/cb", Misread::Port),
            ("https://claude.ai:0443/cb", Misread::Port),
            ("https://claude.ai/a/../b", Misread::DotSegment),
            ("https://claude.ai/a/%2E%2e/b", Misread::DotSegment),
            ("https://claude.ai/./b", Misread::DotSegment),
            ("https://claude.ai/a/..", Misread::DotSegment),
        ] {
            assert_eq!(read(bad).map(String::from), Err(why), "{bad}");
        }
        for bad in
            ["http://256.0.0.1/", "http://1.2.3.4.5/", "https://claude.ai:65536/cb", "https://claude.ai:+1/"]
        {
            assert!(read(bad).is_err(), "{bad}");
        }
    }

    /// Every URL `read` accepts is one the parser serializes back to the same text, but for the
    /// letter case of scheme and host, a default port and an empty path.
    #[test]
    fn accepts_only_what_the_parser_writes_back() {
        let (mut accepted, mut total) = (0, 0);
        for scheme in ["https", "HTTP", "http"] {
            for userinfo in ["", "u@", "@"] {
                for host in [
                    "claude.ai",
                    "Claude.AI",
                    "example.com.",
                    "localhost",
                    "127.0.0.1",
                    "[::1]",
                    "[2001:db8::1]",
                    "[::ffff:1.2.3.4]",
                    "1.2.3",
                    "0x7f.0.0.1",
                    "4294967295",
                    "xn--bcher-kva.example",
                    "ex%41mple.com",
                    "a..b",
                ] {
                    for port in ["", ":443", ":80", ":8080", ":"] {
                        for rest in [
                            "",
                            "/",
                            "/cb",
                            "/a/b/",
                            "/%2e%2e/x",
                            "?x=1&y=%20",
                            "/cb?",
                            "/cb#f",
                            "#a#b",
                            "?a?b",
                        ] {
                            let raw = format!("{scheme}://{userinfo}{host}{port}{rest}");
                            total += 1;
                            let Ok(url) = read(&raw) else { continue };
                            accepted += 1;
                            let default = if scheme.eq_ignore_ascii_case("https") { ":443" } else { ":80" };
                            let mut expected = raw.to_ascii_lowercase();
                            if port == default {
                                expected = expected.replacen(default, "", 1);
                            }
                            if rest.is_empty() || rest.starts_with(['?', '#']) {
                                expected.insert(expected.len() - rest.len(), '/');
                            }
                            assert_eq!(url.as_str().to_ascii_lowercase(), expected, "{raw}");
                        }
                    }
                }
            }
        }
        assert!(accepted > total / 10, "{accepted} of {total}");
    }

    #[test]
    fn adds_query_pairs() {
        let pairs = [("code", "x y"), ("iss", "http://i")];
        let with = |base: &str, n: usize| with_query(base, &pairs[..n]).unwrap();
        assert_eq!(with("https://c.example/cb", 2), "https://c.example/cb?code=x+y&iss=http%3A%2F%2Fi");
        assert_eq!(with("https://c.example/cb?a=1", 1), "https://c.example/cb?a=1&code=x+y");
        assert_eq!(with("https://c.example/cb?", 1), "https://c.example/cb?code=x+y");
        assert_eq!(with("https://c.example/cb?a#f", 1), "https://c.example/cb?a&code=x+y#f");
        assert_eq!(with_query("not a url", &pairs), None);
    }
}

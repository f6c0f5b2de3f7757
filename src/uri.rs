//! A strict reader of absolute `http` and `https` URLs, for the OAuth server's checks of redirect
//! URIs, client ids, resources and providers' endpoints.
//!
//! It accepts a subset of what browsers accept, and only where both agree on the meaning:
//! `scheme://[userinfo@]host[:port][/path][?query][#fragment]` (RFC 3986 §3) in printable ASCII,
//! with no backslash and no character a browser would percent-encode or strip (WHATWG URL §4.4
//! would read `https://a.example\@b.example/` as host `a.example`; here it is refused). A host is
//! a domain of letters, digits, `-`, `_` and `.` (an internationalised one in its `xn--` form),
//! an IPv4 address in four decimal parts, or a bracketed IPv6 address. A host a browser would
//! read as an IPv4 address in another form (`2130706433`, `0x7f.1`, `127.1`) is refused rather
//! than taken for a domain name. Anything refused is a URL the server does not need to accept:
//! these checks fail closed. (Smaller than the WHATWG parser of the `url` crate, which carried
//! about 15 KB gzip into the Worker for these few checks: docs/scale.md, "Size".)

use std::fmt::Write as _;

/// A parsed absolute URL, borrowing the text it was read from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Url<'a> {
    /// The scheme, lower-cased (`https`).
    pub scheme: String,
    /// Whether the authority had a `userinfo@` part, even an empty one.
    pub has_userinfo: bool,
    /// The host, a domain lower-cased.
    pub host: Host,
    /// The host as written (IPv6 with its brackets), lower-cased.
    pub host_str: String,
    /// The port, `None` when absent or the scheme's default (as browsers read it).
    pub port: Option<u16>,
    /// The path as written, `/` when empty.
    pub path: &'a str,
    /// The query without its `?`, as written.
    pub query: Option<&'a str>,
    /// The fragment without its `#`, as written.
    pub fragment: Option<&'a str>,
}

/// A URL's host.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Host {
    /// A domain name, lower-cased, with its trailing dot if it had one.
    Domain(String),
    /// A dotted-quad IPv4 address.
    Ipv4([u8; 4]),
    /// A bracketed IPv6 address, by 16-bit groups.
    Ipv6([u16; 8]),
}

impl Host {
    /// Whether the host is `localhost`, in `127.0.0.0/8`, or `::1`.
    pub fn is_loopback(&self) -> bool {
        match self {
            Host::Domain(d) => d == "localhost",
            Host::Ipv4(ip) => ip[0] == 127,
            Host::Ipv6(ip) => *ip == [0, 0, 0, 0, 0, 0, 0, 1],
        }
    }

    /// Reads a host: a domain, dotted-quad IPv4, or `[IPv6]`.
    pub fn parse(raw: &str) -> Option<Host> {
        if let Some(inner) = raw.strip_prefix('[') {
            return parse_ipv6(inner.strip_suffix(']')?).map(Host::Ipv6);
        }
        let lower = raw.to_ascii_lowercase();
        let labels = lower.strip_suffix('.').unwrap_or(&lower);
        if labels.is_empty()
            || !lower.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
            || labels.split('.').any(str::is_empty)
        {
            return None;
        }
        // WHATWG URL §3.5 reads a host whose last label is numeric (or `0x…`) as an IPv4 address.
        let last = labels.rsplit('.').next().unwrap_or(labels);
        if last.bytes().all(|b| b.is_ascii_digit()) || last.starts_with("0x") {
            // Only in the form a browser also writes it back (no trailing dot).
            return parse_ipv4(&lower).map(Host::Ipv4);
        }
        Some(Host::Domain(lower))
    }
}

impl<'a> Url<'a> {
    /// Parses an absolute URL with an authority (`scheme://host…`); `None` for anything else.
    pub fn parse(raw: &'a str) -> Option<Url<'a>> {
        if !raw.bytes().all(|b| b.is_ascii_graphic() && !FORBIDDEN.contains(&b)) {
            return None;
        }
        let (scheme, rest) = raw.split_once("://")?;
        let mut chars = scheme.bytes();
        if !chars.next().is_some_and(|b| b.is_ascii_alphabetic())
            || !chars.all(|b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'-' | b'.'))
        {
            return None;
        }
        let scheme = scheme.to_ascii_lowercase();
        let (rest, fragment) = match rest.split_once('#') {
            Some((r, f)) => (r, Some(f)),
            None => (rest, None),
        };
        let (rest, query) = match rest.split_once('?') {
            Some((r, q)) => (r, Some(q)),
            None => (rest, None),
        };
        let (authority, path) = rest.find('/').map_or((rest, "/"), |i| (&rest[..i], &rest[i..]));
        // A browser resolves `.` and `..` segments (also percent-encoded) into another path than
        // the one written and compared.
        if path.split('/').any(is_dot_segment) {
            return None;
        }
        let (has_userinfo, hostport) = match authority.rsplit_once('@') {
            Some((_, hp)) => (true, hp),
            None => (false, authority),
        };
        // The port follows the last `:` outside an IPv6 literal's brackets.
        let (host_raw, port_raw) = match hostport.rfind(':') {
            Some(i) if !hostport[i..].contains(']') => (&hostport[..i], Some(&hostport[i + 1..])),
            _ => (hostport, None),
        };
        let host = Host::parse(host_raw)?;
        let port = match port_raw {
            None => None,
            Some(p) if p.is_empty() || p.len() > 5 || !p.bytes().all(|b| b.is_ascii_digit()) => return None,
            Some(p) => Some(u16::try_from(p.bytes().fold(0u32, |n, b| n * 10 + u32::from(b - b'0'))).ok()?),
        };
        let default = match scheme.as_str() {
            "https" => Some(443),
            "http" => Some(80),
            _ => None,
        };
        Some(Url {
            port: port.filter(|p| Some(*p) != default),
            scheme,
            has_userinfo,
            host,
            host_str: host_raw.to_ascii_lowercase(),
            path,
            query,
            fragment,
        })
    }

    /// `scheme://host[:port]`, the port only when not the scheme's default (RFC 6454 §6.2).
    pub fn origin(&self) -> String {
        let mut out = format!("{}://{}", self.scheme, self.host_str);
        if let Some(port) = self.port {
            let _ = write!(out, ":{port}");
        }
        out
    }
}

/// Whether a path segment is `.` or `..`, also percent-encoded (WHATWG URL §4.4, "single-dot
/// URL path segment").
pub fn is_dot_segment(segment: &str) -> bool {
    let s = segment.as_bytes();
    let dot = |i: usize, len: usize| match len {
        1 => s[i] == b'.',
        _ => s[i..i + 3].eq_ignore_ascii_case(b"%2e"),
    };
    match s.len() {
        1 => dot(0, 1),
        2 => dot(0, 1) && dot(1, 1),
        3 => dot(0, 3),
        4 => (dot(0, 1) && dot(1, 3)) || (dot(0, 3) && dot(3, 1)),
        6 => dot(0, 3) && dot(3, 3),
        _ => false,
    }
}

/// `base` with form-encoded `pairs` added to its query (after its own parameters, RFC 6749
/// §3.1.2), its fragment kept last.
pub fn with_query(base: &str, pairs: &[(&str, &str)]) -> String {
    let (head, fragment) = base.split_once('#').map_or((base, None), |(h, f)| (h, Some(f)));
    let separator = match head.find('?') {
        None => "?",
        Some(_) if head.ends_with(['?', '&']) => "",
        Some(_) => "&",
    };
    let mut out = format!("{head}{separator}{}", crate::form::encode(pairs));
    if let Some(fragment) = fragment {
        out.push('#');
        out.push_str(fragment);
    }
    out
}

/// Printable ASCII that browsers percent-encode, strip or read as a separator in a URL (WHATWG
/// URL §4.4: the path, special-query and userinfo percent-encode sets; `\` is a slash in
/// special URLs).
const FORBIDDEN: &[u8] = b"\\\"'<>^`{|}";

fn parse_ipv4(raw: &str) -> Option<[u8; 4]> {
    let mut out = [0u8; 4];
    let mut parts = raw.split('.');
    for slot in &mut out {
        let part = parts.next()?;
        // Decimal only, no leading zero (which a browser would read as octal).
        if part.is_empty() || part.len() > 3 || (part.len() > 1 && part.starts_with('0')) {
            return None;
        }
        let n =
            part.bytes().try_fold(0u16, |n, b| b.is_ascii_digit().then(|| n * 10 + u16::from(b - b'0')))?;
        *slot = u8::try_from(n).ok()?;
    }
    parts.next().is_none().then_some(out)
}

/// RFC 4291 §2.2 forms: eight groups, one `::`, and a trailing dotted-quad.
fn parse_ipv6(raw: &str) -> Option<[u16; 8]> {
    let (head, tail) = match raw.split_once("::") {
        Some((h, t)) => (h, Some(t)),
        None => (raw, None),
    };
    let groups = |s: &str| -> Option<Vec<u16>> {
        if s.is_empty() {
            return Some(Vec::new());
        }
        let mut out = Vec::new();
        let parts: Vec<&str> = s.split(':').collect();
        for (i, part) in parts.iter().enumerate() {
            if i + 1 == parts.len() && part.contains('.') {
                let v4 = parse_ipv4(part)?;
                out.push(u16::from_be_bytes([v4[0], v4[1]]));
                out.push(u16::from_be_bytes([v4[2], v4[3]]));
            } else if part.is_empty() || part.len() > 4 || !part.bytes().all(|b| b.is_ascii_hexdigit()) {
                return None;
            } else {
                out.push(u16::from_str_radix(part, 16).ok()?);
            }
        }
        Some(out)
    };
    let head = groups(head)?;
    let mut out = [0u16; 8];
    match tail {
        None if head.len() == 8 => out.copy_from_slice(&head),
        Some(tail) => {
            let tail = groups(tail)?;
            if head.len() + tail.len() > 7 {
                return None;
            }
            out[..head.len()].copy_from_slice(&head);
            out[8 - tail.len()..].copy_from_slice(&tail);
        }
        None => return None,
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_parts() {
        let u = Url::parse("HTTPS://App.Example.com:8443/a/b?x=1&y#top").unwrap();
        assert_eq!(u.scheme, "https");
        assert_eq!(u.host, Host::Domain("app.example.com".into()));
        assert_eq!(u.host_str, "app.example.com");
        assert_eq!(u.port, Some(8443));
        assert_eq!((u.path, u.query, u.fragment), ("/a/b", Some("x=1&y"), Some("top")));
        assert_eq!(u.origin(), "https://app.example.com:8443");
        assert!(!u.has_userinfo);

        let u = Url::parse("https://claude.ai:443").unwrap();
        assert_eq!((u.port, u.path, u.query), (None, "/", None), "default port and empty path");
        assert_eq!(u.origin(), "https://claude.ai");
        assert!(Url::parse("https://@claude.ai/").unwrap().has_userinfo);
        assert!(Url::parse("https://u:p@claude.ai/").unwrap().has_userinfo);
        assert_eq!(Url::parse("http://127.0.0.1:80/cb").unwrap().origin(), "http://127.0.0.1");
    }

    #[test]
    fn reads_addresses() {
        assert_eq!(Url::parse("http://127.0.0.1:5/").unwrap().host, Host::Ipv4([127, 0, 0, 1]));
        let v6 = Url::parse("http://[::1]:8080/cb").unwrap();
        assert_eq!(
            (v6.host.clone(), v6.host_str.as_str(), v6.port),
            (Host::Ipv6([0, 0, 0, 0, 0, 0, 0, 1]), "[::1]", Some(8080))
        );
        assert!(v6.host.is_loopback());
        assert_eq!(
            Host::parse("[2001:DB8::ff00:42:8329]"),
            Some(Host::Ipv6([0x2001, 0xdb8, 0, 0, 0, 0xff00, 0x42, 0x8329]))
        );
        assert_eq!(
            Host::parse("[::ffff:192.0.2.1]"),
            Some(Host::Ipv6([0, 0, 0, 0, 0, 0xffff, 0xc000, 0x201]))
        );
        assert_eq!(Host::parse("[1:2:3:4:5:6:7:8]"), Some(Host::Ipv6([1, 2, 3, 4, 5, 6, 7, 8])));
        assert_eq!(Host::parse("[1::]"), Some(Host::Ipv6([1, 0, 0, 0, 0, 0, 0, 0])));
        for bad in [
            "[1:2:3:4:5:6:7]",
            "[1:2:3:4:5:6:7:8:9]",
            "[1::2::3]",
            "[12345::]",
            "[::g]",
            "[1:2:3:4:5:6:7::8]",
            "[::1",
        ] {
            assert_eq!(Host::parse(bad), None, "{bad}");
        }
        assert!(Host::parse("127.9.9.9").unwrap().is_loopback());
        assert!(Host::parse("LocalHost").unwrap().is_loopback());
        assert!(!Host::parse("localhost.evil.com").unwrap().is_loopback());
        assert!(!Host::parse("[::2]").unwrap().is_loopback());
    }

    #[test]
    fn refuses_what_a_browser_would_read_otherwise() {
        for bad in [
            "https://claude.ai\\@evil.com/",
            "https://claude.ai/c b",
            "https://claude.ai/\u{e9}",
            "https://claude.ai/<x>",
            "https:claude.ai/cb",
            "//claude.ai/cb",
            "https://",
            "https:///cb",
            "https://a..b/",
            "https://.",
            "https://ex%61mple.com/",
            "http://2130706433/",
            "http://0x7f.1/",
            "http://127.1/",
            "http://127.0.0.01/",
            "http://256.0.0.1/",
            "http://1.2.3.4.5/",
            "https://claude.ai:/cb",
            "https://claude.ai:65536/cb",
            "https://claude.ai:+1/cb",
            "https://claude.ai:99999999999/cb",
            "1https://claude.ai/",
        ] {
            assert_eq!(Url::parse(bad), None, "{bad}");
        }
        assert!(Url::parse("https://example.com./cb").is_some(), "a trailing dot is a domain");
        assert!(Url::parse("https://1password.com/cb").is_some(), "digits in a label");
        assert!(Url::parse("https://xn--bcher-kva.example/").is_some());
    }

    /// Whatever this reader accepts, the WHATWG parser (the `url` crate, as browsers) reads as
    /// the same scheme, host, port, path, query and fragment.
    #[test]
    fn agrees_with_the_whatwg_parser_on_all_it_accepts() {
        let (mut accepted, mut total) = (0, 0);
        for scheme in ["https", "HTTP", "http"] {
            for userinfo in ["", "u@", "u:p@", "@"] {
                for host in [
                    "claude.ai",
                    "Claude.AI",
                    "example.com.",
                    "a-b_c.example",
                    "localhost",
                    "127.0.0.1",
                    "10.1.2.3",
                    "255.255.255.255",
                    "[::1]",
                    "[2001:db8::1]",
                    "[::ffff:1.2.3.4]",
                    "1.2.3",
                    "0x7f.0.0.1",
                    "127.0.0.1.",
                    "01.2.3.4",
                    "4294967295",
                    "xn--bcher-kva.example",
                    "ex%41mple.com",
                    "a..b",
                    "[::1",
                ] {
                    for port in ["", ":443", ":80", ":0", ":8080", ":65535", ":", ":65536"] {
                        for rest in [
                            "",
                            "/",
                            "/cb",
                            "/a/b/",
                            "/%2e%2e/x",
                            "/a;b=c",
                            "?x=1&y=%20",
                            "/cb?",
                            "/cb#f",
                            "/cb?q#f",
                            "/~u/!$&'()*+,;=:@",
                            "?a='b'",
                            "/a%zz?q=%",
                            "/%41#%",
                            "#a#b",
                            "?a?b",
                        ] {
                            let raw = format!("{scheme}://{userinfo}{host}{port}{rest}");
                            total += 1;
                            let Some(ours) = Url::parse(&raw) else { continue };
                            accepted += 1;
                            let theirs = url::Url::parse(&raw)
                                .unwrap_or_else(|e| panic!("{raw}: accepted here, not by WHATWG: {e}"));
                            assert_eq!(ours.scheme, theirs.scheme(), "{raw}");
                            assert_eq!(ours.port, theirs.port(), "{raw}");
                            assert_eq!(ours.path, theirs.path(), "{raw}");
                            assert_eq!(ours.query, theirs.query(), "{raw}");
                            assert_eq!(ours.fragment, theirs.fragment(), "{raw}");
                            assert_eq!(ours.has_userinfo, !userinfo.is_empty(), "{raw}");
                            let same_host = match (&ours.host, theirs.host()) {
                                (Host::Domain(a), Some(url::Host::Domain(b))) => a == b,
                                (Host::Ipv4(a), Some(url::Host::Ipv4(b))) => *a == b.octets(),
                                (Host::Ipv6(a), Some(url::Host::Ipv6(b))) => *a == b.segments(),
                                _ => false,
                            };
                            assert!(same_host, "{raw}: {:?} / {:?}", ours.host, theirs.host());
                            assert_eq!(
                                ours.host.is_loopback(),
                                theirs.host().is_some_and(|h| match h {
                                    url::Host::Domain(d) => d == "localhost",
                                    url::Host::Ipv4(ip) => ip.is_loopback(),
                                    url::Host::Ipv6(ip) => ip.is_loopback(),
                                }),
                                "{raw}"
                            );
                            if matches!(ours.host, Host::Domain(_) | Host::Ipv4(_)) {
                                assert_eq!(ours.origin(), theirs.origin().ascii_serialization(), "{raw}");
                            }
                        }
                    }
                }
            }
        }
        assert!(accepted > total / 3, "{accepted} of {total}");
    }

    #[test]
    fn knows_dot_segments() {
        for dot in [".", "..", "%2e", "%2E", "%2e.", ".%2E", "%2e%2e"] {
            assert!(is_dot_segment(dot), "{dot}");
        }
        for not in ["", "a", "...", ".a", "%2f", "%2", "%2e%2", "a.b", "%2e%2e%2e"] {
            assert!(!is_dot_segment(not), "{not}");
        }
        assert_eq!(Url::parse("https://claude.ai/a/%2E%2e/b"), None);
        assert!(Url::parse("https://claude.ai/a?next=/../b").is_some(), "only the path counts");
    }

    #[test]
    fn adds_query_pairs() {
        let pairs = [("code", "x y"), ("iss", "http://i")];
        assert_eq!(
            with_query("https://c.example/cb", &pairs),
            "https://c.example/cb?code=x+y&iss=http%3A%2F%2Fi"
        );
        assert_eq!(with_query("https://c.example/cb?a=1", &pairs[..1]), "https://c.example/cb?a=1&code=x+y");
        assert_eq!(with_query("https://c.example/cb?", &pairs[..1]), "https://c.example/cb?code=x+y");
        assert_eq!(with_query("https://c.example/cb?a#f", &pairs[..1]), "https://c.example/cb?a&code=x+y#f");
    }
}

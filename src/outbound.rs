//! The outbound HTTP port: how provider adapters (and the authorization server's metadata
//! fetches) call the outside world. The Worker implements it with `fetch`; tests implement it
//! with fakes. Adapters never see the `worker` crate.

use crate::tools::registry::LocalBoxFuture;

/// A provider's own words, for a message a person (and the model) reads: control characters
/// made spaces, characters that show nothing dropped, its own double quotes made typographic so
/// that it cannot close the quote early, at most 160 characters (then `…`), quoted and
/// attributed, so that they read as the provider's text, not VibeSell's; `None` when it said
/// nothing.
pub fn said(provider: &str, text: &str) -> Option<String> {
    let text: String = text
        .chars()
        .map(|c| match c {
            '"' => '”',
            c if c.is_control() => ' ',
            c => c,
        })
        .filter(|c| !crate::html::invisible(*c))
        .collect();
    let text = text.trim();
    (!text.is_empty()).then(|| format!("{provider} said: \"{}\"", crate::html::cut(text, 160)))
}

/// A request to another service.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutboundRequest {
    /// `GET`, `POST`, …
    pub method: String,
    /// Absolute URL.
    pub url: String,
    /// Headers (names lower-case).
    pub headers: Vec<(String, String)>,
    /// Body bytes, if any.
    pub body: Option<Vec<u8>>,
    /// Give up after this many milliseconds.
    pub timeout_ms: u32,
    /// Follow redirects (the default). Off, a 3xx is returned as it is.
    pub follow_redirects: bool,
    /// Stop reading the body past this many bytes and fail (`None`: no limit).
    pub max_body_bytes: Option<usize>,
}

impl OutboundRequest {
    /// A GET with the default timeout.
    pub fn get(url: impl Into<String>) -> Self {
        OutboundRequest {
            method: "GET".into(),
            url: url.into(),
            headers: Vec::new(),
            body: None,
            timeout_ms: 10_000,
            follow_redirects: true,
            max_body_bytes: None,
        }
    }

    /// A POST of `body` with `content_type` and the default timeout.
    pub fn post(url: impl Into<String>, content_type: &str, body: impl Into<Vec<u8>>) -> Self {
        OutboundRequest {
            method: "POST".into(),
            url: url.into(),
            headers: vec![("content-type".into(), content_type.into())],
            body: Some(body.into()),
            timeout_ms: 10_000,
            follow_redirects: true,
            max_body_bytes: None,
        }
    }

    /// Adds a header.
    pub fn header(mut self, name: &str, value: impl Into<String>) -> Self {
        self.headers.push((name.to_ascii_lowercase(), value.into()));
        self
    }

    /// Sets the timeout.
    pub fn timeout(mut self, ms: u32) -> Self {
        self.timeout_ms = ms;
        self
    }

    /// Returns redirects instead of following them (SSRF guard: a checked URL must not bounce
    /// somewhere unchecked).
    pub fn no_redirects(mut self) -> Self {
        self.follow_redirects = false;
        self
    }

    /// Fails when the body is larger than `bytes`.
    pub fn max_body(mut self, bytes: usize) -> Self {
        self.max_body_bytes = Some(bytes);
        self
    }
}

/// A response from another service.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct OutboundResponse {
    /// Status code.
    pub status: u16,
    /// Headers (names lower-case).
    pub headers: Vec<(String, String)>,
    /// Body bytes.
    pub body: Vec<u8>,
}

impl OutboundResponse {
    /// The first value of a header.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str())
    }
}

/// Why a request got no response (network failure, timeout); the text is for logs.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct OutboundError(pub String);

/// Sends requests and waits.
pub trait Outbound {
    /// Sends one request.
    fn fetch(&self, req: OutboundRequest) -> LocalBoxFuture<'_, Result<OutboundResponse, OutboundError>>;
    /// Waits (between retries).
    fn sleep(&self, ms: u32) -> LocalBoxFuture<'_, ()>;
    /// The time now (ms), read afresh where the runtime keeps a clock: a request's own reading
    /// is taken when it starts and goes stale over slow provider calls. `None` in tests that
    /// keep only the request's clock.
    fn clock_ms(&self) -> Option<i64> {
        None
    }
}

/// An `Outbound` that refuses every request: the sandbox needs no network.
pub struct NoNetwork;

impl Outbound for NoNetwork {
    fn fetch(&self, req: OutboundRequest) -> LocalBoxFuture<'_, Result<OutboundResponse, OutboundError>> {
        Box::pin(async move { Err(OutboundError(format!("no network for {} {}", req.method, req.url))) })
    }
    fn sleep(&self, _: u32) -> LocalBoxFuture<'_, ()> {
        Box::pin(async {})
    }
}

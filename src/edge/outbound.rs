//! [`Outbound`] over the Workers `fetch`, with a timeout.

use worker::{AbortController, Delay, Fetch, Headers, Method, Request, RequestInit, RequestRedirect};

use crate::outbound::{Outbound, OutboundError, OutboundRequest, OutboundResponse};
use crate::tools::registry::LocalBoxFuture;

/// Outbound HTTP from the Worker or a Durable Object.
pub struct WorkerFetch;

async fn send(req: OutboundRequest) -> Result<OutboundResponse, OutboundError> {
    let err = |e: worker::Error| OutboundError(e.to_string());
    let headers = Headers::new();
    for (k, v) in &req.headers {
        headers.append(k, v).map_err(err)?;
    }
    let method = Method::from(req.method.to_ascii_uppercase());
    let controller = AbortController::default();
    let mut init = RequestInit::new();
    init.with_method(method).with_headers(headers);
    if !req.follow_redirects {
        init.with_redirect(RequestRedirect::Manual);
    }
    if let Some(body) = req.body {
        init.with_body(Some(js_sys::Uint8Array::from(body.as_slice()).into()));
    }
    let request = Request::new_with_init(&req.url, &init).map_err(err)?;
    let fetch = Fetch::Request(request);
    let signal = controller.signal();
    let timeout = Delay::from(std::time::Duration::from_millis(u64::from(req.timeout_ms)));
    first_of(fetch.send_with_signal(&signal), timeout, controller, req.max_body_bytes).await
}

/// Whichever finishes first: the response, or the timeout (which aborts the request).
async fn first_of(
    fetch: impl std::future::Future<Output = worker::Result<worker::Response>>,
    timeout: Delay,
    controller: AbortController,
    max_body: Option<usize>,
) -> Result<OutboundResponse, OutboundError> {
    use std::future::Future;
    use std::pin::pin;
    use std::task::Poll;
    let mut fetch = pin!(fetch);
    let mut timeout = pin!(timeout);
    let first = std::future::poll_fn(|cx| {
        if let Poll::Ready(r) = fetch.as_mut().poll(cx) {
            return Poll::Ready(Some(r));
        }
        if timeout.as_mut().poll(cx).is_ready() {
            return Poll::Ready(None);
        }
        Poll::Pending
    })
    .await;
    let Some(result) = first else {
        controller.abort();
        return Err(OutboundError("timed out".into()));
    };
    let mut response = result.map_err(|e| OutboundError(e.to_string()))?;
    let headers = response.headers().entries().map(|(k, v)| (k.to_ascii_lowercase(), v)).collect();
    let body = match max_body {
        None => response.bytes().await.map_err(|e| OutboundError(e.to_string()))?,
        Some(limit) => read_at_most(&mut response, limit).await?,
    };
    Ok(OutboundResponse { status: response.status_code(), headers, body })
}

/// Reads the body chunk by chunk and gives up past `limit` bytes, so that a hostile server
/// cannot make the Worker buffer an unbounded body.
async fn read_at_most(response: &mut worker::Response, limit: usize) -> Result<Vec<u8>, OutboundError> {
    use futures_util::StreamExt as _;
    let declared =
        response.headers().get("content-length").ok().flatten().and_then(|v| v.trim().parse::<usize>().ok());
    if declared.is_some_and(|n| n > limit) {
        return Err(OutboundError(format!("body larger than {limit} bytes")));
    }
    let mut stream = response.stream().map_err(|e| OutboundError(e.to_string()))?;
    let mut body = Vec::new();
    while let Some(chunk) = stream.next().await {
        let chunk = chunk.map_err(|e| OutboundError(e.to_string()))?;
        if body.len() + chunk.len() > limit {
            return Err(OutboundError(format!("body larger than {limit} bytes")));
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}

impl Outbound for WorkerFetch {
    fn fetch(&self, req: OutboundRequest) -> LocalBoxFuture<'_, Result<OutboundResponse, OutboundError>> {
        Box::pin(send(req))
    }
    fn sleep(&self, ms: u32) -> LocalBoxFuture<'_, ()> {
        Box::pin(Delay::from(std::time::Duration::from_millis(u64::from(ms))))
    }
}

//! [`Outbound`] over the Workers `fetch`, with a timeout.

use worker::{AbortController, Delay, Fetch, Headers, Method, Request, RequestInit};

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
    if let Some(body) = req.body {
        init.with_body(Some(js_sys::Uint8Array::from(body.as_slice()).into()));
    }
    let request = Request::new_with_init(&req.url, &init).map_err(err)?;
    let fetch = Fetch::Request(request);
    let signal = controller.signal();
    let timeout = Delay::from(std::time::Duration::from_millis(u64::from(req.timeout_ms)));
    first_of(fetch.send_with_signal(&signal), timeout, controller).await
}

/// Whichever finishes first: the response, or the timeout (which aborts the request).
async fn first_of(
    fetch: impl std::future::Future<Output = worker::Result<worker::Response>>,
    timeout: Delay,
    controller: AbortController,
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
    let body = response.bytes().await.map_err(|e| OutboundError(e.to_string()))?;
    Ok(OutboundResponse { status: response.status_code(), headers, body })
}

impl Outbound for WorkerFetch {
    fn fetch(&self, req: OutboundRequest) -> LocalBoxFuture<'_, Result<OutboundResponse, OutboundError>> {
        Box::pin(send(req))
    }
    fn sleep(&self, ms: u32) -> LocalBoxFuture<'_, ()> {
        Box::pin(Delay::from(std::time::Duration::from_millis(u64::from(ms))))
    }
}

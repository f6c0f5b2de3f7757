//! [`Outbound`] over the Workers `fetch`, with a timeout, in one crossing each way.
//!
//! The request goes out and its answer comes back through the small JavaScript below rather than
//! the `worker` crate's `Fetch`, `RequestInit` and `Response::stream`: those converted the
//! request's options with serde-wasm-bindgen and read a limited body through wasm-streams, code
//! the Worker carried for this one call (docs/scale.md, "Size").

use wasm_bindgen::JsCast as _;
use wasm_bindgen::prelude::*;

use crate::outbound::{Outbound, OutboundError, OutboundRequest, OutboundResponse};
use crate::tools::registry::LocalBoxFuture;

#[wasm_bindgen(inline_js = r#"
export async function send(method, url, head, body, follow, timeoutMs, maxBody) {
  // The timeout covers the whole exchange, the body included, so that a server that sends its
  // headers and then trickles cannot hold the request past it.
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), timeoutMs);
  try {
    const headers = new Headers();
    const parts = head.split("\n");
    for (let i = 0; i + 1 < parts.length; i += 2) headers.append(parts[i], parts[i + 1]);
    const response = await fetch(url, {
      method,
      headers,
      body,
      redirect: follow ? "follow" : "manual",
      signal: controller.signal,
    });
    let answer = response.status + "\n";
    for (const [name, value] of response.headers) answer += name + "\n" + value + "\n";
    return [answer, await readBody(response, maxBody)];
  } catch (e) {
    throw controller.signal.aborted ? "timed out" : String(e?.message ?? e);
  } finally {
    clearTimeout(timer);
  }
}
// The body, or a failure once it is longer than `max` bytes (undefined: no limit), read chunk by
// chunk so that a hostile server cannot make the Worker buffer an unbounded body.
async function readBody(response, max) {
  if (max === undefined || response.body === null) return new Uint8Array(await response.arrayBuffer());
  const tooLarge = `body larger than ${max} bytes`;
  if (Number(response.headers.get("content-length")) > max) {
    await response.body.cancel();
    throw tooLarge;
  }
  const reader = response.body.getReader();
  const chunks = [];
  let length = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    length += value.length;
    if (length > max) {
      await reader.cancel();
      throw tooLarge;
    }
    chunks.push(value);
  }
  const bytes = new Uint8Array(length);
  let at = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, at);
    at += chunk.length;
  }
  return bytes;
}
export function sleep(ms) {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
"#)]
extern "C" {
    /// Sends the request (`head`: `name\nvalue\n` per header) and resolves to
    /// `["STATUS\nname\nvalue\n…", body bytes]`, or rejects with a message for the log.
    fn send(
        method: &str,
        url: &str,
        head: &str,
        body: Option<Vec<u8>>,
        follow: bool,
        timeout_ms: u32,
        max_body: Option<u32>,
    ) -> js_sys::Promise;
    /// Resolves after `ms` milliseconds.
    fn sleep(ms: u32) -> js_sys::Promise;
}

/// Outbound HTTP from the Worker or a Durable Object.
pub struct WorkerFetch;

async fn exchange(req: OutboundRequest) -> Result<OutboundResponse, OutboundError> {
    // Header names and values cannot hold a line break (RFC 9110 §5.5), which also keeps the
    // pairs apart in `head`; one that does is refused here rather than split into two headers.
    if let Some((name, _)) =
        req.headers.iter().find(|(name, value)| name.contains(['\n', '\r']) || value.contains(['\n', '\r']))
    {
        return Err(OutboundError(format!("header {name:?} holds a line break")));
    }
    let head = super::head_of(&req.headers);
    let max_body = req.max_body_bytes.map(|n| u32::try_from(n).unwrap_or(u32::MAX));
    let method = req.method.to_ascii_uppercase();
    let promise = send(&method, &req.url, &head, req.body, req.follow_redirects, req.timeout_ms, max_body);
    let answer = worker::wasm_bindgen_futures::JsFuture::from(promise)
        .await
        .map_err(|e| OutboundError(e.as_string().unwrap_or_else(|| format!("{e:?}"))))?;
    let answer = answer.unchecked_into::<js_sys::Array>();
    let body = super::bytes_of(answer.get(1));
    let head = super::text_of(&answer.get(0));
    let mut lines = head.split('\n');
    let status =
        lines.next().and_then(|s| s.parse().ok()).ok_or_else(|| OutboundError("no status".into()))?;
    Ok(OutboundResponse { status, headers: super::header_pairs(lines), body })
}

impl Outbound for WorkerFetch {
    fn fetch(&self, req: OutboundRequest) -> LocalBoxFuture<'_, Result<OutboundResponse, OutboundError>> {
        Box::pin(exchange(req))
    }
    fn sleep(&self, ms: u32) -> LocalBoxFuture<'_, ()> {
        let promise = sleep(ms);
        Box::pin(async move {
            let _ = worker::wasm_bindgen_futures::JsFuture::from(promise).await;
        })
    }
    fn clock_ms(&self) -> Option<i64> {
        Some(super::now_ms())
    }
}

//! The Workers edge: the only module that names the `worker` crate. It turns the runtime's
//! `Request` into an [`HttpRequest`], gives the router a [`Platform`] over the Worker's
//! environment, writes the log line, and hosts the Durable Objects.

mod crypto;
mod db;
mod oauth_state;
mod outbound;
mod workspace_do;

use std::cell::OnceCell;
use std::rc::Rc;

use serde::Serialize;
use serde::de::DeserializeOwned;
use wasm_bindgen::JsCast;
use worker::{Env, event, web_sys};

use crate::config::{Config, ConfigError};
use crate::gzip::Deflated;
use crate::http::{self, HttpRequest, HttpResponse, Platform, Workspaces};
use crate::kv::{Kv, KvError};
use crate::mcp::{MAX_BODY_BYTES, ToolBackend, jsonrpc::RESULT_TAIL};
use crate::oauth::{AccountAddr, AuthObjects, ObjectError, grants, state};
use crate::outbound::Outbound;
use crate::tools::{ToolAnswer, registry::LocalBoxFuture};
use crate::workspace::{Op, OpReply, ToolCall};

/// The Durable Object binding of workspaces (wrangler.toml).
const WORKSPACE_BINDING: &str = "WORKSPACE";
/// The Durable Object binding of short-lived authorization state (wrangler.toml).
const OAUTH_STATE_BINDING: &str = "OAUTH_STATE";
/// The KV binding of OAuth clients (wrangler.toml).
const OAUTH_KV_BINDING: &str = "OAUTH_KV";

thread_local! {
    /// Vars and secrets do not change during an isolate's life, so they are parsed once and
    /// shared, not copied, by every request.
    static CONFIG: OnceCell<Rc<Result<Config, ConfigError>>> = const { OnceCell::new() };
}

/// The configuration of this isolate.
pub(crate) fn config(env: &Env) -> Rc<Result<Config, ConfigError>> {
    CONFIG.with(|cell| {
        Rc::clone(cell.get_or_init(|| {
            Rc::new(Config::from_lookup(|name| {
                env.var(name).map(|v| v.to_string()).or_else(|_| env.secret(name).map(|s| s.to_string())).ok()
            }))
        }))
    })
}

/// Milliseconds since the epoch, from the JavaScript clock (`SystemTime` panics on wasm32).
/// `Date.now()` itself: one crossing, where `worker::Date::now` builds a `Date` object and
/// reads it back.
pub(crate) fn now_ms() -> i64 {
    js_sys::Date::now() as i64
}

struct EdgePlatform {
    env: Env,
    /// The request's `ExecutionContext` (`undefined` for the start rehearsal's request).
    ctx: wasm_bindgen::JsValue,
    config: Rc<Result<Config, ConfigError>>,
    now_ms: i64,
}

impl Platform for EdgePlatform {
    fn config(&self) -> Result<&Config, &ConfigError> {
        self.config.as_ref().as_ref()
    }
    fn now_ms(&self) -> i64 {
        self.now_ms
    }
    fn tools(&self) -> &dyn ToolBackend {
        self
    }
    fn workspaces(&self) -> &dyn Workspaces {
        self
    }
    fn kv(&self) -> &dyn Kv {
        self
    }
    fn objects(&self) -> &dyn AuthObjects {
        self
    }
    fn outbound(&self) -> &dyn Outbound {
        &outbound::WorkerFetch
    }
    fn rs256(&self) -> &dyn crate::oauth::oidc::Rs256Verifier {
        &crypto::WebCryptoRs256
    }
    fn deflated(&self, result: &Rc<str>) -> Option<Rc<Deflated>> {
        let known = DEFLATED.with(|cache| {
            cache.borrow().iter().find(|(text, _)| Rc::ptr_eq(text, result)).map(|(_, slot)| slot.clone())
        });
        if let Some(slot) = known {
            return slot;
        }
        if !self.ctx.is_object() {
            return None;
        }
        // Shared results come from per-isolate caches with a handful of entries; the bound only
        // guards against a caller handing over results that are not shared.
        let key = DEFLATED.with(|cache| {
            let mut cache = cache.borrow_mut();
            let key = u32::try_from(cache.len()).ok().filter(|&k| k < MAX_DEFLATED)?;
            cache.push((Rc::clone(result), None));
            Some(key)
        })?;
        // Called with the cache no longer borrowed, so that `DEFLATE_DONE` may run at any time.
        DEFLATE_DONE.with(|then| {
            wait_until(&self.ctx, &deflate(result, RESULT_TAIL, key, then.as_ref().unchecked_ref()));
        });
        None
    }
}

/// At most this many shared results are compressed per isolate.
const MAX_DEFLATED: u32 = 32;

thread_local! {
    /// Each shared result compressed or being compressed (`None`: under way, or unusable), by
    /// the identity of its `Rc`, which the entry holds so that the address stays its own; an
    /// entry's index is its key for [`DEFLATE_DONE`].
    static DEFLATED: std::cell::RefCell<Vec<DeflatedSlot>> = const { std::cell::RefCell::new(Vec::new()) };
    /// Called by `deflate` with an entry's key and the runtime's gzip member of its result
    /// (`null` if compressing failed). One closure for the isolate's life, of the same type as
    /// [`AFTER_BODY`].
    static DEFLATE_DONE: wasm_bindgen::closure::Closure<dyn Fn(u32, wasm_bindgen::JsValue) -> wasm_bindgen::JsValue> =
        wasm_bindgen::closure::Closure::new(|key: u32, member: wasm_bindgen::JsValue| {
            let member = member.dyn_into::<js_sys::Uint8Array>().map(|m| m.to_vec()).unwrap_or_default();
            DEFLATED.with(|cache| {
                let mut cache = cache.borrow_mut();
                let Some((text, slot)) = usize::try_from(key).ok().and_then(|k| cache.get_mut(k)) else {
                    return;
                };
                match Deflated::from_gzip(&member, text.len() + RESULT_TAIL.len()) {
                    Some(deflated) => *slot = Some(Rc::new(deflated)),
                    // Stays `None`: this result goes out uncompressed for the isolate's life.
                    None => worker::console_error!("gzip: the runtime's compression of a shared result was unusable"),
                }
            });
            wasm_bindgen::JsValue::UNDEFINED
        });
}

/// A shared result and its compression.
type DeflatedSlot = (Rc<str>, Option<Rc<Deflated>>);

impl Kv for EdgePlatform {
    fn get(&self, key: String) -> LocalBoxFuture<'_, Result<Option<String>, KvError>> {
        let promise = kv_get(&self.env, OAUTH_KV_BINDING, &key);
        Box::pin(async move { Ok(kv_answer(promise).await?.as_string()) })
    }
    fn put(&self, key: String, value: String, ttl_secs: u32) -> LocalBoxFuture<'_, Result<(), KvError>> {
        let promise =
            kv_put(&self.env, OAUTH_KV_BINDING, &key, &value, ttl_secs.max(crate::kv::MIN_TTL_SECS));
        Box::pin(async move { kv_answer(promise).await.map(drop) })
    }
    fn delete(&self, key: String) -> LocalBoxFuture<'_, Result<(), KvError>> {
        let promise = kv_delete(&self.env, OAUTH_KV_BINDING, &key);
        Box::pin(async move { kv_answer(promise).await.map(drop) })
    }
}

/// What a KV call's promise resolves to, or why it failed. Not generic and boxed, so that it
/// exists once in the wasm.
fn kv_answer(promise: js_sys::Promise) -> LocalBoxFuture<'static, Result<wasm_bindgen::JsValue, KvError>> {
    Box::pin(async move {
        worker::wasm_bindgen_futures::JsFuture::from(promise)
            .await
            .map_err(|e| KvError(e.as_string().unwrap_or_else(|| format!("{e:?}"))))
    })
}

/// Sends a JSON operation to `path` on a Durable Object and decodes its JSON answer.
async fn ask_object<Op: Serialize, Reply: DeserializeOwned>(
    stub: worker::Stub,
    path: &str,
    op: &Op,
) -> Result<Reply, ObjectError> {
    let body = serde_json::to_string(op).map_err(|e| ObjectError::Failed(format!("encoding: {e}")))?;
    let text = object_text(stub, path.to_owned(), body).await.map_err(ObjectError::Failed)?;
    serde_json::from_str::<Reply>(&text).map_err(|e| ObjectError::Failed(format!("decoding: {e}")))
}

/// Sends `body` to `path` on a Durable Object (its `call` method, over Workers RPC) and returns
/// the text of its 200 answer, in one crossing each way. An RPC call skips the `Request` and
/// `Response` an HTTP `fetch` to the object builds and reads on both sides (bench/README.md,
/// "Durable Object calls"). Not generic and boxed, so that it exists once in the wasm rather
/// than in every caller's state machine.
fn object_text(
    stub: worker::Stub,
    path: String,
    body: String,
) -> LocalBoxFuture<'static, Result<String, String>> {
    Box::pin(async move {
        let stub = stub.into_rpc::<wasm_bindgen::JsValue>();
        let answer = worker::wasm_bindgen_futures::JsFuture::from(call_object(&stub, &path, body))
            .await
            .map_err(|e| format!("object call: {e:?}"))?
            .as_string()
            .unwrap_or_default();
        match answer.split_once('\n') {
            Some(("200", text)) => Ok(text.to_owned()),
            Some((status, text)) => Err(format!("object answered {status}: {text}")),
            None => Err(format!("object answered {answer}")),
        }
    })
}

impl AuthObjects for EdgePlatform {
    fn state(
        &self,
        name: String,
        op: state::StateOp,
    ) -> LocalBoxFuture<'_, Result<state::StateReply, ObjectError>> {
        Box::pin(async move {
            let stub = self
                .env
                .durable_object(OAUTH_STATE_BINDING)
                .and_then(|ns| ns.get_by_name(&name))
                .map_err(|e| ObjectError::Failed(format!("state stub: {e}")))?;
            ask_object(stub, "/op", &op).await
        })
    }

    fn account(
        &self,
        at: AccountAddr,
        op: grants::AccountOp,
    ) -> LocalBoxFuture<'_, Result<grants::AccountReply, ObjectError>> {
        Box::pin(async move {
            let ns = self
                .env
                .durable_object(WORKSPACE_BINDING)
                .map_err(|e| ObjectError::Failed(format!("workspace namespace: {e}")))?;
            let stub = match &at {
                AccountAddr::Workspace(ws) => {
                    ns.get_by_name(ws).map_err(|e| ObjectError::Failed(format!("workspace stub: {e}")))?
                }
                // A string that is not an id of this namespace throws: a forged routing id.
                AccountAddr::Route(route) => ns
                    .id_from_string(route)
                    .map_err(|_| ObjectError::Unroutable)?
                    .get_stub()
                    .map_err(|e| ObjectError::Failed(format!("workspace stub: {e}")))?,
            };
            ask_object(stub, "/account", &op).await
        })
    }
}

impl EdgePlatform {
    /// Sends `body`, encoded by the caller, to `path` on workspace `workspace`'s Durable Object
    /// and returns the answer's text. Takes the encoding's result rather than the value, so that
    /// it is not generic (one copy in the wasm for tool calls and ops alike).
    async fn send_text(
        &self,
        workspace: &str,
        path: &str,
        body: serde_json::Result<String>,
    ) -> Result<String, String> {
        let stub = self
            .env
            .durable_object(WORKSPACE_BINDING)
            .and_then(|ns| ns.get_by_name(workspace))
            .map_err(|e| format!("workspace stub: {e}"))?;
        let body = body.map_err(|e| format!("encoding request: {e}"))?;
        object_text(stub, path.to_owned(), body).await
    }
}

impl ToolBackend for EdgePlatform {
    /// Forwards the call to the workspace's Durable Object, which runs the tool next to its data.
    fn call_tool(&self, call: ToolCall) -> LocalBoxFuture<'_, Result<ToolAnswer, String>> {
        Box::pin(async move {
            let frame =
                self.send_text(&call.principal.workspace, "/tool", serde_json::to_string(&call)).await?;
            ToolAnswer::from_frame(&frame)
        })
    }
}

impl Workspaces for EdgePlatform {
    fn op(&self, workspace: &str, op: Op) -> LocalBoxFuture<'_, Result<OpReply, String>> {
        let workspace = workspace.to_owned();
        Box::pin(async move {
            let text = self.send_text(&workspace, "/op", serde_json::to_string(&op)).await?;
            serde_json::from_str::<OpReply>(&text).map_err(|e| format!("decoding answer: {e}"))
        })
    }
}

/// The request and response crossings between JavaScript and wasm, done in one call each.
/// Reading headers through `worker::Request` costs a JS round trip per header (plus the `cf`
/// object and a URL parse we never use), and building a `worker::Response` one per header;
/// profiles of `tools/list` under load put those crossings at about a fifth of the Worker's
/// CPU (bench/README.md). Header names and values cannot contain a line feed (RFC 9110 §5.5;
/// `Headers` refuses them), so it separates them safely.
#[wasm_bindgen::prelude::wasm_bindgen(inline_js = r#"
import { env } from "cloudflare:workers";
export function start_env() {
  return env;
}
// The init of each fixed head (`fixed`: the routine answers'), by its text, with its headers
// made once as a `Headers`, which the runtime copies as it is rather than reading each member of
// an object: with the request id left out of those answers, about 0.93× the CPU of `initialize`
// (bench/README.md, "The routine answers' fixed heads"). A few heads at most are fixed; the
// bound is there in case a change made them vary.
const FIXED = new Map();
export function respond(status, head, body, fixed) {
  let init = fixed ? FIXED.get(head) : undefined;
  if (init === undefined || init.status !== status) {
    init = initOf(status, head);
    if (fixed && FIXED.size < 64) {
      init = { ...init, headers: new Headers(init.headers) };
      FIXED.set(head, init);
    }
  }
  try {
    return new Response(body.length === 0 ? null : body.slice(), init);
  } catch {
    // A response the runtime refuses goes out without its body rather than trapping the module.
    // That happens at global scope, which refuses a body (a stream), to the start rehearsal's
    // answer, which is dropped. A header the runtime refuses (a control byte) makes a bare 500:
    // an exception thrown from here would cross the wasm and leave the request unanswered.
    try {
      return new Response(null, init);
    } catch {
      return new Response(null, { status: 500 });
    }
  }
}
function initOf(status, head) {
  const parts = head.split("\n");
  // A plain object, as most Workers pass their headers, unless a name repeats (`set-cookie`).
  // Made with `{}` and filled in the same order every time, it keeps a fixed shape, which the
  // runtime reads faster than a dictionary (`Object.create(null)`): 0.97× the CPU of
  // `initialize` (bench/README.md, "The answer's headers in a fixed-shape object"). The names
  // are the router's own, none of them `__proto__` or another of `Object.prototype`'s.
  let headers = {};
  for (let i = 0; i + 1 < parts.length; i += 2) {
    if (Object.hasOwn(headers, parts[i])) {
      headers = new Headers();
      for (let j = 0; j + 1 < parts.length; j += 2) headers.append(parts[j], parts[j + 1]);
      break;
    }
    headers[parts[i]] = parts[i + 1];
  }
  // A body we encoded ourselves (`content-encoding`) goes out as it is; by default the runtime
  // would compress it again.
  const encoded = headers instanceof Headers ? headers.has("content-encoding") : Object.hasOwn(headers, "content-encoding");
  return encoded ? { status, headers, encodeBody: "manual" } : { status, headers };
}
const ENCODER = new TextEncoder();
export function encode_into(text, into) {
  return ENCODER.encodeInto(text, into).written;
}
export function settle(answer) {
  Promise.resolve(answer).catch((e) => console.error("start: the entry rehearsal failed:", String(e)));
}
export function deflate(text, tail, key, then) {
  // Started after this request's answer has gone: compressing tools/list takes about 3 ms of CPU,
  // which the answer does not wait for.
  return new Promise((resolve) => setTimeout(resolve, 0))
    .then(() => new Response(new Blob([text, tail]).stream().pipeThrough(new CompressionStream("gzip"))).arrayBuffer())
    .then((b) => then(key, new Uint8Array(b)), () => then(key, null));
}
// KV through the binding itself: the `worker` crate's `KvStore::put` converts the value with
// serde-wasm-bindgen, code the Worker carried for these three calls alone. A missing binding
// rejects like a failed call.
export async function kv_get(env, binding, key) {
  return env[binding].get(key);
}
export async function kv_put(env, binding, key, value, ttl) {
  return env[binding].put(key, value, { expirationTtl: ttl });
}
export async function kv_delete(env, binding, key) {
  return env[binding].delete(key);
}
export function wait_until(ctx, promise) {
  ctx.waitUntil(promise);
}
export function call_object(stub, path, body) {
  return stub.call(path, body);
}
"#)]
extern "C" {
    /// The Worker's vars, secrets and bindings at global scope (Cloudflare's importable `env`,
    /// 2025-03-17), where the `start` event has none of its own.
    fn start_env() -> wasm_bindgen::JsValue;
    /// A `Response` from a status, `name\nvalue\n` pairs and the body, copied out of wasm
    /// memory first. Handing the `Response` the view of wasm memory itself, which the Fetch
    /// standard says it copies, doubled workerd's peak memory under `tools/list` load
    /// (532 against 240 MiB, bench/README.md), so the copy stays.
    /// `fixed`: the head is one that many requests share, whose headers are then kept by its
    /// text.
    fn respond(status: u16, head: &str, body: &[u8], fixed: bool) -> web_sys::Response;
    /// Writes `text` into `into` as UTF-8; the number of bytes written.
    fn encode_into(text: &js_sys::JsString, into: &mut [u8]) -> u32;
    /// Logs it if the promise (or value) `answer` fails; an answer itself is dropped.
    fn settle(answer: &wasm_bindgen::JsValue);
    /// Has the runtime gzip `text` then `tail` (its zlib, `CompressionStream`) once the current
    /// request's answer has gone, then calls `then(key, member)` once with the member's bytes, or
    /// with `null` if compressing failed; returns the promise of that.
    fn deflate(text: &str, tail: &str, key: u32, then: &js_sys::Function) -> js_sys::Promise;
    /// Resolves to the text stored under `key` in the KV namespace bound as `binding`, or null.
    fn kv_get(env: &Env, binding: &str, key: &str) -> js_sys::Promise;
    /// Stores `value` under `key`, expiring after `ttl` seconds (at least 60, KV's minimum).
    fn kv_put(env: &Env, binding: &str, key: &str, value: &str, ttl: u32) -> js_sys::Promise;
    /// Deletes `key`.
    fn kv_delete(env: &Env, binding: &str, key: &str) -> js_sys::Promise;
    /// `ctx.waitUntil(promise)`: the runtime keeps the isolate's work on it going after the
    /// answer is sent.
    fn wait_until(ctx: &wasm_bindgen::JsValue, promise: &js_sys::Promise);
    /// Calls the object's `call(path, body)` over Workers RPC; resolves to `STATUS\nanswer text`.
    fn call_object(stub: &wasm_bindgen::JsValue, path: &str, body: String) -> js_sys::Promise;
}

/// Runs once when the isolate loads the module. Cloudflare starts isolates while the first
/// request's TLS handshake is still going on, so work done here is off that request's path:
/// the `initialize` and `tools/list` answers are built now rather than on first use, and the
/// hottest requests are rehearsed so that their wasm is compiled (`rehearsal`).
#[event(start)]
fn start() {
    crate::mcp::warm_caches();
    let rehearsal = crate::rehearsal::rehearse();
    // The configuration is read now rather than by the first request (about 4 ms of a cold
    // first request, measured: bench/README.md, "Cold start").
    let env = start_env();
    let config = if env.is_object() {
        let env = env.unchecked_into::<Env>();
        match config(&env).as_ref() {
            Ok(_) => {
                rehearse_entry(env);
                "ok".to_owned()
            }
            Err(e) => e.to_string(),
        }
    } else {
        "no environment at start; read by the first request".to_owned()
    };
    worker::console_log!("{}", crate::log::start_line(&config, &rehearsal));
}

/// Runs one request through the Worker's own entry (`fetch`), so that the edge's side of a
/// request is compiled at start too: taking the read request apart, the log decision and the
/// `Response` (about 80 functions, a third of a fresh isolate's first-request CPU, measured alone
/// in workerd: bench/README.md, "Cold start"). It is a bodiless `POST` to the MCP endpoint without
/// a token, so its answer is the 401 challenge: no I/O, nothing stored, not logged (routine). Its
/// `cf-ray` names it, so that no random id is drawn, which the runtime refuses at global scope;
/// the hex of a request id is compiled here instead. Start must not fail for a rehearsal: an
/// answer that fails is logged; the path it runs is a real request's, which does not throw.
fn rehearse_entry(env: Env) {
    let _ = crate::ids::hex(&[0; 16]);
    let head = "POST\nhttps://rehearsal.invalid/v1/mcp\naccept\napplication/json, text/event-stream\n\
                cf-ray\nrehearsal\ncontent-type\napplication/json\n";
    let read = js_sys::Array::of2(&head.into(), &js_sys::Uint8Array::new_with_length(0));
    settle(&fetch(read, env, wasm_bindgen::JsValue::UNDEFINED));
}

/// The Worker's `fetch` handler, exported under the name worker-build's shim calls (as
/// `#[event(fetch)]` would), but without that macro's `async` export: a request that needs no
/// I/O is answered synchronously, and one that does is handed to `future_to_promise` only once
/// it is found waiting. Every `#[event(fetch)]` request paid for a promise, a spawned task and
/// two microtasks, and reading the body through a `JsFuture` for two closures and a third
/// (bench/README.md, "Where `initialize` spends its time").
///
/// It takes the request already read by the entry module (`src/edge/entry.js`, `readRequest`):
/// `[head, body]`, the head as `METHOD\nURL\n` then `name\nvalue\n` for each header of
/// [`http::REQUEST_HEADERS`] the request has, the body as bytes, `null` if reading it failed
/// (served as an empty body) or `undefined` if it was not read (not a POST; a POST to the MCP
/// endpoint without an `Authorization` header, which the router refuses before it needs a body;
/// or larger than [`MAX_BODY_BYTES`]: announced so, or found so after reading that far). Panic
/// recovery is unchanged: it is the entry module's and worker-build's shim around this export,
/// and the panic hook the `worker` crate installs.
#[wasm_bindgen::prelude::wasm_bindgen]
pub fn fetch(read: js_sys::Array, env: Env, ctx: wasm_bindgen::JsValue) -> wasm_bindgen::JsValue {
    let started = now_ms();
    let head = text_of(&read.get(0));
    serve(into_request(&head, read.get(1)), env, ctx, started)
}

/// Routes a request whose body has been read. A request that completes on its first poll (no
/// I/O: `initialize`, `tools/list`, the 401, the metadata documents) returns its `Response`
/// itself; one that waits (a Durable Object, KV, an outside provider) returns a promise, and
/// `future_to_promise` polls it on from where the first poll left it (a `JsFuture` registers
/// the waker of its latest poll, so the first poll's no-op waker loses nothing).
fn serve(request: HttpRequest, env: Env, ctx: wasm_bindgen::JsValue, started: i64) -> wasm_bindgen::JsValue {
    use std::task::{Poll, Waker};
    let mut answer = Box::pin(async move {
        let request_id =
            request.header("cf-ray").map(str::to_owned).unwrap_or_else(|| crate::ids::random_id("req_"));
        let platform = EdgePlatform { config: config(&env), env, ctx, now_ms: started };
        let (response, trace) = http::route(&request, &platform, &request_id).await;
        if trace.logged {
            worker::console_log!(
                "{}",
                crate::log::request_line(
                    &request_id,
                    &request.method,
                    &request.path,
                    response.status,
                    &trace,
                    now_ms() - started
                )
            );
        }
        // An unlogged answer's head is the same for every such request (it carries no request
        // id), unless it echoes the request's `Origin` (CORS).
        to_worker_response(&response, !trace.logged && request.header("origin").is_none())
    });
    match answer.as_mut().poll(&mut std::task::Context::from_waker(Waker::noop())) {
        Poll::Ready(response) => response.into(),
        Poll::Pending => to_promise(Box::pin(async move { answer.await.into() })).into(),
    }
}

/// The request the entry module read: its head (`METHOD\nURL\n`, then `name\nvalue\n` pairs)
/// and, for a POST, its body (`None` when it was not read); any other request has an empty one.
fn into_request(head: &str, body: wasm_bindgen::JsValue) -> HttpRequest {
    let mut lines = head.split('\n');
    let method = lines.next().unwrap_or_default().to_ascii_uppercase();
    let url = lines.next().unwrap_or_default();
    let headers = header_pairs(lines);
    let (path, query) = split_url(url);
    let body = if method != "POST" {
        Some(Vec::new())
    } else if body.is_undefined() {
        None
    } else {
        let bytes = bytes_of(body);
        (bytes.len() <= MAX_BODY_BYTES).then_some(bytes)
    };
    HttpRequest { method, path, query, headers, body }
}

/// A JavaScript string as UTF-8, written straight into wasm memory by the runtime's encoder
/// (`TextEncoder.encodeInto`); empty for anything but a string. Both heads written in JavaScript
/// cross this way: the request's (`fetch`) and a provider's answer's (`outbound::exchange`). wasm-bindgen's own passing
/// (`as_string`) copies every ASCII character with a JavaScript loop first: for the request's
/// head, whose bearer token alone is 400 characters, that loop was an eighth of the wasm's time
/// on an `initialize` (bench/README.md, "The wasm's side of a request, timed inside the isolate").
fn text_of(value: &wasm_bindgen::JsValue) -> String {
    let Some(text) = value.dyn_ref::<js_sys::JsString>() else { return String::new() };
    // A UTF-16 code unit takes at most three bytes of UTF-8.
    let mut bytes = vec![0; text.length() as usize * 3];
    let written = encode_into(text, &mut bytes) as usize;
    bytes.truncate(written);
    String::from_utf8(bytes).unwrap_or_default()
}

/// The bytes of a `Uint8Array` (empty for anything else: `null`, a body that could not be read).
fn bytes_of(value: wasm_bindgen::JsValue) -> Vec<u8> {
    value.dyn_into::<js_sys::Uint8Array>().map(|b| b.to_vec()).unwrap_or_default()
}

/// The `name\nvalue\n` pairs of a head written in JavaScript (the entry module's `readHead`, the
/// outbound `send`). Their names are already lower-case: the entry module asks for the names of
/// [`http::REQUEST_HEADERS`], and iterating a `Headers` gives its names lower-cased (Fetch
/// standard, "sort and combine").
fn header_pairs<'a>(mut lines: impl Iterator<Item = &'a str>) -> Vec<(String, String)> {
    let mut headers = Vec::with_capacity(http::REQUEST_HEADERS.len());
    while let (Some(name), Some(value)) = (lines.next(), lines.next()) {
        headers.push((name.to_owned(), value.to_owned()));
    }
    headers
}

/// `name\nvalue\n` for each pair, for JavaScript (`respond`, the outbound `send`): the inverse
/// of [`header_pairs`].
fn head_of(pairs: &[(String, String)]) -> String {
    let mut head = String::with_capacity(256);
    for (name, value) in pairs {
        for part in [name, value] {
            head.push_str(part);
            head.push('\n');
        }
    }
    head
}

/// The answer of a Durable Object's `call` (Workers RPC): `STATUS\ntext` once `answer` is done,
/// the form [`object_text`] reads.
fn rpc_answer(answer: impl std::future::Future<Output = (u16, String)> + 'static) -> js_sys::Promise {
    to_promise(Box::pin(async move {
        let (status, text) = answer.await;
        wasm_bindgen::JsValue::from(format!("{status}\n{text}"))
    }))
}

/// The promise of a future that cannot fail. One boxed future type for every caller, so that
/// `future_to_promise` (its task, its waker, its closures) is compiled once rather than once per
/// future type.
fn to_promise(
    answer: std::pin::Pin<Box<dyn std::future::Future<Output = wasm_bindgen::JsValue>>>,
) -> js_sys::Promise {
    worker::wasm_bindgen_futures::future_to_promise(async move { Ok(answer.await) })
}

/// A Durable Object alarm at `ms` since the epoch, through a JavaScript `Date` (`worker`'s
/// conversion from a chrono `DateTime` would link chrono's calendar code for nothing).
fn alarm_at(ms: i64) -> worker::ScheduledTime {
    worker::ScheduledTime::new(js_sys::Date::new(&wasm_bindgen::JsValue::from_f64(ms as f64)))
}

/// A Durable Object's answer to `fetch`: the Worker calls them over Workers RPC (`call`) only,
/// and the `worker` crate requires a `fetch`.
fn rpc_only() -> worker::Result<worker::Response> {
    worker::Response::error("This object is called over Workers RPC (call).", 405)
}

/// A Durable Object's JSON answer: 200 and the reply's text, or 500 if it cannot be written.
fn json_answer<T: Serialize>(reply: &T) -> (u16, String) {
    match serde_json::to_string(reply) {
        Ok(text) => (200, text),
        Err(e) => (500, format!("encoding the reply: {e}")),
    }
}

/// The path and query of the absolute URL the runtime hands over (already serialised by the
/// WHATWG URL parser, so the path is exactly what `URL.pathname` would give).
fn split_url(url: &str) -> (String, Option<String>) {
    let after_scheme = url.split_once("://").map_or(url, |(_, rest)| rest);
    let from_path = after_scheme.find('/').map_or("/", |i| &after_scheme[i..]);
    let without_fragment = from_path.split('#').next().unwrap_or(from_path);
    match without_fragment.split_once('?') {
        Some((path, query)) => (path.to_owned(), Some(query.to_owned())),
        None => (without_fragment.to_owned(), None),
    }
}

fn to_worker_response(response: &HttpResponse, fixed: bool) -> web_sys::Response {
    respond(response.status, &head_of(&response.headers), &response.body, fixed)
}

//! The tool mechanism: the [`Tool`] trait every tool implements once, its object-safe twin
//! [`DynTool`] used for dispatch, and the one place where tool results and refusals become
//! wire values (MCP tools §tool-result, PRODUCT §4).

use std::future::Future;
use std::pin::Pin;

use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::schema;
use crate::auth::{Principal, Scope};
use crate::card;
use crate::config::Config;
use crate::mcp::version::Version;
use crate::outbound::Outbound;
use crate::store::{Db, StoreError};

/// A boxed future that need not be `Send`: a Worker isolate is single-threaded.
pub type LocalBoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + 'a>>;

/// Who may see and call a tool (PRODUCT §3).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// Read tools: listed for every token with `mcp`.
    Read,
    /// Action tools: listed only with `mcp:act`.
    Act,
    /// `decide_approval`: `mcp:act` and a Claude-app client; hidden from the model by the host
    /// (`_meta.ui.visibility: ["app"]`).
    App,
}

impl Access {
    /// The scope a token needs to call the tool.
    pub fn scope(self) -> Scope {
        match self {
            Access::Read => Scope::Read,
            Access::Act | Access::App => Scope::Act,
        }
    }

    /// Whether `principal` may see and call the tool.
    pub fn allows(self, principal: &Principal) -> bool {
        self.refusal(principal).is_none()
    }

    /// Why `principal` may not use a tool of this access, if it may not (the 403 of PRODUCT §3).
    pub fn refusal(self, principal: &Principal) -> Option<crate::auth::bearer::AuthError> {
        use crate::auth::bearer::AuthError;
        if !principal.scopes.contains(self.scope()) {
            Some(AuthError::InsufficientScope)
        } else if self == Access::App && !principal.app {
            Some(AuthError::AppOnly)
        } else {
            None
        }
    }
}

/// The behaviour hints that differ per tool. `readOnlyHint` follows from [`Access`] and
/// `destructiveHint` is always false: nothing irreversible runs without an approval (PRODUCT §3).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Hints {
    /// Calling twice with the same arguments has no further effect.
    pub idempotent: bool,
    /// The tool calls an outside provider (leads, sending platform, registrar, Stripe).
    pub open_world: bool,
}

/// What the tool's handler sees: the caller, the workspace's storage and the time.
pub struct ToolCx<'a> {
    /// The workspace's database.
    pub db: &'a dyn Db,
    /// Who is calling.
    pub principal: &'a Principal,
    /// Deployment configuration.
    pub config: &'a Config,
    /// Milliseconds since the Unix epoch, from the platform clock.
    pub now_ms: i64,
    /// The request id, for references and logs.
    pub request_id: &'a str,
    /// Outbound HTTP, for live provider adapters.
    pub outbound: &'a dyn Outbound,
}

impl ToolCx<'_> {
    /// The workspace services without the caller, for domain code shared with jobs and ops.
    pub fn services(&self) -> crate::workspace::Services<'_> {
        crate::workspace::Services {
            db: self.db,
            config: self.config,
            outbound: self.outbound,
            now_ms: self.now_ms,
        }
    }
}

/// A successful result: the Markdown summary for the model and the data for the card.
#[derive(Debug)]
pub struct Reply<O> {
    /// What was found or done, and what to do next.
    pub text: String,
    /// The `structuredContent`.
    pub data: O,
}

impl<O> Reply<O> {
    /// A reply.
    pub fn new(text: impl Into<String>, data: O) -> Self {
        Reply { text: text.into(), data }
    }

    /// The reply with `note`, if any, after its text.
    pub fn noted(mut self, note: Option<String>) -> Self {
        append_note(&mut self.text, note);
        self
    }
}

/// Compiled once, not once per reply type.
fn append_note(text: &mut String, note: Option<String>) {
    if let Some(note) = note {
        text.push_str("\n\n");
        text.push_str(&note);
    }
}

/// Why a tool did not do what was asked. Everything but `Internal` is shown to the model as is,
/// so its text must say what to do next.
#[derive(Debug, Clone, PartialEq)]
pub enum Refusal {
    /// The arguments do not fit the input schema.
    InvalidArguments(String),
    /// A prerequisite, a limit or a state that prevents the action, with guidance.
    Guidance(String),
    /// A failure on our side; the detail goes to the log, never to the wire.
    Internal(String),
}

impl From<StoreError> for Refusal {
    fn from(e: StoreError) -> Self {
        Refusal::Internal(e.to_string())
    }
}

impl Refusal {
    /// A refusal with guidance for the model.
    pub fn guidance(text: impl Into<String>) -> Self {
        Refusal::Guidance(text.into())
    }

    /// The one place where refusals become wire text.
    fn to_text(&self, tool: &str, request_id: &str) -> String {
        match self {
            Refusal::InvalidArguments(why) => {
                format!(
                    "Invalid arguments for {tool}: {why}. Fix the arguments (see the tool's inputSchema) and call it again."
                )
            }
            Refusal::Guidance(text) => text.clone(),
            Refusal::Internal(_) => format!(
                "VibeSell could not complete {tool} because of a problem on its side (reference {request_id}). \
                 Nothing was changed. Try again in a moment; if it keeps failing, tell the user."
            ),
        }
    }
}

/// How a call ended, for the log line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// A result.
    Ok,
    /// A refusal the model can act on.
    Refused,
    /// An internal failure.
    Failed,
    /// The access token's grant was revoked: the whole request gets HTTP 401 `invalid_token`.
    Revoked,
}

/// A finished tool call, as the workspace runs it.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolOutcome {
    /// The Markdown text (or the refusal).
    pub text: String,
    /// The data, absent for refusals.
    pub structured: Option<Value>,
    /// How it ended.
    pub outcome: Outcome,
    /// The internal failure detail, for the log only.
    pub detail: Option<String>,
}

impl ToolOutcome {
    /// What the Worker needs of this outcome: how it ended, and its `CallToolResult` for a caller
    /// whose protocol version has `structuredContent` (2025-06-18 on) or not. Before that
    /// version the JSON goes in a second text block, where older hosts and the card look for it
    /// (MCP tools §structured-content: "SHOULD also return the serialized JSON in a TextContent
    /// block").
    pub fn into_answer(self, structured_content: bool) -> ToolAnswer {
        let mut content = vec![json!({ "type": "text", "text": self.text })];
        let mut result = json!({ "isError": self.outcome != Outcome::Ok });
        if let Some(data) = self.structured {
            if structured_content {
                result["structuredContent"] = data;
            } else {
                content.push(json!({ "type": "text", "text": data.to_string() }));
            }
        }
        result["content"] = Value::Array(content);
        ToolAnswer { outcome: self.outcome, detail: self.detail, result: result.to_string() }
    }

    /// The answer to a call made with an access token whose grant is no longer live.
    pub fn revoked(tool: &str) -> ToolOutcome {
        ToolOutcome {
            text: format!(
                "This connection was disconnected from VibeSell, so {tool} did not run. Connect again."
            ),
            structured: None,
            outcome: Outcome::Revoked,
            detail: Some("grant revoked".into()),
        }
    }

    /// A refusal built outside a handler (unknown arguments shape, storage failure).
    pub fn refusal(refusal: &Refusal, tool: &str, request_id: &str) -> ToolOutcome {
        let (outcome, detail) = match refusal {
            Refusal::Internal(detail) => (Outcome::Failed, Some(detail.clone())),
            _ => (Outcome::Refused, None),
        };
        ToolOutcome { text: refusal.to_text(tool, request_id), structured: None, outcome, detail }
    }
}

/// A finished tool call as the workspace Durable Object hands it to the Worker: how it ended
/// (for the log line and the revoked check) and its `CallToolResult`, already serialised for the
/// caller's protocol version, which the Worker passes on without decoding it. Decoding the
/// outcome and encoding it again was about 5% of a `get_workspace_context` call's CPU.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolAnswer {
    /// How it ended.
    pub outcome: Outcome,
    /// The internal failure detail, for the log only.
    pub detail: Option<String>,
    /// The `CallToolResult` JSON.
    pub result: String,
}

/// The first line of a framed [`ToolAnswer`].
#[derive(Serialize, Deserialize)]
struct AnswerHead {
    outcome: Outcome,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    detail: Option<String>,
}

impl ToolAnswer {
    /// The answer as the object sends it: a line of JSON with the outcome and the detail, then
    /// the result as it is. JSON text escapes line feeds inside strings, so the first line feed
    /// ends the head.
    pub fn to_frame(&self) -> String {
        let head = AnswerHead { outcome: self.outcome, detail: self.detail.clone() };
        let head = serde_json::to_string(&head).unwrap_or_else(|_| r#"{"outcome":"failed"}"#.into());
        let mut frame = String::with_capacity(head.len() + 1 + self.result.len());
        frame.push_str(&head);
        frame.push('\n');
        frame.push_str(&self.result);
        frame
    }

    /// Reads a frame written by [`ToolAnswer::to_frame`].
    pub fn from_frame(frame: &str) -> Result<ToolAnswer, String> {
        let (head, result) = frame.split_once('\n').ok_or("a tool answer without its head")?;
        let head: AnswerHead = serde_json::from_str(head).map_err(|e| format!("tool answer head: {e}"))?;
        Ok(ToolAnswer { outcome: head.outcome, detail: head.detail, result: result.to_owned() })
    }
}

/// One tool, declared once: name, title, description, access, hints, input and output types
/// (whose schemas are derived), and the handler.
#[allow(async_fn_in_trait)] // Futures need not be Send on a single-threaded isolate.
pub trait Tool: Sync + 'static {
    /// The arguments.
    type Input: DeserializeOwned + JsonSchema;
    /// The `structuredContent`; its serde tag names the `kind`.
    type Output: Serialize + JsonSchema;
    /// Wire name, `snake_case`.
    const NAME: &'static str;
    /// Human title.
    const TITLE: &'static str;
    /// For the model: when to use it, what must come first, what it returns.
    const DESCRIPTION: &'static str;
    /// Who may list and call it.
    const ACCESS: Access;
    /// Idempotence and open-world hints.
    const HINTS: Hints;

    /// Runs the tool.
    async fn call(&self, cx: &ToolCx<'_>, input: Self::Input) -> Result<Reply<Self::Output>, Refusal>;
}

/// The object-safe view of a [`Tool`], implemented for every tool.
pub trait DynTool: Sync {
    /// Wire name.
    fn name(&self) -> &'static str;
    /// Human title.
    fn title(&self) -> &'static str;
    /// Model-facing description ([`Tool::DESCRIPTION`]).
    fn description(&self) -> &'static str;
    /// Access class.
    fn access(&self) -> Access;
    /// Hints.
    fn hints(&self) -> Hints;
    /// The input and output schemas (JSON text): derived from the declaration natively,
    /// embedded from `src/tools/schemas.json` in the Worker (see [`schema`]). `None` only for a
    /// tool missing from a stale embedded table, which `cargo test` does not let through.
    fn schemas(&self) -> Option<schema::Schemas>;
    /// Validates the arguments against the input schema, decodes them and runs the handler.
    fn call<'a>(&'a self, cx: &'a ToolCx<'a>, arguments: Value) -> LocalBoxFuture<'a, ToolOutcome>;
}

// Not default methods of the trait: those would be instantiated for every tool through its
// vtable, in the Worker too, where nothing calls them.
impl dyn DynTool {
    /// The input schema, parsed (for tests and checks; the wire uses [`DynTool::schemas`]).
    pub fn input_schema(&self) -> Value {
        self.schemas().and_then(|s| serde_json::from_str(&s.input).ok()).unwrap_or_default()
    }
    /// The output schema, parsed.
    pub fn output_schema(&self) -> Value {
        self.schemas().and_then(|s| serde_json::from_str(&s.output).ok()).unwrap_or_default()
    }
}

impl<T: Tool> DynTool for T {
    fn name(&self) -> &'static str {
        T::NAME
    }
    fn title(&self) -> &'static str {
        T::TITLE
    }
    fn description(&self) -> &'static str {
        T::DESCRIPTION
    }
    fn access(&self) -> Access {
        T::ACCESS
    }
    fn hints(&self) -> Hints {
        T::HINTS
    }
    #[cfg(not(target_arch = "wasm32"))]
    fn schemas(&self) -> Option<schema::Schemas> {
        Some(schema::derived::<T::Input, T::Output>())
    }
    #[cfg(target_arch = "wasm32")]
    fn schemas(&self) -> Option<schema::Schemas> {
        schema::embedded(T::NAME)
    }

    // Only decoding the input, running the handler and encoding the output depend on `T`; the
    // rest is in non-generic helpers, so that it exists once in the Worker rather than once per
    // tool (38 copies).
    fn call<'a>(&'a self, cx: &'a ToolCx<'a>, mut arguments: Value) -> LocalBoxFuture<'a, ToolOutcome> {
        Box::pin(async move {
            let input = check_arguments(self, &mut arguments).and_then(|()| {
                serde_json::from_value::<T::Input>(arguments)
                    .map_err(|e| Refusal::InvalidArguments(e.to_string()))
            });
            let result = match input {
                Ok(input) => match self.call(cx, input).await {
                    Ok(reply) => Ok((reply.text, serde_json::to_value(&reply.data))),
                    Err(refusal) => Err(refusal),
                },
                Err(refusal) => Err(refusal),
            };
            finish(result, T::NAME, cx)
        })
    }
}

/// MCP 2025-11-25 (SEP-1303): input validation errors are tool results with `isError`, so the
/// model can correct itself. The arguments are checked against the very schema `tools/list`
/// shows, parsed once per isolate and tool, and left as serde should decode them (whole numbers
/// where the schema says integer: [`schema::validate_arguments`]).
fn check_arguments(tool: &dyn DynTool, arguments: &mut Value) -> Result<(), Refusal> {
    use std::cell::RefCell;
    use std::rc::Rc;
    thread_local! {
        static CACHE: RefCell<Vec<(&'static str, Rc<Value>)>> = const { RefCell::new(Vec::new()) };
    }
    let schema = super::once_per_isolate(&CACHE, tool.name(), || {
        tool.schemas()
            .and_then(|s| serde_json::from_str(&s.input).ok())
            .map(Rc::new)
            .ok_or_else(|| Refusal::Internal(format!("no input schema for {}", tool.name())))
    })?;
    schema::validate_arguments(&schema, arguments).map_err(Refusal::InvalidArguments)
}

/// The outcome of a call: the reply with its data, or the refusal.
fn finish(
    result: Result<(String, serde_json::Result<Value>), Refusal>,
    tool: &str,
    cx: &ToolCx<'_>,
) -> ToolOutcome {
    let mut out = match result {
        Ok((text, Ok(data))) => {
            ToolOutcome { text, structured: Some(data), outcome: Outcome::Ok, detail: None }
        }
        Ok((_, Err(e))) => {
            ToolOutcome::refusal(&Refusal::Internal(format!("serialising output: {e}")), tool, cx.request_id)
        }
        Err(refusal) => ToolOutcome::refusal(&refusal, tool, cx.request_id),
    };
    out_of_reach(&mut out.text, cx.principal);
    out
}

/// Tells a connection without `mcp:act` which of the tools its answer names it cannot call, so
/// that the model tells the user instead of trying them (second journey walk: a read-only
/// connection was told to call upgrade_plan). Said once, after the answer, in one place for
/// every tool rather than in each text that names a next step.
fn out_of_reach(text: &mut String, principal: &Principal) {
    if principal.scopes.contains(Scope::Act) {
        return;
    }
    let word = |c: char| c.is_ascii_alphanumeric() || c == '_';
    let named = |name: &str| {
        text.match_indices(name)
            .any(|(at, _)| !text[..at].ends_with(word) && !text[at + name.len()..].starts_with(word))
    };
    let out: Vec<&str> = super::ALL
        .iter()
        .filter(|t| !t.access().allows(principal) && named(t.name()))
        .map(|t| t.name())
        .collect();
    if !out.is_empty() {
        text.push_str(&format!(
            "\n\nThis connection is read-only, so it cannot call {}: the user needs to reconnect VibeSell with \
             read and act access for that.",
            out.join(", ")
        ));
    }
}

/// A `tools/list` entry (MCP-CONFORMANCE TL-06), with the schemas copied in as they are.
pub struct Descriptor<'a> {
    name: &'static str,
    title: Option<&'static str>,
    description: &'static str,
    input_schema: &'a str,
    output_schema: Option<&'a str>,
    annotations: Option<Annotations>,
    meta: Meta,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Annotations {
    title: &'static str,
    read_only_hint: bool,
    destructive_hint: bool,
    idempotent_hint: bool,
    open_world_hint: bool,
}

#[derive(Serialize)]
struct Meta {
    ui: Ui,
    #[serde(rename = "ui/resourceUri")]
    resource_uri: &'static str,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Ui {
    resource_uri: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    visibility: Option<[&'static str; 1]>,
}

impl Descriptor<'_> {
    /// Appends the entry as JSON to `out`, the schemas as they are. Written by hand because
    /// serde_json copies text into its output only through `RawValue`, whose feature compiled a
    /// second JSON parser (over `&str`) into the Worker, about 5 KB gzip, for this one list.
    /// The schemas are JSON by construction: written by serde_json, natively from the
    /// declaration or by `build.rs` from `src/tools/schemas.json`.
    pub fn write_json(&self, out: &mut String) {
        // Serialising a string or these small structs cannot fail.
        fn push<T: Serialize + ?Sized>(out: &mut String, value: &T) {
            out.push_str(&serde_json::to_string(value).unwrap_or_default());
        }
        out.push_str("{\"name\":");
        push(out, self.name);
        if let Some(title) = self.title {
            out.push_str(",\"title\":");
            push(out, title);
        }
        out.push_str(",\"description\":");
        push(out, self.description);
        out.push_str(",\"inputSchema\":");
        out.push_str(self.input_schema);
        if let Some(output) = self.output_schema {
            out.push_str(",\"outputSchema\":");
            out.push_str(output);
        }
        if let Some(annotations) = &self.annotations {
            out.push_str(",\"annotations\":");
            push(out, annotations);
        }
        out.push_str(",\"_meta\":");
        push(out, &self.meta);
        out.push('}');
    }
}

/// The tool's `tools/list` entry, shaped for `version` (MCP-CONFORMANCE TL-06: `title`,
/// `outputSchema` from 2025-06-18, `annotations` from 2025-03-26; `_meta.ui` on every version,
/// because MCP Apps hosts may negotiate old versions).
pub fn descriptor<'a>(tool: &dyn DynTool, schemas: &'a schema::Schemas, version: Version) -> Descriptor<'a> {
    let uri = card::resource_uri();
    let structured = version.has_structured_content();
    Descriptor {
        name: tool.name(),
        title: structured.then(|| tool.title()),
        description: tool.description(),
        input_schema: &schemas.input,
        output_schema: structured.then_some(&*schemas.output),
        annotations: version.has_annotations().then(|| Annotations {
            title: tool.title(),
            read_only_hint: tool.access() == Access::Read,
            destructive_hint: false,
            idempotent_hint: tool.hints().idempotent,
            open_world_hint: tool.hints().open_world,
        }),
        meta: Meta {
            ui: Ui { resource_uri: uri, visibility: (tool.access() == Access::App).then_some(["app"]) },
            resource_uri: uri,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn outcome(detail: Option<&str>) -> ToolOutcome {
        ToolOutcome {
            text: "line one\nline two".into(),
            structured: Some(json!({ "kind": "context", "note": "a\nb" })),
            outcome: Outcome::Failed,
            detail: detail.map(Into::into),
        }
    }

    /// Tool inputs are `deny_unknown_fields`, which serde_json holds at every level: the decoder
    /// refuses a key that is no field even where the schema check (which refuses it first, as
    /// `InvalidArguments`) would not see it.
    #[test]
    fn tool_inputs_refuse_unknown_fields_when_decoded() {
        use crate::tools::emails::SaveSequenceInput;
        use crate::tools::workspace::RememberInput;
        let e = serde_json::from_value::<RememberInput>(json!({"note": "n", "colour": "red"})).unwrap_err();
        assert!(e.to_string().starts_with("unknown field `colour`"), "{e}");
        assert!(serde_json::from_value::<RememberInput>(json!({"note": "n"})).is_ok());
        let step = |key: &str| json!({"steps": [{"subject": "s", "body": "b", key: 3}]});
        assert_eq!(
            serde_json::from_value::<SaveSequenceInput>(step("delay_days")).unwrap().steps[0].delay_days,
            Some(3)
        );
        let e = serde_json::from_value::<SaveSequenceInput>(step("delayDays")).unwrap_err();
        assert!(e.to_string().starts_with("unknown field `delayDays`"), "{e}");
    }

    #[test]
    fn an_answer_crosses_its_frame_whole_and_in_the_callers_shape() {
        for detail in [None, Some("storage\nfailed {\"at\": 1}")] {
            let answer = outcome(detail).into_answer(true);
            assert_eq!(ToolAnswer::from_frame(&answer.to_frame()), Ok(answer.clone()));
            let result: Value = serde_json::from_str(&answer.result).unwrap();
            assert_eq!(result["isError"], true);
            assert_eq!(result["structuredContent"]["note"], "a\nb");
            assert_eq!(result["content"].as_array().unwrap().len(), 1);
        }
        // Before 2025-06-18: the JSON in a second text block, no structuredContent.
        let older: Value = serde_json::from_str(&outcome(None).into_answer(false).result).unwrap();
        assert!(older.get("structuredContent").is_none());
        assert_eq!(older["content"][1]["text"], r#"{"kind":"context","note":"a\nb"}"#);
        assert!(ToolAnswer::from_frame("no head").is_err());
        assert!(ToolAnswer::from_frame("{\"outcome\":\"maybe\"}\n{}").is_err());
    }
}

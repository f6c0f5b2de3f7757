//! The VibeSell web pages behind `appUrl` (issue 4; PRODUCT §6, §10): `GET /app`, the signed-in
//! user's workspace and the approvals waiting for them, and `/app/approvals/{id}`, where the
//! owner approves or rejects one.
//!
//! - **Who**: the browser session of `oauth::session`. Without one, a page sends the visitor to
//!   sign in and back. The workspace is always the signed-in user's own, and its Durable Object
//!   checks the owner again (`Op::Overview`, `Op::GetApproval`, `Op::DecideApproval`), so another
//!   user's approval id answers exactly like an unknown one: the same 404, which says nothing of
//!   whether it exists.
//! - **Deciding**: a form POST with a CSRF token bound to the session and to the approval
//!   ([`Session::csrf`]), after the form checks of every page (`Origin`, encoding, size). The
//!   workspace object applies the decision exactly once (`approvals::decide_as_owner`); the
//!   browser is then sent back to the page (303, Post/Redirect/Get), which shows the new status.
//!   A POST that finds the approval already decided or expired changes nothing and answers 409
//!   with the approval as it stands.
//! - **What is shown**: the card's own views. The page carries the results as a JSON data block
//!   and the card's stylesheet and script inline (`card::style`, `card::script`), allowed by their
//!   hashes in a CSP without `'unsafe-inline'`; `card.js` sees the data block and renders the
//!   views outside any host, with the decision as a plain form. The server also writes a plain
//!   version of the same facts, and the form, which the script replaces: the page reads and
//!   works without JavaScript too.
//! - **Headers** as on every page (`oauth::pages`): `frame-ancestors 'none'` and
//!   `X-Frame-Options: DENY` (a decision page must never be framed), `Cache-Control: no-store`,
//!   `Referrer-Policy: same-origin`; no third-party resource of any kind.

use std::sync::OnceLock;

use maud::{DOCTYPE, Markup, html};
use serde_json::{Value, json};

use crate::card;
use crate::config::Config;
use crate::http::{HttpRequest, HttpResponse, Platform};
use crate::mcp::Trace;
use crate::oauth::pages;
use crate::oauth::session::{self, Session};
use crate::workspace::approvals::{self, Approval, ApprovalResult, Decision, Status};
use crate::workspace::{Op, OpReply};

/// The workspace page.
pub const HOME_PATH: &str = "/app";
/// An approval's page is this prefix and its id (`Config::approval_url`).
pub const APPROVAL_PREFIX: &str = "/app/approvals/";

/// The page's own layout around the card's views (the views bring their own stylesheet).
const CSS: &str = "\
body{background:var(--vs-bg-2);min-height:100vh}\
.app{max-width:50rem;margin:0 auto;padding:18px 14px 48px}\
.bar{display:flex;flex-wrap:wrap;align-items:center;gap:6px 14px;padding:2px 4px 14px;font-size:13px;color:var(--vs-muted)}\
.bar>*{white-space:nowrap}\
.bar .home{display:flex;align-items:center;gap:8px;font-size:15px;font-weight:650;color:var(--vs-fg);text-decoration:none}\
.bar .back{color:var(--vs-accent);text-decoration:none}\
.bar .who{min-width:0;max-width:16rem;overflow:hidden;text-overflow:ellipsis}.bar form{display:inline;margin:0}\
button.link{font:inherit;border:0;padding:0;background:none;color:var(--vs-accent);cursor:pointer;text-decoration:underline}\
#root{background:var(--vs-bg);border:1px solid var(--vs-border);border-radius:var(--vs-radius);padding:18px 22px 22px}\
.app>.notice{margin:0 0 12px}.view+.view{margin-top:26px;padding-top:18px;border-top:1px solid var(--vs-border)}\
a.btn{display:inline-block;text-decoration:none}.plain li{margin:4px 0}";

/// The mark of the card's header, for the page's bar. The SVG elements are closed explicitly:
/// in foreign content an unclosed `<rect>` would hold the `<path>` after it.
fn mark() -> Markup {
    html! {
        svg class="mark" viewBox="0 0 16 16" aria-hidden="true" {
            rect width="16" height="16" rx="4" {}
            path d="M4 4.5 8 11.5 12 4.5" fill="none" stroke-width="2" stroke-linecap="round" stroke-linejoin="round" {}
        }
    }
}

fn css_hash() -> &'static str {
    static HASH: OnceLock<String> = OnceLock::new();
    HASH.get_or_init(|| pages::csp_hash(CSS))
}

/// Whether `s` is an approval id as `ids::random_id("apr_")` makes them.
fn is_approval_id(s: &str) -> bool {
    s.strip_prefix("apr_")
        .is_some_and(|h| h.len() == 32 && h.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)))
}

/// What a decision form's CSRF token is for: this approval, in this session.
fn csrf_purpose(id: &str) -> String {
    format!("decide|{id}")
}

fn not_found(trace: &mut Trace) -> HttpResponse {
    trace.outcome = "http_error";
    // The same words for an unknown id and for another user's: nothing tells them apart.
    pages::error(404, "not_found", "Not found", "There is no such approval in your VibeSell workspace.")
}

fn unavailable(trace: &mut Trace, detail: String) -> HttpResponse {
    trace.outcome = "http_error";
    trace.detail = Some(detail);
    pages::error(
        503,
        "unavailable",
        "VibeSell is briefly unavailable",
        "Nothing was changed. Reload the page in a moment.",
    )
}

/// The signed-in user, or the response that sends them to sign in and back to `return_to`.
async fn session_or_sign_in(
    req: &HttpRequest,
    platform: &dyn Platform,
    return_to: &str,
    trace: &mut Trace,
) -> Result<Session, HttpResponse> {
    match session::signed_in(req, platform).await {
        Ok(Some(user)) => Ok(user),
        Ok(None) => {
            trace.detail = Some("not signed in".into());
            Err(pages::redirect(&session::sign_in_url(return_to)))
        }
        Err(e) => {
            trace.outcome = "http_error";
            trace.detail = e.log.clone();
            Err(session::unavailable_page(&e))
        }
    }
}

// ---- GET /app ------------------------------------------------------------------------------

/// `GET /app`: the workspace summary and the approvals waiting, each linking to its page.
pub async fn home(req: &HttpRequest, platform: &dyn Platform, trace: &mut Trace) -> HttpResponse {
    let user = match session_or_sign_in(req, platform, HOME_PATH, trace).await {
        Ok(user) => user,
        Err(response) => return response,
    };
    match platform.workspaces().op(&user.workspace, Op::Overview { subject: user.subject.clone() }).await {
        Ok(OpReply::Overview { workspace, approvals }) => {
            let fallback = home_fallback(&workspace, &approvals);
            AppPage {
                status: 200,
                title: "Your workspace".into(),
                name: "home",
                user: &user,
                return_to: HOME_PATH,
                notice: None,
                fallback,
                data: json!({ "results": [workspace, approvals] }),
            }
            .render()
        }
        // The session's own workspace always has this owner (sign-in opens it for them).
        Ok(other) => unavailable(trace, format!("overview answered {}", other.kind())),
        Err(e) => unavailable(trace, format!("overview: {e}")),
    }
}

fn str_at<'a>(v: &'a Value, path: &[&str]) -> Option<&'a str> {
    path.iter().try_fold(v, |v, k| v.get(*k)).and_then(Value::as_str)
}

/// The plain `/app` (read before the card's script runs, or without it).
fn home_fallback(workspace: &Value, approvals: &Value) -> Markup {
    let steps = workspace["journey"].as_array().map(Vec::as_slice).unwrap_or_default();
    let done = steps.iter().filter(|s| s["status"] == "done").count();
    let open = approvals["approvals"].as_array().map(Vec::as_slice).unwrap_or_default();
    let open: Vec<(&str, &str, String)> = open
        .iter()
        .filter_map(|a| {
            let (id, summary) = (a["id"].as_str()?, a["summary"].as_str()?);
            let state = if a.get("result").is_some_and(|r| !r.is_null()) {
                "approved, being carried out".to_owned()
            } else {
                format!("expires {}", crate::dates::utc_minute(a["expiresAt"].as_i64().unwrap_or_default()))
            };
            is_approval_id(id).then_some((id, summary, state))
        })
        .collect();
    html! {
        h2 { (str_at(workspace, &["offer", "product"]).unwrap_or("Your VibeSell workspace")) }
        p class="sub" {
            "Plan: " (str_at(workspace, &["plan", "name"]).unwrap_or("—"))
            " · " (done) " of " (steps.len()) " steps done"
        }
        @if let Some(next) = str_at(workspace, &["nextStep", "title"]) {
            p { strong { "Next:" } " " (next) }
        }
        section {
            h3 { "Waiting for you" }
            @if open.is_empty() {
                p class="muted" { "Nothing waits for your decision." }
            } @else {
                ul class="plain" {
                    @for (id, summary, state) in &open {
                        li {
                            a href={ (APPROVAL_PREFIX) (id) } { (summary) } " "
                            span class="small muted" { (state) }
                        }
                    }
                }
            }
        }
    }
}

// ---- /app/approvals/{id} -------------------------------------------------------------------

/// `GET` and `POST /app/approvals/{id}`.
pub async fn approval(
    req: &HttpRequest,
    config: &Config,
    platform: &dyn Platform,
    trace: &mut Trace,
) -> HttpResponse {
    let raw_id = req.path.strip_prefix(APPROVAL_PREFIX).unwrap_or_default();
    match req.method.as_str() {
        "GET" => show(req, platform, raw_id, trace).await,
        "POST" => decide(req, config, platform, raw_id, trace).await,
        _ => {
            trace.outcome = "http_error";
            pages::error(405, "method_not_allowed", "Not allowed", "Open the page, then use its buttons.")
                .with("allow", "GET, POST")
        }
    }
}

async fn show(req: &HttpRequest, platform: &dyn Platform, id: &str, trace: &mut Trace) -> HttpResponse {
    if !is_approval_id(id) {
        return not_found(trace);
    }
    let path = format!("{APPROVAL_PREFIX}{id}");
    let user = match session_or_sign_in(req, platform, &path, trace).await {
        Ok(user) => user,
        Err(response) => return response,
    };
    let op = Op::GetApproval { subject: user.subject.clone(), id: id.to_owned() };
    match platform.workspaces().op(&user.workspace, op).await {
        Ok(OpReply::Approval { approval, .. }) => approval_page(200, &user, &approval, None),
        Ok(OpReply::NotFound) => not_found(trace),
        Ok(other) => unavailable(trace, format!("get approval answered {}", other.kind())),
        Err(e) => unavailable(trace, format!("get approval: {e}")),
    }
}

async fn decide(
    req: &HttpRequest,
    config: &Config,
    platform: &dyn Platform,
    id: &str,
    trace: &mut Trace,
) -> HttpResponse {
    let form = match session::page_form(req, config, trace) {
        Ok(form) => form,
        Err(page) => return page,
    };
    if !is_approval_id(id) {
        return not_found(trace);
    }
    let path = format!("{APPROVAL_PREFIX}{id}");
    // Signed out meanwhile: nothing is decided; they sign in and see the page again.
    let user = match session_or_sign_in(req, platform, &path, trace).await {
        Ok(user) => user,
        Err(response) => {
            if trace.outcome.is_empty() {
                trace.outcome = "refused";
            }
            return response;
        }
    };
    let csrf_ok = form.get("csrf").ok().flatten().is_some_and(|c| user.check_csrf(&csrf_purpose(id), c));
    if !csrf_ok {
        trace.outcome = "refused";
        trace.detail = Some("csrf".into());
        return session::csrf_refused();
    }
    let decision = match form.get("decision") {
        Ok(Some("approve")) => Decision::Approve,
        Ok(Some("reject")) => Decision::Reject,
        _ => {
            trace.outcome = "refused";
            return pages::error(
                400,
                "invalid_request",
                "Choose Approve or Reject",
                "Nothing was decided. Go back to the approval and use one of its buttons.",
            );
        }
    };
    let op = Op::DecideApproval { subject: user.subject.clone(), id: id.to_owned(), decision };
    match platform.workspaces().op(&user.workspace, op).await {
        Ok(OpReply::Approval { approval, applied: true }) => {
            trace.outcome = "ok";
            trace.detail = Some(format!("{id} {decision:?} from the web page: {:?}", approval.status));
            pages::redirect(&path)
        }
        Ok(OpReply::Approval { approval, applied: false }) => {
            trace.outcome = "refused";
            trace.detail = Some(format!("{id} already {:?}", approval.status));
            approval_page(409, &user, &approval, Some(unchanged_notice(&approval)))
        }
        Ok(OpReply::NotFound) => not_found(trace),
        Ok(other) => unavailable(trace, format!("decide answered {}", other.kind())),
        Err(e) => unavailable(trace, format!("decide: {e}")),
    }
}

/// Why a decision changed nothing.
fn unchanged_notice(a: &Approval) -> String {
    match a.status {
        Status::Pending => {
            "It is already approved and VibeSell is carrying it out; nothing more was done.".into()
        }
        Status::NotDone if a.result.as_deref() == Some(approvals::REPLACED) => {
            "A newer approval with the current figures took its place, so this one can no longer be approved. \
             Nothing was done."
                .into()
        }
        Status::NotDone if a.decided_at.is_none() => {
            "It expired before anyone decided, so it can no longer be approved. Nothing was done.".into()
        }
        _ => "It was already decided; nothing more was done.".into(),
    }
}

fn status_label(a: &Approval) -> &'static str {
    match a.status {
        Status::Pending if a.result.is_some() => "Approved, being carried out",
        Status::Pending => "Waiting for you",
        Status::Done => "Done",
        Status::NotDone => "Not done",
        Status::Rejected => "Rejected",
    }
}

fn approval_page(status: u16, user: &Session, a: &Approval, notice: Option<String>) -> HttpResponse {
    let path = format!("{APPROVAL_PREFIX}{}", a.id);
    // Only an approval still open to a decision gets the form; the workspace object refuses any
    // other decision anyway.
    let form =
        a.decide_here.then(|| DecideForm { action: path.clone(), csrf: user.csrf(&csrf_purpose(&a.id)) });
    let mut data = json!({ "results": [ApprovalResult { approval: a.clone() }] });
    if let Some(form) = &form {
        data["decide"] = json!({ "id": a.id, "action": form.action, "csrf": form.csrf });
    }
    AppPage {
        status,
        title: a.summary.clone(),
        name: "approval",
        user,
        return_to: &path,
        notice,
        fallback: approval_fallback(a, form.as_ref()),
        data,
    }
    .render()
}

struct DecideForm {
    action: String,
    csrf: String,
}

/// The plain approval (read before the card's script runs, or without it), with the form.
fn approval_fallback(a: &Approval, form: Option<&DecideForm>) -> Markup {
    let heading = match a.status {
        Status::Pending => "What happens if you approve",
        // The impact says what approving would do; the result says what was done.
        Status::Done => "What was approved",
        _ => "What it would have done",
    };
    html! {
        div class="approval" {
            // The tool's title, as the card shows it, rather than its name (journey finding).
            p class="small muted" { "Approval · " (crate::tools::find(&a.action).map_or(a.action.as_str(), |t| t.title())) }
            h2 { (a.summary) }
            p class="sub" { strong { (status_label(a)) } }
            @if let Some(cost) = &a.cost {
                p { "Cost: " strong { (cost.display()) } }
            }
            @if !a.impact.is_empty() {
                section {
                    h3 { (heading) }
                    ul class="plain" { @for line in &a.impact { li { (line) } } }
                }
            }
            @if a.irreversible && a.decide_here {
                p class="notice warn" {
                    strong { "This can't be undone." } " Once approved, VibeSell carries it out right away."
                }
            }
            @if let Some(result) = &a.result {
                p class="notice mute" { (result) }
            }
            @if let Some(form) = form {
                form class="actions" method="post" action=(form.action) data-form="decide" {
                    input type="hidden" name="csrf" value=(form.csrf);
                    button class="btn primary" type="submit" name="decision" value="approve" { "Approve" }
                    button class="btn secondary" type="submit" name="decision" value="reject" { "Reject" }
                }
                p class="small muted" { "Expires " (crate::dates::utc_minute(a.expires_at)) "." }
            }
        }
    }
}

// ---- the page ------------------------------------------------------------------------------

/// A page of the web app: the bar (home, who is signed in, sign-out), a notice, and `#root`,
/// which holds the plain `fallback` until the card's script renders `data` there.
struct AppPage<'a> {
    status: u16,
    title: String,
    /// Names the page in `data-page`.
    name: &'static str,
    user: &'a Session,
    /// Where sign-out returns to (after signing in again).
    return_to: &'a str,
    /// A server notice above the view (plain text).
    notice: Option<String>,
    fallback: Markup,
    /// `{ results: [structuredContent…], decide?: { id, action, csrf } }` for `card.js`.
    data: Value,
}

impl AppPage<'_> {
    fn render(self) -> HttpResponse {
        let html = html! {
            (DOCTYPE)
            html lang="en" {
                head {
                    meta charset="utf-8";
                    meta name="viewport" content="width=device-width, initial-scale=1";
                    meta name="color-scheme" content="light dark";
                    meta name="referrer" content="same-origin";
                    title { (self.title) " · VibeSell" }
                    (crate::html::style(card::style()))
                    (crate::html::style(CSS))
                }
                body {
                    div class="app" {
                        nav class="bar" {
                            a class="home" href=(HOME_PATH) { (mark()) "VibeSell" }
                            @if self.name != "home" {
                                a class="back" href=(HOME_PATH) { "← Your workspace" }
                            }
                            span class="spacer" {}
                            a class="back" href=(crate::oauth::ACCOUNT_PATH) { "Connected apps" }
                            span class="who" { (self.user.display) }
                            (session::signout_form(self.user, self.return_to, "Sign out"))
                        }
                        @if let Some(notice) = &self.notice {
                            p class="notice warn" role="status" data-notice { (notice) }
                        }
                        main id="root" data-page=(self.name) aria-live="polite" { (self.fallback) }
                    }
                    (crate::html::json_script("vibesell-page", &self.data))
                    (crate::html::script(card::script()))
                }
            }
        };
        let csp = pages::content_security_policy(&[card::STYLE_CSP, css_hash()], &[card::SCRIPT_CSP], &[]);
        pages::security_headers(HttpResponse::new(
            self.status,
            "text/html; charset=utf-8",
            html.into_string(),
        ))
        .with("content-security-policy", csp)
    }
}

#[cfg(test)]
#[path = "webapp_tests.rs"]
mod tests;

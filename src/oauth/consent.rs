//! The consent page: `GET /v1/oauth/consent?request=<handle>` shows it (after sign-in),
//! `POST /v1/oauth/consent` decides.
//!
//! The page names the app (its self-chosen name, marked as such), where the answer goes (the
//! redirect URI's host, with a warning when it is this computer), who published a metadata
//! document, and the access asked for; "read and act" can be narrowed to "read only". The
//! decision needs the browser that started the request (the handle is bound to its cookie), the
//! signed-in session, and a CSRF token bound to both; the pending request is then taken — read
//! and deleted in one step — so a handle decides once. Approval records the grant and its code
//! in the user's workspace object and redirects with `code`, `state` and `iss`; denial with
//! `error=access_denied`, `state` and `iss` (RFC 9207).
//!
//! Consent is remembered for (user, client, redirect URI, resource, scopes), as OAUTH-ANCHORS
//! recommends: when the signed-in user already has a live grant for the same client and redirect
//! URI covering every scope asked (this server has one resource), the page approves at once
//! instead of asking again. Never for a redirect URI on this computer, where any program can
//! call itself by a connected app's name, nor when the client asks with `prompt=consent`.

use maud::html;

use super::authorize::{self, Pending};
use super::clients::Source;
use super::error::{ErrorCode, OAuthError};
use super::form::Form;
use super::grants::{AccountOp, AccountReply, NewGrant};
use super::pages::{self, Page};
use super::session::{self, Browser, Session, SigninContext};
use super::state::{EntryKind, StateOp, StateReply};
use super::tokens::{self, Kind};
use super::{AccountAddr, CONSENT_PATH, redirect};
use crate::auth::ScopeSet;
use crate::config::Config;
use crate::http::{HttpRequest, HttpResponse, Platform};
use crate::mcp::Trace;

fn unknown_request(trace: &mut Trace) -> HttpResponse {
    trace.outcome = "refused";
    trace.detail = Some("request unknown, used, expired or of another browser".into());
    pages::error(
        400,
        "request_unknown",
        "This link has expired",
        "The authorization request is no longer valid: it was already answered, it is more than 10 minutes old, or it was started in another browser. Start connecting again from your app.",
    )
}

fn valid_handle(raw: Option<&str>) -> Option<&str> {
    raw.filter(|h| h.len() == 64 && h.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)))
}

fn csrf_purpose(handle: &str, session: &Session) -> String {
    format!("consent|{handle}|{}", session.fingerprint())
}

/// The pending request behind `handle`, bound to this browser: read to show the page
/// (`take` false), or read and deleted in one step to decide it, so that a handle decides once.
async fn pending_request(
    platform: &dyn Platform,
    handle: &str,
    browser: &Browser,
    take: bool,
) -> Result<Option<Pending>, OAuthError> {
    let (object, key) = authorize::pending_location(handle);
    let (kind, binding) = (EntryKind::Pending, browser.binding());
    let op = if take { StateOp::Take { kind, key, binding } } else { StateOp::Peek { kind, key, binding } };
    match platform.objects().state(object, op).await {
        Ok(StateReply::Doc { doc: Some(doc) }) => {
            serde_json::from_str(&doc).map(Some).map_err(|e| OAuthError::unavailable(format!("pending: {e}")))
        }
        Ok(_) => Ok(None),
        Err(e) => Err(OAuthError::unavailable(e.to_string())),
    }
}

/// `GET /v1/oauth/consent`.
pub async fn show(
    req: &HttpRequest,
    config: &Config,
    platform: &dyn Platform,
    trace: &mut Trace,
) -> HttpResponse {
    let query = Form::parse(req.query.as_deref().unwrap_or("").as_bytes());
    let Some(handle) = valid_handle(query.get("request").ok().flatten()) else {
        return unknown_request(trace);
    };
    let Some(browser) = Browser::existing(req) else { return unknown_request(trace) };
    let pending = match pending_request(platform, handle, &browser, false).await {
        Ok(Some(p)) => p,
        Ok(None) => return unknown_request(trace),
        Err(e) => return session::unavailable_page(&e),
    };
    let return_to = format!("{CONSENT_PATH}?request={handle}");
    match session::signed_in(req, platform).await {
        Ok(Some(session)) => {
            if remembered(platform, &pending, &session).await {
                // The single use, as for a decision: the handle is spent either way.
                return match pending_request(platform, handle, &browser, true).await {
                    Ok(Some(pending)) => {
                        let scope = pending.scope;
                        grant(config, platform, &pending, &session, scope, "remembered", trace).await
                    }
                    Ok(None) => unknown_request(trace),
                    Err(e) => session::unavailable_page(&e),
                };
            }
            consent_page(&pending, handle, &session)
        }
        Ok(None) => session::signin_page(
            config,
            &browser,
            &return_to,
            &SigninContext { client_name: Some(&pending.client_name) },
            None,
        ),
        Err(e) => session::unavailable_page(&e),
    }
}

/// Whether consent may be remembered for this request at all (see the module's doc).
fn may_remember(p: &Pending) -> bool {
    !p.ask_again && !redirect::is_loopback_uri(&p.redirect_uri)
}

/// Whether the user already consented to this request: a live grant of theirs for the same
/// client and redirect URI that covers every scope asked. Any doubt (storage failing) shows the
/// page, which is always safe.
async fn remembered(platform: &dyn Platform, p: &Pending, session: &Session) -> bool {
    if !may_remember(p) {
        return false;
    }
    let op = AccountOp::ListGrants { subject: session.subject.clone() };
    match platform.objects().account(AccountAddr::Workspace(session.workspace.clone()), op).await {
        Ok(AccountReply::Grants { grants }) => grants.iter().any(|g| {
            g.client_id == p.client_id && g.redirect_uri == p.redirect_uri && g.scope.covers(p.scope)
        }),
        _ => false,
    }
}

/// Whether a client's own name passes for Claude, Anthropic or VibeSell, however written: case,
/// full-width letters, and the Cyrillic and Greek letters (and digits) that look like Latin ones
/// are folded first; one of its words is one of those names, or the whole name spells one. The
/// consent page then says that the app is none of them, for a client that is not the Claude app
/// (`Client::is_app`): any client may choose its name.
pub(crate) fn borrows_a_name(name: &str) -> bool {
    let wide: String = name
        .chars()
        .map(|c| match c {
            '\u{ff01}'..='\u{ff5e}' => char::from_u32(c as u32 - 0xfee0).unwrap_or(c),
            c => c,
        })
        .collect();
    let folded: String = wide
        .to_lowercase()
        .chars()
        .map(|c| {
            let c = match c {
                'а' | 'α' | '@' => 'a',
                'с' | 'ϲ' => 'c',
                'е' | 'ε' | '3' => 'e',
                'о' | 'ο' | '0' => 'o',
                'р' | 'ρ' => 'p',
                'ѕ' | '5' | '$' => 's',
                'ԁ' => 'd',
                'ν' | 'ѵ' => 'v',
                'υ' => 'u',
                'і' | 'ι' | 'ӏ' | 'i' | '1' | '|' | '!' => 'l',
                'һ' => 'h',
                c => c,
            };
            if c.is_alphanumeric() { c } else { ' ' }
        })
        .collect();
    // Whole words ("Philanthropic CRM" borrows nothing), or the name spelled out ("C l a u d e").
    let spelled: String = folded.split_whitespace().collect();
    ["claude", "anthroplc", "vlbesell"]
        .iter()
        .any(|n| folded.split_whitespace().any(|w| w == *n) || spelled == *n)
}

fn consent_page(p: &Pending, handle: &str, session: &Session) -> HttpResponse {
    let name = p.client_name.as_str();
    let host = redirect::display_host(&p.redirect_uri);
    let loopback = redirect::is_loopback_uri(&p.redirect_uri);
    let return_to = format!("{CONSENT_PATH}?request={handle}");
    let body = html! {
        h1 { "Connect " (name) " to VibeSell?" }
        p class="muted" {
            "Signed in as " strong { (session.display) } ". "
            (session::signout_form(session, &return_to, "Not you?"))
        }
        dl {
            dt { "App" }
            dd { strong { (name) } " " span class="muted" { "(the name the app gave itself)" } }
            dt { "Answer goes to" }
            dd { code { (host) } }
            @if p.source == Source::Cimd {
                dt { "Published by" }
                dd { code { (redirect::display_host(&p.client_id)) } }
            }
        }
        @if loopback {
            p class="warn" {
                "This app runs on your computer: the answer goes to " code { (host) } ". Any program on this \
                 computer can call itself “" (name) "”, so continue only if you just started connecting it yourself."
            }
        } @else if !p.app && borrows_a_name(name) {
            // A local program gets the warning above, which says the same of any name it takes
            // (Claude Code, a local client, calls itself so by right).
            p class="warn" {
                "This app calls itself “" (name) "”, but it is not the Claude app, and VibeSell did not make it: \
                 its answer goes to " code { (host) } ". Continue only if you know that address."
            }
        }
        form method="post" action=(CONSENT_PATH) data-form="consent" {
            input type="hidden" name="request" value=(handle);
            input type="hidden" name="csrf" value=(session.csrf(&csrf_purpose(handle, session)));
            fieldset {
                legend { "Access" }
                @if p.scope.act {
                    label class="choice" {
                        input type="radio" name="access" value="act" checked;
                        span {
                            strong { "Read and act" }
                            span class="muted" {
                                "See your workspace and prepare campaigns. Anything that spends money, sends \
                                 email or cannot be undone still waits for your approval."
                            }
                        }
                    }
                    label class="choice" {
                        input type="radio" name="access" value="read";
                        span {
                            strong { "Read only" }
                            span class="muted" { "See your workspace; change nothing." }
                        }
                    }
                } @else {
                    p { strong { "Read only" } ": see your workspace; change nothing." }
                    input type="hidden" name="access" value="read";
                }
            }
            div class="actions" {
                button type="submit" name="decision" value="deny" { "Deny" }
                button class="primary" type="submit" name="decision" value="approve" { "Allow" }
            }
        }
        p class="muted" {
            @if may_remember(p) { "While it stays connected, it can reconnect without asking you again. " }
            "You can disconnect it at any time from your account."
        }
    };
    let form_targets = redirect::origin(&p.redirect_uri).into_iter().collect();
    Page {
        status: 200,
        title: format!("Connect {}", p.client_name),
        name: "consent",
        error: None,
        body,
        form_targets,
    }
    .render()
}

/// `POST /v1/oauth/consent`.
pub async fn decide(
    req: &HttpRequest,
    config: &Config,
    platform: &dyn Platform,
    trace: &mut Trace,
) -> HttpResponse {
    let form = match session::page_form(req, config, trace) {
        Ok(form) => form,
        Err(page) => return page,
    };
    let Some(handle) = valid_handle(form.get("request").ok().flatten()) else {
        return unknown_request(trace);
    };
    let session = match session::signed_in_or_refused(
        req,
        platform,
        trace,
        "Nothing was decided. Go back to your app and start connecting again.",
    )
    .await
    {
        Ok(session) => session,
        Err(page) => return page,
    };
    let browser = Browser::existing(req);
    let csrf_ok = browser.is_some()
        && form
            .get("csrf")
            .ok()
            .flatten()
            .is_some_and(|c| session.check_csrf(&csrf_purpose(handle, &session), c));
    let (Some(browser), true) = (browser, csrf_ok) else {
        trace.outcome = "refused";
        trace.detail = Some("csrf".into());
        return pages::error(
            403,
            "csrf",
            "This form has expired",
            "The form did not come from this browser's session with VibeSell, so nothing was decided. Go back, reload the page and try again.",
        );
    };
    let approve = match form.get("decision").ok().flatten() {
        Some("approve") => true,
        Some("deny") => false,
        _ => {
            trace.outcome = "refused";
            return pages::error(400, "invalid_request", "Unexpected form", "Choose Allow or Deny.");
        }
    };
    let narrowed = match form.get("access").ok().flatten() {
        Some("act") => false,
        Some("read") => true,
        None if !approve => true,
        _ => {
            trace.outcome = "refused";
            return pages::error(400, "invalid_request", "Unexpected form", "Choose the access to grant.");
        }
    };
    // The single use: read and delete in one step, bound to this browser.
    let pending = match pending_request(platform, handle, &browser, true).await {
        Ok(Some(pending)) => pending,
        Ok(None) => return unknown_request(trace),
        Err(e) => return session::unavailable_page(&e),
    };
    if !approve {
        // The user acted: the answer goes back even to a redirect URI we would not bounce to
        // unasked.
        let e = OAuthError::new(ErrorCode::AccessDenied, "The user denied access.");
        return authorize::error_to_client(
            &e,
            &pending.redirect_uri,
            pending.state.as_deref(),
            true,
            config,
            trace,
        );
    }
    let scope = if narrowed { ScopeSet::READ } else { pending.scope };
    grant(config, platform, &pending, &session, scope, "granted", trace).await
}

/// Records the grant and its code in the user's workspace object and sends the code to the
/// client; `how` says in the log whether the user decided now or had consented before.
async fn grant(
    config: &Config,
    platform: &dyn Platform,
    pending: &Pending,
    session: &Session,
    scope: ScopeSet,
    how: &str,
    trace: &mut Trace,
) -> HttpResponse {
    let to_client = |e: OAuthError, trace: &mut Trace| {
        // Approved by the user, now or before: the answer goes back even to a redirect URI we
        // would not bounce to unasked.
        authorize::error_to_client(&e, &pending.redirect_uri, pending.state.as_deref(), true, config, trace)
    };
    let secret = tokens::new_secret();
    let op = AccountOp::CreateGrant(NewGrant {
        subject: session.subject.clone(),
        client_id: pending.client_id.clone(),
        client_name: pending.client_name.clone(),
        redirect_uri: pending.redirect_uri.clone(),
        redirect_uri_in_request: pending.redirect_uri_in_request,
        scope,
        app: pending.app,
        resource: pending.resource.clone(),
        code_hash: tokens::hash(&secret),
        code_challenge: pending.code_challenge.clone(),
        refresh: pending.refresh,
    });
    match platform.objects().account(AccountAddr::Workspace(session.workspace.clone()), op).await {
        Ok(AccountReply::GrantCreated { route, grant_id }) => {
            trace.outcome = "ok";
            trace.detail = Some(format!("{how} {grant_id} ({})", scope.to_wire()));
            let mut params = vec![("code", tokens::format(Kind::Code, &route, &secret))];
            if let Some(state) = &pending.state {
                params.push(("state", state.clone()));
            }
            params.push(("iss", config.issuer().to_owned()));
            match redirect::with_params(&pending.redirect_uri, &params) {
                Some(location) => pages::redirect(&location),
                None => to_client(
                    OAuthError::new(ErrorCode::ServerError, "Try again.").logged("redirect URI is not a URL"),
                    trace,
                ),
            }
        }
        Ok(other) => to_client(
            OAuthError::new(ErrorCode::ServerError, "Try again.")
                .logged(format!("code store answered {}", other.kind())),
            trace,
        ),
        Err(e) => to_client(
            OAuthError::new(ErrorCode::TemporarilyUnavailable, "Try again in a moment.")
                .logged(e.to_string()),
            trace,
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::html::tests::{EVIL, assert_escaped};

    fn pending() -> Pending {
        Pending {
            client_id: "https://notes.example/client.json".into(),
            client_name: "Notes".into(),
            source: Source::Cimd,
            redirect_uri: "https://notes.example/cb".into(),
            redirect_uri_in_request: true,
            state: Some("s".into()),
            scope: ScopeSet::FULL,
            resource: "https://vibesell.example/mcp".into(),
            code_challenge: "c".into(),
            app: false,
            refresh: true,
            ask_again: false,
        }
    }

    fn page(p: &Pending, display: &str) -> String {
        let handle = "0".repeat(64);
        String::from_utf8(consent_page(p, &handle, &Session::for_test(display)).body).unwrap()
    }

    #[test]
    fn every_field_of_the_consent_page_is_escaped() {
        let named = |name: String, redirect_uri: &str| Pending {
            client_name: name,
            redirect_uri: redirect_uri.into(),
            ..pending()
        };
        let cases = [
            ("client name", named(EVIL.into(), "https://notes.example/cb"), "ada@example.com"),
            (
                "client name, loopback warning",
                named(EVIL.into(), "http://127.0.0.1:4000/cb"),
                "ada@example.com",
            ),
            (
                "client name, borrowed-name warning",
                named(format!("Claude {EVIL}"), "https://x.example/cb"),
                "a@b.c",
            ),
            ("email", pending(), EVIL),
        ];
        for (field, p, display) in cases {
            assert_escaped(&page(&p, display), field);
        }
        // The redirect URI and the CIMD client id are shown by their hosts, which cannot carry
        // markup: whatever they hold, no markup comes through.
        let evil_uri = format!("https://notes.example/cb?x={EVIL}#{EVIL}");
        for p in [
            Pending { redirect_uri: evil_uri.clone(), ..pending() },
            Pending { client_id: evil_uri, ..pending() },
            Pending { redirect_uri: EVIL.into(), client_id: EVIL.into(), ..pending() },
        ] {
            let html = page(&p, "ada@example.com");
            assert!(!html.contains(EVIL) && !html.contains("<script"), "{html}");
        }
        assert!(page(&pending(), "ada@example.com").contains("<code>notes.example</code>"));
    }
}

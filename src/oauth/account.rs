//! The account page (`GET /app/account`): who is signed in and the apps connected to their
//! VibeSell, each with a button that disconnects it (`POST /app/account/revoke`, CSRF-checked
//! against the session). Disconnecting revokes the grant: its refresh token is refused at once
//! and its access tokens at their next call that reaches the workspace.

use maud::{Markup, html};

use super::grants::{AccountOp, AccountReply, GrantSummary};
use super::pages::{self, Page};
use super::session::{self, Session};
use super::{ACCOUNT_PATH, ACCOUNT_REVOKE_PATH, AccountAddr, ObjectError, redirect};
use crate::config::Config;
use crate::dates::utc_minute;
use crate::http::{HttpRequest, HttpResponse, Platform};
use crate::mcp::Trace;

fn revoke_purpose(grant_id: &str) -> String {
    format!("account-revoke|{grant_id}")
}

fn app_row(session: &Session, g: &GrantSummary) -> Markup {
    let access = if g.scope.act { "Read and act" } else { "Read only" };
    html! {
        li data-grant=(g.grant_id) {
            div {
                strong { (g.client_name) }
                div class="muted" {
                    (access) " · answers go to " code { (redirect::display_host(&g.redirect_uri)) } br;
                    "Connected " (utc_minute(g.created_at)) " · last renewed " (utc_minute(g.last_used_at))
                }
            }
            form method="post" action=(ACCOUNT_REVOKE_PATH) {
                input type="hidden" name="grant_id" value=(g.grant_id);
                input type="hidden" name="csrf" value=(session.csrf(&revoke_purpose(&g.grant_id)));
                button type="submit" { "Disconnect" }
            }
        }
    }
}

/// `GET /app/account`.
pub async fn show(req: &HttpRequest, platform: &dyn Platform) -> HttpResponse {
    let session = match session::signed_in(req, platform).await {
        Ok(Some(session)) => session,
        Ok(None) => return pages::redirect(&session::sign_in_url(ACCOUNT_PATH)),
        Err(e) => return session::unavailable_page(&e),
    };
    let op = AccountOp::ListGrants { subject: session.subject.clone() };
    let grants = match platform.objects().account(AccountAddr::Workspace(session.workspace.clone()), op).await
    {
        Ok(AccountReply::Grants { grants }) => grants,
        other => return session::unavailable_page(&super::error::OAuthError::unavailable(answered(other))),
    };
    Page {
        status: 200,
        title: "Your account".into(),
        name: "account",
        error: None,
        body: account_body(&session, &grants),
        form_targets: Vec::new(),
    }
    .render()
}

fn account_body(session: &Session, grants: &[GrantSummary]) -> Markup {
    html! {
        h1 { "Your VibeSell account" }
        p class="muted" {
            "Signed in as " strong { (session.display) } ". "
            (session::signout_form(session, ACCOUNT_PATH, "Sign out"))
        }
        h2 { "Connected apps" }
        @if grants.is_empty() {
            p class="muted" { "No app is connected to your VibeSell." }
        } @else {
            ul class="apps" { @for g in grants { (app_row(session, g)) } }
        }
    }
}

/// `POST /app/account/revoke`.
pub async fn revoke(
    req: &HttpRequest,
    config: &Config,
    platform: &dyn Platform,
    trace: &mut Trace,
) -> HttpResponse {
    let form = match session::page_form(req, config, trace) {
        Ok(form) => form,
        Err(page) => return page,
    };
    let session =
        match session::signed_in_or_refused(req, platform, trace, "Sign in again, then disconnect the app.")
            .await
        {
            Ok(session) => session,
            Err(page) => return page,
        };
    let grant_id = form.get("grant_id").ok().flatten().unwrap_or("");
    let csrf_ok =
        form.get("csrf").ok().flatten().is_some_and(|c| session.check_csrf(&revoke_purpose(grant_id), c));
    if grant_id.is_empty() || !csrf_ok {
        trace.outcome = "refused";
        trace.detail = Some("csrf".into());
        return pages::error(
            403,
            "csrf",
            "This form has expired",
            "Nothing was changed. Reload your account page and try again.",
        );
    }
    let op = AccountOp::RevokeGrant {
        grant_id: grant_id.to_owned(),
        subject: session.subject.clone(),
        client_id: None,
    };
    match platform.objects().account(AccountAddr::Workspace(session.workspace.clone()), op).await {
        Ok(AccountReply::Revoked { revoked }) => {
            trace.outcome = "ok";
            trace.detail = Some(format!("grant {grant_id} revoked: {revoked}"));
            pages::redirect(ACCOUNT_PATH)
        }
        other => session::unavailable_page(&super::error::OAuthError::unavailable(answered(other))),
    }
}

/// What an unexpected answer of the account object was, for the log.
fn answered(answer: Result<AccountReply, ObjectError>) -> String {
    match answer {
        Ok(reply) => format!("account object answered {}", reply.kind()),
        Err(e) => format!("account object: {e}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::auth::ScopeSet;
    use crate::html::tests::{EVIL, assert_escaped};

    fn grant() -> GrantSummary {
        GrantSummary {
            grant_id: "grt_1".into(),
            client_name: "Notes".into(),
            client_id: "https://notes.example/client.json".into(),
            redirect_uri: "https://notes.example/cb".into(),
            scope: ScopeSet::FULL,
            created_at: 0,
            last_used_at: 0,
        }
    }

    #[test]
    fn every_field_of_the_account_page_is_escaped() {
        let ada = Session::for_test("ada@example.com");
        let cases = [
            ("client name", &ada, GrantSummary { client_name: EVIL.into(), ..grant() }),
            ("grant id", &ada, GrantSummary { grant_id: EVIL.into(), ..grant() }),
            ("email", &Session::for_test(EVIL), grant()),
        ];
        for (field, session, g) in cases {
            assert_escaped(&account_body(session, &[g]).into_string(), field);
        }
        // The redirect URI is shown by its host, which cannot carry markup.
        let g = GrantSummary { redirect_uri: format!("https://notes.example/cb?{EVIL}"), ..grant() };
        let html = account_body(&ada, &[g]).into_string();
        assert!(!html.contains(EVIL) && !html.contains("<script"), "{html}");
        assert!(account_body(&ada, &[grant()]).into_string().contains("<code>notes.example</code>"));
    }
}

//! The browser session of the VibeSell web pages, and sign-in.
//!
//! **For pages that need the signed-in user** (the `/app` pages): call [`signed_in`]; `None`
//! means "send them to [`sign_in_url`]". A [`Session`] gives the user's `subject` and
//! `workspace`, and CSRF tokens for its forms ([`Session::csrf`], [`Session::check_csrf`]):
//!
//! ```ignore
//! let Some(user) = session::signed_in(req, platform).await? else {
//!     return pages::redirect(&session::sign_in_url("/app/approvals/apr_…"));
//! };
//! // a form: <input type="hidden" name="csrf" value="{user.csrf("approve:apr_…")}">
//! // its POST: if !user.check_csrf("approve:apr_…", form_value) { 403 }
//! ```
//!
//! Two cookies, both `__Host-` (Secure, Path=/, no Domain: only this origin can set or read
//! them), HttpOnly and SameSite=Lax (sent on top-level navigations from other sites, such as a
//! link in Claude or the OpenID provider's redirect back, never on their POSTs):
//! - `__Host-vs_session` = `vsse_<routing id>_<secret>`: the session, kept server-side in the
//!   user's workspace object (`web_sessions`, hashed), so signing out ends it at once;
//! - `__Host-vs_browser` = 256 random bits: binds pending authorization requests and sign-in
//!   round trips to the browser that started them, and keys the CSRF tokens of forms shown
//!   before anyone is signed in.
//!
//! CSRF tokens are HMAC-SHA256(cookie secret, purpose): an attacker's page cannot read the
//! HttpOnly cookie, so it cannot compute them, and nothing has to be stored.
//!
//! Sign-in methods: the configured OpenID provider (`oidc.rs`), and, only when `PUBLIC_URL` is
//! a loopback address, a development sign-in by email (PRODUCT §10).

use maud::{Markup, html};

use super::error::OAuthError;
use super::form::{self, Form};
use super::grants::{AccountOp, AccountReply};
use super::pages::{self, Page};
use super::tokens::{self, Kind};
use super::{
    AccountAddr, MAX_OAUTH_BODY_BYTES, ObjectError, SESSION_TTL_MS, SIGNIN_DEV_PATH, SIGNIN_OIDC_PATH,
    SIGNIN_PATH, SIGNOUT_PATH, ratelimit,
};
use crate::config::Config;
use crate::http::{HttpRequest, HttpResponse, Platform};
use crate::ids;
use crate::mcp::Trace;
use crate::tools::registry::LocalBoxFuture;
use crate::workspace::workspace_id_for;
use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;

/// The session cookie.
pub const SESSION_COOKIE: &str = "__Host-vs_session";
/// The browser-binding cookie.
pub const BROWSER_COOKIE: &str = "__Host-vs_browser";
/// Where a signed-in visitor lands when nothing else was asked for.
pub const DEFAULT_RETURN: &str = "/app/account";
const BROWSER_MAX_AGE_SECS: i64 = 86_400;

/// A cookie's value (the first one of that name; `Cookie` headers may be split, RFC 9113
/// §8.2.3).
pub fn cookie<'a>(req: &'a HttpRequest, name: &str) -> Option<&'a str> {
    req.headers_named("cookie")
        .into_iter()
        .flat_map(|h| h.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(k, _)| *k == name)
        .map(|(_, v)| v.trim())
}

fn set_cookie(name: &str, value: &str, max_age_secs: i64) -> String {
    format!("{name}={value}; Path=/; Secure; HttpOnly; SameSite=Lax; Max-Age={max_age_secs}")
}

fn clear_cookie(name: &str) -> String {
    set_cookie(name, "", 0)
}

fn mac(secret: &str, purpose: &str) -> String {
    URL_SAFE_NO_PAD.encode(ids::hmac_sha256(secret.as_bytes(), purpose.as_bytes()))
}

/// Checked by hmac's `verify_slice` (constant time) on the decoded tag.
fn mac_ok(secret: &str, purpose: &str, presented: &str) -> bool {
    use hmac::Mac as _;
    let Ok(tag) = URL_SAFE_NO_PAD.decode(presented) else { return false };
    hmac::Hmac::<sha2::Sha256>::new_from_slice(secret.as_bytes())
        .is_ok_and(|mac| mac.chain_update(purpose).verify_slice(&tag).is_ok())
}

fn is_hex64(s: &str) -> bool {
    s.len() == 64 && s.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

/// The browser binding (see the module doc).
#[derive(Debug, Clone)]
pub struct Browser {
    secret: String,
}

impl Browser {
    /// The request's binding, if it has a well-formed one.
    pub fn existing(req: &HttpRequest) -> Option<Browser> {
        cookie(req, BROWSER_COOKIE).filter(|v| is_hex64(v)).map(|v| Browser { secret: v.to_owned() })
    }

    /// The request's binding, or a new one (then send [`Browser::cookie`]).
    pub fn of(req: &HttpRequest) -> Browser {
        Browser::existing(req).unwrap_or_else(|| Browser { secret: tokens::new_secret() })
    }

    /// What state bound to this browser stores (a hash: the cookie itself is never stored).
    pub fn binding(&self) -> String {
        tokens::hash(&self.secret)
    }

    /// A CSRF token for a form with this purpose.
    pub fn csrf(&self, purpose: &str) -> String {
        mac(&self.secret, purpose)
    }

    /// Whether a presented CSRF token is this browser's for this purpose.
    pub fn check_csrf(&self, purpose: &str, presented: &str) -> bool {
        mac_ok(&self.secret, purpose, presented)
    }

    /// The `Set-Cookie` value (sent again on each flow, which extends it).
    pub fn cookie(&self) -> String {
        set_cookie(BROWSER_COOKIE, &self.secret, BROWSER_MAX_AGE_SECS)
    }
}

/// A signed-in user.
#[derive(Debug, Clone)]
pub struct Session {
    /// The user (OAuth `sub`).
    pub subject: String,
    /// What to call them (an email).
    pub display: String,
    /// Their workspace.
    pub workspace: String,
    secret: String,
}

#[cfg(test)]
impl Session {
    /// A session of `display`'s, as sign-in makes them.
    pub(crate) fn for_test(display: &str) -> Session {
        Session {
            subject: display.to_owned(),
            display: display.to_owned(),
            workspace: workspace_id_for(display),
            secret: tokens::new_secret(),
        }
    }
}

#[cfg(test)]
impl Browser {
    /// A new browser binding.
    pub(crate) fn for_test() -> Browser {
        Browser { secret: tokens::new_secret() }
    }
}

impl Session {
    /// A CSRF token for a form with this purpose (e.g. `"approve:apr_…"`), bound to this session.
    pub fn csrf(&self, purpose: &str) -> String {
        mac(&self.secret, purpose)
    }

    /// Whether a presented CSRF token is this session's for this purpose (constant time).
    pub fn check_csrf(&self, purpose: &str, presented: &str) -> bool {
        mac_ok(&self.secret, purpose, presented)
    }

    /// A value that changes with the session, for binding other tokens to it.
    pub fn fingerprint(&self) -> String {
        tokens::hash(&self.secret)
    }
}

/// The signed-in user of a request: the `__Host-vs_session` cookie, checked against the
/// user's workspace object (so a signed-out or expired session is refused at once). `Err` only
/// when storage failed.
pub fn signed_in<'a>(
    req: &'a HttpRequest,
    platform: &'a dyn Platform,
) -> LocalBoxFuture<'a, Result<Option<Session>, OAuthError>> {
    // Boxed: every signed-in page calls it, compiled once (wasm size).
    Box::pin(find_session(req, platform))
}

async fn find_session(req: &HttpRequest, platform: &dyn Platform) -> Result<Option<Session>, OAuthError> {
    let Some(opaque) = cookie(req, SESSION_COOKIE).and_then(|v| tokens::parse(Kind::Session, v)) else {
        return Ok(None);
    };
    let op = AccountOp::GetSession { secret_hash: tokens::hash(&opaque.secret) };
    match platform.objects().account(AccountAddr::Route(opaque.route), op).await {
        Ok(AccountReply::Session { session: Some(info) }) => Ok(Some(Session {
            workspace: workspace_id_for(&info.subject),
            subject: info.subject,
            display: info.display,
            secret: opaque.secret,
        })),
        Ok(_) | Err(ObjectError::Unroutable) => Ok(None),
        Err(ObjectError::Failed(e)) => Err(OAuthError::unavailable(format!("session lookup: {e}"))),
    }
}

/// Where to send someone who must sign in before seeing `return_to`.
pub fn sign_in_url(return_to: &str) -> String {
    format!("{SIGNIN_PATH}?{}", crate::form::encode(&[("return_to", return_to)]))
}

/// A local path to return to after sign-in: our consent page or an `/app` page, nothing that
/// could lead off this origin. Printable ASCII only: it becomes a `Location` header, which the
/// runtime refuses with any control byte (audit finding: a NUL made the answer throw).
pub fn safe_return_to(raw: Option<&str>) -> String {
    match raw {
        Some(path)
            if (path == "/app" || path.starts_with("/app/") || path.starts_with("/v1/oauth/consent?"))
                && path.bytes().all(|b| b.is_ascii_graphic() && b != b'\\')
                && !path.starts_with("//")
                && path.len() <= 512 =>
        {
            path.to_owned()
        }
        _ => DEFAULT_RETURN.to_owned(),
    }
}

/// Starts a session for `subject` and answers the `Set-Cookie` value.
pub fn start<'a>(
    platform: &'a dyn Platform,
    subject: &'a str,
    display: &'a str,
) -> LocalBoxFuture<'a, Result<String, OAuthError>> {
    Box::pin(start_session(platform, subject, display))
}

async fn start_session(platform: &dyn Platform, subject: &str, display: &str) -> Result<String, OAuthError> {
    let secret = tokens::new_secret();
    let op = AccountOp::CreateSession {
        subject: subject.to_owned(),
        display: display.to_owned(),
        secret_hash: tokens::hash(&secret),
        expires_at: platform.now_ms() + SESSION_TTL_MS,
    };
    match platform.objects().account(AccountAddr::Workspace(workspace_id_for(subject)), op).await {
        Ok(AccountReply::SessionCreated { route }) => Ok(set_cookie(
            SESSION_COOKIE,
            &tokens::format(Kind::Session, &route, &secret),
            SESSION_TTL_MS / 1000,
        )),
        Ok(other) => Err(OAuthError::unavailable(format!("session creation answered {}", other.kind()))),
        Err(e) => Err(OAuthError::unavailable(format!("session creation: {e}"))),
    }
}

/// Ends the request's session server-side (best effort: the cookie is cleared regardless).
fn end<'a>(req: &'a HttpRequest, platform: &'a dyn Platform) -> LocalBoxFuture<'a, ()> {
    Box::pin(end_session(req, platform))
}

async fn end_session(req: &HttpRequest, platform: &dyn Platform) {
    if let Some(opaque) = cookie(req, SESSION_COOKIE).and_then(|v| tokens::parse(Kind::Session, v)) {
        let op = AccountOp::DeleteSession { secret_hash: tokens::hash(&opaque.secret) };
        let _ = platform.objects().account(AccountAddr::Route(opaque.route), op).await;
    }
}

/// What the sign-in page says it is for.
pub struct SigninContext<'a> {
    /// The app being connected, when signing in on the way to consent.
    pub client_name: Option<&'a str>,
}

/// The sign-in page: the OpenID provider's button and, on a loopback deployment, the
/// development form. `return_to` must already be safe.
pub fn signin_page(
    config: &Config,
    browser: &Browser,
    return_to: &str,
    cx: &SigninContext<'_>,
    notice: Option<&str>,
) -> HttpResponse {
    let title = match cx.client_name {
        Some(name) => format!("Sign in to connect {name} to VibeSell"),
        None => "Sign in to VibeSell".to_owned(),
    };
    let csrf = browser.csrf(&format!("signin|{return_to}"));
    let query = crate::form::encode(&[("return_to", return_to), ("csrf", &csrf)]);
    let body = html! {
        h1 { (title) }
        @if let Some(notice) = notice { p class="warn" { (notice) } }
        @if let Some(oidc) = &config.oidc {
            // A link, not a form: it leads to the provider, whose origin the page's form-action
            // would otherwise have to name before the provider's metadata is even fetched.
            div class="actions" {
                a class="button primary" href={ (SIGNIN_OIDC_PATH) "?" (query) } { "Continue with " (oidc.name) }
            }
        }
        @if config.is_local() {
            @if config.oidc.is_some() { hr; }
            form method="post" action=(SIGNIN_DEV_PATH) data-form="dev-signin" {
                p class="muted" {
                    "Development sign-in: this server runs on a loopback address, so any email address signs \
                     in, without a password."
                }
                label for="email" { "Email" }
                input type="email" id="email" name="email" required autocomplete="email" maxlength="254";
                input type="hidden" name="return_to" value=(return_to);
                input type="hidden" name="csrf" value=(csrf);
                div class="actions" { button class="primary" type="submit" { "Sign in" } }
            }
        }
        @if config.oidc.is_none() && !config.is_local() {
            p { "Sign-in is not configured on this server yet. Please try again later." }
        }
    };
    let page = Page {
        status: 200,
        title: "Sign in".into(),
        name: "signin",
        error: None,
        body,
        form_targets: Vec::new(),
    };
    page.render().with("set-cookie", browser.cookie())
}

/// `GET /app/signin`.
pub async fn signin(req: &HttpRequest, config: &Config, platform: &dyn Platform) -> HttpResponse {
    let query = Form::parse(req.query.as_deref().unwrap_or("").as_bytes());
    let return_to = safe_return_to(query.get("return_to").ok().flatten());
    match signed_in(req, platform).await {
        Ok(Some(_)) => pages::redirect(&return_to),
        Ok(None) => {
            signin_page(config, &Browser::of(req), &return_to, &SigninContext { client_name: None }, None)
        }
        Err(e) => unavailable_page(&e),
    }
}

/// The signed-in user behind a page's form POST, or the page that refuses it: 403 when the
/// session ended between showing the form and posting it (`next` says what to do), 503 when
/// storage failed. Nothing is changed either way.
pub(crate) async fn signed_in_or_refused(
    req: &HttpRequest,
    platform: &dyn Platform,
    trace: &mut Trace,
    next: &str,
) -> Result<Session, HttpResponse> {
    match signed_in(req, platform).await {
        Ok(Some(session)) => Ok(session),
        Ok(None) => {
            trace.outcome = "refused";
            Err(pages::error(403, "signed_out", "You are signed out", next))
        }
        Err(e) => Err(unavailable_page(&e)),
    }
}

pub(crate) fn unavailable_page(e: &OAuthError) -> HttpResponse {
    pages::error(
        503,
        "unavailable",
        "VibeSell is briefly unavailable",
        &format!("{} Reload the page in a moment.", e.description),
    )
}

/// Checks the form POSTs of the pages: form encoding, size, and no cross-site `Origin`. A refusal
/// is logged as `refused`.
pub(crate) fn page_form(req: &HttpRequest, config: &Config, trace: &mut Trace) -> Result<Form, HttpResponse> {
    let refuse = |trace: &mut Trace, status, code, title, next| {
        trace.outcome = "refused";
        trace.detail = Some(format!("page form: {title}"));
        Err(pages::error(status, code, title, next))
    };
    if req.header("origin").is_some_and(|o| !config.is_own_origin(o)) {
        return refuse(
            trace,
            403,
            "csrf",
            "This form came from another site",
            "Nothing was changed. Start again from VibeSell.",
        );
    }
    if !form::is_form_content_type(req.header("content-type")) {
        return refuse(trace, 400, "invalid_request", "Unexpected form", "Send the form as the page does.");
    }
    match req.body.as_deref() {
        Some(body) if body.len() <= MAX_OAUTH_BODY_BYTES => Ok(Form::parse(body)),
        _ => refuse(trace, 400, "invalid_request", "The form is too large", "Nothing was changed."),
    }
}

pub(crate) fn csrf_refused() -> HttpResponse {
    pages::error(
        403,
        "csrf",
        "This form has expired",
        "The form did not come from this browser's session with VibeSell, so nothing was done. Go back, reload the page and try again.",
    )
}

/// A development sign-in address: `local@domain`, lower-cased.
fn dev_email(raw: &str) -> Option<String> {
    let email = raw.trim().to_ascii_lowercase();
    let (local, domain) = email.split_once('@')?;
    let local_ok = !local.is_empty()
        && local.len() <= 64
        && local.bytes().all(|b| b.is_ascii_alphanumeric() || b"._+-".contains(&b));
    let domain_ok = domain.contains('.')
        && !domain.starts_with('.')
        && !domain.ends_with('.')
        && domain.bytes().all(|b| b.is_ascii_alphanumeric() || b".-".contains(&b));
    (local_ok && domain_ok && email.len() <= 254).then_some(email)
}

/// `POST /app/signin/dev`: the development sign-in, refused unless `PUBLIC_URL` is loopback.
pub async fn dev_signin(
    req: &HttpRequest,
    config: &Config,
    platform: &dyn Platform,
    trace: &mut Trace,
) -> HttpResponse {
    if !config.is_local() {
        trace.outcome = "http_error";
        return pages::error(404, "not_found", "Not found", "There is no such page.");
    }
    let form = match page_form(req, config, trace) {
        Ok(form) => form,
        Err(page) => return page,
    };
    let return_to = safe_return_to(form.get("return_to").ok().flatten());
    let csrf_ok = Browser::existing(req).is_some_and(|b| {
        form.get("csrf").ok().flatten().is_some_and(|c| b.check_csrf(&format!("signin|{return_to}"), c))
    });
    if !csrf_ok {
        trace.outcome = "refused";
        trace.detail = Some("csrf".into());
        return csrf_refused();
    }
    if let Err(e) =
        ratelimit::check(platform.objects(), req, "authorize", config.rate_limits.authorize, trace).await
    {
        return pages::error(429, "too_many_requests", "Too many attempts", &e.description)
            .with("retry-after", e.retry_after_secs.unwrap_or(60).to_string());
    }
    let Some(email) = form.get("email").ok().flatten().and_then(dev_email) else {
        trace.outcome = "refused";
        let browser = Browser::of(req);
        let mut page = signin_page(
            config,
            &browser,
            &return_to,
            &SigninContext { client_name: None },
            Some("Enter a valid email address."),
        );
        page.status = 400;
        return page;
    };
    end(req, platform).await;
    match start(platform, &email, &email).await {
        Ok(cookie) => {
            trace.outcome = "ok";
            pages::redirect(&return_to).with("set-cookie", cookie)
        }
        Err(e) => {
            trace.outcome = "http_error";
            trace.detail = e.log.clone();
            unavailable_page(&e)
        }
    }
}

/// `POST /app/signout`.
pub async fn signout(
    req: &HttpRequest,
    config: &Config,
    platform: &dyn Platform,
    trace: &mut Trace,
) -> HttpResponse {
    let form = match page_form(req, config, trace) {
        Ok(form) => form,
        Err(page) => return page,
    };
    let return_to = safe_return_to(form.get("return_to").ok().flatten());
    match signed_in(req, platform).await {
        Ok(Some(session)) => {
            if !form.get("csrf").ok().flatten().is_some_and(|c| session.check_csrf("signout", c)) {
                trace.outcome = "refused";
                return csrf_refused();
            }
            end(req, platform).await;
            pages::redirect(&sign_in_url(&return_to)).with("set-cookie", clear_cookie(SESSION_COOKIE))
        }
        Ok(None) => {
            pages::redirect(&sign_in_url(&return_to)).with("set-cookie", clear_cookie(SESSION_COOKIE))
        }
        Err(e) => unavailable_page(&e),
    }
}

/// The sign-out form (a button) for a page's header.
pub fn signout_form(session: &Session, return_to: &str, label: &str) -> Markup {
    html! {
        form class="inline" method="post" action=(SIGNOUT_PATH) {
            input type="hidden" name="csrf" value=(session.csrf("signout"));
            input type="hidden" name="return_to" value=(return_to);
            button class="link" type="submit" { (label) }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_cookies_and_paths() {
        let req = HttpRequest {
            headers: vec![
                ("cookie".into(), "a=1; __Host-vs_browser=x".into()),
                ("cookie".into(), "__Host-vs_session=y".into()),
            ],
            ..HttpRequest::default()
        };
        assert_eq!(cookie(&req, "a"), Some("1"));
        assert_eq!(cookie(&req, SESSION_COOKIE), Some("y"));
        assert!(Browser::existing(&req).is_none(), "not a well-formed binding");
        assert_eq!(safe_return_to(Some("/app/approvals/apr_1")), "/app/approvals/apr_1");
        assert_eq!(safe_return_to(Some("/v1/oauth/consent?request=ab")), "/v1/oauth/consent?request=ab");
        for bad in [
            "https://evil.example/app",
            "//evil.example/app",
            "/app\\..",
            "/other",
            "/appx",
            "/app/\0",
            "/app/\t",
            "/app/ x",
            "/app/\u{7f}",
            "/app/€",
        ] {
            assert_eq!(safe_return_to(Some(bad)), DEFAULT_RETURN, "{bad}");
        }
        assert_eq!(sign_in_url("/app/x?y=1"), "/app/signin?return_to=%2Fapp%2Fx%3Fy%3D1");
    }

    #[test]
    fn csrf_tokens_are_bound_to_the_cookie_and_purpose() {
        let a = Browser { secret: tokens::new_secret() };
        let b = Browser { secret: tokens::new_secret() };
        let t = a.csrf("signin|/app");
        assert!(a.check_csrf("signin|/app", &t));
        assert!(!a.check_csrf("signin|/app/other", &t));
        assert!(!b.check_csrf("signin|/app", &t));
        assert!(!a.check_csrf("signin|/app", ""));
        let cookie = a.cookie();
        assert!(cookie.starts_with("__Host-vs_browser="));
        for attr in ["Path=/", "Secure", "HttpOnly", "SameSite=Lax"] {
            assert!(cookie.contains(attr), "{attr}");
        }
        assert!(!cookie.contains("Domain"));
    }

    #[test]
    fn accepts_only_plain_email_addresses() {
        assert_eq!(dev_email(" Dev-User@Example.com ").as_deref(), Some("dev-user@example.com"));
        for bad in ["", "a", "a@b", "@b.c", "a@.b.c", "a b@c.d", "a@c.d\"><script>", "a@b@c.d"] {
            assert!(dev_email(bad).is_none(), "{bad}");
        }
    }

    #[test]
    fn every_field_of_the_signin_page_is_escaped() {
        use crate::html::tests::{EVIL, assert_escaped};
        let local = crate::testing::test_config();
        let mut with_oidc = crate::testing::test_config();
        with_oidc.oidc = Some(crate::config::OidcProvider {
            issuer: "https://id.example".into(),
            client_id: "vibesell".into(),
            client_secret: None,
            name: EVIL.into(),
        });
        let named = SigninContext { client_name: Some(EVIL) };
        let plain = SigninContext { client_name: None };
        let cases = [
            ("client name", &local, "/app", &named, None),
            ("notice", &local, "/app", &plain, Some(EVIL)),
            ("return_to", &local, EVIL, &plain, None),
            ("provider name", &with_oidc, "/app", &plain, None),
        ];
        for (field, config, return_to, cx, notice) in cases {
            let page = signin_page(config, &Browser::for_test(), return_to, cx, notice);
            assert_escaped(&String::from_utf8(page.body).unwrap(), field);
        }
        let label = signout_form(&Session::for_test("a@b.c"), EVIL, EVIL).into_string();
        assert_escaped(&label, "sign-out return_to and label");
    }
}

//! The server-rendered pages of the authorization server and the account: plain HTML from this
//! Worker with one inline stylesheet, no script and no third-party resource.
//!
//! Every page goes out with the headers RFC 9700 §4.16 and the MCP security best practices ask
//! for: a Content-Security-Policy with `frame-ancestors 'none'` (and `X-Frame-Options: DENY` for
//! older browsers) against clickjacking, `default-src 'none'` with the stylesheet allowed by its
//! hash, `form-action` limited to this origin and the one place a form may lead (the client's
//! redirect URI after consent), `Cache-Control: no-store`, and `Referrer-Policy: same-origin` so
//! that no URL of the flow leaks to another site (not `no-referrer`: browsers then send
//! `Origin: null` on the pages' own form posts, and the posts' Origin check could not tell them
//! from a sandboxed frame's). Pages are `maud` templates (`crate::html`): all untrusted
//! text (client names, URIs, emails) is escaped by them. Each page's `<main>` names the page and, for errors, a stable error
//! code in `data-error`, which the tests check.

use std::sync::OnceLock;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use maud::{DOCTYPE, Markup, html};
use sha2::{Digest, Sha256};

use crate::http::HttpResponse;

const CSS: &str = "\
:root{color-scheme:light dark;--fg:#16181d;--muted:#5b6170;--bg:#f4f5f8;--card:#fff;--line:#dfe2e8;--accent:#3b5bdb;--accent-fg:#fff;--warn:#8a5a00;--warn-bg:#fff6e0;--bad:#b42318}\
@media (prefers-color-scheme:dark){:root{--fg:#e9ebf0;--muted:#a2a8b5;--bg:#111318;--card:#1b1e25;--line:#2c313b;--accent:#7b93ff;--accent-fg:#0b0d12;--warn:#ffcf70;--warn-bg:#2e2410;--bad:#ff8a80}}\
*{box-sizing:border-box}body{margin:0;font:16px/1.5 system-ui,-apple-system,\"Segoe UI\",Roboto,sans-serif;background:var(--bg);color:var(--fg)}\
main{max-width:30rem;margin:6vh auto;padding:2rem;background:var(--card);border:1px solid var(--line);border-radius:14px}\
.brand{font-weight:700;letter-spacing:.02em;color:var(--accent)}h1{font-size:1.35rem;line-height:1.3;margin:.6rem 0 1rem}\
p{margin:.5rem 0}.muted{color:var(--muted);font-size:.9rem}code{font:.9em ui-monospace,SFMono-Regular,Menlo,monospace;overflow-wrap:anywhere}\
dl{display:grid;grid-template-columns:auto 1fr;gap:.35rem 1rem;margin:1rem 0}dt{color:var(--muted)}dd{margin:0;overflow-wrap:anywhere}\
.warn{background:var(--warn-bg);color:var(--warn);padding:.75rem 1rem;border-radius:10px;font-size:.92rem}\
fieldset{border:1px solid var(--line);border-radius:10px;margin:1rem 0;padding:.5rem 1rem}legend{color:var(--muted);padding:0 .3rem}\
label.choice{display:flex;gap:.6rem;align-items:flex-start;padding:.45rem 0}label.choice span{display:block}\
input[type=email]{width:100%;padding:.6rem .7rem;border:1px solid var(--line);border-radius:8px;font:inherit;background:var(--bg);color:var(--fg)}\
.actions{display:flex;gap:.75rem;justify-content:flex-end;margin-top:1.25rem;flex-wrap:wrap}\
button,.button{font:inherit;padding:.6rem 1.1rem;border-radius:8px;border:1px solid var(--line);background:var(--card);color:var(--fg);cursor:pointer;text-decoration:none;display:inline-block}\
button.primary,.button.primary{background:var(--accent);border-color:var(--accent);color:var(--accent-fg);font-weight:600}\
button.link{border:0;padding:0;background:none;color:var(--accent);font-size:inherit;text-decoration:underline}\
form.inline{display:inline}hr{border:0;border-top:1px solid var(--line);margin:1.25rem 0}\
ul.apps{list-style:none;padding:0;margin:1rem 0}ul.apps li{display:flex;justify-content:space-between;gap:1rem;align-items:center;padding:.75rem 0;border-top:1px solid var(--line)}\
.error h1{color:var(--bad)}";

/// `'sha256-…'` of the stylesheet, for the CSP.
fn style_hash() -> &'static str {
    static HASH: OnceLock<String> = OnceLock::new();
    HASH.get_or_init(|| csp_hash(CSS))
}

/// The CSP source expression that allows exactly this inline `<style>` or `<script>` text.
pub fn csp_hash(text: &str) -> String {
    format!("'sha256-{}'", STANDARD.encode(Sha256::digest(text.as_bytes())))
}

/// The Content-Security-Policy of a page: nothing but the inline styles and scripts named by
/// their hashes, `data:` images, forms to this origin and `form_targets`, and no framing.
pub fn content_security_policy(styles: &[&str], scripts: &[&str], form_targets: &[String]) -> String {
    let mut form_action = String::from("'self'");
    for target in form_targets {
        // Origins come from validated URLs; anything else is left out rather than trusted.
        if target.bytes().all(|b| b.is_ascii_alphanumeric() || b":/.-[]".contains(&b)) {
            form_action.push(' ');
            form_action.push_str(target);
        }
    }
    let script_src =
        if scripts.is_empty() { String::new() } else { format!("script-src {}; ", scripts.join(" ")) };
    format!(
        "default-src 'none'; {script_src}style-src {}; img-src data:; form-action {form_action}; frame-ancestors 'none'; base-uri 'none'",
        styles.join(" ")
    )
}

/// A page to render.
#[derive(Debug, Clone)]
pub struct Page {
    /// HTTP status.
    pub status: u16,
    /// The `<title>` (before " · VibeSell").
    pub title: String,
    /// Names the page in `data-page`.
    pub name: &'static str,
    /// A stable error code for `data-error`, on error pages.
    pub error: Option<&'static str>,
    /// The markup inside `<main>`, after the brand line.
    pub body: Markup,
    /// Origins a form on this page may lead to besides this one.
    pub form_targets: Vec<String>,
}

impl Page {
    /// Renders the page with its security headers.
    pub fn render(self) -> HttpResponse {
        let html = html! {
            (DOCTYPE)
            html lang="en" {
                head {
                    meta charset="utf-8";
                    meta name="viewport" content="width=device-width, initial-scale=1";
                    meta name="referrer" content="same-origin";
                    title { (self.title) " · VibeSell" }
                    (crate::html::style(CSS))
                }
                body {
                    main data-page=(self.name) data-error=[self.error] class=[self.error.map(|_| "error")] {
                        div class="brand" { "VibeSell" }
                        (self.body)
                    }
                }
            }
        };
        let csp = content_security_policy(&[style_hash()], &[], &self.form_targets);
        security_headers(HttpResponse::new(self.status, "text/html; charset=utf-8", html.into_string()))
            .with("content-security-policy", csp)
    }
}

/// The headers every page and every redirect of the browser flow carries.
pub fn security_headers(response: HttpResponse) -> HttpResponse {
    response
        .with("cache-control", "no-store")
        .with("pragma", "no-cache")
        .with("x-frame-options", "DENY")
        .with("referrer-policy", "same-origin")
        .with("cross-origin-opener-policy", "same-origin")
}

/// A 303 redirect (never 307: a POST body must not follow, RFC 9700 §4.12), with the page
/// headers.
pub fn redirect(location: &str) -> HttpResponse {
    security_headers(HttpResponse::empty(303).with("location", location))
}

/// An error page.
pub fn error(status: u16, code: &'static str, title: &str, message: &str) -> HttpResponse {
    Page {
        status,
        title: title.to_owned(),
        name: "error",
        error: Some(code),
        body: html! { h1 { (title) } p { (message) } },
        form_targets: Vec::new(),
    }
    .render()
}

/// An error the client should hear about, when its redirect URI is not one we trust to bounce
/// the user to automatically (RFC 9700 §4.11.2: an authorization server must not become an open
/// redirector for a client anyone could register). The user sees what happened and may go back.
pub fn error_with_return(
    status: u16,
    code: &'static str,
    message: &str,
    host: &str,
    href: &str,
) -> HttpResponse {
    Page {
        status,
        title: "This app's request cannot be completed".into(),
        name: "error",
        error: Some(code),
        body: html! {
            h1 { "This app's request cannot be completed" }
            p { (message) }
            p class="muted" { "Going back tells the app what went wrong." }
            div class="actions" { a class="button" href=(href) { "Back to " (host) } }
        },
        form_targets: Vec::new(),
    }
    .render()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn page() -> Page {
        Page {
            status: 200,
            title: "Test".into(),
            name: "test",
            error: None,
            body: html! {},
            form_targets: Vec::new(),
        }
    }

    #[test]
    fn escapes_and_sets_the_headers() {
        let r = Page {
            status: 200,
            title: "<t>".into(),
            name: "test",
            body: html! { p { "hi" } },
            form_targets: vec![
                "https://claude.ai".into(),
                "javascript:alert(1)".into(),
                "x; script-src *".into(),
            ],
            ..page()
        }
        .render();
        let csp = r.header("content-security-policy").unwrap();
        assert!(csp.contains("frame-ancestors 'none'"));
        assert!(csp.contains("default-src 'none'"));
        assert!(csp.contains("form-action 'self' https://claude.ai;"), "{csp}");
        assert!(!csp.contains("javascript") && !csp.contains("script-src *"));
        assert!(csp.contains(style_hash()));
        assert_eq!(r.header("x-frame-options"), Some("DENY"));
        assert_eq!(r.header("cache-control"), Some("no-store"));
        assert_eq!(r.header("referrer-policy"), Some("same-origin"));
        let html = String::from_utf8(r.body).unwrap();
        assert!(html.contains("<title>&lt;t&gt; · VibeSell</title>"));
        assert!(!html.contains("<script"), "no script on any page");
        assert!(!html.contains("http://") && !html.contains("https://"), "no third-party resource");
    }

    #[test]
    fn every_field_of_the_error_pages_is_escaped() {
        use crate::html::tests::{EVIL, assert_escaped};
        let cb = "https://app.example/cb";
        let cases = [
            ("error title", error(400, "x", EVIL, "message")),
            ("error description", error(400, "x", "title", EVIL)),
            ("error description with a way back", error_with_return(400, "x", EVIL, "app.example", cb)),
            ("client host", error_with_return(400, "x", "message", EVIL, cb)),
            ("redirect URI", error_with_return(400, "x", "message", "app.example", EVIL)),
            ("page title", Page { title: EVIL.into(), ..page() }.render()),
        ];
        for (field, r) in cases {
            let page = String::from_utf8(r.body).unwrap();
            assert_escaped(&page, field);
            assert!(!page.contains("<script"), "{field}: no script on any page");
        }
    }
}

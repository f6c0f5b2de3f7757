//! `/u/<token>`: the unsubscribe link every email carries (PRODUCT §8, DOMAIN §3.7, §6.1).
//!
//! `GET` shows a page with one button (link scanners that fetch every link must not unsubscribe
//! anyone); `POST` unsubscribes at once, with no sign-in and no further page, which is also what
//! a mailbox provider's one-click request (RFC 8058, body `List-Unsubscribe=One-Click`) does.
//! The token is verified first (a MAC over the workspace and the address's hash, never the
//! address); the workspace then suppresses the address and mirrors it to the sending platform.

use maud::html;

use crate::billing_http::page;
use crate::compliance::{UNSUBSCRIBE_PATH, verify_unsubscribe_token};
use crate::config::Config;
use crate::http::{HttpRequest, HttpResponse, Platform};
use crate::mcp::Trace;
use crate::workspace::{Op, OpReply};

fn invalid(trace: &mut Trace) -> HttpResponse {
    trace.outcome = "http_error";
    page(
        404,
        "Link not valid",
        html! {
            h1 { "This unsubscribe link is not valid" }
            p { "Reply to the email with \"unsubscribe\" and the sender will remove you." }
        },
    )
}

/// Handles `GET`/`HEAD` (the page) and `POST` (the unsubscribe) on `/u/<token>`.
pub async fn handle(
    req: &HttpRequest,
    config: &Config,
    platform: &dyn Platform,
    trace: &mut Trace,
) -> HttpResponse {
    let token = req.path.strip_prefix(UNSUBSCRIBE_PATH).unwrap_or_default();
    if token.is_empty() || token.len() > 300 || token.contains('/') {
        return invalid(trace);
    }
    let Some((workspace, hash)) = verify_unsubscribe_token(config, token) else { return invalid(trace) };
    match req.method.as_str() {
        "GET" | "HEAD" => page(
            200,
            "Unsubscribe",
            html! {
                h1 { "Unsubscribe" }
                p { "Stop receiving these emails? One click, and you will not be emailed again." }
                form method="post" action=(req.path) {
                    input type="hidden" name="List-Unsubscribe" value="One-Click";
                    button type="submit" { "Unsubscribe" }
                }
            },
        ),
        "POST" => match platform.workspaces().op(&workspace, Op::Unsubscribe { hash }).await {
            Ok(OpReply::Unsubscribed { company }) => page(
                200,
                "Unsubscribed",
                html! {
                    h1 { "You are unsubscribed" }
                    p { "You will not receive emails from " (company.as_deref().unwrap_or("this sender")) " again." }
                },
            ),
            Ok(_) => invalid(trace),
            Err(e) => {
                trace.outcome = "http_error";
                trace.detail = Some(format!("unsubscribe: {e}"));
                page(
                    503,
                    "Try again",
                    html! { h1 { "Something went wrong" } p { "Please try again in a minute." } },
                )
            }
        },
        _ => {
            trace.outcome = "http_error";
            HttpResponse::empty(405).with("allow", "GET, HEAD, POST")
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::compliance::unsubscribe_url;
    use crate::http::HttpRequest;
    use crate::store::Db;
    use crate::testing::{NOW_MS, TestPlatform, test_config};
    use crate::workspace::{migrations, suppression};

    fn request(method: &str, url: &str, body: &str) -> HttpRequest {
        HttpRequest {
            method: method.into(),
            path: url.trim_start_matches("http://127.0.0.1:8787").to_owned(),
            query: None,
            headers: vec![("host".into(), "127.0.0.1:8787".into())],
            body: Some(body.as_bytes().to_vec()),
        }
    }

    #[test]
    fn the_link_shows_a_button_and_one_click_unsubscribes() {
        let platform = TestPlatform::new();
        let db = platform.db("ws_1");
        migrations::apply(&*db, NOW_MS).unwrap();
        let db: &dyn Db = &*db;
        db.exec(
            "INSERT INTO leads (email, email_hash, first_name, last_name, title, company, provider, provider_id, import_id, imported_at) \
             VALUES ('jane@acme.example', ?, 'Jane', 'Doe', 'CFO', 'Acme', 'sandbox', 'p1', 'imp', 0)",
            vec![crate::compliance::email_hash("jane@acme.example").into()],
        )
        .unwrap();
        let url = unsubscribe_url(&test_config(), "ws_1", "jane@acme.example");
        let (page, _) = platform.send(&request("GET", &url, ""));
        assert_eq!(page.status, 200);
        let html = String::from_utf8(page.body).unwrap();
        assert!(
            html.contains("<form method=\"post\"") && !html.contains("jane"),
            "a button, and never the address"
        );
        assert!(
            !suppression::is_suppressed(db, "jane@acme.example").unwrap(),
            "looking is not unsubscribing"
        );
        // RFC 8058 one-click: a POST with List-Unsubscribe=One-Click, no sign-in.
        let (done, _) = platform.send(&request("POST", &url, "List-Unsubscribe=One-Click"));
        assert_eq!(done.status, 200);
        assert!(String::from_utf8(done.body).unwrap().contains("You are unsubscribed"));
        assert!(suppression::is_suppressed(db, "jane@acme.example").unwrap());
        // Again: still fine, nothing more.
        assert_eq!(platform.send(&request("POST", &url, "")).0.status, 200);
        // A forged or broken token is refused.
        let (forged, _) = platform.send(&request("GET", &format!("{url}x"), ""));
        assert_eq!(forged.status, 404);
        let (bad, _) = platform.send(&request("POST", "/u/not-a-token", ""));
        assert_eq!(bad.status, 404);
        assert_eq!(platform.send(&request("DELETE", &url, "")).0.status, 405);
    }

    #[test]
    fn the_sender_s_name_is_escaped_on_the_unsubscribed_page() {
        use crate::html::tests::{EVIL, assert_escaped};
        let platform = TestPlatform::new();
        let db = platform.db("ws_1");
        migrations::apply(&*db, NOW_MS).unwrap();
        let db: &dyn Db = &*db;
        let offer = crate::workspace::offer::Offer {
            company_name: Some(EVIL.into()),
            ..crate::emails::render::tests::offer()
        };
        crate::workspace::offer::save(db, &offer, NOW_MS).unwrap();
        let url = unsubscribe_url(&test_config(), "ws_1", "jane@acme.example");
        let (done, _) = platform.send(&request("POST", &url, "List-Unsubscribe=One-Click"));
        assert_eq!(done.status, 200);
        assert_escaped(&String::from_utf8(done.body).unwrap(), "sending company");
    }
}

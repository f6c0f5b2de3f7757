//! The web pages through `http::route`, natively: a cookie jar signs in with the development
//! sign-in, approvals are made with the `probe` test action (whose executions are counted), and
//! every page is read as a browser gets it.

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde_json::Value;

use super::*;
use crate::auth::ScopeSet;
use crate::oauth::flow_tests::{Jar, hidden, html, location};
use crate::oauth::session::SESSION_COOKIE;
use crate::testing::{PROBE_CALLS, Probe, ProbeArgs, ProbeOutcome, TestPlatform, block_on, principal};
use crate::tools::ToolCx;
use crate::workspace::{approvals, workspace_id_for};

const ALICE: &str = "alice@example.com";
const BOB: &str = "bob@example.com";

/// Signs `email` in through the development sign-in, starting from `path`; answers the page
/// the sign-in led back to.
fn sign_in(p: &TestPlatform, jar: &Jar, path: &str, email: &str) -> HttpResponse {
    let r = jar.get(p, path);
    assert_eq!(r.status, 303, "{}", html(&r));
    let signin = location(&r);
    assert_eq!(signin, session::sign_in_url(path));
    let page = jar.get(p, &signin);
    assert!(html(&page).contains("data-form=\"dev-signin\""));
    let r = jar.post(
        p,
        "/app/signin/dev",
        &[
            ("email", email),
            ("return_to", &hidden(&html(&page), "return_to")),
            ("csrf", &hidden(&html(&page), "csrf")),
        ],
    );
    assert_eq!(r.status, 303, "{}", html(&r));
    assert_eq!(location(&r), path, "back where they started");
    jar.get(p, path)
}

/// Asks for a `probe` approval in `email`'s workspace, as an approval tool does; answers its id.
fn ask(p: &TestPlatform, email: &str, label: &str) -> String {
    let mut who = principal(ScopeSet::FULL, false);
    who.subject = email.into();
    who.workspace = workspace_id_for(email);
    let db = p.db(&who.workspace);
    let config = crate::testing::test_config();
    crate::workspace::open(&*db, &who, p.now_ms.get()).unwrap();
    let cx = ToolCx {
        db: &*db,
        principal: &who,
        config: &config,
        now_ms: p.now_ms.get(),
        request_id: "req_web",
        outbound: &crate::outbound::NoNetwork,
    };
    let args = ProbeArgs { label: label.into(), outcome: ProbeOutcome::Ok };
    block_on(approvals::request(&cx, &Probe, args)).unwrap().data.approval.id
}

fn probes() -> usize {
    PROBE_CALLS.with(|c| c.borrow().len())
}

/// The page's JSON data block, as `card.js` reads it.
fn data(page: &str) -> Value {
    let start = page.find(r#"<script type="application/json" id="vibesell-page">"#).expect("data block") + 51;
    let end = start + page[start..].find("</script>").unwrap();
    serde_json::from_str(&page[start..end]).unwrap()
}

/// The CSRF token of the page's plain decision form (the bar's sign-out form has its own).
fn form_csrf(page: &str) -> String {
    hidden(&page[page.find(r#"data-form="decide""#).expect("a decision form")..], "csrf")
}

fn decide(p: &TestPlatform, jar: &Jar, id: &str, csrf: &str, decision: &str) -> HttpResponse {
    jar.post(p, &format!("{APPROVAL_PREFIX}{id}"), &[("csrf", csrf), ("decision", decision)])
}

#[test]
fn signed_out_visitors_sign_in_and_come_back() {
    let p = TestPlatform::new();
    let id = ask(&p, ALICE, "welcome");
    let jar = Jar::default();
    let home = sign_in(&p, &jar, HOME_PATH, ALICE);
    assert_eq!(home.status, 200);
    assert!(html(&home).contains(r#"data-page="home""#));
    let jar = Jar::default();
    let page = sign_in(&p, &jar, &format!("{APPROVAL_PREFIX}{id}"), ALICE);
    assert_eq!(page.status, 200);
    assert!(html(&page).contains("Probe welcome"));
    // A decision sent without a session decides nothing and leads to sign-in.
    let stranger = Jar::default();
    let r = decide(&p, &stranger, &id, "x", "approve");
    assert_eq!(r.status, 303);
    assert_eq!(location(&r), session::sign_in_url(&format!("{APPROVAL_PREFIX}{id}")));
    assert_eq!(probes(), 0);
}

#[test]
fn the_owner_approves_exactly_once_and_sees_the_outcome() {
    let p = TestPlatform::new();
    let id = ask(&p, ALICE, "irreversible launch");
    let jar = Jar::default();
    let page = sign_in(&p, &jar, &format!("{APPROVAL_PREFIX}{id}"), ALICE);
    assert_eq!(page.status, 200);
    let body = html(&page);
    for text in [
        "Probe irreversible launch",
        "Writes the probe irreversible launch",
        "$1",
        "can't be undone",
        "Waiting for you",
    ] {
        assert!(body.contains(text), "the page shows {text}");
    }
    assert!(body.contains(r#"data-form="decide""#));
    let d = data(&body);
    assert_eq!(d["results"][0]["kind"], "approval");
    assert_eq!(d["results"][0]["id"], id.as_str());
    assert_eq!(d["results"][0]["decideHere"], true);
    let csrf = d["decide"]["csrf"].as_str().unwrap().to_owned();
    assert_eq!(form_csrf(&body), csrf, "the plain form and the card's form carry the same token");
    assert_eq!(d["decide"]["action"], format!("{APPROVAL_PREFIX}{id}"));

    let r = decide(&p, &jar, &id, &csrf, "approve");
    assert_eq!(r.status, 303, "{}", html(&r));
    assert_eq!(location(&r), format!("{APPROVAL_PREFIX}{id}"), "Post/Redirect/Get");
    assert_eq!(probes(), 1);
    let after = jar.get(&p, &format!("{APPROVAL_PREFIX}{id}"));
    let body = html(&after);
    assert!(body.contains("<strong>Done</strong>") && body.contains("Probed irreversible launch."));
    // What was approved, next to what was done (journey finding: the approved lines were headed
    // "What was done").
    assert!(body.contains("<h3>What was approved</h3>"), "{body}");
    assert!(!body.contains(r#"data-form="decide""#), "nothing left to decide");
    assert!(data(&body).get("decide").is_none());

    // The double submit: refused, says so, and nothing runs again.
    let again = decide(&p, &jar, &id, &csrf, "approve");
    assert_eq!(again.status, 409);
    assert!(html(&again).contains("already decided; nothing more was done"));
    let reject = decide(&p, &jar, &id, &csrf, "reject");
    assert_eq!(reject.status, 409);
    assert_eq!(probes(), 1, "executed exactly once");
    let trail = approvals::audit(&*p.db(&workspace_id_for(ALICE)), &id).unwrap();
    let decided: Vec<_> = trail.iter().filter(|e| e.from_status.as_deref() == Some("pending")).collect();
    assert_eq!(decided.len(), 1);
    assert_eq!((decided[0].actor.as_str(), decided[0].client.as_str()), (ALICE, "web"));
}

#[test]
fn reject_is_recorded_and_nothing_runs() {
    let p = TestPlatform::new();
    let id = ask(&p, ALICE, "campaign");
    let jar = Jar::default();
    let page = sign_in(&p, &jar, &format!("{APPROVAL_PREFIX}{id}"), ALICE);
    let r = decide(&p, &jar, &id, &form_csrf(&html(&page)), "reject");
    assert_eq!(r.status, 303);
    let body = html(&jar.get(&p, &format!("{APPROVAL_PREFIX}{id}")));
    assert!(body.contains("<strong>Rejected</strong>"));
    assert_eq!(probes(), 0);
}

#[test]
fn another_users_approval_and_an_unknown_one_are_the_same_404() {
    let p = TestPlatform::new();
    let id = ask(&p, ALICE, "private");
    let bob = Jar::default();
    sign_in(&p, &bob, HOME_PATH, BOB);
    let theirs = bob.get(&p, &format!("{APPROVAL_PREFIX}{id}"));
    let unknown = bob.get(&p, &format!("{APPROVAL_PREFIX}apr_{}", "0".repeat(32)));
    let malformed = bob.get(&p, &format!("{APPROVAL_PREFIX}{id}x"));
    assert_eq!((theirs.status, unknown.status, malformed.status), (404, 404, 404));
    assert_eq!(theirs.body, unknown.body, "nothing tells another user's approval from none");
    assert_eq!(theirs.body, malformed.body);
    assert!(!html(&theirs).contains(&id));
    // Even with a valid token of Bob's own session for that id, it stays Alice's.
    let cookie = bob.value(SESSION_COOKIE).unwrap();
    let secret = cookie.rsplit('_').next().unwrap();
    let token =
        URL_SAFE_NO_PAD.encode(crate::ids::hmac_sha256(secret.as_bytes(), csrf_purpose(&id).as_bytes()));
    let r = decide(&p, &bob, &id, &token, "approve");
    assert_eq!(r.status, 404);
    assert_eq!(r.body, unknown.body);
    assert_eq!(probes(), 0);
    let alice = Jar::default();
    let page = sign_in(&p, &alice, &format!("{APPROVAL_PREFIX}{id}"), ALICE);
    assert!(html(&page).contains("Waiting for you"), "still pending for its owner");
}

#[test]
fn a_missing_wrong_or_foreign_csrf_token_decides_nothing() {
    let p = TestPlatform::new();
    let id = ask(&p, ALICE, "one");
    let other = ask(&p, ALICE, "two");
    let jar = Jar::default();
    let page = sign_in(&p, &jar, &format!("{APPROVAL_PREFIX}{id}"), ALICE);
    let csrf = form_csrf(&html(&page));
    let other_page = jar.get(&p, &format!("{APPROVAL_PREFIX}{other}"));
    let other_csrf = form_csrf(&html(&other_page));
    assert_ne!(csrf, other_csrf, "each approval's form has its own token");

    let path = format!("{APPROVAL_PREFIX}{id}");
    for r in [
        jar.post(&p, &path, &[("decision", "approve")]),
        decide(&p, &jar, &id, "", "approve"),
        decide(&p, &jar, &id, &csrf[1..], "approve"),
        decide(&p, &jar, &id, &other_csrf, "approve"),
    ] {
        assert_eq!(r.status, 403, "{}", html(&r));
        assert!(html(&r).contains(r#"data-error="csrf""#));
    }
    // Another session of the same user has its own tokens.
    let second = Jar::default();
    sign_in(&p, &second, HOME_PATH, ALICE);
    assert_eq!(decide(&p, &second, &id, &csrf, "approve").status, 403);
    // A form posted from another site is refused before anything else.
    let cookie = format!("{SESSION_COOKIE}={}", jar.value(SESSION_COOKIE).unwrap());
    let body = format!("csrf={csrf}&decision=approve");
    let cross = crate::oauth::flow_tests::send(
        &p,
        crate::oauth::flow_tests::request(
            "POST",
            &path,
            &[
                ("cookie", &cookie),
                ("content-type", "application/x-www-form-urlencoded"),
                ("origin", "https://evil.example"),
            ],
            body.as_bytes(),
        ),
    );
    assert_eq!(cross.status, 403);
    // Neither approve nor reject: nothing.
    assert_eq!(decide(&p, &jar, &id, &csrf, "maybe").status, 400);
    assert_eq!(probes(), 0);
    assert!(html(&jar.get(&p, &path)).contains("Waiting for you"));
}

#[test]
fn an_expired_approval_shows_as_such_and_cannot_be_approved() {
    let p = TestPlatform::new();
    let id = ask(&p, ALICE, "late");
    let jar = Jar::default();
    let path = format!("{APPROVAL_PREFIX}{id}");
    let page = sign_in(&p, &jar, &path, ALICE);
    let csrf = form_csrf(&html(&page));
    p.advance(approvals::DEFAULT_TTL_MS + 1);
    let body = html(&jar.get(&p, &path));
    assert!(body.contains("<strong>Not done</strong>") && body.contains("Expired"));
    assert!(!body.contains(r#"data-form="decide""#), "no buttons");
    assert!(data(&body).get("decide").is_none());
    assert_eq!(data(&body)["results"][0]["decideHere"], false);
    let r = decide(&p, &jar, &id, &csrf, "approve");
    assert_eq!(r.status, 409);
    assert!(html(&r).contains("It expired before anyone decided"));
    assert_eq!(probes(), 0);
}

#[test]
fn home_shows_the_workspace_and_links_each_pending_approval() {
    let p = TestPlatform::new();
    let first = ask(&p, ALICE, "first");
    p.advance(1000);
    let second = ask(&p, ALICE, "second");
    let jar = Jar::default();
    let page = sign_in(&p, &jar, HOME_PATH, ALICE);
    let body = html(&page);
    for id in [&first, &second] {
        assert!(body.contains(&format!(r#"<a href="{APPROVAL_PREFIX}{id}">"#)), "links {id}");
    }
    assert!(body.contains("Plan: Free"), "{body}");
    assert!(body.contains(r#"action="/app/signout""#), "sign-out");
    let d = data(&body);
    assert_eq!(d["results"][0]["kind"], "workspace");
    assert_eq!(d["results"][0]["pendingApprovalCount"], 2);
    assert_eq!(d["results"][1]["kind"], "approvals");
    assert_eq!(d["results"][1]["total"], 2);
    let approvals = d["results"][1]["approvals"].as_array().unwrap();
    assert!(approvals.iter().all(|a| a["decideHere"] == false), "decided on their own pages");
    assert_eq!(approvals[0]["appUrl"], format!("http://127.0.0.1:8787{APPROVAL_PREFIX}{second}"));
    assert_eq!(jar.post(&p, HOME_PATH, &[]).status, 405);
}

#[test]
fn pages_carry_the_security_headers_and_only_the_cards_own_script() {
    let p = TestPlatform::new();
    let id = ask(&p, ALICE, "headers");
    let jar = Jar::default();
    let page = sign_in(&p, &jar, &format!("{APPROVAL_PREFIX}{id}"), ALICE);
    for r in [&page, &jar.get(&p, HOME_PATH)] {
        let csp = r.header("content-security-policy").unwrap();
        assert!(csp.starts_with("default-src 'none'; "), "{csp}");
        assert!(csp.contains(&format!("script-src {};", card::SCRIPT_CSP)), "{csp}");
        assert!(csp.contains(card::STYLE_CSP) && csp.contains(css_hash()));
        assert!(csp.contains("frame-ancestors 'none'") && csp.contains("form-action 'self';"));
        assert!(!csp.contains("unsafe"), "{csp}");
        assert_eq!(r.header("x-frame-options"), Some("DENY"));
        assert_eq!(r.header("cache-control"), Some("no-store"));
        assert_eq!(r.header("referrer-policy"), Some("same-origin"));
        let body = html(r);
        assert!(body.contains(&format!("<script>{}</script>", card::script())));
        assert!(body.contains(&format!("<style>{}</style>", card::style())));
        assert!(!body.contains("<script src") && !body.contains("<link"), "no other resource");
    }
}

#[test]
fn text_from_the_workspace_cannot_become_markup() {
    let p = TestPlatform::new();
    let label = r#"</script><script>alert(1)</script><img src=x onerror="alert(2)"> & “quotes”"#;
    let id = ask(&p, ALICE, label);
    let jar = Jar::default();
    for path in [format!("{APPROVAL_PREFIX}{id}"), HOME_PATH.to_owned()] {
        let page = if path == HOME_PATH { jar.get(&p, &path) } else { sign_in(&p, &jar, &path, ALICE) };
        let body = html(&page);
        assert_eq!(body.matches("<script").count(), 2, "the data block and the card's script only");
        assert!(!body.contains("<img"));
        let d = data(&body);
        let summary = if path == HOME_PATH {
            d["results"][1]["approvals"][0]["summary"].clone()
        } else {
            d["results"][0]["summary"].clone()
        };
        assert_eq!(summary, format!("Probe {label}"), "the data block reads back as the same text");
    }
}

/// An approval replaced by a newer one (its figures changed) is not said to have expired.
#[test]
fn a_replaced_approval_is_not_called_expired() {
    let replaced = Approval {
        id: "apr_0123456789abcdef0123456789abcdef".into(),
        status: Status::NotDone,
        action: "upgrade_plan".into(),
        summary: "Upgrade from Starter to Growth ($149/month)".into(),
        impact: vec![],
        cost: None,
        irreversible: false,
        created_at: 0,
        expires_at: i64::MAX,
        decided_at: None,
        result: Some(approvals::REPLACED.into()),
        decide_here: false,
        app_url: String::new(),
    };
    let notice = unchanged_notice(&replaced);
    assert!(!notice.contains("expired") && notice.contains("newer approval"), "{notice}");
    // Named by its tool's title, not its name (journey finding).
    assert!(approval_fallback(&replaced, None).into_string().contains("Approval · Upgrade the plan</p>"));
    let expired =
        Approval { result: Some("Expired: the user did not decide before it expired.".into()), ..replaced };
    assert!(unchanged_notice(&expired).contains("expired"));
}

#[test]
fn every_field_of_the_web_pages_is_escaped() {
    use crate::html::tests::{EVIL, assert_escaped};
    let workspace = |product: &str, plan: &str, next: &str| serde_json::json!({ "offer": { "product": product }, "plan": { "name": plan }, "nextStep": { "title": next } });
    let approvals = |summary: &str| serde_json::json!({ "approvals": [{ "id": "apr_0123456789abcdef0123456789abcdef", "summary": summary, "expiresAt": 0 }] });
    let home = [
        ("offer product", workspace(EVIL, "Free", "Import leads"), approvals("Launch")),
        ("plan name", workspace("Ledgerly", EVIL, "Import leads"), approvals("Launch")),
        ("next step", workspace("Ledgerly", "Free", EVIL), approvals("Launch")),
        ("approval summary", workspace("Ledgerly", "Free", "Import leads"), approvals(EVIL)),
    ];
    for (field, w, a) in home {
        assert_escaped(&home_fallback(&w, &a).into_string(), field);
    }
    let approval = Approval {
        id: "apr_0123456789abcdef0123456789abcdef".into(),
        status: Status::Pending,
        action: "launch_campaign".into(),
        summary: "Launch".into(),
        impact: vec!["Sends 10 emails".into()],
        cost: None,
        irreversible: true,
        created_at: 0,
        expires_at: 0,
        decided_at: None,
        result: None,
        decide_here: true,
        app_url: String::new(),
    };
    let form = DecideForm { action: "/app/approvals/apr_1".into(), csrf: "c".into() };
    let cases = [
        ("action", Approval { action: EVIL.into(), ..approval.clone() }, &form),
        ("campaign summary", Approval { summary: EVIL.into(), ..approval.clone() }, &form),
        ("impact", Approval { impact: vec![EVIL.into()], ..approval.clone() }, &form),
        ("result", Approval { result: Some(EVIL.into()), ..approval.clone() }, &form),
        ("form action", approval.clone(), &DecideForm { action: EVIL.into(), csrf: "c".into() }),
        ("form csrf", approval, &DecideForm { action: "/app".into(), csrf: EVIL.into() }),
    ];
    for (field, a, form) in cases {
        assert_escaped(&approval_fallback(&a, Some(form)).into_string(), field);
    }
    // The page around them: its title, the signed-in email, a notice.
    let page = |title: &str, display: &str, notice: Option<&str>| {
        let user = Session::for_test(display);
        let page = AppPage {
            status: 200,
            title: title.into(),
            name: "approval",
            user: &user,
            return_to: HOME_PATH,
            notice: notice.map(str::to_owned),
            fallback: maud::html! {},
            data: serde_json::json!({ "results": [] }),
        };
        html(&page.render())
    };
    for (field, body) in [
        ("title", page(EVIL, "a@b.c", None)),
        ("email", page("t", EVIL, None)),
        ("notice", page("t", "a@b.c", Some(EVIL))),
    ] {
        assert_escaped(&body, field);
        assert_eq!(body.matches("<script").count(), 2, "{field}: the data block and the card's script only");
    }
}

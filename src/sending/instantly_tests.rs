use std::cell::RefCell;

use serde_json::{Value, json};

use super::*;
use crate::config::Secret;
use crate::outbound::{OutboundError, OutboundResponse};
use crate::sending::platform::{AccountSpec, OrderItem, StepSpec};
use crate::testing::{MemoryDb, NOW_MS, block_on};
use crate::tools::registry::LocalBoxFuture;

type Handler = Box<dyn Fn(&OutboundRequest, usize) -> Result<OutboundResponse, OutboundError>>;

/// A scripted Instantly: answers by method and path, records every request and every wait.
struct Fake {
    handler: Handler,
    requests: RefCell<Vec<OutboundRequest>>,
    sleeps: RefCell<Vec<u32>>,
}

impl Fake {
    fn new(
        handler: impl Fn(&OutboundRequest, usize) -> Result<OutboundResponse, OutboundError> + 'static,
    ) -> Self {
        Fake { handler: Box::new(handler), requests: RefCell::default(), sleeps: RefCell::default() }
    }
    fn paths(&self) -> Vec<String> {
        self.requests
            .borrow()
            .iter()
            .map(|r| format!("{} {}", r.method, r.url.trim_start_matches(BASE)))
            .collect()
    }
    fn count(&self, method_path: &str) -> usize {
        self.paths().iter().filter(|p| p.starts_with(method_path)).count()
    }
}

impl Outbound for Fake {
    fn fetch(&self, req: OutboundRequest) -> LocalBoxFuture<'_, Result<OutboundResponse, OutboundError>> {
        let n = self.requests.borrow().len();
        let out = (self.handler)(&req, n);
        self.requests.borrow_mut().push(req);
        Box::pin(async move { out })
    }
    fn sleep(&self, ms: u32) -> LocalBoxFuture<'_, ()> {
        self.sleeps.borrow_mut().push(ms);
        Box::pin(async {})
    }
}

const BASE: &str = "http://127.0.0.1:9";

fn json_response(status: u16, body: Value) -> Result<OutboundResponse, OutboundError> {
    Ok(OutboundResponse { status, headers: vec![], body: body.to_string().into_bytes() })
}

/// Campaign `cmp_1`'s draft: one step, one sender, London's 9–17 window.
fn spec() -> CampaignSpec {
    CampaignSpec {
        name: "Ledgerly · cmp_1".into(),
        timezone: "Europe/London".into(),
        from_hour: 9,
        to_hour: 17,
        steps: vec![StepSpec { subject: "Hi".into(), body: "Hello".into(), delay_days: 0 }],
        senders: vec!["anna@getledgerly.com".into()],
        daily_limit: 30,
        per_mailbox: 30,
        ramp: vec![],
        start_date: None,
    }
}

fn path(req: &OutboundRequest) -> String {
    format!("{} {}", req.method, req.url.trim_start_matches(BASE))
}

fn body(req: &OutboundRequest) -> Value {
    req.body.as_deref().map(|b| serde_json::from_slice(b).unwrap()).unwrap_or(Value::Null)
}

fn with<R>(fake: &Fake, f: impl FnOnce(&Instantly<'_>) -> R) -> R {
    let db = MemoryDb::new();
    crate::workspace::migrations::apply(&db, NOW_MS).unwrap();
    let config = InstantlyConfig { base_url: BASE.into(), api_key: Secret("key-123".into()) };
    let i = Instantly::new(&config, &db, fake, NOW_MS);
    f(&i)
}

fn order() -> OrderSpec {
    OrderSpec {
        kind: OrderKind::OwnNames,
        items: vec![OrderItem {
            domain: "getledgerly.com".into(),
            accounts: vec![AccountSpec {
                prefix: "anna".into(),
                first_name: "Anna".into(),
                last_name: "Berg".into(),
            }],
        }],
    }
}

#[test]
fn requests_are_authenticated_and_rate_limits_are_waited_out() {
    let fake = Fake::new(|req, n| match (path(req).as_str(), n) {
        (_, 0) => Ok(OutboundResponse {
            status: 429,
            headers: vec![("retry-after".into(), "2".into())],
            body: b"{\"message\":\"Too many requests\"}".to_vec(),
        }),
        (_, 1) => json_response(503, json!({})),
        _ => json_response(
            200,
            json!({ "results": [{ "domain": "getledgerly.com", "available": true }, { "domain": "tryledgerly.com", "available": false, "unavailable_reason": "taken" }] }),
        ),
    });
    let checks =
        with(&fake, |i| block_on(i.check_domains(&["getledgerly.com".into(), "tryledgerly.com".into()])))
            .unwrap();
    assert_eq!(checks.len(), 2);
    assert!(checks[0].available && !checks[1].available);
    assert_eq!(checks[1].reason.as_deref(), Some("taken"));
    assert_eq!(fake.count("POST /api/v2/dfy-email-account-orders/domains/check"), 3, "429 and 503 retried");
    assert_eq!(*fake.sleeps.borrow(), vec![2_000, 2_000], "Retry-After, then backoff");
    let req = &fake.requests.borrow()[0];
    assert!(req.headers.contains(&("authorization".into(), "Bearer key-123".into())));
    assert!(req.headers.iter().any(|(k, v)| k == "user-agent" && v.starts_with("VibeSell-Connector/")));
    assert!(req.headers.contains(&("content-type".into(), "application/json".into())));
}

#[test]
fn a_long_rate_limit_is_left_to_the_next_sync_not_slept_through() {
    let too_many = |seconds: &str| {
        Ok(OutboundResponse {
            status: 429,
            headers: vec![("retry-after".into(), seconds.into())],
            body: b"{\"message\":\"Too many requests\"}".to_vec(),
        })
    };
    // Waits that fit in 30 s together are waited out.
    let fake = Fake::new(
        move |_, n| if n < 2 { too_many("12") } else { json_response(200, json!({ "results": [] })) },
    );
    with(&fake, |i| block_on(i.check_domains(&["getledgerly.com".into()]))).unwrap();
    assert_eq!(*fake.sleeps.borrow(), vec![12_000, 12_000]);
    // A wait beyond them is not slept at all: the call answers at once, saying how long.
    let fake = Fake::new(move |_, n| if n == 0 { too_many("12") } else { too_many("25") });
    let err = with(&fake, |i| block_on(i.check_domains(&["getledgerly.com".into()]))).unwrap_err();
    assert!(matches!(&err, PlatformError::Unavailable(m) if m.contains("retry after 25 s")), "{err:?}");
    assert_eq!(*fake.sleeps.borrow(), vec![12_000], "12 s, and not the 25 that would pass 30 in all");
    let fake = Fake::new(move |_, _| too_many("120"));
    let err = with(&fake, |i| block_on(i.check_domains(&["getledgerly.com".into()]))).unwrap_err();
    assert!(matches!(&err, PlatformError::Unavailable(m) if m.contains("retry after 120 s")), "{err:?}");
    assert!(fake.sleeps.borrow().is_empty());
    assert_eq!(fake.count("POST /api/v2/dfy-email-account-orders/domains/check"), 1);
}

#[test]
fn errors_map_to_what_the_user_can_do() {
    for (status, expect) in
        [(401, "not configured"), (402, "payment"), (400, "refused"), (500, "unavailable")]
    {
        let fake = Fake::new(move |_, _| json_response(status, json!({ "message": "nope" })));
        let err = with(&fake, |i| block_on(i.warmed_domains())).unwrap_err();
        assert!(err.to_string().contains(expect), "{status}: {err}");
    }
    // What the user reads of a refusal is Instantly's words, bounded: a refusal may echo what
    // was sent, addresses and all, at any length.
    let echo = format!("Invalid leads:\r\n{}", "someone@example.com, ".repeat(40));
    let fake = Fake::new(move |_, _| json_response(400, json!({ "message": echo })));
    let Err(PlatformError::Refused(said)) = with(&fake, |i| block_on(i.warmed_domains())) else {
        panic!("a refusal")
    };
    assert!(said.starts_with("Instantly said: \"Invalid leads:  someone@example.com"), "{said}");
    assert!(said.chars().count() < 180 && !said.contains(['\r', '\n']), "{said}");
    // A write that would act twice is not repeated blindly on a 5xx.
    let fake = Fake::new(|_, _| json_response(502, json!({})));
    let err = with(&fake, |i| block_on(i.create_campaign(&spec(), "k"))).unwrap_err();
    assert!(matches!(err, PlatformError::Unavailable(_)), "{err}");
    // Nor posted again a second later: the first may appear yet (audit finding: a duplicate draft).
    let fake = Fake::new(|req, _| match path(req).as_str() {
        "POST /api/v2/campaigns" => json_response(502, json!({})),
        p if p.starts_with("GET /api/v2/campaigns") => json_response(200, json!({ "items": [] })),
        _ => json_response(200, json!({})),
    });
    let err = with(&fake, |i| block_on(i.create_campaign(&spec(), "k"))).unwrap_err();
    assert!(matches!(err, PlatformError::Unavailable(_)), "{err}");
    assert_eq!(fake.count("POST /api/v2/campaigns"), 1);
}

#[test]
fn an_order_is_simulated_priced_and_never_placed_twice() {
    // The first real order times out after the platform took it: the retry finds it listed.
    // Another workspace ordered the same domain a day earlier (the account is shared).
    let placed = RefCell::new(false);
    let fake = Fake::new(move |req, _| {
        let b = body(req);
        match path(req).as_str() {
            "POST /api/v2/dfy-email-account-orders" if b["simulation"] == true => json_response(
                200,
                json!({ "order_is_valid": true, "simulation": true, "order_items": [{ "domain": "getledgerly.com", "domain_price": 12.0, "accounts_price": 3.0 }],
                        "total_domains_price_per_year": 12.0, "total_accounts_price_per_month": 3.0, "total_price": 15.0 }),
            ),
            "POST /api/v2/dfy-email-account-orders" => {
                *placed.borrow_mut() = true;
                Err(OutboundError("timed out".into()))
            }
            p if p.starts_with("GET /api/v2/dfy-email-account-orders?") => {
                let mut items =
                    vec![json!({ "domain": "getledgerly.com", "timestamp_created": "2026-11-28T12:00:00Z" })];
                if *placed.borrow() {
                    items.push(
                        json!({ "domain": "getledgerly.com", "timestamp_created": "2026-11-29T12:00:00Z" }),
                    );
                }
                json_response(200, json!({ "items": items }))
            }
            other => panic!("unexpected {other}"),
        }
    });
    with(&fake, |i| {
        let q = block_on(i.quote(&order())).unwrap();
        assert!(q.valid);
        assert_eq!((q.domains_per_year, q.accounts_per_month, q.due_now), (1_200, 300, 1_500));
        // Dearer than approved, now or later: nothing is bought (the monthly price here).
        let cheaper = ApprovedPrices { due_now: 1_500, domains_per_year: 1_200, accounts_per_month: 299 };
        let err = block_on(i.place_order(&order(), "vibesell-apr_1-order", &cheaper)).unwrap_err();
        assert!(
            matches!(err, PlatformError::Refused(ref m) if m.contains("of the mailboxes per month went up from $2.99 to $3")),
            "{err}"
        );
        // The other workspace's order is not this approval's.
        let decided = NOW_MS - 30_000;
        assert_eq!(block_on(i.placed_order(&order(), "vibesell-apr_1-order", decided)).unwrap(), None);
        let approved = ApprovedPrices { accounts_per_month: 300, ..cheaper };
        let p = block_on(i.place_order(&order(), "vibesell-apr_1-order", &approved)).unwrap();
        assert_eq!(p.charged, None, "found already placed");
        // Asked by the approval's watchdog: found, so not bought again.
        let found = block_on(i.placed_order(&order(), "vibesell-apr_1-order", decided)).unwrap();
        assert_eq!(found.map(|p| p.reference), Some("instantly:getledgerly.com".to_owned()));
    });
    assert_eq!(
        fake.count("POST /api/v2/dfy-email-account-orders"),
        4,
        "the quote, the price check refused, the price check before buying, one real order"
    );
    let real = fake
        .requests
        .borrow()
        .iter()
        .find(|r| r.method == "POST" && body(r)["simulation"] == false)
        .cloned()
        .unwrap();
    assert!(real.headers.contains(&("idempotency-key".into(), "vibesell-apr_1-order".into())));
    assert_eq!(body(&real)["order_type"], "dfy");
    assert_eq!(body(&real)["items"][0]["accounts"][0]["email_address_prefix"], "anna");

    // An invalid simulation says why; a refused order is refused.
    let fake = Fake::new(|req, _| match path(req).as_str() {
        p if p.starts_with("GET ") => json_response(200, json!({ "items": [] })),
        _ => json_response(
            200,
            json!({ "order_is_valid": false, "order_placed": false, "order_error": "", "unavailable_domains": ["getledgerly.com"] }),
        ),
    });
    with(&fake, |i| {
        let q = block_on(i.quote(&order())).unwrap();
        assert!(!q.valid && q.unavailable == vec!["getledgerly.com".to_owned()]);
        let err = block_on(i.place_order(&order(), "k", &ApprovedPrices::ANY)).unwrap_err();
        assert!(matches!(err, PlatformError::Refused(ref m) if m.contains("getledgerly.com")), "{err}");
    });
}

/// A refused order says why in the user's words: `order_error` is a code that names the field
/// that explains it, and the providers are numbers.
#[test]
fn a_refused_order_is_explained_by_its_fields_not_its_code() {
    let problems = |answer: Value| Instantly::parse_quote(&answer).problems;
    assert_eq!(
        problems(json!({ "order_is_valid": false, "order_error": "unavailable_domains",
                         "unavailable_domains": ["getledgerly.com"] })),
        ["Not available: getledgerly.com."]
    );
    assert_eq!(
        problems(json!({ "order_is_valid": false, "order_error": "provider_unavailable",
                         "unavailable_email_providers": [1] })),
        ["Google mailboxes cannot be ordered right now; try again later."]
    );
    assert_eq!(
        problems(json!({ "order_is_valid": false, "order_error": "domain_limit_reached" })),
        ["Instantly said: \"domain limit reached\""]
    );
}

/// Places [`order`] with Instantly answering the real order with `answer` (its simulation
/// valid, its order list empty); returns the outcome and how many real orders were posted.
fn place_answered(answer: Result<OutboundResponse, OutboundError>) -> (PResult<Placed>, usize) {
    let fake = Fake::new(move |req, _| match path(req).as_str() {
        "POST /api/v2/dfy-email-account-orders" if body(req)["simulation"] == true => json_response(
            200,
            json!({ "order_is_valid": true, "order_items": [{ "domain": "getledgerly.com", "domain_price": 12.0, "accounts_price": 3.0 }],
                    "total_domains_price_per_year": 12.0, "total_accounts_price_per_month": 3.0, "total_price": 15.0 }),
        ),
        "POST /api/v2/dfy-email-account-orders" => answer.clone(),
        p if p.starts_with("GET /api/v2/dfy-email-account-orders?") => {
            json_response(200, json!({ "items": [] }))
        }
        other => panic!("unexpected {other}"),
    });
    let placed =
        with(&fake, |i| block_on(i.place_order(&order(), "vibesell-apr_1-order", &ApprovedPrices::ANY)));
    let real = fake
        .requests
        .borrow()
        .iter()
        .filter(|r| r.method == "POST" && body(r)["simulation"] == false)
        .count();
    (placed, real)
}

#[test]
fn an_order_whose_outcome_is_unknown_is_not_posted_again_at_once() {
    // The platform answers 503 and its list does not show the order (yet): unknown, left to the
    // approval's next attempt, which looks again first.
    let (placed, real) = place_answered(json_response(503, json!({ "message": "unavailable" })));
    assert!(matches!(placed, Err(PlatformError::Unavailable(_))), "{placed:?}");
    assert_eq!(real, 1, "posted once");
}

#[test]
fn an_order_answered_with_a_body_that_is_not_json_is_unknown_not_refused() {
    // A 200 whose body is a proxy's page says nothing of the order: it may be placed, so the
    // approval must not say that nothing was bought.
    let page =
        Ok(OutboundResponse { status: 200, headers: vec![], body: b"<html>502 Bad Gateway</html>".to_vec() });
    let (placed, real) = place_answered(page);
    assert!(matches!(placed, Err(PlatformError::Unavailable(_))), "{placed:?}");
    assert_eq!(real, 1, "posted once");
}

#[test]
fn an_order_the_platform_does_not_place_says_so() {
    // Valid, yet not placed, and no list names a problem.
    let (placed, _) =
        place_answered(json_response(200, json!({ "order_is_valid": true, "order_placed": false })));
    assert!(
        matches!(placed, Err(PlatformError::Refused(ref m)) if m == "The order was not placed."),
        "{placed:?}"
    );
}

#[test]
fn campaigns_use_a_closed_body_a_mapped_zone_and_leads_in_batches() {
    let fake = Fake::new(|req, _| match path(req).as_str() {
        p if p.starts_with("GET /api/v2/campaigns?") => json_response(200, json!({ "items": [] })),
        p if p.starts_with("PATCH /api/v2/accounts/") => json_response(200, body(req)),
        "POST /api/v2/campaigns" => json_response(200, json!({ "id": "c-1", "status": 0 })),
        "POST /api/v2/leads/add" => {
            let n = body(req)["leads"].as_array().unwrap().len();
            json_response(200, json!({ "leads_uploaded": n - 1, "in_blocklist": 1, "skipped_count": 0 }))
        }
        other => panic!("unexpected {other}"),
    });
    let spec = CampaignSpec {
        timezone: "America/Los_Angeles".into(),
        steps: vec![
            StepSpec { subject: "Hi {{firstName}}".into(), body: "Line <1>\n\nLine 2".into(), delay_days: 3 },
            StepSpec { subject: String::new(), body: "Follow".into(), delay_days: 3 },
        ],
        senders: vec!["anna@getledgerly.com".into(), "ben@warmledgerly.com".into()],
        daily_limit: 50,
        per_mailbox: 25,
        ramp: vec!["anna@getledgerly.com".into()],
        start_date: Some("2026-12-01".into()),
        ..spec()
    };
    let leads: Vec<LeadSpec> = (0..2_500)
        .map(|i| LeadSpec {
            email: format!("p{i}@x.example"),
            first_name: "P".into(),
            last_name: "L".into(),
            company_name: "X".into(),
            job_title: "CFO".into(),
            variables: vec![("unsubscribeUrl".into(), format!("https://u/{i}"))],
        })
        .collect();
    let (id, added) = with(&fake, |i| {
        let id = block_on(i.create_campaign(&spec, "k")).unwrap();
        let added = block_on(i.add_leads(&id, &leads)).unwrap();
        (id, added)
    });
    assert_eq!(id, "c-1");
    assert_eq!((added.uploaded, added.blocked), (2_497, 3));
    let reqs = fake.requests.borrow();
    // Each sender's own limit and slow ramp are set before the draft exists (DOMAIN §1.2, §3.1).
    let paths: Vec<String> = reqs.iter().map(path).collect();
    assert_eq!(
        paths[..3],
        [
            "PATCH /api/v2/accounts/anna%40getledgerly.com",
            "PATCH /api/v2/accounts/ben%40warmledgerly.com",
            "GET /api/v2/campaigns?limit=100&search=Ledgerly%20%C2%B7%20cmp_1",
        ]
    );
    assert_eq!(body(&reqs[0]), json!({ "daily_limit": 25, "enable_slow_ramp": true }));
    assert_eq!(body(&reqs[1]), json!({ "daily_limit": 25, "enable_slow_ramp": false }));
    let create = reqs.iter().find(|r| path(r) == "POST /api/v2/campaigns").unwrap();
    let b = body(create);
    let keys: Vec<&String> = b.as_object().unwrap().keys().collect();
    for k in &keys {
        assert!(
            [
                "name",
                "campaign_schedule",
                "sequences",
                "email_list",
                "daily_limit",
                "stop_on_reply",
                "stop_on_auto_reply",
                "insert_unsubscribe_header",
                "open_tracking",
                "link_tracking",
                "text_only",
                "prioritize_new_leads"
            ]
            .contains(&k.as_str()),
            "{k} is not a documented create field"
        );
    }
    let schedule = &b["campaign_schedule"]["schedules"][0];
    // Los Angeles is not in Instantly's enum: Boise, one hour ahead all year, 10:00–18:00.
    assert_eq!(schedule["timezone"], "America/Boise");
    assert_eq!(schedule["timing"], json!({ "from": "10:00", "to": "18:00" }));
    assert_eq!(schedule["days"]["0"], false);
    assert_eq!(schedule["days"]["1"], true);
    assert_eq!(b["campaign_schedule"]["start_date"], "2026-12-01");
    assert_eq!(b["insert_unsubscribe_header"], true);
    assert_eq!(b["stop_on_reply"], true);
    let step = &b["sequences"][0]["steps"][0];
    assert_eq!(step["delay_unit"], "days");
    assert_eq!(step["variants"][0]["body"], "<div>Line &lt;1&gt;</div><div><br></div><div>Line 2</div>");
    let batches: Vec<usize> = reqs
        .iter()
        .filter(|r| path(r) == "POST /api/v2/leads/add")
        .map(|r| body(r)["leads"].as_array().unwrap().len())
        .collect();
    assert_eq!(batches, vec![1_000, 1_000, 500]);
    let first = body(reqs.iter().find(|r| path(r) == "POST /api/v2/leads/add").unwrap());
    assert_eq!(first["campaign_id"], "c-1");
    assert_eq!(first["leads"][0]["custom_variables"]["unsubscribeUrl"], "https://u/0");
}

#[test]
fn received_emails_are_paced_to_twenty_a_minute() {
    let fake = Fake::new(|req, _| {
        assert!(path(req).starts_with("GET /api/v2/emails?"), "{}", path(req));
        assert!(
            req.url.contains("email_type=received")
                && req.url.contains("min_timestamp_created=2026-11-29T12%3A00%3A00.000Z")
        );
        json_response(
            200,
            json!({ "items": [
                { "id": "e1", "lead": "p@x.example", "from_address_email": "P@x.example", "eaccount": "anna@getledgerly.com",
                  "subject": "Re: hi", "body": { "text": "Tell me more" }, "timestamp_created": "2026-11-30T10:00:00.000Z",
                  "step": "0_1_0", "i_status": 1 },
                { "id": "e0", "ue_type": 1, "subject": "ours", "timestamp_created": "2026-11-30T09:00:00.000Z" },
                { "id": "e2", "lead": "q@x.example", "from_address_email": "mailer-daemon@googlemail.com", "subject": "Delivery Status Notification (Failure)",
                  "body": { "text": "Address not found" }, "timestamp_created": "2026-11-30T11:00:00.000Z", "is_auto_reply": 0 }
            ], "next_starting_after": "e2" }),
        )
    });
    let db = MemoryDb::new();
    crate::workspace::migrations::apply(&db, NOW_MS).unwrap();
    let config = InstantlyConfig { base_url: BASE.into(), api_key: Secret("key-123".into()) };
    let i = Instantly::new(&config, &db, &fake, NOW_MS);
    let first = block_on(i.received("c-1", NOW_MS)).unwrap();
    assert_eq!(first.items.len(), 6, "two emails per page, ours skipped");
    assert!(first.more, "three pages a call; the rest on the next sync");
    let e = &first.items[0];
    // The email's step as Instantly writes it, `sequence_step_variant`: the second step.
    assert_eq!((e.id.as_str(), e.lead.as_str(), e.step, e.interest), ("e1", "p@x.example", Some(2), Some(1)));
    assert_eq!(e.at, 1_796_032_800_000);
    assert!(first.items[1].bounce);
    // 20 requests in the minute: the next one is not sent now.
    for _ in 0..5 {
        block_on(i.received("c-1", NOW_MS)).unwrap();
    }
    let partial = block_on(i.received("c-1", NOW_MS)).unwrap();
    assert_eq!((partial.items.len(), partial.more), (4, true));
    assert_eq!(fake.count("GET /api/v2/emails"), 20);
    assert!(matches!(block_on(i.received("c-1", NOW_MS)), Err(PlatformError::Unavailable(_))));
    assert!(fake.sleeps.borrow().is_empty());
    // Once the oldest calls are 45 s old, the next one waits the last 15 s instead.
    (&db as &dyn Db).exec("UPDATE provider_calls SET at = at - 45000", vec![]).unwrap();
    block_on(i.received("c-1", NOW_MS)).unwrap();
    assert_eq!(fake.sleeps.borrow().first(), Some(&15_000));
    assert_eq!(fake.count("GET /api/v2/emails"), 23);
}

#[test]
fn campaign_leads_are_read_on_from_where_the_last_call_stopped() {
    // 12,000 leads, 100 a page: more than one call reads (50 pages).
    const LEADS: usize = 12_000;
    let fake = Fake::new(|req, _| {
        assert_eq!(path(req), "POST /api/v2/leads/list");
        let b = body(req);
        assert_eq!((b["campaign"].clone(), b["limit"].clone()), (json!("c-1"), json!(100)));
        let from = b["starting_after"].as_str().map_or(0, |id| id[1..].parse::<usize>().unwrap() + 1);
        let to = (from + 100).min(LEADS);
        let items: Vec<Value> = (from..to)
            .map(|n| {
                let status = match n {
                    7 => -2,
                    11_500 => -1,
                    _ => 1,
                };
                json!({ "id": format!("l{n}"), "email": format!("P{n}@x.example"), "campaign": "c-1", "status": status })
            })
            .collect();
        json_response(
            200,
            json!({ "items": items, "next_starting_after": (to < LEADS).then(|| format!("l{}", to - 1)) }),
        )
    });
    let (first, second, third, again) = with(&fake, |i| {
        let first = block_on(i.outcomes("c-1", None)).unwrap();
        let second = block_on(i.outcomes("c-1", first.next.as_deref())).unwrap();
        let third = block_on(i.outcomes("c-1", second.next.as_deref())).unwrap();
        let again = block_on(i.outcomes("c-1", third.next.as_deref())).unwrap();
        (first, second, third, again)
    });
    assert_eq!(first.items, vec![("p7@x.example".to_owned(), Outcome::Unsubscribed)]);
    assert_eq!(first.next.as_deref(), Some("l4999"));
    assert_eq!((second.items.len(), second.next.as_deref()), (0, Some("l9999")));
    // The last leads are reached (audit finding: each call started over and never got there).
    assert_eq!(third.items, vec![("p11500@x.example".to_owned(), Outcome::Bounced)]);
    assert_eq!(third.next, None);
    assert_eq!(again.items.len(), 1, "then it starts over");
    assert_eq!(fake.count("POST /api/v2/leads/list"), 50 + 50 + 20 + 50);
}

/// A workspace with [`order`] placed at `NOW_MS`: its domain and mailbox recorded.
fn ordered() -> MemoryDb {
    use crate::workspace::sending as setup;
    let db = MemoryDb::new();
    crate::workspace::migrations::apply(&db, NOW_MS).unwrap();
    let order = setup::Order {
        id: "apr_1".into(),
        spec: order(),
        reference: "instantly:getledgerly.com".into(),
        charged: Some(1_500),
        currency: "usd".into(),
        ordered_at: NOW_MS,
    };
    db.batch(setup::record_order(&order, &[("getledgerly.com".into(), 1_200)], NOW_MS).unwrap()).unwrap();
    db
}

#[test]
fn a_fresh_own_brand_mailbox_is_not_ready_before_its_warm_up() {
    use crate::workspace::sending as setup;
    // Instantly marks every mailbox it manages alike, and a fresh one has no warm-up start yet.
    let fake = Fake::new(|req, _| {
        let p = path(req);
        match p.as_str() {
            "GET /api/v2/accounts/anna%40getledgerly.com" => json_response(
                200,
                json!({ "email": "anna@getledgerly.com", "status": 1, "warmup_status": 0, "setup_pending": false,
                        "is_managed_account": true, "provider_code": 2 }),
            ),
            "POST /api/v2/accounts/test/vitals" => json_response(200, json!({ "success_list": [] })),
            other => panic!("unexpected {other}"),
        }
    });
    let db = ordered();
    let config = crate::testing::test_config();
    let i = Instantly::new(
        &InstantlyConfig { base_url: BASE.into(), api_key: Secret("key-123".into()) },
        &db,
        &fake,
        NOW_MS + 3 * 86_400_000,
    );
    block_on(setup::sync_setup(&db, &config, &i)).unwrap();
    let boxes = setup::mailboxes(&db).unwrap();
    assert_eq!(boxes[0].status, setup::MailboxStatus::SetUp, "set up on a 3-day-old domain, not warmed");
}

#[test]
fn a_warm_up_the_platform_fails_to_turn_on_holds_back_no_mailbox_state() {
    use crate::workspace::sending as setup;
    let fake = Fake::new(|req, _| match path(req).as_str() {
        "GET /api/v2/accounts/anna%40getledgerly.com" => json_response(
            200,
            json!({ "email": "anna@getledgerly.com", "status": 1, "warmup_status": 0, "setup_pending": false,
                    "is_managed_account": true, "provider_code": 2 }),
        ),
        "POST /api/v2/accounts/warmup/enable" => json_response(200, json!({ "id": "job-1" })),
        "GET /api/v2/background-jobs/job-1" => {
            json_response(200, json!({ "id": "job-1", "status": "failed" }))
        }
        "POST /api/v2/accounts/test/vitals" => json_response(200, json!({ "success_list": [] })),
        other => panic!("unexpected {other}"),
    });
    let db = ordered();
    db.batch(vec![Stmt::new("UPDATE mailboxes SET warmup_requested_at = ?", vec![NOW_MS.into()])]).unwrap();
    let i = Instantly::new(
        &InstantlyConfig { base_url: BASE.into(), api_key: Secret("key-123".into()) },
        &db,
        &fake,
        NOW_MS + 3 * 86_400_000,
    );
    let config = crate::testing::test_config();
    assert!(block_on(setup::sync_setup(&db, &config, &i)).unwrap(), "still in progress");
    assert_eq!(fake.count("POST /api/v2/accounts/warmup/enable"), 1);
    assert_eq!(setup::mailboxes(&db).unwrap()[0].status, setup::MailboxStatus::SetUp, "its state mirrored");
}

/// The report's days and steps count the replies people wrote, not the automatic ones, as its
/// totals do; the steps' variants are summed, numbered from 1.
#[test]
fn the_report_counts_human_replies_by_day_and_step() {
    let fake = Fake::new(|req, _| match path(req).as_str() {
        "GET /api/v2/campaigns/c-1" => json_response(200, json!({ "id": "c-1", "status": 1 })),
        p if p.starts_with("GET /api/v2/campaigns/analytics?") => json_response(
            200,
            json!([{ "leads_count": 40, "contacted_count": 30, "emails_sent_count": 50,
                     "reply_count_unique": 6, "reply_count_automatic_unique": 2 }]),
        ),
        "GET /api/v2/campaigns/analytics/daily?campaign_id=c-1" => json_response(
            200,
            json!([{ "date": "2026-11-30", "sent": 30, "unique_replies": 4, "unique_replies_automatic": 1 },
                   { "date": "2026-12-01", "sent": 20, "unique_replies": 2, "unique_replies_automatic": 1 }]),
        ),
        "GET /api/v2/campaigns/analytics/steps?campaign_id=c-1" => json_response(
            200,
            json!([{ "step": "0", "variant": "0", "sent": 20, "unique_replies": 3, "unique_replies_automatic": 1 },
                   { "step": "0", "variant": "1", "sent": 10, "unique_replies": 1 },
                   { "step": 1, "variant": "0", "sent": 20, "unique_replies": 2, "unique_replies_automatic": 1 },
                   { "step": null, "sent": 5 }]),
        ),
        other => panic!("unexpected {other}"),
    });
    let db = MemoryDb::new();
    let config = InstantlyConfig { base_url: BASE.into(), api_key: Secret("key-123".into()) };
    let report = block_on(Instantly::new(&config, &db, &fake, NOW_MS).report("c-1")).unwrap();
    assert_eq!(report.totals.replied, 4);
    let days: Vec<(&str, u32, u32)> =
        report.daily.iter().map(|d| (d.date.as_str(), d.sent, d.replies)).collect();
    assert_eq!(days, [("2026-11-30", 30, 3), ("2026-12-01", 20, 1)]);
    let steps: Vec<(u32, u32, u32)> = report.steps.iter().map(|s| (s.step, s.sent, s.replies)).collect();
    assert_eq!(steps, [(1, 30, 3), (2, 20, 1)]);
    assert_eq!(report.daily.iter().map(|d| d.replies).sum::<u32>(), report.totals.replied);
}

#[test]
fn steps_are_read_in_each_form_instantly_writes_them() {
    for (raw, step) in [
        (json!(0), Some(0)),
        (json!("2"), Some(2)),
        (json!("0_1_0"), Some(1)),
        (json!("0_3_2"), Some(3)),
        (json!("0_1"), None),
        (json!("a_b_c"), None),
        (json!(-1), None),
        (json!(null), None),
    ] {
        assert_eq!(step_index(&raw), step, "{raw}");
    }
}

/// Leads in [`long_campaign`]; one bounced, at lead 11,500: past the 50 pages one sync reads.
const LONG: usize = 12_000;

/// Instantly's campaign `c-1` of [`LONG`] leads, one of them bounced, whose analytics count
/// `bounced` bounces.
fn long_campaign(bounced: u32) -> Fake {
    Fake::new(move |req, _| {
        let p = path(req);
        match p.as_str() {
            "GET /api/v2/campaigns/c-1" => json_response(200, json!({ "id": "c-1", "status": 1 })),
            p if p.starts_with("GET /api/v2/campaigns/analytics?") => json_response(
                200,
                json!([{ "leads_count": LONG, "contacted_count": 3000, "emails_sent_count": 3000,
                         "bounced_count": bounced, "unsubscribed_count": 0 }]),
            ),
            p if p.starts_with("GET /api/v2/emails?") => json_response(200, json!({ "items": [] })),
            "POST /api/v2/block-lists-entries" => json_response(200, json!({})),
            "POST /api/v2/leads/list" => {
                let b = body(req);
                let from = b["starting_after"].as_str().map_or(0, |id| id[1..].parse::<usize>().unwrap() + 1);
                let to = (from + 100).min(LONG);
                let items: Vec<Value> = (from..to)
                    .map(|n| {
                        json!({ "id": format!("l{n}"), "email": format!("p{n}@x.example"), "campaign": "c-1",
                                "status": if n == 11_500 { -1 } else { 1 } })
                    })
                    .collect();
                json_response(
                    200,
                    json!({ "items": items, "next_starting_after": (to < LONG).then(|| format!("l{}", to - 1)) }),
                )
            }
            other => panic!("unexpected {other}"),
        }
    })
}

/// A workspace whose campaign `cmp_1` sends as Instantly's `c-1`, with three prospects who
/// opted out by reply: outcomes the platform's totals do not count.
fn with_long_campaign() -> MemoryDb {
    use crate::workspace::campaigns::{self as store, Plan, State};
    let db = MemoryDb::new();
    crate::workspace::migrations::apply(&db, NOW_MS).unwrap();
    let plan = Plan { spec: spec(), sequence_version: 1 };
    let mut stmts = vec![store::create_stmt("cmp_1", "Ledgerly", &plan, NOW_MS, NOW_MS).unwrap()];
    for n in 0..3 {
        stmts.push(Stmt::new(
            "INSERT INTO campaign_leads (campaign_id, lead_id, email, outcome, added_at) \
             VALUES ('cmp_1', ?, ?, 'unsubscribed', ?)",
            vec![(n as i64).into(), format!("p{n}@x.example").into(), NOW_MS.into()],
        ));
    }
    stmts.push(store::staged_stmt("cmp_1", "c-1", &plan, NOW_MS).unwrap());
    stmts.push(store::state_stmt("cmp_1", State::Active, None, NOW_MS, NOW_MS));
    // On a plan that allows it a sending campaign (the free plan's would pause it).
    stmts.push(Stmt::new(
        "INSERT INTO billing (id, plan, status, updated_at) VALUES (1, 'growth', 'active', ?)",
        vec![NOW_MS.into()],
    ));
    db.batch(stmts).unwrap();
    db
}

/// One sync of the workspace's campaigns at `now`.
fn sync_at(db: &MemoryDb, fake: &Fake, now: i64) {
    let config = crate::testing::test_config();
    let i = Instantly::new(
        &InstantlyConfig { base_url: BASE.into(), api_key: Secret("key-123".into()) },
        db,
        fake,
        now,
    );
    block_on(crate::workspace::campaigns::sync_campaigns(db, &config, &i, false)).unwrap();
}

#[test]
fn a_late_bounce_is_read_even_when_reply_opt_outs_outnumber_the_platform_totals() {
    let (fake, db) = (long_campaign(1), with_long_campaign());
    for _ in 0..4 {
        sync_at(&db, &fake, NOW_MS);
    }
    assert!(
        crate::workspace::suppression::is_suppressed(&db, "p11500@x.example").unwrap(),
        "the bounced address was never suppressed ({} lead-list calls)",
        fake.count("POST /api/v2/leads/list")
    );
    // One whole read of the list, then none: the totals are accounted for.
    assert_eq!(fake.count("POST /api/v2/leads/list"), 120);
}

#[test]
fn outcomes_the_list_does_not_show_are_looked_for_again_only_hours_later() {
    // Five bounces counted, one in the list (the other leads were deleted at Instantly): with
    // the three reply opt-outs, the totals stay ahead of what any read finds (audit finding:
    // every sync read all 12,000 leads again).
    let (fake, db) = (long_campaign(5), with_long_campaign());
    for minutes in 0..10 {
        sync_at(&db, &fake, NOW_MS + minutes * 60_000);
    }
    assert!(crate::workspace::suppression::is_suppressed(&db, "p11500@x.example").unwrap());
    assert_eq!(fake.count("POST /api/v2/leads/list"), 120, "one whole read in ten syncs");
    // Six hours after that read reached the end, one more.
    for minutes in 0..10 {
        sync_at(&db, &fake, NOW_MS + 6 * 3_600_000 + minutes * 60_000);
    }
    assert_eq!(fake.count("POST /api/v2/leads/list"), 240);
}

/// [`long_campaign`], answering 400 to `method_path` when its body's `field` is `value`, as
/// Instantly (and the end-to-end fake) answer a value they will not take: an unknown
/// `starting_after`, a blocklist entry.
fn long_campaign_refusing(method_path: &'static str, field: &'static str, value: &'static str) -> Fake {
    let inner = long_campaign(1);
    Fake::new(move |req, n| {
        if path(req) == method_path && body(req)[field] == value {
            return json_response(400, json!({ "message": format!("{field}: not accepted") }));
        }
        (inner.handler)(req, n)
    })
}

#[test]
fn a_lead_cursor_the_platform_no_longer_knows_is_read_again_from_the_start() {
    let fake = long_campaign_refusing("POST /api/v2/leads/list", "starting_after", "l-gone");
    let db = with_long_campaign();
    (&db as &dyn Db)
        .batch(vec![Stmt::new("UPDATE campaigns SET outcomes_after = 'l-gone'", vec![])])
        .unwrap();
    for _ in 0..3 {
        sync_at(&db, &fake, NOW_MS);
    }
    assert!(crate::workspace::suppression::is_suppressed(&db, "p11500@x.example").unwrap());
    assert_eq!(fake.count("POST /api/v2/leads/list"), 1 + 120, "the refused page, then one whole read");
}

#[test]
fn a_blocklist_entry_the_platform_refuses_holds_back_none_after_it() {
    let fake = long_campaign_refusing("POST /api/v2/block-lists-entries", "bl_value", "odd@@x.example");
    let db = with_long_campaign();
    let add = |value: &str, at: i64| {
        let reason = crate::workspace::suppression::Reason::Unsubscribe;
        crate::workspace::suppression::add_stmt(value, reason, "test", at).unwrap()
    };
    (&db as &dyn Db)
        .batch(vec![add("odd@@x.example", NOW_MS - 2), add("later@x.example", NOW_MS - 1)])
        .unwrap();
    sync_at(&db, &fake, NOW_MS);
    let mirrored = (&db as &dyn Db).query(Stmt::new("SELECT value FROM blocklist_mirror", vec![])).unwrap();
    let text = format!("{mirrored:?}");
    assert!(text.contains("later@x.example") && !text.contains("odd@@"), "{text}");
}

/// A reply opt-out is suppressed as soon as the sync has read it, even when the platform fails
/// on the sync's next call: the sync once wrote replies and suppressions together at its end.
#[test]
fn a_reply_opt_out_is_kept_when_the_rest_of_the_sync_fails() {
    let fake = Fake::new(|req, _| {
        let p = path(req);
        match p.as_str() {
            p if p.starts_with("GET /api/v2/emails?") => json_response(
                200,
                json!({ "items": [
                    { "id": "e1", "lead": "p7@x.example", "from_address_email": "p7@x.example",
                      "eaccount": "anna@getledgerly.com", "subject": format!("Re: hi {}", "x".repeat(5_000)),
                      "body": { "text": "Please remove me from your list." },
                      "timestamp_created": "2026-11-30T10:00:00.000Z", "step": "0" }
                ] }),
            ),
            _ => json_response(400, json!({ "error": "Bad Request" })),
        }
    });
    let db = with_long_campaign();
    let config = crate::testing::test_config();
    let i = Instantly::new(
        &InstantlyConfig { base_url: BASE.into(), api_key: Secret("key-123".into()) },
        &db,
        &fake,
        NOW_MS,
    );
    // The campaign's own failure is logged and the sync goes on; what was read stays.
    let _ = block_on(crate::workspace::campaigns::sync_campaigns(&db, &config, &i, false));
    assert!(fake.count("GET /api/v2/campaigns") > 0, "the platform was asked after the replies");
    assert!(crate::workspace::suppression::is_suppressed(&db, "p7@x.example").unwrap());
    let replies = (&db as &dyn Db).query(Stmt::new("SELECT COUNT(*) FROM replies", vec![])).unwrap();
    assert_eq!(replies.scalar_i64(), Some(1));
    // Its subject is kept to a bounded length, whatever the prospect's mail program sent.
    let subject = (&db as &dyn Db).query(Stmt::new("SELECT LENGTH(subject) FROM replies", vec![])).unwrap();
    assert_eq!(subject.scalar_i64(), Some(300));
}

/// The shelf offers only domains sold with Google mailboxes, which orders ask for; a quote names
/// every list the platform rejects an order with.
#[test]
fn the_shelf_keeps_google_domains_and_a_quote_names_every_rejection() {
    let fake = Fake::new(|req, _| match path(req).as_str() {
        "POST /api/v2/dfy-email-account-orders/domains/pre-warmed-up-list" => json_response(
            200,
            json!({ "domains": ["g.com", "air.com", "ms.com", "plain.com"],
                    "domains_with_type": [{ "domain": "g.com", "account_type": 1 },
                                          { "domain": "air.com", "account_type": 2 },
                                          { "domain": "ms.com", "account_type": 3 }] }),
        ),
        _ => json_response(
            200,
            json!({ "order_is_valid": true, "provider_mismatch_domains": ["air.com"],
                    "domains_without_accounts": ["g.com"], "payment_failure_reason": "card expired",
                    "blacklist_keywords": ["free"], "unavailable_email_providers": [1] }),
        ),
    });
    let db = MemoryDb::new();
    crate::workspace::migrations::apply(&db, NOW_MS).unwrap();
    let config = InstantlyConfig { base_url: BASE.into(), api_key: Secret("key-123".into()) };
    let i = Instantly::new(&config, &db, &fake, NOW_MS);
    let shelf: Vec<String> = block_on(i.warmed_domains()).unwrap().into_iter().map(|d| d.domain).collect();
    assert_eq!(shelf, ["g.com", "plain.com"]);
    let q = block_on(i.quote(&order())).unwrap();
    assert!(!q.valid);
    assert_eq!(
        q.problems,
        [
            "Not sold with Google mailboxes: air.com.",
            "No mailboxes asked for: g.com.",
            "Words the platform does not allow in a domain: free.",
            "Google mailboxes cannot be ordered right now; try again later.",
            "The payment failed (Instantly said: \"card expired\")."
        ]
    );
    // Refused by nothing it names: the refusal still says something.
    let silent = Instantly::parse_quote(&json!({ "order_is_valid": false }));
    assert!(!silent.valid && silent.problems[0].starts_with("The sending platform did not accept the order"));
}

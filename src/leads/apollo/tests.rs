//! The Apollo adapter against an in-process fake of Apollo's documented endpoints (the e2e
//! suite runs the same adapter in the Worker against a node HTTP fake).

use std::cell::RefCell;
use std::collections::VecDeque;

use serde_json::{Value, json};

use super::*;
use crate::outbound::OutboundError;
use crate::testing::block_on;

/// A fake Apollo: `people` is its database; `script` answers the next requests first.
struct Fake {
    people: Vec<Value>,
    script: RefCell<VecDeque<OutboundResponse>>,
    requests: RefCell<Vec<OutboundRequest>>,
    sleeps: RefCell<Vec<u32>>,
}

fn person_json(i: usize) -> Value {
    let domain = if i % 50 == 8 { "excluded.com".to_owned() } else { format!("company{}.com", i / 3) };
    json!({
        "id": format!("ap_{i:04}"),
        "first_name": format!("First{i}"),
        "last_name_obfuscated": "Ro***s",
        "title": if i.is_multiple_of(2) { "VP of Sales" } else { "Head of Sales" },
        "seniority": if i.is_multiple_of(2) { "vp" } else { "head" },
        "country": "United States",
        "organization": {"name": format!("Company {}", i / 3), "primary_domain": domain, "estimated_num_employees": 120}
    })
}

impl Fake {
    fn new(n: usize) -> Fake {
        Fake {
            people: (0..n).map(person_json).collect(),
            script: RefCell::default(),
            requests: RefCell::default(),
            sleeps: RefCell::default(),
        }
    }

    fn then(self, status: u16, headers: &[(&str, &str)], body: Value) -> Fake {
        self.script.borrow_mut().push_back(OutboundResponse {
            status,
            headers: headers.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect(),
            body: body.to_string().into_bytes(),
        });
        self
    }

    fn answer(&self, req: &OutboundRequest) -> OutboundResponse {
        let (path, query) = req.url.split_once('?').unwrap_or((&req.url, ""));
        let param = |name: &str| -> Vec<String> {
            query
                .split('&')
                .filter_map(|kv| kv.split_once('='))
                .filter(|(k, _)| *k == name)
                .map(|(_, v)| v.replace("%20", " "))
                .collect()
        };
        let ok = |body: Value| OutboundResponse {
            status: 200,
            headers: vec![],
            body: body.to_string().into_bytes(),
        };
        if path.ends_with("/mixed_people/api_search") {
            let titles = param("person_titles%5B%5D");
            let matching: Vec<&Value> = self
                .people
                .iter()
                .filter(|p| titles.is_empty() || titles.iter().any(|t| p["title"] == *t))
                .collect();
            let page: usize = param("page")[0].parse().unwrap();
            let per_page: usize = param("per_page")[0].parse().unwrap();
            let slice: Vec<&Value> =
                matching.iter().skip((page - 1) * per_page).take(per_page).copied().collect();
            return ok(json!({
                "people": slice,
                "pagination": {"page": page, "per_page": per_page, "total_entries": matching.len(),
                               "total_pages": matching.len().div_ceil(per_page)}
            }));
        }
        if path.ends_with("/people/bulk_match") {
            let body: Value = serde_json::from_slice(req.body.as_ref().unwrap()).unwrap();
            let details = body["details"].as_array().unwrap();
            assert!(details.len() <= 10, "bulk_match takes at most 10 people");
            let matches: Vec<Value> = details
                .iter()
                .map(|d| {
                    let id = d["id"].as_str().unwrap();
                    let i: usize = id[3..].parse().unwrap();
                    let mut p = self.people[i].clone();
                    p["last_name"] = json!(format!("Last{i}"));
                    p["email"] = if i % 10 == 4 {
                        json!("email_not_unlocked@domain.com")
                    } else {
                        json!(format!("first{i}@{}", p["organization"]["primary_domain"].as_str().unwrap()))
                    };
                    p["email_status"] = json!("verified");
                    p
                })
                .collect();
            let credits =
                matches.iter().filter(|m| !m["email"].as_str().unwrap().starts_with("email_not")).count();
            return ok(json!({"status": "success", "matches": matches, "credits_consumed": credits}));
        }
        OutboundResponse { status: 404, headers: vec![], body: b"{\"error\":\"no route\"}".to_vec() }
    }
}

impl Outbound for Fake {
    fn fetch(&self, req: OutboundRequest) -> LocalBoxFuture<'_, Result<OutboundResponse, OutboundError>> {
        self.requests.borrow_mut().push(req.clone());
        let scripted = self.script.borrow_mut().pop_front();
        Box::pin(async move { Ok(scripted.unwrap_or_else(|| self.answer(&req))) })
    }
    fn sleep(&self, ms: u32) -> LocalBoxFuture<'_, ()> {
        self.sleeps.borrow_mut().push(ms);
        Box::pin(async {})
    }
}

fn config() -> ApolloConfig {
    ApolloConfig {
        base_url: "https://apollo.test/api/v1".into(),
        api_key: crate::config::Secret("key-123".into()),
    }
}

fn vp_filters() -> Filters {
    Filters {
        titles: vec!["VP of Sales".into()],
        countries: vec!["United States".into()],
        company_sizes: vec!["51-200".into()],
        departments: vec!["sales".into()],
        industries: vec!["Computer Software".into()],
        ..Filters::default()
    }
}

#[test]
fn counts_for_free_with_one_result_per_page_and_documented_parameters() {
    let fake = Fake::new(230);
    let config = config();
    let apollo = Apollo::new(Some(&config), &fake);
    let estimate = block_on(apollo.estimate(&vp_filters())).unwrap();
    assert_eq!(estimate.count, 115);
    assert!(estimate.exclusions_counted && estimate.breakdowns.is_empty());
    let req = fake.requests.borrow()[0].clone();
    assert_eq!(req.method, "POST");
    assert!(req.url.starts_with("https://apollo.test/api/v1/mixed_people/api_search?"), "{}", req.url);
    for part in [
        "person_titles%5B%5D=VP%20of%20Sales",
        "person_locations%5B%5D=United%20States",
        "organization_num_employees_ranges%5B%5D=51%2C200",
        "person_department_or_subdepartments%5B%5D=master_sales",
        "q_organization_keyword_tags%5B%5D=computer%20software",
        "include_similar_titles=false",
        "contact_email_status%5B%5D=verified",
        "page=1",
        "per_page=1",
    ] {
        assert!(req.url.contains(part), "{part} missing from {}", req.url);
    }
    assert!(req.headers.contains(&("x-api-key".into(), "key-123".into())));
    assert!(!req.url.contains("key-123"), "the key never goes in the URL");
}

/// Only an address Apollo calls verified is imported, even when the enrichment's verdict differs
/// from the search's (the search asks for verified people only).
#[test]
fn an_address_apollo_has_not_verified_is_not_imported() {
    let found = person_json(3);
    let mut matched = found.clone();
    matched["email"] = json!("first3@company1.com");
    for (status, imported) in [("verified", true), ("unverified", false), ("likely_to_engage", false)] {
        matched["email_status"] = json!(status);
        assert_eq!(super::person(&found, Some(&matched)).email.is_some(), imported, "{status}");
    }
    matched.as_object_mut().unwrap().remove("email_status");
    assert_eq!(super::person(&found, Some(&matched)).email, None, "no verdict, no import");
}

#[test]
fn previews_without_enrichment() {
    let fake = Fake::new(30);
    let config = config();
    let apollo = Apollo::new(Some(&config), &fake);
    let sample = block_on(
        apollo.sample(&Filters { exclude_company_domains: vec!["excluded.com".into()], ..vp_filters() }, 10),
    )
    .unwrap();
    assert_eq!(sample.len(), 10);
    assert!(sample.iter().all(|p| p.email.is_none() && p.last_name == "Ro***s"));
    assert!(sample.iter().all(|p| p.company_domain.as_deref() != Some("excluded.com")));
    assert_eq!(fake.requests.borrow().len(), 1, "one free search, no enrichment");
}

#[test]
fn imports_page_by_page_enriching_ten_at_a_time() {
    let fake = Fake::new(460);
    let config = config();
    let apollo = Apollo::new(Some(&config), &fake);
    let f = Filters { exclude_company_domains: vec!["excluded.com".into()], ..vp_filters() };
    let mut from = 0;
    let (mut people, mut credits, mut excluded, mut calls, mut known) = (Vec::new(), 0, 0, 0, 0);
    loop {
        let batch = block_on(apollo.fetch(&f, from, 100, &|id: &str| id == "ap_0000")).unwrap();
        from += batch.consumed;
        credits += batch.credits;
        excluded += batch.excluded;
        known += batch.known;
        people.extend(batch.people);
        calls += 1;
        if batch.exhausted {
            break;
        }
    }
    assert_eq!(calls, 3);
    assert_eq!(from, 230, "every matching record consumed once");
    let excluded_expected = (0..460).filter(|i| i % 2 == 0 && i % 50 == 8).count() as u64;
    assert!(excluded_expected > 0);
    assert_eq!(excluded, excluded_expected);
    assert_eq!(known, 1, "people already in the workspace are skipped");
    assert_eq!(people.len() as u64, 230 - excluded - known);
    let with_email = people.iter().filter(|p| p.email.is_some()).count() as u64;
    assert_eq!(credits, with_email, "credits as Apollo reported them");
    assert!(people.iter().any(|p| p.email.is_none()), "locked placeholders are not addresses");
    assert!(people.iter().all(|p| p.last_name.starts_with("Last")), "enrichment reveals the surname");
    let requests = fake.requests.borrow();
    let enrich_calls = requests.iter().filter(|r| r.url.contains("/people/bulk_match")).count();
    // Per search page, the kept people are enriched ten at a time.
    let expected_calls: usize = (0..3)
        .map(|page| {
            (page * 100..(page * 100 + 100).min(230)).filter(|k| (2 * k) % 50 != 8).count().div_ceil(10)
        })
        .sum();
    assert_eq!(enrich_calls, expected_calls);
    for r in requests.iter().filter(|r| r.url.contains("/people/bulk_match")) {
        assert!(
            r.url.ends_with("/people/bulk_match?reveal_personal_emails=false&reveal_phone_number=false"),
            "{}",
            r.url
        );
        let body: Value = serde_json::from_slice(r.body.as_ref().unwrap()).unwrap();
        assert_eq!(body.as_object().unwrap().keys().collect::<Vec<_>>(), ["details"]);
    }
}

#[test]
fn waits_out_a_short_rate_limit_and_refuses_a_long_one() {
    let fake = Fake::new(20).then(429, &[("retry-after", "2")], json!({"error": "rate limited"}));
    let config = config();
    let apollo = Apollo::new(Some(&config), &fake);
    assert_eq!(block_on(apollo.estimate(&vp_filters())).unwrap().count, 10);
    assert_eq!(*fake.sleeps.borrow(), vec![2000]);

    let fake = Fake::new(20).then(429, &[("retry-after", "120")], json!({}));
    let apollo = Apollo::new(Some(&config), &fake);
    let err = block_on(apollo.estimate(&vp_filters())).unwrap_err();
    assert_eq!(err, LeadError::RateLimited { retry_after_s: 120 });
    assert!(fake.sleeps.borrow().is_empty(), "a long wait is not slept inside a call");

    let fake = Fake::new(20)
        .then(429, &[("retry-after", "1")], json!({}))
        .then(429, &[("retry-after", "1")], json!({}))
        .then(429, &[("retry-after", "1")], json!({}));
    let apollo = Apollo::new(Some(&config), &fake);
    assert!(matches!(block_on(apollo.estimate(&vp_filters())), Err(LeadError::RateLimited { .. })));
    assert_eq!(fake.requests.borrow().len(), 3);
}

/// A 429 without `retry-after` is waited out by the window Apollo says is used up, and the
/// refusal says how long in words.
#[test]
fn a_used_up_window_is_waited_out_whole() {
    let config = config();
    for (headers, wait, words) in [
        (
            vec![("x-minute-requests-left", "0"), ("x-hourly-requests-left", "12")],
            60,
            "Wait about 60 seconds",
        ),
        (
            vec![("x-minute-requests-left", "3"), ("x-hourly-requests-left", "0")],
            3_600,
            "Wait about 60 minutes",
        ),
        (
            vec![("x-hourly-requests-left", "0"), ("x-daily-requests-left", "0")],
            86_400,
            "Wait about 24 hours",
        ),
    ] {
        let fake = Fake::new(20).then(429, &headers, json!({}));
        let apollo = Apollo::new(Some(&config), &fake);
        let err = block_on(apollo.estimate(&vp_filters())).unwrap_err();
        assert_eq!(err, LeadError::RateLimited { retry_after_s: wait });
        assert!(fake.sleeps.borrow().is_empty(), "not slept inside a call");
        let crate::tools::Refusal::Guidance(text) = err.to_refusal("apollo") else { panic!("guidance") };
        assert!(text.contains(words), "{text}");
    }
}

#[test]
fn errors_become_provider_errors() {
    let config = config();
    let fake = Fake::new(5).then(401, &[], json!({"error": "Invalid access credentials."}));
    let err = block_on(Apollo::new(Some(&config), &fake).estimate(&vp_filters())).unwrap_err();
    assert!(matches!(&err, LeadError::Rejected(m) if m.contains("Invalid access credentials")), "{err:?}");
    let text = match err.to_refusal("apollo") {
        crate::tools::Refusal::Guidance(t) => t,
        other => panic!("{other:?}"),
    };
    assert!(text.contains("Nothing was changed"));

    let fake = Fake::new(5).then(500, &[], json!({})).then(502, &[], json!({})).then(503, &[], json!({}));
    let err = block_on(Apollo::new(Some(&config), &fake).estimate(&vp_filters())).unwrap_err();
    assert!(matches!(err, LeadError::Unavailable(_)));
    assert_eq!(fake.sleeps.borrow().len(), 2, "two retries after the first failure");

    let fake = Fake::new(5).then(500, &[], json!({}));
    assert_eq!(block_on(Apollo::new(Some(&config), &fake).estimate(&vp_filters())).unwrap().count, 3);

    let fake =
        Fake::new(5).then(200, &[], json!({"people": [person_json(1)], "pagination": {"total_entries": 0}}));
    let err = block_on(Apollo::new(Some(&config), &fake).estimate(&vp_filters())).unwrap_err();
    assert!(
        matches!(err, LeadError::FilterNotApplied(_)),
        "non-empty people with a zero total is a filter bug"
    );

    let fake = Fake::new(5).then(200, &[], json!("not an object"));
    assert!(matches!(
        block_on(Apollo::new(Some(&config), &fake).estimate(&vp_filters())),
        Err(LeadError::Unavailable(_))
    ));

    let fake = Fake::new(5);
    let err = block_on(Apollo::new(None, &fake).estimate(&vp_filters())).unwrap_err();
    assert!(matches!(err, LeadError::NotConfigured(_)));
    assert!(fake.requests.borrow().is_empty());
}

#[test]
fn network_failures_are_retried_then_reported() {
    struct Down(RefCell<u32>);
    impl Outbound for Down {
        fn fetch(&self, _: OutboundRequest) -> LocalBoxFuture<'_, Result<OutboundResponse, OutboundError>> {
            *self.0.borrow_mut() += 1;
            Box::pin(async { Err(OutboundError("connection refused".into())) })
        }
        fn sleep(&self, _: u32) -> LocalBoxFuture<'_, ()> {
            Box::pin(async {})
        }
    }
    let down = Down(RefCell::new(0));
    let config = config();
    let err = block_on(Apollo::new(Some(&config), &down).estimate(&vp_filters())).unwrap_err();
    assert!(matches!(err, LeadError::Unavailable(m) if m.contains("connection refused")));
    assert_eq!(*down.0.borrow(), ATTEMPTS);
    // Enrichment is not sent again: the lost call may have charged its credits (audit finding).
    let down = Down(RefCell::new(0));
    let err = block_on(Apollo::new(Some(&config), &down).enrich(&["p1".into()])).unwrap_err();
    assert!(matches!(err, LeadError::Unavailable(_)), "{err:?}");
    assert_eq!(*down.0.borrow(), 1);
}

#[test]
fn a_failed_enrichment_part_way_keeps_what_was_paid_for() {
    /// Apollo, with its second `bulk_match` call refused.
    struct SecondEnrichFails<'a>(&'a Fake, std::cell::Cell<usize>);
    impl Outbound for SecondEnrichFails<'_> {
        fn fetch(&self, req: OutboundRequest) -> LocalBoxFuture<'_, Result<OutboundResponse, OutboundError>> {
            if req.url.contains("/people/bulk_match") {
                self.1.set(self.1.get() + 1);
                if self.1.get() == 2 {
                    self.0.requests.borrow_mut().push(req);
                    let refused = OutboundResponse { status: 422, headers: vec![], body: b"{}".to_vec() };
                    return Box::pin(async { Ok(refused) });
                }
            }
            self.0.fetch(req)
        }
        fn sleep(&self, ms: u32) -> LocalBoxFuture<'_, ()> {
            self.0.sleep(ms)
        }
    }
    let fake = Fake::new(460);
    let flaky = SecondEnrichFails(&fake, std::cell::Cell::new(0));
    let config = config();
    let apollo = Apollo::new(Some(&config), &flaky);
    let f = Filters { exclude_company_domains: vec!["excluded.com".into()], ..vp_filters() };
    let known = |id: &str| id == "ap_0000";

    // Positions 0 (known), 4 (excluded), then ten candidates: the second chunk starts at 12.
    let cut = block_on(apollo.fetch(&f, 0, 100, &known)).unwrap();
    assert!(cut.interrupted.is_some());
    assert!(!cut.exhausted);
    assert_eq!((cut.consumed, cut.known, cut.excluded, cut.people.len()), (12, 1, 1, 10));
    assert_eq!(cut.credits, cut.people.iter().filter(|p| p.email.is_some()).count() as u64);

    // The next batch starts with the chunk that failed: nobody is enriched twice.
    let rest = block_on(apollo.fetch(&f, cut.consumed, 88, &known)).unwrap();
    assert_eq!(rest.interrupted, None);
    assert_eq!(cut.consumed + rest.consumed, 100);
    let ids: Vec<&str> = cut.people.iter().chain(&rest.people).map(|p| p.provider_id.as_str()).collect();
    let unique: std::collections::HashSet<&&str> = ids.iter().collect();
    assert_eq!(unique.len(), ids.len());
    assert_eq!(ids.len() as u64, 100 - 1 - cut.excluded - rest.excluded);
    let paid: Vec<String> = fake
        .requests
        .borrow()
        .iter()
        .filter(|r| r.url.contains("/people/bulk_match"))
        .flat_map(|r| {
            let body: Value = serde_json::from_slice(r.body.as_ref().unwrap()).unwrap();
            body["details"]
                .as_array()
                .unwrap()
                .iter()
                .map(|d| d["id"].as_str().unwrap().to_owned())
                .collect::<Vec<_>>()
        })
        .collect();
    // Ten asked twice: once in the refused call (no credits), once after.
    assert_eq!(paid.len(), ids.len() + 10);

    // A failure on the first chunk keeps nothing and moves only past what needed no enrichment.
    let fake = Fake::new(460);
    let flaky = SecondEnrichFails(&fake, std::cell::Cell::new(1));
    let apollo = Apollo::new(Some(&config), &flaky);
    let none = block_on(apollo.fetch(&f, 0, 100, &known)).unwrap();
    assert_eq!((none.consumed, none.known, none.people.len(), none.credits), (1, 1, 0, 0));
}

#[test]
fn excluded_titles_match_whole_words() {
    let f = Filters { exclude_titles: vec!["CTO".into(), "Intern".into()], ..Filters::default() };
    let titled = |t: &str| {
        person(&json!({ "id": "ap_1", "first_name": "A", "title": t, "organization": { "name": "C" } }), None)
    };
    assert!(kept(&f, &titled("Director of Engineering")));
    assert!(kept(&f, &titled("International Sales Coordinator")));
    assert!(!kept(&f, &titled("Chief Technology Officer (CTO)")));
    assert!(!kept(&f, &titled("Sales Intern")));
}

#[test]
fn fields_are_kept_to_a_bounded_length() {
    let long = "Chief ".repeat(200);
    let p = person(
        &json!({ "id": "ap_1", "first_name": "A", "title": long, "organization": { "name": "C" } }),
        None,
    );
    assert_eq!(p.title.chars().count(), super::MAX_FIELD);
}

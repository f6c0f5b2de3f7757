use super::*;
use crate::sending::classify::{Hints, classify};
use crate::sending::platform::{AccountSpec, LeadSpec, OrderItem, StepSpec};
use crate::testing::{MemoryDb, NOW_MS, block_on};

/// 2026-11-29T12:00:00Z is a Sunday.
const SUNDAY_NOON: i64 = NOW_MS;

fn db() -> MemoryDb {
    let db = MemoryDb::new();
    crate::workspace::migrations::apply(&db, NOW_MS).unwrap();
    db
}

fn open(db: &MemoryDb, real: i64) -> Sandbox<'_> {
    Sandbox::open(db, SandboxSettings::default(), real).unwrap()
}

/// Lets the simulation catch up with `real` (time scale 1), step by step.
fn run_until(db: &MemoryDb, real: i64) -> usize {
    let sb = open(db, real);
    let mut steps = 0;
    while block_on(sb.advance()).unwrap() {
        steps += 1;
    }
    steps
}

fn account(prefix: &str) -> AccountSpec {
    AccountSpec { prefix: prefix.into(), first_name: "Anna".into(), last_name: "Berg".into() }
}

fn order(kind: OrderKind, domains: &[&str]) -> OrderSpec {
    OrderSpec {
        kind,
        items: domains
            .iter()
            .map(|d| OrderItem {
                domain: (*d).into(),
                accounts: vec![account("anna"), account("anna.berg"), account("a.berg")],
            })
            .collect(),
    }
}

fn available(sb: &Sandbox<'_>, n: usize) -> Vec<String> {
    let names = names::lookalikes("ledgerly.io");
    let checks = block_on(sb.check_domains(&names)).unwrap();
    checks.into_iter().filter(|c| c.available).map(|c| c.domain).take(n).collect()
}

#[test]
fn the_registrar_is_deterministic_and_prices_add_up() {
    let db = db();
    let sb = open(&db, SUNDAY_NOON);
    let names = names::lookalikes("ledgerly.io");
    let a = block_on(sb.check_domains(&names)).unwrap();
    let b = block_on(open(&db, SUNDAY_NOON + 5).check_domains(&names)).unwrap();
    assert_eq!(a, b, "same seed, same answers");
    let free = a.iter().filter(|c| c.available).count();
    assert!(free >= 4 && free < names.len(), "{free} of {} available", names.len());
    let taken = block_on(sb.check_domains(&["google.com".into(), "not a domain".into()])).unwrap();
    assert!(taken.iter().all(|c| !c.available && c.reason.is_some()));
    let reserved = block_on(sb.check_domains(&["acmelabs.example".into(), "x.test".into()])).unwrap();
    assert!(reserved.iter().all(|c| !c.available && c.reason.as_deref().unwrap().contains("reserved")));
    // Another seed gives other answers.
    let other =
        Sandbox::open(&db, SandboxSettings { seed: 99, ..SandboxSettings::default() }, SUNDAY_NOON).unwrap();
    assert_ne!(block_on(other.check_domains(&names)).unwrap(), a);

    let two = available(&sb, 2);
    let q = block_on(sb.quote(&order(OrderKind::OwnNames, &[&two[0], &two[1]]))).unwrap();
    assert!(q.valid, "{:?}", q.problems);
    assert_eq!(q.accounts_per_month, 6 * 300);
    assert_eq!(q.due_now, q.domains_per_year + q.accounts_per_month);
    assert!(q.items.iter().all(|i| i.domain_per_year >= 1_100));

    let bad = OrderSpec {
        kind: OrderKind::OwnNames,
        items: vec![
            OrderItem { domain: "getledgerly.io".into(), accounts: vec![account("anna")] },
            OrderItem {
                domain: two[0].clone(),
                accounts: (0..6).map(|i| account(&format!("a{i}"))).collect(),
            },
        ],
    };
    let q = block_on(sb.quote(&bad)).unwrap();
    assert!(!q.valid);
    assert!(q.problems.iter().any(|p| p.contains(".com and .org")), "{:?}", q.problems);
    assert!(q.problems.iter().any(|p| p.contains("between 1 and 5")), "{:?}", q.problems);
}

#[test]
fn orders_are_idempotent_and_own_names_take_two_business_days() {
    let db = db();
    let sb = open(&db, SUNDAY_NOON);
    let two = available(&sb, 2);
    let spec = order(OrderKind::OwnNames, &[&two[0], &two[1]]);
    let first = block_on(sb.place_order(&spec, "vibesell-apr_1-order", &ApprovedPrices::ANY)).unwrap();
    let again = block_on(sb.place_order(&spec, "vibesell-apr_1-order", &ApprovedPrices::ANY)).unwrap();
    assert_eq!(first, again, "the same key places the order once");
    let orders =
        db.query(Stmt::new("SELECT COUNT(*) FROM sandbox_sending_orders", vec![])).unwrap().scalar_i64();
    assert_eq!(orders, Some(1));
    // Ordered domains are no longer available.
    assert!(!block_on(sb.check_domains(&[two[0].clone()])).unwrap()[0].available);
    let emails = spec.addresses();
    assert_eq!(emails.len(), 6);

    // Ordered on Sunday: ready on Tuesday at the same time (weekends not counted).
    let tuesday_noon = SUNDAY_NOON + 2 * DAY;
    run_until(&db, tuesday_noon - 60_000);
    let sb = open(&db, tuesday_noon - 60_000);
    let accounts = block_on(sb.accounts(&emails)).unwrap();
    assert_eq!(accounts.len(), 6);
    assert!(accounts.iter().all(|a| a.setup_pending));
    let dns = block_on(sb.dns(&emails)).unwrap();
    assert_eq!(dns.len(), 2);
    assert!(dns.iter().all(|(_, d)| d.mx && d.spf && d.dkim && !d.dmarc), "DMARC passes last: {dns:?}");
    run_until(&db, tuesday_noon);
    let sb = open(&db, tuesday_noon);
    assert!(block_on(sb.accounts(&emails)).unwrap().iter().all(|a| !a.setup_pending));
    assert!(block_on(sb.dns(&emails)).unwrap().iter().all(|(_, d)| d.mx && d.spf && d.dkim && d.dmarc));

    // Ordered late on Sunday evening: still set up on Tuesday (by noon), not on Wednesday.
    let db3 = self::db();
    let sunday_late = SUNDAY_NOON + 11 * HOUR;
    let sb3 = open(&db3, sunday_late);
    let spec3 = order(OrderKind::OwnNames, &[&available(&sb3, 1)[0]]);
    block_on(sb3.place_order(&spec3, "late", &ApprovedPrices::ANY)).unwrap();
    run_until(&db3, tuesday_noon);
    let set_up = block_on(open(&db3, tuesday_noon).accounts(&spec3.addresses())).unwrap();
    assert!(set_up.iter().all(|a| !a.setup_pending), "{set_up:?}");

    // Warm-up asked for before setup ends starts when the mailbox exists, and climbs.
    let db2 = self::db();
    let sb2 = open(&db2, SUNDAY_NOON);
    let spec2 = order(OrderKind::OwnNames, &[&available(&sb2, 1)[0]]);
    block_on(sb2.place_order(&spec2, "k", &ApprovedPrices::ANY)).unwrap();
    block_on(sb2.enable_warmup(&spec2.addresses())).unwrap();
    let health_at = |real: i64| {
        run_until(&db2, real);
        let a = block_on(open(&db2, real).accounts(&spec2.addresses())).unwrap();
        (a[0].warmup_on, a[0].health)
    };
    assert_eq!(health_at(tuesday_noon - 1), (false, None));
    let (on, day1) = health_at(tuesday_noon + DAY);
    assert!(on && day1.unwrap() < 60, "{day1:?}");
    let (_, day7) = health_at(tuesday_noon + 7 * DAY);
    let (_, day14) = health_at(tuesday_noon + 14 * DAY);
    assert!(day1 < day7 && day7 < day14, "{day1:?} {day7:?} {day14:?}");
    assert!(day14.unwrap() >= 90, "{day14:?}");
}

fn campaign_spec(senders: Vec<String>, daily_limit: u32) -> CampaignSpec {
    CampaignSpec {
        name: "Ledgerly — UK finance".into(),
        timezone: "Europe/London".into(),
        from_hour: 9,
        to_hour: 17,
        steps: vec![
            StepSpec {
                subject: "{{firstName}}, closing the books at {{companyName}}".into(),
                body: "Hi {{firstName}}…\n\n{{unsubscribeUrl}}".into(),
                delay_days: 3,
            },
            StepSpec { subject: String::new(), body: "Following up.".into(), delay_days: 3 },
            StepSpec { subject: String::new(), body: "Last note.".into(), delay_days: 3 },
        ],
        senders,
        daily_limit,
        per_mailbox: 30,
        ramp: vec![],
        start_date: None,
    }
}

fn leads(n: usize) -> Vec<LeadSpec> {
    (0..n)
        .map(|i| LeadSpec {
            email: format!("person{i}@company{}.example", i % 97),
            first_name: format!("P{i}"),
            last_name: "Lead".into(),
            company_name: format!("Company {}", i % 97),
            job_title: "CFO".into(),
            variables: vec![("unsubscribeUrl".into(), format!("https://u/{i}"))],
        })
        .collect()
}

/// A warmed-order, a campaign of `n` leads and its activation, at Sunday noon.
fn launched(db: &MemoryDb, n: usize, daily_limit: u32) -> (String, Vec<String>) {
    let sb = open(db, SUNDAY_NOON);
    let shelf = block_on(sb.warmed_domains()).unwrap();
    assert_eq!(shelf.len(), SandboxSettings::default().shelf_domains as usize);
    let spec = order(OrderKind::AlreadyWarmed, &[&shelf[0].domain]);
    let q = block_on(sb.quote(&spec)).unwrap();
    assert_eq!((q.valid, q.domains_per_year, q.accounts_per_month), (true, 0, 1_500));
    block_on(sb.place_order(&spec, "order", &ApprovedPrices::ANY)).unwrap();
    let senders = spec.addresses();
    let id = block_on(sb.create_campaign(&campaign_spec(senders.clone(), daily_limit), "campaign")).unwrap();
    assert_eq!(
        block_on(sb.create_campaign(&campaign_spec(senders.clone(), daily_limit), "campaign")).unwrap(),
        id
    );
    let all = leads(n);
    let added = block_on(sb.add_leads(&id, &all)).unwrap();
    assert_eq!(added.uploaded as usize, n);
    let again = block_on(sb.add_leads(&id, &all[..10])).unwrap();
    assert_eq!((again.uploaded, again.skipped), (0, 10), "leads are added once");
    assert_eq!(block_on(sb.report(&id)).unwrap().status, CampaignStatus::Draft);
    block_on(sb.activate(&id)).unwrap();
    (id, senders)
}

#[test]
fn a_campaign_takes_more_leads_than_one_call_of_instantly_carries() {
    // `launched` checks that every lead was uploaded, in one call of the trait.
    launched(&db(), LEADS_PER_CALL + 1, 30);
}

#[derive(Debug, PartialEq, serde::Deserialize)]
struct Event {
    id: String,
    lead: String,
    kind: String,
    step: i64,
    account: String,
    at: i64,
}

fn events(db: &MemoryDb) -> Vec<Event> {
    let db: &dyn Db = db;
    db.rows("SELECT id, lead, kind, step, account, at FROM sandbox_sending_events ORDER BY id", vec![])
        .unwrap()
}

#[test]
fn campaigns_send_inside_the_window_within_limits_and_deterministically() {
    let db_a = db();
    let (id, senders) = launched(&db_a, 400, 80);
    // Run four weeks in 6-hour hops.
    let end = SUNDAY_NOON + 28 * DAY;
    let mut t = SUNDAY_NOON;
    while t < end {
        t += 6 * HOUR;
        run_until(&db_a, t);
    }
    // The same inputs run in two big hops give exactly the same emails, replies and bounces.
    let db_b = db();
    launched(&db_b, 400, 80);
    run_until(&db_b, SUNDAY_NOON + 9 * DAY + 7 * HOUR);
    run_until(&db_b, end);
    let (a, b) = (events(&db_a), events(&db_b));
    assert!(a.len() > 1_000);
    assert_eq!(a, b, "the outcome does not depend on when the simulation is advanced");

    let zone = calendar::zone("Europe/London").unwrap();
    let sent: Vec<&Event> = a.iter().filter(|e| e.kind == "sent").collect();
    let mut per_day: std::collections::BTreeMap<(String, String), i64> = Default::default();
    let mut campaign_day: std::collections::BTreeMap<String, i64> = Default::default();
    for e in &sent {
        let (date, hour) = zone.local(e.at);
        assert!((9..17).contains(&hour), "sent at {date} {hour}:00");
        assert!(!date.is_weekend(), "sent on a weekend: {date}");
        *per_day.entry((calendar::iso(date), e.account.clone())).or_default() += 1;
        *campaign_day.entry(calendar::iso(date)).or_default() += 1;
    }
    assert!(per_day.values().all(|n| *n <= 30), "per-mailbox limit: {per_day:?}");
    assert!(campaign_day.values().all(|n| *n <= 80), "campaign daily limit: {campaign_day:?}");
    assert!(campaign_day.values().any(|n| *n == 80), "it uses its capacity");
    assert!(sent.iter().all(|e| senders.contains(&e.account)));
    // Monday 30 November is the first day of sending (the order was made on Sunday).
    assert_eq!(campaign_day.keys().next().map(String::as_str), Some("2026-11-30"));

    // Steps follow each other at least 3 days apart, and stop on a reply.
    let mut by_lead: std::collections::BTreeMap<&str, Vec<&Event>> = Default::default();
    for e in &a {
        by_lead.entry(e.lead.as_str()).or_default().push(e);
    }
    for (lead, evs) in &by_lead {
        let mut sends: Vec<&&Event> = evs.iter().filter(|e| e.kind == "sent").collect();
        sends.sort_by_key(|e| e.step);
        for w in sends.windows(2) {
            assert!(w[1].at - w[0].at >= 3 * DAY, "{lead}: steps too close");
            assert_eq!(w[1].step, w[0].step + 1);
        }
        if let Some(reply) = evs.iter().find(|e| e.kind == "reply") {
            assert!(
                sends.iter().all(|s| s.step <= reply.step || s.at <= reply.at),
                "{lead} got an email after replying"
            );
        }
        if evs.iter().any(|e| e.kind == "bounce") {
            assert_eq!(sends.len(), 1, "{lead}: nothing after a bounce");
        }
    }

    let sb = open(&db_a, end);
    let report = block_on(sb.report(&id)).unwrap();
    assert_eq!(report.status, CampaignStatus::Completed, "{:?}", report.totals);
    let t = report.totals;
    assert_eq!((t.leads, t.contacted), (400, 400));
    assert_eq!(t.sent as usize, sent.len());
    assert!(t.sent < 1_200 && t.sent > 1_000, "{t:?}");
    assert!((1..=20).contains(&t.bounced), "{t:?}");
    assert!((4..=30).contains(&t.replied), "{t:?}");
    assert!(t.opened > 100 && t.opened < 260, "{t:?}");
    assert_eq!(report.daily.iter().map(|d| d.sent).sum::<u32>(), t.sent);
    assert_eq!(report.steps.iter().map(|s| s.sent).sum::<u32>(), t.sent);
    assert_eq!(report.steps.len(), 3);

    // Replies read as the class they were drawn with; bounces as bounces.
    let received = block_on(sb.received(&id, 0)).unwrap();
    assert!(!received.more);
    let mut classes = std::collections::BTreeSet::new();
    for r in &received.items {
        let class = classify(
            &r.subject,
            &r.text,
            Hints { auto_reply: r.auto_reply, bounce: r.bounce, interest: r.interest },
        );
        let fate = sb.fate(&r.lead, 3);
        match class {
            Class::Bounce => assert!(fate.bounce),
            Class::OutOfOffice => assert!(fate.out_of_office),
            c => assert_eq!(fate.reply.map(|f| f.1), Some(c), "{}: {}", r.lead, r.text),
        }
        classes.insert(class);
    }
    assert!(classes.contains(&Class::Bounce) && classes.contains(&Class::OutOfOffice));
    assert!(classes.len() >= 4, "{classes:?}");
    let outcomes = block_on(sb.outcomes(&id, None)).unwrap();
    assert_eq!(outcomes.next, None);
    assert_eq!(outcomes.items.iter().filter(|(_, o)| *o == Outcome::Bounced).count() as u32, t.bounced);
}

#[test]
fn pausing_stops_sending_and_blocked_addresses_are_skipped() {
    let db = db();
    let (id, _) = launched(&db, 200, 90);
    // Block a whole company before anyone there is emailed.
    block_on(open(&db, SUNDAY_NOON).block("company3.example")).unwrap();
    run_until(&db, SUNDAY_NOON + DAY + 2 * HOUR); // Monday 14:00 UTC
    let sb = open(&db, SUNDAY_NOON + DAY + 2 * HOUR);
    let before = block_on(sb.report(&id)).unwrap().totals.sent;
    assert!(before > 0);
    block_on(sb.pause(&id)).unwrap();
    run_until(&db, SUNDAY_NOON + 4 * DAY);
    let sb = open(&db, SUNDAY_NOON + 4 * DAY);
    let paused = block_on(sb.report(&id)).unwrap();
    assert_eq!(
        (paused.status, paused.totals.sent),
        (CampaignStatus::Paused, before),
        "nothing sent while paused"
    );
    block_on(sb.activate(&id)).unwrap();
    run_until(&db, SUNDAY_NOON + 20 * DAY);
    let sb = open(&db, SUNDAY_NOON + 20 * DAY);
    assert!(block_on(sb.report(&id)).unwrap().totals.sent > before);
    let blocked: Vec<Event> =
        events(&db).into_iter().filter(|e| e.lead.ends_with("@company3.example")).collect();
    assert!(blocked.is_empty(), "blocked addresses are never emailed: {blocked:?}");
}

#[test]
fn new_mailboxes_ramp_up_slowly() {
    let db = db();
    let sb = open(&db, SUNDAY_NOON);
    let spec = order(OrderKind::OwnNames, &[&available(&sb, 1)[0]]);
    block_on(sb.place_order(&spec, "k", &ApprovedPrices::ANY)).unwrap();
    let senders = spec.addresses();
    // The ramp is the campaign's setting for each sender, as Instantly's account setting is:
    // the first mailbox ramps up, the second (as if warmed by its seller) does not.
    let campaign = CampaignSpec { ramp: vec![senders[0].clone()], ..campaign_spec(senders.clone(), 300) };
    let id = block_on(sb.create_campaign(&campaign, "c")).unwrap();
    block_on(sb.add_leads(&id, &leads(300))).unwrap();
    block_on(sb.activate(&id)).unwrap();
    run_until(&db, SUNDAY_NOON + 8 * DAY);
    let zone = calendar::zone("Europe/London").unwrap();
    let per_day = |sender: &str| {
        let mut per_day: std::collections::BTreeMap<String, i64> = Default::default();
        for e in events(&db).iter().filter(|e| e.kind == "sent" && e.account == sender) {
            *per_day.entry(calendar::iso(zone.local_date(e.at))).or_default() += 1;
        }
        per_day
    };
    let ramped = per_day(&senders[0]);
    let counts: Vec<i64> = ramped.values().copied().collect();
    // Set up on Tuesday noon: Tuesday afternoon is its first day (2), then 4, 6, …
    assert_eq!(&counts[..4], [2, 4, 6, 8], "{ramped:?}");
    let full = per_day(&senders[1]);
    assert_eq!(full.values().next(), Some(&30), "no ramp: the whole limit from the first day: {full:?}");
}

#[test]
fn the_clock_runs_at_its_scale_and_never_jumps_when_the_scale_changes() {
    let db = db();
    let at = |real: i64, scale: f64| {
        Sandbox::open(&db, SandboxSettings { time_scale: scale, ..SandboxSettings::default() }, real)
            .unwrap()
            .now_ms()
    };
    assert_eq!(at(SUNDAY_NOON, 1.0), SUNDAY_NOON, "starts at real time");
    assert_eq!(at(SUNDAY_NOON + 1_000, 1.0), SUNDAY_NOON + 1_000);
    // Sped up: continues from where it was, then runs 86,400 times faster.
    assert_eq!(at(SUNDAY_NOON + 2_000, 86_400.0), SUNDAY_NOON + 2_000);
    assert_eq!(at(SUNDAY_NOON + 3_000, 86_400.0), SUNDAY_NOON + 2_000 + DAY);
    // Back to real time: no jump back.
    let before = at(SUNDAY_NOON + 4_000, 86_400.0);
    assert_eq!(at(SUNDAY_NOON + 4_000, 1.0), before);
    assert_eq!(at(SUNDAY_NOON + 5_000, 1.0), before + 1_000);
    // A clock that goes backwards does not move the simulation backwards.
    assert_eq!(at(SUNDAY_NOON, 1.0), before);
}

//! The sending tools natively, on the sandbox platform: sizing, the questions and their cards,
//! the order approval, the setup and the warm-up over simulated days.

use serde_json::{Value, json};

use crate::auth::{Principal, ScopeSet};
use crate::config::Config;
use crate::outbound::NoNetwork;
use crate::providers::sandbox_billing::{CARD_OK, Paid};
use crate::testing::{MemoryDb, NOW_MS, block_on, principal, test_config};
use crate::tools::{Outcome, ToolOutcome};
use crate::workspace::{self, Op, OpReply, Services, schedule};

const DAY: i64 = 86_400_000;

pub(crate) struct World {
    pub db: MemoryDb,
    pub config: Config,
    pub app: Principal,
}

impl World {
    pub fn new() -> World {
        World::with_config(test_config())
    }

    /// A world whose configuration has these vars besides the test ones.
    pub fn with_vars(vars: &[(&str, &str)]) -> World {
        let mut all: std::collections::HashMap<String, String> = [
            ("PUBLIC_URL", "http://127.0.0.1:8787"),
            ("PROVIDER_MODE", "sandbox"),
            ("JWT_SIGNING_KEYS", crate::testing::DEV_KEYS),
        ]
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect();
        all.extend(vars.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())));
        World::with_config(Config::from_lookup(|k| all.get(k).cloned()).unwrap())
    }

    fn with_config(config: Config) -> World {
        let w = World { db: MemoryDb::new(), config, app: principal(ScopeSet::FULL, true) };
        workspace::open(&w.db, &w.app, NOW_MS).unwrap();
        w
    }

    pub fn call(&self, tool: &str, arguments: Value, now: i64) -> ToolOutcome {
        crate::testing::run_tool(&self.db, &self.config, &self.app, tool, arguments, now)
    }

    pub fn ok(&self, tool: &str, arguments: Value, now: i64) -> Value {
        let out = self.call(tool, arguments, now);
        assert_eq!(out.outcome, Outcome::Ok, "{tool}: {}", out.text);
        out.structured.unwrap()
    }

    pub fn refused(&self, tool: &str, arguments: Value, now: i64) -> String {
        let out = self.call(tool, arguments, now);
        assert_eq!(out.outcome, Outcome::Refused, "{tool}: {}", out.text);
        out.text
    }

    /// Subscribes to `plan` through the sandbox checkout page.
    pub fn subscribe(&self, plan: &str) {
        self.subscribe_at(plan, NOW_MS);
    }

    /// The same, at `now`.
    pub fn subscribe_at(&self, plan: &str, now: i64) {
        let checkout = self.ok("start_checkout", json!({ "plan": plan }), now);
        let session = checkout["sessionId"].as_str().unwrap().to_owned();
        let svc = Services { db: &self.db, config: &self.config, outbound: &NoNetwork, now_ms: now };
        let paid = block_on(workspace::handle_op(
            &svc,
            &workspace::Opened::default(),
            Op::SandboxPay { session, card: CARD_OK.into() },
        ))
        .unwrap();
        assert!(matches!(paid, OpReply::SandboxPaid { outcome: Paid::Paid { .. } }), "{paid:?}");
    }

    /// Cancels the subscription through the sandbox billing portal, at `now`: the plan ends at
    /// once (the free plan).
    pub fn cancel_subscription(&self, now: i64) {
        let portal = self.ok("open_billing_portal", json!({}), now);
        let session = portal["url"].as_str().unwrap().rsplit('/').next().unwrap().to_owned();
        let svc = Services { db: &self.db, config: &self.config, outbound: &NoNetwork, now_ms: now };
        let op = Op::SandboxCancel { session, to: None };
        let canceled = block_on(workspace::handle_op(&svc, &workspace::Opened::default(), op)).unwrap();
        assert_eq!(canceled, OpReply::SandboxCanceled { canceled: true, to: None });
    }

    /// Answers a choice with `answer` (the card it showed), returning the next result.
    pub fn answer(&self, tool: &str, choice: &Value, answer: &str, now: i64) -> Value {
        assert_eq!(choice["kind"], "choice", "{choice}");
        let mut args = choice["arguments"].clone();
        let mut answers = choice["answers"].as_array().cloned().unwrap_or_default();
        answers.push(json!({ "card": choice["card"], "answer": answer }));
        args["answers"] = Value::Array(answers);
        self.ok(tool, args, now)
    }

    pub fn offer(&self) {
        self.ok(
            "save_offer",
            json!({ "product": "Ledgerly", "description": "Close automation", "value_proposition": "3-day close",
                    "website": "https://www.ledgerly.io", "postal_address": "1 Main St, Springfield" }),
            NOW_MS,
        );
    }

    /// Offer, sizing (6 mailboxes on 2 domains) confirmed.
    pub fn sized(&self) -> Value {
        self.offer();
        self.ok(
            "size_sending_capacity",
            json!({ "volume": 45, "unit": "new_leads_per_day", "steps": 4 }),
            NOW_MS,
        );
        self.ok("confirm_sizing", json!({}), NOW_MS)
    }

    /// Runs the workspace's alarm as the Durable Object would, every time a job is due, until
    /// `until`.
    pub fn run_jobs_until(&self, until: i64) -> usize {
        let mut runs = 0;
        while let Some(due) = workspace::next_alarm(&self.db).unwrap().filter(|d| *d <= until) {
            let svc = Services { db: &self.db, config: &self.config, outbound: &NoNetwork, now_ms: due };
            block_on(workspace::on_alarm(&svc, &workspace::Opened::default())).unwrap();
            runs += 1;
            assert!(runs < 100_000, "jobs keep running");
        }
        runs
    }

    /// Decides an approval as the user, in the card.
    pub fn approve(&self, approval: &Value, now: i64) -> Value {
        assert_eq!(approval["kind"], "approval", "{approval}");
        self.ok("decide_approval", json!({ "id": approval["id"], "decision": "approve" }), now)
    }

    /// The whole own-brand path up to an approved order.
    pub fn own_brand_ordered(&self) -> Value {
        let approval = self.own_brand_asked();
        self.approve(&approval, NOW_MS)
    }

    /// Everything chosen for mailboxes under the user's brand, on the Growth plan, and the
    /// order's approval asked for (not decided).
    pub fn own_brand_asked(&self) -> Value {
        self.sized();
        self.own_brand_chosen(NOW_MS);
        self.subscribe("growth");
        self.ok("order_sending_setup", json!({}), NOW_MS)
    }

    /// The user's brand, the first proposed domains and the proposed names chosen, at `at`.
    pub fn own_brand_chosen(&self, at: i64) {
        let q = self.ok("choose_sending_source", json!({}), at);
        self.answer("choose_sending_source", &q, "own_names", at);
        let q = self.ok("propose_domains", json!({}), at);
        self.answer("propose_domains", &q, "set_1", at);
        let q = self.ok("propose_email", json!({ "sender_name": "Anna Berg" }), at);
        self.answer("propose_email", &q, "names", at);
    }
}

#[test]
fn sizing_turns_volume_into_mailboxes_and_checks_the_plan() {
    let w = World::new();
    assert!(w.refused("confirm_sizing", json!({}), NOW_MS).contains("size_sending_capacity"));
    w.offer();
    let s = w.ok(
        "size_sending_capacity",
        json!({ "volume": 45, "unit": "new_leads_per_day", "steps": 4 }),
        NOW_MS,
    );
    assert_eq!(s["kind"], "sizing");
    assert_eq!(
        (s["confirmed"].clone(), s["mailboxes"].clone(), s["domains"].clone()),
        (json!(false), json!(6), json!(2))
    );
    assert_eq!(
        (s["emailsPerDay"].clone(), s["perMailbox"].clone(), s["rampDays"].clone()),
        (json!(180), json!(30), json!(15))
    );
    assert_eq!(
        (s["withinPlan"].clone(), s["upgradeTo"].clone()),
        (json!(false), json!("growth")),
        "the free plan has no mailboxes"
    );
    assert!(s["notes"].to_string().contains("Never from ledgerly.io"));
    let bad = w.refused(
        "size_sending_capacity",
        json!({ "volume": 10, "unit": "emails_per_day", "per_mailbox": 80 }),
        NOW_MS,
    );
    assert!(bad.contains("between 20 and 50"), "{bad}");
    let c = w.ok("confirm_sizing", json!({}), NOW_MS);
    assert_eq!(c["confirmed"], true);
    // Sizing again un-confirms.
    let again = w.ok("size_sending_capacity", json!({ "volume": 3000, "unit": "emails_per_month" }), NOW_MS);
    assert_eq!((again["confirmed"].clone(), again["steps"].clone()), (json!(false), json!(4)));
    // What the text adds up adds up: a volume in emails that the steps do not divide is a
    // division, and a leads-first volume a product (third journey walk).
    let text = |args: Value| w.call("size_sending_capacity", args, NOW_MS).text;
    let emails = text(json!({ "volume": 100, "unit": "emails_per_day", "steps": 3 }));
    assert!(emails.contains(":** 100 emails a business day ÷ 3 steps ≈ 33 new leads a day → "), "{emails}");
    let leads = text(json!({ "volume": 45, "unit": "new_leads_per_day", "steps": 4 }));
    assert!(leads.contains(":** 45 new leads a day × 4 steps = 180 emails a business day → "), "{leads}");
    let monthly = text(json!({ "volume": 10, "unit": "new_leads_per_month", "steps": 3 }));
    assert!(monthly.contains("is about 1 new lead a business day."), "{monthly}");
}

#[test]
fn the_source_question_is_settled_only_for_its_card_and_asked_again_when_it_changed() {
    let w = World::new();
    assert!(w.refused("choose_sending_source", json!({}), NOW_MS).contains("size_sending_capacity"));
    w.sized();
    let q = w.ok("choose_sending_source", json!({}), NOW_MS);
    assert_eq!(q["kind"], "choice");
    assert_eq!(q["tool"], "choose_sending_source");
    assert_eq!(q["question"], "Choose your sending addresses");
    assert_eq!(q["choices"][0]["id"], "already_warmed");
    assert_eq!(q["choices"][1]["id"], "own_names");
    // Sunday 29 November: own-brand addresses ready on Tuesday 1 December (weekend not counted).
    assert!(
        q["choices"][1]["description"].as_str().unwrap().contains("Tue 1 Dec 2026"),
        "{}",
        q["choices"][1]
    );
    assert_eq!(q["allowFreeText"], true);
    assert_eq!(
        w.ok("choose_sending_source", json!({}), NOW_MS)["card"],
        q["card"],
        "same question, same card"
    );
    // An answer to another card does not count.
    let other = w.ok(
        "choose_sending_source",
        json!({ "answers": [{ "card": "0000000000000000", "answer": "own_names" }] }),
        NOW_MS,
    );
    assert_eq!(other["kind"], "choice");
    let settled = w.answer("choose_sending_source", &q, "Send under my brand", NOW_MS);
    assert_eq!(settled["kind"], "sending_choice");
    assert_eq!(
        (settled["source"].clone(), settled["setupDate"].clone()),
        (json!("own_names"), json!("2026-12-01"))
    );
    assert_eq!(settled["readyDate"], "2026-12-15");
    assert_eq!(settled["next"]["tool"], "propose_domains");
    // The same call again is idempotent.
    assert_eq!(w.answer("choose_sending_source", &q, "own_names", NOW_MS)["kind"], "sending_choice");
    // The question changes when the sizing does: the old answer no longer counts, it is asked again.
    w.ok("size_sending_capacity", json!({ "volume": 300, "unit": "emails_per_day" }), NOW_MS);
    w.ok("confirm_sizing", json!({}), NOW_MS);
    let out = w.call(
        "choose_sending_source",
        json!({ "answers": [{ "card": q["card"], "answer": "own_names" }] }),
        NOW_MS,
    );
    let again = out.structured.unwrap();
    assert_eq!(again["kind"], "choice");
    assert_ne!(again["card"], q["card"]);
    assert!(out.text.contains("asked again"), "{}", out.text);
    // Downstream steps wait for the new answer.
    assert!(w.refused("propose_domains", json!({}), NOW_MS).contains("choose_sending_source"));
    // The next day the dates move, so the card does too.
    let tomorrow = w.ok("choose_sending_source", json!({}), NOW_MS + DAY);
    assert_ne!(tomorrow["card"], again["card"]);
    // Free text is read when it is clear, asked again when not.
    let unclear = w.call(
        "choose_sending_source",
        json!({ "answers": [{ "card": again["card"], "answer": "hmm" }] }),
        NOW_MS,
    );
    assert!(unclear.text.contains("did not clearly pick"), "{}", unclear.text);
    // Read by whole words: "know" is not "now", and a question back is not an answer.
    for doubt in ["I don't know, what do you recommend?", "not under my brand", "I know"] {
        let out = w.call(
            "choose_sending_source",
            json!({ "answers": [{ "card": again["card"], "answer": doubt }] }),
            NOW_MS,
        );
        assert_eq!(out.structured.unwrap()["kind"], "choice", "{doubt}: {}", out.text);
    }
    let warmed = w.answer("choose_sending_source", &again, "whatever is fastest", NOW_MS);
    assert_eq!(warmed["source"], "already_warmed");
    assert_eq!(warmed["next"]["tool"], "propose_warmed_domains");
}

#[test]
fn own_brand_addresses_are_proposed_ordered_set_up_and_warmed() {
    let w = World::new();
    w.sized();
    let q = w.ok("choose_sending_source", json!({}), NOW_MS);
    w.answer("choose_sending_source", &q, "own_names", NOW_MS);
    assert!(w.refused("propose_warmed_domains", json!({}), NOW_MS).contains("propose_domains"));
    let d = w.ok("propose_domains", json!({}), NOW_MS);
    assert_eq!(d["kind"], "choice");
    let first = d["choices"][0]["label"].as_str().unwrap().to_owned();
    assert!(
        first.contains(" + ") && first.split(" + ").all(|d| d != "ledgerly.io" && d != "ledgerly.com"),
        "{first}"
    );
    assert!(d["choices"][0]["description"].as_str().unwrap().contains("/year"), "{}", d["choices"][0]);
    // A free-text answer naming the primary domain is refused and the question says why.
    let bad = w.answer("propose_domains", &d, "ledgerly.io and getledgerly.com", NOW_MS);
    assert_eq!(bad["kind"], "choice");
    assert!(bad["reason"].as_str().unwrap().contains("primary domain"), "{}", bad["reason"]);
    let settled = w.answer("propose_domains", &d, "set_1", NOW_MS);
    assert_eq!(settled["kind"], "sending_choice");
    let domains: Vec<String> = settled["domains"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["name"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(domains.len(), 2);
    assert_eq!(first, domains.join(" + "));
    assert_eq!(settled["domains"][0]["price"]["interval"], "year");

    assert!(w.refused("propose_email", json!({}), NOW_MS).contains("sender"));
    // The playbook's signature is the sender's name when it has a first and a last name.
    w.ok("save_playbook", json!({ "tone": "plain", "angle": "close faster", "sender_name": "Anna" }), NOW_MS);
    assert!(w.refused("propose_email", json!({}), NOW_MS).contains("sender"), "a first name alone");
    w.ok(
        "save_playbook",
        json!({ "tone": "plain", "angle": "close faster", "sender_name": "Claire Dubois" }),
        NOW_MS,
    );
    let signed = w.ok("propose_email", json!({}), NOW_MS);
    assert!(signed["reason"].as_str().unwrap().contains("in Claire Dubois's name"), "{signed}");
    let e = w.ok("propose_email", json!({ "sender_name": "Anna Berg" }), NOW_MS);
    assert_eq!(e["kind"], "choice");
    assert_eq!(e["arguments"]["sender_name"], "Anna Berg");
    assert_eq!(e["choices"][0]["label"], "anna@, anna.berg@, a.berg@ on each domain");
    // A sentence is not a list of names: asked again, not read word by word into mailboxes.
    let out = w.call(
        "propose_email",
        json!({ "sender_name": "Anna Berg", "answers": [{ "card": e["card"], "answer": "I prefer the first option" }] }),
        NOW_MS,
    );
    assert_eq!(out.structured.unwrap()["kind"], "choice", "{}", out.text);
    assert!(out.text.contains("not a list of mailbox names"), "{}", out.text);
    assert!(out.text.contains("(such as anna, anna.berg, a.berg)"), "the sender's own names: {}", out.text);
    let listed = w.answer("propose_email", &e, "Anna, sales@ and hello", NOW_MS);
    let listed: Vec<&str> =
        listed["addresses"].as_array().unwrap().iter().map(|a| a["address"].as_str().unwrap()).collect();
    assert_eq!(
        listed[..3],
        [format!("anna@{}", domains[0]), format!("sales@{}", domains[0]), format!("hello@{}", domains[0])]
    );
    let step = w.answer("propose_email", &e, "names", NOW_MS);
    assert_eq!(step["kind"], "email_step");
    let addresses: Vec<&str> =
        step["addresses"].as_array().unwrap().iter().map(|a| a["address"].as_str().unwrap()).collect();
    assert_eq!(addresses.len(), 6);
    assert_eq!(addresses[0], format!("anna@{}", domains[0]));
    assert_eq!(step["addresses"][0]["name"], "Anna Berg");
    assert_eq!(step["next"]["tool"], "order_sending_setup");

    // The free plan allows no mailbox: the order is refused with the plan that lifts it.
    let limit = w.refused("order_sending_setup", json!({}), NOW_MS);
    assert!(limit.contains("Plan limit") && limit.contains("Growth"), "{limit}");
    w.subscribe("growth");
    let approval = w.ok("order_sending_setup", json!({}), NOW_MS);
    // The user sees the addresses they pay for.
    let impact = approval["impact"].to_string();
    assert!(
        impact.contains(&format!("Addresses: anna@{}, anna.berg@{}", domains[0], domains[0])),
        "{impact}"
    );
    assert_eq!(
        (approval["status"].clone(), approval["irreversible"].clone()),
        (json!("pending"), json!(true))
    );
    let impact = approval["impact"].to_string();
    assert!(
        impact.contains("not refundable")
            && impact.contains("Charged now")
            && impact.contains("Tue 1 Dec 2026"),
        "{impact}"
    );
    assert_eq!(approval["cost"]["currency"], "usd");
    let cost = approval["cost"]["amount"].as_i64().unwrap();
    assert!(cost >= 2 * 1_100 + 6 * 300, "{cost}");
    assert_eq!(
        w.ok("order_sending_setup", json!({}), NOW_MS)["id"],
        approval["id"],
        "asking again returns it"
    );
    assert!(w.refused("get_sending_setup", json!({}), NOW_MS).contains("order_sending_setup"));
    let done = w.approve(&approval, NOW_MS);
    assert_eq!(done["status"], "done", "{done}");
    assert!(done["result"].as_str().unwrap().contains("6 mailboxes"), "{done}");
    assert!(w.refused("order_sending_setup", json!({}), NOW_MS).contains("already ordered"));
    let mine = w.call("check_domains", json!({ "domains": [domains[0]] }), NOW_MS).text;
    assert!(mine.contains(&format!("- {} — already yours: in the sending setup", domains[0])), "{mine}");

    // Sunday: being set up; warm-up asked for now starts when the mailboxes exist.
    let setup = w.ok("get_sending_setup", json!({}), NOW_MS + 60_000);
    assert_eq!(
        (setup["status"].clone(), setup["setupDate"].clone()),
        (json!("setting_up"), json!("2026-12-01"))
    );
    assert_eq!(setup["mailboxes"].as_array().unwrap().len(), 6);
    assert_eq!(setup["domains"][0]["dns"]["dmarc"], "pending");
    let warming = || workspace::sending::summary(&w.db).unwrap().warming;
    assert!(!warming(), "ordered, but the warm-up is not asked for yet");
    let warm = w.ok("start_warmup", json!({}), NOW_MS + 120_000);
    assert_eq!(warm["kind"], "warmup");
    assert_eq!(warm["status"], "scheduled");
    assert!(warming(), "only waiting is left");
    // Tuesday afternoon: set up, warming.
    let tuesday = NOW_MS + 2 * DAY + 3_600_000;
    let setup = w.ok("get_sending_setup", json!({}), tuesday);
    assert_eq!(setup["status"], "warming", "{setup}");
    assert_eq!(
        setup["domains"][0]["dns"],
        json!({ "spf": "pass", "dkim": "pass", "dmarc": "pass", "mx": "pass", "tracking": "pass" })
    );
    assert_eq!(setup["mailboxes"][0]["warmupDay"], 1);
    let warm = w.ok("start_warmup", json!({}), tuesday + 5 * DAY);
    assert_eq!(
        (warm["status"].clone(), warm["day"].clone(), warm["days"].clone()),
        (json!("running"), json!(6), json!(14))
    );
    assert!(warm["health"].as_i64().unwrap() > 60);
    // Fifteen days later: ready.
    let setup = w.ok("get_sending_setup", json!({}), tuesday + 15 * DAY);
    assert_eq!(setup["status"], "ready", "{setup}");
    assert!(setup["mailboxes"].as_array().unwrap().iter().all(|m| m["status"] == "ready"));
    let done = w.call("start_warmup", json!({}), tuesday + 15 * DAY);
    assert_eq!(done.structured.as_ref().unwrap()["status"], "done");
    // No lead is imported here: the next step says so (journey finding: "once the leads are
    // imported" whether they were or not).
    assert!(
        done.text.ends_with(
            "Next: import the leads (import_leads, an approval the user decides), then call stage_campaign."
        ),
        "{}",
        done.text
    );
    assert!(!warming(), "ready");
}

#[test]
fn warmed_addresses_are_ready_within_the_hour() {
    let w = World::new();
    w.sized();
    let shelf = w.ok("list_warmed_domains", json!({}), NOW_MS);
    assert_eq!(shelf["kind"], "warmed_shelf");
    let stock: Vec<String> =
        shelf["domains"].as_array().unwrap().iter().map(|d| d["name"].as_str().unwrap().to_owned()).collect();
    assert!(stock.len() >= 4);
    assert_eq!(
        shelf["domains"][0]["price"],
        json!({ "amount": 500, "currency": "usd", "interval": "month" })
    );
    let q = w.ok("choose_sending_source", json!({}), NOW_MS);
    w.answer("choose_sending_source", &q, "already_warmed", NOW_MS);
    assert!(w.refused("propose_domains", json!({}), NOW_MS).contains("propose_warmed_domains"));
    let d = w.ok("propose_warmed_domains", json!({}), NOW_MS);
    // The user names two domains of the stock in their own words.
    let picked =
        w.answer("propose_warmed_domains", &d, &format!("{} and {}, please", stock[2], stock[3]), NOW_MS);
    assert_eq!(picked["kind"], "sending_choice", "{picked}");
    assert_eq!(picked["domains"][0]["name"], stock[2].as_str());
    assert_eq!(picked["domains"][0]["price"]["amount"], 1_500, "3 mailboxes at $5");
    let e = w.ok("propose_email", json!({ "sender_name": "Zoë Müller" }), NOW_MS);
    let step = w.answer("propose_email", &e, "zoe, Zoë.Müller@x, sales", NOW_MS);
    assert_eq!(step["kind"], "email_step", "{step}");
    assert_eq!(step["addresses"][1]["address"], format!("zoe.muller@{}", stock[2]));
    w.subscribe("growth");
    let approval = w.ok("order_sending_setup", json!({}), NOW_MS);
    assert!(approval["impact"].to_string().contains("no warm-up needed"));
    // Warmed domains are not bought (journey finding: the approval said they were).
    assert_eq!(approval["summary"], "Order 6 mailboxes on 2 domains already warmed up ($30)");
    assert!(
        approval["impact"].to_string().contains("Charged now: $30 (the first month of mailboxes)."),
        "{approval}"
    );
    assert_eq!(approval["cost"]["amount"], 3_000);
    let done = w.approve(&approval, NOW_MS);
    assert_eq!(done["status"], "done");
    let result = done["result"].as_str().unwrap();
    assert!(
        result.starts_with("Ordered 6 mailboxes on 2 domains already warmed up; $30 charged."),
        "{result}"
    );
    let warmup = w.call("start_warmup", json!({}), NOW_MS + 60_000).text;
    assert!(warmup.starts_with("**No warm-up needed:** these addresses were warmed up before"), "{warmup}");
    let setup = w.ok("get_sending_setup", json!({}), NOW_MS + 2 * 3_600_000);
    assert_eq!(
        (setup["status"].clone(), setup["source"].clone()),
        (json!("ready"), json!("already_warmed")),
        "{setup}"
    );
    assert!(setup["mailboxes"][0].get("warmupDay").is_none());
}

/// A question put again after an answer it could not use takes the next answer (journey
/// finding: it asked again forever), and a warmed domain is priced for the mailboxes it will
/// carry, as the order then charges (journey finding: $15 asked, $10 charged).
#[test]
fn a_re_asked_question_takes_the_next_answer_and_prices_what_the_order_charges() {
    let w = World::new();
    w.offer();
    w.ok("size_sending_capacity", json!({ "volume": 50, "unit": "emails_per_day", "steps": 2 }), NOW_MS);
    let sizing = w.ok("confirm_sizing", json!({}), NOW_MS);
    let (mailboxes, per_domain) =
        (sizing["mailboxes"].as_i64().unwrap(), sizing["mailboxesPerDomain"].as_i64().unwrap());
    assert_ne!(mailboxes % per_domain, 0, "{sizing}");
    let q = w.ok("choose_sending_source", json!({}), NOW_MS);
    w.answer("choose_sending_source", &q, "already_warmed", NOW_MS);
    let d = w.ok("propose_warmed_domains", json!({}), NOW_MS);
    let again = w.answer("propose_warmed_domains", &d, "nowhere.example", NOW_MS);
    assert_eq!(again["kind"], "choice", "{again}");
    assert!(again["reason"].as_str().unwrap().contains("Ask the user again"), "{again}");
    let picked = w.answer("propose_warmed_domains", &again, "set_1", NOW_MS);
    assert_eq!(picked["kind"], "sending_choice", "{picked}");
    let asked: i64 =
        picked["domains"].as_array().unwrap().iter().map(|d| d["price"]["amount"].as_i64().unwrap()).sum();
    assert_eq!(asked, 500 * mailboxes, "{picked}");
    let e = w.ok("propose_email", json!({ "sender_name": "Anna Berg" }), NOW_MS);
    w.answer("propose_email", &e, "names", NOW_MS);
    w.subscribe("growth");
    let approval = w.ok("order_sending_setup", json!({}), NOW_MS);
    assert_eq!(approval["cost"]["amount"].as_i64(), Some(asked), "{approval}");
}

#[test]
fn check_domains_prices_and_flags_unsuitable_names() {
    let w = World::new();
    w.offer();
    let q = w.ok("check_domains", json!({ "domains": ["ledgerly.io", "getledgerly.com", "https://www.TryLedgerly.com/", "google.com"] }), NOW_MS);
    assert_eq!(q["kind"], "domain_quote");
    // Registrable yet unsuitable is not said to be available (journey finding).
    let text = w.call("check_domains", json!({ "domains": ["get-ledgerly.com"] }), NOW_MS).text;
    assert!(
        text.contains("- get-ledgerly.com — not suitable: get-ledgerly.com: hyphens and digits"),
        "{text}"
    );
    let d = q["domains"].as_array().unwrap();
    assert_eq!(d.len(), 4);
    assert_eq!(d[0]["suitable"], false);
    assert_eq!(d[2]["name"], "tryledgerly.com");
    assert_eq!(d[3]["available"], false);
    let priced: i64 = d
        .iter()
        .filter(|x| x["suitable"] == true && x["available"] == true)
        .map(|x| x["price"]["amount"].as_i64().unwrap())
        .sum();
    if priced > 0 {
        assert_eq!(q["total"]["amount"], priced);
    }
}

/// Writes (with `UPDATE_SNAPSHOTS=1`) or checks the card fixtures of the sending kinds
/// (`tests/fixtures/card/<kind>.json`): they are real outputs of a sandbox run, so the card is
/// designed and tested against what the tools return.
pub(crate) fn check_fixtures(outputs: &[(&str, ToolOutcome)]) {
    check_fixtures_with(outputs, &[]);
}

/// [`check_fixtures`], with random ids replaced by stable ones (`replace`: from → to).
pub(crate) fn check_fixtures_with(outputs: &[(&str, ToolOutcome)], replace: &[(&str, &str)]) {
    for (tool, out) in outputs {
        assert_eq!(out.outcome, Outcome::Ok, "{tool}: {}", out.text);
        let data = out.structured.clone().unwrap();
        let kind = data["kind"].as_str().unwrap().to_owned();
        let fixture = json!({ "tool": tool, "text": out.text, "structuredContent": data });
        let path = format!("{}/tests/fixtures/card/{kind}.json", env!("CARGO_MANIFEST_DIR"));
        let mut text = serde_json::to_string_pretty(&fixture).unwrap();
        for (from, to) in replace {
            text = text.replace(from, to);
        }
        text.push('\n');
        if std::env::var_os("UPDATE_SNAPSHOTS").is_some() {
            std::fs::write(&path, &text).unwrap();
        }
        let committed = std::fs::read_to_string(&path).unwrap_or_default();
        assert!(
            committed == text,
            "{path} is not what {tool} returns; run UPDATE_SNAPSHOTS=1 cargo test and review"
        );
    }
}

#[test]
fn card_fixtures_are_real_sending_outputs() {
    let w = World::new();
    w.offer();
    let check = w.call(
        "check_domains",
        json!({ "domains": ["getledgerly.com", "tryledgerly.com", "ledgerlyhq.com", "ledgerly.io"] }),
        NOW_MS,
    );
    let shelf = w.call("list_warmed_domains", json!({}), NOW_MS);
    w.ok("size_sending_capacity", json!({ "volume": 45, "unit": "new_leads_per_day", "steps": 4 }), NOW_MS);
    let sizing = w.call("confirm_sizing", json!({}), NOW_MS);
    let question = w.call("choose_sending_source", json!({}), NOW_MS);
    let q = question.structured.clone().unwrap();
    w.answer("choose_sending_source", &q, "own_names", NOW_MS);
    let d = w.ok("propose_domains", json!({}), NOW_MS);
    let mut answers = d["answers"].as_array().cloned().unwrap_or_default();
    answers.push(json!({ "card": d["card"], "answer": "set_1" }));
    let domains = w.call("propose_domains", json!({ "answers": answers }), NOW_MS);
    let e = w.ok("propose_email", json!({ "sender_name": "Anna Berg" }), NOW_MS);
    let email = w.call(
        "propose_email",
        json!({ "sender_name": "Anna Berg", "answers": [{ "card": e["card"], "answer": "names" }] }),
        NOW_MS,
    );
    w.subscribe("growth");
    let approval = w.ok("order_sending_setup", json!({}), NOW_MS);
    w.approve(&approval, NOW_MS);
    w.ok("start_warmup", json!({}), NOW_MS);
    let tuesday = NOW_MS + 2 * DAY + 3_600_000;
    assert!(w.run_jobs_until(tuesday + 3 * DAY) > 100, "the sync job follows the setup");
    let warmup = w.call("start_warmup", json!({}), tuesday + 3 * DAY);
    let setup = w.call("get_sending_setup", json!({}), tuesday + 3 * DAY);
    check_fixtures(&[
        ("check_domains", check),
        ("list_warmed_domains", shelf),
        ("confirm_sizing", sizing),
        ("choose_sending_source", question),
        ("propose_domains", domains),
        ("propose_email", email),
        ("start_warmup", warmup),
        ("get_sending_setup", setup),
    ]);
    let _ = World::own_brand_ordered;
}

#[test]
fn an_order_approved_after_the_domains_were_picked_again_buys_nothing() {
    let w = World::new();
    w.offer();
    w.ok("size_sending_capacity", json!({ "volume": 90, "unit": "emails_per_day", "steps": 3 }), NOW_MS);
    w.ok("confirm_sizing", json!({}), NOW_MS);
    let q = w.ok("choose_sending_source", json!({}), NOW_MS);
    w.answer("choose_sending_source", &q, "own_names", NOW_MS);
    w.subscribe("growth");
    let pick = |set: &str| -> Value {
        let q = w.ok("propose_domains", json!({}), NOW_MS);
        let settled = w.answer("propose_domains", &q, set, NOW_MS);
        let q = w.ok("propose_email", json!({ "sender_name": "Anna Berg" }), NOW_MS);
        w.answer("propose_email", &q, "names", NOW_MS);
        let approval = w.ok("order_sending_setup", json!({}), NOW_MS);
        assert_eq!(approval["status"], "pending", "{approval}");
        json!({ "approval": approval, "domains": settled["domains"] })
    };
    // An order asked for, left pending; then other domains picked, ordered and approved.
    let first = pick("set_1");
    let second = pick("set_2");
    assert_ne!(first["domains"], second["domains"]);
    assert_eq!(w.approve(&second["approval"], NOW_MS)["status"], "done");
    let stale = w.approve(&first["approval"], NOW_MS);
    assert_eq!(stale["status"], "not_done", "{stale}");
    assert!(stale["result"].as_str().unwrap().starts_with("The sending choices changed"), "{stale}");
    assert_eq!(crate::workspace::sending::orders(&w.db).unwrap().len(), 1, "only the current choices bought");
}

/// An order whose purchase went through at the platform without the answer coming back is
/// retried; the retry finds it bought and records it, even though the user's choices changed
/// since: re-checked first, it was refused, and the paid domains were never set up (review
/// finding).
#[test]
fn a_retried_order_that_went_through_is_recorded() {
    use crate::sending::platform::{self, ApprovedPrices, SendingPlatform};
    use crate::workspace::approvals::FinishExecution;
    let w = World::new();
    let approval = w.own_brand_asked();
    let id = approval["id"].as_str().unwrap();
    // The decision's run bought it, and its answer was lost (the object was evicted): the
    // approval is left executing for the watchdog.
    let order = super::chosen_order(&w.db).unwrap();
    let bought = platform::open(&w.db, &w.config, &NoNetwork, NOW_MS).unwrap();
    block_on(bought.place_order(&order, &format!("vibesell-{id}-order"), &ApprovedPrices::ANY)).unwrap();
    crate::store::Db::batch(
        &w.db,
        vec![
            crate::store::Stmt::new(
                "UPDATE approvals SET status = 'executing', decided_at = ? WHERE id = ?",
                vec![NOW_MS.into(), id.into()],
            ),
            schedule::at::<FinishExecution>(id, NOW_MS + 60_000),
        ],
    )
    .unwrap();
    // The choices change before the retry.
    let q = w.ok("propose_email", json!({ "sender_name": "Ben Okafor" }), NOW_MS);
    w.answer("propose_email", &q, "names", NOW_MS);
    assert_ne!(super::chosen_order(&w.db).unwrap(), order);
    w.run_jobs_until(NOW_MS + 60_000);
    let record = crate::workspace::approvals::load(&w.db, id).unwrap().unwrap();
    assert_eq!(record.state, crate::workspace::approvals::State::Done, "{:?}", record.result);
    let setup = w.ok("get_sending_setup", json!({}), NOW_MS + 60_000);
    let first = &order.items[0];
    let recorded = setup["mailboxes"].to_string();
    assert!(recorded.contains(&format!("@{}", first.domain)), "{recorded}");
}

#[test]
fn a_second_order_shows_its_own_dates_and_warm_up_while_the_first_sends() {
    const DAY: i64 = 86_400_000;
    let w = World::new();
    w.own_brand_ordered();
    w.ok("start_warmup", json!({}), NOW_MS);
    let ready = NOW_MS + 18 * DAY;
    w.run_jobs_until(ready);
    let first = w.ok("get_sending_setup", json!({}), ready);
    assert_eq!(first["status"], "ready", "{first}");
    // Weeks later, more capacity: sized again, new domains, a second order.
    let later = ready + 30 * DAY;
    // Sized again, the volume is what to add: the plan must hold it with the six in place.
    let more = w.ok(
        "size_sending_capacity",
        json!({ "volume": 90, "unit": "new_leads_per_day", "steps": 4 }),
        later,
    );
    assert_eq!((more["mailboxes"].clone(), more["withinPlan"].clone()), (json!(12), json!(false)), "{more}");
    assert!(more["notes"].to_string().contains("6 mailboxes are already set up"), "{more}");
    assert!(more["notes"].to_string().contains("18 mailboxes need the Scale plan"), "{more}");
    let sized = w.ok(
        "size_sending_capacity",
        json!({ "volume": 15, "unit": "new_leads_per_day", "steps": 4 }),
        later,
    );
    assert_eq!((sized["mailboxes"].clone(), sized["withinPlan"].clone()), (json!(2), json!(true)), "{sized}");
    w.ok("confirm_sizing", json!({}), later);
    // What is sized adds to the six in place, and the workspace says so (third journey walk: it
    // read as the whole).
    let context = w.call("get_workspace_context", json!({}), later).text;
    assert!(
        context.contains(
            "- Sending: 60 emails a day more from 2 more mailboxes on 1 domain, on top of the 6 set up before"
        ),
        "{context}"
    );
    // The question says what is bought already (journey finding: it read as if nothing was).
    let q = w.ok("choose_sending_source", json!({}), later);
    assert!(
        q["reason"].as_str().unwrap().ends_with(
            "6 mailboxes are ordered already (get_sending_setup): this sets up more, for another order."
        ),
        "{q}"
    );
    w.own_brand_chosen(later);
    let order = w.ok("order_sending_setup", json!({}), later);
    w.approve(&order, later);
    let warm_from = later + 3 * DAY;
    w.run_jobs_until(warm_from);
    let warming = w.ok("start_warmup", json!({}), warm_from);
    let setup = w.ok("get_sending_setup", json!({}), warm_from);
    // The second order's dates, not the first's: ordered `later`, ready a warm-up from now.
    assert_eq!(setup["orderedAt"], later, "{setup}");
    assert_ne!(setup["status"], "ready", "{setup}");
    let ready_date = crate::sending::calendar::parse_iso(setup["readyDate"].as_str().unwrap()).unwrap();
    assert!(ready_date > crate::sending::calendar::utc_date(warm_from + 10 * DAY), "{setup}");
    // And the warm-up is the new mailboxes', at its start, not the first order's finished one.
    assert!(!warming.to_string().contains("day 14 of 14"), "{warming}");
    assert_ne!(warming["status"], "done", "{warming}");
    // The mailboxes of both orders are listed.
    assert!(setup["mailboxes"].as_array().unwrap().len() > first["mailboxes"].as_array().unwrap().len());
    // The estimate counts them all, not the two last sized (third journey walk).
    w.ok(
        "save_playbook",
        json!({ "tone": "plain", "angle": "close faster", "sender_name": "Anna Berg" }),
        warm_from,
    );
    w.ok(
        "save_sequence",
        json!({ "steps": [{ "subject": "Hello {{first_name}}", "body": "A note." }] }),
        warm_from,
    );
    assert_eq!(w.ok("estimate_campaign_plan", json!({ "lead_count": 100 }), warm_from)["mailboxes"], 8);
}

/// Five mailboxes on two domains are not "on each domain": the label says the names go on the
/// domains, which hold three and two (third journey walk).
#[test]
fn address_choices_say_when_the_domains_do_not_share_them_evenly() {
    let w = World::new();
    w.offer();
    w.ok("size_sending_capacity", json!({ "volume": 150, "unit": "emails_per_day", "steps": 3 }), NOW_MS);
    w.ok("confirm_sizing", json!({}), NOW_MS);
    let q = w.ok("choose_sending_source", json!({}), NOW_MS);
    w.answer("choose_sending_source", &q, "own_names", NOW_MS);
    let q = w.ok("propose_domains", json!({}), NOW_MS);
    w.answer("propose_domains", &q, "set_1", NOW_MS);
    let e = w.ok("propose_email", json!({ "sender_name": "Anna Berg" }), NOW_MS);
    assert_eq!(e["choices"][0]["label"], "anna@, anna.berg@, a.berg@ on the domains", "{e}");
    assert!(e["choices"][0]["description"].as_str().unwrap().starts_with("5 addresses in all"), "{e}");
}

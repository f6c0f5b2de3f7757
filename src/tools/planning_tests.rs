//! The planning tools through `workspace::call_tool`, natively: every prerequisite refusal, the
//! path from an empty workspace to an approved sequence and a checked first email, and the
//! state changes that take confirmations and approvals back.

use serde_json::{Value, json};

use crate::auth::ScopeSet;
use crate::store::Db;
use crate::testing::{MemoryDb, NOW_MS, block_on, principal, test_config};
use crate::tools::{Outcome, ToolOutcome};
use crate::workspace::{ToolCall, call_tool, personal_data};

fn call(db: &MemoryDb, tool: &str, arguments: Value) -> ToolOutcome {
    crate::testing::run_tool(db, &test_config(), &principal(ScopeSet::FULL, false), tool, arguments, NOW_MS)
}

fn ok(db: &MemoryDb, tool: &str, arguments: Value) -> Value {
    let out = call(db, tool, arguments);
    assert_eq!(out.outcome, Outcome::Ok, "{tool}: {}", out.text);
    out.structured.unwrap()
}

fn refused(db: &MemoryDb, tool: &str, arguments: Value, needle: &str) -> String {
    let out = call(db, tool, arguments);
    assert_eq!(out.outcome, Outcome::Refused, "{tool} should refuse: {}", out.text);
    assert!(out.structured.is_none());
    assert!(out.text.contains(needle), "{tool}: expected {needle:?} in {}", out.text);
    out.text
}

fn offer(postal: bool) -> Value {
    let mut o = json!({
        "product": "Ledgerly", "description": "Month-end close automation", "value_proposition": "Close in 3 days",
        "company_name": "Ledgerly Ltd", "proof_points": ["140 finance teams"], "call_to_action": "a 20-minute call"
    });
    if postal {
        o["postal_address"] = json!("12 Finsbury Square, London EC2A 1AS");
    }
    o
}

fn filters() -> Value {
    json!({"countries": ["Ireland", "UK"], "titles": ["CFO", "Finance Director", "Head of Finance"],
           "company_sizes": ["51-200", "201-500"], "industries": ["Computer Software"]})
}

fn steps() -> Value {
    json!({"steps": [
        {"subject": "Closing the books at {{company}}",
         "body": "Hi {{first_name|there}},\n\nMost finance teams at companies like {{company}} take ten days to close the \
                  month. Ours take three, because reconciliations happen as transactions arrive instead of at month end.\n\n\
                  Would a short call next week be useful?\n\n{{sender_name}}"},
        {"delay_days": 3, "body": "Hi {{first_name|there}}, one number that may matter: our customers cut reconciliation time by 68%."},
        {"body": "Should I send our close-time benchmark for {{industry|your industry}} instead?"}
    ]})
}

#[test]
fn every_tool_names_its_missing_prerequisite() {
    let db = MemoryDb::new();
    refused(&db, "save_target", json!({"description": "CFOs"}), "save_offer");
    refused(&db, "save_target_filters", filters(), "save_offer");
    refused(&db, "confirm_target", json!({}), "save_target");
    refused(&db, "estimate_lead_pool", json!({}), "save_target_filters");
    refused(&db, "preview_lead_sample", json!({}), "save_target");
    refused(&db, "save_playbook", json!({"tone": "plain", "angle": "close faster"}), "save_offer");
    refused(&db, "save_sequence", steps(), "save_offer");
    refused(&db, "approve_sequence", json!({"version": 1}), "save_offer");
    refused(&db, "check_first_email", json!({}), "save_offer");
    refused(&db, "estimate_campaign_plan", json!({}), "save_sequence");
    refused(&db, "import_leads", json!({}), "save_target");

    ok(&db, "save_offer", offer(false));
    refused(&db, "save_target_filters", filters(), "save_target");
    ok(&db, "save_target", json!({"description": "Finance leaders at Irish and UK software companies"}));
    refused(&db, "confirm_target", json!({}), "save_target_filters");
    refused(&db, "estimate_lead_pool", json!({}), "save_target_filters");
    refused(&db, "preview_lead_sample", json!({}), "save_target_filters");
    refused(&db, "import_leads", json!({}), "save_target_filters");
    refused(&db, "save_sequence", steps(), "save_playbook");
    refused(&db, "approve_sequence", json!({"version": 1}), "save_sequence");
    refused(&db, "check_first_email", json!({}), "save_sequence");
    ok(&db, "save_playbook", json!({"tone": "plain", "angle": "close faster"}));
    ok(&db, "save_sequence", steps());
    refused(&db, "check_first_email", json!({}), "save_target_filters");
    refused(&db, "estimate_campaign_plan", json!({}), "import_leads");
    ok(&db, "save_target_filters", json!({"countries": ["Ireland"], "titles": ["CFO"]}));
    refused(&db, "import_leads", json!({}), "confirm_target");
    refused(&db, "approve_sequence", json!({"version": 1}), "postal_address");
}

#[test]
fn from_an_empty_workspace_to_an_approved_sequence_and_a_checked_first_email() {
    let db = MemoryDb::new();
    let ctx = ok(&db, "get_workspace_context", json!({}));
    assert_eq!(ctx["nextStep"]["tool"], "save_offer");
    ok(&db, "save_offer", offer(true));
    assert_eq!(ok(&db, "get_workspace_context", json!({}))["nextStep"]["tool"], "save_target");

    let t =
        ok(&db, "save_target", json!({"description": "Finance leaders at Irish and UK software companies"}));
    assert_eq!(
        (t["kind"].clone(), t["version"].clone(), t["confirmed"].clone()),
        (json!("target"), json!(1), json!(false))
    );
    assert_eq!(ok(&db, "get_workspace_context", json!({}))["nextStep"]["tool"], "save_target_filters");

    // A typo is refused with suggestions, and nothing is saved.
    let text = refused(
        &db,
        "save_target_filters",
        json!({"countries": ["Irland"], "titles": ["Chief Finance Oficer"]}),
        "did you mean \"Ireland\"",
    );
    assert!(text.contains("Chief Financial Officer"), "{text}");
    assert!(ok(&db, "get_workspace_context", json!({}))["target"].get("filters").is_none());

    let t = ok(&db, "save_target_filters", filters());
    assert_eq!(t["filters"]["countries"], json!(["Ireland", "United Kingdom"]));
    assert_eq!(
        t["filters"]["titles"],
        json!(["Chief Financial Officer", "Finance Director", "Head of Finance"])
    );
    assert_eq!(ok(&db, "get_workspace_context", json!({}))["nextStep"]["tool"], "estimate_lead_pool");

    let count = ok(&db, "estimate_lead_pool", json!({}));
    assert_eq!(count["kind"], "lead_count");
    assert_eq!(count["source"], "saved_target");
    let total = count["total"].as_u64().unwrap();
    assert!(total > 100, "{count}");
    let by_country: u64 = count["breakdowns"][2]["buckets"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["count"].as_u64().unwrap())
        .sum();
    assert_eq!(by_country, total);
    // Trying other filters counts them without saving them.
    let wider = ok(
        &db,
        "estimate_lead_pool",
        json!({"countries": ["Ireland", "United Kingdom"], "seniorities": ["c_suite"]}),
    );
    assert_eq!(wider["source"], "arguments");
    assert_eq!(ok(&db, "get_workspace_context", json!({}))["target"]["poolCount"], total);
    assert_eq!(ok(&db, "get_workspace_context", json!({}))["nextStep"]["tool"], "preview_lead_sample");

    let preview = ok(&db, "preview_lead_sample", json!({"count": 5}));
    let leads = preview["leads"].as_array().unwrap();
    assert_eq!(leads.len(), 5);
    assert_eq!(preview["total"], total);
    for l in leads {
        let email = l["email"].as_str().unwrap();
        assert!(email.contains("•••@"), "masked: {email}");
        assert!(["Ireland", "United Kingdom"].contains(&l["country"].as_str().unwrap()));
    }
    let log = personal_data::recent(&db, 10).unwrap();
    assert_eq!(log.len(), 1);
    assert_eq!(
        (log[0].tool.as_str(), log[0].people, log[0].subject.as_str()),
        ("preview_lead_sample", 5, "user_1")
    );
    assert_eq!(ok(&db, "get_workspace_context", json!({}))["nextStep"]["tool"], "confirm_target");

    let confirmed = call(&db, "confirm_target", json!({}));
    assert_eq!(confirmed.structured.as_ref().unwrap()["confirmed"], true);
    assert!(
        confirmed.text.ends_with("Next: write the playbook (save_playbook) and the emails (save_sequence).")
    );
    let ctx = ok(&db, "get_workspace_context", json!({}));
    assert_eq!(ctx["nextStep"]["tool"], "save_playbook");
    let status = |ctx: &Value, step: &str| {
        ctx["journey"].as_array().unwrap().iter().find(|s| s["step"] == step).unwrap()["status"].clone()
    };
    assert_eq!(status(&ctx, "target"), "done");
    assert_eq!(status(&ctx, "lead_pool"), "done");

    ok(
        &db,
        "save_playbook",
        json!({"tone": "Plain, peer to peer", "angle": "The ten-day close is a choice",
        "persona": "CFO of a scaling software company", "pain_points": ["Close takes ten days"],
        "rules": ["Under 120 words"], "objections": [{"objection": "We just bought an ERP", "answer": "It sits on top"}],
        "sender_name": "Anna Berg", "sender_title": "Founder"}),
    );
    assert_eq!(ok(&db, "get_workspace_context", json!({}))["nextStep"]["tool"], "save_sequence");

    // Unknown variables are refused with the known ones.
    refused(
        &db,
        "save_sequence",
        json!({"steps": [{"subject": "Hi", "body": "Hi {{frist_name}}"}]}),
        "{{first_name}}",
    );
    refused(&db, "save_sequence", json!({"steps": [{"body": "no subject"}]}), "needs a subject");
    let seq = ok(&db, "save_sequence", steps());
    assert_eq!(seq["kind"], "sequence");
    assert_eq!((seq["version"].clone(), seq["approved"].clone()), (json!(1), json!(false)));
    assert_eq!(seq["steps"][1]["delayDays"], 3);
    assert_eq!(seq["steps"][2]["delayDays"], 3, "the default delay");
    let ctx = ok(&db, "get_workspace_context", json!({}));
    assert_eq!(ctx["nextStep"]["tool"], "approve_sequence");
    assert!(ctx["nextStep"]["why"].as_str().unwrap().contains("after they say yes"));

    // A version it never had is not one it changed since (journey finding).
    refused(&db, "approve_sequence", json!({"version": 2}), "has no version 2: it is now version 1");
    let approved = ok(&db, "approve_sequence", json!({"version": 1}));
    assert_eq!(approved["approved"], true);
    // Editing takes the approval back; approving again needs the new version.
    let mut edited = steps();
    edited["steps"][2]["body"] = json!("Last note from me, {{first_name|there}}.");
    let seq = ok(&db, "save_sequence", edited);
    assert_eq!(
        (seq["version"].clone(), seq["approved"].clone(), seq["unapproved"].clone()),
        (json!(2), json!(false), json!(true))
    );
    refused(&db, "approve_sequence", json!({"version": 1}), "now version 2");
    ok(&db, "approve_sequence", json!({"version": 2}));
    assert_eq!(ok(&db, "get_workspace_context", json!({}))["nextStep"]["tool"], "check_first_email");

    let first = ok(&db, "check_first_email", json!({}));
    assert_eq!(first["kind"], "first_email");
    assert_eq!(first["verdict"], "ready", "{first:#}");
    assert_eq!(first["lead"]["source"], "sample");
    assert!(first["to"].as_str().unwrap().contains("•••@"));
    let body = first["body"].as_str().unwrap();
    assert!(body.contains("12 Finsbury Square") && body.contains("/u/"), "{body}");
    assert!(body.contains(first["lead"]["company"].as_str().unwrap()), "personalised with the company");
    assert!(first["html"].as_str().unwrap().contains(">Unsubscribe</a>"));
    assert!(first["checks"].as_array().unwrap().iter().all(|c| c["status"] != "fail"));
    assert_eq!(personal_data::recent(&db, 10).unwrap().len(), 2, "the rendered lead is logged too");
    // Once the emails are approved, the target's tools no longer send the user back to write them
    // (second journey walk).
    for (tool, args) in [("confirm_target", json!({})), ("preview_lead_sample", json!({"count": 1}))] {
        let text = call(&db, tool, args).text;
        assert!(
            text.contains("The emails are approved already: get_workspace_context gives the next step."),
            "{text}"
        );
        assert!(!text.contains("save_playbook"), "{text}");
        assert!(tool == "confirm_target" || text.starts_with("**1 sample person** of "), "{text}");
    }

    let ctx = ok(&db, "get_workspace_context", json!({}));
    for step in ["offer", "target", "lead_pool", "sequence", "first_email"] {
        assert_eq!(status(&ctx, step), "done", "{step}");
    }
    assert_eq!(ctx["sequence"]["approved"], true);
    assert_eq!(ctx["personalDataAccess"]["accesses"], 3, "the second preview is logged too");

    // The estimate for a list of the pool's size.
    let est = ok(&db, "estimate_campaign_plan", json!({"lead_count": 600}));
    assert_eq!(est["kind"], "campaign_estimate");
    assert_eq!(
        (est["steps"].clone(), est["mailboxes"].clone(), est["emailsPerDay"].clone()),
        (json!(3), json!(3), json!(90))
    );
    assert_eq!(est["capacityBasis"], "defaults");
    assert_eq!(est["emailsTotal"], 1800);
    assert_eq!(est["replies"], json!({"low": 6, "mid": 18, "high": 30}));
    assert!(
        est["assumptions"].as_array().unwrap().iter().any(|a| a.as_str().unwrap().contains("not sized yet"))
    );
    let weekly: u64 = est["weekly"].as_array().unwrap().iter().map(|w| w["emails"].as_u64().unwrap()).sum();
    assert_eq!(weekly, 1800);
    // Past the five-year horizon there is no end to give (third journey walk: it dated the last
    // lead's first email on the start date).
    let far = call(&db, "estimate_campaign_plan", json!({"lead_count": 1_000_000, "mailboxes": 1}));
    let data = far.structured.unwrap();
    assert_eq!((data["beyondHorizon"].clone(), data.get("allContactedDate")), (json!(true), None));
    assert!(far.text.contains(":** more than five years of sending from "), "{}", far.text);
    assert!(!far.text.contains("contacted by"), "{}", far.text);
    let few = call(&db, "estimate_campaign_plan", json!({"lead_count": 5})).text;
    assert!(few.contains("\nExpected: 0 replies (0 central), 0 positive, 0 meetings."), "{few}");
    refused(
        &db,
        "estimate_campaign_plan",
        json!({"lead_count": 10, "sends_per_mailbox_per_day": 80}),
        "between 20 and 50",
    );
    // Once sized, the estimate uses that capacity (audit finding: it kept the defaults and said
    // sizing was not done).
    let sized = ok(&db, "size_sending_capacity", json!({"volume": 100, "unit": "new_leads_per_day"}));
    let est = ok(&db, "estimate_campaign_plan", json!({"lead_count": 600}));
    assert_eq!(
        (est["mailboxes"].clone(), est["capacityBasis"].clone()),
        (sized["mailboxes"].clone(), json!("workspace"))
    );
    let first = est["assumptions"][0].as_str().unwrap();
    assert!(first.contains("not confirmed by the user yet"), "{first}");
    ok(&db, "confirm_sizing", json!({}));
    let est = ok(&db, "estimate_campaign_plan", json!({"lead_count": 600}));
    assert!(
        est["assumptions"].as_array().unwrap().iter().all(|a| !a.as_str().unwrap().contains("sized")),
        "{est}"
    );
    assert_eq!(est["mailboxes"], sized["mailboxes"]);
    let tried = ok(&db, "estimate_campaign_plan", json!({"lead_count": 600, "mailboxes": 2}));
    assert_eq!((tried["mailboxes"].clone(), tried["capacityBasis"].clone()), (json!(2), json!("argument")));

    // Changing the target later takes the confirmation back, and the journey follows.
    let t = ok(&db, "save_target_filters", json!({"countries": ["Ireland"], "titles": ["CFO"]}));
    assert_eq!((t["confirmed"].clone(), t["unconfirmed"].clone()), (json!(false), json!(true)));
    let ctx = ok(&db, "get_workspace_context", json!({}));
    assert_eq!(status(&ctx, "target"), "current");
    assert_eq!(ctx["nextStep"]["tool"], "estimate_lead_pool");

    // Saving the playbook again with less says what the save left out, and does not send the
    // user back to write emails that exist (third journey walk).
    let again =
        call(&db, "save_playbook", json!({"tone": "Plain", "angle": "Close", "sender_name": "Anna Berg"}));
    assert!(
        again.text.contains(
            "Left out of this save, so no longer in the playbook: persona, pain points, rules, objections, sender title. \
             Saving replaces the whole playbook; save it again with them if they should stay."
        ),
        "{}",
        again.text
    );
    assert!(
        again.text.ends_with(
            "The emails are written already: check_first_email shows the first one as it reads now."
        )
    );
}

#[test]
fn the_first_email_check_finds_problems_and_says_how_to_fix_them() {
    let db = MemoryDb::new();
    ok(&db, "save_offer", offer(false));
    ok(&db, "save_target", json!({"description": "CFOs"}));
    ok(&db, "save_target_filters", json!({"countries": ["Germany"], "titles": ["CFO"]}));
    ok(&db, "save_playbook", json!({"tone": "plain", "angle": "close faster"}));
    ok(
        &db,
        "save_sequence",
        json!({"steps": [
            {"subject": "Re: FREE close automation!!!", "body": "Dear friend, CLICK HERE for a FREE trial: https://bit.ly/x {{sender_name}}",
             "variants": [{"subject": "A question", "body": "Hi {{first_name}}, how does {{company}} close the month today?"}]}
        ]}),
    );
    let first = ok(&db, "check_first_email", json!({}));
    assert_eq!(first["verdict"], "fix_needed");
    let status = |id: &str| {
        first["checks"].as_array().unwrap().iter().find(|c| c["id"] == id).unwrap()["status"].clone()
    };
    assert_eq!(status("subject"), "fail");
    assert_eq!(status("links"), "fail");
    assert_eq!(status("variables"), "fail", "{{sender_name}} has no value");
    assert_eq!(status("compliance_footer"), "fail", "no postal address");
    assert_eq!(status("spam_words"), "warn");
    assert_eq!(status("gdpr_notice"), "info", "a German recipient gets the Art. 14 notice");
    assert!(first["body"].as_str().unwrap().contains("legitimate interest"));
    for c in
        first["checks"].as_array().unwrap().iter().filter(|c| c["status"] == "fail" || c["status"] == "warn")
    {
        assert!(c["fix"].as_str().is_some_and(|f| !f.is_empty()), "{c}");
    }
    assert!(!ok(&db, "get_workspace_context", json!({}))["sequence"]["firstEmailChecked"].as_bool().unwrap());
    // The variant is rendered on request, and the other leads of the sample too.
    let v = ok(&db, "check_first_email", json!({"variant": 1, "lead": 3}));
    assert_eq!(v["subject"], "A question");
    assert_ne!(v["lead"]["name"], first["lead"]["name"]);
    refused(&db, "check_first_email", json!({"variant": 2}), "main version and its other version is 1");
    // Approval refuses the gaps.
    refused(&db, "approve_sequence", json!({"version": 1}), "postal_address");
    ok(&db, "save_offer", offer(true));
    refused(&db, "approve_sequence", json!({"version": 1}), "{{sender_name}}");
}

#[test]
fn read_only_connections_see_the_planning_state_but_cannot_change_it() {
    let db = MemoryDb::new();
    ok(&db, "save_offer", offer(true));
    ok(&db, "save_target", json!({"description": "CFOs"}));
    let c = ToolCall {
        tool: "get_workspace_context".into(),
        arguments: json!({}),
        principal: principal(ScopeSet::READ, false),
        request_id: "r".into(),
        structured_content: true,
    };
    let out = block_on(call_tool(&db, &test_config(), &crate::outbound::NoNetwork, c, NOW_MS));
    let ctx = out.structured.unwrap();
    assert_eq!(ctx["target"]["description"], "CFOs");
    assert!(ctx["nextStep"].get("tool").is_none());
    assert!(ctx["nextStep"]["why"].as_str().unwrap().contains("read-only"));
    // A read tool whose answer names tools that change things says which of them this connection
    // cannot call (second journey walk: get_plans_and_billing sent it to start_checkout); the
    // same answer to a connection that can act says nothing of the kind.
    let ask = |scopes| {
        let c = ToolCall {
            tool: "get_plans_and_billing".into(),
            arguments: json!({}),
            principal: principal(scopes, false),
            request_id: "r".into(),
            structured_content: true,
        };
        block_on(call_tool(&db, &test_config(), &crate::outbound::NoNetwork, c, NOW_MS)).text
    };
    let read = ask(ScopeSet::READ);
    assert!(
        read.ends_with(
            "This connection is read-only, so it cannot call start_checkout: the user needs \
             to reconnect VibeSell with read and act access for that."
        ),
        "{read}"
    );
    assert!(!ask(ScopeSet::FULL).contains("read-only"));
}

/// The card's fixtures for the planning kinds (`tests/fixtures/card/`) are what these tools
/// really return for a realistic workspace, so the card is designed and tested against the real
/// shape. `UPDATE_SNAPSHOTS=1 cargo test` rewrites them after a deliberate change.
#[test]
fn card_fixtures_are_real_outputs() {
    let db = MemoryDb::new();
    let mut outputs: Vec<(&str, &str, ToolOutcome)> = Vec::new();
    let keep = |kind: &'static str,
                tool: &'static str,
                args: Value,
                outputs: &mut Vec<(&str, &str, ToolOutcome)>| {
        let out = call(&db, tool, args);
        assert_eq!(out.outcome, Outcome::Ok, "{tool}: {}", out.text);
        outputs.retain(|(k, _, _)| *k != kind);
        outputs.push((kind, tool, out));
    };
    ok(
        &db,
        "save_offer",
        json!({
            "product": "Ledgerly", "description": "Month-end close automation for finance teams at mid-size companies.",
            "value_proposition": "Close the books in 3 days instead of 10.", "company_name": "Ledgerly Ltd",
            "website": "https://ledgerly.io", "proof_points": ["Used by 140 finance teams", "Average close time down 68%"],
            "call_to_action": "A 20-minute demo", "postal_address": "12 Finsbury Square, London EC2A 1AS, United Kingdom"
        }),
    );
    ok(&db, "remember", json!({"note": "Prefers a plain, friendly tone; no hype.", "topic": "tone"}));
    ok(
        &db,
        "save_target",
        json!({"description": "Finance leaders (CFO, VP Finance, Finance Director, Financial Controller) at UK and Irish software and fintech companies with 50–500 employees."}),
    );
    keep(
        "target",
        "save_target_filters",
        json!({
            "countries": ["United Kingdom", "Ireland"], "titles": ["CFO", "VP of Finance", "Finance Director", "Financial Controller"],
            "industries": ["Computer Software", "Financial Services"], "company_sizes": ["51-200", "201-500"],
            "exclude_company_domains": ["ledgerly.io"]
        }),
        &mut outputs,
    );
    keep("lead_count", "estimate_lead_pool", json!({}), &mut outputs);
    keep("lead_preview", "preview_lead_sample", json!({"count": 8}), &mut outputs);
    ok(&db, "confirm_target", json!({}));
    keep(
        "playbook",
        "save_playbook",
        json!({
            "tone": "Plain, peer-to-peer", "angle": "The 10-day close is a choice, not a law of nature",
            "persona": "CFO at a scaling software company",
            "pain_points": ["Month-end close takes 8–12 working days", "Spreadsheet reconciliations break when volume grows"],
            "rules": ["Never more than 120 words", "No links in step 1", "One question, never two"],
            "objections": [{"objection": "We just bought an ERP.", "answer": "Ledgerly sits on top of it; nothing to migrate."}],
            "sender_name": "Anna Berg", "sender_title": "Co-founder"
        }),
        &mut outputs,
    );
    keep(
        "sequence",
        "save_sequence",
        json!({"steps": [
            {"subject": "Closing the books at {{company}}",
             "body": "Hi {{first_name|there}},\n\nMost finance teams at companies the size of {{company}} take 8–12 days to close the month. Ours take 3, because reconciliations happen as transactions arrive.\n\nWorth a 20-minute look?\n\n{{sender_name}}"},
            {"delay_days": 3, "body": "Hi {{first_name|there}}, one number that may matter: teams using Ledgerly cut reconciliation time by 68%. Happy to show you how.",
             "variants": [{"body": "{{first_name|Hi}}, would the close-time benchmark for {{industry|your industry}} be useful?"}]},
            {"delay_days": 4, "body": "I'll stop here, {{first_name|there}}. If month-end becomes a priority, just reply to this email."}
        ]}),
        &mut outputs,
    );
    ok(&db, "approve_sequence", json!({"version": 1}));
    keep("first_email", "check_first_email", json!({}), &mut outputs);
    keep(
        "campaign_estimate",
        "estimate_campaign_plan",
        json!({"lead_count": 1240, "mailboxes": 6}),
        &mut outputs,
    );
    keep("workspace", "get_workspace_context", json!({}), &mut outputs);

    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/card");
    let mut stale = Vec::new();
    for (kind, tool, out) in &outputs {
        let fixture = json!({"tool": tool, "text": out.text, "structuredContent": out.structured});
        let mut text = serde_json::to_string_pretty(&fixture).unwrap();
        text.push('\n');
        let path = dir.join(format!("{kind}.json"));
        if std::env::var_os("UPDATE_SNAPSHOTS").is_some() {
            std::fs::write(&path, &text).unwrap();
        }
        if std::fs::read_to_string(&path).unwrap_or_default() != text {
            stale.push(*kind);
        }
    }
    assert!(
        stale.is_empty(),
        "card fixtures differ from the real output: {stale:?}; run UPDATE_SNAPSHOTS=1 cargo test"
    );
}

fn call_as_app(db: &MemoryDb, tool: &str, arguments: Value) -> ToolOutcome {
    crate::testing::run_tool(db, &test_config(), &principal(ScopeSet::FULL, true), tool, arguments, NOW_MS)
}

fn confirmed_target(db: &MemoryDb, filters: Value) -> Value {
    ok(db, "save_offer", offer(true));
    ok(db, "save_target", json!({"description": "the target"}));
    ok(db, "save_target_filters", filters);
    let count = ok(db, "estimate_lead_pool", json!({}));
    ok(db, "preview_lead_sample", json!({}));
    ok(db, "confirm_target", json!({}));
    count
}

fn on_plan(db: &MemoryDb, plan: &str) {
    db.batch(vec![crate::store::Stmt::new(
        "INSERT INTO billing (id, plan, status, event_at, updated_at) VALUES (1, ?, 'active', 0, 0)",
        vec![plan.into()],
    )])
    .unwrap();
}

#[test]
fn import_leads_is_an_approval_within_the_plan_and_imports_exactly_the_pool() {
    let db = MemoryDb::new();
    refused(&db, "import_leads", json!({}), "save_target");
    let count =
        confirmed_target(&db, json!({"countries": ["Ireland"], "titles": ["CFO", "Head of Finance"]}));
    let total = count["total"].as_u64().unwrap();
    assert!(total > 50, "{total}");

    // The free plan allows 50 leads a month: asking for more names the plan that lifts it.
    let text = refused(&db, "import_leads", json!({"max_leads": 500}), "Plan limit");
    assert!(text.contains("Starter") && text.contains("start_checkout"), "{text}");
    // Without a number, the approval is for what the plan still allows, and says so.
    let out = call(&db, "import_leads", json!({}));
    assert_eq!(out.outcome, Outcome::Ok, "{}", out.text);
    assert!(out.text.contains("allows 50 more leads"), "{}", out.text);
    let a = out.structured.unwrap();
    assert_eq!(
        (a["kind"].clone(), a["status"].clone(), a["action"].clone()),
        (json!("approval"), json!("pending"), json!("import_leads"))
    );
    let impact =
        a["impact"].as_array().unwrap().iter().map(|x| x.as_str().unwrap()).collect::<Vec<_>>().join("\n");
    assert!(
        impact.contains("up to 50 leads")
            && impact.contains(&format!("pool of {}", crate::plans::group_thousands(total))),
        "{impact}"
    );
    assert!(impact.contains("50 credits") && impact.contains("0 left after"), "{impact}");
    // Asking again returns the same approval; nothing is imported before the user decides.
    let again = ok(&db, "import_leads", json!({}));
    assert_eq!(again["id"], a["id"]);
    assert_eq!(crate::workspace::leads::count(&db).unwrap(), 0);

    // The user approves in the card: the executor imports, counts usage, reports.
    let decided = call_as_app(&db, "decide_approval", json!({"id": a["id"], "decision": "approve"}));
    assert_eq!(decided.outcome, Outcome::Ok, "{}", decided.text);
    let d = decided.structured.unwrap();
    assert_eq!(d["status"], "done", "{d}");
    assert!(d["result"].as_str().unwrap().starts_with("Imported 50 leads"), "{d}");
    assert_eq!(crate::workspace::leads::count(&db).unwrap(), 50);
    let used = crate::workspace::limits::used(&db, crate::plans::Limit::LeadsPerMonth, NOW_MS).unwrap();
    assert_eq!(used, 50);
    let ctx = ok(&db, "get_workspace_context", json!({}));
    assert_eq!(ctx["leads"]["total"], 50);
    assert_eq!(ctx["leads"]["imports"][0]["imported"], 50);
    let leads_step =
        ctx["journey"].as_array().unwrap().iter().find(|s| s["step"] == "leads").unwrap().clone();
    assert_eq!(leads_step["status"], "done");
    // The imported leads are the first people of the sample, in order.
    let sample = ok(&db, "preview_lead_sample", json!({"count": 3}));
    let first = crate::workspace::leads::nth(&db, 0).unwrap().unwrap();
    assert_eq!(first.first_name, sample["leads"][0]["firstName"].as_str().unwrap());
    // The month's allowance is used up.
    let text = refused(&db, "import_leads", json!({}), "Plan limit");
    assert!(text.contains("Starter"), "{text}");
    // The first email now renders for an imported lead.
    ok(&db, "save_playbook", json!({"tone": "plain", "angle": "close faster", "sender_name": "Anna"}));
    ok(&db, "save_sequence", steps());
    assert_eq!(ok(&db, "check_first_email", json!({}))["lead"]["source"], "imported");
}

#[test]
fn a_full_import_matches_the_count_less_what_is_skipped() {
    let db = MemoryDb::new();
    ok(&db, "get_workspace_context", json!({}));
    on_plan(&db, "growth");
    let count = confirmed_target(
        &db,
        json!({"countries": ["Finland"], "seniorities": ["vp"], "company_sizes": ["201-500", "501-1000"]}),
    );
    let total = count["total"].as_u64().unwrap();
    assert!((100..5_000).contains(&total), "{total}");
    // Suppress one address of the pool and one whole company.
    let sample = crate::testing::block_on(crate::leads::LeadProvider::sample(
        &crate::leads::sandbox::Sandbox,
        &serde_json::from_value(count["filters"].clone()).unwrap(),
        5,
    ))
    .unwrap();
    crate::workspace::suppression::add(
        &db,
        sample[1].email.as_deref().unwrap(),
        crate::workspace::suppression::Reason::Unsubscribe,
        "test",
        NOW_MS,
    )
    .unwrap();
    let a = ok(&db, "import_leads", json!({"max_leads": 50_000}));
    let d = call_as_app(&db, "decide_approval", json!({"id": a["id"], "decision": "approve"}))
        .structured
        .unwrap();
    assert_eq!(d["status"], "done", "{d}");
    let (job, _) =
        crate::workspace::leads::recent_imports(&db, 1).unwrap().into_iter().next().map(|j| (j, ())).unwrap();
    assert_eq!(job.requested, total);
    assert_eq!(job.cursor, total, "every person of the pool was walked once");
    assert_eq!(job.skipped_suppressed, 1);
    assert_eq!(job.imported + job.skipped_suppressed, total, "count = imported + skipped");
    assert_eq!(crate::workspace::leads::count(&db).unwrap() as u64, job.imported);
    assert!(d["result"].as_str().unwrap().contains("1 on the suppression list"), "{d}");
    // Another import would find nobody new: it is not asked for (journey finding: its approval
    // was, and imported 0).
    refused(&db, "import_leads", json!({"max_leads": 10}), "already went through everyone");
    assert_eq!(crate::workspace::leads::count(&db).unwrap() as u64, job.imported);
}

#[test]
fn an_import_approved_after_the_target_changed_imports_nothing() {
    let db = MemoryDb::new();
    confirmed_target(&db, json!({"countries": ["Ireland"], "titles": ["CFO", "Head of Finance"]}));
    let a = ok(&db, "import_leads", json!({"max_leads": 10}));
    // The user changes the target before deciding: it is no longer the one confirmed.
    let t = ok(&db, "save_target_filters", json!({"countries": ["Germany"], "titles": ["CFO"]}));
    assert_eq!(t["confirmed"], false);
    let d = call_as_app(&db, "decide_approval", json!({"id": a["id"], "decision": "approve"}))
        .structured
        .unwrap();
    assert_eq!(d["status"], "not_done", "{d}");
    assert!(d["result"].as_str().unwrap().contains("The target changed"), "{d}");
    assert_eq!(crate::workspace::leads::count(&db).unwrap(), 0, "nobody imported, nothing paid");
    // Confirmed again (same filters, a new version), a new import goes ahead.
    ok(&db, "estimate_lead_pool", json!({}));
    ok(&db, "preview_lead_sample", json!({}));
    ok(&db, "confirm_target", json!({}));
    let b = ok(&db, "import_leads", json!({"max_leads": 10}));
    let d = call_as_app(&db, "decide_approval", json!({"id": b["id"], "decision": "approve"}))
        .structured
        .unwrap();
    assert_eq!(d["status"], "done", "{d}");
    assert_eq!(crate::workspace::leads::count(&db).unwrap(), 10);
}

#[test]
fn a_sequence_with_another_number_of_steps_takes_back_the_sizing_confirmation() {
    let db = MemoryDb::new();
    ok(&db, "save_offer", offer(true));
    ok(&db, "save_playbook", json!({"tone": "plain", "angle": "close faster", "sender_name": "Anna"}));
    let three = json!({"steps": [{"subject": "Hi", "body": "1"}, {"body": "2"}, {"body": "3"}]});
    ok(&db, "save_sequence", three);
    let sized = ok(&db, "size_sending_capacity", json!({"volume": 40, "unit": "new_leads_per_day"}));
    assert_eq!(sized["steps"], 3, "{sized}");
    ok(&db, "confirm_sizing", json!({}));
    let confirmed = || crate::workspace::sending::sizing(&db).unwrap().unwrap().confirmed_at.is_some();
    // The same number of steps, reworded: the sizing holds.
    let same = call(
        &db,
        "save_sequence",
        json!({"steps": [{"subject": "Hello", "body": "1"}, {"body": "2"}, {"body": "3"}]}),
    );
    assert!(!same.text.contains("size it again"), "{}", same.text);
    assert!(confirmed());
    // Five steps need more emails a day than the three the mailboxes were sized for.
    let five = json!({"steps": [{"subject": "Hi", "body": "1"}, {"body": "2"}, {"body": "3"}, {"body": "4"}, {"body": "5"}]});
    let out = call(&db, "save_sequence", five);
    assert_eq!(out.outcome, Outcome::Ok, "{}", out.text);
    assert!(out.text.contains("size it again (size_sending_capacity)"), "{}", out.text);
    assert!(!confirmed(), "the sizing must be confirmed again");
    let resized = ok(&db, "size_sending_capacity", json!({"volume": 40, "unit": "new_leads_per_day"}));
    assert_eq!(resized["steps"], 5, "{resized}");
}

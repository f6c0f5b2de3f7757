//! The reads a workspace object's instance remembers (`store::Remembering`) are forgotten by
//! every way the workspace changes: tools, approval requests and decisions (the web page's op),
//! expiry as time passes, the alarm's jobs, billing webhooks, unsubscribe links and the
//! authorization server's grant operations. After each, `get_workspace_context` read through
//! the layer must equal the same read without it, and reading it again with nothing changed
//! must run no SQL at all (so the equality is not met by reading everything again).

use serde_json::{Value, json};

use super::approvals::{self, Decision};
use super::{Op, Opened, Services, ToolCall, call_tool, call_tool_opened, handle_op, on_alarm};
use crate::auth::{Principal, ScopeSet};
use crate::config::Config;
use crate::oauth::grants::{self, AccountOp};
use crate::outbound::NoNetwork;
use crate::providers::billing::{BillingEvent, EventKind};
use crate::store::{Db, Remembering};
use crate::testing::{CountingDb, NOW_MS, Probe, ProbeArgs, ProbeOutcome, block_on, principal, test_config};
use crate::tools::{Outcome, ToolCx, ToolOutcome};

/// A call of `tool` by `principal`, as the Worker sends one.
fn tool_call(principal: &Principal, tool: &str, arguments: Value) -> ToolCall {
    ToolCall {
        tool: tool.into(),
        arguments,
        principal: principal.clone(),
        request_id: "req_1".into(),
        structured_content: true,
    }
}

/// One object instance: its one way into the database, and what it remembers besides.
struct Instance {
    db: Remembering<CountingDb>,
    opened: Opened,
    config: Config,
    principal: Principal,
}

impl Instance {
    fn new() -> Instance {
        Instance {
            db: Remembering::new(CountingDb::default()),
            opened: Opened::default(),
            config: test_config(),
            principal: principal(ScopeSet::FULL, true),
        }
    }

    fn call_as(&self, principal: &Principal, tool: &str, arguments: Value, now_ms: i64) -> ToolOutcome {
        let call = tool_call(principal, tool, arguments);
        block_on(call_tool_opened(&self.db, &self.opened, &self.config, &NoNetwork, call, now_ms))
    }

    fn call(&self, tool: &str, arguments: Value, now_ms: i64) -> ToolOutcome {
        let out = self.call_as(&self.principal, tool, arguments, now_ms);
        assert_eq!(out.outcome, Outcome::Ok, "{tool}: {}", out.text);
        out
    }

    fn svc(&self, now_ms: i64) -> Services<'_> {
        Services { db: &self.db, config: &self.config, outbound: &NoNetwork, now_ms }
    }

    fn op(&self, op: Op, now_ms: i64) {
        block_on(handle_op(&self.svc(now_ms), &self.opened, op)).unwrap();
    }

    fn ran(&self) -> usize {
        self.db.unremembered().statements.get()
    }

    /// The workspace view through the remembered reads, checked against the same call without
    /// them, then read again to see that it is remembered whole.
    fn context(&self, now_ms: i64) -> Value {
        let remembered = self.call("get_workspace_context", json!({}), now_ms);
        let call = tool_call(&self.principal, "get_workspace_context", json!({}));
        // A fresh instance's call, straight to the database. It writes nothing: the schema and
        // the owner are in place, and the remembered call just expired whatever was overdue.
        let fresh = block_on(call_tool(self.db.unremembered(), &self.config, &NoNetwork, call, now_ms));
        assert_eq!(remembered.text, fresh.text);
        assert_eq!(remembered.structured, fresh.structured);
        let before = self.ran();
        let again = self.call("get_workspace_context", json!({}), now_ms);
        assert_eq!(self.ran(), before, "nothing changed, so nothing is read again");
        assert_eq!(again.structured, remembered.structured);
        remembered.structured.unwrap_or_default()
    }

    fn request(&self, label: &str, outcome: ProbeOutcome, now_ms: i64) -> String {
        let cx = ToolCx {
            db: &self.db,
            principal: &self.principal,
            config: &self.config,
            now_ms,
            request_id: "req_1",
            outbound: &NoNetwork,
        };
        let args = ProbeArgs { label: label.into(), outcome };
        block_on(approvals::request(&cx, &Probe, args)).unwrap().data.approval.id
    }
}

#[test]
fn every_write_path_is_seen_by_the_next_context_read() {
    let w = Instance::new();
    let open = |v: &Value| v["pendingApprovalCount"].as_i64();
    // Opening the workspace (schema and owner) is the first write.
    let v = w.context(NOW_MS);
    assert!(v.get("offer").is_none());

    // Tools.
    let offer = json!({
        "product": "Ledgerly", "description": "Month-end close automation", "value_proposition": "Close in 3 days",
        "company_name": "Ledgerly Ltd", "proof_points": ["140 finance teams"], "call_to_action": "a 20-minute call"
    });
    w.call("save_offer", offer, NOW_MS);
    assert_eq!(w.context(NOW_MS)["offer"]["product"], "Ledgerly");
    w.call("remember", json!({"note": "Prefers a formal tone", "topic": "tone"}), NOW_MS);
    assert_eq!(w.context(NOW_MS)["memories"][0]["note"], "Prefers a formal tone");

    // An approval requested, then decided on the web page (an op).
    let a = w.request("a", ProbeOutcome::Ok, NOW_MS);
    assert_eq!(open(&w.context(NOW_MS)), Some(1));
    // Time alone changes what is shown of it (computed per call), never what is stored.
    w.context(NOW_MS + 3_600_000);
    w.op(Op::DecideApproval { subject: "user_1".into(), id: a, decision: Decision::Approve }, NOW_MS + 10);
    assert_eq!(open(&w.context(NOW_MS + 20)), Some(0));

    // Expiry as time passes, with no alarm: the remembered tally says something is overdue,
    // and the read expires it (a write) before it answers.
    w.request("b", ProbeOutcome::Ok, NOW_MS + 30);
    assert_eq!(open(&w.context(NOW_MS + 40)), Some(1));
    let late = NOW_MS + 30 + approvals::DEFAULT_TTL_MS;
    assert_eq!(open(&w.context(late)), Some(0));

    // The alarm: an execution whose outcome was unknown is finished by the watchdog job, which
    // nothing else would have noticed (an executing approval stays open whatever the time).
    let c = w.request("c", ProbeOutcome::UnknownOnce, late);
    w.op(Op::DecideApproval { subject: "user_1".into(), id: c, decision: Decision::Approve }, late);
    assert_eq!(open(&w.context(late + 1_000)), Some(1));
    let report = block_on(on_alarm(&w.svc(late + 60_000), &w.opened)).unwrap();
    assert!(report.ran.contains(&"finish_execution"), "{report:?}");
    assert_eq!(open(&w.context(late + 60_001)), Some(0));

    // A billing webhook.
    assert_eq!(w.context(late + 60_001)["plan"]["id"], "free");
    let event = BillingEvent {
        id: "evt_1".into(),
        created_ms: late,
        workspace: "ws_1".into(),
        kind: EventKind::CheckoutCompleted {
            customer: Some("cus_1".into()),
            subscription: Some("sub_1".into()),
            plan: Some("growth".into()),
            paid: true,
        },
    };
    w.op(Op::BillingEvent { event }, late + 60_002);
    assert_eq!(w.context(late + 60_003)["plan"]["id"], "growth");

    // A write of a lead straight through the layer, then an unsubscribe link for its address.
    let email = "someone@example.com";
    let db: &dyn Db = &w.db;
    db.exec(
        "INSERT INTO leads (email, email_hash, first_name, last_name, title, company, provider, provider_id, import_id, imported_at) \
         VALUES (?, ?, 'Some', 'One', 'CFO', 'Example', 'sandbox', 'p1', 'imp_1', ?)",
        vec![email.into(), crate::compliance::email_hash(email).into(), late.into()],
    )
    .unwrap();
    assert_eq!(w.context(late + 60_004)["leads"]["total"], 1);
    w.op(Op::Unsubscribe { hash: crate::compliance::email_hash(email) }, late + 60_005);
    assert_eq!(w.context(late + 60_006)["leads"]["suppressed"], 1);
}

#[test]
fn a_revoked_grant_stops_its_token_at_the_next_call() {
    let w = Instance::new();
    w.context(NOW_MS);
    let now = NOW_MS + 1;
    // An active grant, as the token endpoint leaves it after the code's redemption.
    let db: &dyn Db = &w.db;
    db.exec(
        "INSERT INTO oauth_grants (id, subject, client_id, client_name, redirect_uri, redirect_uri_in_request, \
         scope, app, resource, refresh, created_at, expires_at, activated_at, last_used_at) \
         VALUES ('gr_1', 'user_1', 'client_1', 'Client', 'http://127.0.0.1/cb', 1, 'mcp:read mcp:act', 1, 'r', 1, ?, ?, ?, ?)",
        vec![now.into(), (now + 1_000_000).into(), now.into(), now.into()],
    )
    .unwrap();
    let mut with_grant = w.principal.clone();
    with_grant.grant_id = Some("gr_1".into());
    let call = |at: i64| w.call_as(&with_grant, "get_workspace_context", json!({}), at);
    assert_eq!(call(now).outcome, Outcome::Ok);
    let before = w.ran();
    assert_eq!(call(now).outcome, Outcome::Ok);
    assert_eq!(w.ran(), before, "the grant's check is remembered too");
    // The grant's expiry is compared per call.
    assert_eq!(call(now + 1_000_000).outcome, Outcome::Revoked);
    assert_eq!(call(now).outcome, Outcome::Ok);
    let revoke =
        AccountOp::RevokeGrant { grant_id: "gr_1".into(), subject: "user_1".into(), client_id: None };
    grants::apply(&w.db, &w.opened, "route", revoke, now + 2).unwrap();
    assert_eq!(call(now + 3).outcome, Outcome::Revoked);
}

#[test]
fn an_alarm_with_nothing_due_keeps_the_remembered_reads() {
    let w = Instance::new();
    w.context(NOW_MS);
    // The instance checked the schema when it opened the workspace; an alarm that finds no job
    // due writes nothing, so the next read runs no SQL at all.
    let report = block_on(on_alarm(&w.svc(NOW_MS + 1), &w.opened)).unwrap();
    assert!(report.ran.is_empty(), "{report:?}");
    let before = w.ran();
    w.call("get_workspace_context", json!({}), NOW_MS + 1);
    assert_eq!(w.ran(), before, "the alarm forgot the remembered reads");
}

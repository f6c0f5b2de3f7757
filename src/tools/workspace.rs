//! Workspace tools: where the user is (`get_workspace_context`), what the assistant should
//! remember (`remember`), and what the user sells (`save_offer`).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::registry::{Access, Hints, Refusal, Reply, Tool, ToolCx};
use crate::plans::Limit;
use crate::workspace::approvals::{self, Approval};
use crate::workspace::billing;
use crate::workspace::campaigns::PausedBy;
use crate::workspace::journey::{self, Availability, JourneyStep, NextStep, Progress, Step};
use crate::workspace::memory::{self, Memory, Saved};
use crate::workspace::offer::{self, Offer};

/// How many notes the workspace view shows.
const NOTES_SHOWN: i64 = 20;
/// How many pending approvals the workspace view shows.
const APPROVALS_SHOWN: i64 = 5;

// ---- get_workspace_context ---------------------------------------------------------------

/// `get_workspace_context`: the workspace, what is set so far, and the next step.
pub struct GetWorkspaceContext;

/// No arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NoArguments {}

/// The workspace view.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(tag = "kind", rename = "workspace", rename_all = "camelCase")]
pub struct WorkspaceView {
    /// The workspace id.
    pub workspace_id: String,
    /// When the workspace was created (ms since the epoch).
    pub created_at: i64,
    /// Whether this connection can act (has `mcp:act`) or only read.
    pub can_act: bool,
    /// The offer, once saved.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub offer: Option<Offer>,
    /// The most recent notes, newest first.
    pub memories: Vec<Memory>,
    /// The plan in force.
    pub plan: PlanSummary,
    /// Approvals waiting for the user, newest first (at most 5; list_pending_approvals has all).
    pub pending_approvals: Vec<Approval>,
    /// How many approvals are waiting in all.
    pub pending_approval_count: i64,
    /// Target, playbook, sequence, leads and the personal-data access log.
    #[serde(flatten)]
    pub planning: crate::workspace::planning::Planning,
    /// The sending setup so far: sizing, source, domains, addresses, mailboxes.
    pub sending: crate::workspace::sending::Summary,
    /// Every step of the journey with its status.
    pub journey: Vec<JourneyStep>,
    /// What to do next; absent when every step is done.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_step: Option<NextStep>,
}

/// The workspace's plan, in short (get_plans_and_billing has the details).
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PlanSummary {
    /// The plan's id.
    pub id: String,
    /// Its name.
    pub name: String,
    /// The subscription's status, or `none`.
    pub status: String,
    /// Whether a paid subscription is in force.
    pub paying: bool,
}

impl Tool for GetWorkspaceContext {
    type Input = NoArguments;
    type Output = WorkspaceView;
    const NAME: &'static str = "get_workspace_context";
    const TITLE: &'static str = "Get workspace context";
    const DESCRIPTION: &'static str = "Start here. Returns the user's VibeSell workspace: what they sell, \
        what has been set up so far (target, leads, emails, sending setup, campaign), notes remembered \
        from earlier conversations, every step of the journey with its status, and the next step with \
        the tool to call. Call it at the start of a conversation and whenever unsure what comes next.";
    const ACCESS: Access = Access::Read;
    const HINTS: Hints = Hints { idempotent: true, open_world: false };

    async fn call(&self, cx: &ToolCx<'_>, _: NoArguments) -> Result<Reply<WorkspaceView>, Refusal> {
        // First, since it is the one read that may write (expiring overdue approvals), which
        // makes a holder that remembers reads forget those made before it.
        let open = approvals::open_now(cx.db, cx.now_ms, APPROVALS_SHOWN)?;
        let offer = offer::load(cx.db)?.map(|(o, _)| o);
        let memories = memory::recent(cx.db, NOTES_SHOWN)?;
        let here = approvals::decides_here(cx);
        let pending_approvals: Vec<Approval> =
            open.newest.iter().map(|r| r.view(cx.config, here, cx.now_ms)).collect();
        let pending_approval_count = open.count;
        let current = billing::current(cx.db, cx.config)?;
        let plan = PlanSummary {
            id: current.plan.id.clone(),
            name: current.plan.name.clone(),
            status: current.state.as_ref().map_or_else(|| "none".to_owned(), |s| s.status.clone()),
            paying: current.paying,
        };
        let mut progress = Progress::default();
        if offer.is_some() {
            progress.done(Step::Offer);
        }
        let planning = crate::workspace::planning::load(cx.db, &mut progress)?;
        let mut sending = crate::workspace::sending::summary(cx.db)?;
        // Paused for a plan that allows it again (the user paid since): resuming is what is left,
        // in the text and the card alike (third journey walk: both still said to upgrade).
        if let Some(c) = sending.campaign.as_mut().filter(|c| c.paused_by == Some(PausedBy::Plan))
            && crate::workspace::limits::check(cx.db, cx.config, cx.now_ms, Limit::ActiveCampaigns, 1).is_ok()
        {
            c.pause_reason =
                Some("The plan allows it again: resume_campaign asks the user to approve sending.".into());
        }
        progress.done.extend(sending.done());
        if sending.warming && !progress.done.contains(&Step::Warmup) {
            progress.warming(crate::tools::sending::ready_date(cx)?);
        }
        // A plan without room for the sized mailboxes would send the user to an order it refuses:
        // the plan comes first, said as the order would refuse (journey finding).
        if let Some(need) = sending.sizing.as_ref().map(|s| i64::from(s.mailboxes))
            && !progress.done.contains(&Step::Setup)
            && let Err(Refusal::Guidance(why)) = crate::workspace::limits::check(
                cx.db,
                cx.config,
                cx.now_ms,
                crate::plans::Limit::Mailboxes,
                need,
            )
        {
            let tool = match (current.payment_pending(), current.paying) {
                (true, _) => "get_plans_and_billing",
                (false, true) => "upgrade_plan",
                (false, false) => "start_checkout",
            };
            progress.next_within(Step::Setup, tool, why);
        }
        let (journey, next_step) = journey::journey(&progress, |name| match super::find(name) {
            Some(t) if t.access().allows(cx.principal) => Availability::Available,
            Some(_) => Availability::NotAllowed,
            None => Availability::Missing,
        });
        let can_act = cx.principal.scopes.act;
        let mut text = String::from("**VibeSell workspace**\n");
        match &offer {
            Some(o) => text.push_str(&format!("- Offer: {} — {}\n", o.product, o.value_proposition)),
            None => text.push_str("- Offer: not described yet\n"),
        }
        // The provider's status, when there is a subscription to have one.
        match plan.status.as_str() {
            "none" => text.push_str(&format!("- Plan: {}\n", plan.name)),
            status => text.push_str(&format!("- Plan: {} ({status})\n", plan.name)),
        }
        planning_lines(&planning, &mut text);
        if let Some(sz) = &sending.sizing {
            // A sizing made with mailboxes in place is what it adds to them, and said so.
            let (more, boxes, on_top) = match sz.on_top_of {
                0 => ("", ("mailbox", "mailboxes"), String::new()),
                n => (
                    " more",
                    ("more mailbox", "more mailboxes"),
                    format!(", on top of the {n} set up before"),
                ),
            };
            text.push_str(&format!(
                "- Sending: {} emails a day{more} from {} on {}{on_top}{}",
                sz.emails_per_day,
                crate::plans::plural(sz.mailboxes, boxes.0, boxes.1),
                crate::plans::plural(sz.domains, "domain", "domains"),
                if sz.confirmed { "" } else { " (sizing not confirmed)" }
            ));
            if let Some(c) = &sending.campaign {
                text.push_str(&format!(
                    "; latest campaign {} ({}): {} emails sent, {} replied",
                    c.name,
                    c.status.as_str(),
                    crate::plans::group_thousands(u64::from(c.sent)),
                    crate::plans::group_thousands(u64::from(c.replied)),
                ));
            }
            if sending.ordered {
                text.push_str(&format!(
                    "; setup ordered, {} of {} mailboxes ready\n",
                    sending.mailboxes_ready, sending.mailboxes
                ));
            } else {
                text.push('\n');
            }
            // The received emails of every campaign, not only the latest's (third journey walk:
            // the workspace's unread count read as the latest campaign's).
            if sending.replies > 0 {
                text.push_str(&format!(
                    "- Received emails (replies, out-of-office notes, bounces), all campaigns: {}, of which {} unread (list_replies)\n",
                    crate::plans::group_thousands(sending.replies.unsigned_abs()),
                    crate::plans::group_thousands(sending.replies_unread.unsigned_abs()),
                ));
            }
            // Said here too, not only by get_campaign: a campaign the plan paused looked paused for
            // no reason (second journey walk).
            if let Some(why) = sending.campaign.as_ref().and_then(|c| c.pause_reason.as_deref()) {
                text.push_str(&format!("- Campaign paused: {why}\n"));
            }
        }
        let done = journey.iter().filter(|s| s.status == journey::Status::Done).count();
        text.push_str(&format!("- Journey: {done} of {} steps done\n", journey.len()));
        if pending_approval_count > 0 {
            text.push_str(&format!(
                "- {pending_approval_count} approval(s) waiting for the user's decision (list_pending_approvals): {}\n",
                pending_approvals.iter().map(|a| a.summary.as_str()).collect::<Vec<_>>().join("; ")
            ));
        }
        if !memories.is_empty() {
            text.push_str(&format!(
                "- {} remembered note(s) in structuredContent.memories\n",
                memories.len()
            ));
        }
        match &next_step {
            Some(NextStep { title, tool: Some(tool), why, .. }) => {
                text.push_str(&format!("\n**Next:** {title} — call `{tool}`. {why}"));
            }
            Some(NextStep { title, tool: None, why, .. }) => {
                text.push_str(&format!("\n**Next:** {title}. {why}"))
            }
            None => text.push_str("\nEvery step is done."),
        }
        if !can_act {
            text.push_str("\n\nThis connection is read-only: it can look but not change anything.");
        }
        let view = WorkspaceView {
            workspace_id: cx.principal.workspace.clone(),
            created_at: crate::workspace::created_at(cx.db)?.unwrap_or(cx.now_ms),
            can_act,
            offer,
            memories,
            plan,
            pending_approvals,
            pending_approval_count,
            planning,
            sending,
            journey,
            next_step,
        };
        Ok(Reply::new(text, view))
    }
}

/// One line per planning area for the model.
fn planning_lines(p: &crate::workspace::planning::Planning, text: &mut String) {
    use crate::plans::group_thousands;
    match &p.target {
        None => text.push_str("- Target: not described yet\n"),
        Some(t) => {
            let state = if t.confirmed {
                "confirmed"
            } else if t.filters.is_some() {
                "filters saved, not confirmed"
            } else {
                "in words only"
            };
            text.push_str(&format!("- Target ({state}): {}\n", t.description));
            if let Some(f) = &t.filters {
                text.push_str(&format!("  - Filters: {}\n", f.summary()));
            }
            if let Some(n) = t.pool_count {
                text.push_str(&format!(
                    "  - Lead pool: {} people{}\n",
                    group_thousands(n),
                    if t.previewed { ", sample seen" } else { "" }
                ));
            }
        }
    }
    if let Some(pb) = &p.playbook {
        text.push_str(&format!("- Playbook: {} — {}\n", pb.tone, pb.angle));
    }
    match &p.sequence {
        Some(s) => text.push_str(&format!(
            "- Sequence: {} step(s), version {}, {}{}\n",
            s.steps,
            s.version,
            if s.approved { "approved by the user" } else { "not approved" },
            if s.first_email_checked { ", first email checked" } else { "" }
        )),
        None => text.push_str("- Sequence: not written yet\n"),
    }
    if p.leads.total > 0 || p.leads.suppressed > 0 {
        text.push_str(&format!(
            "- Leads: {} imported; {} on the suppression list\n",
            group_thousands(p.leads.total.max(0) as u64),
            p.leads.suppressed
        ));
    }
}

// ---- remember ----------------------------------------------------------------------------

/// `remember`: keeps a note about the user for later conversations.
pub struct Remember;

/// What to remember, or which note to forget.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RememberInput {
    /// The fact or preference, in one or two sentences (e.g. "Prefers a formal tone; never
    /// mention pricing in the first email"). Left out with `forget`.
    #[schemars(length(min = 1, max = 1000))]
    pub note: Option<String>,
    /// A short topic such as `tone` or `sender_name`. A note with a topic replaces the previous
    /// note on that topic; without one it is added.
    #[schemars(length(min = 1, max = 60))]
    pub topic: Option<String>,
    /// The id of a note to delete, when the user asks to forget it (get_workspace_context lists
    /// the notes with their ids). Given alone. The result carries the deleted note's text.
    #[schemars(range(min = 1))]
    pub forget: Option<i64>,
}

/// A note saved, or deleted.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(tag = "kind", rename = "memory", rename_all = "camelCase")]
pub struct MemoryView {
    /// The note's id.
    pub id: i64,
    /// Its topic.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub topic: Option<String>,
    /// The note.
    pub note: String,
    /// When it was saved (ms since the epoch).
    pub saved_at: i64,
    /// Whether it replaced the previous note on its topic.
    pub replaced: bool,
    /// Whether it was deleted (`forget`) rather than saved.
    pub forgotten: bool,
    /// Notes in the workspace now.
    pub total: i64,
}

impl Tool for Remember {
    type Input = RememberInput;
    type Output = MemoryView;
    const NAME: &'static str = "remember";
    const TITLE: &'static str = "Remember or forget a note";
    const DESCRIPTION: &'static str = "Keeps a note about the user or their business (a preference, a fact, \
        a decision) in their VibeSell workspace, so later conversations can use it; \
        get_workspace_context returns the notes. Give a topic to replace an earlier note on the same \
        topic. Only note what the user said or confirmed. When the user asks to forget a note, pass its id \
        as `forget` instead. Returns the note saved or deleted.";
    const ACCESS: Access = Access::Act;
    const HINTS: Hints = Hints { idempotent: false, open_world: false };

    async fn call(&self, cx: &ToolCx<'_>, input: RememberInput) -> Result<Reply<MemoryView>, Refusal> {
        if let Some(id) = input.forget {
            return forget(cx, id, input.note.is_some() || input.topic.is_some());
        }
        let note = input.note.as_deref().map_or("", str::trim);
        let topic = input.topic.as_deref().map(str::trim).map(str::to_lowercase);
        if note.is_empty() || topic.as_deref() == Some("") {
            return Err(Refusal::InvalidArguments(
                "`note` and `topic` must not be blank; to delete a note, give only `forget` with its id"
                    .into(),
            ));
        }
        match memory::save(cx.db, topic.as_deref(), note, cx.now_ms)? {
            Saved::Full => Err(Refusal::guidance(format!(
                "The workspace already keeps {} notes, the most it holds. Replace an existing note by \
                 calling remember with its topic, or delete one the user no longer needs (`forget`).",
                memory::MAX_NOTES
            ))),
            Saved::Ok { memory, replaced, total } => {
                let text = match &memory.topic {
                    Some(t) if replaced => format!("Updated the note on **{t}**."),
                    Some(t) => format!("Remembered a note on **{t}**."),
                    None => "Remembered the note.".to_owned(),
                };
                Ok(Reply::new(text, memory_view(memory, replaced, false, total)))
            }
        }
    }
}

/// `remember` with `forget`: deletes note `id`. `with_more` when a note or topic came with it,
/// which would leave unclear whether the user meant to save or to delete.
fn forget(cx: &ToolCx<'_>, id: i64, with_more: bool) -> Result<Reply<MemoryView>, Refusal> {
    if with_more {
        return Err(Refusal::InvalidArguments(
            "`forget` deletes a note and is given alone, without `note` or `topic`".into(),
        ));
    }
    let Some(memory) = memory::forget(cx.db, id)? else {
        return Err(Refusal::guidance(format!(
            "No note has the id {id}: get_workspace_context lists the notes with their ids."
        )));
    };
    let text = match &memory.topic {
        Some(t) => format!("Forgot the note on **{t}**."),
        None => "Forgot the note.".to_owned(),
    };
    let total = memory::count(cx.db)?;
    Ok(Reply::new(text, memory_view(memory, false, true, total)))
}

fn memory_view(memory: Memory, replaced: bool, forgotten: bool, total: i64) -> MemoryView {
    MemoryView {
        id: memory.id,
        topic: memory.topic,
        note: memory.note,
        saved_at: memory.updated_at,
        replaced,
        forgotten,
        total,
    }
}

// ---- save_offer --------------------------------------------------------------------------

/// `save_offer`: what the user sells.
pub struct SaveOffer;

/// The offer, in the user's words.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SaveOfferInput {
    /// The product or service name.
    #[schemars(length(min = 1, max = 120))]
    pub product: String,
    /// What it is and what it does, in a few sentences.
    #[schemars(length(min = 1, max = 1000))]
    pub description: String,
    /// The outcome a customer gets, in one sentence (e.g. "Cuts month-end close from 10 days to 3").
    #[schemars(length(min = 1, max = 500))]
    pub value_proposition: String,
    /// The selling company's name.
    #[schemars(length(min = 1, max = 120))]
    pub company_name: Option<String>,
    /// The company's website, starting with https:// or http://.
    #[schemars(length(min = 1, max = 200))]
    pub website: Option<String>,
    /// Pricing in a sentence, if the user wants it used.
    #[schemars(length(min = 1, max = 200))]
    pub pricing: Option<String>,
    /// Facts that make the pitch credible: customers, results, awards (up to 10).
    #[serde(default)]
    #[schemars(length(max = 10), inner(length(min = 1, max = 300)))]
    pub proof_points: Vec<String>,
    /// What a prospect is asked to do, e.g. "Book a 20-minute demo".
    #[schemars(length(min = 1, max = 200))]
    pub call_to_action: Option<String>,
    /// The sender's postal address. Every cold email must show it (CAN-SPAM), so campaigns
    /// cannot launch without it.
    #[schemars(length(min = 1, max = 300))]
    pub postal_address: Option<String>,
}

/// The saved offer.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(tag = "kind", rename = "offer", rename_all = "camelCase")]
pub struct OfferView {
    /// The offer as saved.
    #[serde(flatten)]
    pub offer: Offer,
    /// Whether this call changed the saved offer.
    pub changed: bool,
    /// When it was saved (ms since the epoch).
    pub saved_at: i64,
}

impl Tool for SaveOffer {
    type Input = SaveOfferInput;
    type Output = OfferView;
    const NAME: &'static str = "save_offer";
    const TITLE: &'static str = "Save the offer";
    const DESCRIPTION: &'static str = "Saves what the user sells: product, description, value proposition, \
        and optionally company, website, pricing, proof points, call to action and postal address. \
        This is the first step of the journey; targeting and emails are built from it. Ask the user \
        for anything you do not know rather than inventing it. Saving again replaces the whole offer, \
        so pass every field you want to keep. Returns the saved offer.";
    const ACCESS: Access = Access::Act;
    const HINTS: Hints = Hints { idempotent: true, open_world: false };

    async fn call(&self, cx: &ToolCx<'_>, input: SaveOfferInput) -> Result<Reply<OfferView>, Refusal> {
        let clean = |s: Option<String>| s.map(|v| v.trim().to_owned()).filter(|v| !v.is_empty());
        if let Some(site) = input.website.as_deref().map(str::trim) {
            let lower = site.to_ascii_lowercase();
            let host = lower.strip_prefix("https://").or_else(|| lower.strip_prefix("http://"));
            if host.is_none_or(|h| h.is_empty() || h.starts_with('/') || h.contains(char::is_whitespace)) {
                return Err(Refusal::InvalidArguments(
                    "`website` must be a web address starting with https:// or http://".into(),
                ));
            }
        }
        let required = [&input.product, &input.description, &input.value_proposition];
        if required.iter().any(|s| s.trim().is_empty()) {
            return Err(Refusal::InvalidArguments(
                "`product`, `description` and `value_proposition` must not be blank".into(),
            ));
        }
        let offer = Offer {
            product: input.product.trim().to_owned(),
            description: input.description.trim().to_owned(),
            value_proposition: input.value_proposition.trim().to_owned(),
            company_name: clean(input.company_name),
            website: clean(input.website),
            pricing: clean(input.pricing),
            proof_points: input
                .proof_points
                .into_iter()
                .map(|p| p.trim().to_owned())
                .filter(|p| !p.is_empty())
                .collect(),
            call_to_action: clean(input.call_to_action),
            postal_address: clean(input.postal_address),
        };
        let (changed, saved_at) = offer::save(cx.db, &offer, cx.now_ms)?;
        let mut text =
            format!("{} the offer **{}**.", if changed { "Saved" } else { "No change to" }, offer.product);
        if offer.postal_address.is_none() {
            text.push_str(" No postal address yet: every email must show one, so ask the user for it before a campaign.");
        }
        text.push_str(" Next: call get_workspace_context for the next step.");
        Ok(Reply::new(text, OfferView { offer, changed, saved_at }))
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use crate::auth::ScopeSet;
    use crate::testing::{MemoryDb, NOW_MS, block_on, principal, test_config};
    use crate::tools::{Outcome, ToolOutcome};
    use crate::workspace::{ToolCall, call_tool};

    fn call(db: &MemoryDb, tool: &str, arguments: Value) -> ToolOutcome {
        call_as(db, tool, arguments, "user_1", NOW_MS)
    }

    fn call_as(db: &MemoryDb, tool: &str, arguments: Value, subject: &str, now: i64) -> ToolOutcome {
        let mut p = principal(ScopeSet::FULL, false);
        p.subject = subject.into();
        let c = ToolCall {
            tool: tool.into(),
            arguments,
            principal: p,
            request_id: "req_1".into(),
            structured_content: true,
        };
        block_on(call_tool(db, &test_config(), &crate::outbound::NoNetwork, c, now))
    }

    #[test]
    fn an_empty_workspace_points_at_the_offer() {
        let db = MemoryDb::new();
        let out = call(&db, "get_workspace_context", json!({}));
        assert_eq!(out.outcome, Outcome::Ok, "{}", out.text);
        let data = out.structured.unwrap();
        assert_eq!(data["kind"], "workspace");
        assert_eq!(data["nextStep"]["tool"], "save_offer");
        assert_eq!(data["createdAt"], NOW_MS);
        assert!(data.get("offer").is_none());
        assert!(out.text.contains("save_offer"));
    }

    #[test]
    fn the_offer_is_saved_cleaned_and_idempotent() {
        let db = MemoryDb::new();
        let args = json!({"product": " Ledgerly ", "description": "Close automation", "value_proposition": "3-day close",
                          "proof_points": ["40 teams", " "], "website": "https://ledgerly.io"});
        let first = call(&db, "save_offer", args.clone());
        assert_eq!(first.outcome, Outcome::Ok, "{}", first.text);
        let data = first.structured.unwrap();
        assert_eq!(data["product"], "Ledgerly");
        assert_eq!(data["proofPoints"], json!(["40 teams"]));
        assert_eq!(data["changed"], true);
        assert!(first.text.contains("postal address"), "asks for the postal address");
        let second = call_as(&db, "save_offer", args, "user_1", NOW_MS + 5000);
        let data = second.structured.unwrap();
        assert_eq!(data["changed"], false);
        assert_eq!(data["savedAt"], NOW_MS, "an unchanged offer keeps its save time");
        let ctx = call(&db, "get_workspace_context", json!({})).structured.unwrap();
        assert_eq!(ctx["offer"]["product"], "Ledgerly");
        assert_eq!(ctx["journey"][0]["status"], "done");
        assert_eq!(ctx["journey"][1]["status"], "current");
    }

    #[test]
    fn bad_offers_are_refused_and_change_nothing() {
        let db = MemoryDb::new();
        for (args, needle) in [
            (
                json!({"product": "P", "description": "D", "value_proposition": "V", "website": "ledgerly.io"}),
                "website",
            ),
            (
                json!({"product": "P", "description": "D", "value_proposition": "V", "website": "https://"}),
                "website",
            ),
            (json!({"product": "  ", "description": "D", "value_proposition": "V"}), "blank"),
            (json!({"product": "P", "description": "D"}), "value_proposition"),
        ] {
            let out = call(&db, "save_offer", args);
            assert_eq!(out.outcome, Outcome::Refused);
            assert!(out.structured.is_none());
            assert!(out.text.contains(needle), "{}", out.text);
        }
        let ctx = call(&db, "get_workspace_context", json!({})).structured.unwrap();
        assert!(ctx.get("offer").is_none());
    }

    #[test]
    fn notes_with_a_topic_replace_and_the_workspace_has_a_limit() {
        let db = MemoryDb::new();
        let a = call(&db, "remember", json!({"note": "formal", "topic": "Tone"})).structured.unwrap();
        assert_eq!(
            (a["topic"].clone(), a["replaced"].clone(), a["total"].clone()),
            (json!("tone"), json!(false), json!(1))
        );
        let b = call(&db, "remember", json!({"note": "casual", "topic": "tone"})).structured.unwrap();
        assert_eq!(
            (b["replaced"].clone(), b["total"].clone(), b["id"].clone()),
            (json!(true), json!(1), a["id"].clone())
        );
        for i in 1..crate::workspace::memory::MAX_NOTES {
            let out = call(&db, "remember", json!({"note": format!("note {i}")}));
            assert_eq!(out.outcome, Outcome::Ok);
        }
        let full = call(&db, "remember", json!({"note": "one too many"}));
        assert_eq!(full.outcome, Outcome::Refused);
        assert!(full.text.contains("topic"));
        // Replacing by topic still works when full.
        assert_eq!(call(&db, "remember", json!({"note": "warm", "topic": "tone"})).outcome, Outcome::Ok);
        let ctx = call(&db, "get_workspace_context", json!({})).structured.unwrap();
        assert_eq!(ctx["memories"].as_array().unwrap().len(), 20);
        let blank = call(&db, "remember", json!({"note": "   "}));
        assert_eq!(blank.outcome, Outcome::Refused);
    }

    #[test]
    fn a_note_is_forgotten_by_its_id_alone() {
        let db = MemoryDb::new();
        let tone = call(&db, "remember", json!({"note": "formal", "topic": "tone"})).structured.unwrap();
        let other = call(&db, "remember", json!({"note": "Based in Lyon"})).structured.unwrap();
        let id = tone["id"].as_i64().unwrap();
        // With a note or a topic beside it, whether to save or delete is unclear: refused, kept.
        for args in [json!({"forget": id, "note": "x"}), json!({"forget": id, "topic": "tone"})] {
            let out = call(&db, "remember", args);
            assert_eq!(out.outcome, Outcome::Refused);
            assert!(out.text.contains("given alone"), "{}", out.text);
        }
        let gone = call(&db, "remember", json!({"forget": id}));
        assert_eq!(gone.outcome, Outcome::Ok);
        assert!(gone.text.contains("Forgot the note on **tone**"), "{}", gone.text);
        let view = gone.structured.unwrap();
        assert_eq!(
            (view["forgotten"].clone(), view["note"].clone(), view["topic"].clone(), view["total"].clone()),
            (json!(true), json!("formal"), json!("tone"), json!(1))
        );
        let ctx = call(&db, "get_workspace_context", json!({})).structured.unwrap();
        let notes: Vec<&Value> = ctx["memories"].as_array().unwrap().iter().map(|m| &m["id"]).collect();
        assert_eq!(notes, [&other["id"]]);
        // Gone once: a second try names where the ids are.
        let again = call(&db, "remember", json!({"forget": id}));
        assert_eq!(again.outcome, Outcome::Refused);
        assert!(again.text.contains("get_workspace_context"), "{}", again.text);
        // Neither a note nor `forget`: refused with both ways out.
        let neither = call(&db, "remember", json!({}));
        assert_eq!(neither.outcome, Outcome::Refused);
        assert!(neither.text.contains("forget"), "{}", neither.text);
    }

    #[test]
    fn a_workspace_opens_only_for_its_owner() {
        let db = MemoryDb::new();
        assert_eq!(call(&db, "get_workspace_context", json!({})).outcome, Outcome::Ok);
        let intruder = call_as(&db, "get_workspace_context", json!({}), "user_2", NOW_MS);
        assert_eq!(intruder.outcome, Outcome::Failed);
        assert!(
            !intruder.text.contains("user_2") && !intruder.text.contains("user_1"),
            "no detail on the wire"
        );
        assert!(intruder.detail.unwrap().contains("another subject"));
    }

    #[test]
    fn read_only_callers_cannot_act_even_if_forwarded() {
        let db = MemoryDb::new();
        let c = ToolCall {
            tool: "save_offer".into(),
            arguments: json!({"product": "P", "description": "D", "value_proposition": "V"}),
            principal: principal(ScopeSet::READ, false),
            request_id: "r".into(),
            structured_content: true,
        };
        let out = block_on(call_tool(&db, &test_config(), &crate::outbound::NoNetwork, c, NOW_MS));
        assert_eq!(out.outcome, Outcome::Refused);
        let ctx = call(&db, "get_workspace_context", json!({})).structured.unwrap();
        assert!(ctx.get("offer").is_none());
    }
}

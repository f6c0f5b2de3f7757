//! Campaigns (PRODUCT §7–§8): a draft built from the approved sequence, the imported leads and
//! the ready mailboxes; launched, stopped and resumed by approvals; followed by the
//! `sync_sending` job, which reads the platform's statistics and received emails, classifies
//! replies, suppresses unsubscribes and bounces at once (and mirrors the suppression list to the
//! platform's blocklist), and pauses a campaign itself when its bounce rate passes the threshold.
//!
//! The sequence reaches the platform as templates: sender-side variables are filled when the
//! campaign is staged, lead-side ones become per-lead variables VibeSell fills with its own
//! template rules (fallbacks included), and every step ends with the lead's compliance footer
//! (sender, postal address, the GDPR notice where it applies, the unsubscribe link), rendered by
//! `emails::render` exactly as `check_first_email` shows it.

use serde::{Deserialize, Serialize};

use super::leads::{self, Lead};
use super::sequence::Sequence;
use super::suppression::{self, Reason};
use crate::config::Config;
use crate::deliverability::percent;
use crate::emails::render::{self, Recipient, Sender};
use crate::emails::template::{self, Piece, Var};
use crate::plans::Limit;
use crate::sending::classify::{self, Class, Hints};
use crate::sending::platform::{
    CampaignReport, CampaignStatus, Day, LeadSpec, Outcome, PlatformError, SendingPlatform, StepSpec,
    StepTotals, Totals,
};
use crate::store::{Db, Stmt, StoreError, from_document, to_document};

/// A campaign's bounce rate is judged only once this many emails went out: a couple of bounces
/// among the very first sends say little.
pub const BOUNCE_MIN_SENT: u32 = 50;
/// Replies keep arriving after the last email; completed or paused campaigns are followed this
/// long after their last activity.
const FOLLOW_AFTER_MS: i64 = 14 * 86_400_000;
/// How long after a read of a campaign's leads that reached the end they are read again only
/// because the platform counts more bounces and unsubscribes than that read found.
const OUTCOMES_RECHECK_MS: i64 = 6 * 3_600_000;
/// Longest reply body kept.
const MAX_BODY: usize = 8_000;
/// Longest reply subject kept (what the prospect's mail program sends is not bounded).
const MAX_SUBJECT: usize = 300;

/// Where a campaign stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum State {
    /// Staged: nothing sent.
    Draft,
    /// Sending.
    Active,
    /// Paused by the user or by VibeSell (bounces).
    Paused,
    /// Every lead went through the sequence.
    Completed,
    /// Stopped by the platform (unhealthy or suspended mailboxes): written by builds before
    /// 2026-12-02, which now pause such a campaign instead (`PausedBy::Platform`); followed back
    /// to active when the platform sends again.
    Stopped,
}

impl State {
    /// The stored and wire value.
    pub fn as_str(self) -> &'static str {
        match self {
            State::Draft => "draft",
            State::Active => "active",
            State::Paused => "paused",
            State::Completed => "completed",
            State::Stopped => "stopped",
        }
    }
}

/// Who paused a campaign.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum PausedBy {
    /// The user (an approved `stop_campaign`).
    User,
    /// VibeSell, because too many emails bounced.
    Bounces,
    /// The sending platform, or someone in its own app.
    Platform,
    /// VibeSell, because the plan was lowered below the campaigns that were sending.
    Plan,
}

/// What a campaign sends, as staged.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Plan {
    /// The platform's campaign.
    pub spec: crate::sending::platform::CampaignSpec,
    /// The sequence version it was built from.
    pub sequence_version: i64,
}

/// The last statistics read from the platform.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Stats {
    /// Leads, contacted, sent, opened, replied, bounced, unsubscribed (by link).
    pub leads: u32,
    /// Leads who got at least one email.
    pub contacted: u32,
    /// Emails sent.
    pub sent: u32,
    /// Leads who opened.
    pub opened: u32,
    /// Leads who replied in person.
    pub replied: u32,
    /// Bounced emails.
    pub bounced: u32,
    /// Unsubscribed through the link.
    pub unsubscribed_link: u32,
    /// Per day.
    pub daily: Vec<(String, u32, u32)>,
    /// Per step.
    pub steps: Vec<(u32, u32, u32)>,
}

impl Stats {
    fn from_report(r: &CampaignReport) -> Stats {
        let t: &Totals = &r.totals;
        Stats {
            leads: t.leads,
            contacted: t.contacted,
            sent: t.sent,
            opened: t.opened,
            replied: t.replied,
            bounced: t.bounced,
            unsubscribed_link: t.unsubscribed,
            daily: r.daily.iter().map(|d: &Day| (d.date.clone(), d.sent, d.replies)).collect(),
            steps: r.steps.iter().map(|s: &StepTotals| (s.step, s.sent, s.replies)).collect(),
        }
    }
}

/// A campaign as the workspace keeps it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Campaign {
    /// `cmp_…`.
    pub id: String,
    /// Its name.
    pub name: String,
    /// Where it stands.
    pub state: State,
    /// The platform's id, once created there.
    pub platform_id: Option<String>,
    /// What it sends.
    pub plan: Plan,
    /// Leads in it.
    pub leads: i64,
    /// Created (ms).
    pub created_at: i64,
    /// First launched (platform time).
    pub launched_at: Option<i64>,
    /// Paused (platform time).
    pub paused_at: Option<i64>,
    /// Who paused it.
    pub paused_by: Option<PausedBy>,
    /// Why it was paused, for people.
    pub pause_reason: Option<String>,
    /// Last statistics.
    pub stats: Stats,
    /// When they were read (platform time).
    pub synced_at: Option<i64>,
    /// Replies are read from this time on.
    pub replies_since: i64,
    /// When the bounce rate first passed the alert threshold.
    pub bounce_alert_at: Option<i64>,
    /// Emails sent and bounced when it last resumed (0, 0 until then).
    pub bounce_base: (u32, u32),
    /// Where the platform's list of bounced and unsubscribed leads is read on from.
    pub outcomes_after: Option<String>,
    /// When a read of that list last reached its end (platform time).
    pub outcomes_read_at: Option<i64>,
    /// When it last changed state (platform time).
    pub state_at: i64,
    /// Last change (ms).
    pub updated_at: i64,
}

#[derive(Deserialize)]
struct Row {
    id: String,
    name: String,
    status: State,
    platform_id: Option<String>,
    doc: String,
    leads: i64,
    created_at: i64,
    launched_at: Option<i64>,
    paused_at: Option<i64>,
    paused_by: Option<PausedBy>,
    pause_reason: Option<String>,
    stats: Option<String>,
    synced_at: Option<i64>,
    replies_since: i64,
    bounce_alert_at: Option<i64>,
    base_sent: u32,
    base_bounced: u32,
    outcomes_after: Option<String>,
    outcomes_read_at: Option<i64>,
    state_at: i64,
    updated_at: i64,
}

fn decode(rows: Vec<Row>) -> Result<Vec<Campaign>, StoreError> {
    rows.into_iter()
        .map(|r| {
            Ok(Campaign {
                plan: from_document(&r.doc)?,
                stats: r.stats.as_deref().map(from_document).transpose()?.unwrap_or_default(),
                id: r.id,
                name: r.name,
                state: r.status,
                platform_id: r.platform_id,
                leads: r.leads,
                created_at: r.created_at,
                launched_at: r.launched_at,
                paused_at: r.paused_at,
                paused_by: r.paused_by,
                pause_reason: r.pause_reason,
                synced_at: r.synced_at,
                replies_since: r.replies_since,
                bounce_alert_at: r.bounce_alert_at,
                bounce_base: (r.base_sent, r.base_bounced),
                outcomes_after: r.outcomes_after,
                outcomes_read_at: r.outcomes_read_at,
                state_at: r.state_at,
                updated_at: r.updated_at,
            })
        })
        .collect()
}

/// Every campaign, newest first.
pub fn all(db: &dyn Db) -> Result<Vec<Campaign>, StoreError> {
    decode(db.rows(
        "SELECT id, name, status, platform_id, doc, leads, created_at, launched_at, paused_at, paused_by, \
         pause_reason, stats, synced_at, replies_since, bounce_alert_at, base_sent, base_bounced, outcomes_after, \
         outcomes_read_at, state_at, updated_at FROM campaigns ORDER BY created_at DESC, id",
        vec![],
    )?)
}

/// One campaign, or the newest one when `id` is `None`.
pub fn find(db: &dyn Db, id: Option<&str>) -> Result<Option<Campaign>, StoreError> {
    Ok(all(db)?.into_iter().find(|c| id.is_none_or(|id| c.id == id)))
}

/// The mailboxes that have sent cold email: the senders of every campaign that left draft. They
/// are past the slow ramp a mailbox goes through on its first campaign (DOMAIN §3.1: the
/// platform's ramp belongs to the sending account, +2 a day up to its cap), so a later campaign
/// sends from them at full volume.
pub fn seasoned(db: &dyn Db) -> Result<Vec<String>, StoreError> {
    Ok(all(db)?.into_iter().filter(|c| c.state != State::Draft).flat_map(|c| c.plan.spec.senders).collect())
}

/// The draft being prepared, if any.
pub fn draft(db: &dyn Db) -> Result<Option<Campaign>, StoreError> {
    Ok(all(db)?.into_iter().find(|c| c.state == State::Draft))
}

/// The statement that creates a campaign row (`at`: platform time).
pub fn create_stmt(id: &str, name: &str, plan: &Plan, at: i64, now_ms: i64) -> Result<Stmt, StoreError> {
    Ok(Stmt::new(
        "INSERT INTO campaigns (id, name, status, platform_id, doc, leads, created_at, replies_since, state_at, updated_at) \
         VALUES (?, ?, 'draft', NULL, ?, 0, ?, ?, ?, ?)",
        vec![
            id.into(),
            name.into(),
            to_document(plan)?.into(),
            now_ms.into(),
            at.into(),
            at.into(),
            now_ms.into(),
        ],
    ))
}

/// The statement that removes a draft the platform never took (its create was refused), so
/// that no campaign stays behind that exists nowhere else.
pub fn discard_stmt(id: &str) -> Stmt {
    Stmt::new(
        "DELETE FROM campaigns WHERE id = ? AND status = 'draft' AND platform_id IS NULL",
        vec![id.into()],
    )
}

/// The statement that records what was staged on the platform.
pub fn staged_stmt(id: &str, platform_id: &str, plan: &Plan, now_ms: i64) -> Result<Stmt, StoreError> {
    Ok(Stmt::new(
        "UPDATE campaigns SET platform_id = ?, doc = ?, leads = (SELECT COUNT(*) FROM campaign_leads WHERE campaign_id = ?), \
         updated_at = ? WHERE id = ?",
        vec![platform_id.into(), to_document(plan)?.into(), id.into(), now_ms.into(), id.into()],
    ))
}

/// The statement that frees the place of campaign `id` among the plan's active campaigns, if
/// it is still active: put before the statement that moves it out of `active`, in the same
/// batch, so that two runs that both saw it active (a sync and a tool call interleaved at their
/// platform calls) free its place once, not twice.
pub fn release_active_stmt(id: &str, now_ms: i64) -> Stmt {
    let mut release = super::limits::release(Limit::ActiveCampaigns, 1, now_ms);
    release.sql = "UPDATE usage SET amount = MAX(amount - ?, 0) WHERE period = ? AND metric = ? \
                   AND EXISTS (SELECT 1 FROM campaigns WHERE id = ? AND status = 'active')";
    release.params.push(id.into());
    release
}

/// The statement that takes a place among the plan's active campaigns for campaign `id`, unless
/// it is active already: put before the statement that makes it active, in the same batch, so
/// that two runs that both saw it not sending (a sync following the platform back to active and
/// a resume interleaved at their platform calls) count it once (audit finding: counted twice, one
/// campaign filled a one-campaign plan's place for good).
pub fn consume_active_stmt(id: &str, now_ms: i64) -> Stmt {
    let mut consume = super::limits::consume(Limit::ActiveCampaigns, 1, now_ms);
    consume.sql = "INSERT INTO usage (period, metric, amount) SELECT ?, ?, ? \
                   WHERE NOT EXISTS (SELECT 1 FROM campaigns WHERE id = ? AND status = 'active') \
                   ON CONFLICT(period, metric) DO UPDATE SET amount = amount + excluded.amount";
    consume.params.push(id.into());
    consume
}

/// The update of [`state_stmt`], without its end.
macro_rules! set_state {
    () => {
        "UPDATE campaigns SET status = ?, \
         launched_at = CASE WHEN ? = 'active' THEN COALESCE(launched_at, ?) ELSE launched_at END, \
         paused_at = CASE WHEN ? = 'paused' THEN ? ELSE NULL END, paused_by = ?, pause_reason = ?, state_at = ?, \
         updated_at = ? WHERE id = ?"
    };
}

/// [`state_stmt`] only while the campaign is still sending: a stop the user approved does not
/// overwrite what a sync found while the platform was being asked (completed, paused for its
/// bounces), which would let an ended campaign be resumed.
pub fn state_while_active_stmt(
    id: &str,
    state: State,
    paused: Option<(PausedBy, &str)>,
    at: i64,
    now_ms: i64,
) -> Stmt {
    let mut stmt = state_stmt(id, state, paused, at, now_ms);
    stmt.sql = concat!(set_state!(), " AND status = 'active'");
    stmt
}

/// The statement that moves a campaign to `state` (and records when and why it was paused).
pub fn state_stmt(id: &str, state: State, paused: Option<(PausedBy, &str)>, at: i64, now_ms: i64) -> Stmt {
    Stmt::new(
        set_state!(),
        vec![
            state.as_str().into(),
            state.as_str().into(),
            at.into(),
            state.as_str().into(),
            at.into(),
            paused
                .map(|(by, _)| match by {
                    PausedBy::User => "user",
                    PausedBy::Bounces => "bounces",
                    PausedBy::Platform => "platform",
                    PausedBy::Plan => "plan",
                })
                .into(),
            paused.map(|(_, why)| why.to_owned()).into(),
            at.into(),
            now_ms.into(),
            id.into(),
        ],
    )
}

// ---- leads of a campaign ----------------------------------------------------------------------

/// Imported leads in no campaign yet and not suppressed, in import order.
pub fn unassigned_leads(db: &dyn Db) -> Result<Vec<(Lead, String)>, StoreError> {
    #[derive(Deserialize)]
    struct Row {
        #[serde(flatten)]
        lead: Lead,
        email_status: Option<String>,
    }
    let rows: Vec<Row> = db.rows(
        concat!(
            "SELECT ",
            leads::lead_columns!(),
            ", email_status FROM leads l WHERE NOT EXISTS (SELECT 1 FROM campaign_leads c WHERE c.lead_id = l.id) \
             ORDER BY id"
        ),
        vec![],
    )?;
    let emails: Vec<String> = rows.iter().map(|r| r.lead.email.clone()).collect();
    let suppressed = suppression::suppressed_among(db, &emails)?;
    Ok(rows
        .into_iter()
        .filter(|r| !suppressed.contains(&r.lead.email.to_ascii_lowercase()))
        .map(|r| (r.lead, r.email_status.unwrap_or_default()))
        .collect())
}

/// How many imported leads the next campaign can send to: those in no campaign yet or in the
/// draft, not those a campaign has already taken out of draft (suppressed ones included: the count
/// is an estimate's, and staging leaves them out).
pub fn leads_for_next(db: &dyn Db) -> Result<i64, StoreError> {
    Ok(db
        .query(Stmt::new(
            "SELECT COUNT(*) FROM leads l WHERE NOT EXISTS (SELECT 1 FROM campaign_leads m JOIN campaigns c \
             ON c.id = m.campaign_id WHERE m.lead_id = l.id AND c.status != 'draft')",
            vec![],
        ))?
        .scalar_i64()
        .unwrap_or(0))
}

/// The statement that puts a lead in a campaign (pushed to the platform).
pub fn member_stmt(campaign: &str, lead: &Lead, now_ms: i64) -> Stmt {
    Stmt::new(
        "INSERT OR IGNORE INTO campaign_leads (campaign_id, lead_id, email, outcome, added_at) VALUES (?, ?, ?, NULL, ?)",
        vec![campaign.into(), lead.id.into(), lead.email.to_ascii_lowercase().into(), now_ms.into()],
    )
}

/// Leads of a campaign still to be emailed (not bounced, unsubscribed or suppressed), all of them
/// or those in `country`.
pub fn remaining_leads(db: &dyn Db, campaign: &str, country: Option<&str>) -> Result<i64, StoreError> {
    Ok(db
        .query(Stmt::new(
            "SELECT COUNT(*) FROM campaign_leads c WHERE campaign_id = ? AND outcome IS NULL \
             AND NOT EXISTS (SELECT 1 FROM suppression s WHERE s.value = c.email \
                             OR (s.kind = 'domain' AND s.value = substr(c.email, instr(c.email, '@') + 1))) \
             AND (? IS NULL OR EXISTS (SELECT 1 FROM leads l WHERE l.id = c.lead_id AND l.country = ?))",
            vec![campaign.into(), country.into(), country.into()],
        ))?
        .scalar_i64()
        .unwrap_or(0))
}

/// Countries whose law expects a recipient's prior consent even for business email: Germany
/// (UWG §7; DOMAIN §6.2). DOMAIN §6.3.4 asks to block such recipients or have the user attest
/// that they may write to them. Launching is that attestation: the approval names how many
/// leads are there, and the user who approves it says they have the consent (its record keeps
/// who and when).
pub const CONSENT_COUNTRIES: &[&str] = &["Germany"];

// ---- the sequence as platform templates -------------------------------------------------------

/// The per-lead variable that carries the footer's unsubscribe line (`render::unsubscribe_line`).
pub const FOOTER_VAR: &str = "vsFooter";
/// The per-lead variable that carries the footer's GDPR notice (`render::notice_line`), empty for
/// a recipient it does not apply to. A line of its own in the steps: a line break inside one
/// variable would not survive Instantly's HTML steps (`instantly::to_html`).
pub const NOTICE_VAR: &str = "vsNotice";

/// The sequence translated for the platform.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Templates {
    /// The steps, sender variables filled, lead variables as `{{vs…}}`.
    pub steps: Vec<StepSpec>,
    /// The per-lead variables: name, variable, fallback.
    pub lead_vars: Vec<(String, Var, Option<String>)>,
}

fn translate(
    text: &str,
    sender: &Sender<'_>,
    lead_vars: &mut Vec<(String, Var, Option<String>)>,
) -> Result<String, String> {
    let mut out = String::new();
    for piece in template::parse(text)
        .map_err(|e| format!("{}. Fix it with save_sequence.", e.trim_end_matches('.')))?
    {
        match piece {
            Piece::Text(t) => out.push_str(&t),
            Piece::Var(v, fallback) if v.is_lead() => {
                let existing =
                    lead_vars.iter().find(|(_, var, fb)| *var == v && *fb == fallback).map(|x| x.0.clone());
                let name = existing.unwrap_or_else(|| {
                    let name = format!("vs{}{}", v.name().replace('_', ""), lead_vars.len());
                    lead_vars.push((name.clone(), v, fallback.clone()));
                    name
                });
                out.push_str(&format!("{{{{{name}}}}}"));
            }
            Piece::Var(v, fallback) => {
                // A sender value removed after the sequence was approved (the playbook or the
                // offer saved again without it) would go out as a gap in every email (audit
                // finding): staging refuses instead, naming the value.
                let Some(value) = sender.value(v).filter(|s| !s.trim().is_empty()).or(fallback) else {
                    return Err(format!(
                        "it uses {{{{{}}}}}, which has no saved value any more (sender name and title come from \
                         save_playbook, company and website from save_offer); save it again, or remove it from the \
                         sequence.",
                        v.name()
                    ));
                };
                out.push_str(&value);
            }
        }
    }
    Ok(out)
}

/// The approved sequence as platform steps: variants are not sent (the main version is what the
/// user approved and checked), delays are the wait before the next step.
pub fn templates(seq: &Sequence, sender: &Sender<'_>) -> Result<Templates, String> {
    let mut lead_vars = Vec::new();
    let mut steps = Vec::new();
    for (i, s) in seq.steps.iter().enumerate() {
        let subject = translate(&s.subject, sender, &mut lead_vars)?;
        let body = translate(&s.body, sender, &mut lead_vars)?;
        let delay_days = seq.steps.get(i + 1).map_or(0, |n| n.wait_days);
        steps.push(StepSpec {
            subject,
            // The footer as `render::render` writes it: the sender's line here, so that staging
            // again after the sender's details change updates every email; the recipient's two
            // lines in the lead's own variables.
            body: format!(
                "{}\n\n--\n{}\n{{{{{FOOTER_VAR}}}}}\n{{{{{NOTICE_VAR}}}}}",
                body.trim_end(),
                render::sender_line(sender)
            ),
            delay_days,
        });
    }
    Ok(Templates { steps, lead_vars })
}

/// The recipient of an imported lead.
pub fn recipient(lead: &Lead) -> Recipient {
    Recipient {
        first_name: lead.first_name.clone(),
        last_name: lead.last_name.clone(),
        title: lead.title.clone(),
        company: lead.company.clone(),
        company_domain: lead.company_domain.clone(),
        industry: lead.industry.clone(),
        city: lead.city.clone(),
        country: lead.country.clone(),
        email: lead.email.clone(),
    }
}

/// A lead for the platform: its names, and the values of the per-lead variables, footer
/// included.
pub fn lead_spec(lead: &Lead, t: &Templates, unsubscribe_url: &str, source: &str) -> LeadSpec {
    let to = recipient(lead);
    let mut variables: Vec<(String, String)> = t
        .lead_vars
        .iter()
        .map(|(name, v, fallback)| {
            let value =
                render::lead_value(&to, *v).filter(|s| !s.trim().is_empty()).or_else(|| fallback.clone());
            (name.clone(), value.unwrap_or_default())
        })
        .collect();
    variables.push((FOOTER_VAR.to_owned(), render::unsubscribe_line(unsubscribe_url)));
    variables.push((NOTICE_VAR.to_owned(), render::notice_line(&to, source)));
    LeadSpec {
        email: lead.email.clone(),
        first_name: lead.first_name.clone(),
        last_name: lead.last_name.clone(),
        company_name: lead.company.clone(),
        job_title: lead.title.clone(),
        variables,
    }
}

// ---- replies -----------------------------------------------------------------------------------

/// A reply as stored.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct Reply {
    /// The platform's id.
    pub id: String,
    /// Its campaign.
    pub campaign_id: String,
    /// The lead it is about.
    pub lead: String,
    /// Who sent it.
    pub from_address: String,
    /// The mailbox that received it.
    pub mailbox: String,
    /// Subject.
    pub subject: String,
    /// Body, as written by its sender (untrusted).
    pub body: String,
    /// Its class (`classify::Class` as text).
    pub class: String,
    /// The step it answers.
    pub step: Option<i64>,
    /// When it arrived (platform time).
    pub received_at: i64,
    /// When the user was first shown it.
    pub read_at: Option<i64>,
}

/// A page of replies, newest first, after `cursor` (`received_at.id` of the last one shown).
pub fn replies(
    db: &dyn Db,
    campaign: Option<&str>,
    class: Option<Class>,
    cursor: Option<(i64, &str)>,
    limit: i64,
) -> Result<Vec<Reply>, StoreError> {
    let (at, id) = cursor.unwrap_or((i64::MAX, ""));
    db.rows(
        "SELECT id, campaign_id, lead, from_address, mailbox, subject, body, class, step, received_at, read_at FROM replies \
         WHERE (? IS NULL OR campaign_id = ?) AND (? IS NULL OR class = ?) \
         AND (received_at < ? OR (received_at = ? AND id > ?)) ORDER BY received_at DESC, id LIMIT ?",
        vec![
            campaign.into(),
            campaign.into(),
            class.map(Class::as_str).into(),
            class.map(Class::as_str).into(),
            at.into(),
            at.into(),
            id.into(),
            limit.into(),
        ],
    )
}

/// How many replies match, and how many of them were never shown.
pub fn count_replies(
    db: &dyn Db,
    campaign: Option<&str>,
    class: Option<Class>,
) -> Result<(i64, i64), StoreError> {
    #[derive(Deserialize)]
    struct C {
        total: i64,
        unread: i64,
    }
    let c: Option<C> = db.row(
        "SELECT COUNT(*) AS total, COALESCE(SUM(read_at IS NULL), 0) AS unread FROM replies \
         WHERE (? IS NULL OR campaign_id = ?) AND (? IS NULL OR class = ?)",
        vec![
            campaign.into(),
            campaign.into(),
            class.map(Class::as_str).into(),
            class.map(Class::as_str).into(),
        ],
    )?;
    Ok(c.map_or((0, 0), |c| (c.total, c.unread)))
}

/// Replies per class for a campaign.
pub fn classes(db: &dyn Db, campaign: &str) -> Result<Vec<(String, i64)>, StoreError> {
    #[derive(Deserialize)]
    struct C {
        class: String,
        n: i64,
    }
    let rows: Vec<C> = db.rows(
        "SELECT class, COUNT(DISTINCT lead) AS n FROM replies WHERE campaign_id = ? GROUP BY class ORDER BY class",
        vec![campaign.into()],
    )?;
    Ok(rows.into_iter().map(|c| (c.class, c.n)).collect())
}

/// Leads of a campaign that unsubscribed (by link or by reply).
pub fn unsubscribed(db: &dyn Db, campaign: &str) -> Result<i64, StoreError> {
    Ok(db
        .query(Stmt::new(
            "SELECT COUNT(*) FROM campaign_leads WHERE campaign_id = ? AND outcome = 'unsubscribed'",
            vec![campaign.into()],
        ))?
        .scalar_i64()
        .unwrap_or(0))
}

/// Records an unsubscribe from a link: every lead whose address has this hash goes to the
/// suppression list at once, is marked in its campaigns, and the next sync mirrors it to the
/// platform's blocklist (scheduled now). Returns how many addresses matched.
pub fn unsubscribe_by_hash(db: &dyn Db, hash: &str, now_ms: i64) -> Result<usize, StoreError> {
    #[derive(Deserialize)]
    struct E {
        email: String,
    }
    let emails: Vec<E> = db.rows("SELECT email FROM leads WHERE email_hash = ?", vec![hash.into()])?;
    if emails.is_empty() {
        return Ok(0);
    }
    let mut stmts = Vec::new();
    for e in &emails {
        stmts.extend(suppression::add_stmt(&e.email, Reason::Unsubscribe, "unsubscribe link", now_ms));
        stmts.push(Stmt::new(
            "UPDATE campaign_leads SET outcome = COALESCE(outcome, 'unsubscribed') WHERE email = ?",
            vec![e.email.to_ascii_lowercase().into()],
        ));
    }
    stmts.push(super::sending::schedule_sync(now_ms));
    db.batch(stmts)?;
    Ok(emails.len())
}

// ---- following the platform ---------------------------------------------------------------------

/// The bounce rate in basis points.
pub fn bounce_bp(stats: &Stats) -> u32 {
    rate_bp(stats.sent, stats.bounced)
}

fn rate_bp(sent: u32, bounced: u32) -> u32 {
    if sent == 0 { 0 } else { u32::try_from(u64::from(bounced) * 10_000 / u64::from(sent)).unwrap_or(10_000) }
}

/// The bounce rate the threshold judges, once `BOUNCE_MIN_SENT` emails count: that of the
/// emails sent since the campaign last resumed. Judging the whole campaign would pause a
/// campaign resumed after a bounce pause again at its first sync, since its past bounces alone
/// are past the limit (audit finding).
pub fn judged_bounce_bp(c: &Campaign, stats: &Stats) -> Option<u32> {
    let (sent, bounced) = since_resume(c, stats);
    (sent >= BOUNCE_MIN_SENT).then(|| rate_bp(sent, bounced))
}

/// Emails sent and bounced since the campaign last resumed (since launch, before any resume).
fn since_resume(c: &Campaign, stats: &Stats) -> (u32, u32) {
    (stats.sent.saturating_sub(c.bounce_base.0), stats.bounced.saturating_sub(c.bounce_base.1))
}

/// Takes the platform's totals as the new baseline of the bounce threshold, on resuming.
pub fn bounce_base_stmt(id: &str, sent: u32, bounced: u32) -> Stmt {
    Stmt::new(
        "UPDATE campaigns SET base_sent = ?, base_bounced = ? WHERE id = ?",
        vec![sent.into(), bounced.into(), id.into()],
    )
}

/// Mirrors the suppression list to the platform's blocklist (new entries only).
async fn mirror_blocklist<P: SendingPlatform>(
    db: &dyn Db,
    platform: &P,
    now_ms: i64,
) -> Result<(), PlatformError> {
    #[derive(Deserialize)]
    struct V {
        value: String,
    }
    let pending: Vec<V> = db.rows(
        "SELECT value FROM suppression s WHERE NOT EXISTS (SELECT 1 FROM blocklist_mirror m WHERE m.value = s.value) \
         ORDER BY created_at LIMIT 200",
        vec![],
    )?;
    for v in pending {
        match platform.block(&v.value).await {
            Ok(()) => {}
            // One value the platform will not take (an address it finds malformed, say) holds
            // back none after it: asked again at the next sync, the others go now (audit
            // finding: it stopped the mirror, and the sync, for good). The address stays on the
            // suppression list, which staging and imports keep to.
            Err(PlatformError::Refused(_)) => continue,
            Err(e) => return Err(e),
        }
        db.batch(vec![Stmt::new(
            "INSERT OR IGNORE INTO blocklist_mirror (value, at) VALUES (?, ?)",
            vec![v.value.into(), now_ms.into()],
        )])?;
    }
    Ok(())
}

/// Follows every campaign on the platform: replies (classified; unsubscribes and bounces
/// suppressed at once), bounces and unsubscribes, statistics, the bounce threshold, completion.
/// `full`: read the per-day and per-step statistics too (the last pass of a sync; the passes
/// between simulated hours need only the totals). Returns what the campaigns still need of the
/// sync.
pub async fn sync_campaigns<P: SendingPlatform>(
    db: &dyn Db,
    config: &Config,
    platform: &P,
    full: bool,
) -> Result<Follow, PlatformError> {
    let campaigns = all(db)?;
    if campaigns.is_empty() {
        return Ok(Follow::Nothing);
    }
    let at = platform.observed_ms();
    let mut follow = Follow::Nothing;
    // One campaign the platform fails on (deleted there, say) must not hold back the others,
    // nor the blocklist: opt-outs reach the platform within the run (DOMAIN §6.3). Its error is
    // answered once the rest is done.
    let mut failed = None;
    for c in campaigns {
        let Some(pid) = c.platform_id.clone() else { continue };
        let followed = match c.state {
            State::Active => true,
            State::Paused | State::Completed | State::Stopped => at - c.state_at < FOLLOW_AFTER_MS,
            // A launch given up with its outcome unknown may have started it at the platform:
            // looked at whenever the sync runs, until it is seen sending (then followed as
            // launched below) or launched again.
            State::Draft => super::approvals::given_up_on(db, "launch_campaign", &c.id)?,
        };
        if !followed {
            continue;
        }
        if let Err(e) = sync_one(db, config, platform, &c, &pid, at, full).await {
            failed.get_or_insert(e);
        }
        // A draft still a draft does not keep the sync running on its own.
        let now = find(db, Some(&c.id))?.map(|c| c.state);
        follow = follow.max(match now {
            Some(State::Active) => Follow::Sending,
            Some(State::Draft) => Follow::Nothing,
            _ => Follow::Replies,
        });
    }
    mirror_blocklist(db, platform, at).await?;
    failed.map_or(Ok(follow), Err)
}

/// Why `c`, sending, pauses for the plan, if it does: a plan lowered below the campaigns sending
/// (a subscription that ended, a lower plan chosen in the billing portal) must not keep sending
/// what it no longer pays for. The newest pause first; resuming asks for the limit again.
fn over_plan(db: &dyn Db, config: &Config, c: &Campaign) -> Result<Option<String>, StoreError> {
    let plan = super::billing::current(db, config)?.plan;
    let cap = plan.limits.get(Limit::ActiveCampaigns);
    let active = all(db)?.into_iter().filter(|o| o.state == State::Active);
    // Counted rather than sorted: a handful of campaigns, and no sort's code in the module.
    let (mut all_active, mut older) = (0, 0);
    for o in active {
        all_active += 1;
        older += i64::from(o.launched_at < c.launched_at);
    }
    Ok((older >= cap && all_active > cap).then(|| {
        format!(
            "Paused by VibeSell: the {} plan allows {}; resume it after an upgrade.",
            plan.name,
            Limit::ActiveCampaigns.describe(cap)
        )
    }))
}

/// What the campaigns need of the sync, least first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Follow {
    /// No campaign is followed.
    Nothing,
    /// None is sending, but one that paused or ended lately still gets replies, opt-outs and
    /// bounces, for `FOLLOW_AFTER_MS` (the sync must keep running, at its slower pace).
    Replies,
    /// One is sending (the sync runs more often).
    Sending,
}

async fn sync_one<P: SendingPlatform>(
    db: &dyn Db,
    config: &Config,
    platform: &P,
    c: &Campaign,
    pid: &str,
    at: i64,
    full: bool,
) -> Result<(), PlatformError> {
    // Replies first: an unsubscribe is suppressed the moment it is seen.
    let page = platform.received(pid, c.replies_since).await?;
    let mut since = c.replies_since;
    let mut stmts = Vec::new();
    for r in &page.items {
        let class = classify::classify(
            &r.subject,
            &r.text,
            Hints { auto_reply: r.auto_reply, bounce: r.bounce, interest: r.interest },
        );
        let body: String = r.text.chars().take(MAX_BODY).collect();
        stmts.push(Stmt::new(
            "INSERT OR IGNORE INTO replies (id, campaign_id, lead, from_address, mailbox, subject, body, class, step, received_at, fetched_at) \
             VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            vec![
                r.id.clone().into(),
                c.id.clone().into(),
                r.lead.to_ascii_lowercase().into(),
                r.from.clone().into(),
                r.mailbox.clone().into(),
                r.subject.chars().take(MAX_SUBJECT).collect::<String>().into(),
                body.into(),
                class.as_str().into(),
                r.step.map(i64::from).into(),
                r.at.into(),
                at.into(),
            ],
        ));
        if class.suppresses() {
            let (reason, outcome) = if class == Class::Bounce {
                (Reason::Bounce, "bounced")
            } else {
                (Reason::Unsubscribe, "unsubscribed")
            };
            stmts.extend(suppression::add_stmt(&r.lead, reason, "reply", at));
            stmts.push(outcome_stmt(&c.id, &r.lead, outcome));
        }
        since = since.max(r.at);
    }
    // Written before anything else is asked of the platform, so that a call failing below does
    // not leave a reply opt-out unsuppressed until some later sync gets through (review finding).
    if !stmts.is_empty() {
        stmts.push(Stmt::new(
            "UPDATE campaigns SET replies_since = ? WHERE id = ?",
            vec![since.into(), c.id.clone().into()],
        ));
        db.batch(std::mem::take(&mut stmts))?;
    }
    // What the platform knows about bounces and link unsubscribes.
    let report = if full {
        platform.report(pid).await?
    } else {
        let (status, totals) = platform.totals(pid).await?;
        CampaignReport { status, totals, daily: Vec::new(), steps: Vec::new() }
    };
    let known_outcomes = db
        .query(Stmt::new(
            "SELECT COUNT(*) FROM campaign_leads WHERE campaign_id = ? AND outcome IS NOT NULL",
            vec![c.id.clone().into()],
        ))?
        .scalar_i64()
        .unwrap_or(0);
    // A read that stopped part-way (more pages than one sync reads) goes on until it has seen
    // every lead: the totals alone may not call for it again (audit finding: reply opt-outs,
    // which the platform does not count, made up for a bounce past the first pages). Outcomes
    // the platform counts but its list does not show (leads deleted there, statuses not written
    // yet) are looked for again only a while after the last read that reached the end, rather
    // than by reading every lead at every sync.
    let missing = i64::from(report.totals.bounced + report.totals.unsubscribed) > known_outcomes
        && c.outcomes_read_at.is_none_or(|read| at - read >= OUTCOMES_RECHECK_MS);
    if c.outcomes_after.is_some()
        || missing
        || report.totals.bounced != c.stats.bounced
        || report.totals.unsubscribed != c.stats.unsubscribed_link
    {
        let page = match platform.outcomes(pid, c.outcomes_after.as_deref()).await {
            // A cursor the platform no longer knows (its lead deleted there): read from the start
            // again, which only finds the same outcomes again (audit finding: kept, it failed
            // every sync of the campaign from then on).
            Err(PlatformError::Refused(_)) if c.outcomes_after.is_some() => {
                platform.outcomes(pid, None).await?
            }
            read => read?,
        };
        let read_to_end = page.next.is_none().then_some(at);
        stmts.push(Stmt::new(
            "UPDATE campaigns SET outcomes_after = ?, outcomes_read_at = COALESCE(?, outcomes_read_at) WHERE id = ?",
            vec![page.next.into(), read_to_end.into(), c.id.clone().into()],
        ));
        for (email, outcome) in page.items {
            let (reason, name, source) = match outcome {
                Outcome::Bounced => (Reason::Bounce, "bounced", "bounce"),
                Outcome::Unsubscribed => (Reason::Unsubscribe, "unsubscribed", "unsubscribe link"),
            };
            stmts.extend(suppression::add_stmt(&email, reason, source, at));
            stmts.push(outcome_stmt(&c.id, &email, name));
        }
    }
    let mut stats = Stats::from_report(&report);
    if !full {
        stats.daily = c.stats.daily.clone();
        stats.steps = c.stats.steps.clone();
    }
    let mut state = c.state;
    let mut pause: Option<(PausedBy, String)> = None;
    match report.status {
        CampaignStatus::Completed if c.state == State::Active => state = State::Completed,
        // Started by a launch whose answer was lost and which the watchdog gave up on (only such
        // a draft is synced): it sends, so it is recorded as launched, its replies, opt-outs and
        // bounces followed and its place among the plan's active campaigns taken (audit finding:
        // it stayed a draft here while the platform sent it).
        CampaignStatus::Active if c.state == State::Draft => state = State::Active,
        // Held by the platform (its bounce protection, unhealthy or suspended mailboxes) until the
        // mailboxes are fixed: paused here, so that it can be resumed, and followed back when the
        // platform sends again (audit finding: taken for stopped for good, it could be neither
        // stopped nor resumed, and went unguarded once the platform lifted the hold).
        CampaignStatus::Stopped if c.state == State::Active => {
            state = State::Paused;
            pause = Some((
                PausedBy::Platform,
                "Held by the sending platform (its bounce protection, or unhealthy or suspended mailboxes): nothing \
                 is sent. get_sending_setup shows the mailboxes; once they are fixed the platform sends again on its \
                 own, or resume_campaign."
                    .to_owned(),
            ));
        }
        // Sending again at the platform after it paused or held the campaign itself: followed, so
        // that it is shown as sending, takes its place among the plan's active campaigns and is
        // guarded for bounces again. A pause of VibeSell's own stays VibeSell's to lift.
        CampaignStatus::Active
            if c.state == State::Stopped
                || (c.state == State::Paused && c.paused_by == Some(PausedBy::Platform)) =>
        {
            state = State::Active;
        }
        // Paused at the platform (in its own app, say): not sending, so not shown as sending nor
        // holding a place among the plan's active campaigns (audit finding).
        CampaignStatus::Paused if c.state == State::Active => {
            state = State::Paused;
            pause = Some((
                PausedBy::Platform,
                "Paused at the sending platform, not by VibeSell: nothing is sent until it is resumed \
                 (resume_campaign)."
                    .to_owned(),
            ));
        }
        _ => {}
    }
    // The bounce threshold (PRODUCT §8, DOMAIN §3.8): alert, then pause the campaign itself.
    let d = &config.deliverability;
    let judged = judged_bounce_bp(c, &stats);
    let bounced = judged.filter(|r| state == State::Active && *r >= d.bounce_pause_bp);
    let ours = match bounced {
        Some(rate) => {
            let (sent, bounced) = since_resume(c, &stats);
            Some((
                PausedBy::Bounces,
                format!(
                    "Paused by VibeSell: {} of {} emails{} bounced ({}), past the {} limit. Bounces hurt the sending \
                     domains' reputation: check the lead list before resuming.",
                    bounced,
                    sent,
                    if c.bounce_base.0 > 0 { " since it resumed" } else { "" },
                    percent(rate),
                    percent(d.bounce_pause_bp)
                ),
            ))
        }
        // The plan's limit (a lowered plan), checked where the bounces are.
        None if state == State::Active => over_plan(db, config, c)?.map(|why| (PausedBy::Plan, why)),
        None => None,
    };
    if let Some(why) = ours {
        platform.pause(pid).await?;
        state = State::Paused;
        pause = Some(why);
    }
    let alert = judged.is_some_and(|r| r >= d.bounce_alert_bp && c.bounce_alert_at.is_none()).then_some(at);
    stmts.push(Stmt::new(
        "UPDATE campaigns SET stats = ?, synced_at = ?, replies_since = ?, bounce_alert_at = COALESCE(bounce_alert_at, ?) WHERE id = ?",
        vec![to_document(&stats)?.into(), at.into(), since.into(), alert.into(), c.id.clone().into()],
    ));
    if state != c.state {
        if c.state == State::Active {
            // No longer sending: it frees its place among the plan's active campaigns.
            stmts.push(release_active_stmt(&c.id, at));
        } else if state == State::Active {
            stmts.push(consume_active_stmt(&c.id, at));
        }
        stmts.push(state_stmt(&c.id, state, pause.as_ref().map(|(by, why)| (*by, why.as_str())), at, at));
    }
    db.batch(stmts)?;
    Ok(())
}

fn outcome_stmt(campaign: &str, email: &str, outcome: &str) -> Stmt {
    Stmt::new(
        "UPDATE campaign_leads SET outcome = COALESCE(outcome, ?) WHERE campaign_id = ? AND email = ?",
        vec![outcome.into(), campaign.into(), email.to_ascii_lowercase().into()],
    )
}

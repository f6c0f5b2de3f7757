//! `estimate_campaign_plan`: how long the campaign takes and what it should bring back, from the
//! leads, the sequence and the sending capacity (PRODUCT §7, §8; DOMAIN §3.9, §3.10).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::registry::{Access, Hints, Refusal, Reply, Tool, ToolCx};
use crate::deliverability::percent;
use crate::estimate::{self, Input, Ramp, Range};
use crate::plans::{group_thousands, plural};
use crate::workspace::{leads, sequence};

/// `estimate_campaign_plan`.
pub struct EstimateCampaignPlan;

/// What to estimate for; everything is optional.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EstimateInput {
    /// Leads to contact. Default: the leads imported into the workspace.
    #[schemars(range(min = 1, max = 1_000_000))]
    pub lead_count: Option<u64>,
    /// Sending mailboxes. Default: the sized capacity, or one domain's worth (3) when sizing is not
    /// done yet.
    #[schemars(range(min = 1, max = 500))]
    pub mailboxes: Option<u32>,
    /// Cold emails per mailbox per day (default: the sized figure, else 30; 20–50 is safe).
    #[schemars(range(min = 1, max = 100))]
    pub sends_per_mailbox_per_day: Option<u32>,
}

/// Where a figure of the estimate came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Basis {
    /// Given in the call.
    Argument,
    /// The workspace's state (the imported leads, the sized sending capacity).
    Workspace,
    /// The deliverability defaults, because sizing is not done yet.
    Defaults,
}

/// Rates as fractions (0.03 = 3%).
#[derive(Debug, Clone, Copy, Serialize, JsonSchema)]
pub struct Rates {
    /// Pessimistic.
    pub low: f64,
    /// Central.
    pub mid: f64,
    /// Optimistic.
    pub high: f64,
}

/// Emails in one week.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Week {
    /// `W1`, `W2`, …
    pub label: String,
    /// Emails sent that week.
    pub emails: u64,
}

/// The estimate.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(tag = "kind", rename = "campaign_estimate", rename_all = "camelCase")]
pub struct CampaignEstimateView {
    /// Leads contacted.
    pub leads: u64,
    /// Where that number came from.
    pub leads_basis: Basis,
    /// Steps per lead.
    pub steps: u32,
    /// Days before each follow-up.
    pub delays: Vec<u32>,
    /// The usual days between steps (the first follow-up's wait).
    pub step_delay_days: u32,
    /// Sending mailboxes.
    pub mailboxes: u32,
    /// Cold emails per mailbox per day.
    pub sends_per_mailbox_per_day: u32,
    /// Where the capacity came from.
    pub capacity_basis: Basis,
    /// Emails a day at full capacity.
    pub emails_per_day: u64,
    /// New leads a day once every step is in flight.
    pub new_leads_per_day: u64,
    /// Emails in all.
    pub emails_total: u64,
    /// Days with sending (Monday to Friday).
    pub business_days: u64,
    /// Calendar days from the first to the last email.
    pub calendar_days: u64,
    /// First sending day (`YYYY-MM-DD`).
    pub start_date: String,
    /// The day every lead has had the first email; absent when that is more than five years away.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub all_contacted_date: Option<String>,
    /// Last sending day.
    pub end_date: String,
    /// Whether the simulation stopped at five years (the capacity is far too small).
    pub beyond_horizon: bool,
    /// The reply rates assumed.
    pub reply_rate: Rates,
    /// Expected replies.
    pub replies: Range,
    /// Expected positive replies (interested, asking for a call).
    pub positive_replies: Range,
    /// Expected meetings.
    pub meetings: Range,
    /// Emails per week (up to a year).
    pub weekly: Vec<Week>,
    /// What the estimate assumes, for the user.
    pub assumptions: Vec<String>,
}

impl Tool for EstimateCampaignPlan {
    type Input = EstimateInput;
    type Output = CampaignEstimateView;
    const NAME: &'static str = "estimate_campaign_plan";
    const TITLE: &'static str = "Estimate the campaign";
    const DESCRIPTION: &'static str = "Estimates the campaign from the leads, the saved sequence and the sending \
        capacity: emails per day, new leads per day, the days needed (weekdays only, follow-ups first), start and \
        end dates, emails per week, and the expected range of replies, positive replies and meetings, with every \
        assumption stated. Leads default to the imported ones not yet in a launched campaign and capacity to the \
        sized one (or the defaults when sizing is not done); pass lead_count or mailboxes to try other figures. \
        Needs the sequence.";
    const ACCESS: Access = Access::Read;
    const HINTS: Hints = Hints { idempotent: true, open_world: false };

    async fn call(
        &self,
        cx: &ToolCx<'_>,
        input: EstimateInput,
    ) -> Result<Reply<CampaignEstimateView>, Refusal> {
        let d = cx.config.deliverability;
        let seq = sequence::load(cx.db)?.ok_or_else(|| {
            Refusal::guidance(
                "No email sequence yet: the estimate needs the number of steps and the days between them. Write the \
                 emails with save_sequence first.",
            )
        })?;
        let (leads, leads_basis) = match input.lead_count {
            Some(n) => (n, Basis::Argument),
            // The leads the next campaign would take: a later campaign is estimated for its own
            // leads, not for those the earlier ones sent to.
            None => match crate::workspace::campaigns::leads_for_next(cx.db)? {
                n if n > 0 => (n as u64, Basis::Workspace),
                _ if leads::count(cx.db)? > 0 => {
                    return Err(Refusal::guidance(
                        "Every imported lead is already in a launched campaign (get_campaign follows it). Import more \
                         leads with import_leads for the next one, or pass lead_count to estimate for a list of that \
                         size.",
                    ));
                }
                _ => {
                    return Err(Refusal::guidance(
                        "No leads are imported yet. Import them with import_leads, or pass lead_count to estimate for \
                         a list of that size (e.g. the pool count from estimate_lead_pool).",
                    ));
                }
            },
        };
        // The capacity the user sized (size_sending_capacity), when there is one (audit finding:
        // the estimate used the defaults and said sizing was not done, whatever was sized).
        let sized = crate::workspace::sending::sizing(cx.db)?;
        let per_mailbox = input
            .sends_per_mailbox_per_day
            .or(sized.as_ref().map(|s| s.doc.capacity.per_mailbox))
            .unwrap_or(d.sends_per_mailbox_per_day);
        if per_mailbox < d.sends_per_mailbox_min || per_mailbox > d.sends_per_mailbox_max {
            return Err(Refusal::InvalidArguments(format!(
                "`sends_per_mailbox_per_day` must be between {} and {}: more than that from one mailbox lands in spam",
                d.sends_per_mailbox_min, d.sends_per_mailbox_max
            )));
        }
        let (mailboxes, capacity_basis) = match (input.mailboxes, &sized) {
            (Some(m), _) => (m, Basis::Argument),
            (None, Some(s)) => (s.doc.total_mailboxes(), Basis::Workspace),
            (None, None) => (d.mailboxes_per_domain, Basis::Defaults),
        };
        let waits: Vec<u32> = seq.steps.iter().skip(1).map(|s| s.wait_days).collect();
        // Sending starts once the mailboxes are ready: the setup's ready date while they are still
        // set up or warming (audit: the estimate started tomorrow whatever the warm-up's weeks).
        let tomorrow = crate::dates::Date::of_ms(cx.now_ms).succ();
        let ordered = crate::tools::sending::ready_date(cx)?;
        // Chosen but not ordered yet: ready as if ordered today (journey finding: the estimate
        // started tomorrow after the user had chosen addresses that take weeks).
        let planned = match ordered {
            Some(_) => None,
            None => crate::workspace::sending::current(cx.db)?
                .source
                .map(|kind| crate::tools::sending::ready_dates(kind, cx.now_ms, d.warmup_days_min).1),
        };
        let ready = ordered.or(planned);
        let start = ready.map_or(tomorrow, |r| r.max(tomorrow));
        let daily = u64::from(mailboxes) * u64::from(per_mailbox);
        let ramping = ramping(cx, input.mailboxes.is_some(), mailboxes)?;
        let ramp = Ramp::new(mailboxes.into(), ramping, per_mailbox.into());
        let e = estimate::estimate(
            &Input { leads, waits: waits.clone(), daily_capacity: daily, ramp, start },
            &d,
        );
        let steps = seq.steps.len() as u32;
        let mut assumptions = vec![
            format!(
                "{per_mailbox} cold emails per warmed mailbox per day, {mailboxes} mailbox(es): {daily} emails a day"
            ),
            format!(
                "{steps} step(s){}; every lead gets every step (replies stop a sequence, so real volume is a little lower)",
                if waits.is_empty() {
                    String::new()
                } else {
                    format!(
                        ", follow-ups after {} day(s)",
                        waits.iter().map(u32::to_string).collect::<Vec<_>>().join(", ")
                    )
                }
            ),
            format!(
                "Sending Monday to Friday, {:02}:00–{:02}:00 in the time zone most of the leads are in (stage_campaign can set another); follow-ups that are due go before new leads",
                d.window_start_hour, d.window_end_hour
            ),
            format!(
                "Reply rate {}–{} of contacted leads, {} as the central estimate; positive replies {}–{}; meetings {}–{}",
                percent(d.reply_rate_low_bp),
                percent(d.reply_rate_high_bp),
                percent(d.reply_rate_central_bp),
                percent(d.positive_rate_low_bp),
                percent(d.positive_rate_high_bp),
                percent(d.meeting_rate_low_bp),
                percent(d.meeting_rate_high_bp)
            ),
            {
                let then = match ramp.mailboxes {
                    0 => "at full volume from the first day (the mailboxes came warmed or have sent before)"
                        .to_owned(),
                    n => format!(
                        "then {} new to cold email ramp up: 2 emails each the first day, 2 more each day, \
                         {per_mailbox} from day {} (the platform's slow ramp)",
                        plural(n, "mailbox", "mailboxes"),
                        ramp.days()
                    ),
                };
                match ready {
                    Some(r) if planned.is_some() => format!(
                        "The addresses chosen are not ordered yet: ordered today (order_sending_setup), they would be \
                         ready to send on {r}, {then}"
                    ),
                    Some(r) if r > tomorrow => {
                        format!(
                            "Sending starts on {r}, when the mailboxes are ready (get_sending_setup), {then}"
                        )
                    }
                    Some(_) => format!("The mailboxes are ready: sending from tomorrow, {then}"),
                    None => format!(
                        "No mailboxes are ordered yet: addresses under the user's brand first take a few business \
                         days to set up and {} days to warm up (already-warmed ones need none); the dates assume sending \
                         could start tomorrow, {then}",
                        d.warmup_days_min
                    ),
                }
            },
        ];
        match (capacity_basis, &sized) {
            (Basis::Defaults, _) => assumptions.insert(
                0,
                format!(
                    "Sending capacity is not sized yet: one domain with {mailboxes} mailboxes (the default); size it \
                     with the user to refine this"
                ),
            ),
            (Basis::Workspace, Some(s)) if s.confirmed_at.is_none() => assumptions.insert(
                0,
                "The sending capacity as sized, not confirmed by the user yet (confirm_sizing)".to_owned(),
            ),
            _ => {}
        }
        let rates = Rates {
            low: f64::from(d.reply_rate_low_bp) / 10_000.0,
            mid: f64::from(d.reply_rate_central_bp) / 10_000.0,
            high: f64::from(d.reply_rate_high_bp) / 10_000.0,
        };
        // Past the horizon the figures are where the simulation stopped, not an end: said as
        // such, with no date for the last lead (third journey walk: it gave the start date).
        let span = match e.all_contacted_day {
            Some(all) if !e.beyond_horizon => format!(
                "{} business days of sending, from {} to {} (every lead contacted by {all})",
                group_thousands(e.sending_days),
                e.first_day,
                e.last_day
            ),
            _ => format!(
                "more than five years of sending from {}: the capacity is far too small for this list. Add mailboxes or \
                 contact fewer leads",
                e.first_day
            ),
        };
        // "0–0 replies" reads as a typo: a range whose ends meet is one figure.
        let range = |r: &crate::estimate::Range| match r.low == r.high {
            true => group_thousands(r.low),
            false => format!("{}–{}", group_thousands(r.low), group_thousands(r.high)),
        };
        let mut text = format!(
            "**{} leads, {} steps, {} emails a day:** {span}.\nExpected: {} replies ({} central), {} positive, {} \
             meetings.",
            group_thousands(leads),
            steps,
            group_thousands(daily),
            range(&e.replies),
            group_thousands(e.replies.mid),
            range(&e.positive_replies),
            range(&e.meetings),
        );
        text.push_str(
            " These are estimates from benchmarks, not promises; the assumptions are listed with the result.",
        );
        if capacity_basis == Basis::Defaults {
            text.push_str(
                " Sending capacity is not sized yet, so it assumes 1 domain with the default mailboxes.",
            );
        }
        Ok(Reply::new(
            text,
            CampaignEstimateView {
                leads,
                leads_basis,
                steps,
                step_delay_days: waits.first().copied().unwrap_or(d.step_delay_days),
                delays: waits,
                mailboxes,
                sends_per_mailbox_per_day: per_mailbox,
                capacity_basis,
                emails_per_day: daily,
                new_leads_per_day: e.new_leads_per_day_steady,
                emails_total: e.emails_total,
                business_days: e.sending_days,
                calendar_days: e.calendar_days,
                start_date: e.first_day.to_string(),
                all_contacted_date: e.all_contacted_day.map(|d| d.to_string()),
                end_date: e.last_day.to_string(),
                beyond_horizon: e.beyond_horizon,
                reply_rate: rates,
                replies: e.replies,
                positive_replies: e.positive_replies,
                meetings: e.meetings,
                weekly: e
                    .weekly
                    .iter()
                    .enumerate()
                    .map(|(i, n)| Week { label: format!("W{}", i + 1), emails: *n })
                    .collect(),
                assumptions,
            },
        ))
    }
}

/// How many of the estimate's `mailboxes` ramp up (`estimate::Ramp`), as staging will count them:
/// those of the workspace that neither came warmed nor sent for an earlier campaign
/// (`campaigns::seasoned`); for mailboxes not ordered yet (or a count given in the call), all of
/// them unless the user chose already-warmed addresses or a campaign has sent.
fn ramping(cx: &ToolCx<'_>, given: bool, mailboxes: u32) -> Result<u64, Refusal> {
    use crate::workspace::{campaigns, sending};
    let seasoned = campaigns::seasoned(cx.db)?;
    let boxes = sending::mailboxes(cx.db)?;
    if !boxes.is_empty() && !given {
        let new = boxes.iter().filter(|m| !m.pre_warmed() && !seasoned.contains(&m.address)).count() as u64;
        return Ok(new.min(mailboxes.into()));
    }
    if !seasoned.is_empty() {
        return Ok(0);
    }
    Ok(match sending::current(cx.db)?.source {
        Some(crate::sending::platform::OrderKind::AlreadyWarmed) => 0,
        _ => mailboxes.into(),
    })
}

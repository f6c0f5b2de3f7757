//! Sizing: from the volume the user wants to the mailboxes, domains and ramp that carry it
//! safely (DOMAIN §3.10, §8). Estimates, stated as such.
//!
//! - A warmed mailbox sends `per_mailbox` cold emails a day (30 by default, 20–50).
//! - At steady state every step of the sequence is in flight, so each new lead a day costs
//!   `steps` emails a day: `emails_per_day = new_leads_per_day × steps`.
//! - `mailboxes = ⌈emails_per_day / per_mailbox⌉`, `domains = ⌈mailboxes / per_domain⌉`.
//! - Monthly volumes count business days only (sending is Monday to Friday): 260 a year.
//! - New mailboxes warm up first (no cold email), then the platform's slow ramp adds two cold
//!   emails a day per mailbox until `per_mailbox` (DOMAIN §3.3: about 15 days to 30 a day).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::deliverability::Deliverability;

/// Business days in a year (52 weeks of 5 days).
pub const BUSINESS_DAYS_PER_YEAR: u32 = 260;
/// Cold emails added per mailbox per day by the slow ramp.
pub const SLOW_RAMP_STEP: u32 = 2;
/// The most steps a sequence may have for sizing.
pub const MAX_STEPS: u32 = 7;

/// What the volume counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Unit {
    /// Cold emails sent per business day, every step included.
    EmailsPerDay,
    /// New people contacted per business day.
    NewLeadsPerDay,
    /// Cold emails sent per month.
    EmailsPerMonth,
    /// New people contacted per month.
    NewLeadsPerMonth,
}

impl Unit {
    /// For people.
    pub fn describe(self, n: u32) -> String {
        let n = crate::plans::group_thousands(u64::from(n));
        match self {
            Unit::EmailsPerDay => format!("{n} emails a day"),
            Unit::NewLeadsPerDay => format!("{n} new leads a day"),
            Unit::EmailsPerMonth => format!("{n} emails a month"),
            Unit::NewLeadsPerMonth => format!("{n} new leads a month"),
        }
    }
}

/// What to size for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Request {
    /// The wanted volume.
    pub volume: u32,
    /// What it counts.
    pub unit: Unit,
    /// Emails per lead (steps of the sequence).
    pub steps: u32,
    /// Cold emails per warmed mailbox per day.
    pub per_mailbox: u32,
}

/// One day of the slow ramp.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RampDay {
    /// The sending day (1 = first day of cold email).
    pub day: u32,
    /// Cold emails per mailbox that day.
    pub per_mailbox: u32,
    /// Cold emails from all mailboxes that day.
    pub emails: u32,
}

/// The sizing.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Capacity {
    /// The volume asked for.
    pub volume: u32,
    /// What it counts.
    pub unit: Unit,
    /// Cold emails a business day at steady state, every step included.
    pub emails_per_day: u32,
    /// New leads contacted a business day.
    pub new_leads_per_day: u32,
    /// Emails per lead.
    pub steps: u32,
    /// Cold emails per warmed mailbox per day.
    pub per_mailbox: u32,
    /// Mailboxes needed.
    pub mailboxes: u32,
    /// Mailboxes per domain.
    pub mailboxes_per_domain: u32,
    /// Sending domains needed.
    pub domains: u32,
    /// What the mailboxes can send a day once ramped (≥ `emails_per_day`).
    pub capacity_per_day: u32,
    /// Warm-up of new mailboxes before any cold email, in days: the least.
    pub warmup_days_min: u32,
    /// See `warmup_days_min`: the most.
    pub warmup_days_max: u32,
    /// Sending days of slow ramp until full volume.
    pub ramp_days: u32,
    /// The slow ramp, day by day.
    pub ramp: Vec<RampDay>,
}

/// Why a request cannot be sized.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Invalid {
    /// The volume is zero.
    NoVolume,
    /// Steps outside 1..=[`MAX_STEPS`].
    Steps,
    /// Per-mailbox volume outside the deliverability range.
    PerMailbox {
        /// The least allowed.
        min: u32,
        /// The most allowed.
        max: u32,
    },
}

fn ceil_div(a: u64, b: u64) -> u64 {
    a.div_ceil(b.max(1))
}

/// Sizes `req` with the deliverability defaults `d`.
pub fn size(req: &Request, d: &Deliverability) -> Result<Capacity, Invalid> {
    if req.volume == 0 {
        return Err(Invalid::NoVolume);
    }
    if !(1..=MAX_STEPS).contains(&req.steps) {
        return Err(Invalid::Steps);
    }
    if !(d.sends_per_mailbox_min..=d.sends_per_mailbox_max).contains(&req.per_mailbox) {
        return Err(Invalid::PerMailbox { min: d.sends_per_mailbox_min, max: d.sends_per_mailbox_max });
    }
    let volume = u64::from(req.volume);
    let steps = u64::from(req.steps);
    let per_day = |monthly: u64| ceil_div(monthly * 12, u64::from(BUSINESS_DAYS_PER_YEAR));
    let (new_leads, emails) = match req.unit {
        Unit::NewLeadsPerDay => (volume, volume * steps),
        Unit::NewLeadsPerMonth => {
            let leads = per_day(volume);
            (leads, leads * steps)
        }
        Unit::EmailsPerDay => ((volume / steps).max(1), volume),
        Unit::EmailsPerMonth => {
            let emails = per_day(volume);
            ((emails / steps).max(1), emails)
        }
    };
    let mailboxes = ceil_div(emails, u64::from(req.per_mailbox)).max(1);
    let per_domain = u64::from(d.mailboxes_per_domain.max(1));
    let domains = ceil_div(mailboxes, per_domain);
    let clamp = |v: u64| u32::try_from(v).unwrap_or(u32::MAX);
    let mailboxes = clamp(mailboxes);
    let ramp_days = req.per_mailbox.div_ceil(SLOW_RAMP_STEP);
    let ramp = (1..=ramp_days)
        .map(|day| {
            let per_mailbox = (day * SLOW_RAMP_STEP).min(req.per_mailbox);
            RampDay { day, per_mailbox, emails: per_mailbox.saturating_mul(mailboxes) }
        })
        .collect();
    Ok(Capacity {
        volume: req.volume,
        unit: req.unit,
        emails_per_day: clamp(emails),
        new_leads_per_day: clamp(new_leads),
        steps: req.steps,
        per_mailbox: req.per_mailbox,
        mailboxes,
        mailboxes_per_domain: clamp(per_domain),
        domains: clamp(domains),
        capacity_per_day: mailboxes.saturating_mul(req.per_mailbox),
        warmup_days_min: d.warmup_days_min,
        warmup_days_max: d.warmup_days_max,
        ramp_days,
        ramp,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(volume: u32, unit: Unit, steps: u32) -> Request {
        Request { volume, unit, steps, per_mailbox: 30 }
    }

    #[test]
    fn volume_becomes_mailboxes_and_domains() {
        let d = Deliverability::default();
        // 45 new leads a day × 4 steps = 180 emails = 6 mailboxes of 30 = 2 domains of 3.
        let c = size(&req(45, Unit::NewLeadsPerDay, 4), &d).unwrap();
        assert_eq!((c.emails_per_day, c.mailboxes, c.domains, c.capacity_per_day), (180, 6, 2, 180));
        // 181 emails need a seventh mailbox and a third domain.
        let c = size(&req(181, Unit::EmailsPerDay, 4), &d).unwrap();
        assert_eq!((c.new_leads_per_day, c.mailboxes, c.domains), (45, 7, 3));
        // 1,000 new leads a month = ⌈1000×12/260⌉ = 47 a day; × 3 steps = 141 → 5 mailboxes.
        let c = size(&req(1_000, Unit::NewLeadsPerMonth, 3), &d).unwrap();
        assert_eq!((c.new_leads_per_day, c.emails_per_day, c.mailboxes, c.domains), (47, 141, 5, 2));
        // 3,000 emails a month = 139 a day → 5 mailboxes; 46 new leads a day at 3 steps.
        let c = size(&req(3_000, Unit::EmailsPerMonth, 3), &d).unwrap();
        assert_eq!((c.emails_per_day, c.new_leads_per_day, c.mailboxes), (139, 46, 5));
        // The smallest volume still needs one mailbox on one domain.
        let c = size(&req(1, Unit::EmailsPerDay, 4), &d).unwrap();
        assert_eq!((c.new_leads_per_day, c.mailboxes, c.domains), (1, 1, 1));
    }

    #[test]
    fn the_ramp_climbs_two_a_day_to_the_cap() {
        let d = Deliverability::default();
        let c = size(&req(45, Unit::NewLeadsPerDay, 4), &d).unwrap();
        assert_eq!(c.ramp_days, 15);
        assert_eq!(c.ramp.first(), Some(&RampDay { day: 1, per_mailbox: 2, emails: 12 }));
        assert_eq!(c.ramp.last(), Some(&RampDay { day: 15, per_mailbox: 30, emails: 180 }));
        assert!(c.ramp.windows(2).all(|w| w[1].per_mailbox >= w[0].per_mailbox));
        assert_eq!((c.warmup_days_min, c.warmup_days_max), (14, 21));
        let odd = size(&Request { per_mailbox: 25, ..req(10, Unit::EmailsPerDay, 3) }, &d).unwrap();
        assert_eq!((odd.ramp_days, odd.ramp.last().unwrap().per_mailbox), (13, 25));
    }

    #[test]
    fn bad_requests_are_refused() {
        let d = Deliverability::default();
        assert_eq!(size(&req(0, Unit::EmailsPerDay, 3), &d), Err(Invalid::NoVolume));
        assert_eq!(size(&req(10, Unit::EmailsPerDay, 0), &d), Err(Invalid::Steps));
        assert_eq!(size(&req(10, Unit::EmailsPerDay, 8), &d), Err(Invalid::Steps));
        let too_many = Request { per_mailbox: 80, ..req(10, Unit::EmailsPerDay, 3) };
        assert_eq!(size(&too_many, &d), Err(Invalid::PerMailbox { min: 20, max: 50 }));
        // Huge volumes saturate instead of overflowing.
        let c = size(&req(u32::MAX, Unit::NewLeadsPerDay, 7), &d).unwrap();
        assert!(c.mailboxes > 1_000_000);
    }
}

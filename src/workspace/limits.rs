//! Plan limits and usage (PRODUCT §7): leads imported per calendar month, mailboxes in use and
//! campaigns running, checked and counted by the tools that consume them.
//!
//! Usage lives in the `usage` table: a counter per UTC calendar month for leads, and a gauge for
//! mailboxes and active campaigns. A tool that consumes a limit
//! 1. calls [`check`] before acting (or before proposing its approval), which refuses with a
//!    text that names the limit, what is used, and the cheapest plan that lifts it;
//! 2. puts [`consume`] (or, when a mailbox or campaign goes away, [`release`]) in the same
//!    `db.batch` as the state change, so the count never drifts from what it counts.

use schemars::JsonSchema;
use serde::Serialize;

use super::approvals::ExecError;
use super::billing;
use crate::config::Config;
use crate::plans::{Limit, group_thousands};
use crate::store::{Db, Stmt, StoreError};
use crate::tools::Refusal;

/// The gauges' period key.
const CURRENT: &str = "current";

/// The UTC calendar month of `now_ms`, as `YYYY-MM`.
pub fn period(now_ms: i64) -> String {
    crate::dates::month(now_ms)
}

/// When the month after `now_ms`'s begins (ms, UTC): when monthly counters restart.
pub fn next_period_start(now_ms: i64) -> i64 {
    let (year, month, _) = crate::dates::Date::of_ms(now_ms).ymd();
    let (year, month) = if month == 12 { (year.saturating_add(1), 1) } else { (year, month + 1) };
    crate::dates::Date::from_ymd(year, month, 1).map_or(now_ms, crate::dates::Date::start_ms)
}

fn key(limit: Limit, now_ms: i64) -> String {
    if limit.is_monthly() { period(now_ms) } else { CURRENT.to_owned() }
}

/// How much of `limit` is used now (this month, for monthly limits).
pub fn used(db: &dyn Db, limit: Limit, now_ms: i64) -> Result<i64, StoreError> {
    Ok(db
        .query(Stmt::new(
            "SELECT amount FROM usage WHERE period = ? AND metric = ?",
            vec![key(limit, now_ms).into(), limit.as_str().into()],
        ))?
        .scalar_i64()
        .unwrap_or(0))
}

/// The statement that counts `amount` more of `limit` (leads imported, mailboxes created,
/// campaigns launched). Put it in the batch of the change it counts.
pub fn consume(limit: Limit, amount: i64, now_ms: i64) -> Stmt {
    Stmt::new(
        "INSERT INTO usage (period, metric, amount) VALUES (?, ?, ?) \
         ON CONFLICT(period, metric) DO UPDATE SET amount = amount + excluded.amount",
        vec![key(limit, now_ms).into(), limit.as_str().into(), amount.max(0).into()],
    )
}

/// The statement that counts `amount` fewer of a gauge (a mailbox removed, a campaign stopped);
/// never below zero. Monthly counters are never released: imported leads stay counted.
pub fn release(limit: Limit, amount: i64, now_ms: i64) -> Stmt {
    Stmt::new(
        "UPDATE usage SET amount = MAX(amount - ?, 0) WHERE period = ? AND metric = ?",
        vec![amount.max(0).into(), key(limit, now_ms).into(), limit.as_str().into()],
    )
}

/// Usage now.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Usage {
    /// The calendar month the lead counter is for (`YYYY-MM`, UTC).
    pub period: String,
    /// Leads imported this month.
    pub leads_imported: i64,
    /// Mailboxes in use.
    pub mailboxes: i64,
    /// Campaigns running.
    pub active_campaigns: i64,
}

/// Usage now.
pub fn usage(db: &dyn Db, now_ms: i64) -> Result<Usage, StoreError> {
    Ok(Usage {
        period: period(now_ms),
        leads_imported: used(db, Limit::LeadsPerMonth, now_ms)?,
        mailboxes: used(db, Limit::Mailboxes, now_ms)?,
        active_campaigns: used(db, Limit::ActiveCampaigns, now_ms)?,
    })
}

/// What the plan still allows of one limit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Allowance {
    /// The workspace's plan, by the name the user knows it by (journey finding: approvals said
    /// "the growth plan").
    pub plan: String,
    /// The plan's limit.
    pub limit: i64,
    /// Used now.
    pub used: i64,
    /// Left after the amount checked.
    pub left_after: i64,
}

impl Allowance {
    /// The approval's line for what it takes of the plan: `what` of the plan's `limit`, and what
    /// is in use already (third journey walk: a second order read as if it were the only one).
    pub fn uses(&self, what: &str, limit: Limit) -> String {
        let already = match self.used {
            0 => String::new(),
            used => format!(
                " ({} already)",
                if limit.is_monthly() { format!("{used} used this month") } else { format!("{used} in use") }
            ),
        };
        format!("Uses {what} of the {} plan's {}{already}.", self.plan, limit.describe(self.limit))
    }
}

/// [`check`] for an approval being carried out: over the limit, it fails with the reason; a check
/// that could not be made (storage) leaves the outcome to a retry rather than going ahead
/// unchecked.
pub fn check_to_execute(
    db: &dyn Db,
    config: &Config,
    now_ms: i64,
    limit: Limit,
    adding: i64,
) -> Result<(), ExecError> {
    match check(db, config, now_ms, limit, adding) {
        Ok(_) => Ok(()),
        Err(Refusal::Guidance(why)) => Err(ExecError::Failed(why)),
        Err(other) => Err(ExecError::Unknown(format!("the plan limit could not be checked: {other:?}"))),
    }
}

/// Whether the workspace's plan allows `adding` more of `limit`. The refusal names the limit,
/// what is used, and the cheapest plan that lifts it (or says none does).
pub fn check(
    db: &dyn Db,
    config: &Config,
    now_ms: i64,
    limit: Limit,
    adding: i64,
) -> Result<Allowance, Refusal> {
    let current = billing::current(db, config)?;
    let plan = current.plan;
    let cap = plan.limits.get(limit);
    let used = used(db, limit, now_ms)?;
    let needed = used.saturating_add(adding.max(0));
    if needed <= cap {
        return Ok(Allowance { plan: plan.name.clone(), limit: cap, used, left_after: cap - needed });
    }
    let left = (cap - used).max(0);
    let (used_text, when) = if limit.is_monthly() {
        (
            format!("{} used this month", group_thousands(used.max(0).unsigned_abs())),
            format!(" until {}", crate::dates::utc_minute(next_period_start(now_ms))),
        )
    } else {
        (format!("{} in use", group_thousands(used.max(0).unsigned_abs())), String::new())
    };
    let mut text = format!(
        "Plan limit: the {} plan allows {} ({used_text}), so {} more would go over; at most {} more{when}.",
        plan.name,
        limit.describe(cap),
        group_thousands(adding.max(0).unsigned_abs()),
        group_thousands(left.unsigned_abs()),
    );
    match config.plans.cheapest_with(limit, needed) {
        Some(better) => text.push_str(&format!(
            " The {} plan ({}/month) allows {}: ask the user whether to upgrade ({}), or do less.",
            better.name,
            config.plans.price(better).display(),
            limit.describe(better.limits.get(limit)),
            if current.paying { "upgrade_plan" } else { "start_checkout" },
        )),
        None => text.push_str(
            " No plan allows that much: do less, or the user can ask VibeSell for more (contact_support).",
        ),
    }
    Err(Refusal::guidance(text))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{MemoryDb, NOW_MS, test_config};
    use crate::workspace::migrations;

    #[test]
    fn an_approval_says_what_is_in_use_already() {
        let a = |used| Allowance { plan: "Scale".into(), limit: 30, used, left_after: 0 };
        assert_eq!(
            a(0).uses("3 mailboxes", Limit::Mailboxes),
            "Uses 3 mailboxes of the Scale plan's 30 mailboxes."
        );
        assert_eq!(
            a(5).uses("3 mailboxes", Limit::Mailboxes),
            "Uses 3 mailboxes of the Scale plan's 30 mailboxes (5 in use already)."
        );
        assert_eq!(
            a(1).uses("1", Limit::ActiveCampaigns),
            "Uses 1 of the Scale plan's 30 active campaigns (1 in use already)."
        );
    }

    #[test]
    fn periods_are_utc_calendar_months() {
        assert_eq!(period(NOW_MS), "2026-11");
        assert_eq!(next_period_start(NOW_MS), 1_796_083_200_000, "2026-12-01T00:00:00Z");
        assert_eq!(period(1_796_083_200_000 - 1), "2026-11");
        assert_eq!(period(next_period_start(1_798_675_200_000)), "2027-01", "December rolls over the year");
    }

    #[test]
    fn usage_is_counted_per_month_and_gauges_never_go_negative() {
        let db = MemoryDb::new();
        migrations::apply(&db, NOW_MS).unwrap();
        db.batch(vec![consume(Limit::LeadsPerMonth, 30, NOW_MS), consume(Limit::Mailboxes, 2, NOW_MS)])
            .unwrap();
        db.batch(vec![consume(Limit::LeadsPerMonth, 5, NOW_MS), release(Limit::Mailboxes, 5, NOW_MS)])
            .unwrap();
        let u = usage(&db, NOW_MS).unwrap();
        assert_eq!((u.leads_imported, u.mailboxes, u.active_campaigns), (35, 0, 0));
        let next_month = next_period_start(NOW_MS);
        assert_eq!(used(&db, Limit::LeadsPerMonth, next_month).unwrap(), 0, "a new month starts at zero");
    }

    #[test]
    fn an_execution_is_held_to_the_limit_and_retried_when_it_cannot_be_read() {
        let config = test_config();
        let db = MemoryDb::new();
        migrations::apply(&db, NOW_MS).unwrap();
        db.batch(vec![consume(Limit::LeadsPerMonth, 40, NOW_MS)]).unwrap();
        assert_eq!(check_to_execute(&db, &config, NOW_MS, Limit::LeadsPerMonth, 10), Ok(()));
        // Over the limit, the approval fails for good, with the refusal's words for the user.
        let Err(ExecError::Failed(why)) = check_to_execute(&db, &config, NOW_MS, Limit::LeadsPerMonth, 11)
        else {
            panic!("failed")
        };
        assert!(why.contains("the Free plan allows 50 leads per month (40 used this month)"), "{why}");
        // A limit that cannot be read (here: no tables) is an unknown outcome, retried later, and
        // never taken for room: nothing runs past a plan it could not check.
        let unreadable = MemoryDb::new();
        let Err(ExecError::Unknown(why)) =
            check_to_execute(&unreadable, &config, NOW_MS, Limit::LeadsPerMonth, 1)
        else {
            panic!("unknown")
        };
        assert!(why.starts_with("the plan limit could not be checked"), "{why}");
    }

    #[test]
    fn checks_name_the_limit_and_the_plan_that_lifts_it() {
        let db = MemoryDb::new();
        migrations::apply(&db, NOW_MS).unwrap();
        let config = test_config();
        db.batch(vec![consume(Limit::LeadsPerMonth, 40, NOW_MS)]).unwrap();
        let ok = check(&db, &config, NOW_MS, Limit::LeadsPerMonth, 10).unwrap();
        assert_eq!((ok.plan.as_str(), ok.limit, ok.used, ok.left_after), ("Free", 50, 40, 0));
        let Refusal::Guidance(text) = check(&db, &config, NOW_MS, Limit::LeadsPerMonth, 500).unwrap_err()
        else {
            panic!("guidance")
        };
        assert!(text.contains("the Free plan allows 50 leads per month (40 used this month)"), "{text}");
        assert!(text.contains("at most 10 more until 2026-12-01 00:00 UTC"), "{text}");
        assert!(text.contains("The Starter plan ($49/month) allows 1,000 leads per month"), "{text}");
        assert!(text.contains("start_checkout"), "not paying yet: {text}");
        let Refusal::Guidance(text) = check(&db, &config, NOW_MS, Limit::Mailboxes, 31).unwrap_err() else {
            panic!("guidance")
        };
        assert!(
            text.contains("allows 0 mailboxes (0 in use)") && text.contains("No plan allows that much"),
            "{text}"
        );
    }
}

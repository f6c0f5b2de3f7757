//! The campaign estimate: how long a sequence takes to reach every lead at a given sending
//! capacity, and what it is likely to bring back (DOMAIN §3.9, §3.10, §8).
//!
//! Rather than divide, it simulates the calendar day by day: on each sending day (Monday to
//! Friday) follow-ups that are due go first, then new leads fill what is left of the day's
//! capacity; each email sent schedules the lead's next step after its wait. That gives the
//! real number of sending days, including the tail where the last leads finish their steps.

use crate::dates::Date;

use crate::deliverability::Deliverability;

/// The longest horizon simulated (five years); beyond it the estimate says so.
pub const HORIZON_DAYS: u64 = 5 * 366;

/// What the estimate starts from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Input {
    /// Leads to contact.
    pub leads: u64,
    /// Days to wait before each step after the first (one entry per follow-up).
    pub waits: Vec<u32>,
    /// The most emails a sending day, all mailboxes together.
    pub daily_capacity: u64,
    /// The mailboxes that ramp up to their share, when some do.
    pub ramp: Ramp,
    /// The first possible sending day.
    pub start: Date,
}

/// Mailboxes new to cold email. The sending platform's slow ramp, which `stage_campaign` turns on
/// for every mailbox that did not come warmed, has each send [`SLOW_RAMP_STEP`] emails on its
/// first sending day and as many more on each one after, up to `per_mailbox` (DOMAIN §3.1).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Ramp {
    /// How many mailboxes ramp.
    pub mailboxes: u64,
    /// The share each ramps up to.
    pub per_mailbox: u64,
    /// Emails a day from the other mailboxes, which send their share from the first day.
    pub steady: u64,
}

impl Ramp {
    /// `mailboxes` sending `per_mailbox` a day each once ramped, of which `new` ramp up.
    pub fn new(mailboxes: u64, new: u64, per_mailbox: u64) -> Ramp {
        Ramp { mailboxes: new, per_mailbox, steady: mailboxes.saturating_sub(new) * per_mailbox }
    }

    /// What the mailboxes can send on their `n`-th sending day (from 1), at most `limit`.
    fn capacity(&self, n: u64, limit: u64) -> u64 {
        if self.mailboxes == 0 {
            return limit;
        }
        limit.min(self.steady + self.mailboxes * self.per_mailbox.min(SLOW_RAMP_STEP * n))
    }

    /// Sending days until each sends its share.
    pub fn days(&self) -> u64 {
        if self.mailboxes == 0 { 0 } else { self.per_mailbox.div_ceil(SLOW_RAMP_STEP) }
    }
}

/// Emails a ramping mailbox adds each sending day (`sending::sizing`).
const SLOW_RAMP_STEP: u64 = crate::sending::sizing::SLOW_RAMP_STEP as u64;

/// Low, central and high.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, schemars::JsonSchema)]
pub struct Range {
    /// Pessimistic.
    pub low: u64,
    /// Central.
    pub mid: u64,
    /// Optimistic.
    pub high: u64,
}

/// The estimate.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Estimate {
    /// Emails sent in all (every lead gets every step).
    pub emails_total: u64,
    /// New leads a day once every step is in flight: capacity ÷ steps.
    pub new_leads_per_day_steady: u64,
    /// Days with sending.
    pub sending_days: u64,
    /// Calendar days from the first to the last email.
    pub calendar_days: u64,
    /// Business days from the first sending day to the last, those without sending included
    /// (days that only wait for follow-ups): how long the campaign runs.
    pub span_business_days: u64,
    /// The first and last sending days.
    pub first_day: Date,
    /// See `first_day`.
    pub last_day: Date,
    /// The busiest day's emails (at most the capacity).
    pub peak_emails_per_day: u64,
    /// The day every lead has received the first email; `None` past the horizon.
    pub all_contacted_day: Option<Date>,
    /// Whether the horizon cut the simulation short.
    pub beyond_horizon: bool,
    /// Replies, from the configured reply rates.
    pub replies: Range,
    /// Positive replies (interested, meeting), from the configured rates.
    pub positive_replies: Range,
    /// Meetings booked, from the configured rates.
    pub meetings: Range,
    /// Emails sent in each week from the first sending day (at most [`WEEKS_SHOWN`]).
    pub weekly: Vec<u64>,
}

/// Weeks of the weekly breakdown.
pub const WEEKS_SHOWN: usize = 52;

/// The first weekday on or after `day`.
pub fn next_weekday(day: Date) -> Date {
    let mut d = day;
    while d.is_weekend() {
        d = d.succ();
    }
    d
}

fn rate(leads: u64, bp: u32) -> u64 {
    // Rounded to the nearest whole reply, exactly: with leads = q·10,000 + r, the product is
    // q·bp·10,000 + r·bp, and only r·bp (which cannot overflow) needs rounding. No u128: its
    // division would link compiler-builtins' 128-bit division into the module.
    let bp = u64::from(bp);
    (leads / 10_000).saturating_mul(bp).saturating_add((leads % 10_000 * bp + 5_000) / 10_000)
}

/// Adds `n` follow-ups due at `key` to `due`, kept in key order.
fn wait_for(due: &mut Vec<((u64, usize), u64)>, key: (u64, usize), n: u64) {
    match due.binary_search_by_key(&key, |(k, _)| *k) {
        Ok(i) => due[i].1 += n,
        Err(i) => due.insert(i, (key, n)),
    }
}

/// Simulates the campaign.
pub fn estimate(input: &Input, d: &Deliverability) -> Estimate {
    let steps = input.waits.len() as u64 + 1;
    let capacity = input.daily_capacity.max(1);
    let first_day = next_weekday(input.start);
    // Follow-ups waiting: ((due day index, step index of the email due), how many), in key order.
    // A sorted list rather than a `BTreeMap`: it holds a few dozen entries, and the tree's code for
    // this one key type was its own copy in the module (docs/scale.md, "Size").
    let mut due: Vec<((u64, usize), u64)> = Vec::new();
    let mut remaining = input.leads;
    let (mut sending_days, mut peak, mut last_index, mut all_contacted_index) = (0u64, 0u64, 0u64, 0u64);
    let (mut business_days, mut span_business_days) = (0u64, 0u64);
    let mut day_index = 0u64;
    let mut beyond_horizon = false;
    let mut weekly: Vec<u64> = Vec::new();
    while remaining > 0 || !due.is_empty() {
        if day_index > HORIZON_DAYS {
            beyond_horizon = true;
            break;
        }
        // At most HORIZON_DAYS.
        let today = first_day.add_days(day_index as i64);
        if today.is_weekend() {
            day_index += 1;
            continue;
        }
        business_days += 1;
        // The ramp counts the days that sent, as the platform does.
        let mut left = input.ramp.capacity(sending_days + 1, capacity).max(1);
        let mut sent = 0;
        // Oldest follow-ups first. Those they lead to are added after, so that one due today is
        // sent from the next sending day, as before.
        let ready = due.partition_point(|(k, _)| k.0 <= day_index);
        let mut next = Vec::new();
        for ((_, step), count) in &mut due[..ready] {
            if left == 0 {
                break;
            }
            let n = (*count).min(left);
            *count -= n;
            left -= n;
            sent += n;
            if *step + 1 < steps as usize {
                next.push(((day_index + u64::from(input.waits[*step]), *step + 1), n));
            }
        }
        due.retain(|(_, count)| *count > 0);
        for (key, n) in next {
            wait_for(&mut due, key, n);
        }
        // Then new leads.
        if remaining > 0 && left > 0 {
            let n = remaining.min(left);
            remaining -= n;
            sent += n;
            if steps > 1 {
                wait_for(&mut due, (day_index + u64::from(input.waits[0]), 1), n);
            }
            if remaining == 0 {
                all_contacted_index = day_index;
            }
        }
        if sent > 0 {
            let week = (day_index / 7) as usize;
            if week < WEEKS_SHOWN {
                if weekly.len() <= week {
                    weekly.resize(week + 1, 0);
                }
                weekly[week] += sent;
            }
            sending_days += 1;
            span_business_days = business_days;
            peak = peak.max(sent);
            last_index = day_index;
        }
        day_index += 1;
    }
    // Day indices are at most HORIZON_DAYS.
    let day = |i: u64| first_day.add_days(i as i64);
    Estimate {
        emails_total: input.leads * steps,
        new_leads_per_day_steady: (capacity / steps).max(1),
        sending_days,
        calendar_days: if input.leads == 0 { 0 } else { last_index + 1 },
        span_business_days,
        first_day,
        last_day: day(last_index),
        peak_emails_per_day: peak,
        all_contacted_day: (remaining == 0).then(|| day(all_contacted_index)),
        beyond_horizon,
        replies: Range {
            low: rate(input.leads, d.reply_rate_low_bp),
            mid: rate(input.leads, d.reply_rate_central_bp),
            high: rate(input.leads, d.reply_rate_high_bp),
        },
        positive_replies: Range {
            low: rate(input.leads, d.positive_rate_low_bp),
            mid: rate(input.leads, (d.positive_rate_low_bp + d.positive_rate_high_bp) / 2),
            high: rate(input.leads, d.positive_rate_high_bp),
        },
        meetings: Range {
            low: rate(input.leads, d.meeting_rate_low_bp),
            mid: rate(input.leads, d.meeting_rate_central_bp),
            high: rate(input.leads, d.meeting_rate_high_bp),
        },
        weekly,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates_round_exactly_as_in_128_bits() {
        let reference = |leads: u64, bp: u32| {
            u64::try_from((u128::from(leads) * u128::from(bp) + 5_000) / 10_000).unwrap_or(u64::MAX)
        };
        let mut x = 0x9e37_79b9_7f4a_7c15_u64;
        for i in 0..20_000u64 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let leads = [i, x % 1_000_000_000, x >> (i % 64), u64::MAX - i][(i % 4) as usize];
            let bp = [0, 1, 4_999, 5_000, 10_000, (x % 20_000) as u32][(i % 6) as usize];
            assert_eq!(rate(leads, bp), reference(leads, bp), "{leads} × {bp}");
        }
    }

    fn date(s: &str) -> Date {
        crate::dates::parse_ymd(s).unwrap()
    }

    #[test]
    fn one_step_is_a_division_over_weekdays() {
        // 1,000 leads at 100 a day: 10 sending days, Monday to the Friday of the next week.
        let e = estimate(
            &Input {
                leads: 1_000,
                waits: vec![],
                daily_capacity: 100,
                ramp: Ramp::default(),
                start: date("2026-11-30"),
            },
            &Deliverability::default(),
        );
        assert_eq!((e.sending_days, e.emails_total, e.peak_emails_per_day), (10, 1_000, 100));
        assert_eq!((e.first_day, e.last_day), (date("2026-11-30"), date("2026-12-11")));
        assert_eq!(e.calendar_days, 12);
        assert_eq!(e.replies, Range { low: 10, mid: 30, high: 50 });
        assert_eq!(e.positive_replies, Range { low: 5, mid: 8, high: 10 });
        assert_eq!(e.meetings, Range { low: 2, mid: 3, high: 10 });
        assert_eq!(e.weekly, vec![500, 500]);
    }

    #[test]
    fn the_span_counts_the_days_that_wait_for_follow_ups() {
        // 100 leads in one day, then their follow-ups 3 and 4 calendar days apart: three days with
        // sending over a run of six business days (Monday 30 November to Monday 7 December).
        let e = estimate(
            &Input {
                leads: 100,
                waits: vec![3, 4],
                daily_capacity: 240,
                ramp: Ramp::default(),
                start: date("2026-11-30"),
            },
            &Deliverability::default(),
        );
        assert_eq!((e.sending_days, e.span_business_days), (3, 6));
        assert_eq!((e.first_day, e.last_day), (date("2026-11-30"), date("2026-12-07")));
    }

    #[test]
    fn follow_ups_take_priority_and_extend_the_tail() {
        // 3 steps, 3 days apart, 90 a day, 300 leads, starting on a Saturday.
        let e = estimate(
            &Input {
                leads: 300,
                waits: vec![3, 3],
                daily_capacity: 90,
                ramp: Ramp::default(),
                start: date("2026-11-28"),
            },
            &Deliverability::default(),
        );
        assert_eq!(e.first_day, date("2026-11-30"), "weekends are skipped");
        assert_eq!(e.emails_total, 900);
        assert_eq!(e.new_leads_per_day_steady, 30);
        assert!(e.peak_emails_per_day <= 90);
        // Every email fits in the capacity over the sending days.
        assert!(e.sending_days * 90 >= 900);
        let all_contacted = e.all_contacted_day.unwrap();
        assert!(e.last_day > all_contacted);
        assert_eq!(e.weekly.iter().sum::<u64>(), 900, "the weeks add up to every email");
        assert!(!e.beyond_horizon);
        // Monday to Wednesday reach 270 new leads; from Thursday the follow-ups due take the
        // whole capacity first, so the last 30 wait for a day with room.
        assert!(all_contacted > date("2026-12-02"), "{all_contacted}");
        assert!(all_contacted <= e.last_day);
    }

    #[test]
    fn new_mailboxes_ramp_up_to_their_share() {
        // 3 new mailboxes ramping to 30 a day each: 6, 12, 18 … 90 from the 15th sending day.
        let ramp = Ramp { mailboxes: 3, per_mailbox: 30, steady: 0 };
        assert_eq!(ramp.days(), 15);
        let input =
            Input { leads: 1_000, waits: vec![], daily_capacity: 90, ramp, start: date("2026-11-30") };
        let e = estimate(&input, &Deliverability::default());
        assert_eq!(e.weekly[0], 6 + 12 + 18 + 24 + 30, "the first week");
        assert_eq!(e.peak_emails_per_day, 90);
        assert_eq!(e.emails_total, 1_000);
        // Ramping: 6 + 12 + … + 84 = 630 in 14 days, then 370 at 90 a day: 5 more days.
        assert_eq!(e.sending_days, 19);
        let flat = estimate(&Input { ramp: Ramp::default(), ..input }, &Deliverability::default());
        assert_eq!(flat.sending_days, 12, "without the ramp: 1,000 ÷ 90");
        assert_eq!(Ramp { mailboxes: 0, per_mailbox: 30, steady: 0 }.days(), 0);
        // A mailbox that came warmed sends its share at once, and the daily limit caps the sum.
        let mixed = Ramp::new(3, 2, 30);
        assert_eq!(mixed, Ramp { mailboxes: 2, per_mailbox: 30, steady: 30 });
        assert_eq!((mixed.capacity(1, 90), mixed.capacity(10, 90), mixed.capacity(10, 70)), (34, 70, 70));
    }

    #[test]
    fn a_huge_list_at_a_tiny_capacity_stops_at_the_horizon() {
        let e = estimate(
            &Input {
                leads: 1_000_000,
                waits: vec![3],
                daily_capacity: 20,
                ramp: Ramp::default(),
                start: date("2026-11-30"),
            },
            &Deliverability::default(),
        );
        assert!(e.beyond_horizon);
        assert_eq!(Date::of_ms(0), date("1970-01-01"));
    }
}

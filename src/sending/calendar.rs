//! Dates for sending: business days, the sending window and the time zones campaigns may use.
//!
//! Own-brand addresses are ready "about 2 business days after ordering, weekends not counted"
//! (PRODUCT §8, seed 001), so the ready date is computed, never guessed. Campaigns send Monday to
//! Friday inside a window in the recipients' time zone (PRODUCT §8), which needs each zone's
//! offset at a given instant, daylight saving included. Rather than embedding the whole tz
//! database, VibeSell supports a curated list of business time zones, each with its
//! daylight-saving rule — and, because Instantly's campaign `timezone` is a closed enum that
//! omits common names (DOMAIN §1.2), the enum zone that keeps the same local hours, with an hour
//! shift when the two zones always differ by a whole hour.

pub use crate::dates::Date;

use crate::dates::DAY_MS;
const HOUR_MS: i64 = 3_600_000;
/// [`Date::weekday`] of a Sunday.
const SUNDAY: u32 = 6;

/// The UTC date of an instant.
pub fn utc_date(ms: i64) -> Date {
    Date::of_ms(ms)
}

/// Whether `date` is a business day (Monday to Friday; public holidays are not modelled).
pub fn is_business_day(date: Date) -> bool {
    !date.is_weekend()
}

/// The date `n` business days after `date`, weekends not counted: ordered on a Friday (or a
/// Saturday) with `n = 2`, ready on Tuesday.
pub fn add_business_days(date: Date, n: u32) -> Date {
    let mut d = date;
    let mut counted = 0;
    while counted < n {
        d = d.succ();
        if is_business_day(d) {
            counted += 1;
        }
    }
    d
}

/// `YYYY-MM-DD`.
pub fn iso(date: Date) -> String {
    crate::dates::ymd(date)
}

/// For people: `Tue 1 Dec 2026`.
pub fn human(date: Date) -> String {
    crate::dates::human(date)
}

/// Parses `YYYY-MM-DD`.
pub fn parse_iso(s: &str) -> Option<Date> {
    crate::dates::parse_ymd(s.trim())
}

/// Midnight UTC of `date`, in ms.
pub fn date_start_ms(date: Date) -> i64 {
    date.start_ms()
}

/// Whole days from `a` to `b` (negative when `b` is earlier).
pub fn days_between(a: Date, b: Date) -> i64 {
    b.days_since(a)
}

/// Adds calendar days.
pub fn add_days(date: Date, days: i64) -> Date {
    date.add_days(days)
}

/// How many business days there are from `from` (inclusive) to `to` (exclusive).
pub fn business_days_between(from: Date, to: Date) -> i64 {
    let mut n = 0;
    let mut d = from;
    while d < to {
        if is_business_day(d) {
            n += 1;
        }
        d = d.succ();
    }
    n
}

/// A daylight-saving rule, as the law of each region states it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dst {
    /// No daylight saving time.
    None,
    /// United States and Canada: from the second Sunday of March at 02:00 local standard time
    /// to the first Sunday of November at 02:00 local daylight time.
    Us,
    /// European Union and United Kingdom: from the last Sunday of March to the last Sunday of
    /// October, both at 01:00 UTC.
    Eu,
    /// South-eastern Australia: from the first Sunday of October at 02:00 standard time to the
    /// first Sunday of April at 03:00 daylight time.
    AuSouth,
    /// New Zealand: from the last Sunday of September at 02:00 standard time to the first
    /// Sunday of April at 03:00 daylight time.
    Nz,
}

/// A time zone campaigns may use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Zone {
    /// The IANA name (`Europe/London`).
    pub name: &'static str,
    /// For people.
    pub label: &'static str,
    /// Offset from UTC in standard time, in minutes.
    pub std_offset_min: i32,
    /// The daylight-saving rule.
    pub dst: Dst,
    /// The zone of Instantly's campaign `timezone` enum used for it (tested names, DOMAIN §1.2).
    pub instantly: &'static str,
    /// Hours to add to local times to express them in `instantly`: the two zones always differ
    /// by exactly this much (same daylight-saving rule), so the window is the same instants.
    pub instantly_shift_h: i32,
}

macro_rules! zone {
    ($name:literal, $label:literal, $off:expr, $dst:ident, $inst:literal, $shift:expr) => {
        Zone {
            name: $name,
            label: $label,
            std_offset_min: $off,
            dst: Dst::$dst,
            instantly: $inst,
            instantly_shift_h: $shift,
        }
    };
}

/// The time zones campaigns may use.
pub const ZONES: &[Zone] = &[
    zone!("America/New_York", "US Eastern", -300, Us, "America/Detroit", 0),
    zone!("America/Detroit", "US Eastern (Detroit)", -300, Us, "America/Detroit", 0),
    zone!("America/Toronto", "Canada Eastern", -300, Us, "America/Detroit", 0),
    zone!("America/Chicago", "US Central", -360, Us, "America/Chicago", 0),
    zone!("America/Denver", "US Mountain", -420, Us, "America/Boise", 0),
    zone!("America/Boise", "US Mountain (Boise)", -420, Us, "America/Boise", 0),
    zone!("America/Los_Angeles", "US Pacific", -480, Us, "America/Boise", 1),
    zone!("America/Vancouver", "Canada Pacific", -480, Us, "America/Boise", 1),
    zone!("America/Anchorage", "Alaska", -540, Us, "America/Anchorage", 0),
    zone!("America/Bogota", "Colombia", -300, None, "America/Bogota", 0),
    zone!("America/Sao_Paulo", "Brazil (São Paulo)", -180, None, "America/Sao_Paulo", 0),
    zone!("Europe/London", "United Kingdom", 0, Eu, "Europe/Belgrade", 1),
    zone!("Europe/Dublin", "Ireland", 0, Eu, "Europe/Belgrade", 1),
    zone!("Europe/Lisbon", "Portugal", 0, Eu, "Europe/Belgrade", 1),
    zone!("Europe/Paris", "France", 60, Eu, "Europe/Belgrade", 0),
    zone!("Europe/Berlin", "Germany", 60, Eu, "Europe/Belgrade", 0),
    zone!("Europe/Madrid", "Spain", 60, Eu, "Europe/Belgrade", 0),
    zone!("Europe/Amsterdam", "Netherlands", 60, Eu, "Europe/Belgrade", 0),
    zone!("Europe/Brussels", "Belgium", 60, Eu, "Europe/Belgrade", 0),
    zone!("Europe/Rome", "Italy", 60, Eu, "Europe/Belgrade", 0),
    zone!("Europe/Zurich", "Switzerland", 60, Eu, "Europe/Belgrade", 0),
    zone!("Europe/Vienna", "Austria", 60, Eu, "Europe/Belgrade", 0),
    zone!("Europe/Stockholm", "Sweden", 60, Eu, "Europe/Belgrade", 0),
    zone!("Europe/Oslo", "Norway", 60, Eu, "Europe/Belgrade", 0),
    zone!("Europe/Copenhagen", "Denmark", 60, Eu, "Europe/Belgrade", 0),
    zone!("Europe/Warsaw", "Poland", 60, Eu, "Europe/Belgrade", 0),
    zone!("Europe/Prague", "Czechia", 60, Eu, "Europe/Belgrade", 0),
    zone!("Europe/Belgrade", "Central Europe", 60, Eu, "Europe/Belgrade", 0),
    zone!("Europe/Helsinki", "Finland", 120, Eu, "Europe/Helsinki", 0),
    zone!("Europe/Athens", "Greece", 120, Eu, "Europe/Helsinki", 0),
    zone!("Europe/Bucharest", "Romania", 120, Eu, "Europe/Bucharest", 0),
    zone!("Europe/Istanbul", "Turkey", 180, None, "Europe/Istanbul", 0),
    zone!("Asia/Dubai", "United Arab Emirates", 240, None, "Asia/Dubai", 0),
    zone!("Asia/Kolkata", "India", 330, None, "Asia/Kolkata", 0),
    zone!("Asia/Singapore", "Singapore", 480, None, "Asia/Hong_Kong", 0),
    zone!("Asia/Hong_Kong", "Hong Kong", 480, None, "Asia/Hong_Kong", 0),
    zone!("Asia/Tokyo", "Japan", 540, None, "Asia/Hong_Kong", -1),
    zone!("Australia/Perth", "Western Australia", 480, None, "Australia/Perth", 0),
    zone!("Australia/Sydney", "Australia Eastern (Sydney)", 600, AuSouth, "Australia/Melbourne", 0),
    zone!("Australia/Melbourne", "Australia Eastern (Melbourne)", 600, AuSouth, "Australia/Melbourne", 0),
    zone!("Pacific/Auckland", "New Zealand", 720, Nz, "Pacific/Auckland", 0),
];

/// The zone with this IANA name (case-insensitive).
pub fn zone(name: &str) -> Option<&'static Zone> {
    let name = name.trim();
    ZONES.iter().find(|z| z.name.eq_ignore_ascii_case(name))
}

/// The names of the supported zones, for refusals.
pub fn zone_names() -> String {
    ZONES.iter().map(|z| z.name).collect::<Vec<_>>().join(", ")
}

/// The usual business time zone of a country (ISO 3166 alpha-2, or its English name), for
/// choosing a campaign's sending window from its leads.
pub fn zone_for_country(country: &str) -> Option<&'static Zone> {
    let c = country.trim().to_ascii_lowercase();
    let name = match c.as_str() {
        "us" | "usa" | "united states" | "united states of america" => "America/New_York",
        "ca" | "canada" => "America/Toronto",
        "gb" | "uk" | "united kingdom" | "england" | "scotland" | "wales" => "Europe/London",
        "ie" | "ireland" => "Europe/Dublin",
        "pt" | "portugal" => "Europe/Lisbon",
        "fr" | "france" => "Europe/Paris",
        "de" | "germany" => "Europe/Berlin",
        "es" | "spain" => "Europe/Madrid",
        "nl" | "netherlands" => "Europe/Amsterdam",
        "be" | "belgium" => "Europe/Brussels",
        "it" | "italy" => "Europe/Rome",
        "ch" | "switzerland" => "Europe/Zurich",
        "at" | "austria" => "Europe/Vienna",
        "se" | "sweden" => "Europe/Stockholm",
        "no" | "norway" => "Europe/Oslo",
        "dk" | "denmark" => "Europe/Copenhagen",
        "pl" | "poland" => "Europe/Warsaw",
        "cz" | "czechia" | "czech republic" => "Europe/Prague",
        "fi" | "finland" => "Europe/Helsinki",
        "gr" | "greece" => "Europe/Athens",
        "ro" | "romania" => "Europe/Bucharest",
        "tr" | "turkey" | "türkiye" => "Europe/Istanbul",
        "ae" | "united arab emirates" => "Asia/Dubai",
        "in" | "india" => "Asia/Kolkata",
        "sg" | "singapore" => "Asia/Singapore",
        "hk" | "hong kong" => "Asia/Hong_Kong",
        "jp" | "japan" => "Asia/Tokyo",
        "au" | "australia" => "Australia/Sydney",
        "nz" | "new zealand" => "Pacific/Auckland",
        "br" | "brazil" => "America/Sao_Paulo",
        "co" | "colombia" => "America/Bogota",
        _ => return None,
    };
    zone(name)
}

/// The `n`-th (1-based) `weekday` (days since Monday) of `month`, or the last one when `n` is 0.
fn nth_weekday(year: i32, month: u32, weekday: u32, n: u32) -> Date {
    if n == 0 {
        let next = if month == 12 { (year + 1, 1) } else { (year, month + 1) };
        let last = Date::from_ymd(next.0, next.1, 1).unwrap_or_default().pred();
        return last.add_days(-i64::from((last.weekday() + 7 - weekday) % 7));
    }
    let first = Date::from_ymd(year, month, 1).unwrap_or_default();
    first.add_days(i64::from((weekday + 7 - first.weekday()) % 7 + 7 * (n - 1)))
}

/// The UTC instant (ms) of local wall time `hour:00` on `date` in a zone `offset_min` from UTC.
fn local_instant(date: Date, hour: u32, offset_min: i32) -> i64 {
    date_start_ms(date) + i64::from(hour) * HOUR_MS - i64::from(offset_min) * 60_000
}

impl Zone {
    /// Whether daylight saving time is in force at `utc_ms`.
    pub fn is_dst(&self, utc_ms: i64) -> bool {
        let year = utc_date(utc_ms).year();
        let std = self.std_offset_min;
        let dst = std + 60;
        match self.dst {
            Dst::None => false,
            Dst::Us => {
                let start = local_instant(nth_weekday(year, 3, SUNDAY, 2), 2, std);
                let end = local_instant(nth_weekday(year, 11, SUNDAY, 1), 2, dst);
                (start..end).contains(&utc_ms)
            }
            Dst::Eu => {
                let start = local_instant(nth_weekday(year, 3, SUNDAY, 0), 1, 0);
                let end = local_instant(nth_weekday(year, 10, SUNDAY, 0), 1, 0);
                (start..end).contains(&utc_ms)
            }
            // Southern hemisphere: summer spans the new year.
            Dst::AuSouth => {
                let end = local_instant(nth_weekday(year, 4, SUNDAY, 1), 3, dst);
                let start = local_instant(nth_weekday(year, 10, SUNDAY, 1), 2, std);
                utc_ms < end || utc_ms >= start
            }
            Dst::Nz => {
                let end = local_instant(nth_weekday(year, 4, SUNDAY, 1), 3, dst);
                let start = local_instant(nth_weekday(year, 9, SUNDAY, 0), 2, std);
                utc_ms < end || utc_ms >= start
            }
        }
    }

    /// The offset from UTC at `utc_ms`, in minutes.
    pub fn offset_min(&self, utc_ms: i64) -> i32 {
        self.std_offset_min + if self.is_dst(utc_ms) { 60 } else { 0 }
    }

    /// The local date and hour at `utc_ms`.
    pub fn local(&self, utc_ms: i64) -> (Date, u32) {
        let shifted = utc_ms + i64::from(self.offset_min(utc_ms)) * 60_000;
        // An hour of the day, 0..=23.
        (Date::of_ms(shifted), (shifted.rem_euclid(DAY_MS) / HOUR_MS) as u32)
    }

    /// The local date at `utc_ms`.
    pub fn local_date(&self, utc_ms: i64) -> Date {
        self.local(utc_ms).0
    }

    /// The UTC instant of local wall time `hour:00` on `date` (for a time skipped or repeated by
    /// a daylight-saving change, the reading with the offset in force just before).
    pub fn instant(&self, date: Date, hour: u32) -> i64 {
        let guess = local_instant(date, hour, self.std_offset_min);
        let offset = self.offset_min(guess - DAY_MS / 2);
        let at = local_instant(date, hour, offset);
        // Re-check with the offset at the resulting instant (the change happens at night, so
        // business hours always resolve on the second look).
        local_instant(date, hour, self.offset_min(at))
    }
}

/// A weekly sending window in a zone: which weekdays, and from which hour to which hour.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Window {
    /// The zone.
    pub zone: &'static Zone,
    /// First hour (inclusive), local.
    pub from_hour: u32,
    /// Last hour (exclusive), local.
    pub to_hour: u32,
    /// Whether weekends are included (never, by default: PRODUCT §8 says Monday to Friday).
    pub weekends: bool,
}

impl Window {
    /// Whether `date` (local) is a sending day.
    pub fn sends_on(&self, date: Date) -> bool {
        self.weekends || is_business_day(date)
    }

    /// Whether `utc_ms` falls inside the window.
    pub fn contains(&self, utc_ms: i64) -> bool {
        let (date, hour) = self.zone.local(utc_ms);
        self.sends_on(date) && (self.from_hour..self.to_hour).contains(&hour)
    }

    /// The window of the local day `date`, as UTC instants `[start, end)`; `None` on a day
    /// without sending.
    pub fn on(&self, date: Date) -> Option<(i64, i64)> {
        self.sends_on(date)
            .then(|| (self.zone.instant(date, self.from_hour), self.zone.instant(date, self.to_hour)))
    }

    /// The start of the first window at or after `utc_ms` (itself, when inside one).
    pub fn next_open(&self, utc_ms: i64) -> i64 {
        let mut date = self.zone.local_date(utc_ms);
        for _ in 0..8 {
            if let Some((start, end)) = self.on(date) {
                if utc_ms < start {
                    return start;
                }
                if utc_ms < end {
                    return utc_ms;
                }
            }
            date = add_days(date, 1);
        }
        utc_ms
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(s: &str) -> Date {
        parse_iso(s).unwrap()
    }

    fn ms(s: &str) -> i64 {
        chrono::DateTime::parse_from_rfc3339(s).unwrap().timestamp_millis()
    }

    /// The n-th and last weekdays of a month, as chrono finds them.
    #[test]
    fn nth_weekdays_agree_with_chrono() {
        use chrono::{Datelike, NaiveDate, Weekday};
        for year in 1990..2110 {
            for month in 1..=12 {
                for weekday in 0..7 {
                    let w = Weekday::try_from(weekday as u8).unwrap();
                    for n in 1..=4 {
                        let c = NaiveDate::from_weekday_of_month_opt(year, month, w, n as u8).unwrap();
                        assert_eq!(iso(nth_weekday(year, month, weekday, n)), c.to_string());
                    }
                    let last = (1..=5)
                        .filter_map(|n| NaiveDate::from_weekday_of_month_opt(year, month, w, n))
                        .next_back()
                        .unwrap();
                    assert_eq!(iso(nth_weekday(year, month, weekday, 0)), last.to_string());
                    assert_eq!(last.weekday().num_days_from_monday(), weekday);
                }
            }
        }
    }

    #[test]
    fn business_days_skip_weekends() {
        // 2026-11-27 is a Friday.
        assert_eq!(d("2026-11-27").weekday(), 4, "Friday");
        assert_eq!(add_business_days(d("2026-11-27"), 2), d("2026-12-01"), "Friday + 2 = Tuesday");
        assert_eq!(add_business_days(d("2026-11-28"), 2), d("2026-12-01"), "Saturday + 2 = Tuesday");
        assert_eq!(add_business_days(d("2026-11-29"), 2), d("2026-12-01"), "Sunday + 2 = Tuesday");
        assert_eq!(add_business_days(d("2026-11-30"), 2), d("2026-12-02"), "Monday + 2 = Wednesday");
        assert_eq!(add_business_days(d("2026-11-26"), 2), d("2026-11-30"), "Thursday + 2 = Monday");
        assert_eq!(add_business_days(d("2026-11-26"), 0), d("2026-11-26"));
        assert_eq!(add_business_days(d("2026-12-31"), 1), d("2027-01-01"), "across the year");
        assert_eq!(add_business_days(d("2026-11-27"), 10), d("2026-12-11"), "two full weeks");
        assert_eq!(business_days_between(d("2026-11-27"), d("2026-12-01")), 2, "Fri and Mon");
        assert_eq!(iso(d("2026-12-01")), "2026-12-01");
        assert_eq!(human(d("2026-12-01")), "Tue 1 Dec 2026");
        assert!(parse_iso("2026-13-01").is_none());
    }

    #[test]
    fn daylight_saving_follows_each_rule() {
        let ny = zone("america/new_york").unwrap();
        // 2026: US DST from 8 March 07:00 UTC to 1 November 06:00 UTC.
        assert_eq!(ny.offset_min(ms("2026-03-08T06:59:00Z")), -300);
        assert_eq!(ny.offset_min(ms("2026-03-08T07:00:00Z")), -240);
        assert_eq!(ny.offset_min(ms("2026-11-01T05:59:00Z")), -240);
        assert_eq!(ny.offset_min(ms("2026-11-01T06:00:00Z")), -300);
        let london = zone("Europe/London").unwrap();
        // 2026: EU summer time from 29 March to 25 October, 01:00 UTC.
        assert_eq!(london.offset_min(ms("2026-03-29T00:59:00Z")), 0);
        assert_eq!(london.offset_min(ms("2026-03-29T01:00:00Z")), 60);
        assert_eq!(london.offset_min(ms("2026-10-25T00:59:00Z")), 60);
        assert_eq!(london.offset_min(ms("2026-10-25T01:00:00Z")), 0);
        let sydney = zone("Australia/Sydney").unwrap();
        // 2026: AEDT until 5 April 03:00 local (16:00 UTC on the 4th), from 4 October 02:00
        // local (16:00 UTC on the 3rd).
        assert_eq!(sydney.offset_min(ms("2026-01-15T00:00:00Z")), 660);
        assert_eq!(sydney.offset_min(ms("2026-04-04T15:59:00Z")), 660);
        assert_eq!(sydney.offset_min(ms("2026-04-04T16:00:00Z")), 600);
        assert_eq!(sydney.offset_min(ms("2026-10-03T15:59:00Z")), 600);
        assert_eq!(sydney.offset_min(ms("2026-10-03T16:00:00Z")), 660);
        let auckland = zone("Pacific/Auckland").unwrap();
        // 2026: NZDT from 27 September 02:00 local (14:00 UTC on the 26th).
        assert_eq!(auckland.offset_min(ms("2026-09-26T13:59:00Z")), 720);
        assert_eq!(auckland.offset_min(ms("2026-09-26T14:00:00Z")), 780);
        assert_eq!(zone("Asia/Kolkata").unwrap().offset_min(ms("2026-07-01T00:00:00Z")), 330);
    }

    #[test]
    fn instantly_zones_keep_the_same_instants() {
        // Every zone and its Instantly stand-in must differ by exactly the shift, all year.
        let start = ms("2026-01-01T00:00:00Z");
        for z in ZONES {
            let inst = zone(z.instantly).unwrap_or_else(|| panic!("{} maps to an unknown zone", z.name));
            assert_eq!(inst.instantly, inst.name, "{} is itself an Instantly zone", inst.name);
            for hour in (0..366 * 24).step_by(5) {
                let t = start + i64::from(hour) * 3_600_000;
                assert_eq!(
                    inst.offset_min(t) - z.offset_min(t),
                    z.instantly_shift_h * 60,
                    "{} vs {} at {t}",
                    z.name,
                    inst.name
                );
            }
        }
    }

    #[test]
    fn windows_are_business_hours_in_the_zone() {
        let w = Window { zone: zone("Europe/Paris").unwrap(), from_hour: 9, to_hour: 17, weekends: false };
        // Monday 30 Nov 2026, CET (UTC+1): 09:00–17:00 local = 08:00–16:00 UTC.
        let (start, end) = w.on(d("2026-11-30")).unwrap();
        assert_eq!((start, end), (ms("2026-11-30T08:00:00Z"), ms("2026-11-30T16:00:00Z")));
        assert!(w.on(d("2026-11-29")).is_none(), "Sunday");
        assert!(w.contains(ms("2026-11-30T08:00:00Z")));
        assert!(!w.contains(ms("2026-11-30T16:00:00Z")));
        // From Saturday noon, the next window opens on Monday.
        assert_eq!(w.next_open(ms("2026-11-28T12:00:00Z")), ms("2026-11-30T08:00:00Z"));
        assert_eq!(w.next_open(ms("2026-11-30T10:00:00Z")), ms("2026-11-30T10:00:00Z"));
        // Summer time: 09:00 CEST = 07:00 UTC.
        assert_eq!(w.on(d("2026-06-01")).unwrap().0, ms("2026-06-01T07:00:00Z"));
        let ny = Window { zone: zone("America/New_York").unwrap(), ..w };
        assert_eq!(ny.on(d("2026-03-09")).unwrap().0, ms("2026-03-09T13:00:00Z"), "EDT from 8 March");
        assert_eq!(zone_for_country("GB").unwrap().name, "Europe/London");
        assert_eq!(zone_for_country("germany").unwrap().name, "Europe/Berlin");
        assert!(zone_for_country("Atlantis").is_none());
    }
}

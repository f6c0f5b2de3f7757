//! Dates and times as text, written by hand rather than through chrono's `format` and
//! `parse_from_str`: those interpret strftime patterns at run time, and the pattern parser and
//! formatter cost the Worker's wasm about 20 KB for the six fixed shapes used here; and the
//! calendar arithmetic itself ([`Date`]).

use std::fmt;

/// Milliseconds in a (UTC) day.
pub const DAY_MS: i64 = 86_400_000;

/// A day of the proleptic Gregorian calendar, as days since 1970-01-01 (negative before). By
/// hand, with the civil-from-days algorithms of Howard Hinnant's "chrono-Compatible Low-Level
/// Date Algorithms", rather than chrono's `NaiveDate`, whose year-flag tables and conversions
/// cost the Worker's wasm about 2 KB gzip for the day arithmetic used here; the tests hold it to
/// chrono day by day.
#[derive(Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Date(i64);

impl Date {
    /// The date of year `y`, month `m` (1–12), day `d`; `None` when there is no such day.
    pub fn from_ymd(y: i32, m: u32, d: u32) -> Option<Date> {
        if !(1..=12).contains(&m) || d == 0 || d > days_in_month(y, m) {
            return None;
        }
        let y = i64::from(y) - i64::from(m <= 2);
        let (era, yoe) = (y.div_euclid(400), y.rem_euclid(400));
        let doy = (153 * i64::from(if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + i64::from(d) - 1;
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
        Some(Date(era * 146_097 + doe - 719_468))
    }

    /// The UTC date of an instant in ms since the epoch.
    pub fn of_ms(ms: i64) -> Date {
        Date(ms.div_euclid(DAY_MS))
    }

    /// Midnight UTC of the date, in ms since the epoch.
    pub fn start_ms(self) -> i64 {
        self.0.saturating_mul(DAY_MS)
    }

    /// `(year, month, day)`.
    pub fn ymd(self) -> (i32, u32, u32) {
        let z = self.0 + 719_468;
        let (era, doe) = (z.div_euclid(146_097), z.rem_euclid(146_097));
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
        let mp = (5 * doy + 2) / 153;
        // `doy` and `mp` keep the day in 1..=31 and the month in 1..=12.
        let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
        let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
        let y = yoe + era * 400 + i64::from(m <= 2);
        (i32::try_from(y).unwrap_or(if y < 0 { i32::MIN } else { i32::MAX }), m, d)
    }

    /// The year.
    pub fn year(self) -> i32 {
        self.ymd().0
    }

    /// Days since Monday: 0 on a Monday, 6 on a Sunday (1970-01-01 was a Thursday).
    pub fn weekday(self) -> u32 {
        (self.0 + 3).rem_euclid(7) as u32
    }

    /// Whether the date is a Saturday or a Sunday.
    pub fn is_weekend(self) -> bool {
        self.weekday() >= 5
    }

    /// The date `days` later (earlier when negative).
    pub fn add_days(self, days: i64) -> Date {
        Date(self.0.saturating_add(days))
    }

    /// The next day.
    pub fn succ(self) -> Date {
        self.add_days(1)
    }

    /// The day before.
    pub fn pred(self) -> Date {
        self.add_days(-1)
    }

    /// Whole days from `earlier` to this date (negative when `earlier` is later).
    pub fn days_since(self, earlier: Date) -> i64 {
        self.0 - earlier.0
    }
}

/// `YYYY-MM-DD` (a year beyond 0–9999 signed, as ISO 8601 and chrono write it), also for `{:?}`.
impl fmt::Display for Date {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (y, m, d) = self.ymd();
        if (0..=9999).contains(&y) {
            write!(f, "{y:04}-{m:02}-{d:02}")
        } else {
            write!(f, "{y:+05}-{m:02}-{d:02}")
        }
    }
}

impl fmt::Debug for Date {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

fn days_in_month(y: i32, m: u32) -> u32 {
    match m {
        2 if y % 4 == 0 && (y % 100 != 0 || y % 400 == 0) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

const WEEKDAYS: [&str; 7] = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"];
const MONTHS: [&str; 12] =
    ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];

/// `YYYY-MM-DD`.
pub fn ymd(date: Date) -> String {
    date.to_string()
}

/// For people: `Tue 1 Dec 2026`.
pub fn human(date: Date) -> String {
    let (y, m, d) = date.ymd();
    format!("{} {d} {} {y}", WEEKDAYS[date.weekday() as usize % 7], MONTHS[(m as usize + 11) % 12])
}

/// Parses `YYYY-MM-DD` (month and day may have one digit, as chrono's `%m` and `%d` allow).
pub fn parse_ymd(s: &str) -> Option<Date> {
    let mut parts = s.split('-');
    let (y, m, d) = (parts.next()?, parts.next()?, parts.next()?);
    let digits = |p: &str, min: usize, max: usize| {
        (min..=max).contains(&p.len()) && p.bytes().all(|b| b.is_ascii_digit())
    };
    if parts.next().is_some() || !digits(y, 4, 4) || !digits(m, 1, 2) || !digits(d, 1, 2) {
        return None;
    }
    Date::from_ymd(y.parse().ok()?, m.parse().ok()?, d.parse().ok()?)
}

/// The UTC date and the milliseconds into it of an instant.
fn split(ms: i64) -> (Date, i64) {
    (Date::of_ms(ms), ms.rem_euclid(DAY_MS))
}

/// `YYYY-MM-DD HH:MM UTC`, for people.
pub fn utc_minute(ms: i64) -> String {
    let (date, t) = split(ms);
    format!("{date} {:02}:{:02} UTC", t / 3_600_000, t / 60_000 % 60)
}

/// The UTC month, `YYYY-MM`.
pub fn month(ms: i64) -> String {
    let (y, m, _) = Date::of_ms(ms).ymd();
    format!("{y:04}-{m:02}")
}

/// RFC 3339 in UTC with milliseconds: `YYYY-MM-DDTHH:MM:SS.mmmZ`.
pub fn rfc3339_ms(ms: i64) -> String {
    let (date, t) = split(ms);
    format!("{date}T{:02}:{:02}:{:02}.{:03}Z", t / 3_600_000, t / 60_000 % 60, t / 1000 % 60, t % 1000)
}

/// Parses an RFC 3339 date-time (§5.6: `2026-12-01T09:30:00Z`, `t` or a space for the `T`, any
/// number of fractional digits, `Z` or a `±HH:MM` offset) into milliseconds since the epoch,
/// fractions truncated, as chrono's `parse_from_rfc3339` and `timestamp_millis` give. By hand,
/// because chrono's parser (its scanner and offset reader) cost the Worker's wasm about 3 KB raw
/// for the provider timestamps read here.
pub fn parse_rfc3339_ms(s: &str) -> Option<i64> {
    let b = s.as_bytes();
    let num = |from: usize, len: usize| -> Option<u32> {
        let digits = b.get(from..from + len)?;
        digits.iter().try_fold(0_u32, |n, &d| d.is_ascii_digit().then(|| n * 10 + u32::from(d - b'0')))
    };
    let at = |i: usize, c: u8| b.get(i) == Some(&c);
    let shape = at(4, b'-') && at(7, b'-') && at(13, b':') && at(16, b':');
    if !shape || !matches!(b.get(10), Some(b'T' | b't' | b' ')) {
        return None;
    }
    let date = Date::from_ymd(i32::try_from(num(0, 4)?).ok()?, num(5, 2)?, num(8, 2)?)?;
    let (hour, minute, second) = (num(11, 2)?, num(14, 2)?, num(17, 2)?);
    if hour > 23 || minute > 59 || second > 60 {
        return None;
    }
    let mut i = 19;
    let mut millis = 0;
    if at(i, b'.') {
        let digits = b[i + 1..].iter().take_while(|d| d.is_ascii_digit()).count();
        if digits == 0 {
            return None;
        }
        // Milliseconds: the first three digits, zeros for those missing; the rest truncated.
        let fraction = b[i + 1..i + 1 + digits].iter().chain([b'0'; 3].iter()).take(3);
        millis = fraction.fold(0, |n, d| n * 10 + i64::from(d - b'0'));
        i += 1 + digits;
    }
    let offset_secs = match b.get(i..)? {
        [b'Z' | b'z'] => 0,
        [sign @ (b'+' | b'-'), _, _, b':', _, _] => {
            let (h, m) = (num(i + 1, 2)?, num(i + 4, 2)?);
            if h > 23 || m > 59 {
                return None;
            }
            let secs = i64::from(h * 3600 + m * 60);
            if *sign == b'-' { -secs } else { secs }
        }
        _ => return None,
    };
    let day_secs = i64::from(hour * 3600 + minute * 60 + second);
    Some((date.0 * 86_400 + day_secs - offset_secs) * 1000 + millis)
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::{DateTime, Datelike, NaiveDate};

    fn chrono_date(d: Date) -> NaiveDate {
        DateTime::from_timestamp_millis(d.start_ms()).unwrap().date_naive()
    }

    /// Every day from 1600 to 2500, and some far ones, read as chrono reads them.
    #[test]
    fn days_agree_with_chrono() {
        let days = (-135_000..194_000).chain([-719_468, -719_469, 2_932_896, -1_000_000, 3_000_000]);
        for n in days {
            let date = Date(n);
            let c = chrono_date(date);
            assert_eq!(date.ymd(), (c.year(), c.month(), c.day()), "{n}");
            assert_eq!(date.weekday(), c.weekday().num_days_from_monday(), "{n}");
            assert_eq!(Date::from_ymd(c.year(), c.month(), c.day()), Some(date), "{n}");
            assert_eq!(date.to_string(), c.format("%Y-%m-%d").to_string(), "{n}");
        }
        for (y, m, d) in [
            (2026, 2, 29),
            (2100, 2, 29),
            (2026, 4, 31),
            (2026, 13, 1),
            (2026, 0, 1),
            (2026, 1, 0),
            (2026, 1, 32),
        ] {
            assert_eq!(Date::from_ymd(y, m, d), None, "{y}-{m}-{d}");
        }
        assert_eq!(Date::from_ymd(2000, 2, 29).map(|d| d.to_string()).as_deref(), Some("2000-02-29"));
        assert_eq!(Date::of_ms(-1), Date(-1), "an instant before the epoch is on the day before");
        assert_eq!(Date::default(), Date::from_ymd(1970, 1, 1).unwrap());
        assert_eq!(Date(10).days_since(Date(3)), 7);
        assert!(Date::from_ymd(2026, 11, 28).unwrap().is_weekend());
        assert!(!Date::from_ymd(2026, 11, 27).unwrap().is_weekend());
    }

    /// The hand-written RFC 3339 reader agrees with chrono's on what it accepts and what it gives.
    #[test]
    fn reads_rfc_3339_as_chrono_does() {
        let chrono_ms = |s: &str| DateTime::parse_from_rfc3339(s).ok().map(|t| t.timestamp_millis());
        for text in [
            "2026-12-01T09:30:00Z",
            "2026-12-01T09:30:00.123Z",
            "2026-12-01T09:30:00.1Z",
            "2026-12-01T09:30:00.123456789Z",
            "2026-12-01T09:30:00.9999999999Z",
            "2026-12-01t09:30:00z",
            "2026-12-01 09:30:00Z",
            "2026-12-01T09:30:00+05:30",
            "2026-12-01T09:30:00-08:00",
            "2026-12-01T00:00:00.000+14:00",
            "1969-12-31T23:59:59.999Z",
            "1970-01-01T00:00:00Z",
            "2000-02-29T12:00:00Z",
            "2026-06-30T23:59:60Z",
            "2026-12-01T09:30:00",
            "2026-12-01T09:30Z",
            "2026-12-01T24:00:00Z",
            "2026-12-01T09:60:00Z",
            "2026-12-01T09:30:61Z",
            "2026-02-30T09:30:00Z",
            "2026-12-01T09:30:00.Z",
            "2026-12-01T09:30:00+0530",
            "2026-12-01T09:30:00+24:00",
            "2026-12-01T09:30:00+05:60",
            "2026-12-01X09:30:00Z",
            "2026-12-01T09:30:00Zx",
            "26-12-01T09:30:00Z",
            "2026-1-01T09:30:00Z",
            "+2026-12-01T09:30:00Z",
            "",
            "2026-12-01T09:30:00.123+01:00",
        ] {
            assert_eq!(parse_rfc3339_ms(text), chrono_ms(text), "{text}");
        }
    }

    /// The hand-written shapes are exactly what chrono's patterns gave.
    #[test]
    fn match_chrono_patterns() {
        for ms in
            [0_i64, 1_764_547_200_123, 1_800_000_000_999, 951_782_400_000, 4_102_444_799_999, -1, -86_399_999]
        {
            let t = DateTime::from_timestamp_millis(ms).unwrap();
            let d = Date::of_ms(ms);
            assert_eq!(chrono_date(d), t.date_naive());
            assert_eq!(ymd(d), t.format("%Y-%m-%d").to_string());
            assert_eq!(human(d), t.format("%a %-d %b %Y").to_string());
            assert_eq!(utc_minute(ms), t.format("%Y-%m-%d %H:%M UTC").to_string());
            assert_eq!(month(ms), t.format("%Y-%m").to_string());
            assert_eq!(rfc3339_ms(ms), t.format("%Y-%m-%dT%H:%M:%S%.3fZ").to_string());
            assert_eq!(parse_ymd(&ymd(d)), Some(d));
        }
        for (text, ok) in [
            ("2026-12-01", true),
            ("2026-1-5", true),
            ("2026-02-30", false),
            ("26-12-01", false),
            ("2026-12-01x", false),
            ("2026-12", false),
            ("", false),
            ("2026-+1-01", false),
        ] {
            assert_eq!(parse_ymd(text).is_some(), ok, "{text}");
            assert_eq!(
                parse_ymd(text).map(chrono_date),
                NaiveDate::parse_from_str(text, "%Y-%m-%d").ok().filter(|_| ok),
                "{text}"
            );
        }
    }
}

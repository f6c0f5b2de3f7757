//! Dates and times: the civil calendar of the Worker's dates and the fixed text shapes of tool
//! inputs and outputs, on jiff (issue 41). Instants are milliseconds since the epoch from the
//! Worker's clock; nothing here reads a clock.

use std::fmt;

use jiff::tz::TimeZone;
use jiff::{Span, Timestamp, civil};

/// Milliseconds in a (UTC) day.
pub const DAY_MS: i64 = 86_400_000;

/// A day of the proleptic Gregorian calendar, years -9999 to 9999 (jiff's range).
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Date(civil::Date);

/// The epoch's day, which the Worker's dates default to (not jiff's year 0).
const EPOCH: civil::Date = civil::date(1970, 1, 1);

impl Default for Date {
    fn default() -> Date {
        Date(EPOCH)
    }
}

impl Date {
    /// The date of year `y`, month `m` (1–12), day `d`; `None` when there is no such day.
    pub fn from_ymd(y: i32, m: u32, d: u32) -> Option<Date> {
        let (y, m, d) = (i16::try_from(y).ok()?, i8::try_from(m).ok()?, i8::try_from(d).ok()?);
        civil::Date::new(y, m, d).ok().map(Date)
    }

    /// The UTC date of an instant in ms since the epoch.
    pub fn of_ms(ms: i64) -> Date {
        local(&TimeZone::UTC, ms).0
    }

    /// Midnight UTC of the date, in ms since the epoch.
    pub fn start_ms(self) -> i64 {
        instant(&TimeZone::UTC, self, 0)
    }

    /// `(year, month, day)`.
    pub fn ymd(self) -> (i32, u32, u32) {
        let d = self.0;
        (d.year().into(), d.month().unsigned_abs().into(), d.day().unsigned_abs().into())
    }

    /// The year.
    pub fn year(self) -> i32 {
        self.0.year().into()
    }

    /// Days since Monday: 0 on a Monday, 6 on a Sunday.
    pub fn weekday(self) -> u32 {
        self.0.weekday().to_monday_zero_offset().unsigned_abs().into()
    }

    /// Whether the date is a Saturday or a Sunday.
    pub fn is_weekend(self) -> bool {
        self.weekday() >= 5
    }

    /// The date `days` later (earlier when negative), held to jiff's range.
    pub fn add_days(self, days: i64) -> Date {
        let later = Span::new().try_days(days).and_then(|span| self.0.checked_add(span));
        Date(later.unwrap_or(if days < 0 { civil::Date::MIN } else { civil::Date::MAX }))
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
        // A span in days holds the distance between any two of jiff's dates, so this never fails.
        self.0.since(earlier.0).map_or(0, |span| span.get_days().into())
    }
}

/// `YYYY-MM-DD`, also for `{:?}`.
impl fmt::Display for Date {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.0, f)
    }
}

impl fmt::Debug for Date {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

/// The instant `ms`, held to jiff's range (every instant the Worker handles is inside it).
pub(crate) fn timestamp(ms: i64) -> Timestamp {
    Timestamp::from_millisecond(ms).unwrap_or(if ms < 0 { Timestamp::MIN } else { Timestamp::MAX })
}

/// The local date and hour (0–23) in `tz` at the instant `ms`.
pub fn local(tz: &TimeZone, ms: i64) -> (Date, u32) {
    let at = tz.to_datetime(timestamp(ms));
    (Date(at.date()), at.hour().unsigned_abs().into())
}

/// The instant (ms) of wall time `hour:00` on `date` in `tz`; `hour` 24 is midnight of the next
/// day. A time skipped or repeated by a change of offset is read with the offset in force before
/// the change (jiff's "compatible" choice, RFC 5545 §3.3.5's).
pub fn instant(tz: &TimeZone, date: Date, hour: u32) -> i64 {
    let wall = Span::new().try_hours(hour).and_then(|h| date.0.at(0, 0, 0, 0).checked_add(h));
    let at = wall.and_then(|wall| tz.to_ambiguous_timestamp(wall).compatible());
    at.unwrap_or(if date.0 < EPOCH { Timestamp::MIN } else { Timestamp::MAX }).as_millisecond()
}

/// `YYYY-MM-DD`.
pub fn ymd(date: Date) -> String {
    date.to_string()
}

/// For people: `Tue 1 Dec 2026`.
pub fn human(date: Date) -> String {
    date.0.strftime("%a %-d %b %Y").to_string()
}

/// Parses `YYYY-MM-DD` (month and day may have one digit).
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

/// `YYYY-MM-DD HH:MM UTC`, for people.
pub fn utc_minute(ms: i64) -> String {
    timestamp(ms).strftime("%Y-%m-%d %H:%M UTC").to_string()
}

/// The UTC month, `YYYY-MM`.
pub fn month(ms: i64) -> String {
    timestamp(ms).strftime("%Y-%m").to_string()
}

/// RFC 3339 in UTC with milliseconds: `YYYY-MM-DDTHH:MM:SS.mmmZ`.
pub fn rfc3339_ms(ms: i64) -> String {
    format!("{:.3}", timestamp(ms))
}

/// Parses a date-time with an offset (RFC 3339 §5.6: `2026-12-01T09:30:00Z`, `t` or a space for
/// the `T`, fractional seconds, `Z` or a `±HH:MM` offset; jiff also reads the rest of RFC 9557's
/// Temporal shapes) into milliseconds since the epoch, fractions truncated.
pub fn parse_rfc3339_ms(s: &str) -> Option<i64> {
    s.parse::<Timestamp>().ok().map(Timestamp::as_millisecond)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn date(s: &str) -> Date {
        parse_ymd(s).unwrap()
    }

    /// Leap days, month ends, year boundaries and the edges of the range.
    #[test]
    fn calendar_days() {
        for (y, m, d, ok) in [
            (2000, 2, 29, true),
            (2028, 2, 29, true),
            (2026, 2, 29, false),
            (2100, 2, 29, false),
            (2026, 4, 31, false),
            (2026, 12, 31, true),
            (2026, 13, 1, false),
            (2026, 0, 1, false),
            (2026, 1, 0, false),
            (2026, 1, 32, false),
            (10_000, 1, 1, false),
            (2026, 300, 1, false),
        ] {
            assert_eq!(Date::from_ymd(y, m, d).is_some(), ok, "{y}-{m}-{d}");
        }
        assert_eq!(date("2028-02-29").ymd(), (2028, 2, 29));
        assert_eq!(date("2028-02-28").succ(), date("2028-02-29"), "a leap day");
        assert_eq!(date("2027-02-28").succ(), date("2027-03-01"), "no leap day");
        assert_eq!(date("2026-12-31").succ(), date("2027-01-01"), "across the year");
        assert_eq!(date("2027-01-01").pred(), date("2026-12-31"));
        assert_eq!(date("2028-03-01").add_days(-1), date("2028-02-29"));
        assert_eq!(date("2029-01-01").days_since(date("2028-01-01")), 366);
        assert_eq!(date("2027-01-01").days_since(date("2026-01-01")), 365);
        assert_eq!(date("2026-01-01").days_since(date("2027-01-01")), -365);
        assert_eq!(date("2026-11-27").weekday(), 4, "a Friday");
        assert_eq!(date("2026-11-29").weekday(), 6, "a Sunday");
        assert_eq!(date("2026-11-30").weekday(), 0, "a Monday");
        assert!(date("2026-11-28").is_weekend());
        assert!(!date("2026-11-27").is_weekend());
        assert_eq!(date("2026-12-01").year(), 2026);

        assert_eq!(Date::of_ms(0), date("1970-01-01"));
        assert_eq!(Date::of_ms(-1), date("1969-12-31"), "an instant before the epoch is on the day before");
        assert_eq!(Date::of_ms(DAY_MS - 1), date("1970-01-01"));
        assert_eq!(Date::of_ms(951_782_400_000), date("2000-02-29"));
        assert_eq!(date("2000-02-29").start_ms(), 951_782_400_000);
        assert_eq!(date("1969-12-31").start_ms(), -DAY_MS);
        assert_eq!(Date::default(), date("1970-01-01"));

        // Out of range: held to the ends, never a panic.
        assert_eq!(date("2026-12-01").add_days(i64::MAX).ymd(), (9999, 12, 31));
        assert_eq!(date("2026-12-01").add_days(i64::MIN).ymd(), (-9999, 1, 1));
        assert_eq!(Date::of_ms(i64::MAX).year(), 9999);
        assert_eq!(Date::of_ms(i64::MIN).year(), -9999);
        assert!(Date::from_ymd(9999, 12, 31).unwrap().start_ms() > 0);
    }

    /// The text shapes of tool inputs and outputs.
    #[test]
    fn text_shapes() {
        for (ms, day, people, minute, month_, rfc) in [
            (
                0,
                "1970-01-01",
                "Thu 1 Jan 1970",
                "1970-01-01 00:00 UTC",
                "1970-01",
                "1970-01-01T00:00:00.000Z",
            ),
            (
                1_764_547_200_123,
                "2025-12-01",
                "Mon 1 Dec 2025",
                "2025-12-01 00:00 UTC",
                "2025-12",
                "2025-12-01T00:00:00.123Z",
            ),
            (
                951_825_600_000,
                "2000-02-29",
                "Tue 29 Feb 2000",
                "2000-02-29 12:00 UTC",
                "2000-02",
                "2000-02-29T12:00:00.000Z",
            ),
            (
                1_830_297_599_999,
                "2027-12-31",
                "Fri 31 Dec 2027",
                "2027-12-31 23:59 UTC",
                "2027-12",
                "2027-12-31T23:59:59.999Z",
            ),
            (
                -1,
                "1969-12-31",
                "Wed 31 Dec 1969",
                "1969-12-31 23:59 UTC",
                "1969-12",
                "1969-12-31T23:59:59.999Z",
            ),
        ] {
            let d = Date::of_ms(ms);
            assert_eq!((ymd(d), format!("{d:?}")), (day.to_owned(), day.to_owned()), "{ms}");
            assert_eq!(human(d), people, "{ms}");
            assert_eq!(utc_minute(ms), minute, "{ms}");
            assert_eq!(month(ms), month_, "{ms}");
            assert_eq!(rfc3339_ms(ms), rfc, "{ms}");
            assert_eq!(parse_rfc3339_ms(rfc), Some(ms), "{rfc}");
            assert_eq!(parse_ymd(day), Some(d), "{day}");
        }
        for (text, ymd) in [
            ("2026-12-01", Some((2026, 12, 1))),
            ("2026-1-5", Some((2026, 1, 5))),
            ("2028-02-29", Some((2028, 2, 29))),
            ("2026-02-29", None),
            ("2026-02-30", None),
            ("26-12-01", None),
            ("02026-12-01", None),
            ("2026-12-01x", None),
            ("2026-12-001", None),
            ("2026-12", None),
            ("2026-12-01-01", None),
            ("", None),
            ("2026-+1-01", None),
            ("+2026-12-01", None),
        ] {
            assert_eq!(parse_ymd(text).map(Date::ymd), ymd, "{text}");
        }
    }

    /// Provider timestamps: offsets, fractions (truncated to the millisecond) and refusals.
    #[test]
    fn reads_rfc_3339() {
        for (text, ms) in [
            ("2026-12-01T09:30:00Z", Some(1_796_117_400_000)),
            ("2026-12-01t09:30:00z", Some(1_796_117_400_000)),
            ("2026-12-01 09:30:00Z", Some(1_796_117_400_000)),
            ("2026-12-01T09:30:00.123Z", Some(1_796_117_400_123)),
            ("2026-12-01T09:30:00.1Z", Some(1_796_117_400_100)),
            ("2026-12-01T09:30:00.123456789Z", Some(1_796_117_400_123)),
            ("2026-12-01T09:30:00.999999999Z", Some(1_796_117_400_999)),
            ("2026-12-01T09:30:00+05:30", Some(1_796_097_600_000)),
            ("2026-12-01T09:30:00-08:00", Some(1_796_146_200_000)),
            ("2026-12-01T00:00:00.000+14:00", Some(1_796_032_800_000)),
            ("1969-12-31T23:59:59.999Z", Some(-1)),
            ("2000-02-29T12:00:00Z", Some(951_825_600_000)),
            ("2026-12-01T09:30:00", None),
            ("2026-12-01T24:00:00Z", None),
            ("2026-12-01T09:60:00Z", None),
            ("2026-12-01T09:30:61Z", None),
            ("2026-02-29T09:30:00Z", None),
            ("2026-12-01T09:30:00.Z", None),
            ("2026-12-01T09:30:00+26:00", None),
            ("2026-12-01T09:30:00+05:60", None),
            ("2026-12-01X09:30:00Z", None),
            ("2026-12-01T09:30:00Zx", None),
            ("26-12-01T09:30:00Z", None),
            ("2026-1-01T09:30:00Z", None),
            ("", None),
        ] {
            assert_eq!(parse_rfc3339_ms(text), ms, "{text}");
        }
    }
}

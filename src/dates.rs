//! Dates and times as text, written by hand rather than through chrono's `format` and
//! `parse_from_str`: those interpret strftime patterns at run time, and the pattern parser and
//! formatter cost the Worker's wasm about 20 KB for the six fixed shapes used here. chrono still
//! does the calendar arithmetic.

use chrono::{DateTime, Datelike, NaiveDate, Timelike, Utc};

const WEEKDAYS: [&str; 7] = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"];
const MONTHS: [&str; 12] =
    ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];

/// `YYYY-MM-DD`.
pub fn ymd(date: NaiveDate) -> String {
    format!("{:04}-{:02}-{:02}", date.year(), date.month(), date.day())
}

/// For people: `Tue 1 Dec 2026`.
pub fn human(date: NaiveDate) -> String {
    let weekday = WEEKDAYS[date.weekday().num_days_from_monday() as usize % 7];
    let month = MONTHS[date.month0() as usize % 12];
    format!("{weekday} {} {month} {}", date.day(), date.year())
}

/// Parses `YYYY-MM-DD` (month and day may have one digit, as chrono's `%m` and `%d` allow).
pub fn parse_ymd(s: &str) -> Option<NaiveDate> {
    let mut parts = s.split('-');
    let (y, m, d) = (parts.next()?, parts.next()?, parts.next()?);
    let digits = |p: &str, min: usize, max: usize| {
        (min..=max).contains(&p.len()) && p.bytes().all(|b| b.is_ascii_digit())
    };
    if parts.next().is_some() || !digits(y, 4, 4) || !digits(m, 1, 2) || !digits(d, 1, 2) {
        return None;
    }
    NaiveDate::from_ymd_opt(y.parse().ok()?, m.parse().ok()?, d.parse().ok()?)
}

fn utc(ms: i64) -> Option<DateTime<Utc>> {
    DateTime::from_timestamp_millis(ms)
}

/// `YYYY-MM-DD HH:MM UTC`, for people; `None` out of chrono's range.
pub fn utc_minute(ms: i64) -> Option<String> {
    let t = utc(ms)?;
    Some(format!("{} {:02}:{:02} UTC", ymd(t.date_naive()), t.hour(), t.minute()))
}

/// The UTC month, `YYYY-MM`.
pub fn month(ms: i64) -> Option<String> {
    let t = utc(ms)?;
    Some(format!("{:04}-{:02}", t.year(), t.month()))
}

/// RFC 3339 in UTC with milliseconds: `YYYY-MM-DDTHH:MM:SS.mmmZ`.
pub fn rfc3339_ms(ms: i64) -> Option<String> {
    let t = utc(ms)?;
    Some(format!(
        "{}T{:02}:{:02}:{:02}.{:03}Z",
        ymd(t.date_naive()),
        t.hour(),
        t.minute(),
        t.second(),
        t.timestamp_subsec_millis()
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The hand-written shapes are exactly what chrono's patterns gave.
    #[test]
    fn match_chrono_patterns() {
        for ms in [0_i64, 1_764_547_200_123, 1_800_000_000_999, 951_782_400_000, 4_102_444_799_999] {
            let t = utc(ms).unwrap();
            let d = t.date_naive();
            assert_eq!(ymd(d), d.format("%Y-%m-%d").to_string());
            assert_eq!(human(d), d.format("%a %-d %b %Y").to_string());
            assert_eq!(utc_minute(ms).unwrap(), t.format("%Y-%m-%d %H:%M UTC").to_string());
            assert_eq!(month(ms).unwrap(), t.format("%Y-%m").to_string());
            assert_eq!(rfc3339_ms(ms).unwrap(), t.format("%Y-%m-%dT%H:%M:%S%.3fZ").to_string());
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
                parse_ymd(text),
                NaiveDate::parse_from_str(text, "%Y-%m-%d").ok().filter(|_| ok),
                "{text}"
            );
        }
    }
}

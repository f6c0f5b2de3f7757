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
    let date = NaiveDate::from_ymd_opt(i32::try_from(num(0, 4)?).ok()?, num(5, 2)?, num(8, 2)?)?;
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
    let days = i64::from(date.num_days_from_ce()) - 719_163; // 1970-01-01 is day 719,163 of the era
    Some((days * 86_400 + day_secs - offset_secs) * 1000 + millis)
}

#[cfg(test)]
mod tests {
    use super::*;

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

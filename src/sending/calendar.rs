//! Dates for sending: business days, the sending window and the time zones campaigns may use.
//!
//! Own-brand addresses are ready "about 2 business days after ordering, weekends not counted"
//! (PRODUCT §8, seed 001), so the ready date is computed, never guessed. Campaigns send Monday to
//! Friday inside a window in the recipients' time zone (PRODUCT §8), which needs each zone's
//! offset at a given instant, daylight saving included. VibeSell supports a curated list of
//! business time zones, each with its rules from the IANA tz database (jiff's `tz::get!` embeds
//! the data of these zones only, at build time) — and, because Instantly's campaign `timezone`
//! is a closed enum that omits common names (DOMAIN §1.2), the enum zone that keeps the same
//! local hours, with an hour shift when the two zones always differ by a whole hour.

pub use crate::dates::Date;

use jiff::tz::TimeZone;

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

/// A time zone campaigns may use.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Zone {
    /// The IANA name (`Europe/London`).
    pub name: &'static str,
    /// For people.
    pub label: &'static str,
    /// The zone's offsets and their changes, from the tz database.
    pub tz: TimeZone,
    /// The zone of Instantly's campaign `timezone` enum used for it (tested names, DOMAIN §1.2).
    pub instantly: &'static str,
    /// Hours to add to local times to express them in `instantly`: the two zones always differ
    /// by exactly this much (same daylight-saving rule), so the window is the same instants
    /// (all year for every zone but America/Vancouver, see [`ZONES`]).
    pub instantly_shift_h: i32,
}

macro_rules! zone {
    ($name:literal, $label:literal, $inst:literal, $shift:expr) => {
        Zone {
            name: $name,
            label: $label,
            tz: jiff::tz::get!($name),
            instantly: $inst,
            instantly_shift_h: $shift,
        }
    };
}

/// The time zones campaigns may use.
pub static ZONES: &[Zone] = &[
    zone!("America/New_York", "US Eastern", "America/Detroit", 0),
    zone!("America/Detroit", "US Eastern (Detroit)", "America/Detroit", 0),
    zone!("America/Toronto", "Canada Eastern", "America/Detroit", 0),
    zone!("America/Chicago", "US Central", "America/Chicago", 0),
    zone!("America/Denver", "US Mountain", "America/Boise", 0),
    zone!("America/Boise", "US Mountain (Boise)", "America/Boise", 0),
    zone!("America/Los_Angeles", "US Pacific", "America/Boise", 1),
    // British Columbia keeps UTC-7 all year under the tz database's current rules, and no zone of
    // Instantly's tested enum does: Boise keeps the same instants outside US summer time only.
    zone!("America/Vancouver", "Canada Pacific", "America/Boise", 0),
    zone!("America/Anchorage", "Alaska", "America/Anchorage", 0),
    zone!("America/Bogota", "Colombia", "America/Bogota", 0),
    zone!("America/Sao_Paulo", "Brazil (São Paulo)", "America/Sao_Paulo", 0),
    zone!("Europe/London", "United Kingdom", "Europe/Belgrade", 1),
    zone!("Europe/Dublin", "Ireland", "Europe/Belgrade", 1),
    zone!("Europe/Lisbon", "Portugal", "Europe/Belgrade", 1),
    zone!("Europe/Paris", "France", "Europe/Belgrade", 0),
    zone!("Europe/Berlin", "Germany", "Europe/Belgrade", 0),
    zone!("Europe/Madrid", "Spain", "Europe/Belgrade", 0),
    zone!("Europe/Amsterdam", "Netherlands", "Europe/Belgrade", 0),
    zone!("Europe/Brussels", "Belgium", "Europe/Belgrade", 0),
    zone!("Europe/Rome", "Italy", "Europe/Belgrade", 0),
    zone!("Europe/Zurich", "Switzerland", "Europe/Belgrade", 0),
    zone!("Europe/Vienna", "Austria", "Europe/Belgrade", 0),
    zone!("Europe/Stockholm", "Sweden", "Europe/Belgrade", 0),
    zone!("Europe/Oslo", "Norway", "Europe/Belgrade", 0),
    zone!("Europe/Copenhagen", "Denmark", "Europe/Belgrade", 0),
    zone!("Europe/Warsaw", "Poland", "Europe/Belgrade", 0),
    zone!("Europe/Prague", "Czechia", "Europe/Belgrade", 0),
    zone!("Europe/Belgrade", "Central Europe", "Europe/Belgrade", 0),
    zone!("Europe/Helsinki", "Finland", "Europe/Helsinki", 0),
    zone!("Europe/Athens", "Greece", "Europe/Helsinki", 0),
    zone!("Europe/Bucharest", "Romania", "Europe/Bucharest", 0),
    zone!("Europe/Istanbul", "Turkey", "Europe/Istanbul", 0),
    zone!("Asia/Dubai", "United Arab Emirates", "Asia/Dubai", 0),
    zone!("Asia/Kolkata", "India", "Asia/Kolkata", 0),
    zone!("Asia/Singapore", "Singapore", "Asia/Hong_Kong", 0),
    zone!("Asia/Hong_Kong", "Hong Kong", "Asia/Hong_Kong", 0),
    zone!("Asia/Tokyo", "Japan", "Asia/Hong_Kong", -1),
    zone!("Australia/Perth", "Western Australia", "Australia/Perth", 0),
    zone!("Australia/Sydney", "Australia Eastern (Sydney)", "Australia/Melbourne", 0),
    zone!("Australia/Melbourne", "Australia Eastern (Melbourne)", "Australia/Melbourne", 0),
    zone!("Pacific/Auckland", "New Zealand", "Pacific/Auckland", 0),
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

impl Zone {
    /// The offset from UTC at `utc_ms`, in minutes.
    pub fn offset_min(&self, utc_ms: i64) -> i32 {
        self.tz.to_offset(crate::dates::timestamp(utc_ms)).seconds() / 60
    }

    /// The local date and hour at `utc_ms`.
    pub fn local(&self, utc_ms: i64) -> (Date, u32) {
        crate::dates::local(&self.tz, utc_ms)
    }

    /// The local date at `utc_ms`.
    pub fn local_date(&self, utc_ms: i64) -> Date {
        self.local(utc_ms).0
    }

    /// The UTC instant of local wall time `hour:00` on `date` (for a time skipped or repeated by
    /// a daylight-saving change, the reading with the offset in force just before).
    pub fn instant(&self, date: Date, hour: u32) -> i64 {
        crate::dates::instant(&self.tz, date, hour)
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
        crate::dates::parse_rfc3339_ms(s).unwrap()
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
        // Every zone and its Instantly stand-in must differ by exactly the shift, all year,
        // for ten years of the tz database's rules (America/Vancouver: see ZONES).
        let start = ms("2026-11-01T10:00:00Z");
        for z in ZONES {
            assert_eq!(z.tz.iana_name(), Some(z.name), "{} is the tz database's zone", z.name);
            let inst = zone(z.instantly).unwrap_or_else(|| panic!("{} maps to an unknown zone", z.name));
            assert_eq!(inst.instantly, inst.name, "{} is itself an Instantly zone", inst.name);
            for hour in (0..3653 * 24).step_by(7) {
                let t = start + i64::from(hour) * 3_600_000;
                let boise_summer = inst.tz.to_offset_info(crate::dates::timestamp(t)).dst().is_dst();
                if z.name == "America/Vancouver" && boise_summer {
                    continue;
                }
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

    /// Wall times that a change of offset skips or repeats, in zones of both hemispheres, read
    /// with the offset in force before the change; whole local days of 23 and 25 hours.
    #[test]
    fn daylight_saving_gaps_and_folds() {
        let ny = zone("America/New_York").unwrap();
        // 02:00 on 8 March 2026 does not exist in New York: read in EST, it is 03:00 EDT.
        assert_eq!(ny.instant(d("2026-03-08"), 2), ms("2026-03-08T07:00:00Z"));
        assert_eq!(ny.instant(d("2026-03-08"), 3), ms("2026-03-08T07:00:00Z"));
        // 01:00 on 1 November 2026 comes twice: the first, in EDT.
        assert_eq!(ny.instant(d("2026-11-01"), 1), ms("2026-11-01T05:00:00Z"));
        assert_eq!(ny.local(ms("2026-11-01T06:30:00Z")), (d("2026-11-01"), 1), "the second 01:00");
        let london = zone("Europe/London").unwrap();
        assert_eq!(london.instant(d("2026-03-29"), 1), ms("2026-03-29T01:00:00Z"), "skipped, read in GMT");
        assert_eq!(london.instant(d("2026-10-25"), 1), ms("2026-10-25T00:00:00Z"), "repeated, the BST one");
        let sydney = zone("Australia/Sydney").unwrap();
        assert_eq!(sydney.instant(d("2026-10-04"), 2), ms("2026-10-03T16:00:00Z"), "skipped, read in AEST");
        assert_eq!(sydney.instant(d("2026-04-05"), 2), ms("2026-04-04T15:00:00Z"), "repeated, the AEDT one");
        let auckland = zone("Pacific/Auckland").unwrap();
        assert_eq!(auckland.instant(d("2026-09-27"), 2), ms("2026-09-26T14:00:00Z"), "skipped, read in NZST");
        assert_eq!(
            auckland.instant(d("2026-04-05"), 2),
            ms("2026-04-04T13:00:00Z"),
            "repeated, the NZDT one"
        );
        let whole_day = Window { zone: ny, from_hour: 0, to_hour: 24, weekends: true };
        let hours = |date| whole_day.on(d(date)).map(|(start, end)| (end - start) / 3_600_000);
        assert_eq!(
            (hours("2026-03-08"), hours("2026-11-01"), hours("2026-11-02")),
            (Some(23), Some(25), Some(24))
        );
    }

    /// Local dates across the new year and a leap day, ahead of UTC and behind it.
    #[test]
    fn local_dates_across_years_and_leap_days() {
        let auckland = zone("Pacific/Auckland").unwrap();
        assert_eq!(auckland.local(ms("2026-12-31T11:00:00Z")), (d("2027-01-01"), 0), "NZDT, UTC+13");
        assert_eq!(auckland.local_date(ms("2026-12-31T10:59:00Z")), d("2026-12-31"));
        let la = zone("America/Los_Angeles").unwrap();
        assert_eq!(la.local(ms("2027-01-01T07:59:00Z")), (d("2026-12-31"), 23), "PST, UTC-8");
        let tokyo = zone("Asia/Tokyo").unwrap();
        assert_eq!(tokyo.local(ms("2028-02-28T15:00:00Z")), (d("2028-02-29"), 0));
        assert_eq!(tokyo.instant(d("2028-02-29"), 24), ms("2028-02-29T15:00:00Z"), "the end of the leap day");
        let w = Window { zone: tokyo, from_hour: 9, to_hour: 17, weekends: false };
        // Tuesday 29 February 2028, 09:00–17:00 JST.
        assert_eq!(w.on(d("2028-02-29")), Some((ms("2028-02-29T00:00:00Z"), ms("2028-02-29T08:00:00Z"))));
        // Friday 31 December 2027 after hours: the next window opens on Monday 3 January 2028.
        assert_eq!(w.next_open(ms("2027-12-31T09:00:00Z")), ms("2028-01-03T00:00:00Z"));
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

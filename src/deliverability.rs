//! Deliverability and outcome defaults (PRODUCT §8, DOMAIN §3 and §8): how much a warmed
//! mailbox may send, how a sequence is paced, and what reply rates to expect. They are
//! configuration, not code: the `DELIVERABILITY` var may override any of them with a JSON
//! object of the fields below (camelCase), checked against sane bounds when the Worker reads
//! its configuration. Sizing, campaign estimates and sending all read these same values.

use serde::{Deserialize, Serialize};

/// The defaults. Rates are in basis points (1 bp = 0.01%).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default, deny_unknown_fields)]
pub struct Deliverability {
    /// Cold emails per warmed mailbox per day (default 30).
    pub sends_per_mailbox_per_day: u32,
    /// The lowest and highest per-mailbox volume sizing may use (20–50).
    pub sends_per_mailbox_min: u32,
    /// See `sends_per_mailbox_min`.
    pub sends_per_mailbox_max: u32,
    /// Mailboxes per sending domain (default 3) and the most allowed (5).
    pub mailboxes_per_domain: u32,
    /// See `mailboxes_per_domain`.
    pub mailboxes_per_domain_max: u32,
    /// Warm-up of new domains, in days (14–21).
    pub warmup_days_min: u32,
    /// See `warmup_days_min`.
    pub warmup_days_max: u32,
    /// The sending window, in the recipient's time zone: first and last hour (09–17), Monday
    /// to Friday.
    pub window_start_hour: u32,
    /// See `window_start_hour`.
    pub window_end_hour: u32,
    /// Recommended sequence length (3–4 steps).
    pub steps_min: u32,
    /// See `steps_min`.
    pub steps_max: u32,
    /// Days between steps (3).
    pub step_delay_days: u32,
    /// Reply rate of contacted leads: low, central, high (1%, 3%, 5%).
    pub reply_rate_low_bp: u32,
    /// See `reply_rate_low_bp`.
    pub reply_rate_central_bp: u32,
    /// See `reply_rate_low_bp`.
    pub reply_rate_high_bp: u32,
    /// Positive replies of contacted leads: low and high (0.5%–1%).
    pub positive_rate_low_bp: u32,
    /// See `positive_rate_low_bp`.
    pub positive_rate_high_bp: u32,
    /// Meetings booked of contacted leads: low, central, high (0.2%, 0.3%, 1%).
    pub meeting_rate_low_bp: u32,
    /// See `meeting_rate_low_bp`.
    pub meeting_rate_central_bp: u32,
    /// See `meeting_rate_low_bp`.
    pub meeting_rate_high_bp: u32,
    /// Bounce rate that raises an alert (2%) and that pauses a campaign (3%).
    pub bounce_alert_bp: u32,
    /// See `bounce_alert_bp`.
    pub bounce_pause_bp: u32,
    /// Spam complaints must stay under this (0.1%).
    pub complaint_max_bp: u32,
}

impl Default for Deliverability {
    fn default() -> Self {
        Deliverability {
            sends_per_mailbox_per_day: 30,
            sends_per_mailbox_min: 20,
            sends_per_mailbox_max: 50,
            mailboxes_per_domain: 3,
            mailboxes_per_domain_max: 5,
            warmup_days_min: 14,
            warmup_days_max: 21,
            window_start_hour: 9,
            window_end_hour: 17,
            steps_min: 3,
            steps_max: 4,
            step_delay_days: 3,
            reply_rate_low_bp: 100,
            reply_rate_central_bp: 300,
            reply_rate_high_bp: 500,
            positive_rate_low_bp: 50,
            positive_rate_high_bp: 100,
            meeting_rate_low_bp: 20,
            meeting_rate_central_bp: 30,
            meeting_rate_high_bp: 100,
            bounce_alert_bp: 200,
            bounce_pause_bp: 300,
            complaint_max_bp: 10,
        }
    }
}

impl Deliverability {
    /// The defaults with the fields of `json` (a partial object) applied, if they make sense.
    pub fn from_json(json: &str) -> Result<Deliverability, String> {
        let d: Deliverability = serde_json::from_str(json).map_err(|e| e.to_string())?;
        d.check()?;
        Ok(d)
    }

    fn check(&self) -> Result<(), String> {
        let ordered = |name: &str, a: u32, b: u32, c: u32| {
            if a <= b && b <= c { Ok(()) } else { Err(format!("{name}: expected min ≤ value ≤ max")) }
        };
        ordered(
            "sendsPerMailbox",
            self.sends_per_mailbox_min,
            self.sends_per_mailbox_per_day,
            self.sends_per_mailbox_max,
        )?;
        if self.sends_per_mailbox_min == 0 || self.sends_per_mailbox_max > 100 {
            return Err("sendsPerMailbox: between 1 and 100 a day".into());
        }
        ordered("mailboxesPerDomain", 1, self.mailboxes_per_domain, self.mailboxes_per_domain_max)?;
        if self.mailboxes_per_domain_max > 50 {
            return Err("mailboxesPerDomainMax: at most 50".into());
        }
        ordered("warmupDays", 0, self.warmup_days_min, self.warmup_days_max)?;
        if self.window_start_hour >= self.window_end_hour || self.window_end_hour > 24 {
            return Err("window: start hour before end hour, within the day".into());
        }
        ordered("steps", 1, self.steps_min, self.steps_max)?;
        if self.step_delay_days == 0 || self.step_delay_days > 30 {
            return Err("stepDelayDays: between 1 and 30".into());
        }
        ordered("replyRate", self.reply_rate_low_bp, self.reply_rate_central_bp, self.reply_rate_high_bp)?;
        ordered(
            "positiveRate",
            self.positive_rate_low_bp,
            self.positive_rate_high_bp,
            self.reply_rate_high_bp,
        )?;
        if self.reply_rate_high_bp > 10_000 || self.bounce_pause_bp > 10_000 {
            return Err("rates: at most 10000 basis points".into());
        }
        ordered("bounce", 1, self.bounce_alert_bp, self.bounce_pause_bp)?;
        Ok(())
    }
}

/// Basis points as a percentage for people: 300 → "3%", 50 → "0.5%".
/// Written in integers: a float's `{}` would bring core's float formatter into the Worker (about
/// 18 KB raw of wasm, docs/scale.md).
pub fn percent(bp: u32) -> String {
    let (whole, hundredths) = (bp / 100, bp % 100);
    match hundredths {
        0 => format!("{whole}%"),
        h if h % 10 == 0 => format!("{whole}.{}%", h / 10),
        h => format!("{whole}.{h:02}%"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_follow_product_section_8_and_are_valid() {
        let d = Deliverability::default();
        assert_eq!((d.sends_per_mailbox_per_day, d.mailboxes_per_domain, d.step_delay_days), (30, 3, 3));
        assert_eq!((d.reply_rate_low_bp, d.reply_rate_central_bp, d.reply_rate_high_bp), (100, 300, 500));
        assert!(d.check().is_ok());
        assert_eq!(percent(300), "3%");
        assert_eq!(percent(50), "0.5%");
    }

    #[test]
    fn percent_reads_as_the_float_would() {
        for bp in (0..2_000).chain([9_999, 10_000, 123_456, u32::MAX]) {
            assert_eq!(percent(bp), format!("{}%", f64::from(bp) / 100.0), "{bp}");
        }
    }

    #[test]
    fn overrides_are_partial_and_checked() {
        let d = Deliverability::from_json(r#"{"stepDelayDays": 2, "replyRateCentralBp": 250}"#).unwrap();
        assert_eq!((d.step_delay_days, d.reply_rate_central_bp, d.sends_per_mailbox_per_day), (2, 250, 30));
        assert!(Deliverability::from_json(r#"{"replyRateCentralBp": 900}"#).is_err());
        assert!(Deliverability::from_json(r#"{"unknown": 1}"#).is_err());
        assert!(Deliverability::from_json("not json").is_err());
    }
}

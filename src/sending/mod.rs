//! Sending: everything between an approved sequence and replies in the inbox (PRODUCT §5–§9).
//!
//! Pure pieces live here and are shared by the workspace's tables (`workspace::sending`,
//! `workspace::campaigns`) and the tools (`tools::sending`, `tools::campaigns`):
//! - [`calendar`]: business days, sending windows, the time zones campaigns may use;
//! - [`sizing`]: volume → mailboxes → domains, and the ramp;
//! - [`names`]: look-alike domains for the user's brand and mailbox names from the sender's;
//! - [`choice`]: the questions put to the user (seed 001 "Questions and answers");
//! - [`classify`]: what a reply says (interested, not now, …);
//! - [`platform`]: the sending platform port (the adapter trait), with two adapters chosen by
//!   `PROVIDER_MODE`: [`sandbox`], a deterministic simulation that lives in the workspace's own
//!   database and advances with the scheduler's jobs, and [`instantly`], Instantly API v2.

pub mod calendar;
pub mod choice;
pub mod classify;
pub mod instantly;
pub mod names;
pub mod platform;
pub mod sandbox;
pub mod sizing;

use serde::{Deserialize, Serialize};

use crate::config::{ConfigError, Secret, invalid, service_url};

/// Instantly's API origin (DOMAIN §1.1).
pub const INSTANTLY_API: &str = "https://api.instantly.ai";

/// The sending platform's configuration.
#[derive(Debug, Clone)]
pub struct SendingConfig {
    /// The live platform (Instantly), when its key is set.
    pub instantly: Option<InstantlyConfig>,
    /// The simulation's settings (sandbox mode).
    pub sandbox: SandboxSettings,
}

/// Where Instantly is and how to authenticate (`INSTANTLY_API_KEY`, `INSTANTLY_BASE_URL`).
#[derive(Debug, Clone)]
pub struct InstantlyConfig {
    /// `https://api.instantly.ai`, or a local fake in tests (http only on loopback).
    pub base_url: String,
    /// The workspace API key (a Worker secret), sent as a bearer token.
    pub api_key: Secret,
}

/// How the sandbox simulates the platform (`SANDBOX_SENDING`, a JSON object of these fields,
/// camelCase, each optional). Rates are in basis points (1 bp = 0.01%).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default, deny_unknown_fields)]
pub struct SandboxSettings {
    /// The seed of every random draw: the same seed and inputs give the same outcomes.
    pub seed: u64,
    /// How much faster than real time the simulated platform runs: 1 is real time, 86400 makes
    /// a day pass every second (demos and tests run weeks in seconds).
    pub time_scale: f64,
    /// Contacted leads who open at least one email.
    pub open_bp: u32,
    /// Contacted leads who reply in person (out-of-office replies excluded).
    pub reply_bp: u32,
    /// Contacted leads whose address bounces.
    pub bounce_bp: u32,
    /// Contacted leads who send an automatic out-of-office reply.
    pub out_of_office_bp: u32,
    /// Contacted leads who unsubscribe through the link.
    pub unsubscribe_bp: u32,
    /// Warmed domains on the shelf.
    pub shelf_domains: u32,
}

impl Default for SandboxSettings {
    fn default() -> Self {
        // Rates from DOMAIN §3.8–§3.9: 3% replies, bounces under 2% on a verified list.
        SandboxSettings {
            seed: 7,
            time_scale: 1.0,
            open_bp: 4_500,
            reply_bp: 300,
            bounce_bp: 120,
            out_of_office_bp: 250,
            unsubscribe_bp: 40,
            shelf_domains: 8,
        }
    }
}

impl SandboxSettings {
    /// The defaults with the fields of `json` applied, if they make sense.
    pub fn from_json(json: &str) -> Result<SandboxSettings, String> {
        let s: SandboxSettings = serde_json::from_str(json).map_err(|e| e.to_string())?;
        if !(s.time_scale.is_finite() && (1.0..=100_000_000.0).contains(&s.time_scale)) {
            return Err("timeScale: between 1 and 100000000".into());
        }
        let total = s.reply_bp + s.bounce_bp + s.out_of_office_bp + s.unsubscribe_bp;
        if s.open_bp > 10_000 || total > 10_000 {
            return Err(
                "rates: replies, bounces, out-of-office and unsubscribes add up to at most 10000".into()
            );
        }
        if s.shelf_domains > 50 {
            return Err("shelfDomains: at most 50".into());
        }
        Ok(s)
    }
}

impl SendingConfig {
    /// Reads the sending settings.
    pub fn from_lookup(lookup: &impl Fn(&str) -> Option<String>) -> Result<SendingConfig, ConfigError> {
        let instantly =
            match lookup("INSTANTLY_API_KEY").map(|k| k.trim().to_owned()).filter(|k| !k.is_empty()) {
                None => None,
                Some(key) => {
                    let raw = lookup("INSTANTLY_BASE_URL").unwrap_or_else(|| INSTANTLY_API.to_owned());
                    let base_url = service_url(&raw, "INSTANTLY_BASE_URL", true)?;
                    Some(InstantlyConfig { base_url, api_key: Secret(key) })
                }
            };
        let sandbox = match lookup("SANDBOX_SENDING").filter(|s| !s.trim().is_empty()) {
            None => SandboxSettings::default(),
            Some(json) => SandboxSettings::from_json(&json).map_err(|e| invalid("SANDBOX_SENDING", &e))?,
        };
        Ok(SendingConfig { instantly, sandbox })
    }
}

/// A stable 64-bit hash of `parts` (FNV-1a), for deterministic draws: the same inputs give the
/// same number on every platform and in every version.
pub fn stable_hash(parts: &[&[u8]]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for part in parts {
        for b in *part {
            h ^= u64::from(*b);
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
        // A separator, so ("ab", "c") and ("a", "bc") differ.
        h ^= 0xff;
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    // Final avalanche (splitmix64), so nearby inputs give unrelated outputs.
    let mut z = h.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// A deterministic draw in `[0, 10000)` (basis points) from `parts`.
pub fn draw_bp(parts: &[&[u8]]) -> u32 {
    (stable_hash(parts) % 10_000) as u32
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    #[test]
    fn settings_are_read_and_checked() {
        let lookup = |pairs: &'static [(&'static str, &'static str)]| {
            let map: HashMap<&str, &str> = pairs.iter().copied().collect();
            SendingConfig::from_lookup(&move |k: &str| map.get(k).map(|v| (*v).to_owned()))
        };
        let c = lookup(&[]).unwrap();
        assert!(c.instantly.is_none());
        assert_eq!(c.sandbox, SandboxSettings::default());
        let c = lookup(&[
            ("INSTANTLY_API_KEY", " key "),
            ("SANDBOX_SENDING", r#"{"timeScale": 86400, "seed": 3}"#),
        ])
        .unwrap();
        let i = c.instantly.unwrap();
        assert_eq!((i.base_url.as_str(), i.api_key.0.as_str()), (INSTANTLY_API, "key"));
        assert!(!format!("{i:?}").contains("key\""), "the key never prints");
        assert_eq!((c.sandbox.time_scale, c.sandbox.seed, c.sandbox.reply_bp), (86_400.0, 3, 300));
        assert!(
            lookup(&[("INSTANTLY_API_KEY", "k"), ("INSTANTLY_BASE_URL", "http://instantly.example")])
                .is_err()
        );
        assert!(lookup(&[("INSTANTLY_API_KEY", "k"), ("INSTANTLY_BASE_URL", "http://127.0.0.1:9")]).is_ok());
        assert!(lookup(&[("SANDBOX_SENDING", r#"{"timeScale": 0}"#)]).is_err());
        assert!(lookup(&[("SANDBOX_SENDING", r#"{"replyBp": 9000, "bounceBp": 2000}"#)]).is_err());
        assert!(lookup(&[("SANDBOX_SENDING", r#"{"typo": 1}"#)]).is_err());
    }

    #[test]
    fn draws_are_stable_and_spread() {
        assert_eq!(stable_hash(&[b"a", b"bc"]), stable_hash(&[b"a", b"bc"]));
        assert_ne!(stable_hash(&[b"ab", b"c"]), stable_hash(&[b"a", b"bc"]));
        // About half of the draws fall under 5000.
        let under = (0..10_000u32).filter(|i| draw_bp(&[b"x", &i.to_le_bytes()]) < 5_000).count();
        assert!((4_700..5_300).contains(&under), "{under}");
    }
}

//! The plan catalogue: prices and limits are configuration, not code.
//!
//! The catalogue is a JSON document: `config/plans.json` is embedded at build time, and the
//! `PLANS_JSON` var replaces it for a deployment (for example to add the Stripe price ids of the
//! paid plans, `stripePrice`, which differ between Stripe test and live mode). It is parsed and
//! checked once per isolate with the rest of the configuration; a bad document stops the Worker
//! with a configuration error rather than billing anyone wrongly.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The catalogue shipped with the Worker.
pub const EMBEDDED: &str = include_str!("../config/plans.json");

/// An amount of money in the currency's minor unit (cents).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Money {
    /// In the currency's minor unit (cents for USD).
    pub amount: i64,
    /// ISO 4217 code, lower-case (`usd`).
    pub currency: String,
}

impl Money {
    /// An amount in `currency`.
    pub fn new(amount: i64, currency: &str) -> Self {
        Money { amount, currency: currency.to_owned() }
    }

    /// For people: `$49`, `$12.34`, `€9`, `120.50 GBP`…
    pub fn display(&self) -> String {
        let symbol = match self.currency.as_str() {
            "usd" => Some("$"),
            "eur" => Some("€"),
            "gbp" => Some("£"),
            _ => None,
        };
        let sign = if self.amount < 0 { "-" } else { "" };
        let abs = self.amount.unsigned_abs();
        let number = if abs.is_multiple_of(100) {
            group_thousands(abs / 100)
        } else {
            format!("{}.{:02}", group_thousands(abs / 100), abs % 100)
        };
        match symbol {
            Some(s) => format!("{sign}{s}{number}"),
            None => format!("{sign}{number} {}", self.currency.to_ascii_uppercase()),
        }
    }
}

/// `n` and the noun that agrees with it: `1 lead`, `2,000 leads`. A negative count reads as 0.
pub fn plural(n: impl TryInto<u64>, one: &str, many: &str) -> String {
    let n = n.try_into().unwrap_or(0);
    format!("{} {}", group_thousands(n), if n == 1 { one } else { many })
}

/// `1234567` → `1,234,567`.
pub fn group_thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// The limits a plan sets (PRODUCT §7: leads per month, mailboxes, active campaigns).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Limits {
    /// Leads that may be imported per calendar month (UTC).
    pub leads_per_month: i64,
    /// Sending mailboxes in use at once.
    pub mailboxes: i64,
    /// Campaigns running at once.
    pub active_campaigns: i64,
}

/// One limited resource.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Limit {
    /// Leads imported this calendar month (a counter that restarts each month).
    LeadsPerMonth,
    /// Mailboxes in use (a gauge).
    Mailboxes,
    /// Campaigns running (a gauge).
    ActiveCampaigns,
}

impl Limit {
    /// Every limit.
    pub const ALL: [Limit; 3] = [Limit::LeadsPerMonth, Limit::Mailboxes, Limit::ActiveCampaigns];

    /// The stored metric name.
    pub fn as_str(self) -> &'static str {
        match self {
            Limit::LeadsPerMonth => "leads_per_month",
            Limit::Mailboxes => "mailboxes",
            Limit::ActiveCampaigns => "active_campaigns",
        }
    }

    /// How people say it, with a count: "1,000 leads per month", "1 lead per month", "3 mailboxes".
    pub fn describe(self, n: i64) -> String {
        let n = n.max(0);
        match self {
            Limit::LeadsPerMonth => plural(n, "lead", "leads") + " per month",
            Limit::Mailboxes => plural(n, "mailbox", "mailboxes"),
            Limit::ActiveCampaigns => plural(n, "active campaign", "active campaigns"),
        }
    }

    /// Whether usage restarts every calendar month.
    pub fn is_monthly(self) -> bool {
        self == Limit::LeadsPerMonth
    }
}

impl Limits {
    /// The value of one limit.
    pub fn get(&self, limit: Limit) -> i64 {
        match limit {
            Limit::LeadsPerMonth => self.leads_per_month,
            Limit::Mailboxes => self.mailboxes,
            Limit::ActiveCampaigns => self.active_campaigns,
        }
    }
}

/// One plan.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Plan {
    /// Stable id (`starter`), used in tool arguments and stored in workspaces.
    pub id: String,
    /// Display name.
    pub name: String,
    /// One sentence for people.
    pub description: String,
    /// Monthly price in the catalogue currency's minor unit.
    pub price_monthly: i64,
    /// What it allows.
    pub limits: Limits,
    /// The Stripe price (`price_…`) of its monthly subscription; required for live checkout.
    #[serde(default)]
    pub stripe_price: Option<String>,
}

/// The catalogue.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Catalogue {
    /// ISO 4217 code of every price, lower-case.
    pub currency: String,
    /// The plan of a workspace without a paid subscription (price 0).
    pub default_plan: String,
    /// The plans, cheapest first.
    pub plans: Vec<Plan>,
}

impl Catalogue {
    /// Parses and checks a catalogue document.
    pub fn parse(json: &str) -> Result<Catalogue, String> {
        let mut c: Catalogue = serde_json::from_str(json).map_err(|e| e.to_string())?;
        if c.currency.len() != 3 || !c.currency.bytes().all(|b| b.is_ascii_lowercase()) {
            return Err("currency must be a lower-case ISO 4217 code such as usd".into());
        }
        // Amounts are in cents and shown divided by 100 (`Money::display`): a currency without
        // two decimals (ISO 4217: yen and won have none, the dinars three) would be shown and
        // charged 100 times off, so it is refused when the catalogue loads.
        const NOT_TWO_DECIMALS: &str =
            "bif clp djf gnf isk jpy kmf krw pyg rwf ugx uyi vnd vuv xaf xof xpf bhd iqd jod kwd lyd omr tnd";
        if NOT_TWO_DECIMALS.split(' ').any(|code| code == c.currency) {
            return Err(format!(
                "currency {}: only currencies with two decimals (cents) are supported",
                c.currency
            ));
        }
        if c.plans.is_empty() || c.plans.len() > 12 {
            return Err("between 1 and 12 plans".into());
        }
        for (i, p) in c.plans.iter().enumerate() {
            let id_ok = !p.id.is_empty()
                && p.id.len() <= 40
                && p.id
                    .bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_' || b == b'-');
            if !id_ok {
                return Err(format!("plan id {:?}: lower-case letters, digits, - and _", p.id));
            }
            if c.plans[..i].iter().any(|q| q.id == p.id) {
                return Err(format!("plan id {} is listed twice", p.id));
            }
            if p.name.trim().is_empty() {
                return Err(format!("plan {} has no name", p.id));
            }
            if p.price_monthly < 0 || Limit::ALL.iter().any(|l| p.limits.get(*l) < 0) {
                return Err(format!("plan {}: prices and limits are not negative", p.id));
            }
            if let Some(price) = &p.stripe_price
                && !price.starts_with("price_")
            {
                return Err(format!("plan {}: stripePrice must be a Stripe price id (price_…)", p.id));
            }
        }
        match c.plans.iter().find(|p| p.id == c.default_plan) {
            Some(p) if p.price_monthly == 0 => {}
            Some(_) => return Err("the default plan must be free".into()),
            None => return Err(format!("defaultPlan {} is not a plan", c.default_plan)),
        }
        c.plans.sort_by_key(|p| p.price_monthly);
        Ok(c)
    }

    /// The plan with this id.
    pub fn find(&self, id: &str) -> Option<&Plan> {
        self.plans.iter().find(|p| p.id == id)
    }

    /// The plan of workspaces without a subscription.
    pub fn default_plan(&self) -> &Plan {
        // `parse` guarantees it exists; the first plan is the fallback for a hand-built value.
        self.find(&self.default_plan).unwrap_or(&self.plans[0])
    }

    /// The plan sold at this Stripe price.
    pub fn by_stripe_price(&self, price: &str) -> Option<&Plan> {
        self.plans.iter().find(|p| p.stripe_price.as_deref() == Some(price))
    }

    /// The cheapest plan that allows at least `needed` of `limit`.
    pub fn cheapest_with(&self, limit: Limit, needed: i64) -> Option<&Plan> {
        self.plans.iter().filter(|p| p.limits.get(limit) >= needed).min_by_key(|p| p.price_monthly)
    }

    /// A plan's monthly price as money.
    pub fn price(&self, plan: &Plan) -> Money {
        Money::new(plan.price_monthly, &self.currency)
    }

    /// The plan ids, for refusals that list them.
    pub fn ids(&self) -> String {
        self.plans.iter().map(|p| format!("`{}`", p.id)).collect::<Vec<_>>().join(", ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_embedded_catalogue_is_valid() {
        let c = Catalogue::parse(EMBEDDED).unwrap();
        assert_eq!(c.default_plan().id, "free");
        assert!(c.plans.windows(2).all(|w| w[0].price_monthly <= w[1].price_monthly));
        assert_eq!(c.cheapest_with(Limit::Mailboxes, 5).unwrap().id, "growth");
        assert_eq!(c.cheapest_with(Limit::LeadsPerMonth, 1).unwrap().id, "free");
        assert!(c.cheapest_with(Limit::ActiveCampaigns, 1_000).is_none());
    }

    #[test]
    fn bad_catalogues_are_refused() {
        let plan = |id: &str, price: i64| {
            format!(
                r#"{{"id":"{id}","name":"N","description":"D","priceMonthly":{price},"limits":{{"leadsPerMonth":1,"mailboxes":1,"activeCampaigns":1}}}}"#
            )
        };
        let doc = |default: &str, plans: &[String]| {
            format!(r#"{{"currency":"usd","defaultPlan":"{default}","plans":[{}]}}"#, plans.join(","))
        };
        assert!(Catalogue::parse(&doc("free", &[plan("free", 0), plan("pro", 100)])).is_ok());
        assert!(Catalogue::parse(&doc("pro", &[plan("free", 0), plan("pro", 100)])).is_err(), "paid default");
        assert!(Catalogue::parse(&doc("x", &[plan("free", 0)])).is_err(), "unknown default");
        assert!(Catalogue::parse(&doc("free", &[plan("free", 0), plan("free", 1)])).is_err(), "duplicate");
        assert!(Catalogue::parse(&doc("free", &[plan("Free!", 0)])).is_err(), "id");
        assert!(Catalogue::parse(&doc("free", &[plan("free", -1)])).is_err(), "negative");
        assert!(Catalogue::parse(&doc("free", &[])).is_err(), "empty");
        assert!(Catalogue::parse(r#"{"currency":"usd","defaultPlan":"free","plans":[],"extra":1}"#).is_err());
        // `deny_unknown_fields` holds at every level: a key unknown to a plan's limits too.
        let nested =
            doc("free", &[plan("free", 0)]).replace(r#""mailboxes":1"#, r#""mailboxes":1,"seats":2"#);
        let refused = Catalogue::parse(&nested).unwrap_err();
        assert!(refused.starts_with("unknown field `seats`"), "{refused}");
        let bad_price = doc("free", &[plan("free", 0)])
            .replace(r#""priceMonthly":0"#, r#""priceMonthly":0,"stripePrice":"prod_1""#);
        assert!(Catalogue::parse(&bad_price).is_err(), "stripe price id");
        let ok = doc("free", &[plan("free", 0), plan("pro", 100)]);
        assert!(Catalogue::parse(&ok.replace("usd", "eur")).is_ok());
        for code in ["jpy", "krw", "kwd"] {
            let refused = Catalogue::parse(&ok.replace("usd", code)).unwrap_err();
            assert!(refused.contains("two decimals"), "{code}: {refused}");
        }
    }

    #[test]
    fn money_and_limits_read_well() {
        assert_eq!(Money::new(4900, "usd").display(), "$49");
        assert_eq!(Money::new(123_456, "usd").display(), "$1,234.56");
        assert_eq!(Money::new(-5, "eur").display(), "-€0.05");
        assert_eq!(Money::new(1000, "chf").display(), "10 CHF");
        assert_eq!(Limit::LeadsPerMonth.describe(5000), "5,000 leads per month");
        assert_eq!(Limit::Mailboxes.describe(1), "1 mailbox");
        assert_eq!(Limit::LeadsPerMonth.describe(1), "1 lead per month");
        assert_eq!(Limit::Mailboxes.describe(-2), "0 mailboxes");
        assert_eq!(Limit::ActiveCampaigns.describe(0), "0 active campaigns");
    }
}

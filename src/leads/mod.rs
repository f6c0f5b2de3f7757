//! Lead providers: where people at companies are counted, sampled and imported from
//! (PRODUCT §9, DOMAIN §2). Each provider is an adapter behind [`LeadProvider`], chosen by
//! `PROVIDER_MODE`: the deterministic [`sandbox`] database inside the Worker, or [`apollo`]'s
//! people search and enrichment.
//!
//! The cost model follows DOMAIN §2.3: counting and previewing are free and need no approval;
//! fetching people *with their email addresses* (an import) spends credits and only happens in
//! the executor of an approved `import_leads`.

pub mod apollo;
pub mod filters;
pub mod sandbox;
pub mod vocab;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::config::{Config, ProviderMode};
use crate::outbound::Outbound;
use crate::tools::registry::LocalBoxFuture;
use filters::{Filters, Vocabulary};

/// A person at a company, as a provider returns them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Person {
    /// The provider's id for the person.
    pub provider_id: String,
    /// Given name.
    pub first_name: String,
    /// Surname (some providers obfuscate it before enrichment).
    pub last_name: String,
    /// Job title.
    pub title: String,
    /// Seniority id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seniority: Option<String>,
    /// Department id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub department: Option<String>,
    /// Company name.
    pub company: String,
    /// Company web domain.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub company_domain: Option<String>,
    /// Company industry.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub industry: Option<String>,
    /// Company headcount band.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub company_size: Option<String>,
    /// Country.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub country: Option<String>,
    /// City.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub city: Option<String>,
    /// Work email, once known (imports only; never shown unmasked in a preview).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub email: Option<String>,
    /// The provider's verdict on the email (`verified`, `likely`, …).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub email_status: Option<String>,
}

/// One count in a breakdown of the pool.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Bucket {
    /// The value (a size band, a seniority, a country).
    pub label: String,
    /// People with that value.
    pub count: u64,
}

/// The pool split along one dimension.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Breakdown {
    /// The dimension: `company_size`, `seniority` or `country`.
    pub by: String,
    /// For people ("By company size").
    pub label: String,
    /// The counts (countries: the 10 largest).
    pub buckets: Vec<Bucket>,
}

/// A pool estimate.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PoolEstimate {
    /// Matching people.
    pub count: u64,
    /// Whether the count already leaves out the exclusions (otherwise they are dropped at
    /// sampling and import time).
    pub exclusions_counted: bool,
    /// How many of them an import can reach (providers cap paging).
    pub reachable: u64,
    /// Companies they work at, when the provider can say for free.
    pub companies: Option<u64>,
    /// How many have a work email, when the provider can say for free.
    pub with_email: Option<u64>,
    /// The pool by company size, seniority and country, when free.
    pub breakdowns: Vec<Breakdown>,
}

/// People fetched for an import, with their emails.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Batch {
    /// People in order; `email` is `None` when the provider found none.
    pub people: Vec<Person>,
    /// Pool positions this batch consumed (the next batch starts after them).
    pub consumed: u64,
    /// People the provider returned but the exclusions dropped.
    pub excluded: u64,
    /// People skipped because the workspace already has them (not enriched, no credits).
    pub known: u64,
    /// Credits the provider charged for the batch.
    pub credits: u64,
    /// Whether the pool has no more people after this batch.
    pub exhausted: bool,
    /// The provider failed part-way: the batch holds what was enriched (and paid for) before
    /// the failure, and ends right before the first person it could not enrich.
    pub interrupted: Option<LeadError>,
}

/// Why a provider call failed. Texts are safe to show: they never carry secrets.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LeadError {
    /// The provider is not set up in this deployment.
    #[error("the lead provider is not configured: {0}")]
    NotConfigured(String),
    /// The provider refused the request (key, plan, filters).
    #[error("the lead provider refused the request: {0}")]
    Rejected(String),
    /// Rate limited beyond what waiting inside one call allows.
    #[error("the lead provider is rate limiting; try again in {retry_after_s} seconds")]
    RateLimited {
        /// Seconds to wait.
        retry_after_s: u64,
    },
    /// Down, slow or answering nonsense.
    #[error("the lead provider is unavailable: {0}")]
    Unavailable(String),
    /// The provider answered in a way that shows the filters were not understood.
    #[error("the lead provider did not apply the filters: {0}")]
    FilterNotApplied(String),
}

impl LeadError {
    /// A refusal that says what happened and what to do.
    pub fn to_refusal(&self, provider: &str) -> crate::tools::Refusal {
        let what = match self {
            LeadError::NotConfigured(_) => {
                "This VibeSell deployment has no lead provider key configured, so leads cannot be searched. \
                 Tell the user; nothing was changed."
                    .to_owned()
            }
            LeadError::Rejected(why) => format!(
                "The lead provider ({provider}) refused the request: {why}. Nothing was changed. If it is about \
                 the filters, adjust them with save_target_filters; otherwise tell the user."
            ),
            LeadError::RateLimited { retry_after_s: s } => {
                let (n, unit) = match s {
                    0..120 => (*s, "seconds"),
                    120..7_200 => (s.div_ceil(60), "minutes"),
                    _ => (s.div_ceil(3_600), "hours"),
                };
                format!(
                    "The lead provider ({provider}) is rate limiting requests. Wait about {n} {unit} and call \
                     the tool again. Nothing was changed."
                )
            }
            LeadError::Unavailable(why) => format!(
                "The lead provider ({provider}) is unavailable right now ({why}). Nothing was changed; try again in \
                 a minute."
            ),
            LeadError::FilterNotApplied(why) => format!(
                "The lead provider ({provider}) returned results that ignore the filters ({why}), so the count \
                 cannot be trusted. Nothing was changed. Simplify the filters (fewer or more common values) and \
                 try again."
            ),
        };
        crate::tools::Refusal::guidance(what)
    }
}

/// A source of leads.
pub trait LeadProvider {
    /// Its name, for people (`sandbox`, `apollo`).
    fn name(&self) -> &'static str;
    /// Which values its filters accept.
    fn vocabulary(&self) -> Vocabulary;
    /// Counts the people matching `filters` (free).
    fn estimate<'a>(&'a self, filters: &'a Filters) -> LocalBoxFuture<'a, Result<PoolEstimate, LeadError>>;
    /// The first `n` people of the pool (free). Providers that reveal addresses only on
    /// enrichment return none; the tools mask any address before showing it.
    fn sample<'a>(
        &'a self,
        filters: &'a Filters,
        n: usize,
    ) -> LocalBoxFuture<'a, Result<Vec<Person>, LeadError>>;
    /// Up to `n` people from pool position `from` on, with their emails (spends credits).
    /// People for whom `known(provider_id)` is true are skipped before enrichment.
    fn fetch<'a>(
        &'a self,
        filters: &'a Filters,
        from: u64,
        n: usize,
        known: &'a dyn Fn(&str) -> bool,
    ) -> LocalBoxFuture<'a, Result<Batch, LeadError>>;
}

/// The provider this deployment uses (PRODUCT §9: sandbox by default, live with keys).
pub fn provider<'a>(config: &'a Config, outbound: &'a dyn Outbound) -> Box<dyn LeadProvider + 'a> {
    match config.provider_mode {
        ProviderMode::Sandbox => Box::new(sandbox::Sandbox),
        ProviderMode::Live => Box::new(apollo::Apollo::new(config.apollo.as_ref(), outbound)),
    }
}

/// `j•••@acme.com`: enough to recognise an address, not enough to use it (previews).
pub fn mask_email(email: &str) -> String {
    match email.split_once('@') {
        Some((local, domain)) => {
            let first: String = local.chars().take(1).collect();
            format!("{first}•••@{domain}")
        }
        None => "•••".to_owned(),
    }
}

impl sandbox::Breakdown {
    fn to_public(&self) -> Vec<Breakdown> {
        let buckets = |v: &[(&str, u64)]| -> Vec<Bucket> {
            v.iter().map(|(l, n)| Bucket { label: (*l).to_owned(), count: *n }).collect()
        };
        let mut countries = buckets(&self.by_country);
        countries.sort_by(|a, b| b.count.cmp(&a.count).then_with(|| a.label.cmp(&b.label)));
        countries.truncate(10);
        let seniority: Vec<Bucket> = self
            .by_seniority
            .iter()
            .map(|(id, n)| Bucket {
                label: vocab::SENIORITIES.iter().find(|s| s.0 == *id).map_or(*id, |s| s.1).to_owned(),
                count: *n,
            })
            .collect();
        vec![
            Breakdown {
                by: "company_size".into(),
                label: "By company size".into(),
                buckets: buckets(&self.by_size),
            },
            Breakdown { by: "seniority".into(), label: "By seniority".into(), buckets: seniority },
            Breakdown { by: "country".into(), label: "By country".into(), buckets: countries },
        ]
    }
}

impl LeadProvider for sandbox::Sandbox {
    fn name(&self) -> &'static str {
        "sandbox"
    }
    fn vocabulary(&self) -> Vocabulary {
        Vocabulary::SANDBOX
    }
    fn estimate<'a>(&'a self, filters: &'a Filters) -> LocalBoxFuture<'a, Result<PoolEstimate, LeadError>> {
        Box::pin(async move {
            let pool = sandbox::Pool::new(filters);
            Ok(PoolEstimate {
                count: pool.count(),
                exclusions_counted: true,
                reachable: pool.count(),
                companies: Some(pool.companies()),
                // Everyone in the sandbox has a verified work address.
                with_email: Some(pool.count()),
                breakdowns: pool.breakdown().to_public(),
            })
        })
    }
    fn sample<'a>(
        &'a self,
        filters: &'a Filters,
        n: usize,
    ) -> LocalBoxFuture<'a, Result<Vec<Person>, LeadError>> {
        Box::pin(async move {
            let pool = sandbox::Pool::new(filters);
            // With the address: the tools mask it before anyone sees it.
            Ok((0..n as u64).map_while(|m| pool.at(m)).map(|r| r.person()).collect())
        })
    }
    fn fetch<'a>(
        &'a self,
        filters: &'a Filters,
        from: u64,
        n: usize,
        known: &'a dyn Fn(&str) -> bool,
    ) -> LocalBoxFuture<'a, Result<Batch, LeadError>> {
        Box::pin(async move {
            let pool = sandbox::Pool::new(filters);
            let refs: Vec<sandbox::PersonRef> =
                (from..from.saturating_add(n as u64)).map_while(|m| pool.at(m)).collect();
            let consumed = refs.len() as u64;
            let (known_refs, new_refs): (Vec<_>, Vec<_>) = refs.into_iter().partition(|r| known(&r.id()));
            let people: Vec<Person> = new_refs.iter().map(sandbox::PersonRef::person).collect();
            Ok(Batch {
                // One simulated credit per revealed address, like Apollo's enrichment.
                credits: people.len() as u64,
                exhausted: from + consumed >= pool.count(),
                people,
                consumed,
                excluded: 0,
                known: known_refs.len() as u64,
                interrupted: None,
            })
        })
    }
}

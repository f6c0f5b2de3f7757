//! The sending platform port: what VibeSell asks of a cold-email platform, in Instantly API v2's
//! terms (DOMAIN §1) — done-for-you domain and mailbox orders with a priced simulation first,
//! accounts and warm-up, campaigns with a sequence and a schedule, leads in batches, received
//! emails and the blocklist.
//!
//! Two adapters implement [`SendingPlatform`], chosen by `PROVIDER_MODE` ([`open`]): the
//! sandbox simulation (`sending::sandbox`) and Instantly (`sending::instantly`). Workspace code
//! only sees this trait, so the sandbox exercises the very code paths live mode runs.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::config::{Config, ProviderMode};
use crate::outbound::Outbound;
use crate::store::{Db, StoreError};

/// Why the platform did not do what was asked.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum PlatformError {
    /// The platform refused the request; the text is safe to show the user and says why.
    #[error("refused: {0}")]
    Refused(String),
    /// The platform needs a payment method or a paid plan first (HTTP 402, `checkout_required`).
    #[error("payment required: {0}")]
    PaymentRequired(String),
    /// The platform could not be reached or kept failing (timeouts, 5xx, 429 after retries):
    /// for a write, the outcome is unknown. The text is for the log.
    #[error("unavailable: {0}")]
    Unavailable(String),
    /// Live mode without the platform's key, or the platform rejected our credentials. The text
    /// is for the log.
    #[error("not configured: {0}")]
    NotConfigured(String),
    /// The simulation's storage failed.
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// Results of platform calls.
pub type PResult<T> = Result<T, PlatformError>;

/// A domain's availability at the registrar.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DomainCheck {
    /// The domain.
    pub domain: String,
    /// Whether it can be registered.
    pub available: bool,
    /// Why not, when it cannot.
    pub reason: Option<String>,
}

/// A warmed domain on the platform's shelf, ready to send from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShelfDomain {
    /// The domain.
    pub domain: String,
    /// How many mailboxes can be made on it.
    pub max_mailboxes: u32,
    /// How long it has been warmed, when the platform says.
    pub age_days: Option<u32>,
    /// Its warm-up health score (0–100), when the platform says.
    pub health: Option<u32>,
}

/// What kind of addresses an order buys.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum OrderKind {
    /// New domains under the user's brand, with new mailboxes that must warm up (`dfy`).
    OwnNames,
    /// Mailboxes on domains the platform already warmed (`pre_warmed_up`).
    AlreadyWarmed,
}

/// One mailbox to create.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AccountSpec {
    /// The part before `@`.
    pub prefix: String,
    /// The sender's first name.
    pub first_name: String,
    /// The sender's last name.
    pub last_name: String,
}

/// One domain of an order and its mailboxes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct OrderItem {
    /// The domain.
    pub domain: String,
    /// Its mailboxes.
    pub accounts: Vec<AccountSpec>,
}

/// An order of domains and mailboxes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct OrderSpec {
    /// What is bought.
    pub kind: OrderKind,
    /// The domains and mailboxes.
    pub items: Vec<OrderItem>,
}

impl OrderSpec {
    /// Every mailbox address of the order.
    pub fn addresses(&self) -> Vec<String> {
        self.items
            .iter()
            .flat_map(|i| i.accounts.iter().map(move |a| format!("{}@{}", a.prefix, i.domain)))
            .collect()
    }

    /// How many mailboxes it creates.
    pub fn mailbox_count(&self) -> usize {
        self.items.iter().map(|i| i.accounts.len()).sum()
    }
}

/// The price of one domain of an order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QuoteItem {
    /// The domain.
    pub domain: String,
    /// Its registration for a year, in cents (0 for warmed domains).
    pub domain_per_year: i64,
    /// Its mailboxes, per month, in cents.
    pub accounts_per_month: i64,
}

/// A priced order, from the platform's simulation (nothing charged).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Quote {
    /// Whether the platform would accept it as is.
    pub valid: bool,
    /// Why not, each safe to show the user.
    pub problems: Vec<String>,
    /// Domains that are not available (any more).
    pub unavailable: Vec<String>,
    /// Per domain.
    pub items: Vec<QuoteItem>,
    /// Domain registrations, per year, in cents. Not refundable.
    pub domains_per_year: i64,
    /// Mailboxes, per month, in cents.
    pub accounts_per_month: i64,
    /// Charged when the order is placed, in cents.
    pub due_now: i64,
    /// ISO 4217, lower-case.
    pub currency: String,
}

/// An order's prices as the user approved them, in cents: placing it never pays more, now or
/// later (PRODUCT §6: an approval executes what it described).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ApprovedPrices {
    /// Charged when the order is placed.
    pub due_now: i64,
    /// Domain registrations, per year.
    pub domains_per_year: i64,
    /// Mailboxes, per month.
    pub accounts_per_month: i64,
}

impl ApprovedPrices {
    /// No ceiling (tests).
    pub const ANY: ApprovedPrices =
        ApprovedPrices { due_now: i64::MAX, domains_per_year: i64::MAX, accounts_per_month: i64::MAX };

    /// Why `quote` costs more than was approved, if it does: the first price that went up.
    pub fn exceeded(&self, quote: &Quote) -> Option<String> {
        let m = |cents: i64| crate::plans::Money::new(cents, &quote.currency).display();
        [
            ("due now", self.due_now, quote.due_now),
            ("of the domains per year", self.domains_per_year, quote.domains_per_year),
            ("of the mailboxes per month", self.accounts_per_month, quote.accounts_per_month),
        ]
        .into_iter()
        .find(|(_, approved, now)| now > approved)
        .map(|(what, approved, now)| {
            format!(
                "The price {what} went up from {} to {} since it was approved, so nothing was ordered.",
                m(approved),
                m(now)
            )
        })
    }
}

/// A placed order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Placed {
    /// The platform's reference.
    pub reference: String,
    /// What was charged, in cents, when the platform said (a retry that finds the order already
    /// placed does not know).
    pub charged: Option<i64>,
}

/// A mailbox's connection status.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AccountStatus {
    /// Working.
    Active,
    /// Paused by someone.
    Paused,
    /// Not working (connection, sending or bounce errors).
    Error,
}

/// A mailbox as the platform sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Account {
    /// The address.
    pub email: String,
    /// Its status.
    pub status: AccountStatus,
    /// Still being set up (domain, DNS, mailbox).
    pub setup_pending: bool,
    /// When its setup finished (ms), when the platform says so; otherwise the workspace records
    /// when it first saw the setup done.
    pub setup_done_at: Option<i64>,
    /// Whether warm-up runs.
    pub warmup_on: bool,
    /// Warm-up is banned or suspended for it.
    pub warmup_blocked: bool,
    /// When warm-up started (ms).
    pub warmup_started_at: Option<i64>,
    /// Warm-up health score (0–100).
    pub health: Option<u32>,
}

/// A domain's DNS authentication, as the platform checks it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Dns {
    /// SPF record.
    pub spf: bool,
    /// DKIM key.
    pub dkim: bool,
    /// DMARC policy.
    pub dmarc: bool,
    /// MX records (replies land).
    pub mx: bool,
    /// The custom tracking domain (`track.<domain>` CNAME to the platform), which keeps open
    /// tracking off the platform's shared domain.
    pub tracking: bool,
}

/// One step of a campaign's sequence, in the platform's template language (`{{firstName}}`…).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StepSpec {
    /// Subject; empty on a follow-up sends it as a reply in the same thread.
    pub subject: String,
    /// Plain-text body, with the compliance footer.
    pub body: String,
    /// Days to wait after this step before the next one.
    pub delay_days: u32,
}

/// A campaign to create (always as a draft).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CampaignSpec {
    /// Its name.
    pub name: String,
    /// The IANA time zone of the sending window.
    pub timezone: String,
    /// First hour of the window (local).
    pub from_hour: u32,
    /// End of the window (local, exclusive).
    pub to_hour: u32,
    /// The sequence.
    pub steps: Vec<StepSpec>,
    /// The sending mailboxes.
    pub senders: Vec<String>,
    /// Emails per day for the whole campaign.
    pub daily_limit: u32,
    /// Cold emails per mailbox per day: each sender's own limit at the platform, across all its
    /// campaigns (Instantly's account `daily_limit`, DOMAIN §1.2).
    pub per_mailbox: u32,
    /// The senders new to cold email, whose campaign volume starts at 2 a day and grows by 2 a
    /// day up to `per_mailbox` (Instantly's slow ramp, DOMAIN §3.1); pre-warmed mailboxes send
    /// `per_mailbox` at once.
    #[serde(default)]
    pub ramp: Vec<String>,
    /// First day it may send (`YYYY-MM-DD`), if not at once.
    pub start_date: Option<String>,
}

/// A lead to add to a campaign.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LeadSpec {
    /// The address.
    pub email: String,
    /// First name.
    pub first_name: String,
    /// Last name.
    pub last_name: String,
    /// Company.
    pub company_name: String,
    /// Job title.
    #[serde(default)]
    pub job_title: String,
    /// Template variables for this lead (`unsubscribeUrl`, …).
    #[serde(default)]
    pub variables: Vec<(String, String)>,
}

/// The outcome of adding a batch of leads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct AddedLeads {
    /// Added to the campaign.
    pub uploaded: u32,
    /// Skipped: on the blocklist.
    pub blocked: u32,
    /// Skipped: already there, invalid or incomplete.
    pub skipped: u32,
}

/// A campaign's state at the platform.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CampaignStatus {
    /// Created, never sent.
    Draft,
    /// Sending.
    Active,
    /// Paused.
    Paused,
    /// Every lead went through the sequence.
    Completed,
    /// Held by the platform until its mailboxes are fixed: bounce protection, unhealthy or
    /// suspended accounts. Not sending, and not for good (DOMAIN §1.2).
    Stopped,
}

/// A campaign's totals.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Totals {
    /// Leads in the campaign.
    pub leads: u32,
    /// Leads who got at least one email.
    pub contacted: u32,
    /// Emails sent.
    pub sent: u32,
    /// Leads who opened (approximate: privacy features open emails for people).
    pub opened: u32,
    /// Leads who replied in person.
    pub replied: u32,
    /// Emails that bounced.
    pub bounced: u32,
    /// Leads who unsubscribed through the link.
    pub unsubscribed: u32,
}

/// One day of a campaign.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Day {
    /// `YYYY-MM-DD`.
    pub date: String,
    /// Emails sent.
    pub sent: u32,
    /// Replies received.
    pub replies: u32,
}

/// One step of a campaign.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct StepTotals {
    /// The step (1 = first email).
    pub step: u32,
    /// Emails sent.
    pub sent: u32,
    /// Replies to it.
    pub replies: u32,
}

/// A campaign's state and statistics.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CampaignReport {
    /// Where it stands.
    pub status: CampaignStatus,
    /// Totals.
    pub totals: Totals,
    /// Per day, oldest first.
    pub daily: Vec<Day>,
    /// Per step.
    pub steps: Vec<StepTotals>,
}

/// An email received by a sending mailbox.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Received {
    /// The platform's id.
    pub id: String,
    /// The lead it is about (the prospect's address).
    pub lead: String,
    /// Who sent it (the prospect, or a mail server for a bounce).
    pub from: String,
    /// The mailbox that received it.
    pub mailbox: String,
    /// Subject.
    pub subject: String,
    /// Plain text, as written by its sender (untrusted).
    pub text: String,
    /// When it arrived (ms).
    pub at: i64,
    /// The step it answers, when known.
    pub step: Option<u32>,
    /// The platform flagged it as an automatic reply.
    pub auto_reply: bool,
    /// The platform reported a bounce.
    pub bounce: bool,
    /// The platform's interest tag.
    pub interest: Option<i64>,
}

/// Received emails from a time on.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ReceivedPage {
    /// Oldest first.
    pub items: Vec<Received>,
    /// More were left for the next call (rate limits).
    pub more: bool,
}

/// A stretch of a campaign's leads that bounced or unsubscribed.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct OutcomePage {
    /// The leads, with what happened to them.
    pub items: Vec<(String, Outcome)>,
    /// Where the next call goes on reading, when the platform has more leads than one call
    /// reads; `None` once the end was reached (the next call starts over).
    pub next: Option<String>,
}

/// What happened to a lead that must never be emailed again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// The address bounced.
    Bounced,
    /// The person unsubscribed.
    Unsubscribed,
}

/// What VibeSell needs from a cold-email platform.
#[allow(async_fn_in_trait)] // Futures need not be Send on a single-threaded isolate.
pub trait SendingPlatform {
    /// The platform's clock (ms): the real time, or the simulation's (accelerated) time.
    fn now_ms(&self) -> i64;
    /// The time the state the platform reports is current at: now for a real platform, the
    /// simulation's frontier while it catches up hour by hour.
    fn observed_ms(&self) -> i64;
    /// Lets the platform's own time move on by one step, if it is behind: the simulation
    /// advances one hour of sending and returns true; a real platform runs by itself (false).
    async fn advance(&self) -> PResult<bool>;
    /// Look-alike domains for a primary domain.
    async fn similar_domains(&self, primary: &str) -> PResult<Vec<String>>;
    /// Whether domains can be registered.
    async fn check_domains(&self, domains: &[String]) -> PResult<Vec<DomainCheck>>;
    /// Warmed domains ready to use now (may be empty: stock comes and goes).
    async fn warmed_domains(&self) -> PResult<Vec<ShelfDomain>>;
    /// Prices and validates an order without placing it.
    async fn quote(&self, order: &OrderSpec) -> PResult<Quote>;
    /// Places an order, never for more than the user `approved`, sending `key` for the
    /// platform's idempotency where it has one. A retry asks [`Self::placed_order`] first.
    async fn place_order(&self, order: &OrderSpec, key: &str, approved: &ApprovedPrices) -> PResult<Placed>;
    /// The order placed under `key` by an earlier attempt whose answer was lost, if there is
    /// one; that attempt came no sooner than `since_ms` (the approval's decision).
    async fn placed_order(&self, order: &OrderSpec, key: &str, since_ms: i64) -> PResult<Option<Placed>>;
    /// The mailboxes with these addresses that exist.
    async fn accounts(&self, emails: &[String]) -> PResult<Vec<Account>>;
    /// DNS authentication of the domains of these mailboxes.
    async fn dns(&self, emails: &[String]) -> PResult<Vec<(String, Dns)>>;
    /// Turns warm-up on for these mailboxes.
    async fn enable_warmup(&self, emails: &[String]) -> PResult<()>;
    /// Creates a campaign as a draft, at most once per `key`; returns its id.
    async fn create_campaign(&self, spec: &CampaignSpec, key: &str) -> PResult<String>;
    /// Replaces a draft campaign's settings (sequence, schedule, senders, limits).
    async fn update_campaign(&self, id: &str, spec: &CampaignSpec) -> PResult<()>;
    /// Adds leads to a campaign (the adapter splits them into the platform's batches).
    async fn add_leads(&self, campaign: &str, leads: &[LeadSpec]) -> PResult<AddedLeads>;
    /// Starts or resumes sending.
    async fn activate(&self, campaign: &str) -> PResult<()>;
    /// Pauses sending.
    async fn pause(&self, campaign: &str) -> PResult<()>;
    /// A campaign's status and statistics.
    async fn report(&self, campaign: &str) -> PResult<CampaignReport>;
    /// A campaign's status and totals only (cheaper than [`SendingPlatform::report`]).
    async fn totals(&self, campaign: &str) -> PResult<(CampaignStatus, Totals)>;
    /// Emails received for a campaign at or after `since_ms`, oldest first.
    async fn received(&self, campaign: &str, since_ms: i64) -> PResult<ReceivedPage>;
    /// The campaign's leads that bounced or unsubscribed, read from `after` (a `next` of an
    /// earlier page) or from the start.
    async fn outcomes(&self, campaign: &str, after: Option<&str>) -> PResult<OutcomePage>;
    /// Adds an address or a domain to the platform's blocklist.
    async fn block(&self, value: &str) -> PResult<()>;
}

/// The adapter for this deployment.
pub enum Platform<'a> {
    /// The simulation.
    Sandbox(super::sandbox::Sandbox<'a>),
    /// Instantly API v2.
    Live(super::instantly::Instantly<'a>),
}

/// Opens the platform of `config.provider_mode` for a workspace.
pub fn open<'a>(
    db: &'a dyn Db,
    config: &'a Config,
    outbound: &'a dyn Outbound,
    now_ms: i64,
) -> PResult<Platform<'a>> {
    match config.provider_mode {
        ProviderMode::Sandbox => {
            Ok(Platform::Sandbox(super::sandbox::Sandbox::open(db, config.sending.sandbox, now_ms)?))
        }
        ProviderMode::Live => match &config.sending.instantly {
            Some(instantly) => {
                Ok(Platform::Live(super::instantly::Instantly::new(instantly, db, outbound, now_ms)))
            }
            None => Err(PlatformError::NotConfigured(
                "PROVIDER_MODE is live but INSTANTLY_API_KEY is not set".into(),
            )),
        },
    }
}

macro_rules! delegate {
    ($self:ident, $p:ident => $e:expr) => {
        match $self {
            Platform::Sandbox($p) => $e,
            Platform::Live($p) => $e,
        }
    };
}

impl SendingPlatform for Platform<'_> {
    fn now_ms(&self) -> i64 {
        delegate!(self, p => p.now_ms())
    }
    fn observed_ms(&self) -> i64 {
        delegate!(self, p => p.observed_ms())
    }
    async fn advance(&self) -> PResult<bool> {
        delegate!(self, p => p.advance().await)
    }
    async fn similar_domains(&self, primary: &str) -> PResult<Vec<String>> {
        delegate!(self, p => p.similar_domains(primary).await)
    }
    async fn check_domains(&self, domains: &[String]) -> PResult<Vec<DomainCheck>> {
        delegate!(self, p => p.check_domains(domains).await)
    }
    async fn warmed_domains(&self) -> PResult<Vec<ShelfDomain>> {
        delegate!(self, p => p.warmed_domains().await)
    }
    async fn quote(&self, order: &OrderSpec) -> PResult<Quote> {
        delegate!(self, p => p.quote(order).await)
    }
    async fn place_order(&self, order: &OrderSpec, key: &str, approved: &ApprovedPrices) -> PResult<Placed> {
        delegate!(self, p => p.place_order(order, key, approved).await)
    }
    async fn placed_order(&self, order: &OrderSpec, key: &str, since_ms: i64) -> PResult<Option<Placed>> {
        delegate!(self, p => p.placed_order(order, key, since_ms).await)
    }
    async fn accounts(&self, emails: &[String]) -> PResult<Vec<Account>> {
        delegate!(self, p => p.accounts(emails).await)
    }
    async fn dns(&self, emails: &[String]) -> PResult<Vec<(String, Dns)>> {
        delegate!(self, p => p.dns(emails).await)
    }
    async fn enable_warmup(&self, emails: &[String]) -> PResult<()> {
        delegate!(self, p => p.enable_warmup(emails).await)
    }
    async fn create_campaign(&self, spec: &CampaignSpec, key: &str) -> PResult<String> {
        delegate!(self, p => p.create_campaign(spec, key).await)
    }
    async fn update_campaign(&self, id: &str, spec: &CampaignSpec) -> PResult<()> {
        delegate!(self, p => p.update_campaign(id, spec).await)
    }
    async fn add_leads(&self, campaign: &str, leads: &[LeadSpec]) -> PResult<AddedLeads> {
        delegate!(self, p => p.add_leads(campaign, leads).await)
    }
    async fn activate(&self, campaign: &str) -> PResult<()> {
        delegate!(self, p => p.activate(campaign).await)
    }
    async fn pause(&self, campaign: &str) -> PResult<()> {
        delegate!(self, p => p.pause(campaign).await)
    }
    async fn report(&self, campaign: &str) -> PResult<CampaignReport> {
        delegate!(self, p => p.report(campaign).await)
    }
    async fn totals(&self, campaign: &str) -> PResult<(CampaignStatus, Totals)> {
        delegate!(self, p => p.totals(campaign).await)
    }
    async fn received(&self, campaign: &str, since_ms: i64) -> PResult<ReceivedPage> {
        delegate!(self, p => p.received(campaign, since_ms).await)
    }
    async fn outcomes(&self, campaign: &str, after: Option<&str>) -> PResult<OutcomePage> {
        delegate!(self, p => p.outcomes(campaign, after).await)
    }
    async fn block(&self, value: &str) -> PResult<()> {
        delegate!(self, p => p.block(value).await)
    }
}

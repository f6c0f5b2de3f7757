//! The workspace's sending setup (PRODUCT §8): the sizing, the user's settled choices (sending
//! source, domains, addresses), the order and the domains and mailboxes it made, their warm-up,
//! and the job that keeps them in step with the sending platform.
//!
//! Choices are stored with the *basis* they were settled on (a hash of the facts upstream:
//! the sizing's counts, the source, the domains). A choice whose basis no longer matches is
//! stale: the step is asked again, and nothing downstream of it is used.

use serde::{Deserialize, Serialize};

use super::campaigns::Follow;
use super::schedule::{self, Job, JobCx, JobError};
use crate::config::{Config, ProviderMode};
use crate::outbound::Outbound;
use crate::sending::calendar;
use crate::sending::platform::{self, AccountStatus, OrderKind, OrderSpec, PlatformError, SendingPlatform};
use crate::sending::sizing::{Capacity, Request};
use crate::store::{Db, Stmt, StoreError, from_document, to_document};

const DAY: i64 = 86_400_000;

// ---- sizing --------------------------------------------------------------------------------

/// The saved sizing.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SizingDoc {
    /// What was asked.
    pub request: Request,
    /// What it takes.
    pub capacity: Capacity,
    /// The mailboxes already in place when it was sized, which it adds to (`size_sending_capacity`
    /// sizes what to add once some are set up). Absent in sizings saved before it was recorded.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub on_top_of: u32,
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

impl SizingDoc {
    /// The mailboxes the workspace sends from once this sizing is set up: those it was sized on
    /// top of and its own (third journey walk: a sizing of what to add was taken for the whole).
    pub fn total_mailboxes(&self) -> u32 {
        self.on_top_of.saturating_add(self.capacity.mailboxes)
    }
}

/// The sizing and whether the user confirmed it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sizing {
    /// The sizing.
    pub doc: SizingDoc,
    /// When it was confirmed.
    pub confirmed_at: Option<i64>,
    /// When it was saved.
    pub updated_at: i64,
}

/// The saved sizing, if any.
pub fn sizing(db: &dyn Db) -> Result<Option<Sizing>, StoreError> {
    #[derive(Deserialize)]
    struct Row {
        sizing: String,
        confirmed_at: Option<i64>,
        updated_at: i64,
    }
    let row: Option<Row> =
        db.row("SELECT sizing, confirmed_at, updated_at FROM sending_plan WHERE id = 1", vec![])?;
    row.map(|r| {
        Ok(Sizing { doc: from_document(&r.sizing)?, confirmed_at: r.confirmed_at, updated_at: r.updated_at })
    })
    .transpose()
}

/// Saves a sizing, replacing the previous one; a changed sizing is no longer confirmed.
pub fn save_sizing(db: &dyn Db, doc: &SizingDoc, now_ms: i64) -> Result<Sizing, StoreError> {
    if let Some(old) = sizing(db)?
        && old.doc == *doc
    {
        return Ok(old);
    }
    db.batch(vec![Stmt::new(
        "INSERT INTO sending_plan (id, sizing, confirmed_at, updated_at) VALUES (1, ?, NULL, ?) \
         ON CONFLICT(id) DO UPDATE SET sizing = excluded.sizing, confirmed_at = NULL, updated_at = excluded.updated_at",
        vec![to_document(doc)?.into(), now_ms.into()],
    )])?;
    Ok(Sizing { doc: doc.clone(), confirmed_at: None, updated_at: now_ms })
}

/// Takes back the confirmation of a sizing made for another number of emails per lead than
/// `steps`, the sequence's now: its mailboxes no longer carry the volume (audit finding: a
/// sizing for 3 steps stayed confirmed for a 5-step sequence). Says whether it did.
pub fn unconfirm_sizing_unless(db: &dyn Db, steps: u32) -> Result<bool, StoreError> {
    let taken_back = db.query(Stmt::new(
        "UPDATE sending_plan SET confirmed_at = NULL WHERE id = 1 AND confirmed_at IS NOT NULL \
         AND json_extract(sizing, '$.capacity.steps') != ? RETURNING 1",
        vec![steps.into()],
    ))?;
    Ok(!taken_back.rows.is_empty())
}

/// Confirms the saved sizing (idempotent).
pub fn confirm_sizing(db: &dyn Db, now_ms: i64) -> Result<(), StoreError> {
    db.batch(vec![Stmt::new(
        "UPDATE sending_plan SET confirmed_at = COALESCE(confirmed_at, ?) WHERE id = 1",
        vec![now_ms.into()],
    )])?;
    Ok(())
}

// ---- choices -------------------------------------------------------------------------------

/// A step whose answer the user gives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChoiceStep {
    /// Already-warmed addresses or the user's brand.
    Source,
    /// Which domains.
    Domains,
    /// Which mailbox names.
    Email,
}

impl ChoiceStep {
    fn key(self) -> &'static str {
        match self {
            ChoiceStep::Source => "source",
            ChoiceStep::Domains => "domains",
            ChoiceStep::Email => "email",
        }
    }
}

/// A domain the user picked, with its price.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PickedDomain {
    /// The domain.
    pub name: String,
    /// Its price in cents: a year of registration (own brand) or a month of its mailboxes
    /// (already warmed).
    pub price: i64,
    /// How many mailboxes it can carry.
    pub max_mailboxes: u32,
}

/// A mailbox the user settled.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PickedAddress {
    /// The part before `@`.
    pub prefix: String,
    /// Its domain.
    pub domain: String,
}

impl PickedAddress {
    /// The address.
    pub fn address(&self) -> String {
        format!("{}@{}", self.prefix, self.domain)
    }
}

/// What the user settled at a step, stored tagged by its step (`{"step": "domains", ...}`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "step", rename_all = "snake_case")]
pub enum Settled {
    /// The sending source.
    Source {
        /// Which.
        source: OrderKind,
    },
    /// The domains.
    Domains {
        /// For which source.
        source: OrderKind,
        /// The domains, with their prices.
        domains: Vec<PickedDomain>,
    },
    /// The addresses.
    Email {
        /// The sender's first name.
        first_name: String,
        /// The sender's last name.
        last_name: String,
        /// The addresses.
        addresses: Vec<PickedAddress>,
    },
}

/// A settled choice as stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Choice {
    /// What was settled.
    pub settled: Settled,
    /// The card it was settled on.
    pub card: String,
    /// The upstream facts it was settled on.
    pub basis: String,
    /// When.
    pub settled_at: i64,
}

/// The settled choice of a step, if any (current or stale).
pub fn choice(db: &dyn Db, step: ChoiceStep) -> Result<Option<Choice>, StoreError> {
    #[derive(Deserialize)]
    struct Row {
        doc: String,
        card: String,
        basis: String,
        settled_at: i64,
    }
    let row: Option<Row> = db.row(
        "SELECT doc, card, basis, settled_at FROM sending_choices WHERE step = ?",
        vec![step.key().into()],
    )?;
    row.map(|r| {
        Ok(Choice { settled: from_document(&r.doc)?, card: r.card, basis: r.basis, settled_at: r.settled_at })
    })
    .transpose()
}

/// Records the user's answer at a step.
pub fn settle(
    db: &dyn Db,
    step: ChoiceStep,
    settled: &Settled,
    card: &str,
    basis: &str,
    now_ms: i64,
) -> Result<(), StoreError> {
    db.batch(vec![Stmt::new(
        "INSERT INTO sending_choices (step, doc, card, basis, settled_at) VALUES (?, ?, ?, ?, ?) \
         ON CONFLICT(step) DO UPDATE SET doc = excluded.doc, card = excluded.card, basis = excluded.basis, \
         settled_at = CASE WHEN sending_choices.doc = excluded.doc AND sending_choices.basis = excluded.basis \
                           THEN sending_choices.settled_at ELSE excluded.settled_at END",
        vec![step.key().into(), to_document(settled)?.into(), card.into(), basis.into(), now_ms.into()],
    )])?;
    Ok(())
}

/// A hash of the facts a choice rests on.
pub fn basis(facts: &serde_json::Value) -> String {
    crate::ids::sha256_hex(crate::workspace::approvals::canonical_json(facts).as_bytes())[..16].to_owned()
}

/// The basis of the sending source: the sizing's counts.
pub fn source_basis(c: &Capacity) -> String {
    basis(
        &serde_json::json!({ "mailboxes": c.mailboxes, "domains": c.domains, "perDomain": c.mailboxes_per_domain }),
    )
}

/// The basis of the domains: the source and the counts.
pub fn domains_basis(c: &Capacity, source: OrderKind) -> String {
    basis(&serde_json::json!({ "source": source, "mailboxes": c.mailboxes, "domains": c.domains }))
}

/// The basis of the addresses: the domains and the mailbox count.
pub fn email_basis(c: &Capacity, domains: &[PickedDomain]) -> String {
    let names: Vec<&str> = domains.iter().map(|d| d.name.as_str()).collect();
    basis(&serde_json::json!({ "mailboxes": c.mailboxes, "domains": names }))
}

/// Where the user stands on the sending choices, each only if still current.
#[derive(Debug, Clone, Default)]
pub struct Choices {
    /// The confirmed sizing.
    pub sizing: Option<Sizing>,
    /// The current sending source.
    pub source: Option<OrderKind>,
    /// The current domains.
    pub domains: Option<Vec<PickedDomain>>,
    /// The current sender and addresses.
    pub email: Option<(String, String, Vec<PickedAddress>)>,
}

/// The settled choices that still hold, in order: each needs the one before.
pub fn current(db: &dyn Db) -> Result<Choices, StoreError> {
    current_from(db, sizing(db)?)
}

/// [`current`], from the saved sizing already read.
fn current_from(db: &dyn Db, sized: Option<Sizing>) -> Result<Choices, StoreError> {
    let mut out = Choices { sizing: sized.filter(|s| s.confirmed_at.is_some()), ..Choices::default() };
    let Some(cap) = out.sizing.as_ref().map(|s| s.doc.capacity.clone()) else { return Ok(out) };
    let Some(Choice { settled: Settled::Source { source }, basis, .. }) = choice(db, ChoiceStep::Source)?
    else {
        return Ok(out);
    };
    if basis != source_basis(&cap) {
        return Ok(out);
    }
    out.source = Some(source);
    let Some(Choice { settled: Settled::Domains { source: s, domains }, basis, .. }) =
        choice(db, ChoiceStep::Domains)?
    else {
        return Ok(out);
    };
    if s != source || basis != domains_basis(&cap, source) {
        return Ok(out);
    }
    out.domains = Some(domains.clone());
    let Some(Choice { settled: Settled::Email { first_name, last_name, addresses }, basis, .. }) =
        choice(db, ChoiceStep::Email)?
    else {
        return Ok(out);
    };
    if basis == email_basis(&cap, &domains) {
        out.email = Some((first_name, last_name, addresses));
    }
    Ok(out)
}

/// How many mailboxes each domain carries: the sizing's count spread over the domains, most on
/// the first ones, never more than a domain allows.
pub fn spread(mailboxes: u32, domains: &[PickedDomain]) -> Vec<u32> {
    let n = domains.len().max(1) as u32;
    let mut counts: Vec<u32> =
        (0..domains.len() as u32).map(|i| mailboxes / n + u32::from(i < mailboxes % n)).collect();
    for (c, d) in counts.iter_mut().zip(domains) {
        *c = (*c).min(d.max_mailboxes.max(1));
    }
    counts
}

// ---- the order, its domains and mailboxes ----------------------------------------------------

/// An order placed (the `order_sending_setup` approval's executor records it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Order {
    /// The approval id.
    pub id: String,
    /// What was bought.
    pub spec: OrderSpec,
    /// The platform's reference.
    pub reference: String,
    /// What was charged (cents).
    pub charged: Option<i64>,
    /// Currency.
    pub currency: String,
    /// When (ms, platform time).
    pub ordered_at: i64,
}

/// The orders, oldest first.
pub fn orders(db: &dyn Db) -> Result<Vec<Order>, StoreError> {
    #[derive(Deserialize)]
    struct Row {
        id: String,
        doc: String,
        reference: String,
        charged: Option<i64>,
        currency: String,
        ordered_at: i64,
    }
    let rows: Vec<Row> = db.rows(
        "SELECT id, doc, reference, charged, currency, ordered_at FROM sending_orders ORDER BY ordered_at, id",
        vec![],
    )?;
    rows.into_iter()
        .map(|r| {
            Ok(Order {
                id: r.id,
                spec: from_document(&r.doc)?,
                reference: r.reference,
                charged: r.charged,
                currency: r.currency,
                ordered_at: r.ordered_at,
            })
        })
        .collect()
}

/// The statements that record a placed order, its domains and its mailboxes.
pub fn record_order(order: &Order, prices: &[(String, i64)], now_ms: i64) -> Result<Vec<Stmt>, StoreError> {
    let kind = to_document(&order.spec.kind)?;
    let mut stmts = vec![Stmt::new(
        "INSERT OR IGNORE INTO sending_orders (id, kind, doc, reference, charged, currency, ordered_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
        vec![
            order.id.clone().into(),
            kind.clone().into(),
            to_document(&order.spec)?.into(),
            order.reference.clone().into(),
            order.charged.into(),
            order.currency.clone().into(),
            order.ordered_at.into(),
        ],
    )];
    for item in &order.spec.items {
        let price = prices.iter().find(|(d, _)| *d == item.domain).map_or(0, |(_, p)| *p);
        stmts.push(Stmt::new(
            "INSERT OR IGNORE INTO sending_domains (name, order_id, kind, dns, price_year, created_at, updated_at) VALUES (?, ?, ?, NULL, ?, ?, ?)",
            vec![item.domain.clone().into(), order.id.clone().into(), kind.clone().into(), price.into(), now_ms.into(), now_ms.into()],
        ));
        for a in &item.accounts {
            stmts.push(Stmt::new(
                "INSERT OR IGNORE INTO mailboxes (address, domain, order_id, first_name, last_name, kind, status, created_at, updated_at) \
                 VALUES (?, ?, ?, ?, ?, ?, 'setting_up', ?, ?)",
                vec![
                    format!("{}@{}", a.prefix, item.domain).into(),
                    item.domain.clone().into(),
                    order.id.clone().into(),
                    a.first_name.clone().into(),
                    a.last_name.clone().into(),
                    kind.clone().into(),
                    now_ms.into(),
                    now_ms.into(),
                ],
            ));
        }
    }
    Ok(stmts)
}

/// A mailbox's state.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum MailboxStatus {
    /// The platform is creating it (domain, DNS, mailbox).
    SettingUp,
    /// Set up; warm-up not started.
    SetUp,
    /// Warming up.
    Warming,
    /// Ready for cold email.
    Ready,
    /// Paused or in error at the platform.
    Attention,
}

impl MailboxStatus {
    fn as_str(self) -> &'static str {
        match self {
            MailboxStatus::SettingUp => "setting_up",
            MailboxStatus::SetUp => "set_up",
            MailboxStatus::Warming => "warming",
            MailboxStatus::Ready => "ready",
            MailboxStatus::Attention => "attention",
        }
    }
}

/// A mailbox as the workspace keeps it.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct Mailbox {
    /// The address.
    pub address: String,
    /// Its domain.
    pub domain: String,
    /// The order it came from.
    pub order_id: String,
    /// Sender first name.
    pub first_name: String,
    /// Sender last name.
    pub last_name: String,
    /// `"own_names"` or `"already_warmed"` (JSON of [`OrderKind`]).
    pub kind: String,
    /// Its state.
    pub status: MailboxStatus,
    /// When its setup completed (platform time).
    pub setup_done_at: Option<i64>,
    /// When the user asked for warm-up.
    pub warmup_requested_at: Option<i64>,
    /// When warm-up started (platform time).
    pub warmup_started_at: Option<i64>,
    /// Warm-up health (0–100).
    pub health: Option<i64>,
    /// When it became ready (platform time).
    pub ready_at: Option<i64>,
}

impl Mailbox {
    /// Whether it came warmed.
    pub fn pre_warmed(&self) -> bool {
        self.kind.contains("already_warmed")
    }
}

/// Every mailbox, in order.
pub fn mailboxes(db: &dyn Db) -> Result<Vec<Mailbox>, StoreError> {
    db.rows(
        "SELECT address, domain, order_id, first_name, last_name, kind, status, setup_done_at, warmup_requested_at, \
         warmup_started_at, health, ready_at FROM mailboxes ORDER BY created_at, domain, address",
        vec![],
    )
}

/// A domain as the workspace keeps it.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct DomainRow {
    /// The domain.
    pub name: String,
    /// JSON of [`OrderKind`].
    pub kind: String,
    /// The last DNS check, JSON `{spf,dkim,dmarc,mx}` of booleans.
    pub dns: Option<String>,
    /// Registration per year (cents; 0 for warmed domains).
    pub price_year: i64,
}

/// Every domain ordered.
pub fn domains(db: &dyn Db) -> Result<Vec<DomainRow>, StoreError> {
    db.rows("SELECT name, kind, dns, price_year FROM sending_domains ORDER BY created_at, name", vec![])
}

/// When an own-brand mailbox is ready for cold email: warm-up for the least number of days and
/// a health score of 80 or more (DOMAIN §1.4's healthy-sender rule, §3.3).
pub fn warm_enough(started_at: Option<i64>, health: Option<u32>, at: i64, warmup_days: u32) -> bool {
    started_at.is_some_and(|s| at - s >= i64::from(warmup_days) * DAY) && health.is_some_and(|h| h >= 80)
}

/// The expected ready date of own-brand mailboxes ordered at `ordered_at`: set up two business
/// days later, then `warmup_days` of warm-up.
pub fn expected_dates(ordered_at: i64, warmup_days: u32) -> (calendar::Date, calendar::Date) {
    let setup = calendar::add_business_days(
        calendar::utc_date(ordered_at),
        crate::sending::sandbox::SETUP_BUSINESS_DAYS,
    );
    (setup, calendar::add_days(setup, i64::from(warmup_days)))
}

// ---- where the user is -----------------------------------------------------------------------

/// The sending steps' state, for the workspace view and the journey.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Summary {
    /// Mailboxes and domains sized (and whether the user confirmed).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sizing: Option<SizingSummary>,
    /// The settled sending source.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source: Option<OrderKind>,
    /// The settled domains.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub domains: Vec<String>,
    /// How many addresses are settled.
    pub addresses: u32,
    /// Whether the setup is ordered.
    pub ordered: bool,
    /// Mailboxes by state once ordered: set up or not, warming, ready.
    pub mailboxes: u32,
    /// Of which ready for cold email.
    pub mailboxes_ready: u32,
    /// The latest campaign, once staged.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub campaign: Option<CampaignSummary>,
    /// Replies received, and how many were never shown to the user.
    pub replies: i64,
    /// See `replies`.
    pub replies_unread: i64,
    /// Warm-up is under way: some mailbox is not ready yet, and every such one has its warm-up
    /// asked for and needs no attention. Only waiting is left for it.
    #[serde(skip)]
    pub warming: bool,
}

/// The latest campaign in a few figures.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CampaignSummary {
    /// `cmp_…`.
    pub id: String,
    /// Its name.
    pub name: String,
    /// `draft`, `active`, `paused`, `completed` or `stopped`.
    pub status: super::campaigns::State,
    /// Leads in it.
    pub leads: i64,
    /// Emails sent.
    pub sent: u32,
    /// Leads who replied in person.
    pub replied: u32,
    /// Who paused it, when it is paused.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub paused_by: Option<super::campaigns::PausedBy>,
    /// Why it is paused, when it is: who paused it and what lifts the pause.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pause_reason: Option<String>,
}

/// The sizing in a few figures.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SizingSummary {
    /// Emails a business day.
    pub emails_per_day: u32,
    /// Mailboxes.
    pub mailboxes: u32,
    /// Domains.
    pub domains: u32,
    /// Confirmed by the user.
    pub confirmed: bool,
    /// Mailboxes already in place when it was sized: the figures above are what it adds to them.
    #[serde(skip_serializing_if = "is_zero")]
    pub on_top_of: u32,
}

/// Where the user is on the sending steps.
pub fn summary(db: &dyn Db) -> Result<Summary, StoreError> {
    let sized = sizing(db)?;
    let ch = current_from(db, sized.clone())?;
    let boxes = mailboxes(db)?;
    let ordered = !orders(db)?.is_empty();
    let campaign = super::campaigns::find(db, None)?.map(|c| CampaignSummary {
        id: c.id,
        name: c.name,
        status: c.state,
        leads: c.leads,
        sent: c.stats.sent,
        replied: c.stats.replied,
        paused_by: c.paused_by.filter(|_| c.state == super::campaigns::State::Paused),
        pause_reason: c.pause_reason.filter(|_| c.state == super::campaigns::State::Paused),
    });
    let (replies, replies_unread) = super::campaigns::count_replies(db, None, None)?;
    Ok(Summary {
        sizing: sized.map(|s| SizingSummary {
            emails_per_day: s.doc.capacity.emails_per_day,
            mailboxes: s.doc.capacity.mailboxes,
            domains: s.doc.capacity.domains,
            confirmed: s.confirmed_at.is_some(),
            on_top_of: s.doc.on_top_of,
        }),
        source: ch.source,
        domains: ch.domains.unwrap_or_default().into_iter().map(|d| d.name).collect(),
        addresses: ch.email.map_or(0, |(_, _, a)| a.len() as u32),
        ordered,
        mailboxes: boxes.len() as u32,
        mailboxes_ready: boxes.iter().filter(|m| m.status == MailboxStatus::Ready).count() as u32,
        warming: boxes.iter().any(|m| m.status != MailboxStatus::Ready)
            && boxes.iter().all(|m| {
                m.status == MailboxStatus::Ready
                    || (m.status != MailboxStatus::Attention
                        && (m.warmup_requested_at.is_some() || m.pre_warmed()))
            }),
        campaign,
        replies,
        replies_unread,
    })
}

impl Summary {
    /// The journey steps these facts complete (PRODUCT §8).
    pub fn done(&self) -> Vec<super::journey::Step> {
        use super::journey::Step;
        let mut done = Vec::new();
        if self.ordered || self.sizing.as_ref().is_some_and(|s| s.confirmed) {
            done.push(Step::Sizing);
        }
        if self.ordered || self.source.is_some() {
            done.push(Step::SendingSource);
        }
        if self.ordered || self.addresses > 0 {
            done.push(Step::Domains);
        }
        if self.ordered {
            done.push(Step::Setup);
        }
        let launched = self.campaign.as_ref().is_some_and(|c| c.status != super::campaigns::State::Draft);
        if launched || (self.mailboxes > 0 && self.mailboxes_ready == self.mailboxes) {
            done.push(Step::Warmup);
        }
        if launched {
            done.push(Step::Campaign);
        }
        // Replies are read once every reply was shown and the campaign is through (or some came).
        let through = self.campaign.as_ref().is_some_and(|c| c.status == super::campaigns::State::Completed);
        if launched && self.replies_unread == 0 && (self.replies > 0 || through) {
            done.push(Step::Replies);
        }
        done
    }
}

// ---- keeping in step with the platform --------------------------------------------------------

/// Mirrors the platform's view of the mailboxes and domains, turns warm-up on for mailboxes
/// whose warm-up was asked for once they exist, and marks mailboxes ready. Returns whether
/// anything is still in progress (setup or warm-up).
pub async fn sync_setup<P: SendingPlatform>(
    db: &dyn Db,
    config: &Config,
    platform: &P,
) -> Result<bool, PlatformError> {
    let boxes = mailboxes(db)?;
    if boxes.is_empty() {
        return Ok(false);
    }
    let at = platform.observed_ms();
    let emails: Vec<String> = boxes.iter().map(|m| m.address.clone()).collect();
    let mut accounts = platform.accounts(&emails).await?;
    // Warm-up asked for and the mailbox now exists: turn it on.
    let to_enable: Vec<String> = boxes
        .iter()
        .filter(|m| m.warmup_requested_at.is_some())
        .filter(|m| {
            accounts
                .iter()
                .any(|a| a.email == m.address && !a.setup_pending && !a.warmup_on && !a.warmup_blocked)
        })
        .map(|m| m.address.clone())
        .collect();
    if !to_enable.is_empty() {
        match platform.enable_warmup(&to_enable).await {
            Ok(()) => accounts = platform.accounts(&emails).await?,
            // The platform's warm-up job failed: asked again at the next sync, and the mailboxes'
            // states mirrored meanwhile (audit finding: one mailbox the platform would not warm
            // held every mailbox's state back, and with it staging).
            Err(PlatformError::Refused(_)) => {}
            Err(e) => return Err(e),
        }
    }
    let dns = platform.dns(&emails).await?;
    let warmup_days = config.deliverability.warmup_days_min;
    let mut stmts = Vec::new();
    let mut in_progress = false;
    for m in &boxes {
        let Some(a) = accounts.iter().find(|a| a.email == m.address) else {
            in_progress = true;
            continue;
        };
        let status = if a.status != AccountStatus::Active || a.warmup_blocked {
            MailboxStatus::Attention
        } else if a.setup_pending {
            MailboxStatus::SettingUp
        } else if m.pre_warmed()
            || m.status == MailboxStatus::Ready
            || warm_enough(a.warmup_started_at, a.health, at, warmup_days)
        {
            // Ready at once only what was ordered warmed: the platform marks every mailbox it
            // manages alike, a fresh own-brand one on a days-old domain too (audit finding: that
            // one was called ready for cold email before any warm-up).
            MailboxStatus::Ready
        } else if a.warmup_on || a.warmup_started_at.is_some() {
            MailboxStatus::Warming
        } else {
            MailboxStatus::SetUp
        };
        in_progress |= matches!(status, MailboxStatus::SettingUp | MailboxStatus::Warming)
            || (status == MailboxStatus::SetUp && m.warmup_requested_at.is_some());
        stmts.push(Stmt::new(
            "UPDATE mailboxes SET status = ?, health = ?, warmup_started_at = COALESCE(?, warmup_started_at), \
             setup_done_at = CASE WHEN ? THEN COALESCE(setup_done_at, ?) ELSE setup_done_at END, \
             ready_at = CASE WHEN ? THEN COALESCE(ready_at, ?) ELSE ready_at END, updated_at = ? WHERE address = ?",
            vec![
                status.as_str().into(),
                a.health.map(i64::from).into(),
                a.warmup_started_at.into(),
                (!a.setup_pending).into(),
                a.setup_done_at.unwrap_or(at).into(),
                (status == MailboxStatus::Ready).into(),
                at.into(),
                at.into(),
                m.address.clone().into(),
            ],
        ));
    }
    for (domain, d) in dns {
        let doc =
            serde_json::json!({ "spf": d.spf, "dkim": d.dkim, "dmarc": d.dmarc, "mx": d.mx, "tracking": d.tracking }).to_string();
        stmts.push(Stmt::new(
            "UPDATE sending_domains SET dns = ?, updated_at = ? WHERE name = ?",
            vec![doc.into(), at.into(), domain.into()],
        ));
    }
    db.batch(stmts)?;
    Ok(in_progress)
}

/// How often the sync runs while something is in progress.
pub fn next_sync_in(config: &Config, campaigns_active: bool) -> i64 {
    match config.provider_mode {
        // The simulation steps one simulated hour at a time: come back when the next hour is
        // due (nothing changes in between), but not more often than every quarter second.
        ProviderMode::Sandbox => {
            let real = (3_600_000.0 / config.sending.sandbox.time_scale) as i64;
            real.clamp(250, 3_600_000)
        }
        // Instantly: replies are read at most 20 times a minute; every ten minutes while a
        // campaign runs is plenty, every hour while mailboxes are set up or warm up.
        ProviderMode::Live => {
            if campaigns_active {
                600_000
            } else {
                3_600_000
            }
        }
    }
}

/// The most simulated hours one sync runs before handing back (the next run continues).
const MAX_STEPS_PER_SYNC: u32 = 400;

/// Brings the workspace up to date with the sending platform: lets the simulation catch up hour
/// by hour (reacting between hours, as a real platform's events would be handled), mirrors the
/// mailboxes, and follows the campaigns. Returns when the sync should run again (ms from now),
/// if anything is still in progress.
pub async fn sync(
    db: &dyn Db,
    config: &Config,
    outbound: &dyn Outbound,
    now_ms: i64,
) -> Result<Option<i64>, PlatformError> {
    let platform = platform::open(db, config, outbound, now_ms)?;
    let mut steps = 0;
    let mut busy;
    let mut follow;
    loop {
        let advanced = platform.advance().await?;
        // The campaigns (their replies, opt-outs and bounces) are followed even when the
        // mailboxes' part failed (a mailbox the platform banned, say); its error comes after.
        let setup = sync_setup(db, config, &platform).await;
        follow = super::campaigns::sync_campaigns(db, config, &platform, !advanced).await?;
        busy = setup?;
        steps += 1;
        if !advanced {
            break;
        }
        if steps >= MAX_STEPS_PER_SYNC {
            // More to catch up: continue at once on the next run.
            return Ok(Some(0));
        }
    }
    // Paused and ended campaigns still count: their late replies and opt-outs must be read
    // without waiting for the user's next tool call (audit finding).
    Ok((busy || follow != Follow::Nothing).then(|| next_sync_in(config, follow == Follow::Sending)))
}

/// The statement that (re)schedules the sync soon.
pub fn schedule_sync(now_ms: i64) -> Stmt {
    schedule::at::<SyncSending>(SYNC_KEY, now_ms)
}

const SYNC_KEY: &str = "sending";

/// The job that keeps the workspace in step with the sending platform while anything is in
/// progress (setup, warm-up, campaigns and their replies). Idempotent: each run reads the
/// platform's state and writes it with conditional statements.
pub struct SyncSending;

impl Job for SyncSending {
    const NAME: &'static str = "sync_sending";

    async fn run(&self, cx: &JobCx<'_>, _key: &str) -> Result<(), JobError> {
        match sync(cx.db, cx.config, cx.outbound, cx.now_ms).await {
            Ok(Some(after)) => {
                cx.db.batch(vec![schedule::at::<SyncSending>(SYNC_KEY, cx.now_ms + after)])?;
                Ok(())
            }
            Ok(None) => Ok(()),
            Err(PlatformError::Store(e)) => Err(JobError::Store(e)),
            Err(e) => Err(JobError::Retry(e.to_string())),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settled_choices_read_back_as_written() {
        let domain = PickedDomain { name: "a.com".into(), price: 1_200, max_mailboxes: 5 };
        let address = PickedAddress { prefix: "jo".into(), domain: "a.com".into() };
        for settled in [
            Settled::Source { source: OrderKind::AlreadyWarmed },
            Settled::Domains { source: OrderKind::OwnNames, domains: vec![domain] },
            Settled::Email { first_name: "Jo".into(), last_name: "Doe".into(), addresses: vec![address] },
        ] {
            let doc = to_document(&settled).unwrap();
            assert_eq!(from_document::<Settled>(&doc).unwrap(), settled, "{doc}");
        }
        let doc = r#"{"step":"source","source":"own_names"}"#;
        assert_eq!(from_document::<Settled>(doc).unwrap(), Settled::Source { source: OrderKind::OwnNames });
        for (bad, why) in [
            (r#"{"source":"own_names"}"#, "missing field `step`"),
            (r#"{"step":"later"}"#, "unknown variant `later`, expected one of `source`, `domains`, `email`"),
            (r#"{"step":"source"}"#, "missing field `source`"),
            (r#"{"step":"source","source":"cheap"}"#, "unknown variant `cheap`"),
        ] {
            let e = from_document::<Settled>(bad).unwrap_err().to_string();
            assert!(e.contains(why), "{bad}: {e}");
        }
    }

    #[test]
    fn mailboxes_are_spread_over_the_domains() {
        let d = |n: &str| PickedDomain { name: n.into(), price: 1_200, max_mailboxes: 5 };
        assert_eq!(spread(6, &[d("a.com"), d("b.com")]), vec![3, 3]);
        assert_eq!(spread(7, &[d("a.com"), d("b.com"), d("c.com")]), vec![3, 2, 2]);
        assert_eq!(spread(2, &[d("a.com"), d("b.com"), d("c.com")]), vec![1, 1, 0]);
        let small = PickedDomain { max_mailboxes: 2, ..d("s.com") };
        assert_eq!(spread(6, &[small]), vec![2]);
    }

    #[test]
    fn readiness_needs_two_weeks_and_a_healthy_score() {
        let start = 0;
        assert!(!warm_enough(None, Some(99), 30 * DAY, 14));
        assert!(!warm_enough(Some(start), Some(99), 13 * DAY, 14));
        assert!(!warm_enough(Some(start), Some(70), 20 * DAY, 14));
        assert!(warm_enough(Some(start), Some(85), 14 * DAY, 14));
        // Ordered on Friday 27 November 2026: set up on Tuesday 1 December, ready 14 days later.
        let friday = calendar::date_start_ms(calendar::parse_iso("2026-11-27").unwrap()) + 15 * 3_600_000;
        let (setup, ready) = expected_dates(friday, 14);
        assert_eq!((calendar::iso(setup), calendar::iso(ready)), ("2026-12-01".into(), "2026-12-15".into()));
    }
}

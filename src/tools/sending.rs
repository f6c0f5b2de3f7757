//! Sending tools (PRODUCT §5–§8): sizing the capacity, the questions that settle the sending
//! source, the domains and the addresses (seed 001 "Questions and answers"), the order of the
//! setup (an approval), its progress and the warm-up.
//!
//! The questions never set up, reserve or bill anything: they only record the user's answer.
//! Each is a [`Question`] whose card hashes what it shows, so an answer given to an older
//! version of the question (other prices, other stock, another date) does not count.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::registry::{Access, Hints, Refusal, Reply, Tool, ToolCx};
use super::workspace::NoArguments;
use crate::plans::{Limit, Money, plural};
use crate::sending::calendar;
use crate::sending::choice::{self, Answer, Choice, Item, Picked, Question};
use crate::sending::names::{self, PATTERN_SETS, Sender};
use crate::sending::platform::{
    self, AccountSpec, OrderItem, OrderKind, OrderSpec, Platform, PlatformError, SendingPlatform,
};
use crate::sending::sizing::{self, Capacity, Request, Unit};
use crate::workspace::approvals::{self, Action, ApprovalResult, ExecCx, ExecError, Executed, Proposal};
use crate::workspace::sending::{
    self as store, ChoiceStep, Choices, MailboxStatus, PickedAddress, PickedDomain, Settled, SizingDoc,
};
use crate::workspace::{billing, limits, offer};

/// The most answers a choice tool takes back.
const MAX_ANSWERS: usize = 20;

// ---- shared wire types ---------------------------------------------------------------------

/// How often a price is paid.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Interval {
    /// Every year (domain registrations: not refundable).
    Year,
    /// Every month (mailboxes).
    Month,
}

/// A price.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Price {
    /// In the currency's minor unit (cents).
    pub amount: i64,
    /// ISO 4217, lower-case.
    pub currency: String,
    /// How often it is paid.
    pub interval: Interval,
}

impl Price {
    fn new(amount: i64, currency: &str, interval: Interval) -> Self {
        Price { amount, currency: currency.to_owned(), interval }
    }

    fn display(&self) -> String {
        let per = match self.interval {
            Interval::Year => "year",
            Interval::Month => "month",
        };
        format!("{}/{per}", Money::new(self.amount, &self.currency).display())
    }
}

/// What to do next.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Next {
    /// The tool to call.
    pub tool: String,
    /// For people.
    pub title: String,
    /// Why.
    pub why: String,
}

fn next(tool: &str, title: &str, why: &str) -> Next {
    Next { tool: tool.into(), title: title.into(), why: why.into() }
}

/// Turns a platform failure into a refusal: what the platform refused is shown; anything else
/// is a problem on VibeSell's side, logged with the detail.
pub fn refusal(e: PlatformError) -> Refusal {
    match e {
        PlatformError::Refused(why) => {
            Refusal::guidance(format!("The sending platform refused: {why} Nothing was set up or charged."))
        }
        other => Refusal::Internal(format!("sending platform: {other}")),
    }
}

fn open<'a>(cx: &'a ToolCx<'a>) -> Result<Platform<'a>, Refusal> {
    platform::open(cx.db, cx.config, cx.outbound, cx.now_ms).map_err(refusal)
}

fn check_answers(answers: &[Answer]) -> Result<(), Refusal> {
    if answers.len() > MAX_ANSWERS {
        return Err(Refusal::InvalidArguments(format!("at most {MAX_ANSWERS} answers")));
    }
    Ok(())
}

fn primary_domain(cx: &ToolCx<'_>) -> Result<Option<String>, Refusal> {
    Ok(offer::load(cx.db)?.and_then(|(o, _)| o.website).and_then(|w| names::primary_domain(&w)))
}

// ---- size_sending_capacity / confirm_sizing ------------------------------------------------

/// `size_sending_capacity`: volume → mailboxes → domains.
pub struct SizeSendingCapacity;

/// The volume the user wants.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SizeInput {
    /// How much the user wants to send, in `unit`s (e.g. 45 new leads a day, or 3,000 emails a
    /// month).
    #[schemars(range(min = 1, max = 1_000_000))]
    pub volume: u32,
    /// What `volume` counts: emails or new leads, per business day or per month.
    pub unit: Unit,
    /// Emails per lead (the steps of the sequence); defaults to the saved sequence's steps, or
    /// the longest recommended sequence.
    #[schemars(range(min = 1, max = 7))]
    pub steps: Option<u32>,
    /// Cold emails per warmed mailbox per day; defaults to 30 (20–50 allowed; more risks spam).
    #[schemars(range(min = 1, max = 100))]
    pub per_mailbox: Option<u32>,
}

/// The sizing.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(tag = "kind", rename = "sizing", rename_all = "camelCase")]
pub struct SizingView {
    /// Whether the user confirmed it (`confirm_sizing`).
    pub confirmed: bool,
    /// The figures.
    #[serde(flatten)]
    pub capacity: Capacity,
    /// The workspace's plan.
    pub plan: String,
    /// How many mailboxes the plan allows.
    pub plan_mailbox_limit: i64,
    /// Whether the mailboxes fit the plan.
    pub within_plan: bool,
    /// The cheapest plan that fits, when this one does not.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub upgrade_to: Option<String>,
    /// The assumptions and what to know.
    pub notes: Vec<String>,
    /// When it was sized (ms since the epoch).
    pub sized_at: i64,
}

fn sizing_view(cx: &ToolCx<'_>, s: &store::Sizing) -> Result<SizingView, Refusal> {
    let d = &cx.config.deliverability;
    let c = &s.doc.capacity;
    let plan = billing::current(cx.db, cx.config)?.plan;
    let limit = plan.limits.get(Limit::Mailboxes);
    // Sizing with mailboxes already set up sizes what to add: the plan must hold both (audit
    // finding: sized again for the whole volume, a second order bought it all again).
    let in_place = limits::used(cx.db, Limit::Mailboxes, cx.now_ms)?.max(0);
    let after = in_place + i64::from(c.mailboxes);
    let within = after <= limit;
    let better = (!within).then(|| cx.config.plans.cheapest_with(Limit::Mailboxes, after)).flatten();
    let mut notes = Vec::new();
    if in_place > 0 {
        notes.push(format!(
            "{} already set up: these figures are for the volume to add on top of them, and ordering adds that many.",
            plural(in_place, "mailbox is", "mailboxes are")
        ));
    }
    notes.push(format!(
        "Estimates from the deliverability defaults: {} cold emails per warmed mailbox a day, {} mailboxes per domain, \
         Monday to Friday in the recipients' time zone.",
        c.per_mailbox, d.mailboxes_per_domain
    ));
    if matches!(c.unit, Unit::EmailsPerMonth | Unit::NewLeadsPerMonth) {
        notes.push(format!(
            "{} is about {} a business day.",
            c.unit.describe(c.volume),
            match c.unit {
                Unit::EmailsPerMonth => plural(c.emails_per_day, "email", "emails"),
                _ => plural(c.new_leads_per_day, "new lead", "new leads"),
            }
        ));
    }
    match primary_domain(cx)? {
        Some(p) => notes.push(format!(
            "Never from {p}: cold email goes out from separate look-alike domains, so {p} keeps its reputation."
        )),
        None => notes.push(
            "Never from the user's own domain: cold email goes out from separate look-alike domains.".to_owned(),
        ),
    }
    notes.push(format!(
        "New mailboxes warm up {}–{} days before any cold email, then ramp from 2 to {} emails a day over {} days; \
         already-warmed addresses skip the warm-up.",
        c.warmup_days_min, c.warmup_days_max, c.per_mailbox, c.ramp_days
    ));
    if within {
        notes.push(format!("Fits the {} plan ({}).", plan.name, Limit::Mailboxes.describe(limit)));
    } else {
        notes.push(match better {
            Some(b) => format!(
                "The {} plan allows {}; {} need the {} plan ({}/month).",
                plan.name,
                Limit::Mailboxes.describe(limit),
                plural(after, "mailbox", "mailboxes"),
                b.name,
                cx.config.plans.price(b).display()
            ),
            None => format!(
                "No plan allows {}: lower the volume, or contact support.",
                plural(after, "mailbox", "mailboxes")
            ),
        });
    }
    Ok(SizingView {
        confirmed: s.confirmed_at.is_some(),
        capacity: c.clone(),
        plan: plan.name.clone(),
        plan_mailbox_limit: limit,
        within_plan: within,
        upgrade_to: better.map(|b| b.id.clone()),
        notes,
        sized_at: s.updated_at,
    })
}

fn sizing_text(v: &SizingView, headline: &str) -> String {
    let c = &v.capacity;
    // A volume in emails that the steps do not divide gives a rounded number of leads: said as a
    // division then, so that the sum shown adds up (third journey walk: "33 new leads a day × 3
    // steps = 100 emails").
    let volume = if c.new_leads_per_day.saturating_mul(c.steps) == c.emails_per_day {
        format!(
            "{} new leads a day × {} steps = {} emails a business day",
            c.new_leads_per_day, c.steps, c.emails_per_day
        )
    } else {
        format!(
            "{} emails a business day ÷ {} steps ≈ {} new leads a day",
            c.emails_per_day, c.steps, c.new_leads_per_day
        )
    };
    let mut t = format!(
        "**{headline}:** {volume} → **{}** ({} emails each) on **{}** ({} mailboxes per domain).\n",
        plural(c.mailboxes, "mailbox", "mailboxes"),
        c.per_mailbox,
        plural(c.domains, "domain", "domains"),
        c.mailboxes_per_domain
    );
    for n in &v.notes {
        t.push_str(&format!("- {n}\n"));
    }
    t
}

impl Tool for SizeSendingCapacity {
    type Input = SizeInput;
    type Output = SizingView;
    const NAME: &'static str = "size_sending_capacity";
    const TITLE: &'static str = "Size the sending capacity";
    const DESCRIPTION: &'static str = "Turns the volume the user wants (emails or new leads, per business day or \
        per month) into the mailboxes, sending domains, per-mailbox daily sends and ramp it takes, from the \
        deliverability defaults, and checks it against the plan's mailbox limit. Nothing is bought. Show the result \
        to the user; when they agree, call confirm_sizing. Sizing again replaces the previous sizing. With mailboxes \
        already set up, size the volume to add on top of them: that is what the next order buys.";
    const ACCESS: Access = Access::Act;
    const HINTS: Hints = Hints { idempotent: true, open_world: false };

    async fn call(&self, cx: &ToolCx<'_>, input: SizeInput) -> Result<Reply<SizingView>, Refusal> {
        let d = &cx.config.deliverability;
        // The saved sequence's length when there is one, else the longest recommended sequence.
        let saved_steps =
            crate::workspace::sequence::load(cx.db)?.map(|s| s.steps.len() as u32).filter(|n| *n > 0);
        let req = Request {
            volume: input.volume,
            unit: input.unit,
            steps: input.steps.or(saved_steps).unwrap_or(d.steps_max),
            per_mailbox: input.per_mailbox.unwrap_or(d.sends_per_mailbox_per_day),
        };
        let capacity = sizing::size(&req, d).map_err(|e| {
            Refusal::InvalidArguments(match e {
                sizing::Invalid::NoVolume => "`volume` must be at least 1".into(),
                sizing::Invalid::Steps => format!("`steps` must be between 1 and {}", sizing::MAX_STEPS),
                sizing::Invalid::PerMailbox { min, max } => {
                    format!("`per_mailbox` must be between {min} and {max}: more lands in spam")
                }
            })
        })?;
        let on_top_of = u32::try_from(limits::used(cx.db, Limit::Mailboxes, cx.now_ms)?).unwrap_or(0);
        let saved = store::save_sizing(cx.db, &SizingDoc { request: req, capacity, on_top_of }, cx.now_ms)?;
        let view = sizing_view(cx, &saved)?;
        let mut text = sizing_text(&view, "Sizing");
        text.push_str(
            "\nShow this to the user. When they agree, call confirm_sizing; to change it, call size_sending_capacity again.",
        );
        Ok(Reply::new(text, view))
    }
}

/// `confirm_sizing`: the user agrees with the sizing.
pub struct ConfirmSizing;

impl Tool for ConfirmSizing {
    type Input = NoArguments;
    type Output = SizingView;
    const NAME: &'static str = "confirm_sizing";
    const TITLE: &'static str = "Confirm the sizing";
    const DESCRIPTION: &'static str = "Confirms the latest sizing from size_sending_capacity, once the user agreed \
        with it: the mailboxes and domains it names are what the sending setup will be built for. Nothing is bought. \
        Call it only after the user said yes. Next: choose_sending_source.";
    const ACCESS: Access = Access::Act;
    const HINTS: Hints = Hints { idempotent: true, open_world: false };

    async fn call(&self, cx: &ToolCx<'_>, _: NoArguments) -> Result<Reply<SizingView>, Refusal> {
        if store::sizing(cx.db)?.is_none() {
            return Err(Refusal::guidance(
                "There is no sizing to confirm yet: ask the user how much they want to send, then call \
                 size_sending_capacity.",
            ));
        }
        store::confirm_sizing(cx.db, cx.now_ms)?;
        let saved = store::sizing(cx.db)?.ok_or_else(|| Refusal::Internal("sizing vanished".into()))?;
        let view = sizing_view(cx, &saved)?;
        let mut text = sizing_text(&view, "Sizing confirmed");
        if !view.within_plan {
            text.push_str(
                "\nThe plan does not allow that many mailboxes yet: the user can upgrade before ordering the setup.",
            );
        }
        text.push_str(
            "\nNext: call choose_sending_source to ask the user which sending addresses they want.",
        );
        Ok(Reply::new(text, view))
    }
}

// ---- choose_sending_source -------------------------------------------------------------------

/// A settled sending choice: the source, or the domains.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SendingChoice {
    /// What was settled: `source` or `domains`.
    pub step: String,
    /// `own_names` (under the user's brand) or `already_warmed`.
    pub source: OrderKind,
    /// For people.
    pub label: String,
    /// What it means.
    pub description: String,
    /// The date the mailboxes are expected to be set up (`YYYY-MM-DD`).
    pub setup_date: String,
    /// The date cold email can start (`YYYY-MM-DD`): after warm-up for own-brand addresses.
    pub ready_date: String,
    /// Mailboxes.
    pub mailboxes: u32,
    /// How many domains.
    pub domain_count: u32,
    /// The domains picked, with their prices (once the domains are settled).
    pub domains: Vec<DomainPrice>,
    /// What to do next.
    pub next: Next,
}

/// A domain with its price.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DomainPrice {
    /// The domain.
    pub name: String,
    /// Registration per year (own brand), or its mailboxes per month (already warmed).
    pub price: Price,
}

/// The result of a question tool: the question, or what was settled.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum SourceOutput {
    /// A question for the user.
    Choice(Choice),
    /// The settled choice.
    SendingChoice(SendingChoice),
}

/// The answers so far, for a question tool.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AnswersInput {
    /// The answers given so far: the `answers` of the last `choice` result plus the user's new
    /// answer as `{card, answer}`. Empty (or absent) to ask.
    #[serde(default)]
    #[schemars(length(max = 20))]
    pub answers: Vec<Answer>,
}

/// `choose_sending_source`: already-warmed addresses, or addresses under the user's brand.
pub struct ChooseSendingSource;

fn need_sizing(ch: &Choices) -> Result<&Capacity, Refusal> {
    ch.sizing.as_ref().map(|s| &s.doc.capacity).ok_or_else(|| {
        Refusal::guidance(
            "The sending capacity is not sized and confirmed yet: call size_sending_capacity with the volume the \
             user wants, then confirm_sizing once they agree.",
        )
    })
}

fn source_label(kind: OrderKind) -> &'static str {
    match kind {
        OrderKind::AlreadyWarmed => "Start sooner",
        OrderKind::OwnNames => "Send under my brand",
    }
}

pub(crate) fn ready_dates(kind: OrderKind, today: i64, warmup_days: u32) -> (calendar::Date, calendar::Date) {
    match kind {
        OrderKind::OwnNames => store::expected_dates(today, warmup_days),
        OrderKind::AlreadyWarmed => {
            let d = calendar::utc_date(today);
            (d, d)
        }
    }
}

fn settled_view(
    step: &str,
    kind: OrderKind,
    cap: &Capacity,
    today: i64,
    warmup_days: u32,
    domains: Vec<DomainPrice>,
) -> SendingChoice {
    let (setup, ready) = ready_dates(kind, today, warmup_days);
    let description = match kind {
        OrderKind::OwnNames => format!(
            "{} on {} of the user's brand, created for them: set up by about {} (2 business days, weekends not \
             counted), then {warmup_days} days of warm-up; cold email from about {}.",
            plural(cap.mailboxes, "address", "addresses"),
            plural(cap.domains, "look-alike domain", "look-alike domains"),
            calendar::human(setup),
            calendar::human(ready)
        ),
        OrderKind::AlreadyWarmed => format!(
            "{} on {} already warmed up, without the user's brand: ready to send about an hour after ordering.",
            plural(cap.mailboxes, "address", "addresses"),
            plural(cap.domains, "domain", "domains")
        ),
    };
    let next = match (step, kind) {
        ("source", OrderKind::OwnNames) => next(
            "propose_domains",
            "Pick the domains",
            "VibeSell proposes look-alikes of the brand with their prices.",
        ),
        ("source", OrderKind::AlreadyWarmed) => next(
            "propose_warmed_domains",
            "Pick the warmed domains",
            "VibeSell shows the warmed domains in stock with their prices.",
        ),
        _ => next("propose_email", "Name the mailboxes", "The addresses are made from the sender's name."),
    };
    SendingChoice {
        step: step.to_owned(),
        source: kind,
        label: source_label(kind).to_owned(),
        description,
        setup_date: calendar::iso(setup),
        ready_date: calendar::iso(ready),
        mailboxes: cap.mailboxes,
        domain_count: cap.domains,
        domains,
        next,
    }
}

/// Reads a free-text answer to the source question, by whole words (PRODUCT §5: never pick for
/// the user). A question back, a doubt or a negation is not an answer ("I don't know, what do
/// you recommend?" once read as "now"): `None`, and the question is asked again.
fn source_from_words(text: &str) -> Option<OrderKind> {
    // Every run of other characters becomes one space, and the whole is padded with spaces, so
    // that " now " matches the word and never "know".
    let mut t = String::from(" ");
    for c in text.to_lowercase().chars() {
        if c.is_alphanumeric() {
            t.push(c);
        } else if !t.ends_with(' ') {
            t.push(' ');
        }
    }
    t.push(' ');
    let any = |phrases: &[&str]| phrases.iter().any(|p| t.contains(&format!(" {p} ")));
    let unsure = text.contains('?')
        || any(&[
            "not",
            "no",
            "don",
            "dont",
            "never",
            "unsure",
            "maybe",
            "recommend",
            "which",
            "what",
            "either",
        ]);
    let brand =
        any(&["brand", "branded", "own", "my name", "my company", "our name", "under my", "under our"]);
    let warmed = any(&[
        "warm",
        "warmed",
        "sooner",
        "soonest",
        "fast",
        "faster",
        "fastest",
        "quick",
        "quickly",
        "quickest",
        "now",
        "asap",
        "right away",
        "immediately",
    ]);
    match (unsure, brand, warmed) {
        (false, true, false) => Some(OrderKind::OwnNames),
        (false, false, true) => Some(OrderKind::AlreadyWarmed),
        _ => None,
    }
}

/// Reads mailbox names from a free-text answer: a list, one name per item, the items separated by
/// commas, semicolons, line breaks, `and` or `or` ("anna, a.berg and sales@"). Anything else, a
/// sentence such as "I prefer the first option", is not a list of names: `None`, so that the
/// question is asked again rather than its words becoming mailboxes.
fn mailbox_names(text: &str) -> Option<Vec<String>> {
    let mut named: Vec<String> = Vec::new();
    for item in text.split([',', ';', '\n']) {
        let mut words = 0;
        for word in item.split_whitespace() {
            if ["and", "or", "&"].iter().any(|s| word.eq_ignore_ascii_case(s)) {
                words = 0;
                continue;
            }
            // Two words in a row are a sentence, not one name.
            words += 1;
            if words > 1 {
                return None;
            }
            let local = names::local_part_of(word)?;
            if !named.contains(&local) {
                named.push(local);
            }
        }
    }
    Some(named)
}

impl Tool for ChooseSendingSource {
    type Input = AnswersInput;
    type Output = SourceOutput;
    const NAME: &'static str = "choose_sending_source";
    const TITLE: &'static str = "Choose the sending addresses";
    const DESCRIPTION: &'static str = "Asks the user where their emails will come from: addresses already warmed up \
        (ready to send at once, without their brand's name) or addresses under their brand (ready about 2 business \
        days after ordering, weekends not counted, then warm-up). Returns a choice to put to the user; call again with \
        their answer appended to answers to get sending_choice. Needs a confirmed sizing. Sets up, reserves and bills \
        nothing.";
    const ACCESS: Access = Access::Act;
    const HINTS: Hints = Hints { idempotent: true, open_world: true };

    async fn call(&self, cx: &ToolCx<'_>, input: AnswersInput) -> Result<Reply<SourceOutput>, Refusal> {
        check_answers(&input.answers)?;
        let ch = store::current(cx.db)?;
        let cap = need_sizing(&ch)?.clone();
        let platform = open(cx)?;
        let today = platform.now_ms();
        let warmup_days = cx.config.deliverability.warmup_days_min;
        let shelf = platform.warmed_domains().await.map_err(refusal)?;
        let warmed_available = shelf.len() as u32 >= cap.domains;
        let (setup, ready) = ready_dates(OrderKind::OwnNames, today, warmup_days);
        let mut choices = Vec::new();
        if warmed_available {
            choices.push(Item::new(
                "already_warmed",
                "Start sooner",
                Some(format!(
                    "{} already warmed up, without your brand's name. Ready to send about an hour after ordering, \
                     no warm-up needed.",
                    plural(cap.mailboxes, "address", "addresses")
                )),
            ));
        }
        choices.push(Item::new(
            "own_names",
            "Send under my brand",
            Some(format!(
                "{} on look-alike domains of your brand, created for you: ready after about 2 business days of \
                 preparation (by {}, weekends not counted), then {}–{} days of warm-up, so cold email from about {}.",
                plural(cap.mailboxes, "address", "addresses"),
                calendar::human(setup),
                warmup_days,
                cx.config.deliverability.warmup_days_max,
                calendar::human(ready)
            )),
        ));
        let mut reason =
            "This decides what gets set up for you. Nothing is set up, reserved or billed by this answer."
                .to_owned();
        if !warmed_available {
            reason.push_str(" Already-warmed addresses are out of stock right now.");
        }
        // Asked again after an order: the answer is for more addresses (journey finding: the
        // question read as if nothing had been bought).
        let ordered = store::mailboxes(cx.db)?.len() as u32;
        if ordered > 0 {
            reason.push_str(&format!(
                " {} ordered already (get_sending_setup): this sets up more, for another order.",
                plural(ordered, "mailbox is", "mailboxes are")
            ));
        }
        let q = Question {
            question: "Choose your sending addresses".into(),
            reason,
            choices,
            allow_free_text: true,
            state: json!({ "mailboxes": cap.mailboxes, "domains": cap.domains, "setup": calendar::iso(setup), "ready": calendar::iso(ready), "warmed": warmed_available }),
        };
        let answered = q.answered(Self::NAME, &input.answers);
        let picked = match &answered {
            Some(Picked::Choice(id)) => {
                Some(if id == "already_warmed" { OrderKind::AlreadyWarmed } else { OrderKind::OwnNames })
            }
            Some(Picked::FreeText(text)) => source_from_words(text),
            None => None,
        };
        let card = q.card(Self::NAME);
        let unreadable = answered.is_some() && picked.is_none();
        match picked {
            Some(OrderKind::AlreadyWarmed) if !warmed_available => {}
            Some(kind) => {
                store::settle(
                    cx.db,
                    ChoiceStep::Source,
                    &Settled::Source { source: kind },
                    &card,
                    &store::source_basis(&cap),
                    cx.now_ms,
                )?;
                let view = settled_view("source", kind, &cap, today, warmup_days, Vec::new());
                let text = format!(
                    "**Settled — {}:** {}\nNothing was set up or billed. Next: call {} ({}).",
                    view.label, view.description, view.next.tool, view.next.title
                );
                return Ok(Reply::new(text, SourceOutput::SendingChoice(view)));
            }
            None => {}
        }
        let note = if unreadable {
            Some("The user's answer did not clearly pick one of the options: ask them again.".to_owned())
        } else if choice::has_stale(&card, &input.answers) {
            Some(
                "The question changed since it was answered (dates, stock or sizing), so it is asked again."
                    .to_owned(),
            )
        } else {
            None
        };
        let c = q.to_choice(Self::NAME, json!({}), input.answers);
        Ok(Reply::new(choice::text(&c, note.as_deref()), SourceOutput::Choice(c)))
    }
}

// ---- check_domains ---------------------------------------------------------------------------

/// `check_domains`: availability and price.
pub struct CheckDomains;

/// Domains to check.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CheckDomainsInput {
    /// Domain names such as `getledgerly.com` (1 to 20).
    #[schemars(length(min = 1, max = 20), inner(length(min = 3, max = 80)))]
    pub domains: Vec<String>,
}

/// One domain's availability and price.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct QuotedDomain {
    /// The domain.
    pub name: String,
    /// Whether it can be registered.
    pub available: bool,
    /// Whether it suits cold email (a look-alike on .com or .org, never the user's own domain).
    pub suitable: bool,
    /// Why it is not available or not suitable.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Priced well above a normal registration.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub premium: bool,
    /// Registration per year, when available.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub price: Option<Price>,
}

/// Availability and prices.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(tag = "kind", rename = "domain_quote", rename_all = "camelCase")]
pub struct DomainQuote {
    /// Each domain.
    pub domains: Vec<QuotedDomain>,
    /// The available and suitable ones together, per year.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub total: Option<Price>,
}

/// A registration price above this is premium.
const PREMIUM_AT: i64 = 3_000;

fn placeholder_account() -> AccountSpec {
    AccountSpec { prefix: "hello".into(), first_name: "Hello".into(), last_name: "Team".into() }
}

/// Prices of `domains` from the platform's priced simulation: per year (own brand) or per
/// mailbox per month (already warmed).
async fn prices<P: SendingPlatform>(
    platform: &P,
    kind: OrderKind,
    domains: &[String],
) -> Result<Vec<(String, i64)>, Refusal> {
    if domains.is_empty() {
        return Ok(Vec::new());
    }
    let order = OrderSpec {
        kind,
        items: domains
            .iter()
            .map(|d| OrderItem { domain: d.clone(), accounts: vec![placeholder_account()] })
            .collect(),
    };
    let q = platform.quote(&order).await.map_err(refusal)?;
    Ok(q.items
        .into_iter()
        .map(|i| {
            (i.domain, if kind == OrderKind::OwnNames { i.domain_per_year } else { i.accounts_per_month })
        })
        .collect())
}

fn clean_domain(d: &str) -> String {
    let d = d.trim().trim_end_matches('.').to_ascii_lowercase();
    let d = d.strip_prefix("https://").or_else(|| d.strip_prefix("http://")).unwrap_or(&d).to_owned();
    d.split('/').next().unwrap_or_default().trim_start_matches("www.").to_owned()
}

impl Tool for CheckDomains {
    type Input = CheckDomainsInput;
    type Output = DomainQuote;
    const NAME: &'static str = "check_domains";
    const TITLE: &'static str = "Check domains";
    const DESCRIPTION: &'static str = "Checks whether domains can be registered for sending and what they cost a year, \
        from the registrar, and whether each suits cold email (a look-alike on .com or .org, never the user's own \
        domain). Reserves and buys nothing. Use it for domain ideas the user has; propose_domains proposes and asks.";
    const ACCESS: Access = Access::Read;
    const HINTS: Hints = Hints { idempotent: true, open_world: true };

    async fn call(&self, cx: &ToolCx<'_>, input: CheckDomainsInput) -> Result<Reply<DomainQuote>, Refusal> {
        let mut asked: Vec<String> = Vec::new();
        for d in &input.domains {
            let d = clean_domain(d);
            if !d.is_empty() && !asked.contains(&d) {
                asked.push(d);
            }
        }
        let primary = primary_domain(cx)?;
        let platform = open(cx)?;
        let checks = platform.check_domains(&asked).await.map_err(refusal)?;
        let suitable = |d: &str| match &primary {
            Some(p) => names::unsuitable(d, p),
            None => names::unsuitable(d, ""),
        };
        let priceable: Vec<String> = checks
            .iter()
            .filter(|c| c.available && suitable(&c.domain).is_none())
            .map(|c| c.domain.clone())
            .collect();
        let prices = prices(&platform, OrderKind::OwnNames, &priceable).await?;
        let mut total = 0;
        let domains: Vec<QuotedDomain> = checks
            .into_iter()
            .map(|c| {
                let why_not = suitable(&c.domain);
                let price = prices.iter().find(|(d, _)| *d == c.domain).map(|(_, p)| *p);
                if c.available && why_not.is_none() {
                    total += price.unwrap_or(0);
                }
                QuotedDomain {
                    suitable: why_not.is_none(),
                    reason: if c.available { why_not } else { c.reason },
                    premium: price.is_some_and(|p| p >= PREMIUM_AT),
                    price: price.filter(|_| c.available).map(|p| Price::new(p, "usd", Interval::Year)),
                    available: c.available,
                    name: c.domain,
                }
            })
            .collect();
        let mut text = String::from("**Domain check** (nothing reserved or bought):\n");
        let ours = store::domains(cx.db)?;
        for d in &domains {
            // The workspace's own sending domains are taken, by the user (third journey walk:
            // "not available (already registered)").
            if ours.iter().any(|o| o.name == d.name) {
                text.push_str(&format!(
                    "- {} — already yours: in the sending setup (get_sending_setup)\n",
                    d.name
                ));
                continue;
            }
            let state = match (d.available, d.suitable, &d.price) {
                (true, true, Some(p)) => {
                    format!("available, {}{}", p.display(), if d.premium { " (premium)" } else { "" })
                }
                // Not said to be available: the user's own domain is one (journey finding).
                (true, _, _) => format!("not suitable: {}", d.reason.clone().unwrap_or_default()),
                (false, _, _) => {
                    format!("not available ({})", d.reason.clone().unwrap_or_else(|| "taken".into()))
                }
            };
            text.push_str(&format!("- {} — {state}\n", d.name));
        }
        text.push_str("Domain registrations are not refundable once bought; buying happens only in order_sending_setup, which the user approves.");
        let total = (total > 0).then(|| Price::new(total, "usd", Interval::Year));
        Ok(Reply::new(text, DomainQuote { domains, total }))
    }
}

// ---- propose_domains -------------------------------------------------------------------------

/// `propose_domains`: look-alike domains under the user's brand.
pub struct ProposeDomains;

fn need_source(ch: &Choices, want: OrderKind) -> Result<(), Refusal> {
    match ch.source {
        Some(s) if s == want => Ok(()),
        Some(_) => Err(Refusal::guidance(match want {
            OrderKind::OwnNames => {
                "The user chose already-warmed addresses: call propose_warmed_domains instead (or \
                 choose_sending_source again if they changed their mind)."
            }
            OrderKind::AlreadyWarmed => {
                "The user chose addresses under their brand: call propose_domains instead (or \
                 choose_sending_source again if they changed their mind)."
            }
        })),
        None => Err(Refusal::guidance(
            "The sending source is not settled (or the sizing changed since): call choose_sending_source and put its \
             question to the user.",
        )),
    }
}

/// Domain-looking words of a free-text answer.
fn domains_in(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for word in text.split(|c: char| c.is_whitespace() || c == ',' || c == ';') {
        let d = clean_domain(word.trim_matches(|c: char| !c.is_ascii_alphanumeric() && c != '.'));
        if d.contains('.') && !d.starts_with('.') && !out.contains(&d) {
            out.push(d);
        }
    }
    out
}

/// Builds sets of `n` domains from `available` (in order), at most three.
fn sets(available: &[(String, i64)], n: usize) -> Vec<Vec<(String, i64)>> {
    available.chunks(n.max(1)).filter(|c| c.len() == n).take(3).map(<[_]>::to_vec).collect()
}

fn set_item(i: usize, set: &[(String, i64)], interval: Interval, extra: &str) -> Item {
    let names: Vec<&str> = set.iter().map(|(d, _)| d.as_str()).collect();
    let total: i64 = set.iter().map(|(_, p)| p).sum();
    let each: Vec<String> =
        set.iter().map(|(d, p)| format!("{d} {}", Price::new(*p, "usd", interval).display())).collect();
    Item::new(
        format!("set_{}", i + 1),
        names.join(" + "),
        Some(format!("{}; {} in all{extra}", each.join(", "), Price::new(total, "usd", interval).display())),
    )
}

impl Tool for ProposeDomains {
    type Input = AnswersInput;
    type Output = SourceOutput;
    const NAME: &'static str = "propose_domains";
    const TITLE: &'static str = "Propose sending domains";
    const DESCRIPTION: &'static str = "Proposes look-alike domains of the user's brand (from the offer's website; \
        never the user's own domain), available at the registrar with their yearly prices, and asks the user to pick \
        as many as the sizing needs. Returns a choice; call again with the answer appended to answers to get \
        sending_choice. For addresses under the user's brand. Reserves and buys nothing.";
    const ACCESS: Access = Access::Act;
    const HINTS: Hints = Hints { idempotent: true, open_world: true };

    async fn call(&self, cx: &ToolCx<'_>, input: AnswersInput) -> Result<Reply<SourceOutput>, Refusal> {
        check_answers(&input.answers)?;
        let ch = store::current(cx.db)?;
        let cap = need_sizing(&ch)?.clone();
        need_source(&ch, OrderKind::OwnNames)?;
        let primary = primary_domain(cx)?.ok_or_else(|| {
            Refusal::guidance(
                "The offer has no website, so VibeSell cannot tell the user's own domain (which cold email must never \
                 use) or their brand: ask for the website and call save_offer with it.",
            )
        })?;
        let n = cap.domains as usize;
        let platform = open(cx)?;
        let candidates: Vec<String> = platform
            .similar_domains(&primary)
            .await
            .map_err(refusal)?
            .into_iter()
            .filter(|d| names::unsuitable(d, &primary).is_none())
            .take(15)
            .collect();
        let free: Vec<String> = platform
            .check_domains(&candidates)
            .await
            .map_err(refusal)?
            .into_iter()
            .filter(|c| c.available)
            .map(|c| c.domain)
            .collect();
        let priced = prices(&platform, OrderKind::OwnNames, &free).await?;
        let offered = sets(&priced, n);
        let choices: Vec<Item> = offered
            .iter()
            .enumerate()
            .map(|(i, s)| set_item(i, s, Interval::Year, "; not refundable once bought"))
            .collect();
        let brand = names::brand(&primary);
        let mut reason = format!(
            "Pick {} for the sending addresses: look-alikes of {brand}, so {primary} itself never sends cold email. \
             Nothing is reserved or bought by this answer.",
            plural(n as u32, "domain", "domains")
        );
        if offered.is_empty() {
            reason.push_str(" Too few of the proposed domains are free: the user can name their own ideas.");
        }
        let q = Question {
            question: format!("Choose {} for your sending addresses", plural(n as u32, "domain", "domains")),
            reason,
            choices,
            allow_free_text: true,
            state: json!({ "primary": primary, "n": n, "offered": offered }),
        };
        let card = q.card(Self::NAME);
        let answered = q.answered(Self::NAME, &input.answers);
        let mut note = None;
        let picked: Option<Vec<(String, i64)>> = match answered {
            Some(Picked::Choice(id)) => offered
                .iter()
                .enumerate()
                .find(|(i, _)| format!("set_{}", i + 1) == id)
                .map(|(_, s)| s.clone()),
            Some(Picked::FreeText(text)) => {
                let named = domains_in(&text);
                let problems: Vec<String> =
                    named.iter().filter_map(|d| names::unsuitable(d, &primary)).collect();
                if named.len() != n {
                    note = Some(format!(
                        "The user named {} but {} {} needed: ask them again.",
                        plural(named.len() as u32, "domain", "domains"),
                        n,
                        if n == 1 { "is" } else { "are" }
                    ));
                    None
                } else if !problems.is_empty() {
                    note = Some(format!("Not usable: {}. Ask the user again.", problems.join("; ")));
                    None
                } else {
                    let checks = platform.check_domains(&named).await.map_err(refusal)?;
                    let taken: Vec<String> =
                        checks.iter().filter(|c| !c.available).map(|c| c.domain.clone()).collect();
                    if taken.is_empty() {
                        Some(prices(&platform, OrderKind::OwnNames, &named).await?)
                    } else {
                        note = Some(format!("Already taken: {}. Ask the user again.", taken.join(", ")));
                        None
                    }
                }
            }
            None => None,
        };
        if let Some(set) = picked {
            let today = platform.now_ms();
            return settle_domains(
                cx,
                &cap,
                &card,
                OrderKind::OwnNames,
                &set,
                cap.mailboxes_per_domain,
                today,
            );
        }
        let unusable = note.clone();
        if unusable.is_none() && choice::has_stale(&card, &input.answers) {
            note = Some(
                "The question changed since it was answered (availability or prices), so it is asked again."
                    .into(),
            );
        }
        let c = choice::again(q.to_choice(Self::NAME, json!({}), input.answers), unusable);
        Ok(Reply::new(choice::text(&c, note.as_deref()), SourceOutput::Choice(c)))
    }
}

/// Settles the domains step with the picked set (name, price in cents) of `kind` — look-alikes
/// priced per year, or warmed domains priced per month — and answers with the settled view.
/// Nothing is reserved, bought or billed here: the order is its own approval.
fn settle_domains(
    cx: &ToolCx<'_>,
    cap: &Capacity,
    card: &str,
    kind: OrderKind,
    set: &[(String, i64)],
    max_mailboxes: u32,
    today: i64,
) -> Result<Reply<SourceOutput>, Refusal> {
    let domains: Vec<PickedDomain> =
        set.iter().map(|(d, p)| PickedDomain { name: d.clone(), price: *p, max_mailboxes }).collect();
    let settled = Settled::Domains { source: kind, domains: domains.clone() };
    store::settle(cx.db, ChoiceStep::Domains, &settled, card, &store::domains_basis(cap, kind), cx.now_ms)?;
    let (interval, what, nothing) = match kind {
        OrderKind::OwnNames => (Interval::Year, "domains", "reserved or bought"),
        OrderKind::AlreadyWarmed => (Interval::Month, "warmed domains", "reserved or billed"),
    };
    let priced = domains
        .iter()
        .map(|d| DomainPrice { name: d.name.clone(), price: Price::new(d.price, "usd", interval) })
        .collect();
    let view = settled_view("domains", kind, cap, today, cx.config.deliverability.warmup_days_min, priced);
    let list: Vec<String> =
        view.domains.iter().map(|d| format!("{} ({})", d.name, d.price.display())).collect();
    let text = format!(
        "**Settled — {what}:** {}.\nNothing was {nothing}. Next: call propose_email to name the mailboxes from \
         the sender's name.",
        list.join(", ")
    );
    Ok(Reply::new(text, SourceOutput::SendingChoice(view)))
}

// ---- list_warmed_domains / propose_warmed_domains ----------------------------------------------

/// `list_warmed_domains`: the warmed domains in stock.
pub struct ListWarmedDomains;

/// A warmed domain in stock.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ShelfItem {
    /// The domain.
    pub name: String,
    /// Mailboxes it can carry.
    pub mailboxes: u32,
    /// Days it has been warming, when known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub age_days: Option<u32>,
    /// Warm-up health (0–100), when known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub health: Option<u32>,
    /// Price of one mailbox on it, per month.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub price: Option<Price>,
}

/// The warmed domains in stock.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(tag = "kind", rename = "warmed_shelf", rename_all = "camelCase")]
pub struct WarmedShelf {
    /// In stock now (may be empty: stock comes and goes).
    pub domains: Vec<ShelfItem>,
}

async fn shelf<P: SendingPlatform>(platform: &P) -> Result<Vec<ShelfItem>, Refusal> {
    let mut stock = platform.warmed_domains().await.map_err(refusal)?;
    stock.sort_by(|a, b| {
        b.health.cmp(&a.health).then(b.age_days.cmp(&a.age_days)).then(a.domain.cmp(&b.domain))
    });
    let names: Vec<String> = stock.iter().map(|s| s.domain.clone()).collect();
    let prices = prices(platform, OrderKind::AlreadyWarmed, &names).await?;
    Ok(stock
        .into_iter()
        .map(|s| ShelfItem {
            price: prices
                .iter()
                .find(|(d, _)| *d == s.domain)
                .map(|(_, p)| Price::new(*p, "usd", Interval::Month)),
            name: s.domain,
            mailboxes: s.max_mailboxes,
            age_days: s.age_days,
            health: s.health,
        })
        .collect())
}

impl Tool for ListWarmedDomains {
    type Input = NoArguments;
    type Output = WarmedShelf;
    const NAME: &'static str = "list_warmed_domains";
    const TITLE: &'static str = "List warmed domains";
    const DESCRIPTION: &'static str = "Lists the domains already warmed up that are in stock now, with the mailboxes \
        each can carry, their warm-up age and health when known, and the monthly price of a mailbox. Addresses on them \
        send at once, without the user's brand. Reserves nothing; stock comes and goes.";
    const ACCESS: Access = Access::Read;
    const HINTS: Hints = Hints { idempotent: true, open_world: true };

    async fn call(&self, cx: &ToolCx<'_>, _: NoArguments) -> Result<Reply<WarmedShelf>, Refusal> {
        let platform = open(cx)?;
        let domains = shelf(&platform).await?;
        let text = if domains.is_empty() {
            "No warmed domain is in stock right now. Addresses under the user's brand are always available (ready \
             after about 2 business days, then warm-up)."
                .to_owned()
        } else {
            let mut t = format!("**{} warmed domains in stock** (nothing reserved):\n", domains.len());
            for d in &domains {
                t.push_str(&format!(
                    "- {} — up to {} mailboxes{}{}\n",
                    d.name,
                    d.mailboxes,
                    d.health.map(|h| format!(", health {h}")).unwrap_or_default(),
                    d.price.as_ref().map(|p| format!(", {} per mailbox", p.display())).unwrap_or_default()
                ));
            }
            t
        };
        Ok(Reply::new(text, WarmedShelf { domains }))
    }
}

/// `propose_warmed_domains`: which warmed domains to use.
pub struct ProposeWarmedDomains;

impl Tool for ProposeWarmedDomains {
    type Input = AnswersInput;
    type Output = SourceOutput;
    const NAME: &'static str = "propose_warmed_domains";
    const TITLE: &'static str = "Propose warmed domains";
    const DESCRIPTION: &'static str = "Proposes sets of already-warmed domains in stock (as many as the sizing needs), \
        with the monthly price of their mailboxes, and asks the user to pick one. Returns a choice; call again with \
        the answer appended to answers to get sending_choice. For already-warmed addresses. Reserves and buys \
        nothing.";
    const ACCESS: Access = Access::Act;
    const HINTS: Hints = Hints { idempotent: true, open_world: true };

    async fn call(&self, cx: &ToolCx<'_>, input: AnswersInput) -> Result<Reply<SourceOutput>, Refusal> {
        check_answers(&input.answers)?;
        let ch = store::current(cx.db)?;
        let cap = need_sizing(&ch)?.clone();
        need_source(&ch, OrderKind::AlreadyWarmed)?;
        let n = cap.domains as usize;
        let platform = open(cx)?;
        let stock = shelf(&platform).await?;
        let per_domain = cap.mailboxes_per_domain;
        // The price of a mailbox on each domain a month.
        let priced: Vec<(String, i64)> =
            stock.iter().filter_map(|s| s.price.as_ref().map(|p| (s.name.clone(), p.amount))).collect();
        // A set's domains priced for the mailboxes each will carry, laid out as the order lays them
        // (`store::spread`), not for as many as each could (journey finding: the question said
        // $15 a month where the order then charged $10).
        let for_sizing = |set: Vec<(String, i64)>| -> Vec<(String, i64)> {
            let picked: Vec<PickedDomain> = set
                .iter()
                .map(|(d, unit)| PickedDomain { name: d.clone(), price: *unit, max_mailboxes: per_domain })
                .collect();
            let counts = store::spread(cap.mailboxes, &picked);
            set.into_iter().zip(counts).map(|((d, unit), c)| (d, unit * i64::from(c))).collect()
        };
        let offered: Vec<_> = sets(&priced, n).into_iter().map(for_sizing).collect();
        if offered.is_empty() {
            return Err(Refusal::guidance(format!(
                "Only {} warmed domains are in stock and {} are needed. Ask the user whether to send under their brand \
                 instead (choose_sending_source again), or to wait for stock.",
                stock.len(),
                n
            )));
        }
        let choices: Vec<Item> = offered
            .iter()
            .enumerate()
            .map(|(i, s)| {
                set_item(
                    i,
                    s,
                    Interval::Month,
                    &format!(" for {}", plural(cap.mailboxes, "mailbox", "mailboxes")),
                )
            })
            .collect();
        let q = Question {
            question: format!("Choose {} already warmed up", plural(n as u32, "domain", "domains")),
            reason: "These domains are warmed and ready to send, without your brand's name. Nothing is reserved or \
                     billed by this answer."
                .into(),
            choices,
            allow_free_text: true,
            state: json!({ "n": n, "offered": offered }),
        };
        let card = q.card(Self::NAME);
        let mut note = None;
        let picked: Option<Vec<(String, i64)>> = match q.answered(Self::NAME, &input.answers) {
            Some(Picked::Choice(id)) => offered
                .iter()
                .enumerate()
                .find(|(i, _)| format!("set_{}", i + 1) == id)
                .map(|(_, s)| s.clone()),
            Some(Picked::FreeText(text)) => {
                let named = domains_in(&text);
                let chosen: Vec<(String, i64)> =
                    named.iter().filter_map(|d| priced.iter().find(|(p, _)| p == d).cloned()).collect();
                if chosen.len() == n && named.len() == n {
                    Some(for_sizing(chosen))
                } else {
                    note = Some(format!(
                        "Pick exactly {n} of the warmed domains in stock ({}). Ask the user again.",
                        priced.iter().map(|(d, _)| d.as_str()).collect::<Vec<_>>().join(", ")
                    ));
                    None
                }
            }
            None => None,
        };
        if let Some(set) = picked {
            let today = platform.now_ms();
            return settle_domains(cx, &cap, &card, OrderKind::AlreadyWarmed, &set, per_domain, today);
        }
        let unusable = note.clone();
        if unusable.is_none() && choice::has_stale(&card, &input.answers) {
            note = Some("The stock changed since the question was answered, so it is asked again.".into());
        }
        let c = choice::again(q.to_choice(Self::NAME, json!({}), input.answers), unusable);
        Ok(Reply::new(choice::text(&c, note.as_deref()), SourceOutput::Choice(c)))
    }
}

// ---- propose_email -------------------------------------------------------------------------

/// `propose_email`: mailbox names from the sender's name.
pub struct ProposeEmail;

/// The sender and the answers so far.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ProposeEmailInput {
    /// The sender's first and last name, as prospects will see it (e.g. "Anna Berg"). Needed the
    /// first time; later calls reuse it.
    #[schemars(length(min = 3, max = 80))]
    pub sender_name: Option<String>,
    /// The answers given so far: the `answers` of the last `choice` result plus the user's new
    /// answer as `{card, answer}`. Empty (or absent) to ask.
    #[serde(default)]
    #[schemars(length(max = 20))]
    pub answers: Vec<Answer>,
}

/// A sending address.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AddressView {
    /// The address.
    pub address: String,
    /// The sender's name shown with it.
    pub name: String,
}

/// The settled addresses.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct EmailStep {
    /// The sender's name.
    pub sender: String,
    /// The domains, with their prices.
    pub domains: Vec<DomainPrice>,
    /// The addresses.
    pub addresses: Vec<AddressView>,
    /// What to do next.
    pub next: Next,
}

/// The result of `propose_email`.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum EmailOutput {
    /// A question for the user.
    Choice(Choice),
    /// The settled addresses.
    EmailStep(EmailStep),
}

fn email_step(
    first: &str,
    last: &str,
    source: OrderKind,
    domains: &[PickedDomain],
    addresses: &[PickedAddress],
) -> EmailStep {
    let interval = if source == OrderKind::OwnNames { Interval::Year } else { Interval::Month };
    let name = format!("{first} {last}");
    EmailStep {
        sender: name.clone(),
        domains: domains
            .iter()
            .map(|d| DomainPrice { name: d.name.clone(), price: Price::new(d.price, "usd", interval) })
            .collect(),
        addresses: addresses
            .iter()
            .map(|a| AddressView { address: a.address(), name: name.clone() })
            .collect(),
        next: next(
            "order_sending_setup",
            "Order the setup",
            "The user approves the full price before anything is bought.",
        ),
    }
}

/// Lays local parts over the domains: the first `count` names on each.
fn lay_out(locals: &[String], domains: &[PickedDomain], counts: &[u32]) -> Vec<PickedAddress> {
    domains
        .iter()
        .zip(counts)
        .flat_map(|(d, n)| {
            locals
                .iter()
                .take(*n as usize)
                .map(|l| PickedAddress { prefix: l.clone(), domain: d.name.clone() })
        })
        .collect()
}

impl Tool for ProposeEmail {
    type Input = ProposeEmailInput;
    type Output = EmailOutput;
    const NAME: &'static str = "propose_email";
    const TITLE: &'static str = "Propose the mailbox names";
    const DESCRIPTION: &'static str = "Proposes the sending addresses on the chosen domains, made from the sender's \
        name (anna@, anna.berg@, a.berg@ …), and asks the user to pick a naming or give their own. Returns a choice; \
        call again with the answer appended to answers to get email_step. Needs the domains settled \
        (propose_domains or propose_warmed_domains). Creates and bills nothing.";
    const ACCESS: Access = Access::Act;
    const HINTS: Hints = Hints { idempotent: true, open_world: false };

    async fn call(&self, cx: &ToolCx<'_>, input: ProposeEmailInput) -> Result<Reply<EmailOutput>, Refusal> {
        check_answers(&input.answers)?;
        let ch = store::current(cx.db)?;
        let cap = need_sizing(&ch)?.clone();
        let (Some(source), Some(domains)) = (ch.source, ch.domains) else {
            return Err(Refusal::guidance(
                "The domains are not settled yet (or an earlier choice changed): call propose_domains or \
                 propose_warmed_domains, whichever matches the sending source, and put its question to the user.",
            ));
        };
        let earlier = match store::choice(cx.db, ChoiceStep::Email)? {
            Some(store::Choice { settled: Settled::Email { first_name, last_name, .. }, .. }) => {
                Some(format!("{first_name} {last_name}"))
            }
            _ => None,
        };
        // The name given or chosen before; else the one the emails are signed with, when the
        // playbook has a full one: the user gave it already, so it is not asked for again.
        let signed = match input.sender_name.clone().or(earlier) {
            Some(full) => Some(full),
            None => crate::workspace::playbook::load(cx.db)?
                .and_then(|(p, _)| p.sender_name)
                .filter(|n| Sender::parse(n).is_some()),
        };
        let full = signed.ok_or_else(|| {
            Refusal::guidance(
                "Who signs the emails? Ask the user for the sender's first and last name, then call propose_email \
                 with sender_name.",
            )
        })?;
        let sender = Sender::parse(&full).ok_or_else(|| {
            Refusal::InvalidArguments(
                "`sender_name` needs a first and a last name written with letters (e.g. \"Anna Berg\")"
                    .into(),
            )
        })?;
        let counts = store::spread(cap.mailboxes, &domains);
        let per_domain = counts.iter().copied().max().unwrap_or(1) as usize;
        let mut options: Vec<(String, Vec<String>)> = Vec::new();
        for (id, patterns) in PATTERN_SETS {
            let mut locals: Vec<String> = Vec::new();
            for p in patterns {
                let l = sender.local_part(*p);
                if !locals.contains(&l) {
                    locals.push(l);
                }
            }
            locals.truncate(per_domain);
            if locals.len() == per_domain && !options.iter().any(|(_, l)| *l == locals) {
                options.push(((*id).to_owned(), locals));
            }
        }
        let domain_names: Vec<&str> = domains.iter().map(|d| d.name.as_str()).collect();
        // Mailboxes that the domains do not share evenly leave the last name off some of them
        // (third journey walk: "on each domain" over 5 addresses on 2 domains).
        let where_ = if counts.iter().all(|c| *c == counts[0]) { "on each domain" } else { "on the domains" };
        let choices: Vec<Item> = options
            .iter()
            .map(|(id, locals)| {
                let shown: Vec<String> = locals.iter().map(|l| format!("{l}@")).collect();
                let example = lay_out(locals, &domains, &counts);
                Item::new(
                    id.clone(),
                    format!("{} {where_}", shown.join(", ")),
                    Some(format!(
                        "{} in all, e.g. {}; shown as {}",
                        plural(example.len() as u32, "address", "addresses"),
                        example.iter().take(3).map(PickedAddress::address).collect::<Vec<_>>().join(", "),
                        sender.full_name()
                    )),
                )
            })
            .collect();
        let q = Question {
            question: "Choose the names of your sending addresses".into(),
            reason: format!(
                "{} will be created on {} in {}'s name. Nothing is created or billed by this answer.",
                plural(cap.mailboxes, "address", "addresses"),
                domain_names.join(" and "),
                sender.full_name()
            ),
            choices,
            allow_free_text: true,
            state: json!({ "sender": sender.full_name(), "domains": domain_names, "counts": counts }),
        };
        let card = q.card(Self::NAME);
        let mut note = None;
        let locals: Option<Vec<String>> = match q.answered(Self::NAME, &input.answers) {
            Some(Picked::Choice(id)) => options.iter().find(|(o, _)| *o == id).map(|(_, l)| l.clone()),
            Some(Picked::FreeText(text)) => match mailbox_names(&text) {
                Some(mut named) if named.len() >= per_domain => {
                    named.truncate(per_domain);
                    Some(named)
                }
                Some(named) => {
                    note = Some(format!(
                        "{} mailbox names are needed per domain and the answer gave {}: ask the user again.",
                        per_domain,
                        named.len()
                    ));
                    None
                }
                None => {
                    // The example is the sender's own names (the walk saw "anna, a.berg" offered to Tom).
                    let example = options.first().map(|(_, l)| l.join(", ")).unwrap_or_default();
                    note = Some(format!(
                        "The answer is not a list of mailbox names: ask the user again, for {per_domain} names separated \
                         by commas (such as {example}), or to pick one of the choices."
                    ));
                    None
                }
            },
            None => None,
        };
        if let Some(locals) = locals {
            let addresses = lay_out(&locals, &domains, &counts);
            let settled = Settled::Email {
                first_name: sender.first_name.clone(),
                last_name: sender.last_name.clone(),
                addresses: addresses.clone(),
            };
            store::settle(
                cx.db,
                ChoiceStep::Email,
                &settled,
                &card,
                &store::email_basis(&cap, &domains),
                cx.now_ms,
            )?;
            let view = email_step(&sender.first_name, &sender.last_name, source, &domains, &addresses);
            let text = format!(
                "**Settled — sending addresses** ({}): {}.\nNothing was created or billed. Next: call \
                 order_sending_setup; it asks the user to approve the full price before anything is bought.",
                view.sender,
                view.addresses.iter().map(|a| a.address.as_str()).collect::<Vec<_>>().join(", ")
            );
            return Ok(Reply::new(text, EmailOutput::EmailStep(view)));
        }
        let unusable = note.clone();
        if unusable.is_none() && choice::has_stale(&card, &input.answers) {
            note = Some("The question changed since it was answered (sender, domains or sizing), so it is asked again.".into());
        }
        let arguments = json!({ "sender_name": sender.full_name() });
        let c = choice::again(q.to_choice(Self::NAME, arguments, input.answers), unusable);
        Ok(Reply::new(choice::text(&c, note.as_deref()), EmailOutput::Choice(c)))
    }
}

// ---- order_sending_setup (approval) ---------------------------------------------------------

/// `order_sending_setup`: buys the domains and creates the mailboxes, once the user approves.
pub struct OrderSendingSetup;

/// What an order approval freezes: the order and the price the user sees.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct OrderArgs {
    /// The domains and mailboxes.
    pub order: OrderSpec,
    /// Charged when ordering (cents). This and the two recurring prices are the most the user
    /// approves (`platform::ApprovedPrices`).
    pub due_now: i64,
    /// Domain registrations per year (cents).
    pub domains_per_year: i64,
    /// Mailboxes per month (cents).
    pub accounts_per_month: i64,
    /// Currency.
    pub currency: String,
    /// Each domain's price (registration per year, or its mailboxes per month).
    pub prices: Vec<(String, i64)>,
}

impl Action for OrderSendingSetup {
    type Args = OrderArgs;
    const NAME: &'static str = "order_sending_setup";
    const LIMIT: Option<Limit> = Some(Limit::Mailboxes);

    async fn propose(&self, cx: &ToolCx<'_>, args: &OrderArgs) -> Result<Proposal, Refusal> {
        let n = args.order.mailbox_count() as i64;
        let allowance = limits::check(cx.db, cx.config, cx.now_ms, Limit::Mailboxes, n)?;
        let domains: Vec<&str> = args.order.items.iter().map(|i| i.domain.as_str()).collect();
        let m = |c: i64| Money::new(c, &args.currency).display();
        let warmup = &cx.config.deliverability;
        let mut impact = Vec::new();
        match args.order.kind {
            OrderKind::OwnNames => {
                impact.push(format!(
                    "Buys {} ({}) for {} a year in all. Domain registrations are not refundable.",
                    plural(domains.len() as u32, "domain", "domains"),
                    domains.join(", "),
                    m(args.domains_per_year)
                ));
                impact.push(format!(
                    "Creates {}, {} a month for all of them, billed monthly until cancelled.",
                    plural(n as u32, "mailbox", "mailboxes"),
                    m(args.accounts_per_month)
                ));
                let (setup, ready) = store::expected_dates(cx.now_ms, warmup.warmup_days_min);
                impact.push(format!(
                    "Ready about {} (2 business days, weekends not counted), then {}–{} days of warm-up: cold email from \
                     about {}.",
                    calendar::human(setup),
                    warmup.warmup_days_min,
                    warmup.warmup_days_max,
                    calendar::human(ready)
                ));
            }
            OrderKind::AlreadyWarmed => {
                impact.push(format!(
                    "Creates {} on {} already warmed up ({}), {} a month for all of them, billed monthly until \
                     cancelled.",
                    plural(n as u32, "mailbox", "mailboxes"),
                    plural(domains.len() as u32, "domain", "domains"),
                    domains.join(", "),
                    m(args.accounts_per_month)
                ));
                impact.push("Ready to send about an hour after ordering; no warm-up needed.".to_owned());
            }
        }
        let mut addresses = String::from("Addresses");
        for item in &args.order.items {
            for a in &item.accounts {
                let sep = if addresses.len() == 9 { ": " } else { ", " };
                addresses.push_str(&format!("{sep}{}@{}", a.prefix, item.domain));
            }
        }
        addresses.push('.');
        impact.push(addresses);
        // Warmed domains are not bought: only their mailboxes are charged (journey finding).
        let first = match args.order.kind {
            OrderKind::OwnNames => "the first year of domains and first month of mailboxes",
            OrderKind::AlreadyWarmed => "the first month of mailboxes",
        };
        impact.push(format!("Charged now: {} ({first}).", m(args.due_now)));
        impact.push(allowance.uses(&plural(n as u32, "mailbox", "mailboxes"), Limit::Mailboxes));
        Ok(Proposal {
            summary: format!("Order {} ({})", ordered_words(&args.order), m(args.due_now)),
            impact,
            cost: Some(Money::new(args.due_now, &args.currency)),
            // Domains are not refundable and money is spent: it cannot be undone.
            irreversible: true,
        })
    }

    async fn execute(&self, cx: &ExecCx<'_>, args: OrderArgs) -> Result<Executed, ExecError> {
        let key = cx.idempotency_key("order");
        let n = args.order.mailbox_count() as i64;
        let platform = platform::open(cx.db, cx.config, cx.outbound, cx.now_ms).map_err(exec_error)?;
        // An earlier attempt whose answer was lost may have bought it: then it is recorded as
        // bought, whatever the re-checks below would say now (review finding: a retry refused
        // it, and the domains were paid for but never set up).
        // Only a retry asks (the decision's own run is the first to buy), and only for an order
        // not recorded here: the platform may know an order by its domains alone.
        let ordered = ordered_domains(cx.db)?;
        let recorded = args.order.items.iter().any(|i| ordered.contains(&i.domain));
        let earlier = if recorded || cx.first_run() {
            None
        } else {
            platform.placed_order(&args.order, &key, cx.decided_at).await.map_err(exec_error)?
        };
        let placed = match earlier {
            Some(placed) => placed,
            None => {
                // Only the order the user's choices still make (audit finding: an approval left
                // pending bought its domains after the user had picked others and ordered those).
                match chosen_order(cx.db) {
                    Ok(order) if order == args.order => {}
                    Err(Refusal::Internal(e)) => return Err(ExecError::Unknown(e)),
                    _ => {
                        return Err(ExecError::Failed(
                            "The sending choices changed since this order was asked for, or they were ordered \
                             already, so nothing was bought. get_sending_setup shows what is ordered; ask for the \
                             order again (order_sending_setup) if the current choices should be bought."
                                .to_owned(),
                        ));
                    }
                }
                limits::check_to_execute(cx.db, cx.config, cx.now_ms, Limit::Mailboxes, n)?;
                let approved = platform::ApprovedPrices {
                    due_now: args.due_now,
                    domains_per_year: args.domains_per_year,
                    accounts_per_month: args.accounts_per_month,
                };
                platform.place_order(&args.order, &key, &approved).await.map_err(exec_error)?
            }
        };
        let ordered_at = platform.now_ms();
        let order = store::Order {
            id: cx.approval_id.to_owned(),
            spec: args.order.clone(),
            reference: placed.reference,
            charged: Some(placed.charged.unwrap_or(args.due_now)),
            currency: args.currency.clone(),
            ordered_at,
        };
        let mut writes = store::record_order(&order, &args.prices, cx.now_ms)?;
        writes.push(limits::consume(Limit::Mailboxes, n, cx.now_ms));
        writes.push(store::schedule_sync(cx.now_ms + 1_000));
        let when = match args.order.kind {
            OrderKind::OwnNames => {
                let (setup, _) = store::expected_dates(ordered_at, cx.config.deliverability.warmup_days_min);
                format!(
                    "They are set up by about {}; start the warm-up with start_warmup (it begins as soon as they exist).",
                    calendar::human(setup)
                )
            }
            OrderKind::AlreadyWarmed => "They are ready to send in about an hour.".to_owned(),
        };
        Ok(Executed {
            result: format!(
                "Ordered {}; {} charged. {when}",
                ordered_words(&args.order),
                Money::new(order.charged.unwrap_or(args.due_now), &args.currency).display()
            ),
            writes,
        })
    }
}

/// What an order buys, in words: warmed domains are not bought, only mailboxes on them (journey
/// finding: the approval said they were).
fn ordered_words(order: &OrderSpec) -> String {
    let domains = plural(order.items.len() as u32, "domain", "domains");
    let mailboxes = plural(order.mailbox_count() as u32, "mailbox", "mailboxes");
    match order.kind {
        OrderKind::OwnNames => format!("{domains} and {mailboxes}"),
        OrderKind::AlreadyWarmed => format!("{mailboxes} on {domains} already warmed up"),
    }
}

/// Maps a platform failure during an execution: a refusal is definite (nothing done), an
/// unreachable platform leaves the outcome unknown (retried with the same idempotency key).
pub fn exec_error(e: PlatformError) -> ExecError {
    match e {
        PlatformError::Refused(why) => ExecError::Failed(why),
        PlatformError::PaymentRequired(_) | PlatformError::NotConfigured(_) => ExecError::Failed(
            "VibeSell's sending platform account could not take this order; nothing was bought. Contact support \
             (contact_support)."
                .into(),
        ),
        PlatformError::Unavailable(e) => ExecError::Unknown(e),
        PlatformError::Store(e) => ExecError::Store(e),
    }
}

/// The order the user's current choices make: the sending source, domains and addresses settled,
/// none of the domains ordered yet.
/// The names of the domains the workspace has ordered (recorded here).
fn ordered_domains(db: &dyn crate::store::Db) -> Result<Vec<String>, crate::store::StoreError> {
    Ok(store::domains(db)?.into_iter().map(|d| d.name).collect())
}

fn chosen_order(db: &dyn crate::store::Db) -> Result<OrderSpec, Refusal> {
    let ch = store::current(db)?;
    need_sizing(&ch)?;
    let (Some(source), Some(domains), Some((first, last, addresses))) = (ch.source, ch.domains, ch.email)
    else {
        return Err(Refusal::guidance(
            "The setup is not fully chosen yet (or an earlier choice changed): settle the sending source \
             (choose_sending_source), the domains (propose_domains or propose_warmed_domains) and the addresses \
             (propose_email) with the user first.",
        ));
    };
    let ordered = ordered_domains(db)?;
    if let Some(d) = domains.iter().find(|d| ordered.contains(&d.name)) {
        return Err(Refusal::guidance(format!(
            "{} is already ordered: get_sending_setup shows the setup. To add more, size the volume to add \
             (size_sending_capacity) and pick new domains.",
            d.name
        )));
    }
    Ok(OrderSpec {
        kind: source,
        items: domains
            .iter()
            .map(|d| OrderItem {
                domain: d.name.clone(),
                accounts: addresses
                    .iter()
                    .filter(|a| a.domain == d.name)
                    .map(|a| AccountSpec {
                        prefix: a.prefix.clone(),
                        first_name: first.clone(),
                        last_name: last.clone(),
                    })
                    .collect(),
            })
            .filter(|i| !i.accounts.is_empty())
            .collect(),
    })
}

impl Tool for OrderSendingSetup {
    type Input = NoArguments;
    type Output = ApprovalResult;
    const NAME: &'static str = "order_sending_setup";
    const TITLE: &'static str = "Order the sending setup";
    const DESCRIPTION: &'static str = "Asks the user to approve buying the settled domains and creating the settled \
        mailboxes (with DNS: SPF, DKIM, DMARC, MX), at the full price quoted by the sending platform. Domains are not \
        refundable. Returns an approval the user decides; nothing is bought until they approve. Needs the sending \
        source, domains and addresses settled (choose_sending_source, propose_domains or propose_warmed_domains, \
        propose_email).";
    const ACCESS: Access = Access::Act;
    const HINTS: Hints = Hints { idempotent: true, open_world: true };

    async fn call(&self, cx: &ToolCx<'_>, _: NoArguments) -> Result<Reply<ApprovalResult>, Refusal> {
        let order = chosen_order(cx.db)?;
        let source = order.kind;
        let platform = open(cx)?;
        let quote = platform.quote(&order).await.map_err(refusal)?;
        if !quote.valid {
            return Err(Refusal::guidance(format!(
                "The sending platform would not accept this order: {} Ask the user to pick again (propose_domains or \
                 propose_warmed_domains).",
                quote.problems.join(" ")
            )));
        }
        let prices = quote
            .items
            .iter()
            .map(|i| {
                (
                    i.domain.clone(),
                    if source == OrderKind::OwnNames { i.domain_per_year } else { i.accounts_per_month },
                )
            })
            .collect();
        let args = OrderArgs {
            order,
            due_now: quote.due_now,
            domains_per_year: quote.domains_per_year,
            accounts_per_month: quote.accounts_per_month,
            currency: quote.currency,
            prices,
        };
        approvals::request(cx, &OrderSendingSetup, args).await
    }
}

// ---- get_sending_setup / start_warmup -------------------------------------------------------

/// A step of a timeline.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TimelineStep {
    /// Which.
    pub step: String,
    /// For people.
    pub title: String,
    /// When (`YYYY-MM-DD`), actual or expected.
    pub date: String,
    /// `done`, `current` or `todo`.
    pub status: String,
    /// More.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
}

fn step(step: &str, title: &str, date: calendar::Date, status: &str, detail: Option<String>) -> TimelineStep {
    TimelineStep {
        step: step.into(),
        title: title.into(),
        date: calendar::iso(date),
        status: status.into(),
        detail,
    }
}

/// A DNS check's result.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Check {
    /// In place.
    Pass,
    /// Not yet (propagating, being set up).
    Pending,
}

/// DNS authentication of a domain.
#[derive(Debug, Serialize, JsonSchema)]
pub struct DnsView {
    /// SPF.
    pub spf: Check,
    /// DKIM.
    pub dkim: Check,
    /// DMARC.
    pub dmarc: Check,
    /// MX (replies land).
    pub mx: Check,
    /// The custom tracking domain (`track.<domain>`), which keeps open tracking off the
    /// platform's shared domain.
    pub tracking: Check,
}

/// A sending domain.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DomainView {
    /// The domain.
    pub name: String,
    /// `setting_up` or `active`.
    pub status: String,
    /// Its DNS records.
    pub dns: DnsView,
}

/// A sending mailbox.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MailboxView {
    /// The address.
    pub address: String,
    /// The sender's name.
    pub name: String,
    /// Where it stands.
    pub status: MailboxStatus,
    /// The day of warm-up it is on.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub warmup_day: Option<u32>,
    /// Days of warm-up before cold email.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub warmup_days: Option<u32>,
    /// Warm-up health (0–100).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub health: Option<i64>,
}

/// The sending setup.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(tag = "kind", rename = "sending_setup", rename_all = "camelCase")]
pub struct SendingSetup {
    /// `setting_up`, `warming`, `ready` or `attention`.
    pub status: String,
    /// `own_names` or `already_warmed`.
    pub source: OrderKind,
    /// When it was ordered (ms since the epoch, platform time).
    pub ordered_at: i64,
    /// What was charged (cents).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub charged: Option<Money>,
    /// When the mailboxes are (expected to be) set up.
    pub setup_date: String,
    /// When cold email can (expectedly) start.
    pub ready_date: String,
    /// Ordered, set up, warm-up, ready.
    pub timeline: Vec<TimelineStep>,
    /// The domains.
    pub domains: Vec<DomainView>,
    /// The mailboxes.
    pub mailboxes: Vec<MailboxView>,
}

fn warmup_day(m: &store::Mailbox, at: i64) -> Option<u32> {
    m.warmup_started_at.map(|s| u32::try_from((at - s).max(0) / 86_400_000 + 1).unwrap_or(u32::MAX))
}

/// Runs the sync now (bounded) and keeps the job scheduled while anything is in progress. A
/// platform that fails (down, refusing one campaign, rejecting the key) does not stop the tool:
/// it shows what was last read, with the note this returns (audit finding: a campaign deleted
/// on the platform made every read tool refuse). The job retries on its own.
pub async fn sync_now(cx: &ToolCx<'_>) -> Result<Option<String>, Refusal> {
    let why = match store::sync(cx.db, cx.config, cx.outbound, cx.now_ms).await {
        Ok(Some(after)) => {
            cx.db.batch(vec![store::schedule_sync(cx.now_ms + after)])?;
            return Ok(None);
        }
        Ok(None) => return Ok(None),
        Err(e @ PlatformError::Store(_)) => return Err(refusal(e)),
        Err(PlatformError::Refused(why)) => format!("the sending platform refused part of the update: {why}"),
        Err(PlatformError::PaymentRequired(why)) => format!("the sending platform asks for a payment: {why}"),
        Err(PlatformError::Unavailable(_)) => "the sending platform did not answer".to_owned(),
        Err(PlatformError::NotConfigured(_)) => {
            "the sending platform refused VibeSell's credentials (the VibeSell team must renew them)"
                .to_owned()
        }
    };
    Ok(Some(format!(
        "Not up to date: {}. What is shown is what was last read; the sync tries again on its own.",
        why.trim_end_matches('.')
    )))
}

/// What comes once the mailboxes are ready: the campaign under way or staged, else staging,
/// after the leads' import if they are not in yet (journey findings: it said "once the leads are
/// imported" when they were, and "call stage_campaign" while a campaign was sending).
/// A paused campaign is not under way, and an ended one whose leads were all used leaves an
/// import, not a staging, as the next step (third journey walk: stage_campaign then refused).
fn next_when_ready(cx: &ToolCx<'_>) -> Result<&'static str, Refusal> {
    use crate::workspace::campaigns::State;
    Ok(match crate::workspace::campaigns::find(cx.db, None)?.map(|c| c.state) {
        Some(State::Active) => "The campaign is under way: get_campaign shows how it goes.",
        Some(State::Paused) => "The campaign is paused: get_campaign says why and how it sends again.",
        Some(State::Draft) => "Next: launch_campaign (an approval the user decides).",
        // The leads staging would take (`stage_campaign` refuses when there are none).
        Some(State::Completed | State::Stopped)
            if !crate::workspace::campaigns::unassigned_leads(cx.db)?.is_empty() =>
        {
            "The campaign has ended. Next: stage_campaign for a new one with the leads not in a campaign yet."
        }
        Some(State::Completed | State::Stopped) => {
            "The campaign has ended and every imported lead was in it: import more leads (import_leads, an \
             approval the user decides) for a new one."
        }
        None if crate::workspace::leads::count(cx.db)? > 0 => "Next: call stage_campaign.",
        None => {
            "Next: import the leads (import_leads, an approval the user decides), then call stage_campaign."
        }
    })
}

/// The day the workspace's mailboxes are ready to send, or expected to be; `None` before any
/// order.
pub(crate) fn ready_date(cx: &ToolCx<'_>) -> Result<Option<calendar::Date>, Refusal> {
    Ok(setup_view(cx, cx.now_ms)?.and_then(|v| calendar::parse_iso(&v.ready_date)))
}

/// The mailboxes whose setup is under way: those not ready yet (a later order's, while an
/// earlier order's send), or all of them once all are ready. The setup's dates, warm-up day and
/// timeline follow these (audit finding: a second order showed the first one's, done and dated
/// weeks back, while its own mailboxes were on day 0).
fn under_way(boxes: &[store::Mailbox]) -> Vec<&store::Mailbox> {
    let all_ready = boxes.iter().all(|m| m.status == MailboxStatus::Ready);
    boxes.iter().filter(|m| all_ready || m.status != MailboxStatus::Ready).collect()
}

fn setup_view(cx: &ToolCx<'_>, at: i64) -> Result<Option<SendingSetup>, Refusal> {
    let orders = store::orders(cx.db)?;
    // The latest order is the one under way (`orders` is in the order they were placed).
    let (Some(first), Some(latest)) = (orders.first(), orders.last()) else { return Ok(None) };
    let every_box = store::mailboxes(cx.db)?;
    let boxes = under_way(&every_box);
    let days = cx.config.deliverability.warmup_days_min;
    let source = latest.spec.kind;
    let (exp_setup, exp_ready) = match source {
        OrderKind::OwnNames => store::expected_dates(latest.ordered_at, days),
        OrderKind::AlreadyWarmed => {
            (calendar::utc_date(latest.ordered_at), calendar::utc_date(latest.ordered_at))
        }
    };
    let setup_done = boxes
        .iter()
        .filter_map(|m| m.setup_done_at)
        .max()
        .filter(|_| boxes.iter().all(|m| m.setup_done_at.is_some()));
    let all_ready = !boxes.is_empty() && boxes.iter().all(|m| m.status == MailboxStatus::Ready);
    let setup_date = setup_done.map_or(exp_setup, calendar::utc_date);
    let warm_start = boxes.iter().filter_map(|m| m.warmup_started_at).min();
    let ready_date = if all_ready {
        calendar::utc_date(boxes.iter().filter_map(|m| m.ready_at).max().unwrap_or(at))
    } else if source == OrderKind::OwnNames {
        let start = warm_start.map_or(setup_date, calendar::utc_date).max(setup_date);
        calendar::add_days(start, i64::from(days)).max(exp_ready)
    } else {
        exp_ready
    };
    let status = if boxes.iter().any(|m| m.status == MailboxStatus::Attention) {
        "attention"
    } else if all_ready {
        "ready"
    } else if boxes.iter().any(|m| m.status == MailboxStatus::SettingUp) {
        "setting_up"
    } else {
        "warming"
    };
    let mut timeline = vec![step("ordered", "Ordered", calendar::utc_date(latest.ordered_at), "done", None)];
    let setting_up = status == "setting_up";
    timeline.push(step(
        "setup",
        "Domains, DNS and mailboxes",
        setup_date,
        if setting_up { "current" } else { "done" },
        None,
    ));
    if source == OrderKind::OwnNames {
        let day = boxes.iter().filter_map(|m| warmup_day(m, at)).max();
        timeline.push(step(
            "warmup",
            "Warm-up",
            warm_start.map_or(setup_date, calendar::utc_date),
            if all_ready {
                "done"
            } else if day.is_some() {
                "current"
            } else {
                "todo"
            },
            day.map(|d| format!("day {} of {days}", d.min(days))).or_else(|| {
                boxes
                    .iter()
                    .all(|m| m.warmup_requested_at.is_none())
                    .then(|| "not started: call start_warmup".into())
            }),
        ));
    }
    timeline.push(step("ready", "Ready to send", ready_date, if all_ready { "done" } else { "todo" }, None));
    let domains = store::domains(cx.db)?
        .into_iter()
        .map(|d| {
            let dns: serde_json::Value =
                d.dns.as_deref().and_then(|s| serde_json::from_str(s).ok()).unwrap_or(Value::Null);
            let c = |k: &str| {
                if dns.get(k).and_then(Value::as_bool) == Some(true) { Check::Pass } else { Check::Pending }
            };
            let dns = DnsView {
                spf: c("spf"),
                dkim: c("dkim"),
                dmarc: c("dmarc"),
                mx: c("mx"),
                tracking: c("tracking"),
            };
            let active = every_box.iter().filter(|m| m.domain == d.name).all(|m| m.setup_done_at.is_some());
            DomainView {
                name: d.name,
                status: if active { "active".into() } else { "setting_up".into() },
                dns,
            }
        })
        .collect();
    let mailboxes = every_box
        .iter()
        .map(|m| MailboxView {
            address: m.address.clone(),
            name: format!("{} {}", m.first_name, m.last_name),
            status: m.status,
            warmup_day: if m.pre_warmed() { None } else { warmup_day(m, at).map(|d| d.min(days)) },
            warmup_days: (!m.pre_warmed()).then_some(days),
            health: m.health,
        })
        .collect();
    Ok(Some(SendingSetup {
        status: status.into(),
        source,
        ordered_at: latest.ordered_at,
        charged: orders
            .iter()
            .filter_map(|o| o.charged)
            .reduce(|a, b| a + b)
            .map(|c| Money::new(c, &first.currency)),
        setup_date: calendar::iso(setup_date),
        ready_date: calendar::iso(ready_date),
        timeline,
        domains,
        mailboxes,
    }))
}

/// `get_sending_setup`: domains, DNS, mailboxes, warm-up, ready date.
pub struct GetSendingSetup;

fn no_setup() -> Refusal {
    Refusal::guidance(
        "Nothing is ordered yet. Settle the sending source, domains and addresses with the user, then call \
         order_sending_setup (an approval they decide).",
    )
}

impl Tool for GetSendingSetup {
    type Input = NoArguments;
    type Output = SendingSetup;
    const NAME: &'static str = "get_sending_setup";
    const TITLE: &'static str = "Get the sending setup";
    const DESCRIPTION: &'static str = "Shows the sending setup ordered for the user: each domain with its DNS checks \
        (SPF, DKIM, DMARC, MX), each mailbox with its state and warm-up progress, the timeline and the date cold email \
        can start. Use it to follow the setup and the warm-up after order_sending_setup.";
    const ACCESS: Access = Access::Read;
    const HINTS: Hints = Hints { idempotent: true, open_world: true };

    async fn call(&self, cx: &ToolCx<'_>, _: NoArguments) -> Result<Reply<SendingSetup>, Refusal> {
        if store::orders(cx.db)?.is_empty() {
            return Err(no_setup());
        }
        let stale = sync_now(cx).await?;
        let at = open(cx)?.now_ms();
        let view = setup_view(cx, at)?.ok_or_else(no_setup)?;
        let ready = view.mailboxes.iter().filter(|m| m.status == MailboxStatus::Ready).count();
        let mut text = format!(
            "**Sending setup — {}:** {}, {} ({} ready). Set up {}; ready to send {}.\n",
            view.status.replace('_', " "),
            plural(view.domains.len() as u32, "domain", "domains"),
            plural(view.mailboxes.len() as u32, "mailbox", "mailboxes"),
            ready,
            view.setup_date,
            view.ready_date
        );
        for t in &view.timeline {
            text.push_str(&format!(
                "- {} ({}): {}{}\n",
                t.title,
                t.date,
                t.status,
                t.detail.as_ref().map(|d| format!(" — {d}")).unwrap_or_default()
            ));
        }
        let waiting =
            store::mailboxes(cx.db)?.iter().any(|m| !m.pre_warmed() && m.warmup_requested_at.is_none());
        if waiting {
            text.push_str(
                "Warm-up has not been started: call start_warmup (it begins as soon as the mailboxes exist).",
            );
        } else if view.status == "ready" {
            text.push_str(next_when_ready(cx)?);
        }
        Ok(Reply::new(text, view).noted(stale))
    }
}

/// `start_warmup`: warm the new mailboxes up.
pub struct StartWarmup;

/// One day of the warm-up ramp.
#[derive(Debug, Serialize, JsonSchema)]
pub struct RampPoint {
    /// Day of warm-up.
    pub day: u32,
    /// Warm-up emails per mailbox that day.
    pub volume: u32,
}

/// The warm-up.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(tag = "kind", rename = "warmup", rename_all = "camelCase")]
pub struct WarmupView {
    /// `scheduled` (starts when the mailboxes exist), `running` or `done`.
    pub status: String,
    /// When it started (ms since the epoch, platform time).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub started_at: Option<i64>,
    /// When cold email can start (`YYYY-MM-DD`).
    pub ready_date: String,
    /// Today's day of warm-up.
    pub day: u32,
    /// Days of warm-up before cold email.
    pub days: u32,
    /// Mailboxes warming.
    pub mailboxes: u32,
    /// Average health (0–100), when known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub health: Option<i64>,
    /// Cold emails per mailbox per day once warmed.
    pub daily_limit_after: u32,
    /// Started, ramping, ready.
    pub timeline: Vec<TimelineStep>,
    /// Typical warm-up emails per mailbox per day (the platform sends and answers them between
    /// warmed mailboxes; prospects never see them).
    pub ramp: Vec<RampPoint>,
}

impl Tool for StartWarmup {
    type Input = NoArguments;
    type Output = WarmupView;
    const NAME: &'static str = "start_warmup";
    const TITLE: &'static str = "Start the warm-up";
    const DESCRIPTION: &'static str = "Starts warming up the new mailboxes of the sending setup: the platform sends \
        and answers a growing number of emails between warmed mailboxes for 14–21 days, so cold email later lands in \
        the inbox. Called before the mailboxes exist, it starts as soon as they do. Already-warmed addresses keep a \
        light warm-up. Returns the warm-up with its progress and ready date.";
    const ACCESS: Access = Access::Act;
    const HINTS: Hints = Hints { idempotent: true, open_world: true };

    async fn call(&self, cx: &ToolCx<'_>, _: NoArguments) -> Result<Reply<WarmupView>, Refusal> {
        if store::orders(cx.db)?.is_empty() {
            return Err(no_setup());
        }
        cx.db.batch(vec![
            crate::store::Stmt::new(
                "UPDATE mailboxes SET warmup_requested_at = COALESCE(warmup_requested_at, ?), updated_at = ?",
                vec![cx.now_ms.into(), cx.now_ms.into()],
            ),
            store::schedule_sync(cx.now_ms + 1_000),
        ])?;
        let stale = sync_now(cx).await?;
        let at = open(cx)?.now_ms();
        let setup = setup_view(cx, at)?.ok_or_else(no_setup)?;
        let every_box = store::mailboxes(cx.db)?;
        let boxes = under_way(&every_box);
        let days = cx.config.deliverability.warmup_days_min;
        let warming: Vec<&store::Mailbox> = boxes.iter().copied().filter(|m| !m.pre_warmed()).collect();
        let started_at = warming.iter().filter_map(|m| m.warmup_started_at).min();
        let day = warming.iter().filter_map(|m| warmup_day(m, at)).max().unwrap_or(0).min(days);
        let healths: Vec<i64> = boxes.iter().filter_map(|m| m.health).collect();
        let health = (!healths.is_empty()).then(|| healths.iter().sum::<i64>() / healths.len() as i64);
        let status = if setup.status == "ready" {
            "done"
        } else if started_at.is_some() {
            "running"
        } else {
            "scheduled"
        };
        let per_mailbox = store::sizing(cx.db)?
            .map_or(cx.config.deliverability.sends_per_mailbox_per_day, |s| s.doc.capacity.per_mailbox);
        let start = started_at
            .map_or_else(|| calendar::parse_iso(&setup.setup_date).unwrap_or_default(), calendar::utc_date);
        let ready = calendar::parse_iso(&setup.ready_date).unwrap_or(start);
        let timeline = vec![
            step("start", "Warm-up starts", start, if started_at.is_some() { "done" } else { "todo" }, None),
            step(
                "ramp",
                "Ramping up",
                calendar::utc_date(at).max(start),
                if status == "running" {
                    "current"
                } else if status == "done" {
                    "done"
                } else {
                    "todo"
                },
                (day > 0).then(|| format!("day {day} of {days}")),
            ),
            step("ready", "Ready to send", ready, if status == "done" { "done" } else { "todo" }, None),
        ];
        // Instantly-style warm-up: a few emails a day, growing by about 3 a day, capped at 40.
        let ramp = (1..=days).map(|d| RampPoint { day: d, volume: (2 + 3 * (d - 1)).min(40) }).collect();
        let view = WarmupView {
            status: status.into(),
            started_at,
            ready_date: setup.ready_date.clone(),
            day,
            days,
            mailboxes: warming.len() as u32,
            health,
            daily_limit_after: per_mailbox,
            timeline,
            ramp,
        };
        let text = match status {
            // Addresses bought warmed need none (third journey walk: it said warm-up would start
            // and last two weeks, and gave the setup's day as the ready date).
            "scheduled" | "running" if warming.is_empty() => format!(
                "**No warm-up needed:** these addresses were warmed up before they were bought. They are being set up \
                 (expected {}) and ready to send about {}. Check progress with get_sending_setup.",
                setup.setup_date, setup.ready_date
            ),
            "scheduled" => format!(
                "**Warm-up scheduled:** the mailboxes are still being set up (expected {}); warm-up starts as soon as \
                 they exist and lasts {days} days. Ready to send about {}. Check progress with get_sending_setup.",
                setup.setup_date, setup.ready_date
            ),
            "running" => format!(
                "**Warm-up running:** day {day} of {days} on {} mailboxes{}. Ready to send about {}. Check progress with \
                 get_sending_setup.",
                view.mailboxes,
                health.map(|h| format!(", health {h}")).unwrap_or_default(),
                setup.ready_date
            ),
            _ => format!("**Warm-up done:** the mailboxes are ready to send. {}", next_when_ready(cx)?),
        };
        Ok(Reply::new(text, view).noted(stale))
    }
}

#[cfg(test)]
#[path = "sending_tests.rs"]
pub(crate) mod tests;

//! Imported leads, and the import job that brings them in (PRODUCT §6–§8).
//!
//! An import is a job with an id (the idempotency key of the approved `import_leads`): it
//! walks the provider's pool from its cursor in batches of up to [`BATCH`] people, skips
//! people the workspace already has (before enrichment, so no credits are spent on them),
//! then suppressed and duplicate addresses and people without one, and writes each batch's
//! leads together with the job's new cursor and counters in one transaction. Running the same
//! job again resumes where it stopped and never imports anyone twice; a finished job only
//! reports.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::approvals::{Action, ExecCx, ExecError, Executed, Proposal};
use super::{limits, suppression};
use crate::compliance::email_hash;
use crate::leads::filters::Filters;
use crate::leads::{LeadError, LeadProvider};
use crate::plans::{Limit, group_thousands, plural};
use crate::store::{Db, Stmt, StoreError, from_document, to_document};
use crate::tools::{Refusal, ToolCx};

/// People fetched per batch (one Apollo search page).
pub const BATCH: usize = 100;

/// An imported lead: camelCase in JSON, read from the `leads` table's columns by their aliases.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Lead {
    /// Its id in the workspace.
    pub id: i64,
    /// Work email.
    pub email: String,
    /// Given name.
    #[serde(alias = "first_name")]
    pub first_name: String,
    /// Surname.
    #[serde(alias = "last_name")]
    pub last_name: String,
    /// Job title.
    pub title: String,
    /// Company.
    pub company: String,
    /// Company domain.
    #[serde(alias = "company_domain", skip_serializing_if = "Option::is_none")]
    pub company_domain: Option<String>,
    /// Industry.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub industry: Option<String>,
    /// Company size band.
    #[serde(alias = "company_size", skip_serializing_if = "Option::is_none")]
    pub company_size: Option<String>,
    /// Country.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub country: Option<String>,
    /// City.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub city: Option<String>,
    /// Which provider it came from (`sandbox` leads are synthetic and never emailed for real).
    pub provider: String,
}

/// The columns of a [`Lead`] (a literal, for `concat!`).
macro_rules! lead_columns {
    () => {
        "id, email, first_name, last_name, title, company, company_domain, industry, company_size, country, city, \
         provider"
    };
}
pub(crate) use lead_columns;

/// How many leads the workspace holds.
pub fn count(db: &dyn Db) -> Result<i64, StoreError> {
    Ok(db.query(Stmt::new("SELECT COUNT(*) FROM leads", vec![]))?.scalar_i64().unwrap_or(0))
}

/// The `n`-th lead in import order (from 0).
pub fn nth(db: &dyn Db, n: i64) -> Result<Option<Lead>, StoreError> {
    db.row(concat!("SELECT ", lead_columns!(), " FROM leads ORDER BY id LIMIT 1 OFFSET ?"), vec![n.into()])
}

/// The state of an import job.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// Still importing (or stopped by an error and resumable).
    Running,
    /// Finished: the requested number was imported or the pool ran out.
    Done,
}

/// An import job and its counts.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Import {
    /// The job id (the approval's idempotency key).
    pub id: String,
    /// Which provider.
    pub provider: String,
    /// Leads asked for.
    pub requested: u64,
    /// Leads imported.
    pub imported: u64,
    /// Skipped: on the suppression list.
    pub skipped_suppressed: u64,
    /// Skipped: the address is already a lead.
    pub skipped_duplicate: u64,
    /// Skipped: the person is already a lead (found before enrichment, no credit spent).
    pub skipped_known: u64,
    /// Skipped: the provider found no address.
    pub skipped_no_email: u64,
    /// Skipped: an exclusion the provider could not apply.
    pub skipped_excluded: u64,
    /// Credits the provider charged.
    pub credits: u64,
    /// Pool positions walked.
    pub cursor: u64,
    /// Running or done.
    pub status: Status,
    /// The last error, while running.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// The month it counts against (`YYYY-MM`).
    pub month: String,
    /// When it started and finished (ms since the epoch).
    pub started_at: i64,
    /// See `started_at`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub finished_at: Option<i64>,
}

#[derive(Deserialize)]
struct ImportRow {
    id: String,
    filters: String,
    provider: String,
    requested: i64,
    cursor: i64,
    imported: i64,
    skipped_suppressed: i64,
    skipped_duplicate: i64,
    skipped_known: i64,
    skipped_no_email: i64,
    skipped_excluded: i64,
    credits: i64,
    status: String,
    error: Option<String>,
    month: String,
    started_at: i64,
    finished_at: Option<i64>,
}

fn n(v: i64) -> u64 {
    v.max(0) as u64
}

impl ImportRow {
    fn into_import(self) -> Result<(Import, Filters), StoreError> {
        let filters = from_document(&self.filters)?;
        let import = Import {
            id: self.id,
            provider: self.provider,
            requested: n(self.requested),
            imported: n(self.imported),
            skipped_suppressed: n(self.skipped_suppressed),
            skipped_duplicate: n(self.skipped_duplicate),
            skipped_known: n(self.skipped_known),
            skipped_no_email: n(self.skipped_no_email),
            skipped_excluded: n(self.skipped_excluded),
            credits: n(self.credits),
            cursor: n(self.cursor),
            status: if self.status == "done" { Status::Done } else { Status::Running },
            error: self.error,
            month: self.month,
            started_at: self.started_at,
            finished_at: self.finished_at,
        };
        Ok((import, filters))
    }
}

/// An import job and its filters.
pub fn load_import(db: &dyn Db, id: &str) -> Result<Option<(Import, Filters)>, StoreError> {
    let row: Option<ImportRow> = db.row(
        "SELECT id, filters, provider, requested, cursor, imported, skipped_suppressed, skipped_duplicate, \
         skipped_known, skipped_no_email, skipped_excluded, credits, status, error, month, started_at, finished_at \
         FROM lead_imports WHERE id = ?",
        vec![id.into()],
    )?;
    row.map(ImportRow::into_import).transpose()
}

/// The most recent imports, newest first.
pub fn recent_imports(db: &dyn Db, limit: i64) -> Result<Vec<Import>, StoreError> {
    let rows: Vec<ImportRow> = db.rows(
        "SELECT id, filters, provider, requested, cursor, imported, skipped_suppressed, skipped_duplicate, \
         skipped_known, skipped_no_email, skipped_excluded, credits, status, error, month, started_at, finished_at \
         FROM lead_imports ORDER BY started_at DESC, id DESC LIMIT ?",
        vec![limit.into()],
    )?;
    rows.into_iter().map(|r| r.into_import().map(|x| x.0)).collect()
}

/// How far the imports of `filters` at `provider` walked the pool: one that walked all of it
/// left nobody new for another (journey finding: such an import was asked for and imported 0).
pub fn walked(db: &dyn Db, filters: &Filters, provider: &str) -> Result<u64, StoreError> {
    Ok(db
        .query(Stmt::new(
            "SELECT MAX(cursor) FROM lead_imports WHERE filters = ? AND provider = ?",
            vec![to_document(filters)?.into(), provider.into()],
        ))?
        .scalar_i64()
        .map_or(0, |n| n.max(0) as u64))
}

/// Creates the job if it does not exist yet (the same id always means the same job) and
/// returns it.
pub fn start(
    db: &dyn Db,
    id: &str,
    filters: &Filters,
    provider: &str,
    requested: u64,
    now_ms: i64,
) -> Result<Import, StoreError> {
    db.batch(vec![Stmt::new(
        "INSERT INTO lead_imports (id, filters, provider, requested, status, month, started_at) \
         VALUES (?, ?, ?, ?, 'running', ?, ?) ON CONFLICT(id) DO NOTHING",
        vec![
            id.into(),
            to_document(filters)?.into(),
            provider.into(),
            i64::try_from(requested).unwrap_or(i64::MAX).into(),
            crate::dates::month(now_ms).into(),
            now_ms.into(),
        ],
    )])?;
    load_import(db, id)?
        .map(|x| x.0)
        .ok_or_else(|| StoreError::Sql("import vanished after creating it".into()))
}

/// Why an import step stopped.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ImportError {
    /// The job does not exist.
    #[error("no import {0}")]
    Unknown(String),
    /// Storage failed.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// The provider failed; the job keeps its cursor and can resume.
    #[error(transparent)]
    Provider(#[from] LeadError),
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct NewLead<'a> {
    email: String,
    email_hash: String,
    first_name: &'a str,
    last_name: &'a str,
    title: &'a str,
    seniority: Option<&'a str>,
    department: Option<&'a str>,
    company: &'a str,
    company_domain: Option<&'a str>,
    industry: Option<&'a str>,
    company_size: Option<&'a str>,
    country: Option<&'a str>,
    city: Option<&'a str>,
    email_status: Option<&'a str>,
    provider_id: &'a str,
}

#[derive(Deserialize)]
struct Existing {
    email: String,
}

/// Why a job ended short of what was asked when the plan's allowance ran out.
const PLAN_LIMIT_REACHED: &str = "the plan's monthly lead limit was reached";
/// Why a job ended short when the credits its approval allowed were spent.
const CREDITS_USED: &str = "every credit the approval allowed was used, some on people found but not kept (suppressed, excluded or repeated)";

/// Advances a job by at most `max_batches` batches. Returns the job's state; `Done` once the
/// requested number is imported, the pool is exhausted or the month's `allowance` (the plan's
/// leads a month) is used up. Each batch's leads are counted against the plan's leads-per-month
/// usage in the same transaction that inserts them.
pub async fn advance(
    db: &dyn Db,
    provider: &dyn LeadProvider,
    id: &str,
    max_batches: u32,
    allowance: u64,
    now_ms: i64,
) -> Result<Import, ImportError> {
    let room = || -> Result<u64, StoreError> {
        Ok(allowance.saturating_sub(limits::used(db, Limit::LeadsPerMonth, now_ms)?.max(0) as u64))
    };
    // Whether this call moved the job's cursor. A provider failure after that is not the outcome
    // of the call: what it brought in is written, the failure stays on the job (`error`), and the
    // job goes on at the next run. Reported as a failure, a slow provider's rate limit (Apollo's
    // enrichment allows about ten calls a minute) used up the approval's attempts while every
    // run imported more (audit finding: it ended `not_done` with leads imported and paid for).
    let mut progressed = false;
    for _ in 0..max_batches {
        let (job, filters) = load_import(db, id)?.ok_or_else(|| ImportError::Unknown(id.to_owned()))?;
        if job.status == Status::Done {
            return Ok(job);
        }
        let (need, room_now) = (job.requested.saturating_sub(job.imported), room()?);
        if need == 0 || room_now == 0 {
            finish(db, id, (need > 0).then_some(PLAN_LIMIT_REACHED), now_ms)?;
            continue;
        }
        let need = need.min(room_now);
        // The approval said "up to {requested} credits". A fetch of `n` people spends at most `n`
        // (one enrichment each), so asking for no more than the credits left keeps that promise
        // when people are paid for and then not kept: exclusions only the enriched record shows,
        // suppressed or repeated addresses (audit finding: such a job went on past it).
        let credits_left = job.requested.saturating_sub(job.credits);
        if credits_left == 0 {
            finish(db, id, Some(CREDITS_USED), now_ms)?;
            continue;
        }
        let known = |pid: &str| -> bool {
            db.query(Stmt::new(
                "SELECT 1 FROM leads WHERE provider = ? AND provider_id = ? LIMIT 1",
                vec![job.provider.clone().into(), pid.into()],
            ))
            .is_ok_and(|r| !r.rows.is_empty())
        };
        let size = need.min(BATCH as u64).min(credits_left) as usize;
        let batch = match provider.fetch(&filters, job.cursor, size, &known).await {
            Ok(b) => b,
            Err(e) => {
                db.exec(
                    "UPDATE lead_imports SET error = ? WHERE id = ?",
                    vec![e.to_string().into(), id.into()],
                )?;
                if progressed {
                    break;
                }
                return Err(e.into());
            }
        };
        // The fetch awaited the network. No other execution of the approval advances this job
        // meanwhile (`approvals::Claim`), but the check stays: if one had, this batch is dropped
        // (nothing was written) and the job goes on from the new cursor. No await from here to the
        // write, so the check and the write are atomic.
        let (now, _) = load_import(db, id)?.ok_or_else(|| ImportError::Unknown(id.to_owned()))?;
        if now.cursor != job.cursor || now.status == Status::Done {
            continue;
        }
        // The month's room read again in the same stretch as the write: imports run one at a
        // time (`ImportLeads::SERIAL`), but any other write to the month's count while this one
        // waited for the provider is seen (audit finding: two approved imports together went past
        // the plan).
        let room = room()?;
        let need = need.min(room);
        let emails: Vec<String> = batch
            .people
            .iter()
            .filter_map(|p| p.email.as_ref().map(|e| e.trim().to_ascii_lowercase()))
            .collect();
        let suppressed = suppression::suppressed_among(db, &emails)?;
        let json = serde_json::to_string(&emails).map_err(|e| StoreError::Document(e.to_string()))?;
        // Lists rather than sets: a batch holds at most a page of people (docs/scale.md, "Size").
        let existing: Vec<String> = db
            .rows::<Existing>(
                "SELECT l.email FROM leads l JOIN json_each(?) j ON l.email = j.value",
                vec![json.into()],
            )?
            .into_iter()
            .map(|e| e.email)
            .collect();
        let (mut no_email, mut dup, mut supp, mut beyond) = (0u64, 0u64, 0u64, 0u64);
        let mut seen: Vec<String> = Vec::new();
        let mut fresh: Vec<NewLead<'_>> = Vec::new();
        for p in &batch.people {
            let Some(email) = p.email.as_ref().map(|e| e.trim().to_ascii_lowercase()) else {
                no_email += 1;
                continue;
            };
            if suppressed.contains(&email) {
                supp += 1;
                continue;
            }
            if existing.contains(&email) || seen.contains(&email) {
                dup += 1;
                continue;
            }
            seen.push(email.clone());
            if (fresh.len() as u64) < need {
                fresh.push(NewLead {
                    email_hash: email_hash(&email),
                    email,
                    first_name: &p.first_name,
                    last_name: &p.last_name,
                    title: &p.title,
                    seniority: p.seniority.as_deref(),
                    department: p.department.as_deref(),
                    company: &p.company,
                    company_domain: p.company_domain.as_deref(),
                    industry: p.industry.as_deref(),
                    company_size: p.company_size.as_deref(),
                    country: p.country.as_deref(),
                    city: p.city.as_deref(),
                    email_status: p.email_status.as_deref(),
                    provider_id: &p.provider_id,
                });
            } else {
                // Found (and paid for) after the room left was taken while the provider answered:
                // said in the report, so that every credit used is accounted for.
                beyond += 1;
            }
        }
        let imported = fresh.len() as u64;
        let limited = imported >= room && job.imported + imported < job.requested;
        let done = batch.exhausted || job.imported + imported >= job.requested || limited;
        let leads_json = serde_json::to_string(&fresh).map_err(|e| StoreError::Document(e.to_string()))?;
        // A batch the provider cut short is still written (its people are paid for), with the
        // error the job then stops on.
        let error = if limited {
            Some(match beyond {
                0 => PLAN_LIMIT_REACHED.to_owned(),
                n => format!(
                    "{PLAN_LIMIT_REACHED}; {} found beyond it were not imported",
                    plural(n, "person", "people")
                ),
            })
        } else {
            batch.interrupted.as_ref().filter(|_| !done).map(ToString::to_string)
        };
        let to_i = |v: u64| i64::try_from(v).unwrap_or(i64::MAX);
        db.batch(vec![
            limits::consume(Limit::LeadsPerMonth, to_i(imported), now_ms),
            Stmt::new(
                "INSERT INTO leads (email, email_hash, first_name, last_name, title, seniority, department, company, \
                 company_domain, industry, company_size, country, city, email_status, provider, provider_id, import_id, \
                 imported_at) \
                 SELECT json_extract(value, '$.email'), json_extract(value, '$.emailHash'), \
                 json_extract(value, '$.firstName'), json_extract(value, '$.lastName'), json_extract(value, '$.title'), \
                 json_extract(value, '$.seniority'), json_extract(value, '$.department'), \
                 json_extract(value, '$.company'), json_extract(value, '$.companyDomain'), \
                 json_extract(value, '$.industry'), json_extract(value, '$.companySize'), \
                 json_extract(value, '$.country'), json_extract(value, '$.city'), json_extract(value, '$.emailStatus'), \
                 ?, json_extract(value, '$.providerId'), ?, ? FROM json_each(?) WHERE true \
                 ON CONFLICT(email) DO NOTHING",
                vec![job.provider.clone().into(), id.into(), now_ms.into(), leads_json.into()],
            ),
            Stmt::new(
                "UPDATE lead_imports SET cursor = cursor + ?, imported = imported + ?, \
                 skipped_suppressed = skipped_suppressed + ?, skipped_duplicate = skipped_duplicate + ?, \
                 skipped_known = skipped_known + ?, skipped_no_email = skipped_no_email + ?, \
                 skipped_excluded = skipped_excluded + ?, credits = credits + ?, error = ?, \
                 status = CASE WHEN ? THEN 'done' ELSE status END, \
                 finished_at = CASE WHEN ? THEN ? ELSE finished_at END WHERE id = ?",
                vec![
                    to_i(batch.consumed).into(),
                    to_i(imported).into(),
                    to_i(supp).into(),
                    to_i(dup).into(),
                    to_i(batch.known).into(),
                    to_i(no_email).into(),
                    to_i(batch.excluded).into(),
                    to_i(batch.credits).into(),
                    error.clone().into(),
                    done.into(),
                    done.into(),
                    now_ms.into(),
                    id.into(),
                ],
            ),
        ])?;
        progressed |= batch.consumed > 0;
        if done {
            break;
        }
        if let Some(e) = batch.interrupted {
            if progressed {
                break;
            }
            return Err(e.into());
        }
    }
    load_import(db, id)?.map(|x| x.0).ok_or_else(|| ImportError::Unknown(id.to_owned()))
}

/// Marks a job done (it will not resume), with why it stopped short when it did (otherwise the
/// error it holds stays).
pub fn finish(db: &dyn Db, id: &str, why: Option<&str>, now_ms: i64) -> Result<(), StoreError> {
    db.exec(
        "UPDATE lead_imports SET status = 'done', finished_at = ?, error = COALESCE(?, error) \
         WHERE id = ? AND status = 'running'",
        vec![now_ms.into(), why.into(), id.into()],
    )
}

/// Imported leads at a glance.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Summary {
    /// Leads in the workspace.
    pub total: i64,
    /// The latest imports, newest first.
    pub imports: Vec<Import>,
    /// Entries on the suppression list.
    pub suppressed: i64,
}

/// The leads summary for the workspace view.
pub fn summary(db: &dyn Db) -> Result<Summary, StoreError> {
    Ok(Summary { total: count(db)?, imports: recent_imports(db, 5)?, suppressed: suppression::count(db)? })
}

// ---- the import_leads approval --------------------------------------------------------------

/// Batches one execution imports before handing over to the approval watchdog: the sandbox is
/// local and fast; Apollo's enrichment is rate limited, so a live import proceeds in slices.
const SANDBOX_BATCHES: u32 = 100;
const LIVE_BATCHES: u32 = 20;

/// The `import_leads` action: bring the confirmed target's leads into the workspace.
pub struct ImportLeads;

/// Its frozen arguments: what the user approves.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ImportArgs {
    /// The target's filters when asked.
    pub filters: Filters,
    /// The target's version when asked.
    pub target_version: i64,
    /// The lead provider.
    pub provider: String,
    /// Leads to import.
    pub requested: u64,
    /// The pool's size when asked: shown in the approval, not part of what it approves nor
    /// stored with it, so that asking again once the provider's count moved replaces the open
    /// approval instead of opening a second one beside it (audit finding: both could be approved).
    #[serde(skip_serializing, default)]
    pub pool: u64,
}

/// What a finished (or stopped) import did, for the user.
pub fn describe(job: &Import) -> String {
    let mut skipped = Vec::new();
    if job.skipped_known + job.skipped_duplicate > 0 {
        skipped.push(format!(
            "{} already in the workspace",
            group_thousands(job.skipped_known + job.skipped_duplicate)
        ));
    }
    if job.skipped_suppressed > 0 {
        skipped.push(format!("{} on the suppression list", group_thousands(job.skipped_suppressed)));
    }
    if job.skipped_no_email > 0 {
        skipped.push(format!("{} without a verified work address", group_thousands(job.skipped_no_email)));
    }
    if job.skipped_excluded > 0 {
        skipped.push(format!("{} excluded", group_thousands(job.skipped_excluded)));
    }
    let mut t = format!("Imported {}", plural(job.imported, "lead", "leads"));
    if job.imported < job.requested {
        t.push_str(&format!(
            " of the {} asked for ({})",
            group_thousands(job.requested),
            job.error.as_deref().unwrap_or("the pool has no more")
        ));
    }
    if !skipped.is_empty() {
        t.push_str(&format!("; skipped {}", skipped.join(", ")));
    }
    t.push_str(&format!("; {} used.", plural(job.credits, "credit", "credits")));
    t
}

fn refusal_text(r: Refusal) -> String {
    match r {
        Refusal::Guidance(t) | Refusal::InvalidArguments(t) | Refusal::Internal(t) => t,
    }
}

impl Action for ImportLeads {
    type Args = ImportArgs;
    const NAME: &'static str = "import_leads";
    // One import at a time in a workspace: two walking the same pool at once would each pay for
    // the same people before either had written them (audit finding); the second then finds
    // them already leads, which costs nothing.
    const SERIAL: bool = true;

    async fn propose(&self, cx: &ToolCx<'_>, args: &ImportArgs) -> Result<Proposal, Refusal> {
        let allowance =
            limits::check(cx.db, cx.config, cx.now_ms, Limit::LeadsPerMonth, args.requested as i64)?;
        let sandbox = args.provider == "sandbox";
        let mut impact = vec![
            format!(
                "Imports up to {} from the confirmed target's pool of {} people ({}).",
                plural(args.requested, "lead", "leads"),
                group_thousands(args.pool),
                args.filters.summary()
            ),
            format!(
                "Uses up to {} at the lead provider ({}): one per revealed work address; people already in the \
                 workspace cost nothing and are skipped.",
                plural(args.requested, "credit", "credits"),
                if sandbox { "sandbox: simulated credits" } else { "Apollo" }
            ),
            format!(
                "Counts against the {} plan's {} leads this month: {} used so far, {} left after this import.",
                allowance.plan,
                group_thousands(allowance.limit.max(0) as u64),
                group_thousands(allowance.used.max(0) as u64),
                group_thousands(allowance.left_after.max(0) as u64)
            ),
            "Addresses on the suppression list and leads already imported are skipped.".to_owned(),
        ];
        if !sandbox {
            impact.push("Credits spent at Apollo are not refunded.".to_owned());
        }
        Ok(Proposal {
            summary: format!(
                "Import {} ({})",
                plural(args.requested, "lead", "leads"),
                args.filters.summary()
            ),
            impact,
            cost: None,
            irreversible: !sandbox,
        })
    }

    async fn execute(&self, cx: &ExecCx<'_>, args: ImportArgs) -> Result<Executed, ExecError> {
        let provider = crate::leads::provider(cx.config, cx.outbound);
        if provider.name() != args.provider {
            return Err(ExecError::Failed(format!(
                "The lead provider changed since this import was asked for ({} then, {} now); ask again.",
                args.provider,
                provider.name()
            )));
        }
        let id = cx.idempotency_key("import");
        let plan = crate::workspace::billing::current(cx.db, cx.config)?;
        let cap = plan.plan.limits.leads_per_month.max(0) as u64;
        if load_import(cx.db, &id)?.is_none() {
            // The import of the target the user confirmed and approved, not of whatever it has
            // become since (audit finding: the new filters' people were imported and paid for).
            // A job already started goes on with the filters it was started with.
            let target = super::target::load(cx.db)?;
            if !target.is_some_and(|t| t.confirmed && t.version == args.target_version) {
                return Err(ExecError::Failed(
                    "The target changed after this import was asked for, so nothing was imported. Show the user \
                     the target as it is now, confirm it (confirm_target), then ask for the import again."
                        .to_owned(),
                ));
            }
            // Usage may have grown since the approval was asked for: never go over the plan.
            let used = limits::used(cx.db, Limit::LeadsPerMonth, cx.now_ms)?.max(0) as u64;
            let requested = args.requested.min(cap.saturating_sub(used));
            if requested == 0 {
                let text =
                    limits::check(cx.db, cx.config, cx.now_ms, Limit::LeadsPerMonth, args.requested as i64)
                        .err()
                        .map_or_else(|| "The plan allows no more leads this month.".to_owned(), refusal_text);
                return Err(ExecError::Failed(text));
            }
            start(cx.db, &id, &args.filters, &args.provider, requested, cx.now_ms)?;
        }
        let budget = if args.provider == "sandbox" { SANDBOX_BATCHES } else { LIVE_BATCHES };
        match advance(cx.db, provider.as_ref(), &id, budget, cap, cx.now_ms).await {
            Ok(job) if job.status == Status::Done => {
                Ok(Executed { result: describe(&job), writes: Vec::new() })
            }
            // Not finished within this execution: the approval watchdog runs it again with the same
            // key, which resumes at the job's cursor.
            Ok(job) => Err(ExecError::Progress(format!(
                "import in progress: {} of {} imported",
                job.imported, job.requested
            ))),
            Err(ImportError::Store(e)) => Err(ExecError::Store(e)),
            Err(ImportError::Unknown(id)) => Err(ExecError::Failed(format!("The import job {id} vanished."))),
            Err(ImportError::Provider(e)) => match e {
                LeadError::RateLimited { .. } | LeadError::Unavailable(_) => {
                    Err(ExecError::Unknown(e.to_string()))
                }
                definite => {
                    let job = load_import(cx.db, &id)?.map(|x| x.0);
                    match job {
                        Some(job) if job.imported > 0 || job.credits > 0 => {
                            finish(cx.db, &id, None, cx.now_ms)?;
                            Ok(Executed {
                                result: format!("{} Then the import stopped: {definite}.", describe(&job)),
                                writes: Vec::new(),
                            })
                        }
                        // Ended too, so that the workspace does not show it importing forever.
                        _ => {
                            let why = format!("Nothing was imported: {definite}.");
                            finish(cx.db, &id, Some(&why), cx.now_ms)?;
                            Err(ExecError::Failed(why))
                        }
                    }
                }
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::leads::sandbox::Sandbox;
    use crate::leads::{LeadProvider, sandbox};
    use crate::testing::{MemoryDb, NOW_MS, block_on};
    use crate::workspace::suppression::Reason;

    fn db() -> MemoryDb {
        let db = MemoryDb::new();
        crate::workspace::migrations::apply(&db, 1).unwrap();
        db
    }

    /// `alias`: a lead reads from the table's snake_case columns as from its own camelCase JSON.
    #[test]
    fn a_lead_reads_from_its_columns_and_from_its_json() {
        let db = db();
        let db: &dyn Db = &db;
        db.exec(
            "INSERT INTO leads (email, email_hash, first_name, last_name, title, company, company_domain, company_size, \
             provider, provider_id, import_id, imported_at) VALUES ('ana@acme.example', 'h', 'Ana', 'Ruiz', 'CFO', \
             'Acme', 'acme.example', '51-200', 'sandbox', 'p1', 'imp_1', 1)",
            vec![],
        )
        .unwrap();
        let lead = nth(db, 0).unwrap().unwrap();
        assert_eq!((lead.first_name.as_str(), lead.last_name.as_str()), ("Ana", "Ruiz"));
        assert_eq!(lead.company_domain.as_deref(), Some("acme.example"));
        assert_eq!(lead.company_size.as_deref(), Some("51-200"));
        let json = serde_json::to_string(&lead).unwrap();
        assert!(
            json.contains(r#""firstName":"Ana""#) && json.contains(r#""companySize":"51-200""#),
            "{json}"
        );
        assert_eq!(serde_json::from_str::<Lead>(&json).unwrap(), lead);
    }

    fn filters() -> Filters {
        Filters {
            countries: vec!["Ireland".into()],
            titles: vec!["Chief Financial Officer".into()],
            company_sizes: vec!["51-200".into(), "201-500".into()],
            ..Filters::default()
        }
    }

    #[test]
    fn an_import_brings_in_exactly_the_pool_skipping_suppressed_and_known_people() {
        let db = db();
        let f = filters();
        let pool = sandbox::Pool::new(&f);
        let total = pool.count();
        assert!((150..2_000).contains(&total), "{total}");
        // Suppress two people of the pool: one by address, one by company domain.
        let a = pool.at(3).unwrap().person();
        let b = pool.at(4).unwrap().person();
        suppression::add(&db, a.email.as_deref().unwrap(), Reason::Unsubscribe, "test", 1).unwrap();
        suppression::add(&db, b.company_domain.as_deref().unwrap(), Reason::Manual, "test", 1).unwrap();
        let at_b = (0..total)
            .filter(|&m| pool.at(m).unwrap().person().company_domain == b.company_domain)
            .count() as u64;

        let job = start(&db, "imp_1", &f, "sandbox", 1_000_000, NOW_MS).unwrap();
        assert_eq!((job.status, job.imported, job.month.as_str()), (Status::Running, 0, "2026-11"));
        // Two batches at a time, like an executor stepping through it.
        let mut steps = 0;
        let report = loop {
            let r = block_on(advance(&db, &Sandbox, "imp_1", 2, u64::MAX, NOW_MS)).unwrap();
            steps += 1;
            if r.status == Status::Done {
                break r;
            }
        };
        assert!(steps >= total.div_ceil(BATCH as u64 * 2));
        assert_eq!(report.cursor, total);
        assert_eq!(report.skipped_suppressed, 1 + at_b);
        assert_eq!(report.imported + report.skipped_suppressed, total, "count = import + skipped");
        assert_eq!(report.credits, total, "one simulated credit per revealed address");
        assert_eq!(count(&db).unwrap() as u64, report.imported);
        let used = crate::workspace::limits::used(&db, crate::plans::Limit::LeadsPerMonth, NOW_MS).unwrap();
        assert_eq!(used as u64, report.imported, "the plan's usage counts exactly the imported leads");
        // Running it again changes nothing.
        let again = block_on(advance(&db, &Sandbox, "imp_1", 5, u64::MAX, NOW_MS)).unwrap();
        assert_eq!(again, report);
        // A second import of the same pool skips everyone already imported, before enrichment.
        start(&db, "imp_2", &f, "sandbox", 50, NOW_MS).unwrap();
        let second = block_on(advance(&db, &Sandbox, "imp_2", 100, u64::MAX, NOW_MS)).unwrap();
        assert_eq!(second.status, Status::Done);
        assert_eq!(second.imported, 0);
        assert_eq!(second.skipped_known, report.imported);
        assert_eq!(second.skipped_suppressed, report.skipped_suppressed);
        assert_eq!(
            second.credits, second.skipped_suppressed,
            "no credits for people already in the workspace"
        );
        // The stored lead is the person the provider returned.
        let first = nth(&db, 0).unwrap().unwrap();
        let p = pool.at(0).unwrap().person();
        assert_eq!(
            (first.email, first.title, first.provider),
            (p.email.unwrap(), p.title, "sandbox".to_owned())
        );
    }

    /// The sandbox as a provider the tests script: waiting once for the "network" in every fetch,
    /// failing the batch from 100 or cutting short the one from 200 once, and counting what it
    /// charged.
    #[derive(Default)]
    struct Scripted {
        waits: bool,
        fail_at_100: std::cell::Cell<bool>,
        cut_at_200: std::cell::Cell<bool>,
        charged: std::cell::Cell<u64>,
    }

    impl LeadProvider for Scripted {
        fn name(&self) -> &'static str {
            "sandbox"
        }
        fn vocabulary(&self) -> crate::leads::filters::Vocabulary {
            Sandbox.vocabulary()
        }
        fn estimate<'a>(
            &'a self,
            filters: &'a Filters,
        ) -> crate::tools::registry::LocalBoxFuture<'a, Result<crate::leads::PoolEstimate, LeadError>>
        {
            Sandbox.estimate(filters)
        }
        fn sample<'a>(
            &'a self,
            filters: &'a Filters,
            n: usize,
        ) -> crate::tools::registry::LocalBoxFuture<'a, Result<Vec<crate::leads::Person>, LeadError>>
        {
            Sandbox.sample(filters, n)
        }
        fn fetch<'a>(
            &'a self,
            filters: &'a Filters,
            from: u64,
            n: usize,
            known: &'a dyn Fn(&str) -> bool,
        ) -> crate::tools::registry::LocalBoxFuture<'a, Result<crate::leads::Batch, LeadError>> {
            Box::pin(async move {
                if self.waits {
                    crate::testing::yield_once().await;
                }
                if from == 100 && self.fail_at_100.replace(false) {
                    return Err(LeadError::Unavailable("HTTP 503".into()));
                }
                let batch = if from == 200 && self.cut_at_200.replace(false) {
                    // Cut short after 30 people were paid for, as Apollo's adapter reports a
                    // failed enrichment call after earlier ones succeeded.
                    let mut batch = Sandbox.fetch(filters, from, 30, known).await?;
                    batch.exhausted = false;
                    batch.interrupted = Some(LeadError::RateLimited { retry_after_s: 60 });
                    batch
                } else {
                    Sandbox.fetch(filters, from, n, known).await?
                };
                self.charged.set(self.charged.get() + batch.credits);
                Ok(batch)
            })
        }
    }

    #[test]
    fn the_pool_count_is_shown_not_approved() {
        let args = |pool| ImportArgs {
            filters: filters(),
            target_version: 1,
            provider: "apollo".into(),
            requested: 100,
            pool,
        };
        let (a, b) = (serde_json::to_value(args(1_200)).unwrap(), serde_json::to_value(args(1_250)).unwrap());
        assert_eq!(a, b, "one approval for both");
        assert!(a.get("pool").is_none() && a["requested"] == 100, "{a}");
    }

    #[test]
    fn an_import_spends_no_more_credits_than_its_approval_allowed() {
        let db = db();
        let provider = Scripted::default();
        start(&db, "first", &filters(), "sandbox", 20, NOW_MS).unwrap();
        block_on(advance(&db, &provider, "first", 10, u64::MAX, NOW_MS)).unwrap();
        // Those 20 people opt out and their records go: found again, each is paid for and dropped.
        let emails: Vec<String> = (&db as &dyn Db)
            .rows::<Existing>("SELECT email FROM leads", vec![])
            .unwrap()
            .into_iter()
            .map(|e| e.email)
            .collect();
        let mut writes: Vec<Stmt> = emails
            .iter()
            .filter_map(|e| suppression::add_stmt(e, suppression::Reason::Unsubscribe, "test", NOW_MS))
            .collect();
        writes.push(Stmt::new("DELETE FROM leads", vec![]));
        db.batch(writes).unwrap();
        start(&db, "second", &filters(), "sandbox", 30, NOW_MS).unwrap();
        let job = block_on(advance(&db, &provider, "second", 10, u64::MAX, NOW_MS)).unwrap();
        assert_eq!(
            (job.status, job.imported, job.skipped_suppressed, job.credits),
            (Status::Done, 10, 20, 30)
        );
        assert!(
            describe(&job).starts_with(&format!("Imported 10 leads of the 30 asked for ({CREDITS_USED})"))
        );
    }

    #[test]
    fn people_found_while_another_import_filled_the_month_are_reported() {
        use std::task::{Context, Waker};
        let db = db();
        start(&db, "a", &filters(), "sandbox", 150, NOW_MS).unwrap();
        // Other people than `a`'s, so that none of `a`'s is already in the workspace.
        let others = Filters { titles: vec!["Head of Sales".into()], ..filters() };
        start(&db, "b", &others, "sandbox", 140, NOW_MS).unwrap();
        let provider = Scripted { waits: true, ..Scripted::default() };
        // `a` asks for 100 people while the month has room for 200; `b` then takes 140 of it.
        let mut a = std::pin::pin!(advance(&db, &provider, "a", 1, 200, NOW_MS));
        assert!(a.as_mut().poll(&mut Context::from_waker(Waker::noop())).is_pending());
        let b = block_on(advance(&db, &provider, "b", 10, 200, NOW_MS)).unwrap();
        assert_eq!((b.status, b.imported), (Status::Done, 140));
        let a = block_on(a).unwrap();
        assert_eq!((a.status, a.imported, a.credits), (Status::Done, 60, 100));
        assert!(
            describe(&a).starts_with(
                "Imported 60 leads of the 150 asked for (the plan's monthly lead limit was reached; 40 people \
                 found beyond it were not imported)"
            ),
            "{}",
            describe(&a)
        );
    }

    #[test]
    fn an_import_stops_at_the_requested_number() {
        let db = db();
        start(&db, "imp", &filters(), "sandbox", 130, NOW_MS).unwrap();
        let r = block_on(advance(&db, &Sandbox, "imp", 10, u64::MAX, NOW_MS)).unwrap();
        assert_eq!((r.status, r.imported, r.cursor), (Status::Done, 130, 130));
        // The same id is the same job, whatever else is asked.
        let same = start(&db, "imp", &Filters::default(), "sandbox", 5, NOW_MS).unwrap();
        assert_eq!(same.requested, 130);
    }

    #[test]
    fn imports_running_side_by_side_stop_at_the_plan_allowance() {
        let db = db();
        // Each asked for within the month's 200 when it started; together they would pass it.
        start(&db, "a", &filters(), "sandbox", 150, NOW_MS).unwrap();
        start(&db, "b", &filters(), "sandbox", 140, NOW_MS).unwrap();
        let a = block_on(advance(&db, &Sandbox, "a", 1, 200, NOW_MS)).unwrap();
        assert_eq!(a.imported, 100, "one batch of a");
        let b = block_on(advance(&db, &Sandbox, "b", 10, 200, NOW_MS)).unwrap();
        assert_eq!((b.status, b.imported), (Status::Done, 100), "b takes only the room left");
        assert_eq!(b.error.as_deref(), Some(PLAN_LIMIT_REACHED));
        assert!(describe(&b).contains("of the 140 asked for (the plan's monthly lead limit was reached)"));
        let a = block_on(advance(&db, &Sandbox, "a", 10, 200, NOW_MS)).unwrap();
        assert_eq!((a.status, a.imported), (Status::Done, 100), "and a stops where the month is full");
        let used = limits::used(&db, Limit::LeadsPerMonth, NOW_MS).unwrap();
        assert_eq!((used, count(&db).unwrap()), (200, 200));
    }

    #[test]
    fn a_provider_failure_keeps_the_cursor_and_resumes() {
        let db = db();
        let flaky = Scripted { fail_at_100: true.into(), cut_at_200: true.into(), ..Scripted::default() };
        start(&db, "imp", &filters(), "sandbox", 250, NOW_MS).unwrap();
        // A failure after a batch written in the same call is progress: the job goes on.
        let mid = block_on(advance(&db, &flaky, "imp", 10, u64::MAX, NOW_MS)).unwrap();
        assert_eq!((mid.status, mid.imported, mid.cursor), (Status::Running, 100, 100));
        assert!(mid.error.unwrap().contains("503"));
        // One that brings nothing in is the provider's failure.
        let idle = Scripted { fail_at_100: true.into(), ..Scripted::default() };
        let err = block_on(advance(&db, &idle, "imp", 10, u64::MAX, NOW_MS)).unwrap_err();
        assert!(matches!(err, ImportError::Provider(LeadError::Unavailable(_))));
        // Cut short by a rate limit part-way through a batch, after paying for some of it.
        let cut = block_on(advance(&db, &flaky, "imp", 10, u64::MAX, NOW_MS)).unwrap();
        assert_eq!(
            (cut.status, cut.imported, cut.cursor, cut.credits),
            (Status::Running, 230, 230, 230),
            "the people paid for before the failure are kept, and the cursor moves past them only"
        );
        assert!(cut.error.is_some());
        let done = block_on(advance(&db, &flaky, "imp", 10, u64::MAX, NOW_MS)).unwrap();
        assert_eq!((done.status, done.imported, done.error), (Status::Done, 250, None));
        assert_eq!(count(&db).unwrap(), 250);
    }
}

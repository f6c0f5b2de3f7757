//! The workspace scheduler: jobs due at a time, run by the Durable Object's alarm.
//!
//! A job is a name (one [`Job`] implementation, listed in [`JOBS`]) and a key (what it is about,
//! such as an approval id). The `schedule` table holds at most one row per (job, key), so
//! scheduling is an upsert and rescheduling is idempotent. Tools and jobs schedule with the
//! [`Stmt`] from [`at`] (or remove with [`cancel`]) inside their own `db.batch`, so a job exists
//! exactly when the state change that needs it was written.
//!
//! The Worker arms the Durable Object's alarm for [`next_due`] after every request; the alarm
//! runs [`run_due`] (through `workspace::on_alarm`) and re-arms for the next due job. A job runs
//! at least once: it must be idempotent (check the state it acts on, write with conditional
//! statements). A job that fails is retried with exponential backoff; it is never dropped.

use serde::Deserialize;

use crate::config::Config;
use crate::outbound::Outbound;
use crate::store::{Db, Stmt, StoreError};
use crate::tools::registry::LocalBoxFuture;

/// The most jobs one alarm runs; more due jobs re-arm the alarm at once.
const BATCH: i64 = 25;
/// Backoff after a failure: 2^attempts seconds, capped, and at least the job's `min_retry_ms`.
const MAX_BACKOFF_MS: i64 = 3_600_000;

/// What a job sees when it runs.
pub struct JobCx<'a> {
    /// The workspace's database.
    pub db: &'a dyn Db,
    /// Deployment configuration.
    pub config: &'a Config,
    /// Outbound HTTP, for jobs that call providers.
    pub outbound: &'a dyn Outbound,
    /// The platform clock (ms since the epoch).
    pub now_ms: i64,
    /// How many times this job already failed since it was last scheduled (0 on the first run).
    pub attempt: u32,
}

/// Why a job did not finish. Either way it runs again later, with backoff.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum JobError {
    /// Not done yet (a provider was unreachable…); the text is for the log.
    #[error("retry: {0}")]
    Retry(String),
    /// Storage failed.
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// One kind of scheduled job, declared once and listed in [`JOBS`].
#[allow(async_fn_in_trait)] // Futures need not be Send on a single-threaded isolate.
pub trait Job: Sync + 'static {
    /// The stored name; never rename a job that may be scheduled in a live workspace.
    const NAME: &'static str;
    /// The least wait before a failed run is tried again, whatever the backoff says.
    fn min_retry_ms(_config: &Config) -> i64 {
        0
    }

    /// Runs the job for `key`. Must be idempotent: it may run again after a crash or a retry.
    async fn run(&self, cx: &JobCx<'_>, key: &str) -> Result<(), JobError>;
}

/// The object-safe view of a [`Job`], implemented for every job.
pub trait DynJob: Sync {
    /// The stored name.
    fn name(&self) -> &'static str;
    /// [`Job::min_retry_ms`].
    fn min_retry_ms(&self, config: &Config) -> i64;
    /// Runs the job.
    fn run<'a>(&'a self, cx: &'a JobCx<'a>, key: &'a str) -> LocalBoxFuture<'a, Result<(), JobError>>;
}

impl<J: Job> DynJob for J {
    fn name(&self) -> &'static str {
        J::NAME
    }
    fn min_retry_ms(&self, config: &Config) -> i64 {
        J::min_retry_ms(config)
    }
    fn run<'a>(&'a self, cx: &'a JobCx<'a>, key: &'a str) -> LocalBoxFuture<'a, Result<(), JobError>> {
        Box::pin(Job::run(self, cx, key))
    }
}

/// Every job the alarm knows how to run. To add one: implement [`Job`] in the file of its area
/// and list it here.
pub const JOBS: &[&dyn DynJob] = &[
    // approvals
    &super::approvals::ExpireApproval,
    &super::approvals::FinishExecution,
    // support
    &super::support::ForwardSupport,
    // sending
    &super::sending::SyncSending,
    // billing
    &crate::providers::sandbox_billing::SandboxRenewal,
];

/// The job named `name`, if it exists.
pub fn find(name: &str) -> Option<&'static dyn DynJob> {
    JOBS.iter().copied().find(|j| j.name() == name)
}

/// Schedules job `J` for `key` at `due_ms`, replacing any earlier schedule of the same job and
/// key. Put the statement in the same batch as the state change that needs the job.
pub fn at<J: Job>(key: &str, due_ms: i64) -> Stmt {
    // A job missing from `JOBS` would be dropped by the alarm; tests catch it here.
    debug_assert!(find(J::NAME).is_some(), "job {} is not listed in schedule::JOBS", J::NAME);
    Stmt::new(
        "INSERT INTO schedule (job, key, due_at, attempts, last_error) VALUES (?, ?, ?, 0, NULL) \
         ON CONFLICT(job, key) DO UPDATE SET due_at = excluded.due_at, attempts = 0, last_error = NULL",
        vec![J::NAME.into(), key.into(), due_ms.into()],
    )
}

/// Moves job `J` for `key`, if scheduled, to no sooner than `due_ms`, its attempts kept.
pub fn not_before<J: Job>(key: &str, due_ms: i64) -> Stmt {
    Stmt::new(
        "UPDATE schedule SET due_at = MAX(due_at, ?) WHERE job = ? AND key = ?",
        vec![due_ms.into(), J::NAME.into(), key.into()],
    )
}

/// Removes job `J` for `key`, if scheduled.
pub fn cancel<J: Job>(key: &str) -> Stmt {
    Stmt::new("DELETE FROM schedule WHERE job = ? AND key = ?", vec![J::NAME.into(), key.into()])
}

/// When job `J` for `key` is due, if it is scheduled.
pub fn due_at<J: Job>(db: &dyn Db, key: &str) -> Result<Option<i64>, StoreError> {
    #[derive(Deserialize)]
    struct Row {
        due_at: i64,
    }
    let row: Option<Row> =
        db.row("SELECT due_at FROM schedule WHERE job = ? AND key = ?", vec![J::NAME.into(), key.into()])?;
    Ok(row.map(|r| r.due_at))
}

/// When the next job is due: what the Durable Object's alarm should be set to.
pub fn next_due(db: &dyn Db) -> Result<Option<i64>, StoreError> {
    Ok(db.query(Stmt::new("SELECT MIN(due_at) FROM schedule", vec![]))?.scalar_i64())
}

/// What one alarm did.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct AlarmReport {
    /// Jobs that finished, by name.
    pub ran: Vec<&'static str>,
    /// Jobs that failed and were rescheduled, with why (for the log).
    pub retried: Vec<String>,
    /// When the alarm must fire next.
    pub next_due: Option<i64>,
}

#[derive(Deserialize)]
struct DueRow {
    job: String,
    key: String,
    due_at: i64,
    attempts: u32,
}

/// Runs every job due at `now_ms` (up to a batch), then reports when the next one is due.
pub async fn run_due(
    db: &dyn Db,
    config: &Config,
    outbound: &dyn Outbound,
    now_ms: i64,
) -> Result<AlarmReport, StoreError> {
    let due: Vec<DueRow> = db.rows(
        "SELECT job, key, due_at, attempts FROM schedule WHERE due_at <= ? ORDER BY due_at, job, key LIMIT ?",
        vec![now_ms.into(), BATCH.into()],
    )?;
    let mut report = AlarmReport::default();
    for row in due {
        let done = || {
            // Only if nobody rescheduled it meanwhile (a job may reschedule itself).
            Stmt::new(
                "DELETE FROM schedule WHERE job = ? AND key = ? AND due_at = ?",
                vec![row.job.clone().into(), row.key.clone().into(), row.due_at.into()],
            )
        };
        let Some(job) = find(&row.job) else {
            // A job removed by a deploy: nothing can run it.
            db.batch(vec![done()])?;
            report.retried.push(format!("{}: unknown job dropped", row.job));
            continue;
        };
        let cx = JobCx { db, config, outbound, now_ms, attempt: row.attempts };
        match job.run(&cx, &row.key).await {
            Ok(()) => {
                db.batch(vec![done()])?;
                report.ran.push(job.name());
            }
            Err(e) => {
                let backoff = 1000_i64
                    .saturating_mul(1 << row.attempts.min(22))
                    .min(MAX_BACKOFF_MS)
                    .max(job.min_retry_ms(config));
                // From when the run ended, which a slow provider may have put well after the
                // alarm's start (review finding: an order's retry a few seconds after its lost
                // post, within the minute that `min_retry_ms` promises).
                let ended = outbound.clock_ms().unwrap_or(now_ms).max(now_ms);
                db.batch(vec![Stmt::new(
                    "UPDATE schedule SET due_at = ?, attempts = attempts + 1, last_error = ? \
                     WHERE job = ? AND key = ? AND due_at = ?",
                    vec![
                        (ended + backoff).into(),
                        e.to_string().into(),
                        row.job.clone().into(),
                        row.key.clone().into(),
                        row.due_at.into(),
                    ],
                )])?;
                report.retried.push(format!("{}:{}: {e}", row.job, row.key));
            }
        }
    }
    report.next_due = next_due(db)?;
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{MemoryDb, NOW_MS, block_on, test_config};
    use crate::workspace::approvals::ExpireApproval;
    use crate::workspace::migrations;

    fn db() -> MemoryDb {
        let db = MemoryDb::new();
        migrations::apply(&db, NOW_MS).unwrap();
        db
    }

    #[test]
    fn scheduling_is_an_idempotent_upsert() {
        let db = db();
        db.batch(vec![at::<ExpireApproval>("a", NOW_MS + 10)]).unwrap();
        db.batch(vec![at::<ExpireApproval>("a", NOW_MS + 20)]).unwrap();
        db.batch(vec![at::<ExpireApproval>("b", NOW_MS + 5)]).unwrap();
        assert_eq!(due_at::<ExpireApproval>(&db, "a").unwrap(), Some(NOW_MS + 20));
        assert_eq!(next_due(&db).unwrap(), Some(NOW_MS + 5));
        db.batch(vec![cancel::<ExpireApproval>("b")]).unwrap();
        assert_eq!(next_due(&db).unwrap(), Some(NOW_MS + 20));
        db.batch(vec![cancel::<ExpireApproval>("a")]).unwrap();
        assert_eq!(next_due(&db).unwrap(), None);
    }

    #[test]
    fn due_jobs_run_and_later_ones_wait() {
        let db = db();
        // Expiring an approval that does not exist is a no-op that succeeds.
        db.batch(vec![
            at::<ExpireApproval>("gone", NOW_MS - 1),
            at::<ExpireApproval>("later", NOW_MS + 60_000),
        ])
        .unwrap();
        let report = block_on(run_due(&db, &test_config(), &crate::outbound::NoNetwork, NOW_MS)).unwrap();
        assert_eq!(report.ran, vec!["expire_approval"]);
        assert_eq!(report.next_due, Some(NOW_MS + 60_000));
        assert_eq!(due_at::<ExpireApproval>(&db, "gone").unwrap(), None);
    }

    #[test]
    fn unknown_jobs_are_dropped_and_failures_back_off() {
        let owned = db();
        let db: &dyn Db = &owned;
        db.exec(
            "INSERT INTO schedule (job, key, due_at) VALUES ('retired_job', 'k', ?)",
            vec![NOW_MS.into()],
        )
        .unwrap();
        // A job whose storage is broken fails and backs off.
        db.exec("DROP TABLE approvals", vec![]).unwrap();
        db.batch(vec![at::<ExpireApproval>("x", NOW_MS)]).unwrap();
        let report = block_on(run_due(db, &test_config(), &crate::outbound::NoNetwork, NOW_MS)).unwrap();
        assert!(report.ran.is_empty());
        assert_eq!(report.retried.len(), 2, "{:?}", report.retried);
        assert_eq!(due_at::<ExpireApproval>(db, "x").unwrap(), Some(NOW_MS + 1000));
        assert_eq!(report.next_due, Some(NOW_MS + 1000));
        let report =
            block_on(run_due(db, &test_config(), &crate::outbound::NoNetwork, NOW_MS + 1000)).unwrap();
        assert_eq!(report.retried.len(), 1);
        assert_eq!(due_at::<ExpireApproval>(db, "x").unwrap(), Some(NOW_MS + 1000 + 2000), "backs off");
    }
}

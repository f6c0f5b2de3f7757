//! Short-lived authorization state, kept in `OAuthState` Durable Objects (SQLite), one object per
//! secret it guards: `flow:<hash>` for a pending authorization request, `signin:<hash>` for an
//! OpenID sign-in round trip, `client:<id>` for a just-registered client (the fallback while KV
//! propagates), `rl:<ip>` for the rate-limit buckets of one client address.
//!
//! A Durable Object runs one request at a time and every operation here is synchronous SQL with
//! no await in between, so a `Take` is an atomic single use and a `Hit` an atomic
//! read-modify-write. Entries carry an expiry; the object's alarm purges them and, once nothing
//! is left, deletes the object's storage (`edge::oauth_state`). An operation that leaves nothing
//! stored (a miss on an unknown key, the take of the last entry) deletes the storage at once
//! ([`upkeep`]): object names come from client input (an unknown client id, a made-up consent
//! handle or OpenID `state`), so the tables every operation creates must not outlive it.

use serde::{Deserialize, Serialize};

use crate::config::Limit;
use crate::store::{Db, Stmt, StoreError};

/// What an entry holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EntryKind {
    /// A pending authorization request (`authorize::Pending`).
    Pending,
    /// An OpenID sign-in in progress (`oidc::SigninState`).
    Signin,
    /// A registered client (`clients::Client`).
    Client,
}

impl EntryKind {
    fn as_str(self) -> &'static str {
        match self {
            EntryKind::Pending => "pending",
            EntryKind::Signin => "signin",
            EntryKind::Client => "client",
        }
    }
}

/// An operation on one `OAuthState` object.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StateOp {
    /// Stores an entry unless one is already under the key; answers with the stored document.
    Put {
        /// What it is.
        kind: EntryKind,
        /// Its key (a hash of the secret that names it, or a client id).
        key: String,
        /// A hash of the browser binding (cookie), or empty.
        binding: String,
        /// The JSON document.
        doc: String,
        /// When it stops existing (ms).
        expires_at: i64,
    },
    /// Reads an unexpired entry with this binding without consuming it.
    Peek {
        /// What it is.
        kind: EntryKind,
        /// Its key.
        key: String,
        /// The binding it must have.
        binding: String,
    },
    /// Reads and deletes an unexpired entry with this binding: single use.
    Take {
        /// What it is.
        kind: EntryKind,
        /// Its key.
        key: String,
        /// The binding it must have.
        binding: String,
    },
    /// Spends one request from each of these token buckets of the object, all or none: the
    /// token endpoint spends the address's and the grant's in one call (`hit`).
    Hit {
        /// The buckets, each with its shape.
        buckets: Vec<Bucket>,
    },
}

/// One token bucket of an `rl:<address>` object and its shape.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Bucket {
    /// The bucket's name (`register`, `token_ip`, `token:<routing id>`, …).
    pub name: String,
    /// Burst size, and requests per window.
    pub capacity: u32,
    /// Seconds to refill the bucket.
    pub window_secs: u32,
}

impl Bucket {
    /// The bucket `name` of the shape `limit`.
    pub fn new(name: impl Into<String>, limit: Limit) -> Self {
        Bucket { name: name.into(), capacity: limit.capacity, window_secs: limit.window_secs }
    }

    fn limit(&self) -> Limit {
        Limit { capacity: self.capacity, window_secs: self.window_secs }
    }
}

/// The answer to a [`StateOp`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StateReply {
    /// The entry's document, if there is one.
    Doc {
        /// The JSON document.
        doc: Option<String>,
    },
    /// The request fits the budget.
    Allowed,
    /// Over budget: nothing was spent.
    Limited {
        /// Seconds until the request fits again.
        retry_after_secs: u32,
        /// The bucket that refused it (the one with the longest wait, if several did), for
        /// the log.
        bucket: String,
    },
}

impl StateReply {
    /// The variant's name, for the log line of an answer that was not the one expected: never
    /// the answer itself, which may hold a pending authorization or a client's secret hash.
    pub fn kind(&self) -> &'static str {
        match self {
            StateReply::Doc { .. } => "doc",
            StateReply::Allowed => "allowed",
            StateReply::Limited { .. } => "limited",
        }
    }
}

const SCHEMA: [&str; 2] = [
    "CREATE TABLE IF NOT EXISTS entries (kind TEXT NOT NULL, key TEXT NOT NULL, binding TEXT NOT NULL, doc TEXT NOT NULL, expires_at INTEGER NOT NULL, PRIMARY KEY (kind, key))",
    "CREATE TABLE IF NOT EXISTS buckets (name TEXT PRIMARY KEY, tokens REAL NOT NULL, updated_at INTEGER NOT NULL, full_at INTEGER NOT NULL)",
];

/// What an object instance knows about its storage between requests: whether its tables
/// exist. Creating them is a write transaction of two statements, which every operation ran
/// before (a few percent of a refresh grant's CPU, bench/README.md). The tables go away only with
/// the object's whole storage (`delete_all`, when [`upkeep`] finds nothing stored), and
/// [`upkeep`] forgets them before answering so.
#[derive(Debug, Default)]
pub struct Tables(std::cell::Cell<bool>);

impl Tables {
    fn ensure(&self, db: &dyn Db) -> Result<(), StoreError> {
        if !self.0.get() {
            db.batch(SCHEMA.iter().map(|sql| Stmt::new(sql, vec![])).collect())?;
            self.0.set(true);
        }
        Ok(())
    }

    /// The object's storage was deleted: the tables are to be created again.
    pub fn forget(&self) {
        self.0.set(false);
    }
}

#[derive(Deserialize)]
struct DocRow {
    doc: String,
}

#[derive(Deserialize)]
struct BucketRow {
    tokens: f64,
    updated_at: i64,
}

/// Runs one operation.
pub fn apply(db: &dyn Db, tables: &Tables, op: StateOp, now_ms: i64) -> Result<StateReply, StoreError> {
    tables.ensure(db)?;
    match op {
        StateOp::Put { kind, key, binding, doc, expires_at } => {
            let results = db.batch(vec![
                Stmt::new("DELETE FROM entries WHERE expires_at <= ?", vec![now_ms.into()]),
                Stmt::new(
                    "INSERT OR IGNORE INTO entries (kind, key, binding, doc, expires_at) VALUES (?, ?, ?, ?, ?)",
                    vec![kind.as_str().into(), key.clone().into(), binding.into(), doc.into(), expires_at.into()],
                ),
                Stmt::new(
                    "SELECT doc FROM entries WHERE kind = ? AND key = ?",
                    vec![kind.as_str().into(), key.into()],
                ),
            ])?;
            let stored: Option<DocRow> = results.last().map(|rows| rows.first()).transpose()?.flatten();
            Ok(StateReply::Doc { doc: stored.map(|r| r.doc) })
        }
        StateOp::Peek { kind, key, binding } => {
            let row: Option<DocRow> = db.row(
                "SELECT doc FROM entries WHERE kind = ? AND key = ? AND binding = ? AND expires_at > ?",
                vec![kind.as_str().into(), key.into(), binding.into(), now_ms.into()],
            )?;
            Ok(StateReply::Doc { doc: row.map(|r| r.doc) })
        }
        StateOp::Take { kind, key, binding } => {
            // One statement: the read and the delete cannot be separated.
            let row: Option<DocRow> = db.row(
                "DELETE FROM entries WHERE kind = ? AND key = ? AND binding = ? AND expires_at > ? RETURNING doc",
                vec![kind.as_str().into(), key.into(), binding.into(), now_ms.into()],
            )?;
            Ok(StateReply::Doc { doc: row.map(|r| r.doc) })
        }
        StateOp::Hit { buckets } => hit(db, &buckets, now_ms),
    }
}

/// Token buckets: `capacity` tokens each, refilled at `capacity` per window; a request takes one
/// from every bucket named ([`Limit::take`]), or, when any of them is empty, from none.
///
/// All or none, so a refused request spends nothing anywhere: a grant looping on its own
/// bucket (`token:<routing id>`) is refused without draining its address's `token_ip`, which
/// hosts such as Claude share between many users, and a request refused by `token_ip` leaves the
/// grant's bucket as it was. Every request let through has spent one token of each bucket, so
/// whatever follows (client authentication, the grant store) is still counted. The refusal's
/// wait is the longest of the refusing buckets', after which all of them fit (a bucket that
/// fits now only fills further).
fn hit(db: &dyn Db, buckets: &[Bucket], now_ms: i64) -> Result<StateReply, StoreError> {
    let mut takes = Vec::with_capacity(buckets.len());
    let mut refused: Option<(u32, &str)> = None;
    for bucket in buckets {
        let row: Option<BucketRow> = db.row(
            "SELECT tokens, updated_at FROM buckets WHERE name = ?",
            vec![bucket.name.as_str().into()],
        )?;
        let taken = bucket.limit().take(row.map(|r| (r.tokens, r.updated_at)), now_ms);
        if let Some(wait) = taken.retry_after_secs
            && refused.is_none_or(|(longest, _)| wait > longest)
        {
            refused = Some((wait, &bucket.name));
        }
        takes.push(taken);
    }
    if let Some((retry_after_secs, bucket)) = refused {
        // Nothing written: a refused take leaves a bucket's tokens as they were (they refill
        // from the stored time alike), and the buckets that had room keep theirs.
        return Ok(StateReply::Limited { retry_after_secs, bucket: bucket.to_owned() });
    }
    let writes: Vec<Stmt> = buckets
        .iter()
        .zip(takes)
        .map(|(bucket, taken)| {
            Stmt::new(
                "INSERT INTO buckets (name, tokens, updated_at, full_at) VALUES (?, ?, ?, ?) ON CONFLICT(name) DO UPDATE SET tokens = excluded.tokens, updated_at = excluded.updated_at, full_at = excluded.full_at",
                vec![bucket.name.as_str().into(), taken.left.into(), now_ms.into(), taken.full_at.into()],
            )
        })
        .collect();
    // Several buckets are written in one transaction, so that a failed write spends none of
    // them; one bucket needs no transaction of its own (`transactionSync` is a call more).
    if writes.len() > 1 {
        db.batch(writes)?;
    } else {
        for write in writes {
            db.query(write)?;
        }
    }
    Ok(StateReply::Allowed)
}

/// When the last thing in the object expires (a full bucket is as good as none), if anything is
/// there: the time for the object's alarm.
pub fn last_expiry(db: &dyn Db, tables: &Tables) -> Result<Option<i64>, StoreError> {
    tables.ensure(db)?;
    let rows = db.query(Stmt::new(
        "SELECT MAX(t) FROM (SELECT MAX(expires_at) AS t FROM entries UNION ALL SELECT MAX(full_at) AS t FROM buckets)",
        vec![],
    ))?;
    Ok(rows.scalar_i64())
}

/// What the object is to do with its storage after an operation or a purge.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Upkeep {
    /// Something is stored: set the alarm to this time (ms), when the last of it has expired.
    AlarmAt(i64),
    /// Nothing is stored: delete the object's whole storage (`delete_all`), so that an object
    /// named after an unknown key leaves nothing behind. The tables are already forgotten.
    DeleteAll,
}

/// Decides what follows an operation or a purge. When nothing is stored, the tables are
/// forgotten before the answer: should the deletion fail halfway, the next operation creates
/// again whatever tables are missing.
pub fn upkeep(db: &dyn Db, tables: &Tables) -> Result<Upkeep, StoreError> {
    Ok(match last_expiry(db, tables)? {
        // A second late, so that the alarm finds the last entry expired.
        Some(ms) => Upkeep::AlarmAt(ms.saturating_add(1000)),
        None => {
            tables.forget();
            Upkeep::DeleteAll
        }
    })
}

/// Deletes what has expired; answers what is to follow, as [`upkeep`].
pub fn purge(db: &dyn Db, tables: &Tables, now_ms: i64) -> Result<Upkeep, StoreError> {
    tables.ensure(db)?;
    db.batch(vec![
        Stmt::new("DELETE FROM entries WHERE expires_at <= ?", vec![now_ms.into()]),
        Stmt::new("DELETE FROM buckets WHERE full_at <= ?", vec![now_ms.into()]),
    ])?;
    upkeep(db, tables)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{MemoryDb, NOW_MS};

    fn put(db: &dyn Db, key: &str, doc: &str, expires_at: i64) -> Option<String> {
        let op = StateOp::Put {
            kind: EntryKind::Pending,
            key: key.into(),
            binding: "b".into(),
            doc: doc.into(),
            expires_at,
        };
        match apply(db, &Tables::default(), op, NOW_MS).unwrap() {
            StateReply::Doc { doc } => doc,
            other => panic!("{other:?}"),
        }
    }

    fn take(db: &dyn Db, key: &str, binding: &str, now: i64) -> Option<String> {
        let op = StateOp::Take { kind: EntryKind::Pending, key: key.into(), binding: binding.into() };
        match apply(db, &Tables::default(), op, now).unwrap() {
            StateReply::Doc { doc } => doc,
            other => panic!("{other:?}"),
        }
    }

    /// A `Hit` of these buckets, each of `capacity` per minute.
    fn hit_op(buckets: &[(&str, u32)]) -> StateOp {
        let buckets = buckets
            .iter()
            .map(|(name, capacity)| Bucket::new(*name, Limit { capacity: *capacity, window_secs: 60 }))
            .collect();
        StateOp::Hit { buckets }
    }

    fn limited(retry_after_secs: u32, bucket: &str) -> StateReply {
        StateReply::Limited { retry_after_secs, bucket: bucket.into() }
    }

    /// Tokens left in each bucket (as stored), by name.
    fn stored(db: &MemoryDb) -> Vec<(String, f64)> {
        #[derive(Deserialize)]
        struct Row {
            name: String,
            tokens: f64,
        }
        let db: &dyn Db = db;
        let rows: Vec<Row> = db.rows("SELECT name, tokens FROM buckets ORDER BY name", vec![]).unwrap();
        rows.into_iter().map(|r| (r.name, r.tokens)).collect()
    }

    #[test]
    fn entries_are_single_use_bound_and_expiring() {
        let db = MemoryDb::new();
        assert_eq!(put(&db, "k", "one", NOW_MS + 1000).as_deref(), Some("one"));
        assert_eq!(put(&db, "k", "two", NOW_MS + 1000).as_deref(), Some("one"), "insert-or-ignore");
        let peek = StateOp::Peek { kind: EntryKind::Pending, key: "k".into(), binding: "b".into() };
        assert_eq!(
            apply(&db, &Tables::default(), peek, NOW_MS).unwrap(),
            StateReply::Doc { doc: Some("one".into()) }
        );
        assert_eq!(take(&db, "k", "other", NOW_MS), None, "wrong binding");
        assert_eq!(take(&db, "k", "b", NOW_MS + 1000), None, "expired");
        assert_eq!(take(&db, "k", "b", NOW_MS).as_deref(), Some("one"));
        assert_eq!(take(&db, "k", "b", NOW_MS), None, "single use");
        assert_eq!(last_expiry(&db, &Tables::default()).unwrap(), None);
    }

    #[test]
    fn buckets_refill_evenly() {
        let db = MemoryDb::new();
        let tables = Tables::default();
        let hit = |now: i64| apply(&db, &tables, hit_op(&[("register", 2)]), now).unwrap();
        assert_eq!(hit(NOW_MS), StateReply::Allowed);
        assert_eq!(hit(NOW_MS), StateReply::Allowed);
        assert_eq!(hit(NOW_MS), limited(30, "register"));
        assert_eq!(hit(NOW_MS + 29_000), limited(1, "register"));
        assert_eq!(hit(NOW_MS + 31_000), StateReply::Allowed);
        assert!(last_expiry(&db, &tables).unwrap().is_some());
        assert!(matches!(purge(&db, &tables, NOW_MS + 31_000).unwrap(), Upkeep::AlarmAt(_)));
        assert_eq!(
            purge(&db, &tables, NOW_MS + 200_000).unwrap(),
            Upkeep::DeleteAll,
            "a full bucket is forgotten"
        );
    }

    #[test]
    fn one_hit_spends_every_bucket_named() {
        let db = MemoryDb::new();
        let tables = Tables::default();
        let both = hit_op(&[("token_ip", 600), ("token:r", 30)]);
        assert_eq!(apply(&db, &tables, both.clone(), NOW_MS).unwrap(), StateReply::Allowed);
        assert_eq!(stored(&db), [("token:r".to_owned(), 29.0), ("token_ip".to_owned(), 599.0)]);
        assert_eq!(apply(&db, &tables, both, NOW_MS).unwrap(), StateReply::Allowed);
        assert_eq!(stored(&db), [("token:r".to_owned(), 28.0), ("token_ip".to_owned(), 598.0)]);
    }

    #[test]
    fn a_hit_refused_by_the_second_bucket_spends_nothing_from_the_first() {
        let db = MemoryDb::new();
        let tables = Tables::default();
        let both = hit_op(&[("token_ip", 3), ("token:r", 1)]);
        assert_eq!(apply(&db, &tables, both.clone(), NOW_MS).unwrap(), StateReply::Allowed);
        // The grant's bucket is empty (one token a minute): refused, with its wait.
        assert_eq!(apply(&db, &tables, both.clone(), NOW_MS).unwrap(), limited(60, "token:r"));
        assert_eq!(apply(&db, &tables, both, NOW_MS).unwrap(), limited(60, "token:r"));
        assert_eq!(
            stored(&db),
            [("token:r".to_owned(), 0.0), ("token_ip".to_owned(), 2.0)],
            "the address's bucket kept what the refused requests did not spend"
        );
        // So the address still has its two for other grants.
        let other = hit_op(&[("token_ip", 3), ("token:s", 1)]);
        assert_eq!(apply(&db, &tables, other.clone(), NOW_MS).unwrap(), StateReply::Allowed);
        let third = hit_op(&[("token_ip", 3), ("token:t", 1)]);
        assert_eq!(apply(&db, &tables, third, NOW_MS).unwrap(), StateReply::Allowed);
        assert_eq!(apply(&db, &tables, other, NOW_MS).unwrap(), limited(60, "token:s"));
    }

    #[test]
    fn a_hit_refused_by_the_first_bucket_spends_nothing_from_the_second() {
        let db = MemoryDb::new();
        let tables = Tables::default();
        assert_eq!(apply(&db, &tables, hit_op(&[("token_ip", 2)]), NOW_MS).unwrap(), StateReply::Allowed);
        assert_eq!(apply(&db, &tables, hit_op(&[("token_ip", 2)]), NOW_MS).unwrap(), StateReply::Allowed);
        let both = hit_op(&[("token_ip", 2), ("token:r", 30)]);
        assert_eq!(apply(&db, &tables, both.clone(), NOW_MS).unwrap(), limited(30, "token_ip"));
        assert_eq!(stored(&db), [("token_ip".to_owned(), 0.0)], "the grant's bucket was not even created");
        // Once the address's bucket has a token again, both are spent.
        assert_eq!(apply(&db, &tables, both, NOW_MS + 30_000).unwrap(), StateReply::Allowed);
        assert_eq!(stored(&db), [("token:r".to_owned(), 29.0), ("token_ip".to_owned(), 0.0)]);
    }

    #[test]
    fn a_hit_refused_by_both_buckets_waits_for_the_slower() {
        let db = MemoryDb::new();
        let tables = Tables::default();
        // 2 a minute (a token every 30 s) and 1 a minute (every 60 s), both emptied at once.
        let both = hit_op(&[("token_ip", 2), ("token:r", 1)]);
        assert_eq!(apply(&db, &tables, both.clone(), NOW_MS).unwrap(), StateReply::Allowed);
        assert_eq!(apply(&db, &tables, hit_op(&[("token_ip", 2)]), NOW_MS).unwrap(), StateReply::Allowed);
        assert_eq!(apply(&db, &tables, both.clone(), NOW_MS).unwrap(), limited(60, "token:r"));
        assert_eq!(apply(&db, &tables, both.clone(), NOW_MS + 30_000).unwrap(), limited(30, "token:r"));
        assert_eq!(apply(&db, &tables, both, NOW_MS + 60_000).unwrap(), StateReply::Allowed);
    }

    #[test]
    fn tables_are_created_once_per_instance_and_again_after_the_storage_is_deleted() {
        let tables = Tables::default();
        let hit = hit_op(&[("b", 2)]);
        let db = MemoryDb::new();
        assert_eq!(apply(&db, &tables, hit.clone(), NOW_MS).unwrap(), StateReply::Allowed);
        // Storage deleted (the alarm's `delete_all`): an instance that still believes in its
        // tables fails, one told to forget them creates them again.
        let emptied = MemoryDb::new();
        assert!(apply(&emptied, &tables, hit.clone(), NOW_MS).is_err(), "the flag is what skips the schema");
        tables.forget();
        assert_eq!(apply(&emptied, &tables, hit, NOW_MS).unwrap(), StateReply::Allowed);
    }

    #[test]
    fn an_operation_that_leaves_nothing_deletes_the_storage_and_forgets_the_tables() {
        let tables = Tables::default();
        let db = MemoryDb::new();
        // A miss on an unknown key (a made-up client id or consent handle) stores nothing.
        let take =
            StateOp::Take { kind: EntryKind::Client, key: "vsc_unknown".into(), binding: String::new() };
        assert_eq!(apply(&db, &tables, take, NOW_MS).unwrap(), StateReply::Doc { doc: None });
        assert_eq!(upkeep(&db, &tables).unwrap(), Upkeep::DeleteAll);
        // The storage is then deleted: the next operation, on an empty database, creates the
        // tables again instead of failing on them.
        let emptied = MemoryDb::new();
        let put = StateOp::Put {
            kind: EntryKind::Pending,
            key: "k".into(),
            binding: "b".into(),
            doc: "d".into(),
            expires_at: NOW_MS + 1000,
        };
        assert_eq!(apply(&emptied, &tables, put, NOW_MS).unwrap(), StateReply::Doc { doc: Some("d".into()) });
        assert_eq!(upkeep(&emptied, &tables).unwrap(), Upkeep::AlarmAt(NOW_MS + 2000), "kept while stored");
        // Taking the last entry empties the object again.
        let take = StateOp::Take { kind: EntryKind::Pending, key: "k".into(), binding: "b".into() };
        assert_eq!(
            apply(&emptied, &tables, take, NOW_MS).unwrap(),
            StateReply::Doc { doc: Some("d".into()) }
        );
        assert_eq!(upkeep(&emptied, &tables).unwrap(), Upkeep::DeleteAll);
        assert!(apply(&MemoryDb::new(), &tables, hit_op(&[("b", 1)]), NOW_MS).is_ok());
    }
}

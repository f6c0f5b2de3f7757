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
    /// Spends one request from a token bucket.
    Hit {
        /// The bucket's name.
        bucket: String,
        /// Burst size, and requests per window.
        capacity: u32,
        /// Seconds to refill the bucket.
        window_secs: u32,
    },
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
    /// Over budget.
    Limited {
        /// Seconds until one request fits again.
        retry_after_secs: u32,
    },
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
        StateOp::Hit { bucket, capacity, window_secs } => hit(db, &bucket, capacity, window_secs, now_ms),
    }
}

/// A token bucket: `capacity` tokens, refilled at `capacity` per window; each request takes one
/// ([`Limit::take`]).
fn hit(
    db: &dyn Db,
    bucket: &str,
    capacity: u32,
    window_secs: u32,
    now_ms: i64,
) -> Result<StateReply, StoreError> {
    let row: Option<BucketRow> =
        db.row("SELECT tokens, updated_at FROM buckets WHERE name = ?", vec![bucket.into()])?;
    let taken = Limit { capacity, window_secs }.take(row.map(|r| (r.tokens, r.updated_at)), now_ms);
    db.exec(
        "INSERT INTO buckets (name, tokens, updated_at, full_at) VALUES (?, ?, ?, ?) ON CONFLICT(name) DO UPDATE SET tokens = excluded.tokens, updated_at = excluded.updated_at, full_at = excluded.full_at",
        vec![bucket.into(), taken.left.into(), now_ms.into(), taken.full_at.into()],
    )?;
    Ok(match taken.retry_after_secs {
        None => StateReply::Allowed,
        Some(retry_after_secs) => StateReply::Limited { retry_after_secs },
    })
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
        let hit = |now: i64| {
            let op = StateOp::Hit { bucket: "register".into(), capacity: 2, window_secs: 60 };
            apply(&db, &tables, op, now).unwrap()
        };
        assert_eq!(hit(NOW_MS), StateReply::Allowed);
        assert_eq!(hit(NOW_MS), StateReply::Allowed);
        assert_eq!(hit(NOW_MS), StateReply::Limited { retry_after_secs: 30 });
        assert_eq!(hit(NOW_MS + 29_000), StateReply::Limited { retry_after_secs: 1 });
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
    fn tables_are_created_once_per_instance_and_again_after_the_storage_is_deleted() {
        let tables = Tables::default();
        let hit = StateOp::Hit { bucket: "b".into(), capacity: 2, window_secs: 60 };
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
        assert!(
            apply(
                &MemoryDb::new(),
                &tables,
                StateOp::Hit { bucket: "b".into(), capacity: 1, window_secs: 1 },
                NOW_MS
            )
            .is_ok()
        );
    }
}

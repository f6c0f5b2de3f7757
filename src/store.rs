//! The storage port: a small synchronous SQL interface over the workspace's SQLite.
//!
//! Durable Object SQL (`state.storage.sql.exec`) is synchronous, so the port is too. The Worker
//! implements it over the Durable Object's storage (`edge::db`); native tests implement it over
//! an in-memory SQLite database (`testing::MemoryDb`). Domain code never sees either.
//!
//! Writes that must land together go through [`Db::batch`], which runs them in one transaction
//! (`transactionSync` on Workers): either every statement commits or none does.

use serde::de::DeserializeOwned;
use serde_json::Value;

/// One SQL value, as SQLite stores it.
#[derive(Debug, Clone, PartialEq)]
pub enum SqlValue {
    /// SQL NULL.
    Null,
    /// A 64-bit integer (booleans are stored as 0/1).
    Integer(i64),
    /// A 64-bit float.
    Real(f64),
    /// UTF-8 text.
    Text(String),
    /// Raw bytes.
    Blob(Vec<u8>),
}

impl From<i64> for SqlValue {
    fn from(v: i64) -> Self {
        SqlValue::Integer(v)
    }
}
impl From<u32> for SqlValue {
    fn from(v: u32) -> Self {
        SqlValue::Integer(i64::from(v))
    }
}
impl From<bool> for SqlValue {
    fn from(v: bool) -> Self {
        SqlValue::Integer(i64::from(v))
    }
}
impl From<f64> for SqlValue {
    fn from(v: f64) -> Self {
        SqlValue::Real(v)
    }
}
impl From<&str> for SqlValue {
    fn from(v: &str) -> Self {
        SqlValue::Text(v.to_owned())
    }
}
impl From<String> for SqlValue {
    fn from(v: String) -> Self {
        SqlValue::Text(v)
    }
}
impl From<&String> for SqlValue {
    fn from(v: &String) -> Self {
        SqlValue::Text(v.clone())
    }
}
impl From<Vec<u8>> for SqlValue {
    fn from(v: Vec<u8>) -> Self {
        SqlValue::Blob(v)
    }
}
impl<T: Into<SqlValue>> From<Option<T>> for SqlValue {
    fn from(v: Option<T>) -> Self {
        v.map_or(SqlValue::Null, Into::into)
    }
}

impl SqlValue {
    /// The value as JSON, for row deserialisation (blobs become arrays of bytes).
    fn to_json(&self) -> Value {
        match self {
            SqlValue::Null => Value::Null,
            SqlValue::Integer(i) => Value::from(*i),
            SqlValue::Real(f) => Value::from(*f),
            SqlValue::Text(s) => Value::from(s.as_str()),
            SqlValue::Blob(b) => Value::from(b.clone()),
        }
    }
}

/// One statement with its positional (`?`) parameters.
#[derive(Debug, Clone)]
pub struct Stmt {
    /// The SQL text.
    pub sql: &'static str,
    /// The values bound to its `?` placeholders, in order.
    pub params: Vec<SqlValue>,
}

impl Stmt {
    /// A statement with parameters.
    pub fn new(sql: &'static str, params: Vec<SqlValue>) -> Self {
        Stmt { sql, params }
    }
}

/// The rows a statement returned.
#[derive(Debug, Clone, Default)]
pub struct Rows {
    /// Column names, in order.
    pub columns: Vec<String>,
    /// Each row's values, in column order.
    pub rows: Vec<Vec<SqlValue>>,
}

impl Rows {
    /// Deserialises each row into `T`, matching columns to fields by name.
    pub fn decode<T: DeserializeOwned>(&self) -> Result<Vec<T>, StoreError> {
        self.rows.iter().map(|row| self.decode_row(row)).collect()
    }

    /// The first row decoded as `T`, if there is one.
    pub fn first<T: DeserializeOwned>(&self) -> Result<Option<T>, StoreError> {
        self.rows.first().map(|row| self.decode_row(row)).transpose()
    }

    // The generic functions here are compiled once per row type (about fifty), so what does not
    // depend on the type is in functions that exist once (`#[inline(never)]`).
    fn decode_row<T: DeserializeOwned>(&self, row: &[SqlValue]) -> Result<T, StoreError> {
        serde_json::from_value(self.object(row)).map_err(decode_error)
    }

    /// The row as an object from column names to values, which serde reads as it reads a
    /// document: a row type names its fields as the columns are named (or takes an `alias`).
    #[inline(never)]
    fn object(&self, row: &[SqlValue]) -> Value {
        Value::Object(self.columns.iter().cloned().zip(row.iter().map(SqlValue::to_json)).collect())
    }

    /// The first column of the first row as an integer (for `COUNT(*)` and the like).
    pub fn scalar_i64(&self) -> Option<i64> {
        self.first_i64(0)
    }

    /// Column `column` of the first row as an integer (`None` for NULL, text or no row): for
    /// aggregates read without a row type, whose decoder would be one more in the wasm.
    pub fn first_i64(&self, column: usize) -> Option<i64> {
        match self.rows.first()?.get(column)? {
            SqlValue::Integer(i) => Some(*i),
            SqlValue::Real(f) => Some(*f as i64),
            _ => None,
        }
    }
}

fn decode_error(e: serde_json::Error) -> StoreError {
    StoreError::Decode(e.to_string())
}

/// A storage failure. The text is for logs, never for the wire.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StoreError {
    /// The database refused a statement.
    #[error("sql: {0}")]
    Sql(String),
    /// A row did not have the shape the code expected.
    #[error("decode: {0}")]
    Decode(String),
    /// A stored JSON document could not be parsed.
    #[error("document: {0}")]
    Document(String),
}

/// Synchronous access to one workspace's SQLite database.
pub trait Db {
    /// Runs one statement and returns its rows (empty for statements without `RETURNING`).
    fn query(&self, stmt: Stmt) -> Result<Rows, StoreError>;

    /// Runs statements in one transaction and returns each one's rows; on any error nothing is
    /// written.
    fn batch(&self, stmts: Vec<Stmt>) -> Result<Vec<Rows>, StoreError>;
}

impl dyn Db + '_ {
    /// Runs one statement and decodes its rows.
    pub fn rows<T: DeserializeOwned>(
        &self,
        sql: &'static str,
        params: Vec<SqlValue>,
    ) -> Result<Vec<T>, StoreError> {
        self.run(sql, params)?.decode()
    }

    /// Runs one statement and decodes its first row, if any.
    pub fn row<T: DeserializeOwned>(
        &self,
        sql: &'static str,
        params: Vec<SqlValue>,
    ) -> Result<Option<T>, StoreError> {
        self.run(sql, params)?.first()
    }

    #[inline(never)]
    fn run(&self, sql: &'static str, params: Vec<SqlValue>) -> Result<Rows, StoreError> {
        self.query(Stmt::new(sql, params))
    }

    /// Runs one statement and ignores its rows.
    pub fn exec(&self, sql: &'static str, params: Vec<SqlValue>) -> Result<(), StoreError> {
        self.run(sql, params).map(drop)
    }
}

/// Stores a value as a JSON document (for records read and written whole).
pub fn to_document<T: serde::Serialize>(value: &T) -> Result<String, StoreError> {
    serde_json::to_string(value).map_err(document_error)
}

/// Reads a JSON document written by [`to_document`].
pub fn from_document<T: DeserializeOwned>(text: &str) -> Result<T, StoreError> {
    serde_json::from_str(text).map_err(document_error)
}

#[inline(never)]
fn document_error(e: serde_json::Error) -> StoreError {
    StoreError::Document(e.to_string())
}

// ---- remembered reads ----------------------------------------------------------------------

/// The most bytes (roughly: text and blob lengths, plus 16 per value) one remembered result may
/// take; larger results are read again each time.
const REMEMBER_MAX_ENTRY_BYTES: usize = 32 * 1024;
/// The most bytes all remembered results of one holder may take; past it, it starts over. Small, because one isolate can host many Durable Object instances within its 128 MB;
/// a `get_workspace_context` of a workspace well into its journey reads a few tens of KB.
const REMEMBER_MAX_BYTES: usize = 256 * 1024;

/// A [`Db`] that remembers the rows of its reads until its next write, for a holder that is the
/// only way into its database (a Durable Object instance and its own SQLite: no other instance
/// and no other code reaches that storage, and the instance is discarded when its storage fails).
///
/// Why a remembered result can never be stale: a `SELECT`'s rows are a function of the database's
/// content and of the statement's text and parameters, which together are the key; the content
/// changes only through a statement, and every statement that is not a remembered kind of read
/// (below), and every batch, forgets everything before it runs. A statement is remembered only
/// when it is a single `SELECT` (no `;`, so nothing can follow it) that names none of SQLite's
/// functions whose answer depends on something else than the data and the parameters (the clock,
/// randomness, the connection's change counters). Time-dependent answers therefore stay per call:
/// a read that depends on the time takes it as a parameter, or compares in Rust.
///
/// A result that comes back is a copy of the rows read then; nothing is shared with the caller.
/// A read with a float parameter is not remembered (`0.0` and `-0.0` are equal as parameters but
/// a `SELECT ?` returns them apart), so parameters compare with `==`.
pub struct Remembering<D> {
    db: D,
    reads: std::cell::RefCell<Vec<Remembered>>,
    /// Their bytes, together.
    bytes: std::cell::Cell<usize>,
}

struct Remembered {
    sql: &'static str,
    params: Vec<SqlValue>,
    rows: Rows,
}

impl<D: Db> Remembering<D> {
    /// Wraps the only handle on a database.
    pub fn new(db: D) -> Self {
        Remembering { db, reads: std::cell::RefCell::default(), bytes: std::cell::Cell::new(0) }
    }

    /// How many results are remembered now.
    pub fn remembered(&self) -> usize {
        self.reads.borrow().len()
    }

    /// The database underneath, for tests that must see what it answers without this layer.
    /// Writing through it would leave this layer's results stale.
    #[cfg(test)]
    pub fn unremembered(&self) -> &D {
        &self.db
    }

    fn forget(&self) {
        self.reads.borrow_mut().clear();
        self.bytes.set(0);
    }
}

impl<D: Db + Default> Default for Remembering<D> {
    fn default() -> Self {
        Remembering::new(D::default())
    }
}

impl<D: Db> Db for Remembering<D> {
    fn query(&self, stmt: Stmt) -> Result<Rows, StoreError> {
        // Looked up before the statement is classified: only a rememberable statement's text is
        // ever stored, so a hit is one, and the classification (a scan of the text) runs on
        // misses only.
        if let Some(hit) = self.reads.borrow().iter().find(|r| r.sql == stmt.sql && r.params == stmt.params) {
            return Ok(hit.rows.clone());
        }
        if !rememberable(stmt.sql) {
            self.forget();
            return self.db.query(stmt);
        }
        let (sql, params) = (stmt.sql, stmt.params.clone());
        let rows = self.db.query(stmt)?;
        let bytes = sql.len()
            + values_bytes(&params)
            + rows.columns.iter().map(|c| 16 + c.len()).sum::<usize>()
            + rows.rows.iter().map(|row| values_bytes(row)).sum::<usize>();
        if bytes <= REMEMBER_MAX_ENTRY_BYTES && !params.iter().any(|p| matches!(p, SqlValue::Real(_))) {
            // When full, start over: a workspace's context is a few tens of KB, so this happens
            // only to reads that are many and large, which gain least from being remembered.
            if self.bytes.get() + bytes > REMEMBER_MAX_BYTES {
                self.forget();
            }
            self.bytes.set(self.bytes.get() + bytes);
            self.reads.borrow_mut().push(Remembered { sql, params, rows: rows.clone() });
        }
        Ok(rows)
    }

    fn batch(&self, stmts: Vec<Stmt>) -> Result<Vec<Rows>, StoreError> {
        self.forget();
        self.db.batch(stmts)
    }
}

/// Whether a statement's rows depend only on the data and its parameters, and it writes nothing:
/// one `SELECT` (no `;`) naming no function of the clock, of randomness or of the connection.
/// Anything else (and anything unsure, such as a leading comment or a column whose name is one
/// of those words) counts as a write.
fn rememberable(sql: &str) -> bool {
    /// SQLite's functions and keywords whose value is not decided by the data: the date and time
    /// functions (all of them, since each can read the clock through `'now'`), `CURRENT_*`,
    /// randomness, and the connection's counters.
    const UNDECIDED: &[&[u8]] = &[
        b"random",
        b"randomblob",
        b"changes",
        b"total_changes",
        b"last_insert_rowid",
        b"now",
        b"date",
        b"time",
        b"datetime",
        b"julianday",
        b"unixepoch",
        b"strftime",
        b"timediff",
        b"current_date",
        b"current_time",
        b"current_timestamp",
    ];
    // Bytes rather than chars: the classification is a few comparisons per word, and anything
    // not ASCII counts as a separator, which can only make a statement look like a write.
    let bytes = sql.as_bytes();
    let start = bytes.iter().take_while(|b| b.is_ascii_whitespace()).count();
    let mut words = bytes[start..].split(|b| !(b.is_ascii_alphanumeric() || *b == b'_'));
    words.next().is_some_and(|first| first.eq_ignore_ascii_case(b"select"))
        && !bytes.contains(&b';')
        && words.all(|word| !UNDECIDED.iter().any(|u| word.eq_ignore_ascii_case(u)))
}

/// About what `values` take in memory: 16 bytes each, and their text or bytes.
fn values_bytes(values: &[SqlValue]) -> usize {
    values
        .iter()
        .map(|v| {
            16 + match v {
                SqlValue::Text(s) => s.len(),
                SqlValue::Blob(b) => b.len(),
                _ => 0,
            }
        })
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::CountingDb;

    fn remembering() -> Remembering<CountingDb> {
        let db = Remembering::new(CountingDb::default());
        db.batch(vec![
            Stmt::new("CREATE TABLE t (k TEXT PRIMARY KEY, v INTEGER)", vec![]),
            Stmt::new("INSERT INTO t VALUES ('a', 1)", vec![]),
        ])
        .unwrap();
        db
    }

    fn value(db: &dyn Db, k: &str) -> Option<i64> {
        db.query(Stmt::new("SELECT v FROM t WHERE k = ?", vec![k.into()])).unwrap().scalar_i64()
    }

    fn ran(db: &Remembering<CountingDb>) -> usize {
        db.unremembered().statements.get()
    }

    #[test]
    fn a_read_is_run_once_until_a_write() {
        let db = remembering();
        let before = ran(&db);
        assert_eq!(value(&db, "a"), Some(1));
        assert_eq!(value(&db, "a"), Some(1));
        assert_eq!(ran(&db), before + 1, "the second read was remembered");
        // Other parameters are another read.
        assert_eq!(value(&db, "b"), None);
        assert_eq!(ran(&db), before + 2);
        assert_eq!(db.remembered(), 2);
    }

    #[test]
    fn every_kind_of_write_forgets_every_read() {
        let writes: [fn(&dyn Db); 7] = [
            |db| db.exec("UPDATE t SET v = v + 1 WHERE k = 'a'", vec![]).unwrap(),
            |db| db.exec("INSERT INTO t VALUES ('b', 2)", vec![]).unwrap(),
            |db| db.exec("DELETE FROM t WHERE k = 'zz'", vec![]).unwrap(),
            |db| {
                db.batch(vec![Stmt::new("UPDATE t SET v = v * 10", vec![])]).unwrap();
            },
            // A write whose rows come back, a CTE, and a statement after a comment.
            |db| db.exec("UPDATE t SET v = 7 RETURNING v", vec![]).unwrap(),
            |db| db.exec("WITH x AS (SELECT 1) UPDATE t SET v = 8", vec![]).unwrap(),
            |db| db.exec("/* x */ UPDATE t SET v = 9", vec![]).unwrap(),
        ];
        for (i, write) in writes.iter().enumerate() {
            let db = remembering();
            let _ = value(&db, "a");
            let _ = value(&db, "b");
            write(&db);
            assert_eq!(db.remembered(), 0, "write {i} forgot nothing");
            let fresh = |k| value(db.unremembered(), k);
            assert_eq!((value(&db, "a"), value(&db, "b")), (fresh("a"), fresh("b")), "write {i}");
        }
    }

    #[test]
    fn a_failed_write_forgets_too() {
        let db = remembering();
        let _ = value(&db, "a");
        let dyn_db: &dyn Db = &db;
        assert!(dyn_db.exec("INSERT INTO t VALUES ('a', 5)", vec![]).is_err());
        assert!(db.batch(vec![Stmt::new("INSERT INTO t VALUES ('a', 5)", vec![])]).is_err());
        assert_eq!(db.remembered(), 0);
        assert_eq!(value(&db, "a"), Some(1));
    }

    #[test]
    fn only_plain_selects_of_the_data_are_remembered() {
        for sql in [
            "SELECT v FROM t",
            "  select v from t where k = ?",
            "SELECT MIN(due_at) FROM schedule",
            "SELECT skipped_known, created_at, updated_at FROM lead_imports",
        ] {
            assert!(rememberable(sql), "{sql}");
        }
        for sql in [
            "INSERT INTO t VALUES (1)",
            "UPDATE t SET v = 1 RETURNING v",
            "DELETE FROM t",
            "CREATE TABLE u (x)",
            "PRAGMA table_list",
            "WITH x AS (SELECT 1) SELECT * FROM x",
            "-- note\nSELECT v FROM t",
            "SELECTv FROM t",
            "SELECT 1; DELETE FROM t",
            "SELECT random()",
            "SELECT RANDOMBLOB(4)",
            "SELECT date('now')",
            "SELECT unixepoch()",
            "SELECT v FROM t WHERE k > strftime('%s')",
            "SELECT CURRENT_TIMESTAMP",
            "SELECT changes()",
            "SELECT total_changes()",
            "SELECT last_insert_rowid()",
        ] {
            assert!(!rememberable(sql), "{sql}");
        }
    }

    #[test]
    fn a_read_with_a_float_parameter_is_not_remembered() {
        let db = Remembering::new(CountingDb::default());
        let echo = |x: f64| db.query(Stmt::new("SELECT ? AS x", vec![x.into()])).unwrap().rows[0][0].clone();
        assert_eq!(echo(0.0), SqlValue::Real(0.0));
        // Equal to 0.0 as a parameter, yet another answer.
        match echo(-0.0) {
            SqlValue::Real(x) => assert!(x.is_sign_negative()),
            other => panic!("{other:?}"),
        }
        assert_eq!(db.remembered(), 0);
    }

    #[test]
    fn results_are_bounded_by_size() {
        let db = Remembering::new(CountingDb::default());
        let echo = |text: &str| db.query(Stmt::new("SELECT ? AS x", vec![text.into()])).unwrap();
        let _ = echo(&"x".repeat(REMEMBER_MAX_ENTRY_BYTES));
        assert_eq!(db.remembered(), 0, "a result over the entry bound is not kept");
        // Each entry: the text as parameter and as value, 16 bytes each, the column's name and
        // the statement.
        let len = REMEMBER_MAX_ENTRY_BYTES / 4;
        let fit = REMEMBER_MAX_BYTES / (2 * len + 2 * 16 + 16 + 1 + "SELECT ? AS x".len());
        let text = |i: usize| format!("{i:0len$}");
        for i in 0..fit {
            let _ = echo(&text(i));
        }
        assert_eq!(db.remembered(), fit);
        let before = ran(&db);
        let _ = echo(&text(0));
        assert_eq!(ran(&db), before, "all still there");
        // One more does not fit: it starts over.
        let _ = echo(&text(fit));
        assert_eq!(db.remembered(), 1);
        let _ = echo(&text(0));
        assert_eq!(ran(&db), before + 2);
    }
}

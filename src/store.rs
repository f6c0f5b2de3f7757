//! The storage port: a small synchronous SQL interface over the workspace's SQLite.
//!
//! Durable Object SQL (`state.storage.sql.exec`) is synchronous, so the port is too. The Worker
//! implements it over the Durable Object's storage (`edge::db`); native tests implement it over
//! an in-memory SQLite database (`testing::MemoryDb`). Domain code never sees either.
//!
//! Writes that must land together go through [`Db::batch`], which runs them in one transaction
//! (`transactionSync` on Workers): either every statement commits or none does.

use std::borrow::Cow;

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
        crate::json::from_entries(self.entries(row)).map_err(decode_error)
    }

    /// The row as an object from column names to values (`json::from_entries`, which also
    /// decodes documents, so a type read from both has one copy of its decoding code).
    #[inline(never)]
    fn entries<'a>(&'a self, row: &'a [SqlValue]) -> crate::json::Entries<'a> {
        Box::new(
            self.columns.iter().zip(row).map(|(name, value)| (Cow::Borrowed(name.as_str()), value.to_json())),
        )
    }
    /// The first column of the first row as an integer (for `COUNT(*)` and the like).
    pub fn scalar_i64(&self) -> Option<i64> {
        match self.rows.first()?.first()? {
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
    crate::json::decode(text).map_err(document_error)
}

#[inline(never)]
fn document_error(e: serde_json::Error) -> StoreError {
    StoreError::Document(e.to_string())
}

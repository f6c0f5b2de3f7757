//! [`Db`] over Durable Object SQL storage.

use std::cell::RefCell;
use std::rc::Rc;

use wasm_bindgen::JsCast as _;
use wasm_bindgen::prelude::{Closure, JsValue};
use worker::{SqlStorage, SqlStorageValue, Storage};

use crate::store::{Db, Rows, SqlValue, Stmt, StoreError};

/// What the transaction callback hands back to `batch`.
type BatchResult = Result<Vec<Rows>, StoreError>;

/// A workspace's SQLite, through `state.storage.sql`.
pub struct DoDb {
    storage: Storage,
}

impl DoDb {
    /// Wraps a Durable Object's storage.
    pub fn new(storage: Storage) -> Self {
        DoDb { storage }
    }
}

fn to_sql(v: &SqlValue) -> SqlStorageValue {
    match v {
        SqlValue::Null => SqlStorageValue::Null,
        SqlValue::Integer(i) => SqlStorageValue::Integer(*i),
        SqlValue::Real(f) => SqlStorageValue::Float(*f),
        SqlValue::Text(s) => SqlStorageValue::String(s.clone()),
        SqlValue::Blob(b) => SqlStorageValue::Blob(b.clone()),
    }
}

fn from_sql(v: SqlStorageValue) -> SqlValue {
    match v {
        SqlStorageValue::Null => SqlValue::Null,
        SqlStorageValue::Boolean(b) => SqlValue::Integer(i64::from(b)),
        SqlStorageValue::Integer(i) => SqlValue::Integer(i),
        // SQLite integers come back as JS numbers; keep whole numbers integral.
        SqlStorageValue::Float(f) if f.fract() == 0.0 && f.abs() < 9.007_199_254_740_992e15 => {
            SqlValue::Integer(f as i64)
        }
        SqlStorageValue::Float(f) => SqlValue::Real(f),
        SqlStorageValue::String(s) => SqlValue::Text(s),
        SqlStorageValue::Blob(b) => SqlValue::Blob(b),
    }
}

fn run(sql: &SqlStorage, stmt: &Stmt) -> Result<Rows, StoreError> {
    let cursor = sql
        .exec(stmt.sql, stmt.params.iter().map(to_sql).collect::<Vec<_>>())
        .map_err(|e| StoreError::Sql(e.to_string()))?;
    let columns = cursor.column_names();
    let rows = cursor
        .raw()
        .map(|row| row.map(|values| values.into_iter().map(from_sql).collect()))
        .collect::<worker::Result<Vec<Vec<SqlValue>>>>()
        .map_err(|e| StoreError::Sql(e.to_string()))?;
    Ok(Rows { columns, rows })
}

impl Db for DoDb {
    fn query(&self, stmt: Stmt) -> Result<Rows, StoreError> {
        run(&self.storage.sql(), &stmt)
    }

    /// Runs the statements inside `storage.transactionSync`, which rolls every write back when
    /// the callback throws (SQL `BEGIN` is refused by Durable Objects). worker 0.8 has no
    /// wrapper for it, so it is called through `js_sys`.
    fn batch(&self, stmts: Vec<Stmt>) -> Result<Vec<Rows>, StoreError> {
        let raw: &JsValue = self.storage.as_raw().as_ref();
        let function = js_sys::Reflect::get(raw, &JsValue::from_str("transactionSync"))
            .ok()
            .and_then(|f| f.dyn_into::<js_sys::Function>().ok())
            .ok_or_else(|| StoreError::Sql("storage.transactionSync is not available".into()))?;
        let sql = self.storage.sql();
        let out: Rc<RefCell<Option<BatchResult>>> = Rc::default();
        let out_in = Rc::clone(&out);
        let callback = Closure::once_into_js(move || -> Result<JsValue, JsValue> {
            let mut results = Vec::with_capacity(stmts.len());
            for stmt in &stmts {
                match run(&sql, stmt) {
                    Ok(rows) => results.push(rows),
                    Err(e) => {
                        let message = e.to_string();
                        *out_in.borrow_mut() = Some(Err(e));
                        // Throwing makes the runtime roll the transaction back.
                        return Err(JsValue::from_str(&message));
                    }
                }
            }
            *out_in.borrow_mut() = Some(Ok(results));
            Ok(JsValue::UNDEFINED)
        });
        let called = function.call1(raw, &callback);
        let result = out.borrow_mut().take();
        match (called, result) {
            (Ok(_), Some(Ok(rows))) => Ok(rows),
            (_, Some(Err(e))) => Err(e),
            (Err(e), _) => Err(StoreError::Sql(format!("transaction failed: {e:?}"))),
            (Ok(_), None) => Err(StoreError::Sql("transaction callback did not run".into())),
        }
    }
}

//! The workspace database schema, as an ordered list of named migrations.
//!
//! Migrations are applied in order when a workspace is opened; each is recorded by name in
//! `_migrations`, so areas can add theirs without renumbering anyone else's. A migration's
//! statements and its record are written in one transaction. Never edit an applied migration:
//! add a new one. `docs/storage.md` describes the resulting tables.

use crate::store::{Db, Stmt, StoreError};

/// One migration: a unique name and its statements (one SQL statement each).
pub struct Migration {
    /// Unique, never reused.
    pub name: &'static str,
    /// DDL statements, applied in order.
    pub statements: &'static [&'static str],
}

/// Every migration, in the order they apply.
pub const ALL: &[Migration] = &[Migration {
    name: "0001_workspace",
    statements: &[
        "CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
        "CREATE TABLE IF NOT EXISTS offer (id INTEGER PRIMARY KEY CHECK (id = 1), doc TEXT NOT NULL, updated_at INTEGER NOT NULL)",
        "CREATE TABLE IF NOT EXISTS memories (id INTEGER PRIMARY KEY AUTOINCREMENT, topic TEXT UNIQUE, note TEXT NOT NULL, created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL)",
    ],
}];

#[derive(serde::Deserialize)]
struct Applied {
    name: String,
}

/// Applies every migration not yet recorded.
pub fn apply(db: &dyn Db, now_ms: i64) -> Result<(), StoreError> {
    db.exec(
        "CREATE TABLE IF NOT EXISTS _migrations (name TEXT PRIMARY KEY, applied_at INTEGER NOT NULL)",
        vec![],
    )?;
    let applied: Vec<Applied> = db.rows("SELECT name FROM _migrations", vec![])?;
    if applied.len() == ALL.len() {
        return Ok(());
    }
    for migration in ALL {
        if applied.iter().any(|a| a.name == migration.name) {
            continue;
        }
        let mut stmts: Vec<Stmt> = migration.statements.iter().map(|sql| Stmt::new(sql, vec![])).collect();
        stmts.push(Stmt::new(
            "INSERT INTO _migrations (name, applied_at) VALUES (?, ?)",
            vec![migration.name.into(), now_ms.into()],
        ));
        db.batch(stmts)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::MemoryDb;

    #[test]
    fn applies_once_and_names_are_unique() {
        let db = MemoryDb::new();
        apply(&db, 1).unwrap();
        apply(&db, 2).unwrap();
        let n = db.query(Stmt::new("SELECT COUNT(*) FROM _migrations", vec![])).unwrap().scalar_i64();
        assert_eq!(n, Some(ALL.len() as i64));
        let mut names: Vec<&str> = ALL.iter().map(|m| m.name).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), ALL.len());
    }
}

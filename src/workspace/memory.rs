//! Notes the assistant keeps about the user and their business across conversations.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::store::{Db, Stmt, StoreError};

/// The most notes a workspace keeps.
pub const MAX_NOTES: i64 = 200;

/// One remembered note.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Memory {
    /// Its id.
    pub id: i64,
    /// Its topic, when it has one; a new note on the same topic replaces it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub topic: Option<String>,
    /// The note.
    pub note: String,
    /// Last saved (ms since the epoch).
    #[serde(alias = "updated_at")] // the column name, when read from SQL
    pub updated_at: i64,
}

/// What saving a note did.
pub enum Saved {
    /// Saved; `replaced` when it replaced the note on the same topic.
    Ok {
        /// The saved note.
        memory: Memory,
        /// Whether an older note on the topic was replaced.
        replaced: bool,
        /// Notes in the workspace now.
        total: i64,
    },
    /// The workspace is full.
    Full,
}

/// Saves a note; with a topic, it replaces the note on that topic.
pub fn save(db: &dyn Db, topic: Option<&str>, note: &str, now_ms: i64) -> Result<Saved, StoreError> {
    let total = count(db)?;
    let existing: Option<Memory> = match topic {
        Some(t) => {
            db.row("SELECT id, topic, note, updated_at FROM memories WHERE topic = ?", vec![t.into()])?
        }
        None => None,
    };
    if existing.is_none() && total >= MAX_NOTES {
        return Ok(Saved::Full);
    }
    let rows = db.batch(vec![Stmt::new(
        "INSERT INTO memories (topic, note, created_at, updated_at) VALUES (?, ?, ?, ?) \
         ON CONFLICT(topic) DO UPDATE SET note = excluded.note, updated_at = excluded.updated_at \
         RETURNING id, topic, note, updated_at",
        vec![topic.into(), note.into(), now_ms.into(), now_ms.into()],
    )])?;
    let memory = rows
        .first()
        .and_then(|r| r.first::<Memory>().transpose())
        .transpose()?
        .ok_or_else(|| StoreError::Sql("INSERT … RETURNING gave no row".into()))?;
    let replaced = existing.is_some();
    Ok(Saved::Ok { memory, replaced, total: if replaced { total } else { total + 1 } })
}

/// Deletes note `id`: the note as it was, or `None` if the workspace has no such note.
pub fn forget(db: &dyn Db, id: i64) -> Result<Option<Memory>, StoreError> {
    let rows = db.batch(vec![Stmt::new(
        "DELETE FROM memories WHERE id = ? RETURNING id, topic, note, updated_at",
        vec![id.into()],
    )])?;
    rows.first().and_then(|r| r.first::<Memory>().transpose()).transpose()
}

/// How many notes the workspace holds.
pub fn count(db: &dyn Db) -> Result<i64, StoreError> {
    Ok(db.query(Stmt::new("SELECT COUNT(*) FROM memories", vec![]))?.scalar_i64().unwrap_or(0))
}

/// The most recent notes, newest first.
pub fn recent(db: &dyn Db, limit: i64) -> Result<Vec<Memory>, StoreError> {
    db.rows(
        "SELECT id, topic, note, updated_at FROM memories ORDER BY updated_at DESC, id DESC LIMIT ?",
        vec![limit.into()],
    )
}

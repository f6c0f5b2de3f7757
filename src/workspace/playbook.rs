//! The playbook: how the emails speak — tone, angle, proof points, rules — and who signs them
//! (PRODUCT §7). Stored whole as one JSON document.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::store::{Db, Stmt, StoreError, from_document, to_document};

/// The saved playbook.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Playbook {
    /// The voice of the emails.
    pub tone: String,
    /// The problem the emails open with, and why now.
    pub angle: String,
    /// Who the emails speak to, in one line.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub persona: Option<String>,
    /// The pains of that persona the emails address.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pain_points: Vec<String>,
    /// Facts that make the pitch credible.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub proof_points: Vec<String>,
    /// Rules every email follows.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rules: Vec<String>,
    /// Likely objections and how to answer them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub objections: Vec<Objection>,
    /// The sender's name as prospects see it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sender_name: Option<String>,
    /// The sender's job title.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sender_title: Option<String>,
    /// What the prospect is asked to do.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub call_to_action: Option<String>,
}

/// An objection and its answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Objection {
    /// What the prospect says.
    pub objection: String,
    /// How to answer.
    pub answer: String,
}

#[derive(Deserialize)]
struct Row {
    doc: String,
    updated_at: i64,
}

/// The playbook and when it was saved.
pub fn load(db: &dyn Db) -> Result<Option<(Playbook, i64)>, StoreError> {
    let row: Option<Row> = db.row("SELECT doc, updated_at FROM playbook WHERE id = 1", vec![])?;
    row.map(|r| Ok((from_document(&r.doc)?, r.updated_at))).transpose()
}

/// Saves the playbook; returns whether it changed and when it was last written.
pub fn save(db: &dyn Db, playbook: &Playbook, now_ms: i64) -> Result<(bool, i64), StoreError> {
    if let Some((old, at)) = load(db)?
        && old == *playbook
    {
        return Ok((false, at));
    }
    db.batch(vec![Stmt::new(
        "INSERT INTO playbook (id, doc, updated_at) VALUES (1, ?, ?) \
         ON CONFLICT(id) DO UPDATE SET doc = excluded.doc, updated_at = excluded.updated_at",
        vec![to_document(playbook)?.into(), now_ms.into()],
    )])?;
    Ok((true, now_ms))
}

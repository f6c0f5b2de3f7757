//! The email sequence: steps with a subject, a body, the wait before each, and optional
//! variants. Approval is the user's (PRODUCT §8); it is tied to a version, so any edit
//! un-approves, and the first-email check is remembered per version too.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::store::{Db, Stmt, StoreError, from_document, to_document};

/// An alternative subject and body for a step (A/B testing).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Variant {
    /// Subject line (empty on a follow-up: sent as a reply in the same thread).
    pub subject: String,
    /// Plain-text body with `{{variables}}`.
    pub body: String,
}

/// One step.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Step {
    /// 1 for the first email.
    pub number: u32,
    /// Days after the previous step (0 for the first).
    pub wait_days: u32,
    /// Subject line (empty on a follow-up: sent as a reply in the same thread).
    pub subject: String,
    /// Plain-text body with `{{variables}}`.
    pub body: String,
    /// Alternatives to the subject and body above.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub variants: Vec<Variant>,
}

/// The saved sequence and its state.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Sequence {
    /// The steps, in order.
    pub steps: Vec<Step>,
    /// Bumped by every edit; approval names the version the user saw.
    pub version: i64,
    /// Whether the user approved this version.
    pub approved: bool,
    /// When (ms since the epoch).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub approved_at: Option<i64>,
    /// Whether the first email of this version was checked without errors.
    pub first_email_checked: bool,
    /// Last edit (ms since the epoch).
    pub updated_at: i64,
}

#[derive(Deserialize)]
struct Row {
    doc: String,
    version: i64,
    approved_version: Option<i64>,
    approved_at: Option<i64>,
    checked_version: Option<i64>,
    updated_at: i64,
}

/// The sequence, if saved.
pub fn load(db: &dyn Db) -> Result<Option<Sequence>, StoreError> {
    let row: Option<Row> = db.row(
        "SELECT doc, version, approved_version, approved_at, checked_version, updated_at FROM sequence WHERE id = 1",
        vec![],
    )?;
    row.map(|r| {
        let approved = r.approved_version == Some(r.version);
        Ok(Sequence {
            steps: from_document(&r.doc)?,
            version: r.version,
            approved,
            approved_at: if approved { r.approved_at } else { None },
            first_email_checked: r.checked_version == Some(r.version),
            updated_at: r.updated_at,
        })
    })
    .transpose()
}

/// What a save did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Saved {
    /// Whether the steps changed.
    pub changed: bool,
    /// Whether the change took away an approval.
    pub unapproved: bool,
}

/// Saves the steps; an edit bumps the version, which un-approves.
pub fn save(db: &dyn Db, steps: &[Step], now_ms: i64) -> Result<(Sequence, Saved), StoreError> {
    let old = load(db)?;
    if let Some(s) = &old
        && s.steps == steps
    {
        return Ok((s.clone(), Saved { changed: false, unapproved: false }));
    }
    db.batch(vec![Stmt::new(
        "INSERT INTO sequence (id, doc, version, updated_at) VALUES (1, ?, 1, ?) \
         ON CONFLICT(id) DO UPDATE SET doc = excluded.doc, version = sequence.version + 1, updated_at = excluded.updated_at",
        vec![to_document(&steps)?.into(), now_ms.into()],
    )])?;
    let saved = load(db)?.ok_or_else(|| StoreError::Sql("sequence vanished after saving".into()))?;
    Ok((saved, Saved { changed: true, unapproved: old.is_some_and(|s| s.approved) }))
}

/// Approves `version`; `false` if the sequence changed since.
pub fn approve(db: &dyn Db, version: i64, now_ms: i64) -> Result<bool, StoreError> {
    let rows = db.batch(vec![Stmt::new(
        "UPDATE sequence SET approved_version = version, approved_at = ? WHERE id = 1 AND version = ? RETURNING version",
        vec![now_ms.into(), version.into()],
    )])?;
    Ok(rows.first().is_some_and(|r| !r.rows.is_empty()))
}

/// The statement that remembers whether the first email of `version` passed its checks.
pub fn check_stmt(version: i64, passed: bool, now_ms: i64) -> Stmt {
    if passed {
        Stmt::new(
            "UPDATE sequence SET checked_version = ?, checked_at = ? WHERE id = 1 AND version = ?",
            vec![version.into(), now_ms.into(), version.into()],
        )
    } else {
        Stmt::new(
            "UPDATE sequence SET checked_version = NULL WHERE id = 1 AND version = ?",
            vec![version.into()],
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::MemoryDb;

    fn step(body: &str) -> Step {
        Step { number: 1, wait_days: 0, subject: "Hello".into(), body: body.into(), variants: vec![] }
    }

    #[test]
    fn edits_unapprove_and_approval_names_a_version() {
        let db = MemoryDb::new();
        crate::workspace::migrations::apply(&db, 1).unwrap();
        let (s, saved) = save(&db, &[step("one")], 1).unwrap();
        assert_eq!((s.version, s.approved, saved.changed), (1, false, true));
        assert!(!approve(&db, 2, 2).unwrap());
        assert!(approve(&db, 1, 2).unwrap());
        db.batch(vec![check_stmt(1, true, 3)]).unwrap();
        let s = load(&db).unwrap().unwrap();
        assert!(s.approved && s.first_email_checked);
        let (s, saved) = save(&db, &[step("one")], 4).unwrap();
        assert!(!saved.changed && s.approved, "saving the same steps keeps the approval");
        let (s, saved) = save(&db, &[step("two")], 5).unwrap();
        assert!(saved.unapproved && !s.approved && !s.first_email_checked);
        assert_eq!(s.version, 2);
    }
}

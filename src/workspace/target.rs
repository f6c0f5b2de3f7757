//! The target: the ideal customer in words, then as provider filters, then confirmed by the
//! user (PRODUCT §8). Every change bumps `version` and clears the confirmation, so whatever was
//! confirmed, counted or previewed is known to be about the target as it is now.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::leads::filters::Filters;
use crate::store::{Db, Stmt, StoreError, from_document, to_document};

/// The saved target.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Target {
    /// Who the ideal customer is, in the user's words.
    pub description: String,
    /// The provider filters, once saved.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub filters: Option<Filters>,
    /// Bumped by every change.
    pub version: i64,
    /// Whether the user confirmed this version.
    pub confirmed: bool,
    /// When it was confirmed (ms since the epoch).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub confirmed_at: Option<i64>,
    /// The last pool count of this version, if counted.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pool_count: Option<u64>,
    /// Whether a sample of this version was previewed.
    pub previewed: bool,
    /// Last change (ms since the epoch).
    pub updated_at: i64,
}

#[derive(Deserialize)]
struct Row {
    description: String,
    filters: Option<String>,
    version: i64,
    confirmed_at: Option<i64>,
    counted_version: Option<i64>,
    pool_count: Option<i64>,
    previewed_version: Option<i64>,
    updated_at: i64,
}

/// The target, if one was saved.
pub fn load(db: &dyn Db) -> Result<Option<Target>, StoreError> {
    let row: Option<Row> = db.row(
        "SELECT description, filters, version, confirmed_at, counted_version, pool_count, previewed_version, updated_at \
         FROM target WHERE id = 1",
        vec![],
    )?;
    row.map(|r| {
        let filters = r.filters.as_deref().map(from_document::<Filters>).transpose()?;
        Ok(Target {
            description: r.description,
            filters,
            version: r.version,
            confirmed: r.confirmed_at.is_some(),
            confirmed_at: r.confirmed_at,
            pool_count: if r.counted_version == Some(r.version) {
                r.pool_count.map(|n| n.max(0) as u64)
            } else {
                None
            },
            previewed: r.previewed_version == Some(r.version),
            updated_at: r.updated_at,
        })
    })
    .transpose()
}

/// What a save did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Change {
    /// Whether anything changed.
    pub changed: bool,
    /// Whether the change took away a confirmation.
    pub unconfirmed: bool,
}

/// Saves the description, keeping the filters. A change un-confirms the target.
pub fn save_description(db: &dyn Db, description: &str, now_ms: i64) -> Result<(Target, Change), StoreError> {
    let old = load(db)?;
    if let Some(t) = &old
        && t.description == description
    {
        return Ok((t.clone(), Change { changed: false, unconfirmed: false }));
    }
    db.batch(vec![Stmt::new(
        "INSERT INTO target (id, description, version, updated_at) VALUES (1, ?, 1, ?) \
         ON CONFLICT(id) DO UPDATE SET description = excluded.description, version = target.version + 1, \
         confirmed_at = NULL, updated_at = excluded.updated_at",
        vec![description.into(), now_ms.into()],
    )])?;
    let unconfirmed = old.as_ref().is_some_and(|t| t.confirmed);
    let saved = load(db)?.ok_or_else(|| StoreError::Sql("target vanished after saving".into()))?;
    Ok((saved, Change { changed: true, unconfirmed }))
}

/// Saves the filters of an existing target. A change un-confirms it.
pub fn save_filters(
    db: &dyn Db,
    filters: &Filters,
    now_ms: i64,
) -> Result<Option<(Target, Change)>, StoreError> {
    let Some(old) = load(db)? else { return Ok(None) };
    if old.filters.as_ref() == Some(filters) {
        return Ok(Some((old, Change { changed: false, unconfirmed: false })));
    }
    db.batch(vec![Stmt::new(
        "UPDATE target SET filters = ?, version = version + 1, confirmed_at = NULL, updated_at = ? WHERE id = 1",
        vec![to_document(filters)?.into(), now_ms.into()],
    )])?;
    let saved = load(db)?.ok_or_else(|| StoreError::Sql("target vanished after saving".into()))?;
    Ok(Some((saved, Change { changed: true, unconfirmed: old.confirmed })))
}

/// Confirms `version` of the target; `false` when the target changed in between.
pub fn confirm(db: &dyn Db, version: i64, now_ms: i64) -> Result<bool, StoreError> {
    let rows = db.batch(vec![Stmt::new(
        "UPDATE target SET confirmed_at = ? WHERE id = 1 AND version = ? AND filters IS NOT NULL RETURNING version",
        vec![now_ms.into(), version.into()],
    )])?;
    Ok(rows.first().is_some_and(|r| !r.rows.is_empty()))
}

/// Remembers the pool count of `version` (ignored if the target changed meanwhile).
pub fn record_count(db: &dyn Db, version: i64, count: u64, now_ms: i64) -> Result<(), StoreError> {
    db.exec(
        "UPDATE target SET counted_version = ?, pool_count = ?, counted_at = ? WHERE id = 1 AND version = ?",
        vec![version.into(), i64::try_from(count).unwrap_or(i64::MAX).into(), now_ms.into(), version.into()],
    )
}

/// The statement that remembers that a sample of `version` was previewed (for the batch that
/// also logs the access).
pub fn preview_stmt(version: i64) -> Stmt {
    Stmt::new(
        "UPDATE target SET previewed_version = ? WHERE id = 1 AND version = ?",
        vec![version.into(), version.into()],
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::MemoryDb;

    fn db() -> MemoryDb {
        let db = MemoryDb::new();
        crate::workspace::migrations::apply(&db, 1).unwrap();
        db
    }

    #[test]
    fn changes_bump_the_version_and_unconfirm() {
        let db = db();
        assert!(save_filters(&db, &Filters::default(), 1).unwrap().is_none(), "filters need a description");
        let (t, c) = save_description(&db, "CFOs at mid-size software companies", 1).unwrap();
        assert_eq!((t.version, c.changed, c.unconfirmed, t.confirmed), (1, true, false, false));
        assert!(!confirm(&db, 1, 2).unwrap(), "no filters yet");
        let f = Filters { titles: vec!["Chief Financial Officer".into()], ..Filters::default() };
        let (t, _) = save_filters(&db, &f, 3).unwrap().unwrap();
        assert_eq!(t.version, 2);
        assert!(!confirm(&db, 1, 4).unwrap(), "a stale version is not confirmed");
        assert!(confirm(&db, 2, 4).unwrap());
        record_count(&db, 2, 1234, 5).unwrap();
        db.batch(vec![preview_stmt(2)]).unwrap();
        let t = load(&db).unwrap().unwrap();
        assert!(t.confirmed && t.previewed);
        assert_eq!((t.confirmed_at, t.pool_count), (Some(4), Some(1234)));
        // The same filters again change nothing.
        let (_, c) = save_filters(&db, &f, 6).unwrap().unwrap();
        assert!(!c.changed);
        assert!(load(&db).unwrap().unwrap().confirmed);
        // New filters un-confirm and forget the count and the preview.
        let g = Filters { titles: vec!["VP of Finance".into()], ..f };
        let (t, c) = save_filters(&db, &g, 7).unwrap().unwrap();
        assert!(c.unconfirmed && !t.confirmed && !t.previewed);
        assert_eq!(t.pool_count, None);
        record_count(&db, 2, 99, 8).unwrap();
        assert_eq!(load(&db).unwrap().unwrap().pool_count, None, "a count of an older version is ignored");
        assert!(confirm(&db, 3, 9).unwrap());
        let (_, c) = save_description(&db, "VPs of finance", 10).unwrap();
        assert!(c.unconfirmed);
    }
}

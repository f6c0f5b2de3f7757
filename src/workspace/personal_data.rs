//! The personal-data access log: every time people's personal data leaves the workspace
//! towards a client (a lead preview, a rendered email for a sample lead), who asked, from
//! which client, for what, and which people (PRODUCT §7; GDPR accountability, DOMAIN §6).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::auth::Principal;
use crate::store::{Db, Stmt, StoreError};

/// One access, to be written.
pub struct Access<'a> {
    /// The tool that showed the data.
    pub tool: &'a str,
    /// Who and from which client.
    pub principal: &'a Principal,
    /// The request, to correlate with the request log.
    pub request_id: &'a str,
    /// Why, for people reading the log.
    pub purpose: &'a str,
    /// The provider ids of the people shown.
    pub person_ids: Vec<String>,
    /// Context, e.g. the filters' summary.
    pub detail: Option<String>,
}

/// The statement that records an access (so it lands with whatever else the tool writes).
pub fn record_stmt(access: &Access<'_>, now_ms: i64) -> Result<Stmt, StoreError> {
    let ids = serde_json::to_string(&access.person_ids).map_err(|e| StoreError::Document(e.to_string()))?;
    Ok(Stmt::new(
        "INSERT INTO personal_data_access (at, tool, subject, client_id, request_id, purpose, people, person_ids, detail) \
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
        vec![
            now_ms.into(),
            access.tool.into(),
            access.principal.subject.clone().into(),
            access.principal.client_id.clone().into(),
            access.request_id.into(),
            access.purpose.into(),
            i64::try_from(access.person_ids.len()).unwrap_or(i64::MAX).into(),
            ids.into(),
            access.detail.clone().into(),
        ],
    ))
}

/// A summary of the log for the workspace view.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Summary {
    /// Accesses logged.
    pub accesses: i64,
    /// People shown, counting repeats.
    pub people_shown: i64,
    /// The last access (ms since the epoch).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_at: Option<i64>,
}

/// The log's summary.
pub fn summary(db: &dyn Db) -> Result<Summary, StoreError> {
    #[derive(Deserialize)]
    struct Row {
        accesses: i64,
        people_shown: Option<i64>,
        last_at: Option<i64>,
    }
    let row: Option<Row> = db.row(
        "SELECT COUNT(*) AS accesses, SUM(people) AS people_shown, MAX(at) AS last_at FROM personal_data_access",
        vec![],
    )?;
    Ok(row.map_or(Summary { accesses: 0, people_shown: 0, last_at: None }, |r| Summary {
        accesses: r.accesses,
        people_shown: r.people_shown.unwrap_or(0),
        last_at: r.last_at,
    }))
}

/// One logged access, as read back.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct Entry {
    /// When.
    pub at: i64,
    /// Which tool.
    pub tool: String,
    /// Who.
    pub subject: String,
    /// From which client.
    pub client_id: String,
    /// Which request.
    pub request_id: String,
    /// Why.
    pub purpose: String,
    /// How many people.
    pub people: i64,
    /// Their provider ids (JSON array).
    pub person_ids: String,
}

/// The most recent accesses, newest first.
pub fn recent(db: &dyn Db, limit: i64) -> Result<Vec<Entry>, StoreError> {
    db.rows(
        "SELECT at, tool, subject, client_id, request_id, purpose, people, person_ids FROM personal_data_access \
         ORDER BY id DESC LIMIT ?",
        vec![limit.into()],
    )
}

//! The workspace's suppression list: addresses and domains that must never be imported or
//! emailed (PRODUCT §8, DOMAIN §6.3). Imports skip them; the sending side adds unsubscribes,
//! bounces and complaints here and checks it before every send.

use serde::{Deserialize, Serialize};

use crate::store::{Db, Stmt, StoreError};

/// Why an entry is on the list.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Reason {
    /// The person unsubscribed (one-click link or a "stop" reply).
    Unsubscribe,
    /// The address bounced permanently.
    Bounce,
    /// A spam complaint.
    Complaint,
    /// A GDPR objection (Art. 21) or "remove me".
    Objection,
    /// Added by the user (customers, partners, competitors).
    Manual,
}

impl Reason {
    /// The stored value.
    pub fn as_str(self) -> &'static str {
        match self {
            Reason::Unsubscribe => "unsubscribe",
            Reason::Bounce => "bounce",
            Reason::Complaint => "complaint",
            Reason::Objection => "objection",
            Reason::Manual => "manual",
        }
    }
}

/// A normalised entry: a lower-case address, or a bare domain (which covers every address at
/// it). `None` when `value` is neither.
pub fn normalize(value: &str) -> Option<(String, &'static str)> {
    let v = value.trim().to_ascii_lowercase();
    if let Some((local, domain)) = v.split_once('@') {
        let domain = crate::leads::filters::normalize_domain(domain)?;
        (!local.is_empty() && !local.contains(char::is_whitespace))
            .then(|| (format!("{local}@{domain}"), "email"))
    } else {
        crate::leads::filters::normalize_domain(&v).map(|d| (d, "domain"))
    }
}

/// Adds an address or a domain. Returns whether it was new; `None` if `value` is neither.
pub fn add(
    db: &dyn Db,
    value: &str,
    reason: Reason,
    source: &str,
    now_ms: i64,
) -> Result<Option<bool>, StoreError> {
    let Some((value, kind)) = normalize(value) else { return Ok(None) };
    let rows = db.batch(vec![Stmt::new(
        "INSERT INTO suppression (value, kind, reason, source, created_at) VALUES (?, ?, ?, ?, ?) \
         ON CONFLICT(value) DO NOTHING RETURNING value",
        vec![value.into(), kind.into(), reason.as_str().into(), source.into(), now_ms.into()],
    )])?;
    Ok(Some(rows.first().is_some_and(|r| !r.rows.is_empty())))
}

/// The statement that adds an entry, for callers that write it together with other changes.
pub fn add_stmt(value: &str, reason: Reason, source: &str, now_ms: i64) -> Option<Stmt> {
    let (value, kind) = normalize(value)?;
    Some(Stmt::new(
        "INSERT INTO suppression (value, kind, reason, source, created_at) VALUES (?, ?, ?, ?, ?) \
         ON CONFLICT(value) DO NOTHING",
        vec![value.into(), kind.into(), reason.as_str().into(), source.into(), now_ms.into()],
    ))
}

/// Whether an address may not be emailed (itself or its domain is listed).
pub fn is_suppressed(db: &dyn Db, email: &str) -> Result<bool, StoreError> {
    Ok(!suppressed_among(db, &[email.to_owned()])?.is_empty())
}

#[derive(Deserialize)]
struct Hit {
    email: String,
}

/// The addresses of `emails` (lower-cased) that are suppressed, in one query. A list: few are,
/// and its code is smaller than a set's (docs/scale.md, "Size").
pub fn suppressed_among(db: &dyn Db, emails: &[String]) -> Result<Vec<String>, StoreError> {
    if emails.is_empty() {
        return Ok(Vec::new());
    }
    let list: Vec<String> = emails.iter().map(|e| e.trim().to_ascii_lowercase()).collect();
    let json = serde_json::to_string(&list).map_err(|e| StoreError::Document(e.to_string()))?;
    let hits: Vec<Hit> = db.rows(
        "SELECT j.value AS email FROM json_each(?) j WHERE EXISTS (SELECT 1 FROM suppression s \
         WHERE s.value = j.value OR (s.kind = 'domain' AND s.value = substr(j.value, instr(j.value, '@') + 1)))",
        vec![json.into()],
    )?;
    Ok(hits.into_iter().map(|h| h.email).collect())
}

/// How many entries the list holds.
pub fn count(db: &dyn Db) -> Result<i64, StoreError> {
    Ok(db.query(Stmt::new("SELECT COUNT(*) FROM suppression", vec![]))?.scalar_i64().unwrap_or(0))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::MemoryDb;

    #[test]
    fn addresses_and_domains_are_suppressed() {
        let db = MemoryDb::new();
        crate::workspace::migrations::apply(&db, 1).unwrap();
        assert_eq!(add(&db, " Jane@Acme.com ", Reason::Unsubscribe, "link", 1).unwrap(), Some(true));
        assert_eq!(add(&db, "jane@acme.com", Reason::Bounce, "platform", 2).unwrap(), Some(false));
        assert_eq!(add(&db, "https://www.competitor.io/", Reason::Manual, "user", 3).unwrap(), Some(true));
        assert_eq!(add(&db, "not an address", Reason::Manual, "user", 3).unwrap(), None);
        assert!(is_suppressed(&db, "JANE@acme.com").unwrap());
        assert!(!is_suppressed(&db, "john@acme.com").unwrap());
        let mut hits =
            suppressed_among(&db, &["a@competitor.io".into(), "b@ok.com".into(), "jane@acme.com".into()])
                .unwrap();
        hits.sort();
        assert_eq!(hits, ["a@competitor.io", "jane@acme.com"]);
        assert_eq!(count(&db).unwrap(), 2);
    }
}

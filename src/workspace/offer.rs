//! The offer: what the user sells (journey step 1). Stored whole as one JSON document.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::store::{Db, Stmt, StoreError, from_document, to_document};

/// The saved offer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Offer {
    /// The product or service name.
    pub product: String,
    /// What it is and what it does.
    pub description: String,
    /// The outcome a customer gets.
    pub value_proposition: String,
    /// The selling company.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub company_name: Option<String>,
    /// The company's website.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub website: Option<String>,
    /// Pricing in a sentence.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pricing: Option<String>,
    /// Facts that make the pitch credible (customers, results, awards).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub proof_points: Vec<String>,
    /// What a prospect is asked to do.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub call_to_action: Option<String>,
    /// The sender's postal address, required in every email's footer (CAN-SPAM).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub postal_address: Option<String>,
}

#[derive(Deserialize)]
struct Row {
    doc: String,
    updated_at: i64,
}

/// The saved offer and when it was last saved.
pub fn load(db: &dyn Db) -> Result<Option<(Offer, i64)>, StoreError> {
    let row: Option<Row> = db.row("SELECT doc, updated_at FROM offer WHERE id = 1", vec![])?;
    row.map(|r| Ok((from_document(&r.doc)?, r.updated_at))).transpose()
}

/// Saves the offer, replacing any previous one. Returns whether anything changed and when the
/// saved offer was last written.
pub fn save(db: &dyn Db, offer: &Offer, now_ms: i64) -> Result<(bool, i64), StoreError> {
    if let Some((old, updated_at)) = load(db)?
        && old == *offer
    {
        return Ok((false, updated_at));
    }
    db.batch(vec![Stmt::new(
        "INSERT INTO offer (id, doc, updated_at) VALUES (1, ?, ?) \
         ON CONFLICT(id) DO UPDATE SET doc = excluded.doc, updated_at = excluded.updated_at",
        vec![to_document(offer)?.into(), now_ms.into()],
    )])?;
    Ok((true, now_ms))
}

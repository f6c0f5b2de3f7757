//! Where the planning half of the journey stands (PRODUCT §8: target, lead pool, playbook and
//! sequence, first email, leads), read from the workspace's real state for
//! `get_workspace_context`.

use schemars::JsonSchema;
use serde::Serialize;

use super::journey::{Progress, Step};
use super::{leads, personal_data, playbook, sequence, target};
use crate::store::{Db, StoreError};

/// The sequence at a glance.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SequenceSummary {
    /// Its version (approval names it).
    pub version: i64,
    /// How many steps.
    pub steps: usize,
    /// Whether the user approved this version.
    pub approved: bool,
    /// Whether its first email was checked without errors.
    pub first_email_checked: bool,
    /// Last edit (ms since the epoch).
    pub updated_at: i64,
}

/// The planning state the workspace view shows.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Planning {
    /// The target, once described.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub target: Option<target::Target>,
    /// The playbook, once saved.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub playbook: Option<playbook::Playbook>,
    /// The sequence, once saved.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sequence: Option<SequenceSummary>,
    /// Imported leads, recent imports and the suppression list.
    pub leads: leads::Summary,
    /// The personal-data access log, summed up.
    pub personal_data_access: personal_data::Summary,
}

/// Reads the planning state and records its steps in `progress`.
pub fn load(db: &dyn Db, progress: &mut Progress) -> Result<Planning, StoreError> {
    let t = target::load(db)?;
    let pb = playbook::load(db)?.map(|(p, _)| p);
    let seq = sequence::load(db)?;
    let leads = leads::summary(db)?;

    match &t {
        None => progress.next_within(
            Step::Target,
            "save_target",
            "Ask the user who their ideal customer is and save it in words; the filters come next.",
        ),
        Some(t) if t.filters.is_none() => progress.next_within(
            Step::Target,
            "save_target_filters",
            "The target is described in words; turn it into the lead provider's filters.",
        ),
        Some(t) if t.confirmed => progress.done(Step::Target),
        Some(t) if t.pool_count.is_none() => progress.next_within(
            Step::Target,
            "estimate_lead_pool",
            "Count the people the filters match before the user confirms the target.",
        ),
        Some(t) if t.pool_count == Some(0) => progress.next_within(
            Step::Target,
            "save_target_filters",
            "Nobody matches the filters: widen them, one change at a time.",
        ),
        Some(t) if !t.previewed => progress.next_within(
            Step::Target,
            "preview_lead_sample",
            "Show the user a sample of the matching people before they confirm the target.",
        ),
        Some(_) => progress.next_within(
            Step::Target,
            "confirm_target",
            "The user has seen the count and the sample; confirm the target once they agree.",
        ),
    }
    if let Some(t) = &t {
        match (t.pool_count, t.previewed) {
            (Some(n), true) if n > 0 && t.confirmed => progress.done(Step::LeadPool),
            (None, _) => progress.next_within(
                Step::LeadPool,
                "estimate_lead_pool",
                "Count the people the confirmed target matches.",
            ),
            (Some(0), _) => progress.next_within(
                Step::LeadPool,
                "save_target_filters",
                "Nobody matches the target: widen the filters.",
            ),
            _ => progress.next_within(
                Step::LeadPool,
                "preview_lead_sample",
                "Look at a sample of the matching people with the user.",
            ),
        }
    }
    match (&pb, &seq) {
        (None, _) => progress.next_within(
            Step::Sequence,
            "save_playbook",
            "Agree with the user on how the emails speak (tone, angle, proof, rules, who signs).",
        ),
        (Some(_), None) => progress.next_within(
            Step::Sequence,
            "save_sequence",
            "Write the emails (3–4 steps, 3 days apart) following the playbook.",
        ),
        (Some(_), Some(s)) if s.approved => progress.done(Step::Sequence),
        (Some(_), Some(s)) => progress.next_within(
            Step::Sequence,
            "approve_sequence",
            format!(
                "Show the user every step of version {} and ask whether they approve; call approve_sequence only \
                 after they say yes.",
                s.version
            ),
        ),
    }
    match &seq {
        Some(s) if s.first_email_checked => progress.done(Step::FirstEmail),
        Some(_) => progress.next_within(
            Step::FirstEmail,
            "check_first_email",
            "Render the first email for a real lead and fix what the checks find.",
        ),
        None => {}
    }
    if leads.total > 0 {
        progress.done(Step::Leads);
    } else if t.as_ref().is_some_and(|t| t.confirmed) {
        progress.next_within(
            Step::Leads,
            "import_leads",
            "Importing spends provider credits, so it is an approval the user decides: ask for it with import_leads \
             when they are ready, and let them decide.",
        );
    }
    Ok(Planning {
        target: t,
        playbook: pb,
        sequence: seq.map(|s| SequenceSummary {
            version: s.version,
            steps: s.steps.len(),
            approved: s.approved,
            first_email_checked: s.first_email_checked,
            updated_at: s.updated_at,
        }),
        leads,
        personal_data_access: personal_data::summary(db)?,
    })
}

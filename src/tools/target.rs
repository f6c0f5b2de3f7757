//! Target tools: the ideal customer in words (`save_target`), as provider filters
//! (`save_target_filters`), and confirmed by the user (`confirm_target`) (PRODUCT §7, §8).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::registry::{Access, Hints, Refusal, Reply, Tool, ToolCx};
use super::workspace::NoArguments;
use crate::leads::filters::{FilterArgs, Filters};
use crate::workspace::offer;
use crate::workspace::target::{self, Target};

/// The target, as the target tools return it.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(tag = "kind", rename = "target", rename_all = "camelCase")]
pub struct TargetView {
    /// The target as saved.
    #[serde(flatten)]
    pub target: Target,
    /// Whether this call changed it.
    pub changed: bool,
    /// Whether this call took away the user's confirmation (the target changed after it).
    pub unconfirmed: bool,
}

/// The refusal when no offer is saved yet.
pub fn need_offer(cx: &ToolCx<'_>) -> Result<offer::Offer, Refusal> {
    offer::load(cx.db)?.map(|(o, _)| o).ok_or_else(|| {
        Refusal::guidance(
            "No offer yet: the target and the emails are built from what the user sells. Ask the user what they \
             sell and call save_offer first.",
        )
    })
}

/// The refusal when the target's filters are missing.
pub fn need_filters(t: Option<Target>) -> Result<(Target, Filters), Refusal> {
    match t {
        None => Err(Refusal::guidance(
            "No target yet. Ask the user who their ideal customer is and call save_target with it in words, then \
             save_target_filters with the provider filters.",
        )),
        Some(t) => match t.filters.clone() {
            Some(f) => Ok((t, f)),
            None => Err(Refusal::guidance(
                "The target is only described in words so far. Turn it into provider filters with \
                 save_target_filters (countries, titles, seniorities, departments, industries, company sizes, \
                 keywords, exclusions) first.",
            )),
        },
    }
}

fn unconfirmed_note(unconfirmed: bool) -> &'static str {
    if unconfirmed {
        " This change took back the user's confirmation: show them the new target and confirm it again with \
         confirm_target once they agree."
    } else {
        ""
    }
}

// ---- save_target -------------------------------------------------------------------------

/// `save_target`: the ideal customer in words.
pub struct SaveTarget;

/// The ideal customer in words.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SaveTargetInput {
    /// Who the ideal customer is, in the user's words: the role that buys, the kind and size of
    /// company, where, and why they need the offer (e.g. "CFOs and finance directors at UK
    /// software companies of 50–500 people who still close the books in spreadsheets").
    #[schemars(length(min = 1, max = 2000))]
    pub description: String,
}

impl Tool for SaveTarget {
    type Input = SaveTargetInput;
    type Output = TargetView;
    const NAME: &'static str = "save_target";
    const TITLE: &'static str = "Save the target in words";
    const DESCRIPTION: &'static str = "Saves who the user's ideal customer is, in their words (role, kind and \
        size of company, geography, why they need the offer). Needs the offer first. Next, turn it into provider \
        filters with save_target_filters. Saving a different description un-confirms a confirmed target. Returns \
        the target.";
    const ACCESS: Access = Access::Act;
    const HINTS: Hints = Hints { idempotent: true, open_world: false };

    async fn call(&self, cx: &ToolCx<'_>, input: SaveTargetInput) -> Result<Reply<TargetView>, Refusal> {
        need_offer(cx)?;
        let description = input.description.trim();
        if description.is_empty() {
            return Err(Refusal::InvalidArguments("`description` must not be blank".into()));
        }
        let (saved, change) = target::save_description(cx.db, description, cx.now_ms)?;
        let next = if saved.filters.is_some() {
            "The saved filters were kept: check they still fit (save_target_filters to change them), then count \
             the pool with estimate_lead_pool."
        } else {
            "Next: turn it into provider filters with save_target_filters (countries, titles, seniorities, \
             departments, industries, company sizes, keywords, exclusions)."
        };
        let text = format!(
            "{} the target in words. {next}{}",
            if change.changed { "Saved" } else { "No change to" },
            unconfirmed_note(change.unconfirmed)
        );
        Ok(Reply::new(
            text,
            TargetView { target: saved, changed: change.changed, unconfirmed: change.unconfirmed },
        ))
    }
}

// ---- save_target_filters -----------------------------------------------------------------

/// `save_target_filters`: the target as the lead provider's filters.
pub struct SaveTargetFilters;

impl Tool for SaveTargetFilters {
    type Input = FilterArgs;
    type Output = TargetView;
    const NAME: &'static str = "save_target_filters";
    const TITLE: &'static str = "Save the target as filters";
    const DESCRIPTION: &'static str = "Saves the target as the lead provider's structured filters: countries, \
        job titles, seniorities, departments, industries, company sizes, company keywords, and exclusions \
        (titles, industries, company domains such as existing customers or the user's own). Values are checked \
        against the provider's vocabularies; an unknown value is refused with the closest known ones. Needs the \
        target in words first (save_target). Replaces all filters; a change un-confirms the target. Next: \
        estimate_lead_pool and preview_lead_sample.";
    const ACCESS: Access = Access::Act;
    const HINTS: Hints = Hints { idempotent: true, open_world: false };

    async fn call(&self, cx: &ToolCx<'_>, input: FilterArgs) -> Result<Reply<TargetView>, Refusal> {
        need_offer(cx)?;
        if target::load(cx.db)?.is_none() {
            return Err(Refusal::guidance(
                "No target yet. Ask the user who their ideal customer is and save it in words with save_target \
                 first; then save these filters.",
            ));
        }
        let provider = crate::leads::provider(cx.config, cx.outbound);
        let filters = provider.vocabulary().validate(&input).map_err(|problems| {
            Refusal::guidance(format!(
                "Nothing was saved: some filters are not values the lead provider ({}) knows.\n- {}\nFix them and \
                 call save_target_filters again.",
                provider.name(),
                problems.join("\n- ")
            ))
        })?;
        let Some((saved, change)) = target::save_filters(cx.db, &filters, cx.now_ms)? else {
            return Err(Refusal::Internal("target vanished while saving filters".into()));
        };
        let text = format!(
            "{} the target filters: {}. Next: count the matching people with estimate_lead_pool and look at a \
             sample with preview_lead_sample; show the user, and when they agree, call confirm_target.{}",
            if change.changed { "Saved" } else { "No change to" },
            filters.summary(),
            unconfirmed_note(change.unconfirmed)
        );
        Ok(Reply::new(
            text,
            TargetView { target: saved, changed: change.changed, unconfirmed: change.unconfirmed },
        ))
    }
}

// ---- confirm_target ----------------------------------------------------------------------

/// `confirm_target`: the user agrees with the target.
pub struct ConfirmTarget;

impl Tool for ConfirmTarget {
    type Input = NoArguments;
    type Output = TargetView;
    const NAME: &'static str = "confirm_target";
    const TITLE: &'static str = "Confirm the target";
    const DESCRIPTION: &'static str = "Records that the user agrees with the target as it is saved now (words \
        and filters), which the lead steps (import_leads) require. Call it only after showing the user the \
        filters, the pool count and a sample, and hearing them agree; never on your own. Changing the target \
        later takes the confirmation back. Returns the target.";
    const ACCESS: Access = Access::Act;
    const HINTS: Hints = Hints { idempotent: true, open_world: false };

    async fn call(&self, cx: &ToolCx<'_>, _: NoArguments) -> Result<Reply<TargetView>, Refusal> {
        let (t, _) = need_filters(target::load(cx.db)?)?;
        if t.pool_count == Some(0) {
            return Err(Refusal::guidance(
                "The target matches nobody (the last count of these filters was 0), so there is nothing to \
                 confirm. Widen it with save_target_filters (fewer or broader values) and count again.",
            ));
        }
        if t.confirmed {
            return Ok(Reply::new(
                format!("The target was already confirmed; nothing changed.{}", after_target(cx)?),
                TargetView { target: t, changed: false, unconfirmed: false },
            ));
        }
        if !target::confirm(cx.db, t.version, cx.now_ms)? {
            return Err(Refusal::guidance(
                "The target changed while confirming; show the user the current one and confirm again.",
            ));
        }
        let saved = target::load(cx.db)?.ok_or_else(|| Refusal::Internal("target vanished".into()))?;
        let mut text = String::from("Confirmed the target.");
        match saved.pool_count {
            Some(n) => text.push_str(&format!(" {} people match it.", crate::plans::group_thousands(n))),
            None => text.push_str(" It was not counted yet: estimate_lead_pool shows how many people match."),
        }
        text.push_str(after_target(cx)?);
        Ok(Reply::new(text, TargetView { target: saved, changed: true, unconfirmed: false }))
    }
}

/// What follows a confirmed target: the playbook and the emails, unless the user already approved
/// them (second journey walk: both tools sent the user back to steps done).
pub(super) fn after_target(cx: &ToolCx<'_>) -> Result<&'static str, Refusal> {
    Ok(if crate::workspace::sequence::load(cx.db)?.is_some_and(|q| q.approved) {
        " The emails are approved already: get_workspace_context gives the next step."
    } else {
        " Next: write the playbook (save_playbook) and the emails (save_sequence)."
    })
}

//! Questions for the user (PRODUCT §5, seed 001 "Questions and answers").
//!
//! A tool that needs the user's decision answers `kind: "choice"`: a question, why it is asked,
//! the choices, whether the user may answer in their own words, the arguments to call the tool
//! with again, and the answers given so far. Its `card` is a content hash of the question, its
//! choices and the state they depend on, so an answer counts only for the exact card it was
//! given to: when anything the question shows changes (a price, the stock of warmed domains,
//! the ready date), the card changes, old answers no longer match, and the tool asks again.
//! Answering never sets up, reserves or bills anything.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::workspace::approvals::canonical_json;

/// The longest answer kept.
pub const MAX_ANSWER: usize = 500;

/// One answer, given by the user to one card.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Answer {
    /// The card the answer was given to (the `card` of the `choice` result).
    #[schemars(length(min = 1, max = 64))]
    pub card: String,
    /// The user's answer: the id of the choice they picked, or their own words.
    #[schemars(length(min = 1, max = 500))]
    pub answer: String,
}

/// One choice.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Item {
    /// What the answer carries when the user picks it.
    pub id: String,
    /// A few words.
    pub label: String,
    /// What it means for the user: timing, cost, what they get.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
}

impl Item {
    /// A choice.
    pub fn new(id: impl Into<String>, label: impl Into<String>, description: Option<String>) -> Self {
        Item { id: id.into(), label: label.into(), description }
    }
}

/// A question, before it is put to the user.
#[derive(Debug, Clone, PartialEq)]
pub struct Question {
    /// The question.
    pub question: String,
    /// Why it is asked and what the answer decides.
    pub reason: String,
    /// The choices.
    pub choices: Vec<Item>,
    /// Whether the user may answer in their own words.
    pub allow_free_text: bool,
    /// The state the question and its choices depend on (counts, prices, dates, stock), part of
    /// the card's hash.
    pub state: Value,
}

/// The `choice` result (seed 001).
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Choice {
    /// The tool to call again with the answer.
    pub tool: String,
    /// The arguments to call it with (besides `answers`).
    pub arguments: Value,
    /// This question's id: answers name it.
    pub card: String,
    /// The question for the user.
    pub question: String,
    /// Why it is asked; nothing is set up, reserved or billed by answering.
    pub reason: String,
    /// The choices.
    pub choices: Vec<Item>,
    /// Whether the user may answer in their own words.
    pub allow_free_text: bool,
    /// The answers given so far; call the tool again with these plus the new one.
    pub answers: Vec<Answer>,
}

/// What an answer picked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Picked {
    /// One of the choices, by id.
    Choice(String),
    /// The user's own words.
    FreeText(String),
}

impl Question {
    /// The card id: 16 hex digits of SHA-256 over the tool, the question, the reason, the
    /// choices, whether free text is allowed and the state, as canonical JSON.
    pub fn card(&self, tool: &str) -> String {
        let doc = json!({
            "tool": tool,
            "question": self.question,
            "reason": self.reason,
            "choices": self.choices,
            "allowFreeText": self.allow_free_text,
            "state": self.state,
        });
        crate::ids::sha256_hex(canonical_json(&doc).as_bytes())[..16].to_owned()
    }

    /// The answer given to this very card, if any (the last one, when the user changed their
    /// mind), read as a choice or as free text. Answers to other cards do not count.
    pub fn answered(&self, tool: &str, answers: &[Answer]) -> Option<Picked> {
        let card = self.card(tool);
        let answer =
            answers.iter().rev().find(|a| crate::ids::secret_eq(a.card.as_bytes(), card.as_bytes()))?;
        self.interpret(&answer.answer)
    }

    /// Reads an answer: a choice's id or label (ignoring case and spacing), else the user's own
    /// words when allowed.
    pub fn interpret(&self, answer: &str) -> Option<Picked> {
        let norm = |s: &str| s.split_whitespace().collect::<Vec<_>>().join(" ").to_lowercase();
        let a = norm(answer.trim().trim_matches(['`', '"', '\'']));
        if a.is_empty() {
            return None;
        }
        if let Some(c) = self.choices.iter().find(|c| norm(&c.id) == a || norm(&c.label) == a) {
            return Some(Picked::Choice(c.id.clone()));
        }
        self.allow_free_text.then(|| Picked::FreeText(answer.trim().to_owned()))
    }

    /// The `choice` result for this question.
    pub fn to_choice(&self, tool: &str, arguments: Value, answers: Vec<Answer>) -> Choice {
        Choice {
            tool: tool.to_owned(),
            arguments,
            card: self.card(tool),
            question: self.question.clone(),
            reason: self.reason.clone(),
            choices: self.choices.clone(),
            allow_free_text: self.allow_free_text,
            answers,
        }
    }
}

/// The question put again after an answer that could not be used (`why`, said after the
/// reason). Its card stays the one answered, so the user's next answer to it counts: the last
/// answer to a card is the one read. A card changed by the note would find the unusable answer
/// first, forever (journey finding: a re-asked question could never be answered).
pub fn again(mut c: Choice, why: Option<String>) -> Choice {
    if let Some(why) = why {
        c.reason = format!("{} {why}", c.reason);
    }
    c
}

/// Whether some answers were given to cards that are no longer the question (so the text can
/// say the question changed).
pub fn has_stale(card: &str, answers: &[Answer]) -> bool {
    answers.iter().any(|a| a.card != card)
}

/// The Markdown for the model (seed 001's example): the question, the choices, and the
/// instruction to put it to the user and wait, then call again with the answer appended.
/// `note` is said first (why the question is asked again, what is settled already).
pub fn text(c: &Choice, note: Option<&str>) -> String {
    let mut t = String::new();
    if let Some(note) = note {
        t.push_str(note);
        t.push_str("\n\n");
    }
    t.push_str(&format!("**Question for the user:** {}\n_{}_\n\n", c.question, c.reason));
    for choice in &c.choices {
        match &choice.description {
            Some(d) => t.push_str(&format!("- `{}` — {} ({d})\n", choice.id, choice.label)),
            None => t.push_str(&format!("- `{}` — {}\n", choice.id, choice.label)),
        }
    }
    if c.allow_free_text {
        t.push_str("- or an answer in their own words\n");
    }
    let mut answers = c.answers.clone();
    answers.push(Answer { card: c.card.clone(), answer: "<their answer>".into() });
    let answers = serde_json::to_string(&answers).unwrap_or_default();
    let arguments = if c.arguments.as_object().is_some_and(|o| o.is_empty()) {
        "the same arguments".to_owned()
    } else {
        format!("the arguments {}", c.arguments)
    };
    t.push_str(&format!(
        "\nPut this to the user and wait for THEIR answer — never pick for them. Then call {} again with \
         {arguments} and answers: {answers}. The answer counts only for this card; if the question \
         changes meanwhile, you will be asked again. Answering sets up, reserves or bills nothing.",
        c.tool
    ));
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    fn question(price: i64) -> Question {
        Question {
            question: "Choose your sending addresses".into(),
            reason:
                "This decides what gets set up for you. Nothing is set up, reserved or billed by this answer."
                    .into(),
            choices: vec![
                Item::new("already_warmed", "Start sooner", Some("Ready now".into())),
                Item::new("own_names", "Send under my brand", None),
            ],
            allow_free_text: true,
            state: json!({ "price": price }),
        }
    }

    #[test]
    fn cards_hash_the_question_and_its_state() {
        let q = question(1000);
        let card = q.card("choose_sending_source");
        assert_eq!(card.len(), 16);
        assert_eq!(card, question(1000).card("choose_sending_source"), "stable");
        assert_ne!(card, question(1200).card("choose_sending_source"), "the state is part of it");
        assert_ne!(card, q.card("propose_domains"), "the tool is part of it");
        let mut reordered = question(1000);
        reordered.choices.reverse();
        assert_ne!(card, reordered.card("choose_sending_source"), "the choices are part of it");
    }

    #[test]
    fn answers_count_only_for_their_card() {
        let q = question(1000);
        let tool = "choose_sending_source";
        let card = q.card(tool);
        let ans = |card: &str, a: &str| Answer { card: card.into(), answer: a.into() };
        assert_eq!(q.answered(tool, &[]), None);
        assert_eq!(q.answered(tool, &[ans("0123456789abcdef", "own_names")]), None, "another card");
        assert_eq!(q.answered(tool, &[ans(&card, "own_names")]), Some(Picked::Choice("own_names".into())));
        assert_eq!(
            q.answered(tool, &[ans(&card, " START  sooner ")]),
            Some(Picked::Choice("already_warmed".into()))
        );
        assert_eq!(
            q.answered(tool, &[ans(&card, "own_names"), ans(&card, "already_warmed")]),
            Some(Picked::Choice("already_warmed".into())),
            "the last answer wins"
        );
        assert_eq!(
            q.answered(tool, &[ans(&card, "my own words")]),
            Some(Picked::FreeText("my own words".into()))
        );
        let strict = Question { allow_free_text: false, ..question(1000) };
        assert_eq!(strict.answered(tool, &[ans(&strict.card(tool), "my own words")]), None);
        // The answer to the old question does not count once its state changed.
        let changed = question(1200);
        assert_eq!(changed.answered(tool, &[ans(&card, "own_names")]), None);
        assert!(has_stale(&changed.card(tool), &[ans(&card, "own_names")]));
    }

    #[test]
    fn the_text_tells_the_model_to_ask_and_wait() {
        let c = question(1000).to_choice("choose_sending_source", json!({}), Vec::new());
        let t = text(&c, None);
        assert!(t.starts_with("**Question for the user:** Choose your sending addresses"));
        assert!(t.contains("- `already_warmed` — Start sooner (Ready now)"));
        assert!(t.contains("never pick for them"));
        assert!(t.contains(&format!("[{{\"card\":\"{}\",\"answer\":\"<their answer>\"}}]", c.card)));
        let v = serde_json::to_value(&c).unwrap();
        assert_eq!(v["allowFreeText"], true);
        assert_eq!(v["choices"][1].get("description"), None);
    }
}

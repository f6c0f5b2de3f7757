//! The checks `check_first_email` runs on a rendered first email: variables, subject, length,
//! links, spam-trigger words, formatting, personalisation and the compliance footer. Every
//! check reports, passing or not, and every problem says how to fix it (DOMAIN §3.5, §3.7,
//! §6.3).

use schemars::JsonSchema;
use serde::Serialize;

use super::render::{Recipient, Rendered, links};
use super::template::Var;

/// How a check went.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// Fine.
    Pass,
    /// Worth knowing; no change needed.
    Info,
    /// Likely to cost replies or deliverability; fix if you can.
    Warn,
    /// Must be fixed before sending.
    Fail,
}

/// One check's result.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Finding {
    /// Which check: `variables`, `subject`, `length`, `links`, `spam_words`, `formatting`,
    /// `personalisation`, `compliance_footer`, `gdpr_notice`.
    pub id: &'static str,
    /// What it checks, for people.
    pub label: &'static str,
    /// How it went.
    pub status: Status,
    /// What was found.
    pub detail: String,
    /// How to fix it, when something needs fixing.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fix: Option<String>,
}

fn label(id: &str) -> &'static str {
    match id {
        "variables" => "Every variable filled",
        "subject" => "Subject line",
        "length" => "Length",
        "links" => "Links",
        "spam_words" => "No spam-trigger words",
        "formatting" => "Calm formatting",
        "personalisation" => "Personalisation",
        "compliance_footer" => "Postal address and one-click unsubscribe",
        _ => "GDPR notice",
    }
}

fn finding(id: &'static str, status: Status, detail: impl Into<String>, fix: Option<String>) -> Finding {
    Finding { id, label: label(id), status, detail: detail.into(), fix }
}

/// Words and phrases spam filters and readers distrust in cold email.
const SPAM_TRIGGERS: &[&str] = &[
    "100% free",
    "act now",
    "amazing offer",
    "apply now",
    "best price",
    "buy now",
    "call now",
    "cash",
    "click here",
    "congratulations",
    "dear friend",
    "don't delete",
    "double your",
    "earn money",
    "exclusive deal",
    "free",
    "guarantee",
    "guaranteed",
    "incredible deal",
    "limited time",
    "lowest price",
    "make money",
    "no cost",
    "no obligation",
    "once in a lifetime",
    "order now",
    "risk-free",
    "risk free",
    "special promotion",
    "this isn't spam",
    "urgent",
    "winner",
    "you have been selected",
    "$$$",
];

/// Link shorteners hide the destination, which filters punish.
const SHORTENERS: &[&str] =
    &["bit.ly", "tinyurl.com", "t.co", "goo.gl", "ow.ly", "is.gd", "buff.ly", "rebrand.ly", "cutt.ly"];

fn words(text: &str) -> usize {
    text.split_whitespace().filter(|w| w.chars().any(char::is_alphanumeric)).count()
}

fn contains_phrase(haystack: &str, phrase: &str) -> bool {
    // Whole words only: "free" must not match "freedom".
    let boundary = |c: Option<char>| c.is_none_or(|c| !c.is_alphanumeric());
    let mut start = 0;
    while let Some(i) = haystack[start..].find(phrase) {
        let at = start + i;
        let before = haystack[..at].chars().next_back();
        let after = haystack[at + phrase.len()..].chars().next();
        if boundary(before) && boundary(after) {
            return true;
        }
        start = at + phrase.len();
    }
    false
}

/// Runs every check on the first email.
pub fn check_first_email(r: &Rendered, to: &Recipient, sender_named: bool) -> Vec<Finding> {
    let mut out = Vec::new();

    // Variables.
    if r.unfilled.is_empty() {
        out.push(finding("variables", Status::Pass, "Every variable has a value for this lead.", None));
    } else {
        let names: Vec<String> = r.unfilled.iter().map(|v| format!("{{{{{}}}}}", v.name())).collect();
        let sender_side: Vec<&Var> = r.unfilled.iter().filter(|v| !v.is_lead()).collect();
        let fix = if sender_side.is_empty() {
            "Give each a fallback, e.g. {{first_name|there}}, or remove it, then save_sequence again."
                .to_owned()
        } else {
            "Fill the sender's details (sender_name and sender_title: save_playbook again with the whole playbook, \
             since saving replaces it; the company and website: save_offer), or give each a fallback like \
             {{sender_name|The Ledgerly team}}."
                .to_owned()
        };
        out.push(finding(
            "variables",
            Status::Fail,
            format!("{} would be sent empty to this lead.", names.join(", ")),
            Some(fix),
        ));
    }

    // Subject.
    let subject = r.subject.trim();
    let lower_subject = subject.to_lowercase();
    let subject_letters: Vec<char> = subject.chars().filter(|c| c.is_alphabetic()).collect();
    if subject.is_empty() {
        out.push(finding(
            "subject",
            Status::Fail,
            "The first email has no subject.",
            Some(
                "Write a short, honest subject of 3–6 words, e.g. \"Month-end close at {{company}}\".".into(),
            ),
        ));
    } else if lower_subject.starts_with("re:")
        || lower_subject.starts_with("fwd:")
        || lower_subject.starts_with("fw:")
    {
        out.push(finding(
            "subject",
            Status::Fail,
            "The subject pretends to be a reply or a forward, which is deceptive on a first email (CAN-SPAM).",
            Some("Remove the \"Re:\"/\"Fwd:\" prefix and say what the email is about.".into()),
        ));
    } else if subject_letters.len() >= 4 && subject_letters.iter().all(|c| c.is_uppercase()) {
        out.push(finding(
            "subject",
            Status::Warn,
            "The subject is in capitals, which reads as shouting and trips spam filters.",
            Some("Write it in normal sentence case.".into()),
        ));
    } else if subject.chars().count() > 60 {
        out.push(finding(
            "subject",
            Status::Warn,
            format!("The subject is {} characters; phones cut it around 40–60.", subject.chars().count()),
            Some("Shorten it to 3–6 words.".into()),
        ));
    } else {
        out.push(finding(
            "subject",
            Status::Pass,
            format!("Subject of {} characters.", subject.chars().count()),
            None,
        ));
    }

    // Length.
    let n = words(&r.body);
    let (status, fix) = match n {
        0..=24 => (
            Status::Warn,
            Some("Say who you are, why them, and one question: aim for 50–125 words.".to_owned()),
        ),
        25..=150 => (Status::Pass, None),
        151..=250 => (Status::Warn, Some("Cut it to under 150 words; one idea and one question.".to_owned())),
        _ => (
            Status::Fail,
            Some("A first email this long rarely gets read; cut it to under 150 words.".to_owned()),
        ),
    };
    out.push(finding("length", status, format!("The body has {n} words."), fix));

    // Links.
    let found = links(&r.body);
    let shortened: Vec<&String> = found
        .iter()
        .filter(|l| SHORTENERS.iter().any(|s| l.contains(&format!("//{s}/")) || l.starts_with(s)))
        .collect();
    if !shortened.is_empty() {
        out.push(finding(
            "links",
            Status::Fail,
            format!("Shortened links hide where they go, which spam filters punish: {}.", shortened.len()),
            Some("Use the full address of your own site, or no link at all.".into()),
        ));
    } else if found.len() > 1 {
        out.push(finding(
            "links",
            Status::Warn,
            format!("{} links in a first email look like marketing and hurt deliverability.", found.len()),
            Some("Keep at most one link — ideally none in the first email; offer it in a follow-up.".into()),
        ));
    } else if found.len() == 1 {
        out.push(finding(
            "links",
            Status::Info,
            "One link. Plain first emails without links land in the inbox more often.",
            Some("Consider moving the link to a follow-up.".into()),
        ));
    } else {
        out.push(finding("links", Status::Pass, "No links besides the unsubscribe link.", None));
    }

    // Spam-trigger words.
    let text = format!("{}\n{}", r.subject, r.body).to_lowercase();
    let hits: Vec<&str> = SPAM_TRIGGERS.iter().copied().filter(|p| contains_phrase(&text, p)).collect();
    if hits.is_empty() {
        out.push(finding("spam_words", Status::Pass, "No spam-trigger words.", None));
    } else {
        out.push(finding(
            "spam_words",
            Status::Warn,
            format!(
                "Spam-trigger words: {}.",
                hits.iter().map(|h| format!("\"{h}\"")).collect::<Vec<_>>().join(", ")
            ),
            Some(
                "Rephrase them in plain words (e.g. \"no charge for the pilot\" instead of \"free\").".into(),
            ),
        ));
    }

    // Formatting.
    let exclamations = r.body.matches('!').count() + r.subject.matches('!').count();
    // The subject too: it is the first thing a spam filter and a prospect read (journey finding).
    let shouting = r
        .subject
        .split_whitespace()
        .chain(r.body.split_whitespace())
        .filter(|w| {
            let letters: Vec<char> = w.chars().filter(|c| c.is_alphabetic()).collect();
            letters.len() >= 4 && letters.iter().all(|c| c.is_uppercase())
        })
        .count();
    if exclamations > 1 || shouting > 1 {
        out.push(finding(
            "formatting",
            Status::Warn,
            format!("{exclamations} exclamation mark(s) and {shouting} word(s) in capitals."),
            Some("Write calmly: at most one exclamation mark and no words in capitals.".into()),
        ));
    } else {
        out.push(finding("formatting", Status::Pass, "Calm formatting.", None));
    }

    // Personalisation.
    let lead_vars: Vec<&Var> = r.used.iter().filter(|v| v.is_lead()).collect();
    let about_them =
        lead_vars.iter().any(|v| matches!(v, Var::Company | Var::Title | Var::Industry | Var::City));
    if lead_vars.is_empty() {
        out.push(finding(
            "personalisation",
            Status::Warn,
            "Nothing in the email is about this lead: every prospect gets the same text.",
            Some("Use {{first_name}} and a line about {{company}} or their role ({{title}}).".into()),
        ));
    } else if !about_them {
        out.push(finding(
            "personalisation",
            Status::Info,
            "Only the name is personalised.",
            Some("Mention {{company}} or their role ({{title}}) so it reads as written for them.".into()),
        ));
    } else {
        let names: Vec<String> = lead_vars.iter().map(|v| format!("{{{{{}}}}}", v.name())).collect();
        out.push(finding(
            "personalisation",
            Status::Pass,
            format!("Personalised with {}.", names.join(", ")),
            None,
        ));
    }

    // Compliance footer.
    if !r.has_postal_address {
        out.push(finding(
            "compliance_footer",
            Status::Fail,
            "The footer has no postal address, which every commercial email must show (CAN-SPAM).",
            Some(
                "Ask the user for the company's postal address and call save_offer with postal_address."
                    .into(),
            ),
        ));
    } else if !sender_named {
        out.push(finding(
            "compliance_footer",
            Status::Warn,
            "The footer has the postal address and the unsubscribe link, but no sender name, only the company.",
            Some(
                "Ask the user who signs the emails and save the playbook again with sender_name (save_playbook, with \
                 the whole playbook: saving replaces it)."
                    .into(),
            ),
        ));
    } else {
        out.push(finding(
            "compliance_footer",
            Status::Pass,
            "Sender, postal address and a one-click unsubscribe link are in the footer.",
            None,
        ));
    }
    if to.under_gdpr() {
        // A recipient without a country gets the notice too (`under_gdpr` errs towards it), and
        // is not said to be in the EU.
        let whereabouts = match to.country.as_deref() {
            Some(country) => format!("The recipient is in {country}, under the GDPR"),
            None => "The recipient's country is not known, so they are treated as under the GDPR".to_owned(),
        };
        out.push(finding(
            "gdpr_notice",
            Status::Info,
            format!(
                "{whereabouts}: the footer adds where their data came from and how to object (Art. 14). Some \
                 countries (e.g. Germany) expect prior consent even for B2B email; the user should confirm they may \
                 write there."
            ),
            None,
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::render::{Sender, render};
    use super::*;
    use crate::workspace::offer::Offer;

    fn offer(postal: bool) -> Offer {
        Offer {
            product: "Ledgerly".into(),
            description: "d".into(),
            value_proposition: "v".into(),
            company_name: Some("Ledgerly Inc.".into()),
            website: None,
            pricing: None,
            proof_points: vec![],
            call_to_action: None,
            postal_address: postal.then(|| "1 Main St".to_owned()),
        }
    }

    fn to(country: &str) -> Recipient {
        Recipient {
            first_name: "Ana".into(),
            last_name: "Ruiz".into(),
            title: "CFO".into(),
            company: "Acme".into(),
            company_domain: None,
            industry: None,
            city: None,
            country: Some(country.into()),
            email: "ana@acme.io".into(),
        }
    }

    fn severity(findings: &[Finding], check: &str) -> Status {
        findings.iter().find(|f| f.id == check).map(|f| f.status).unwrap()
    }

    #[test]
    fn a_good_email_passes() {
        let o = offer(true);
        let body = "Hi {{first_name}},\n\nI noticed {{company}} is growing its finance team. Most CFOs we talk to lose a \
                    week every month to manual reconciliations. Ledgerly closes the books in three days by matching \
                    transactions as they happen.\n\nWould a short call next week be useful?\n\nSam";
        let r = render(
            "Month-end close at {{company}}",
            body,
            &to("United States"),
            &Sender { offer: &o, playbook: None },
            "u",
            "s",
        )
        .unwrap();
        let f = check_first_email(&r, &to("United States"), true);
        for check in [
            "variables",
            "subject",
            "length",
            "links",
            "spam_words",
            "formatting",
            "personalisation",
            "compliance_footer",
        ] {
            assert_eq!(severity(&f, check), Status::Pass, "{check}: {f:?}");
        }
        assert!(!f.iter().any(|x| x.id == "gdpr_notice"));
        // Without a country the notice is given, and the recipient is not said to be in the EU.
        let nowhere = Recipient { country: None, ..to("United States") };
        let r = render("Month-end close", body, &nowhere, &Sender { offer: &o, playbook: None }, "u", "s")
            .unwrap();
        let notice =
            check_first_email(&r, &nowhere, true).into_iter().find(|x| x.id == "gdpr_notice").unwrap();
        assert!(
            notice
                .detail
                .starts_with("The recipient's country is not known, so they are treated as under the GDPR: ")
        );
    }

    #[test]
    fn a_bad_email_gets_a_fix_for_every_problem() {
        let o = offer(false);
        let body = "URGENT!!! Click here for a FREE trial, guaranteed: https://bit.ly/x and https://ledgerly.io {{city}}";
        let r =
            render("Re: FREE OFFER", body, &to("Germany"), &Sender { offer: &o, playbook: None }, "u", "s")
                .unwrap();
        let f = check_first_email(&r, &to("Germany"), false);
        assert_eq!(severity(&f, "variables"), Status::Fail);
        assert_eq!(severity(&f, "subject"), Status::Fail);
        assert_eq!(severity(&f, "links"), Status::Fail);
        assert_eq!(severity(&f, "spam_words"), Status::Warn);
        assert_eq!(severity(&f, "formatting"), Status::Warn);
        assert_eq!(severity(&f, "length"), Status::Warn);
        assert_eq!(severity(&f, "compliance_footer"), Status::Fail);
        assert_eq!(severity(&f, "gdpr_notice"), Status::Info);
        for x in f.iter().filter(|x| x.status >= Status::Warn) {
            assert!(x.fix.as_deref().is_some_and(|s| !s.is_empty()), "{} has no fix", x.id);
        }
        let spam = f.iter().find(|x| x.id == "spam_words").unwrap();
        assert!(spam.detail.contains("\"free\"") && spam.detail.contains("\"urgent\""), "{}", spam.detail);
        assert!(!contains_phrase("freedom to choose", "free"));
        // The subject's capitals count (journey finding: "FREE OFFER" was 0 words in capitals).
        let formatting = f.iter().find(|x| x.id == "formatting").unwrap();
        assert_eq!(formatting.detail, "3 exclamation mark(s) and 4 word(s) in capitals.");
    }
}

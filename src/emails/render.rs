//! Renders a step for one recipient exactly as it would be sent: the filled subject, the
//! plain-text body and its HTML twin, each ending with the compliance footer (sender, postal
//! address, the unsubscribe link, the GDPR Art. 14 notice for recipients it protects).

use maud::{DOCTYPE, Markup, html};

use super::template::{self, Var};
use crate::leads::Person;
use crate::leads::vocab::COUNTRIES;
use crate::workspace::offer::Offer;
use crate::workspace::playbook::Playbook;

/// Who the email goes to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Recipient {
    /// Given name.
    pub first_name: String,
    /// Surname.
    pub last_name: String,
    /// Job title.
    pub title: String,
    /// Company.
    pub company: String,
    /// Company domain.
    pub company_domain: Option<String>,
    /// Industry.
    pub industry: Option<String>,
    /// City.
    pub city: Option<String>,
    /// Country.
    pub country: Option<String>,
    /// Address.
    pub email: String,
}

impl Recipient {
    /// A provider's person as a recipient (`email` given separately, e.g. for a sample).
    pub fn from_person(p: &Person, email: String) -> Recipient {
        Recipient {
            first_name: p.first_name.clone(),
            last_name: p.last_name.clone(),
            title: p.title.clone(),
            company: p.company.clone(),
            company_domain: p.company_domain.clone(),
            industry: p.industry.clone(),
            city: p.city.clone(),
            country: p.country.clone(),
            email,
        }
    }

    /// Whether the GDPR (or UK GDPR) protects the recipient, so the first email carries the
    /// Art. 14 notice (DOMAIN §6.2). It errs towards the notice: a recipient with no country, or
    /// one the vocabulary does not list (Apollo knows every country, the list only the largest
    /// markets: Greece, Hungary, the Baltics…), gets it. A notice not needed costs a few lines;
    /// one missing breaks the law (audit finding: such recipients got none).
    pub fn under_gdpr(&self) -> bool {
        let Some(country) = self.country.as_deref().map(str::trim) else { return true };
        COUNTRIES.iter().find(|x| x.name == country).is_none_or(|x| x.gdpr)
    }
}

/// Who sends it.
#[derive(Debug, Clone, Copy)]
pub struct Sender<'a> {
    /// The offer (company, product, postal address).
    pub offer: &'a Offer,
    /// The playbook (sender name and title, call to action), once saved.
    pub playbook: Option<&'a Playbook>,
}

impl Sender<'_> {
    /// The value of a sender-side variable.
    pub fn value(&self, var: Var) -> Option<String> {
        let p = self.playbook;
        match var {
            Var::SenderName => p.and_then(|p| p.sender_name.clone()),
            Var::SenderTitle => p.and_then(|p| p.sender_title.clone()),
            Var::MyCompany => self.offer.company_name.clone(),
            Var::Product => Some(self.offer.product.clone()),
            Var::ValueProposition => Some(self.offer.value_proposition.clone()),
            Var::CallToAction => {
                p.and_then(|p| p.call_to_action.clone()).or_else(|| self.offer.call_to_action.clone())
            }
            Var::Website => self.offer.website.clone(),
            _ => None,
        }
    }

    /// The sending company (or the product when no company name is saved).
    pub fn company(&self) -> String {
        self.offer.company_name.clone().unwrap_or_else(|| self.offer.product.clone())
    }

    /// The name the footer identifies the sender by.
    pub fn identity(&self) -> String {
        let company = self.company();
        match self.playbook.and_then(|p| p.sender_name.as_deref()) {
            Some(name) => format!("{name}, {company}"),
            None => company,
        }
    }
}

/// The value of a lead-side variable for a recipient.
pub fn lead_value(r: &Recipient, var: Var) -> Option<String> {
    match var {
        Var::FirstName => Some(r.first_name.clone()),
        Var::LastName => Some(r.last_name.clone()),
        Var::FullName => Some(format!("{} {}", r.first_name, r.last_name).trim().to_owned()),
        Var::Title => Some(r.title.clone()),
        Var::Company => Some(r.company.clone()),
        Var::CompanyDomain => r.company_domain.clone(),
        Var::Industry => r.industry.clone(),
        Var::City => r.city.clone(),
        Var::Country => r.country.clone(),
        _ => None,
    }
}

/// The rendered email.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rendered {
    /// Subject line.
    pub subject: String,
    /// The body as written, filled, without the footer.
    pub body: String,
    /// The whole plain-text email.
    pub text: String,
    /// The whole HTML email.
    pub html: String,
    /// Variables left empty (no value and no fallback).
    pub unfilled: Vec<Var>,
    /// Variables used in the subject and body.
    pub used: Vec<Var>,
    /// Whether the footer has the postal address.
    pub has_postal_address: bool,
    /// Whether the footer has the GDPR notice.
    pub has_gdpr_notice: bool,
    /// The unsubscribe link in the footer.
    pub unsubscribe_url: String,
}

/// Renders a subject and body for `to`. `source` names where the recipient's data came from
/// (for the GDPR notice).
pub fn render(
    subject: &str,
    body: &str,
    to: &Recipient,
    from: &Sender<'_>,
    unsubscribe_url: &str,
    source: &str,
) -> Result<Rendered, String> {
    let subject_t = template::parse(subject)?;
    let body_t = template::parse(body)?;
    let value = |v: Var| lead_value(to, v).or_else(|| from.value(v));
    let (subject, mut unfilled) = template::fill(&subject_t, value);
    let (body, body_unfilled) = template::fill(&body_t, value);
    for v in body_unfilled {
        if !unfilled.contains(&v) {
            unfilled.push(v);
        }
    }
    let mut used = template::variables(&subject_t);
    for v in template::variables(&body_t) {
        if !used.contains(&v) {
            used.push(v);
        }
    }
    let body = body.trim().to_owned();
    let subject = subject.split_whitespace().collect::<Vec<_>>().join(" ");

    let postal = from.offer.postal_address.clone();
    let notice = notice(to, source);
    let sender = sender_line(from);
    let text = format!(
        "{body}\n\n--\n{sender}\n{}\n{}",
        unsubscribe_line(unsubscribe_url),
        notice.as_deref().unwrap_or_default()
    );

    let paragraphs = body.split("\n\n").map(str::trim).filter(|p| !p.is_empty());
    let html = html! {
        (DOCTYPE)
        html {
            body style="font-family:Arial,Helvetica,sans-serif;font-size:14px;line-height:1.5;color:#111111" {
                @for paragraph in paragraphs {
                    p {
                        @for (i, line) in paragraph.lines().enumerate() {
                            @if i > 0 { br; }
                            (linkify(line))
                        }
                    }
                }
                p style="margin-top:24px;font-size:12px;color:#6b7280" {
                    (sender) br;
                    (UNSUBSCRIBE_PROMPT) " " a href=(unsubscribe_url) { "Unsubscribe" }
                    @if let Some(notice) = &notice { br; (notice) }
                }
            }
        }
    }
    .into_string();

    Ok(Rendered {
        subject,
        body,
        text,
        html,
        unfilled,
        used,
        has_postal_address: postal.is_some(),
        has_gdpr_notice: notice.is_some(),
        unsubscribe_url: unsubscribe_url.to_owned(),
    })
}

/// The footer's first line: who sends, and the postal address (CAN-SPAM). It is the same in
/// every email of a campaign, so the platform's templates carry it (`campaigns::templates`),
/// and staging again after the sender's details change puts the new ones in every email.
pub fn sender_line(from: &Sender<'_>) -> String {
    let identity = from.identity();
    match &from.offer.postal_address {
        Some(address) => format!("{identity} · {address}"),
        None => identity,
    }
}

/// What opens the footer's unsubscribe line. `sending::classify` stops reading a reply there: a
/// prospect's mail program may quote our email without marking it, and the line's own
/// "Unsubscribe" is not the prospect asking.
pub const UNSUBSCRIBE_PROMPT: &str = "Don't want to hear from us again?";
/// What opens the GDPR notice (the same holds for `sending::classify`: the notice says how to
/// object, in words that read as an objection).
pub const NOTICE_OPENING: &str = "Why you are receiving this:";

/// The footer's second line: the recipient's own unsubscribe link. It names no sender detail, so
/// that what a lead carries on the platform (`campaigns::FOOTER_VAR`) does not go stale when
/// those change: the line above it names the sender.
pub fn unsubscribe_line(unsubscribe_url: &str) -> String {
    format!("{UNSUBSCRIBE_PROMPT} Unsubscribe: {unsubscribe_url}")
}

/// The footer's last line: the GDPR notice where it applies to the recipient, or nothing. It is
/// a line of its own on the platform too (`campaigns::NOTICE_VAR`): Instantly's steps are HTML,
/// where a line break inside a variable's value would run the two lines together.
pub fn notice_line(to: &Recipient, source: &str) -> String {
    notice(to, source).unwrap_or_default()
}

/// The Art. 14 notice for a recipient under the GDPR (DOMAIN §6.2). It promises what happens: an
/// objection (the link, or a reply read as one, `sending::classify`) puts the address on the
/// suppression list for good. The lead's record stays, so it promises no deletion.
fn notice(to: &Recipient, source: &str) -> Option<String> {
    to.under_gdpr().then(|| {
        format!(
            "{NOTICE_OPENING} we found your work contact details in a business contact database ({source}) \
             and are writing to you about your role at {}, on the basis of legitimate interest. You can object at any \
             time: reply \"stop\" or use the unsubscribe link above, and you will not be contacted again.",
            to.company
        )
    })
}

/// A line with its http(s) URLs as links.
fn linkify(line: &str) -> Markup {
    html! {
        @for (i, word) in line.split(' ').enumerate() {
            @if i > 0 { " " }
            @let trimmed = word.trim_end_matches(['.', ',', ')', ';', '!', '?']);
            @if (trimmed.starts_with("https://") || trimmed.starts_with("http://")) && trimmed.len() > 8 {
                a href=(trimmed) { (trimmed) } (&word[trimmed.len()..])
            } @else {
                (word)
            }
        }
    }
}

/// The http(s) links in a text.
pub fn links(text: &str) -> Vec<String> {
    text.split_whitespace()
        .map(|w| w.trim_matches(|c: char| "<>()[].,;!?\"'".contains(c)))
        .filter(|w| {
            (w.starts_with("https://") || w.starts_with("http://") || w.starts_with("www.")) && w.len() > 8
        })
        .map(str::to_owned)
        .collect()
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    pub(crate) fn offer() -> Offer {
        Offer {
            product: "Ledgerly".into(),
            description: "Close automation".into(),
            value_proposition: "Close the books in 3 days".into(),
            company_name: Some("Ledgerly Inc.".into()),
            website: Some("https://ledgerly.io".into()),
            pricing: None,
            proof_points: vec![],
            call_to_action: Some("a 20-minute call".into()),
            postal_address: Some("1 Main St, Springfield".into()),
        }
    }

    pub(crate) fn recipient(country: &str) -> Recipient {
        Recipient {
            first_name: "Zoë".into(),
            last_name: "O'Brien".into(),
            title: "CFO".into(),
            company: "Acme <Labs>".into(),
            company_domain: Some("acme.io".into()),
            industry: Some("Computer Software".into()),
            city: None,
            country: Some(country.into()),
            email: "zoe@acme.io".into(),
        }
    }

    #[test]
    fn the_gdpr_notice_errs_towards_giving_it() {
        let under = |country: Option<&str>| {
            Recipient { country: country.map(str::to_owned), ..recipient("") }.under_gdpr()
        };
        for eea in ["Germany", "Norway", "Ireland", "United Kingdom"] {
            assert!(under(Some(eea)), "{eea}");
        }
        // Not in the vocabulary (Apollo's), or not known at all: the notice, to be safe.
        for unknown in [Some("Greece"), Some("Hungary"), Some(""), None] {
            assert!(under(unknown), "{unknown:?}");
        }
        for outside in ["United States", "Japan", "Switzerland", "Singapore"] {
            assert!(!under(Some(outside)), "{outside}");
        }
    }

    #[test]
    fn renders_text_and_html_with_the_footer() {
        let offer = offer();
        let playbook = Playbook {
            tone: "warm".into(),
            angle: "close".into(),
            persona: None,
            pain_points: vec![],
            objections: vec![],
            proof_points: vec![],
            rules: vec![],
            sender_name: Some("Sam".into()),
            sender_title: None,
            call_to_action: None,
        };
        let from = Sender { offer: &offer, playbook: Some(&playbook) };
        let r = render(
            "Quick question, {{first_name}}",
            "Hi {{first_name}},\n\nHow does {{company}} close the books? See https://ledgerly.io.\n\n{{sender_name}}",
            &recipient("France"),
            &from,
            "https://x.test/u/tok",
            "sandbox",
        )
        .unwrap();
        assert_eq!(r.subject, "Quick question, Zoë");
        assert!(r.text.starts_with("Hi Zoë,\n\nHow does Acme <Labs> close"));
        assert!(r.text.contains("Sam, Ledgerly Inc. · 1 Main St, Springfield"));
        assert!(r.text.contains("Unsubscribe: https://x.test/u/tok"));
        assert!(r.has_gdpr_notice && r.text.contains("legitimate interest"), "France is under the GDPR");
        assert!(r.html.contains("Acme &lt;Labs&gt;"), "lead data is escaped in HTML");
        assert!(r.html.contains("<a href=\"https://ledgerly.io\">https://ledgerly.io</a>."));
        assert!(r.html.contains("<a href=\"https://x.test/u/tok\">Unsubscribe</a>"));
        assert!(r.unfilled.is_empty());
        assert_eq!(r.used, vec![Var::FirstName, Var::Company, Var::SenderName]);
        let us =
            render("Hi", "Hello {{city}} {{sender_title}}", &recipient("United States"), &from, "u", "s")
                .unwrap();
        assert!(!us.has_gdpr_notice);
        assert_eq!(us.unfilled, vec![Var::City, Var::SenderTitle]);
        assert_eq!(links("see www.a.com, and https://b.io/x."), vec!["www.a.com", "https://b.io/x"]);
        // What the platform sends is the step's template (the body, then the sender's line) with
        // the lead's two lines of the footer filled in: the text shown here, to the byte.
        for (to, r) in [(recipient("France"), &r), (recipient("United States"), &us)] {
            let unsubscribe = unsubscribe_line(&r.unsubscribe_url);
            let notice = notice_line(&to, if r.has_gdpr_notice { "sandbox" } else { "s" });
            assert_eq!(r.text, format!("{}\n\n--\n{}\n{unsubscribe}\n{notice}", r.body, sender_line(&from)));
            for line in [&unsubscribe, &notice] {
                // Which name none of the sender's details, so that they never go stale on a lead,
                // and hold no line break, which the platform's HTML would run together.
                for detail in ["Sam", "Ledgerly", "Main St", "\n"] {
                    assert!(!line.contains(detail), "{line}");
                }
            }
            assert_eq!(notice.is_empty(), !r.has_gdpr_notice);
        }
        // The HTML's footer has the same lines in the same order.
        let footer = &r.html[r.html.find("<p style").unwrap()..];
        let (sender_at, link_at, notice_at) = (
            footer.find("1 Main St").unwrap(),
            footer.find(">Unsubscribe</a>").unwrap(),
            footer.find("Why you").unwrap(),
        );
        assert!(sender_at < link_at && link_at < notice_at, "{footer}");
        assert!(!us.html.contains("Why you"));
    }

    #[test]
    fn every_field_of_the_email_html_is_escaped() {
        use crate::html::tests::{EVIL, assert_escaped};
        let plain = offer();
        let from = Sender { offer: &plain, playbook: None };
        let html = |body: &str, to: &Recipient, from: &Sender<'_>, unsubscribe: &str| {
            render("Hi", body, to, from, unsubscribe, "Apollo").unwrap().html
        };
        let (url, to) = ("https://x.test/u/tok", recipient("France"));
        let evil_offer =
            Offer { company_name: Some(EVIL.into()), postal_address: Some(EVIL.into()), ..offer() };
        let evil_from = Sender { offer: &evil_offer, playbook: None };
        let cases = [
            ("body text", html(&format!("Hello {EVIL}"), &to, &from, url)),
            ("link", html(&format!("See https://x.test/{EVIL} now"), &to, &from, url)),
            (
                "company, filled in and in the notice",
                html("At {{company}}", &Recipient { company: EVIL.into(), ..to.clone() }, &from, url),
            ),
            (
                "lead name",
                html("Hi {{first_name}}", &Recipient { first_name: EVIL.into(), ..to.clone() }, &from, url),
            ),
            ("sender and postal address", html("Hi", &to, &evil_from, url)),
            ("unsubscribe link", html("Hi", &to, &from, &format!("https://x.test/u/{EVIL}"))),
        ];
        for (field, html) in cases {
            assert_escaped(&html, field);
        }
    }
}

//! `{{variables}}` in subjects and bodies: which exist, how they are written, and how a
//! template is filled. A variable may carry a fallback for leads who lack the value:
//! `{{first_name|there}}`. Instantly-style camelCase names (`{{firstName}}`, `{{companyName}}`)
//! are accepted as aliases (DOMAIN §1.2).

use crate::leads::vocab;

/// A variable a template may use.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Var {
    /// The lead's given name.
    FirstName,
    /// The lead's surname.
    LastName,
    /// Both.
    FullName,
    /// The lead's job title.
    Title,
    /// The lead's company.
    Company,
    /// The lead's company web domain.
    CompanyDomain,
    /// The lead's industry.
    Industry,
    /// The lead's city.
    City,
    /// The lead's country.
    Country,
    /// The sender's name (playbook).
    SenderName,
    /// The sender's title (playbook).
    SenderTitle,
    /// The sender's company (offer).
    MyCompany,
    /// The product (offer).
    Product,
    /// The value proposition (offer).
    ValueProposition,
    /// What the prospect is asked to do (playbook, else offer).
    CallToAction,
    /// The sender's website (offer).
    Website,
}

/// Every variable with its name and the aliases it is also known by.
pub const VARS: &[(Var, &str, &[&str])] = &[
    (Var::FirstName, "first_name", &["firstname", "first", "name"]),
    (Var::LastName, "last_name", &["lastname", "surname"]),
    (Var::FullName, "full_name", &["fullname"]),
    (Var::Title, "title", &["job_title", "jobtitle", "role"]),
    (Var::Company, "company", &["company_name", "companyname", "organization"]),
    (Var::CompanyDomain, "company_domain", &["companydomain", "domain"]),
    (Var::Industry, "industry", &[]),
    (Var::City, "city", &["location"]),
    (Var::Country, "country", &[]),
    (Var::SenderName, "sender_name", &["sendername", "my_name", "myname"]),
    (Var::SenderTitle, "sender_title", &["sendertitle", "my_title"]),
    (Var::MyCompany, "my_company", &["mycompany", "sender_company", "sendercompany"]),
    (Var::Product, "product", &["product_name", "productname"]),
    (Var::ValueProposition, "value_proposition", &["valueproposition", "value_prop"]),
    (Var::CallToAction, "call_to_action", &["calltoaction", "cta"]),
    (Var::Website, "website", &["my_website", "url"]),
];

impl Var {
    /// The canonical name.
    pub fn name(self) -> &'static str {
        VARS.iter().find(|(v, _, _)| *v == self).map_or("", |x| x.1)
    }

    /// Whether the value comes from the lead (and so may be missing for some leads).
    pub fn is_lead(self) -> bool {
        matches!(
            self,
            Var::FirstName
                | Var::LastName
                | Var::FullName
                | Var::Title
                | Var::Company
                | Var::CompanyDomain
                | Var::Industry
                | Var::City
                | Var::Country
        )
    }

    /// The variable a written name stands for.
    pub fn find(written: &str) -> Option<Var> {
        // camelCase to snake_case, then compare without separators.
        let mut snake = String::new();
        for (i, ch) in written.trim().chars().enumerate() {
            if ch.is_ascii_uppercase() && i > 0 {
                snake.push('_');
            }
            snake.push(ch.to_ascii_lowercase());
        }
        let flat = |s: &str| s.replace(['_', ' ', '-'], "");
        VARS.iter()
            .find(|(_, name, aliases)| {
                *name == snake
                    || flat(name) == flat(&snake)
                    || aliases.iter().any(|a| flat(a) == flat(&snake))
            })
            .map(|x| x.0)
    }
}

/// A piece of a parsed template.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Piece {
    /// Literal text.
    Text(String),
    /// A variable and its fallback.
    Var(Var, Option<String>),
}

/// Parses a template; the error names the problem and how to write it instead.
pub fn parse(template: &str) -> Result<Vec<Piece>, String> {
    let mut pieces = Vec::new();
    let mut rest = template;
    while let Some(start) = rest.find("{{") {
        if start > 0 {
            pieces.push(Piece::Text(rest[..start].to_owned()));
        }
        let after = &rest[start + 2..];
        let Some(end) = after.find("}}") else {
            return Err(format!("\"{}\" opens {{{{ without closing it with }}}}", excerpt(&rest[start..])));
        };
        let inner = &after[..end];
        if inner.contains("{{") {
            return Err(format!("\"{}\" opens {{{{ without closing it with }}}}", excerpt(&rest[start..])));
        }
        let (name, fallback) = match inner.split_once('|') {
            Some((n, f)) => (n.trim(), Some(f.trim().to_owned()).filter(|f| !f.is_empty())),
            None => (inner.trim(), None),
        };
        match Var::find(name) {
            Some(var) => pieces.push(Piece::Var(var, fallback)),
            None => {
                let candidates = VARS
                    .iter()
                    .flat_map(|(_, n, a)| std::iter::once((*n, *n)).chain(a.iter().map(move |x| (*x, *n))));
                let suggestions = vocab::suggest(name, candidates, 2);
                let hint = match suggestions.as_slice() {
                    [] => String::new(),
                    [one] => format!(" Did you mean {{{{{one}}}}}?"),
                    [a, b, ..] => format!(" Did you mean {{{{{a}}}}} or {{{{{b}}}}}?"),
                };
                return Err(format!(
                    "{{{{{name}}}}} is not a variable.{hint} Known variables: {}.",
                    VARS.iter().map(|(_, n, _)| format!("{{{{{n}}}}}")).collect::<Vec<_>>().join(", ")
                ));
            }
        }
        rest = &after[end + 2..];
    }
    if !rest.is_empty() {
        pieces.push(Piece::Text(rest.to_owned()));
    }
    Ok(pieces)
}

fn excerpt(s: &str) -> String {
    s.chars().take(30).collect()
}

/// The variables a template uses.
pub fn variables(pieces: &[Piece]) -> Vec<Var> {
    let mut out = Vec::new();
    for p in pieces {
        if let Piece::Var(v, _) = p
            && !out.contains(v)
        {
            out.push(*v);
        }
    }
    out
}

/// Fills a template. Returns the text and the variables left empty (no value, no fallback).
pub fn fill(pieces: &[Piece], value: impl Fn(Var) -> Option<String>) -> (String, Vec<Var>) {
    let mut out = String::new();
    let mut unfilled = Vec::new();
    for p in pieces {
        match p {
            Piece::Text(t) => out.push_str(t),
            Piece::Var(v, fallback) => match value(*v).filter(|s| !s.trim().is_empty()) {
                Some(s) => out.push_str(&s),
                None => match fallback {
                    Some(f) => out.push_str(f),
                    None => {
                        if !unfilled.contains(v) {
                            unfilled.push(*v);
                        }
                    }
                },
            },
        }
    }
    (out, unfilled)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_variables_fallbacks_and_aliases() {
        let p = parse("Hi {{ first_name | there }}, {{companyName}} and {{CTA}}.").unwrap();
        assert_eq!(
            p,
            vec![
                Piece::Text("Hi ".into()),
                Piece::Var(Var::FirstName, Some("there".into())),
                Piece::Text(", ".into()),
                Piece::Var(Var::Company, None),
                Piece::Text(" and ".into()),
                Piece::Var(Var::CallToAction, None),
                Piece::Text(".".into()),
            ]
        );
        assert_eq!(variables(&p), vec![Var::FirstName, Var::Company, Var::CallToAction]);
        let (text, unfilled) = fill(&p, |v| (v == Var::Company).then(|| "Acme".to_owned()));
        assert_eq!(text, "Hi there, Acme and .");
        assert_eq!(unfilled, vec![Var::CallToAction]);
    }

    #[test]
    fn refuses_unknown_and_unclosed_variables_helpfully() {
        let e = parse("Hi {{frist_name}}").unwrap_err();
        assert!(e.contains("Did you mean {{first_name}}"), "{e}");
        let e = parse("Hi {{first_name").unwrap_err();
        assert!(e.contains("without closing"), "{e}");
        let e = parse("Hi {{first_name {{x}}").unwrap_err();
        assert!(e.contains("without closing"), "{e}");
        assert!(parse("No variables at all.").is_ok());
    }
}

//! Target filters: what the model passes (`FilterArgs`), what is stored and sent to a provider
//! (`Filters`, canonical values only), and the validation between them, which refuses unknown
//! values with "did you mean" suggestions (PRODUCT §8, DOMAIN §2.4).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::vocab::{self, COMPANY_SIZES, COUNTRIES, DEPARTMENTS, INDUSTRIES, SENIORITIES, TITLES, key};

/// Structured target filters, as the model gives them. Within a field any value matches (OR);
/// across fields every field must match (AND); an empty or absent field matches everyone.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FilterArgs {
    /// Countries where the people work, by English name or ISO code (e.g. "United States",
    /// "FR").
    #[serde(default)]
    #[schemars(length(max = 30), inner(length(min = 1, max = 60)))]
    pub countries: Vec<String>,
    /// Job titles (e.g. "VP of Sales", "Head of Finance", "CFO"). Give 3–6 titles of one buying
    /// role rather than one.
    #[serde(default)]
    #[schemars(length(max = 25), inner(length(min = 1, max = 100)))]
    pub titles: Vec<String>,
    /// Seniority levels: owner, founder, c_suite, partner, vp, head, director, manager, senior,
    /// entry, intern.
    #[serde(default)]
    #[schemars(length(max = 11), inner(length(min = 1, max = 40)))]
    pub seniorities: Vec<String>,
    /// Departments: executive, sales, marketing, engineering, product, finance, operations,
    /// human_resources, information_technology, customer_success, legal, design.
    #[serde(default)]
    #[schemars(length(max = 12), inner(length(min = 1, max = 40)))]
    pub departments: Vec<String>,
    /// Industries of the companies (e.g. "Computer Software", "Financial Services",
    /// "Manufacturing").
    #[serde(default)]
    #[schemars(length(max = 25), inner(length(min = 1, max = 80)))]
    pub industries: Vec<String>,
    /// Company headcount bands: 1-10, 11-50, 51-200, 201-500, 501-1000, 1001-5000, 5001-10000,
    /// 10001+.
    #[serde(default)]
    #[schemars(length(max = 8), inner(length(min = 1, max = 20)))]
    pub company_sizes: Vec<String>,
    /// Company keywords, what the companies do (e.g. "saas", "fintech", "ecommerce").
    #[serde(default)]
    #[schemars(length(max = 20), inner(length(min = 1, max = 60)))]
    pub keywords: Vec<String>,
    /// Job titles to leave out.
    #[serde(default)]
    #[schemars(length(max = 25), inner(length(min = 1, max = 100)))]
    pub exclude_titles: Vec<String>,
    /// Industries to leave out.
    #[serde(default)]
    #[schemars(length(max = 25), inner(length(min = 1, max = 80)))]
    pub exclude_industries: Vec<String>,
    /// Company web domains to leave out: existing customers, competitors, the user's own
    /// company (e.g. "acme.com").
    #[serde(default)]
    #[schemars(length(max = 100), inner(length(min = 3, max = 100)))]
    pub exclude_company_domains: Vec<String>,
}

impl FilterArgs {
    /// Whether no field was given at all.
    pub fn is_empty(&self) -> bool {
        self.countries.is_empty()
            && self.titles.is_empty()
            && self.seniorities.is_empty()
            && self.departments.is_empty()
            && self.industries.is_empty()
            && self.company_sizes.is_empty()
            && self.keywords.is_empty()
            && self.exclude_titles.is_empty()
            && self.exclude_industries.is_empty()
            && self.exclude_company_domains.is_empty()
    }
}

/// Validated filters with canonical values, as stored and as sent to a provider.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Filters {
    /// Countries (English names).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub countries: Vec<String>,
    /// Job titles.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub titles: Vec<String>,
    /// Seniority ids.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub seniorities: Vec<String>,
    /// Department ids.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub departments: Vec<String>,
    /// Industries.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub industries: Vec<String>,
    /// Headcount bands.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub company_sizes: Vec<String>,
    /// Company keywords.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub keywords: Vec<String>,
    /// Titles left out.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub exclude_titles: Vec<String>,
    /// Industries left out.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub exclude_industries: Vec<String>,
    /// Company domains left out.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub exclude_company_domains: Vec<String>,
}

impl Filters {
    /// A short human description, e.g. "VP of Sales, Head of Sales · United States · 51-200".
    pub fn summary(&self) -> String {
        let mut parts: Vec<String> = Vec::new();
        let list = |v: &[String], label: &str| -> Option<String> {
            match v.len() {
                0 => None,
                1..=3 => Some(v.join(", ")),
                n => Some(format!("{}, … ({n} {label})", v[..2].join(", "))),
            }
        };
        parts.extend(list(&self.titles, "titles"));
        parts.extend(list(&self.seniorities, "seniorities"));
        parts.extend(list(&self.departments, "departments"));
        parts.extend(list(&self.industries, "industries"));
        parts.extend(list(&self.keywords, "keywords"));
        parts.extend(list(&self.countries, "countries"));
        if !self.company_sizes.is_empty() {
            parts.push(format!("{} employees", self.company_sizes.join(", ")));
        }
        let excluded =
            self.exclude_titles.len() + self.exclude_industries.len() + self.exclude_company_domains.len();
        if excluded > 0 {
            parts.push(format!("{excluded} exclusion(s)"));
        }
        if parts.is_empty() { "everyone".to_owned() } else { parts.join(" · ") }
    }

    /// A stable fingerprint of the filters (for logs and for ordering the sandbox's people).
    pub fn fingerprint(&self) -> String {
        let json = serde_json::to_string(self).unwrap_or_default();
        crate::ids::sha256_hex(json.as_bytes())[..16].to_owned()
    }
}

/// Which values a provider accepts for the open-ended fields.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Vocabulary {
    /// Titles must be among the known ones (the sandbox); otherwise any title is sent as text
    /// (Apollo matches titles itself).
    pub closed_titles: bool,
    /// Keywords must be among the known company tags (the sandbox); otherwise free text.
    pub closed_keywords: bool,
}

impl Vocabulary {
    /// The sandbox database: every field is a closed list.
    pub const SANDBOX: Vocabulary = Vocabulary { closed_titles: true, closed_keywords: true };
    /// Apollo: titles and keywords are free text.
    pub const APOLLO: Vocabulary = Vocabulary { closed_titles: false, closed_keywords: false };

    /// Turns the model's filters into canonical ones, or says what is wrong with every value that
    /// is not known, suggesting the closest known values.
    pub fn validate(&self, args: &FilterArgs) -> Result<Filters, Vec<String>> {
        let mut problems = Vec::new();
        let mut f = Filters {
            countries: canon(&args.countries, "countries", &mut problems, country_lookup, country_candidates),
            seniorities: canon(
                &args.seniorities,
                "seniorities",
                &mut problems,
                seniority_lookup,
                seniority_candidates,
            ),
            departments: canon(
                &args.departments,
                "departments",
                &mut problems,
                department_lookup,
                department_candidates,
            ),
            industries: canon(
                &args.industries,
                "industries",
                &mut problems,
                industry_lookup,
                industry_candidates,
            ),
            company_sizes: canon(
                &args.company_sizes,
                "company_sizes",
                &mut problems,
                size_lookup,
                size_candidates,
            ),
            exclude_industries: canon(
                &args.exclude_industries,
                "exclude_industries",
                &mut problems,
                industry_lookup,
                industry_candidates,
            ),
            ..Filters::default()
        };
        if self.closed_titles {
            f.titles = canon(&args.titles, "titles", &mut problems, title_lookup, title_candidates);
            f.exclude_titles =
                canon(&args.exclude_titles, "exclude_titles", &mut problems, title_lookup, title_candidates);
        } else {
            f.titles = free_text(&args.titles, "titles", &mut problems);
            f.exclude_titles = free_text(&args.exclude_titles, "exclude_titles", &mut problems);
        }
        f.keywords = if self.closed_keywords {
            canon(&args.keywords, "keywords", &mut problems, keyword_lookup, keyword_candidates)
        } else {
            free_text(&args.keywords, "keywords", &mut problems)
        };
        for raw in &args.exclude_company_domains {
            match normalize_domain(raw) {
                Some(d) if !f.exclude_company_domains.contains(&d) => f.exclude_company_domains.push(d),
                Some(_) => {}
                None => problems.push(format!(
                    "`exclude_company_domains`: {raw:?} is not a web domain; write it like \"acme.com\""
                )),
            }
        }
        if problems.is_empty()
            && f.countries.is_empty()
            && f.titles.is_empty()
            && f.seniorities.is_empty()
            && f.departments.is_empty()
            && f.industries.is_empty()
            && f.company_sizes.is_empty()
            && f.keywords.is_empty()
        {
            problems.push(
                "give at least one of countries, titles, seniorities, departments, industries, company_sizes \
                 or keywords; exclusions alone would target everyone"
                    .to_owned(),
            );
        }
        // A value both wanted and excluded is a contradiction the user should resolve.
        for t in &f.titles {
            if f.exclude_titles.iter().any(|x| key(x) == key(t)) {
                problems.push(format!("\"{t}\" is both in `titles` and in `exclude_titles`"));
            }
        }
        for i in &f.industries {
            if f.exclude_industries.contains(i) {
                problems.push(format!("\"{i}\" is both in `industries` and in `exclude_industries`"));
            }
        }
        if problems.is_empty() { Ok(f) } else { Err(problems) }
    }
}

type Lookup = fn(&str) -> Option<&'static str>;
type Candidates = fn() -> Vec<(&'static str, &'static str)>;

fn canon(
    values: &[String],
    field: &str,
    problems: &mut Vec<String>,
    lookup: Lookup,
    candidates: Candidates,
) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for raw in values {
        match lookup(raw) {
            Some(v) => {
                if !out.iter().any(|o| o == v) {
                    out.push(v.to_owned());
                }
            }
            None => {
                let suggestions = vocab::suggest(raw, candidates(), 3);
                let mut p = format!("`{field}`: {:?} is not a value the lead provider knows", raw.trim());
                if suggestions.is_empty() {
                    let mut known: Vec<&str> = Vec::new();
                    for (_, c) in candidates() {
                        if !known.contains(&c) {
                            known.push(c);
                        }
                    }
                    // A short vocabulary (industries, sizes) is given whole, so that the closest
                    // value can be picked even when no word is shared ("Metal Fabrication" is
                    // Manufacturing; journey finding: the first eight industries were listed).
                    if known.len() <= 40 {
                        p.push_str(&format!(" (the known values: {})", quoted(&known)));
                    } else {
                        p.push_str(&format!(" (known values include: {})", quoted(&known[..8])));
                    }
                } else {
                    p.push_str(&format!("; did you mean {}?", or_list(&suggestions)));
                }
                problems.push(p);
            }
        }
    }
    out
}

fn free_text(values: &[String], field: &str, problems: &mut Vec<String>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for raw in values {
        let v = raw.split_whitespace().collect::<Vec<_>>().join(" ");
        if v.is_empty() || !v.chars().any(char::is_alphanumeric) {
            problems.push(format!("`{field}`: {raw:?} is empty"));
        } else if !out.iter().any(|o| key(o) == key(&v)) {
            out.push(v);
        }
    }
    out
}

fn quoted(values: &[&str]) -> String {
    values.iter().map(|v| format!("\"{v}\"")).collect::<Vec<_>>().join(", ")
}

fn or_list(values: &[&str]) -> String {
    let q: Vec<String> = values.iter().map(|v| format!("\"{v}\"")).collect();
    match q.len() {
        0 => String::new(),
        1 => q[0].clone(),
        n => format!("{} or {}", q[..n - 1].join(", "), q[n - 1]),
    }
}

/// A lower-case web domain without scheme, `www.`, path or port; `None` if it is not one.
pub fn normalize_domain(raw: &str) -> Option<String> {
    let mut d = raw.trim().to_ascii_lowercase();
    for prefix in ["https://", "http://"] {
        if let Some(rest) = d.strip_prefix(prefix) {
            d = rest.to_owned();
        }
    }
    if let Some((_, host)) = d.split_once('@') {
        d = host.to_owned();
    }
    let d = d.split(['/', '?', '#', ':']).next().unwrap_or("");
    let d = d.strip_prefix("www.").unwrap_or(d).trim_end_matches('.');
    let labels: Vec<&str> = d.split('.').collect();
    let ok = labels.len() >= 2
        && d.len() <= 100
        && labels.iter().all(|l| {
            !l.is_empty()
                && l.len() <= 63
                && !l.starts_with('-')
                && !l.ends_with('-')
                && l.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
        })
        && labels.last().is_some_and(|tld| tld.len() >= 2 && tld.bytes().all(|b| b.is_ascii_alphabetic()));
    ok.then(|| d.to_owned())
}

fn find<T>(
    items: &'static [T],
    raw: &str,
    keys: impl Fn(&'static T) -> Vec<&'static str>,
) -> Option<&'static T> {
    let k = key(raw);
    items.iter().find(|item| keys(item).into_iter().any(|candidate| key(candidate) == k))
}

fn country_lookup(raw: &str) -> Option<&'static str> {
    find(COUNTRIES, raw, |c| {
        let mut v = vec![c.name, c.code];
        v.extend_from_slice(c.aliases);
        v
    })
    .map(|c| c.name)
}
fn country_candidates() -> Vec<(&'static str, &'static str)> {
    COUNTRIES
        .iter()
        .flat_map(|c| std::iter::once((c.name, c.name)).chain(c.aliases.iter().map(|a| (*a, c.name))))
        .collect()
}

fn seniority_lookup(raw: &str) -> Option<&'static str> {
    find(SENIORITIES, raw, |(id, label, aliases)| {
        let mut v = vec![*id, *label];
        v.extend_from_slice(aliases);
        v
    })
    .map(|s| s.0)
}
fn seniority_candidates() -> Vec<(&'static str, &'static str)> {
    SENIORITIES
        .iter()
        .flat_map(|(id, label, aliases)| {
            [(*id, *id), (*label, *id)].into_iter().chain(aliases.iter().map(|a| (*a, *id)))
        })
        .collect()
}

fn department_lookup(raw: &str) -> Option<&'static str> {
    find(DEPARTMENTS, raw, |(id, label, aliases)| {
        let mut v = vec![*id, *label];
        v.extend_from_slice(aliases);
        v
    })
    .map(|d| d.0)
}
fn department_candidates() -> Vec<(&'static str, &'static str)> {
    DEPARTMENTS
        .iter()
        .flat_map(|(id, label, aliases)| {
            [(*id, *id), (*label, *id)].into_iter().chain(aliases.iter().map(|a| (*a, *id)))
        })
        .collect()
}

fn industry_lookup(raw: &str) -> Option<&'static str> {
    find(INDUSTRIES, raw, |i| {
        let mut v = vec![i.name];
        v.extend_from_slice(i.aliases);
        v
    })
    .map(|i| i.name)
}
fn industry_candidates() -> Vec<(&'static str, &'static str)> {
    INDUSTRIES
        .iter()
        .flat_map(|i| std::iter::once((i.name, i.name)).chain(i.aliases.iter().map(|a| (*a, i.name))))
        .collect()
}

fn size_lookup(raw: &str) -> Option<&'static str> {
    let k = key(raw).replace(' ', "-");
    let k = k.trim_end_matches("-employees");
    COMPANY_SIZES
        .iter()
        .find(|(label, apollo)| key(label).replace(' ', "-") == k || apollo.replace(',', "-") == k)
        .map(|s| s.0)
}
fn size_candidates() -> Vec<(&'static str, &'static str)> {
    COMPANY_SIZES.iter().map(|(label, _)| (*label, *label)).collect()
}

fn title_lookup(raw: &str) -> Option<&'static str> {
    // "vice president" and "vp" are the same word in titles.
    let norm = |s: &str| key(s).replace("vice president", "vp").replace(" of ", " ");
    let k = norm(raw);
    TITLES.iter().find(|t| norm(t.name) == k || t.aliases.iter().any(|a| norm(a) == k)).map(|t| t.name)
}
fn title_candidates() -> Vec<(&'static str, &'static str)> {
    TITLES
        .iter()
        .flat_map(|t| std::iter::once((t.name, t.name)).chain(t.aliases.iter().map(|a| (*a, t.name))))
        .collect()
}

fn keyword_lookup(raw: &str) -> Option<&'static str> {
    let k = key(raw);
    vocab::keywords().into_iter().find(|t| key(t) == k)
}
fn keyword_candidates() -> Vec<(&'static str, &'static str)> {
    vocab::keywords().into_iter().map(|t| (t, t)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(json: serde_json::Value) -> FilterArgs {
        serde_json::from_value(json).unwrap()
    }

    #[test]
    fn canonicalises_every_field() {
        let f = Vocabulary::SANDBOX
            .validate(&args(serde_json::json!({
                "countries": ["usa", "FR", "Deutschland", "france"],
                "titles": ["CFO", "vice president of finance", "Head of Finance"],
                "seniorities": ["C-level", "vp"],
                "departments": ["Finance"],
                "industries": ["saas companies", "Financial services"],
                "company_sizes": ["51-200", "201,500", "10001+"],
                "keywords": ["SaaS", "Fintech"],
                "exclude_company_domains": ["https://www.Acme.com/about", "acme.com"],
            })))
            .unwrap();
        assert_eq!(f.countries, ["United States", "France", "Germany"]);
        assert_eq!(f.titles, ["Chief Financial Officer", "VP of Finance", "Head of Finance"]);
        assert_eq!(f.seniorities, ["c_suite", "vp"]);
        assert_eq!(f.departments, ["finance"]);
        assert_eq!(f.industries, ["Computer Software", "Financial Services"]);
        assert_eq!(f.company_sizes, ["51-200", "201-500", "10001+"]);
        assert_eq!(f.keywords, ["saas", "fintech"]);
        assert_eq!(f.exclude_company_domains, ["acme.com"]);
        assert!(f.summary().contains("United States"));
    }

    #[test]
    fn unknown_values_get_suggestions_all_at_once() {
        let problems = Vocabulary::SANDBOX
            .validate(&args(serde_json::json!({
                "countries": ["Germnay"],
                "titles": ["Head of Sales Ops", "Chief Happiness Officer"],
                "company_sizes": ["12-40"],
                "exclude_company_domains": ["not a domain"],
            })))
            .unwrap_err();
        let text = problems.join("\n");
        assert!(text.contains("did you mean \"Germany\""), "{text}");
        assert!(text.contains("\"Head of Sales\""), "{text}");
        assert!(text.contains("Chief Happiness Officer"), "{text}");
        assert!(text.contains("known values include") || text.contains("did you mean"), "{text}");
        assert!(text.contains("exclude_company_domains"), "{text}");
        assert_eq!(problems.len(), 5, "{text}");
        // A short vocabulary is given whole when nothing is close (journey finding).
        let problems = Vocabulary::SANDBOX
            .validate(&args(serde_json::json!({ "industries": ["Metal Fabrication"] })))
            .unwrap_err();
        assert!(
            problems[0].contains("(the known values: ") && problems[0].contains("\"Manufacturing\""),
            "{problems:?}"
        );
    }

    #[test]
    fn apollo_accepts_free_titles_but_not_unknown_countries() {
        let f = Vocabulary::APOLLO
            .validate(&args(
                serde_json::json!({"titles": ["  Revenue   Ops Lead "], "keywords": ["b2b payments"]}),
            ))
            .unwrap();
        assert_eq!(f.titles, ["Revenue Ops Lead"]);
        assert_eq!(f.keywords, ["b2b payments"]);
        assert!(Vocabulary::APOLLO.validate(&args(serde_json::json!({"countries": ["Atlantis"]}))).is_err());
    }

    #[test]
    fn exclusions_alone_and_contradictions_are_refused() {
        let p =
            Vocabulary::SANDBOX.validate(&args(serde_json::json!({"exclude_titles": ["CEO"]}))).unwrap_err();
        assert!(p[0].contains("at least one"));
        let p = Vocabulary::SANDBOX
            .validate(&args(
                serde_json::json!({"titles": ["CEO"], "exclude_titles": ["Chief Executive Officer"]}),
            ))
            .unwrap_err();
        assert!(p[0].contains("both"));
    }

    #[test]
    fn domains_are_normalised() {
        assert_eq!(normalize_domain("WWW.Example.co.uk/"), Some("example.co.uk".into()));
        assert_eq!(normalize_domain("jane@acme.io"), Some("acme.io".into()));
        for bad in ["acme", "acme.c", "-a.com", "a..com", "acme.com1", "ac me.com"] {
            assert_eq!(normalize_domain(bad), None, "{bad}");
        }
    }
}

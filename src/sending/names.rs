//! Names: the user's primary domain and brand (from the offer's website), look-alike sending
//! domains for it (DOMAIN §4.6), and mailbox names from the sender's name.
//!
//! Cold email never goes out from the primary domain: its reputation carries invoices, support
//! and the team's own mail (DOMAIN §3.6). Look-alikes put a short prefix or suffix around the
//! brand (`getacme.com`, `acmehq.com`), stay on `.com`/`.org` (the only extensions Instantly's
//! done-for-you orders allow, DOMAIN §1.8), avoid hyphens and digits, and never reuse the exact
//! brand on another extension (`acme.com` next to `acme.io` reads as phishing).

/// Two-label public suffixes under which the registrable domain has three labels.
const SECOND_LEVEL: &[&str] = &[
    "co.uk", "org.uk", "ac.uk", "me.uk", "com.au", "net.au", "org.au", "co.nz", "com.br", "co.jp", "co.in",
    "com.sg", "com.hk", "co.za", "com.mx", "com.tr", "co.il", "com.ar",
];

/// Extensions look-alike sending domains may use.
pub const SENDING_TLDS: &[&str] = &["com", "org"];

/// Prefixes and suffixes around the brand, most natural first.
const PREFIXES: &[&str] = &["get", "try", "hello", "use", "meet", "join", "go", "with", "team"];
const SUFFIXES: &[&str] = &["hq", "team", "app", "mail", "labs", "co"];

/// The longest brand part of a look-alike (before the extension).
const MAX_LABEL: usize = 24;

/// The user's primary domain, from a website address: `https://www.Ledgerly.io/pricing` →
/// `ledgerly.io`. `None` when it is not a web address with a domain name.
pub fn primary_domain(website: &str) -> Option<String> {
    let lower = website.trim().to_ascii_lowercase();
    let rest = lower.strip_prefix("https://").or_else(|| lower.strip_prefix("http://")).unwrap_or(&lower);
    let authority = rest.split(['/', '?', '#']).next()?;
    let host = authority.rsplit('@').next()?.split(':').next()?.trim_end_matches('.');
    let host = host.strip_prefix("www.").unwrap_or(host);
    let labels: Vec<&str> = host.split('.').collect();
    if labels.len() < 2
        || labels.iter().any(|l| l.is_empty() || !l.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-'))
        || labels.last().is_some_and(|tld| tld.bytes().all(|b| b.is_ascii_digit()))
    {
        return None;
    }
    let n = labels.len();
    let keep = if n >= 3 && SECOND_LEVEL.contains(&format!("{}.{}", labels[n - 2], labels[n - 1]).as_str()) {
        3
    } else {
        2
    };
    if n < keep {
        return None;
    }
    Some(labels[n - keep..].join("."))
}

/// The brand of a registrable domain: its first label, letters and digits only
/// (`ledger-ly.co.uk` → `ledgerly`).
pub fn brand(domain: &str) -> String {
    domain.split('.').next().unwrap_or_default().chars().filter(char::is_ascii_alphanumeric).collect()
}

/// Whether `name` is a domain name a look-alike may use: lower-case letters (and dots), an
/// allowed extension, no hyphens or digits.
pub fn is_sending_domain(name: &str) -> bool {
    let Some((label, tld)) = name.split_once('.') else { return false };
    SENDING_TLDS.contains(&tld)
        && (3..=MAX_LABEL + 6).contains(&label.len())
        && label.bytes().all(|b| b.is_ascii_lowercase())
}

/// Why a domain may not be used for cold email, if it may not.
pub fn unsuitable(name: &str, primary: &str) -> Option<String> {
    let name = name.trim().trim_end_matches('.').to_ascii_lowercase();
    if name == primary {
        return Some(format!(
            "{name} is your primary domain: cold email from it puts your everyday mail at risk"
        ));
    }
    let (label, tld) = name.split_once('.').unwrap_or((&name, ""));
    if !SENDING_TLDS.contains(&tld) {
        return Some(format!("{name}: sending domains end in .com or .org"));
    }
    if label == brand(primary) {
        return Some(format!(
            "{name} is your brand on another extension, which reads as phishing next to {primary}"
        ));
    }
    if label.bytes().any(|b| b == b'-' || b.is_ascii_digit()) {
        return Some(format!("{name}: hyphens and digits look like spam"));
    }
    if !is_sending_domain(&name) {
        return Some(format!("{name} is not a usable domain name"));
    }
    None
}

/// Look-alike sending domains for the brand of `primary`, most natural first.
pub fn lookalikes(primary: &str) -> Vec<String> {
    let b = brand(primary).to_ascii_lowercase();
    let b: String = b.chars().filter(char::is_ascii_lowercase).collect();
    if b.len() < 2 {
        return Vec::new();
    }
    let mut out = Vec::new();
    let mut push = |label: String, tld: &str| {
        let name = format!("{label}.{tld}");
        if label.len() <= MAX_LABEL && !out.contains(&name) && unsuitable(&name, primary).is_none() {
            out.push(name);
        }
    };
    // A brand that starts with a prefix already (`getledgerly`) takes the others on its stem
    // (`tryledgerly`), never a second one (third journey walk: `getgetledgerly.com`).
    let stem = PREFIXES.iter().find_map(|p| b.strip_prefix(p).filter(|rest| rest.len() >= 2)).unwrap_or(&b);
    // Interleave prefixes and suffixes so the first few proposals differ in shape.
    let longest = PREFIXES.len().max(SUFFIXES.len());
    for i in 0..longest {
        if let Some(p) = PREFIXES.get(i) {
            push(format!("{p}{stem}"), "com");
        }
        if let Some(s) = SUFFIXES.get(i) {
            push(format!("{b}{s}"), "com");
        }
    }
    for p in PREFIXES.iter().take(3) {
        push(format!("{p}{stem}"), "org");
    }
    out
}

/// Folds a name to the letters a mailbox may use: lower-case ASCII, accents removed
/// (`Zoë` → `zoe`, `Jean-Luc` → `jeanluc`, `Strauß` → `strauss`).
pub fn fold(name: &str) -> String {
    let mut out = String::new();
    for c in name.to_lowercase().chars() {
        let ascii = match c {
            'a'..='z' => c.to_string(),
            'à' | 'á' | 'â' | 'ã' | 'ä' | 'å' | 'ā' | 'ą' => "a".into(),
            'æ' => "ae".into(),
            'ç' | 'ć' | 'č' => "c".into(),
            'ď' | 'đ' => "d".into(),
            'è' | 'é' | 'ê' | 'ë' | 'ē' | 'ę' | 'ě' => "e".into(),
            'ì' | 'í' | 'î' | 'ï' | 'ī' | 'ı' => "i".into(),
            'ł' | 'ľ' => "l".into(),
            'ñ' | 'ń' | 'ň' => "n".into(),
            'ò' | 'ó' | 'ô' | 'õ' | 'ö' | 'ø' | 'ō' | 'ő' => "o".into(),
            'œ' => "oe".into(),
            'ř' => "r".into(),
            'ś' | 'š' | 'ş' => "s".into(),
            'ß' => "ss".into(),
            'ť' | 'ţ' => "t".into(),
            'ù' | 'ú' | 'û' | 'ü' | 'ū' | 'ů' | 'ű' => "u".into(),
            'ý' | 'ÿ' => "y".into(),
            'ź' | 'ż' | 'ž' => "z".into(),
            _ => String::new(),
        };
        out.push_str(&ascii);
    }
    out
}

/// A mailbox name the user wrote (`Anna.Berg@…` → `anna.berg`): what is before `@`, folded
/// like [`fold`] but keeping digits and dots. `None` unless it is a valid mailbox name.
pub fn local_part_of(word: &str) -> Option<String> {
    let before = word.split('@').next().unwrap_or_default().trim_matches(|c: char| !c.is_alphanumeric());
    let mut out = String::new();
    for c in before.chars() {
        match c {
            '.' => out.push('.'),
            '0'..='9' => out.push(c),
            _ => out.push_str(&fold(&c.to_string())),
        }
    }
    is_local_part(&out).then_some(out)
}

/// A sender: the name prospects see and the parts mailbox names are made of.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sender {
    /// First name as written.
    pub first_name: String,
    /// Last name as written.
    pub last_name: String,
    first: String,
    last: String,
}

impl Sender {
    /// Splits a full name: the first word is the first name, the rest the last name. `None`
    /// unless both give letters a mailbox can use.
    pub fn parse(full_name: &str) -> Option<Sender> {
        let words: Vec<&str> = full_name.split_whitespace().collect();
        let (first_name, rest) = words.split_first()?;
        if rest.is_empty() {
            return None;
        }
        let last_name = rest.join(" ");
        let first = fold(first_name);
        let last = fold(&last_name);
        (first.len() >= 2 && !last.is_empty()).then(|| Sender {
            first_name: (*first_name).to_owned(),
            last_name,
            first,
            last,
        })
    }

    /// The full name.
    pub fn full_name(&self) -> String {
        format!("{} {}", self.first_name, self.last_name)
    }

    /// The mailbox name (the part before `@`) of a pattern.
    pub fn local_part(&self, pattern: Pattern) -> String {
        let f = &self.first;
        let l = &self.last;
        let fi = &f[..1];
        let li = &l[..1];
        match pattern {
            Pattern::First => f.clone(),
            Pattern::FirstDotLast => format!("{f}.{l}"),
            Pattern::InitialDotLast => format!("{fi}.{l}"),
            Pattern::FirstLast => format!("{f}{l}"),
            Pattern::FirstDotInitial => format!("{f}.{li}"),
            Pattern::FirstInitial => format!("{f}{li}"),
            Pattern::InitialLast => format!("{fi}{l}"),
            Pattern::Last => l.clone(),
        }
    }
}

/// How a mailbox name is made from the sender's name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pattern {
    /// `anna`
    First,
    /// `anna.berg`
    FirstDotLast,
    /// `a.berg`
    InitialDotLast,
    /// `annaberg`
    FirstLast,
    /// `anna.b`
    FirstDotInitial,
    /// `annab`
    FirstInitial,
    /// `aberg`
    InitialLast,
    /// `berg`
    Last,
}

/// Sets of patterns offered to the user, each naming up to five mailboxes per domain.
pub const PATTERN_SETS: &[(&str, [Pattern; 5])] = &[
    (
        "names",
        [
            Pattern::First,
            Pattern::FirstDotLast,
            Pattern::InitialDotLast,
            Pattern::FirstLast,
            Pattern::FirstDotInitial,
        ],
    ),
    (
        "short",
        [
            Pattern::First,
            Pattern::FirstInitial,
            Pattern::FirstDotInitial,
            Pattern::InitialLast,
            Pattern::Last,
        ],
    ),
];

/// Whether `local` can be a mailbox name (letters, digits, dots; no leading, trailing or double
/// dot; at most 40 characters).
pub fn is_local_part(local: &str) -> bool {
    !local.is_empty()
        && local.len() <= 40
        && local.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'.')
        && !local.starts_with('.')
        && !local.ends_with('.')
        && !local.contains("..")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_primary_domain_comes_from_the_website() {
        assert_eq!(primary_domain("https://www.Ledgerly.io/pricing").as_deref(), Some("ledgerly.io"));
        assert_eq!(primary_domain("http://app.acme.com:8080").as_deref(), Some("acme.com"));
        assert_eq!(primary_domain("https://shop.brand.co.uk/").as_deref(), Some("brand.co.uk"));
        assert_eq!(primary_domain("acme.com").as_deref(), Some("acme.com"));
        assert_eq!(primary_domain("https://localhost"), None);
        assert_eq!(primary_domain("https://127.0.0.1"), None);
        assert_eq!(primary_domain("https://"), None);
        assert_eq!(brand("ledger-ly.co.uk"), "ledgerly");
    }

    #[test]
    fn lookalikes_never_use_the_primary_domain() {
        let names = lookalikes("ledgerly.io");
        assert_eq!(&names[..4], ["getledgerly.com", "ledgerlyhq.com", "tryledgerly.com", "ledgerlyteam.com"]);
        assert!(names.len() >= 12);
        for n in &names {
            assert!(unsuitable(n, "ledgerly.io").is_none(), "{n}");
            assert!(n.ends_with(".com") || n.ends_with(".org"));
        }
        assert!(!names.contains(&"ledgerly.com".to_owned()), "never the brand on another extension");
        // A brand that starts with a prefix gets the others on its stem, never a second prefix.
        let get = lookalikes("getledgerly.com");
        assert_eq!(
            &get[..4],
            ["getledgerlyhq.com", "tryledgerly.com", "getledgerlyteam.com", "helloledgerly.com"]
        );
        assert!(get.iter().all(|n| !n.starts_with("getget") && !n.starts_with("tryget")), "{get:?}");
        // A .com brand never gets itself back.
        assert!(!lookalikes("acme.com").contains(&"acme.com".to_owned()));
        assert!(unsuitable("acme.com", "acme.com").unwrap().contains("primary domain"));
        assert!(unsuitable("acme.org", "acme.com").unwrap().contains("phishing"));
        assert!(unsuitable("get-acme.com", "acme.com").unwrap().contains("hyphens"));
        assert!(unsuitable("getacme.io", "acme.com").unwrap().contains(".com or .org"));
        assert!(unsuitable("GetAcme.com.", "acme.com").is_none());
        assert!(lookalikes("x.com").is_empty());
    }

    #[test]
    fn mailbox_names_come_from_the_sender() {
        let s = Sender::parse("  Zoë  Müller-Lüdenscheidt ").unwrap();
        assert_eq!(s.full_name(), "Zoë Müller-Lüdenscheidt");
        assert_eq!(s.local_part(Pattern::FirstDotLast), "zoe.mullerludenscheidt");
        let anna = Sender::parse("Anna Berg").unwrap();
        let names: Vec<String> = PATTERN_SETS[0].1.iter().map(|p| anna.local_part(*p)).collect();
        assert_eq!(names, ["anna", "anna.berg", "a.berg", "annaberg", "anna.b"]);
        let short: Vec<String> = PATTERN_SETS[1].1.iter().map(|p| anna.local_part(*p)).collect();
        assert_eq!(short, ["anna", "annab", "anna.b", "aberg", "berg"]);
        assert!(Sender::parse("Anna").is_none(), "a last name is needed");
        assert!(Sender::parse("李 王").is_none(), "no usable letters");
        assert_eq!(fold("Strauß"), "strauss");
        assert!(is_local_part("anna.berg") && !is_local_part("anna..berg") && !is_local_part(".anna"));
        assert_eq!(local_part_of("Zoë.Berg@getacme.com,").as_deref(), Some("zoe.berg"));
        assert_eq!(local_part_of("sales2"), Some("sales2".into()));
        assert_eq!(local_part_of("—"), None);
    }
}

//! Word lists the sandbox builds company and person names from. Company names are
//! `prefix + suffix + qualifier`, and the lists are chosen so that every combination spells a
//! different domain label (a test checks it), which lets a domain be parsed back to its
//! company for exclusions.
//!
//! The lists themselves are `names.txt`, one per line: the company prefixes, the suffixes, then
//! each [`Culture`]'s given names and surnames in the enum's order, embedded as text
//! (`src/embedded.rs`).

use crate::leads::vocab::Culture;

/// The lines of `names.txt`: two of company words, then two per culture.
const LINES: usize = 2 + 2 * Culture::COUNT;

/// The lists of `names.txt`, found once.
fn lists() -> &'static [&'static str; LINES] {
    thread_local! {
        // Kept for the isolate's life, as the text it points into is.
        static LISTS: &'static [&'static str; LINES] = {
            let mut lists = [""; LINES];
            for (slot, line) in lists.iter_mut().zip(crate::embedded::name_lists().lines()) {
                *slot = line;
            }
            Box::leak(Box::new(lists))
        };
    }
    LISTS.with(|lists| *lists)
}

/// First halves of company names.
pub fn prefixes() -> Words {
    Words(lists()[0])
}

/// Second halves of company names.
pub fn suffixes() -> Words {
    Words(lists()[1])
}

/// Endings of company names: the domain part and the name's qualifier.
pub const QUALIFIERS: &[(&str, &str)] = &[
    ("", ""),
    ("hq", ""),
    ("labs", " Labs"),
    ("group", " Group"),
    ("partners", " Partners"),
    ("global", " Global"),
    ("works", " Works"),
    ("systems", " Systems"),
];

/// Top-level domains; `None` stands for the company's country code domain.
pub const TLDS: &[Option<&str>] = &[Some("com"), Some("io"), Some("co"), Some("net"), None];

/// A list of words in one text, separated by commas.
#[derive(Debug, Clone, Copy)]
pub struct Words(&'static str);

impl Words {
    /// How many.
    pub fn count(self) -> usize {
        self.0.bytes().filter(|b| *b == b',').count() + 1
    }

    /// The `i`th (`i < count()`).
    pub fn get(self, i: usize) -> &'static str {
        self.iter().nth(i).unwrap_or_default()
    }

    /// Each, in order.
    pub fn iter(self) -> impl Iterator<Item = &'static str> {
        self.0.split(',')
    }
}

/// Given names and surnames per culture.
pub fn names(culture: Culture) -> (Words, Words) {
    let at = 2 + 2 * culture as usize;
    let lists = lists();
    (Words(lists[at]), Words(lists[at + 1]))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::leads::vocab::COUNTRIES;

    #[test]
    fn names_txt_has_a_line_per_list() {
        assert_eq!(crate::embedded::name_lists().lines().count(), LINES);
        assert!(lists().iter().all(|l| !l.is_empty()));
    }

    #[test]
    fn lists_have_no_repeats() {
        for list in [prefixes(), suffixes()] {
            let mut v: Vec<_> = list.iter().collect();
            v.sort_unstable();
            v.dedup();
            assert_eq!(v.len(), list.count());
        }
        for c in COUNTRIES {
            let (first, last) = names(c.culture);
            for list in [first, last] {
                assert!(list.iter().all(|n| !n.is_empty() && n.trim() == n), "{list:?}");
                let mut v: Vec<String> = list.iter().map(crate::leads::vocab::key).collect();
                v.sort();
                v.dedup();
                assert_eq!(v.len(), list.count(), "{:?}", c.culture);
                // Person names are spread with a multiplier of 7, which must be invertible.
                assert_ne!(list.count() % 7, 0, "{:?}", c.culture);
            }
        }
    }

    #[test]
    fn company_words_are_lower_case_ascii() {
        // They make domain names, and `capitalize` upper-cases their first letter as ASCII.
        for word in prefixes().iter().chain(suffixes().iter()) {
            assert!(
                !word.is_empty() && word.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit()),
                "{word}"
            );
        }
    }
}

//! Lower-casing text, as `str::to_lowercase` does, from a table of runs.
//!
//! `str::to_lowercase` and `char::to_uppercase` bring core's two case-mapping tables into the
//! Worker: a pair for every mapped code point, about 24 KB of data and 16.7 KB of the
//! Worker's gzip-compressed wasm (docs/scale.md, "Size"). The same lower-case mapping, written
//! as runs of a constant offset, is about 180 entries. `build.rs` derives them from the
//! toolchain's own `char::to_lowercase`, so they follow the Unicode version core follows;
//! the tests below hold every code point to it. `clippy.toml` disallows the standard methods,
//! so that none of them brings the tables back.
//!
//! One rule of `str::to_lowercase` is left out: a capital sigma at the end of a word becomes
//! `ς` there and `σ` here (Unicode's Final_Sigma context). The text lower-cased here is compared
//! with word lists and choices, or stored as a topic, where the two forms stand for one letter.

include!(concat!(env!("OUT_DIR"), "/lowercase.rs"));

/// `text` in lower case: `str::to_lowercase`, but for the final sigma (see the module).
pub fn lowercase(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        push_lowercase(&mut out, c);
    }
    out
}

/// Appends `c` in lower case: one character, or more for the few whose lower case is longer
/// (`İ` → `i̇`).
pub fn push_lowercase(out: &mut String, c: char) {
    if c.is_ascii() {
        out.push(c.to_ascii_lowercase());
    } else if let Some((_, lower)) = SPECIAL.iter().find(|(special, _)| *special == c) {
        out.push_str(lower);
    } else {
        out.push(lower_char(c));
    }
}

/// The single-character lower case of `c`, or `c`.
fn lower_char(c: char) -> char {
    let cp = u32::from(c);
    // The last run starting at or before `cp`: runs do not overlap, so no other can hold it.
    let Some(&(first, count, stride, delta)) =
        RUNS.get(RUNS.partition_point(|run| run.0 <= cp).wrapping_sub(1))
    else {
        return c;
    };
    let (offset, stride) = (cp - first, u32::from(stride));
    if offset % stride != 0 || offset / stride >= u32::from(count) {
        return c;
    }
    cp.checked_add_signed(delta).and_then(char::from_u32).unwrap_or(c)
}

#[cfg(test)]
#[allow(clippy::disallowed_methods)]
mod tests {
    use super::*;

    #[test]
    fn every_code_point_lowercases_as_the_standard_library_does() {
        let mut mapped = 0;
        for c in (0..=u32::from(char::MAX)).filter_map(char::from_u32) {
            let expected: String = c.to_lowercase().collect();
            let mut ours = String::new();
            push_lowercase(&mut ours, c);
            assert_eq!(ours, expected, "{c:?} (U+{:04X})", u32::from(c));
            mapped += usize::from(expected.chars().ne([c]));
        }
        // Over 1,400 code points have a lower case of their own: a table that mapped none would
        // still agree with the standard library on every other one.
        assert!(mapped > 1400, "{mapped}");
    }

    #[test]
    fn text_lowercases_as_the_standard_library_does_but_the_final_sigma() {
        for text in [
            "RÉPONSE À VOTRE MESSAGE",
            "Страница ДОСТУПНА",
            "ÆØÅ Ǆ ǅ ǆ Ǳ ΆΈΉ",
            "İSTANBUL",
            "Zoë STRAUß",
            "MIXED ascii Ünïcödé 123 !?",
            "",
        ] {
            assert_eq!(lowercase(text), text.to_lowercase(), "{text}");
        }
        assert_eq!("ΟΔΟΣ".to_lowercase(), "οδος");
        assert_eq!(lowercase("ΟΔΟΣ"), "οδοσ");
    }

    #[test]
    fn the_table_is_a_few_hundred_runs_in_order() {
        assert!(RUNS.len() < 400, "{}", RUNS.len());
        assert!(RUNS.windows(2).all(|w| w[0].0 + u32::from(w[0].1 - 1) * u32::from(w[0].2) < w[1].0));
        assert!(RUNS.iter().all(|&(_, count, stride, _)| count > 0 && matches!(stride, 1 | 2)));
    }
}

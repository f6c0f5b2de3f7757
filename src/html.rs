//! HTML text escaping, shared by every page and email this Worker writes (OAuth pages, the
//! account and web app pages, billing returns, the unsubscribe page, email HTML bodies). Any
//! text that is not our own literal markup goes through [`escape`]: client names, lead data and
//! provider text are untrusted.

/// Whether `c` shows nothing yet changes what a reader (or a model) takes text to say: control
/// characters other than the line feed and tab, bidi marks, overrides and isolates, the
/// zero-width space and word joiners, the soft hyphen, Unicode tags (invisible, yet read by a
/// model), and the blank Hangul filler and Braille pattern that pass for spaces. The joiners that
/// shape writing and emoji (U+200C, U+200D) and the variation selectors stay: they hide nothing.
pub fn invisible(c: char) -> bool {
    (c.is_control() && c != '\n' && c != '\t')
        || matches!(
            c,
            '\u{ad}'
                | '\u{61c}'
                | '\u{180e}'
                | '\u{200b}'
                | '\u{200e}'..='\u{200f}'
                | '\u{202a}'..='\u{202e}'
                | '\u{2060}'..='\u{206f}'
                | '\u{2800}'
                | '\u{3164}'
                | '\u{feff}'
                | '\u{e0000}'..='\u{e007f}'
        )
}

/// `text` cut to at most `max` characters, `…` after it when something was cut.
pub fn cut(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text.to_owned(),
    }
}

/// Escapes text for HTML element content and quoted attribute values.
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::escape;

    #[test]
    fn escapes_markup_and_both_quotes() {
        assert_eq!(
            escape(r#"<a href="x" title='y'>Tom & Jerry</a>"#),
            "&lt;a href=&quot;x&quot; title=&#39;y&#39;&gt;Tom &amp; Jerry&lt;/a&gt;"
        );
        assert_eq!(escape("Zoë — plain"), "Zoë — plain");
    }
}

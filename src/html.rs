//! HTML for every page and email body this Worker writes (OAuth pages, the account and web app
//! pages, billing pages, the unsubscribe page, email HTML bodies), through `maud`'s `html!`:
//! every interpolated value is escaped, so client names, lead data and provider text can never
//! become markup, and a page's body is `Markup`, never a `String`, so an unescaped `format!` does
//! not compile where markup is expected:
//!
//! ```
//! # use vibesell_connector::oauth::pages::Page;
//! let name = String::from("<script>");
//! let body = maud::html! { b { (name) } };
//! let page = Page { status: 200, title: name, name: "test", error: None, body, form_targets: vec![] };
//! assert_eq!(page.body.into_string(), "<b>&lt;script&gt;</b>");
//! ```
//!
//! ```compile_fail
//! # use vibesell_connector::oauth::pages::Page;
//! let name = String::from("<script>");
//! let body = format!("<b>{name}</b>");
//! let page = Page { status: 200, title: name, name: "test", error: None, body, form_targets: vec![] };
//! ```
//!
//! The only raw markup is `PreEscaped`, at the sites of this module that the tidy test of `html_tests.rs` allows: our
//! own stylesheets and scripts, and JSON escaped for a `<script>` block.

use maud::{Markup, PreEscaped, html};

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

/// An inline `<style>` of ours. Its text goes out as written: `<style>` is a raw text element,
/// where entities are not decoded, so escaping would change the stylesheet and its CSP hash.
pub fn style(css: &'static str) -> Markup {
    html! { style { (PreEscaped(css)) } }
}

/// An inline `<script>` of ours (the card's), as written, for the reason [`style`] gives.
pub fn script(js: &'static str) -> Markup {
    html! { script { (PreEscaped(js)) } }
}

/// A `<script type="application/json">` data block holding `value`, escaped for that context.
pub fn json_script(id: &'static str, value: &serde_json::Value) -> Markup {
    html! { script type="application/json" id=(id) { (PreEscaped(json_for_script(value))) } }
}

/// JSON as text of a `<script>` block: `<`, `>` and `&` as `\u` escapes, so that no string in
/// it (a summary, a note) can close the block (`</script>`), open a comment that swallows the
/// close (`<!--`) or start markup; U+2028 and U+2029 too, which older JavaScript parsers take
/// for line ends. `JSON.parse` reads every escape back as the same character. No crate does this
/// for `serde_json` output, and HTML escaping would be wrong here (a script block decodes no
/// entities).
fn json_for_script(value: &serde_json::Value) -> String {
    let text = value.to_string();
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '<' => out.push_str("\\u003c"),
            '>' => out.push_str("\\u003e"),
            '&' => out.push_str("\\u0026"),
            '\u{2028}' => out.push_str("\\u2028"),
            '\u{2029}' => out.push_str("\\u2029"),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
#[path = "html_tests.rs"]
pub(crate) mod tests;

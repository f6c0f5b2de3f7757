//! The escaping helpers every page's test uses, the JSON data block, and the tidy check that
//! raw markup (`PreEscaped`) appears only at the sites allowed below.

use std::path::Path;

use serde_json::{Value, json};

use super::*;

/// What every user-controlled field is set to in the pages' escaping tests: a script, both
/// quotes, an ampersand and a closing bracket.
pub(crate) const EVIL: &str = r#"<script>alert('x')</script>"&>"#;
/// [`EVIL`] as it must appear on a page, in text and in attribute values alike (maud quotes every
/// attribute with `"`, so `'` needs no escape).
pub(crate) const EVIL_ESCAPED: &str = "&lt;script&gt;alert('x')&lt;/script&gt;&quot;&amp;&gt;";

/// Asserts that `page`, rendered with `field` set to [`EVIL`], shows it escaped and never raw.
pub(crate) fn assert_escaped(page: &str, field: &str) {
    assert!(!page.contains(EVIL) && !page.contains("<script>alert"), "{field} is raw in {page}");
    assert!(page.contains(EVIL_ESCAPED), "{field} is not shown escaped in {page}");
}

#[test]
fn the_escape_of_the_test_payload_is_maud_s() {
    assert_eq!(
        html! { p title=(EVIL) { (EVIL) } }.into_string(),
        format!(r#"<p title="{EVIL_ESCAPED}">{EVIL_ESCAPED}</p>"#)
    );
}

#[test]
fn json_in_a_script_block_cannot_end_it() {
    let v = json!({ "a": "</script><!-- & \u{2028}\u{2029} <script>", "</script>": [">"] });
    let out = json_for_script(&v);
    for bad in ['<', '>', '&', '\u{2028}', '\u{2029}'] {
        assert!(!out.contains(bad), "{bad:?} in {out}");
    }
    assert_eq!(serde_json::from_str::<Value>(&out).unwrap(), v, "JSON.parse reads the same value back");
    let block = json_script("data", &v).into_string();
    assert!(block.starts_with(r#"<script type="application/json" id="data">{"#), "{block}");
    assert_eq!(block.matches("</script>").count(), 1, "{block}");
    assert!(!block.contains("<!--"));
}

#[test]
fn our_styles_and_scripts_go_out_as_written() {
    // A stylesheet's quotes must stay quotes: a `<style>` decodes no entities.
    assert_eq!(style("a{font:\"x\"}>b{}").into_string(), "<style>a{font:\"x\"}>b{}</style>");
    assert_eq!(script("if (a < b && c) {}").into_string(), "<script>if (a < b && c) {}</script>");
}

// ---- the tidy check ------------------------------------------------------------------------

/// Every function allowed to write raw markup, and why that is safe.
const RAW_MARKUP_SITES: &[(&str, &str, &str)] = &[
    ("src/html.rs", "style", "our own stylesheets, `&'static str` constants; `<style>` decodes no entities"),
    ("src/html.rs", "script", "the card's script, a constant; `<script>` decodes no entities"),
    ("src/html.rs", "json_script", "JSON escaped for the script context by `json_for_script`"),
];

/// The functions of `source` whose lines use `PreEscaped(`, or rename or re-implement a way to
/// write raw markup (an alias of `PreEscaped`, a `Render` impl of our own).
fn raw_markup_sites(source: &str) -> Vec<String> {
    let mut current = String::from("(top level)");
    let mut found = Vec::new();
    for line in source.lines() {
        // Comment lines only: a `//` later in a line may be inside a string ("https://").
        let code = if line.trim_start().starts_with("//") { "" } else { line };
        if let Some(at) = code.find("fn ") {
            let name: String =
                code[at + 3..].chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
            if !name.is_empty() {
                current = name;
            }
        }
        let raw = code.contains(concat!("PreEscaped", "("))
            || code.contains(concat!("PreEscaped", " as "))
            || code.contains(concat!("Render", " for "));
        if raw && !found.contains(&current) {
            found.push(current.clone());
        }
    }
    found
}

fn rust_files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

#[test]
fn raw_markup_only_at_the_allowed_sites() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    rust_files(&root.join("src"), &mut files);
    let mut seen = Vec::new();
    for file in files {
        let name = file.strip_prefix(root).unwrap().to_string_lossy().replace('\\', "/");
        if name == "src/html_tests.rs" {
            continue;
        }
        for site in raw_markup_sites(&std::fs::read_to_string(&file).unwrap()) {
            assert!(
                RAW_MARKUP_SITES.iter().any(|(f, s, _)| *f == name && *s == site),
                "raw markup in {name}, fn {site}: write it with html! (escaped), or add the site to \
                 RAW_MARKUP_SITES with why it is safe"
            );
            seen.push((name.clone(), site));
        }
    }
    for (file, site, _) in RAW_MARKUP_SITES {
        assert!(seen.iter().any(|(f, s)| f == file && s == site), "{file} {site} is allowed but gone");
    }
}

#[test]
fn the_tidy_check_finds_raw_markup() {
    let source = "fn fine() { html! { (x) } }\npub(crate) fn sneaky(x: &str) -> Markup {\n    \
                  html! { (maud::PreEscaped(x)) }\n}\nfn after() {}\n";
    assert_eq!(raw_markup_sites(source), ["sneaky"]);
    assert_eq!(raw_markup_sites("use maud::PreEscaped as Raw;\n"), ["(top level)"]);
    assert_eq!(raw_markup_sites("fn f() {}\nimpl maud::Render for Mine {}\n"), ["f"]);
    assert!(raw_markup_sites("fn f() {}\n    // PreEscaped(x) in a comment is no markup\n").is_empty());
}

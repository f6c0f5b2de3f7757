//! The VibeSell card: one self-contained HTML document (an MCP App view) assembled at build
//! time from `card/` by `build.rs`, and the `ui://` resource that serves it.

/// The card HTML, CSS and JS inlined.
pub fn html() -> &'static str {
    crate::embedded::card()
}

/// SHA-256 of [`html`], hex.
pub const SHA256: &str = env!("CARD_SHA256");

/// A decimal number that `build.rs` exported, at compile time.
pub(crate) const fn offset(digits: &str) -> usize {
    let bytes = digits.as_bytes();
    let mut i = 0;
    let mut n = 0;
    while i < bytes.len() {
        n = n * 10 + (bytes[i] - b'0') as usize;
        i += 1;
    }
    n
}

const CSS_RANGE: (usize, usize) = (offset(env!("CARD_CSS_START")), offset(env!("CARD_CSS_END")));
const JS_RANGE: (usize, usize) = (offset(env!("CARD_JS_START")), offset(env!("CARD_JS_END")));

/// The card's stylesheet, as inlined in [`html`]: the VibeSell web pages render with the card's
/// own views (`src/webapp.rs`).
pub fn style() -> &'static str {
    html().get(CSS_RANGE.0..CSS_RANGE.1).unwrap_or_default()
}

/// The card's script, as inlined in [`html`] (see [`style`]).
pub fn script() -> &'static str {
    html().get(JS_RANGE.0..JS_RANGE.1).unwrap_or_default()
}

/// The CSP source that allows [`style`] inline (`'sha256-…'`).
pub const STYLE_CSP: &str = env!("CARD_CSS_CSP");
/// The CSP source that allows [`script`] inline.
pub const SCRIPT_CSP: &str = env!("CARD_JS_CSP");

/// The MIME type MCP Apps hosts recognise (MCP Apps §UI resource format).
pub const MIME_TYPE: &str = "text/html;profile=mcp-app";

/// Every `ui://vibesell/card-{anything}` URI returns the current card, so a host holding an
/// old tool list still gets a card (seed 002 "resources").
const URI_PREFIX: &str = "ui://vibesell/card-";

/// The URI of the current card: the prefix and the first 12 hex digits of its SHA-256.
pub fn resource_uri() -> &'static str {
    static URI: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    URI.get_or_init(|| format!("{URI_PREFIX}{}", &SHA256[..12]))
}

/// Whether `uri` names the card (any version).
pub fn is_card_uri(uri: &str) -> bool {
    uri.strip_prefix(URI_PREFIX).is_some_and(|version| {
        !version.is_empty()
            && version.len() <= 64
            && version.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_' || b == b'.')
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_uri_is_named_by_the_content_hash() {
        assert_eq!(SHA256, crate::ids::sha256_hex(html().as_bytes()));
        assert_eq!(resource_uri(), format!("ui://vibesell/card-{}", &SHA256[..12]));
        assert!(is_card_uri(resource_uri()));
        assert!(is_card_uri("ui://vibesell/card-2f87d8dc967b"));
        assert!(!is_card_uri("ui://vibesell/card-"));
        assert!(!is_card_uri("ui://vibesell/other"));
        assert!(!is_card_uri("ui://vibesell/card-a/b"));
    }

    #[test]
    fn the_style_and_script_are_the_inlined_ones_with_their_csp_hashes() {
        use base64::Engine as _;
        use sha2::{Digest, Sha256};
        let csp = |text: &str| {
            format!("'sha256-{}'", base64::engine::general_purpose::STANDARD.encode(Sha256::digest(text)))
        };
        assert!(html().contains(&format!("<style>\n{}\n</style>", style())));
        assert!(html().contains(&format!("<script>\n{}\n</script>", script())));
        // build.rs ships the stylesheet and the script as `scripts/card-build.mjs` minified them.
        assert_eq!(style(), include_str!("../card/min/card.css").trim_end());
        assert_eq!(script(), include_str!("../card/min/card.js").trim_end());
        // One function called at once, in strict mode (terser writes the call as `!function(){…}()`).
        assert!(script().starts_with("!function(){\"use strict\";"), "{}", &script()[..40]);
        assert_eq!(csp(style()), STYLE_CSP);
        assert_eq!(csp(script()), SCRIPT_CSP);
    }

    #[test]
    fn the_card_is_self_contained() {
        assert!(html().starts_with("<!doctype html>"));
        assert!(!html().contains("/*@card"));
        // No network: no external scripts, styles, fonts, images or requests.
        for external in [
            "<link",
            "<script src",
            "@import",
            "url(",
            "fetch(",
            "XMLHttpRequest",
            "WebSocket",
            "src=\"http",
            "href=\"http",
        ] {
            assert!(!html().contains(external), "card references {external}");
        }
    }

    #[test]
    fn the_card_never_parses_data_as_markup() {
        // Result data reaches the page as text nodes only (ARCHITECTURE.md invariants); these
        // are the ways a string becomes markup or code.
        for sink in
            ["innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval(", "new Function"]
        {
            assert!(!html().contains(sink), "card uses {sink}");
        }
    }
}

/// The example results the card is designed and tested against (`tests/fixtures/card/`, one per
/// kind of seed 001's table) must be what the tools really return: once a tool producing a kind
/// is in the catalogue, that kind's fixture has to validate against the tool's output schema, so
/// the browser tests keep exercising the card with the real shape.
#[cfg(test)]
mod fixture_tests {
    use serde_json::Value;

    use crate::tools::{ALL, schema};

    fn fixtures() -> Vec<(String, Value)> {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/card");
        let mut out: Vec<(String, Value)> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|x| x == "json"))
            .map(|p| {
                let kind = p.file_stem().unwrap().to_str().unwrap().to_owned();
                let v: Value = serde_json::from_str(&std::fs::read_to_string(&p).unwrap()).unwrap();
                (kind, v)
            })
            .collect();
        out.sort_by(|a, b| a.0.cmp(&b.0));
        out
    }

    #[test]
    fn each_fixture_is_one_kind_with_a_summary() {
        let all = fixtures();
        assert_eq!(all.len(), 26, "one fixture per kind of seed 001's table");
        for (kind, f) in &all {
            assert_eq!(f["structuredContent"]["kind"], kind.as_str(), "{kind}.json carries its kind");
            assert!(f["text"].as_str().is_some_and(|t| !t.is_empty()), "{kind}.json has the model's text");
            assert!(f["tool"].is_string(), "{kind}.json names a tool that returns it");
        }
    }

    #[test]
    fn fixtures_match_the_output_schemas_of_the_tools_that_exist() {
        let all = fixtures();
        for tool in ALL {
            let output = tool.output_schema();
            for kind in schema::kinds(&output) {
                let Some((_, fixture)) = all.iter().find(|(k, _)| *k == kind) else {
                    panic!("{}: no tests/fixtures/card/{kind}.json", tool.name());
                };
                if let Err(e) = schema::validate(&output, &fixture["structuredContent"]) {
                    panic!(
                        "tests/fixtures/card/{kind}.json does not match what {} returns: {e}. \
                         Align the fixture with the real output (and card/card.js's view of {kind}).",
                        tool.name()
                    );
                }
            }
        }
    }
}

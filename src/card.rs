//! The VibeSell card: one self-contained HTML document (an MCP App view) assembled at build
//! time from `card/` by `build.rs`, and the `ui://` resource that serves it.

/// The card HTML, CSS and JS inlined.
pub const HTML: &str = include_str!(concat!(env!("OUT_DIR"), "/card.html"));

/// SHA-256 of [`HTML`], hex.
pub const SHA256: &str = env!("CARD_SHA256");

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
        assert_eq!(SHA256, crate::ids::sha256_hex(HTML.as_bytes()));
        assert_eq!(resource_uri(), format!("ui://vibesell/card-{}", &SHA256[..12]));
        assert!(is_card_uri(resource_uri()));
        assert!(is_card_uri("ui://vibesell/card-2f87d8dc967b"));
        assert!(!is_card_uri("ui://vibesell/card-"));
        assert!(!is_card_uri("ui://vibesell/other"));
        assert!(!is_card_uri("ui://vibesell/card-a/b"));
    }

    #[test]
    fn the_card_is_self_contained() {
        assert!(HTML.starts_with("<!doctype html>"));
        assert!(!HTML.contains("/*@card"));
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
            assert!(!HTML.contains(external), "card references {external}");
        }
    }
}

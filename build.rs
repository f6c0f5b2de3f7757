//! Assembles the card (MCP App) from its web sources in `card/` (the script and stylesheet as
//! `scripts/card-build.mjs` minifies them into `card/min/`) into one self-contained HTML
//! document, and names it by the SHA-256 of that document (PRODUCT §1: the content hash names
//! the `ui://` resource). It also says where the stylesheet and script sit in that document, with
//! their CSP hashes, so the VibeSell web pages (`src/webapp.rs`) serve the card's very views under
//! a policy that allows exactly those two inline blocks.
//!
//! It also turns the tools' JSON Schemas (`src/tools/schemas.json`, generated from the Rust
//! declarations by `cargo test`, see `src/tools/schema.rs`) into a table of compact JSON strings
//! the Worker embeds (`src/embedded.rs`), so that schema derivation never runs, or ships, in the
//! Worker.

// A build script reports failure by panicking; there is no caller to return errors to.
#![allow(clippy::expect_used)]

use std::fmt::Write as _;
use std::path::Path;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use sha2::{Digest, Sha256};

fn read(path: &str) -> String {
    println!("cargo:rerun-if-changed={path}");
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("reading {path}: {e}"))
}

fn main() {
    let html = read("card/card.html");
    // The script and stylesheet as minified by `scripts/card-build.mjs` (committed; bin/test
    // checks they are current), so that this build needs no Node.
    let css = read("card/min/card.css");
    let js = read("card/min/card.js");
    // The markers are replaced exactly once each; a missing marker is a build error so the card
    // can never ship without its style or script.
    for marker in ["/*@card.css*/", "/*@card.js*/"] {
        assert_eq!(html.matches(marker).count(), 1, "card/card.html must contain {marker} once");
    }
    assert!(!js.contains("</script"), "card.js must not contain </script");
    assert!(!css.contains("</style"), "card.css must not contain </style");
    let (css, js) = (css.trim_end(), js.trim_end());
    let out = html.replace("/*@card.css*/", css).replace("/*@card.js*/", js);
    // Offsets of the inlined stylesheet and script (markers replaced once each, CSS first in
    // the template), for `card::style()` and `card::script()`.
    let css_start = html.find("/*@card.css*/").expect("marker");
    let js_start = html.find("/*@card.js*/").expect("marker") - "/*@card.css*/".len() + css.len();
    assert!(css_start < js_start, "card/card.html must have its style before its script");
    for (name, start, text) in [("CSS", css_start, css), ("JS", js_start, js)] {
        assert_eq!(&out[start..start + text.len()], text);
        println!("cargo:rustc-env=CARD_{name}_START={start}");
        println!("cargo:rustc-env=CARD_{name}_END={}", start + text.len());
        println!(
            "cargo:rustc-env=CARD_{name}_CSP='sha256-{}'",
            STANDARD.encode(Sha256::digest(text.as_bytes()))
        );
    }
    let digest = Sha256::digest(out.as_bytes());
    let mut hex = String::new();
    for b in digest.iter() {
        let _ = write!(hex, "{b:02x}");
    }
    let out_dir = std::env::var("OUT_DIR").expect("OUT_DIR");
    println!("cargo:rustc-env=CARD_SHA256={hex}");

    let out_dir = Path::new(&out_dir);
    std::fs::write(out_dir.join("card.html"), out).expect("writing card.html");
    let schema_text = embed_schemas(&out_dir.join("schemas.rs"));
    std::fs::write(out_dir.join("schemas.txt"), schema_text).expect("writing schemas.txt");
    // The sandbox's word lists (`src/embedded.rs` includes the file): two lines of company
    // words, then two per culture (`leads::sandbox::names`), none empty.
    let names = read("src/leads/sandbox/names.txt");
    assert!(
        names.ends_with('\n') && names.lines().all(|l| !l.trim().is_empty() && !l.contains(",,")),
        "src/leads/sandbox/names.txt: one non-empty list per line"
    );
}

/// Returns the schema text, the distinct schemas of `src/tools/schemas.json` (as compact JSON)
/// one after the other, and writes `SCHEMAS: &[(name, [input from, to, output from, to])]`,
/// sorted by name, into `out`.
/// A missing or unreadable file (a merge conflict, a new tool not yet generated) gives an empty
/// or partial table and a warning rather than a failed build, because the file is regenerated
/// by `UPDATE_SNAPSHOTS=1 cargo test`, which needs the crate to build;
/// `tools::tests::embedded_schemas_are_current` fails until it is current, and the Worker leaves
/// a tool without schemas out of `tools/list` rather than list it with a wrong contract.
///
/// Each distinct schema is in the text once, however many tools share it.
fn embed_schemas(out: &Path) -> String {
    let path = "src/tools/schemas.json";
    println!("cargo:rerun-if-changed={path}");
    let tools = std::fs::read_to_string(path)
        .map_err(|e| e.to_string())
        .and_then(|text| {
            serde_json::from_str::<serde_json::Map<String, serde_json::Value>>(&text)
                .map_err(|e| e.to_string())
        })
        .unwrap_or_else(|e| {
            println!("cargo:warning={path} is unusable ({e}); run UPDATE_SNAPSHOTS=1 cargo test");
            serde_json::Map::new()
        });
    // Sorted by name: the lookup is a binary search.
    let mut tools: Vec<_> = tools.iter().collect();
    tools.sort_by(|a, b| a.0.cmp(b.0));
    // Compact JSON (`Value`'s `Display`); a missing schema is empty.
    let text =
        |schemas: &serde_json::Value, key: &str| schemas.get(key).map(|s| s.to_string()).unwrap_or_default();
    const PARTS: [&str; 2] = ["input", "output"];
    let mut texts: Vec<String> =
        tools.iter().flat_map(|(_, schemas)| PARTS.map(|part| text(schemas, part))).collect();
    texts.sort();
    texts.dedup();
    let mut blob = String::new();
    let at: std::collections::BTreeMap<&String, (usize, usize)> = texts
        .iter()
        .map(|t| {
            blob.push_str(t);
            (t, (blob.len() - t.len(), blob.len()))
        })
        .collect();
    // The text itself goes into `texts`.
    let mut rust = String::from(
        "/// (tool name, [input from, to, output from, to] in the schema text), sorted by name.\n\
         pub static SCHEMAS: &[(&str, [u32; 4])] = &[\n",
    );
    for (name, schemas) in tools {
        let [(a, b), (c, d)] = PARTS.map(|part| at[&text(schemas, part)]);
        let _ = writeln!(rust, "    ({name:?}, [{a}, {b}, {c}, {d}]),");
    }
    rust.push_str("];\n");
    std::fs::write(out, rust).expect("writing schemas.rs");
    blob
}

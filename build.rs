//! Assembles the card (MCP App) from its web sources in `card/` into one self-contained HTML
//! document, and names it by the SHA-256 of that document (PRODUCT §1: the content hash names
//! the `ui://` resource). It also says where the stylesheet and script sit in that document, with
//! their CSP hashes, so the VibeSell web pages (`src/webapp.rs`) serve the card's very views under
//! a policy that allows exactly those two inline blocks.

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
    let css = read("card/card.css");
    let js = read("card/card.js");
    // The markers are replaced exactly once each; a missing marker is a build error so the card
    // can never ship without its style or script.
    for marker in ["/*@card.css*/", "/*@card.js*/"] {
        assert_eq!(html.matches(marker).count(), 1, "card/card.html must contain {marker} once");
    }
    assert!(!js.contains("</script"), "card.js must not contain </script");
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
    std::fs::write(Path::new(&out_dir).join("card.html"), &out).expect("writing card.html");
    println!("cargo:rustc-env=CARD_SHA256={hex}");
}

//! Assembles the card (MCP App) from its web sources in `card/` into one self-contained HTML
//! document, and names it by the SHA-256 of that document (PRODUCT §1: the content hash names
//! the `ui://` resource).

// A build script reports failure by panicking; there is no caller to return errors to.
#![allow(clippy::expect_used)]

use std::fmt::Write as _;
use std::path::Path;

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
    let out = html.replace("/*@card.css*/", css.trim_end()).replace("/*@card.js*/", js.trim_end());
    let digest = Sha256::digest(out.as_bytes());
    let mut hex = String::new();
    for b in digest.iter() {
        let _ = write!(hex, "{b:02x}");
    }
    let out_dir = std::env::var("OUT_DIR").expect("OUT_DIR");
    std::fs::write(Path::new(&out_dir).join("card.html"), &out).expect("writing card.html");
    println!("cargo:rustc-env=CARD_SHA256={hex}");
}

//! The Worker's large texts, the card (`card::html`), the tools' schema text (`tools::schema`)
//! and the sandbox's word lists (`leads::sandbox::names`), as `build.rs` packs them: one brotli
//! stream in the module, which the runtime's own brotli decoder (`node:zlib`, `edge::unpack`)
//! turns back into text once per isolate, on first use (the start's rehearsal lists the tools).
//! The card and the schemas take 30.9 KB that way, where gzip left about 35 KB of them; the
//! module is 3 KB smaller (docs/scale.md, "Size"), and no decoder ships in the wasm. Natively
//! they are embedded as text.

/// The card's length in bytes: it comes first, the schema text after it, then the word lists.
const CARD_LEN: usize = crate::card::offset(env!("CARD_LEN"));
/// Where the word lists start, after the schema text.
const NAMES_START: usize = crate::card::offset(env!("NAMES_START"));

#[cfg(target_arch = "wasm32")]
fn all() -> &'static str {
    static PACKED: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/texts.br"));
    thread_local! {
        // Kept for the isolate's life, as a static text would be.
        static ALL: &'static str =
            String::from_utf8(crate::edge::unpack(PACKED)).map_or("", |text| Box::leak(text.into_boxed_str()));
    }
    ALL.with(|all| *all)
}

#[cfg(not(target_arch = "wasm32"))]
fn all() -> &'static str {
    include_str!(concat!(env!("OUT_DIR"), "/texts.txt"))
}

/// The card document (`card::html`).
pub fn card() -> &'static str {
    all().get(..CARD_LEN).unwrap_or_default()
}

/// The schema text (`tools::schema`).
pub fn schema_text() -> &'static str {
    all().get(CARD_LEN..NAMES_START).unwrap_or_default()
}

/// The sandbox's word lists (`leads::sandbox::names`, from `src/leads/sandbox/names.txt`).
pub fn name_lists() -> &'static str {
    all().get(NAMES_START..).unwrap_or_default()
}

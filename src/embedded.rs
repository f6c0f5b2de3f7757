//! The Worker's large texts, embedded as text: the card (`card::html`), the tools' schema text
//! (`tools::schema`) and the sandbox's word lists (`leads::sandbox::names`). The card and the
//! schema text are assembled by `build.rs`; the word lists are `src/leads/sandbox/names.txt`.

/// The card document (`card::html`).
pub fn card() -> &'static str {
    include_str!(concat!(env!("OUT_DIR"), "/card.html"))
}

/// The schema text (`tools::schema`).
pub fn schema_text() -> &'static str {
    include_str!(concat!(env!("OUT_DIR"), "/schemas.txt"))
}

/// The sandbox's word lists (`leads::sandbox::names`, from `src/leads/sandbox/names.txt`).
pub fn name_lists() -> &'static str {
    include_str!("leads/sandbox/names.txt")
}

//! VibeSell's remote MCP connector: one Cloudflare Worker that speaks MCP over stateless
//! Streamable HTTP, authenticates OAuth bearer tokens, and runs typed tools against each
//! user's workspace, kept in a SQLite-backed Durable Object.
//!
//! Everything here is plain Rust that `cargo test` runs natively, except `edge`, the only
//! module that names the `worker` crate (compiled for wasm32 only). See `ARCHITECTURE.md`.

pub mod auth;
pub mod billing_http;
pub mod card;
pub mod compliance;
pub mod config;
pub mod dates;
pub mod deliverability;
pub mod emails;
pub mod embedded;
pub mod estimate;
pub mod form;
pub mod gzip;
pub mod html;
pub mod http;
pub mod ids;
pub mod kv;
pub mod leads;
pub mod log;
pub mod mcp;
pub mod oauth;
pub mod outbound;
pub mod plans;
pub mod providers;
pub mod rehearsal;
pub mod sending;
pub mod store;
pub mod tools;
pub mod unsubscribe_http;
pub mod urls;
pub mod webapp;
pub mod workspace;

#[cfg(target_arch = "wasm32")]
mod edge;

#[cfg(test)]
pub mod testing;

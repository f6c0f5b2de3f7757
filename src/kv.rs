//! The key-value port: Workers KV (`OAUTH_KV`) on the Worker, a map in native tests.
//!
//! KV is eventually consistent across locations (a write can take up to a minute to be seen
//! elsewhere) and cannot expire anything sooner than 60 s, so it only holds records that are
//! written once and read often: OAuth clients and cached client metadata documents. Anything
//! single-use or rotating lives in a Durable Object instead (`docs/storage.md`).

use crate::tools::registry::LocalBoxFuture;

/// The shortest expiry KV accepts.
pub const MIN_TTL_SECS: u32 = 60;

/// Longest key KV accepts, in bytes.
pub const MAX_KEY_BYTES: usize = 512;

/// A KV failure; the text is for logs.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("kv: {0}")]
pub struct KvError(pub String);

/// Reads and writes string values.
pub trait Kv {
    /// The value at `key`, if any.
    fn get(&self, key: String) -> LocalBoxFuture<'_, Result<Option<String>, KvError>>;
    /// Writes `value` at `key`, expiring after `ttl_secs` (at least [`MIN_TTL_SECS`]).
    fn put(&self, key: String, value: String, ttl_secs: u32) -> LocalBoxFuture<'_, Result<(), KvError>>;
    /// Removes `key`.
    fn delete(&self, key: String) -> LocalBoxFuture<'_, Result<(), KvError>>;
}

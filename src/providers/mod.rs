//! Outside services, each behind a Rust trait and chosen by `PROVIDER_MODE` (PRODUCT §9): a
//! deterministic **sandbox** simulation inside the Worker (the default; its state lives in the
//! workspace's own tables, prefixed `sandbox_`), or the **live** provider through the
//! [`Outbound`](crate::outbound::Outbound) port, tested against a local HTTP fake that follows
//! the provider's documented API.
//!
//! Adapters speak in the domain's terms and report failures as [`ProviderError`], whose kind
//! says whether the outcome is known (so approvals know whether a retry is needed).

pub mod billing;
pub mod sandbox_billing;
pub mod stripe;

/// Why a provider call failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ProviderError {
    /// The provider refused on the user's side (a declined card…). Definite: nothing was done.
    /// The text is safe to show the user.
    #[error("declined: {0}")]
    Declined(String),
    /// The provider refused the request itself (4xx). Definite: nothing was done. For the log.
    #[error("rejected: {0}")]
    Rejected(String),
    /// No usable answer (network, timeout, 429, 5xx): the outcome is unknown. For the log.
    #[error("unavailable: {0}")]
    Unavailable(String),
    /// The deployment is missing a key or setting. For the log.
    #[error("misconfigured: {0}")]
    Misconfigured(String),
}

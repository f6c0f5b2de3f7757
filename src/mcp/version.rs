//! MCP protocol versions and what each one's wire format contains (MCP-CONFORMANCE §0).
//!
//! The server is stateless, so the version is decided per request: from `params.protocolVersion`
//! for `initialize`, otherwise from the `MCP-Protocol-Version` header (2025-03-26 when absent,
//! transports §protocol-version-header). Results are shaped to that version.

/// A protocol revision this server speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Version {
    /// 2024-11-05: no annotations, titles or structured content.
    V2024_11_05,
    /// 2025-03-26: tool annotations, JSON-RPC batches.
    V2025_03_26,
    /// 2025-06-18: titles, `outputSchema`, `structuredContent`, `_meta`; no batches.
    V2025_06_18,
    /// 2025-11-25: icons and the extended `Implementation`.
    V2025_11_25,
}

impl Version {
    /// The newest version, offered when a client asks for one we do not know (lifecycle §version
    /// negotiation).
    pub const LATEST: Version = Version::V2025_11_25;

    /// Assumed when a request carries no `MCP-Protocol-Version` header (transports §2.7).
    pub const DEFAULT_WITHOUT_HEADER: Version = Version::V2025_03_26;

    /// Every supported version, newest first.
    pub const ALL: [Version; 4] =
        [Version::V2025_11_25, Version::V2025_06_18, Version::V2025_03_26, Version::V2024_11_05];

    /// The wire string.
    pub fn as_str(self) -> &'static str {
        match self {
            Version::V2024_11_05 => "2024-11-05",
            Version::V2025_03_26 => "2025-03-26",
            Version::V2025_06_18 => "2025-06-18",
            Version::V2025_11_25 => "2025-11-25",
        }
    }

    /// Parses a wire string; `None` for anything unsupported.
    pub fn parse(s: &str) -> Option<Version> {
        Version::ALL.into_iter().find(|v| v.as_str() == s)
    }

    /// The version to answer `initialize` with: the client's when we support it, else the latest.
    pub fn negotiate(requested: &str) -> Version {
        Version::parse(requested).unwrap_or(Version::LATEST)
    }

    /// Whether a POST body may be a JSON-RPC batch: only 2025-03-26 requires it (basic §batching;
    /// 2025-06-18 removed it).
    pub fn allows_batches(self) -> bool {
        self == Version::V2025_03_26
    }

    /// Tool annotations exist from 2025-03-26.
    pub fn has_annotations(self) -> bool {
        self >= Version::V2025_03_26
    }

    /// `title`, `outputSchema`, `structuredContent` and `_meta` exist from 2025-06-18.
    pub fn has_structured_content(self) -> bool {
        self >= Version::V2025_06_18
    }

    /// `description`, `websiteUrl` and `icons` on `Implementation` exist from 2025-11-25.
    pub fn has_icons(self) -> bool {
        self >= Version::V2025_11_25
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn negotiates() {
        assert_eq!(Version::negotiate("2025-06-18"), Version::V2025_06_18);
        assert_eq!(Version::negotiate("2024-11-05"), Version::V2024_11_05);
        assert_eq!(Version::negotiate("2025-03-26"), Version::V2025_03_26);
        assert_eq!(Version::negotiate("2025-11-25"), Version::V2025_11_25);
        assert_eq!(Version::negotiate("2099-01-01"), Version::LATEST);
        assert_eq!(Version::negotiate("1.0.0"), Version::LATEST);
        assert_eq!(Version::parse("2026-07-28"), None);
        assert_eq!(Version::parse("2024-10-07"), None);
    }

    #[test]
    fn shapes_by_version() {
        assert!(Version::V2025_03_26.allows_batches());
        assert!(!Version::V2025_06_18.allows_batches());
        assert!(!Version::V2024_11_05.allows_batches());
        assert!(!Version::V2024_11_05.has_annotations());
        assert!(Version::V2025_03_26.has_annotations());
        assert!(!Version::V2025_03_26.has_structured_content());
        assert!(Version::V2025_06_18.has_structured_content());
        assert!(!Version::V2025_06_18.has_icons());
        assert!(Version::V2025_11_25.has_icons());
    }
}

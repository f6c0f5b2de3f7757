//! The resource-server side of OAuth: who is calling the MCP endpoint and what they may do.
//!
//! `bearer` turns the `Authorization` header into a [`Principal`] or a 401/400 challenge;
//! `jwt` signs and verifies access tokens. The MCP layer only ever sees a `Principal`.

pub mod bearer;
pub mod jwt;

use serde::{Deserialize, Serialize};

/// The OAuth scopes of this server (PRODUCT §3).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Scope {
    /// `mcp`: read the workspace.
    #[serde(rename = "mcp")]
    Read,
    /// `mcp:act`: change the workspace and ask for approvals.
    #[serde(rename = "mcp:act")]
    Act,
}

impl Scope {
    /// Every scope, in the order they are advertised.
    pub const ALL: [Scope; 2] = [Scope::Read, Scope::Act];

    /// The scope's wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            Scope::Read => "mcp",
            Scope::Act => "mcp:act",
        }
    }

    /// Parses one wire name.
    pub fn parse(s: &str) -> Option<Scope> {
        Scope::ALL.into_iter().find(|scope| scope.as_str() == s)
    }
}

/// Every scope as the space-separated string used in challenges and metadata.
pub const ALL_SCOPES: &str = "mcp mcp:act";

/// The scopes a token carries.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ScopeSet {
    /// Carries `mcp`.
    pub read: bool,
    /// Carries `mcp:act`.
    pub act: bool,
}

impl ScopeSet {
    /// Both scopes.
    pub const FULL: ScopeSet = ScopeSet { read: true, act: true };
    /// Read only.
    pub const READ: ScopeSet = ScopeSet { read: true, act: false };

    /// Parses a space-separated scope string; unknown scopes are an error so that nothing is
    /// silently dropped (RFC 6749 §3.3). The error does not quote the scope: it becomes an
    /// `error_description`, which must not echo the client's text nor hold `"` or `\`
    /// (RFC 6749 §5.2, §4.1.2.1).
    pub fn parse(s: &str) -> Result<ScopeSet, String> {
        let mut set = ScopeSet::default();
        for word in s.split(' ').filter(|w| !w.is_empty()) {
            match Scope::parse(word) {
                Some(Scope::Read) => set.read = true,
                Some(Scope::Act) => set.act = true,
                None => return Err("unknown scope".into()),
            }
        }
        Ok(set)
    }

    /// Whether the set holds `scope`.
    pub fn contains(self, scope: Scope) -> bool {
        match scope {
            Scope::Read => self.read,
            Scope::Act => self.act,
        }
    }

    /// The set with what it implies: acting implies reading, since `tools/list` always shows the
    /// read tools (at `/authorize` and on refresh alike).
    pub fn implied(self) -> ScopeSet {
        ScopeSet { read: self.read || self.act, act: self.act }
    }

    /// Whether every scope of `other` is in this set.
    pub fn covers(self, other: ScopeSet) -> bool {
        Scope::ALL.into_iter().all(|s| !other.contains(s) || self.contains(s))
    }

    /// The space-separated wire form.
    pub fn to_wire(self) -> String {
        Scope::ALL.into_iter().filter(|s| self.contains(*s)).map(Scope::as_str).collect::<Vec<_>>().join(" ")
    }
}

/// The authenticated caller of one MCP request, taken from a verified access token.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Principal {
    /// The user (token `sub`).
    pub subject: String,
    /// The user's workspace; names its Durable Object.
    pub workspace: String,
    /// The OAuth client the token was issued to.
    pub client_id: String,
    /// Granted scopes.
    pub scopes: ScopeSet,
    /// Whether the client is the Claude app, which can show `decide_approval` in its card.
    pub app: bool,
    /// The grant the token belongs to, so a revoked grant stops working.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub grant_id: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_scopes() {
        assert_eq!(ScopeSet::parse("mcp mcp:act").unwrap(), ScopeSet::FULL);
        assert_eq!(ScopeSet::parse("mcp").unwrap(), ScopeSet::READ);
        assert_eq!(ScopeSet::parse("").unwrap(), ScopeSet::default());
        assert!(ScopeSet::parse("mcp admin").is_err());
        let e = ScopeSet::parse("mcp \"<b>x\\").unwrap_err();
        assert!(
            !e.contains('x') && !e.contains('"') && !e.contains('\\'),
            "the client's text is not echoed: {e}"
        );
        assert_eq!(ScopeSet::FULL.to_wire(), ALL_SCOPES);
        assert_eq!(ScopeSet::READ.to_wire(), "mcp");
    }
}

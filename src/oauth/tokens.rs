//! Opaque credentials: authorization codes, refresh tokens and browser sessions.
//!
//! Each is `<prefix><route>_<secret>`: a typed prefix (so a leaked string says what it is and
//! secret scanners can find it), the routing id of the workspace Durable Object that holds its
//! record (64 hex digits chosen by the platform, not the user id), and 256 random bits. Only the
//! SHA-256 of the secret is stored. A pepper would add nothing to 256-bit random secrets and
//! would tie every stored hash to a key that must be able to rotate.

use crate::ids;

/// What an opaque credential is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// An authorization code.
    Code,
    /// A refresh token.
    Refresh,
    /// A browser session (the `__Host-vs_session` cookie).
    Session,
}

impl Kind {
    /// The typed prefix.
    pub fn prefix(self) -> &'static str {
        match self {
            Kind::Code => "vsac_",
            Kind::Refresh => "vsrt_",
            Kind::Session => "vsse_",
        }
    }
}

/// A parsed credential.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Opaque {
    /// The routing id of the workspace object.
    pub route: String,
    /// The secret part (64 hex digits).
    pub secret: String,
}

fn is_hex64(s: &str) -> bool {
    s.len() == 64 && s.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

/// Whether `s` can be a routing id.
pub fn valid_route(s: &str) -> bool {
    is_hex64(s)
}

/// Formats a credential.
pub fn format(kind: Kind, route: &str, secret: &str) -> String {
    format!("{}{route}_{secret}", kind.prefix())
}

/// Parses a credential of the expected kind; anything else is `None`, before any lookup.
pub fn parse(kind: Kind, s: &str) -> Option<Opaque> {
    let rest = s.strip_prefix(kind.prefix())?;
    let (route, secret) = rest.split_once('_')?;
    (is_hex64(route) && is_hex64(secret))
        .then(|| Opaque { route: route.to_owned(), secret: secret.to_owned() })
}

/// A fresh 256-bit secret.
pub fn new_secret() -> String {
    ids::hex(&ids::random_bytes::<32>())
}

/// What is stored for a secret.
pub fn hash(secret: &str) -> String {
    ids::sha256_hex(secret.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_and_refuses_other_kinds() {
        let route = "a".repeat(64);
        let secret = new_secret();
        let code = format(Kind::Code, &route, &secret);
        assert!(code.starts_with("vsac_"));
        assert_eq!(parse(Kind::Code, &code), Some(Opaque { route: route.clone(), secret: secret.clone() }));
        assert_eq!(parse(Kind::Refresh, &code), None);
        for bad in ["", "vsac_", "vsac_x_y", &format!("vsac_{route}_{}", "A".repeat(64)), &format!("{code}0")]
        {
            assert_eq!(parse(Kind::Code, bad), None, "{bad}");
        }
        assert_ne!(new_secret(), secret);
        assert_eq!(hash(&secret).len(), 64);
    }
}

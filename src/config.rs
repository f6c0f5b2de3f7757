//! Deployment configuration, read once per isolate from the Worker's vars and secrets.
//!
//! Everything that differs between a laptop and production lives here: the public URL (which
//! names the issuer and the token audience), the provider mode, the allowed browser origins and
//! the token signing keys. Parsing is pure so tests build a `Config` from a map.

use std::fmt;

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;

/// Path of the MCP endpoint (seed 002).
pub const MCP_PATH: &str = "/v1/mcp";

/// Which implementation of the outside providers the Worker uses (PRODUCT §9).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProviderMode {
    /// The deterministic simulation embedded in the Worker (the default).
    Sandbox,
    /// The real providers, with keys from Worker secrets.
    Live,
}

/// One HMAC key for access-token signatures, named by its key id (`kid`).
#[derive(Clone)]
pub struct SigningKey {
    /// The key id carried in the JWT header, so keys can rotate.
    pub kid: String,
    /// The raw key bytes (at least 32).
    pub secret: Vec<u8>,
}

impl fmt::Debug for SigningKey {
    // Never print key material, even in debug output.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SigningKey").field("kid", &self.kid).finish_non_exhaustive()
    }
}

/// The Worker's configuration.
#[derive(Debug, Clone)]
pub struct Config {
    /// The public origin (scheme, host, port; no trailing slash), e.g. `https://api.vibesell.it`.
    pub public_url: String,
    /// Sandbox or live providers.
    pub provider_mode: ProviderMode,
    /// Browser origins allowed to call the MCP endpoint, besides `public_url` itself.
    pub allowed_origins: Vec<String>,
    /// Origins whose redirect URIs mark a client as the Claude app (PRODUCT §3).
    pub app_origins: Vec<String>,
    /// Signing keys; the first signs, all verify.
    pub signing_keys: Vec<SigningKey>,
}

/// A configuration problem; the Worker answers 500 and logs it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConfigError {
    /// A required variable is absent.
    #[error("{0} is not set")]
    Missing(&'static str),
    /// A variable has an unusable value.
    #[error("{name} is invalid: {reason}")]
    Invalid {
        /// The variable's name.
        name: &'static str,
        /// What is wrong with it.
        reason: String,
    },
}

/// Key ids starting with this prefix are development keys, refused unless `PUBLIC_URL` is a
/// loopback address, so a checked-in development key can never sign production tokens.
pub const DEV_KID_PREFIX: &str = "dev";

const DEFAULT_APP_ORIGINS: &str = "https://claude.ai,https://claude.com";

impl Config {
    /// Reads the configuration through `lookup` (Worker vars and secrets, or a test map).
    pub fn from_lookup(lookup: impl Fn(&str) -> Option<String>) -> Result<Config, ConfigError> {
        let raw_url = lookup("PUBLIC_URL").ok_or(ConfigError::Missing("PUBLIC_URL"))?;
        let public_url = normalize_origin(&raw_url).ok_or_else(|| {
            invalid("PUBLIC_URL", "expected an http(s) origin such as https://api.vibesell.it")
        })?;
        let provider_mode = match lookup("PROVIDER_MODE").as_deref().unwrap_or("sandbox") {
            "sandbox" => ProviderMode::Sandbox,
            "live" => ProviderMode::Live,
            other => return Err(invalid("PROVIDER_MODE", &format!("{other:?} is neither sandbox nor live"))),
        };
        let allowed_origins = origin_list(
            lookup("ALLOWED_ORIGINS").as_deref().unwrap_or(DEFAULT_APP_ORIGINS),
            "ALLOWED_ORIGINS",
        )?;
        let app_origins =
            origin_list(lookup("APP_ORIGINS").as_deref().unwrap_or(DEFAULT_APP_ORIGINS), "APP_ORIGINS")?;
        let keys_raw = lookup("JWT_SIGNING_KEYS").ok_or(ConfigError::Missing("JWT_SIGNING_KEYS"))?;
        let signing_keys = parse_signing_keys(&keys_raw)?;
        let loopback = is_loopback_origin(&public_url);
        if !loopback && signing_keys.iter().any(|k| k.kid.starts_with(DEV_KID_PREFIX)) {
            return Err(invalid(
                "JWT_SIGNING_KEYS",
                "development keys (kid \"dev…\") are only accepted when PUBLIC_URL is a loopback address",
            ));
        }
        Ok(Config { public_url, provider_mode, allowed_origins, app_origins, signing_keys })
    }

    /// The OAuth issuer: the public origin, byte for byte everywhere (RFC 8414 §3.3).
    pub fn issuer(&self) -> &str {
        &self.public_url
    }

    /// The canonical resource URI of the MCP endpoint, the audience of every access token.
    pub fn resource(&self) -> String {
        format!("{}{MCP_PATH}", self.public_url)
    }

    /// Where the protected-resource metadata for the MCP endpoint lives (RFC 9728 §3.1).
    pub fn resource_metadata_url(&self) -> String {
        format!("{}/.well-known/oauth-protected-resource{MCP_PATH}", self.public_url)
    }

    /// Whether this deployment runs on a developer's machine.
    pub fn is_local(&self) -> bool {
        is_loopback_origin(&self.public_url)
    }

    /// The key that signs new tokens.
    pub fn active_key(&self) -> &SigningKey {
        // `parse_signing_keys` refuses an empty list, so there is always a first key.
        &self.signing_keys[0]
    }

    /// Whether a browser page at `origin` may call the MCP endpoint (MCP transports §security:
    /// servers must validate `Origin`). Our own origin and the configured list are allowed; on a
    /// loopback deployment any loopback origin is too, whatever its port.
    pub fn origin_allowed(&self, origin: &str) -> bool {
        let Some(origin) = normalize_origin(origin) else { return false };
        origin == self.public_url
            || self.allowed_origins.contains(&origin)
            || (self.is_local() && is_loopback_origin(&origin))
    }
}

fn invalid(name: &'static str, reason: &str) -> ConfigError {
    ConfigError::Invalid { name, reason: reason.to_owned() }
}

fn origin_list(raw: &str, name: &'static str) -> Result<Vec<String>, ConfigError> {
    raw.split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(|s| normalize_origin(s).ok_or_else(|| invalid(name, &format!("{s:?} is not an origin"))))
        .collect()
}

/// Parses `kid:base64url-secret[,kid:secret…]`; the first key signs.
fn parse_signing_keys(raw: &str) -> Result<Vec<SigningKey>, ConfigError> {
    let mut keys = Vec::new();
    for part in raw.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        let (kid, secret) = part
            .split_once(':')
            .ok_or_else(|| invalid("JWT_SIGNING_KEYS", "each key is kid:base64url-secret"))?;
        if kid.is_empty() || !kid.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_') {
            return Err(invalid("JWT_SIGNING_KEYS", "key ids use letters, digits, - and _"));
        }
        let secret = URL_SAFE_NO_PAD
            .decode(secret.trim_end_matches('='))
            .map_err(|_| invalid("JWT_SIGNING_KEYS", "a secret is not base64url"))?;
        if secret.len() < 32 {
            return Err(invalid("JWT_SIGNING_KEYS", "secrets must be at least 32 bytes"));
        }
        if keys.iter().any(|k: &SigningKey| k.kid == kid) {
            return Err(invalid("JWT_SIGNING_KEYS", "key ids must be unique"));
        }
        keys.push(SigningKey { kid: kid.to_owned(), secret });
    }
    if keys.is_empty() {
        return Err(invalid("JWT_SIGNING_KEYS", "no key"));
    }
    Ok(keys)
}

/// Lower-cases scheme and host and drops a trailing slash; `None` unless it is a bare http(s)
/// origin (no path, query, fragment or userinfo).
pub fn normalize_origin(raw: &str) -> Option<String> {
    let raw = raw.trim();
    let raw = raw.strip_suffix('/').unwrap_or(raw);
    let (scheme, rest) = raw.split_once("://")?;
    let scheme = scheme.to_ascii_lowercase();
    if scheme != "https" && scheme != "http" {
        return None;
    }
    if rest.is_empty() || rest.contains(['/', '?', '#', '@', ' ']) {
        return None;
    }
    Some(format!("{scheme}://{}", rest.to_ascii_lowercase()))
}

/// The host part of an origin or URL authority, without port or IPv6 brackets.
fn host_of(origin: &str) -> &str {
    let authority = origin.split_once("://").map_or(origin, |(_, rest)| rest);
    let authority = authority.split(['/', '?', '#']).next().unwrap_or(authority);
    if let Some(v6) = authority.strip_prefix('[') {
        return v6.split(']').next().unwrap_or(v6);
    }
    authority.rsplit_once(':').map_or(authority, |(host, _)| host)
}

/// Whether a host (`127.0.0.1`, `[::1]:80`, `localhost:8787`…) is a loopback name.
pub fn is_loopback_host(authority: &str) -> bool {
    let host = host_of(authority).to_ascii_lowercase();
    host == "localhost"
        || host == "::1"
        || host.strip_prefix("127.").is_some_and(|rest| {
            let parts: Vec<&str> = rest.split('.').collect();
            parts.len() == 3 && parts.iter().all(|p| p.parse::<u8>().is_ok())
        })
}

/// Whether an origin's host is a loopback address.
pub fn is_loopback_origin(origin: &str) -> bool {
    is_loopback_host(origin)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    const KEY: &str = "dev:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA";

    fn config(pairs: &[(&str, &str)]) -> Result<Config, ConfigError> {
        let map: HashMap<String, String> =
            pairs.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect();
        Config::from_lookup(|k| map.get(k).cloned())
    }

    #[test]
    fn reads_a_local_configuration() {
        let c = config(&[("PUBLIC_URL", "HTTP://127.0.0.1:8787/"), ("JWT_SIGNING_KEYS", KEY)]).unwrap();
        assert_eq!(c.public_url, "http://127.0.0.1:8787");
        assert_eq!(c.resource(), "http://127.0.0.1:8787/v1/mcp");
        assert_eq!(c.provider_mode, ProviderMode::Sandbox);
        assert!(c.is_local());
        assert_eq!(c.active_key().kid, "dev");
        assert_eq!(c.app_origins, vec!["https://claude.ai", "https://claude.com"]);
    }

    #[test]
    fn refuses_a_development_key_in_production() {
        let err =
            config(&[("PUBLIC_URL", "https://api.vibesell.it"), ("JWT_SIGNING_KEYS", KEY)]).unwrap_err();
        assert!(matches!(err, ConfigError::Invalid { name: "JWT_SIGNING_KEYS", .. }));
        let prod = "k2026:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAE";
        assert!(config(&[("PUBLIC_URL", "https://api.vibesell.it"), ("JWT_SIGNING_KEYS", prod)]).is_ok());
    }

    #[test]
    fn refuses_bad_values() {
        assert_eq!(config(&[("JWT_SIGNING_KEYS", KEY)]).unwrap_err(), ConfigError::Missing("PUBLIC_URL"));
        assert!(config(&[("PUBLIC_URL", "ftp://x"), ("JWT_SIGNING_KEYS", KEY)]).is_err());
        assert!(config(&[("PUBLIC_URL", "https://x/path"), ("JWT_SIGNING_KEYS", KEY)]).is_err());
        assert!(config(&[("PUBLIC_URL", "http://127.0.0.1"), ("JWT_SIGNING_KEYS", "dev:c2hvcnQ")]).is_err());
        assert!(config(&[("PUBLIC_URL", "http://127.0.0.1"), ("JWT_SIGNING_KEYS", "")]).is_err());
        assert!(
            config(&[("PUBLIC_URL", "http://127.0.0.1"), ("JWT_SIGNING_KEYS", KEY), ("PROVIDER_MODE", "x")])
                .is_err()
        );
    }

    #[test]
    fn checks_origins() {
        let c = config(&[("PUBLIC_URL", "http://127.0.0.1:8787"), ("JWT_SIGNING_KEYS", KEY)]).unwrap();
        assert!(c.origin_allowed("http://127.0.0.1:8787"));
        assert!(c.origin_allowed("http://localhost:6274"));
        assert!(c.origin_allowed("https://claude.ai"));
        assert!(!c.origin_allowed("http://evil.example.com"));
        assert!(!c.origin_allowed("null"));
        assert!(!c.origin_allowed("http://127.0.0.1.evil.com"));
        let prod = "k1:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAE";
        let p = config(&[("PUBLIC_URL", "https://api.vibesell.it"), ("JWT_SIGNING_KEYS", prod)]).unwrap();
        assert!(!p.origin_allowed("http://localhost:6274"));
        assert!(p.origin_allowed("https://API.vibesell.it"));
    }

    #[test]
    fn recognises_loopback_hosts() {
        for h in ["127.0.0.1", "127.0.0.1:8787", "localhost", "LOCALHOST:1", "[::1]:80", "http://127.1.2.3:9"]
        {
            assert!(is_loopback_host(h), "{h}");
        }
        for h in ["evil.example.com", "127.0.0.1.nip.io", "128.0.0.1", "localhost.evil", "[::2]"] {
            assert!(!is_loopback_host(h), "{h}");
        }
    }
}

//! Client ID Metadata Documents (draft-ietf-oauth-client-id-metadata-document; MCP
//! authorization 2025-11-25 §client-registration): a `client_id` that is an https URL names a
//! JSON document describing the client, fetched by this server.
//!
//! Fetching a URL chosen by a stranger is a server-side request forgery risk, so before any
//! request the URL must be https on the default port, name a public DNS host (no IP literal, no
//! `localhost`, `.local`, `.internal`, `.home.arpa` or single-label name, not this server), and
//! have a path; the fetch follows no redirect, gives up after [`FETCH_TIMEOUT_MS`] and refuses a
//! body over [`MAX_DOCUMENT_BYTES`]. On Workers a DNS name cannot be resolved first, so the
//! remaining guard is the runtime's: the `global_fetch_strictly_public` compatibility flag
//! (wrangler.toml) sends every outbound request to the public internet, never to an origin
//! behind the same Cloudflare zone.
//!
//! A valid document is cached in KV `cimd:<sha256(url)>` for its `max-age` (60 s to a day, an
//! hour when unspecified; `no-store` is not cached).
//!
//! A fetch that fails for a moment (network error, timeout, HTTP 5xx or 429) is
//! `temporarily_unavailable` (503 at the token and revocation endpoints, a "try again" page at
//! `/authorize`), never `invalid_client`: on `invalid_client` MCP clients drop their tokens and
//! register again (RFC 6749 §5.2 makes it a client authentication failure). A document that
//! answers otherwise, or is not a valid document, is `invalid_client`.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::clients::{self, Client, Source};
use super::error::OAuthError;
use crate::config::Config;
use crate::ids;
use crate::kv::{Kv, MIN_TTL_SECS};
use crate::outbound::{Outbound, OutboundRequest};
use crate::urls::{self, Host};

/// Largest metadata document accepted.
pub const MAX_DOCUMENT_BYTES: usize = 5 * 1024;
/// How long a fetch may take.
pub const FETCH_TIMEOUT_MS: u32 = 5_000;
/// Longest client id URL accepted.
pub const MAX_URL_BYTES: usize = 512;

const DEFAULT_CACHE_SECS: u32 = 3600;
const MAX_CACHE_SECS: u32 = 86_400;

fn refused(why: impl std::fmt::Display) -> OAuthError {
    OAuthError::client(format!("The client metadata document cannot be used: {why}."))
}

/// Checks a client id URL before anything is fetched.
pub fn check_url(client_id: &str, config: &Config) -> Result<(), OAuthError> {
    if client_id.len() > MAX_URL_BYTES || client_id.chars().any(|c| c.is_control() || c.is_whitespace()) {
        return Err(refused("the client id is not a usable URL"));
    }
    let url = urls::read(client_id).map_err(refused)?;
    if url.scheme() != "https" {
        return Err(refused("the client id must be an https URL"));
    }
    if url.fragment().is_some() {
        return Err(refused("the client id must not have a fragment"));
    }
    if url.port().is_some() {
        return Err(refused("the client id must use the default https port"));
    }
    // `urls::read` refuses `.` and `..` segments.
    if url.path() == "/" {
        return Err(refused("the client id must have a path"));
    }
    // Any IP literal is refused, not only a private one: a public client has a name (and
    // `urls::read` has refused the other spellings of an address, `0x7f.1` or `2130706433`).
    let host = match url.host() {
        Some(Host::Domain(d)) => d.trim_end_matches('.').to_owned(),
        Some(Host::Ipv4(_) | Host::Ipv6(_)) | None => {
            return Err(refused("the client id must name a host, not an address"));
        }
    };
    let private_suffix = [".localhost", ".local", ".internal", ".home.arpa", ".lan", ".intranet", ".corp"]
        .iter()
        .any(|s| host.ends_with(s));
    let own_host = urls::Url::parse(config.issuer()).ok().and_then(|u| u.host_str().map(str::to_owned));
    if host == "localhost"
        || !host.contains('.')
        || private_suffix
        || own_host.as_deref() == Some(host.as_str())
    {
        return Err(refused("the client id must name a public host"));
    }
    Ok(())
}

#[derive(Serialize, Deserialize)]
struct Cached {
    client: Client,
}

fn cache_key(client_id: &str) -> String {
    format!("cimd:{}", ids::sha256_hex(client_id.as_bytes()))
}

/// How long a response may be cached, from its `Cache-Control`.
fn cache_secs(cache_control: Option<&str>) -> Option<u32> {
    let Some(cc) = cache_control else { return Some(DEFAULT_CACHE_SECS) };
    let mut max_age = None;
    for directive in cc.split(',').map(|d| d.trim().to_ascii_lowercase()) {
        if directive == "no-store" || directive == "no-cache" {
            return None;
        }
        if let Some(v) = directive.strip_prefix("max-age=") {
            max_age = v.trim_matches('"').parse::<u32>().ok();
        }
    }
    match max_age {
        Some(0) => None,
        Some(secs) => Some(secs.clamp(MIN_TTL_SECS, MAX_CACHE_SECS)),
        None => Some(DEFAULT_CACHE_SECS),
    }
}

/// Validates a fetched document for `client_id`.
pub fn parse_document(client_id: &str, body: &[u8], now_ms: i64) -> Result<Client, OAuthError> {
    let doc: Value = serde_json::from_slice(body).map_err(|_| refused("it is not JSON"))?;
    let Value::Object(doc) = doc else { return Err(refused("it is not a JSON object")) };
    if doc.get("client_id").and_then(Value::as_str) != Some(client_id) {
        return Err(refused("its client_id is not the URL it was fetched from"));
    }
    if doc.contains_key("client_secret") || doc.contains_key("client_secret_expires_at") {
        return Err(refused("it contains a client secret"));
    }
    let metadata = clients::validate_metadata(&doc, true).map_err(|e| refused(e.description))?;
    // Optional in a registration (RFC 7591 §2), but a metadata document must carry client_id,
    // client_name and redirect_uris (draft-ietf-oauth-client-id-metadata-document §3; MCP
    // authorization spec, "Client ID Metadata Documents"). `text_field` reads a blank one as none.
    if metadata.client_name.is_none() {
        return Err(refused("it has no client_name"));
    }
    Ok(Client {
        client_id: client_id.to_owned(),
        metadata,
        client_id_issued_at: now_ms / 1000,
        secret_hash: None,
        source: Source::Cimd,
        stored_at: now_ms,
    })
}

/// The client a metadata document describes: from the cache, or fetched and validated.
pub async fn client(
    config: &Config,
    kv: &dyn Kv,
    outbound: &dyn Outbound,
    client_id: &str,
    now_ms: i64,
) -> Result<Client, OAuthError> {
    check_url(client_id, config)?;
    let key = cache_key(client_id);
    if let Ok(Some(doc)) = kv.get(key.clone()).await
        && let Ok(cached) = serde_json::from_str::<Cached>(&doc)
    {
        return Ok(cached.client);
    }
    let request = OutboundRequest::get(client_id)
        .header("accept", "application/json")
        .timeout(FETCH_TIMEOUT_MS)
        .no_redirects()
        .max_body(MAX_DOCUMENT_BYTES);
    let response = outbound.fetch(request).await.map_err(|e| {
        // A body over the limit is the document's fault (`Outbound` implementations fail with
        // "body larger than …" / "body too large"); any other failure (network, timeout) may
        // pass.
        if e.0.contains("large") {
            refused("it is larger than 5 KiB").logged(e.0)
        } else {
            OAuthError::unavailable(e.0)
        }
    })?;
    if response.status != 200 {
        let why = format!("fetching it answered HTTP {}", response.status);
        // RFC 9110 §15.6: the server failed, or (RFC 6585 §4) asks us to slow down; the document
        // may be fine a moment later. Any other answer is the publisher's.
        return Err(if response.status == 429 || response.status >= 500 {
            OAuthError::unavailable(why)
        } else {
            refused(why)
        });
    }
    let client = parse_document(client_id, &response.body, now_ms)?;
    if let Some(ttl) = cache_secs(response.header("cache-control"))
        && let Ok(doc) = serde_json::to_string(&Cached { client: client.clone() })
    {
        // A cache write that fails only costs a fetch next time.
        let _ = kv.put(key, doc, ttl).await;
    }
    Ok(client)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{NOW_MS, test_config};

    #[test]
    fn guards_the_url_before_fetching() {
        let config = test_config();
        for ok in [
            "https://claude.ai/oauth/mcp-oauth-client-metadata",
            "https://claude.ai/oauth/claude-code-client-metadata",
            "https://client.vibesell.test/oauth/metadata.json?v=1",
        ] {
            assert!(check_url(ok, &config).is_ok(), "{ok}");
        }
        for bad in [
            "http://claude.ai/oauth/x",
            "https://claude.ai/",
            "https://claude.ai",
            "https://claude.ai:8443/x",
            "https://127.0.0.1/x",
            "https://10.0.0.1/x",
            "https://169.254.169.254/latest/meta-data",
            "https://[::1]/x",
            "https://[fd00::1]/x",
            "https://0x7f000001/x",
            "https://2130706433/x",
            "https://localhost/x",
            "https://app.localhost/x",
            "https://printer.local/x",
            "https://metadata.google.internal/x",
            "https://intranet/x",
            "https://user@claude.ai/x",
            "https://claude.ai/x#f",
            "https://claude.ai/a/../x",
            "https://127.0.0.1:8787/x",
            // Other spellings of private addresses, which the WHATWG parser (and so the fetch)
            // reads as addresses.
            "https://127.1/x",
            "https://0x7f.1/x",
            "https://0x7f000001/x",
            "https://3232235521/x",
            "https://0251.0376.0251.0376/latest/meta-data",
            "https://169.254.169.254./latest/meta-data",
            "https://[::ffff:127.0.0.1]/x",
            "https://[::ffff:a9fe:a9fe]/x",
            "https://[0:0:0:0:0:0:0:1]/x",
            "https://[fe80::1]/x",
            "https://localhost./x",
            "https://LOCALHOST/x",
            "https://metadata.google.internal./x",
            "https://a..b/x",
            "https://cl%61ude.ai/x",
            // Another host behind userinfo or a backslash, other schemes, control characters.
            "https://claude.ai@127.0.0.1/x",
            "https://claude.ai:443@evil.example/x",
            "https://claude.ai\\@127.0.0.1/x",
            "ftp://claude.ai/x",
            "https:claude.ai/x",
            "https://claude.ai/x\r\n",
            "https://claude.ai/%2e%2e/x",
        ] {
            assert_eq!(check_url(bad, &config).unwrap_err().code.as_str(), "invalid_client", "{bad}");
        }
    }

    #[test]
    fn validates_documents() {
        let id = "https://client.vibesell.test/oauth/metadata.json";
        let good = serde_json::json!({"client_id": id, "client_name": "Test", "redirect_uris": ["http://127.0.0.1/callback"]});
        let client = parse_document(id, good.to_string().as_bytes(), NOW_MS).unwrap();
        assert_eq!(client.metadata.token_endpoint_auth_method, clients::AuthMethod::None);
        assert_eq!(client.source, Source::Cimd);
        for bad in [
            serde_json::json!({"client_id": "https://other.example/x", "client_name": "Test", "redirect_uris": ["http://127.0.0.1/callback"]}),
            serde_json::json!({"client_id": id, "client_name": "Test", "redirect_uris": ["http://evil.example/callback"]}),
            serde_json::json!({"client_id": id, "client_name": "Test", "redirect_uris": ["http://127.0.0.1/cb"], "client_secret": "x"}),
            serde_json::json!({"client_id": id, "client_name": "Test", "redirect_uris": ["http://127.0.0.1/cb"], "token_endpoint_auth_method": "client_secret_post"}),
            serde_json::json!({"client_id": id, "client_name": "Test", "redirect_uris": ["http://127.0.0.1/cb"], "jwks": {"keys": []}}),
            // client_name is required in a metadata document: absent, blank or not a string.
            serde_json::json!({"client_id": id, "redirect_uris": ["http://127.0.0.1/cb"]}),
            serde_json::json!({"client_id": id, "client_name": "  ", "redirect_uris": ["http://127.0.0.1/cb"]}),
            serde_json::json!({"client_id": id, "client_name": 5, "redirect_uris": ["http://127.0.0.1/cb"]}),
            serde_json::json!([id]),
        ] {
            assert!(parse_document(id, bad.to_string().as_bytes(), NOW_MS).is_err(), "{bad}");
        }
        assert!(parse_document(id, b"not json", NOW_MS).is_err());
    }

    #[test]
    fn caches_per_the_headers() {
        assert_eq!(cache_secs(None), Some(3600));
        assert_eq!(cache_secs(Some("public, max-age=600")), Some(600));
        assert_eq!(cache_secs(Some("max-age=5")), Some(60));
        assert_eq!(cache_secs(Some("max-age=99999999")), Some(86_400));
        assert_eq!(cache_secs(Some("no-store")), None);
        assert_eq!(cache_secs(Some("max-age=0")), None);
    }
}

//! OAuth clients: registered metadata (RFC 7591 §2), where records live, how a client is found
//! and how it authenticates at the token and revocation endpoints.
//!
//! A dynamically registered client is stored in KV under `client:<id>`. KV is eventually
//! consistent across locations, and a client registered from Anthropic's cloud is used seconds
//! later from the user's browser elsewhere; so registration also writes the record to the
//! `OAuthState` object `client:<id>` (one location, strongly consistent), which [`find`] asks
//! when KV misses. That copy is only needed until KV has propagated and is purged after a day.
//!
//! A `client_id` that is an https URL is a Client ID Metadata Document (`cimd.rs`).

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::error::{ErrorCode, OAuthError};
use super::form::Form;
use super::state::{EntryKind, StateOp, StateReply};
use super::{AuthObjects, cimd, redirect};
use crate::auth::ScopeSet;
use crate::config::Config;
use crate::http::{HttpRequest, Platform};
use crate::ids;
use crate::kv::Kv;
use crate::outbound::Outbound;
use crate::tools::registry::LocalBoxFuture;

/// KV records of dynamically registered clients expire when unused this long; using a client
/// renews its record (see [`renew_if_old`]).
pub const CLIENT_TTL_SECS: u32 = 180 * 86_400;
/// A record older than this is written again when the client is used.
const RENEW_AFTER_MS: i64 = 30 * 86_400_000;
/// How long the strongly consistent fallback copy of a new registration is kept.
pub const FALLBACK_TTL_MS: i64 = 86_400_000;

/// At most this many redirect URIs per client.
pub const MAX_REDIRECT_URIS: usize = 10;

/// How a client authenticates at the token endpoint.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AuthMethod {
    /// A public client (PKCE only): Claude, Claude Code, the MCP SDK.
    None,
    /// `client_secret` in the form body.
    ClientSecretPost,
    /// HTTP Basic with the client id and secret.
    ClientSecretBasic,
}

impl AuthMethod {
    fn parse(s: &str) -> Option<AuthMethod> {
        match s {
            "none" => Some(AuthMethod::None),
            "client_secret_post" => Some(AuthMethod::ClientSecretPost),
            "client_secret_basic" => Some(AuthMethod::ClientSecretBasic),
            _ => None,
        }
    }
}

/// Validated client metadata, as registered and echoed back. Field order is fixed, so the
/// serialisation is canonical: identical metadata gives the identical public client id.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Metadata {
    /// Where authorization responses may go.
    pub redirect_uris: Vec<String>,
    /// Token endpoint authentication.
    pub token_endpoint_auth_method: AuthMethod,
    /// `authorization_code`, and `refresh_token` unless the client left it out.
    pub grant_types: Vec<String>,
    /// `code`.
    pub response_types: Vec<String>,
    /// Shown at consent (untrusted text).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_name: Option<String>,
    /// The client's home page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_uri: Option<String>,
    /// Its logo (never loaded by our pages, which fetch nothing from third parties).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub logo_uri: Option<String>,
    /// Its terms of service.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tos_uri: Option<String>,
    /// Its privacy policy.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub policy_uri: Option<String>,
    /// The most it will ask for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scope: Option<String>,
    /// Contacts.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub contacts: Vec<String>,
    /// Software identifier.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub software_id: Option<String>,
    /// Software version.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub software_version: Option<String>,
    /// `web` or `native`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub application_type: Option<String>,
}

/// Where a client's record came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Source {
    /// Dynamic registration.
    Dcr,
    /// A Client ID Metadata Document.
    Cimd,
}

/// A stored client: its own members beside the metadata's (RFC 7591 §3.2.1 echoes them together).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Client {
    /// The client id (`vsc_…`, or the metadata document's URL).
    pub client_id: String,
    /// Its metadata.
    #[serde(flatten)]
    pub metadata: Metadata,
    /// When it was registered (seconds, RFC 7591 §3.2.1).
    pub client_id_issued_at: i64,
    /// SHA-256 of the secret of a confidential client.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub secret_hash: Option<String>,
    /// Dynamic registration or metadata document.
    pub source: Source,
    /// When this record was written (ms), to renew it.
    pub stored_at: i64,
}

impl Client {
    /// The name to show: the registered one, or the host its responses go to.
    pub fn display_name(&self) -> String {
        match &self.metadata.client_name {
            Some(name) => name.clone(),
            None => self
                .metadata
                .redirect_uris
                .first()
                .map_or_else(|| "An app".into(), |u| redirect::display_host(u)),
        }
    }

    /// PRODUCT §3: the Claude app is a client whose redirect URIs all sit on the configured app
    /// origins.
    pub fn is_app(&self, config: &Config) -> bool {
        !self.metadata.redirect_uris.is_empty()
            && self
                .metadata
                .redirect_uris
                .iter()
                .all(|u| redirect::origin(u).is_some_and(|o| config.app_origins.contains(&o)))
    }

    /// Whether the client may use refresh tokens.
    pub fn refresh_allowed(&self) -> bool {
        self.metadata.grant_types.iter().any(|g| g == "refresh_token")
    }

    /// The registered redirect URI matching a request's (RFC 8252 loopback ports allowed).
    pub fn redirect_matching(&self, presented: &str) -> Option<&str> {
        self.metadata.redirect_uris.iter().map(String::as_str).find(|r| redirect::matches(r, presented))
    }

    /// The RFC 7591 §3.2.1 response body; the secret only when just issued. No `null`s.
    pub fn registration_response(&self, secret: Option<&str>) -> Value {
        let mut body = match serde_json::to_value(&self.metadata) {
            Ok(Value::Object(map)) => map,
            _ => Map::new(),
        };
        body.insert("client_id".into(), Value::from(self.client_id.as_str()));
        body.insert("client_id_issued_at".into(), Value::from(self.client_id_issued_at));
        if let Some(secret) = secret {
            body.insert("client_secret".into(), Value::from(secret));
            // RFC 7591 §3.2.1: required with a secret; 0 means it does not expire.
            body.insert("client_secret_expires_at".into(), Value::from(0));
        }
        Value::Object(body)
    }
}

fn invalid(description: impl Into<String>) -> OAuthError {
    OAuthError::new(ErrorCode::InvalidClientMetadata, description)
}

/// Characters that make a name lie about itself: controls, bidirectional marks and overrides,
/// and the invisible ones (zero-width spaces and joiners, word joiner, BOM) that make a name
/// that looks like another's compare unequal to it.
fn deceptive(c: char) -> bool {
    // The joiners are refused in a name too, as they were before `html::invisible` was shared.
    c.is_control() || crate::html::invisible(c) || matches!(c, '\u{200c}' | '\u{200d}')
}

fn text_field(doc: &Map<String, Value>, name: &str, max_chars: usize) -> Result<Option<String>, OAuthError> {
    match doc.get(name) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => {
            let s = s.trim();
            if s.is_empty() {
                Ok(None)
            } else if s.chars().count() > max_chars || s.chars().any(deceptive) {
                Err(invalid(format!(
                    "{name} must be at most {max_chars} characters, without control or invisible characters."
                )))
            } else {
                Ok(Some(s.to_owned()))
            }
        }
        Some(_) => Err(invalid(format!("{name} must be a string."))),
    }
}

fn https_field(doc: &Map<String, Value>, name: &str) -> Result<Option<String>, OAuthError> {
    let Some(s) = text_field(doc, name, redirect::MAX_URI_BYTES)? else { return Ok(None) };
    let ok = crate::urls::read(&s).is_ok_and(|u| u.scheme() == "https");
    if !ok {
        return Err(invalid(format!("{name} must be an https URL.")));
    }
    Ok(Some(s))
}

fn string_list(doc: &Map<String, Value>, name: &str) -> Result<Option<Vec<String>>, OAuthError> {
    match doc.get(name) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Array(items)) => items
            .iter()
            .map(|v| {
                v.as_str()
                    .map(str::to_owned)
                    .ok_or_else(|| invalid(format!("{name} must be an array of strings.")))
            })
            .collect::<Result<Vec<_>, _>>()
            .map(Some),
        Some(_) => Err(invalid(format!("{name} must be an array of strings."))),
    }
}

/// Validates client metadata: a registration request, or a fetched metadata document
/// (`for_cimd`: then only public clients are possible).
pub fn validate_metadata(doc: &Map<String, Value>, for_cimd: bool) -> Result<Metadata, OAuthError> {
    let redirect_uris = string_list(doc, "redirect_uris")?.unwrap_or_default();
    if redirect_uris.is_empty() || redirect_uris.len() > MAX_REDIRECT_URIS {
        return Err(OAuthError::new(
            ErrorCode::InvalidRedirectUri,
            format!("redirect_uris must list 1 to {MAX_REDIRECT_URIS} URIs."),
        ));
    }
    for (i, uri) in redirect_uris.iter().enumerate() {
        redirect::validate(uri).map_err(|why| OAuthError::new(ErrorCode::InvalidRedirectUri, why))?;
        if redirect_uris[..i].contains(uri) {
            return Err(OAuthError::new(ErrorCode::InvalidRedirectUri, "redirect_uris has duplicates."));
        }
    }
    if doc.contains_key("jwks") || doc.contains_key("jwks_uri") {
        return Err(invalid("This server does not accept key-based client authentication (jwks, jwks_uri)."));
    }
    let method = match doc.get("token_endpoint_auth_method") {
        None | Some(Value::Null) if for_cimd => AuthMethod::None,
        // RFC 7591 §2: the default is client_secret_basic.
        None | Some(Value::Null) => AuthMethod::ClientSecretBasic,
        Some(Value::String(s)) => AuthMethod::parse(s).ok_or_else(|| {
            invalid("token_endpoint_auth_method must be none, client_secret_post or client_secret_basic.")
        })?,
        Some(_) => return Err(invalid("token_endpoint_auth_method must be a string.")),
    };
    if for_cimd && method != AuthMethod::None {
        // A metadata document cannot establish a shared secret.
        return Err(invalid("A client metadata document must use token_endpoint_auth_method none."));
    }
    let grant_types = string_list(doc, "grant_types")?
        .unwrap_or_else(|| vec!["authorization_code".into(), "refresh_token".into()]);
    if !grant_types.iter().all(|g| g == "authorization_code" || g == "refresh_token")
        || !grant_types.iter().any(|g| g == "authorization_code")
    {
        return Err(invalid("grant_types must be authorization_code, optionally with refresh_token."));
    }
    let response_types = string_list(doc, "response_types")?.unwrap_or_else(|| vec!["code".into()]);
    if response_types.is_empty() || response_types.iter().any(|r| r != "code") {
        return Err(invalid("response_types must be code."));
    }
    // `offline_access` is accepted and ignored here as at `/authorize` and on refresh
    // (`authorize::scope_words`): refresh tokens are issued regardless. The client is registered
    // with the scopes this server has (RFC 7591 §3.2.1 lets it replace a value), so a client,
    // or a client metadata document, asking for `mcp offline_access` can connect.
    let scope = text_field(doc, "scope", 200)?
        .map(|s| super::authorize::scope_words(&s).join(" "))
        .filter(|s| !s.is_empty());
    if let Some(scope) = &scope {
        let set = ScopeSet::parse(scope).map_err(|e| invalid(format!("scope: {e}; use mcp and mcp:act.")))?;
        if !set.read && !set.act {
            return Err(invalid("scope must name mcp or mcp:act."));
        }
    }
    let application_type = text_field(doc, "application_type", 16)?;
    if application_type.as_deref().is_some_and(|a| a != "web" && a != "native") {
        return Err(invalid("application_type must be web or native."));
    }
    let contacts = string_list(doc, "contacts")?.unwrap_or_default();
    if contacts.len() > 5 || contacts.iter().any(|c| c.len() > 254 || c.chars().any(deceptive)) {
        return Err(invalid("contacts must list at most 5 addresses."));
    }
    Ok(Metadata {
        redirect_uris,
        token_endpoint_auth_method: method,
        grant_types,
        response_types,
        client_name: text_field(doc, "client_name", 100)?,
        client_uri: https_field(doc, "client_uri")?,
        logo_uri: https_field(doc, "logo_uri")?,
        tos_uri: https_field(doc, "tos_uri")?,
        policy_uri: https_field(doc, "policy_uri")?,
        scope,
        contacts,
        software_id: text_field(doc, "software_id", 128)?,
        software_version: text_field(doc, "software_version", 64)?,
        application_type,
    })
}

/// The id of a public client: derived from its metadata, so that registering the same metadata
/// again (Claude registers on every new connection) gives the same client.
pub fn public_client_id(metadata: &Metadata) -> String {
    let canonical = serde_json::to_string(metadata).unwrap_or_default();
    let digest = ids::sha256_hex(format!("dcr-v1:{canonical}").as_bytes());
    format!("vsc_{}", &digest[..32])
}

/// Whether `s` has the shape of our client ids (checked before any lookup).
pub fn is_dcr_client_id(s: &str) -> bool {
    s.strip_prefix("vsc_").is_some_and(|h| h.len() == 32 && h.bytes().all(|b| b.is_ascii_hexdigit()))
}

/// The KV key of a client record.
pub fn kv_key(client_id: &str) -> String {
    format!("client:{client_id}")
}

/// The `OAuthState` object holding a new client's fallback copy.
pub fn fallback_object(client_id: &str) -> String {
    format!("client:{client_id}")
}

/// Stores a new registration: the fallback copy first (which also settles concurrent identical
/// registrations on one record, and answers the record already there when a registration is
/// retried after its KV write failed), then KV. Answers the stored record.
pub async fn store(
    kv: &dyn Kv,
    objects: &dyn AuthObjects,
    client: Client,
    now_ms: i64,
) -> Result<Client, OAuthError> {
    let doc = serde_json::to_string(&client).map_err(|e| OAuthError::unavailable(e.to_string()))?;
    let op = StateOp::Put {
        kind: EntryKind::Client,
        key: client.client_id.clone(),
        binding: String::new(),
        doc,
        expires_at: now_ms + FALLBACK_TTL_MS,
    };
    let stored = match objects.state(fallback_object(&client.client_id), op).await {
        Ok(StateReply::Doc { doc: Some(doc) }) => serde_json::from_str::<Client>(&doc)
            .map_err(|e| OAuthError::unavailable(format!("stored client: {e}")))?,
        Ok(other) => {
            return Err(OAuthError::unavailable(format!("client fallback answered {}", other.kind())));
        }
        Err(e) => return Err(OAuthError::unavailable(format!("client fallback: {e}"))),
    };
    let doc = serde_json::to_string(&stored).map_err(|e| OAuthError::unavailable(e.to_string()))?;
    kv.put(kv_key(&stored.client_id), doc, CLIENT_TTL_SECS)
        .await
        .map_err(|e| OAuthError::unavailable(e.to_string()))?;
    Ok(stored)
}

/// Finds a client by id: KV, then the fallback copy; or, for an https client id, its metadata
/// document (cached). `Ok(None)` for an unknown client; `Err` only when storage or the network
/// failed, or a metadata document is invalid.
///
/// Without `with_fallback` only KV is asked: a registration of known metadata answers 201 with
/// the record found, so it must be one in KV. A client only in the fallback copy (KV lags, or
/// its write failed when the client registered: `store` answered 503 but the copy stays) is
/// then registered again, and `store` writes the copy's record to KV; otherwise the client
/// would vanish with the copy after a day.
pub fn find<'a>(
    config: &'a Config,
    kv: &'a dyn Kv,
    objects: &'a dyn AuthObjects,
    outbound: &'a dyn Outbound,
    client_id: &'a str,
    now_ms: i64,
    with_fallback: bool,
) -> LocalBoxFuture<'a, Result<Option<Client>, OAuthError>> {
    // Boxed: called from four endpoints, compiled once (wasm size).
    Box::pin(find_client(config, kv, objects, outbound, client_id, now_ms, with_fallback))
}

async fn find_client(
    config: &Config,
    kv: &dyn Kv,
    objects: &dyn AuthObjects,
    outbound: &dyn Outbound,
    client_id: &str,
    now_ms: i64,
    with_fallback: bool,
) -> Result<Option<Client>, OAuthError> {
    if client_id.starts_with("https://") || client_id.starts_with("http://") {
        return cimd::client(config, kv, outbound, client_id, now_ms).await.map(Some);
    }
    if !is_dcr_client_id(client_id) {
        return Ok(None);
    }
    if let Some(client) = recently_read(client_id, now_ms) {
        return Ok(Some(client));
    }
    let decode = |doc: &str| {
        serde_json::from_str::<Client>(doc)
            .map_err(|e| OAuthError::unavailable(format!("client record: {e}")))
    };
    match kv.get(kv_key(client_id)).await {
        // The isolate keeps only records read from KV: a registration must not take one found
        // in the fallback copy alone for one in KV (see above).
        Ok(Some(doc)) => {
            let client = decode(&doc)?;
            remember(&client, now_ms);
            return Ok(Some(client));
        }
        Ok(None) if !with_fallback => return Ok(None),
        Ok(None) => {}
        Err(e) => return Err(OAuthError::unavailable(e.to_string())),
    }
    let op = StateOp::Peek { kind: EntryKind::Client, key: client_id.to_owned(), binding: String::new() };
    match objects.state(fallback_object(client_id), op).await {
        Ok(StateReply::Doc { doc: Some(doc) }) => decode(&doc).map(Some),
        Ok(_) => Ok(None),
        Err(e) => Err(OAuthError::unavailable(format!("client fallback: {e}"))),
    }
}

/// How long this isolate reuses a registered client's record it has read. A dynamically
/// registered client never changes and is never deleted (its record is only rewritten, equal
/// but for `stored_at`, by [`renew_if_old`], which refreshes this copy too), so a copy is as good
/// as the record; the bound only caps memory and the life of a copy of a record that expired
/// unused. Every refresh grant and every authorization request looks its client up: without
/// this, each paid a KV read (in the benchmark, Miniflare's KV simulation was most of the CPU of
/// a refresh).
const CLIENT_COPY_MS: i64 = 5 * 60_000;
/// At most this many copies; the list is emptied when full.
const CLIENT_COPIES: usize = 256;

// A list, searched in order: its code is smaller than a map's (docs/scale.md, "Size"), and it
// holds few clients.
thread_local! {
    static CLIENT_COPY: std::cell::RefCell<Vec<(Client, i64)>> = const { std::cell::RefCell::new(Vec::new()) };
}

fn recently_read(client_id: &str, now_ms: i64) -> Option<Client> {
    CLIENT_COPY.with(|copies| {
        copies
            .borrow()
            .iter()
            .find(|(c, read_at)| {
                c.client_id == client_id && (0..CLIENT_COPY_MS).contains(&(now_ms - read_at))
            })
            .map(|(client, _)| client.clone())
    })
}

fn remember(client: &Client, now_ms: i64) {
    if client.source != Source::Dcr {
        return;
    }
    CLIENT_COPY.with(|copies| {
        let mut copies = copies.borrow_mut();
        if copies.len() >= CLIENT_COPIES {
            copies.clear();
        }
        copies.retain(|(c, _)| c.client_id != client.client_id);
        copies.push((client.clone(), now_ms));
    });
}

/// Writes a dynamically registered client's record again when it is old, so that clients in use
/// never expire. Best effort: a failure only shortens the record's life.
pub async fn renew_if_old(kv: &dyn Kv, client: &Client, now_ms: i64) -> Result<(), String> {
    if client.source != Source::Dcr || now_ms - client.stored_at < RENEW_AFTER_MS {
        return Ok(());
    }
    let renewed = Client { stored_at: now_ms, ..client.clone() };
    let doc = serde_json::to_string(&renewed).map_err(|e| e.to_string())?;
    kv.put(kv_key(&client.client_id), doc, CLIENT_TTL_SECS).await.map_err(|e| e.to_string())?;
    remember(&renewed, now_ms);
    Ok(())
}

/// Credentials presented at the token or revocation endpoint.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Presented {
    /// The client id.
    pub client_id: String,
    /// The secret, if one was sent.
    pub secret: Option<String>,
    /// How it was sent.
    pub method: AuthMethod,
}

/// Reads client credentials from HTTP Basic (RFC 6749 §2.3.1: form-encoded id and secret) or the
/// form. Both at once, or a Basic header that does not parse, is refused.
pub fn presented(req: &HttpRequest, form: &Form) -> Result<Presented, OAuthError> {
    let basic = req.header("authorization").map(|h| {
        let (scheme, value) = h.trim().split_once(' ').unwrap_or((h, ""));
        if !scheme.eq_ignore_ascii_case("basic") {
            return Err(OAuthError::client(
                "Only HTTP Basic client authentication is accepted in the Authorization header.",
            ));
        }
        let decoded = STANDARD
            .decode(value.trim())
            .ok()
            .and_then(|b| String::from_utf8(b).ok())
            .ok_or_else(|| OAuthError::client("The Basic credentials are malformed."))?;
        let (id, secret) = decoded
            .split_once(':')
            .ok_or_else(|| OAuthError::client("The Basic credentials are malformed."))?;
        Ok((crate::form::decode_component(id.as_bytes()), crate::form::decode_component(secret.as_bytes())))
    });
    let form_id = form.get("client_id")?;
    let form_secret = form.get("client_secret")?;
    match basic.transpose()? {
        Some((id, secret)) => {
            if form_secret.is_some() {
                return Err(OAuthError::request("Use one client authentication method, not two."));
            }
            if form_id.is_some_and(|f| f != id) {
                return Err(OAuthError::request("client_id differs from the Basic credentials."));
            }
            if id.is_empty() {
                return Err(OAuthError::client("The Basic credentials name no client."));
            }
            Ok(Presented { client_id: id, secret: Some(secret), method: AuthMethod::ClientSecretBasic })
        }
        None => {
            let client_id = form_id.ok_or_else(|| OAuthError::client("client_id is required."))?.to_owned();
            let method = if form_secret.is_some() { AuthMethod::ClientSecretPost } else { AuthMethod::None };
            Ok(Presented { client_id, secret: form_secret.map(str::to_owned), method })
        }
    }
}

/// The client that authenticated this token or revocation request (RFC 6749 §2.3, RFC 7009
/// §2.1): its credentials as presented, its registration found, and the two checked.
pub async fn authenticated(
    req: &HttpRequest,
    form: &Form,
    config: &Config,
    platform: &dyn Platform,
) -> Result<Client, OAuthError> {
    let presented = presented(req, form)?;
    let now_ms = platform.now_ms();
    let client = find(
        config,
        platform.kv(),
        platform.objects(),
        platform.outbound(),
        &presented.client_id,
        now_ms,
        true,
    )
    .await?
    .ok_or_else(|| OAuthError::client("Unknown client: register again.").logged("unknown client"))?;
    authenticate(&client, &presented)?;
    Ok(client)
}

/// Checks presented credentials against the client's registration: the registered method, and
/// the secret compared by hash in constant time.
pub fn authenticate(client: &Client, presented: &Presented) -> Result<(), OAuthError> {
    if presented.method != client.metadata.token_endpoint_auth_method {
        return Err(OAuthError::client("Use the client authentication method this client registered.")
            .logged(format!(
                "method {:?} for a {:?} client",
                presented.method, client.metadata.token_endpoint_auth_method
            )));
    }
    match (&client.secret_hash, &presented.secret) {
        (None, None) => Ok(()),
        (Some(hash), Some(secret))
            if ids::secret_eq(ids::sha256_hex(secret.as_bytes()).as_bytes(), hash.as_bytes()) =>
        {
            Ok(())
        }
        _ => Err(OAuthError::client("The client credentials are invalid.").logged("bad client secret")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn meta(v: Value) -> Result<Metadata, OAuthError> {
        validate_metadata(v.as_object().unwrap(), false)
    }

    #[test]
    fn offline_access_is_registered_as_ignored() {
        let scope =
            |v: &str| meta(json!({"redirect_uris": ["https://a.example/cb"], "scope": v})).map(|m| m.scope);
        assert_eq!(scope("mcp offline_access").unwrap().as_deref(), Some("mcp"));
        assert_eq!(scope("offline_access  mcp mcp:act").unwrap().as_deref(), Some("mcp mcp:act"));
        assert_eq!(scope("offline_access").unwrap(), None, "as if none were asked for");
        assert_eq!(scope("mcp admin").unwrap_err().code.as_str(), "invalid_client_metadata");
    }

    #[test]
    fn a_stored_client_reads_back_as_written() {
        let metadata = meta(json!({
            "redirect_uris": ["https://claude.ai/api/mcp/auth_callback"], "client_name": "Claude",
            "token_endpoint_auth_method": "client_secret_post", "contacts": ["a@b.c"],
            "scope": "mcp", "software_id": "s"
        }))
        .unwrap();
        let client = Client {
            client_id: "vsc_1".into(),
            metadata,
            client_id_issued_at: 1_700_000_000,
            secret_hash: Some("ab".into()),
            source: Source::Dcr,
            stored_at: 1_700_000_000_000,
        };
        let doc = serde_json::to_string(&client).unwrap();
        // The metadata members sit beside the client's own, as before.
        assert!(doc.contains(r#""client_name":"Claude""#) && doc.contains(r#""client_id":"vsc_1""#), "{doc}");
        assert_eq!(serde_json::from_str::<Client>(&doc).unwrap(), client);
        let without_secret = Client { secret_hash: None, ..client };
        let doc = serde_json::to_string(&without_secret).unwrap();
        assert_eq!(serde_json::from_str::<Client>(&doc).unwrap(), without_secret);
        let e = serde_json::from_str::<Client>(r#"{"client_id":"x"}"#).unwrap_err().to_string();
        assert!(e.contains("missing field"), "{e}");
    }

    /// A record as KV and the fallback object hold it today: serde's `flatten` reads the metadata
    /// members from beside the client's own, and each side leaves the other's keys alone.
    #[test]
    fn a_record_stored_today_reads_through_flatten() {
        let doc = r#"{"client_id":"https://app.example/client.json","redirect_uris":["https://app.example/cb"],
            "token_endpoint_auth_method":"none","grant_types":["authorization_code"],"response_types":["code"],
            "client_name":"App","client_id_issued_at":1700000000,"source":"cimd","stored_at":1700000000000}"#;
        let client: Client = serde_json::from_str(doc).unwrap();
        assert_eq!(client.client_id, "https://app.example/client.json");
        assert_eq!(client.metadata.redirect_uris, ["https://app.example/cb"]);
        assert_eq!(client.metadata.token_endpoint_auth_method, AuthMethod::None);
        assert_eq!(client.metadata.client_name.as_deref(), Some("App"));
        assert_eq!((client.source, client.secret_hash), (Source::Cimd, None));
        let missing_metadata = r#"{"client_id":"x","client_id_issued_at":1,"source":"dcr","stored_at":1}"#;
        let e = serde_json::from_str::<Client>(missing_metadata).unwrap_err().to_string();
        assert!(e.contains("missing field `redirect_uris`"), "{e}");
    }

    #[test]
    fn validates_registrations() {
        let m = meta(json!({"redirect_uris": ["https://claude.ai/api/mcp/auth_callback"], "client_name": " Claude ", "token_endpoint_auth_method": "none"})).unwrap();
        assert_eq!(m.client_name.as_deref(), Some("Claude"));
        assert_eq!(m.grant_types, vec!["authorization_code", "refresh_token"]);
        assert_eq!(m.response_types, vec!["code"]);
        let confidential = meta(json!({"redirect_uris": ["https://a.example/cb"]})).unwrap();
        assert_eq!(
            confidential.token_endpoint_auth_method,
            AuthMethod::ClientSecretBasic,
            "RFC 7591 default"
        );
        for (bad, code) in [
            (json!({}), "invalid_redirect_uri"),
            (json!({"redirect_uris": []}), "invalid_redirect_uri"),
            (json!({"redirect_uris": "https://a.example/cb"}), "invalid_client_metadata"),
            (json!({"redirect_uris": ["http://a.example/cb"]}), "invalid_redirect_uri"),
            (
                json!({"redirect_uris": ["https://a.example/cb", "https://a.example/cb"]}),
                "invalid_redirect_uri",
            ),
            (
                json!({"redirect_uris": ["https://a.example/cb"], "grant_types": ["client_credentials"]}),
                "invalid_client_metadata",
            ),
            (
                json!({"redirect_uris": ["https://a.example/cb"], "grant_types": ["refresh_token"]}),
                "invalid_client_metadata",
            ),
            (
                json!({"redirect_uris": ["https://a.example/cb"], "response_types": ["token"]}),
                "invalid_client_metadata",
            ),
            (
                json!({"redirect_uris": ["https://a.example/cb"], "token_endpoint_auth_method": "private_key_jwt"}),
                "invalid_client_metadata",
            ),
            (
                json!({"redirect_uris": ["https://a.example/cb"], "jwks_uri": "https://a.example/jwks"}),
                "invalid_client_metadata",
            ),
            (
                json!({"redirect_uris": ["https://a.example/cb"], "client_name": "x".repeat(101)}),
                "invalid_client_metadata",
            ),
            (
                json!({"redirect_uris": ["https://a.example/cb"], "client_name": "Claude\u{202e}evil"}),
                "invalid_client_metadata",
            ),
            (
                json!({"redirect_uris": ["https://a.example/cb"], "client_name": "Clau\u{200b}de"}),
                "invalid_client_metadata",
            ),
            (
                json!({"redirect_uris": ["https://a.example/cb"], "client_name": "\u{feff}Claude"}),
                "invalid_client_metadata",
            ),
            (json!({"redirect_uris": ["https://a.example/cb"], "client_name": 5}), "invalid_client_metadata"),
            (
                json!({"redirect_uris": ["https://a.example/cb"], "logo_uri": "javascript:alert(1)"}),
                "invalid_client_metadata",
            ),
            (
                json!({"redirect_uris": ["https://a.example/cb"], "scope": "mcp admin"}),
                "invalid_client_metadata",
            ),
            (
                json!({"redirect_uris": ["https://a.example/cb"], "application_type": "desktop"}),
                "invalid_client_metadata",
            ),
        ] {
            let err = meta(bad.clone()).unwrap_err();
            assert_eq!(err.code.as_str(), code, "{bad}: {err:?}");
        }
        let many: Vec<String> = (0..11).map(|i| format!("https://a.example/{i}")).collect();
        assert!(meta(json!({ "redirect_uris": many })).is_err());
    }

    #[test]
    fn public_ids_follow_the_metadata() {
        let a = meta(json!({"redirect_uris": ["https://claude.ai/api/mcp/auth_callback"], "token_endpoint_auth_method": "none", "client_name": "Claude"})).unwrap();
        let b = meta(json!({"client_name": "Claude", "token_endpoint_auth_method": "none", "redirect_uris": ["https://claude.ai/api/mcp/auth_callback"], "unknown": 1})).unwrap();
        assert_eq!(
            public_client_id(&a),
            public_client_id(&b),
            "field order and unknown fields do not matter"
        );
        let c = meta(json!({"redirect_uris": ["https://claude.ai/api/mcp/auth_callback"], "token_endpoint_auth_method": "none", "client_name": "Claude 2"})).unwrap();
        assert_ne!(public_client_id(&a), public_client_id(&c));
        assert!(is_dcr_client_id(&public_client_id(&a)));
        assert!(!is_dcr_client_id("vsc_../../x"));
    }

    /// A public client registered by `name` at `now_ms`.
    fn public_client(name: &str, now_ms: i64) -> Client {
        let metadata = meta(json!({"redirect_uris": ["https://example.com/cb"], "token_endpoint_auth_method": "none", "client_name": name})).unwrap();
        Client {
            client_id: public_client_id(&metadata),
            metadata,
            client_id_issued_at: 0,
            secret_hash: None,
            source: Source::Dcr,
            stored_at: now_ms,
        }
    }

    /// A registered client read once is found again from this isolate's copy for a few minutes
    /// (here with KV down), and from KV after that.
    #[test]
    fn registered_clients_are_kept_for_a_while() {
        use crate::http::Platform;
        let p = crate::testing::TestPlatform::new();
        let config = crate::testing::test_config();
        let client = public_client("copy test", p.now_ms());
        let find_now = |p: &crate::testing::TestPlatform| {
            crate::testing::block_on(find(
                &config,
                p.kv(),
                p.objects(),
                p.outbound(),
                &client.client_id,
                p.now_ms(),
                true,
            ))
        };
        crate::testing::block_on(store(p.kv(), p.objects(), client.clone(), p.now_ms())).unwrap();
        assert_eq!(find_now(&p).unwrap(), Some(client.clone()));
        p.kv_down.set(true);
        p.advance(CLIENT_COPY_MS - 1);
        assert_eq!(find_now(&p).unwrap(), Some(client.clone()), "the copy, without KV");
        p.advance(1);
        assert!(find_now(&p).is_err(), "past its time the copy is not used");
        p.kv_down.set(false);
        assert_eq!(find_now(&p).unwrap(), Some(client));
    }

    /// A KV whose reads work and whose writes fail.
    struct WritesFail<'a>(&'a crate::testing::TestPlatform);

    impl Kv for WritesFail<'_> {
        fn get(&self, key: String) -> LocalBoxFuture<'_, Result<Option<String>, crate::kv::KvError>> {
            self.0.get(key)
        }
        fn put(&self, _: String, _: String, _: u32) -> LocalBoxFuture<'_, Result<(), crate::kv::KvError>> {
            Box::pin(async { Err(crate::kv::KvError("write failed".into())) })
        }
        fn delete(&self, key: String) -> LocalBoxFuture<'_, Result<(), crate::kv::KvError>> {
            self.0.delete(key)
        }
    }

    /// `store` writes the fallback copy, then KV; when KV fails the registration is a 503 and
    /// the client is in the copy only, which is purged after a day. A registration looks in KV
    /// only, so the retry stores again, and gets the copy's record into KV.
    #[test]
    fn a_retried_registration_gets_the_fallback_copy_into_kv() {
        use crate::http::Platform;
        use crate::testing::block_on;
        let p = crate::testing::TestPlatform::new();
        let config = crate::testing::test_config();
        let client = public_client("fallback only", p.now_ms());
        let id = client.client_id.as_str();
        let e = block_on(store(&WritesFail(&p), p.objects(), client.clone(), p.now_ms())).unwrap_err();
        assert_eq!(e.code, ErrorCode::TemporarilyUnavailable);
        assert_eq!(p.kv_value(&kv_key(id)), None);
        let find_with = |with_fallback| {
            block_on(find(&config, p.kv(), p.objects(), p.outbound(), id, p.now_ms(), with_fallback))
        };
        assert_eq!(find_with(true).unwrap(), Some(client.clone()), "the copy answers lookups");
        assert_eq!(find_with(false).unwrap(), None, "but not a registration's");
        p.advance(1_000);
        let again = Client { client_id_issued_at: 1, stored_at: p.now_ms(), ..client.clone() };
        assert_eq!(
            block_on(store(p.kv(), p.objects(), again, p.now_ms())).unwrap(),
            client,
            "the copy's record"
        );
        assert!(p.kv_value(&kv_key(id)).is_some(), "now in KV");
        p.advance(FALLBACK_TTL_MS);
        assert_eq!(find_with(false).unwrap(), Some(client), "from KV once the copy is gone");
    }

    #[test]
    fn detects_the_claude_app() {
        let config = crate::testing::test_config();
        let client = |uris: Vec<&str>| Client {
            client_id: "vsc_x".into(),
            metadata: meta(json!({"redirect_uris": uris, "token_endpoint_auth_method": "none"})).unwrap(),
            client_id_issued_at: 0,
            secret_hash: None,
            source: Source::Dcr,
            stored_at: 0,
        };
        assert!(client(vec!["https://claude.ai/api/mcp/auth_callback"]).is_app(&config));
        assert!(
            client(vec![
                "https://claude.ai/api/mcp/auth_callback",
                "https://claude.com/api/mcp/auth_callback"
            ])
            .is_app(&config)
        );
        assert!(
            !client(vec!["https://claude.ai/api/mcp/auth_callback", "http://localhost/callback"])
                .is_app(&config)
        );
        assert!(!client(vec!["https://claude.ai.evil.com/cb"]).is_app(&config));
        assert!(!client(vec!["https://evil.com/claude.ai"]).is_app(&config));
    }
}

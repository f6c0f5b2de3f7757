//! `POST /v1/oauth/register`: dynamic client registration (RFC 7591).
//!
//! Public clients (`token_endpoint_auth_method: none`, what Claude, Claude Code and the MCP SDK
//! register) get an id derived from their metadata, so registering the same metadata again
//! returns the same client with 201 and costs only the address's large budget of registration
//! requests (`register_ip`), not its small one of new clients (`register`). Confidential
//! clients always get a new id and a new secret (stored hashed): returning an existing one
//! would need its secret in clear, and rotating it would let anyone who knows the metadata
//! lock the owner out.

use serde_json::Value;

use super::clients::{self, AuthMethod, Client, Source};
use super::error::{ErrorCode, OAuthError};
use super::{MAX_OAUTH_BODY_BYTES, metadata, ratelimit};
use crate::config::Config;
use crate::http::{HttpRequest, HttpResponse, Platform};
use crate::ids;
use crate::mcp::Trace;

/// Handles one registration.
pub async fn handle(
    req: &HttpRequest,
    config: &Config,
    platform: &dyn Platform,
    trace: &mut Trace,
) -> HttpResponse {
    let response = match register(req, config, platform, trace).await {
        Ok((client, secret)) => {
            trace.outcome = "ok";
            HttpResponse::json(201, client.registration_response(secret.as_deref()).to_string())
                .with("cache-control", "no-store")
                .with("pragma", "no-cache")
        }
        Err(e) => {
            trace.outcome = "oauth_error";
            if trace.detail.is_none() {
                trace.detail = Some(e.log.clone().unwrap_or_else(|| e.code.as_str().to_owned()));
            }
            e.to_wire()
        }
    };
    metadata::with_public_cors(response)
}

fn metadata_error(description: &str) -> OAuthError {
    OAuthError::new(ErrorCode::InvalidClientMetadata, description)
}

async fn register(
    req: &HttpRequest,
    config: &Config,
    platform: &dyn Platform,
    trace: &mut Trace,
) -> Result<(Client, Option<String>), OAuthError> {
    // Every registration request is counted first, before the lookup, which costs a KV read and
    // a Durable Object call (RFC 7591 §3: registration requests may be rate limited against
    // denial of service), in a budget the size of `token_ip`: hosts such as Claude register
    // identical metadata for every new connection from a few shared addresses, so it must be as
    // large. (First, too, so that nothing of the request is held across the wait: wasm size.)
    ratelimit::check(platform.objects(), req, "register_ip", config.rate_limits.token_ip, trace).await?;
    let is_json = req
        .header("content-type")
        .is_some_and(|ct| ct.split(';').next().unwrap_or("").trim().eq_ignore_ascii_case("application/json"));
    if !is_json {
        return Err(metadata_error("Send the client metadata as application/json."));
    }
    let body = match req.body.as_deref() {
        Some(body) if body.len() <= MAX_OAUTH_BODY_BYTES => body,
        _ => return Err(metadata_error("The registration request is larger than 16 KiB.")),
    };
    let Ok(Value::Object(doc)) = serde_json::from_slice(body) else {
        return Err(metadata_error("The registration request must be a JSON object."));
    };
    let metadata = clients::validate_metadata(&doc, false)?;
    let now_ms = platform.now_ms();
    let public = metadata.token_endpoint_auth_method == AuthMethod::None;
    let (client_id, secret) = if public {
        let id = clients::public_client_id(&metadata);
        // Identical metadata registered before: the same client, without spending `register`.
        // KV only (`clients::find`): a client in the fallback copy alone is stored again below,
        // which writes the copy's record to KV before the 201.
        if let Some(existing) =
            clients::find(config, platform.kv(), platform.objects(), platform.outbound(), &id, now_ms, false)
                .await?
        {
            return Ok((existing, None));
        }
        (id, None)
    } else {
        (format!("vsc_{}", ids::hex(&ids::random_bytes::<16>())), Some(ids::hex(&ids::random_bytes::<32>())))
    };
    // A client that will be stored: the small budget of new registrations.
    ratelimit::check(platform.objects(), req, "register", config.rate_limits.register, trace).await?;
    let client = Client {
        client_id,
        metadata,
        client_id_issued_at: now_ms / 1000,
        secret_hash: secret.as_deref().map(|s| ids::sha256_hex(s.as_bytes())),
        source: Source::Dcr,
        stored_at: now_ms,
    };
    let stored = clients::store(platform.kv(), platform.objects(), client, now_ms).await?;
    Ok((stored, secret))
}

//! Discovery: authorization server metadata (RFC 8414) and protected resource metadata
//! (RFC 9728), public and cacheable, readable from any browser origin.
//!
//! One issuer string everywhere (MCP-CONFORMANCE A-12): `Config::issuer()` is the bare public
//! origin without a trailing slash, and it is what `issuer`, `authorization_servers[0]`, the
//! `iss` of every authorization response and the `iss` claim of every access token carry.

use serde_json::{Value, json};

use super::{AUTHORIZE_PATH, REGISTER_PATH, REVOKE_PATH, TOKEN_PATH};
use crate::auth::Scope;
use crate::config::Config;
use crate::http::HttpResponse;

/// Token endpoint client authentication methods (and revocation's): `none` for public clients
/// such as Claude and Claude Code (MCP-CONFORMANCE A-21), secrets for confidential ones.
pub const AUTH_METHODS: [&str; 3] = ["none", "client_secret_post", "client_secret_basic"];

/// RFC 8414 §2.
pub fn authorization_server(config: &Config) -> Value {
    let issuer = config.issuer();
    let scopes: Vec<&str> = Scope::ALL.iter().map(|s| s.as_str()).collect();
    json!({
        "issuer": issuer,
        "authorization_endpoint": format!("{issuer}{AUTHORIZE_PATH}"),
        "token_endpoint": format!("{issuer}{TOKEN_PATH}"),
        "registration_endpoint": format!("{issuer}{REGISTER_PATH}"),
        "revocation_endpoint": format!("{issuer}{REVOKE_PATH}"),
        "scopes_supported": scopes,
        "response_types_supported": ["code"],
        "response_modes_supported": ["query"],
        "grant_types_supported": ["authorization_code", "refresh_token"],
        "token_endpoint_auth_methods_supported": AUTH_METHODS,
        "revocation_endpoint_auth_methods_supported": AUTH_METHODS,
        "code_challenge_methods_supported": ["S256"],
        "authorization_response_iss_parameter_supported": true,
        "client_id_metadata_document_supported": true,
    })
}

/// RFC 9728 §2, for the MCP endpoint.
pub fn protected_resource(config: &Config) -> Value {
    let scopes: Vec<&str> = Scope::ALL.iter().map(|s| s.as_str()).collect();
    json!({
        "resource": config.resource(),
        "authorization_servers": [config.issuer()],
        "scopes_supported": scopes,
        "bearer_methods_supported": ["header"],
        "resource_name": "VibeSell",
    })
}

/// A discovery document: public, cached for an hour, readable cross-origin.
pub fn document(method: &str, body: &Value) -> HttpResponse {
    let text = body.to_string();
    let response = HttpResponse::json(200, if method == "HEAD" { String::new() } else { text });
    with_public_cors(response).with("cache-control", "public, max-age=3600")
}

/// CORS for public, credential-less documents and endpoints (RFC 8414 §3 and MCP clients running
/// in browsers, such as the MCP Inspector): any origin may read them.
pub fn with_public_cors(response: HttpResponse) -> HttpResponse {
    response
        .with("access-control-allow-origin", "*")
        .with("access-control-expose-headers", "WWW-Authenticate, Retry-After, X-Request-Id")
}

/// The preflight for the public documents and the JSON endpoints (`methods` e.g. `"GET, HEAD"`).
pub fn public_preflight(methods: &str) -> HttpResponse {
    HttpResponse::empty(204)
        .with("access-control-allow-origin", "*")
        .with("access-control-allow-methods", format!("{methods}, OPTIONS"))
        .with("access-control-allow-headers", "Authorization, Content-Type, Accept, MCP-Protocol-Version")
        .with("access-control-max-age", "86400")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::test_config;

    #[test]
    fn one_issuer_string_everywhere() {
        let config = test_config();
        let as_meta = authorization_server(&config);
        let prm = protected_resource(&config);
        assert_eq!(as_meta["issuer"], "http://127.0.0.1:8787");
        assert_eq!(prm["authorization_servers"][0], as_meta["issuer"]);
        assert_eq!(prm["resource"], "http://127.0.0.1:8787/v1/mcp");
        assert_eq!(as_meta["code_challenge_methods_supported"], json!(["S256"]));
        assert!(
            as_meta["token_endpoint_auth_methods_supported"].as_array().unwrap().contains(&json!("none"))
        );
        assert_eq!(as_meta["scopes_supported"], json!(["mcp", "mcp:act"]));
        assert_eq!(as_meta["client_id_metadata_document_supported"], true);
        assert!(!as_meta.to_string().contains("null"));
    }
}

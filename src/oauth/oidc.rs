//! Sign-in with the configured OpenID Connect provider (PRODUCT §10): the authorization code
//! flow with PKCE (OpenID Connect Core §3.1, RFC 7636), the ID token verified against the
//! provider's JWKS.
//!
//! `GET /app/signin/oidc?return_to&csrf` (the sign-in page's button, CSRF-checked against the
//! browser cookie) fetches the provider's metadata, keeps `{nonce, verifier, return_to}` in the
//! `OAuthState` object `signin:<hash(state)>` bound to the browser, and sends the browser to the
//! provider. `GET /app/signin/callback` takes that state (single use, same browser), checks the
//! provider's `iss` when it sends one (RFC 9207), exchanges the code with the verifier, verifies
//! the ID token (RS256 with a key of the provider's JWKS, issuer, audience, `azp`, expiry, issue
//! time, nonce), starts the session and returns to where the user was going.
//!
//! The user's subject is `oidc:<provider host>:<sub>`: the provider's stable identifier,
//! namespaced by provider, never the email (which can change hands). The email is only shown.
//! Metadata and keys are fetched at each sign-in, which is rare; a key rotation is therefore
//! picked up at once.

use base64::Engine as _;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::form::Form;
use super::pages;
use super::session::{self, Browser};
use super::state::{EntryKind, StateOp, StateReply};
use super::{PENDING_TTL_MS, SIGNIN_CALLBACK_PATH, pkce, ratelimit, tokens};
use crate::config::{Config, OidcProvider};
use crate::http::{HttpRequest, HttpResponse, Platform};
use crate::mcp::Trace;
use crate::outbound::{Outbound, OutboundRequest};
use crate::tools::registry::LocalBoxFuture;
use crate::urls;

const FETCH_TIMEOUT_MS: u32 = 5_000;
const MAX_DOCUMENT_BYTES: usize = 64 * 1024;
const LEEWAY_SECS: i64 = 60;

/// The provider metadata this client uses (OpenID Connect Discovery 1.0 §3).
#[derive(Debug, Clone, Deserialize)]
pub struct ProviderMetadata {
    /// Must equal the configured issuer exactly (§4.3).
    pub issuer: String,
    /// Where the browser goes.
    pub authorization_endpoint: String,
    /// Where the code is exchanged.
    pub token_endpoint: String,
    /// The signing keys.
    pub jwks_uri: String,
    /// How to authenticate at the token endpoint (default `client_secret_basic`).
    #[serde(default)]
    pub token_endpoint_auth_methods_supported: Option<Vec<String>>,
    /// Whether authorization responses carry `iss` (RFC 9207).
    #[serde(default)]
    pub authorization_response_iss_parameter_supported: bool,
}

/// A sign-in in progress.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SigninState {
    /// The ID token must carry it.
    pub nonce: String,
    /// The PKCE verifier.
    pub verifier: String,
    /// Where to go once signed in.
    pub return_to: String,
}

/// The ID token claims checked.
#[derive(Debug, Clone, Deserialize)]
pub struct IdClaims {
    /// Issuer.
    pub iss: String,
    /// Audience: a string or an array.
    pub aud: Value,
    /// Authorized party.
    #[serde(default)]
    pub azp: Option<String>,
    /// The user at the provider.
    pub sub: String,
    /// Replay protection.
    #[serde(default)]
    pub nonce: Option<String>,
    /// The user's email, shown as who is signed in.
    #[serde(default)]
    pub email: Option<String>,
    /// The user's name, if no email.
    #[serde(default)]
    pub name: Option<String>,
}

fn secure_url(raw: &str, config: &Config) -> bool {
    urls::read(raw).is_ok_and(|u| {
        u.scheme() == "https" || (u.scheme() == "http" && config.is_local() && urls::is_loopback(u.host()))
    })
}

fn fetch_json(
    outbound: &dyn Outbound,
    request: OutboundRequest,
) -> LocalBoxFuture<'_, Result<Value, String>> {
    // Boxed: three fetches, compiled once (wasm size).
    Box::pin(fetch_json_now(outbound, request))
}

async fn fetch_json_now(outbound: &dyn Outbound, request: OutboundRequest) -> Result<Value, String> {
    let url = request.url.clone();
    let response = outbound
        .fetch(request.timeout(FETCH_TIMEOUT_MS).max_body(MAX_DOCUMENT_BYTES).no_redirects())
        .await
        .map_err(|e| format!("{url}: {e}"))?;
    if response.status != 200 {
        let text: String = String::from_utf8_lossy(&response.body).chars().take(200).collect();
        return Err(format!("{url} answered {}: {text}", response.status));
    }
    serde_json::from_slice(&response.body).map_err(|e| format!("{url}: not JSON: {e}"))
}

/// Fetches and checks the provider's metadata.
pub fn discover<'a>(
    provider: &'a OidcProvider,
    config: &'a Config,
    outbound: &'a dyn Outbound,
) -> LocalBoxFuture<'a, Result<ProviderMetadata, String>> {
    Box::pin(fetch_metadata(provider, config, outbound))
}

async fn fetch_metadata(
    provider: &OidcProvider,
    config: &Config,
    outbound: &dyn Outbound,
) -> Result<ProviderMetadata, String> {
    let url = format!("{}/.well-known/openid-configuration", provider.issuer);
    let doc = fetch_json(outbound, OutboundRequest::get(url).header("accept", "application/json")).await?;
    let meta: ProviderMetadata =
        serde_json::from_value(doc).map_err(|e| format!("provider metadata: {e}"))?;
    if meta.issuer != provider.issuer {
        return Err(format!(
            "provider metadata names issuer {:?}, expected {:?}",
            meta.issuer, provider.issuer
        ));
    }
    for endpoint in [&meta.authorization_endpoint, &meta.token_endpoint, &meta.jwks_uri] {
        if !secure_url(endpoint, config) {
            return Err(format!("provider endpoint {endpoint} is not a usable https URL"));
        }
    }
    Ok(meta)
}

/// Verifies RS256 signatures (RSASSA-PKCS1-v1_5 with SHA-256, RFC 7518 §3.3): the runtime's
/// WebCrypto on Workers (no bignum code in the Worker's wasm), the `rsa` crate in native tests.
pub trait Rs256Verifier {
    /// Whether `signature` over `message` verifies under the RSA public key whose modulus and
    /// exponent are `n` and `e` (base64url, as in a JWK).
    fn verify<'a>(
        &'a self,
        n: &'a str,
        e: &'a str,
        message: &'a [u8],
        signature: &'a [u8],
    ) -> LocalBoxFuture<'a, bool>;
}

/// An RSA signing key of a JWKS (RFC 7517 §5).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RsaJwk {
    /// Its `kid`.
    pub kid: Option<String>,
    /// Modulus, base64url.
    pub n: String,
    /// Public exponent, base64url.
    pub e: String,
}

fn b64url_decode(s: &str) -> Option<Vec<u8>> {
    URL_SAFE_NO_PAD.decode(s.trim_end_matches('=')).ok()
}

/// The RSA signing keys of a JWKS usable for RS256: `kty` RSA, `use` sig (or none), `alg` RS256
/// (or none), and at least 2048 bits (RFC 7518 §3.3).
pub fn rsa_keys(jwks: &Value) -> Vec<RsaJwk> {
    let Some(keys) = jwks.get("keys").and_then(Value::as_array) else { return Vec::new() };
    keys.iter()
        .filter(|k| k.get("kty").and_then(Value::as_str) == Some("RSA"))
        .filter(|k| k.get("use").and_then(Value::as_str).is_none_or(|u| u == "sig"))
        .filter(|k| k.get("alg").and_then(Value::as_str).is_none_or(|a| a == "RS256"))
        .filter_map(|k| {
            let n = k.get("n")?.as_str()?;
            let e = k.get("e")?.as_str()?;
            let modulus = b64url_decode(n)?;
            let significant = modulus.iter().skip_while(|b| **b == 0).count();
            (significant * 8 >= 2048 && b64url_decode(e).is_some_and(|e| !e.is_empty())).then(|| RsaJwk {
                kid: k.get("kid").and_then(Value::as_str).map(str::to_owned),
                n: n.to_owned(),
                e: e.to_owned(),
            })
        })
        .collect()
}

/// A JWT `NumericDate` (RFC 7519 §2), in seconds; fractions are dropped.
fn numeric_date(claims: &Value, name: &str) -> Option<i64> {
    let v = claims.get(name)?;
    v.as_i64().or_else(|| v.as_f64().filter(|f| f.is_finite()).map(|f| f as i64))
}

/// Verifies an ID token (OpenID Connect Core §3.1.3.7): RS256 with a key of the JWKS, then the
/// claims.
pub async fn verify_id_token(
    verifier: &dyn Rs256Verifier,
    token: &str,
    jwks: &Value,
    issuer: &str,
    client_id: &str,
    nonce: &str,
    now_ms: i64,
) -> Result<IdClaims, String> {
    let parts: Vec<&str> = token.split('.').collect();
    let [header_b64, payload_b64, signature_b64] = parts.as_slice() else {
        return Err("malformed ID token".into());
    };
    let header: Value = b64url_decode(header_b64)
        .and_then(|h| serde_json::from_slice(&h).ok())
        .ok_or("malformed ID token header")?;
    let alg = header.get("alg").and_then(Value::as_str).unwrap_or("");
    if alg != "RS256" {
        return Err(format!("ID token algorithm {alg:?} is not RS256"));
    }
    let keys = rsa_keys(jwks);
    let key = match header.get("kid").and_then(Value::as_str) {
        Some(kid) => keys.iter().find(|k| k.kid.as_deref() == Some(kid)),
        None if keys.len() == 1 => keys.first(),
        None => None,
    }
    .ok_or("no JWKS key for the ID token")?;
    let signature = b64url_decode(signature_b64).ok_or("malformed ID token signature")?;
    let message = format!("{header_b64}.{payload_b64}");
    if !verifier.verify(&key.n, &key.e, message.as_bytes(), &signature).await {
        return Err("ID token signature does not verify".into());
    }
    let payload: Value = b64url_decode(payload_b64)
        .and_then(|p| serde_json::from_slice(&p).ok())
        .ok_or("malformed ID token claims")?;
    let now = now_ms / 1000;
    match numeric_date(&payload, "exp") {
        Some(exp) if exp + LEEWAY_SECS >= now => {}
        Some(_) => return Err("ID token expired".into()),
        None => return Err("ID token has no exp".into()),
    }
    if numeric_date(&payload, "iat").is_none_or(|iat| iat > now + LEEWAY_SECS) {
        return Err("ID token iat missing or in the future".into());
    }
    let claims: IdClaims = serde_json::from_value(payload).map_err(|e| format!("ID token claims: {e}"))?;
    if claims.iss != issuer {
        return Err(format!("ID token issuer {:?}", claims.iss));
    }
    let audiences: Vec<&str> = match &claims.aud {
        Value::String(a) => vec![a.as_str()],
        Value::Array(items) => items.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    };
    if !audiences.contains(&client_id) {
        return Err("ID token audience is not this client".into());
    }
    if (audiences.len() > 1 || claims.azp.is_some()) && claims.azp.as_deref() != Some(client_id) {
        return Err("ID token azp is not this client".into());
    }
    if !claims.nonce.as_deref().is_some_and(|n| crate::ids::secret_eq(n.as_bytes(), nonce.as_bytes())) {
        return Err("ID token nonce does not match".into());
    }
    if claims.sub.is_empty() || claims.sub.len() > 255 {
        return Err("ID token sub is empty or too long".into());
    }
    Ok(claims)
}

/// The VibeSell subject of a provider's user.
pub fn subject_for(provider: &OidcProvider, sub: &str) -> String {
    let url = urls::Url::parse(&provider.issuer).ok();
    let host = url.as_ref().and_then(urls::Url::host_str).unwrap_or_default();
    format!("oidc:{host}:{sub}")
}

fn callback_url(config: &Config) -> String {
    format!("{}{SIGNIN_CALLBACK_PATH}", config.issuer())
}

fn signin_state_location(state: &str) -> (String, String) {
    let key = tokens::hash(state);
    (format!("signin:{key}"), key)
}

fn failed(trace: &mut Trace, status: u16, code: &'static str, message: &str, detail: String) -> HttpResponse {
    trace.outcome = "refused";
    trace.detail = Some(detail);
    pages::error(status, code, "Sign-in did not complete", message)
}

/// `GET /app/signin/oidc`.
pub async fn start(
    req: &HttpRequest,
    config: &Config,
    platform: &dyn Platform,
    trace: &mut Trace,
) -> HttpResponse {
    let Some(provider) = &config.oidc else {
        return pages::error(404, "not_found", "Not found", "There is no such page.");
    };
    let query = Form::parse(req.query.as_deref().unwrap_or("").as_bytes());
    let return_to = session::safe_return_to(query.get("return_to").ok().flatten());
    let browser = Browser::existing(req);
    let csrf_ok = browser.as_ref().is_some_and(|b| {
        query.get("csrf").ok().flatten().is_some_and(|c| b.check_csrf(&format!("signin|{return_to}"), c))
    });
    let Some(browser) = browser.filter(|_| csrf_ok) else {
        return failed(
            trace,
            403,
            "csrf",
            "This sign-in link did not come from this browser. Go back and try again.",
            "csrf".into(),
        );
    };
    if let Err(e) =
        ratelimit::check(platform.objects(), req, "authorize", config.rate_limits.authorize, trace).await
    {
        return pages::error(429, "too_many_requests", "Too many attempts", &e.description)
            .with("retry-after", e.retry_after_secs.unwrap_or(60).to_string());
    }
    let meta = match discover(provider, config, platform.outbound()).await {
        Ok(meta) => meta,
        Err(e) => {
            return failed(
                trace,
                503,
                "provider_unavailable",
                &format!("{} cannot be reached. Try again in a moment.", provider.name),
                e,
            );
        }
    };
    let state = tokens::new_secret();
    let verifier = tokens::new_secret();
    let signin = SigninState { nonce: tokens::new_secret(), verifier: verifier.clone(), return_to };
    let (object, key) = signin_state_location(&state);
    let op = StateOp::Put {
        kind: EntryKind::Signin,
        key,
        binding: browser.binding(),
        doc: serde_json::to_string(&signin).unwrap_or_default(),
        expires_at: platform.now_ms() + PENDING_TTL_MS,
    };
    match platform.objects().state(object, op).await {
        Ok(StateReply::Doc { doc: Some(_) }) => {}
        other => {
            let detail = match other {
                Ok(reply) => format!("signin state answered {}", reply.kind()),
                Err(e) => format!("signin state: {e}"),
            };
            return failed(trace, 503, "unavailable", "Try again in a moment.", detail);
        }
    }
    let to = urls::with_query(
        &meta.authorization_endpoint,
        &[
            ("response_type", "code"),
            ("client_id", &provider.client_id),
            ("redirect_uri", &callback_url(config)),
            ("scope", "openid email profile"),
            ("state", &state),
            ("nonce", &signin.nonce),
            ("code_challenge", &pkce::s256(&verifier)),
            ("code_challenge_method", "S256"),
        ],
    );
    // `discover` has read the endpoint as an https URL (`secure_url`), so it always is one.
    let Some(to) = to else {
        let detail = format!("authorization endpoint {} is not a URL", meta.authorization_endpoint);
        return failed(trace, 502, "provider_unavailable", "The sign-in provider is misconfigured.", detail);
    };
    trace.outcome = "ok";
    pages::redirect(&to).with("set-cookie", browser.cookie())
}

/// `GET /app/signin/callback`.
pub async fn callback(
    req: &HttpRequest,
    config: &Config,
    platform: &dyn Platform,
    trace: &mut Trace,
) -> HttpResponse {
    let Some(provider) = &config.oidc else {
        return pages::error(404, "not_found", "Not found", "There is no such page.");
    };
    let query = Form::parse(req.query.as_deref().unwrap_or("").as_bytes());
    let expired = "This sign-in is no longer valid (it was used, is more than 10 minutes old, or began in another browser). Start again.";
    let (Some(state), Some(browser)) = (query.get("state").ok().flatten(), Browser::existing(req)) else {
        return failed(trace, 400, "signin_expired", expired, "no state or no browser cookie".into());
    };
    let (object, key) = signin_state_location(state);
    let op = StateOp::Take { kind: EntryKind::Signin, key, binding: browser.binding() };
    let signin: SigninState = match platform.objects().state(object, op).await {
        Ok(StateReply::Doc { doc: Some(doc) }) => match serde_json::from_str(&doc) {
            Ok(s) => s,
            Err(e) => return failed(trace, 400, "signin_expired", expired, e.to_string()),
        },
        Ok(_) => return failed(trace, 400, "signin_expired", expired, "unknown sign-in state".into()),
        Err(e) => return failed(trace, 503, "unavailable", "Try again in a moment.", e.to_string()),
    };
    if let Some(error) = query.get("error").ok().flatten() {
        let message = format!("{} did not sign you in. Start again if you want to.", provider.name);
        return failed(trace, 400, "signin_refused", &message, format!("provider error {error}"));
    }
    match verify_callback(config, provider, platform, &query, &signin).await {
        Ok((subject, display)) => match session::start(platform, &subject, &display).await {
            Ok(cookie) => {
                trace.outcome = "ok";
                pages::redirect(&signin.return_to).with("set-cookie", cookie)
            }
            Err(e) => session::unavailable_page(&e),
        },
        Err(detail) => failed(
            trace,
            400,
            "signin_failed",
            &format!("VibeSell could not confirm your identity with {}. Start again.", provider.name),
            detail,
        ),
    }
}

async fn verify_callback(
    config: &Config,
    provider: &OidcProvider,
    platform: &dyn Platform,
    query: &Form,
    signin: &SigninState,
) -> Result<(String, String), String> {
    let code = query.get("code").ok().flatten().ok_or("no code")?;
    let meta = discover(provider, config, platform.outbound()).await?;
    match query.get("iss").ok().flatten() {
        // RFC 9207 §2.4: a provider that says it sends iss must send its own.
        Some(iss) if iss != meta.issuer => return Err(format!("callback iss {iss:?}")),
        None if meta.authorization_response_iss_parameter_supported => {
            return Err("callback without iss".into());
        }
        _ => {}
    }
    let callback = callback_url(config);
    let mut form = vec![
        ("grant_type", "authorization_code"),
        ("code", code),
        ("redirect_uri", callback.as_str()),
        ("code_verifier", signin.verifier.as_str()),
    ];
    let mut request_headers = Vec::new();
    match &provider.client_secret {
        Some(secret) => {
            let basic = meta
                .token_endpoint_auth_methods_supported
                .as_ref()
                .is_none_or(|m| m.iter().any(|x| x == "client_secret_basic"));
            if basic {
                let enc = crate::form::encode_component;
                let pair = format!("{}:{}", enc(&provider.client_id), enc(secret));
                request_headers.push(("authorization", format!("Basic {}", STANDARD.encode(pair))));
            } else {
                form.extend([("client_id", provider.client_id.as_str()), ("client_secret", secret.as_str())]);
            }
        }
        None => {
            form.push(("client_id", &provider.client_id));
        }
    }
    let mut request = OutboundRequest::post(
        &meta.token_endpoint,
        "application/x-www-form-urlencoded",
        crate::form::encode(&form),
    )
    .header("accept", "application/json");
    for (k, v) in request_headers {
        request = request.header(k, v);
    }
    let tokens = fetch_json(platform.outbound(), request).await?;
    let id_token =
        tokens.get("id_token").and_then(Value::as_str).ok_or("no id_token in the token response")?;
    let jwks = fetch_json(
        platform.outbound(),
        OutboundRequest::get(&meta.jwks_uri).header("accept", "application/json"),
    )
    .await?;
    let claims = verify_id_token(
        platform.rs256(),
        id_token,
        &jwks,
        &provider.issuer,
        &provider.client_id,
        &signin.nonce,
        platform.now_ms(),
    )
    .await?;
    let display = claims.email.clone().or(claims.name.clone()).unwrap_or_else(|| claims.sub.clone());
    Ok((subject_for(provider, &claims.sub), display.chars().take(254).collect()))
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use chrono::{DateTime, Duration, Utc};
    use jwt_compact::alg::{Rsa, RsaPrivateKey};
    use jwt_compact::jwk::JsonWebKey;
    use jwt_compact::{AlgorithmExt as _, Claims, Header, TimeOptions};
    use serde_json::json;

    fn verify(
        token: &str,
        jwks: &Value,
        iss: &str,
        aud: &str,
        nonce: &str,
        now: i64,
    ) -> Result<IdClaims, String> {
        crate::testing::block_on(verify_id_token(
            &crate::testing::NativeRs256,
            token,
            jwks,
            iss,
            aud,
            nonce,
            now,
        ))
    }

    /// A fixed 2048-bit test key, for tests only (generating one in a debug build takes seconds).
    pub(crate) const TEST_KEY: &str = include_str!("testdata/oidc-test-key.json");

    pub(crate) fn private_key() -> RsaPrivateKey {
        let jwk: JsonWebKey<'_> = serde_json::from_str(TEST_KEY).unwrap();
        RsaPrivateKey::try_from(&jwk).unwrap()
    }

    pub(crate) fn jwks() -> Value {
        let key = private_key();
        let public = key.to_public_key();
        let mut jwk = serde_json::to_value(JsonWebKey::from(&public)).unwrap();
        jwk["kid"] = json!("k1");
        jwk["use"] = json!("sig");
        jwk["alg"] = json!("RS256");
        json!({ "keys": [jwk] })
    }

    pub(crate) fn id_token(claims: Value, kid: Option<&str>, now_ms: i64, ttl_secs: i64) -> String {
        let now = DateTime::<Utc>::from_timestamp_millis(now_ms).unwrap();
        let options = TimeOptions::new(Duration::seconds(0), move || now);
        let claims = Claims::new(claims).set_duration_and_issuance(&options, Duration::seconds(ttl_secs));
        let mut header = Header::empty().with_token_type("JWT");
        if let Some(kid) = kid {
            header = header.with_key_id(kid);
        }
        Rsa::rs256().token(&header, &claims, &private_key()).unwrap()
    }

    const ISS: &str = "https://idp.example.com";

    fn good() -> Value {
        json!({"iss": ISS, "aud": "vibesell", "sub": "user-1", "nonce": "n1", "email": "ada@example.com"})
    }

    #[test]
    fn verifies_id_tokens() {
        let now = crate::testing::NOW_MS;
        let token = id_token(good(), Some("k1"), now, 300);
        let claims = verify(&token, &jwks(), ISS, "vibesell", "n1", now).unwrap();
        assert_eq!((claims.sub.as_str(), claims.email.as_deref()), ("user-1", Some("ada@example.com")));
        let no_kid = id_token(good(), None, now, 300);
        assert!(verify(&no_kid, &jwks(), ISS, "vibesell", "n1", now).is_ok(), "one key and no kid");
        let array_aud = id_token(
            json!({"iss": ISS, "aud": ["vibesell", "other"], "azp": "vibesell", "sub": "u", "nonce": "n1"}),
            Some("k1"),
            now,
            300,
        );
        assert!(verify(&array_aud, &jwks(), ISS, "vibesell", "n1", now).is_ok());
    }

    #[test]
    fn refuses_bad_id_tokens() {
        let now = crate::testing::NOW_MS;
        let token = id_token(good(), Some("k1"), now, 300);
        let cases: Vec<(String, &str, &str, &str, i64)> = vec![
            (token.clone(), "https://other.example.com", "vibesell", "n1", now),
            (token.clone(), ISS, "someone-else", "n1", now),
            (token.clone(), ISS, "vibesell", "n2", now),
            (token.clone(), ISS, "vibesell", "n1", now + 400_000),
            (id_token(good(), Some("k1"), now + 600_000, 300), ISS, "vibesell", "n1", now),
            (id_token(good(), Some("unknown"), now, 300), ISS, "vibesell", "n1", now),
            (
                id_token(
                    json!({"iss": ISS, "aud": ["vibesell", "other"], "sub": "u", "nonce": "n1"}),
                    Some("k1"),
                    now,
                    300,
                ),
                ISS,
                "vibesell",
                "n1",
                now,
            ),
            (
                id_token(
                    json!({"iss": ISS, "aud": "vibesell", "sub": "", "nonce": "n1"}),
                    Some("k1"),
                    now,
                    300,
                ),
                ISS,
                "vibesell",
                "n1",
                now,
            ),
            (
                id_token(json!({"iss": ISS, "aud": "vibesell", "sub": "u"}), Some("k1"), now, 300),
                ISS,
                "vibesell",
                "n1",
                now,
            ),
        ];
        for (i, (token, iss, aud, nonce, at)) in cases.into_iter().enumerate() {
            assert!(verify(&token, &jwks(), iss, aud, nonce, at).is_err(), "case {i}");
        }
        // A tampered payload, an HS256 token made with the public modulus, and alg none.
        let mut parts: Vec<String> = token.split('.').map(str::to_owned).collect();
        use base64::Engine as _;
        let b64 = base64::engine::general_purpose::URL_SAFE_NO_PAD;
        let evil = json!({"iss": ISS, "aud": "vibesell", "sub": "admin", "nonce": "n1", "exp": now / 1000 + 300, "iat": now / 1000});
        parts[1] = b64.encode(evil.to_string());
        assert!(verify(&parts.join("."), &jwks(), ISS, "vibesell", "n1", now).is_err());
        let none = format!("{}.{}.", b64.encode(r#"{"alg":"none","kid":"k1"}"#), parts[1]);
        assert!(verify(&none, &jwks(), ISS, "vibesell", "n1", now).unwrap_err().contains("RS256"));
        let hs =
            format!("{}.{}.{}", b64.encode(r#"{"alg":"HS256","kid":"k1"}"#), parts[1], b64.encode([0u8; 32]));
        assert!(verify(&hs, &jwks(), ISS, "vibesell", "n1", now).unwrap_err().contains("RS256"));
        let weak =
            json!({"keys": [{"kty": "RSA", "kid": "k1", "n": b64.encode([0xff_u8; 128]), "e": "AQAB"}]});
        assert!(rsa_keys(&weak).is_empty(), "1024-bit keys are refused");
    }
}

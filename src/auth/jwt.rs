//! Access tokens: short-lived JWTs (RFC 9068 profile) signed with HS256 by this Worker.
//!
//! The authorization server and the resource server are the same Worker, so a symmetric key is
//! enough and keeps verification to one HMAC per request. Every token names its key (`kid`) so
//! keys rotate: the first configured key signs, all configured keys verify.
//!
//! The JWS compact serialisation (RFC 7515 §7.1) with HS256 (RFC 7518 §3.2) is jwt-compact's.
//! Before any key is used the header is read to choose it: its `alg` must be HS256 and its `typ`
//! `at+jwt`, and its `kid` must name a configured key. jwt-compact then reads the claims, checks
//! the MAC (in constant time) and `exp`; `iat`, issuer, audience and scopes are checked here.

use std::cell::RefCell;
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

use chrono::{DateTime, Duration, Utc};
use jwt_compact::alg::{Hs256, Hs256Key};
use jwt_compact::{AlgorithmExt as _, Claims, Header, TimeOptions, UntrustedToken, ValidationError};
use serde::{Deserialize, Serialize};

use super::{Principal, ScopeSet};
use crate::config::Config;

/// The `typ` header of access tokens (RFC 9068 §2.1), checked so that no other kind of JWT
/// signed with the same key can be used as an access token.
pub const ACCESS_TOKEN_TYPE: &str = "at+jwt";

/// Clock skew tolerated on `exp` and `iat`, in seconds.
const LEEWAY_SECS: i64 = 30;

/// The claims of an access token besides `exp` and `iat`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AccessClaims {
    /// Issuer: the public URL.
    pub iss: String,
    /// Audience: the MCP endpoint's canonical URI (RFC 8707).
    pub aud: String,
    /// The user.
    pub sub: String,
    /// The user's workspace.
    pub ws: String,
    /// The OAuth client (RFC 9068 `client_id`).
    pub client_id: String,
    /// Space-separated scopes.
    pub scope: String,
    /// Whether the client is the Claude app.
    #[serde(default)]
    pub app: bool,
    /// Token id.
    pub jti: String,
    /// The grant (authorization) this token belongs to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gid: Option<String>,
}

/// Why a token was refused. The variants are for logs; the wire says only `invalid_token`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TokenError {
    /// Not a JWS compact serialisation.
    #[error("malformed token")]
    Malformed,
    /// `typ` is not `at+jwt`.
    #[error("not an access token (typ)")]
    WrongType,
    /// `alg` is not HS256 (`none`, RS256, ES256… are all refused).
    #[error("algorithm {0:?} is not accepted")]
    WrongAlgorithm(String),
    /// No configured key has this `kid`.
    #[error("unknown key id")]
    UnknownKey,
    /// The MAC does not verify.
    #[error("bad signature")]
    BadSignature,
    /// The claims are missing or malformed.
    #[error("bad claims: {0}")]
    BadClaims(String),
    /// `exp` is in the past.
    #[error("expired")]
    Expired,
    /// `iat` is in the future.
    #[error("issued in the future")]
    NotYetValid,
    /// `iss` is not this server.
    #[error("wrong issuer")]
    WrongIssuer,
    /// `aud` is not this MCP endpoint.
    #[error("wrong audience")]
    WrongAudience,
    /// The token's grant was revoked (found when it reached the workspace).
    #[error("grant revoked")]
    Revoked,
}

/// The clock of jwt-compact's time checks: `now_ms` truncated to whole seconds, the resolution
/// of NumericDate claims (RFC 7519 §2); `None` past chrono's range.
fn time_options(now_ms: i64) -> Option<TimeOptions<impl Fn() -> DateTime<Utc>>> {
    let now = DateTime::from_timestamp(now_ms.div_euclid(1000), 0)?;
    Some(TimeOptions::new(Duration::seconds(LEEWAY_SECS), move || now))
}

/// Signs an access token for `claims`, valid for `ttl_secs` from `now_ms`.
pub fn mint(config: &Config, claims: AccessClaims, now_ms: i64, ttl_secs: i64) -> Result<String, String> {
    let key = config.active_key();
    let options = time_options(now_ms).ok_or("the clock is out of range")?;
    let ttl = Duration::try_seconds(ttl_secs).ok_or("the lifetime is out of range")?;
    let claims = Claims::new(claims).set_duration_and_issuance(&options, ttl);
    let header = Header::empty().with_key_id(&key.kid).with_token_type(ACCESS_TOKEN_TYPE);
    Hs256.token(&header, &claims, &Hs256Key::new(&key.secret)).map_err(|e| e.to_string())
}

/// Verifies an access token and returns who it speaks for.
pub fn verify(config: &Config, token: &str, now_ms: i64) -> Result<(Principal, AccessClaims), TokenError> {
    verify_with_times(config, token, now_ms).map(|v| (v.0, v.1))
}

/// [`verify`], also returning `exp` and `iat` (seconds) and the kid of the verifying key.
fn verify_with_times(
    config: &Config,
    token: &str,
    now_ms: i64,
) -> Result<(Principal, AccessClaims, i64, Option<i64>, String), TokenError> {
    // RFC 7515 §7.1: BASE64URL(header) "." BASE64URL(payload) "." BASE64URL(signature), each
    // unpadded.
    let untrusted = UntrustedToken::new(token).map_err(|_| TokenError::Malformed)?;
    if untrusted.algorithm() != "HS256" {
        return Err(TokenError::WrongAlgorithm(untrusted.algorithm().chars().take(16).collect()));
    }
    let header = untrusted.header();
    if header.token_type.as_deref() != Some(ACCESS_TOKEN_TYPE) {
        return Err(TokenError::WrongType);
    }
    let kid = header.key_id.as_deref().ok_or(TokenError::UnknownKey)?;
    let key = config.signing_keys.iter().find(|k| k.kid == kid).ok_or(TokenError::UnknownKey)?;
    let verified = Hs256
        .validator::<AccessClaims>(&Hs256Key::new(&key.secret))
        .validate(&untrusted)
        .map_err(|e| match e {
            ValidationError::InvalidSignature
            | ValidationError::InvalidSignatureLen { .. }
            | ValidationError::MalformedSignature(_) => TokenError::BadSignature,
            ValidationError::AlgorithmMismatch { actual, .. } => TokenError::WrongAlgorithm(actual),
            other => TokenError::BadClaims(other.to_string()),
        })?;
    let claims = verified.claims();
    let now = now_ms.div_euclid(1000);
    let options = time_options(now_ms).ok_or_else(|| TokenError::BadClaims("clock out of range".into()))?;
    claims.validate_expiration(&options).map_err(|e| match e {
        ValidationError::Expired => TokenError::Expired,
        other => TokenError::BadClaims(other.to_string()),
    })?;
    let exp = claims.expiration.ok_or_else(|| TokenError::BadClaims("no exp".into()))?.timestamp();
    let iat = claims.issued_at.map(|iat| iat.timestamp());
    // jwt-compact checks `exp` (and `nbf` when asked), not `iat`: a token issued later than now
    // is refused here.
    if iat.is_some_and(|iat| iat > now + LEEWAY_SECS) {
        return Err(TokenError::NotYetValid);
    }
    let custom = &claims.custom;
    if custom.iss != config.issuer() {
        return Err(TokenError::WrongIssuer);
    }
    if custom.aud != config.resource() {
        return Err(TokenError::WrongAudience);
    }
    let scopes = ScopeSet::parse(&custom.scope).map_err(TokenError::BadClaims)?;
    if custom.sub.is_empty() || custom.ws.is_empty() || custom.client_id.is_empty() {
        return Err(TokenError::BadClaims("empty sub, ws or client_id".into()));
    }
    let principal = Principal {
        subject: custom.sub.clone(),
        workspace: custom.ws.clone(),
        client_id: custom.client_id.clone(),
        scopes,
        app: custom.app,
        grant_id: custom.gid.clone(),
    };
    Ok((principal, custom.clone(), exp, iat, kid.to_owned()))
}

/// How many verified tokens an isolate remembers (a client reuses its access token for every
/// call until it expires, so a few hundred cover every active client of one isolate).
const VERIFIED_CACHE_SIZE: usize = 512;

/// A token that verified, with what it was verified against.
struct Verified {
    principal: Principal,
    exp_secs: i64,
    iat_secs: Option<i64>,
    issuer: String,
    kid: String,
    secret: Vec<u8>,
}

/// [`verify`], remembering the token if it verifies, so that [`remembered`] answers for it from
/// then on and the HMAC, the base64 and the claims parse run once per token instead of once per
/// call. Only valid tokens are remembered (an attacker cannot fill the cache without the key),
/// a remembered one is honoured only while the key that verified it is still configured under
/// the same kid for the same issuer (so rotation and reconfiguration apply at once), and its
/// time claims are checked again on every call. The caller asks [`remembered`] first
/// (`bearer::authenticate`), so this does not look the token up again.
pub fn verify_and_remember(config: &Config, token: &str, now_ms: i64) -> Result<Principal, TokenError> {
    let (principal, _, exp_secs, iat_secs, kid) = verify_with_times(config, token, now_ms)?;
    let secret =
        config.signing_keys.iter().find(|k| k.kid == kid).map(|k| k.secret.clone()).unwrap_or_default();
    VERIFIED.with(|cache| {
        let mut cache = cache.borrow_mut();
        if cache.len() >= VERIFIED_CACHE_SIZE {
            // Dropping everything keeps the bound without bookkeeping; the cost is one
            // verification per active token afterwards.
            cache.clear();
        }
        cache.insert(
            token.to_owned(),
            Verified {
                principal: principal.clone(),
                exp_secs,
                iat_secs,
                issuer: config.issuer().to_owned(),
                kid,
                secret,
            },
        );
    });
    Ok(principal)
}

thread_local! {
    /// The tokens that verified ([`verify_and_remember`], [`remembered`]).
    static VERIFIED: RefCell<HashMap<String, Verified, BuildHasherDefault<TailHasher>>> =
        RefCell::new(HashMap::default());
}

/// Hashes a token by its last 16 bytes: its signature's, which no one can choose for a token
/// that verifies and which are spread evenly; a lookup still compares the whole token. SipHash
/// over a whole 500-byte token took about 2,000 of the 32,000 instructions of an `initialize`'s
/// routing (bench/README.md, "The wasm's side of a request, timed inside the isolate").
#[derive(Default)]
struct TailHasher(std::hash::DefaultHasher);

impl Hasher for TailHasher {
    fn write(&mut self, bytes: &[u8]) {
        self.0.write(&bytes[bytes.len().saturating_sub(16)..]);
    }
    fn finish(&self) -> u64 {
        self.0.finish()
    }
}

/// What [`verify_and_remember`] said of a token it remembers (its times checked again against
/// `now_ms`), without verifying anything; `None` for a token it does not remember, or whose key
/// is gone.
pub fn remembered(config: &Config, token: &str, now_ms: i64) -> Option<Result<Principal, TokenError>> {
    let now_secs = now_ms.div_euclid(1000);
    VERIFIED.with(|cache| {
        let cache = cache.borrow();
        let v = cache.get(token)?;
        let same_key = v.issuer == config.issuer()
            && config
                .signing_keys
                .iter()
                .any(|k| k.kid == v.kid && crate::ids::secret_eq(&k.secret, &v.secret));
        if !same_key {
            return None;
        }
        Some(if v.exp_secs + LEEWAY_SECS < now_secs {
            Err(TokenError::Expired)
        } else if v.iat_secs.is_some_and(|iat| iat > now_secs + LEEWAY_SECS) {
            Err(TokenError::NotYetValid)
        } else {
            Ok(v.principal.clone())
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{NOW_MS, test_config, test_config_at};
    use base64::Engine as _;
    use base64::engine::general_purpose::URL_SAFE_NO_PAD as B64;

    fn claims(config: &Config) -> AccessClaims {
        AccessClaims {
            iss: config.issuer().to_owned(),
            aud: config.resource(),
            sub: "user_1".into(),
            ws: "ws_1".into(),
            client_id: "client_1".into(),
            scope: "mcp mcp:act".into(),
            app: true,
            jti: "at_1".into(),
            gid: Some("gr_1".into()),
        }
    }

    fn forge(header: &str, payload: &str, sig: &[u8]) -> String {
        format!("{}.{}.{}", B64.encode(header), B64.encode(payload), B64.encode(sig))
    }

    #[test]
    fn round_trips() {
        let config = test_config();
        let token = mint(&config, claims(&config), NOW_MS, 600).unwrap();
        let (p, c) = verify(&config, &token, NOW_MS + 1000).unwrap();
        assert_eq!(p.subject, "user_1");
        assert_eq!(p.scopes, ScopeSet::FULL);
        assert!(p.app);
        assert_eq!(p.grant_id.as_deref(), Some("gr_1"));
        assert_eq!(c.jti, "at_1");
        let header: serde_json::Value =
            serde_json::from_slice(&B64.decode(token.split('.').next().unwrap()).unwrap()).unwrap();
        assert_eq!(header["alg"], "HS256");
        assert_eq!(header["typ"], "at+jwt");
        assert_eq!(header["kid"], "dev");
    }

    #[test]
    fn refuses_expired_and_future_tokens() {
        let config = test_config();
        let token = mint(&config, claims(&config), NOW_MS, 600).unwrap();
        assert_eq!(verify(&config, &token, NOW_MS + 631_000), Err(TokenError::Expired));
        assert!(verify(&config, &token, NOW_MS + 629_000).is_ok());
        assert_eq!(verify(&config, &token, NOW_MS - 60_000), Err(TokenError::NotYetValid));
    }

    #[test]
    fn refuses_wrong_audience_and_issuer() {
        let config = test_config();
        let mut c = claims(&config);
        c.aud = format!("{}/", config.resource());
        let token = mint(&config, c, NOW_MS, 600).unwrap();
        assert_eq!(verify(&config, &token, NOW_MS), Err(TokenError::WrongAudience));
        let mut c = claims(&config);
        c.iss = "https://evil.example.com".into();
        let token = mint(&config, c, NOW_MS, 600).unwrap();
        assert_eq!(verify(&config, &token, NOW_MS), Err(TokenError::WrongIssuer));
    }

    #[test]
    fn refuses_a_token_signed_with_another_key() {
        let config = test_config();
        let mut other = config.clone();
        other.signing_keys[0].secret = vec![7u8; 32];
        let token = mint(&other, claims(&config), NOW_MS, 600).unwrap();
        assert_eq!(verify(&config, &token, NOW_MS), Err(TokenError::BadSignature));
        let mut renamed = config.clone();
        renamed.signing_keys[0].kid = "k2".into();
        let token = mint(&renamed, claims(&config), NOW_MS, 600).unwrap();
        assert_eq!(verify(&config, &token, NOW_MS), Err(TokenError::UnknownKey));
    }

    #[test]
    fn accepts_any_configured_key_for_rotation() {
        let config = test_config();
        let mut rotated = config.clone();
        rotated.signing_keys.insert(0, crate::config::SigningKey { kid: "k2".into(), secret: vec![9u8; 32] });
        let old = mint(&config, claims(&config), NOW_MS, 600).unwrap();
        let new = mint(&rotated, claims(&config), NOW_MS, 600).unwrap();
        assert!(verify(&rotated, &old, NOW_MS).is_ok());
        assert!(verify(&rotated, &new, NOW_MS).is_ok());
        assert_eq!(verify(&config, &new, NOW_MS), Err(TokenError::UnknownKey));
    }

    #[test]
    fn refuses_algorithm_confusion() {
        let config = test_config();
        let payload = serde_json::to_string(&serde_json::json!({
            "iss": config.issuer(), "aud": config.resource(), "sub": "u", "ws": "w",
            "client_id": "c", "scope": "mcp mcp:act", "jti": "j", "exp": NOW_MS / 1000 + 600
        }))
        .unwrap();
        let none = forge(r#"{"alg":"none","typ":"at+jwt","kid":"dev"}"#, &payload, b"");
        assert!(matches!(verify(&config, &none, NOW_MS), Err(TokenError::WrongAlgorithm(_))));
        let none2 = format!("{}.", &none[..none.len() - 1]);
        assert!(verify(&config, &none2, NOW_MS).is_err());
        let rs = forge(r#"{"alg":"RS256","typ":"at+jwt","kid":"dev"}"#, &payload, &[1; 256]);
        assert!(matches!(verify(&config, &rs, NOW_MS), Err(TokenError::WrongAlgorithm(_))));
        let es = forge(r#"{"alg":"ES256","typ":"at+jwt","kid":"dev"}"#, &payload, &[1; 64]);
        assert!(matches!(verify(&config, &es, NOW_MS), Err(TokenError::WrongAlgorithm(_))));
        // The right alg with a MAC keyed by something else (e.g. a public key) still fails.
        let hs = forge(r#"{"alg":"HS256","typ":"at+jwt","kid":"dev"}"#, &payload, &[1; 32]);
        assert_eq!(verify(&config, &hs, NOW_MS), Err(TokenError::BadSignature));
        let untyped = forge(r#"{"alg":"HS256","kid":"dev"}"#, &payload, &[1; 32]);
        assert_eq!(verify(&config, &untyped, NOW_MS), Err(TokenError::WrongType));
        let id_token = forge(r#"{"alg":"HS256","typ":"JWT","kid":"dev"}"#, &payload, &[1; 32]);
        assert_eq!(verify(&config, &id_token, NOW_MS), Err(TokenError::WrongType));
    }

    /// The token check as `bearer::authenticate` makes it, less the syntax check.
    fn verify_cached(config: &Config, token: &str, now_ms: i64) -> Result<Principal, TokenError> {
        remembered(config, token, now_ms).unwrap_or_else(|| verify_and_remember(config, token, now_ms))
    }

    #[test]
    fn the_verified_cache_rechecks_time_and_key() {
        let config = test_config();
        let token = mint(&config, claims(&config), NOW_MS, 600).unwrap();
        let first = verify_cached(&config, &token, NOW_MS).unwrap();
        assert_eq!(verify_cached(&config, &token, NOW_MS + 1000).unwrap(), first);
        // A hit still expires, and is not valid before its iat.
        assert_eq!(verify_cached(&config, &token, NOW_MS + 631_000), Err(TokenError::Expired));
        assert_eq!(verify_cached(&config, &token, NOW_MS - 60_000), Err(TokenError::NotYetValid));
        // A key replaced under the same kid, or another issuer, no longer honours the hit.
        let mut rekeyed = config.clone();
        rekeyed.signing_keys[0].secret = vec![7u8; 32];
        assert_eq!(verify_cached(&rekeyed, &token, NOW_MS), Err(TokenError::BadSignature));
        let moved = test_config_at("http://127.0.0.1:9999");
        assert_eq!(verify_cached(&moved, &token, NOW_MS), Err(TokenError::WrongIssuer));
        // Invalid tokens are never remembered.
        let forged = format!("{}x", &token[..token.len() - 1]);
        assert!(verify_cached(&config, &forged, NOW_MS).is_err());
        assert!(verify_cached(&config, &forged, NOW_MS).is_err());
    }

    #[test]
    fn refuses_garbage() {
        let config = test_config();
        for bad in ["", "abc", "a.b", "a.b.c", "....", "eyJ.eyJ.sig", &"x".repeat(5000)] {
            assert!(verify(&config, bad, NOW_MS).is_err(), "{bad}");
        }
    }

    #[test]
    fn refuses_unknown_scopes_and_missing_claims() {
        let config = test_config();
        let mut c = claims(&config);
        c.scope = "mcp admin".into();
        let token = mint(&config, c, NOW_MS, 600).unwrap();
        assert!(matches!(verify(&config, &token, NOW_MS), Err(TokenError::BadClaims(_))));
        let mut c = claims(&config);
        c.ws = String::new();
        let token = mint(&config, c, NOW_MS, 600).unwrap();
        assert!(matches!(verify(&config, &token, NOW_MS), Err(TokenError::BadClaims(_))));
    }

    /// Tokens minted before jwt-compact signed them (the JWS written by hand: header and claims
    /// as sorted JSON objects, `exp`/`iat` beside the claims) still verify, and tokens minted now
    /// carry the same header and claims, so no client has to sign in again after a deploy.
    #[test]
    fn reads_and_writes_the_former_wire_format() {
        let config = test_config();
        let now = NOW_MS / 1000;
        let Ok(serde_json::Value::Object(mut payload)) = serde_json::to_value(claims(&config)) else {
            panic!("claims are an object")
        };
        payload.insert("exp".into(), (now + 600).into());
        payload.insert("iat".into(), now.into());
        let input = format!(
            "{}.{}",
            B64.encode(
                serde_json::json!({ "alg": "HS256", "kid": "dev", "typ": ACCESS_TOKEN_TYPE }).to_string()
            ),
            B64.encode(serde_json::Value::Object(payload.clone()).to_string())
        );
        let old = format!(
            "{input}.{}",
            B64.encode(crate::ids::hmac_sha256(&config.signing_keys[0].secret, input.as_bytes()))
        );
        let (principal, read) = verify(&config, &old, NOW_MS).unwrap();
        assert_eq!((principal.subject.as_str(), read), ("user_1", claims(&config)));
        assert_eq!(verify(&config, &old, NOW_MS + 631_000), Err(TokenError::Expired));

        let new = mint(&config, claims(&config), NOW_MS, 600).unwrap();
        let part = |i: usize| -> serde_json::Value {
            serde_json::from_slice(&B64.decode(new.split('.').nth(i).unwrap()).unwrap()).unwrap()
        };
        assert_eq!(part(0), serde_json::json!({ "alg": "HS256", "kid": "dev", "typ": ACCESS_TOKEN_TYPE }));
        assert_eq!(part(1), serde_json::Value::Object(payload));
        let (input, signature) = new.rsplit_once('.').unwrap();
        let tag = crate::ids::hmac_sha256(&config.signing_keys[0].secret, input.as_bytes());
        assert_eq!(B64.decode(signature).unwrap(), tag);
    }

    /// A token signed correctly, with the right key, under another HMAC algorithm is refused
    /// for its `alg`; so is one whose `kid` names another configured key, or none.
    #[test]
    fn refuses_other_hmacs_and_mislabelled_keys() {
        use jwt_compact::alg::{Hs512, Hs512Key};
        let config = test_config();
        let options = time_options(NOW_MS).unwrap();
        let header = Header::empty().with_key_id("dev").with_token_type(ACCESS_TOKEN_TYPE);
        let signed = Claims::new(claims(&config)).set_duration_and_issuance(&options, Duration::seconds(600));
        let hs512 = Hs512.token(&header, &signed, &Hs512Key::new(&config.signing_keys[0].secret)).unwrap();
        assert_eq!(verify(&config, &hs512, NOW_MS), Err(TokenError::WrongAlgorithm("HS512".into())));

        let mut rotated = config.clone();
        rotated.signing_keys.push(crate::config::SigningKey { kid: "k2".into(), secret: vec![9u8; 32] });
        let mislabelled = Header::empty().with_key_id("k2").with_token_type(ACCESS_TOKEN_TYPE);
        let key = Hs256Key::new(&config.signing_keys[0].secret);
        let token = Hs256.token(&mislabelled, &signed, &key).unwrap();
        assert_eq!(verify(&rotated, &token, NOW_MS), Err(TokenError::BadSignature));
        let unnamed =
            Hs256.token(&Header::empty().with_token_type(ACCESS_TOKEN_TYPE), &signed, &key).unwrap();
        assert_eq!(verify(&rotated, &unnamed, NOW_MS), Err(TokenError::UnknownKey));
        // The same claims under the right kid verify: only the labels differ above.
        assert!(verify(&rotated, &Hs256.token(&header, &signed, &key).unwrap(), NOW_MS).is_ok());
    }

    #[test]
    fn refuses_bad_encodings_and_claims_after_the_signature() {
        let config = test_config();
        let secret = &config.signing_keys[0].secret;
        let sign = |header: &str, payload: &str| {
            let input = format!("{}.{}", B64.encode(header), B64.encode(payload));
            let tag = crate::ids::hmac_sha256(secret, input.as_bytes());
            format!("{input}.{}", B64.encode(tag))
        };
        let header = r#"{"alg":"HS256","typ":"at+jwt","kid":"dev"}"#;
        let good = sign(
            header,
            &serde_json::to_string(&serde_json::json!({
                "iss": config.issuer(), "aud": config.resource(), "sub": "u", "ws": "w",
                "client_id": "c", "scope": "mcp", "jti": "j", "exp": NOW_MS / 1000 + 600
            }))
            .unwrap(),
        );
        assert!(verify(&config, &good, NOW_MS).is_ok());
        // Padding, a fourth part, a truncated or lengthened signature.
        assert_eq!(verify(&config, &format!("{good}="), NOW_MS), Err(TokenError::Malformed));
        assert_eq!(verify(&config, &format!("{good}.x"), NOW_MS), Err(TokenError::Malformed));
        assert_eq!(verify(&config, &good[..good.len() - 3], NOW_MS), Err(TokenError::BadSignature));
        assert_eq!(verify(&config, &format!("{good}AAAA"), NOW_MS), Err(TokenError::BadSignature));
        // A header that is not JSON; claims that are not JSON or lack exp, signed correctly.
        assert_eq!(verify(&config, &sign("{", "{}"), NOW_MS), Err(TokenError::Malformed));
        assert!(matches!(verify(&config, &sign(header, "[1"), NOW_MS), Err(TokenError::BadClaims(_))));
        assert!(matches!(
            verify(&config, &sign(header, r#"{"exp":"soon"}"#), NOW_MS),
            Err(TokenError::BadClaims(_))
        ));
        assert!(matches!(
            verify(&config, &sign(header, r#"{"sub":"u"}"#), NOW_MS),
            Err(TokenError::BadClaims(_))
        ));
        // A fractional NumericDate (RFC 7519 §2) is read.
        let fractional = sign(
            header,
            &serde_json::to_string(&serde_json::json!({
                "iss": config.issuer(), "aud": config.resource(), "sub": "u", "ws": "w",
                "client_id": "c", "scope": "mcp", "jti": "j", "exp": NOW_MS as f64 / 1000.0 + 600.5
            }))
            .unwrap(),
        );
        assert!(verify(&config, &fractional, NOW_MS).is_ok());
    }
}

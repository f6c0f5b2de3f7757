//! Deployment configuration, read once per isolate from the Worker's vars and secrets.
//!
//! Everything that differs between a laptop and production lives here: the public URL (which
//! names the issuer and the token audience), the provider mode, the allowed browser origins,
//! the token signing keys, the plan catalogue, the Stripe account and the support webhook.
//! Parsing is pure so tests build a `Config` from a map.

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use std::fmt;

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

/// A secret value that never appears in debug output or logs.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(pub String);

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Secret(…)")
    }
}

/// The Stripe account used by the live billing adapter (DOMAIN §5).
#[derive(Debug, Clone)]
pub struct StripeConfig {
    /// API origin: `https://api.stripe.com`, or a local fake in tests (`STRIPE_API_BASE`).
    pub api_base: String,
    /// Secret API key (`STRIPE_SECRET_KEY`); live billing refuses to run without it.
    pub secret_key: Option<Secret>,
    /// Webhook endpoint signing secrets (`STRIPE_WEBHOOK_SECRET`, comma-separated while rotating).
    pub webhook_secrets: Vec<Secret>,
}

/// Where support requests are forwarded (`SUPPORT_WEBHOOK_URL`, `SUPPORT_WEBHOOK_SECRET`).
#[derive(Debug, Clone)]
pub struct SupportWebhook {
    /// The URL that receives each request as a JSON POST.
    pub url: String,
    /// When set, each POST is signed (`X-VibeSell-Signature: t=…,v1=…`, HMAC-SHA256).
    pub secret: Option<Secret>,
}

/// The Worker's configuration.
#[derive(Debug, Clone)]
pub struct Config {
    /// The public origin (scheme, host, port; no trailing slash), e.g. `https://api.vibesell.it`.
    /// Private, with `local` derived from it, so that neither can change without the other.
    public_url: String,
    /// Whether `public_url` is a loopback address: read on every MCP request (the `Host` check),
    /// so decided once here.
    local: bool,
    /// Sandbox or live providers.
    pub provider_mode: ProviderMode,
    /// Browser origins allowed to call the MCP endpoint, besides `public_url` itself.
    pub allowed_origins: Vec<String>,
    /// Origins whose redirect URIs mark a client as the Claude app (PRODUCT §3).
    pub app_origins: Vec<String>,
    /// Signing keys; the first signs, all verify.
    pub signing_keys: Vec<SigningKey>,
    /// Plans with prices and limits (`config/plans.json`, or `PLANS_JSON`).
    pub plans: crate::plans::Catalogue,
    /// The Stripe account for live billing.
    pub stripe: StripeConfig,
    /// Where support requests are forwarded, if anywhere.
    pub support_webhook: Option<SupportWebhook>,
    /// When set (`APPROVAL_TTL_SECONDS`), every approval expires after this long instead of its
    /// action's own lifetime: for demos and tests of expiry.
    pub approval_ttl_ms: Option<i64>,
    /// When set (`WATCHDOG_SECONDS`), how long an execution that did not report back waits for
    /// the watchdog instead of a minute: for the crash tests, which would otherwise wait a minute
    /// for each restart (`workspace::approvals::FinishExecution`).
    pub watchdog_ms: Option<i64>,
    /// The sending platform: Instantly's account for live mode, the simulation's settings for
    /// the sandbox.
    pub sending: crate::sending::SendingConfig,
    /// The OpenID Connect provider users sign in with, if configured (PRODUCT §10).
    pub oidc: Option<OidcProvider>,
    /// Request budgets of the OAuth endpoints.
    pub rate_limits: RateLimits,
    /// Tool calls per workspace (`TOOL_RATE_LIMIT`, `calls/seconds`; [`DEFAULT_TOOL_RATE_LIMIT`]),
    /// enforced by the workspace's Durable Object (`workspace::throttle`).
    pub tool_rate_limit: Limit,
    /// The live lead provider (Apollo), when its key is set.
    pub apollo: Option<ApolloConfig>,
    /// Sending and outcome defaults (PRODUCT §8), shared by sizing, estimates and campaigns.
    pub deliverability: crate::deliverability::Deliverability,
    /// Whether routine requests get a log line too (`LOG_REQUESTS=all`); by default only the
    /// others do (`log::is_routine`).
    pub log_routine: bool,
}

/// An OpenID Connect provider for sign-in (authorization code flow with PKCE).
#[derive(Clone)]
pub struct OidcProvider {
    /// The provider's issuer; its discovery document is at `<issuer>/.well-known/openid-configuration`.
    pub issuer: String,
    /// Our client id at the provider.
    pub client_id: String,
    /// Our client secret there, if the provider registered us as a confidential client.
    pub client_secret: Option<String>,
    /// The provider's name on the sign-in button ("Google", "Okta"…).
    pub name: String,
}

impl fmt::Debug for OidcProvider {
    // Never print the client secret.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OidcProvider")
            .field("issuer", &self.issuer)
            .field("client_id", &self.client_id)
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

/// A token bucket: `capacity` requests, refilled evenly over `window_secs`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limit {
    /// Requests allowed in a burst (and per window).
    pub capacity: u32,
    /// Seconds to refill the whole bucket.
    pub window_secs: u32,
}

impl Limit {
    /// `requests/seconds`, both whole numbers above zero (spaces around them allowed).
    fn parse(raw: &str) -> Option<Limit> {
        let (capacity, window) = raw.split_once('/')?;
        let limit =
            Limit { capacity: capacity.trim().parse().ok()?, window_secs: window.trim().parse().ok()? };
        (limit.capacity > 0 && limit.window_secs > 0).then_some(limit)
    }

    /// Takes one token from a bucket of this shape that held `held` = (tokens, at ms) when last
    /// counted (`None`: never used, so full), at `now_ms`. The one bucket arithmetic of the
    /// OAuth endpoints' stored buckets (`oauth::state`) and the workspace's in-memory budget of
    /// tool calls (`workspace::throttle`).
    pub fn take(self, held: Option<(f64, i64)>, now_ms: i64) -> Taken {
        let capacity = f64::from(self.capacity.max(1));
        let rate = capacity / (f64::from(self.window_secs.max(1)) * 1000.0); // tokens per ms
        // A clock that went backwards refills nothing rather than draining the bucket.
        let tokens =
            held.map_or(capacity, |(tokens, at)| (tokens + (now_ms - at).max(0) as f64 * rate).min(capacity));
        // A hair of tolerance: refill arithmetic in floats must not make a full wait fall short.
        let (left, retry_after_secs) = if tokens >= 1.0 - 1e-9 {
            ((tokens - 1.0).max(0.0), None)
        } else {
            let wait_ms = (1.0 - tokens) / rate;
            // Less a microsecond of float noise, so that a 30 s wait says 30, not 31. A refused
            // request takes nothing, so waiting that long always succeeds.
            (tokens, Some(((wait_ms - 0.001) / 1000.0).ceil().max(1.0) as u32))
        };
        Taken { left, retry_after_secs, full_at: now_ms + ((capacity - left) / rate).ceil() as i64 }
    }
}

/// What [`Limit::take`] leaves.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Taken {
    /// Tokens left, counted at the time of the take.
    pub left: f64,
    /// `None` when a token was taken; otherwise whole seconds until one is there (at least 1).
    pub retry_after_secs: Option<u32>,
    /// When the bucket is full again (ms), after which it is as good as forgotten.
    pub full_at: i64,
}

/// Request budgets of the OAuth endpoints, per client IP (`OAUTH_RATE_LIMITS`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RateLimits {
    /// New client registrations (`/v1/oauth/register`); re-registering identical metadata is free.
    pub register: Limit,
    /// Token requests per user grant (`/v1/oauth/token`), from one address.
    pub token: Limit,
    /// All token requests from one address, spent before the client is authenticated so that
    /// unknown clients, bad secrets and made-up grants are counted too (`token_ip`). Spent with
    /// `token` in one operation, all or none, so a request its grant's budget refuses does not
    /// count here (`oauth::state`). Larger than `token`: hosts such as Claude refresh for many
    /// users from a few shared addresses.
    pub token_ip: Limit,
    /// Revocation requests (`/v1/oauth/revoke`), spent before client authentication.
    pub revoke: Limit,
    /// Authorization requests (`/v1/oauth/authorize`) and sign-in attempts.
    pub authorize: Limit,
}

impl Default for RateLimits {
    fn default() -> Self {
        RateLimits {
            register: Limit { capacity: 30, window_secs: 3600 },
            token: Limit { capacity: 30, window_secs: 60 },
            token_ip: Limit { capacity: 600, window_secs: 60 },
            revoke: Limit { capacity: 60, window_secs: 60 },
            authorize: Limit { capacity: 30, window_secs: 60 },
        }
    }
}

/// The default budget of tool calls per workspace: 300 a minute, all of it available at once.
/// A person working with an assistant makes a few calls a minute and never meets it; a loop
/// gone wrong does within a minute. (The MCP specification requires a limit, not a value.)
pub const DEFAULT_TOOL_RATE_LIMIT: Limit = Limit { capacity: 300, window_secs: 60 };

/// Where the live lead provider is and how to authenticate to it.
#[derive(Debug, Clone)]
pub struct ApolloConfig {
    /// `https://api.apollo.io/api/v1` unless `APOLLO_BASE_URL` says otherwise (tests point it at
    /// a local fake).
    pub base_url: String,
    /// The API key (a Worker secret).
    pub api_key: Secret,
}

/// Apollo's public API (DOMAIN §2.1).
pub const APOLLO_DEFAULT_BASE_URL: &str = "https://api.apollo.io/api/v1";

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
        Self::read(&lookup)
    }

    // The reading itself behind `&dyn Fn`, so it is compiled once rather than once per caller
    // (the Worker's environment and the start-up rehearsal): about 5 KB of wasm each.
    fn read(lookup: &dyn Fn(&str) -> Option<String>) -> Result<Config, ConfigError> {
        let raw_url = lookup("PUBLIC_URL").ok_or(ConfigError::Missing("PUBLIC_URL"))?;
        // The issuer (RFC 8414 §2): an origin the WHATWG parser reads as written.
        let public_url =
            normalize_origin(&raw_url).filter(|o| crate::urls::read(o).is_ok()).ok_or_else(|| {
                invalid("PUBLIC_URL", "expected an http(s) origin such as https://api.vibesell.it")
            })?;
        // The MCP authorization spec (Communication Security) requires every authorization
        // server endpoint to be served over HTTPS, and OAuth 2.1 §1.5 allows plain http only on
        // loopback, for development. Every endpoint and the issuer derive from PUBLIC_URL.
        if public_url.starts_with("http://") && !is_loopback_origin(&public_url) {
            return Err(invalid(
                "PUBLIC_URL",
                "must be https (http only with a loopback host: 127.0.0.1, localhost or [::1])",
            ));
        }
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
        let plans = crate::plans::Catalogue::parse(
            lookup("PLANS_JSON")
                .as_deref()
                .filter(|s| !s.trim().is_empty())
                .unwrap_or(crate::plans::EMBEDDED),
        )
        .map_err(|e| invalid("PLANS_JSON", &e))?;
        let stripe = StripeConfig {
            api_base: service_url(
                lookup("STRIPE_API_BASE").as_deref().unwrap_or(STRIPE_API),
                "STRIPE_API_BASE",
                true,
            )?,
            secret_key: secret(lookup("STRIPE_SECRET_KEY")),
            webhook_secrets: lookup("STRIPE_WEBHOOK_SECRET")
                .unwrap_or_default()
                .split(',')
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(|s| Secret(s.to_owned()))
                .collect(),
        };
        let support_webhook = match lookup("SUPPORT_WEBHOOK_URL").filter(|s| !s.trim().is_empty()) {
            Some(url) => Some(SupportWebhook {
                url: service_url(&url, "SUPPORT_WEBHOOK_URL", false)?,
                secret: secret(lookup("SUPPORT_WEBHOOK_SECRET")),
            }),
            None => None,
        };
        let approval_ttl_ms = match lookup("APPROVAL_TTL_SECONDS").filter(|s| !s.trim().is_empty()) {
            Some(raw) => match raw.trim().parse::<i64>() {
                Ok(s) if (1..=30 * 86_400).contains(&s) => Some(s * 1000),
                _ => return Err(invalid("APPROVAL_TTL_SECONDS", "expected seconds between 1 and 2592000")),
            },
            None => None,
        };
        let watchdog_ms = match lookup("WATCHDOG_SECONDS").filter(|s| !s.trim().is_empty()) {
            Some(raw) => match raw.trim().parse::<i64>() {
                Ok(s) if (1..=3_600).contains(&s) => Some(s * 1000),
                _ => return Err(invalid("WATCHDOG_SECONDS", "expected seconds between 1 and 3600")),
            },
            None => None,
        };
        let oidc = parse_oidc(&lookup, loopback)?;
        let rate_limits = match lookup("OAUTH_RATE_LIMITS") {
            Some(raw) if !raw.trim().is_empty() => parse_rate_limits(&raw)?,
            _ => RateLimits::default(),
        };
        let tool_rate_limit = match lookup("TOOL_RATE_LIMIT") {
            Some(raw) if !raw.trim().is_empty() => parse_tool_rate_limit(&raw)?,
            _ => DEFAULT_TOOL_RATE_LIMIT,
        };
        let apollo = match secret(lookup("APOLLO_API_KEY")) {
            None => None,
            Some(api_key) => {
                let raw = lookup("APOLLO_BASE_URL").unwrap_or_else(|| APOLLO_DEFAULT_BASE_URL.to_owned());
                let base_url = service_url(&raw, "APOLLO_BASE_URL", false)?.trim_end_matches('/').to_owned();
                Some(ApolloConfig { base_url, api_key })
            }
        };
        let deliverability = match lookup("DELIVERABILITY") {
            None => crate::deliverability::Deliverability::default(),
            Some(json) => crate::deliverability::Deliverability::from_json(&json)
                .map_err(|reason| ConfigError::Invalid { name: "DELIVERABILITY", reason })?,
        };
        let log_routine = match lookup("LOG_REQUESTS").as_deref().map(str::trim) {
            None | Some("" | "significant") => false,
            Some("all") => true,
            Some(other) => {
                return Err(invalid("LOG_REQUESTS", &format!("{other:?} is neither all nor significant")));
            }
        };
        let sending = crate::sending::SendingConfig::from_lookup(&lookup)?;
        Ok(Config {
            public_url,
            local: loopback,
            provider_mode,
            allowed_origins,
            app_origins,
            signing_keys,
            plans,
            stripe,
            support_webhook,
            approval_ttl_ms,
            watchdog_ms,
            oidc,
            rate_limits,
            tool_rate_limit,
            apollo,
            deliverability,
            sending,
            log_routine,
        })
    }

    /// The public origin (scheme, host, port; no trailing slash), e.g. `https://api.vibesell.it`.
    pub fn public_url(&self) -> &str {
        &self.public_url
    }

    /// The page where the user decides an approval (PRODUCT §6 `appUrl`).
    pub fn approval_url(&self, id: &str) -> String {
        format!("{}/app/approvals/{id}", self.public_url)
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
        self.local
    }

    /// The key that signs new tokens.
    pub fn active_key(&self) -> &SigningKey {
        // `parse_signing_keys` refuses an empty list, so there is always a first key.
        &self.signing_keys[0]
    }

    /// Whether `origin` (an `Origin` header) is this deployment's own: the check that refuses
    /// cross-site form posts to our pages.
    pub fn is_own_origin(&self, origin: &str) -> bool {
        normalize_origin(origin).is_some_and(|o| o == self.public_url)
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

/// Stripe's API origin.
pub const STRIPE_API: &str = "https://api.stripe.com";

fn secret(value: Option<String>) -> Option<Secret> {
    value.map(|v| v.trim().to_owned()).filter(|v| !v.is_empty()).map(Secret)
}

/// An outside service's URL: https, or http on a loopback address (local fakes). With
/// `origin_only`, no path is allowed and the result has no trailing slash.
pub(crate) fn service_url(raw: &str, name: &'static str, origin_only: bool) -> Result<String, ConfigError> {
    let raw = raw.trim();
    let lower = raw.to_ascii_lowercase();
    let rest = lower.strip_prefix("https://").or_else(|| lower.strip_prefix("http://"));
    let authority = rest.map(|r| r.split(['/', '?', '#']).next().unwrap_or(r));
    let ok = match authority {
        Some(a) if !a.is_empty() && !a.contains(['@', ' ']) => {
            lower.starts_with("https://") || is_loopback_host(a)
        }
        _ => false,
    };
    if !ok {
        return Err(invalid(name, "expected an https URL (http only on a loopback address)"));
    }
    if origin_only {
        return normalize_origin(raw).ok_or_else(|| invalid(name, "expected an origin without a path"));
    }
    Ok(raw.to_owned())
}

/// `OIDC_ISSUER`, `OIDC_CLIENT_ID`, `OIDC_CLIENT_SECRET` (secret, optional) and `OIDC_NAME`.
/// The issuer must be https; plain http is accepted only for a loopback issuer on a loopback
/// deployment (a local test provider), never in production.
fn parse_oidc(
    lookup: &impl Fn(&str) -> Option<String>,
    loopback: bool,
) -> Result<Option<OidcProvider>, ConfigError> {
    let nonempty = |name: &str| lookup(name).map(|v| v.trim().to_owned()).filter(|v| !v.is_empty());
    let Some(raw_issuer) = nonempty("OIDC_ISSUER") else { return Ok(None) };
    let issuer = raw_issuer.trim_end_matches('/').to_owned();
    let parsed = crate::urls::read(&issuer).map_err(|why| invalid("OIDC_ISSUER", &why.to_string()))?;
    let secure = parsed.scheme() == "https"
        || (parsed.scheme() == "http" && loopback && crate::urls::is_loopback(parsed.host()));
    if !secure || parsed.query().is_some() || parsed.fragment().is_some() {
        return Err(invalid("OIDC_ISSUER", "expected an https URL without query or fragment"));
    }
    let client_id = nonempty("OIDC_CLIENT_ID").ok_or(ConfigError::Missing("OIDC_CLIENT_ID"))?;
    Ok(Some(OidcProvider {
        issuer,
        client_id,
        client_secret: nonempty("OIDC_CLIENT_SECRET"),
        name: nonempty("OIDC_NAME").unwrap_or_else(|| "your identity provider".to_owned()),
    }))
}

/// `register=30/3600,token=30/60,token_ip=600/60,revoke=60/60,authorize=30/60`: requests per
/// seconds; omitted ones keep their default.
fn parse_rate_limits(raw: &str) -> Result<RateLimits, ConfigError> {
    let bad = || {
        invalid(
            "OAUTH_RATE_LIMITS",
            "expected name=requests/seconds[,…] for register, token, token_ip, revoke, authorize",
        )
    };
    let mut limits = RateLimits::default();
    for part in raw.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        let (name, value) = part.split_once('=').ok_or_else(bad)?;
        let limit = Limit::parse(value).ok_or_else(bad)?;
        match name.trim() {
            "register" => limits.register = limit,
            "token" => limits.token = limit,
            "token_ip" => limits.token_ip = limit,
            "revoke" => limits.revoke = limit,
            "authorize" => limits.authorize = limit,
            _ => return Err(bad()),
        }
    }
    Ok(limits)
}

/// `300/60`: tool calls per seconds, the whole number of calls available as a burst.
fn parse_tool_rate_limit(raw: &str) -> Result<Limit, ConfigError> {
    Limit::parse(raw).ok_or_else(|| {
        invalid("TOOL_RATE_LIMIT", "expected calls/seconds with both above zero, such as 300/60")
    })
}

pub(crate) fn invalid(name: &'static str, reason: &str) -> ConfigError {
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
            .ok()
            .ok_or_else(|| invalid("JWT_SIGNING_KEYS", "a secret is not base64url"))?;
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
// Byte scans rather than `split_once("://")` and a split on a set of chars: every request to a
// local deployment comes through here twice (`Config::is_local`, then its `Host`), and those
// generic searchers were most of the 2% of `tools/list`'s CPU the check took.
fn host_of(origin: &str) -> &str {
    let bytes = origin.as_bytes();
    let start = bytes.windows(3).position(|w| w == b"://").map_or(0, |i| i + 3);
    let authority = &origin[start..];
    let end = authority.bytes().position(|b| matches!(b, b'/' | b'?' | b'#')).unwrap_or(authority.len());
    let authority = &authority[..end];
    if let Some(v6) = authority.strip_prefix('[') {
        return v6.split(']').next().unwrap_or(v6);
    }
    authority.rsplit_once(':').map_or(authority, |(host, _)| host)
}

/// Whether a host (`127.0.0.1`, `[::1]:80`, `localhost:8787`…) is a loopback name.
/// A local deployment checks every request's `Host` with it, so it allocates nothing.
pub fn is_loopback_host(authority: &str) -> bool {
    let host = host_of(authority);
    host.eq_ignore_ascii_case("localhost")
        || host == "::1"
        || host.strip_prefix("127.").is_some_and(|rest| {
            let mut parts = 0;
            rest.split('.').all(|p| {
                parts += 1;
                p.parse::<u8>().is_ok()
            }) && parts == 3
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
        assert_eq!(c.public_url(), "http://127.0.0.1:8787");
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
        // The issuer must be an origin browsers read as written.
        for origin in ["http://127.1:8787", "https://api.vibesell%2eit", "https://a..b", "https://x:"] {
            assert!(config(&[("PUBLIC_URL", origin), ("JWT_SIGNING_KEYS", KEY)]).is_err(), "{origin}");
        }
        // Plain http only on loopback (MCP authorization: HTTPS for every endpoint).
        let prod = "k2026:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAE";
        for origin in ["http://api.vibesell.it", "HTTP://10.0.0.8:8787", "http://127.0.0.1.example.com"] {
            let err = config(&[("PUBLIC_URL", origin), ("JWT_SIGNING_KEYS", prod)]).unwrap_err();
            assert!(matches!(err, ConfigError::Invalid { name: "PUBLIC_URL", .. }), "{origin}: {err:?}");
        }
        for origin in ["http://127.0.0.1:8787", "http://localhost:8787", "http://[::1]:8787"] {
            assert!(config(&[("PUBLIC_URL", origin), ("JWT_SIGNING_KEYS", KEY)]).is_ok(), "{origin}");
        }
        assert!(config(&[("PUBLIC_URL", "http://127.0.0.1"), ("JWT_SIGNING_KEYS", "dev:c2hvcnQ")]).is_err());
        assert!(config(&[("PUBLIC_URL", "http://127.0.0.1"), ("JWT_SIGNING_KEYS", "")]).is_err());
        assert!(
            config(&[("PUBLIC_URL", "http://127.0.0.1"), ("JWT_SIGNING_KEYS", KEY), ("PROVIDER_MODE", "x")])
                .is_err()
        );
    }

    #[test]
    fn reads_which_requests_to_log() {
        let local = [("PUBLIC_URL", "http://127.0.0.1:8787"), ("JWT_SIGNING_KEYS", KEY)];
        assert!(!config(&local).unwrap().log_routine, "routine requests are left out by default");
        let with = |value| config(&[local[0], local[1], ("LOG_REQUESTS", value)]);
        assert!(with("all").unwrap().log_routine);
        assert!(!with(" significant ").unwrap().log_routine);
        assert!(matches!(with("some"), Err(ConfigError::Invalid { name: "LOG_REQUESTS", .. })));
    }

    #[test]
    fn reads_billing_support_and_approval_settings() {
        let local = [("PUBLIC_URL", "http://127.0.0.1:8787"), ("JWT_SIGNING_KEYS", KEY)];
        let c = config(&local).unwrap();
        assert_eq!(c.stripe.api_base, STRIPE_API);
        assert!(c.stripe.secret_key.is_none() && c.stripe.webhook_secrets.is_empty());
        assert!(c.support_webhook.is_none() && c.approval_ttl_ms.is_none() && c.watchdog_ms.is_none());
        assert_eq!(c.plans.default_plan().id, "free");
        assert_eq!(c.approval_url("apr_1"), "http://127.0.0.1:8787/app/approvals/apr_1");

        let with = |extra: &[(&'static str, &'static str)]| {
            let mut pairs = local.to_vec();
            pairs.extend_from_slice(extra);
            config(&pairs)
        };
        let c = with(&[
            ("STRIPE_API_BASE", "http://127.0.0.1:9999/"),
            ("STRIPE_SECRET_KEY", " sk_test_1 "),
            ("STRIPE_WEBHOOK_SECRET", "whsec_new, whsec_old"),
            ("SUPPORT_WEBHOOK_URL", "https://hooks.example.com/support?x=1"),
            ("APPROVAL_TTL_SECONDS", "2"),
            ("WATCHDOG_SECONDS", "3"),
        ])
        .unwrap();
        assert_eq!(c.stripe.api_base, "http://127.0.0.1:9999");
        assert_eq!(c.stripe.secret_key, Some(Secret("sk_test_1".into())));
        assert_eq!(c.stripe.webhook_secrets.len(), 2);
        assert_eq!(c.support_webhook.as_ref().unwrap().url, "https://hooks.example.com/support?x=1");
        assert_eq!(c.approval_ttl_ms, Some(2000));
        assert_eq!(c.watchdog_ms, Some(3000));
        assert!(with(&[("WATCHDOG_SECONDS", "0")]).is_err() && with(&[("WATCHDOG_SECONDS", "1m")]).is_err());
        assert!(!format!("{c:?}").contains("sk_test_1"), "secrets never print");

        assert!(
            with(&[("STRIPE_API_BASE", "http://stripe.example.com")]).is_err(),
            "plain http off loopback"
        );
        assert!(with(&[("STRIPE_API_BASE", "https://api.stripe.com/v1")]).is_err(), "a path");
        assert!(with(&[("SUPPORT_WEBHOOK_URL", "ftp://x")]).is_err());
        assert!(with(&[("APPROVAL_TTL_SECONDS", "0")]).is_err());
        assert!(with(&[("PLANS_JSON", "{}")]).is_err());
        let custom = r#"{"currency":"eur","defaultPlan":"zero","plans":[{"id":"zero","name":"Zero","description":"d","priceMonthly":0,"limits":{"leadsPerMonth":1,"mailboxes":0,"activeCampaigns":0}}]}"#;
        assert_eq!(with(&[("PLANS_JSON", custom)]).unwrap().plans.currency, "eur");
    }

    #[test]
    fn reads_the_lead_provider_and_deliverability_settings() {
        let base = [("PUBLIC_URL", "http://127.0.0.1:8787"), ("JWT_SIGNING_KEYS", KEY)];
        let c = config(&base).unwrap();
        assert!(c.apollo.is_none());
        assert_eq!(c.deliverability.sends_per_mailbox_per_day, 30);
        let with = |extra: &[(&'static str, &'static str)]| {
            let mut all = base.to_vec();
            all.extend_from_slice(extra);
            config(&all)
        };
        let c = with(&[("APOLLO_API_KEY", " k-123 ")]).unwrap();
        let apollo = c.apollo.unwrap();
        assert_eq!((apollo.base_url.as_str(), apollo.api_key.0.as_str()), (APOLLO_DEFAULT_BASE_URL, "k-123"));
        assert!(!format!("{apollo:?}").contains("k-123"), "the key never prints");
        let c =
            with(&[("APOLLO_API_KEY", "k"), ("APOLLO_BASE_URL", "http://127.0.0.1:9999/api/v1/")]).unwrap();
        assert_eq!(c.apollo.unwrap().base_url, "http://127.0.0.1:9999/api/v1");
        assert!(with(&[("APOLLO_API_KEY", "k"), ("APOLLO_BASE_URL", "http://apollo.example")]).is_err());
        let c = with(&[("DELIVERABILITY", r#"{"sendsPerMailboxPerDay": 25}"#)]).unwrap();
        assert_eq!(c.deliverability.sends_per_mailbox_per_day, 25);
        assert!(with(&[("DELIVERABILITY", r#"{"sendsPerMailboxPerDay": 500}"#)]).is_err());
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
        // Form posts: our own origin only, not the MCP endpoint's wider list nor another port.
        assert!(c.is_own_origin("http://127.0.0.1:8787"));
        assert!(!c.is_own_origin("http://localhost:6274"));
        assert!(!c.is_own_origin("https://claude.ai"));
        assert!(!c.is_own_origin("null"));
        assert!(p.is_own_origin("https://API.vibesell.it"));
        assert!(!p.is_own_origin("https://api.vibesell.it.evil.com"));
    }

    #[test]
    fn reads_the_oidc_provider_and_rate_limits() {
        let local = [("PUBLIC_URL", "http://127.0.0.1:8787"), ("JWT_SIGNING_KEYS", KEY)];
        let c = config(&local).unwrap();
        assert!(c.oidc.is_none());
        assert_eq!(c.rate_limits, RateLimits::default());
        let with = |extra: &[(&'static str, &'static str)]| {
            let mut pairs = local.to_vec();
            pairs.extend_from_slice(extra);
            config(&pairs)
        };
        let c = with(&[("OIDC_ISSUER", "http://127.0.0.1:9000/"), ("OIDC_CLIENT_ID", "vs")]).unwrap();
        let oidc = c.oidc.unwrap();
        assert_eq!(oidc.issuer, "http://127.0.0.1:9000");
        assert!(oidc.client_secret.is_none());
        assert!(!format!("{oidc:?}").contains("secret"));
        assert_eq!(
            with(&[("OIDC_ISSUER", "https://idp.example.com")]).unwrap_err(),
            ConfigError::Missing("OIDC_CLIENT_ID")
        );
        assert!(with(&[("OIDC_ISSUER", "http://idp.example.com"), ("OIDC_CLIENT_ID", "x")]).is_err());
        let prod = "k1:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAE";
        let remote = |issuer: &'static str| {
            config(&[
                ("PUBLIC_URL", "https://api.vibesell.it"),
                ("JWT_SIGNING_KEYS", prod),
                ("OIDC_ISSUER", issuer),
                ("OIDC_CLIENT_ID", "x"),
            ])
        };
        assert!(remote("https://accounts.google.com").is_ok());
        for bad in [
            "https://u@accounts.google.com",
            "https://accounts.google.com/x/../y",
            "https://accounts.google.com?x",
            "https://0x7f.1",
            "https://accounts.google.com\\x",
        ] {
            assert!(remote(bad).is_err(), "{bad}");
        }
        assert!(remote("http://127.0.0.1:9000").is_err(), "plain http only on a loopback deployment");
        let c =
            with(&[("OAUTH_RATE_LIMITS", "register=2/60, token=5/10, token_ip=7/10, revoke=3/60")]).unwrap();
        assert_eq!(c.rate_limits.register, Limit { capacity: 2, window_secs: 60 });
        assert_eq!(c.rate_limits.token, Limit { capacity: 5, window_secs: 10 });
        assert_eq!(c.rate_limits.token_ip, Limit { capacity: 7, window_secs: 10 });
        assert_eq!(c.rate_limits.revoke, Limit { capacity: 3, window_secs: 60 });
        assert_eq!(c.rate_limits.authorize, RateLimits::default().authorize);
        for bad in ["register=0/60", "login=1/1", "register=1", "register=a/b"] {
            assert!(with(&[("OAUTH_RATE_LIMITS", bad)]).is_err(), "{bad}");
        }
    }

    #[test]
    fn reads_the_tool_rate_limit() {
        let local = [("PUBLIC_URL", "http://127.0.0.1:8787"), ("JWT_SIGNING_KEYS", KEY)];
        let with = |value: &'static str| {
            let mut pairs = local.to_vec();
            pairs.push(("TOOL_RATE_LIMIT", value));
            config(&pairs)
        };
        assert_eq!(config(&local).unwrap().tool_rate_limit, Limit { capacity: 300, window_secs: 60 });
        assert_eq!(with("").unwrap().tool_rate_limit, DEFAULT_TOOL_RATE_LIMIT);
        assert_eq!(with(" 20 / 10 ").unwrap().tool_rate_limit, Limit { capacity: 20, window_secs: 10 });
        assert_eq!(with("1000000/60").unwrap().tool_rate_limit.capacity, 1_000_000);
        for bad in ["0/60", "10/0", "10", "a/b", "-1/60", "10/60/1", "calls=10/60", "99999999999/60"] {
            let err = with(bad).unwrap_err();
            assert!(
                matches!(&err, ConfigError::Invalid { name: "TOOL_RATE_LIMIT", reason } if reason.contains("calls/seconds")),
                "{bad}: {err:?}"
            );
        }
    }

    #[test]
    fn recognises_loopback_hosts() {
        for h in ["127.0.0.1", "127.0.0.1:8787", "localhost", "LOCALHOST:1", "[::1]:80", "http://127.1.2.3:9"]
        {
            assert!(is_loopback_host(h), "{h}");
        }
        for h in [
            "evil.example.com",
            "127.0.0.1.nip.io",
            "128.0.0.1",
            "localhost.evil",
            "[::2]",
            "127.0.1",
            "127.0.0.256",
        ] {
            assert!(!is_loopback_host(h), "{h}");
        }
    }
}

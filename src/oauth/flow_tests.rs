//! The authorization server driven natively through `http::route` on a `TestPlatform`: every
//! endpoint, whole flows, and the negative cases, each checking the exact error and that no
//! usable state is left behind.

use serde_json::{Value, json};

use crate::http::{HttpRequest, HttpResponse};
use crate::testing::TestPlatform;

pub(crate) fn request(
    method: &str,
    path_and_query: &str,
    headers: &[(&str, &str)],
    body: &[u8],
) -> HttpRequest {
    let (path, query) = match path_and_query.split_once('?') {
        Some((p, q)) => (p.to_owned(), Some(q.to_owned())),
        None => (path_and_query.to_owned(), None),
    };
    HttpRequest {
        method: method.into(),
        path,
        query,
        headers: headers.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect(),
        body: Some(body.to_vec()),
    }
}

pub(crate) fn send(p: &TestPlatform, req: HttpRequest) -> HttpResponse {
    p.send(&req).0
}

pub(crate) fn json_of(r: &HttpResponse) -> Value {
    serde_json::from_slice(&r.body).unwrap_or(Value::Null)
}

pub(crate) fn register(p: &TestPlatform, body: &Value) -> HttpResponse {
    send(
        p,
        request(
            "POST",
            "/v1/oauth/register",
            &[("content-type", "application/json")],
            body.to_string().as_bytes(),
        ),
    )
}

pub(crate) fn public_client(redirect: &str) -> Value {
    json!({
        "client_name": "Test client",
        "redirect_uris": [redirect],
        "token_endpoint_auth_method": "none",
        "grant_types": ["authorization_code", "refresh_token"],
        "response_types": ["code"],
    })
}

fn assert_error(r: &HttpResponse, status: u16, code: &str) {
    assert_eq!(r.status, status, "{}", String::from_utf8_lossy(&r.body));
    assert_eq!(json_of(r)["error"], code, "{}", String::from_utf8_lossy(&r.body));
    assert_eq!(r.header("cache-control"), Some("no-store"));
}

mod discovery {
    use super::*;

    #[test]
    fn documents_are_public_cacheable_and_agree() {
        let p = TestPlatform::new();
        let prm = send(&p, request("GET", "/.well-known/oauth-protected-resource/v1/mcp", &[], b""));
        let root = send(&p, request("GET", "/.well-known/oauth-protected-resource", &[], b""));
        let as_meta = send(&p, request("GET", "/.well-known/oauth-authorization-server", &[], b""));
        for r in [&prm, &root, &as_meta] {
            assert_eq!(r.status, 200);
            assert_eq!(r.header("content-type"), Some("application/json"));
            assert_eq!(r.header("cache-control"), Some("public, max-age=3600"));
            assert_eq!(r.header("access-control-allow-origin"), Some("*"));
        }
        assert_eq!(prm.body, root.body);
        assert_eq!(json_of(&prm)["authorization_servers"][0], json_of(&as_meta)["issuer"]);
        let challenge = send(&p, request("POST", "/v1/mcp", &[("host", "127.0.0.1:8787")], b"{}"));
        let www = challenge.header("www-authenticate").unwrap();
        assert!(www.contains(
            r#"resource_metadata="http://127.0.0.1:8787/.well-known/oauth-protected-resource/v1/mcp""#
        ));
    }

    #[test]
    fn preflights_and_methods() {
        let p = TestPlatform::new();
        let pre = send(
            &p,
            request(
                "OPTIONS",
                "/.well-known/oauth-authorization-server",
                &[("origin", "https://inspector.example")],
                b"",
            ),
        );
        assert_eq!(pre.status, 204);
        assert_eq!(pre.header("access-control-allow-origin"), Some("*"));
        assert!(pre.header("access-control-allow-headers").unwrap().contains("MCP-Protocol-Version"));
        let cors = send(
            &p,
            request(
                "GET",
                "/.well-known/oauth-protected-resource",
                &[("origin", "http://localhost:6274")],
                b"",
            ),
        );
        assert_eq!(cors.headers.iter().filter(|(k, _)| k == "access-control-allow-origin").count(), 1);
        let post = send(&p, request("POST", "/.well-known/oauth-authorization-server", &[], b""));
        assert_eq!(post.status, 405);
        let head = send(&p, request("HEAD", "/.well-known/oauth-authorization-server", &[], b""));
        assert_eq!((head.status, head.body.len()), (200, 0));
    }
}

mod registration {
    use super::*;

    #[test]
    fn registers_a_public_client_idempotently() {
        let p = TestPlatform::new();
        let body = public_client("http://127.0.0.1/callback");
        let first = register(&p, &body);
        assert_eq!(first.status, 201);
        assert_eq!(first.header("cache-control"), Some("no-store"));
        let client = json_of(&first);
        assert!(client["client_id"].as_str().unwrap().starts_with("vsc_"));
        assert_eq!(client["token_endpoint_auth_method"], "none");
        assert!(client.get("client_secret").is_none());
        assert!(client["client_id_issued_at"].is_i64());
        assert!(!first.body.windows(4).any(|w| w == b"null"), "no null fields");
        p.advance(5_000);
        let again = register(&p, &body);
        assert_eq!(again.status, 201);
        assert_eq!(json_of(&again), client, "same metadata, same client, same issue time");
        let other = register(&p, &public_client("http://127.0.0.1/other"));
        assert_ne!(json_of(&other)["client_id"], client["client_id"]);
    }

    #[test]
    fn registers_confidential_clients_with_a_hashed_secret() {
        let p = TestPlatform::new();
        let body = json!({"redirect_uris": ["https://app.example.com/cb"], "token_endpoint_auth_method": "client_secret_post"});
        let r = register(&p, &body);
        assert_eq!(r.status, 201);
        let client = json_of(&r);
        let secret = client["client_secret"].as_str().unwrap();
        assert_eq!(client["client_secret_expires_at"], 0);
        let key = format!("client:{}", client["client_id"].as_str().unwrap());
        let stored = p.kv_value(&key).unwrap();
        assert!(!stored.contains(secret), "only the hash is stored");
        assert!(stored.contains(&crate::ids::sha256_hex(secret.as_bytes())));
        let again = json_of(&register(&p, &body));
        assert_ne!(
            again["client_id"], client["client_id"],
            "a confidential client is never handed out twice"
        );
    }

    #[test]
    fn refuses_bad_registrations_and_stores_nothing() {
        let p = TestPlatform::new();
        for (body, code) in [
            (
                json!({"redirect_uris": ["http://evil.example.com/cb"], "token_endpoint_auth_method": "none"}),
                "invalid_redirect_uri",
            ),
            (
                json!({"redirect_uris": ["javascript:alert(1)"], "token_endpoint_auth_method": "none"}),
                "invalid_redirect_uri",
            ),
            (
                json!({"redirect_uris": ["https://a.example/cb#x"], "token_endpoint_auth_method": "none"}),
                "invalid_redirect_uri",
            ),
            (
                json!({"redirect_uris": ["https://u:p@a.example/cb"], "token_endpoint_auth_method": "none"}),
                "invalid_redirect_uri",
            ),
            (
                json!({"redirect_uris": ["https://*.a.example/cb"], "token_endpoint_auth_method": "none"}),
                "invalid_redirect_uri",
            ),
            (json!({"token_endpoint_auth_method": "none"}), "invalid_redirect_uri"),
            (
                json!({"redirect_uris": ["https://a.example/cb"], "grant_types": ["implicit"]}),
                "invalid_client_metadata",
            ),
            (json!(["https://a.example/cb"]), "invalid_client_metadata"),
        ] {
            let r = register(&p, &body);
            assert_error(&r, 400, code);
        }
        let malformed = send(
            &p,
            request(
                "POST",
                "/v1/oauth/register",
                &[("content-type", "application/json")],
                b"{\"redirect_uris\": [",
            ),
        );
        assert_error(&malformed, 400, "invalid_client_metadata");
        let not_json =
            send(&p, request("POST", "/v1/oauth/register", &[("content-type", "text/plain")], b"{}"));
        assert_error(&not_json, 400, "invalid_client_metadata");
        let mut huge = public_client("http://127.0.0.1/cb");
        huge["software_statement"] = Value::String("x".repeat(20_000));
        assert_error(&register(&p, &huge), 400, "invalid_client_metadata");
        let mut too_big = request("POST", "/v1/oauth/register", &[("content-type", "application/json")], b"");
        too_big.body = None; // over the Worker's 1 MiB read limit
        assert_error(&send(&p, too_big), 400, "invalid_client_metadata");
        assert!(p.kv_keys().is_empty(), "nothing stored: {:?}", p.kv_keys());
    }

    #[test]
    fn new_registrations_are_rate_limited_per_address() {
        let mut config = crate::testing::test_config();
        config.rate_limits.register = crate::config::Limit { capacity: 2, window_secs: 3600 };
        let p = TestPlatform::with_config(config);
        let from = |ip: &str, i: usize| {
            let body = public_client(&format!("http://127.0.0.1/cb{i}"));
            send(
                &p,
                request(
                    "POST",
                    "/v1/oauth/register",
                    &[("content-type", "application/json"), ("cf-connecting-ip", ip)],
                    body.to_string().as_bytes(),
                ),
            )
        };
        assert_eq!(from("203.0.113.1", 1).status, 201);
        assert_eq!(from("203.0.113.1", 2).status, 201);
        let limited = from("203.0.113.1", 3);
        assert_error(&limited, 429, "too_many_requests");
        assert_eq!(limited.header("retry-after"), Some("1800"));
        assert_eq!(from("203.0.113.1", 1).status, 201, "re-registering known metadata is free");
        assert_eq!(from("203.0.113.2", 3).status, 201, "another address has its own budget");
        assert_eq!(p.kv_keys().len(), 3, "the refused registration stored nothing");
        p.advance(1_800_000);
        assert_eq!(from("203.0.113.1", 4).status, 201);
    }

    #[test]
    fn a_client_registered_elsewhere_is_found_while_kv_lags() {
        let p = TestPlatform::new();
        let client = json_of(&register(&p, &public_client("http://127.0.0.1/callback")));
        let id = client["client_id"].as_str().unwrap();
        p.kv_lagging.set(true);
        let config = crate::testing::test_config();
        let found = crate::testing::block_on(crate::oauth::clients::find(
            &config,
            &p,
            &p,
            &p,
            id,
            p.now_ms.get(),
            true,
        ))
        .unwrap()
        .expect("found through the fallback object");
        assert_eq!(found.client_id, id);
        let unknown = crate::testing::block_on(crate::oauth::clients::find(
            &config,
            &p,
            &p,
            &p,
            "vsc_00000000000000000000000000000000",
            p.now_ms.get(),
            true,
        ))
        .unwrap();
        assert!(unknown.is_none());
        p.kv_lagging.set(false);
        p.kv_down.set(true);
        let r = register(&p, &public_client("http://127.0.0.1/elsewhere"));
        assert_error(&r, 503, "temporarily_unavailable");
    }

    /// What a registration whose KV write failed leaves (`store` writes the fallback copy first,
    /// then KV, and answers 503 when KV fails): the client in the fallback copy only. The retry
    /// looks in KV only, stores again, and so writes the copy's record to KV before its 201:
    /// the copy is gone after a day.
    #[test]
    fn a_registration_whose_kv_write_failed_is_written_again_when_retried() {
        let p = TestPlatform::new();
        let mut body = public_client(LOOPBACK);
        body["client_name"] = json!("KV write failed");
        let first = json_of(&register(&p, &body));
        let id = first["client_id"].as_str().unwrap().to_owned();
        let key = format!("client:{id}");
        crate::testing::block_on(crate::kv::Kv::delete(&p, key.clone())).unwrap();
        assert!(p.kv_value(&key).is_none() && p.state_entries(&key) == 1);
        p.advance(5_000);
        let again = register(&p, &body);
        assert_eq!(again.status, 201);
        assert_eq!(json_of(&again), first, "the same record");
        assert!(p.kv_value(&key).is_some(), "in KV before the 201");
        p.advance(crate::oauth::clients::FALLBACK_TTL_MS);
        assert_eq!(p.state_entries("client:"), 0, "the fallback copy is gone");
        let r = Jar::default().get(&p, &authorize_url(&id, CALLBACK, &[]));
        assert_eq!(r.status, 303, "{:?}", data_error(&r));
    }

    /// RFC 7591 §3: every registration request is counted before the client is looked up (a KV
    /// read, and a Durable Object call when KV misses), in the address's large budget; known
    /// metadata still does not spend the small budget of new clients.
    #[test]
    fn every_registration_is_counted_before_the_lookup() {
        let mut config = crate::testing::test_config();
        config.rate_limits.token_ip = crate::config::Limit { capacity: 2, window_secs: 60 };
        config.rate_limits.register = crate::config::Limit { capacity: 1, window_secs: 3600 };
        let p = TestPlatform::with_config(config);
        let body = public_client("http://127.0.0.1/counted");
        assert_eq!(register(&p, &body).status, 201);
        assert_eq!(register(&p, &body).status, 201, "known metadata: not a new client");
        // KV down: a lookup would be a 503; the budget refuses first.
        p.kv_down.set(true);
        let limited = register(&p, &body);
        assert_error(&limited, 429, "too_many_requests");
        assert_eq!(limited.header("retry-after"), Some("30"));
    }
}

/// A browser: a cookie jar in front of `route`.
#[derive(Default)]
pub(crate) struct Jar {
    cookies: std::cell::RefCell<Vec<(String, String)>>,
}

impl Jar {
    fn header(&self) -> String {
        self.cookies.borrow().iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>().join("; ")
    }

    fn keep(&self, r: &HttpResponse) {
        for (name, value) in r.headers.iter().filter(|(k, _)| k == "set-cookie") {
            let pair = value.split(';').next().unwrap_or("");
            let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
            let mut cookies = self.cookies.borrow_mut();
            cookies.retain(|(n, _)| n != k);
            if !value.contains("Max-Age=0") {
                cookies.push((k.to_owned(), v.to_owned()));
            }
            let _ = name;
        }
    }

    pub(crate) fn get(&self, p: &TestPlatform, path_and_query: &str) -> HttpResponse {
        let cookie = self.header();
        let r = send(
            p,
            request("GET", path_and_query, &[("cookie", &cookie), ("cf-connecting-ip", "192.0.2.10")], b""),
        );
        self.keep(&r);
        r
    }

    pub(crate) fn post(&self, p: &TestPlatform, path: &str, pairs: &[(&str, &str)]) -> HttpResponse {
        let cookie = self.header();
        let body = url::form_urlencoded::Serializer::new(String::new()).extend_pairs(pairs).finish();
        let r = send(
            p,
            request(
                "POST",
                path,
                &[
                    ("cookie", &cookie),
                    ("content-type", "application/x-www-form-urlencoded"),
                    ("origin", "http://127.0.0.1:8787"),
                    ("cf-connecting-ip", "192.0.2.10"),
                ],
                body.as_bytes(),
            ),
        );
        self.keep(&r);
        r
    }

    pub(crate) fn value(&self, name: &str) -> Option<String> {
        self.cookies.borrow().iter().find(|(k, _)| k == name).map(|(_, v)| v.clone())
    }
}

pub(crate) fn html(r: &HttpResponse) -> String {
    String::from_utf8_lossy(&r.body).into_owned()
}

/// The value of a hidden input.
pub(crate) fn hidden(page: &str, name: &str) -> String {
    let needle = format!(r#"name="{name}" value=""#);
    let start = page.find(&needle).unwrap_or_else(|| panic!("no {name} in {page}")) + needle.len();
    page[start..]
        .split('"')
        .next()
        .unwrap_or("")
        .replace("&amp;", "&")
        .replace("&#39;", "'")
        .replace("&quot;", "\"")
}

/// A hidden input of the consent form (the page also has the sign-out form).
pub(crate) fn consent_field(page: &str, name: &str) -> String {
    let start = page.find("data-form=\"consent\"").unwrap_or_else(|| panic!("no consent form in {page}"));
    hidden(&page[start..], name)
}

pub(crate) fn location(r: &HttpResponse) -> String {
    r.header("location").unwrap_or_else(|| panic!("no Location: {} {}", r.status, html(r))).to_owned()
}

pub(crate) fn param(url: &str, name: &str) -> Option<String> {
    let query = url.split_once('?').map(|(_, q)| q).unwrap_or("");
    url::form_urlencoded::parse(query.as_bytes()).find(|(k, _)| k == name).map(|(_, v)| v.into_owned())
}

fn data_error(r: &HttpResponse) -> Option<String> {
    let page = html(r);
    let start = page.find("data-error=\"")? + 12;
    Some(page[start..].split('"').next()?.to_owned())
}

pub(crate) const VERIFIER: &str = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk";
pub(crate) const CHALLENGE: &str = "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM";
pub(crate) const LOOPBACK: &str = "http://127.0.0.1/callback";
pub(crate) const CALLBACK: &str = "http://127.0.0.1:5555/callback";

pub(crate) fn register_client(p: &TestPlatform, redirect: &str) -> String {
    let r = register(p, &public_client(redirect));
    assert_eq!(r.status, 201);
    json_of(&r)["client_id"].as_str().unwrap().to_owned()
}

pub(crate) fn authorize_url(client_id: &str, redirect: &str, extra: &[(&str, &str)]) -> String {
    let mut pairs: Vec<(&str, &str)> = vec![
        ("response_type", "code"),
        ("client_id", client_id),
        ("redirect_uri", redirect),
        ("code_challenge", CHALLENGE),
        ("code_challenge_method", "S256"),
        ("state", "st-123"),
        ("scope", "mcp mcp:act"),
        ("resource", "http://127.0.0.1:8787/v1/mcp"),
    ];
    for (k, v) in extra {
        pairs.retain(|(name, _)| name != k);
        if !v.is_empty() {
            pairs.push((k, v));
        }
    }
    let query = url::form_urlencoded::Serializer::new(String::new()).extend_pairs(pairs).finish();
    format!("/v1/oauth/authorize?{query}")
}

/// Opens an authorization in `jar`'s browser: the consent URL it leads to, and what that URL
/// answers (the sign-in page, the consent page, or a remembered consent's redirect).
pub(crate) fn open_consent(p: &TestPlatform, jar: &Jar, url: &str) -> (String, HttpResponse) {
    let r = jar.get(p, url);
    assert_eq!(r.status, 303, "{}", html(&r));
    let consent = location(&r);
    assert!(consent.starts_with("/v1/oauth/consent?request="), "{consent}");
    let answer = jar.get(p, &consent);
    (consent, answer)
}

/// Authorize, sign in (development sign-in) and reach the consent page; answers the consent
/// page.
pub(crate) fn to_consent(p: &TestPlatform, jar: &Jar, url: &str, email: &str) -> HttpResponse {
    let (consent, page) = open_consent(p, jar, url);
    if page.header("content-type") == Some("text/html; charset=utf-8")
        && html(&page).contains("data-page=\"consent\"")
    {
        return page;
    }
    let signin = html(&page);
    assert!(signin.contains("data-page=\"signin\""), "{signin}");
    let r = jar.post(
        p,
        "/app/signin/dev",
        &[("email", email), ("return_to", &hidden(&signin, "return_to")), ("csrf", &hidden(&signin, "csrf"))],
    );
    assert_eq!(r.status, 303, "{}", html(&r));
    assert_eq!(location(&r), consent);
    let page = jar.get(p, &consent);
    assert!(html(&page).contains("data-page=\"consent\""), "{}", html(&page));
    page
}

/// Approves on a consent page; answers the redirect to the client.
pub(crate) fn approve(p: &TestPlatform, jar: &Jar, page: &HttpResponse, access: &str) -> HttpResponse {
    let page = html(page);
    jar.post(
        p,
        "/v1/oauth/consent",
        &[
            ("request", &consent_field(&page, "request")),
            ("csrf", &consent_field(&page, "csrf")),
            ("decision", "approve"),
            ("access", access),
        ],
    )
}

/// The code of a full authorization as `email`.
pub(crate) fn authorize_code(
    p: &TestPlatform,
    client_id: &str,
    redirect: &str,
    email: &str,
    access: &str,
) -> String {
    let jar = Jar::default();
    let page = to_consent(p, &jar, &authorize_url(client_id, redirect, &[]), email);
    let r = approve(p, &jar, &page, access);
    assert_eq!(r.status, 303, "{}", html(&r));
    let to = location(&r);
    assert!(to.starts_with(redirect), "{to}");
    param(&to, "code").expect("code")
}

pub(crate) fn token_request(
    p: &TestPlatform,
    pairs: &[(&str, &str)],
    headers: &[(&str, &str)],
) -> HttpResponse {
    let body = url::form_urlencoded::Serializer::new(String::new()).extend_pairs(pairs).finish();
    let mut h: Vec<(&str, &str)> =
        vec![("content-type", "application/x-www-form-urlencoded"), ("cf-connecting-ip", "192.0.2.20")];
    // A header given replaces the default of the same name (the first one is the one read).
    h.retain(|(name, _)| !headers.iter().any(|(given, _)| given == name));
    h.extend_from_slice(headers);
    send(p, request("POST", "/v1/oauth/token", &h, body.as_bytes()))
}

pub(crate) fn exchange(p: &TestPlatform, client_id: &str, code: &str, redirect: &str) -> HttpResponse {
    exchange_with(p, client_id, code, redirect, &[])
}

/// [`exchange`] with headers of its own (another client address, say).
fn exchange_with(
    p: &TestPlatform,
    client_id: &str,
    code: &str,
    redirect: &str,
    headers: &[(&str, &str)],
) -> HttpResponse {
    token_request(
        p,
        &[
            ("grant_type", "authorization_code"),
            ("client_id", client_id),
            ("code", code),
            ("code_verifier", VERIFIER),
            ("redirect_uri", redirect),
            ("resource", "http://127.0.0.1:8787/v1/mcp"),
        ],
        headers,
    )
}

pub(crate) fn refresh(p: &TestPlatform, client_id: &str, refresh_token: &str) -> HttpResponse {
    token_request(
        p,
        &[("grant_type", "refresh_token"), ("client_id", client_id), ("refresh_token", refresh_token)],
        &[],
    )
}

/// A refresh grant asking for `scope`.
fn refresh_for_scope(p: &TestPlatform, client_id: &str, refresh_token: &str, scope: &str) -> HttpResponse {
    token_request(
        p,
        &[
            ("grant_type", "refresh_token"),
            ("client_id", client_id),
            ("refresh_token", refresh_token),
            ("scope", scope),
        ],
        &[],
    )
}

/// A tools/call of get_workspace_context with a bearer token: its HTTP status.
pub(crate) fn call_tool_status(p: &TestPlatform, access_token: &str) -> u16 {
    let auth = format!("Bearer {access_token}");
    let body = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_workspace_context","arguments":{}}}"#;
    let r = send(
        p,
        request(
            "POST",
            "/v1/mcp",
            &[
                ("authorization", &auth),
                ("content-type", "application/json"),
                ("accept", "application/json, text/event-stream"),
                ("host", "127.0.0.1:8787"),
            ],
            body.as_bytes(),
        ),
    );
    if r.status == 200 {
        assert_eq!(json_of(&r)["result"]["isError"], false, "{}", html(&r));
    }
    r.status
}

pub(crate) fn tool_names(p: &TestPlatform, access_token: &str) -> Vec<String> {
    let auth = format!("Bearer {access_token}");
    let r = send(
        p,
        request(
            "POST",
            "/v1/mcp",
            &[
                ("authorization", &auth),
                ("content-type", "application/json"),
                ("accept", "application/json"),
                ("host", "127.0.0.1:8787"),
            ],
            br#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#,
        ),
    );
    assert_eq!(r.status, 200, "{}", html(&r));
    json_of(&r)["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_owned())
        .collect()
}

mod authorization {
    use super::*;

    #[test]
    fn the_whole_flow_from_registration_to_a_tool_call() {
        let p = TestPlatform::new();
        let client_id = register_client(&p, LOOPBACK);
        let jar = Jar::default();
        let r = jar.get(&p, &authorize_url(&client_id, CALLBACK, &[]));
        assert_eq!(r.status, 303);
        assert_eq!(r.header("cache-control"), Some("no-store"));
        let cookie = r.headers.iter().find(|(k, _)| k == "set-cookie").unwrap().1.clone();
        assert!(
            cookie.starts_with("__Host-vs_browser=")
                && cookie.contains("HttpOnly")
                && cookie.contains("Secure")
        );
        let consent = location(&r);
        let signin = jar.get(&p, &consent);
        assert_eq!(signin.status, 200);
        let signin_html = html(&signin);
        assert!(signin_html.contains("Sign in to connect Test client to VibeSell"));
        assert!(signin.header("content-security-policy").unwrap().contains("frame-ancestors 'none'"));
        let r = jar.post(
            &p,
            "/app/signin/dev",
            &[
                ("email", "Ada@Example.com"),
                ("return_to", &hidden(&signin_html, "return_to")),
                ("csrf", &hidden(&signin_html, "csrf")),
            ],
        );
        assert_eq!((r.status, location(&r)), (303, consent.clone()));
        assert!(jar.value("__Host-vs_session").unwrap().starts_with("vsse_"));
        let page = jar.get(&p, &consent);
        let page_html = html(&page);
        assert!(page_html.contains("Connect Test client to VibeSell?"));
        assert!(page_html.contains("ada@example.com"));
        assert!(page_html.contains("127.0.0.1"), "the redirect host is shown");
        assert!(page_html.contains("runs on your computer"), "loopback warning");
        let csp = page.header("content-security-policy").unwrap();
        assert!(csp.contains("form-action 'self' http://127.0.0.1:5555"), "{csp}");
        assert_eq!(page.header("x-frame-options"), Some("DENY"));
        assert_eq!(page.header("referrer-policy"), Some("same-origin"));
        let r = approve(&p, &jar, &page, "act");
        assert_eq!(r.status, 303);
        let back = location(&r);
        assert!(back.starts_with("http://127.0.0.1:5555/callback?code=vsac_"), "{back}");
        assert_eq!(param(&back, "state").as_deref(), Some("st-123"));
        assert_eq!(param(&back, "iss").as_deref(), Some("http://127.0.0.1:8787"));
        assert_eq!(p.state_entries("flow:"), 0, "the pending request is gone");

        let code = param(&back, "code").unwrap();
        let t = exchange(&p, &client_id, &code, CALLBACK);
        assert_eq!(t.status, 200, "{}", html(&t));
        assert_eq!(t.header("cache-control"), Some("no-store"));
        let tokens = json_of(&t);
        assert_eq!(tokens["token_type"], "Bearer");
        assert_eq!(tokens["expires_in"], 3600);
        assert_eq!(tokens["scope"], "mcp mcp:act");
        assert!(tokens["refresh_token"].as_str().unwrap().starts_with("vsrt_"));
        let access = tokens["access_token"].as_str().unwrap();
        let config = crate::testing::test_config();
        let (principal, claims) = crate::auth::jwt::verify(&config, access, p.now_ms.get()).unwrap();
        assert_eq!(principal.subject, "ada@example.com");
        assert_eq!(principal.workspace, crate::workspace::workspace_id_for("ada@example.com"));
        assert_eq!(principal.client_id, client_id);
        assert!(!principal.app);
        assert!(claims.gid.as_deref().unwrap().starts_with("gr_"));
        assert_eq!(call_tool_status(&p, access), 200);
        assert!(tool_names(&p, access).contains(&"remember".to_owned()));
    }

    #[test]
    fn client_and_redirect_errors_never_redirect() {
        let p = TestPlatform::new();
        let client_id = register_client(&p, LOOPBACK);
        let jar = Jar::default();
        let cases: Vec<(String, &str)> = vec![
            (authorize_url("", LOOPBACK, &[("client_id", "")]), "invalid_request"),
            (authorize_url("vsc_00000000000000000000000000000000", LOOPBACK, &[]), "unknown_client"),
            (authorize_url("not-a-client", LOOPBACK, &[]), "unknown_client"),
            (authorize_url(&client_id, "http://127.0.0.1:5555/other", &[]), "invalid_redirect_uri"),
            (authorize_url(&client_id, "http://localhost:5555/callback", &[]), "invalid_redirect_uri"),
            (authorize_url(&client_id, "https://127.0.0.1:5555/callback", &[]), "invalid_redirect_uri"),
            (authorize_url(&client_id, "http://127.0.0.1:5555/callback/", &[]), "invalid_redirect_uri"),
            (authorize_url(&client_id, "http://127.0.0.1:5555/callback?x=1", &[]), "invalid_redirect_uri"),
            (authorize_url(&client_id, "http://127.0.0.1:5555/callback#x", &[]), "invalid_redirect_uri"),
            (authorize_url(&client_id, "http://u@127.0.0.1:5555/callback", &[]), "invalid_redirect_uri"),
            (authorize_url(&client_id, "http://evil.example/callback", &[]), "invalid_redirect_uri"),
            (authorize_url(&client_id, "javascript:alert(1)", &[]), "invalid_redirect_uri"),
            (authorize_url(&client_id, "", &[("redirect_uri", "")]), "invalid_redirect_uri"),
            (
                format!("{}&client_id={client_id}", authorize_url(&client_id, CALLBACK, &[])),
                "invalid_request",
            ),
        ];
        for (url, code) in cases {
            let r = jar.get(&p, &url);
            assert_eq!(r.status, 400, "{url}");
            assert!(r.header("location").is_none(), "{url}");
            assert_eq!(data_error(&r).as_deref(), Some(code), "{url}");
        }
        assert_eq!(p.state_entries("flow:"), 0);
    }

    #[test]
    fn other_errors_go_back_to_the_client_with_state_and_iss() {
        let p = TestPlatform::new();
        let client_id = register_client(&p, LOOPBACK);
        let jar = Jar::default();
        let cases: Vec<(Vec<(&str, &str)>, &str)> = vec![
            (vec![("code_challenge", "")], "invalid_request"),
            (vec![("code_challenge_method", "")], "invalid_request"),
            (vec![("code_challenge_method", "plain")], "invalid_request"),
            (vec![("code_challenge_method", "S512")], "invalid_request"),
            (vec![("code_challenge", "short")], "invalid_request"),
            (vec![("response_type", "token")], "unsupported_response_type"),
            (vec![("response_type", "")], "invalid_request"),
            (vec![("scope", "mcp admin")], "invalid_scope"),
            (vec![("scope", "openid")], "invalid_scope"),
            (vec![("resource", "http://127.0.0.1:8787/v1/other")], "invalid_target"),
            (vec![("resource", "https://evil.example/v1/mcp")], "invalid_target"),
        ];
        for (extra, code) in cases {
            let r = jar.get(&p, &authorize_url(&client_id, CALLBACK, &extra));
            assert_eq!(r.status, 303, "{extra:?}: {}", html(&r));
            let to = location(&r);
            assert!(to.starts_with(CALLBACK), "{to}");
            assert_eq!(param(&to, "error").as_deref(), Some(code), "{extra:?}");
            assert_eq!(param(&to, "state").as_deref(), Some("st-123"));
            assert_eq!(param(&to, "iss").as_deref(), Some("http://127.0.0.1:8787"));
        }
        let two =
            format!("{}&resource=http%3A%2F%2F127.0.0.1%3A8787%2F", authorize_url(&client_id, CALLBACK, &[]));
        assert_eq!(param(&location(&jar.get(&p, &two)), "error").as_deref(), Some("invalid_target"));
        assert_eq!(p.state_entries("flow:"), 0, "no pending request for a refused one");
        // Tolerated: the trailing slash, the bare origin, offline_access, no scope at all.
        for extra in [
            vec![("resource", "http://127.0.0.1:8787/v1/mcp/")],
            vec![("resource", "http://127.0.0.1:8787/")],
            vec![("scope", "mcp offline_access")],
            vec![("scope", "")],
        ] {
            let r = jar.get(&p, &authorize_url(&client_id, CALLBACK, &extra));
            assert!(location(&r).starts_with("/v1/oauth/consent?request="), "{extra:?}");
        }
    }

    #[test]
    fn an_untrusted_redirect_gets_a_page_with_a_link_not_a_bounce() {
        let p = TestPlatform::new();
        let r = register(&p, &public_client("https://app.example.com/cb"));
        let client_id = json_of(&r)["client_id"].as_str().unwrap().to_owned();
        let r = Jar::default()
            .get(&p, &authorize_url(&client_id, "https://app.example.com/cb", &[("scope", "admin")]));
        assert_eq!(r.status, 400);
        assert!(r.header("location").is_none());
        assert_eq!(data_error(&r).as_deref(), Some("invalid_scope"));
        let page = html(&r);
        assert!(page.contains("href=\"https://app.example.com/cb?error=invalid_scope"), "{page}");
        assert!(page.contains("iss=http%3A%2F%2F127.0.0.1%3A8787"));
    }

    #[test]
    fn authorization_requests_are_rate_limited() {
        let mut config = crate::testing::test_config();
        config.rate_limits.authorize = crate::config::Limit { capacity: 2, window_secs: 60 };
        let p = TestPlatform::with_config(config);
        let client_id = register_client(&p, LOOPBACK);
        let jar = Jar::default();
        let url = authorize_url(&client_id, CALLBACK, &[]);
        assert_eq!(jar.get(&p, &url).status, 303);
        assert_eq!(jar.get(&p, &url).status, 303);
        let limited = jar.get(&p, &url);
        assert_eq!(limited.status, 429);
        assert_eq!(data_error(&limited).as_deref(), Some("too_many_requests"));
        assert_eq!(limited.header("retry-after"), Some("30"));
    }
}

mod consent {
    use super::*;

    #[test]
    fn the_user_may_narrow_to_read_only() {
        let p = TestPlatform::new();
        let client_id = register_client(&p, LOOPBACK);
        let code = authorize_code(&p, &client_id, CALLBACK, "reader@example.com", "read");
        let tokens = json_of(&exchange(&p, &client_id, &code, CALLBACK));
        assert_eq!(tokens["scope"], "mcp");
        let names = tool_names(&p, tokens["access_token"].as_str().unwrap());
        assert!(names.contains(&"get_workspace_context".to_owned()));
        assert!(!names.contains(&"remember".to_owned()), "{names:?}");
    }

    #[test]
    fn a_read_only_request_offers_no_act_choice_and_cannot_be_widened() {
        let p = TestPlatform::new();
        let client_id = register_client(&p, LOOPBACK);
        let jar = Jar::default();
        let page =
            to_consent(&p, &jar, &authorize_url(&client_id, CALLBACK, &[("scope", "mcp")]), "r@example.com");
        assert!(!html(&page).contains("value=\"act\""));
        let r = approve(&p, &jar, &page, "act");
        let code = param(&location(&r), "code").unwrap();
        assert_eq!(
            json_of(&exchange(&p, &client_id, &code, CALLBACK))["scope"],
            "mcp",
            "asking for act in the form adds nothing"
        );
    }

    const REMOTE: &str = "https://app.example.com/oauth/callback";

    #[test]
    fn consent_is_remembered_for_the_same_app_address_and_scopes() {
        let p = TestPlatform::new();
        let client_id = register_client(&p, REMOTE);
        let jar = Jar::default();
        let page = to_consent(&p, &jar, &authorize_url(&client_id, REMOTE, &[]), "ada@example.com");
        assert!(html(&page).contains("without asking you again"), "the page says so");
        let code = param(&location(&approve(&p, &jar, &page, "act")), "code").unwrap();
        assert_eq!(exchange(&p, &client_id, &code, REMOTE).status, 200);

        // Reconnecting from the same browser session: straight back to the app, no page.
        let (consent, r) = open_consent(&p, &jar, &authorize_url(&client_id, REMOTE, &[("state", "st-2")]));
        assert_eq!(r.status, 303, "{}", html(&r));
        let to = location(&r);
        assert!(to.starts_with(REMOTE), "{to}");
        assert_eq!(param(&to, "state").as_deref(), Some("st-2"));
        assert_eq!(param(&to, "iss").as_deref(), Some("http://127.0.0.1:8787"));
        let tokens = json_of(&exchange(&p, &client_id, &param(&to, "code").unwrap(), REMOTE));
        assert_eq!(tokens["scope"], "mcp mcp:act");
        assert_eq!(call_tool_status(&p, tokens["access_token"].as_str().unwrap()), 200);
        // The request was spent like a decision: its link does not work twice.
        assert_eq!(jar.get(&p, &consent).status, 400);
        // Asking for less than was granted is covered too.
        let (_, r) = open_consent(&p, &jar, &authorize_url(&client_id, REMOTE, &[("scope", "mcp")]));
        let tokens = json_of(&exchange(&p, &client_id, &param(&location(&r), "code").unwrap(), REMOTE));
        assert_eq!(tokens["scope"], "mcp");

        // prompt=consent asks again, and the page does not promise to remember.
        let (_, r) = open_consent(&p, &jar, &authorize_url(&client_id, REMOTE, &[("prompt", "consent")]));
        assert!(html(&r).contains("data-page=\"consent\""), "{}", html(&r));
        assert!(!html(&r).contains("without asking you again"));
    }

    /// Any client may name itself: one that passes for Claude (here with a Cyrillic С) is told
    /// apart on the consent page, with where its answer goes; a plainly named one is not.
    #[test]
    fn a_client_named_like_claude_is_said_not_to_be_it() {
        let p = TestPlatform::new();
        let mut lookalike = public_client(REMOTE);
        lookalike["client_name"] = json!("\u{421}laude Desktop");
        let impostor = json_of(&register(&p, &lookalike))["client_id"].as_str().unwrap().to_owned();
        let honest = register_client(&p, REMOTE);
        let jar = Jar::default();
        let page = html(&to_consent(&p, &jar, &authorize_url(&impostor, REMOTE, &[]), "bo@example.com"));
        assert!(page.contains("but it is not the Claude app"), "{page}");
        let (_, plain) = open_consent(&p, &jar, &authorize_url(&honest, REMOTE, &[]));
        assert!(!html(&plain).contains("not the Claude app"));
        // A local program (Claude Code) gets the loopback warning only, which already says that
        // any program there may take any name.
        let mut local = public_client(LOOPBACK);
        local["client_name"] = json!("Claude Code");
        let code = json_of(&register(&p, &local))["client_id"].as_str().unwrap().to_owned();
        let (_, page) = open_consent(&p, &jar, &authorize_url(&code, LOOPBACK, &[]));
        let page = html(&page);
        assert!(page.contains("runs on your computer") && !page.contains("not the Claude app"), "{page}");
        for name in [
            "CLAUDE",
            "C l a u d e",
            "Anthrop1c helper",
            "VibeSeII",
            "ＣＬＡＵＤＥ",
            "сlаudе",
            "Claude Desktop",
        ] {
            assert!(super::super::consent::borrows_a_name(name), "{name}");
        }
        for name in ["Cursor", "MCP Inspector", "Cloud desk", "Philanthropic CRM", "Claudette's notes"] {
            assert!(!super::super::consent::borrows_a_name(name), "{name}");
        }
    }

    #[test]
    fn consent_is_asked_again_for_anything_not_granted_before() {
        let p = TestPlatform::new();
        let client_id = register_client(&p, REMOTE);
        let mut another_app = public_client(REMOTE);
        another_app["client_name"] = json!("Another app");
        let other_client = json_of(&register(&p, &another_app))["client_id"].as_str().unwrap().to_owned();
        assert_ne!(other_client, client_id);
        let jar = Jar::default();
        let page = to_consent(&p, &jar, &authorize_url(&client_id, REMOTE, &[]), "bo@example.com");
        let to = location(&approve(&p, &jar, &page, "read"));
        let asks = |url: &str, jar: &Jar| {
            let (_, r) = open_consent(&p, jar, url);
            html(&r).contains("data-page=\"consent\"")
        };
        // Not yet exchanged: a grant whose code was never redeemed remembers nothing.
        assert!(asks(&authorize_url(&client_id, REMOTE, &[("scope", "mcp")]), &jar));
        let tokens = json_of(&exchange(&p, &client_id, &param(&to, "code").unwrap(), REMOTE));
        assert_eq!(tokens["scope"], "mcp");
        assert!(!asks(&authorize_url(&client_id, REMOTE, &[("scope", "mcp")]), &jar), "remembered");
        // More scopes than the user granted (they chose read only).
        assert!(asks(&authorize_url(&client_id, REMOTE, &[]), &jar));
        // Another app at the same address.
        assert!(asks(&authorize_url(&other_client, REMOTE, &[("scope", "mcp")]), &jar));
        // Another user, signed in in another browser (`to_consent` lands on the consent page).
        to_consent(
            &p,
            &Jar::default(),
            &authorize_url(&client_id, REMOTE, &[("scope", "mcp")]),
            "di@example.com",
        );
        // Once the grant is revoked, the user is asked again.
        let rt = tokens["refresh_token"].as_str().unwrap();
        assert_eq!(revoke_request(&p, &[("client_id", &client_id), ("token", rt)]).status, 200);
        assert!(asks(&authorize_url(&client_id, REMOTE, &[("scope", "mcp")]), &jar));
    }

    #[test]
    fn consent_is_never_remembered_for_an_app_on_this_computer() {
        let p = TestPlatform::new();
        let client_id = register_client(&p, LOOPBACK);
        let jar = Jar::default();
        let page = to_consent(&p, &jar, &authorize_url(&client_id, CALLBACK, &[]), "cy@example.com");
        assert!(!html(&page).contains("without asking you again"));
        let code = param(&location(&approve(&p, &jar, &page, "act")), "code").unwrap();
        assert_eq!(exchange(&p, &client_id, &code, CALLBACK).status, 200);
        let (_, r) = open_consent(&p, &jar, &authorize_url(&client_id, CALLBACK, &[]));
        assert!(html(&r).contains("data-page=\"consent\""), "any program here could use its name");
    }

    #[test]
    fn deny_redirects_with_access_denied_and_grants_nothing() {
        let p = TestPlatform::new();
        let client_id = register_client(&p, LOOPBACK);
        let jar = Jar::default();
        let page = html(&to_consent(&p, &jar, &authorize_url(&client_id, CALLBACK, &[]), "no@example.com"));
        let r = jar.post(
            &p,
            "/v1/oauth/consent",
            &[
                ("request", &consent_field(&page, "request")),
                ("csrf", &consent_field(&page, "csrf")),
                ("decision", "deny"),
            ],
        );
        assert_eq!(r.status, 303);
        let to = location(&r);
        assert_eq!(param(&to, "error").as_deref(), Some("access_denied"));
        assert_eq!(param(&to, "state").as_deref(), Some("st-123"));
        assert_eq!(param(&to, "iss").as_deref(), Some("http://127.0.0.1:8787"));
        assert!(param(&to, "code").is_none());
        assert_eq!(p.state_entries("flow:"), 0);
        let again = jar.post(
            &p,
            "/v1/oauth/consent",
            &[
                ("request", &consent_field(&page, "request")),
                ("csrf", &consent_field(&page, "csrf")),
                ("decision", "approve"),
                ("access", "act"),
            ],
        );
        assert_eq!(data_error(&again).as_deref(), Some("request_unknown"), "a handle decides once");
    }

    #[test]
    fn csrf_other_browsers_and_expired_handles_are_refused() {
        let p = TestPlatform::new();
        let client_id = register_client(&p, LOOPBACK);
        let jar = Jar::default();
        let page =
            html(&to_consent(&p, &jar, &authorize_url(&client_id, CALLBACK, &[]), "victim@example.com"));
        let handle = consent_field(&page, "request");
        let csrf = consent_field(&page, "csrf");
        // Missing, wrong and other-purpose CSRF tokens.
        for bad in ["", "x", &csrf[..csrf.len() - 1]] {
            let r = jar.post(
                &p,
                "/v1/oauth/consent",
                &[("request", &handle), ("csrf", bad), ("decision", "approve"), ("access", "act")],
            );
            assert_eq!((r.status, data_error(&r).as_deref()), (403, Some("csrf")), "{bad}");
        }
        // A cross-site POST.
        let body = format!("request={handle}&csrf={csrf}&decision=approve&access=act");
        let cookie = jar.header();
        let r = send(
            &p,
            request(
                "POST",
                "/v1/oauth/consent",
                &[
                    ("cookie", &cookie),
                    ("content-type", "application/x-www-form-urlencoded"),
                    ("origin", "https://evil.example"),
                ],
                body.as_bytes(),
            ),
        );
        assert_eq!((r.status, data_error(&r).as_deref()), (403, Some("csrf")));
        // Another browser (its own session, its own cookie) cannot see or decide this request.
        let other = Jar::default();
        let r = other.get(&p, &format!("/v1/oauth/consent?request={handle}"));
        assert_eq!((r.status, data_error(&r).as_deref()), (400, Some("request_unknown")));
        assert_eq!(p.state_entries("flow:"), 1, "refusals consumed nothing");
        // The request still works for its own browser, once.
        let r = jar.post(
            &p,
            "/v1/oauth/consent",
            &[("request", &handle), ("csrf", &csrf), ("decision", "approve"), ("access", "act")],
        );
        assert_eq!(r.status, 303);
        // An expired handle.
        let page =
            html(&to_consent(&p, &jar, &authorize_url(&client_id, CALLBACK, &[]), "victim@example.com"));
        p.advance(crate::oauth::PENDING_TTL_MS + 1);
        let r = jar.get(&p, &format!("/v1/oauth/consent?request={}", consent_field(&page, "request")));
        assert_eq!((r.status, data_error(&r).as_deref()), (400, Some("request_unknown")));
        let r = jar.post(
            &p,
            "/v1/oauth/consent",
            &[
                ("request", &consent_field(&page, "request")),
                ("csrf", &consent_field(&page, "csrf")),
                ("decision", "approve"),
                ("access", "act"),
            ],
        );
        assert_eq!((r.status, data_error(&r).as_deref()), (400, Some("request_unknown")));
    }

    #[test]
    fn signing_out_and_sign_in_csrf() {
        let p = TestPlatform::new();
        let client_id = register_client(&p, LOOPBACK);
        let jar = Jar::default();
        let r = jar.get(&p, &authorize_url(&client_id, CALLBACK, &[]));
        let consent = location(&r);
        let signin = html(&jar.get(&p, &consent));
        let forged = jar.post(
            &p,
            "/app/signin/dev",
            &[("email", "a@example.com"), ("return_to", &consent), ("csrf", "forged")],
        );
        assert_eq!((forged.status, data_error(&forged).as_deref()), (403, Some("csrf")));
        assert!(jar.value("__Host-vs_session").is_none(), "no session from a forged form");
        let bad_email = jar.post(
            &p,
            "/app/signin/dev",
            &[("email", "not an email"), ("return_to", &consent), ("csrf", &hidden(&signin, "csrf"))],
        );
        assert_eq!(bad_email.status, 400);
        assert!(jar.value("__Host-vs_session").is_none());
        let page = html(&to_consent(&p, &jar, &authorize_url(&client_id, CALLBACK, &[]), "a@example.com"));
        let signout_csrf = {
            let start = page.find("action=\"/app/signout\"").unwrap();
            hidden(&page[start..], "csrf")
        };
        let r = jar.post(&p, "/app/signout", &[("csrf", "wrong"), ("return_to", "/app/account")]);
        assert_eq!(r.status, 403);
        let r = jar.post(&p, "/app/signout", &[("csrf", &signout_csrf), ("return_to", "/app/account")]);
        assert_eq!((r.status, location(&r).as_str()), (303, "/app/signin?return_to=%2Fapp%2Faccount"));
        assert!(jar.value("__Host-vs_session").is_none());
        let r = jar.post(
            &p,
            "/v1/oauth/consent",
            &[
                ("request", &consent_field(&page, "request")),
                ("csrf", &consent_field(&page, "csrf")),
                ("decision", "approve"),
                ("access", "act"),
            ],
        );
        assert_eq!((r.status, data_error(&r).as_deref()), (403, Some("signed_out")));
    }

    #[test]
    fn the_development_sign_in_exists_only_on_loopback() {
        let vars: std::collections::HashMap<&str, &str> = [
            ("PUBLIC_URL", "https://api.vibesell.it"),
            ("JWT_SIGNING_KEYS", "k1:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAE"),
        ]
        .into_iter()
        .collect();
        let config = crate::config::Config::from_lookup(|k| vars.get(k).map(|v| (*v).to_owned())).unwrap();
        let p = TestPlatform::with_config(config);
        let jar = Jar::default();
        let page = html(&jar.get(&p, "/app/signin"));
        assert!(!page.contains("dev-signin"), "no development form off loopback");
        let r = jar.post(&p, "/app/signin/dev", &[("email", "a@example.com"), ("csrf", "x")]);
        assert_eq!(r.status, 404);
    }
}

/// Every page form POST refused by `session::page_form` (cross-site, not a form, too large)
/// answers the refusal page and is logged as refused, whichever page it was for.
#[test]
fn page_form_refusals_are_logged_as_refused() {
    let p = TestPlatform::new();
    let big = vec![b'a'; 20 * 1024];
    for path in ["/v1/oauth/consent", "/app/account/revoke", "/app/signin/dev", "/app/signout"] {
        for (headers, body, status, code) in [
            (
                vec![
                    ("content-type", "application/x-www-form-urlencoded"),
                    ("origin", "https://evil.example"),
                ],
                &b"a=1"[..],
                403,
                "csrf",
            ),
            (vec![("content-type", "application/json")], &b"{}"[..], 400, "invalid_request"),
            (vec![("content-type", "application/x-www-form-urlencoded")], &big[..], 400, "invalid_request"),
        ] {
            let (r, trace) = p.send(&request("POST", path, &headers, body));
            assert_eq!((r.status, data_error(&r).as_deref()), (status, Some(code)), "{path}");
            assert_eq!(trace.outcome, "refused", "{path} {code}");
        }
    }
}

mod token_endpoint {
    use super::*;

    fn tokens_for(p: &TestPlatform, client_id: &str, email: &str) -> Value {
        let code = authorize_code(p, client_id, CALLBACK, email, "act");
        let r = exchange(p, client_id, &code, CALLBACK);
        assert_eq!(r.status, 200, "{}", html(&r));
        json_of(&r)
    }

    #[test]
    fn a_replayed_code_is_refused_and_revokes_what_it_issued() {
        let p = TestPlatform::new();
        let client_id = register_client(&p, LOOPBACK);
        let code = authorize_code(&p, &client_id, CALLBACK, "u@example.com", "act");
        let first = json_of(&exchange(&p, &client_id, &code, CALLBACK));
        let access = first["access_token"].as_str().unwrap();
        assert_eq!(call_tool_status(&p, access), 200);
        // Without its verifier the code proves nothing: refused, and nothing is revoked.
        let base = [
            ("grant_type", "authorization_code"),
            ("client_id", client_id.as_str()),
            ("code", code.as_str()),
            ("redirect_uri", CALLBACK),
            ("code_verifier", "x".repeat(43).leak()),
        ];
        let guessed = token_request(&p, &base, &[]);
        assert_error(&guessed, 400, "invalid_grant");
        assert_eq!(json_of(&guessed)["error_description"], "The authorization code was already used.");
        assert_eq!(call_tool_status(&p, access), 200, "a replay without the verifier revokes nothing");
        let replay = exchange(&p, &client_id, &code, CALLBACK);
        assert_error(&replay, 400, "invalid_grant");
        assert!(json_of(&replay)["error_description"].as_str().unwrap().contains("already used"));
        assert_eq!(call_tool_status(&p, access), 401, "the first redemption's access token stops working");
        assert_error(
            &refresh(&p, &client_id, first["refresh_token"].as_str().unwrap()),
            400,
            "invalid_grant",
        );
    }

    #[test]
    fn a_code_replayed_after_its_lifetime_revokes_nothing() {
        let p = TestPlatform::new();
        let client_id = register_client(&p, LOOPBACK);
        let code = authorize_code(&p, &client_id, CALLBACK, "u@example.com", "act");
        let first = json_of(&exchange(&p, &client_id, &code, CALLBACK));
        p.advance(crate::oauth::CODE_TTL_MS + 1);
        assert_error(&exchange(&p, &client_id, &code, CALLBACK), 400, "invalid_grant");
        let access = first["access_token"].as_str().unwrap();
        assert_eq!(call_tool_status(&p, access), 200, "still connected");
        let next = refresh(&p, &client_id, first["refresh_token"].as_str().unwrap());
        assert_eq!(next.status, 200, "{}", html(&next));
    }

    #[test]
    fn pkce_must_match_and_a_wrong_verifier_burns_the_code() {
        let p = TestPlatform::new();
        let client_id = register_client(&p, LOOPBACK);
        let code = authorize_code(&p, &client_id, CALLBACK, "u@example.com", "act");
        let base = [
            ("grant_type", "authorization_code"),
            ("client_id", client_id.as_str()),
            ("code", code.as_str()),
            ("redirect_uri", CALLBACK),
        ];
        let missing = token_request(&p, &base, &[]);
        assert_error(&missing, 400, "invalid_request");
        let mut wrong = base.to_vec();
        wrong.push(("code_verifier", "x".repeat(43).leak()));
        assert_error(&token_request(&p, &wrong, &[]), 400, "invalid_grant");
        // The code cannot be tried again, even with the right verifier.
        assert_error(&exchange(&p, &client_id, &code, CALLBACK), 400, "invalid_grant");
        // The plain method's "verifier" (the challenge itself) is no verifier either.
        let code = authorize_code(&p, &client_id, CALLBACK, "u@example.com", "act");
        let plain = [
            ("grant_type", "authorization_code"),
            ("client_id", client_id.as_str()),
            ("code", code.as_str()),
            ("redirect_uri", CALLBACK),
            ("code_verifier", CHALLENGE),
        ];
        assert_error(&token_request(&p, &plain, &[]), 400, "invalid_grant");
    }

    #[test]
    fn the_redirect_uri_and_resource_must_match() {
        let p = TestPlatform::new();
        let client_id = register_client(&p, LOOPBACK);
        let code = authorize_code(&p, &client_id, CALLBACK, "u@example.com", "act");
        let with = |resource: &str, redirect: &str| {
            token_request(
                &p,
                &[
                    ("grant_type", "authorization_code"),
                    ("client_id", &client_id),
                    ("code", &code),
                    ("code_verifier", VERIFIER),
                    ("redirect_uri", redirect),
                    ("resource", resource),
                ],
                &[],
            )
        };
        assert_error(&with("http://127.0.0.1:8787/other", CALLBACK), 400, "invalid_target");
        // A wrong resource is refused before the code is touched: it still works.
        let ok = with("http://127.0.0.1:8787/v1/mcp/", CALLBACK);
        assert_eq!(ok.status, 200, "{}", html(&ok));
        let code = authorize_code(&p, &client_id, CALLBACK, "u@example.com", "act");
        let r = token_request(
            &p,
            &[
                ("grant_type", "authorization_code"),
                ("client_id", &client_id),
                ("code", &code),
                ("code_verifier", VERIFIER),
                ("redirect_uri", "http://127.0.0.1:6666/callback"),
            ],
            &[],
        );
        assert_error(&r, 400, "invalid_grant");
        assert_error(&exchange(&p, &client_id, &code, CALLBACK), 400, "invalid_grant");
        let code = authorize_code(&p, &client_id, CALLBACK, "u@example.com", "act");
        let r = token_request(
            &p,
            &[
                ("grant_type", "authorization_code"),
                ("client_id", &client_id),
                ("code", &code),
                ("code_verifier", VERIFIER),
            ],
            &[],
        );
        assert_error(&r, 400, "invalid_grant");
    }

    #[test]
    fn codes_and_refresh_tokens_are_bound_to_their_client() {
        let p = TestPlatform::new();
        let client_a = register_client(&p, LOOPBACK);
        let client_b = register_client(&p, "http://127.0.0.1/other-callback");
        let code = authorize_code(&p, &client_a, CALLBACK, "u@example.com", "act");
        assert_error(&exchange(&p, &client_b, &code, CALLBACK), 400, "invalid_grant");
        let tokens = json_of(&exchange(&p, &client_a, &code, CALLBACK));
        assert!(tokens["access_token"].is_string(), "another client's attempt did not burn the code");
        let rt = tokens["refresh_token"].as_str().unwrap();
        assert_error(&refresh(&p, &client_b, rt), 400, "invalid_grant");
        assert_eq!(refresh(&p, &client_a, rt).status, 200, "nor revoke the grant");
    }

    #[test]
    fn codes_expire() {
        let p = TestPlatform::new();
        let client_id = register_client(&p, LOOPBACK);
        let code = authorize_code(&p, &client_id, CALLBACK, "u@example.com", "act");
        p.advance(crate::oauth::CODE_TTL_MS + 1);
        assert_error(&exchange(&p, &client_id, &code, CALLBACK), 400, "invalid_grant");
    }

    #[test]
    fn refresh_rotates_with_an_idempotent_retry_and_reuse_revokes_the_grant() {
        let p = TestPlatform::new();
        let client_id = register_client(&p, LOOPBACK);
        let first = tokens_for(&p, &client_id, "u@example.com");
        let rt1 = first["refresh_token"].as_str().unwrap().to_owned();
        p.advance(10_000);
        let second = json_of(&refresh(&p, &client_id, &rt1));
        let rt2 = second["refresh_token"].as_str().unwrap().to_owned();
        assert_ne!(rt2, rt1);
        assert_ne!(second["access_token"], first["access_token"]);
        // The client lost the answer and retries within the window: the very same pair.
        p.advance(5_000);
        let retry = refresh(&p, &client_id, &rt1);
        assert_eq!(retry.status, 200);
        let retry = json_of(&retry);
        assert_eq!(retry["refresh_token"], second["refresh_token"]);
        assert_eq!(retry["access_token"], second["access_token"]);
        assert_eq!(retry["expires_in"], 3595);
        // Normal use goes on.
        let third = json_of(&refresh(&p, &client_id, &rt2));
        let rt3 = third["refresh_token"].as_str().unwrap().to_owned();
        let access3 = third["access_token"].as_str().unwrap().to_owned();
        assert_eq!(call_tool_status(&p, &access3), 200);
        // The already-used rt1 again (its successor has been used): theft; the grant ends.
        assert_error(&refresh(&p, &client_id, &rt1), 400, "invalid_grant");
        assert_error(&refresh(&p, &client_id, &rt3), 400, "invalid_grant");
        assert_eq!(call_tool_status(&p, &access3), 401);
    }

    #[test]
    fn reuse_after_the_window_revokes_the_grant() {
        let p = TestPlatform::new();
        let client_id = register_client(&p, LOOPBACK);
        let first = tokens_for(&p, &client_id, "u@example.com");
        let rt1 = first["refresh_token"].as_str().unwrap().to_owned();
        let second = json_of(&refresh(&p, &client_id, &rt1));
        p.advance(crate::oauth::REFRESH_RETRY_WINDOW_MS + 1);
        assert_error(&refresh(&p, &client_id, &rt1), 400, "invalid_grant");
        assert_error(
            &refresh(&p, &client_id, second["refresh_token"].as_str().unwrap()),
            400,
            "invalid_grant",
        );
        assert_eq!(call_tool_status(&p, second["access_token"].as_str().unwrap()), 401);
    }

    #[test]
    fn refresh_scope_can_only_narrow() {
        let p = TestPlatform::new();
        let client_id = register_client(&p, LOOPBACK);
        let code = authorize_code(&p, &client_id, CALLBACK, "u@example.com", "read");
        let tokens = json_of(&exchange(&p, &client_id, &code, CALLBACK));
        let rt = tokens["refresh_token"].as_str().unwrap();
        let escalate = refresh_for_scope(&p, &client_id, rt, "mcp mcp:act");
        assert_error(&escalate, 400, "invalid_scope");
        let unknown = refresh_for_scope(&p, &client_id, rt, "admin");
        assert_error(&unknown, 400, "invalid_scope");
        let ok = refresh(&p, &client_id, rt);
        assert_eq!(
            (ok.status, json_of(&ok)["scope"].as_str()),
            (200, Some("mcp")),
            "the refused escalation left the token usable"
        );
        let full = tokens_for(&p, &client_id, "v@example.com");
        let narrowed = refresh_for_scope(&p, &client_id, full["refresh_token"].as_str().unwrap(), "mcp");
        assert_eq!(json_of(&narrowed)["scope"], "mcp");
        let again = refresh(&p, &client_id, json_of(&narrowed)["refresh_token"].as_str().unwrap());
        assert_eq!(json_of(&again)["scope"], "mcp mcp:act", "narrowing one access token keeps the grant");
        // The first request's scope sent again, `offline_access` included, as some clients do.
        let resent = refresh_for_scope(
            &p,
            &client_id,
            json_of(&again)["refresh_token"].as_str().unwrap(),
            "mcp mcp:act offline_access",
        );
        assert_eq!((resent.status, json_of(&resent)["scope"].as_str()), (200, Some("mcp mcp:act")));
        let alone = refresh_for_scope(
            &p,
            &client_id,
            json_of(&resent)["refresh_token"].as_str().unwrap(),
            "offline_access",
        );
        assert_eq!((alone.status, json_of(&alone)["scope"].as_str()), (200, Some("mcp mcp:act")));
    }

    #[test]
    fn malformed_requests_get_rfc_6749_errors() {
        let p = TestPlatform::new();
        let client_id = register_client(&p, LOOPBACK);
        let unknown = token_request(
            &p,
            &[
                ("grant_type", "authorization_code"),
                ("client_id", "vsc_00000000000000000000000000000000"),
                ("code", "x"),
                ("code_verifier", VERIFIER),
            ],
            &[],
        );
        assert_error(&unknown, 401, "invalid_client");
        assert!(unknown.header("www-authenticate").unwrap().starts_with("Basic"));
        // The lookup of the unknown id (KV, then its `client:` object) leaves no object behind.
        assert_eq!(p.state_objects("client:vsc_0000"), 0, "an unknown client id leaves no OAuthState object");
        assert_error(
            &token_request(&p, &[("grant_type", "authorization_code"), ("code", "x")], &[]),
            401,
            "invalid_client",
        );
        assert_error(
            &token_request(&p, &[("grant_type", "password"), ("client_id", &client_id)], &[]),
            400,
            "unsupported_grant_type",
        );
        assert_error(
            &token_request(&p, &[("grant_type", "client_credentials"), ("client_id", &client_id)], &[]),
            400,
            "unsupported_grant_type",
        );
        assert_error(&token_request(&p, &[("client_id", &client_id)], &[]), 400, "invalid_request");
        assert_error(
            &token_request(
                &p,
                &[
                    ("grant_type", "authorization_code"),
                    ("grant_type", "refresh_token"),
                    ("client_id", &client_id),
                ],
                &[],
            ),
            400,
            "invalid_request",
        );
        assert_error(
            &token_request(
                &p,
                &[
                    ("grant_type", "refresh_token"),
                    ("client_id", &client_id),
                    ("refresh_token", "vsrt_garbage"),
                ],
                &[],
            ),
            400,
            "invalid_grant",
        );
        let forged_route = format!("vsrt_{}_{}", "a".repeat(64), "b".repeat(64));
        assert_error(
            &token_request(
                &p,
                &[
                    ("grant_type", "refresh_token"),
                    ("client_id", &client_id),
                    ("refresh_token", &forged_route),
                ],
                &[],
            ),
            400,
            "invalid_grant",
        );
        let json_body = send(
            &p,
            request(
                "POST",
                "/v1/oauth/token",
                &[("content-type", "application/json")],
                b"{\"grant_type\":\"refresh_token\"}",
            ),
        );
        assert_error(&json_body, 400, "invalid_request");
        let big = format!("grant_type=refresh_token&client_id={client_id}&pad={}", "x".repeat(20_000));
        let oversized = send(
            &p,
            request(
                "POST",
                "/v1/oauth/token",
                &[("content-type", "application/x-www-form-urlencoded")],
                big.as_bytes(),
            ),
        );
        assert_error(&oversized, 400, "invalid_request");
        let pre =
            send(&p, request("OPTIONS", "/v1/oauth/token", &[("origin", "http://localhost:6274")], b""));
        assert_eq!(pre.status, 204);
        assert_eq!(send(&p, request("GET", "/v1/oauth/token", &[], b"")).status, 405);
    }

    #[test]
    fn confidential_clients_authenticate_by_their_registered_method() {
        let p = TestPlatform::new();
        let r = register(&p, &json!({"redirect_uris": [LOOPBACK], "client_name": "Conf"}));
        let reg = json_of(&r);
        let id = reg["client_id"].as_str().unwrap().to_owned();
        let secret = reg["client_secret"].as_str().unwrap().to_owned();
        let code = authorize_code(&p, &id, CALLBACK, "u@example.com", "act");
        use base64::Engine as _;
        let basic = |id: &str, secret: &str| {
            format!("Basic {}", base64::engine::general_purpose::STANDARD.encode(format!("{id}:{secret}")))
        };
        let form = [
            ("grant_type", "authorization_code"),
            ("code", code.as_str()),
            ("code_verifier", VERIFIER),
            ("redirect_uri", CALLBACK),
        ];
        let wrong = token_request(&p, &form, &[("authorization", &basic(&id, "wrong"))]);
        assert_error(&wrong, 401, "invalid_client");
        let mut as_post = form.to_vec();
        as_post.extend([("client_id", id.as_str()), ("client_secret", secret.as_str())]);
        assert_error(&token_request(&p, &as_post, &[]), 401, "invalid_client");
        let mut public = form.to_vec();
        public.push(("client_id", id.as_str()));
        assert_error(&token_request(&p, &public, &[]), 401, "invalid_client");
        let mut both = form.to_vec();
        both.push(("client_secret", secret.as_str()));
        assert_error(
            &token_request(&p, &both, &[("authorization", &basic(&id, &secret))]),
            400,
            "invalid_request",
        );
        assert_error(&token_request(&p, &form, &[("authorization", "Basic !!!")]), 401, "invalid_client");
        let ok = token_request(&p, &form, &[("authorization", &basic(&id, &secret))]);
        assert_eq!(ok.status, 200, "{}", html(&ok));
    }

    #[test]
    fn the_claude_app_gets_app_tokens_and_decide_approval() {
        let p = TestPlatform::new();
        let claude = "https://claude.ai/api/mcp/auth_callback";
        let client_id = register_client(&p, claude);
        let jar = Jar::default();
        let page = to_consent(&p, &jar, &authorize_url(&client_id, claude, &[]), "c@example.com");
        assert!(!html(&page).contains("runs on your computer"));
        assert!(
            page.header("content-security-policy").unwrap().contains("form-action 'self' https://claude.ai;")
        );
        let code = param(&location(&approve(&p, &jar, &page, "act")), "code").unwrap();
        let tokens = json_of(&exchange(&p, &client_id, &code, claude));
        let access = tokens["access_token"].as_str().unwrap();
        let (principal, _) =
            crate::auth::jwt::verify(&crate::testing::test_config(), access, p.now_ms.get()).unwrap();
        assert!(principal.app);
        assert!(tool_names(&p, access).contains(&"decide_approval".to_owned()));
        let other = tokens_for(&p, &register_client(&p, LOOPBACK), "c@example.com");
        assert!(
            !tool_names(&p, other["access_token"].as_str().unwrap()).contains(&"decide_approval".to_owned())
        );
    }

    #[test]
    fn token_requests_are_rate_limited_per_grant() {
        let mut config = crate::testing::test_config();
        config.rate_limits.token = crate::config::Limit { capacity: 2, window_secs: 60 };
        let p = TestPlatform::with_config(config);
        let client_id = register_client(&p, LOOPBACK);
        let first = tokens_for(&p, &client_id, "u@example.com");
        let rt = first["refresh_token"].as_str().unwrap();
        let second = json_of(&refresh(&p, &client_id, rt));
        let limited = refresh(&p, &client_id, second["refresh_token"].as_str().unwrap());
        assert_error(&limited, 429, "too_many_requests");
        assert_eq!(limited.header("retry-after"), Some("30"));
        let other_user = tokens_for(&p, &client_id, "someone-else@example.com");
        assert!(other_user["access_token"].is_string(), "another user's grant has its own budget");
        p.advance(30_000);
        assert_eq!(
            refresh(&p, &client_id, second["refresh_token"].as_str().unwrap()).status,
            200,
            "the limited request rotated nothing"
        );
    }

    #[test]
    fn token_requests_are_rate_limited_per_address_before_client_authentication() {
        let mut config = crate::testing::test_config();
        config.rate_limits.token_ip = crate::config::Limit { capacity: 3, window_secs: 60 };
        let p = TestPlatform::with_config(config);
        let client_id = register_client(&p, LOOPBACK);
        let code = authorize_code(&p, &client_id, CALLBACK, "u@example.com", "act");
        let unknown = |route: &str| unknown_refresh(&p, route);
        // Unknown clients with ever-new grants: each refused, and each counted.
        for route in ["a", "c", "d"] {
            assert_error(&unknown(&route.repeat(64)), 401, "invalid_client");
        }
        let limited = unknown(&"e".repeat(64));
        assert_error(&limited, 429, "too_many_requests");
        assert_eq!(limited.header("retry-after"), Some("20"));
        assert_error(&exchange(&p, &client_id, &code, CALLBACK), 429, "too_many_requests");
        // Another address has its own budget, and the refused exchange did not burn the code.
        let elsewhere = exchange_with(&p, &client_id, &code, CALLBACK, &[("cf-connecting-ip", "192.0.2.99")]);
        assert_eq!(elsewhere.status, 200, "{}", html(&elsewhere));
    }

    /// A refresh with a well-formed token of grant route `route` from a client that does not
    /// exist: refused at client authentication, after the rate limits are spent.
    fn unknown_refresh(p: &TestPlatform, route: &str) -> HttpResponse {
        token_request(
            p,
            &[
                ("grant_type", "refresh_token"),
                ("client_id", "vsc_00000000000000000000000000000000"),
                ("refresh_token", &format!("vsrt_{route}_{}", "b".repeat(64))),
            ],
            &[],
        )
    }

    /// The buckets stored in the rate limiter's object of the test address, by name.
    fn buckets_at(p: &TestPlatform, address: &str) -> Vec<String> {
        let db = p.state_db(&format!("rl:{address}"));
        let db: &dyn crate::store::Db = &*db;
        let rows: Vec<Value> = db.rows("SELECT name FROM buckets ORDER BY name", vec![]).unwrap();
        rows.iter().filter_map(|r| r["name"].as_str().map(str::to_owned)).collect()
    }

    #[test]
    fn a_token_request_calls_the_rate_limiter_once_for_both_budgets() {
        let p = TestPlatform::new();
        let client_id = register_client(&p, LOOPBACK);
        let code = authorize_code(&p, &client_id, CALLBACK, "u@example.com", "act");
        let route = crate::oauth::tokens::parse(crate::oauth::tokens::Kind::Code, &code).unwrap().route;
        let limiter = "rl:192.0.2.20";
        assert_eq!(p.state_calls(limiter), 0);
        let tokens = json_of(&exchange(&p, &client_id, &code, CALLBACK));
        assert_eq!(p.state_calls(limiter), 1, "the code exchange");
        assert_eq!(buckets_at(&p, "192.0.2.20"), [format!("token:{route}"), "token_ip".to_owned()]);
        let r = refresh(&p, &client_id, tokens["refresh_token"].as_str().unwrap());
        assert_eq!(r.status, 200, "{}", html(&r));
        assert_eq!(p.state_calls(limiter), 2, "the refresh");
    }

    #[test]
    fn a_request_refused_by_its_grant_budget_leaves_the_address_budget_alone() {
        let mut config = crate::testing::test_config();
        config.rate_limits.token = crate::config::Limit { capacity: 1, window_secs: 60 };
        config.rate_limits.token_ip = crate::config::Limit { capacity: 3, window_secs: 60 };
        let p = TestPlatform::with_config(config);
        let client_id = register_client(&p, LOOPBACK);
        let tokens = tokens_for(&p, &client_id, "u@example.com");
        let rt = tokens["refresh_token"].as_str().unwrap();
        // The grant's budget is spent (the exchange), the address has two requests left.
        for _ in 0..5 {
            let limited = refresh(&p, &client_id, rt);
            assert_error(&limited, 429, "too_many_requests");
            assert_eq!(limited.header("retry-after"), Some("60"));
        }
        let unknown = |route: &str| unknown_refresh(&p, route);
        assert_error(&unknown(&"a".repeat(64)), 401, "invalid_client");
        assert_error(&unknown(&"c".repeat(64)), 401, "invalid_client");
        let limited = unknown(&"d".repeat(64));
        assert_error(&limited, 429, "too_many_requests");
        assert_eq!(limited.header("retry-after"), Some("20"), "the address's budget, now spent");
    }

    #[test]
    fn a_grant_budget_spent_before_client_authentication_counts_only_that_address() {
        let mut config = crate::testing::test_config();
        config.rate_limits.token = crate::config::Limit { capacity: 2, window_secs: 60 };
        let p = TestPlatform::with_config(config);
        let client_id = register_client(&p, LOOPBACK);
        let code = authorize_code(&p, &client_id, CALLBACK, "u@example.com", "act");
        // Someone elsewhere replays the code with a made-up client until refused.
        let elsewhere = [("cf-connecting-ip", "198.51.100.9")];
        let stolen = [
            ("grant_type", "authorization_code"),
            ("client_id", "vsc_00000000000000000000000000000000"),
            ("code", code.as_str()),
            ("code_verifier", VERIFIER),
        ];
        for _ in 0..2 {
            assert_error(&token_request(&p, &stolen, &elsewhere), 401, "invalid_client");
        }
        assert_error(&token_request(&p, &stolen, &elsewhere), 429, "too_many_requests");
        // The owner's client, from its own address, still has the grant's whole budget.
        let tokens = json_of(&exchange(&p, &client_id, &code, CALLBACK));
        let rt = tokens["refresh_token"].as_str().unwrap();
        assert_eq!(refresh(&p, &client_id, rt).status, 200);
    }

    #[test]
    fn a_refresh_for_another_resource_is_an_invalid_grant() {
        let p = TestPlatform::new();
        let client_id = register_client(&p, LOOPBACK);
        let tokens = tokens_for(&p, &client_id, "u@example.com");
        let rt = tokens["refresh_token"].as_str().unwrap();
        let moved = token_request(
            &p,
            &[
                ("grant_type", "refresh_token"),
                ("client_id", &client_id),
                ("refresh_token", rt),
                ("resource", "https://old.example/v1/mcp"),
            ],
            &[],
        );
        // MCP SDKs re-authorize on invalid_grant but give up on invalid_target.
        assert_error(&moved, 400, "invalid_grant");
        assert_eq!(refresh(&p, &client_id, rt).status, 200, "the refused refresh rotated nothing");
    }

    #[test]
    fn a_refresh_asking_for_act_alone_also_gets_read() {
        let p = TestPlatform::new();
        let client_id = register_client(&p, LOOPBACK);
        let tokens = tokens_for(&p, &client_id, "u@example.com");
        let r = refresh_for_scope(&p, &client_id, tokens["refresh_token"].as_str().unwrap(), "mcp:act");
        assert_eq!((r.status, json_of(&r)["scope"].as_str()), (200, Some("mcp mcp:act")), "{}", html(&r));
        let access = json_of(&r)["access_token"].as_str().unwrap().to_owned();
        assert!(tool_names(&p, &access).contains(&"get_workspace_context".to_owned()));
    }
}

fn revoke_request(p: &TestPlatform, pairs: &[(&str, &str)]) -> HttpResponse {
    let body = url::form_urlencoded::Serializer::new(String::new()).extend_pairs(pairs).finish();
    send(
        p,
        request(
            "POST",
            "/v1/oauth/revoke",
            &[("content-type", "application/x-www-form-urlencoded")],
            body.as_bytes(),
        ),
    )
}

mod revocation {
    use super::*;

    fn connected(p: &TestPlatform, client_id: &str, email: &str) -> Value {
        let code = authorize_code(p, client_id, CALLBACK, email, "act");
        json_of(&exchange(p, client_id, &code, CALLBACK))
    }

    #[test]
    fn revoking_a_refresh_token_ends_the_grant() {
        let p = TestPlatform::new();
        let client_id = register_client(&p, LOOPBACK);
        let tokens = connected(&p, &client_id, "u@example.com");
        let access = tokens["access_token"].as_str().unwrap();
        let rt = tokens["refresh_token"].as_str().unwrap();
        // A call first, so that the object has read the grant before it is revoked.
        assert_eq!(call_tool_status(&p, access), 200);
        let r = revoke_request(
            &p,
            &[("client_id", &client_id), ("token", rt), ("token_type_hint", "refresh_token")],
        );
        assert_eq!(r.status, 200);
        assert!(r.body.is_empty());
        assert_error(&refresh(&p, &client_id, rt), 400, "invalid_grant");
        assert_eq!(call_tool_status(&p, access), 401, "its access token stops at the next tool call");
        assert_eq!(
            revoke_request(&p, &[("client_id", &client_id), ("token", rt)]).status,
            200,
            "again: still 200"
        );
    }

    #[test]
    fn revoking_an_access_token_ends_its_grant() {
        let p = TestPlatform::new();
        let client_id = register_client(&p, LOOPBACK);
        let tokens = connected(&p, &client_id, "u@example.com");
        let access = tokens["access_token"].as_str().unwrap();
        assert_eq!(call_tool_status(&p, access), 200);
        assert_eq!(
            revoke_request(
                &p,
                &[("client_id", &client_id), ("token", access), ("token_type_hint", "access_token")]
            )
            .status,
            200
        );
        assert_eq!(call_tool_status(&p, access), 401);
        assert_error(
            &refresh(&p, &client_id, tokens["refresh_token"].as_str().unwrap()),
            400,
            "invalid_grant",
        );
    }

    #[test]
    fn nobody_revokes_another_clients_tokens_and_unknown_tokens_are_fine() {
        let p = TestPlatform::new();
        let client_id = register_client(&p, LOOPBACK);
        let other = register_client(&p, "http://127.0.0.1/other");
        let tokens = connected(&p, &client_id, "u@example.com");
        for token in [tokens["refresh_token"].as_str().unwrap(), tokens["access_token"].as_str().unwrap()] {
            assert_eq!(revoke_request(&p, &[("client_id", &other), ("token", token)]).status, 200);
        }
        assert_eq!(
            call_tool_status(&p, tokens["access_token"].as_str().unwrap()),
            200,
            "nothing was revoked"
        );
        assert_eq!(revoke_request(&p, &[("client_id", &client_id), ("token", "garbage")]).status, 200);
        assert_eq!(
            revoke_request(
                &p,
                &[
                    ("client_id", &client_id),
                    ("token", &format!("vsrt_{}_{}", "a".repeat(64), "b".repeat(64)))
                ]
            )
            .status,
            200
        );
        assert_error(&revoke_request(&p, &[("client_id", &client_id)]), 400, "invalid_request");
        assert_error(
            &revoke_request(&p, &[("client_id", "vsc_00000000000000000000000000000000"), ("token", "x")]),
            401,
            "invalid_client",
        );
        assert_error(&revoke_request(&p, &[("token", "x")]), 401, "invalid_client");
    }

    #[test]
    fn revocations_are_rate_limited_per_address_before_client_authentication() {
        let mut config = crate::testing::test_config();
        config.rate_limits.revoke = crate::config::Limit { capacity: 2, window_secs: 60 };
        let p = TestPlatform::with_config(config);
        let client_id = register_client(&p, LOOPBACK);
        let bad = [("client_id", "vsc_00000000000000000000000000000000"), ("token", "x")];
        for _ in 0..2 {
            assert_error(&revoke_request(&p, &bad), 401, "invalid_client");
        }
        let limited = revoke_request(&p, &bad);
        assert_error(&limited, 429, "too_many_requests");
        assert_eq!(limited.header("retry-after"), Some("30"));
        assert_error(
            &revoke_request(&p, &[("client_id", &client_id), ("token", "x")]),
            429,
            "too_many_requests",
        );
    }
}

mod account_page {
    use super::*;

    #[test]
    fn lists_connected_apps_and_disconnects_them() {
        let p = TestPlatform::new();
        let claude = register_client(&p, "https://claude.ai/api/mcp/auth_callback");
        let cli = register_client(&p, LOOPBACK);
        let jar = Jar::default();
        assert_eq!(location(&jar.get(&p, "/app/account")), "/app/signin?return_to=%2Fapp%2Faccount");
        let page = to_consent(
            &p,
            &jar,
            &authorize_url(&claude, "https://claude.ai/api/mcp/auth_callback", &[]),
            "me@example.com",
        );
        let code = param(&location(&approve(&p, &jar, &page, "act")), "code").unwrap();
        let claude_tokens = json_of(&exchange(&p, &claude, &code, "https://claude.ai/api/mcp/auth_callback"));
        let page = to_consent(&p, &jar, &authorize_url(&cli, CALLBACK, &[]), "me@example.com");
        let code = param(&location(&approve(&p, &jar, &page, "read")), "code").unwrap();
        let cli_tokens = json_of(&exchange(&p, &cli, &code, CALLBACK));
        // Someone else's grant, to check it never shows up nor can be revoked from here.
        let other_code = authorize_code(&p, &cli, CALLBACK, "other@example.com", "act");
        let other_tokens = json_of(&exchange(&p, &cli, &other_code, CALLBACK));

        let account = jar.get(&p, "/app/account");
        assert_eq!(account.status, 200);
        let body = html(&account);
        assert_eq!(body.matches("data-grant=").count(), 2, "{body}");
        assert!(body.contains("claude.ai") && body.contains("Read and act") && body.contains("Read only"));
        assert!(account.header("content-security-policy").unwrap().contains("frame-ancestors 'none'"));
        let claude_row = &body[body.find("claude.ai").unwrap()..];
        let grant_id = {
            let start = body[..body.find("claude.ai").unwrap()].rfind("data-grant=\"").unwrap() + 12;
            body[start..].split('"').next().unwrap().to_owned()
        };
        let csrf = hidden(claude_row, "csrf");
        let forged = jar.post(&p, "/app/account/revoke", &[("grant_id", &grant_id), ("csrf", "forged")]);
        assert_eq!(forged.status, 403);
        let other_grant = crate::auth::jwt::verify(
            &crate::testing::test_config(),
            other_tokens["access_token"].as_str().unwrap(),
            p.now_ms.get(),
        )
        .unwrap()
        .1
        .gid
        .unwrap();
        let not_mine = jar.post(&p, "/app/account/revoke", &[("grant_id", &other_grant), ("csrf", &csrf)]);
        assert_eq!(not_mine.status, 403, "a CSRF token is for one grant");
        let r = jar.post(&p, "/app/account/revoke", &[("grant_id", &grant_id), ("csrf", &csrf)]);
        assert_eq!((r.status, location(&r).as_str()), (303, "/app/account"));
        let body = html(&jar.get(&p, "/app/account"));
        assert_eq!(body.matches("data-grant=").count(), 1);
        assert_eq!(call_tool_status(&p, claude_tokens["access_token"].as_str().unwrap()), 401);
        assert_error(
            &refresh(&p, &claude, claude_tokens["refresh_token"].as_str().unwrap()),
            400,
            "invalid_grant",
        );
        assert_eq!(
            call_tool_status(&p, cli_tokens["access_token"].as_str().unwrap()),
            200,
            "the other app stays connected"
        );
        assert_eq!(call_tool_status(&p, other_tokens["access_token"].as_str().unwrap()), 200);
    }
}

mod cimd_clients {
    use super::*;
    use crate::testing::json_response;

    const CLIENT: &str = "https://client.example.com/oauth/metadata.json";

    fn serve(p: &TestPlatform, doc: Value) {
        p.network.serve(CLIENT, move |_| Ok(json_response(200, &doc)));
    }

    fn doc() -> Value {
        json!({"client_id": CLIENT, "client_name": "Doc client", "redirect_uris": ["http://127.0.0.1/callback"], "token_endpoint_auth_method": "none"})
    }

    #[test]
    fn a_metadata_document_client_connects_and_is_cached() {
        let p = TestPlatform::new();
        serve(&p, doc());
        let jar = Jar::default();
        let page = to_consent(&p, &jar, &authorize_url(CLIENT, CALLBACK, &[]), "doc@example.com");
        let body = html(&page);
        assert!(
            body.contains("Doc client")
                && body.contains("Published by")
                && body.contains("client.example.com"),
            "{body}"
        );
        let code = param(&location(&approve(&p, &jar, &page, "act")), "code").unwrap();
        let tokens = exchange(&p, CLIENT, &code, CALLBACK);
        assert_eq!(tokens.status, 200, "{}", html(&tokens));
        let request = &p.network.requests.borrow()[0];
        assert!(
            !request.follow_redirects
                && request.max_body_bytes == Some(5 * 1024)
                && request.timeout_ms == 5_000
        );
        assert_eq!(p.network.count(CLIENT), 1, "fetched once, then cached");
        assert!(p.kv_keys().iter().any(|k| k.starts_with("cimd:")));
    }

    #[test]
    fn bad_documents_and_private_addresses_are_refused_before_any_redirect() {
        for (bad, fetched) in [
            (
                json!({"client_id": "https://other.example.com/x", "redirect_uris": ["http://127.0.0.1/callback"]}),
                true,
            ),
            (
                json!({"client_id": CLIENT, "redirect_uris": ["http://127.0.0.1/callback"], "client_secret": "s"}),
                true,
            ),
            (json!({"client_id": CLIENT, "redirect_uris": ["http://evil.example/callback"]}), true),
            (json!(["not an object"]), true),
        ] {
            let p = TestPlatform::new();
            serve(&p, bad.clone());
            let r = Jar::default().get(&p, &authorize_url(CLIENT, CALLBACK, &[]));
            assert_eq!((r.status, data_error(&r).as_deref()), (400, Some("invalid_client")), "{bad}");
            assert!(r.header("location").is_none());
            assert_eq!(p.network.count(CLIENT) > 0, fetched);
            assert!(!p.kv_keys().iter().any(|k| k.starts_with("cimd:")), "nothing cached");
        }
        let p = TestPlatform::new();
        p.network.serve(CLIENT, |_| {
            Ok(crate::outbound::OutboundResponse {
                status: 302,
                headers: vec![("location".into(), "http://169.254.169.254/".into())],
                body: vec![],
            })
        });
        let r = Jar::default().get(&p, &authorize_url(CLIENT, CALLBACK, &[]));
        assert_eq!(data_error(&r).as_deref(), Some("invalid_client"), "a redirect is not followed");
        let p = TestPlatform::new();
        p.network.serve(CLIENT, |_| Ok(json_response(200, &json!({"padding": "x".repeat(6000)}))));
        assert_eq!(
            data_error(&Jar::default().get(&p, &authorize_url(CLIENT, CALLBACK, &[]))).as_deref(),
            Some("invalid_client")
        );
        let p = TestPlatform::new();
        for private in [
            "https://127.0.0.1/x",
            "https://10.1.2.3/x",
            "https://localhost/x",
            "https://169.254.169.254/x",
            "http://client.example.com/x",
        ] {
            let r = Jar::default().get(&p, &authorize_url(private, CALLBACK, &[]));
            assert_eq!(data_error(&r).as_deref(), Some("invalid_client"), "{private}");
        }
        assert!(p.network.requests.borrow().is_empty(), "nothing was fetched");
        // At the token endpoint too, a bad client id is refused before any fetch.
        let t = exchange(&p, "https://10.1.2.3/x", "vsac_x", CALLBACK);
        assert_error(&t, 401, "invalid_client");
        assert!(p.network.requests.borrow().is_empty());
    }

    /// A fetch that fails for a moment (network, timeout, 5xx, 429) is not the client's fault:
    /// `invalid_client` would make MCP clients drop their tokens and register again (RFC 6749
    /// §5.2), so it is 503 `temporarily_unavailable` at the token and revocation endpoints and
    /// a "try again" page at /authorize. What the publisher refuses (4xx) stays invalid_client.
    #[test]
    fn a_document_that_cannot_be_fetched_just_now_is_a_temporary_failure() {
        use crate::outbound::{OutboundError, OutboundResponse};
        let failures: Vec<Result<OutboundResponse, OutboundError>> = vec![
            Err(OutboundError("timed out".into())),
            Err(OutboundError("Network connection lost.".into())),
            Ok(json_response(500, &json!({}))),
            Ok(json_response(502, &json!({}))),
            Ok(json_response(503, &json!({}))),
            Ok(json_response(429, &json!({}))),
        ];
        for failure in failures {
            let p = TestPlatform::new();
            let answer = failure.clone();
            p.network.serve(CLIENT, move |_| answer.clone());
            let r = Jar::default().get(&p, &authorize_url(CLIENT, CALLBACK, &[]));
            assert_eq!((r.status, data_error(&r).as_deref()), (503, Some("unavailable")), "{failure:?}");
            assert!(r.header("location").is_none());
            assert!(
                html(&r).contains("Try again in a moment") && !html(&r).contains("cannot connect"),
                "{}",
                html(&r)
            );
            for answer in [
                exchange(&p, CLIENT, "vsac_x", CALLBACK),
                revoke_request(&p, &[("client_id", CLIENT), ("token", "x")]),
            ] {
                assert_error(&answer, 503, "temporarily_unavailable");
                assert_eq!(answer.header("retry-after"), Some("30"), "{failure:?}");
                assert!(answer.header("www-authenticate").is_none());
            }
            assert!(!p.kv_keys().iter().any(|k| k.starts_with("cimd:")), "nothing cached");
        }
        for status in [400, 401, 403, 404, 410] {
            let p = TestPlatform::new();
            p.network.serve(CLIENT, move |_| Ok(json_response(status, &doc())));
            let r = Jar::default().get(&p, &authorize_url(CLIENT, CALLBACK, &[]));
            assert_eq!((r.status, data_error(&r).as_deref()), (400, Some("invalid_client")), "{status}");
            assert_error(&exchange(&p, CLIENT, "vsac_x", CALLBACK), 401, "invalid_client");
        }
    }

    /// RFC 9700 §4.11.2: anyone can publish a metadata document naming a redirect URI on their
    /// own site, so errors go there through a page with a link, as for a registered client;
    /// loopback stays automatic for both.
    #[test]
    fn errors_are_not_bounced_to_the_documents_own_site() {
        let p = TestPlatform::new();
        let own = "https://client.example.com/oauth/callback";
        serve(
            &p,
            json!({"client_id": CLIENT, "client_name": "Doc client", "redirect_uris": [own, "http://127.0.0.1/callback"]}),
        );
        let jar = Jar::default();
        for (extra, code) in
            [(("scope", "admin"), "invalid_scope"), (("response_type", "token"), "unsupported_response_type")]
        {
            let r = jar.get(&p, &authorize_url(CLIENT, own, &[extra]));
            assert_eq!((r.status, data_error(&r).as_deref()), (400, Some(code)), "{}", html(&r));
            assert!(r.header("location").is_none(), "not redirected");
            let link = format!("href=\"{own}?error={code}");
            assert!(html(&r).contains(&link), "{}", html(&r));
        }
        let r = jar.get(&p, &authorize_url(CLIENT, CALLBACK, &[("scope", "admin")]));
        assert_eq!(r.status, 303);
        assert!(location(&r).starts_with(CALLBACK));
    }
}

mod openid_sign_in {
    use super::*;
    use crate::oauth::oidc::tests::{id_token, jwks};
    use crate::testing::json_response;
    use std::cell::RefCell;
    use std::rc::Rc;

    const IDP: &str = "https://idp.example.com";

    struct Idp {
        /// What the provider saw in the authorization request: state, nonce, challenge.
        seen: Rc<RefCell<Option<(String, String, String)>>>,
        /// Claims overrides for the next ID token.
        claims: Rc<RefCell<Value>>,
    }

    fn platform() -> (TestPlatform, Idp) {
        let vars: std::collections::HashMap<&str, &str> = [
            ("PUBLIC_URL", "http://127.0.0.1:8787"),
            ("JWT_SIGNING_KEYS", crate::testing::DEV_KEYS),
            ("OIDC_ISSUER", IDP),
            ("OIDC_CLIENT_ID", "vibesell"),
            ("OIDC_CLIENT_SECRET", "s3cret"),
            ("OIDC_NAME", "Example ID"),
        ]
        .into_iter()
        .collect();
        let config = crate::config::Config::from_lookup(|k| vars.get(k).map(|v| (*v).to_owned())).unwrap();
        let p = TestPlatform::with_config(config);
        let idp = Idp { seen: Rc::default(), claims: Rc::new(RefCell::new(json!({}))) };
        p.network.serve(&format!("{IDP}/.well-known/openid-configuration"), |_| {
            Ok(json_response(
                200,
                &json!({
                    "issuer": IDP,
                    "authorization_endpoint": format!("{IDP}/authorize"),
                    "token_endpoint": format!("{IDP}/token"),
                    "jwks_uri": format!("{IDP}/jwks"),
                    "authorization_response_iss_parameter_supported": true,
                }),
            ))
        });
        p.network.serve(&format!("{IDP}/jwks"), |_| Ok(json_response(200, &jwks())));
        let seen = Rc::clone(&idp.seen);
        let claims = Rc::clone(&idp.claims);
        p.network.serve(&format!("{IDP}/token"), move |req| {
            let form = crate::oauth::form::Form::parse(req.body.as_deref().unwrap_or_default());
            let seen = seen.borrow();
            let (_, nonce, challenge) = seen.as_ref().expect("authorize came first");
            use base64::Engine as _;
            let basic = format!("Basic {}", base64::engine::general_purpose::STANDARD.encode("vibesell:s3cret"));
            let ok = form.get("code").unwrap() == Some("idp-code")
                && form.get("redirect_uri").unwrap() == Some("http://127.0.0.1:8787/app/signin/callback")
                && form.get("code_verifier").unwrap().is_some_and(|v| crate::oauth::pkce::verify(v, challenge))
                && req.headers.iter().any(|(k, v)| k == "authorization" && *v == basic);
            if !ok {
                return Ok(json_response(400, &json!({"error": "invalid_grant"})));
            }
            let mut c = json!({"iss": IDP, "aud": "vibesell", "sub": "idp-user-7", "nonce": nonce, "email": "ada@idp.example"});
            for (k, v) in claims.borrow().as_object().unwrap() {
                c[k] = v.clone();
            }
            Ok(json_response(200, &json!({"access_token": "x", "token_type": "Bearer", "id_token": id_token(c, Some("k1"), crate::testing::NOW_MS, 300)})))
        });
        (p, idp)
    }

    /// Starts at the authorization endpoint and follows the sign-in button to the provider;
    /// answers the consent URL and the provider URL.
    fn to_provider(p: &TestPlatform, idp: &Idp, jar: &Jar, client_id: &str) -> (String, String) {
        let consent = location(&jar.get(p, &authorize_url(client_id, CALLBACK, &[])));
        let page = html(&jar.get(p, &consent));
        assert!(page.contains("Continue with Example ID"), "{page}");
        let start = page.find("href=\"/app/signin/oidc?").unwrap() + 6;
        let href = page[start..].split('"').next().unwrap().replace("&amp;", "&");
        let r = jar.get(p, &href);
        assert_eq!(r.status, 303, "{}", html(&r));
        let to = location(&r);
        assert!(to.starts_with("https://idp.example.com/authorize?"), "{to}");
        assert_eq!(param(&to, "code_challenge_method").as_deref(), Some("S256"));
        assert_eq!(param(&to, "scope").as_deref(), Some("openid email profile"));
        *idp.seen.borrow_mut() = Some((
            param(&to, "state").unwrap(),
            param(&to, "nonce").unwrap(),
            param(&to, "code_challenge").unwrap(),
        ));
        (consent, to)
    }

    fn callback(p: &TestPlatform, jar: &Jar, state: &str, extra: &str) -> HttpResponse {
        jar.get(
            p,
            &format!(
                "/app/signin/callback?code=idp-code&state={state}&iss=https%3A%2F%2Fidp.example.com{extra}"
            ),
        )
    }

    #[test]
    fn signs_in_with_the_provider_and_consents() {
        let (p, idp) = platform();
        let client_id = register_client(&p, LOOPBACK);
        let jar = Jar::default();
        let (consent, _) = to_provider(&p, &idp, &jar, &client_id);
        let state = idp.seen.borrow().clone().unwrap().0;
        let r = callback(&p, &jar, &state, "");
        assert_eq!((r.status, location(&r)), (303, consent.clone()), "{}", html(&r));
        let page = jar.get(&p, &consent);
        assert!(html(&page).contains("ada@idp.example"));
        let code = param(&location(&approve(&p, &jar, &page, "act")), "code").unwrap();
        let tokens = json_of(&exchange(&p, &client_id, &code, CALLBACK));
        let (principal, _) = crate::auth::jwt::verify(
            &crate::testing::test_config(),
            tokens["access_token"].as_str().unwrap(),
            p.now_ms.get(),
        )
        .unwrap();
        assert_eq!(principal.subject, "oidc:idp.example.com:idp-user-7");
        // The state was single use.
        let again = callback(&p, &jar, &state, "");
        assert_eq!(data_error(&again).as_deref(), Some("signin_expired"));
    }

    #[test]
    fn refuses_forged_callbacks_and_bad_id_tokens_without_a_session() {
        for (case, claims, extra, code) in [
            ("wrong nonce", json!({"nonce": "other"}), "", "signin_failed"),
            ("wrong audience", json!({"aud": "someone-else"}), "", "signin_failed"),
            ("wrong issuer", json!({"iss": "https://evil.example"}), "", "signin_failed"),
            ("mix-up iss", json!({}), "&iss=https%3A%2F%2Fevil.example", "signin_failed"),
            ("provider error", json!({}), "&error=access_denied", "signin_refused"),
        ] {
            let (p, idp) = platform();
            let client_id = register_client(&p, LOOPBACK);
            let jar = Jar::default();
            to_provider(&p, &idp, &jar, &client_id);
            *idp.claims.borrow_mut() = claims;
            let state = idp.seen.borrow().clone().unwrap().0;
            let url = if extra.starts_with("&iss=") {
                format!("/app/signin/callback?code=idp-code&state={state}{extra}")
            } else {
                format!(
                    "/app/signin/callback?code=idp-code&state={state}&iss=https%3A%2F%2Fidp.example.com{extra}"
                )
            };
            let r = jar.get(&p, &url);
            assert_eq!((r.status, data_error(&r).as_deref()), (400, Some(code)), "{case}");
            assert!(jar.value("__Host-vs_session").is_none(), "{case}: no session");
            assert_eq!(p.state_entries("signin:"), 0, "{case}: the state is spent");
        }
        // Another browser cannot complete someone's sign-in, and a made-up state is refused.
        let (p, idp) = platform();
        let client_id = register_client(&p, LOOPBACK);
        to_provider(&p, &idp, &Jar::default(), &client_id);
        let state = idp.seen.borrow().clone().unwrap().0;
        let thief = Jar::default();
        thief.get(&p, "/app/signin");
        assert_eq!(data_error(&callback(&p, &thief, &state, "")).as_deref(), Some("signin_expired"));
        assert_eq!(data_error(&callback(&p, &thief, &"f".repeat(64), "")).as_deref(), Some("signin_expired"));
        assert!(thief.value("__Host-vs_session").is_none());
        // The start link needs this browser's CSRF token.
        let r = thief.get(&p, "/app/signin/oidc?return_to=%2Fapp%2Faccount&csrf=forged");
        assert_eq!((r.status, data_error(&r).as_deref()), (403, Some("csrf")));
    }
}

mod limits_of_requests {
    use super::*;

    #[test]
    fn a_client_cannot_ask_for_more_than_the_scope_it_registered() {
        let p = TestPlatform::new();
        let mut body = public_client(LOOPBACK);
        body["scope"] = json!("mcp");
        let client_id = json_of(&register(&p, &body))["client_id"].as_str().unwrap().to_owned();
        let jar = Jar::default();
        let r = jar.get(&p, &authorize_url(&client_id, CALLBACK, &[("scope", "mcp mcp:act")]));
        assert_eq!(param(&location(&r), "error").as_deref(), Some("invalid_scope"));
        let page =
            to_consent(&p, &jar, &authorize_url(&client_id, CALLBACK, &[("scope", "")]), "s@example.com");
        assert!(!html(&page).contains("value=\"act\""), "no scope asked: what it registered, read only");
    }

    /// Acting implies reading (`ScopeSet::implied`): a client registered for `mcp:act` alone may
    /// ask for `mcp` alone, or both, but nothing else.
    #[test]
    fn a_client_registered_for_act_may_ask_for_read() {
        let p = TestPlatform::new();
        let mut body = public_client(LOOPBACK);
        body["scope"] = json!("mcp:act");
        let client_id = json_of(&register(&p, &body))["client_id"].as_str().unwrap().to_owned();
        let jar = Jar::default();
        let page =
            to_consent(&p, &jar, &authorize_url(&client_id, CALLBACK, &[("scope", "mcp")]), "ao@example.com");
        assert!(!html(&page).contains("value=\"act\""), "read only, as asked");
        for scope in ["mcp mcp:act", "mcp:act", ""] {
            let r = jar.get(&p, &authorize_url(&client_id, CALLBACK, &[("scope", scope)]));
            assert!(location(&r).starts_with("/v1/oauth/consent?request="), "{scope}: {}", location(&r));
        }
        let r = jar.get(&p, &authorize_url(&client_id, CALLBACK, &[("scope", "mcp admin")]));
        assert_eq!(param(&location(&r), "error").as_deref(), Some("invalid_scope"));
    }

    /// RFC 6749 §5.2 and §4.1.2.1: `error_description` holds only %x20-21 / %x23-5B / %x5D-7E
    /// and never echoes the client's text, whatever the client sent.
    #[test]
    fn error_descriptions_keep_to_the_allowed_characters() {
        let p = TestPlatform::new();
        let client_id = register_client(&p, LOOPBACK);
        let hostile = "mcp \"<x>\\caf\u{e9}\u{202e}";
        let mut answers = vec![
            register(&p, &json!({"redirect_uris": ["http://127.0.0.1/cb"], "scope": hostile})),
            register(&p, &json!({"redirect_uris": ["http://127.0.0.1/cb"], "response_types": ["token"]})),
            register(&p, &json!({"redirect_uris": ["http://127.0.0.1/cb"], "client_name": "\u{202e}x"})),
            register(&p, &json!({"redirect_uris": ["javascript:alert(\"x\")"]})),
            register(&p, &json!({"redirect_uris": ["http://127.0.0.1/cb"], "grant_types": ["\"x\""]})),
            refresh_for_scope(&p, &client_id, "vsrt_x", hostile),
            token_request(&p, &[("grant_type", hostile), ("client_id", &client_id)], &[]),
            token_request(&p, &[("grant_type", "authorization_code"), ("client_id", hostile)], &[]),
            token_request(&p, &[("grant_type", "authorization_code"), ("client_id", &client_id)], &[]),
            exchange(&p, &client_id, "vsac_\"x\"", CALLBACK),
            revoke_request(&p, &[("client_id", hostile), ("token", "x")]),
            revoke_request(&p, &[("client_id", &client_id)]),
        ];
        let jar = Jar::default();
        for extra in [
            ("scope", hostile),
            ("response_type", hostile),
            ("code_challenge", hostile),
            ("code_challenge_method", hostile),
            ("resource", hostile),
        ] {
            answers.push(jar.get(&p, &authorize_url(&client_id, CALLBACK, &[extra])));
        }
        for r in &answers {
            let description = match r.header("location") {
                Some(to) => param(to, "error_description"),
                None => json_of(r)["error_description"].as_str().map(str::to_owned),
            }
            .unwrap_or_else(|| panic!("no error_description: {} {}", r.status, html(r)));
            assert!(description.chars().all(crate::oauth::error::description_char), "{description:?}");
            assert!(!description.contains("<x>") && !description.contains("caf"), "echoed: {description:?}");
        }
    }

    #[test]
    fn oversized_and_malformed_page_forms_change_nothing() {
        let p = TestPlatform::new();
        let client_id = register_client(&p, LOOPBACK);
        let jar = Jar::default();
        let page = html(&to_consent(&p, &jar, &authorize_url(&client_id, CALLBACK, &[]), "f@example.com"));
        let padding = "x".repeat(20_000);
        let big = jar.post(
            &p,
            "/v1/oauth/consent",
            &[
                ("request", &consent_field(&page, "request")),
                ("csrf", &consent_field(&page, "csrf")),
                ("decision", "approve"),
                ("access", "act"),
                ("pad", &padding),
            ],
        );
        assert_eq!((big.status, data_error(&big).as_deref()), (400, Some("invalid_request")));
        let cookie = jar.header();
        let json_post = send(
            &p,
            request(
                "POST",
                "/v1/oauth/consent",
                &[("cookie", &cookie), ("content-type", "application/json")],
                b"{}",
            ),
        );
        assert_eq!((json_post.status, data_error(&json_post).as_deref()), (400, Some("invalid_request")));
        let odd = jar.post(
            &p,
            "/v1/oauth/consent",
            &[
                ("request", &consent_field(&page, "request")),
                ("csrf", &consent_field(&page, "csrf")),
                ("decision", "maybe"),
            ],
        );
        assert_eq!((odd.status, data_error(&odd).as_deref()), (400, Some("invalid_request")));
        let widen = jar.post(
            &p,
            "/v1/oauth/consent",
            &[
                ("request", &consent_field(&page, "request")),
                ("csrf", &consent_field(&page, "csrf")),
                ("decision", "approve"),
                ("access", "admin"),
            ],
        );
        assert_eq!((widen.status, data_error(&widen).as_deref()), (400, Some("invalid_request")));
        assert_eq!(p.state_entries("flow:"), 1, "the request is still pending");
        assert_eq!(approve(&p, &jar, &to_consent_again(&p, &jar, &page), "act").status, 303);
    }

    fn to_consent_again(p: &TestPlatform, jar: &Jar, page: &str) -> HttpResponse {
        jar.get(p, &format!("/v1/oauth/consent?request={}", consent_field(page, "request")))
    }
}

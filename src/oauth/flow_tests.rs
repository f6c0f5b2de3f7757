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
        let found =
            crate::testing::block_on(crate::oauth::clients::find(&config, &p, &p, &p, id, p.now_ms.get()))
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
        ))
        .unwrap();
        assert!(unknown.is_none());
        p.kv_lagging.set(false);
        p.kv_down.set(true);
        let r = register(&p, &public_client("http://127.0.0.1/elsewhere"));
        assert_error(&r, 503, "temporarily_unavailable");
    }
}

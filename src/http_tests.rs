//! The HTTP surface driven natively through `route`: transport rules, auth, and hostile input.

use serde_json::{Value, json};

use super::*;
use crate::auth::ScopeSet;
use crate::testing::{TestPlatform, test_token};

fn request(method: &str, headers: &[(&str, &str)], body: &str) -> HttpRequest {
    HttpRequest {
        method: method.into(),
        path: "/v1/mcp".into(),
        query: None,
        headers: headers.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect(),
        body: Some(body.as_bytes().to_vec()),
    }
}

/// A POST with good defaults; `extra` headers replace the defaults of the same name.
fn post_with(platform: &TestPlatform, body: &str, extra: &[(&str, &str)]) -> (HttpResponse, Option<Value>) {
    let token = format!("Bearer {}", test_token(ScopeSet::FULL, false));
    let mut headers: Vec<(&str, &str)> = vec![
        ("content-type", "application/json"),
        ("accept", "application/json, text/event-stream"),
        ("authorization", &token),
        ("host", "127.0.0.1:8787"),
    ];
    for (k, v) in extra {
        headers.retain(|(h, _)| h != k);
        if !v.is_empty() {
            headers.push((k, v));
        }
    }
    let (response, _) = platform.send(&request("POST", &headers, body));
    let json = serde_json::from_slice(&response.body).ok();
    (response, json)
}

fn post(body: &str) -> (HttpResponse, Option<Value>) {
    post_with(&TestPlatform::new(), body, &[])
}

const INIT: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;

#[test]
fn initialize_answers_json_without_a_session() {
    let (r, json) = post(INIT);
    assert_eq!(r.status, 200);
    assert_eq!(r.header("content-type"), Some("application/json"));
    assert!(r.header("mcp-session-id").is_none());
    let json = json.unwrap();
    assert_eq!(json["id"], 1);
    assert_eq!(json["result"]["protocolVersion"], "2025-11-25");
    assert_eq!(json["result"]["serverInfo"]["name"], "vibesell");
}

/// The answers to POST on the MCP endpoint carry only what they need (`is_mcp_answer`): every
/// other response keeps `nosniff`, and the OAuth and page responses keep their `no-store`.
#[test]
fn mcp_answers_carry_no_inert_headers() {
    let platform = TestPlatform::new();
    let tools_list = r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#;
    let bad_call = r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{}}"#;
    let answers = [
        post_with(&platform, INIT, &[]).0,
        post_with(&platform, tools_list, &[("accept-encoding", "gzip")]).0,
        post_with(&platform, bad_call, &[]).0,
        post_with(&platform, "{", &[]).0,
        post_with(&platform, INIT, &[("authorization", "")]).0,
        post_with(&platform, INIT, &[("content-type", "text/plain")]).0,
    ];
    // The request id names the log line: the routine answers (`initialize`, `tools/list`, the
    // challenge), which have none, carry no id.
    let ids: Vec<_> =
        answers.iter().map(|r| r.header("x-request-id").is_some_and(|id| !id.is_empty())).collect();
    assert_eq!(ids, [false, false, true, true, false, true]);
    for r in &answers {
        assert_eq!(r.header("x-content-type-options"), None, "{}", r.status);
        assert_eq!(r.header("cache-control"), None, "{}", r.status);
        assert!(r.header("content-type").is_some(), "{}", r.status);
    }
    assert_eq!(answers.iter().map(|r| r.status).collect::<Vec<_>>(), [200, 200, 200, 400, 401, 415]);
    // An event stream keeps its conventional `no-cache`.
    let (r, _) = post_with(&platform, INIT, &[("accept", "text/event-stream")]);
    assert_eq!(r.header("cache-control"), Some("no-cache, no-store"));
    // Not a POST to the MCP endpoint: nosniff as before.
    let (r, _) = platform.send(&request("GET", &[("accept", "text/event-stream")], ""));
    assert_eq!((r.status, r.header("x-content-type-options")), (405, Some("nosniff")));
    let mut health = request("GET", &[], "");
    health.path = "/health".into();
    assert_eq!(platform.send(&health).0.header("x-content-type-options"), Some("nosniff"));
    // HSTS on an https deployment's other responses (the pages above all), never over http.
    assert_eq!(platform.send(&health).0.header("strict-transport-security"), None);
    let vars = [
        ("PUBLIC_URL", "https://vibesell.example"),
        ("JWT_SIGNING_KEYS", "k1:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAE"),
    ];
    let config = crate::config::Config::from_lookup(|k| {
        vars.iter().find(|(n, _)| *n == k).map(|(_, v)| (*v).to_owned())
    });
    let deployed = TestPlatform::with_config(config.unwrap());
    let mut page = request("GET", &[("host", "vibesell.example")], "");
    page.path = crate::oauth::CONSENT_PATH.into();
    let hsts = deployed.send(&page).0;
    assert_eq!(hsts.header("strict-transport-security"), Some("max-age=31536000"), "{}", hsts.status);
    let init = request("POST", &[("host", "vibesell.example")], INIT);
    assert_eq!(deployed.send(&init).0.header("strict-transport-security"), None, "not on MCP answers");
    let mut token = request("POST", &[("content-type", "application/x-www-form-urlencoded")], "grant_type=x");
    token.path = crate::oauth::TOKEN_PATH.into();
    let (r, _) = platform.send(&token);
    assert_eq!(
        (r.header("cache-control"), r.header("x-content-type-options")),
        (Some("no-store"), Some("nosniff"))
    );
}

#[test]
fn sse_only_clients_get_one_sse_event() {
    let (r, _) = post_with(&TestPlatform::new(), INIT, &[("accept", "text/event-stream")]);
    assert_eq!(r.status, 200);
    assert_eq!(r.header("content-type"), Some("text/event-stream"));
    let body = String::from_utf8(r.body).unwrap();
    assert!(body.starts_with("event: message\ndata: {"), "{body}");
    assert!(body.ends_with("\n\n"));
    assert!(!body.contains("\nid:"), "no event ids: a stateless server cannot resume");
}

#[test]
fn notifications_and_responses_get_202() {
    for body in [
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}"#,
        r#"{"jsonrpc":"2.0","id":5,"result":{}}"#,
        r#"{"jsonrpc":"2.0","id":5,"error":{"code":1,"message":"x"}}"#,
        // 2025-11-25 `JSONRPCErrorResponse.id` is optional; JSON-RPC 2.0 §5 writes null.
        r#"{"jsonrpc":"2.0","error":{"code":-32700,"message":"Parse error"}}"#,
        r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}"#,
    ] {
        let (r, _) = post(body);
        assert_eq!(r.status, 202, "{body}");
        assert!(r.body.is_empty());
    }
}

#[test]
fn other_methods_are_405_with_allow() {
    let platform = TestPlatform::new();
    for method in ["GET", "DELETE", "PUT", "PATCH"] {
        let (r, _) = platform.send(&request(method, &[("accept", "text/event-stream")], ""));
        assert_eq!(r.status, 405, "{method}");
        assert_eq!(r.header("allow"), Some("POST, OPTIONS"));
    }
}

#[test]
fn origin_and_host_are_checked() {
    let platform = TestPlatform::new();
    let (r, json) = post_with(&platform, INIT, &[("origin", "http://evil.example.com")]);
    assert_eq!(r.status, 403);
    assert!(json.unwrap().get("id").is_none());
    let (r, _) = post_with(&platform, INIT, &[("origin", "null")]);
    assert_eq!(r.status, 403);
    let (r, _) = post_with(&platform, INIT, &[("host", "evil.example.com")]);
    assert_eq!(r.status, 403, "DNS rebinding: a local server answers only loopback hosts");
    let (r, _) = post_with(&platform, INIT, &[("origin", "http://127.0.0.1:8787")]);
    assert_eq!(r.status, 200);
    assert_eq!(r.header("access-control-allow-origin"), Some("http://127.0.0.1:8787"));
    assert!(r.header("access-control-expose-headers").unwrap().contains("WWW-Authenticate"));
    let (r, _) = post_with(&platform, INIT, &[("origin", "https://claude.ai")]);
    assert_eq!(r.status, 200);
}

#[test]
fn preflight_needs_no_token() {
    let platform = TestPlatform::new();
    let (r, _) = platform.send(&request("OPTIONS", &[("origin", "http://localhost:6274")], ""));
    assert_eq!(r.status, 204);
    assert!(r.header("access-control-allow-headers").unwrap().contains("MCP-Protocol-Version"));
    let (r, _) = platform.send(&request("OPTIONS", &[("origin", "https://evil.example.com")], ""));
    assert_eq!(r.status, 403);
}

#[test]
fn authentication_failures() {
    let platform = TestPlatform::new();
    let (r, _) = post_with(&platform, INIT, &[("authorization", "")]);
    assert_eq!(r.status, 401);
    assert_eq!(
        r.header("www-authenticate"),
        Some(
            r#"Bearer resource_metadata="http://127.0.0.1:8787/.well-known/oauth-protected-resource/v1/mcp", scope="mcp mcp:act""#
        )
    );
    let (r, _) = post_with(&platform, INIT, &[("authorization", "Bearer not.a.jwt")]);
    assert_eq!(r.status, 401);
    assert!(r.header("www-authenticate").unwrap().contains(r#"error="invalid_token""#));
    let (r, _) = post_with(&platform, INIT, &[("authorization", "Basic dTpw")]);
    assert_eq!(r.status, 400);
    // An expired token.
    platform.now_ms.set(platform.now_ms.get() + 2 * 3600 * 1000);
    let (r, _) = post_with(&platform, INIT, &[]);
    assert_eq!(r.status, 401);
}

#[test]
fn transport_errors() {
    let platform = TestPlatform::new();
    let (r, json) = post_with(&platform, INIT, &[("accept", "text/html")]);
    assert_eq!(r.status, 406);
    assert_eq!(json.unwrap()["error"]["code"], -32000);
    let (r, _) = post_with(&platform, INIT, &[("content-type", "text/plain")]);
    assert_eq!(r.status, 415);
    let (r, _) = post_with(&platform, INIT, &[("content-type", "")]);
    assert_eq!(r.status, 415);
    let ping = r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#;
    let (r, json) = post_with(&platform, ping, &[("mcp-protocol-version", "1999-01-01")]);
    assert_eq!(r.status, 400);
    assert_eq!(json.unwrap()["error"]["code"], -32000, "not a 2026-era code, so new clients fall back");
    let (r, _) = post_with(&platform, ping, &[("mcp-protocol-version", "2026-07-28")]);
    assert_eq!(r.status, 400);
    let (r, _) = post_with(&platform, INIT, &[("mcp-protocol-version", "1999-01-01")]);
    assert_eq!(r.status, 200, "initialize takes its version from the body");
    let mut big =
        request("POST", &[("authorization", &format!("Bearer {}", test_token(ScopeSet::FULL, false)))], "");
    big.body = None;
    let (r, _) = platform.send(&big);
    assert_eq!(r.status, 413);
}

#[test]
fn hostile_bodies_get_their_documented_errors() {
    let cases: &[(&str, u16, i64)] = &[
        ("", 400, -32700),
        ("{", 400, -32700),
        (r#"{"jsonrpc":"2.0","id":1,"method":"ping""#, 400, -32700),
        ("not json", 400, -32700),
        ("\u{0}\u{1}", 400, -32700),
        ("null", 400, -32600),
        ("42", 400, -32600),
        (r#""ping""#, 400, -32600),
        (r#"{"id":1,"method":"ping"}"#, 400, -32600),
        (r#"{"jsonrpc":"2.0","id":null,"method":"ping"}"#, 400, -32600),
        (r#"{"jsonrpc":"2.0","id":true,"method":"ping"}"#, 400, -32600),
        (r#"{"jsonrpc":"2.0","id":1,"method":{}}"#, 400, -32600),
        (r#"{"jsonrpc":"2.0","id":1,"method":"ping","params":"x"}"#, 400, -32602),
        (r#"{"jsonrpc":"2.0","id":1,"method":"nope"}"#, 200, -32601),
        (r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}"#, 200, -32602),
        (
            r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1,"capabilities":{},"clientInfo":{}}}"#,
            200,
            -32602,
        ),
        (
            r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":[],"clientInfo":{}}}"#,
            200,
            -32602,
        ),
        // MCP-CONFORMANCE L-01: `clientInfo` is an `Implementation` (string name and version).
        (
            r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{}}}"#,
            200,
            -32602,
        ),
        (
            r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":5,"version":"1"}}}"#,
            200,
            -32602,
        ),
        (
            r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t"}}}"#,
            200,
            -32602,
        ),
        (
            r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":"t"}}"#,
            200,
            -32602,
        ),
        (r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":["x"]}}"#, 200, -32602),
        (
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"remember","arguments":1}}"#,
            200,
            -32602,
        ),
        (r#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"cursor":"abc"}}"#, 200, -32602),
        (r#"{"jsonrpc":"2.0","id":1,"method":"resources/list","params":{"cursor":"abc"}}"#, 200, -32602),
        (
            r#"{"jsonrpc":"2.0","id":1,"method":"resources/templates/list","params":{"cursor":"abc"}}"#,
            200,
            -32602,
        ),
        (r#"{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":5}}"#, 200, -32602),
        (
            r#"{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"ui://vibesell/nope"}}"#,
            200,
            -32002,
        ),
        (r#"{"jsonrpc":"2.0","id":1,"method":"resources/subscribe","params":{"uri":"x"}}"#, 200, -32601),
    ];
    for (body, status, code) in cases {
        let (r, json) = post(body);
        assert_eq!(r.status, *status, "{body}");
        let json = json.unwrap_or_else(|| panic!("{body}: not JSON"));
        assert_eq!(json["error"]["code"], *code, "{body}");
    }
    // Deep nesting stops at serde_json's recursion limit: a parse error, not a crash.
    let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
    let (r, json) = post(&deep);
    assert_eq!((r.status, json.unwrap()["error"]["code"].clone()), (400, json!(-32700)));
    let deep_obj = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"ping","params":{{"a":{}1{}}}}}"#,
        "[".repeat(200),
        "]".repeat(200)
    );
    let (r, _) = post(&deep_obj);
    assert_eq!(r.status, 400);
}

#[test]
fn wrong_types_in_every_tool_argument_are_refusals() {
    let platform = TestPlatform::new();
    for (tool, field) in [
        ("save_offer", "product"),
        ("save_offer", "description"),
        ("save_offer", "value_proposition"),
        ("save_offer", "website"),
        ("save_offer", "proof_points"),
        ("save_offer", "postal_address"),
        ("remember", "note"),
        ("remember", "topic"),
    ] {
        for bad in [json!(12), json!(true), json!({"x": 1}), json!([1, 2])] {
            let mut args = json!({"product": "p", "description": "d", "value_proposition": "v"});
            if tool == "remember" {
                args = json!({"note": "n"});
            }
            args[field] = bad.clone();
            let body = json!({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name": tool, "arguments": args}});
            let (r, json) =
                post_with(&platform, &body.to_string(), &[("mcp-protocol-version", "2025-11-25")]);
            assert_eq!(r.status, 200);
            let result = &json.unwrap()["result"];
            if field == "proof_points" && bad.is_array() {
                // [1, 2] is an array, but of the wrong items.
                assert_eq!(result["isError"], true);
                let text = result["content"][0]["text"].as_str().unwrap();
                assert!(text.contains("proof_points[0]"), "{text}");
                continue;
            }
            assert_eq!(result["isError"], true, "{tool}.{field} = {bad}");
            assert!(result.get("structuredContent").is_none());
            let text = result["content"][0]["text"].as_str().unwrap();
            assert!(
                text.contains(&format!("`{field}`")) && !text.contains("not a known field"),
                "{tool}.{field} = {bad}: {text}"
            );
        }
    }
}

#[test]
fn batches_only_in_2025_03_26() {
    let batch = r#"[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","method":"notifications/initialized"},{"jsonrpc":"2.0","id":2,"method":"nope"}]"#;
    // No header means 2025-03-26, which must accept batches.
    let (r, json) = post(batch);
    assert_eq!(r.status, 200);
    let answers = json.unwrap();
    assert_eq!(answers.as_array().unwrap().len(), 2);
    assert_eq!(answers[0]["id"], 1);
    assert_eq!(answers[1]["error"]["code"], -32601);
    let platform = TestPlatform::new();
    for v in ["2025-06-18", "2025-11-25", "2024-11-05"] {
        let (r, json) = post_with(&platform, batch, &[("mcp-protocol-version", v)]);
        assert_eq!(r.status, 400, "{v}");
        assert_eq!(json.unwrap()["error"]["code"], -32600);
    }
    let (r, _) = post("[]");
    assert_eq!(r.status, 400);
    let (r, _) = post(r#"[{"jsonrpc":"2.0","method":"notifications/initialized"}]"#);
    assert_eq!(r.status, 202);
    // A batch holding initialize is refused whole, and nothing else in it runs.
    let platform = TestPlatform::new();
    let remember = r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"remember","arguments":{"note":"batched"}}}"#;
    let (r, json) = post_with(&platform, &format!("[{remember},{INIT}]"), &[]);
    assert_eq!(r.status, 400);
    let json = json.unwrap();
    assert_eq!(json["error"]["code"], -32600, "initialize cannot be batched");
    assert!(json.get("id").is_none_or(Value::is_null));
    let context = r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"get_workspace_context","arguments":{}}}"#;
    let (_, json) = post_with(&platform, context, &[]);
    assert!(!json.unwrap().to_string().contains("batched"), "the batched remember did not run");
    let many = format!("[{}]", vec![r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#; 33].join(","));
    assert_eq!(post(&many).0.status, 400);
}

/// PRODUCT §3 answers a tool call the token may not make with HTTP 403 for the whole POST; in a
/// batch that 403 discards every answer, so nothing in the batch may have run (else a client
/// that steps up and retries would run it twice).
#[test]
fn a_batch_with_a_refused_tool_call_runs_nothing() {
    let platform = TestPlatform::new();
    let remember = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"remember","arguments":{"note":"batched"}}}"#;
    let decide = r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"decide_approval","arguments":{}}}"#;
    let ping = r#"{"jsonrpc":"2.0","id":3,"method":"ping"}"#;
    // An act token from a client other than the Claude app may not call decide_approval.
    let act = format!("Bearer {}", test_token(ScopeSet::FULL, false));
    let read = format!("Bearer {}", test_token(ScopeSet::READ, false));
    for (token, batch) in
        [(&act, format!("[{remember},{ping},{decide}]")), (&read, format!("[{ping},{remember}]"))]
    {
        let (r, _) = platform.send(&request(
            "POST",
            &[("content-type", "application/json"), ("authorization", token), ("host", "127.0.0.1:8787")],
            &batch,
        ));
        assert_eq!(r.status, 403, "{batch}");
        assert!(r.header("www-authenticate").unwrap().contains("insufficient_scope"));
    }
    let context = r#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"get_workspace_context","arguments":{}}}"#;
    let (_, json) = post_with(&platform, context, &[]);
    assert!(!json.unwrap().to_string().contains("batched"), "the batched remember did not run");
    // The same batch with the calls the token may make runs in order, as before.
    let (r, json) = post_with(&platform, &format!("[{remember},{ping}]"), &[("authorization", &act)]);
    assert_eq!(r.status, 200);
    assert_eq!(json.unwrap().as_array().map(Vec::len), Some(2));
    let (_, json) = post_with(&platform, context, &[]);
    assert!(json.unwrap().to_string().contains("batched"));
    // A refused tool named only in a notification, or in a malformed call, runs nowhere: the
    // batch is answered as usual, the malformed call with its -32602.
    let noted = r#"{"jsonrpc":"2.0","method":"tools/call","params":{"name":"decide_approval"}}"#;
    let malformed =
        r#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"decide_approval","arguments":1}}"#;
    let (r, json) = post_with(&platform, &format!("[{noted},{malformed},{ping}]"), &[]);
    assert_eq!(r.status, 200);
    let json = json.unwrap();
    assert_eq!((json[0]["error"]["code"].clone(), json[1]["id"].clone()), (json!(-32602), json!(3)));
}

/// JSON Schema 2020-12 counts 5.0 and 5e0 as integers (Validation §6.1.1), and the tools take
/// them as such.
#[test]
fn whole_number_floats_are_integer_arguments() {
    let platform = TestPlatform::new();
    let call = |arguments: &str| {
        let body = format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"{}","arguments":{arguments}}}}}"#,
            if arguments.contains("volume") { "size_sending_capacity" } else { "list_replies" }
        );
        let (r, json) = post_with(&platform, &body, &[("mcp-protocol-version", "2025-11-25")]);
        assert_eq!(r.status, 200);
        json.unwrap()["result"].clone()
    };
    // No campaign yet: the handler ran, so the limit was taken.
    let replies = call(r#"{"limit":5.0}"#);
    let text = replies["content"][0]["text"].as_str().unwrap();
    assert!(text.contains("No campaign yet") && !text.contains("integer"), "{text}");
    let sized = call(r#"{"volume":3000.0,"unit":"emails_per_month","steps":3e0,"per_mailbox":3E1}"#);
    assert_eq!(sized["isError"], false, "{sized}");
    let text = call(r#"{"limit":5.5}"#)["content"][0]["text"].as_str().unwrap().to_owned();
    assert!(text.contains("`limit` must be an integer, not a number"), "{text}");
}

/// MCP Apps hosts may negotiate a version before 2025-06-18, or send no version header: the
/// card's `_meta.ui` is there for them as the tools' is (MCP-CONFORMANCE TL-06, APP-R6).
#[test]
fn the_card_carries_its_ui_meta_on_every_version() {
    let platform = TestPlatform::new();
    let body = json!({"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri": crate::card::resource_uri()}})
        .to_string();
    for version in ["", "2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"] {
        let (r, json) = post_with(&platform, &body, &[("mcp-protocol-version", version)]);
        assert_eq!(r.status, 200, "{version}");
        let contents = &json.unwrap()["result"]["contents"][0];
        assert_eq!(contents["_meta"]["ui"]["prefersBorder"], true, "{version}");
        assert!(contents["text"].as_str().is_some_and(|t| t.starts_with("<!doctype html>")));
    }
}

/// Tasks (MCP 2025-11-25, basic/utilities/tasks): a receiver that has not declared the `tasks`
/// capability processes a `tools/call` that carries `params.task` as usual, ignoring it
/// (MCP-CONFORMANCE L-11).
#[test]
fn a_task_on_tools_call_is_ignored() {
    let platform = TestPlatform::new();
    let (_, init) = post_with(&platform, INIT, &[]);
    assert!(init.unwrap()["result"]["capabilities"].get("tasks").is_none(), "no tasks capability");
    let call = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_workspace_context","arguments":{},"task":{"ttl":60000}}}"#;
    let (r, json) = post_with(&platform, call, &[("mcp-protocol-version", "2025-11-25")]);
    assert_eq!(r.status, 200);
    let result = &json.unwrap()["result"];
    assert_eq!(result["isError"], false);
    assert_eq!(result["structuredContent"]["kind"], "workspace");
}

#[test]
fn scope_and_app_checks() {
    let platform = TestPlatform::new();
    let read = format!("Bearer {}", test_token(ScopeSet::READ, false));
    let call = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"remember","arguments":{"note":"x"}}}"#;
    let (r, _) = post_with(&platform, call, &[("authorization", &read)]);
    assert_eq!(r.status, 403);
    assert!(r.header("www-authenticate").unwrap().contains("insufficient_scope"));
    let list = r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#;
    let (_, json) = post_with(&platform, list, &[("authorization", &read)]);
    let tools = json.unwrap()["result"]["tools"].as_array().unwrap().len();
    let read_tools = crate::tools::ALL.iter().filter(|t| t.access() == crate::tools::Access::Read).count();
    assert_eq!(tools, read_tools);
}

#[test]
fn a_broken_configuration_is_a_500_without_detail() {
    let (r, trace) = TestPlatform::misconfigured().send(&request("POST", &[], INIT));
    assert_eq!(r.status, 500);
    assert!(!String::from_utf8_lossy(&r.body).contains("PUBLIC_URL"));
    assert!(trace.detail.unwrap().contains("PUBLIC_URL"));
}

#[test]
fn unknown_paths_are_404() {
    let platform = TestPlatform::new();
    let mut req = request("GET", &[], "");
    req.path = "/v1/mcp/".into();
    assert_eq!(platform.send(&req).0.status, 404);
    req.path = "/health".into();
    assert_eq!(platform.send(&req).0.status, 200);
}

#[test]
fn billing_routes_exist_only_when_configured() {
    let sandbox = TestPlatform::new();
    let mut webhook = request("POST", &[("stripe-signature", "t=1,v1=00")], "{}");
    webhook.path = "/v1/stripe/webhook".into();
    assert_eq!(sandbox.send(&webhook).0.status, 404, "no webhook secret, no endpoint");

    let live = TestPlatform::with_vars(&[("PROVIDER_MODE", "live"), ("STRIPE_WEBHOOK_SECRET", "whsec_x")]);
    let (r, trace) = live.send(&webhook);
    assert_eq!(r.status, 400);
    assert_eq!(trace.detail.as_deref(), Some("no matching signature"));
    let mut page = request("GET", &[], "");
    page.path = format!("/sandbox/checkout/ws_{}/cs_sandbox_{}", "0".repeat(24), "0".repeat(32));
    assert_eq!(live.send(&page).0.status, 404, "no sandbox pages in live mode");
    let (r, _) = sandbox.send(&page);
    assert_eq!(r.status, 404, "an unknown session");
    page.path = "/billing/return".into();
    page.query = Some("checkout=cancel".into());
    let (r, _) = sandbox.send(&page);
    assert_eq!(r.status, 200);
    assert!(String::from_utf8_lossy(&r.body).contains("Nothing was charged"));
    assert!(r.header("content-security-policy").unwrap().contains("frame-ancestors 'none'"));
}

/// The requests `log::is_routine` leaves out of the log by default, classified on what the
/// router actually answered: the protocol's bookkeeping and discovery are routine; a tool call,
/// a bad token, any error and every other route are not.
#[test]
fn only_the_protocols_bookkeeping_is_routine() {
    let platform = TestPlatform::new();
    let token = format!("Bearer {}", test_token(ScopeSet::FULL, false));
    let mcp = |body: &str, auth: &str, version: &str| {
        let mut headers = vec![
            ("content-type", "application/json"),
            ("accept", "application/json, text/event-stream"),
            ("host", "127.0.0.1:8787"),
            ("mcp-protocol-version", version),
        ];
        if !auth.is_empty() {
            headers.push(("authorization", auth));
        }
        request("POST", &headers, body)
    };
    let at = |method: &str, path: &str| HttpRequest {
        path: path.into(),
        ..request(method, &[("host", "127.0.0.1:8787"), ("origin", "http://localhost:6274")], "")
    };
    let read_card = format!(
        r#"{{"jsonrpc":"2.0","id":3,"method":"resources/read","params":{{"uri":"{}"}}}}"#,
        crate::card::resource_uri()
    );
    let call = r#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"get_workspace_context","arguments":{}}}"#;
    let cases: Vec<(&str, HttpRequest, bool)> = vec![
        ("initialize", mcp(INIT, &token, "2025-11-25"), true),
        (
            "notification",
            mcp(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#, &token, "2025-11-25"),
            true,
        ),
        ("ping", mcp(r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#, &token, "2025-11-25"), true),
        ("tools/list", mcp(r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#, &token, "2025-11-25"), true),
        (
            "resources/list",
            mcp(r#"{"jsonrpc":"2.0","id":2,"method":"resources/list"}"#, &token, "2025-11-25"),
            true,
        ),
        ("reading the card", mcp(&read_card, &token, "2025-11-25"), true),
        ("no credentials", mcp(INIT, "", "2025-11-25"), true),
        ("preflight", at("OPTIONS", "/v1/mcp"), true),
        ("GET probe", at("GET", "/v1/mcp"), true),
        ("AS metadata", at("GET", "/.well-known/oauth-authorization-server"), true),
        ("PRM", at("GET", "/.well-known/oauth-protected-resource/v1/mcp"), true),
        ("health", at("GET", "/health"), true),
        ("a tool call", mcp(call, &token, "2025-11-25"), false),
        ("a bad token", mcp(INIT, "Bearer not.a.token", "2025-11-25"), false),
        ("a malformed body", mcp("{", &token, "2025-11-25"), false),
        (
            "an unknown method",
            mcp(r#"{"jsonrpc":"2.0","id":1,"method":"nope"}"#, &token, "2025-11-25"),
            false,
        ),
        (
            "an unknown resource",
            mcp(
                r#"{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"ui://x"}}"#,
                &token,
                "2025-11-25",
            ),
            false,
        ),
        (
            "a bad protocol version",
            mcp(r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#, &token, "1999-01-01"),
            false,
        ),
        ("metadata by POST", at("POST", "/.well-known/oauth-authorization-server"), false),
        ("authorize", at("GET", "/v1/oauth/authorize"), false),
        ("nowhere", at("GET", "/nowhere"), false),
    ];
    for (name, req, routine) in cases {
        let (response, trace) = platform.send(&req);
        assert_eq!(
            crate::log::is_routine(&req.method, &req.path, response.status, &trace),
            routine,
            "{name}: {} {trace:?}",
            response.status
        );
    }
}

/// Large shared answers (`tools/list`, the card) go gzip-compressed to a client that accepts
/// it, and decode to exactly what a client that does not gets; everything else (`initialize`,
/// small and shared, among them), and SSE and batches, go as they are.
#[test]
fn shared_answers_are_gzipped_for_clients_that_accept_it() {
    use std::io::Read;
    let gunzip = |body: &[u8]| {
        let mut out = Vec::new();
        flate2::read::GzDecoder::new(body).read_to_end(&mut out).map(|_| out)
    };
    let platform = TestPlatform::new();
    let card = format!(
        r#"{{"jsonrpc":"2.0","id":"r-1","method":"resources/read","params":{{"uri":"{}"}}}}"#,
        crate::card::resource_uri()
    );
    let list = r#"{"jsonrpc":"2.0","id":7,"method":"tools/list"}"#;
    // How many times smaller each gets, at least.
    for (body, version, ratio) in
        [(list, "2025-11-25", 4), (list, "2025-03-26", 4), (card.as_str(), "2025-11-25", 3)]
    {
        let plain = post_with(&platform, body, &[("mcp-protocol-version", version)]).0;
        assert_eq!(plain.header("content-encoding"), None);
        assert_eq!(plain.header("vary"), Some("accept-encoding"));
        let zipped = post_with(
            &platform,
            body,
            &[("mcp-protocol-version", version), ("accept-encoding", "gzip, deflate, br")],
        )
        .0;
        assert_eq!(zipped.status, 200);
        assert_eq!(zipped.header("content-encoding"), Some("gzip"), "{body}");
        assert_eq!(zipped.header("content-type"), Some("application/json"));
        assert_eq!(zipped.header("vary"), Some("accept-encoding"));
        assert_eq!(gunzip(&zipped.body).unwrap(), plain.body, "{body} {version}");
        assert!(
            zipped.body.len() * ratio < plain.body.len(),
            "{} against {}",
            zipped.body.len(),
            plain.body.len()
        );
    }
    // The id as the client sent it, whatever it is.
    let odd = r#"{"jsonrpc":"2.0","id":"\u00e9\"}","method":"tools/list"}"#;
    let zipped = post_with(&platform, odd, &[("accept-encoding", "gzip")]).0;
    let json: Value = serde_json::from_slice(&gunzip(&zipped.body).unwrap()).unwrap();
    assert_eq!(json["id"], "é\"}");
    assert!(json["result"]["tools"].as_array().is_some_and(|t| t.len() > 30));
    // Refused gzip, SSE, a batch, a small shared answer and an unshared one go as they are.
    for (body, headers) in [
        (list, vec![("accept-encoding", "gzip;q=0, br")]),
        (list, vec![("accept-encoding", "gzip"), ("accept", "text/event-stream")]),
        (
            r#"[{"jsonrpc":"2.0","id":1,"method":"tools/list"}]"#,
            vec![("accept-encoding", "gzip"), ("mcp-protocol-version", "")],
        ),
        (r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#, vec![("accept-encoding", "gzip")]),
        (INIT, vec![("accept-encoding", "gzip")]),
        (
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_workspace_context","arguments":{}}}"#,
            vec![("accept-encoding", "gzip")],
        ),
    ] {
        let (r, _) = post_with(&platform, body, &headers);
        assert_eq!(r.status, 200, "{body}");
        assert_eq!(r.header("content-encoding"), None, "{body} {headers:?}");
        assert!(gunzip(&r.body).is_err());
    }
}

#[test]
fn the_request_headers_the_edge_reads_are_lower_case_and_listed_once() {
    let mut names = REQUEST_HEADERS.to_vec();
    assert!(names.iter().all(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_lowercase() || b == b'-')));
    names.sort_unstable();
    names.dedup();
    assert_eq!(names.len(), REQUEST_HEADERS.len());
}

/// The entry module reads the request (`src/edge/entry.js`, `readRequest`) with its own copy of
/// the header names, the body limit and the MCP endpoint's path: JavaScript cannot ask the wasm
/// for them without a crossing per request, which is what reading there saves.
#[test]
fn the_entry_module_reads_the_listed_headers_body_limit_and_mcp_path() {
    let entry = include_str!("edge/entry.js");
    let list = entry
        .split_once("const REQUEST_HEADERS = [")
        .and_then(|(_, rest)| rest.split_once("];"))
        .map(|(list, _)| list)
        .expect("entry.js declares REQUEST_HEADERS");
    let names: Vec<&str> =
        list.split(',').map(|n| n.trim().trim_matches('"')).filter(|n| !n.is_empty()).collect();
    assert_eq!(names, REQUEST_HEADERS);
    let limit = format!("const MAX_BODY_BYTES = {};", crate::mcp::MAX_BODY_BYTES);
    assert!(entry.contains(&limit), "entry.js should declare `{limit}`");
    let path = format!("const MCP_PATH = \"{}\";", crate::config::MCP_PATH);
    assert!(entry.contains(&path), "entry.js should declare `{path}`");
}

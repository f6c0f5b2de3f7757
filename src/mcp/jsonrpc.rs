//! JSON-RPC 2.0 envelopes as MCP uses them (basic §messages).

use serde_json::{Map, Value, json};

/// Invalid JSON was received.
pub const PARSE_ERROR: i64 = -32700;
/// The JSON sent is not a valid request object.
pub const INVALID_REQUEST: i64 = -32600;
/// The method does not exist.
pub const METHOD_NOT_FOUND: i64 = -32601;
/// Invalid method parameters (also: unknown tool, tools §error-handling).
pub const INVALID_PARAMS: i64 = -32602;
/// Internal error.
pub const INTERNAL_ERROR: i64 = -32603;
/// Resource not found (resources §error-handling).
pub const RESOURCE_NOT_FOUND: i64 = -32002;
/// Transport-level refusals (bad `Accept`, media type, protocol version header). Deliberately
/// not -32020…-32022, which 2026-era clients read as "modern server" (MCP-CONFORMANCE T-32).
pub const SERVER_ERROR: i64 = -32000;

/// A JSON-RPC error object.
#[derive(Debug, Clone, PartialEq)]
pub struct RpcError {
    /// The error code.
    pub code: i64,
    /// A short, safe message.
    pub message: String,
    /// Optional structured detail.
    pub data: Option<Value>,
}

impl RpcError {
    /// An error without data.
    pub fn new(code: i64, message: impl Into<String>) -> Self {
        RpcError { code, message: message.into(), data: None }
    }

    /// Attaches `data`.
    pub fn with_data(mut self, data: Value) -> Self {
        self.data = Some(data);
        self
    }

    fn to_json(&self) -> Value {
        let mut error = json!({ "code": self.code, "message": self.message });
        if let Some(data) = &self.data {
            error["data"] = data.clone();
        }
        error
    }
}

/// A request id: a string or an integer (basic §requests: not null, not fractional).
#[derive(Debug, Clone, PartialEq)]
pub struct Id(Value);

impl Id {
    /// The id as JSON.
    pub fn to_json(&self) -> String {
        self.0.to_string()
    }
}

/// One incoming message.
#[derive(Debug, Clone, PartialEq)]
pub enum Incoming {
    /// A request, which gets exactly one response.
    Request {
        /// Its id.
        id: Id,
        /// The method.
        method: String,
        /// Its params object (empty when absent).
        params: Map<String, Value>,
    },
    /// A notification or a response from the client: acknowledged with 202, never answered.
    NoReply {
        /// The method, for logs (`None` for responses).
        method: Option<String>,
    },
}

/// Classifies one JSON value. On error, returns the id when one could be read, so the error
/// response can carry it.
pub fn classify(value: Value) -> Result<Incoming, (Option<Id>, RpcError)> {
    // Members are taken out of the map rather than removed from it: it is dropped whole right
    // after, and each removal rebalances the tree.
    let Value::Object(mut object) = value else {
        return Err((None, RpcError::new(INVALID_REQUEST, "Invalid Request: expected a JSON-RPC object")));
    };
    let id = match object.get_mut("id").map(Value::take) {
        None => None,
        Some(v @ Value::String(_)) => Some(Id(v)),
        Some(Value::Number(n)) if n.is_i64() || n.is_u64() => Some(Id(Value::Number(n))),
        // An error response to a request whose id could not be read has none to give (JSON-RPC
        // 2.0 §5 writes `null`; 2025-11-25 `JSONRPCErrorResponse.id` is optional): still a
        // response, acknowledged below. A request's id is never null (MCP-CONFORMANCE L-10).
        Some(Value::Null) if object.contains_key("error") && !object.contains_key("method") => None,
        Some(_) => {
            return Err((
                None,
                RpcError::new(INVALID_REQUEST, "Invalid Request: id must be a string or an integer"),
            ));
        }
    };
    let invalid = |message: &str| {
        Err((id.clone(), RpcError::new(INVALID_REQUEST, format!("Invalid Request: {message}"))))
    };
    if object.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return invalid("jsonrpc must be \"2.0\"");
    }
    match object.get_mut("method").map(Value::take) {
        Some(Value::String(method)) => {
            let params = match object.get_mut("params").map(Value::take) {
                None | Some(Value::Null) => Map::new(),
                Some(Value::Object(params)) => params,
                Some(_) => {
                    let error = RpcError::new(INVALID_PARAMS, "Invalid params: params must be an object");
                    return match id {
                        Some(id) => Err((Some(id), error)),
                        None => Ok(Incoming::NoReply { method: Some(method) }),
                    };
                }
            };
            Ok(match id {
                Some(id) => Incoming::Request { id, method, params },
                None => Incoming::NoReply { method: Some(method) },
            })
        }
        Some(_) => invalid("method must be a string"),
        // A response: 202 like a notification (transports §sending-messages, MCP-CONFORMANCE
        // T-13). A result answers a request of ours, so it has an id; an error may have none.
        None if object.contains_key("error") || (id.is_some() && object.contains_key("result")) => {
            Ok(Incoming::NoReply { method: None })
        }
        None => invalid("a request needs a method"),
    }
}

/// A success response.
pub fn result_json(id: &Id, result: &Value) -> String {
    result_raw(id, &result.to_string())
}

/// A success response around an already serialised result (cached `tools/list` pages).
pub fn result_raw(id: &Id, result: &str) -> String {
    [result_head(id).as_str(), result, RESULT_TAIL].concat()
}

/// A success response up to its result: `{"jsonrpc":"2.0","id":…,"result":`.
pub fn result_head(id: &Id) -> String {
    [r#"{"jsonrpc":"2.0","id":"#, &id.to_json(), r#","result":"#].concat()
}

/// What closes a success response after its result.
pub const RESULT_TAIL: &str = "}";

/// An error response; `id` is omitted when unknown (2025-11-25 `JSONRPCErrorResponse.id` is
/// optional, and `null` would not validate against its schema).
pub fn error_json(id: Option<&Id>, error: &RpcError) -> String {
    let mut envelope = json!({ "jsonrpc": "2.0", "error": error.to_json() });
    if let Some(id) = id {
        envelope["id"] = id.0.clone();
    }
    envelope.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn classify_str(s: &str) -> Result<Incoming, (Option<Id>, RpcError)> {
        classify(serde_json::from_str(s).unwrap())
    }

    #[test]
    fn classifies_messages() {
        let r = classify_str(r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#).unwrap();
        assert!(matches!(r, Incoming::Request { ref method, .. } if method == "ping"));
        let r = classify_str(r#"{"jsonrpc":"2.0","id":"a","method":"x","params":{"k":1}}"#).unwrap();
        assert!(matches!(r, Incoming::Request { ref params, .. } if params["k"] == 1));
        let n = classify_str(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#).unwrap();
        assert_eq!(n, Incoming::NoReply { method: Some("notifications/initialized".into()) });
        let resp = classify_str(r#"{"jsonrpc":"2.0","id":3,"result":{}}"#).unwrap();
        assert_eq!(resp, Incoming::NoReply { method: None });
        // Error responses whose id is absent (2025-11-25) or null (JSON-RPC 2.0) are responses.
        for error in [
            r#"{"jsonrpc":"2.0","error":{"code":-32700,"message":"Parse error"}}"#,
            r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}"#,
            r#"{"jsonrpc":"2.0","id":"e","error":{"code":-32601,"message":"x"}}"#,
        ] {
            assert_eq!(classify_str(error).unwrap(), Incoming::NoReply { method: None }, "{error}");
        }
    }

    #[test]
    fn refuses_bad_envelopes() {
        for bad in [
            r#"[]"#,
            r#""x""#,
            r#"{"id":1,"method":"ping"}"#,
            r#"{"jsonrpc":"1.0","id":1,"method":"ping"}"#,
            r#"{"jsonrpc":"2.0","id":null,"method":"ping"}"#,
            r#"{"jsonrpc":"2.0","id":1.5,"method":"ping"}"#,
            r#"{"jsonrpc":"2.0","id":{},"method":"ping"}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":7}"#,
            r#"{"jsonrpc":"2.0","id":1}"#,
            // Only an error may come without an id, and a request's id is never null.
            r#"{"jsonrpc":"2.0","result":{}}"#,
            r#"{"jsonrpc":"2.0","id":null,"result":{}}"#,
            r#"{"jsonrpc":"2.0","id":null,"method":"ping","error":{"code":1,"message":"x"}}"#,
            r#"{"error":{"code":1,"message":"x"}}"#,
        ] {
            let (_, e) = classify_str(bad).unwrap_err();
            assert_eq!(e.code, INVALID_REQUEST, "{bad}");
        }
        let (id, e) = classify_str(r#"{"jsonrpc":"2.0","id":4,"method":"ping","params":[1]}"#).unwrap_err();
        assert_eq!(e.code, INVALID_PARAMS);
        assert_eq!(id.unwrap().to_json(), "4");
    }

    #[test]
    fn writes_envelopes() {
        let id = Id(Value::from("q"));
        assert_eq!(result_json(&id, &json!({})), r#"{"jsonrpc":"2.0","id":"q","result":{}}"#);
        let e = error_json(None, &RpcError::new(PARSE_ERROR, "Parse error"));
        assert_eq!(e, r#"{"error":{"code":-32700,"message":"Parse error"},"jsonrpc":"2.0"}"#);
        let e = error_json(Some(&id), &RpcError::new(RESOURCE_NOT_FOUND, "nf").with_data(json!({"uri":"u"})));
        assert!(e.contains(r#""id":"q""#) && e.contains(r#""data":{"uri":"u"}"#));
    }
}

//! A JSON-RPC request read straight from the body's bytes, without building a [`Value`], when
//! it has the shape nearly every request has: one object with `"jsonrpc":"2.0"`, an id, a method
//! and an object of params (or none), written without escapes or fractional numbers.
//!
//! Parsing `initialize` into a `Value` and classifying it was about 6% of its CPU under load
//! (a tree of maps and strings allocated and freed per request: bench/README.md). This reads
//! the same facts from borrowed slices of the body.
//!
//! **Invariant**: [`read`] answers only for bodies that serde_json parses without error and that
//! [`jsonrpc::classify`] takes for a request with the same id, method and params; it answers
//! `None` for everything else (errors, notifications, batches, escapes, fractions, deep nesting,
//! anything unusual), which then goes through serde_json and `classify` as before. So every
//! refusal, and its JSON-RPC code, still comes from one place. A differential test holds it.

use serde_json::{Map, Value};

use super::jsonrpc::{self, Id};

/// A request read by [`read`].
#[derive(Debug)]
pub struct Quick<'a> {
    /// Its id (a string or an integer).
    pub id: Id,
    /// Its method, as written (no escapes).
    pub method: &'a str,
    /// Its params.
    pub params: Params<'a>,
}

/// A request's params: the object serde_json built, or the text of an object [`read`] has
/// checked, read member by member when asked.
#[derive(Debug)]
pub enum Params<'a> {
    /// Parsed (the `Value` path).
    Parsed(Map<String, Value>),
    /// The object's text (`{}` when the request had none): valid JSON of the subset [`read`]
    /// takes, so its strings hold no escapes.
    Text(&'a str),
}

/// A member of a request's params, as far as the dispatcher looks at one.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Member<'a> {
    /// Not there.
    Absent,
    /// `null`.
    Null,
    /// A string.
    Str(&'a str),
    /// An object.
    Object,
    /// Anything else.
    Other,
}

impl<'a> Member<'a> {
    /// The string, if it is one.
    pub fn as_str(self) -> Option<&'a str> {
        match self {
            Member::Str(s) => Some(s),
            _ => None,
        }
    }

    /// Whether it is there and not `null`.
    pub fn is_present(self) -> bool {
        !matches!(self, Member::Absent | Member::Null)
    }

    fn of_value(value: Option<&'a Value>) -> Self {
        match value {
            None => Member::Absent,
            Some(Value::Null) => Member::Null,
            Some(Value::String(s)) => Member::Str(s),
            Some(Value::Object(_)) => Member::Object,
            Some(_) => Member::Other,
        }
    }

    /// A member's value as `read` has checked it: strings hold no escapes.
    fn of_text(raw: &'a str) -> Self {
        match raw.as_bytes().first() {
            Some(b'"') => Member::Str(&raw[1..raw.len() - 1]),
            Some(b'{') => Member::Object,
            Some(b'n') => Member::Null,
            _ => Member::Other,
        }
    }
}

impl Params<'_> {
    /// The members named `keys`, in one pass (the last of a repeated name, as serde_json's map
    /// keeps it).
    pub fn members<const N: usize>(&self, keys: [&str; N]) -> [Member<'_>; N] {
        let mut found = [Member::Absent; N];
        match self {
            Params::Parsed(map) => {
                for (slot, key) in found.iter_mut().zip(keys) {
                    *slot = Member::of_value(map.get(key));
                }
            }
            Params::Text(text) => {
                // Checked by `read`, so the scan runs to the end.
                Scan { text, at: 0 }.object(0, |name, raw| {
                    if let Some(i) = keys.iter().position(|k| *k == name) {
                        found[i] = Member::of_text(raw);
                    }
                    Some(())
                });
            }
        }
        found
    }

    /// The params as a map (parsed now for [`Params::Text`]).
    pub fn into_map(self) -> Map<String, Value> {
        match self {
            Params::Parsed(map) => map,
            // Checked by `read`, so it parses; `None` cannot happen, and an empty map is what a
            // request without params has.
            Params::Text(text) => match crate::json::parse(text) {
                Ok(Value::Object(map)) => map,
                _ => Map::new(),
            },
        }
    }
}

/// Reads a request in the common shape, or `None` (see the module's invariant).
pub fn read(body: &[u8]) -> Option<Quick<'_>> {
    // serde_json refuses invalid UTF-8 inside strings; outside them any non-ASCII byte is a
    // syntax error, which the scan below does not take either.
    let text = std::str::from_utf8(body).ok()?;
    let mut scan = Scan { text, at: 0 };
    let (mut jsonrpc, mut id, mut method, mut params) = (None, None, None, None);
    scan.ws();
    scan.object(0, |key, raw| {
        match key {
            "jsonrpc" => jsonrpc = Some(raw),
            "id" => id = Some(raw),
            "method" => method = Some(raw),
            "params" => params = Some(raw),
            _ => {}
        }
        Some(())
    })?;
    scan.ws();
    if scan.at != text.len() || jsonrpc? != "\"2.0\"" {
        return None;
    }
    let id = id_of(id?)?;
    let method = method?.strip_prefix('"')?.strip_suffix('"')?;
    let params = match params {
        None | Some("null") => Params::Text("{}"),
        Some(raw) if raw.starts_with('{') => Params::Text(raw),
        Some(_) => return None,
    };
    Some(Quick { id, method, params })
}

/// A string or an integer id, as serde_json reads it. Negative ids go the long way (serde_json
/// keeps `-0` as a float, which `classify` refuses).
fn id_of(raw: &str) -> Option<Id> {
    if let Some(text) = raw.strip_prefix('"').and_then(|r| r.strip_suffix('"')) {
        return Some(jsonrpc::Id::string(text));
    }
    raw.parse::<u64>().ok().map(jsonrpc::Id::integer)
}

/// Nesting deeper than this goes the long way (serde_json's own limit is 128).
const MAX_DEPTH: usize = 64;

/// A scanner of the JSON subset `read` takes: objects, arrays, strings without escapes or
/// control characters, integers without sign, fraction or exponent (at most 18 digits, so that
/// serde_json reads them as integers too), `true`, `false` and `null`. Each method answers
/// `None` for anything outside it.
struct Scan<'a> {
    text: &'a str,
    at: usize,
}

impl<'a> Scan<'a> {
    fn peek(&self) -> Option<u8> {
        self.text.as_bytes().get(self.at).copied()
    }

    fn ws(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.at += 1;
        }
    }

    fn eat(&mut self, byte: u8) -> Option<()> {
        (self.peek()? == byte).then(|| self.at += 1)
    }

    /// A string; returns its contents.
    fn string(&mut self) -> Option<&'a str> {
        self.eat(b'"')?;
        let start = self.at;
        let rest = &self.text.as_bytes()[start..];
        let len = rest.iter().position(|&b| b == b'"' || b == b'\\' || b < 0x20)?;
        if rest[len] != b'"' {
            return None;
        }
        self.at = start + len + 1;
        self.text.get(start..start + len)
    }

    /// One value; returns its text.
    fn value(&mut self, depth: usize) -> Option<&'a str> {
        let start = self.at;
        match self.peek()? {
            b'"' => {
                self.string()?;
            }
            b'{' => self.object(depth + 1, |_, _| Some(()))?,
            b'[' => self.array(depth + 1)?,
            b'0'..=b'9' => {
                let digits = self.text.as_bytes()[start..].iter().take_while(|b| b.is_ascii_digit()).count();
                if digits > 18 || (digits > 1 && self.peek() == Some(b'0')) {
                    return None;
                }
                self.at += digits;
                if matches!(self.peek(), Some(b'.' | b'e' | b'E')) {
                    return None;
                }
            }
            _ => {
                let word =
                    ["true", "false", "null"].into_iter().find(|w| self.text[start..].starts_with(w))?;
                self.at += word.len();
            }
        }
        self.text.get(start..self.at)
    }

    /// An object; calls `member` with each key and the text of its value.
    fn object(&mut self, depth: usize, mut member: impl FnMut(&'a str, &'a str) -> Option<()>) -> Option<()> {
        if depth > MAX_DEPTH {
            return None;
        }
        self.eat(b'{')?;
        self.ws();
        if self.eat(b'}').is_some() {
            return Some(());
        }
        loop {
            let key = self.string()?;
            self.ws();
            self.eat(b':')?;
            self.ws();
            let value = self.value(depth)?;
            member(key, value)?;
            self.ws();
            match self.peek()? {
                b',' => self.at += 1,
                b'}' => return self.eat(b'}'),
                _ => return None,
            }
            self.ws();
        }
    }

    fn array(&mut self, depth: usize) -> Option<()> {
        if depth > MAX_DEPTH {
            return None;
        }
        self.eat(b'[')?;
        self.ws();
        if self.eat(b']').is_some() {
            return Some(());
        }
        loop {
            self.value(depth)?;
            self.ws();
            match self.peek()? {
                b',' => self.at += 1,
                b']' => return self.eat(b']'),
                _ => return None,
            }
            self.ws();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mcp::jsonrpc::{Incoming, classify};

    /// What the serde_json path makes of `body`, when it is a request.
    fn long_way(body: &[u8]) -> Option<(String, String, Map<String, Value>)> {
        match classify(crate::json::parse(body).ok()?) {
            Ok(Incoming::Request { id, method, params }) => Some((id.to_json(), method, params)),
            _ => None,
        }
    }

    /// The invariant: whatever `read` takes, the long way takes alike, member for member.
    fn agrees(body: &[u8]) -> bool {
        let Some(quick) = read(body) else { return false };
        let (id, method, map) = long_way(body).unwrap_or_else(|| {
            panic!("read took what the long way refuses: {}", String::from_utf8_lossy(body))
        });
        let shown = String::from_utf8_lossy(body);
        assert_eq!(quick.id.to_json(), id, "{shown}");
        assert_eq!(quick.method, method, "{shown}");
        let keys = ["protocolVersion", "capabilities", "clientInfo", "cursor", "uri", "name", "k"];
        assert_eq!(quick.params.members(keys), Params::Parsed(map.clone()).members(keys), "{shown}");
        assert_eq!(quick.params.into_map(), map, "{shown}");
        true
    }

    const TAKEN: &[&str] = &[
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"bench","version":"1.0"}}}"#,
        r#"{"method":"tools/list","jsonrpc":"2.0","id":"a-1"}"#,
        r#"{"jsonrpc":"2.0","id":0,"method":"ping","params":null}"#,
        " \t\r\n{ \"jsonrpc\" : \"2.0\" , \"id\" : 18446744073709551 , \"method\" : \"tools/list\" , \"params\" : { } } \n",
        r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"get_workspace_context","arguments":{"a":[1,true,false,null,{"b":[]}],"é":"ünïcode ✓"}}}"#,
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{"cursor":null}}"#,
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{"cursor":"x"}}"#,
        r#"{"jsonrpc":"2.0","id":3,"method":"resources/read","params":{"uri":"ui://vibesell/card","uri":"last"}}"#,
        r#"{"jsonrpc":"2.0","id":1,"id":"second","method":"a","method":"b","params":{"k":1},"extra":[{}]}"#,
        r#"{"jsonrpc":"2.0","id":4,"method":"x","params":{"k":{"protocolVersion":"nested"},"capabilities":"str"}}"#,
        r#"{"jsonrpc":"2.0","id":5,"method":"","params":{"":""}}"#,
        "{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"x\",\"params\":{\"k\":\"\u{7f}\"}}",
    ];

    /// The long way's business: errors, notifications, responses, batches, and what the scan
    /// does not take.
    const LEFT: &[&str] = &[
        r#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#,
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        r#"{"jsonrpc":"2.0","id":3,"result":{}}"#,
        r#"{"jsonrpc":"2.0","id":-1,"method":"ping"}"#,
        r#"{"jsonrpc":"2.0","id":-0,"method":"ping"}"#,
        r#"{"jsonrpc":"2.0","id":1.0,"method":"ping"}"#,
        r#"{"jsonrpc":"2.0","id":1e2,"method":"ping"}"#,
        r#"{"jsonrpc":"2.0","id":1234567890123456789,"method":"ping"}"#,
        r#"{"jsonrpc":"2.0","id":null,"method":"ping"}"#,
        r#"{"jsonrpc":"2.0","id":{},"method":"ping"}"#,
        r#"{"jsonrpc":"2.0","id":01,"method":"ping"}"#,
        r#"{"jsonrpc":"2.0","id":"a\"b","method":"ping"}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"p\u0069ng"}"#,
        r#"{"jsonrpc":"1.0","id":1,"method":"ping"}"#,
        r#"{"jsonrpc":2.0,"id":1,"method":"ping"}"#,
        r#"{"id":1,"method":"ping"}"#,
        r#"{"jsonrpc":"2.0","id":1}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":7}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"ping","params":[1]}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"ping","params":"x"}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"ping",}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"ping"} x"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"ping""#,
        r#"{"jsonrpc":"2.0","id":1,"method":"ping","params":{"k":tru}}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"ping","params":{"k":[1,]}}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"ping","params":{"k":-5}}"#,
        "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"pi\tng\"}",
        "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\u{a0}",
        "\u{feff}{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}",
        "",
        "null",
        "\"x\"",
    ];

    #[test]
    fn takes_the_common_shape_as_serde_json_does() {
        for body in TAKEN {
            assert!(agrees(body.as_bytes()), "not taken: {body}");
        }
    }

    #[test]
    fn leaves_the_rest_to_serde_json() {
        for body in LEFT {
            assert!(read(body.as_bytes()).is_none(), "taken: {body}");
        }
        // Invalid UTF-8 in a string, and nesting past the scan's depth.
        assert!(read(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"\xff\"}").is_none());
        let deep = format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"x","params":{{"k":{}1{}}}}}"#,
            "[".repeat(MAX_DEPTH + 1),
            "]".repeat(MAX_DEPTH + 1)
        );
        assert!(read(deep.as_bytes()).is_none());
        assert!(long_way(deep.as_bytes()).is_some(), "the long way still takes it");
        let shallow = deep.replace(&"[".repeat(MAX_DEPTH - 2), "").replace(&"]".repeat(MAX_DEPTH - 2), "");
        assert!(agrees(shallow.as_bytes()));
    }

    /// Every body one edit away from the samples (a byte removed, or one of JSON's structural
    /// bytes put in): whatever the scan takes, serde_json and `classify` take alike.
    #[test]
    fn agrees_with_serde_json_one_edit_away() {
        let mut taken = 0;
        let inserts = b"{}[]\":,0-1.e \\tnu\x01";
        for body in TAKEN {
            let bytes = body.as_bytes();
            for at in 0..=bytes.len() {
                if at < bytes.len() {
                    let mut cut = bytes.to_vec();
                    cut.remove(at);
                    taken += usize::from(agrees(&cut));
                }
                for &byte in inserts {
                    let mut grown = bytes.to_vec();
                    grown.insert(at, byte);
                    taken += usize::from(agrees(&grown));
                }
            }
        }
        // The edits that keep a request (whitespace, digits in values, keys renamed) are taken.
        assert!(taken > 500, "only {taken} edited bodies were taken");
    }
}

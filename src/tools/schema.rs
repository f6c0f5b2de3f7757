//! JSON Schemas derived from the tools' Rust types, and a validator for the subset of JSON
//! Schema 2020-12 that those derived schemas use.
//!
//! The input schema a model sees is the contract, so arguments are checked against that very
//! schema before serde turns them into the input type: a limit written once as
//! `#[schemars(length(max = 500))]` is both advertised and enforced. A catalogue test makes sure
//! no input schema uses a keyword this validator does not enforce.
//!
//! The schemas depend only on the types, so they are derived natively, never in the Worker:
//! `cargo test` writes them to `src/tools/schemas.json` (`UPDATE_SNAPSHOTS=1`) and fails when
//! that file is stale, `build.rs` turns it into a table of compact JSON strings, and the Worker
//! serves and validates against those ([`embedded`]). Schema derivation (schemars and the
//! `JsonSchema` impls of every tool type) is therefore dead code in the Worker, which the linker
//! drops. Native builds (the tests) derive them directly.

use std::borrow::Cow;

#[cfg(not(target_arch = "wasm32"))]
use schemars::JsonSchema;
#[cfg(not(target_arch = "wasm32"))]
use schemars::generate::SchemaSettings;
use serde_json::{Map, Value};

/// A tool's schemas as `tools/list` copies them, each as JSON text; the description is the
/// declaration's own ([`crate::tools::registry::Tool::DESCRIPTION`]).
#[derive(Debug, Clone)]
pub struct Schemas {
    /// The schema of the arguments.
    pub input: Cow<'static, str>,
    /// The schema of the `structuredContent`.
    pub output: Cow<'static, str>,
}

#[cfg(any(test, target_arch = "wasm32"))]
mod table {
    include!(concat!(env!("OUT_DIR"), "/schemas.rs"));
}

/// The contract of the tool `name` as generated into `src/tools/schemas.json`, if it is there.
#[cfg(any(test, target_arch = "wasm32"))]
pub fn embedded(name: &str) -> Option<Schemas> {
    let i = table::SCHEMAS.binary_search_by(|(n, _)| (*n).cmp(name)).ok()?;
    let (_, [a, b, c, d]) = table::SCHEMAS[i];
    let text = |from: u32, to: u32| {
        crate::embedded::schema_text().get(from as usize..to as usize).map(Cow::Borrowed)
    };
    Some(Schemas { input: text(a, b)?, output: text(c, d)? })
}

/// The names in the embedded table, in its order.
#[cfg(test)]
pub fn embedded_names() -> Vec<&'static str> {
    table::SCHEMAS.iter().map(|(n, _)| *n).collect()
}

/// The schemas of `I` (arguments) and `O` (`structuredContent`), derived from the types.
#[cfg(not(target_arch = "wasm32"))]
pub fn derived<I: JsonSchema, O: JsonSchema>() -> Schemas {
    Schemas {
        input: Cow::Owned(input_schema::<I>().to_string()),
        output: Cow::Owned(output_schema::<O>().to_string()),
    }
}

/// Keywords the validator enforces, plus annotations it may ignore safely.
pub const SUPPORTED_KEYWORDS: &[&str] = &[
    "type",
    "properties",
    "required",
    "additionalProperties",
    "items",
    "enum",
    "const",
    "oneOf",
    "anyOf",
    "minLength",
    "maxLength",
    "minimum",
    "maximum",
    "minItems",
    "maxItems",
    "uniqueItems",
    // annotations
    "description",
    "title",
    "default",
    "format",
    "examples",
];

#[cfg(not(target_arch = "wasm32"))]
fn settings() -> SchemaSettings {
    SchemaSettings::draft2020_12().with(|s| {
        // Each tool schema is self-contained: no `$defs`/`$ref` for a model or a client to chase.
        s.inline_subschemas = true;
        s.meta_schema = None;
    })
}

#[cfg(not(target_arch = "wasm32"))]
/// The schema of a tool's arguments (deserialisation contract).
pub fn input_schema<T: JsonSchema>() -> Value {
    let mut schema = settings().for_deserialize().into_generator().into_root_schema_for::<T>().to_value();
    strip_root_annotations(&mut schema);
    schema
}

#[cfg(not(target_arch = "wasm32"))]
/// The schema of a tool's `structuredContent` (serialisation contract), with `kind` as a
/// `const`. Output structs carry `#[serde(tag = "kind", rename = "<kind>")]`, which schemars
/// reports as the root title; enums of several kinds already carry a `const` per variant.
pub fn output_schema<T: JsonSchema>() -> Value {
    let mut schema = settings().for_serialize().into_generator().into_root_schema_for::<T>().to_value();
    let title = schema.get("title").and_then(Value::as_str).map(str::to_owned);
    if let (Some(kind), Some(properties)) =
        (title, schema.get_mut("properties").and_then(Value::as_object_mut))
    {
        properties.insert("kind".into(), serde_json::json!({ "type": "string", "const": kind }));
        if let Some(required) = schema.get_mut("required").and_then(Value::as_array_mut) {
            required.insert(0, Value::from("kind"));
        } else {
            schema["required"] = serde_json::json!(["kind"]);
        }
    }
    strip_root_annotations(&mut schema);
    drop_descriptions(&mut schema);
    // MCP 2025-11-25 `Tool.outputSchema` must have an object root, also for `oneOf` enums.
    schema["type"] = Value::from("object");
    schema
}

#[cfg(not(target_arch = "wasm32"))]
/// An output schema is for validating `structuredContent` (MCP 2025-11-25, "Output Schema"):
/// clients check results against it, and models read the result's text, not the schema. The
/// fields' doc comments as `description`s were 55 of the 155 KB of `tools/list`, sent on every
/// connection, and 5 KB of the module's packed text (bench/README.md, "`tools/list` without the
/// results' prose"); they stay in the code. Only string `description`s are annotations: a
/// property named `description` is a schema object under `properties`, and stays.
fn drop_descriptions(schema: &mut Value) {
    match schema {
        Value::Object(object) => {
            object.retain(|key, value| !(key == "description" && value.is_string()));
            object.values_mut().for_each(drop_descriptions);
        }
        Value::Array(items) => items.iter_mut().for_each(drop_descriptions),
        _ => {}
    }
}

#[cfg(not(target_arch = "wasm32"))]
fn strip_root_annotations(schema: &mut Value) {
    if let Some(object) = schema.as_object_mut() {
        object.remove("title");
        object.remove("description");
    }
    unwrap_descriptions(schema);
}

#[cfg(not(target_arch = "wasm32"))]
/// Doc comments are wrapped at the source's line width; a description is one paragraph. Also
/// drops schemars' numeric formats (`int64`, `uint32`, `double`…), which no JSON Schema
/// vocabulary defines (they are OpenAPI's; clients' validators warn about them): `type` and the
/// bounds say what a value may be. Every tool lists them, so they also cost `tools/list` bytes.
fn unwrap_descriptions(schema: &mut Value) {
    match schema {
        Value::Object(object) => {
            if object
                .get("format")
                .and_then(Value::as_str)
                .is_some_and(|f| ["int", "uint", "float", "double"].iter().any(|n| f.starts_with(n)))
            {
                object.remove("format");
            }
            for (key, value) in object.iter_mut() {
                match value {
                    Value::String(text) if key == "description" && text.contains('\n') => {
                        *text = text.split('\n').map(str::trim).collect::<Vec<_>>().join(" ");
                    }
                    _ => unwrap_descriptions(value),
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(unwrap_descriptions),
        _ => {}
    }
}

/// The `kind` values an output schema can carry.
pub fn kinds(output_schema: &Value) -> Vec<String> {
    let consts = |s: &Value| s.pointer("/properties/kind/const").and_then(Value::as_str).map(str::to_owned);
    match output_schema.get("oneOf").and_then(Value::as_array) {
        Some(variants) => variants.iter().filter_map(consts).collect(),
        None => consts(output_schema).into_iter().collect(),
    }
}

/// Checks `value` against `schema`; the error names the offending field and says what is wrong.
pub fn validate(schema: &Value, value: &Value) -> Result<(), String> {
    check(schema, &mut value.clone(), "")
}

/// Checks a tool's arguments against its input schema, as [`validate`], and writes each whole
/// number that stands where the schema wants an integer (`5.0`, `5e0`) as that integer, so that
/// serde, which decodes no float into an integer field, then takes what the schema accepted.
pub fn validate_arguments(schema: &Value, arguments: &mut Value) -> Result<(), String> {
    check(schema, arguments, "")
}

fn at(path: &str) -> String {
    if path.is_empty() { "the arguments".to_owned() } else { format!("`{path}`") }
}

fn type_name(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() => "an integer",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

fn has_type(value: &Value, ty: &str) -> bool {
    match ty {
        "null" => value.is_null(),
        "boolean" => value.is_boolean(),
        "integer" => value.as_i64().is_some() || value.as_u64().is_some(),
        "number" => value.is_number(),
        "string" => value.is_string(),
        "array" => value.is_array(),
        "object" => value.is_object(),
        _ => false,
    }
}

/// The integer a whole-number float equals: JSON Schema 2020-12 counts any number with a zero
/// fractional part as an integer (Validation §6.1.1), so `5.0` and `5e0` are. `None` for a
/// fraction, and beyond what `i64`/`u64` hold, which no integer field here can take anyway.
fn whole_number(value: &Value) -> Option<Value> {
    let x = value.as_f64()?;
    if x.fract() != 0.0 {
        None
    } else if (-9_223_372_036_854_775_808.0..0.0).contains(&x) {
        Some(Value::from(x as i64))
    } else if (0.0..18_446_744_073_709_551_616.0).contains(&x) {
        Some(Value::from(x as u64))
    } else {
        None
    }
}

fn check(schema: &Value, value: &mut Value, path: &str) -> Result<(), String> {
    let Some(schema) = schema.as_object() else { return Ok(()) };
    if let Some(ty) = schema.get("type") {
        let types: Vec<&str> = match ty {
            Value::String(t) => vec![t.as_str()],
            Value::Array(ts) => ts.iter().filter_map(Value::as_str).collect(),
            _ => vec![],
        };
        if !types.iter().any(|t| has_type(value, t)) {
            match whole_number(value) {
                // Before `enum`, `const` and the bounds below, which then see the integer too.
                Some(integer) if types.contains(&"integer") => *value = integer,
                _ => {
                    let expected =
                        types.iter().filter(|t| **t != "null").copied().collect::<Vec<_>>().join(" or ");
                    return Err(format!(
                        "{} must be {}, not {}",
                        at(path),
                        article(&expected),
                        type_name(value)
                    ));
                }
            }
        }
    }
    if let Some(Value::Array(options)) = schema.get("enum")
        && !options.contains(value)
    {
        return Err(format!("{} must be one of {}", at(path), list(options)));
    }
    if let Some(expected) = schema.get("const")
        && expected != value
    {
        return Err(format!("{} must be {expected}", at(path)));
    }
    for key in ["oneOf", "anyOf"] {
        if let Some(Value::Array(variants)) = schema.get(key)
            && !variants.iter().any(|v| check(v, value, path).is_ok())
        {
            let consts: Vec<Value> = variants.iter().filter_map(|v| v.get("const").cloned()).collect();
            return Err(if consts.len() == variants.len() {
                format!("{} must be one of {}", at(path), list(&consts))
            } else {
                // Report the first variant's complaint: it is the most specific guidance.
                variants.iter().find_map(|v| check(v, value, path).err()).unwrap_or_default()
            });
        }
    }
    match value {
        Value::String(s) => {
            let chars = s.chars().count() as u64;
            if let Some(min) = schema.get("minLength").and_then(Value::as_u64)
                && chars < min
            {
                return Err(if min == 1 {
                    format!("{} must not be empty", at(path))
                } else {
                    format!("{} must have at least {min} characters", at(path))
                });
            }
            if let Some(max) = schema.get("maxLength").and_then(Value::as_u64)
                && chars > max
            {
                return Err(format!("{} is too long: {chars} characters, {max} at most", at(path)));
            }
        }
        Value::Number(n) => {
            // The bounds are printed as the schema writes them (serde_json's `Number`), not as
            // `f64`s: a float's `{}` would bring core's float formatter into the Worker.
            let x = n.as_f64().unwrap_or(0.0);
            let bound = |key| schema.get(key).filter(|b| b.is_number());
            if let Some(min) = bound("minimum")
                && x < min.as_f64().unwrap_or(f64::MIN)
            {
                return Err(format!("{} must be at least {min}", at(path)));
            }
            if let Some(max) = bound("maximum")
                && x > max.as_f64().unwrap_or(f64::MAX)
            {
                return Err(format!("{} must be at most {max}", at(path)));
            }
        }
        Value::Array(items) => {
            if let Some(min) = schema.get("minItems").and_then(Value::as_u64)
                && (items.len() as u64) < min
            {
                return Err(format!("{} needs at least {min} item(s)", at(path)));
            }
            if let Some(max) = schema.get("maxItems").and_then(Value::as_u64)
                && items.len() as u64 > max
            {
                return Err(format!("{} has {} items, {max} at most", at(path), items.len()));
            }
            // The items first, so that `[5, 5.0]` compares as the integers both are.
            if let Some(item_schema) = schema.get("items") {
                for (i, item) in items.iter_mut().enumerate() {
                    check(item_schema, item, &format!("{path}[{i}]"))?;
                }
            }
            if schema.get("uniqueItems") == Some(&Value::Bool(true)) {
                for (i, item) in items.iter().enumerate() {
                    if items[..i].contains(item) {
                        return Err(format!("{} lists {item} twice", at(path)));
                    }
                }
            }
        }
        Value::Object(object) => check_object(schema, object, path)?,
        Value::Null | Value::Bool(_) => {}
    }
    Ok(())
}

fn check_object(
    schema: &Map<String, Value>,
    object: &mut Map<String, Value>,
    path: &str,
) -> Result<(), String> {
    let empty = Map::new();
    let properties = schema.get("properties").and_then(Value::as_object).unwrap_or(&empty);
    let child = |key: &str| if path.is_empty() { key.to_owned() } else { format!("{path}.{key}") };
    if let Some(Value::Array(required)) = schema.get("required") {
        for key in required.iter().filter_map(Value::as_str) {
            if !object.contains_key(key) {
                return Err(format!("`{}` is required", child(key)));
            }
        }
    }
    for (key, value) in object.iter_mut() {
        match properties.get(key) {
            Some(property) => check(property, value, &child(key))?,
            None => match schema.get("additionalProperties") {
                Some(Value::Bool(false)) => {
                    let known: Vec<&str> = properties.keys().map(String::as_str).collect();
                    return Err(format!(
                        "`{}` is not a known field{}",
                        child(key),
                        if known.is_empty() {
                            String::new()
                        } else {
                            format!("; the fields are {}", known.join(", "))
                        }
                    ));
                }
                Some(extra @ Value::Object(_)) => check(extra, value, &child(key))?,
                _ => {}
            },
        }
    }
    Ok(())
}

fn article(expected: &str) -> String {
    match expected {
        "integer" | "array" | "object" => format!("an {expected}"),
        "" => "something else".to_owned(),
        other => format!("a {other}"),
    }
}

fn list(values: &[Value]) -> String {
    values.iter().map(Value::to_string).collect::<Vec<_>>().join(", ")
}

/// Every keyword used anywhere in `schema` (object keys that are not property names).
pub fn keywords(schema: &Value, out: &mut Vec<String>) {
    if let Value::Object(object) = schema {
        for (key, value) in object {
            if !out.contains(key) {
                out.push(key.clone());
            }
            match key.as_str() {
                "properties" => {
                    for property in value.as_object().into_iter().flat_map(Map::values) {
                        keywords(property, out);
                    }
                }
                "enum" | "const" | "default" | "examples" => {}
                _ => keywords(value, out),
            }
        }
    } else if let Value::Array(items) = schema {
        for item in items {
            keywords(item, out);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::{Deserialize, Serialize};
    use serde_json::json;

    /// Test input.
    #[derive(Deserialize, JsonSchema)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct Input {
        /// A note.
        #[schemars(length(min = 1, max = 5))]
        note: String,
        /// Some tags.
        #[serde(default)]
        #[schemars(length(max = 2))]
        tags: Vec<Tag>,
        /// A count.
        #[schemars(range(min = 1, max = 10))]
        count: Option<u32>,
        /// A mode.
        mode: Option<Mode>,
    }

    /// A tag.
    #[derive(Deserialize, JsonSchema)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct Tag {
        /// Its name.
        #[schemars(length(min = 1, max = 3))]
        name: String,
    }

    /// A mode.
    #[derive(Deserialize, Serialize, JsonSchema)]
    #[serde(rename_all = "snake_case")]
    #[allow(dead_code)]
    enum Mode {
        /// Fast.
        Fast,
        /// Slow.
        Slow,
    }

    /// Output.
    #[derive(Serialize, JsonSchema)]
    #[serde(tag = "kind", rename = "memory")]
    struct Output {
        /// Id.
        id: u32,
        /// A property named like the annotation.
        description: Option<Mode>,
    }

    #[test]
    fn validates_against_derived_schemas() {
        let schema = input_schema::<Input>();
        assert!(validate(&schema, &json!({"note": "hi"})).is_ok());
        assert!(validate(&schema, &json!({"note": "hi", "count": null, "mode": "fast"})).is_ok());
        let err = |v: Value| validate(&schema, &v).unwrap_err();
        assert_eq!(err(json!({})), "`note` is required");
        assert_eq!(err(json!({"note": ""})), "`note` must not be empty");
        assert_eq!(err(json!({"note": "toolong"})), "`note` is too long: 7 characters, 5 at most");
        assert_eq!(err(json!({"note": 3})), "`note` must be a string, not an integer");
        assert_eq!(err(json!({"note": "a", "count": 0})), "`count` must be at least 1");
        assert_eq!(err(json!({"note": "a", "count": 2.5})), "`count` must be an integer, not a number");
        assert_eq!(err(json!({"note": "a", "mode": "x"})), r#"`mode` must be one of "fast", "slow""#);
        assert!(err(json!({"note": "a", "extra": 1})).starts_with("`extra` is not a known field"));
        assert_eq!(
            err(json!({"note": "a", "tags": [{"name": "abcd"}]})),
            "`tags[0].name` is too long: 4 characters, 3 at most"
        );
        assert_eq!(
            err(json!({"note": "a", "tags": [{"name":"a"},{"name":"b"},{"name":"c"}]})),
            "`tags` has 3 items, 2 at most"
        );
        assert_eq!(err(json!([1])), "the arguments must be an object, not an array");
    }

    /// JSON Schema 2020-12 (Validation §6.1.1) counts a number with no fractional part as an
    /// integer, and serde then has to see it as one.
    #[test]
    fn whole_numbers_are_integers() {
        let schema = input_schema::<Input>();
        for text in
            [r#"{"note":"a","count":5.0}"#, r#"{"note":"a","count":5e0}"#, r#"{"note":"a","count":0.5E1}"#]
        {
            let mut args: Value = serde_json::from_str(text).unwrap();
            assert!(args["count"].is_f64() && validate(&schema, &args).is_ok(), "{text}");
            validate_arguments(&schema, &mut args).unwrap();
            assert!(args["count"].is_u64(), "{text}");
            let input: Input = serde_json::from_value(args).unwrap();
            assert_eq!(input.count, Some(5), "{text}");
        }
        let err = |v: Value| validate(&schema, &v).unwrap_err();
        assert_eq!(err(json!({"note": "a", "count": 5.5})), "`count` must be an integer, not a number");
        assert_eq!(err(json!({"note": "a", "count": 1e300})), "`count` must be an integer, not a number");
        assert_eq!(err(json!({"note": "a", "count": 11.0})), "`count` must be at most 10");
        assert_eq!(err(json!({"note": "a", "count": 0.0})), "`count` must be at least 1");
        // Anywhere in the arguments, before `enum` and `uniqueItems` compare them.
        let schema = json!({"type": "object", "properties": {
            "n": {"type": ["integer", "null"], "enum": [-3, 0, 2, null]},
            "list": {"type": "array", "items": {"type": "integer"}, "uniqueItems": true},
            "x": {"type": "number"},
        }});
        let mut args = json!({"n": -3.0, "list": [2.0, 9_007_199_254_740_992.0], "x": 1.0});
        validate_arguments(&schema, &mut args).unwrap();
        assert_eq!(args, json!({"n": -3, "list": [2, 9_007_199_254_740_992_u64], "x": 1.0}));
        assert!(args["n"].is_i64() && args["x"].is_f64(), "a number stays as it came");
        let mut zero = json!({"n": -0.0});
        validate_arguments(&schema, &mut zero).unwrap();
        assert_eq!(zero, json!({"n": 0}));
        assert_eq!(validate(&schema, &json!({"list": [5, 5.0]})).unwrap_err(), "`list` lists 5 twice");
    }

    #[test]
    fn output_schemas_carry_their_kind() {
        let schema = output_schema::<Output>();
        assert_eq!(schema["properties"]["kind"]["const"], "memory");
        assert_eq!(schema["required"][0], "kind");
        assert_eq!(schema["type"], "object");
        assert!(schema.get("title").is_none());
        assert_eq!(kinds(&schema), vec!["memory"]);
        assert_eq!(serde_json::to_value(Output { id: 1, description: None }).unwrap()["kind"], "memory");
    }

    #[test]
    fn output_schemas_carry_no_prose() {
        let schema = output_schema::<Output>();
        assert_eq!(schema["properties"]["id"], json!({"type": "integer", "minimum": 0}));
        // The property called `description` is a schema, not an annotation: it stays, without
        // its own prose, down to the enum's variants.
        let property = &schema["properties"]["description"];
        assert!(property.is_object(), "{schema}");
        assert!(!property.to_string().contains("\"description\""), "{property}");
        // Input schemas keep theirs: a model reads them to fill the arguments.
        assert_eq!(input_schema::<Input>()["properties"]["note"]["description"], "A note.");
    }
}

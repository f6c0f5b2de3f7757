//! JSON text and [`Value`]s to typed values, in one place, through one deserializer.
//!
//! Every `Deserialize` type is compiled once per deserializer it meets. Tool arguments, stored
//! documents, provider replies and database rows are all decoded here, so each type exists once
//! in the Worker's wasm:
//!
//! - Text is parsed into a [`Value`] first ([`decode`]): one shared parser, where
//!   `serde_json::from_str` compiled a second copy of every type read from text (a
//!   `Deserializer<StrRead>` per type, with its map and sequence accessors). The cost is a second
//!   pass over the parsed tree, small beside the request around it: these are short documents.
//! - A [`Value`] is read by [`from_value`], not `serde_json::from_value`, which compiled both of
//!   serde's ways to read a struct for every type: from a map (`visit_map`: a match on each key,
//!   a slot per field, duplicate and missing checks, and a field-name visitor) and from an array
//!   of its fields in order (`visit_seq`). This one reads a struct from an object only, but hands
//!   it to the derived code as the sequence of its fields in declared order (`deserialize_struct`
//!   is given their names), each looked up in the object: only the smaller `visit_seq` is
//!   compiled, and every struct's `visit_map` and field visitor are dead code (21 KB of the
//!   module's gzip size, 100 KB of its raw size: docs/scale.md). A field the object lacks is `None` to an
//!   `Option`, the default of a `#[serde(default)]` field, and otherwise serde's own
//!   `missing field` error; otherwise it answers exactly as serde_json's does (same messages).
//! - Database rows ([`from_entries`], used by `store::Rows`) go through the same path, so a type
//!   read both from a row and from a document shares its decoding code.
//!
//! Two things follow for decoded types, each held by a test here:
//!
//! - No `#[serde(alias)]`: serde lists a field's aliases among the names it gives, so the
//!   positions would no longer be the fields'. Rows name their columns as the type's fields
//!   (`first_name AS firstName`).
//! - `#[serde(deny_unknown_fields)]` is not seen by this path. Keys that are no field are ignored,
//!   except under [`decode_strict`] (configuration), which refuses them at every level with
//!   serde's `unknown field` message. Tool arguments are held to their input schema, with its
//!   `additionalProperties: false`, before they are decoded (`tools::registry`).
//!
//! Types that are decoded do not use `#[serde(flatten)]`, `tag = ...` or `untagged`: serde reads
//! those by buffering the input in its private `Content` form, a second decoding path that cost
//! the Worker about 12 KB gzip. Read such a document as two structs from one object, or by its
//! tag first (`oauth::clients::Client`, `workspace::sending::Settled`); writing them is fine.

use std::borrow::Cow;

use serde::de::{self, DeserializeOwned, DeserializeSeed, Expected, Unexpected, Visitor};
use serde_json::{Map, Value};

/// Parses JSON text (UTF-8 bytes or a string).
pub fn parse(text: impl AsRef<[u8]>) -> serde_json::Result<Value> {
    serde_json::from_slice(text.as_ref())
}

/// Parses JSON text into `T` (what `serde_json::from_str` does, through a [`Value`]).
pub fn decode<T: DeserializeOwned>(text: impl AsRef<[u8]>) -> serde_json::Result<T> {
    from_value(parse(text)?)
}

/// Reads `T` from a [`Value`] (what `serde_json::from_value` does, structs from objects only).
pub fn from_value<T: DeserializeOwned>(value: Value) -> serde_json::Result<T> {
    T::deserialize(ValueDeserializer(value)).map_err(Error::into_json)
}

/// [`decode`], refusing a key that is no field of its struct, at every level, as
/// `#[serde(deny_unknown_fields)]` would: for configuration, where such a key is a mistake to
/// report rather than a newer field to ignore.
pub fn decode_strict<T: DeserializeOwned>(text: impl AsRef<[u8]>) -> serde_json::Result<T> {
    let value = parse(text)?;
    let _strict = Strict::begin();
    from_value(value)
}

thread_local! {
    /// Whether a [`decode_strict`] is under way on this thread.
    static STRICT: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Strict decoding until dropped, however the decoding ends.
struct Strict(bool);

impl Strict {
    fn begin() -> Strict {
        Strict(STRICT.with(|s| s.replace(true)))
    }
}

impl Drop for Strict {
    fn drop(&mut self) {
        STRICT.with(|s| s.set(self.0));
    }
}

/// Reads `T` from named values, as from an object with these entries in this order (a database
/// row: column names and their values).
/// The entries are boxed by the caller (`Box::new(iter)`), once per call site rather than once per
/// type read.
pub fn from_entries<T: DeserializeOwned>(entries: Entries<'_>) -> serde_json::Result<T> {
    T::deserialize(EntriesDeserializer(entries)).map_err(Error::into_json)
}

/// The entries of an object or row, boxed so that one [`MapAccess`] type serves both.
pub type Entries<'a> = Box<dyn Iterator<Item = (Cow<'a, str>, Value)> + 'a>;

/// A decoding error: serde's message, handed over as a `serde_json::Error` at the public
/// functions.
///
/// Its own type rather than `serde_json::Error` for one reason, the wasm's size: serde's default
/// `invalid_type` and `invalid_value`, serde_json's included, print the value through
/// `Unexpected`'s `Display`, whose float case is core's float formatter (about 18 KB raw of wasm,
/// docs/scale.md). These print serde_json's words, the float through serde_json's own
/// formatter, which the Worker has anyway.
///
/// Boxed to be one pointer wide, as `serde_json::Error` is: every `Result` of the decoding code
/// carries it, and a `String` beside each value made the module 6 KB (gzip) larger.
#[derive(Debug)]
#[expect(clippy::box_collection, reason = "one pointer wide: a smaller Result everywhere (wasm size)")]
struct Error(Box<String>);

impl Error {
    #[inline(never)]
    fn into_json(self) -> serde_json::Error {
        de::Error::custom(*self.0)
    }

    #[inline(never)]
    fn unexpected(what: &str, unexpected: Unexpected<'_>, expected: &dyn Expected) -> Error {
        // serde_json's words (its `JsonUnexpected`: `null`, floats by its own formatter), the
        // rest serde's `Display for Unexpected` word for word, which cannot be called: it is one
        // function with core's float case in it.
        let shown: Cow<'_, str> = match unexpected {
            Unexpected::Bool(b) => format!("boolean `{b}`").into(),
            Unexpected::Unsigned(n) => format!("integer `{n}`").into(),
            Unexpected::Signed(n) => format!("integer `{n}`").into(),
            // A JSON number is finite, so `None` (NaN, an infinity) is never reached from a `Value`.
            Unexpected::Float(f) => match serde_json::Number::from_f64(f) {
                Some(n) => format!("floating point `{n}`").into(),
                None => "floating point".into(),
            },
            Unexpected::Char(c) => format!("character `{c}`").into(),
            Unexpected::Str(s) => format!("string {s:?}").into(),
            Unexpected::Bytes(_) => "byte array".into(),
            Unexpected::Unit => "null".into(),
            Unexpected::Option => "Option value".into(),
            Unexpected::NewtypeStruct => "newtype struct".into(),
            Unexpected::Seq => "sequence".into(),
            Unexpected::Map => "map".into(),
            Unexpected::Enum => "enum".into(),
            Unexpected::UnitVariant => "unit variant".into(),
            Unexpected::NewtypeVariant => "newtype variant".into(),
            Unexpected::TupleVariant => "tuple variant".into(),
            Unexpected::StructVariant => "struct variant".into(),
            Unexpected::Other(other) => other.into(),
        };
        Error(Box::new(format!("invalid {what}: {shown}, expected {expected}")))
    }
}

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Error {}

impl de::Error for Error {
    fn custom<T: std::fmt::Display>(msg: T) -> Error {
        Error(Box::new(msg.to_string()))
    }

    fn invalid_type(unexpected: Unexpected<'_>, expected: &dyn Expected) -> Error {
        Error::unexpected("type", unexpected, expected)
    }

    fn invalid_value(unexpected: Unexpected<'_>, expected: &dyn Expected) -> Error {
        Error::unexpected("value", unexpected, expected)
    }
}

/// What serde's messages call the value (`invalid type: string "x", expected u32`), as
/// serde_json's `Value` deserializer names it.
fn unexpected(value: &Value) -> Unexpected<'_> {
    match value {
        Value::Null => Unexpected::Unit,
        Value::Bool(b) => Unexpected::Bool(*b),
        Value::Number(n) => match (n.as_u64(), n.as_i64()) {
            (Some(u), _) => Unexpected::Unsigned(u),
            (None, Some(i)) => Unexpected::Signed(i),
            _ => Unexpected::Float(n.as_f64().unwrap_or(f64::NAN)),
        },
        Value::String(s) => Unexpected::Str(s),
        Value::Array(_) => Unexpected::Seq,
        Value::Object(_) => Unexpected::Map,
    }
}

// Not generic: one copy for every visitor.
fn invalid_type(value: &Value, expected: &dyn Expected) -> Error {
    de::Error::invalid_type(unexpected(value), expected)
}

struct ValueDeserializer(Value);

/// The numbers a visitor is given: `u64` for non-negative integers, `i64` for negative ones,
/// `f64` otherwise (serde_json's `Number` without arbitrary precision).
fn visit_number<'de, V: Visitor<'de>>(n: &serde_json::Number, visitor: V) -> Result<V::Value, Error> {
    match (n.as_u64(), n.as_i64(), n.as_f64()) {
        (Some(u), _, _) => visitor.visit_u64(u),
        (None, Some(i), _) => visitor.visit_i64(i),
        (None, None, f) => visitor.visit_f64(f.unwrap_or(f64::NAN)),
    }
}

// The generic functions below are compiled once per visitor (a hundred and more), so whatever
// does not depend on the visitor is in small functions that exist once (`#[inline(never)]`).

fn visit_array<'de, V: Visitor<'de>>(array: Vec<Value>, visitor: V) -> Result<V::Value, Error> {
    let mut seq = SeqAccess { len: array.len(), values: array.into_iter() };
    let value = visitor.visit_seq(&mut seq)?;
    seq.finish().map(|()| value)
}

fn visit_object<'de, V: Visitor<'de>>(object: Map<String, Value>, visitor: V) -> Result<V::Value, Error> {
    visit_entries(object_entries(object), visitor)
}

#[inline(never)]
fn object_entries(object: Map<String, Value>) -> Entries<'static> {
    Box::new(object.into_iter().map(|(key, value)| (Cow::Owned(key), value)))
}

fn visit_entries<'de, V: Visitor<'de>>(entries: Entries<'_>, visitor: V) -> Result<V::Value, Error> {
    let mut map = MapAccess { entries, value: None, count: 0 };
    let value = visitor.visit_map(&mut map)?;
    map.finish().map(|()| value)
}

/// The value if it is an object, else the error serde_json gives.
#[inline(never)]
fn object(value: Value, expected: &dyn Expected) -> Result<Map<String, Value>, Error> {
    match value {
        Value::Object(o) => Ok(o),
        other => Err(invalid_type(&other, expected)),
    }
}

#[inline(never)]
fn array(value: Value, expected: &dyn Expected) -> Result<Vec<Value>, Error> {
    match value {
        Value::Array(a) => Ok(a),
        other => Err(invalid_type(&other, expected)),
    }
}

#[inline(never)]
fn string(value: Value, expected: &dyn Expected) -> Result<String, Error> {
    match value {
        Value::String(s) => Ok(s),
        other => Err(invalid_type(&other, expected)),
    }
}

#[inline(never)]
fn number(value: Value, expected: &dyn Expected) -> Result<serde_json::Number, Error> {
    match value {
        Value::Number(n) => Ok(n),
        other => Err(invalid_type(&other, expected)),
    }
}

/// An enum's variant name and value: `"Variant"` or `{"Variant": value}`.
#[inline(never)]
fn enum_parts(value: Value) -> Result<(String, Option<Value>), Error> {
    match value {
        Value::Object(object) => {
            let mut entries = object.into_iter();
            match (entries.next(), entries.next()) {
                (Some((variant, value)), None) => Ok((variant, Some(value))),
                _ => Err(de::Error::invalid_value(Unexpected::Map, &"map with a single key")),
            }
        }
        Value::String(variant) => Ok((variant, None)),
        other => Err(invalid_type(&other, &"string or map")),
    }
}

impl<'de> de::Deserializer<'de> for ValueDeserializer {
    type Error = Error;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        match self.0 {
            Value::Null => visitor.visit_unit(),
            Value::Bool(b) => visitor.visit_bool(b),
            Value::Number(n) => visit_number(&n, visitor),
            Value::String(s) => visitor.visit_string(s),
            Value::Array(a) => visit_array(a, visitor),
            Value::Object(o) => visit_object(o, visitor),
        }
    }

    fn deserialize_bool<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        match self.0 {
            Value::Bool(b) => visitor.visit_bool(b),
            other => Err(invalid_type(&other, &visitor)),
        }
    }

    fn deserialize_i64<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        let n = number(self.0, &visitor)?;
        visit_number(&n, visitor)
    }

    serde::forward_to_deserialize_any! { i128 u128 bytes byte_buf }

    fn deserialize_i8<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        self.deserialize_i64(visitor)
    }
    fn deserialize_i16<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        self.deserialize_i64(visitor)
    }
    fn deserialize_i32<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        self.deserialize_i64(visitor)
    }
    fn deserialize_u8<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        self.deserialize_i64(visitor)
    }
    fn deserialize_u16<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        self.deserialize_i64(visitor)
    }
    fn deserialize_u32<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        self.deserialize_i64(visitor)
    }
    fn deserialize_u64<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        self.deserialize_i64(visitor)
    }
    fn deserialize_f32<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        self.deserialize_i64(visitor)
    }
    fn deserialize_f64<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        self.deserialize_i64(visitor)
    }

    fn deserialize_char<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        self.deserialize_string(visitor)
    }
    fn deserialize_str<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        self.deserialize_string(visitor)
    }
    fn deserialize_string<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        let s = string(self.0, &visitor)?;
        visitor.visit_string(s)
    }
    fn deserialize_identifier<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        self.deserialize_string(visitor)
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        match self.0 {
            Value::Null => visitor.visit_none(),
            _ => visitor.visit_some(self),
        }
    }

    fn deserialize_unit<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        match self.0 {
            Value::Null => visitor.visit_unit(),
            other => Err(invalid_type(&other, &visitor)),
        }
    }
    fn deserialize_unit_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value, Error> {
        self.deserialize_unit(visitor)
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value, Error> {
        visitor.visit_newtype_struct(self)
    }

    fn deserialize_seq<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        let a = array(self.0, &visitor)?;
        visit_array(a, visitor)
    }
    fn deserialize_tuple<V: Visitor<'de>>(self, _len: usize, visitor: V) -> Result<V::Value, Error> {
        self.deserialize_seq(visitor)
    }
    fn deserialize_tuple_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _len: usize,
        visitor: V,
    ) -> Result<V::Value, Error> {
        self.deserialize_seq(visitor)
    }

    fn deserialize_map<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        let o = object(self.0, &visitor)?;
        visit_object(o, visitor)
    }
    /// Objects only, handed to the derived code as the sequence of their fields (see the module
    /// comment); serde_json also reads a struct from an array of its fields in order.
    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Error> {
        let o = object(self.0, &visitor)?;
        visit_struct(object_entries(o), fields, visitor)
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Error> {
        let (variant, value) = enum_parts(self.0)?;
        visitor.visit_enum(EnumAccess { variant, value })
    }

    fn deserialize_ignored_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        drop(self);
        visitor.visit_unit()
    }
}

/// A row: its entries as a map, or as a struct's fields in order (rows only ever decode into
/// structs and maps).
struct EntriesDeserializer<'a>(Entries<'a>);

impl<'de> de::Deserializer<'de> for EntriesDeserializer<'_> {
    type Error = Error;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        visit_entries(self.0, visitor)
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Error> {
        visit_struct(self.0, fields, visitor)
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf option
        unit unit_struct newtype_struct seq tuple tuple_struct map enum identifier ignored_any
    }
}

/// A struct's fields as the sequence serde's derived `visit_seq` reads: their values in the
/// order of the names serde gives (`FIELDS`), each `None` where the object lacks it.
struct StructAccess {
    /// Each field's name beside its value, in order.
    fields: FieldValues,
    /// The field last found missing, until the next is read: if the visitor fails then, it failed
    /// for that field's absence.
    missing: Option<&'static str>,
}

type FieldValues = std::iter::Zip<
    std::iter::Copied<std::slice::Iter<'static, &'static str>>,
    std::vec::IntoIter<Option<Value>>,
>;

impl StructAccess {
    /// Places each entry at its field's position: a key that is no field is ignored (refused
    /// while strict), a key given twice (a row's column named twice) refused, as serde's map
    /// path does.
    #[inline(never)]
    fn new(entries: Entries<'_>, fields: &'static [&'static str]) -> Result<StructAccess, Error> {
        let mut values: Vec<Option<Value>> = fields.iter().map(|_| None).collect();
        for (key, value) in entries {
            match fields.iter().position(|field| *field == key) {
                Some(i) if values[i].is_some() => return Err(de::Error::duplicate_field(fields[i])),
                Some(i) => values[i] = Some(value),
                None if STRICT.with(std::cell::Cell::get) => {
                    return Err(de::Error::unknown_field(&key, fields));
                }
                None => {}
            }
        }
        Ok(StructAccess { fields: fields.iter().copied().zip(values), missing: None })
    }

    /// The next field's value, `None` if the object lacks it.
    #[inline(never)]
    fn next_value(&mut self) -> Option<Value> {
        let (field, value) = self.fields.next().unzip();
        let value = value.flatten();
        self.missing = if value.is_none() { field } else { None };
        value
    }

    /// The visitor's failure, as serde's map path words it when a field is missing.
    #[inline(never)]
    fn explain(&self, error: Error) -> Error {
        match self.missing {
            Some(field) => de::Error::missing_field(field),
            None => error,
        }
    }
}

impl<'de> de::SeqAccess<'de> for StructAccess {
    type Error = Error;

    fn next_element_seed<T: DeserializeSeed<'de>>(&mut self, seed: T) -> Result<Option<T::Value>, Error> {
        match self.next_value() {
            Some(value) => seed.deserialize(ValueDeserializer(value)).map(Some),
            // An `Option` reads a missing field as `None`; to anything else it is the end of the
            // sequence at this field, which the derived code answers with the field's default,
            // or with an error that `explain` words as serde's `missing field`.
            None => Ok(seed.deserialize(Missing).ok()),
        }
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.fields.len())
    }
}

fn visit_struct<'de, V: Visitor<'de>>(
    entries: Entries<'_>,
    fields: &'static [&'static str],
    visitor: V,
) -> Result<V::Value, Error> {
    let mut access = StructAccess::new(entries, fields)?;
    visitor.visit_seq(&mut access).map_err(|e| access.explain(e))
}

/// A field the object lacks: `None` to an `Option`, an error to anything else (as serde's
/// `missing_field` reads it).
struct Missing;

impl<'de> de::Deserializer<'de> for Missing {
    type Error = Error;

    fn deserialize_any<V: Visitor<'de>>(self, _visitor: V) -> Result<V::Value, Error> {
        Err(de::Error::custom("missing"))
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        visitor.visit_none()
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf
        unit unit_struct newtype_struct seq tuple tuple_struct map struct enum identifier ignored_any
    }
}

struct SeqAccess {
    len: usize,
    values: std::vec::IntoIter<Value>,
}

impl SeqAccess {
    /// Every element read, as serde_json requires after the visitor is done.
    #[inline(never)]
    fn finish(self) -> Result<(), Error> {
        match self.values.len() {
            0 => Ok(()),
            _ => Err(de::Error::invalid_length(self.len, &"fewer elements in array")),
        }
    }
}

impl<'de> de::SeqAccess<'de> for SeqAccess {
    type Error = Error;

    fn next_element_seed<T: DeserializeSeed<'de>>(&mut self, seed: T) -> Result<Option<T::Value>, Error> {
        match self.values.next() {
            Some(value) => seed.deserialize(ValueDeserializer(value)).map(Some),
            None => Ok(None),
        }
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.values.len())
    }
}

struct MapAccess<'a> {
    entries: Entries<'a>,
    value: Option<Value>,
    count: usize,
}

impl<'a> MapAccess<'a> {
    /// The next key, its value kept for `next_value_seed`.
    #[inline(never)]
    fn next_key(&mut self) -> Option<Cow<'a, str>> {
        let (key, value) = self.entries.next()?;
        self.value = Some(value);
        self.count += 1;
        Some(key)
    }

    #[inline(never)]
    fn next_value(&mut self) -> Result<Value, Error> {
        self.value.take().ok_or_else(|| de::Error::custom("value is missing"))
    }

    /// Every entry read, as serde_json requires after the visitor is done.
    #[inline(never)]
    fn finish(mut self) -> Result<(), Error> {
        match self.entries.next() {
            None => Ok(()),
            Some(_) => Err(de::Error::invalid_length(self.count, &"fewer elements in map")),
        }
    }
}

impl<'de> de::MapAccess<'de> for MapAccess<'_> {
    type Error = Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(&mut self, seed: K) -> Result<Option<K::Value>, Error> {
        match self.next_key() {
            Some(key) => seed.deserialize(KeyDeserializer(key)).map(Some),
            None => Ok(None),
        }
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, Error> {
        let value = self.next_value()?;
        seed.deserialize(ValueDeserializer(value))
    }

    fn size_hint(&self) -> Option<usize> {
        match self.entries.size_hint() {
            (lower, Some(upper)) if lower == upper => Some(upper),
            _ => None,
        }
    }
}

/// An object key: a string (no map here is keyed by numbers).
struct KeyDeserializer<'a>(Cow<'a, str>);

impl<'de> de::Deserializer<'de> for KeyDeserializer<'_> {
    type Error = Error;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        match self.0 {
            Cow::Owned(key) => visitor.visit_string(key),
            Cow::Borrowed(key) => visitor.visit_str(key),
        }
    }

    fn deserialize_identifier<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        visitor.visit_str(&self.0)
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        visitor.visit_some(self)
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value, Error> {
        visitor.visit_newtype_struct(self)
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Error> {
        visitor.visit_enum(EnumAccess { variant: self.0.into_owned(), value: None })
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf
        unit unit_struct seq tuple tuple_struct map struct ignored_any
    }
}

/// An enum as serde_json writes it: `"Variant"` or `{"Variant": value}`.
struct EnumAccess {
    variant: String,
    value: Option<Value>,
}

impl<'de> de::EnumAccess<'de> for EnumAccess {
    type Error = Error;
    type Variant = VariantAccess;

    fn variant_seed<V: DeserializeSeed<'de>>(self, seed: V) -> Result<(V::Value, VariantAccess), Error> {
        let variant = seed.deserialize(KeyDeserializer(Cow::Owned(self.variant)))?;
        Ok((variant, VariantAccess(self.value)))
    }
}

struct VariantAccess(Option<Value>);

/// A variant's value, if it has one (`{"Variant": value}`).
#[inline(never)]
fn variant_value(value: Option<Value>, expected: &dyn Expected) -> Result<Value, Error> {
    value.ok_or_else(|| de::Error::invalid_type(Unexpected::UnitVariant, expected))
}

impl<'de> de::VariantAccess<'de> for VariantAccess {
    type Error = Error;

    fn unit_variant(self) -> Result<(), Error> {
        match self.0 {
            Some(value) => de::Deserialize::deserialize(ValueDeserializer(value)),
            None => Ok(()),
        }
    }

    fn newtype_variant_seed<T: DeserializeSeed<'de>>(self, seed: T) -> Result<T::Value, Error> {
        let value = variant_value(self.0, &"newtype variant")?;
        seed.deserialize(ValueDeserializer(value))
    }

    fn tuple_variant<V: Visitor<'de>>(self, _len: usize, visitor: V) -> Result<V::Value, Error> {
        match self.0 {
            Some(Value::Array(a)) if a.is_empty() => visitor.visit_unit(),
            Some(Value::Array(a)) => visit_array(a, visitor),
            Some(other) => Err(invalid_type(&other, &"tuple variant")),
            None => Err(de::Error::invalid_type(Unexpected::UnitVariant, &"tuple variant")),
        }
    }

    fn struct_variant<V: Visitor<'de>>(
        self,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Error> {
        let o = variant_value(self.0, &"struct variant").and_then(|v| object(v, &"struct variant"))?;
        visit_struct(object_entries(o), fields, visitor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;
    use serde_json::json;
    use std::collections::HashMap;

    #[derive(Debug, PartialEq, Deserialize)]
    #[serde(deny_unknown_fields, rename_all = "camelCase")]
    struct Input {
        name: String,
        count: u32,
        ratio: Option<f64>,
        #[serde(default)]
        tags: Vec<String>,
        kind: Kind,
        extra: Option<HashMap<String, i64>>,
        any: Option<Value>,
    }

    #[derive(Debug, PartialEq, Deserialize)]
    #[serde(rename_all = "snake_case")]
    enum Kind {
        Plain,
        Wrapped(i64),
        Pair(u8, u8),
        Shaped { size: u8 },
    }

    #[derive(Debug, PartialEq, Deserialize)]
    #[serde(tag = "kind", rename_all = "snake_case")]
    enum Tagged {
        One { n: i64 },
        Two,
    }

    #[derive(Debug, PartialEq, Deserialize)]
    struct Flattened {
        #[serde(flatten)]
        inner: Inner,
        outer: bool,
    }
    #[derive(Debug, PartialEq, Deserialize)]
    struct Inner {
        a: i64,
    }

    /// The outcome of both deserializers, errors as text: they must agree. Ours is strict, as
    /// `Input`'s `deny_unknown_fields` is for serde_json's.
    fn both<T: DeserializeOwned + PartialEq + std::fmt::Debug>(value: Value) -> Result<T, String> {
        let ours = {
            let _strict = Strict::begin();
            from_value::<T>(value.clone()).map_err(|e| e.to_string())
        };
        let theirs = serde_json::from_value::<T>(value).map_err(|e| e.to_string());
        assert_eq!(ours, theirs);
        ours
    }

    #[derive(Debug, PartialEq, Deserialize)]
    struct Plain {
        a: i64,
        b: Option<String>,
        #[serde(default)]
        c: Vec<u8>,
        inner: Option<Inner>,
    }

    #[derive(Debug, PartialEq, Deserialize)]
    #[serde(default)]
    struct Defaults {
        a: i64,
        b: String,
    }
    impl Default for Defaults {
        fn default() -> Self {
            Defaults { a: 7, b: "seven".into() }
        }
    }

    #[test]
    fn a_missing_field_is_none_its_default_or_serdes_error() {
        let read: Plain = from_value(json!({"a": 1})).unwrap();
        assert_eq!(read, Plain { a: 1, b: None, c: vec![], inner: None });
        // Missing in the middle, present after: each field is read at its own position.
        let read: Plain = from_value(json!({"inner": {"a": 2}, "a": 1, "c": [3]})).unwrap();
        assert_eq!(read, Plain { a: 1, b: None, c: vec![3], inner: Some(Inner { a: 2 }) });
        for (value, message) in [
            (json!({"b": "x"}), "missing field `a`"),
            (json!({"a": 1, "inner": {}}), "missing field `a`"),
            (json!({"a": 1, "b": null, "c": null}), "invalid type: null, expected a sequence"),
            (json!({"a": "1"}), r#"invalid type: string "1", expected i64"#),
        ] {
            assert_eq!(from_value::<Plain>(value.clone()).unwrap_err().to_string(), message, "{value}");
            assert_eq!(serde_json::from_value::<Plain>(value).unwrap_err().to_string(), message);
        }
        // A struct-level default fills what is missing from the type's `Default`.
        assert_eq!(from_value::<Defaults>(json!({"b": "x"})).unwrap(), Defaults { a: 7, b: "x".into() });
        assert_eq!(from_value::<Defaults>(json!({})).unwrap(), Defaults::default());
    }

    #[test]
    fn unknown_keys_are_ignored_unless_strict_at_every_level() {
        let value = json!({"a": 1, "extra": true, "inner": {"a": 2, "more": 1}});
        let read: Plain = from_value(value.clone()).unwrap();
        assert_eq!(read.inner, Some(Inner { a: 2 }));
        let error = decode_strict::<Plain>(value.to_string()).unwrap_err().to_string();
        assert_eq!(error, "unknown field `extra`, expected one of `a`, `b`, `c`, `inner`");
        let nested = json!({"a": 1, "inner": {"a": 2, "more": 1}});
        let error = decode_strict::<Plain>(nested.to_string()).unwrap_err().to_string();
        assert_eq!(error, "unknown field `more`, expected `a`");
        // Strictness ends with the call, whether it failed or not.
        assert!(from_value::<Plain>(value).is_ok());
        assert_eq!(decode_strict::<Plain>(r#"{"a": 1}"#).unwrap().a, 1);
    }

    /// serde lists a field's aliases among the names it hands `deserialize_struct`, which would
    /// shift every field after it (module comment): no `alias` in any serde attribute.
    #[test]
    fn no_type_has_a_serde_alias() {
        fn walk(dir: &std::path::Path, found: &mut Vec<String>) {
            for entry in std::fs::read_dir(dir).unwrap() {
                let path = entry.unwrap().path();
                if path.is_dir() {
                    walk(&path, found);
                } else if path.extension().is_some_and(|e| e == "rs") {
                    let text = std::fs::read_to_string(&path).unwrap();
                    for (i, line) in text.lines().enumerate() {
                        let line = line.trim_start();
                        if line.starts_with("#[serde(") && line.contains("alias") {
                            found.push(format!("{}:{}", path.display(), i + 1));
                        }
                    }
                }
            }
        }
        let mut found = Vec::new();
        walk(&std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src"), &mut found);
        assert!(found.is_empty(), "serde aliases (name the SQL column as the field instead): {found:?}");
    }

    #[test]
    fn type_and_value_errors_are_worded_as_serde_jsons() {
        use serde::de::Error as _;
        let variants = [
            Unexpected::Bool(true),
            Unexpected::Unsigned(7),
            Unexpected::Signed(-7),
            Unexpected::Float(2.0),
            Unexpected::Float(-0.125),
            Unexpected::Float(1e300),
            Unexpected::Char('é'),
            Unexpected::Str("a \"quoted\"\n\u{7f} é"),
            Unexpected::Bytes(b"x"),
            Unexpected::Unit,
            Unexpected::Option,
            Unexpected::NewtypeStruct,
            Unexpected::Seq,
            Unexpected::Map,
            Unexpected::Enum,
            Unexpected::UnitVariant,
            Unexpected::NewtypeVariant,
            Unexpected::TupleVariant,
            Unexpected::StructVariant,
            Unexpected::Other("something else"),
        ];
        for unexpected in variants {
            let (ours, theirs) = (
                Error::invalid_type(unexpected, &"u32"),
                serde_json::Error::invalid_type(unexpected, &"u32"),
            );
            assert_eq!(ours.into_json().to_string(), theirs.to_string());
            let (ours, theirs) = (
                Error::invalid_value(unexpected, &"u32"),
                serde_json::Error::invalid_value(unexpected, &"u32"),
            );
            assert_eq!(ours.into_json().to_string(), theirs.to_string());
        }
    }

    #[test]
    fn reads_what_serde_json_reads_and_fails_as_it_fails() {
        let good = json!({
            "name": "x", "count": 3, "ratio": 0.5, "tags": ["a"], "kind": "plain",
            "extra": {"k": -2}, "any": [1, {"b": null}]
        });
        let read = both::<Input>(good.clone()).unwrap();
        assert_eq!(read.kind, Kind::Plain);
        assert_eq!(read.extra, Some(HashMap::from([("k".to_owned(), -2)])));
        let with = |key: &str, value: Value| {
            let mut v = good.clone();
            v[key] = value;
            v
        };
        assert_eq!(both::<Input>(with("kind", json!({"wrapped": -7}))).unwrap().kind, Kind::Wrapped(-7));
        assert_eq!(both::<Input>(with("kind", json!({"pair": [1, 2]}))).unwrap().kind, Kind::Pair(1, 2));
        assert_eq!(
            both::<Input>(with("kind", json!({"shaped": {"size": 4}}))).unwrap().kind,
            Kind::Shaped { size: 4 }
        );
        for bad in [
            with("count", json!(-1)),
            with("count", json!(1.5)),
            with("count", json!("3")),
            with("count", json!(4_294_967_296_u64)),
            with("name", json!(null)),
            with("name", json!({})),
            with("tags", json!("a")),
            with("tags", json!([1])),
            with("ratio", json!(true)),
            with("kind", json!("other")),
            with("kind", json!({"wrapped": 1, "pair": [1, 2]})),
            with("kind", json!({})),
            with("kind", json!(3)),
            with("kind", json!("wrapped")),
            with("kind", json!({"pair": [1]})),
            with("kind", json!({"pair": [1, 2, 3]})),
            with("kind", json!({"shaped": [4]})),
            with("kind", json!({"plain": 1})),
            with("extra", json!([])),
            with("unknown", json!(1)),
            json!("text"),
            json!(null),
        ] {
            assert!(both::<Input>(bad.clone()).is_err(), "{bad}");
        }
        // A struct read from an array: serde_json reads it, this deserializer refuses it.
        let array = json!([1]);
        assert_eq!(serde_json::from_value::<Inner>(array.clone()).unwrap(), Inner { a: 1 });
        assert_eq!(
            from_value::<Inner>(array).unwrap_err().to_string(),
            "invalid type: sequence, expected struct Inner"
        );
    }

    #[test]
    fn reads_tagged_flattened_and_plain_values() {
        assert_eq!(both::<Tagged>(json!({"kind": "one", "n": 2})).unwrap(), Tagged::One { n: 2 });
        assert_eq!(both::<Tagged>(json!({"kind": "two"})).unwrap(), Tagged::Two);
        assert!(both::<Tagged>(json!({"kind": "three"})).is_err());
        assert!(both::<Tagged>(json!({"n": 2})).is_err());
        assert_eq!(
            both::<Flattened>(json!({"a": 1, "outer": true})).unwrap(),
            Flattened { inner: Inner { a: 1 }, outer: true }
        );
        let value = json!({"a": [1, -2, 3.5, "s", null, true, {"b": {}}]});
        assert_eq!(both::<Value>(value.clone()).unwrap(), value);
        assert_eq!(both::<(i64, String)>(json!([1, "x"])).unwrap(), (1, "x".to_owned()));
        assert!(both::<(i64, String)>(json!([1, "x", 2])).is_err());
        assert_eq!(both::<Option<u8>>(json!(null)).unwrap(), None);
        assert_eq!(both::<()>(json!(null)).unwrap(), ());
        assert_eq!(both::<char>(json!("c")).unwrap(), 'c');
        assert_eq!(both::<f32>(json!(2)).unwrap(), 2.0);
        assert!(both::<bool>(json!(0)).is_err());
    }

    #[test]
    fn reads_entries_as_an_object() {
        let entries = [("a", json!(5)), ("outer", json!(false))];
        let boxed = |entries: Vec<(&'static str, Value)>| -> Entries<'static> {
            Box::new(entries.into_iter().map(|(k, v)| (Cow::Borrowed(k), v)))
        };
        let read: Flattened = from_entries(boxed(entries.to_vec())).unwrap();
        assert_eq!(read, Flattened { inner: Inner { a: 5 }, outer: false });
        let read: Inner = from_entries(boxed(vec![("a", json!(1)), ("b", json!(2))])).unwrap();
        assert_eq!(read, Inner { a: 1 });
        let error = from_entries::<Inner>(boxed(vec![("a", json!("x"))])).unwrap_err();
        assert_eq!(error.to_string(), r#"invalid type: string "x", expected i64"#);
        // A column named twice is a mistake in the query, as serde's map path says.
        let error = from_entries::<Inner>(boxed(vec![("a", json!(1)), ("a", json!(2))])).unwrap_err();
        assert_eq!(error.to_string(), "duplicate field `a`");
        let error = from_entries::<Inner>(boxed(vec![("b", json!(1))])).unwrap_err();
        assert_eq!(error.to_string(), "missing field `a`");
    }
}

//! JSON text to typed values, in one place, through [`Value`].
//!
//! Every `Deserialize` type is compiled once per deserializer it meets. Tool arguments and
//! database rows are decoded from a [`Value`]; decoding text through `serde_json::from_str` as
//! well compiled a second copy of every type read from text (a `Deserializer<StrRead>` per type,
//! with its map and sequence accessors), tens of kilobytes of the Worker's wasm. Parsing into a
//! `Value` first is one shared parser, and the typed step reuses the copies rows and tool
//! arguments already need. The cost is a second pass over the parsed tree, small beside the
//! request around it: these are short documents (records, object answers, provider replies).

use serde::de::DeserializeOwned;
use serde_json::Value;

/// Parses JSON text (UTF-8 bytes or a string).
pub fn parse(text: impl AsRef<[u8]>) -> serde_json::Result<Value> {
    serde_json::from_slice(text.as_ref())
}

/// Parses JSON text into `T` (what `serde_json::from_str` does, through a [`Value`]).
pub fn decode<T: DeserializeOwned>(text: impl AsRef<[u8]>) -> serde_json::Result<T> {
    T::deserialize(parse(text)?)
}

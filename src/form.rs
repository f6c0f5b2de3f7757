//! `application/x-www-form-urlencoded` (WHATWG URL §5): the body format of Stripe's API
//! requests, of the OAuth endpoints and of the Worker's own HTML forms, read and written by the
//! url crate's `form_urlencoded`.

/// Percent-encodes one name or value: letters, digits and `*-._` stay, space becomes `+`,
/// everything else is `%XX` of its UTF-8 bytes.
pub fn encode_component(s: &str) -> String {
    form_urlencoded::byte_serialize(s.as_bytes()).collect()
}

/// Encodes pairs in order: `a=1&b%5Bc%5D=2`.
pub fn encode(pairs: &[(&str, &str)]) -> String {
    form_urlencoded::Serializer::new(String::new()).extend_pairs(pairs).finish()
}

/// Decodes one name or value: `+` is a space, `%XX` a byte (a `%` not followed by two hex
/// digits stays as it is), and bytes that are not UTF-8 become U+FFFD.
pub fn decode_component(s: &[u8]) -> String {
    let plus_as_space: Vec<u8> = s.iter().map(|&b| if b == b'+' { b' ' } else { b }).collect();
    percent_encoding::percent_decode(&plus_as_space).decode_utf8_lossy().into_owned()
}

/// Decodes a body or query string into pairs, in order (repeated names kept, empty pieces
/// between `&`s skipped).
pub fn parse(body: &[u8]) -> Vec<(String, String)> {
    form_urlencoded::parse(body).into_owned().collect()
}

/// The first value of `name` in decoded pairs.
pub fn get<'a>(pairs: &'a [(String, String)], name: &str) -> Option<&'a str> {
    pairs.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_stripe_style_fields() {
        let body = encode(&[
            ("line_items[0][price]", "price_123"),
            ("success_url", "https://x.test/done?session_id={CHECKOUT_SESSION_ID}"),
            ("metadata[note]", "a b+c&d=é"),
        ]);
        assert_eq!(
            body,
            "line_items%5B0%5D%5Bprice%5D=price_123&success_url=https%3A%2F%2Fx.test%2Fdone%3Fsession_id%3D%7BCHECKOUT_SESSION_ID%7D&metadata%5Bnote%5D=a+b%2Bc%26d%3D%C3%A9"
        );
        let pairs = parse(body.as_bytes());
        assert_eq!(get(&pairs, "metadata[note]"), Some("a b+c&d=é"));
        assert_eq!(get(&pairs, "success_url"), Some("https://x.test/done?session_id={CHECKOUT_SESSION_ID}"));
    }

    #[test]
    fn tolerates_odd_input() {
        let pairs = parse(b"a&b=&=c&d=%zz&e=%4&f=%+1&g=%e9%E9&&h=1=2");
        assert_eq!(get(&pairs, "a"), Some(""));
        assert_eq!(get(&pairs, ""), Some("c"));
        assert_eq!(get(&pairs, "d"), Some("%zz"));
        assert_eq!(get(&pairs, "e"), Some("%4"));
        assert_eq!(get(&pairs, "f"), Some("% 1"), "a sign is not a hex digit");
        assert_eq!(get(&pairs, "g"), Some("\u{fffd}\u{fffd}"), "not UTF-8");
        assert_eq!(get(&pairs, "h"), Some("1=2"));
        assert_eq!(pairs.len(), 8);
    }
}

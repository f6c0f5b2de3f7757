//! `application/x-www-form-urlencoded` (WHATWG URL §5): the body format of Stripe's API
//! requests and of the Worker's own HTML forms.

/// Percent-encodes one name or value: letters, digits and `*-._` stay, space becomes `+`,
/// everything else is `%XX` of its UTF-8 bytes.
pub fn encode_component(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        match b {
            b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b'*' | b'-' | b'.' | b'_' => out.push(b as char),
            b' ' => out.push('+'),
            _ => out.push_str(&format!("%{b:02X}")),
        }
    }
    out
}

/// Encodes pairs in order: `a=1&b%5Bc%5D=2`.
pub fn encode(pairs: &[(&str, &str)]) -> String {
    pairs
        .iter()
        .map(|(k, v)| format!("{}={}", encode_component(k), encode_component(v)))
        .collect::<Vec<_>>()
        .join("&")
}

/// Decodes one name or value: `+` is a space, `%XX` a byte (a `%` not followed by two hex
/// digits stays as it is), and bytes that are not UTF-8 become U+FFFD.
pub fn decode_component(s: &[u8]) -> String {
    let hex = |b: Option<&u8>| b.and_then(|b| char::from(*b).to_digit(16));
    let mut out = Vec::with_capacity(s.len());
    let mut i = 0;
    while let Some(&b) = s.get(i) {
        i += 1;
        match b {
            b'+' => out.push(b' '),
            b'%' => match (hex(s.get(i)), hex(s.get(i + 1))) {
                (Some(hi), Some(lo)) => {
                    // Two hex digits make at most 255.
                    out.push((hi * 16 + lo) as u8);
                    i += 2;
                }
                _ => out.push(b'%'),
            },
            b => out.push(b),
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Decodes a body or query string into pairs, in order (repeated names kept, empty pieces
/// between `&`s skipped).
pub fn parse(body: &[u8]) -> Vec<(String, String)> {
    body.split(|b| *b == b'&')
        .filter(|p| !p.is_empty())
        .map(|p| match p.iter().position(|b| *b == b'=') {
            Some(i) => (decode_component(&p[..i]), decode_component(&p[i + 1..])),
            None => (decode_component(p), String::new()),
        })
        .collect()
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

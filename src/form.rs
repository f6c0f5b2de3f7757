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

fn decode_component(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'+' => out.push(b' '),
            b'%' if i + 2 < bytes.len() => {
                let hex = std::str::from_utf8(&bytes[i + 1..i + 3])
                    .ok()
                    .and_then(|h| u8::from_str_radix(h, 16).ok());
                match hex {
                    Some(v) => {
                        out.push(v);
                        i += 2;
                    }
                    None => out.push(b'%'),
                }
            }
            b => out.push(b),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Decodes a body or query string into pairs, in order (repeated names kept).
pub fn parse(body: &str) -> Vec<(String, String)> {
    body.split('&')
        .filter(|p| !p.is_empty())
        .map(|p| match p.split_once('=') {
            Some((k, v)) => (decode_component(k), decode_component(v)),
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
        let pairs = parse(&body);
        assert_eq!(get(&pairs, "metadata[note]"), Some("a b+c&d=é"));
        assert_eq!(get(&pairs, "success_url"), Some("https://x.test/done?session_id={CHECKOUT_SESSION_ID}"));
    }

    #[test]
    fn tolerates_odd_input() {
        let pairs = parse("a&b=&=c&d=%zz&e=%4");
        assert_eq!(get(&pairs, "a"), Some(""));
        assert_eq!(get(&pairs, ""), Some("c"));
        assert_eq!(get(&pairs, "d"), Some("%zz"));
        assert_eq!(get(&pairs, "e"), Some("%4"));
    }
}

//! Base64 (RFC 4648): the standard alphabet with padding (§4: HTTP Basic credentials, CSP
//! hashes) and the URL-safe one without (§5: JWTs, PKCE, signed links). Decoding is strict, as
//! the `base64` crate's engines are: the alphabet and padding asked for, and no stray bits in
//! the last character, so one value has one spelling (what a signature or a token compares).
//! Written here because these few lines replace about 3 KB gzip of the crate in the Worker's
//! wasm (docs/scale.md, "Size"); the tests hold it to the crate.

const STANDARD: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
const URL_SAFE: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
/// Each byte's value in the alphabet, [`NONE`] for a byte outside it: a lookup per character
/// (every bearer token is decoded on every request).
const STANDARD_VALUES: [u8; 256] = values(STANDARD);
const URL_SAFE_VALUES: [u8; 256] = values(URL_SAFE);
const NONE: u8 = 0xff;

const fn values(alphabet: &[u8; 64]) -> [u8; 256] {
    let mut table = [NONE; 256];
    let mut i = 0;
    while i < 64 {
        table[alphabet[i] as usize] = i as u8;
        i += 1;
    }
    table
}

/// URL-safe, unpadded (RFC 4648 §5; RFC 7515 §2's `BASE64URL`).
pub fn encode_url(bytes: impl AsRef<[u8]>) -> String {
    encode(bytes.as_ref(), URL_SAFE, false)
}

/// Standard alphabet, padded (RFC 4648 §4).
pub fn encode_std(bytes: impl AsRef<[u8]>) -> String {
    encode(bytes.as_ref(), STANDARD, true)
}

/// Decodes URL-safe, unpadded base64; `None` for anything else.
pub fn decode_url(text: &str) -> Option<Vec<u8>> {
    decode(text.as_bytes(), &URL_SAFE_VALUES)
}

/// Decodes standard, padded base64; `None` for anything else.
pub fn decode_std(text: &str) -> Option<Vec<u8>> {
    let text = text.as_bytes();
    if !text.len().is_multiple_of(4) {
        return None;
    }
    // At most two `=`, and only where the length needs them (`decode` refuses a lone `=`).
    let body = text.strip_suffix(b"==").or_else(|| text.strip_suffix(b"=")).unwrap_or(text);
    decode(body, &STANDARD_VALUES)
}

fn encode(bytes: &[u8], alphabet: &[u8; 64], pad: bool) -> String {
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        // The chunk's bytes at the top of 24 bits, read out 6 at a time.
        let n = chunk.iter().enumerate().fold(0u32, |n, (i, b)| n | u32::from(*b) << (16 - 8 * i));
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(char::from(alphabet[(n >> (18 - 6 * i)) as usize & 63]));
            } else if pad {
                out.push('=');
            }
        }
    }
    out
}

fn decode(text: &[u8], values: &[u8; 256]) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(text.len() / 4 * 3 + 2);
    for chunk in text.chunks(4) {
        // 2, 3 or 4 characters carry 1, 2 or 3 bytes; a lone character carries none.
        let k = chunk.len();
        if k == 1 {
            return None;
        }
        let mut n = 0u32;
        for (i, c) in chunk.iter().enumerate() {
            let value = values[usize::from(*c)];
            if value == NONE {
                return None;
            }
            n |= u32::from(value) << (18 - 6 * i);
        }
        // The bits below the last byte must be zero (4 with 2 characters, 2 with 3).
        let spare = ((1u32 << (8 - 2 * k)) - 1) << (24 - 6 * k);
        if n & spare != 0 {
            return None;
        }
        out.extend((0..k - 1).map(|i| (n >> (16 - 8 * i)) as u8));
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use base64::Engine as _;
    use base64::engine::general_purpose::{STANDARD as Std, URL_SAFE_NO_PAD as Url};

    #[test]
    fn rfc_4648_vectors() {
        for (plain, std) in [
            ("", ""),
            ("f", "Zg=="),
            ("fo", "Zm8="),
            ("foo", "Zm9v"),
            ("foob", "Zm9vYg=="),
            ("fooba", "Zm9vYmE="),
            ("foobar", "Zm9vYmFy"),
        ] {
            assert_eq!(encode_std(plain), std);
            assert_eq!(decode_std(std).as_deref(), Some(plain.as_bytes()));
            assert_eq!(encode_url(plain), std.trim_end_matches('='));
            assert_eq!(decode_url(std.trim_end_matches('=')).as_deref(), Some(plain.as_bytes()));
        }
        assert_eq!(encode_url([0xfb, 0xff]), "-_8");
        assert_eq!(encode_std([0xfb, 0xff]), "+/8=");
    }

    /// Every input of a few lengths, made of the characters that matter, decoded as the crate
    /// decodes it; and random bytes encoded as it encodes them.
    #[test]
    fn agrees_with_the_base64_crate() {
        let mut seed = 0x9e37_79b9_7f4a_7c15_u64;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        for len in 0..200 {
            let bytes: Vec<u8> = (0..len % 40).map(|_| next() as u8).collect();
            assert_eq!(encode_url(&bytes), Url.encode(&bytes));
            assert_eq!(encode_std(&bytes), Std.encode(&bytes));
        }
        let chars = b"AQgw+/-_=.";
        for len in 0..=6u32 {
            for i in 0..chars.len().pow(len) {
                let text: String =
                    (0..len).map(|d| char::from(chars[i / chars.len().pow(d) % chars.len()])).collect();
                assert_eq!(decode_url(&text), Url.decode(&text).ok(), "url {text:?}");
                assert_eq!(decode_std(&text), Std.decode(&text).ok(), "std {text:?}");
            }
        }
    }
}

//! Gzip answers for texts that never change within an isolate (the `tools/list` result, the
//! card's `resources/read`), without a compressor in the Worker.
//!
//! The runtime compresses such a text once (its own zlib, behind `CompressionStream`); each
//! answer is then a gzip member (RFC 1952) made of the part that changes per request, the
//! JSON-RPC envelope's head with the request's id, sent as a *stored* deflate block (RFC 1951
//! §3.2.4: a 5-byte header and the bytes as they are), followed by the runtime's deflate stream
//! of the fixed text as it came, and a trailer whose CRC-32 is combined from the head's and the
//! text's (the text's is read from the runtime's own trailer). A stored block ends on a byte
//! boundary, where the next block may start, so the runtime's stream needs no re-encoding: per
//! request this costs the head's CRC and a copy of the compressed bytes (about a sixth of the
//! text's for `tools/list`), instead of a copy of the whole text.

/// The reflected CRC-32 polynomial of gzip (RFC 1952 §8).
const POLY: u32 = 0xedb8_8320;

/// The CRC-32 of `bytes` (RFC 1952's, as zlib's `crc32`), bit by bit: it only ever runs over an
/// envelope's head, a few dozen bytes.
pub fn crc32(bytes: &[u8]) -> u32 {
    let mut crc = !0u32;
    for &b in bytes {
        crc ^= u32::from(b);
        for _ in 0..8 {
            crc = if crc & 1 != 0 { (crc >> 1) ^ POLY } else { crc >> 1 };
        }
    }
    !crc
}

/// `a(x) · b(x) mod P(x)` over GF(2), in CRC-32's reflected bit order (the method of zlib's
/// `crc32_combine`, 1.2.12 and later).
fn multiply_mod_p(a: u32, mut b: u32) -> u32 {
    let mut m = 1u32 << 31;
    let mut product = 0u32;
    loop {
        if a & m != 0 {
            product ^= b;
            if a & (m - 1) == 0 {
                return product;
            }
        }
        m >>= 1;
        b = if b & 1 != 0 { (b >> 1) ^ POLY } else { b >> 1 };
    }
}

/// `x^(8·len) mod P(x)`: what a CRC must be multiplied by to account for `len` more bytes
/// after it (by repeated squaring of `x`, reflected: `1 << 31` is `1`, `1 << 30` is `x`).
fn shift_for(len: u64) -> u32 {
    let mut result = 1u32 << 31;
    let mut square = 1u32 << 30;
    // x^8 first: a byte is eight bits.
    for _ in 0..3 {
        square = multiply_mod_p(square, square);
    }
    let mut n = len;
    while n != 0 {
        if n & 1 != 0 {
            result = multiply_mod_p(square, result);
        }
        square = multiply_mod_p(square, square);
        n >>= 1;
    }
    result
}

/// A fixed text as the runtime compressed it: the raw deflate stream and what the trailer of
/// any member ending with it needs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Deflated {
    /// The deflate stream (RFC 1951) of the text, ending with its final block.
    stream: Vec<u8>,
    /// The text's CRC-32.
    crc: u32,
    /// The text's length in bytes.
    len: u32,
    /// [`shift_for`] the text's length, so that combining CRCs costs one multiplication.
    shift: u32,
}

/// The fixed 10-byte header of a gzip member without optional fields: magic, deflate, no
/// flags, no time, no extra flags, unknown OS (RFC 1952 §2.3).
const HEADER: [u8; 10] = [0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 255];

/// The longest head one stored block carries (its `LEN` is 16 bits).
const MAX_HEAD: usize = u16::MAX as usize;

impl Deflated {
    /// Takes the deflate stream out of a gzip member of a text `text_len` bytes long, as the
    /// runtime's `CompressionStream("gzip")` writes one: a 10-byte header without optional
    /// fields (`FLG` zero), the stream, then CRC-32 and length. `None` for anything else (a
    /// header with optional fields, a length that is not the text's), in which case the text
    /// is sent uncompressed.
    pub fn from_gzip(member: &[u8], text_len: usize) -> Option<Deflated> {
        if member.len() < HEADER.len() + 8 || member[..4] != [0x1f, 0x8b, 8, 0] {
            return None;
        }
        let (body, trailer) = member.split_at(member.len() - 8);
        let word =
            |at: usize| u32::from_le_bytes([trailer[at], trailer[at + 1], trailer[at + 2], trailer[at + 3]]);
        let (crc, len) = (word(0), word(4));
        if u32::try_from(text_len).ok() != Some(len) {
            return None;
        }
        Some(Deflated { stream: body[HEADER.len()..].to_vec(), crc, len, shift: shift_for(u64::from(len)) })
    }

    /// A gzip member whose content is `head` followed by the text; `None` when `head` is longer
    /// than one stored block holds (a request id of over 64 KB), which is then sent plain.
    pub fn member_after(&self, head: &[u8]) -> Option<Vec<u8>> {
        let head_len = u16::try_from(head.len()).ok().filter(|_| head.len() <= MAX_HEAD)?;
        let mut out = Vec::with_capacity(HEADER.len() + 5 + head.len() + self.stream.len() + 8);
        out.extend_from_slice(&HEADER);
        // A stored block, not the last: BFINAL 0 and BTYPE 00 in the first three bits, then
        // padding to the byte boundary (one zero byte in all), LEN and its complement NLEN.
        out.push(0);
        out.extend_from_slice(&head_len.to_le_bytes());
        out.extend_from_slice(&(!head_len).to_le_bytes());
        out.extend_from_slice(head);
        out.extend_from_slice(&self.stream);
        let crc = multiply_mod_p(self.shift, crc32(head)) ^ self.crc;
        out.extend_from_slice(&crc.to_le_bytes());
        // ISIZE is the length modulo 2^32 (RFC 1952 §2.3.1).
        let total = self.len.wrapping_add(u32::from(head_len));
        out.extend_from_slice(&total.to_le_bytes());
        Some(out)
    }
}

/// Whether an `Accept-Encoding` header accepts gzip (RFC 9110 §12.5.3): `gzip` (or its alias
/// `x-gzip`) listed without a zero weight, or `*` when gzip is not listed. No header means no
/// preference, which we read as identity: a compressed answer goes only to a client that asked.
pub fn accepts_gzip(accept_encoding: Option<&str>) -> bool {
    let Some(header) = accept_encoding else { return false };
    let mut star = false;
    for (name, refused) in crate::mcp::weighted_list(header) {
        if name.eq_ignore_ascii_case("gzip") || name.eq_ignore_ascii_case("x-gzip") {
            return !refused;
        }
        if name == "*" {
            star = !refused;
        }
    }
    star
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Write};

    fn gzip(text: &[u8]) -> Vec<u8> {
        let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        encoder.write_all(text).unwrap();
        encoder.finish().unwrap()
    }

    fn gunzip(member: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        flate2::read::GzDecoder::new(member).read_to_end(&mut out).unwrap();
        out
    }

    #[test]
    fn computes_gzips_crc() {
        assert_eq!(crc32(b""), 0);
        assert_eq!(crc32(b"123456789"), 0xcbf4_3926);
        // Combining agrees with the CRC of the concatenation, for lengths that exercise every
        // bit of the shift.
        let text: Vec<u8> = (0..70_000u32).map(|i| (i * 7 + i / 13) as u8).collect();
        for split in [0, 1, 7, 8, 255, 4096, 65_535, 70_000] {
            let (a, b) = text.split_at(split);
            let combined = multiply_mod_p(shift_for(b.len() as u64), crc32(a)) ^ crc32(b);
            assert_eq!(combined, crc32(&text), "split at {split}");
        }
    }

    #[test]
    fn a_member_decodes_to_the_head_then_the_text() {
        let text = br#"{"tools":[{"name":"get_workspace_context","description":"Reads the workspace."}]}}"#
            .repeat(300);
        let deflated = Deflated::from_gzip(&gzip(&text), text.len()).unwrap();
        for head in [
            &b""[..],
            br#"{"jsonrpc":"2.0","id":1,"result":"#,
            br#"{"jsonrpc":"2.0","id":"\u00e9 x","result":"#,
        ] {
            let member = deflated.member_after(head).unwrap();
            assert_eq!(gunzip(&member), [head, &text[..]].concat());
            // Smaller than the text by far: the point of the exercise.
            assert!(member.len() < text.len() / 10, "{} bytes", member.len());
        }
        // The longest head a stored block holds, and one byte more.
        let long = vec![b'x'; MAX_HEAD];
        assert_eq!(gunzip(&deflated.member_after(&long).unwrap()), [&long[..], &text[..]].concat());
        assert_eq!(deflated.member_after(&[b'x'; MAX_HEAD + 1]), None);
    }

    #[test]
    fn takes_only_what_the_runtime_writes() {
        let text = b"hello hello hello";
        let member = gzip(text);
        assert!(Deflated::from_gzip(&member, text.len()).is_some());
        assert_eq!(Deflated::from_gzip(&member, text.len() + 1), None, "a length that is not the text's");
        let mut named = member.clone();
        named[3] = 0x08; // FNAME: a header with an optional field
        assert_eq!(Deflated::from_gzip(&named, text.len()), None);
        assert_eq!(Deflated::from_gzip(&member[..12], text.len()), None);
        assert_eq!(Deflated::from_gzip(b"", 0), None);
    }

    #[test]
    fn reads_accept_encoding() {
        assert!(!accepts_gzip(None));
        assert!(accepts_gzip(Some("gzip, deflate, br")));
        assert!(accepts_gzip(Some("br;q=1.0, GZIP;q=0.5")));
        assert!(accepts_gzip(Some("x-gzip")));
        assert!(accepts_gzip(Some("*")));
        assert!(!accepts_gzip(Some("gzip;q=0, *")));
        assert!(!accepts_gzip(Some("*;q=0")));
        assert!(!accepts_gzip(Some("identity")));
        assert!(!accepts_gzip(Some("")));
        assert!(!accepts_gzip(Some("br, deflate")));
        assert!(accepts_gzip(Some("deflate, gzip;q=0.001")));
    }
}

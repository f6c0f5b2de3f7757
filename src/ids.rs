//! Random identifiers and secrets, from the platform's CSPRNG (`crypto.getRandomValues` on
//! Workers through getrandom's `wasm_js` backend, the OS natively).

/// `n` random bytes.
pub fn random_bytes<const N: usize>() -> [u8; N] {
    let mut buf = [0u8; N];
    // getrandom only fails when the platform has no entropy source at all; on Workers and on
    // any supported OS it cannot. Falling back to zeros would be silently insecure, so abort.
    if getrandom::fill(&mut buf).is_err() {
        panic!("no entropy source");
    }
    buf
}

/// Lower-case hex of `bytes`.
pub fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write as _;
    bytes.iter().fold(String::with_capacity(bytes.len() * 2), |mut s, b| {
        let _ = write!(s, "{b:02x}");
        s
    })
}

/// A random identifier: `prefix` followed by 128 bits of hex.
pub fn random_id(prefix: &str) -> String {
    format!("{prefix}{}", hex(&random_bytes::<16>()))
}

/// SHA-256 of `data` as lower-case hex.
pub fn sha256_hex(data: &[u8]) -> String {
    use sha2::{Digest, Sha256};
    hex(&Sha256::digest(data))
}

/// HMAC-SHA256 of `message` under `key`.
pub fn hmac_sha256(key: &[u8], message: &[u8]) -> [u8; 32] {
    use hmac::{Hmac, Mac};
    // RFC 2104 §2: HMAC takes keys of any length, so this cannot fail.
    let Ok(mut mac) = Hmac::<sha2::Sha256>::new_from_slice(key) else {
        unreachable!("HMAC accepts keys of any length")
    };
    mac.update(message);
    mac.finalize().into_bytes().into()
}

/// Compares two byte strings in time independent of where they differ.
pub fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_random_and_prefixed() {
        let a = random_id("ap_");
        assert!(a.starts_with("ap_") && a.len() == 35);
        assert_ne!(a, random_id("ap_"));
        assert_eq!(sha256_hex(b"abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
        assert!(constant_time_eq(b"abc", b"abc"));
        assert!(!constant_time_eq(b"abc", b"abd"));
        assert!(!constant_time_eq(b"abc", b"ab"));
    }
}

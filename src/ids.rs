//! Random identifiers and secrets, from the platform's CSPRNG (`crypto.getRandomValues` on
//! Workers through getrandom's `wasm_js` backend, the OS natively).

/// `n` random bytes.
pub fn random_bytes<const N: usize>() -> [u8; N] {
    let mut buf = [0u8; N];
    fill_random(&mut buf);
    buf
}

/// How many random bytes one call to the platform draws. On Workers each draw is a crossing
/// into JavaScript (`crypto.getRandomValues`), which a request id alone paid for on every
/// request that came without a `cf-ray` (local runs, the bench): about 1 µs of its CPU.
const POOL_BYTES: usize = 512;

/// Fills `out` from a pool of CSPRNG output drawn [`POOL_BYTES`] at a time. Every byte is handed
/// out once and then zeroed in the pool, so a pooled byte is as unpredictable as a fresh one.
/// The bytes not yet handed out sit in the module's memory, as the state of any userland
/// generator would (`rand`'s `ThreadRng` keeps its ChaCha state there); nothing in this crate
/// reads memory it did not write (`unsafe_code` is forbidden).
fn fill_random(out: &mut [u8]) {
    thread_local! {
        static POOL: std::cell::RefCell<([u8; POOL_BYTES], usize)> =
            const { std::cell::RefCell::new(([0; POOL_BYTES], POOL_BYTES)) };
    }
    if out.len() > POOL_BYTES {
        return draw(out);
    }
    POOL.with(|pool| {
        let (bytes, used) = &mut *pool.borrow_mut();
        if POOL_BYTES - *used < out.len() {
            draw(bytes);
            *used = 0;
        }
        let taken = &mut bytes[*used..*used + out.len()];
        out.copy_from_slice(taken);
        taken.fill(0);
        *used += out.len();
    });
}

fn draw(buf: &mut [u8]) {
    // getrandom only fails when the platform has no entropy source at all; on Workers and on
    // any supported OS it cannot. Falling back to zeros would be silently insecure, so abort.
    if getrandom::fill(buf).is_err() {
        panic!("no entropy source");
    }
}

/// A random identifier: `prefix` followed by 128 bits of hex.
pub fn random_id(prefix: &str) -> String {
    let mut id = String::with_capacity(prefix.len() + 32);
    id.push_str(prefix);
    push_hex(&mut id, &random_bytes::<16>());
    id
}

/// Lower-case hex of `bytes`.
pub fn hex(bytes: &[u8]) -> String {
    let mut s = String::with_capacity(bytes.len() * 2);
    push_hex(&mut s, bytes);
    s
}

// A table rather than `write!("{b:02x}")`, whose formatting machinery was a third of the cost of
// a request id.
fn push_hex(out: &mut String, bytes: &[u8]) {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    for b in bytes {
        out.push(char::from(DIGITS[usize::from(b >> 4)]));
        out.push(char::from(DIGITS[usize::from(b & 15)]));
    }
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

/// Whether `a` and `b` are equal, compared by `subtle` in time independent of where they differ
/// (secrets, MACs, hashes and PKCE values are compared only this way).
pub fn secret_eq(a: &[u8], b: &[u8]) -> bool {
    use subtle::ConstantTimeEq as _;
    a.ct_eq(b).into()
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
        assert!(secret_eq(b"abc", b"abc"));
        assert!(!secret_eq(b"abc", b"abd"));
        assert!(!secret_eq(b"abc", b"ab"));
    }

    #[test]
    fn hex_is_lower_case_and_two_digits_a_byte() {
        assert_eq!(hex(&[0x00, 0x0f, 0xa5, 0xff]), "000fa5ff");
        assert_eq!(hex(&[]), "");
    }

    #[test]
    fn pooled_random_bytes_are_never_handed_out_twice() {
        // 100 ids take 1,600 bytes: the pool is drawn again three times, across odd offsets.
        let mut seen = std::collections::HashSet::new();
        for _ in 0..100 {
            assert!(seen.insert(random_id("")));
            assert_ne!(random_bytes::<7>(), [0; 7]);
        }
        // Larger than the pool: drawn straight from the platform.
        let big = random_bytes::<{ POOL_BYTES + 1 }>();
        assert!(big.iter().any(|&b| b != 0));
    }
}

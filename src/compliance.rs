//! What every cold email must carry by law and by mailbox-provider rules (PRODUCT §8,
//! DOMAIN §3.7, §6): a working one-click unsubscribe link and the sender's postal address, and
//! for recipients under the GDPR, the Art. 14 notice of where their data came from.
//!
//! The unsubscribe link is `<PUBLIC_URL>/u/<token>`. The token names the workspace and a hash
//! of the address (never the address itself, which would leak into logs and referrers) and
//! is signed with a key derived from the token-signing keys, so it cannot be forged and keeps
//! working across key rotation while the old key is still listed. The sending side serves the
//! link (RFC 8058 one-click POST and a visible page) and adds the address to the suppression
//! list; `leads.email_hash` finds the address from the hash.

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use hmac::{Hmac, Mac};
use sha2::Sha256;

use crate::config::{Config, SigningKey};

/// Path prefix of unsubscribe links.
pub const UNSUBSCRIBE_PATH: &str = "/u/";

/// The hash of an address that tokens and `leads.email_hash` carry: 32 hex digits of SHA-256
/// of the lower-cased address.
pub fn email_hash(email: &str) -> String {
    crate::ids::sha256_hex(email.trim().to_ascii_lowercase().as_bytes())[..32].to_owned()
}

fn mac(key: &SigningKey, payload: &[u8]) -> Vec<u8> {
    // A key for this purpose only, derived from the signing key.
    let derive = |k: &[u8], m: &[u8]| -> Vec<u8> {
        let mut h = <Hmac<Sha256> as Mac>::new_from_slice(k).unwrap_or_else(|_| unreachable_hmac());
        h.update(m);
        h.finalize().into_bytes().to_vec()
    };
    let purpose = derive(&key.secret, b"vibesell/unsubscribe/v1");
    derive(&purpose, payload)[..16].to_vec()
}

#[cold]
fn unreachable_hmac() -> Hmac<Sha256> {
    // HMAC accepts keys of any length, so `new_from_slice` cannot fail.
    unreachable!("HMAC keys of any length are valid")
}

/// The token of an unsubscribe link for `email` in `workspace`.
pub fn unsubscribe_token(config: &Config, workspace: &str, email: &str) -> String {
    let payload = format!("{workspace}:{}", email_hash(email));
    let tag = mac(config.active_key(), payload.as_bytes());
    format!("{}.{}", URL_SAFE_NO_PAD.encode(payload), URL_SAFE_NO_PAD.encode(tag))
}

/// The unsubscribe link for `email` in `workspace`.
pub fn unsubscribe_url(config: &Config, workspace: &str, email: &str) -> String {
    format!("{}{UNSUBSCRIBE_PATH}{}", config.public_url(), unsubscribe_token(config, workspace, email))
}

/// The workspace and address hash of a valid token.
pub fn verify_unsubscribe_token(config: &Config, token: &str) -> Option<(String, String)> {
    let (payload_b64, tag_b64) = token.split_once('.')?;
    let payload = URL_SAFE_NO_PAD.decode(payload_b64).ok()?;
    let tag = URL_SAFE_NO_PAD.decode(tag_b64).ok()?;
    let valid = config.signing_keys.iter().any(|k| crate::ids::secret_eq(&mac(k, &payload), &tag));
    if !valid {
        return None;
    }
    let text = String::from_utf8(payload).ok()?;
    let (workspace, hash) = text.split_once(':')?;
    Some((workspace.to_owned(), hash.to_owned()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::test_config;

    #[test]
    fn tokens_verify_and_resist_tampering() {
        let config = test_config();
        let url = unsubscribe_url(&config, "ws_1", "Jane@Acme.com");
        assert!(url.starts_with("http://127.0.0.1:8787/u/"));
        assert!(!url.to_ascii_lowercase().contains("jane"), "the address is not in the link");
        let token = url.rsplit('/').next().unwrap();
        assert_eq!(
            verify_unsubscribe_token(&config, token),
            Some(("ws_1".into(), email_hash("jane@acme.com")))
        );
        let (payload, tag) = token.split_once('.').unwrap();
        let forged =
            format!("{}.{tag}", URL_SAFE_NO_PAD.encode(format!("ws_2:{}", email_hash("jane@acme.com"))));
        assert_eq!(verify_unsubscribe_token(&config, &forged), None);
        assert_eq!(verify_unsubscribe_token(&config, &format!("{payload}.AAAA")), None);
        assert_eq!(verify_unsubscribe_token(&config, "garbage"), None);
        assert_eq!(email_hash("x@y.z").len(), 32);
    }
}

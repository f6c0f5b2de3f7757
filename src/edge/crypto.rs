//! RS256 verification with the runtime's WebCrypto (`crypto.subtle`), for the OpenID provider's
//! ID tokens: the runtime's RSA is native code, and the Worker's wasm carries no bignum
//! arithmetic.

use wasm_bindgen::prelude::*;

use crate::oauth::oidc::Rs256Verifier;
use crate::tools::registry::LocalBoxFuture;

#[wasm_bindgen(inline_js = r#"
export async function verify_rs256(n, e, message, signature) {
  // Copies first: the views into wasm memory may be detached once this function awaits.
  const data = message.slice();
  const sig = signature.slice();
  try {
    const key = await crypto.subtle.importKey(
      "jwk",
      { kty: "RSA", n, e, alg: "RS256", ext: true },
      { name: "RSASSA-PKCS1-v1_5", hash: "SHA-256" },
      false,
      ["verify"],
    );
    return await crypto.subtle.verify("RSASSA-PKCS1-v1_5", key, sig, data);
  } catch {
    return false;
  }
}
"#)]
extern "C" {
    /// Resolves to whether the signature verifies (false for a key WebCrypto refuses).
    fn verify_rs256(n: &str, e: &str, message: &[u8], signature: &[u8]) -> js_sys::Promise;
}

/// [`Rs256Verifier`] over WebCrypto.
pub struct WebCryptoRs256;

impl Rs256Verifier for WebCryptoRs256 {
    fn verify<'a>(
        &'a self,
        n: &'a str,
        e: &'a str,
        message: &'a [u8],
        signature: &'a [u8],
    ) -> LocalBoxFuture<'a, bool> {
        let promise = verify_rs256(n, e, message, signature);
        Box::pin(async move {
            worker::wasm_bindgen_futures::JsFuture::from(promise)
                .await
                .ok()
                .and_then(|v| v.as_bool())
                .unwrap_or(false)
        })
    }
}

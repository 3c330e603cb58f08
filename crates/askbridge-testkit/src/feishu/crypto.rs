//! Encrypting and signing what Feishu POSTs to an app's callback URL, when
//! the app has an encrypt key:
//!
//! - the body is `{"encrypt": base64(iv ‖ AES-256-CBC(PKCS#7(json)))}`,
//!   keyed with the SHA-256 of the encrypt key, with a random 16-byte iv;
//! - `X-Lark-Signature` is the lower-case hex SHA-256 of the string
//!   `timestamp + nonce + encrypt_key` followed by the raw body bytes, with
//!   the timestamp (Unix seconds) in `X-Lark-Request-Timestamp` and the
//!   nonce in `X-Lark-Request-Nonce`.

use aes::Aes256;
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
#[cfg(test)]
use cbc::cipher::BlockDecryptMut;
use cbc::cipher::block_padding::Pkcs7;
use cbc::cipher::{BlockEncryptMut, KeyIvInit};
use sha2::{Digest, Sha256};

use super::util::hex;

/// The header with the signature.
pub const SIGNATURE_HEADER: &str = "X-Lark-Signature";

/// The header with the signed timestamp (Unix seconds).
pub const TIMESTAMP_HEADER: &str = "X-Lark-Request-Timestamp";

/// The header with the signed nonce.
pub const NONCE_HEADER: &str = "X-Lark-Request-Nonce";

fn key_of(encrypt_key: &str) -> [u8; 32] {
    Sha256::digest(encrypt_key.as_bytes()).into()
}

/// `base64(iv ‖ AES-256-CBC(PKCS#7(plain)))` with the key
/// `SHA-256(encrypt_key)`.
pub(crate) fn encrypt(encrypt_key: &str, iv: [u8; 16], plain: &[u8]) -> String {
    let cipher = cbc::Encryptor::<Aes256>::new(&key_of(encrypt_key).into(), &iv.into());
    let sealed = cipher.encrypt_padded_vec_mut::<Pkcs7>(plain);
    let mut out = Vec::with_capacity(16 + sealed.len());
    out.extend_from_slice(&iv);
    out.extend_from_slice(&sealed);
    STANDARD.encode(out)
}

/// Undoes [`encrypt`] (the fake only encrypts; this checks it).
///
/// # Errors
/// If `encrypted` is not base64, too short, or does not decrypt with this
/// key (bad padding).
#[cfg(test)]
pub(crate) fn decrypt(encrypt_key: &str, encrypted: &str) -> Result<Vec<u8>, String> {
    let bytes = STANDARD
        .decode(encrypted)
        .map_err(|error| format!("not base64: {error}"))?;
    if bytes.len() < 32 || bytes.len() % 16 != 0 {
        return Err(format!("{} bytes is not iv and whole blocks", bytes.len()));
    }
    let (iv, sealed) = bytes.split_at(16);
    let cipher = cbc::Decryptor::<Aes256>::new_from_slices(&key_of(encrypt_key), iv)
        .map_err(|error| format!("bad key or iv: {error}"))?;
    cipher
        .decrypt_padded_vec_mut::<Pkcs7>(sealed)
        .map_err(|_| "bad padding: wrong key?".to_owned())
}

/// `X-Lark-Signature`: hex SHA-256 of `timestamp + nonce + encrypt_key`
/// followed by `body`.
pub(crate) fn signature(timestamp: &str, nonce: &str, encrypt_key: &str, body: &[u8]) -> String {
    let mut hasher = Sha256::new();
    hasher.update(timestamp.as_bytes());
    hasher.update(nonce.as_bytes());
    hasher.update(encrypt_key.as_bytes());
    hasher.update(body);
    hex(&hasher.finalize())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The example of Feishu's "Encrypt the event" guide: encrypt key
    /// `test key`, decrypting to `hello world`.
    #[test]
    fn feishu_documented_example() {
        let plain = decrypt("test key", "P37w+VZImNgPEO1RBhJ6RtKl7n6zymIbEG1pReEzghk=")
            .expect("Feishu's example decrypts");
        assert_eq!(plain, b"hello world");
    }

    #[test]
    fn round_trip_and_wrong_key() {
        let sealed = encrypt("key", [7; 16], br#"{"a":1}"#);
        assert_eq!(decrypt("key", &sealed).expect("decrypts"), br#"{"a":1}"#);
        assert!(
            decrypt("other", &sealed).is_err()
                || decrypt("other", &sealed).ok() != Some(br#"{"a":1}"#.to_vec())
        );
        assert!(decrypt("key", "!!").is_err());
    }

    #[test]
    fn signature_is_hex_sha256_of_the_concatenation() {
        let direct = hex(&Sha256::digest(b"1700000000nonce-1keybody"));
        assert_eq!(signature("1700000000", "nonce-1", "key", b"body"), direct);
        assert_eq!(direct.len(), 64);
    }
}

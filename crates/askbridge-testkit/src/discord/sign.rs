//! Signing interaction bodies the way Discord signs the POSTs it sends to an
//! app's Interactions Endpoint URL: Ed25519 over `timestamp + body`, sent as
//! hex in `X-Signature-Ed25519` with the timestamp in
//! `X-Signature-Timestamp`; the app checks it with its public key.

use std::fmt;

use ed25519_dalek::{Signer as _, SigningKey};

use super::util::{hex, unix_ms};

/// The header with the hex Ed25519 signature.
pub const SIGNATURE_HEADER: &str = "X-Signature-Ed25519";

/// The header with the signed timestamp (Unix seconds).
pub const TIMESTAMP_HEADER: &str = "X-Signature-Timestamp";

/// The seed of [`InteractionSigner::default`]: a fixed test key, so the
/// public key is stable across runs.
const DEFAULT_SEED: [u8; 32] = *b"askbridge-fake-discord-signing!!";

/// An application's Ed25519 key pair, as Discord holds it to sign
/// interaction POSTs. The public half is what the Developer Portal shows as
/// the app's "Public Key" (and `verify_key` in the application object).
///
/// ```
/// use askbridge_testkit::discord::InteractionSigner;
/// let signer = InteractionSigner::default();
/// let body = br#"{"type":1}"#;
/// let signed = signer.sign_now(body);
/// assert_eq!(signer.public_key_hex().len(), 64);
/// assert_eq!(signed.signature, signer.sign(&signed.timestamp, body));
/// ```
#[derive(Clone)]
pub struct InteractionSigner {
    key: SigningKey,
}

impl fmt::Debug for InteractionSigner {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("InteractionSigner")
            .field("public_key", &self.public_key_hex())
            .finish_non_exhaustive()
    }
}

impl Default for InteractionSigner {
    fn default() -> Self {
        InteractionSigner::from_seed(DEFAULT_SEED)
    }
}

/// The two signature headers for one body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SignedHeaders {
    /// `X-Signature-Timestamp`: Unix seconds, as a decimal string.
    pub timestamp: String,
    /// `X-Signature-Ed25519`: 128 hex digits.
    pub signature: String,
}

impl InteractionSigner {
    /// The key pair from a 32-byte secret seed.
    pub fn from_seed(seed: [u8; 32]) -> Self {
        InteractionSigner {
            key: SigningKey::from_bytes(&seed),
        }
    }

    /// The public key as 64 lower-case hex digits (what serenity's
    /// `Verifier::new` takes).
    pub fn public_key_hex(&self) -> String {
        hex(self.key.verifying_key().as_bytes())
    }

    /// The hex signature of `timestamp` followed by `body`.
    pub fn sign(&self, timestamp: &str, body: &[u8]) -> String {
        let message = [timestamp.as_bytes(), body].concat();
        hex(&self.key.sign(&message).to_bytes())
    }

    /// Signs `body` with the current Unix time as timestamp.
    pub fn sign_now(&self, body: &[u8]) -> SignedHeaders {
        let timestamp = (unix_ms() / 1000).to_string();
        let signature = self.sign(&timestamp, body);
        SignedHeaders {
            timestamp,
            signature,
        }
    }
}

//! Signing request bodies the way Slack signs what it POSTs to an app's
//! Request URLs: `v0=` and the hex HMAC-SHA256, keyed with the app's
//! signing secret, of `v0:{timestamp}:{body}`, sent in `X-Slack-Signature`
//! with the timestamp (Unix seconds) in `X-Slack-Request-Timestamp`.

use std::fmt;

use hmac::{Hmac, Mac};
use sha2::Sha256;

use super::util::{hex, unix_secs};

/// The header with the `v0=…` signature.
pub const SIGNATURE_HEADER: &str = "X-Slack-Signature";

/// The header with the signed timestamp (Unix seconds).
pub const TIMESTAMP_HEADER: &str = "X-Slack-Request-Timestamp";

/// The signing secret of [`RequestSigner::default`] (the app's "Signing
/// Secret" in its Basic Information page).
pub const SIGNING_SECRET: &str = "askbridge-fake-slack-signing-secret";

/// An app's signing secret, as Slack holds it to sign its requests.
///
/// ```
/// use askbridge_testkit::slack::RequestSigner;
/// let signer = RequestSigner::new("8f742231b10e8888abcd99yyyzzz85a5");
/// let signed = signer.sign_at(1531420618, b"token=x");
/// assert_eq!(signed.timestamp, "1531420618");
/// assert!(signed.signature.starts_with("v0="));
/// assert_eq!(signed.signature.len(), 3 + 64);
/// ```
#[derive(Clone)]
pub struct RequestSigner {
    secret: String,
}

impl fmt::Debug for RequestSigner {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RequestSigner").finish_non_exhaustive()
    }
}

impl Default for RequestSigner {
    fn default() -> Self {
        RequestSigner::new(SIGNING_SECRET)
    }
}

/// The two signature headers for one body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SignedHeaders {
    /// `X-Slack-Request-Timestamp`: Unix seconds, as a decimal string.
    pub timestamp: String,
    /// `X-Slack-Signature`: `v0=` and 64 hex digits.
    pub signature: String,
}

impl RequestSigner {
    /// A signer with this signing secret.
    pub fn new(secret: impl Into<String>) -> Self {
        RequestSigner {
            secret: secret.into(),
        }
    }

    /// The signing secret (what slack-morphism's
    /// `SlackEventSignatureVerifier::new` takes).
    pub fn secret(&self) -> &str {
        &self.secret
    }

    /// `v0=` and the hex HMAC-SHA256 of `v0:{timestamp}:{body}`.
    pub fn signature(&self, timestamp: &str, body: &[u8]) -> String {
        // HMAC takes keys of any length; `new_from_slice` cannot fail.
        let Ok(mut mac) = Hmac::<Sha256>::new_from_slice(self.secret.as_bytes()) else {
            return String::new();
        };
        mac.update(b"v0:");
        mac.update(timestamp.as_bytes());
        mac.update(b":");
        mac.update(body);
        format!("v0={}", hex(&mac.finalize().into_bytes()))
    }

    /// Signs `body` as sent at Unix time `timestamp` (to test replay
    /// windows, give an old one).
    pub fn sign_at(&self, timestamp: u64, body: &[u8]) -> SignedHeaders {
        let timestamp = timestamp.to_string();
        let signature = self.signature(&timestamp, body);
        SignedHeaders {
            timestamp,
            signature,
        }
    }

    /// Signs `body` as sent now.
    pub fn sign_now(&self, body: &[u8]) -> SignedHeaders {
        self.sign_at(unix_secs(), body)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The worked example of Slack's "Verifying requests from Slack" guide.
    #[test]
    fn slack_documented_example() {
        let signer = RequestSigner::new("8f742231b10e8888abcd99yyyzzz85a5");
        let body = "token=xyzz0WbapA4vBCDEFasx0q6G&team_id=T1DC2JH3J&team_domain=testteamnow&channel_id=G8PSS9T3V&channel_name=foobar&user_id=U2CERLKJA&user_name=roadrunner&command=%2Fwebhook-collect&text=&response_url=https%3A%2F%2Fhooks.slack.com%2Fcommands%2FT1DC2JH3J%2F397700885554%2F96rGlfmibIGlgcZRskXaIFfN&trigger_id=398738663015.47445629121.803a0bc887a14d10d2c447fce8b6703c";
        assert_eq!(
            signer.signature("1531420618", body.as_bytes()),
            "v0=a2114d57b48eac39b9ad189dd8316235a7b4a8d21a10bd27519666489c69b503"
        );
    }
}

//! One-click answers: a link per option of an ask's one question, signed
//! so that nobody can make one, and out of date when the ask is. Pure:
//! the secret and the time are arguments.
//!
//! A link names the ask, the option (its index), the address the ask
//! went to and when it expires, and carries an HMAC-SHA256 of those four
//! under the daemon's secret:
//! `{base}/email/answer/{ask}/{option}?to={address}&exp={unix seconds}&sig={hex}`.
//! Opening it (mail scanners open every link) only shows a confirmation;
//! the confirmation's POST answers.

use hmac::{Hmac, Mac};
use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, utf8_percent_encode};
use sha2::Sha256;

/// What a link's parts escape: all but RFC 3986's unreserved characters.
const COMPONENT: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~');

/// Where the links point, under the daemon's public URL.
pub const ANSWER_PATH: &str = "/email/answer";

/// What a link says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Claim {
    /// The ask's id.
    pub ask: String,
    /// The option's index in the ask's one question.
    pub option: usize,
    /// The address the ask went to: who answers.
    pub to: String,
    /// When it stops working (Unix seconds).
    pub expires: u64,
}

/// Why a link does not count.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum LinkError {
    /// Its signature is not the secret's: made up or changed.
    #[error("the link's signature does not match")]
    Forged,
    /// Past its time.
    #[error("the link has expired")]
    Expired,
}

type HmacSha256 = Hmac<Sha256>;

fn mac(secret: &[u8], claim: &Claim) -> HmacSha256 {
    // Any key length is taken: this cannot fail.
    let mut mac = HmacSha256::new_from_slice(secret).unwrap_or_else(|_| unreachable!());
    mac.update(
        format!(
            "{}\n{}\n{}\n{}",
            claim.ask, claim.option, claim.to, claim.expires
        )
        .as_bytes(),
    );
    mac
}

/// The claim's signature under `secret`, as hex.
pub fn sign(secret: &[u8], claim: &Claim) -> String {
    hex::encode(mac(secret, claim).finalize().into_bytes())
}

/// The link for `claim` under `base` (the daemon's public URL).
pub fn url(base: &str, secret: &[u8], claim: &Claim) -> String {
    format!(
        "{}{ANSWER_PATH}/{}/{}?to={}&exp={}&sig={}",
        base.trim_end_matches('/'),
        utf8_percent_encode(&claim.ask, COMPONENT),
        claim.option,
        utf8_percent_encode(&claim.to, COMPONENT),
        claim.expires,
        sign(secret, claim)
    )
}

/// Whether `signature` is `claim`'s under `secret` (compared in constant
/// time) and the claim is still good at `now` (Unix seconds).
pub fn verify(secret: &[u8], claim: &Claim, signature: &str, now: u64) -> Result<(), LinkError> {
    let bytes = hex::decode(signature).map_err(|_| LinkError::Forged)?;
    mac(secret, claim)
        .verify_slice(&bytes)
        .map_err(|_| LinkError::Forged)?;
    match now < claim.expires {
        true => Ok(()),
        false => Err(LinkError::Expired),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn claim() -> Claim {
        Claim {
            ask: "ask_01".to_owned(),
            option: 1,
            to: "alice@example.com".to_owned(),
            expires: 1_800_000_600,
        }
    }

    #[test]
    fn a_link_counts_until_it_expires_and_only_as_signed() {
        let secret = b"0123456789abcdef0123456789abcdef";
        let signature = sign(secret, &claim());
        assert_eq!(verify(secret, &claim(), &signature, 1_800_000_000), Ok(()));
        assert_eq!(
            verify(secret, &claim(), &signature, 1_800_000_600),
            Err(LinkError::Expired)
        );
        // Any part changed, another secret, a made-up signature.
        let changed = [
            Claim {
                option: 0,
                ..claim()
            },
            Claim {
                to: "mallory@example.com".to_owned(),
                ..claim()
            },
            Claim {
                ask: "ask_02".to_owned(),
                ..claim()
            },
            Claim {
                expires: 1_900_000_000,
                ..claim()
            },
        ];
        for other in changed {
            assert_eq!(
                verify(secret, &other, &signature, 1_800_000_000),
                Err(LinkError::Forged),
                "{other:?}"
            );
        }
        assert_eq!(
            verify(b"another secret", &claim(), &signature, 1_800_000_000),
            Err(LinkError::Forged)
        );
        for bad in ["", "zz", "abc", "é1"] {
            assert_eq!(
                verify(secret, &claim(), bad, 1_800_000_000),
                Err(LinkError::Forged)
            );
        }
    }

    #[test]
    fn the_url_names_the_claim_and_its_signature() {
        let secret = b"s";
        let url = url("https://askbridge.example.com/", secret, &claim());
        assert_eq!(
            url,
            format!(
                "https://askbridge.example.com/email/answer/ask_01/1?to=alice%40example.com&exp=1800000600&sig={}",
                sign(secret, &claim())
            )
        );
    }
}

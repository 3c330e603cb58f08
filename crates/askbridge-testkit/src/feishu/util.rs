//! Clocks, ids and small JSON helpers, written the way Feishu writes them.

use std::fmt::Write as _;
use std::time::{SystemTime, UNIX_EPOCH};

use serde_json::Value;

/// Unix time now, in milliseconds (Feishu's `create_time`s are strings of
/// these).
pub(crate) fn unix_millis() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|elapsed| u64::try_from(elapsed.as_millis()).unwrap_or(u64::MAX))
        .unwrap_or(0)
}

/// Unix time now, in whole seconds.
pub(crate) fn unix_secs() -> u64 {
    unix_millis() / 1000
}

/// Lower-case hex of `bytes`.
pub(crate) fn hex(bytes: &[u8]) -> String {
    bytes
        .iter()
        .fold(String::with_capacity(bytes.len() * 2), |mut out, byte| {
            let _ = write!(out, "{byte:02x}");
            out
        })
}

/// A pseudo-random hex string of `len` digits from a counter: stable within
/// a run, distinct per `seed` (for ids, which tests may print and compare).
pub(crate) fn pseudo_hex(seed: u64, len: usize) -> String {
    let mut out = String::with_capacity(len + 16);
    let mut state = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ 0xA5A5_5A5A_C3C3_3C3C;
    while out.len() < len {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        let _ = write!(out, "{state:016x}");
    }
    out.truncate(len);
    out
}

/// 16 random bytes (a UUID v4's, from the operating system's generator).
pub(crate) fn random_bytes() -> [u8; 16] {
    *uuid::Uuid::new_v4().as_bytes()
}

/// A random hex string of 32 digits (for secrets: tokens, tickets,
/// challenges, nonces).
pub(crate) fn random_hex() -> String {
    hex(&random_bytes())
}

/// `value[key]` as a string slice.
pub(crate) fn str_field<'a>(value: &'a Value, key: &str) -> Option<&'a str> {
    value.get(key).and_then(Value::as_str)
}

/// The value of `key` in a query string.
pub(crate) fn query_param(query: Option<&str>, key: &str) -> Option<String> {
    form_urlencoded::parse(query?.as_bytes())
        .find(|(name, _)| name == key)
        .map(|(_, value)| value.into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_and_queries() {
        assert_eq!(hex(&[0, 255]), "00ff");
        assert_eq!(pseudo_hex(1, 40).len(), 40);
        assert_ne!(pseudo_hex(1, 8), pseudo_hex(2, 8));
        assert_ne!(random_hex(), random_hex());
        assert_eq!(
            query_param(Some("a=1&receive_id_type=chat%5Fid"), "receive_id_type"),
            Some("chat_id".to_owned())
        );
        assert_eq!(query_param(None, "a"), None);
    }
}

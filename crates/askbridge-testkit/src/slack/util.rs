//! Timestamps, ids, form encoding and small JSON helpers, written the way
//! Slack writes them.

use std::time::{SystemTime, UNIX_EPOCH};

use serde_json::{Map, Value};

/// Unix time now, in microseconds.
pub(crate) fn unix_micros() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|elapsed| u64::try_from(elapsed.as_micros()).unwrap_or(u64::MAX))
        .unwrap_or(0)
}

/// Unix time now, in whole seconds.
pub(crate) fn unix_secs() -> u64 {
    unix_micros() / 1_000_000
}

/// Hands out message timestamps the way Slack writes them
/// (`"1700000000.000100"`: seconds, a dot, six digits of microseconds),
/// from the clock and strictly increasing, so every message's `ts` is
/// unique and later messages sort after earlier ones.
#[derive(Debug, Default)]
pub(crate) struct Clock {
    last: u64,
}

impl Clock {
    /// The next timestamp, as microseconds.
    pub(crate) fn next_micros(&mut self) -> u64 {
        let now = unix_micros().max(self.last + 1);
        self.last = now;
        now
    }

    /// The next timestamp, formatted.
    pub(crate) fn next_ts(&mut self) -> String {
        format_ts(self.next_micros())
    }
}

/// `1700000000000100` → `"1700000000.000100"`.
pub(crate) fn format_ts(micros: u64) -> String {
    format!("{}.{:06}", micros / 1_000_000, micros % 1_000_000)
}

/// Lower-case hex of `bytes`.
pub(crate) fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write as _;
    bytes
        .iter()
        .fold(String::with_capacity(bytes.len() * 2), |mut out, byte| {
            let _ = write!(out, "{byte:02x}");
            out
        })
}

/// A pseudo-random hex string of `len` digits from a counter (stable
/// within a run, distinct per `seed`).
pub(crate) fn pseudo_hex(seed: u64, len: usize) -> String {
    let mut out = String::with_capacity(len);
    let mut state = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ 0xA5A5_5A5A_C3C3_3C3C;
    while out.len() < len {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        out.push_str(&format!("{state:016x}"));
    }
    out.truncate(len);
    out
}

/// Decodes `application/x-www-form-urlencoded` (also query strings) into
/// pairs; `+` is a space, `%XX` a byte.
pub(crate) fn form_decode(text: &str) -> Vec<(String, String)> {
    text.split('&')
        .filter(|pair| !pair.is_empty())
        .map(|pair| {
            let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
            (percent_decode(key), percent_decode(value))
        })
        .collect()
}

fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut index = 0;
    while index < bytes.len() {
        let byte = bytes[index];
        let escaped = (byte == b'%')
            .then(|| bytes.get(index + 1..index + 3))
            .flatten()
            .and_then(|digits| std::str::from_utf8(digits).ok())
            .and_then(|digits| u8::from_str_radix(digits, 16).ok());
        match (byte, escaped) {
            (_, Some(decoded)) => {
                out.push(decoded);
                index += 3;
            }
            (b'+', None) => {
                out.push(b' ');
                index += 1;
            }
            (other, None) => {
                out.push(other);
                index += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Encodes one form value (`application/x-www-form-urlencoded`: letters,
/// digits and `*-._` as is, space as `+`, everything else `%XX`), as
/// Slack's interactivity POSTs do.
pub(crate) fn form_encode(text: &str) -> String {
    let mut out = String::with_capacity(text.len() * 3);
    for byte in text.bytes() {
        match byte {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'*' | b'-' | b'.' | b'_' => {
                out.push(char::from(byte));
            }
            b' ' => out.push('+'),
            _ => out.push_str(&format!("%{byte:02X}")),
        }
    }
    out
}

/// Form or query pairs as a JSON object of strings (a repeated key keeps
/// the last value).
pub(crate) fn pairs_to_json(pairs: Vec<(String, String)>) -> Value {
    let mut object = Map::new();
    for (key, value) in pairs {
        object.insert(key, Value::String(value));
    }
    Value::Object(object)
}

/// `value[key]` as a string slice.
pub(crate) fn str_field<'a>(value: &'a Value, key: &str) -> Option<&'a str> {
    value.get(key).and_then(Value::as_str)
}

/// Length as Slack counts it for limits: characters (Unicode scalar
/// values).
pub(crate) fn char_len(text: &str) -> usize {
    text.chars().count()
}

/// A parameter that may be JSON or a JSON-encoded string (form bodies send
/// `blocks` and `view` as JSON text): the parsed value, or `Err` with the
/// text if it does not parse.
pub(crate) fn json_param(value: &Value) -> Result<Value, String> {
    match value {
        Value::String(text) => serde_json::from_str(text).map_err(|_| text.clone()),
        other => Ok(other.clone()),
    }
}

/// A boolean parameter: JSON `true`, or `"true"`/`"1"` in forms.
pub(crate) fn bool_param(value: Option<&Value>) -> bool {
    match value {
        Some(Value::Bool(flag)) => *flag,
        Some(Value::String(text)) => text == "true" || text == "1",
        Some(Value::Number(number)) => number.as_u64() == Some(1),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps_increase_in_slack_format() {
        assert_eq!(format_ts(1_700_000_000_000_100), "1700000000.000100");
        let mut clock = Clock::default();
        let first = clock.next_ts();
        let second = clock.next_ts();
        assert!(second > first);
        assert_eq!(first.len(), 17);
        assert_eq!(&first[10..11], ".");
    }

    #[test]
    fn forms_round_trip() {
        let text = r#"{"a": "b&c=d", "e": "ü +"}"#;
        let encoded = format!("payload={}&x=1", form_encode(text));
        assert!(!encoded[8..].contains(' '));
        let pairs = form_decode(&encoded);
        assert_eq!(pairs[0], ("payload".to_owned(), text.to_owned()));
        assert_eq!(pairs[1], ("x".to_owned(), "1".to_owned()));
        assert_eq!(
            form_decode("a=%zz&b=%4"),
            [
                ("a".to_owned(), "%zz".to_owned()),
                ("b".to_owned(), "%4".to_owned())
            ]
        );
        assert_eq!(hex(&[0, 255]), "00ff");
        assert_eq!(pseudo_hex(1, 40).len(), 40);
        assert_ne!(pseudo_hex(1, 8), pseudo_hex(2, 8));
    }
}

//! Snowflakes, timestamps and small JSON helpers, written the way Discord
//! writes them.

use std::time::{SystemTime, UNIX_EPOCH};

use serde_json::Value;

/// The first millisecond of 2015, Discord's epoch for snowflakes.
pub(crate) const DISCORD_EPOCH_MS: u64 = 1_420_070_400_000;

/// Unix time now, in milliseconds.
pub(crate) fn unix_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|elapsed| u64::try_from(elapsed.as_millis()).unwrap_or(u64::MAX))
        .unwrap_or(0)
}

/// Hands out increasing snowflakes: the creation time in the upper bits, as
/// on Discord, and strictly increasing even within one millisecond.
#[derive(Debug, Default)]
pub(crate) struct Snowflakes {
    last: u64,
}

impl Snowflakes {
    /// The next id.
    pub(crate) fn next_id(&mut self) -> u64 {
        let base = unix_ms().saturating_sub(DISCORD_EPOCH_MS) << 22;
        let id = base.max(self.last + 1);
        self.last = id;
        id
    }
}

/// The Unix time in milliseconds a snowflake was made at.
pub(crate) fn snowflake_ms(id: u64) -> u64 {
    (id >> 22) + DISCORD_EPOCH_MS
}

/// An ISO 8601 timestamp as Discord writes them:
/// `2024-05-01T12:34:56.789000+00:00`.
pub(crate) fn iso8601(unix_ms: u64) -> String {
    let secs = unix_ms / 1000;
    let millis = unix_ms % 1000;
    let days = i64::try_from(secs / 86_400).unwrap_or(0);
    let rest = secs % 86_400;
    let (year, month, day) = civil_from_days(days);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{millis:03}000+00:00",
        rest / 3600,
        (rest % 3600) / 60,
        rest % 60
    )
}

/// Days since 1970-01-01 to a (year, month, day) in the proleptic Gregorian
/// calendar (Howard Hinnant's `civil_from_days`).
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = if m <= 2 { y + 1 } else { y };
    (
        year,
        u32::try_from(m).unwrap_or(1),
        u32::try_from(d).unwrap_or(1),
    )
}

/// A snowflake from JSON, written as a string (as Discord does) or a number.
pub(crate) fn snowflake(value: &Value) -> Option<u64> {
    match value {
        Value::String(text) => text.trim().parse().ok(),
        Value::Number(number) => number.as_u64(),
        _ => None,
    }
}

/// `value[key]` as a string slice.
pub(crate) fn str_field<'a>(value: &'a Value, key: &str) -> Option<&'a str> {
    value.get(key).and_then(Value::as_str)
}

/// `value[key]` as an unsigned integer.
pub(crate) fn u64_field(value: &Value, key: &str) -> Option<u64> {
    value.get(key).and_then(Value::as_u64)
}

/// Length as Discord counts it for limits: Unicode scalar values (serenity
/// checks the same way before sending).
pub(crate) fn char_len(text: &str) -> usize {
    text.chars().count()
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps() {
        assert_eq!(iso8601(0), "1970-01-01T00:00:00.000000+00:00");
        assert_eq!(
            iso8601(1_714_566_896_789),
            "2024-05-01T12:34:56.789000+00:00"
        );
        assert_eq!(iso8601(951_782_400_000), "2000-02-29T00:00:00.000000+00:00");
    }

    #[test]
    fn snowflakes_increase_and_carry_time() {
        let mut ids = Snowflakes::default();
        let first = ids.next_id();
        let second = ids.next_id();
        assert!(second > first);
        let made = snowflake_ms(first);
        assert!(made.abs_diff(unix_ms()) < 5_000);
        assert_eq!(snowflake(&Value::from("42")), Some(42));
        assert_eq!(snowflake(&Value::from(42)), Some(42));
        assert_eq!(snowflake(&Value::from("x")), None);
        assert_eq!(hex(&[0, 15, 255]), "000fff");
    }
}

//! Rate limits like Slack's: per method, per workspace (or per channel for
//! posting messages), answered with `429`, `Retry-After` (whole seconds)
//! and `{"ok": false, "error": "ratelimited"}`.

use std::collections::HashMap;
use std::time::{Duration, Instant};

/// One limit: a bucket of `burst` requests that refills one request every
/// `every` (a token bucket: short bursts pass, the sustained rate is one
/// per `every`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limit {
    /// Requests allowed at once.
    pub burst: u32,
    /// One more request is allowed after this long.
    pub every: Duration,
    /// Whether the bucket is per channel (chat.postMessage) rather than
    /// per workspace.
    pub per_channel: bool,
}

impl Limit {
    /// `per_minute` requests a minute per workspace, all of them allowed
    /// in a burst (Slack's tiers: "Tier 3: 50+ per minute").
    pub const fn per_minute(per_minute: u32) -> Limit {
        Limit {
            burst: per_minute,
            every: Duration::from_millis(
                60_000 / (if per_minute == 0 { 1 } else { per_minute }) as u64,
            ),
            per_channel: false,
        }
    }

    /// A bucket of `burst` refilled one request per `every`, per
    /// workspace.
    pub const fn bucket(burst: u32, every: Duration) -> Limit {
        Limit {
            burst,
            every,
            per_channel: false,
        }
    }

    /// The same limit, counted per channel.
    #[must_use]
    pub const fn per_channel(mut self) -> Limit {
        self.per_channel = true;
        self
    }
}

/// Rate limits the fake enforces, per Web API method (off by default).
///
/// Slack publishes tiers per method ("per API method per app per
/// workspace"): Tier 1 1+ per minute, Tier 2 20+, Tier 3 50+, Tier 4 100+,
/// and for `chat.postMessage` a special limit of "one message per second
/// per channel", with "short bursts >1 allowed" and no published burst
/// size. [`RateLimits::slack`] uses: `chat.postMessage` 1 per second per
/// channel with bursts of 3; `chat.update` and `conversations.open` Tier 3
/// (50 a minute); `chat.postEphemeral`, `views.open` and `users.info`
/// Tier 4 (100 a minute); `apps.connections.open` Tier 1 (1 a minute, with
/// a burst of 5 so reconnects work); `auth.test` Special (treated as Tier
/// 4). The response URL (`chat.postMessage`-like, 1 a second) is not
/// limited.
///
/// ```
/// use std::time::Duration;
/// use askbridge_testkit::slack::{Limit, RateLimits};
/// let tight = RateLimits::off().with("chat.update", Limit::bucket(1, Duration::from_secs(2)));
/// assert!(tight.limit("chat.update").is_some());
/// assert!(RateLimits::slack().limit("chat.postMessage").is_some_and(|limit| limit.per_channel));
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RateLimits {
    methods: HashMap<String, Limit>,
}

impl RateLimits {
    /// No limits: the default.
    pub fn off() -> RateLimits {
        RateLimits::default()
    }

    /// The limits described above, after Slack's published tiers.
    pub fn slack() -> RateLimits {
        RateLimits::off()
            .with(
                "chat.postMessage",
                Limit::bucket(3, Duration::from_secs(1)).per_channel(),
            )
            .with("chat.update", Limit::per_minute(50))
            .with("conversations.open", Limit::per_minute(50))
            .with("chat.postEphemeral", Limit::per_minute(100))
            .with("views.open", Limit::per_minute(100))
            .with("users.info", Limit::per_minute(100))
            .with("auth.test", Limit::per_minute(100))
            .with(
                "apps.connections.open",
                Limit::bucket(5, Duration::from_secs(60)),
            )
    }

    /// Adds (or replaces) the limit of `method`.
    #[must_use]
    pub fn with(mut self, method: &str, limit: Limit) -> RateLimits {
        self.methods.insert(method.to_owned(), limit);
        self
    }

    /// The limit of `method`, if any.
    pub fn limit(&self, method: &str) -> Option<Limit> {
        self.methods.get(method).copied()
    }
}

#[derive(Debug, Clone, Copy)]
struct Bucket {
    tokens: f64,
    at: Instant,
}

/// The buckets' levels.
#[derive(Debug, Default)]
pub(crate) struct Limiter {
    buckets: HashMap<(String, Option<String>), Bucket>,
}

impl Limiter {
    /// Counts a request to `method` (in `channel`) at `now`, or refuses it
    /// with the whole seconds to wait (at least 1, as `Retry-After`).
    pub(crate) fn check(
        &mut self,
        limits: &RateLimits,
        method: &str,
        channel: Option<&str>,
        now: Instant,
    ) -> Result<(), u64> {
        let Some(limit) = limits.limit(method) else {
            return Ok(());
        };
        let key = (
            method.to_owned(),
            limit
                .per_channel
                .then(|| channel.unwrap_or_default().to_owned()),
        );
        let capacity = f64::from(limit.burst.max(1));
        let every = limit.every.as_secs_f64().max(1e-6);
        let bucket = self.buckets.entry(key).or_insert(Bucket {
            tokens: capacity,
            at: now,
        });
        let refilled = now.saturating_duration_since(bucket.at).as_secs_f64() / every;
        bucket.tokens = (bucket.tokens + refilled).min(capacity);
        bucket.at = now;
        if bucket.tokens >= 1.0 {
            bucket.tokens -= 1.0;
            Ok(())
        } else {
            let wait = (1.0 - bucket.tokens) * every;
            // Whole seconds, rounded up, at least 1.
            let secs = wait.ceil().max(1.0);
            Err(if secs.is_finite() && secs < 1e9 {
                secs as u64
            } else {
                1
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn token_bucket_per_channel() {
        let limits = RateLimits::slack();
        let mut limiter = Limiter::default();
        let start = Instant::now();
        for _ in 0..3 {
            assert!(
                limiter
                    .check(&limits, "chat.postMessage", Some("C1"), start)
                    .is_ok()
            );
        }
        assert_eq!(
            limiter.check(&limits, "chat.postMessage", Some("C1"), start),
            Err(1)
        );
        // Another channel has its own bucket.
        assert!(
            limiter
                .check(&limits, "chat.postMessage", Some("C2"), start)
                .is_ok()
        );
        let later = start + Duration::from_secs(1);
        assert!(
            limiter
                .check(&limits, "chat.postMessage", Some("C1"), later)
                .is_ok()
        );
        // Unlimited methods always pass.
        assert!(limiter.check(&limits, "users.list", None, start).is_ok());
    }

    #[test]
    fn retry_after_in_whole_seconds() {
        let limits =
            RateLimits::off().with("chat.update", Limit::bucket(1, Duration::from_secs(5)));
        let mut limiter = Limiter::default();
        let start = Instant::now();
        assert!(limiter.check(&limits, "chat.update", None, start).is_ok());
        let soon = start + Duration::from_millis(1500);
        assert_eq!(limiter.check(&limits, "chat.update", None, soon), Err(4));
    }
}

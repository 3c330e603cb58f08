//! Rate limits like Discord's: per-route buckets that reset at a fixed time
//! (announced in `X-RateLimit-*` headers) and a global per-second cap, with
//! `429` answers that carry `Retry-After`.

use std::collections::{HashMap, VecDeque};
use std::time::{Duration, Instant};

/// One per-route bucket: `limit` requests, then the bucket is empty until
/// `per` after its first request, when it refills (Discord's buckets reset at
/// a fixed time, reported as `X-RateLimit-Reset`; they do not slide).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Window {
    /// Requests allowed per window.
    pub limit: u32,
    /// Window length.
    pub per: Duration,
}

impl Window {
    /// `limit` requests per `per`.
    pub const fn new(limit: u32, per: Duration) -> Window {
        Window { limit, per }
    }
}

/// Rate limits the fake enforces (off by default).
///
/// Discord publishes only the global limit (50 requests a second per bot;
/// interaction callbacks and interaction webhooks are exempt) and tells
/// clients to read per-route limits from the headers. The per-route values
/// in [`RateLimits::DISCORD`] are the ones Discord reports for these routes
/// in practice (5 messages per 5 seconds per channel, also for edits).
///
/// A request over a limit gets `429` with `{"message": "You are being rate
/// limited.", "retry_after": <seconds, float>, "global": <bool>}`, the
/// `Retry-After` header (whole seconds, rounded up, as Discord sends it) and
/// `X-RateLimit-Scope`; global ones also `X-RateLimit-Global: true`. Every
/// answer on a limited route carries `X-RateLimit-Limit`, `-Remaining`,
/// `-Reset` (Unix seconds), `-Reset-After` (seconds) and `-Bucket`, which
/// serenity's rate limiter reads to wait before it would hit the limit.
///
/// ```
/// use std::time::Duration;
/// use askbridge_testkit::discord::{RateLimits, Window};
/// let tight = RateLimits {
///     message_create: Some(Window::new(2, Duration::from_millis(500))),
///     ..RateLimits::OFF
/// };
/// assert_eq!(RateLimits::DISCORD.global_per_sec, Some(50));
/// # let _ = tight;
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RateLimits {
    /// Requests a second over all bot-authorised routes.
    pub global_per_sec: Option<u32>,
    /// `POST /channels/{channel.id}/messages`, per channel.
    pub message_create: Option<Window>,
    /// `PATCH /channels/{channel.id}/messages/{message.id}`, per channel.
    pub message_edit: Option<Window>,
}

impl RateLimits {
    /// No limits: the default.
    pub const OFF: RateLimits = RateLimits {
        global_per_sec: None,
        message_create: None,
        message_edit: None,
    };

    /// Discord's limits: 50 requests a second globally (published), 5
    /// message creations and 5 edits per 5 seconds per channel (the values
    /// Discord reports in the headers for these routes).
    pub const DISCORD: RateLimits = RateLimits {
        global_per_sec: Some(50),
        message_create: Some(Window::new(5, Duration::from_secs(5))),
        message_edit: Some(Window::new(5, Duration::from_secs(5))),
    };
}

impl Default for RateLimits {
    fn default() -> Self {
        RateLimits::OFF
    }
}

/// Which per-route bucket a request falls in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Bucket {
    /// Creating messages in a channel.
    MessageCreate(u64),
    /// Editing messages in a channel.
    MessageEdit(u64),
}

impl Bucket {
    fn window(self, limits: &RateLimits) -> Option<Window> {
        match self {
            Bucket::MessageCreate(_) => limits.message_create,
            Bucket::MessageEdit(_) => limits.message_edit,
        }
    }

    /// The `X-RateLimit-Bucket` hash: shared by all channels, as Discord's
    /// does not include the top-level resource.
    fn hash(self) -> &'static str {
        match self {
            Bucket::MessageCreate(_) => "80c17d2f203122d936070c88c8d10f33",
            Bucket::MessageEdit(_) => "d1ed4b6c10a6b5f27a3e8e6f2a7c9b40",
        }
    }
}

/// Response headers, name and value.
pub(crate) type Headers = Vec<(&'static str, String)>;

/// A request refused with 429.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Limited {
    /// Seconds until a retry can succeed.
    pub(crate) retry_after: f64,
    /// Whether the global limit was hit.
    pub(crate) global: bool,
    /// Headers for the 429 (rate-limit headers, `Retry-After`, scope).
    pub(crate) headers: Headers,
}

#[derive(Debug, Clone, Copy)]
struct FixedWindow {
    started: Instant,
    count: u32,
}

/// The buckets' counts.
#[derive(Debug, Default)]
pub(crate) struct Limiter {
    buckets: HashMap<Bucket, FixedWindow>,
    global: VecDeque<Instant>,
}

impl Limiter {
    /// Counts a request at `now` (Unix time `unix_secs`), or refuses it.
    /// On success, the headers to send with the answer.
    pub(crate) fn check(
        &mut self,
        limits: &RateLimits,
        bucket: Option<Bucket>,
        global_applies: bool,
        now: Instant,
        unix_secs: f64,
    ) -> Result<Headers, Limited> {
        if global_applies && let Some(limit) = limits.global_per_sec {
            while self
                .global
                .front()
                .is_some_and(|at| now.duration_since(*at) >= Duration::from_secs(1))
            {
                self.global.pop_front();
            }
            if self.global.len() >= limit as usize {
                let oldest = self.global.front().copied().unwrap_or(now);
                let wait = Duration::from_secs(1).saturating_sub(now.duration_since(oldest));
                let retry_after = round_ms(wait.as_secs_f64());
                return Err(Limited {
                    retry_after,
                    global: true,
                    headers: vec![
                        ("Retry-After", retry_after_header(retry_after)),
                        ("X-RateLimit-Global", "true".to_owned()),
                        ("X-RateLimit-Scope", "global".to_owned()),
                    ],
                });
            }
        }

        let window = bucket.and_then(|bucket| Some((bucket, bucket.window(limits)?)));
        let mut headers = Headers::new();
        if let Some((bucket, window)) = window {
            let entry = self.buckets.entry(bucket).or_insert(FixedWindow {
                started: now,
                count: 0,
            });
            if now.duration_since(entry.started) >= window.per {
                *entry = FixedWindow {
                    started: now,
                    count: 0,
                };
            }
            let reset_after = window.per.saturating_sub(now.duration_since(entry.started));
            let reset_after_secs = round_ms(reset_after.as_secs_f64());
            let full = entry.count >= window.limit;
            if !full {
                entry.count += 1;
            }
            let remaining = window.limit.saturating_sub(entry.count);
            headers = vec![
                ("X-RateLimit-Limit", window.limit.to_string()),
                ("X-RateLimit-Remaining", remaining.to_string()),
                (
                    "X-RateLimit-Reset",
                    format!("{:.3}", unix_secs + reset_after_secs),
                ),
                ("X-RateLimit-Reset-After", format!("{reset_after_secs:.3}")),
                ("X-RateLimit-Bucket", bucket.hash().to_owned()),
            ];
            if full {
                headers.push(("Retry-After", retry_after_header(reset_after_secs)));
                headers.push(("X-RateLimit-Scope", "user".to_owned()));
                return Err(Limited {
                    retry_after: reset_after_secs,
                    global: false,
                    headers,
                });
            }
        }
        if global_applies && limits.global_per_sec.is_some() {
            self.global.push_back(now);
        }
        Ok(headers)
    }
}

/// Seconds with millisecond precision, as Discord reports them.
fn round_ms(secs: f64) -> f64 {
    (secs * 1000.0).ceil() / 1000.0
}

/// `Retry-After` is whole seconds on Discord (`64.57` is sent as `65`).
fn retry_after_header(secs: f64) -> String {
    format!("{}", secs.ceil().max(0.0))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header<'a>(headers: &'a Headers, name: &str) -> Option<&'a str> {
        headers
            .iter()
            .find(|(key, _)| *key == name)
            .map(|(_, value)| value.as_str())
    }

    #[test]
    fn fixed_window_buckets() {
        let limits = RateLimits {
            message_create: Some(Window::new(2, Duration::from_secs(5))),
            ..RateLimits::OFF
        };
        let mut limiter = Limiter::default();
        let start = Instant::now();
        let bucket = Some(Bucket::MessageCreate(1));
        let first = limiter
            .check(&limits, bucket, true, start, 1000.0)
            .expect("first request passes");
        assert_eq!(header(&first, "X-RateLimit-Remaining"), Some("1"));
        assert_eq!(header(&first, "X-RateLimit-Limit"), Some("2"));
        assert_eq!(header(&first, "X-RateLimit-Reset-After"), Some("5.000"));
        assert_eq!(header(&first, "X-RateLimit-Reset"), Some("1005.000"));
        let later = start + Duration::from_millis(1500);
        limiter
            .check(&limits, bucket, true, later, 1001.5)
            .expect("second request passes");
        let refused = limiter
            .check(&limits, bucket, true, later, 1001.5)
            .expect_err("third request is refused");
        assert!(!refused.global);
        assert!((refused.retry_after - 3.5).abs() < 1e-9);
        assert_eq!(header(&refused.headers, "Retry-After"), Some("4"));
        assert_eq!(header(&refused.headers, "X-RateLimit-Scope"), Some("user"));
        // Other channels have their own bucket; the window resets in full.
        assert!(
            limiter
                .check(&limits, Some(Bucket::MessageCreate(2)), true, later, 0.0)
                .is_ok()
        );
        let reset = start + Duration::from_secs(5);
        assert!(limiter.check(&limits, bucket, true, reset, 0.0).is_ok());
    }

    #[test]
    fn global_limit() {
        let limits = RateLimits {
            global_per_sec: Some(2),
            ..RateLimits::OFF
        };
        let mut limiter = Limiter::default();
        let start = Instant::now();
        assert!(limiter.check(&limits, None, true, start, 0.0).is_ok());
        assert!(limiter.check(&limits, None, true, start, 0.0).is_ok());
        // Exempt routes pass and are not counted.
        assert!(limiter.check(&limits, None, false, start, 0.0).is_ok());
        let refused = limiter
            .check(&limits, None, true, start, 0.0)
            .expect_err("over the global limit");
        assert!(refused.global);
        assert_eq!(header(&refused.headers, "X-RateLimit-Global"), Some("true"));
        assert_eq!(header(&refused.headers, "Retry-After"), Some("1"));
        let later = start + Duration::from_secs(1);
        assert!(limiter.check(&limits, None, true, later, 0.0).is_ok());
    }
}

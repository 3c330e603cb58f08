//! Rate limits like Feishu's, counted over a sliding second:
//!
//! - per app and endpoint (sending, replying, editing messages: "1000 per
//!   minute, 50 per second"), answered with HTTP `429`,
//!   `{"code": 99991400, "msg": "request trigger frequency limit"}` and the
//!   `x-ogw-ratelimit-limit` / `x-ogw-ratelimit-reset` headers;
//! - per chat (messages sent and replied to one chat or user: 5 per
//!   second) and per message (edits of one message: 5 per second),
//!   answered with HTTP `400`, `{"code": 230020, "msg": "This operation
//!   triggers the frequency limit."}`.

use std::collections::{HashMap, VecDeque};
use std::time::{Duration, Instant};

const WINDOW: Duration = Duration::from_secs(1);

/// The rate limits the fake enforces (all off by default).
///
/// ```
/// use askbridge_testkit::feishu::RateLimits;
/// let feishu = RateLimits::feishu();
/// assert_eq!(feishu.app_per_second, Some(50));
/// assert_eq!(feishu.chat_per_second, Some(5));
/// let tight = RateLimits::off().chat_per_second(2);
/// assert_eq!(tight.app_per_second, None);
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RateLimits {
    /// Requests per second per app to each message endpoint (create,
    /// reply, patch); over it: `429` / `99991400`.
    pub app_per_second: Option<u32>,
    /// Messages per second sent or replied into one chat (a user's p2p
    /// chat included); over it: `400` / `230020`.
    pub chat_per_second: Option<u32>,
    /// Edits per second of one message; over it: `400` / `230020`.
    pub edits_per_second: Option<u32>,
}

impl RateLimits {
    /// No limits: the default.
    pub fn off() -> RateLimits {
        RateLimits::default()
    }

    /// Feishu's documented limits: 50 requests per second per endpoint, 5
    /// messages per second per chat, 5 edits per second per message.
    pub fn feishu() -> RateLimits {
        RateLimits {
            app_per_second: Some(50),
            chat_per_second: Some(5),
            edits_per_second: Some(5),
        }
    }

    /// Sets the per-app, per-endpoint limit.
    #[must_use]
    pub fn app_per_second(mut self, limit: u32) -> RateLimits {
        self.app_per_second = Some(limit);
        self
    }

    /// Sets the per-chat limit.
    #[must_use]
    pub fn chat_per_second(mut self, limit: u32) -> RateLimits {
        self.chat_per_second = Some(limit);
        self
    }

    /// Sets the per-message edit limit.
    #[must_use]
    pub fn edits_per_second(mut self, limit: u32) -> RateLimits {
        self.edits_per_second = Some(limit);
        self
    }
}

/// What a limit counts.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) enum Key {
    /// An endpoint, app-wide (`"im.message.create"`).
    Endpoint(&'static str),
    /// Messages into a chat.
    Chat(String),
    /// Edits of a message.
    Message(String),
}

/// The requests counted in the last second, per key.
#[derive(Debug, Default)]
pub(crate) struct Limiter {
    windows: HashMap<Key, VecDeque<Instant>>,
}

impl Limiter {
    /// Whether one more request under `key` fits `limit` at `now`; `Err`
    /// with the whole seconds (at least 1) until one fits.
    pub(crate) fn check(&mut self, key: &Key, limit: Option<u32>, now: Instant) -> Result<(), u64> {
        let Some(limit) = limit else {
            return Ok(());
        };
        let window = self.windows.entry(key.clone()).or_default();
        while window
            .front()
            .is_some_and(|&at| now.saturating_duration_since(at) >= WINDOW)
        {
            window.pop_front();
        }
        if window.len() < usize::try_from(limit).unwrap_or(usize::MAX) {
            return Ok(());
        }
        let oldest = window.front().copied().unwrap_or(now);
        let wait = (oldest + WINDOW).saturating_duration_since(now);
        Err(wait.as_secs_f64().ceil().max(1.0) as u64)
    }

    /// Counts a request under `key` at `now`.
    pub(crate) fn count(&mut self, key: Key, now: Instant) {
        self.windows.entry(key).or_default().push_back(now);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sliding_second() {
        let mut limiter = Limiter::default();
        let key = Key::Chat("oc_1".into());
        let start = Instant::now();
        for _ in 0..5 {
            assert!(limiter.check(&key, Some(5), start).is_ok());
            limiter.count(key.clone(), start);
        }
        assert_eq!(limiter.check(&key, Some(5), start), Err(1));
        assert!(
            limiter
                .check(&Key::Chat("oc_2".into()), Some(5), start)
                .is_ok()
        );
        assert!(limiter.check(&key, None, start).is_ok());
        let later = start + Duration::from_secs(1);
        assert!(limiter.check(&key, Some(5), later).is_ok());
    }
}

//! Flood control for `sendMessage`: sliding windows, like Telegram's.

use std::collections::{HashMap, VecDeque};
use std::time::{Duration, Instant};

const SECOND: Duration = Duration::from_secs(1);
const MINUTE: Duration = Duration::from_secs(60);

/// Rate limits the fake enforces on `sendMessage` (off by default).
///
/// A call over a limit gets `429 Too Many Requests: retry after N` with
/// `"parameters": {"retry_after": N}` (teloxide: `RequestError::RetryAfter`)
/// and is not counted as sent. Windows slide: a limit of one a second
/// refuses a message while another one to that chat was accepted less than
/// a second ago.
///
/// ```
/// use askbridge_testkit::telegram::RateLimits;
/// let strict = RateLimits { per_chat_per_sec: Some(1), ..RateLimits::OFF };
/// assert_eq!(RateLimits::TELEGRAM.overall_per_sec, Some(30));
/// # let _ = strict;
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RateLimits {
    /// Messages a second to any one chat.
    pub per_chat_per_sec: Option<u32>,
    /// Messages a minute to any one group or supergroup (negative chat id).
    pub per_group_per_min: Option<u32>,
    /// Messages a second to all chats together.
    pub overall_per_sec: Option<u32>,
    /// The `retry_after` reported with a 429, in seconds.
    pub retry_after_secs: u64,
    /// Clock slack: an earlier message counts against a window only while
    /// it is younger than the window minus this. Client-side throttles (such
    /// as teloxide's `Throttle`) space messages exactly at the limit, and
    /// without slack a millisecond of network jitter between two requests
    /// would turn that into a 429 that Telegram would not send.
    pub slack: Duration,
}

impl RateLimits {
    /// No limits: the default.
    pub const OFF: RateLimits = RateLimits {
        per_chat_per_sec: None,
        per_group_per_min: None,
        overall_per_sec: None,
        retry_after_secs: 1,
        slack: Duration::from_millis(100),
    };

    /// Telegram's published limits: one message a second to a chat, twenty
    /// a minute to a group, thirty a second overall; `retry_after` 1.
    pub const TELEGRAM: RateLimits = RateLimits {
        per_chat_per_sec: Some(1),
        per_group_per_min: Some(20),
        overall_per_sec: Some(30),
        retry_after_secs: 1,
        slack: Duration::from_millis(100),
    };

    /// Whether any limit is set.
    pub fn any(&self) -> bool {
        self.per_chat_per_sec.is_some()
            || self.per_group_per_min.is_some()
            || self.overall_per_sec.is_some()
    }
}

impl Default for RateLimits {
    fn default() -> Self {
        RateLimits::OFF
    }
}

/// Accepted sends, for the windows.
#[derive(Debug, Default)]
pub(crate) struct Limiter {
    per_chat: HashMap<i64, VecDeque<Instant>>,
    overall: VecDeque<Instant>,
}

impl Limiter {
    /// `Err(retry_after_secs)` if a message to `chat_id` now would break a
    /// limit.
    pub(crate) fn check(
        &mut self,
        limits: &RateLimits,
        chat_id: i64,
        now: Instant,
    ) -> Result<(), u64> {
        if !limits.any() {
            return Ok(());
        }
        self.prune(now);
        let within = |times: &VecDeque<Instant>, window: Duration| {
            let window = window.saturating_sub(limits.slack);
            times
                .iter()
                .rev()
                .take_while(|time| now.duration_since(**time) < window)
                .count()
        };
        let refuse = Err(limits.retry_after_secs);
        if let Some(limit) = limits.overall_per_sec
            && within(&self.overall, SECOND) >= limit as usize
        {
            return refuse;
        }
        let empty = VecDeque::new();
        let chat = self.per_chat.get(&chat_id).unwrap_or(&empty);
        if let Some(limit) = limits.per_chat_per_sec
            && within(chat, SECOND) >= limit as usize
        {
            return refuse;
        }
        if chat_id < 0
            && let Some(limit) = limits.per_group_per_min
            && within(chat, MINUTE) >= limit as usize
        {
            return refuse;
        }
        Ok(())
    }

    /// Counts an accepted message.
    pub(crate) fn record(&mut self, limits: &RateLimits, chat_id: i64, now: Instant) {
        if !limits.any() {
            return;
        }
        self.per_chat.entry(chat_id).or_default().push_back(now);
        self.overall.push_back(now);
    }

    fn prune(&mut self, now: Instant) {
        let old = |time: &Instant| now.duration_since(*time) >= MINUTE;
        while self.overall.front().is_some_and(old) {
            self.overall.pop_front();
        }
        self.per_chat.retain(|_, times| {
            while times.front().is_some_and(old) {
                times.pop_front();
            }
            !times.is_empty()
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sliding_windows() {
        let limits = RateLimits::TELEGRAM;
        let mut limiter = Limiter::default();
        let start = Instant::now();
        assert_eq!(limiter.check(&limits, 1, start), Ok(()));
        limiter.record(&limits, 1, start);
        assert_eq!(limiter.check(&limits, 1, start), Err(1));
        assert_eq!(limiter.check(&limits, 2, start), Ok(()));
        assert_eq!(limiter.check(&limits, 1, start + SECOND), Ok(()));

        let mut group = Limiter::default();
        for second in 0..20 {
            let now = start + SECOND * second;
            assert_eq!(group.check(&limits, -7, now), Ok(()), "message {second}");
            group.record(&limits, -7, now);
        }
        assert_eq!(group.check(&limits, -7, start + SECOND * 21), Err(1));
        assert_eq!(group.check(&limits, -7, start + MINUTE), Ok(()));

        let mut overall = Limiter::default();
        for chat in 0..30 {
            overall.record(&limits, chat, start);
        }
        assert_eq!(overall.check(&limits, 99, start), Err(1));
    }
}

//! The bridge's clock: the one place the daemon reads the time the core is
//! given, and the one way it sleeps until a point in that time.
//!
//! [`Clock::system`] and [`Clock::starting_at`] are a wall time captured
//! once plus [`tokio::time::Instant`] elapsed since, so deadlines follow a
//! monotonic clock and a test on paused tokio time moves them instantly.
//! [`Clock::manual`] moves only when told ([`Clock::advance`]), for tests
//! that control time without tokio's `test-util`.

use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use askbridge_core::model::Timestamp;
use tokio::sync::watch;

/// Where the bridge's time comes from. Cheap to clone; clones share time.
#[derive(Debug, Clone)]
pub struct Clock {
    source: Source,
}

#[derive(Debug, Clone)]
enum Source {
    /// `wall` at `start`, then tokio's monotonic time.
    Monotonic {
        wall: Timestamp,
        start: tokio::time::Instant,
    },
    /// Moves only when told.
    Manual(Arc<watch::Sender<Timestamp>>),
}

impl Clock {
    /// The system's wall time now, then tokio's monotonic time.
    pub fn system() -> Clock {
        let wall = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |since| {
                u64::try_from(since.as_millis()).unwrap_or(u64::MAX)
            });
        Clock::starting_at(Timestamp(wall))
    }

    /// `start` now, then tokio's monotonic time (paused time included).
    pub fn starting_at(start: Timestamp) -> Clock {
        Clock {
            source: Source::Monotonic {
                wall: start,
                start: tokio::time::Instant::now(),
            },
        }
    }

    /// `start`, moving only through [`Clock::advance`] and [`Clock::set`].
    pub fn manual(start: Timestamp) -> Clock {
        Clock {
            source: Source::Manual(Arc::new(watch::Sender::new(start))),
        }
    }

    /// The time now.
    pub fn now(&self) -> Timestamp {
        match &self.source {
            Source::Monotonic { wall, start } => {
                let elapsed = u64::try_from(start.elapsed().as_millis()).unwrap_or(u64::MAX);
                Timestamp(wall.0.saturating_add(elapsed))
            }
            Source::Manual(now) => *now.borrow(),
        }
    }

    /// Moves a manual clock forward, waking whatever sleeps until a time
    /// now reached. Returns `false` (and does nothing) on a monotonic
    /// clock: use `tokio::time::advance` there.
    pub fn advance(&self, by: Duration) -> bool {
        let millis = u64::try_from(by.as_millis()).unwrap_or(u64::MAX);
        match &self.source {
            Source::Monotonic { .. } => false,
            Source::Manual(now) => {
                now.send_modify(|now| now.0 = now.0.saturating_add(millis));
                true
            }
        }
    }

    /// Sets a manual clock (never backwards). Returns `false` (and does
    /// nothing) on a monotonic clock.
    pub fn set(&self, to: Timestamp) -> bool {
        match &self.source {
            Source::Monotonic { .. } => false,
            Source::Manual(now) => {
                now.send_modify(|now| *now = (*now).max(to));
                true
            }
        }
    }

    /// `d` after now.
    pub fn after(&self, d: Duration) -> Timestamp {
        let millis = u64::try_from(d.as_millis()).unwrap_or(u64::MAX);
        Timestamp(self.now().0.saturating_add(millis))
    }

    /// Returns once the clock reads `at` (never, when `None`) or `wake` is
    /// notified, whichever comes first: how a background task waits for
    /// its next time or for news.
    pub async fn sleep_until_woken(&self, at: Option<Timestamp>, wake: &tokio::sync::Notify) {
        match at {
            Some(at) => {
                tokio::select! {
                    () = self.sleep_until(at) => {}
                    () = wake.notified() => {}
                }
            }
            None => wake.notified().await,
        }
    }

    /// Returns once the clock reads `at` or later.
    pub async fn sleep_until(&self, at: Timestamp) {
        match &self.source {
            Source::Monotonic { wall, start } => {
                let offset = Duration::from_millis(at.0.saturating_sub(wall.0));
                match start.checked_add(offset) {
                    Some(instant) => tokio::time::sleep_until(instant).await,
                    None => std::future::pending().await,
                }
            }
            Source::Manual(now) => {
                let mut rx = now.subscribe();
                loop {
                    if *rx.borrow_and_update() >= at {
                        return;
                    }
                    if rx.changed().await.is_err() {
                        // Cannot happen while `self` holds the sender.
                        std::future::pending::<()>().await;
                    }
                }
            }
        }
    }

    /// Returns after `d` on this clock.
    pub async fn sleep(&self, d: Duration) {
        self.sleep_until(self.after(d)).await;
    }
}

impl Default for Clock {
    /// [`Clock::system`].
    fn default() -> Clock {
        Clock::system()
    }
}

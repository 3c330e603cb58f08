//! Quiescence: whether this instance has done all it has to do at the
//! bridge's time now.
//!
//! Every piece of background work holds a token while it works: each
//! queued channel operation from enqueue until it is done, and the
//! deadline and reminder tasks while they look at what is due. A token
//! waiting on the bridge's clock ([`Settle::sleeping`]) is asleep until
//! its time instead. The instance has settled when no token is working
//! and every sleeping one waits for a time after now: so "settled" needs
//! no wake-up to have happened after the clock moved; a sleeper whose
//! time has come counts as working.

use std::collections::BTreeMap;
use std::future::Future;
use std::sync::Mutex;

use askbridge_core::model::Timestamp;
use tokio::sync::Notify;

use super::clock::Clock;
use super::lock;

/// The tokens of one instance.
#[derive(Debug, Default)]
pub(super) struct Settle {
    tokens: Mutex<Tokens>,
    changed: Notify,
}

#[derive(Debug, Default)]
struct Tokens {
    /// Working now.
    working: usize,
    /// Asleep, by the time each wakes ([`NEVER`] for "when woken").
    asleep: BTreeMap<Timestamp, usize>,
}

/// A sleeper woken only by news, never by the clock.
const NEVER: Timestamp = Timestamp(u64::MAX);

impl Settle {
    /// One more token at work: a queued operation or a task starting.
    pub(super) fn start(&self) {
        lock(&self.tokens).working += 1;
    }

    /// One token done for good.
    pub(super) fn done(&self) {
        let mut tokens = lock(&self.tokens);
        tokens.working = tokens.working.saturating_sub(1);
        drop(tokens);
        self.changed.notify_waiters();
    }

    /// Runs `sleep` with one working token asleep until `until` (`None`:
    /// until woken by news), and working again once it returns.
    pub(super) async fn sleeping<F: Future>(
        &self,
        until: Option<Timestamp>,
        sleep: F,
    ) -> F::Output {
        let until = until.unwrap_or(NEVER);
        {
            let mut tokens = lock(&self.tokens);
            tokens.working = tokens.working.saturating_sub(1);
            *tokens.asleep.entry(until).or_default() += 1;
        }
        self.changed.notify_waiters();
        // Awake again even if the sleep is dropped half way.
        let _awake = Awake {
            settle: self,
            until,
        };
        sleep.await
    }

    /// Returns once no token is working and every sleeping one waits for
    /// a time after `clock`'s now.
    pub(super) async fn settled(&self, clock: &Clock) {
        loop {
            let changed = self.changed.notified();
            tokio::pin!(changed);
            changed.as_mut().enable();
            let (working, first_wake) = {
                let tokens = lock(&self.tokens);
                (tokens.working, tokens.asleep.keys().next().copied())
            };
            let now = clock.now();
            if working == 0 && first_wake.is_none_or(|at| at > now) {
                return;
            }
            changed.await;
        }
    }
}

/// Turns a sleeping token back into a working one when dropped.
struct Awake<'a> {
    settle: &'a Settle,
    until: Timestamp,
}

impl Drop for Awake<'_> {
    fn drop(&mut self) {
        {
            let mut tokens = lock(&self.settle.tokens);
            if let Some(count) = tokens.asleep.get_mut(&self.until) {
                *count -= 1;
                if *count == 0 {
                    tokens.asleep.remove(&self.until);
                }
            }
            tokens.working += 1;
        }
        self.settle.changed.notify_waiters();
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::time::Duration;

    use super::*;

    const START: Timestamp = Timestamp(1_000_000);

    #[tokio::test]
    async fn settled_waits_for_work_and_for_sleepers_whose_time_has_come() {
        let clock = Clock::manual(START);
        let settle = Arc::new(Settle::default());
        settle.settled(&clock).await;

        settle.start();
        let sleeper = {
            let (settle, clock) = (Arc::clone(&settle), clock.clone());
            tokio::spawn(async move {
                let at = clock.after(Duration::from_secs(10));
                settle.sleeping(Some(at), clock.sleep_until(at)).await;
                settle.done();
            })
        };
        // Asleep until later: settled, once the sleeper has gone to sleep.
        settle.settled(&clock).await;
        assert!(!sleeper.is_finished());
        // Its time has come: not settled until it has woken and finished.
        clock.advance(Duration::from_secs(10));
        settle.settled(&clock).await;
        assert_eq!(lock(&settle.tokens).working, 0);
        assert!(lock(&settle.tokens).asleep.is_empty());
        sleeper.await.expect("sleeper");
    }
}

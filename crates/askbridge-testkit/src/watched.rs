//! What every fake is built on: its state behind a lock, a signal woken on
//! every change, and the one wait every fake's `wait_for` is made of, so
//! tests wait for conditions instead of sleeping.

use std::pin::pin;
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use tokio::sync::Notify;

/// A fake's state and the signal that it changed.
pub(crate) struct Watched<S> {
    state: Mutex<S>,
    /// Woken (all waiters) after every change to the state.
    pub(crate) changed: Notify,
}

impl<S> Watched<S> {
    pub(crate) fn new(state: S) -> Watched<S> {
        Watched {
            state: Mutex::new(state),
            changed: Notify::new(),
        }
    }

    /// The state; a test that panicked while holding it does not poison it
    /// for the others.
    pub(crate) fn lock(&self) -> MutexGuard<'_, S> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Changes the state and wakes everyone waiting on it.
    pub(crate) fn mutate<T>(&self, change: impl FnOnce(&mut S) -> T) -> T {
        let out = change(&mut self.lock());
        self.changed.notify_waiters();
        out
    }

    /// Runs `change`; wakes the waiters only if it says it changed
    /// something.
    pub(crate) fn mutate_if<T>(&self, change: impl FnOnce(&mut S) -> (T, bool)) -> T {
        let (out, changed) = change(&mut self.lock());
        if changed {
            self.changed.notify_waiters();
        }
        out
    }

    /// Waits until `check` returns `Some`, re-checking after every change,
    /// and returns its value; after `timeout`, panics with what
    /// `gave_up(state)` says.
    pub(crate) async fn wait_for<T>(
        &self,
        timeout: Duration,
        mut check: impl FnMut(&S) -> Option<T>,
        gave_up: impl FnOnce(&S) -> String,
    ) -> T {
        let deadline = tokio::time::Instant::now() + timeout;
        loop {
            let mut changed = pin!(self.changed.notified());
            changed.as_mut().enable();
            if let Some(found) = check(&self.lock()) {
                return found;
            }
            if tokio::time::timeout_at(deadline, changed).await.is_err() {
                let state = self.lock();
                if let Some(found) = check(&state) {
                    return found;
                }
                panic!("{}", gave_up(&state));
            }
        }
    }
}

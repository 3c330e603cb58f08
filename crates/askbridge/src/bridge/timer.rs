//! Deadlines: one task for all asks, sleeping until the earliest one.
//!
//! Pending asks sit in a set ordered by deadline. The task sleeps on the
//! bridge's clock until the first deadline and is woken early (a
//! [`Notify`]) when an earlier one is armed or the bridge is dropped. At a
//! deadline it applies the core's `tick`, which persists the timeout like
//! any other change. The task holds the bridge only weakly, so dropping
//! every [`super::Bridge`] handle stops it.

use std::collections::BTreeSet;
use std::sync::{Arc, Weak};
use std::time::Duration;

use askbridge_core::model::Timestamp;
use tokio::sync::Notify;

use super::clock::Clock;
use super::memory::AskKey;
use super::{BridgeError, Change, Inner, lock};
use crate::store::StoreError;

/// Pending deadlines, earliest first; ids are shared with the ask map.
pub(super) type Deadlines = BTreeSet<(Timestamp, AskKey)>;

/// How long to wait before retrying a timeout the database refused.
const RETRY_FAILED_EXPIRY: Duration = Duration::from_secs(1);

/// Runs until the bridge is dropped.
pub(super) async fn run(bridge: Weak<Inner>, wake: Arc<Notify>, clock: Clock) {
    let Some(settle) = bridge.upgrade().map(|inner| Arc::clone(&inner.settle)) else {
        return;
    };
    loop {
        let next = {
            let Some(inner) = bridge.upgrade() else {
                return;
            };
            let now = clock.now();
            let due = take_due(&inner, now);
            if !due.is_empty() {
                for id in due {
                    expire(&inner, &id).await;
                }
                continue;
            }
            lock(&inner.deadlines).first().map(|(at, _)| *at)
        };
        settle
            .sleeping(next, clock.sleep_until_woken(next, &wake))
            .await;
    }
}

/// Removes and returns the asks whose deadline is at or before `now`.
fn take_due(inner: &Inner, now: Timestamp) -> Vec<(Timestamp, AskKey)> {
    let mut deadlines = lock(&inner.deadlines);
    let mut due = Vec::new();
    while deadlines.first().is_some_and(|(at, _)| *at <= now) {
        if let Some(first) = deadlines.pop_first() {
            due.push(first);
        }
    }
    due
}

async fn expire(inner: &Arc<Inner>, (deadline, id): &(Timestamp, AskKey)) {
    let Some(entry) = inner.entry(*id) else {
        return;
    };
    if let Err(error) = inner.apply(&entry, Change::Tick).await {
        if is_corrupt(&error) {
            tracing::error!(ask_id = %id, error = %error, "cannot time out an unreadable ask");
            return;
        }
        tracing::error!(ask_id = %id, error = %error, "could not time the ask out; retrying");
        let retry_at =
            Timestamp(
                inner.clock.now().0.max(deadline.0).saturating_add(
                    u64::try_from(RETRY_FAILED_EXPIRY.as_millis()).unwrap_or(1_000),
                ),
            );
        inner.arm(retry_at, *id);
    }
}

/// Whether the error is a stored row that does not read back (retrying
/// will not help).
fn is_corrupt(error: &BridgeError) -> bool {
    match error {
        BridgeError::Storage(source) => matches!(source, StoreError::Corrupt { .. }),
        _ => false,
    }
}

//! Deadlines: one task for all asks, sleeping until the earliest one.
//!
//! Pending asks sit in a set ordered by deadline. The task sleeps on the
//! bridge's clock until the first deadline and is woken early (a
//! [`Notify`]) when an earlier one is armed or the bridge is dropped. At a
//! deadline it applies the core's `tick`, which persists the timeout like
//! any other change. The task holds the bridge only weakly, so dropping
//! every [`super::Bridge`] handle stops it.
//!
//! The same task says when a pending ask reaches the web page at an
//! escalation step's time ([`BridgeEvent::Arrived`]): nothing is posted
//! there, so nothing else would.

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use askbridge_core::model::Timestamp;
use tokio::sync::Notify;

use super::clock::Clock;
use super::memory::AskKey;
use super::{BridgeError, BridgeEvent, Change, Inner, lock};
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
            let arrived = take_due(&inner.arrivals, now);
            for (_, id) in &arrived {
                arrive(&inner, *id).await;
            }
            let due = take_due(&inner.deadlines, now);
            if !due.is_empty() {
                for id in due {
                    expire(&inner, &id).await;
                }
                continue;
            }
            let first = |set: &Mutex<Deadlines>| lock(set).first().map(|(at, _)| *at);
            first(&inner.deadlines)
                .into_iter()
                .chain(first(&inner.arrivals))
                .min()
        };
        settle
            .sleeping(next, clock.sleep_until_woken(next, &wake))
            .await;
    }
}

/// Removes and returns the asks whose time in `set` is at or before `now`.
fn take_due(set: &Mutex<Deadlines>, now: Timestamp) -> Vec<(Timestamp, AskKey)> {
    let mut deadlines = lock(set);
    let mut due = Vec::new();
    while deadlines.first().is_some_and(|(at, _)| *at <= now) {
        if let Some(first) = deadlines.pop_first() {
            due.push(first);
        }
    }
    due
}

/// Tells subscribers that a pending ask reached the web page.
async fn arrive(inner: &Arc<Inner>, id: AskKey) {
    let Some(entry) = inner.entry(id) else {
        return;
    };
    let slot = entry.slot.lock().await;
    if slot.ended {
        return;
    }
    let view = match slot.lifecycle.as_deref() {
        Some(lifecycle) => inner.view(lifecycle),
        None => {
            drop(slot);
            match inner.load_view(&id.to_string()).await {
                Ok(view) if view.state.is_pending() => view,
                Ok(_) => return,
                Err(error) => {
                    tracing::warn!(ask_id = %id, error = %error, "cannot read an ask that reached the web page");
                    return;
                }
            }
        }
    };
    inner.emit(|| BridgeEvent::Arrived(Arc::new(view)));
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

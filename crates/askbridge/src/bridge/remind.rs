//! Reminders: one task for all asks, sleeping until the earliest reminder
//! is due.
//!
//! When each pending ask's next reminder is due is stored with it
//! (`remind_at`), so a restart — even a crash — neither loses nor repeats
//! one. Sending one is a compare-and-set on the number sent
//! ([`crate::store::Store::claim_reminder`]), so however many instances
//! wake for it, one records it and only that one has the ask's places
//! remind the person. The core decides when each is due
//! ([`askbridge_core::lifecycle::AskLifecycle::next_reminder`]).
//!
//! A reminder is recorded before the places are told; an instance that
//! dies in between loses that one reminder rather than send it twice.

use std::sync::{Arc, Weak};
use std::time::Duration;

use askbridge_core::model::Timestamp;
use tokio::sync::Notify;

use super::clock::Clock;
use super::outbox::{self, Op};
use super::{BridgeError, Found, Inner, record};

/// Due reminders read per statement.
const BATCH: i64 = 100;
/// The first wait after the database failed; doubled up to [`RETRY_MAX`].
const RETRY_FIRST: Duration = Duration::from_millis(500);
/// The longest.
const RETRY_MAX: Duration = Duration::from_secs(10);
/// The wait before looking again at a reminder that is due by the record
/// but not by the ask (its deadline has come: the timeout is on its way).
const STALE_WAIT: Duration = Duration::from_secs(1);

/// Runs until the bridge is dropped.
pub(super) async fn run(bridge: Weak<Inner>, wake: Arc<Notify>, clock: Clock) {
    let mut backoff: Option<Duration> = None;
    loop {
        let next = {
            let Some(inner) = bridge.upgrade() else {
                return;
            };
            let now = clock.now();
            match send_due(&inner, now).await {
                Ok(next) => {
                    backoff = None;
                    // One still due was not sent: its ask is about to time out.
                    next.map(|at| {
                        if at <= now {
                            clock.after(STALE_WAIT)
                        } else {
                            at
                        }
                    })
                }
                Err(error) => {
                    let wait = backoff.map_or(RETRY_FIRST, |wait| (wait * 2).min(RETRY_MAX));
                    backoff = Some(wait);
                    tracing::warn!(
                        error = %error,
                        retry_in_ms = u64::try_from(wait.as_millis()).unwrap_or(u64::MAX),
                        "could not send due reminders; trying again"
                    );
                    Some(clock.after(wait))
                }
            }
        };
        clock.sleep_until_woken(next, &wake).await;
    }
}

/// Sends the reminders due at `now`; returns when the next one is due.
async fn send_due(inner: &Arc<Inner>, now: Timestamp) -> Result<Option<Timestamp>, BridgeError> {
    let mut seen = 0usize;
    loop {
        let due = inner
            .store
            .due_reminders(record::millis(now), BATCH)
            .await?;
        let mut sent_any = false;
        for (id, sent) in &due {
            sent_any |= remind(inner, id, *sent, now).await?;
        }
        seen += due.len();
        // A full batch may leave more; stop when a batch sent nothing
        // (the rest are due by the record only).
        if due.len() < usize::try_from(BATCH).unwrap_or(usize::MAX) || !sent_any {
            break;
        }
    }
    if seen > 0 {
        tracing::debug!(due = seen, "reminders looked at");
    }
    Ok(inner.store.next_reminder_at().await?.map(record::timestamp))
}

/// Sends reminder number `sent` of one ask if it is due at `now` and no
/// one sent it first; whether this instance sent it.
async fn remind(
    inner: &Arc<Inner>,
    id: &str,
    sent: i64,
    now: Timestamp,
) -> Result<bool, BridgeError> {
    let Found::Pending(entry) = inner.find(id).await? else {
        return Ok(false);
    };
    let number = u32::try_from(sent).unwrap_or(u32::MAX);
    let (view, next, places) = {
        let mut slot = entry.slot.lock().await;
        inner.fresh(&entry, &mut slot).await?;
        let Some(lifecycle) = slot.lifecycle.as_deref().filter(|_| !slot.ended) else {
            return Ok(false);
        };
        if !lifecycle.reminder_due(number, now) {
            return Ok(false);
        }
        let next = lifecycle.next_reminder(number.saturating_add(1));
        let places = lifecycle.reminded_places(now);
        let view = inner.slot_view(&slot)?;
        inner.evict_if_full(&mut slot);
        (view, next, places)
    };
    if !inner
        .store
        .claim_reminder(id, sent, next.map(record::millis))
        .await?
    {
        return Ok(false);
    }
    tracing::info!(ask_id = %id, reminder = number + 1, "reminding");
    let view = Arc::new(view);
    for place in places {
        if entry
            .spots
            .get(place)
            .is_some_and(|spot| inner.posts_here(spot.kind))
        {
            outbox::enqueue(inner, &entry, place, Op::Remind(Arc::clone(&view), number));
        }
    }
    Ok(true)
}

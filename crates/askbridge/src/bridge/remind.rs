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
//! A reminder is claimed before the places are told and done once each
//! had its turn ([`Reminding`]); one claimed but not done within
//! [`IN_FLIGHT`] (its instance died) is offered again, and each place skips
//! a reminder it has on record.

use std::sync::atomic::{AtomicUsize, Ordering};
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
/// How long a claimed reminder may take to reach its places before it is
/// offered again (its instance died, say).
const IN_FLIGHT: Duration = Duration::from_secs(120);
/// The wait before looking again at a reminder that is due by the record
/// but not by the ask (its deadline has come: the timeout is on its way).
const STALE_WAIT: Duration = Duration::from_secs(1);

/// Runs until the bridge is dropped.
pub(super) async fn run(bridge: Weak<Inner>, wake: Arc<Notify>, clock: Clock) {
    let Some(settle) = bridge.upgrade().map(|inner| Arc::clone(&inner.settle)) else {
        return;
    };
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
        settle
            .sleeping(next, clock.sleep_until_woken(next, &wake))
            .await;
    }
}

/// Sends the reminders due at `now`, and offers again those claimed but
/// not done in time; returns when the next one is due.
async fn send_due(inner: &Arc<Inner>, now: Timestamp) -> Result<Option<Timestamp>, BridgeError> {
    let mut seen = 0usize;
    loop {
        let due = inner
            .store
            .due_reminders(record::millis(now), BATCH)
            .await?;
        let mut sent_any = false;
        for (id, claimed, done) in &due {
            sent_any |= if done < claimed {
                remind(inner, id, Turn::Again(*claimed), now).await?
            } else {
                remind(inner, id, Turn::Next(*claimed), now).await?
            };
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

/// Which reminder of an ask to send.
#[derive(Debug, Clone, Copy)]
enum Turn {
    /// The next, this many being claimed and done.
    Next(i64),
    /// The last of this many claimed, again: it was not done in time.
    Again(i64),
}

/// Sends a reminder of one ask if it is due at `now` and no one took it
/// first; whether this instance took it.
async fn remind(
    inner: &Arc<Inner>,
    id: &str,
    turn: Turn,
    now: Timestamp,
) -> Result<bool, BridgeError> {
    let Found::Pending(entry) = inner.find(id).await? else {
        return Ok(false);
    };
    let (number, claimed) = match turn {
        Turn::Next(done) => (done, done + 1),
        Turn::Again(claimed) => (claimed - 1, claimed),
    };
    let number = u32::try_from(number).unwrap_or(u32::MAX);
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
    let redo_at = record::millis(now.saturating_add_secs(IN_FLIGHT.as_secs()));
    let taken = match turn {
        Turn::Next(done) => inner.store.claim_reminder(id, done, redo_at).await?,
        Turn::Again(claimed) => {
            inner
                .store
                .reclaim_reminder(id, claimed, record::millis(now), redo_at)
                .await?
        }
    };
    if !taken {
        return Ok(false);
    }
    tracing::info!(ask_id = %id, reminder = number + 1, again = matches!(turn, Turn::Again(_)), "reminding");
    let places: Vec<usize> = places
        .into_iter()
        .filter(|place| {
            entry
                .spots
                .get(*place)
                .is_some_and(|spot| inner.posts_here(spot.kind))
        })
        .collect();
    let reminding = Arc::new(Reminding {
        id: id.to_owned(),
        claimed,
        next,
        left: AtomicUsize::new(places.len()),
        ask: view.ask.callback.is_some().then(|| view.ask.clone()),
    });
    if places.is_empty() {
        reminding.finish(inner).await;
    }
    let view = Arc::new(view);
    for place in places {
        outbox::enqueue(
            inner,
            &entry,
            place,
            Op::Remind(Arc::clone(&view), number, Arc::clone(&reminding)),
        );
    }
    Ok(true)
}

/// One reminder on its way to its places: done once each had its turn.
#[derive(Debug)]
pub(super) struct Reminding {
    id: String,
    /// Reminders claimed, this one included.
    claimed: i64,
    /// When the next is due.
    next: Option<Timestamp>,
    /// Places still to take their turn.
    left: AtomicUsize,
    /// The ask, when it has a webhook to tell of the reminder.
    ask: Option<askbridge_core::model::Ask>,
}

impl Reminding {
    /// One place had its turn (posted it, or gave up); the last records
    /// the reminder as done.
    pub(super) async fn place_done(&self, inner: &Arc<Inner>) {
        if self.left.fetch_sub(1, Ordering::AcqRel) == 1 {
            self.finish(inner).await;
        }
    }

    /// Records it done and when the next is due; a failure leaves it to
    /// be offered again (the places skip what they posted).
    async fn finish(&self, inner: &Arc<Inner>) {
        let next = self.next.map(record::millis);
        match inner
            .store
            .finish_reminder(&self.id, self.claimed, next)
            .await
        {
            Ok(()) => {
                if let Some(ask) = &self.ask {
                    inner
                        .call_back(
                            &self.id,
                            ask,
                            askbridge_core::model::CallbackEvent::Reminded,
                        )
                        .await;
                }
                inner.remind_wake.notify_one();
                inner.reminders_done.send_modify(|done| *done += 1);
            }
            Err(error) => {
                tracing::warn!(ask_id = %self.id, error = %error, "could not record a reminder as sent; it will be offered again");
            }
        }
    }
}

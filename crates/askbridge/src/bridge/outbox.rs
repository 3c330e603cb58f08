//! Talking to channels: delivering an ask, showing progress, closing it.
//!
//! Each place an ask is posted to has an outbox of channel operations run
//! in order by a task that exists only while the outbox is not empty, so
//! one slow platform never holds up another ask or another place of the
//! same ask, and an ask's progress edit never overtakes its delivery or
//! its closing edit. Delivery retries what the channel
//! says can be retried ([`PlatformFailure::RetryAfter`] after the time the
//! platform asked for, [`PlatformFailure::Transient`] with exponential
//! backoff), a bounded number of times, and stops as soon as the ask ends.
//! An ask is recorded as delivered once every place has settled (posted,
//! or failed for good) and one of them took it; when every place failed,
//! the ask ends as `delivery_failed`.

use std::collections::VecDeque;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Weak};
use std::time::Duration;

use askbridge_core::failure::PlatformFailure;
use askbridge_core::lifecycle::Input;
use askbridge_core::model::CallbackEvent;
use tokio::sync::Notify;

use super::channel::Channel;
use super::{AskView, Change, Entry, Inner, Spot, lock};

/// An edit (progress, closing line) is tried this many times as often as
/// a delivery: repeating one is harmless, while giving up leaves live
/// buttons on an ask that has ended.
const EDIT_ATTEMPTS_FACTOR: u32 = 3;

/// Not delivered, and no delivery queued (reloaded before its channel
/// was registered).
pub(super) const UNDELIVERED: u8 = 0;
/// A delivery is queued or running in this process.
pub(super) const QUEUED: u8 = 1;
/// A channel took the ask.
pub(super) const DELIVERED: u8 = 2;
/// Delivery failed or was abandoned because the ask ended first.
pub(super) const NOT_DELIVERED: u8 = 3;
/// Another process created the ask and delivers it.
pub(super) const FOREIGN: u8 = 4;

/// How channel calls are retried.
///
/// A rate limit is the platform pacing us, not a failure: its waits do not
/// use up `attempts`, so a burst that meets a platform's limits is slowed
/// down, never dropped. Delivery stops anyway when the ask ends (it times
/// out at the latest); `rate_limited_waits` bounds the rest.
#[derive(Debug, Clone)]
pub struct RetryPolicy {
    /// Attempts per delivery, the first included (at least 1), counting
    /// transient failures only; edits get three times as many.
    pub attempts: u32,
    /// The wait after the first transient failure; doubled each time.
    pub first_backoff: Duration,
    /// The longest wait between transient failures.
    pub max_backoff: Duration,
    /// Most rate-limit waits for one operation.
    pub rate_limited_waits: u32,
}

impl Default for RetryPolicy {
    /// Six attempts, backing off from 500 ms to at most 30 s; up to 1,000
    /// rate-limit waits.
    fn default() -> RetryPolicy {
        RetryPolicy {
            attempts: 6,
            first_backoff: Duration::from_millis(500),
            max_backoff: Duration::from_secs(30),
            rate_limited_waits: 1_000,
        }
    }
}

/// What one operation has met so far.
#[derive(Debug, Default)]
struct Tries {
    /// Transient failures.
    failures: u32,
    /// Rate limits.
    rate_limited: u32,
}

impl RetryPolicy {
    /// Counts `error` in `tries` and says how long to wait before the next
    /// try, or `None` when none of `attempts` is left.
    fn wait(&self, tries: &mut Tries, error: &PlatformFailure, attempts: u32) -> Option<Duration> {
        match error {
            PlatformFailure::RetryAfter(secs) => {
                tries.rate_limited += 1;
                (tries.rate_limited <= self.rate_limited_waits).then(|| Duration::from_secs(*secs))
            }
            PlatformFailure::Transient(_) => {
                tries.failures += 1;
                if tries.failures >= attempts.max(1) {
                    return None;
                }
                let factor = 2u32.saturating_pow(tries.failures - 1);
                Some(
                    self.first_backoff
                        .saturating_mul(factor)
                        .min(self.max_backoff),
                )
            }
            PlatformFailure::Permanent(_) => None,
        }
    }
}

/// One channel operation.
#[derive(Debug)]
pub(super) enum Op {
    /// Post the ask: as created, or (`None`) as stored.
    Deliver(Option<Arc<AskView>>),
    /// Show progress.
    Update(Arc<AskView>),
    /// Close the question.
    End(Arc<AskView>),
    /// Remind the person (reminder number, from 0); the reminder is done
    /// once every place it went to had its turn.
    Remind(Arc<AskView>, u32, Arc<super::remind::Reminding>),
}

/// The queued operations of one place of an ask, while its runner drains
/// them; `None` when it is idle (most pending asks, most of the time: a
/// pointer, not an empty queue, in each of them).
pub(super) type Outbox = Option<Box<VecDeque<Op>>>;

/// Queues `op` for the entry's place `place`, starting its runner if
/// idle.
pub(super) fn enqueue(inner: &Arc<Inner>, entry: &Arc<Entry>, place: usize, op: Op) {
    let Some(spot) = entry.spots.get(place) else {
        return;
    };
    let mut outbox = lock(&spot.outbox);
    inner.settle.start();
    match outbox.as_mut() {
        Some(ops) => ops.push_back(op),
        None => {
            *outbox = Some(Box::new(VecDeque::from([op])));
            inner
                .runtime
                .spawn(drain(Arc::clone(inner), Arc::clone(entry), place));
        }
    }
}

async fn drain(inner: Arc<Inner>, entry: Arc<Entry>, place: usize) {
    let spot = &entry.spots[place];
    loop {
        let op = {
            let mut outbox = lock(&spot.outbox);
            match outbox.as_mut().and_then(|ops| ops.pop_front()) {
                Some(op) => op,
                None => {
                    *outbox = None;
                    return;
                }
            }
        };
        match op {
            Op::Deliver(view) => deliver(&inner, &entry, place, view).await,
            Op::Update(view) => {
                if shown(spot)
                    && let Some(channel) = inner.channel(spot.kind)
                {
                    call(&inner, &*channel, &view, place, Call::Update).await;
                }
            }
            Op::End(view) => {
                if shown(spot)
                    && let Some(channel) = inner.channel(spot.kind)
                {
                    call(&inner, &*channel, &view, place, Call::End).await;
                }
            }
            Op::Remind(view, number, reminding) => {
                if shown(spot)
                    && !entry.slot.lock().await.ended
                    && let Some(channel) = inner.channel(spot.kind)
                {
                    call(&inner, &*channel, &view, place, Call::Remind(number)).await;
                }
                reminding.place_done(&inner).await;
            }
        }
        inner.settle.done();
    }
}

/// Whether there is a posted message to update or close.
fn shown(spot: &Spot) -> bool {
    matches!(spot.delivery.load(Ordering::Acquire), DELIVERED | FOREIGN)
}

/// Delivers the ask to one place, retrying as the channel allows; gives
/// the place up when that fails for good.
async fn deliver(inner: &Arc<Inner>, entry: &Arc<Entry>, place: usize, view: Option<Arc<AskView>>) {
    let id = &entry.id.to_string();
    let spot = &entry.spots[place];
    let Some(channel) = inner.channel(spot.kind) else {
        let reason = format!("no {} channel is configured", spot.kind.as_str());
        fail(inner, entry, place, reason).await;
        return;
    };
    let view = match view {
        Some(view) => view,
        None => match inner.load_view(id).await {
            Ok(view) => Arc::new(view),
            Err(error) => {
                tracing::error!(ask_id = %id, error = %error, "cannot read the ask to deliver it");
                spot.delivery.store(UNDELIVERED, Ordering::Release);
                return;
            }
        },
    };
    // An escalation step: passed on at its time, if the ask is still open.
    if let Some(due) = spot.due()
        && sleep_until_unless_ended(inner, entry, due).await
    {
        spot.delivery.store(NOT_DELIVERED, Ordering::Release);
        return;
    }
    let mut attempt = 0u32;
    let mut tries = Tries::default();
    loop {
        if entry.slot.lock().await.ended {
            spot.delivery.store(NOT_DELIVERED, Ordering::Release);
            return;
        }
        attempt += 1;
        inner.delivering.fetch_add(1, Ordering::AcqRel);
        let delivered = channel.deliver(&view, place).await;
        inner.delivering.fetch_sub(1, Ordering::AcqRel);
        inner.deliveries_done.send_modify(|done| *done += 1);
        let error = match delivered {
            Ok(()) => {
                spot.delivery.store(DELIVERED, Ordering::Release);
                tracing::info!(ask_id = %id, channel = spot.kind.as_str(), place, attempt, "ask delivered");
                if entry.settled() {
                    note_delivered(inner, entry);
                }
                if spot.due().is_some() {
                    inner
                        .call_back(id, &view.ask, CallbackEvent::Escalated)
                        .await;
                } else if first_posted(entry, place) {
                    inner.call_back(id, &view.ask, CallbackEvent::Posted).await;
                }
                return;
            }
            Err(error) => error,
        };
        let Some(wait) = inner.retry.wait(&mut tries, &error, inner.retry.attempts) else {
            fail(inner, entry, place, error.to_string()).await;
            return;
        };
        tracing::info!(
            ask_id = %id,
            channel = spot.kind.as_str(),
            place,
            attempt,
            error = %error,
            retry_in_ms = u64::try_from(wait.as_millis()).unwrap_or(u64::MAX),
            "delivery failed; retrying"
        );
        if sleep_unless_ended(inner, entry, wait).await {
            spot.delivery.store(NOT_DELIVERED, Ordering::Release);
            return;
        }
    }
}

/// Sleeps `wait` on the bridge's clock; returns early, with `true`, if the
/// ask ends meanwhile.
async fn sleep_unless_ended(inner: &Inner, entry: &Entry, wait: Duration) -> bool {
    sleep_until_unless_ended(inner, entry, inner.clock.after(wait)).await
}

/// Sleeps until `until` on the bridge's clock; returns early, with
/// `true`, if the ask ends meanwhile.
async fn sleep_until_unless_ended(
    inner: &Inner,
    entry: &Entry,
    until: askbridge_core::model::Timestamp,
) -> bool {
    let wake;
    let ended;
    {
        let mut slot = entry.slot.lock().await;
        if slot.ended {
            return true;
        }
        wake = slot.on_end();
        ended = wake.notified();
    }
    tokio::pin!(ended);
    let sleep = async {
        tokio::select! {
            () = &mut ended => true,
            () = inner.clock.sleep_until(until) => false,
        }
    };
    inner.settle.sleeping(Some(until), sleep).await
}

/// Notes that the ask's delivery is done (every place settled, one took
/// it), for [`record_deliveries`] to record.
/// Whether `place`, just posted, is the first of the places posted at
/// once to have taken the ask (by number, so two posted together tell
/// the agent at least once).
fn first_posted(entry: &Entry, place: usize) -> bool {
    entry.spots[..place]
        .iter()
        .filter(|spot| spot.due().is_none())
        .all(|spot| spot.delivery.load(Ordering::Acquire) != DELIVERED)
}

fn note_delivered(inner: &Inner, entry: &Entry) {
    lock(&inner.delivered).push(entry.id);
    inner.delivered_wake.notify_one();
}

/// Gives up one place. The ask goes on while another place has it (and is
/// recorded as delivered once every place settled); when every place
/// failed, it ends as `delivery_failed`.
async fn fail(inner: &Arc<Inner>, entry: &Arc<Entry>, place: usize, reason: String) {
    let spot = &entry.spots[place];
    spot.delivery.store(NOT_DELIVERED, Ordering::Release);
    tracing::warn!(ask_id = %entry.id, channel = spot.kind.as_str(), place, reason = %reason, "delivery failed");
    if !entry.settled() {
        return;
    }
    if entry.spots.iter().any(shown) {
        note_delivered(inner, entry);
        return;
    }
    let reason = if entry.spots.len() > 1 {
        format!("no place took the ask; the last said: {reason}")
    } else {
        reason
    };
    if let Err(error) = inner
        .apply(entry, Change::Input(Input::DeliveryFailed { reason }))
        .await
    {
        tracing::error!(ask_id = %entry.id, error = %error, "could not record the failed delivery");
    }
}

#[derive(Debug, Clone, Copy)]
enum Call {
    Update,
    End,
    Remind(u32),
}

/// Updates or closes a posted ask in one place, retrying as the channel
/// allows; a failure is logged, never fatal.
async fn call(inner: &Inner, channel: &dyn Channel, view: &AskView, place: usize, call: Call) {
    let mut tries = Tries::default();
    loop {
        let result = match call {
            Call::Update => channel.update(view, place).await,
            Call::End => channel.end(view, place).await,
            Call::Remind(number) => channel.remind(view, place, number).await,
        };
        let error = match result {
            Ok(()) => return,
            Err(error) => error,
        };
        let attempts = inner.retry.attempts.saturating_mul(EDIT_ATTEMPTS_FACTOR);
        match inner.retry.wait(&mut tries, &error, attempts) {
            Some(wait) => {
                let until = inner.clock.after(wait);
                let sleep = inner.clock.sleep_until(until);
                inner.settle.sleeping(Some(until), sleep).await;
            }
            None => {
                tracing::warn!(ask_id = %view.id, channel = channel.kind().as_str(), place, call = ?call, error = %error, "channel call failed");
                return;
            }
        }
    }
}

/// Closes an ask that is no longer in memory (it timed out while the
/// daemon was down) in its places on `channel`.
pub(super) async fn end_detached(inner: &Inner, channel: &dyn Channel, view: &AskView) {
    let kind = channel.kind();
    for (place, target) in view.places().enumerate() {
        if target.place.channel() == kind {
            call(inner, channel, view, place, Call::End).await;
        }
    }
}

/// Records deliveries in the database, many per statement: runs until the
/// bridge is dropped. A delivery not yet recorded when the process dies is
/// delivered again after the restart (at least once, never lost); one the
/// database refused is kept and tried again, backing off up to
/// [`RECORD_RETRY_MAX`].
pub(super) async fn record_deliveries(bridge: Weak<Inner>, wake: Arc<Notify>) {
    let mut backoff = None;
    loop {
        match backoff {
            None => wake.notified().await,
            // A new delivery does not wait out the backoff of an old one.
            Some(wait) => {
                let _ = tokio::time::timeout(wait, wake.notified()).await;
            }
        }
        let Some(inner) = bridge.upgrade() else {
            return;
        };
        backoff = match flush_deliveries(&inner).await {
            Ok(()) => None,
            Err(error) => {
                let wait = backoff.map_or(RECORD_RETRY_FIRST, |wait: Duration| {
                    (wait * 2).min(RECORD_RETRY_MAX)
                });
                tracing::warn!(
                    error = %error,
                    retry_in_ms = u64::try_from(wait.as_millis()).unwrap_or(u64::MAX),
                    "could not record deliveries; kept to try again"
                );
                Some(wait)
            }
        };
    }
}

/// The first wait before recording deliveries again after a failure.
const RECORD_RETRY_FIRST: Duration = Duration::from_millis(100);
/// The longest.
const RECORD_RETRY_MAX: Duration = Duration::from_secs(5);

/// Records the deliveries noted so far. When the database refuses, they
/// stay noted (ahead of newer ones) for the next flush.
pub(super) async fn flush_deliveries(inner: &Inner) -> Result<(), crate::store::StoreError> {
    let batch = std::mem::take(&mut *lock(&inner.delivered));
    if batch.is_empty() {
        return Ok(());
    }
    let ids: Vec<String> = batch.iter().map(ToString::to_string).collect();
    let ids: Vec<&str> = ids.iter().map(String::as_str).collect();
    let at = super::record::millis(inner.clock.now());
    let result = inner.store.mark_delivered(&ids, at).await;
    if result.is_err() {
        let mut noted = lock(&inner.delivered);
        let newer = std::mem::replace(&mut *noted, batch);
        noted.extend(newer);
    }
    result
}

//! The pending asks in memory: one small [`Entry`] each, found by id,
//! with its deadline armed; its lifecycle kept for a bounded number of
//! asks and otherwise rebuilt from the stored row when needed. Filled
//! from one query at start ([`Inner::reload`]) and kept in step with the
//! database when another process changes an ask ([`Inner::reload_entry`]).

use std::collections::HashMap;
use std::collections::hash_map;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Arc, Mutex};

use askbridge_core::lifecycle::{AskLifecycle, State};
use askbridge_core::model::{ChannelKind, Timestamp};
use futures_util::TryStreamExt;
use tokio::sync::Notify;

use super::outbox::{DELIVERED, FOREIGN, NOT_DELIVERED, Op, Outbox, UNDELIVERED};
use super::{AskView, BridgeError, BridgeEvent, Inner, lock, record};
use crate::wire::stored::StoredChannel;

/// One pending ask in memory: small, because there may be 100,000.
#[derive(Debug)]
pub(super) struct Entry {
    pub(super) id: Arc<str>,
    pub(super) deadline: Timestamp,
    /// Its lock serialises this process's changes to the ask.
    pub(super) slot: tokio::sync::Mutex<Slot>,
    /// Woken (all waiters) when the ask ends.
    pub(super) ended: Notify,
    /// The places it is posted to, in [`AskView::places`] order (one,
    /// unless `to` listed several).
    pub(super) spots: Box<[Spot]>,
}

/// One place of a pending ask: its channel, when it is posted (an
/// escalation step), how far its delivery got and its queue of channel
/// operations.
#[derive(Debug)]
pub(super) struct Spot {
    pub(super) kind: ChannelKind,
    /// Not before this time: the ask is passed on here then.
    pub(super) due: Option<Timestamp>,
    /// Delivery progress: one of the `outbox` constants.
    pub(super) delivery: AtomicU8,
    pub(super) outbox: Mutex<Outbox>,
}

#[derive(Debug)]
pub(super) struct Slot {
    /// The lifecycle, when in memory; always there once ended.
    pub(super) lifecycle: Option<Box<AskLifecycle>>,
    /// The stored row's version this entry last saw.
    pub(super) version: i64,
    /// The ask has ended and left the map; `lifecycle` is final.
    pub(super) ended: bool,
}

/// Where [`Inner::find`] found an ask.
pub(super) enum Found {
    Pending(Arc<Entry>),
    Ended(Box<AskLifecycle>),
}

impl Inner {
    /// Rebuilds the entry's lifecycle from the stored row. A change made
    /// by another process is told here, whichever path noticed it first
    /// (an announcement, a wait, a read): progress as `Updated`, an end as
    /// `Ended`, with waiters woken (the process that ended it closes the
    /// message, or else the holder of its channel's lease).
    pub(super) async fn reload_entry(
        self: &Arc<Self>,
        entry: &Arc<Entry>,
        slot: &mut Slot,
    ) -> Result<(), BridgeError> {
        let row = self
            .store
            .load_ask(&entry.id)
            .await?
            .ok_or_else(|| BridgeError::NotFound(entry.id.to_string()))?;
        let lifecycle = record::rebuild(&row)?;
        let was_cached = slot.lifecycle.is_some();
        let pending = lifecycle.state().is_pending();
        let changed_elsewhere = row.version > slot.version;
        if row.delivered_at.is_some() {
            // Posted by another instance (the holder of its channel's
            // lease): there is a message to update and close.
            entry.move_delivery(UNDELIVERED, FOREIGN);
        }
        // The channel's lease holder shows what changed elsewhere; other
        // channels' asks were shown by the instance that changed them.
        let show = |kind| changed_elsewhere && self.holds_lease_of(kind);
        slot.lifecycle = Some(Box::new(lifecycle));
        slot.version = row.version;
        if slot.ended {
            return Ok(());
        }
        if pending {
            if !was_cached {
                self.cached.fetch_add(1, Ordering::Relaxed);
            }
            if changed_elsewhere {
                let view = Arc::new(self.slot_view(slot)?);
                self.enqueue_everywhere(entry, show, || Op::Update(Arc::clone(&view)));
                self.emit(|| BridgeEvent::Updated(view));
            }
            return Ok(());
        }
        self.end_slot(entry, slot, was_cached);
        if let Some(lifecycle) = slot.lifecycle.as_deref() {
            tracing::info!(
                ask_id = %entry.id,
                state = lifecycle.state().as_str(),
                "ask ended by another process"
            );
            let view = Arc::new(self.view(lifecycle));
            if !matches!(lifecycle.state(), State::DeliveryFailed { .. }) {
                self.enqueue_everywhere(entry, show, || Op::End(Arc::clone(&view)));
            }
            self.emit(|| BridgeEvent::Ended(view));
        }
        Ok(())
    }

    /// The pending ask's entry, if it is in memory.
    pub(super) fn lookup(&self, id: &str) -> Option<Arc<Entry>> {
        lock(&self.asks).get(id).cloned()
    }

    /// The ask from memory, or else from the database; a pending ask
    /// found only in the database (another process created it) is taken
    /// into memory and its deadline armed.
    pub(super) async fn find(&self, id: &str) -> Result<Found, BridgeError> {
        if let Some(entry) = self.lookup(id) {
            return Ok(Found::Pending(entry));
        }
        let Some(row) = self.store.load_ask(id).await? else {
            return Err(BridgeError::NotFound(id.to_owned()));
        };
        if row.state != "pending" {
            return Ok(Found::Ended(Box::new(record::rebuild(&row)?)));
        }
        let lifecycle = record::rebuild(&row)?;
        let spots: Vec<(ChannelKind, Option<Timestamp>)> = lifecycle
            .ask()
            .places()
            .map(|target| target.place.channel())
            .zip(place_dues(&lifecycle))
            .collect();
        let delivery = if row.delivered_at.is_some() {
            DELIVERED
        } else {
            FOREIGN
        };
        Ok(Found::Pending(self.adopt(Entry::new(
            Arc::from(row.id.as_str()),
            spots.into_iter().map(|(kind, due)| (kind, delivery, due)),
            record::timestamp(row.deadline),
            row.version,
            None,
        ))))
    }

    /// The view of any ask, read from the database.
    pub(super) async fn load_view(&self, id: &str) -> Result<AskView, BridgeError> {
        let row = self
            .store
            .load_ask(id)
            .await?
            .ok_or_else(|| BridgeError::NotFound(id.to_owned()))?;
        Ok(self.view(&record::rebuild(&row)?))
    }

    /// Puts a pending ask in memory and arms its deadline; if it is there
    /// already, returns that entry instead.
    pub(super) fn adopt(&self, mut entry: Entry) -> Arc<Entry> {
        let cached = entry.slot.get_mut().lifecycle.is_some();
        let entry = Arc::new(entry);
        match lock(&self.asks).entry(Arc::clone(&entry.id)) {
            hash_map::Entry::Occupied(existing) => return Arc::clone(existing.get()),
            hash_map::Entry::Vacant(slot) => {
                slot.insert(Arc::clone(&entry));
            }
        }
        if cached {
            self.cached.fetch_add(1, Ordering::Relaxed);
        }
        self.arm(entry.deadline, Arc::clone(&entry.id));
        entry
    }

    /// Adds a deadline, waking the timer if it is the earliest.
    pub(super) fn arm(&self, deadline: Timestamp, id: Arc<str>) {
        let earliest = {
            let mut deadlines = lock(&self.deadlines);
            let earliest = deadlines.first().is_none_or(|(at, _)| deadline < *at);
            deadlines.insert((deadline, id));
            earliest
        };
        if earliest {
            self.timer_wake.notify_one();
        }
    }

    /// Takes an ended ask out of memory and disarms its deadline.
    pub(super) fn forget(&self, entry: &Arc<Entry>) {
        {
            let mut asks = lock(&self.asks);
            if asks
                .get(&*entry.id)
                .is_some_and(|current| Arc::ptr_eq(current, entry))
            {
                asks.remove(&*entry.id);
            }
        }
        lock(&self.deadlines).remove(&(entry.deadline, Arc::clone(&entry.id)));
    }

    /// Marks a slot ended: out of memory, waiters woken.
    pub(super) fn end_slot(&self, entry: &Arc<Entry>, slot: &mut Slot, was_cached: bool) {
        slot.ended = true;
        if was_cached {
            self.cached.fetch_sub(1, Ordering::Relaxed);
        }
        self.forget(entry);
        entry.ended.notify_waiters();
    }

    /// Drops a pending slot's lifecycle when too many are in memory.
    pub(super) fn evict_if_full(&self, slot: &mut Slot) {
        if !slot.ended
            && slot.lifecycle.is_some()
            && self.cached.load(Ordering::Relaxed) > self.cache_limit
        {
            slot.lifecycle = None;
            self.cached.fetch_sub(1, Ordering::Relaxed);
        }
    }

    /// Reloads every pending ask from one query, keeping only what the
    /// timer and the map need; lifecycles are rebuilt when first used.
    pub(super) async fn reload(
        &self,
        claimed: &std::collections::HashSet<String>,
    ) -> Result<(), BridgeError> {
        let started = std::time::Instant::now();
        let mut loaded = 0usize;
        let mut further = further_kinds(self.store.pending_further_places().await?);
        let mut rows = self.store.pending();
        let mut batch = Vec::with_capacity(1_024);
        while let Some(row) = rows.try_next().await? {
            let Some(kind) = StoredChannel::parse(&row.channel).map(ChannelKind::from) else {
                let error = record::unknown_channel(&row.id, &row.channel);
                tracing::error!(ask_id = %row.id, error = %error, "unreadable pending ask left out");
                continue;
            };
            // Undelivered asks another live instance owns stay its job.
            let delivery = if row.delivered_at.is_some() {
                DELIVERED
            } else if claimed.contains(&row.id) {
                UNDELIVERED
            } else {
                FOREIGN
            };
            let more = further.remove(row.id.as_str()).unwrap_or_default();
            batch.push(Arc::new(Entry::new(
                Arc::from(row.id.as_str()),
                std::iter::once((kind, None))
                    .chain(more)
                    .map(|(kind, due)| (kind, delivery, due)),
                record::timestamp(row.deadline),
                row.version,
                None,
            )));
            if batch.len() == batch.capacity() {
                loaded += self.install(&mut batch);
            }
        }
        loaded += self.install(&mut batch);
        self.timer_wake.notify_one();
        tracing::info!(
            pending = loaded,
            elapsed_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
            "pending asks reloaded"
        );
        Ok(())
    }

    /// Puts a batch of reloaded entries in memory; returns how many.
    pub(super) fn install(&self, batch: &mut Vec<Arc<Entry>>) -> usize {
        let count = batch.len();
        let mut asks = lock(&self.asks);
        let mut deadlines = lock(&self.deadlines);
        asks.reserve(count);
        for entry in batch.drain(..) {
            deadlines.insert((entry.deadline, Arc::clone(&entry.id)));
            asks.insert(Arc::clone(&entry.id), entry);
        }
        count
    }
}

impl Entry {
    /// An entry whose places are on these channels, each with its
    /// delivery progress (an `outbox` constant).
    pub(super) fn new(
        id: Arc<str>,
        spots: impl IntoIterator<Item = (ChannelKind, u8, Option<Timestamp>)>,
        deadline: Timestamp,
        version: i64,
        lifecycle: Option<Box<AskLifecycle>>,
    ) -> Entry {
        Entry {
            id,
            deadline,
            slot: tokio::sync::Mutex::new(Slot {
                lifecycle,
                version,
                ended: false,
            }),
            ended: Notify::new(),
            spots: spots
                .into_iter()
                .map(|(kind, delivery, due)| Spot {
                    kind,
                    due,
                    delivery: AtomicU8::new(delivery),
                    outbox: Mutex::new(Outbox::default()),
                })
                .collect(),
        }
    }

    /// The channel of the ask's first place (`asks.channel`).
    pub(super) fn kind(&self) -> Option<ChannelKind> {
        self.spots.first().map(|spot| spot.kind)
    }

    /// Moves every place whose delivery is at `from` to `to`; whether one
    /// moved.
    pub(super) fn move_delivery(&self, from: u8, to: u8) -> bool {
        let mut moved = false;
        for spot in &*self.spots {
            moved |= spot
                .delivery
                .compare_exchange(from, to, Ordering::AcqRel, Ordering::Acquire)
                .is_ok();
        }
        moved
    }

    /// Whether every place's delivery has settled: posted, given up, or
    /// another instance's.
    pub(super) fn settled(&self) -> bool {
        self.spots.iter().all(|spot| {
            matches!(
                spot.delivery.load(Ordering::Acquire),
                DELIVERED | NOT_DELIVERED | FOREIGN
            )
        })
    }
}

/// When each place of the ask is posted: `None` at once, else its
/// escalation step's time.
pub(super) fn place_dues(lifecycle: &AskLifecycle) -> Vec<Option<Timestamp>> {
    let ask = lifecycle.ask();
    (0..ask.places().count())
        .map(|place| ask.place_due(place, lifecycle.created_at()))
        .collect()
}

/// The channels of each pending ask's further places, with when each is
/// posted, from [`Store::pending_further_places`].
pub(super) fn further_kinds(
    rows: Vec<crate::store::FurtherPlace>,
) -> HashMap<String, Vec<(ChannelKind, Option<Timestamp>)>> {
    let mut kinds: HashMap<String, Vec<(ChannelKind, Option<Timestamp>)>> = HashMap::new();
    for (id, channel, due_at) in rows {
        match StoredChannel::parse(&channel) {
            Some(kind) => kinds
                .entry(id)
                .or_default()
                .push((kind.into(), due_at.map(record::timestamp))),
            None => {
                tracing::error!(ask_id = %id, channel = %channel, "further place on an unknown channel left out");
            }
        }
    }
    kinds
}

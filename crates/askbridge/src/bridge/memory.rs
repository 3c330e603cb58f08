//! The pending asks in memory: one small [`Entry`] each, found by id,
//! with its deadline armed; its lifecycle kept for a bounded number of
//! asks and otherwise rebuilt from the stored row when needed. Filled
//! from one query at start ([`Inner::reload`]) and kept in step with the
//! database when another process changes an ask ([`Inner::reload_entry`]).

use std::collections::{BTreeSet, HashMap};
use std::fmt;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Arc, Mutex};

use askbridge_core::lifecycle::{AskLifecycle, State};
use askbridge_core::model::{ChannelKind, Timestamp};
use futures_util::TryStreamExt;
use smallvec::SmallVec;
use tokio::sync::Notify;

use super::outbox::{DELIVERED, FOREIGN, NOT_DELIVERED, Op, Outbox, UNDELIVERED};
use super::timer::Deadlines;
use super::{AskView, BridgeError, BridgeEvent, Inner, lock, record};
use crate::wire::stored::StoredChannel;

/// A pending ask's id as kept in memory: the 128 bits after `ask_` (every
/// id askbridge makes is `ask_` and a UUID in 32 lowercase hex digits) —
/// 16 bytes in place of a shared string of 36 and its allocation, for
/// each of perhaps a million pending asks.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(super) struct AskKey([u64; 2]);

impl AskKey {
    /// A new ask's key: a UUID v7, so ids sort by creation time and their
    /// last 64 bits are mostly random ([`Asks`] hashes by them).
    pub(super) fn new() -> AskKey {
        let (high, low) = uuid::Uuid::now_v7().as_u64_pair();
        AskKey([high, low])
    }

    /// The key of an id askbridge made; `None` for any other text.
    pub(super) fn parse(id: &str) -> Option<AskKey> {
        let hex = id.strip_prefix("ask_")?;
        if hex.len() != 32 || !hex.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')) {
            return None;
        }
        let high = u64::from_str_radix(&hex[..16], 16).ok()?;
        let low = u64::from_str_radix(&hex[16..], 16).ok()?;
        Some(AskKey([high, low]))
    }
}

impl fmt::Display for AskKey {
    /// The id it was read from.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ask_{:016x}{:016x}", self.0[0], self.0[1])
    }
}

impl fmt::Debug for AskKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

/// The pending asks in memory by id: a table of the entries themselves,
/// each found by its id's random bits (a UUID v7's last 64 bits are 62
/// random ones, and ids are askbridge's own, never a caller's) — one
/// pointer a slot, where a map from id to entry would take three.
#[derive(Debug, Default)]
pub(super) struct Asks(hashbrown::HashTable<Arc<Entry>>);

impl Asks {
    fn hash(key: AskKey) -> u64 {
        key.0[1]
    }

    /// The entry of `key`.
    pub(super) fn get(&self, key: AskKey) -> Option<&Arc<Entry>> {
        self.0.find(Self::hash(key), |entry| entry.id == key)
    }

    /// Puts `entry` in, unless one of its id is there: then that one.
    pub(super) fn insert_new(&mut self, entry: &Arc<Entry>) -> Option<Arc<Entry>> {
        let key = entry.id;
        match self.0.entry(
            Self::hash(key),
            |there| there.id == key,
            |there| Self::hash(there.id),
        ) {
            hashbrown::hash_table::Entry::Occupied(there) => Some(Arc::clone(there.get())),
            hashbrown::hash_table::Entry::Vacant(slot) => {
                slot.insert(Arc::clone(entry));
                None
            }
        }
    }

    /// Takes `entry` out, if it is the one in memory for its id.
    pub(super) fn remove(&mut self, entry: &Arc<Entry>) {
        if let Ok(found) = self
            .0
            .find_entry(Self::hash(entry.id), |there| Arc::ptr_eq(there, entry))
        {
            found.remove();
        }
    }

    /// Room for `more` entries.
    pub(super) fn reserve(&mut self, more: usize) {
        self.0.reserve(more, |entry| Self::hash(entry.id));
    }

    /// How many.
    pub(super) fn len(&self) -> usize {
        self.0.len()
    }

    /// Every entry, in no order.
    pub(super) fn iter(&self) -> impl Iterator<Item = &Arc<Entry>> {
        self.0.iter()
    }
}

/// One pending ask in memory: small, because there may be a million.
#[derive(Debug)]
pub(super) struct Entry {
    pub(super) id: AskKey,
    pub(super) deadline: Timestamp,
    /// Its lock serialises this process's changes to the ask.
    pub(super) slot: tokio::sync::Mutex<Slot>,
    /// The places it is posted to, in [`AskView::places`] order (one,
    /// unless `to` listed several: kept in the entry).
    pub(super) spots: SmallVec<[Spot; 1]>,
}

/// One place of a pending ask: its channel, when it is posted (an
/// escalation step), how far its delivery got and its queue of channel
/// operations.
#[derive(Debug)]
pub(super) struct Spot {
    pub(super) kind: ChannelKind,
    /// Not before this time: the ask is passed on here then; the epoch
    /// for a place posted at once (see [`Spot::due`]).
    due: Timestamp,
    /// Delivery progress: one of the `outbox` constants.
    pub(super) delivery: AtomicU8,
    pub(super) outbox: Mutex<Outbox>,
}

impl Spot {
    /// When the ask is passed on here (an escalation step); `None`: posted
    /// at once.
    pub(super) fn due(&self) -> Option<Timestamp> {
        (self.due != Timestamp(0)).then_some(self.due)
    }
}

#[derive(Debug)]
pub(super) struct Slot {
    /// The lifecycle, when in memory; always there once ended.
    pub(super) lifecycle: Option<Box<AskLifecycle>>,
    /// The stored row's version this entry last saw.
    pub(super) version: i64,
    /// The ask has ended and left the map; `lifecycle` is final.
    pub(super) ended: bool,
    /// Woken (all waiters) when the ask ends; made by the first waiter
    /// ([`Slot::on_end`]), as few asks are waited on.
    wake: Option<Arc<Notify>>,
}

impl Slot {
    /// What wakes a waiter when the ask ends. The waiter takes it and
    /// makes its `notified()` future under the slot's lock, right after
    /// seeing the ask pending: the end, made under the same lock, comes
    /// after, and a `Notified` made before `notify_waiters` is woken by it
    /// even before it is first polled.
    pub(super) fn on_end(&mut self) -> Arc<Notify> {
        Arc::clone(self.wake.get_or_insert_with(Arc::default))
    }
}

/// Where [`Inner::find`] found an ask.
pub(super) enum Found {
    Pending(Arc<Entry>),
    Ended(Box<AskLifecycle>),
}

impl Inner {
    /// Overtakes ask `id`, answered here after the agent's host had
    /// decided ([`AskLifecycle::overtake`]): stored with a
    /// compare-and-set, then its posted messages closed again (by this
    /// instance where it posts to their channel) and subscribers told.
    /// An ask in any other state is returned as is.
    pub(super) async fn overtake(self: &Arc<Self>, id: &str) -> Result<AskView, BridgeError> {
        for _ in 0..super::CAS_ATTEMPTS {
            let row = self
                .store
                .load_ask(id)
                .await?
                .ok_or_else(|| BridgeError::NotFound(id.to_owned()))?;
            let mut lifecycle = record::rebuild(&row)?;
            let now = self.clock.now();
            if !lifecycle.overtake(now) {
                return Ok(self.view(&lifecycle));
            }
            let stored = self
                .store
                .compare_and_set(&super::StateChange {
                    id,
                    expected_version: row.version,
                    state: lifecycle.state().as_str(),
                    state_json: &record::state_json(id, lifecycle.state())?,
                    answers_json: &record::answers_json(id, lifecycle.answers())?,
                    updated_at: record::millis(now),
                })
                .await?;
            if !stored {
                continue;
            }
            tracing::info!(ask_id = %id, "ask overtaken: the agent's host decided before its answer");
            let view = Arc::new(self.view(&lifecycle));
            if row.delivered_at.is_some()
                && let Some(key) = AskKey::parse(id)
            {
                // The ask is no longer in memory: an entry of its places,
                // only to close their messages again.
                let places = lifecycle
                    .ask()
                    .places()
                    .map(|target| target.place.channel());
                let entry = Arc::new(Entry::new(
                    key,
                    places.map(|kind| (kind, DELIVERED, None)),
                    lifecycle.deadline(),
                    row.version + 1,
                    None,
                ));
                self.enqueue_everywhere(
                    &entry,
                    |kind| self.posts_here(kind),
                    || Op::End(Arc::clone(&view)),
                );
            }
            self.emit(|| BridgeEvent::Updated(Arc::clone(&view)));
            return Ok((*view).clone());
        }
        Err(BridgeError::Contended(id.to_owned()))
    }

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
            .load_ask(&entry.id.to_string())
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

    /// The pending ask's entry by its key, if it is in memory.
    pub(super) fn entry(&self, key: AskKey) -> Option<Arc<Entry>> {
        lock(&self.asks).get(key).cloned()
    }

    /// The pending ask's entry, if it is in memory.
    pub(super) fn lookup(&self, id: &str) -> Option<Arc<Entry>> {
        self.entry(AskKey::parse(id)?)
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
        let key = AskKey::parse(&row.id).ok_or_else(|| record::unreadable_id(&row.id))?;
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
            key,
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
        if let Some(existing) = lock(&self.asks).insert_new(&entry) {
            return existing;
        }
        if cached {
            self.cached.fetch_add(1, Ordering::Relaxed);
        }
        self.arm(entry.deadline, entry.id);
        self.arm_arrivals(&entry);
        entry
    }

    /// Arms the times the ask reaches the web page, if it does so later:
    /// the page is told then ([`super::BridgeEvent::Arrived`]). Other
    /// channels are posted to then, by the outbox.
    pub(super) fn arm_arrivals(&self, entry: &Entry) {
        let now = self.clock.now();
        for spot in &entry.spots {
            if spot.kind == ChannelKind::Web
                && let Some(due) = spot.due().filter(|due| *due > now)
            {
                self.arm_in(&self.arrivals, due, entry.id);
            }
        }
    }

    /// Adds a deadline, waking the timer if it is the earliest.
    pub(super) fn arm(&self, deadline: Timestamp, id: AskKey) {
        self.arm_in(&self.deadlines, deadline, id);
    }

    /// Adds a time to one of the timer's sets, waking it if that time is
    /// the set's earliest.
    fn arm_in(&self, set: &Mutex<Deadlines>, at: Timestamp, id: AskKey) {
        let earliest = {
            let mut set = lock(set);
            let earliest = set.first().is_none_or(|(first, _)| at < *first);
            set.insert((at, id));
            earliest
        };
        if earliest {
            self.timer_wake.notify_one();
        }
    }

    /// Takes an ended ask out of memory and disarms its deadline.
    pub(super) fn forget(&self, entry: &Arc<Entry>) {
        lock(&self.asks).remove(entry);
        lock(&self.deadlines).remove(&(entry.deadline, entry.id));
    }

    /// Marks a slot ended: out of memory, waiters woken.
    pub(super) fn end_slot(&self, entry: &Arc<Entry>, slot: &mut Slot, was_cached: bool) {
        slot.ended = true;
        if was_cached {
            self.cached.fetch_sub(1, Ordering::Relaxed);
        }
        self.forget(entry);
        if let Some(wake) = slot.wake.take() {
            wake.notify_waiters();
        }
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
        let mut reloaded = Vec::new();
        while let Some(row) = rows.try_next().await? {
            let Some(kind) = StoredChannel::parse(&row.channel).map(ChannelKind::from) else {
                let error = record::unknown_channel(&row.id, &row.channel);
                tracing::error!(ask_id = %row.id, error = %error, "unreadable pending ask left out");
                continue;
            };
            let Some(key) = AskKey::parse(&row.id) else {
                let error = record::unreadable_id(&row.id);
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
                key,
                std::iter::once((kind, None))
                    .chain(more)
                    .map(|(kind, due)| (kind, delivery, due)),
                record::timestamp(row.deadline),
                row.version,
                None,
            )));
            if batch.len() == batch.capacity() {
                loaded += self.install(&mut batch, &mut reloaded);
            }
        }
        loaded += self.install(&mut batch, &mut reloaded);
        self.arm_reloaded(reloaded);
        self.timer_wake.notify_one();
        tracing::info!(
            pending = loaded,
            elapsed_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
            "pending asks reloaded"
        );
        Ok(())
    }

    /// Puts a batch of reloaded entries in memory, and their deadlines in
    /// `deadlines`; returns how many.
    pub(super) fn install(
        &self,
        batch: &mut Vec<Arc<Entry>>,
        deadlines: &mut Vec<(Timestamp, AskKey)>,
    ) -> usize {
        let count = batch.len();
        let mut asks = lock(&self.asks);
        asks.reserve(count);
        for entry in batch.drain(..) {
            deadlines.push((entry.deadline, entry.id));
            self.arm_arrivals(&entry);
            if asks.insert_new(&entry).is_some() {
                tracing::warn!(ask_id = %entry.id, "a pending ask read twice at start; kept once");
            }
        }
        count
    }

    /// Arms the reloaded asks' deadlines: into an empty set, built whole
    /// from the sorted list (its nodes full, half the room of one filled
    /// an ask at a time).
    fn arm_reloaded(&self, reloaded: Vec<(Timestamp, AskKey)>) {
        let mut deadlines = lock(&self.deadlines);
        if deadlines.is_empty() {
            *deadlines = BTreeSet::from_iter(reloaded);
        } else {
            deadlines.extend(reloaded);
        }
    }
}

impl Entry {
    /// An entry whose places are on these channels, each with its
    /// delivery progress (an `outbox` constant).
    pub(super) fn new(
        id: AskKey,
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
                wake: None,
            }),
            spots: spots
                .into_iter()
                .map(|(kind, delivery, due)| Spot {
                    kind,
                    due: due.unwrap_or(Timestamp(0)),
                    delivery: AtomicU8::new(delivery),
                    outbox: Mutex::new(None),
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

#[cfg(test)]
mod tests {
    use super::AskKey;

    #[test]
    fn an_ask_key_is_the_id_askbridge_made_and_reads_back_as_it() {
        let id = format!("ask_{}", uuid::Uuid::now_v7().simple());
        let key = AskKey::parse(&id).expect("an id askbridge makes");
        assert_eq!(key.to_string(), id);
        assert_eq!(
            AskKey::parse("ask_0000000000000001ffffffffffffffff")
                .expect("a key")
                .to_string(),
            "ask_0000000000000001ffffffffffffffff"
        );
        let earlier = AskKey::parse("ask_01a24eac508d7630a88f2a59f57d34ff").expect("a key");
        let later = AskKey::parse("ask_01a24eac50917530a15a0517d38101da").expect("a key");
        assert!(earlier < later, "keys sort as their ids");
        for other in [
            "ask_1",
            "ask_01A24EAC508D7630A88F2A59F57D34FF",
            "ask_01a24eac508d7630a88f2a59f57d34f",
            "ask_01a24eac508d7630a88f2a59f57d34ffa",
            "ask_01a24eac508d7630a88f2a59f57d34fg",
            "01a24eac508d7630a88f2a59f57d34ff",
            "ask_+1a24eac508d7630a88f2a59f57d34f",
            "",
        ] {
            assert_eq!(AskKey::parse(other), None, "{other:?}");
        }
    }
}

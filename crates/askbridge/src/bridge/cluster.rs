//! Several instances on one database.
//!
//! - **Alive:** each instance renews the lease `instance/<name>` every
//!   third of [`super::Tuning::lease`]. Leases run on the wall clock, not
//!   the bridge's (which a test may hold still): they are between
//!   processes.
//! - **Deliveries:** a new ask records its instance as delivery owner. On
//!   open an instance claims its own undelivered asks and those of no
//!   live instance; every renewal it claims the undelivered asks of
//!   instances whose lease ran out, and delivers them.
//! - **Bot connections:** [`super::Bridge::run_owned`] runs a connection
//!   (Telegram polling, the Discord gateway) only while this instance
//!   holds its lease, and stops it when the lease is lost.
//! - **Channels bound to a lease:** a channel whose client can post only
//!   where its connection runs ([`super::channel::Channel::lease`]:
//!   Matrix) is posted to by the lease's holder alone. It claims the
//!   channel's undelivered asks when it takes the lease, every renewal,
//!   and as it hears of each one created elsewhere; it also updates and
//!   closes the asks that changed on other instances.
//! - **Changes elsewhere:** where the store has a change feed (Postgres),
//!   each announced change is applied to the ask in memory, so waiters
//!   and subscribers hear it; when the feed was interrupted, every
//!   pending ask is re-read. The row is the truth, the feed a wake-up.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::Ordering;
use std::sync::{Arc, Weak};
use std::time::Duration;

use futures_util::StreamExt;
use futures_util::TryStreamExt;

use super::outbox::{self, FOREIGN, Op, QUEUED, UNDELIVERED};
use super::{Bridge, BridgeError, BridgeEvent, Entry, Found, Inner, lock};
use crate::store::{Announcement, LeaseTaken, Store, StoreError};

/// Milliseconds since the epoch on the wall clock.
fn wall_millis() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |elapsed| {
            i64::try_from(elapsed.as_millis()).unwrap_or(i64::MAX)
        })
}

fn millis(duration: Duration) -> i64 {
    i64::try_from(duration.as_millis()).unwrap_or(i64::MAX)
}

fn instance_lease(instance: &str) -> String {
    format!("instance/{instance}")
}

/// Takes or renews this instance's `instance/<name>` lease.
pub(super) async fn renew_instance(
    store: &dyn Store,
    instance: &str,
    lease: Duration,
) -> Result<(), BridgeError> {
    let now = wall_millis();
    let taken = store
        .take_lease(
            &instance_lease(instance),
            instance,
            now,
            now.saturating_add(millis(lease)),
        )
        .await?;
    if !taken.held() {
        tracing::warn!(
            instance,
            "another live process uses this instance name; give each instance its own"
        );
    }
    Ok(())
}

/// The undelivered asks this instance delivers after opening: its own
/// and those of no live instance.
pub(super) async fn claim_on_open(
    store: &dyn Store,
    instance: &str,
) -> Result<HashSet<String>, BridgeError> {
    Ok(store
        .claim_deliveries(instance, wall_millis(), true)
        .await?
        .into_iter()
        .collect())
}

/// Starts the renewal task and, where the store has one, the change feed.
pub(super) async fn start(inner: &Arc<Inner>) -> Result<(), BridgeError> {
    inner
        .runtime
        .spawn(renew(Arc::downgrade(inner), inner.lease));
    if let Some(feed) = inner.store.listen().await? {
        let bridge = Arc::downgrade(inner);
        inner.runtime.spawn(async move {
            let mut feed = feed;
            while let Some(announcement) = feed.next().await {
                let Some(inner) = bridge.upgrade() else {
                    return;
                };
                // Each on its own task: one busy ask must not hold up the
                // announcements behind it.
                inner.runtime.clone().spawn(async move {
                    let result = match announcement {
                        Announcement::Changed {
                            id,
                            version,
                            delivery_owner,
                        } => {
                            inner.announcements.fetch_add(1, Ordering::Relaxed);
                            inner.notice(&id, version, delivery_owner.as_deref()).await
                        }
                        Announcement::Missed => inner.resync().await,
                    };
                    if let Err(error) = result {
                        tracing::warn!(error = %error, "could not apply a change made elsewhere");
                    }
                });
            }
        });
    }
    Ok(())
}

/// Renews the instance lease and takes over the undelivered asks of dead
/// instances, every third of a lease, until the bridge is dropped.
async fn renew(bridge: Weak<Inner>, lease: Duration) {
    let mut ticker = tokio::time::interval(lease / 3);
    ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        ticker.tick().await;
        let Some(inner) = bridge.upgrade() else {
            return;
        };
        if let Err(error) = inner.renew_once().await {
            tracing::warn!(error = %error, "could not renew this instance's lease");
        }
    }
}

impl Inner {
    async fn renew_once(self: &Arc<Self>) -> Result<(), BridgeError> {
        renew_instance(&*self.store, &self.instance, self.lease).await?;
        let orphans = self
            .store
            .claim_deliveries(&self.instance, wall_millis(), false)
            .await?;
        for id in orphans {
            self.take_delivery(&id).await?;
        }
        Ok(())
    }

    /// Delivers an ask whose delivery this instance just claimed from a
    /// dead instance.
    async fn take_delivery(self: &Arc<Self>, id: &str) -> Result<(), BridgeError> {
        let Found::Pending(entry) = self.find(id).await? else {
            return Ok(());
        };
        if !entry.move_delivery(FOREIGN, UNDELIVERED) {
            return Ok(());
        }
        self.delivery_takeovers.fetch_add(1, Ordering::Relaxed);
        tracing::info!(ask_id = %id, "delivering an ask whose instance died");
        self.queue_delivery(&entry);
        Ok(())
    }

    /// Queues the delivery of an undelivered ask this instance now owns,
    /// if it posts to its channel: without the channel registered yet,
    /// `add_channel` delivers it; without the channel's lease, the
    /// holder claims it.
    fn queue_delivery(self: &Arc<Self>, entry: &Arc<Entry>) {
        for (place, spot) in entry.spots.iter().enumerate() {
            if self.channel(spot.kind).is_some()
                && self.posts_here(spot.kind)
                && spot
                    .delivery
                    .compare_exchange(UNDELIVERED, QUEUED, Ordering::AcqRel, Ordering::Acquire)
                    .is_ok()
            {
                outbox::enqueue(self, entry, place, Op::Deliver(None));
            }
        }
    }

    /// Claims and delivers the undelivered asks of the channels that need
    /// the lease `name`, which this instance holds (`only`: that ask).
    pub(super) async fn claim_for_lease(
        self: &Arc<Self>,
        name: &str,
        only: Option<&str>,
    ) -> Result<(), BridgeError> {
        let kinds: Vec<_> = self
            .channels
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .values()
            .filter(|channel| channel.lease() == Some(name))
            .map(|channel| channel.kind())
            .collect();
        for kind in kinds {
            let ids = self
                .store
                .claim_channel_deliveries(&self.instance, kind.as_str(), only)
                .await?;
            for id in ids {
                if let Found::Pending(entry) = self.find(&id).await? {
                    // Undelivered here, or another instance's until now.
                    entry.move_delivery(FOREIGN, UNDELIVERED);
                    self.queue_delivery(&entry);
                }
            }
        }
        Ok(())
    }

    /// Applies a change announced by the database: reloads the ask if this
    /// instance has an older version (ending it here if it ended, telling
    /// subscribers of progress), or takes in an ask created elsewhere.
    async fn notice(
        self: &Arc<Self>,
        id: &str,
        version: i64,
        delivery_owner: Option<&str>,
    ) -> Result<(), BridgeError> {
        let entry = match self.lookup(id) {
            Some(entry) => entry,
            // Not in memory and this instance's own: it ended here, or
            // `create` is about to take it in.
            None if delivery_owner == Some(self.instance.as_str()) => return Ok(()),
            None => {
                let Found::Pending(entry) = self.find(id).await? else {
                    return Ok(());
                };
                let mut slot = entry.slot.lock().await;
                self.fresh(&entry, &mut slot).await?;
                if !slot.ended {
                    let view = Arc::new(self.slot_view(&slot)?);
                    if view.ask.remind.is_some() {
                        self.remind_wake.notify_one();
                    }
                    self.emit(|| BridgeEvent::Created(view));
                }
                self.evict_if_full(&mut slot);
                drop(slot);
                // Created where its channel's lease is not held: this
                // instance posts it if it holds the lease.
                if let Some(lease) = entry.kind().and_then(|kind| self.lease_of(kind))
                    && self.holds(lease)
                {
                    self.claim_for_lease(lease, Some(id)).await?;
                }
                return Ok(());
            }
        };
        let mut slot = entry.slot.lock().await;
        if slot.ended || slot.version >= version {
            return Ok(());
        }
        // Tells subscribers of the progress or the end.
        self.reload_entry(&entry, &mut slot).await?;
        self.evict_if_full(&mut slot);
        Ok(())
    }

    /// After an interrupted feed: compares every pending ask in memory and
    /// in the database, and applies what differs.
    async fn resync(self: &Arc<Self>) -> Result<(), BridgeError> {
        self.resyncs.fetch_add(1, Ordering::Relaxed);
        let mut stored: HashMap<String, i64> = HashMap::new();
        let mut pending = self.store.pending();
        while let Some(row) = pending.try_next().await? {
            stored.insert(row.id, row.version);
        }
        drop(pending);
        let in_memory: Vec<String> = lock(&self.asks)
            .iter()
            .map(|entry| entry.id.to_string())
            .collect();
        for id in in_memory {
            // Gone from the pending rows: it ended elsewhere.
            let version = stored.remove(&id).unwrap_or(i64::MAX);
            self.notice(&id, version, None).await?;
        }
        for (id, version) in stored {
            self.notice(&id, version, None).await?;
        }
        tracing::info!("re-read the asks after the change feed was interrupted");
        Ok(())
    }
}

/// A connection run under a lease ([`Bridge::run_owned`]); dropping it
/// (or aborting it) stops the connection.
#[derive(Debug)]
pub struct Owned {
    task: tokio::task::JoinHandle<()>,
}

impl Owned {
    /// Stops the connection (and stops trying to own it).
    pub fn abort(&self) {
        self.task.abort();
    }
}

impl Drop for Owned {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Aborts a task when dropped.
struct AbortOnDrop(tokio::task::JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

impl Bridge {
    /// Runs `start`'s connection only while this instance holds the lease
    /// `name`: tries to take it every third of a lease, starts the
    /// connection once it has it, and stops it when the lease is lost (or
    /// cannot be renewed in time). When the owner dies, another instance
    /// takes the lease over once it runs out.
    pub fn run_owned<F>(&self, name: &str, mut start: F) -> Owned
    where
        F: FnMut() -> tokio::task::JoinHandle<()> + Send + 'static,
    {
        let bridge = Arc::downgrade(&self.inner);
        let name = name.to_owned();
        let lease = self.inner.lease;
        let task = self.inner.runtime.spawn(async move {
            let mut running: Option<AbortOnDrop> = None;
            let mut held_until = 0i64;
            let mut ticker = tokio::time::interval(lease / 3);
            ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                ticker.tick().await;
                let Some(inner) = bridge.upgrade() else {
                    return;
                };
                let now = wall_millis();
                let until = now.saturating_add(millis(lease));
                // A link to the database that hangs must not keep the
                // connection running past the lease: an answer that does
                // not come within a third of it counts as a failure.
                let taken = tokio::time::timeout(
                    lease / 3,
                    inner.store.take_lease(&name, &inner.instance, now, until),
                )
                .await
                .unwrap_or_else(|_| Err(StoreError::Database(sqlx::Error::PoolTimedOut)));
                let keep = match taken {
                    Ok(LeaseTaken::No) => false,
                    Ok(taken) => {
                        held_until = until;
                        if taken == LeaseTaken::TakenOver {
                            inner.lease_takeovers.fetch_add(1, Ordering::Relaxed);
                            tracing::info!(lease = %name, "took the connection over from a dead instance");
                        }
                        true
                    }
                    Err(error) => {
                        tracing::warn!(lease = %name, error = %error, "could not renew a lease");
                        // Keep running only while surely still the holder
                        // (the failed call itself may have taken a while).
                        wall_millis().saturating_add(millis(lease / 3)) < held_until
                    }
                };
                match (&running, keep) {
                    (Some(task), true) if task.0.is_finished() => {
                        tracing::warn!(lease = %name, "the connection stopped; starting it again");
                        running = Some(AbortOnDrop(start()));
                    }
                    (None, true) => {
                        tracing::info!(lease = %name, instance = %inner.instance, "this instance runs the connection");
                        running = Some(AbortOnDrop(start()));
                        lock(&inner.owned).insert(name.clone());
                    }
                    (Some(_), false) => {
                        tracing::warn!(lease = %name, "lease lost; stopping the connection");
                        running = None;
                        lock(&inner.owned).remove(&name);
                    }
                    _ => {}
                }
                // The asks of channels that need this lease, created while
                // no instance or another held it.
                if keep && let Err(error) = inner.claim_for_lease(&name, None).await {
                    tracing::warn!(lease = %name, error = %error, "could not claim the asks this lease's holder posts");
                }
            }
        });
        Owned { task }
    }

    /// Gives up this instance's leases (call after stopping its
    /// [`Owned`] connections, before exiting), so other instances take
    /// over its connections and undelivered asks at once.
    pub async fn leave(&self) -> Result<(), BridgeError> {
        // What this instance delivered is recorded before others may take
        // its undelivered asks: else they would post those again.
        self.flush().await?;
        let inner = &self.inner;
        let owned: Vec<String> = std::mem::take(&mut *lock(&inner.owned))
            .into_iter()
            .collect();
        for name in owned {
            inner.store.release_lease(&name, &inner.instance).await?;
        }
        inner
            .store
            .release_lease(&instance_lease(&inner.instance), &inner.instance)
            .await?;
        Ok(())
    }
}

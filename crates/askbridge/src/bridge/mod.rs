//! The lifecycle driver: runs each ask's core state machine
//! ([`askbridge_core::lifecycle::AskLifecycle`]) against real time, storage
//! and channels.
//!
//! - Every ask is persisted before it is delivered; every state change is
//!   persisted with a compare-and-set on the ask's version, so the first
//!   valid answer wins even across processes sharing one database. A
//!   change is committed in memory, and waiters, subscribers and the
//!   channel are told, only after it is stored.
//! - Each pending ask has one small entry in memory (id, deadline,
//!   version, a lock that serialises this process's changes to it, a
//!   notification for waiters). Its lifecycle — the ask with its prepared
//!   reply matcher, several kilobytes — is kept for a bounded number of
//!   asks and otherwise rebuilt from its row when an input arrives, so
//!   100,000 pending asks fit in tens of megabytes and reload from one
//!   query without parsing a single ask.
//! - Deadlines are persisted and re-armed on start by one timer task;
//!   asks whose deadline passed while the daemon was down end as
//!   `timed_out` in one statement.
//! - Waiters (`wait`) and subscribers (`subscribe`) are told of changes
//!   without polling. On Postgres, a change made by another instance is
//!   announced by the database and applied here within milliseconds (the
//!   `cluster` module); on SQLite, a change made by another process on
//!   the file is noticed when this one next touches the ask (any input,
//!   `get`, or the end of a `wait`).
//! - Each ask is delivered by one instance, its recorded delivery owner;
//!   an instance whose `instance/<id>` lease runs out (it died) has its
//!   undelivered asks taken over by another. Bot connections that must
//!   run once (Telegram polling, the Discord gateway) run under a lease
//!   too ([`Bridge::run_owned`]).
//! - Channels deliver, update and close asks through a per-ask outbox
//!   (the `outbox` module), with retries; an ask that cannot be delivered
//!   ends as `delivery_failed`.
//!
//! Interfaces (HTTP, MCP, the web page, chat channels) talk only to
//! [`Bridge`]; the bridge talks to [`crate::store`] and to [`Channel`]s.

pub mod channel;
pub mod clock;
mod cluster;
mod memory;
mod outbox;
mod record;
mod remind;
mod response;
mod settle;
mod timer;

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, RwLock};
use std::time::Duration;

use askbridge_core::failure::PlatformFailure;
use askbridge_core::lifecycle::{Answer, AskLifecycle, Input, Rejection, State, Step};
use askbridge_core::model::Timestamp;
use askbridge_core::model::{Ask, AskDefaults, CallbackEvent, ChannelKind, Notice, Place, Target};
use askbridge_core::normalize::Problem;
use askbridge_core::outcome::Outcome;
use tokio::sync::{Notify, broadcast, watch};

use crate::store::{Backend, Inserted, ListQuery, StateChange, Store, StoreError};
use crate::wire::stored::StoredChannel;

pub use crate::store::MessageRef;
pub use channel::Channel;
pub use clock::Clock;
pub use cluster::Owned;
use memory::{AskKey, Asks, Entry, Found, Slot, Spot, further_kinds, place_dues};
pub use outbox::RetryPolicy;
use outbox::{NOT_DELIVERED, Op, QUEUED, UNDELIVERED};

/// How to open a bridge.
#[derive(Debug, Clone)]
pub struct BridgeOptions {
    /// `sqlite://…` or `postgres://…`.
    pub database_url: String,
    /// What asks that do not say get: where they go (an ask without
    /// `to`), their reminders and escalation.
    pub defaults: AskDefaults,
    /// This instance's name among those sharing the database: the
    /// delivery owner it records and the holder of its leases. A
    /// restarted instance with the same name takes its own work back at
    /// once; two live instances must never share one.
    pub instance: String,
}

impl BridgeOptions {
    /// Options for a database and the defaults of asks (a default target
    /// alone: no default reminder or escalation), as the instance `local`.
    pub fn new(database_url: impl Into<String>, defaults: impl Into<AskDefaults>) -> BridgeOptions {
        BridgeOptions {
            database_url: database_url.into(),
            defaults: defaults.into(),
            instance: "local".to_owned(),
        }
    }

    /// The same options as another instance.
    pub fn instance(self, instance: impl Into<String>) -> BridgeOptions {
        BridgeOptions {
            instance: instance.into(),
            ..self
        }
    }
}

/// What [`Bridge::open`] takes by default and [`Bridge::open_with`] lets
/// a caller (a test, a benchmark) choose.
#[derive(Debug, Clone)]
pub struct Tuning {
    /// The bridge's time: [`Clock::system`] unless a test controls it.
    pub clock: Clock,
    /// How channel calls are retried.
    pub retry: RetryPolicy,
    /// Pending asks whose lifecycle (the ask and its prepared reply
    /// matcher, several kilobytes) stays in memory between inputs; past
    /// this many, a lifecycle is rebuilt from its row when needed (tens of
    /// microseconds) and dropped again. Default 4,096.
    pub cached_lifecycles: usize,
    /// How long a lease lasts unless renewed (renewed every third of it):
    /// after an instance dies, the longest before another takes over its
    /// bot connections and undelivered asks. Default 10 seconds.
    pub lease: Duration,
}

impl Default for Tuning {
    /// The system clock, [`RetryPolicy::default`], 4,096 cached
    /// lifecycles, 10-second leases.
    fn default() -> Tuning {
        Tuning {
            clock: Clock::system(),
            retry: RetryPolicy::default(),
            cached_lifecycles: 4_096,
            lease: Duration::from_secs(10),
        }
    }
}

/// A request to create an ask.
#[derive(Debug, Clone)]
pub struct NewAsk {
    /// The normalised ask. Its own `target`, if any, wins over the default.
    pub ask: Ask,
    /// A caller's key: creating again with the same key returns the same ask.
    pub idempotency_key: Option<String>,
}

/// Everything known about one ask at one moment.
#[derive(Debug, Clone)]
pub struct AskView {
    /// `ask_…`.
    pub id: String,
    /// The normalised ask.
    pub ask: Ask,
    /// Where it was posted (the ask's own target or the default).
    pub target: Target,
    /// When it was created.
    pub created_at: Timestamp,
    /// When it times out.
    pub deadline: Timestamp,
    /// Its lifecycle state.
    pub state: State,
    /// Answers given so far, one slot per question.
    pub answers: Vec<Option<Answer>>,
    /// The outcome, once the ask has ended.
    pub outcome: Option<Outcome>,
    /// For an ask answered here after the agent's host had decided
    /// ([`State::Overtaken`]): the outcome its late answer made, which
    /// decided nothing.
    pub late: Option<Outcome>,
}

impl AskView {
    /// Every place the ask is posted to, `target` first, escalation
    /// steps' last ([`Ask::places`]).
    pub fn places(&self) -> impl Iterator<Item = &Target> {
        std::iter::once(&self.target)
            .chain(&self.ask.also)
            .chain(self.ask.escalate.iter().map(|step| &step.to))
    }

    /// Place number `place`, if there is one.
    pub fn place(&self, place: usize) -> Option<&Target> {
        self.places().nth(place)
    }

    /// Whether the ask is in a place on channel `kind` at `now` (an ended
    /// ask: when it ended), by the core's rule ([`Ask::is_on`]).
    pub fn is_on(&self, kind: ChannelKind, now: Timestamp) -> bool {
        let at = self
            .outcome
            .as_ref()
            .map_or(now, |outcome| outcome.answered_at.min(now));
        self.ask.is_on(kind, self.created_at, at)
    }
}

/// What subscribers hear.
#[derive(Debug, Clone)]
pub enum BridgeEvent {
    /// A new ask was created.
    Created(Arc<AskView>),
    /// A pending ask took answers (partial progress).
    Updated(Arc<AskView>),
    /// An ask ended.
    Ended(Arc<AskView>),
    /// A pending ask reached a place where nothing is posted (the web
    /// page) at its escalation step's time: it shows there from now on.
    Arrived(Arc<AskView>),
}

/// Which asks [`Bridge::list`] returns.
#[derive(Debug, Clone, Default)]
pub struct ListFilter {
    /// Only pending asks.
    pub pending_only: bool,
    /// Only asks in a place on this channel by now (an escalation step's
    /// place from its time on: [`AskView::is_on`]).
    pub channel: Option<askbridge_core::model::ChannelKind>,
    /// At most this many, newest first.
    pub limit: Option<usize>,
}

/// Why a bridge call failed.
#[derive(Debug, thiserror::Error)]
pub enum BridgeError {
    /// No ask has this id.
    #[error("no ask with id {0:?}")]
    NotFound(String),
    /// The idempotency key was used before for a different ask.
    #[error("idempotency key {0:?} was used for a different ask")]
    IdempotencyConflict(String),
    /// The database failed ([`BridgeError::is_retryable`] when it was
    /// unreachable or busy).
    #[error("storage failed")]
    Storage(#[from] StoreError),
    /// Other processes kept changing the ask while this one tried to
    /// (retryable).
    #[error("ask {0:?} kept changing under this process")]
    Contended(String),
    /// A pending ask's state is not in memory: a bug.
    #[error("the ask's lifecycle is not loaded")]
    NotLoaded,
    /// The bridge was opened outside a tokio runtime.
    #[error("the bridge needs a tokio runtime")]
    NoRuntime(#[source] tokio::runtime::TryCurrentError),
    /// The ask's `callbackUrl` may not be called ([`CallbackCheck`]).
    #[error("callbackUrl: {0}")]
    Callback(String),
    /// The ask may not be created as it is: an approval whose places do
    /// not each name its person
    /// ([`askbridge_core::normalize::with_defaults`]).
    #[error("{}", problems_line(.0))]
    Refused(Vec<Problem>),
}

/// Problems on one line: `to: …; escalate[0].to: …`.
fn problems_line(problems: &[Problem]) -> String {
    problems
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join("; ")
}

/// Whether an ask's `callbackUrl` may be called: the daemon's webhook
/// rules (`[webhooks]`), checked when the ask is created.
#[async_trait::async_trait]
pub trait CallbackCheck: Send + Sync + std::fmt::Debug {
    /// `Ok` when `url` may be called, else why not.
    async fn check(&self, url: &str) -> Result<(), String>;

    /// The body of delivery `delivery` of `event` for ask `id`, as the ask
    /// is at this moment: an event's delivery is written with it, so what
    /// the receiver reads is the ask at the event, not when it is sent.
    /// `None`: built when it is sent.
    async fn body(
        &self,
        bridge: &Bridge,
        id: &str,
        event: CallbackEvent,
        delivery: &str,
    ) -> Option<String> {
        let _ = (bridge, id, event, delivery);
        None
    }
}

/// What a bridge without webhooks says of a `callbackUrl`.
const NO_WEBHOOKS: &str = "webhooks are off in this daemon: set ASKBRIDGE_WEBHOOK_SECRET and \
                           [webhooks] allowed_hosts to turn them on";

/// Webhook attempts by how they went, in [`Metrics::webhooks`] order.
pub const WEBHOOK_RESULTS: [&str; 4] = ["delivered", "retry", "gone", "failed"];

/// Why a notice was not posted.
#[derive(Debug, thiserror::Error)]
pub enum NoticeError {
    /// The daemon serves no such channel.
    #[error("the daemon has no {0} channel configured")]
    NoChannel(&'static str),
    /// The channel or its platform did not post it.
    #[error(transparent)]
    Platform(#[from] PlatformFailure),
}

impl BridgeError {
    /// Whether the database had no room to write (its disk is full): a
    /// [retryable](BridgeError::is_retryable) failure worth naming.
    pub fn is_full(&self) -> bool {
        matches!(self, BridgeError::Storage(error) if error.is_full())
    }

    /// Whether trying again later may succeed: the database was
    /// unreachable or busy, or other processes changed the ask meanwhile.
    /// A refusal (no such ask, a reused key) or a bug is not.
    pub fn is_retryable(&self) -> bool {
        match self {
            BridgeError::Storage(error) => error.is_transient(),
            BridgeError::Contended(_) => true,
            BridgeError::NotFound(_)
            | BridgeError::IdempotencyConflict(_)
            | BridgeError::NotLoaded
            | BridgeError::NoRuntime(_)
            | BridgeError::Callback(_)
            | BridgeError::Refused(_) => false,
        }
    }
}

/// Counters for `/metrics`.
#[derive(Debug, Clone, Default)]
pub struct Metrics {
    /// Asks created since start.
    pub created: u64,
    /// Asks that ended, by final status (`answered`, `skipped`, `timed_out`, `cancelled`, `delivery_failed`).
    pub ended: Vec<(&'static str, u64)>,
    /// Asks pending now.
    pub pending: u64,
    /// Changes announced by the database (Postgres), this instance's own
    /// included.
    pub announcements: u64,
    /// Times the change feed was interrupted and everything re-read.
    pub resyncs: u64,
    /// Leases (bot connections) this instance took over from another.
    pub lease_takeovers: u64,
    /// Undelivered asks this instance took over from a dead one.
    pub delivery_takeovers: u64,
    /// Webhook attempts this instance made, by how they went
    /// ([`WEBHOOK_RESULTS`]).
    pub webhooks: Vec<(&'static str, u64)>,
}

/// The final states, in [`Metrics::ended`] order.
const ENDED: [&str; 5] = [
    "answered",
    "skipped",
    "timed_out",
    "cancelled",
    "delivery_failed",
];

/// Events kept for slow subscribers before they lag (and miss some).
const EVENT_CAPACITY: usize = 4_096;

/// Compare-and-set attempts before an input gives up on a busy ask.
const CAS_ATTEMPTS: u32 = 16;

/// A [`Bridge`] handle that does not keep it alive.
#[derive(Debug, Clone)]
pub struct WeakBridge(std::sync::Weak<Inner>);

impl WeakBridge {
    /// The bridge, unless it has been dropped.
    pub fn upgrade(&self) -> Option<Bridge> {
        self.0.upgrade().map(|inner| Bridge { inner })
    }
}

/// Most pending asks [`Bridge::pending_at`] returns.
const PENDING_PER_PLACE: i64 = 50;
/// How long [`Bridge::find_message_ref_posted`] waits for deliveries in
/// flight: a post is recorded moments after it is sent, but a busy
/// machine's moments can run to seconds, and a reply that came too soon
/// would be lost (a platform that wants its answer sooner is told to
/// deliver it again while the handling goes on).
pub const POSTING_SETTLES_WITHIN: Duration = Duration::from_secs(10);

/// The handle every interface uses. Cheap to clone.
#[derive(Debug, Clone)]
pub struct Bridge {
    inner: Arc<Inner>,
}

/// The bridge's state, shared by every handle, the timer task and the
/// channel tasks.
struct Inner {
    store: Arc<dyn Store>,
    defaults: AskDefaults,
    /// This instance's name ([`BridgeOptions::instance`]).
    instance: String,
    lease: Duration,
    /// The leases this instance holds now, by name (`instance/…` aside).
    owned: Mutex<std::collections::BTreeSet<String>>,
    clock: Clock,
    retry: RetryPolicy,
    runtime: tokio::runtime::Handle,
    /// Pending asks, one entry each. Never held across an `.await`.
    asks: Mutex<Asks>,
    /// Pending deadlines, for the timer task.
    deadlines: Mutex<timer::Deadlines>,
    /// When pending asks reach the web page (an escalation step's time),
    /// for the timer task to say so ([`BridgeEvent::Arrived`]).
    arrivals: Mutex<timer::Deadlines>,
    /// Wakes the timer task: an earlier deadline, or the bridge dropped.
    timer_wake: Arc<Notify>,
    /// Wakes the reminder task: an ask created here or elsewhere, or the
    /// bridge dropped.
    remind_wake: Arc<Notify>,
    /// Reminders this instance finished (posted in every place they went
    /// to), counted.
    reminders_done: watch::Sender<u64>,
    /// Pending entries holding their lifecycle.
    cached: AtomicUsize,
    /// At most this many, give or take the ones in use.
    cache_limit: usize,
    channels: RwLock<HashMap<ChannelKind, Arc<dyn Channel>>>,
    /// Asks delivered but not yet recorded as such.
    delivered: Mutex<Vec<AskKey>>,
    /// Wakes the task that records deliveries.
    delivered_wake: Arc<Notify>,
    /// Channel deliveries running in this process (posting, then saving
    /// the message refs).
    delivering: AtomicUsize,
    /// Counts the deliveries that have finished, for those waiting on them.
    deliveries_done: watch::Sender<u64>,
    /// Delivered asks that timed out while the bridge was down, whose
    /// messages are closed once their channel is registered.
    expired_on_open: Mutex<Vec<(Arc<str>, ChannelKind)>>,
    events: broadcast::Sender<BridgeEvent>,
    created: AtomicU64,
    ended: [AtomicU64; ENDED.len()],
    announcements: AtomicU64,
    resyncs: AtomicU64,
    lease_takeovers: AtomicU64,
    delivery_takeovers: AtomicU64,
    /// What this instance still has to do at the time now.
    settle: Arc<settle::Settle>,
    /// The daemon's webhook rules; unset: asks with a `callbackUrl` are
    /// refused.
    callbacks: std::sync::OnceLock<Arc<dyn CallbackCheck>>,
    /// Wakes the webhook sender: an event's delivery was written.
    webhook_wake: Arc<Notify>,
    /// Webhook attempts by how they went ([`WEBHOOK_RESULTS`]).
    webhook_results: [AtomicU64; WEBHOOK_RESULTS.len()],
}

/// A change to apply to an ask.
#[derive(Debug)]
enum Change {
    Input(Input),
    /// The timer: time out if the deadline has passed.
    Tick,
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Bridge {
    /// Opens the database (creating and migrating it), reloads pending
    /// asks, re-arms their deadlines and ends those already past. Uses the
    /// system clock and the default retry policy.
    pub async fn open(options: BridgeOptions) -> Result<Bridge, BridgeError> {
        Bridge::open_with(options, Tuning::default()).await
    }

    /// [`Bridge::open`] with a chosen clock, retry policy and cache size.
    pub async fn open_with(options: BridgeOptions, tuning: Tuning) -> Result<Bridge, BridgeError> {
        let BridgeOptions {
            database_url,
            defaults,
            instance,
        } = options;
        let Tuning {
            clock,
            retry,
            cached_lifecycles,
            lease,
        } = tuning;
        let runtime = tokio::runtime::Handle::try_current().map_err(BridgeError::NoRuntime)?;
        let store = crate::store::open(&database_url).await?;
        // Alive before claiming: others must not take back what this
        // instance is about to deliver.
        cluster::renew_instance(&*store, &instance, lease).await?;
        let claimed = cluster::claim_on_open(&*store, &instance).await?;
        let now = clock.now();
        let timed_out = record::state_json("", &State::TimedOut)?;
        // Read first: the places of the asks about to time out.
        let mut further = further_kinds(store.pending_further_places().await?);
        let expired = store
            .time_out_expired(record::millis(now), &timed_out)
            .await?;
        let (events, _) = broadcast::channel(EVENT_CAPACITY);
        let inner = Arc::new(Inner {
            store,
            defaults,
            instance,
            lease,
            owned: Mutex::new(std::collections::BTreeSet::new()),
            clock,
            retry,
            runtime,
            asks: Mutex::new(Asks::default()),
            deadlines: Mutex::new(timer::Deadlines::new()),
            arrivals: Mutex::new(timer::Deadlines::new()),
            timer_wake: Arc::new(Notify::new()),
            remind_wake: Arc::new(Notify::new()),
            reminders_done: watch::Sender::new(0),
            cached: AtomicUsize::new(0),
            cache_limit: cached_lifecycles,
            channels: RwLock::new(HashMap::new()),
            delivered: Mutex::new(Vec::new()),
            delivered_wake: Arc::new(Notify::new()),
            delivering: AtomicUsize::new(0),
            deliveries_done: watch::Sender::new(0),
            expired_on_open: Mutex::new(Vec::new()),
            events,
            created: AtomicU64::new(0),
            ended: Default::default(),
            announcements: AtomicU64::new(0),
            resyncs: AtomicU64::new(0),
            lease_takeovers: AtomicU64::new(0),
            delivery_takeovers: AtomicU64::new(0),
            settle: Arc::default(),
            callbacks: std::sync::OnceLock::new(),
            webhook_wake: Arc::new(Notify::new()),
            webhook_results: Default::default(),
        });
        if !expired.is_empty() {
            let mut to_close = Vec::new();
            for ask in &expired {
                tracing::debug!(ask_id = %ask.id, "ask timed out while the bridge was down");
                let kind = StoredChannel::parse(&ask.channel).map(ChannelKind::from);
                let more = further.remove(ask.id.as_str()).unwrap_or_default();
                if let (Some(kind), Some(_)) = (kind, ask.delivered_at) {
                    let mut kinds = vec![kind];
                    kinds.extend(
                        more.into_iter()
                            .map(|(more, _)| more)
                            .filter(|more| *more != kind),
                    );
                    kinds.dedup();
                    for kind in kinds {
                        to_close.push((Arc::from(ask.id.as_str()), kind));
                    }
                }
            }
            inner.count_end(&State::TimedOut, expired.len() as u64);
            tracing::info!(
                count = expired.len(),
                "asks timed out while the bridge was down"
            );
            *lock(&inner.expired_on_open) = to_close;
        }
        inner.reload(&claimed).await?;
        cluster::start(&inner).await?;
        // The deadline and reminder tasks, at work until they first sleep.
        inner.settle.start();
        inner.settle.start();
        inner.runtime.spawn(timer::run(
            Arc::downgrade(&inner),
            Arc::clone(&inner.timer_wake),
            inner.clock.clone(),
        ));
        inner.runtime.spawn(remind::run(
            Arc::downgrade(&inner),
            Arc::clone(&inner.remind_wake),
            inner.clock.clone(),
        ));
        inner.runtime.spawn(outbox::record_deliveries(
            Arc::downgrade(&inner),
            Arc::clone(&inner.delivered_wake),
        ));
        Ok(Bridge { inner })
    }

    /// Registers a channel that delivers asks posted to its kind (it
    /// replaces an earlier one of the same kind). Asks reloaded on start
    /// that were never delivered are delivered now, and the messages of
    /// asks that timed out while the bridge was down are closed.
    pub fn add_channel(&self, channel: Arc<dyn Channel>) {
        let inner = &self.inner;
        let kind = channel.kind();
        inner
            .channels
            .write()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(kind, Arc::clone(&channel));
        tracing::info!(channel = kind.as_str(), "channel registered");
        // A channel that needs a lease gets its asks once it holds it.
        let here = inner.posts_here(kind);
        let mut waiting: Vec<(Arc<Entry>, usize)> = Vec::new();
        if here {
            for entry in lock(&inner.asks).iter() {
                for (place, spot) in entry.spots.iter().enumerate() {
                    if spot.kind == kind
                        && spot
                            .delivery
                            .compare_exchange(
                                UNDELIVERED,
                                QUEUED,
                                Ordering::AcqRel,
                                Ordering::Acquire,
                            )
                            .is_ok()
                    {
                        waiting.push((Arc::clone(entry), place));
                    }
                }
            }
        }
        for (entry, place) in &waiting {
            outbox::enqueue(inner, entry, *place, Op::Deliver(None));
        }
        let expired: Vec<Arc<str>> = {
            let mut list = lock(&inner.expired_on_open);
            let (mine, rest) = std::mem::take(&mut *list)
                .into_iter()
                .partition(|(_, k)| *k == kind);
            *list = rest;
            mine.into_iter().map(|(id, _)| id).collect()
        };
        if !expired.is_empty() {
            let task = Arc::clone(inner);
            inner.settle.start();
            inner.runtime.spawn(async move {
                for id in expired {
                    match task.load_view(&id).await {
                        Ok(view) => outbox::end_detached(&task, &*channel, &view).await,
                        Err(error) => {
                            tracing::warn!(ask_id = %id, error = %error, "could not close an expired ask");
                        }
                    }
                }
                task.settle.done();
            });
        }
    }

    /// Creates (persists, arms, delivers) an ask. With an idempotency key
    /// seen before, returns the earlier ask and `false`.
    pub async fn create(&self, new: NewAsk) -> Result<(AskView, bool), BridgeError> {
        let inner = &self.inner;
        let NewAsk {
            ask,
            idempotency_key,
        } = new;
        let ask = askbridge_core::normalize::with_defaults(ask, &inner.defaults)
            .map_err(BridgeError::Refused)?;
        if let Some(callback) = &ask.callback {
            match inner.callbacks.get() {
                Some(check) => check.check(&callback.url).await,
                None => Err(NO_WEBHOOKS.to_owned()),
            }
            .map_err(BridgeError::Callback)?;
        }
        let key = AskKey::new();
        let lifecycle = AskLifecycle::new(key.to_string(), ask, inner.clock.now());
        let row = record::new_row(&lifecycle, idempotency_key, &inner.instance)?;
        if let Inserted::Existing(existing) = inner.store.insert_ask(&row).await? {
            if existing.ask_json != row.ask_json {
                return Err(BridgeError::IdempotencyConflict(
                    existing.idempotency_key.unwrap_or_default(),
                ));
            }
            tracing::debug!(ask_id = %existing.id, "same idempotency key: the earlier ask");
            return Ok((self.get(&existing.id).await?, false));
        }
        let view = inner.view(&lifecycle);
        let keep = inner.cached.load(Ordering::Relaxed) < inner.cache_limit;
        // Where another instance holds a channel's lease, that one claims
        // the ask and posts it.
        let places: Vec<(ChannelKind, bool)> = view
            .places()
            .map(|target| {
                let kind = target.place.channel();
                (kind, inner.posts_here(kind))
            })
            .collect();
        let dues = place_dues(&lifecycle);
        let entry = inner.adopt(Entry::new(
            key,
            places
                .iter()
                .zip(dues)
                .map(|(&(kind, here), due)| (kind, if here { QUEUED } else { UNDELIVERED }, due)),
            lifecycle.deadline(),
            row.version,
            keep.then(|| Box::new(lifecycle)),
        ));
        inner.created.fetch_add(1, Ordering::Relaxed);
        tracing::info!(
            ask_id = %view.id,
            target = %row.target,
            deadline = %view.deadline,
            questions = view.ask.questions.len(),
            "ask created"
        );
        let shared = Arc::new(view);
        inner.emit(|| BridgeEvent::Created(Arc::clone(&shared)));
        if shared.ask.remind.is_some() {
            inner.remind_wake.notify_one();
        }
        for (place, &(_, here)) in places.iter().enumerate() {
            if here {
                outbox::enqueue(inner, &entry, place, Op::Deliver(Some(Arc::clone(&shared))));
            }
        }
        let view = Arc::try_unwrap(shared).unwrap_or_else(|shared| (*shared).clone());
        Ok((view, true))
    }

    /// The ask as it is now.
    pub async fn get(&self, id: &str) -> Result<AskView, BridgeError> {
        let inner = &self.inner;
        match inner.find(id).await? {
            Found::Ended(lifecycle) => Ok(inner.view(&lifecycle)),
            Found::Pending(entry) => {
                let mut slot = entry.slot.lock().await;
                inner.fresh(&entry, &mut slot).await?;
                let view = inner.slot_view(&slot)?;
                inner.evict_if_full(&mut slot);
                Ok(view)
            }
        }
    }

    /// The ask once it has ended, or as it is when `wait` has passed (on
    /// the bridge's clock). Woken by the change itself, not by polling; a
    /// change made by another process sharing the database is seen when
    /// the wait ends.
    ///
    /// A waiter keeps only the ask's entry, a timer and a place in the
    /// entry's wake-up list: the database reads before and after the wait
    /// are boxed, so that their futures take no room in this one for as
    /// long as it waits (there may be thousands of waiters).
    pub async fn wait(&self, id: &str, wait: Duration) -> Result<AskView, BridgeError> {
        let inner = &self.inner;
        let until = inner.clock.after(wait);
        let entry = match Box::pin(inner.find(id)).await? {
            Found::Ended(lifecycle) => return Ok(inner.view(&lifecycle)),
            Found::Pending(entry) => entry,
        };
        let timeout = inner.clock.sleep_until(until);
        tokio::pin!(timeout);
        let mut refreshed = false;
        loop {
            let wake;
            let ended;
            {
                let mut slot = entry.slot.lock().await;
                if !refreshed {
                    Box::pin(inner.refresh(&entry, &mut slot)).await?;
                    refreshed = true;
                }
                if slot.ended {
                    return inner.slot_view(&slot);
                }
                wake = slot.on_end();
                ended = wake.notified();
            }
            tokio::pin!(ended);
            tokio::select! {
                () = &mut ended => {}
                () = &mut timeout => {
                    let mut slot = entry.slot.lock().await;
                    Box::pin(inner.fresh(&entry, &mut slot)).await?;
                    let view = inner.slot_view(&slot)?;
                    inner.evict_if_full(&mut slot);
                    return Ok(view);
                }
            }
        }
    }

    /// Applies one input (a reply, a pick, structured answers, skip,
    /// cancel) now. Rejections are values in the [`Step`], not errors.
    pub async fn handle(&self, id: &str, input: Input) -> Result<(Step, AskView), BridgeError> {
        let inner = &self.inner;
        match inner.find(id).await? {
            Found::Ended(mut lifecycle) => {
                // Ended asks only reject; nothing to store.
                let step = lifecycle.handle(input, inner.clock.now());
                Ok((step, inner.view(&lifecycle)))
            }
            Found::Pending(entry) => {
                let (step, view) = inner.apply(&entry, Change::Input(input)).await?;
                let step = step
                    .unwrap_or_else(|| Step::Rejected(Rejection::AlreadyEnded(view.state.clone())));
                Ok((step, view))
            }
        }
    }

    /// Cancels a pending ask (the agent gave up); an ended ask is returned as is.
    pub async fn cancel(&self, id: &str) -> Result<AskView, BridgeError> {
        self.end(id, Input::Cancel).await
    }

    /// Ends a pending ask with `input` ([`Input::Cancel`],
    /// [`Input::AnsweredInHost`]); an ended ask is returned as is, but
    /// for one answered here that the agent's host shows it had decided
    /// without ([`Input::AnsweredInHost`]): its answer came too late, and
    /// the ask is overtaken ([`AskLifecycle::overtake`]), its messages
    /// closed again saying so.
    pub async fn end(&self, id: &str, input: Input) -> Result<AskView, BridgeError> {
        let in_host = matches!(input, Input::AnsweredInHost);
        let view = self.handle(id, input).await.map(|(_, view)| view)?;
        if in_host && matches!(view.state, State::Answered { .. }) {
            return self.inner.overtake(id).await;
        }
        Ok(view)
    }

    /// Asks matching the filter, newest first. Rows that no longer read
    /// back are logged and left out.
    pub async fn list(&self, filter: ListFilter) -> Result<Vec<AskView>, BridgeError> {
        let now = self.inner.clock.now();
        let wanted = filter.limit.unwrap_or(usize::MAX);
        let mut limit = filter.limit;
        loop {
            let (mut views, rows) = self.list_rows(&filter, limit).await?;
            // The database knows every place an ask goes to; whether it
            // is there yet is the core's rule, at this bridge's time.
            if let Some(kind) = filter.channel {
                views.retain(|view| view.is_on(kind, now));
            }
            match limit {
                // Asks not there yet were left out: read further back.
                Some(read) if rows == read && views.len() < wanted => {
                    limit = Some(read.saturating_mul(4));
                }
                _ => {
                    views.truncate(wanted);
                    return Ok(views);
                }
            }
        }
    }

    /// The newest `limit` asks the filter's database part picks, and how
    /// many rows were read.
    async fn list_rows(
        &self,
        filter: &ListFilter,
        limit: Option<usize>,
    ) -> Result<(Vec<AskView>, usize), BridgeError> {
        let inner = &self.inner;
        let rows = inner
            .store
            .list(ListQuery {
                pending_only: filter.pending_only,
                channel: filter.channel.map(ChannelKind::as_str),
                limit: limit.map(|limit| i64::try_from(limit).unwrap_or(i64::MAX)),
            })
            .await?;
        let read = rows.len();
        let mut views = Vec::with_capacity(read);
        for row in rows {
            if let Some(entry) = inner.lookup(&row.id) {
                let slot = entry.slot.lock().await;
                if let Some(lifecycle) = slot.lifecycle.as_deref()
                    && slot.version >= row.version
                {
                    views.push(inner.view(lifecycle));
                    continue;
                }
            }
            match record::rebuild(&row) {
                Ok(lifecycle) => views.push(inner.view(&lifecycle)),
                Err(error) => {
                    tracing::error!(ask_id = %row.id, error = %error, "unreadable ask left out");
                }
            }
        }
        Ok((views, read))
    }

    /// Live events: created, updated, ended. A receiver that falls more
    /// than a few thousand events behind lags (and should re-read with
    /// [`Bridge::list`]); it never slows the bridge.
    pub fn subscribe(&self) -> broadcast::Receiver<BridgeEvent> {
        self.inner.events.subscribe()
    }

    /// Counters for `/metrics`.
    pub fn metrics(&self) -> Metrics {
        let inner = &self.inner;
        Metrics {
            created: inner.created.load(Ordering::Relaxed),
            ended: ENDED
                .iter()
                .zip(&inner.ended)
                .map(|(name, count)| (*name, count.load(Ordering::Relaxed)))
                .collect(),
            pending: lock(&inner.asks).len() as u64,
            announcements: inner.announcements.load(Ordering::Relaxed),
            resyncs: inner.resyncs.load(Ordering::Relaxed),
            lease_takeovers: inner.lease_takeovers.load(Ordering::Relaxed),
            delivery_takeovers: inner.delivery_takeovers.load(Ordering::Relaxed),
            webhooks: WEBHOOK_RESULTS
                .iter()
                .zip(&inner.webhook_results)
                .map(|(name, count)| (*name, count.load(Ordering::Relaxed)))
                .collect(),
        }
    }

    /// Turns webhooks on: asks with a `callbackUrl` are created when
    /// `check` allows the URL (until then they are refused). Set once.
    pub fn set_callbacks(&self, check: Arc<dyn CallbackCheck>) {
        let _ = self.inner.callbacks.set(check);
    }

    /// Whether webhooks are on ([`Bridge::set_callbacks`]).
    pub fn has_callbacks(&self) -> bool {
        self.inner.callbacks.get().is_some()
    }

    /// The database, for the webhook sender.
    pub(crate) fn store(&self) -> &Arc<dyn Store> {
        &self.inner.store
    }

    /// What wakes the webhook sender: an event's delivery written here.
    pub(crate) fn webhook_wake(&self) -> Arc<Notify> {
        Arc::clone(&self.inner.webhook_wake)
    }

    /// Counts a webhook attempt by how it went (one of
    /// [`WEBHOOK_RESULTS`]).
    pub(crate) fn count_webhook(&self, result: &str) {
        if let Some(index) = WEBHOOK_RESULTS.iter().position(|name| *name == result) {
            self.inner.webhook_results[index].fetch_add(1, Ordering::Relaxed);
        }
    }

    /// The webhook deliveries of ask `id`, oldest first.
    pub async fn webhooks_of(
        &self,
        id: &str,
    ) -> Result<Vec<crate::store::WebhookRow>, BridgeError> {
        Ok(self.inner.store.webhooks_of(id).await?)
    }

    /// This instance's name among those sharing the database.
    pub fn instance(&self) -> &str {
        &self.inner.instance
    }

    /// Which database backend the bridge runs on.
    pub fn backend(&self) -> Backend {
        self.inner.store.backend()
    }

    /// The leases (bot connections) this instance holds now, by name.
    pub fn owned(&self) -> Vec<String> {
        lock(&self.inner.owned).iter().cloned().collect()
    }

    /// Writes what is only in memory (which asks were delivered, which
    /// is otherwise written in batches). Call it before a graceful exit;
    /// after a crash, at worst an ask is delivered again.
    pub async fn flush(&self) -> Result<(), BridgeError> {
        Ok(outbox::flush_deliveries(&self.inner).await?)
    }

    /// Returns once this instance has done everything due at the bridge's
    /// time now: no channel operation queued or running (but for one
    /// waiting for a later time: an escalation step not yet due, a retry's
    /// backoff), and the deadline and reminder tasks asleep until a later
    /// time. What other instances still do is theirs to tell: to check
    /// that something happened once across instances, wait for each to
    /// settle, then count.
    pub async fn settled(&self) {
        self.inner.settle.settled(&self.inner.clock).await;
    }

    /// The bridge's time now.
    pub fn now(&self) -> Timestamp {
        self.inner.clock.now()
    }

    /// The bridge's clock.
    pub fn clock(&self) -> &Clock {
        &self.inner.clock
    }

    /// Where asks without a `to` go.
    pub fn default_target(&self) -> &Target {
        &self.inner.defaults.target
    }

    /// Posts `notice` where it says, else at the default target, now
    /// (nothing is queued: the caller hears whether it was posted);
    /// returns the place and how many messages it took.
    pub async fn notify(
        &self,
        notice: &Notice,
        once: &str,
    ) -> Result<(Target, usize), NoticeError> {
        let target = notice
            .target
            .clone()
            .unwrap_or_else(|| self.inner.defaults.target.clone());
        let kind = target.place.channel();
        let channel = self
            .inner
            .channel(kind)
            .ok_or(NoticeError::NoChannel(kind.as_str()))?;
        let posted = channel.notify(notice, &target, once).await?;
        tracing::info!(target = %target, messages = posted, "notice posted");
        Ok((target, posted))
    }

    /// Records a platform message an ask was posted as (a channel calls
    /// this from `deliver`), so clicks and replies after a restart find it.
    pub async fn save_message_ref(&self, message: &MessageRef) -> Result<(), BridgeError> {
        let at = record::millis(self.inner.clock.now());
        Ok(self.inner.store.save_message_ref(message, at).await?)
    }

    /// The secret `name` (two random UUIDs as hex: 244 random bits), made
    /// the first time any instance on this database asks for it and the
    /// same ever after.
    pub async fn secret(&self, name: &str) -> Result<String, BridgeError> {
        let candidate = format!(
            "{}{}",
            uuid::Uuid::new_v4().simple(),
            uuid::Uuid::new_v4().simple()
        );
        Ok(self.inner.store.secret(name, &candidate).await?)
    }

    /// The messages an ask was posted as, oldest first.
    pub async fn message_refs(&self, ask_id: &str) -> Result<Vec<MessageRef>, BridgeError> {
        Ok(self.inner.store.message_refs(ask_id).await?)
    }

    /// Pending asks posted to `place` (for anyone there or for one
    /// person), newest first, with their targets: where a typed message
    /// that replies to nothing goes.
    pub async fn pending_at(&self, place: &Place) -> Result<Vec<(String, Target)>, BridgeError> {
        let place = Target {
            place: place.clone(),
            user: None,
        }
        .to_string();
        let rows = self
            .inner
            .store
            .pending_at(&place, PENDING_PER_PLACE)
            .await?;
        Ok(rows
            .into_iter()
            .filter_map(|(id, target)| match Target::parse(&target) {
                Ok(target) => Some((id, target)),
                Err(error) => {
                    tracing::error!(ask_id = %id, error = %error, "unreadable target left out");
                    None
                }
            })
            .collect())
    }

    /// The number of reminders this instance finished — posted in every
    /// place they went to and recorded — as it changes.
    pub fn reminders_done(&self) -> watch::Receiver<u64> {
        self.inner.reminders_done.subscribe()
    }

    /// How many reminders of the ask were sent (by any instance).
    pub async fn reminders_sent(&self, id: &str) -> Result<u32, BridgeError> {
        let row = self
            .inner
            .store
            .load_ask(id)
            .await?
            .ok_or_else(|| BridgeError::NotFound(id.to_owned()))?;
        Ok(u32::try_from(row.reminded).unwrap_or(u32::MAX))
    }

    /// The places of a pending ask whose delivery this instance gave up
    /// (numbers in [`AskView::places`] order); empty for an ask not in
    /// memory.
    pub fn failed_places(&self, id: &str) -> Vec<usize> {
        self.inner.lookup(id).map_or_else(Vec::new, |entry| {
            entry
                .spots
                .iter()
                .enumerate()
                .filter(|(_, spot)| spot.delivery.load(Ordering::Acquire) == NOT_DELIVERED)
                .map(|(place, _)| place)
                .collect()
        })
    }

    /// A handle that does not keep the bridge alive (for channels, which
    /// the bridge itself holds).
    pub fn downgrade(&self) -> WeakBridge {
        WeakBridge(Arc::downgrade(&self.inner))
    }

    /// Like [`find_message_ref`](Self::find_message_ref), but when the
    /// message is not on record while this process is posting asks, looks
    /// again as each of those deliveries finishes (for at most
    /// [`POSTING_SETTLES_WITHIN`]): a person can reply to a question in the
    /// moment between the platform taking it and askbridge recording it.
    pub async fn find_message_ref_posted(
        &self,
        channel: ChannelKind,
        conversation: &str,
        message_id: &str,
    ) -> Result<Option<MessageRef>, BridgeError> {
        self.once_posted(
            || self.find_message_ref(channel, conversation, message_id),
            Option::is_some,
        )
        .await
    }

    /// Like [`message_refs`](Self::message_refs), but while none is on
    /// record and this process is posting asks, looks again as each of
    /// those deliveries finishes (for at most [`POSTING_SETTLES_WITHIN`]).
    pub async fn message_refs_posted(&self, ask_id: &str) -> Result<Vec<MessageRef>, BridgeError> {
        self.once_posted(|| self.message_refs(ask_id), |refs| !refs.is_empty())
            .await
    }

    /// What `read` reads once `found` says so, or once no delivery is in
    /// flight in this process, or when [`POSTING_SETTLES_WITHIN`] has
    /// passed: read again as each delivery finishes ([`read_settled`]).
    async fn once_posted<T, F>(
        &self,
        read: impl FnMut() -> F,
        found: impl Fn(&T) -> bool,
    ) -> Result<T, BridgeError>
    where
        F: Future<Output = Result<T, BridgeError>>,
    {
        read_settled(
            &self.inner.delivering,
            &self.inner.deliveries_done,
            POSTING_SETTLES_WITHIN,
            read,
            found,
        )
        .await
    }

    /// The first message of thread `key` in a conversation, if posted.
    pub async fn thread_root(
        &self,
        channel: ChannelKind,
        conversation: &str,
        key: &str,
    ) -> Result<Option<String>, BridgeError> {
        Ok(self
            .inner
            .store
            .thread_root(channel, conversation, key)
            .await?)
    }

    /// Records `message_id` as the first message of thread `key` in a
    /// conversation unless another instance recorded one first; returns
    /// the one on record.
    pub async fn save_thread_root(
        &self,
        channel: ChannelKind,
        conversation: &str,
        key: &str,
        message_id: &str,
    ) -> Result<String, BridgeError> {
        let at = record::millis(self.inner.clock.now());
        Ok(self
            .inner
            .store
            .save_thread_root(channel, conversation, key, message_id, at)
            .await?)
    }

    /// A value channel `channel` keeps under `key`, if it set one.
    pub async fn channel_value(
        &self,
        channel: ChannelKind,
        key: &str,
    ) -> Result<Option<String>, BridgeError> {
        Ok(self.inner.store.channel_value(channel, key).await?)
    }

    /// Sets channel `channel`'s value under `key`; every instance reads it.
    pub async fn set_channel_value(
        &self,
        channel: ChannelKind,
        key: &str,
        value: &str,
    ) -> Result<(), BridgeError> {
        let at = record::millis(self.inner.clock.now());
        Ok(self
            .inner
            .store
            .set_channel_value(channel, key, value, at)
            .await?)
    }

    /// Sets channel `channel`'s value under `key` unless one is set (on
    /// any instance: the first write wins); returns the value that stands.
    pub async fn first_channel_value(
        &self,
        channel: ChannelKind,
        key: &str,
        value: &str,
    ) -> Result<String, BridgeError> {
        let at = record::millis(self.inner.clock.now());
        Ok(self
            .inner
            .store
            .first_channel_value(channel, key, value, at)
            .await?)
    }

    /// The key of the thread whose first message this is, if it is one.
    pub async fn thread_of(
        &self,
        channel: ChannelKind,
        conversation: &str,
        message_id: &str,
    ) -> Result<Option<String>, BridgeError> {
        Ok(self
            .inner
            .store
            .thread_of(channel, conversation, message_id)
            .await?)
    }

    /// Pending asks of thread `key`, newest first (at most 50).
    pub async fn pending_in_thread(&self, key: &str) -> Result<Vec<String>, BridgeError> {
        Ok(self
            .inner
            .store
            .pending_in_thread(key, PENDING_PER_PLACE)
            .await?)
    }

    /// The ask a platform message belongs to, if askbridge posted it.
    pub async fn find_message_ref(
        &self,
        channel: ChannelKind,
        conversation: &str,
        message_id: &str,
    ) -> Result<Option<MessageRef>, BridgeError> {
        Ok(self
            .inner
            .store
            .find_message_ref(channel, conversation, message_id)
            .await?)
    }
}

impl Inner {
    /// The view of a lifecycle.
    fn view(&self, lifecycle: &AskLifecycle) -> AskView {
        AskView {
            id: lifecycle.id().to_owned(),
            ask: lifecycle.ask().clone(),
            target: lifecycle
                .ask()
                .target
                .clone()
                .unwrap_or_else(|| self.defaults.target.clone()),
            created_at: lifecycle.created_at(),
            deadline: lifecycle.deadline(),
            state: lifecycle.state().clone(),
            answers: lifecycle.answers().to_vec(),
            outcome: lifecycle.outcome(),
            late: lifecycle.late_outcome(),
        }
    }

    /// The view of a slot whose lifecycle is loaded.
    fn slot_view(&self, slot: &Slot) -> Result<AskView, BridgeError> {
        slot.lifecycle
            .as_deref()
            .map(|lifecycle| self.view(lifecycle))
            .ok_or_else(not_loaded)
    }

    /// Sends an event if anyone listens (building it only then).
    /// Writes a delivery of `event` to the ask's `callbackUrl`, when it
    /// asked for that event, and wakes the sender. A failure to write is
    /// logged: the event is not sent, the ask goes on.
    async fn call_back(self: &Arc<Self>, id: &str, ask: &Ask, event: CallbackEvent) {
        let Some(callback) = ask.callback.as_ref().filter(|_| ask.calls_back(event)) else {
            return;
        };
        let now = record::millis(self.clock.now());
        let mut row = crate::store::WebhookRow::new(id, event.as_str(), &callback.url, now, now);
        if let Some(check) = self.callbacks.get() {
            let bridge = Bridge {
                inner: Arc::clone(self),
            };
            row.body = check.body(&bridge, id, event, &row.id).await;
        }
        match self.store.insert_webhook(&row).await {
            Ok(()) => self.webhook_wake.notify_one(),
            Err(error) => {
                tracing::warn!(ask_id = %id, event = event.as_str(), error = %error, "could not record a webhook event; it is not sent");
            }
        }
    }

    fn emit(&self, event: impl FnOnce() -> BridgeEvent) {
        if self.events.receiver_count() > 0 {
            // An error means every receiver went away meanwhile.
            let _ = self.events.send(event());
        }
    }

    fn count_end(&self, state: &State, by: u64) {
        if let Some(index) = ENDED.iter().position(|name| *name == state.as_str()) {
            self.ended[index].fetch_add(by, Ordering::Relaxed);
        }
    }

    fn channel(&self, kind: ChannelKind) -> Option<Arc<dyn Channel>> {
        self.channels
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .get(&kind)
            .cloned()
    }

    /// The lease an instance must hold to post to `kind`'s channel, if it
    /// needs one ([`Channel::lease`]).
    fn lease_of(&self, kind: ChannelKind) -> Option<&'static str> {
        self.channel(kind).and_then(|channel| channel.lease())
    }

    /// Whether this instance holds the lease `name` now.
    fn holds(&self, name: &str) -> bool {
        lock(&self.owned).contains(name)
    }

    /// Whether this instance posts to `kind`'s channel: any instance
    /// does, but for a channel that needs a lease only its holder.
    fn posts_here(&self, kind: ChannelKind) -> bool {
        self.lease_of(kind).is_none_or(|lease| self.holds(lease))
    }

    /// Queues an operation (`op` makes one each time) for every place of
    /// the ask whose channel `here` says.
    fn enqueue_everywhere(
        self: &Arc<Self>,
        entry: &Arc<Entry>,
        here: impl Fn(ChannelKind) -> bool,
        op: impl Fn() -> Op,
    ) {
        for (place, spot) in entry.spots.iter().enumerate() {
            if here(spot.kind) {
                outbox::enqueue(self, entry, place, op());
            }
        }
    }

    /// Whether this instance holds the lease `kind`'s channel needs, and
    /// so updates and closes its asks wherever they changed.
    fn holds_lease_of(&self, kind: ChannelKind) -> bool {
        self.lease_of(kind).is_some_and(|lease| self.holds(lease))
    }

    /// Applies a change under the ask's lock: decide with the core, store
    /// with a compare-and-set, and only then commit in memory and tell
    /// waiters, subscribers and the channel. When another process changed
    /// the ask first, reload it and decide again.
    async fn apply(
        self: &Arc<Self>,
        entry: &Arc<Entry>,
        change: Change,
    ) -> Result<(Option<Step>, AskView), BridgeError> {
        let id = &entry.id.to_string();
        let mut slot = entry.slot.lock().await;
        if slot.lifecycle.is_none() {
            self.reload_entry(entry, &mut slot).await?;
        }
        let mut attempts = 0;
        loop {
            let current = slot.lifecycle.as_deref().ok_or_else(not_loaded)?;
            let now = self.clock.now();
            let mut next = current.clone();
            let step = match &change {
                Change::Input(input) => Some(next.handle(input.clone(), now)),
                Change::Tick => next.tick(now).map(Step::Finished),
            };
            let changed = !slot.ended
                && (next.state() != current.state() || next.answers() != current.answers());
            if !changed {
                if let Some(Step::Rejected(rejection)) = &step {
                    tracing::debug!(ask_id = %id, rejection = ?rejection, "input rejected");
                }
                let view = self.view(&next);
                self.evict_if_full(&mut slot);
                return Ok((step, view));
            }
            let state_json = record::state_json(id, next.state())?;
            let answers_json = record::answers_json(id, next.answers())?;
            let stored = self
                .store
                .compare_and_set(&StateChange {
                    id,
                    expected_version: slot.version,
                    state: next.state().as_str(),
                    state_json: &state_json,
                    answers_json: &answers_json,
                    updated_at: record::millis(now),
                })
                .await?;
            if stored {
                let view = self.committed(entry, &mut slot, next, step.as_ref());
                return Ok((step, view));
            }
            attempts += 1;
            if attempts >= CAS_ATTEMPTS {
                return Err(BridgeError::Contended(id.to_owned()));
            }
            tracing::debug!(ask_id = %id, "another process changed the ask first; reloading");
            self.reload_entry(entry, &mut slot).await?;
        }
    }

    /// After a stored change: puts the new lifecycle in the slot, ends or
    /// progresses in memory, then tells waiters, subscribers and the
    /// channel.
    fn committed(
        self: &Arc<Self>,
        entry: &Arc<Entry>,
        slot: &mut Slot,
        lifecycle: AskLifecycle,
        step: Option<&Step>,
    ) -> AskView {
        let id = &entry.id.to_string();
        let view = self.view(&lifecycle);
        let state = lifecycle.state().clone();
        slot.lifecycle = Some(Box::new(lifecycle));
        slot.version += 1;
        match step {
            Some(Step::Finished(_)) => {
                self.end_slot(entry, slot, true);
                self.count_end(&state, 1);
                log_end(id, &state);
                self.emit(|| BridgeEvent::Ended(Arc::new(view.clone())));
                if !matches!(state, State::DeliveryFailed { .. }) {
                    self.enqueue_everywhere(
                        entry,
                        |kind| self.posts_here(kind),
                        || Op::End(Arc::new(view.clone())),
                    );
                }
            }
            Some(Step::Progress(progress)) => {
                tracing::debug!(
                    ask_id = %id,
                    answered = ?progress.answered,
                    still_open = ?progress.still_open,
                    "ask took answers"
                );
                self.emit(|| BridgeEvent::Updated(Arc::new(view.clone())));
                self.enqueue_everywhere(
                    entry,
                    |kind| self.posts_here(kind),
                    || Op::Update(Arc::new(view.clone())),
                );
                self.evict_if_full(slot);
            }
            Some(Step::Rejected(_)) | None => self.evict_if_full(slot),
        }
        view
    }

    /// Makes sure the slot holds the stored state: loads the lifecycle if
    /// it is not in memory, else checks the version.
    async fn fresh(
        self: &Arc<Self>,
        entry: &Arc<Entry>,
        slot: &mut Slot,
    ) -> Result<(), BridgeError> {
        if slot.lifecycle.is_none() {
            self.reload_entry(entry, slot).await
        } else {
            self.refresh(entry, slot).await
        }
    }

    /// Checks the stored version; reloads the ask if another process
    /// changed it.
    async fn refresh(
        self: &Arc<Self>,
        entry: &Arc<Entry>,
        slot: &mut Slot,
    ) -> Result<(), BridgeError> {
        if slot.ended {
            return Ok(());
        }
        match self.store.load_version(&entry.id.to_string()).await? {
            Some(version) if version == slot.version => Ok(()),
            Some(_) => {
                self.reload_entry(entry, slot).await?;
                self.evict_if_full(slot);
                Ok(())
            }
            None => Err(BridgeError::NotFound(entry.id.to_string())),
        }
    }
}

fn not_loaded() -> BridgeError {
    BridgeError::NotLoaded
}

impl Drop for Inner {
    fn drop(&mut self) {
        // Lets the background tasks see that the bridge is gone.
        self.timer_wake.notify_one();
        self.remind_wake.notify_one();
        self.delivered_wake.notify_one();
    }
}

impl std::fmt::Debug for Inner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Inner")
            .field("store", &self.store)
            .field("defaults", &self.defaults)
            .field("clock", &self.clock)
            .field("pending", &lock(&self.asks).len())
            .finish_non_exhaustive()
    }
}

fn log_end(id: &str, state: &State) {
    match state {
        State::Answered { by, .. } => tracing::info!(
            ask_id = %id,
            state = state.as_str(),
            channel = by.channel.as_str(),
            user_id = %by.user_id,
            "ask answered"
        ),
        State::TimedOut => tracing::info!(ask_id = %id, state = state.as_str(), "ask timed out"),
        State::DeliveryFailed { reason, .. } => tracing::warn!(
            ask_id = %id,
            state = state.as_str(),
            reason = %reason,
            "ask ended: delivery failed"
        ),
        _ => tracing::info!(ask_id = %id, state = state.as_str(), "ask ended"),
    }
}

/// What `read` reads once `found` says so, or once no delivery is in
/// flight (`delivering`), or when `within` has passed: read again as each
/// delivery finishes (`done` counts them).
///
/// The deliveries in flight are counted before reading, not after: one
/// that records its message and finishes while `read` runs leaves the
/// count at 0 and the read without the message, and that read is not the
/// last word.
async fn read_settled<T, F>(
    delivering: &AtomicUsize,
    done: &watch::Sender<u64>,
    within: Duration,
    mut read: impl FnMut() -> F,
    found: impl Fn(&T) -> bool,
) -> Result<T, BridgeError>
where
    F: Future<Output = Result<T, BridgeError>>,
{
    let mut finished = done.subscribe();
    let deadline = tokio::time::Instant::now() + within;
    loop {
        let in_flight = delivering.load(Ordering::Acquire);
        let value = read().await?;
        if found(&value) || in_flight == 0 {
            return Ok(value);
        }
        tracing::debug!(
            in_flight,
            "not on record while asks are being posted; reading again as each delivery finishes"
        );
        if !matches!(
            tokio::time::timeout_at(deadline, finished.changed()).await,
            Ok(Ok(()))
        ) {
            tracing::debug!(
                within_ms = u64::try_from(within.as_millis()).unwrap_or(u64::MAX),
                "not on record, and the deliveries in flight did not settle in time"
            );
            return Ok(value);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_caller_can_tell_a_retryable_failure_from_a_refusal() {
        let lost = StoreError::Database(sqlx::Error::Io(std::io::Error::from(
            std::io::ErrorKind::ConnectionReset,
        )));
        let corrupt = StoreError::Corrupt {
            id: "ask_1".to_owned(),
            problem: "bad".to_owned(),
        };
        assert!(BridgeError::from(lost).is_retryable());
        assert!(BridgeError::from(StoreError::Database(sqlx::Error::PoolTimedOut)).is_retryable());
        assert!(BridgeError::Contended("ask_1".to_owned()).is_retryable());
        assert!(!BridgeError::from(corrupt).is_retryable());
        assert!(!BridgeError::NotFound("ask_1".to_owned()).is_retryable());
        assert!(!BridgeError::IdempotencyConflict("k".to_owned()).is_retryable());
        assert!(!BridgeError::NotLoaded.is_retryable());
    }

    /// A read of message refs: `None` until `recorded` is set.
    fn read_of(
        recorded: &std::sync::atomic::AtomicBool,
        reads: &AtomicUsize,
    ) -> std::future::Ready<Result<Option<&'static str>, BridgeError>> {
        reads.fetch_add(1, Ordering::SeqCst);
        std::future::ready(Ok(recorded.load(Ordering::SeqCst).then_some("the message")))
    }

    #[tokio::test(start_paused = true)]
    async fn a_reply_read_while_the_delivery_finishes_is_read_again() {
        use std::sync::atomic::AtomicBool;
        let delivering = AtomicUsize::new(1);
        let done = watch::Sender::new(0);
        let recorded = AtomicBool::new(false);
        let reads = AtomicUsize::new(0);
        // The delivery records its message and finishes while the first
        // read runs (after it looked): the count is 0 when it returns.
        let found = read_settled(
            &delivering,
            &done,
            POSTING_SETTLES_WITHIN,
            || {
                let read = read_of(&recorded, &reads);
                if reads.load(Ordering::SeqCst) == 1 {
                    recorded.store(true, Ordering::SeqCst);
                    delivering.fetch_sub(1, Ordering::SeqCst);
                    done.send_modify(|done| *done += 1);
                }
                read
            },
            Option::is_some,
        )
        .await
        .expect("a read");
        assert_eq!(found, Some("the message"));
        assert_eq!(reads.load(Ordering::SeqCst), 2);
    }

    #[tokio::test(start_paused = true)]
    async fn nothing_posting_means_one_read_and_a_delivery_that_hangs_is_waited_for_a_while() {
        use std::sync::atomic::AtomicBool;
        let done = watch::Sender::new(0);
        let recorded = AtomicBool::new(false);
        let reads = AtomicUsize::new(0);
        let idle = AtomicUsize::new(0);
        let read = || read_of(&recorded, &reads);
        let none = read_settled(&idle, &done, POSTING_SETTLES_WITHIN, read, Option::is_some);
        assert_eq!(none.await.expect("a read"), None);
        assert_eq!(reads.load(Ordering::SeqCst), 1);

        let hanging = AtomicUsize::new(1);
        let started = tokio::time::Instant::now();
        let read = || read_of(&recorded, &reads);
        let none = read_settled(
            &hanging,
            &done,
            POSTING_SETTLES_WITHIN,
            read,
            Option::is_some,
        );
        assert_eq!(none.await.expect("a read"), None);
        assert_eq!(started.elapsed(), POSTING_SETTLES_WITHIN);
    }
}

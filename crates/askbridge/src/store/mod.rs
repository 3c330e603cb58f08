//! Durable storage of asks: one contract, [`Store`], with two backends.
//!
//! - [`SqliteStore`] (the embedded default, `sqlite://…`): one instance.
//! - [`PostgresStore`] (`postgres://…`): several instances on one database,
//!   which hear each other's changes through `LISTEN/NOTIFY`
//!   ([`Store::listen`]).
//!
//! The store knows rows, not lifecycles: an [`AskRow`] is the `asks` table
//! as text and numbers, a [`MessageRef`] one posted platform message. What
//! the JSON columns mean is [`crate::wire::stored`]'s and
//! [`crate::wire::ask`]'s business; what a change means is
//! [`crate::bridge`]'s. The store guarantees only that a change lands
//! whole, that [`Store::compare_and_set`] changes a row only at the
//! version the caller last saw, that an idempotency key is unique, and
//! that a lease has one holder at a time.
//!
//! Both backends run the same SQL (`$n` placeholders, `TEXT`/`BIGINT`,
//! `ON CONFLICT`, `RETURNING`), written once (the `sql` module); each backend adds
//! only how it connects, its migrations (`crates/askbridge/migrations/
//! sqlite` and `…/postgres`, embedded at build time) and, for Postgres,
//! the change feed. One test suite (`tests/bridge.rs`) runs against both.

// First: the other modules use its macros.
#[macro_use]
mod sql;
mod postgres;
mod sqlite;

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;

use askbridge_core::model::ChannelKind;
use futures_util::stream::BoxStream;
use sqlx::migrate::Migrator;

use crate::wire::api::Database;
use crate::wire::stored::StoredChannel;

pub use postgres::PostgresStore;
pub use sqlite::SqliteStore;

/// Why a storage call failed.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The database URL names a backend this build cannot open.
    #[error("unsupported database url {0:?}: expected sqlite://… or postgres://…")]
    UnsupportedUrl(String),
    /// The database refused or failed a statement.
    #[error("database error")]
    Database(#[from] sqlx::Error),
    /// Bringing the schema up to date failed.
    #[error("database migration failed")]
    Migrate(#[from] sqlx::migrate::MigrateError),
    /// A stored row does not read back.
    #[error("stored ask {id:?} is unreadable: {problem}")]
    Corrupt {
        /// The row's id.
        id: String,
        /// What is wrong with it.
        problem: String,
    },
}

impl StoreError {
    /// Whether the database had no room to write: its disk (or quota) is
    /// full (SQLite's `SQLITE_FULL`, Postgres's `disk_full`, 53100). It is
    /// [transient](StoreError::is_transient): writes go on once there is
    /// room.
    pub fn is_full(&self) -> bool {
        matches!(self, StoreError::Database(error) if sql::is_full(error))
    }

    /// Whether the database was unreachable or busy (the connection went
    /// away, no connection was free in time, SQLite's file was locked):
    /// trying again later may succeed. A refused statement, a failed
    /// migration or an unreadable row will fail again.
    pub fn is_transient(&self) -> bool {
        match self {
            StoreError::Database(error) => sql::is_transient(error),
            StoreError::UnsupportedUrl(_) | StoreError::Migrate(_) | StoreError::Corrupt { .. } => {
                false
            }
        }
    }
}

/// One row of the `asks` table, as stored.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct AskRow {
    /// `ask_…`.
    pub id: String,
    /// The canonical ask JSON, target filled in.
    pub ask_json: String,
    /// The target, in its string form.
    pub target: String,
    /// The target's channel name (`web`, `telegram`, …).
    pub channel: String,
    /// The state's name (`pending`, `answered`, …).
    pub state: String,
    /// The state with its details ([`crate::wire::stored::StoredState`]).
    pub state_json: String,
    /// The answers so far ([`crate::wire::stored::StoredAnswers`]).
    pub answers_json: String,
    /// Creation time, milliseconds since the epoch.
    pub created_at: i64,
    /// Deadline, milliseconds since the epoch.
    pub deadline: i64,
    /// Bumped by every change.
    pub version: i64,
    /// The caller's idempotency key.
    pub idempotency_key: Option<String>,
    /// When a channel took the ask; `None` until then.
    pub delivered_at: Option<i64>,
    /// Last change, milliseconds since the epoch.
    pub updated_at: i64,
    /// The instance that delivers the ask.
    pub delivery_owner: Option<String>,
    /// When the next reminder is due, milliseconds since the epoch; `None`:
    /// no more.
    pub remind_at: Option<i64>,
    /// Reminders sent so far.
    pub reminded: i64,
    /// The ask's thread key, if it has a thread: written with the row
    /// (for [`Store::pending_in_thread`]), not read back with it (the ask
    /// JSON has it).
    #[sqlx(skip)]
    pub thread_key: Option<String>,
    /// The places after the first (`target`), for an ask posted to several
    /// at once: written with the row (the `ask_places` table), not read
    /// back with it (the ask JSON has them).
    #[sqlx(skip)]
    pub further_places: Vec<PlaceRow>,
    /// The ask's `ask.ended` webhook delivery, when it has a
    /// `callbackUrl`: written with the row (the `webhook_deliveries`
    /// table), due at the ask's deadline, or sooner once told the ask
    /// ended ([`Store::webhook_ended`]), and sent only once it has.
    #[sqlx(skip)]
    pub webhook: Option<WebhookRow>,
}

/// One webhook delivery (the `webhook_deliveries` table).
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct WebhookRow {
    /// `whd_…`: the receiver's idempotency key.
    pub id: String,
    /// The ask it is about.
    pub ask_id: String,
    /// `ask.ended`, `ask.posted`, …
    pub event: String,
    /// Where it goes.
    pub url: String,
    /// The JSON sent, fixed by the first attempt.
    pub body: Option<String>,
    /// `pending`, `delivered`, `failed`, `gone`.
    pub state: String,
    /// Attempts begun so far.
    pub attempts: i64,
    /// No attempt before this, milliseconds since the epoch.
    pub due_at: i64,
    /// When the first attempt began.
    pub first_attempt_at: Option<i64>,
    /// The receiver's last HTTP status, if it answered.
    pub last_status: Option<i64>,
    /// What went wrong last, if anything did.
    pub last_error: Option<String>,
    /// When it was delivered.
    pub delivered_at: Option<i64>,
    /// When it was made.
    pub created_at: i64,
    /// Its last change.
    pub updated_at: i64,
}

impl WebhookRow {
    /// A new pending delivery of `event` to `url`, due from `due_at`.
    pub fn new(ask_id: &str, event: &str, url: &str, due_at: i64, at: i64) -> WebhookRow {
        WebhookRow {
            id: format!("whd_{}", uuid::Uuid::new_v4().simple()),
            ask_id: ask_id.to_owned(),
            event: event.to_owned(),
            url: url.to_owned(),
            body: None,
            state: "pending".to_owned(),
            attempts: 0,
            due_at,
            first_attempt_at: None,
            last_status: None,
            last_error: None,
            delivered_at: None,
            created_at: at,
            updated_at: at,
        }
    }
}

/// How a webhook attempt ended ([`Store::finish_webhook`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WebhookAttempt<'a> {
    /// The delivery.
    pub id: &'a str,
    /// Its attempts when this one was claimed (this one included).
    pub attempts: i64,
    /// `pending` (to be tried again at `due_at`), `delivered`, `failed`,
    /// `gone`.
    pub state: &'a str,
    /// The next attempt's time, when `pending`.
    pub due_at: i64,
    /// The receiver's HTTP status, if it answered.
    pub status: Option<i64>,
    /// What went wrong, if anything did.
    pub error: Option<&'a str>,
    /// When this attempt ended.
    pub at: i64,
}

/// A pending ask's further place as a reload reads it: `(ask id,
/// channel, due_at)`.
pub type FurtherPlace = (String, String, Option<i64>);

/// One further place of an ask ([`AskRow::further_places`]).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct PlaceRow {
    /// The target, in its string form.
    pub target: String,
    /// Its channel's name.
    pub channel: String,
    /// When it is posted (an escalation step), milliseconds since the
    /// epoch; `None`: at once.
    pub due_at: Option<i64>,
}

/// What [`Store::insert_ask`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Inserted {
    /// The row was written.
    New,
    /// A row with the same idempotency key already exists; nothing was
    /// written. The existing row is returned.
    Existing(Box<AskRow>),
}

/// A state change for [`Store::compare_and_set`].
#[derive(Debug, Clone, Copy)]
pub struct StateChange<'a> {
    /// The ask.
    pub id: &'a str,
    /// The version the caller's change is based on; the row becomes
    /// `expected_version + 1`.
    pub expected_version: i64,
    /// The new state's name.
    pub state: &'a str,
    /// The new state with its details.
    pub state_json: &'a str,
    /// The new answers.
    pub answers_json: &'a str,
    /// When, milliseconds since the epoch.
    pub updated_at: i64,
}

/// An ask that [`Store::time_out_expired`] ended.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct ExpiredAsk {
    /// The ask.
    pub id: String,
    /// Its channel's name.
    pub channel: String,
    /// When it was delivered, if it was.
    pub delivered_at: Option<i64>,
}

/// A pending ask as [`Store::pending`] lists it.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct PendingAsk {
    /// The ask.
    pub id: String,
    /// Its channel's name.
    pub channel: String,
    /// Its deadline, milliseconds since the epoch.
    pub deadline: i64,
    /// Its version.
    pub version: i64,
    /// When it was delivered, if it was.
    pub delivered_at: Option<i64>,
}

/// Which asks [`Store::list`] returns.
#[derive(Debug, Clone, Copy, Default)]
pub struct ListQuery<'a> {
    /// Only pending asks.
    pub pending_only: bool,
    /// Only asks posted on this channel (its name), in any of their
    /// places.
    pub channel: Option<&'a str>,
    /// At most this many.
    pub limit: Option<i64>,
}

/// A platform message an ask was posted as, so a later click, reply or
/// edit finds its ask (and survives a restart).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MessageRef {
    /// The ask.
    pub ask_id: String,
    /// The channel the message is on.
    pub channel: ChannelKind,
    /// The chat, channel or DM (with its thread, if any), in the channel's
    /// own notation.
    pub conversation: String,
    /// The platform's message id.
    pub message_id: String,
    /// Anything else the channel needs later (JSON, by convention).
    pub extra: Option<String>,
}

#[derive(sqlx::FromRow)]
struct MessageRefRow {
    ask_id: String,
    channel: String,
    conversation: String,
    message_id: String,
    extra: Option<String>,
}

impl TryFrom<MessageRefRow> for MessageRef {
    type Error = StoreError;

    fn try_from(row: MessageRefRow) -> Result<MessageRef, StoreError> {
        let channel = StoredChannel::parse(&row.channel).ok_or_else(|| StoreError::Corrupt {
            id: row.ask_id.clone(),
            problem: format!("message ref on unknown channel {:?}", row.channel),
        })?;
        Ok(MessageRef {
            ask_id: row.ask_id,
            channel: channel.into(),
            conversation: row.conversation,
            message_id: row.message_id,
            extra: row.extra,
        })
    }
}

/// Which backend a store is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    /// SQLite: embedded, one instance.
    Sqlite,
    /// PostgreSQL: several instances may share it.
    Postgres,
}

/// The health check's name for a backend (`GET /healthz`'s `database`).
impl From<Backend> for Database {
    fn from(backend: Backend) -> Database {
        match backend {
            Backend::Sqlite => Database::Sqlite,
            Backend::Postgres => Database::Postgres,
        }
    }
}

/// What [`Store::take_lease`] found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LeaseTaken {
    /// Someone else holds it and it has not run out.
    No,
    /// The caller holds it (it did already, or it was free).
    Held,
    /// The caller holds it now, taken over from a holder whose lease ran out.
    TakenOver,
}

impl LeaseTaken {
    /// Whether the caller holds the lease now.
    pub fn held(self) -> bool {
        self != LeaseTaken::No
    }
}

/// A change another instance (or this one) made, as the change feed
/// announces it. Only a wake-up: read the row for the truth.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Announcement {
    /// The ask is new or changed; `version` is the row's version after it.
    Changed {
        /// The ask.
        id: String,
        /// Its version after the change.
        version: i64,
        /// The instance that delivers it, if recorded.
        delivery_owner: Option<String>,
    },
    /// The feed was interrupted (and has reconnected): changes may have
    /// been missed, so re-read what matters.
    Missed,
}

/// The storage contract every backend keeps. Each method is one
/// statement (or one short read after it); none holds a transaction open
/// across calls.
#[async_trait::async_trait]
pub trait Store: Send + Sync + std::fmt::Debug {
    /// Which backend this is.
    fn backend(&self) -> Backend;

    /// Writes a new ask, and its further places with it. With an
    /// idempotency key already stored, writes nothing and returns the row
    /// that has it.
    async fn insert_ask(&self, row: &AskRow) -> Result<Inserted, StoreError>;

    /// The ask with this id.
    async fn load_ask(&self, id: &str) -> Result<Option<AskRow>, StoreError>;

    /// The ask's current version, without reading the rest of the row.
    async fn load_version(&self, id: &str) -> Result<Option<i64>, StoreError>;

    /// Changes an ask's state and answers if, and only if, it is still at
    /// `expected_version`; returns whether it did. `false` means someone
    /// else changed it first: reload and decide again.
    async fn compare_and_set(&self, change: &StateChange<'_>) -> Result<bool, StoreError>;

    /// Notes that channels took these asks (first time only). Not a state
    /// change: versions stay.
    async fn mark_delivered(&self, ids: &[&str], at: i64) -> Result<(), StoreError>;

    /// Ends, in one statement, every pending ask whose deadline is at or
    /// before `now`, writing `state_json` (the stored `timed_out` state),
    /// and returns them. Only pending rows change, so it is safe against
    /// any concurrent compare-and-set, on any instance.
    async fn time_out_expired(
        &self,
        now: i64,
        state_json: &str,
    ) -> Result<Vec<ExpiredAsk>, StoreError>;

    /// What the bridge keeps in memory of every pending ask (not the ask
    /// itself), earliest deadline first, as a stream.
    fn pending(&self) -> BoxStream<'_, Result<PendingAsk, StoreError>>;

    /// The earliest time a pending ask's next reminder is due.
    async fn next_reminder_at(&self) -> Result<Option<i64>, StoreError>;

    /// Pending asks whose next reminder is due at `now`, earliest first,
    /// at most `limit`: `(ask id, reminders claimed, reminders done)`. A
    /// claimed one not done is due again when its instance did not finish
    /// it in time.
    async fn due_reminders(
        &self,
        now: i64,
        limit: i64,
    ) -> Result<Vec<(String, i64, i64)>, StoreError>;

    /// Claims reminder number `sent` (from 0) of a pending ask whose
    /// earlier ones are done, if no one did first: whether this caller did
    /// (and so sends it). It is due again at `redo_at` unless finished
    /// ([`Store::finish_reminder`]) first. The compare-and-set that makes
    /// each reminder go out once, whichever instances race for it.
    async fn claim_reminder(&self, id: &str, sent: i64, redo_at: i64) -> Result<bool, StoreError>;

    /// Takes over the last of `claimed` reminders, claimed but not done
    /// and due again at `now` (its instance died or gave up): whether this
    /// caller did (and so offers it again); due again at `redo_at`.
    async fn reclaim_reminder(
        &self,
        id: &str,
        claimed: i64,
        now: i64,
        redo_at: i64,
    ) -> Result<bool, StoreError>;

    /// Records the last of `claimed` reminders as posted wherever it went,
    /// and when the next is due (`None`: no more).
    async fn finish_reminder(
        &self,
        id: &str,
        claimed: i64,
        next_at: Option<i64>,
    ) -> Result<(), StoreError>;

    /// The further places of every pending ask that has some: `(ask id,
    /// channel, due_at)`, in each ask's place order.
    async fn pending_further_places(&self) -> Result<Vec<FurtherPlace>, StoreError>;

    /// Asks matching the query, newest first.
    async fn list(&self, query: ListQuery<'_>) -> Result<Vec<AskRow>, StoreError>;

    /// Records (or updates the `extra` of) a posted message.
    async fn save_message_ref(&self, message: &MessageRef, at: i64) -> Result<(), StoreError>;

    /// The messages an ask was posted as, oldest first.
    async fn message_refs(&self, ask_id: &str) -> Result<Vec<MessageRef>, StoreError>;

    /// Pending asks posted to `place` (a target without its user, such
    /// as `telegram:-100123/7`), as their first place or a further one,
    /// for anyone or for one user, newest first, at most `limit`: `(ask
    /// id, target)`.
    async fn pending_at(
        &self,
        place: &str,
        limit: i64,
    ) -> Result<Vec<(String, String)>, StoreError>;

    /// The ask a platform message belongs to (a reply to it, a click on
    /// it), if askbridge posted it.
    async fn find_message_ref(
        &self,
        channel: ChannelKind,
        conversation: &str,
        message_id: &str,
    ) -> Result<Option<MessageRef>, StoreError>;

    /// The first message of thread `key` in a conversation, if posted.
    async fn thread_root(
        &self,
        channel: ChannelKind,
        conversation: &str,
        key: &str,
    ) -> Result<Option<String>, StoreError>;

    /// Records `message_id` as the first message of thread `key` in a
    /// conversation unless one is recorded already; returns the one on
    /// record (of whoever recorded first).
    async fn save_thread_root(
        &self,
        channel: ChannelKind,
        conversation: &str,
        key: &str,
        message_id: &str,
        at: i64,
    ) -> Result<String, StoreError>;

    /// A value channel `channel` keeps under `key` (a Teams
    /// conversation's service URL), if it set one.
    async fn channel_value(
        &self,
        channel: ChannelKind,
        key: &str,
    ) -> Result<Option<String>, StoreError>;

    /// Sets channel `channel`'s value under `key` (the latest write wins).
    async fn set_channel_value(
        &self,
        channel: ChannelKind,
        key: &str,
        value: &str,
        at: i64,
    ) -> Result<(), StoreError>;

    /// Sets channel `channel`'s value under `key` unless it has one (the
    /// first write wins); returns the value that stands.
    async fn first_channel_value(
        &self,
        channel: ChannelKind,
        key: &str,
        value: &str,
        at: i64,
    ) -> Result<String, StoreError>;

    /// The key of the thread whose first message this is, if it is one.
    async fn thread_of(
        &self,
        channel: ChannelKind,
        conversation: &str,
        message_id: &str,
    ) -> Result<Option<String>, StoreError>;

    /// Pending asks of thread `key`, newest first, at most `limit`.
    async fn pending_in_thread(&self, key: &str, limit: i64) -> Result<Vec<String>, StoreError>;

    /// Takes or renews the lease `name` for `holder` until `expires_at`,
    /// if it is free, already the holder's, or ran out at or before `now`
    /// (all milliseconds since the epoch). One holder at a time, however
    /// many instances race for it.
    async fn take_lease(
        &self,
        name: &str,
        holder: &str,
        now: i64,
        expires_at: i64,
    ) -> Result<LeaseTaken, StoreError>;

    /// The secret `name`: `candidate` stored as it when there is none yet,
    /// else the one stored first. Every instance on the database gets the
    /// same one, and it outlives restarts.
    async fn secret(&self, name: &str, candidate: &str) -> Result<String, StoreError>;

    /// Gives the lease up if `holder` has it, so another may take it at
    /// once.
    async fn release_lease(&self, name: &str, holder: &str) -> Result<(), StoreError>;

    /// Makes `instance` the delivery owner of every pending, undelivered
    /// ask that has no owner or whose owner's `instance/<owner>` lease ran
    /// out at `now` (and, with `own`, those `instance` owns already), and
    /// returns their ids. Two instances claiming at once claim each ask
    /// once.
    async fn claim_deliveries(
        &self,
        instance: &str,
        now: i64,
        own: bool,
    ) -> Result<Vec<String>, StoreError>;

    /// Makes `instance` the delivery owner of the pending, undelivered
    /// asks posted to `channel` (only `only`, when given), whoever owned
    /// them, and returns their ids with those it owned already: for a
    /// channel only the holder of its lease posts to.
    async fn claim_channel_deliveries(
        &self,
        instance: &str,
        channel: &str,
        only: Option<&str>,
    ) -> Result<Vec<String>, StoreError>;

    /// Writes a new webhook delivery (an event's).
    async fn insert_webhook(&self, row: &WebhookRow) -> Result<(), StoreError>;

    /// Pending webhook deliveries due at `now`, earliest first, at most
    /// `limit`: an `ask.ended` one only once its ask has ended.
    async fn due_webhooks(&self, now: i64, limit: i64) -> Result<Vec<WebhookRow>, StoreError>;

    /// When the earliest pending webhook delivery is due, if any is (an
    /// `ask.ended` one of an ask still open: its deadline).
    async fn next_webhook_at(&self) -> Result<Option<i64>, StoreError>;

    /// Makes the `ask.ended` delivery of ask `ask_id` — or, with `None`,
    /// of every ask that has ended — due at `now` if it was not yet (it
    /// waits for the ask's deadline until told the ask ended).
    async fn webhook_ended(&self, ask_id: Option<&str>, now: i64) -> Result<(), StoreError>;

    /// Claims attempt `attempts + 1` of delivery `id` if nobody made it
    /// yet and it is due at `now`: no other attempt before `lease_until`.
    /// `body` is kept unless an earlier attempt kept one. Returns the body
    /// to send, or `None` when the attempt was not this caller's.
    async fn claim_webhook(
        &self,
        id: &str,
        attempts: i64,
        now: i64,
        lease_until: i64,
        body: &str,
    ) -> Result<Option<String>, StoreError>;

    /// Records how a claimed attempt ended; `false` when another attempt
    /// was claimed since (this one's lease ran out).
    async fn finish_webhook(&self, attempt: &WebhookAttempt<'_>) -> Result<bool, StoreError>;

    /// The webhook deliveries of ask `ask_id`, oldest first.
    async fn webhooks_of(&self, ask_id: &str) -> Result<Vec<WebhookRow>, StoreError>;

    /// A feed of changes made by any instance, for backends shared by
    /// several (`None` for SQLite: one instance, nothing to hear).
    async fn listen(&self) -> Result<Option<BoxStream<'static, Announcement>>, StoreError>;
}

/// What [`inspect`] found at a database URL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Inspection {
    /// A SQLite file that does not exist yet: the first start creates it.
    Missing(PathBuf),
    /// An in-memory SQLite database: made anew, empty, by every start.
    InMemory,
    /// An existing database and how its migrations compare with this
    /// build's.
    Migrations(Migrations),
}

/// How the migrations recorded in a database compare with the ones this
/// build carries. The database is current when [`Migrations::is_current`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Migrations {
    /// Which backend it is.
    pub backend: Backend,
    /// How many of this build's migrations it has.
    pub applied: usize,
    /// This build's migrations it does not have yet: `(version,
    /// description)`, oldest first. `serve` would apply them.
    pub pending: Vec<(i64, String)>,
    /// Versions it has that this build does not know: a newer askbridge
    /// migrated it. `serve` would refuse to start.
    pub unknown: Vec<i64>,
    /// Versions whose recorded checksum differs from this build's file.
    /// `serve` would refuse to start.
    pub changed: Vec<i64>,
    /// Versions recorded as failed partway. `serve` would refuse to start.
    pub failed: Vec<i64>,
}

impl Migrations {
    /// Whether the database has exactly this build's migrations.
    pub fn is_current(&self) -> bool {
        self.pending.is_empty()
            && self.unknown.is_empty()
            && self.changed.is_empty()
            && self.failed.is_empty()
    }

    /// Compares what a database recorded (`None`: never migrated) with a
    /// build's migrations.
    fn compare(
        backend: Backend,
        migrator: &Migrator,
        recorded: Option<Vec<Applied>>,
    ) -> Migrations {
        let recorded: HashMap<i64, Applied> = recorded
            .unwrap_or_default()
            .into_iter()
            .map(|applied| (applied.version, applied))
            .collect();
        let ours: Vec<&sqlx::migrate::Migration> = migrator
            .iter()
            .filter(|migration| !migration.migration_type.is_down_migration())
            .collect();
        let mut found = Migrations {
            backend,
            applied: 0,
            pending: Vec::new(),
            unknown: Vec::new(),
            changed: Vec::new(),
            failed: Vec::new(),
        };
        for migration in &ours {
            match recorded.get(&migration.version) {
                None => found
                    .pending
                    .push((migration.version, migration.description.to_string())),
                Some(applied) if !applied.success => found.failed.push(applied.version),
                Some(applied) if applied.checksum != *migration.checksum => {
                    found.changed.push(applied.version);
                }
                Some(_) => found.applied += 1,
            }
        }
        found.unknown = recorded
            .keys()
            .copied()
            .filter(|version| !ours.iter().any(|migration| migration.version == *version))
            .collect();
        found.unknown.sort_unstable();
        found
    }
}

/// Looks at the database at `url` without changing it: whether it exists
/// (SQLite) and, if it does, whether its migrations are this build's.
/// Connects read-only; creates and migrates nothing.
pub async fn inspect(url: &str) -> Result<Inspection, StoreError> {
    let (backend, migrator, found) = if url.starts_with("sqlite:") {
        (
            Backend::Sqlite,
            &sqlite::MIGRATOR,
            sqlite::inspect(url).await?,
        )
    } else if url.starts_with("postgres://") || url.starts_with("postgresql://") {
        (
            Backend::Postgres,
            &postgres::MIGRATOR,
            postgres::inspect(url).await?,
        )
    } else {
        return Err(StoreError::UnsupportedUrl(url.to_owned()));
    };
    Ok(match found {
        Found::Missing(path) => Inspection::Missing(path),
        Found::InMemory => Inspection::InMemory,
        Found::Migrations(recorded) => {
            Inspection::Migrations(Migrations::compare(backend, migrator, recorded))
        }
    })
}

/// What a backend found before comparing.
enum Found {
    Missing(PathBuf),
    InMemory,
    /// The rows of `_sqlx_migrations`; `None` when there is no such table.
    Migrations(Option<Vec<Applied>>),
}

/// One row of sqlx's `_sqlx_migrations` table.
#[derive(Debug, sqlx::FromRow)]
struct Applied {
    version: i64,
    checksum: Vec<u8>,
    success: bool,
}

/// The rows of `_sqlx_migrations` on `connection`, oldest first, when
/// `has_table` (a query answering one boolean) says the table exists.
async fn applied_migrations<DB>(
    connection: &mut DB::Connection,
    has_table: &'static str,
) -> Result<Option<Vec<Applied>>, sqlx::Error>
where
    DB: sqlx::Database,
    for<'c> &'c mut DB::Connection: sqlx::Executor<'c, Database = DB>,
    for<'q> DB::Arguments<'q>: sqlx::IntoArguments<'q, DB>,
    for<'r> Applied: sqlx::FromRow<'r, DB::Row>,
    bool: sqlx::Type<DB> + for<'r> sqlx::Decode<'r, DB>,
    usize: sqlx::ColumnIndex<DB::Row>,
{
    let exists: bool = sqlx::query_scalar(has_table)
        .fetch_one(&mut *connection)
        .await?;
    if !exists {
        return Ok(None);
    }
    sqlx::query_as("SELECT version, checksum, success FROM _sqlx_migrations ORDER BY version")
        .fetch_all(&mut *connection)
        .await
        .map(Some)
}

/// A database URL without its password, for messages.
pub fn redact_url(url: &str) -> String {
    match (url.find("://"), url.rfind('@')) {
        (Some(scheme_end), Some(at)) if at > scheme_end => {
            format!("{}://[redacted]@{}", &url[..scheme_end], &url[at + 1..])
        }
        _ => url.to_owned(),
    }
}

/// Opens (creating if missing, for SQLite) and migrates the database at
/// `url`: `sqlite://path/to/file.db`, `sqlite:file.db`, `sqlite::memory:`,
/// or `postgres://user:password@host/database` (also `postgresql://`).
pub async fn open(url: &str) -> Result<Arc<dyn Store>, StoreError> {
    if url.starts_with("sqlite:") {
        Ok(Arc::new(SqliteStore::open(url).await?))
    } else if url.starts_with("postgres://") || url.starts_with("postgresql://") {
        Ok(Arc::new(PostgresStore::open(url).await?))
    } else {
        Err(StoreError::UnsupportedUrl(url.to_owned()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn store_redacts_database_passwords() {
        assert_eq!(
            redact_url("postgres://user:pw@db:5432/ask"),
            "postgres://[redacted]@db:5432/ask"
        );
        assert_eq!(
            redact_url("sqlite://.askbridge/askbridge.db"),
            "sqlite://.askbridge/askbridge.db"
        );
    }

    fn recorded(version: i64, success: bool) -> Applied {
        let checksum = sqlite::MIGRATOR
            .iter()
            .find(|migration| migration.version == version)
            .map_or_else(Vec::new, |migration| migration.checksum.to_vec());
        Applied {
            version,
            checksum,
            success,
        }
    }

    #[test]
    fn store_migrations_compare_with_this_build() {
        let compare = |rows| Migrations::compare(Backend::Sqlite, &sqlite::MIGRATOR, rows);
        let all: Vec<i64> = sqlite::MIGRATOR.iter().map(|m| m.version).collect();
        assert!(all.len() >= 2, "the test needs two SQLite migrations");

        let current = compare(Some(all.iter().map(|&v| recorded(v, true)).collect()));
        assert!(current.is_current(), "{current:?}");
        assert_eq!(current.applied, all.len());

        let never = compare(None);
        assert!(!never.is_current());
        assert_eq!(never.applied, 0);
        assert_eq!(
            never.pending.iter().map(|(v, _)| *v).collect::<Vec<_>>(),
            all
        );
        assert_eq!(never.pending[0].1, "asks");

        let mut rows: Vec<Applied> = all.iter().map(|&v| recorded(v, true)).collect();
        rows.push(recorded(9_999, true));
        rows[0].checksum = vec![0];
        rows[1].success = false;
        let odd = compare(Some(rows));
        assert_eq!(odd.unknown, [9_999]);
        assert_eq!(odd.changed, [all[0]]);
        assert_eq!(odd.failed, [all[1]]);
        assert!(odd.pending.is_empty());
        assert!(!odd.is_current());
    }
}

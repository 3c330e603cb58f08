//! Durable storage of asks (sqlx; SQLite by default).
//!
//! The store knows rows, not lifecycles: an [`AskRow`] is the `asks` table
//! as text and numbers, a [`MessageRef`] one posted platform message. What
//! the JSON columns mean is [`crate::wire::stored`]'s and
//! [`crate::wire::ask`]'s business; what a change means is
//! [`crate::bridge`]'s. The store guarantees only that a change lands
//! whole, and that [`Store::compare_and_set`] changes a row only at the
//! version the caller last saw.
//!
//! SQLite runs in WAL mode with `synchronous = NORMAL`: a write the store
//! has acknowledged survives the process being killed (not a power cut).
//! Writes go through one connection, so writers in this process queue in
//! the pool instead of spinning in SQLite's busy handler; reads use a pool
//! of their own. Another process on the same file waits on the busy
//! timeout.
//!
//! The SQL is written to run unchanged on PostgreSQL (`$n` placeholders,
//! `TEXT`/`BIGINT`, `ON CONFLICT`, `RETURNING`), so a Postgres backend
//! needs a pool type, not new queries. Migrations live in
//! `crates/askbridge/migrations` and are embedded at build time.

use std::str::FromStr;
use std::time::Duration;

use askbridge_core::model::ChannelKind;
use futures_util::TryStreamExt;
use futures_util::stream::BoxStream;
use sqlx::sqlite::{
    SqliteConnectOptions, SqliteJournalMode, SqlitePool, SqlitePoolOptions, SqliteSynchronous,
};
use sqlx::{QueryBuilder, Sqlite};

use crate::wire::stored::StoredChannel;

/// Why a storage call failed.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The database URL names a backend this build cannot open.
    #[error("unsupported database url {0:?}: expected sqlite://…")]
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
    /// Only asks on this channel (its name).
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

/// The columns of `asks`, in [`AskRow`]'s order.
macro_rules! ask_columns {
    () => {
        "id, ask_json, target, channel, state, state_json, answers_json, created_at, deadline, \
         version, idempotency_key, delivered_at, updated_at"
    };
}

/// How long a statement waits for another process's write lock.
const BUSY_TIMEOUT: Duration = Duration::from_secs(10);

/// The database: a writer and a reader pool (the same pool for an
/// in-memory database). Cheap to clone.
#[derive(Debug, Clone)]
pub struct Store {
    writer: SqlitePool,
    reader: SqlitePool,
}

impl Store {
    /// Opens (creating if missing) and migrates the database at `url`:
    /// `sqlite://path/to/file.db`, `sqlite:file.db`, or `sqlite::memory:`.
    pub async fn open(url: &str) -> Result<Store, StoreError> {
        if !url.starts_with("sqlite:") {
            return Err(StoreError::UnsupportedUrl(url.to_owned()));
        }
        let options = SqliteConnectOptions::from_str(url)?
            .create_if_missing(true)
            .journal_mode(SqliteJournalMode::Wal)
            .synchronous(SqliteSynchronous::Normal)
            .busy_timeout(BUSY_TIMEOUT)
            .foreign_keys(true);
        let in_memory = url.contains(":memory:") || url.contains("mode=memory");
        let store = if in_memory {
            // One connection that never closes: the database lives in it.
            let pool = SqlitePoolOptions::new()
                .max_connections(1)
                .min_connections(1)
                .idle_timeout(None)
                .max_lifetime(None)
                .connect_with(options)
                .await?;
            Store {
                writer: pool.clone(),
                reader: pool,
            }
        } else {
            let writer = SqlitePoolOptions::new()
                .max_connections(1)
                .test_before_acquire(false)
                .connect_with(options.clone())
                .await?;
            let readers = std::thread::available_parallelism().map_or(4, |n| n.get().clamp(2, 8));
            let reader = SqlitePoolOptions::new()
                .max_connections(u32::try_from(readers).unwrap_or(4))
                .test_before_acquire(false)
                .connect_with(options)
                .await?;
            Store { writer, reader }
        };
        sqlx::migrate!().run(&store.writer).await?;
        Ok(store)
    }

    /// Writes a new ask. With an idempotency key already stored, writes
    /// nothing and returns the row that has it.
    pub async fn insert_ask(&self, row: &AskRow) -> Result<Inserted, StoreError> {
        let done = sqlx::query(concat!(
            "INSERT INTO asks (",
            ask_columns!(),
            ") VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13) \
             ON CONFLICT (idempotency_key) DO NOTHING"
        ))
        .bind(&row.id)
        .bind(&row.ask_json)
        .bind(&row.target)
        .bind(&row.channel)
        .bind(&row.state)
        .bind(&row.state_json)
        .bind(&row.answers_json)
        .bind(row.created_at)
        .bind(row.deadline)
        .bind(row.version)
        .bind(&row.idempotency_key)
        .bind(row.delivered_at)
        .bind(row.updated_at)
        .execute(&self.writer)
        .await?;
        if done.rows_affected() == 1 {
            return Ok(Inserted::New);
        }
        let key = row.idempotency_key.as_deref().unwrap_or_default();
        let existing: Option<AskRow> = sqlx::query_as(concat!(
            "SELECT ",
            ask_columns!(),
            " FROM asks WHERE idempotency_key = $1"
        ))
        .bind(key)
        .fetch_optional(&self.writer)
        .await?;
        existing
            .map(|row| Inserted::Existing(Box::new(row)))
            .ok_or_else(|| StoreError::Corrupt {
                id: row.id.clone(),
                problem: "insert ignored but no ask has its idempotency key".to_owned(),
            })
    }

    /// The ask with this id.
    pub async fn load_ask(&self, id: &str) -> Result<Option<AskRow>, StoreError> {
        Ok(sqlx::query_as(concat!(
            "SELECT ",
            ask_columns!(),
            " FROM asks WHERE id = $1"
        ))
        .bind(id)
        .fetch_optional(&self.reader)
        .await?)
    }

    /// The ask's current version, without reading the rest of the row.
    pub async fn load_version(&self, id: &str) -> Result<Option<i64>, StoreError> {
        Ok(sqlx::query_scalar("SELECT version FROM asks WHERE id = $1")
            .bind(id)
            .fetch_optional(&self.reader)
            .await?)
    }

    /// Changes an ask's state and answers if, and only if, it is still at
    /// `expected_version`; returns whether it did. `false` means someone
    /// else changed it first: reload and decide again.
    pub async fn compare_and_set(&self, change: &StateChange<'_>) -> Result<bool, StoreError> {
        let done = sqlx::query(
            "UPDATE asks SET state = $1, state_json = $2, answers_json = $3, version = $4, \
             updated_at = $5 WHERE id = $6 AND version = $7",
        )
        .bind(change.state)
        .bind(change.state_json)
        .bind(change.answers_json)
        .bind(change.expected_version.saturating_add(1))
        .bind(change.updated_at)
        .bind(change.id)
        .bind(change.expected_version)
        .execute(&self.writer)
        .await?;
        Ok(done.rows_affected() == 1)
    }

    /// Notes that channels took these asks (first time only), in one
    /// statement per few hundred ids. Not a state change: versions stay.
    pub async fn mark_delivered(&self, ids: &[&str], at: i64) -> Result<(), StoreError> {
        for chunk in ids.chunks(500) {
            let mut sql = QueryBuilder::<Sqlite>::new("UPDATE asks SET delivered_at = ");
            sql.push_bind(at)
                .push(" WHERE delivered_at IS NULL AND id IN (");
            let mut separated = sql.separated(", ");
            for id in chunk {
                separated.push_bind(*id);
            }
            sql.push(")");
            sql.build().execute(&self.writer).await?;
        }
        Ok(())
    }

    /// Ends, in one statement, every pending ask whose deadline is at or
    /// before `now`, writing `state_json` (the stored `timed_out` state),
    /// and returns them. Only pending rows change, so it is safe against
    /// any concurrent compare-and-set.
    pub async fn time_out_expired(
        &self,
        now: i64,
        state_json: &str,
    ) -> Result<Vec<ExpiredAsk>, StoreError> {
        Ok(sqlx::query_as(
            "UPDATE asks SET state = 'timed_out', state_json = $1, version = version + 1, \
             updated_at = $2 WHERE state = 'pending' AND deadline <= $2 \
             RETURNING id, channel, delivered_at",
        )
        .bind(state_json)
        .bind(now)
        .fetch_all(&self.writer)
        .await?)
    }

    /// What the bridge keeps in memory of every pending ask (not the ask
    /// itself), earliest deadline first, as a stream.
    pub fn pending(&self) -> BoxStream<'_, Result<PendingAsk, StoreError>> {
        Box::pin(
            sqlx::query_as(
                "SELECT id, channel, deadline, version, delivered_at FROM asks \
                 WHERE state = 'pending' ORDER BY deadline",
            )
            .fetch(&self.reader)
            .map_err(StoreError::from),
        )
    }

    /// Asks matching the query, newest first.
    pub async fn list(&self, query: ListQuery<'_>) -> Result<Vec<AskRow>, StoreError> {
        let mut sql = QueryBuilder::<Sqlite>::new(concat!("SELECT ", ask_columns!(), " FROM asks"));
        let mut joiner = " WHERE ";
        if query.pending_only {
            // A literal, so the partial index on pending asks applies.
            sql.push(joiner).push("state = 'pending'");
            joiner = " AND ";
        }
        if let Some(channel) = query.channel {
            sql.push(joiner).push("channel = ").push_bind(channel);
        }
        sql.push(" ORDER BY created_at DESC, id DESC");
        if let Some(limit) = query.limit {
            sql.push(" LIMIT ").push_bind(limit.max(0));
        }
        Ok(sql.build_query_as().fetch_all(&self.reader).await?)
    }

    /// Records (or updates the `extra` of) a posted message.
    pub async fn save_message_ref(&self, message: &MessageRef, at: i64) -> Result<(), StoreError> {
        sqlx::query(
            "INSERT INTO message_refs (ask_id, channel, conversation, message_id, extra, created_at) \
             VALUES ($1, $2, $3, $4, $5, $6) \
             ON CONFLICT (ask_id, channel, conversation, message_id) \
             DO UPDATE SET extra = excluded.extra",
        )
        .bind(&message.ask_id)
        .bind(message.channel.as_str())
        .bind(&message.conversation)
        .bind(&message.message_id)
        .bind(&message.extra)
        .bind(at)
        .execute(&self.writer)
        .await?;
        Ok(())
    }

    /// The messages an ask was posted as, oldest first.
    pub async fn message_refs(&self, ask_id: &str) -> Result<Vec<MessageRef>, StoreError> {
        let rows: Vec<MessageRefRow> = sqlx::query_as(
            "SELECT ask_id, channel, conversation, message_id, extra FROM message_refs \
             WHERE ask_id = $1 ORDER BY created_at, message_id",
        )
        .bind(ask_id)
        .fetch_all(&self.reader)
        .await?;
        rows.into_iter().map(MessageRef::try_from).collect()
    }

    /// Pending asks posted to `place` (a target without its user, such
    /// as `telegram:-100123/7`), for anyone or for one user, newest first,
    /// at most `limit`: `(ask id, target)`.
    pub async fn pending_at(
        &self,
        place: &str,
        limit: i64,
    ) -> Result<Vec<(String, String)>, StoreError> {
        // `@` (0x40) then `A` (0x41): the range holds exactly `place@…`.
        Ok(sqlx::query_as(
            "SELECT id, target FROM asks \
             WHERE state = 'pending' \
               AND (target = $1 OR (target >= $2 AND target < $3)) \
             ORDER BY created_at DESC, id DESC LIMIT $4",
        )
        .bind(place)
        .bind(format!("{place}@"))
        .bind(format!("{place}A"))
        .bind(limit)
        .fetch_all(&self.reader)
        .await?)
    }

    /// The ask a platform message belongs to (a reply to it, a click on
    /// it), if askbridge posted it.
    pub async fn find_message_ref(
        &self,
        channel: ChannelKind,
        conversation: &str,
        message_id: &str,
    ) -> Result<Option<MessageRef>, StoreError> {
        let row: Option<MessageRefRow> = sqlx::query_as(
            "SELECT ask_id, channel, conversation, message_id, extra FROM message_refs \
             WHERE channel = $1 AND conversation = $2 AND message_id = $3 \
             ORDER BY created_at DESC LIMIT 1",
        )
        .bind(channel.as_str())
        .bind(conversation)
        .bind(message_id)
        .fetch_optional(&self.reader)
        .await?;
        row.map(MessageRef::try_from).transpose()
    }
}

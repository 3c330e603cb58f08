//! The SQLite backend: embedded, one instance.
//!
//! SQLite runs in WAL mode with `synchronous = NORMAL`: a write the store
//! has acknowledged survives the process being killed (not a power cut).
//! Writes go through one connection, so writers in this process queue in
//! the pool instead of spinning in SQLite's busy handler; reads use a pool
//! of their own. Another process on the same file waits on the busy
//! timeout. There is no change feed: another process's changes are seen
//! when this one next reads the ask.

use std::str::FromStr;
use std::time::Duration;

use askbridge_core::model::ChannelKind;
use futures_util::TryStreamExt;
use futures_util::stream::BoxStream;
use sqlx::Sqlite;
use sqlx::sqlite::{
    SqliteConnectOptions, SqliteJournalMode, SqlitePool, SqlitePoolOptions, SqliteSynchronous,
};

use super::{
    Announcement, AskRow, Backend, ExpiredAsk, Inserted, LeaseTaken, ListQuery, MessageRef,
    MessageRefRow, PendingAsk, StateChange, StoreError,
};

/// How long a statement waits for another process's write lock.
const BUSY_TIMEOUT: Duration = Duration::from_secs(10);

/// A SQLite database: a writer and a reader pool (the same pool for an
/// in-memory database). Cheap to clone.
#[derive(Debug, Clone)]
pub struct SqliteStore {
    writer: SqlitePool,
    reader: SqlitePool,
}

impl SqliteStore {
    /// Opens (creating if missing) and migrates the database at `url`:
    /// `sqlite://path/to/file.db`, `sqlite:file.db`, or `sqlite::memory:`.
    pub async fn open(url: &str) -> Result<SqliteStore, StoreError> {
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
            SqliteStore {
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
            SqliteStore { writer, reader }
        };
        sqlx::migrate!("./migrations/sqlite")
            .run(&store.writer)
            .await?;
        Ok(store)
    }
}

sql_store!(SqliteStore, Sqlite, {
    fn backend(&self) -> Backend {
        Backend::Sqlite
    }

    async fn listen(&self) -> Result<Option<BoxStream<'static, Announcement>>, StoreError> {
        Ok(None)
    }
});

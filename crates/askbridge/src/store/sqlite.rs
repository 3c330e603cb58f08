//! The SQLite backend: embedded, one instance.
//!
//! SQLite runs in WAL mode with `synchronous = NORMAL`: a write the store
//! has acknowledged survives the process being killed (not a power cut).
//! Writes go through one connection, so writers in this process queue in
//! the pool instead of spinning in SQLite's busy handler; reads use a pool
//! of their own. Another process on the same file waits on the busy
//! timeout. There is no change feed: another process's changes are seen
//! when this one next reads the ask.

use std::path::Path;
use std::str::FromStr;
use std::time::Duration;

use askbridge_core::model::ChannelKind;
use futures_util::TryStreamExt;
use futures_util::stream::BoxStream;
use sqlx::migrate::Migrator;
use sqlx::sqlite::{
    SqliteConnectOptions, SqliteJournalMode, SqlitePool, SqlitePoolOptions, SqliteSynchronous,
};
use sqlx::{ConnectOptions, Connection, Sqlite};

use super::{
    Announcement, AskRow, Backend, ExpiredAsk, Found, Inserted, LeaseTaken, ListQuery, MessageRef,
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
    /// For an in-memory database, a connection nothing uses: the database
    /// lives as long as one connection to it is open, so it survives the
    /// working connection being closed (a query cancelled halfway, say)
    /// and reopened.
    _keeper: Option<SqlitePool>,
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
        let store = if in_memory(url) {
            // sqlx names it (`file:sqlx-in-memory-N`, shared cache), so every
            // connection made with these options reaches the same database.
            let one = || {
                SqlitePoolOptions::new()
                    .max_connections(1)
                    .min_connections(1)
                    .idle_timeout(None)
                    .max_lifetime(None)
            };
            let keeper = one().connect_with(options.clone()).await?;
            let pool = one().connect_with(options).await?;
            SqliteStore {
                writer: pool.clone(),
                reader: pool,
                _keeper: Some(keeper),
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
            SqliteStore {
                writer,
                reader,
                _keeper: None,
            }
        };
        MIGRATOR.run(&store.writer).await?;
        Ok(store)
    }
}

/// Whether `url` names an in-memory database (gone with its connection).
fn in_memory(url: &str) -> bool {
    url.contains(":memory:") || url.contains("mode=memory")
}

/// The SQLite migrations, embedded at build time.
pub(super) static MIGRATOR: Migrator = sqlx::migrate!("./migrations/sqlite");

/// What [`super::inspect`] finds at a `sqlite:` URL, without writing: a
/// database that is not there yet, one in memory, or the migrations
/// recorded in an existing file (`None`: none ever ran).
pub(super) async fn inspect(url: &str) -> Result<Found, StoreError> {
    let options = SqliteConnectOptions::from_str(url)?;
    if in_memory(url) {
        return Ok(Found::InMemory);
    }
    let path = options.get_filename().to_path_buf();
    if !path.exists() {
        return Ok(Found::Missing(path));
    }
    // A read-only connection to a WAL database creates the `-wal` and
    // `-shm` files when they are missing. Missing, they mean no process
    // has the database open, so it can be read as an immutable file,
    // which creates nothing.
    let mut wal = path.clone().into_os_string();
    wal.push("-wal");
    let idle = !Path::new(&wal).exists();
    let mut connection = options
        .read_only(true)
        .immutable(idle)
        .create_if_missing(false)
        .busy_timeout(BUSY_TIMEOUT)
        .connect()
        .await?;
    let applied = super::applied_migrations::<Sqlite>(
        &mut connection,
        "SELECT count(*) > 0 FROM sqlite_master WHERE type = 'table' AND name = '_sqlx_migrations'",
    )
    .await?;
    connection.close().await?;
    Ok(Found::Migrations(applied))
}

sql_store!(SqliteStore, Sqlite, {
    fn backend(&self) -> Backend {
        Backend::Sqlite
    }

    async fn listen(&self) -> Result<Option<BoxStream<'static, Announcement>>, StoreError> {
        Ok(None)
    }
});

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn an_in_memory_database_outlives_its_working_connection() {
        let store = SqliteStore::open("sqlite::memory:")
            .await
            .expect("open in memory");
        // Close the only working connection, as a cancelled query does;
        // the pool opens another one.
        let connection = store.writer.acquire().await.expect("a connection");
        connection.detach().close().await.expect("close it");
        let asks: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM asks")
            .fetch_one(&store.reader)
            .await
            .expect("the migrated tables are still there");
        assert_eq!(asks, 0);
    }
}

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
    MessageRefRow, PendingAsk, StateChange, StoreError, WebhookAttempt, WebhookRow,
};

/// Pending asks read per statement when reloading.
const PENDING_CHUNK: i64 = 10_000;

/// The pending asks after `after` (a `(deadline, rowid)`), at most
/// [`PENDING_CHUNK`], and where the next chunk starts (`None` after the
/// last).
async fn pending_chunk(
    reader: &SqlitePool,
    after: (i64, i64),
) -> Result<(Vec<PendingAsk>, Option<(i64, i64)>), StoreError> {
    let (count, text): (i64, Option<String>) = sqlx::query_as(
        "SELECT count(*), group_concat(\
           deadline || ' ' || rowid || ' ' || id || ' ' || channel || ' ' || version \
           || ' ' || coalesce(delivered_at, '-'), char(10)) \
         FROM (SELECT rowid, id, channel, deadline, version, delivered_at FROM asks \
               WHERE state = 'pending' AND (deadline, rowid) > ($1, $2) \
               ORDER BY deadline, rowid LIMIT $3)",
    )
    .bind(after.0)
    .bind(after.1)
    .bind(PENDING_CHUNK)
    .fetch_one(reader)
    .await?;
    let (asks, last) = read_pending_chunk(text.as_deref().unwrap_or_default())?;
    // A short chunk is the last one.
    Ok((asks, (count >= PENDING_CHUNK).then_some(last)))
}

/// Reads one chunk of pending asks: a line per ask, `deadline rowid id
/// channel version delivered_at` (`-` when undelivered). Returns them and
/// the greatest `(deadline, rowid)`, where the next chunk starts.
fn read_pending_chunk(text: &str) -> Result<(Vec<PendingAsk>, (i64, i64)), StoreError> {
    let mut asks = Vec::with_capacity(text.len() / 64);
    let mut last = (i64::MIN, i64::MIN);
    for line in text.split('\n').filter(|line| !line.is_empty()) {
        let unreadable = || StoreError::Corrupt {
            id: line.split(' ').nth(2).unwrap_or_default().to_owned(),
            problem: format!("unreadable pending ask {line:?}"),
        };
        let mut fields = line.split(' ');
        let mut next = || fields.next().ok_or_else(unreadable);
        let deadline: i64 = next()?.parse().map_err(|_| unreadable())?;
        let rowid: i64 = next()?.parse().map_err(|_| unreadable())?;
        let id = next()?.to_owned();
        let channel = next()?.to_owned();
        let version: i64 = next()?.parse().map_err(|_| unreadable())?;
        let delivered_at = match next()? {
            "-" => None,
            at => Some(at.parse().map_err(|_| unreadable())?),
        };
        last = last.max((deadline, rowid));
        asks.push(PendingAsk {
            id,
            channel,
            deadline,
            version,
            delivered_at,
        });
    }
    Ok((asks, last))
}

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

    /// The pending asks, [`PENDING_CHUNK`] per statement, each chunk read
    /// as one value: sqlx hands rows over from SQLite's thread one at a
    /// time, which made most of the time a restart with a million pending
    /// asks took. Chunks follow each other by `(deadline, rowid)`, along
    /// the index of pending asks.
    fn pending(&self) -> BoxStream<'_, Result<PendingAsk, StoreError>> {
        let chunks =
            futures_util::stream::try_unfold(Some((i64::MIN, i64::MIN)), move |after| async move {
                let Some(after) = after else {
                    return Ok::<_, StoreError>(None);
                };
                let (asks, next) = pending_chunk(&self.reader, after).await?;
                let asks = futures_util::stream::iter(asks.into_iter().map(Ok::<_, StoreError>));
                Ok(Some((asks, next)))
            });
        Box::pin(chunks.try_flatten())
    }

    async fn listen(&self) -> Result<Option<BoxStream<'static, Announcement>>, StoreError> {
        Ok(None)
    }
});

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_chunk_of_pending_asks_reads_back_with_where_the_next_starts() {
        let (asks, last) = read_pending_chunk(
            "20 7 ask_b web 3 -\n10 9 ask_a telegram 1 1500\n20 8 ask_c web 1 -",
        )
        .expect("reads");
        assert_eq!(last, (20, 8));
        assert_eq!(
            asks.iter()
                .map(|ask| (
                    ask.id.as_str(),
                    ask.channel.as_str(),
                    ask.deadline,
                    ask.version,
                    ask.delivered_at
                ))
                .collect::<Vec<_>>(),
            [
                ("ask_b", "web", 20, 3, None),
                ("ask_a", "telegram", 10, 1, Some(1500)),
                ("ask_c", "web", 20, 1, None),
            ]
        );
        assert_eq!(read_pending_chunk("").expect("empty").0.len(), 0);
        for bad in ["x 1 ask_a web 1 -", "1 1 ask_a web", "1 1 ask_a web 1 soon"] {
            assert!(
                matches!(read_pending_chunk(bad), Err(StoreError::Corrupt { .. })),
                "{bad}"
            );
        }
    }

    fn row(n: usize) -> AskRow {
        AskRow {
            id: format!("ask_{n}"),
            ask_json: "x".repeat(2_000),
            target: "web".to_owned(),
            channel: "web".to_owned(),
            state: "pending".to_owned(),
            state_json: "{}".to_owned(),
            answers_json: "[]".to_owned(),
            created_at: 0,
            deadline: 1,
            version: 1,
            idempotency_key: None,
            delivered_at: None,
            updated_at: 0,
            delivery_owner: None,
            remind_at: None,
            reminded: 0,
            thread_key: None,
            further_places: Vec::new(),
            webhook: None,
        }
    }

    /// A full disk (here: SQLite's page limit) is a transient failure the
    /// caller can tell from a refusal; nothing stored before is harmed, and
    /// writes go on once there is room again.
    #[tokio::test]
    async fn a_full_disk_is_transient_and_writes_resume_when_there_is_room() {
        let dir = std::env::temp_dir().join(format!("askbridge-full-{}", uuid::Uuid::new_v4()));
        std::fs::create_dir_all(&dir).expect("a temp dir");
        let url = format!("sqlite://{}", dir.join("full.db").display());
        let store = SqliteStore::open(&url).await.expect("open");
        use crate::store::Store;
        store.insert_ask(&row(0)).await.expect("room for one");
        // The writer is one connection: the limit holds for every write.
        let pages: i64 = sqlx::query_scalar("PRAGMA page_count")
            .fetch_one(&store.writer)
            .await
            .expect("page count");
        sqlx::query(&format!("PRAGMA max_page_count = {}", pages + 2))
            .execute(&store.writer)
            .await
            .expect("limit");
        let mut full = None;
        for n in 1..100 {
            if let Err(error) = store.insert_ask(&row(n)).await {
                full = Some(error);
                break;
            }
        }
        let full = full.expect("the database filled up");
        assert!(full.is_transient(), "{full:?}");
        assert!(full.is_full(), "{full:?}");
        sqlx::query("PRAGMA max_page_count = 1073741823")
            .execute(&store.writer)
            .await
            .expect("room again");
        store.insert_ask(&row(1_000)).await.expect("writes resume");
        let check: String = sqlx::query_scalar("PRAGMA integrity_check")
            .fetch_one(&store.reader)
            .await
            .expect("check");
        assert_eq!(check, "ok");
        assert!(store.load_ask("ask_0").await.expect("read").is_some());
        drop(store);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[tokio::test]
    async fn pending_asks_are_read_in_chunks_and_none_is_lost() {
        let store = SqliteStore::open("sqlite::memory:").await.expect("open");
        let total = usize::try_from(PENDING_CHUNK).expect("fits") * 2 + 3;
        let mut writer = store.writer.acquire().await.expect("a connection");
        sqlx::query(
            "WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < $1) \
             INSERT INTO asks (id, ask_json, target, channel, state, state_json, answers_json, \
               created_at, deadline, version, delivered_at, updated_at) \
             SELECT 'ask_' || i, '{}', 'web', 'web', \
               CASE WHEN i % 10 = 0 THEN 'answered' ELSE 'pending' END, '{}', '[]', \
               0, i % 7, 1, NULL, 0 FROM n",
        )
        .bind(i64::try_from(total + total / 9).expect("fits"))
        .execute(&mut *writer)
        .await
        .expect("insert");
        drop(writer);
        let expected: i64 = sqlx::query_scalar("SELECT count(*) FROM asks WHERE state = 'pending'")
            .fetch_one(&store.reader)
            .await
            .expect("count");
        let read: Vec<PendingAsk> = crate::store::Store::pending(&store)
            .try_collect()
            .await
            .expect("read");
        let ids: std::collections::HashSet<&str> = read.iter().map(|ask| ask.id.as_str()).collect();
        assert!(expected > 2 * PENDING_CHUNK, "{expected}");
        assert_eq!(read.len() as i64, expected);
        assert_eq!(ids.len(), read.len(), "an ask read twice");
    }

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

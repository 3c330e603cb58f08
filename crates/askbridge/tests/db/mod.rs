//! Scratch databases for tests, on either backend: a SQLite file under the
//! system temp directory, or a fresh database on the Postgres server named
//! by `ASKBRIDGE_TEST_POSTGRES_URL` (`.ci/run` starts one and sets it).
//! A SQLite file is removed when dropped. Postgres databases are dropped
//! by the next test run instead (those whose process has exited): dropping
//! one while its test's connections wind down can wait on the server for
//! a minute, and a test should not.
//!
//! Without that variable the Postgres tests fail, saying so: the half of
//! the suite that proves several instances work is never skipped quietly.
//!
//! Use it from an integration test file with `mod db;`.

#![allow(dead_code)]

pub mod server;

use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};

/// The variable naming the Postgres server for tests: a URL whose role
/// may create databases, e.g.
/// `postgres://askbridge:askbridge@127.0.0.1:5432/postgres`.
pub const POSTGRES_URL_VAR: &str = "ASKBRIDGE_TEST_POSTGRES_URL";

/// A database that exists for one test.
#[derive(Debug)]
pub enum Scratch {
    /// A SQLite file (with its WAL files).
    Sqlite(PathBuf),
    /// A database on the test Postgres server.
    Postgres {
        /// The server URL from [`POSTGRES_URL_VAR`].
        server: String,
        /// The database's name.
        name: String,
    },
}

fn unique(label: &str) -> String {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    format!(
        "{label}_{}_{}_{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed),
        &uuid::Uuid::new_v4().simple().to_string()[..8]
    )
}

impl Scratch {
    /// A new SQLite file (created by the first open).
    pub fn sqlite() -> Scratch {
        Scratch::Sqlite(std::env::temp_dir().join(format!("{}.db", unique("askbridge"))))
    }

    /// A new, empty Postgres database.
    ///
    /// # Panics
    /// Without [`POSTGRES_URL_VAR`], or when the server refuses.
    pub async fn postgres() -> Scratch {
        let server = std::env::var(POSTGRES_URL_VAR).unwrap_or_else(|_| {
            panic!(
                "{POSTGRES_URL_VAR} is not set: the Postgres tests need a server \
                 (`.ci/run` installs and starts one; or point it at yours, e.g. \
                 postgres://askbridge:askbridge@127.0.0.1:5432/postgres)"
            )
        });
        drop_left_over(&server).await;
        let name = unique(DATABASE_PREFIX);
        admin(&server, &format!("CREATE DATABASE \"{name}\"")).await;
        Scratch::Postgres { server, name }
    }

    /// Its URL, for `database_url`.
    pub fn url(&self) -> String {
        match self {
            Scratch::Sqlite(path) => format!("sqlite://{}", path.display()),
            Scratch::Postgres { server, name } => {
                let base = server.split('?').next().unwrap_or(server);
                let host = base.rsplit_once('/').map_or(base, |(host, _)| host);
                format!("{host}/{name}")
            }
        }
    }
}

/// How scratch database names begin: `<prefix>_<pid>_<n>_<random>`.
const DATABASE_PREFIX: &str = "askbridge_test";

/// Drops, once per process, the scratch databases of test processes that
/// have exited.
async fn drop_left_over(server: &str) {
    static ONCE: tokio::sync::OnceCell<()> = tokio::sync::OnceCell::const_new();
    ONCE.get_or_init(|| async {
        use sqlx::Connection;
        let Ok(mut connection) = sqlx::PgConnection::connect(server).await else {
            return;
        };
        let names: Vec<String> =
            sqlx::query_scalar("SELECT datname FROM pg_database WHERE datname LIKE $1")
                .bind(format!("{DATABASE_PREFIX}\\_%"))
                .fetch_all(&mut connection)
                .await
                .unwrap_or_default();
        let _ = connection.close().await;
        for name in names {
            let pid = name
                .strip_prefix(DATABASE_PREFIX)
                .and_then(|rest| rest.split('_').nth(1));
            let alive = pid.is_some_and(|pid| std::path::Path::new("/proc").join(pid).exists());
            if !alive {
                admin(
                    server,
                    &format!("DROP DATABASE IF EXISTS \"{name}\" WITH (FORCE)"),
                )
                .await;
            }
        }
    })
    .await;
}

/// Runs one statement on the server's own database.
async fn admin(server: &str, statement: &str) {
    use sqlx::Connection;
    let mut connection = sqlx::PgConnection::connect(server)
        .await
        .unwrap_or_else(|error| panic!("cannot reach the test Postgres at {server}: {error}"));
    sqlx::raw_sql(statement)
        .execute(&mut connection)
        .await
        .unwrap_or_else(|error| panic!("{statement}: {error}"));
    let _ = connection.close().await;
}

impl Drop for Scratch {
    fn drop(&mut self) {
        match self {
            Scratch::Sqlite(path) => {
                for suffix in ["", "-wal", "-shm"] {
                    let mut file = path.clone().into_os_string();
                    file.push(suffix);
                    let _ = std::fs::remove_file(file);
                }
            }
            // Dropped by the next run: see the module documentation.
            Scratch::Postgres { .. } => {}
        }
    }
}

//! The PostgreSQL backend: several instances on one database.
//!
//! Every statement is the SQLite backend's (see the `sql` module); what
//! Postgres adds is the change feed. A trigger (migrations/postgres)
//! announces every new ask and every state change on the
//! `askbridge_asks` channel when it commits, and [`PostgresStore`]'s
//! [`Store::listen`](super::Store::listen) turns those into
//! [`Announcement`]s. When the listening connection drops, the feed
//! reconnects and says [`Announcement::Missed`], so the bridge re-reads
//! instead of trusting that nothing happened meanwhile.

use std::str::FromStr;
use std::time::Duration;

use askbridge_core::model::ChannelKind;
use futures_util::TryStreamExt;
use futures_util::stream::BoxStream;
use sqlx::migrate::Migrator;
use sqlx::postgres::{PgConnectOptions, PgListener, PgPool, PgPoolOptions};
use sqlx::{ConnectOptions, Connection, Postgres};

use super::{
    Announcement, AskRow, Backend, ExpiredAsk, Found, Inserted, LeaseTaken, ListQuery, MessageRef,
    MessageRefRow, PendingAsk, StateChange, StoreError, WebhookAttempt, WebhookRow,
};

/// The channel the trigger announces changes on.
const CHANNEL: &str = "askbridge_asks";

/// Connections per instance.
const MAX_CONNECTIONS: u32 = 16;
/// How long a statement waits for a connection: when the server is
/// unreachable, an API call fails with `503 unavailable` after this
/// rather than after sqlx's default 30 s.
const ACQUIRE_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(5);

/// How long to wait before trying a lost listening connection again.
const RECONNECT_AFTER: Duration = Duration::from_secs(1);

/// A PostgreSQL database. Cheap to clone.
#[derive(Debug, Clone)]
pub struct PostgresStore {
    /// Postgres needs no single writer: both names are one pool.
    writer: PgPool,
    reader: PgPool,
}

impl PostgresStore {
    /// Connects to and migrates the database at `url`
    /// (`postgres://user:password@host:port/database`). The database must
    /// exist; the tables are created by the migrations, which take a lock,
    /// so instances starting together migrate once.
    pub async fn open(url: &str) -> Result<PostgresStore, StoreError> {
        let options = PgConnectOptions::from_str(url)?.application_name("askbridge");
        let pool = PgPoolOptions::new()
            .max_connections(MAX_CONNECTIONS)
            .acquire_timeout(ACQUIRE_TIMEOUT)
            .connect_with(options)
            .await?;
        MIGRATOR.run(&pool).await?;
        Ok(PostgresStore {
            writer: pool.clone(),
            reader: pool,
        })
    }
}

/// The Postgres migrations, embedded at build time.
pub(super) static MIGRATOR: Migrator = sqlx::migrate!("./migrations/postgres");

/// The migrations recorded in the database at `url` (`None`: none ever
/// ran), read in a read-only session.
pub(super) async fn inspect(url: &str) -> Result<Found, StoreError> {
    let mut connection = PgConnectOptions::from_str(url)?
        .application_name("askbridge check")
        .options([("default_transaction_read_only", "on")])
        .connect()
        .await?;
    let applied = super::applied_migrations::<Postgres>(
        &mut connection,
        "SELECT to_regclass('_sqlx_migrations') IS NOT NULL",
    )
    .await?;
    connection.close().await?;
    Ok(Found::Migrations(applied))
}

sql_store!(PostgresStore, Postgres, {
    fn backend(&self) -> Backend {
        Backend::Postgres
    }

    fn pending(&self) -> BoxStream<'_, Result<PendingAsk, StoreError>> {
        Box::pin(
            sqlx::query_as(
                "SELECT id, channel, deadline, version, delivered_at FROM asks \
                 WHERE state = 'pending' ORDER BY deadline",
            )
            .fetch(&self.reader)
            .map_err(StoreError::from),
        )
    }

    async fn listen(&self) -> Result<Option<BoxStream<'static, Announcement>>, StoreError> {
        let mut listener = PgListener::connect_with(&self.writer).await?;
        listener.listen(CHANNEL).await?;
        let feed = futures_util::stream::unfold(listener, |mut listener| async move {
            loop {
                match listener.try_recv().await {
                    Ok(Some(notification)) => match parse(notification.payload()) {
                        Some(announcement) => return Some((announcement, listener)),
                        None => tracing::warn!(
                            payload = notification.payload(),
                            "unreadable change announcement ignored"
                        ),
                    },
                    Ok(None) => {
                        tracing::warn!("the change feed's connection dropped; reconnecting");
                        relisten(&mut listener).await;
                        return Some((Announcement::Missed, listener));
                    }
                    Err(error) => {
                        tracing::warn!(error = %error, "the change feed failed; reconnecting");
                        relisten(&mut listener).await;
                        return Some((Announcement::Missed, listener));
                    }
                }
            }
        });
        Ok(Some(Box::pin(feed)))
    }
});

/// Reconnects until listening again, so that every change after this
/// returns is heard.
async fn relisten(listener: &mut PgListener) {
    loop {
        match listener.listen(CHANNEL).await {
            Ok(()) => return,
            Err(error) => {
                tracing::warn!(error = %error, "cannot listen for changes yet; retrying");
                tokio::time::sleep(RECONNECT_AFTER).await;
            }
        }
    }
}

/// Reads a trigger's payload: `<id> <version> <delivery owner or empty>`.
fn parse(payload: &str) -> Option<Announcement> {
    let mut parts = payload.splitn(3, ' ');
    let id = parts.next().filter(|id| !id.is_empty())?.to_owned();
    let version = parts.next()?.parse().ok()?;
    let delivery_owner = parts
        .next()
        .filter(|owner| !owner.is_empty())
        .map(str::to_owned);
    Some(Announcement::Changed {
        id,
        version,
        delivery_owner,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn announcements_read_back_with_and_without_an_owner() {
        assert_eq!(
            parse("ask_1 3 host-a:8790"),
            Some(Announcement::Changed {
                id: "ask_1".to_owned(),
                version: 3,
                delivery_owner: Some("host-a:8790".to_owned()),
            })
        );
        assert_eq!(
            parse("ask_1 0 "),
            Some(Announcement::Changed {
                id: "ask_1".to_owned(),
                version: 0,
                delivery_owner: None,
            })
        );
        assert_eq!(parse("ask_1 x owner"), None);
        assert_eq!(parse(""), None);
    }
}

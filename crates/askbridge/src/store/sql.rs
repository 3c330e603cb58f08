//! The SQL both backends run, written once: [`sql_store!`] implements
//! [`super::Store`] for a backend struct with a `writer` and a `reader`
//! pool of one sqlx database type. A backend adds only what differs (its
//! name and its change feed).
//!
//! Reads go through [`read`], which runs a read again once when the
//! database dropped its connection under it (a restarted or failed-over
//! server, a cut connection): the pool hands the second try a fresh
//! connection. Writes are not retried here: a write whose connection
//! dropped may have committed, and its caller re-reads to find out.

use super::StoreError;

/// Runs `query`, and once more if it failed because its connection was
/// lost.
pub(super) async fn read<T, F>(query: impl Fn() -> F) -> Result<T, StoreError>
where
    F: Future<Output = Result<T, sqlx::Error>>,
{
    match query().await {
        Err(error) if connection_lost(&error) => {
            tracing::debug!(%error, "a read lost its database connection; trying once more");
            Ok(query().await?)
        }
        result => Ok(result?),
    }
}

/// Whether `error` may pass if tried again later: the connection went
/// away or none was free in time, or the database was busy or full
/// (SQLite's `SQLITE_BUSY` / `SQLITE_LOCKED` / `SQLITE_FULL`, Postgres's
/// "insufficient resources", class 53).
pub(super) fn is_transient(error: &sqlx::Error) -> bool {
    connection_lost(error)
        || matches!(error, sqlx::Error::PoolTimedOut)
        || match error {
            sqlx::Error::Database(database) => database.code().is_some_and(|code| {
                matches!(&*code, "5" | "6" | "13" | "261" | "262" | "517" | "773")
                    || code.starts_with("53")
            }),
            _ => false,
        }
}

/// Whether `error` says the disk is full: SQLite's `SQLITE_FULL` (13),
/// Postgres's `disk_full` (53100).
pub(super) fn is_full(error: &sqlx::Error) -> bool {
    match error {
        sqlx::Error::Database(database) => database
            .code()
            .is_some_and(|code| matches!(&*code, "13" | "53100")),
        _ => false,
    }
}

/// Whether `error` says the connection went away (rather than that the
/// statement was wrong): a socket error, or Postgres's "connection
/// exception" (SQLSTATE class 08) and "operator intervention" (57P01–03:
/// terminated by an administrator, a crash, a server still starting).
fn connection_lost(error: &sqlx::Error) -> bool {
    match error {
        sqlx::Error::Io(_) => true,
        sqlx::Error::Database(database) => database.code().is_some_and(|code| {
            code.starts_with("08") || matches!(&*code, "57P01" | "57P02" | "57P03")
        }),
        _ => false,
    }
}

/// The columns of `asks`, in [`super::AskRow`]'s order.
macro_rules! ask_columns {
    () => {
        "id, ask_json, target, channel, state, state_json, answers_json, created_at, deadline, \
         version, idempotency_key, delivered_at, updated_at, delivery_owner, remind_at, reminded"
    };
}

/// The columns of `webhook_deliveries`, in [`super::WebhookRow`]'s
/// order, each after `$prefix` (a table alias and its dot, or nothing).
macro_rules! webhook_columns {
    ($prefix:literal) => {
        concat!(
            $prefix,
            "id, ",
            $prefix,
            "ask_id, ",
            $prefix,
            "event, ",
            $prefix,
            "url, ",
            $prefix,
            "body, ",
            $prefix,
            "state, ",
            $prefix,
            "attempts, ",
            $prefix,
            "due_at, ",
            $prefix,
            "first_attempt_at, ",
            $prefix,
            "last_status, ",
            $prefix,
            "last_error, ",
            $prefix,
            "delivered_at, ",
            $prefix,
            "created_at, ",
            $prefix,
            "updated_at"
        )
    };
}

/// The statement that writes a new webhook delivery.
pub(super) fn insert_webhook<'q, DB>(
    row: &'q super::WebhookRow,
) -> sqlx::query::Query<'q, DB, <DB as sqlx::Database>::Arguments<'q>>
where
    DB: sqlx::Database,
    String: sqlx::Encode<'q, DB> + sqlx::Type<DB>,
    Option<String>: sqlx::Encode<'q, DB> + sqlx::Type<DB>,
    i64: sqlx::Encode<'q, DB> + sqlx::Type<DB>,
    Option<i64>: sqlx::Encode<'q, DB> + sqlx::Type<DB>,
{
    sqlx::query(concat!(
        "INSERT INTO webhook_deliveries (",
        webhook_columns!(""),
        ") VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)"
    ))
    .bind(row.id.clone())
    .bind(row.ask_id.clone())
    .bind(row.event.clone())
    .bind(row.url.clone())
    .bind(row.body.clone())
    .bind(row.state.clone())
    .bind(row.attempts)
    .bind(row.due_at)
    .bind(row.first_attempt_at)
    .bind(row.last_status)
    .bind(row.last_error.clone())
    .bind(row.delivered_at)
    .bind(row.created_at)
    .bind(row.updated_at)
}

/// Implements [`super::Store`] for `$store` (fields `writer` and `reader`,
/// pools of `$db`), with `$extra` (the methods that differ) added.
macro_rules! sql_store {
    ($store:ty, $db:ty, { $($extra:tt)* }) => {
        #[async_trait::async_trait]
        impl $crate::store::Store for $store {
            $($extra)*

            async fn insert_ask(&self, row: &AskRow) -> Result<Inserted, StoreError> {
                let mut transaction = self.writer.begin().await?;
                let done = sqlx::query(concat!(
                    "INSERT INTO asks (",
                    ask_columns!(),
                    ", thread_key) \
                     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17) \
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
                .bind(&row.delivery_owner)
                .bind(row.remind_at)
                .bind(row.reminded)
                .bind(&row.thread_key)
                .execute(&mut *transaction)
                .await?;
                if done.rows_affected() == 1 {
                    for (position, place) in (1i64..).zip(&row.further_places) {
                        sqlx::query(
                            "INSERT INTO ask_places (ask_id, position, target, channel, due_at) \
                             VALUES ($1, $2, $3, $4, $5)",
                        )
                        .bind(&row.id)
                        .bind(position)
                        .bind(&place.target)
                        .bind(&place.channel)
                        .bind(place.due_at)
                        .execute(&mut *transaction)
                        .await?;
                    }
                    if let Some(webhook) = &row.webhook {
                        $crate::store::sql::insert_webhook(webhook)
                            .execute(&mut *transaction)
                            .await?;
                    }
                    transaction.commit().await?;
                    return Ok(Inserted::New);
                }
                transaction.rollback().await?;
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

            async fn load_ask(&self, id: &str) -> Result<Option<AskRow>, StoreError> {
                $crate::store::sql::read(move || async move {
                    sqlx::query_as(concat!("SELECT ", ask_columns!(), " FROM asks WHERE id = $1"))
                        .bind(id)
                        .fetch_optional(&self.reader)
                        .await
                })
                .await
            }

            async fn load_version(&self, id: &str) -> Result<Option<i64>, StoreError> {
                $crate::store::sql::read(move || async move {
                    sqlx::query_scalar("SELECT version FROM asks WHERE id = $1")
                        .bind(id)
                        .fetch_optional(&self.reader)
                        .await
                })
                .await
            }

            async fn compare_and_set(&self, change: &StateChange<'_>) -> Result<bool, StoreError> {
                let done = sqlx::query(
                    "UPDATE asks SET state = $1, state_json = $2, answers_json = $3, \
                     version = $4, updated_at = $5 WHERE id = $6 AND version = $7",
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

            async fn mark_delivered(&self, ids: &[&str], at: i64) -> Result<(), StoreError> {
                // One statement per few hundred ids.
                for chunk in ids.chunks(500) {
                    let mut sql = sqlx::QueryBuilder::<$db>::new("UPDATE asks SET delivered_at = ");
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

            async fn time_out_expired(
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

            async fn list(&self, query: ListQuery<'_>) -> Result<Vec<AskRow>, StoreError> {
                $crate::store::sql::read(move || async move {
                let mut sql =
                    sqlx::QueryBuilder::<$db>::new(concat!("SELECT ", ask_columns!(), " FROM asks"));
                let mut joiner = " WHERE ";
                if query.pending_only {
                    // A literal, so the partial index on pending asks applies.
                    sql.push(joiner).push("state = 'pending'");
                    joiner = " AND ";
                }
                if let Some(channel) = query.channel {
                    // Its first place's channel, or a further place's.
                    sql.push(joiner)
                        .push("(channel = ")
                        .push_bind(channel)
                        .push(" OR id IN (SELECT ask_id FROM ask_places WHERE channel = ")
                        .push_bind(channel)
                        .push("))");
                }
                sql.push(" ORDER BY created_at DESC, id DESC");
                if let Some(limit) = query.limit {
                    sql.push(" LIMIT ").push_bind(limit.max(0));
                }
                sql.build_query_as().fetch_all(&self.reader).await
                })
                .await
            }

            async fn save_message_ref(&self, message: &MessageRef, at: i64) -> Result<(), StoreError> {
                sqlx::query(
                    "INSERT INTO message_refs \
                     (ask_id, channel, conversation, message_id, extra, created_at) \
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

            async fn message_refs(&self, ask_id: &str) -> Result<Vec<MessageRef>, StoreError> {
                let rows: Vec<MessageRefRow> = $crate::store::sql::read(move || async move {
                    sqlx::query_as(
                        "SELECT ask_id, channel, conversation, message_id, extra FROM message_refs \
                         WHERE ask_id = $1 ORDER BY created_at, message_id",
                    )
                    .bind(ask_id)
                    .fetch_all(&self.reader)
                    .await
                })
                .await?;
                rows.into_iter().map(MessageRef::try_from).collect()
            }

            async fn pending_at(
                &self,
                place: &str,
                limit: i64,
            ) -> Result<Vec<(String, String)>, StoreError> {
                // `@` (0x40) then `A` (0x41): the range holds exactly
                // `place@…` (byte order: Postgres compares `target` in the
                // "C" collation).
                let rows: Vec<(String, String, i64)> = $crate::store::sql::read(move || async move {
                    sqlx::query_as(
                        "SELECT id, target, created_at FROM asks \
                         WHERE state = 'pending' \
                           AND (target = $1 OR (target >= $2 AND target < $3)) \
                         UNION ALL \
                         SELECT a.id, p.target, a.created_at FROM ask_places p \
                         JOIN asks a ON a.id = p.ask_id \
                         WHERE a.state = 'pending' \
                           AND (p.target = $1 OR (p.target >= $2 AND p.target < $3)) \
                         ORDER BY 3 DESC, 1 DESC LIMIT $4",
                    )
                    .bind(place)
                    .bind(format!("{place}@"))
                    .bind(format!("{place}A"))
                    .bind(limit)
                    .fetch_all(&self.reader)
                    .await
                })
                .await?;
                Ok(rows.into_iter().map(|(id, target, _)| (id, target)).collect())
            }

            async fn next_reminder_at(&self) -> Result<Option<i64>, StoreError> {
                $crate::store::sql::read(move || async move {
                    sqlx::query_scalar(
                        "SELECT MIN(remind_at) FROM asks \
                         WHERE state = 'pending' AND remind_at IS NOT NULL",
                    )
                    .fetch_one(&self.reader)
                    .await
                })
                .await
            }

            async fn due_reminders(
                &self,
                now: i64,
                limit: i64,
            ) -> Result<Vec<(String, i64, i64)>, StoreError> {
                $crate::store::sql::read(move || async move {
                    sqlx::query_as(
                        "SELECT id, reminded, reminders_done FROM asks \
                         WHERE state = 'pending' AND remind_at IS NOT NULL AND remind_at <= $1 \
                         ORDER BY remind_at LIMIT $2",
                    )
                    .bind(now)
                    .bind(limit)
                    .fetch_all(&self.reader)
                    .await
                })
                .await
            }

            async fn claim_reminder(
                &self,
                id: &str,
                sent: i64,
                redo_at: i64,
            ) -> Result<bool, StoreError> {
                let done = sqlx::query(
                    "UPDATE asks SET reminded = $2 + 1, remind_at = $3 \
                     WHERE id = $1 AND reminded = $2 AND reminders_done = $2 \
                     AND state = 'pending'",
                )
                .bind(id)
                .bind(sent)
                .bind(redo_at)
                .execute(&self.writer)
                .await?;
                Ok(done.rows_affected() == 1)
            }

            async fn reclaim_reminder(
                &self,
                id: &str,
                claimed: i64,
                now: i64,
                redo_at: i64,
            ) -> Result<bool, StoreError> {
                let done = sqlx::query(
                    "UPDATE asks SET remind_at = $4 \
                     WHERE id = $1 AND reminded = $2 AND reminders_done < $2 \
                     AND remind_at <= $3 AND state = 'pending'",
                )
                .bind(id)
                .bind(claimed)
                .bind(now)
                .bind(redo_at)
                .execute(&self.writer)
                .await?;
                Ok(done.rows_affected() == 1)
            }

            async fn finish_reminder(
                &self,
                id: &str,
                claimed: i64,
                next_at: Option<i64>,
            ) -> Result<(), StoreError> {
                sqlx::query(
                    "UPDATE asks SET reminders_done = $2, remind_at = $3 \
                     WHERE id = $1 AND reminded = $2 AND reminders_done < $2",
                )
                .bind(id)
                .bind(claimed)
                .bind(next_at)
                .execute(&self.writer)
                .await?;
                Ok(())
            }

            async fn pending_further_places(
                &self,
            ) -> Result<Vec<$crate::store::FurtherPlace>, StoreError> {
                $crate::store::sql::read(move || async move {
                    sqlx::query_as(
                        "SELECT p.ask_id, p.channel, p.due_at FROM ask_places p \
                         JOIN asks a ON a.id = p.ask_id \
                         WHERE a.state = 'pending' ORDER BY p.ask_id, p.position",
                    )
                    .fetch_all(&self.reader)
                    .await
                })
                .await
            }

            async fn thread_root(
                &self,
                channel: ChannelKind,
                conversation: &str,
                key: &str,
            ) -> Result<Option<String>, StoreError> {
                $crate::store::sql::read(move || async move {
                    sqlx::query_scalar(
                        "SELECT message_id FROM threads \
                         WHERE channel = $1 AND conversation = $2 AND thread_key = $3",
                    )
                    .bind(channel.as_str())
                    .bind(conversation)
                    .bind(key)
                    .fetch_optional(&self.reader)
                    .await
                })
                .await
            }

            async fn insert_webhook(&self, row: &WebhookRow) -> Result<(), StoreError> {
                $crate::store::sql::insert_webhook(row)
                    .execute(&self.writer)
                    .await?;
                Ok(())
            }

            async fn due_webhooks(
                &self,
                now: i64,
                limit: i64,
            ) -> Result<Vec<WebhookRow>, StoreError> {
                $crate::store::sql::read(move || async move {
                    sqlx::query_as(concat!(
                        "SELECT ",
                        webhook_columns!("d."),
                        " FROM webhook_deliveries d JOIN asks a ON a.id = d.ask_id \
                         WHERE d.state = 'pending' AND d.due_at <= $1 \
                         AND (d.event <> 'ask.ended' OR a.state <> 'pending') \
                         ORDER BY d.due_at LIMIT $2"
                    ))
                    .bind(now)
                    .bind(limit)
                    .fetch_all(&self.reader)
                    .await
                })
                .await
            }

            async fn next_webhook_at(&self) -> Result<Option<i64>, StoreError> {
                $crate::store::sql::read(move || async move {
                    sqlx::query_scalar(
                        "SELECT MIN(due_at) FROM webhook_deliveries WHERE state = 'pending'",
                    )
                    .fetch_one(&self.reader)
                    .await
                })
                .await
            }

            async fn webhook_ended(
                &self,
                ask_id: Option<&str>,
                now: i64,
            ) -> Result<(), StoreError> {
                let waiting = "UPDATE webhook_deliveries SET due_at = $1, updated_at = $1 \
                     WHERE event = 'ask.ended' AND state = 'pending' AND attempts = 0 \
                     AND due_at > $1 AND ";
                match ask_id {
                    Some(id) => {
                        sqlx::query(&format!("{waiting}ask_id = $2"))
                            .bind(now)
                            .bind(id)
                            .execute(&self.writer)
                            .await?
                    }
                    None => {
                        sqlx::query(&format!(
                            "{waiting}EXISTS (SELECT 1 FROM asks a \
                             WHERE a.id = webhook_deliveries.ask_id AND a.state <> 'pending')"
                        ))
                        .bind(now)
                        .execute(&self.writer)
                        .await?
                    }
                };
                Ok(())
            }

            async fn claim_webhook(
                &self,
                id: &str,
                attempts: i64,
                now: i64,
                lease_until: i64,
                body: &str,
            ) -> Result<Option<String>, StoreError> {
                let claimed: Option<Option<String>> = sqlx::query_scalar(
                    "UPDATE webhook_deliveries SET attempts = attempts + 1, due_at = $4, \
                     first_attempt_at = COALESCE(first_attempt_at, $3), \
                     body = COALESCE(body, $5), updated_at = $3 \
                     WHERE id = $1 AND state = 'pending' AND attempts = $2 AND due_at <= $3 \
                     RETURNING body",
                )
                .bind(id)
                .bind(attempts)
                .bind(now)
                .bind(lease_until)
                .bind(body)
                .fetch_optional(&self.writer)
                .await?;
                Ok(claimed.flatten())
            }

            async fn finish_webhook(
                &self,
                attempt: &WebhookAttempt<'_>,
            ) -> Result<bool, StoreError> {
                let done = sqlx::query(
                    "UPDATE webhook_deliveries SET state = $3, due_at = $4, last_status = $5, \
                     last_error = $6, updated_at = $7, \
                     delivered_at = CASE WHEN $3 = 'delivered' THEN $7 ELSE delivered_at END \
                     WHERE id = $1 AND attempts = $2 AND state = 'pending'",
                )
                .bind(attempt.id)
                .bind(attempt.attempts)
                .bind(attempt.state)
                .bind(attempt.due_at)
                .bind(attempt.status)
                .bind(attempt.error)
                .bind(attempt.at)
                .execute(&self.writer)
                .await?;
                Ok(done.rows_affected() == 1)
            }

            async fn webhooks_of(&self, ask_id: &str) -> Result<Vec<WebhookRow>, StoreError> {
                $crate::store::sql::read(move || async move {
                    sqlx::query_as(concat!(
                        "SELECT ",
                        webhook_columns!(""),
                        " FROM webhook_deliveries WHERE ask_id = $1 ORDER BY created_at, id"
                    ))
                    .bind(ask_id)
                    .fetch_all(&self.reader)
                    .await
                })
                .await
            }

            async fn channel_value(
                &self,
                channel: ChannelKind,
                key: &str,
            ) -> Result<Option<String>, StoreError> {
                $crate::store::sql::read(move || async move {
                    sqlx::query_scalar(
                        "SELECT value FROM channel_values WHERE channel = $1 AND key = $2",
                    )
                    .bind(channel.as_str())
                    .bind(key)
                    .fetch_optional(&self.reader)
                    .await
                })
                .await
            }

            async fn set_channel_value(
                &self,
                channel: ChannelKind,
                key: &str,
                value: &str,
                at: i64,
            ) -> Result<(), StoreError> {
                sqlx::query(
                    "INSERT INTO channel_values (channel, key, value, updated_at) \
                     VALUES ($1, $2, $3, $4) \
                     ON CONFLICT (channel, key) DO UPDATE \
                     SET value = excluded.value, updated_at = excluded.updated_at",
                )
                .bind(channel.as_str())
                .bind(key)
                .bind(value)
                .bind(at)
                .execute(&self.writer)
                .await?;
                Ok(())
            }

            async fn first_channel_value(
                &self,
                channel: ChannelKind,
                key: &str,
                value: &str,
                at: i64,
            ) -> Result<String, StoreError> {
                sqlx::query(
                    "INSERT INTO channel_values (channel, key, value, updated_at) \
                     VALUES ($1, $2, $3, $4) ON CONFLICT (channel, key) DO NOTHING",
                )
                .bind(channel.as_str())
                .bind(key)
                .bind(value)
                .bind(at)
                .execute(&self.writer)
                .await?;
                // Read where it was written: the value that stands.
                let standing: String = sqlx::query_scalar(
                    "SELECT value FROM channel_values WHERE channel = $1 AND key = $2",
                )
                .bind(channel.as_str())
                .bind(key)
                .fetch_one(&self.writer)
                .await?;
                Ok(standing)
            }

            async fn save_thread_root(
                &self,
                channel: ChannelKind,
                conversation: &str,
                key: &str,
                message_id: &str,
                at: i64,
            ) -> Result<String, StoreError> {
                sqlx::query(
                    "INSERT INTO threads (channel, conversation, thread_key, message_id, created_at) \
                     VALUES ($1, $2, $3, $4, $5) \
                     ON CONFLICT (channel, conversation, thread_key) DO NOTHING",
                )
                .bind(channel.as_str())
                .bind(conversation)
                .bind(key)
                .bind(message_id)
                .bind(at)
                .execute(&self.writer)
                .await?;
                // Read on the writer: the row just written (or the one that
                // was there first) is there.
                let root: String = sqlx::query_scalar(
                    "SELECT message_id FROM threads \
                     WHERE channel = $1 AND conversation = $2 AND thread_key = $3",
                )
                .bind(channel.as_str())
                .bind(conversation)
                .bind(key)
                .fetch_one(&self.writer)
                .await?;
                Ok(root)
            }

            async fn thread_of(
                &self,
                channel: ChannelKind,
                conversation: &str,
                message_id: &str,
            ) -> Result<Option<String>, StoreError> {
                $crate::store::sql::read(move || async move {
                    sqlx::query_scalar(
                        "SELECT thread_key FROM threads \
                         WHERE channel = $1 AND conversation = $2 AND message_id = $3 \
                         LIMIT 1",
                    )
                    .bind(channel.as_str())
                    .bind(conversation)
                    .bind(message_id)
                    .fetch_optional(&self.reader)
                    .await
                })
                .await
            }

            async fn pending_in_thread(
                &self,
                key: &str,
                limit: i64,
            ) -> Result<Vec<String>, StoreError> {
                $crate::store::sql::read(move || async move {
                    sqlx::query_scalar(
                        "SELECT id FROM asks \
                         WHERE state = 'pending' AND thread_key = $1 \
                         ORDER BY created_at DESC, id DESC LIMIT $2",
                    )
                    .bind(key)
                    .bind(limit)
                    .fetch_all(&self.reader)
                    .await
                })
                .await
            }

            async fn find_message_ref(
                &self,
                channel: ChannelKind,
                conversation: &str,
                message_id: &str,
            ) -> Result<Option<MessageRef>, StoreError> {
                let row: Option<MessageRefRow> = $crate::store::sql::read(move || async move {
                    sqlx::query_as(
                        "SELECT ask_id, channel, conversation, message_id, extra FROM message_refs \
                         WHERE channel = $1 AND conversation = $2 AND message_id = $3 \
                         ORDER BY created_at DESC LIMIT 1",
                    )
                    .bind(channel.as_str())
                    .bind(conversation)
                    .bind(message_id)
                    .fetch_optional(&self.reader)
                    .await
                })
                .await?;
                row.map(MessageRef::try_from).transpose()
            }

            async fn take_lease(
                &self,
                name: &str,
                holder: &str,
                now: i64,
                expires_at: i64,
            ) -> Result<LeaseTaken, StoreError> {
                let before: Option<(String, i64)> =
                    sqlx::query_as("SELECT holder, expires_at FROM leases WHERE name = $1")
                        .bind(name)
                        .fetch_optional(&self.writer)
                        .await?;
                // The upsert decides; `before` only tells a takeover from a
                // first take or a renewal.
                let done = sqlx::query(
                    "INSERT INTO leases (name, holder, expires_at) VALUES ($1, $2, $3) \
                     ON CONFLICT (name) DO UPDATE \
                     SET holder = excluded.holder, expires_at = excluded.expires_at \
                     WHERE leases.holder = excluded.holder OR leases.expires_at <= $4",
                )
                .bind(name)
                .bind(holder)
                .bind(expires_at)
                .bind(now)
                .execute(&self.writer)
                .await?;
                Ok(match before {
                    _ if done.rows_affected() == 0 => LeaseTaken::No,
                    Some((previous, _)) if previous != holder => LeaseTaken::TakenOver,
                    _ => LeaseTaken::Held,
                })
            }

            async fn secret(&self, name: &str, candidate: &str) -> Result<String, StoreError> {
                sqlx::query(
                    "INSERT INTO secrets (name, value) VALUES ($1, $2) \
                     ON CONFLICT (name) DO NOTHING",
                )
                .bind(name)
                .bind(candidate)
                .execute(&self.writer)
                .await?;
                Ok(sqlx::query_scalar("SELECT value FROM secrets WHERE name = $1")
                    .bind(name)
                    .fetch_one(&self.writer)
                    .await?)
            }

            async fn release_lease(&self, name: &str, holder: &str) -> Result<(), StoreError> {
                sqlx::query("DELETE FROM leases WHERE name = $1 AND holder = $2")
                    .bind(name)
                    .bind(holder)
                    .execute(&self.writer)
                    .await?;
                Ok(())
            }

            async fn claim_deliveries(
                &self,
                instance: &str,
                now: i64,
                own: bool,
            ) -> Result<Vec<String>, StoreError> {
                let sql = if own {
                    concat!(claim_deliveries!(), " OR delivery_owner = $1) RETURNING id")
                } else {
                    concat!(claim_deliveries!(), ") RETURNING id")
                };
                Ok(sqlx::query_scalar(sql)
                    .bind(instance)
                    .bind(now)
                    .fetch_all(&self.writer)
                    .await?)
            }

            async fn claim_channel_deliveries(
                &self,
                instance: &str,
                channel: &str,
                only: Option<&str>,
            ) -> Result<Vec<String>, StoreError> {
                // Rows already this instance's are read, not written, so a
                // claim repeated every lease period changes nothing twice.
                let (claim, owned) = match only {
                    None => (
                        concat!(
                            "UPDATE asks SET delivery_owner = $1", channel_deliveries!(),
                            " AND (delivery_owner IS NULL OR delivery_owner <> $1) RETURNING id"
                        ),
                        concat!("SELECT id FROM asks", channel_deliveries!(), " AND delivery_owner = $1"),
                    ),
                    Some(_) => (
                        concat!(
                            "UPDATE asks SET delivery_owner = $1", channel_deliveries!(),
                            " AND (delivery_owner IS NULL OR delivery_owner <> $1) AND id = $3 RETURNING id"
                        ),
                        concat!(
                            "SELECT id FROM asks", channel_deliveries!(),
                            " AND delivery_owner = $1 AND id = $3"
                        ),
                    ),
                };
                let mut ids = Vec::new();
                for sql in [claim, owned] {
                    let mut query = sqlx::query_scalar::<_, String>(sql)
                        .bind(instance)
                        .bind(channel);
                    if let Some(id) = only {
                        query = query.bind(id);
                    }
                    ids.extend(query.fetch_all(&self.writer).await?);
                }
                Ok(ids)
            }
        }
    };
}

/// Where the pending, undelivered asks of the channel `$2` are.
macro_rules! channel_deliveries {
    () => {
        " WHERE state = 'pending' AND delivered_at IS NULL AND channel = $2"
    };
}

/// The start of the claim statement; the caller closes its last bracket.
macro_rules! claim_deliveries {
    () => {
        "UPDATE asks SET delivery_owner = $1 \
         WHERE state = 'pending' AND delivered_at IS NULL AND (delivery_owner IS NULL \
           OR (delivery_owner <> $1 AND NOT EXISTS (SELECT 1 FROM leases \
               WHERE leases.name = 'instance/' || asks.delivery_owner \
                 AND leases.expires_at > $2))"
    };
}

#[cfg(test)]
mod tests {
    use std::cell::Cell;

    use super::*;

    fn lost() -> sqlx::Error {
        sqlx::Error::Io(std::io::Error::from(std::io::ErrorKind::ConnectionReset))
    }

    /// Runs `read` over a query failing with `errors` in turn, then
    /// succeeding; what it returned and how many tries it made.
    fn tries(errors: Vec<sqlx::Error>) -> (Result<u32, String>, u32) {
        let errors = std::cell::RefCell::new(errors.into_iter());
        let count = Cell::new(0);
        let result = block_on(read(|| {
            count.set(count.get() + 1);
            std::future::ready(errors.borrow_mut().next().map_or(Ok(7), Err))
        }));
        (result.map_err(|e| format!("{e:?}")), count.get())
    }

    fn block_on<F: std::future::Future>(future: F) -> F::Output {
        tokio::runtime::Builder::new_current_thread()
            .build()
            .expect("runtime")
            .block_on(future)
    }

    #[test]
    fn a_read_whose_connection_was_lost_is_tried_once_more() {
        assert_eq!(tries(vec![]), (Ok(7), 1));
        assert_eq!(tries(vec![lost()]), (Ok(7), 2));
        let (result, count) = tries(vec![lost(), lost()]);
        assert!(result.is_err(), "{result:?}");
        assert_eq!(count, 2, "tried once more, not again and again");
    }

    #[test]
    fn a_read_that_failed_for_another_reason_is_not_tried_again() {
        let (result, count) = tries(vec![sqlx::Error::RowNotFound]);
        assert!(result.is_err(), "{result:?}");
        assert_eq!(count, 1);
        assert!(!connection_lost(&sqlx::Error::PoolTimedOut));
        assert!(connection_lost(&lost()));
    }
}

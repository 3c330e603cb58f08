//! Lifecycles to rows and back: the only place that knows which column
//! holds which part of an [`AskLifecycle`].

use askbridge_core::lifecycle::{Answer, AskLifecycle, AskParts, State};
use askbridge_core::model::{CallbackEvent, Timestamp};
use askbridge_core::normalize::normalize_json;

use crate::store::{AskRow, PlaceRow, StoreError, WebhookRow};
use crate::wire::ask::CanonicalAsk;
use crate::wire::stored::{StoredAnswers, StoredState, core_answers, stored_answers};

/// Milliseconds for a database column (saturating).
pub(super) fn millis(at: Timestamp) -> i64 {
    i64::try_from(at.0).unwrap_or(i64::MAX)
}

/// A timestamp from a database column (negative reads as the epoch).
pub(super) fn timestamp(millis: i64) -> Timestamp {
    Timestamp(u64::try_from(millis).unwrap_or(0))
}

fn corrupt(id: &str, problem: impl ToString) -> StoreError {
    StoreError::Corrupt {
        id: id.to_owned(),
        problem: problem.to_string(),
    }
}

/// The error for a row whose `channel` column names no channel.
pub(super) fn unknown_channel(id: &str, channel: &str) -> StoreError {
    corrupt(id, format!("unknown channel {channel:?}"))
}

/// A pending ask's id that askbridge did not make (`ask_` and 32 lowercase
/// hex digits): it cannot be kept in memory.
pub(super) fn unreadable_id(id: &str) -> StoreError {
    corrupt(
        id,
        "not an id askbridge makes (ask_ and 32 lowercase hex digits)",
    )
}

/// The `state_json` column for a state.
pub(super) fn state_json(id: &str, state: &State) -> Result<String, StoreError> {
    serde_json::to_string(&StoredState::from(state)).map_err(|e| corrupt(id, e))
}

/// The `answers_json` column for an answer list.
pub(super) fn answers_json(id: &str, answers: &[Option<Answer>]) -> Result<String, StoreError> {
    serde_json::to_string(&stored_answers(answers)).map_err(|e| corrupt(id, e))
}

/// The canonical JSON of the lifecycle's ask: what `ask_json` holds and
/// what idempotent creates are compared by.
pub(super) fn ask_json(lifecycle: &AskLifecycle) -> Result<String, StoreError> {
    serde_json::to_string(&CanonicalAsk::from(lifecycle.ask()))
        .map_err(|e| corrupt(lifecycle.id(), e))
}

/// The row of a new ask, at version 0, delivered by `delivery_owner`.
pub(super) fn new_row(
    lifecycle: &AskLifecycle,
    idempotency_key: Option<String>,
    delivery_owner: &str,
) -> Result<AskRow, StoreError> {
    let id = lifecycle.id();
    let target = lifecycle.ask().target.as_ref();
    Ok(AskRow {
        id: id.to_owned(),
        ask_json: ask_json(lifecycle)?,
        target: target.map(ToString::to_string).unwrap_or_default(),
        channel: target
            .map(|t| t.place.channel().as_str())
            .unwrap_or_default()
            .to_owned(),
        state: lifecycle.state().as_str().to_owned(),
        state_json: state_json(id, lifecycle.state())?,
        answers_json: answers_json(id, lifecycle.answers())?,
        created_at: millis(lifecycle.created_at()),
        deadline: millis(lifecycle.deadline()),
        version: 0,
        idempotency_key,
        delivered_at: None,
        updated_at: millis(lifecycle.created_at()),
        delivery_owner: Some(delivery_owner.to_owned()),
        remind_at: lifecycle.next_reminder(0).map(millis),
        reminded: 0,
        thread_key: lifecycle
            .ask()
            .thread
            .as_ref()
            .map(|thread| thread.key.clone()),
        further_places: lifecycle
            .ask()
            .places()
            .enumerate()
            .skip(1)
            .map(|(place, target)| PlaceRow {
                target: target.to_string(),
                channel: target.place.channel().as_str().to_owned(),
                due_at: lifecycle
                    .ask()
                    .place_due(place, lifecycle.created_at())
                    .map(millis),
            })
            .collect(),
        // Due at the deadline, when the ask ends at the latest; an ask that
        // ends sooner has it brought forward (`Store::webhook_ended`).
        webhook: lifecycle.ask().callback.as_ref().map(|callback| {
            WebhookRow::new(
                id,
                CallbackEvent::Ended.as_str(),
                &callback.url,
                millis(lifecycle.deadline()),
                millis(lifecycle.created_at()),
            )
        }),
    })
}

/// Rebuilds the lifecycle a row holds.
pub(super) fn rebuild(row: &AskRow) -> Result<AskLifecycle, StoreError> {
    let id = row.id.as_str();
    let value: serde_json::Value =
        serde_json::from_str(&row.ask_json).map_err(|e| corrupt(id, e))?;
    let ask = normalize_json(&value)
        .map_err(|problems| {
            let listed: Vec<String> = problems
                .iter()
                .map(|p| format!("{}: {}", p.path, p.message))
                .collect();
            corrupt(id, format!("ask_json: {}", listed.join("; ")))
        })?
        .ask;
    let state: StoredState = serde_json::from_str(&row.state_json).map_err(|e| corrupt(id, e))?;
    let answers: StoredAnswers =
        serde_json::from_str(&row.answers_json).map_err(|e| corrupt(id, e))?;
    AskLifecycle::from_parts(AskParts {
        id: row.id.clone(),
        ask,
        created_at: timestamp(row.created_at),
        state: state.into(),
        answers: core_answers(answers),
    })
    .map_err(|e| corrupt(id, e))
}

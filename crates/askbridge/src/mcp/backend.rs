//! Where the MCP tools send asks: the bridge in this process, or a running
//! daemon over HTTP. Both give the same JSON back — the outcome once
//! an ask has ended, a `pending` status before — so the tools never know
//! which one they talk to.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use askbridge_core::lifecycle::{AskLifecycle, AskParts, Input, Step};
use askbridge_core::model::Timestamp;
use askbridge_core::model::{Ask, ChannelKind, Responder};
use askbridge_core::normalize::normalize_json;
use askbridge_core::outcome::Via;
use serde_json::{Map, Value, json};

use super::daemon::{DaemonClient, DaemonError};

/// Where a task's own choice of the host's form is kept: a record of the
/// ask on the host's channel.
const FORM_CHOICE: &str = "mcp/task-form";
use crate::bridge::{AskView, Bridge, BridgeError, MessageRef, NewAsk};
use crate::wire::api::AskResponse;
use crate::wire::ask::CanonicalAsk;
use crate::wire::outcome::OutcomeJson;

/// The outcome's fields, in order; a daemon's answer is cut down
/// to these so both backends give the same shape.
pub(crate) const OUTCOME_FIELDS: [&str; 10] = [
    "id",
    "status",
    "reason",
    "failure",
    "answers",
    "details",
    "answeredBy",
    "answeredAt",
    "text",
    "continuation",
];

/// The backend of the MCP tools. Cheap to clone.
#[derive(Debug, Clone)]
pub enum Backend {
    /// The bridge runs in this process.
    Local(Bridge),
    /// Forward to a running daemon (`askbridge serve`).
    Remote(DaemonClient),
}

/// An ask at one moment, as the tools report it.
#[derive(Debug, Clone, PartialEq)]
pub enum Snapshot {
    /// It ended: the outcome JSON.
    Ended(Value),
    /// It is still open: `{"id", "status": "pending", "to", "createdAt",
    /// "expiresAt", "answered", "open"}`.
    Pending(Value),
}

impl Snapshot {
    /// The JSON either way.
    pub fn json(&self) -> &Value {
        match self {
            Snapshot::Ended(json) | Snapshot::Pending(json) => json,
        }
    }
}

/// An ask as a task reports it: how it is now, what was asked, and when.
#[derive(Debug, Clone)]
pub struct Status {
    /// How it is now.
    pub snapshot: Snapshot,
    /// What was asked (normalised).
    pub ask: Ask,
    /// When it was created (RFC 3339).
    pub created_at: String,
}

/// A newly created ask.
#[derive(Debug, Clone)]
pub struct Created {
    /// Its id.
    pub id: String,
    /// Time left until its deadline, as of creation.
    pub remaining: Duration,
    /// How it is now (normally pending).
    pub snapshot: Snapshot,
}

/// Why a backend call failed.
#[derive(Debug, thiserror::Error)]
pub enum BackendError {
    /// No ask has this id.
    #[error("no ask with id {0:?}")]
    NotFound(String),
    /// The in-process bridge failed.
    #[error("the bridge failed")]
    Bridge(#[source] BridgeError),
    /// The daemon could not be reached or refused.
    #[error(transparent)]
    Daemon(DaemonError),
    /// An ask could not be written as JSON.
    #[error("cannot write the ask as JSON: {0}")]
    Encode(String),
}

impl From<BridgeError> for BackendError {
    fn from(error: BridgeError) -> BackendError {
        match error {
            BridgeError::NotFound(id) => BackendError::NotFound(id),
            other => BackendError::Bridge(other),
        }
    }
}

impl BackendError {
    /// Whether trying again soon may work: the daemon is unreachable or
    /// said it is unavailable (restarting, overloaded).
    pub fn is_transient(&self) -> bool {
        match self {
            BackendError::Daemon(DaemonError::Unreachable { .. }) => true,
            BackendError::Daemon(DaemonError::Refused { status, .. }) => {
                matches!(status, 502..=504)
            }
            _ => false,
        }
    }

    fn from_daemon(error: DaemonError, id: &str) -> BackendError {
        if error.is_not_found() {
            BackendError::NotFound(id.to_owned())
        } else {
            BackendError::Daemon(error)
        }
    }
}

impl Backend {
    /// Creates an ask (already normalised) and returns it as it is now.
    pub async fn create(&self, ask: &Ask) -> Result<Created, BackendError> {
        match self {
            Backend::Local(bridge) => {
                let (view, _) = bridge
                    .create(NewAsk {
                        ask: ask.clone(),
                        idempotency_key: None,
                    })
                    .await?;
                Ok(Created {
                    id: view.id.clone(),
                    remaining: remaining(view.deadline),
                    snapshot: local_snapshot(&view)?,
                })
            }
            Backend::Remote(client) => {
                let body = serde_json::to_value(CanonicalAsk::from(ask))
                    .map_err(|error| BackendError::Encode(error.to_string()))?;
                let answer = client
                    .create(&body, None)
                    .await
                    .map_err(BackendError::Daemon)?;
                let snapshot = remote_snapshot(client, answer)?;
                let id = snapshot
                    .json()
                    .get("id")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_owned();
                Ok(Created {
                    id,
                    remaining: Duration::from_secs(u64::from(ask.timeout_seconds)),
                    snapshot,
                })
            }
        }
    }

    /// The ask once it has ended, or as it is when `wait` has passed.
    pub async fn wait(&self, id: &str, wait: Duration) -> Result<Snapshot, BackendError> {
        match self {
            Backend::Local(bridge) => local_snapshot(&bridge.wait(id, wait).await?),
            Backend::Remote(client) => {
                let answer = client
                    .get(id, Some(wait))
                    .await
                    .map_err(|e| BackendError::from_daemon(e, id))?;
                remote_snapshot(client, answer)
            }
        }
    }

    /// The ask now, with what was asked and when, without waiting.
    pub async fn status(&self, id: &str) -> Result<Status, BackendError> {
        match self {
            Backend::Local(bridge) => {
                let view = bridge.get(id).await?;
                Ok(Status {
                    snapshot: local_snapshot(&view)?,
                    ask: view.ask,
                    created_at: view.created_at.rfc3339(),
                })
            }
            Backend::Remote(client) => {
                let answer = client
                    .get(id, None)
                    .await
                    .map_err(|e| BackendError::from_daemon(e, id))?;
                let protocol = |detail: String| {
                    BackendError::Daemon(DaemonError::Protocol {
                        url: client.url().to_owned(),
                        detail,
                    })
                };
                let ask = match answer.get("ask").map(normalize_json) {
                    Some(Ok(normalized)) => normalized.ask,
                    Some(Err(problems)) => {
                        return Err(protocol(format!(
                            "the daemon's ask {id} does not read back: {}",
                            problems
                                .iter()
                                .map(ToString::to_string)
                                .collect::<Vec<_>>()
                                .join("; ")
                        )));
                    }
                    None => {
                        return Err(protocol(format!("no ask in the daemon's answer for {id}")));
                    }
                };
                let created_at = answer
                    .get("createdAt")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_owned();
                Ok(Status {
                    snapshot: remote_snapshot(client, answer)?,
                    ask,
                    created_at,
                })
            }
        }
    }

    /// Records what the person did in the agent host's own dialog:
    /// `answers` by question id, or `None` to skip the ask. `name` is the
    /// host's (`claude-code`). Returns whether it was taken; an ask that
    /// ended meanwhile (answered elsewhere first) is not an error.
    pub async fn reply_from_host(
        &self,
        id: &str,
        answers: Option<Vec<(String, Vec<String>)>>,
        name: Option<String>,
    ) -> Result<bool, BackendError> {
        match self {
            Backend::Local(bridge) => {
                let from = Responder {
                    channel: ChannelKind::Host,
                    user_id: "host".to_owned(),
                    name,
                    place: None,
                };
                let input = match answers {
                    Some(answers) => Input::Answers {
                        from,
                        admitted: true,
                        answers,
                        via: Via::Host,
                    },
                    None => Input::Skip {
                        from,
                        admitted: true,
                    },
                };
                let (step, _) = bridge.handle(id, input).await?;
                Ok(!matches!(step, Step::Rejected(_)))
            }
            Backend::Remote(client) => {
                let mut body = json!({"via": "host", "user": {"id": "host", "name": name}});
                match answers {
                    Some(answers) => {
                        body["answers"] = Value::Object(
                            answers
                                .into_iter()
                                .map(|(id, values)| (id, json!(values)))
                                .collect(),
                        )
                    }
                    None => body["skip"] = Value::Bool(true),
                }
                let taken = match client.reply(id, &body).await {
                    Ok(_) => true,
                    Err(DaemonError::Refused { status: 409, .. }) => false,
                    Err(error) => return Err(BackendError::from_daemon(error, id)),
                };
                client.forget_host_key(id);
                Ok(taken)
            }
        }
    }

    /// What makes this backend's replies to ask `id` the host's, to keep in
    /// a round trip's state: a daemon's host key for the ask (`None` in
    /// process, where the host is known by how it calls).
    pub fn host_key(&self, id: &str) -> Option<String> {
        match self {
            Backend::Local(_) => None,
            Backend::Remote(client) => client.host_key(id),
        }
    }

    /// Whether an answer in the host's dialog can be recorded for ask
    /// `id`: always in process; through a daemon, while this forwarder
    /// holds the ask's host key.
    pub fn answers_as_host(&self, id: &str) -> bool {
        match self {
            Backend::Local(_) => true,
            Backend::Remote(client) => client.host_key(id).is_some(),
        }
    }

    /// Takes back a host key from a round trip's state.
    pub fn remember_host_key(&self, id: &str, key: &str) {
        if let Backend::Remote(client) = self {
            client.remember_host_key(id, key);
        }
    }

    /// Keeps with ask `id` whether its task asks for the host's form
    /// (`wanted`), so the choice outlives a restart. A daemon's forwarder
    /// keeps nothing: its tasks follow the configuration after a restart.
    pub async fn keep_form_choice(&self, id: &str, wanted: bool) -> Result<(), BackendError> {
        if let Backend::Local(bridge) = self {
            bridge
                .save_message_ref(&MessageRef {
                    ask_id: id.to_owned(),
                    channel: ChannelKind::Host,
                    conversation: FORM_CHOICE.to_owned(),
                    message_id: id.to_owned(),
                    extra: Some(json!({"form": wanted}).to_string()),
                })
                .await?;
        }
        Ok(())
    }

    /// What [`Backend::keep_form_choice`] kept for ask `id`, if anything.
    pub async fn form_choice(&self, id: &str) -> Result<Option<bool>, BackendError> {
        let Backend::Local(bridge) = self else {
            return Ok(None);
        };
        let refs = bridge.message_refs(id).await?;
        Ok(refs
            .iter()
            .find(|message| {
                message.channel == ChannelKind::Host && message.conversation == FORM_CHOICE
            })
            .and_then(|message| message.extra.as_deref())
            .and_then(|extra| serde_json::from_str::<Value>(extra).ok())
            .and_then(|extra| extra.get("form").and_then(Value::as_bool)))
    }

    /// The key for sealing what a client keeps for us (`ask_user`'s
    /// round-trip state): in process, the database's secret `name`, shared
    /// by every instance and kept across restarts; through a daemon, the
    /// key its clients share ([`DaemonClient::shared_key`]), so a new
    /// forwarder opens what an earlier one sealed.
    pub async fn sealing_key(&self, name: &str) -> Result<Vec<u8>, BackendError> {
        match self {
            Backend::Local(bridge) => Ok(bridge.secret(name).await?.into_bytes()),
            Backend::Remote(client) => Ok(client.shared_key()),
        }
    }

    /// Cancels a pending ask (an ended one is returned as it is).
    pub async fn cancel(&self, id: &str) -> Result<Snapshot, BackendError> {
        match self {
            Backend::Local(bridge) => local_snapshot(&bridge.cancel(id).await?),
            Backend::Remote(client) => {
                let answer = client
                    .cancel(id)
                    .await
                    .map_err(|e| BackendError::from_daemon(e, id))?;
                remote_snapshot(client, answer)
            }
        }
    }

    /// The outcome of an ask whose deadline has passed: its real outcome
    /// when the bridge has ended it, otherwise the timeout outcome the
    /// lifecycle gives at the deadline (with the partial answers the
    /// in-process bridge knows; a daemon's are not visible here).
    pub async fn expire(&self, id: &str, ask: &Ask) -> Result<Value, BackendError> {
        match self.wait(id, Duration::ZERO).await? {
            Snapshot::Ended(outcome) => Ok(outcome),
            Snapshot::Pending(_) => {
                let lifecycle = match self {
                    Backend::Local(bridge) => {
                        let view = bridge.get(id).await?;
                        let deadline = view.deadline;
                        let parts = AskParts {
                            id: view.id,
                            ask: view.ask,
                            created_at: view.created_at,
                            state: view.state,
                            answers: view.answers,
                        };
                        AskLifecycle::from_parts(parts)
                            .map(|machine| (machine, deadline))
                            .ok()
                    }
                    Backend::Remote(_) => None,
                };
                let (mut machine, deadline) = lifecycle.unwrap_or_else(|| {
                    let deadline = now();
                    let created = Timestamp(
                        deadline
                            .0
                            .saturating_sub(u64::from(ask.timeout_seconds) * 1_000),
                    );
                    (AskLifecycle::new(id, ask.clone(), created), deadline)
                });
                let outcome = machine.tick(deadline).or_else(|| machine.outcome());
                match outcome {
                    Some(outcome) => outcome_json(&OutcomeJson::from(&outcome)),
                    None => Err(BackendError::NotFound(id.to_owned())),
                }
            }
        }
    }
}

/// The current time as the core counts it.
fn now() -> Timestamp {
    let millis = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |since| {
            u64::try_from(since.as_millis()).unwrap_or(u64::MAX)
        });
    Timestamp(millis)
}

/// Time left until `deadline` (zero once it has passed).
fn remaining(deadline: Timestamp) -> Duration {
    Duration::from_millis(deadline.0.saturating_sub(now().0))
}

fn outcome_json(outcome: &OutcomeJson) -> Result<Value, BackendError> {
    serde_json::to_value(outcome).map_err(|error| BackendError::Encode(error.to_string()))
}

/// The snapshot of an in-process ask: the API's JSON for it
/// ([`AskResponse`]), cut down the same way as a daemon's.
fn local_snapshot(view: &AskView) -> Result<Snapshot, BackendError> {
    let body = serde_json::to_value(AskResponse::from(view))
        .map_err(|error| BackendError::Encode(error.to_string()))?;
    snapshot_of(body).map_err(BackendError::Encode)
}

/// The snapshot of a daemon's answer.
fn remote_snapshot(client: &DaemonClient, answer: Value) -> Result<Snapshot, BackendError> {
    snapshot_of(answer).map_err(|detail| {
        BackendError::Daemon(DaemonError::Protocol {
            url: client.url().to_owned(),
            detail,
        })
    })
}

/// An ask as the API shows it, cut to what the tools report: the outcome
/// fields once it has ended, the pending status without the echoed ask
/// (and creation warnings) before.
fn snapshot_of(answer: Value) -> Result<Snapshot, String> {
    let Value::Object(mut fields) = answer else {
        return Err(format!("expected a JSON object, got {answer}"));
    };
    if !fields.get("id").is_some_and(Value::is_string) {
        return Err(format!("no ask id in {}", Value::Object(fields)));
    }
    let status = fields
        .get("status")
        .and_then(Value::as_str)
        .map(str::to_owned);
    match status.as_deref() {
        Some("pending") => {
            fields.remove("ask");
            fields.remove("warnings");
            Ok(Snapshot::Pending(Value::Object(fields)))
        }
        Some("answered" | "no_answer") => {
            let outcome: Map<String, Value> = OUTCOME_FIELDS
                .iter()
                .filter_map(|&key| fields.remove(key).map(|value| (key.to_owned(), value)))
                .collect();
            Ok(Snapshot::Ended(Value::Object(outcome)))
        }
        other => Err(format!("unknown ask status {other:?}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn client() -> DaemonClient {
        DaemonClient::new("http://127.0.0.1:1").expect("valid url")
    }

    #[test]
    fn a_daemon_outcome_is_cut_to_the_spec_fields() {
        let answer = json!({
            "id": "ask_1", "status": "answered", "reason": null,
            "answers": {"q": ["A"]}, "details": [], "answeredBy": null,
            "answeredAt": "2026-12-02T12:00:00Z", "text": "Q: A", "continuation": "…",
            "ask": {"questions": []}, "to": "web", "createdAt": "2026-12-02T11:59:00Z",
        });
        let Ok(Snapshot::Ended(outcome)) = remote_snapshot(&client(), answer) else {
            panic!("expected an ended snapshot");
        };
        let keys: Vec<&str> = outcome
            .as_object()
            .map(|o| o.keys().map(String::as_str).collect())
            .unwrap_or_default();
        assert_eq!(
            keys,
            [
                "id",
                "status",
                "reason",
                "answers",
                "details",
                "answeredBy",
                "answeredAt",
                "text",
                "continuation"
            ]
        );
    }

    #[test]
    fn a_pending_daemon_answer_drops_the_echoed_ask() {
        let answer =
            json!({"id": "ask_1", "status": "pending", "ask": {}, "to": "web", "open": ["q"]});
        assert_eq!(
            remote_snapshot(&client(), answer).ok(),
            Some(Snapshot::Pending(
                json!({"id": "ask_1", "status": "pending", "to": "web", "open": ["q"]})
            ))
        );
    }

    #[test]
    fn a_daemon_answer_without_id_or_status_is_a_protocol_error() {
        for answer in [
            json!([]),
            json!({"status": "pending"}),
            json!({"id": "a", "status": "odd"}),
        ] {
            assert!(matches!(
                remote_snapshot(&client(), answer),
                Err(BackendError::Daemon(DaemonError::Protocol { .. }))
            ));
        }
    }
}

//! How an ask's state and answers are stored: the JSON in the `state_json`
//! and `answers_json` columns of the `asks` table (owned by
//! [`crate::store`]).
//!
//! These are their own serde types with `From` conversions both ways, so
//! the core's [`State`], [`Answer`] and [`Responder`] never become the
//! database format. Times are milliseconds since the Unix epoch. Changing
//! a shape here needs a migration for rows already written.

use askbridge_core::lifecycle::{Answer, State};
use askbridge_core::model::ChannelKind;
use askbridge_core::model::Timestamp;
use askbridge_core::model::{Responder, Target};
use askbridge_core::outcome::Via;
use serde::{Deserialize, Serialize};

/// A stored [`State`]: `{"state": "answered", "by": {…}, "at": 1764676800000}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum StoredState {
    /// Waiting for answers.
    Pending,
    /// Every question was answered.
    Answered {
        /// Who completed the ask.
        by: StoredResponder,
        /// When, in milliseconds since the epoch.
        at: u64,
    },
    /// The person skipped the ask.
    Skipped {
        /// Who skipped.
        by: StoredResponder,
        /// When, in milliseconds since the epoch.
        at: u64,
    },
    /// The deadline passed.
    TimedOut,
    /// The agent cancelled the ask, or its host decided without it.
    Cancelled {
        /// When, in milliseconds since the epoch.
        at: u64,
        /// Answered in the agent host's own prompt; written only when so.
        #[serde(default, rename = "inHost", skip_serializing_if = "std::ops::Not::not")]
        in_host: bool,
    },
    /// The ask could not be delivered.
    DeliveryFailed {
        /// The platform's reason.
        reason: String,
        /// When, in milliseconds since the epoch.
        at: u64,
    },
    /// Answered here after the agent's host had decided in its own prompt.
    #[serde(rename_all = "camelCase")]
    Overtaken {
        /// Who gave the late answer.
        by: StoredResponder,
        /// When they gave it, in milliseconds since the epoch.
        answered_at: u64,
        /// When the host showed it had decided, in milliseconds since the
        /// epoch.
        at: u64,
    },
}

/// A stored [`Responder`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StoredResponder {
    /// The channel the answer came through.
    pub channel: StoredChannel,
    /// The platform's user id.
    pub user_id: String,
    /// A display name, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// The place of the ask it came from (`slack:C0123`), when the ask
    /// has several.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub place: Option<String>,
}

/// A stored [`ChannelKind`]: `telegram`, `discord`, `slack`, `feishu`,
/// `matrix`, `teams`, `email`, `web`, `host`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum StoredChannel {
    /// Telegram.
    Telegram,
    /// Discord.
    Discord,
    /// Slack.
    Slack,
    /// Feishu / Lark.
    Feishu,
    /// Matrix.
    Matrix,
    /// Microsoft Teams.
    Teams,
    /// Email.
    Email,
    /// The web page.
    Web,
    /// The agent host's own dialog.
    Host,
}

impl StoredChannel {
    /// Reads the lower-case name [`ChannelKind::as_str`] writes (the
    /// `channel` columns).
    pub fn parse(name: &str) -> Option<StoredChannel> {
        match name {
            "telegram" => Some(StoredChannel::Telegram),
            "discord" => Some(StoredChannel::Discord),
            "slack" => Some(StoredChannel::Slack),
            "feishu" => Some(StoredChannel::Feishu),
            "matrix" => Some(StoredChannel::Matrix),
            "teams" => Some(StoredChannel::Teams),
            "email" => Some(StoredChannel::Email),
            "web" => Some(StoredChannel::Web),
            "host" => Some(StoredChannel::Host),
            _ => None,
        }
    }
}

/// A stored [`Answer`]: `{"options": [0], "via": "button"}`,
/// `{"text": "…", "via": "text"}`, `{"via": "web"}` (skipped).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StoredAnswer {
    /// Chosen option indices, ascending.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub options: Vec<usize>,
    /// The person's own words.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// How the answer came in.
    pub via: StoredVia,
}

/// A stored [`Via`]: `button`, `select`, `text`, `modal`, `web`, `host`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum StoredVia {
    /// A native button.
    Button,
    /// A select menu.
    Select,
    /// A typed reply.
    Text,
    /// A modal dialog or forced reply.
    Modal,
    /// The web page or the HTTP API.
    Web,
    /// The agent host's own dialog.
    Host,
}

/// The `answers_json` column: one entry per question, `null` while open.
pub type StoredAnswers = Vec<Option<StoredAnswer>>;

/// The stored form of a whole answer list.
pub fn stored_answers(answers: &[Option<Answer>]) -> StoredAnswers {
    answers
        .iter()
        .map(|answer| answer.as_ref().map(StoredAnswer::from))
        .collect()
}

/// The core answer list of a stored one.
pub fn core_answers(stored: StoredAnswers) -> Vec<Option<Answer>> {
    stored
        .into_iter()
        .map(|answer| answer.map(Answer::from))
        .collect()
}

impl From<&State> for StoredState {
    fn from(state: &State) -> StoredState {
        match state {
            State::Pending => StoredState::Pending,
            State::Answered { by, at } => StoredState::Answered {
                by: by.into(),
                at: at.0,
            },
            State::Skipped { by, at } => StoredState::Skipped {
                by: by.into(),
                at: at.0,
            },
            State::TimedOut => StoredState::TimedOut,
            State::Cancelled { at, in_host } => StoredState::Cancelled {
                at: at.0,
                in_host: *in_host,
            },
            State::DeliveryFailed { reason, at } => StoredState::DeliveryFailed {
                reason: reason.clone(),
                at: at.0,
            },
            State::Overtaken {
                by,
                answered_at,
                at,
            } => StoredState::Overtaken {
                by: by.into(),
                answered_at: answered_at.0,
                at: at.0,
            },
        }
    }
}

impl From<StoredState> for State {
    fn from(stored: StoredState) -> State {
        match stored {
            StoredState::Pending => State::Pending,
            StoredState::Answered { by, at } => State::Answered {
                by: by.into(),
                at: Timestamp(at),
            },
            StoredState::Skipped { by, at } => State::Skipped {
                by: by.into(),
                at: Timestamp(at),
            },
            StoredState::TimedOut => State::TimedOut,
            StoredState::Cancelled { at, in_host } => State::Cancelled {
                at: Timestamp(at),
                in_host,
            },
            StoredState::DeliveryFailed { reason, at } => State::DeliveryFailed {
                reason,
                at: Timestamp(at),
            },
            StoredState::Overtaken {
                by,
                answered_at,
                at,
            } => State::Overtaken {
                by: by.into(),
                answered_at: Timestamp(answered_at),
                at: Timestamp(at),
            },
        }
    }
}

impl From<&Responder> for StoredResponder {
    fn from(responder: &Responder) -> StoredResponder {
        StoredResponder {
            channel: responder.channel.into(),
            user_id: responder.user_id.clone(),
            name: responder.name.clone(),
            place: responder.place.as_ref().map(ToString::to_string),
        }
    }
}

impl From<StoredResponder> for Responder {
    fn from(stored: StoredResponder) -> Responder {
        Responder {
            channel: stored.channel.into(),
            user_id: stored.user_id,
            name: stored.name,
            place: stored
                .place
                .and_then(|place| Target::parse(&place).ok())
                .map(|target| target.place),
        }
    }
}

impl From<ChannelKind> for StoredChannel {
    fn from(kind: ChannelKind) -> StoredChannel {
        match kind {
            ChannelKind::Telegram => StoredChannel::Telegram,
            ChannelKind::Discord => StoredChannel::Discord,
            ChannelKind::Slack => StoredChannel::Slack,
            ChannelKind::Feishu => StoredChannel::Feishu,
            ChannelKind::Matrix => StoredChannel::Matrix,
            ChannelKind::Teams => StoredChannel::Teams,
            ChannelKind::Email => StoredChannel::Email,
            ChannelKind::Web => StoredChannel::Web,
            ChannelKind::Host => StoredChannel::Host,
        }
    }
}

impl From<StoredChannel> for ChannelKind {
    fn from(stored: StoredChannel) -> ChannelKind {
        match stored {
            StoredChannel::Telegram => ChannelKind::Telegram,
            StoredChannel::Discord => ChannelKind::Discord,
            StoredChannel::Slack => ChannelKind::Slack,
            StoredChannel::Feishu => ChannelKind::Feishu,
            StoredChannel::Matrix => ChannelKind::Matrix,
            StoredChannel::Teams => ChannelKind::Teams,
            StoredChannel::Email => ChannelKind::Email,
            StoredChannel::Web => ChannelKind::Web,
            StoredChannel::Host => ChannelKind::Host,
        }
    }
}

impl From<&Answer> for StoredAnswer {
    fn from(answer: &Answer) -> StoredAnswer {
        StoredAnswer {
            options: answer.options.clone(),
            text: answer.text.clone(),
            via: answer.via.into(),
        }
    }
}

impl From<StoredAnswer> for Answer {
    fn from(stored: StoredAnswer) -> Answer {
        Answer {
            options: stored.options,
            text: stored.text,
            via: stored.via.into(),
        }
    }
}

impl From<Via> for StoredVia {
    fn from(via: Via) -> StoredVia {
        match via {
            Via::Button => StoredVia::Button,
            Via::Select => StoredVia::Select,
            Via::Text => StoredVia::Text,
            Via::Modal => StoredVia::Modal,
            Via::Web => StoredVia::Web,
            Via::Host => StoredVia::Host,
        }
    }
}

impl From<StoredVia> for Via {
    fn from(stored: StoredVia) -> Via {
        match stored {
            StoredVia::Button => Via::Button,
            StoredVia::Select => Via::Select,
            StoredVia::Text => Via::Text,
            StoredVia::Modal => Via::Modal,
            StoredVia::Web => Via::Web,
            StoredVia::Host => Via::Host,
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::*;

    /// Writes `state`, compares the JSON with `expect`, reads it back.
    #[track_caller]
    fn check_state(state: State, expect: Value) {
        let written = serde_json::to_value(StoredState::from(&state)).expect("serialise");
        assert_eq!(written, expect);
        let read: StoredState = serde_json::from_value(written).expect("deserialise");
        assert_eq!(State::from(read), state);
    }

    #[test]
    fn stored_states_round_trip() {
        let alice = Responder {
            channel: ChannelKind::Telegram,
            user_id: "42".into(),
            name: Some("Alice".into()),
            place: None,
        };
        check_state(State::Pending, json!({"state": "pending"}));
        check_state(
            State::Answered {
                by: alice.clone(),
                at: Timestamp(5),
            },
            json!({"state": "answered", "by": {"channel": "telegram", "userId": "42", "name": "Alice"}, "at": 5}),
        );
        check_state(
            State::Skipped {
                by: Responder {
                    name: None,
                    ..alice.clone()
                },
                at: Timestamp(6),
            },
            json!({"state": "skipped", "by": {"channel": "telegram", "userId": "42"}, "at": 6}),
        );
        check_state(State::TimedOut, json!({"state": "timed_out"}));
        check_state(
            State::Cancelled {
                at: Timestamp(7),
                in_host: false,
            },
            json!({"state": "cancelled", "at": 7}),
        );
        check_state(
            State::Cancelled {
                at: Timestamp(8),
                in_host: true,
            },
            json!({"state": "cancelled", "at": 8, "inHost": true}),
        );
        check_state(
            State::DeliveryFailed {
                reason: "chat not found".into(),
                at: Timestamp(8),
            },
            json!({"state": "delivery_failed", "reason": "chat not found", "at": 8}),
        );
        check_state(
            State::Overtaken {
                by: alice,
                answered_at: Timestamp(9),
                at: Timestamp(10),
            },
            json!({"state": "overtaken", "by": {"channel": "telegram", "userId": "42", "name": "Alice"}, "answeredAt": 9, "at": 10}),
        );
    }

    #[test]
    fn stored_answers_round_trip() {
        let answers = vec![
            None,
            Some(Answer {
                options: vec![0, 2],
                text: Some("mine".into()),
                via: Via::Select,
            }),
            Some(Answer::skipped(Via::Web)),
        ];
        let written = serde_json::to_value(stored_answers(&answers)).expect("serialise");
        assert_eq!(
            written,
            json!([null, {"options": [0, 2], "text": "mine", "via": "select"}, {"via": "web"}])
        );
        let read: StoredAnswers = serde_json::from_value(written).expect("deserialise");
        assert_eq!(core_answers(read), answers);
    }

    #[test]
    fn stored_channel_names_match_the_core() {
        for kind in ChannelKind::ALL {
            assert_eq!(
                StoredChannel::parse(kind.as_str()).map(ChannelKind::from),
                Some(kind)
            );
        }
        assert_eq!(StoredChannel::parse("irc"), None);
    }
}

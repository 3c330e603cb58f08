//! The outcome as the agent receives it (docs/outcome.md), over HTTP, MCP and
//! `askbridge ask`.

use askbridge_core::model::Responder;
use askbridge_core::outcome::{Detail, Outcome};
use serde::Serialize;
use serde_json::{Map, Value};

/// The outcome JSON.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct OutcomeJson {
    /// `ask_…`.
    pub id: String,
    /// `answered` or `no_answer`.
    pub status: &'static str,
    /// `timeout`, `skipped`, `cancelled`, `delivery_failed`, or null.
    pub reason: Option<&'static str>,
    /// The platform's words for a delivery failure.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub failure: Option<String>,
    /// Question id → strings, in question order.
    pub answers: Map<String, Value>,
    /// One entry per answered question.
    pub details: Vec<DetailJson>,
    /// Who answered, or null.
    pub answered_by: Option<ResponderJson>,
    /// RFC 3339 time the ask ended.
    pub answered_at: String,
    /// One line per question.
    pub text: String,
    /// The answer as a user message.
    pub continuation: String,
}

/// One question's answer in detail.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DetailJson {
    /// The question id.
    pub id: String,
    /// Chosen labels, verbatim.
    pub selected: Vec<String>,
    /// Values of the chosen options (the text of a text question).
    pub values: Vec<String>,
    /// The person's own words on a choice question, or null.
    pub other: Option<String>,
    /// `button`, `select`, `text`, `modal`, `web`.
    pub via: &'static str,
    /// Agent-choice prompts of the chosen options.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub prompts: Vec<String>,
    /// The optional question was skipped.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub skipped: bool,
}

/// Who answered.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ResponderJson {
    /// `telegram`, `discord`, `slack`, `web`.
    pub channel: &'static str,
    /// The platform's user id.
    pub user_id: String,
    /// Display name, or null.
    pub name: Option<String>,
}

impl From<&Responder> for ResponderJson {
    fn from(responder: &Responder) -> ResponderJson {
        ResponderJson {
            channel: responder.channel.as_str(),
            user_id: responder.user_id.clone(),
            name: responder.name.clone(),
        }
    }
}

impl From<&Detail> for DetailJson {
    fn from(detail: &Detail) -> DetailJson {
        DetailJson {
            id: detail.id.clone(),
            selected: detail.selected.clone(),
            values: detail.values.clone(),
            other: detail.other.clone(),
            via: detail.via.as_str(),
            prompts: detail.prompts.clone(),
            skipped: detail.skipped,
        }
    }
}

impl From<&Outcome> for OutcomeJson {
    fn from(outcome: &Outcome) -> OutcomeJson {
        OutcomeJson {
            id: outcome.id.clone(),
            status: outcome.status.as_str(),
            reason: outcome.reason.map(|r| r.as_str()),
            failure: outcome.failure.clone(),
            answers: outcome
                .answers
                .iter()
                .map(|(id, values)| (id.clone(), Value::from(values.clone())))
                .collect(),
            details: outcome.details.iter().map(DetailJson::from).collect(),
            answered_by: outcome.answered_by.as_ref().map(ResponderJson::from),
            answered_at: outcome.answered_at.rfc3339(),
            text: outcome.text.clone(),
            continuation: outcome.continuation.clone(),
        }
    }
}

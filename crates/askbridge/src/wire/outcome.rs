//! The outcome as the agent receives it (docs/outcome.md), over HTTP, MCP and
//! `askbridge ask`.

use askbridge_core::model::Responder;
use askbridge_core::outcome::{Detail, Outcome};
use serde::Serialize;
use serde_json::{Map, Value};
use utoipa::ToSchema;

use crate::wire::names::{AnswerVia, Channel, NoAnswerReason, OutcomeStatus};

/// What the agent gets back when an ask ends (docs/outcome.md).
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(as = Outcome)]
pub struct OutcomeJson {
    /// The ask id (`ask_…`).
    pub id: String,
    /// `answered` or `no_answer`.
    #[schema(value_type = OutcomeStatus)]
    pub status: &'static str,
    /// `timeout`, `skipped`, `cancelled`, `delivery_failed`, or null when
    /// answered.
    #[schema(value_type = Option<NoAnswerReason>, required = true)]
    pub reason: Option<&'static str>,
    /// The platform's reason for a delivery failure.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub failure: Option<String>,
    /// Question id → strings, in question order: labels verbatim, the
    /// person's own words, `yes`/`no`, the text, or `[]` when skipped.
    /// Every question that has an answer, whatever the status (a timed-out
    /// ask reports the partial answers given before it ended).
    #[schema(value_type = std::collections::BTreeMap<String, Vec<String>>)]
    pub answers: Map<String, Value>,
    /// One entry per answered question, in question order.
    pub details: Vec<DetailJson>,
    /// Who completed (or skipped) the ask; null for a timeout, a
    /// cancellation or a delivery failure.
    #[schema(required = true)]
    pub answered_by: Option<ResponderJson>,
    /// When the ask ended (RFC 3339); for a timeout, the deadline.
    #[schema(format = DateTime)]
    pub answered_at: String,
    /// One line per answered question, `Header: a, b`; for no answer the
    /// first line says why (`No answer (timeout)`).
    pub text: String,
    /// The answer written as the user's next message, ready to hand to the
    /// model.
    pub continuation: String,
}

/// How one question was answered.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ToSchema)]
#[schema(as = Detail)]
pub struct DetailJson {
    /// The question id.
    pub id: String,
    /// Chosen labels, verbatim.
    pub selected: Vec<String>,
    /// Values of the chosen options (the text of a text question).
    pub values: Vec<String>,
    /// The person's own words on a choice or confirm question, or null.
    #[schema(required = true)]
    pub other: Option<String>,
    /// `button`, `select`, `text`, `modal`, `web`.
    #[schema(value_type = AnswerVia)]
    pub via: &'static str,
    /// Agent-choice prompts of the chosen options.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub prompts: Vec<String>,
    /// The optional question was skipped (its answer is `[]`); written
    /// only when true.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub skipped: bool,
}

/// Who answered.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(as = Responder)]
pub struct ResponderJson {
    /// `telegram`, `discord`, `slack`, `web`.
    #[schema(value_type = Channel)]
    pub channel: &'static str,
    /// The platform's user id.
    pub user_id: String,
    /// Display name, or null.
    #[schema(required = true)]
    pub name: Option<String>,
    /// The place it was answered in (`slack:C0123`), or null when not
    /// known (an answer over HTTP, the agent host's own dialog).
    #[schema(required = true)]
    pub place: Option<String>,
}

impl From<&Responder> for ResponderJson {
    fn from(responder: &Responder) -> ResponderJson {
        ResponderJson {
            channel: responder.channel.as_str(),
            user_id: responder.user_id.clone(),
            name: responder.name.clone(),
            place: responder.place.as_ref().map(ToString::to_string),
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

//! The HTTP API's response bodies (docs/http-api.md): the ask as the API shows it,
//! reply results, lists and errors. Request bodies are read by hand in
//! [`crate::http`], because accepting several shapes and naming the path
//! of each mistake is the point there; [`super::request`] describes them.
//!
//! Built from core values with `From` conversions; the core types
//! themselves never become JSON. An ask's response is built from the
//! bridge's [`crate::bridge::AskView`] by a conversion kept with the
//! bridge, and the health check's [`Database`] from the store's backend
//! by one kept with the store: those modules come after this one.

use askbridge_core::normalize::Problem;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::wire::ask::{CallbackEventName, CanonicalAsk};
use crate::wire::names::PendingStatus;
use crate::wire::outcome::OutcomeJson;

/// One ask as the API returns it: pending, or ended with its outcome.
#[derive(Debug, Clone, Serialize, ToSchema)]
#[serde(untagged)]
pub enum AskResponse {
    /// Still waiting for answers.
    Pending(PendingAsk),
    /// Ended: the outcome plus the ask.
    Ended(EndedAsk),
}

/// A pending ask: still waiting for answers.
#[derive(Debug, Clone, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct PendingAsk {
    /// The ask id (`ask_…`).
    pub id: String,
    /// Always `pending`.
    #[schema(value_type = PendingStatus)]
    pub status: &'static str,
    /// The normalised ask, in its canonical form.
    pub ask: CanonicalAsk,
    /// Where it was posted (`web`, `telegram:…`): the ask's own `to`, or
    /// the default target when it names none.
    pub to: String,
    /// When it was created (RFC 3339).
    #[schema(format = DateTime)]
    pub created_at: String,
    /// When it times out (RFC 3339).
    #[schema(format = DateTime)]
    pub expires_at: String,
    /// Ids of the questions answered so far.
    pub answered: Vec<String>,
    /// Ids of the questions still open.
    pub open: Vec<String>,
    /// When the ask's reminders are sent while nobody answers (RFC 3339),
    /// earliest first; absent when it has none.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    #[schema(value_type = Vec<String>, format = DateTime)]
    pub remind_at: Vec<String>,
    /// Fixes the normaliser made (only in the response that created the ask).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<ProblemJson>,
    /// Every place the ask is posted to, and how it stands there (only in
    /// `GET /v1/asks/{id}`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub places: Vec<PlaceJson>,
    /// Only in the response that created the ask (never to a retry with
    /// its `Idempotency-Key`, which anyone who saw the key could send):
    /// the key that makes a reply the agent host's own (header
    /// `Askbridge-Host-Key`), which may answer for anyone — but never an
    /// approval (`"approval": true`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub host_key: Option<String>,
    /// Its webhook deliveries (only in `GET /v1/asks/{id}`, for an ask
    /// with a `callbackUrl`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub callback: Option<CallbackJson>,
}

/// An ended ask: the outcome's fields, then the ask.
#[derive(Debug, Clone, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct EndedAsk {
    /// The outcome: `id`, `status` (`answered` / `no_answer`), `reason`,
    /// `answers`, `details`, `answeredBy`, `answeredAt`, `text`,
    /// `continuation`.
    #[serde(flatten)]
    pub outcome: OutcomeJson,
    /// The normalised ask, in its canonical form.
    pub ask: CanonicalAsk,
    /// Where it was posted.
    pub to: String,
    /// When it was created (RFC 3339).
    #[schema(format = DateTime)]
    pub created_at: String,
    /// Fixes the normaliser made (only in the response that created the ask).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<ProblemJson>,
    /// Every place the ask was posted to, and how it stands there (only
    /// in `GET /v1/asks/{id}`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub places: Vec<PlaceJson>,
    /// Its webhook deliveries (only in `GET /v1/asks/{id}`, for an ask
    /// with a `callbackUrl`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub callback: Option<CallbackJson>,
}

/// An ask's webhook and how its deliveries stand.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ToSchema)]
#[schema(as = Callback)]
pub struct CallbackJson {
    /// The ask's `callbackUrl`.
    pub url: String,
    /// The events sent there (`ask.ended` always).
    pub events: Vec<CallbackEventName>,
    /// One per event that happened, oldest first.
    pub deliveries: Vec<CallbackDelivery>,
}

/// One webhook delivery: an event, sent until the receiver took it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct CallbackDelivery {
    /// `whd_…`: sent as `askbridge-delivery` and `Idempotency-Key`, the
    /// same in every attempt.
    pub id: String,
    /// The event.
    pub event: CallbackEventName,
    /// `waiting` (an `ask.ended` delivery of a pending ask), `pending`
    /// (being sent, or to be tried again at `nextAttemptAt`), `delivered`,
    /// `gone` (the receiver answered `410`), `failed` (given up after a
    /// day).
    #[schema(value_type = String, example = "delivered")]
    pub state: &'static str,
    /// Attempts made so far.
    pub attempts: u32,
    /// The receiver's last HTTP status, when it answered.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_status: Option<u16>,
    /// What went wrong last, when something did.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_error: Option<String>,
    /// When the next attempt is due (RFC 3339), while `pending`.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(format = DateTime)]
    pub next_attempt_at: Option<String>,
    /// When it was delivered (RFC 3339).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(format = DateTime)]
    pub delivered_at: Option<String>,
}

/// One place of an ask: `{"target": "slack:C0123@U0456", "state": "posted"}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ToSchema)]
#[schema(as = AskPlace)]
pub struct PlaceJson {
    /// The place's target.
    pub target: String,
    /// `pending` (not posted yet), `posted`, `escalated` (an escalation
    /// step's place, posted), `reminded` (posted, and a reminder was sent),
    /// `closed` (the ask ended and
    /// the message says so), `delivery_failed` (it could not be posted
    /// there), `not_posted` (the ask ended before it was).
    #[schema(value_type = String, example = "posted")]
    pub state: &'static str,
}

impl AskResponse {
    /// Adds how the ask stands in each of its places.
    pub fn with_places(mut self, places: Vec<PlaceJson>) -> AskResponse {
        match &mut self {
            AskResponse::Pending(pending) => pending.places = places,
            AskResponse::Ended(ended) => ended.places = places,
        }
        self
    }

    /// Adds the ask's webhook deliveries.
    pub fn with_callback(mut self, callback: Option<CallbackJson>) -> AskResponse {
        match &mut self {
            AskResponse::Pending(pending) => pending.callback = callback,
            AskResponse::Ended(ended) => ended.callback = callback,
        }
        self
    }

    /// Whether the ask has ended.
    pub fn is_ended(&self) -> bool {
        matches!(self, AskResponse::Ended(_))
    }

    /// The ask id.
    pub fn id(&self) -> &str {
        match self {
            AskResponse::Pending(pending) => &pending.id,
            AskResponse::Ended(ended) => &ended.outcome.id,
        }
    }

    /// Adds the key that makes a reply the host's (pending asks only).
    pub fn with_host_key(mut self, key: String) -> AskResponse {
        if let AskResponse::Pending(pending) = &mut self {
            pending.host_key = Some(key);
        }
        self
    }

    /// Adds the normaliser's warnings.
    pub fn with_warnings(mut self, warnings: &[Problem]) -> AskResponse {
        let list: Vec<ProblemJson> = warnings.iter().map(ProblemJson::from).collect();
        match &mut self {
            AskResponse::Pending(pending) => pending.warnings = list,
            AskResponse::Ended(ended) => ended.warnings = list,
        }
        self
    }
}

/// `{"asks": [...]}`: the answer of `GET /v1/asks`.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct AskList {
    /// Newest first, each as `GET /v1/asks/{id}` shows it.
    pub asks: Vec<AskResponse>,
}

/// What `POST /v1/asks/{id}/reply` did with accepted input.
#[derive(Debug, Clone, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ReplyResponse {
    /// What the reply did.
    pub result: ReplyResult,
    /// The ask after the reply.
    pub ask: AskResponse,
    /// Ids of the questions still open.
    pub still_open: Vec<String>,
    /// Open questions where the reply fitted several options.
    pub clarify: Vec<ClarifyJson>,
}

/// What a reply did: `accepted` (answers taken, maybe none; the ask is
/// still pending), `answered` (the ask is complete) or `ended` (the reply
/// ended it otherwise, e.g. "skip").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum ReplyResult {
    /// Answers were taken; the ask is still pending.
    Accepted,
    /// The ask is complete.
    Answered,
    /// The reply ended the ask otherwise (`skip`).
    Ended,
}

/// A question to ask again, naming the options the reply could mean.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ToSchema)]
#[schema(as = Clarify)]
pub struct ClarifyJson {
    /// The question id.
    pub id: String,
    /// The candidate labels, verbatim.
    pub candidates: Vec<String>,
}

/// What `GET /v1/hooks` says: the `[hooks]` settings.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct HookSettings {
    /// Where a hook without `--to` asks; `null`: the default target.
    pub to: Option<String>,
    /// Seconds a call waits for the person, by who asks: `claude-code`,
    /// `subagent` (Claude Code's subagents), `codex`, `copilot`, `cursor`.
    pub hold_seconds: std::collections::BTreeMap<String, u32>,
    /// Tools never asked about in a chat: the host decides in its
    /// terminal.
    pub never_ask: Vec<String>,
    /// When an agent finishes its turn, its last message is posted and
    /// the reply handed back as its next instruction.
    #[serde(default)]
    pub continue_after_stop: bool,
    /// When an agent finishes its turn, its last message is posted as a
    /// notice that waits for nothing.
    #[serde(default)]
    pub notify_on_stop: bool,
}

impl From<&crate::config::HooksConfig> for HookSettings {
    fn from(hooks: &crate::config::HooksConfig) -> HookSettings {
        HookSettings {
            to: hooks.to.as_ref().map(ToString::to_string),
            hold_seconds: hooks
                .hold_seconds
                .iter()
                .map(|(key, seconds)| ((*key).to_owned(), *seconds))
                .collect(),
            never_ask: hooks.never_ask.clone(),
            continue_after_stop: hooks.continue_after_stop,
            notify_on_stop: hooks.notify_on_stop,
        }
    }
}

/// What `GET /healthz` says: up, which instance this is, on which
/// database, and which bot connections it runs now.
#[derive(Debug, Clone, Serialize, ToSchema)]
#[schema(as = Health)]
pub struct HealthResponse {
    /// Always `ok`.
    #[schema(value_type = String, example = "ok")]
    pub status: &'static str,
    /// This instance's name.
    pub instance: String,
    /// The database this instance uses.
    pub database: Database,
    /// The bot connections this instance runs now (Telegram long polling
    /// `telegram/<bot id>`, the Discord gateway `discord/gateway`); with
    /// several instances, the others run elsewhere.
    pub owns: Vec<String>,
}

/// A database backend.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum Database {
    /// SQLite: embedded, one instance.
    Sqlite,
    /// PostgreSQL: several instances may share it.
    Postgres,
}

/// A notice posted.
#[derive(Debug, Clone, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct NoticeResponse {
    /// Where it was posted.
    pub to: String,
    /// How many messages it took (its text, then its block's).
    pub messages: usize,
    /// What was fixed or ignored in the request.
    pub warnings: Vec<ProblemJson>,
}

/// One problem with an ask: where and what.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ToSchema)]
#[schema(as = Problem)]
pub struct ProblemJson {
    /// JSON path in the request body (`questions[1].options`).
    pub path: String,
    /// What was wrong, or what was fixed.
    pub message: String,
}

impl From<&Problem> for ProblemJson {
    fn from(problem: &Problem) -> ProblemJson {
        ProblemJson {
            path: problem.path.clone(),
            message: problem.message.clone(),
        }
    }
}

/// `{"error": {...}}`: every error the API returns, with a 4xx status
/// for the caller's mistakes and 500 only when storage failed.
#[derive(Debug, Clone, Serialize, ToSchema)]
#[schema(as = Error)]
pub struct ErrorResponse {
    /// The error.
    pub error: ErrorBody,
}

/// The error itself.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct ErrorBody {
    /// A stable snake_case code (`invalid_ask`, `not_found`).
    pub code: &'static str,
    /// A sentence for people.
    pub message: String,
    /// Where in the request the problem is (a JSON path into the body such
    /// as `questions[0].options`, a query parameter, `id`,
    /// `Idempotency-Key`), or null.
    #[schema(required = true)]
    pub path: Option<String>,
    /// Every problem, when there are several (`invalid_ask`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub errors: Vec<ProblemJson>,
}

#[cfg(test)]
mod tests {
    use askbridge_core::outcome::{Reason, Status};
    use serde_json::{Value, json};

    use super::*;
    use crate::wire::{assert_fits, fits_schema};

    #[test]
    fn api_no_answer_and_error_shapes() {
        let outcome = OutcomeJson {
            id: "ask_1".to_owned(),
            status: Status::NoAnswer.as_str(),
            reason: Some(Reason::DeliveryFailed.as_str()),
            failure: Some("chat not found".to_owned()),
            answers: serde_json::Map::new(),
            details: Vec::new(),
            answered_by: None,
            answered_at: "2027-01-15T08:00:00Z".to_owned(),
            text: "No answer (delivery failed: chat not found)".to_owned(),
            continuation: "The user did not answer.".to_owned(),
        };
        let json = serde_json::to_value(&outcome).expect("json");
        assert_eq!(json["answeredBy"], Value::Null);
        assert_fits::<OutcomeJson>(&json);
        let mut outcome = json;
        outcome["reason"] = json!("no_reason");
        assert!(fits_schema::<OutcomeJson>(&outcome).is_err(), "{outcome}");

        for errors in [Vec::new(), vec![Problem::new("questions", "none")]] {
            let body = ErrorResponse {
                error: ErrorBody {
                    code: "invalid_ask",
                    message: "none".to_owned(),
                    path: None,
                    errors: errors.iter().map(ProblemJson::from).collect(),
                },
            };
            let json = serde_json::to_value(body).expect("json");
            assert_eq!(json["error"]["path"], Value::Null);
            assert_fits::<ErrorResponse>(&json);
        }
    }
}

//! An ask as the HTTP API shows it ([`crate::wire::api`]), built from its
//! [`AskView`]. The response bodies are wire types, below the bridge; the
//! conversions from the bridge's view live here, with the higher of the two.

use askbridge_core::lifecycle::{Clarify, Progress, Step};
use askbridge_core::outcome::Status;

use super::AskView;
use crate::wire::api::{
    AskResponse, ClarifyJson, EndedAsk, PendingAsk, ReplyResponse, ReplyResult,
};
use crate::wire::ask::CanonicalAsk;
use crate::wire::outcome::OutcomeJson;

impl From<&AskView> for AskResponse {
    fn from(view: &AskView) -> AskResponse {
        let ask = CanonicalAsk::from(&view.ask);
        let to = view.target.to_string();
        let created_at = view.created_at.rfc3339();
        match &view.outcome {
            Some(outcome) => AskResponse::Ended(EndedAsk {
                outcome: OutcomeJson::from(outcome),
                ask,
                to,
                created_at,
                warnings: Vec::new(),
                places: Vec::new(),
                callback: None,
            }),
            None => {
                let (answered, open): (Vec<_>, Vec<_>) = view
                    .ask
                    .questions
                    .iter()
                    .enumerate()
                    .partition(|(index, _)| view.answers.get(*index).is_some_and(Option::is_some));
                AskResponse::Pending(PendingAsk {
                    id: view.id.clone(),
                    // Ended without an outcome cannot happen; show the state
                    // rather than pretend.
                    status: view.state.as_str(),
                    ask,
                    to,
                    created_at,
                    expires_at: view.deadline.rfc3339(),
                    answered: answered.into_iter().map(|(_, q)| q.id.clone()).collect(),
                    open: open.into_iter().map(|(_, q)| q.id.clone()).collect(),
                    remind_at: view
                        .ask
                        .remind
                        .iter()
                        .flat_map(|remind| remind.times(view.created_at, view.deadline))
                        .map(|at| at.rfc3339())
                        .collect(),
                    warnings: Vec::new(),
                    places: Vec::new(),
                    host_key: None,
                    callback: None,
                })
            }
        }
    }
}

impl ReplyResponse {
    /// The response for an accepted step (`Progress` or `Finished`);
    /// `None` for a rejection, which the HTTP layer turns into an error.
    pub fn from_step(step: &Step, view: &AskView) -> Option<ReplyResponse> {
        let question_id = |index: usize| {
            view.ask
                .questions
                .get(index)
                .map(|q| q.id.clone())
                .unwrap_or_default()
        };
        let ask = AskResponse::from(view);
        match step {
            Step::Rejected(_) => None,
            Step::Progress(Progress {
                still_open,
                clarify,
                ..
            }) => Some(ReplyResponse {
                result: ReplyResult::Accepted,
                ask,
                still_open: still_open.iter().map(|&i| question_id(i)).collect(),
                clarify: clarify
                    .iter()
                    .map(
                        |Clarify {
                             question,
                             candidates,
                             ..
                         }| ClarifyJson {
                            id: question_id(*question),
                            candidates: candidates.clone(),
                        },
                    )
                    .collect(),
            }),
            Step::Finished(outcome) => Some(ReplyResponse {
                result: match outcome.status {
                    Status::Answered => ReplyResult::Answered,
                    Status::NoAnswer => ReplyResult::Ended,
                },
                ask,
                still_open: Vec::new(),
                clarify: Vec::new(),
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use askbridge_core::lifecycle::AskLifecycle;
    use askbridge_core::lifecycle::{Answer, Input, State, UnknownItems};
    use askbridge_core::model::Responder;
    use askbridge_core::model::Timestamp;
    use askbridge_core::model::{ChannelKind, Target};
    use askbridge_core::normalize::{Problem, normalize_json};
    use askbridge_core::outcome::Via;
    use serde_json::json;

    use super::*;
    use crate::wire::assert_fits;

    fn view() -> AskView {
        let ask = normalize_json(&json!({"title": "T", "questions": [
            {"id": "a", "header": "A", "question": "A?", "options": ["X", "Y"]},
            {"id": "b", "header": "B", "question": "B?", "type": "text"}
        ]}))
        .expect("valid")
        .ask;
        AskView {
            id: "ask_1".to_owned(),
            ask,
            target: Target::parse("web").expect("target"),
            created_at: Timestamp::from_secs(1_800_000_000),
            deadline: Timestamp::from_secs(1_800_000_900),
            state: State::Pending,
            answers: vec![
                Some(Answer {
                    options: vec![1],
                    text: None,
                    via: Via::Web,
                }),
                None,
            ],
            outcome: None,
            late: None,
        }
    }

    #[test]
    fn api_pending_ask_shape() {
        let json = serde_json::to_value(AskResponse::from(&view())).expect("json");
        assert_eq!(json["id"], "ask_1");
        assert_eq!(json["status"], "pending");
        assert_eq!(json["to"], "web");
        assert_eq!(json["createdAt"], "2027-01-15T08:00:00Z");
        assert_eq!(json["expiresAt"], "2027-01-15T08:15:00Z");
        assert_eq!(json["answered"], json!(["a"]));
        assert_eq!(json["open"], json!(["b"]));
        assert_eq!(json["ask"]["questions"][0]["id"], "a");
        assert!(json.get("warnings").is_none());
        assert_fits::<AskResponse>(&json);
        let warned = AskResponse::from(&view()).with_warnings(&[Problem::new("to", "fixed")]);
        let json = serde_json::to_value(warned).expect("json");
        assert_eq!(
            json["warnings"],
            json!([{"path": "to", "message": "fixed"}])
        );
        assert_fits::<AskResponse>(&json);
    }

    #[test]
    fn api_ended_ask_shape() {
        let mut view = view();
        let mut machine = AskLifecycle::new("ask_1", view.ask.clone(), view.created_at);
        let step = machine.handle(
            Input::Reply {
                from: Responder {
                    channel: ChannelKind::Web,
                    user_id: "web".to_owned(),
                    name: None,
                    place: None,
                },
                admitted: true,
                text: "Q1: 1\nQ2: soon".to_owned(),
                unknown_items: UnknownItems::OwnWords,
            },
            Timestamp::from_secs(1_800_000_010),
        );
        view.outcome = machine.outcome();
        view.state = machine.state().clone();
        let reply = ReplyResponse::from_step(&step, &view).expect("accepted");
        assert_eq!(reply.result, ReplyResult::Answered);
        let json = serde_json::to_value(&reply).expect("json");
        let ask = &json["ask"];
        assert_eq!(ask["status"], "answered");
        assert_eq!(ask["answers"], json!({"a": ["X"], "b": ["soon"]}));
        assert_eq!(ask["answeredBy"]["channel"], "web");
        assert_eq!(ask["to"], "web");
        assert_eq!(ask["createdAt"], "2027-01-15T08:00:00Z");
        assert_eq!(ask["ask"]["title"], "T");
        assert_eq!(json["stillOpen"], json!([]));
        assert_fits::<ReplyResponse>(&json);
    }
}

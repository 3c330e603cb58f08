//! The agent host's own dialog: an ask shown as an MCP elicitation form
//! (`elicitation/create`) while it is also posted to its channel.
//!
//! - [`form`] maps an ask onto the restricted form schema hosts draw:
//!   `single` → a titled single-select enum (the recommended option as its
//!   default), `multi` → a titled multi-select, `text` / `textarea` →
//!   string, `confirm` → boolean, each with the header as title and the
//!   question as description. Choice questions also get an "Other" string
//!   field, since a host cannot take own words in an enum.
//! - [`answers`] reads an accepted form back as answers by question id, the
//!   same strings the HTTP API takes.
//! - [`HostDialog`] sends the form to the client of one tool call and turns
//!   its reply into a [`HostReply`]; [`Pending`] cancels it
//!   (`notifications/cancelled`) when the ask was answered elsewhere.
//! - A client that only opens links (URL-mode elicitation), or an ask no
//!   form can hold, gets a link to the ask's own web page (`/#ask=<id>`)
//!   instead, when there is a page and it may answer the ask; once the ask
//!   ends, [`Pending::complete`] tells the client
//!   (`notifications/elicitation/complete`).
//!
//! Only this module knows the elicitation schema; the answer goes through
//! the same lifecycle as every channel's (`via: "host"`).

use std::collections::BTreeMap;
use std::sync::Arc;

use askbridge_core::model::{Ask, ChannelKind, Choice, Question, QuestionKind, Responder, Target};
use rmcp::model::{
    CancelledNotificationParam, ClientCapabilities, ClientResult, CustomNotification,
    ElicitRequest, ElicitRequestParams, ElicitResult, ElicitationAction, ElicitationSchema,
    InputRequest, InputRequests, RequestId, ServerNotification, ServerRequest,
};
use rmcp::service::PeerRequestOptions;
use rmcp::{Peer, RoleServer};
use serde_json::{Map, Value, json};

use crate::web::PAGE_USER;

/// The `inputRequests` key of the host's form.
pub const FORM_KEY: &str = "form";

/// The `inputRequests` key of the link to the ask's page, for hosts that
/// open links rather than forms.
pub const LINK_KEY: &str = "link";

/// The suffix of a choice question's "Other" field: `deploy_target.other`.
const OTHER_SUFFIX: &str = ".other";

/// The form for an ask: the message above it and its schema.
#[derive(Debug, Clone, PartialEq)]
pub struct Form {
    /// What the host shows above the fields: the ask's title, else its
    /// only question.
    pub message: String,
    /// The restricted JSON Schema: an object of primitive fields, one per
    /// question (plus "Other" fields).
    pub schema: Value,
}

/// The form for `ask`.
pub fn form(ask: &Ask) -> Form {
    let mut properties = Map::new();
    let mut required = Vec::new();
    for question in &ask.questions {
        properties.insert(question.id.clone(), field(question));
        if question.kind.has_options() {
            properties.insert(other_key(question), other_field(question));
        } else if question.required {
            required.push(Value::String(question.id.clone()));
        }
    }
    let message = message(ask);
    let mut schema = json!({"type": "object", "properties": properties});
    if !required.is_empty() {
        schema["required"] = Value::Array(required);
    }
    Form { message, schema }
}

/// What the host shows above the form or link: the ask's title, else its
/// only question.
fn message(ask: &Ask) -> String {
    match (&ask.title, ask.questions.as_slice()) {
        (Some(title), _) if !title.trim().is_empty() => title.clone(),
        (_, [only]) => only.text.clone(),
        _ => format!("The agent has {} questions for you.", ask.questions.len()),
    }
}

/// One question's field.
fn field(question: &Question) -> Value {
    let mut field = match question.kind {
        QuestionKind::Single => json!({
            "type": "string",
            "oneOf": question.options.iter().map(choice).collect::<Vec<_>>(),
        }),
        QuestionKind::Multi => json!({
            "type": "array",
            "items": {"anyOf": question.options.iter().map(choice).collect::<Vec<_>>()},
        }),
        QuestionKind::Text | QuestionKind::Textarea => json!({"type": "string"}),
        QuestionKind::Confirm => json!({"type": "boolean"}),
    };
    field["title"] = Value::String(title(question));
    field["description"] = Value::String(question.text.clone());
    if let Some(default) = default(question) {
        field["default"] = default;
    }
    field
}

/// A choice as a titled enum member: its label, with its description.
fn choice(choice: &Choice) -> Value {
    let label = choice.display_label();
    let title = match &choice.description {
        Some(description) if !description.trim().is_empty() => format!("{label} — {description}"),
        _ => label.to_owned(),
    };
    json!({"const": label, "title": title})
}

/// The header, else the question.
fn title(question: &Question) -> String {
    if question.header.trim().is_empty() {
        question.text.clone()
    } else {
        question.header.clone()
    }
}

/// The field's default: the recommended option(s), else the question's own
/// default.
fn default(question: &Question) -> Option<Value> {
    let recommended: Vec<&str> = question
        .options
        .iter()
        .filter(|choice| choice.recommended)
        .map(Choice::display_label)
        .collect();
    let given = question.default.as_deref().unwrap_or_default();
    match question.kind {
        QuestionKind::Single => recommended
            .first()
            .copied()
            .or_else(|| given.first().map(String::as_str))
            .map(|label| Value::String(label.to_owned())),
        QuestionKind::Multi if !recommended.is_empty() => Some(json!(recommended)),
        QuestionKind::Multi => (!given.is_empty()).then(|| json!(given)),
        QuestionKind::Text | QuestionKind::Textarea => given.first().map(|text| json!(text)),
        QuestionKind::Confirm => given.first().map(|yes| json!(yes == "yes")),
    }
}

fn other_key(question: &Question) -> String {
    format!("{}{OTHER_SUFFIX}", question.id)
}

/// The "Other" field of a choice question.
fn other_field(question: &Question) -> Value {
    json!({
        "type": "string",
        "title": format!("{} — other", title(question)),
        "description": "Your own answer instead of the choices above (optional).",
    })
}

/// An accepted form as answers by question id, in the strings the
/// lifecycle takes (labels, own words, `yes` / `no`). A question the form
/// left empty is absent (it stays open); own words win over a choice.
pub fn answers(ask: &Ask, content: &Value) -> Vec<(String, Vec<String>)> {
    let text = |value: Option<&Value>| {
        value
            .and_then(Value::as_str)
            .map(str::trim)
            .filter(|text| !text.is_empty())
            .map(str::to_owned)
    };
    ask.questions
        .iter()
        .filter_map(|question| {
            let value = content.get(&question.id);
            let own = text(content.get(other_key(question)));
            let strings = match question.kind {
                QuestionKind::Single | QuestionKind::Text | QuestionKind::Textarea => {
                    own.or_else(|| text(value)).map(|one| vec![one])
                }
                QuestionKind::Multi => {
                    let mut picked: Vec<String> = value
                        .and_then(Value::as_array)
                        .into_iter()
                        .flatten()
                        .filter_map(|item| text(Some(item)))
                        .collect();
                    picked.extend(own);
                    (!picked.is_empty()).then_some(picked)
                }
                QuestionKind::Confirm => value
                    .and_then(Value::as_bool)
                    .map(|yes| vec![if yes { "yes" } else { "no" }.to_owned()]),
            };
            strings.map(|strings| (question.id.clone(), strings))
        })
        .collect()
}

/// What the person did in the host's dialog.
#[derive(Debug, Clone, PartialEq)]
pub enum HostReply {
    /// Filled in and sent the form: answers by question id.
    Answered(Vec<(String, Vec<String>)>),
    /// Declined: the ask is skipped.
    Declined,
    /// Dismissed the dialog, or the host could not show it: the ask stays
    /// open on its channel.
    Dismissed,
    /// Opened the ask's page from the link: the answer comes from there.
    Opened,
}

impl HostReply {
    /// What the client's `result` for `ask`'s form means.
    pub fn of(ask: &Ask, result: &ElicitResult) -> HostReply {
        match result.action {
            ElicitationAction::Accept => HostReply::Answered(answers(
                ask,
                result.content.as_ref().unwrap_or(&Value::Null),
            )),
            ElicitationAction::Decline => HostReply::Declined,
            // Cancel, and whatever later protocol versions add.
            _ => HostReply::Dismissed,
        }
    }
}

/// Whether a client with `capabilities` shows forms: it declared form
/// elicitation (an empty `elicitation` capability counts as forms).
pub fn shows_forms(capabilities: &ClientCapabilities) -> bool {
    capabilities
        .elicitation
        .as_ref()
        .is_some_and(|elicitation| elicitation.form.is_some() || elicitation.url.is_none())
}

/// Whether a client with `capabilities` opens links (URL-mode elicitation).
pub fn opens_links(capabilities: &ClientCapabilities) -> bool {
    capabilities
        .elicitation
        .as_ref()
        .is_some_and(|elicitation| elicitation.url.is_some())
}

/// The `elicitation/create` request linking to ask `id`'s own page on the
/// web page at `page`; `id` is also the elicitation's id.
fn link_request(ask: &Ask, id: &str, page: &str) -> ElicitRequest {
    ElicitRequest::new(ElicitRequestParams::UrlElicitationParams {
        meta: None,
        message: format!("{} — answer on askbridge's page.", message(ask)),
        url: format!("{}/#ask={id}", page.trim_end_matches('/')),
        elicitation_id: id.to_owned(),
    })
}

/// What the host is asked to show for an ask.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shown {
    /// Its form.
    Form,
    /// A link to its own page.
    Link,
}

/// What to show in a host for ask `id`: its form when the host shows
/// forms (`forms`) and one can hold it, else a link to its page when the
/// host opens links (`page`: where it reaches the web page) and the page
/// may answer it (`snapshot`, the ask as the backend reports it); else
/// nothing.
pub fn host_request(
    ask: &Ask,
    id: &str,
    snapshot: &Value,
    forms: bool,
    page: Option<&str>,
) -> Option<(ElicitRequest, Shown)> {
    if forms && let Some(form) = form_request(ask) {
        return Some((form, Shown::Form));
    }
    let page = page.filter(|_| page_may_answer(snapshot))?;
    Some((link_request(ask, id, page), Shown::Link))
}

/// [`host_request`] as the `inputRequests` of a task or of a round trip:
/// one request, under [`FORM_KEY`] or [`LINK_KEY`].
pub fn input_requests(
    ask: &Ask,
    id: &str,
    snapshot: &Value,
    forms: bool,
    page: Option<&str>,
) -> Option<InputRequests> {
    let (request, shown) = host_request(ask, id, snapshot, forms, page)?;
    let key = match shown {
        Shown::Form => FORM_KEY,
        Shown::Link => LINK_KEY,
    };
    Some(BTreeMap::from([(
        key.to_owned(),
        InputRequest::Elicitation(request),
    )]))
}

/// What the person did with what [`input_requests`] asked, as the client
/// reports it in `responses` (a task's update, a retried call's
/// `inputResponses`); `None` when it reports nothing under [`FORM_KEY`] or
/// [`LINK_KEY`] (other keys are ignored). Accepting the link means the
/// page was opened. A response that is no elicitation result is an error
/// naming its key.
pub fn reply_in(
    ask: &Ask,
    mut responses: BTreeMap<String, Value>,
) -> Result<Option<HostReply>, String> {
    let (key, response) = match (responses.remove(FORM_KEY), responses.remove(LINK_KEY)) {
        (Some(response), _) => (FORM_KEY, response),
        (None, Some(response)) => (LINK_KEY, response),
        (None, None) => return Ok(None),
    };
    let result: ElicitResult = serde_json::from_value(response).map_err(|error| {
        format!("inputResponses.{key}: expected the elicitation's result: {error}")
    })?;
    Ok(Some(match HostReply::of(ask, &result) {
        HostReply::Answered(_) if key == LINK_KEY => HostReply::Opened,
        reply => reply,
    }))
}

/// Whether the web page may answer the ask in `snapshot` (by the core's
/// rule, [`Target::may_answer`]), so a link to its page is worth showing:
/// not when `to` names the one person who may answer.
pub fn page_may_answer(snapshot: &Value) -> bool {
    // The page answers as the HTTP API's default person.
    let page = Responder {
        channel: ChannelKind::Web,
        user_id: PAGE_USER.to_owned(),
        name: None,
        place: None,
    };
    snapshot
        .get("to")
        .and_then(Value::as_str)
        .and_then(|to| Target::parse(to).ok())
        .is_some_and(|target| target.may_answer(&page, true))
}

/// The `elicitation/create` request showing `ask`'s form; `None` (logged)
/// when the form does not fit the restricted schema.
pub fn form_request(ask: &Ask) -> Option<ElicitRequest> {
    let Form { message, schema } = form(ask);
    let requested_schema: ElicitationSchema = match serde_json::from_value(schema) {
        Ok(schema) => schema,
        Err(error) => {
            tracing::warn!(%error, "the ask does not fit an elicitation form");
            return None;
        }
    };
    Some(ElicitRequest::new(
        ElicitRequestParams::FormElicitationParams {
            meta: None,
            message,
            requested_schema,
        },
    ))
}

/// What the client of a request can be asked in the host (a task's
/// `input_required`, a round trip's `inputRequests`).
#[derive(Debug, Clone, Default)]
pub(super) struct ClientDialog {
    /// It shows forms.
    pub forms: bool,
    /// Where it reaches the web page, when it opens links and there is one.
    pub page: Option<String>,
}

/// The MCP client of one tool call, when it can show forms or open links.
#[derive(Debug, Clone)]
pub struct HostDialog {
    peer: Peer<RoleServer>,
    /// The client's name (`claude-code`), reported as who answered.
    pub name: Option<String>,
    forms: bool,
    links: bool,
    /// Where this client reaches the web page (`http://127.0.0.1:8790`),
    /// when there is one: the link for clients that open links.
    page: Option<String>,
}

impl HostDialog {
    /// The dialog of `peer`'s client, when it declared elicitation: it
    /// [`shows_forms`], or opens links.
    pub fn of(peer: &Peer<RoleServer>) -> Option<HostDialog> {
        let info = peer.peer_info()?;
        let forms = shows_forms(&info.capabilities);
        let links = opens_links(&info.capabilities);
        if !forms && !links {
            return None;
        }
        Some(HostDialog {
            peer: peer.clone(),
            name: Some(info.client_info.name.clone()).filter(|name| !name.trim().is_empty()),
            forms,
            links,
            page: None,
        })
    }

    /// The same dialog, with the web page at `page` (`None`: no page).
    pub fn with_page(mut self, page: Option<String>) -> HostDialog {
        self.page = page;
        self
    }

    /// Whether there is anything to show in it: forms, or links to a page.
    pub fn can_show(&self) -> bool {
        self.forms || (self.links && self.page.is_some())
    }

    /// Shows ask `id` ([`host_request`]: its form, or a link to its page;
    /// `snapshot` is the ask as the backend reports it). Returns the
    /// request, to close, and the person's reply as a future; `None` when
    /// there is nothing to show or it could not be sent (the protocol
    /// version forbids server requests, the connection closed).
    pub async fn show(
        &self,
        ask: &Ask,
        id: &str,
        snapshot: &Value,
    ) -> Option<(Pending, impl Future<Output = HostReply> + Send + use<>)> {
        let page = self.page.as_deref().filter(|_| self.links);
        let (request, shown) = host_request(ask, id, snapshot, self.forms, page)?;
        let elicitation_id = (shown == Shown::Link).then(|| id.to_owned());
        let handle = match self
            .peer
            .send_cancellable_request(
                ServerRequest::ElicitRequest(request),
                PeerRequestOptions::no_options(),
            )
            .await
        {
            Ok(handle) => handle,
            Err(error) => {
                tracing::debug!(%error, "the ask is not shown in the host's dialog");
                return None;
            }
        };
        let linked = elicitation_id.is_some();
        let pending = Pending {
            peer: self.peer.clone(),
            id: Arc::new(handle.id.clone()),
            elicitation_id,
        };
        let ask = ask.clone();
        let reply = async move {
            match handle.await_response().await {
                Ok(ClientResult::ElicitResult(result)) => match HostReply::of(&ask, &result) {
                    HostReply::Answered(_) if linked => HostReply::Opened,
                    reply => reply,
                },
                Ok(other) => {
                    tracing::warn!(?other, "unexpected reply to an elicitation");
                    HostReply::Dismissed
                }
                Err(error) => {
                    tracing::debug!(%error, "the host's dialog ended without an answer");
                    HostReply::Dismissed
                }
            }
        };
        Some((pending, reply))
    }
}

/// An elicitation request sent to the client.
#[derive(Debug, Clone)]
pub struct Pending {
    peer: Peer<RoleServer>,
    id: Arc<RequestId>,
    /// A link's elicitation id.
    elicitation_id: Option<String>,
}

impl Pending {
    /// Tells the client to close the dialog it has not answered: the ask
    /// ended elsewhere.
    pub async fn close(&self, reason: &str) {
        let param =
            CancelledNotificationParam::new(Some((*self.id).clone()), Some(reason.to_owned()));
        if let Err(error) = self.peer.notify_cancelled(param).await {
            tracing::debug!(%error, "could not close the host's dialog");
        }
    }

    /// Tells the client that the page its person opened from the link is
    /// done with (`notifications/elicitation/complete`); nothing for a form.
    pub async fn complete(&self) {
        let Some(elicitation_id) = &self.elicitation_id else {
            return;
        };
        let notification = ServerNotification::CustomNotification(CustomNotification::new(
            "notifications/elicitation/complete",
            Some(json!({ "elicitationId": elicitation_id })),
        ));
        if let Err(error) = self.peer.send_notification(notification).await {
            tracing::debug!(%error, "could not tell the host the link is done with");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use askbridge_core::normalize::normalize_json;

    fn ask(json: Value) -> Ask {
        normalize_json(&json).expect("valid ask").ask
    }

    fn every_kind() -> Ask {
        ask(json!({
            "title": "Release 2.4",
            "questions": [
                {"id": "deploy", "header": "Deploy", "question": "Where should I deploy?",
                 "options": [{"label": "Staging (Recommended)", "description": "safe, reversible"},
                             {"label": "Production"}]},
                {"id": "notify", "header": "Notify", "question": "Who should I tell?",
                 "type": "multi", "options": ["Team", "On-call"]},
                {"id": "notes", "header": "Notes", "question": "Anything else?",
                 "type": "textarea", "required": false},
                {"id": "go", "header": "Go", "question": "Ship it today?", "type": "confirm"}
            ]
        }))
    }

    #[test]
    fn host_form_schema_for_every_kind_of_question() {
        let form = form(&every_kind());
        assert_eq!(form.message, "Release 2.4");
        assert_eq!(
            form.schema,
            json!({
                "type": "object",
                "properties": {
                    "deploy": {
                        "type": "string",
                        "oneOf": [
                            {"const": "Staging", "title": "Staging — safe, reversible"},
                            {"const": "Production", "title": "Production"}
                        ],
                        "title": "Deploy",
                        "description": "Where should I deploy?",
                        "default": "Staging"
                    },
                    "deploy.other": {
                        "type": "string",
                        "title": "Deploy — other",
                        "description": "Your own answer instead of the choices above (optional)."
                    },
                    "notify": {
                        "type": "array",
                        "items": {"anyOf": [
                            {"const": "Team", "title": "Team"},
                            {"const": "On-call", "title": "On-call"}
                        ]},
                        "title": "Notify",
                        "description": "Who should I tell?"
                    },
                    "notify.other": {
                        "type": "string",
                        "title": "Notify — other",
                        "description": "Your own answer instead of the choices above (optional)."
                    },
                    "notes": {"type": "string", "title": "Notes", "description": "Anything else?"},
                    "go": {"type": "boolean", "title": "Go", "description": "Ship it today?"}
                },
                "required": ["go"]
            })
        );
        // rmcp's restricted-schema model takes it as it is.
        let typed: ElicitationSchema =
            serde_json::from_value(form.schema.clone()).expect("a valid elicitation schema");
        assert_eq!(
            serde_json::to_value(&typed).expect("serialise")["properties"]["deploy"]["default"],
            json!("Staging")
        );
    }

    #[test]
    fn host_form_message_without_a_title() {
        let one =
            ask(json!({"questions": [{"question": "Which region?", "options": ["EU", "US"]}]}));
        assert_eq!(form(&one).message, "Which region?");
    }

    #[test]
    fn the_page_may_answer_asks_meant_for_anyone_where_they_were_posted() {
        for (to, linkable) in [
            ("web", true),
            ("web:review", true),
            ("telegram:-100123/7", true),
            ("slack:C1", true),
            ("telegram:-100123@42", false),
            ("discord:user/42", true),
            ("web@alice", false),
            ("not a target", false),
        ] {
            let snapshot = json!({"id": "ask_1", "status": "pending", "to": to});
            assert_eq!(page_may_answer(&snapshot), linkable, "{to}");
        }
        assert!(!page_may_answer(&json!({"id": "ask_1"})));
    }

    #[test]
    fn host_form_answers_read_back() {
        let ask = every_kind();
        let table = [
            (
                json!({"deploy": "Production", "notify": ["Team"], "notes": " ", "go": true}),
                vec![
                    ("deploy", vec!["Production"]),
                    ("notify", vec!["Team"]),
                    ("go", vec!["yes"]),
                ],
            ),
            (
                json!({"deploy": "Staging", "deploy.other": "canary first",
                       "notify": [], "notify.other": "QA", "go": false, "notes": "later"}),
                vec![
                    ("deploy", vec!["canary first"]),
                    ("notify", vec!["QA"]),
                    ("notes", vec!["later"]),
                    ("go", vec!["no"]),
                ],
            ),
            (json!({}), vec![]),
            (Value::Null, vec![]),
        ];
        for (content, expect) in table {
            let expect: Vec<(String, Vec<String>)> = expect
                .into_iter()
                .map(|(id, values)| {
                    (
                        id.to_owned(),
                        values.into_iter().map(str::to_owned).collect(),
                    )
                })
                .collect();
            assert_eq!(answers(&ask, &content), expect, "{content}");
        }
    }
}

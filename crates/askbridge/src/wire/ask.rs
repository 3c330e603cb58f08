//! The canonical ask JSON (docs/ask.md): what `askbridge normalize` prints and
//! what the HTTP and MCP interfaces echo back, as its own serde types.
//!
//! Only `From<&Ask>` is provided: JSON coming in goes through
//! [`askbridge_core::normalize::normalize_json`], which reads this form (and
//! every other dialect) and validates it. Normalising the canonical JSON of
//! a normalised ask gives the same ask and no warnings.

use askbridge_core::model::{Ask, CallbackEvent, Choice, Context, Question, QuestionKind, Thread};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

/// A normalised ask in its canonical form (docs/ask.md): what askbridge
/// echoes back. Sending it again gives the same ask and no warnings.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct CanonicalAsk {
    /// Short title shown above the questions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// A preformatted block shown above the questions (a command, a diff,
    /// a plan).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context: Option<CanonicalContext>,
    /// The thread it is posted in with the other asks of the same key,
    /// where the platform has threads.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thread: Option<CanonicalThread>,
    /// 1–12 questions, ids unique.
    pub questions: Vec<CanonicalQuestion>,
    /// Seconds the ask stays open (30–3600).
    pub timeout_seconds: u32,
    /// The target (`telegram:123/7@42`), or the list of places it is
    /// posted to at once; absent means the default target.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub to: Option<CanonicalTo>,
    /// Where it is passed on to when still open a while after it was
    /// created, earliest first; `[]`: no escalation, whatever the
    /// configured default; absent: the configured default.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub escalate: Option<Vec<CanonicalEscalation>>,
    /// Seconds after creation of the first reminder while nobody answers;
    /// 0: no reminder, whatever the configured default; absent: the
    /// configured default.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub remind_after_seconds: Option<u32>,
    /// Seconds between reminders after the first (at most 3 in all).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub remind_every_seconds: Option<u32>,
    /// Where askbridge POSTs the outcome, signed, when the ask ends
    /// (docs/webhooks.md): an `https://` URL on a host the daemon's
    /// `[webhooks] allowed_hosts` lists (`http://` only for a listed
    /// loopback host).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(max_length = 2048)]
    pub callback_url: Option<String>,
    /// What else `callbackUrl` is told of besides `ask.ended` (always
    /// sent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub callback_events: Option<Vec<CallbackEventName>>,
    /// `true`: an approval, answered only by the one person each place
    /// names; absent: whoever a place admits answers.
    #[serde(default, skip_serializing_if = "is_false")]
    pub approval: bool,
}

/// An event an ask's `callbackUrl` is told of.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub enum CallbackEventName {
    /// A place took the ask.
    #[serde(rename = "ask.posted")]
    Posted,
    /// A reminder was sent.
    #[serde(rename = "ask.reminded")]
    Reminded,
    /// It was passed on to an escalation step's place.
    #[serde(rename = "ask.escalated")]
    Escalated,
    /// It ended (always sent).
    #[serde(rename = "ask.ended")]
    Ended,
}

impl From<CallbackEvent> for CallbackEventName {
    fn from(event: CallbackEvent) -> CallbackEventName {
        match event {
            CallbackEvent::Posted => CallbackEventName::Posted,
            CallbackEvent::Reminded => CallbackEventName::Reminded,
            CallbackEvent::Escalated => CallbackEventName::Escalated,
            CallbackEvent::Ended => CallbackEventName::Ended,
        }
    }
}

/// An ask's context block: shown as the chat's code block (split over
/// messages, past three cut with a line saying how much is not shown;
/// whole on the web page), values that look like credentials masked
/// where it is shown.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct CanonicalContext {
    /// The text, at most 100,000 characters; lines and indentation kept.
    #[schema(max_length = 100000)]
    pub text: String,
    /// Its language, for highlighting (`diff`, `bash`, `markdown`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub language: Option<String>,
}

impl From<&Context> for CanonicalContext {
    fn from(context: &Context) -> CanonicalContext {
        CanonicalContext {
            text: context.text.clone(),
            language: context.language.clone(),
        }
    }
}

/// The thread asks of one key share in each place (a coding agent's
/// session): where the platform has threads (Slack, Feishu, a reply
/// chain on Telegram and Discord), the first ask of the key posts `title` as the thread's
/// first message and every ask of the key goes under it; a reply there
/// answers the newest pending ask of the thread.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct CanonicalThread {
    /// What makes asks share the thread, 1–200 characters.
    #[schema(min_length = 1, max_length = 200, pattern = r"\S")]
    pub key: String,
    /// The thread's first message, at most 300 characters; the key when
    /// absent.
    #[schema(max_length = 300)]
    pub title: String,
}

impl From<&Thread> for CanonicalThread {
    fn from(thread: &Thread) -> CanonicalThread {
        CanonicalThread {
            key: thread.key.clone(),
            title: thread.title.clone(),
        }
    }
}

/// One escalation step of a normalised ask.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct CanonicalEscalation {
    /// Seconds after the ask was created; before its timeout.
    pub after_seconds: u32,
    /// The place it is passed on to.
    pub to: String,
}

/// Where a normalised ask goes: one target, or several places at once.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(untagged)]
pub enum CanonicalTo {
    /// One target (`slack:C0123@U0456`).
    One(String),
    /// Several places, the first answer in any of them wins.
    Several(Vec<String>),
}

/// One question of a normalised ask.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct CanonicalQuestion {
    /// Unique id; the key of the answer.
    pub id: String,
    /// Chip label, at most 12 characters.
    pub header: String,
    /// The question sentence.
    pub question: String,
    /// What kind of answer is expected.
    #[serde(rename = "type")]
    pub kind: CanonicalKind,
    /// The options of a `single` or `multi` question; omitted otherwise.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub options: Vec<CanonicalOption>,
    /// Default labels (choice), text, or `"yes"`/`"no"` (confirm).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<Vec<String>>,
    /// Hint shown in an empty text input.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub placeholder: Option<String>,
    /// Whether the question must be answered; written only when `false`.
    #[serde(default = "yes", skip_serializing_if = "is_true")]
    #[schema(default = true)]
    pub required: bool,
    /// Options shown and matched as letters; written only when `true`.
    #[serde(default, skip_serializing_if = "is_false")]
    pub letters: bool,
}

/// The `type` of a question: what kind of answer is expected.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "lowercase")]
#[schema(as = QuestionType)]
pub enum CanonicalKind {
    /// Choose exactly one option.
    Single,
    /// Choose one or more options.
    Multi,
    /// Free text on one line.
    Text,
    /// Free text over several lines.
    Textarea,
    /// Yes or no.
    Confirm,
}

/// One option of a choice question.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct CanonicalOption {
    /// The label, returned verbatim in answers; at most 64 characters.
    #[schema(max_length = 64)]
    pub label: String,
    /// One line shown after the label.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The value the agent wants back, when not the label.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<String>,
    /// The recommended option; written only when `true`.
    #[serde(default, skip_serializing_if = "is_false")]
    pub recommended: bool,
    /// agent-choice: the message to continue with when chosen.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt: Option<String>,
}

fn yes() -> bool {
    true
}

#[allow(clippy::trivially_copy_pass_by_ref)] // serde's skip_serializing_if passes a reference
fn is_true(value: &bool) -> bool {
    *value
}

#[allow(clippy::trivially_copy_pass_by_ref)] // serde's skip_serializing_if passes a reference
fn is_false(value: &bool) -> bool {
    !*value
}

impl From<&Ask> for CanonicalAsk {
    fn from(ask: &Ask) -> CanonicalAsk {
        CanonicalAsk {
            title: ask.title.clone(),
            context: ask.context.as_ref().map(CanonicalContext::from),
            thread: ask.thread.as_ref().map(CanonicalThread::from),
            questions: ask.questions.iter().map(CanonicalQuestion::from).collect(),
            timeout_seconds: ask.timeout_seconds,
            to: match ask
                .target
                .iter()
                .chain(&ask.also)
                .map(ToString::to_string)
                .collect::<Vec<_>>()
            {
                places if places.len() > 1 => Some(CanonicalTo::Several(places)),
                mut places => places.pop().map(CanonicalTo::One),
            },
            escalate: (!ask.unset.escalate || !ask.escalate.is_empty()).then(|| {
                ask.escalate
                    .iter()
                    .map(|step| CanonicalEscalation {
                        after_seconds: step.after_seconds,
                        to: step.to.to_string(),
                    })
                    .collect()
            }),
            remind_after_seconds: match ask.remind {
                Some(remind) => Some(remind.after_seconds),
                None => (!ask.unset.remind).then_some(0),
            },
            remind_every_seconds: ask.remind.and_then(|remind| remind.every_seconds),
            callback_url: ask.callback.as_ref().map(|callback| callback.url.clone()),
            callback_events: ask
                .callback
                .as_ref()
                .filter(|callback| callback.events != [CallbackEvent::Ended])
                .map(|callback| callback.events.iter().copied().map(Into::into).collect()),
            approval: ask.approval,
        }
    }
}

impl From<&Question> for CanonicalQuestion {
    fn from(question: &Question) -> CanonicalQuestion {
        CanonicalQuestion {
            id: question.id.clone(),
            header: question.header.clone(),
            question: question.text.clone(),
            kind: question.kind.into(),
            options: question.options.iter().map(CanonicalOption::from).collect(),
            default: question.default.clone(),
            placeholder: question.placeholder.clone(),
            required: question.required,
            letters: question.letters,
        }
    }
}

impl From<QuestionKind> for CanonicalKind {
    fn from(kind: QuestionKind) -> CanonicalKind {
        match kind {
            QuestionKind::Single => CanonicalKind::Single,
            QuestionKind::Multi => CanonicalKind::Multi,
            QuestionKind::Text => CanonicalKind::Text,
            QuestionKind::Textarea => CanonicalKind::Textarea,
            QuestionKind::Confirm => CanonicalKind::Confirm,
        }
    }
}

impl From<&Choice> for CanonicalOption {
    fn from(choice: &Choice) -> CanonicalOption {
        CanonicalOption {
            label: choice.label.clone(),
            description: choice.description.clone(),
            value: choice.value.clone(),
            recommended: choice.recommended,
            prompt: choice.prompt.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use askbridge_core::normalize::{normalize_input, normalize_json};
    use proptest::prelude::*;
    use serde_json::{Value, json};

    use super::*;
    use crate::wire::fits_schema;
    use crate::wire::request::AskRequest;

    /// Normalises `input`, writes the canonical JSON and compares it with
    /// `expect`; then checks that normalising that JSON changes nothing.
    #[track_caller]
    fn check(input: &str, expect: Value) {
        let normalized = normalize_input(input).unwrap_or_else(|e| panic!("{input}: {e:?}"));
        let canonical = CanonicalAsk::from(&normalized.ask);
        let written = serde_json::to_value(&canonical).expect("serialise");
        assert_eq!(written, expect, "{input}");
        assert_idempotent(&normalized.ask);
        // What askbridge echoes fits its schema, and may be sent back as is.
        for fits in [fits_schema::<CanonicalAsk>, fits_schema::<AskRequest>] {
            if let Err(error) = fits(&written) {
                panic!("{error}");
            }
        }
    }

    #[track_caller]
    fn assert_idempotent(ask: &Ask) {
        let canonical = CanonicalAsk::from(ask);
        let written = serde_json::to_value(&canonical).expect("serialise");
        let again = normalize_json(&written).unwrap_or_else(|e| panic!("{written}: {e:?}"));
        assert_eq!(again.ask, *ask, "{written}");
        assert_eq!(again.warnings, [], "{written}");
        let read: CanonicalAsk = serde_json::from_value(written.clone()).expect("deserialise");
        assert_eq!(read, canonical, "{written}");
    }

    #[test]
    fn wire_canonical_ask() {
        check(
            r#"{"to": "telegram:-1001234/7@42", "title": "Release 2.4", "timeoutSeconds": 10, "questions": [
                {"header": "Deploy target", "question": "Where?", "options": [
                  {"label": "Staging (Recommended)", "description": "safe"}, {"label": "Production", "value": "prod"}, "Other"]},
                {"id": "notify", "header": "Notify", "question": "Who?", "multiSelect": true, "options": ["Team", "On-call"], "default": ["Team"]},
                {"id": "why", "header": "Why", "question": "Why?", "type": "textarea", "required": false, "placeholder": "…"},
                {"id": "ok", "header": "Ok", "question": "Ok?", "type": "confirm", "default": false}
            ]}"#,
            json!({
                "title": "Release 2.4",
                "questions": [
                    {"id": "deploy_target", "header": "Deploy", "question": "Where?", "type": "single", "options": [
                        {"label": "Staging (Recommended)", "description": "safe", "recommended": true},
                        {"label": "Production", "value": "prod"}
                    ]},
                    {"id": "notify", "header": "Notify", "question": "Who?", "type": "multi",
                     "options": [{"label": "Team"}, {"label": "On-call"}], "default": ["Team"]},
                    {"id": "why", "header": "Why", "question": "Why?", "type": "textarea", "placeholder": "…", "required": false},
                    {"id": "ok", "header": "Ok", "question": "Ok?", "type": "confirm", "default": ["no"]}
                ],
                "timeoutSeconds": 30,
                "to": "telegram:-1001234/7@42"
            }),
        );
    }

    #[test]
    fn wire_an_explicit_no_reminder_and_no_escalation_are_kept() {
        check(
            r#"{"questions": [{"id": "a", "question": "Q?", "type": "confirm"}], "remindAfterSeconds": 0, "escalate": []}"#,
            json!({
                "questions": [{"id": "a", "header": "Q", "question": "Q?", "type": "confirm"}],
                "timeoutSeconds": 900,
                "escalate": [],
                "remindAfterSeconds": 0
            }),
        );
    }

    #[test]
    fn wire_agent_choice_ask() {
        check(
            "Which way?\n<!-- agent-choice {\"options\":[{\"label\":\"A\",\"title\":\"Left\",\"prompt\":\"Go left.\"},{\"label\":\"B\",\"title\":\"Right\"}]} -->",
            json!({
                "questions": [{
                    "id": "choice", "header": "Choice", "question": "Which way?", "type": "single",
                    "options": [{"label": "Left", "prompt": "Go left."}, {"label": "Right"}],
                    "letters": true
                }],
                "timeoutSeconds": 900
            }),
        );
    }

    #[test]
    fn wire_fixed_asks_are_idempotent() {
        for input in [
            // Second recommendation unmarked, marker removed from its label.
            r#"{"questions": [{"question": "Q", "options": ["A (Recommended)", "B (Recommended)", "C"]}]}"#,
            // Values renamed.
            r#"{"fields": [{"id": "x", "type": "radio", "label": "Q", "options": [{"label": "a", "value": "v"}, {"label": "b", "value": "v"}, {"label": "v"}]}]}"#,
            // Six questions with derived ids: strict soft limit warned once only.
            r#"[{"question": "1?"}, {"question": "2?"}, {"question": "3?"}, {"question": "4?"}, {"question": "5?"}, {"question": "6?"}]"#,
            // Long lettered item cut.
            "Which?\nA. Use PostgreSQL because it is robust, has JSON support, and the team knows it well\nB. SQLite",
            // LLM Wiki description folded into the first question.
            r#"{"title": "T", "description": "Context.", "fields": [{"id": "a", "type": "input", "label": "Name"}]}"#,
            // Object target.
            r#"{"to": {"channel": "slack", "chat": "C1", "user": "U2"}, "questions": [{"id": "a", "question": "Q"}]}"#,
        ] {
            let normalized = normalize_input(input).unwrap_or_else(|e| panic!("{input}: {e:?}"));
            assert_idempotent(&normalized.ask);
        }
    }

    #[test]
    fn wire_deserialise_defaults() {
        let read: CanonicalAsk = serde_json::from_value(json!({
            "questions": [{"id": "a", "header": "A", "question": "Q", "type": "text"}],
            "timeoutSeconds": 900
        }))
        .expect("deserialise");
        assert!(read.questions[0].required);
        assert!(!read.questions[0].letters);
        assert!(read.questions[0].options.is_empty());
    }

    fn label() -> impl Strategy<Value = String> {
        prop_oneof![
            "[A-Za-z][a-z]{0,8}( [a-z]{1,6}){0,2}",
            prop::sample::select(vec![
                "Other",
                "其他",
                "Staging (Recommended)",
                "staging",
                "A",
                "B",
                "Ｂ",
                "  padded  ",
                "部署",
                "Déjà vu",
                "x_2",
                "",
            ])
            .prop_map(str::to_owned),
        ]
    }

    fn option() -> impl Strategy<Value = Value> {
        prop_oneof![
            label().prop_map(Value::String),
            (
                label(),
                prop::option::of(label()),
                prop::option::of(label()),
                any::<bool>(),
                prop::option::of("[a-z ]{1,12}")
            )
                .prop_map(|(label, description, value, recommended, prompt)| {
                    json!({"label": label, "description": description, "value": value,
                           "recommended": recommended, "prompt": prompt})
                }),
        ]
    }

    fn question() -> impl Strategy<Value = Value> {
        (
            prop::option::of(prop::sample::select(vec!["deploy", "env", "env", "a b", "x_2"])),
            prop::option::of(label()),
            label(),
            prop::option::of(prop::sample::select(vec![
                "single", "multi", "text", "textarea", "confirm", "radio", "checkbox", "switch",
            ])),
            prop::collection::vec(option(), 0..7),
            prop::option::of(prop_oneof![
                label().prop_map(Value::String),
                any::<bool>().prop_map(Value::Bool),
                prop::collection::vec(label(), 0..3).prop_map(|v| json!(v)),
            ]),
            prop::option::of(any::<bool>()),
            prop::option::of(any::<bool>()),
        )
            .prop_map(|(id, header, text, kind, options, default, required, multi)| {
                json!({"id": id, "header": header, "question": text, "type": kind, "options": options,
                       "default": default, "required": required, "multiSelect": multi})
            })
    }

    fn ask() -> impl Strategy<Value = Value> {
        (
            prop::option::of(label()),
            prop::collection::vec(question(), 1..7),
            prop::option::of(-100i64..5000),
            prop::option::of(prop::sample::select(vec!["telegram:1/2@3", "web", "discord:user/9", "slack:C1"])),
        )
            .prop_map(|(title, questions, timeout, to)| {
                json!({"title": title, "questions": questions, "timeoutSeconds": timeout, "to": to})
            })
    }

    fn assistant_text() -> impl Strategy<Value = String> {
        (
            "[A-Za-z ?]{0,30}",
            prop::collection::vec(label(), 2..6),
            any::<bool>(),
        )
            .prop_map(|(question, labels, block)| {
                if block {
                    let options: Vec<Value> = labels
                        .iter()
                        .enumerate()
                        .map(|(i, title)| json!({"label": char::from(b'A' + i as u8).to_string(), "title": title, "prompt": title}))
                        .collect();
                    format!("{question}\n<!-- agent-choice {} -->", json!({"options": options}))
                } else {
                    let lines: Vec<String> = labels
                        .iter()
                        .enumerate()
                        .map(|(i, title)| format!("{}. {title}", char::from(b'A' + i as u8)))
                        .collect();
                    format!("{question}\n{}", lines.join("\n"))
                }
            })
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

        #[test]
        fn wire_json_normalisation_is_idempotent(input in ask()) {
            if let Ok(normalized) = normalize_json(&input) {
                let written = serde_json::to_value(CanonicalAsk::from(&normalized.ask)).expect("serialise");
                let again = normalize_json(&written);
                prop_assert_eq!(again.as_ref().map(|n| &n.ask), Ok(&normalized.ask), "{}", written);
                prop_assert_eq!(again.map(|n| n.warnings), Ok(vec![]), "{}", written);
            }
        }

        #[test]
        fn wire_text_normalisation_is_idempotent(text in assistant_text()) {
            if let Ok(normalized) = normalize_input(&text) {
                let written = serde_json::to_value(CanonicalAsk::from(&normalized.ask)).expect("serialise");
                let again = normalize_json(&written);
                prop_assert_eq!(again.as_ref().map(|n| &n.ask), Ok(&normalized.ask), "{}", written);
                prop_assert_eq!(again.map(|n| n.warnings), Ok(vec![]), "{}", written);
            }
        }
    }
}

//! The HTTP API's request bodies, as the OpenAPI document describes them.
//!
//! The handlers never deserialise these types: an ask is read by the core's
//! normaliser, which takes every dialect, and a reply is read key by key in
//! [`crate::http`]; both name the path of each mistake. These types say
//! what those readers take, for the document, and the document's tests
//! check that bodies the handlers accept fit them. (`Deserialize` is
//! derived only so that the `serde` attributes shape the schemas.)

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::Value;
use utoipa::ToSchema;
use utoipa::openapi::schema::{Object, ObjectBuilder, Type};

use crate::wire::ask::{CallbackEventName, CanonicalContext, CanonicalKind, CanonicalOption};
use crate::wire::names::Channel;

/// The body of `POST /v1/asks`: an ask in any dialect askbridge reads, or
/// the wrapper `{"ask": …, "to": …}`.
///
/// The canonical form is described here. askbridge also reads OpenClaw's
/// `ask_user`, Claude Code's `AskUserQuestion`, LLM Wiki's `user.ask`
/// (`fields`), a bare list of questions, and tool-call wrappers of these
/// (docs/ask.md, "Dialects"). Fixable mistakes are fixed and listed in the
/// response's `warnings`; the rest are refused with `422 invalid_ask`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(untagged)]
pub enum AskRequest {
    /// An ask of its own.
    Ask(Box<AskInput>),
    /// An ask with a target that overrides its own.
    Wrapped(WrappedAsk),
}

/// An ask in the canonical form, as sent. Only `questions` is needed, and
/// of each question only `question`: ids, headers and types are derived.
/// Unknown fields are ignored with a warning.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct AskInput {
    /// Where to post it: one place, or several at once (at most 8; the
    /// first answer in any of them wins); absent or null: the configured
    /// `default_target` (`web` unless set).
    pub to: Option<PlacesInput>,
    /// A short title shown above the questions.
    pub title: Option<String>,
    /// A preformatted block shown above the questions — a command, a
    /// diff, a plan: its text, or the text with its language.
    pub context: Option<ContextInput>,
    /// The thread it is posted in with the other asks of the same key (a
    /// coding agent's session), where the platform has threads: the key
    /// alone, or the key and the thread's first message.
    pub thread: Option<ThreadInput>,
    /// 1–12 questions, shown in this order (4 is what agents are asked to
    /// keep to).
    #[schema(min_items = 1, max_items = 12)]
    pub questions: Vec<QuestionInput>,
    /// How long the ask stays open, in seconds: 900 when absent; values
    /// outside 30–3600 are clamped, with a warning.
    #[schema(default = 900)]
    pub timeout_seconds: Option<u32>,
    /// Where it is passed on to when still open a while after it was
    /// created, earliest first (each step before the timeout); `[]`: no
    /// escalation, whatever the configured default; absent: the
    /// configured default.
    pub escalate: Option<Vec<EscalationInput>>,
    /// Seconds after creation of the first reminder while nobody answers
    /// (at least 30, before the timeout); 0: no reminder, whatever the
    /// configured default; absent: the configured default.
    pub remind_after_seconds: Option<u32>,
    /// Seconds between reminders after the first (at least 30; at most 3
    /// reminders in all). Needs `remindAfterSeconds` in the same ask, even
    /// when the configuration sets a default first reminder.
    #[schema(minimum = 30)]
    pub remind_every_seconds: Option<u32>,
    /// Where askbridge POSTs the outcome, signed, when the ask ends
    /// (docs/webhooks.md): an `https://` URL on a host the daemon's
    /// `[webhooks] allowed_hosts` lists (`http://` only for a listed
    /// loopback host); anything else is refused with `422`, `path`
    /// `callbackUrl`.
    #[schema(
        min_length = 8,
        max_length = 2048,
        pattern = r"^\s*[Hh][Tt][Tt][Pp][Ss]?://\S"
    )]
    pub callback_url: Option<String>,
    /// What else `callbackUrl` is told of besides `ask.ended` (always
    /// sent); needs `callbackUrl`.
    pub callback_events: Option<Vec<CallbackEventName>>,
    /// `true`: an approval, which decides what runs on someone's machine.
    /// Only the one person each place names — `telegram:-100…@42`, a
    /// direct chat — answers it, in that chat; never another member of a
    /// room, the HTTP API (unless the place is `web`, said explicitly, and
    /// the daemon has an `api_token`) or a reply with the host key. An
    /// approval whose places do not each name a person is refused with
    /// `422`, `path` naming the place. Absent or `false`: whoever a place
    /// admits answers.
    #[schema(default = false)]
    pub approval: Option<bool>,
}

/// Where an ask goes: one target, or a list of them (1–8, each place at
/// most once).
#[derive(Debug, Deserialize, ToSchema)]
#[serde(untagged)]
pub enum PlacesInput {
    /// One place.
    One(TargetInput),
    /// Several places at once.
    Several(Vec<TargetInput>),
}

/// An escalation step, as sent.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct EscalationInput {
    /// Seconds after the ask was created (at least 1, before its
    /// timeout).
    #[schema(minimum = 1)]
    pub after_seconds: u32,
    /// Where it is passed on to.
    pub to: PlacesInput,
}

/// One question, as sent.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct QuestionInput {
    /// The key of this question's answer in the outcome (at most 64
    /// characters); when absent, derived in snake_case from the header,
    /// else the question.
    pub id: Option<IdInput>,
    /// A short chip label: longer than 12 characters is cut; when absent,
    /// made from the first words of the question.
    pub header: Option<String>,
    /// The question sentence, 1–2,000 characters, not all spaces.
    #[schema(min_length = 1, max_length = 2000, pattern = r"\S")]
    pub question: String,
    /// `single` when there are options, else `text`.
    #[serde(rename = "type")]
    pub kind: Option<CanonicalKind>,
    /// `true` makes the question `multi`.
    pub multi_select: Option<bool>,
    /// The choices of a `single` or `multi` question: 2–25, counted after
    /// "Other" options (askbridge adds that path itself) and duplicates
    /// are removed.
    #[schema(max_items = 25)]
    pub options: Option<Vec<OptionInput>>,
    /// The default answer, shown as a hint and never applied by itself: an
    /// option label (or value), a list of them for `multi`, `yes`/`no` or
    /// a boolean for `confirm`, the text for a text question.
    pub default: Option<Value>,
    /// A hint for an empty text input.
    pub placeholder: Option<String>,
    /// `false` lets the person skip this question alone.
    #[schema(default = true)]
    pub required: Option<bool>,
    /// Show and match the options as letters (`A.` `B.`) instead of numbers.
    pub letters: Option<bool>,
}

/// An option: its label alone, or the object form.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(untagged)]
pub enum OptionInput {
    /// The label.
    Label(String),
    /// Label, description, value, recommended, prompt.
    Choice(CanonicalOption),
}

/// A context block: its text alone, or with its language.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(untagged)]
pub enum ContextInput {
    /// The text (at most 100,000 characters).
    Text(String),
    /// The text and its language.
    Block(CanonicalContext),
}

/// A notice: a message for the person that asks nothing.
#[derive(Debug, Deserialize, ToSchema)]
pub struct NoticeRequest {
    /// Where to post it (one place); absent or null: the configured
    /// `default_target`. Notices go to chats: the web page shows asks only.
    pub to: Option<TargetInput>,
    /// What it says, 1–4,000 characters.
    #[schema(min_length = 1, max_length = 4000, pattern = r"\S")]
    pub text: String,
    /// A block shown under the text, as an ask's `context`.
    pub context: Option<ContextInput>,
    /// The thread it goes in, as an ask's `thread`.
    pub thread: Option<ThreadInput>,
}

/// A thread: its key alone (the title is the key), or both.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(untagged)]
pub enum ThreadInput {
    /// The key (1–200 characters).
    Key(String),
    /// The key and the title.
    Thread(ThreadBlock),
}

/// A thread's key and title, as sent.
#[derive(Debug, Deserialize, ToSchema)]
pub struct ThreadBlock {
    /// What makes asks share the thread, 1–200 characters.
    #[schema(min_length = 1, max_length = 200, pattern = r"\S")]
    pub key: String,
    /// The thread's first message, at most 300 characters; the key when
    /// absent.
    #[schema(max_length = 300)]
    pub title: Option<String>,
}

/// An id: a string or a number.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(untagged)]
pub enum IdInput {
    /// As text.
    Text(String),
    /// As a number.
    Number(i64),
}

/// Where to post an ask: `telegram:<chat_id>[/<topic_id>]`,
/// `discord:<channel_id>`, `discord:user/<user_id>`,
/// `slack:<channel_id>[/<thread_ts>]`, `slack:user/<user_id>` or
/// `web[:<session>]`, each with an optional `@<user_id>` (then only that
/// person may answer); or the object form.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(untagged)]
pub enum TargetInput {
    /// The string form.
    Text(String),
    /// The object form.
    Parts(TargetParts),
}

/// A target in parts: `{"channel": "telegram", "chat": -1001234567890,
/// "thread": 7, "user": 42}` is `telegram:-1001234567890/7@42`.
#[derive(Debug, Deserialize, ToSchema)]
pub struct TargetParts {
    /// The channel.
    #[schema(value_type = Channel)]
    pub channel: String,
    /// The chat or channel; `user/<id>` for a Discord or Slack DM.
    pub chat: Option<IdInput>,
    /// A Telegram forum topic or a Slack thread.
    pub thread: Option<IdInput>,
    /// The only person who may answer.
    pub user: Option<IdInput>,
}

/// An ask with a target: `to` overrides the ask's own.
#[derive(Debug, Deserialize, ToSchema)]
pub struct WrappedAsk {
    /// The ask in any dialect, or assistant text ending in an agent-choice
    /// block or an A/B/C list. Problems inside it are reported under
    /// `ask.` (`ask.questions[0].options`).
    pub ask: WrappedAskBody,
    /// Where to post it, over the ask's own `to`.
    pub to: Option<PlacesInput>,
}

/// What a wrapper wraps.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(untagged)]
pub enum WrappedAskBody {
    /// An ask.
    Ask(Box<AskInput>),
    /// Assistant text.
    Text(String),
}

/// The header that makes a reply to `POST /v1/asks/{id}/reply` the agent
/// host's own: it carries the `hostKey` the ask's creation returned.
pub const HOST_KEY_HEADER: &str = "askbridge-host-key";

/// The body of `POST /v1/asks/{id}/reply`: exactly one of `text`,
/// `answers` and `skip`, and optionally who is answering and how. Answers
/// over HTTP come through the `web` channel: an ask addressed to one
/// person on another channel can only be answered there — except by the
/// agent host's own dialog, which may answer any ask: a reply carrying the
/// `Askbridge-Host-Key` header with the `hostKey` the ask's creation
/// returned (`"via": "host"` without it is refused).
#[derive(Debug, Deserialize, ToSchema)]
#[serde(untagged)]
pub enum ReplyRequest {
    /// Typed text.
    Text(TextReply),
    /// Structured answers.
    Answers(AnswersReply),
    /// The whole ask skipped.
    Skip(SkipReply),
}

/// Where a reply was given: `web` (the default: the page, a script) or
/// `host` (the agent host's own dialog; `askbridge mcp --server` sends it).
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum ReplyVia {
    /// The web page or a script.
    Web,
    /// The agent host's own dialog.
    Host,
}

/// The schema of a flag that is `true` or refused.
fn only_true() -> Object {
    ObjectBuilder::new()
        .schema_type(Type::Boolean)
        .enum_values(Some([true]))
        .description(Some("`true` (`false` is no reply at all, and refused)."))
        .build()
}

/// `answers` in the document: question ids to answers, at least one (an
/// empty map is refused).
fn some_answers() -> Object {
    ObjectBuilder::new()
        .schema_type(Type::Object)
        .additional_properties(Some(<AnswerInput as utoipa::PartialSchema>::schema()))
        .min_properties(Some(1))
        .description(Some("Question id → that question's answer; at least one."))
        .build()
}

/// The person skips the whole ask.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct SkipReply {
    /// `true` (`false` is no reply at all, and refused).
    #[schema(schema_with = only_true)]
    pub skip: bool,
    /// Who is skipping.
    pub user: Option<ReplyUser>,
    /// Where.
    pub via: Option<ReplyVia>,
}

/// A typed reply, resolved like one in a chat (docs/replies.md):
/// `"Q1: 2\nQ2: staging"`, `"skip"`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct TextReply {
    /// The reply; not blank.
    #[schema(pattern = "\\S")]
    pub text: String,
    /// Who is answering.
    pub user: Option<ReplyUser>,
    /// Where.
    pub via: Option<ReplyVia>,
}

/// Answers by question id. Questions not named stay open; a question may
/// be answered again while the ask is pending (the last answer counts).
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct AnswersReply {
    /// Question id → that question's answer; at least one.
    #[schema(schema_with = some_answers)]
    pub answers: BTreeMap<String, AnswerInput>,
    /// Who is answering.
    pub user: Option<ReplyUser>,
    /// Where.
    pub via: Option<ReplyVia>,
}

/// One question's answer: a list of strings, or what stands for one — a
/// single string, `true`/`false` (confirm: yes/no), `null` (skip).
///
/// A string equal to an option's label (ignoring case and the
/// `(Recommended)` marker), or else to its `value`, picks that option; any
/// other string is the person's own words, at most one per question.
/// `single`, `confirm` and text questions take one string; an empty list
/// skips an optional question and is refused for a required one.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(untagged)]
pub enum AnswerInput {
    /// The strings.
    List(Vec<String>),
    /// One string.
    One(String),
    /// Yes or no.
    YesNo(bool),
    /// Skip the question.
    Skip,
}

/// Who is answering; by default the web page's user, id `web`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ReplyUser {
    /// Their id; `web` when absent.
    pub id: Option<IdInput>,
    /// Their display name.
    pub name: Option<String>,
}

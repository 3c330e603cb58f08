//! Dialect normalisation: dirty asks in, one valid [`Ask`] out.
//!
//! Three dialects are read: the canonical / OpenClaw `ask_user` / Claude
//! Code `AskUserQuestion` JSON, LLM Wiki's `user.ask` JSON (both in
//! `json`, tool-call wrappers included), and md-render's `agent-choice`
//! block or a plain lettered list in assistant text (`agent_choice`).
//! Every dialect then goes through the same sanitising (`options`, `ids`):
//! where the intent is clear the ask is fixed and each fix is
//! listed as a warning; where it is not, the ask is refused with every
//! problem found, each naming its JSON path.
//!
//! Nothing here panics, whatever the input; the only state is the input.

mod agent_choice;
mod approval;
mod ids;
mod json;
mod options;

use std::fmt;

use crate::model::{Ask, Escalation, Notice, Reminders};

pub use agent_choice::visible_text;
pub use approval::{approver_problem, with_defaults};
pub use json::kind_of;

/// A normalised ask and the fixes made to reach it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Normalized {
    /// The valid ask.
    pub ask: Ask,
    /// Each fix made on the way (dropped field, cut header, removed
    /// "Other", suffixed id, clamped timeout), in input order.
    pub warnings: Vec<Problem>,
}

/// One problem with an ask: a refusal, or a fix listed as a warning.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    /// Where: a JSON path such as `questions[1].options` or
    /// `timeoutSeconds`; `$` is the whole input and `text` the assistant text.
    pub path: String,
    /// What: a lowercase sentence naming the rule, without a trailing period.
    pub message: String,
}

impl Problem {
    /// A problem at `path`.
    pub fn new(path: impl Into<String>, message: impl Into<String>) -> Problem {
        Problem {
            path: path.into(),
            message: message.into(),
        }
    }
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.path, self.message)
    }
}

impl std::error::Error for Problem {}

/// Normalises an ask given as JSON: the canonical form, OpenClaw `ask_user`,
/// Claude Code `AskUserQuestion`, LLM Wiki `user.ask`, a tool-call wrapper
/// around any of them (`{"name": "ask_user", "arguments": …}`, Anthropic
/// `tool_use`, OpenAI `function`, Claude Code hook `tool_name`/`tool_input`),
/// or a bare array of questions.
///
/// Returns every problem found when the ask cannot be fixed.
pub fn normalize_json(value: &serde_json::Value) -> Result<Normalized, Vec<Problem>> {
    let mut report = Report::default();
    let ask = json::read(value, &mut report);
    report.finish(ask)
}

/// Normalises assistant text: an md-render `<!-- agent-choice … -->` block
/// at its end, or else a plain lettered list (`A. …`, `B) …`) of 2–6
/// options. The text before the block or list is the question.
pub fn normalize_text(text: &str) -> Result<Normalized, Vec<Problem>> {
    let mut report = Report::default();
    let ask = agent_choice::read(text, &mut report);
    report.finish(ask)
}

/// Normalises whatever an agent sent: JSON when it parses as a JSON object
/// or array (a Markdown code fence around it is allowed), assistant text
/// otherwise.
pub fn normalize_input(input: &str) -> Result<Normalized, Vec<Problem>> {
    let trimmed = strip_code_fence(input.trim());
    if !(trimmed.starts_with('{') || trimmed.starts_with('[')) {
        return normalize_text(input);
    }
    match serde_json::from_str::<serde_json::Value>(trimmed) {
        Ok(value) => normalize_json(&value),
        Err(json_error) => normalize_text(input).map_err(|_| {
            vec![Problem::new(
                ROOT,
                format!("not valid JSON ({json_error}) and no question found in it as text"),
            )]
        }),
    }
}

/// Reads the places given on their own as JSON — a target string
/// (`"telegram:123"`, `"web"`), an object `{channel, chat, thread, user}`,
/// or a list of them — by the same rules as an ask's `to`. Problems and
/// warnings carry paths under `to`. Empty for null or an empty string.
pub fn normalize_places(
    value: &serde_json::Value,
) -> Result<(Vec<crate::model::Target>, Vec<Problem>), Vec<Problem>> {
    if !matches!(
        value,
        serde_json::Value::String(_)
            | serde_json::Value::Object(_)
            | serde_json::Value::Array(_)
            | serde_json::Value::Null
    ) {
        return Err(vec![Problem::new(
            "to",
            format!(
                "expected a target string (\"telegram:123\", \"web\"), an object {{channel, chat, thread, user}} or a list of them, got {}",
                kind_of(value)
            ),
        )]);
    }
    let mut report = Report::default();
    let mut wrapper = serde_json::Map::new();
    wrapper.insert("to".to_owned(), value.clone());
    let places = json::read_places(&wrapper, "", &mut report);
    if report.errors.is_empty() {
        Ok((places, report.warnings))
    } else {
        Err(report.errors)
    }
}

/// Reads a notice: `{"text", "context"?, "thread"?, "to"?}`, `context`
/// and `thread` as an ask's, `to` one place. Returns it with the fixes
/// made, or every problem found.
pub fn normalize_notice(value: &serde_json::Value) -> Result<(Notice, Vec<Problem>), Vec<Problem>> {
    let mut report = Report::default();
    let notice = json::read_notice(value, &mut report);
    match notice {
        Some(notice) if report.errors.is_empty() => Ok((notice, report.warnings)),
        _ => Err(report.errors),
    }
}

/// Reads what an ask may leave to the configuration — the keys
/// `remind_after_seconds`, `remind_every_seconds` and `escalate` of
/// `settings` — by the rules of an ask's own, for an ask of the longest
/// timeout. Problems carry paths under `base` (`defaults.escalate[1].to`).
pub fn normalize_defaults(
    settings: &serde_json::Map<String, serde_json::Value>,
    base: &str,
) -> Result<(Option<Reminders>, Vec<Escalation>), Vec<Problem>> {
    let mut report = Report::default();
    let timeout = crate::model::limits::MAX_TIMEOUT_SECONDS;
    let remind = json::read_reminders(settings, base, timeout, &mut report);
    let escalate = json::read_escalate(settings, base, timeout, &[], &mut report);
    if report.errors.is_empty() {
        Ok((remind, escalate))
    } else {
        Err(report.errors)
    }
}

/// The path of the whole JSON input.
pub(crate) const ROOT: &str = "$";

/// Removes one Markdown code fence (```` ```json … ``` ````) around `text`.
fn strip_code_fence(text: &str) -> &str {
    let Some(rest) = text.strip_prefix("```") else {
        return text;
    };
    let Some((_info, body)) = rest.split_once('\n') else {
        return text;
    };
    match body.trim_end().strip_suffix("```") {
        Some(inner) => inner.trim(),
        None => text,
    }
}

/// Warnings and errors collected while reading one ask.
#[derive(Debug, Default)]
pub(crate) struct Report {
    warnings: Vec<Problem>,
    errors: Vec<Problem>,
    /// Why questions were dropped; they become errors when none is left.
    dropped: Vec<Problem>,
}

impl Report {
    /// Records a fix.
    pub(crate) fn warn(&mut self, path: impl Into<String>, message: impl Into<String>) {
        self.warnings.push(Problem::new(path, message));
    }

    /// Records a question dropped with a warning.
    pub(crate) fn drop_question(&mut self, path: impl Into<String>, message: impl Into<String>) {
        let problem = Problem::new(path, message);
        self.dropped.push(problem.clone());
        self.warnings.push(problem);
    }

    /// Refuses an ask whose questions were all dropped, giving the reasons.
    pub(crate) fn no_question_left(&mut self, path: &str) {
        self.errors.append(&mut self.dropped);
        self.error(path, "no valid question left");
    }

    /// Records a refusal.
    pub(crate) fn error(&mut self, path: impl Into<String>, message: impl Into<String>) {
        self.errors.push(Problem::new(path, message));
    }

    /// Takes over everything another report recorded.
    pub(crate) fn append(&mut self, mut other: Report) {
        self.warnings.append(&mut other.warnings);
        self.errors.append(&mut other.errors);
        self.dropped.append(&mut other.dropped);
    }

    /// Number of errors so far; compare before and after a step to know
    /// whether it failed.
    pub(crate) fn error_count(&self) -> usize {
        self.errors.len()
    }

    fn finish(self, ask: Option<Ask>) -> Result<Normalized, Vec<Problem>> {
        match ask {
            Some(ask) if self.errors.is_empty() => Ok(Normalized {
                ask,
                warnings: self.warnings,
            }),
            _ if self.errors.is_empty() => Err(vec![Problem::new(ROOT, "no valid ask found")]),
            _ => Err(self.errors),
        }
    }
}

/// `base.key`, or `key` at the root.
pub(crate) fn field(base: &str, key: &str) -> String {
    if base.is_empty() {
        key.to_owned()
    } else {
        format!("{base}.{key}")
    }
}

/// `base[index]`.
pub(crate) fn item(base: &str, index: usize) -> String {
    format!("{base}[{index}]")
}

/// The path to report for `base` itself (`$` at the root).
pub(crate) fn here(base: &str) -> &str {
    if base.is_empty() { ROOT } else { base }
}

/// Number of characters (not bytes).
pub(crate) fn chars(text: &str) -> usize {
    text.chars().count()
}

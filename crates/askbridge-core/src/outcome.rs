//! The outcome handed back to the agent, as core types.
//!
//! An [`Outcome`] is built when an ask ends, from the ask, its answered
//! questions and how it ended, all plain values: it is a pure function of
//! those, so a rebuilt machine gives the same outcome. The lifecycle, which
//! comes after this module in the flow (model → resolve → normalize →
//! outcome → lifecycle → render), hands it those values; this module uses
//! nothing of the lifecycle's. These types do not derive `Serialize`: the
//! JSON form lives in the `askbridge` crate.
//!
//! Choices made here:
//!
//! - `answers` and `details` hold every question that has an answer, in
//!   question order, whatever the status: a timed-out, skipped or
//!   cancelled ask reports the partial answers given before it ended.
//!   Unanswered questions are absent.
//! - `details[].selected` are the chosen labels verbatim (confirm: `yes` /
//!   `no`); `values` are [`crate::model::Choice::value`] of those (confirm:
//!   `yes` / `no`, text questions: the text); `other` is the person's own
//!   words on a choice or confirm question ("Other"); text questions report
//!   their text in `values`, not `other`.
//! - `answered_by` is who completed (or skipped) the ask; `None` for
//!   timeout, cancellation and delivery failure. `answered_at` is when the
//!   ask ended; for a timeout that is the deadline.
//! - `text`: one line per answered question, `Header: a, b` (`Header:
//!   (skipped)` for a skipped optional question). For no_answer the first
//!   line is `No answer (timeout)` (`skipped`, `cancelled`, `delivery
//!   failed: <reason>`), followed by the lines of any partial answers.
//! - `continuation`, answered: the LLM-Wiki format (docs/outcome.md). Without a
//!   title the first line is `User provided answers.` An agent-choice ask
//!   (an option carries a `prompt`) continues with the chosen options'
//!   prompts instead (the label where an option has none), or with the
//!   person's own words when they wrote them; several questions' parts are
//!   separated by a blank line.
//! - `continuation`, no_answer: `The user did not answer "Title" (timeout).
//!   Continue without this input, or ask again later.` ("or ask again
//!   later" only for timeout and delivery failure; the title only when
//!   there is one). With partial answers they are listed between the two
//!   sentences, in the answered format.
//! - Multi-line answers (textarea) keep their lines, indented by two spaces
//!   after the first, so each question still starts its own line.

use crate::model::{Ask, Question, QuestionKind, Responder, Timestamp, option_label};

/// How an answer came in (`details[].via`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Via {
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
    /// The agent host's own dialog (an MCP elicitation).
    Host,
}

impl Via {
    /// Every way an answer can come in.
    pub const ALL: [Via; 6] = [
        Via::Button,
        Via::Select,
        Via::Text,
        Via::Modal,
        Via::Web,
        Via::Host,
    ];

    /// The wire name: `button`, `select`, `text`, `modal`, `web`, `host`.
    pub fn as_str(self) -> &'static str {
        match self {
            Via::Button => "button",
            Via::Select => "select",
            Via::Text => "text",
            Via::Modal => "modal",
            Via::Web => "web",
            Via::Host => "host",
        }
    }
}

/// Whether the agent got an answer (OpenClaw-compatible).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Status {
    /// Every question was answered.
    Answered,
    /// The ask ended without a complete answer; see [`Reason`].
    NoAnswer,
}

impl Status {
    /// Both statuses.
    pub const ALL: [Status; 2] = [Status::Answered, Status::NoAnswer];

    /// The wire name: `answered`, `no_answer`.
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Answered => "answered",
            Status::NoAnswer => "no_answer",
        }
    }
}

/// Why an ask ended without an answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Reason {
    /// The deadline passed.
    Timeout,
    /// The person skipped the ask.
    Skipped,
    /// The agent cancelled the ask.
    Cancelled,
    /// The ask could not be delivered; see [`Outcome::failure`].
    DeliveryFailed,
}

impl Reason {
    /// Every reason.
    pub const ALL: [Reason; 4] = [
        Reason::Timeout,
        Reason::Skipped,
        Reason::Cancelled,
        Reason::DeliveryFailed,
    ];

    /// The wire name: `timeout`, `skipped`, `cancelled`, `delivery_failed`.
    pub fn as_str(self) -> &'static str {
        match self {
            Reason::Timeout => "timeout",
            Reason::Skipped => "skipped",
            Reason::Cancelled => "cancelled",
            Reason::DeliveryFailed => "delivery_failed",
        }
    }
}

/// How one question was answered (`details[]`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Detail {
    /// The question id.
    pub id: String,
    /// Chosen labels, verbatim; `yes`/`no` for confirm.
    pub selected: Vec<String>,
    /// The values of the chosen options; the text of a text question.
    pub values: Vec<String>,
    /// The person's own words on a choice or confirm question.
    pub other: Option<String>,
    /// How the answer came in.
    pub via: Via,
    /// Agent-choice prompts of the chosen options, in option order.
    pub prompts: Vec<String>,
    /// The (optional) question was skipped; it maps to `[]`.
    pub skipped: bool,
}

/// What the agent gets back when an ask ends.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outcome {
    /// The ask id given at creation.
    pub id: String,
    /// Answered or not.
    pub status: Status,
    /// Why not; `None` when answered.
    pub reason: Option<Reason>,
    /// The platform's reason for a delivery failure.
    pub failure: Option<String>,
    /// `question id → strings`, in question order: labels verbatim, the
    /// person's own words, `yes`/`no`, the text, or `[]` when skipped.
    pub answers: Vec<(String, Vec<String>)>,
    /// One entry per answered question, in question order.
    pub details: Vec<Detail>,
    /// Who completed or skipped the ask.
    pub answered_by: Option<Responder>,
    /// When the ask ended (the deadline for a timeout).
    pub answered_at: Timestamp,
    /// A human-readable summary, one line per question.
    pub text: String,
    /// The answer as a user message, for agents that continue as chat.
    pub continuation: String,
}

/// How an ask ended, as its outcome reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Ending {
    /// Why there is no answer; `None` when answered.
    pub reason: Option<Reason>,
    /// The platform's reason for a delivery failure.
    pub failure: Option<String>,
    /// Who completed or skipped the ask.
    pub by: Option<Responder>,
    /// When it ended (the deadline for a timeout).
    pub at: Timestamp,
}

/// One answered question, as its outcome reports it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Given<'a> {
    /// The question.
    pub question: &'a Question,
    /// Chosen options by index, ascending (confirm: `0` yes, `1` no).
    pub options: &'a [usize],
    /// The person's own words.
    pub text: Option<&'a str>,
    /// How the answer came in.
    pub via: Via,
}

impl Given<'_> {
    /// An optional question left unanswered on purpose.
    fn is_skipped(&self) -> bool {
        self.options.is_empty() && self.text.is_none()
    }
}

/// Builds the outcome of an ended ask from its answered questions, in
/// question order, and how it ended.
pub(crate) fn build(id: &str, ask: &Ask, given: &[Given<'_>], ending: Ending) -> Outcome {
    let Ending {
        reason,
        failure,
        by: answered_by,
        at: answered_at,
    } = ending;
    let answer_lists: Vec<(String, Vec<String>)> = given
        .iter()
        .map(|answer| (answer.question.id.clone(), answer_strings(answer)))
        .collect();
    let details = given.iter().map(detail).collect();
    let summary: Vec<String> = given
        .iter()
        .zip(&answer_lists)
        .map(|(answer, (_, strings))| format!("{}: {}", header(answer.question), joined(strings)))
        .collect();
    let listed: Vec<String> = given
        .iter()
        .zip(&answer_lists)
        .map(|(answer, (_, strings))| {
            format!(
                "- {} ({}): {}",
                header(answer.question),
                answer.question.id,
                joined(strings)
            )
        })
        .collect();

    let (text, continuation) = match reason {
        None => (
            summary.join("\n"),
            agent_choice(ask, given).unwrap_or_else(|| {
                let mut lines = vec![match &ask.title {
                    Some(title) => format!("User provided answers for \"{title}\"."),
                    None => "User provided answers.".to_owned(),
                }];
                lines.extend(listed);
                lines.push("Continue the previous task using these answers.".to_owned());
                lines.join("\n")
            }),
        ),
        Some(reason) => {
            let why = match (reason, &failure) {
                (Reason::DeliveryFailed, Some(message)) if !message.trim().is_empty() => {
                    format!("delivery failed: {}", one_line(message))
                }
                (Reason::DeliveryFailed, _) => "delivery failed".to_owned(),
                (reason, _) => reason.as_str().to_owned(),
            };
            let mut text = vec![format!("No answer ({why})")];
            text.extend(summary);
            let subject = match &ask.title {
                Some(title) => format!(" \"{title}\""),
                None => String::new(),
            };
            let sentence = format!("The user did not answer{subject} ({why}).");
            let again = matches!(reason, Reason::Timeout | Reason::DeliveryFailed);
            let continuation = if listed.is_empty() {
                let next = if again {
                    "Continue without this input, or ask again later."
                } else {
                    "Continue without this input."
                };
                format!("{sentence} {next}")
            } else {
                let mut lines = vec![sentence, "Answers given before it ended:".to_owned()];
                lines.extend(listed);
                lines.push(
                    if again {
                        "Continue with these partial answers, or ask again later."
                    } else {
                        "Continue with these partial answers."
                    }
                    .to_owned(),
                );
                lines.join("\n")
            };
            (text.join("\n"), continuation)
        }
    };

    Outcome {
        id: id.to_owned(),
        status: match reason {
            None => Status::Answered,
            Some(_) => Status::NoAnswer,
        },
        reason,
        failure,
        answers: answer_lists,
        details,
        answered_by,
        answered_at,
        text,
        continuation,
    }
}

/// The strings of `answers[id]`: chosen labels, then the own words.
fn answer_strings(answer: &Given<'_>) -> Vec<String> {
    answer
        .options
        .iter()
        .map(|&option| option_label(answer.question, option).to_owned())
        .chain(answer.text.map(str::to_owned))
        .collect()
}

fn detail(answer: &Given<'_>) -> Detail {
    let question = answer.question;
    let selected: Vec<String> = answer
        .options
        .iter()
        .map(|&option| option_label(question, option).to_owned())
        .collect();
    let chosen = || {
        answer
            .options
            .iter()
            .filter_map(|&option| question.options.get(option))
    };
    let text = answer.text.map(str::to_owned);
    let (values, other) = match question.kind {
        QuestionKind::Text | QuestionKind::Textarea => (text.into_iter().collect(), None),
        QuestionKind::Confirm => (selected.clone(), text),
        QuestionKind::Single | QuestionKind::Multi => (
            chosen().map(|choice| choice.value().to_owned()).collect(),
            text,
        ),
    };
    Detail {
        id: question.id.clone(),
        selected,
        values,
        other,
        via: answer.via,
        prompts: chosen()
            .filter_map(|choice| choice.prompt.clone())
            .collect(),
        skipped: answer.is_skipped(),
    }
}

/// The continuation of an answered agent-choice ask: the chosen options'
/// prompts, or the person's own words. `None` when no option of the ask
/// carries a prompt.
fn agent_choice(ask: &Ask, given: &[Given<'_>]) -> Option<String> {
    let has_prompts = ask
        .questions
        .iter()
        .flat_map(|question| &question.options)
        .any(|choice| choice.prompt.is_some());
    if !has_prompts {
        return None;
    }
    let parts: Vec<String> = given
        .iter()
        .flat_map(|answer| {
            answer
                .options
                .iter()
                .map(|&option| match answer.question.options.get(option) {
                    Some(choice) => choice
                        .prompt
                        .clone()
                        .unwrap_or_else(|| choice.label.clone()),
                    None => option_label(answer.question, option).to_owned(),
                })
                .chain(answer.text.map(str::to_owned))
                .collect::<Vec<_>>()
        })
        .collect();
    (!parts.is_empty()).then(|| parts.join("\n\n"))
}

fn header(question: &Question) -> &str {
    let header = question.header.trim();
    if header.is_empty() {
        &question.id
    } else {
        header
    }
}

/// Answer strings on one line: `a, b`, or `(skipped)` when empty;
/// continuation lines of a multi-line answer are indented.
fn joined(strings: &[String]) -> String {
    if strings.is_empty() {
        return "(skipped)".to_owned();
    }
    strings
        .join(", ")
        .replace("\r\n", "\n")
        .replace('\n', "\n  ")
}

fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

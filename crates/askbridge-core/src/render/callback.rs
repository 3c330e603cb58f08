//! Callback payloads: which button of which question of which ask.
//!
//! A payload carries only the ask's opaque key, a question index and an
//! option reference, never content (anyone can read callback data):
//! `ab1:<ask_key>:<question>:<option>`, where `<option>` is a decimal
//! option index, or `o` (Other), `s` (Skip), `d` (Done), `p` (Pass).
//! With an ask key of at most [`MAX_ASK_KEY_BYTES`] and indices below
//! 10,000 a payload is at most 62 bytes: it fits
//! Telegram's `callback_data`, Discord's `custom_id` and Slack's
//! `action_id`.

use std::fmt;

const PREFIX: &str = "ab1:";

/// Longest ask key for which a payload stays within 64 bytes.
pub const MAX_ASK_KEY_BYTES: usize = 48;

/// What a button does within its question.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum OptionRef {
    /// Picks (single, confirm) or toggles (multi in a stepper) the option
    /// at this index. Confirm: 0 is yes, 1 is no.
    Index(usize),
    /// Opens the free-text path: "Other…" on a choice question, "Answer…"
    /// on a text question (a modal or a forced reply).
    Other,
    /// Skips the whole ask.
    Skip,
    /// Submits the toggled options of a multi-select question (stepper).
    Done,
    /// Leaves an optional question unanswered and moves on (stepper).
    Pass,
}

/// A parsed callback payload.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CallbackRef {
    /// The ask's opaque key, as given to [`callback_key`].
    pub ask_key: String,
    /// Index of the question in the ask.
    pub question: usize,
    /// The button pressed.
    pub option: OptionRef,
}

impl fmt::Display for OptionRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            OptionRef::Index(index) => write!(f, "{index}"),
            OptionRef::Other => f.write_str("o"),
            OptionRef::Skip => f.write_str("s"),
            OptionRef::Done => f.write_str("d"),
            OptionRef::Pass => f.write_str("p"),
        }
    }
}

/// Builds the payload of one button. `ask_key` is short and opaque (8–22
/// characters of `[A-Za-z0-9_-]` in practice, at most [`MAX_ASK_KEY_BYTES`]).
pub fn callback_key(ask_key: &str, question: usize, option: OptionRef) -> String {
    format!("{PREFIX}{ask_key}:{question}:{option}")
}

/// Reads a payload built by [`callback_key`]; anything else is `None`.
pub fn parse_callback_key(payload: &str) -> Option<CallbackRef> {
    let body = payload.strip_prefix(PREFIX)?;
    let mut fields = body.rsplitn(3, ':');
    let option = fields.next()?;
    let question = parse_index(fields.next()?)?;
    let ask_key = fields.next().filter(|key| !key.is_empty())?;
    let option = match option {
        "o" => OptionRef::Other,
        "s" => OptionRef::Skip,
        "d" => OptionRef::Done,
        "p" => OptionRef::Pass,
        index => OptionRef::Index(parse_index(index)?),
    };
    Some(CallbackRef {
        ask_key: ask_key.to_owned(),
        question,
        option,
    })
}

/// A small decimal index: 1–4 ASCII digits.
fn parse_index(text: &str) -> Option<usize> {
    if text.is_empty() || text.len() > 4 || !text.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    text.parse().ok()
}

//! The JSON of `askbridge resolve`: one reply in, one resolution out.

use askbridge_core::resolve::Resolution;
use serde::{Deserialize, Serialize};

/// One line of `askbridge resolve --jsonl` input.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ResolveRequest {
    /// The option labels, in the order they were shown.
    pub options: Vec<OptionLabel>,
    /// Whether several options may be chosen.
    #[serde(default)]
    pub multi: bool,
    /// Whether the options were shown as letters (`A.` `B.`).
    #[serde(default)]
    pub letters: bool,
    /// What the person typed.
    pub reply: String,
}

/// An option given as its label, or as an object with a `label`.
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
pub enum OptionLabel {
    /// `"Staging"`.
    Label(String),
    /// `{"label": "Staging", …}`; other keys are ignored.
    Object {
        /// The label.
        label: String,
    },
}

impl OptionLabel {
    /// The label text.
    pub fn label(&self) -> &str {
        match self {
            OptionLabel::Label(label) | OptionLabel::Object { label } => label,
        }
    }
}

/// How a reply resolved, as `askbridge resolve` prints it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ResolutionJson {
    /// `choice`, `choices`, `free_text`, `ambiguous` or `skip`.
    pub kind: &'static str,
    /// The chosen labels, verbatim.
    pub values: Vec<String>,
    /// The reply as the person wrote it, cleaned of platform markup.
    pub text: String,
    /// For `ambiguous`: the labels it could mean.
    pub candidates: Vec<String>,
}

impl ResolutionJson {
    /// Describes `resolution` of `text` against `labels`.
    pub fn new(resolution: &Resolution, labels: &[&str], text: String) -> ResolutionJson {
        let names = |indices: &[usize]| -> Vec<String> {
            indices
                .iter()
                .filter_map(|&i| labels.get(i))
                .map(|l| (*l).to_owned())
                .collect()
        };
        let (kind, values, candidates) = match resolution {
            Resolution::Choice(i) => ("choice", names(&[*i]), Vec::new()),
            Resolution::Choices(v) => ("choices", names(v), Vec::new()),
            Resolution::FreeText(_) => ("free_text", Vec::new(), Vec::new()),
            Resolution::Ambiguous(v) => ("ambiguous", Vec::new(), names(v)),
            Resolution::Skip => ("skip", Vec::new(), Vec::new()),
        };
        let text = match resolution {
            Resolution::FreeText(words) => words.clone(),
            _ => text,
        };
        ResolutionJson {
            kind,
            values,
            text,
            candidates,
        }
    }
}

/// One question's part of a multi-question resolution.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct QuestionResolutionJson {
    /// The question id.
    pub id: String,
    /// How its part of the reply resolved.
    #[serde(flatten)]
    pub resolution: ResolutionJson,
}

/// `askbridge resolve --ask FILE REPLY` output.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct AskResolutionJson {
    /// The questions the reply addressed, in question order.
    pub answers: Vec<QuestionResolutionJson>,
    /// Ids of questions the reply did not address: asked again.
    pub unanswered: Vec<String>,
}

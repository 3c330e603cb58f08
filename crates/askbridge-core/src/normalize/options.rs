//! Options of a choice question, sanitised the same way for every dialect:
//! labels trimmed and bounded, "Other" removed, duplicates dropped, one
//! recommended option, unique values, 2–25 options.

use crate::resolve::label_key;

use super::{Report, chars, field};
use crate::model::limits::{MAX_LABEL_CHARS, MAX_OPTIONS, MIN_OPTIONS};
use crate::model::{Choice, QuestionKind, has_recommended_marker, strip_recommended_marker};

/// An option as read from one dialect, before sanitising.
#[derive(Debug, Clone)]
pub(crate) struct RawOption {
    /// Path of the option (`questions[0].options[2]`).
    pub path: String,
    /// The label, trimmed.
    pub label: String,
    /// Shown after the label.
    pub description: Option<String>,
    /// The value the agent wants back.
    pub value: Option<String>,
    /// Marked recommended explicitly.
    pub recommended: bool,
    /// agent-choice continuation prompt.
    pub prompt: Option<String>,
    /// The label was derived from prose (assistant text), so a label that
    /// is too long is cut rather than refused.
    pub derived: bool,
}

/// Sanitises the options of a `Single` or `Multi` question at `path`.
/// Returns `None` when an error was recorded.
pub(crate) fn sanitize(
    path: &str,
    kind: QuestionKind,
    raw: Vec<RawOption>,
    unreadable: usize,
    report: &mut Report,
) -> Option<Vec<Choice>> {
    let errors_before = report.error_count();
    let mut refused = unreadable;
    let mut removed_other = false;
    let mut removed_duplicate = false;
    let mut kept: Vec<RawOption> = Vec::with_capacity(raw.len());
    let mut keys: Vec<(String, String)> = Vec::with_capacity(raw.len());

    for mut option in raw {
        let label_path = field(&option.path, "label");
        if option.label.is_empty() {
            report.error(label_path, "an option needs a label, got an empty one");
            refused += 1;
            continue;
        }
        let length = chars(&option.label);
        if length > MAX_LABEL_CHARS {
            if option.derived {
                let cut = cut_label(&option.label);
                report.warn(
                    &label_path,
                    format!("label cut to {MAX_LABEL_CHARS} characters, the whole text kept as its description"),
                );
                if option.description.is_none() {
                    option.description = Some(option.label.clone());
                }
                option.label = cut;
            } else {
                report.error(
                    label_path,
                    format!("a label is at most {MAX_LABEL_CHARS} characters, got {length}"),
                );
                refused += 1;
                continue;
            }
        }
        if is_other(&option.label) {
            report.warn(
                &option.path,
                format!(
                    "removed \"{}\": askbridge always lets the person write their own answer",
                    option.label
                ),
            );
            removed_other = true;
            continue;
        }
        let key = label_key(&option.label);
        if let Some((_, first)) = keys.iter().find(|(k, _)| *k == key) {
            report.warn(
                &option.path,
                format!("removed \"{}\": same label as {first}", option.label),
            );
            removed_duplicate = true;
            continue;
        }
        keys.push((key, option.path.clone()));
        kept.push(option);
    }

    mark_recommended(&mut kept, report);
    let choices = unique_values(kept, report);

    let count = choices.len() + refused;
    let what = kind_phrase(kind);
    if count < MIN_OPTIONS {
        let after = match (removed_other, removed_duplicate) {
            (true, true) => " (after removing \"Other\" and duplicates)",
            (true, false) => " (after removing \"Other\")",
            (false, true) => " (after removing duplicates)",
            (false, false) => "",
        };
        report.error(
            path,
            format!("{what} needs at least {MIN_OPTIONS} options, got {count}{after}"),
        );
    } else if count > MAX_OPTIONS {
        report.error(
            path,
            format!("{what} has at most {MAX_OPTIONS} options, got {count}"),
        );
    }
    (report.error_count() == errors_before).then_some(choices)
}

/// Keeps the first recommended option; later ones are unmarked (and lose
/// their "(Recommended)" suffix, so that normalising again changes nothing).
fn mark_recommended(options: &mut [RawOption], report: &mut Report) {
    let mut first: Option<String> = None;
    for option in options.iter_mut() {
        let marked = has_recommended_marker(&option.label);
        if !(option.recommended || marked) {
            continue;
        }
        match &first {
            None => {
                option.recommended = true;
                first = Some(option.path.clone());
            }
            Some(first) => {
                option.recommended = false;
                if marked {
                    option.label = strip_recommended_marker(&option.label).to_owned();
                }
                report.warn(
                    &option.path,
                    format!("only one option can be recommended; kept {first}, unmarked this one"),
                );
            }
        }
    }
}

/// Builds the choices, giving each a unique value (`value`, `value_2`, …);
/// a value equal to the label is dropped (the label is the default value).
fn unique_values(options: Vec<RawOption>, report: &mut Report) -> Vec<Choice> {
    let mut taken: Vec<String> = Vec::with_capacity(options.len());
    let mut choices = Vec::with_capacity(options.len());
    for option in options {
        let mut value = option
            .value
            .map(|v| v.trim().to_owned())
            .filter(|v| !v.is_empty() && *v != option.label);
        let effective = value.clone().unwrap_or_else(|| option.label.clone());
        if taken.contains(&effective) {
            let renamed = super::ids::unique(&effective, &taken);
            report.warn(
                field(&option.path, "value"),
                format!("duplicate value \"{effective}\" renamed to \"{renamed}\""),
            );
            taken.push(renamed.clone());
            value = Some(renamed);
        } else {
            taken.push(effective);
        }
        choices.push(Choice {
            label: option.label,
            description: option.description,
            value,
            recommended: option.recommended,
            prompt: option.prompt,
        });
    }
    choices
}

/// "a single-choice question", "a multi-choice question", "a text question", ….
pub(crate) fn kind_phrase(kind: QuestionKind) -> String {
    match kind {
        QuestionKind::Single => "a single-choice question".to_owned(),
        QuestionKind::Multi => "a multi-choice question".to_owned(),
        other => format!("a {} question", other.as_str()),
    }
}

/// Whether an agent-authored option is the "Other" that askbridge adds
/// itself: "Other", "Other…", "Other:", "Other (please specify)", "其他",
/// "其它", "อื่นๆ", any case.
pub(crate) fn is_other(label: &str) -> bool {
    const SUFFIXES: &[&str] = &[
        ":",
        "：",
        ",",
        "，",
        "…",
        "...",
        ".",
        "(please specify)",
        "（please specify）",
        "please specify",
        "(specify)",
        "(请说明)",
        "（请说明）",
        "(请注明)",
        "（请注明）",
    ];
    let mut text = strip_recommended_marker(label).trim().to_lowercase();
    loop {
        let before = text.len();
        for suffix in SUFFIXES {
            if let Some(rest) = text.strip_suffix(suffix) {
                text = rest.trim_end().to_owned();
            }
        }
        if text.len() == before {
            break;
        }
    }
    matches!(text.as_str(), "other" | "其他" | "其它" | "อื่นๆ" | "อื่น ๆ")
}

/// Cuts a too-long label derived from prose at a word boundary, with "…".
fn cut_label(label: &str) -> String {
    let budget = MAX_LABEL_CHARS - 1;
    let head: String = label.chars().take(budget).collect();
    let at_space = head
        .char_indices()
        .rfind(|&(_, c)| c.is_whitespace())
        .map(|(at, _)| at)
        .filter(|&at| head[..at].chars().count() >= budget / 2);
    let head = match at_space {
        Some(at) => &head[..at],
        None => head.as_str(),
    };
    format!("{}…", head.trim_end())
}

/// Finds the option a default names: by exact label, then exact value, then
/// the label or value compared as the resolver would.
pub(crate) fn find(options: &[Choice], wanted: &str) -> Option<usize> {
    let wanted = wanted.trim();
    options
        .iter()
        .position(|o| o.label == wanted)
        .or_else(|| {
            options
                .iter()
                .position(|o| o.value.as_deref() == Some(wanted))
        })
        .or_else(|| {
            let key = label_key(wanted);
            options
                .iter()
                .position(|o| label_key(&o.label) == key || label_key(o.value()) == key)
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn other_labels() {
        for label in [
            "Other",
            "other",
            "Other…",
            "Other...",
            "Other:",
            "OTHER (please specify)",
            "Other (please specify):",
            "其他",
            "其它：",
            "อื่นๆ",
        ] {
            assert!(is_other(label), "{label}");
        }
        for label in ["Others", "Other options", "Another", "Something else"] {
            assert!(!is_other(label), "{label}");
        }
    }

    #[test]
    fn label_keys() {
        assert_eq!(label_key("Staging (Recommended)"), label_key(" staging "));
        assert_eq!(label_key("Ｓｔａｇｉｎｇ"), "staging");
        assert_eq!(label_key("a  b"), "a b");
        assert_eq!(label_key("Grüße"), label_key("GRÜSSE"));
        assert_eq!(label_key("Weiß"), label_key("WEISS"));
    }

    #[test]
    fn cut_labels() {
        let long =
            "Use PostgreSQL because it is robust, has JSON support, and the team knows it well";
        let cut = cut_label(long);
        assert!(chars(&cut) <= MAX_LABEL_CHARS, "{cut}");
        assert_eq!(
            cut,
            "Use PostgreSQL because it is robust, has JSON support, and the…"
        );
    }
}

//! The md-render dialect: assistant text ending in an
//! `<!-- agent-choice {"options": […]} -->` block, or else a plain
//! lettered list (`A. …`, `B) …`, `A：…`, `**A.** …`) of 2–6 options.
//!
//! A block that is still being written (no closing `-->` yet, or JSON that
//! does not parse) is never shown: [`visible_text`] hides it, and reading
//! it is an error saying that it is incomplete. A block that is closed but
//! not valid JSON will not get better: when the text before it has a usable
//! lettered list, that list is read instead, with a warning. (A block with
//! no closing `-->` may still be streaming in, so it stays an error.)

use serde_json::Value;

use super::options::{self, RawOption};
use super::{Report, chars, field, item};
use crate::model::limits::{DEFAULT_TIMEOUT_SECONDS, MAX_OPTIONS, MAX_QUESTION_CHARS};
use crate::model::{Ask, Question, QuestionKind, Unset};

/// The word after `<!--` that opens a block.
const BLOCK_NAME: &str = "agent-choice";
/// Path prefix of problems inside a block.
const BLOCK_PATH: &str = "agent-choice";
/// Path of problems with the text as a whole.
const TEXT_PATH: &str = "text";
/// Id of the one question an agent-choice ask has.
const CHOICE_ID: &str = "choice";
/// Header of the one question an agent-choice ask has.
const CHOICE_HEADER: &str = "Choice";
/// `-->` candidates tried per block before it counts as unfinished.
const MAX_CLOSERS: usize = 8;
/// A lettered list is read as options with this many items.
const LIST_ITEMS: std::ops::RangeInclusive<usize> = 2..=6;

/// The assistant text as it should be shown while it streams in: every
/// complete `<!-- agent-choice … -->` block removed, and a block still
/// being written (or the start of its `<!--` opener) cut off with
/// everything after it. Trailing whitespace is trimmed.
pub fn visible_text(assistant_text: &str) -> String {
    let mut visible = String::with_capacity(assistant_text.len());
    let mut pos = 0;
    for block in find_blocks(assistant_text) {
        visible.push_str(assistant_text.get(pos..block.start).unwrap_or(""));
        pos = match block.end {
            Some(end) => end,
            None => assistant_text.len(),
        };
    }
    visible.push_str(assistant_text.get(pos..).unwrap_or(""));
    // Removing a block can leave a `<!` at the end that reads as an opener
    // being streamed; cut those too, so that the result is stable.
    loop {
        visible.truncate(visible.trim_end().len());
        match visible.rfind('<') {
            Some(at) if is_partial_opener(&visible[at..]) => visible.truncate(at),
            _ => return visible,
        }
    }
}

/// Reads assistant text into a one-question ask.
pub(crate) fn read(text: &str, report: &mut Report) -> Option<Ask> {
    let blocks = find_blocks(text);
    let question = match blocks.last().map(|b| &b.content) {
        Some(Content::Unfinished(reason)) => {
            report.error(TEXT_PATH, reason.as_str());
            return None;
        }
        Some(Content::Invalid(reason)) => {
            let mut list = Report::default();
            match read_list(&visible_text(text), &mut list) {
                Some(question) if list.error_count() == 0 => {
                    report.warn(
                        BLOCK_PATH,
                        format!("{reason}; the lettered list before it was read instead"),
                    );
                    report.append(list);
                    question
                }
                _ => {
                    report.error(TEXT_PATH, reason.as_str());
                    return None;
                }
            }
        }
        Some(Content::Json(value)) => read_block(value, &visible_text(text), report)?,
        None => read_list(text, report)?,
    };
    Some(Ask {
        title: None,
        context: None,
        thread: None,
        questions: vec![question],
        timeout_seconds: DEFAULT_TIMEOUT_SECONDS,
        target: None,
        also: Vec::new(),
        escalate: Vec::new(),
        remind: None,
        callback: None,
        approval: false,
        unset: Unset::ALL,
    })
}

/// One `<!-- agent-choice` block in the text.
#[derive(Debug)]
struct Block {
    /// Byte offset of its `<!--`.
    start: usize,
    /// Byte offset just after its `-->`; `None` when it runs to the end.
    end: Option<usize>,
    content: Content,
}

#[derive(Debug)]
enum Content {
    /// The parsed JSON between the opener and `-->`.
    Json(Value),
    /// Not finished: why.
    Unfinished(String),
    /// Closed with `-->`, but no closing candidate makes valid JSON: why.
    Invalid(String),
}

/// Finds the agent-choice blocks, in order. Only the last can be unfinished
/// or invalid.
fn find_blocks(text: &str) -> Vec<Block> {
    let mut blocks = Vec::new();
    let mut pos = 0;
    let mut last_end = 0;
    while let Some(found) = text.get(pos..).and_then(|rest| rest.find("<!--")) {
        let start = pos + found;
        let after = start + "<!--".len();
        let Some(body_start) = block_body_start(text, after) else {
            pos = after;
            continue;
        };
        let mut search = body_start;
        let mut first_error = None;
        let mut parsed = None;
        for _ in 0..MAX_CLOSERS {
            let Some(close) = text.get(search..).and_then(|rest| rest.find("-->")) else {
                break;
            };
            let close = search + close;
            let body = text.get(body_start..close).unwrap_or("").trim();
            match serde_json::from_str::<Value>(body) {
                Ok(value) => {
                    parsed = Some((close + "-->".len(), value));
                    break;
                }
                Err(error) => {
                    first_error.get_or_insert(error);
                }
            }
            search = close + "-->".len();
        }
        match parsed {
            Some((end, value)) => {
                blocks.push(Block {
                    start,
                    end: Some(end),
                    content: Content::Json(value),
                });
                pos = end;
                last_end = end;
            }
            None => {
                let content = match first_error {
                    Some(error) => Content::Invalid(format!(
                        "the agent-choice block is incomplete or not valid JSON ({error})"
                    )),
                    None => Content::Unfinished(
                        "the agent-choice block is incomplete: no closing -->".to_owned(),
                    ),
                };
                blocks.push(Block {
                    start,
                    end: None,
                    content,
                });
                return blocks;
            }
        }
    }
    if let Some(start) = text
        .get(last_end..)
        .and_then(|rest| rest.rfind('<'))
        .map(|at| last_end + at)
        && is_partial_opener(text.get(start..).unwrap_or(""))
    {
        blocks.push(Block {
            start,
            end: None,
            content: Content::Unfinished(
                "the agent-choice block is incomplete: the text ends inside its <!-- agent-choice opener"
                    .to_owned(),
            ),
        });
    }
    blocks
}

/// When `<!--` ending at `after` opens an agent-choice block, the offset of
/// the block's body (just after `agent-choice`).
fn block_body_start(text: &str, after: usize) -> Option<usize> {
    let rest = text.get(after..)?;
    let name_start = after + (rest.len() - rest.trim_start().len());
    let name_end = name_start + BLOCK_NAME.len();
    let name = text.get(name_start..name_end)?;
    let next = text.get(name_end..).and_then(|rest| rest.chars().next());
    let name_ends = next.is_none_or(|c| !(c.is_alphanumeric() || c == '_'));
    (name.eq_ignore_ascii_case(BLOCK_NAME) && name_ends).then_some(name_end)
}

/// Whether `tail` (the end of the text, from a `<`) is the start of an
/// opener still being streamed: `<!`, `<!-`, `<!--`, `<!-- agent-ch`, ….
fn is_partial_opener(tail: &str) -> bool {
    if tail.len() < 2 {
        return false;
    }
    if tail.len() <= "<!--".len() {
        return "<!--".starts_with(tail);
    }
    let Some(rest) = tail.strip_prefix("<!--") else {
        return false;
    };
    let rest = rest.trim_start();
    rest.len() < BLOCK_NAME.len()
        && BLOCK_NAME
            .get(..rest.len())
            .is_some_and(|prefix| prefix.eq_ignore_ascii_case(rest))
}

/// Reads a complete block's JSON: `{"options": [{"label", "title",
/// "description", "prompt"}]}` (a bare options array is accepted too).
fn read_block(value: &Value, visible: &str, report: &mut Report) -> Option<Question> {
    let options_path = field(BLOCK_PATH, "options");
    let items = match value {
        Value::Array(items) => items,
        Value::Object(map) => {
            for key in map.keys().filter(|k| *k != "options") {
                report.warn(field(BLOCK_PATH, key), "unknown field ignored");
            }
            match map.get("options") {
                Some(Value::Array(items)) => items,
                Some(other) => {
                    report.error(
                        options_path,
                        format!("expected an array, got {}", super::json::kind_of(other)),
                    );
                    return None;
                }
                None => {
                    report.error(options_path, "missing; expected an array of options");
                    return None;
                }
            }
        }
        other => {
            report.error(
                BLOCK_PATH,
                format!(
                    "expected an object with options, got {}",
                    super::json::kind_of(other)
                ),
            );
            return None;
        }
    };

    if items.len() > MAX_OPTIONS * 4 {
        report.error(
            options_path,
            format!(
                "a question has at most {MAX_OPTIONS} options, got {}",
                items.len()
            ),
        );
        return None;
    }
    let mut parts = Vec::with_capacity(items.len());
    let mut unreadable = 0;
    for (index, value) in items.iter().enumerate() {
        match read_block_option(value, &item(&options_path, index), report) {
            Some(part) => parts.push(part),
            None => unreadable += 1,
        }
    }
    let letters = !parts.is_empty()
        && parts
            .iter()
            .enumerate()
            .all(|(index, part)| is_letter(&part.label, index));
    let raw = parts
        .into_iter()
        .map(|part| {
            let label = if letters {
                part.title.unwrap_or(part.label)
            } else {
                match part.title {
                    Some(title) if part.label.is_empty() => title,
                    Some(title) if part.label.ends_with(['.', ')', ':', '：']) => {
                        format!("{} {title}", part.label)
                    }
                    Some(title) => format!("{}. {title}", part.label),
                    None => part.label,
                }
            };
            RawOption {
                path: part.path,
                label,
                description: part.description,
                value: None,
                recommended: part.recommended,
                prompt: part.prompt,
                derived: true,
            }
        })
        .collect();
    let choices = options::sanitize(&options_path, QuestionKind::Single, raw, unreadable, report)?;
    Some(choice_question(visible, choices, letters, report))
}

/// One option of a block, as written.
#[derive(Debug)]
struct BlockOption {
    path: String,
    label: String,
    title: Option<String>,
    description: Option<String>,
    prompt: Option<String>,
    recommended: bool,
}

fn read_block_option(value: &Value, path: &str, report: &mut Report) -> Option<BlockOption> {
    let map = match value {
        Value::Object(map) => map,
        Value::String(label) => {
            return Some(BlockOption {
                path: path.to_owned(),
                label: label.trim().to_owned(),
                title: None,
                description: None,
                prompt: None,
                recommended: false,
            });
        }
        other => {
            report.error(
                path,
                format!(
                    "expected an option object, got {}",
                    super::json::kind_of(other)
                ),
            );
            return None;
        }
    };
    let errors_before = report.error_count();
    let text = |key: &str, report: &mut Report| match map.get(key) {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => Some(s.trim().to_owned()).filter(|s| !s.is_empty()),
        Some(Value::Number(n)) => Some(n.to_string()),
        Some(other) => {
            report.error(
                field(path, key),
                format!("expected a string, got {}", super::json::kind_of(other)),
            );
            None
        }
    };
    let label = text("label", report);
    let title = text("title", report);
    let description = text("description", report);
    let prompt = text("prompt", report);
    for key in map.keys() {
        if !["label", "title", "description", "prompt", "recommended"].contains(&key.as_str()) {
            report.warn(field(path, key), "unknown field ignored");
        }
    }
    let recommended = match map.get("recommended") {
        None | Some(Value::Null) => false,
        Some(Value::Bool(b)) => *b,
        Some(other) => {
            report.error(
                field(path, "recommended"),
                format!("expected a boolean, got {}", super::json::kind_of(other)),
            );
            false
        }
    };
    if report.error_count() > errors_before {
        return None;
    }
    let (label, title) = match (label, title) {
        (Some(label), title) => (label, title),
        (None, Some(title)) => (title, None),
        (None, None) => (String::new(), None),
    };
    Some(BlockOption {
        path: path.to_owned(),
        label,
        title,
        description,
        prompt,
        recommended,
    })
}

/// Whether `label` is the letter at `index` (A, B, C, …), any case.
fn is_letter(label: &str, index: usize) -> bool {
    let mut chars = label.chars();
    match (chars.next(), chars.next()) {
        (Some(c), None) => {
            c.is_ascii_alphabetic() && usize::from(c.to_ascii_uppercase() as u8 - b'A') == index
        }
        _ => false,
    }
}

/// Reads a plain lettered list: the last run of 2–6 lines lettered A, B, C…
/// in order; its question is the paragraph just before it (or, when there
/// is none, just after it).
fn read_list(text: &str, report: &mut Report) -> Option<Question> {
    let lines: Vec<&str> = text.lines().collect();
    let runs = letter_runs(&lines);
    let Some(run) = runs
        .iter()
        .rev()
        .find(|run| LIST_ITEMS.contains(&run.items.len()))
    else {
        let message = match runs.iter().map(|run| run.items.len()).max() {
            Some(longest) if longest > *LIST_ITEMS.end() => format!(
                "no question found: a lettered list is read as options only with 2–6 items, got {longest}"
            ),
            _ => "no question found: expected an <!-- agent-choice … --> block or a lettered list of 2–6 options (A. … B. …)".to_owned(),
        };
        report.error(TEXT_PATH, message);
        return None;
    };
    let before = paragraph_before(&lines, run.first_line);
    let question = if before.is_empty() {
        paragraph_after(&lines, run.last_line)
    } else {
        before
    };
    let options_path = field(TEXT_PATH, "options");
    let raw = run
        .items
        .iter()
        .enumerate()
        .map(|(index, list_item)| RawOption {
            path: item(&options_path, index),
            label: list_item.text.replace("**", "").trim().to_owned(),
            description: list_item.more.clone(),
            value: None,
            recommended: false,
            prompt: None,
            derived: true,
        })
        .collect();
    let choices = options::sanitize(&options_path, QuestionKind::Single, raw, 0, report)?;
    Some(choice_question(&question, choices, true, report))
}

/// A run of lettered lines.
#[derive(Debug, Default)]
struct Run {
    first_line: usize,
    last_line: usize,
    items: Vec<ListItem>,
}

#[derive(Debug)]
struct ListItem {
    /// The text after the letter.
    text: String,
    /// Indented lines under the item, joined.
    more: Option<String>,
}

/// Finds every run of lines lettered A, B, C… in order. Blank lines may
/// separate items; indented lines continue the item above.
fn letter_runs(lines: &[&str]) -> Vec<Run> {
    let mut runs = Vec::new();
    let mut current: Option<Run> = None;
    for (number, line) in lines.iter().enumerate() {
        if let Some((index, text)) = parse_item(line) {
            match current.as_mut() {
                Some(run) if index == run.items.len() => {
                    run.items.push(ListItem {
                        text: text.to_owned(),
                        more: None,
                    });
                    run.last_line = number;
                    continue;
                }
                _ => {}
            }
            runs.extend(current.take());
            if index == 0 {
                current = Some(Run {
                    first_line: number,
                    last_line: number,
                    items: vec![ListItem {
                        text: text.to_owned(),
                        more: None,
                    }],
                });
            }
        } else if line.trim().is_empty() {
            continue;
        } else if line.starts_with([' ', '\t'])
            && let Some(run) = current.as_mut()
            && run.last_line + 1 == number
            && let Some(last) = run.items.last_mut()
        {
            let line = line.trim();
            last.more = Some(match last.more.take() {
                Some(more) => format!("{more} {line}"),
                None => line.to_owned(),
            });
            run.last_line = number;
        } else {
            runs.extend(current.take());
        }
    }
    runs.extend(current);
    runs
}

/// Parses one lettered line: `A. text`, `B) text`, `C: text`, `A：text`,
/// `(A) text`, `**A.** text`, `- A. text`. Returns the letter's index
/// (A = 0) and the text.
fn parse_item(line: &str) -> Option<(usize, &str)> {
    let mut s = line.trim();
    for bullet in ["- ", "* ", "+ ", "• "] {
        if let Some(rest) = s.strip_prefix(bullet) {
            s = rest.trim_start();
            break;
        }
    }
    let bold = s.starts_with("**") || s.starts_with("__");
    if bold {
        s = s.get(2..)?;
    }
    let paren = s.starts_with(['(', '（']);
    if paren {
        s = s.get(s.chars().next()?.len_utf8()..)?;
    }
    let mut chars = s.chars();
    let letter = chars.next()?;
    if !letter.is_ascii_alphabetic() {
        return None;
    }
    let mut rest = chars.as_str();
    if bold && !paren {
        rest = rest
            .strip_prefix("**")
            .or_else(|| rest.strip_prefix("__"))
            .unwrap_or(rest);
    }
    let separator = rest.chars().next()?;
    let ok = if paren {
        matches!(separator, ')' | '）')
    } else {
        matches!(separator, '.' | ')' | ':' | '：' | '、' | '．' | '）')
    };
    if !ok {
        return None;
    }
    rest = rest.get(separator.len_utf8()..)?;
    if bold {
        rest = rest
            .strip_prefix("**")
            .or_else(|| rest.strip_prefix("__"))
            .unwrap_or(rest);
    }
    if separator.is_ascii() && !rest.starts_with(char::is_whitespace) {
        return None;
    }
    let text = rest.trim();
    if text.is_empty() {
        return None;
    }
    Some((usize::from(letter.to_ascii_uppercase() as u8 - b'A'), text))
}

/// The paragraph (non-empty lines) just before line `first`.
fn paragraph_before(lines: &[&str], first: usize) -> String {
    let head = lines.get(..first).unwrap_or(&[]);
    let mut end = head.len();
    while end > 0 && head[end - 1].trim().is_empty() {
        end -= 1;
    }
    let mut start = end;
    while start > 0 && !head[start - 1].trim().is_empty() {
        start -= 1;
    }
    join_lines(&head[start..end])
}

/// The paragraph (non-empty lines) just after line `last`.
fn paragraph_after(lines: &[&str], last: usize) -> String {
    let tail = lines.get(last + 1..).unwrap_or(&[]);
    let start = tail
        .iter()
        .position(|line| !line.trim().is_empty())
        .unwrap_or(tail.len());
    let end = tail[start..]
        .iter()
        .position(|line| line.trim().is_empty())
        .map_or(tail.len(), |n| start + n);
    join_lines(&tail[start..end])
}

fn join_lines(lines: &[&str]) -> String {
    lines
        .iter()
        .map(|line| line.trim())
        .collect::<Vec<_>>()
        .join("\n")
}

/// The one question of a text ask. A question text over the limit keeps
/// its last paragraphs (the question is usually at the end of a message).
fn choice_question(
    text: &str,
    options: Vec<crate::model::Choice>,
    letters: bool,
    report: &mut Report,
) -> Question {
    let text = text.trim();
    let text = if text.is_empty() {
        CHOICE_HEADER.to_owned()
    } else {
        fit_question(text, report)
    };
    Question {
        id: CHOICE_ID.to_owned(),
        header: CHOICE_HEADER.to_owned(),
        text,
        kind: QuestionKind::Single,
        options,
        default: None,
        placeholder: None,
        required: true,
        letters,
    }
}

/// Keeps the last paragraphs of `text` that fit in the question limit.
fn fit_question(text: &str, report: &mut Report) -> String {
    let length = chars(text);
    if length <= MAX_QUESTION_CHARS {
        return text.to_owned();
    }
    let budget = MAX_QUESTION_CHARS - 1;
    let paragraphs: Vec<&str> = text
        .split("\n\n")
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .collect();
    let mut kept: Vec<&str> = Vec::new();
    let mut used = 0;
    for paragraph in paragraphs.iter().rev() {
        let cost = chars(paragraph) + if kept.is_empty() { 0 } else { 2 };
        if used + cost > budget {
            break;
        }
        used += cost;
        kept.push(paragraph);
    }
    let fitted = if kept.is_empty() {
        let last = paragraphs.last().copied().unwrap_or(text);
        let skip = chars(last).saturating_sub(budget);
        last.chars().skip(skip).collect::<String>()
    } else {
        kept.reverse();
        kept.join("\n\n")
    };
    let fitted = format!("…{}", fitted.trim_start());
    report.warn(
        TEXT_PATH,
        format!(
            "the text before the options is {length} characters; kept its last {} as the question",
            chars(&fitted)
        ),
    );
    fitted
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn items() {
        let cases: &[(&str, Option<(usize, &str)>)] = &[
            ("A. Staging", Some((0, "Staging"))),
            ("B) Production", Some((1, "Production"))),
            ("C: Later", Some((2, "Later"))),
            ("A：立即部署", Some((0, "立即部署"))),
            ("**A.** Staging", Some((0, "Staging"))),
            ("**B**. Staging", Some((1, "Staging"))),
            ("- (C) Nobody", Some((2, "Nobody"))),
            ("a) lower", Some((0, "lower"))),
            ("A.I. is great", None),
            ("Apple: red", None),
            ("A.", None),
            ("1. one", None),
            ("", None),
        ];
        for (line, expect) in cases {
            assert_eq!(parse_item(line), *expect, "{line:?}");
        }
    }

    #[test]
    fn partial_openers() {
        for tail in ["<!", "<!-", "<!--", "<!-- ", "<!-- agent", "<!--AGENT-CH"] {
            assert!(is_partial_opener(tail), "{tail:?}");
        }
        for tail in ["<", "<b>", "<!-- note", "<!-x"] {
            assert!(!is_partial_opener(tail), "{tail:?}");
        }
    }
}

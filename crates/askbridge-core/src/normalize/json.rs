//! The JSON dialects: canonical / OpenClaw `ask_user` / Claude Code
//! `AskUserQuestion`, LLM Wiki `user.ask`, tool-call wrappers around them
//! and bare question arrays.
//!
//! Only the known structure is walked (wrappers, questions, options), so
//! arbitrarily deep input costs nothing and cannot overflow the stack.

use serde_json::{Map, Value};

use super::options::{self, RawOption};
use super::{Report, chars, field, here, ids, item};
use crate::model::limits::{
    DEFAULT_TIMEOUT_SECONDS, MAX_CALLBACK_URL_CHARS, MAX_CONTEXT_CHARS, MAX_HEADER_CHARS,
    MAX_LANGUAGE_CHARS, MAX_NOTICE_CHARS, MAX_OPTIONS, MAX_PLACES, MAX_QUESTION_CHARS,
    MAX_QUESTIONS, MAX_QUESTIONS_STRICT, MAX_THREAD_KEY_CHARS, MAX_THREAD_TITLE_CHARS,
    MAX_TIMEOUT_SECONDS, MIN_REMIND_SECONDS, MIN_TIMEOUT_SECONDS,
};
use crate::model::{
    Ask, Callback, CallbackEvent, Choice, Context, Escalation, Notice, Place, Question,
    QuestionKind, Reminders, Target, Thread, Unset,
};

/// Longest title, description, placeholder or default text, in characters.
const MAX_TEXT_CHARS: usize = MAX_QUESTION_CHARS;
/// Longest agent-choice prompt, in characters.
const MAX_PROMPT_CHARS: usize = 10_000;
/// Longest id an agent may give, in characters.
const MAX_ID_CHARS: usize = 64;
/// Tool-call wrappers unwrapped at most this deep.
const MAX_WRAPPERS: usize = 4;
/// Beyond this many options, they are counted but not read one by one.
const MAX_OPTIONS_READ: usize = MAX_OPTIONS * 4;

/// Keys naming the tool in a tool-call wrapper.
const TOOL_KEYS: &[&str] = &["name", "tool", "action", "tool_name"];
/// Keys holding the tool's input in a tool-call wrapper.
const INPUT_KEYS: &[&str] = &["input", "arguments", "params", "parameters", "tool_input"];
/// The tool names askbridge answers to, as written in errors.
const TOOL_NAMES: &str = "ask_user, AskUserQuestion, ask_user_question, user.ask or user_input.ask";

/// Reads a JSON ask in any dialect. Errors go to `report`.
pub(crate) fn read(value: &Value, report: &mut Report) -> Option<Ask> {
    read_at(value, "", 0, report)
}

fn read_at(value: &Value, base: &str, depth: usize, report: &mut Report) -> Option<Ask> {
    match value {
        Value::Array(items) => {
            let questions = read_questions(items, base, true, report);
            finish(
                None,
                questions,
                DEFAULT_TIMEOUT_SECONDS,
                Reach::default(),
                report,
            )
        }
        Value::Object(map) => read_object(map, base, depth, report),
        other => {
            report.error(
                here(base),
                format!(
                    "expected an ask object or an array of questions, got {}",
                    kind_of(other)
                ),
            );
            None
        }
    }
}

fn read_object(
    map: &Map<String, Value>,
    base: &str,
    depth: usize,
    report: &mut Report,
) -> Option<Ask> {
    let tool = TOOL_KEYS.iter().find_map(|&k| map.get(k).map(|v| (k, v)));
    let input = INPUT_KEYS.iter().find_map(|&k| map.get(k).map(|v| (k, v)));
    let has_questions = ["questions", "fields", "question"]
        .iter()
        .any(|k| map.contains_key(*k));
    // The key naming askbridge's tool, when one does. Beside inline
    // questions, `name` may be the form's own name rather than a tool's; it
    // is then an unknown field like any other.
    let mut tool_key = None;
    if let Some((key, name)) = tool {
        let path = field(base, key);
        match name {
            Value::String(name) if is_ask_tool(name) => tool_key = Some(key),
            _ if key == "name" && has_questions && input.is_none() => {}
            Value::String(name) => {
                report.error(
                    path,
                    format!("unknown tool \"{name}\"; expected {TOOL_NAMES}"),
                );
                return None;
            }
            other => {
                report.error(
                    path,
                    format!("expected a tool name string, got {}", kind_of(other)),
                );
                return None;
            }
        }
    }
    if let Some((key, input)) = input.filter(|_| !has_questions) {
        let path = field(base, key);
        if depth >= MAX_WRAPPERS {
            report.error(path, "tool-call wrappers nested too deeply");
            return None;
        }
        return match input {
            Value::String(text) => match serde_json::from_str::<Value>(text) {
                Ok(inner) => read_at(&inner, &path, depth + 1, report),
                Err(error) => {
                    report.error(path, format!("expected the tool input as JSON, got a string that is not JSON ({error})"));
                    None
                }
            },
            inner => read_at(inner, &path, depth + 1, report),
        };
    }
    if depth < MAX_WRAPPERS
        && !has_questions
        && let Some(Value::Object(function)) = map.get("function")
    {
        // OpenAI's `{"type": "function", "function": {"name", "arguments"}}`.
        return read_object(function, &field(base, "function"), depth + 1, report);
    }
    read_ask(map, base, tool_key, report)
}

/// Whether a tool name is one of askbridge's ask tool's names, ignoring
/// case, separators and an MCP (`mcp__server__`) or `functions.` prefix.
fn is_ask_tool(name: &str) -> bool {
    let name = name.trim();
    let name = match name.strip_prefix("mcp__") {
        Some(rest) => rest.split_once("__").map_or(rest, |(_, tool)| tool),
        None => name,
    };
    let name = name.strip_prefix("functions.").unwrap_or(name);
    let squashed: String = name
        .chars()
        .filter(char::is_ascii_alphanumeric)
        .map(|c| c.to_ascii_lowercase())
        .collect();
    matches!(
        squashed.as_str(),
        "userask" | "userinputask" | "askuserquestion" | "askuser"
    )
}

/// Keys of the ask object.
const ASK_KEYS: &[&str] = &[
    "title",
    "context",
    "thread",
    "description",
    "questions",
    "fields",
    "timeoutSeconds",
    "timeout_seconds",
    "timeout",
    "to",
    "target",
    "escalate",
    "remindAfterSeconds",
    "remind_after_seconds",
    "remindEverySeconds",
    "remind_every_seconds",
    "callbackUrl",
    "callback_url",
    "callbackEvents",
    "callback_events",
    "approval",
];

fn read_ask(
    map: &Map<String, Value>,
    base: &str,
    tool_key: Option<&str>,
    report: &mut Report,
) -> Option<Ask> {
    let single = !map.contains_key("questions")
        && !map.contains_key("fields")
        && map.contains_key("question");
    for key in map.keys() {
        let known = ASK_KEYS.contains(&key.as_str())
            || Some(key.as_str()) == tool_key
            || (single && QUESTION_KEYS.contains(&key.as_str()));
        if !known {
            report.warn(field(base, key), "unknown field ignored");
        }
    }
    let title = text_field(map, base, "title", MAX_TEXT_CHARS, report);
    let context = read_context(map, base, report);
    let thread = read_thread(map, base, report);
    // In the single-question form, `description` is the question's.
    let description = if single {
        None
    } else {
        text_field(map, base, "description", MAX_TEXT_CHARS, report)
    };
    let timeout = read_timeout(map, base, report);
    let places = read_places(map, base, report);
    let escalate = read_escalate(map, base, timeout, &places, report);
    let remind = read_reminders(map, base, timeout, report);
    let callback = read_callback(map, base, report);
    let approval = read_approval(map, base, report);
    let given = |keys: &[&str]| {
        keys.iter()
            .any(|key| map.get(*key).is_some_and(|v| !v.is_null()))
    };
    let reach = Reach {
        places,
        escalate,
        remind,
        callback,
        approval,
        unset: Unset {
            remind: !given(&["remindAfterSeconds", "remind_after_seconds"]),
            escalate: !given(&["escalate"]),
        },
    };

    let mut questions = if single {
        report.warn(
            here(base),
            "read as a single question; send questions as \"questions\": [ … ]",
        );
        match read_question(&Value::Object(map.clone()), base, true, report) {
            Some(draft) => assign_ids(vec![draft], base, false, report),
            None => Vec::new(),
        }
    } else {
        let (key, value) = match (map.get("questions"), map.get("fields")) {
            (Some(q), Some(_)) => {
                report.warn(field(base, "fields"), "ignored: questions is given too");
                ("questions", q)
            }
            (Some(q), None) => ("questions", q),
            (None, Some(f)) => ("fields", f),
            (None, None) => {
                report.error(
                    field(base, "questions"),
                    "missing; expected an array of 1–12 questions",
                );
                return None;
            }
        };
        let path = field(base, key);
        match value {
            Value::Array(items) => read_questions(items, &path, key == "questions", report),
            other => {
                report.error(
                    path,
                    format!("expected an array of questions, got {}", kind_of(other)),
                );
                return None;
            }
        }
    };

    if let Some(description) = description {
        let path = field(base, "description");
        match questions.first_mut() {
            Some(first) if chars(&first.text) + chars(&description) + 2 <= MAX_QUESTION_CHARS => {
                first.text = format!("{description}\n\n{}", first.text);
                report.warn(path, "moved into the first question's text");
            }
            _ => report.warn(path, "dropped: the ask has no description field and it does not fit in the first question"),
        }
    }
    finish(title, questions, timeout, reach, report).map(|ask| Ask {
        context,
        thread,
        ..ask
    })
}

/// Reads a notice ([`super::normalize_notice`]).
pub(crate) fn read_notice(value: &Value, report: &mut Report) -> Option<Notice> {
    let base = "";
    let Value::Object(map) = value else {
        report.error(
            super::ROOT,
            format!(
                "expected a notice object {{\"text\", \"context\", \"thread\", \"to\"}}, got {}",
                kind_of(value)
            ),
        );
        return None;
    };
    for key in map.keys() {
        if !matches!(
            key.as_str(),
            "text" | "context" | "thread" | "to" | "target"
        ) {
            report.warn(field(base, key), "unknown field ignored");
        }
    }
    let text = text_field(map, base, "text", MAX_NOTICE_CHARS, report);
    let blank = match map.get("text") {
        None | Some(Value::Null) => true,
        Some(Value::String(text)) => text.trim().is_empty(),
        Some(_) => false,
    };
    if blank {
        report.error(
            field(base, "text"),
            "missing; expected what the notice says",
        );
    }
    let context = read_context(map, base, report);
    let thread = read_thread(map, base, report);
    let mut places = read_places(map, base, report).into_iter();
    let target = places.next();
    if places.next().is_some() {
        report.error(field(base, "to"), "a notice goes to one place");
    }
    Some(Notice {
        text: text?,
        context,
        thread,
        target,
    })
}

/// Reads `thread`: its key alone (the title is the key), or `{"key": …,
/// "title": …}`.
fn read_thread(map: &Map<String, Value>, base: &str, report: &mut Report) -> Option<Thread> {
    let path = field(base, "thread");
    let (key, title) = match map.get("thread")? {
        Value::Null => return None,
        Value::String(key) => (key.trim().to_owned(), None),
        Value::Object(thread) => {
            for key in thread.keys() {
                if !matches!(key.as_str(), "key" | "title") {
                    report.warn(field(&path, key), "unknown field ignored");
                }
            }
            let Some(key) = string_field(thread, &path, "key", report) else {
                if !thread.contains_key("key") {
                    report.error(field(&path, "key"), "missing; expected the thread's key");
                }
                return None;
            };
            let title = text_field(thread, &path, "title", MAX_THREAD_TITLE_CHARS, report);
            (key, title)
        }
        other => {
            report.error(
                path,
                format!(
                    "expected a string or {{\"key\": …, \"title\": …}}, got {}",
                    kind_of(other)
                ),
            );
            return None;
        }
    };
    let length = chars(&key);
    if key.is_empty() {
        report.warn(path, "empty: left out");
        return None;
    }
    if length > MAX_THREAD_KEY_CHARS {
        report.error(
            path,
            format!("a thread key is at most {MAX_THREAD_KEY_CHARS} characters, got {length}"),
        );
        return None;
    }
    let title = title.unwrap_or_else(|| key.clone());
    Some(Thread { key, title })
}

/// Reads `context`: the text alone, or `{"text": …, "language": …}`. Its
/// lines are kept as given (indentation too); blank lines around it go.
fn read_context(map: &Map<String, Value>, base: &str, report: &mut Report) -> Option<Context> {
    let path = field(base, "context");
    let (text, language) = match map.get("context")? {
        Value::Null => return None,
        Value::String(text) => (text.as_str(), None),
        Value::Object(block) => {
            for key in block.keys() {
                if !matches!(key.as_str(), "text" | "language") {
                    report.warn(field(&path, key), "unknown field ignored");
                }
            }
            let text = match block.get("text") {
                Some(Value::String(text)) => text.as_str(),
                Some(other) => {
                    report.error(
                        field(&path, "text"),
                        format!("expected a string, got {}", kind_of(other)),
                    );
                    return None;
                }
                None => {
                    report.error(field(&path, "text"), "missing; expected the block's text");
                    return None;
                }
            };
            (text, read_language(block, &path, report))
        }
        other => {
            report.error(
                path,
                format!(
                    "expected a string or {{\"text\": …, \"language\": …}}, got {}",
                    kind_of(other)
                ),
            );
            return None;
        }
    };
    // Blank lines around it go; the first line's indentation stays.
    let text = text.trim_end();
    let start = text
        .find(|c: char| !c.is_whitespace())
        .map_or(text.len(), |at| {
            text[..at].rfind('\n').map_or(0, |nl| nl + 1)
        });
    let text = &text[start..];
    if text.is_empty() {
        report.warn(path, "empty: left out");
        return None;
    }
    let length = chars(text);
    if length > MAX_CONTEXT_CHARS {
        report.error(
            path,
            format!("a context is at most {MAX_CONTEXT_CHARS} characters, got {length}"),
        );
        return None;
    }
    Some(Context {
        text: text.replace("\r\n", "\n"),
        language,
    })
}

/// A context block's `language`: one word such as `diff` or `c++`; any
/// other value is dropped with a warning.
fn read_language(block: &Map<String, Value>, base: &str, report: &mut Report) -> Option<String> {
    let path = field(base, "language");
    match block.get("language")? {
        Value::Null => None,
        Value::String(language) => {
            let language = language.trim();
            let word = !language.is_empty()
                && chars(language) <= MAX_LANGUAGE_CHARS
                && language
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '+' | '#' | '.'));
            if word {
                Some(language.to_ascii_lowercase())
            } else {
                report.warn(
                    path,
                    format!("not a language name (one word, at most {MAX_LANGUAGE_CHARS} characters): ignored"),
                );
                None
            }
        }
        other => {
            report.warn(
                path,
                format!("expected a string, got {}: ignored", kind_of(other)),
            );
            None
        }
    }
}

/// Where and how an ask reaches the person, as read.
struct Reach {
    /// `to`, the first place first.
    places: Vec<Target>,
    escalate: Vec<Escalation>,
    remind: Option<Reminders>,
    /// Not where the person is, but how the agent hears of it.
    callback: Option<Callback>,
    approval: bool,
    unset: Unset,
}

impl Default for Reach {
    /// Nothing said: every setting left to the defaults.
    fn default() -> Reach {
        Reach {
            places: Vec::new(),
            escalate: Vec::new(),
            remind: None,
            callback: None,
            approval: false,
            unset: Unset::ALL,
        }
    }
}

/// The ask, unless an error was recorded. An ask left without questions
/// (its only question dropped) is an error here.
fn finish(
    title: Option<String>,
    questions: Vec<Question>,
    timeout_seconds: u32,
    reach: Reach,
    report: &mut Report,
) -> Option<Ask> {
    if questions.is_empty() && report.error_count() == 0 {
        report.no_question_left(super::ROOT);
    }
    let Reach {
        places,
        escalate,
        remind,
        callback,
        approval,
        unset,
    } = reach;
    let mut places = places.into_iter();
    (report.error_count() == 0).then(|| Ask {
        title,
        context: None,
        thread: None,
        questions,
        timeout_seconds,
        target: places.next(),
        also: places.collect(),
        escalate,
        remind,
        callback,
        approval,
        unset,
    })
}

/// Reads `approval`: `true` for an approval, which only the person each
/// place names answers; absent or `false` for an ask whoever a place
/// admits answers.
fn read_approval(map: &Map<String, Value>, base: &str, report: &mut Report) -> bool {
    match map.get("approval") {
        None | Some(Value::Null) => false,
        Some(Value::Bool(approval)) => *approval,
        Some(other) => {
            report.error(
                field(base, "approval"),
                format!("expected true or false, got {}", kind_of(other)),
            );
            false
        }
    }
}

/// Reads `callbackUrl` (an absolute `http(s)://` URL) and
/// `callbackEvents` (the events besides `ask.ended`, which is always
/// sent). Whether the daemon may call the URL is decided when the ask is
/// created, not here.
fn read_callback(map: &Map<String, Value>, base: &str, report: &mut Report) -> Option<Callback> {
    let key = |camel: &'static str, snake: &'static str| {
        if map.contains_key(snake) && !map.contains_key(camel) {
            snake
        } else {
            camel
        }
    };
    let url_key = key("callbackUrl", "callback_url");
    let events_key = key("callbackEvents", "callback_events");
    let events = match map.get(events_key) {
        None | Some(Value::Null) => Some(vec![CallbackEvent::Ended]),
        Some(Value::Array(items)) => {
            let mut events = vec![CallbackEvent::Ended];
            let mut valid = true;
            for (i, item) in items.iter().enumerate() {
                match item.as_str().and_then(CallbackEvent::parse) {
                    Some(event) => events.push(event),
                    None => {
                        valid = false;
                        report.error(
                            format!("{}[{i}]", field(base, events_key)),
                            format!(
                                "expected one of {}, got {item}",
                                CallbackEvent::ALL.map(CallbackEvent::as_str).join(", ")
                            ),
                        );
                    }
                }
            }
            events.sort_unstable();
            events.dedup();
            valid.then_some(events)
        }
        Some(other) => {
            report.error(
                field(base, events_key),
                format!("expected an array of event names, got {}", kind_of(other)),
            );
            None
        }
    };
    let path = field(base, url_key);
    let url = match map.get(url_key) {
        None | Some(Value::Null) => {
            if map.get(events_key).is_some_and(|v| !v.is_null()) {
                report.error(
                    field(base, events_key),
                    format!("needs {url_key}: where to send the events"),
                );
            }
            return None;
        }
        Some(Value::String(url)) => url.trim(),
        Some(other) => {
            report.error(
                path,
                format!("expected a URL string, got {}", kind_of(other)),
            );
            return None;
        }
    };
    if let Err(problem) = check_callback_url(url) {
        report.error(path, problem);
        return None;
    }
    Some(Callback {
        url: url.to_owned(),
        events: events?,
    })
}

/// Whether `url` is an absolute `http://` or `https://` URL with a host,
/// short enough and without spaces; the problem if not.
fn check_callback_url(url: &str) -> Result<(), String> {
    if chars(url) > MAX_CALLBACK_URL_CHARS {
        return Err(format!("longer than {MAX_CALLBACK_URL_CHARS} characters"));
    }
    if url.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err("contains spaces or control characters".to_owned());
    }
    let lower = url.to_ascii_lowercase();
    let rest = ["https://", "http://"]
        .iter()
        .find_map(|scheme| lower.strip_prefix(scheme))
        .ok_or_else(|| format!("expected an absolute https:// URL, got {url:?}"))?;
    let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
    let host = authority.rsplit('@').next().unwrap_or_default();
    if host.is_empty() || host.starts_with(':') {
        return Err(format!("has no host: {url:?}"));
    }
    if authority.contains('@') {
        return Err("must not carry a user name or password".to_owned());
    }
    Ok(())
}

/// Reads `remindAfterSeconds` (0: no reminder) and `remindEverySeconds`:
/// each at least 30, the first reminder before the ask's timeout.
pub(crate) fn read_reminders(
    map: &Map<String, Value>,
    base: &str,
    timeout: u32,
    report: &mut Report,
) -> Option<Reminders> {
    let mut seconds = |camel: &str, snake: &str| -> Option<(String, u32)> {
        let key = if map.contains_key(snake) && !map.contains_key(camel) {
            snake
        } else {
            camel
        };
        let path = field(base, key);
        match map.get(key) {
            None | Some(Value::Null) => None,
            Some(Value::Number(n)) => match n.as_u64().and_then(|n| u32::try_from(n).ok()) {
                Some(secs) if secs == 0 || secs >= MIN_REMIND_SECONDS => Some((path, secs)),
                _ => {
                    report.error(
                        path,
                        format!("{n} is not 0 (off) or a whole number of seconds from {MIN_REMIND_SECONDS}"),
                    );
                    None
                }
            },
            Some(other) => {
                report.error(
                    path,
                    format!("expected a whole number of seconds, got {}", kind_of(other)),
                );
                None
            }
        }
    };
    let after = seconds("remindAfterSeconds", "remind_after_seconds");
    let every = seconds("remindEverySeconds", "remind_every_seconds");
    let (after_path, after_seconds) = match after {
        Some((_, 0)) | None => {
            if let Some((path, secs)) = every
                && secs > 0
            {
                report.error(
                    path,
                    "repeats a reminder that remindAfterSeconds does not set",
                );
            }
            return None;
        }
        Some(after) => after,
    };
    if after_seconds >= timeout {
        report.error(
            after_path,
            format!("{after_seconds} is not before the ask's timeout ({timeout} s)"),
        );
        return None;
    }
    Some(Reminders {
        after_seconds,
        every_seconds: every.map(|(_, secs)| secs).filter(|secs| *secs > 0),
    })
}

/// Reads `escalate`: a list of `{afterSeconds, to}` steps, each before the
/// ask's timeout (`to` may list several places passed on to at that
/// time), sorted by time; no place twice, counting `places` (the ask's
/// `to`).
pub(crate) fn read_escalate(
    map: &Map<String, Value>,
    base: &str,
    timeout: u32,
    places: &[Target],
    report: &mut Report,
) -> Vec<Escalation> {
    let Some(value) = map.get("escalate").filter(|v| !v.is_null()) else {
        return Vec::new();
    };
    let path = field(base, "escalate");
    let Value::Array(items) = value else {
        report.error(
            path,
            format!(
                "expected a list of {{afterSeconds, to}} steps, got {}",
                kind_of(value)
            ),
        );
        return Vec::new();
    };
    let mut steps: Vec<Escalation> = Vec::new();
    let mut seen: Vec<(Place, String)> = places
        .iter()
        .map(|target| (target.place.clone(), field(base, "to")))
        .collect();
    for (index, value) in items.iter().enumerate() {
        let step_path = item(&path, index);
        let Value::Object(step) = value else {
            report.error(
                step_path,
                format!("expected {{afterSeconds, to}}, got {}", kind_of(value)),
            );
            continue;
        };
        for key in step.keys() {
            if !["afterSeconds", "after_seconds", "to", "target"].contains(&key.as_str()) {
                report.warn(field(&step_path, key), "unknown field ignored");
            }
        }
        let after_key = if step.contains_key("after_seconds") && !step.contains_key("afterSeconds")
        {
            "after_seconds"
        } else {
            "afterSeconds"
        };
        let after_path = field(&step_path, after_key);
        let after = match step.get(after_key) {
            None | Some(Value::Null) => {
                report.error(
                    after_path,
                    "missing; expected the seconds after the ask is created",
                );
                None
            }
            Some(Value::Number(n)) => match n.as_u64() {
                Some(secs) if secs >= 1 && secs < u64::from(timeout) => u32::try_from(secs).ok(),
                Some(secs) if secs >= 1 => {
                    report.error(
                        after_path,
                        format!(
                            "{secs} is not before the ask's timeout ({timeout} s): the timeout covers the whole escalation"
                        ),
                    );
                    None
                }
                _ => {
                    report.error(
                        after_path,
                        format!("expected a whole number of seconds from 1, got {n}"),
                    );
                    None
                }
            },
            Some(other) => {
                report.error(
                    after_path,
                    format!("expected a whole number of seconds, got {}", kind_of(other)),
                );
                None
            }
        };
        let targets = read_places(step, &step_path, report);
        if targets.is_empty() && !step.contains_key("to") && !step.contains_key("target") {
            report.error(
                field(&step_path, "to"),
                "missing; expected where to pass the ask on to",
            );
        }
        let Some(after) = after else {
            continue;
        };
        for target in targets {
            let to_path = field(&step_path, "to");
            if let Some((_, first)) = seen.iter().find(|(place, _)| *place == target.place) {
                report.error(
                    to_path,
                    format!("{} is listed already, at {first}", target.place),
                );
                continue;
            }
            seen.push((target.place.clone(), to_path));
            steps.push(Escalation {
                after_seconds: after,
                to: target,
            });
        }
    }
    if places.len() + steps.len() > MAX_PLACES {
        report.error(
            path,
            format!(
                "{} places with `to`'s; at most {MAX_PLACES}",
                places.len() + steps.len()
            ),
        );
    }
    steps.sort_by_key(|step| step.after_seconds);
    steps
}

/// Reads an array of questions at `path`. `strict_dialect` is whether the
/// array is `questions` (not LLM Wiki's `fields`), which brings the
/// 4-question soft limit of OpenClaw and Claude Code when ids are missing.
fn read_questions(
    items: &[Value],
    path: &str,
    strict_dialect: bool,
    report: &mut Report,
) -> Vec<Question> {
    if items.len() > MAX_QUESTIONS {
        report.error(
            here(path),
            format!(
                "an ask has at most {MAX_QUESTIONS} questions, got {}",
                items.len()
            ),
        );
        return Vec::new();
    }
    let errors_before = report.error_count();
    let drafts: Vec<Draft> = items
        .iter()
        .enumerate()
        .filter_map(|(index, value)| read_question(value, &item(path, index), false, report))
        .collect();
    if report.error_count() > errors_before {
        return Vec::new();
    }
    if items.is_empty() {
        report.error(here(path), "an ask needs at least 1 question, got 0");
        return Vec::new();
    }
    if drafts.is_empty() {
        report.no_question_left(here(path));
        return Vec::new();
    }
    let strict = strict_dialect && drafts.iter().any(|d| d.id.is_none());
    assign_ids(drafts, path, strict, report)
}

/// A question read from JSON, before ids are assigned.
#[derive(Debug)]
struct Draft {
    /// `questions[2]`.
    path: String,
    /// The id the agent gave, trimmed and non-empty.
    id: Option<String>,
    /// Texts to derive an id from when none is given, best first.
    id_sources: Vec<String>,
    question: Question,
}

/// Gives every question a unique id: the agent's ids first (suffixed
/// `_2`, `_3` when repeated, with a warning), then derived ones.
fn assign_ids(drafts: Vec<Draft>, path: &str, strict: bool, report: &mut Report) -> Vec<Question> {
    if strict && drafts.len() > MAX_QUESTIONS_STRICT {
        report.warn(
            here(path),
            format!(
                "{} questions; the tool asks for at most {MAX_QUESTIONS_STRICT}, accepted up to {MAX_QUESTIONS}",
                drafts.len()
            ),
        );
    }
    let mut taken: Vec<String> = Vec::with_capacity(drafts.len());
    let mut given: Vec<Option<String>> = Vec::with_capacity(drafts.len());
    for draft in &drafts {
        given.push(draft.id.as_ref().map(|id| {
            let unique = ids::unique(id, &taken);
            if unique != *id {
                report.warn(
                    field(&draft.path, "id"),
                    format!("duplicate id \"{id}\" renamed to \"{unique}\""),
                );
            }
            taken.push(unique.clone());
            unique
        }));
    }
    let mut questions = Vec::with_capacity(drafts.len());
    for (position, (draft, id)) in drafts.into_iter().zip(given).enumerate() {
        let id = id.unwrap_or_else(|| {
            let base = draft
                .id_sources
                .iter()
                .map(|text| ids::snake_id(text))
                .find(|id| !id.is_empty())
                .unwrap_or_else(|| format!("q{}", position + 1));
            let unique = ids::unique(&base, &taken);
            taken.push(unique.clone());
            unique
        });
        questions.push(Question {
            id,
            ..draft.question
        });
    }
    questions
}

/// Keys of a question object.
const QUESTION_KEYS: &[&str] = &[
    "id",
    "header",
    "question",
    "text",
    "label",
    "description",
    "type",
    "multiSelect",
    "multiselect",
    "multi_select",
    "multiple",
    "options",
    "choices",
    "default",
    "defaultValue",
    "default_value",
    "placeholder",
    "required",
    "letters",
];

/// Reads one question. `None` means dropped (with a warning) or refused
/// (with errors). `embedded` is set when the question is the ask object
/// itself, whose ask-level keys are not the question's.
fn read_question(value: &Value, path: &str, embedded: bool, report: &mut Report) -> Option<Draft> {
    let map = match value {
        Value::Object(map) => map,
        Value::String(text) if !text.trim().is_empty() => {
            report.warn(path, "a plain string read as a free-text question");
            let text = text.trim().to_owned();
            let length = chars(&text);
            if length > MAX_QUESTION_CHARS {
                report.error(
                    path,
                    format!(
                        "a question text is at most {MAX_QUESTION_CHARS} characters, got {length}"
                    ),
                );
                return None;
            }
            return Some(Draft {
                path: path.to_owned(),
                id: None,
                id_sources: vec![text.clone()],
                question: Question {
                    id: String::new(),
                    header: ids::derive_header(&text),
                    text,
                    kind: QuestionKind::Text,
                    options: Vec::new(),
                    default: None,
                    placeholder: None,
                    required: true,
                    letters: false,
                },
            });
        }
        other => {
            report.error(
                here(path),
                format!("expected a question object, got {}", kind_of(other)),
            );
            return None;
        }
    };
    let declared = read_type(map, path, report)?;
    if !embedded {
        for key in map.keys() {
            if !QUESTION_KEYS.contains(&key.as_str()) {
                report.warn(field(path, key), "unknown field ignored");
            }
        }
    }
    let errors_before = report.error_count();

    let id = read_id(map, path, report);
    let header = text_field(map, path, "header", MAX_TEXT_CHARS, report);
    let question = string_field(map, path, "question", report);
    let text_alias = string_field(map, path, "text", report);
    let label = string_field(map, path, "label", report);
    let description = text_field(map, path, "description", MAX_TEXT_CHARS, report);
    let placeholder = text_field(map, path, "placeholder", MAX_TEXT_CHARS, report);
    let required = read_bool(map, path, "required", report).unwrap_or(true);
    let letters = read_bool(map, path, "letters", report);
    let multi_select = ["multiSelect", "multiselect", "multi_select", "multiple"]
        .iter()
        .find_map(|k| read_bool(map, path, k, report));
    let (options_key, raw_options, unreadable) = read_raw_options(map, path, report);

    // The question text: `question`, else `text`, else LLM Wiki's `label`
    // (which names the header when `question` or `text` is given too).
    let (text_key, text, label_header) = match (question, text_alias, label) {
        (Some(question), text, label) => {
            if text.is_some() {
                report.warn(field(path, "text"), "ignored: question is given too");
            }
            ("question", question, label)
        }
        (None, Some(text), label) => ("text", text, label),
        (None, None, Some(label)) => ("label", label, None),
        (None, None, None) => {
            let key = ["question", "text", "label"]
                .into_iter()
                .find(|k| map.contains_key(*k))
                .unwrap_or("question");
            (key, String::new(), None)
        }
    };
    let mut text = if text.is_empty() {
        match header.as_ref().or(label_header.as_ref()) {
            Some(header) => header.clone(),
            None => {
                report.error(field(path, text_key), "a question needs text, got none");
                return None;
            }
        }
    } else {
        text
    };
    let own_text = text.clone();
    if let Some(description) = description {
        let description_path = field(path, "description");
        if chars(&text) + chars(&description) + 2 <= MAX_QUESTION_CHARS {
            text = format!("{text}\n\n{description}");
            report.warn(description_path, "moved into the question text");
        } else {
            report.warn(
                description_path,
                "dropped: it does not fit in the question text",
            );
        }
    }
    let length = chars(&text);
    if length > MAX_QUESTION_CHARS {
        report.error(
            field(path, text_key),
            format!("a question text is at most {MAX_QUESTION_CHARS} characters, got {length}"),
        );
    }

    // The header chip, and what an id is derived from.
    let id_sources: Vec<String> = header
        .iter()
        .chain(label_header.iter())
        .cloned()
        .chain([own_text.clone()])
        .collect();
    let header = match header.or(label_header) {
        Some(given) => {
            let cut = ids::cut_header(&given);
            if cut != given {
                report.warn(
                    field(path, "header"),
                    format!("cut to {MAX_HEADER_CHARS} characters: \"{cut}\""),
                );
            }
            cut
        }
        None => ids::derive_header(&own_text),
    };

    // The kind.
    let has_raw_options = raw_options.as_ref().is_some_and(|o| !o.is_empty());
    let kind = match (declared, multi_select) {
        (Some(QuestionKind::Single) | None, Some(true)) => QuestionKind::Multi,
        (Some(QuestionKind::Multi), Some(false)) => {
            report.warn(
                field(path, "multiSelect"),
                "ignored: false contradicts type \"multi\"",
            );
            QuestionKind::Multi
        }
        (Some(kind), Some(true)) if !kind.has_options() => {
            report.warn(
                field(path, "multiSelect"),
                format!("ignored: a {} question has no options", kind.as_str()),
            );
            kind
        }
        (Some(kind), _) => kind,
        (None, _) if has_raw_options => QuestionKind::Single,
        (None, _) => QuestionKind::Text,
    };

    // The options.
    let options_path = field(path, options_key);
    let raw_options = raw_options?;
    let choices = if kind.has_options() {
        if raw_options.is_empty() && unreadable == 0 {
            report.drop_question(
                here(path),
                format!(
                    "question dropped: {} needs options, got none",
                    options::kind_phrase(kind)
                ),
            );
            return None;
        }
        options::sanitize(&options_path, kind, raw_options, unreadable, report)?
    } else {
        if !raw_options.is_empty() {
            report.warn(
                &options_path,
                format!("ignored: a {} question has no options", kind.as_str()),
            );
        }
        Vec::new()
    };
    let letters = match letters {
        Some(true) if !kind.has_options() => {
            report.warn(
                field(path, "letters"),
                format!("ignored: a {} question has no options", kind.as_str()),
            );
            false
        }
        letters => letters.unwrap_or(false),
    };
    let default = read_default(map, path, kind, &choices, report);

    if report.error_count() > errors_before {
        return None;
    }
    Some(Draft {
        path: path.to_owned(),
        id,
        id_sources,
        question: Question {
            id: String::new(),
            header,
            text,
            kind,
            options: choices,
            default,
            placeholder,
            required,
            letters,
        },
    })
}

/// Reads the agent's id: a string or a number, trimmed; empty means none.
fn read_id(map: &Map<String, Value>, path: &str, report: &mut Report) -> Option<String> {
    let id = string_field(map, path, "id", report)?;
    let length = chars(&id);
    if length > MAX_ID_CHARS {
        report.error(
            field(path, "id"),
            format!("an id is at most {MAX_ID_CHARS} characters, got {length}"),
        );
        return None;
    }
    Some(id)
}

/// Reads `type`; `Err`-like `None` return means the question is dropped.
/// The inner `None` means no type was given.
fn read_type(
    map: &Map<String, Value>,
    path: &str,
    report: &mut Report,
) -> Option<Option<QuestionKind>> {
    let type_path = field(path, "type");
    let name = match map.get("type") {
        None | Some(Value::Null) => return Some(None),
        Some(Value::String(name)) => name,
        Some(other) => {
            report.error(
                type_path,
                format!("expected a type name string, got {}", kind_of(other)),
            );
            return Some(None);
        }
    };
    let squashed: String = name
        .chars()
        .filter(|c| c.is_alphanumeric())
        .flat_map(char::to_lowercase)
        .collect();
    let kind = match squashed.as_str() {
        "" => return Some(None),
        "single" | "radio" | "select" | "singlechoice" | "singleselect" | "choice" | "dropdown" => {
            QuestionKind::Single
        }
        "multi" | "multiple" | "checkbox" | "checkboxes" | "multichoice" | "multiselect" => {
            QuestionKind::Multi
        }
        "text" | "input" | "string" | "shorttext" => QuestionKind::Text,
        "textarea" | "longtext" | "paragraph" => QuestionKind::Textarea,
        "confirm" | "boolean" | "bool" | "switch" | "yesno" | "toggle" => QuestionKind::Confirm,
        _ => {
            report.drop_question(
                type_path,
                format!("question dropped: unknown type \"{name}\"; expected single, multi, text, textarea or confirm"),
            );
            return None;
        }
    };
    Some(Some(kind))
}

/// Reads `options` (or `choices`): objects or plain strings. Returns the
/// key used, the options read, and how many could not be read (each with
/// an error recorded). `None` options means the list itself was refused.
fn read_raw_options(
    map: &Map<String, Value>,
    path: &str,
    report: &mut Report,
) -> (&'static str, Option<Vec<RawOption>>, usize) {
    let (key, value) = match (map.get("options"), map.get("choices")) {
        (Some(v), _) if !v.is_null() => ("options", v),
        (_, Some(v)) if !v.is_null() => ("choices", v),
        _ => return ("options", Some(Vec::new()), 0),
    };
    let options_path = field(path, key);
    let items = match value {
        Value::Array(items) => items,
        other => {
            report.error(
                options_path,
                format!("expected an array, got {}", kind_of(other)),
            );
            return (key, None, 0);
        }
    };
    if items.len() > MAX_OPTIONS_READ {
        report.error(
            options_path,
            format!(
                "a question has at most {MAX_OPTIONS} options, got {}",
                items.len()
            ),
        );
        return (key, None, 0);
    }
    let mut raw = Vec::with_capacity(items.len());
    let mut unreadable = 0;
    for (index, value) in items.iter().enumerate() {
        match read_option(value, &item(&options_path, index), report) {
            Some(option) => raw.push(option),
            None => unreadable += 1,
        }
    }
    (key, Some(raw), unreadable)
}

/// Keys of an option object.
const OPTION_KEYS: &[&str] = &[
    "label",
    "title",
    "text",
    "name",
    "description",
    "value",
    "recommended",
    "prompt",
];

fn read_option(value: &Value, path: &str, report: &mut Report) -> Option<RawOption> {
    let raw = |label: String| RawOption {
        path: path.to_owned(),
        label,
        description: None,
        value: None,
        recommended: false,
        prompt: None,
        derived: false,
    };
    let map = match value {
        Value::String(label) => return Some(raw(label.trim().to_owned())),
        Value::Number(number) => return Some(raw(number.to_string())),
        Value::Object(map) => map,
        other => {
            report.error(
                path,
                format!(
                    "expected an option object or a label string, got {}",
                    kind_of(other)
                ),
            );
            return None;
        }
    };
    for key in map.keys() {
        if !OPTION_KEYS.contains(&key.as_str()) {
            report.warn(field(path, key), "unknown field ignored");
        }
    }
    let label = ["label", "title", "text", "name"]
        .iter()
        .find(|k| map.get(**k).is_some_and(|v| !v.is_null()))
        .and_then(|k| string_field(map, path, k, report));
    let description = text_field(map, path, "description", MAX_TEXT_CHARS, report);
    let value = string_field(map, path, "value", report);
    let recommended = read_bool(map, path, "recommended", report).unwrap_or(false);
    let prompt = text_field(map, path, "prompt", MAX_PROMPT_CHARS, report);
    let label = match (label, &value) {
        (Some(label), _) => label,
        (None, Some(value)) => value.clone(),
        (None, None) => String::new(),
    };
    if let Some(value) = &value
        && chars(value) > MAX_TEXT_CHARS
    {
        report.error(
            field(path, "value"),
            format!(
                "a value is at most {MAX_TEXT_CHARS} characters, got {}",
                chars(value)
            ),
        );
    }
    Some(RawOption {
        path: path.to_owned(),
        label,
        description,
        value,
        recommended,
        prompt,
        derived: false,
    })
}

/// Reads `default` (or `defaultValue`) against the final options.
/// Defaults that name no option are dropped with a warning.
fn read_default(
    map: &Map<String, Value>,
    path: &str,
    kind: QuestionKind,
    choices: &[Choice],
    report: &mut Report,
) -> Option<Vec<String>> {
    let (key, value) = ["default", "defaultValue", "default_value"]
        .iter()
        .find_map(|&k| map.get(k).filter(|v| !v.is_null()).map(|v| (k, v)))?;
    let default_path = field(path, key);
    let items: Vec<&Value> = match value {
        Value::Array(items) => items.iter().collect(),
        single => vec![single],
    };
    let mut texts = Vec::with_capacity(items.len());
    for value in &items {
        match value {
            Value::String(s) => texts.push(s.trim().to_owned()),
            Value::Number(n) => texts.push(n.to_string()),
            Value::Bool(b) if kind == QuestionKind::Confirm => {
                texts.push(if *b { "yes" } else { "no" }.to_owned());
            }
            other => {
                report.error(
                    &default_path,
                    format!(
                        "expected a string or an array of strings, got {}",
                        kind_of(other)
                    ),
                );
                return None;
            }
        }
    }
    texts.retain(|t| !t.is_empty());
    if texts.is_empty() {
        return None;
    }
    match kind {
        QuestionKind::Single | QuestionKind::Multi => {
            if kind == QuestionKind::Single && texts.len() > 1 {
                report.warn(
                    default_path,
                    format!(
                        "dropped: a single-choice question has one default, got {}",
                        texts.len()
                    ),
                );
                return None;
            }
            let mut labels: Vec<String> = Vec::with_capacity(texts.len());
            for text in &texts {
                match options::find(choices, text) {
                    Some(index) => {
                        let label = &choices[index].label;
                        if !labels.contains(label) {
                            labels.push(label.clone());
                        }
                    }
                    None => {
                        report.warn(
                            default_path,
                            format!("dropped: \"{text}\" is not one of the options"),
                        );
                        return None;
                    }
                }
            }
            Some(labels)
        }
        QuestionKind::Confirm => {
            let answer = match texts.as_slice() {
                [one] => match one.to_lowercase().as_str() {
                    "yes" | "y" | "true" => Some("yes"),
                    "no" | "n" | "false" => Some("no"),
                    _ => None,
                },
                _ => None,
            };
            match answer {
                Some(answer) => Some(vec![answer.to_owned()]),
                None => {
                    report.warn(default_path, "dropped: a confirm default is yes or no");
                    None
                }
            }
        }
        QuestionKind::Text | QuestionKind::Textarea => match texts.as_slice() {
            [one] if chars(one) <= MAX_TEXT_CHARS => Some(vec![one.clone()]),
            [one] => {
                report.error(
                    default_path,
                    format!(
                        "a default text is at most {MAX_TEXT_CHARS} characters, got {}",
                        chars(one)
                    ),
                );
                None
            }
            _ => {
                report.warn(
                    default_path,
                    format!(
                        "dropped: a text question has one default, got {}",
                        texts.len()
                    ),
                );
                None
            }
        },
    }
}

/// Reads `timeoutSeconds` (or `timeout_seconds`, `timeout`): default 900,
/// clamped to 30–3600; numeric strings and fractions are read with a warning.
fn read_timeout(map: &Map<String, Value>, base: &str, report: &mut Report) -> u32 {
    let Some((key, value)) = ["timeoutSeconds", "timeout_seconds", "timeout"]
        .iter()
        .find_map(|&k| map.get(k).filter(|v| !v.is_null()).map(|v| (k, v)))
    else {
        return DEFAULT_TIMEOUT_SECONDS;
    };
    let path = field(base, key);
    let seconds: f64 = match value {
        Value::Number(n) => match (n.as_i64(), n.as_f64()) {
            (Some(i), _) => i as f64,
            (None, Some(f)) => f,
            (None, None) => DEFAULT_TIMEOUT_SECONDS.into(),
        },
        Value::String(s) => {
            let trimmed = s.trim();
            let digits = trimmed
                .strip_suffix("seconds")
                .or_else(|| trimmed.strip_suffix('s'))
                .unwrap_or(trimmed)
                .trim();
            match digits.parse::<f64>() {
                Ok(f) if f.is_finite() => {
                    report.warn(
                        &path,
                        format!("expected a number, read the string \"{s}\" as {f}"),
                    );
                    f
                }
                _ => {
                    report.error(path, "expected a number of seconds, got a string");
                    return DEFAULT_TIMEOUT_SECONDS;
                }
            }
        }
        other => {
            report.error(
                path,
                format!("expected a number of seconds, got {}", kind_of(other)),
            );
            return DEFAULT_TIMEOUT_SECONDS;
        }
    };
    let rounded = seconds.round();
    if rounded != seconds {
        report.warn(&path, format!("rounded {seconds} to {rounded}"));
    }
    let (min, max) = (
        f64::from(MIN_TIMEOUT_SECONDS),
        f64::from(MAX_TIMEOUT_SECONDS),
    );
    if rounded < min {
        report.warn(
            path,
            format!("{rounded} is below the minimum; clamped to {MIN_TIMEOUT_SECONDS}"),
        );
        MIN_TIMEOUT_SECONDS
    } else if rounded > max {
        report.warn(
            path,
            format!("{rounded} is above the maximum; clamped to {MAX_TIMEOUT_SECONDS}"),
        );
        MAX_TIMEOUT_SECONDS
    } else {
        // Whole and within 30..=3600, so the conversion is exact.
        rounded as u32
    }
}

/// Reads `to` (or `target`): a target string or `{channel, chat, thread,
/// user}`, or a list of them (several places at once, each at most once).
/// Empty when absent: the default target.
pub(crate) fn read_places(
    map: &Map<String, Value>,
    base: &str,
    report: &mut Report,
) -> Vec<Target> {
    let Some((key, value)) = ["to", "target"]
        .iter()
        .find_map(|&k| map.get(k).filter(|v| !v.is_null()).map(|v| (k, v)))
    else {
        return Vec::new();
    };
    let path = field(base, key);
    let Value::Array(items) = value else {
        return read_target(value, path, report).into_iter().collect();
    };
    if items.len() > MAX_PLACES {
        report.error(
            path,
            format!("{} places; at most {MAX_PLACES}", items.len()),
        );
        return Vec::new();
    }
    let mut places: Vec<Target> = Vec::with_capacity(items.len());
    for (index, value) in items.iter().enumerate() {
        let item_path = item(&path, index);
        if value.is_array() {
            report.error(item_path, "expected a target string or object, got array");
            continue;
        }
        let Some(target) = read_target(value, item_path.clone(), report) else {
            if value.is_null() || value.as_str().is_some_and(|s| s.trim().is_empty()) {
                report.error(item_path, "empty; expected a target");
            }
            continue;
        };
        if let Some(first) = places.iter().position(|seen| seen.place == target.place) {
            report.error(
                item_path,
                format!(
                    "{} is listed already, at {}",
                    target.place,
                    item(&path, first)
                ),
            );
            continue;
        }
        places.push(target);
    }
    places
}

/// Reads one target at `path`: a string or `{channel, chat, thread, user}`.
fn read_target(value: &Value, path: String, report: &mut Report) -> Option<Target> {
    let result = match value {
        Value::Null => return None,
        Value::String(s) if s.trim().is_empty() => return None,
        Value::String(s) => Target::parse(s),
        Value::Object(parts) => {
            const PART_KEYS: &[&str] = &[
                "channel",
                "chat",
                "chatId",
                "chat_id",
                "thread",
                "threadId",
                "thread_id",
                "threadTs",
                "thread_ts",
                "user",
                "userId",
                "user_id",
            ];
            for key in parts.keys() {
                if !PART_KEYS.contains(&key.as_str()) {
                    report.warn(field(&path, key), "unknown field ignored");
                }
            }
            let errors_before = report.error_count();
            let mut part = |keys: &[&str]| {
                keys.iter()
                    .find(|k| parts.get(**k).is_some_and(|v| !v.is_null()))
                    .and_then(|k| match parts.get(*k) {
                        Some(Value::String(s)) => Some(s.trim().to_owned()),
                        Some(Value::Number(n)) => Some(n.to_string()),
                        Some(other) => {
                            report.error(
                                field(&path, k),
                                format!("expected a string or a number, got {}", kind_of(other)),
                            );
                            None
                        }
                        None => None,
                    })
                    .filter(|s| !s.is_empty())
            };
            let channel = part(&["channel"]);
            let chat = part(&["chat", "chatId", "chat_id"]);
            let thread = part(&["thread", "threadId", "thread_id", "threadTs", "thread_ts"]);
            let user = part(&["user", "userId", "user_id"]);
            if report.error_count() > errors_before {
                return None;
            }
            let Some(channel) = channel else {
                report.error(
                    field(&path, "channel"),
                    "missing; expected telegram, discord, slack, feishu, matrix, teams, email or web",
                );
                return None;
            };
            Target::from_parts(
                &channel,
                chat.as_deref(),
                thread.as_deref(),
                user.as_deref(),
            )
        }
        other => {
            report.error(
                path,
                format!("expected a target string or object, got {}", kind_of(other)),
            );
            return None;
        }
    };
    match result {
        Ok(target) => Some(target),
        Err(error) => {
            report.error(path, error.to_string());
            None
        }
    }
}

/// Reads an optional string (numbers are written as strings), trimmed;
/// empty means absent.
fn string_field(
    map: &Map<String, Value>,
    base: &str,
    key: &str,
    report: &mut Report,
) -> Option<String> {
    match map.get(key)? {
        Value::Null => None,
        Value::String(s) => Some(s.trim().to_owned()).filter(|s| !s.is_empty()),
        Value::Number(n) => Some(n.to_string()),
        other => {
            report.error(
                field(base, key),
                format!("expected a string, got {}", kind_of(other)),
            );
            None
        }
    }
}

/// Like [`string_field`], refusing text longer than `max` characters.
fn text_field(
    map: &Map<String, Value>,
    base: &str,
    key: &str,
    max: usize,
    report: &mut Report,
) -> Option<String> {
    let text = string_field(map, base, key, report)?;
    let length = chars(&text);
    if length > max {
        report.error(
            field(base, key),
            format!("a {key} is at most {max} characters, got {length}"),
        );
        return None;
    }
    Some(text)
}

/// Reads an optional boolean; `"true"`/`"false"`/`"yes"`/`"no"` and `0`/`1`
/// are read with a warning.
fn read_bool(map: &Map<String, Value>, base: &str, key: &str, report: &mut Report) -> Option<bool> {
    let value = map.get(key)?;
    let path = field(base, key);
    let read = match value {
        Value::Null => return None,
        Value::Bool(b) => return Some(*b),
        Value::String(s) => match s.trim().to_lowercase().as_str() {
            "true" | "yes" => Some(true),
            "false" | "no" => Some(false),
            _ => None,
        },
        Value::Number(n) => match n.as_u64() {
            Some(1) => Some(true),
            Some(0) => Some(false),
            _ => None,
        },
        _ => None,
    };
    match read {
        Some(b) => report.warn(path, format!("expected a boolean, read {value} as {b}")),
        None => report.error(path, format!("expected a boolean, got {}", kind_of(value))),
    }
    read
}

/// "a string", "an array", … for error messages: the words every JSON
/// type error uses, in the normaliser and in the HTTP API alike.
pub fn kind_of(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

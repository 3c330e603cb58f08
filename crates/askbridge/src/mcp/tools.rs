//! The two MCP tools as the model sees them: names, descriptions, input and
//! output JSON Schemas, written by hand.
//!
//! The input schema describes the canonical ask to guide the
//! model, but it is deliberately loose (no `additionalProperties: false`,
//! few `required`s): every dialect is accepted, and the core normaliser is
//! what validates, answering with path-named problems.

use std::sync::Arc;

use rmcp::model::{JsonObject, Tool, ToolAnnotations};
use serde_json::{Value, json};

/// The name of the tool that asks the user.
pub const ASK_USER: &str = "ask_user";
/// The name of the tool that picks up an outcome later.
pub const GET_ANSWER: &str = "get_answer";

/// The longest `waitSeconds` `get_answer` honours.
pub const MAX_WAIT_SECONDS: u64 = 600;

const ASK_USER_DESCRIPTION: &str = "\
Ask the user a few structured questions — in the chat they already use (Telegram, Discord, Slack) or askbridge's web page — and wait for the answer.

When to use it: only for decisions that are truly the user's to make — a preference, an approval, a choice between valid alternatives, information only they have. Do not ask for things you can find out yourself (read the code or docs, run a command) or can reasonably decide on your own.

How to ask:
- 1–4 questions per call. Each has a short `header` (a chip label, at most 12 characters), one clear `question` sentence, and a `type`: `single` (choose one; the default when options are given), `multi` (choose any; or `multiSelect: true`), `text`, `textarea`, or `confirm` (yes/no).
- Choice questions get 2–4 options with short, distinct labels; put detail in `description`. Put the recommended option first and end its label with \"(Recommended)\".
- Do not add an \"Other\" option: the user can always type their own answer instead.
- `timeoutSeconds` (default 900, 30–3600) bounds the wait. `to` says where to ask (\"telegram:<chat_id>\", \"discord:<channel_id>\", \"slack:<channel_id>\", \"web\"); leave it out for the configured default. Where your host can show a form itself, the questions also appear there; `elicitation` (\"also\", \"only\", \"off\") overrides that for one ask — leave it out unless the user asked.

The call blocks until the user answers, skips, or the time runs out, and sends progress notifications meanwhile; each names the ask id. The result is structured JSON: `status` is \"answered\" or \"no_answer\" (then `reason` is timeout, skipped, cancelled or delivery_failed); `answers` maps each question id to a list of strings (the chosen labels verbatim, the user's own words, \"yes\"/\"no\" for confirm, [] for a skipped optional question); `continuation` is the answer phrased as a user message. If your call times out before the user answers, call get_answer with the ask id.";

const GET_ANSWER_DESCRIPTION: &str = "\
Pick up the answer to an earlier ask_user call by its ask id (named in ask_user's progress messages and results) — for when that call timed out or was interrupted. Waits up to `waitSeconds` (default 0, at most 600) for the user. Returns the same outcome JSON as ask_user once the ask has ended, or `{\"id\", \"status\": \"pending\", …}` while it is still open; call again to keep waiting.";

/// The `ask_user` tool; with `callbacks` (the daemon has webhooks on),
/// its schema offers `callbackUrl` and `callbackEvents`.
pub fn ask_user(callbacks: bool) -> Tool {
    let mut input = ask_user_input();
    if callbacks && let Some(properties) = input["properties"].as_object_mut() {
        properties.insert(
            "callbackUrl".to_owned(),
            json!({"type": "string", "maxLength": 2048, "description": "Only when you will not wait for the answer: an https:// URL askbridge POSTs the outcome to, signed, when the ask ends (the daemon allows only some hosts)."}),
        );
        properties.insert(
            "callbackEvents".to_owned(),
            json!({"type": "array", "items": {"type": "string", "enum": ["ask.posted", "ask.reminded", "ask.escalated", "ask.ended"]}, "description": "Further events sent to callbackUrl; ask.ended is always sent."}),
        );
    }
    Tool::new(ASK_USER, ASK_USER_DESCRIPTION, object(input))
        .with_title("Ask the user")
        .with_raw_output_schema(object(outcome_output(false)))
        .with_annotations(
            ToolAnnotations::new()
                .read_only(false)
                .destructive(false)
                .idempotent(false)
                .open_world(true),
        )
}

/// The `get_answer` tool.
pub fn get_answer() -> Tool {
    Tool::new(
        GET_ANSWER,
        GET_ANSWER_DESCRIPTION,
        object(get_answer_input()),
    )
    .with_title("Get the user's answer")
    .with_raw_output_schema(object(outcome_output(true)))
    .with_annotations(
        ToolAnnotations::new()
            .read_only(true)
            .destructive(false)
            .idempotent(true)
            .open_world(true),
    )
}

/// Both tools, in the order `tools/list` gives them (`callbacks`: as
/// for [`ask_user`]).
pub fn all(callbacks: bool) -> Vec<Tool> {
    vec![ask_user(callbacks), get_answer()]
}

/// The tool of this name.
pub fn named(name: &str, callbacks: bool) -> Option<Tool> {
    match name {
        ASK_USER => Some(ask_user(callbacks)),
        GET_ANSWER => Some(get_answer()),
        _ => None,
    }
}

fn object(value: Value) -> Arc<JsonObject> {
    match value {
        Value::Object(map) => Arc::new(map),
        _ => Arc::new(JsonObject::new()),
    }
}

fn ask_user_input() -> Value {
    let option = json!({
        "type": "object",
        "properties": {
            "label": {"type": "string", "description": "Short label, returned verbatim in the answer. End the recommended one with \"(Recommended)\"."},
            "description": {"type": "string", "description": "One line of detail shown with the label."},
            "value": {"type": "string", "description": "A value to get back instead of the label (optional)."},
            "recommended": {"type": "boolean", "description": "Marks the recommended option (same as the \"(Recommended)\" suffix)."}
        },
        "required": ["label"]
    });
    let question = json!({
        "type": "object",
        "properties": {
            "id": {"type": "string", "description": "Unique snake_case id, the key of this question's answer. Derived from the header when left out."},
            "header": {"type": "string", "description": "Chip label, at most 12 characters, e.g. \"Deploy\"."},
            "question": {"type": "string", "description": "One clear question sentence."},
            "type": {
                "type": "string",
                "enum": ["single", "multi", "text", "textarea", "confirm"],
                "description": "single: choose one option; multi: choose any; text/textarea: free text; confirm: yes/no. Default: single when options are given, else text."
            },
            "options": {
                "type": "array",
                "items": option,
                "minItems": 2,
                "description": "2–4 options for single/multi, recommended first. Never an \"Other\" option: free text is always allowed."
            },
            "multiSelect": {"type": "boolean", "description": "true: several options may be chosen (same as type multi)."},
            "default": {"description": "Default answer: an option label (or a list of labels for multi), the text, or \"yes\"/\"no\" for confirm."},
            "placeholder": {"type": "string", "description": "Hint shown in an empty text input."},
            "required": {"type": "boolean", "default": true, "description": "false: the user may skip this question."}
        },
        "required": ["question"]
    });
    json!({
        "type": "object",
        "properties": {
            "title": {"type": "string", "description": "Short title shown above the questions, e.g. \"Release 2.4\"."},
            "context": {
                "description": "What the user should see to decide, shown whole above the questions as a code block: a command, a diff, a plan, a log excerpt. The text alone, or {\"text\", \"language\"} (e.g. \"diff\"). Up to 100,000 characters; long blocks are split (chats show the first few messages).",
                "anyOf": [
                    {"type": "string"},
                    {
                        "type": "object",
                        "properties": {
                            "text": {"type": "string"},
                            "language": {"type": "string", "description": "e.g. diff, bash, markdown"}
                        },
                        "required": ["text"]
                    }
                ]
            },
            "questions": {
                "type": "array",
                "items": question,
                "minItems": 1,
                "maxItems": 4,
                "description": "1–4 questions, shown together."
            },
            "timeoutSeconds": {"type": "integer", "minimum": 30, "maximum": 3600, "default": 900, "description": "How long to wait for the answer, in seconds."},
            "to": {
                "anyOf": [
                    {"type": "string"},
                    {"type": "array", "items": {"type": "string"}, "minItems": 1, "maxItems": 8}
                ],
                "description": "Where to ask: \"telegram:<chat_id>[/<thread_id>]\", \"discord:<channel_id>\", \"discord:user/<user_id>\", \"slack:<channel_id>[/<thread_ts>]\" or \"web\"; \"@<user_id>\" at the end names who may answer. A list asks in several places at once; the first answer in any of them wins. Leave out for the configured default."
            },
            "escalate": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {
                        "afterSeconds": {"type": "integer", "minimum": 1, "description": "Seconds after the ask was created; before its timeoutSeconds."},
                        "to": {"type": "string", "description": "Where to pass the ask on to, as in `to`."}
                    },
                    "required": ["afterSeconds", "to"]
                },
                "description": "Where to pass the ask on to when nobody has answered after a while (earlier places stay open). Leave out for the configured default; [] for none."
            },
            "remindAfterSeconds": {"type": "integer", "minimum": 0, "description": "Remind the person this many seconds after asking if nobody has answered (0: never; at least 30). Leave out for the configured default."},
            "remindEverySeconds": {"type": "integer", "minimum": 30, "description": "Remind again at this interval after the first reminder (at most 3 reminders in all)."},
            "elicitation": {"type": "string", "enum": ["also", "only", "off"], "description": "Whether the questions also show in your host's own dialog when it can show one: \"also\" (with the chat), \"only\" (the host's dialog, with the web page instead of a chat), \"off\". Leave out for the configured default."}
        },
        "required": ["questions"]
    })
}

fn get_answer_input() -> Value {
    json!({
        "type": "object",
        "properties": {
            "id": {"type": "string", "description": "The ask id from ask_user (\"ask_…\")."},
            "waitSeconds": {"type": "integer", "minimum": 0, "maximum": MAX_WAIT_SECONDS, "default": 0, "description": "How long to wait for the answer if the ask is still open."}
        },
        "required": ["id"]
    })
}

/// The outcome; with `pending`, also the status of an open ask.
fn outcome_output(pending: bool) -> Value {
    let statuses: &[&str] = if pending {
        &["answered", "no_answer", "pending"]
    } else {
        &["answered", "no_answer"]
    };
    let required: &[&str] = if pending {
        &["id", "status"]
    } else {
        &["id", "status", "answers", "text", "continuation"]
    };
    let mut schema = json!({
        "type": "object",
        "properties": {
            "id": {"type": "string", "description": "The ask id."},
            "status": {"type": "string", "enum": statuses},
            "reason": {
                "type": ["string", "null"],
                "enum": ["timeout", "skipped", "cancelled", "delivery_failed", null],
                "description": "Why there is no answer; null when answered."
            },
            "failure": {"type": "string", "description": "The platform's reason for a delivery failure."},
            "answers": {
                "type": "object",
                "additionalProperties": {"type": "array", "items": {"type": "string"}},
                "description": "Question id → the chosen labels verbatim, the user's own words, \"yes\"/\"no\", or [] when skipped."
            },
            "details": {"type": "array", "items": {"type": "object"}},
            "answeredBy": {"type": ["object", "null"]},
            "answeredAt": {"type": "string", "description": "RFC 3339 time the ask ended."},
            "text": {"type": "string", "description": "One line per question."},
            "continuation": {"type": "string", "description": "The answer phrased as a user message."}
        },
        "required": required
    });
    if pending && let Some(properties) = schema["properties"].as_object_mut() {
        properties.insert(
            "expiresAt".to_owned(),
            json!({"type": "string", "description": "While pending: when the ask times out."}),
        );
        properties.insert(
            "open".to_owned(),
            json!({"type": "array", "items": {"type": "string"}, "description": "While pending: questions still unanswered."}),
        );
    }
    schema
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ask_user_offers_a_callback_only_where_webhooks_are_on() {
        let properties = |callbacks| {
            ask_user(callbacks).input_schema["properties"]
                .as_object()
                .expect("properties")
                .clone()
        };
        assert!(!properties(false).contains_key("callbackUrl"));
        assert!(!properties(false).contains_key("callbackEvents"));
        let on = properties(true);
        assert_eq!(on["callbackUrl"]["type"], "string");
        assert_eq!(
            on["callbackEvents"]["items"]["enum"],
            json!(["ask.posted", "ask.reminded", "ask.escalated", "ask.ended"])
        );
        assert_eq!(all(true).len(), 2);
        assert!(
            named(ASK_USER, true)
                .is_some_and(|tool| tool.input_schema["properties"].get("callbackUrl").is_some())
        );
    }

    #[test]
    fn the_description_says_when_and_how_to_ask() {
        for phrase in [
            "truly the user's",
            "find out yourself",
            "1–4 questions",
            "recommended option first",
            "(Recommended)",
            "Do not add an \"Other\" option",
            "structured JSON",
            "get_answer",
        ] {
            let description = ask_user(false).description.unwrap_or_default();
            assert!(description.contains(phrase), "missing {phrase:?}");
        }
    }

    #[test]
    fn schemas_are_objects_with_the_spec_fields() {
        let tool = ask_user(false);
        let properties = tool
            .input_schema
            .get("properties")
            .cloned()
            .unwrap_or_default();
        for field in [
            "title",
            "context",
            "questions",
            "timeoutSeconds",
            "to",
            "escalate",
            "elicitation",
        ] {
            assert!(properties.get(field).is_some(), "{field}");
        }
        let question = &properties["questions"]["items"]["properties"];
        for field in [
            "id",
            "header",
            "question",
            "type",
            "options",
            "multiSelect",
            "default",
            "placeholder",
            "required",
        ] {
            assert!(question.get(field).is_some(), "{field}");
        }
        let option = &question["options"]["items"]["properties"];
        for field in ["label", "description", "recommended"] {
            assert!(option.get(field).is_some(), "{field}");
        }
        for tool in all(true) {
            assert_eq!(tool.input_schema.get("type"), Some(&json!("object")));
            assert_eq!(
                tool.output_schema.as_ref().and_then(|s| s.get("type")),
                Some(&json!("object"))
            );
        }
    }
}

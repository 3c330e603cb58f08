//! Asks as Matrix room events. Pure: the events depend only on the
//! arguments.
//!
//! Matrix has no buttons; it has polls (MSC3381). An ask drawn with
//! buttons — one single-choice or yes/no question — is posted as a poll
//! the way Element sends one today (`org.matrix.msc3381.poll.start`): one
//! answer per button, in order (the recommended option marked, then
//! "Other…" and "Skip"), at most one selection, and as its text fallback
//! the question with its options numbered, so a client without polls
//! shows a prompt that a typed reply answers. Each answer's `id` is the
//! core's opaque callback key, so a vote is read like a button press.
//!
//! In rich mode each question is a poll of its own, posted when the one
//! before is answered (and ended then): a single-choice or yes/no
//! question as above, a text question as a poll whose "Answer…" asks
//! for the person's words, and a multi-select question as a poll of its
//! options alone with `max_selections` their number, sent with a ✅
//! reaction (the poll says so; a client that takes one vote at a time
//! sends one option, and a typed reply still takes several).
//!
//! Everything else is the numbered prompt as plain `m.text` messages,
//! answered by typing. When the ask ends, a poll is ended
//! (`org.matrix.msc3381.poll.end`) with the status line as its text, and a
//! text prompt is edited (`m.replace`) to what it showed plus that line.
//!
//! Texts are sent as plain `body` only (no `formatted_body`), so agent
//! text is never read as HTML and cannot mention anyone; only a reminder
//! has a formatted body, for the pill of the one person it reminds (the
//! rest escaped).

use askbridge_core::model::Place;
use askbridge_core::render::{
    Block, Locale, OptionRef, Step, StepInput, View, callback_key, non_blank, parse_callback_key,
};
use serde_json::{Value, json};

/// The event type of a poll, as Element sends it.
pub const POLL_START: &str = "org.matrix.msc3381.poll.start";
/// The event type that ends a poll, as Element sends it.
pub const POLL_END: &str = "org.matrix.msc3381.poll.end";
/// The event type of a plain message.
pub const MESSAGE: &str = "m.room.message";

/// Extensible events' plain-text representation (MSC1767).
const TEXT_KEY: &str = "org.matrix.msc1767.text";

/// Where an ask is posted, before it has a room: a room (by id or alias)
/// or a user's direct chat with the bot.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Destination {
    /// A room id (`!…`) or alias (`#…:server`).
    Room(String),
    /// A user (`@…:server`): the direct chat with them.
    User(String),
}

impl Destination {
    /// The destination of a `matrix:` target; `None` for other channels.
    pub fn of(place: &Place) -> Option<Destination> {
        match place {
            Place::MatrixRoom { room } => Some(Destination::Room(room.clone())),
            Place::MatrixUser { user_id } => Some(Destination::User(user_id.clone())),
            _ => None,
        }
    }
}

/// A room id as askbridge records where it posted (`!…`); `None` for
/// anything else (an alias, a user).
pub fn room_id(text: &str) -> Option<String> {
    text.starts_with('!').then(|| text.to_owned())
}

/// The place a room is, by its id: what an event in it is compared with
/// ([`Place::is_at`]).
pub fn room_place(room_id: &str) -> Place {
    Place::MatrixRoom {
        room: room_id.to_owned(),
    }
}

/// One event to send: its type and content, and the text it shows (what
/// the server records as shown, for the closing edit).
#[derive(Debug, Clone, PartialEq)]
pub struct Message {
    /// The text the message shows.
    pub text: String,
    /// The event type ([`MESSAGE`] or [`POLL_START`]).
    pub event_type: &'static str,
    /// The event content.
    pub content: Value,
}

impl Message {
    /// A plain text message.
    pub fn text(text: &str) -> Message {
        let text = non_blank(text);
        Message {
            content: json!({ "msgtype": "m.text", "body": text }),
            event_type: MESSAGE,
            text,
        }
    }

    /// Whether it is a poll.
    pub fn is_poll(&self) -> bool {
        self.event_type == POLL_START
    }
}

/// The events an ask is posted as, in order. The last one carries the
/// controls (the poll) and is the one ended or edited later. A rich ask
/// is posted as its first step ([`step_poll`]).
pub fn ask_messages(view: &View, locale: Locale) -> Vec<Message> {
    match view {
        View::Buttons(buttons) => {
            let mut messages: Vec<Message> = buttons
                .parts
                .iter()
                .map(|part| Message::text(part))
                .collect();
            let last = messages.pop().unwrap_or_else(|| Message::text(""));
            let answers = buttons.rows.iter().flatten().map(|button| Answer {
                id: button.key.clone(),
                label: &button.label,
                number: numbered(button.action),
            });
            messages.push(poll(&last.text, answers, 1));
            messages
        }
        View::Text(text) => text.parts.iter().map(|part| Message::text(part)).collect(),
        View::Rich(rich) => rich
            .steps
            .first()
            .map(|step| step_poll(step, locale))
            .into_iter()
            .collect(),
    }
}

/// One step of a rich ask as a poll: its buttons, one chosen; for a
/// multi-select question its options, as many chosen as there are, and
/// below the question how to send them (a ✅ reaction).
pub fn step_poll(step: &Step, locale: Locale) -> Message {
    let buttons = step.rows.iter().flatten();
    let ask_key = buttons
        .clone()
        .find_map(|button| parse_callback_key(&button.key))
        .map(|key| key.ask_key);
    match (&step.input, ask_key) {
        (StepInput::Toggle { options, .. }, Some(ask_key)) => {
            let question = format!("{}\n\n{}", step.text.trim_end(), locale.strings().poll_many);
            let answers = options.iter().map(|option| Answer {
                id: callback_key(&ask_key, step.question, OptionRef::Index(option.index)),
                label: &option.label,
                number: Some(option.index),
            });
            poll(&question, answers, options.len().max(1))
        }
        _ => {
            let answers = buttons.map(|button| Answer {
                id: button.key.clone(),
                label: &button.label,
                number: numbered(button.action),
            });
            poll(&step.text, answers, 1)
        }
    }
}

/// The option number a button shows in a poll's text fallback; controls
/// have none.
fn numbered(action: OptionRef) -> Option<usize> {
    match action {
        OptionRef::Index(index) => Some(index),
        OptionRef::Other | OptionRef::Skip | OptionRef::Done | OptionRef::Pass => None,
    }
}

/// One block of an ask's context: the text as the body, and as
/// `<pre><code>` (with its language as `language-…`) in the formatted
/// body.
pub fn context_message(block: &Block) -> Message {
    let text = non_blank(&block.text);
    let class = block
        .language
        .as_deref()
        .map(|language| format!(" class=\"language-{}\"", escape_html(language)))
        .unwrap_or_default();
    Message {
        content: json!({
            "msgtype": "m.text",
            "body": text,
            "format": "org.matrix.custom.html",
            "formatted_body": format!("<pre><code{class}>{}</code></pre>", escape_html(&text)),
        }),
        event_type: MESSAGE,
        text,
    }
}

/// `text` safe in HTML text and attribute values.
fn escape_html(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// One answer of a poll.
struct Answer<'a> {
    /// Its id: a callback key.
    id: String,
    label: &'a str,
    /// The option's index, numbered in the text fallback; `None` for a
    /// control.
    number: Option<usize>,
}

/// A poll asking `question` with `answers`, at most `max` chosen.
fn poll<'a>(question: &str, answers: impl Iterator<Item = Answer<'a>>, max: usize) -> Message {
    let question = non_blank(question);
    let mut fallback = question.clone();
    let answers: Vec<Value> = answers
        .map(|answer| {
            if let Some(index) = answer.number {
                fallback.push_str(&format!("\n{}. {}", index + 1, answer.label));
            }
            json!({ "id": answer.id, TEXT_KEY: answer.label })
        })
        .collect();
    Message {
        content: json!({
            POLL_START: {
                "kind": "org.matrix.msc3381.poll.disclosed",
                "max_selections": max,
                "question": { TEXT_KEY: question },
                "answers": answers,
            },
            TEXT_KEY: fallback,
        }),
        event_type: POLL_START,
        text: question,
    }
}

/// Ends the poll `poll` with `status` (the closing line) as its text.
pub fn poll_end(poll: &str, status: &str) -> Value {
    json!({
        "m.relates_to": { "rel_type": "m.reference", "event_id": poll },
        POLL_END: {},
        TEXT_KEY: non_blank(status),
    })
}

/// Edits text message `message` to show `shown` and then the status line.
pub fn closed(message: &str, shown: &str, status: &str) -> Value {
    let text = format!("{}\n\n{status}", shown.trim_end());
    json!({
        "msgtype": "m.text",
        "body": format!("* {text}"),
        "m.new_content": { "msgtype": "m.text", "body": text },
        "m.relates_to": { "rel_type": "m.replace", "event_id": message },
    })
}

/// A message in the thread of `root` (a poll, a prompt): the answer to a
/// vote, a prompt for someone's own words.
pub fn in_thread(root: &str, text: &str) -> Value {
    json!({
        "msgtype": "m.text",
        "body": non_blank(text),
        "m.relates_to": {
            "rel_type": "m.thread",
            "event_id": root,
            "is_falling_back": true,
            "m.in_reply_to": { "event_id": root },
        },
    })
}

/// A reply to message `to` (someone's typed answer).
pub fn reply(to: &str, text: &str) -> Value {
    json!({
        "msgtype": "m.text",
        "body": non_blank(text),
        "m.relates_to": { "m.in_reply_to": { "event_id": to } },
    })
}

/// A reminder replying to the question: `text`, after a mention of `user`
/// (`@name:server`) when there is one — a pill in the formatted body and
/// an intentional mention (`m.mentions`), which notifies them. Nothing
/// else in the text is read as markup.
pub fn reminder(to: &str, text: &str, user: Option<&str>) -> Value {
    let Some(user) = user.filter(|user| {
        user.starts_with('@')
            && user.contains(':')
            && !user
                .chars()
                .any(|c| c.is_whitespace() || matches!(c, '<' | '>' | '&' | '"' | '\''))
    }) else {
        return reply(to, text);
    };
    let text = non_blank(text);
    let escaped = escape_html(&text);
    json!({
        "msgtype": "m.text",
        "body": format!("{user} {text}"),
        "format": "org.matrix.custom.html",
        "formatted_body": format!("<a href=\"https://matrix.to/#/{user}\">{user}</a> {escaped}"),
        "m.mentions": { "user_ids": [user] },
        "m.relates_to": { "m.in_reply_to": { "event_id": to } },
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use askbridge_core::model::{Ask, ChannelKind};
    use askbridge_core::normalize::normalize_input;
    use askbridge_core::render::EMPTY_TEXT;
    use askbridge_core::render::{Capabilities, Locale, view};

    fn ask(json: &str) -> Ask {
        normalize_input(json).expect("a valid ask").ask
    }

    fn drawn(json: &str) -> Vec<Message> {
        drawn_as(json, Capabilities::for_channel(ChannelKind::Matrix))
    }

    fn drawn_as(json: &str, caps: Capabilities) -> Vec<Message> {
        ask_messages(&view(&ask(json), "k1", &caps, Locale::En), Locale::En)
    }

    fn answers(poll: &Message) -> Vec<(String, String)> {
        poll.content[POLL_START]["answers"]
            .as_array()
            .expect("answers")
            .iter()
            .map(|a| {
                let text = |key: &str| a[key].as_str().unwrap_or_default().to_owned();
                (text("id"), text(TEXT_KEY))
            })
            .collect()
    }

    #[test]
    fn a_rich_ask_posts_its_first_step_and_a_multi_select_step_takes_every_option() {
        let json = r#"{"questions": [
            {"question": "Where?", "options": ["Staging", "Production"]},
            {"question": "Who should be told?", "options": ["Team", "On-call", "Nobody"], "multiSelect": true}
        ]}"#;
        let caps = Capabilities::MATRIX.with_mode(askbridge_core::render::Mode::Rich);
        let messages = drawn_as(json, caps);
        assert_eq!(messages.len(), 1, "one poll per step, the first now");
        let first = &messages[0];
        assert_eq!(first.content[POLL_START]["max_selections"], 1);
        let labels: Vec<String> = answers(first).into_iter().map(|(_, l)| l).collect();
        assert_eq!(labels[..2], ["Staging", "Production"]);
        assert!(labels.iter().any(|l| l.contains("Skip")), "{labels:?}");
        assert!(first.text.contains("1/2"), "{}", first.text);

        let View::Rich(rich) = view(&ask(json), "k1", &caps, Locale::En) else {
            panic!("a rich view");
        };
        let multi = step_poll(&rich.steps[1], Locale::En);
        assert!(multi.is_poll());
        assert_eq!(multi.content[POLL_START]["max_selections"], 3);
        let expected: Vec<(String, String)> = ["Team", "On-call", "Nobody"]
            .iter()
            .enumerate()
            .map(|(i, label)| {
                (
                    callback_key("k1", 1, OptionRef::Index(i)),
                    (*label).to_owned(),
                )
            })
            .collect();
        assert_eq!(answers(&multi), expected, "the options alone, unmarked");
        let question = multi.content[POLL_START]["question"][TEXT_KEY]
            .as_str()
            .expect("question");
        assert!(question.contains("Who should be told?"), "{question}");
        assert!(question.contains("react ✅"), "{question}");
        let fallback = multi.content[TEXT_KEY].as_str().expect("fallback");
        assert!(fallback.contains("\n3. Nobody"), "{fallback}");
    }

    #[test]
    fn one_choice_question_is_a_poll_whose_answers_are_callback_keys() {
        let messages = drawn(
            r#"{"question": "Deploy where?", "options": ["Staging (Recommended)", "Production"]}"#,
        );
        assert_eq!(messages.len(), 1);
        let poll = &messages[0];
        assert!(poll.is_poll());
        let start = &poll.content[POLL_START];
        assert_eq!(start["max_selections"], 1);
        assert_eq!(start["kind"], "org.matrix.msc3381.poll.disclosed");
        assert!(
            start["question"][TEXT_KEY]
                .as_str()
                .is_some_and(|q| q.contains("Deploy where?"))
        );
        let answers = start["answers"].as_array().expect("answers");
        let ids: Vec<&str> = answers.iter().filter_map(|a| a["id"].as_str()).collect();
        for id in &ids {
            assert!(
                askbridge_core::render::parse_callback_key(id).is_some(),
                "{id}"
            );
        }
        let labels: Vec<&str> = answers
            .iter()
            .filter_map(|a| a[TEXT_KEY].as_str())
            .collect();
        assert!(labels[0].starts_with("Staging"), "{labels:?}");
        assert!(labels[0].len() > "Staging".len(), "recommended is marked");
        assert_eq!(labels[1], "Production");
        assert!(labels.iter().any(|l| l.contains("Skip")), "{labels:?}");
        let fallback = poll.content[TEXT_KEY].as_str().expect("fallback");
        assert!(fallback.contains("\n1. Staging"), "{fallback}");
        assert!(fallback.contains("\n2. Production"), "{fallback}");
        assert!(
            !fallback.contains("\n3."),
            "controls are not numbered: {fallback}"
        );
    }

    #[test]
    fn several_questions_are_the_numbered_prompt_in_text() {
        let messages = drawn(
            r#"{"questions": [
                {"question": "Where?", "options": ["Staging", "Production"]},
                {"question": "Why?", "type": "text"}
            ]}"#,
        );
        assert!(!messages.is_empty());
        for message in &messages {
            assert_eq!(message.event_type, MESSAGE);
            assert_eq!(message.content["msgtype"], "m.text");
            assert!(message.content.get("formatted_body").is_none());
        }
        let text: String = messages.iter().map(|m| m.text.as_str()).collect();
        assert!(text.contains("Where?") && text.contains("Why?"), "{text}");
    }

    #[test]
    fn endings_threads_and_replies_relate_to_their_event() {
        let end = poll_end("$poll", "✅ Staging — answered by Alice");
        assert_eq!(end["m.relates_to"]["rel_type"], "m.reference");
        assert_eq!(end["m.relates_to"]["event_id"], "$poll");
        assert_eq!(end[TEXT_KEY], "✅ Staging — answered by Alice");

        let edit = closed("$text", "Where?\n", "⏱ Expired");
        assert_eq!(edit["m.new_content"]["body"], "Where?\n\n⏱ Expired");
        assert_eq!(edit["m.relates_to"]["rel_type"], "m.replace");

        let thread = in_thread("$poll", "This question is for @alice:hs");
        assert_eq!(thread["m.relates_to"]["rel_type"], "m.thread");
        assert_eq!(thread["m.relates_to"]["m.in_reply_to"]["event_id"], "$poll");

        let answer = reply("$typed", "");
        assert_eq!(answer["body"], EMPTY_TEXT);
        assert_eq!(
            answer["m.relates_to"]["m.in_reply_to"]["event_id"],
            "$typed"
        );
    }

    #[test]
    fn destinations_of_matrix_targets_only() {
        let room = askbridge_core::model::Target::parse("matrix:!r:hs@@a:hs").expect("target");
        assert_eq!(
            Destination::of(&room.place),
            Some(Destination::Room("!r:hs".to_owned()))
        );
        let user = askbridge_core::model::Target::parse("matrix:user/@a:hs").expect("target");
        assert_eq!(
            Destination::of(&user.place),
            Some(Destination::User("@a:hs".to_owned()))
        );
        let web = askbridge_core::model::Target::parse("web").expect("target");
        assert_eq!(Destination::of(&web.place), None);
    }

    #[test]
    fn a_reminder_mentions_the_asked_person_with_a_pill() {
        let text = "⏰ Still waiting <b>";
        let mentioning = reminder("$question", text, Some("@alice:example.org"));
        assert_eq!(
            mentioning["body"],
            "@alice:example.org ⏰ Still waiting <b>"
        );
        assert_eq!(
            mentioning["formatted_body"],
            "<a href=\"https://matrix.to/#/@alice:example.org\">@alice:example.org</a> ⏰ Still waiting &lt;b&gt;"
        );
        assert_eq!(
            mentioning["m.mentions"]["user_ids"],
            json!(["@alice:example.org"])
        );
        assert_eq!(
            mentioning["m.relates_to"]["m.in_reply_to"]["event_id"],
            "$question"
        );
        for user in [None, Some("@room"), Some("@a:b\"><x")] {
            let plain = reminder("$question", text, user);
            assert_eq!(plain["body"], text);
            assert!(plain.get("formatted_body").is_none(), "{plain}");
        }
    }

    /// Matrix limits a whole event to 65,536 bytes of JSON, and a context
    /// block is in it twice (`body`, and escaped in `formatted_body`): the
    /// blocks of a long context of any width, and the question after them,
    /// are each an event within it, with room for the server's envelope.
    #[test]
    fn every_event_of_a_wide_context_and_its_question_fits_matrix_s_event_size() {
        let texts = [
            "中".repeat(19_000),
            format!("{}\n", "部署日志：服务已启动，正在检查数据库连接".repeat(5)).repeat(190),
            "🙂".repeat(20_000),
            "👩‍👩‍👧‍👦 🏳️‍🌈 👍🏽 🇯🇵 ".repeat(2_000),
            "<a href=\"x\">&amp;</a> ".repeat(4_000),
            "&".repeat(60_000),
            "x".repeat(60_000),
        ];
        let question: String = "中".repeat(1_900);
        for text in texts {
            let ask = ask(&json!({
                "questions": [{"question": question, "options": ["Staging", "Production"]}],
                "context": {"text": text, "language": "log"},
            })
            .to_string());
            let blocks =
                askbridge_core::render::context_blocks(&ask, &Capabilities::MATRIX, Locale::En);
            assert!(!blocks.is_empty());
            let drawn = view(&ask, "k1", &Capabilities::MATRIX, Locale::En);
            let messages = blocks
                .iter()
                .map(context_message)
                .chain(ask_messages(&drawn, Locale::En));
            for message in messages {
                let size = message.content.to_string().len();
                assert!(size <= 65_536 - 4_096, "an event of {size} bytes");
            }
        }
    }

    #[test]
    fn a_context_block_is_pre_code_with_its_language_escaped() {
        let ask = ask(
            r#"{"questions": [{"question": "Apply?"}], "context": {"text": "<b>&</b>", "language": "html"}}"#,
        );
        let blocks =
            askbridge_core::render::context_blocks(&ask, &Capabilities::MATRIX, Locale::En);
        let message = context_message(&blocks[0]);
        assert_eq!(message.content["body"], "<b>&</b>");
        assert_eq!(
            message.content["formatted_body"],
            "<pre><code class=\"language-html\">&lt;b&gt;&amp;&lt;/b&gt;</code></pre>"
        );
    }
}

//! Asks as Microsoft Teams messages: Adaptive Cards (schema 1.5, what
//! Teams renders). Pure: the activities depend only on the arguments.
//!
//! Every message askbridge posts is a card, even the plain text ones: a
//! card's `TextRun` shows agent text as typed, where a text message would
//! read it as markdown (and `<at>` as a mention), and a card can be
//! updated in place (`PUT …/activities/{id}`) when the ask moves on or
//! ends. The activity's `summary` is the card's first line, for
//! notifications.
//!
//! - One single-choice or yes/no question: its text, then an
//!   `Action.Execute` per option (the recommended one `positive`), a row
//!   each; "Other…" becomes a text field with a Send button on the card
//!   itself; Skip last.
//! - Rich mode, one step at a time: a multi-select step is an
//!   `Input.ChoiceSet` (`isMultiSelect`, the checked options chosen) sent
//!   by Done; a text step is the field with its Send.
//! - Everything else: the numbered prompt as text cards, answered by
//!   typing.
//!
//! Every action's `verb` is [`VERB`] and its `data` carries the core's
//! opaque callback key under [`KEY`]; the card's inputs are named
//! [`TEXT_INPUT`] and [`CHOICE_INPUT`] (whose values are option indices,
//! comma-separated), and Teams sends them with the action's data.

use askbridge_core::model::Place;
use askbridge_core::render::{
    Block, Button, ButtonStyle, EMPTY_TEXT, Locale, OptionRef, Step, StepInput, Unit, View, cut,
    non_blank,
};
use serde_json::{Value, json};

/// The `verb` of every `Action.Execute` askbridge draws.
pub const VERB: &str = "askbridge";
/// The key of an action's `data` that holds its callback key.
pub const KEY: &str = "askbridge";
/// The id of the own-words text field.
pub const TEXT_INPUT: &str = "askbridgeText";
/// The id of a multi-select step's choice set.
pub const CHOICE_INPUT: &str = "askbridgeChoice";
/// The content type of an Adaptive Card attachment.
pub const CARD_TYPE: &str = "application/vnd.microsoft.card.adaptive";
/// Longest text field Teams is asked to take.
pub const MAX_INPUT_CHARS: usize = 2_000;
/// Largest activity Teams takes (bytes of its JSON): 28 KB.
pub const MAX_ACTIVITY_BYTES: usize = 28 * 1_024;
/// Most actions Teams shows in one action set (its host config's
/// `maxActions`); askbridge's rows hold three.
pub const MAX_ACTIONS_PER_SET: usize = 6;
/// Longest shown text kept in a closing update (at four bytes a
/// character, under [`MAX_ACTIVITY_BYTES`]).
pub const MAX_CLOSED_TEXT_CHARS: usize = 6_000;
/// Longest `summary` (Teams shows it in notifications).
const MAX_SUMMARY_CHARS: usize = 120;

/// Where an ask is posted, before it has a conversation: a conversation
/// (a channel, a group chat, a personal chat) or a person, whose personal
/// chat with the bot is created on the first ask.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Destination {
    /// A conversation id (`19:…@thread.tacv2`, `a:…`).
    Conversation(String),
    /// A person's AAD object id.
    User(String),
}

impl Destination {
    /// The destination of a `teams:` target; `None` for other channels.
    pub fn of(place: &Place) -> Option<Destination> {
        match place {
            Place::Teams { conversation } => Some(Destination::Conversation(conversation.clone())),
            Place::TeamsUser { aad_object_id } => Some(Destination::User(aad_object_id.clone())),
            _ => None,
        }
    }
}

/// One message: the text it shows (what the server records as shown, for
/// the closing update) and the activity that posts it.
#[derive(Debug, Clone, PartialEq)]
pub struct Message {
    /// The plain text of the message.
    pub text: String,
    /// The activity (`type: message`, one card attachment).
    pub activity: Value,
    /// The channel post it goes under (a reply in that post's thread),
    /// if any.
    pub thread: Option<String>,
}

impl Message {
    /// A card that shows `text` and nothing else.
    pub fn text(text: &str) -> Message {
        let text = non_blank(text);
        Message::new(text.clone(), activity(&text, vec![plain(&text)]))
    }

    /// One block of an ask's context: the text in a monospace run (with
    /// its language above it, when it has one).
    pub fn context(block: &Block) -> Message {
        let text = non_blank(&block.text);
        let mut body = Vec::new();
        if let Some(language) = block.language.as_deref().filter(|l| !l.is_empty()) {
            body.push(json!({
                "type": "TextBlock", "text": language, "size": "Small", "isSubtle": true,
            }));
        }
        body.push(json!({
            "type": "RichTextBlock",
            "inlines": [{"type": "TextRun", "text": text, "fontType": "Monospace"}],
        }));
        Message::new(text.clone(), activity(&text, body))
    }

    fn new(text: String, activity: Value) -> Message {
        Message {
            text,
            activity,
            thread: None,
        }
    }

    /// The card the activity carries.
    pub fn card(&self) -> &Value {
        &self.activity["attachments"][0]["content"]
    }
}

/// A person a message mentions: their Teams id (`29:…`, or their AAD
/// object id, which Teams takes too) and the name it shows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mention {
    /// Whom Teams notifies.
    pub id: String,
    /// The name shown (`<at>name</at>`).
    pub name: String,
}

/// A reminder: `text` as a card, after a mention of `whom` (an `<at>`
/// entity of the card, so that Teams notifies them) when it names one.
pub fn reminder(text: &str, whom: Option<&Mention>) -> Message {
    let Some(whom) = whom else {
        return Message::text(text);
    };
    let text = non_blank(text);
    let name = non_blank(&whom.name.replace(['<', '>'], ""));
    let at = format!("<at>{name}</at>");
    let mut activity = activity(
        &text,
        vec![
            json!({"type": "TextBlock", "text": at, "wrap": true}),
            plain(&text),
        ],
    );
    activity["attachments"][0]["content"]["msteams"]["entities"] = json!([{
        "type": "mention",
        "text": at,
        "mentioned": {"id": whom.id, "name": name},
    }]);
    Message::new(text, activity)
}

/// The messages an ask is posted as, in order. The last one carries the
/// controls (the buttons, or the first step in rich mode) and is the one
/// updated later.
pub fn ask_messages(view: &View, locale: Locale) -> Vec<Message> {
    match view {
        View::Buttons(buttons) => {
            let mut messages: Vec<Message> = buttons
                .parts
                .iter()
                .map(|part| Message::text(part))
                .collect();
            let last = messages.pop().unwrap_or_else(|| Message::text(""));
            let mut body = vec![plain(&last.text)];
            body.extend(controls(&buttons.rows, None, locale));
            messages.push(Message::new(last.text.clone(), activity(&last.text, body)));
            messages
        }
        View::Text(text) => text.parts.iter().map(|part| Message::text(part)).collect(),
        View::Rich(rich) => rich
            .steps
            .first()
            .map(|step| step_message(step, locale))
            .into_iter()
            .collect(),
    }
}

/// One step of a rich view as a card with its controls: the step's
/// buttons, with a multi-select step's options as a choice set that Done
/// sends, and a text step's "Answer…" as the own-words field.
pub fn step_message(step: &Step, locale: Locale) -> Message {
    let text = non_blank(&step.text);
    let mut body = vec![plain(&text)];
    body.extend(controls(&step.rows, Some(&step.input), locale));
    Message::new(text.clone(), activity(&text, body))
}

/// The card of an ended ask: what it showed, then the status line, with
/// no controls. The shown text is cut to [`MAX_CLOSED_TEXT_CHARS`], never
/// the status line.
pub fn closed(shown: &str, status: &str) -> Message {
    Message::text(&askbridge_core::render::closed_text(
        shown,
        status,
        MAX_CLOSED_TEXT_CHARS,
    ))
}

/// The answer to an `adaptiveCard/action` invoke: a message shown to the
/// presser, or none (Teams retries an invoke answered with an empty body,
/// so there is always an answer).
pub fn invoke_answer(text: Option<&str>) -> Value {
    json!({
        "statusCode": 200,
        "type": "application/vnd.microsoft.activity.message",
        "value": text.map(str::trim).unwrap_or_default(),
    })
}

/// The activity of a card with `body`, `text` its summary.
fn activity(text: &str, body: Vec<Value>) -> Value {
    let summary = cut(
        text.lines()
            .find(|line| !line.trim().is_empty())
            .unwrap_or(EMPTY_TEXT)
            .trim(),
        MAX_SUMMARY_CHARS,
        Unit::Utf16,
    );
    json!({
        "type": "message",
        "summary": summary,
        "attachments": [{
            "contentType": CARD_TYPE,
            "content": {
                "type": "AdaptiveCard",
                "$schema": "http://adaptivecards.io/schemas/adaptive-card.json",
                "version": "1.5",
                "msteams": {"width": "Full"},
                "body": body,
            },
        }],
    })
}

/// Text shown as typed: a `TextRun` interprets no markdown.
fn plain(text: &str) -> Value {
    json!({
        "type": "RichTextBlock",
        "inlines": [{"type": "TextRun", "text": non_blank(text)}],
    })
}

/// The controls under a card's text: a row of actions per button row,
/// the free-text button as a field with its Send, and on a multi-select
/// step the options as a choice set sent by Done.
fn controls(rows: &[Vec<Button>], input: Option<&StepInput>, locale: Locale) -> Vec<Value> {
    let toggle = match input {
        Some(StepInput::Toggle { selected, options }) if !options.is_empty() => {
            Some((selected, options))
        }
        _ => None,
    };
    let mut body = Vec::new();
    for row in rows {
        let mut actions = Vec::new();
        for button in row {
            match (button.action, toggle) {
                // The choice set stands for the toggle buttons.
                (OptionRef::Index(_), Some(_)) => {}
                (OptionRef::Done, Some((selected, options))) => {
                    let value = selected
                        .iter()
                        .map(usize::to_string)
                        .collect::<Vec<_>>()
                        .join(",");
                    body.push(json!({
                        "type": "Input.ChoiceSet",
                        "id": CHOICE_INPUT,
                        "isMultiSelect": true,
                        "style": "expanded",
                        "value": value,
                        "choices": options.iter().map(|option| json!({
                            "title": option.label,
                            "value": option.index.to_string(),
                        })).collect::<Vec<_>>(),
                    }));
                    body.push(action_set(vec![execute(button, &button.label)]));
                }
                (OptionRef::Other, _) => {
                    let placeholder = input
                        .and_then(StepInput::hint)
                        .unwrap_or_else(|| button.label.trim_end_matches('…'));
                    let multiline = matches!(
                        input,
                        Some(StepInput::Text {
                            multiline: true,
                            ..
                        })
                    );
                    body.push(json!({
                        "type": "Input.Text",
                        "id": TEXT_INPUT,
                        "placeholder": placeholder,
                        "maxLength": MAX_INPUT_CHARS,
                        "isMultiline": multiline,
                    }));
                    let send = locale.strings().page_send;
                    body.push(action_set(vec![execute(button, send)]));
                }
                _ => actions.push(execute(button, &button.label)),
            }
        }
        if !actions.is_empty() {
            body.push(action_set(actions));
        }
    }
    body
}

fn action_set(actions: Vec<Value>) -> Value {
    json!({"type": "ActionSet", "actions": actions})
}

/// An `Action.Execute` with `button`'s key and `title`.
fn execute(button: &Button, title: &str) -> Value {
    let mut action = json!({
        "type": "Action.Execute",
        "title": non_blank(title),
        "verb": VERB,
        "data": {KEY: button.key},
    });
    if button.style == ButtonStyle::Primary {
        action["style"] = json!("positive");
    }
    action
}

#[cfg(test)]
mod tests {
    use askbridge_core::model::{Ask, ChannelKind};
    use askbridge_core::normalize::normalize_input;
    use askbridge_core::render::{Capabilities, Mode, parse_callback_key, view};

    use super::*;

    fn ask(json: &str) -> Ask {
        normalize_input(json).expect("a valid ask").ask
    }

    fn drawn(json: &str, caps: Capabilities) -> Vec<Message> {
        ask_messages(&view(&ask(json), "k1", &caps, Locale::En), Locale::En)
    }

    /// Every element of a card's body, and the actions of its action sets.
    fn actions(message: &Message) -> Vec<Value> {
        message.card()["body"]
            .as_array()
            .expect("a body")
            .iter()
            .filter(|element| element["type"] == "ActionSet")
            .flat_map(|set| set["actions"].as_array().cloned().unwrap_or_default())
            .collect()
    }

    fn element<'a>(message: &'a Message, kind: &str) -> Option<&'a Value> {
        message.card()["body"]
            .as_array()
            .and_then(|body| body.iter().find(|element| element["type"] == kind))
    }

    /// Every action set of a card, however deep.
    fn action_sets(value: &Value, sets: &mut Vec<usize>) {
        match value {
            Value::Object(map) => {
                if map.get("type").and_then(Value::as_str) == Some("ActionSet") {
                    sets.push(map["actions"].as_array().map_or(0, Vec::len));
                }
                map.values().for_each(|value| action_sets(value, sets));
            }
            Value::Array(items) => items.iter().for_each(|value| action_sets(value, sets)),
            _ => {}
        }
    }

    #[test]
    fn every_card_stays_within_teams_size_and_action_limits() {
        // The largest asks there are: the longest texts and labels, in a
        // script of four bytes a character, the most options and questions.
        let wide = |n: usize| "𝔸".repeat(n);
        let options = |n: usize| {
            (0..n)
                .map(|i| json!({"label": format!("{i}{}", wide(60)), "description": wide(200)}))
                .collect::<Vec<_>>()
        };
        let one = json!({"questions": [{
            "question": wide(2_000), "header": "Deploy", "options": options(20),
        }], "context": {"text": wide(100_000)}});
        let many_options = json!({"questions": [{
            "question": wide(2_000), "options": options(25), "multiSelect": true,
        }]});
        let many_questions = json!({"questions": (0..12).map(|i| json!({
            "id": format!("q{i}"), "question": wide(2_000), "options": options(25),
            "multiSelect": i % 2 == 0,
        })).collect::<Vec<_>>()});
        for ask_json in [one, many_options, many_questions] {
            let ask = ask(&ask_json.to_string());
            for mode in [Mode::Buttons, Mode::Text, Mode::Rich] {
                let caps = Capabilities::for_channel(ChannelKind::Teams).with_mode(mode);
                let drawn = view(&ask, "k1", &caps, Locale::En);
                let mut messages = ask_messages(&drawn, Locale::En);
                let all: Vec<usize> = (0..25).collect();
                messages.extend(
                    (0..ask.questions.len())
                        .filter_map(|q| {
                            askbridge_core::render::rich_step(
                                &ask,
                                "k1",
                                q,
                                &all,
                                &caps,
                                Locale::En,
                            )
                        })
                        .map(|step| step_message(&step, Locale::En)),
                );
                let context = askbridge_core::render::context_blocks(&ask, &caps, Locale::En);
                messages.extend(context.iter().map(Message::context));
                messages.push(closed(&wide(100_000), "✅ Answered by Alice"));
                for message in &messages {
                    let bytes = serde_json::to_vec(&message.activity).expect("JSON").len();
                    assert!(bytes <= MAX_ACTIVITY_BYTES, "{bytes} bytes in {mode:?}");
                    let mut sets = Vec::new();
                    action_sets(message.card(), &mut sets);
                    assert!(sets.iter().all(|&n| n <= MAX_ACTIONS_PER_SET), "{sets:?}");
                }
            }
        }
    }

    #[test]
    fn a_reminder_mentions_the_person_so_teams_notifies_them() {
        let whom = Mention {
            id: "29:alice".to_owned(),
            name: "Alice <Ops>".to_owned(),
        };
        let message = reminder("⏰ 5 minutes left to answer", Some(&whom));
        let card = message.card();
        assert_eq!(card["body"][0]["text"], "<at>Alice Ops</at>");
        assert_eq!(
            card["msteams"]["entities"],
            json!([{"type": "mention", "text": "<at>Alice Ops</at>",
                    "mentioned": {"id": "29:alice", "name": "Alice Ops"}}])
        );
        assert_eq!(
            card["body"][1]["inlines"][0]["text"],
            "⏰ 5 minutes left to answer"
        );
        // Nobody to mention: the text alone.
        let plain = reminder("⏰ 5 minutes left to answer", None);
        assert!(plain.card()["msteams"].get("entities").is_none());
        assert_eq!(plain.text, "⏰ 5 minutes left to answer");
    }

    #[test]
    fn one_question_is_a_card_of_executes_and_an_own_words_field() {
        let caps = Capabilities::for_channel(ChannelKind::Teams);
        let messages = drawn(
            r#"{"question": "Deploy where?", "options": ["Staging (Recommended)", "Production"]}"#,
            caps,
        );
        assert_eq!(messages.len(), 1);
        let card = &messages[0];
        assert_eq!(card.activity["type"], "message");
        assert_eq!(card.activity["attachments"][0]["contentType"], CARD_TYPE);
        assert_eq!(card.card()["version"], "1.5");
        assert!(card.text.contains("Deploy where?"), "{}", card.text);
        assert!(
            card.activity["summary"]
                .as_str()
                .is_some_and(|s| !s.is_empty())
        );
        let actions = actions(card);
        let titles: Vec<&str> = actions.iter().filter_map(|a| a["title"].as_str()).collect();
        assert!(titles[0].starts_with("Staging"), "{titles:?}");
        assert_eq!(titles[1], "Production");
        assert!(
            titles.contains(&"Send") && titles.iter().any(|t| t.contains("Skip")),
            "{titles:?}"
        );
        for action in &actions {
            assert_eq!(action["type"], "Action.Execute");
            assert_eq!(action["verb"], VERB);
            let key = action["data"][KEY].as_str().expect("a key");
            assert!(parse_callback_key(key).is_some(), "{key}");
        }
        assert_eq!(actions[0]["style"], "positive", "the recommended option");
        assert!(actions[1].get("style").is_none());
        let send = actions.iter().find(|a| a["title"] == "Send").expect("Send");
        let other = parse_callback_key(send["data"][KEY].as_str().expect("key")).expect("key");
        assert_eq!(other.option, OptionRef::Other);
        assert_eq!(
            element(card, "Input.Text").expect("a field")["id"],
            TEXT_INPUT
        );
    }

    #[test]
    fn agent_text_is_a_text_run_never_markdown() {
        let message = Message::text("**not bold** <at>everyone</at>");
        let block = element(&message, "RichTextBlock").expect("text");
        assert_eq!(block["inlines"][0]["type"], "TextRun");
        assert_eq!(
            block["inlines"][0]["text"],
            "**not bold** <at>everyone</at>"
        );
        assert_eq!(Message::text("  ").text, EMPTY_TEXT);
    }

    #[test]
    fn a_multi_select_step_is_a_choice_set_sent_by_done() {
        let caps = Capabilities::for_channel(ChannelKind::Teams).with_mode(Mode::Rich);
        let json = r#"{"questions": [
            {"question": "Who should be told?", "options": ["Team", "On-call", "Nobody"], "multiSelect": true},
            {"question": "Why?", "type": "text"}
        ]}"#;
        let View::Rich(rich) = view(&ask(json), "k1", &caps, Locale::En) else {
            panic!("a rich view");
        };
        let step =
            askbridge_core::render::rich_step(&ask(json), "k1", 0, &[0, 2], &caps, Locale::En)
                .expect("a step");
        let message = step_message(&step, Locale::En);
        let set = element(&message, "Input.ChoiceSet").expect("a choice set");
        assert_eq!(set["id"], CHOICE_INPUT);
        assert_eq!(set["isMultiSelect"], true);
        assert_eq!(set["value"], "0,2", "the checked options chosen");
        let titles: Vec<&str> = set["choices"]
            .as_array()
            .expect("choices")
            .iter()
            .filter_map(|c| c["title"].as_str())
            .collect();
        assert_eq!(titles, ["Team", "On-call", "Nobody"]);
        let done = actions(&message)
            .into_iter()
            .find(|a| a["title"] == "Done")
            .expect("Done");
        let key = parse_callback_key(done["data"][KEY].as_str().expect("key")).expect("key");
        assert_eq!(key.option, OptionRef::Done);
        assert!(
            !actions(&message)
                .iter()
                .any(|a| a["title"].as_str().is_some_and(|t| t.contains("Team"))),
            "no toggle buttons beside the choice set"
        );
        let text_step = step_message(&rich.steps[1], Locale::En);
        assert!(element(&text_step, "Input.Text").is_some());
    }

    #[test]
    fn closing_keeps_the_text_and_drops_the_controls() {
        let closed = closed("Deploy where?\n", "✅ Staging — answered by Alice");
        assert_eq!(
            closed.text,
            "Deploy where?\n\n✅ Staging — answered by Alice"
        );
        assert!(actions(&closed).is_empty());
        assert_eq!(
            invoke_answer(Some(" Answer submitted")),
            json!({"statusCode": 200, "type": "application/vnd.microsoft.activity.message", "value": "Answer submitted"})
        );
    }

    #[test]
    fn a_context_block_is_monospace_with_its_language() {
        let ask = ask(
            r#"{"questions": [{"question": "Apply?"}], "context": {"text": "fn main() {}", "language": "rust"}}"#,
        );
        let blocks = askbridge_core::render::context_blocks(&ask, &Capabilities::TEAMS, Locale::En);
        let message = Message::context(&blocks[0]);
        let run = &element(&message, "RichTextBlock").expect("code")["inlines"][0];
        assert_eq!(run["fontType"], "Monospace");
        assert_eq!(run["text"], "fn main() {}");
        assert_eq!(
            element(&message, "TextBlock").expect("language")["text"],
            "rust"
        );
    }
}

//! Asks as Feishu interactive cards (card JSON 2.0). Pure: the payloads
//! depend only on the arguments.
//!
//! Every message askbridge posts is a card, even the plain text ones: a
//! card's `plain_text` shows agent text as typed, where a text message
//! would turn `<at user_id="all">` into a mention of everyone, and a card
//! can be updated in place (`PATCH /im/v1/messages/{id}`) when the ask
//! moves on or ends.
//!
//! - One single-choice or yes/no question: its text, then a button per
//!   option (the recommended one `primary`), each on a line of its own;
//!   "Other…" becomes a small form — a text input and a Send button — so
//!   the person's own words go in on the card itself; Skip last.
//! - Rich mode, one step at a time: a multi-select step is a form with a
//!   multi-select menu (the checked options preselected) submitted by Done;
//!   a text step is the form with its input.
//! - Everything else: the numbered prompt as text cards, answered by
//!   typing.
//!
//! A button's `name` and its callback `value` (`{"key": …}`) carry the
//! core's opaque callback key; a form's input is named [`ANSWER_INPUT`] and
//! its menu [`CHOICE_MENU`], whose option values are option indices.

use askbridge_core::model::Place;
use askbridge_core::render::{
    Block, Button, ButtonStyle, Locale, OptionRef, Step, StepInput, Unit, View, cut, non_blank,
};
use serde_json::{Value, json};

/// The name of the text input of an own-words form.
pub const ANSWER_INPUT: &str = "answer";
/// The name of the multi-select menu of a multi-select step.
pub const CHOICE_MENU: &str = "choice";
/// Longest text input Feishu takes (`max_length`).
pub const MAX_INPUT_CHARS: usize = 1_000;
/// Longest input placeholder shown (Feishu cuts longer ones itself).
pub const MAX_PLACEHOLDER_CHARS: usize = 100;
/// Longest shown text kept in a closing edit (a card holds 30 KB).
pub const MAX_CLOSED_TEXT_CHARS: usize = 8_000;

/// Where a message is posted.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Destination {
    /// A chat (`oc_…`), as `receive_id_type=chat_id`.
    Chat(String),
    /// The bot's private chat with a user, as `receive_id_type=open_id`;
    /// Feishu opens it on the first message.
    User(String),
}

impl Destination {
    /// The destination of a `feishu:` target; `None` for other channels.
    pub fn of(place: &Place) -> Option<Destination> {
        match place {
            Place::Feishu { chat_id } => Some(Destination::Chat(chat_id.clone())),
            Place::FeishuUser { open_id } => Some(Destination::User(open_id.clone())),
            _ => None,
        }
    }

    /// How askbridge records where it posted: the chat id, or `user/` and
    /// the user's `open_id` (a private chat's own id is Feishu's to
    /// choose).
    pub fn notation(&self) -> String {
        match self {
            Destination::Chat(chat_id) => chat_id.clone(),
            Destination::User(open_id) => format!("user/{open_id}"),
        }
    }

    /// Reads [`Destination::notation`] back.
    pub fn from_notation(text: &str) -> Option<Destination> {
        match text.strip_prefix("user/") {
            Some(open_id) if !open_id.is_empty() => Some(Destination::User(open_id.to_owned())),
            Some(_) => None,
            None => (!text.is_empty()).then(|| Destination::Chat(text.to_owned())),
        }
    }

    /// The place it is: a group is its chat, a private chat its user's
    /// (what an event in it is compared with, [`Place::is_at`]).
    pub fn place(&self) -> Place {
        match self {
            Destination::Chat(chat_id) => Place::Feishu {
                chat_id: chat_id.clone(),
            },
            Destination::User(open_id) => Place::FeishuUser {
                open_id: open_id.clone(),
            },
        }
    }

    /// `receive_id_type` and `receive_id` of `POST /im/v1/messages`.
    pub fn receive_id(&self) -> (&'static str, &str) {
        match self {
            Destination::Chat(chat_id) => ("chat_id", chat_id),
            Destination::User(open_id) => ("open_id", open_id),
        }
    }
}

/// One message: the text it shows (what the server records as shown, for
/// the closing edit) and its card.
#[derive(Debug, Clone, PartialEq)]
pub struct Message {
    /// The plain text of the message.
    pub text: String,
    /// The card (JSON 2.0); its string form is the message's `content`.
    pub card: Value,
}

impl Message {
    /// A card that shows `text` and nothing else.
    pub fn text(text: &str) -> Message {
        let text = non_blank(text);
        Message {
            card: card(vec![plain(&text)]),
            text,
        }
    }

    /// One block of an ask's context: a card with a markdown code block
    /// (with its language); a fence inside the text is broken with a
    /// zero-width space so it cannot end the block.
    pub fn context(block: &Block) -> Message {
        let text = non_blank(&block.text);
        let code = text.replace("```", "`\u{200b}``");
        let language = block.language.as_deref().unwrap_or_default();
        Message {
            card: card(vec![json!({
                "tag": "markdown",
                "content": format!("```{language}\n{code}\n```"),
            })]),
            text,
        }
    }

    /// The message's `content` field: the card as a JSON string.
    pub fn content(&self) -> String {
        self.card.to_string()
    }
}

/// A reminder: `text`, under a mention of `user` (an `open_id`; anything
/// else is not mentioned) when there is one, which notifies them.
pub fn reminder(text: &str, user: Option<&str>) -> Message {
    let text = non_blank(text);
    let mut elements = Vec::new();
    if let Some(user) = user.filter(|user| {
        !user.is_empty() && user.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
    }) {
        elements.push(json!({"tag": "markdown", "content": format!("<at id={user}></at>")}));
    }
    elements.push(plain(&text));
    Message {
        card: card(elements),
        text,
    }
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
            let mut elements = vec![plain(&last.text)];
            elements.extend(controls(&buttons.rows, None, locale));
            messages.push(Message {
                card: card(elements),
                text: last.text,
            });
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
/// buttons, with a multi-select step's options as a menu in a form that
/// Done submits, and a text step's "Answer…" as the own-words form.
pub fn step_message(step: &Step, locale: Locale) -> Message {
    let text = non_blank(&step.text);
    let mut elements = vec![plain(&text)];
    elements.extend(controls(&step.rows, Some(&step.input), locale));
    Message {
        card: card(elements),
        text,
    }
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

/// What a card callback is answered with: `{}`, or a toast shown to the
/// presser alone.
pub fn callback_answer(toast: Option<(Toast, &str)>) -> Value {
    match toast {
        Some((kind, text)) if !text.trim().is_empty() => json!({
            "toast": {"type": kind.as_str(), "content": text.trim()}
        }),
        _ => json!({}),
    }
}

/// The kind of a toast.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Toast {
    /// It worked.
    Success,
    /// For information.
    Info,
    /// Nothing changed, and why.
    Error,
}

impl Toast {
    fn as_str(self) -> &'static str {
        match self {
            Toast::Success => "success",
            Toast::Info => "info",
            Toast::Error => "error",
        }
    }
}

/// A card of `elements` (JSON 2.0; shared, so an update shows to all).
fn card(elements: Vec<Value>) -> Value {
    json!({
        "schema": "2.0",
        "config": {"update_multi": true},
        "body": {"elements": elements},
    })
}

/// Text shown as typed: `plain_text` interprets no markup.
fn plain(text: &str) -> Value {
    json!({"tag": "div", "text": {"tag": "plain_text", "content": text}})
}

/// The controls under a card's text: button rows (several buttons in a
/// row side by side), the free-text button as a form with an input, and
/// on a multi-select step the options as a menu submitted by Done.
fn controls(rows: &[Vec<Button>], input: Option<&StepInput>, locale: Locale) -> Vec<Value> {
    let toggle = match input {
        Some(StepInput::Toggle { selected, options }) if !options.is_empty() => {
            Some((selected, options))
        }
        _ => None,
    };
    let mut elements = Vec::new();
    for row in rows {
        let mut plain_buttons = Vec::new();
        for button in row {
            match (button.action, toggle) {
                // The menu stands for the toggle buttons; Done submits it.
                (OptionRef::Index(_), Some(_)) => {}
                (OptionRef::Done, Some((selected, options))) => {
                    let menu = json!({
                        "tag": "multi_select_static",
                        "name": CHOICE_MENU,
                        "width": "fill",
                        "options": options.iter().map(|option| json!({
                            "text": {"tag": "plain_text", "content": option.label},
                            "value": option.index.to_string(),
                        })).collect::<Vec<_>>(),
                        "selected_values": selected.iter().map(usize::to_string).collect::<Vec<_>>(),
                    });
                    elements.push(form("choice_form", menu, submit(button, &button.label)));
                }
                (OptionRef::Other, _) => {
                    let placeholder = input
                        .and_then(StepInput::hint)
                        .unwrap_or_else(|| button.label.trim_end_matches('…'));
                    let field = json!({
                        "tag": "input",
                        "name": ANSWER_INPUT,
                        "width": "fill",
                        "max_length": MAX_INPUT_CHARS,
                        "placeholder": {
                            "tag": "plain_text",
                            "content": cut(placeholder, MAX_PLACEHOLDER_CHARS, Unit::Utf16),
                        },
                    });
                    let send = locale.strings().page_send;
                    elements.push(form("own_words_form", field, submit(button, send)));
                }
                _ => plain_buttons.push(self::button(button)),
            }
        }
        match plain_buttons.len() {
            0 => {}
            1 => elements.extend(plain_buttons),
            _ => elements.push(json!({
                "tag": "column_set",
                "flex_mode": "flow",
                "columns": plain_buttons.into_iter().map(|button| json!({
                    "tag": "column",
                    "width": "auto",
                    "elements": [button],
                })).collect::<Vec<_>>(),
            })),
        }
    }
    elements
}

/// A form of one field and its submit button.
fn form(name: &str, field: Value, submit: Value) -> Value {
    json!({"tag": "form", "name": name, "elements": [field, submit]})
}

fn button(button: &Button) -> Value {
    json!({
        "tag": "button",
        "name": button.key,
        "text": {"tag": "plain_text", "content": non_blank(&button.label)},
        "type": style(button.style),
        "width": "fill",
        "behaviors": [{"type": "callback", "value": {"key": button.key}}],
    })
}

/// A form's submit button: `button`'s key, with `text`.
fn submit(button: &Button, text: &str) -> Value {
    json!({
        "tag": "button",
        "name": button.key,
        "text": {"tag": "plain_text", "content": non_blank(text)},
        "type": "primary",
        "form_action_type": "submit",
        "behaviors": [{"type": "callback", "value": {"key": button.key}}],
    })
}

fn style(style: ButtonStyle) -> &'static str {
    match style {
        ButtonStyle::Primary => "primary",
        ButtonStyle::Normal | ButtonStyle::Secondary => "default",
    }
}

#[cfg(test)]
mod tests {
    use askbridge_core::model::Ask;
    use askbridge_core::normalize::normalize_json;
    use askbridge_core::render::EMPTY_TEXT;
    use askbridge_core::render::{Capabilities, view};

    use super::*;

    fn ask(json: &str) -> Ask {
        let value: Value = serde_json::from_str(json).expect("json");
        normalize_json(&value).expect("valid").ask
    }

    fn elements(message: &Message) -> Vec<Value> {
        message.card["body"]["elements"]
            .as_array()
            .cloned()
            .unwrap_or_default()
    }

    #[test]
    fn feishu_one_question_is_a_card_of_buttons_and_an_own_words_form() {
        let ask = ask(
            r#"{"questions":[{"question":"Deploy where?","options":[{"label":"Staging (Recommended)"},{"label":"Production"}]}]}"#,
        );
        let view = view(&ask, "k1", &Capabilities::FEISHU, Locale::ZhCn);
        let messages = ask_messages(&view, Locale::ZhCn);
        assert_eq!(messages.len(), 1);
        let elements = elements(&messages[0]);
        assert_eq!(elements[0]["text"]["tag"], "plain_text");
        assert!(
            elements[0]["text"]["content"]
                .as_str()
                .unwrap_or("")
                .contains("Deploy where?")
        );
        let buttons: Vec<&Value> = elements.iter().filter(|e| e["tag"] == "button").collect();
        assert_eq!(buttons[0]["type"], "primary", "the recommended option");
        assert_eq!(
            buttons[0]["behaviors"][0]["value"]["key"],
            buttons[0]["name"]
        );
        let form = elements
            .iter()
            .find(|e| e["tag"] == "form")
            .expect("a form");
        assert_eq!(form["elements"][0]["name"], ANSWER_INPUT);
        assert_eq!(form["elements"][1]["form_action_type"], "submit");
        assert_eq!(form["elements"][1]["text"]["content"], "发送");
        assert_eq!(messages[0].card["schema"], "2.0");
    }

    #[test]
    fn feishu_agent_text_is_plain_text_never_markup() {
        let message = Message::text("<at user_id=\"all\">everyone</at> **bold**");
        let text = &elements(&message)[0]["text"];
        assert_eq!(text["tag"], "plain_text");
        assert_eq!(
            text["content"],
            "<at user_id=\"all\">everyone</at> **bold**"
        );
        assert_eq!(Message::text("  ").text, EMPTY_TEXT);
    }

    #[test]
    fn feishu_multi_select_step_is_a_menu_submitted_by_done() {
        let ask = ask(
            r#"{"questions":[{"question":"Which?","multiSelect":true,"options":[{"label":"A"},{"label":"B"},{"label":"C"}]}]}"#,
        );
        let caps = Capabilities::FEISHU.with_mode(askbridge_core::render::Mode::Rich);
        let View::Rich(rich) = view(&ask, "k1", &caps, Locale::En) else {
            panic!("a rich view");
        };
        let mut step = rich.steps[0].clone();
        if let StepInput::Toggle { selected, .. } = &mut step.input {
            selected.push(1);
        }
        let message = step_message(&step, Locale::En);
        let elements = elements(&message);
        let form = elements
            .iter()
            .find(|e| e["name"] == "choice_form")
            .expect("a form");
        assert_eq!(form["elements"][0]["tag"], "multi_select_static");
        assert_eq!(form["elements"][0]["selected_values"], json!(["1"]));
        assert_eq!(form["elements"][0]["options"][2]["value"], "2");
        assert_eq!(form["elements"][1]["form_action_type"], "submit");
        assert!(
            !elements
                .iter()
                .any(|e| e["tag"] == "button" && e["text"]["content"] == "A"),
            "no toggle buttons beside the menu"
        );
    }

    #[test]
    fn feishu_closed_card_keeps_the_text_and_adds_the_status() {
        let message = closed("Deploy where?", "✅ Staging — 由 Alice 回答");
        assert_eq!(message.text, "Deploy where?\n\n✅ Staging — 由 Alice 回答");
        assert_eq!(elements(&message).len(), 1, "no controls");
    }

    #[test]
    fn feishu_callback_answers_are_a_toast_or_nothing() {
        assert_eq!(
            callback_answer(Some((Toast::Error, "Not for you"))),
            json!({"toast": {"type": "error", "content": "Not for you"}})
        );
        assert_eq!(callback_answer(None), json!({}));
        assert_eq!(callback_answer(Some((Toast::Info, " "))), json!({}));
    }

    #[test]
    fn feishu_destinations_of_targets() {
        let place = |text: &str| {
            askbridge_core::model::Target::parse(text)
                .expect("target")
                .place
        };
        assert_eq!(
            Destination::of(&place("feishu:oc_1")).map(|d| d.receive_id().0),
            Some("chat_id")
        );
        assert_eq!(
            Destination::of(&place("feishu:user/ou_1")).map(|d| d.receive_id().0),
            Some("open_id")
        );
        assert_eq!(Destination::of(&place("web")), None);
    }

    #[test]
    fn a_reminder_mentions_the_asked_person_above_its_text() {
        let text = "⏰ Still waiting for your answer — expires in 5 min";
        let mentioning = reminder(text, Some("ou_alice"));
        assert_eq!(mentioning.text, text);
        assert_eq!(
            mentioning.card["body"]["elements"],
            json!([
                {"tag": "markdown", "content": "<at id=ou_alice></at>"},
                {"tag": "div", "text": {"tag": "plain_text", "content": text}}
            ])
        );
        for user in [None, Some("all\"><at id=all")] {
            let quiet = reminder(text, user);
            assert_eq!(
                quiet.card["body"]["elements"].as_array().map(Vec::len),
                Some(1)
            );
        }
    }

    #[test]
    fn a_context_block_is_a_markdown_code_block_a_fence_cannot_end() {
        let ask = ask(
            r#"{"questions": [{"question": "Apply?"}], "context": {"text": "```\nx", "language": "diff"}}"#,
        );
        let blocks =
            askbridge_core::render::context_blocks(&ask, &Capabilities::FEISHU, Locale::En);
        let message = Message::context(&blocks[0]);
        assert_eq!(message.text, "```\nx");
        assert_eq!(
            elements(&message),
            vec![json!({"tag": "markdown", "content": "```diff\n`\u{200b}``\nx\n```"})]
        );
    }
}

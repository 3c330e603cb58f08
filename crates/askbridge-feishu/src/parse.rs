//! Feishu events and card callbacks as askbridge events: a button press,
//! a form submitted, a typed message, with who sent it and where. Pure.
//!
//! Input is the plain JSON body (schema 2.0) of what Feishu pushes — over
//! the long connection as it is, over HTTP after
//! [`crate::run::CallbackCheck`] decrypted it ([`push`]): `url_verification`,
//! `card.action.trigger` (a card callback) and `im.message.receive_v1` (a
//! message). Only what askbridge acts on becomes an [`Event`]: presses on
//! askbridge's own buttons and forms, and text messages from people. A
//! message's mentions are undone here, so the core reads plain text: the
//! bot's own mention is removed, anyone else's becomes `@name`.

use askbridge_core::failure::BadRequest;
use askbridge_core::inbound::{self, Inbound, Person};
use askbridge_core::model::{ChannelKind, Place, Responder};
use askbridge_core::render::{CallbackRef, OptionRef, parse_callback_key};

use crate::render::Destination;
use serde_json::Value;

use crate::render::{ANSWER_INPUT, CHOICE_MENU};

/// What Feishu pushed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Push {
    /// The console checking the request URL: answer with the challenge.
    UrlVerification {
        /// To send back.
        challenge: String,
        /// The app's verification token, to check.
        token: String,
    },
    /// An event or a card callback.
    Pushed {
        /// Feishu's id of the push, the same when it pushes again.
        event_id: String,
        /// The app's verification token, to check.
        token: String,
        /// What askbridge acts on; `None` for anything else.
        event: Option<Event>,
    },
}

/// What happened.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Event {
    /// A button was pressed or a form submitted on a card.
    Press(Press),
    /// A text message was sent.
    Text(TextMessage),
}

/// Someone who pressed or wrote.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sender {
    /// Their `open_id` for this app (`ou_…`). Pushes carry no name; the
    /// server may look it up.
    pub open_id: String,
}

impl Sender {
    /// The sender as the core's responder, not yet named.
    pub fn responder(&self) -> Responder {
        Responder {
            channel: ChannelKind::Feishu,
            user_id: self.open_id.clone(),
            name: None,
            place: None,
        }
    }
}

/// A card callback (`card.action.trigger`): answer within 3 seconds, with
/// the HTTP response or the long connection's reply frame.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Press {
    /// Who pressed.
    pub from: Sender,
    /// The chat of the card.
    pub chat_id: Option<String>,
    /// The card's message.
    pub message_id: Option<String>,
    /// The button's key, when it is one of askbridge's.
    pub button: Option<CallbackRef>,
    /// A multi-select form's choice, as option indices in Feishu's order;
    /// `None` unless the form has askbridge's menu.
    pub values: Option<Vec<usize>>,
    /// An own-words form's text, when it is not blank.
    pub text: Option<String>,
}

/// A text message from a person (`im.message.receive_v1`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TextMessage {
    /// The chat it was sent in.
    pub chat_id: String,
    /// Sent in the bot's private chat with the sender (`p2p`).
    pub private: bool,
    /// Its message id.
    pub message_id: String,
    /// The message it replies to (`parent_id`), if any.
    pub reply_to: Option<String>,
    /// Who sent it.
    pub from: Sender,
    /// The text with mentions undone; never blank.
    pub text: String,
}

/// An event in the core's vocabulary: an own-words form filled in is a
/// submission, any other press a press (answered through the callback's
/// own answer, which the server makes: `()` here), a message typed — a
/// private chat's filed under its user, since its id is Feishu's to
/// choose.
pub fn inbound(event: Event) -> Inbound<Destination, String, ()> {
    match event {
        Event::Press(press) => {
            let chat = press.chat_id.map(Destination::Chat);
            let own_words = press
                .button
                .as_ref()
                .is_some_and(|key| key.option == OptionRef::Other);
            match (press.text, chat) {
                (Some(text), Some(chat)) if own_words => Inbound::Submission(inbound::Submission {
                    reply: (),
                    key: press.button,
                    chat,
                    text,
                    from: Person::of(press.from.responder()),
                }),
                (_, chat) => Inbound::Press(inbound::Press {
                    reply: (),
                    button: press.button,
                    chosen: press.values,
                    chat,
                    message: press.message_id,
                    from: Person::of(press.from.responder()),
                }),
            }
        }
        Event::Text(message) => Inbound::Typed(inbound::Typed {
            place: match message.private {
                true => Place::FeishuUser {
                    open_id: message.from.open_id.clone(),
                },
                false => Place::Feishu {
                    chat_id: message.chat_id.clone(),
                },
            },
            chat: Destination::Chat(message.chat_id),
            message: message.message_id,
            reply_to: message.reply_to,
            text: message.text,
            from: Person::of(message.from.responder()),
        }),
    }
}

/// Reads a pushed body (plain JSON, schema 2.0; `url_verification` has no
/// schema). `bot_open_id` is the bot's own `open_id`, whose mentions are
/// removed from messages; unknown, every leading mention is removed.
pub fn push(body: &[u8], bot_open_id: Option<&str>) -> Result<Push, BadRequest> {
    let value: Value =
        serde_json::from_slice(body).map_err(|error| format!("not JSON: {error}"))?;
    if value["type"] == "url_verification" {
        return Ok(Push::UrlVerification {
            challenge: text(&value["challenge"])
                .ok_or("url_verification without a challenge")?
                .to_owned(),
            token: text(&value["token"]).unwrap_or_default().to_owned(),
        });
    }
    let header = &value["header"];
    let event_id = text(&header["event_id"]).ok_or("no header.event_id (not schema 2.0)")?;
    let event = &value["event"];
    let event = match text(&header["event_type"]) {
        Some("card.action.trigger") => press(event).map(Event::Press),
        Some("im.message.receive_v1") => message(event, bot_open_id).map(Event::Text),
        _ => None,
    };
    Ok(Push::Pushed {
        event_id: event_id.to_owned(),
        token: text(&header["token"]).unwrap_or_default().to_owned(),
        event,
    })
}

fn press(event: &Value) -> Option<Press> {
    let action = &event["action"];
    let key = text(&action["value"]["key"]).or_else(|| text(&action["name"]));
    let form = &action["form_value"];
    let values = form[CHOICE_MENU].as_array().map(|chosen| {
        chosen
            .iter()
            .filter_map(|value| text(value)?.parse().ok())
            .collect()
    });
    Some(Press {
        from: Sender {
            open_id: text(&event["operator"]["open_id"])?.to_owned(),
        },
        chat_id: text(&event["context"]["open_chat_id"]).map(str::to_owned),
        message_id: text(&event["context"]["open_message_id"]).map(str::to_owned),
        button: key.and_then(parse_callback_key),
        values,
        text: text(&form[ANSWER_INPUT])
            .map(str::trim)
            .filter(|text| !text.is_empty())
            .map(str::to_owned),
    })
}

fn message(event: &Value, bot_open_id: Option<&str>) -> Option<TextMessage> {
    let sender = &event["sender"];
    if text(&sender["sender_type"]) != Some("user") {
        return None;
    }
    let message = &event["message"];
    if text(&message["message_type"]) != Some("text") {
        return None;
    }
    let content: Value = serde_json::from_str(text(&message["content"])?).ok()?;
    let raw = text(&content["text"])?;
    let mentions = message["mentions"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default();
    let clean = undo_mentions(raw, mentions, bot_open_id);
    if clean.trim().is_empty() {
        return None;
    }
    Some(TextMessage {
        chat_id: text(&message["chat_id"])?.to_owned(),
        private: text(&message["chat_type"]) == Some("p2p"),
        message_id: text(&message["message_id"])?.to_owned(),
        reply_to: text(&message["parent_id"]).map(str::to_owned),
        from: Sender {
            open_id: text(&sender["sender_id"]["open_id"])?.to_owned(),
        },
        text: clean.trim().to_owned(),
    })
}

/// A message's text with its mention keys (`@_user_1`) undone: the bot's
/// own mention removed, anyone else's as `@name`. Without the bot's id,
/// the mentions before the first word are taken for the bot's.
pub fn undo_mentions(raw: &str, mentions: &[Value], bot_open_id: Option<&str>) -> String {
    let mut out = raw.to_owned();
    // Longest keys first: `@_user_10` before `@_user_1`.
    let mut sorted: Vec<&Value> = mentions.iter().collect();
    sorted.sort_by_key(|mention| std::cmp::Reverse(text_of(&mention["key"]).len()));
    for mention in sorted {
        let key = text_of(&mention["key"]);
        if key.is_empty() {
            continue;
        }
        let is_bot = match bot_open_id {
            Some(bot) => text(&mention["id"]["open_id"]) == Some(bot),
            None => out.trim_start().starts_with(key),
        };
        let with = match is_bot {
            true => String::new(),
            false => format!("@{}", text_of(&mention["name"])),
        };
        out = out.replace(key, &with);
    }
    out.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn text(value: &Value) -> Option<&str> {
    value.as_str().filter(|text| !text.is_empty())
}

fn text_of(value: &Value) -> &str {
    value.as_str().unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use askbridge_core::render::{OptionRef, callback_key};
    use serde_json::json;

    use super::*;

    fn pushed(body: Value) -> Option<Event> {
        match push(body.to_string().as_bytes(), Some("ou_bot")) {
            Ok(Push::Pushed { event, .. }) => event,
            other => panic!("not a push: {other:?}"),
        }
    }

    fn callback(action: Value) -> Value {
        json!({
            "schema": "2.0",
            "header": {"event_id": "e1", "token": "vt", "event_type": "card.action.trigger"},
            "event": {
                "operator": {"open_id": "ou_alice"},
                "token": "c-1",
                "action": action,
                "host": "im_message",
                "context": {"open_message_id": "om_1", "open_chat_id": "oc_1"},
            }
        })
    }

    #[test]
    fn feishu_a_button_press_names_its_key_who_and_where() {
        let key = callback_key("k1", 0, OptionRef::Index(1));
        let Some(Event::Press(press)) =
            pushed(callback(json!({"tag": "button", "value": {"key": key}})))
        else {
            panic!("a press");
        };
        assert_eq!(press.from.open_id, "ou_alice");
        assert_eq!(press.chat_id.as_deref(), Some("oc_1"));
        assert_eq!(press.message_id.as_deref(), Some("om_1"));
        let button = press.button.expect("askbridge's key");
        assert_eq!((button.question, button.option), (0, OptionRef::Index(1)));
        assert_eq!((press.values, press.text), (None, None));
    }

    #[test]
    fn feishu_forms_carry_the_choice_or_the_own_words() {
        let done = callback_key("k1", 0, OptionRef::Done);
        let Some(Event::Press(press)) = pushed(callback(json!({
            "tag": "button", "value": {"key": done}, "form_value": {"choice": ["2", "0", "x"]},
        }))) else {
            panic!("a press");
        };
        assert_eq!(press.values, Some(vec![2, 0]));
        let other = callback_key("k1", 0, OptionRef::Other);
        let Some(Event::Press(press)) = pushed(callback(json!({
            "tag": "button", "value": {"key": other}, "form_value": {"answer": "  my words "},
        }))) else {
            panic!("a press");
        };
        assert_eq!(press.text.as_deref(), Some("my words"));
        let Some(Event::Press(press)) = pushed(callback(json!({
            "tag": "button", "value": {"key": other}, "form_value": {"answer": " "},
        }))) else {
            panic!("a press");
        };
        assert_eq!(press.text, None, "a blank form is a press of Other…");
    }

    #[test]
    fn feishu_foreign_buttons_are_presses_without_a_key() {
        let Some(Event::Press(press)) =
            pushed(callback(json!({"tag": "button", "value": {"x": 1}})))
        else {
            panic!("a press");
        };
        assert_eq!(press.button, None);
    }

    fn message(text: &str, mentions: Value, sender_type: &str) -> Value {
        json!({
            "schema": "2.0",
            "header": {"event_id": "e2", "token": "vt", "event_type": "im.message.receive_v1"},
            "event": {
                "sender": {"sender_id": {"open_id": "ou_bob"}, "sender_type": sender_type},
                "message": {
                    "message_id": "om_2", "parent_id": "om_1", "chat_id": "oc_1",
                    "chat_type": "group", "message_type": "text",
                    "content": json!({"text": text}).to_string(),
                    "mentions": mentions,
                }
            }
        })
    }

    #[test]
    fn feishu_messages_lose_the_bots_mention_and_keep_others_as_names() {
        let mentions = json!([
            {"key": "@_user_1", "id": {"open_id": "ou_bot"}, "name": "askbridge"},
            {"key": "@_user_2", "id": {"open_id": "ou_carol"}, "name": "Carol"},
        ]);
        let Some(Event::Text(text)) = pushed(message("@_user_1 2, ask @_user_2", mentions, "user"))
        else {
            panic!("a message");
        };
        assert_eq!(text.text, "2, ask @Carol");
        assert_eq!(text.reply_to.as_deref(), Some("om_1"));
        assert_eq!(text.from.open_id, "ou_bob");
        assert!(!text.private);
    }

    #[test]
    fn feishu_ignores_apps_blank_messages_and_other_events() {
        assert_eq!(pushed(message("2", json!([]), "app")), None);
        let only_bot = json!([{"key": "@_user_1", "id": {"open_id": "ou_bot"}, "name": "b"}]);
        assert_eq!(pushed(message("@_user_1 ", only_bot, "user")), None);
        let other = json!({"schema": "2.0", "header": {"event_id": "e3", "event_type": "im.chat.disbanded_v1"}});
        assert_eq!(pushed(other), None);
    }

    #[test]
    fn feishu_url_verification_and_garbage() {
        let body = json!({"challenge": "abc", "token": "vt", "type": "url_verification"});
        assert_eq!(
            push(body.to_string().as_bytes(), None),
            Ok(Push::UrlVerification {
                challenge: "abc".to_owned(),
                token: "vt".to_owned()
            })
        );
        assert!(push(b"nope", None).is_err_and(|e| e.0.starts_with("not JSON")));
        assert!(push(b"{}", None).is_err_and(|e| e.0.contains("event_id")));
    }

    #[test]
    fn feishu_mentions_without_the_bots_id_drop_only_leading_ones() {
        let mentions = [
            json!({"key": "@_user_1", "name": "bot"}),
            json!({"key": "@_user_2", "name": "Dan"}),
        ];
        assert_eq!(
            undo_mentions("@_user_1 yes @_user_2", &mentions, None),
            "yes @Dan"
        );
    }
}

//! Bot API updates as events: a button press or a typed message, with who
//! sent it and where. Pure.
//!
//! Only what askbridge acts on is kept: callback queries, and text
//! messages from people (not bots) in chats. A message belongs to a forum
//! topic only when Telegram says it is a topic message; in ordinary groups
//! `message_thread_id` marks reply threads, which are not separate
//! conversations.

use askbridge_core::inbound::{self, Inbound, Person};
use askbridge_core::model::{ChannelKind, Place, Responder};
use askbridge_core::render::{CallbackRef, parse_callback_key};
use teloxide::types::{Message, UpdateKind, User};

/// A Bot API update (teloxide's type), as long polling and the webhook
/// receive it.
pub use teloxide::types::Update;

use crate::render::ChatRef;

/// Someone who pressed or wrote.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sender {
    /// The Telegram user id.
    pub user_id: u64,
    /// First and last name.
    pub name: String,
    /// `@username` without the `@`, if they have one.
    pub username: Option<String>,
}

impl Sender {
    fn of(user: &User) -> Sender {
        Sender {
            user_id: user.id.0,
            name: user.full_name(),
            username: user.username.clone(),
        }
    }

    /// The sender as the core's person: the responder and their
    /// `@username`.
    pub fn person(&self) -> Person {
        Person {
            responder: self.responder(),
            username: self.username.clone(),
            roles: Vec::new(),
        }
    }

    /// The sender as the core's responder (user id, display name).
    pub fn responder(&self) -> Responder {
        Responder {
            channel: ChannelKind::Telegram,
            user_id: self.user_id.to_string(),
            name: Some(self.name.clone()).filter(|name| !name.trim().is_empty()),
            place: None,
        }
    }
}

/// What happened.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Event {
    /// An inline button was pressed.
    Press(Press),
    /// A text message was sent.
    Text(TextMessage),
}

/// A callback query from an inline button.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Press {
    /// The callback query id, for `answerCallbackQuery` (always answer it).
    pub query_id: String,
    /// Who pressed.
    pub from: Sender,
    /// The chat of the message the button is on, when Telegram says.
    pub chat: Option<ChatRef>,
    /// The message the button is on.
    pub message_id: Option<i32>,
    /// The button's payload, when it is one of askbridge's.
    pub button: Option<CallbackRef>,
}

/// A text message from a person.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TextMessage {
    /// Where it was sent.
    pub chat: ChatRef,
    /// Its message id.
    pub message_id: i32,
    /// The message it replies to, if any.
    pub reply_to: Option<i32>,
    /// Who sent it.
    pub from: Sender,
    /// The text.
    pub text: String,
}

/// An update in the core's vocabulary: a press (answered by its callback
/// query id) or a typed message, filed under its chat or forum topic;
/// `None` for anything askbridge does not act on.
pub fn inbound(update: &Update) -> Option<Inbound<ChatRef, i32, String>> {
    Some(match parse(update)? {
        Event::Press(press) => Inbound::Press(inbound::Press {
            reply: press.query_id,
            button: press.button,
            chosen: None,
            chat: press.chat,
            message: press.message_id,
            from: press.from.person(),
        }),
        Event::Text(message) => Inbound::Typed(inbound::Typed {
            place: Place::Telegram {
                chat_id: message.chat.chat_id,
                thread_id: message.chat.thread_id,
            },
            chat: message.chat,
            message: message.message_id,
            reply_to: message.reply_to,
            text: message.text,
            from: message.from.person(),
        }),
    })
}

/// Reads an update; `None` for anything askbridge does not act on.
pub fn parse(update: &Update) -> Option<Event> {
    match &update.kind {
        UpdateKind::CallbackQuery(query) => {
            let message = query.message.as_ref();
            Some(Event::Press(Press {
                query_id: query.id.0.clone(),
                from: Sender::of(&query.from),
                chat: message.map(|m| ChatRef {
                    chat_id: m.chat().id.0,
                    thread_id: m.regular_message().and_then(topic),
                }),
                message_id: message.map(|m| m.id().0),
                button: query.data.as_deref().and_then(parse_callback_key),
            }))
        }
        UpdateKind::Message(message) => text_message(message).map(Event::Text),
        _ => None,
    }
}

fn text_message(message: &Message) -> Option<TextMessage> {
    let from = message.from.as_ref().filter(|user| !user.is_bot)?;
    let text = message.text()?;
    Some(TextMessage {
        chat: ChatRef {
            chat_id: message.chat.id.0,
            thread_id: topic(message),
        },
        message_id: message.id.0,
        reply_to: message
            .reply_to_message()
            .filter(|replied| !is_topic_root(message, replied))
            .map(|replied| replied.id.0),
        from: Sender::of(from),
        text: text.to_owned(),
    })
}

/// The forum topic of a message, if it is in one.
fn topic(message: &Message) -> Option<i32> {
    message
        .is_topic_message
        .then_some(message.thread_id)
        .flatten()
        .map(|thread| thread.0.0)
}

/// In a forum topic every message "replies" to the topic's first message;
/// that is not a reply to anything of askbridge's.
fn is_topic_root(message: &Message, replied: &Message) -> bool {
    topic(message) == Some(replied.id.0)
}

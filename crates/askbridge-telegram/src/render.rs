//! Asks as Bot API messages. Pure: the payloads depend only on the
//! arguments.
//!
//! Every payload is teloxide's own [`SendMessage`], which serialises to
//! exactly the JSON the Bot API's `sendMessage` takes, so what
//! `askbridge render --channel telegram` prints is what is sent. Texts are
//! plain (no parse mode), so agent text needs no escaping and can never
//! break the markup.

use askbridge_core::model::Place;
use askbridge_core::render::{Block, Button, Locale, Step, StepInput, Unit, View, cut, fill};
use teloxide::payloads::SendMessage;
use teloxide::types::{
    ChatId, ForceReply, InlineKeyboardButton, InlineKeyboardMarkup, MessageEntity, MessageId,
    Recipient, ReplyMarkup, ReplyParameters, ThreadId, UserId,
};

/// Longest question shown in a forced-reply prompt.
const MAX_PROMPT_QUESTION_CHARS: usize = 200;

/// A Telegram chat, or one forum topic of it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ChatRef {
    /// The chat id (negative for groups).
    pub chat_id: i64,
    /// The forum topic (`message_thread_id`), if any.
    pub thread_id: Option<i32>,
}

impl ChatRef {
    /// The chat of a `telegram:` target; `None` for other channels.
    pub fn of(place: &Place) -> Option<ChatRef> {
        match place {
            Place::Telegram { chat_id, thread_id } => Some(ChatRef {
                chat_id: *chat_id,
                thread_id: *thread_id,
            }),
            _ => None,
        }
    }

    /// The conversation key stored with message refs: `<chat>` or
    /// `<chat>/<topic>`, as in targets.
    pub fn conversation(&self) -> String {
        match self.thread_id {
            Some(thread) => format!("{}/{thread}", self.chat_id),
            None => self.chat_id.to_string(),
        }
    }

    /// Reads [`ChatRef::conversation`] back.
    pub fn parse_conversation(text: &str) -> Option<ChatRef> {
        let (chat, thread) = match text.split_once('/') {
            Some((chat, thread)) => (chat, Some(thread.parse().ok()?)),
            None => (text, None),
        };
        Some(ChatRef {
            chat_id: chat.parse().ok()?,
            thread_id: thread,
        })
    }

    /// A plain `sendMessage` to this chat (and topic).
    pub fn message(&self, text: impl Into<String>) -> SendMessage {
        let mut payload = SendMessage::new(Recipient::Id(ChatId(self.chat_id)), text);
        payload.message_thread_id = self.thread_id.map(|id| ThreadId(MessageId(id)));
        payload
    }
}

/// The messages an ask is posted as, in order. The last one carries the
/// controls (the keyboard, or the first step in rich mode) and is the one
/// edited later.
pub fn ask_messages(view: &View, chat: ChatRef) -> Vec<SendMessage> {
    match view {
        View::Buttons(buttons) => with_keyboard_on_last(
            buttons
                .parts
                .iter()
                .map(|part| chat.message(part))
                .collect(),
            &buttons.rows,
        ),
        View::Text(text) => text.parts.iter().map(|part| chat.message(part)).collect(),
        View::Rich(rich) => rich
            .steps
            .first()
            .map(|step| vec![step_message(step, chat)])
            .unwrap_or_default(),
    }
}

/// One block of an ask's context: the text as a `pre` entity (a code
/// block, with its language), still no parse mode.
pub fn context_message(block: &Block, chat: ChatRef) -> SendMessage {
    let mut payload = chat.message(&block.text);
    let length = block.text.encode_utf16().count();
    payload.entities = Some(vec![MessageEntity::pre(block.language.clone(), 0, length)]);
    payload
}

/// One step of a rich view as a message with its keyboard.
pub fn step_message(step: &Step, chat: ChatRef) -> SendMessage {
    let mut payload = chat.message(&step.text);
    payload.reply_markup = Some(ReplyMarkup::InlineKeyboard(keyboard(&step.rows)));
    payload
}

/// The inline keyboard of button rows: each button's callback data is its
/// key (at most 64 bytes by construction).
pub fn keyboard(rows: &[Vec<Button>]) -> InlineKeyboardMarkup {
    InlineKeyboardMarkup::new(rows.iter().map(|row| {
        row.iter()
            .map(|button| InlineKeyboardButton::callback(&button.label, &button.key))
            .collect::<Vec<_>>()
    }))
}

/// Asks for the person's own words with a forced reply: "Your answer to
/// “question”:", with the question's placeholder (or step label) as the
/// input hint. A reply to it answers that question.
pub fn own_words_prompt(
    chat: ChatRef,
    question: &str,
    placeholder: Option<&str>,
    locale: Locale,
) -> SendMessage {
    let question = cut(question.trim(), MAX_PROMPT_QUESTION_CHARS, Unit::Utf16);
    let text = fill(locale.strings().own_words, &[("q", &question)]);
    let mut payload = chat.message(text);
    let force = ForceReply::new().input_field_placeholder(placeholder.map(str::to_owned));
    payload.reply_markup = Some(ReplyMarkup::ForceReply(force));
    payload
}

/// A message answering one of the person's messages (a clarifying question,
/// the questions still open).
pub fn reply_to(chat: ChatRef, message_id: i32, text: impl Into<String>) -> SendMessage {
    let mut payload = chat.message(text);
    let mut reply = ReplyParameters::new(MessageId(message_id));
    reply.allow_sending_without_reply = Some(true);
    payload.reply_parameters = Some(reply);
    payload
}

/// Puts a message in the reply chain under `root` (a thread's first
/// message), unless it replies to something already; posted even when
/// `root` is gone.
pub fn in_reply_chain(payload: &mut SendMessage, root: i32) {
    payload.reply_parameters.get_or_insert_with(|| {
        let mut reply = ReplyParameters::new(MessageId(root));
        reply.allow_sending_without_reply = Some(true);
        reply
    });
}

/// A reminder replying to the question: `text`, its first character (the
/// ⏰) a text mention of `user` when there is one — a
/// `tg://user?id=…` link, which notifies them whether or not they have a
/// username.
pub fn reminder(chat: ChatRef, message_id: i32, text: &str, user: Option<u64>) -> SendMessage {
    let mut payload = reply_to(chat, message_id, text);
    if let (Some(user), Some(first)) = (user, text.chars().next()) {
        payload.entities = Some(vec![MessageEntity::text_mention_id(
            UserId(user),
            0,
            first.len_utf16(),
        )]);
    }
    payload
}

/// The text of a question message once its ask has ended: what it showed,
/// a blank line, the status line.
pub fn closed_text(shown: &str, status: &str) -> String {
    format!("{shown}\n\n{status}")
}

/// The keyboard of a step, for an edit in place (toggles, the next step).
pub fn step_keyboard(step: &Step) -> InlineKeyboardMarkup {
    keyboard(&step.rows)
}

/// What a step's "Answer…" / "Other…" prompt shows as the input hint.
pub fn step_placeholder(step: &Step) -> Option<&str> {
    match &step.input {
        StepInput::Text {
            placeholder, label, ..
        } => placeholder.as_deref().or(Some(label.as_str())),
        StepInput::Pick | StepInput::Toggle { .. } => None,
    }
}

fn with_keyboard_on_last(mut messages: Vec<SendMessage>, rows: &[Vec<Button>]) -> Vec<SendMessage> {
    if let Some(last) = messages.last_mut()
        && !rows.is_empty()
    {
        last.reply_markup = Some(ReplyMarkup::InlineKeyboard(keyboard(rows)));
    }
    messages
}

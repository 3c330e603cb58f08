//! The fake's public data types: users, chats, incoming messages, and the
//! records a test reads back (calls, stored messages, callback answers,
//! webhook deliveries).

use serde_json::{Map, Value, json};

/// A Telegram user, as the fake renders it in `from` fields
/// ([User](https://core.telegram.org/bots/api#user)).
///
/// ```
/// use askbridge_testkit::telegram::User;
/// let alice = User::new(42, "Alice").username("alice");
/// assert_eq!(alice.id, 42);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct User {
    /// Unique identifier (positive).
    pub id: i64,
    /// Whether the user is a bot.
    pub is_bot: bool,
    /// First name.
    pub first_name: String,
    /// Last name, if any.
    pub last_name: Option<String>,
    /// Username without the `@`, if any.
    pub username: Option<String>,
    /// IETF language tag of the user's client, if any.
    pub language_code: Option<String>,
}

impl User {
    /// A human user with this id and first name.
    pub fn new(id: i64, first_name: impl Into<String>) -> Self {
        User {
            id,
            is_bot: false,
            first_name: first_name.into(),
            last_name: None,
            username: None,
            language_code: None,
        }
    }

    /// Sets the username (without `@`).
    #[must_use]
    pub fn username(mut self, username: impl Into<String>) -> Self {
        self.username = Some(username.into());
        self
    }

    /// Sets the last name.
    #[must_use]
    pub fn last_name(mut self, last_name: impl Into<String>) -> Self {
        self.last_name = Some(last_name.into());
        self
    }

    /// Sets the client's language (`language_code`, e.g. `"en"`, `"zh-hans"`).
    #[must_use]
    pub fn language_code(mut self, code: impl Into<String>) -> Self {
        self.language_code = Some(code.into());
        self
    }

    /// The private chat between this user and the bot (same id, same names),
    /// as Telegram reports it.
    pub fn private_chat(&self) -> Chat {
        Chat {
            id: self.id,
            kind: ChatKind::Private,
            title: None,
            username: self.username.clone(),
            first_name: Some(self.first_name.clone()),
            last_name: self.last_name.clone(),
            is_forum: false,
        }
    }

    /// The official JSON object.
    pub fn to_json(&self) -> Value {
        let mut object = Map::new();
        object.insert("id".into(), json!(self.id));
        object.insert("is_bot".into(), json!(self.is_bot));
        object.insert("first_name".into(), json!(self.first_name));
        if let Some(last_name) = &self.last_name {
            object.insert("last_name".into(), json!(last_name));
        }
        if let Some(username) = &self.username {
            object.insert("username".into(), json!(username));
        }
        if let Some(code) = &self.language_code {
            object.insert("language_code".into(), json!(code));
        }
        Value::Object(object)
    }
}

/// The type of a [`Chat`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ChatKind {
    /// A private chat with one user (positive id).
    Private,
    /// A basic group (negative id).
    Group,
    /// A supergroup (negative id, usually `-100…`), possibly a forum.
    Supergroup,
}

impl ChatKind {
    /// The Bot API `type` string.
    pub fn as_str(self) -> &'static str {
        match self {
            ChatKind::Private => "private",
            ChatKind::Group => "group",
            ChatKind::Supergroup => "supergroup",
        }
    }
}

/// A chat the bot can be in ([Chat](https://core.telegram.org/bots/api#chat)).
///
/// ```
/// use askbridge_testkit::telegram::Chat;
/// let dm = Chat::private(42).first_name("Alice");
/// let team = Chat::group(-5001, "Team");
/// let forum = Chat::supergroup(-1001234567890, "Ops").forum();
/// assert!(forum.is_forum && !team.is_forum && dm.id == 42);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Chat {
    /// Unique identifier: positive for private chats, negative for groups.
    pub id: i64,
    /// Private chat, group or supergroup.
    pub kind: ChatKind,
    /// Title, for groups and supergroups.
    pub title: Option<String>,
    /// Username, for private chats and public supergroups.
    pub username: Option<String>,
    /// First name of the other party, for private chats.
    pub first_name: Option<String>,
    /// Last name of the other party, for private chats.
    pub last_name: Option<String>,
    /// Whether the supergroup is a forum (has topics).
    pub is_forum: bool,
}

impl Chat {
    /// A private chat with the user `id` (first name `"User <id>"` until set).
    ///
    /// # Panics
    /// If `id` is not positive: private chat ids are user ids.
    pub fn private(id: i64) -> Self {
        assert!(id > 0, "private chat ids are positive (user ids), got {id}");
        Chat {
            id,
            kind: ChatKind::Private,
            title: None,
            username: None,
            first_name: Some(format!("User {id}")),
            last_name: None,
            is_forum: false,
        }
    }

    /// A basic group.
    ///
    /// # Panics
    /// If `id` is not negative.
    pub fn group(id: i64, title: impl Into<String>) -> Self {
        assert!(id < 0, "group chat ids are negative, got {id}");
        Chat {
            id,
            kind: ChatKind::Group,
            title: Some(title.into()),
            username: None,
            first_name: None,
            last_name: None,
            is_forum: false,
        }
    }

    /// A supergroup (real ids look like `-100…`).
    ///
    /// # Panics
    /// If `id` is not negative.
    pub fn supergroup(id: i64, title: impl Into<String>) -> Self {
        assert!(id < 0, "supergroup chat ids are negative, got {id}");
        Chat {
            id,
            kind: ChatKind::Supergroup,
            title: Some(title.into()),
            username: None,
            first_name: None,
            last_name: None,
            is_forum: false,
        }
    }

    /// Makes this supergroup a forum: messages live in topics
    /// (see [`FakeTelegram::create_forum_topic`](super::FakeTelegram::create_forum_topic)).
    ///
    /// # Panics
    /// If the chat is not a supergroup.
    #[must_use]
    pub fn forum(mut self) -> Self {
        assert!(
            self.kind == ChatKind::Supergroup,
            "only supergroups can be forums"
        );
        self.is_forum = true;
        self
    }

    /// Sets the username (private chats and public supergroups).
    #[must_use]
    pub fn username(mut self, username: impl Into<String>) -> Self {
        self.username = Some(username.into());
        self
    }

    /// Sets the first name of the other party of a private chat.
    #[must_use]
    pub fn first_name(mut self, first_name: impl Into<String>) -> Self {
        self.first_name = Some(first_name.into());
        self
    }

    /// Sets the last name of the other party of a private chat.
    #[must_use]
    pub fn last_name(mut self, last_name: impl Into<String>) -> Self {
        self.last_name = Some(last_name.into());
        self
    }

    /// Whether this is a group or supergroup (negative id).
    pub fn is_group_like(&self) -> bool {
        self.kind != ChatKind::Private
    }

    /// The chat a bare id stands for when a test never registered it:
    /// positive ids are private chats, ids at or below
    /// `-1_000_000_000_000` supergroups, other negative ids basic groups.
    pub(crate) fn implied(id: i64) -> Self {
        let kind = if id > 0 {
            ChatKind::Private
        } else if id <= -1_000_000_000_000 {
            ChatKind::Supergroup
        } else {
            ChatKind::Group
        };
        let private = kind == ChatKind::Private;
        Chat {
            id,
            kind,
            title: (!private).then(|| format!("Chat {id}")),
            username: None,
            first_name: private.then(|| format!("User {id}")),
            last_name: None,
            is_forum: false,
        }
    }

    /// The official JSON object.
    pub fn to_json(&self) -> Value {
        let mut object = Map::new();
        object.insert("id".into(), json!(self.id));
        object.insert("type".into(), json!(self.kind.as_str()));
        if let Some(title) = &self.title {
            object.insert("title".into(), json!(title));
        }
        if let Some(username) = &self.username {
            object.insert("username".into(), json!(username));
        }
        if let Some(first_name) = &self.first_name {
            object.insert("first_name".into(), json!(first_name));
        }
        if let Some(last_name) = &self.last_name {
            object.insert("last_name".into(), json!(last_name));
        }
        if self.is_forum {
            object.insert("is_forum".into(), json!(true));
        }
        Value::Object(object)
    }
}

/// What happens to `sendMessage` (and edits) in a chat.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ChatStatus {
    /// Messages are delivered.
    #[default]
    Reachable,
    /// The user blocked the bot: `403 Forbidden: bot was blocked by the user`.
    Blocked,
    /// The chat does not exist for the bot: `400 Bad Request: chat not found`.
    Unknown,
}

/// A text message a user sends, to be injected with
/// [`FakeTelegram::inject_message`](super::FakeTelegram::inject_message).
///
/// ```
/// use askbridge_testkit::telegram::{Chat, IncomingMessage, User};
/// let alice = User::new(42, "Alice");
/// let msg = IncomingMessage::new(&alice.private_chat(), &alice, "Option B").reply_to(7);
/// # let _ = msg;
/// ```
#[derive(Debug, Clone)]
pub struct IncomingMessage {
    pub(crate) chat: Chat,
    pub(crate) from: User,
    pub(crate) text: String,
    pub(crate) reply_to: Option<i32>,
    pub(crate) thread_id: Option<i32>,
}

impl IncomingMessage {
    /// `from` writes `text` in `chat`.
    pub fn new(chat: &Chat, from: &User, text: impl Into<String>) -> Self {
        IncomingMessage {
            chat: chat.clone(),
            from: from.clone(),
            text: text.into(),
            reply_to: None,
            thread_id: None,
        }
    }

    /// The message replies to message `message_id` of the same chat: the
    /// update's `reply_to_message` is that stored message. In a forum the
    /// reply lands in the replied message's topic unless
    /// [`in_topic`](Self::in_topic) says otherwise.
    #[must_use]
    pub fn reply_to(mut self, message_id: i32) -> Self {
        self.reply_to = Some(message_id);
        self
    }

    /// The message is written in forum topic `thread_id` (a topic made with
    /// [`FakeTelegram::create_forum_topic`](super::FakeTelegram::create_forum_topic)):
    /// it carries `message_thread_id` and `is_topic_message`, and, like on
    /// Telegram, a message that replies to nothing else has the topic's
    /// creation message as `reply_to_message`.
    #[must_use]
    pub fn in_topic(mut self, thread_id: i32) -> Self {
        self.thread_id = Some(thread_id);
        self
    }
}

/// One message as the fake stores it, bot's or user's.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredMessage {
    /// The chat.
    pub chat_id: i64,
    /// Id within the chat (per-chat counter shared by bot and users).
    pub message_id: i32,
    /// `message_thread_id`, if in a topic or thread.
    pub thread_id: Option<i32>,
    /// `is_topic_message`: sent in a forum topic.
    pub is_topic_message: bool,
    /// The sender (the bot's user for bot messages).
    pub from: User,
    /// Whether the bot sent it.
    pub from_bot: bool,
    /// Unix time of sending.
    pub date: i64,
    /// Current text (empty for service messages).
    pub text: String,
    /// The last `reply_markup` the bot set, as JSON: an inline keyboard
    /// (`{"inline_keyboard": [[…]]}`), or e.g. `{"force_reply": true}` for a
    /// forced reply. Only inline keyboards appear in the Message object.
    pub reply_markup: Option<Value>,
    /// `reply_to_message`'s id as it appears on the wire (for forum topic
    /// messages that reply to nothing, the topic's creation message).
    pub reply_to_message_id: Option<i32>,
    /// Whether the bot edited the text or keyboard.
    pub edited: bool,
    /// Unix time of the last edit.
    pub edit_date: Option<i64>,
    /// How many successful edits.
    pub edit_count: u32,
    /// For a topic's creation service message, the topic's name.
    pub forum_topic_created: Option<String>,
}

/// One button of an inline keyboard, as read back from a [`StoredMessage`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InlineButton {
    /// Label.
    pub text: String,
    /// `callback_data`, for callback buttons.
    pub callback_data: Option<String>,
    /// `url`, for link buttons.
    pub url: Option<String>,
}

impl StoredMessage {
    /// The inline keyboard's rows (empty without one).
    pub fn buttons(&self) -> Vec<Vec<InlineButton>> {
        let Some(rows) = self
            .reply_markup
            .as_ref()
            .and_then(|markup| markup.get("inline_keyboard"))
            .and_then(Value::as_array)
        else {
            return Vec::new();
        };
        rows.iter()
            .map(|row| {
                row.as_array()
                    .map(|row| {
                        row.iter()
                            .map(|button| InlineButton {
                                text: string_field(button, "text").unwrap_or_default(),
                                callback_data: string_field(button, "callback_data"),
                                url: string_field(button, "url"),
                            })
                            .collect()
                    })
                    .unwrap_or_default()
            })
            .collect()
    }

    /// The inline keyboard's labels, row by row.
    pub fn button_texts(&self) -> Vec<Vec<String>> {
        self.buttons()
            .into_iter()
            .map(|row| row.into_iter().map(|button| button.text).collect())
            .collect()
    }

    /// The `callback_data` of the first button labelled `text`.
    pub fn callback_data(&self, text: &str) -> Option<String> {
        self.buttons()
            .into_iter()
            .flatten()
            .find(|button| button.text == text)
            .and_then(|button| button.callback_data)
    }

    /// Whether the inline keyboard has at least one button.
    pub fn has_inline_keyboard(&self) -> bool {
        self.buttons().iter().any(|row| !row.is_empty())
    }

    /// Whether the message was sent with a `force_reply` markup.
    pub fn is_force_reply(&self) -> bool {
        self.reply_markup
            .as_ref()
            .and_then(|markup| markup.get("force_reply"))
            .is_some()
    }
}

fn string_field(value: &Value, key: &str) -> Option<String> {
    value.get(key).and_then(Value::as_str).map(str::to_owned)
}

/// One HTTP request the fake answered, in the order answered.
#[derive(Debug, Clone, PartialEq)]
pub struct Call {
    /// Canonical lowerCamel method name (`"sendMessage"`), whatever case the
    /// client used; unknown methods keep the client's spelling with a
    /// lower-case first letter.
    pub method: String,
    /// The parameters as one JSON object (JSON bodies as sent; form and
    /// multipart fields as strings, JSON-looking ones parsed).
    pub params: Value,
    /// HTTP status returned (200, 400, 401, 403, 404, 409, 429).
    pub status: u16,
    /// The response body.
    pub response: Value,
}

impl Call {
    /// Whether the call succeeded (`"ok": true`).
    pub fn is_ok(&self) -> bool {
        self.status == 200
    }

    /// One parameter.
    pub fn param(&self, key: &str) -> Option<&Value> {
        self.params.get(key)
    }

    /// The `chat_id` parameter as an integer, if it is one.
    pub fn chat_id(&self) -> Option<i64> {
        match self.params.get("chat_id")? {
            Value::Number(number) => number.as_i64(),
            Value::String(text) => text.parse().ok(),
            _ => None,
        }
    }

    /// The `text` parameter.
    pub fn text(&self) -> Option<&str> {
        self.params.get("text").and_then(Value::as_str)
    }

    /// The error `description` of a failed call.
    pub fn description(&self) -> Option<&str> {
        self.response.get("description").and_then(Value::as_str)
    }
}

/// How the bot answered a callback query (`answerCallbackQuery`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct CallbackAnswer {
    /// Notification text, if any.
    pub text: Option<String>,
    /// Whether an alert was requested instead of a toast.
    pub show_alert: bool,
    /// URL to open, if any.
    pub url: Option<String>,
    /// `cache_time`, if given.
    pub cache_time: Option<i64>,
}

/// The webhook as set with `setWebhook`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WebhookConfig {
    /// Where updates are POSTed.
    pub url: String,
    /// Sent as `X-Telegram-Bot-Api-Secret-Token`, if set.
    pub secret_token: Option<String>,
    /// `max_connections` (default 40; the fake delivers one at a time).
    pub max_connections: u32,
}

/// One attempt to POST an update to the webhook.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WebhookDelivery {
    /// The update.
    pub update_id: i64,
    /// Where it was POSTed.
    pub url: String,
    /// The receiver's HTTP status; `None` if no response (connection error).
    pub status: Option<u16>,
    /// The connection error, if any.
    pub error: Option<String>,
}

impl WebhookDelivery {
    /// Whether the receiver answered 2xx (the update is then dropped).
    pub fn delivered(&self) -> bool {
        self.status
            .is_some_and(|status| (200..300).contains(&status))
    }
}

//! The fake's public data types: users, members, channels, incoming
//! messages, and the records a test reads back (calls, stored messages,
//! interactions and their responses, modals, notices, gateway counters).

use serde_json::{Map, Value, json};

use super::util::{iso8601, str_field, u64_field};
use super::validate::{self, kind};

/// Permissions a member has by default: view channel, send messages, embed
/// links, attach files, read message history, add reactions, use
/// application commands.
pub const DEFAULT_MEMBER_PERMISSIONS: u64 =
    (1 << 6) | (1 << 10) | (1 << 11) | (1 << 14) | (1 << 15) | (1 << 16) | (1 << 31);

/// A Discord user ([User object](https://discord.com/developers/docs/resources/user#user-object)).
///
/// ```
/// use askbridge_testkit::discord::User;
/// let alice = User::new(100_000_000_000_000_001, "alice").global_name("Alice");
/// assert_eq!(alice.display_name(), "Alice");
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct User {
    /// Snowflake id.
    pub id: u64,
    /// Unique username (lower case, no discriminator).
    pub username: String,
    /// Display name, if set.
    pub global_name: Option<String>,
    /// Whether the user is a bot.
    pub bot: bool,
}

impl User {
    /// A human user with this id and username.
    pub fn new(id: u64, username: impl Into<String>) -> Self {
        User {
            id,
            username: username.into(),
            global_name: None,
            bot: false,
        }
    }

    /// Sets the display name (`global_name`).
    #[must_use]
    pub fn global_name(mut self, name: impl Into<String>) -> Self {
        self.global_name = Some(name.into());
        self
    }

    /// Makes the user a bot.
    #[must_use]
    pub fn bot(mut self) -> Self {
        self.bot = true;
        self
    }

    /// The display name, else the username.
    pub fn display_name(&self) -> &str {
        self.global_name.as_deref().unwrap_or(&self.username)
    }

    /// A mention of the user in message content: `<@id>`.
    pub fn mention(&self) -> String {
        format!("<@{}>", self.id)
    }

    /// The JSON user object, as Discord sends it.
    pub fn to_json(&self) -> Value {
        let mut user = json!({
            "id": self.id.to_string(),
            "username": self.username,
            "discriminator": "0",
            "global_name": self.global_name,
            "avatar": null,
            "public_flags": 0,
            "flags": 0,
            "banner": null,
            "accent_color": null,
            "avatar_decoration_data": null,
            "collectibles": null,
            "primary_guild": null,
        });
        if self.bot
            && let Value::Object(object) = &mut user
        {
            object.insert("bot".into(), json!(true));
        }
        user
    }
}

/// A user's membership of a guild: nickname and roles
/// ([Guild Member object](https://discord.com/developers/docs/resources/guild#guild-member-object)).
///
/// ```
/// use askbridge_testkit::discord::Member;
/// let ops = Member::new().nick("Al").roles([900_000_000_000_000_001]);
/// assert_eq!(ops.roles.len(), 1);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Member {
    /// Guild nickname, if any.
    pub nick: Option<String>,
    /// Role ids.
    pub roles: Vec<u64>,
    /// Permissions in the channel of an interaction (the `permissions`
    /// string of interaction members).
    pub permissions: u64,
}

impl Default for Member {
    fn default() -> Self {
        Member {
            nick: None,
            roles: Vec::new(),
            permissions: DEFAULT_MEMBER_PERMISSIONS,
        }
    }
}

impl Member {
    /// A member without nickname or roles, with
    /// [`DEFAULT_MEMBER_PERMISSIONS`].
    pub fn new() -> Self {
        Member::default()
    }

    /// Sets the nickname.
    #[must_use]
    pub fn nick(mut self, nick: impl Into<String>) -> Self {
        self.nick = Some(nick.into());
        self
    }

    /// Sets the roles.
    #[must_use]
    pub fn roles(mut self, roles: impl IntoIterator<Item = u64>) -> Self {
        self.roles = roles.into_iter().collect();
        self
    }

    /// Sets the permissions bit set.
    #[must_use]
    pub fn permissions(mut self, permissions: u64) -> Self {
        self.permissions = permissions;
        self
    }

    /// The member object without `user` (as in `MESSAGE_CREATE`), Discord's
    /// fields.
    pub(crate) fn partial_json(&self, joined_at_ms: u64) -> Value {
        json!({
            "roles": self.roles.iter().map(u64::to_string).collect::<Vec<_>>(),
            "nick": self.nick,
            "avatar": null,
            "banner": null,
            "premium_since": null,
            "joined_at": iso8601(joined_at_ms),
            "deaf": false,
            "mute": false,
            "flags": 0,
            "pending": false,
            "communication_disabled_until": null,
            "unusual_dm_activity_until": null,
        })
    }

    /// The full member object with `user` and `permissions` (as in
    /// interactions).
    pub(crate) fn interaction_json(&self, user: &User, joined_at_ms: u64) -> Value {
        let mut member = self.partial_json(joined_at_ms);
        if let Value::Object(object) = &mut member {
            object.insert("user".into(), user.to_json());
            object.insert("permissions".into(), json!(self.permissions.to_string()));
        }
        member
    }
}

/// The type of a [`Channel`]
/// ([channel types](https://discord.com/developers/docs/resources/channel#channel-object-channel-types)).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ChannelKind {
    /// A guild text channel (`0`).
    GuildText,
    /// A direct message with one user (`1`).
    Dm,
    /// A guild announcement channel (`5`).
    GuildAnnouncement,
    /// A public thread (`11`).
    PublicThread,
    /// A private thread (`12`).
    PrivateThread,
}

impl ChannelKind {
    /// The numeric `type`.
    pub fn code(self) -> u8 {
        match self {
            ChannelKind::GuildText => 0,
            ChannelKind::Dm => 1,
            ChannelKind::GuildAnnouncement => 5,
            ChannelKind::PublicThread => 11,
            ChannelKind::PrivateThread => 12,
        }
    }

    /// Whether it is a thread.
    pub fn is_thread(self) -> bool {
        matches!(self, ChannelKind::PublicThread | ChannelKind::PrivateThread)
    }
}

/// A channel the bot can see
/// ([Channel object](https://discord.com/developers/docs/resources/channel#channel-object)).
///
/// ```
/// use askbridge_testkit::discord::Channel;
/// const GUILD: u64 = 800_000_000_000_000_001;
/// let general = Channel::guild_text(810_000_000_000_000_001, GUILD, "general");
/// let thread = Channel::thread(820_000_000_000_000_001, GUILD, general.id, "deploy?");
/// assert_eq!(thread.parent_id, Some(general.id));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Channel {
    /// Snowflake id.
    pub id: u64,
    /// Type.
    pub kind: ChannelKind,
    /// The guild, for guild channels and threads.
    pub guild_id: Option<u64>,
    /// Name, for guild channels and threads.
    pub name: Option<String>,
    /// The parent channel of a thread.
    pub parent_id: Option<u64>,
    /// The other party of a DM.
    pub recipient: Option<User>,
}

impl Channel {
    /// A guild text channel.
    pub fn guild_text(id: u64, guild_id: u64, name: impl Into<String>) -> Self {
        Channel {
            id,
            kind: ChannelKind::GuildText,
            guild_id: Some(guild_id),
            name: Some(name.into()),
            parent_id: None,
            recipient: None,
        }
    }

    /// A public thread in `parent_id`.
    pub fn thread(id: u64, guild_id: u64, parent_id: u64, name: impl Into<String>) -> Self {
        Channel {
            id,
            kind: ChannelKind::PublicThread,
            guild_id: Some(guild_id),
            name: Some(name.into()),
            parent_id: Some(parent_id),
            recipient: None,
        }
    }

    /// A private thread in `parent_id`.
    pub fn private_thread(id: u64, guild_id: u64, parent_id: u64, name: impl Into<String>) -> Self {
        Channel {
            kind: ChannelKind::PrivateThread,
            ..Channel::thread(id, guild_id, parent_id, name)
        }
    }

    /// The DM channel with `recipient` (normally made by
    /// `POST /users/@me/channels` or
    /// [`FakeDiscord::dm_channel`](super::FakeDiscord::dm_channel)).
    pub fn dm(id: u64, recipient: &User) -> Self {
        Channel {
            id,
            kind: ChannelKind::Dm,
            guild_id: None,
            name: None,
            parent_id: None,
            recipient: Some(recipient.clone()),
        }
    }

    /// The JSON channel object.
    pub fn to_json(&self) -> Value {
        let mut channel = Map::new();
        channel.insert("id".into(), json!(self.id.to_string()));
        channel.insert("type".into(), json!(self.kind.code()));
        channel.insert("flags".into(), json!(0));
        channel.insert("last_message_id".into(), Value::Null);
        if let Some(guild_id) = self.guild_id {
            channel.insert("guild_id".into(), json!(guild_id.to_string()));
            channel.insert("name".into(), json!(self.name));
            channel.insert("position".into(), json!(0));
            channel.insert("permission_overwrites".into(), json!([]));
            channel.insert("nsfw".into(), json!(false));
            channel.insert("rate_limit_per_user".into(), json!(0));
            if let Some(parent_id) = self.parent_id {
                channel.insert("parent_id".into(), json!(parent_id.to_string()));
            }
            if self.kind.is_thread() {
                channel.insert(
                    "thread_metadata".into(),
                    json!({
                        "archived": false,
                        "auto_archive_duration": 1440,
                        "archive_timestamp": iso8601(0),
                        "locked": false,
                    }),
                );
            } else {
                channel.insert("topic".into(), Value::Null);
            }
        }
        if let Some(recipient) = &self.recipient {
            channel.insert("recipients".into(), json!([recipient.to_json()]));
        }
        Value::Object(channel)
    }
}

/// A message a user writes, to be injected with
/// [`FakeDiscord::inject_message`](super::FakeDiscord::inject_message).
/// Mentions (`<@id>`) are read from the content.
///
/// ```
/// use askbridge_testkit::discord::{IncomingMessage, User};
/// let alice = User::new(100_000_000_000_000_001, "alice");
/// let reply = IncomingMessage::new(810_000_000_000_000_001, &alice, "Option B").reply_to(42);
/// # let _ = reply;
/// ```
#[derive(Debug, Clone)]
pub struct IncomingMessage {
    pub(crate) channel_id: u64,
    pub(crate) author: User,
    pub(crate) content: String,
    pub(crate) reply_to: Option<u64>,
}

impl IncomingMessage {
    /// `author` writes `content` in `channel_id`.
    pub fn new(channel_id: u64, author: &User, content: impl Into<String>) -> Self {
        IncomingMessage {
            channel_id,
            author: author.clone(),
            content: content.into(),
            reply_to: None,
        }
    }

    /// The message replies to message `message_id` of the same channel: it
    /// gets `type` 19, `message_reference` and `referenced_message`.
    #[must_use]
    pub fn reply_to(mut self, message_id: u64) -> Self {
        self.reply_to = Some(message_id);
        self
    }
}

/// An earlier version of an edited message.
#[derive(Debug, Clone, PartialEq)]
pub struct Revision {
    /// The content then.
    pub content: String,
    /// The components (action rows) then.
    pub components: Vec<Value>,
    /// Unix milliseconds when this version was replaced.
    pub replaced_at_ms: u64,
}

/// A button of a stored message, as a test reads it back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ButtonInfo {
    /// Label, if any.
    pub label: Option<String>,
    /// `custom_id` (none for link and premium buttons).
    pub custom_id: Option<String>,
    /// Style (1–6).
    pub style: u64,
    /// `url` of a link button.
    pub url: Option<String>,
    /// Whether it is disabled.
    pub disabled: bool,
}

/// One message as the fake stores it, bot's or user's, with its edits.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredMessage {
    /// Snowflake id.
    pub id: u64,
    /// The channel.
    pub channel_id: u64,
    /// The guild of the channel, if any.
    pub guild_id: Option<u64>,
    /// The author (the bot's user for bot messages).
    pub author: User,
    /// Current content.
    pub content: String,
    /// Current components: the action rows as JSON.
    pub components: Vec<Value>,
    /// Embeds as sent (not validated).
    pub embeds: Vec<Value>,
    /// Message flags (64 ephemeral, 128 loading…).
    pub flags: u64,
    /// Message `type`: 0 default, 19 reply, 20 response to a slash command.
    pub kind: u8,
    /// The message this one replies to (`message_reference.message_id`).
    pub reference: Option<u64>,
    /// For an ephemeral message, the only user who sees it.
    pub ephemeral_to: Option<u64>,
    /// The interaction whose response or follow-up this is.
    pub interaction_id: Option<u64>,
    /// `webhook_id` (the application id, for interaction responses).
    pub webhook_id: Option<u64>,
    /// Unix milliseconds of creation.
    pub created_ms: u64,
    /// Unix milliseconds of the last edit.
    pub edited_ms: Option<u64>,
    /// Earlier versions, oldest first (one per successful edit).
    pub history: Vec<Revision>,
    /// Whether it was deleted.
    pub deleted: bool,
    /// Whether the bot sent it.
    pub from_bot: bool,
}

impl StoredMessage {
    /// How many times it was edited.
    pub fn edit_count(&self) -> usize {
        self.history.len()
    }

    /// Whether it is ephemeral (flag 64).
    pub fn is_ephemeral(&self) -> bool {
        self.flags & 64 != 0
    }

    /// Whether it is a deferred response still "thinking" (flag 128).
    pub fn is_loading(&self) -> bool {
        self.flags & 128 != 0
    }

    /// Every component inside the action rows, in order.
    pub fn flat_components(&self) -> Vec<&Value> {
        validate::flatten(&self.components)
    }

    /// The buttons, row by row (rows without buttons are left out).
    pub fn buttons(&self) -> Vec<Vec<ButtonInfo>> {
        self.components
            .iter()
            .filter_map(|row| {
                let buttons: Vec<ButtonInfo> = row
                    .get("components")
                    .and_then(Value::as_array)?
                    .iter()
                    .filter(|component| u64_field(component, "type") == Some(kind::BUTTON))
                    .map(|button| ButtonInfo {
                        label: str_field(button, "label").map(str::to_owned),
                        custom_id: str_field(button, "custom_id").map(str::to_owned),
                        style: u64_field(button, "style").unwrap_or(0),
                        url: str_field(button, "url").map(str::to_owned),
                        disabled: button.get("disabled").and_then(Value::as_bool) == Some(true),
                    })
                    .collect();
                (!buttons.is_empty()).then_some(buttons)
            })
            .collect()
    }

    /// The button labels, row by row.
    pub fn button_labels(&self) -> Vec<Vec<String>> {
        self.buttons()
            .into_iter()
            .map(|row| {
                row.into_iter()
                    .map(|button| button.label.unwrap_or_default())
                    .collect()
            })
            .collect()
    }

    /// The `custom_id` of the first button labelled `label`.
    pub fn custom_id_of(&self, label: &str) -> Option<String> {
        self.buttons()
            .into_iter()
            .flatten()
            .find(|button| button.label.as_deref() == Some(label))
            .and_then(|button| button.custom_id)
    }

    /// Every `custom_id` of the message's components.
    pub fn custom_ids(&self) -> Vec<String> {
        self.flat_components()
            .into_iter()
            .filter_map(|component| str_field(component, "custom_id").map(str::to_owned))
            .collect()
    }

    /// The component with this `custom_id`.
    pub fn component(&self, custom_id: &str) -> Option<&Value> {
        self.flat_components()
            .into_iter()
            .find(|component| str_field(component, "custom_id") == Some(custom_id))
    }

    /// The `(label, value)` options of the string select `custom_id`.
    pub fn select_options(&self, custom_id: &str) -> Vec<(String, String)> {
        self.component(custom_id)
            .and_then(|select| select.get("options"))
            .and_then(Value::as_array)
            .map(|options| {
                options
                    .iter()
                    .map(|option| {
                        (
                            str_field(option, "label").unwrap_or_default().to_owned(),
                            str_field(option, "value").unwrap_or_default().to_owned(),
                        )
                    })
                    .collect()
            })
            .unwrap_or_default()
    }
}

/// One HTTP request the fake answered, in the order answered.
#[derive(Debug, Clone, PartialEq)]
pub struct Call {
    /// HTTP method (`"POST"`).
    pub method: String,
    /// Path below `/api/v10` (`"/channels/81…/messages"`).
    pub path: String,
    /// The route with placeholders, as in Discord's documentation
    /// (`"/channels/{channel.id}/messages"`); the path for unknown routes.
    pub route: String,
    /// The query string, if any.
    pub query: Option<String>,
    /// The JSON request body (`Null` without one; invalid JSON as a string).
    pub body: Value,
    /// HTTP status returned.
    pub status: u16,
    /// The JSON response body (`Null` for `204`).
    pub response: Value,
}

impl Call {
    /// Whether the status is 2xx.
    pub fn is_ok(&self) -> bool {
        (200..300).contains(&self.status)
    }

    /// Whether this is `method` on `route` (e.g. `"POST",
    /// "/channels/{channel.id}/messages"`).
    pub fn is(&self, method: &str, route: &str) -> bool {
        self.method.eq_ignore_ascii_case(method) && self.route == route
    }

    /// Discord's JSON error `code` of a failed call.
    pub fn error_code(&self) -> Option<u64> {
        if self.is_ok() {
            return None;
        }
        u64_field(&self.response, "code")
    }

    /// The error `message` of a failed call.
    pub fn error_message(&self) -> Option<&str> {
        if self.is_ok() {
            return None;
        }
        str_field(&self.response, "message")
    }
}

/// What kind of interaction a user made.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InteractionKind {
    /// `PING` (1), sent to HTTP interaction endpoints to check them.
    Ping,
    /// A slash command: APPLICATION_COMMAND (2), `data.type` 1
    /// (CHAT_INPUT).
    Command,
    /// A button press: MESSAGE_COMPONENT (3), `component_type` 2.
    Button,
    /// A string select choice: MESSAGE_COMPONENT (3), `component_type` 3.
    StringSelect,
    /// MODAL_SUBMIT (5).
    ModalSubmit,
}

impl InteractionKind {
    /// The interaction `type`.
    pub fn code(self) -> u8 {
        match self {
            InteractionKind::Ping => 1,
            InteractionKind::Command => 2,
            InteractionKind::Button | InteractionKind::StringSelect => 3,
            InteractionKind::ModalSubmit => 5,
        }
    }
}

/// The accepted initial response to an interaction.
#[derive(Debug, Clone, PartialEq)]
pub struct InteractionResponse {
    /// Callback type: 1 PONG, 4 CHANNEL_MESSAGE_WITH_SOURCE, 5 DEFERRED_…,
    /// 6 DEFERRED_UPDATE_MESSAGE, 7 UPDATE_MESSAGE, 9 MODAL.
    pub kind: u8,
    /// The callback `data` as sent (`Null` if none).
    pub data: Value,
    /// The message it created (4, 5) or updated (6, 7).
    pub message_id: Option<u64>,
    /// Whether it came inline in the HTTP endpoint's answer rather than
    /// through `POST /interactions/{id}/{token}/callback`.
    pub inline: bool,
}

impl InteractionResponse {
    /// `data.content`, if any.
    pub fn content(&self) -> Option<&str> {
        str_field(&self.data, "content")
    }

    /// Whether `data.flags` has EPHEMERAL (64).
    pub fn is_ephemeral(&self) -> bool {
        u64_field(&self.data, "flags").is_some_and(|flags| flags & 64 != 0)
    }
}

/// One interaction the fake created, with how the bot answered it.
#[derive(Debug, Clone, PartialEq)]
pub struct InteractionRecord {
    /// Snowflake id.
    pub id: u64,
    /// The continuation token (for callbacks and webhooks).
    pub token: String,
    /// What the user did.
    pub kind: InteractionKind,
    /// The component's or modal's `custom_id` (empty for commands).
    pub custom_id: String,
    /// The name of the application command used (commands only).
    pub command_name: Option<String>,
    /// Selected values (string selects).
    pub values: Vec<String>,
    /// Submitted `(custom_id, value)` text inputs (modal submits).
    pub fields: Vec<(String, String)>,
    /// Who did it.
    pub user: User,
    /// Where.
    pub channel_id: u64,
    /// The guild, if not in a DM.
    pub guild_id: Option<u64>,
    /// The message the component was on (none for commands, and for
    /// modals opened by commands).
    pub message_id: Option<u64>,
    /// Whether it went out over the gateway (else it was built for an HTTP
    /// interactions endpoint).
    pub via_gateway: bool,
    /// Unix milliseconds of creation.
    pub created_ms: u64,
    /// The accepted initial response.
    pub response: Option<InteractionResponse>,
    /// Follow-up messages, in order.
    pub followups: Vec<u64>,
    /// Initial responses refused (late, second, invalid).
    pub refused_responses: usize,
}

/// A modal the bot opened (MODAL response), until submitted.
#[derive(Debug, Clone, PartialEq)]
pub struct ModalRecord {
    /// The interaction answered with the modal.
    pub opened_by: u64,
    /// Who sees it.
    pub user_id: u64,
    /// The modal's `custom_id`.
    pub custom_id: String,
    /// Its title.
    pub title: String,
    /// Its action rows of text inputs, as sent.
    pub components: Vec<Value>,
    /// The submit interaction, once submitted.
    pub submitted_as: Option<u64>,
}

impl ModalRecord {
    /// The text inputs, in order.
    pub fn inputs(&self) -> Vec<&Value> {
        validate::flatten(&self.components)
    }
}

/// What a user was shown privately.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NoticeKind {
    /// An ephemeral message ("Only you can see this").
    Ephemeral,
    /// A modal popup.
    Modal,
    /// Discord's "This interaction failed": no accepted initial response
    /// within the deadline.
    InteractionFailed,
}

/// Something shown to one user only.
#[derive(Debug, Clone, PartialEq)]
pub struct Notice {
    /// What it is.
    pub kind: NoticeKind,
    /// The interaction it answers.
    pub interaction_id: u64,
    /// The ephemeral message, if it is one.
    pub message_id: Option<u64>,
    /// Message content, modal title, or "This interaction failed".
    pub text: String,
}

/// Counters of the gateway side.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GatewayStats {
    /// WebSocket connections opened.
    pub connections: usize,
    /// IDENTIFY payloads received.
    pub identifies: usize,
    /// READY dispatches sent.
    pub ready: usize,
    /// RESUME payloads received.
    pub resume_attempts: usize,
    /// RESUMED dispatches sent (successful resumes).
    pub resumed: usize,
    /// INVALID_SESSION (op 9) sent.
    pub invalid_sessions: usize,
    /// Heartbeats (op 1) received.
    pub heartbeats: usize,
    /// Dispatches (op 0) sent, READY and RESUMED included.
    pub dispatches_sent: usize,
    /// Close frames sent: `(code, reason)`.
    pub closes: Vec<(u16, String)>,
    /// The intents of the last IDENTIFY.
    pub last_intents: Option<u64>,
    /// Connections the fake dropped without a close frame.
    pub dropped: usize,
}

/// An interaction built for an HTTP interactions endpoint: registered with
/// the fake (so callbacks and webhooks work) but not sent over the gateway.
#[derive(Debug, Clone, PartialEq)]
pub struct HttpInteraction {
    /// The interaction id.
    pub id: u64,
    /// Its token.
    pub token: String,
    /// The INTERACTION_CREATE body, as Discord would POST it.
    pub body: Value,
}

impl HttpInteraction {
    /// The body as the bytes Discord would sign and send.
    pub fn body_bytes(&self) -> Vec<u8> {
        self.body.to_string().into_bytes()
    }
}

/// What an HTTP interactions endpoint answered to a signed POST from
/// [`FakeDiscord::deliver_http_interaction`](super::FakeDiscord::deliver_http_interaction).
#[derive(Debug, Clone, PartialEq)]
pub struct HttpDelivery {
    /// The endpoint's HTTP status.
    pub status: u16,
    /// Its JSON body, if any.
    pub body: Option<Value>,
    /// If the body was an interaction response: the fake's verdict on it
    /// (`Ok(())` if accepted as the initial response, else Discord's error
    /// body).
    pub inline_response: Option<Result<(), Value>>,
}

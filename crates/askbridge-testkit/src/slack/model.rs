//! The fake's public data types: users, channels, incoming messages, and
//! the records a test reads back (calls, stored messages and their edits,
//! ephemeral messages, interactions and their response URL posts, opened
//! views, Socket Mode envelopes and acks).

use serde_json::{Value, json};

use super::TEAM_ID;

/// A Slack user ([user object](https://docs.slack.dev/reference/objects/user-object)).
///
/// ```
/// use askbridge_testkit::slack::User;
/// let alice = User::new("U0ALICE001", "alice").real_name("Alice Liddell").display_name("Al");
/// assert_eq!(alice.shown_name(), "Al");
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct User {
    /// `U…` id.
    pub id: String,
    /// The username (`name`, lower case).
    pub name: String,
    /// `real_name` (and `profile.real_name`).
    pub real_name: String,
    /// `profile.display_name` (may be empty, as on Slack).
    pub display_name: String,
    /// Whether the user is a bot user.
    pub is_bot: bool,
}

impl User {
    /// A human user with this id and username (real name the same, no
    /// display name).
    pub fn new(id: impl Into<String>, name: impl Into<String>) -> Self {
        let name = name.into();
        User {
            id: id.into(),
            real_name: name.clone(),
            name,
            display_name: String::new(),
            is_bot: false,
        }
    }

    /// Sets `real_name`.
    #[must_use]
    pub fn real_name(mut self, real_name: impl Into<String>) -> Self {
        self.real_name = real_name.into();
        self
    }

    /// Sets `profile.display_name`.
    #[must_use]
    pub fn display_name(mut self, display_name: impl Into<String>) -> Self {
        self.display_name = display_name.into();
        self
    }

    /// Makes the user a bot user.
    #[must_use]
    pub fn bot(mut self) -> Self {
        self.is_bot = true;
        self
    }

    /// The display name, else the real name (what Slack's client shows).
    pub fn shown_name(&self) -> &str {
        if self.display_name.is_empty() {
            &self.real_name
        } else {
            &self.display_name
        }
    }

    /// A mention in message text: `<@U…>`.
    pub fn mention(&self) -> String {
        format!("<@{}>", self.id)
    }

    /// The user object of `users.info`.
    pub(crate) fn to_json(&self) -> Value {
        json!({
            "id": self.id,
            "team_id": TEAM_ID,
            "name": self.name,
            "deleted": false,
            "color": "9f69e7",
            "real_name": self.real_name,
            "tz": "Europe/London",
            "tz_label": "British Summer Time",
            "tz_offset": 3600,
            "profile": {
                "title": "",
                "phone": "",
                "skype": "",
                "real_name": self.real_name,
                "real_name_normalized": self.real_name,
                "display_name": self.display_name,
                "display_name_normalized": self.display_name,
                "status_text": "",
                "status_emoji": "",
                "status_expiration": 0,
                "avatar_hash": "ge3b51ca72de",
                "team": TEAM_ID,
            },
            "is_admin": false,
            "is_owner": false,
            "is_primary_owner": false,
            "is_restricted": false,
            "is_ultra_restricted": false,
            "is_bot": self.is_bot,
            "is_app_user": false,
            "updated": 1_700_000_000,
            "has_2fa": false,
        })
    }

    /// The short user object of interaction payloads.
    pub(crate) fn basic_json(&self) -> Value {
        json!({
            "id": self.id,
            "username": self.name,
            "name": self.name,
            "team_id": TEAM_ID,
        })
    }
}

/// What kind of conversation a [`Channel`] is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ChannelKind {
    /// A public channel (`C…`, `channel_type` `"channel"`).
    Public,
    /// A private channel (`C…` or `G…`, `channel_type` `"group"`).
    Private,
    /// A direct message with one user (`D…`, `channel_type` `"im"`).
    Im {
        /// The other member's user id.
        user: String,
    },
}

impl ChannelKind {
    /// The `channel_type` of message events.
    pub fn channel_type(&self) -> &'static str {
        match self {
            ChannelKind::Public => "channel",
            ChannelKind::Private => "group",
            ChannelKind::Im { .. } => "im",
        }
    }
}

/// A conversation the workspace has.
///
/// ```
/// use askbridge_testkit::slack::Channel;
/// let ops = Channel::public("C0OPS00001", "ops").without_bot();
/// assert!(!ops.bot_member);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Channel {
    /// Channel id.
    pub id: String,
    /// Name without `#` (a DM's is the user id).
    pub name: String,
    /// Public, private or DM.
    pub kind: ChannelKind,
    /// Whether the bot is a member (posting elsewhere answers
    /// `not_in_channel`).
    pub bot_member: bool,
    /// Whether the channel is archived (`is_archived`).
    pub archived: bool,
}

impl Channel {
    /// A public channel with the bot in it.
    pub fn public(id: impl Into<String>, name: impl Into<String>) -> Self {
        Channel {
            id: id.into(),
            name: name.into(),
            kind: ChannelKind::Public,
            bot_member: true,
            archived: false,
        }
    }

    /// A private channel with the bot in it.
    pub fn private(id: impl Into<String>, name: impl Into<String>) -> Self {
        Channel {
            kind: ChannelKind::Private,
            ..Channel::public(id, name)
        }
    }

    /// The bot is not a member.
    #[must_use]
    pub fn without_bot(mut self) -> Self {
        self.bot_member = false;
        self
    }

    /// The channel is archived.
    #[must_use]
    pub fn archived(mut self) -> Self {
        self.archived = true;
        self
    }
}

/// One Web API (or response URL) request, as answered.
#[derive(Debug, Clone, PartialEq)]
pub struct Call {
    /// The method (`"chat.postMessage"`), or `"response_url"` for posts to
    /// an interaction's response URL.
    pub method: String,
    /// The HTTP method (`"POST"`, `"GET"`).
    pub http_method: String,
    /// The parameters as JSON: a JSON body as is; form and query
    /// parameters as strings (the `token` parameter is removed).
    pub params: Value,
    /// `ok` of the answer.
    pub ok: bool,
    /// `error` of the answer, if any.
    pub error: Option<String>,
    /// HTTP status returned.
    pub status: u16,
    /// The JSON answer.
    pub response: Value,
}

impl Call {
    /// Whether this is a call of `method` that succeeded.
    pub fn is_ok(&self, method: &str) -> bool {
        self.method == method && self.ok
    }
}

/// An earlier version of an edited message.
#[derive(Debug, Clone, PartialEq)]
pub struct Revision {
    /// `text` then.
    pub text: String,
    /// `blocks` then (`Null` if none).
    pub blocks: Value,
}

/// A message in a channel, as it is now.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredMessage {
    /// Channel id.
    pub channel: String,
    /// The message's `ts` (its id within the channel).
    pub ts: String,
    /// The thread's parent `ts` for replies (`None` for top-level
    /// messages).
    pub thread_ts: Option<String>,
    /// Author user id (the bot user for the bot's messages).
    pub user: Option<String>,
    /// `bot_id` for bots' messages.
    pub bot_id: Option<String>,
    /// Current `text`.
    pub text: String,
    /// Current `blocks` (`Null` if none), with the `block_id`s Slack fills
    /// in.
    pub blocks: Value,
    /// Earlier versions, oldest first (one per edit).
    pub history: Vec<Revision>,
    /// Whether it was deleted (`delete_original`).
    pub deleted: bool,
}

impl StoredMessage {
    /// How many times it was edited.
    pub fn edit_count(&self) -> usize {
        self.history.len()
    }

    /// Whether it is a thread reply.
    pub fn is_reply(&self) -> bool {
        self.thread_ts
            .as_deref()
            .is_some_and(|parent| parent != self.ts)
    }

    /// Whether the fake's bot made it.
    pub fn by_bot(&self) -> bool {
        self.bot_id.as_deref() == Some(super::BOT_ID)
    }

    /// Every `action_id` in its blocks.
    pub fn action_ids(&self) -> Vec<String> {
        let mut ids = Vec::new();
        collect_action_ids(&self.blocks, &mut ids);
        ids
    }

    /// The `action_id` of the button labelled `label`, if it has one.
    pub fn button_action(&self, label: &str) -> Option<String> {
        fn find(value: &Value, label: &str) -> Option<String> {
            match value {
                Value::Object(object) => {
                    if object.get("type") == Some(&json!("button"))
                        && object["text"]["text"] == label
                    {
                        return object["action_id"].as_str().map(str::to_owned);
                    }
                    object.values().find_map(|child| find(child, label))
                }
                Value::Array(list) => list.iter().find_map(|child| find(child, label)),
                _ => None,
            }
        }
        find(&self.blocks, label)
    }
}

fn collect_action_ids(value: &Value, ids: &mut Vec<String>) {
    match value {
        Value::Object(object) => {
            if let Some(Value::String(id)) = object.get("action_id") {
                ids.push(id.clone());
            }
            for child in object.values() {
                collect_action_ids(child, ids);
            }
        }
        Value::Array(list) => list.iter().for_each(|child| collect_action_ids(child, ids)),
        _ => {}
    }
}

/// Where an ephemeral message came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EphemeralSource {
    /// `chat.postEphemeral`.
    PostEphemeral,
    /// A post to a block action's response URL with `response_type:
    /// "ephemeral"` (the default).
    ResponseUrl,
    /// A post to a slash command's response URL with `response_type:
    /// "ephemeral"` (the default).
    CommandResponse,
    /// The `payload` of the Socket Mode ack of a `slash_commands` envelope
    /// (`{"envelope_id": …, "payload": {"text": …}}`), unless its
    /// `response_type` is `"in_channel"`.
    CommandAck,
}

/// A message only one user sees.
#[derive(Debug, Clone, PartialEq)]
pub struct Ephemeral {
    /// Channel id.
    pub channel: String,
    /// The user who sees it.
    pub user: String,
    /// Its `message_ts`.
    pub ts: String,
    /// The thread it is in, if any.
    pub thread_ts: Option<String>,
    /// `text`.
    pub text: String,
    /// `blocks` (`Null` if none).
    pub blocks: Value,
    /// How it was sent.
    pub source: EphemeralSource,
}

/// What kind of interaction a [`InteractionRecord`] is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum InteractionKind {
    /// `block_actions` on a message: a button press or a choice.
    BlockActions {
        /// The message's channel.
        channel: String,
        /// The message's `ts`.
        message_ts: String,
        /// The element's `action_id`.
        action_id: String,
    },
    /// `view_submission` of a modal.
    ViewSubmission {
        /// The view's id.
        view_id: String,
    },
    /// A slash command run in a channel.
    SlashCommand {
        /// The channel it was run in.
        channel: String,
        /// The command, with its `/` (`"/askbridge"`).
        command: String,
        /// The text after the command.
        text: String,
    },
}

/// An interaction made by a test (a user acting), with what the app did
/// with it.
#[derive(Debug, Clone, PartialEq)]
pub struct InteractionRecord {
    /// The fake's id for it (also in its response URL).
    pub id: u64,
    /// Its kind.
    pub kind: InteractionKind,
    /// The acting user's id.
    pub user: String,
    /// The `trigger_id` (valid for one `views.open` within the trigger
    /// window).
    pub trigger_id: String,
    /// The `response_url` (block actions and slash commands).
    pub response_url: Option<String>,
    /// The Socket Mode envelope that carried it (`None` for HTTP).
    pub envelope_id: Option<String>,
    /// The payload, as sent.
    pub payload: Value,
    /// The bodies POSTed to its response URL, in order.
    pub responses: Vec<Value>,
}

/// A view opened with `views.open`.
#[derive(Debug, Clone, PartialEq)]
pub struct OpenedView {
    /// `V…` id.
    pub id: String,
    /// The trigger used.
    pub trigger_id: String,
    /// The user the trigger belonged to (who sees the modal).
    pub user: String,
    /// The view as the app sent it.
    pub view: Value,
    /// The view object Slack answered (with `id`, `hash`, `state`, …).
    pub stateful: Value,
    /// The `view_submission` interactions of it.
    pub submissions: Vec<u64>,
}

impl OpenedView {
    /// The `callback_id`, if any.
    pub fn callback_id(&self) -> Option<&str> {
        self.view.get("callback_id").and_then(Value::as_str)
    }
}

/// The type of a Socket Mode envelope.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum EnvelopeKind {
    /// `events_api`.
    EventsApi,
    /// `interactive`.
    Interactive,
    /// `slash_commands`.
    SlashCommands,
}

impl EnvelopeKind {
    /// The envelope's `type`.
    pub fn as_str(self) -> &'static str {
        match self {
            EnvelopeKind::EventsApi => "events_api",
            EnvelopeKind::Interactive => "interactive",
            EnvelopeKind::SlashCommands => "slash_commands",
        }
    }
}

/// A Socket Mode envelope and what became of it.
#[derive(Debug, Clone, PartialEq)]
pub struct EnvelopeRecord {
    /// `envelope_id` (a UUID, as Slack's).
    pub envelope_id: String,
    /// Its type.
    pub kind: EnvelopeKind,
    /// `payload`.
    pub payload: Value,
    /// `accepts_response_payload`.
    pub accepts_response_payload: bool,
    /// How many times it was sent (first delivery and redeliveries).
    pub deliveries: usize,
    /// `retry_attempt` of the last delivery.
    pub retry_attempt: u32,
    /// The acks received for it (each the whole frame, with `payload` if
    /// any), in order.
    pub acks: Vec<Value>,
    /// Whether Slack stopped redelivering it (retries exhausted).
    pub given_up: bool,
}

impl EnvelopeRecord {
    /// Whether it was acked.
    pub fn acked(&self) -> bool {
        !self.acks.is_empty()
    }

    /// The `payload` of the first ack, if it had one (a `response_action`
    /// for view submissions).
    pub fn ack_payload(&self) -> Option<&Value> {
        self.acks.first().and_then(|ack| ack.get("payload"))
    }
}

/// Counters of the Socket Mode endpoint.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SocketStats {
    /// WebSocket URLs handed out by `apps.connections.open`.
    pub tickets: usize,
    /// Connections accepted (each got `hello`).
    pub connections: usize,
    /// Connections open now.
    pub open: usize,
    /// Connection attempts refused (unknown or reused ticket).
    pub refused: usize,
    /// Connections the fake dropped ([`drop_connection`](super::FakeSlack::drop_connection)).
    pub dropped: usize,
    /// `disconnect` messages sent.
    pub disconnects: usize,
    /// Envelope frames sent (deliveries and redeliveries).
    pub envelopes_sent: usize,
    /// Frames received that were not acks of known envelopes.
    pub unexpected_frames: usize,
}

/// A message a user (or another bot) writes, for
/// [`FakeSlack::inject_message`](super::FakeSlack::inject_message).
///
/// ```
/// use askbridge_testkit::slack::IncomingMessage;
/// let reply = IncomingMessage::new("C0GENERAL1", "U0ALICE001", "yes").in_thread("1700000000.000100");
/// let bot = IncomingMessage::from_bot("C0GENERAL1", "B0OTHER001", "deployed");
/// # let _ = (reply, bot);
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct IncomingMessage {
    /// Channel id (a DM's `D…` id, see
    /// [`FakeSlack::dm_channel`](super::FakeSlack::dm_channel)).
    pub channel: String,
    /// Author user id (`None` for legacy bot messages).
    pub user: Option<String>,
    /// `bot_id` for messages from bots.
    pub bot_id: Option<String>,
    /// `text`.
    pub text: String,
    /// Parent `ts` for a thread reply.
    pub thread_ts: Option<String>,
    /// `blocks`, if any (Slack adds a `rich_text` block for user
    /// messages; `None` leaves it out).
    pub blocks: Option<Value>,
}

impl IncomingMessage {
    /// A message by `user` in `channel`.
    pub fn new(
        channel: impl Into<String>,
        user: impl Into<String>,
        text: impl Into<String>,
    ) -> Self {
        IncomingMessage {
            channel: channel.into(),
            user: Some(user.into()),
            bot_id: None,
            text: text.into(),
            thread_ts: None,
            blocks: None,
        }
    }

    /// A message by another app's bot (`subtype: "bot_message"`, `bot_id`).
    pub fn from_bot(
        channel: impl Into<String>,
        bot_id: impl Into<String>,
        text: impl Into<String>,
    ) -> Self {
        IncomingMessage {
            channel: channel.into(),
            user: None,
            bot_id: Some(bot_id.into()),
            text: text.into(),
            thread_ts: None,
            blocks: None,
        }
    }

    /// A reply in the thread of `parent_ts`.
    #[must_use]
    pub fn in_thread(mut self, parent_ts: impl Into<String>) -> Self {
        self.thread_ts = Some(parent_ts.into());
        self
    }

    /// Attaches `blocks`.
    #[must_use]
    pub fn blocks(mut self, blocks: Value) -> Self {
        self.blocks = Some(blocks);
        self
    }
}

/// A request Slack would POST to an app's Request URL (HTTP mode, not
/// Socket Mode): the exact body and its content type.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HttpRequest {
    /// `application/json` (Events API) or
    /// `application/x-www-form-urlencoded` (interactivity: `payload=<json>`;
    /// slash commands: one field per value).
    pub content_type: &'static str,
    /// The body, byte for byte.
    pub body: String,
    /// The interaction it carries, if any.
    pub interaction: Option<u64>,
}

impl HttpRequest {
    /// The JSON inside: the body itself, the `payload` form field, or (a
    /// slash command's form, which has no `payload`) the form's fields as
    /// an object of strings.
    pub fn json(&self) -> Value {
        if self.content_type == "application/json" {
            return serde_json::from_str(&self.body).unwrap_or(Value::Null);
        }
        let fields = super::util::form_decode(&self.body);
        match fields.iter().find(|(key, _)| key == "payload") {
            Some((_, payload)) => serde_json::from_str(payload).unwrap_or(Value::Null),
            None => super::util::pairs_to_json(fields),
        }
    }
}

/// What an app's endpoint answered to a delivered [`HttpRequest`].
#[derive(Debug, Clone, PartialEq)]
pub struct HttpDelivery {
    /// HTTP status.
    pub status: u16,
    /// The body as text.
    pub body: String,
    /// The body as JSON, if it is.
    pub json: Option<Value>,
}

/// A message injected by a test: where it is and the envelope that
/// carries its event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Injected {
    /// Channel id.
    pub channel: String,
    /// The message's `ts`.
    pub ts: String,
    /// The Socket Mode envelope of its `message` event.
    pub envelope_id: String,
}

//! The fake's public data types: users, chats, stored messages and their
//! versions, recorded calls, pushes (events and card callbacks) with their
//! deliveries and answers, and the long connection's counters.

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::util::pseudo_hex;

/// A user of the tenant.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct User {
    /// `ou_…`: the user's id within this app.
    pub open_id: String,
    /// `on_…`: the user's id across the developer's apps.
    pub union_id: String,
    /// The tenant's own user id.
    pub user_id: String,
    /// The display name.
    pub name: String,
}

impl User {
    /// A user with this `open_id` and name; `union_id` and `user_id` are
    /// derived from the `open_id`.
    pub fn new(open_id: impl Into<String>, name: impl Into<String>) -> User {
        let open_id = open_id.into();
        let seed = open_id
            .bytes()
            .fold(0xcbf2_9ce4_8422_2325_u64, |hash, byte| {
                (hash ^ u64::from(byte)).wrapping_mul(0x100_0000_01b3)
            });
        User {
            union_id: format!("on_{}", pseudo_hex(seed, 32)),
            user_id: pseudo_hex(seed ^ 0x5eed, 8),
            name: name.into(),
            open_id,
        }
    }

    /// `{"union_id", "user_id", "open_id"}`, as in events' `sender_id`.
    pub(crate) fn ids_json(&self) -> Value {
        json!({
            "union_id": self.union_id,
            "user_id": self.user_id,
            "open_id": self.open_id,
        })
    }
}

/// Whether a chat is a group or a private chat with the bot.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ChatType {
    /// A group chat (`chat_type` `"group"`).
    Group,
    /// The bot's private chat with one user (`chat_type` `"p2p"`).
    P2p {
        /// The user's `open_id`.
        open_id: String,
    },
}

impl ChatType {
    /// `chat_type` in events: `"group"` or `"p2p"`.
    pub fn as_str(&self) -> &'static str {
        match self {
            ChatType::Group => "group",
            ChatType::P2p { .. } => "p2p",
        }
    }
}

/// A chat of the tenant.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Chat {
    /// `oc_…`.
    pub chat_id: String,
    /// The chat's name (a p2p chat's is the user's name).
    pub name: String,
    /// Group or p2p.
    pub chat_type: ChatType,
    /// Whether the bot is a member (sending elsewhere answers `230002`).
    pub bot_member: bool,
    /// Whether the chat was disbanded ([`delete_chat`](super::FakeFeishu::delete_chat)).
    pub deleted: bool,
}

/// Who wrote a message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Sender {
    /// The fake's app (its bot).
    Bot,
    /// A user, by `open_id`.
    User(String),
}

/// What made a version of a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EditSource {
    /// The message as sent (create, reply, or a user's message).
    Sent,
    /// `PATCH /open-apis/im/v1/messages/{message_id}`.
    Patch,
    /// A `card` in the answer to a card callback.
    CallbackAnswer,
}

/// One version of a message's content.
#[derive(Debug, Clone, PartialEq)]
pub struct Version {
    /// `content` as the app sent it: a JSON string.
    pub content: String,
    /// `content` parsed.
    pub json: Value,
    /// What made it.
    pub source: EditSource,
    /// When, in Unix milliseconds.
    pub at_ms: u64,
}

/// A message in a chat, with every version of its content.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredMessage {
    /// `om_…`.
    pub message_id: String,
    /// The chat it is in.
    pub chat_id: String,
    /// `"group"` or `"p2p"`.
    pub chat_type: String,
    /// `msg_type`: `"text"` or `"interactive"`.
    pub msg_type: String,
    /// Who wrote it.
    pub sender: Sender,
    /// The first message of the reply chain, for replies.
    pub root_id: Option<String>,
    /// The message replied to, for replies.
    pub parent_id: Option<String>,
    /// `omt_…`, for messages in a thread.
    pub thread_id: Option<String>,
    /// `uuid` of the create or reply request, if any.
    pub uuid: Option<String>,
    /// Creation time, Unix milliseconds.
    pub create_time: u64,
    /// Versions, oldest first; the last is the current content.
    pub versions: Vec<Version>,
    /// Whether it was recalled ([`recall`](super::FakeFeishu::recall)).
    pub recalled: bool,
}

impl StoredMessage {
    /// The current version.
    ///
    /// # Panics
    /// Never: a message always has its first version.
    pub fn latest(&self) -> &Version {
        self.versions
            .last()
            .expect("FakeFeishu: a stored message has at least one version")
    }

    /// The current `content` string.
    pub fn content(&self) -> &str {
        &self.latest().content
    }

    /// The current content, parsed (the card, or `{"text": …}`).
    pub fn json(&self) -> &Value {
        &self.latest().json
    }

    /// The current text of a text message.
    pub fn text(&self) -> Option<&str> {
        (self.msg_type == "text")
            .then(|| self.json().get("text").and_then(Value::as_str))
            .flatten()
    }

    /// The current card of an interactive message.
    pub fn card(&self) -> Option<&Value> {
        (self.msg_type == "interactive").then(|| self.json())
    }

    /// How many times it was edited (patched, or replaced by a callback
    /// answer).
    pub fn edit_count(&self) -> usize {
        self.versions.len().saturating_sub(1)
    }

    /// Whether the fake's bot sent it.
    pub fn by_bot(&self) -> bool {
        self.sender == Sender::Bot
    }

    /// The last update, Unix milliseconds.
    pub fn update_time(&self) -> u64 {
        self.latest().at_ms
    }
}

/// One Open API request, as answered.
#[derive(Debug, Clone, PartialEq)]
pub struct Call {
    /// `"GET"`, `"POST"`, `"PATCH"`.
    pub http_method: String,
    /// The path (`/open-apis/im/v1/messages`).
    pub path: String,
    /// The query string, if any.
    pub query: Option<String>,
    /// The body: JSON as is, anything else as a string (`Null` if empty).
    pub body: Value,
    /// The HTTP status answered.
    pub status: u16,
    /// `code` of the answer (0 on success).
    pub code: i64,
    /// The JSON answer.
    pub response: Value,
}

impl Call {
    /// Whether the call succeeded (`code` 0).
    pub fn ok(&self) -> bool {
        self.code == 0
    }
}

/// What a push carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PushKind {
    /// An event (`im.message.receive_v1`, …).
    Event,
    /// A card callback (`card.action.trigger`).
    CardCallback,
}

/// How one delivery of a push went out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Via {
    /// Waiting for a long connection to send it on.
    Queued,
    /// A data frame on long connection `connection`, with `message_id`
    /// header `frame_id`.
    LongConnection {
        /// The connection's number (1, 2, … in order of opening).
        connection: u64,
        /// The frame's `message_id` header.
        frame_id: String,
    },
    /// A POST to the app's callback URL.
    Http {
        /// The URL.
        url: String,
    },
}

/// The app's answer to one delivery.
#[derive(Debug, Clone, PartialEq)]
pub struct Answer {
    /// The HTTP status (callback URL), or the answer frame's `code` (long
    /// connection).
    pub status: u16,
    /// The handler's response body (the HTTP body, or the answer frame's
    /// base64 `data` decoded), if any.
    pub body: Option<String>,
    /// `body` parsed as JSON, if it is.
    pub json: Option<Value>,
    /// From sending to the answer arriving.
    pub latency: Duration,
    /// The answer frame's headers (long connection; `biz_rt` among them).
    pub frame_headers: Vec<(String, String)>,
}

/// One delivery (first or again) of a push.
#[derive(Debug, Clone, PartialEq)]
pub struct Delivery {
    /// How it went out.
    pub via: Via,
    /// When the delivery was made (queued or sent).
    pub created_at: Instant,
    /// When it was sent (`None` while queued).
    pub sent_at: Option<Instant>,
    /// The app's answer, if any arrived.
    pub answer: Option<Answer>,
    /// Why Feishu counts this delivery as failed (no answer in time, not
    /// 200, a bad body, an invalid card…); `None` while pending and for a
    /// success.
    pub failure: Option<String>,
    /// Whether it is finished (answered, failed or abandoned).
    pub settled: bool,
}

impl Delivery {
    /// Whether it was answered in time, with 200 and a valid body.
    pub fn succeeded(&self) -> bool {
        self.settled && self.failure.is_none() && self.answer.is_some()
    }
}

/// An event or card callback Feishu sent the app, with each delivery.
#[derive(Debug, Clone, PartialEq)]
pub struct Push {
    /// The fake's number for it (1, 2, …).
    pub id: u64,
    /// Event or card callback.
    pub kind: PushKind,
    /// `header.event_type`.
    pub event_type: String,
    /// `header.event_id` (the same in every delivery).
    pub event_id: String,
    /// The JSON sent (before any encryption).
    pub payload: Value,
    /// Deliveries, in order.
    pub deliveries: Vec<Delivery>,
}

impl Push {
    /// The last delivery.
    pub fn last(&self) -> Option<&Delivery> {
        self.deliveries.last()
    }

    /// The last answer received, if any.
    pub fn answer(&self) -> Option<&Answer> {
        self.deliveries
            .iter()
            .rev()
            .find_map(|delivery| delivery.answer.as_ref())
    }

    /// Whether some delivery succeeded.
    pub fn succeeded(&self) -> bool {
        self.deliveries.iter().any(Delivery::succeeded)
    }

    /// Whether the last delivery is finished.
    pub fn settled(&self) -> bool {
        self.last().is_some_and(|delivery| delivery.settled)
    }
}

/// What came of a card callback ([`press`](super::FakeFeishu::press) and
/// friends): what the user saw.
#[derive(Debug, Clone, PartialEq)]
pub struct CallbackOutcome {
    /// The push that carried it.
    pub push: u64,
    /// The answer's status, if any arrived.
    pub status: Option<u16>,
    /// The answer body, parsed (`{}` for an empty body).
    pub answer: Option<Value>,
    /// `toast` of the answer.
    pub toast: Option<Value>,
    /// The card that replaced the message's (`card.data` of the answer),
    /// if any and valid.
    pub card: Option<Value>,
    /// From sending to the answer.
    pub latency: Option<Duration>,
    /// Why Feishu shows the user an error instead, if it does.
    pub failure: Option<String>,
}

impl CallbackOutcome {
    /// Whether the callback worked (answered in time with 200 and a valid
    /// body).
    pub fn succeeded(&self) -> bool {
        self.failure.is_none()
    }

    /// `toast.content`, if any.
    pub fn toast_text(&self) -> Option<&str> {
        self.toast
            .as_ref()
            .and_then(|toast| toast.get("content"))
            .and_then(Value::as_str)
    }
}

/// A user's message, as [`send_text`](super::FakeFeishu::send_text) made
/// it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SentText {
    /// `om_…` of the stored message.
    pub message_id: String,
    /// Its chat.
    pub chat_id: String,
    /// The push of its `im.message.receive_v1` event; `None` when Feishu
    /// would not tell the app (a group message that does not mention the
    /// bot, without the "read all group messages" permission).
    pub push: Option<u64>,
}

/// What the app's callback URL answered to a request the test made
/// ([`url_verification`](super::FakeFeishu::url_verification),
/// [`send_forged`](super::FakeFeishu::send_forged)).
#[derive(Debug, Clone, PartialEq)]
pub struct HttpDelivery {
    /// HTTP status.
    pub status: u16,
    /// The body as text.
    pub body: String,
    /// The body as JSON, if it is.
    pub json: Option<Value>,
    /// From sending to the answer.
    pub latency: Duration,
}

/// A request to the callback URL that Feishu did not send, for testing the
/// app's checks ([`send_forged`](super::FakeFeishu::send_forged)).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Forgery {
    /// Signed with the wrong key.
    BadSignature,
    /// Correctly signed, with a timestamp 6 minutes old.
    OldTimestamp,
    /// Plain JSON, unencrypted and unsigned (though the app has an
    /// encrypt key).
    Unencrypted,
    /// Encrypted and signed, with the wrong verification `token` inside.
    WrongVerificationToken,
}

/// Counters of the long connection.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ConnectionStats {
    /// URLs handed out by `/callback/ws/endpoint`.
    pub endpoints: usize,
    /// Connections accepted, ever.
    pub opened: usize,
    /// Connections open now.
    pub open: usize,
    /// Connection attempts refused (unknown or used ticket, too many
    /// connections).
    pub refused: usize,
    /// Connections the fake ended ([`drop_connections`](super::FakeFeishu::drop_connections),
    /// [`close_connections`](super::FakeFeishu::close_connections)).
    pub ended_by_fake: usize,
    /// Pings received (each answered with a pong).
    pub pings: usize,
    /// Data frames pushed (deliveries).
    pub pushed: usize,
    /// Answer frames received for pushes.
    pub answers: usize,
    /// Frames that were neither pings nor answers to pushes.
    pub unexpected_frames: usize,
}

/// What came of a `url_verification` request
/// ([`url_verification`](super::FakeFeishu::url_verification)).
#[derive(Debug, Clone, PartialEq)]
pub struct Verification {
    /// The challenge sent.
    pub challenge: String,
    /// What the app answered.
    pub delivery: HttpDelivery,
    /// Whether it answered 200 with `{"challenge": <the same>}`, as Feishu
    /// requires.
    pub verified: bool,
}

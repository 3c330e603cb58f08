//! A fake of the Telegram Bot API, served on `127.0.0.1`, for end-to-end
//! tests of a real Bot API client (teloxide) without the internet.
//!
//! [`FakeTelegram::start`] binds a free port; point the client at
//! [`FakeTelegram::api_url`] with the token [`TOKEN`]:
//!
//! ```no_run
//! # async fn demo() {
//! use askbridge_testkit::telegram::{Chat, FakeTelegram, IncomingMessage, User, TOKEN};
//!
//! let fake = FakeTelegram::start().await;
//! // let bot = teloxide::Bot::new(TOKEN).set_api_url(fake.api_url().parse().unwrap());
//! let alice = User::new(42, "Alice").username("alice");
//! fake.inject_message(IncomingMessage::new(&alice.private_chat(), &alice, "/start"));
//! let sent = fake.wait_for_sends(1).await; // the bot's answer, no sleeping
//! # let _ = (sent, TOKEN);
//! # }
//! ```
//!
//! # What it implements
//!
//! `getMe` (privacy mode as `can_read_all_group_messages`,
//! [`FakeTelegramBuilder::privacy_mode`]), `getUpdates` (offset confirmation, `limit`, long polling with
//! `timeout`, 409 for a concurrent poll or while a webhook is set),
//! `sendMessage`, `editMessageText`, `editMessageReplyMarkup`,
//! `answerCallbackQuery`, `setWebhook`, `deleteWebhook`, `getWebhookInfo`.
//! Method names match in any case (teloxide sends `SendMessage`); parameters
//! are read from JSON, form and multipart bodies and the query string. Any
//! other method answers `404 Not Found` (which teloxide reads as
//! `ApiError::InvalidToken`) and is recorded. A wrong token answers
//! `401 Unauthorized`.
//!
//! Rules enforced like Telegram's: texts of 1–4096 UTF-16 code units
//! (blank is "message text is empty"), `callback_data` of 1–64 bytes, inline
//! buttons need an action, per-chat increasing message ids shared by bot and
//! users, edits that change nothing are refused ("message is not modified";
//! an edit without `reply_markup` removes the inline keyboard), callback
//! queries answer once, replies and topics must exist, optional flood
//! control ([`RateLimits`]) on `sendMessage`, and chats can be made
//! unreachable ([`FakeTelegram::mark_blocked`], [`FakeTelegram::mark_unknown`]).
//! Error descriptions are Telegram's exact strings, which teloxide maps to
//! its `ApiError` variants.
//!
//! Webhook bodies are the Update JSON as text; parse them from text
//! (`serde_json::from_str`/`from_slice`), as teloxide's own listener does:
//! teloxide's `Update` read from a `serde_json::Value` comes out as
//! `UpdateKind::Error`.
//!
//! Deliberate differences: webhooks may be plain `http://` on any port (so a
//! test can receive them on 127.0.0.1); `parse_mode` is accepted but the
//! text is stored and measured as sent (no entity parsing); sending to a
//! chat id the fake has never seen creates that chat (positive ids private,
//! `-100…` supergroups, other negative ids groups).

mod model;
mod params;
mod rate;
mod server;
mod state;

use std::fmt;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

pub use model::{
    Call, CallbackAnswer, Chat, ChatKind, ChatStatus, IncomingMessage, InlineButton, StoredMessage,
    User, WebhookConfig, WebhookDelivery,
};
pub use rate::RateLimits;
pub use state::State;

use crate::faults::{self, FaultCounts, FaultPlan, Faults};
use server::Inner;

/// The bot token the fake accepts by default. It has the shape of a real
/// token (it is the example from the Bot API documentation); the bot's id is
/// the part before the colon, [`BOT_ID`].
pub const TOKEN: &str = "123456:ABC-DEF1234ghIkl-zyx57W2v1u123ew11";

/// The bot's user id with [`TOKEN`].
pub const BOT_ID: i64 = 123_456;

/// The bot's first name, unless the builder says otherwise.
pub const BOT_FIRST_NAME: &str = "AskBridge Test";

/// The bot's username, unless the builder says otherwise.
pub const BOT_USERNAME: &str = "askbridge_test_bot";

/// How long [`FakeTelegram::wait_for`] waits before failing the test.
pub const DEFAULT_WAIT_TIMEOUT: Duration = Duration::from_secs(20);

/// Options for a [`FakeTelegram`]: token, bot names, rate limits, wait
/// timeout.
///
/// ```no_run
/// # async fn demo() {
/// use askbridge_testkit::telegram::{FakeTelegram, RateLimits};
/// let fake = FakeTelegram::builder().rate_limits(RateLimits::TELEGRAM).start().await;
/// # let _ = fake;
/// # }
/// ```
#[derive(Debug, Clone)]
pub struct FakeTelegramBuilder {
    token: String,
    first_name: String,
    username: String,
    privacy_mode: bool,
    rate_limits: RateLimits,
    faults: Faults,
    wait_timeout: Duration,
}

impl Default for FakeTelegramBuilder {
    fn default() -> Self {
        FakeTelegramBuilder {
            token: TOKEN.to_owned(),
            first_name: BOT_FIRST_NAME.to_owned(),
            username: BOT_USERNAME.to_owned(),
            privacy_mode: true,
            rate_limits: RateLimits::OFF,
            faults: Faults::NONE,
            wait_timeout: DEFAULT_WAIT_TIMEOUT,
        }
    }
}

impl FakeTelegramBuilder {
    /// The accepted token (`<bot id>:<secret>`; the bot's id is read from
    /// it).
    #[must_use]
    pub fn token(mut self, token: impl Into<String>) -> Self {
        self.token = token.into();
        self
    }

    /// The bot's first name and username (without `@`), as `getMe` and
    /// messages show them.
    #[must_use]
    pub fn bot_name(mut self, first_name: impl Into<String>, username: impl Into<String>) -> Self {
        self.first_name = first_name.into();
        self.username = username.into();
        self
    }

    /// The bot's privacy mode, as BotFather's `/setprivacy` sets it
    /// (default on, as for every new bot): `getMe` answers
    /// `can_read_all_group_messages: false` while it is on. The fake does
    /// not filter group updates by it.
    #[must_use]
    pub fn privacy_mode(mut self, on: bool) -> Self {
        self.privacy_mode = on;
        self
    }

    /// Faults injected into the Bot API's requests (default:
    /// [`Faults::NONE`]).
    #[must_use]
    pub fn faults(mut self, faults: Faults) -> Self {
        self.faults = faults;
        self
    }

    /// Flood control on `sendMessage` (default: [`RateLimits::OFF`]).
    #[must_use]
    pub fn rate_limits(mut self, limits: RateLimits) -> Self {
        self.rate_limits = limits;
        self
    }

    /// How long `wait_for` and friends wait before panicking (default
    /// [`DEFAULT_WAIT_TIMEOUT`]).
    #[must_use]
    pub fn wait_timeout(mut self, timeout: Duration) -> Self {
        self.wait_timeout = timeout;
        self
    }

    /// Binds `127.0.0.1:0` and serves in background tasks of the current
    /// tokio runtime.
    ///
    /// # Panics
    /// If no port can be bound.
    pub async fn start(self) -> FakeTelegram {
        let bot_id = self
            .token
            .split_once(':')
            .and_then(|(id, _)| id.parse().ok())
            .unwrap_or(BOT_ID);
        let mut bot = User::new(bot_id, self.first_name).username(self.username);
        bot.is_bot = true;
        let mut state = State::new(self.token.clone(), bot, self.rate_limits);
        state.privacy_mode = self.privacy_mode;
        let inner = Arc::new(Inner::new(state));

        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("FakeTelegram: bind 127.0.0.1:0");
        let addr = listener.local_addr().expect("FakeTelegram: local address");
        let (shutdown, stopped) = oneshot::channel::<()>();
        let faults = FaultPlan::new(self.faults, server::FAULT_ANSWERS);
        let app = faults::layer(server::router(Arc::clone(&inner)), Arc::clone(&faults));
        let server = tokio::spawn(async move {
            let served = axum::serve(listener, app)
                .with_graceful_shutdown(async move {
                    let _ = stopped.await;
                })
                .await;
            if let Err(error) = served {
                tracing::error!(%error, "fake Telegram server failed");
            }
        });
        let webhooks = tokio::spawn(server::deliver_webhooks(Arc::clone(&inner)));
        FakeTelegram {
            inner,
            addr,
            token: self.token,
            wait_timeout: self.wait_timeout,
            faults,
            shutdown: Some(shutdown),
            _server: server,
            webhooks,
        }
    }
}

/// A running fake Telegram Bot API server. Dropping it shuts it down:
/// waiting long polls return, the port closes, webhook delivery stops.
pub struct FakeTelegram {
    inner: Arc<Inner>,
    addr: SocketAddr,
    token: String,
    wait_timeout: Duration,
    faults: Arc<FaultPlan>,
    shutdown: Option<oneshot::Sender<()>>,
    /// Ends by itself after `shutdown` (graceful: in-flight requests finish).
    _server: JoinHandle<()>,
    webhooks: JoinHandle<()>,
}

impl fmt::Debug for FakeTelegram {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FakeTelegram")
            .field("api_url", &self.api_url())
            .finish_non_exhaustive()
    }
}

impl Drop for FakeTelegram {
    fn drop(&mut self) {
        self.inner.mutate(|state| state.closed = true);
        if let Some(shutdown) = self.shutdown.take() {
            let _ = shutdown.send(());
        }
        self.webhooks.abort();
    }
}

/// Starting, addressing.
impl FakeTelegram {
    /// A fake with the defaults: token [`TOKEN`], no rate limits.
    pub async fn start() -> FakeTelegram {
        FakeTelegram::builder().start().await
    }

    /// Options before starting.
    pub fn builder() -> FakeTelegramBuilder {
        FakeTelegramBuilder::default()
    }

    /// The base URL for `Bot::set_api_url`, e.g. `http://127.0.0.1:40123/`.
    pub fn api_url(&self) -> String {
        format!("http://{}/", self.addr)
    }

    /// The address served.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The accepted token.
    pub fn token(&self) -> &str {
        &self.token
    }

    /// The bot's own user (as `getMe` returns it).
    pub fn bot_user(&self) -> User {
        self.inspect(|state| state.bot_user().clone())
    }

    /// Changes the rate limits from now on.
    pub fn set_rate_limits(&self, limits: RateLimits) {
        self.inner.mutate(|state| state.set_rate_limits(limits));
    }

    /// Changes the injected faults from now on (see [`crate::faults`]).
    pub fn set_faults(&self, faults: Faults) {
        self.faults.set(faults);
    }

    /// The faults injected so far.
    pub fn fault_counts(&self) -> FaultCounts {
        self.faults.counts()
    }
}

/// Reading the state.
impl FakeTelegram {
    /// Runs `read` on the current state.
    pub fn inspect<T>(&self, read: impl FnOnce(&State) -> T) -> T {
        read(&self.inner.lock())
    }

    /// Every request answered so far, in order.
    pub fn calls(&self) -> Vec<Call> {
        self.inspect(|state| state.calls().to_vec())
    }

    /// The calls to `method` (any case, e.g. `"sendMessage"`).
    pub fn calls_to(&self, method: &str) -> Vec<Call> {
        self.inspect(|state| state.calls_to(method).into_iter().cloned().collect())
    }

    /// One message as it is now.
    pub fn message(&self, chat_id: i64, message_id: i32) -> Option<StoredMessage> {
        self.inspect(|state| state.message(chat_id, message_id).cloned())
    }

    /// A message as the Bot API would render it now (the JSON Message).
    pub fn message_json(&self, chat_id: i64, message_id: i32) -> Option<Value> {
        self.inspect(|state| state.message_json(chat_id, message_id))
    }

    /// The messages of a chat, by id.
    pub fn messages_in(&self, chat_id: i64) -> Vec<StoredMessage> {
        self.inspect(|state| state.messages_in(chat_id).into_iter().cloned().collect())
    }

    /// The bot's successfully sent messages, in sending order, as they are
    /// now.
    pub fn sent_messages(&self) -> Vec<StoredMessage> {
        self.inspect(|state| state.sent_messages().into_iter().cloned().collect())
    }

    /// How the bot answered callback query `id`; `None` if not (yet).
    pub fn callback_answer(&self, id: &str) -> Option<CallbackAnswer> {
        self.inspect(|state| state.callback_answer(id).cloned())
    }

    /// How many `429 Too Many Requests` were returned.
    pub fn rate_limited_count(&self) -> usize {
        self.inspect(State::rate_limited_count)
    }

    /// The webhook, if set.
    pub fn webhook(&self) -> Option<WebhookConfig> {
        self.inspect(|state| state.webhook().cloned())
    }

    /// Every webhook POST attempt, in order.
    pub fn webhook_deliveries(&self) -> Vec<WebhookDelivery> {
        self.inspect(|state| state.webhook_deliveries().to_vec())
    }

    /// Updates not yet confirmed or delivered, oldest first.
    pub fn pending_updates(&self) -> Vec<Value> {
        self.inspect(|state| state.pending_updates().into_iter().cloned().collect())
    }
}

/// Waiting, without sleeps: each condition is re-checked after every change
/// to the state.
impl FakeTelegram {
    /// Waits until `check` returns `Some`, re-checking after every change
    /// (a call answered, an update injected or consumed, a webhook
    /// attempt…), and returns its value.
    ///
    /// `check` runs with the state locked: it must not call this
    /// `FakeTelegram`'s methods (that would deadlock); read the `State`
    /// instead.
    ///
    /// # Panics
    /// After the wait timeout (20 s by default), naming `what` and listing
    /// the calls so far.
    pub async fn wait_for<T>(&self, what: &str, check: impl FnMut(&State) -> Option<T>) -> T {
        let timeout = self.wait_timeout;
        self.inner
            .wait_for(timeout, check, |state| {
                format!(
                    "FakeTelegram: gave up after {timeout:?} waiting for {what}\ncalls so far:\n{}",
                    state.describe_calls()
                )
            })
            .await
    }

    /// Waits for a call to `method` (any case) for which `matches` holds,
    /// looking at the whole log (earlier calls count), and returns it.
    pub async fn wait_for_call(
        &self,
        method: &str,
        mut matches: impl FnMut(&Call) -> bool,
    ) -> Call {
        let what = format!("a matching call to {method}");
        self.wait_for(&what, |state| {
            state
                .calls_to(method)
                .into_iter()
                .find(|call| matches(call))
                .cloned()
        })
        .await
    }

    /// Waits until the bot has sent at least `count` messages and returns
    /// the first `count`, as they are now.
    pub async fn wait_for_sends(&self, count: usize) -> Vec<StoredMessage> {
        let what = format!("{count} sent message(s)");
        self.wait_for(&what, |state| {
            (state.sent_count() >= count).then(|| {
                state
                    .sent_messages()
                    .into_iter()
                    .take(count)
                    .cloned()
                    .collect()
            })
        })
        .await
    }

    /// Waits until callback query `id` is answered and returns the answer.
    pub async fn wait_for_callback_answer(&self, id: &str) -> CallbackAnswer {
        let what = format!("an answer to callback query {id}");
        self.wait_for(&what, |state| state.callback_answer(id).cloned())
            .await
    }

    /// Waits until a `getUpdates` handed out the update holding `text`
    /// (a callback query id, say) and the bot polled again; returns that
    /// next poll's `offset`: the update's own id when the bot did not
    /// confirm it.
    pub async fn wait_for_poll_after(&self, text: &str) -> Option<i64> {
        let handed_out = self
            .wait_for(&format!("an update holding {text:?} handed out"), |state| {
                state
                    .calls_to("getUpdates")
                    .iter()
                    .position(|call| call.response.to_string().contains(text))
            })
            .await;
        self.wait_for("the next getUpdates", |state| {
            state
                .calls_to("getUpdates")
                .get(handed_out + 1)
                .map(|call| call.params["offset"].as_i64())
        })
        .await
    }

    /// Waits until every update was confirmed (`getUpdates` offset) or
    /// delivered (webhook 2xx).
    pub async fn wait_for_updates_consumed(&self) {
        self.wait_for("all updates confirmed or delivered", |state| {
            state.pending_updates().is_empty().then_some(())
        })
        .await;
    }
}

/// Acting as Telegram's users.
impl FakeTelegram {
    /// Registers `chat` (or updates its details); chats are also registered
    /// when written in.
    pub fn add_chat(&self, chat: &Chat) {
        self.inner.mutate(|state| state.upsert_chat(chat));
    }

    /// The user blocked the bot: `sendMessage` and edits in `chat_id` get
    /// `403 Forbidden: bot was blocked by the user` (teloxide:
    /// `ApiError::BotBlocked`).
    pub fn mark_blocked(&self, chat_id: i64) {
        self.inner
            .mutate(|state| state.set_chat_status(chat_id, ChatStatus::Blocked));
    }

    /// The chat does not exist for the bot: `sendMessage` and edits get
    /// `400 Bad Request: chat not found` (teloxide: `ApiError::ChatNotFound`).
    pub fn mark_unknown(&self, chat_id: i64) {
        self.inner
            .mutate(|state| state.set_chat_status(chat_id, ChatStatus::Unknown));
    }

    /// Undoes [`mark_blocked`](Self::mark_blocked) and
    /// [`mark_unknown`](Self::mark_unknown).
    pub fn mark_reachable(&self, chat_id: i64) {
        self.inner
            .mutate(|state| state.set_chat_status(chat_id, ChatStatus::Reachable));
    }

    /// Opens a topic in a forum supergroup (the bot's creation service
    /// message, like `createForumTopic`); returns its `message_thread_id`.
    /// No update is queued.
    ///
    /// # Panics
    /// If the chat is not a forum.
    pub fn create_forum_topic(&self, chat: &Chat, name: &str) -> i32 {
        self.inner
            .mutate(|state| state.create_forum_topic(chat, name))
    }

    /// A user writes a text message: it is stored in the chat (taking the
    /// next message id) and queued as a `message` update. Returns the
    /// message id.
    ///
    /// # Panics
    /// If it replies to a message that does not exist, or names a topic
    /// that does not exist.
    pub fn inject_message(&self, message: IncomingMessage) -> i32 {
        self.inner.mutate(|state| state.inject_message(message).0)
    }

    /// `from` presses a callback button of message `message_id` in
    /// `chat_id`: queues a `callback_query` update whose `message` is the
    /// stored message (with its current keyboard). Returns the query id,
    /// which `answerCallbackQuery` must then answer once. The data is not
    /// checked against the keyboard (clients can send any); see
    /// [`press_button`](Self::press_button) for a checked press.
    ///
    /// # Panics
    /// If the message does not exist.
    pub fn inject_callback(
        &self,
        from: &User,
        chat_id: i64,
        message_id: i32,
        data: &str,
    ) -> String {
        self.inner
            .mutate(|state| state.inject_callback(from, chat_id, message_id, data).0)
    }

    /// `from` presses the button labelled `button_text` of message
    /// `message_id`: [`inject_callback`](Self::inject_callback) with that
    /// button's `callback_data`. Returns the query id.
    ///
    /// # Panics
    /// If the message has no callback button with that label.
    pub fn press_button(
        &self,
        from: &User,
        chat_id: i64,
        message_id: i32,
        button_text: &str,
    ) -> String {
        self.inner
            .mutate(|state| press(state, from, chat_id, message_id, button_text))
    }

    /// Queues several updates at once, in order, so that the bot's next
    /// `getUpdates` returns them in one batch (as Telegram does with what
    /// arrived while the bot was busy). Returns what `build` returns.
    pub fn in_one_batch<T>(&self, build: impl FnOnce(&mut Batch<'_>) -> T) -> T {
        self.inner.mutate(|state| build(&mut Batch { state }))
    }

    /// Queues any update, given without `update_id` (e.g.
    /// `{"edited_message": {…}}`); returns the `update_id` it got.
    ///
    /// # Panics
    /// If `update` is not a JSON object.
    pub fn inject_update(&self, update: Value) -> i64 {
        self.inner.mutate(|state| state.inject_raw(update))
    }
}

/// Updates queued together ([`FakeTelegram::in_one_batch`]).
#[derive(Debug)]
pub struct Batch<'a> {
    state: &'a mut State,
}

impl Batch<'_> {
    /// [`FakeTelegram::inject_message`], in the batch.
    pub fn message(&mut self, message: IncomingMessage) -> i32 {
        self.state.inject_message(message).0
    }

    /// [`FakeTelegram::press_button`], in the batch: the button as the
    /// message shows it now (presses earlier in the batch have not been
    /// seen by the bot yet).
    pub fn press(
        &mut self,
        from: &User,
        chat_id: i64,
        message_id: i32,
        button_text: &str,
    ) -> String {
        press(self.state, from, chat_id, message_id, button_text)
    }
}

fn press(
    state: &mut State,
    from: &User,
    chat_id: i64,
    message_id: i32,
    button_text: &str,
) -> String {
    let message = state
        .message(chat_id, message_id)
        .unwrap_or_else(|| panic!("press_button: no message {message_id} in chat {chat_id}"));
    let data = message.callback_data(button_text).unwrap_or_else(|| {
        panic!(
            "press_button: message {message_id} in chat {chat_id} has no callback \
             button {button_text:?}; its buttons: {:?}",
            message.button_texts()
        )
    });
    state.inject_callback(from, chat_id, message_id, &data).0
}

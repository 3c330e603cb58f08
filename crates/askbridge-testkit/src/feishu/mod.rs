//! A fake of Feishu / Lark's Open API — tokens, the bot, sending, replying
//! to and patching messages, the long connection, and HTTP callbacks —
//! served on `127.0.0.1`, for end-to-end tests of a Feishu client without
//! the internet.
//!
//! [`FakeFeishu::start`] binds a free port; [`FakeFeishu::api_url`] is the
//! base URL (`http://127.0.0.1:PORT`) to which a client appends
//! `/open-apis/…` and `/callback/ws/endpoint`, as it would to
//! `https://open.feishu.cn`. The app's credentials are [`APP_ID`] and
//! [`APP_SECRET`] unless the builder says otherwise.
//!
//! ```no_run
//! # async fn demo() {
//! use askbridge_testkit::feishu::FakeFeishu;
//!
//! let fake = FakeFeishu::start().await;
//! fake.add_chat("oc_general", "general");
//! let alice = fake.add_user("ou_alice", "Alice");
//! // … the app connects, sends a card with a button named "yes" …
//! let card = fake.wait_for_bot_messages(1).await.remove(0);
//! let outcome = fake.press(&card.message_id, &alice.open_id, "yes").await;
//! assert!(outcome.succeeded());
//! # }
//! ```
//!
//! # Open API
//!
//! Answers are Feishu's: `{"code": 0, "msg": "success", "data": {…}}`, or
//! `{"code": N, "msg": "…"}` with Feishu's HTTP status. Every call is
//! recorded ([`Call`]).
//!
//! - `POST /open-apis/auth/v3/tenant_access_token/internal`:
//!   `tenant_access_token` (`t-…`) and `expire` at the top level. A token
//!   with more than 30 minutes left is handed out again, otherwise a new
//!   one ([`FakeFeishuBuilder::token_lifetime`]; old tokens stay valid
//!   until they expire). Wrong secret: `400` / `10014`.
//! - Every other `/open-apis/` endpoint wants `Authorization: Bearer
//!   <token>`: none → `400` / `99991661`; unknown or expired (see
//!   [`FakeFeishu::expire_tokens`]) → `400` / `99991663`.
//! - `GET /open-apis/bot/v3/info`: `bot` at the top level.
//! - `POST /open-apis/im/v1/messages?receive_id_type=chat_id|open_id|user_id|union_id`
//!   (`text` or `interactive`): to an `open_id`, the bot's p2p chat with
//!   the user, made on first use. Missing fields → `99992402` with
//!   `error.field_violations`; chat unknown, disbanded or without the bot
//!   → `230002`; unknown user → `230013`; content that is not JSON, a text
//!   without `text` or another `msg_type` → `230001`; a card the fake
//!   refuses → `230099` naming the path; text over 150 KB or a card over
//!   30 KB → `230025`. The same `uuid` within an hour answers the message
//!   already sent.
//! - `POST /open-apis/im/v1/messages/{message_id}/reply`: the same, in the
//!   parent's chat, with `root_id`, `parent_id` (and `thread_id` with
//!   `reply_in_thread`). Unknown parent → `230001`; recalled → `230011`.
//! - `PATCH /open-apis/im/v1/messages/{message_id}`: a new version of a
//!   card the bot sent (every version is kept: [`StoredMessage::versions`]).
//!   A text message → `230001`; a user's message → `230012`.
//! - `POST /open-apis/ephemeral/v1/send`: an `interactive` card only one
//!   person (`open_id`) of a group the bot is in sees ([`Ephemeral`],
//!   [`FakeFeishu::wait_for_ephemerals`]); a missing field → `99992402`,
//!   a private chat or an unknown person → `230001`.
//!
//! Cards are checked as card JSON 2.0 for the elements the fake knows (see
//! [`card`-checks](#cards)). Rate limits are off unless asked for
//! ([`RateLimits`]).
//!
//! # Long connection
//!
//! `POST /callback/ws/endpoint` (`{"AppID", "AppSecret"}`) answers a
//! single-use `ws://…/ws/v2?…&service_id=…&ticket=…` URL and the
//! `ClientConfig` ([`ClientConfig`]); wrong credentials → `10014`. The
//! WebSocket carries binary protobuf frames ([`Frame`]): pings (`type:
//! ping`) are answered with pongs carrying the `ClientConfig` JSON; events
//! and card callbacks go out as data frames (`type`, `message_id`,
//! `trace_id`, `sum: 1`, `seq: 0`, `timestamp` headers; the JSON as
//! payload) on one open connection; the app answers with the same frame
//! (plus `biz_rt`) and the payload `{"code": 200, "headers": {}, "data":
//! base64(body)}`. Pushes made while no connection is open wait for one
//! (card callbacks only for the callback timeout). At most 50 connections
//! (more are refused with `Handshake-Status: 514`).
//!
//! # HTTP callbacks
//!
//! With a callback URL ([`FakeFeishuBuilder::callback_url`],
//! [`FakeFeishu::set_callback_url`]), events and card callbacks are POSTed
//! there instead. With an encrypt key (the default, [`ENCRYPT_KEY`]) the
//! body is `{"encrypt": base64(iv ‖ AES-256-CBC(json))}` keyed with
//! SHA-256 of the key, signed in `X-Lark-Signature` (hex SHA-256 of
//! timestamp + nonce + key + body) with `X-Lark-Request-Timestamp` and
//! `X-Lark-Request-Nonce`; without one, plain JSON, unsigned.
//! [`FakeFeishu::url_verification`] and [`FakeFeishu::send_forged`] test
//! the app's checks.
//!
//! # Users acting
//!
//! [`FakeFeishu::send_text`] (an `im.message.receive_v1` event; `@bot`
//! becomes a mention), [`FakeFeishu::press`], [`FakeFeishu::submit_form`]
//! and [`FakeFeishu::select`] (`card.action.trigger` callbacks, read from
//! the card's latest version). A callback's answer must come within the
//! callback timeout (3 s), with status 200, and be `{}` or `{"toast": …,
//! "card": {"type": "raw", "data": …}}`; otherwise the user sees Feishu's
//! error ([`CallbackOutcome::failure`]). A `card` in the answer replaces
//! the message's card (a new version). Every push and each delivery's
//! answer and latency are recorded ([`Push`]); events can be delivered
//! again ([`FakeFeishu::redeliver`]), with the same `event_id`.
//!
//! # Cards
//!
//! `schema` `"2.0"`; `body.elements` of `markdown`, `div`, `hr`,
//! `column_set`, `button`, `form`, `input`, `select_static`,
//! `multi_select_static` and `checker`; buttons with non-empty text, a
//! known `type` and `behaviors` of `callback` (object or string value) or
//! `open_url`; forms named, not nested, with a submit button; inputs named,
//! in a form or with behaviors, `max_length` 1–1000; selects named with
//! unique option values; names unique in the card; `config.update_multi`
//! absent or true.
//!
//! # Deliberate differences
//!
//! Only `text` and `interactive` messages; only the card elements above
//! (Feishu has many more, and also accepts card JSON 1.0); sizes are
//! counted on the `content` string; card contents are answered as sent
//! (Feishu answers a rendering). In groups, events are pushed only for
//! messages that mention the bot, unless
//! [`FakeFeishuBuilder::receive_all_group_messages`] (Feishu's
//! `im:message.group_msg` permission). Events are never redelivered by
//! themselves, only with [`FakeFeishu::redeliver`]. The delayed card
//! update API (`/open-apis/interactive/v1/card/update`) is not served.
//! Card callbacks go out on the long connection with frame `type` `event`
//! (what Feishu's Go and Node SDKs dispatch; see
//! [`FakeFeishuBuilder::card_frame_type`]).

mod card;
mod crypto;
pub mod frame;
mod model;
mod rate;
mod server;
mod socket;
mod state;
mod util;
mod webhook;

use std::fmt;
use std::net::SocketAddr;
use std::pin::pin;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

pub use crypto::{NONCE_HEADER, SIGNATURE_HEADER, TIMESTAMP_HEADER};
pub use frame::{Frame, Header};
pub use model::{
    Answer, Call, CallbackOutcome, Chat, ChatType, ConnectionStats, Delivery, EditSource, Forgery,
    HttpDelivery, Push, PushKind, Sender, SentText, StoredMessage, User, Verification, Version,
    Via,
};
pub use rate::RateLimits;
pub use state::{Ephemeral, State};

use crate::faults::{self, FaultCounts, FaultPlan, Faults};
use server::Inner;
use socket::End;
use state::{Act, Config, Plan};
use util::random_hex;

/// The app's id (`cli_…`).
pub const APP_ID: &str = "cli_a5fake0a5kb0001";

/// The app's secret.
pub const APP_SECRET: &str = "askbridgeFakeFeishuAppSecret0001";

/// The verification token Feishu puts in callbacks' `header.token`.
pub const VERIFICATION_TOKEN: &str = "askbridgeFakeVerificationTok001";

/// The encrypt key callbacks are encrypted and signed with (unless the
/// builder removes it).
pub const ENCRYPT_KEY: &str = "askbridgeFakeEncryptKey000000001";

/// The tenant's key.
pub const TENANT_KEY: &str = "736588c9260f175e";

/// The bot's name (`app_name` of `bot/v3/info`).
pub const BOT_NAME: &str = "askbridge";

/// The bot's `open_id`.
pub const BOT_OPEN_ID: &str = "ou_b07a5kb41d9e0000000000000000b07";

/// The bot's `union_id`.
pub const BOT_UNION_ID: &str = "on_b07a5kb41d9e0000000000000000b07";

/// How long a tenant access token lives by default (Feishu: 2 hours).
pub const TOKEN_LIFETIME: Duration = Duration::from_secs(7200);

/// How long Feishu waits for the answer to a push (3 seconds).
pub const CALLBACK_TIMEOUT: Duration = Duration::from_secs(3);

/// How long [`FakeFeishu::wait_for`] waits before failing the test.
pub const DEFAULT_WAIT_TIMEOUT: Duration = Duration::from_secs(20);

/// The most bytes of a text message's `content` (150 KB).
pub const MAX_TEXT_BYTES: usize = 150 * 1024;

/// The most bytes of a card's `content` (30 KB).
pub const MAX_CARD_BYTES: usize = 30 * 1024;

/// How long a `uuid` makes sending idempotent (1 hour).
pub const UUID_WINDOW: Duration = Duration::from_secs(3600);

/// The `ClientConfig` the long connection's endpoint and pongs hand out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClientConfig {
    /// `ReconnectCount` (-1: forever).
    pub reconnect_count: i64,
    /// `ReconnectInterval`, seconds.
    pub reconnect_interval: u64,
    /// `ReconnectNonce`: the most seconds of random delay before the first
    /// reconnection.
    pub reconnect_nonce: u64,
    /// `PingInterval`, seconds.
    pub ping_interval: u64,
}

impl Default for ClientConfig {
    /// Feishu's: reconnect forever every 120 s after up to 30 s, ping
    /// every 120 s.
    fn default() -> Self {
        ClientConfig {
            reconnect_count: -1,
            reconnect_interval: 120,
            reconnect_nonce: 30,
            ping_interval: 120,
        }
    }
}

impl ClientConfig {
    /// `{"ReconnectCount", "ReconnectInterval", "ReconnectNonce",
    /// "PingInterval"}`.
    pub fn to_json(&self) -> Value {
        json!({
            "ReconnectCount": self.reconnect_count,
            "ReconnectInterval": self.reconnect_interval,
            "ReconnectNonce": self.reconnect_nonce,
            "PingInterval": self.ping_interval,
        })
    }
}

/// The frame `type` header of card callbacks on the long connection.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum CardFrameType {
    /// `event`: `card.action.trigger` arrives like events (what Feishu's Go
    /// and Node SDKs dispatch, and answer with the handler's result).
    #[default]
    Event,
    /// `card`.
    Card,
}

/// Options for a [`FakeFeishu`].
///
/// ```no_run
/// # async fn demo() {
/// use std::time::Duration;
/// use askbridge_testkit::feishu::{FakeFeishu, RateLimits};
/// let fake = FakeFeishu::builder()
///     .token_lifetime(Duration::from_secs(5))
///     .rate_limits(RateLimits::feishu())
///     .no_encrypt_key()
///     .start()
///     .await;
/// # let _ = fake;
/// # }
/// ```
#[derive(Debug, Clone)]
pub struct FakeFeishuBuilder {
    app_id: String,
    app_secret: String,
    bot_name: String,
    verification_token: String,
    encrypt_key: Option<String>,
    token_lifetime: Duration,
    client_config: ClientConfig,
    callback_timeout: Duration,
    wait_timeout: Duration,
    rate_limits: RateLimits,
    faults: Faults,
    callback_url: Option<String>,
    card_frame_type: CardFrameType,
    all_group_messages: bool,
}

impl Default for FakeFeishuBuilder {
    fn default() -> Self {
        FakeFeishuBuilder {
            app_id: APP_ID.to_owned(),
            app_secret: APP_SECRET.to_owned(),
            bot_name: BOT_NAME.to_owned(),
            verification_token: VERIFICATION_TOKEN.to_owned(),
            encrypt_key: Some(ENCRYPT_KEY.to_owned()),
            token_lifetime: TOKEN_LIFETIME,
            client_config: ClientConfig::default(),
            callback_timeout: CALLBACK_TIMEOUT,
            wait_timeout: DEFAULT_WAIT_TIMEOUT,
            rate_limits: RateLimits::off(),
            faults: Faults::NONE,
            callback_url: None,
            card_frame_type: CardFrameType::default(),
            all_group_messages: false,
        }
    }
}

impl FakeFeishuBuilder {
    /// The app's id (default [`APP_ID`]).
    #[must_use]
    pub fn app_id(mut self, app_id: impl Into<String>) -> Self {
        self.app_id = app_id.into();
        self
    }

    /// The app's secret (default [`APP_SECRET`]).
    #[must_use]
    pub fn app_secret(mut self, secret: impl Into<String>) -> Self {
        self.app_secret = secret.into();
        self
    }

    /// The bot's name (default [`BOT_NAME`]).
    #[must_use]
    pub fn bot_name(mut self, name: impl Into<String>) -> Self {
        self.bot_name = name.into();
        self
    }

    /// The verification token (default [`VERIFICATION_TOKEN`]).
    #[must_use]
    pub fn verification_token(mut self, token: impl Into<String>) -> Self {
        self.verification_token = token.into();
        self
    }

    /// The encrypt key (default [`ENCRYPT_KEY`]).
    #[must_use]
    pub fn encrypt_key(mut self, key: impl Into<String>) -> Self {
        self.encrypt_key = Some(key.into());
        self
    }

    /// No encrypt key: callbacks are plain JSON and unsigned.
    #[must_use]
    pub fn no_encrypt_key(mut self) -> Self {
        self.encrypt_key = None;
        self
    }

    /// How long tenant access tokens live (default [`TOKEN_LIFETIME`]);
    /// short lifetimes test a client's refreshing.
    #[must_use]
    pub fn token_lifetime(mut self, lifetime: Duration) -> Self {
        self.token_lifetime = lifetime;
        self
    }

    /// The long connection's `ClientConfig` (default Feishu's).
    #[must_use]
    pub fn client_config(mut self, config: ClientConfig) -> Self {
        self.client_config = config;
        self
    }

    /// `PingInterval` of the `ClientConfig`, in seconds.
    #[must_use]
    pub fn ping_interval(mut self, seconds: u64) -> Self {
        self.client_config.ping_interval = seconds;
        self
    }

    /// How long Feishu waits for the answer to a push (default
    /// [`CALLBACK_TIMEOUT`]).
    #[must_use]
    pub fn callback_timeout(mut self, timeout: Duration) -> Self {
        self.callback_timeout = timeout;
        self
    }

    /// How long `wait_for` and friends wait before panicking (default
    /// [`DEFAULT_WAIT_TIMEOUT`]).
    #[must_use]
    pub fn wait_timeout(mut self, timeout: Duration) -> Self {
        self.wait_timeout = timeout;
        self
    }

    /// Faults injected into the API's requests (default:
    /// [`Faults::NONE`]).
    #[must_use]
    pub fn faults(mut self, faults: Faults) -> Self {
        self.faults = faults;
        self
    }

    /// Rate limits (default [`RateLimits::off`]).
    #[must_use]
    pub fn rate_limits(mut self, limits: RateLimits) -> Self {
        self.rate_limits = limits;
        self
    }

    /// POST events and card callbacks to `url` (HTTP callback mode)
    /// instead of the long connection.
    #[must_use]
    pub fn callback_url(mut self, url: impl Into<String>) -> Self {
        self.callback_url = Some(url.into());
        self
    }

    /// The frame `type` of card callbacks on the long connection (default
    /// [`CardFrameType::Event`]).
    #[must_use]
    pub fn card_frame_type(mut self, frame_type: CardFrameType) -> Self {
        self.card_frame_type = frame_type;
        self
    }

    /// Whether the app gets every group message (Feishu's
    /// `im:message.group_msg` permission) rather than only those that
    /// mention the bot (default false).
    #[must_use]
    pub fn receive_all_group_messages(mut self, all: bool) -> Self {
        self.all_group_messages = all;
        self
    }

    /// Binds `127.0.0.1:0` and serves in background tasks of the current
    /// tokio runtime.
    ///
    /// # Panics
    /// If no port can be bound.
    pub async fn start(self) -> FakeFeishu {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("FakeFeishu: bind 127.0.0.1:0");
        let addr = listener.local_addr().expect("FakeFeishu: local address");
        let config = Config {
            app_id: self.app_id,
            app_secret: self.app_secret,
            bot_name: self.bot_name,
            bot_open_id: BOT_OPEN_ID.to_owned(),
            bot_union_id: BOT_UNION_ID.to_owned(),
            verification_token: self.verification_token,
            encrypt_key: self.encrypt_key,
            token_lifetime: self.token_lifetime,
            client_config: self.client_config,
            callback_timeout: self.callback_timeout,
            rate_limits: self.rate_limits,
            callback_url: self.callback_url,
            card_frame_type: self.card_frame_type,
            all_group_messages: self.all_group_messages,
            ws_base: format!("ws://{addr}"),
        };
        let inner = Arc::new(Inner::new(State::new(config)));
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
                tracing::error!(%error, "fake Feishu server failed");
            }
        });
        let timers = tokio::spawn(expire_overdue(Arc::clone(&inner)));
        let client = reqwest::Client::builder()
            .no_proxy()
            .build()
            .expect("FakeFeishu: HTTP client");
        FakeFeishu {
            inner,
            addr,
            wait_timeout: self.wait_timeout,
            faults,
            client,
            shutdown: Some(shutdown),
            _server: server,
            _timers: timers,
        }
    }
}

/// Settles pushes whose answer did not come in time, woken by the next
/// deadline or any change; ends when the fake does.
async fn expire_overdue(inner: Arc<Inner>) {
    loop {
        let mut changed = pin!(inner.changed.notified());
        changed.as_mut().enable();
        let (closed, deadline) = {
            let state = inner.lock();
            (state.closed, state.next_deadline())
        };
        if closed {
            return;
        }
        let Some(deadline) = deadline else {
            changed.await;
            continue;
        };
        tokio::select! {
            () = &mut changed => {}
            () = tokio::time::sleep_until(deadline.into()) => {
                let now = Instant::now().max(deadline);
                inner.mutate_if(|state| ((), state.expire_overdue(now)));
            }
        }
    }
}

/// A running fake Feishu. Dropping it shuts it down: connections are
/// dropped, the port closes.
pub struct FakeFeishu {
    inner: Arc<Inner>,
    addr: SocketAddr,
    faults: Arc<FaultPlan>,
    wait_timeout: Duration,
    client: reqwest::Client,
    shutdown: Option<oneshot::Sender<()>>,
    /// Ends by itself after `shutdown`.
    _server: JoinHandle<()>,
    /// Ends by itself when the state is closed.
    _timers: JoinHandle<()>,
}

impl fmt::Debug for FakeFeishu {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FakeFeishu")
            .field("api_url", &self.api_url())
            .finish_non_exhaustive()
    }
}

impl Drop for FakeFeishu {
    fn drop(&mut self) {
        self.inner.mutate(|state| state.closed = true);
        if let Some(shutdown) = self.shutdown.take() {
            let _ = shutdown.send(());
        }
    }
}

/// Starting, addressing, settings.
impl FakeFeishu {
    /// A fake with the defaults: [`APP_ID`] and [`APP_SECRET`], the
    /// [`ENCRYPT_KEY`], no rate limits, Feishu's time limits, the long
    /// connection for pushes.
    pub async fn start() -> FakeFeishu {
        FakeFeishu::builder().start().await
    }

    /// Options before starting.
    pub fn builder() -> FakeFeishuBuilder {
        FakeFeishuBuilder::default()
    }

    /// The base URL, `http://127.0.0.1:PORT` (a client appends
    /// `/open-apis/…`, as to `https://open.feishu.cn`).
    pub fn api_url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// The address served.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The app's id.
    pub fn app_id(&self) -> String {
        self.inspect(|state| state.config.app_id.clone())
    }

    /// The app's secret.
    pub fn app_secret(&self) -> String {
        self.inspect(|state| state.config.app_secret.clone())
    }

    /// The verification token.
    pub fn verification_token(&self) -> String {
        self.inspect(|state| state.config.verification_token.clone())
    }

    /// The encrypt key, if any.
    pub fn encrypt_key(&self) -> Option<String> {
        self.inspect(|state| state.config.encrypt_key.clone())
    }

    /// The bot's `open_id`.
    pub fn bot_open_id(&self) -> String {
        self.inspect(|state| state.config.bot_open_id.clone())
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

    /// POSTs later pushes to `url` (HTTP callback mode), or with `None`
    /// sends them on the long connection.
    pub fn set_callback_url(&self, url: Option<&str>) {
        self.inner
            .mutate(|state| state.set_callback_url(url.map(str::to_owned)));
    }

    /// Makes every token handed out so far invalid (`99991663`), as if
    /// they expired.
    pub fn expire_tokens(&self) {
        self.inner
            .mutate(|state| state.expire_tokens(Instant::now()));
    }
}

/// Setting the tenant up.
impl FakeFeishu {
    /// Adds (or replaces) a user; `union_id` and `user_id` are derived.
    pub fn add_user(&self, open_id: &str, name: &str) -> User {
        let user = User::new(open_id, name);
        self.inner.mutate(|state| state.add_user(user.clone()));
        user
    }

    /// Adds a group chat with the bot in it.
    pub fn add_chat(&self, chat_id: &str, name: &str) -> Chat {
        let chat = Chat {
            chat_id: chat_id.to_owned(),
            name: name.to_owned(),
            chat_type: ChatType::Group,
            bot_member: true,
            deleted: false,
        };
        self.inner.mutate(|state| state.add_chat(chat.clone()));
        chat
    }

    /// The bot leaves a chat: sending there answers `230002`.
    ///
    /// # Panics
    /// If there is no such chat.
    pub fn remove_bot_from(&self, chat_id: &str) {
        let known = self
            .inner
            .mutate(|state| state.set_bot_member(chat_id, false));
        assert!(known, "FakeFeishu::remove_bot_from: no chat {chat_id}");
    }

    /// The bot joins a chat again.
    ///
    /// # Panics
    /// If there is no such chat.
    pub fn add_bot_to(&self, chat_id: &str) {
        let known = self
            .inner
            .mutate(|state| state.set_bot_member(chat_id, true));
        assert!(known, "FakeFeishu::add_bot_to: no chat {chat_id}");
    }

    /// Disbands a chat: sending, replying and patching there answer
    /// `230002`.
    ///
    /// # Panics
    /// If there is no such chat.
    pub fn delete_chat(&self, chat_id: &str) {
        let known = self.inner.mutate(|state| state.delete_chat(chat_id));
        assert!(known, "FakeFeishu::delete_chat: no chat {chat_id}");
    }

    /// The bot's p2p chat with user `open_id`, made on first use.
    pub fn p2p_chat(&self, open_id: &str) -> String {
        self.inner.mutate(|state| state.p2p_chat(open_id))
    }

    /// Recalls a message: replying to it or patching it answers `230011`.
    ///
    /// # Panics
    /// If there is no such message.
    pub fn recall(&self, message_id: &str) {
        let known = self.inner.mutate(|state| state.recall(message_id));
        assert!(known, "FakeFeishu::recall: no message {message_id}");
    }
}

/// Reading the state.
impl FakeFeishu {
    /// Runs `read` on the current state.
    pub fn inspect<T>(&self, read: impl FnOnce(&State) -> T) -> T {
        read(&self.inner.lock())
    }

    /// Every Open API call answered so far, in order.
    pub fn calls(&self) -> Vec<Call> {
        self.inspect(|state| state.calls().to_vec())
    }

    /// The calls whose path ends with `suffix` (`"/reply"`).
    pub fn calls_to(&self, suffix: &str) -> Vec<Call> {
        self.inspect(|state| state.calls_to(suffix).into_iter().cloned().collect())
    }

    /// A message, with all its versions.
    pub fn message(&self, message_id: &str) -> Option<StoredMessage> {
        self.inspect(|state| state.message(message_id).cloned())
    }

    /// The messages of a chat, replies included, in order.
    pub fn messages_in(&self, chat_id: &str) -> Vec<StoredMessage> {
        self.inspect(|state| state.messages_in(chat_id).into_iter().cloned().collect())
    }

    /// Every message the bot sent, in order.
    pub fn bot_messages(&self) -> Vec<StoredMessage> {
        self.inspect(|state| state.bot_messages().into_iter().cloned().collect())
    }

    /// Every push (event or card callback), in order.
    pub fn pushes(&self) -> Vec<Push> {
        self.inspect(|state| state.pushes().to_vec())
    }

    /// One push.
    pub fn push(&self, id: u64) -> Option<Push> {
        self.inspect(|state| state.push(id).cloned())
    }

    /// The long connection's counters.
    pub fn connection_stats(&self) -> ConnectionStats {
        self.inspect(|state| state.connection_stats().clone())
    }

    /// How many requests a rate limit refused.
    pub fn rate_limited_count(&self) -> usize {
        self.inspect(State::rate_limited_count)
    }
}

/// Waiting, without sleeps: each condition is re-checked after every change
/// to the state.
impl FakeFeishu {
    /// Waits until `check` returns `Some`, re-checking after every change
    /// (a call answered, a frame sent or received, an answer…), and
    /// returns its value.
    ///
    /// `check` runs with the state locked: it must not call this
    /// `FakeFeishu`'s methods (that would deadlock); read the `State`.
    ///
    /// # Panics
    /// After the wait timeout (20 s by default), naming `what` and listing
    /// the calls so far.
    pub async fn wait_for<T>(&self, what: &str, check: impl FnMut(&State) -> Option<T>) -> T {
        let timeout = self.wait_timeout;
        self.inner
            .wait_for(timeout, check, |state| {
                format!(
                    "FakeFeishu: gave up after {timeout:?} waiting for {what}\nlong connection: {:?}\n\
                     calls so far:\n{}",
                    state.connection_stats(),
                    state.describe_calls()
                )
            })
            .await
    }

    /// Waits for a call for which `matches` holds (earlier calls count).
    pub async fn wait_for_call(&self, mut matches: impl FnMut(&Call) -> bool) -> Call {
        self.wait_for("a matching call", |state| {
            state.calls().iter().find(|call| matches(call)).cloned()
        })
        .await
    }

    /// Waits until `open_id` was shown at least `count` cards only they
    /// see (`ephemeral/v1/send`).
    pub async fn wait_for_ephemerals(&self, open_id: &str, count: usize) -> Vec<Ephemeral> {
        let what = format!("{count} ephemeral card(s) for {open_id}");
        self.wait_for(&what, |state| {
            let shown = state.ephemerals_for(open_id);
            (shown.len() >= count).then(|| shown.into_iter().take(count).cloned().collect())
        })
        .await
    }

    /// Waits until the bot sent at least `count` messages; returns the
    /// first `count`.
    pub async fn wait_for_bot_messages(&self, count: usize) -> Vec<StoredMessage> {
        let what = format!("{count} bot message(s)");
        self.wait_for(&what, |state| {
            let messages = state.bot_messages();
            (messages.len() >= count).then(|| messages.into_iter().take(count).cloned().collect())
        })
        .await
    }

    /// Waits until `chat_id` has at least `count` messages; returns the
    /// first `count`.
    pub async fn wait_for_messages(&self, chat_id: &str, count: usize) -> Vec<StoredMessage> {
        let what = format!("{count} message(s) in {chat_id}");
        self.wait_for(&what, |state| {
            let messages = state.messages_in(chat_id);
            (messages.len() >= count).then(|| messages.into_iter().take(count).cloned().collect())
        })
        .await
    }

    /// Waits until message `message_id` was edited at least `count` times
    /// (patches and cards from callback answers).
    pub async fn wait_for_edits(&self, message_id: &str, count: usize) -> StoredMessage {
        let what = format!("{count} edit(s) of {message_id}");
        self.wait_for(&what, |state| {
            state
                .message(message_id)
                .filter(|message| message.edit_count() >= count)
                .cloned()
        })
        .await
    }

    /// Waits until `count` long connections were opened in all.
    pub async fn wait_for_connections(&self, count: usize) -> ConnectionStats {
        let what = format!("{count} long connection(s) opened");
        self.wait_for(&what, |state| {
            let stats = state.connection_stats();
            (stats.opened >= count).then(|| stats.clone())
        })
        .await
    }

    /// Waits until exactly `count` long connections are open.
    pub async fn wait_for_open_connections(&self, count: usize) -> ConnectionStats {
        let what = format!("{count} long connection(s) open");
        self.wait_for(&what, |state| {
            let stats = state.connection_stats();
            (stats.open == count).then(|| stats.clone())
        })
        .await
    }

    /// Waits until the last delivery of push `id` is finished (answered,
    /// failed, or timed out); returns the push.
    pub async fn wait_for_answer(&self, id: u64) -> Push {
        let what = format!("an answer to push {id}");
        self.wait_for(&what, |state| {
            state.push(id).filter(|push| push.settled()).cloned()
        })
        .await
    }
}

/// Acting as Feishu's users.
impl FakeFeishu {
    /// User `from` writes `text` in `chat_id` (a reply to `reply_to` if
    /// given); `@bot` in the text becomes a mention of the bot. The
    /// message is stored, and its `im.message.receive_v1` event pushed
    /// unless Feishu would not tell the app (a group message that does not
    /// mention the bot, see
    /// [`FakeFeishuBuilder::receive_all_group_messages`]).
    ///
    /// # Panics
    /// If the user or chat is unknown, the chat was disbanded, or
    /// `reply_to` is not a message of the chat.
    pub fn send_text(
        &self,
        chat_id: &str,
        from: &str,
        text: &str,
        reply_to: Option<&str>,
    ) -> SentText {
        let (message, push) = self.inner.mutate(|state| {
            let (message, payload) = state
                .user_message(chat_id, from, text, reply_to)
                .unwrap_or_else(|error| panic!("FakeFeishu::send_text: {error}"));
            let push = payload.map(|payload| state.new_push(PushKind::Event, payload));
            (message, push)
        });
        if let Some(push) = push {
            self.start_delivery(push);
        }
        SentText {
            message_id: message.message_id,
            chat_id: message.chat_id,
            push,
        }
    }

    /// Pushes any event: `{"schema": "2.0", "header": {… event_type …},
    /// "event": event}`. Returns the push.
    pub fn send_event(&self, event_type: &str, event: Value) -> u64 {
        let push = self.inner.mutate(|state| {
            let payload = state.event_payload(event_type, event);
            state.new_push(PushKind::Event, payload)
        });
        self.start_delivery(push);
        push
    }

    /// Delivers event `push` again (same payload, same `event_id`), as
    /// Feishu does when an event was not answered in time.
    ///
    /// # Panics
    /// If there is no such push, or it is a card callback (Feishu does not
    /// retry those).
    pub fn redeliver(&self, push: u64) {
        let kind = self.inspect(|state| state.push(push).map(|push| push.kind));
        match kind {
            Some(PushKind::Event) => self.start_delivery(push),
            Some(PushKind::CardCallback) => {
                panic!(
                    "FakeFeishu::redeliver: push {push} is a card callback; Feishu does not retry those"
                )
            }
            None => panic!("FakeFeishu::redeliver: no push {push}"),
        }
    }

    /// User `from` presses a button of the card in `message_id` (its
    /// latest version), found by `name` or by its text: a
    /// `card.action.trigger` callback with the button's callback `value`.
    /// Waits for the answer (at most the callback timeout) and returns
    /// what the user saw.
    ///
    /// # Panics
    /// If the user or message is unknown, the message is not a card, or
    /// the card has no such button (or it is disabled, in a form, or has
    /// no callback behavior).
    pub async fn press(&self, message_id: &str, from: &str, button: &str) -> CallbackOutcome {
        self.card_callback(message_id, from, Act::Press(button), "press")
            .await
    }

    /// User `from` fills in the form of button `submit_button` with
    /// `form_values` (field name → value: input → string, `select_static`
    /// → an option value, `multi_select_static` → an array of them,
    /// `checker` → bool) and presses it: `action.form_value`,
    /// `action.name` and the button's callback `value`.
    ///
    /// # Panics
    /// As [`press`](Self::press), and if a value does not fit its field, a
    /// field is unknown, or a required field is missing.
    pub async fn submit_form(
        &self,
        message_id: &str,
        from: &str,
        submit_button: &str,
        form_values: Value,
    ) -> CallbackOutcome {
        let act = Act::Submit {
            button: submit_button,
            values: &form_values,
        };
        self.card_callback(message_id, from, act, "submit_form")
            .await
    }

    /// User `from` chooses `option_values` in the select named
    /// `select_name` (outside a form): `action.option` for a
    /// `select_static` (one value), `action.options` for a
    /// `multi_select_static`.
    ///
    /// # Panics
    /// As [`press`](Self::press), and if a value is not an option.
    pub async fn select(
        &self,
        message_id: &str,
        from: &str,
        select_name: &str,
        option_values: &[&str],
    ) -> CallbackOutcome {
        let act = Act::Select {
            name: select_name,
            values: option_values,
        };
        self.card_callback(message_id, from, act, "select").await
    }

    async fn card_callback(
        &self,
        message_id: &str,
        from: &str,
        act: Act<'_>,
        verb: &str,
    ) -> CallbackOutcome {
        let push = self.inner.mutate(|state| {
            let payload = state
                .card_action(message_id, from, act)
                .unwrap_or_else(|error| panic!("FakeFeishu::{verb}: {error}"));
            state.new_push(PushKind::CardCallback, payload)
        });
        self.start_delivery(push);
        self.wait_for_answer(push).await;
        self.inspect(|state| state.outcome(push))
    }

    fn start_delivery(&self, push: u64) {
        let started = self
            .inner
            .mutate(|state| state.deliver(push, Instant::now()));
        let Some((delivery, Plan::Http { url, request })) = started else {
            return;
        };
        let inner = Arc::clone(&self.inner);
        let client = self.client.clone();
        let timeout = self.inspect(|state| state.config.callback_timeout);
        tokio::spawn(async move {
            match webhook::post(&client, &url, &request, timeout).await {
                Ok(answer) => inner.mutate(|state| state.record_answer(push, delivery, answer)),
                Err(failure) => {
                    inner.mutate(|state| state.record_http_failure(push, delivery, failure));
                }
            }
        });
    }
}

/// The long connection.
impl FakeFeishu {
    /// Ends every long connection without a close frame (as a network
    /// failure would).
    pub fn drop_connections(&self) {
        self.inner.mutate(|state| state.socket.end_all(End::Drop));
    }

    /// Ends every long connection with a close frame.
    pub fn close_connections(&self) {
        self.inner.mutate(|state| state.socket.end_all(End::Close));
    }
}

/// HTTP callback mode: checking the app's endpoint.
impl FakeFeishu {
    /// Sends the `url_verification` request Feishu sends when the callback
    /// URL is set (`{"challenge", "token", "type": "url_verification"}`,
    /// encrypted with the encrypt key if any) and checks the answer.
    ///
    /// # Panics
    /// If no callback URL is set, or it cannot be reached.
    pub async fn url_verification(&self) -> Verification {
        let challenge = random_hex();
        let (url, request) = self.inspect(|state| {
            (
                state.config.callback_url.clone(),
                state.url_verification_request(&challenge),
            )
        });
        let url =
            url.unwrap_or_else(|| panic!("FakeFeishu::url_verification: set a callback URL first"));
        let delivery = self.post_now(&url, &request).await;
        let verified = delivery.status == 200
            && delivery
                .json
                .as_ref()
                .and_then(|json| json.get("challenge"))
                .and_then(Value::as_str)
                == Some(challenge.as_str());
        Verification {
            challenge,
            delivery,
            verified,
        }
    }

    /// Sends a request Feishu did not send — a message event (not stored)
    /// signed with the wrong key, signed 6 minutes ago, unencrypted, or
    /// with the wrong verification token — to the callback URL; returns
    /// what the app answered (it should refuse all but the old one, which
    /// only an app that checks timestamps refuses).
    ///
    /// # Panics
    /// If no callback URL is set, or it cannot be reached.
    pub async fn send_forged(&self, forgery: Forgery) -> HttpDelivery {
        let (url, request) = self.inner.mutate(|state| {
            let event = json!({
                "sender": {
                    "sender_id": {
                        "union_id": format!("on_{}", random_hex()),
                        "user_id": random_hex()[..8].to_owned(),
                        "open_id": format!("ou_{}", random_hex()),
                    },
                    "sender_type": "user",
                    "tenant_key": TENANT_KEY,
                },
                "message": {
                    "message_id": format!("om_{}", random_hex()),
                    "create_time": util::unix_millis().to_string(),
                    "update_time": util::unix_millis().to_string(),
                    "chat_id": format!("oc_{}", random_hex()),
                    "chat_type": "p2p",
                    "message_type": "text",
                    "content": json!({"text": "forged"}).to_string(),
                },
            });
            let mut payload = state.event_payload("im.message.receive_v1", event);
            if forgery == Forgery::WrongVerificationToken
                && let Some(header) = payload.get_mut("header").and_then(Value::as_object_mut)
            {
                header.insert("token".into(), json!("not-the-verification-token"));
            }
            (
                state.config.callback_url.clone(),
                state.http_request(&payload, Some(forgery)),
            )
        });
        let url =
            url.unwrap_or_else(|| panic!("FakeFeishu::send_forged: set a callback URL first"));
        self.post_now(&url, &request).await
    }

    async fn post_now(&self, url: &str, request: &state::HttpRequest) -> HttpDelivery {
        let timeout = self.inspect(|state| state.config.callback_timeout);
        let answer = webhook::post(&self.client, url, request, timeout)
            .await
            .unwrap_or_else(|error| panic!("FakeFeishu: {error}"));
        HttpDelivery {
            status: answer.status,
            body: answer.body.unwrap_or_default(),
            json: answer.json,
            latency: answer.latency,
        }
    }
}

//! A fake of Slack — the Web API, Socket Mode and interactions' response
//! URLs — served on `127.0.0.1`, for end-to-end tests of a real Slack
//! client (slack-morphism 2.31) without the internet.
//!
//! [`FakeSlack::start`] binds a free port. Point slack-morphism at it with
//! `SlackClientHyperConnector::with_connector(HttpConnector::new())
//! .with_slack_api_url(&fake.api_url())` and the tokens [`BOT_TOKEN`]
//! (`xoxb-…`, Web API) and [`APP_TOKEN`] (`xapp-…`, Socket Mode);
//! `apps.connections.open` then hands out the fake's own WebSocket URL:
//!
//! ```no_run
//! # async fn demo() {
//! use askbridge_testkit::slack::{Channel, FakeSlack, User};
//!
//! let fake = FakeSlack::start().await;
//! fake.add_channel(&Channel::public("C0GENERAL1", "general"));
//! // … the bot posts a question with buttons …
//! let question = fake.wait_for_messages("C0GENERAL1", 1).await.remove(0);
//! let alice = User::new("U0ALICE001", "alice");
//! let press = fake.press_button(&alice, "C0GENERAL1", &question.ts, "ask:1:yes");
//! let answered = fake.wait_for_responses(press.id, 1).await; // no sleeping
//! # let _ = answered;
//! # }
//! ```
//!
//! # Addresses
//!
//! slack-morphism joins its API base URL and the method name with a `/`
//! (`format!("{}/{}", slack_api_url, method)`; the default base is
//! `https://slack.com/api`), so [`FakeSlack::api_url`] is
//! `http://127.0.0.1:PORT/api` (no trailing slash) and methods are served
//! at `/api/{method}` — also at `/api//{method}`, which a base URL with a
//! trailing slash produces. Socket Mode is at `/socket?ticket=…` (each
//! ticket from `apps.connections.open` works once), response URLs at
//! `/actions/{team}/{n}/{secret}` (block actions) and
//! `/commands/{team}/{n}/{secret}` (slash commands), as on
//! `hooks.slack.com`.
//!
//! # Web API
//!
//! `auth.test`, `apps.connections.open`, `chat.postMessage`, `chat.update`,
//! `chat.postEphemeral`, `views.open`, `conversations.open` and
//! `users.info`, as `GET` with a query string or `POST` with a JSON or
//! form body (`blocks` and `view` may be JSON-encoded strings, as in
//! forms); the token as `Authorization: Bearer …` or a `token` parameter.
//! Every call is recorded ([`Call`]). Answers to a known token list its
//! scopes in the `x-oauth-scopes` header, as Slack's do
//! ([`FakeSlackBuilder::bot_scopes`]). Answers are Slack's: HTTP 200 with
//! `{"ok": true, …}` or `{"ok": false, "error": "…"}` — `not_authed` (no
//! token), `invalid_auth` (unknown token), `not_allowed_token_type` (the
//! app token for a bot method, or the bot token for
//! `apps.connections.open`), `channel_not_found`, `not_in_channel`
//! ([`Channel::without_bot`], [`FakeSlack::remove_bot_from`]),
//! `is_archived` ([`FakeSlack::archive_channel`]), `no_text` (neither text
//! nor blocks), `msg_too_long` (text over [`MAX_TEXT`] characters),
//! `invalid_blocks_format` (blocks that are not a JSON array),
//! `invalid_blocks` with Slack's `errors` list and
//! `response_metadata.messages` (over 50 blocks, section text over 3000,
//! fields over 10 or 2000, header over 150, button text over 75 or value
//! over 2000, `action_id`/`block_id` over 255 or repeated in the message,
//! over 25 elements in an actions block, over 10 in a context block, select
//! options over 100, checkbox/radio options over 10, option text over 75 or
//! value over 150, unknown block types), `message_not_found` and
//! `cant_update_message` (someone else's message) for `chat.update`,
//! `invalid_trigger_id`, `expired_trigger_id` (older than the trigger
//! window, [`FakeSlackBuilder::trigger_window`], or
//! [`FakeSlack::expire_trigger`]) and `exchanged_trigger_id` (used already)
//! for `views.open`, `invalid_arguments` for bad views (title over 24
//! characters, over 100 blocks), `user_not_found`; unknown methods answer
//! `404 unknown_method`. `chat.postMessage` to a user id posts in the app's
//! DM with the user. Messages get `ts`s in Slack's format
//! (`"1700000000.000100"`), unique and increasing; blocks without a
//! `block_id` get one, as on Slack. Rate limits: [`RateLimits`] (off by
//! default; `429`, `Retry-After` in whole seconds,
//! `{"ok": false, "error": "ratelimited"}`).
//!
//! # Socket Mode
//!
//! On connect: `hello` with `num_connections`, `debug_info` and
//! `connection_info.app_id`. Envelopes (`events_api`, `interactive`,
//! `slash_commands`) carry a unique `envelope_id`, `payload` and
//! `accepts_response_payload` (true for view submissions and slash
//! commands); Events API envelopes also `retry_attempt` and
//! `retry_reason`. Acks (`{"envelope_id": …}`, with `payload` if any) are
//! recorded per envelope ([`EnvelopeRecord`]); the first ack of a
//! `slash_commands` envelope with a `payload` answers the command, as a
//! response URL post would ([`EphemeralSource::CommandAck`]). An Events API envelope not
//! acked within the ack timeout ([`DEFAULT_ACK_TIMEOUT`],
//! [`FakeSlackBuilder::ack_timeout`], or now with
//! [`FakeSlack::redeliver_now`]) is sent again with `retry_attempt` + 1 and
//! `retry_reason: "timeout"`, at most [`DEFAULT_MAX_RETRIES`] times; so is
//! one whose connection died unacked — on the next connection.
//! Interactive and slash command envelopes are not redelivered (Slack
//! does not retry them; the user sees an error) unless
//! [`FakeSlackBuilder::redeliver_interactive`] says so. [`FakeSlack::drop_connection`] ends the sockets without a
//! close frame; [`FakeSlack::send_disconnect`] sends `disconnect`
//! (`refresh_requested`, `warning`). The bot's own messages produce
//! `message` events too (as for an app subscribed to `message.*` events;
//! [`FakeSlackBuilder::echo_bot_messages`]).
//!
//! # Users acting
//!
//! [`FakeSlack::inject_message`] (a user's or another bot's message in a
//! channel, thread or DM: stored and sent as an `event_callback`),
//! [`FakeSlack::press_button`], [`FakeSlack::choose`] (`static_select`,
//! `multi_static_select`, `checkboxes`, `radio_buttons`) and
//! [`FakeSlack::submit_view`] (a modal the bot opened) — `block_actions`
//! and `view_submission` payloads with a fresh `trigger_id` and, for block
//! actions, a `response_url` at the fake. Posts to the response URL are
//! recorded per interaction and applied: `replace_original`,
//! `delete_original`, `response_type: "in_channel"` (a new message),
//! otherwise an ephemeral message for the user ([`Ephemeral`]). A response
//! URL takes five posts within 30 minutes.
//!
//! [`FakeSlack::use_command`] (a user runs a slash command such as
//! `/askbridge` in a channel): a `slash_commands` envelope whose `payload`
//! is Slack's form fields as strings (`token`, `team_id`, `team_domain`,
//! `channel_id`, `channel_name`, `user_id`, `user_name`, `command`,
//! `text`, `api_app_id`, `is_enterprise_install`, `response_url`,
//! `trigger_id`), recorded as an interaction
//! ([`InteractionKind::SlashCommand`], [`FakeSlack::commands`],
//! [`FakeSlack::command`]). The app answers in its ack's `payload` or at
//! the response URL: `response_type: "in_channel"` posts a message in the
//! channel, otherwise the user sees an [`Ephemeral`] there
//! ([`EphemeralSource::CommandAck`], [`EphemeralSource::CommandResponse`];
//! [`FakeSlack::wait_for_ephemerals`]).
//!
//! # HTTP mode
//!
//! The `*_http` variants build the exact request Slack would POST to the
//! app's Request URLs instead of sending an envelope ([`HttpRequest`]: an
//! `application/json` `event_callback` or `url_verification`, an
//! `application/x-www-form-urlencoded` `payload=<json>`, or a slash
//! command's form fields, [`FakeSlack::use_command_http`]);
//! [`FakeSlack::deliver_http`] signs and POSTs one ([`RequestSigner`],
//! [`SIGNATURE_HEADER`], [`TIMESTAMP_HEADER`]).
//!
//! # Deliberate differences
//!
//! Text length counts characters. Message edits and deletions produce no
//! `message_changed`/`message_deleted` events. Thread parents of
//! `chat.postMessage` are not checked. Users are not members of channels
//! (`chat.postEphemeral` only checks that the user exists). Buttons on
//! ephemeral messages cannot be pressed. Running a slash command stores no
//! message of its own (Slack shows the invocation with an `in_channel`
//! answer), and `replace_original`/`delete_original` posts to a command's
//! response URL change nothing (there is no original message); the
//! command itself is not checked against the app's registered ones.
//! Unknown methods answer `404`
//! with `unknown_method`. The response URL answers `{"ok": true}` and its
//! errors (`used_url`, `expired_url`) with 404.

mod model;
mod rate;
mod server;
mod sign;
mod socket;
mod state;
mod util;
mod validate;

use std::fmt;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

pub use model::{
    Call, Channel, ChannelKind, EnvelopeKind, EnvelopeRecord, Ephemeral, EphemeralSource,
    HttpDelivery, HttpRequest, IncomingMessage, Injected, InteractionKind, InteractionRecord,
    OpenedView, Revision, SocketStats, StoredMessage, User,
};
pub use rate::{Limit, RateLimits};
pub use sign::{RequestSigner, SIGNATURE_HEADER, SIGNING_SECRET, SignedHeaders, TIMESTAMP_HEADER};
pub use state::State;

use crate::faults::{self, FaultCounts, FaultPlan, Faults};
use server::Inner;
use socket::Redelivery;
use state::{Act, Config, RanCommand};

/// The bot token the fake accepts by default (`Authorization: Bearer …`).
pub const BOT_TOKEN: &str = "xoxb-1000000000001-1000000000002-askbridgeFakeBotToken";

/// The app-level token for `apps.connections.open`.
pub const APP_TOKEN: &str = "xapp-1-A0ASKBR1DG-1000000000003-askbridgefakeapptoken00000000";

/// The deprecated verification `token` Slack puts in payloads.
pub const VERIFICATION_TOKEN: &str = "fakeVerificationToken0001";

/// The workspace (team) id.
pub const TEAM_ID: &str = "T0ASKBR1DG";

/// The workspace's domain (`askbridge-test.slack.com`).
pub const TEAM_DOMAIN: &str = "askbridge-test";

/// The workspace's name.
pub const TEAM_NAME: &str = "askbridge test";

/// The app's id.
pub const APP_ID: &str = "A0ASKBR1DG";

/// The bot's `bot_id`.
pub const BOT_ID: &str = "B0ASKBR1DG";

/// The bot user's id.
pub const BOT_USER_ID: &str = "U0ASKBR1DG";

/// The bot user's name.
pub const BOT_NAME: &str = "askbridge";

/// The scopes the bot token was granted, unless the builder says
/// otherwise: a bot that posts, opens DMs, reads user names, reads
/// messages in public and private channels and DMs, and has slash
/// commands.
pub const DEFAULT_BOT_SCOPES: &[&str] = &[
    "chat:write",
    "im:write",
    "users:read",
    "channels:history",
    "groups:history",
    "im:history",
    "commands",
];

/// The scope of the app-level token.
pub const APP_SCOPES: &[&str] = &["connections:write"];

/// Message text longer than this many characters is refused with
/// `msg_too_long` (Slack's documented 40,000).
pub const MAX_TEXT: usize = 40_000;

/// How long after its interaction a `trigger_id` opens a view (Slack: 3
/// seconds).
pub const TRIGGER_WINDOW: Duration = Duration::from_secs(3);

/// How long an envelope may stay unacked before it is redelivered (Slack
/// asks for acks within 3 seconds).
pub const DEFAULT_ACK_TIMEOUT: Duration = Duration::from_secs(3);

/// How many times an unacked Events API envelope is redelivered (Slack
/// retries events 3 times).
pub const DEFAULT_MAX_RETRIES: u32 = 3;

/// How long [`FakeSlack::wait_for`] waits before failing the test.
pub const DEFAULT_WAIT_TIMEOUT: Duration = Duration::from_secs(20);

/// Options for a [`FakeSlack`].
///
/// ```no_run
/// # async fn demo() {
/// use std::time::Duration;
/// use askbridge_testkit::slack::{FakeSlack, RateLimits};
/// let fake = FakeSlack::builder()
///     .rate_limits(RateLimits::slack())
///     .ack_timeout(Duration::from_millis(200))
///     .start()
///     .await;
/// # let _ = fake;
/// # }
/// ```
#[derive(Debug, Clone)]
pub struct FakeSlackBuilder {
    bot_token: String,
    app_token: String,
    bot_scopes: Vec<String>,
    signer: RequestSigner,
    rate_limits: RateLimits,
    faults: Faults,
    wait_timeout: Duration,
    trigger_window: Duration,
    ack_timeout: Duration,
    max_retries: u32,
    redeliver_interactive: bool,
    echo_bot_messages: bool,
}

impl Default for FakeSlackBuilder {
    fn default() -> Self {
        FakeSlackBuilder {
            bot_token: BOT_TOKEN.to_owned(),
            app_token: APP_TOKEN.to_owned(),
            bot_scopes: DEFAULT_BOT_SCOPES.iter().map(|&s| s.to_owned()).collect(),
            signer: RequestSigner::default(),
            rate_limits: RateLimits::off(),
            faults: Faults::NONE,
            wait_timeout: DEFAULT_WAIT_TIMEOUT,
            trigger_window: TRIGGER_WINDOW,
            ack_timeout: DEFAULT_ACK_TIMEOUT,
            max_retries: DEFAULT_MAX_RETRIES,
            redeliver_interactive: false,
            echo_bot_messages: true,
        }
    }
}

impl FakeSlackBuilder {
    /// The accepted bot token.
    #[must_use]
    pub fn bot_token(mut self, token: impl Into<String>) -> Self {
        self.bot_token = token.into();
        self
    }

    /// The accepted app-level token.
    #[must_use]
    pub fn app_token(mut self, token: impl Into<String>) -> Self {
        self.app_token = token.into();
        self
    }

    /// The scopes the bot token was granted (default
    /// [`DEFAULT_BOT_SCOPES`]), listed in the `x-oauth-scopes` header of
    /// every Web API answer to it.
    #[must_use]
    pub fn bot_scopes<S: Into<String>>(mut self, scopes: impl IntoIterator<Item = S>) -> Self {
        self.bot_scopes = scopes.into_iter().map(Into::into).collect();
        self
    }

    /// The signing secret for HTTP-mode requests (default
    /// [`SIGNING_SECRET`]).
    #[must_use]
    pub fn signing_secret(mut self, secret: impl Into<String>) -> Self {
        self.signer = RequestSigner::new(secret);
        self
    }

    /// Faults injected into the API's requests (default:
    /// [`Faults::NONE`]).
    #[must_use]
    pub fn faults(mut self, faults: Faults) -> Self {
        self.faults = faults;
        self
    }

    /// Rate limits (default: [`RateLimits::off`]).
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

    /// How long a `trigger_id` opens views (default [`TRIGGER_WINDOW`]).
    #[must_use]
    pub fn trigger_window(mut self, window: Duration) -> Self {
        self.trigger_window = window;
        self
    }

    /// How long an envelope may stay unacked (default
    /// [`DEFAULT_ACK_TIMEOUT`]).
    #[must_use]
    pub fn ack_timeout(mut self, timeout: Duration) -> Self {
        self.ack_timeout = timeout;
        self
    }

    /// Redeliveries of an unacked envelope (default
    /// [`DEFAULT_MAX_RETRIES`]).
    #[must_use]
    pub fn max_retries(mut self, retries: u32) -> Self {
        self.max_retries = retries;
        self
    }

    /// Whether unacked `interactive` and `slash_commands` envelopes are
    /// redelivered like Events API ones (default false, as on Slack).
    #[must_use]
    pub fn redeliver_interactive(mut self, redeliver: bool) -> Self {
        self.redeliver_interactive = redeliver;
        self
    }

    /// Whether the bot's own messages produce `message` events (default
    /// true).
    #[must_use]
    pub fn echo_bot_messages(mut self, echo: bool) -> Self {
        self.echo_bot_messages = echo;
        self
    }

    /// Binds `127.0.0.1:0` and serves in background tasks of the current
    /// tokio runtime.
    ///
    /// # Panics
    /// If no port can be bound.
    pub async fn start(self) -> FakeSlack {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("FakeSlack: bind 127.0.0.1:0");
        let addr = listener.local_addr().expect("FakeSlack: local address");
        let config = Config {
            bot_token: self.bot_token,
            app_token: self.app_token,
            bot_scopes: self.bot_scopes,
            signer: self.signer,
            rate_limits: self.rate_limits,
            trigger_window: self.trigger_window,
            echo_bot_messages: self.echo_bot_messages,
            base_url: format!("http://{addr}"),
            ws_base: format!("ws://{addr}"),
        };
        let rules = Redelivery {
            ack_timeout: self.ack_timeout,
            max_retries: self.max_retries,
            interactive: self.redeliver_interactive,
        };
        let inner = Arc::new(Inner::new(State::new(config, rules)));
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
                tracing::error!(%error, "fake Slack server failed");
            }
        });
        FakeSlack {
            inner,
            addr,
            wait_timeout: self.wait_timeout,
            faults,
            shutdown: Some(shutdown),
            _server: server,
        }
    }
}

/// A running fake Slack. Dropping it shuts it down: sockets are dropped,
/// the port closes.
pub struct FakeSlack {
    inner: Arc<Inner>,
    addr: SocketAddr,
    faults: Arc<FaultPlan>,
    wait_timeout: Duration,
    shutdown: Option<oneshot::Sender<()>>,
    /// Ends by itself after `shutdown`.
    _server: JoinHandle<()>,
}

impl fmt::Debug for FakeSlack {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FakeSlack")
            .field("api_url", &self.api_url())
            .finish_non_exhaustive()
    }
}

impl Drop for FakeSlack {
    fn drop(&mut self) {
        self.inner.mutate(|state| state.closed = true);
        if let Some(shutdown) = self.shutdown.take() {
            let _ = shutdown.send(());
        }
    }
}

/// Starting, addressing, settings.
impl FakeSlack {
    /// A fake with the defaults: tokens [`BOT_TOKEN`] and [`APP_TOKEN`], no
    /// rate limits, Slack's time windows.
    pub async fn start() -> FakeSlack {
        FakeSlack::builder().start().await
    }

    /// Options before starting.
    pub fn builder() -> FakeSlackBuilder {
        FakeSlackBuilder::default()
    }

    /// The Web API base URL, for slack-morphism's
    /// `SlackClientHyperConnector::with_slack_api_url`:
    /// `http://127.0.0.1:PORT/api` (methods at `{api_url}/{method}`).
    pub fn api_url(&self) -> String {
        format!("http://{}/api", self.addr)
    }

    /// `http://127.0.0.1:PORT`.
    pub fn base_url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// The address served.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The accepted bot token.
    pub fn bot_token(&self) -> String {
        self.inspect(|state| state.config.bot_token.clone())
    }

    /// The accepted app-level token.
    pub fn app_token(&self) -> String {
        self.inspect(|state| state.config.app_token.clone())
    }

    /// The signer of HTTP-mode requests (its secret is the app's signing
    /// secret).
    pub fn signer(&self) -> RequestSigner {
        self.inspect(|state| state.config.signer.clone())
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

    /// Changes how long trigger ids open views (also for existing ones).
    pub fn set_trigger_window(&self, window: Duration) {
        self.inner.mutate(|state| state.set_trigger_window(window));
    }
}

/// Reading the state.
impl FakeSlack {
    /// Runs `read` on the current state.
    pub fn inspect<T>(&self, read: impl FnOnce(&State) -> T) -> T {
        read(&self.inner.lock())
    }

    /// Every call answered so far, in order.
    pub fn calls(&self) -> Vec<Call> {
        self.inspect(|state| state.calls().to_vec())
    }

    /// The calls of `method` (`"chat.postMessage"`, `"response_url"`).
    pub fn calls_to(&self, method: &str) -> Vec<Call> {
        self.inspect(|state| state.calls_to(method).into_iter().cloned().collect())
    }

    /// One message as it is now.
    pub fn message(&self, channel: &str, ts: &str) -> Option<StoredMessage> {
        self.inspect(|state| state.message(channel, ts).cloned())
    }

    /// The top-level messages of a channel, in order.
    pub fn messages_in(&self, channel: &str) -> Vec<StoredMessage> {
        self.inspect(|state| state.messages_in(channel).into_iter().cloned().collect())
    }

    /// The replies in a thread, in order.
    pub fn thread_replies(&self, channel: &str, parent_ts: &str) -> Vec<StoredMessage> {
        self.inspect(|state| {
            state
                .thread_replies(channel, parent_ts)
                .into_iter()
                .cloned()
                .collect()
        })
    }

    /// Every message the bot made, in order, as it is now.
    pub fn bot_messages(&self) -> Vec<StoredMessage> {
        self.inspect(|state| state.bot_messages().into_iter().cloned().collect())
    }

    /// The ephemeral messages `user` was shown.
    pub fn ephemerals_for(&self, user: &str) -> Vec<Ephemeral> {
        self.inspect(|state| state.ephemerals_for(user).into_iter().cloned().collect())
    }

    /// An interaction and what was posted to its response URL.
    pub fn interaction(&self, id: u64) -> Option<InteractionRecord> {
        self.inspect(|state| state.interaction(id).cloned())
    }

    /// The slash commands run ([`use_command`](Self::use_command),
    /// [`use_command_http`](Self::use_command_http)), in order, with what
    /// was posted to their response URLs ([`InteractionKind::SlashCommand`]).
    pub fn commands(&self) -> Vec<InteractionRecord> {
        self.inspect(|state| state.commands().into_iter().cloned().collect())
    }

    /// The slash command carried by Socket Mode envelope `envelope_id`.
    pub fn command(&self, envelope_id: &str) -> Option<InteractionRecord> {
        self.inspect(|state| {
            state
                .commands()
                .into_iter()
                .find(|record| record.envelope_id.as_deref() == Some(envelope_id))
                .cloned()
        })
    }

    /// The views opened, in order.
    pub fn views(&self) -> Vec<OpenedView> {
        self.inspect(|state| state.views().to_vec())
    }

    /// Every Socket Mode envelope, in order.
    pub fn envelopes(&self) -> Vec<EnvelopeRecord> {
        self.inspect(|state| state.envelopes().into_iter().cloned().collect())
    }

    /// One envelope.
    pub fn envelope(&self, envelope_id: &str) -> Option<EnvelopeRecord> {
        self.inspect(|state| state.envelope(envelope_id).cloned())
    }

    /// Socket Mode counters.
    pub fn socket_stats(&self) -> SocketStats {
        self.inspect(|state| state.socket_stats().clone())
    }

    /// How many `429`s were answered.
    pub fn rate_limited_count(&self) -> usize {
        self.inspect(State::rate_limited_count)
    }
}

/// Waiting, without sleeps: each condition is re-checked after every change
/// to the state.
impl FakeSlack {
    /// Waits until `check` returns `Some`, re-checking after every change
    /// (a call answered, a frame sent or received, an injection…), and
    /// returns its value.
    ///
    /// `check` runs with the state locked: it must not call this
    /// `FakeSlack`'s methods (that would deadlock); read the `State`.
    ///
    /// # Panics
    /// After the wait timeout (20 s by default), naming `what` and listing
    /// the calls so far.
    pub async fn wait_for<T>(&self, what: &str, check: impl FnMut(&State) -> Option<T>) -> T {
        let timeout = self.wait_timeout;
        self.inner
            .wait_for(timeout, check, |state| {
                format!(
                    "FakeSlack: gave up after {timeout:?} waiting for {what}\nsocket: {:?}\ncalls so \
                     far:\n{}",
                    state.socket_stats(),
                    state.describe_calls()
                )
            })
            .await
    }

    /// Waits for a call of `method` for which `matches` holds (earlier
    /// calls count).
    pub async fn wait_for_call(
        &self,
        method: &str,
        mut matches: impl FnMut(&Call) -> bool,
    ) -> Call {
        let what = format!("a matching {method} call");
        self.wait_for(&what, |state| {
            state
                .calls_to(method)
                .into_iter()
                .find(|call| matches(call))
                .cloned()
        })
        .await
    }

    /// Waits until `channel` has at least `count` top-level messages and
    /// returns the first `count`.
    pub async fn wait_for_messages(&self, channel: &str, count: usize) -> Vec<StoredMessage> {
        let what = format!("{count} message(s) in {channel}");
        self.wait_for(&what, |state| {
            let messages = state.messages_in(channel);
            (messages.len() >= count).then(|| messages.into_iter().take(count).cloned().collect())
        })
        .await
    }

    /// Waits until the bot made at least `count` messages and returns the
    /// first `count`.
    pub async fn wait_for_bot_messages(&self, count: usize) -> Vec<StoredMessage> {
        let what = format!("{count} bot message(s)");
        self.wait_for(&what, |state| {
            let messages = state.bot_messages();
            (messages.len() >= count).then(|| messages.into_iter().take(count).cloned().collect())
        })
        .await
    }

    /// Waits until the thread of `parent_ts` has at least `count` replies.
    pub async fn wait_for_replies(
        &self,
        channel: &str,
        parent_ts: &str,
        count: usize,
    ) -> Vec<StoredMessage> {
        let what = format!("{count} repl(ies) to {parent_ts} in {channel}");
        self.wait_for(&what, |state| {
            let replies = state.thread_replies(channel, parent_ts);
            (replies.len() >= count).then(|| replies.into_iter().take(count).cloned().collect())
        })
        .await
    }

    /// Waits until message `ts` was edited at least `count` times.
    pub async fn wait_for_edits(&self, channel: &str, ts: &str, count: usize) -> StoredMessage {
        let what = format!("{count} edit(s) of {ts} in {channel}");
        self.wait_for(&what, |state| {
            state
                .message(channel, ts)
                .filter(|message| message.edit_count() >= count)
                .cloned()
        })
        .await
    }

    /// Waits until `user` was shown at least `count` ephemeral messages.
    pub async fn wait_for_ephemerals(&self, user: &str, count: usize) -> Vec<Ephemeral> {
        let what = format!("{count} ephemeral message(s) for {user}");
        self.wait_for(&what, |state| {
            let found = state.ephemerals_for(user);
            (found.len() >= count).then(|| found.into_iter().take(count).cloned().collect())
        })
        .await
    }

    /// Waits until interaction `id` got at least `count` response URL
    /// posts; returns the interaction.
    pub async fn wait_for_responses(&self, id: u64, count: usize) -> InteractionRecord {
        let what = format!("{count} response URL post(s) for interaction {id}");
        self.wait_for(&what, |state| {
            state
                .interaction(id)
                .filter(|record| record.responses.len() >= count)
                .cloned()
        })
        .await
    }

    /// Waits until a view was opened with the trigger of interaction `id`.
    pub async fn wait_for_view(&self, id: u64) -> OpenedView {
        let what = format!("a view opened with the trigger of interaction {id}");
        self.wait_for(&what, |state| {
            let trigger = &state.interaction(id)?.trigger_id;
            state
                .views()
                .iter()
                .find(|view| &view.trigger_id == trigger)
                .cloned()
        })
        .await
    }

    /// Waits until envelope `envelope_id` was acked; returns it.
    pub async fn wait_for_ack(&self, envelope_id: &str) -> EnvelopeRecord {
        let what = format!("an ack of envelope {envelope_id}");
        self.wait_for(&what, |state| {
            state
                .envelope(envelope_id)
                .filter(|record| record.acked())
                .cloned()
        })
        .await
    }

    /// Waits until envelope `envelope_id` was sent at least `count` times.
    pub async fn wait_for_deliveries(&self, envelope_id: &str, count: usize) -> EnvelopeRecord {
        let what = format!("{count} deliver(ies) of envelope {envelope_id}");
        self.wait_for(&what, |state| {
            state
                .envelope(envelope_id)
                .filter(|record| record.deliveries >= count)
                .cloned()
        })
        .await
    }

    /// Waits until `count` Socket Mode connections were accepted in all.
    pub async fn wait_for_connections(&self, count: usize) -> SocketStats {
        let what = format!("{count} Socket Mode connection(s)");
        self.wait_for(&what, |state| {
            (state.socket_stats().connections >= count).then(|| state.socket_stats().clone())
        })
        .await
    }

    /// Waits until every envelope so far was acked (or given up).
    pub async fn wait_for_all_acked(&self) {
        self.wait_for("every envelope to be acked", |state| {
            state.socket.settled().then_some(())
        })
        .await;
    }
}

/// Test controls.
impl FakeSlack {
    /// Registers a user (or updates it); users are also registered when
    /// they act.
    pub fn add_user(&self, user: &User) {
        self.inner.mutate(|state| state.add_user(user));
    }

    /// Registers a channel. Posting to an unknown one answers
    /// `channel_not_found`.
    pub fn add_channel(&self, channel: &Channel) {
        self.inner.mutate(|state| state.add_channel(channel));
    }

    /// The DM channel (`D…`) with `user`, made on first use: the id
    /// `conversations.open` answers.
    pub fn dm_channel(&self, user: &User) -> String {
        self.inner.mutate(|state| state.dm_channel(user))
    }

    /// Archives a channel: posting and editing there answer `is_archived`.
    pub fn archive_channel(&self, channel: &str) {
        self.inner.mutate(|state| state.set_archived(channel, true));
    }

    /// Undoes [`archive_channel`](Self::archive_channel).
    pub fn unarchive_channel(&self, channel: &str) {
        self.inner
            .mutate(|state| state.set_archived(channel, false));
    }

    /// The bot leaves a channel: posting there answers `not_in_channel`.
    pub fn remove_bot_from(&self, channel: &str) {
        self.inner
            .mutate(|state| state.set_bot_member(channel, false));
    }

    /// The bot joins a channel.
    pub fn add_bot_to(&self, channel: &str) {
        self.inner
            .mutate(|state| state.set_bot_member(channel, true));
    }

    /// Makes `trigger_id` older than the trigger window: `views.open`
    /// answers `expired_trigger_id`. Returns whether it exists.
    pub fn expire_trigger(&self, trigger_id: &str) -> bool {
        self.inner.mutate(|state| state.expire_trigger(trigger_id))
    }

    /// Makes envelope `envelope_id` due for redelivery now, as if its ack
    /// timed out. Returns whether it was pending.
    pub fn redeliver_now(&self, envelope_id: &str) -> bool {
        self.inner
            .mutate(|state| state.socket.force_redelivery(Some(envelope_id)) > 0)
    }

    /// Loses the acks of envelope `envelope_id` on their way to Slack: it
    /// is redelivered now with `retry_attempt` + 1, as Slack does when no
    /// ack arrives in time. Returns whether it exists.
    pub fn lose_ack(&self, envelope_id: &str) -> bool {
        self.inner
            .mutate(|state| state.socket.lose_ack(envelope_id))
    }

    /// Drops every Socket Mode connection without a close frame (as a
    /// network failure would). Unacked envelopes are redelivered when the
    /// client reconnects (after `apps.connections.open`).
    pub fn drop_connection(&self) {
        self.inner.mutate(|state| state.socket.drop_all());
    }

    /// Sends `{"type": "disconnect", "reason": reason, …}` on every
    /// connection (`"refresh_requested"`, `"warning"`,
    /// `"link_disabled"`).
    pub fn send_disconnect(&self, reason: &str) {
        self.inner
            .mutate(|state| state.socket.disconnect_all(reason));
    }
}

/// Acting as Slack's users.
impl FakeSlack {
    /// A user (or another bot) writes a message: stored in its channel (or
    /// thread) and sent as a `message` event over Socket Mode.
    ///
    /// # Panics
    /// If the channel is unknown, or the thread parent is not in it.
    pub fn inject_message(&self, message: IncomingMessage) -> Injected {
        self.inner.mutate(|state| {
            let (stored, payload) = state
                .incoming(message)
                .unwrap_or_else(|error| panic!("FakeSlack::inject_message: {error}"));
            let envelope_id = state.enqueue_event(payload);
            Injected {
                channel: stored.channel,
                ts: stored.ts,
                envelope_id,
            }
        })
    }

    /// Sends any Events API payload (a whole `event_callback`) as an
    /// `events_api` envelope; returns its `envelope_id`.
    pub fn inject_event(&self, payload: Value) -> String {
        self.inner.mutate(|state| state.enqueue_event(payload))
    }

    /// `user` presses button `action_id` of message `ts` in `channel`:
    /// a `block_actions` envelope.
    ///
    /// # Panics
    /// If there is no such message or button.
    pub fn press_button(
        &self,
        user: &User,
        channel: &str,
        ts: &str,
        action_id: &str,
    ) -> InteractionRecord {
        self.act(user, channel, ts, action_id, Act::Press, true).0
    }

    /// `user` chooses `values` in the element `action_id`
    /// (`static_select` or `radio_buttons`: one value; `multi_static_select`
    /// or `checkboxes`: any number): a `block_actions` envelope with
    /// `selected_option(s)`.
    ///
    /// # Panics
    /// If there is no such element, or a value is not one of its options.
    pub fn choose(
        &self,
        user: &User,
        channel: &str,
        ts: &str,
        action_id: &str,
        values: &[&str],
    ) -> InteractionRecord {
        self.act(user, channel, ts, action_id, Act::Choose(values), true)
            .0
    }

    /// `user` submits view `view_id` (opened by the bot) with `(action_id,
    /// value)` for its inputs (comma-separated values for multi-selects and
    /// checkboxes): a `view_submission` envelope.
    ///
    /// # Panics
    /// If no such view was opened, a field is not one of its inputs, a
    /// required input is missing, or a value is not an option.
    pub fn submit_view(
        &self,
        user: &User,
        view_id: &str,
        fields: &[(&str, &str)],
    ) -> InteractionRecord {
        self.submission(user, view_id, fields, true).0
    }

    /// `user` (a user id; registered as `user-…` if unknown) runs slash
    /// command `command` (`"/askbridge"`) with `text` in `channel`: a
    /// `slash_commands` envelope (`accepts_response_payload: true`) whose
    /// `payload` holds Slack's form fields as strings (`token`, `team_id`,
    /// `team_domain`, `channel_id`, `channel_name`, `user_id`,
    /// `user_name`, `command`, `text`, `api_app_id`,
    /// `is_enterprise_install`, `response_url`, `trigger_id`). Returns the
    /// `envelope_id`: [`wait_for_ack`](Self::wait_for_ack) gives the ack,
    /// [`command`](Self::command) the command's record (its interaction
    /// id for [`wait_for_responses`](Self::wait_for_responses)).
    ///
    /// The app answers with the ack's `payload` (`{"text": …}`: an
    /// [`Ephemeral`] for the user, [`EphemeralSource::CommandAck`]) or by
    /// POSTing to the `response_url`
    /// ([`EphemeralSource::CommandResponse`]); `response_type:
    /// "in_channel"` posts a message in the channel instead. Wait with
    /// [`wait_for_ephemerals`](Self::wait_for_ephemerals).
    ///
    /// # Panics
    /// If the channel is unknown or archived, or `command` is not `/name`.
    pub fn use_command(&self, channel: &str, user: &str, command: &str, text: &str) -> String {
        self.run_command(channel, user, command, text, true)
            .envelope_id
            .expect("FakeSlack: the command was just queued")
    }

    fn run_command(
        &self,
        channel: &str,
        user: &str,
        command: &str,
        text: &str,
        socket: bool,
    ) -> RanCommand {
        self.inner.mutate(|state| {
            state
                .slash_command(channel, user, command, text, socket)
                .unwrap_or_else(|error| panic!("FakeSlack::use_command: {error}"))
        })
    }

    fn act(
        &self,
        user: &User,
        channel: &str,
        ts: &str,
        action_id: &str,
        act: Act<'_>,
        socket: bool,
    ) -> (InteractionRecord, Value) {
        self.inner.mutate(|state| {
            let (id, payload) = state
                .act(user, channel, ts, action_id, act, socket)
                .unwrap_or_else(|error| panic!("FakeSlack: {error}"));
            let record = state
                .interaction(id)
                .cloned()
                .expect("FakeSlack: the interaction was just recorded");
            (record, payload)
        })
    }

    fn submission(
        &self,
        user: &User,
        view_id: &str,
        fields: &[(&str, &str)],
        socket: bool,
    ) -> (InteractionRecord, Value) {
        self.inner.mutate(|state| {
            let (id, payload) = state
                .submit_view(user, view_id, fields, socket)
                .unwrap_or_else(|error| panic!("FakeSlack::submit_view: {error}"));
            let record = state
                .interaction(id)
                .cloned()
                .expect("FakeSlack: the interaction was just recorded");
            (record, payload)
        })
    }
}

/// HTTP mode: the requests Slack would POST to the app's Request URLs.
impl FakeSlack {
    /// The Events API request for a message (stored, but not sent over
    /// Socket Mode): `application/json` `event_callback`.
    ///
    /// # Panics
    /// As [`inject_message`](Self::inject_message).
    pub fn message_http(&self, message: IncomingMessage) -> HttpRequest {
        let payload = self.inner.mutate(|state| {
            state
                .incoming(message)
                .unwrap_or_else(|error| panic!("FakeSlack::message_http: {error}"))
                .1
        });
        HttpRequest {
            content_type: "application/json",
            body: payload.to_string(),
            interaction: None,
        }
    }

    /// The `url_verification` request Slack sends when the Request URL is
    /// set (the app must answer with the `challenge`).
    pub fn url_verification_http(&self, challenge: &str) -> HttpRequest {
        let body = serde_json::json!({
            "token": VERIFICATION_TOKEN,
            "challenge": challenge,
            "type": "url_verification",
        });
        HttpRequest {
            content_type: "application/json",
            body: body.to_string(),
            interaction: None,
        }
    }

    /// Like [`press_button`](Self::press_button), as an interactivity
    /// request (`payload=<json>`, form-encoded).
    pub fn press_button_http(
        &self,
        user: &User,
        channel: &str,
        ts: &str,
        action_id: &str,
    ) -> HttpRequest {
        let (record, payload) = self.act(user, channel, ts, action_id, Act::Press, false);
        interactivity_request(record.id, &payload)
    }

    /// Like [`choose`](Self::choose), as an interactivity request.
    pub fn choose_http(
        &self,
        user: &User,
        channel: &str,
        ts: &str,
        action_id: &str,
        values: &[&str],
    ) -> HttpRequest {
        let (record, payload) = self.act(user, channel, ts, action_id, Act::Choose(values), false);
        interactivity_request(record.id, &payload)
    }

    /// Like [`submit_view`](Self::submit_view), as an interactivity
    /// request.
    pub fn submit_view_http(
        &self,
        user: &User,
        view_id: &str,
        fields: &[(&str, &str)],
    ) -> HttpRequest {
        let (record, payload) = self.submission(user, view_id, fields, false);
        interactivity_request(record.id, &payload)
    }

    /// Like [`use_command`](Self::use_command), as the request Slack POSTs
    /// to the command's Request URL: `application/x-www-form-urlencoded`,
    /// one field per value (no `payload` field), `interaction` the
    /// command's id. The app answers in the HTTP response body (not
    /// recorded by the fake; see [`deliver_http`](Self::deliver_http)) or
    /// at the `response_url`.
    ///
    /// # Panics
    /// As [`use_command`](Self::use_command).
    pub fn use_command_http(
        &self,
        channel: &str,
        user: &str,
        command: &str,
        text: &str,
    ) -> HttpRequest {
        let ran = self.run_command(channel, user, command, text, false);
        let body = ran
            .fields
            .iter()
            .map(|(key, value)| format!("{key}={}", util::form_encode(value)))
            .collect::<Vec<_>>()
            .join("&");
        HttpRequest {
            content_type: "application/x-www-form-urlencoded",
            body,
            interaction: Some(ran.id),
        }
    }

    /// The signature headers for `request`, signed now.
    pub fn sign(&self, request: &HttpRequest) -> SignedHeaders {
        self.signer().sign_now(request.body.as_bytes())
    }

    /// POSTs `request` to `url` as Slack does, signed now.
    ///
    /// # Panics
    /// If the endpoint cannot be reached.
    pub async fn deliver_http(&self, url: &str, request: &HttpRequest) -> HttpDelivery {
        let signed = self.sign(request);
        self.deliver_http_signed(url, request, &signed).await
    }

    /// POSTs `request` to `url` with these signature headers (e.g. signed
    /// at an old timestamp with [`RequestSigner::sign_at`], or forged).
    ///
    /// # Panics
    /// If the endpoint cannot be reached.
    pub async fn deliver_http_signed(
        &self,
        url: &str,
        request: &HttpRequest,
        signed: &SignedHeaders,
    ) -> HttpDelivery {
        let client = reqwest::Client::builder()
            .no_proxy()
            .build()
            .expect("FakeSlack: HTTP client");
        let response = client
            .post(url)
            .header("Content-Type", request.content_type)
            .header(TIMESTAMP_HEADER, &signed.timestamp)
            .header(SIGNATURE_HEADER, &signed.signature)
            .header("User-Agent", "Slackbot 1.0 (+https://api.slack.com/robots)")
            .body(request.body.clone())
            .send()
            .await
            .unwrap_or_else(|error| panic!("FakeSlack: POST {url}: {error}"));
        let status = response.status().as_u16();
        let body = response.text().await.unwrap_or_default();
        let json = serde_json::from_str(&body).ok();
        HttpDelivery { status, body, json }
    }
}

fn interactivity_request(id: u64, payload: &Value) -> HttpRequest {
    HttpRequest {
        content_type: "application/x-www-form-urlencoded",
        body: format!("payload={}", util::form_encode(&payload.to_string())),
        interaction: Some(id),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn command_response_url_is_served_and_http_form_is_slacks() {
        let fake = FakeSlack::start().await;
        fake.add_channel(&Channel::public("C0GENERAL1", "general"));
        fake.add_user(&User::new("U0ALICE001", "alice"));
        let envelope = fake.use_command("C0GENERAL1", "U0ALICE001", "/askbridge", "status");
        let record = fake.command(&envelope).expect("the command");
        let url = record.response_url.clone().expect("a response URL");
        assert!(url.starts_with(&format!("{}/commands/{TEAM_ID}/", fake.base_url())));
        assert_eq!(
            fake.envelope(&envelope).map(|found| found.kind),
            Some(EnvelopeKind::SlashCommands)
        );

        let client = reqwest::Client::builder()
            .no_proxy()
            .build()
            .expect("client");
        let answer = client
            .post(&url)
            .json(&serde_json::json!({"response_type": "ephemeral", "text": "2 open"}))
            .send()
            .await
            .expect("POST");
        assert_eq!(answer.status().as_u16(), 200);
        let shown = fake.wait_for_ephemerals("U0ALICE001", 1).await;
        assert_eq!(shown[0].channel, "C0GENERAL1");
        assert_eq!(shown[0].text, "2 open");
        assert_eq!(shown[0].source, EphemeralSource::CommandResponse);
        assert_eq!(
            fake.wait_for_responses(record.id, 1).await.responses.len(),
            1
        );

        let unknown = client
            .post(format!(
                "{}/commands/{TEAM_ID}/7000000000999/nope",
                fake.base_url()
            ))
            .json(&serde_json::json!({"text": "hi"}))
            .send()
            .await
            .expect("POST");
        assert_eq!(unknown.status().as_u16(), 404);

        let request = fake.use_command_http("C0GENERAL1", "U0ALICE001", "/askbridge", "a b&c");
        assert_eq!(request.content_type, "application/x-www-form-urlencoded");
        assert!(
            request.body.starts_with(&format!(
                "token={VERIFICATION_TOKEN}&team_id={TEAM_ID}&team_domain={TEAM_DOMAIN}&\
                 channel_id=C0GENERAL1&channel_name=general&user_id=U0ALICE001&user_name=alice&\
                 command=%2Faskbridge&text=a+b%26c&api_app_id={APP_ID}&\
                 is_enterprise_install=false&response_url=http%3A%2F%2F"
            )),
            "{}",
            request.body
        );
        let fields = request.json();
        assert_eq!(fields["text"], "a b&c");
        assert_eq!(fields["command"], "/askbridge");
        let id = request.interaction.expect("the command's id");
        let record = fake.interaction(id).expect("recorded");
        assert_eq!(record.envelope_id, None);
        assert_eq!(
            fields["response_url"],
            record.response_url.expect("a URL").as_str()
        );
        assert_eq!(fields["trigger_id"], record.trigger_id.as_str());
        assert_eq!(fake.commands().len(), 2);
        let signed = fake.sign(&request);
        assert!(signed.signature.starts_with("v0="));
    }
}

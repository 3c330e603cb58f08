//! A fake of Discord — the REST API (v10) and the gateway WebSocket —
//! served on `127.0.0.1`, for end-to-end tests of a real Discord client
//! (serenity 0.12) without the internet.
//!
//! [`FakeDiscord::start`] binds a free port. Point serenity's `Http` at it
//! with the token [`TOKEN`]; `GET /gateway` then hands out the fake's own
//! WebSocket URL, so a serenity `Client` built on that `Http` connects to the
//! fake's gateway:
//!
//! ```no_run
//! # async fn demo() {
//! use askbridge_testkit::discord::{Channel, FakeDiscord, User, TOKEN};
//!
//! let fake = FakeDiscord::start().await;
//! // let http = serenity::http::HttpBuilder::new(TOKEN)
//! //     .proxy(fake.api_url())
//! //     .ratelimiter_disabled(true) // see "serenity and the proxy" below
//! //     .build();
//! let general = Channel::guild_text(810_000_000_000_000_001, 800_000_000_000_000_001, "general");
//! fake.add_channel(&general);
//! // … the bot sends a question with buttons …
//! let question = fake.wait_for_messages(general.id, 1).await.remove(0);
//! let alice = User::new(100_000_000_000_000_001, "alice");
//! let press = fake.press_button(&alice, question.id, "ask:1:yes");
//! let answer = fake.wait_for_response(press).await; // no sleeping
//! # let _ = (answer, TOKEN);
//! # }
//! ```
//!
//! # What it implements
//!
//! REST, under `/api/v10`: `GET /gateway` (no authorisation, as on
//! Discord), `GET /gateway/bot`, `GET /users/@me`,
//! `GET /oauth2/applications/@me` (its `verify_key` is the
//! [`InteractionSigner`]'s public key), `POST /users/@me/channels` (one DM
//! channel per user, stable id), `GET /channels/{id}`, `GET|POST
//! /channels/{id}/messages`, `GET|PATCH|DELETE
//! /channels/{id}/messages/{id}`, `GET|PUT|POST
//! /applications/{application.id}/commands` (global application commands:
//! `PUT` overwrites the whole list and answers it, `POST` creates or
//! replaces one by type and name, `201` when new, `200` when it replaced
//! one; a command keeps its `id` while its type and name, or the `id` sent
//! in a `PUT`, stay, and gets a new `version` when it changes; what was not
//! sent is answered with Discord's defaults: `default_member_permissions`
//! and `contexts` null, `dm_permission` true, `integration_types` `[0]`,
//! `nsfw` false), `GET|PATCH|DELETE
//! /applications/{application.id}/commands/{command.id}`, `POST
//! /interactions/{id}/{token}/callback` (types 1, 4, 5, 6, 7, 9;
//! `?with_response=true` answers the callback response object, otherwise
//! `204`), `POST /webhooks/{application}/{token}` (follow-ups) and `GET|PATCH|DELETE
//! /webhooks/{application}/{token}/messages/{@original|id}`. Other paths
//! answer `404 {"message": "404: Not Found", "code": 0}`, other methods
//! `405`. Every call is recorded ([`Call`]).
//!
//! Rules enforced like Discord's, with its error bodies (serenity surfaces
//! them as `Error::Http(HttpError::UnsuccessfulRequest(ErrorResponse {
//! status_code, error: DiscordJsonError { code, message, errors }, .. }))`):
//! `Authorization: Bot <token>` on bot routes, else `401 {"message": "401:
//! Unauthorized", "code": 0}` (interaction callbacks and webhooks are
//! authorised by the interaction token); `Invalid Form Body` (50035) with
//! the `errors` tree for content over 2000 characters, more than 5 action
//! rows, rows of 0 or more than 5 buttons, a select sharing its row, button
//! labels over 80, `custom_id`s missing, over 100 or repeated within the
//! message, selects with 0 or over 25 options, option texts over 100,
//! `min_values`/`max_values` out of 0–25/1–25 or above the option count,
//! modals with a title over 45, 0 or more than 5 rows, text inputs with
//! labels over 45, and replies to unknown messages; for application
//! commands, `Invalid Form Body` for a `type` other than 1–4, names not of
//! 1–32 characters, CHAT_INPUT names outside Discord's naming regex
//! (`STRING_TYPE_REGEX`) or with capitals (`APPLICATION_COMMAND_INVALID_NAME`),
//! CHAT_INPUT descriptions not of 1–100 characters, over 25 options (and
//! the same rules for options), a type and name repeated in one `PUT`
//! (`APPLICATION_COMMANDS_DUPLICATE_NAME`) and a `PUT` body that is not a
//! list; `400 30032 Maximum number of application commands reached` past
//! 100 CHAT_INPUT (15 USER, 15 MESSAGE) commands; `400 40041` renaming onto
//! a taken name; `404 10063 Unknown application command`; `403 20012 You
//! are not authorized to perform this action on this application` for
//! another application's id; `50006 Cannot send an
//! empty message`; `10003 Unknown Channel`; `10008 Unknown Message`;
//! `50005` for editing someone else's message; `403 50001 Missing Access` in
//! channels made inaccessible ([`FakeDiscord::deny_access`]); `403 50007
//! Cannot send messages to this user` in DMs with users who refuse them
//! ([`FakeDiscord::block_dms`]). Each interaction takes exactly one initial
//! response within 3 seconds of its creation
//! ([`FakeDiscordBuilder::interaction_deadline`],
//! [`FakeDiscord::expire_interaction`]): a second one gets `400 40060
//! Interaction has already been acknowledged.`, a late one `404 10062
//! Unknown interaction`. Follow-ups and `@original` need the initial
//! response first (`404 10015 Unknown Webhook`, as on Discord) and a token
//! younger than 15 minutes (`401 50027 Invalid Webhook Token`). UPDATE_MESSAGE
//! (7) edits the message the component was on; MODAL (9) opens a modal
//! ([`ModalRecord`]) that [`FakeDiscord::submit_modal`] submits. A person
//! uses a registered slash command with [`FakeDiscord::use_command`]
//! (INTERACTION_CREATE of type 2, APPLICATION_COMMAND); such an interaction
//! has no message, so it takes only 4, 5 and 9 (6 and 7 answer `400`), and
//! its message responses are of `type` 20 (CHAT_INPUT_COMMAND). EPHEMERAL
//! (flag 64) responses and follow-ups are seen only by the interacting user
//! ([`FakeDiscord::notices_for`]). Rate limits: [`RateLimits`].
//!
//! The gateway at `/gateway`: HELLO (op 10, [`DEFAULT_HEARTBEAT_INTERVAL`]),
//! heartbeat → ACK (op 11), IDENTIFY (op 2) → READY (op 0, `s` 1, with
//! `session_id`, `resume_gateway_url` pointing back at the fake, the bot
//! user, `application {id, flags}`, `guilds: []`), dispatches with
//! increasing `s`, RESUME (op 6) of a known session → the dispatches after
//! `seq`, then RESUMED; an unknown session → op 9 `false`; closing with 1000
//! or 1001 ends the session. Close codes: 4001 unknown opcode, 4002 decode
//! error, 4003 not authenticated, 4004 wrong token, 4005 second IDENTIFY,
//! 4013 invalid intents, 4014 `Disallowed intent(s).` for privileged intents the app may
//! not use ([`FakeDiscord::disallow_intents`]). Intents decide what is sent:
//! MESSAGE_CREATE needs GUILD_MESSAGES (guild channels and threads) or
//! DIRECT_MESSAGES (DMs), and without MESSAGE_CONTENT the `content`,
//! `embeds` and `components` of guild messages are empty — except the bot's
//! own messages and messages that mention the bot — as on Discord. The bot's
//! own messages are dispatched too (MESSAGE_CREATE for every non-ephemeral
//! message it makes), and so are interactions (INTERACTION_CREATE, whatever
//! the intents). [`FakeDiscord::drop_connection`] closes the socket
//! without a close frame; what is injected meanwhile is delivered when the
//! client resumes.
//!
//! Payloads are complete enough for serenity's strict model types
//! (`Interaction`, `Message`, `Ready`, `PrivateChannel`, `CurrentUser`,
//! `CurrentApplicationInfo`): ids as strings, `application_id`, `version`,
//! `token`, `app_permissions`, `locale`, `entitlements`,
//! `attachment_size_limit`, `authorizing_integration_owners`, `channel`,
//! full members with `flags`, `deaf`, `mute`, `joined_at`.
//!
//! # serenity and the proxy
//!
//! serenity 0.12.5 applies `HttpBuilder::proxy` only when its rate limiter
//! is disabled: the rate limiter builds every request with no proxy, so an
//! `Http` with a proxy and the rate limiter on sends its requests to
//! `https://discord.com` itself (serenity issue #1739). Tests must therefore
//! use `.proxy(fake.api_url()).ratelimiter_disabled(true)`. serenity
//! connects to the gateway URL it is given directly. serenity's builders also check some limits before sending
//! (`CreateMessage` content over 2000 characters fails with
//! `ModelError::MessageTooLong` without a request), so tests of the fake's
//! checks send raw bodies with `Http::send_message(channel, vec![], &json)`.
//!
//! # Deliberate differences
//!
//! Message content length counts Unicode scalar values (as serenity does).
//! Components V2, embeds, attachments, stickers and polls are stored as sent
//! but not validated. Only legacy action-row modals are understood. User ids
//! the fake has not seen are accepted as users named `user<id>`. Events
//! injected before any client identified are delivered after the first
//! READY (Discord would drop them). Edits are not dispatched as
//! MESSAGE_UPDATE. The `Retry-After` header is whole seconds, as Discord's,
//! so a rate-limited serenity waits at least one second. A few form-error
//! codes Discord does not document are approximated (the `type` of
//! a callback not allowed for the interaction answers `BASE_TYPE_CHOICES`;
//! the command limits' messages). Only global commands are kept: guild
//! commands and command permissions are not served, the 200 command
//! creates a day are not counted, localizations, option choices and the
//! 8000-character total of a command are not checked, and the naming
//! regex's letters and numbers are Rust's `char::is_alphabetic` and
//! `is_numeric`. The description of a USER or MESSAGE command is stored
//! as `""` and its options dropped, whatever was sent.
//! [`FakeDiscord::use_command`] sends no `options` values.

mod errors;
mod gateway;
mod model;
mod rate;
mod server;
mod sign;
mod state;
mod util;
mod validate;

use std::fmt;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::Value;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

pub use model::{
    ButtonInfo, Call, Channel, ChannelKind, DEFAULT_MEMBER_PERMISSIONS, GatewayStats, HttpDelivery,
    HttpInteraction, IncomingMessage, InteractionKind, InteractionRecord, InteractionResponse,
    Member, ModalRecord, Notice, NoticeKind, Revision, StoredMessage, User,
};
pub use rate::{RateLimits, Window};
pub use sign::{InteractionSigner, SIGNATURE_HEADER, SignedHeaders, TIMESTAMP_HEADER};
pub use state::State;

use crate::faults::{self, FaultCounts, FaultPlan, Faults};
use server::Inner;
use state::{Config, Press};

/// The bot token the fake accepts by default (send it as `Bot <token>`;
/// serenity adds the prefix itself).
pub const TOKEN: &str = "fake-discord-bot-token.askbridge.test";

/// The application's id; the bot user has the same id, as for applications
/// made since 2020.
pub const APPLICATION_ID: u64 = 1_250_000_000_000_000_001;

/// The bot user's id.
pub const BOT_ID: u64 = APPLICATION_ID;

/// The bot's username, unless the builder says otherwise.
pub const BOT_USERNAME: &str = "askbridge-test";

/// Application flags in READY and the application object:
/// GATEWAY_MESSAGE_CONTENT_LIMITED (1 << 19), as for unverified apps that
/// enabled the intent.
pub const APPLICATION_FLAGS: u64 = 1 << 19;

/// Discord's usual `heartbeat_interval` in HELLO.
pub const DEFAULT_HEARTBEAT_INTERVAL: Duration = Duration::from_millis(41_250);

/// How long after its creation an interaction takes its initial response.
pub const INTERACTION_DEADLINE: Duration = Duration::from_secs(3);

/// How long an interaction token works for follow-ups and edits.
pub const INTERACTION_TOKEN_LIFETIME: Duration = Duration::from_secs(15 * 60);

/// How long [`FakeDiscord::wait_for`] waits before failing the test.
pub const DEFAULT_WAIT_TIMEOUT: Duration = Duration::from_secs(20);

/// Options for a [`FakeDiscord`].
///
/// ```no_run
/// # async fn demo() {
/// use askbridge_testkit::discord::{FakeDiscord, RateLimits};
/// let fake = FakeDiscord::builder().rate_limits(RateLimits::DISCORD).start().await;
/// # let _ = fake;
/// # }
/// ```
#[derive(Debug, Clone)]
pub struct FakeDiscordBuilder {
    token: String,
    username: String,
    application_flags: u64,
    rate_limits: RateLimits,
    faults: Faults,
    wait_timeout: Duration,
    heartbeat_interval: Duration,
    deadline: Duration,
    token_lifetime: Duration,
    disallowed_intents: u64,
    signer: InteractionSigner,
}

impl Default for FakeDiscordBuilder {
    fn default() -> Self {
        FakeDiscordBuilder {
            token: TOKEN.to_owned(),
            username: BOT_USERNAME.to_owned(),
            application_flags: APPLICATION_FLAGS,
            rate_limits: RateLimits::OFF,
            faults: Faults::NONE,
            wait_timeout: DEFAULT_WAIT_TIMEOUT,
            heartbeat_interval: DEFAULT_HEARTBEAT_INTERVAL,
            deadline: INTERACTION_DEADLINE,
            token_lifetime: INTERACTION_TOKEN_LIFETIME,
            disallowed_intents: 0,
            signer: InteractionSigner::default(),
        }
    }
}

impl FakeDiscordBuilder {
    /// The accepted bot token (without `Bot `).
    #[must_use]
    pub fn token(mut self, token: impl Into<String>) -> Self {
        self.token = token.into();
        self
    }

    /// The bot's username.
    #[must_use]
    pub fn bot_username(mut self, username: impl Into<String>) -> Self {
        self.username = username.into();
        self
    }

    /// The application flags in READY and `GET /oauth2/applications/@me`.
    #[must_use]
    pub fn application_flags(mut self, flags: u64) -> Self {
        self.application_flags = flags;
        self
    }

    /// Faults injected into the API's requests (default:
    /// [`Faults::NONE`]).
    #[must_use]
    pub fn faults(mut self, faults: Faults) -> Self {
        self.faults = faults;
        self
    }

    /// Rate limits (default: [`RateLimits::OFF`]).
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

    /// The `heartbeat_interval` sent in HELLO (default
    /// [`DEFAULT_HEARTBEAT_INTERVAL`]).
    #[must_use]
    pub fn heartbeat_interval(mut self, interval: Duration) -> Self {
        self.heartbeat_interval = interval;
        self
    }

    /// How long an interaction accepts its initial response (default
    /// [`INTERACTION_DEADLINE`], Discord's 3 seconds).
    #[must_use]
    pub fn interaction_deadline(mut self, deadline: Duration) -> Self {
        self.deadline = deadline;
        self
    }

    /// How long interaction tokens work for webhooks (default
    /// [`INTERACTION_TOKEN_LIFETIME`]).
    #[must_use]
    pub fn interaction_token_lifetime(mut self, lifetime: Duration) -> Self {
        self.token_lifetime = lifetime;
        self
    }

    /// Privileged intents the application is not allowed: IDENTIFY asking
    /// for any of them is closed with 4014 (e.g. `1 << 15` for
    /// MESSAGE_CONTENT).
    #[must_use]
    pub fn disallowed_intents(mut self, intents: u64) -> Self {
        self.disallowed_intents = intents;
        self
    }

    /// The application's signing key (default: [`InteractionSigner::default`]).
    #[must_use]
    pub fn signer(mut self, signer: InteractionSigner) -> Self {
        self.signer = signer;
        self
    }

    /// Binds `127.0.0.1:0` and serves in background tasks of the current
    /// tokio runtime.
    ///
    /// # Panics
    /// If no port can be bound.
    pub async fn start(self) -> FakeDiscord {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("FakeDiscord: bind 127.0.0.1:0");
        let addr = listener.local_addr().expect("FakeDiscord: local address");
        let bot = User::new(BOT_ID, self.username).bot();
        let config = Config {
            token: self.token.clone(),
            bot,
            application_id: APPLICATION_ID,
            application_flags: self.application_flags,
            ws_url: format!("ws://{addr}/gateway"),
            deadline: self.deadline,
            token_lifetime: self.token_lifetime,
            rate_limits: self.rate_limits,
            heartbeat_interval_ms: u64::try_from(self.heartbeat_interval.as_millis())
                .unwrap_or(u64::MAX),
            signer: self.signer,
        };
        let mut state = State::new(config);
        state.gateway.disallowed = self.disallowed_intents;
        let inner = Arc::new(Inner::new(state));
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
                tracing::error!(%error, "fake Discord server failed");
            }
        });
        FakeDiscord {
            inner,
            addr,
            token: self.token,
            wait_timeout: self.wait_timeout,
            faults,
            shutdown: Some(shutdown),
            _server: server,
        }
    }
}

/// A running fake Discord. Dropping it shuts it down: gateway connections
/// are dropped, the port closes.
pub struct FakeDiscord {
    inner: Arc<Inner>,
    addr: SocketAddr,
    faults: Arc<FaultPlan>,
    token: String,
    wait_timeout: Duration,
    shutdown: Option<oneshot::Sender<()>>,
    /// Ends by itself after `shutdown` (graceful: in-flight requests finish).
    _server: JoinHandle<()>,
}

impl fmt::Debug for FakeDiscord {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FakeDiscord")
            .field("api_url", &self.api_url())
            .finish_non_exhaustive()
    }
}

impl Drop for FakeDiscord {
    fn drop(&mut self) {
        self.inner.mutate(|state| state.closed = true);
        if let Some(shutdown) = self.shutdown.take() {
            let _ = shutdown.send(());
        }
    }
}

/// Starting, addressing.
impl FakeDiscord {
    /// A fake with the defaults: token [`TOKEN`], no rate limits, Discord's
    /// deadlines.
    pub async fn start() -> FakeDiscord {
        FakeDiscord::builder().start().await
    }

    /// Options before starting.
    pub fn builder() -> FakeDiscordBuilder {
        FakeDiscordBuilder::default()
    }

    /// What serenity's `HttpBuilder::proxy` takes: `http://127.0.0.1:PORT`
    /// (serenity replaces `https://discord.com` with it, so paths are
    /// `/api/v10/…`).
    pub fn api_url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// The gateway URL `GET /gateway` hands out: `ws://127.0.0.1:PORT/gateway`.
    pub fn gateway_url(&self) -> String {
        format!("ws://{}/gateway", self.addr)
    }

    /// The address served.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The accepted bot token (without `Bot `).
    pub fn token(&self) -> &str {
        &self.token
    }

    /// The bot's user.
    pub fn bot_user(&self) -> User {
        self.inspect(|state| state.bot_user().clone())
    }

    /// The application id ([`APPLICATION_ID`]).
    pub fn application_id(&self) -> u64 {
        APPLICATION_ID
    }

    /// The application's signing key.
    pub fn signer(&self) -> InteractionSigner {
        self.inspect(|state| state.signer().clone())
    }

    /// The application's public key, hex (for serenity's `Verifier::new`).
    pub fn public_key_hex(&self) -> String {
        self.signer().public_key_hex()
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

    /// Changes how long new and pending interactions accept their initial
    /// response.
    pub fn set_interaction_deadline(&self, deadline: Duration) {
        self.inner.mutate(|state| state.set_deadline(deadline));
    }
}

/// Reading the state.
impl FakeDiscord {
    /// Runs `read` on the current state.
    pub fn inspect<T>(&self, read: impl FnOnce(&State) -> T) -> T {
        read(&self.inner.lock())
    }

    /// Every request answered so far, in order.
    pub fn calls(&self) -> Vec<Call> {
        self.inspect(|state| state.calls().to_vec())
    }

    /// The calls of `method` on `route` (e.g. `"POST",
    /// "/channels/{channel.id}/messages"`).
    pub fn calls_to(&self, method: &str, route: &str) -> Vec<Call> {
        self.inspect(|state| state.calls_to(method, route).into_iter().cloned().collect())
    }

    /// One message as it is now.
    pub fn message(&self, id: u64) -> Option<StoredMessage> {
        self.inspect(|state| state.message(id).cloned())
    }

    /// A message as the REST API renders it now.
    pub fn message_json(&self, id: u64) -> Option<Value> {
        self.inspect(|state| state.message_json(id))
    }

    /// The messages of a channel, in order (ephemeral included, deleted not).
    pub fn messages_in(&self, channel_id: u64) -> Vec<StoredMessage> {
        self.inspect(|state| state.messages_in(channel_id).into_iter().cloned().collect())
    }

    /// Every message the bot made, in order, as it is now.
    pub fn bot_messages(&self) -> Vec<StoredMessage> {
        self.inspect(|state| state.bot_messages().into_iter().cloned().collect())
    }

    /// An interaction and how it was answered.
    pub fn interaction(&self, id: u64) -> Option<InteractionRecord> {
        self.inspect(|state| state.interaction(id).cloned())
    }

    /// The follow-ups of an interaction.
    pub fn followups(&self, interaction_id: u64) -> Vec<StoredMessage> {
        self.inspect(|state| {
            state
                .followups(interaction_id)
                .into_iter()
                .cloned()
                .collect()
        })
    }

    /// The modal opened in answer to interaction `opened_by`.
    pub fn modal(&self, opened_by: u64) -> Option<ModalRecord> {
        self.inspect(|state| state.modal(opened_by).cloned())
    }

    /// The registered global application commands, in order, as `GET
    /// /applications/{application.id}/commands` answers them (`id`,
    /// `application_id`, `version`, `type`, `name`, `description`, …).
    pub fn commands(&self) -> Vec<Value> {
        self.inspect(|state| state.commands().into_iter().cloned().collect())
    }

    /// What `user_id` was shown privately (see [`State::notices_for`]).
    pub fn notices_for(&self, user_id: u64) -> Vec<Notice> {
        self.inspect(|state| state.notices_for(user_id))
    }

    /// The gateway's counters.
    pub fn gateway_stats(&self) -> GatewayStats {
        self.inspect(|state| state.gateway_stats().clone())
    }

    /// How many `429`s were returned.
    pub fn rate_limited_count(&self) -> usize {
        self.inspect(State::rate_limited_count)
    }
}

/// Waiting, without sleeps: each condition is re-checked after every change
/// to the state.
impl FakeDiscord {
    /// Waits until `check` returns `Some`, re-checking after every change
    /// (a call answered, an event injected, a gateway payload sent or
    /// received…), and returns its value.
    ///
    /// `check` runs with the state locked: it must not call this
    /// `FakeDiscord`'s methods (that would deadlock); read the `State`.
    ///
    /// # Panics
    /// After the wait timeout (20 s by default), naming `what` and listing
    /// the calls so far.
    pub async fn wait_for<T>(&self, what: &str, check: impl FnMut(&State) -> Option<T>) -> T {
        let timeout = self.wait_timeout;
        self.inner
            .wait_for(timeout, check, |state| {
                format!(
                    "FakeDiscord: gave up after {timeout:?} waiting for {what}\ngateway: {:?}\ncalls so \
                     far:\n{}",
                    state.gateway_stats(),
                    state.describe_calls()
                )
            })
            .await
    }

    /// Waits for a call of `method` on `route` for which `matches` holds,
    /// looking at the whole log (earlier calls count), and returns it.
    pub async fn wait_for_call(
        &self,
        method: &str,
        route: &str,
        mut matches: impl FnMut(&Call) -> bool,
    ) -> Call {
        let what = format!("a matching {method} {route}");
        self.wait_for(&what, |state| {
            state
                .calls_to(method, route)
                .into_iter()
                .find(|call| matches(call))
                .cloned()
        })
        .await
    }

    /// Waits until channel `channel_id` has at least `count` messages and
    /// returns the first `count`.
    pub async fn wait_for_messages(&self, channel_id: u64, count: usize) -> Vec<StoredMessage> {
        let what = format!("{count} message(s) in channel {channel_id}");
        self.wait_for(&what, |state| {
            let messages = state.messages_in(channel_id);
            (messages.len() >= count).then(|| messages.into_iter().take(count).cloned().collect())
        })
        .await
    }

    /// Waits until the bot made at least `count` messages and returns the
    /// first `count`, as they are now.
    pub async fn wait_for_bot_messages(&self, count: usize) -> Vec<StoredMessage> {
        let what = format!("{count} bot message(s)");
        self.wait_for(&what, |state| {
            let messages = state.bot_messages();
            (messages.len() >= count).then(|| messages.into_iter().take(count).cloned().collect())
        })
        .await
    }

    /// Waits until at least `count` global application commands are
    /// registered and returns the first `count`.
    pub async fn wait_for_commands(&self, count: usize) -> Vec<Value> {
        let what = format!("{count} registered application command(s)");
        self.wait_for(&what, |state| {
            let commands = state.commands();
            (commands.len() >= count).then(|| commands.into_iter().take(count).cloned().collect())
        })
        .await
    }

    /// Waits until interaction `id` has its initial response.
    pub async fn wait_for_response(&self, id: u64) -> InteractionResponse {
        let what = format!("an initial response to interaction {id}");
        self.wait_for(&what, |state| state.interaction(id)?.response.clone())
            .await
    }

    /// Waits until interaction `id` has at least `count` follow-ups.
    pub async fn wait_for_followups(&self, id: u64, count: usize) -> Vec<StoredMessage> {
        let what = format!("{count} follow-up(s) to interaction {id}");
        self.wait_for(&what, |state| {
            let followups = state.followups(id);
            (followups.len() >= count).then(|| followups.into_iter().take(count).cloned().collect())
        })
        .await
    }

    /// Waits until message `id` was edited at least `count` times and
    /// returns it.
    pub async fn wait_for_edits(&self, id: u64, count: usize) -> StoredMessage {
        let what = format!("{count} edit(s) of message {id}");
        self.wait_for(&what, |state| {
            state
                .message(id)
                .filter(|message| message.edit_count() >= count)
                .cloned()
        })
        .await
    }

    /// Waits until interaction `opened_by` was answered with a modal.
    pub async fn wait_for_modal(&self, opened_by: u64) -> ModalRecord {
        let what = format!("a modal in answer to interaction {opened_by}");
        self.wait_for(&what, |state| state.modal(opened_by).cloned())
            .await
    }

    /// Waits until `user_id` was shown at least `count` notices.
    pub async fn wait_for_notices(&self, user_id: u64, count: usize) -> Vec<Notice> {
        let what = format!("{count} notice(s) for user {user_id}");
        self.wait_for(&what, |state| {
            let notices = state.notices_for(user_id);
            (notices.len() >= count).then_some(notices)
        })
        .await
    }

    /// Waits until a gateway client got READY; returns the session id.
    pub async fn wait_for_ready(&self) -> String {
        self.wait_for("a gateway session to be READY", |state| {
            (state.gateway_stats().ready > 0)
                .then(|| state.session_id().map(str::to_owned))
                .flatten()
        })
        .await
    }

    /// Waits until `count` IDENTIFY payloads were received.
    pub async fn wait_for_identifies(&self, count: usize) {
        let what = format!("{count} IDENTIFY payload(s)");
        self.wait_for(&what, |state| {
            (state.gateway_stats().identifies >= count).then_some(())
        })
        .await;
    }

    /// Waits until `count` sessions were resumed (RESUMED sent).
    pub async fn wait_for_resumed(&self, count: usize) {
        let what = format!("{count} resumed session(s)");
        self.wait_for(&what, |state| {
            (state.gateway_stats().resumed >= count).then_some(())
        })
        .await;
    }

    /// Waits until the gateway sent a close frame; returns the first
    /// `(code, reason)`.
    pub async fn wait_for_close(&self) -> (u16, String) {
        self.wait_for("a gateway close frame", |state| {
            state.gateway_stats().closes.first().cloned()
        })
        .await
    }

    /// Waits until the current session has delivered every dispatch made
    /// so far — e.g. after [`drop_connection`](Self::drop_connection) and
    /// an injection, until the client resumed and got it.
    pub async fn wait_for_gateway_idle(&self) {
        self.wait_for("the gateway to deliver every dispatch", |state| {
            let stats = state.gateway_stats();
            (stats.ready > 0 && state.gateway.backlog.is_empty() && state.gateway.delivered())
                .then_some(())
        })
        .await;
    }
}

/// Acting as Discord's users, and test controls.
impl FakeDiscord {
    /// Registers a user (or updates it); users are also registered when
    /// they act.
    pub fn add_user(&self, user: &User) {
        self.inner.mutate(|state| state.add_user(user));
    }

    /// Registers a channel the bot can see (a guild channel, a thread, or a
    /// DM). Sending to an unregistered channel answers `10003 Unknown
    /// Channel`.
    pub fn add_channel(&self, channel: &Channel) {
        self.inner.mutate(|state| state.add_channel(channel));
    }

    /// The DM channel with `user`, made on first use (the same id
    /// `POST /users/@me/channels` answers).
    pub fn dm_channel(&self, user: &User) -> u64 {
        self.inner.mutate(|state| state.dm_channel(user))
    }

    /// Sets `user`'s membership of guild `guild_id` (nickname, roles,
    /// permissions), used in MESSAGE_CREATE and interactions there.
    pub fn set_member(&self, guild_id: u64, user: &User, member: Member) {
        self.inner
            .mutate(|state| state.set_member(guild_id, user, member));
    }

    /// The bot loses access to the channel: its calls there answer `403
    /// 50001 Missing Access`.
    pub fn deny_access(&self, channel_id: u64) {
        self.inner
            .mutate(|state| state.set_access(channel_id, false));
    }

    /// Undoes [`deny_access`](Self::deny_access).
    pub fn allow_access(&self, channel_id: u64) {
        self.inner
            .mutate(|state| state.set_access(channel_id, true));
    }

    /// `user` does not accept DMs from the bot: the DM channel can still be
    /// opened, but messages to it answer `403 50007 Cannot send messages to
    /// this user`.
    pub fn block_dms(&self, user: &User) {
        self.inner
            .mutate(|state| state.set_dms_allowed(user.id, false));
    }

    /// Undoes [`block_dms`](Self::block_dms).
    pub fn allow_dms(&self, user: &User) {
        self.inner
            .mutate(|state| state.set_dms_allowed(user.id, true));
    }

    /// The application may not use these privileged intents from now on:
    /// an IDENTIFY asking for one is closed with `4014 Disallowed intent(s).`
    /// (e.g. `1 << 15`, MESSAGE_CONTENT).
    pub fn disallow_intents(&self, intents: u64) {
        self.inner
            .mutate(|state| state.gateway.disallowed |= intents);
    }

    /// Allows every privileged intent again.
    pub fn allow_all_intents(&self) {
        self.inner.mutate(|state| state.gateway.disallowed = 0);
    }

    /// Makes interaction `id` older than its deadline: its initial response
    /// will be refused with `10062 Unknown interaction`, and the user sees
    /// "This interaction failed" if none was given.
    pub fn expire_interaction(&self, id: u64) {
        self.inner.mutate(|state| state.expire_interaction(id));
    }

    /// Drops every gateway connection without a close frame (as a network
    /// failure would). Sessions stay resumable, and what is dispatched until
    /// the client resumes is replayed then.
    pub fn drop_connection(&self) {
        self.inner.mutate(|state| state.gateway.drop_all());
    }

    /// A user writes a message: stored in its channel and dispatched as
    /// MESSAGE_CREATE. Returns the message id.
    ///
    /// # Panics
    /// If the channel is unknown, the author is not the DM's recipient, or
    /// the message replied to is not in the channel.
    pub fn inject_message(&self, message: IncomingMessage) -> u64 {
        self.inner.mutate(|state| state.inject_message(message))
    }

    /// Dispatches any event (`t` = `name`, `d` = `data`) as is; returns its
    /// sequence number if a session got it.
    pub fn inject_dispatch(&self, name: &str, data: Value) -> Option<u64> {
        self.inner.mutate(|state| state.inject_raw(name, data))
    }

    /// `user` presses the button `custom_id` of message `message_id`:
    /// INTERACTION_CREATE (type 3, `component_type` 2) over the gateway.
    /// Returns the interaction id.
    ///
    /// # Panics
    /// If the message has no such (non-link, enabled) button, or is
    /// ephemeral to someone else.
    pub fn press_button(&self, user: &User, message_id: u64, custom_id: &str) -> u64 {
        self.inner
            .mutate(|state| state.press(user, message_id, Press::Button(custom_id), true))
            .id
    }

    /// `user` picks `values` in the string select `custom_id` of message
    /// `message_id`: INTERACTION_CREATE (type 3, `component_type` 3,
    /// `data.values`). Returns the interaction id.
    ///
    /// # Panics
    /// If there is no such select, a value is not one of its options, or
    /// the number of values is outside `min_values..=max_values`.
    pub fn choose(&self, user: &User, message_id: u64, custom_id: &str, values: &[&str]) -> u64 {
        self.inner
            .mutate(|state| state.press(user, message_id, Press::Select(custom_id, values), true))
            .id
    }

    /// `user` submits the modal the bot opened in answer to interaction
    /// `opened_by`, with `(custom_id, value)` for its text inputs (others
    /// empty): INTERACTION_CREATE (type 5, `data.components[].components[]
    /// .value`). Returns the interaction id.
    ///
    /// # Panics
    /// If no modal is open there, it was submitted already, a field is not
    /// one of its inputs, or a value breaks `required`/`min_length`/
    /// `max_length` (the Discord client would not let it through).
    pub fn submit_modal(&self, user: &User, opened_by: u64, fields: &[(&str, &str)]) -> u64 {
        self.inner
            .mutate(|state| state.submit_modal(user, opened_by, fields, true))
            .id
    }

    /// `user` uses the registered slash command `name` in `channel_id` (a
    /// guild channel, a thread, or a DM channel the fake knows):
    /// INTERACTION_CREATE (type 2, APPLICATION_COMMAND, `data {id, name,
    /// type: 1}`) over the gateway, with `member` in guilds and `user` in
    /// DMs. Returns the interaction id; its answer is read like a button's
    /// ([`wait_for_response`](Self::wait_for_response),
    /// [`notices_for`](Self::notices_for) for ephemeral replies).
    ///
    /// # Panics
    /// If no CHAT_INPUT command of that name is registered, or the Discord
    /// client would not offer it there: the channel is unknown, its
    /// `contexts` (or `dm_permission: false`) exclude the channel, the
    /// member lacks its `default_member_permissions` or
    /// USE_APPLICATION_COMMANDS, or the DM is someone else's.
    pub fn use_command(&self, user: &User, channel_id: u64, name: &str) -> u64 {
        self.inner
            .mutate(|state| state.use_command(user, channel_id, name, true))
            .id
    }

    /// Like [`use_command`](Self::use_command), for an HTTP interactions
    /// endpoint.
    pub fn use_command_http(&self, user: &User, channel_id: u64, name: &str) -> HttpInteraction {
        self.inner
            .mutate(|state| state.use_command(user, channel_id, name, false))
    }

    /// Like [`press_button`](Self::press_button), but for an HTTP
    /// interactions endpoint: the interaction is registered (callbacks and
    /// webhooks work) but not sent over the gateway; POST its body yourself
    /// or with [`deliver_http_interaction`](Self::deliver_http_interaction).
    pub fn press_button_http(
        &self,
        user: &User,
        message_id: u64,
        custom_id: &str,
    ) -> HttpInteraction {
        self.inner
            .mutate(|state| state.press(user, message_id, Press::Button(custom_id), false))
    }

    /// Like [`choose`](Self::choose), for an HTTP interactions endpoint.
    pub fn choose_http(
        &self,
        user: &User,
        message_id: u64,
        custom_id: &str,
        values: &[&str],
    ) -> HttpInteraction {
        self.inner
            .mutate(|state| state.press(user, message_id, Press::Select(custom_id, values), false))
    }

    /// Like [`submit_modal`](Self::submit_modal), for an HTTP interactions
    /// endpoint.
    pub fn submit_modal_http(
        &self,
        user: &User,
        opened_by: u64,
        fields: &[(&str, &str)],
    ) -> HttpInteraction {
        self.inner
            .mutate(|state| state.submit_modal(user, opened_by, fields, false))
    }

    /// A PING (type 1), as Discord sends to check an interactions endpoint
    /// (which must answer `{"type": 1}`).
    pub fn ping_http(&self) -> HttpInteraction {
        self.inner.mutate(State::ping)
    }

    /// Signs an interaction body as Discord would send it.
    pub fn sign(&self, interaction: &HttpInteraction) -> SignedHeaders {
        self.signer().sign_now(&interaction.body_bytes())
    }

    /// Applies an HTTP endpoint's inline answer (an interaction response
    /// object) as the interaction's initial response, with the same rules
    /// as the callback route. `Err` carries Discord's error body.
    pub fn respond_inline(
        &self,
        interaction: &HttpInteraction,
        response: &Value,
    ) -> Result<(), Value> {
        self.inner.mutate(|state| {
            let reply = state.callback(
                interaction.id,
                &interaction.token,
                response,
                Instant::now(),
                true,
                false,
            );
            if reply.is_success() {
                Ok(())
            } else {
                Err(reply.body.unwrap_or(Value::Null))
            }
        })
    }

    /// POSTs a signed interaction to an HTTP interactions endpoint, as
    /// Discord does (`X-Signature-Ed25519`, `X-Signature-Timestamp`, JSON
    /// body), and applies a JSON answer with a `type` as the initial
    /// response ([`respond_inline`](Self::respond_inline)).
    ///
    /// # Panics
    /// If the endpoint cannot be reached.
    pub async fn deliver_http_interaction(
        &self,
        url: &str,
        interaction: &HttpInteraction,
    ) -> HttpDelivery {
        let body = interaction.body_bytes();
        let signed = self.signer().sign_now(&body);
        let client = reqwest::Client::builder()
            .no_proxy()
            .build()
            .expect("FakeDiscord: HTTP client");
        let response = client
            .post(url)
            .header(SIGNATURE_HEADER, &signed.signature)
            .header(TIMESTAMP_HEADER, &signed.timestamp)
            .header("Content-Type", "application/json")
            .header(
                "User-Agent",
                "Discord-Interactions/1.0 (+https://discord.com)",
            )
            .body(body)
            .send()
            .await
            .unwrap_or_else(|error| panic!("FakeDiscord: POST {url}: {error}"));
        let status = response.status().as_u16();
        let bytes = response.bytes().await.unwrap_or_default();
        let body: Option<Value> = serde_json::from_slice(&bytes).ok();
        let inline_response = body
            .as_ref()
            .filter(|body| (200..300).contains(&status) && body.get("type").is_some())
            .map(|answer| self.respond_inline(interaction, answer));
        HttpDelivery {
            status,
            body,
            inline_response,
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;
    use serenity::all::{
        ApplicationId, Command, CreateCommand, ErrorResponse, HttpBuilder, HttpError, InteractionId,
    };

    use super::*;

    const GUILD: u64 = 800_000_000_000_000_001;
    const GENERAL: u64 = 810_000_000_000_000_001;

    /// A slash command end to end through serenity's `Http`: registered,
    /// used, answered ephemerally, the answer read back.
    #[tokio::test]
    async fn slash_command_round_trip_with_serenity() {
        let fake = FakeDiscord::start().await;
        fake.add_channel(&Channel::guild_text(GENERAL, GUILD, "general"));
        let http = HttpBuilder::new(TOKEN)
            .proxy(fake.api_url())
            .ratelimiter_disabled(true)
            .application_id(ApplicationId::new(APPLICATION_ID))
            .build();
        let registered = Command::set_global_commands(
            &http,
            vec![
                CreateCommand::new("ask").description("Ask the team"),
                CreateCommand::new("pending").description("What is pending"),
            ],
        )
        .await
        .expect("the fake takes serenity's commands");
        assert_eq!(registered.len(), 2);
        let commands = fake.wait_for_commands(2).await;
        assert_eq!(commands[0]["name"], "ask");
        assert_eq!(commands[0]["id"], registered[0].id.to_string());
        assert_eq!(fake.commands(), commands);
        assert!(commands[0].get("name_localizations").is_none());
        let listed = http.get_global_commands().await.expect("listed");
        assert_eq!(listed.len(), 2);
        let calls = fake.calls_to("PUT", "/applications/{application.id}/commands");
        assert_eq!(calls.len(), 1);
        assert_eq!(calls[0].status, 200);

        let alice = User::new(100_000_000_000_000_001, "alice");
        let id = fake.use_command(&alice, GENERAL, "ask");
        let record = fake.interaction(id).expect("recorded");
        assert_eq!(record.kind, InteractionKind::Command);

        let update = json!({"type": 7, "data": {"content": "no message to update"}});
        let refused = http
            .create_interaction_response(InteractionId::new(id), &record.token, &update, vec![])
            .await
            .expect_err("a command has no message to update");
        match refused {
            serenity::Error::Http(HttpError::UnsuccessfulRequest(ErrorResponse {
                status_code,
                error,
                ..
            })) => {
                assert_eq!(status_code.as_u16(), 400);
                assert_eq!(error.code, 50035);
            }
            other => panic!("unexpected error: {other:?}"),
        }

        let answer = json!({"type": 4, "data": {"content": "Only you see this", "flags": 64}});
        http.create_interaction_response(InteractionId::new(id), &record.token, &answer, vec![])
            .await
            .expect("the ephemeral answer is accepted");
        let response = fake.wait_for_response(id).await;
        assert_eq!(response.kind, 4);
        assert_eq!(response.data["content"], "Only you see this");
        assert_eq!(response.data["flags"], 64);
        assert!(response.is_ephemeral());
        let notices = fake.wait_for_notices(alice.id, 1).await;
        assert_eq!(notices[0].kind, NoticeKind::Ephemeral);
        assert_eq!(notices[0].text, "Only you see this");
    }
}

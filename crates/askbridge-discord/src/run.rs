//! Discord's REST API and gateway, through serenity: the only async code of
//! this crate.
//!
//! Rate limits: against Discord itself, requests go through serenity's
//! ratelimiter, which reads the `X-RateLimit-*` headers of every answer,
//! waits before a request would exceed its bucket, and on a 429 waits the
//! `Retry-After` Discord names and sends again. With an `api_url` (a REST
//! proxy, or a local fake in tests) the ratelimiter is off: serenity 0.12's
//! ratelimiter builds its requests for `https://discord.com` whatever the
//! proxy (`Ratelimiter::perform` passes no proxy), so keeping it on would
//! send every request, and the token, past the proxy to Discord. Rate
//! limiting is then the proxy's job (serenity pairs `proxy` with
//! `ratelimiter_disabled` for that reason), and a 429 that reaches us is
//! classified [`PlatformFailure::RetryAfter`].
//!
//! What fails anyway is classified ([`PlatformFailure`]) so the caller can retry
//! passing failures and give up on permanent ones. Every request has a
//! timeout (serenity's own client has none).

use std::future::Future;
use std::num::NonZeroU64;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use askbridge_core::failure::{PlatformFailure, SetupError};
use askbridge_core::render::Locale;
use reqwest::StatusCode;
use serenity::builder::{CreateInteractionResponse, CreateInteractionResponseFollowup};
use serenity::client::{ClientBuilder, Context, EventHandler};
use serenity::gateway::GatewayError;
use serenity::http::{Http, HttpBuilder, HttpError};
use serenity::model::application::{ApplicationFlags, CurrentApplicationInfo, Interaction};
use serenity::model::channel::Message as DiscordMessage;
use serenity::model::gateway::{GatewayIntents, Ready};
use serenity::model::id::{ChannelId, MessageId, UserId};
use serenity::model::user::CurrentUser;

use crate::parse::{self, Event, InteractionRef};
use crate::render::Message;

/// Discord's own API origin; an `api_url` equal to it is no proxy.
const DISCORD_ORIGIN: &str = "https://discord.com";
/// Longest wait for a TCP/TLS connection.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// Longest wait for one request's answer.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(30);
/// What a 429 is retried after when its wait is not known: serenity keeps
/// neither the `Retry-After` header nor the body's `retry_after` of an
/// error answer.
const UNKNOWN_RETRY_AFTER_SECS: u64 = 1;
/// The first and the longest wait between gateway connection attempts.
const GATEWAY_BACKOFF: (Duration, Duration) = (Duration::from_secs(1), Duration::from_secs(60));
/// What askbridge listens to: messages in servers and DMs, with their text.
/// Interactions arrive whatever the intents.
const INTENTS: GatewayIntents = GatewayIntents::GUILD_MESSAGES
    .union(GatewayIntents::DIRECT_MESSAGES)
    .union(GatewayIntents::MESSAGE_CONTENT);

/// Whether an application may receive message content (the privileged
/// Message Content intent askbridge asks for): its flags have
/// `GATEWAY_MESSAGE_CONTENT` (verified apps) or
/// `GATEWAY_MESSAGE_CONTENT_LIMITED` (apps in under 100 servers, switched
/// on in the developer portal). `None` when Discord did not say.
pub fn message_content_allowed(application: &CurrentApplicationInfo) -> Option<bool> {
    application.flags.map(|flags| {
        flags.intersects(
            ApplicationFlags::GATEWAY_MESSAGE_CONTENT
                | ApplicationFlags::GATEWAY_MESSAGE_CONTENT_LIMITED,
        )
    })
}

/// Classifies a serenity error.
///
/// A 429 is [`PlatformFailure::RetryAfter`] of 1 s: it only reaches us when
/// serenity's ratelimiter is off (with an `api_url`) or the answer named no
/// wait, and serenity drops the body's `retry_after` with the rest of an
/// error answer it cannot read as a Discord error.
pub fn classify(error: &serenity::Error) -> PlatformFailure {
    use serenity::Error as E;
    match error {
        E::Http(HttpError::UnsuccessfulRequest(answer)) => {
            classify_status(answer.status_code, answer.error.code, || {
                HttpError::UnsuccessfulRequest(answer.clone()).to_string()
            })
        }
        E::Http(HttpError::Request(error)) => classify_request(error),
        E::Http(HttpError::InvalidHeader(_)) => PlatformFailure::Permanent(
            "the Discord bot token is not a valid HTTP header value".to_owned(),
        ),
        E::Http(
            error @ (HttpError::Url(_) | HttpError::InvalidScheme | HttpError::InvalidPort),
        ) => PlatformFailure::Permanent(format!("bad Discord API URL: {error}")),
        E::Http(error @ (HttpError::RateLimitI64F64 | HttpError::RateLimitUtf8)) => {
            PlatformFailure::Transient(format!("garbled rate limit headers: {error}"))
        }
        E::Json(error) => {
            PlatformFailure::Transient(format!("unreadable answer from Discord: {error}"))
        }
        E::Decode(what, _) => {
            PlatformFailure::Transient(format!("unreadable answer from Discord: {what}"))
        }
        E::Io(error) => PlatformFailure::Transient(error.to_string()),
        E::Tungstenite(error) => PlatformFailure::Transient(error.to_string()),
        other => PlatformFailure::Permanent(other.to_string()),
    }
}

/// An answer with an error status. `code` is Discord's JSON error code
/// (-1 when the body was not a Discord error); `reason` renders Discord's
/// message with its field errors ("Invalid Form Body (content: …)").
fn classify_status(
    status: StatusCode,
    code: isize,
    reason: impl FnOnce() -> String,
) -> PlatformFailure {
    let plain = || match status.canonical_reason() {
        Some(name) => format!("Discord answered {} {name}", status.as_u16()),
        None => format!("Discord answered {}", status.as_u16()),
    };
    let words = || if code == -1 { plain() } else { reason() };
    if status == StatusCode::TOO_MANY_REQUESTS {
        PlatformFailure::RetryAfter(UNKNOWN_RETRY_AFTER_SECS)
    } else if status.is_server_error() || status == StatusCode::REQUEST_TIMEOUT {
        PlatformFailure::Transient(words())
    } else {
        // 400 Invalid Form Body (50035), 401, 403 Missing Access (50001) /
        // Missing Permissions (50013) / Cannot send messages to this user
        // (50007), 404 Unknown Channel (10003) / Unknown interaction
        // (10062): repeating changes nothing.
        PlatformFailure::Permanent(words())
    }
}

fn classify_request(error: &reqwest::Error) -> PlatformFailure {
    if error.is_builder() {
        return PlatformFailure::Permanent(format!("cannot build the Discord request: {error}"));
    }
    if let Some(status) = error.status() {
        return classify_status(status, -1, String::new);
    }
    let what = if error.is_timeout() {
        "timed out"
    } else if error.is_connect() {
        "cannot connect"
    } else {
        "request failed"
    };
    // reqwest's Display names the URL but not the cause; the source does.
    let mut detail = error.to_string();
    let mut source = std::error::Error::source(error);
    while let Some(cause) = source {
        detail.push_str(": ");
        detail.push_str(&cause.to_string());
        source = cause.source();
    }
    PlatformFailure::Transient(format!("{what}: {detail}"))
}

/// Discord's REST API: serenity's [`Http`] with timeouts. Cheap to clone.
/// Its `Debug` never shows the token.
#[derive(Clone)]
pub struct DiscordApi {
    http: Arc<Http>,
    api_url: Option<String>,
}

impl std::fmt::Debug for DiscordApi {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DiscordApi")
            .field(
                "api_url",
                &self.api_url.as_deref().unwrap_or(DISCORD_ORIGIN),
            )
            .field("token", &"[redacted]")
            .finish()
    }
}

impl DiscordApi {
    /// A client for the bot `token` (with or without the `Bot ` prefix) on
    /// `api_url`: Discord itself when `None`; else an origin such as
    /// `http://127.0.0.1:1234` (a REST proxy, or a fake in tests) that gets
    /// every request as `{api_url}/api/v10/...`.
    pub fn new(token: &str, api_url: Option<&str>) -> Result<DiscordApi, SetupError> {
        let api_url = check_api_url(api_url)?;
        let http = build_http(token, api_url.as_deref())?;
        Ok(DiscordApi {
            http: Arc::new(http),
            api_url,
        })
    }

    /// The bot's own account (`GET /users/@me`; checks the token).
    pub async fn me(&self) -> Result<CurrentUser, PlatformFailure> {
        self.http.get_current_user().await.map_err(|e| classify(&e))
    }

    /// The bot's application (`GET /oauth2/applications/@me`): its
    /// `flags` say which privileged intents it may use, its `verify_key`
    /// is the key HTTP interactions are signed with.
    pub async fn application(&self) -> Result<CurrentApplicationInfo, PlatformFailure> {
        self.http
            .get_current_application_info()
            .await
            .map_err(|e| classify(&e))
    }

    /// Registers askbridge's slash command ([`crate::render::command`]) as
    /// the application's only global command (`PUT
    /// /applications/{id}/commands`, which replaces what was there and
    /// keeps the command's id when it is the same).
    pub async fn register_command(&self, locale: Locale) -> Result<(), PlatformFailure> {
        let application = self.application().await?;
        self.http.set_application_id(application.id);
        serenity::model::application::Command::set_global_commands(
            &*self.http,
            vec![crate::render::command(locale)],
        )
        .await
        .map(drop)
        .map_err(|e| classify(&e))
    }

    /// The DM channel with `user` (`POST /users/@me/channels`), opened if
    /// needed; fails when they share no server with the bot.
    pub async fn dm_channel(&self, user: UserId) -> Result<ChannelId, PlatformFailure> {
        user.create_dm_channel(&*self.http)
            .await
            .map(|channel| channel.id)
            .map_err(|e| classify(&e))
    }

    /// Posts `message` in `channel`; returns the new message's id.
    pub async fn send(
        &self,
        channel: ChannelId,
        message: &Message,
    ) -> Result<MessageId, PlatformFailure> {
        channel
            .send_message(&*self.http, message.to_create(channel))
            .await
            .map(|sent| sent.id)
            .map_err(|e| classify(&e))
    }

    /// Replaces the text and components of one of the bot's messages.
    pub async fn edit(
        &self,
        channel: ChannelId,
        message_id: MessageId,
        message: &Message,
    ) -> Result<(), PlatformFailure> {
        channel
            .edit_message(&*self.http, message_id, message.to_edit())
            .await
            .map(drop)
            .map_err(|e| classify(&e))
    }

    /// Answers an interaction (`POST /interactions/{id}/{token}/callback`):
    /// a modal, a notice, an acknowledgement, an updated message. Within 3
    /// seconds of the interaction, once.
    pub async fn respond(
        &self,
        interaction: &InteractionRef,
        response: CreateInteractionResponse,
    ) -> Result<(), PlatformFailure> {
        self.http
            .create_interaction_response(interaction.id, &interaction.token, &response, Vec::new())
            .await
            .map_err(|e| classify(&e))
    }

    /// Follows up an interaction already answered (`POST
    /// /webhooks/{application}/{token}`): a notice after a deferred
    /// acknowledgement. The application's id is asked for first if no
    /// command registration set it.
    pub async fn follow_up(
        &self,
        interaction: &InteractionRef,
        message: &CreateInteractionResponseFollowup,
    ) -> Result<(), PlatformFailure> {
        if self.http.application_id().is_none() {
            let application = self.application().await?;
            self.http.set_application_id(application.id);
        }
        self.http
            .create_followup_message(&interaction.token, message, Vec::new())
            .await
            .map(drop)
            .map_err(|e| classify(&e))
    }
}

/// The gateway connection that delivers interactions and messages. Its
/// `Debug` never shows the token.
#[derive(Clone)]
pub struct Gateway {
    token: String,
    api_url: Option<String>,
}

impl std::fmt::Debug for Gateway {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Gateway")
            .field(
                "api_url",
                &self.api_url.as_deref().unwrap_or(DISCORD_ORIGIN),
            )
            .field("token", &"[redacted]")
            .finish()
    }
}

impl Gateway {
    /// A gateway for the bot `token`, found through `GET {api_url}/api/v10/gateway`
    /// (Discord's own when `api_url` is `None`; a fake may answer with a
    /// `ws://` URL).
    pub fn new(token: &str, api_url: Option<&str>) -> Result<Gateway, SetupError> {
        let api_url = check_api_url(api_url)?;
        check_token(token)?;
        Ok(Gateway {
            token: token.to_owned(),
            api_url,
        })
    }

    /// Listens forever: every component press, modal submit and typed
    /// message askbridge acts on is handed to `handle` as an [`Event`], in
    /// the order Discord sent them; the future `handle` returns runs on a
    /// task of its own (so `handle` itself is where the caller keeps a
    /// person's "2", then "no, 3" in order). serenity
    /// keeps the connection: heartbeats, resumes, reconnects. Returns only
    /// when Discord refuses the bot for good (an invalid token), with the
    /// reason.
    ///
    /// serenity hands every event to a task of its own, and a
    /// multi-threaded runtime may start a later task first. So the
    /// connection runs on a single-threaded runtime of its own, on its own
    /// thread, which starts tasks in the order they were spawned; each
    /// event is passed on at its task's first step, before anything can
    /// overtake it. Dropping the returned future stops that thread.
    ///
    /// If Discord refuses the Message Content intent (close code 4014: it
    /// is privileged and off in the developer portal), this logs what to
    /// switch on and connects again without it: buttons, menus, modals and
    /// DMs keep working, typed replies in servers are seen only when they
    /// mention the bot.
    pub async fn listen<F, Fut>(&self, handle: F) -> Result<(), SetupError>
    where
        F: Fn(Event) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = ()> + Send + 'static,
    {
        let (events, mut arriving) = tokio::sync::mpsc::unbounded_channel();
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let (ended, end) = tokio::sync::oneshot::channel();
        let gateway = self.clone();
        std::thread::Builder::new()
            .name("discord-gateway".to_owned())
            .spawn(move || {
                let result = match tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                {
                    Ok(runtime) => runtime.block_on(async {
                        tokio::select! {
                            result = gateway.keep_connected(events) => result,
                            // The caller went away.
                            _ = stopped => Ok(()),
                        }
                    }),
                    Err(error) => Err(SetupError(format!(
                        "cannot start the Discord gateway's runtime: {error}"
                    ))),
                };
                let _ = ended.send(result);
            })
            .map_err(|error| {
                SetupError(format!(
                    "cannot start the Discord gateway's thread: {error}"
                ))
            })?;
        let _stop_on_drop = stop;

        // `handle` is called in arrival order; what it returns runs on a
        // task of its own (the daemon's chat driver keeps each person's
        // events in order).
        while let Some(event) = arriving.recv().await {
            tokio::spawn(handle(event));
        }
        end.await
            .unwrap_or_else(|_| Err("the Discord gateway's thread stopped".into()))
    }

    /// Connects, and again after every failure (backing off), sending
    /// each event to `events` in arrival order; returns when Discord
    /// refuses the bot for good.
    async fn keep_connected(
        &self,
        events: tokio::sync::mpsc::UnboundedSender<Event>,
    ) -> Result<(), SetupError> {
        let listener = Arc::new(Listener {
            events,
            bot_id: AtomicU64::new(0),
            message_content: AtomicBool::new(true),
            ready: AtomicBool::new(false),
        });
        let mut intents = INTENTS;
        let mut backoff = GATEWAY_BACKOFF.0;
        loop {
            listener.message_content.store(
                intents.contains(GatewayIntents::MESSAGE_CONTENT),
                Ordering::Relaxed,
            );
            let outcome = self.connect(intents, Arc::clone(&listener)).await;
            if listener.ready.swap(false, Ordering::Relaxed) {
                // It was connected: the next failure starts the backoff over.
                backoff = GATEWAY_BACKOFF.0;
            }
            match outcome {
                Err(ConnectError::Gateway(GatewayError::DisallowedGatewayIntents))
                    if intents.contains(GatewayIntents::MESSAGE_CONTENT) =>
                {
                    tracing::error!(
                        "Discord refused the Message Content intent (close code 4014): askbridge \
                         will not see typed replies in servers unless they mention the bot. \
                         Switch on \"Message Content Intent\" under Bot → Privileged Gateway \
                         Intents for this application in the Discord developer portal \
                         (https://discord.com/developers/applications). Reconnecting without \
                         it; buttons, select menus, modals and DMs keep working."
                    );
                    intents.remove(GatewayIntents::MESSAGE_CONTENT);
                    backoff = GATEWAY_BACKOFF.0;
                    continue;
                }
                Err(ConnectError::Gateway(GatewayError::InvalidAuthentication)) => {
                    return Err(
                        "Discord refused the bot token on the gateway (close code 4004)".into(),
                    );
                }
                Err(ConnectError::Gateway(
                    error @ (GatewayError::InvalidGatewayIntents
                    | GatewayError::DisallowedGatewayIntents),
                )) => {
                    return Err(format!("Discord refused the gateway intents: {error}").into());
                }
                Err(ConnectError::Fatal(reason)) => return Err(reason.into()),
                Err(ConnectError::Gateway(error)) => {
                    tracing::warn!(error = %error, retry_in_ms = backoff.as_millis() as u64, "Discord gateway failed; reconnecting");
                }
                Err(ConnectError::Other(error)) => {
                    tracing::warn!(error = %error, retry_in_ms = backoff.as_millis() as u64, "cannot connect to the Discord gateway; retrying");
                }
                Ok(()) => {
                    tracing::warn!(
                        retry_in_ms = backoff.as_millis() as u64,
                        "Discord gateway stopped; reconnecting"
                    );
                }
            }
            tokio::time::sleep(backoff).await;
            backoff = (backoff * 2).min(GATEWAY_BACKOFF.1);
        }
    }

    /// One serenity client, run until it stops.
    async fn connect(
        &self,
        intents: GatewayIntents,
        listener: Arc<Listener>,
    ) -> Result<(), ConnectError> {
        let http = build_http(&self.token, self.api_url.as_deref()).map_err(ConnectError::Fatal)?;
        // Who the bot is, before any message arrives (READY is handled on a
        // task of its own, which a first message could overtake); a token
        // Discord refuses ends here.
        let me = http
            .get_current_user()
            .await
            .map_err(|error| match &error {
                serenity::Error::Http(HttpError::UnsuccessfulRequest(answer))
                    if answer.status_code == StatusCode::UNAUTHORIZED =>
                {
                    ConnectError::Fatal(
                        "Discord refused the bot token (401 Unauthorized)".to_owned(),
                    )
                }
                _ => ConnectError::Other(classify(&error).to_string()),
            })?;
        listener.bot_id.store(me.id.get(), Ordering::Relaxed);
        // serenity asks `GET /gateway` itself but falls back to Discord's
        // own gateway when that fails, which is wrong behind a proxy or
        // with a fake: ask first, and fail this attempt instead.
        let ws_url = match &self.api_url {
            Some(_) => Some(
                http.get_gateway()
                    .await
                    .map_err(|e| ConnectError::Other(classify(&e).to_string()))?
                    .url,
            ),
            None => None,
        };
        let mut client = ClientBuilder::new_with_http(http, intents)
            .event_handler_arc(listener)
            .await
            .map_err(|e| ConnectError::Other(e.to_string()))?;
        if let Some(url) = ws_url {
            *client.ws_url.lock().await = url;
        }
        let result = client.start().await;
        client.shard_manager.shutdown_all().await;
        match result {
            Ok(()) => Ok(()),
            Err(serenity::Error::Gateway(error)) => Err(ConnectError::Gateway(error)),
            Err(error) => Err(ConnectError::Other(error.to_string())),
        }
    }
}

/// How one gateway connection ended.
#[derive(Debug)]
enum ConnectError {
    /// Discord closed it with a gateway error.
    Gateway(GatewayError),
    /// It cannot work at all (no HTTP client, a refused token).
    Fatal(String),
    /// Anything else: retry.
    Other(String),
}

/// serenity's event handler: parses and passes on, in arrival order.
struct Listener {
    /// Where events go, at their task's first step.
    events: tokio::sync::mpsc::UnboundedSender<Event>,
    /// The bot's own user id, from READY (0 before).
    bot_id: AtomicU64,
    /// The connection asked for the Message Content intent.
    message_content: AtomicBool,
    /// READY arrived since the last connection attempt.
    ready: AtomicBool,
}

#[serenity::async_trait]
impl EventHandler for Listener {
    async fn ready(&self, _ctx: Context, ready: Ready) {
        self.bot_id.store(ready.user.id.get(), Ordering::Relaxed);
        self.ready.store(true, Ordering::Relaxed);
        tracing::info!(
            bot = %ready.user.name,
            bot_id = %ready.user.id,
            guilds = ready.guilds.len(),
            message_content = self.message_content.load(Ordering::Relaxed),
            "connected to the Discord gateway"
        );
    }

    async fn message(&self, _ctx: Context, message: DiscordMessage) {
        let Some(bot_id) = NonZeroU64::new(self.bot_id.load(Ordering::Relaxed)) else {
            return;
        };
        if let Some(text) = parse::message(&message, UserId::from(bot_id)) {
            let _ = self.events.send(Event::Text(text));
        }
    }

    async fn interaction_create(&self, _ctx: Context, interaction: Interaction) {
        if let Some(event) = parse::interaction(&interaction) {
            let _ = self.events.send(event);
        }
    }
}

/// Checks HTTP interactions (the Interactions Endpoint URL): Discord signs
/// each request with the application's Ed25519 key.
#[derive(Clone)]
pub struct Verifier(serenity::interactions_endpoint::Verifier);

impl std::fmt::Debug for Verifier {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Verifier")
    }
}

impl Verifier {
    /// A verifier for the application's public key (64 hex digits, as the
    /// developer portal shows it).
    pub fn new(public_key_hex: &str) -> Result<Verifier, SetupError> {
        let bytes: [u8; 32] = parse_hex(public_key_hex.trim())
            .ok_or_else(|| "the Discord public key must be 64 hex digits".to_owned())?;
        serenity::interactions_endpoint::Verifier::try_new(bytes)
            .map(Verifier)
            .map_err(|error| SetupError(error.to_string()))
    }

    /// Whether a request is Discord's: `signature_hex` and `timestamp` are
    /// its `X-Signature-Ed25519` and `X-Signature-Timestamp` headers, `body`
    /// the raw body. Answer 401 when it is not.
    pub fn verify(&self, signature_hex: &str, timestamp: &str, body: &[u8]) -> bool {
        self.0.verify(signature_hex, timestamp, body).is_ok()
    }
}

fn parse_hex<const N: usize>(text: &str) -> Option<[u8; N]> {
    if text.len() != N * 2 || !text.is_ascii() {
        return None;
    }
    let mut out = [0; N];
    for (i, byte) in out.iter_mut().enumerate() {
        *byte = u8::from_str_radix(text.get(2 * i..2 * i + 2)?, 16).ok()?;
    }
    Some(out)
}

fn check_token(token: &str) -> Result<(), String> {
    if token.trim().is_empty() {
        Err("the Discord bot token is empty".to_owned())
    } else {
        Ok(())
    }
}

/// The API origin without a trailing slash; `None` for Discord's own.
fn check_api_url(api_url: Option<&str>) -> Result<Option<String>, String> {
    let Some(url) = api_url.map(str::trim) else {
        return Ok(None);
    };
    let origin = url.trim_end_matches('/');
    let rest = origin
        .strip_prefix("http://")
        .or_else(|| origin.strip_prefix("https://"));
    match rest {
        Some(host) if !host.is_empty() && !host.contains(['?', '#', ' ']) => {}
        _ => return Err(format!("api_url {url:?} is not an http(s) URL")),
    }
    Ok((origin != DISCORD_ORIGIN).then(|| origin.to_owned()))
}

/// serenity's client for `token`: its ratelimiter on for Discord itself,
/// off behind a proxy (see the module docs); timeouts on every request.
fn build_http(token: &str, api_url: Option<&str>) -> Result<Http, String> {
    check_token(token)?;
    let client = reqwest::Client::builder()
        .use_rustls_tls()
        .connect_timeout(CONNECT_TIMEOUT)
        .timeout(REQUEST_TIMEOUT)
        .build()
        .map_err(|error| format!("cannot build the HTTP client: {error}"))?;
    let mut builder = HttpBuilder::new(token.trim()).client(client);
    if let Some(url) = api_url {
        builder = builder.proxy(url).ratelimiter_disabled(true);
    }
    Ok(builder.build())
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    async fn answer(status: u16, body: &'static str) -> serenity::Error {
        let response = http::Response::builder()
            .status(status)
            .header("content-type", "application/json")
            .body(body)
            .unwrap();
        let answer = serenity::http::ErrorResponse::from_response(
            reqwest::Response::from(response),
            reqwest::Method::POST,
        )
        .await;
        serenity::Error::Http(HttpError::UnsuccessfulRequest(answer))
    }

    #[tokio::test]
    async fn run_discord_errors_are_classified_for_retries() {
        let cases = [
            (
                answer(403, r#"{"message": "Missing Access", "code": 50001}"#).await,
                PlatformFailure::Permanent("Missing Access".to_owned()),
            ),
            (
                answer(404, r#"{"message": "Unknown Channel", "code": 10003}"#).await,
                PlatformFailure::Permanent("Unknown Channel".to_owned()),
            ),
            (
                answer(
                    403,
                    r#"{"message": "Cannot send messages to this user", "code": 50007}"#,
                )
                .await,
                PlatformFailure::Permanent("Cannot send messages to this user".to_owned()),
            ),
            (
                answer(403, r#"{"message": "Missing Permissions", "code": 50013}"#).await,
                PlatformFailure::Permanent("Missing Permissions".to_owned()),
            ),
            (
                answer(
                    400,
                    r#"{"message": "Invalid Form Body", "code": 50035, "errors": {"content": {"_errors": [{"code": "BASE_TYPE_MAX_LENGTH", "message": "Must be 2000 or fewer in length."}]}}}"#,
                )
                .await,
                PlatformFailure::Permanent(
                    "Invalid Form Body (content: Must be 2000 or fewer in length.)".to_owned(),
                ),
            ),
            (
                answer(401, r#"{"message": "401: Unauthorized", "code": 0}"#).await,
                PlatformFailure::Permanent("401: Unauthorized".to_owned()),
            ),
            (
                answer(
                    429,
                    r#"{"message": "You are being rate limited.", "retry_after": 64.57, "global": false}"#,
                )
                .await,
                PlatformFailure::RetryAfter(1),
            ),
            (
                answer(502, "<html>bad gateway</html>").await,
                PlatformFailure::Transient("Discord answered 502 Bad Gateway".to_owned()),
            ),
            (
                answer(500, r#"{"message": "500: Internal Server Error", "code": 0}"#).await,
                PlatformFailure::Transient("500: Internal Server Error".to_owned()),
            ),
        ];
        for (error, expected) in cases {
            assert_eq!(classify(&error), expected, "{error:?}");
        }
        assert_eq!(
            PlatformFailure::RetryAfter(1).to_string(),
            "rate limited, retry after 1 s"
        );
    }

    #[tokio::test]
    async fn run_network_failures_and_timeouts_are_transient() {
        // A port nobody listens on: the connection is refused.
        let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let closed_port = closed.local_addr().unwrap().port();
        drop(closed);
        let refused = reqwest::Client::new()
            .get(format!("http://127.0.0.1:{closed_port}/"))
            .send()
            .await
            .unwrap_err();
        let failure = classify(&serenity::Error::Http(HttpError::Request(refused)));
        assert!(
            matches!(&failure, PlatformFailure::Transient(text) if text.starts_with("cannot connect")),
            "{failure:?}"
        );

        // A server that accepts and never answers: the request times out.
        let silent = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = silent.local_addr().unwrap().port();
        let timed_out = reqwest::Client::builder()
            .timeout(Duration::from_millis(50))
            .build()
            .unwrap()
            .get(format!("http://127.0.0.1:{port}/"))
            .send()
            .await
            .unwrap_err();
        let failure = classify(&serenity::Error::Http(HttpError::Request(timed_out)));
        assert!(
            matches!(&failure, PlatformFailure::Transient(text) if text.starts_with("timed out")),
            "{failure:?}"
        );
        drop(silent);

        let too_long = serenity::Error::Model(serenity::model::ModelError::MessageTooLong(5));
        assert!(matches!(classify(&too_long), PlatformFailure::Permanent(_)));
    }

    #[test]
    fn run_debug_never_shows_the_token() {
        let api = DiscordApi::new("SECRET-token.abc", Some("http://127.0.0.1:9/"))
            .unwrap_or_else(|error| panic!("{error}"));
        let shown = format!("{api:?}");
        assert!(!shown.contains("SECRET"), "{shown}");
        assert!(shown.contains("http://127.0.0.1:9\""), "{shown}");
        let gateway = Gateway::new("SECRET-token.abc", None).unwrap();
        let shown = format!("{gateway:?}");
        assert!(!shown.contains("SECRET"), "{shown}");
        assert!(shown.contains("https://discord.com"), "{shown}");
    }

    #[test]
    fn run_api_urls_and_tokens_are_checked() {
        assert_eq!(check_api_url(None), Ok(None));
        assert_eq!(
            check_api_url(Some("http://127.0.0.1:1234/")),
            Ok(Some("http://127.0.0.1:1234".to_owned()))
        );
        assert_eq!(check_api_url(Some("https://discord.com/")), Ok(None));
        for bad in ["127.0.0.1:1234", "ftp://x", "http://", "http://a b"] {
            assert!(check_api_url(Some(bad)).is_err(), "{bad}");
        }
        assert!(DiscordApi::new(" ", None).is_err());
        assert!(Gateway::new("", Some("http://127.0.0.1:1")).is_err());
    }

    /// One canned HTTP answer on a local port; returns the request head.
    async fn serve_once(
        status_line: &'static str,
        body: &'static str,
    ) -> (u16, tokio::task::JoinHandle<String>) {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let task = tokio::spawn(async move {
            let (mut socket, _) = listener.accept().await.unwrap();
            let mut head = Vec::new();
            let mut buf = [0u8; 1024];
            while !head.windows(4).any(|w| w == b"\r\n\r\n") {
                let n = socket.read(&mut buf).await.unwrap();
                if n == 0 {
                    break;
                }
                head.extend_from_slice(&buf[..n]);
            }
            let reply = format!(
                "HTTP/1.1 {status_line}\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                body.len()
            );
            socket.write_all(reply.as_bytes()).await.unwrap();
            String::from_utf8_lossy(&head).into_owned()
        });
        (port, task)
    }

    #[tokio::test]
    async fn run_requests_go_to_the_api_url() {
        let (port, request) = serve_once(
            "200 OK",
            r#"{"id": "1100000000000000001", "username": "askbridge", "discriminator": "0", "global_name": null, "avatar": null, "bot": true}"#,
        )
        .await;
        let api =
            DiscordApi::new("Bot-token-1", Some(&format!("http://127.0.0.1:{port}"))).unwrap();
        let me = api.me().await.unwrap();
        assert_eq!(me.id.get(), 1_100_000_000_000_000_001);
        let head = request.await.unwrap();
        assert!(
            head.starts_with("GET /api/v10/users/@me HTTP/1.1"),
            "{head}"
        );
        assert!(
            head.to_ascii_lowercase()
                .contains("authorization: bot bot-token-1"),
            "{head}"
        );
    }

    #[tokio::test]
    async fn run_a_rate_limit_behind_a_proxy_is_retry_after() {
        let (port, _request) = serve_once(
            "429 Too Many Requests",
            r#"{"message": "You are being rate limited.", "retry_after": 0.5, "global": false}"#,
        )
        .await;
        let api = DiscordApi::new("t", Some(&format!("http://127.0.0.1:{port}"))).unwrap();
        assert_eq!(api.me().await.unwrap_err(), PlatformFailure::RetryAfter(1));
    }

    #[tokio::test]
    async fn run_the_gateway_gives_up_on_a_refused_token() {
        let (port, request) = serve_once(
            "401 Unauthorized",
            r#"{"message": "401: Unauthorized", "code": 0}"#,
        )
        .await;
        let gateway = Gateway::new("bad", Some(&format!("http://127.0.0.1:{port}"))).unwrap();
        let stopped = gateway.listen(|_event| async {}).await;
        assert_eq!(
            stopped,
            Err(SetupError(
                "Discord refused the bot token (401 Unauthorized)".to_owned()
            ))
        );
        assert!(
            request
                .await
                .unwrap()
                .starts_with("GET /api/v10/users/@me ")
        );
    }

    #[test]
    fn run_verifier_accepts_discord_signatures_only() {
        use ed25519_dalek::{Signer, SigningKey};
        let hex = |bytes: &[u8]| bytes.iter().map(|b| format!("{b:02x}")).collect::<String>();
        let key = SigningKey::from_bytes(&[7; 32]);
        let verifier = Verifier::new(&hex(key.verifying_key().as_bytes())).unwrap();
        let body = br#"{"type":1}"#;
        let timestamp = "1700000000";
        let signed = [timestamp.as_bytes(), body.as_slice()].concat();
        let signature = hex(&key.sign(&signed).to_bytes());
        assert!(verifier.verify(&signature, timestamp, body));
        assert!(!verifier.verify(&signature, "1700000001", body));
        assert!(!verifier.verify(&signature, timestamp, br#"{"type":2}"#));
        assert!(!verifier.verify("zz", timestamp, body));
        assert!(Verifier::new("abc").is_err());
        assert!(Verifier::new(&"g".repeat(64)).is_err());
    }
}

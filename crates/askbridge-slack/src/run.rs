//! Slack's Web API and Socket Mode, through slack-morphism: the only async
//! code of this crate.
//!
//! Requests go through slack-morphism's hyper client on a connector built
//! here: rustls (ring, the system's roots) for `https://`, plain TCP for
//! `http://`, so an `api_url` such as `http://127.0.0.1:1234/api` (a local
//! fake) works; the token goes in the `Authorization` header, never in a
//! URL. Every call has a timeout (the client has none).
//!
//! Rate limits: against Slack itself, slack-morphism's rate control is on.
//! It throttles each method to its Slack tier (bursts allowed, then calls
//! are spaced out), and on a 429 it waits the `Retry-After` Slack names and
//! sends the request again, up to [`RATE_LIMIT_RETRIES`] times. With an
//! `api_url` it is off, so a 429 from a fake or proxy reaches the caller at
//! once. A 429 that escapes is [`PlatformFailure::RetryAfter`]; every other
//! failure is classified too ([`classify`]) so the caller can retry passing
//! failures and give up on permanent ones.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use askbridge_core::failure::{PlatformFailure, SetupError};
use askbridge_core::inbound::Handled;
use http_body_util::Empty;
use hyper::body::Bytes;
use hyper_rustls::HttpsConnector;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use serde::Deserialize;
use slack_morphism::errors::SlackClientError;
use slack_morphism::listener::{HttpStatusCode, SlackClientEventsUserState};
use slack_morphism::prelude::{
    AUTH_TEST_SPECIAL_LIMIT_RATE_CTL, CHAT_POST_MESSAGE_SPECIAL_LIMIT_RATE_CTL,
    SLACK_TIER3_METHOD_CONFIG, SLACK_TIER4_METHOD_CONFIG, SlackApiAppsConnectionOpenRequest,
    SlackApiConversationsOpenRequest, SlackApiRateControlConfig, SlackApiToken, SlackApiTokenValue,
    SlackApiUsersInfoRequest, SlackApiViewsOpenRequest, SlackBotId, SlackChannelId, SlackClient,
    SlackClientApiCallContext, SlackClientEventsListenerEnvironment, SlackClientHttpConnector,
    SlackClientHyperConnector, SlackClientHyperHttpsConnector, SlackClientSocketModeConfig,
    SlackClientSocketModeListener, SlackCommandEvent, SlackCommandEventResponse,
    SlackInteractionEvent, SlackMessageContent, SlackPushEventCallback, SlackResponseUrl,
    SlackSigningSecret, SlackSocketModeListenerCallbacks, SlackTeamId, SlackTriggerId, SlackTs,
    SlackUserId, SlackView,
};
use slack_morphism::signature_verifier::{
    SlackEventSignatureVerifier, SlackEventSignatureVerifierError,
};

use crate::parse::{self, Delivered};
use crate::render::{self, Message};

/// Slack's own Web API root; an `api_url` equal to it is no fake.
pub const SLACK_API_URL: &str = "https://slack.com/api";
/// How many times slack-morphism sends a request again after a 429 (against
/// Slack itself).
pub const RATE_LIMIT_RETRIES: usize = 2;
/// The longest a request may take, rate-limit waits included.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(60);
/// What a 429 is retried after when Slack names no wait.
const UNKNOWN_RETRY_AFTER_SECS: u64 = 1;
/// The first and the longest wait between attempts to start Socket Mode.
const START_BACKOFF: (Duration, Duration) = (Duration::from_secs(1), Duration::from_secs(60));
/// How long slack-morphism waits before reconnecting a dropped socket.
const RECONNECT_SECS: u64 = 5;
/// The longest HTTP error body quoted in a failure.
const MAX_QUOTED_BODY: usize = 200;

/// The client type: slack-morphism's hyper client on our connector.
type Client = SlackClient<SlackClientHyperHttpsConnector>;
/// The connector both clients run on: `https://` and `http://`.
type Connector = HttpsConnector<HttpConnector>;
/// A plain hyper client on that connector.
type PlainClient = hyper_util::client::legacy::Client<Connector, Empty<Bytes>>;
/// The header Slack lists a token's scopes in.
const SCOPES_HEADER: &str = "x-oauth-scopes";

/// Slack error codes that are worth retrying.
const TRANSIENT_CODES: &[&str] = &[
    "internal_error",
    "fatal_error",
    "service_unavailable",
    "request_timeout",
    "timeout",
];

/// Classifies a slack-morphism error.
///
/// - `ratelimited` (a 429, with or without `Retry-After`) is
///   [`PlatformFailure::RetryAfter`], 1 s when Slack names no wait;
/// - network failures, HTTP 5xx and 408, unreadable answers and Slack's
///   `internal_error`, `fatal_error`, `service_unavailable` and
///   `request_timeout` are [`PlatformFailure::Transient`];
/// - every other Slack error (`channel_not_found`, `not_in_channel`,
///   `is_archived`, `invalid_auth`, `invalid_blocks`, `msg_too_long`, …),
///   other HTTP 4xx answers and invalid URLs are [`PlatformFailure::Permanent`],
///   with Slack's error string (and its details, if any).
pub fn classify(error: &SlackClientError) -> PlatformFailure {
    match error {
        SlackClientError::RateLimitError(limit) => PlatformFailure::RetryAfter(
            limit
                .retry_after
                .map(|wait| wait.as_secs_f64().ceil() as u64)
                .unwrap_or(UNKNOWN_RETRY_AFTER_SECS)
                .max(1),
        ),
        SlackClientError::ApiError(api) => {
            let words = match api.errors.as_deref() {
                Some(details) if !details.is_empty() => {
                    format!("{} ({})", api.code, details.join("; "))
                }
                _ => api.code.clone(),
            };
            if api.code == "ratelimited" {
                PlatformFailure::RetryAfter(UNKNOWN_RETRY_AFTER_SECS)
            } else if TRANSIENT_CODES.contains(&api.code.as_str()) {
                PlatformFailure::Transient(words)
            } else {
                PlatformFailure::Permanent(words)
            }
        }
        SlackClientError::HttpError(http) => {
            let status = http.status_code;
            let mut words = match status.canonical_reason() {
                Some(reason) => format!("slack answered {} {reason}", status.as_u16()),
                None => format!("slack answered {}", status.as_u16()),
            };
            if let Some(body) = http
                .http_response_body
                .as_deref()
                .map(str::trim)
                .filter(|body| !body.is_empty())
            {
                words.push_str(": ");
                words.push_str(&askbridge_core::render::cut(
                    body,
                    MAX_QUOTED_BODY,
                    askbridge_core::render::Unit::Utf16,
                ));
            }
            if status.as_u16() == 429 {
                PlatformFailure::RetryAfter(UNKNOWN_RETRY_AFTER_SECS)
            } else if status.is_server_error() || status.as_u16() == 408 {
                PlatformFailure::Transient(words)
            } else {
                PlatformFailure::Permanent(words)
            }
        }
        SlackClientError::HttpProtocolError(protocol) => {
            let cause = protocol.cause.as_deref();
            if cause.is_some_and(|cause| cause.is::<url::ParseError>()) {
                PlatformFailure::Permanent(format!("invalid Slack URL: {}", describe(cause)))
            } else {
                PlatformFailure::Transient(format!("request failed: {}", describe(cause)))
            }
        }
        SlackClientError::ProtocolError(protocol) => PlatformFailure::Transient(format!(
            "unreadable answer from Slack: {}",
            protocol.json_error
        )),
        SlackClientError::EndOfStream(_) | SlackClientError::SocketModeProtocolError(_) => {
            PlatformFailure::Transient(error.to_string())
        }
        SlackClientError::SystemError(system) => PlatformFailure::Permanent(
            system
                .message
                .clone()
                .unwrap_or_else(|| describe(system.cause.as_deref())),
        ),
    }
}

/// An error and its causes, on one line.
fn describe(error: Option<&(dyn std::error::Error + Send + Sync + 'static)>) -> String {
    let Some(error) = error else {
        return "unknown error".to_owned();
    };
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}

/// Who the bot is (`auth.test`).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct BotIdentity {
    /// The bot's user id (`U…`): its mentions and its own messages.
    pub user_id: SlackUserId,
    /// The bot id (`B…`), if Slack says.
    pub bot_id: Option<SlackBotId>,
    /// The bot user's name.
    pub user: Option<String>,
    /// The workspace id.
    pub team_id: Option<SlackTeamId>,
    /// The workspace name.
    pub team: Option<String>,
}

/// The part of a `chat.postMessage` answer askbridge needs.
#[derive(Deserialize)]
struct Posted {
    ts: SlackTs,
}

/// Slack's Web API for one bot token: slack-morphism's client on our
/// connector. Cheap to clone. Its `Debug` never shows the token.
#[derive(Clone)]
pub struct SlackApi {
    client: Arc<Client>,
    /// A plain HTTP client on the same connector, for what slack-morphism
    /// does not show: the headers of an answer.
    plain: PlainClient,
    token: SlackApiToken,
    api_url: Option<String>,
}

impl std::fmt::Debug for SlackApi {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SlackApi")
            .field("api_url", &self.api_url.as_deref().unwrap_or(SLACK_API_URL))
            .field("token", &"[redacted]")
            .finish()
    }
}

impl SlackApi {
    /// A client for the bot token (`xoxb-…`) on `api_url`: Slack itself
    /// when `None`; else a Web API root such as `http://127.0.0.1:1234/api`
    /// (a fake in tests) that gets every call as `{api_url}/{method}`.
    pub fn new(bot_token: &str, api_url: Option<&str>) -> Result<SlackApi, SetupError> {
        let api_url = check_api_url(api_url)?;
        let token = check_token(bot_token, "bot")?;
        let connector = build_connector()?;
        let client = build_client(api_url.as_deref(), connector.clone());
        let plain =
            hyper_util::client::legacy::Client::builder(TokioExecutor::new()).build(connector);
        Ok(SlackApi {
            client: Arc::new(client),
            plain,
            token,
            api_url,
        })
    }

    /// The scopes the bot token was granted, as Slack lists them in the
    /// `x-oauth-scopes` header of its Web API answers (here `auth.test`'s).
    /// `None` when the answer has no such header (a proxy that drops it).
    /// Fails only when the request does; what Slack answered is
    /// [`auth_test`](Self::auth_test)'s to judge.
    pub async fn granted_scopes(&self) -> Result<Option<Vec<String>>, PlatformFailure> {
        let url = format!(
            "{}/auth.test",
            self.api_url.as_deref().unwrap_or(SLACK_API_URL)
        );
        let request = hyper::Request::get(url.as_str())
            .header(
                hyper::header::AUTHORIZATION,
                format!("Bearer {}", self.token.token_value.0),
            )
            .body(Empty::<Bytes>::new())
            .map_err(|error| {
                PlatformFailure::Permanent(format!("invalid Slack URL {url:?}: {error}"))
            })?;
        let response =
            match tokio::time::timeout(REQUEST_TIMEOUT, self.plain.request(request)).await {
                Ok(Ok(response)) => response,
                Ok(Err(error)) => {
                    return Err(PlatformFailure::Transient(format!(
                        "request failed: {}",
                        describe(Some(&error))
                    )));
                }
                Err(_) => {
                    return Err(PlatformFailure::Transient(format!(
                        "timed out after {} s",
                        REQUEST_TIMEOUT.as_secs()
                    )));
                }
            };
        Ok(response
            .headers()
            .get(SCOPES_HEADER)
            .and_then(|value| value.to_str().ok())
            .map(|scopes| {
                scopes
                    .split(',')
                    .map(str::trim)
                    .filter(|scope| !scope.is_empty())
                    .map(str::to_owned)
                    .collect()
            }))
    }

    /// Who the bot is (`auth.test`; checks the token).
    pub async fn auth_test(&self) -> Result<BotIdentity, PlatformFailure> {
        let session = self.client.open_session(&self.token);
        let params: Vec<(&str, Option<&String>)> = Vec::new();
        call(session.http_session_api.http_get(
            "auth.test",
            &params,
            Some(&AUTH_TEST_SPECIAL_LIMIT_RATE_CTL),
        ))
        .await
    }

    /// The IM with `user` (`conversations.open`), opened if needed.
    pub async fn open_dm(&self, user: &SlackUserId) -> Result<SlackChannelId, PlatformFailure> {
        let session = self.client.open_session(&self.token);
        let request = SlackApiConversationsOpenRequest::new().with_users(vec![user.clone()]);
        call(session.conversations_open(&request))
            .await
            .map(|opened| opened.channel.id)
    }

    /// Posts `message` in `channel` (`chat.postMessage`, in the message's
    /// thread if it has one); returns the new message's `ts`.
    pub async fn post(
        &self,
        channel: &SlackChannelId,
        message: &Message,
    ) -> Result<SlackTs, PlatformFailure> {
        let session = self.client.open_session(&self.token);
        let request = message.to_post(channel);
        call(session.http_session_api.http_post::<_, Posted>(
            "chat.postMessage",
            &request,
            Some(&CHAT_POST_MESSAGE_SPECIAL_LIMIT_RATE_CTL),
        ))
        .await
        .map(|posted| posted.ts)
    }

    /// Replaces the text and blocks of the bot's message `ts` in `channel`
    /// (`chat.update`).
    pub async fn update(
        &self,
        channel: &SlackChannelId,
        ts: &SlackTs,
        message: &Message,
    ) -> Result<(), PlatformFailure> {
        let session = self.client.open_session(&self.token);
        let request = message.to_update(channel, ts);
        call(
            session
                .http_session_api
                .http_post::<_, serde::de::IgnoredAny>(
                    "chat.update",
                    &request,
                    Some(&SLACK_TIER3_METHOD_CONFIG),
                ),
        )
        .await
        .map(drop)
    }

    /// Shows `text` to `user` only, in `channel` (`chat.postEphemeral`, in
    /// the thread of `thread_ts` if any).
    pub async fn post_ephemeral(
        &self,
        channel: &SlackChannelId,
        user: &SlackUserId,
        text: &str,
        thread_ts: Option<&SlackTs>,
    ) -> Result<(), PlatformFailure> {
        let session = self.client.open_session(&self.token);
        let request = render::ephemeral(channel, user, text, thread_ts);
        call(session.chat_post_ephemeral(&request)).await.map(drop)
    }

    /// Opens a modal (`views.open`) for a press's `trigger_id`, within 3
    /// seconds of the press.
    pub async fn open_view(
        &self,
        trigger_id: &SlackTriggerId,
        view: SlackView,
    ) -> Result<(), PlatformFailure> {
        let session = self.client.open_session(&self.token);
        let request = SlackApiViewsOpenRequest::new(trigger_id.clone(), view);
        call(
            session
                .http_session_api
                .http_post::<_, serde::de::IgnoredAny>(
                    "views.open",
                    &request,
                    Some(&SLACK_TIER4_METHOD_CONFIG),
                ),
        )
        .await
        .map(drop)
    }

    /// Posts `text` to a press's `response_url`, shown only to the person
    /// who pressed ([`render::ephemeral_response`]). No token is sent: the
    /// URL is the credential (and is never logged).
    pub async fn respond(
        &self,
        response_url: &SlackResponseUrl,
        text: &str,
    ) -> Result<(), PlatformFailure> {
        let span = tracing::debug_span!("Slack response_url");
        let context = SlackClientApiCallContext {
            rate_control_params: None,
            token: None,
            tracing_span: &span,
            is_sensitive_url: true,
        };
        let body = render::ephemeral_response(text);
        call(
            self.client
                .http_api
                .connector
                .http_post_uri::<_, serde::de::IgnoredAny>(response_url.0.clone(), &body, context),
        )
        .await
        .map(drop)
    }

    /// What Slack shows for `user` (`users.info`): the display name, else
    /// the real name, else the handle; `None` if all are blank.
    pub async fn user_name(&self, user: &SlackUserId) -> Result<Option<String>, PlatformFailure> {
        let session = self.client.open_session(&self.token);
        let info = call(session.users_info(&SlackApiUsersInfoRequest::new(user.clone())))
            .await?
            .user;
        let profile = info.profile.as_ref();
        Ok([
            profile.and_then(|p| p.display_name.clone()),
            profile.and_then(|p| p.real_name.clone()),
            info.real_name.clone(),
            info.name.clone(),
        ]
        .into_iter()
        .flatten()
        .map(|name| name.trim().to_owned())
        .find(|name| !name.is_empty()))
    }
}

/// Awaits one call within [`REQUEST_TIMEOUT`], classifying its failure.
async fn call<T>(
    request: impl Future<Output = Result<T, SlackClientError>>,
) -> Result<T, PlatformFailure> {
    match tokio::time::timeout(REQUEST_TIMEOUT, request).await {
        Ok(result) => result.map_err(|error| classify(&error)),
        Err(_) => Err(PlatformFailure::Transient(format!(
            "timed out after {} s",
            REQUEST_TIMEOUT.as_secs()
        ))),
    }
}

/// A handler, type-erased for the listener state.
type Handler =
    Arc<dyn Fn(Delivered) -> Pin<Box<dyn Future<Output = Handled> + Send>> + Send + Sync>;

/// Socket Mode: one WebSocket connection that delivers events and
/// interactions, opened with an app-level token. Its `Debug` never shows
/// the tokens.
#[derive(Clone)]
pub struct SocketMode {
    api: SlackApi,
    app_token: SlackApiToken,
}

impl std::fmt::Debug for SocketMode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SocketMode")
            .field("api", &self.api)
            .field("app_token", &"[redacted]")
            .finish()
    }
}

impl SocketMode {
    /// Socket Mode for the app-level token (`xapp-…`, with the
    /// `connections:write` scope), on `api`'s Web API (`apps.connections.open`
    /// there; a fake may answer with a `ws://` URL).
    pub fn new(api: &SlackApi, app_token: &str) -> Result<SocketMode, SetupError> {
        Ok(SocketMode {
            api: api.clone(),
            app_token: check_token(app_token, "app-level")?,
        })
    }

    /// Listens: every button press, modal submit and typed message
    /// askbridge acts on is handed to `handle` with its delivery key
    /// ([`Delivered`]).
    ///
    /// Envelopes are handed over in the order the socket brings them, and
    /// each is acknowledged once `handle` returns [`Handled::Done`]; on
    /// [`Handled::Retry`] it is not, so Slack delivers an event again
    /// (and shows a press as failed). Slack wants the acknowledgement
    /// within 3 seconds: `handle` must return by then. The socket is one
    /// connection; slack-morphism pings it, and reconnects (a new
    /// `apps.connections.open`) when it drops or Slack asks it to.
    ///
    /// Before listening it checks both tokens (`auth.test` with the bot
    /// token, for the bot's user id; `apps.connections.open` with the app
    /// token), retrying passing failures; it returns only when Slack
    /// refuses one of them, with the reason. The tokens are never logged.
    pub async fn listen<F, Fut>(&self, handle: F) -> Result<(), SetupError>
    where
        F: Fn(Delivered) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Handled> + Send + 'static,
    {
        // tungstenite's wss:// connections take rustls' process default
        // provider; make sure there is one (ring, as everywhere here). An
        // error only means one is installed already.
        let _ = rustls::crypto::ring::default_provider().install_default();
        let me = retry_start("check the Slack bot token", || self.api.auth_test()).await?;
        retry_start("check the Slack app-level token", || async {
            let session = self.api.client.open_session(&self.app_token);
            call(session.apps_connections_open(&SlackApiAppsConnectionOpenRequest::new()))
                .await
                .map(drop)
        })
        .await?;
        tracing::info!(
            bot_user = %me.user_id.0,
            bot = me.user.as_deref().unwrap_or("-"),
            team = me.team.as_deref().unwrap_or("-"),
            "connecting to Slack Socket Mode"
        );

        let handler: Handler = Arc::new(move |event| Box::pin(handle(event)));
        let dispatcher = Arc::new(Dispatcher {
            handler,
            bot: me.user_id,
        });
        let environment = SlackClientEventsListenerEnvironment::new(Arc::clone(&self.api.client))
            .with_error_handler(on_error);
        environment
            .user_state
            .write()
            .await
            .set_user_state(Arc::clone(&dispatcher));
        let callbacks = SlackSocketModeListenerCallbacks::new()
            .with_hello_events(|event, _client, _state| async move {
                tracing::info!(
                    app = %event.connection_info.app_id.0,
                    connections = event.num_connections,
                    "connected to Slack Socket Mode"
                );
            })
            .with_push_events(on_push)
            .with_interaction_events(on_interaction)
            .with_command_events(on_command);
        let config = SlackClientSocketModeConfig::new()
            .with_max_connections_count(1)
            .with_reconnect_timeout_in_seconds(RECONNECT_SECS);
        let listener = Arc::new(SlackClientSocketModeListener::new(
            &config,
            Arc::new(environment),
            callbacks,
        ));
        listener
            .listen_for(&self.app_token)
            .await
            .map_err(|error| format!("cannot start Slack Socket Mode: {}", classify(&error)))?;
        listener.start().await;
        let _stop = StopOnDrop(Some(listener));
        std::future::pending::<()>().await;
        Ok(())
    }
}

/// Shuts the socket down when `listen` is dropped.
struct StopOnDrop(Option<Arc<SlackClientSocketModeListener<SlackClientHyperHttpsConnector>>>);

impl Drop for StopOnDrop {
    fn drop(&mut self) {
        if let (Some(listener), Ok(runtime)) =
            (self.0.take(), tokio::runtime::Handle::try_current())
        {
            runtime.spawn(async move { listener.shutdown().await });
        }
    }
}

/// Runs a start-up check until it passes or fails for good.
async fn retry_start<T, Fut>(what: &str, check: impl Fn() -> Fut) -> Result<T, String>
where
    Fut: Future<Output = Result<T, PlatformFailure>>,
{
    let mut backoff = START_BACKOFF.0;
    loop {
        match check().await {
            Ok(value) => return Ok(value),
            Err(PlatformFailure::Permanent(reason)) => {
                return Err(format!("cannot {what}: Slack refused it ({reason})"));
            }
            Err(PlatformFailure::RetryAfter(secs)) => {
                backoff = Duration::from_secs(secs).max(backoff);
                tracing::warn!(
                    retry_in_ms = backoff.as_millis() as u64,
                    "cannot {what}: rate limited; retrying"
                );
            }
            Err(PlatformFailure::Transient(reason)) => {
                tracing::warn!(error = %reason, retry_in_ms = backoff.as_millis() as u64, "cannot {what}; retrying");
            }
        }
        tokio::time::sleep(backoff).await;
        backoff = (backoff * 2).min(START_BACKOFF.1);
    }
}

/// The listener's state: the handler and the bot.
struct Dispatcher {
    handler: Handler,
    bot: SlackUserId,
}

impl Dispatcher {
    /// Hands `event` to the handler; an envelope that carries nothing
    /// askbridge acts on is taken at once.
    async fn dispatch(&self, event: Option<Delivered>) -> slack_morphism::UserCallbackResult<()> {
        let Some(event) = event else {
            return Ok(());
        };
        match (self.handler)(event).await {
            Handled::Done => Ok(()),
            Handled::Retry => Err(Box::new(NotTaken)),
        }
    }
}

/// An envelope whose event was not taken: it is left unacknowledged.
#[derive(Debug, thiserror::Error)]
#[error("the event was not taken; Slack may deliver it again")]
struct NotTaken;

async fn dispatcher(state: &SlackClientEventsUserState) -> Option<Arc<Dispatcher>> {
    state
        .read()
        .await
        .get_user_state::<Arc<Dispatcher>>()
        .cloned()
}

async fn on_push(
    event: SlackPushEventCallback,
    _client: Arc<Client>,
    state: SlackClientEventsUserState,
) -> slack_morphism::UserCallbackResult<()> {
    if let Some(dispatcher) = dispatcher(&state).await {
        return dispatcher
            .dispatch(parse::delivered_push(&event, &dispatcher.bot))
            .await;
    }
    Ok(())
}

async fn on_interaction(
    event: SlackInteractionEvent,
    _client: Arc<Client>,
    state: SlackClientEventsUserState,
) -> slack_morphism::UserCallbackResult<()> {
    if let Some(dispatcher) = dispatcher(&state).await {
        return dispatcher
            .dispatch(parse::delivered_interaction(&event))
            .await;
    }
    Ok(())
}

/// askbridge's slash command, answered through its `response_url`: the
/// acknowledgement carries nothing.
async fn on_command(
    event: SlackCommandEvent,
    _client: Arc<Client>,
    state: SlackClientEventsUserState,
) -> slack_morphism::UserCallbackResult<SlackCommandEventResponse> {
    if let Some(dispatcher) = dispatcher(&state).await {
        dispatcher.dispatch(parse::command(&event)).await?;
    }
    Ok(SlackCommandEventResponse::new(SlackMessageContent::new()))
}

/// An event that was not taken leaves its envelope unacknowledged; any
/// other listener error is logged and the envelope acknowledged all the
/// same (it would not read better redelivered).
fn on_error(
    error: Box<dyn std::error::Error + Send + Sync + 'static>,
    _client: Arc<Client>,
    _state: SlackClientEventsUserState,
) -> HttpStatusCode {
    if error.is::<NotTaken>() {
        return HttpStatusCode::SERVICE_UNAVAILABLE;
    }
    tracing::warn!(error = %error, "Slack Socket Mode error");
    HttpStatusCode::OK
}

/// Why a request did not pass [`SignatureCheck::verify`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Refusal {
    /// `X-Slack-Request-Timestamp` is not a Unix time.
    #[error("the request timestamp {0:?} is not a unix time")]
    BadTimestamp(String),
    /// The timestamp is more than 5 minutes away from now: a replay, or a
    /// clock far off.
    #[error("the request timestamp is {age} s away from now (at most 300 s)")]
    Stale {
        /// How far from now, in seconds.
        age: i64,
    },
    /// `X-Slack-Signature` does not match the body.
    #[error("the request signature does not match")]
    BadSignature,
}

/// Checks HTTP-mode requests (Events API, interactivity): Slack signs each
/// with the app's signing secret. Its `Debug` never shows the secret.
#[derive(Clone)]
pub struct SignatureCheck(SlackEventSignatureVerifier);

impl std::fmt::Debug for SignatureCheck {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SignatureCheck")
    }
}

impl SignatureCheck {
    /// The longest a request's timestamp may be from now, in seconds.
    pub const MAX_AGE_SECS: i64 = 300;

    /// A check for the app's signing secret (from the app's Basic
    /// Information page).
    pub fn new(signing_secret: &str) -> Result<SignatureCheck, SetupError> {
        let secret = signing_secret.trim();
        if secret.is_empty() {
            return Err("the Slack signing secret is empty".to_owned().into());
        }
        Ok(SignatureCheck(SlackEventSignatureVerifier::new(
            &SlackSigningSecret(secret.to_owned()),
        )))
    }

    /// Whether a request is Slack's and fresh: `timestamp` and `signature`
    /// are its `X-Slack-Request-Timestamp` and `X-Slack-Signature` headers,
    /// `body` the raw body, `now_unix` the current Unix time. Answer 401
    /// when it is not. The HMAC is slack-morphism's; the 5-minute replay
    /// window is checked here against `now_unix`.
    pub fn verify(
        &self,
        timestamp: &str,
        signature: &str,
        body: &[u8],
        now_unix: i64,
    ) -> Result<(), Refusal> {
        let timestamp = timestamp.trim();
        let sent: i64 = timestamp
            .parse()
            .map_err(|_| Refusal::BadTimestamp(timestamp.to_owned()))?;
        let age = now_unix.saturating_sub(sent).saturating_abs();
        if age > Self::MAX_AGE_SECS {
            return Err(Refusal::Stale { age });
        }
        let body = std::str::from_utf8(body).map_err(|_| Refusal::BadSignature)?;
        match self.0.verify(signature.trim(), body, timestamp) {
            Ok(()) => Ok(()),
            // slack-morphism checks the signature first, then the age
            // against the real clock: this error means the signature
            // matched. The window that counts is ours, checked above.
            Err(SlackEventSignatureVerifierError::IncorrectOrExpiredTimestampError(_)) => Ok(()),
            Err(_) => Err(Refusal::BadSignature),
        }
    }
}

fn check_token(token: &str, what: &str) -> Result<SlackApiToken, String> {
    let token = token.trim();
    if token.is_empty() {
        return Err(format!("the Slack {what} token is empty"));
    }
    Ok(SlackApiToken::new(SlackApiTokenValue(token.to_owned())))
}

/// The Web API root without a trailing slash; `None` for Slack's own.
fn check_api_url(api_url: Option<&str>) -> Result<Option<String>, String> {
    let Some(url) = api_url.map(str::trim) else {
        return Ok(None);
    };
    let root = url.trim_end_matches('/');
    let valid = url::Url::parse(root).is_ok_and(|parsed| {
        matches!(parsed.scheme(), "http" | "https")
            && parsed.host_str().is_some_and(|host| !host.is_empty())
            && parsed.query().is_none()
            && parsed.fragment().is_none()
    });
    if !valid {
        return Err(format!("api_url {url:?} is not an http(s) URL"));
    }
    Ok((root != SLACK_API_URL).then(|| root.to_owned()))
}

/// The connector: `https://` (rustls, ring, the system's roots) and
/// `http://`.
fn build_connector() -> Result<Connector, String> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let builder = rustls::ClientConfig::builder_with_provider(Arc::clone(&provider))
        .with_safe_default_protocol_versions()
        .map_err(|error| format!("cannot set up TLS: {error}"))?;
    let tls = match hyper_rustls::ConfigBuilderExt::with_native_roots(builder) {
        Ok(builder) => builder.with_no_client_auth(),
        Err(error) => {
            // No usable system roots: https:// cannot work, http:// can.
            tracing::warn!(error = %error, "no TLS root certificates found; only http:// API URLs will work");
            rustls::ClientConfig::builder_with_provider(provider)
                .with_safe_default_protocol_versions()
                .map_err(|error| format!("cannot set up TLS: {error}"))?
                .with_root_certificates(rustls::RootCertStore::empty())
                .with_no_client_auth()
        }
    };
    Ok(hyper_rustls::HttpsConnectorBuilder::new()
        .with_tls_config(tls)
        .https_or_http()
        .enable_http1()
        .enable_http2()
        .build())
}

/// slack-morphism's client on `https`; rate control on for Slack itself,
/// off for an `api_url` (see the module docs).
fn build_client(api_url: Option<&str>, https: Connector) -> Client {
    let connector = SlackClientHyperConnector::with_connector(https);
    let connector = match api_url {
        Some(url) => connector.with_slack_api_url(url),
        None => connector.with_rate_control(
            SlackApiRateControlConfig::new().with_max_retries(RATE_LIMIT_RETRIES),
        ),
    };
    SlackClient::new(connector)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use slack_morphism::errors::{
        SlackClientApiError, SlackClientHttpError, SlackClientHttpProtocolError,
        SlackRateLimitError,
    };

    #[test]
    fn run_slack_errors_are_classified_for_retries() {
        let api = |code: &str| SlackClientError::ApiError(SlackClientApiError::new(code.into()));
        for code in [
            "channel_not_found",
            "not_in_channel",
            "is_archived",
            "invalid_auth",
            "msg_too_long",
            "not_authed",
            "account_inactive",
        ] {
            assert_eq!(
                classify(&api(code)),
                PlatformFailure::Permanent(code.to_owned())
            );
        }
        let blocks = SlackClientError::ApiError(
            SlackClientApiError::new("invalid_blocks".into()).with_errors(vec![
                "must be less than 3001 characters [json-pointer:/blocks/0/text/text]".into(),
            ]),
        );
        assert_eq!(
            classify(&blocks),
            PlatformFailure::Permanent(
                "invalid_blocks (must be less than 3001 characters [json-pointer:/blocks/0/text/text])"
                    .to_owned()
            )
        );
        assert_eq!(
            classify(&api("internal_error")),
            PlatformFailure::Transient("internal_error".to_owned())
        );
        assert_eq!(
            classify(&api("ratelimited")),
            PlatformFailure::RetryAfter(1)
        );

        let limited = |after: Option<u64>| {
            SlackClientError::RateLimitError(
                SlackRateLimitError::new()
                    .opt_retry_after(after.map(Duration::from_secs))
                    .with_code("ratelimited".into()),
            )
        };
        assert_eq!(
            classify(&limited(Some(30))),
            PlatformFailure::RetryAfter(30)
        );
        assert_eq!(classify(&limited(None)), PlatformFailure::RetryAfter(1));
        assert_eq!(classify(&limited(Some(0))), PlatformFailure::RetryAfter(1));

        let http = |status: u16, body: &str| {
            SlackClientError::HttpError(
                SlackClientHttpError::new(http_status(status)).with_http_response_body(body.into()),
            )
        };
        assert_eq!(
            classify(&http(503, "")),
            PlatformFailure::Transient("slack answered 503 Service Unavailable".to_owned())
        );
        assert_eq!(
            classify(&http(502, "<html>bad gateway</html>")),
            PlatformFailure::Transient(
                "slack answered 502 Bad Gateway: <html>bad gateway</html>".to_owned()
            )
        );
        assert_eq!(
            classify(&http(404, "expired_url")),
            PlatformFailure::Permanent("slack answered 404 Not Found: expired_url".to_owned())
        );

        let refused = SlackClientError::HttpProtocolError(
            SlackClientHttpProtocolError::new().with_cause(Box::new(std::io::Error::new(
                std::io::ErrorKind::ConnectionRefused,
                "connection refused",
            ))),
        );
        assert_eq!(
            classify(&refused),
            PlatformFailure::Transient("request failed: connection refused".to_owned())
        );
        let bad_url = SlackClientError::from(url::Url::parse("not a url").unwrap_err());
        assert!(matches!(classify(&bad_url), PlatformFailure::Permanent(_)));
        let garbled =
            SlackClientError::ProtocolError(slack_morphism::errors::SlackClientProtocolError::new(
                serde_json::from_str::<serde_json::Value>("{").unwrap_err(),
            ));
        assert!(matches!(classify(&garbled), PlatformFailure::Transient(_)));

        assert_eq!(
            PlatformFailure::RetryAfter(3).to_string(),
            "rate limited, retry after 3 s"
        );
    }

    fn http_status(code: u16) -> slack_morphism::listener::HttpStatusCode {
        slack_morphism::listener::HttpStatusCode::from_u16(code).unwrap()
    }

    #[test]
    fn run_debug_never_shows_the_tokens() {
        let api = SlackApi::new("xoxb-SECRET-1", Some("http://127.0.0.1:9/api/")).unwrap();
        let shown = format!("{api:?}");
        assert!(!shown.contains("SECRET"), "{shown}");
        assert!(shown.contains("http://127.0.0.1:9/api\""), "{shown}");
        let socket = SocketMode::new(&api, "xapp-SECRET-2").unwrap();
        let shown = format!("{socket:?}");
        assert!(!shown.contains("SECRET"), "{shown}");
        let shown = format!("{:?}", SlackApi::new("xoxb-SECRET-3", None).unwrap());
        assert!(shown.contains("https://slack.com/api"), "{shown}");
        let check = SignatureCheck::new("SECRET-4").unwrap();
        assert!(!format!("{check:?}").contains("SECRET"));
    }

    #[test]
    fn run_api_urls_and_tokens_are_checked() {
        assert_eq!(check_api_url(None), Ok(None));
        assert_eq!(
            check_api_url(Some("http://127.0.0.1:1234/api/")),
            Ok(Some("http://127.0.0.1:1234/api".to_owned()))
        );
        assert_eq!(check_api_url(Some("https://slack.com/api/")), Ok(None));
        for bad in [
            "127.0.0.1:1234",
            "ftp://x/api",
            "http://",
            "http://a b",
            "http://x/?q",
        ] {
            assert!(check_api_url(Some(bad)).is_err(), "{bad}");
        }
        assert!(SlackApi::new(" ", None).is_err());
        let api = SlackApi::new("xoxb-1", None).unwrap();
        assert!(SocketMode::new(&api, "").is_err());
        assert!(SignatureCheck::new(" ").is_err());
    }

    /// One canned HTTP answer on a local port; returns the request.
    async fn serve_once(
        status_line: &'static str,
        headers: &'static str,
        body: &'static str,
    ) -> (u16, tokio::task::JoinHandle<String>) {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let task = tokio::spawn(async move {
            let (mut socket, _) = listener.accept().await.unwrap();
            let mut request = Vec::new();
            let mut buf = [0u8; 4096];
            loop {
                let n = socket.read(&mut buf).await.unwrap();
                request.extend_from_slice(&buf[..n]);
                let text = String::from_utf8_lossy(&request).to_string();
                if let Some((head, rest)) = text.split_once("\r\n\r\n") {
                    let length = head
                        .lines()
                        .find_map(|l| {
                            l.to_ascii_lowercase()
                                .strip_prefix("content-length:")
                                .map(|v| v.trim().parse::<usize>().unwrap())
                        })
                        .unwrap_or(0);
                    if rest.len() >= length {
                        break;
                    }
                }
                if n == 0 {
                    break;
                }
            }
            let reply = format!(
                "HTTP/1.1 {status_line}\r\ncontent-type: application/json; charset=utf-8\r\n{headers}content-length: {}\r\nconnection: close\r\n\r\n{body}",
                body.len()
            );
            socket.write_all(reply.as_bytes()).await.unwrap();
            String::from_utf8_lossy(&request).into_owned()
        });
        (port, task)
    }

    /// `request` starts with `line` and carries `token` as a bearer token.
    #[track_caller]
    fn assert_sent(request: &str, line: &str, token: &str) {
        assert!(request.starts_with(line), "{request}");
        let bearer = format!("authorization: bearer {token}");
        assert!(request.to_ascii_lowercase().contains(&bearer), "{request}");
    }

    #[tokio::test]
    async fn run_posts_go_to_the_api_url_over_plain_http() {
        let (port, request) = serve_once(
            "200 OK",
            "",
            r#"{"ok": true, "channel": "C0123456789", "ts": "1700000000.000100"}"#,
        )
        .await;
        let api = SlackApi::new(
            "xoxb-token-1",
            Some(&format!("http://127.0.0.1:{port}/api")),
        )
        .unwrap();
        let ts = api
            .post(
                &SlackChannelId("C0123456789".into()),
                &Message::text("Hello <world>"),
            )
            .await
            .unwrap();
        assert_eq!(ts, SlackTs("1700000000.000100".into()));
        let request = request.await.unwrap();
        assert_sent(
            &request,
            "POST /api/chat.postMessage HTTP/1.1",
            "xoxb-token-1",
        );
        assert!(
            request.contains(r#""text":"Hello &lt;world&gt;""#),
            "{request}"
        );
    }

    #[tokio::test]
    async fn run_a_rate_limit_from_a_fake_is_retry_after() {
        let (port, _request) = serve_once(
            "429 Too Many Requests",
            "retry-after: 7\r\n",
            r#"{"ok": false, "error": "ratelimited"}"#,
        )
        .await;
        let api = SlackApi::new("xoxb-1", Some(&format!("http://127.0.0.1:{port}/api"))).unwrap();
        let failure = api.auth_test().await.unwrap_err();
        assert_eq!(failure, PlatformFailure::RetryAfter(7));
    }

    #[tokio::test]
    async fn run_slack_errors_come_back_permanent() {
        let (port, request) = serve_once(
            "200 OK",
            "",
            r#"{"ok": false, "error": "channel_not_found"}"#,
        )
        .await;
        let api = SlackApi::new("xoxb-1", Some(&format!("http://127.0.0.1:{port}/api"))).unwrap();
        let failure = api
            .update(
                &SlackChannelId("C1".into()),
                &SlackTs("1.2".into()),
                &render::closed("Q?", "Done"),
            )
            .await
            .unwrap_err();
        assert_eq!(
            failure,
            PlatformFailure::Permanent("channel_not_found".to_owned())
        );
        assert!(request.await.unwrap().starts_with("POST /api/chat.update "));
    }

    #[tokio::test]
    async fn run_granted_scopes_come_from_the_oauth_scopes_header() {
        let (port, request) = serve_once(
            "200 OK",
            "x-oauth-scopes: chat:write, users:read,im:history\r\n",
            r#"{"ok": true, "user_id": "U1"}"#,
        )
        .await;
        let api = SlackApi::new(
            "xoxb-token-1",
            Some(&format!("http://127.0.0.1:{port}/api")),
        )
        .unwrap();
        let scopes = api.granted_scopes().await.unwrap();
        assert_eq!(
            scopes,
            Some(vec![
                "chat:write".to_owned(),
                "users:read".to_owned(),
                "im:history".to_owned()
            ])
        );
        let request = request.await.unwrap();
        assert_sent(&request, "GET /api/auth.test HTTP/1.1", "xoxb-token-1");

        let (port, _request) = serve_once("200 OK", "", r#"{"ok": true}"#).await;
        let api = SlackApi::new("xoxb-1", Some(&format!("http://127.0.0.1:{port}/api"))).unwrap();
        assert_eq!(api.granted_scopes().await.unwrap(), None);
    }

    #[tokio::test]
    async fn run_an_unreachable_api_is_transient() {
        let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = closed.local_addr().unwrap().port();
        drop(closed);
        let api = SlackApi::new("xoxb-1", Some(&format!("http://127.0.0.1:{port}/api"))).unwrap();
        let failure = api.auth_test().await.unwrap_err();
        assert!(
            matches!(failure, PlatformFailure::Transient(_)),
            "{failure:?}"
        );
    }

    #[tokio::test]
    async fn run_socket_mode_gives_up_on_a_refused_token() {
        let (port, _request) =
            serve_once("200 OK", "", r#"{"ok": false, "error": "invalid_auth"}"#).await;
        let api = SlackApi::new("xoxb-1", Some(&format!("http://127.0.0.1:{port}/api"))).unwrap();
        let socket = SocketMode::new(&api, "xapp-1").unwrap();
        let stopped = socket.listen(|_event| async { Handled::Done }).await;
        assert_eq!(
            stopped,
            Err(SetupError(
                "cannot check the Slack bot token: Slack refused it (invalid_auth)".to_owned()
            ))
        );
    }
}

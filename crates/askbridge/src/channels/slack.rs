//! The Slack channel wired to the bridge.
//!
//! [`askbridge_slack`] draws and reads Block Kit messages, modals, events
//! and interactions and talks to Slack; this module only translates for
//! the shared [`ChatDriver`]:
//!
//! - [`SlackPlatform`] is Slack as a [`ChatPlatform`]: it opens IMs,
//!   posts (in the target's thread, if it names one) and updates messages,
//!   answers a refused press with an ephemeral message (through the
//!   press's `response_url`, else `chat.postEphemeral`) — a taken press
//!   needs no answer, its envelope or request is acknowledged once it is
//!   recorded and the `chat.update` that follows shows it — and asks for
//!   own words with a modal (`views.open` with the press's trigger id).
//! - Every delivery goes through one [`Inbox`]: acknowledged (the
//!   envelope, or a 200) only once what it carries is recorded, within
//!   Slack's 3 seconds, and acted on once however often Slack sends it.
//! - Who answered is shown by name: interactions carry only a user id, so
//!   names come from `users.info`, remembered per user.
//! - [`Slack`] builds it from `[slack]` and listens in Socket Mode, or
//!   serves `POST /slack/events` and `POST /slack/interactivity` in HTTP
//!   mode, each checked against the signing secret with a 5-minute replay
//!   window.

use std::future::Future;
use std::sync::{Arc, OnceLock};

use askbridge_core::failure::{BadRequest, PlatformFailure, SetupError};
use askbridge_core::inbound::Handled;
use askbridge_core::model::{ChannelKind, Place};
use askbridge_core::render::{self, Capabilities, Unit, View, cut};
use askbridge_slack::parse::{self, Delivered, EventsBody, Reply, SlackChat, Ts};
use askbridge_slack::render::{self as draw, Destination, Message};
use askbridge_slack::run::{SignatureCheck, SlackApi, SocketMode};
use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use slack_morphism::prelude::{SlackChannelId, SlackTs, SlackUserId};

use crate::bridge::Bridge;
use crate::chat::driver::{Ack, ChatDriver, ChatPlatform, Drawing, OwnWords, Reminder};
use crate::chat::inbox::Inbox;
use crate::chat::names::Names;
use crate::chat::{AllowList, Person};
use crate::config::{SlackConfig, SlackMode};
use crate::http::ApiError;

/// Where Slack posts events in HTTP mode.
pub const EVENTS_PATH: &str = "/slack/events";
/// Where Slack posts interactions in HTTP mode.
pub const INTERACTIVITY_PATH: &str = "/slack/interactivity";
/// Where Slack posts askbridge's slash command in HTTP mode.
pub const COMMANDS_PATH: &str = "/slack/commands";
/// Longest modal title Slack takes.
const MAX_MODAL_TITLE_CHARS: usize = 24;

/// The Slack channel and its inbound side, built from the config.
#[derive(Debug, Clone)]
pub struct Slack {
    inbound: Arc<Inbound>,
    mode: SlackMode,
}

impl Slack {
    /// Builds the Web API client and registers the channel with the
    /// bridge. Call inside the runtime.
    pub fn new(bridge: &Bridge, config: &SlackConfig) -> Result<Slack, SetupError> {
        let api = client(config)?;
        let driver = ChatDriver::register(
            bridge,
            SlackPlatform { api: api.clone() },
            Drawing {
                caps: Capabilities::SLACK.with_mode(config.render),
                locale: config.locale,
            },
            AllowList::new(config.allowed_users.iter().cloned()),
        );
        Ok(Slack {
            inbound: Arc::new(Inbound {
                driver,
                api,
                names: Names::default(),
                bot: OnceLock::new(),
                inbox: Arc::default(),
            }),
            mode: config.mode.clone(),
        })
    }

    /// `/slack/events`, `/slack/interactivity` and `/slack/commands` (HTTP
    /// mode only).
    pub fn http_router(&self) -> Option<Router> {
        let SlackMode::Http { signing_secret } = &self.mode else {
            return None;
        };
        let check = match SignatureCheck::new(signing_secret.expose()) {
            Ok(check) => Arc::new(check),
            Err(error) => {
                tracing::error!(error = %error, "Slack HTTP mode is off");
                return None;
            }
        };
        let endpoint = Endpoint {
            inbound: Arc::clone(&self.inbound),
            check,
        };
        Some(
            Router::new()
                .route(EVENTS_PATH, post(events))
                .route(INTERACTIVITY_PATH, post(interactivity))
                .route(COMMANDS_PATH, post(commands))
                .with_state(endpoint),
        )
    }

    /// Says which bot the token belongs to, then listens in Socket Mode
    /// (HTTP mode needs only the bot's id, to know its own messages).
    pub fn start(&self) -> tokio::task::JoinHandle<()> {
        let inbound = Arc::clone(&self.inbound);
        let mode = self.mode.clone();
        tokio::spawn(async move {
            match mode {
                SlackMode::Socket { app_token } => {
                    let socket = match SocketMode::new(&inbound.api, app_token.expose()) {
                        Ok(socket) => socket,
                        Err(error) => {
                            tracing::error!(error = %error, "Slack Socket Mode cannot start");
                            return;
                        }
                    };
                    let handler = Arc::clone(&inbound);
                    let listening = socket
                        .listen(move |delivered| handler.take(delivered))
                        .await;
                    if let Err(reason) = listening {
                        tracing::error!(
                            reason = %reason,
                            "Slack refused a token; check SLACK_BOT_TOKEN and SLACK_APP_TOKEN"
                        );
                    }
                }
                SlackMode::Http { .. } => match inbound.api.auth_test().await {
                    Ok(me) => {
                        tracing::info!(bot_user = %me.user_id.0, "Slack bot connected");
                        let _ = inbound.bot.set(me.user_id);
                    }
                    Err(error) => tracing::error!(
                        error = %error,
                        "Slack refused the bot token; check SLACK_BOT_TOKEN"
                    ),
                },
            }
        })
    }
}

/// The Web API client for `[slack]`: the bot token on Slack, or on the
/// configured API URL.
pub fn client(config: &SlackConfig) -> Result<SlackApi, SetupError> {
    SlackApi::new(config.token.expose(), config.api_url.as_deref())
}

/// The bot token scopes the channel uses, each with what it is for (the
/// app manifest in `docs/channels/slack.md` asks for them all).
pub const BOT_SCOPES: &[(&str, &str)] = &[
    ("chat:write", "post questions and update them"),
    ("im:write", "open direct messages for slack:user/… targets"),
    ("users:read", "show who answered by name"),
    ("channels:history", "read typed replies in public channels"),
    ("groups:history", "read typed replies in private channels"),
    ("im:history", "read typed replies in direct messages"),
    ("commands", "answer /askbridge, askbridge's slash command"),
];

/// Slack events translated for the driver.
#[derive(Debug)]
struct Inbound {
    driver: Arc<ChatDriver<SlackPlatform>>,
    api: SlackApi,
    /// Display names from `users.info`, by user id.
    names: Names,
    /// The bot's own user id (HTTP mode; Socket Mode knows it itself).
    bot: OnceLock<SlackUserId>,
    /// What was delivered and taken.
    inbox: Arc<Inbox>,
}

impl Inbound {
    /// Takes one delivery: [`Handled::Done`] once what it carries is
    /// recorded (or was, by an earlier delivery), within Slack's 3 seconds;
    /// else it is left unacknowledged. The event takes its person's turn
    /// now, before the returned future first runs, so deliveries handed
    /// over in arrival order are handled so.
    fn take(
        self: &Arc<Self>,
        delivered: Delivered,
    ) -> impl Future<Output = Handled> + Send + 'static + use<> {
        let event = parse::inbound(delivered.event);
        let ticket = self.driver.line_up_with(&event, Some(&delivered.key));
        let inbound = Arc::clone(self);
        async move {
            let handler = Arc::clone(&inbound);
            inbound
                .inbox
                .take(&delivered.key, async move {
                    ticket.run(handler.handle(event)).await
                })
                .await
        }
    }

    /// Hands one event to the driver, its person named.
    async fn handle(&self, mut event: crate::chat::driver::Inbound<SlackPlatform>) -> Handled {
        self.name(event.person_mut()).await;
        self.driver.handle(event).await
    }

    /// Names `person` as Slack shows them when the event did not
    /// (`users.info`), else by their handle.
    async fn name(&self, person: &mut Person) {
        if person.responder.name.is_some() {
            return;
        }
        let id = SlackUserId(person.responder.user_id.clone());
        let name = self
            .names
            .get(&id.0, || async {
                self.api.user_name(&id).await.map_err(|error| {
                    tracing::debug!(error = %error, "cannot look up a Slack user's name");
                })
            })
            .await;
        person.responder.name = name
            .or_else(|| person.username.clone())
            .filter(|name| !name.trim().is_empty());
    }
}

/// Slack as a [`ChatPlatform`]: the Web API through slack-morphism.
#[derive(Debug)]
pub struct SlackPlatform {
    api: SlackApi,
}

impl ChatPlatform for SlackPlatform {
    type Chat = SlackChat;
    type MessageId = Ts;
    type Message = Message;
    type Reply = Reply;

    const KIND: ChannelKind = ChannelKind::Slack;

    fn conversation(chat: &SlackChat) -> String {
        chat.channel.0.clone()
    }

    fn parse_conversation(text: &str) -> Option<SlackChat> {
        (!text.is_empty()).then(|| SlackChat {
            channel: SlackChannelId(text.to_owned()),
            thread_ts: None,
        })
    }

    /// A channel ask's press comes from that channel; an IM's id is
    /// Slack's to choose and only its user can press there, so a DM ask's
    /// press must come from the DM's user.
    /// A `ts` is the time the message was posted, unique per channel.
    fn sent_before(a: &Ts, b: &Ts) -> bool {
        matches!((a.order(), b.order()), (Some(a), Some(b)) if a < b)
    }

    fn place_of(chat: &SlackChat) -> Place {
        Place::Slack {
            channel_id: chat.channel.0.clone(),
            thread_ts: chat.thread_ts.as_ref().map(|ts| ts.0.clone()),
        }
    }

    async fn open(&self, place: &Place) -> Result<SlackChat, PlatformFailure> {
        match Destination::of(place) {
            Some(Destination::Channel { channel, thread_ts }) => {
                Ok(SlackChat { channel, thread_ts })
            }
            Some(Destination::User(user)) => Ok(SlackChat {
                channel: self.api.open_dm(&user).await?,
                thread_ts: None,
            }),
            None => Err(PlatformFailure::Permanent("not a Slack target".to_owned())),
        }
    }

    fn ask_messages(&self, view: &View, chat: &SlackChat) -> Vec<Message> {
        draw::ask_messages(view)
            .into_iter()
            .map(|message| Message {
                thread_ts: chat.thread_ts.clone(),
                ..message
            })
            .collect()
    }

    fn context_message(&self, block: &render::Block, chat: &SlackChat) -> Message {
        Message {
            thread_ts: chat.thread_ts.clone(),
            ..Message::context(block)
        }
    }

    fn text_message(&self, text: &str, chat: &SlackChat) -> Message {
        Message {
            thread_ts: chat.thread_ts.clone(),
            ..Message::text(text)
        }
    }

    /// Slack's threads, in a conversation that is not a thread already
    /// (they do not nest).
    fn threads(chat: &SlackChat) -> bool {
        chat.thread_ts.is_none()
    }

    fn in_thread(&self, message: &mut Message, root: &Ts) {
        message.thread_ts.get_or_insert_with(|| root.0.clone());
    }

    fn text_of(message: &Message) -> &str {
        &message.text
    }

    async fn send(
        &self,
        chat: &SlackChat,
        message: Message,
        _once: &str,
    ) -> Result<Ts, PlatformFailure> {
        self.api.post(&chat.channel, &message).await.map(Ts)
    }

    async fn show_step(
        &self,
        chat: &SlackChat,
        message: Ts,
        step: &render::Step,
    ) -> Result<Option<Ts>, PlatformFailure> {
        self.api
            .update(&chat.channel, &message.0, &draw::step_message(step))
            .await
            .map(|()| None)
    }

    async fn close(
        &self,
        chat: &SlackChat,
        message: Ts,
        shown: &str,
        status: &str,
    ) -> Result<(), PlatformFailure> {
        self.api
            .update(&chat.channel, &message.0, &draw::closed(shown, status))
            .await
    }

    fn reply(&self, chat: &SlackChat, to: Ts, text: String) {
        let api = self.api.clone();
        let channel = chat.channel.clone();
        let thread = chat.thread_ts.clone().unwrap_or(to.0);
        tokio::spawn(async move {
            if let Err(error) = api
                .post(&channel, &draw::reply_in_thread(&thread, &text))
                .await
            {
                tracing::warn!(error = %error, "cannot reply on Slack");
            }
        });
    }

    /// An ephemeral message to `user` where they wrote (in its thread, if
    /// any): only they see it.
    fn reply_privately(&self, chat: &SlackChat, _to: Ts, user: &str, text: String) {
        let api = self.api.clone();
        let channel = chat.channel.clone();
        let thread = chat.thread_ts.clone();
        let user = SlackUserId(user.to_owned());
        tokio::spawn(async move {
            if let Err(error) = api
                .post_ephemeral(&channel, &user, &text, thread.as_ref())
                .await
            {
                tracing::warn!(error = %error, "cannot tell a Slack user privately");
            }
        });
    }

    /// A reminder in the question's thread, mentioning the place's user.
    async fn remind(
        &self,
        chat: &SlackChat,
        to: Ts,
        reminder: Reminder<'_>,
    ) -> Result<Ts, PlatformFailure> {
        // In the question's thread: the one it is in, else its own.
        let thread = chat
            .thread_ts
            .clone()
            .or_else(|| reminder.thread.map(|root| SlackTs(root.to_owned())))
            .unwrap_or(to.0);
        let message = draw::reminder(&thread, reminder.user, reminder.text);
        self.api.post(&chat.channel, &message).await.map(Ts)
    }

    /// Only a refusal is said, to the presser alone; the envelope (or the
    /// request) was acknowledged when it arrived.
    async fn acknowledge(&self, reply: Reply, ack: Ack) {
        let (Ack::Refused(text) | Ack::Private(text)) = ack else {
            return;
        };
        let shown = match (&reply.response_url, &reply.channel) {
            (Some(url), _) => self.api.respond(url, &text).await,
            (None, Some(channel)) => {
                self.api
                    .post_ephemeral(channel, &reply.user, &text, reply.thread_ts.as_ref())
                    .await
            }
            (None, None) => Ok(()),
        };
        if let Err(error) = shown {
            tracing::warn!(error = %error, "cannot tell a Slack user privately");
        }
    }

    /// A modal keyed like the button that opened it, carrying its
    /// conversation in `private_metadata`.
    async fn ask_own_words(
        &self,
        reply: Reply,
        chat: &SlackChat,
        prompt: OwnWords<'_>,
    ) -> Result<Option<Ts>, PlatformFailure> {
        let Some(trigger) = &reply.trigger_id else {
            return Err(PlatformFailure::Permanent(
                "the press carried no trigger id".to_owned(),
            ));
        };
        let question = prompt.question;
        let title = match question.header.trim() {
            "" => prompt.locale.strings().other,
            header => header,
        };
        let label = match question.text.trim() {
            "" => title,
            text => text,
        };
        let modal = draw::own_words_modal(
            prompt.key,
            &cut(title, MAX_MODAL_TITLE_CHARS, Unit::Utf16),
            label,
            prompt.placeholder(),
            prompt.multiline(),
            &chat.channel.0,
            prompt.locale,
        );
        self.api.open_view(trigger, modal).await.map(|()| None)
    }
}

/// The HTTP-mode endpoints' state.
#[derive(Debug, Clone)]
struct Endpoint {
    inbound: Arc<Inbound>,
    check: Arc<SignatureCheck>,
}

impl Endpoint {
    /// Refuses a request Slack did not sign, or signed more than five
    /// minutes ago.
    fn refuse(&self, headers: &HeaderMap, body: &[u8]) -> Option<Response> {
        let header = |name: &str| {
            headers
                .get(name)
                .and_then(|value| value.to_str().ok())
                .unwrap_or_default()
        };
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |elapsed| elapsed.as_secs() as i64);
        let checked = self.check.verify(
            header("x-slack-request-timestamp"),
            header("x-slack-signature"),
            body,
            now,
        );
        checked.err().map(|refusal| {
            ApiError::new(
                StatusCode::UNAUTHORIZED,
                "unauthorized",
                format!("not a fresh request signed by Slack: {refusal}"),
            )
            .into_response()
        })
    }

    /// An empty 200 once what the request carries is recorded (it
    /// acknowledges a press and closes a modal); a 503 when it is not (in
    /// time), so Slack sends an event again and shows a press as failed.
    async fn take(&self, delivered: Option<Delivered>) -> Response {
        let Some(delivered) = delivered else {
            return StatusCode::OK.into_response();
        };
        match self.inbound.take(delivered).await {
            Handled::Done => StatusCode::OK.into_response(),
            Handled::Retry => {
                ApiError::unavailable("the event could not be recorded in time").into_response()
            }
        }
    }

    fn bot(&self) -> SlackUserId {
        self.inbound
            .bot
            .get()
            .cloned()
            .unwrap_or_else(|| SlackUserId(String::new()))
    }
}

/// `POST /slack/events`: the Events API (and its URL check).
async fn events(State(endpoint): State<Endpoint>, headers: HeaderMap, body: Bytes) -> Response {
    if let Some(refused) = endpoint.refuse(&headers, &body) {
        return refused;
    }
    match parse::events_body(&body, &endpoint.bot()) {
        Ok(EventsBody::UrlVerification { challenge }) => {
            axum::Json(serde_json::json!({ "challenge": challenge })).into_response()
        }
        Ok(EventsBody::Event(delivered)) => endpoint.take(delivered).await,
        Err(BadRequest(message)) => {
            ApiError::new(StatusCode::BAD_REQUEST, "invalid_event", message).into_response()
        }
    }
}

/// `POST /slack/interactivity`: button presses and modal submissions.
async fn interactivity(
    State(endpoint): State<Endpoint>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    if let Some(refused) = endpoint.refuse(&headers, &body) {
        return refused;
    }
    match parse::interactivity_body(&body) {
        Ok(delivered) => endpoint.take(delivered).await,
        Err(BadRequest(message)) => {
            ApiError::new(StatusCode::BAD_REQUEST, "invalid_interaction", message).into_response()
        }
    }
}

/// `POST /slack/commands`: askbridge's slash command, answered through
/// its `response_url` (the request's own answer is empty).
async fn commands(State(endpoint): State<Endpoint>, headers: HeaderMap, body: Bytes) -> Response {
    if let Some(refused) = endpoint.refuse(&headers, &body) {
        return refused;
    }
    match parse::command_body(&body) {
        Ok(delivered) => endpoint.take(delivered).await,
        Err(BadRequest(message)) => {
            ApiError::new(StatusCode::BAD_REQUEST, "invalid_command", message).into_response()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slack_the_documented_manifest_asks_for_every_scope_used() {
        let docs = include_str!("../../../../docs/channels/slack.md");
        let (_, after) = docs
            .split_once("       bot:\n")
            .expect("the manifest's bot scopes");
        let manifest: Vec<&str> = after
            .lines()
            .map_while(|line| line.trim().strip_prefix("- "))
            .collect();
        let used: Vec<&str> = BOT_SCOPES.iter().map(|(scope, _)| *scope).collect();
        assert_eq!(manifest, used);
    }
}

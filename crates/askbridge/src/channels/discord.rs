//! The Discord channel wired to the bridge.
//!
//! [`askbridge_discord`] draws and reads Discord messages, modals and
//! interactions and talks to Discord; this module only translates for the
//! shared [`ChatDriver`]:
//!
//! - [`DiscordPlatform`] is Discord as a [`ChatPlatform`]: it opens DMs,
//!   sends and edits messages, answers interactions (a deferred update
//!   when a press was taken — the edit that follows shows it — and an
//!   ephemeral message, seen by the presser alone, when it was refused)
//!   and asks for own words with a modal.
//! - A press or a modal's submission on the gateway is acknowledged (a
//!   deferred update) the moment it arrives, before it waits for the
//!   person's earlier events, the ask's lock or the database: Discord
//!   shows a press that has no answer within 3 seconds as failed, and a
//!   busy machine's storage can take longer. A refusal then follows up as
//!   an ephemeral message. "Other…" is not: its answer is the modal.
//! - [`Discord`] builds it from `[discord]`, listens on the gateway, and
//!   serves `POST /discord/interactions` when `DISCORD_PUBLIC_KEY` is set:
//!   Ed25519-checked, PING answered with PONG, and every other
//!   interaction answered in the HTTP response, as Discord expects.

use std::sync::Arc;
use std::time::Duration;

use askbridge_core::failure::{BadRequest, PlatformFailure, SetupError};
use askbridge_core::inbound::Inbound;
use askbridge_core::model::{ChannelKind, Place};
use askbridge_core::render::{self, Capabilities, Locale, OptionRef, Unit, View, cut};
use askbridge_discord::parse::{self, HttpInteraction, InteractionRef};
use askbridge_discord::render::{self as draw, Destination, Message};
use askbridge_discord::run::{DiscordApi, Gateway, Verifier};
use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use serenity::builder::CreateInteractionResponse;
use serenity::model::id::{ChannelId, MessageId, UserId};
use tokio::sync::oneshot;

use crate::bridge::Bridge;
use crate::chat::driver::{Ack, ChatDriver, ChatPlatform, Drawing, OwnWords, Reminder};
use crate::chat::{self, AllowList};
use crate::config::DiscordConfig;
use crate::http::ApiError;

/// Where Discord posts interactions when an endpoint URL is set.
pub const INTERACTIONS_PATH: &str = "/discord/interactions";
/// Longest modal title and text-input label Discord takes.
const MAX_MODAL_LABEL_CHARS: usize = 45;
/// How long an interaction's answer is tried (an HTTP interaction waits
/// this long for the driver's): Discord gives 3 seconds for the initial
/// response.
const HTTP_ANSWER_WITHIN: Duration = Duration::from_millis(2_500);

/// The Discord channel and its inbound side, built from the config.
#[derive(Debug, Clone)]
pub struct Discord {
    driver: Arc<ChatDriver<DiscordPlatform>>,
    gateway: Gateway,
    verifier: Option<Arc<Verifier>>,
    /// Registers `/askbridge`, in the language of askbridge's words.
    api: DiscordApi,
    locale: Locale,
}

impl Discord {
    /// Connects the REST client and registers the channel with the
    /// bridge. Call inside the runtime.
    pub fn new(bridge: &Bridge, config: &DiscordConfig) -> Result<Discord, SetupError> {
        let api = client(config)?;
        let gateway = Gateway::new(config.token.expose(), config.api_url.as_deref())?;
        let verifier = config
            .public_key
            .as_deref()
            .map(Verifier::new)
            .transpose()?
            .map(Arc::new);
        let driver = ChatDriver::register(
            bridge,
            DiscordPlatform { api: api.clone() },
            Drawing {
                caps: Capabilities::DISCORD.with_mode(config.render),
                locale: config.locale,
            },
            AllowList::new(config.allowed_users.iter().cloned()),
        );
        Ok(Discord {
            driver,
            gateway,
            verifier,
            api,
            locale: config.locale,
        })
    }

    /// `POST /discord/interactions`, when `DISCORD_PUBLIC_KEY` is set.
    pub fn interactions_router(&self) -> Option<Router> {
        let verifier = Arc::clone(self.verifier.as_ref()?);
        Some(
            Router::new()
                .route(INTERACTIONS_PATH, post(interactions))
                .with_state(Endpoint {
                    driver: Arc::clone(&self.driver),
                    verifier,
                }),
        )
    }

    /// The lease under which the gateway runs: one session per bot, on
    /// one instance at a time.
    pub const RECEIVING_LEASE: &'static str = "discord/gateway";

    /// Registers `/askbridge`, then connects to the gateway and handles
    /// what arrives, for as long as the daemon runs (serenity reconnects
    /// and resumes by itself). A command Discord refused is logged: asks
    /// work without it.
    pub fn start(&self) -> tokio::task::JoinHandle<()> {
        let driver = Arc::clone(&self.driver);
        let gateway = self.gateway.clone();
        let (api, locale) = (self.api.clone(), self.locale);
        tokio::spawn(async move {
            if let Err(error) = api.register_command(locale).await {
                tracing::warn!(error = %error, "cannot register the /askbridge command with Discord");
            }
            let listening = gateway
                .listen(move |event| {
                    let inbound = parse::inbound(event);
                    let at_once = acknowledged_at_once(&inbound);
                    let inbound = inbound.map_reply(|interaction| {
                        if at_once {
                            Reply::Deferred(acknowledge_now(&api, interaction))
                        } else {
                            Reply::Gateway(interaction)
                        }
                    });
                    let lined = driver.line_up(inbound, None);
                    async move {
                        let _handled = lined.await;
                    }
                })
                .await;
            if let Err(reason) = listening {
                tracing::error!(reason = %reason, "Discord refused the bot; check DISCORD_BOT_TOKEN");
            }
        })
    }
}

/// The REST client for `[discord]`: the token on Discord, or on the
/// configured API URL.
pub fn client(config: &DiscordConfig) -> Result<DiscordApi, SetupError> {
    DiscordApi::new(config.token.expose(), config.api_url.as_deref())
}

/// Whether an interaction from the gateway is acknowledged as it
/// arrives: a press, unless it asks for own words (answered with the
/// modal), and a modal's submission.
fn acknowledged_at_once<C, M, R>(inbound: &Inbound<C, M, R>) -> bool {
    match inbound {
        Inbound::Press(press) => press
            .button
            .as_ref()
            .is_none_or(|button| button.option != OptionRef::Other),
        Inbound::Submission(_) => true,
        Inbound::Typed(_) | Inbound::Command(_) => false,
    }
}

/// Sends a deferred update for `interaction` now, on a task of its own;
/// what comes of it follows with the [`Deferred`].
fn acknowledge_now(api: &DiscordApi, interaction: InteractionRef) -> Deferred {
    let (done, acknowledged) = oneshot::channel();
    let api = api.clone();
    let answering = interaction.clone();
    tokio::spawn(async move {
        let answered = chat::answer_within(HTTP_ANSWER_WITHIN, || {
            api.respond(&answering, draw::acknowledge())
        })
        .await;
        if let Err(error) = &answered {
            tracing::warn!(error = %error, "cannot acknowledge a Discord interaction");
        }
        let _ = done.send(answered.is_ok());
    });
    Deferred {
        interaction,
        acknowledged,
    }
}

/// An interaction acknowledged as it arrived ([`acknowledge_now`]).
#[derive(Debug)]
pub struct Deferred {
    interaction: InteractionRef,
    /// Whether Discord took the acknowledgement, once it answered.
    acknowledged: oneshot::Receiver<bool>,
}

/// How an interaction is answered: through the REST callback (gateway),
/// or in the response to Discord's HTTP request.
#[derive(Debug)]
pub enum Reply {
    /// `POST /interactions/{id}/{token}/callback`.
    Gateway(InteractionRef),
    /// Acknowledged already: a notice follows up
    /// (`POST /webhooks/{application}/{token}`).
    Deferred(Deferred),
    /// The body of the HTTP response.
    Http(oneshot::Sender<CreateInteractionResponse>),
}

/// Discord as a [`ChatPlatform`]: serenity's REST client.
#[derive(Debug)]
pub struct DiscordPlatform {
    api: DiscordApi,
}

impl DiscordPlatform {
    async fn respond(&self, reply: Reply, response: CreateInteractionResponse) {
        match reply {
            Reply::Gateway(interaction) => {
                let answered = chat::answer_within(HTTP_ANSWER_WITHIN, || {
                    self.api.respond(&interaction, response.clone())
                })
                .await;
                if let Err(error) = answered {
                    tracing::warn!(error = %error, "cannot answer a Discord interaction");
                }
            }
            Reply::Http(answer) => {
                if answer.send(response).is_err() {
                    tracing::warn!("a Discord interaction was answered too late");
                }
            }
            Reply::Deferred(_) => {
                tracing::warn!("a Discord interaction acknowledged already cannot be answered so");
            }
        }
    }

    /// A notice for the presser alone after the acknowledgement sent as
    /// the interaction arrived, once Discord took that.
    async fn follow_up(&self, deferred: Deferred, text: &str) {
        if deferred.acknowledged.await != Ok(true) {
            return;
        }
        let message = draw::notice_follow_up(text);
        let sent = chat::answer_within(HTTP_ANSWER_WITHIN, || {
            self.api.follow_up(&deferred.interaction, &message)
        })
        .await;
        if let Err(error) = sent {
            tracing::warn!(error = %error, "cannot follow up a Discord interaction");
        }
    }
}

impl ChatPlatform for DiscordPlatform {
    type Chat = ChannelId;
    type MessageId = MessageId;
    type Message = Message;
    type Reply = Reply;

    const KIND: ChannelKind = ChannelKind::Discord;

    fn conversation(chat: &ChannelId) -> String {
        chat.get().to_string()
    }

    fn parse_conversation(text: &str) -> Option<ChannelId> {
        text.parse().ok()
    }

    /// A channel ask's press comes from that channel (or thread). A DM's
    /// channel id is Discord's to choose and only its recipient can press
    /// there, so a DM ask's press must come from the DM's user.
    /// Snowflakes begin with the time they were made.
    fn sent_before(a: &MessageId, b: &MessageId) -> bool {
        a < b
    }

    fn place_of(chat: &ChannelId) -> Place {
        Place::DiscordChannel {
            channel_id: chat.get(),
        }
    }

    async fn open(&self, place: &Place) -> Result<ChannelId, PlatformFailure> {
        match Destination::of(place) {
            Some(Destination::Channel(channel)) => Ok(channel),
            Some(Destination::User(user)) => self.api.dm_channel(user).await,
            None => Err(PlatformFailure::Permanent(
                "not a Discord target".to_owned(),
            )),
        }
    }

    fn ask_messages(&self, view: &View, _chat: &ChannelId) -> Vec<Message> {
        draw::ask_messages(view)
    }

    fn context_message(&self, block: &render::Block, _chat: &ChannelId) -> Message {
        draw::context_message(block)
    }

    fn text_message(&self, text: &str, _chat: &ChannelId) -> Message {
        Message::text(text)
    }

    /// A reply chain: every ask of the thread replies to its first
    /// message.
    fn threads(_chat: &ChannelId) -> bool {
        true
    }

    fn in_thread(&self, message: &mut Message, root: &MessageId) {
        message.reply_to.get_or_insert(*root);
    }

    fn text_of(message: &Message) -> &str {
        &message.content
    }

    async fn send(
        &self,
        chat: &ChannelId,
        message: Message,
        _once: &str,
    ) -> Result<MessageId, PlatformFailure> {
        self.api.send(*chat, &message).await
    }

    async fn show_step(
        &self,
        chat: &ChannelId,
        message: MessageId,
        step: &render::Step,
    ) -> Result<Option<MessageId>, PlatformFailure> {
        self.api
            .edit(*chat, message, &draw::step_message(step))
            .await
            .map(|()| None)
    }

    async fn close(
        &self,
        chat: &ChannelId,
        message: MessageId,
        shown: &str,
        status: &str,
    ) -> Result<(), PlatformFailure> {
        self.api
            .edit(*chat, message, &draw::closed(shown, status))
            .await
    }

    fn reply(&self, chat: &ChannelId, to: MessageId, text: String) {
        let api = self.api.clone();
        let chat = *chat;
        tokio::spawn(async move {
            if let Err(error) = api.send(chat, &draw::reply_to(to, &text)).await {
                tracing::warn!(error = %error, "cannot reply on Discord");
            }
        });
    }

    /// A reminder replying to the question, pinging the place's user.
    async fn remind(
        &self,
        chat: &ChannelId,
        to: MessageId,
        reminder: Reminder<'_>,
    ) -> Result<MessageId, PlatformFailure> {
        let text = reminder.text;
        let user = reminder
            .user
            .and_then(|user| user.parse::<u64>().ok())
            .and_then(std::num::NonZeroU64::new)
            .map(UserId::from);
        self.api.send(*chat, &draw::reminder(to, user, text)).await
    }

    /// A taken press is a deferred update: the edit that follows (the
    /// closed question, the next step) is what the person sees. A refusal
    /// is an ephemeral message, for the presser alone.
    async fn acknowledge(&self, reply: Reply, ack: Ack) {
        if let Reply::Deferred(deferred) = reply {
            return match &ack {
                Ack::Refused(text) | Ack::Private(text) => self.follow_up(deferred, text).await,
                // The deferred update said it all; the edit that follows
                // shows the rest.
                Ack::Taken(_) | Ack::Quiet => {}
            };
        }
        let response = match &ack {
            Ack::Refused(text) | Ack::Private(text) => draw::notice(text),
            Ack::Taken(_) | Ack::Quiet => draw::acknowledge(),
        };
        self.respond(reply, response).await;
    }

    /// A modal with one text input, keyed like the button that opened it.
    async fn ask_own_words(
        &self,
        reply: Reply,
        _chat: &ChannelId,
        prompt: OwnWords<'_>,
    ) -> Result<Option<MessageId>, PlatformFailure> {
        let question = prompt.question;
        let title = [question.header.trim(), question.text.trim()]
            .into_iter()
            .find(|text| !text.is_empty())
            .unwrap_or(prompt.locale.strings().other);
        let label = match question.text.trim() {
            "" => title,
            text => text,
        };
        let modal = draw::own_words_modal(
            prompt.key,
            &cut(title, MAX_MODAL_LABEL_CHARS, Unit::Utf16),
            &cut(label, MAX_MODAL_LABEL_CHARS, Unit::Utf16),
            prompt.placeholder(),
            prompt.multiline(),
        );
        self.respond(reply, modal).await;
        Ok(None)
    }
}

/// The HTTP interactions endpoint's state.
#[derive(Debug, Clone)]
struct Endpoint {
    driver: Arc<ChatDriver<DiscordPlatform>>,
    verifier: Arc<Verifier>,
}

/// `POST /discord/interactions`: an interaction from Discord, refused with
/// 401 unless `X-Signature-Ed25519` signs `X-Signature-Timestamp` + body.
async fn interactions(
    State(endpoint): State<Endpoint>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let header = |name: &str| {
        headers
            .get(name)
            .and_then(|value| value.to_str().ok())
            .unwrap_or_default()
    };
    let signature = header("x-signature-ed25519");
    let timestamp = header("x-signature-timestamp");
    if !endpoint.verifier.verify(signature, timestamp, &body) {
        return ApiError::new(
            StatusCode::UNAUTHORIZED,
            "unauthorized",
            "missing or bad X-Signature-Ed25519 / X-Signature-Timestamp",
        )
        .into_response();
    }
    let event = match parse::http_interaction(&body) {
        // serenity's `Pong` carries `"data": null`; Discord documents
        // `{"type": 1}` alone.
        Ok(HttpInteraction::Ping) => {
            return axum::Json(serde_json::json!({"type": 1})).into_response();
        }
        Ok(HttpInteraction::Event(Some(event))) => event,
        Ok(HttpInteraction::Event(None)) => return answer(draw::acknowledge()),
        Err(BadRequest(message)) => {
            return ApiError::new(StatusCode::BAD_REQUEST, "invalid_interaction", message)
                .into_response();
        }
    };
    let (tx, rx) = oneshot::channel();
    // The driver finishes even if Discord gives up on this request.
    // Discord does not offer an event again: a press that could not be
    // recorded is left unanswered, so the person sees it fail.
    let inbound = parse::inbound(event).map_reply(|_| Reply::Http(tx));
    tokio::spawn(endpoint.driver.line_up(inbound, None));
    match tokio::time::timeout(HTTP_ANSWER_WITHIN, rx).await {
        Ok(Ok(response)) => answer(response),
        // Not answered in time (or not at all): a deferred update keeps
        // Discord from showing a failure; what was recorded stands.
        Ok(Err(_)) | Err(_) => answer(draw::acknowledge()),
    }
}

fn answer(response: CreateInteractionResponse) -> Response {
    axum::Json(response).into_response()
}

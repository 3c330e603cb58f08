//! The Microsoft Teams channel wired to the bridge.
//!
//! [`askbridge_teams`] draws asks as Adaptive Cards, reads activities,
//! checks their tokens and talks to the Bot Connector; this module only
//! translates for the shared [`ChatDriver`]:
//!
//! - [`TeamsPlatform`] is Teams as a [`ChatPlatform`]: it posts and
//!   updates cards (a `teams:user/…` target in the bot's personal chat
//!   with the person, created on the first ask), answers a card's action
//!   in the invoke's own HTTP answer (taken, refused — seen by the presser
//!   alone — or a prompt for the field), and replies to typed messages.
//! - [`Teams`] serves `POST /teams/messages`: an activity of another
//!   channel than `msteams` is refused (403), every activity's token is
//!   checked (401 otherwise, nothing done; with `insecure_skip_token_check`
//!   only a loopback `serviceUrl` is taken instead), the conversation's
//!   `serviceUrl`, tenant and bot id are kept (in the database, so a
//!   restart can still post and update there), and the activity is handed
//!   to the driver in its person's line; a delivery of an activity again
//!   is acted on once. Any instance may take any activity.

use std::collections::HashMap;
use std::future::Future;
use std::sync::{Arc, Mutex, PoisonError};

use askbridge_core::failure::{PlatformFailure, SetupError};
use askbridge_core::inbound::Handled;
use askbridge_core::model::{ChannelKind, Place};
use askbridge_core::render::{self, Capabilities, Locale, View, fill};
use askbridge_teams::auth::{self, TokenCheck};
use askbridge_teams::parse;
use askbridge_teams::render::{self as draw, Destination, Mention, Message};
use askbridge_teams::run::{Connector, Credentials};
use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use serde_json::{Value, json};
use tokio::sync::oneshot;

use crate::bridge::Bridge;
use crate::chat::AllowList;
use crate::chat::driver::{Ack, ChatDriver, ChatPlatform, Drawing, OwnWords, Reminder};
use crate::chat::inbox::Inbox;
use crate::config::TeamsConfig;
use crate::http::error::ApiError;

/// Where the Bot Connector posts activities.
pub const MESSAGES_PATH: &str = "/teams/messages";

/// The Teams channel and its inbound side, built from the config.
#[derive(Debug, Clone)]
pub struct Teams {
    inbound: Arc<Inbound>,
}

impl Teams {
    /// Builds the Bot Connector client and registers the channel with the
    /// bridge. Call inside the runtime.
    pub fn new(bridge: &Bridge, config: &TeamsConfig) -> Result<Teams, SetupError> {
        let connector = Arc::new(connector(config)?);
        let check = match config.insecure_skip_token_check {
            true => None,
            false => Some(TokenCheck::new(
                &config.app_id,
                &config.openid_metadata_url,
                connector.http().clone(),
            )),
        };
        let kept = Arc::new(Kept {
            default: config.service_url.clone(),
            tenant: config.tenant_id.clone(),
            values: crate::chat::kept::Kept::new(ChannelKind::Teams, bridge),
            threads: Mutex::default(),
        });
        let driver = ChatDriver::register(
            bridge,
            TeamsPlatform {
                connector,
                kept: Arc::clone(&kept),
                tenant: config.tenant_id.clone(),
                locale: config.locale,
            },
            Drawing {
                caps: Capabilities::TEAMS.with_mode(config.render),
                locale: config.locale,
            },
            AllowList::new(config.allowed_users.iter().cloned()),
        );
        Ok(Teams {
            inbound: Arc::new(Inbound {
                driver,
                check,
                bot_id: format!("28:{}", config.app_id),
                inbox: Arc::default(),
                kept,
                locale: config.locale,
            }),
        })
    }

    /// `POST /teams/messages`.
    pub fn router(&self) -> Router {
        Router::new()
            .route(MESSAGES_PATH, post(messages))
            .with_state(Arc::clone(&self.inbound))
    }
}

/// The Bot Connector client for `[teams]`.
pub fn connector(config: &TeamsConfig) -> Result<Connector, SetupError> {
    Connector::new(Credentials {
        app_id: config.app_id.clone(),
        password: config.app_password.expose().to_owned(),
        tenant: config.tenant_id.clone(),
        login_url: config.login_url.clone(),
    })
}

/// What activities said, kept in the database (and remembered): each
/// conversation's `serviceUrl`, tenant and bot id, each tenant's
/// `serviceUrl` (for conversations never heard from), each person's Teams
/// id, name and the conversation they last wrote in, the personal chats
/// the bot opened.
#[derive(Debug)]
struct Kept {
    /// The configured service URL, for a conversation of a tenant never
    /// heard from.
    default: String,
    /// The configured tenant (a single-tenant bot's).
    tenant: Option<String>,
    values: crate::chat::kept::Kept,
    /// The thread (its post's id) each recent message in a channel is in,
    /// for the replies to it: not kept over a restart (a reply follows
    /// its message at once).
    threads: Mutex<HashMap<String, String>>,
}

impl Kept {
    /// The service URL of `conversation`: its own, else that of the
    /// configured tenant, else the configured one.
    async fn service_url(&self, conversation: &str) -> String {
        let known = match self.get(&service_key(conversation)).await {
            Ok(Some(url)) => Ok(Some(url)),
            Ok(None) => self.tenant_url(self.tenant.as_deref()).await,
            Err(error) => Err(error),
        };
        match known {
            Ok(url) => url.unwrap_or_else(|| self.default.clone()),
            Err(error) => {
                tracing::warn!(error = %error, "cannot read a Teams conversation's service URL");
                self.default.clone()
            }
        }
    }

    /// The service URL activities of `tenant` last came from.
    async fn tenant_url(&self, tenant: Option<&str>) -> Result<Option<String>, PlatformFailure> {
        match tenant {
            Some(tenant) => self.get(&tenant_service_key(tenant)).await,
            None => Ok(None),
        }
    }

    /// Keeps what an activity said: `url` serves `conversation`.
    async fn learn(&self, conversation: &str, url: &str) {
        self.keep(&service_key(conversation), url).await;
    }

    /// Keeps what a person's activity said: where it came from, in which
    /// tenant, to which bot, who sent it and their name.
    async fn learn_activity(&self, activity: &parse::Activity) {
        let conversation = &activity.conversation.id;
        self.learn(conversation, &activity.service_url).await;
        if let Some(root) = &activity.conversation.thread {
            self.in_thread(&activity.id, root);
        }
        if activity.teams_id != activity.sender {
            self.keep(&user_key(&activity.sender), &activity.teams_id)
                .await;
        }
        if let Some(name) = activity
            .name
            .as_deref()
            .filter(|name| !name.trim().is_empty())
        {
            self.keep(&name_key(&activity.sender), name).await;
        }
        self.keep(&seen_key(&activity.sender), conversation).await;
        if let Some(tenant) = &activity.tenant {
            self.keep(&tenant_key(conversation), tenant).await;
            self.keep(&tenant_service_key(tenant), &activity.service_url)
                .await;
        }
        if let Some(bot) = &activity.bot {
            self.keep(&bot_key(conversation), bot).await;
        }
    }

    async fn keep(&self, key: &str, value: &str) {
        self.values.keep(key, value).await;
    }

    async fn get(&self, key: &str) -> Result<Option<String>, PlatformFailure> {
        self.values.get(key).await
    }

    /// Remembers that message `id` is in the thread of post `root`.
    fn in_thread(&self, id: &str, root: &str) {
        let mut threads = self.threads.lock().unwrap_or_else(PoisonError::into_inner);
        if threads.len() >= MAX_THREADS_KEPT {
            threads.clear();
        }
        threads.insert(id.to_owned(), root.to_owned());
    }

    /// The post whose thread message `id` is in: remembered, else the
    /// message itself (a post).
    fn thread_of(&self, id: &str) -> String {
        let threads = self.threads.lock().unwrap_or_else(PoisonError::into_inner);
        threads.get(id).cloned().unwrap_or_else(|| id.to_owned())
    }
}

/// How many messages' threads are remembered ([`Kept::in_thread`]).
const MAX_THREADS_KEPT: usize = 10_000;

/// The stored key of a conversation's service URL.
fn service_key(conversation: &str) -> String {
    format!("service/{conversation}")
}

/// The stored key of a conversation's tenant.
fn tenant_key(conversation: &str) -> String {
    format!("tenant/{conversation}")
}

/// The stored key of the bot's id in a conversation (`28:<app id>`).
fn bot_key(conversation: &str) -> String {
    format!("bot/{conversation}")
}

/// The stored key of the service URL a tenant's activities come from.
fn tenant_service_key(tenant: &str) -> String {
    format!("tenant-service/{tenant}")
}

/// The stored key of the conversation a person last wrote in, by their
/// AAD object id (else Teams id).
fn seen_key(sender: &str) -> String {
    format!("seen/{sender}")
}

/// The stored key of a person's Teams id, by their AAD object id.
fn user_key(aad_object_id: &str) -> String {
    format!("user/{aad_object_id}")
}

/// The stored key of a person's display name, by their AAD object id.
fn name_key(aad_object_id: &str) -> String {
    format!("name/{aad_object_id}")
}

/// The stored key of a person's personal chat with the bot.
fn personal_key(aad_object_id: &str) -> String {
    format!("personal/{aad_object_id}")
}

/// What the Bot Connector posts, translated for the driver.
#[derive(Debug)]
struct Inbound {
    driver: Arc<ChatDriver<TeamsPlatform>>,
    /// `None` only with `insecure_skip_token_check`.
    check: Option<TokenCheck>,
    /// The bot's own id (`28:<app id>`).
    bot_id: String,
    inbox: Arc<Inbox>,
    kept: Arc<Kept>,
    locale: Locale,
}

/// Why an activity was not taken.
#[derive(Debug)]
enum Refusal {
    /// Unreadable.
    Invalid(String),
    /// Not a Teams activity (`channelId` other than `msteams`).
    OtherChannel(String),
    /// Its token does not count.
    Unauthorized(String),
    /// Not recorded in time: the Bot Connector delivers it again.
    Unrecorded,
}

impl Inbound {
    /// Checks and acts on one activity; returns the HTTP answer's body (an
    /// invoke's answer, else `{}`).
    fn receive(
        self: &Arc<Self>,
        authorization: Option<String>,
        body: Bytes,
    ) -> impl Future<Output = Result<Value, Refusal>> + Send + 'static + use<> {
        let inbound = Arc::clone(self);
        async move {
            let raw: Value = serde_json::from_slice(&body)
                .map_err(|error| Refusal::Invalid(format!("the body is not JSON: {error}")))?;
            inbound.admit(authorization.as_deref(), &raw).await?;
            let is_invoke = raw["type"] == "invoke";
            let activity = parse::activity(&raw, Some(&inbound.bot_id))
                .map_err(|bad| Refusal::Invalid(bad.0))?;
            let Some(activity) = activity else {
                if let (Some(conversation), Some(url)) = (
                    raw["conversation"]["id"].as_str(),
                    raw["serviceUrl"].as_str(),
                ) {
                    let conversation = conversation.split(";messageid=").next().unwrap_or_default();
                    inbound.kept.learn(conversation, url).await;
                }
                return Ok(match is_invoke {
                    true => draw::invoke_answer(None),
                    false => json!({}),
                });
            };
            inbound.kept.learn_activity(&activity).await;
            let id = activity.id.clone();
            let (reply, answer) = oneshot::channel();
            let event = parse::inbound(activity, reply);
            let handling = inbound.driver.line_up(event, Some(&id));
            let handled = inbound.inbox.take(&id, handling).await;
            match (handled, is_invoke) {
                (Handled::Done, true) => Ok(answer.await.unwrap_or_else(|_| {
                    // Taken by an earlier delivery of the same press.
                    draw::invoke_answer(Some(inbound.locale.strings().submitted))
                })),
                (Handled::Done, false) => Ok(json!({})),
                (Handled::Retry, _) => Err(Refusal::Unrecorded),
            }
        }
    }

    /// Whether an activity is taken at all, before anything of it is
    /// read or kept: a Teams one ([`auth::teams_only`]) whose token counts
    /// — or, with the token check off, from a loopback `serviceUrl`.
    async fn admit(&self, authorization: Option<&str>, raw: &Value) -> Result<(), Refusal> {
        auth::teams_only(raw["channelId"].as_str())
            .map_err(|refused| Refusal::OtherChannel(refused.0))?;
        let service_url = raw["serviceUrl"].as_str().unwrap_or_default();
        match &self.check {
            Some(check) => check
                .check(authorization, auth::TEAMS_CHANNEL, service_url)
                .await
                .map_err(|refused| Refusal::Unauthorized(refused.0)),
            None if auth::loopback_url(service_url) => Ok(()),
            None => Err(Refusal::Unauthorized(format!(
                "teams.insecure_skip_token_check is on, so only a Bot Connector on this machine \
                 (a loopback serviceUrl) is taken, not {service_url:?}"
            ))),
        }
    }
}

/// Teams as a [`ChatPlatform`]: the Bot Connector.
#[derive(Debug)]
pub struct TeamsPlatform {
    connector: Arc<Connector>,
    kept: Arc<Kept>,
    /// The tenant personal chats are created in (a single-tenant bot's).
    tenant: Option<String>,
    locale: Locale,
}

impl TeamsPlatform {
    async fn url(&self, conversation: &str) -> String {
        self.kept.service_url(conversation).await
    }

    /// The bot's personal chat with a person: kept, or created for their
    /// Teams id (known once they wrote to the bot), else their AAD object
    /// id — in their tenant (the configured one, else that of the
    /// conversation they last wrote in), at that tenant's service URL
    /// when an activity of it said one, else the configured one.
    async fn personal_chat(&self, aad_object_id: &str) -> Result<String, PlatformFailure> {
        let key = personal_key(aad_object_id);
        if let Some(conversation) = self.kept.get(&key).await? {
            return Ok(conversation);
        }
        let seen = self.kept.get(&seen_key(aad_object_id)).await?;
        let tenant = match (&self.tenant, &seen) {
            (Some(tenant), _) => Some(tenant.clone()),
            (None, Some(conversation)) => self.kept.get(&tenant_key(conversation)).await?,
            (None, None) => None,
        };
        let bot = match &seen {
            Some(conversation) => self.kept.get(&bot_key(conversation)).await?,
            None => None,
        };
        let member = self
            .kept
            .get(&user_key(aad_object_id))
            .await?
            .unwrap_or_else(|| aad_object_id.to_owned());
        let url = self
            .kept
            .tenant_url(tenant.as_deref())
            .await?
            .unwrap_or_else(|| self.kept.default.clone());
        let conversation = self
            .connector
            .personal_chat(&url, bot.as_deref(), &member, tenant.as_deref())
            .await?;
        self.kept.learn(&conversation, &url).await;
        self.kept.keep(&key, &conversation).await;
        Ok(conversation)
    }
}

/// Whether `conversation` is a team's channel, where every post starts
/// a thread (`19:…@thread.tacv2`; `@thread.skype` in older teams); group
/// chats (`@thread.v2`) and personal chats have none.
fn is_channel(conversation: &str) -> bool {
    conversation.ends_with("@thread.tacv2") || conversation.ends_with("@thread.skype")
}

/// The thread of post `root` in channel `channel`, as Teams names it: a
/// message posted there is a reply in the thread.
fn thread(channel: &str, root: &str) -> String {
    format!("{channel};messageid={root}")
}

impl TeamsPlatform {
    /// Whom a reminder mentions: the person's Teams id and name as their
    /// activities said, else their AAD object id (Teams takes it too).
    async fn mention(&self, aad_object_id: &str) -> Mention {
        let known = |key: String| async move { self.kept.get(&key).await.ok().flatten() };
        Mention {
            id: known(user_key(aad_object_id))
                .await
                .unwrap_or_else(|| aad_object_id.to_owned()),
            name: known(name_key(aad_object_id))
                .await
                .unwrap_or_else(|| aad_object_id.to_owned()),
        }
    }
}

impl ChatPlatform for TeamsPlatform {
    type Chat = String;
    type MessageId = String;
    type Message = Message;
    type Reply = oneshot::Sender<Value>;

    const KIND: ChannelKind = ChannelKind::Teams;

    fn conversation(chat: &String) -> String {
        chat.clone()
    }

    fn parse_conversation(text: &str) -> Option<String> {
        (!text.is_empty()).then(|| text.to_owned())
    }

    fn place_of(chat: &String) -> Place {
        Place::Teams {
            conversation: chat.clone(),
        }
    }

    async fn open(&self, place: &Place) -> Result<String, PlatformFailure> {
        match Destination::of(place) {
            Some(Destination::Conversation(conversation)) => Ok(conversation),
            Some(Destination::User(aad_object_id)) => self.personal_chat(&aad_object_id).await,
            None => Err(PlatformFailure::Permanent("not a Teams target".to_owned())),
        }
    }

    fn ask_messages(&self, view: &View, _chat: &String) -> Vec<Message> {
        draw::ask_messages(view, self.locale)
    }

    fn context_message(&self, block: &render::Block, _chat: &String) -> Message {
        Message::context(block)
    }

    fn text_message(&self, text: &str, _chat: &String) -> Message {
        Message::text(text)
    }

    /// A channel's posts have threads; chats have none.
    fn threads(chat: &String) -> bool {
        is_channel(chat)
    }

    fn in_thread(&self, message: &mut Message, root: &String) {
        message.thread.get_or_insert_with(|| root.clone());
    }

    fn text_of(message: &Message) -> &str {
        &message.text
    }

    /// The Bot Connector takes no idempotency key: a part sent again
    /// after a crash is posted again. A message in a thread is a reply to
    /// the thread's post.
    async fn send(
        &self,
        chat: &String,
        message: Message,
        _once: &str,
    ) -> Result<String, PlatformFailure> {
        let url = self.url(chat).await;
        let conversation = match &message.thread {
            Some(root) => thread(chat, root),
            None => chat.clone(),
        };
        self.connector
            .send(&url, &conversation, &message.activity)
            .await
    }

    async fn show_step(
        &self,
        chat: &String,
        message: String,
        step: &render::Step,
    ) -> Result<Option<String>, PlatformFailure> {
        let url = self.url(chat).await;
        let card = draw::step_message(step, self.locale);
        self.connector
            .update(&url, chat, &message, &card.activity)
            .await
            .map(|()| None)
    }

    async fn close(
        &self,
        chat: &String,
        message: String,
        shown: &str,
        status: &str,
    ) -> Result<(), PlatformFailure> {
        let url = self.url(chat).await;
        let card = draw::closed(shown, status);
        self.connector
            .update(&url, chat, &message, &card.activity)
            .await
    }

    fn reply(&self, chat: &String, to: String, text: String) {
        let (connector, kept, chat) = (
            Arc::clone(&self.connector),
            Arc::clone(&self.kept),
            chat.clone(),
        );
        tokio::spawn(async move {
            let url = kept.service_url(&chat).await;
            let message = Message::text(&text);
            let replied = match is_channel(&chat) {
                // In the message's thread.
                true => {
                    let conversation = thread(&chat, &kept.thread_of(&to));
                    connector.send(&url, &conversation, &message.activity).await
                }
                false => connector.reply(&url, &chat, &to, &message.activity).await,
            };
            if let Err(error) = replied {
                tracing::warn!(error = %error, "cannot reply on Teams");
            }
        });
    }

    /// A reminder replying to the question (in a channel, in the thread
    /// it is in), mentioning the place's person.
    async fn remind(
        &self,
        chat: &String,
        to: String,
        reminder: Reminder<'_>,
    ) -> Result<String, PlatformFailure> {
        let url = self.url(chat).await;
        let whom = match reminder.user {
            Some(user) => Some(self.mention(user).await),
            None => None,
        };
        let message = draw::reminder(reminder.text, whom.as_ref());
        match is_channel(chat) {
            // In the thread the question is in, or its own.
            true => {
                let root = reminder.thread.map_or(to, str::to_owned);
                self.connector
                    .send(&url, &thread(chat, &root), &message.activity)
                    .await
            }
            false => {
                self.connector
                    .reply(&url, chat, &to, &message.activity)
                    .await
            }
        }
    }

    /// The invoke's own answer, seen by the presser alone.
    async fn acknowledge(&self, reply: oneshot::Sender<Value>, ack: Ack) {
        let answer = match &ack {
            Ack::Taken(text) | Ack::Refused(text) | Ack::Private(text) => {
                draw::invoke_answer(Some(text))
            }
            Ack::Quiet => draw::invoke_answer(None),
        };
        if reply.send(answer).is_err() {
            tracing::warn!("a Teams card action was answered too late");
        }
    }

    /// The card carries the own-words field: a Send with nothing typed is
    /// told to type in it.
    async fn ask_own_words(
        &self,
        reply: oneshot::Sender<Value>,
        _chat: &String,
        prompt: OwnWords<'_>,
    ) -> Result<Option<String>, PlatformFailure> {
        let question = prompt.question.text.trim();
        let text = fill(prompt.locale.strings().own_words, &[("q", question)]);
        let _ = reply.send(draw::invoke_answer(Some(&text)));
        Ok(None)
    }
}

/// `POST /teams/messages`: one activity, its token checked.
async fn messages(
    State(inbound): State<Arc<Inbound>>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let authorization = headers
        .get(header::AUTHORIZATION)
        .and_then(|value| value.to_str().ok())
        .map(str::to_owned);
    match inbound.receive(authorization, body).await {
        Ok(answer) => axum::Json(answer).into_response(),
        Err(Refusal::Invalid(message)) => {
            ApiError::new(StatusCode::BAD_REQUEST, "invalid_activity", message).into_response()
        }
        Err(Refusal::OtherChannel(message)) => {
            tracing::warn!(reason = %message, "a Teams activity refused");
            ApiError::new(StatusCode::FORBIDDEN, "not_teams", message).into_response()
        }
        Err(Refusal::Unauthorized(message)) => {
            tracing::warn!(reason = %message, "a Teams activity refused");
            ApiError::new(StatusCode::UNAUTHORIZED, "unauthorized", message).into_response()
        }
        Err(Refusal::Unrecorded) => {
            ApiError::unavailable("the activity could not be recorded in time").into_response()
        }
    }
}

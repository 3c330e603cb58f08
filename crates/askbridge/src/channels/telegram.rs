//! The Telegram channel wired to the bridge.
//!
//! [`askbridge_telegram`] draws and reads Bot API messages and talks to
//! the Bot API; this module decides what to do with them:
//!
//! - [`TelegramPlatform`] is Telegram as a [`ChatPlatform`]: the shared
//!   [`ChatDriver`] posts, records, routes and closes; this only sends,
//!   edits, answers callback queries (a toast: Telegram has nothing
//!   private to the presser) and asks for own words with a forced reply
//!   (Telegram has no modals).
//! - [`Inbound`] translates updates (from long polling or the webhook)
//!   into the driver's presses and typed messages.
//! - [`Telegram`] builds both from the `[telegram]` config, then long-polls
//!   or registers the webhook served by [`Telegram::webhook_router`].

use std::net::SocketAddr;
use std::sync::Arc;

use askbridge_core::failure::{PlatformFailure, SetupError};
use askbridge_core::inbound::Handled;
use askbridge_core::model::{ChannelKind, Place};
use askbridge_core::render::{self, Capabilities, View};
use askbridge_telegram::ChatRef;
use askbridge_telegram::parse::{self};
use askbridge_telegram::render as draw;
use askbridge_telegram::run::TelegramApi;
use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::post;

use teloxide::payloads::SendMessage;

use crate::bridge::Bridge;
use crate::chat::driver::{Ack, ChatDriver, ChatPlatform, Drawing, OwnWords, Reminder};
use crate::chat::{self, AllowList};
use crate::config::{TelegramConfig, TelegramMode};
use crate::http::ApiError;

/// Where Telegram posts updates in webhook mode.
pub const WEBHOOK_PATH: &str = "/telegram/webhook";
/// How long an unanswered callback query is kept trying: Telegram's
/// clients give up on the answer after about fifteen seconds.
const CALLBACK_ANSWER_WINDOW: std::time::Duration = std::time::Duration::from_secs(10);
/// The header Telegram sends the webhook secret in.
const SECRET_HEADER: &str = "x-telegram-bot-api-secret-token";

/// The Telegram channel and its inbound side, built from the config.
#[derive(Debug, Clone)]
pub struct Telegram {
    inbound: Arc<Inbound>,
    mode: TelegramMode,
    /// The bot's id (the token's part before `:`, not secret).
    bot_id: String,
}

impl Telegram {
    /// Connects the Bot API client (throttled to Telegram's limits) and
    /// registers the channel with the bridge. Call inside the runtime.
    pub fn new(bridge: &Bridge, config: &TelegramConfig) -> Result<Telegram, SetupError> {
        let api = client(config)?;
        let driver = ChatDriver::register(
            bridge,
            TelegramPlatform { api },
            Drawing {
                caps: Capabilities::TELEGRAM.with_mode(config.render),
                locale: config.locale,
            },
            AllowList::new(config.allowed_users.iter().cloned()),
        );
        Ok(Telegram {
            inbound: Arc::new(Inbound { driver }),
            mode: config.mode.clone(),
            bot_id: config
                .token
                .expose()
                .split(':')
                .next()
                .unwrap_or_default()
                .to_owned(),
        })
    }

    /// The lease under which receiving must run, when only one instance
    /// may receive: long polling (Telegram answers a second `getUpdates`
    /// consumer with 409 Conflict). A webhook needs none: every instance
    /// may register it and take its requests.
    pub fn receiving_lease(&self) -> Option<String> {
        match self.mode {
            TelegramMode::Polling => Some(format!("telegram/{}", self.bot_id)),
            TelegramMode::Webhook { .. } => None,
        }
    }

    /// The webhook route (webhook mode only), checked against the secret.
    pub fn webhook_router(&self) -> Option<Router> {
        match &self.mode {
            TelegramMode::Polling => None,
            TelegramMode::Webhook { secret, .. } => Some(
                Router::new()
                    .route(WEBHOOK_PATH, post(webhook))
                    .with_state(Webhook {
                        inbound: Arc::clone(&self.inbound),
                        secret: Arc::from(secret.expose()),
                    }),
            ),
        }
    }

    /// Starts receiving updates: long polling, or registering the webhook
    /// (at the configured URL, else `http://<listen>/telegram/webhook`,
    /// which a local Bot API server can reach).
    pub fn start(&self, listen: SocketAddr) -> tokio::task::JoinHandle<()> {
        let inbound = Arc::clone(&self.inbound);
        match self.mode.clone() {
            TelegramMode::Polling => tokio::spawn(async move {
                let api = inbound.api().clone();
                check_token(&api).await;
                api.poll(|updates| {
                    let inbound = Arc::clone(&inbound);
                    async move { inbound.handle_batch(updates).await }
                })
                .await;
            }),
            TelegramMode::Webhook { url, secret } => tokio::spawn(async move {
                check_token(inbound.api()).await;
                let url = url.unwrap_or_else(|| format!("http://{listen}{WEBHOOK_PATH}"));
                let mut wait = std::time::Duration::from_millis(250);
                loop {
                    match inbound.api().set_webhook(&url, secret.expose()).await {
                        Ok(()) => {
                            tracing::info!(%url, "Telegram webhook registered");
                            return;
                        }
                        Err(error) => {
                            tracing::warn!(%url, error = %error, "cannot register the Telegram webhook; retrying");
                            tokio::time::sleep(wait).await;
                            wait = (wait * 2).min(std::time::Duration::from_secs(60));
                        }
                    }
                }
            }),
        }
    }
}

/// The Bot API client for `[telegram]`: the token on the configured API
/// server, throttled to Telegram's limits. Call inside the runtime.
pub fn client(config: &TelegramConfig) -> Result<TelegramApi, SetupError> {
    TelegramApi::new(
        config.token.expose(),
        config.api_url.as_deref(),
        Default::default(),
    )
}

/// Says which bot the token belongs to, or, loudly, that Telegram refused
/// it (the channel keeps retrying: the token may be fixed by BotFather).
async fn check_token(api: &TelegramApi) {
    match api.me().await {
        Ok(me) => tracing::info!(bot = %me.username(), "Telegram bot connected"),
        Err(PlatformFailure::Permanent(reason)) => tracing::error!(
            reason = %reason,
            "Telegram refused the bot token; check TELEGRAM_BOT_TOKEN"
        ),
        Err(error) => tracing::warn!(error = %error, "Telegram is not reachable yet"),
    }
}

/// Telegram as a [`ChatPlatform`]: the Bot API behind `Throttle`.
#[derive(Debug)]
pub struct TelegramPlatform {
    api: TelegramApi,
}

impl ChatPlatform for TelegramPlatform {
    type Chat = ChatRef;
    type MessageId = i32;
    type Message = SendMessage;
    /// A callback query id.
    type Reply = String;

    const KIND: ChannelKind = ChannelKind::Telegram;

    fn conversation(chat: &ChatRef) -> String {
        chat.conversation()
    }

    fn parse_conversation(text: &str) -> Option<ChatRef> {
        ChatRef::parse_conversation(text)
    }

    /// A button's message is in the ask's chat (or topic): Telegram says
    /// which chat every callback query's message is in.
    /// Message ids count up in each chat.
    fn sent_before(a: &i32, b: &i32) -> bool {
        a < b
    }

    fn place_of(chat: &ChatRef) -> Place {
        Place::Telegram {
            chat_id: chat.chat_id,
            thread_id: chat.thread_id,
        }
    }

    async fn open(&self, place: &Place) -> Result<ChatRef, PlatformFailure> {
        ChatRef::of(place)
            .ok_or_else(|| PlatformFailure::Permanent("not a Telegram target".to_owned()))
    }

    fn ask_messages(&self, view: &View, chat: &ChatRef) -> Vec<SendMessage> {
        draw::ask_messages(view, *chat)
    }

    fn context_message(&self, block: &render::Block, chat: &ChatRef) -> SendMessage {
        draw::context_message(block, *chat)
    }

    fn text_message(&self, text: &str, chat: &ChatRef) -> SendMessage {
        chat.message(text)
    }

    /// A reply chain: every ask of the thread replies to its first
    /// message.
    fn threads(_chat: &ChatRef) -> bool {
        true
    }

    fn in_thread(&self, message: &mut SendMessage, root: &i32) {
        draw::in_reply_chain(message, *root);
    }

    fn text_of(message: &SendMessage) -> &str {
        &message.text
    }

    async fn send(
        &self,
        _chat: &ChatRef,
        message: SendMessage,
        _once: &str,
    ) -> Result<i32, PlatformFailure> {
        self.api.send(message).await
    }

    async fn show_step(
        &self,
        chat: &ChatRef,
        message: i32,
        step: &render::Step,
    ) -> Result<Option<i32>, PlatformFailure> {
        self.api
            .edit(*chat, message, &step.text, Some(draw::step_keyboard(step)))
            .await
            .map(|()| None)
    }

    async fn close(
        &self,
        chat: &ChatRef,
        message: i32,
        shown: &str,
        status: &str,
    ) -> Result<(), PlatformFailure> {
        self.api
            .edit(*chat, message, &draw::closed_text(shown, status), None)
            .await
    }

    /// Sending is throttled per chat, so the reply goes out on a task of
    /// its own.
    fn reply(&self, chat: &ChatRef, to: i32, text: String) {
        let api = self.api.clone();
        let reply = draw::reply_to(*chat, to, text);
        tokio::spawn(async move {
            if let Err(error) = api.send(reply).await {
                tracing::warn!(error = %error, "cannot reply on Telegram");
            }
        });
    }

    /// A reminder replying to the question, mentioning the place's user
    /// (a numeric Telegram user id).
    async fn remind(
        &self,
        chat: &ChatRef,
        to: i32,
        reminder: Reminder<'_>,
    ) -> Result<i32, PlatformFailure> {
        let user = reminder.user.and_then(|user| user.parse::<u64>().ok());
        let reminder = draw::reminder(*chat, to, reminder.text, user);
        self.api.send(reminder).await
    }

    /// Every answer is a toast: Telegram has no private message to the
    /// presser alone. Answered in the background, tried again within
    /// Telegram's window: the press is already stored, and a slow answer
    /// must not hold up the updates after it.
    async fn acknowledge(&self, query_id: String, ack: Ack) {
        let notice = match ack {
            Ack::Taken(text) | Ack::Refused(text) | Ack::Private(text) => Some(text),
            Ack::Quiet => None,
        };
        let api = self.api.clone();
        tokio::spawn(async move {
            let answered = chat::answer_within(CALLBACK_ANSWER_WINDOW, || {
                api.answer(&query_id, notice.as_deref())
            })
            .await;
            if let Err(error) = answered {
                tracing::warn!(error = %error, "cannot answer a Telegram callback query");
            }
        });
    }

    /// Telegram has no modals: the query is answered and a forced reply
    /// asks for the words.
    async fn ask_own_words(
        &self,
        query_id: String,
        chat: &ChatRef,
        prompt: OwnWords<'_>,
    ) -> Result<Option<i32>, PlatformFailure> {
        self.acknowledge(query_id, Ack::Quiet).await;
        let message = draw::own_words_prompt(
            *chat,
            &prompt.question.text,
            prompt.placeholder(),
            prompt.locale,
        );
        self.api.send(message).await.map(Some)
    }
}

/// Handles updates: presses and typed messages, translated for the
/// driver.
#[derive(Debug)]
pub struct Inbound {
    driver: Arc<ChatDriver<TelegramPlatform>>,
}

impl Inbound {
    fn api(&self) -> &TelegramApi {
        &self.driver.platform().api
    }

    /// Handles one update. Whatever the bridge recorded is stored before
    /// this returns; replies to the person may still be on their way.
    pub async fn handle(&self, update: parse::Update) -> Handled {
        match parse::inbound(&update) {
            Some(inbound) => self.driver.handle(inbound).await,
            None => Handled::Done,
        }
    }

    /// Handles one `getUpdates` batch, each person's updates in each chat
    /// in the order Telegram gave them; says, for each update, whether it
    /// was taken (not: the database failed for now, so it must be fetched
    /// again rather than confirmed).
    pub async fn handle_batch(&self, updates: Vec<parse::Update>) -> Vec<bool> {
        let mut taken = vec![true; updates.len()];
        let (at, batch): (Vec<usize>, Vec<_>) = updates
            .iter()
            .enumerate()
            .filter_map(|(at, update)| Some((at, parse::inbound(update)?)))
            .unzip();
        let handled = self.driver.handle_in_order(batch).await;
        for (at, handled) in at.into_iter().zip(handled) {
            taken[at] = handled == Handled::Done;
        }
        taken
    }
}

/// The webhook's state.
#[derive(Debug, Clone)]
struct Webhook {
    inbound: Arc<Inbound>,
    secret: Arc<str>,
}

/// `POST /telegram/webhook`: an update from Telegram, refused without the
/// right `X-Telegram-Bot-Api-Secret-Token`.
async fn webhook(State(hook): State<Webhook>, headers: HeaderMap, body: Bytes) -> Response {
    let given = headers
        .get(SECRET_HEADER)
        .map(|value| value.as_bytes())
        .unwrap_or_default();
    if !crate::http::same_secret(given, hook.secret.as_bytes()) {
        return ApiError::new(
            StatusCode::UNAUTHORIZED,
            "unauthorized",
            "missing or wrong X-Telegram-Bot-Api-Secret-Token",
        )
        .into_response();
    }
    let update: parse::Update = match serde_json::from_slice(&body) {
        Ok(update) => update,
        Err(error) => {
            return ApiError::new(
                StatusCode::BAD_REQUEST,
                "invalid_update",
                format!("not a Telegram update: {error}"),
            )
            .into_response();
        }
    };
    match hook.inbound.handle(update).await {
        Handled::Done => StatusCode::OK.into_response(),
        // Telegram delivers the update again later.
        Handled::Retry => ApiError::unavailable("the update could not be recorded").into_response(),
    }
}

//! The Telegram channel wired to the bridge.
//!
//! [`askbridge_telegram`] draws and reads Bot API messages and talks to
//! the Bot API; this module decides what to do with them:
//!
//! - [`TelegramChannel`] is the bridge's [`Channel`]: it posts an ask (the
//!   keyboard, the numbered prompt, or the first rich step), records every
//!   message it sent ([`MessageRef`]) so clicks and replies find their ask
//!   after a restart, moves a rich ask to its next step, and closes the
//!   question message with a status line when the ask ends.
//! - [`Inbound`] handles updates (from long polling or the webhook):
//!   button presses, always answered at once with a short notice, and
//!   typed messages, routed and answered by the rules in [`crate::chat`].
//! - [`Telegram`] builds both from the `[telegram]` config, then long-polls
//!   or registers the webhook served by [`Telegram::webhook_router`].

use std::net::SocketAddr;
use std::sync::Arc;

use askbridge_core::lifecycle::{Input, Rejection, Step};
use askbridge_core::model::{ChannelKind, Place, QuestionKind};
use askbridge_core::render::{
    self, Capabilities, Locale, OptionRef, View, closing_line, rich_step,
};
use askbridge_telegram::ChatRef;
use askbridge_telegram::parse::{self, Event, Press, TextMessage};
use askbridge_telegram::render as draw;
use askbridge_telegram::run::{ApiFailure, TelegramApi};
use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use futures_util::future::join_all;

use crate::bridge::channel::{BoxFuture, Channel, DeliveryError};
use crate::bridge::{AskView, Bridge, BridgeError, MessageRef, WeakBridge};
use crate::chat::{self, AllowList, Person, Posted};
use crate::config::{TelegramConfig, TelegramMode};
use crate::http::ApiError;

/// Where Telegram posts updates in webhook mode.
pub const WEBHOOK_PATH: &str = "/telegram/webhook";
/// The header Telegram sends the webhook secret in.
const SECRET_HEADER: &str = "x-telegram-bot-api-secret-token";

/// The Telegram channel and its inbound side, built from the config.
#[derive(Debug, Clone)]
pub struct Telegram {
    inbound: Arc<Inbound>,
    mode: TelegramMode,
}

impl Telegram {
    /// Connects the Bot API client (throttled to Telegram's limits) and
    /// registers the channel with the bridge. Call inside the runtime.
    pub fn new(bridge: &Bridge, config: &TelegramConfig) -> Result<Telegram, String> {
        let api = TelegramApi::new(
            config.token.expose(),
            config.api_url.as_deref(),
            Default::default(),
        )?;
        let draw = Drawing {
            caps: Capabilities::TELEGRAM.with_mode(config.render),
            locale: config.locale,
        };
        bridge.add_channel(Arc::new(TelegramChannel {
            api: api.clone(),
            bridge: bridge.downgrade(),
            draw,
        }));
        Ok(Telegram {
            inbound: Arc::new(Inbound {
                api,
                bridge: bridge.downgrade(),
                draw,
                allow: AllowList::new(config.allowed_users.iter().cloned()),
            }),
            mode: config.mode.clone(),
        })
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
                let api = inbound.api.clone();
                check_token(&api).await;
                api.poll(|updates| {
                    let inbound = Arc::clone(&inbound);
                    async move {
                        join_all(updates.into_iter().map(|update| inbound.handle(update))).await;
                    }
                })
                .await;
            }),
            TelegramMode::Webhook { url, secret } => tokio::spawn(async move {
                check_token(&inbound.api).await;
                let url = url.unwrap_or_else(|| format!("http://{listen}{WEBHOOK_PATH}"));
                let mut wait = std::time::Duration::from_millis(250);
                loop {
                    match inbound.api.set_webhook(&url, secret.expose()).await {
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

/// Says which bot the token belongs to, or, loudly, that Telegram refused
/// it (the channel keeps retrying: the token may be fixed by BotFather).
async fn check_token(api: &TelegramApi) {
    match api.me().await {
        Ok(me) => tracing::info!(bot = %me.username(), "Telegram bot connected"),
        Err(ApiFailure::Permanent(reason)) => tracing::error!(
            reason = %reason,
            "Telegram refused the bot token; check TELEGRAM_BOT_TOKEN"
        ),
        Err(error) => tracing::warn!(error = %error, "Telegram is not reachable yet"),
    }
}

/// How asks are drawn: the channel's capabilities and render mode, and
/// the locale of askbridge's own words.
#[derive(Debug, Clone, Copy)]
struct Drawing {
    caps: Capabilities,
    locale: Locale,
}

impl Drawing {
    fn view(&self, view: &AskView) -> View {
        render::view(&view.ask, &view.id, &self.caps, self.locale)
    }

    fn step(&self, view: &AskView, question: usize, selected: &[usize]) -> Option<render::Step> {
        rich_step(
            &view.ask,
            &view.id,
            question,
            selected,
            &self.caps,
            self.locale,
        )
    }
}

/// The bridge's Telegram [`Channel`].
#[derive(Debug)]
pub struct TelegramChannel {
    api: TelegramApi,
    bridge: WeakBridge,
    draw: Drawing,
}

impl TelegramChannel {
    fn bridge(&self) -> Result<Bridge, DeliveryError> {
        self.bridge
            .upgrade()
            .ok_or_else(|| DeliveryError::Transient("the bridge is shutting down".to_owned()))
    }

    async fn deliver_view(&self, view: &AskView) -> Result<(), DeliveryError> {
        let chat = ChatRef::of(&view.target.place).ok_or_else(|| {
            DeliveryError::Permanent(format!("{} is not a Telegram target", view.target))
        })?;
        let bridge = self.bridge()?;
        let drawn = self.draw.view(view);
        let messages = draw::ask_messages(&drawn, chat);
        let last = messages.len().saturating_sub(1);
        // Parts posted before a failure or a crash are not posted again.
        let posted = bridge.message_refs(&view.id).await.map_err(storage)?.len();
        for (index, message) in messages.into_iter().enumerate().skip(posted) {
            let text = message.text.clone();
            let message_id = self.api.send(message).await.map_err(delivery)?;
            let extra = (index == last).then(|| Posted {
                shown: Some(text),
                step: match &drawn {
                    View::Rich(rich) => rich.steps.first().map(|step| step.question),
                    View::Buttons(_) | View::Text(_) => None,
                },
                ..Posted::default()
            });
            bridge
                .save_message_ref(&message_ref(&view.id, chat, message_id, extra.as_ref()))
                .await
                .map_err(storage)?;
        }
        Ok(())
    }

    /// A rich ask moves to its first open question.
    async fn update_view(&self, view: &AskView) -> Result<(), DeliveryError> {
        let bridge = self.bridge()?;
        let Some((message, mut posted)) = shown_message(&bridge, &view.id).await? else {
            return Ok(());
        };
        let Some(current) = posted.step else {
            return Ok(());
        };
        let Some(next) = view.answers.iter().position(Option::is_none) else {
            return Ok(());
        };
        if next == current {
            return Ok(());
        }
        let Some(step) = self.draw.step(view, next, &[]) else {
            return Ok(());
        };
        let chat = chat_of(&message)?;
        self.api
            .edit(
                chat,
                message_id_of(&message)?,
                &step.text,
                Some(draw::step_keyboard(&step)),
            )
            .await
            .map_err(delivery)?;
        posted.step = Some(next);
        posted.selected.clear();
        posted.shown = Some(step.text);
        save_posted(&bridge, message, &posted).await
    }

    /// The question message gets its status line and loses its keyboard.
    async fn end_view(&self, view: &AskView) -> Result<(), DeliveryError> {
        let bridge = self.bridge()?;
        let (Some(outcome), Some((message, posted))) =
            (&view.outcome, shown_message(&bridge, &view.id).await?)
        else {
            return Ok(());
        };
        let status = closing_line(outcome, self.draw.locale);
        let text = draw::closed_text(posted.shown.as_deref().unwrap_or_default(), &status);
        self.api
            .edit(chat_of(&message)?, message_id_of(&message)?, &text, None)
            .await
            .map_err(delivery)
    }
}

impl Channel for TelegramChannel {
    fn kind(&self) -> ChannelKind {
        ChannelKind::Telegram
    }

    fn deliver<'a>(&'a self, ask: &'a AskView) -> BoxFuture<'a, Result<(), DeliveryError>> {
        Box::pin(self.deliver_view(ask))
    }

    fn update<'a>(&'a self, ask: &'a AskView) -> BoxFuture<'a, Result<(), DeliveryError>> {
        Box::pin(self.update_view(ask))
    }

    fn end<'a>(&'a self, ask: &'a AskView) -> BoxFuture<'a, Result<(), DeliveryError>> {
        Box::pin(self.end_view(ask))
    }
}

/// The record of a message posted for an ask.
fn message_ref(
    ask_id: &str,
    chat: ChatRef,
    message_id: i32,
    posted: Option<&Posted>,
) -> MessageRef {
    MessageRef {
        ask_id: ask_id.to_owned(),
        channel: ChannelKind::Telegram,
        conversation: chat.conversation(),
        message_id: message_id.to_string(),
        extra: posted.map(Posted::to_extra),
    }
}

/// The message of an ask that carries its controls, with what it shows.
async fn shown_message(
    bridge: &Bridge,
    ask_id: &str,
) -> Result<Option<(MessageRef, Posted)>, DeliveryError> {
    let refs = bridge.message_refs(ask_id).await.map_err(storage)?;
    Ok(refs.into_iter().rev().find_map(|message| {
        let posted = Posted::of(&message);
        posted.shown.is_some().then_some((message, posted))
    }))
}

async fn save_posted(
    bridge: &Bridge,
    message: MessageRef,
    posted: &Posted,
) -> Result<(), DeliveryError> {
    bridge
        .save_message_ref(&MessageRef {
            extra: Some(posted.to_extra()),
            ..message
        })
        .await
        .map_err(storage)
}

fn chat_of(message: &MessageRef) -> Result<ChatRef, DeliveryError> {
    ChatRef::parse_conversation(&message.conversation).ok_or_else(|| {
        DeliveryError::Permanent(format!(
            "unreadable Telegram chat {:?}",
            message.conversation
        ))
    })
}

fn message_id_of(message: &MessageRef) -> Result<i32, DeliveryError> {
    message.message_id.parse().map_err(|_| {
        DeliveryError::Permanent(format!(
            "unreadable Telegram message id {:?}",
            message.message_id
        ))
    })
}

fn delivery(failure: ApiFailure) -> DeliveryError {
    match failure {
        ApiFailure::RetryAfter(secs) => DeliveryError::RetryAfter(secs),
        ApiFailure::Transient(reason) => DeliveryError::Transient(reason),
        ApiFailure::Permanent(reason) => DeliveryError::Permanent(reason),
    }
}

fn storage(error: BridgeError) -> DeliveryError {
    DeliveryError::Transient(format!("storage: {error}"))
}

/// Handles updates: presses and typed messages.
#[derive(Debug)]
pub struct Inbound {
    api: TelegramApi,
    bridge: WeakBridge,
    draw: Drawing,
    allow: AllowList,
}

impl Inbound {
    /// Handles one update. Whatever the bridge recorded is stored before
    /// this returns; replies to the person may still be on their way.
    pub async fn handle(&self, update: parse::Update) {
        let Some(bridge) = self.bridge.upgrade() else {
            return;
        };
        let result = match parse::parse(&update) {
            Some(Event::Press(press)) => self.press(&bridge, press).await,
            Some(Event::Text(message)) => self.text(&bridge, message).await,
            None => Ok(()),
        };
        if let Err(error) = result {
            tracing::warn!(update_id = update.id.0, error = %error, "Telegram update not handled");
        }
    }

    async fn press(&self, bridge: &Bridge, press: Press) -> Result<(), BridgeError> {
        let notice = match self.pressed(bridge, &press).await {
            Ok(notice) => notice,
            Err(error) => {
                self.answer(&press.query_id, None).await;
                return Err(error);
            }
        };
        self.answer(&press.query_id, notice.as_deref()).await;
        Ok(())
    }

    /// Acts on a press; returns the notice to show.
    async fn pressed(&self, bridge: &Bridge, press: &Press) -> Result<Option<String>, BridgeError> {
        let (Some(button), Some(chat), Some(message_id)) =
            (&press.button, press.chat, press.message_id)
        else {
            return Ok(None);
        };
        // The button's ask must be one posted in this chat. Its message is
        // normally on record; after a crash between posting and recording
        // it is not, and the ask key alone still finds the ask.
        let view = match bridge.get(&button.ask_key).await {
            Ok(view) => view,
            Err(BridgeError::NotFound(_)) => return Ok(None),
            Err(error) => return Err(error),
        };
        if ChatRef::of(&view.target.place) != Some(chat) {
            return Ok(None);
        }
        let message = bridge
            .find_message_ref(
                ChannelKind::Telegram,
                &chat.conversation(),
                &message_id.to_string(),
            )
            .await?
            .filter(|message| message.ask_id == view.id)
            .unwrap_or_else(|| message_ref(&view.id, chat, message_id, None));
        let person = person(&press.from);
        let question = button.question;
        let posted = Posted::of(&message);
        let toggles = posted.step == Some(question)
            && view.ask.questions.get(question).map(|q| q.kind) == Some(QuestionKind::Multi);

        // Toggling and asking for own words change no answer, so the
        // bridge does not check them: check here.
        let input = match button.option {
            OptionRef::Index(option) if toggles => {
                if let Some(refused) = chat::refusal(&view, &person, &self.allow) {
                    return Ok(Some(self.notice(&refused, &view)));
                }
                self.toggle(bridge, &view, message, posted, question, option)
                    .await?;
                return Ok(None);
            }
            OptionRef::Other => {
                if let Some(refused) = chat::refusal(&view, &person, &self.allow) {
                    return Ok(Some(self.notice(&refused, &view)));
                }
                self.ask_own_words(bridge, &view, chat, question).await?;
                return Ok(None);
            }
            OptionRef::Index(option) => chat::pick(&person, &self.allow, question, vec![option]),
            OptionRef::Done => chat::pick(&person, &self.allow, question, posted.selected),
            OptionRef::Pass => chat::pass(&view.ask, &person, &self.allow, question),
            OptionRef::Skip => Input::Skip {
                from: person.responder.clone(),
                admitted: self.allow.admits(&person),
            },
        };
        let (step, _) = bridge.handle(&view.id, input).await?;
        Ok(Some(chat::after_press(
            &step,
            &view.target,
            self.draw.locale,
        )))
    }

    fn notice(&self, refused: &Rejection, view: &AskView) -> String {
        chat::after_press(
            &Step::Rejected(refused.clone()),
            &view.target,
            self.draw.locale,
        )
    }

    /// Checks or unchecks an option of the rich step shown, and redraws
    /// its keyboard; the selection is kept with the message until Done.
    async fn toggle(
        &self,
        bridge: &Bridge,
        view: &AskView,
        message: MessageRef,
        mut posted: Posted,
        question: usize,
        option: usize,
    ) -> Result<(), BridgeError> {
        match posted.selected.binary_search(&option) {
            Ok(at) => {
                posted.selected.remove(at);
            }
            Err(at) => posted.selected.insert(at, option),
        }
        let Some(step) = self.draw.step(view, question, &posted.selected) else {
            return Ok(());
        };
        if let (Ok(chat), Ok(message_id)) = (chat_of(&message), message_id_of(&message))
            && let Err(error) = self
                .api
                .edit_keyboard(chat, message_id, draw::step_keyboard(&step))
                .await
        {
            tracing::warn!(ask_id = %view.id, error = %error, "cannot redraw the toggles");
        }
        bridge
            .save_message_ref(&MessageRef {
                extra: Some(posted.to_extra()),
                ..message
            })
            .await
    }

    /// Asks for the person's own words with a forced reply, recorded so a
    /// reply to it answers `question`.
    async fn ask_own_words(
        &self,
        bridge: &Bridge,
        view: &AskView,
        chat: ChatRef,
        question: usize,
    ) -> Result<(), BridgeError> {
        let Some(q) = view.ask.questions.get(question) else {
            return Ok(());
        };
        let step = self.draw.step(view, question, &[]);
        let prompt = draw::own_words_prompt(
            chat,
            &q.text,
            step.as_ref().and_then(draw::step_placeholder),
            self.draw.locale,
        );
        let prompt_id = match self.api.send(prompt).await {
            Ok(id) => id,
            Err(error) => {
                tracing::warn!(ask_id = %view.id, error = %error, "cannot ask for own words");
                return Ok(());
            }
        };
        let posted = Posted {
            own_words_for: Some(question),
            ..Posted::default()
        };
        bridge
            .save_message_ref(&message_ref(&view.id, chat, prompt_id, Some(&posted)))
            .await
    }

    async fn text(&self, bridge: &Bridge, message: TextMessage) -> Result<(), BridgeError> {
        let person = person(&message.from);
        let conversation = message.chat.conversation();
        let reply_to = message.reply_to.map(|id| id.to_string());
        let place = Place::Telegram {
            chat_id: message.chat.chat_id,
            thread_id: message.chat.thread_id,
        };
        let Some(addressed) = chat::address(
            bridge,
            ChannelKind::Telegram,
            &place,
            &conversation,
            reply_to.as_deref(),
            &person,
            &self.allow,
        )
        .await?
        else {
            return Ok(());
        };
        let input = chat::typed_input(&message.text, &addressed, &person, &self.allow);
        let (step, view) = match bridge.handle(&addressed.ask_id, input).await {
            Ok(handled) => handled,
            Err(BridgeError::NotFound(_)) => return Ok(()),
            Err(error) => return Err(error),
        };
        if let Some(text) = chat::after_typed(&step, &view.ask, &view.target, self.draw.locale) {
            // Sending is throttled per chat; the answer is already stored.
            let api = self.api.clone();
            let reply = draw::reply_to(message.chat, message.message_id, text);
            tokio::spawn(async move {
                if let Err(error) = api.send(reply).await {
                    tracing::warn!(error = %error, "cannot reply on Telegram");
                }
            });
        }
        Ok(())
    }

    async fn answer(&self, query_id: &str, notice: Option<&str>) {
        if let Err(error) = self.api.answer(query_id, notice).await {
            tracing::warn!(error = %error, "cannot answer a Telegram callback query");
        }
    }
}

fn person(sender: &parse::Sender) -> Person {
    Person {
        responder: sender.responder(),
        username: sender.username.clone(),
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
    hook.inbound.handle(update).await;
    StatusCode::OK.into_response()
}

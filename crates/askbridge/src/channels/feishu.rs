//! The Feishu / Lark channel wired to the bridge.
//!
//! [`askbridge_feishu`] draws and reads cards, events and card callbacks
//! and talks to Feishu; this module only translates for the shared
//! [`ChatDriver`]:
//!
//! - [`FeishuPlatform`] is Feishu as a [`ChatPlatform`]: it sends cards (a
//!   `feishu:user/…` target by `open_id`, so Feishu opens the private
//!   chat), updates them in place, replies to a person's message, and
//!   answers a card callback with a toast for the presser alone. Own words
//!   need no second round: the card carries their form, so a press of an
//!   empty form only gets a toast saying to type in it.
//! - [`Feishu`] builds it from `[feishu]` and receives over the long
//!   connection (one instance at a time, under a lease), or serves
//!   `POST /feishu/events` in webhook mode: decrypted with the encrypt
//!   key, the signature and its age checked, the verification token
//!   compared. Both hand the same pushes to one `receive`, through one
//!   [`Inbox`]: a push is answered once what it carries is recorded,
//!   within Feishu's 3 seconds (else with a failure, so Feishu sends an
//!   event again and shows a press as failed), and a push Feishu sends
//!   again (same `event_id`) is acted on once.

use std::future::Future;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use askbridge_core::failure::{BadRequest, PlatformFailure, SetupError};
use askbridge_core::inbound::Handled;
use askbridge_core::model::{ChannelKind, Place};
use askbridge_core::render::{self, Capabilities, View, fill};
use askbridge_feishu::parse::{self, Push};
use askbridge_feishu::render::{self as draw, Destination, Message, Toast};
use askbridge_feishu::run::{CallbackCheck, FeishuApi, LongConnection, Signed};
use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use serde_json::{Value, json};
use tokio::sync::oneshot;

use crate::bridge::Bridge;
use crate::chat::AllowList;
use crate::chat::driver::{Ack, ChatDriver, ChatPlatform, Drawing, Line, OwnWords, Reminder};
use crate::chat::inbox::Inbox;
use crate::chat::names::Names;
use crate::chat::serial::Ticket;
use crate::config::{FeishuConfig, FeishuMode};
use crate::http::ApiError;

/// Where Feishu posts events and card callbacks in webhook mode.
pub const EVENTS_PATH: &str = "/feishu/events";
/// How long a name lookup may hold up a press (its answer is due within
/// 3 seconds).
const NAME_WITHIN: Duration = Duration::from_millis(800);

/// The Feishu channel and its inbound side, built from the config.
#[derive(Debug, Clone)]
pub struct Feishu {
    inbound: Arc<Inbound>,
    mode: FeishuMode,
}

impl Feishu {
    /// Builds the Open API client and registers the channel with the
    /// bridge. Call inside the runtime.
    pub fn new(bridge: &Bridge, config: &FeishuConfig) -> Result<Feishu, SetupError> {
        let api = client(config)?;
        let driver = ChatDriver::register(
            bridge,
            FeishuPlatform {
                api: api.clone(),
                locale: config.locale,
            },
            Drawing {
                caps: Capabilities::FEISHU.with_mode(config.render),
                locale: config.locale,
            },
            AllowList::new(config.allowed_users.iter().cloned()),
        );
        let encrypt_key = match &config.mode {
            FeishuMode::Webhook { encrypt_key } => Some(encrypt_key.expose()),
            FeishuMode::LongConnection => None,
        };
        let check = CallbackCheck::new(
            encrypt_key,
            config
                .verification_token
                .as_ref()
                .map(|token| token.expose()),
        );
        Ok(Feishu {
            inbound: Arc::new(Inbound {
                driver,
                api,
                check,
                bot: OnceLock::new(),
                inbox: Arc::default(),
                names: Names::default(),
            }),
            mode: config.mode.clone(),
        })
    }

    /// The lease under which the long connection runs: Feishu pushes each
    /// event to one of an app's connections, so one instance holds it.
    /// `None` in webhook mode, where every instance serves the route.
    pub fn receiving_lease(&self) -> Option<&'static str> {
        match self.mode {
            FeishuMode::LongConnection => Some("feishu/long-connection"),
            FeishuMode::Webhook { .. } => None,
        }
    }

    /// `POST /feishu/events` (webhook mode only).
    pub fn webhook_router(&self) -> Option<Router> {
        match self.mode {
            FeishuMode::Webhook { .. } => Some(
                Router::new()
                    .route(EVENTS_PATH, post(events))
                    .with_state(Arc::clone(&self.inbound)),
            ),
            FeishuMode::LongConnection => None,
        }
    }

    /// Says which bot the app is, then (long connection) receives until
    /// the task is stopped.
    pub fn start(&self) -> tokio::task::JoinHandle<()> {
        let inbound = Arc::clone(&self.inbound);
        let mode = self.mode.clone();
        tokio::spawn(async move {
            match inbound.api.bot_info().await {
                Ok(bot) => {
                    tracing::info!(bot = %bot.name, open_id = %bot.open_id, "Feishu bot connected");
                    let _ = inbound.bot.set(bot.open_id);
                }
                Err(error) => tracing::error!(
                    error = %error,
                    "Feishu refused the app; check FEISHU_APP_ID and FEISHU_APP_SECRET"
                ),
            }
            if let FeishuMode::LongConnection = mode {
                let connection = LongConnection::new(inbound.api.clone());
                let handler = Arc::clone(&inbound);
                let receiving = connection
                    .run(move |_, payload| {
                        let received = handler.receive(&payload);
                        async move {
                            match received.await {
                                Ok(answer) => Some(answer),
                                Err(Refusal::Unrecorded) => None,
                                // Feishu would not send it better again.
                                Err(_) => Some(json!({})),
                            }
                        }
                    })
                    .await;
                if let Err(reason) = receiving {
                    tracing::error!(reason = %reason, "Feishu refused the long connection");
                }
            }
        })
    }
}

/// The Open API client for `[feishu]`.
pub fn client(config: &FeishuConfig) -> Result<FeishuApi, SetupError> {
    FeishuApi::new(
        &config.app_id,
        config.app_secret.expose(),
        config.api_url.as_deref(),
    )
}

/// What Feishu pushes, translated for the driver.
#[derive(Debug)]
struct Inbound {
    driver: Arc<ChatDriver<FeishuPlatform>>,
    api: FeishuApi,
    check: CallbackCheck,
    /// The bot's own `open_id`, once Feishu said it.
    bot: OnceLock<String>,
    /// What was pushed and taken.
    inbox: Arc<Inbox>,
    /// Display names from the contact API, by `open_id`.
    names: Names,
}

/// Why a push was not taken.
#[derive(Debug)]
enum Refusal {
    /// Unreadable.
    Invalid(String),
    /// Not from this app's Feishu.
    Forged(String),
    /// Not recorded (in time): Feishu sends an event again, and shows a
    /// card press as failed.
    Unrecorded,
}

impl Inbound {
    /// Acts on one plain push and returns the answer: the challenge, a
    /// card callback's toast, or `{}`; [`Refusal::Unrecorded`] when what
    /// it carries could not be recorded within Feishu's 3 seconds. The
    /// push takes its person's turn now, before the returned future first
    /// runs, so pushes handed over in arrival order are handled so.
    fn receive(
        self: &Arc<Self>,
        plain: &[u8],
    ) -> impl Future<Output = Result<Value, Refusal>> + Send + 'static + use<> {
        let arrived = self.arrive(plain);
        let inbound = Arc::clone(self);
        async move {
            let (event_id, event, ticket, answer) = match arrived {
                Ok(Arrived::Answered(answer)) => return Ok(answer),
                Ok(Arrived::Event(event_id, event, ticket, answer)) => {
                    (event_id, event, ticket, answer)
                }
                Err(refusal) => return Err(refusal),
            };
            let handler = Arc::clone(&inbound);
            let handled = inbound
                .inbox
                .take(&event_id, async move {
                    ticket.run(handler.handle(*event)).await
                })
                .await;
            match handled {
                // A card callback's answer, if the driver gave one (a push
                // taken by an earlier delivery has none).
                Handled::Done => Ok(answer.await.unwrap_or_else(|_| json!({}))),
                Handled::Retry => Err(Refusal::Unrecorded),
            }
        }
    }

    /// Reads and checks a push and, when it carries an event, takes the
    /// event's place in its person's line.
    fn arrive(&self, plain: &[u8]) -> Result<Arrived, Refusal> {
        let pushed = parse::push(plain, self.bot.get().map(String::as_str))
            .map_err(|BadRequest(message)| Refusal::Invalid(message))?;
        let (event_id, token, event) = match pushed {
            Push::UrlVerification { challenge, token } => {
                return match self.check.token_ok(&token) {
                    true => Ok(Arrived::Answered(json!({ "challenge": challenge }))),
                    false => Err(Refusal::Forged("wrong verification token".to_owned())),
                };
            }
            Push::Pushed {
                event_id,
                token,
                event,
            } => (event_id, token, event),
        };
        if !self.check.token_ok(&token) {
            return Err(Refusal::Forged("wrong verification token".to_owned()));
        }
        let Some(event) = event else {
            return Ok(Arrived::Answered(json!({})));
        };
        let (reply, answer) = oneshot::channel();
        let event = parse::inbound(event).map_reply(|()| reply);
        let ticket = self.driver.line_up_with(&event, Some(&event_id));
        Ok(Arrived::Event(event_id, Box::new(event), ticket, answer))
    }

    /// Hands one event to the driver, its person named.
    async fn handle(&self, mut event: FeishuInbound) -> Handled {
        let from = event.person_mut();
        from.responder.name = self.name(&from.responder.user_id).await;
        self.driver.handle(event).await
    }

    /// A person's display name (pushes carry only ids); without one the
    /// answer is shown by id.
    async fn name(&self, open_id: &str) -> Option<String> {
        self.names
            .get(open_id, || async {
                match tokio::time::timeout(NAME_WITHIN, self.api.user_name(open_id)).await {
                    Ok(Ok(name)) => Ok(name),
                    Ok(Err(error)) => {
                        tracing::debug!(error = %error, "cannot look up a Feishu user's name");
                        Err(())
                    }
                    Err(_) => Err(()),
                }
            })
            .await
    }
}

/// An event from Feishu, in the driver's vocabulary.
type FeishuInbound = crate::chat::driver::Inbound<FeishuPlatform>;

/// A push read and checked.
enum Arrived {
    /// Answered already (a challenge, a push without an event).
    Answered(Value),
    /// An event, its id, its place in line, and where a card callback's
    /// answer comes.
    Event(
        String,
        Box<FeishuInbound>,
        Ticket<Line>,
        oneshot::Receiver<Value>,
    ),
}

/// A message to post: where a thread asks share has its first message, a
/// reply in that thread (Feishu's threads are replies with
/// `reply_in_thread`).
#[derive(Debug)]
pub struct Post {
    message: Message,
    under: Option<String>,
}

impl From<Message> for Post {
    fn from(message: Message) -> Post {
        Post {
            message,
            under: None,
        }
    }
}

/// Feishu as a [`ChatPlatform`]: the Open API.
#[derive(Debug)]
pub struct FeishuPlatform {
    api: FeishuApi,
    locale: render::Locale,
}

impl ChatPlatform for FeishuPlatform {
    type Chat = Destination;
    type MessageId = String;
    type Message = Post;
    type Reply = oneshot::Sender<Value>;

    const KIND: ChannelKind = ChannelKind::Feishu;

    fn conversation(chat: &Destination) -> String {
        chat.notation()
    }

    fn parse_conversation(text: &str) -> Option<Destination> {
        Destination::from_notation(text)
    }

    fn place_of(chat: &Destination) -> Place {
        chat.place()
    }

    async fn open(&self, place: &Place) -> Result<Destination, PlatformFailure> {
        Destination::of(place)
            .ok_or_else(|| PlatformFailure::Permanent("not a Feishu target".to_owned()))
    }

    fn ask_messages(&self, view: &View, _chat: &Destination) -> Vec<Post> {
        draw::ask_messages(view, self.locale)
            .into_iter()
            .map(Post::from)
            .collect()
    }

    fn context_message(&self, block: &render::Block, _chat: &Destination) -> Post {
        Message::context(block).into()
    }

    fn text_message(&self, text: &str, _chat: &Destination) -> Post {
        Message::text(text).into()
    }

    /// Feishu's threads: replies in the thread of the first message.
    fn threads(_chat: &Destination) -> bool {
        true
    }

    fn in_thread(&self, post: &mut Post, root: &String) {
        post.under.get_or_insert_with(|| root.clone());
    }

    fn text_of(post: &Post) -> &str {
        &post.message.text
    }

    /// `once` is Feishu's `uuid`: a part sent again within the hour (after
    /// a crash, or by the instance that took the ask over) is the message
    /// already posted, not a second one.
    async fn send(
        &self,
        chat: &Destination,
        post: Post,
        once: &str,
    ) -> Result<String, PlatformFailure> {
        let sent = match &post.under {
            Some(root) => {
                self.api
                    .reply(root, &post.message, Some(once), true)
                    .await?
            }
            None => self.api.send(chat, &post.message, once).await?,
        };
        Ok(sent.message_id)
    }

    async fn show_step(
        &self,
        _chat: &Destination,
        message: String,
        step: &render::Step,
    ) -> Result<Option<String>, PlatformFailure> {
        self.api
            .update(&message, &draw::step_message(step, self.locale))
            .await
            .map(|()| None)
    }

    async fn close(
        &self,
        _chat: &Destination,
        message: String,
        shown: &str,
        status: &str,
    ) -> Result<(), PlatformFailure> {
        self.api
            .update(&message, &draw::closed(shown, status))
            .await
    }

    fn reply(&self, _chat: &Destination, to: String, text: String) {
        let api = self.api.clone();
        tokio::spawn(async move {
            if let Err(error) = api.reply(&to, &Message::text(&text), None, false).await {
                tracing::warn!(error = %error, "cannot reply on Feishu");
            }
        });
    }

    /// In a group, a card only `user` sees; in a private chat (or where
    /// Feishu refuses one), a reply.
    fn reply_privately(&self, chat: &Destination, to: String, user: &str, text: String) {
        let Destination::Chat(chat_id) = chat else {
            return self.reply(chat, to, text);
        };
        let (api, chat_id, user) = (self.api.clone(), chat_id.clone(), user.to_owned());
        tokio::spawn(async move {
            let message = Message::text(&text);
            let Err(error) = api.send_ephemeral(&chat_id, &user, &message).await else {
                return;
            };
            tracing::debug!(error = %error, "no card for one person here; replying");
            if let Err(error) = api.reply(&to, &message, None, false).await {
                tracing::warn!(error = %error, "cannot reply on Feishu");
            }
        });
    }

    /// A reminder replying to the question, mentioning the place's user.
    async fn remind(
        &self,
        _chat: &Destination,
        to: String,
        reminder: Reminder<'_>,
    ) -> Result<String, PlatformFailure> {
        let message = draw::reminder(reminder.text, reminder.user);
        Ok(self
            .api
            .reply(&to, &message, Some(reminder.once), false)
            .await?
            .message_id)
    }

    /// A toast, seen by the presser alone: taken, refused, or nothing.
    async fn acknowledge(&self, reply: oneshot::Sender<Value>, ack: Ack) {
        let answer = match &ack {
            Ack::Taken(text) => draw::callback_answer(Some((Toast::Success, text))),
            Ack::Refused(text) => draw::callback_answer(Some((Toast::Error, text))),
            Ack::Private(text) => draw::callback_answer(Some((Toast::Info, text))),
            Ack::Quiet => draw::callback_answer(None),
        };
        if reply.send(answer).is_err() {
            tracing::warn!("a Feishu card callback was answered too late");
        }
    }

    /// The card carries the own-words form: a press of it with nothing
    /// typed is told to type in it.
    async fn ask_own_words(
        &self,
        reply: oneshot::Sender<Value>,
        _chat: &Destination,
        prompt: OwnWords<'_>,
    ) -> Result<Option<String>, PlatformFailure> {
        let question = prompt.question.text.trim();
        let text = fill(prompt.locale.strings().own_words, &[("q", question)]);
        let _ = reply.send(draw::callback_answer(Some((Toast::Info, &text))));
        Ok(None)
    }
}

/// `POST /feishu/events`: an event or card callback, encrypted with the
/// encrypt key and signed (the console's URL check carries no signature,
/// only the verification token).
async fn events(State(inbound): State<Arc<Inbound>>, headers: HeaderMap, body: Bytes) -> Response {
    let refused = |status: StatusCode, code: &'static str, message: String| {
        ApiError::new(status, code, message).into_response()
    };
    let plain = match inbound.check.decrypt(&body) {
        Ok(plain) => plain,
        Err(BadRequest(message)) => {
            return refused(StatusCode::BAD_REQUEST, "invalid_event", message);
        }
    };
    let header = |name: &str| {
        headers
            .get(name)
            .and_then(|value| value.to_str().ok())
            .unwrap_or_default()
    };
    let is_check = serde_json::from_slice::<Value>(&plain)
        .is_ok_and(|value| value["type"] == "url_verification");
    if !is_check {
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |elapsed| elapsed.as_secs());
        let signed = Signed {
            timestamp: header("x-lark-request-timestamp"),
            nonce: header("x-lark-request-nonce"),
            signature: header("x-lark-signature"),
        };
        if let Err(message) = inbound.check.signed(signed, &body, now) {
            return refused(
                StatusCode::UNAUTHORIZED,
                "unauthorized",
                format!("not a fresh request signed by Feishu: {message}"),
            );
        }
    }
    match inbound.receive(&plain).await {
        Ok(answer) => axum::Json(answer).into_response(),
        Err(Refusal::Invalid(message)) => {
            refused(StatusCode::BAD_REQUEST, "invalid_event", message)
        }
        Err(Refusal::Forged(message)) => refused(StatusCode::UNAUTHORIZED, "unauthorized", message),
        Err(Refusal::Unrecorded) => {
            ApiError::unavailable("the event could not be recorded in time").into_response()
        }
    }
}

//! The Matrix channel wired to the bridge.
//!
//! [`askbridge_matrix`] draws asks as polls and prompts, reads room events
//! and talks to the homeserver; this module only translates for the
//! shared [`ChatDriver`]:
//!
//! - [`MatrixPlatform`] is Matrix as a [`ChatPlatform`]: it sends events
//!   (a `matrix:user/…` target in the bot's direct chat with the user,
//!   opened on the first ask), ends a poll or edits a prompt when the ask
//!   ends, and answers a vote in the poll's thread. Matrix has no private
//!   notice, so a refused vote is answered there for the room to see; a
//!   vote that counted needs no answer (the poll ends with the status
//!   line). "Other…" asks for the person's own words in the poll's thread.
//! - [`Matrix`] logs in from `[matrix]` and syncs (one instance at a time,
//!   under a lease): each batch's events in order, invites accepted from
//!   the people the allow-list admits (from anyone without a list) when
//!   `auto_join` is on.

use std::sync::Arc;

use askbridge_core::failure::{PlatformFailure, SetupError};
use askbridge_core::inbound::Handled;
use askbridge_core::model::{ChannelKind, Place};
use askbridge_core::render::{self, Capabilities, Locale, View, fill};
use askbridge_matrix::parse::{self, Voted};
use askbridge_matrix::render::{self as draw, Destination, Message};
use askbridge_matrix::run::{Incoming, Login, MatrixApi};

use crate::bridge::{Bridge, Owned};
use crate::chat::AllowList;
use crate::chat::driver::{Ack, ChatDriver, ChatPlatform, Drawing, OwnWords, Reminder};
use crate::config::MatrixConfig;

/// The Matrix channel and its inbound side, built from the config.
#[derive(Debug, Clone)]
pub struct Matrix {
    driver: Arc<ChatDriver<MatrixPlatform>>,
    allow: AllowList,
    auto_join: bool,
}

impl Matrix {
    /// The lease under which the sync loop runs: one instance reads the
    /// bot's events.
    pub const RECEIVING_LEASE: &'static str = "matrix/sync";

    /// Logs the bot in (its session and store under `data_dir/matrix`) and
    /// registers the channel with the bridge.
    pub async fn new(
        bridge: &Bridge,
        config: &MatrixConfig,
        data_dir: &std::path::Path,
    ) -> Result<Matrix, SetupError> {
        let api = connect(config, data_dir).await?;
        let allow = AllowList::new(config.allowed_users.iter().cloned());
        let driver = ChatDriver::register(
            bridge,
            MatrixPlatform {
                api,
                locale: config.locale,
            },
            Drawing {
                caps: Capabilities::MATRIX.with_mode(config.render),
                locale: config.locale,
            },
            allow.clone(),
        );
        Ok(Matrix {
            driver,
            allow,
            auto_join: config.auto_join,
        })
    }

    /// Syncs, and posts, while this instance holds the lease
    /// [`Matrix::RECEIVING_LEASE`]; dropping the handle stops both.
    pub fn run(&self, bridge: &Bridge) -> Owned {
        let matrix = self.clone();
        bridge.run_owned(Self::RECEIVING_LEASE, move || matrix.start())
    }

    /// Syncs until the task is stopped.
    fn start(&self) -> tokio::task::JoinHandle<()> {
        let matrix = self.clone();
        tokio::spawn(async move {
            let api = matrix.driver.platform().api.clone();
            tracing::info!(bot = %api.user_id(), device = ?api.device_id(), "Matrix bot connected");
            let refused = api
                .receive(
                    |batch| matrix.handle(batch),
                    |room, inviter| matrix.invited(room, inviter),
                )
                .await;
            tracing::error!(reason = %refused, "Matrix stopped syncing");
        })
    }

    /// Hands one sync batch to the driver, in order.
    async fn handle(&self, batch: Vec<Incoming>) -> Vec<Handled> {
        let events = batch
            .into_iter()
            .map(|incoming| {
                parse::inbound(
                    incoming.received,
                    &incoming.room,
                    incoming.direct,
                    incoming.name,
                )
            })
            .collect();
        self.driver.handle_in_order(events).await
    }

    /// Joins a room the bot was invited to, if the inviter may ask it in.
    async fn invited(&self, room: String, inviter: Option<String>) {
        let admitted = inviter
            .as_ref()
            .is_some_and(|inviter| self.allow.admits(&parse::person(inviter, None)));
        if !(self.auto_join && admitted) {
            tracing::info!(room = %room, inviter = ?inviter, "Matrix invite left alone");
            return;
        }
        match self.driver.platform().api.join(&room).await {
            Ok(()) => tracing::info!(room = %room, inviter = ?inviter, "joined a Matrix room"),
            Err(error) => tracing::warn!(room = %room, error = %error, "cannot join a Matrix room"),
        }
    }
}

/// The bot's login for `[matrix]`, its files under `data_dir/matrix`.
pub async fn connect(
    config: &MatrixConfig,
    data_dir: &std::path::Path,
) -> Result<MatrixApi, SetupError> {
    MatrixApi::connect(&login(config, data_dir)).await
}

/// What the bot logs in with, from `[matrix]`; its files under
/// `data_dir/matrix`.
pub fn login(config: &MatrixConfig, data_dir: &std::path::Path) -> Login {
    Login {
        homeserver: config.homeserver.clone(),
        user_id: config.user_id.clone(),
        access_token: config.access_token.as_ref().map(|s| s.expose().to_owned()),
        password: config.password.as_ref().map(|s| s.expose().to_owned()),
        dir: data_dir.join("matrix"),
        encrypt_direct: config.encrypt_direct,
    }
}

/// Matrix as a [`ChatPlatform`]: the homeserver, through matrix-sdk.
#[derive(Debug)]
pub struct MatrixPlatform {
    api: MatrixApi,
    /// The locale of askbridge's own words in polls.
    locale: Locale,
}

impl ChatPlatform for MatrixPlatform {
    type Chat = String;
    type MessageId = String;
    type Message = Message;
    type Reply = Voted;

    const KIND: ChannelKind = ChannelKind::Matrix;
    /// The client knows the bot's rooms and keys only where it syncs.
    const LEASE: Option<&'static str> = Some(Matrix::RECEIVING_LEASE);

    fn conversation(room: &String) -> String {
        room.clone()
    }

    fn parse_conversation(text: &str) -> Option<String> {
        draw::room_id(text)
    }

    fn place_of(room: &String) -> Place {
        draw::room_place(room)
    }

    async fn open(&self, place: &Place) -> Result<String, PlatformFailure> {
        let destination = Destination::of(place)
            .ok_or_else(|| PlatformFailure::Permanent("not a Matrix target".to_owned()))?;
        self.api.room_for(&destination).await
    }

    fn ask_messages(&self, view: &View, _room: &String) -> Vec<Message> {
        draw::ask_messages(view, self.locale)
    }

    fn context_message(&self, block: &render::Block, _room: &String) -> Message {
        draw::context_message(block)
    }

    fn text_message(&self, text: &str, _room: &String) -> Message {
        Message::text(text)
    }

    fn text_of(message: &Message) -> &str {
        &message.text
    }

    /// `once` is the transaction id: a part sent again (after a crash) is
    /// the event already posted.
    async fn send(
        &self,
        room: &String,
        message: Message,
        once: &str,
    ) -> Result<String, PlatformFailure> {
        self.api
            .send(room, message.event_type, message.content, Some(once))
            .await
    }

    /// A poll cannot become another question: the step is a new poll,
    /// and the one before is ended (its answer is on record).
    async fn show_step(
        &self,
        room: &String,
        message: String,
        step: &render::Step,
    ) -> Result<Option<String>, PlatformFailure> {
        let poll = draw::step_poll(step, self.locale);
        let once = format!("{message}/step{}", step.question);
        let posted = self
            .api
            .send(room, poll.event_type, poll.content, Some(&once))
            .await?;
        let submitted = self.locale.strings().submitted;
        let end = draw::poll_end(&message, &format!("✅ {submitted}"));
        if let Err(error) = self
            .api
            .send(room, draw::POLL_END, end, Some(&format!("end/{message}")))
            .await
        {
            tracing::warn!(error = %error, "cannot end a Matrix poll");
        }
        Ok(Some(posted))
    }

    /// A poll ends with the status line; a prompt is edited to show it.
    async fn close(
        &self,
        room: &String,
        message: String,
        shown: &str,
        status: &str,
    ) -> Result<(), PlatformFailure> {
        let once = format!("end/{message}");
        let (event_type, content) = match self.api.is_poll(room, &message).await? {
            true => (draw::POLL_END, draw::poll_end(&message, status)),
            false => (draw::MESSAGE, draw::closed(&message, shown, status)),
        };
        self.api
            .send(room, event_type, content, Some(&once))
            .await
            .map(|_| ())
    }

    fn reply(&self, room: &String, to: String, text: String) {
        let api = self.api.clone();
        let room = room.clone();
        tokio::spawn(async move {
            if let Err(error) = api
                .send(&room, draw::MESSAGE, draw::reply(&to, &text), None)
                .await
            {
                tracing::warn!(error = %error, "cannot reply on Matrix");
            }
        });
    }

    /// A reminder replying to the question, mentioning the place's user.
    async fn remind(
        &self,
        room: &String,
        to: String,
        reminder: Reminder<'_>,
    ) -> Result<String, PlatformFailure> {
        let content = draw::reminder(&to, reminder.text, reminder.user);
        self.api
            .send(room, draw::MESSAGE, content, Some(reminder.once))
            .await
    }

    /// A refused vote is answered in the poll's thread; one taken needs no
    /// answer.
    async fn acknowledge(&self, voted: Voted, ack: Ack) {
        let (Ack::Refused(text) | Ack::Private(text)) = ack else {
            return;
        };
        let content = draw::in_thread(&voted.poll, &text);
        if let Err(error) = self
            .api
            .send(&voted.room, draw::MESSAGE, content, None)
            .await
        {
            tracing::warn!(error = %error, "cannot answer a Matrix vote");
        }
    }

    /// Asks for the person's own words in the poll's thread; a reply to
    /// that message answers the question.
    async fn ask_own_words(
        &self,
        voted: Voted,
        _room: &String,
        prompt: OwnWords<'_>,
    ) -> Result<Option<String>, PlatformFailure> {
        let question = prompt.question.text.trim();
        let text = fill(prompt.locale.strings().own_words, &[("q", question)]);
        let content = draw::in_thread(&voted.poll, &text);
        self.api
            .send(&voted.room, draw::MESSAGE, content, None)
            .await
            .map(Some)
    }
}

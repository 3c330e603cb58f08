//! The chat driver: the half of every chat channel that does not depend on
//! the platform, written once over a small [`ChatPlatform`] trait.
//!
//! A platform (Telegram, Discord, …) only translates: it draws the core's
//! views as its messages, sends and edits them, answers a press, and opens
//! a prompt for the person's own words. The driver decides everything
//! else, the same way for every platform:
//!
//! - **Posting** ([`Channel::deliver`]): the drawn messages are sent in
//!   order and each is recorded ([`MessageRef`]) as soon as it is sent, so
//!   parts already posted are not posted again after a failure or a crash,
//!   and buttons and replies find their ask after a restart. The message
//!   that carries the controls records what it shows ([`Posted::shown`]).
//! - **Presses** ([`ChatDriver::press`]): the ask is found from the
//!   button's opaque key (its message record is not needed, so a press
//!   that raced the record still works) and must have been posted where
//!   the press came from. Every press is acknowledged exactly once, with
//!   a notice or without, whatever happened.
//! - **Own words**: "Other…" / "Answer…" opens the platform's prompt (a
//!   forced reply or a modal); the answer comes back as a typed reply to
//!   the prompt or as a [`Submission`].
//! - **Typed messages** ([`ChatDriver::typed`]) go through [`crate::chat`]:
//!   which ask they answer, the input they make, what to reply.
//! - **Rich asks** move to their next step in place ([`Channel::update`])
//!   or in a new message that takes the controls over; toggled options
//!   (or a poll's selection) are kept with the message until Done.
//! - **Closing** ([`Channel::end`]): the message with the controls is
//!   edited to what it showed plus the status line, controls removed.

use std::fmt;
use std::future::Future;
use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration;

use askbridge_core::failure::PlatformFailure;
use askbridge_core::inbound::{self, Handled};
use askbridge_core::lifecycle::{Input, Rejection, Step};
use askbridge_core::model::{ChannelKind, Notice, Place, Question, QuestionKind, Target};
use askbridge_core::outcome::Via;
use askbridge_core::render::{
    self, CallbackRef, Capabilities, Locale, OptionRef, View, callback_key, rich_step,
};
use futures_util::future::join_all;

pub use super::reach::Reminder;
use super::reach::{as_posted, passed_on, place_number, place_target};
use super::serial::{PerAsk, Ticket, Turns};
use super::{AllowList, Person, Posted};
use crate::bridge::channel::{BoxFuture, Channel};
use crate::bridge::{AskView, Bridge, BridgeError, MessageRef, WeakBridge};

/// What a platform does for the driver: translation and I/O only.
///
/// Methods that talk to the platform return futures that are `Send`, so
/// the driver can run on any task.
pub trait ChatPlatform: Send + Sync + fmt::Debug + 'static {
    /// A conversation messages are posted in (a chat, a channel, a
    /// thread).
    type Chat: Clone + PartialEq + Send + Sync + fmt::Debug;
    /// A platform message id.
    type MessageId: Clone + fmt::Display + FromStr + Send + Sync + fmt::Debug;
    /// A drawn message, ready to send.
    type Message: Send;
    /// How one press or submission is answered (a callback query id, an
    /// interaction). Used exactly once.
    type Reply: Send;

    /// The channel this platform serves.
    const KIND: ChannelKind;

    /// The lease an instance must hold to post (see [`Channel::lease`]).
    const LEASE: Option<&'static str> = None;

    /// The conversation's notation in message refs.
    fn conversation(chat: &Self::Chat) -> String;

    /// Reads [`ChatPlatform::conversation`] back.
    fn parse_conversation(text: &str) -> Option<Self::Chat>;

    /// Whether message `a` was sent before message `b` of the same
    /// conversation, where the platform's ids are in the order sent
    /// (`false` where they are not).
    fn sent_before(a: &Self::MessageId, b: &Self::MessageId) -> bool {
        let _ = (a, b);
        false
    }

    /// The place a conversation is, as asks name it (a DM channel is
    /// named as a channel here: the core's rule, [`Place::is_at`], knows a
    /// direct place by its person).
    fn place_of(chat: &Self::Chat) -> Place;

    /// The conversation an ask for `place` is posted in (a DM is opened
    /// where the platform needs that).
    fn open(
        &self,
        place: &Place,
    ) -> impl Future<Output = Result<Self::Chat, PlatformFailure>> + Send;

    /// The messages that post `view` in `chat`, in order; the last one
    /// carries the controls.
    fn ask_messages(&self, view: &View, chat: &Self::Chat) -> Vec<Self::Message>;

    /// One message holding `block` of an ask's context as the platform's
    /// preformatted text (a code block), posted before the ask's own
    /// messages in `chat`.
    fn context_message(&self, block: &render::Block, chat: &Self::Chat) -> Self::Message;

    /// Every message `view` of `ask` is posted as in `chat`, in order:
    /// each block of its `context` as a message of its own, then the ask's
    /// ([`ChatPlatform::ask_messages`]); a platform whose one message
    /// holds both (a mail) draws them together.
    fn post_messages(
        &self,
        ask: &AskView,
        view: &View,
        context: &[render::Block],
        chat: &Self::Chat,
    ) -> Vec<Self::Message> {
        let _ = ask;
        let mut messages: Vec<Self::Message> = context
            .iter()
            .map(|block| self.context_message(block, chat))
            .collect();
        messages.extend(self.ask_messages(view, chat));
        messages
    }

    /// A plain message saying `text` in `chat`: a notice, the first
    /// message of a thread asks share.
    fn text_message(&self, text: &str, chat: &Self::Chat) -> Self::Message;

    /// Whether messages in `chat` can go under another one
    /// ([`ChatPlatform::in_thread`]): a thread asks share
    /// ([`Ask::thread`](askbridge_core::model::Ask::thread)) is posted that
    /// way where they can, else one message after another.
    fn threads(chat: &Self::Chat) -> bool {
        let _ = chat;
        false
    }

    /// Puts `message` under a thread's first message `root` (where
    /// [`ChatPlatform::threads`]).
    fn in_thread(&self, message: &mut Self::Message, root: &Self::MessageId) {
        let _ = (message, root);
    }

    /// The text a drawn message shows.
    fn text_of(message: &Self::Message) -> &str;

    /// Sends one message. `once` names it — the ask and the part, the
    /// same when the part is sent again after a failure or a crash — for
    /// platforms that take an idempotency key and then post it once.
    fn send(
        &self,
        chat: &Self::Chat,
        message: Self::Message,
        once: &str,
    ) -> impl Future<Output = Result<Self::MessageId, PlatformFailure>> + Send;

    /// Shows `step` in place of what the message shows now: edits it
    /// (`None`), or, where a message cannot become another step (a Matrix
    /// poll), posts the step as a new message and closes the old one
    /// (`Some` of the new one, which carries the ask's controls from now
    /// on).
    fn show_step(
        &self,
        chat: &Self::Chat,
        message: Self::MessageId,
        step: &render::Step,
    ) -> impl Future<Output = Result<Option<Self::MessageId>, PlatformFailure>> + Send;

    /// Edits the message to `shown` plus the status line, controls removed.
    fn close(
        &self,
        chat: &Self::Chat,
        message: Self::MessageId,
        shown: &str,
        status: &str,
    ) -> impl Future<Output = Result<(), PlatformFailure>> + Send;

    /// Answers one of the person's messages with `text`, in the background
    /// (the answer it follows is already stored; a failure is logged).
    fn reply(&self, chat: &Self::Chat, to: Self::MessageId, text: String);

    /// Answers one of `user`'s messages with `text` for them alone where
    /// the platform can (Slack's ephemeral messages), else as
    /// [`ChatPlatform::reply`] does.
    fn reply_privately(&self, chat: &Self::Chat, to: Self::MessageId, user: &str, text: String) {
        let _ = user;
        self.reply(chat, to, text);
    }

    /// Reminds `user` (the place's, if it names one) of the question in
    /// message `to`: a reply with `text`, mentioning them so that they are
    /// notified; returns the reminder's id. A failure is tried again by
    /// the ask's outbox. `once` names the reminder as [`ChatPlatform::send`]'s
    /// names a part.
    fn remind(
        &self,
        chat: &Self::Chat,
        to: Self::MessageId,
        reminder: Reminder<'_>,
    ) -> impl Future<Output = Result<Self::MessageId, PlatformFailure>> + Send;

    /// Answers a press or submission.
    fn acknowledge(&self, reply: Self::Reply, ack: Ack) -> impl Future<Output = ()> + Send;

    /// Answers a press by asking for the person's own words: a forced
    /// reply (returns its message id: a reply to it answers the question)
    /// or a modal (returns `None`: its submission comes back as a
    /// [`Submission`] with `prompt.key`).
    fn ask_own_words(
        &self,
        reply: Self::Reply,
        chat: &Self::Chat,
        prompt: OwnWords<'_>,
    ) -> impl Future<Output = Result<Option<Self::MessageId>, PlatformFailure>> + Send;
}

/// The name of one message the driver posts, the same however often it
/// is sent again (after a failure, a crash, by the instance that took the
/// ask over): part `part` of the ask in place number `place`, or reminder
/// `number` there. Platforms that take an idempotency key (Matrix's
/// transaction ids, Feishu's `uuid`) then post it once.
pub fn once_key(ask_id: &str, place: usize, part: Part) -> String {
    let part = match part {
        Part::Question(index) => index.to_string(),
        Part::Reminder(number) => format!("r{number}"),
    };
    match place {
        0 => format!("{ask_id}/{part}"),
        _ => format!("{ask_id}/{place}/{part}"),
    }
}

/// What a once key names ([`once_key`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Part {
    /// The question's message number, from 0.
    Question(usize),
    /// A reminder's number, from 0.
    Reminder(u32),
}

/// How a press or submission is answered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ack {
    /// It was taken ("Answer submitted"); the message shows the rest.
    Taken(String),
    /// Nothing changed, and this says why ("This question is not for
    /// you."): shown to the presser alone where the platform can.
    Refused(String),
    /// Nothing to say (a toggle, an unreadable or foreign button).
    Quiet,
    /// Something for this person alone, not about an ask (the answer to
    /// askbridge's registered command).
    Private(String),
}

/// A prompt for the person's own words for one question.
#[derive(Debug, Clone, Copy)]
pub struct OwnWords<'a> {
    /// The callback key its answer comes back with (`Other` of the
    /// question).
    pub key: &'a str,
    /// The question.
    pub question: &'a Question,
    /// The question's rich step (label and placeholder of its input).
    pub step: Option<&'a render::Step>,
    /// The locale of askbridge's own words.
    pub locale: Locale,
}

impl OwnWords<'_> {
    /// The hint for the empty input: the step's placeholder, else its
    /// label (text questions only).
    pub fn placeholder(&self) -> Option<&str> {
        self.step?.input.hint()
    }

    /// Whether several lines are expected.
    pub fn multiline(&self) -> bool {
        self.question.kind == QuestionKind::Textarea
    }
}

/// A press on platform `P`, in the core's vocabulary.
pub type Press<P> = inbound::Press<
    <P as ChatPlatform>::Chat,
    <P as ChatPlatform>::MessageId,
    <P as ChatPlatform>::Reply,
>;

/// Own words submitted on platform `P`.
pub type Submission<P> = inbound::Submission<<P as ChatPlatform>::Chat, <P as ChatPlatform>::Reply>;

/// A message typed on platform `P`.
pub type Typed<P> = inbound::Typed<<P as ChatPlatform>::Chat, <P as ChatPlatform>::MessageId>;

/// Anything a person did on platform `P`.
pub type Inbound<P> = inbound::Inbound<
    <P as ChatPlatform>::Chat,
    <P as ChatPlatform>::MessageId,
    <P as ChatPlatform>::Reply,
>;

/// How asks are drawn on a channel: its capabilities and render mode, and
/// the locale of askbridge's own words.
#[derive(Debug, Clone, Copy)]
pub struct Drawing {
    /// What the channel can draw, with its render mode applied.
    pub caps: Capabilities,
    /// The locale of askbridge's own words.
    pub locale: Locale,
}

impl Drawing {
    /// The view of an ask; its id is the ask key in every button.
    pub fn view(&self, view: &AskView) -> View {
        render::view(&view.ask, &view.id, &self.caps, self.locale)
    }

    /// The ask's context, as the blocks its messages show.
    pub fn context(&self, view: &AskView) -> Vec<render::Block> {
        render::context_blocks(&view.ask, &self.caps, self.locale)
    }

    /// One rich step, with `selected` options checked.
    pub fn step(
        &self,
        view: &AskView,
        question: usize,
        selected: &[usize],
    ) -> Option<render::Step> {
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

/// A chat channel: one platform driven by the shared rules. It is the
/// bridge's [`Channel`] for the platform's targets and handles what the
/// platform receives.
#[derive(Debug)]
pub struct ChatDriver<P> {
    pub(super) platform: P,
    bridge: WeakBridge,
    pub(super) draw: Drawing,
    allow: AllowList,
    /// One change at a time to each ask.
    serial: PerAsk,
    /// Each person's events in each conversation in order.
    turns: Turns<Line>,
    /// One thread's first message posted at a time.
    pub(super) threads: tokio::sync::Mutex<()>,
}

/// A line of events: a conversation (when the platform says) and a
/// person's user id.
pub type Line = (Option<String>, String);

impl<P: ChatPlatform> ChatDriver<P> {
    /// Drives `platform` for `bridge` and registers it as the bridge's
    /// channel for the platform's targets.
    pub fn register(
        bridge: &Bridge,
        platform: P,
        draw: Drawing,
        allow: AllowList,
    ) -> Arc<ChatDriver<P>> {
        let driver = Arc::new(ChatDriver {
            platform,
            bridge: bridge.downgrade(),
            draw,
            allow,
            serial: PerAsk::default(),
            turns: Turns::default(),
            threads: tokio::sync::Mutex::new(()),
        });
        bridge.add_channel(Arc::clone(&driver) as Arc<dyn Channel>);
        driver
    }

    /// The platform.
    pub fn platform(&self) -> &P {
        &self.platform
    }

    /// How asks are drawn here.
    pub fn drawing(&self) -> Drawing {
        self.draw
    }

    pub(super) fn bridge(&self) -> Result<Bridge, PlatformFailure> {
        self.bridge
            .upgrade()
            .ok_or_else(|| PlatformFailure::Transient("the bridge is shutting down".to_owned()))
    }

    pub(super) fn record(
        &self,
        ask_id: &str,
        chat: &P::Chat,
        message: P::MessageId,
        posted: Option<&Posted>,
    ) -> MessageRef {
        MessageRef {
            ask_id: ask_id.to_owned(),
            channel: P::KIND,
            conversation: P::conversation(chat),
            message_id: message.to_string(),
            extra: posted.map(Posted::to_extra),
        }
    }

    async fn deliver_view(&self, view: &AskView, place: usize) -> Result<(), PlatformFailure> {
        let bridge = self.bridge()?;
        let target = place_target(view, place)?;
        // Parts posted before a failure or a crash are not posted again.
        let mut refs = own_refs::<P>(&bridge, &view.id, place).await?;
        refs.retain(|message| Posted::of(message).reminder.is_none());
        let chat = match refs.first() {
            Some(first) => chat_of::<P>(first)?,
            None => self.platform.open(&target.place).await?,
        };
        let root = match &view.ask.thread {
            Some(thread) => self.thread_root(&bridge, &chat, thread).await?,
            None => None,
        };
        let drawn = passed_on(self.draw.view(view), view, place, self.draw.locale);
        // The context first, then the question: the message with the
        // controls stays the last, nearest the reply box.
        let context = self.draw.context(view);
        let messages = self.platform.post_messages(view, &drawn, &context, &chat);
        let last = messages.len().saturating_sub(1);
        for (index, mut message) in messages.into_iter().enumerate().skip(refs.len()) {
            if let Some(root) = &root {
                self.platform.in_thread(&mut message, root);
            }
            let text = P::text_of(&message).to_owned();
            let once = once_key(&view.id, place, Part::Question(index));
            // A press that comes between the post and its record waits
            // for the record, so its toggle is not written over by it.
            let _alone = self.serial.lock(&view.id).await;
            let id = self.platform.send(&chat, message, &once).await?;
            let thread = root.as_ref().map(ToString::to_string);
            let extra = if index == last {
                Posted {
                    shown: Some(text),
                    step: first_step(&drawn),
                    place,
                    thread,
                    ..Posted::default()
                }
            } else {
                Posted {
                    place,
                    thread,
                    ..Posted::default()
                }
            };
            let posted = self.record(&view.id, &chat, id, Some(&extra));
            record_posted(|| bridge.save_message_ref(&posted))
                .await
                .map_err(storage)?;
        }
        Ok(())
    }

    /// A rich ask moves to its first open question.
    async fn update_view(&self, view: &AskView, place: usize) -> Result<(), PlatformFailure> {
        let bridge = self.bridge()?;
        let Some((message, mut posted)) = shown_message::<P>(&bridge, &view.id, place).await?
        else {
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
        let chat = chat_of::<P>(&message)?;
        let moved = self
            .platform
            .show_step(&chat, message_id_of::<P>(&message)?, &step)
            .await?;
        posted.step = Some(next);
        posted.selected.clear();
        posted.shown = Some(step.text);
        self.step_shown(&bridge, &chat, message, posted, moved)
            .await
            .map_err(storage)
    }

    /// Records what a step shown shows now: on its message, or, when it
    /// was posted anew (`moved`), on the new message, and the old one as
    /// no longer carrying the controls. The new one is recorded first: a
    /// crash in between leaves two to close, not none.
    async fn step_shown(
        &self,
        bridge: &Bridge,
        chat: &P::Chat,
        message: MessageRef,
        posted: Posted,
        moved: Option<P::MessageId>,
    ) -> Result<(), BridgeError> {
        let Some(moved) = moved else {
            return save_posted(bridge, message, &posted).await;
        };
        let new = self.record(&message.ask_id, chat, moved, Some(&posted));
        record_posted(|| bridge.save_message_ref(&new)).await?;
        let old = Posted {
            shown: None,
            step: None,
            selected: Vec::new(),
            ..posted
        };
        save_posted(bridge, message, &old).await
    }

    /// Every message with the ask's controls gets its status line and
    /// loses its controls (there are two when a crash made the ask post
    /// again and someone pressed the first copy).
    async fn end_view(&self, view: &AskView, place: usize) -> Result<(), PlatformFailure> {
        let bridge = self.bridge()?;
        // An answer that came too late is shown as such.
        let Some(outcome) = view.late.as_ref().or(view.outcome.as_ref()) else {
            return Ok(());
        };
        let here = place_target(view, place)?;
        let status = render::ended_line(&view.state, outcome, Some(&here.place), self.draw.locale);
        let refs = own_refs::<P>(&bridge, &view.id, place).await?;
        // Each copy is tried, whatever became of another (deleted, say).
        let mut first_error = None;
        for message in refs {
            let Some(shown) = Posted::of(&message).shown else {
                continue;
            };
            let closed = match (chat_of::<P>(&message), message_id_of::<P>(&message)) {
                (Ok(chat), Ok(id)) => self.platform.close(&chat, id, &shown, &status).await,
                (Err(error), _) | (_, Err(error)) => Err(error),
            };
            if let Err(error) = closed {
                first_error.get_or_insert(error);
            }
        }
        first_error.map_or(Ok(()), Err)
    }

    /// Handles whatever a person did.
    pub async fn handle(&self, inbound: Inbound<P>) -> Handled {
        match inbound {
            inbound::Inbound::Press(press) => self.press(press).await,
            inbound::Inbound::Submission(submission) => self.submitted(submission).await,
            inbound::Inbound::Typed(typed) => self.typed(typed).await,
            inbound::Inbound::Command(command) => {
                let user = &command.from.responder.user_id;
                let text = render::where_answer(&command.place, user, self.draw.locale);
                self.platform
                    .acknowledge(command.reply, Ack::Private(text))
                    .await;
                Handled::Done
            }
        }
    }

    /// Takes `inbound`'s place among what its person did in its
    /// conversation ([`Turns`]), in the order this is called, and returns
    /// its handling, to run on any task: it waits for the person's earlier
    /// events, and is not handled ([`Handled::Retry`]) where it would
    /// overtake one that was not taken. `delivery` names the delivery
    /// where the platform delivers an event again under the same name.
    pub fn line_up(
        self: &Arc<Self>,
        inbound: Inbound<P>,
        delivery: Option<&str>,
    ) -> impl Future<Output = Handled> + Send + 'static + use<P> {
        let ticket = self.line_up_with(&inbound, delivery);
        let driver = Arc::clone(self);
        async move { ticket.run(driver.handle(inbound)).await }
    }

    /// [`ChatDriver::line_up`] for a platform with more to do before the
    /// driver handles the event (a display name to look up): run `handling`
    /// with the ticket.
    pub fn line_up_with(&self, inbound: &Inbound<P>, delivery: Option<&str>) -> Ticket<Line> {
        let key = (
            inbound.chat().map(P::conversation),
            inbound.person().responder.user_id.clone(),
        );
        self.turns.line_up(key, delivery)
    }

    /// Handles a batch the platform sent in order, through the same lines
    /// ([`ChatDriver::line_up`]): what one person does in one conversation
    /// is applied in that order ("2", then "no, 3"), different people and
    /// places at once. Returns what came of each event, in the order
    /// given.
    pub async fn handle_in_order(self: &Arc<Self>, batch: Vec<Inbound<P>>) -> Vec<Handled> {
        let lined: Vec<_> = batch
            .into_iter()
            .map(|inbound| self.line_up(inbound, None))
            .collect();
        join_all(lined).await
    }

    /// Handles a press; it is acknowledged once, unless it could not be
    /// recorded for now ([`Handled::Retry`]): then the person sees it fail.
    pub async fn press(&self, press: Press<P>) -> Handled {
        let inbound::Press {
            reply,
            button,
            chosen,
            chat,
            message,
            from,
        } = press;
        let Some(bridge) = self.bridge.upgrade() else {
            return self.quietly(reply).await;
        };
        let (Some(chat), Some(message)) = (chat, message) else {
            return self.quietly(reply).await;
        };
        let button = match button {
            Some(button) => Pressing::Button(button),
            // The platform's own control on a step's message (a poll's ✅,
            // a vote for nothing): its message names the ask.
            None => match self.step_on(&bridge, &chat, &message).await {
                Ok(Some(button)) => Pressing::StepControl(button),
                Ok(None) => return self.quietly(reply).await,
                Err(error) => return self.not_taken(reply, &error).await,
            },
        };
        let key = button.key();
        let _alone = self.serial.lock(&key.ask_key).await;
        let (view, from) = match self.find(&bridge, &key.ask_key, &chat, &from).await {
            Ok(Some(found)) => found,
            Ok(None) => return self.quietly(reply).await,
            Err(error) => return self.not_taken(reply, &error).await,
        };
        match self
            .pressed(&bridge, &view, button, chosen, &chat, message, &from)
            .await
        {
            Ok(Pressed::Ack(ack)) => {
                self.platform.acknowledge(reply, ack).await;
                Handled::Done
            }
            Ok(Pressed::OwnWords(question)) => {
                self.open_own_words(&bridge, &view, reply, &chat, question, &from)
                    .await;
                Handled::Done
            }
            Err(error) => self.not_taken(reply, &error).await,
        }
    }

    /// The Done of the rich step message `message` shows, if it shows one.
    async fn step_on(
        &self,
        bridge: &Bridge,
        chat: &P::Chat,
        message: &P::MessageId,
    ) -> Result<Option<CallbackRef>, BridgeError> {
        let found = bridge
            .find_message_ref(P::KIND, &P::conversation(chat), &message.to_string())
            .await?;
        Ok(found.and_then(|message| {
            Posted::of(&message).step.map(|question| CallbackRef {
                ask_key: message.ask_id,
                question,
                option: OptionRef::Done,
            })
        }))
    }

    /// Acknowledges with nothing to say.
    async fn quietly(&self, reply: P::Reply) -> Handled {
        self.platform.acknowledge(reply, Ack::Quiet).await;
        Handled::Done
    }

    /// A press or submission the bridge failed on: one that may work when
    /// tried again is left unacknowledged (the person sees it fail; a
    /// platform that offers it again gets [`Handled::Retry`]); any other
    /// is acknowledged quietly.
    async fn not_taken(&self, reply: P::Reply, error: &BridgeError) -> Handled {
        let handled = unhandled::<P>(error);
        if handled == Handled::Done {
            self.platform.acknowledge(reply, Ack::Quiet).await;
        }
        handled
    }

    /// The ask a key names, if it was posted where the person is, and the
    /// person as answering in that place of it.
    async fn find(
        &self,
        bridge: &Bridge,
        ask_key: &str,
        chat: &P::Chat,
        from: &Person,
    ) -> Result<Option<(AskView, Person)>, BridgeError> {
        match bridge.get(ask_key).await {
            Ok(view) => {
                let refs = bridge.message_refs(&view.id).await?;
                let at = P::place_of(chat);
                let here = view
                    .places()
                    .enumerate()
                    .find(|(number, target)| {
                        as_posted::<P>(target, &refs, *number).is_at(&at, &from.responder)
                    })
                    .map(|(_, target)| super::at_place(from, &target.place));
                Ok(here.map(|from| (view, from)))
            }
            Err(BridgeError::NotFound(_)) => Ok(None),
            Err(error) => Err(error),
        }
    }

    /// Acts on a press of one of the ask's buttons.
    #[allow(clippy::too_many_arguments)]
    async fn pressed(
        &self,
        bridge: &Bridge,
        view: &AskView,
        pressing: Pressing,
        chosen: Option<Vec<usize>>,
        chat: &P::Chat,
        message_id: P::MessageId,
        from: &Person,
    ) -> Result<Pressed, BridgeError> {
        // The pressed message is normally on record; after a crash between
        // posting and recording it is not (and the ask was posted again):
        // the key alone finds the ask, and the copy is recorded now, so it
        // is closed with the rest when the ask ends.
        let message = match bridge
            .find_message_ref(P::KIND, &P::conversation(chat), &message_id.to_string())
            .await?
            .filter(|message| message.ask_id == view.id)
        {
            Some(message) => message,
            None => self.adopt(bridge, view, chat, message_id, from).await?,
        };
        let question = pressing.key().question;
        let posted = Posted::of(&message);
        let toggles = posted.step == Some(question)
            && view.ask.questions.get(question).map(|q| q.kind) == Some(QuestionKind::Multi);
        let (option, own_control) = match pressing {
            Pressing::Button(button) => (button.option, false),
            Pressing::StepControl(button) => (button.option, true),
        };
        // What a press on a step that toggles does without a change to
        // the answers: the selection now (a poll's votes; not a menu's
        // submission, which comes with its Done key), or one toggle.
        let (selects, toggles) = match (&chosen, option) {
            (Some(_), OptionRef::Done) => (toggles && own_control, false),
            (Some(_), _) => (toggles, false),
            (None, OptionRef::Index(_)) => (false, toggles),
            (None, _) => (false, false),
        };

        // Selecting, toggling and asking for own words change no answer,
        // so the bridge does not check them: check here.
        if (selects || toggles || option == OptionRef::Other)
            && let Some(refused) = super::refusal(view, from, &self.allow)
        {
            return Ok(Pressed::Ack(self.refused(&refused, view, from)));
        }
        let input = match (option, chosen) {
            (_, Some(options)) if selects => {
                self.select(bridge, message, posted, options).await?;
                return Ok(Pressed::Ack(Ack::Quiet));
            }
            (OptionRef::Index(option), _) if toggles => {
                self.toggle(bridge, view, chat, message, posted, question, option)
                    .await?;
                return Ok(Pressed::Ack(Ack::Quiet));
            }
            (OptionRef::Other, _) => return Ok(Pressed::OwnWords(question)),
            // A button, or a vote in a poll that takes one answer.
            (OptionRef::Index(option), _) => {
                super::pick(from, &self.allow, question, vec![option], Via::Button)
            }
            // A menu's submission.
            (_, Some(options)) => super::pick(from, &self.allow, question, options, Via::Select),
            (OptionRef::Done, None) => {
                super::pick(from, &self.allow, question, posted.selected, Via::Button)
            }
            (OptionRef::Pass, None) => super::pass(&view.ask, from, &self.allow, question),
            (OptionRef::Skip, None) => Input::Skip {
                from: from.responder.clone(),
                admitted: self.allow.admits(from),
            },
        };
        let (step, _) = bridge.handle(&view.id, input).await?;
        Ok(Pressed::Ack(self.after_press(&step, view, from)))
    }

    /// Records a message of the ask that was posted but never recorded,
    /// as showing what the ask's controls show when first posted.
    async fn adopt(
        &self,
        bridge: &Bridge,
        view: &AskView,
        chat: &P::Chat,
        message_id: P::MessageId,
        from: &Person,
    ) -> Result<MessageRef, BridgeError> {
        let drawn = self.draw.view(view);
        let posted = Posted {
            shown: self
                .platform
                .ask_messages(&drawn, chat)
                .last()
                .map(|message| P::text_of(message).to_owned()),
            step: first_step(&drawn),
            place: place_number(view, from),
            ..Posted::default()
        };
        let message = self.record(&view.id, chat, message_id, Some(&posted));
        bridge.save_message_ref(&message).await?;
        Ok(message)
    }

    fn after_press(&self, step: &Step, view: &AskView, from: &Person) -> Ack {
        let text = super::after_press(step, super::place_of(view, from), self.draw.locale);
        match step {
            Step::Rejected(_) => Ack::Refused(text),
            Step::Finished(_) | Step::Progress(_) => Ack::Taken(text),
        }
    }

    fn refused(&self, refused: &Rejection, view: &AskView, from: &Person) -> Ack {
        self.after_press(&Step::Rejected(refused.clone()), view, from)
    }

    /// Checks or unchecks an option of the rich step shown, and redraws
    /// it; the selection is kept with the message until Done.
    #[allow(clippy::too_many_arguments)]
    async fn toggle(
        &self,
        bridge: &Bridge,
        view: &AskView,
        chat: &P::Chat,
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
        let mut moved = None;
        if let Ok(message_id) = message_id_of::<P>(&message) {
            match self.platform.show_step(chat, message_id, &step).await {
                Ok(new) => moved = new,
                Err(error) => {
                    tracing::warn!(ask_id = %view.id, error = %error, "cannot redraw the toggles");
                }
            }
        }
        self.step_shown(bridge, chat, message, posted, moved).await
    }

    /// Takes `options` as the selection of the rich step shown, as the
    /// platform's own control shows it (a poll's votes): nothing to
    /// redraw; the selection is kept with the message until Done.
    async fn select(
        &self,
        bridge: &Bridge,
        message: MessageRef,
        mut posted: Posted,
        mut options: Vec<usize>,
    ) -> Result<(), BridgeError> {
        options.sort_unstable();
        options.dedup();
        posted.selected = options;
        save_posted(bridge, message, &posted).await
    }

    /// Opens the platform's prompt for the person's own words; a forced
    /// reply is recorded so a reply to it answers `question`.
    async fn open_own_words(
        &self,
        bridge: &Bridge,
        view: &AskView,
        reply: P::Reply,
        chat: &P::Chat,
        question: usize,
        from: &Person,
    ) {
        let Some(q) = view.ask.questions.get(question) else {
            return self.platform.acknowledge(reply, Ack::Quiet).await;
        };
        let step = self.draw.step(view, question, &[]);
        let key = callback_key(&view.id, question, OptionRef::Other);
        let prompt = OwnWords {
            key: &key,
            question: q,
            step: step.as_ref(),
            locale: self.draw.locale,
        };
        let prompt_id = match self.platform.ask_own_words(reply, chat, prompt).await {
            Ok(Some(id)) => id,
            Ok(None) => return,
            Err(error) => {
                tracing::warn!(ask_id = %view.id, error = %error, "cannot ask for own words");
                return;
            }
        };
        let posted = Posted {
            own_words_for: Some(question),
            place: place_number(view, from),
            ..Posted::default()
        };
        if let Err(error) = bridge
            .save_message_ref(&self.record(&view.id, chat, prompt_id, Some(&posted)))
            .await
        {
            let _logged = unhandled::<P>(&error);
        }
    }

    /// Handles the person's own words from a modal; acknowledged like a
    /// press.
    pub async fn submitted(&self, submission: Submission<P>) -> Handled {
        let inbound::Submission {
            reply,
            key,
            chat,
            text,
            from,
        } = submission;
        let (Some(bridge), Some(key)) = (self.bridge.upgrade(), key) else {
            return self.quietly(reply).await;
        };
        let _alone = self.serial.lock(&key.ask_key).await;
        let (view, from) = match self.find(&bridge, &key.ask_key, &chat, &from).await {
            Ok(Some(found)) => found,
            Ok(None) => return self.quietly(reply).await,
            Err(error) => return self.not_taken(reply, &error).await,
        };
        let input = Input::Other {
            from: from.responder.clone(),
            admitted: self.allow.admits(&from),
            question: key.question,
            text,
            via: Via::Modal,
        };
        match bridge.handle(&view.id, input).await {
            Ok((step, _)) => {
                let ack = self.after_press(&step, &view, &from);
                self.platform.acknowledge(reply, ack).await;
                Handled::Done
            }
            Err(error) => self.not_taken(reply, &error).await,
        }
    }

    /// Handles a typed message. Whatever the bridge recorded is stored
    /// before this returns; the reply to the person may still be on its
    /// way.
    pub async fn typed(&self, typed: Typed<P>) -> Handled {
        let Some(bridge) = self.bridge.upgrade() else {
            return Handled::Done;
        };
        match self.typed_in(&bridge, typed).await {
            Ok(()) => Handled::Done,
            Err(error) => unhandled::<P>(&error),
        }
    }

    async fn typed_in(&self, bridge: &Bridge, typed: Typed<P>) -> Result<(), BridgeError> {
        if inbound::is_where_command(&typed.text) {
            let user = &typed.from.responder.user_id;
            let text = render::where_answer(&typed.place, user, self.draw.locale);
            self.platform
                .reply_privately(&typed.chat, typed.message, user, text);
            return Ok(());
        }
        let reply_to = typed.reply_to.map(|id| id.to_string());
        let Some(addressed) = super::address(
            bridge,
            P::KIND,
            &typed.place,
            &P::conversation(&typed.chat),
            reply_to.as_deref(),
            &typed.from,
            &self.allow,
            |posted| {
                posted
                    .parse::<P::MessageId>()
                    .is_ok_and(|posted| P::sent_before(&typed.message, &posted))
            },
        )
        .await?
        else {
            tracing::debug!(channel = P::KIND.as_str(), message = %typed.message, "a typed message answers no ask");
            return Ok(());
        };
        tracing::debug!(channel = P::KIND.as_str(), message = %typed.message, ask_id = %addressed.ask_id, "a typed message answers an ask");
        let from = match &addressed.place {
            Some(place) => super::at_place(&typed.from, place),
            None => typed.from.clone(),
        };
        let input = super::typed_input(&typed.text, &addressed, &from, &self.allow);
        let _alone = self.serial.lock(&addressed.ask_id).await;
        let (step, view) = match bridge.handle(&addressed.ask_id, input).await {
            Ok(handled) => handled,
            Err(BridgeError::NotFound(_)) => return Ok(()),
            Err(error) => return Err(error),
        };
        let here = super::place_of(&view, &from);
        if let Some(text) = super::after_typed(&step, &view.ask, here, self.draw.locale) {
            self.platform.reply(&typed.chat, typed.message, text);
        }
        Ok(())
    }
}

/// What was pressed.
enum Pressing {
    /// One of askbridge's buttons.
    Button(CallbackRef),
    /// The platform's own control on the message of a rich step (a ✅
    /// reaction, a poll's vote for nothing): the step's Done key, read as
    /// Done without `chosen`, as the selection with it.
    StepControl(CallbackRef),
}

impl Pressing {
    fn key(&self) -> &CallbackRef {
        match self {
            Pressing::Button(key) | Pressing::StepControl(key) => key,
        }
    }
}

/// What a press leads to.
enum Pressed {
    /// Acknowledge it so.
    Ack(Ack),
    /// Ask for the person's own words for this question.
    OwnWords(usize),
}

impl<P: ChatPlatform> Channel for ChatDriver<P> {
    fn kind(&self) -> ChannelKind {
        P::KIND
    }

    fn lease(&self) -> Option<&'static str> {
        P::LEASE
    }

    fn deliver<'a>(
        &'a self,
        ask: &'a AskView,
        place: usize,
    ) -> BoxFuture<'a, Result<(), PlatformFailure>> {
        Box::pin(self.deliver_view(ask, place))
    }

    fn update<'a>(
        &'a self,
        ask: &'a AskView,
        place: usize,
    ) -> BoxFuture<'a, Result<(), PlatformFailure>> {
        Box::pin(self.update_view(ask, place))
    }

    fn end<'a>(
        &'a self,
        ask: &'a AskView,
        place: usize,
    ) -> BoxFuture<'a, Result<(), PlatformFailure>> {
        Box::pin(self.end_view(ask, place))
    }

    fn notify<'a>(
        &'a self,
        notice: &'a Notice,
        target: &'a Target,
        once: &'a str,
    ) -> BoxFuture<'a, Result<usize, PlatformFailure>> {
        Box::pin(self.notify_at(notice, target, once))
    }

    fn remind<'a>(
        &'a self,
        ask: &'a AskView,
        place: usize,
        number: u32,
    ) -> BoxFuture<'a, Result<(), PlatformFailure>> {
        Box::pin(self.remind_view(ask, place, number))
    }
}

/// The rich step a freshly posted view shows.
fn first_step(drawn: &View) -> Option<usize> {
    match drawn {
        View::Rich(rich) => rich.steps.first().map(|step| step.question),
        View::Buttons(_) | View::Text(_) => None,
    }
}

/// The newest message of an ask that carries its controls, with what it
/// shows.
pub(super) async fn shown_message<P: ChatPlatform>(
    bridge: &Bridge,
    ask_id: &str,
    place: usize,
) -> Result<Option<(MessageRef, Posted)>, PlatformFailure> {
    let refs = own_refs::<P>(bridge, ask_id, place).await?;
    Ok(refs.into_iter().rev().find_map(|message| {
        let posted = Posted::of(&message);
        posted.shown.is_some().then_some((message, posted))
    }))
}

/// The messages an ask was posted as in its place number `place` on this
/// platform, oldest first (an ask may be recorded elsewhere too: the
/// host's dialog, another place).
pub(super) async fn own_refs<P: ChatPlatform>(
    bridge: &Bridge,
    ask_id: &str,
    place: usize,
) -> Result<Vec<MessageRef>, PlatformFailure> {
    let mut refs = bridge.message_refs(ask_id).await.map_err(storage)?;
    refs.retain(|message| message.channel == P::KIND && Posted::of(message).place == place);
    Ok(refs)
}

/// Keeps `posted` with the message.
async fn save_posted(
    bridge: &Bridge,
    message: MessageRef,
    posted: &Posted,
) -> Result<(), BridgeError> {
    bridge
        .save_message_ref(&MessageRef {
            extra: Some(posted.to_extra()),
            ..message
        })
        .await
}

pub(super) fn chat_of<P: ChatPlatform>(message: &MessageRef) -> Result<P::Chat, PlatformFailure> {
    P::parse_conversation(&message.conversation).ok_or_else(|| {
        PlatformFailure::Permanent(format!(
            "unreadable {} conversation {:?}",
            P::KIND.as_str(),
            message.conversation
        ))
    })
}

pub(super) fn message_id_of<P: ChatPlatform>(
    message: &MessageRef,
) -> Result<P::MessageId, PlatformFailure> {
    message.message_id.parse().map_err(|_| {
        PlatformFailure::Permanent(format!(
            "unreadable {} message id {:?}",
            P::KIND.as_str(),
            message.message_id
        ))
    })
}

/// How long a message just posted is tried to be recorded before the
/// place's delivery is given back to its outbox as failed.
const RECORD_WITHIN: Duration = Duration::from_secs(120);

/// Records a message just posted: a database that fails for a moment is
/// waited out (backing off from 100 ms to 5 s), because failing here would
/// post the message again (once, where the platform takes the once key);
/// a failure that will not pass, or one that lasts [`RECORD_WITHIN`], is
/// returned, so the place's outbox — and the ask, which may have ended
/// meanwhile — are not held up for good.
pub(super) async fn record_posted<T, F, Fut>(mut save: F) -> Result<T, BridgeError>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T, BridgeError>>,
{
    let until = tokio::time::Instant::now() + RECORD_WITHIN;
    let mut backoff = Duration::from_millis(100);
    loop {
        match save().await {
            Ok(saved) => return Ok(saved),
            Err(error) if error.is_retryable() && tokio::time::Instant::now() + backoff < until => {
                tracing::warn!(error = %error, retry_in_ms = backoff.as_millis() as u64, "a posted message is not on record yet; retrying");
                tokio::time::sleep(backoff).await;
                backoff = (backoff * 2).min(Duration::from_secs(5));
            }
            Err(error) => return Err(error),
        }
    }
}

pub(super) fn storage(error: BridgeError) -> PlatformFailure {
    PlatformFailure::Transient(format!("storage: {error}"))
}

/// Logs an event the bridge failed on; [`Handled::Retry`] when trying
/// again may work.
fn unhandled<P: ChatPlatform>(error: &BridgeError) -> Handled {
    if error.is_retryable() {
        tracing::warn!(channel = P::KIND.as_str(), error = %error, "chat event not recorded; it may be offered again");
        Handled::Retry
    } else {
        tracing::warn!(channel = P::KIND.as_str(), error = %error, "chat event not handled");
        Handled::Done
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use super::*;

    #[tokio::test]
    async fn a_posted_message_is_recorded_through_a_passing_failure_but_not_a_refusal() {
        let tries = AtomicUsize::new(0);
        let recorded = record_posted(|| {
            let attempt = tries.fetch_add(1, Ordering::SeqCst);
            async move {
                if attempt < 2 {
                    Err(BridgeError::Contended("ask_1".into()))
                } else {
                    Ok(())
                }
            }
        })
        .await;
        assert!(recorded.is_ok());
        assert_eq!(tries.load(Ordering::SeqCst), 3);

        let tries = AtomicUsize::new(0);
        let refused: Result<(), _> = record_posted(|| {
            tries.fetch_add(1, Ordering::SeqCst);
            async { Err(BridgeError::NotFound("ask_1".into())) }
        })
        .await;
        assert!(matches!(refused, Err(BridgeError::NotFound(_))));
        assert_eq!(tries.load(Ordering::SeqCst), 1);
    }

    #[tokio::test(start_paused = true)]
    async fn record_posted_gives_up_on_a_failure_that_lasts() {
        let started = tokio::time::Instant::now();
        let tries = AtomicUsize::new(0);
        let given_up: Result<(), _> = record_posted(|| {
            tries.fetch_add(1, Ordering::SeqCst);
            async { Err(BridgeError::Contended("ask_1".into())) }
        })
        .await;
        assert!(matches!(given_up, Err(BridgeError::Contended(_))));
        let waited = started.elapsed();
        assert!(waited <= RECORD_WITHIN, "gave up after {waited:?}");
        assert!(
            waited >= RECORD_WITHIN - Duration::from_secs(5),
            "gave up after {waited:?}"
        );
        assert!(tries.load(Ordering::SeqCst) > 3);
    }

    #[test]
    fn once_keys_name_each_part_and_reminder_of_each_place_apart() {
        assert_eq!(once_key("ask_1", 0, Part::Question(0)), "ask_1/0");
        assert_eq!(once_key("ask_1", 2, Part::Question(1)), "ask_1/2/1");
        assert_eq!(once_key("ask_1", 0, Part::Reminder(0)), "ask_1/r0");
        assert_eq!(once_key("ask_1", 1, Part::Reminder(2)), "ask_1/1/r2");
    }
}

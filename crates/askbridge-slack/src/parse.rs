//! Slack events and interactions as askbridge events: a button press, a
//! modal submit, a typed message, with who sent it and where. Pure.
//!
//! Input is slack-morphism's own models, as Socket Mode delivers them
//! (`events_api` and `interactive` envelopes), or the raw bodies of the
//! Events API and interactivity requests in HTTP mode ([`events_body`],
//! [`interactivity_body`]). Only what askbridge acts on is kept:
//! `block_actions` on a message, `view_submission`, and `message` events
//! from people (not bots, not the bot itself, not edits, deletions or other
//! subtypes) with some text. Anything else is `None`.
//!
//! Ticking a checkbox or choosing in a multi-select menu sends a
//! `block_actions` too; askbridge does not act on those (`None`): the
//! choice is read from the message's state when Submit is pressed (see
//! [`crate::render`]).

use std::fmt;
use std::str::FromStr;

use askbridge_core::failure::BadRequest;
use askbridge_core::inbound::{self, Inbound, Person, is_where_command};
use askbridge_core::model::{ChannelKind, Place, Responder};
use askbridge_core::render::{CallbackRef, OptionRef, parse_callback_key};
use slack_morphism::prelude::{
    SlackActionState, SlackBasicUserInfo, SlackChannelId, SlackCommandEvent,
    SlackEventCallbackBody, SlackInteractionActionContainer, SlackInteractionBlockActionsEvent,
    SlackInteractionEvent, SlackInteractionViewSubmissionEvent, SlackMessageEvent,
    SlackMessageEventType, SlackPushEvent, SlackPushEventCallback, SlackResponseUrl,
    SlackTriggerId, SlackTs, SlackUserId, SlackView,
};

use crate::render::{ANSWER_ACTION_ID, ANSWER_BLOCK_ID};

/// Someone who pressed, submitted or wrote.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sender {
    /// Their user id (`U…` or `W…`).
    pub id: SlackUserId,
    /// Their handle, when the payload has it (interactions do).
    pub username: Option<String>,
    /// Their display name, when known: messages may carry the profile;
    /// interactions do not, and the server may look it up
    /// ([`crate::run::SlackApi::user_name`]) and fill it in.
    pub name: Option<String>,
}

impl Sender {
    fn of_user(user: &SlackBasicUserInfo) -> Sender {
        Sender {
            id: user.id.clone(),
            username: named(user.username.as_deref()).or_else(|| named(user.name.as_deref())),
            name: None,
        }
    }

    /// The sender as the core's person: the display name only when the
    /// event carried it (the server may look it up), and the handle.
    pub fn person(&self) -> Person {
        let mut responder = self.responder();
        responder.name = self.name.clone().filter(|name| !name.trim().is_empty());
        Person {
            responder,
            username: self.username.clone(),
            roles: Vec::new(),
        }
    }

    /// The sender as the core's responder: the user id, the display name
    /// else the handle.
    pub fn responder(&self) -> Responder {
        Responder {
            channel: ChannelKind::Slack,
            user_id: self.id.0.clone(),
            name: self
                .name
                .clone()
                .or_else(|| self.username.clone())
                .filter(|name| !name.trim().is_empty()),
            place: None,
        }
    }
}

/// A Slack conversation, with the thread new messages go to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SlackChat {
    /// The conversation (`C…`, `G…`, `D…`).
    pub channel: SlackChannelId,
    /// The thread messages are posted in, if any.
    pub thread_ts: Option<SlackTs>,
}

/// A message timestamp: its id within its conversation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ts(pub SlackTs);

impl From<SlackTs> for Ts {
    fn from(ts: SlackTs) -> Ts {
        Ts(ts)
    }
}

impl Ts {
    /// Seconds and microseconds: in the order messages were posted in a
    /// conversation (`None` for a `ts` that is not `<digits>.<digits>`).
    pub fn order(&self) -> Option<(u64, u64)> {
        let (seconds, micros) = self.0.0.split_once('.')?;
        Some((seconds.parse().ok()?, micros.parse().ok()?))
    }
}

impl fmt::Display for Ts {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0.0)
    }
}

impl FromStr for Ts {
    type Err = String;

    fn from_str(text: &str) -> Result<Ts, String> {
        match !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit() || b == b'.') {
            true => Ok(Ts(SlackTs(text.to_owned()))),
            false => Err(format!("not a Slack ts: {text:?}")),
        }
    }
}

/// How a press is answered when it must be: privately, to its presser.
#[derive(Debug)]
pub struct Reply {
    /// Opens a modal within 3 seconds of the press.
    pub trigger_id: Option<SlackTriggerId>,
    /// Answers the presser privately.
    pub response_url: Option<SlackResponseUrl>,
    /// The conversation, for `chat.postEphemeral` without a response URL.
    pub channel: Option<SlackChannelId>,
    /// Who pressed or submitted.
    pub user: SlackUserId,
    /// The thread the press was in, if any.
    pub thread_ts: Option<SlackTs>,
}

/// What happened.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Event {
    /// A button was pressed.
    Press(Press),
    /// A modal was submitted.
    Submit(Submit),
    /// A text message was sent.
    Text(TextMessage),
    /// askbridge's slash command ([`COMMAND`]) was run.
    Command(Command),
}

/// askbridge's slash command, as an app manifest registers it: `/askbridge`
/// tells the person the targets for where they ran it.
pub const COMMAND: &str = "/askbridge";

/// askbridge's slash command, run in a conversation (`slash_commands`).
/// Slack wants it acknowledged within 3 seconds; the answer goes to its
/// `response_url`, seen by the person alone.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Command {
    /// Where the answer goes, for the person alone (30 minutes, 5 uses).
    pub response_url: SlackResponseUrl,
    /// Where it was run.
    pub channel: SlackChannelId,
    /// Who ran it.
    pub from: Sender,
}

/// Reads a slash command; `None` unless it is askbridge's own
/// ([`COMMAND`]) asking where (no text, or `where`).
pub fn command(event: &SlackCommandEvent) -> Option<Delivered> {
    let text = event.text.as_deref().unwrap_or_default();
    let asked = format!("{} {}", event.command.0, text.trim());
    (event.command.0 == COMMAND && is_where_command(asked.trim())).then(|| Delivered {
        key: format!("trigger:{}", event.trigger_id.0),
        event: Event::Command(Command {
            response_url: event.response_url.clone(),
            channel: event.channel_id.clone(),
            from: Sender {
                id: event.user_id.clone(),
                username: None,
                name: None,
            },
        }),
    })
}

/// A button press on a message (`block_actions`). Slack wants the request
/// (or the Socket Mode envelope) acknowledged within 3 seconds; anything
/// else is done through the Web API, `trigger_id` or `response_url`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Press {
    /// Opens a modal (`views.open`) within 3 seconds of the press.
    pub trigger_id: Option<SlackTriggerId>,
    /// Posts an ephemeral answer to the presser for 30 minutes (5 uses).
    pub response_url: Option<SlackResponseUrl>,
    /// The button's key, when it is one of askbridge's and readable.
    pub button: Option<CallbackRef>,
    /// On a multi-select step's Submit (a Done key): the ticked options as
    /// indices, in Slack's order, read from the message's state; `None`
    /// for other buttons, or when the state has no selection under that
    /// key.
    pub values: Option<Vec<usize>>,
    /// The conversation of the message.
    pub channel: SlackChannelId,
    /// The message the button is on.
    pub message_ts: Option<SlackTs>,
    /// The thread the message is in, if any.
    pub thread_ts: Option<SlackTs>,
    /// Who pressed.
    pub from: Sender,
}

/// A modal submit (`view_submission`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Submit {
    /// The modal's key (its `callback_id`: the Other… / Answer… key), when
    /// it is one of askbridge's.
    pub key: Option<CallbackRef>,
    /// The text input's value (empty if there is none).
    pub text: String,
    /// The modal's `private_metadata` (empty if none).
    pub private_metadata: String,
    /// Who submitted.
    pub from: Sender,
}

/// A text message from a person.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TextMessage {
    /// The conversation it was sent in.
    pub channel: SlackChannelId,
    /// Its timestamp (its id in the conversation).
    pub ts: SlackTs,
    /// The thread it was sent in, if it is a reply in one.
    pub thread_ts: Option<SlackTs>,
    /// Who sent it.
    pub from: Sender,
    /// The text without Slack's markup (see [`clean_text`]); never blank.
    pub text: String,
}

/// An event in the core's vocabulary: a press or modal submission
/// (answered privately through [`Reply`]), or a typed message — an IM's
/// filed under its user, since an IM's id is Slack's to choose. Replies to
/// a typed message go in its thread, or start one under it.
pub fn inbound(event: Event) -> Inbound<SlackChat, Ts, Reply> {
    match event {
        Event::Press(press) => Inbound::Press(inbound::Press {
            reply: Reply {
                trigger_id: press.trigger_id,
                response_url: press.response_url,
                channel: Some(press.channel.clone()),
                user: press.from.id.clone(),
                thread_ts: press.thread_ts.clone(),
            },
            button: press.button,
            chosen: press.values,
            chat: Some(SlackChat {
                channel: press.channel,
                thread_ts: press.thread_ts,
            }),
            message: press.message_ts.map(Ts::from),
            from: press.from.person(),
        }),
        Event::Submit(submit) => {
            // The modal was opened with its message's conversation in
            // `private_metadata`.
            let channel = SlackChannelId(submit.private_metadata.clone());
            Inbound::Submission(inbound::Submission {
                reply: Reply {
                    trigger_id: None,
                    response_url: None,
                    channel: (!channel.0.is_empty()).then(|| channel.clone()),
                    user: submit.from.id.clone(),
                    thread_ts: None,
                },
                key: submit.key,
                chat: SlackChat {
                    channel,
                    thread_ts: None,
                },
                text: submit.text,
                from: submit.from.person(),
            })
        }
        Event::Command(command) => Inbound::Command(inbound::Command {
            place: place(&command.channel, None, &command.from),
            reply: Reply {
                trigger_id: None,
                response_url: Some(command.response_url),
                channel: Some(command.channel.clone()),
                user: command.from.id.clone(),
                thread_ts: None,
            },
            chat: SlackChat {
                channel: command.channel,
                thread_ts: None,
            },
            from: command.from.person(),
        }),
        Event::Text(message) => {
            let place = place(&message.channel, message.thread_ts.as_ref(), &message.from);
            let thread = message
                .thread_ts
                .clone()
                .unwrap_or_else(|| message.ts.clone());
            Inbound::Typed(inbound::Typed {
                chat: SlackChat {
                    channel: message.channel,
                    thread_ts: Some(thread),
                },
                place,
                message: Ts::from(message.ts),
                reply_to: message.thread_ts.map(Ts::from),
                text: message.text,
                from: message.from.person(),
            })
        }
    }
}

/// The place asks for a conversation are posted to: an IM under its user
/// (an IM's id is Slack's to choose), else the channel and the thread.
fn place(channel: &SlackChannelId, thread_ts: Option<&SlackTs>, from: &Sender) -> Place {
    if channel.0.starts_with('D') {
        Place::SlackUser {
            user_id: from.id.0.clone(),
        }
    } else {
        Place::Slack {
            channel_id: channel.0.clone(),
            thread_ts: thread_ts.map(|ts| ts.0.clone()),
        }
    }
}

/// An Events API request body.
// One per request, matched at once: not worth a box.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EventsBody {
    /// Slack checking the Request URL: answer with the challenge.
    UrlVerification {
        /// What to answer with.
        challenge: String,
    },
    /// An event, read as for Socket Mode (`None`: not acted on).
    Event(Option<Delivered>),
}

/// An event with its delivery key, which is the same for every delivery
/// of one event (Slack delivers again what it saw no acknowledgement
/// for): `event:` and the `event_id`, `trigger:` and an interaction's
/// `trigger_id`, or `view:` and a submitted view's id and hash.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Delivered {
    /// The delivery key.
    pub key: String,
    /// The event.
    pub event: Event,
}

/// Reads an Events API event; `None` unless it is a `message` askbridge
/// acts on (see [`message`]). `bot` is askbridge's own bot user.
pub fn push_event(callback: &SlackPushEventCallback, bot: &SlackUserId) -> Option<Event> {
    match &callback.event {
        SlackEventCallbackBody::Message(event) => message(event, bot).map(Event::Text),
        _ => None,
    }
}

/// [`push_event`] with its delivery key.
pub fn delivered_push(callback: &SlackPushEventCallback, bot: &SlackUserId) -> Option<Delivered> {
    Some(Delivered {
        key: format!("event:{}", callback.event_id.0),
        event: push_event(callback, bot)?,
    })
}

/// Reads an interaction: a button press on a message or a modal submit;
/// `None` for anything else (checkbox ticks and menu choices, presses in
/// modals or the App Home, shortcuts, closed modals).
pub fn interaction(event: &SlackInteractionEvent) -> Option<Event> {
    match event {
        SlackInteractionEvent::BlockActions(actions) => block_actions(actions).map(Event::Press),
        SlackInteractionEvent::ViewSubmission(submission) => {
            Some(Event::Submit(view_submission(submission)))
        }
        _ => None,
    }
}

/// [`interaction`] with its delivery key.
pub fn delivered_interaction(event: &SlackInteractionEvent) -> Option<Delivered> {
    let key = match event {
        SlackInteractionEvent::BlockActions(actions) => format!("trigger:{}", actions.trigger_id.0),
        SlackInteractionEvent::ViewSubmission(submission) => match &submission.trigger_id {
            Some(trigger) => format!("trigger:{}", trigger.0),
            None => format!(
                "view:{}:{}",
                submission.view.state_params.id.0, submission.view.state_params.hash
            ),
        },
        _ => return None,
    };
    Some(Delivered {
        key,
        event: interaction(event)?,
    })
}

/// Reads the body of an Events API request (after its signature was
/// checked with [`crate::run::SignatureCheck`]). Slack retries a request
/// it got no 200 for within 3 seconds (with `X-Slack-Retry-Num`); the
/// event is the same, so answer at once and act on it once.
pub fn events_body(body: &[u8], bot: &SlackUserId) -> Result<EventsBody, BadRequest> {
    let parsed: SlackPushEvent =
        serde_json::from_slice(body).map_err(|error| format!("unreadable Slack event: {error}"))?;
    Ok(match &parsed {
        SlackPushEvent::UrlVerification(verification) => EventsBody::UrlVerification {
            challenge: verification.challenge.clone(),
        },
        SlackPushEvent::EventCallback(callback) => EventsBody::Event(delivered_push(callback, bot)),
        SlackPushEvent::AppRateLimited(_) => EventsBody::Event(None),
    })
}

/// Reads the body of an interactivity request, a form whose `payload`
/// field is the interaction's JSON (after its signature was checked with
/// [`crate::run::SignatureCheck`]).
pub fn interactivity_body(body: &[u8]) -> Result<Option<Delivered>, BadRequest> {
    let payload = form_urlencoded::parse(body)
        .find(|(name, _)| name == "payload")
        .map(|(_, value)| value)
        .ok_or_else(|| "the Slack interaction has no payload field".to_owned())?;
    let parsed: SlackInteractionEvent = serde_json::from_str(&payload)
        .map_err(|error| format!("unreadable Slack interaction: {error}"))?;
    Ok(delivered_interaction(&parsed))
}

/// Reads the body of a slash command request, the form Slack posts to
/// the command's Request URL (after its signature was checked with
/// [`crate::run::SignatureCheck`]); `None` unless it is askbridge's own
/// ([`command`]).
pub fn command_body(body: &[u8]) -> Result<Option<Delivered>, BadRequest> {
    let fields: serde_json::Map<String, serde_json::Value> = form_urlencoded::parse(body)
        .map(|(name, value)| {
            (
                name.into_owned(),
                serde_json::Value::from(value.into_owned()),
            )
        })
        .collect();
    let parsed: SlackCommandEvent = serde_json::from_value(serde_json::Value::Object(fields))
        .map_err(|error| format!("unreadable Slack slash command: {error}"))?;
    Ok(command(&parsed))
}

/// Reads a `message` event; `None` unless it is a person's message (no
/// subtype, or `thread_broadcast` / `file_share`) with some text, not
/// hidden, not from a bot (`bot_id`) or the bot itself. Edits
/// (`message_changed`), deletions and every other subtype are `None`.
pub fn message(event: &SlackMessageEvent, bot: &SlackUserId) -> Option<TextMessage> {
    match &event.subtype {
        None | Some(SlackMessageEventType::ThreadBroadcast | SlackMessageEventType::FileShare) => {}
        Some(_) => return None,
    }
    let sender = &event.sender;
    if event.hidden == Some(true) || sender.bot_id.is_some() || sender.bot_profile.is_some() {
        return None;
    }
    let user = sender.user.as_ref().filter(|user| *user != bot)?;
    let channel = event.origin.channel.clone()?;
    let raw = event.content.as_ref()?.text.as_deref()?;
    let text = command_text(raw, bot).unwrap_or_else(|| clean_text(raw, Some(bot)));
    let text = text.trim();
    if text.is_empty() {
        return None;
    }
    let ts = event.origin.ts.clone();
    let thread_ts = event
        .origin
        .thread_ts
        .clone()
        .filter(|thread| *thread != ts);
    let profile = sender.user_profile.as_ref();
    Some(TextMessage {
        channel,
        ts,
        thread_ts,
        from: Sender {
            id: user.clone(),
            username: None,
            name: profile
                .and_then(|p| named(p.display_name.as_deref()))
                .or_else(|| profile.and_then(|p| named(p.real_name.as_deref()))),
        },
        text: text.to_owned(),
    })
}

/// askbridge's command as Slack people write it — the bot's mention in
/// place of the command's name (`/askbridge` would be a Slack slash
/// command), `@askbridge where` — in the core's words; `None` for any
/// other message.
pub fn command_text(raw: &str, bot: &SlackUserId) -> Option<String> {
    let rest = raw.trim_start().strip_prefix("<@")?;
    let (user, rest) = rest.split_once('>')?;
    let user = user.split_once('|').map_or(user, |(user, _label)| user);
    let command = format!("askbridge {}", rest.trim().to_lowercase());
    (user == bot.0 && is_where_command(&command)).then_some(command)
}

/// A message's text without Slack's markup: user mentions `<@U…>` become
/// `@U…` (or `@label`), `bot`'s own mention is dropped; channel links
/// `<#C…|name>` become `#name`; `<!here>` and the like `@here`; links
/// `<url|text>` their text and `<url>` the URL; then `&lt;`, `&gt;` and
/// `&amp;` are undone.
pub fn clean_text(text: &str, bot: Option<&SlackUserId>) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find('<') {
        out.push_str(&rest[..start]);
        let after = &rest[start + 1..];
        let Some(end) = after.find('>') else {
            out.push_str(&rest[start..]);
            rest = "";
            break;
        };
        out.push_str(&markup(&after[..end], bot));
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    unescape(&out)
}

/// One `<…>` of Slack's markup as plain text.
fn markup(inner: &str, bot: Option<&SlackUserId>) -> String {
    let (target, label) = match inner.split_once('|') {
        Some((target, label)) => (target, Some(label).filter(|l| !l.is_empty())),
        None => (inner, None),
    };
    if let Some(user) = target.strip_prefix('@') {
        if bot.is_some_and(|bot| bot.0 == user) {
            return String::new();
        }
        return match label {
            Some(label) => format!("@{}", label.trim_start_matches('@')),
            None => format!("@{user}"),
        };
    }
    if let Some(channel) = target.strip_prefix('#') {
        return format!("#{}", label.unwrap_or(channel));
    }
    if let Some(special) = target.strip_prefix('!') {
        return match label {
            Some(label) => label.to_owned(),
            None => format!("@{}", special.split('^').next().unwrap_or(special)),
        };
    }
    label.unwrap_or(target).to_owned()
}

/// Undoes Slack's escaping of `&`, `<` and `>`.
fn unescape(text: &str) -> String {
    text.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&amp;", "&")
}

fn block_actions(event: &SlackInteractionBlockActionsEvent) -> Option<Press> {
    let SlackInteractionActionContainer::Message(container) = &event.container else {
        // A press in a modal, the App Home or a legacy attachment.
        return None;
    };
    let channel = event
        .channel
        .as_ref()
        .map(|channel| channel.id.clone())
        .or_else(|| container.channel_id.clone())?;
    let user = event.user.as_ref()?;
    let action = event.actions.as_ref()?.first()?;
    let (button, values) = match action.action_type.0.as_str() {
        "button" => match parse_callback_key(&action.action_id.0) {
            Some(key) if key.option == OptionRef::Done => {
                match selection(event.state.as_ref(), &action.action_id.0) {
                    Some(Some(values)) => (Some(key), Some(values)),
                    // A selection that is not askbridge's option indices.
                    Some(None) => (None, None),
                    None => (Some(key), None),
                }
            }
            key => (key, None),
        },
        // A tick or a menu choice: kept in the message's state until
        // Submit is pressed.
        "checkboxes" | "multi_static_select" => return None,
        // Not an element askbridge draws.
        _ => (None, None),
    };
    Some(Press {
        trigger_id: Some(event.trigger_id.clone()),
        response_url: event.response_url.clone(),
        button,
        values,
        channel,
        message_ts: Some(container.message_ts.clone()),
        thread_ts: event
            .message
            .as_ref()
            .and_then(|message| message.origin.thread_ts.clone())
            .filter(|thread| *thread != container.message_ts),
        from: Sender::of_user(user),
    })
}

/// The selection under `action_id` in a message's state: `None` when there
/// is none, `Some(None)` when its values are not option indices.
fn selection(state: Option<&SlackActionState>, action_id: &str) -> Option<Option<Vec<usize>>> {
    let value = state?
        .values
        .values()
        .flat_map(|actions| actions.iter())
        .find(|(id, value)| id.0 == action_id && value.selected_options.is_some())
        .map(|(_, value)| value)?;
    let options = value.selected_options.as_deref().unwrap_or_default();
    Some(
        options
            .iter()
            .map(|option| index(&option.value))
            .collect::<Option<Vec<usize>>>(),
    )
}

fn view_submission(event: &SlackInteractionViewSubmissionEvent) -> Submit {
    let (callback_id, private_metadata) = match &event.view.view {
        SlackView::Modal(modal) => (modal.callback_id.as_ref(), modal.private_metadata.as_ref()),
        SlackView::Home(home) => (home.callback_id.as_ref(), home.private_metadata.as_ref()),
    };
    let values = event
        .view
        .state_params
        .state
        .as_ref()
        .map(|state| &state.values);
    let answer = values.and_then(|values| {
        values
            .iter()
            .find(|(block, _)| block.0 == ANSWER_BLOCK_ID)
            .and_then(|(_, actions)| actions.iter().find(|(id, _)| id.0 == ANSWER_ACTION_ID))
            .or_else(|| {
                // Another modal's layout: its first text input.
                values
                    .values()
                    .flat_map(|actions| actions.iter())
                    .find(|(_, value)| value.action_type.0 == "plain_text_input")
            })
            .and_then(|(_, value)| value.value.clone())
    });
    Submit {
        key: callback_id.and_then(|id| parse_callback_key(&id.0)),
        text: answer.unwrap_or_default(),
        private_metadata: private_metadata.cloned().unwrap_or_default(),
        from: Sender::of_user(&event.user),
    }
}

/// An option value askbridge drew: a small decimal index.
fn index(value: &str) -> Option<usize> {
    let digits = !value.is_empty() && value.len() <= 4 && value.bytes().all(|b| b.is_ascii_digit());
    digits.then(|| value.parse().ok()).flatten()
}

fn named(name: Option<&str>) -> Option<String> {
    name.map(str::trim)
        .filter(|n| !n.is_empty())
        .map(str::to_owned)
}

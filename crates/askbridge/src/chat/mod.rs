//! What every chat channel does with a person's input, whatever the
//! platform: who is admitted, which ask a typed message answers, and what
//! to tell the person afterwards. The [`driver`] applies these rules for
//! every platform; each platform crate reports what people do in the
//! core's one vocabulary ([`askbridge_core::inbound`]), and the platform
//! modules only hand it over and draw the results.
//!
//! - A typed message that replies to the first message of a thread asks
//!   share ([`thread`]) answers the newest pending ask of that thread there
//!   that the sender may answer. One that replies to another of
//!   askbridge's messages answers that message's ask (a reply to an "Other…" prompt answers that one
//!   question). Otherwise it answers the newest pending ask in the
//!   conversation that the sender may answer and, unless the message is
//!   a reply, that was posted before the message was sent (not yet posted:
//!   not seen; posted after: by the platform's message ids, where they
//!   tell), so a late "3" meant for an ask that just ended does not answer
//!   the next one;
//!   chatter in a conversation with nothing for the sender is left alone.
//! - `/askbridge` ([`askbridge_core::inbound::is_where_command`]) is not
//!   an answer: it is answered with the exact targets for the place, for
//!   the sender alone and for anyone there.
//! - Who may answer is the core's rule
//!   ([`Ask::may_answer`], which the lifecycle applies to every input):
//!   the target's user, else whoever the channel's [`AllowList`] admits;
//!   for an approval, only the person its place names.

use askbridge_core::failure::PlatformFailure;
use askbridge_core::lifecycle::{Input, Rejection, Step, UnknownItems};
use askbridge_core::model::{Ask, ChannelKind, Place, Target};
use askbridge_core::outcome::Via;
use askbridge_core::render::{self, Locale};
use serde::{Deserialize, Serialize};

pub use askbridge_core::inbound::Person;

use crate::bridge::{AskView, Bridge, BridgeError, MessageRef};

pub mod driver;
pub mod inbox;
pub mod kept;
pub mod names;
pub mod reach;
pub mod serial;
pub mod thread;

pub use reach::{at_place, place_of, place_states};

/// Who a channel admits to answer asks that name no user: user ids,
/// `@usernames` or role ids. Empty admits everyone in the conversation
/// ([`AllowList::new`]), or nobody ([`AllowList::only`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AllowList {
    entries: Vec<String>,
    /// Whether an empty list admits everyone.
    open_when_empty: bool,
}

impl Default for AllowList {
    /// Admits everyone.
    fn default() -> AllowList {
        AllowList::new(std::iter::empty())
    }
}

impl AllowList {
    /// A list of user ids, `@usernames` (case-insensitive) and role ids;
    /// empty, it admits everyone.
    pub fn new(entries: impl IntoIterator<Item = String>) -> AllowList {
        AllowList {
            entries: Self::read(entries),
            open_when_empty: true,
        }
    }

    /// A list that admits only the people it names; empty, it admits
    /// nobody (email's `allowed_senders`: who may answer for others).
    pub fn only(entries: impl IntoIterator<Item = String>) -> AllowList {
        AllowList {
            entries: Self::read(entries),
            open_when_empty: false,
        }
    }

    fn read(entries: impl IntoIterator<Item = String>) -> Vec<String> {
        entries
            .into_iter()
            .map(|entry| entry.trim().to_lowercase())
            .filter(|entry| !entry.is_empty())
            .collect()
    }

    /// Whether the list admits this person.
    pub fn admits(&self, person: &Person) -> bool {
        (self.open_when_empty && self.entries.is_empty())
            || self
                .entries
                .iter()
                .any(|entry| match entry.strip_prefix('@') {
                    Some(name) => person
                        .username
                        .as_deref()
                        .is_some_and(|username| username.eq_ignore_ascii_case(name)),
                    None => *entry == person.responder.user_id || person.roles.contains(entry),
                })
    }
}

/// What a channel keeps with each message it posts
/// ([`MessageRef::extra`]), as JSON.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Posted {
    /// The message that carries the ask's controls and is edited when it
    /// ends, with the text it shows now.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shown: Option<String>,
    /// The rich-mode step shown (a question index).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub step: Option<usize>,
    /// Options toggled on the shown step, not yet submitted.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub selected: Vec<usize>,
    /// A prompt for the person's own words: a reply to it answers this
    /// question.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub own_words_for: Option<usize>,
    /// The ask's place the message is in ([`AskView::places`]), when not
    /// the first.
    #[serde(default, skip_serializing_if = "is_first")]
    pub place: usize,
    /// A reminder of the ask: its number (from 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reminder: Option<u32>,
    /// The first message of the thread the message is in
    /// ([`thread`]), when the ask has one here.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thread: Option<String>,
}

#[allow(clippy::trivially_copy_pass_by_ref)] // serde's skip_serializing_if passes a reference
fn is_first(place: &usize) -> bool {
    *place == 0
}

impl Posted {
    /// Reads a message ref's `extra`; an unreadable or missing one is empty.
    pub fn of(message: &MessageRef) -> Posted {
        message
            .extra
            .as_deref()
            .and_then(|extra| serde_json::from_str(extra).ok())
            .unwrap_or_default()
    }

    /// As `extra`.
    pub fn to_extra(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }
}

/// The ask a typed message answers, and the question when it replies to an
/// own-words prompt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Addressed {
    /// The ask.
    pub ask_id: String,
    /// The one question it answers, if it replies to an own-words prompt.
    pub question: Option<usize>,
    /// The ask's place the message was sent in, when known.
    pub place: Option<Place>,
}

/// Which ask a typed message answers (see the module docs), or `None`.
/// `conversation` is the channel's notation of `place` for message refs;
/// `sent_before` says whether the typed message was sent before a posted
/// message (by its id; `false` where the platform's ids do not tell).
#[allow(clippy::too_many_arguments)]
pub async fn address(
    bridge: &Bridge,
    channel: ChannelKind,
    place: &Place,
    conversation: &str,
    reply_to: Option<&str>,
    person: &Person,
    allow: &AllowList,
    sent_before: impl Fn(&str) -> bool,
) -> Result<Option<Addressed>, BridgeError> {
    if let Some(reply_to) = reply_to
        && let Some(addressed) =
            thread::addressed_in_thread(bridge, channel, conversation, reply_to, person, allow)
                .await?
    {
        return Ok(addressed);
    }
    if let Some(reply_to) = reply_to
        && let Some(message) = bridge
            .find_message_ref_posted(channel, conversation, reply_to)
            .await?
    {
        let posted = Posted::of(&message);
        let place = match bridge.get(&message.ask_id).await {
            Ok(view) => view.place(posted.place).map(|target| target.place.clone()),
            Err(BridgeError::NotFound(_)) => None,
            Err(error) => return Err(error),
        };
        return Ok(Some(Addressed {
            question: posted.own_words_for,
            ask_id: message.ask_id,
            place,
        }));
    }
    for (ask_id, target) in bridge.pending_at(place).await? {
        if !may_answer(&target, person, allow) {
            continue;
        }
        // Not posted here yet (an escalation step not yet due, say), or
        // sent before every message of the ask here: not meant for it. (A
        // reply to a message not on record, perhaps the ask's own from
        // before a crash, is not judged so.)
        if reply_to.is_none() {
            let refs = bridge.message_refs_posted(&ask_id).await?;
            // The ask's messages in this place: in this conversation, or
            // recorded for this place (a direct chat is opened under
            // another name than its messages come from on some platforms).
            let view = match bridge.get(&ask_id).await {
                Ok(view) => view,
                Err(BridgeError::NotFound(_)) => continue,
                Err(error) => return Err(error),
            };
            if !view.ask.takes_unthreaded_reply(channel) {
                continue;
            }
            let here = view.places().position(|place| *place == target);
            let mut posted_here = refs
                .iter()
                .filter(|message| {
                    message.channel == channel
                        && (message.conversation == conversation
                            || Some(Posted::of(message).place) == here)
                })
                .peekable();
            if posted_here.peek().is_none() {
                tracing::debug!(ask_id = %ask_id, conversation, "a typed message is not for an ask not posted here yet");
                continue;
            }
            if posted_here.all(|message| sent_before(&message.message_id)) {
                tracing::debug!(ask_id = %ask_id, conversation, "a typed message sent before the ask was posted here is not for it");
                continue;
            }
        }
        return Ok(Some(Addressed {
            ask_id,
            question: None,
            place: Some(target.place),
        }));
    }
    Ok(None)
}

/// Whether `person` may answer an ask posted to `target`, as far as the
/// target says ([`Target::may_answer`] with this channel's allow-list):
/// which of the asks here a typed message may be meant for. Whether it is
/// taken is the core's one rule, [`Ask::may_answer`], in the lifecycle.
pub fn may_answer(target: &Target, person: &Person, allow: &AllowList) -> bool {
    target.may_answer(&person.responder, allow.admits(person))
}

/// The input a typed message makes: the person's own words for one
/// question (a reply to its prompt), or a reply to the whole ask.
pub fn typed_input(text: &str, addressed: &Addressed, person: &Person, allow: &AllowList) -> Input {
    let mut from = person.responder.clone();
    from.place.clone_from(&addressed.place);
    let admitted = allow.admits(person);
    match addressed.question {
        Some(question) => Input::Other {
            from,
            admitted,
            question,
            text: text.to_owned(),
            via: Via::Modal,
        },
        None => Input::Reply {
            from,
            admitted,
            text: text.to_owned(),
            unknown_items: UnknownItems::AskBack,
        },
    }
}

/// Why `person` may not act on the ask now (it has ended, or it is not
/// theirs), for actions the bridge does not see (toggling options, asking
/// for own words); `None` when they may.
pub fn refusal(view: &AskView, person: &Person, allow: &AllowList) -> Option<Rejection> {
    if !view.state.is_pending() {
        Some(Rejection::AlreadyEnded(view.state.clone()))
    } else if !view.ask.may_answer(&person.responder, allow.admits(person)) {
        Some(Rejection::NotForYou)
    } else {
        None
    }
}

/// Options picked for one question: one for a button, the toggled
/// selection for Done, a select menu's choice.
pub fn pick(
    person: &Person,
    allow: &AllowList,
    question: usize,
    options: Vec<usize>,
    via: Via,
) -> Input {
    Input::Pick {
        from: person.responder.clone(),
        admitted: allow.admits(person),
        question,
        options,
        via,
    }
}

/// Leaves an optional question unanswered ("Skip question" in a stepper).
pub fn pass(ask: &Ask, person: &Person, allow: &AllowList, question: usize) -> Input {
    let id = ask
        .questions
        .get(question)
        .map(|q| q.id.clone())
        .unwrap_or_default();
    Input::Answers {
        from: person.responder.clone(),
        admitted: allow.admits(person),
        answers: vec![(id, Vec::new())],
        via: Via::Button,
    }
}

/// What to tell someone after their typed message: a clarifying question
/// (items of a list that named no option, a reply that fitted several
/// options), the questions still open, why nothing changed; `None` when the
/// closing edit (or the next step) says it all.
pub fn after_typed(step: &Step, ask: &Ask, target: &Target, locale: Locale) -> Option<String> {
    match step {
        Step::Finished(_) => None,
        Step::Progress(progress) => {
            let mut questions: Vec<String> = progress
                .unknown
                .iter()
                .map(|unknown| {
                    render::unknown_items_prompt(ask, unknown.question, &unknown.items, locale)
                })
                .filter(|prompt| !prompt.is_empty())
                .collect();
            if !progress.clarify.is_empty() {
                questions.push(render::clarify_prompt(ask, &progress.clarify, locale));
            }
            if !questions.is_empty() {
                Some(questions.join("\n"))
            } else if progress.answered.is_empty() {
                Some(render::not_understood(ask, locale))
            } else if !progress.still_open.is_empty() && ask.questions.len() > 1 {
                Some(render::reask_prompt(ask, &progress.still_open, locale))
            } else {
                None
            }
        }
        Step::Rejected(rejection) => Some(rejected(rejection, target, locale)),
    }
}

/// The short notice after a button press ("Answer submitted", "This
/// question is for …").
pub fn after_press(step: &Step, target: &Target, locale: Locale) -> String {
    match step {
        Step::Finished(_) | Step::Progress(_) => locale.strings().submitted.to_owned(),
        Step::Rejected(rejection) => rejected(rejection, target, locale),
    }
}

fn rejected(rejection: &Rejection, target: &Target, locale: Locale) -> String {
    render::refusal(rejection, target.user.as_deref(), locale)
}

/// Runs `call` — an answer to a press that the platform only accepts for a
/// while (`within` from now) — again after a transient failure or a rate
/// limit, backing off from 50 ms, while the retry still fits in time; a
/// refusal is returned at once. A press is stored before it is answered,
/// so this only decides whether the person sees the answer.
pub async fn answer_within<F, Fut>(
    within: std::time::Duration,
    mut call: F,
) -> Result<(), PlatformFailure>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<(), PlatformFailure>>,
{
    use std::time::Duration;
    let deadline = tokio::time::Instant::now() + within;
    let mut backoff = Duration::from_millis(50);
    loop {
        let failure = match call().await {
            Ok(()) => return Ok(()),
            Err(PlatformFailure::Permanent(reason)) => {
                return Err(PlatformFailure::Permanent(reason));
            }
            Err(failure) => failure,
        };
        let wait = match failure {
            PlatformFailure::RetryAfter(secs) => Duration::from_secs(secs),
            _ => backoff,
        };
        if tokio::time::Instant::now() + wait >= deadline {
            return Err(failure);
        }
        tokio::time::sleep(wait).await;
        backoff = (backoff * 2).min(Duration::from_secs(1));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use askbridge_core::lifecycle::State;
    use askbridge_core::model::Responder;

    fn person(id: &str, username: Option<&str>) -> Person {
        Person {
            responder: Responder {
                channel: ChannelKind::Telegram,
                user_id: id.to_owned(),
                name: None,
                place: None,
            },
            username: username.map(str::to_owned),
            roles: vec!["900".to_owned()],
        }
    }

    #[test]
    fn chat_a_press_on_an_ended_ask_says_how_it_ended() {
        use askbridge_core::model::Timestamp;
        let target = Target::parse("telegram:1").expect("a target");
        let by = person("7", None).responder;
        let at = Timestamp::from_secs(1_800_000_000);
        for (state, en, th) in [
            (
                State::Answered { by: by.clone(), at },
                "This question was already answered.",
                "คำถามนี้มีคนตอบแล้ว",
            ),
            (
                State::Skipped { by, at },
                "This question was already answered.",
                "คำถามนี้มีคนตอบแล้ว",
            ),
            (
                State::TimedOut,
                "This question has expired.",
                "คำถามนี้หมดเวลาแล้ว",
            ),
            (
                State::Cancelled { at, in_host: false },
                "This question was cancelled.",
                "คำถามนี้ถูกยกเลิกแล้ว",
            ),
        ] {
            let step = Step::Rejected(Rejection::AlreadyEnded(state.clone()));
            assert_eq!(after_press(&step, &target, Locale::En), en, "{state:?}");
            assert_eq!(after_press(&step, &target, Locale::Th), th, "{state:?}");
        }
    }

    #[test]
    fn chat_allow_list_admits_ids_and_usernames() {
        let open = AllowList::default();
        assert!(open.admits(&person("1", None)));
        let list = AllowList::new(["42".to_owned(), "@Alice".to_owned()]);
        assert!(list.admits(&person("42", None)));
        assert!(list.admits(&person("7", Some("alice"))));
        assert!(!list.admits(&person("7", Some("bob"))));
        assert!(!list.admits(&person("4", None)));
        // Only those named: empty, nobody.
        assert!(!AllowList::only(std::iter::empty()).admits(&person("1", None)));
        assert!(AllowList::only(["42".to_owned()]).admits(&person("42", None)));
        let roles = AllowList::new(["900".to_owned()]);
        assert!(roles.admits(&person("5", None)));
    }

    #[test]
    fn chat_named_user_beats_the_allow_list() {
        let target = Target::parse("telegram:-100@42").expect("target");
        let list = AllowList::new(["7".to_owned()]);
        assert!(may_answer(&target, &person("42", None), &list));
        assert!(!may_answer(&target, &person("7", None), &list));
        let anyone = Target::parse("telegram:-100").expect("target");
        assert!(may_answer(&anyone, &person("7", None), &list));
        assert!(!may_answer(&anyone, &person("8", None), &list));
    }

    #[test]
    fn chat_posted_reads_back_and_tolerates_garbage() {
        let posted = Posted {
            shown: Some("Deploy?".to_owned()),
            step: Some(1),
            selected: vec![0, 2],
            own_words_for: None,
            place: 0,
            reminder: Some(1),
            thread: Some("10".to_owned()),
        };
        let message = MessageRef {
            ask_id: "ask_1".to_owned(),
            channel: ChannelKind::Telegram,
            conversation: "1".to_owned(),
            message_id: "2".to_owned(),
            extra: Some(posted.to_extra()),
        };
        assert_eq!(Posted::of(&message), posted);
        let garbage = MessageRef {
            extra: Some("{not json".to_owned()),
            ..message
        };
        assert_eq!(Posted::of(&garbage), Posted::default());
    }
}

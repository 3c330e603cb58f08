//! What people do in a chat, in the one vocabulary every platform crate
//! reports it in and the daemon's chat driver reads: a [`Press`] of a
//! button (or a choice in a menu), a [`Submission`] of their own words from
//! a form or modal, a [`Typed`] message, askbridge's registered
//! [`Command`] — each with who did it ([`Person`]) and where.
//!
//! Pure data over the platform's own types: `C` is its conversation, `M`
//! its message id and `R` how a press or submission is answered (a
//! callback query id, an interaction, a channel to the HTTP response).
//! Which ask it is about, who may answer and what the person is told are
//! not decided here: the driver decides them once for every platform.
//!
//! Platforms deliver again what they think was lost (a retry, a
//! redelivered envelope); [`Deliveries`] remembers the latest deliveries'
//! keys so each is acted on once, and what is still being handled, so a
//! delivery is acknowledged only once what it carries is recorded
//! ([`Handled`]).

use std::collections::{HashSet, VecDeque};

use crate::model::{Place, Responder};
use crate::render::CallbackRef;

/// Someone in a chat.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Person {
    /// Their user id and display name.
    pub responder: Responder,
    /// Their `@username`, without the `@`, when the platform has one.
    pub username: Option<String>,
    /// The ids of their roles where they are (Discord server roles).
    pub roles: Vec<String>,
}

impl Person {
    /// Someone known by their id and name alone.
    pub fn of(responder: Responder) -> Person {
        Person {
            responder,
            username: None,
            roles: Vec::new(),
        }
    }
}

/// A button press (or a select menu choice).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Press<C, M, R> {
    /// How to answer it.
    pub reply: R,
    /// The button's payload, when it is one of askbridge's.
    pub button: Option<CallbackRef>,
    /// The options chosen in a select menu (whose key is the question's
    /// `Done`); `None` for a button.
    pub chosen: Option<Vec<usize>>,
    /// Where the pressed message is, when the platform says.
    pub chat: Option<C>,
    /// The pressed message, when the platform says.
    pub message: Option<M>,
    /// Who pressed.
    pub from: Person,
}

/// The person's own words from a form or modal that "Other…" / "Answer…"
/// opened (or that the message carries).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Submission<C, R> {
    /// How to answer it.
    pub reply: R,
    /// The key the form was opened with, when it is one of askbridge's.
    pub key: Option<CallbackRef>,
    /// Where it was submitted.
    pub chat: C,
    /// The text.
    pub text: String,
    /// Who submitted it.
    pub from: Person,
}

/// A typed message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Typed<C, M> {
    /// The conversation it was sent in.
    pub chat: C,
    /// The place asks for this conversation are posted to (the channel,
    /// the topic; a direct message's user).
    pub place: Place,
    /// Its id.
    pub message: M,
    /// The message it replies to, if any.
    pub reply_to: Option<M>,
    /// The text, with the platform's markup undone.
    pub text: String,
    /// Who sent it.
    pub from: Person,
}

/// askbridge's own command asking how to ask here, given as one the
/// platform registers (a Discord slash command): answered to the person
/// alone.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Command<C, R> {
    /// How to answer it.
    pub reply: R,
    /// Where it was given.
    pub chat: C,
    /// The place asks for this conversation are posted to.
    pub place: Place,
    /// Who gave it.
    pub from: Person,
}

/// Whether a typed message is askbridge's own command asking how to ask
/// here: `/askbridge`, `/askbridge where` or `askbridge where`, in any
/// case, with Telegram's `@botname` after the command allowed. Anything
/// more is not the command (it may be an answer).
pub fn is_where_command(text: &str) -> bool {
    let words: Vec<String> = text.split_whitespace().map(str::to_lowercase).collect();
    let slash_command = |word: &str| {
        word.strip_prefix('/')
            .map(|name| name.split_once('@').map_or(name, |(name, _bot)| name))
            == Some("askbridge")
    };
    match words.as_slice() {
        [first] => slash_command(first),
        [first, second] => second == "where" && (slash_command(first) || first == "askbridge"),
        _ => false,
    }
}

/// One thing a person did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Inbound<C, M, R> {
    /// A button or menu.
    Press(Press<C, M, R>),
    /// Their own words from a form.
    Submission(Submission<C, R>),
    /// A message.
    Typed(Typed<C, M>),
    /// The platform's registered command for askbridge.
    Command(Command<C, R>),
}

impl<C, M, R> Inbound<C, M, R> {
    /// Who did it.
    pub fn person(&self) -> &Person {
        match self {
            Inbound::Press(press) => &press.from,
            Inbound::Submission(submission) => &submission.from,
            Inbound::Typed(typed) => &typed.from,
            Inbound::Command(command) => &command.from,
        }
    }

    /// Where it happened, when the platform said.
    pub fn chat(&self) -> Option<&C> {
        match self {
            Inbound::Press(press) => press.chat.as_ref(),
            Inbound::Submission(submission) => Some(&submission.chat),
            Inbound::Typed(typed) => Some(&typed.chat),
            Inbound::Command(command) => Some(&command.chat),
        }
    }

    /// Who did it (to change).
    pub fn person_mut(&mut self) -> &mut Person {
        match self {
            Inbound::Press(press) => &mut press.from,
            Inbound::Submission(submission) => &mut submission.from,
            Inbound::Typed(typed) => &mut typed.from,
            Inbound::Command(command) => &mut command.from,
        }
    }

    /// The same, answered through `answer(reply)` (a typed message has
    /// nothing to answer).
    pub fn map_reply<S>(self, answer: impl FnOnce(R) -> S) -> Inbound<C, M, S> {
        match self {
            Inbound::Press(press) => Inbound::Press(Press {
                reply: answer(press.reply),
                button: press.button,
                chosen: press.chosen,
                chat: press.chat,
                message: press.message,
                from: press.from,
            }),
            Inbound::Submission(submission) => Inbound::Submission(Submission {
                reply: answer(submission.reply),
                key: submission.key,
                chat: submission.chat,
                text: submission.text,
                from: submission.from,
            }),
            Inbound::Typed(typed) => Inbound::Typed(typed),
            Inbound::Command(command) => Inbound::Command(Command {
                reply: answer(command.reply),
                chat: command.chat,
                place: command.place,
                from: command.from,
            }),
        }
    }
}

/// The keys of the latest deliveries, at most a given number: a delivery
/// whose key is among them was acted on already.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Recent {
    capacity: usize,
    order: VecDeque<String>,
    keys: HashSet<String>,
}

impl Recent {
    /// Remembers at most `capacity` keys (at least one), forgetting the
    /// oldest first.
    pub fn new(capacity: usize) -> Recent {
        Recent {
            capacity: capacity.max(1),
            order: VecDeque::new(),
            keys: HashSet::new(),
        }
    }

    /// Remembers `key`; `false` if it was remembered already.
    pub fn insert(&mut self, key: &str) -> bool {
        if self.keys.contains(key) {
            return false;
        }
        if self.order.len() >= self.capacity
            && let Some(old) = self.order.pop_front()
        {
            self.keys.remove(&old);
        }
        self.order.push_back(key.to_owned());
        self.keys.insert(key.to_owned());
        true
    }

    /// How many keys are remembered.
    pub fn len(&self) -> usize {
        self.order.len()
    }

    /// Whether none is.
    pub fn is_empty(&self) -> bool {
        self.order.is_empty()
    }

    /// Whether `key` is remembered.
    pub fn contains(&self, key: &str) -> bool {
        self.keys.contains(key)
    }
}

/// Whether an inbound event was taken.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[must_use]
pub enum Handled {
    /// Recorded, or nothing to record (refused, not ours, unrecoverable):
    /// acknowledge it.
    Done,
    /// Not recorded (the database failed for now, or the handling is not
    /// finished): a platform that can offer the event again (Telegram's
    /// `getUpdates`, a webhook's retry, an unacknowledged envelope) should,
    /// rather than hear it arrived.
    Retry,
}

/// What a delivery is, by its key ([`Deliveries::begin`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Delivery {
    /// Not seen, or seen and not taken: handle it (it is now in flight).
    New,
    /// Taken already: acknowledge it, do nothing.
    Taken,
    /// Still being handled: do not acknowledge it yet (the platform offers
    /// it again later, when the first handling has settled).
    InFlight,
}

/// The deliveries of one platform connection: the latest ones taken (at
/// most a given number) and the ones being handled. A delivery that was
/// not taken ([`Handled::Retry`]) is forgotten, so its redelivery is
/// handled afresh.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Deliveries {
    taken: Recent,
    in_flight: HashSet<String>,
}

impl Deliveries {
    /// Remembers at most `capacity` taken keys.
    pub fn new(capacity: usize) -> Deliveries {
        Deliveries {
            taken: Recent::new(capacity),
            in_flight: HashSet::new(),
        }
    }

    /// What delivery `key` is; a new one is in flight from now until
    /// [`Deliveries::settle`].
    pub fn begin(&mut self, key: &str) -> Delivery {
        if self.taken.contains(key) {
            Delivery::Taken
        } else if !self.in_flight.insert(key.to_owned()) {
            Delivery::InFlight
        } else {
            Delivery::New
        }
    }

    /// Records how the handling of `key` ended.
    pub fn settle(&mut self, key: &str, handled: Handled) {
        self.in_flight.remove(key);
        if handled == Handled::Done {
            self.taken.insert(key);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inbound_where_command_is_askbridge_alone_or_with_where() {
        let table = [
            ("/askbridge", true),
            ("/AskBridge", true),
            ("  /askbridge  ", true),
            ("/askbridge@release_bot", true),
            ("/askbridge where", true),
            ("/askbridge@release_bot WHERE", true),
            ("askbridge where", true),
            ("askbridge", false),
            ("where", false),
            ("/askbridge now please", false),
            ("/askbridgex", false),
            ("/help", false),
            ("", false),
        ];
        for (text, expected) in table {
            assert_eq!(is_where_command(text), expected, "{text:?}");
        }
    }

    #[test]
    fn inbound_recent_keys_are_taken_once_and_the_oldest_forgotten() {
        let mut recent = Recent::new(3);
        assert!(recent.insert("a"));
        assert!(!recent.insert("a"));
        for key in ["b", "c", "d"] {
            assert!(recent.insert(key));
        }
        assert_eq!(recent.len(), 3);
        assert!(recent.insert("a"), "the oldest was forgotten");
        assert!(!recent.insert("d"));
    }

    #[test]
    fn inbound_a_delivery_is_taken_once_and_offered_again_until_it_is() {
        use Delivery::*;
        let mut deliveries = Deliveries::new(2);
        // (key, settle the first handling with, what a redelivery is)
        let table = [
            ("a", None, InFlight),
            ("b", Some(Handled::Done), Taken),
            ("c", Some(Handled::Retry), New),
        ];
        for (key, settled, again) in table {
            assert_eq!(deliveries.begin(key), New, "{key}");
            if let Some(handled) = settled {
                deliveries.settle(key, handled);
            }
            assert_eq!(deliveries.begin(key), again, "{key}");
        }
        deliveries.settle("a", Handled::Done);
        assert_eq!(deliveries.begin("a"), Taken);
        deliveries.settle("c", Handled::Done);
        assert_eq!(
            deliveries.begin("b"),
            New,
            "the oldest taken key was forgotten"
        );
    }
}

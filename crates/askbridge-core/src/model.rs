//! The question model: what an agent asks, after normalisation,
//! where it is asked and who may answer, and the two values every later
//! module speaks of: who answered ([`Responder`]) and when ([`Timestamp`]).
//!
//! The first module in the flow (model → resolve → normalize → outcome →
//! lifecycle → render): it imports from none of the others.
//!
//! These types are valid by construction only when built by
//! [`crate::normalize`]; code that builds them by hand (tests, storage) is
//! trusted to respect the limits below.

use std::fmt;

/// Hard and default limits of an ask (docs/ask.md, "Limits").
pub mod limits {
    /// Questions in one ask, for the strict dialects.
    pub const MAX_QUESTIONS_STRICT: usize = 4;
    /// Questions in one ask, hard limit for the lenient dialects.
    pub const MAX_QUESTIONS: usize = 12;
    /// Options of a choice question (inclusive).
    pub const MIN_OPTIONS: usize = 2;
    /// Options of a choice question, hard limit.
    pub const MAX_OPTIONS: usize = 25;
    /// Characters of an option label, hard limit.
    pub const MAX_LABEL_CHARS: usize = 64;
    /// Characters of a question text, hard limit.
    pub const MAX_QUESTION_CHARS: usize = 2_000;
    /// Characters of a header chip; longer headers are cut.
    pub const MAX_HEADER_CHARS: usize = 12;
    /// Timeout used when the ask names none.
    pub const DEFAULT_TIMEOUT_SECONDS: u32 = 900;
    /// Shortest timeout; shorter ones are clamped up.
    pub const MIN_TIMEOUT_SECONDS: u32 = 30;
    /// Longest timeout; longer ones are clamped down.
    pub const MAX_TIMEOUT_SECONDS: u32 = 3_600;
    /// Places one ask is posted to at once (`to` as a list).
    pub const MAX_PLACES: usize = 8;
    /// Shortest wait before a reminder, and between reminders.
    pub const MIN_REMIND_SECONDS: u32 = 30;
    /// Most reminders of one ask, when `remindEverySeconds` repeats them.
    pub const MAX_REMINDERS: u32 = 3;
    /// Characters of an ask's context block, hard limit.
    pub const MAX_CONTEXT_CHARS: usize = 100_000;
    /// Characters of a context block's language name.
    pub const MAX_LANGUAGE_CHARS: usize = 32;
    /// Characters of a thread's key.
    pub const MAX_THREAD_KEY_CHARS: usize = 200;
    /// Characters of a thread's title.
    pub const MAX_THREAD_TITLE_CHARS: usize = 300;
    /// Characters of a notice's text.
    pub const MAX_NOTICE_CHARS: usize = 4_000;
    /// Characters of a `callbackUrl`.
    pub const MAX_CALLBACK_URL_CHARS: usize = 2_048;
}

/// One request from an agent: 1–12 questions for one person.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ask {
    /// Short title shown above the questions ("Release 2.4").
    pub title: Option<String>,
    /// A preformatted block shown above the questions: a command, a diff,
    /// a plan.
    pub context: Option<Context>,
    /// The thread it is posted in with the other asks of the same key (a
    /// coding agent's session), where the platform has threads.
    pub thread: Option<Thread>,
    /// The questions, in the order they are shown; ids are unique.
    pub questions: Vec<Question>,
    /// Seconds the ask stays open, already clamped to 30–3600.
    pub timeout_seconds: u32,
    /// Where to post it; `None` means the configured default target.
    pub target: Option<Target>,
    /// Further places it is posted to at the same time (`to` as a list,
    /// after its first): the first answer in any place wins. Empty unless
    /// `target` is set; no place appears twice.
    pub also: Vec<Target>,
    /// Places it is passed on to when still open a while after it was
    /// created, earliest first; every step is before the deadline, and no
    /// place appears twice among all of them.
    pub escalate: Vec<Escalation>,
    /// When to remind the person while nobody answers; `None`: never.
    pub remind: Option<Reminders>,
    /// Where the agent is told how the ask goes (a webhook); `None`: it
    /// asks or waits itself.
    pub callback: Option<Callback>,
    /// An approval (`"approval": true`): it decides what runs on someone's
    /// machine, so only the one person each place names, as the platform
    /// reports them ([`Target::person`]), answers it — not another member
    /// of a room, not the HTTP API, not the agent host's dialog. Otherwise
    /// whoever a place admits answers.
    pub approval: bool,
    /// What the ask did not say and the configured defaults fill in when
    /// it is created ([`Ask::with_defaults`]).
    pub unset: Unset,
}

/// A preformatted block shown with an ask (a command to approve, a diff,
/// a plan), drawn as the platform's code block. It is kept as given:
/// values that look like credentials are masked only where it is shown.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Context {
    /// The text, at most [`limits::MAX_CONTEXT_CHARS`] characters.
    pub text: String,
    /// Its language, for highlighting where the platform does (`diff`,
    /// `bash`, `markdown`).
    pub language: Option<String>,
}

/// A thread shared by the asks of one key in each place they are posted
/// to: where the platform has threads (Slack, Feishu, a reply chain on
/// Telegram and Discord), the first ask of the key posts `title` as the thread's first
/// message and every ask of the key goes under it; elsewhere the asks are
/// posted as they would be without it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Thread {
    /// What makes asks share the thread (`claude-code:<session id>`), at
    /// most [`limits::MAX_THREAD_KEY_CHARS`] characters.
    pub key: String,
    /// The thread's first message ("Claude Code · api-server · session
    /// 1a2b3c4d"), at most [`limits::MAX_THREAD_TITLE_CHARS`] characters.
    pub title: String,
}

/// Which channels tell one person from another only by the daemon's
/// settings: where an approval ([`Ask::approval`]) may be posted
/// beyond the chat platforms, which report who pressed or wrote.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Verified {
    /// The web page and the HTTP API, whose user is whoever holds the
    /// daemon's API token: `true` only when it has one.
    pub web: bool,
    /// Email, whose sender is only who the `From:` says unless the
    /// receiving server authenticated it: `true` only with
    /// `require_authentication`.
    pub email: bool,
}

/// A webhook the agent is told of the ask at: always when the ask ends,
/// and at the further [`CallbackEvent`]s it asked for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Callback {
    /// An absolute `http://` or `https://` URL, at most
    /// [`limits::MAX_CALLBACK_URL_CHARS`] characters. Whether askbridge
    /// may call it (its host, its addresses) is the daemon's to decide.
    pub url: String,
    /// The events sent there, in [`CallbackEvent`]'s order, each once;
    /// always [`CallbackEvent::Ended`].
    pub events: Vec<CallbackEvent>,
}

/// What an ask's webhook is told of.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum CallbackEvent {
    /// The ask was posted (a place took it).
    Posted,
    /// A reminder was sent.
    Reminded,
    /// It was passed on to an escalation step's place.
    Escalated,
    /// It ended: answered, skipped, timed out, cancelled or not delivered.
    Ended,
}

impl CallbackEvent {
    /// Every event, in order.
    pub const ALL: [CallbackEvent; 4] = [
        CallbackEvent::Posted,
        CallbackEvent::Reminded,
        CallbackEvent::Escalated,
        CallbackEvent::Ended,
    ];

    /// Its name on the wire: `ask.posted`, `ask.reminded`,
    /// `ask.escalated`, `ask.ended`.
    pub fn as_str(self) -> &'static str {
        match self {
            CallbackEvent::Posted => "ask.posted",
            CallbackEvent::Reminded => "ask.reminded",
            CallbackEvent::Escalated => "ask.escalated",
            CallbackEvent::Ended => "ask.ended",
        }
    }

    /// The event named `name`.
    pub fn parse(name: &str) -> Option<CallbackEvent> {
        CallbackEvent::ALL
            .into_iter()
            .find(|event| event.as_str() == name)
    }
}

impl Ask {
    /// Whether the ask's webhook is told of `event`.
    pub fn calls_back(&self, event: CallbackEvent) -> bool {
        self.callback
            .as_ref()
            .is_some_and(|callback| callback.events.contains(&event))
    }
}

/// A message for a person that asks nothing ("Claude Code finished in
/// api-server"): posted where asks go, in a thread where it has one, and
/// never answered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Notice {
    /// What it says, at most [`limits::MAX_NOTICE_CHARS`] characters.
    pub text: String,
    /// A block shown under the text, as an ask's.
    pub context: Option<Context>,
    /// The thread it goes in, as an ask's.
    pub thread: Option<Thread>,
    /// Where; `None` means the configured default target.
    pub target: Option<Target>,
}

/// The settings an ask left to the configured defaults: `remind` unset is
/// no `remindAfterSeconds` at all (`0` is "no reminder"), `escalate` unset
/// is no `escalate` at all (`[]` is "no escalation").
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Unset {
    /// No `remindAfterSeconds` was given.
    pub remind: bool,
    /// No `escalate` was given.
    pub escalate: bool,
}

impl Unset {
    /// Every setting left to the defaults: an ask in a dialect without them.
    pub const ALL: Unset = Unset {
        remind: true,
        escalate: true,
    };
}

/// What the configuration gives an ask that does not say: where it goes,
/// its reminders and its escalation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AskDefaults {
    /// Where an ask without `to` goes.
    pub target: Target,
    /// The reminders of an ask without `remindAfterSeconds`.
    pub remind: Option<Reminders>,
    /// The escalation of an ask without `escalate`, earliest first.
    pub escalate: Vec<Escalation>,
    /// Where an approval may go beyond the chat platforms.
    pub verified: Verified,
}

impl From<Target> for AskDefaults {
    /// Asks go to `target`, with no reminder and no escalation unless they
    /// say so.
    fn from(target: Target) -> AskDefaults {
        AskDefaults {
            target,
            remind: None,
            escalate: Vec::new(),
            verified: Verified::default(),
        }
    }
}

/// The reminders of an ask: the first `after_seconds` after it was
/// created, then (`every_seconds`) again at that interval, at most
/// [`limits::MAX_REMINDERS`] in all and only before the deadline.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Reminders {
    /// Seconds after creation; at least 30, before the timeout.
    pub after_seconds: u32,
    /// Seconds between reminders after the first; `None`: one reminder.
    pub every_seconds: Option<u32>,
}

impl Reminders {
    /// When reminder number `n` (from 0) is due for an ask created at
    /// `created` that ends at `deadline`; `None` when there is no such
    /// reminder.
    pub fn at(&self, n: u32, created: Timestamp, deadline: Timestamp) -> Option<Timestamp> {
        let count = if self.every_seconds.is_some() {
            limits::MAX_REMINDERS
        } else {
            1
        };
        if n >= count {
            return None;
        }
        let secs = u64::from(self.after_seconds)
            + u64::from(n) * u64::from(self.every_seconds.unwrap_or(0));
        Some(created.saturating_add_secs(secs)).filter(|at| *at < deadline)
    }

    /// When each reminder is due, earliest first ([`Reminders::at`]).
    pub fn times(
        &self,
        created: Timestamp,
        deadline: Timestamp,
    ) -> impl Iterator<Item = Timestamp> + '_ {
        (0..).map_while(move |n| self.at(n, created, deadline))
    }
}

/// One step of an ask's escalation: when it is still open `after_seconds`
/// after it was created, it is posted in `to` too (earlier places stay
/// open).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Escalation {
    /// Seconds after creation; less than the ask's timeout.
    pub after_seconds: u32,
    /// Where it is passed on to.
    pub to: Target,
}

impl Ask {
    /// The ask with what it left unset taken from `defaults`. A default
    /// applies as far as it fits the ask: reminders at or after the ask's
    /// deadline are never sent, and an escalation step is left out when it
    /// is not before the deadline, when its place is one of the ask's
    /// already, or when the ask has [`limits::MAX_PLACES`] places. An
    /// approval is passed on by default only to places that name the same
    /// person as its first ([`Ask::escalates_to`]).
    pub fn with_defaults(mut self, defaults: &AskDefaults) -> Ask {
        if self.target.is_none() {
            self.target = Some(defaults.target.clone());
        }
        if self.unset.remind
            && self.remind.is_none()
            && let Some(remind) = defaults.remind
            && remind.after_seconds < self.timeout_seconds
        {
            self.remind = Some(remind);
            self.unset.remind = false;
        }
        if self.unset.escalate && self.escalate.is_empty() {
            for step in &defaults.escalate {
                let fits = step.after_seconds < self.timeout_seconds
                    && self.places().count() < limits::MAX_PLACES
                    && self.places().all(|target| target.place != step.to.place)
                    && self.escalates_to(&step.to);
                if fits {
                    self.escalate.push(step.clone());
                    self.unset.escalate = false;
                }
            }
        }
        self
    }

    /// Whether a configured escalation step to `to` may be added to this
    /// ask: always for an ask anyone may answer; for an approval only when
    /// `to` names the same person as its first place (on the same
    /// channel), so a default never widens who may approve.
    pub fn escalates_to(&self, to: &Target) -> bool {
        !self.approval
            || self.target.as_ref().is_some_and(|first| {
                first.place.channel() == to.place.channel()
                    && first.person().is_some()
                    && first.person() == to.person()
            })
    }

    /// Whether `from` may answer the ask: the one rule every route goes
    /// through ([`crate::lifecycle::AskLifecycle`] applies it to every
    /// input). An ask anyone may answer: in the place they answer in
    /// ([`Ask::place_of`]), its named user on its channel, or, when no user
    /// is named, whoever the channel's allow-list admits (`admitted`). An
    /// approval: only the person the place they answer in names
    /// ([`Target::is_its_person`]); the allow-list, the agent host's
    /// dialog and any other place's people count for nothing.
    pub fn may_answer(&self, from: &Responder, admitted: bool) -> bool {
        if self.approval {
            self.approvers_place(from).is_some()
        } else {
            self.place_of(from)
                .map_or(admitted, |target| target.may_answer(from, admitted))
        }
    }

    /// Whether a typed message on `channel` that answers none of the
    /// ask's messages (no thread, no reply) may still answer it, as the
    /// newest open ask where it was written. Not an approval by email: a
    /// mail names what it answers (its thread, its plus token), and one
    /// that names nothing is not taken as an approval.
    pub fn takes_unthreaded_reply(&self, channel: ChannelKind) -> bool {
        !(self.approval && channel == ChannelKind::Email)
    }

    /// The place of an approval `from` answers in as its person: the one
    /// they name ([`Responder::place`]) if they are its person, else the
    /// first whose person they are; `None` when they are nobody's.
    pub fn approvers_place(&self, from: &Responder) -> Option<&Target> {
        let mut places = self.places().filter(|target| target.is_its_person(from));
        match &from.place {
            Some(place) => places.find(|target| target.place == *place),
            None => places.next(),
        }
    }

    /// Every place the ask is posted to, the first (`target`) first, then
    /// `also`, then the escalation steps'; its index is the place's
    /// number.
    pub fn places(&self) -> impl Iterator<Item = &Target> {
        self.target
            .iter()
            .chain(&self.also)
            .chain(self.escalate.iter().map(|step| &step.to))
    }

    /// How long after creation place number `place` is posted: `None` at
    /// once, else the escalation step's seconds.
    pub fn place_delay(&self, place: usize) -> Option<u32> {
        let at_once = usize::from(self.target.is_some()) + self.also.len();
        place
            .checked_sub(at_once)
            .and_then(|step| self.escalate.get(step))
            .map(|step| step.after_seconds)
    }

    /// When place number `place` of an ask created at `created` is
    /// posted: `None` at once, else its escalation step's time.
    pub fn place_due(&self, place: usize, created: Timestamp) -> Option<Timestamp> {
        self.place_delay(place)
            .map(|secs| created.saturating_add_secs(u64::from(secs)))
    }

    /// Whether an ask created at `created` is in a place on channel `kind`
    /// at time `at`: one of its places there is posted at once, or its
    /// escalation step's time has come. The one rule for "is it there
    /// yet" wherever a channel shows asks without posting them (the web
    /// page's list and its events).
    pub fn is_on(&self, kind: ChannelKind, created: Timestamp, at: Timestamp) -> bool {
        self.places().enumerate().any(|(place, target)| {
            target.place.channel() == kind
                && self.place_due(place, created).is_none_or(|due| due <= at)
        })
    }

    /// The place an answer from `from` is given in: the one it names
    /// ([`Responder::place`]), else the first on its channel, else the
    /// first place.
    pub fn place_of(&self, from: &Responder) -> Option<&Target> {
        self.place_on(from).or(self.target.as_ref())
    }

    /// The place `from` answers in on their own channel: the one they name,
    /// else the first on their channel; `None` for a channel the ask is
    /// not posted on (the agent host's dialog).
    pub fn place_on(&self, from: &Responder) -> Option<&Target> {
        let named = from
            .place
            .as_ref()
            .and_then(|place| self.places().find(|target| target.place == *place));
        named.or_else(|| {
            self.places()
                .find(|target| target.place.channel() == from.channel)
        })
    }
}

/// One question of an ask.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Question {
    /// Unique snake_case id; the key of the answer in the outcome.
    pub id: String,
    /// Short chip label, at most 12 characters.
    pub header: String,
    /// The question sentence.
    pub text: String,
    /// What kind of answer is expected.
    pub kind: QuestionKind,
    /// The options of a `Single` or `Multi` question (2–25); empty otherwise.
    /// "Other" is never among them: free text is always allowed.
    pub options: Vec<Choice>,
    /// Labels chosen when the person accepts the default (choice questions),
    /// or the default text / "yes" / "no".
    pub default: Option<Vec<String>>,
    /// Hint shown in an empty text input.
    pub placeholder: Option<String>,
    /// Whether skipping this question alone is allowed (`false`) or not.
    pub required: bool,
    /// Options are shown and matched as letters (`A.` `B.`), not numbers.
    pub letters: bool,
}

/// The kind of answer a question expects.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum QuestionKind {
    /// Choose exactly one option.
    Single,
    /// Choose one or more options.
    Multi,
    /// Free text on one line.
    Text,
    /// Free text over several lines.
    Textarea,
    /// Yes or no.
    Confirm,
}

impl QuestionKind {
    /// The wire name (`single`, `multi`, `text`, `textarea`, `confirm`).
    pub fn as_str(self) -> &'static str {
        match self {
            QuestionKind::Single => "single",
            QuestionKind::Multi => "multi",
            QuestionKind::Text => "text",
            QuestionKind::Textarea => "textarea",
            QuestionKind::Confirm => "confirm",
        }
    }

    /// Whether the question has options to choose from.
    pub fn has_options(self) -> bool {
        matches!(self, QuestionKind::Single | QuestionKind::Multi)
    }
}

/// One option of a choice question.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Choice {
    /// The label as the agent wrote it, "(Recommended)" included; it is
    /// returned verbatim in the outcome.
    pub label: String,
    /// One line shown after the label.
    pub description: Option<String>,
    /// Value the agent wants back; `None` means the label.
    pub value: Option<String>,
    /// Marked as recommended (explicitly or by a "(Recommended)" suffix).
    pub recommended: bool,
    /// For agent-choice asks: the message to continue with when chosen.
    pub prompt: Option<String>,
}

impl Choice {
    /// The label without a trailing "(Recommended)" marker, for display.
    pub fn display_label(&self) -> &str {
        strip_recommended_marker(&self.label)
    }

    /// The value the agent gets back.
    pub fn value(&self) -> &str {
        self.value.as_deref().unwrap_or(&self.label)
    }
}

/// The label of an option as reported in answers: the choice's label
/// verbatim, `yes`/`no` for confirm.
pub(crate) fn option_label(question: &Question, option: usize) -> &str {
    match question.kind {
        QuestionKind::Confirm => match option {
            0 => "yes",
            _ => "no",
        },
        _ => question
            .options
            .get(option)
            .map_or("", |choice| choice.label.as_str()),
    }
}

/// Removes one trailing "(Recommended)" marker (any case, ASCII or
/// full-width parentheses, or the Chinese/Thai word) and the space before it.
pub fn strip_recommended_marker(label: &str) -> &str {
    let trimmed = label.trim_end();
    // Every marker closes with a bracket: most labels end otherwise.
    if !trimmed.ends_with([')', ']', '）']) {
        return trimmed;
    }
    for marker in RECOMMENDED_MARKERS {
        if let Some(start) = trimmed.len().checked_sub(marker.len())
            && trimmed.is_char_boundary(start)
            && trimmed[start..].eq_ignore_ascii_case(marker)
        {
            let rest = trimmed[..start].trim_end();
            if !rest.is_empty() {
                return rest;
            }
        }
    }
    trimmed
}

/// Whether a label ends in a "(Recommended)" marker.
pub fn has_recommended_marker(label: &str) -> bool {
    strip_recommended_marker(label).len() != label.trim_end().len()
}

const RECOMMENDED_MARKERS: &[&str] = &[
    "(recommended)",
    "[recommended]",
    "（recommended）",
    "(推荐)",
    "（推荐）",
    "(建议)",
    "（建议）",
    "(แนะนำ)",
];

/// Where an ask is posted and who may answer it (`to`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    /// The conversation.
    pub place: Place,
    /// The only user who may answer; `None` means anyone the channel's
    /// allow-list admits.
    pub user: Option<String>,
}

/// A conversation on one channel.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Place {
    /// A Telegram chat, optionally a forum topic in it.
    Telegram {
        /// Chat id (negative for groups).
        chat_id: i64,
        /// `message_thread_id` of a forum topic.
        thread_id: Option<i32>,
    },
    /// A Discord channel.
    DiscordChannel {
        /// Channel snowflake.
        channel_id: u64,
    },
    /// A Discord direct message to a user.
    DiscordUser {
        /// User snowflake.
        user_id: u64,
    },
    /// A Slack channel, optionally a thread in it.
    Slack {
        /// Channel id (`C…`, `G…`, `D…`).
        channel_id: String,
        /// `thread_ts` of the thread.
        thread_ts: Option<String>,
    },
    /// A Slack direct message to a user (the IM is opened when posting).
    SlackUser {
        /// User id (`U…`, `W…`).
        user_id: String,
    },
    /// A Feishu / Lark group chat.
    Feishu {
        /// Chat id (`oc_…`).
        chat_id: String,
    },
    /// A Feishu / Lark private chat between the bot and a user.
    FeishuUser {
        /// The user's `open_id` (`ou_…`) for the bot's app.
        open_id: String,
    },
    /// A Matrix room, by id (`!…`) or alias (`#name:server`).
    MatrixRoom {
        /// Room id or alias.
        room: String,
    },
    /// A direct chat between the bot and a Matrix user (created on the
    /// first ask, reused after).
    MatrixUser {
        /// The user's id (`@name:server`).
        user_id: String,
    },
    /// A Microsoft Teams conversation: a channel, a group chat or a
    /// personal chat.
    Teams {
        /// The conversation id (`19:…@thread.tacv2`, `a:…`).
        conversation: String,
    },
    /// The bot's personal chat with a Teams user (created on the first
    /// ask, reused after).
    TeamsUser {
        /// The user's AAD object id (a GUID).
        aad_object_id: String,
    },
    /// A person's mailbox: the ask is a mail to them, answered by
    /// replying.
    Email {
        /// The address, lower-cased (`alice@example.com`).
        address: String,
    },
    /// askbridge's own web page, optionally one session of it.
    Web {
        /// Session name; `None` is the default page.
        session: Option<String>,
    },
}

impl Place {
    /// The channel this place belongs to.
    pub fn channel(&self) -> ChannelKind {
        match self {
            Place::Telegram { .. } => ChannelKind::Telegram,
            Place::DiscordChannel { .. } | Place::DiscordUser { .. } => ChannelKind::Discord,
            Place::Slack { .. } | Place::SlackUser { .. } => ChannelKind::Slack,
            Place::Feishu { .. } | Place::FeishuUser { .. } => ChannelKind::Feishu,
            Place::MatrixRoom { .. } | Place::MatrixUser { .. } => ChannelKind::Matrix,
            Place::Teams { .. } | Place::TeamsUser { .. } => ChannelKind::Teams,
            Place::Email { .. } => ChannelKind::Email,
            Place::Web { .. } => ChannelKind::Web,
        }
    }

    /// Whether something `from` did in the conversation whose place is
    /// `at` (as the platform names it: a channel, a chat, a room id) is
    /// at this place — the one rule for every platform. A place that is a
    /// person's direct chat with the bot ([`Place::direct_user`]): done
    /// by that person, wherever the platform says it was (a direct chat is
    /// opened under another name than the person's on most platforms). A
    /// conversation: in the same one (a Slack thread counts as its
    /// channel; a Telegram forum topic is a conversation of its own). A
    /// Matrix alias is no room id: compare the room an alias was posted to
    /// (`!…`), not the alias.
    pub fn is_at(&self, at: &Place, from: &Responder) -> bool {
        if let Some(user) = self.direct_user() {
            return at.channel() == self.channel() && from.user_id == user;
        }
        match (self, at) {
            (
                Place::Telegram { chat_id, thread_id },
                Place::Telegram {
                    chat_id: at_chat,
                    thread_id: at_thread,
                },
            ) => chat_id == at_chat && thread_id == at_thread,
            (
                Place::DiscordChannel { channel_id },
                Place::DiscordChannel {
                    channel_id: at_channel,
                },
            ) => channel_id == at_channel,
            (
                Place::Slack { channel_id, .. },
                Place::Slack {
                    channel_id: at_channel,
                    ..
                },
            ) => channel_id == at_channel,
            (Place::Feishu { chat_id }, Place::Feishu { chat_id: at_chat }) => chat_id == at_chat,
            (Place::MatrixRoom { room }, Place::MatrixRoom { room: at_room }) => {
                room == at_room && !room.starts_with('#')
            }
            (
                Place::Teams { conversation },
                Place::Teams {
                    conversation: at_conversation,
                },
            ) => conversation == at_conversation,
            (
                Place::Web { session },
                Place::Web {
                    session: at_session,
                },
            ) => session == at_session,
            _ => false,
        }
    }

    /// The user id of the person whose direct chat with the bot this place
    /// is, where the place names the person rather than the chat.
    pub fn direct_user(&self) -> Option<String> {
        match self {
            Place::DiscordUser { user_id } => Some(user_id.to_string()),
            Place::SlackUser { user_id } => Some(user_id.clone()),
            Place::FeishuUser { open_id } => Some(open_id.clone()),
            Place::MatrixUser { user_id } => Some(user_id.clone()),
            Place::TeamsUser { aad_object_id } => Some(aad_object_id.clone()),
            Place::Email { address } => Some(address.clone()),
            Place::Telegram { .. }
            | Place::DiscordChannel { .. }
            | Place::Slack { .. }
            | Place::Feishu { .. }
            | Place::MatrixRoom { .. }
            | Place::Teams { .. }
            | Place::Web { .. } => None,
        }
    }

    /// Whether this is a direct chat between the bot and one person (a
    /// Telegram private chat has the user's own id, which is positive).
    pub fn is_direct(&self) -> bool {
        match self {
            Place::Telegram { chat_id, .. } => *chat_id > 0,
            Place::DiscordUser { .. }
            | Place::SlackUser { .. }
            | Place::FeishuUser { .. }
            | Place::MatrixUser { .. }
            | Place::TeamsUser { .. }
            | Place::Email { .. } => true,
            // A Teams personal chat named by its conversation id is one
            // person's, but its id does not say so.
            Place::DiscordChannel { .. }
            | Place::Slack { .. }
            | Place::Feishu { .. }
            | Place::MatrixRoom { .. }
            | Place::Teams { .. }
            | Place::Web { .. } => false,
        }
    }
}

/// The channels askbridge speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ChannelKind {
    /// Telegram Bot API.
    Telegram,
    /// Discord.
    Discord,
    /// Slack.
    Slack,
    /// Feishu, and Lark (its name outside China).
    Feishu,
    /// Matrix (any homeserver).
    Matrix,
    /// Microsoft Teams.
    Teams,
    /// Email: SMTP out, IMAP in.
    Email,
    /// The built-in web page.
    Web,
    /// The agent host's own dialog (MCP elicitation). Nothing is posted
    /// there as a place: it answers asks posted anywhere.
    Host,
}

impl ChannelKind {
    /// Every channel, in the order the docs list them.
    pub const ALL: [ChannelKind; 9] = [
        ChannelKind::Telegram,
        ChannelKind::Discord,
        ChannelKind::Slack,
        ChannelKind::Feishu,
        ChannelKind::Matrix,
        ChannelKind::Teams,
        ChannelKind::Email,
        ChannelKind::Web,
        ChannelKind::Host,
    ];

    /// The lower-case name used in targets and outcomes.
    pub fn as_str(self) -> &'static str {
        match self {
            ChannelKind::Telegram => "telegram",
            ChannelKind::Discord => "discord",
            ChannelKind::Slack => "slack",
            ChannelKind::Feishu => "feishu",
            ChannelKind::Matrix => "matrix",
            ChannelKind::Teams => "teams",
            ChannelKind::Email => "email",
            ChannelKind::Web => "web",
            ChannelKind::Host => "host",
        }
    }
}

impl fmt::Display for Target {
    /// The canonical string form, which [`Target::parse`] reads back.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.place)?;
        if let Some(user) = &self.user {
            write!(f, "@{user}")?;
        }
        Ok(())
    }
}

impl fmt::Display for Place {
    /// The target string of the place alone (no `@user`).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Place::Telegram { chat_id, thread_id } => {
                write!(f, "telegram:{chat_id}")?;
                if let Some(thread) = thread_id {
                    write!(f, "/{thread}")?;
                }
            }
            Place::DiscordChannel { channel_id } => write!(f, "discord:{channel_id}")?,
            Place::DiscordUser { user_id } => write!(f, "discord:user/{user_id}")?,
            Place::Slack {
                channel_id,
                thread_ts,
            } => {
                write!(f, "slack:{channel_id}")?;
                if let Some(ts) = thread_ts {
                    write!(f, "/{ts}")?;
                }
            }
            Place::SlackUser { user_id } => write!(f, "slack:user/{user_id}")?,
            Place::Feishu { chat_id } => write!(f, "feishu:{chat_id}")?,
            Place::FeishuUser { open_id } => write!(f, "feishu:user/{open_id}")?,
            Place::MatrixRoom { room } => write!(f, "matrix:{room}")?,
            Place::MatrixUser { user_id } => write!(f, "matrix:user/{user_id}")?,
            Place::Teams { conversation } => write!(f, "teams:{conversation}")?,
            Place::TeamsUser { aad_object_id } => write!(f, "teams:user/{aad_object_id}")?,
            Place::Email { address } => write!(f, "email:{address}")?,
            Place::Web { session } => {
                f.write_str("web")?;
                if let Some(session) = session {
                    write!(f, ":{session}")?;
                }
            }
        }
        Ok(())
    }
}

/// Who answered, as the channel reported them.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Responder {
    /// The channel the answer came through.
    pub channel: ChannelKind,
    /// The platform's user id (Telegram user id, Discord snowflake, Slack
    /// `U…`, the web session's user name).
    pub user_id: String,
    /// A display name, when the platform gives one.
    pub name: Option<String>,
    /// The place of the ask the answer came from, when the ask has
    /// several ([`Ask::places`]); set by whoever finds the ask there.
    pub place: Option<Place>,
}

/// A point in time: milliseconds since the Unix epoch, UTC.
///
/// The core never reads a clock; callers pass the current time in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Timestamp(pub u64);

impl Timestamp {
    /// A timestamp from whole seconds since the Unix epoch (saturating).
    pub const fn from_secs(secs: u64) -> Timestamp {
        Timestamp(secs.saturating_mul(1_000))
    }

    /// This timestamp plus `secs` seconds, saturating at the far future.
    pub fn saturating_add_secs(self, secs: u64) -> Timestamp {
        Timestamp(self.0.saturating_add(secs.saturating_mul(1_000)))
    }

    /// RFC 3339 in UTC: `2026-12-02T12:00:00Z`.
    ///
    /// Milliseconds are written (always three digits, `…:00.120Z`) only
    /// when they are not zero, so whole seconds read as the docs show
    /// them. Years past 9999 are written with more digits rather than
    /// refused.
    pub fn rfc3339(self) -> String {
        let millis = self.0 % 1_000;
        let secs = self.0 / 1_000;
        let (days, day_secs) = (secs / 86_400, secs % 86_400);
        let (year, month, day) = civil_from_days(days);
        let (hour, minute, second) = (day_secs / 3_600, day_secs / 60 % 60, day_secs % 60);
        let mut out = format!("{year:04}-{month:02}-{day:02}T{hour:02}:{minute:02}:{second:02}");
        if millis != 0 {
            out.push_str(&format!(".{millis:03}"));
        }
        out.push('Z');
        out
    }
}

impl fmt::Display for Timestamp {
    /// Same as [`Timestamp::rfc3339`].
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.rfc3339())
    }
}

/// Year, month (1–12) and day (1–31) of a day count since 1970-01-01, in the
/// proleptic Gregorian calendar (Howard Hinnant's `civil_from_days`, for
/// non-negative day counts only).
fn civil_from_days(days: u64) -> (u64, u64, u64) {
    let z = days + 719_468;
    let era = z / 146_097;
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + u64::from(month <= 2);
    (year, month, day)
}

/// Why a target string or object was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TargetError {
    /// The part before `:` is not a channel askbridge knows.
    #[error(
        "unknown channel {0:?}; expected telegram, discord, slack, feishu, matrix, teams, email or web"
    )]
    UnknownChannel(String),
    /// The channel is known but the rest is not of its form.
    #[error("{channel} target {given:?} is not of the form {expected}")]
    Malformed {
        /// Channel name.
        channel: &'static str,
        /// What was given.
        given: String,
        /// The accepted form.
        expected: &'static str,
    },
}

impl Target {
    /// Whether this person may answer an ask posted here: the
    /// named user on the target's channel; when no user is named, the
    /// person a direct chat or an address names ([`Target::person`]), and
    /// whoever the channel's allow-list admits (`admitted`: for email,
    /// its `allowed_senders`, who may answer for others).
    /// The agent host's dialog always may: it is the person the agent works
    /// for, at the agent's own keyboard.
    pub fn may_answer(&self, from: &Responder, admitted: bool) -> bool {
        if from.channel == ChannelKind::Host {
            return true;
        }
        match &self.user {
            Some(user) => from.channel == self.place.channel() && from.user_id == *user,
            None if self.person().is_some() => admitted || self.is_its_person(from),
            None => admitted,
        }
    }

    /// The one person who may answer an approval here: the user the target
    /// names, else the person whose direct chat with the bot the place is
    /// (a Telegram private chat's id is its user's; `discord:user/…`,
    /// `email:…` and the like name theirs). `None` for a group that names
    /// nobody, and for the web page, whose user is whoever holds the
    /// daemon's API token.
    pub fn person(&self) -> Option<String> {
        match (&self.user, &self.place) {
            (Some(user), _) => Some(user.clone()),
            (None, Place::Telegram { chat_id, .. }) if *chat_id > 0 => Some(chat_id.to_string()),
            (None, place) => place.direct_user(),
        }
    }

    /// Whether `from` is the person who may answer an approval posted
    /// here: on this place's channel, and the person it names
    /// ([`Target::person`]; an address compared without regard to case);
    /// on the web page that names nobody, its user, whoever holds the API
    /// token (an approval goes there only when the daemon has one).
    pub fn is_its_person(&self, from: &Responder) -> bool {
        if from.channel != self.place.channel() {
            return false;
        }
        match (self.person(), &self.place) {
            (Some(person), Place::Email { .. }) => person.eq_ignore_ascii_case(&from.user_id),
            (Some(person), _) => person == from.user_id,
            (None, place) => matches!(place, Place::Web { .. }),
        }
    }

    /// Parses `telegram:<chat_id>[/<thread_id>]`, `discord:<channel_id>`,
    /// `discord:user/<user_id>`, `slack:<channel_id>[/<thread_ts>]`,
    /// `feishu:<chat_id>`, `feishu:user/<open_id>` (`lark:` alike),
    /// `web[:<session>]`, each with an optional `@<user>` suffix;
    /// `matrix:<room id or #alias>[@<user id>]` and
    /// `matrix:user/<user id>`, where the user is all after the first `@`
    /// that follows the room (`matrix:!r:hs@@alice:hs`; its own leading
    /// `@` may be left out); `teams:<conversation id>[@<AAD object id>]`
    /// and `teams:user/<AAD object id>`, where only a GUID after the last
    /// `@` is a user (conversation ids hold `@` themselves);
    /// `email:<address>`, the address being the person.
    pub fn parse(input: &str) -> Result<Target, TargetError> {
        let input = input.trim();
        let (channel, rest) = match input.split_once(':') {
            Some((channel, rest)) => (channel, Some(rest)),
            None => (input, None),
        };
        if channel.eq_ignore_ascii_case("matrix") {
            return parse_matrix(rest.unwrap_or(""));
        }
        if channel.eq_ignore_ascii_case("teams") {
            return parse_teams(rest.unwrap_or(""));
        }
        if channel.eq_ignore_ascii_case("email") {
            return parse_email(rest.unwrap_or(""));
        }
        let (rest, user) = match rest {
            Some(rest) => match rest.rsplit_once('@') {
                Some((place, user)) if !user.is_empty() => (Some(place), Some(user.to_owned())),
                _ => (Some(rest), None),
            },
            None => match channel.split_once('@') {
                Some((channel_only, user)) if channel_only.eq_ignore_ascii_case("web") => {
                    return Ok(Target {
                        place: Place::Web { session: None },
                        user: Some(user.to_owned()),
                    });
                }
                _ => (None, None),
            },
        };
        let place = match channel.to_ascii_lowercase().as_str() {
            "telegram" | "tg" => parse_telegram(rest.unwrap_or(""))?,
            "discord" => parse_discord(rest.unwrap_or(""))?,
            "slack" => parse_slack(rest.unwrap_or(""))?,
            "feishu" | "lark" => parse_feishu(rest.unwrap_or(""))?,
            "web" => Place::Web {
                session: rest.filter(|s| !s.is_empty()).map(str::to_owned),
            },
            other => return Err(TargetError::UnknownChannel(other.to_owned())),
        };
        Ok(Target { place, user })
    }

    /// Builds a target from the object form's parts
    /// (`{"channel", "chat", "thread", "user"}`).
    pub fn from_parts(
        channel: &str,
        chat: Option<&str>,
        thread: Option<&str>,
        user: Option<&str>,
    ) -> Result<Target, TargetError> {
        let mut text = channel.to_owned();
        if let Some(chat) = chat {
            text.push(':');
            text.push_str(chat);
            if let Some(thread) = thread {
                text.push('/');
                text.push_str(thread);
            }
        }
        let mut target = Target::parse(&text)?;
        if let Some(user) = user.filter(|u| !u.is_empty()) {
            target.user = Some(match target.place.channel() {
                ChannelKind::Matrix => {
                    matrix_user_id(user).ok_or_else(|| TargetError::Malformed {
                        channel: "matrix",
                        given: user.to_owned(),
                        expected: MATRIX_USER,
                    })?
                }
                ChannelKind::Teams => {
                    aad_object_id(user).ok_or_else(|| TargetError::Malformed {
                        channel: "teams",
                        given: user.to_owned(),
                        expected: TEAMS_USER,
                    })?
                }
                _ => user.to_owned(),
            });
        }
        Ok(target)
    }
}

fn parse_telegram(rest: &str) -> Result<Place, TargetError> {
    let malformed = || TargetError::Malformed {
        channel: "telegram",
        given: rest.to_owned(),
        expected: "telegram:<chat_id>[/<thread_id>][@<user_id>]",
    };
    let (chat, thread) = match rest.split_once('/') {
        Some((chat, thread)) => (chat, Some(thread)),
        None => (rest, None),
    };
    let chat_id = chat.trim().parse::<i64>().map_err(|_| malformed())?;
    let thread_id = match thread {
        Some(thread) => Some(thread.trim().parse::<i32>().map_err(|_| malformed())?),
        None => None,
    };
    Ok(Place::Telegram { chat_id, thread_id })
}

fn parse_discord(rest: &str) -> Result<Place, TargetError> {
    let malformed = || TargetError::Malformed {
        channel: "discord",
        given: rest.to_owned(),
        expected: "discord:<channel_id> or discord:user/<user_id>",
    };
    match rest.strip_prefix("user/") {
        Some(user) => Ok(Place::DiscordUser {
            user_id: user.trim().parse().map_err(|_| malformed())?,
        }),
        None => Ok(Place::DiscordChannel {
            channel_id: rest.trim().parse().map_err(|_| malformed())?,
        }),
    }
}

fn parse_slack(rest: &str) -> Result<Place, TargetError> {
    let malformed = || TargetError::Malformed {
        channel: "slack",
        given: rest.to_owned(),
        expected: "slack:<channel_id>[/<thread_ts>][@<user_id>] or slack:user/<user_id>",
    };
    let id_ok = |id: &str| !id.is_empty() && id.chars().all(|c| c.is_ascii_alphanumeric());
    if let Some(user) = rest.strip_prefix("user/") {
        return match id_ok(user) {
            true => Ok(Place::SlackUser {
                user_id: user.to_owned(),
            }),
            false => Err(malformed()),
        };
    }
    let (channel, thread) = match rest.split_once('/') {
        Some((channel, thread)) => (channel, Some(thread)),
        None => (rest, None),
    };
    let thread_ok = thread
        .is_none_or(|ts| !ts.is_empty() && ts.chars().all(|c| c.is_ascii_digit() || c == '.'));
    if !id_ok(channel) || !thread_ok {
        return Err(malformed());
    }
    Ok(Place::Slack {
        channel_id: channel.to_owned(),
        thread_ts: thread.map(str::to_owned),
    })
}

fn parse_feishu(rest: &str) -> Result<Place, TargetError> {
    let malformed = || TargetError::Malformed {
        channel: "feishu",
        given: rest.to_owned(),
        expected: "feishu:<chat_id>[@<open_id>] or feishu:user/<open_id>",
    };
    let id_ok = |id: &str| {
        !id.is_empty()
            && id
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
    };
    match rest.strip_prefix("user/") {
        Some(open_id) if id_ok(open_id) => Ok(Place::FeishuUser {
            open_id: open_id.to_owned(),
        }),
        None if id_ok(rest) => Ok(Place::Feishu {
            chat_id: rest.to_owned(),
        }),
        _ => Err(malformed()),
    }
}

const MATRIX_TARGET: &str =
    "matrix:<!room_id or #alias:server>[@<@user:server>] or matrix:user/<@user:server>";
const MATRIX_USER: &str = "a Matrix user id, @name:server";

/// Reads what follows `matrix:`: the room, or `user/` and a user id, and
/// after a room the user who may answer, from its first `@` on (room ids
/// and aliases hold none).
fn parse_matrix(rest: &str) -> Result<Target, TargetError> {
    let malformed = || TargetError::Malformed {
        channel: "matrix",
        given: rest.to_owned(),
        expected: MATRIX_TARGET,
    };
    if let Some(user) = rest.strip_prefix("user/") {
        let user_id = matrix_user_id(user).ok_or_else(malformed)?;
        return Ok(Target {
            place: Place::MatrixUser { user_id },
            user: None,
        });
    }
    let (room, user) = match rest.split_once('@') {
        Some((room, user)) => (room, Some(matrix_user_id(user).ok_or_else(malformed)?)),
        None => (rest, None),
    };
    let sigil_ok = room.starts_with('!') || (room.starts_with('#') && room.contains(':'));
    let plain = |b: u8| b.is_ascii_graphic() && b != b'/' && b != b'@';
    if room.len() < 2 || !sigil_ok || !room.bytes().all(plain) {
        return Err(malformed());
    }
    Ok(Target {
        place: Place::MatrixRoom {
            room: room.to_owned(),
        },
        user,
    })
}

const TEAMS_TARGET: &str =
    "teams:<conversation id>[@<AAD object id>] or teams:user/<AAD object id>";
const TEAMS_USER: &str = "an AAD object id (a GUID: hex groups of 8-4-4-4-12)";

/// Reads what follows `teams:`: `user/` and an AAD object id, or a
/// conversation id and, after its last `@`, the user who may answer when
/// that is a GUID (a channel's id ends in `@thread.tacv2` of its own).
fn parse_teams(rest: &str) -> Result<Target, TargetError> {
    let malformed = || TargetError::Malformed {
        channel: "teams",
        given: rest.to_owned(),
        expected: TEAMS_TARGET,
    };
    if let Some(user) = rest.strip_prefix("user/") {
        let aad_object_id = aad_object_id(user).ok_or_else(malformed)?;
        return Ok(Target {
            place: Place::TeamsUser { aad_object_id },
            user: None,
        });
    }
    let (conversation, user) = match rest.rsplit_once('@') {
        Some((conversation, user)) => match aad_object_id(user) {
            Some(user) => (conversation, Some(user)),
            // `…@thread.tacv2`: the conversation id's own.
            None if user.contains('.') => (rest, None),
            None => {
                return Err(TargetError::Malformed {
                    channel: "teams",
                    given: user.to_owned(),
                    expected: TEAMS_USER,
                });
            }
        },
        None => (rest, None),
    };
    let plain = |c: char| !c.is_whitespace() && !c.is_control() && c != '/';
    if conversation.is_empty() || !conversation.chars().all(plain) {
        return Err(malformed());
    }
    Ok(Target {
        place: Place::Teams {
            conversation: conversation.to_owned(),
        },
        user,
    })
}

/// How an email target is written.
const EMAIL_TARGET: &str = "email:<address>, such as email:alice@example.com";

/// Reads what follows `email:`: one address (`local@domain`, no display
/// name, no spaces or angle brackets), lower-cased. It names the person:
/// there is no `@<user>` after it.
fn parse_email(rest: &str) -> Result<Target, TargetError> {
    let address = rest.trim();
    let malformed = || TargetError::Malformed {
        channel: "email",
        given: address.to_owned(),
        expected: EMAIL_TARGET,
    };
    let Some((local, domain)) = address.rsplit_once('@') else {
        return Err(malformed());
    };
    let plain = |c: char| {
        !c.is_whitespace()
            && !c.is_control()
            && !matches!(c, '<' | '>' | '(' | ')' | ',' | ';' | '"')
    };
    let well_formed = !local.is_empty()
        && !local.contains('@')
        && domain.contains('.')
        && !domain.starts_with('.')
        && !domain.ends_with('.')
        && address.len() <= 254
        && address.chars().all(plain);
    match well_formed {
        true => Ok(Target {
            place: Place::Email {
                address: address.to_lowercase(),
            },
            user: None,
        }),
        false => Err(malformed()),
    }
}

/// An AAD object id: a GUID (hex groups of 8-4-4-4-12; a longer last
/// group is taken too, as Microsoft's Agents Playground's made-up users
/// have), lower-cased.
fn aad_object_id(text: &str) -> Option<String> {
    let groups: Vec<&str> = text.split('-').collect();
    let shape = [8, 4, 4, 4, 12];
    let ok = groups.len() == shape.len()
        && groups
            .iter()
            .zip(shape)
            .enumerate()
            .all(|(index, (group, len))| {
                let fits = match index {
                    4 => group.len() >= len,
                    _ => group.len() == len,
                };
                fits && group.bytes().all(|b| b.is_ascii_hexdigit())
            });
    ok.then(|| text.to_ascii_lowercase())
}

/// A Matrix user id, `@name:server`, with its `@` added when left out.
fn matrix_user_id(text: &str) -> Option<String> {
    let bare = text.strip_prefix('@').unwrap_or(text);
    let (name, server) = bare.split_once(':')?;
    let ok = !name.is_empty()
        && !server.is_empty()
        && bare
            .bytes()
            .all(|b| b.is_ascii_graphic() && b != b'@' && b != b'/');
    ok.then(|| format!("@{bare}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_recommended_marker_closes_with_a_bracket() {
        // strip_recommended_marker skips labels that end otherwise.
        for marker in RECOMMENDED_MARKERS {
            assert!(marker.ends_with([')', ']', '）']), "{marker}");
        }
        assert_eq!(
            strip_recommended_marker("Postgres (Recommended) "),
            "Postgres"
        );
        assert_eq!(strip_recommended_marker("Postgres "), "Postgres");
    }

    fn check_target(input: &str, expect: Result<&str, &str>) {
        let got = Target::parse(input)
            .map(|t| t.to_string())
            .map_err(|e| e.to_string());
        match expect {
            Ok(canonical) => assert_eq!(got.as_deref(), Ok(canonical), "{input}"),
            Err(fragment) => {
                let err = got.expect_err(input);
                assert!(err.contains(fragment), "{input}: {err}");
            }
        }
    }

    #[test]
    fn targets() {
        check_target("telegram:123456789", Ok("telegram:123456789"));
        check_target("telegram:-1001234@42", Ok("telegram:-1001234@42"));
        check_target("telegram:-1001234/7@42", Ok("telegram:-1001234/7@42"));
        check_target("discord:1234", Ok("discord:1234"));
        check_target("discord:user/99", Ok("discord:user/99"));
        check_target(
            "slack:C123/1700000000.000100",
            Ok("slack:C123/1700000000.000100"),
        );
        check_target("slack:C123@U42", Ok("slack:C123@U42"));
        check_target("slack:user/U42", Ok("slack:user/U42"));
        check_target("feishu:oc_a1b2", Ok("feishu:oc_a1b2"));
        check_target("lark:oc_a1b2@ou_9", Ok("feishu:oc_a1b2@ou_9"));
        check_target("feishu:user/ou_9", Ok("feishu:user/ou_9"));
        check_target("feishu:", Err("feishu:<chat_id>"));
        check_target("feishu:oc 1", Err("feishu:<chat_id>"));
        check_target("feishu:user/", Err("feishu:<chat_id>"));
        check_target("slack:user/", Err("slack:user/<user_id>"));
        check_target("matrix:!abc:hs.org", Ok("matrix:!abc:hs.org"));
        check_target("matrix:!abc", Ok("matrix:!abc"));
        check_target("matrix:#deploys:hs.org", Ok("matrix:#deploys:hs.org"));
        check_target(
            "matrix:!abc:hs.org@@alice:hs.org",
            Ok("matrix:!abc:hs.org@@alice:hs.org"),
        );
        check_target(
            "matrix:#deploys:hs.org@alice:hs.org:8448",
            Ok("matrix:#deploys:hs.org@@alice:hs.org:8448"),
        );
        check_target("matrix:user/@bob:hs.org", Ok("matrix:user/@bob:hs.org"));
        check_target("matrix:user/bob:hs.org", Ok("matrix:user/@bob:hs.org"));
        check_target("MATRIX:!abc:hs", Ok("matrix:!abc:hs"));
        check_target("matrix:", Err("matrix:<!room_id"));
        check_target("matrix:abc:hs", Err("matrix:<!room_id"));
        check_target("matrix:#noserver", Err("matrix:<!room_id"));
        check_target("matrix:!abc:hs@alice", Err("matrix:<!room_id"));
        check_target("matrix:user/alice", Err("matrix:<!room_id"));
        check_target("matrix:!a b:hs", Err("matrix:<!room_id"));
        let alice = "9f1c1a52-6d0b-4c7e-8e5b-3f2a1b0c9d8e";
        check_target("teams:19:abc@thread.tacv2", Ok("teams:19:abc@thread.tacv2"));
        check_target(
            &format!("teams:19:abc@thread.tacv2@{alice}"),
            Ok(&format!("teams:19:abc@thread.tacv2@{alice}")),
        );
        check_target(
            &format!("teams:a:1Xyz@{}", alice.to_uppercase()),
            Ok(&format!("teams:a:1Xyz@{alice}")),
        );
        check_target(
            &format!("teams:user/{alice}"),
            Ok(&format!("teams:user/{alice}")),
        );
        check_target(
            "TEAMS:19:meeting_x@thread.v2",
            Ok("teams:19:meeting_x@thread.v2"),
        );
        check_target("teams:", Err("teams:<conversation id>"));
        check_target(
            "teams:357130da-23ec-42e9-9c09-982486755537",
            Ok("teams:357130da-23ec-42e9-9c09-982486755537"),
        );
        check_target(
            "teams:357130da-23ec-42e9-9c09-982486755537@00000000-0000-0000-0000-0000000000021",
            Ok("teams:357130da-23ec-42e9-9c09-982486755537@00000000-0000-0000-0000-0000000000021"),
        );
        check_target("teams:19:x@thread.v2@alice", Err("an AAD object id"));
        check_target("teams:19:a b@thread.v2", Err("teams:<conversation id>"));
        check_target("teams:user/alice", Err("teams:<conversation id>"));
        check_target("web", Ok("web"));
        check_target("web:review", Ok("web:review"));
        check_target("web@alice", Ok("web@alice"));
        check_target("telegram:abc", Err("telegram target"));
        check_target("discord:user/x", Err("discord target"));
        check_target("slack:", Err("slack target"));
        check_target("email:Alice@Example.com", Ok("email:alice@example.com"));
        check_target(
            " email:bot+ops@mail.example.co.th ",
            Ok("email:bot+ops@mail.example.co.th"),
        );
        check_target("EMAIL:a@b.io", Ok("email:a@b.io"));
        for bad in [
            "email:me",
            "email:",
            "email:@example.com",
            "email:alice@localhost",
            "email:alice@example.com.",
            "email:a b@example.com",
            "email:<alice@example.com>",
            "email:alice@x@example.com",
            "email:Alice <alice@example.com>",
        ] {
            check_target(bad, Err("email:<address>"));
        }
        check_target("mail:me", Err("unknown channel"));
        // The address is the person: who answers must be that address.
        let alice = Target::parse("email:alice@example.com").expect("a target");
        assert_eq!(
            alice.place.direct_user().as_deref(),
            Some("alice@example.com")
        );
        assert!(alice.place.is_direct());
    }

    #[test]
    fn recommended_marker() {
        assert_eq!(strip_recommended_marker("Staging (Recommended)"), "Staging");
        assert_eq!(
            strip_recommended_marker("Staging (recommended) "),
            "Staging"
        );
        assert_eq!(strip_recommended_marker("Staging（推荐）"), "Staging");
        assert_eq!(strip_recommended_marker("(Recommended)"), "(Recommended)");
        assert_eq!(strip_recommended_marker("Production"), "Production");
        assert!(has_recommended_marker("A (Recommended)"));
        assert!(!has_recommended_marker("A"));
    }
}

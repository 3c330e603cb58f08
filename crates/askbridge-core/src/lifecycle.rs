//! The ask lifecycle as a deterministic state machine.
//!
//! An [`AskLifecycle`] is one ask in flight: the [`Ask`], when it was
//! created, its [`State`] and the answers given so far. It does no I/O and
//! reads no clock: every call takes `now` as a [`Timestamp`] and returns a
//! value saying what happened ([`Step`]), never an error and never a panic.
//!
//! ```text
//!            ┌──────────── Answered  (every question answered)
//!            ├──────────── Skipped   (Skip, or every answer skipped)
//! Pending ───┼──────────── TimedOut  (now >= deadline)
//!            ├──────────── Cancelled (the agent cancelled)
//!            └──────────── DeliveryFailed { reason }
//!
//! Answered ─────────────── Overtaken (the agent's host had decided first)
//! ```
//!
//! Rules, in the order they are applied to an [`Input`]:
//!
//! 1. **Time first.** If the ask is pending and `now >= deadline`, it times
//!    out before the input is looked at, and the step is
//!    [`Step::Finished`] with a timeout outcome; the input itself is not
//!    applied. [`AskLifecycle::tick`] does the same without an input. The
//!    deadline is inclusive: a reply at exactly the deadline is too late.
//! 2. **Who.** Inputs from a person are checked first against the target:
//!    if the ask names a `user`, only that user on the target's channel may
//!    answer; otherwise the channel's allow-list verdict (`admitted`)
//!    decides. Anyone else gets [`Rejection::NotForYou`], whatever the
//!    state, so they learn nothing about the ask.
//! 3. **Once.** After the ask has ended, every input is
//!    [`Rejection::AlreadyEnded`] and changes nothing: the first valid
//!    complete answer wins.
//! 4. **Valid.** Indices out of range (a forged callback), unknown question
//!    ids and malformed answers are [`Rejection::Invalid`]; nothing changes.
//!    An input is applied whole or not at all.
//!
//! Partial answers are kept across inputs: a typed reply is resolved
//! against the questions still open only, and answers given are never
//! dropped. An input aimed at one question (a button pick, "Other" text,
//! a structured web answer) may replace that question's earlier answer
//! while the ask is pending: the person corrects themselves. The ask ends
//! as `Answered` the moment every question has an answer; if every one of
//! those answers is a skip, it ends as `Skipped` instead (an ask where
//! nothing was given is not "answered").
//!
//! When the ask ends, the machine hands its answered questions and how it
//! ended to [`crate::outcome`], which writes the [`Outcome`]; the outcome
//! module comes before this one and knows nothing of it.
//!
//! For persistence, [`AskLifecycle::to_parts`] gives the plain core values
//! that make up the machine and [`AskLifecycle::from_parts`] rebuilds an
//! identical one; the prepared reply matcher is derived, not stored.

use crate::model::{Ask, Question, QuestionKind, Responder, Timestamp, option_label};
use crate::outcome::{self, Ending, Given, Outcome, Reason, Via};
use crate::resolve::{AskMatcher, Resolution, label_key};

/// Where an ask is in its lifecycle. Every state but `Pending` is terminal:
/// no input changes it (only [`AskLifecycle::overtake`] turns `Answered`
/// into `Overtaken`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum State {
    /// Waiting for answers.
    Pending,
    /// Every question was answered; `by` gave the answer that completed it.
    Answered {
        /// Who completed the ask.
        by: Responder,
        /// When.
        at: Timestamp,
    },
    /// The person skipped the ask (Skip, a typed "skip", or every answer
    /// was a skip).
    Skipped {
        /// Who skipped.
        by: Responder,
        /// When.
        at: Timestamp,
    },
    /// The deadline passed; the ask ended at its deadline.
    TimedOut,
    /// The agent cancelled the ask, or its host decided without it.
    Cancelled {
        /// When.
        at: Timestamp,
        /// The person answered in the agent host's own prompt (the
        /// terminal) instead: a coding agent's hook saw the host go on.
        in_host: bool,
    },
    /// The ask could not be delivered.
    DeliveryFailed {
        /// The platform's reason.
        reason: String,
        /// When.
        at: Timestamp,
    },
    /// Answered here, but the agent's host had decided in its own prompt
    /// (the terminal) first: a later event of the host showed it went on
    /// without this answer, which came too late and decided nothing
    /// ([`AskLifecycle::overtake`]). The answers stay on record as the
    /// late answer ([`AskLifecycle::late_outcome`]); the outcome is a
    /// cancelled one.
    Overtaken {
        /// Who gave the late answer.
        by: Responder,
        /// When they gave it.
        answered_at: Timestamp,
        /// When the host showed it had decided.
        at: Timestamp,
    },
}

impl State {
    /// Whether the ask is still waiting for answers.
    pub fn is_pending(&self) -> bool {
        matches!(self, State::Pending)
    }

    /// The name the outcome and the API use: `pending`, `answered`,
    /// `skipped`, `timed_out`, `cancelled`, `delivery_failed`.
    pub fn as_str(&self) -> &'static str {
        match self {
            State::Pending => "pending",
            State::Answered { .. } => "answered",
            State::Skipped { .. } => "skipped",
            State::TimedOut => "timed_out",
            State::Cancelled { .. } | State::Overtaken { .. } => "cancelled",
            State::DeliveryFailed { .. } => "delivery_failed",
        }
    }
}

/// The answer given to one question, kept across inputs and persisted.
///
/// Both fields empty means the (optional) question was skipped and maps to
/// `[]` in the outcome.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Answer {
    /// Chosen options by index, ascending, without duplicates. For a
    /// confirm question `[0]` is yes and `[1]` is no. Empty for text
    /// questions.
    pub options: Vec<usize>,
    /// The person's own words: the answer of a text question, or "Other"
    /// on a choice or confirm question (alongside the chosen options for a
    /// multi-select question). Trimmed and never empty.
    pub text: Option<String>,
    /// How the answer came in.
    pub via: Via,
}

impl Answer {
    /// A skipped (optional) question.
    pub fn skipped(via: Via) -> Answer {
        Answer {
            options: Vec::new(),
            text: None,
            via,
        }
    }

    /// Whether this answer skips the question.
    pub fn is_skipped(&self) -> bool {
        self.options.is_empty() && self.text.is_none()
    }
}

/// Something that happened to an ask.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Input {
    /// A typed reply to the whole ask, resolved against the questions still
    /// open (docs/replies.md).
    Reply {
        /// Who sent it.
        from: Responder,
        /// Whether the channel's allow-list admits the sender.
        admitted: bool,
        /// The text as received (platform artefacts are the resolver's job).
        text: String,
        /// What a list reply whose items do not all name an option does to
        /// its question (`lint, deploy` on Lint / Test / Build).
        unknown_items: UnknownItems,
    },
    /// Options picked for one question with a button or a select menu: one
    /// option for single-select and confirm (`0` = yes, `1` = no), the whole
    /// selection for multi-select (the channel keeps toggles until Done).
    Pick {
        /// Who picked.
        from: Responder,
        /// Whether the channel's allow-list admits the sender.
        admitted: bool,
        /// Question index in the ask.
        question: usize,
        /// Option indices in the question.
        options: Vec<usize>,
        /// [`Via::Button`] or [`Via::Select`], usually.
        via: Via,
    },
    /// The person's own words for one question: "Other…" on a choice
    /// question, or the answer of a text question (modal, forced reply).
    /// Text that equals an option label (ignoring case and the
    /// "(Recommended)" marker) picks that option; for confirm, yes / no /
    /// true / false / y / n pick yes or no.
    Other {
        /// Who wrote it.
        from: Responder,
        /// Whether the channel's allow-list admits the sender.
        admitted: bool,
        /// Question index in the ask.
        question: usize,
        /// The text.
        text: String,
        /// [`Via::Text`] or [`Via::Modal`], usually.
        via: Via,
    },
    /// Structured answers from the web page or the HTTP API, by question
    /// id. Each string that equals an option's label (ignoring case and the
    /// "(Recommended)" marker), or else its value, is that option; any other
    /// string is the person's own words ("Other"; at most one per
    /// question). Confirm takes yes / no / true / false / y / n, anything
    /// else is own words. Text questions take one string. An empty list (or
    /// only blank strings) skips an optional question and is refused for a
    /// required one. Questions not named stay open.
    Answers {
        /// Who answered.
        from: Responder,
        /// Whether the channel's allow-list admits the sender.
        admitted: bool,
        /// `question id → strings`, in any order.
        answers: Vec<(String, Vec<String>)>,
        /// [`Via::Web`] (the page, the API) or [`Via::Host`] (the agent
        /// host's dialog).
        via: Via,
    },
    /// The person skipped the whole ask (the Skip button).
    Skip {
        /// Who skipped.
        from: Responder,
        /// Whether the channel's allow-list admits the sender.
        admitted: bool,
    },
    /// The agent cancelled the ask.
    Cancel,
    /// The person answered in the agent host's own prompt instead (a
    /// coding agent's hook saw the host go on without it): ends the ask
    /// as cancelled, closed in the chat as answered in the terminal.
    AnsweredInHost,
    /// The ask could not be delivered.
    DeliveryFailed {
        /// The platform's reason.
        reason: String,
    },
}

/// What a list reply does to its question when some of its items name no
/// option. It is never a partial pick: nothing the person wrote is dropped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UnknownItems {
    /// The whole reply is the person's own words (the HTTP API, where no
    /// one is there to ask).
    OwnWords,
    /// The question stays open and [`Progress::unknown`] names the items,
    /// so a chat can ask about them.
    AskBack,
}

/// What an input did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Step {
    /// Nothing changed; tell the sender why.
    Rejected(Rejection),
    /// Answers were taken (maybe none); the ask is still pending.
    Progress(Progress),
    /// The ask ended with this step; hand the outcome to the agent and
    /// close the question message. Returned once per ask.
    Finished(Outcome),
}

/// Why an input changed nothing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Rejection {
    /// The sender may not answer this ask.
    NotForYou,
    /// The ask has already ended, in this state.
    AlreadyEnded(State),
    /// The input does not fit the ask.
    Invalid(Invalid),
}

/// How an input does not fit the ask.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Invalid {
    /// A question index past the end of the ask.
    #[error("question {question} does not exist")]
    NoSuchQuestion {
        /// The index given.
        question: usize,
    },
    /// An option index past the end of the question's options.
    #[error("question {question} has no option {option}")]
    NoSuchOption {
        /// The question index.
        question: usize,
        /// The option index given.
        option: usize,
    },
    /// A pick for a question without options.
    #[error("question {question} has no options to pick")]
    NotAChoice {
        /// The question index.
        question: usize,
    },
    /// A pick with no option.
    #[error("no option picked for question {question}")]
    NothingPicked {
        /// The question index.
        question: usize,
    },
    /// Several options for a question that takes one.
    #[error("question {question} takes one option")]
    SeveralPicks {
        /// The question index.
        question: usize,
    },
    /// Blank text.
    #[error("the answer to question {question} is empty")]
    EmptyText {
        /// The question index.
        question: usize,
    },
    /// Stored option indices not ascending or not unique.
    #[error("options of question {question} are not ascending and unique")]
    UnsortedOptions {
        /// The question index.
        question: usize,
    },
    /// Structured answers naming no question.
    #[error("answers: no question answered")]
    NoAnswers,
    /// A question id the ask does not have.
    #[error("answers.{id}: no such question")]
    UnknownQuestion {
        /// The id given.
        id: String,
    },
    /// The same question id twice.
    #[error("answers.{id}: answered twice")]
    DuplicateQuestion {
        /// The id given.
        id: String,
    },
    /// No answer for a required question.
    #[error("answers.{id}: the question is required")]
    Required {
        /// The question id.
        id: String,
    },
    /// Several answers for a question that takes one.
    #[error("answers.{id}: the question takes one answer, got {got}")]
    SeveralAnswers {
        /// The question id.
        id: String,
        /// How many were given.
        got: usize,
    },
    /// Several free texts for one multi-select question.
    #[error("answers.{id}: {got} strings match no option; at most one own answer is allowed")]
    SeveralOwnAnswers {
        /// The question id.
        id: String,
        /// How many were given.
        got: usize,
    },
}

/// The ask is still pending after an input.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Progress {
    /// Questions this input answered (indices, ascending).
    pub answered: Vec<usize>,
    /// Questions without an answer (indices, ascending); the channel asks
    /// these again, and only these.
    pub still_open: Vec<usize>,
    /// Open questions where the reply fitted several options.
    pub clarify: Vec<Clarify>,
    /// Open questions whose list reply named something that is no option
    /// (only with [`UnknownItems::AskBack`]).
    pub unknown: Vec<Unknown>,
}

/// A question left open because items of its list reply named no option.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unknown {
    /// The question index.
    pub question: usize,
    /// The items, as the person wrote them.
    pub items: Vec<String>,
}

/// A question to ask again, naming the options the reply could mean.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Clarify {
    /// The question index.
    pub question: usize,
    /// The candidate option indices, ascending (confirm: `0` yes, `1` no).
    pub options: Vec<usize>,
    /// Their labels, verbatim (confirm: `yes`, `no`).
    pub candidates: Vec<String>,
}

/// The persisted form of an [`AskLifecycle`]: plain core values, from
/// which [`AskLifecycle::from_parts`] rebuilds the same machine.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AskParts {
    /// The ask id the caller chose at creation; it is the outcome's `id`.
    pub id: String,
    /// The ask.
    pub ask: Ask,
    /// When the ask was created; the deadline is this plus the timeout.
    pub created_at: Timestamp,
    /// The state.
    pub state: State,
    /// One entry per question, in question order: the answer so far.
    pub answers: Vec<Option<Answer>>,
}

/// Why persisted parts do not make an ask.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RebuildError {
    /// The answer list does not have one entry per question.
    #[error("{got} answers stored for {expected} questions")]
    AnswerCount {
        /// Questions in the ask.
        expected: usize,
        /// Answers stored.
        got: usize,
    },
    /// A stored answer does not fit its question.
    #[error("answers[{question}]: {problem}")]
    BadAnswer {
        /// The question index.
        question: usize,
        /// What is wrong.
        problem: Invalid,
    },
    /// Answered, but a question has no answer.
    #[error("state answered but question {question} has no answer")]
    Incomplete {
        /// The question index.
        question: usize,
    },
}

/// One ask in flight, as a state machine.
///
/// Build it with [`AskLifecycle::new`], feed it with
/// [`AskLifecycle::handle`] and [`AskLifecycle::tick`], persist it with
/// [`AskLifecycle::to_parts`].
#[derive(Debug, Clone)]
pub struct AskLifecycle {
    id: String,
    ask: Ask,
    created_at: Timestamp,
    deadline: Timestamp,
    state: State,
    answers: Vec<Option<Answer>>,
    matcher: AskMatcher,
}

impl AskLifecycle {
    /// A new pending ask with no answers; the deadline is `created_at`
    /// plus the ask's timeout.
    pub fn new(id: impl Into<String>, ask: Ask, created_at: Timestamp) -> AskLifecycle {
        let answers = vec![None; ask.questions.len()];
        AskLifecycle::assemble(id.into(), ask, created_at, State::Pending, answers)
    }

    /// Rebuilds a machine from its persisted parts; it behaves exactly like
    /// the one [`AskLifecycle::to_parts`] was taken from.
    pub fn from_parts(parts: AskParts) -> Result<AskLifecycle, RebuildError> {
        let AskParts {
            id,
            ask,
            created_at,
            state,
            answers,
        } = parts;
        if answers.len() != ask.questions.len() {
            return Err(RebuildError::AnswerCount {
                expected: ask.questions.len(),
                got: answers.len(),
            });
        }
        for (index, (question, answer)) in ask.questions.iter().zip(&answers).enumerate() {
            match answer {
                Some(answer) => check_answer(index, question, answer).map_err(|problem| {
                    RebuildError::BadAnswer {
                        question: index,
                        problem,
                    }
                })?,
                None if matches!(state, State::Answered { .. } | State::Overtaken { .. }) => {
                    return Err(RebuildError::Incomplete { question: index });
                }
                None => {}
            }
        }
        Ok(AskLifecycle::assemble(id, ask, created_at, state, answers))
    }

    fn assemble(
        id: String,
        ask: Ask,
        created_at: Timestamp,
        state: State,
        answers: Vec<Option<Answer>>,
    ) -> AskLifecycle {
        let deadline = created_at.saturating_add_secs(u64::from(ask.timeout_seconds));
        let matcher = AskMatcher::new(&ask);
        AskLifecycle {
            id,
            ask,
            created_at,
            deadline,
            state,
            answers,
            matcher,
        }
    }

    /// The persisted form of this machine.
    pub fn to_parts(&self) -> AskParts {
        AskParts {
            id: self.id.clone(),
            ask: self.ask.clone(),
            created_at: self.created_at,
            state: self.state.clone(),
            answers: self.answers.clone(),
        }
    }

    /// The ask id given at creation.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// The ask.
    pub fn ask(&self) -> &Ask {
        &self.ask
    }

    /// When the ask was created.
    pub fn created_at(&self) -> Timestamp {
        self.created_at
    }

    /// When the ask times out: `created_at` plus the timeout. An input at
    /// this instant is already too late.
    pub fn deadline(&self) -> Timestamp {
        self.deadline
    }

    /// When the next reminder is due, `sent` having been sent: `None` when
    /// the ask asks for no more, or has ended.
    pub fn next_reminder(&self, sent: u32) -> Option<Timestamp> {
        let remind = self.ask.remind.as_ref()?;
        if !self.state.is_pending() {
            return None;
        }
        remind.at(sent, self.created_at, self.deadline)
    }

    /// Whether a reminder is due at `now`, `sent` having been sent: the
    /// ask is still open and the next reminder's time has come.
    pub fn reminder_due(&self, sent: u32, now: Timestamp) -> bool {
        now < self.deadline && self.next_reminder(sent).is_some_and(|at| at <= now)
    }

    /// The places a reminder sent at `now` goes to, by number: those the
    /// ask is posted in by then. A place passed on to later is not
    /// reminded of what it has not seen: it gets the ask itself at its
    /// time.
    pub fn reminded_places(&self, now: Timestamp) -> Vec<usize> {
        (0..self.ask.places().count())
            .filter(|place| {
                self.ask
                    .place_due(*place, self.created_at)
                    .is_none_or(|due| due <= now)
            })
            .collect()
    }

    /// When [`AskLifecycle::tick`] should next be called: the deadline
    /// while pending, `None` once ended.
    pub fn poll_timeout(&self) -> Option<Timestamp> {
        self.state.is_pending().then_some(self.deadline)
    }

    /// The current state.
    pub fn state(&self) -> &State {
        &self.state
    }

    /// The answers so far, one entry per question.
    pub fn answers(&self) -> &[Option<Answer>] {
        &self.answers
    }

    /// Questions without an answer yet (indices, ascending).
    pub fn open_questions(&self) -> Vec<usize> {
        self.answers
            .iter()
            .enumerate()
            .filter(|(_, answer)| answer.is_none())
            .map(|(index, _)| index)
            .collect()
    }

    /// Whether this person may answer the ask: the core's one rule,
    /// [`Ask::may_answer`].
    pub fn may_answer(&self, from: &Responder, admitted: bool) -> bool {
        self.ask.may_answer(from, admitted)
    }

    /// The outcome, once the ask has ended; `None` while pending. It is a
    /// function of the parts, so a rebuilt machine gives the same outcome.
    pub fn outcome(&self) -> Option<Outcome> {
        let (reason, failure, by, at) = match &self.state {
            State::Pending => return None,
            State::Answered { by, at } => (None, None, Some(by.clone()), *at),
            State::Skipped { by, at } => (Some(Reason::Skipped), None, Some(by.clone()), *at),
            State::TimedOut => (Some(Reason::Timeout), None, None, self.deadline),
            State::Cancelled { at, .. } | State::Overtaken { at, .. } => {
                (Some(Reason::Cancelled), None, None, *at)
            }
            State::DeliveryFailed { reason, at } => (
                Some(Reason::DeliveryFailed),
                Some(reason.clone()),
                None,
                *at,
            ),
        };
        // A late answer decided nothing: not presented as given.
        let given = match self.state {
            State::Overtaken { .. } => Vec::new(),
            _ => self.given(),
        };
        let ending = Ending {
            reason,
            failure,
            by,
            at,
        };
        Some(outcome::build(&self.id, &self.ask, &given, ending))
    }

    /// The answers given, question by question.
    fn given(&self) -> Vec<Given<'_>> {
        self.ask
            .questions
            .iter()
            .zip(&self.answers)
            .filter_map(|(question, answer)| {
                answer.as_ref().map(|answer| Given {
                    question,
                    options: &answer.options,
                    text: answer.text.as_deref(),
                    via: answer.via,
                })
            })
            .collect()
    }

    /// The agent's host shows, after the ask was answered here, that it
    /// had decided in its own prompt first (a coding agent's call ran
    /// although the answer here refused it): an answered ask becomes
    /// [`State::Overtaken`], its outcome a cancelled one. Whether it
    /// changed: only an answered ask is overtaken.
    pub fn overtake(&mut self, now: Timestamp) -> bool {
        let State::Answered { by, at } = &self.state else {
            return false;
        };
        self.state = State::Overtaken {
            by: by.clone(),
            answered_at: *at,
            at: now,
        };
        true
    }

    /// What the answer given here said, for an overtaken ask: the outcome
    /// it made when it was given. `None` for any other state.
    pub fn late_outcome(&self) -> Option<Outcome> {
        let State::Overtaken {
            by, answered_at, ..
        } = &self.state
        else {
            return None;
        };
        let ending = Ending {
            reason: None,
            failure: None,
            by: Some(by.clone()),
            at: *answered_at,
        };
        Some(outcome::build(&self.id, &self.ask, &self.given(), ending))
    }

    /// Times the ask out if it is pending and `now` has reached the
    /// deadline; returns the outcome when it did.
    pub fn tick(&mut self, now: Timestamp) -> Option<Outcome> {
        if self.state.is_pending() && now >= self.deadline {
            self.state = State::TimedOut;
            self.outcome()
        } else {
            None
        }
    }

    /// Applies one input at time `now` (see the module docs for the rules).
    pub fn handle(&mut self, input: Input, now: Timestamp) -> Step {
        if let Some(outcome) = self.tick(now) {
            return Step::Finished(outcome);
        }
        match input {
            Input::Cancel => self.end(State::Cancelled {
                at: now,
                in_host: false,
            }),
            Input::AnsweredInHost => self.end(State::Cancelled {
                at: now,
                in_host: true,
            }),
            Input::DeliveryFailed { reason } => self.end(State::DeliveryFailed { reason, at: now }),
            Input::Reply {
                from,
                admitted,
                text,
                unknown_items,
            } => match self.gate(&from, admitted) {
                Some(rejection) => Step::Rejected(rejection),
                None => self.reply(from, &text, unknown_items, now),
            },
            Input::Pick {
                from,
                admitted,
                question,
                options,
                via,
            } => match self.gate(&from, admitted) {
                Some(rejection) => Step::Rejected(rejection),
                None => match self.pick(question, options, via) {
                    Ok(answer) => self.apply(vec![(question, answer)], Vec::new(), from, now),
                    Err(invalid) => Step::Rejected(Rejection::Invalid(invalid)),
                },
            },
            Input::Other {
                from,
                admitted,
                question,
                text,
                via,
            } => match self.gate(&from, admitted) {
                Some(rejection) => Step::Rejected(rejection),
                None => match self.other(question, &text, via) {
                    Ok(answer) => self.apply(vec![(question, answer)], Vec::new(), from, now),
                    Err(invalid) => Step::Rejected(Rejection::Invalid(invalid)),
                },
            },
            Input::Answers {
                from,
                admitted,
                answers,
                via,
            } => match self.gate(&from, admitted) {
                Some(rejection) => Step::Rejected(rejection),
                None => match self.structured(answers, via) {
                    Ok(given) => self.apply(given, Vec::new(), from, now),
                    Err(invalid) => Step::Rejected(Rejection::Invalid(invalid)),
                },
            },
            Input::Skip { from, admitted } => match self.gate(&from, admitted) {
                Some(rejection) => Step::Rejected(rejection),
                None => self.end(State::Skipped { by: from, at: now }),
            },
        }
    }

    /// `from` with the place of the ask they answered in
    /// ([`Ask::place_on`]: a web reply's is the web page); none for the
    /// agent host's dialog, which is no place.
    fn placed(&self, mut from: Responder) -> Responder {
        if from.place.is_none() {
            let place = if self.ask.approval {
                self.ask.approvers_place(&from)
            } else {
                self.ask.place_on(&from)
            };
            from.place = place.map(|target| target.place.clone());
        }
        from
    }

    /// Rejects a person who may not answer, or any input once ended.
    fn gate(&self, from: &Responder, admitted: bool) -> Option<Rejection> {
        if !self.may_answer(from, admitted) {
            Some(Rejection::NotForYou)
        } else if !self.state.is_pending() {
            Some(Rejection::AlreadyEnded(self.state.clone()))
        } else {
            None
        }
    }

    /// Moves a pending ask to a terminal state; who ended it is recorded
    /// with the place they answered in ([`AskLifecycle::placed`]).
    fn end(&mut self, state: State) -> Step {
        if !self.state.is_pending() {
            return Step::Rejected(Rejection::AlreadyEnded(self.state.clone()));
        }
        self.state = match state {
            State::Answered { by, at } => State::Answered {
                by: self.placed(by),
                at,
            },
            State::Skipped { by, at } => State::Skipped {
                by: self.placed(by),
                at,
            },
            other => other,
        };
        match self.outcome() {
            Some(outcome) => Step::Finished(outcome),
            // Unreachable: a terminal state always has an outcome.
            None => Step::Rejected(Rejection::AlreadyEnded(self.state.clone())),
        }
    }

    /// Stores answers, then ends the ask if every question has one.
    fn apply(
        &mut self,
        given: Vec<(usize, Answer)>,
        clarify: Vec<Clarify>,
        from: Responder,
        now: Timestamp,
    ) -> Step {
        let mut answered = Vec::with_capacity(given.len());
        for (index, answer) in given {
            if let Some(slot) = self.answers.get_mut(index) {
                *slot = Some(answer);
                answered.push(index);
            }
        }
        answered.sort_unstable();
        answered.dedup();
        let complete = !self.answers.is_empty() && self.answers.iter().all(Option::is_some);
        if complete {
            let all_skipped = self.answers.iter().flatten().all(Answer::is_skipped);
            return if all_skipped {
                self.end(State::Skipped { by: from, at: now })
            } else {
                self.end(State::Answered { by: from, at: now })
            };
        }
        let still_open = self.open_questions();
        let clarify = clarify
            .into_iter()
            .filter(|c| still_open.contains(&c.question))
            .collect();
        Step::Progress(Progress {
            answered,
            still_open,
            clarify,
            unknown: Vec::new(),
        })
    }

    fn question(&self, index: usize) -> Result<&Question, Invalid> {
        self.ask
            .questions
            .get(index)
            .ok_or(Invalid::NoSuchQuestion { question: index })
    }

    /// A button or select pick.
    fn pick(&self, index: usize, mut options: Vec<usize>, via: Via) -> Result<Answer, Invalid> {
        let question = self.question(index)?;
        let count = option_count(question);
        if count == 0 {
            return Err(Invalid::NotAChoice { question: index });
        }
        options.sort_unstable();
        options.dedup();
        if let Some(&option) = options.iter().find(|&&option| option >= count) {
            return Err(Invalid::NoSuchOption {
                question: index,
                option,
            });
        }
        match options.len() {
            0 => Err(Invalid::NothingPicked { question: index }),
            1 => Ok(Answer {
                options,
                text: None,
                via,
            }),
            _ if question.kind == QuestionKind::Multi => Ok(Answer {
                options,
                text: None,
                via,
            }),
            _ => Err(Invalid::SeveralPicks { question: index }),
        }
    }

    /// "Other" text or the answer of a text question.
    fn other(&self, index: usize, text: &str, via: Via) -> Result<Answer, Invalid> {
        let question = self.question(index)?;
        let text = text.trim();
        if text.is_empty() {
            return Err(Invalid::EmptyText { question: index });
        }
        Ok(match match_option(question, text) {
            Some(option) => Answer {
                options: vec![option],
                text: None,
                via,
            },
            None => Answer {
                options: Vec::new(),
                text: Some(text.to_owned()),
                via,
            },
        })
    }

    /// Structured answers by question id, validated whole.
    fn structured(
        &self,
        answers: Vec<(String, Vec<String>)>,
        via: Via,
    ) -> Result<Vec<(usize, Answer)>, Invalid> {
        if answers.is_empty() {
            return Err(Invalid::NoAnswers);
        }
        let mut given: Vec<(usize, Answer)> = Vec::with_capacity(answers.len());
        for (id, values) in answers {
            let Some(index) = self.ask.questions.iter().position(|q| q.id == id) else {
                return Err(Invalid::UnknownQuestion { id });
            };
            if given.iter().any(|(seen, _)| *seen == index) {
                return Err(Invalid::DuplicateQuestion { id });
            }
            let question = &self.ask.questions[index];
            given.push((index, structured_answer(question, &values, via)?));
        }
        Ok(given)
    }

    /// A typed reply to the whole ask.
    fn reply(
        &mut self,
        from: Responder,
        text: &str,
        unknown_items: UnknownItems,
        now: Timestamp,
    ) -> Step {
        let open = self.open_questions();
        let unknown: Vec<Unknown> = match unknown_items {
            UnknownItems::OwnWords => Vec::new(),
            UnknownItems::AskBack => self
                .matcher
                .unknown_items(text, &open)
                .into_iter()
                .map(|(question, items)| Unknown { question, items })
                .collect(),
        };
        let mut given = Vec::new();
        let mut clarify = Vec::new();
        let mut skip_whole = false;
        let mut seen = Vec::new();
        for (index, resolution) in self.matcher.resolve(text, &open) {
            if !open.contains(&index) || seen.contains(&index) {
                continue;
            }
            seen.push(index);
            let Some(question) = self.ask.questions.get(index) else {
                continue;
            };
            if unknown.iter().any(|u| u.question == index) {
                continue;
            }
            match typed_answer(question, resolution) {
                Typed::Answer(answer) => given.push((index, answer)),
                Typed::Clarify(options) => clarify.push(Clarify {
                    question: index,
                    candidates: options
                        .iter()
                        .map(|&option| option_label(question, option).to_owned())
                        .collect(),
                    options,
                }),
                Typed::Skip if question.required => skip_whole = true,
                Typed::Skip => given.push((index, Answer::skipped(Via::Text))),
                Typed::Nothing => {}
            }
        }
        if skip_whole {
            // A required question cannot be skipped alone: the person wants
            // out of the whole ask. Answers given in the same reply are kept
            // and reported with the outcome.
            for (index, answer) in given {
                if let Some(slot) = self.answers.get_mut(index) {
                    *slot = Some(answer);
                }
            }
            return self.end(State::Skipped { by: from, at: now });
        }
        match self.apply(given, clarify, from, now) {
            Step::Progress(progress) => Step::Progress(Progress {
                unknown,
                ..progress
            }),
            step => step,
        }
    }
}

/// How a resolver result lands on one question.
enum Typed {
    Answer(Answer),
    Clarify(Vec<usize>),
    Skip,
    Nothing,
}

fn typed_answer(question: &Question, resolution: Resolution) -> Typed {
    let count = option_count(question);
    let valid = |options: Vec<usize>| -> Option<Vec<usize>> {
        let mut options = options;
        options.sort_unstable();
        options.dedup();
        (!options.is_empty() && options.iter().all(|&o| o < count)).then_some(options)
    };
    let chosen = |options: Vec<usize>| {
        Typed::Answer(Answer {
            options,
            text: None,
            via: Via::Text,
        })
    };
    match resolution {
        Resolution::Choice(option) => match valid(vec![option]) {
            Some(options) => chosen(options),
            None => Typed::Nothing,
        },
        Resolution::Choices(options) => match valid(options) {
            Some(options) if options.len() == 1 || question.kind == QuestionKind::Multi => {
                chosen(options)
            }
            Some(options) => Typed::Clarify(options),
            None => Typed::Nothing,
        },
        Resolution::Ambiguous(options) => match valid(options) {
            Some(options) => Typed::Clarify(options),
            None => Typed::Nothing,
        },
        Resolution::FreeText(text) => {
            let text = text.trim();
            if text.is_empty() {
                Typed::Nothing
            } else {
                Typed::Answer(Answer {
                    options: Vec::new(),
                    text: Some(text.to_owned()),
                    via: Via::Text,
                })
            }
        }
        Resolution::Skip => Typed::Skip,
    }
}

fn structured_answer(question: &Question, values: &[String], via: Via) -> Result<Answer, Invalid> {
    let values: Vec<&str> = values
        .iter()
        .map(|value| value.trim())
        .filter(|value| !value.is_empty())
        .collect();
    if values.is_empty() {
        return if question.required {
            Err(Invalid::Required {
                id: question.id.clone(),
            })
        } else {
            Ok(Answer::skipped(via))
        };
    }
    if question.kind != QuestionKind::Multi && values.len() > 1 {
        return Err(Invalid::SeveralAnswers {
            id: question.id.clone(),
            got: values.len(),
        });
    }
    let mut options = Vec::new();
    let mut own = Vec::new();
    for value in values {
        match match_option(question, value) {
            Some(option) => options.push(option),
            None => own.push(value),
        }
    }
    if own.len() > 1 {
        return Err(Invalid::SeveralOwnAnswers {
            id: question.id.clone(),
            got: own.len(),
        });
    }
    options.sort_unstable();
    options.dedup();
    Ok(Answer {
        options,
        text: own.first().map(|text| (*text).to_owned()),
        via,
    })
}

/// Number of options to pick from: the choices, 2 for confirm, 0 for text.
fn option_count(question: &Question) -> usize {
    match question.kind {
        QuestionKind::Single | QuestionKind::Multi => question.options.len(),
        QuestionKind::Confirm => 2,
        QuestionKind::Text | QuestionKind::Textarea => 0,
    }
}

/// Text that names an option exactly: a label (NFKC, case-insensitive,
/// ignoring the "(Recommended)" marker), else a value; for confirm the
/// words yes/no/true/false/y/n. Text questions have no options.
fn match_option(question: &Question, text: &str) -> Option<usize> {
    let wanted = label_key(text);
    match question.kind {
        QuestionKind::Confirm => match wanted.as_str() {
            "yes" | "y" | "true" => Some(0),
            "no" | "n" | "false" => Some(1),
            _ => None,
        },
        QuestionKind::Single | QuestionKind::Multi => question
            .options
            .iter()
            .position(|choice| label_key(&choice.label) == wanted)
            .or_else(|| {
                question.options.iter().position(|choice| {
                    choice
                        .value
                        .as_deref()
                        .is_some_and(|v| label_key(v) == wanted)
                })
            }),
        QuestionKind::Text | QuestionKind::Textarea => None,
    }
}

/// Whether a stored answer fits its question.
fn check_answer(index: usize, question: &Question, answer: &Answer) -> Result<(), Invalid> {
    if answer.text.as_deref().is_some_and(|t| t.trim().is_empty()) {
        return Err(Invalid::EmptyText { question: index });
    }
    if answer.is_skipped() && question.required {
        return Err(Invalid::Required {
            id: question.id.clone(),
        });
    }
    let count = option_count(question);
    if count == 0 && !answer.options.is_empty() {
        return Err(Invalid::NotAChoice { question: index });
    }
    if let Some(&option) = answer.options.iter().find(|&&option| option >= count) {
        return Err(Invalid::NoSuchOption {
            question: index,
            option,
        });
    }
    if !answer.options.windows(2).all(|pair| pair[0] < pair[1]) {
        return Err(Invalid::UnsortedOptions { question: index });
    }
    let several = answer.options.len() + usize::from(answer.text.is_some()) > 1;
    if several && question.kind != QuestionKind::Multi {
        return Err(Invalid::SeveralPicks { question: index });
    }
    Ok(())
}

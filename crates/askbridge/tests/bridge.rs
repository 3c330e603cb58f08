//! The lifecycle driver and the store under it, against both backends:
//! answers, restarts, deadlines, races between tasks and between bridges
//! sharing a database, idempotency, partial answers, delivery, leases and
//! announcements between instances.
//!
//! This is the store contract's one suite: every test is a function of a
//! [`Scratch`] database, run once on a SQLite file and once on a fresh
//! Postgres database (`mod sqlite` and `mod postgres`, made by
//! `on_both_backends!` at the end). A behaviour that holds on one and not
//! the other fails here.
//!
//! Time is a manual [`Clock`]: tests move it, nothing sleeps.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use askbridge::bridge::channel::BoxFuture;
use askbridge::bridge::{
    AskView, Bridge, BridgeError, BridgeEvent, BridgeOptions, Channel, Clock, ListFilter,
    MessageRef, NewAsk, RetryPolicy, Tuning,
};
use askbridge::store::{LeaseTaken, Store};
use askbridge_core::failure::PlatformFailure;
use askbridge_core::lifecycle::{Input, Rejection, State, Step, UnknownItems};
use askbridge_core::model::Responder;
use askbridge_core::model::Timestamp;
use askbridge_core::model::{Ask, ChannelKind, Target};
use askbridge_core::normalize::normalize_json;
use askbridge_core::outcome::{Reason, Status, Via};
use serde_json::json;
use sqlx::Connection;
use tokio::sync::watch;

mod db;

use db::Scratch;

// ---------------------------------------------------------------------
// Support
// ---------------------------------------------------------------------

/// 2027-01-15T08:00:00Z.
const START: Timestamp = Timestamp(1_800_000_000_000);

fn tuning(clock: &Clock) -> Tuning {
    Tuning {
        clock: clock.clone(),
        retry: RetryPolicy {
            attempts: 4,
            first_backoff: Duration::ZERO,
            max_backoff: Duration::ZERO,
            rate_limited_waits: 100,
        },
        ..Tuning::default()
    }
}

/// A bridge on `db` with a web channel, on `clock`.
async fn open(db: &Scratch, clock: &Clock) -> Bridge {
    let bridge = open_bare(db, clock).await;
    bridge.add_channel(Arc::new(WebChannel));
    bridge
}

/// A bridge on `db` with no channel.
async fn open_bare(db: &Scratch, clock: &Clock) -> Bridge {
    let target = Target::parse("web").expect("web target");
    Bridge::open_with(BridgeOptions::new(db.url(), target), tuning(clock))
        .await
        .expect("open the bridge")
}

/// A bridge on `db` with a web channel that keeps no lifecycle in memory
/// between inputs: every path reads the database.
async fn open_uncached(db: &Scratch, clock: &Clock) -> Bridge {
    let target = Target::parse("web").expect("web target");
    let tuning = Tuning {
        cached_lifecycles: 0,
        ..tuning(clock)
    };
    let bridge = Bridge::open_with(BridgeOptions::new(db.url(), target), tuning)
        .await
        .expect("open the bridge");
    bridge.add_channel(Arc::new(WebChannel));
    bridge
}

/// Leaves a bridge without any shutdown: no destructor runs, connections
/// stay as they are (the closest an in-process test gets to kill -9). Its
/// clock must not move afterwards, so its timer never fires.
fn crash(bridge: Bridge) {
    std::mem::forget(bridge);
}

fn ask(value: serde_json::Value) -> Ask {
    normalize_json(&value).expect("a valid ask").ask
}

/// One single-choice question.
fn deploy_ask(timeout: u32) -> Ask {
    ask(json!({
        "title": "Release",
        "timeoutSeconds": timeout,
        "questions": [{
            "id": "deploy", "header": "Deploy", "question": "Where?",
            "options": ["Staging", "Production"]
        }]
    }))
}

/// A choice and a text question.
fn two_question_ask() -> Ask {
    ask(json!({
        "title": "Release",
        "questions": [
            {"id": "deploy", "header": "Deploy", "question": "Where?", "options": ["Staging", "Production"]},
            {"id": "notes", "header": "Notes", "question": "Anything to add?", "type": "text"}
        ]
    }))
}

async fn create(bridge: &Bridge, ask: Ask) -> AskView {
    let (view, created) = bridge
        .create(NewAsk {
            ask,
            idempotency_key: None,
        })
        .await
        .expect("create");
    assert!(created);
    view
}

fn person(user: &str) -> Responder {
    Responder {
        channel: ChannelKind::Web,
        user_id: user.to_owned(),
        name: None,
        place: None,
    }
}

fn pick(user: &str, option: usize) -> Input {
    Input::Pick {
        from: person(user),
        admitted: true,
        question: 0,
        options: vec![option],
        via: Via::Button,
    }
}

fn reply(user: &str, text: &str) -> Input {
    Input::Reply {
        from: person(user),
        admitted: true,
        text: text.to_owned(),
        unknown_items: UnknownItems::OwnWords,
    }
}

fn answers(view: &AskView) -> Vec<(String, Vec<String>)> {
    view.outcome.as_ref().expect("an outcome").answers.clone()
}

/// The web channel: the page listens to events, so delivery is a no-op.
#[derive(Debug)]
struct WebChannel;

impl Channel for WebChannel {
    fn kind(&self) -> ChannelKind {
        ChannelKind::Web
    }
    fn deliver<'a>(
        &'a self,
        _: &'a AskView,
        _: usize,
    ) -> BoxFuture<'a, Result<(), PlatformFailure>> {
        Box::pin(async { Ok(()) })
    }
    fn update<'a>(
        &'a self,
        _: &'a AskView,
        _: usize,
    ) -> BoxFuture<'a, Result<(), PlatformFailure>> {
        Box::pin(async { Ok(()) })
    }
    fn end<'a>(&'a self, _: &'a AskView, _: usize) -> BoxFuture<'a, Result<(), PlatformFailure>> {
        Box::pin(async { Ok(()) })
    }
}

/// A channel that answers deliveries from a script and records every
/// call as `deliver <id>`, `update <id>`, `end <id> <state>` (the ask's
/// id followed by `#<place>` for a place after its first).
#[derive(Debug)]
struct ScriptedChannel {
    kind: ChannelKind,
    script: Mutex<Vec<Result<(), PlatformFailure>>>,
    calls: watch::Sender<Vec<String>>,
}

impl ScriptedChannel {
    /// Delivery results in order; `Ok` once the script runs out.
    fn new(kind: ChannelKind, script: Vec<Result<(), PlatformFailure>>) -> Arc<ScriptedChannel> {
        Arc::new(ScriptedChannel {
            kind,
            script: Mutex::new(script.into_iter().rev().collect()),
            calls: watch::Sender::new(Vec::new()),
        })
    }

    fn record(&self, call: String) {
        self.calls.send_modify(|calls| calls.push(call));
    }

    /// The calls made so far.
    fn calls_now(&self) -> Vec<String> {
        self.calls.borrow().clone()
    }

    /// Waits until `n` calls have been made; returns them all.
    async fn calls(&self, n: usize) -> Vec<String> {
        let mut rx = self.calls.subscribe();
        rx.wait_for(|calls| calls.len() >= n)
            .await
            .expect("channel alive")
            .clone()
    }
}

impl Channel for ScriptedChannel {
    fn kind(&self) -> ChannelKind {
        self.kind
    }
    fn deliver<'a>(
        &'a self,
        ask: &'a AskView,
        place: usize,
    ) -> BoxFuture<'a, Result<(), PlatformFailure>> {
        let result = self.script.lock().expect("script").pop().unwrap_or(Ok(()));
        self.record(format!("deliver {}", at_place(ask, place)));
        Box::pin(async move { result })
    }
    fn update<'a>(
        &'a self,
        ask: &'a AskView,
        place: usize,
    ) -> BoxFuture<'a, Result<(), PlatformFailure>> {
        self.record(format!("update {}", at_place(ask, place)));
        Box::pin(async { Ok(()) })
    }
    fn end<'a>(
        &'a self,
        ask: &'a AskView,
        place: usize,
    ) -> BoxFuture<'a, Result<(), PlatformFailure>> {
        self.record(format!(
            "end {} {}",
            at_place(ask, place),
            ask.state.as_str()
        ));
        Box::pin(async { Ok(()) })
    }
    fn remind<'a>(
        &'a self,
        ask: &'a AskView,
        place: usize,
        number: u32,
    ) -> BoxFuture<'a, Result<(), PlatformFailure>> {
        let result = self.script.lock().expect("script").pop().unwrap_or(Ok(()));
        self.record(format!("remind {} {number}", at_place(ask, place)));
        Box::pin(async move { result })
    }
}

/// The ask's id, with `#<place>` after it for a place after its first.
fn at_place(ask: &AskView, place: usize) -> String {
    if place == 0 {
        ask.id.clone()
    } else {
        format!("{}#{place}", ask.id)
    }
}

// ---------------------------------------------------------------------
// Answers
// ---------------------------------------------------------------------

async fn first_answer_finishes_the_ask_and_later_replies_are_already_ended(db: Scratch) {
    let clock = Clock::manual(START);
    let bridge = open(&db, &clock).await;

    let created = create(&bridge, deploy_ask(900)).await;
    assert!(created.id.starts_with("ask_"));
    assert_eq!(created.id.len(), "ask_".len() + 32);
    assert_eq!(created.created_at, START);
    assert_eq!(created.deadline, START.saturating_add_secs(900));
    assert_eq!(created.target, Target::parse("web").expect("web"));

    let got = bridge.get(&created.id).await.expect("get");
    assert_eq!(got.state, State::Pending);
    assert!(got.outcome.is_none());

    let waiter = tokio::spawn({
        let bridge = bridge.clone();
        let id = created.id.clone();
        async move { bridge.wait(&id, Duration::from_secs(3_600)).await }
    });

    clock.advance(Duration::from_secs(5));
    let (step, view) = bridge
        .handle(&created.id, pick("alice", 1))
        .await
        .expect("handle");
    let Step::Finished(outcome) = step else {
        panic!("expected Finished, got {step:?}");
    };
    assert_eq!(outcome.status, Status::Answered);
    assert_eq!(
        outcome.answers,
        [("deploy".to_owned(), vec!["Production".to_owned()])]
    );
    assert!(
        matches!(view.state, State::Answered { ref by, at } if by.user_id == "alice" && at == START.saturating_add_secs(5))
    );

    let waited = waiter.await.expect("waiter").expect("wait");
    assert_eq!(waited.outcome, Some(outcome));

    let (late, after) = bridge
        .handle(&created.id, reply("bob", "staging"))
        .await
        .expect("late reply");
    assert!(
        matches!(
            late,
            Step::Rejected(Rejection::AlreadyEnded(State::Answered { .. }))
        ),
        "{late:?}"
    );
    assert_eq!(
        answers(&after),
        [("deploy".to_owned(), vec!["Production".to_owned()])]
    );

    let metrics = bridge.metrics();
    assert_eq!(metrics.created, 1);
    assert_eq!(metrics.pending, 0);
    assert!(metrics.ended.contains(&("answered", 1)));
}

#[tokio::test]
async fn an_in_memory_database_works_for_tests_that_need_no_file() {
    let clock = Clock::manual(START);
    let target = Target::parse("web").expect("web target");
    let bridge = Bridge::open_with(
        BridgeOptions::new("sqlite::memory:", target),
        tuning(&clock),
    )
    .await
    .expect("open");
    bridge.add_channel(Arc::new(WebChannel));
    let created = create(&bridge, deploy_ask(900)).await;
    let (step, _) = bridge
        .handle(&created.id, pick("alice", 0))
        .await
        .expect("pick");
    assert!(matches!(step, Step::Finished(_)), "{step:?}");
    let listed = bridge.list(ListFilter::default()).await.expect("list");
    assert_eq!(listed.len(), 1);
}

async fn unknown_ids_are_not_found(db: Scratch) {
    let clock = Clock::manual(START);
    let bridge = open(&db, &clock).await;
    assert!(
        matches!(bridge.get("ask_nope").await, Err(BridgeError::NotFound(id)) if id == "ask_nope")
    );
    assert!(matches!(
        bridge.handle("ask_nope", Input::Cancel).await,
        Err(BridgeError::NotFound(_))
    ));
    assert!(matches!(
        bridge.wait("ask_nope", Duration::ZERO).await,
        Err(BridgeError::NotFound(_))
    ));
}

async fn cancel_ends_a_pending_ask_and_returns_an_ended_one_as_is(db: Scratch) {
    let clock = Clock::manual(START);
    let bridge = open(&db, &clock).await;
    let created = create(&bridge, deploy_ask(900)).await;

    let cancelled = bridge.cancel(&created.id).await.expect("cancel");
    assert_eq!(
        cancelled.state,
        State::Cancelled {
            at: START,
            in_host: false
        }
    );
    let outcome = cancelled.outcome.expect("outcome");
    assert_eq!(
        (outcome.status, outcome.reason),
        (Status::NoAnswer, Some(Reason::Cancelled))
    );

    clock.advance(Duration::from_secs(1));
    let again = bridge.cancel(&created.id).await.expect("cancel again");
    assert_eq!(
        again.state,
        State::Cancelled {
            at: START,
            in_host: false
        }
    );
}

async fn an_answer_the_host_overtook_is_stored_as_too_late_and_survives_a_restart(db: Scratch) {
    let clock = Clock::manual(START);
    let bridge = open(&db, &clock).await;
    let created = create(&bridge, deploy_ask(900)).await;
    let (step, answered) = bridge
        .handle(&created.id, pick("alice", 1))
        .await
        .expect("answer");
    assert!(matches!(step, Step::Finished(_)), "{step:?}");
    let given = answered.outcome.expect("an outcome");

    // The agent's host shows it had decided first.
    clock.advance(Duration::from_secs(3));
    let overtaken = bridge
        .end(&created.id, Input::AnsweredInHost)
        .await
        .expect("overtaken");
    let late_at = START.saturating_add_secs(3);
    let expected = State::Overtaken {
        by: given.answered_by.clone().expect("who answered"),
        answered_at: START,
        at: late_at,
    };
    assert_eq!(overtaken.state, expected);
    let outcome = overtaken.outcome.expect("an outcome");
    assert_eq!(
        (outcome.status, outcome.reason, outcome.answers.len()),
        (Status::NoAnswer, Some(Reason::Cancelled), 0)
    );
    assert_eq!(
        overtaken.late.expect("the late answer").answers,
        given.answers
    );

    // Once: the agent's cancel and the host again change nothing.
    clock.advance(Duration::from_secs(1));
    for input in [Input::Cancel, Input::AnsweredInHost] {
        let again = bridge.end(&created.id, input).await.expect("as is");
        assert_eq!(again.state, expected);
    }
    // As stored.
    crash(bridge);
    let reopened = open(&db, &clock).await;
    let read = reopened.get(&created.id).await.expect("read");
    assert_eq!(read.state, expected);
    assert_eq!(read.late.expect("the late answer").answers, given.answers);
}

async fn asks_without_a_target_go_to_the_default_and_named_users_are_enforced(db: Scratch) {
    let clock = Clock::manual(START);
    let bridge = open(&db, &clock).await;

    let mut only_alice = deploy_ask(900);
    only_alice.target = Some(Target::parse("web@alice").expect("target"));
    let created = create(&bridge, only_alice).await;
    assert_eq!(created.target, Target::parse("web@alice").expect("target"));

    let (step, _) = bridge
        .handle(&created.id, pick("mallory", 0))
        .await
        .expect("handle");
    assert_eq!(step, Step::Rejected(Rejection::NotForYou));
    let (step, _) = bridge
        .handle(&created.id, pick("alice", 0))
        .await
        .expect("handle");
    assert!(matches!(step, Step::Finished(_)), "{step:?}");
}

async fn with_no_lifecycle_kept_in_memory_every_path_reads_the_database(db: Scratch) {
    let clock = Clock::manual(START);
    let bridge = open_uncached(&db, &clock).await;
    let two = create(&bridge, two_question_ask()).await;
    let short = create(&bridge, deploy_ask(30)).await;
    let raced = create(&bridge, deploy_ask(900)).await;

    assert_eq!(
        bridge.get(&two.id).await.expect("get").state,
        State::Pending
    );
    let (step, _) = bridge
        .handle(&two.id, pick("alice", 0))
        .await
        .expect("pick");
    assert!(matches!(step, Step::Progress(_)), "{step:?}");
    let listed = bridge
        .list(ListFilter {
            pending_only: true,
            ..ListFilter::default()
        })
        .await
        .expect("list");
    assert_eq!(listed.len(), 3);
    assert!(
        listed
            .iter()
            .any(|v| v.id == two.id && v.answers[0].is_some())
    );

    let waiter = tokio::spawn({
        let bridge = bridge.clone();
        let id = two.id.clone();
        async move { bridge.wait(&id, Duration::from_secs(600)).await }
    });
    let (step, _) = bridge
        .handle(&two.id, reply("alice", "all good"))
        .await
        .expect("reply");
    assert!(matches!(step, Step::Finished(_)), "{step:?}");
    let waited = waiter.await.expect("waiter").expect("wait");
    assert_eq!(
        answers(&waited),
        [
            ("deploy".to_owned(), vec!["Staging".to_owned()]),
            ("notes".to_owned(), vec!["all good".to_owned()]),
        ]
    );

    let steps = race(std::slice::from_ref(&bridge), &raced.id, 16).await;
    exactly_one_winner(&steps);

    clock.advance(Duration::from_secs(30));
    let expired = bridge
        .wait(&short.id, Duration::from_secs(600))
        .await
        .expect("wait");
    assert_eq!(expired.state, State::TimedOut);
    assert_eq!(bridge.metrics().pending, 0);
}

// ---------------------------------------------------------------------
// Restarts
// ---------------------------------------------------------------------

async fn pending_asks_survive_a_crash_and_expired_ones_end_timed_out_on_open(db: Scratch) {
    let clock_a = Clock::manual(START);
    let a = open(&db, &clock_a).await;
    let short = create(&a, deploy_ask(30)).await;
    let long = create(&a, deploy_ask(900)).await;
    let mut scoped = deploy_ask(900);
    scoped.target = Some(Target::parse("web@alice").expect("target"));
    let scoped = create(&a, scoped).await;
    crash(a);

    // B starts after the short ask's deadline, before the others'.
    let clock_b = Clock::manual(START.saturating_add_secs(60));
    let b = open(&db, &clock_b).await;

    let expired = b.get(&short.id).await.expect("short");
    assert_eq!(expired.state, State::TimedOut);
    let outcome = expired.outcome.expect("outcome");
    assert_eq!(
        (outcome.status, outcome.reason),
        (Status::NoAnswer, Some(Reason::Timeout))
    );
    assert_eq!(outcome.answered_at, short.deadline);

    assert_eq!(b.metrics().pending, 2);
    let listed: Vec<String> = b
        .list(ListFilter {
            pending_only: true,
            ..ListFilter::default()
        })
        .await
        .expect("list")
        .into_iter()
        .map(|view| view.id)
        .collect();
    assert_eq!(listed, [scoped.id.clone(), long.id.clone()]);

    let waiter = tokio::spawn({
        let b = b.clone();
        let id = long.id.clone();
        async move { b.wait(&id, Duration::from_secs(600)).await }
    });
    let (step, _) = b
        .handle(&long.id, reply("bob", "staging"))
        .await
        .expect("reply");
    assert!(matches!(step, Step::Finished(_)), "{step:?}");
    let waited = waiter.await.expect("waiter").expect("wait");
    assert_eq!(
        answers(&waited),
        [("deploy".to_owned(), vec!["Staging".to_owned()])]
    );

    // The rebuilt ask still knows who may answer it.
    let (step, _) = b.handle(&scoped.id, pick("bob", 0)).await.expect("pick");
    assert_eq!(step, Step::Rejected(Rejection::NotForYou));

    // And its deadline is armed again.
    clock_b.advance(Duration::from_secs(900));
    let ended = b
        .wait(&scoped.id, Duration::from_secs(3_600))
        .await
        .expect("wait");
    assert_eq!(ended.state, State::TimedOut);
}

/// Alice answers the first question of [`two_question_ask`] on `bridge`.
async fn answer_the_first_of_two(bridge: &Bridge, id: &str) -> (Step, AskView) {
    bridge
        .handle(
            id,
            Input::Answers {
                from: person("alice"),
                admitted: true,
                answers: vec![("deploy".to_owned(), vec!["Production".to_owned()])],
                via: Via::Web,
            },
        )
        .await
        .expect("answers")
}

async fn partial_answers_survive_a_restart(db: Scratch) {
    let clock = Clock::manual(START);
    let a = open(&db, &clock).await;
    let created = create(&a, two_question_ask()).await;
    let (step, view) = answer_the_first_of_two(&a, &created.id).await;
    assert!(
        matches!(step, Step::Progress(ref p) if p.still_open == [1]),
        "{step:?}"
    );
    assert!(view.answers[0].is_some() && view.answers[1].is_none());
    crash(a);

    let b = open(&db, &clock).await;
    let reloaded = b.get(&created.id).await.expect("get");
    assert_eq!(reloaded.state, State::Pending);
    assert_eq!(reloaded.answers, view.answers);

    let (step, done) = b
        .handle(&created.id, reply("alice", "ship it on friday"))
        .await
        .expect("reply");
    assert!(matches!(step, Step::Finished(_)), "{step:?}");
    assert_eq!(
        answers(&done),
        [
            ("deploy".to_owned(), vec!["Production".to_owned()]),
            ("notes".to_owned(), vec!["ship it on friday".to_owned()]),
        ]
    );
}

// ---------------------------------------------------------------------
// Deadlines
// ---------------------------------------------------------------------

async fn a_deadline_ends_the_ask_timed_out_and_wakes_its_waiters(db: Scratch) {
    let clock = Clock::manual(START);
    let bridge = open(&db, &clock).await;
    let mut events = bridge.subscribe();
    let soon = create(&bridge, deploy_ask(30)).await;
    let later = create(&bridge, deploy_ask(60)).await;

    let waiters: Vec<_> = (0..3)
        .map(|_| {
            let bridge = bridge.clone();
            let id = soon.id.clone();
            tokio::spawn(async move { bridge.wait(&id, Duration::from_secs(3_600)).await })
        })
        .collect();

    // One millisecond short of the deadline nothing happens.
    clock.advance(Duration::from_millis(29_999));
    let still = bridge.wait(&soon.id, Duration::ZERO).await.expect("wait");
    assert_eq!(still.state, State::Pending);

    clock.advance(Duration::from_millis(1));
    for waiter in waiters {
        let view = waiter.await.expect("waiter").expect("wait");
        assert_eq!(view.state, State::TimedOut);
        assert_eq!(view.outcome.expect("outcome").reason, Some(Reason::Timeout));
    }
    assert_eq!(
        bridge.get(&later.id).await.expect("later").state,
        State::Pending
    );

    // Events: two created, then the timeout.
    let mut seen = Vec::new();
    while seen.len() < 3 {
        match events.recv().await.expect("event") {
            BridgeEvent::Created(view) => seen.push(format!("created {}", view.id)),
            BridgeEvent::Updated(view) => seen.push(format!("updated {}", view.id)),
            BridgeEvent::Ended(view) => {
                seen.push(format!("ended {} {}", view.id, view.state.as_str()))
            }
            BridgeEvent::Arrived(view) => seen.push(format!("arrived {}", view.id)),
        }
    }
    assert_eq!(
        seen,
        [
            format!("created {}", soon.id),
            format!("created {}", later.id),
            format!("ended {} timed_out", soon.id),
        ]
    );

    // The timeout is stored: a new bridge sees it.
    let reopened = open(&db, &clock).await;
    assert_eq!(
        reopened.get(&soon.id).await.expect("get").state,
        State::TimedOut
    );
}

async fn a_wait_that_runs_out_returns_the_pending_ask(db: Scratch) {
    let clock = Clock::manual(START);
    let bridge = open(&db, &clock).await;
    let created = create(&bridge, deploy_ask(900)).await;
    let wait = bridge.wait(&created.id, Duration::from_secs(10));
    tokio::pin!(wait);
    // The first poll fixes the end of the wait: ten seconds from now.
    assert!(futures_util::poll!(&mut wait).is_pending());
    clock.advance(Duration::from_millis(9_999));
    assert!(futures_util::poll!(&mut wait).is_pending());
    clock.advance(Duration::from_millis(1));
    let view = wait.await.expect("wait");
    assert_eq!(view.state, State::Pending);
}

// ---------------------------------------------------------------------
// Races
// ---------------------------------------------------------------------

/// Sends `pick(user_i, i % 2)` through the bridges in turn, all at once;
/// returns the steps.
async fn race(bridges: &[Bridge], id: &str, n: usize) -> Vec<Step> {
    let start = Arc::new(tokio::sync::Barrier::new(n));
    let tasks: Vec<_> = (0..n)
        .map(|i| {
            let bridge = bridges[i % bridges.len()].clone();
            let id = id.to_owned();
            let start = Arc::clone(&start);
            tokio::spawn(async move {
                start.wait().await;
                bridge
                    .handle(&id, pick(&format!("user{i}"), i % 2))
                    .await
                    .expect("handle")
                    .0
            })
        })
        .collect();
    let mut steps = Vec::with_capacity(n);
    for task in tasks {
        steps.push(task.await.expect("task"));
    }
    steps
}

/// Exactly one step finished the ask and every other one was told it had
/// already ended; returns the winner's user id.
fn exactly_one_winner(steps: &[Step]) -> String {
    let mut winners = Vec::new();
    for step in steps {
        match step {
            Step::Finished(outcome) => {
                winners.push(
                    outcome
                        .answered_by
                        .as_ref()
                        .expect("answered by")
                        .user_id
                        .clone(),
                );
            }
            Step::Rejected(Rejection::AlreadyEnded(State::Answered { .. })) => {}
            other => panic!("unexpected step {other:?}"),
        }
    }
    assert_eq!(winners.len(), 1, "{winners:?}");
    winners.remove(0)
}

async fn many_concurrent_replies_on_one_bridge_record_one_answer(db: Scratch) {
    let clock = Clock::manual(START);
    let bridge = open(&db, &clock).await;
    let created = create(&bridge, deploy_ask(900)).await;

    let steps = race(std::slice::from_ref(&bridge), &created.id, 64).await;
    let winner = exactly_one_winner(&steps);

    let stored = open(&db, &clock).await.get(&created.id).await.expect("get");
    assert!(matches!(stored.state, State::Answered { ref by, .. } if by.user_id == winner));
    assert_eq!(bridge.metrics().ended[0], ("answered", 1));
}

async fn two_bridges_on_one_file_record_one_answer(db: Scratch) {
    let clock = Clock::manual(START);
    let a = open(&db, &clock).await;
    let b = open(&db, &clock).await;
    for round in 0..5 {
        let created = create(if round % 2 == 0 { &a } else { &b }, deploy_ask(900)).await;
        let steps = race(&[a.clone(), b.clone()], &created.id, 32).await;
        let winner = exactly_one_winner(&steps);

        let stored = open_bare(&db, &clock)
            .await
            .get(&created.id)
            .await
            .expect("get");
        assert!(
            matches!(stored.state, State::Answered { ref by, .. } if by.user_id == winner),
            "round {round}: {:?}",
            stored.state
        );
        // Both bridges agree, whichever took the answer.
        for bridge in [&a, &b] {
            let view = bridge.get(&created.id).await.expect("get");
            assert_eq!(view.state, stored.state);
        }
    }
    assert_eq!(a.metrics().pending + b.metrics().pending, 0);
}

async fn a_waiter_on_one_bridge_sees_an_answer_taken_by_another_when_its_wait_ends(db: Scratch) {
    let clock = Clock::manual(START);
    let a = open(&db, &clock).await;
    let b = open(&db, &clock).await;
    let created = create(&a, deploy_ask(900)).await;
    let (step, _) = b.handle(&created.id, pick("bob", 0)).await.expect("handle");
    assert!(matches!(step, Step::Finished(_)));
    // A has the ask in memory as pending; the wait checks the database.
    let view = a.wait(&created.id, Duration::ZERO).await.expect("wait");
    assert!(
        matches!(view.state, State::Answered { .. }),
        "{:?}",
        view.state
    );
    let (late, _) = a.handle(&created.id, pick("alice", 1)).await.expect("late");
    assert!(
        matches!(late, Step::Rejected(Rejection::AlreadyEnded(_))),
        "{late:?}"
    );
}

// ---------------------------------------------------------------------
// Idempotency
// ---------------------------------------------------------------------

async fn an_idempotency_key_returns_the_same_ask_and_refuses_a_different_one(db: Scratch) {
    let clock = Clock::manual(START);
    let bridge = open(&db, &clock).await;
    let keyed = |ask| NewAsk {
        ask,
        idempotency_key: Some("retry-1".to_owned()),
    };

    let (first, created) = bridge.create(keyed(deploy_ask(900))).await.expect("create");
    assert!(created);
    let (again, created) = bridge.create(keyed(deploy_ask(900))).await.expect("again");
    assert!(!created);
    assert_eq!(again.id, first.id);

    let different = bridge.create(keyed(deploy_ask(60))).await;
    assert!(
        matches!(different, Err(BridgeError::IdempotencyConflict(ref key)) if key == "retry-1"),
        "{different:?}"
    );

    // After a restart, and after the ask ended, the key still holds.
    bridge.cancel(&first.id).await.expect("cancel");
    let reopened = open(&db, &clock).await;
    let (after, created) = reopened
        .create(keyed(deploy_ask(900)))
        .await
        .expect("after");
    assert!(!created);
    assert_eq!(after.id, first.id);
    assert!(matches!(after.state, State::Cancelled { .. }));

    // Asks without a key never collide.
    let one = create(&reopened, deploy_ask(900)).await;
    let two = create(&reopened, deploy_ask(900)).await;
    assert_ne!(one.id, two.id);
    assert_eq!(reopened.metrics().created, 2);
}

// ---------------------------------------------------------------------
// Delivery
// ---------------------------------------------------------------------

fn telegram_ask() -> Ask {
    let mut ask = deploy_ask(900);
    ask.target = Some(Target::parse("telegram:123").expect("target"));
    ask
}

/// Scripted Telegram and Slack channels that take every delivery, added
/// to `bridge`.
fn telegram_and_slack(bridge: &Bridge) -> (Arc<ScriptedChannel>, Arc<ScriptedChannel>) {
    let telegram = ScriptedChannel::new(ChannelKind::Telegram, vec![]);
    let slack = ScriptedChannel::new(ChannelKind::Slack, vec![]);
    bridge.add_channel(telegram.clone());
    bridge.add_channel(slack.clone());
    (telegram, slack)
}

/// The deploy ask in Telegram (for user 42) and in Slack (for U2) at once.
fn two_place_ask() -> Ask {
    let mut ask = telegram_ask();
    ask.target = Some(Target::parse("telegram:-100@42").expect("telegram"));
    ask.also = vec![Target::parse("slack:C1@U2").expect("slack")];
    ask
}

/// `user` on `channel`, answering in `place` (its target string).
fn placed(channel: ChannelKind, user: &str, place: &str) -> Responder {
    Responder {
        channel,
        user_id: user.to_owned(),
        name: None,
        place: Some(Target::parse(place).expect("place").place),
    }
}

fn pick_as(from: Responder, option: usize) -> Input {
    Input::Pick {
        from,
        admitted: false,
        question: 0,
        options: vec![option],
        via: Via::Button,
    }
}

/// Slack user `user` picks `option` in `slack:C1`, admitted by the
/// channel or not.
async fn pick_in_slack(
    bridge: &Bridge,
    id: &str,
    user: &str,
    option: usize,
    admitted: bool,
) -> (Step, AskView) {
    let mut input = pick_as(placed(ChannelKind::Slack, user, "slack:C1"), option);
    if let Input::Pick {
        admitted: given, ..
    } = &mut input
    {
        *given = admitted;
    }
    bridge.handle(id, input).await.expect("handle")
}

async fn an_ask_in_several_places_is_answered_once_and_closed_in_each(db: Scratch) {
    let clock = Clock::manual(START);
    let bridge = open(&db, &clock).await;
    let (telegram, slack) = telegram_and_slack(&bridge);

    let created = create(&bridge, two_place_ask()).await;
    let places: Vec<String> = created.places().map(ToString::to_string).collect();
    assert_eq!(places, ["telegram:-100@42", "slack:C1@U2"]);
    assert_eq!(telegram.calls(1).await, [format!("deliver {}", created.id)]);
    assert_eq!(slack.calls(1).await, [format!("deliver {}#1", created.id)]);
    // A typed message in either place finds it, for that place's user.
    let slack_place = Target::parse("slack:C1").expect("slack").place;
    assert_eq!(
        bridge.pending_at(&slack_place).await.expect("pending"),
        [(
            created.id.clone(),
            Target::parse("slack:C1@U2").expect("slack")
        )]
    );

    // Each place's own user only, there.
    let (step, _) = pick_in_slack(&bridge, &created.id, "U9", 0, false).await;
    assert!(
        matches!(step, Step::Rejected(Rejection::NotForYou)),
        "{step:?}"
    );
    let (step, ended) = pick_in_slack(&bridge, &created.id, "U2", 1, false).await;
    assert!(matches!(step, Step::Finished(_)), "{step:?}");
    let by = ended
        .outcome
        .as_ref()
        .and_then(|o| o.answered_by.clone())
        .expect("by");
    assert_eq!(by.place, Some(slack_place));
    let (late, _) = bridge
        .handle(
            &created.id,
            pick_as(placed(ChannelKind::Telegram, "42", "telegram:-100"), 0),
        )
        .await
        .expect("handle");
    assert!(
        matches!(late, Step::Rejected(Rejection::AlreadyEnded(_))),
        "{late:?}"
    );

    // Closed in both places.
    assert_eq!(
        telegram.calls(2).await[1],
        format!("end {} answered", created.id)
    );
    assert_eq!(
        slack.calls(2).await[1],
        format!("end {}#1 answered", created.id)
    );
    assert_eq!(
        answers(&ended),
        [("deploy".to_owned(), vec!["Production".to_owned()])]
    );
}

async fn a_place_that_fails_does_not_fail_the_ask_while_another_holds_it(db: Scratch) {
    let clock = Clock::manual(START);
    let bridge = open(&db, &clock).await;
    let refused = || Err(PlatformFailure::Permanent("chat not found".to_owned()));
    let telegram = ScriptedChannel::new(ChannelKind::Telegram, vec![refused(), refused()]);
    let slack = ScriptedChannel::new(ChannelKind::Slack, vec![Ok(()), refused()]);
    bridge.add_channel(telegram.clone());
    bridge.add_channel(slack.clone());

    let held = create(&bridge, two_place_ask()).await;
    telegram.calls(1).await;
    slack.calls(1).await;
    bridge.flush().await.expect("flush");
    let (step, view) = pick_in_slack(&bridge, &held.id, "U2", 0, false).await;
    assert!(
        matches!(step, Step::Finished(_)),
        "{step:?} {:?}",
        view.state
    );
    // Nothing was posted in Telegram, so nothing is closed there.
    assert_eq!(
        slack.calls(2).await[1],
        format!("end {}#1 answered", held.id)
    );

    // When every place fails, the ask does.
    let lost = create(&bridge, two_place_ask()).await;
    let ended = bridge
        .wait(&lost.id, Duration::from_secs(3_600))
        .await
        .expect("wait");
    assert!(
        matches!(ended.state, State::DeliveryFailed { ref reason, .. } if reason.contains("no place took the ask") && reason.contains("chat not found")),
        "{:?}",
        ended.state
    );
    assert_eq!(telegram.calls_now().len(), 2, "{:?}", telegram.calls_now());
}

async fn an_ask_in_several_places_comes_back_in_each_after_a_restart(db: Scratch) {
    let clock = Clock::manual(START);
    let a = open_bare(&db, &clock).await;
    a.add_channel(ScriptedChannel::new(ChannelKind::Telegram, vec![]));
    let stuck = ScriptedChannel::new(
        ChannelKind::Slack,
        vec![Err(PlatformFailure::RetryAfter(3_600))],
    );
    a.add_channel(stuck.clone());
    let created = create(&a, two_place_ask()).await;
    stuck.calls(1).await;
    crash(a);

    // Telegram's copy is posted again (the channel keeps it from showing
    // twice); Slack's, never posted, is posted now.
    let b = open_bare(&db, &clock).await;
    let (telegram, slack) = telegram_and_slack(&b);
    assert_eq!(slack.calls(1).await, [format!("deliver {}#1", created.id)]);
    assert_eq!(telegram.calls(1).await, [format!("deliver {}", created.id)]);
    let telegram_place = Target::parse("telegram:-100").expect("telegram").place;
    assert_eq!(
        b.pending_at(&telegram_place).await.expect("pending").len(),
        1
    );
    b.cancel(&created.id).await.expect("cancel");
    assert_eq!(
        telegram.calls(2).await[1],
        format!("end {} cancelled", created.id)
    );
    assert_eq!(
        slack.calls(2).await[1],
        format!("end {}#1 cancelled", created.id)
    );
}

/// The deploy ask in Telegram, passed on to Slack after 10 minutes.
fn escalated_ask() -> Ask {
    let mut ask = telegram_ask();
    ask.target = Some(Target::parse("telegram:-100@42").expect("telegram"));
    ask.timeout_seconds = 1_800;
    ask.escalate = vec![askbridge_core::model::Escalation {
        after_seconds: 600,
        to: Target::parse("slack:C1").expect("slack"),
    }];
    ask
}

async fn an_escalation_step_is_posted_at_its_time_even_after_a_crash(db: Scratch) {
    // The crashed process's tasks live on in the test: its clock never
    // reaches the step's time.
    let a = open_bare(&db, &Clock::manual(START)).await;
    let (telegram, slack) = telegram_and_slack(&a);
    let created = create(&a, escalated_ask()).await;
    assert_eq!(telegram.calls(1).await, [format!("deliver {}", created.id)]);
    // Not due: nobody in Slack may answer yet, and nothing was posted there.
    let slack_place = Target::parse("slack:C1").expect("slack").place;
    a.flush().await.expect("flush");
    assert!(slack.calls_now().is_empty(), "{:?}", slack.calls_now());
    crash(a);

    let clock = Clock::manual(START);
    let b = open_bare(&db, &clock).await;
    let (telegram, slack) = telegram_and_slack(&b);
    telegram.calls(1).await;
    assert!(slack.calls_now().is_empty(), "{:?}", slack.calls_now());
    clock.advance(Duration::from_secs(599));
    assert!(slack.calls_now().is_empty(), "{:?}", slack.calls_now());
    clock.advance(Duration::from_secs(1));
    assert_eq!(slack.calls(1).await, [format!("deliver {}#1", created.id)]);

    // Anyone Slack admits may answer there: the step names nobody.
    let (step, ended) = pick_in_slack(&b, &created.id, "U7", 0, false).await;
    assert!(
        matches!(step, Step::Rejected(Rejection::NotForYou)),
        "{step:?}"
    );
    let (step, ended_now) = pick_in_slack(&b, &created.id, "U7", 0, true).await;
    assert!(
        matches!(step, Step::Finished(_)),
        "{step:?} {:?}",
        ended.state
    );
    let by = ended_now.outcome.and_then(|o| o.answered_by).expect("by");
    assert_eq!(by.place, Some(slack_place));
    assert_eq!(
        telegram.calls(2).await[1],
        format!("end {} answered", created.id)
    );
    assert_eq!(
        slack.calls(2).await[1],
        format!("end {}#1 answered", created.id)
    );
}

async fn an_escalation_step_not_due_when_the_ask_ends_is_never_posted(db: Scratch) {
    let clock = Clock::manual(START);
    let bridge = open_bare(&db, &clock).await;
    let (telegram, slack) = telegram_and_slack(&bridge);
    let created = create(&bridge, escalated_ask()).await;
    telegram.calls(1).await;
    bridge.cancel(&created.id).await.expect("cancel");
    telegram.calls(2).await;
    clock.advance(Duration::from_secs(700));
    // The next ask's Slack step is posted at its time, the ended one's never.
    let next = create(&bridge, escalated_ask()).await;
    clock.advance(Duration::from_secs(600));
    assert_eq!(slack.calls(1).await, [format!("deliver {}#1", next.id)]);
}

/// The deploy ask in Telegram, passed on to the web page after 10
/// minutes.
fn escalated_to_the_page() -> Ask {
    let mut ask = escalated_ask();
    ask.escalate[0].to = Target::parse("web").expect("web");
    ask
}

/// The ids the web page's list has: pending asks on `web` now.
async fn on_the_page(bridge: &Bridge) -> Vec<String> {
    let filter = ListFilter {
        pending_only: true,
        channel: Some(ChannelKind::Web),
        limit: Some(1),
    };
    let listed = bridge.list(filter).await.expect("list");
    listed.into_iter().map(|view| view.id).collect()
}

/// The ids of the next `count` asks said to reach the page.
async fn arrivals(
    events: &mut tokio::sync::broadcast::Receiver<BridgeEvent>,
    count: usize,
) -> Vec<String> {
    let mut arrived = Vec::new();
    while arrived.len() < count {
        let event = tokio::time::timeout(Duration::from_secs(30), events.recv())
            .await
            .expect("an arrival within 30 s")
            .expect("an event");
        if let BridgeEvent::Arrived(view) = event {
            arrived.push(view.id.clone());
        }
    }
    arrived
}

async fn an_ask_reaches_the_web_page_at_its_steps_time_even_after_a_crash(db: Scratch) {
    let a = open(&db, &Clock::manual(START)).await;
    let (telegram, _slack) = telegram_and_slack(&a);
    let first = create(&a, escalated_to_the_page()).await;
    telegram.calls(1).await;
    assert_eq!(on_the_page(&a).await, Vec::<String>::new());
    crash(a);

    let clock = Clock::manual(START);
    let b = open(&db, &clock).await;
    let (_telegram, _slack) = telegram_and_slack(&b);
    let mut events = b.subscribe();
    clock.advance(Duration::from_secs(300));
    let plain = create(&b, deploy_ask(3_600)).await;
    let second = create(&b, escalated_to_the_page()).await;
    // Newest first, one at a time: the list reads past asks not there yet.
    assert_eq!(on_the_page(&b).await, [plain.id.as_str()]);
    clock.advance(Duration::from_secs(299));
    assert_eq!(on_the_page(&b).await, [plain.id.as_str()]);

    clock.advance(Duration::from_secs(1));
    assert_eq!(arrivals(&mut events, 1).await, [first.id.as_str()]);
    let all = b
        .list(ListFilter {
            pending_only: true,
            channel: Some(ChannelKind::Web),
            limit: None,
        })
        .await
        .expect("list");
    let ids: Vec<&str> = all.iter().map(|view| view.id.as_str()).collect();
    assert_eq!(ids, [plain.id.as_str(), first.id.as_str()]);
    clock.advance(Duration::from_secs(300));
    assert_eq!(arrivals(&mut events, 1).await, [second.id.as_str()]);
    // An ask that ended before its time never reaches the page.
    let third = create(&b, escalated_to_the_page()).await;
    b.cancel(&third.id).await.expect("cancel");
    clock.advance(Duration::from_secs(600));
    let ended = b
        .list(ListFilter {
            pending_only: false,
            channel: Some(ChannelKind::Web),
            limit: None,
        })
        .await
        .expect("list");
    assert!(ended.iter().all(|view| view.id != third.id), "{ended:?}");
}

/// The deploy ask in Telegram, reminded after 5 minutes (and, with
/// `every`, again at that interval).
fn reminded_ask(every: Option<u32>) -> Ask {
    let mut ask = telegram_ask();
    ask.remind = Some(askbridge_core::model::Reminders {
        after_seconds: 300,
        every_seconds: every,
    });
    ask
}

/// Waits until the instances together finished `count` reminders.
async fn reminders_done(instances: &[Bridge], count: u64) {
    let mut done: Vec<_> = instances.iter().map(Bridge::reminders_done).collect();
    while done.iter().map(|done| *done.borrow()).sum::<u64>() < count {
        let changes = done.iter_mut().map(|done| Box::pin(done.changed()));
        let (changed, _, _) = futures_util::future::select_all(changes).await;
        changed.expect("the bridge is alive");
    }
}

/// The reminder calls among a channel's calls.
fn reminders(channel: &ScriptedChannel) -> Vec<String> {
    channel
        .calls_now()
        .into_iter()
        .filter(|call| call.starts_with("remind "))
        .collect()
}

async fn a_reminder_is_sent_once_at_its_time_even_after_a_crash(db: Scratch) {
    // Each process has a clock of its own: a crashed one's tasks live on
    // in the test, and must never see its reminder's time.
    let created = delivered_then_crashed(&db, reminded_ask(None)).await;
    reminded_then_crashed(&db, 300, &created).await;
    // Sent: not again after another crash, and only one was asked for.
    only_cancelled(&db, 600, &created).await;
}

/// Creates `ask` in Telegram on a bridge at [`START`], delivers it and
/// crashes the bridge.
async fn delivered_then_crashed(db: &Scratch, ask: Ask) -> AskView {
    let a = open_bare(db, &Clock::manual(START)).await;
    let telegram = ScriptedChannel::new(ChannelKind::Telegram, vec![]);
    a.add_channel(telegram.clone());
    let created = create(&a, ask).await;
    telegram.calls(1).await;
    a.flush().await.expect("flush");
    crash(a);
    created
}

/// A bridge opened a second before `secs` after [`START`] sends reminder
/// 0 of `ask` at `secs`, records it done, and crashes.
async fn reminded_then_crashed(db: &Scratch, secs: u64, ask: &AskView) {
    let clock = Clock::manual(START.saturating_add_secs(secs - 1));
    let bridge = open_bare(db, &clock).await;
    let telegram = ScriptedChannel::new(ChannelKind::Telegram, vec![]);
    bridge.add_channel(telegram.clone());
    clock.advance(Duration::from_secs(1));
    assert_eq!(telegram.calls(1).await, [format!("remind {} 0", ask.id)]);
    reminders_done(std::slice::from_ref(&bridge), 1).await;
    crash(bridge);
}

/// A bridge opened `secs` after [`START`] sends nothing for `ask` before
/// it is cancelled there.
async fn only_cancelled(db: &Scratch, secs: u64, ask: &AskView) {
    let bridge = open_bare(db, &Clock::manual(START.saturating_add_secs(secs))).await;
    let telegram = ScriptedChannel::new(ChannelKind::Telegram, vec![]);
    bridge.add_channel(telegram.clone());
    bridge.cancel(&ask.id).await.expect("cancel");
    assert_eq!(
        telegram.calls(1).await,
        [format!("end {} cancelled", ask.id)]
    );
}

/// Webhook rules that allow every URL.
#[derive(Debug)]
struct AnyCallback;

#[async_trait::async_trait]
impl askbridge::bridge::CallbackCheck for AnyCallback {
    async fn check(&self, _url: &str) -> Result<(), String> {
        Ok(())
    }
}

/// The events of an ask's webhook deliveries, sorted.
async fn webhook_events(bridge: &Bridge, id: &str) -> Vec<String> {
    let mut events: Vec<String> = bridge
        .webhooks_of(id)
        .await
        .expect("deliveries")
        .into_iter()
        .map(|row| row.event)
        .collect();
    events.sort();
    events
}

async fn webhook_deliveries_are_written_with_the_ask_and_at_each_event_asked_for(db: Scratch) {
    let clock = Clock::manual(START);
    let bridge = open_bare(&db, &clock).await;
    let (telegram, slack) = telegram_and_slack(&bridge);
    let mut with_events = escalated_ask();
    with_events.remind = Some(askbridge_core::model::Reminders {
        after_seconds: 300,
        every_seconds: None,
    });
    with_events.callback = Some(askbridge_core::model::Callback {
        url: "https://hooks.example.com/a".to_owned(),
        events: askbridge_core::model::CallbackEvent::ALL.to_vec(),
    });

    // Without webhook rules, a callback is refused and nothing is made.
    let refused = bridge
        .create(NewAsk {
            ask: with_events.clone(),
            idempotency_key: None,
        })
        .await;
    assert!(
        matches!(&refused, Err(BridgeError::Callback(message)) if message.contains("webhooks are off")),
        "{refused:?}"
    );
    assert!(
        bridge
            .list(ListFilter::default())
            .await
            .expect("list")
            .is_empty()
    );

    bridge.set_callbacks(Arc::new(AnyCallback));
    let created = create(&bridge, with_events).await;
    let plain = create(&bridge, escalated_ask()).await;
    telegram.calls(2).await;
    bridge.settled().await;
    assert_eq!(
        webhook_events(&bridge, &created.id).await,
        ["ask.ended", "ask.posted"]
    );
    assert!(webhook_events(&bridge, &plain.id).await.is_empty());

    // Only the events that happened are due; ask.ended waits for the end.
    let store = askbridge::store::open(&db.url()).await.expect("store");
    let now = i64::try_from(START.0).expect("millis");
    let due: Vec<String> = store
        .due_webhooks(now, 10)
        .await
        .expect("due")
        .into_iter()
        .map(|row| row.event)
        .collect();
    assert_eq!(due, ["ask.posted"]);

    clock.advance(Duration::from_secs(300));
    reminders_done(std::slice::from_ref(&bridge), 1).await;
    bridge.settled().await;
    clock.advance(Duration::from_secs(300));
    slack.calls(1).await;
    bridge.settled().await;
    assert_eq!(
        webhook_events(&bridge, &created.id).await,
        ["ask.ended", "ask.escalated", "ask.posted", "ask.reminded"]
    );

    bridge.cancel(&created.id).await.expect("cancel");
    let now = now + 600_000;
    // Ended, but its delivery waits for the ask's deadline until brought
    // forward (the sender does, hearing the end).
    let waiting = store.due_webhooks(now, 10).await.expect("due");
    assert!(
        waiting.iter().all(|row| row.event != "ask.ended"),
        "{waiting:?}"
    );
    let ended_row = bridge
        .webhooks_of(&created.id)
        .await
        .expect("deliveries")
        .into_iter()
        .find(|row| row.event == "ask.ended")
        .expect("ask.ended");
    assert_eq!(
        ended_row.due_at,
        now - 600_000 + 1_800_000,
        "the deadline is the latest it waits"
    );
    store
        .webhook_ended(Some(&created.id), now)
        .await
        .expect("bring forward");
    let due = store.due_webhooks(now, 10).await.expect("due");
    let mut events: Vec<&str> = due.iter().map(|row| row.event.as_str()).collect();
    events.sort_unstable();
    assert_eq!(
        events,
        ["ask.ended", "ask.escalated", "ask.posted", "ask.reminded"]
    );

    // One claim per attempt, whoever races for it; the body kept is the
    // first attempt's.
    let ended = due
        .iter()
        .find(|row| row.event == "ask.ended")
        .expect("ask.ended");
    let first = store
        .claim_webhook(&ended.id, 0, now, now + 60_000, "{\"first\":1}")
        .await
        .expect("claim");
    let second = store
        .claim_webhook(&ended.id, 0, now, now + 60_000, "{\"second\":1}")
        .await
        .expect("claim");
    assert_eq!(first.as_deref(), Some("{\"first\":1}"));
    assert_eq!(second, None);
    // Claimed: not due again until its claim runs out.
    assert!(
        store
            .due_webhooks(now + 59_999, 10)
            .await
            .expect("due")
            .iter()
            .all(|row| row.id != ended.id)
    );
    let recorded = store
        .finish_webhook(&askbridge::store::WebhookAttempt {
            id: &ended.id,
            attempts: 1,
            state: "pending",
            due_at: now + 1_000,
            status: Some(503),
            error: Some("the receiver answered 503"),
            at: now,
        })
        .await
        .expect("finish");
    assert!(recorded);
    let again = store
        .claim_webhook(&ended.id, 1, now + 1_000, now + 61_000, "{\"third\":1}")
        .await
        .expect("claim");
    assert_eq!(again.as_deref(), Some("{\"first\":1}"));
    // The first attempt's late record changes nothing now.
    let late = store
        .finish_webhook(&askbridge::store::WebhookAttempt {
            id: &ended.id,
            attempts: 1,
            state: "delivered",
            due_at: now,
            status: Some(200),
            error: None,
            at: now,
        })
        .await
        .expect("finish");
    assert!(!late);
}

async fn an_ask_that_timed_out_while_the_bridge_was_down_has_its_webhook_due_on_open(db: Scratch) {
    let a = open(&db, &Clock::manual(START)).await;
    a.set_callbacks(Arc::new(AnyCallback));
    let mut asked = deploy_ask(30);
    asked.callback = Some(askbridge_core::model::Callback {
        url: "https://hooks.example.com/a".to_owned(),
        events: vec![askbridge_core::model::CallbackEvent::Ended],
    });
    let created = create(&a, asked).await;
    a.settled().await;
    crash(a);

    let store = askbridge::store::open(&db.url()).await.expect("store");
    let later = i64::try_from(START.0).expect("millis") + 60_000;
    // Still pending in the database: nothing is due.
    assert!(store.due_webhooks(later, 10).await.expect("due").is_empty());
    // Another, still open, and one that ended before the crash without
    // its delivery brought forward: a catch-up brings only that one.
    let b = open(&db, &Clock::manual(START.saturating_add_secs(60))).await;
    b.set_callbacks(Arc::new(AnyCallback));
    let mut open_one = deploy_ask(900);
    open_one.callback = Some(askbridge_core::model::Callback {
        url: "https://hooks.example.com/b".to_owned(),
        events: vec![askbridge_core::model::CallbackEvent::Ended],
    });
    let still_open = create(&b, open_one.clone()).await;
    let cancelled = create(&b, open_one).await;
    b.cancel(&cancelled.id).await.expect("cancel");
    store.webhook_ended(None, later).await.expect("catch up");
    let mut due = store.due_webhooks(later, 10).await.expect("due");
    due.sort_by_key(|row| row.ask_id != created.id);
    assert_eq!(due.len(), 2, "{due:?}");
    assert_eq!(due[1].ask_id, cancelled.id);
    assert!(due.iter().all(|row| row.ask_id != still_open.id));
    assert_eq!(due[0].ask_id, created.id);
    assert_eq!(due[0].event, "ask.ended");
    assert_eq!(
        b.get(&created.id).await.expect("the ask").state,
        State::TimedOut
    );
}

async fn configured_defaults_remind_and_escalate_asks_that_do_not_say(db: Scratch) {
    use askbridge_core::model::{AskDefaults, Escalation, Reminders, Unset};
    let defaults = AskDefaults {
        target: Target::parse("web").expect("web"),
        remind: Some(Reminders {
            after_seconds: 300,
            every_seconds: None,
        }),
        escalate: vec![Escalation {
            after_seconds: 600,
            to: Target::parse("slack:C1").expect("slack"),
        }],
        verified: Default::default(),
    };
    let a = Bridge::open_with(
        BridgeOptions::new(db.url(), defaults),
        tuning(&Clock::manual(START)),
    )
    .await
    .expect("open the bridge");
    let (telegram, _) = telegram_and_slack(&a);
    let mut long = telegram_ask();
    long.timeout_seconds = 1_800;
    let silent = create(&a, long.clone()).await;
    let mut off = long;
    off.unset = Unset::default();
    let quiet = create(&a, off).await;
    telegram.calls(2).await;
    a.flush().await.expect("flush");
    crash(a);

    // Taken at creation and kept with the ask: an instance without the
    // defaults reminds and escalates it, and not the ask that said no.
    let clock = Clock::manual(START);
    let b = open_bare(&db, &clock).await;
    let (telegram, slack) = telegram_and_slack(&b);
    // (Its delivery is not over while a step waits: its first place is
    // delivered again; the chat driver skips what is on record.)
    telegram.calls(1).await;
    clock.advance(Duration::from_secs(300));
    assert_eq!(
        telegram.calls(2).await,
        [
            format!("deliver {}", silent.id),
            format!("remind {} 0", silent.id)
        ]
    );
    reminders_done(std::slice::from_ref(&b), 1).await;
    clock.advance(Duration::from_secs(300));
    assert_eq!(slack.calls(1).await, [format!("deliver {}#1", silent.id)]);
    b.cancel(&quiet.id).await.expect("cancel");
    b.cancel(&silent.id).await.expect("cancel");
    let calls = telegram.calls(4).await;
    assert_eq!(
        calls[2..],
        [
            format!("end {} cancelled", quiet.id),
            format!("end {} cancelled", silent.id)
        ]
    );
    assert_eq!(slack.calls(2).await.len(), 2);
    assert_eq!(reminders(&telegram).len(), 1);
}

async fn a_reminder_not_posted_before_a_crash_is_offered_again(db: Scratch) {
    let created = delivered_then_crashed(&db, reminded_ask(None)).await;

    // Claimed at its time, then stuck: the platform asks for an hour.
    let clock = Clock::manual(START.saturating_add_secs(299));
    let b = open_bare(&db, &clock).await;
    let stuck = ScriptedChannel::new(
        ChannelKind::Telegram,
        vec![Err(PlatformFailure::RetryAfter(3_600))],
    );
    b.add_channel(stuck.clone());
    clock.advance(Duration::from_secs(1));
    assert_eq!(stuck.calls(1).await, [format!("remind {} 0", created.id)]);
    crash(b);

    // Not done two minutes on: offered again, and done.
    reminded_then_crashed(&db, 420, &created).await;
    // Done: not again, and only one was asked for.
    only_cancelled(&db, 800, &created).await;
}

async fn three_instances_send_each_reminder_once(db: Scratch) {
    let clock = Clock::manual(START);
    let telegram = ScriptedChannel::new(ChannelKind::Telegram, vec![]);
    let mut instances = Vec::new();
    for name in ["a", "b", "c"] {
        let bridge = open_as(&db, &clock, name).await;
        bridge.add_channel(telegram.clone());
        instances.push(bridge);
    }
    let created = create(&instances[0], reminded_ask(Some(120))).await;
    telegram.calls(1).await;
    instances[0].flush().await.expect("flush");
    // Every instance knows the ask, so every one wakes for its reminders.
    for bridge in &instances[1..] {
        assert_eq!(
            bridge.get(&created.id).await.expect("get").state,
            State::Pending
        );
    }
    for (step, at) in [(0, 300), (1, 420), (2, 540)] {
        clock.set(START.saturating_add_secs(at));
        let calls = telegram.calls(2 + step).await;
        assert_eq!(calls[1 + step], format!("remind {} {step}", created.id));
        // Recorded as done before the clock moves on: 120 s is also when a
        // reminder still not done would be offered again.
        reminders_done(&instances, step as u64 + 1).await;
    }
    // The deadline: closed once; no reminder was sent twice meanwhile.
    clock.set(START.saturating_add_secs(900));
    for bridge in &instances {
        bridge.settled().await;
    }
    let calls = telegram.calls_now();
    assert_eq!(calls.len(), 5, "{calls:?}");
    assert_eq!(
        calls[4],
        format!("end {} timed_out", created.id),
        "{calls:?}"
    );
    assert_eq!(reminders(&telegram).len(), 3, "{calls:?}");
}

async fn three_instances_post_an_escalation_step_once(db: Scratch) {
    let clock = Clock::manual(START);
    let telegram = ScriptedChannel::new(ChannelKind::Telegram, vec![]);
    let slack = ScriptedChannel::new(ChannelKind::Slack, vec![]);
    let mut instances = Vec::new();
    for name in ["a", "b", "c"] {
        let bridge = open_as(&db, &clock, name).await;
        bridge.add_channel(telegram.clone());
        bridge.add_channel(slack.clone());
        instances.push(bridge);
    }
    let created = create(&instances[1], escalated_ask()).await;
    telegram.calls(1).await;
    for bridge in &instances {
        assert_eq!(
            bridge.get(&created.id).await.expect("get").state,
            State::Pending
        );
    }
    // Counted once every instance has done what is due at each time.
    clock.set(START.saturating_add_secs(600));
    for bridge in &instances {
        bridge.settled().await;
    }
    assert_eq!(slack.calls_now(), [format!("deliver {}#1", created.id)]);
    // The deadline: each place closed once; the step was posted once.
    clock.set(START.saturating_add_secs(1_800));
    for bridge in &instances {
        bridge.settled().await;
    }
    assert_eq!(
        slack.calls_now(),
        [
            format!("deliver {}#1", created.id),
            format!("end {}#1 timed_out", created.id)
        ]
    );
    assert_eq!(
        telegram.calls_now(),
        [
            format!("deliver {}", created.id),
            format!("end {} timed_out", created.id)
        ]
    );
}

async fn a_permanent_delivery_error_ends_the_ask_delivery_failed(db: Scratch) {
    let clock = Clock::manual(START);
    let bridge = open(&db, &clock).await;
    let channel = ScriptedChannel::new(
        ChannelKind::Telegram,
        vec![Err(PlatformFailure::Permanent("chat not found".to_owned()))],
    );
    bridge.add_channel(channel.clone());

    let created = create(&bridge, telegram_ask()).await;
    let ended = bridge
        .wait(&created.id, Duration::from_secs(3_600))
        .await
        .expect("wait");
    assert!(
        matches!(ended.state, State::DeliveryFailed { ref reason, .. } if reason == "chat not found"),
        "{:?}",
        ended.state
    );
    let outcome = ended.outcome.expect("outcome");
    assert_eq!(outcome.reason, Some(Reason::DeliveryFailed));
    assert_eq!(outcome.failure.as_deref(), Some("chat not found"));
    // Nothing was posted, so nothing is closed.
    assert_eq!(channel.calls(1).await, [format!("deliver {}", created.id)]);
}

async fn an_ask_for_a_channel_nobody_registered_ends_delivery_failed(db: Scratch) {
    let clock = Clock::manual(START);
    let bridge = open(&db, &clock).await;
    let created = create(&bridge, telegram_ask()).await;
    let ended = bridge
        .wait(&created.id, Duration::from_secs(3_600))
        .await
        .expect("wait");
    assert!(
        matches!(ended.state, State::DeliveryFailed { ref reason, .. } if reason.contains("telegram")),
        "{:?}",
        ended.state
    );
}

async fn transient_delivery_errors_are_retried_until_delivered(db: Scratch) {
    let clock = Clock::manual(START);
    let bridge = open(&db, &clock).await;
    let channel = ScriptedChannel::new(
        ChannelKind::Telegram,
        vec![
            Err(PlatformFailure::Transient("502".to_owned())),
            Err(PlatformFailure::Transient("timeout".to_owned())),
        ],
    );
    bridge.add_channel(channel.clone());

    let created = create(&bridge, telegram_ask()).await;
    let deliver = format!("deliver {}", created.id);
    assert_eq!(
        channel.calls(3).await,
        [deliver.clone(), deliver.clone(), deliver.clone()]
    );
    assert_eq!(
        bridge.get(&created.id).await.expect("get").state,
        State::Pending
    );

    // Delivered, so the answer closes the message.
    let (step, _) = bridge
        .handle(
            &created.id,
            Input::Pick {
                from: Responder {
                    channel: ChannelKind::Telegram,
                    user_id: "42".to_owned(),
                    name: None,
                    place: None,
                },
                admitted: true,
                question: 0,
                options: vec![0],
                via: Via::Button,
            },
        )
        .await
        .expect("pick");
    assert!(matches!(step, Step::Finished(_)), "{step:?}");
    assert_eq!(
        channel.calls(4).await[3],
        format!("end {} answered", created.id)
    );
}

async fn a_rate_limit_is_waited_out_on_the_clock(db: Scratch) {
    let clock = Clock::manual(START);
    let bridge = open(&db, &clock).await;
    let channel = ScriptedChannel::new(
        ChannelKind::Telegram,
        vec![Err(PlatformFailure::RetryAfter(7))],
    );
    bridge.add_channel(channel.clone());

    let created = create(&bridge, telegram_ask()).await;
    channel.calls(1).await;
    clock.advance(Duration::from_secs(6));
    // A round trip to the database gives the delivery task its chance to
    // run: it must still be waiting.
    bridge.get(&created.id).await.expect("get");
    assert_eq!(channel.calls_now().len(), 1);
    clock.advance(Duration::from_secs(1));
    assert_eq!(channel.calls(2).await[1], format!("deliver {}", created.id));
}

async fn rate_limits_in_a_burst_do_not_use_up_the_attempts(db: Scratch) {
    // Four attempts in these tests; ten rate limits in a row, then a
    // transient failure, still end in a delivery.
    let clock = Clock::manual(START);
    let bridge = open(&db, &clock).await;
    let mut script: Vec<Result<(), PlatformFailure>> = (0..10)
        .map(|_| Err(PlatformFailure::RetryAfter(0)))
        .collect();
    script.push(Err(PlatformFailure::Transient("502".to_owned())));
    let channel = ScriptedChannel::new(ChannelKind::Telegram, script);
    bridge.add_channel(channel.clone());
    let created = create(&bridge, telegram_ask()).await;
    assert_eq!(
        channel.calls(12).await[11],
        format!("deliver {}", created.id)
    );
    assert_eq!(
        bridge.get(&created.id).await.expect("get").state,
        State::Pending
    );
}

async fn delivery_stops_when_the_ask_ends_first(db: Scratch) {
    let clock = Clock::manual(START);
    let bridge = open(&db, &clock).await;
    let channel = ScriptedChannel::new(
        ChannelKind::Telegram,
        vec![Err(PlatformFailure::RetryAfter(600))],
    );
    bridge.add_channel(channel.clone());
    let created = create(&bridge, telegram_ask()).await;
    channel.calls(1).await;
    let cancelled = bridge.cancel(&created.id).await.expect("cancel");
    assert!(matches!(cancelled.state, State::Cancelled { .. }));
    // A later channel call would show up here; the retry was dropped and
    // the never-posted ask is not closed. Prove the outbox is idle by
    // delivering another ask through the same channel.
    clock.advance(Duration::from_secs(600));
    let other = create(&bridge, telegram_ask()).await;
    assert_eq!(
        channel.calls(2).await,
        [
            format!("deliver {}", created.id),
            format!("deliver {}", other.id)
        ]
    );
}

/// Creates a Telegram ask on `bridge` whose delivery never gets through
/// (a rate limit of an hour; with no channel it would fail at once), then
/// crashes the bridge: the ask is stored, pending and undelivered.
async fn crash_before_delivery(bridge: Bridge) -> AskView {
    let stuck = ScriptedChannel::new(
        ChannelKind::Telegram,
        vec![Err(PlatformFailure::RetryAfter(3_600))],
    );
    bridge.add_channel(stuck.clone());
    let created = create(&bridge, telegram_ask()).await;
    stuck.calls(1).await;
    crash(bridge);
    created
}

async fn asks_reloaded_before_their_channel_is_registered_are_delivered_when_it_is(db: Scratch) {
    let clock = Clock::manual(START);
    let created = crash_before_delivery(open_bare(&db, &clock).await).await;

    let b = open_bare(&db, &clock).await;
    assert_eq!(b.get(&created.id).await.expect("get").state, State::Pending);
    let channel = ScriptedChannel::new(ChannelKind::Telegram, vec![]);
    b.add_channel(channel.clone());
    assert_eq!(channel.calls(1).await, [format!("deliver {}", created.id)]);
}

async fn delivered_asks_are_not_delivered_again_after_a_restart(db: Scratch) {
    let clock = Clock::manual(START);
    let a = open_bare(&db, &clock).await;
    let first = ScriptedChannel::new(ChannelKind::Telegram, vec![]);
    a.add_channel(first.clone());
    let delivered = create(&a, telegram_ask()).await;
    first.calls(1).await;
    a.flush().await.expect("flush");
    crash(a);

    let b = open_bare(&db, &clock).await;
    let second = ScriptedChannel::new(ChannelKind::Telegram, vec![]);
    b.add_channel(second.clone());
    // The only calls: the new ask's delivery, and closing the old one
    // (which is not delivered again).
    let fresh = create(&b, telegram_ask()).await;
    b.cancel(&delivered.id).await.expect("cancel");
    let mut calls = second.calls(2).await;
    calls.sort();
    let mut expected = [
        format!("deliver {}", fresh.id),
        format!("end {} cancelled", delivered.id),
    ];
    expected.sort();
    assert_eq!(calls, expected);
}

/// Runs `sql` on the scratch database beside the bridges using it.
async fn execute(db: &Scratch, sql: &str) {
    match db {
        Scratch::Sqlite(_) => {
            let mut connection = sqlx::sqlite::SqliteConnection::connect(&db.url())
                .await
                .expect("connect");
            sqlx::query(sql).execute(&mut connection).await.expect(sql);
        }
        Scratch::Postgres { .. } => {
            let mut connection = sqlx::postgres::PgConnection::connect(&db.url())
                .await
                .expect("connect");
            sqlx::query(sql).execute(&mut connection).await.expect(sql);
        }
    }
}

/// Makes the database refuse (`true`) or take again (`false`) every
/// record of a delivery, as a full disk or a lost connection would.
async fn refuse_recording_deliveries(db: &Scratch, refuse: bool) {
    let statements: &[&str] = match (db, refuse) {
        (Scratch::Sqlite(_), true) => &["CREATE TRIGGER refuse BEFORE UPDATE OF delivered_at \
             ON asks BEGIN SELECT RAISE(ABORT, 'refused'); END"],
        (Scratch::Sqlite(_), false) => &["DROP TRIGGER refuse"],
        (Scratch::Postgres { .. }, true) => &[
            "CREATE FUNCTION refuse() RETURNS trigger LANGUAGE plpgsql AS \
             $$ BEGIN RAISE EXCEPTION 'refused'; END $$",
            "CREATE TRIGGER refuse BEFORE UPDATE OF delivered_at ON asks \
             FOR EACH ROW EXECUTE FUNCTION refuse()",
        ],
        (Scratch::Postgres { .. }, false) => &["DROP TRIGGER refuse ON asks"],
    };
    for sql in statements {
        execute(db, sql).await;
    }
}

/// The asks instance `a` created that nobody has recorded as delivered.
async fn undelivered_of_a(db: &Scratch) -> Vec<String> {
    open_store(db)
        .await
        .claim_deliveries("a", wall_now(), true)
        .await
        .expect("claim")
}

async fn a_delivery_the_database_refused_to_record_is_recorded_later(db: Scratch) {
    let clock = Clock::manual(START);
    let created = crash_before_delivery(open_as(&db, &clock, "a").await).await;
    let a = open_as(&db, &clock, "a").await;
    refuse_recording_deliveries(&db, true).await;
    let channel = ScriptedChannel::new(ChannelKind::Telegram, vec![]);
    a.add_channel(channel.clone());
    assert_eq!(channel.calls(1).await, [format!("deliver {}", created.id)]);
    // Once the delivery is noted, recording it fails (the recorder may be
    // trying too: until then a flush finds nothing to record).
    while a.flush().await.is_ok() {
        tokio::task::yield_now().await;
    }
    refuse_recording_deliveries(&db, false).await;
    a.flush().await.expect("flush once the database takes it");
    assert_eq!(undelivered_of_a(&db).await, Vec::<String>::new());
}

async fn leaving_records_what_was_delivered_first(db: Scratch) {
    let clock = Clock::manual(START);
    let created = crash_before_delivery(open_as(&db, &clock, "a").await).await;
    let a = open_as(&db, &clock, "a").await;
    let channel = ScriptedChannel::new(ChannelKind::Telegram, vec![]);
    a.add_channel(channel.clone());
    assert_eq!(channel.calls(1).await, [format!("deliver {}", created.id)]);
    a.leave().await.expect("leave");
    crash(a);
    assert_eq!(undelivered_of_a(&db).await, Vec::<String>::new());
}

// ---------------------------------------------------------------------
// Events, listing, message references
// ---------------------------------------------------------------------

async fn progress_is_an_update_event_and_a_channel_update(db: Scratch) {
    let clock = Clock::manual(START);
    let bridge = open(&db, &clock).await;
    let channel = ScriptedChannel::new(ChannelKind::Telegram, vec![]);
    bridge.add_channel(channel.clone());
    let mut events = bridge.subscribe();
    let mut ask = two_question_ask();
    ask.target = Some(Target::parse("telegram:123").expect("target"));
    let created = create(&bridge, ask).await;
    let (step, _) = bridge
        .handle(
            &created.id,
            Input::Other {
                from: person("alice"),
                admitted: true,
                question: 1,
                text: "later".to_owned(),
                via: Via::Modal,
            },
        )
        .await
        .expect("other");
    assert!(matches!(step, Step::Progress(_)), "{step:?}");
    assert!(matches!(events.recv().await, Ok(BridgeEvent::Created(_))));
    match events.recv().await {
        Ok(BridgeEvent::Updated(view)) => assert!(view.answers[1].is_some()),
        other => panic!("expected Updated, got {other:?}"),
    }
    assert_eq!(
        channel.calls(2).await,
        [
            format!("deliver {}", created.id),
            format!("update {}", created.id)
        ]
    );
}

async fn list_filters_by_state_and_channel_newest_first(db: Scratch) {
    let clock = Clock::manual(START);
    let bridge = open(&db, &clock).await;
    bridge.add_channel(ScriptedChannel::new(ChannelKind::Telegram, vec![]));
    let first = create(&bridge, deploy_ask(900)).await;
    clock.advance(Duration::from_secs(1));
    let second = create(&bridge, telegram_ask()).await;
    clock.advance(Duration::from_secs(1));
    let third = create(&bridge, deploy_ask(900)).await;
    bridge.cancel(&third.id).await.expect("cancel");

    let ids = |views: Vec<AskView>| views.into_iter().map(|v| v.id).collect::<Vec<_>>();
    let all = bridge.list(ListFilter::default()).await.expect("list");
    assert_eq!(
        ids(all),
        [third.id.clone(), second.id.clone(), first.id.clone()]
    );
    let pending = bridge
        .list(ListFilter {
            pending_only: true,
            ..ListFilter::default()
        })
        .await
        .expect("list");
    assert_eq!(ids(pending), [second.id.clone(), first.id.clone()]);
    let web = bridge
        .list(ListFilter {
            channel: Some(ChannelKind::Web),
            ..ListFilter::default()
        })
        .await
        .expect("list");
    assert_eq!(ids(web), [third.id.clone(), first.id.clone()]);
    let newest = bridge
        .list(ListFilter {
            limit: Some(1),
            ..ListFilter::default()
        })
        .await
        .expect("list");
    assert_eq!(ids(newest), [third.id]);
}

async fn a_channel_value_set_first_stands_and_a_later_one_replaces_it_only_when_set(db: Scratch) {
    let clock = Clock::manual(START);
    let a = open(&db, &clock).await;
    let b = open(&db, &clock).await;
    let kind = ChannelKind::Email;
    assert_eq!(a.channel_value(kind, "secret").await.expect("read"), None);
    // Two instances making one: the first stands for both.
    let first = a
        .first_channel_value(kind, "secret", "made-by-a")
        .await
        .expect("first");
    let second = b
        .first_channel_value(kind, "secret", "made-by-b")
        .await
        .expect("second");
    assert_eq!(
        (first.as_str(), second.as_str()),
        ("made-by-a", "made-by-a")
    );
    // Setting outright replaces it; the first-write path then keeps that.
    b.set_channel_value(kind, "secret", "set")
        .await
        .expect("set");
    assert_eq!(
        a.first_channel_value(kind, "secret", "again")
            .await
            .expect("first"),
        "set"
    );
    // Another channel's key of the same name is its own.
    assert_eq!(
        a.channel_value(ChannelKind::Teams, "secret")
            .await
            .expect("read"),
        None
    );
}

async fn message_references_are_stored_and_found_after_a_restart(db: Scratch) {
    let clock = Clock::manual(START);
    let a = open(&db, &clock).await;
    let created = create(&a, deploy_ask(900)).await;
    let message = MessageRef {
        ask_id: created.id.clone(),
        channel: ChannelKind::Telegram,
        conversation: "-100123/7".to_owned(),
        message_id: "55".to_owned(),
        extra: Some(r#"{"key":"k1"}"#.to_owned()),
    };
    a.save_message_ref(&message).await.expect("save");
    // Saving again updates `extra`.
    let edited = MessageRef {
        extra: Some(r#"{"key":"k2"}"#.to_owned()),
        ..message.clone()
    };
    a.save_message_ref(&edited).await.expect("save again");
    crash(a);

    let b = open(&db, &clock).await;
    assert_eq!(
        b.message_refs(&created.id).await.expect("refs"),
        std::slice::from_ref(&edited)
    );
    assert_eq!(
        b.find_message_ref(ChannelKind::Telegram, "-100123/7", "55")
            .await
            .expect("find"),
        Some(edited)
    );
    assert_eq!(
        b.find_message_ref(ChannelKind::Telegram, "-100123/7", "56")
            .await
            .expect("find"),
        None
    );
}

// ---------------------------------------------------------------------
// Several instances: leases, delivery owners, deadlines, announcements
// ---------------------------------------------------------------------

/// A bridge named `instance` on `db` with a web channel.
async fn open_as(db: &Scratch, clock: &Clock, instance: &str) -> Bridge {
    let target = Target::parse("web").expect("web target");
    let bridge = Bridge::open_with(
        BridgeOptions::new(db.url(), target).instance(instance),
        tuning(clock),
    )
    .await
    .expect("open the bridge");
    bridge.add_channel(Arc::new(WebChannel));
    bridge
}

async fn open_store(db: &Scratch) -> Arc<dyn Store> {
    askbridge::store::open(&db.url())
        .await
        .expect("open the store")
}

/// Now on the wall clock, as leases count, in milliseconds.
fn wall_now() -> i64 {
    let elapsed = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("after 1970");
    i64::try_from(elapsed.as_millis()).expect("fits")
}

async fn a_lease_has_one_holder_until_it_runs_out(db: Scratch) {
    let store = open_store(&db).await;
    let take = |holder: &'static str, now: i64| {
        let store = Arc::clone(&store);
        async move {
            store
                .take_lease("telegram/1", holder, now, now + 10_000)
                .await
                .expect("take")
        }
    };
    let t = 1_000_000;
    assert_eq!(take("a", t).await, LeaseTaken::Held);
    assert_eq!(take("b", t + 1).await, LeaseTaken::No);
    // Renewed by its holder, it lasts from the renewal.
    assert_eq!(take("a", t + 5_000).await, LeaseTaken::Held);
    assert_eq!(take("b", t + 14_999).await, LeaseTaken::No);
    // Run out: taken over, and the old holder is out.
    assert_eq!(take("b", t + 15_000).await, LeaseTaken::TakenOver);
    assert_eq!(take("a", t + 15_001).await, LeaseTaken::No);
    // Only the holder can give it up; then it is free at once.
    store
        .release_lease("telegram/1", "a")
        .await
        .expect("release");
    assert_eq!(take("a", t + 15_002).await, LeaseTaken::No);
    store
        .release_lease("telegram/1", "b")
        .await
        .expect("release");
    assert_eq!(take("a", t + 15_003).await, LeaseTaken::Held);
    // Names are independent.
    let other = store
        .take_lease("discord/gateway", "b", t, t + 10_000)
        .await
        .expect("take");
    assert_eq!(other, LeaseTaken::Held);
}

async fn instances_racing_for_a_free_lease_take_it_once(db: Scratch) {
    let store = open_store(&db).await;
    let tasks: Vec<_> = (0..16)
        .map(|n| {
            let store = Arc::clone(&store);
            tokio::spawn(async move {
                store
                    .take_lease("telegram/1", &format!("i{n}"), 0, 10_000)
                    .await
                    .expect("take")
            })
        })
        .collect();
    let mut held = 0;
    for task in tasks {
        if task.await.expect("task").held() {
            held += 1;
        }
    }
    assert_eq!(held, 1);
}

async fn undelivered_asks_of_a_dead_instance_are_claimed_once(db: Scratch) {
    let clock = Clock::manual(START);
    let created = crash_before_delivery(open_as(&db, &clock, "a").await).await;

    let store = open_store(&db).await;
    let now = wall_now();
    // While a's lease lasts, its asks are its own.
    let early = store
        .claim_deliveries("b", now, false)
        .await
        .expect("claim");
    assert!(early.is_empty(), "{early:?}");
    // Back under its own name, a takes them at once.
    let own = store.claim_deliveries("a", now, true).await.expect("claim");
    assert_eq!(own, std::slice::from_ref(&created.id));
    // Once a's lease ran out, of two instances claiming together one
    // gets the ask.
    let later = now + 3_600_000;
    for live in ["b", "c"] {
        let taken = store
            .take_lease(&format!("instance/{live}"), live, later, later + 10_000)
            .await
            .expect("lease");
        assert!(taken.held());
    }
    let (b, c) = tokio::join!(
        store.claim_deliveries("b", later, false),
        store.claim_deliveries("c", later, false)
    );
    let (b, c) = (b.expect("claim b"), c.expect("claim c"));
    assert_eq!(b.len() + c.len(), 1, "b {b:?}, c {c:?}");
    // Once every lease ran out, anyone may; delivered asks are nobody's.
    let again = store
        .claim_deliveries("d", later + 3_600_000, false)
        .await
        .expect("claim");
    assert_eq!(again.len(), 1, "still undelivered: {again:?}");
    store
        .mark_delivered(&[created.id.as_str()], later)
        .await
        .expect("mark");
    let none = store
        .claim_deliveries("e", later + 7_200_000, false)
        .await
        .expect("claim");
    assert!(none.is_empty(), "{none:?}");
}

fn timed_out_count(bridge: &Bridge) -> u64 {
    bridge
        .metrics()
        .ended
        .iter()
        .find(|(status, _)| *status == "timed_out")
        .map_or(0, |(_, count)| *count)
}

async fn two_instances_racing_on_a_deadline_record_one_timeout(db: Scratch) {
    let clock = Clock::manual(START);
    let a = open_as(&db, &clock, "a").await;
    let b = open_as(&db, &clock, "b").await;
    for _ in 0..5 {
        let created = create(&a, deploy_ask(60)).await;
        // b takes the ask in and arms its deadline too.
        assert_eq!(b.get(&created.id).await.expect("get").state, State::Pending);
        clock.advance(Duration::from_secs(61));
        let (on_a, on_b) = tokio::join!(
            a.wait(&created.id, Duration::from_secs(3_600)),
            b.wait(&created.id, Duration::from_secs(3_600))
        );
        assert_eq!(on_a.expect("wait a").state, State::TimedOut);
        assert_eq!(on_b.expect("wait b").state, State::TimedOut);
    }
    assert_eq!(timed_out_count(&a) + timed_out_count(&b), 5);
}

/// Longest a test waits for an announcement before failing.
const HEARD_WITHIN: Duration = Duration::from_secs(60);

/// Waits on `bridge` for an hour of the manual clock, which tests never
/// move that far: only an end heard from elsewhere wakes it.
fn wait_long(bridge: &Bridge, id: &str) -> tokio::task::JoinHandle<Result<AskView, BridgeError>> {
    let bridge = bridge.clone();
    let id = id.to_owned();
    tokio::spawn(async move { bridge.wait(&id, Duration::from_secs(3_600)).await })
}

/// What a [`wait_long`] returned, failing if it did not wake in time.
async fn woken(waiter: tokio::task::JoinHandle<Result<AskView, BridgeError>>) -> AskView {
    tokio::time::timeout(HEARD_WITHIN, waiter)
        .await
        .expect("the waiter woke in time")
        .expect("task")
        .expect("wait")
}

async fn next_event_for(
    events: &mut tokio::sync::broadcast::Receiver<BridgeEvent>,
    id: &str,
) -> BridgeEvent {
    tokio::time::timeout(HEARD_WITHIN, async {
        loop {
            let event = events.recv().await.expect("an event");
            let view = match &event {
                BridgeEvent::Created(view)
                | BridgeEvent::Updated(view)
                | BridgeEvent::Ended(view)
                | BridgeEvent::Arrived(view) => view,
            };
            if view.id == id {
                return event;
            }
        }
    })
    .await
    .expect("the event was announced in time")
}

async fn a_thousand_replies_over_three_instances_record_one_answer_and_wake_every_waiter(
    db: Scratch,
) {
    let clock = Clock::manual(START);
    let instances = [
        open_as(&db, &clock, "a").await,
        open_as(&db, &clock, "b").await,
        open_as(&db, &clock, "c").await,
    ];
    let created = create(&instances[0], deploy_ask(900)).await;
    // A waiter on every instance, none of them on a deadline that could
    // end it: each wakes because the answer was announced.
    let waiters: Vec<_> = instances
        .iter()
        .map(|bridge| wait_long(bridge, &created.id))
        .collect();
    let steps = race(&instances, &created.id, 1_000).await;
    let winner = exactly_one_winner(&steps);
    for waiter in waiters {
        let view = woken(waiter).await;
        assert!(
            matches!(view.state, State::Answered { ref by, .. } if by.user_id == winner),
            "{:?}",
            view.state
        );
    }
}

async fn progress_made_elsewhere_is_told_to_subscribers_whichever_path_notices_it(db: Scratch) {
    let clock = Clock::manual(START);
    let a = open_as(&db, &clock, "a").await;
    let b = open_as(&db, &clock, "b").await;
    let created = create(&a, two_question_ask()).await;
    let mut on_a = a.subscribe();
    let (step, _) = answer_the_first_of_two(&b, &created.id).await;
    assert!(matches!(step, Step::Progress(_)), "{step:?}");
    // A read on a notices the change before (or instead of) any
    // announcement; a's subscribers hear of it all the same.
    let seen = a.get(&created.id).await.expect("get");
    assert_eq!(seen.answers.iter().flatten().count(), 1, "{seen:?}");
    match next_event_for(&mut on_a, &created.id).await {
        BridgeEvent::Updated(view) => {
            assert_eq!(view.answers.iter().flatten().count(), 1, "{view:?}");
        }
        other => panic!("expected the progress, got {other:?}"),
    }
}

async fn a_waiter_on_one_instance_hears_an_answer_recorded_on_another(db: Scratch) {
    let clock = Clock::manual(START);
    let a = open_as(&db, &clock, "a").await;
    let b = open_as(&db, &clock, "b").await;
    let mut on_a = a.subscribe();
    let mut on_b = b.subscribe();
    let created = create(&a, two_question_ask()).await;
    // b's page hears of the new ask without anyone asking b.
    assert!(matches!(
        next_event_for(&mut on_b, &created.id).await,
        BridgeEvent::Created(_)
    ));

    let waiter = wait_long(&a, &created.id);
    let (step, _) = answer_the_first_of_two(&b, &created.id).await;
    assert!(matches!(step, Step::Progress(_)), "{step:?}");
    match next_event_for(&mut on_a, &created.id).await {
        BridgeEvent::Created(_) => {
            // a's own creation; the progress comes next.
            assert!(matches!(
                next_event_for(&mut on_a, &created.id).await,
                BridgeEvent::Updated(_)
            ));
        }
        other => assert!(matches!(other, BridgeEvent::Updated(_)), "{other:?}"),
    }
    let (step, _) = b
        .handle(&created.id, reply("alice", "ship it on friday"))
        .await
        .expect("reply");
    assert!(matches!(step, Step::Finished(_)), "{step:?}");
    // The clock never moves: only the announcement can end a's wait.
    let view = woken(waiter).await;
    assert!(
        matches!(view.state, State::Answered { ref by, .. } if by.user_id == "alice"),
        "{:?}",
        view.state
    );
    assert!(a.metrics().announcements >= 3, "{:?}", a.metrics());
}

async fn a_dropped_change_feed_reconnects_and_misses_nothing(db: Scratch) {
    let clock = Clock::manual(START);
    let a = open_as(&db, &clock, "a").await;
    let b = open_as(&db, &clock, "b").await;
    let created = create(&a, deploy_ask(900)).await;
    assert_eq!(b.get(&created.id).await.expect("get").state, State::Pending);
    let waiter = wait_long(&a, &created.id);
    // Every askbridge connection to the database is cut: the listeners
    // and the pools' connections.
    let Scratch::Postgres { server, name } = &db else {
        unreachable!("a Postgres test");
    };
    let mut admin = sqlx::postgres::PgConnection::connect(server)
        .await
        .expect("connect");
    sqlx::query(
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity \
         WHERE datname = $1 AND application_name = 'askbridge'",
    )
    .bind(name)
    .execute(&mut admin)
    .await
    .expect("terminate");
    // Answered on b whether or not a's feed is back yet: a hears it, or
    // re-reads it on reconnecting.
    let (step, _) = b.handle(&created.id, pick("bob", 1)).await.expect("pick");
    assert!(matches!(step, Step::Finished(_)), "{step:?}");
    let view = woken(waiter).await;
    assert!(
        matches!(view.state, State::Answered { .. }),
        "{:?}",
        view.state
    );
}

async fn a_read_in_flight_when_its_connection_is_cut_is_tried_again(db: Scratch) {
    let store = askbridge::store::PostgresStore::open(&db.url())
        .await
        .expect("open");
    let Scratch::Postgres { server, name } = &db else {
        unreachable!("a Postgres test");
    };
    // Held by another session, the lock keeps the read waiting in the
    // server until the lock is let go.
    let mut locker = sqlx::postgres::PgConnection::connect(&db.url())
        .await
        .expect("connect");
    sqlx::query("BEGIN")
        .execute(&mut locker)
        .await
        .expect("begin");
    sqlx::query("LOCK TABLE asks IN ACCESS EXCLUSIVE MODE")
        .execute(&mut locker)
        .await
        .expect("lock");
    let read = tokio::spawn(async move { store.load_ask("ask_nobody").await });
    let mut admin = sqlx::postgres::PgConnection::connect(server)
        .await
        .expect("connect");
    // The read's connection, once the read waits on the lock; cut.
    loop {
        let cut: Option<bool> = sqlx::query_scalar(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity \
             WHERE datname = $1 AND application_name = 'askbridge' \
               AND wait_event_type = 'Lock'",
        )
        .bind(name)
        .fetch_optional(&mut admin)
        .await
        .expect("terminate");
        if cut == Some(true) {
            break;
        }
        tokio::task::yield_now().await;
    }
    sqlx::query("COMMIT")
        .execute(&mut locker)
        .await
        .expect("unlock");
    let found = read.await.expect("task").expect("the read, tried again");
    assert_eq!(found, None);
}

// ---------------------------------------------------------------------
// Both backends
// ---------------------------------------------------------------------

/// Runs each named test on a SQLite file (`sqlite::…`) and on a Postgres
/// database (`postgres::…`), on a current-thread runtime or, for the
/// tests that race tasks against each other, a multi-thread one.
macro_rules! on_both_backends {
    (current_thread: [$($single:ident),* $(,)?], multi_thread: [$($multi:ident),* $(,)?] $(,)?) => {
        mod sqlite {
            $(
                #[tokio::test]
                async fn $single() {
                    super::$single(super::Scratch::sqlite()).await;
                }
            )*
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
                async fn $multi() {
                    super::$multi(super::Scratch::sqlite()).await;
                }
            )*
        }
        mod postgres {
            $(
                #[tokio::test]
                async fn $single() {
                    super::$single(super::Scratch::postgres().await).await;
                }
            )*
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
                async fn $multi() {
                    super::$multi(super::Scratch::postgres().await).await;
                }
            )*
        }
    };
}

on_both_backends!(
    current_thread: [
        a_lease_has_one_holder_until_it_runs_out,
        progress_made_elsewhere_is_told_to_subscribers_whichever_path_notices_it,
        rate_limits_in_a_burst_do_not_use_up_the_attempts,
        first_answer_finishes_the_ask_and_later_replies_are_already_ended,
        unknown_ids_are_not_found,
        cancel_ends_a_pending_ask_and_returns_an_ended_one_as_is,
        an_answer_the_host_overtook_is_stored_as_too_late_and_survives_a_restart,
        asks_without_a_target_go_to_the_default_and_named_users_are_enforced,
        pending_asks_survive_a_crash_and_expired_ones_end_timed_out_on_open,
        partial_answers_survive_a_restart,
        a_deadline_ends_the_ask_timed_out_and_wakes_its_waiters,
        a_wait_that_runs_out_returns_the_pending_ask,
        an_idempotency_key_returns_the_same_ask_and_refuses_a_different_one,
        a_permanent_delivery_error_ends_the_ask_delivery_failed,
        an_ask_for_a_channel_nobody_registered_ends_delivery_failed,
        transient_delivery_errors_are_retried_until_delivered,
        a_rate_limit_is_waited_out_on_the_clock,
        delivery_stops_when_the_ask_ends_first,
        asks_reloaded_before_their_channel_is_registered_are_delivered_when_it_is,
        delivered_asks_are_not_delivered_again_after_a_restart,
        a_delivery_the_database_refused_to_record_is_recorded_later,
        leaving_records_what_was_delivered_first,
        progress_is_an_update_event_and_a_channel_update,
        list_filters_by_state_and_channel_newest_first,
        message_references_are_stored_and_found_after_a_restart,
        a_channel_value_set_first_stands_and_a_later_one_replaces_it_only_when_set,
        an_ask_in_several_places_is_answered_once_and_closed_in_each,
        a_place_that_fails_does_not_fail_the_ask_while_another_holds_it,
        an_ask_in_several_places_comes_back_in_each_after_a_restart,
        an_escalation_step_is_posted_at_its_time_even_after_a_crash,
        an_escalation_step_not_due_when_the_ask_ends_is_never_posted,
        an_ask_reaches_the_web_page_at_its_steps_time_even_after_a_crash,
        a_reminder_is_sent_once_at_its_time_even_after_a_crash,
        a_reminder_not_posted_before_a_crash_is_offered_again,
        configured_defaults_remind_and_escalate_asks_that_do_not_say,
        webhook_deliveries_are_written_with_the_ask_and_at_each_event_asked_for,
        an_ask_that_timed_out_while_the_bridge_was_down_has_its_webhook_due_on_open,
    ],
    multi_thread: [
        three_instances_send_each_reminder_once,
        three_instances_post_an_escalation_step_once,
        instances_racing_for_a_free_lease_take_it_once,
        undelivered_asks_of_a_dead_instance_are_claimed_once,
        two_instances_racing_on_a_deadline_record_one_timeout,
        with_no_lifecycle_kept_in_memory_every_path_reads_the_database,
        many_concurrent_replies_on_one_bridge_record_one_answer,
        two_bridges_on_one_file_record_one_answer,
        a_waiter_on_one_bridge_sees_an_answer_taken_by_another_when_its_wait_ends,
    ],
);

/// Announcements between instances and cut connections exist on Postgres
/// only (SQLite is one instance in one file): these run there.
mod postgres_only {
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_read_in_flight_when_its_connection_is_cut_is_tried_again() {
        super::a_read_in_flight_when_its_connection_is_cut_is_tried_again(
            super::Scratch::postgres().await,
        )
        .await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
    async fn a_waiter_on_one_instance_hears_an_answer_recorded_on_another() {
        super::a_waiter_on_one_instance_hears_an_answer_recorded_on_another(
            super::Scratch::postgres().await,
        )
        .await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
    async fn a_thousand_replies_over_three_instances_record_one_answer_and_wake_every_waiter() {
        super::a_thousand_replies_over_three_instances_record_one_answer_and_wake_every_waiter(
            super::Scratch::postgres().await,
        )
        .await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
    async fn a_dropped_change_feed_reconnects_and_misses_nothing() {
        super::a_dropped_change_feed_reconnects_and_misses_nothing(
            super::Scratch::postgres().await,
        )
        .await;
    }
}

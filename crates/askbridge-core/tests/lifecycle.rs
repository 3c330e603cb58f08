//! The ask lifecycle state machine and the outcome.
//!
//! Most tests are scripts run through one `check` helper: each line is an
//! input, the time it arrives (seconds after creation) and the expected
//! step, written compactly. `check` also asserts that rejections change
//! nothing, that terminal states never change, and that a machine rebuilt
//! from its parts after every step behaves identically.

use askbridge_core::lifecycle::{
    Answer, AskLifecycle, AskParts, Input, Rejection, State, Step, Unknown, UnknownItems,
};
use askbridge_core::model::{
    Ask, ChannelKind, Choice, Place, Question, QuestionKind, Responder, Target, Timestamp, Unset,
};
use askbridge_core::outcome::{Detail, Outcome, Reason, Status, Via};
use askbridge_core::render::{Locale, closing_line};

// ---------------------------------------------------------------- helpers

/// 2026-12-02T11:59:00Z: a pick one minute later lands on the docs example's
/// `answeredAt`.
const T0: Timestamp = Timestamp(1_796_212_800_000 - 60_000);

fn at(secs: u64) -> Timestamp {
    T0.saturating_add_secs(secs)
}

fn choice(label: &str) -> Choice {
    Choice {
        label: label.to_owned(),
        description: None,
        value: None,
        recommended: label.ends_with("(Recommended)"),
        prompt: None,
    }
}

fn question(id: &str, header: &str, kind: QuestionKind, labels: &[&str]) -> Question {
    Question {
        id: id.to_owned(),
        header: header.to_owned(),
        text: format!("{header}?"),
        kind,
        options: labels.iter().map(|label| choice(label)).collect(),
        default: None,
        placeholder: None,
        required: true,
        letters: false,
    }
}

fn optional(mut question: Question) -> Question {
    question.required = false;
    question
}

fn deploy() -> Question {
    let mut q = question(
        "deploy_target",
        "Deploy",
        QuestionKind::Single,
        &["Staging (Recommended)", "Production"],
    );
    q.text = "Where should I deploy the build?".to_owned();
    q.options[0].description = Some("safe, reversible".to_owned());
    q
}

fn notify() -> Question {
    question(
        "notify",
        "Notify",
        QuestionKind::Multi,
        &["Team channel", "On-call", "Nobody"],
    )
}

fn notes() -> Question {
    question("notes", "Notes", QuestionKind::Textarea, &[])
}

fn go() -> Question {
    question("go", "Go", QuestionKind::Confirm, &[])
}

fn ask_to(target: &str, title: Option<&str>, questions: Vec<Question>) -> Ask {
    Ask {
        title: title.map(str::to_owned),
        context: None,
        thread: None,
        questions,
        timeout_seconds: 900,
        target: Some(Target::parse(target).expect("test target")),
        also: Vec::new(),
        escalate: Vec::new(),
        remind: None,
        callback: None,
        approval: false,
        unset: Unset::default(),
    }
}

/// The example ask of docs/ask.md.
fn release() -> Ask {
    ask_to("telegram:123456789", Some("Release 2.4"), vec![deploy()])
}

/// Two questions: single, then multi.
fn release2() -> Ask {
    ask_to(
        "telegram:123456789",
        Some("Release 2.4"),
        vec![deploy(), notify()],
    )
}

fn person(channel: ChannelKind, user_id: &str, name: &str) -> Responder {
    Responder {
        channel,
        user_id: user_id.to_owned(),
        name: Some(name.to_owned()),
        place: None,
    }
}

fn alice() -> Responder {
    person(ChannelKind::Telegram, "42", "Alice")
}

fn bob() -> Responder {
    person(ChannelKind::Telegram, "7", "Bob")
}

fn pick(from: Responder, question: usize, options: &[usize]) -> Input {
    Input::Pick {
        from,
        admitted: true,
        question,
        options: options.to_vec(),
        via: Via::Button,
    }
}

fn other(from: Responder, question: usize, text: &str) -> Input {
    Input::Other {
        from,
        admitted: true,
        question,
        text: text.to_owned(),
        via: Via::Modal,
    }
}

fn reply(from: Responder, text: &str) -> Input {
    Input::Reply {
        from,
        admitted: true,
        text: text.to_owned(),
        unknown_items: UnknownItems::OwnWords,
    }
}

/// A reply typed in a chat: list items that name no option are asked about.
fn chat_reply(from: Responder, text: &str) -> Input {
    Input::Reply {
        from,
        admitted: true,
        text: text.to_owned(),
        unknown_items: UnknownItems::AskBack,
    }
}

fn web(from: Responder, answers: &[(&str, &[&str])]) -> Input {
    structured(from, answers, Via::Web)
}

/// Answers from the agent host's own dialog (an MCP elicitation).
fn host(answers: &[(&str, &[&str])]) -> Input {
    let from = person(ChannelKind::Host, "host", "Claude Code");
    structured(from, answers, Via::Host)
}

fn structured(from: Responder, answers: &[(&str, &[&str])], via: Via) -> Input {
    Input::Answers {
        from,
        admitted: true,
        answers: answers
            .iter()
            .map(|(id, values)| {
                (
                    (*id).to_owned(),
                    values.iter().map(|v| (*v).to_owned()).collect(),
                )
            })
            .collect(),
        via,
    }
}

fn skip(from: Responder) -> Input {
    Input::Skip {
        from,
        admitted: true,
    }
}

fn stranger(input: Input) -> Input {
    match input {
        Input::Reply {
            from,
            text,
            unknown_items,
            ..
        } => Input::Reply {
            from,
            admitted: false,
            text,
            unknown_items,
        },
        Input::Pick {
            from,
            question,
            options,
            via,
            ..
        } => Input::Pick {
            from,
            admitted: false,
            question,
            options,
            via,
        },
        Input::Other {
            from,
            question,
            text,
            via,
            ..
        } => Input::Other {
            from,
            admitted: false,
            question,
            text,
            via,
        },
        Input::Answers {
            from, answers, via, ..
        } => Input::Answers {
            from,
            admitted: false,
            answers,
            via,
        },
        Input::Skip { from, .. } => Input::Skip {
            from,
            admitted: false,
        },
        other => other,
    }
}

/// A step, compactly: `progress [0] open [1]`, `rejected not for you`,
/// `finished answered by 42: Deploy: Staging | Notify: On-call`.
fn describe(step: &Step) -> String {
    match step {
        Step::Rejected(Rejection::NotForYou) => "rejected not for you".to_owned(),
        Step::Rejected(Rejection::AlreadyEnded(state)) => {
            format!("rejected already {}", state.as_str())
        }
        Step::Rejected(Rejection::Invalid(invalid)) => format!("rejected invalid: {invalid}"),
        Step::Progress(progress) => {
            let mut out = format!(
                "progress {:?} open {:?}",
                progress.answered, progress.still_open
            );
            for clarify in &progress.clarify {
                out.push_str(&format!(
                    " clarify {} {:?}",
                    clarify.question, clarify.candidates
                ));
            }
            for Unknown { question, items } in &progress.unknown {
                out.push_str(&format!(" unknown {question} {items:?}"));
            }
            out
        }
        Step::Finished(outcome) => describe_outcome(outcome),
    }
}

fn describe_outcome(outcome: &Outcome) -> String {
    let mut out = format!("finished {}", outcome.status.as_str());
    if let Some(reason) = outcome.reason {
        out.push_str(&format!("/{}", reason.as_str()));
    }
    if let Some(by) = &outcome.answered_by {
        out.push_str(&format!(" by {}", by.user_id));
    }
    out.push_str(": ");
    out.push_str(&outcome.text.replace('\n', " | "));
    out
}

/// Runs a script of `(seconds after creation, input, expected step)` on a
/// fresh machine, twice: once straight, once rebuilt from its parts before
/// every step. Both runs must agree. Returns the straight machine.
fn check(ask: Ask, script: Vec<(u64, Input, &str)>) -> AskLifecycle {
    let mut straight = AskLifecycle::new("ask_1", ask.clone(), T0);
    let mut rebuilt = AskLifecycle::new("ask_1", ask, T0);
    for (line, (secs, input, expect)) in script.into_iter().enumerate() {
        let before = straight.to_parts();
        let step = straight.handle(input.clone(), at(secs));
        assert_eq!(describe(&step), expect, "line {line}: {input:?}");
        match &step {
            Step::Rejected(_) => assert_eq!(straight.to_parts(), before, "line {line} changed"),
            Step::Progress(_) => assert!(straight.state().is_pending(), "line {line}"),
            Step::Finished(_) => {
                assert!(before.state.is_pending(), "line {line}: finished twice");
                assert!(!straight.state().is_pending(), "line {line}");
            }
        }
        if !before.state.is_pending() {
            assert_eq!(
                straight.state(),
                &before.state,
                "line {line}: terminal changed"
            );
        }

        rebuilt = AskLifecycle::from_parts(rebuilt.to_parts()).expect("rebuild");
        let again = rebuilt.handle(input, at(secs));
        assert_eq!(again, step, "line {line}: rebuilt machine differs");
        assert_eq!(rebuilt.to_parts(), straight.to_parts(), "line {line}");
    }
    straight
}

fn finish(ask: Ask, inputs: Vec<Input>) -> Outcome {
    let mut machine = AskLifecycle::new("ask_1", ask, T0);
    let mut last = None;
    for input in inputs {
        last = Some(machine.handle(input, at(60)));
    }
    match last {
        Some(Step::Finished(outcome)) => outcome,
        other => panic!("not finished: {other:?}"),
    }
}

// ------------------------------------------------------------------ time

#[test]
fn rfc3339() {
    fn check_time(millis: u64, expect: &str) {
        assert_eq!(Timestamp(millis).rfc3339(), expect, "{millis}");
        assert_eq!(Timestamp(millis).to_string(), expect, "{millis}");
    }
    check_time(0, "1970-01-01T00:00:00Z");
    check_time(1, "1970-01-01T00:00:00.001Z");
    check_time(1_796_212_800_000, "2026-12-02T12:00:00Z");
    check_time(1_796_212_800_120, "2026-12-02T12:00:00.120Z");
    check_time(951_868_799_000, "2000-02-29T23:59:59Z");
    check_time(951_868_800_000, "2000-03-01T00:00:00Z");
    check_time(1_709_164_800_000, "2024-02-29T00:00:00Z");
    check_time(1_677_628_800_000 - 1, "2023-02-28T23:59:59.999Z");
    check_time(4_107_542_400_000, "2100-03-01T00:00:00Z");
    check_time(4_107_542_400_000 - 86_400_000, "2100-02-28T00:00:00Z");
    check_time(94_694_399_000, "1972-12-31T23:59:59Z");
    check_time(253_402_300_799_000, "9999-12-31T23:59:59Z");
    // Far future: more year digits, no panic.
    assert!(Timestamp(u64::MAX).rfc3339().ends_with('Z'));
    assert_eq!(Timestamp::from_secs(60), Timestamp(60_000));
    assert_eq!(
        Timestamp(u64::MAX).saturating_add_secs(1),
        Timestamp(u64::MAX)
    );
}

// ----------------------------------------------------------- transitions

#[test]
fn each_transition_from_pending() {
    check(
        release(),
        vec![(
            60,
            pick(alice(), 0, &[0]),
            "finished answered by 42: Deploy: Staging (Recommended)",
        )],
    );
    check(
        release(),
        vec![(
            1,
            skip(alice()),
            "finished no_answer/skipped by 42: No answer (skipped)",
        )],
    );
    check(
        release(),
        vec![(
            1,
            Input::Cancel,
            "finished no_answer/cancelled: No answer (cancelled)",
        )],
    );
    check(
        release(),
        vec![(
            0,
            Input::DeliveryFailed {
                reason: "Forbidden: bot was blocked by the user".to_owned(),
            },
            "finished no_answer/delivery_failed: \
             No answer (delivery failed: Forbidden: bot was blocked by the user)",
        )],
    );
    check(
        release(),
        vec![(
            900,
            pick(alice(), 0, &[1]),
            "finished no_answer/timeout: No answer (timeout)",
        )],
    );
}

#[test]
fn terminal_states_never_change() {
    let endings: Vec<(Input, &str)> = vec![
        (pick(alice(), 0, &[0]), "answered"),
        (skip(alice()), "skipped"),
        (Input::Cancel, "cancelled"),
        (
            Input::DeliveryFailed {
                reason: "x".to_owned(),
            },
            "delivery_failed",
        ),
    ];
    for (ending, name) in endings {
        let ended = format!("rejected already {name}");
        let mut script = vec![(1, ending, "")];
        for input in [
            pick(alice(), 0, &[1]),
            other(alice(), 0, "Production"),
            reply(alice(), "2"),
            web(alice(), &[("deploy_target", &["Production"])]),
            skip(alice()),
            Input::Cancel,
            Input::DeliveryFailed {
                reason: "y".to_owned(),
            },
            pick(alice(), 9, &[9]),
        ] {
            script.push((2, input, ended.as_str()));
        }
        // Strangers still hear "not for you", never the state.
        script.push((2, stranger(pick(bob(), 0, &[1])), "rejected not for you"));
        // After the deadline: still the same terminal state.
        script.push((5_000, pick(alice(), 0, &[1]), ended.as_str()));

        let mut machine = AskLifecycle::new("ask_1", release(), T0);
        let first = machine.handle(script[0].1.clone(), at(1));
        assert!(matches!(first, Step::Finished(_)), "{name}");
        let state = machine.state().clone();
        let outcome = machine.outcome();
        for (secs, input, expect) in script.into_iter().skip(1) {
            let step = machine.handle(input.clone(), at(secs));
            assert_eq!(describe(&step), expect, "{name}: {input:?}");
            assert_eq!(machine.state(), &state, "{name}");
        }
        assert_eq!(machine.tick(at(10_000)), None, "{name}");
        assert_eq!(machine.state(), &state, "{name}");
        assert_eq!(machine.outcome(), outcome, "{name}");
        assert_eq!(machine.poll_timeout(), None, "{name}");
    }
}

#[test]
fn first_answer_wins() {
    let machine = check(
        release(),
        vec![
            (
                10,
                pick(alice(), 0, &[1]),
                "finished answered by 42: Deploy: Production",
            ),
            (11, pick(alice(), 0, &[0]), "rejected already answered"),
            (11, pick(bob(), 0, &[0]), "rejected already answered"),
            (12, skip(alice()), "rejected already answered"),
            (13, Input::Cancel, "rejected already answered"),
        ],
    );
    let outcome = machine.outcome().expect("ended");
    assert_eq!(
        outcome.answers,
        vec![("deploy_target".to_owned(), vec!["Production".to_owned()])]
    );
    assert_eq!(outcome.answered_at, at(10));
}

#[test]
fn already_ended_carries_the_state() {
    let mut machine = AskLifecycle::new("ask_1", release(), T0);
    machine.handle(pick(alice(), 0, &[0]), at(60));
    let step = machine.handle(pick(bob(), 0, &[1]), at(61));
    assert_eq!(
        step,
        Step::Rejected(Rejection::AlreadyEnded(State::Answered {
            // Answered in the ask's place on the person's channel.
            by: Responder {
                place: Some(Place::Telegram {
                    chat_id: 123_456_789,
                    thread_id: None
                }),
                ..alice()
            },
            at: at(60),
        }))
    );
}

// --------------------------------------------------------- who may answer

#[test]
fn in_several_places_each_places_own_user_may_answer_there() {
    let mut ask = ask_to("telegram:-1001234@42", None, vec![deploy()]);
    ask.also = vec![
        Target::parse("slack:C0123@U0456").expect("slack"),
        Target::parse("discord:99").expect("discord"),
    ];
    let lifecycle = AskLifecycle::new("ask_1", ask, at(0));
    let at_place = |mut from: Responder, target: &str| {
        from.place = Some(Target::parse(target).expect("place").place);
        from
    };
    let slack = |user: &str| at_place(person(ChannelKind::Slack, user, "S"), "slack:C0123");
    let discord = |user: &str| at_place(person(ChannelKind::Discord, user, "D"), "discord:99");
    let cases = [
        (alice(), true, true),
        (bob(), true, false),
        (slack("U0456"), false, true),
        (slack("U0999"), true, false),
        // Anyone the channel admits, where the place names nobody.
        (discord("5"), true, true),
        (discord("5"), false, false),
        // A Slack user at no place of the ask: the Slack place's rule.
        (person(ChannelKind::Slack, "U0456", "S"), false, true),
        (person(ChannelKind::Slack, "U0999", "S"), true, false),
    ];
    for (from, admitted, may) in cases {
        assert_eq!(
            lifecycle.may_answer(&from, admitted),
            may,
            "{from:?} admitted {admitted}"
        );
    }
}

#[test]
fn named_user_is_the_only_one_who_may_answer() {
    let ask = ask_to("telegram:-1001234@42", None, vec![deploy()]);
    let alice_on_discord = person(ChannelKind::Discord, "42", "Alice");
    check(
        ask,
        vec![
            (1, pick(bob(), 0, &[1]), "rejected not for you"),
            (1, skip(bob()), "rejected not for you"),
            (1, reply(bob(), "2"), "rejected not for you"),
            (
                1,
                web(bob(), &[("deploy_target", &["Production"])]),
                "rejected not for you",
            ),
            (1, other(bob(), 0, "Production"), "rejected not for you"),
            // Same id, other platform: not the named user.
            (1, pick(alice_on_discord, 0, &[1]), "rejected not for you"),
            // The named user needs no allow-list.
            (
                2,
                stranger(pick(alice(), 0, &[0])),
                "finished answered by 42: Deploy: Staging (Recommended)",
            ),
            (3, pick(bob(), 0, &[1]), "rejected not for you"),
        ],
    );
}

#[test]
fn without_a_named_user_the_allow_list_decides() {
    check(
        release(),
        vec![
            (1, stranger(pick(bob(), 0, &[1])), "rejected not for you"),
            (1, stranger(skip(bob())), "rejected not for you"),
            (1, stranger(reply(bob(), "2")), "rejected not for you"),
            (
                2,
                pick(bob(), 0, &[1]),
                "finished answered by 7: Deploy: Production",
            ),
            (3, stranger(pick(alice(), 0, &[0])), "rejected not for you"),
        ],
    );
}

#[test]
fn the_agent_needs_no_admission() {
    let ask = ask_to("telegram:-1001234@42", None, vec![deploy()]);
    check(
        ask,
        vec![(
            1,
            Input::Cancel,
            "finished no_answer/cancelled: No answer (cancelled)",
        )],
    );
}

// ---------------------------------------------------------------- timeout

#[test]
fn timeout_at_the_exact_deadline() {
    let mut machine = AskLifecycle::new("ask_1", release(), T0);
    let deadline = at(900);
    assert_eq!(machine.deadline(), deadline);
    assert_eq!(machine.poll_timeout(), Some(deadline));
    assert_eq!(machine.tick(Timestamp(deadline.0 - 1)), None);
    assert!(machine.state().is_pending());
    let outcome = machine.tick(deadline).expect("timed out");
    assert_eq!(machine.state(), &State::TimedOut);
    assert_eq!(outcome.status, Status::NoAnswer);
    assert_eq!(outcome.reason, Some(Reason::Timeout));
    assert_eq!(outcome.answered_at, deadline);
    assert_eq!(outcome.answered_by, None);
    assert_eq!(machine.tick(at(901)), None, "a timeout is reported once");
    assert_eq!(machine.poll_timeout(), None);
}

#[test]
fn input_at_the_deadline_times_out_first() {
    check(
        release(),
        vec![
            (899, stranger(pick(bob(), 0, &[1])), "rejected not for you"),
            // The clock has run out: the ask ends before the pick is
            // looked at, and the pick is not applied.
            (
                900,
                pick(alice(), 0, &[1]),
                "finished no_answer/timeout: No answer (timeout)",
            ),
            (900, pick(alice(), 0, &[1]), "rejected already timed_out"),
        ],
    );
    // A late input times the ask out even from a stranger or the agent:
    // time passing is not theirs to stop.
    check(
        release(),
        vec![(
            2_000,
            stranger(skip(bob())),
            "finished no_answer/timeout: No answer (timeout)",
        )],
    );
    check(
        release(),
        vec![(
            900,
            Input::Cancel,
            "finished no_answer/timeout: No answer (timeout)",
        )],
    );
}

#[test]
fn timeout_reports_partial_answers() {
    let machine = check(
        release2(),
        vec![
            (10, pick(alice(), 0, &[0]), "progress [0] open [1]"),
            (
                900,
                pick(alice(), 1, &[1]),
                "finished no_answer/timeout: No answer (timeout) | Deploy: Staging (Recommended)",
            ),
        ],
    );
    let outcome = machine.outcome().expect("ended");
    assert_eq!(
        outcome.answers,
        vec![(
            "deploy_target".to_owned(),
            vec!["Staging (Recommended)".to_owned()]
        )]
    );
    assert_eq!(outcome.details.len(), 1);
    assert_eq!(
        outcome.continuation,
        "The user did not answer \"Release 2.4\" (timeout).\n\
         Answers given before it ended:\n\
         - Deploy (deploy_target): Staging (Recommended)\n\
         Continue with these partial answers, or ask again later."
    );
}

// ------------------------------------------------------ partial answers

#[test]
fn partial_answers_are_kept_and_only_missing_reasked() {
    let ask = ask_to("web", Some("Release 2.4"), vec![deploy(), notify(), go()]);
    check(
        ask,
        vec![
            (1, pick(alice(), 1, &[2, 0]), "progress [1] open [0, 2]"),
            (
                2,
                web(alice(), &[("go", &["yes"])]),
                "progress [2] open [0]",
            ),
            (3, other(alice(), 1, "Only QA"), "progress [1] open [0]"),
            (
                4,
                pick(alice(), 0, &[1]),
                "finished answered by 42: Deploy: Production | Notify: Only QA | Go: yes",
            ),
        ],
    );
}

#[test]
fn structured_answers_can_complete_several_questions_at_once() {
    check(
        release2(),
        vec![(
            5,
            web(
                alice(),
                &[
                    ("notify", &["on-call", "TEAM CHANNEL", "the CTO"]),
                    ("deploy_target", &["staging"]),
                ],
            ),
            "finished answered by 42: \
             Deploy: Staging (Recommended) | Notify: Team channel, On-call, the CTO",
        )],
    );
}

// ------------------------------------------------------ invalid inputs

#[test]
fn invalid_inputs_change_nothing() {
    let ask = ask_to(
        "web",
        None,
        vec![deploy(), notify(), notes(), optional(go())],
    );
    check(
        ask,
        vec![
            (
                1,
                pick(alice(), 4, &[0]),
                "rejected invalid: question 4 does not exist",
            ),
            (
                1,
                pick(alice(), usize::MAX, &[0]),
                &format!("rejected invalid: question {} does not exist", usize::MAX),
            ),
            (
                1,
                pick(alice(), 0, &[2]),
                "rejected invalid: question 0 has no option 2",
            ),
            (
                1,
                pick(alice(), 3, &[2]),
                "rejected invalid: question 3 has no option 2",
            ),
            (
                1,
                pick(alice(), 0, &[]),
                "rejected invalid: no option picked for question 0",
            ),
            (
                1,
                pick(alice(), 0, &[0, 1]),
                "rejected invalid: question 0 takes one option",
            ),
            (
                1,
                pick(alice(), 2, &[0]),
                "rejected invalid: question 2 has no options to pick",
            ),
            (
                1,
                pick(alice(), 1, &[0, 3]),
                "rejected invalid: question 1 has no option 3",
            ),
            (
                1,
                other(alice(), 0, "  \n "),
                "rejected invalid: the answer to question 0 is empty",
            ),
            (
                1,
                other(alice(), 7, "x"),
                "rejected invalid: question 7 does not exist",
            ),
            (
                1,
                web(alice(), &[]),
                "rejected invalid: answers: no question answered",
            ),
            (
                1,
                web(alice(), &[("deploy", &["Production"])]),
                "rejected invalid: answers.deploy: no such question",
            ),
            (
                1,
                web(
                    alice(),
                    &[
                        ("deploy_target", &["Production"]),
                        ("deploy_target", &["Staging"]),
                    ],
                ),
                "rejected invalid: answers.deploy_target: answered twice",
            ),
            (
                1,
                web(alice(), &[("deploy_target", &[])]),
                "rejected invalid: answers.deploy_target: the question is required",
            ),
            (
                1,
                web(alice(), &[("deploy_target", &[" ", ""])]),
                "rejected invalid: answers.deploy_target: the question is required",
            ),
            (
                1,
                web(alice(), &[("deploy_target", &["Production", "Staging"])]),
                "rejected invalid: answers.deploy_target: the question takes one answer, got 2",
            ),
            (
                1,
                web(alice(), &[("notes", &["a", "b"])]),
                "rejected invalid: answers.notes: the question takes one answer, got 2",
            ),
            (
                1,
                web(alice(), &[("notify", &["On-call", "the CTO", "the CEO"])]),
                "rejected invalid: answers.notify: 2 strings match no option; \
                 at most one own answer is allowed",
            ),
            // One bad entry rejects the whole input: the good one is not kept.
            (
                1,
                web(alice(), &[("notify", &["On-call"]), ("nope", &["x"])]),
                "rejected invalid: answers.nope: no such question",
            ),
            (2, pick(alice(), 1, &[1, 1]), "progress [1] open [0, 2, 3]"),
        ],
    );
}

// ------------------------------------------------- how inputs are read

#[test]
fn structured_and_other_text_name_options_exactly() {
    let mut valued = deploy();
    valued.options[1].value = Some("prod".to_owned());
    let ask = ask_to(
        "web",
        None,
        vec![valued, notify(), notes(), go(), optional(go())],
    );
    let machine = check(
        ask,
        vec![
            // Label, ignoring case and the "(Recommended)" marker.
            (
                1,
                web(alice(), &[("deploy_target", &["  STAGING "])]),
                "progress [0] open [1, 2, 3, 4]",
            ),
            // A value names its option too.
            (
                1,
                web(alice(), &[("deploy_target", &["prod"])]),
                "progress [0] open [1, 2, 3, 4]",
            ),
            // Own words for a choice question are "Other".
            (1, other(alice(), 1, "Stage"), "progress [1] open [2, 3, 4]"),
            (
                1,
                other(alice(), 2, "  line one\nline two  "),
                "progress [2] open [3, 4]",
            ),
            (1, other(alice(), 3, "TRUE"), "progress [3] open [4]"),
            (1, web(alice(), &[("go", &["no"])]), "progress [3] open [4]"),
            (
                1,
                web(alice(), &[("go_2", &[])]),
                "rejected invalid: answers.go_2: no such question",
            ),
        ],
    );
    let answers = machine.answers();
    assert_eq!(
        answers[0].as_ref().map(|a| a.options.clone()),
        Some(vec![1])
    );
    assert_eq!(
        answers[1],
        Some(Answer {
            options: vec![],
            text: Some("Stage".to_owned()),
            via: Via::Modal,
        })
    );
    assert_eq!(
        answers[2].as_ref().and_then(|a| a.text.clone()).as_deref(),
        Some("line one\nline two")
    );
    assert_eq!(
        answers[3].as_ref().map(|a| a.options.clone()),
        Some(vec![1])
    );
}

// ----------------------------------------------------------------- skips

#[test]
fn skipping() {
    let ask = ask_to("web", None, vec![deploy(), optional(notify())]);
    // An optional question skipped from the web page maps to [].
    let outcome = finish(
        ask.clone(),
        vec![web(alice(), &[("notify", &[])]), pick(alice(), 0, &[1])],
    );
    assert_eq!(outcome.status, Status::Answered);
    assert_eq!(
        outcome.answers,
        vec![
            ("deploy_target".to_owned(), vec!["Production".to_owned()]),
            ("notify".to_owned(), vec![]),
        ]
    );
    assert!(outcome.details[1].skipped);
    assert_eq!(outcome.text, "Deploy: Production\nNotify: (skipped)");
    assert_eq!(
        outcome.continuation,
        "User provided answers.\n\
         - Deploy (deploy_target): Production\n\
         - Notify (notify): (skipped)\n\
         Continue the previous task using these answers."
    );

    // Skip of the whole ask keeps the partial answers in the outcome.
    let outcome = finish(ask.clone(), vec![pick(alice(), 0, &[1]), skip(alice())]);
    assert_eq!(outcome.status, Status::NoAnswer);
    assert_eq!(outcome.reason, Some(Reason::Skipped));
    assert_eq!(outcome.text, "No answer (skipped)\nDeploy: Production");

    // Every answer a skip: the ask was skipped, not answered.
    let all_optional = ask_to("web", None, vec![optional(deploy()), optional(notify())]);
    check(
        all_optional,
        vec![
            (1, web(alice(), &[("notify", &[])]), "progress [1] open [0]"),
            (
                2,
                web(alice(), &[("deploy_target", &[])]),
                "finished no_answer/skipped by 42: No answer (skipped) | \
                 Deploy: (skipped) | Notify: (skipped)",
            ),
        ],
    );
}

// ---------------------------------------------- typed replies (resolver)
//
// These go through `AskMatcher`; they need the real resolver.

#[test]
fn typed_reply_single_question() {
    check(
        release(),
        vec![(
            1,
            reply(alice(), "2"),
            "finished answered by 42: Deploy: Production",
        )],
    );
    check(
        release(),
        vec![(
            1,
            reply(alice(), "I'd rather wait for QA"),
            "finished answered by 42: Deploy: I'd rather wait for QA",
        )],
    );
}

#[test]
fn typed_reply_keyed_lines_keep_partial_answers() {
    check(
        release2(),
        vec![
            (1, reply(alice(), "Q1: 2"), "progress [0] open [1]"),
            (
                2,
                reply(alice(), "1, 2"),
                "finished answered by 42: Deploy: Production | Notify: Team channel, On-call",
            ),
        ],
    );
}

#[test]
fn the_agent_host_may_answer_an_ask_posted_for_someone_else() {
    let ask = ask_to("telegram:-100123@42", Some("Release 2.4"), vec![deploy()]);
    let outcome = finish(ask, vec![host(&[("deploy_target", &["Production"])])]);
    assert_eq!(outcome.details[0].via, Via::Host, "{outcome:?}");
    let by = outcome.answered_by.as_ref().expect("answered by the host");
    assert_eq!(by.channel, ChannelKind::Host);
    assert_eq!(
        closing_line(&outcome, Locale::En),
        "✅ Production — answered in the terminal"
    );
}

#[test]
fn a_list_naming_something_that_is_no_option_is_never_a_partial_pick() {
    // Over HTTP no one is there to ask: the whole reply is own words.
    check(
        release2(),
        vec![
            (1, reply(alice(), "Q1: 2"), "progress [0] open [1]"),
            (
                2,
                reply(alice(), "on-call, pagerduty"),
                "finished answered by 42: Deploy: Production | Notify: on-call, pagerduty",
            ),
        ],
    );
    // In a chat the question stays open and the item is asked about; the
    // other questions of the same reply are taken.
    check(
        release2(),
        vec![
            (
                1,
                chat_reply(alice(), "Q1: 2\nQ2: on-call, pagerduty"),
                r#"progress [0] open [1] unknown 1 ["pagerduty"]"#,
            ),
            (
                2,
                chat_reply(alice(), "on-call, team channel"),
                "finished answered by 42: Deploy: Production | Notify: Team channel, On-call",
            ),
        ],
    );
    // A list whose items all name options, or a reply that is no list,
    // is read the same in a chat.
    check(
        release2(),
        vec![(
            1,
            chat_reply(alice(), "Q1: 1\nQ2: ask me after lunch"),
            "finished answered by 42: Deploy: Staging (Recommended) | Notify: ask me after lunch",
        )],
    );
}

#[test]
fn typed_skip() {
    // A required question cannot be skipped alone: "skip" skips the ask.
    check(
        release(),
        vec![(
            1,
            reply(alice(), "skip"),
            "finished no_answer/skipped by 42: No answer (skipped)",
        )],
    );
    // An optional question skipped by text maps to [].
    let ask = ask_to("web", None, vec![deploy(), optional(notify())]);
    check(
        ask,
        vec![
            (1, reply(alice(), "Q2: skip"), "progress [1] open [0]"),
            (
                2,
                reply(alice(), "1"),
                "finished answered by 42: Deploy: Staging (Recommended) | Notify: (skipped)",
            ),
        ],
    );
}

#[test]
fn typed_reply_after_the_end_is_rejected() {
    check(
        release(),
        vec![
            (
                1,
                pick(alice(), 0, &[0]),
                "finished answered by 42: Deploy: Staging (Recommended)",
            ),
            (2, reply(alice(), "Production"), "rejected already answered"),
            (
                2,
                stranger(reply(bob(), "Production")),
                "rejected not for you",
            ),
        ],
    );
}

// ----------------------------------------------------------------- outcome

#[test]
fn spec_example_outcome() {
    let mut machine = AskLifecycle::new("ask_01JF", release(), T0);
    let step = machine.handle(pick(alice(), 0, &[0]), Timestamp(1_796_212_800_000));
    let Step::Finished(outcome) = step else {
        panic!("not finished: {step:?}");
    };
    assert_eq!(
        outcome,
        Outcome {
            id: "ask_01JF".to_owned(),
            status: Status::Answered,
            reason: None,
            failure: None,
            answers: vec![(
                "deploy_target".to_owned(),
                vec!["Staging (Recommended)".to_owned()]
            )],
            details: vec![Detail {
                id: "deploy_target".to_owned(),
                selected: vec!["Staging (Recommended)".to_owned()],
                values: vec!["Staging (Recommended)".to_owned()],
                other: None,
                via: Via::Button,
                prompts: vec![],
                skipped: false,
            }],
            answered_by: Some(Responder {
                channel: ChannelKind::Telegram,
                user_id: "42".to_owned(),
                name: Some("Alice".to_owned()),
                place: Some(Place::Telegram {
                    chat_id: 123_456_789,
                    thread_id: None,
                }),
            }),
            answered_at: Timestamp(1_796_212_800_000),
            text: "Deploy: Staging (Recommended)".to_owned(),
            continuation: "User provided answers for \"Release 2.4\".\n\
                           - Deploy (deploy_target): Staging (Recommended)\n\
                           Continue the previous task using these answers."
                .to_owned(),
        }
    );
    assert_eq!(outcome.answered_at.rfc3339(), "2026-12-02T12:00:00Z");
    assert_eq!(outcome.status.as_str(), "answered");
    assert_eq!(outcome.details[0].via.as_str(), "button");
    assert_eq!(machine.outcome(), Some(outcome), "outcome() repeats it");
}

/// Answers each question of an ask as given, then checks `text` and
/// `continuation` exactly.
fn check_outcome(ask: Ask, inputs: Vec<Input>, text: &str, continuation: &str) {
    let outcome = finish(ask, inputs);
    assert_eq!(outcome.text, text);
    assert_eq!(outcome.continuation, continuation);
}

#[test]
fn outcome_texts() {
    // Every kind of question, no title.
    let ask = ask_to("web", None, vec![deploy(), notify(), notes(), go()]);
    check_outcome(
        ask,
        vec![
            other(alice(), 0, "Canary"),
            pick(alice(), 1, &[0, 1]),
            other(alice(), 2, "Ship it.\nThen tell me."),
            pick(alice(), 3, &[1]),
        ],
        "Deploy: Canary\n\
         Notify: Team channel, On-call\n\
         Notes: Ship it.\n  Then tell me.\n\
         Go: no",
        "User provided answers.\n\
         - Deploy (deploy_target): Canary\n\
         - Notify (notify): Team channel, On-call\n\
         - Notes (notes): Ship it.\n  Then tell me.\n\
         - Go (go): no\n\
         Continue the previous task using these answers.",
    );

    // No-answer continuations, with and without a title.
    let mut machine = AskLifecycle::new("a", release(), T0);
    let outcome = machine.tick(at(900)).expect("timeout");
    assert_eq!(outcome.text, "No answer (timeout)");
    assert_eq!(
        outcome.continuation,
        "The user did not answer \"Release 2.4\" (timeout). \
         Continue without this input, or ask again later."
    );
    let untitled = ask_to("web", None, vec![deploy()]);
    let mut machine = AskLifecycle::new("a", untitled.clone(), T0);
    let outcome = machine.tick(at(900)).expect("timeout");
    assert_eq!(
        outcome.continuation,
        "The user did not answer (timeout). Continue without this input, or ask again later."
    );
    let outcome = finish(untitled.clone(), vec![skip(alice())]);
    assert_eq!(
        outcome.continuation,
        "The user did not answer (skipped). Continue without this input."
    );
    let outcome = finish(untitled.clone(), vec![Input::Cancel]);
    assert_eq!(
        outcome.continuation,
        "The user did not answer (cancelled). Continue without this input."
    );
    let outcome = finish(
        untitled,
        vec![Input::DeliveryFailed {
            reason: "chat not found\n(400)".to_owned(),
        }],
    );
    assert_eq!(outcome.reason, Some(Reason::DeliveryFailed));
    assert_eq!(outcome.failure.as_deref(), Some("chat not found\n(400)"));
    assert_eq!(
        outcome.text,
        "No answer (delivery failed: chat not found (400))"
    );
    assert_eq!(
        outcome.continuation,
        "The user did not answer (delivery failed: chat not found (400)). \
         Continue without this input, or ask again later."
    );
}

#[test]
fn outcome_details() {
    let mut valued = deploy();
    valued.options[1].value = Some("prod".to_owned());
    let ask = ask_to("web", None, vec![valued, notify(), notes(), go()]);
    let outcome = finish(
        ask,
        vec![
            pick(alice(), 0, &[1]),
            web(alice(), &[("notify", &["Nobody", "the CTO"])]),
            other(alice(), 2, "ok"),
            other(alice(), 3, "only on Fridays"),
        ],
    );
    let details: Vec<_> = outcome
        .details
        .iter()
        .map(|d| {
            format!(
                "{} selected={:?} values={:?} other={:?} via={}",
                d.id,
                d.selected,
                d.values,
                d.other,
                d.via.as_str()
            )
        })
        .collect();
    assert_eq!(
        details,
        [
            r#"deploy_target selected=["Production"] values=["prod"] other=None via=button"#,
            r#"notify selected=["Nobody"] values=["Nobody"] other=Some("the CTO") via=web"#,
            r#"notes selected=[] values=["ok"] other=None via=modal"#,
            r#"go selected=[] values=[] other=Some("only on Fridays") via=modal"#,
        ]
    );
    assert_eq!(
        outcome.answers,
        vec![
            ("deploy_target".to_owned(), vec!["Production".to_owned()]),
            (
                "notify".to_owned(),
                vec!["Nobody".to_owned(), "the CTO".to_owned()]
            ),
            ("notes".to_owned(), vec!["ok".to_owned()]),
            ("go".to_owned(), vec!["only on Fridays".to_owned()]),
        ]
    );
}

fn agent_choice_ask() -> Ask {
    let mut q = question(
        "choice",
        "Choice",
        QuestionKind::Single,
        &["A. Refactor", "B. Rewrite"],
    );
    q.letters = true;
    q.options[0].prompt = Some("Refactor the parser in place.".to_owned());
    q.options[1].prompt = Some("Rewrite the parser from scratch.".to_owned());
    ask_to("web", None, vec![q])
}

#[test]
fn agent_choice_continues_with_the_prompt() {
    let outcome = finish(agent_choice_ask(), vec![pick(alice(), 0, &[1])]);
    assert_eq!(
        outcome.details[0].prompts,
        ["Rewrite the parser from scratch."]
    );
    assert_eq!(outcome.text, "Choice: B. Rewrite");
    assert_eq!(outcome.continuation, "Rewrite the parser from scratch.");

    // Own words continue as the person's own message.
    let outcome = finish(
        agent_choice_ask(),
        vec![other(alice(), 0, "Neither, fix the bug.")],
    );
    assert_eq!(outcome.details[0].prompts, Vec::<String>::new());
    assert_eq!(outcome.continuation, "Neither, fix the bug.");
}

// ---------------------------------------------------------------- rebuild

#[test]
fn rebuild_from_parts_behaves_the_same() {
    let mut original = AskLifecycle::new("ask_9", release2(), T0);
    original.handle(pick(alice(), 1, &[0, 2]), at(5));
    let parts = original.to_parts();
    let mut rebuilt = AskLifecycle::from_parts(parts.clone()).expect("rebuild");
    assert_eq!(rebuilt.to_parts(), parts);
    assert_eq!(rebuilt.deadline(), original.deadline());
    assert_eq!(rebuilt.open_questions(), vec![0]);
    for machine in [&mut original, &mut rebuilt] {
        let step = machine.handle(pick(alice(), 0, &[1]), at(6));
        assert_eq!(
            describe(&step),
            "finished answered by 42: Deploy: Production | Notify: Team channel, Nobody"
        );
    }
    assert_eq!(original.outcome(), rebuilt.outcome());
    let ended = AskLifecycle::from_parts(original.to_parts()).expect("rebuild ended");
    assert_eq!(ended.outcome(), original.outcome());
}

#[test]
fn rebuild_refuses_parts_that_do_not_fit() {
    fn check_rebuild(parts: AskParts, expect: &str) {
        let got = AskLifecycle::from_parts(parts)
            .map(|_| ())
            .map_err(|e| e.to_string());
        assert_eq!(got, Err(expect.to_owned()));
    }
    let parts = |state: State, answers: Vec<Option<Answer>>| AskParts {
        id: "a".to_owned(),
        ask: release2(),
        created_at: T0,
        state,
        answers,
    };
    let chosen = |options: Vec<usize>| {
        Some(Answer {
            options,
            text: None,
            via: Via::Button,
        })
    };
    check_rebuild(
        parts(State::Pending, vec![None]),
        "1 answers stored for 2 questions",
    );
    check_rebuild(
        parts(State::Pending, vec![chosen(vec![5]), None]),
        "answers[0]: question 0 has no option 5",
    );
    check_rebuild(
        parts(State::Pending, vec![chosen(vec![0, 1]), None]),
        "answers[0]: question 0 takes one option",
    );
    check_rebuild(
        parts(State::Pending, vec![None, chosen(vec![2, 0])]),
        "answers[1]: options of question 1 are not ascending and unique",
    );
    check_rebuild(
        parts(State::Pending, vec![Some(Answer::skipped(Via::Web)), None]),
        "answers[0]: answers.deploy_target: the question is required",
    );
    check_rebuild(
        parts(
            State::Answered {
                by: alice(),
                at: at(1),
            },
            vec![chosen(vec![0]), None],
        ),
        "state answered but question 1 has no answer",
    );
    let fine = parts(State::Pending, vec![chosen(vec![1]), chosen(vec![0, 2])]);
    assert!(AskLifecycle::from_parts(fine).is_ok());
}

// --------------------------------------------------------------- proptest

mod random {
    use super::*;
    use proptest::prelude::*;

    fn any_responder() -> impl Strategy<Value = Responder> {
        prop_oneof![
            Just(alice()),
            Just(bob()),
            Just(person(ChannelKind::Slack, "42", "Alice on Slack")),
        ]
    }

    fn any_text() -> impl Strategy<Value = String> {
        prop_oneof![
            Just("1".to_owned()),
            Just("Q1: 2".to_owned()),
            Just("Q2: 1, 3".to_owned()),
            Just("skip".to_owned()),
            Just("yes".to_owned()),
            Just("staging".to_owned()),
            Just(String::new()),
            ".{0,12}",
        ]
    }

    fn any_via() -> impl Strategy<Value = Via> {
        prop_oneof![
            Just(Via::Button),
            Just(Via::Select),
            Just(Via::Text),
            Just(Via::Modal),
            Just(Via::Web),
        ]
    }

    fn any_input() -> impl Strategy<Value = Option<Input>> {
        let who = || (any_responder(), any::<bool>());
        prop_oneof![
            (who(), any_text(), any::<bool>()).prop_map(|((from, admitted), text, ask_back)| {
                Some(Input::Reply {
                    from,
                    admitted,
                    text,
                    unknown_items: if ask_back {
                        UnknownItems::AskBack
                    } else {
                        UnknownItems::OwnWords
                    },
                })
            }),
            (
                who(),
                0..6usize,
                proptest::collection::vec(0..5usize, 0..4),
                any_via()
            )
                .prop_map(|((from, admitted), question, options, via)| Some(
                    Input::Pick {
                        from,
                        admitted,
                        question,
                        options,
                        via,
                    }
                )),
            (who(), 0..6usize, any_text(), any_via()).prop_map(
                |((from, admitted), question, text, via)| Some(Input::Other {
                    from,
                    admitted,
                    question,
                    text,
                    via,
                })
            ),
            (
                who(),
                proptest::collection::vec(
                    (
                        prop_oneof![
                            Just("deploy_target".to_owned()),
                            Just("notify".to_owned()),
                            Just("notes".to_owned()),
                            Just("go".to_owned()),
                            Just("nope".to_owned()),
                        ],
                        proptest::collection::vec(any_text(), 0..3),
                    ),
                    0..4,
                )
            )
                .prop_map(|((from, admitted), answers)| Some(Input::Answers {
                    from,
                    admitted,
                    answers,
                    via: Via::Web,
                })),
            who().prop_map(|(from, admitted)| Some(Input::Skip { from, admitted })),
            Just(Some(Input::Cancel)),
            ".{0,8}".prop_map(|reason| Some(Input::DeliveryFailed { reason })),
            // None: a bare tick.
            Just(None),
        ]
    }

    fn any_ask() -> impl Strategy<Value = Ask> {
        (any::<bool>(), any::<bool>(), any::<bool>()).prop_map(|(named, opt_notify, opt_go)| {
            let target = if named {
                "telegram:-100@42"
            } else {
                "telegram:-100"
            };
            let mut n = notify();
            n.required = !opt_notify;
            let mut g = go();
            g.required = !opt_go;
            ask_to(target, Some("R"), vec![deploy(), n, notes(), g])
        })
    }

    proptest! {
        #[test]
        fn random_inputs_never_panic_and_finish_at_most_once(
            ask in any_ask(),
            script in proptest::collection::vec((0..200u64, any_input()), 0..40),
        ) {
            let mut machine = AskLifecycle::new("ask_p", ask, T0);
            let mut now = T0;
            let mut finished = 0;
            for (advance, input) in script {
                now = now.saturating_add_secs(advance * 10);
                let before = machine.to_parts();
                let result = match input {
                    Some(input) => machine.handle(input, now),
                    None => match machine.tick(now) {
                        Some(outcome) => Step::Finished(outcome),
                        None => Step::Rejected(Rejection::AlreadyEnded(State::Pending)),
                    },
                };
                if !before.state.is_pending() {
                    prop_assert_eq!(machine.state(), &before.state);
                }
                match &result {
                    Step::Finished(outcome) => {
                        finished += 1;
                        prop_assert!(before.state.is_pending());
                        prop_assert!(!machine.state().is_pending());
                        prop_assert_eq!(Some(outcome.clone()), machine.outcome());
                        prop_assert_eq!(outcome.status == Status::Answered, outcome.reason.is_none());
                    }
                    Step::Rejected(_) => prop_assert_eq!(machine.to_parts(), before),
                    Step::Progress(progress) => {
                        prop_assert!(machine.state().is_pending());
                        prop_assert_eq!(&progress.still_open, &machine.open_questions());
                        prop_assert!(!progress.still_open.is_empty());
                    }
                }
                prop_assert!(finished <= 1);
                let rebuilt = AskLifecycle::from_parts(machine.to_parts());
                prop_assert!(rebuilt.is_ok(), "{:?}", rebuilt.err());
                if let Ok(rebuilt) = rebuilt {
                    prop_assert_eq!(rebuilt.outcome(), machine.outcome());
                }
            }
        }
    }
}

// --------------------------------------------------------------- reminders

#[test]
fn reminders_fall_due_from_creation_at_most_three_and_never_after_the_deadline() {
    use askbridge_core::model::Reminders;
    let with = |after: u32, every: Option<u32>, timeout: u32| {
        let mut ask = release();
        ask.timeout_seconds = timeout;
        ask.remind = Some(Reminders {
            after_seconds: after,
            every_seconds: every,
        });
        AskLifecycle::new("ask_1", ask, T0)
    };
    let secs = |lifecycle: &AskLifecycle, sent: u32| {
        lifecycle
            .next_reminder(sent)
            .map(|at| (at.0 - T0.0) / 1_000)
    };
    // (after, every, timeout, the reminders' seconds after creation)
    let cases: [(u32, Option<u32>, u32, &[u64]); 4] = [
        (300, None, 900, &[300]),
        (300, Some(120), 900, &[300, 420, 540]),
        (300, Some(300), 900, &[300, 600]),
        (60, Some(60), 3600, &[60, 120, 180]),
    ];
    for (after, every, timeout, expected) in cases {
        let lifecycle = with(after, every, timeout);
        let got: Vec<u64> = (0..5).filter_map(|sent| secs(&lifecycle, sent)).collect();
        assert_eq!(
            got, expected,
            "after {after} every {every:?} timeout {timeout}"
        );
    }
    // Due once its time has come, while the ask is open.
    let mut lifecycle = with(300, None, 900);
    assert!(!lifecycle.reminder_due(0, at(299)));
    assert!(lifecycle.reminder_due(0, at(300)));
    assert!(!lifecycle.reminder_due(1, at(600)));
    assert!(!AskLifecycle::new("ask_2", release(), T0).reminder_due(0, at(600)));
    lifecycle.handle(Input::Cancel, at(301));
    assert!(!lifecycle.reminder_due(0, at(400)));
    assert_eq!(lifecycle.next_reminder(0), None);
}

#[test]
fn a_reminder_goes_to_the_places_the_ask_is_posted_in_by_then() {
    use askbridge_core::model::Escalation;
    let mut ask = release();
    ask.timeout_seconds = 1_800;
    ask.also = vec![Target::parse("slack:C1").expect("slack")];
    ask.escalate = vec![
        Escalation {
            after_seconds: 600,
            to: Target::parse("discord:9").expect("discord"),
        },
        Escalation {
            after_seconds: 1_200,
            to: Target::parse("web").expect("web"),
        },
    ];
    let lifecycle = AskLifecycle::new("ask_1", ask, T0);
    // (seconds after creation, the places reminded then)
    let cases: [(u64, &[usize]); 4] = [
        (300, &[0, 1]),
        (599, &[0, 1]),
        (600, &[0, 1, 2]),
        (1_500, &[0, 1, 2, 3]),
    ];
    for (secs, places) in cases {
        assert_eq!(lifecycle.reminded_places(at(secs)), places, "at {secs} s");
    }
}

#[test]
fn an_ask_answered_in_the_hosts_own_prompt_ends_cancelled_and_closes_saying_so() {
    use askbridge_core::render::ended_line;
    let mut lifecycle = AskLifecycle::new("ask_1", release(), T0);
    let step = lifecycle.handle(Input::AnsweredInHost, at(5));
    let Step::Finished(outcome) = step else {
        panic!("ended: {step:?}");
    };
    assert_eq!(
        outcome.reason,
        Some(Reason::Cancelled),
        "for the agent, as cancelled"
    );
    assert_eq!(
        *lifecycle.state(),
        State::Cancelled {
            at: at(5),
            in_host: true
        }
    );
    assert_eq!(
        ended_line(lifecycle.state(), &outcome, None, Locale::En),
        "✅ Answered in the terminal"
    );
    // The agent's own cancel closes as cancelled.
    let mut cancelled = AskLifecycle::new("ask_2", release(), T0);
    let Step::Finished(outcome) = cancelled.handle(Input::Cancel, at(5)) else {
        panic!("ended");
    };
    assert_eq!(
        ended_line(cancelled.state(), &outcome, None, Locale::En),
        "✖ Cancelled"
    );
    // Once ended, it stays as it ended.
    assert!(matches!(
        lifecycle.handle(Input::Cancel, at(6)),
        Step::Rejected(_)
    ));
}

#[test]
fn an_answer_the_hosts_own_prompt_overtook_is_kept_only_as_late() {
    use askbridge_core::render::ended_line;
    let mut lifecycle = AskLifecycle::new("ask_1", release(), T0);
    let Step::Finished(answered) = lifecycle.handle(pick(alice(), 0, &[1]), at(5)) else {
        panic!("answered");
    };
    // The host shows it had decided first.
    assert!(lifecycle.overtake(at(9)));
    let by = answered.answered_by.clone().expect("who answered");
    assert_eq!(
        *lifecycle.state(),
        State::Overtaken {
            by,
            answered_at: at(5),
            at: at(9)
        }
    );
    assert_eq!(lifecycle.state().as_str(), "cancelled");
    let outcome = lifecycle.outcome().expect("an outcome");
    assert_eq!(
        (outcome.reason, outcome.answers.len(), &outcome.answered_by),
        (Some(Reason::Cancelled), 0, &None),
        "the late answer is not presented as given"
    );
    let late = lifecycle.late_outcome().expect("the late answer");
    assert_eq!(
        (late.answers, late.answered_by, late.answered_at),
        (answered.answers, answered.answered_by, at(5))
    );
    let shown = lifecycle.late_outcome().expect("the late answer");
    assert_eq!(
        ended_line(lifecycle.state(), &shown, None, Locale::En),
        "⚠ Answered in the terminal first — Alice's answer here (Production) came too late and decided nothing"
    );
    // Rebuilt from its parts, it is the same.
    let rebuilt = AskLifecycle::from_parts(lifecycle.to_parts()).expect("rebuilt");
    assert_eq!(rebuilt.late_outcome(), lifecycle.late_outcome());
    // Once: and never a pending, skipped, cancelled or timed-out ask.
    assert!(!lifecycle.overtake(at(10)));
    let mut pending = AskLifecycle::new("ask_2", release(), T0);
    assert!(!pending.overtake(at(5)));
    pending.handle(skip(alice()), at(6));
    assert!(!pending.overtake(at(7)));
    assert_eq!(pending.state().as_str(), "skipped");
}

//! Approvals (`"approval": true`): where one may be created, and
//! that nobody but the person its place names ever answers it — whatever
//! the route (a chat, the HTTP API, the web page, the agent host's
//! dialog), whatever the input, and whatever the configured defaults add.

use askbridge_core::lifecycle::{AskLifecycle, Input, Rejection, Step, UnknownItems};
use askbridge_core::model::{
    Ask, AskDefaults, ChannelKind, Escalation, Responder, Target, Timestamp, Verified,
};
use askbridge_core::normalize::{Problem, normalize_json, with_defaults};
use askbridge_core::outcome::Via;
use proptest::prelude::*;
use serde_json::{Value, json};

const T0: Timestamp = Timestamp(1_800_000_000_000);

/// An approval of one Allow / Deny question, as a hook writes it.
fn approval(to: Value) -> Ask {
    let mut body = json!({
        "approval": true,
        "questions": [{"id": "decision", "question": "Allow Bash?", "options": ["Allow", "Deny"]}],
        "timeoutSeconds": 600,
    });
    if !to.is_null() {
        body["to"] = to;
    }
    normalize_json(&body).expect("an approval reads").ask
}

fn defaults(target: &str) -> AskDefaults {
    AskDefaults::from(Target::parse(target).expect("a target"))
}

fn created(ask: Ask, defaults: &AskDefaults) -> AskLifecycle {
    let ask = with_defaults(ask, defaults).expect("created");
    AskLifecycle::new("ask_1", ask, T0)
}

fn person(channel: ChannelKind, user: &str, place: Option<&str>) -> Responder {
    Responder {
        channel,
        user_id: user.to_owned(),
        name: None,
        place: place.map(|place| Target::parse(place).expect("a place").place),
    }
}

fn web(user: &str) -> Responder {
    person(ChannelKind::Web, user, None)
}

fn host() -> Responder {
    person(ChannelKind::Host, "host", None)
}

/// "Allow", by every input a route can make, from `from` (admitted by
/// every allow-list): whether any of them was taken.
fn allows(machine: &AskLifecycle, from: &Responder) -> bool {
    let inputs = [
        Input::Reply {
            from: from.clone(),
            admitted: true,
            text: "Allow".to_owned(),
            unknown_items: UnknownItems::OwnWords,
        },
        Input::Pick {
            from: from.clone(),
            admitted: true,
            question: 0,
            options: vec![0],
            via: Via::Button,
        },
        Input::Other {
            from: from.clone(),
            admitted: true,
            question: 0,
            text: "Allow".to_owned(),
            via: Via::Modal,
        },
        Input::Answers {
            from: from.clone(),
            admitted: true,
            answers: vec![("decision".to_owned(), vec!["Allow".to_owned()])],
            via: Via::Web,
        },
        Input::Skip {
            from: from.clone(),
            admitted: true,
        },
    ];
    inputs.into_iter().any(|input| {
        let mut machine = machine.clone();
        !matches!(machine.handle(input, T0), Step::Rejected(_))
    })
}

#[test]
fn the_approver_answers_and_nobody_else_does_whatever_the_route() {
    let group = created(approval(json!("telegram:-1001234@42")), &defaults("web"));
    assert!(allows(&group, &person(ChannelKind::Telegram, "42", None)));
    let others = [
        (
            "another member of the room",
            person(ChannelKind::Telegram, "7", None),
        ),
        ("the HTTP API", web("web")),
        ("the HTTP API naming the approver", web("42")),
        ("a host-key reply", host()),
        (
            "the same id on another platform",
            person(ChannelKind::Slack, "42", None),
        ),
    ];
    for (who, from) in others {
        assert!(!allows(&group, &from), "{who} approved");
    }
    let mut machine = group.clone();
    let step = machine.handle(
        Input::Pick {
            from: person(ChannelKind::Telegram, "7", None),
            admitted: true,
            question: 0,
            options: vec![0],
            via: Via::Button,
        },
        T0,
    );
    assert!(
        matches!(step, Step::Rejected(Rejection::NotForYou)),
        "{step:?}"
    );
}

#[test]
fn a_direct_chat_is_answered_only_by_its_person() {
    let rows = [
        ("telegram:42", ChannelKind::Telegram, "42"),
        ("discord:user/99", ChannelKind::Discord, "99"),
        ("slack:user/U0ALICE", ChannelKind::Slack, "U0ALICE"),
        ("feishu:user/ou_1", ChannelKind::Feishu, "ou_1"),
        (
            "matrix:user/@alice:hs.org",
            ChannelKind::Matrix,
            "@alice:hs.org",
        ),
        (
            "teams:user/8a3c7f2e-1b4d-4e5f-9a6b-7c8d9e0f1a2b",
            ChannelKind::Teams,
            "8a3c7f2e-1b4d-4e5f-9a6b-7c8d9e0f1a2b",
        ),
    ];
    for (to, channel, user) in rows {
        let machine = created(approval(json!(to)), &defaults("web"));
        assert!(allows(&machine, &person(channel, user, None)), "{to}");
        // Hole 1: a plain `POST /v1/asks/{id}/reply` allowed the call.
        assert!(
            !allows(&machine, &web("web")),
            "{to}: the HTTP API approved"
        );
        assert!(!allows(&machine, &host()), "{to}: the host key approved");
        assert!(
            !allows(&machine, &person(channel, "someone-else", None)),
            "{to}"
        );
    }
}

#[test]
fn an_ask_anyone_may_answer_is_as_before() {
    let mut body =
        json!({"questions": [{"question": "Go?", "options": ["Yes", "No"]}], "to": "telegram:42"});
    let ask = normalize_json(&body).expect("reads").ask;
    assert!(!ask.approval);
    let machine = created(ask, &defaults("web"));
    assert!(
        allows(&machine, &web("web")),
        "the web page answers for anyone"
    );
    body["approval"] = json!(false);
    assert!(!normalize_json(&body).expect("reads").ask.approval);
}

#[test]
fn approval_is_a_boolean() {
    let mut body =
        json!({"questions": [{"question": "Go?"}], "to": "telegram:42", "approval": true});
    assert!(normalize_json(&body).expect("reads").ask.approval);
    for wrong in [json!("yes"), json!(1), json!({})] {
        body["approval"] = wrong.clone();
        let problems = normalize_json(&body).expect_err("refused");
        assert_eq!(problems[0].path, "approval", "{wrong}");
        assert!(
            problems[0].message.contains("true or false"),
            "{}",
            problems[0]
        );
    }
}

/// The problems of creating an approval to `to` (`null`: the default
/// target `default`) with `verified`.
fn refusal(to: Value, default: &str, verified: Verified) -> Vec<Problem> {
    let mut defaults = defaults(default);
    defaults.verified = verified;
    match with_defaults(approval(to), &defaults) {
        Ok(_) => Vec::new(),
        Err(problems) => problems,
    }
}

#[test]
fn an_approval_whose_place_names_nobody_is_refused_saying_how_to_name_them() {
    let none = Verified::default();
    let rows = [
        ("telegram:-1001234", "to", "telegram:-1001234@USER_ID"),
        (
            "discord:456",
            "to",
            "discord:456@USER_ID, or discord:user/USER_ID",
        ),
        ("slack:C123", "to", "slack:C123@U…, or slack:user/U…"),
        ("feishu:oc_1", "to", "feishu:user/OPEN_ID"),
        ("matrix:!room:hs.org", "to", "matrix:user/@user:server"),
        (
            "teams:19:abc@thread.tacv2",
            "to",
            "teams:user/AAD_OBJECT_ID",
        ),
    ];
    for (to, path, hint) in rows {
        let problems = refusal(json!(to), "web", none);
        assert_eq!(problems.len(), 1, "{to}: {problems:?}");
        assert_eq!(problems[0].path, path);
        assert!(
            problems[0].message.contains("names no person"),
            "{}",
            problems[0]
        );
        assert!(problems[0].message.contains(hint), "{}", problems[0]);
    }
    for to in [
        "telegram:-1001234@42",
        "telegram:42",
        "slack:C1@U1",
        "teams:user/8a3c7f2e-1b4d-4e5f-9a6b-7c8d9e0f1a2b",
    ] {
        assert_eq!(refusal(json!(to), "web", none), [], "{to}");
    }
    // Each place of several, by its index.
    let problems = refusal(json!(["telegram:42", "slack:C1"]), "web", none);
    assert_eq!(problems.len(), 1);
    assert_eq!(problems[0].path, "to[1]");
    // An explicit escalation step, too.
    let mut ask = approval(json!("telegram:42"));
    ask.escalate = vec![Escalation {
        after_seconds: 60,
        to: Target::parse("telegram:-100999").expect("a target"),
    }];
    let problems = with_defaults(ask, &defaults("web")).expect_err("refused");
    assert_eq!(problems[0].path, "escalate[0].to");
}

#[test]
fn the_web_page_and_email_approve_only_with_what_verifies_them() {
    let none = Verified::default();
    let token = Verified {
        web: true,
        email: false,
    };
    let authenticated = Verified {
        web: false,
        email: true,
    };
    let web = refusal(json!("web"), "web", none);
    assert!(web[0].message.contains("api_token"), "{}", web[0]);
    assert_eq!(refusal(json!("web"), "web", token), []);
    // Never the web page by default, token or not.
    let default = refusal(Value::Null, "web", token);
    assert!(
        default[0].message.contains("\"to\": \"web\""),
        "{}",
        default[0]
    );
    let email = refusal(json!("email:alice@example.com"), "web", none);
    assert!(
        email[0].message.contains("require_authentication"),
        "{}",
        email[0]
    );
    assert_eq!(
        refusal(json!("email:alice@example.com"), "web", authenticated),
        []
    );
    // A default target that names its person is fine.
    assert_eq!(refusal(Value::Null, "telegram:-100@42", none), []);
}

#[test]
fn on_the_web_page_its_token_holder_approves_but_nothing_else() {
    let mut defaults = defaults("web");
    defaults.verified.web = true;
    let machine = created(approval(json!("web")), &defaults);
    assert!(allows(&machine, &web("web")));
    assert!(!allows(&machine, &host()));
    assert!(!allows(
        &machine,
        &person(ChannelKind::Telegram, "42", None)
    ));
}

#[test]
fn email_compares_the_address_without_regard_to_case() {
    let mut defaults = defaults("web");
    defaults.verified.email = true;
    let machine = created(approval(json!("email:alice@example.com")), &defaults);
    assert!(allows(
        &machine,
        &person(ChannelKind::Email, "Alice@Example.com", None)
    ));
    assert!(!allows(
        &machine,
        &person(ChannelKind::Email, "mallory@example.com", None)
    ));
}

#[test]
fn who_answers_for_an_address_is_its_person_or_someone_allowed_to_answer_for_others() {
    // Email's `allowed_senders` is the channel's allow-list (`admitted`):
    // who may answer, in a mail's thread, for the person it went to.
    let alice = Target::parse("email:alice@example.com").expect("a target");
    let mail = |user: &str| person(ChannelKind::Email, user, Some("email:alice@example.com"));
    let rows = [
        ("alice@example.com", false, true),
        ("Alice@Example.com", false, true),
        ("deputy@example.com", true, true),
        ("mallory@example.com", false, false),
    ];
    for (user, admitted, answers) in rows {
        assert_eq!(alice.may_answer(&mail(user), admitted), answers, "{user}");
    }
    // Not for an approval: only its person gives it.
    let mut defaults = defaults("web");
    defaults.verified.email = true;
    let machine = created(approval(json!("email:alice@example.com")), &defaults);
    let deputy = mail("deputy@example.com");
    assert!(!machine.may_answer(&deputy, true));
    assert!(machine.may_answer(&mail("alice@example.com"), false));
}

#[test]
fn default_escalation_never_widens_who_may_approve() {
    let mut defaults = defaults("web");
    defaults.escalate = vec![
        Escalation {
            after_seconds: 60,
            to: Target::parse("telegram:-100999").expect("the on-call group"),
        },
        Escalation {
            after_seconds: 120,
            to: Target::parse("telegram:42").expect("the approver's own chat"),
        },
        Escalation {
            after_seconds: 180,
            to: Target::parse("slack:user/U42").expect("someone on another platform"),
        },
    ];
    let machine = created(approval(json!("telegram:-1001234@42")), &defaults);
    let places: Vec<String> = machine.ask().places().map(ToString::to_string).collect();
    assert_eq!(places, ["telegram:-1001234@42", "telegram:42"]);
    // An ask anyone may answer keeps every step.
    let body = json!({"questions": [{"question": "Go?"}], "to": "telegram:-1001234@42"});
    let ask = normalize_json(&body).expect("reads").ask;
    assert_eq!(ask.with_defaults(&defaults).places().count(), 4);
    // Hole 3: the on-call group's member could not approve after the step.
    let mut late = machine.clone();
    let step = late.handle(
        Input::Pick {
            from: person(ChannelKind::Telegram, "7", Some("telegram:-100999")),
            admitted: true,
            question: 0,
            options: vec![0],
            via: Via::Button,
        },
        T0.saturating_add_secs(90),
    );
    assert!(
        matches!(step, Step::Rejected(Rejection::NotForYou)),
        "{step:?}"
    );
}

// ------------------------------------------------------------- properties

const PLACES: [&str; 10] = [
    "telegram:-1001234@42",
    "telegram:42",
    "telegram:-100999@7",
    "slack:C1@U1",
    "slack:user/U2",
    "discord:5@6",
    "discord:user/6",
    "matrix:user/@a:hs",
    "teams:user/8a3c7f2e-1b4d-4e5f-9a6b-7c8d9e0f1a2b",
    "email:alice@example.com",
];

const CHANNELS: [ChannelKind; 9] = ChannelKind::ALL;

const USERS: [&str; 10] = [
    "42",
    "7",
    "U1",
    "U2",
    "6",
    "@a:hs",
    "abc",
    "alice@example.com",
    "web",
    "host",
];

fn responder() -> impl Strategy<Value = Responder> {
    (
        0..CHANNELS.len(),
        0..USERS.len(),
        proptest::option::of(0..PLACES.len()),
    )
        .prop_map(|(channel, user, place)| {
            person(
                CHANNELS[channel],
                USERS[user],
                place.map(|index| PLACES[index]),
            )
        })
}

proptest! {
    /// Whatever the places, the responder, the place they claim to
    /// answer in, the allow-list and the input, an approval is taken only
    /// from the person one of its places names, on that place's channel.
    #[test]
    fn no_one_but_a_named_person_ever_answers_an_approval(
        places in proptest::sample::subsequence(PLACES.to_vec(), 1..4),
        from in responder(),
        admitted in any::<bool>(),
        input in 0..5usize,
    ) {
        let mut defaults = defaults("web");
        defaults.verified = Verified { web: true, email: true };
        let mut machine = created(approval(json!(places)), &defaults);
        let input = match input {
            0 => Input::Reply { from: from.clone(), admitted, text: "1".to_owned(), unknown_items: UnknownItems::OwnWords },
            1 => Input::Pick { from: from.clone(), admitted, question: 0, options: vec![0], via: Via::Button },
            2 => Input::Other { from: from.clone(), admitted, question: 0, text: "yes do it".to_owned(), via: Via::Modal },
            3 => Input::Answers { from: from.clone(), admitted, answers: vec![("decision".to_owned(), vec!["Allow".to_owned()])], via: Via::Web },
            _ => Input::Skip { from: from.clone(), admitted },
        };
        let taken = !matches!(machine.handle(input, T0), Step::Rejected(_));
        let named = places.iter().any(|place| {
            let target = Target::parse(place).expect("a place");
            let here = from.place.as_ref().is_none_or(|claimed| *claimed == target.place);
            here && target.is_its_person(&from)
        });
        prop_assert!(!taken || named, "{from:?} answered an approval at {places:?}");
        prop_assert!(from.channel != ChannelKind::Host || !taken);
        prop_assert!(!matches!(from.channel, ChannelKind::Web) || !taken);
    }
}

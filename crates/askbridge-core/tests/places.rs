//! "Is this event for this place": the one rule every chat platform
//! uses ([`Place::is_at`]), as a table.

use askbridge_core::model::{ChannelKind, Responder, Target, Timestamp};

/// Whether something `user` did in the conversation `at` (a target's
/// notation) is at `target`'s place.
fn check(target: &str, at: &str, user: &str, expect: bool) {
    let place = Target::parse(target).expect("target").place;
    let at = Target::parse(at).expect("at").place;
    let from = Responder {
        channel: place.channel(),
        user_id: user.to_owned(),
        name: None,
        place: None,
    };
    assert_eq!(
        place.is_at(&at, &from),
        expect,
        "{target} at {at:?} by {user}"
    );
}

#[test]
fn a_conversation_is_the_same_conversation_whoever_acts() {
    check("telegram:-100123", "telegram:-100123", "42", true);
    check("telegram:-100123", "telegram:-100999", "42", false);
    check("telegram:-100123/7", "telegram:-100123/7", "42", true);
    check("telegram:-100123/7", "telegram:-100123/8", "42", false);
    check("telegram:-100123/7", "telegram:-100123", "42", false);
    check("discord:111", "discord:111", "9", true);
    check("discord:111", "discord:222", "9", false);
    check("slack:C1", "slack:C1", "U1", true);
    check("slack:C1/1700000000.000100", "slack:C1", "U1", true);
    check("slack:C1", "slack:C2", "U1", false);
    check("feishu:oc_1", "feishu:oc_1", "ou_1", true);
    check("feishu:oc_1", "feishu:oc_2", "ou_1", false);
    check(
        "matrix:!room:example.org",
        "matrix:!room:example.org",
        "@a:example.org",
        true,
    );
    check(
        "matrix:!room:example.org",
        "matrix:!other:example.org",
        "@a:example.org",
        false,
    );
}

#[test]
fn a_direct_place_is_its_person_wherever_the_platform_says() {
    check("discord:user/9", "discord:555", "9", true);
    check("discord:user/9", "discord:555", "10", false);
    check("slack:user/U1", "slack:D123", "U1", true);
    check("slack:user/U1", "slack:D123", "U2", false);
    check("feishu:user/ou_1", "feishu:user/ou_1", "ou_1", true);
    check("feishu:user/ou_1", "feishu:oc_1", "ou_2", false);
    check(
        "matrix:user/@a:example.org",
        "matrix:!dm:example.org",
        "@a:example.org",
        true,
    );
    check(
        "matrix:user/@a:example.org",
        "matrix:!dm:example.org",
        "@b:example.org",
        false,
    );
}

#[test]
fn an_alias_is_no_room_and_other_channels_are_elsewhere() {
    // A Matrix alias names no room: the room it was posted to is compared.
    check(
        "matrix:#ops:example.org",
        "matrix:!room:example.org",
        "@a:example.org",
        false,
    );
    check(
        "matrix:#ops:example.org",
        "matrix:#ops:example.org",
        "@a:example.org",
        false,
    );
    check("discord:111", "slack:111", "9", false);
    check("discord:user/9", "slack:C1", "9", false);
}

#[test]
fn direct_user_names_the_person_of_a_direct_place_only() {
    let user = |target: &str| Target::parse(target).expect("target").place.direct_user();
    assert_eq!(user("discord:user/9").as_deref(), Some("9"));
    assert_eq!(user("slack:user/U1").as_deref(), Some("U1"));
    assert_eq!(user("feishu:user/ou_1").as_deref(), Some("ou_1"));
    assert_eq!(
        user("matrix:user/@a:example.org").as_deref(),
        Some("@a:example.org")
    );
    assert_eq!(user("telegram:42"), None);
    assert_eq!(user("web"), None);
}

/// An escalation step's place has the ask from the step's time on.
#[test]
fn an_ask_is_on_a_channel_from_its_places_time() {
    let json = r#"{"to": ["telegram:42", "slack:C1"], "questions": [{"question": "Ship?"}],
        "escalate": [{"afterSeconds": 60, "to": "discord:9"}, {"afterSeconds": 600, "to": "web"}]}"#;
    let ask = askbridge_core::normalize::normalize_input(json)
        .expect("valid")
        .ask;
    let created = Timestamp(1_000_000);
    let at = |secs: u64| created.saturating_add_secs(secs);
    // (channel, seconds after creation, on it)
    let table = [
        (ChannelKind::Telegram, 0, true),
        (ChannelKind::Slack, 0, true),
        (ChannelKind::Discord, 59, false),
        (ChannelKind::Discord, 60, true),
        (ChannelKind::Web, 599, false),
        (ChannelKind::Web, 600, true),
        (ChannelKind::Matrix, 100_000, false),
    ];
    for (kind, secs, on) in table {
        assert_eq!(
            ask.is_on(kind, created, at(secs)),
            on,
            "{kind:?} at {secs} s"
        );
    }
}

//! One ask in several places at once, end to end: the real daemon with
//! its Telegram and Slack channels, each against its faithful fake on
//! 127.0.0.1. The first answer in any place wins; every place is closed,
//! the others saying where the answer came from.

#![allow(clippy::unwrap_used)]

mod daemon;

use askbridge_testkit::faults::{Fault, Faults};
use askbridge_testkit::slack::{self, FakeSlack};
use askbridge_testkit::telegram::{self, FakeTelegram};
use daemon::{Daemon, create, outcome, status};
use serde_json::{Value, json};

const CHAT: i64 = -100_200_300;
const TELEGRAM_ALICE: i64 = 42;
const CHANNEL: &str = "C0RELEASES";
const SLACK_ALICE: &str = "U0ALICE";

fn telegram_alice() -> telegram::User {
    telegram::User::new(TELEGRAM_ALICE, "Alice").username("alice")
}

fn slack_alice() -> slack::User {
    slack::User::new(SLACK_ALICE, "alice").display_name("Alice Liddell")
}

/// Both fakes, and a daemon talking to both. The fakes wait up to a
/// minute for what a test expects: a reminder comes 30 s after its ask.
async fn started() -> (FakeTelegram, FakeSlack, Daemon) {
    let patience = std::time::Duration::from_secs(60);
    let telegram = FakeTelegram::builder().wait_timeout(patience).start().await;
    telegram.add_chat(&telegram::Chat::supergroup(CHAT, "Releases"));
    let slack = FakeSlack::builder().wait_timeout(patience).start().await;
    slack.add_channel(&slack::Channel::public(CHANNEL, "releases"));
    slack.add_user(&slack_alice());
    let daemon = Daemon::builder()
        .env("TELEGRAM_BOT_TOKEN", telegram.token())
        .env("ASKBRIDGE_TELEGRAM_API_URL", telegram.api_url())
        .env("SLACK_BOT_TOKEN", slack.bot_token())
        .env("SLACK_APP_TOKEN", slack.app_token())
        .env("ASKBRIDGE_SLACK_API_URL", slack.api_url())
        .start();
    slack.wait_for_connections(1).await;
    (telegram, slack, daemon)
}

/// The deploy question, for Alice in Telegram and in Slack.
fn deploy_ask() -> Value {
    json!({
        "to": [format!("telegram:{CHAT}@{TELEGRAM_ALICE}"), format!("slack:{CHANNEL}@{SLACK_ALICE}")],
        "title": "Production",
        "questions": [{
            "id": "env", "header": "Deploy", "question": "Where should I deploy?",
            "options": ["Staging", "Production", "Canary"]
        }]
    })
}

/// The `action_id` of the Slack button labelled `label`.
fn slack_action(message: &slack::StoredMessage, label: &str) -> String {
    message
        .button_action(label)
        .unwrap_or_else(|| panic!("no button {label:?}"))
}

/// Alice presses the Slack button labelled `label`.
fn press_in_slack(slack: &FakeSlack, message: &slack::StoredMessage, label: &str) {
    slack.press_button(
        &slack_alice(),
        CHANNEL,
        &message.ts,
        &slack_action(message, label),
    );
}

async fn telegram_closed(fake: &FakeTelegram, message: &telegram::StoredMessage) -> String {
    let (chat, id) = (message.chat_id, message.message_id);
    fake.wait_for("the Telegram message to be closed", |state| {
        state
            .message(chat, id)
            .filter(|m| m.edited && !m.has_inline_keyboard())
            .map(|m| m.text.clone())
    })
    .await
}

async fn slack_closed(fake: &FakeSlack, message: &slack::StoredMessage) -> String {
    let (channel, ts) = (message.channel.clone(), message.ts.clone());
    fake.wait_for("the Slack message to be closed", |state| {
        state
            .message(&channel, &ts)
            .filter(|m| m.edit_count() > 0 && m.action_ids().is_empty())
            .map(|m| m.text.clone())
    })
    .await
}

/// Both places of the ask read `closed` in `GET /v1/asks/{id}`.
async fn assert_closed_in_both(daemon: &Daemon, id: &str) {
    let closed = status(daemon, id).await;
    assert_eq!(closed["places"][0]["state"], "closed", "{closed}");
    assert_eq!(closed["places"][1]["state"], "closed", "{closed}");
}

#[tokio::test]
async fn an_ask_in_telegram_and_slack_answered_in_slack_closes_telegram_saying_where() {
    let (telegram, slack, daemon) = started().await;
    let id = create(&daemon, &deploy_ask()).await;
    let in_telegram = telegram.wait_for_sends(1).await.swap_remove(0);
    let in_slack = slack.wait_for_bot_messages(1).await.swap_remove(0);
    assert_eq!(in_telegram.chat_id, CHAT);
    assert_eq!(in_slack.channel, CHANNEL);

    let listed = status(&daemon, &id).await;
    let targets: Vec<&str> = listed["places"]
        .as_array()
        .unwrap()
        .iter()
        .map(|place| place["target"].as_str().unwrap())
        .collect();
    assert_eq!(
        targets,
        [
            format!("telegram:{CHAT}@{TELEGRAM_ALICE}"),
            format!("slack:{CHANNEL}@{SLACK_ALICE}")
        ],
        "{listed}"
    );

    press_in_slack(&slack, &in_slack, "Production");
    let done = outcome(&daemon, &id).await;
    assert_eq!(done["status"], "answered", "{done}");
    assert_eq!(done["answers"], json!({"env": ["Production"]}));
    assert_eq!(done["answeredBy"]["place"], format!("slack:{CHANNEL}"));

    let text = telegram_closed(&telegram, &in_telegram).await;
    assert!(
        text.ends_with("✅ Production — answered by Alice Liddell in Slack"),
        "{text}"
    );
    let text = slack_closed(&slack, &in_slack).await;
    assert!(
        text.ends_with("✅ Production — answered by Alice Liddell"),
        "{text}"
    );

    // A press in Telegram afterwards (it raced the closing edit) is told,
    // and changes nothing.
    let staging = in_telegram
        .callback_data("Staging")
        .expect("a Staging button");
    let late = telegram.inject_callback(&telegram_alice(), CHAT, in_telegram.message_id, &staging);
    let notice = telegram.wait_for_callback_answer(&late).await;
    assert_eq!(
        notice.text.as_deref(),
        Some("This question was already answered.")
    );
    assert_eq!(
        outcome(&daemon, &id).await["answers"],
        json!({"env": ["Production"]})
    );
    assert_closed_in_both(&daemon, &id).await;
}

#[tokio::test]
async fn presses_in_two_places_at_once_record_one_answer() {
    let (telegram, slack, daemon) = started().await;
    for round in 0..3 {
        let id = create(&daemon, &deploy_ask()).await;
        let in_telegram = telegram.wait_for_sends(round + 1).await.swap_remove(round);
        let in_slack = slack
            .wait_for_bot_messages(round + 1)
            .await
            .swap_remove(round);
        telegram.press_button(&telegram_alice(), CHAT, in_telegram.message_id, "Staging");
        press_in_slack(&slack, &in_slack, "Canary");
        let done = outcome(&daemon, &id).await;
        let answer = done["answers"]["env"][0].as_str().unwrap().to_owned();
        let place = done["answeredBy"]["place"].as_str().unwrap().to_owned();
        let expected_place = match answer.as_str() {
            "Staging" => format!("telegram:{CHAT}"),
            "Canary" => format!("slack:{CHANNEL}"),
            other => panic!("answered {other}"),
        };
        assert_eq!(place, expected_place, "{done}");
        // Both places show the one answer.
        let text = telegram_closed(&telegram, &in_telegram).await;
        assert!(
            text.contains(&format!("✅ {answer} — answered by")),
            "{text}"
        );
        let text = slack_closed(&slack, &in_slack).await;
        assert!(
            text.contains(&format!("✅ {answer} — answered by")),
            "{text}"
        );
    }
}

#[tokio::test]
async fn an_ask_nobody_answers_is_passed_on_at_its_time_and_answered_there() {
    let (telegram, slack, daemon) = started().await;
    let ask = json!({
        "to": format!("telegram:{CHAT}@{TELEGRAM_ALICE}"),
        "escalate": [{"afterSeconds": 1, "to": format!("slack:{CHANNEL}")}],
        "questions": [{
            "id": "env", "header": "Deploy", "question": "Where should I deploy?",
            "options": ["Staging", "Production", "Canary"]
        }]
    });
    let id = create(&daemon, &ask).await;
    let in_telegram = telegram.wait_for_sends(1).await.swap_remove(0);
    let in_slack = slack.wait_for_bot_messages(1).await.swap_remove(0);
    assert!(
        in_slack
            .text
            .starts_with("↪ Passed on from Telegram after 1 s without an answer"),
        "{}",
        in_slack.text
    );
    let listed = status(&daemon, &id).await;
    assert_eq!(
        listed["ask"]["escalate"],
        json!([{"afterSeconds": 1, "to": format!("slack:{CHANNEL}")}])
    );

    // The step names nobody: anyone in the channel may answer there.
    press_in_slack(&slack, &in_slack, "Canary");
    let done = outcome(&daemon, &id).await;
    assert_eq!(done["answers"], json!({"env": ["Canary"]}), "{done}");
    assert_eq!(done["answeredBy"]["place"], format!("slack:{CHANNEL}"));
    let text = telegram_closed(&telegram, &in_telegram).await;
    assert!(
        text.ends_with("✅ Canary — answered by Alice Liddell in Slack"),
        "{text}"
    );
    assert_closed_in_both(&daemon, &id).await;
}

#[tokio::test]
async fn an_escalation_step_at_or_after_the_deadline_is_refused_with_its_path() {
    let (_telegram, _slack, daemon) = started().await;
    let ask = json!({
        "to": format!("telegram:{CHAT}"),
        "timeoutSeconds": 600,
        "escalate": [{"afterSeconds": 600, "to": format!("slack:{CHANNEL}")}],
        "questions": [{"id": "go", "question": "Go?", "type": "confirm"}]
    });
    let response = daemon::Api::of(&daemon)
        .http
        .post(daemon.url("/v1/asks"))
        .json(&ask)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 422);
    let body: Value = response.json().await.unwrap();
    assert_eq!(body["error"]["code"], "invalid_ask", "{body}");
    assert_eq!(body["error"]["path"], "escalate[0].afterSeconds", "{body}");
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("not before the ask's timeout (600 s)"),
        "{body}"
    );
}

/// The daemon takes an ask's reminder and shows when it is due. (Its
/// sending, on the bridge's own clock, is the next test's.)
#[tokio::test]
async fn an_ask_with_a_reminder_shows_the_one_time_it_is_due() {
    let (_telegram, _slack, daemon) = started().await;
    let mut ask = deploy_ask();
    ask["timeoutSeconds"] = json!(120);
    ask["remindAfterSeconds"] = json!(30);
    let id = create(&daemon, &ask).await;
    let shown = status(&daemon, &id).await;
    assert_eq!(shown["ask"]["remindAfterSeconds"], 30);
    let created = timestamp(&shown["createdAt"]);
    let due: Vec<i64> = shown["remindAt"]
        .as_array()
        .unwrap_or_else(|| panic!("no remindAt: {shown}"))
        .iter()
        .map(timestamp)
        .collect();
    assert_eq!(due, [created + 30], "{shown}");
}

/// Seconds since 1970 of an RFC 3339 time (`2027-01-15T08:00:30Z`, any
/// fraction dropped).
fn timestamp(value: &Value) -> i64 {
    let text = value
        .as_str()
        .unwrap_or_else(|| panic!("not a time: {value}"));
    let number = |range: std::ops::Range<usize>| -> i64 { text[range].parse().unwrap() };
    let (year, month, day) = (number(0..4), number(5..7), number(8..10));
    let (hour, minute, second) = (number(11..13), number(14..16), number(17..19));
    // Days from 1970-01-01 (the civil-from-days inverse, Howard Hinnant's).
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    days * 86_400 + hour * 3_600 + minute * 60 + second
}

/// The bridge with the real Telegram and Slack channels against their
/// fakes, on a manual clock: an ask open 30 s is reminded in each place,
/// a refused try is tried again, and no other reminder is sent. Nothing
/// waits for the time: the test moves it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_open_ask_is_reminded_once_in_each_place_mentioning_its_person() {
    use askbridge::bridge::{Bridge, BridgeOptions, Clock, NewAsk, RetryPolicy, Tuning};
    use askbridge::config::{Secret, SlackConfig, SlackMode, TelegramConfig, TelegramMode};
    use askbridge_core::model::{Target, Timestamp};
    use askbridge_core::normalize::normalize_json;
    use askbridge_core::render::{Locale, Mode};
    use std::time::Duration;

    let telegram = FakeTelegram::start().await;
    telegram.add_chat(&telegram::Chat::supergroup(CHAT, "Releases"));
    let slack = FakeSlack::start().await;
    slack.add_channel(&slack::Channel::public(CHANNEL, "releases"));
    slack.add_user(&slack_alice());
    let start = Timestamp(1_800_000_000_000);
    let clock = Clock::manual(start);
    let dir = daemon::TempDir::new("askbridge-reach");
    let url = format!("sqlite://{}", dir.path().join("askbridge.db").display());
    let tuning = Tuning {
        clock: clock.clone(),
        retry: RetryPolicy {
            first_backoff: Duration::ZERO,
            max_backoff: Duration::ZERO,
            ..RetryPolicy::default()
        },
        ..Tuning::default()
    };
    let bridge = Bridge::open_with(
        BridgeOptions::new(url, Target::parse("web").unwrap()),
        tuning,
    )
    .await
    .unwrap();
    let _polling = askbridge::channels::telegram::Telegram::new(
        &bridge,
        &TelegramConfig {
            token: Secret::new(telegram.token()),
            api_url: Some(telegram.api_url()),
            mode: TelegramMode::Polling,
            render: Mode::Buttons,
            locale: Locale::En,
            allowed_users: vec![],
        },
    )
    .unwrap()
    .start("127.0.0.1:0".parse().unwrap());
    let _socket = askbridge::channels::slack::Slack::new(
        &bridge,
        &SlackConfig {
            token: Secret::new(slack.bot_token()),
            api_url: Some(slack.api_url()),
            mode: SlackMode::Socket {
                app_token: Secret::new(slack.app_token()),
            },
            render: Mode::Buttons,
            locale: Locale::En,
            allowed_users: vec![],
        },
    )
    .unwrap()
    .start();
    slack.wait_for_connections(1).await;
    let create = |ask: Value| {
        let ask = normalize_json(&ask).unwrap().ask;
        let bridge = bridge.clone();
        async move {
            let new = NewAsk {
                ask,
                idempotency_key: None,
            };
            bridge.create(new).await.unwrap().0.id
        }
    };

    let mut ask = deploy_ask();
    ask["timeoutSeconds"] = json!(120);
    ask["remindAfterSeconds"] = json!(30);
    let id = create(ask).await;
    let in_telegram = telegram.wait_for_sends(1).await.swap_remove(0);
    let in_slack = slack.wait_for_bot_messages(1).await.swap_remove(0);
    // A second ask, in Telegram, reminded at 90 s: once its reminder is
    // done, every reminder due by then was claimed (they are, in the order
    // they are due), a second one of the first ask included.
    let probe = create(json!({
        "to": format!("telegram:{CHAT}@{TELEGRAM_ALICE}"),
        "timeoutSeconds": 120,
        "remindAfterSeconds": 90,
        "questions": [{"question": "Tag it?", "type": "confirm"}]
    }))
    .await;
    let probe_post = telegram.wait_for_sends(2).await.swap_remove(1);

    // Thirty seconds later: a reply to the question in each place. Slack
    // refuses the first try; the reminder is tried again.
    slack.set_faults(Faults::share(1.0).kinds(&[Fault::ServerError]).at_most(1));
    let mut done = bridge.reminders_done();
    clock.advance(Duration::from_secs(30));
    let reminder = slack.wait_for_bot_messages(2).await.swap_remove(1);
    assert_eq!(slack.fault_counts().server_errors, 1);
    assert_eq!(reminder.thread_ts.as_deref(), Some(in_slack.ts.as_str()));
    assert_eq!(
        reminder.text,
        format!("<@{SLACK_ALICE}> ⏰ Still waiting for your answer — expires in under 2 min")
    );
    let reminder = telegram.wait_for_sends(3).await.swap_remove(2);
    assert_eq!(reminder.reply_to_message_id, Some(in_telegram.message_id));
    assert_eq!(
        reminder.text,
        "⏰ Still waiting for your answer — expires in under 2 min"
    );
    done.wait_for(|done| *done >= 1).await.unwrap();

    // Only one was asked for: none of the first ask's is due by 90 s.
    clock.advance(Duration::from_secs(60));
    telegram
        .wait_for("the second ask's reminder", |state| {
            state
                .sent_messages()
                .into_iter()
                .find(|m| m.reply_to_message_id == Some(probe_post.message_id))
                .map(|_| ())
        })
        .await;
    assert_eq!(bridge.reminders_sent(&probe).await.unwrap(), 1);
    assert_eq!(
        bridge.reminders_sent(&id).await.unwrap(),
        1,
        "the first ask was reminded again"
    );

    // Answered: each place closed. A reminder queued for a place is sent
    // before its closing edit, so the count after it is final.
    press_in_slack(&slack, &in_slack, "Staging");
    let answered = bridge.wait(&id, Duration::from_secs(30)).await.unwrap();
    assert_eq!(answered.state.as_str(), "answered");
    slack_closed(&slack, &in_slack).await;
    telegram_closed(&telegram, &in_telegram).await;
    let in_thread = slack.inspect(|state| {
        state
            .bot_messages()
            .iter()
            .filter(|m| m.thread_ts.as_deref() == Some(in_slack.ts.as_str()))
            .count()
    });
    assert_eq!(in_thread, 1, "one reminder in Slack");
    let replies = telegram.inspect(|state| {
        state
            .sent_messages()
            .iter()
            .filter(|m| m.reply_to_message_id == Some(in_telegram.message_id))
            .count()
    });
    assert_eq!(replies, 1, "one reminder in Telegram");
}

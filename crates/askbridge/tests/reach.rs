//! One ask in several places at once, end to end: the real daemon with
//! its Telegram and Slack channels, each against its faithful fake on
//! 127.0.0.1. The first answer in any place wins; every place is closed,
//! the others saying where the answer came from.

#![allow(clippy::unwrap_used)]

mod daemon;

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

/// Both fakes, and a daemon talking to both.
async fn started() -> (FakeTelegram, FakeSlack, Daemon) {
    let telegram = FakeTelegram::start().await;
    telegram.add_chat(&telegram::Chat::supergroup(CHAT, "Releases"));
    let slack = FakeSlack::start().await;
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
    fn find(value: &Value, label: &str) -> Option<String> {
        match value {
            Value::Object(object) => {
                if object.get("type") == Some(&json!("button")) && object["text"]["text"] == label {
                    return object["action_id"].as_str().map(str::to_owned);
                }
                object.values().find_map(|child| find(child, label))
            }
            Value::Array(list) => list.iter().find_map(|child| find(child, label)),
            _ => None,
        }
    }
    find(&message.blocks, label).unwrap_or_else(|| panic!("no button {label:?}"))
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

#[tokio::test]
async fn an_ask_in_telegram_and_slack_answered_in_slack_closes_telegram_saying_where() {
    let (telegram, slack, daemon) = started().await;
    let id = create(&daemon, &deploy_ask()).await;
    let in_telegram = telegram.wait_for_sends(1).await.swap_remove(0);
    let in_slack = slack.wait_for_bot_messages(1).await.swap_remove(0);
    assert_eq!(in_telegram.chat_id, CHAT);
    assert_eq!(in_slack.channel, CHANNEL);

    let listed = status(&daemon, &id).await;
    assert_eq!(
        listed["places"],
        json!([
            {"target": format!("telegram:{CHAT}@{TELEGRAM_ALICE}"), "state": "posted"},
            {"target": format!("slack:{CHANNEL}@{SLACK_ALICE}"), "state": "posted"},
        ]),
        "{listed}"
    );

    slack.press_button(
        &slack_alice(),
        CHANNEL,
        &in_slack.ts,
        &slack_action(&in_slack, "Production"),
    );
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
    let closed = status(&daemon, &id).await;
    assert_eq!(closed["places"][0]["state"], "closed", "{closed}");
    assert_eq!(closed["places"][1]["state"], "closed", "{closed}");
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
        slack.press_button(
            &slack_alice(),
            CHANNEL,
            &in_slack.ts,
            &slack_action(&in_slack, "Canary"),
        );
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

//! The Telegram channel end to end: the real daemon, its real teloxide
//! client, and a faithful fake Bot API on 127.0.0.1
//! (`askbridge_testkit::telegram`). An agent asks over HTTP; people press
//! buttons and type in the fake; the agent gets the outcome.
//!
//! Nothing sleeps: the fake's `wait_for*` helpers are woken by each call
//! it receives, and the agent's side waits with `?wait=` long-polls.

#![allow(clippy::unwrap_used)]

mod daemon;

use askbridge_testkit::telegram::{
    Chat, FakeTelegram, IncomingMessage, RateLimits, StoredMessage, User,
};
use daemon::{Api, Builder, Daemon, create, outcome, status};
use serde_json::{Value, json};

const CHAT: i64 = -100_200_300;
const ALICE: i64 = 42;
const BOB: i64 = 77;

fn alice() -> User {
    User::new(ALICE, "Alice").username("alice")
}

fn bob() -> User {
    User::new(BOB, "Bob").username("bob")
}

fn group() -> Chat {
    Chat::supergroup(CHAT, "Releases")
}

/// A daemon whose Telegram channel talks to `fake`.
fn daemon_for(fake: &FakeTelegram) -> Builder {
    Daemon::builder()
        .env("TELEGRAM_BOT_TOKEN", fake.token())
        .env("ASKBRIDGE_TELEGRAM_API_URL", fake.api_url())
}

/// The deploy question, for Alice only.
fn deploy_ask() -> Value {
    json!({
        "to": format!("telegram:{CHAT}@{ALICE}"),
        "questions": [{
            "id": "env", "header": "Deploy", "question": "Where should I deploy?",
            "options": ["Staging (Recommended)", "Production", "Canary"]
        }]
    })
}

/// Two questions: a text prompt on Telegram.
fn release_ask() -> Value {
    json!({
        "to": format!("telegram:{CHAT}"),
        "title": "Release 2.4",
        "questions": [
            {"id": "env", "header": "Deploy", "question": "Where?", "options": ["Staging", "Production"]},
            {"id": "notify", "header": "Notify", "question": "Who should be told?",
             "options": ["Team", "On-call", "Nobody"], "multiSelect": true}
        ]
    })
}

/// The n-th `sendMessage` the fake took (1-based), once it has.
async fn sent(fake: &FakeTelegram, n: usize) -> StoredMessage {
    fake.wait_for_sends(n).await.swap_remove(n - 1)
}

/// The message once an edit has closed it (its keyboard removed).
async fn closed(fake: &FakeTelegram, message: &StoredMessage) -> StoredMessage {
    let (chat, id) = (message.chat_id, message.message_id);
    fake.wait_for("the question message to be closed", |state| {
        state
            .message(chat, id)
            .filter(|m| m.edited && !m.has_inline_keyboard())
            .cloned()
    })
    .await
}

#[tokio::test]
async fn telegram_button_press_from_the_addressed_user_answers_the_agent() {
    let fake = FakeTelegram::start().await;
    fake.add_chat(&group());
    let daemon = daemon_for(&fake).start();
    let id = create(&daemon, &deploy_ask()).await;

    let question = sent(&fake, 1).await;
    assert_eq!(question.chat_id, CHAT);
    assert_eq!(
        question.button_texts(),
        [
            vec!["Staging ⭐"],
            vec!["Production"],
            vec!["Canary"],
            vec!["Other…", "Skip"]
        ]
    );
    for row in question.buttons() {
        for button in row {
            let data = button.callback_data.expect("callback data");
            assert!(data.len() <= 64, "{data}");
            assert!(!data.contains("Production"), "content leaked into {data}");
        }
    }

    // Bob may not answer: told so, nothing changes.
    let refused = fake.press_button(&bob(), CHAT, question.message_id, "Production");
    let notice = fake.wait_for_callback_answer(&refused).await;
    assert_eq!(
        notice.text.as_deref(),
        Some("This question is not for you.")
    );
    assert_eq!(status(&daemon, &id).await["status"], "pending");

    let pressed = fake.press_button(&alice(), CHAT, question.message_id, "Production");
    let notice = fake.wait_for_callback_answer(&pressed).await;
    assert_eq!(notice.text.as_deref(), Some("Answer submitted"));

    let done = outcome(&daemon, &id).await;
    assert_eq!(done["status"], "answered", "{done}");
    assert_eq!(done["answers"]["env"], json!(["Production"]));
    assert_eq!(done["details"][0]["via"], "button");
    assert_eq!(done["answeredBy"]["userId"], ALICE.to_string());
    assert_eq!(done["answeredBy"]["name"], "Alice");

    let edited = closed(&fake, &question).await;
    assert!(
        edited
            .text
            .ends_with("\n\n✅ Production — answered by Alice"),
        "{}",
        edited.text
    );

    // A press that raced the closing edit is answered too, and changes
    // nothing.
    let staging = question
        .callback_data("Staging ⭐")
        .expect("a Staging button");
    let late = fake.inject_callback(&alice(), CHAT, question.message_id, &staging);
    let notice = fake.wait_for_callback_answer(&late).await;
    assert_eq!(
        notice.text.as_deref(),
        Some("This question was already answered.")
    );
}

#[tokio::test]
async fn telegram_typed_replies_resolve_numbers_and_labels() {
    let fake = FakeTelegram::start().await;
    fake.add_chat(&group());
    let daemon = daemon_for(&fake).start();

    // "2" picks the second option; no reply-to needed.
    let first = create(&daemon, &deploy_ask()).await;
    sent(&fake, 1).await;
    fake.inject_message(IncomingMessage::new(&group(), &alice(), "2"));
    let done = outcome(&daemon, &first).await;
    assert_eq!(done["answers"]["env"], json!(["Production"]), "{done}");
    assert_eq!(done["details"][0]["via"], "text");

    // The label without "(Recommended)", as a reply to the question.
    let second = create(&daemon, &deploy_ask()).await;
    let question = sent(&fake, 2).await;
    fake.inject_message(
        IncomingMessage::new(&group(), &alice(), "staging").reply_to(question.message_id),
    );
    let done = outcome(&daemon, &second).await;
    assert_eq!(
        done["answers"]["env"],
        json!(["Staging (Recommended)"]),
        "{done}"
    );

    // Someone else's chatter is left alone.
    let third = create(&daemon, &deploy_ask()).await;
    sent(&fake, 3).await;
    fake.inject_message(IncomingMessage::new(&group(), &bob(), "2"));
    fake.wait_for_updates_consumed().await;
    assert_eq!(status(&daemon, &third).await["status"], "pending");
}

#[tokio::test]
async fn telegram_multi_question_text_reply_keeps_partial_answers_and_reasks_the_rest() {
    let fake = FakeTelegram::start().await;
    fake.add_chat(&group());
    let daemon = daemon_for(&fake).start();
    let id = create(&daemon, &release_ask()).await;

    let prompt = sent(&fake, 1).await;
    assert!(
        !prompt.has_inline_keyboard(),
        "multi-question asks are text"
    );
    assert!(
        prompt.text.contains("Q1 Deploy — Where?"),
        "{}",
        prompt.text
    );
    assert!(prompt.text.contains("  2. Production"), "{}", prompt.text);

    let partial = fake.inject_message(IncomingMessage::new(&group(), &bob(), "Q1: 2"));
    let reask = sent(&fake, 2).await;
    assert_eq!(reask.reply_to_message_id, Some(partial));
    assert!(
        reask.text.starts_with("Got it. Still open:"),
        "{}",
        reask.text
    );
    assert!(reask.text.contains("Q2 Notify"), "{}", reask.text);
    assert!(!reask.text.contains("Q1"), "{}", reask.text);
    assert_eq!(status(&daemon, &id).await["status"], "pending");

    // A list with an item that is no option is asked about, not half-taken.
    let listed = fake.inject_message(IncomingMessage::new(&group(), &bob(), "1, pagerduty"));
    let ask_back = sent(&fake, 3).await;
    assert_eq!(ask_back.reply_to_message_id, Some(listed));
    assert!(
        ask_back
            .text
            .starts_with("I didn't understand \"pagerduty\" for “Q2 Notify"),
        "{}",
        ask_back.text
    );
    assert_eq!(status(&daemon, &id).await["status"], "pending");

    fake.inject_message(IncomingMessage::new(&group(), &bob(), "1, 2"));
    let done = outcome(&daemon, &id).await;
    assert_eq!(done["status"], "answered", "{done}");
    assert_eq!(done["answers"]["env"], json!(["Production"]));
    assert_eq!(done["answers"]["notify"], json!(["Team", "On-call"]));
    let edited = closed(&fake, &prompt).await;
    assert!(
        edited
            .text
            .ends_with("✅ Production · Team, On-call — answered by Bob"),
        "{}",
        edited.text
    );
}

#[tokio::test]
async fn telegram_ambiguous_reply_gets_a_clarifying_question() {
    let fake = FakeTelegram::start().await;
    fake.add_chat(&group());
    let daemon = daemon_for(&fake).start();
    let id = create(
        &daemon,
        &json!({
            "to": format!("telegram:{CHAT}"),
            "questions": [{"id": "region", "header": "Region", "question": "Which region?",
                           "options": ["Staging EU", "Staging US", "Production"]}]
        }),
    )
    .await;
    sent(&fake, 1).await;
    fake.inject_message(IncomingMessage::new(&group(), &bob(), "staging"));
    let clarify = sent(&fake, 2).await;
    assert!(
        clarify.text.contains("1. Staging EU / 2. Staging US"),
        "{}",
        clarify.text
    );
    fake.inject_message(IncomingMessage::new(&group(), &bob(), "2"));
    let done = outcome(&daemon, &id).await;
    assert_eq!(done["answers"]["region"], json!(["Staging US"]), "{done}");
}

#[tokio::test]
async fn telegram_skip_and_other_buttons() {
    let fake = FakeTelegram::start().await;
    fake.add_chat(&group());
    let daemon = daemon_for(&fake).start();

    let skipped = create(&daemon, &deploy_ask()).await;
    let question = sent(&fake, 1).await;
    fake.press_button(&alice(), CHAT, question.message_id, "Skip");
    let done = outcome(&daemon, &skipped).await;
    assert_eq!(done["status"], "no_answer", "{done}");
    assert_eq!(done["reason"], "skipped");
    assert!(closed(&fake, &question).await.text.ends_with("⏭ Skipped"));

    // Other… asks for the person's own words with a forced reply.
    let other = create(&daemon, &deploy_ask()).await;
    let question = sent(&fake, 2).await;
    let pressed = fake.press_button(&alice(), CHAT, question.message_id, "Other…");
    fake.wait_for_callback_answer(&pressed).await;
    let prompt = sent(&fake, 3).await;
    assert!(prompt.is_force_reply(), "{prompt:?}");
    assert_eq!(prompt.text, "Your answer to “Where should I deploy?”:");
    fake.inject_message(
        IncomingMessage::new(&group(), &alice(), "Blue-green in eu-west")
            .reply_to(prompt.message_id),
    );
    let done = outcome(&daemon, &other).await;
    assert_eq!(done["status"], "answered", "{done}");
    assert_eq!(done["details"][0]["other"], "Blue-green in eu-west");
    assert_eq!(done["details"][0]["via"], "modal");
}

#[tokio::test]
async fn telegram_rich_mode_toggles_and_steps_in_place() {
    let fake = FakeTelegram::start().await;
    fake.add_chat(&group());
    let daemon = daemon_for(&fake)
        .env("ASKBRIDGE_TELEGRAM_RENDER", "rich")
        .start();
    let id = create(
        &daemon,
        &json!({
            "to": format!("telegram:{CHAT}"),
            "questions": [
                {"id": "notify", "header": "Notify", "question": "Who?",
                 "options": ["Team", "On-call", "Nobody"], "multiSelect": true},
                {"id": "note", "header": "Note", "question": "Release note?", "type": "text"}
            ]
        }),
    )
    .await;
    let step = sent(&fake, 1).await;
    assert!(step.text.contains("1/2"), "{}", step.text);
    let chat = step.chat_id;
    let message = step.message_id;
    fake.press_button(&bob(), chat, message, "☐ Team");
    fake.wait_for("Team to be checked", |state| {
        let m = state.message(chat, message)?;
        m.callback_data("☑ Team").map(drop)
    })
    .await;
    fake.press_button(&bob(), chat, message, "☐ Nobody");
    fake.wait_for("Nobody to be checked", |state| {
        state
            .message(chat, message)?
            .callback_data("☑ Nobody")
            .map(drop)
    })
    .await;
    fake.press_button(&bob(), chat, message, "Done");
    let second = fake
        .wait_for("the second step", |state| {
            state
                .message(chat, message)
                .filter(|m| m.text.contains("2/2"))
                .cloned()
        })
        .await;
    assert_eq!(status(&daemon, &id).await["answered"], json!(["notify"]));

    let pressed = fake.press_button(&bob(), chat, second.message_id, "Answer…");
    fake.wait_for_callback_answer(&pressed).await;
    let prompt = sent(&fake, 2).await;
    assert!(prompt.is_force_reply());
    fake.inject_message(
        IncomingMessage::new(&group(), &bob(), "Ships on Friday").reply_to(prompt.message_id),
    );
    let done = outcome(&daemon, &id).await;
    assert_eq!(
        done["answers"]["notify"],
        json!(["Team", "Nobody"]),
        "{done}"
    );
    assert_eq!(done["answers"]["note"], json!(["Ships on Friday"]));
}

#[tokio::test]
async fn telegram_forum_topics_are_separate_conversations() {
    let fake = FakeTelegram::start().await;
    let forum = Chat::supergroup(-100_999, "Ops").forum();
    fake.add_chat(&forum);
    let topic = fake.create_forum_topic(&forum, "Deploys");
    let other_topic = fake.create_forum_topic(&forum, "Chatter");
    let daemon = daemon_for(&fake).start();
    let id = create(
        &daemon,
        &json!({"to": format!("telegram:-100999/{topic}"),
                "questions": [{"question": "Ship it?", "type": "confirm"}]}),
    )
    .await;
    let question = sent(&fake, 1).await;
    assert_eq!(question.thread_id, Some(topic));
    fake.inject_message(IncomingMessage::new(&forum, &bob(), "yes").in_topic(other_topic));
    fake.wait_for_updates_consumed().await;
    assert_eq!(status(&daemon, &id).await["status"], "pending");
    fake.inject_message(IncomingMessage::new(&forum, &bob(), "yes").in_topic(topic));
    let done = outcome(&daemon, &id).await;
    assert_eq!(done["status"], "answered", "{done}");
}

#[tokio::test]
async fn telegram_blocked_chat_ends_the_ask_as_delivery_failed() {
    let fake = FakeTelegram::start().await;
    fake.mark_blocked(ALICE);
    let daemon = daemon_for(&fake).start();
    let id = create(
        &daemon,
        &json!({"to": format!("telegram:{ALICE}"), "questions": [{"question": "Ship it?", "type": "confirm"}]}),
    )
    .await;
    let done = outcome(&daemon, &id).await;
    assert_eq!(done["status"], "no_answer", "{done}");
    assert_eq!(done["reason"], "delivery_failed");
    assert!(
        done["failure"]
            .as_str()
            .is_some_and(|f| f.contains("bot was blocked by the user")),
        "{done}"
    );
}

#[tokio::test]
async fn telegram_rate_limits_delay_but_lose_nothing() {
    // Stricter than teloxide's throttle assumes: 429s reach it, it waits
    // the retry_after Telegram names, and every message still goes out.
    let fake = FakeTelegram::builder()
        .rate_limits(RateLimits {
            overall_per_sec: Some(2),
            ..RateLimits::OFF
        })
        .start()
        .await;
    let daemon = daemon_for(&fake).start();
    let mut ids = Vec::new();
    for chat in 1..=6_i64 {
        let body = json!({"to": format!("telegram:{chat}"), "questions": [{"question": "Ship it?", "type": "confirm"}]});
        ids.push(create(&daemon, &body).await);
    }
    let sends = fake.wait_for_sends(6).await;
    let mut chats: Vec<i64> = sends.iter().map(|m| m.chat_id).collect();
    chats.sort_unstable();
    assert_eq!(chats, [1, 2, 3, 4, 5, 6]);
    assert!(fake.rate_limited_count() > 0, "the limit was never hit");
    for id in &ids {
        assert_eq!(status(&daemon, id).await["status"], "pending");
    }
}

#[tokio::test]
async fn telegram_allow_list_admits_only_listed_users_and_cancel_closes_the_message() {
    let fake = FakeTelegram::start().await;
    fake.add_chat(&group());
    let daemon = daemon_for(&fake)
        .env("ASKBRIDGE_TELEGRAM_ALLOWED_USERS", "@alice")
        .start();
    let id = create(
        &daemon,
        &json!({"to": format!("telegram:{CHAT}"), "questions": [{"question": "Ship it?", "type": "confirm"}]}),
    )
    .await;
    let question = sent(&fake, 1).await;
    assert_eq!(question.button_texts(), [vec!["Yes", "No"], vec!["Skip"]]);

    let refused = fake.press_button(&bob(), CHAT, question.message_id, "Yes");
    let notice = fake.wait_for_callback_answer(&refused).await;
    assert_eq!(
        notice.text.as_deref(),
        Some("This question is not for you.")
    );
    fake.inject_message(
        IncomingMessage::new(&group(), &bob(), "yes").reply_to(question.message_id),
    );
    fake.wait_for_updates_consumed().await;
    assert_eq!(status(&daemon, &id).await["status"], "pending");

    let cancelled = Api::of(&daemon).cancel(&id).await;
    assert_eq!(cancelled["reason"], "cancelled", "{cancelled}");
    assert!(
        closed(&fake, &question)
            .await
            .text
            .ends_with("\n\n✖ Cancelled")
    );
}

#[tokio::test]
async fn telegram_buttons_and_replies_work_after_a_crash_and_restart() {
    let fake = FakeTelegram::start().await;
    fake.add_chat(&group());
    let mut daemon = daemon_for(&fake).start();
    let id = create(&daemon, &deploy_ask()).await;
    let question = sent(&fake, 1).await;
    let typed = create(&daemon, &release_ask()).await;
    let prompt = sent(&fake, 2).await;
    daemon.kill();
    daemon.restart();

    fake.inject_message(
        IncomingMessage::new(&group(), &bob(), "Q1: 1\nQ2: 3").reply_to(prompt.message_id),
    );
    let done = outcome(&daemon, &typed).await;
    assert_eq!(done["answers"]["notify"], json!(["Nobody"]), "{done}");

    let pressed = fake.press_button(&alice(), CHAT, question.message_id, "Canary");
    assert_eq!(
        fake.wait_for_callback_answer(&pressed)
            .await
            .text
            .as_deref(),
        Some("Answer submitted")
    );
    let done = outcome(&daemon, &id).await;
    assert_eq!(done["answers"]["env"], json!(["Canary"]), "{done}");
    // Killed between posting and recording the post, the daemon posts
    // again after the restart (at least once, never lost); never more.
    assert!(fake.calls_to("sendMessage").len() <= 4);
}

#[tokio::test]
async fn telegram_webhook_mode_checks_the_secret() {
    let fake = FakeTelegram::start().await;
    fake.add_chat(&group());
    let daemon = daemon_for(&fake)
        .env("ASKBRIDGE_TELEGRAM_MODE", "webhook")
        .env("TELEGRAM_WEBHOOK_SECRET", "s3cret-Token_1")
        .start();
    let hook = fake
        .wait_for("the webhook to be set", |state| state.webhook().cloned())
        .await;
    assert_eq!(hook.url, daemon.url("/telegram/webhook"));
    assert_eq!(hook.secret_token.as_deref(), Some("s3cret-Token_1"));

    let update = json!({"update_id": 1, "message": {"message_id": 1, "date": 0,
        "chat": {"id": CHAT, "type": "supergroup", "title": "Releases"},
        "from": {"id": ALICE, "is_bot": false, "first_name": "Alice"}, "text": "2"}});
    for secret in [None, Some("wrong")] {
        let mut request = daemon::client()
            .post(daemon.url("/telegram/webhook"))
            .json(&update);
        if let Some(secret) = secret {
            request = request.header("X-Telegram-Bot-Api-Secret-Token", secret);
        }
        let response = request.send().await.expect("post");
        assert_eq!(response.status(), 401, "secret {secret:?}");
    }

    let id = create(&daemon, &deploy_ask()).await;
    let question = sent(&fake, 1).await;
    fake.press_button(&alice(), CHAT, question.message_id, "Production");
    let done = outcome(&daemon, &id).await;
    assert_eq!(done["answers"]["env"], json!(["Production"]), "{done}");
    assert!(
        fake.webhook_deliveries().iter().all(|d| d.delivered()),
        "{:?}",
        fake.webhook_deliveries()
    );
}

#[tokio::test]
async fn telegram_timeout_edits_the_message_to_expired_in_the_channel_locale() {
    use std::time::Duration;

    use askbridge::bridge::{Bridge, BridgeOptions, Clock, NewAsk, Tuning};
    use askbridge::channels::telegram::Telegram;
    use askbridge::config::{Secret, TelegramConfig, TelegramMode};
    use askbridge_core::lifecycle::State;
    use askbridge_core::model::Target;
    use askbridge_core::model::Timestamp;
    use askbridge_core::normalize::normalize_json;
    use askbridge_core::render::{Locale, Mode};

    let fake = FakeTelegram::start().await;
    let clock = Clock::manual(Timestamp::from_secs(1_750_000_000));
    let bridge = Bridge::open_with(
        BridgeOptions::new("sqlite::memory:", Target::parse("web").unwrap()),
        Tuning {
            clock: clock.clone(),
            ..Tuning::default()
        },
    )
    .await
    .unwrap();
    let config = TelegramConfig {
        token: Secret::new(fake.token()),
        api_url: Some(fake.api_url()),
        mode: TelegramMode::Polling,
        render: Mode::Buttons,
        locale: Locale::ZhCn,
        allowed_users: Vec::new(),
    };
    let _telegram = Telegram::new(&bridge, &config).unwrap();
    let ask = normalize_json(&json!({
        "to": format!("telegram:{ALICE}"),
        "timeoutSeconds": 60,
        "questions": [{"question": "Where?", "options": ["Staging", "Production"]}]
    }))
    .unwrap()
    .ask;
    let (view, _) = bridge
        .create(NewAsk {
            ask,
            idempotency_key: None,
        })
        .await
        .unwrap();
    let question = sent(&fake, 1).await;
    assert_eq!(question.button_texts().last().unwrap(), &["其他…", "跳过"]);

    clock.advance(Duration::from_secs(61));
    let edited = closed(&fake, &question).await;
    assert!(edited.text.ends_with("\n\n⌛ 已过期"), "{}", edited.text);
    assert_eq!(bridge.get(&view.id).await.unwrap().state, State::TimedOut);
}

/// `POST /v1/asks` with `body`: the ask's id and the host key only its
/// creator gets.
async fn create_as_host(daemon: &Daemon, body: &Value) -> (String, String) {
    let created: Value = Api::of(daemon)
        .http
        .post(daemon.url("/v1/asks"))
        .json(body)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let id = created["id"].as_str().expect("an id").to_owned();
    let key = created["hostKey"].as_str().expect("a hostKey").to_owned();
    (id, key)
}

/// `POST /v1/asks/{id}/reply` with `body`, with the host key `key` when
/// given: the status and the body.
async fn reply_as(daemon: &Daemon, id: &str, body: Value, key: Option<&str>) -> (u16, Value) {
    let mut request = Api::of(daemon)
        .http
        .post(daemon.url(&format!("/v1/asks/{id}/reply")))
        .json(&body);
    if let Some(key) = key {
        request = request.header("Askbridge-Host-Key", key);
    }
    let response = request.send().await.unwrap();
    let status = response.status().as_u16();
    (status, response.json::<Value>().await.unwrap())
}

/// Over HTTP, only the ask's creator is the agent's host: a plain API
/// client (the web page, a script, another local process) cannot answer
/// an ask meant for Alice on Telegram, with or without `"via": "host"`;
/// the `hostKey` the creation returned, sent as `Askbridge-Host-Key`,
/// can.
#[tokio::test]
async fn telegram_ask_for_one_person_refuses_api_clients_that_claim_the_host() {
    let fake = FakeTelegram::start().await;
    fake.add_chat(&group());
    let daemon = daemon_for(&fake).start();
    let (id, key) = create_as_host(&daemon, &deploy_ask()).await;
    assert_eq!(key.len(), 64, "{key}");
    sent(&fake, 1).await;
    assert!(
        status(&daemon, &id).await.get("hostKey").is_none(),
        "only the creation shows the key"
    );

    let answers = json!({"answers": {"env": "Production"}});
    let claimed = json!({"answers": {"env": "Production"}, "via": "host"});
    let (code, body) = reply_as(&daemon, &id, answers.clone(), None).await;
    assert_eq!(
        (code, body["error"]["code"].as_str()),
        (403, Some("not_for_you")),
        "{body}"
    );
    let (code, body) = reply_as(&daemon, &id, claimed.clone(), None).await;
    assert_eq!(
        (code, body["error"]["code"].as_str()),
        (403, Some("not_host")),
        "{body}"
    );
    let forged = "0".repeat(64);
    let (code, body) = reply_as(&daemon, &id, claimed.clone(), Some(&forged)).await;
    assert_eq!(
        (code, body["error"]["code"].as_str()),
        (403, Some("not_host")),
        "{body}"
    );
    assert_eq!(status(&daemon, &id).await["status"], "pending");

    let (code, body) = reply_as(&daemon, &id, claimed, Some(&key)).await;
    assert_eq!(code, 200, "{body}");
    let done = outcome(&daemon, &id).await;
    assert_eq!(done["answers"]["env"], json!(["Production"]), "{done}");
    assert_eq!(done["details"][0]["via"], "host", "{done}");
}

/// An approval is Alice's alone: the creator's own host key, which
/// answers any other ask, answers it neither for her nor as the host; her
/// press does.
#[tokio::test]
async fn telegram_the_host_key_does_not_answer_an_approval() {
    let fake = FakeTelegram::start().await;
    fake.add_chat(&group());
    let daemon = daemon_for(&fake).start();
    let mut approval = deploy_ask();
    approval["approval"] = json!(true);
    let (id, key) = create_as_host(&daemon, &approval).await;
    let question = sent(&fake, 1).await;
    for body in [
        json!({"answers": {"env": "Production"}, "via": "host"}),
        json!({"answers": {"env": "Production"}}),
        json!({"text": "2", "user": {"id": ALICE.to_string()}}),
        json!({"skip": true}),
    ] {
        let (code, answer) = reply_as(&daemon, &id, body.clone(), Some(&key)).await;
        assert_eq!(
            (code, answer["error"]["code"].as_str()),
            (403, Some("not_for_you")),
            "{body}: {answer}"
        );
    }
    assert_eq!(status(&daemon, &id).await["status"], "pending");
    fake.press_button(&alice(), CHAT, question.message_id, "Production");
    let done = outcome(&daemon, &id).await;
    assert_eq!(done["answers"]["env"], json!(["Production"]), "{done}");
    assert_eq!(done["answeredBy"]["userId"], ALICE.to_string(), "{done}");
}

/// Ten taps on a rich step's options and Done, all in one `getUpdates`
/// batch: every toggle is applied, in order, before Done reads them.
#[tokio::test]
async fn telegram_a_batch_of_toggles_loses_none() {
    let fake = FakeTelegram::start().await;
    fake.add_chat(&group());
    let daemon = daemon_for(&fake)
        .env("ASKBRIDGE_TELEGRAM_RENDER", "rich")
        .start();
    let options: Vec<String> = (1..=10).map(|n| format!("Team {n}")).collect();
    let id = create(
        &daemon,
        &json!({
            "to": format!("telegram:{CHAT}"),
            "questions": [{"id": "notify", "header": "Notify", "question": "Who?",
                           "options": options, "multiSelect": true}]
        }),
    )
    .await;
    let step = sent(&fake, 1).await;
    fake.in_one_batch(|batch| {
        for option in &options {
            batch.press(&bob(), CHAT, step.message_id, &format!("☐ {option}"));
        }
        batch.press(&bob(), CHAT, step.message_id, "Done");
    });
    let done = outcome(&daemon, &id).await;
    assert_eq!(done["answers"]["notify"], json!(options), "{done}");
}

/// Two messages of one person in one batch are applied in the order sent,
/// every time: "2" answers, and the "3" after it finds nothing open.
#[tokio::test]
async fn telegram_a_persons_messages_in_one_batch_apply_in_order() {
    let fake = FakeTelegram::start().await;
    fake.add_chat(&group());
    let daemon = daemon_for(&fake).start();
    for round in 1..=5 {
        let mut ask = deploy_ask();
        ask["to"] = json!(format!("telegram:{CHAT}"));
        let id = create(&daemon, &ask).await;
        let question = fake
            .wait_for("the round's question", |state| {
                state
                    .sent_messages()
                    .into_iter()
                    .find(|m| m.has_inline_keyboard() && !m.edited)
                    .cloned()
            })
            .await;
        fake.in_one_batch(|batch| {
            batch.message(IncomingMessage::new(&group(), &bob(), "2"));
            batch.message(IncomingMessage::new(&group(), &bob(), "3"));
        });
        let done = outcome(&daemon, &id).await;
        assert_eq!(
            done["answers"]["env"],
            json!(["Production"]),
            "round {round}: {done}"
        );
        closed(&fake, &question).await;
        fake.wait_for_updates_consumed().await;
    }
}

/// Asks [`deploy_ask`]; returns its id and its question once the post is
/// on record and the bot is polling for what people do.
async fn asked_and_polling(daemon: &Daemon, fake: &FakeTelegram) -> (String, StoredMessage) {
    let id = create(daemon, &deploy_ask()).await;
    let question = sent(fake, 1).await;
    let _ = status(daemon, &id).await;
    fake.wait_for("the poll", |state| {
        (state.active_long_polls() > 0).then_some(())
    })
    .await;
    (id, question)
}

/// A directory of one test on the small filesystem `.ci/run` mounts (a
/// tmpfs named by `ASKBRIDGE_TEST_SMALL_DISK`), and a file that fills it.
/// Both are removed when dropped.
struct SmallDisk {
    dir: std::path::PathBuf,
    filler: std::path::PathBuf,
}

impl SmallDisk {
    const VAR: &str = "ASKBRIDGE_TEST_SMALL_DISK";

    fn new() -> SmallDisk {
        let root = std::env::var_os(Self::VAR).unwrap_or_else(|| {
            panic!(
                "{} is not set: the disk-full test needs a small filesystem of its own \
                 (`.ci/run` mounts one: mount -t tmpfs -o size=16m tmpfs DIR)",
                Self::VAR
            )
        });
        let name = uuid::Uuid::new_v4().simple().to_string();
        let dir = std::path::Path::new(&root).join(&name);
        std::fs::create_dir_all(&dir).expect("a directory on the small disk");
        let filler = std::path::Path::new(&root).join(format!("{name}.filler"));
        SmallDisk { dir, filler }
    }

    /// Writes until the filesystem says it is full.
    fn fill(&self) {
        use std::io::Write;
        let mut file = std::fs::File::create(&self.filler).expect("the filler");
        for chunk in [1 << 20, 4 << 10, 1] {
            let bytes = vec![0_u8; chunk];
            loop {
                match file.write_all(&bytes) {
                    Ok(()) => {}
                    Err(error) if error.raw_os_error() == Some(28) => break,
                    Err(error) => panic!("filling the disk: {error}"),
                }
            }
        }
    }

    /// Makes room again.
    fn free(&self) {
        std::fs::remove_file(&self.filler).expect("remove the filler");
    }
}

impl Drop for SmallDisk {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.filler);
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// The database's disk full: creates are refused with `503` saying so,
/// a press read meanwhile is not confirmed to Telegram; once there is
/// room, the retried create asks once, the press counts, and nothing
/// acknowledged is lost or corrupted (checked after a restart too).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn telegram_and_the_api_on_a_full_disk_refuse_clearly_lose_nothing_and_resume() {
    let disk = SmallDisk::new();
    let fake = FakeTelegram::start().await;
    fake.add_chat(&group());
    let mut daemon = daemon_for(&fake).data_dir(&disk.dir).start();
    let (id, question) = asked_and_polling(&daemon, &fake).await;

    disk.fill();
    let mut acknowledged = vec![id.clone()];
    let post = |key: String| {
        daemon::client()
            .post(daemon.url("/v1/asks"))
            .header("Idempotency-Key", key)
            .json(&json!({"to": "web", "questions": [{"question": "Go on?", "type": "yesno"}]}))
            .send()
    };
    // SQLite may still have room in pages it holds; it runs out soon.
    let (refused_key, refusal) = 'full: {
        for n in 0..500 {
            let key = format!("full-{n}");
            let response = post(key.clone()).await.expect("the daemon answers");
            let status = response.status().as_u16();
            let body: Value = response.json().await.expect("JSON");
            match status {
                201 => acknowledged.push(body["id"].as_str().expect("id").to_owned()),
                503 => break 'full (key, body),
                other => panic!("HTTP {other}: {body}"),
            }
        }
        panic!("500 asks fit on a full disk");
    };
    eprintln!("{} asks taken before the disk was full", acknowledged.len());
    assert_eq!(refusal["error"]["code"], "unavailable", "{refusal}");
    let message = refusal["error"]["message"].as_str().expect("a message");
    assert!(message.contains("disk is full"), "{message}");

    // A press read now cannot be recorded: Telegram is asked for it again.
    let press = fake.press_button(&alice(), CHAT, question.message_id, "Production");
    let update_id = fake.inspect(|state| state.pending_updates()[0]["update_id"].as_i64());
    assert_eq!(
        fake.wait_for_poll_after(&press).await,
        update_id,
        "the press was confirmed unrecorded"
    );
    assert_eq!(
        fake.callback_answer(&press),
        None,
        "an unrecorded press was answered"
    );

    disk.free();
    // Room came back under a write still under way: a 503 or two more,
    // then the create goes through. A client pauses between tries, as the
    // 503 asks; one still refused after `TRIES` is a daemon that did not
    // recover.
    const TRIES: u32 = 50;
    let mut tries = 0;
    let retried = loop {
        tries += 1;
        let response = post(refused_key.clone()).await.expect("the daemon answers");
        let status = response.status().as_u16();
        let body: Value = response.json().await.expect("JSON");
        match status {
            201 => break body["id"].as_str().expect("id").to_owned(),
            503 if tries < TRIES => {
                tokio::time::sleep(std::time::Duration::from_millis(100)).await;
            }
            503 => panic!(
                "the create was still refused after {TRIES} tries ({} s) with room on the \
                 disk again: {body}",
                TRIES / 10
            ),
            other => panic!("HTTP {other}: {body}"),
        }
    };
    acknowledged.push(retried);
    let notice = fake.wait_for_callback_answer(&press).await;
    assert_eq!(notice.text.as_deref(), Some("Answer submitted"));
    let done = outcome(&daemon, &id).await;
    assert_eq!(done["answers"]["env"], json!(["Production"]), "{done}");

    daemon.kill();
    let file = disk.dir.join("askbridge.db");
    let check: String = {
        use sqlx::Connection;
        let mut db = sqlx::SqliteConnection::connect(&format!("sqlite://{}", file.display()))
            .await
            .expect("open the database");
        sqlx::query_scalar("PRAGMA integrity_check")
            .fetch_one(&mut db)
            .await
            .expect("integrity check")
    };
    assert_eq!(check, "ok");
    daemon.restart();
    for id in &acknowledged {
        let ask = status(&daemon, id).await;
        assert_eq!(ask["id"], json!(id), "{ask}");
    }
    let all = Api::of(&daemon)
        .send(daemon::client().get(daemon.url("/v1/asks?limit=1000")))
        .await;
    assert_eq!(
        all["asks"].as_array().map(Vec::len),
        Some(acknowledged.len()),
        "an ask lost or made twice"
    );
}

/// A `getUpdates` that fails with a 500 does not hold up the next one:
/// a press made after it is answered at once. (teloxide's request code
/// waits 10 s after any 5xx; the poll does not go through it. The fake
/// gives up after 5 s, far above the poll's own 250 ms backoff.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn telegram_a_failed_poll_does_not_hold_up_the_next_press() {
    use askbridge_testkit::faults::{Fault, Faults};
    let fake = FakeTelegram::builder()
        .wait_timeout(std::time::Duration::from_secs(5))
        .start()
        .await;
    fake.add_chat(&group());
    let daemon = daemon_for(&fake).start();
    let (id, question) = asked_and_polling(&daemon, &fake).await;

    // The poll now waiting hands out Bob's chatter (which calls nothing);
    // the poll after it fails.
    fake.set_faults(Faults::share(1.0).kinds(&[Fault::ServerError]));
    fake.inject_message(IncomingMessage::new(&group(), &bob(), "lunch?"));
    while fake.fault_counts().total() == 0 {
        tokio::task::yield_now().await;
    }
    fake.set_faults(Faults::NONE);

    let pressed = fake.press_button(&alice(), CHAT, question.message_id, "Production");
    let answer = fake.wait_for_callback_answer(&pressed).await;
    assert_eq!(answer.text.as_deref(), Some("Answer submitted"));
    let done = outcome(&daemon, &id).await;
    assert_eq!(done["answers"]["env"], json!(["Production"]), "{done}");
}

/// `/askbridge` (as Telegram writes it in a group, with the bot's name)
/// is answered with the exact targets for this chat, for the sender alone
/// and for anyone, as a reply; the pending ask there is left alone.
#[tokio::test]
async fn telegram_askbridge_command_tells_the_targets_for_this_chat() {
    let fake = FakeTelegram::start().await;
    fake.add_chat(&group());
    let daemon = daemon_for(&fake).start();
    let id = create(&daemon, &deploy_ask()).await;
    sent(&fake, 1).await;

    fake.inject_message(IncomingMessage::new(
        &group(),
        &alice(),
        "/askbridge@askbridge_bot",
    ));
    let answer = sent(&fake, 2).await;
    assert_eq!(
        answer.text,
        format!(
            "To ask here, use telegram:{CHAT}@{ALICE} (only you may answer) or \
             telegram:{CHAT} (anyone here may answer)."
        )
    );
    assert_eq!(status(&daemon, &id).await["status"], "pending");
}

#[tokio::test]
async fn telegram_a_context_block_comes_first_as_pre_masked_and_the_agent_keeps_it_whole() {
    let fake = FakeTelegram::start().await;
    fake.add_chat(&group());
    let daemon = daemon_for(&fake).start();
    let command = "$ curl -H 'Authorization: Bearer abcdefghijkl' https://api.example\n  --data ok";
    let mut ask = deploy_ask();
    ask["context"] = json!({"text": command, "language": "bash"});
    let id = create(&daemon, &ask).await;

    let block = sent(&fake, 1).await;
    let question = sent(&fake, 2).await;
    let shown = "$ curl -H 'Authorization: Bearer ••••••' https://api.example\n  --data ok";
    assert_eq!(block.text, shown);
    assert!(!block.has_inline_keyboard());
    let call = &fake.calls_to("sendMessage")[0];
    assert_eq!(
        call.params["entities"],
        json!([{"type": "pre", "offset": 0, "length": shown.encode_utf16().count(), "language": "bash"}]),
        "{}",
        call.params
    );
    assert!(
        question.has_inline_keyboard(),
        "the question, under the block"
    );

    // The agent's record of the ask is as it was sent.
    let record = status(&daemon, &id).await;
    assert_eq!(record["ask"]["context"]["text"], command, "{record}");
    fake.press_button(&alice(), CHAT, question.message_id, "Production");
    assert_eq!(
        outcome(&daemon, &id).await["answers"]["env"],
        json!(["Production"])
    );
    // Only the question is closed; the block stays as it was.
    closed(&fake, &question).await;
    assert!(
        !fake
            .message(CHAT, block.message_id)
            .expect("the block")
            .edited
    );
}

/// 3,000 🙂 are 6,000 UTF-16 units, what Telegram counts: the context is
/// split under its 4,096 and the question still comes after it.
#[tokio::test]
async fn telegram_an_astral_context_is_split_to_the_utf16_limit_and_the_question_still_arrives() {
    let fake = FakeTelegram::start().await;
    fake.add_chat(&group());
    let daemon = daemon_for(&fake).start();
    let smiles = "🙂".repeat(3_000);
    let mut ask = deploy_ask();
    ask["context"] = json!({"text": smiles});
    let id = create(&daemon, &ask).await;

    let first = sent(&fake, 1).await;
    let second = sent(&fake, 2).await;
    let question = sent(&fake, 3).await;
    for block in [&first, &second] {
        let length = block.text.encode_utf16().count();
        assert!(length <= 4_096, "a block of {length} UTF-16 units");
        assert!(!block.has_inline_keyboard());
    }
    assert_eq!(format!("{}{}", first.text, second.text), smiles);
    assert!(
        question.has_inline_keyboard(),
        "the question, under the blocks"
    );
    assert_eq!(status(&daemon, &id).await["status"], "pending");
}

/// An ask of an agent session's thread, for Alice.
fn session_ask(question: &str) -> Value {
    json!({
        "to": format!("telegram:{CHAT}@{ALICE}"),
        "thread": {"key": "codex:s1", "title": "Codex · app · session s1"},
        "questions": [{"question": question, "options": ["Staging", "Production", "Canary"]}]
    })
}

#[tokio::test]
async fn telegram_asks_of_one_session_reply_to_its_first_message_and_a_reply_there_answers() {
    let fake = FakeTelegram::start().await;
    fake.add_chat(&group());
    let mut daemon = daemon_for(&fake).start();
    let first = create(&daemon, &session_ask("Where first?")).await;
    let root = sent(&fake, 1).await;
    assert_eq!(root.text, "Codex · app · session s1");
    assert_eq!(root.reply_to_message_id, None);
    let question = sent(&fake, 2).await;
    assert_eq!(question.reply_to_message_id, Some(root.message_id));
    assert!(question.has_inline_keyboard());

    // After a restart the thread is still the one on record.
    daemon.terminate();
    daemon.restart();
    let second = create(&daemon, &session_ask("Where next?")).await;
    let next = sent(&fake, 3).await;
    assert!(next.text.contains("Where next?"), "{}", next.text);
    assert_eq!(next.reply_to_message_id, Some(root.message_id));

    // A reply to the thread's first message answers its newest ask…
    fake.inject_message(
        IncomingMessage::new(&group(), &alice(), "canary").reply_to(root.message_id),
    );
    let done = outcome(&daemon, &second).await;
    assert_eq!(done["answers"]["where_next"], json!(["Canary"]), "{done}");
    // …and a reply to a question answers that one.
    fake.inject_message(
        IncomingMessage::new(&group(), &alice(), "1").reply_to(question.message_id),
    );
    let done = outcome(&daemon, &first).await;
    assert_eq!(done["answers"]["where_first"], json!(["Staging"]), "{done}");
    closed(&fake, &next).await;
    assert_eq!(fake.calls_to("sendMessage").len(), 3, "one first message");
}

#[tokio::test]
async fn telegram_a_notice_goes_under_its_thread_with_its_block_and_a_bad_one_is_refused() {
    let fake = FakeTelegram::start().await;
    fake.add_chat(&group());
    let daemon = daemon_for(&fake).start();
    let notice = json!({
        "to": format!("telegram:{CHAT}@{ALICE}"),
        "text": "Codex finished in app.",
        "context": {"text": "Done: tests pass. Key sk-abcdefghijklmnopqrstuv", "language": "markdown"},
        "thread": {"key": "codex:s1", "title": "Codex · app · session s1"}
    });
    let (status, body) = post_notice(&daemon, &notice).await;
    assert_eq!(status, 201);
    assert_eq!(body["to"], format!("telegram:{CHAT}@{ALICE}"));
    assert_eq!(body["messages"], 2);
    let posted = fake.wait_for_sends(3).await;
    assert_eq!(posted[0].text, "Codex · app · session s1");
    assert_eq!(posted[1].text, "Codex finished in app.");
    assert_eq!(posted[1].reply_to_message_id, Some(posted[0].message_id));
    assert!(
        posted[2].text.starts_with("Done: tests pass. Key sk-"),
        "{}",
        posted[2].text
    );
    assert!(
        !posted[2].text.contains("abcdefghijklmnop"),
        "masked: {}",
        posted[2].text
    );
    assert_eq!(posted[2].reply_to_message_id, Some(posted[0].message_id));

    // An ask of the same thread goes under the same first message.
    create(&daemon, &session_ask("Where?")).await;
    let question = sent(&fake, 4).await;
    assert_eq!(question.reply_to_message_id, Some(posted[0].message_id));

    for (notice, status, code, path) in [
        (
            json!({"text": "Hi", "to": "web"}),
            422,
            "notice_refused",
            "to",
        ),
        (
            json!({"text": " ", "to": format!("telegram:{CHAT}")}),
            422,
            "invalid_notice",
            "text",
        ),
        (
            json!({"text": "Hi", "to": "slack:C1"}),
            422,
            "notice_refused",
            "to",
        ),
    ] {
        let (answered, body) = post_notice(&daemon, &notice).await;
        assert_eq!(answered, status, "{notice}");
        assert_eq!(body["error"]["code"], code, "{body}");
        assert_eq!(body["error"]["path"], path, "{body}");
    }
    assert_eq!(fake.calls_to("sendMessage").len(), 4, "nothing more posted");
}

/// A notice is split as Telegram counts: 4,000 emoji (the most a notice
/// holds) are 8,000 UTF-16 units, over the 4,096 of one message.
#[tokio::test]
async fn telegram_a_notice_of_wide_characters_is_split_to_the_limit() {
    let fake = FakeTelegram::start().await;
    fake.add_chat(&group());
    let daemon = daemon_for(&fake).start();
    let text = "🙂".repeat(4_000);
    let notice = json!({"to": format!("telegram:{CHAT}"), "text": text});
    let (status, body) = post_notice(&daemon, &notice).await;
    assert_eq!(status, 201, "{body}");
    let count = usize::try_from(body["messages"].as_u64().expect("a count")).expect("small");
    assert!(count >= 2, "{body}");
    let posted = fake.wait_for_sends(count).await;
    for message in &posted {
        let units = message.text.encode_utf16().count();
        assert!(units <= 4_096, "{units} UTF-16 units in one message");
    }
    let joined: String = posted.iter().map(|message| message.text.as_str()).collect();
    assert_eq!(joined, text, "every emoji sent once, in order");
}

/// `POST /v1/notices`: the status and the body.
async fn post_notice(daemon: &Daemon, notice: &Value) -> (u16, Value) {
    let response = daemon::client()
        .post(daemon.url("/v1/notices"))
        .json(notice)
        .send()
        .await
        .unwrap();
    let status = response.status().as_u16();
    (status, response.json().await.unwrap())
}

#[tokio::test]
async fn telegram_two_asks_of_a_new_session_at_once_share_one_first_message() {
    let fake = FakeTelegram::start().await;
    fake.add_chat(&group());
    let daemon = daemon_for(&fake).start();
    let (one, two) = (session_ask("Where first?"), session_ask("Where next?"));
    let (first, second) = tokio::join!(create(&daemon, &one), create(&daemon, &two));
    assert_ne!(first, second);
    let posted = fake.wait_for_sends(3).await;
    let roots: Vec<&StoredMessage> = posted
        .iter()
        .filter(|message| message.reply_to_message_id.is_none())
        .collect();
    assert_eq!(roots.len(), 1, "one first message: {posted:#?}");
    assert_eq!(roots[0].text, "Codex · app · session s1");
    for question in posted
        .iter()
        .filter(|message| message.has_inline_keyboard())
    {
        assert_eq!(question.reply_to_message_id, Some(roots[0].message_id));
    }
    daemon::Api::of(&daemon).cancel(&first).await;
    daemon::Api::of(&daemon).cancel(&second).await;
    fake.wait_for("both questions closed", |state| {
        (state
            .messages_in(CHAT)
            .iter()
            .filter(|message| message.edited)
            .count()
            == 2)
            .then_some(())
    })
    .await;
    assert_eq!(fake.calls_to("sendMessage").len(), 3, "nothing more posted");
}

//! Self-tests of the fake Telegram Bot API, driven by the real teloxide
//! client: what teloxide sends, the fake understands; what the fake answers,
//! teloxide deserialises (and maps to the right errors).

#![allow(clippy::unwrap_used)]

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use askbridge_testkit::telegram::{
    self as fake, CallbackAnswer, FakeTelegram, IncomingMessage, RateLimits, TOKEN,
};
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use serde_json::{Value, json};
use teloxide::adaptors::throttle::Limits;
use teloxide::payloads::{
    AnswerCallbackQuerySetters, EditMessageReplyMarkupSetters, GetUpdatesSetters,
    SendMessageSetters, SetWebhookSetters,
};
use teloxide::prelude::*;
use teloxide::types::{
    CallbackQueryId, ChatId, ForceReply, InlineKeyboardButton, InlineKeyboardMarkup,
    MessageEntityKind, MessageId, Recipient, ReplyParameters, ThreadId, UpdateKind, UserId,
};
use teloxide::{ApiError, RequestError};

fn bot(fake: &FakeTelegram) -> Bot {
    Bot::new(TOKEN).set_api_url(fake.api_url().parse().unwrap())
}

fn yes_no() -> InlineKeyboardMarkup {
    InlineKeyboardMarkup::new([[
        InlineKeyboardButton::callback("Yes", "ask:1:0"),
        InlineKeyboardButton::callback("No", "ask:1:1"),
    ]])
}

fn api_error(result: Result<impl std::fmt::Debug, RequestError>) -> ApiError {
    match result {
        Err(RequestError::Api(error)) => error,
        other => panic!("expected an API error, got {other:?}"),
    }
}

#[tokio::test]
async fn get_me_describes_the_bot() {
    let fake = FakeTelegram::start().await;
    let me = bot(&fake).get_me().await.unwrap();

    assert_eq!(me.user.id, UserId(fake::BOT_ID as u64));
    assert!(me.user.is_bot);
    assert_eq!(me.username(), fake::BOT_USERNAME);
    assert_eq!(me.user.first_name, fake::BOT_FIRST_NAME);
    assert!(me.can_join_groups);
    // Privacy mode is on for a new bot.
    assert!(!me.can_read_all_group_messages);
    // teloxide spells it "GetMe"; the log uses the canonical name.
    let calls = fake.calls();
    assert_eq!(calls.len(), 1);
    assert_eq!((calls[0].method.as_str(), calls[0].status), ("getMe", 200));
}

#[tokio::test]
async fn get_me_tells_privacy_mode_off() {
    let fake = FakeTelegram::builder().privacy_mode(false).start().await;
    let me = bot(&fake).get_me().await.unwrap();
    assert!(me.can_read_all_group_messages);
}

#[tokio::test]
async fn send_message_with_inline_keyboard_and_read_the_state() {
    let fake = FakeTelegram::start().await;
    let bot = bot(&fake);

    let sent = bot
        .send_message(ChatId(42), "Deploy to production?")
        .reply_markup(yes_no())
        .await
        .unwrap();
    assert_eq!(sent.chat.id, ChatId(42));
    assert!(sent.chat.is_private());
    assert_eq!(sent.text(), Some("Deploy to production?"));
    assert_eq!(sent.reply_markup(), Some(&yes_no()));
    assert_eq!(sent.from.as_ref().unwrap().id, UserId(fake::BOT_ID as u64));

    let stored = fake.message(42, sent.id.0).unwrap();
    assert_eq!(stored.text, "Deploy to production?");
    assert!(stored.from_bot && !stored.edited);
    assert_eq!(stored.thread_id, None);
    assert_eq!(stored.button_texts(), vec![vec!["Yes", "No"]]);
    assert_eq!(stored.callback_data("No").as_deref(), Some("ask:1:1"));
    assert_eq!(
        stored.reply_markup,
        Some(serde_json::to_value(yes_no()).unwrap())
    );

    // A forced reply to it: ids count up per chat; force_reply is kept in
    // the state but, like on Telegram, is not part of the Message.
    let prompt = bot
        .send_message(ChatId(42), "Why not?")
        .reply_markup(ForceReply::new().selective())
        .reply_parameters(ReplyParameters::new(sent.id))
        .await
        .unwrap();
    assert_eq!(prompt.id.0, sent.id.0 + 1);
    assert_eq!(prompt.reply_markup(), None);
    assert_eq!(prompt.reply_to_message().unwrap().id, sent.id);
    assert!(fake.message(42, prompt.id.0).unwrap().is_force_reply());
    assert_eq!(fake.messages_in(42).len(), 2);

    // Replying to a message that does not exist.
    let missing = bot
        .send_message(ChatId(42), "?")
        .reply_parameters(ReplyParameters::new(MessageId(999)))
        .await;
    assert_eq!(api_error(missing), ApiError::MessageToReplyNotFound);
}

#[tokio::test]
async fn get_updates_delivers_injected_message_and_callback() {
    let fake = FakeTelegram::start().await;
    let bot = bot(&fake);
    let team = fake::Chat::supergroup(-1_001_000_000_001, "Team");
    let alice = fake::User::new(7, "Alice").username("alice");
    fake.add_chat(&team);

    let question = bot
        .send_message(ChatId(team.id), "Ship it?")
        .reply_markup(yes_no())
        .await
        .unwrap();
    let reply_id = fake
        .inject_message(IncomingMessage::new(&team, &alice, "yes please").reply_to(question.id.0));
    assert_eq!(reply_id, question.id.0 + 1);
    let query_id = fake.press_button(&alice, team.id, question.id.0, "Yes");

    let updates = bot.get_updates().await.unwrap();
    assert_eq!(updates.len(), 2);
    let UpdateKind::Message(message) = &updates[0].kind else {
        panic!("expected a message, got {:?}", updates[0].kind);
    };
    assert_eq!(message.id, MessageId(reply_id));
    assert_eq!(message.chat.id, ChatId(team.id));
    assert!(message.chat.is_supergroup());
    assert_eq!(message.chat.title(), Some("Team"));
    let from = message.from.as_ref().unwrap();
    assert_eq!(from.id, UserId(7));
    assert_eq!(from.username.as_deref(), Some("alice"));
    assert!(!from.is_bot);
    assert_eq!(message.text(), Some("yes please"));
    let replied = message.reply_to_message().unwrap();
    assert_eq!(replied.id, question.id);
    assert_eq!(replied.text(), Some("Ship it?"));

    let UpdateKind::CallbackQuery(query) = &updates[1].kind else {
        panic!("expected a callback query, got {:?}", updates[1].kind);
    };
    assert_eq!(query.id, CallbackQueryId(query_id.clone()));
    assert_eq!(query.from.id, UserId(7));
    assert_eq!(query.data.as_deref(), Some("ask:1:0"));
    assert!(!query.chat_instance.is_empty());
    let pressed = query.regular_message().unwrap();
    assert_eq!(pressed.id, question.id);
    assert_eq!(pressed.chat.id, ChatId(team.id));
    assert_eq!(pressed.reply_markup(), Some(&yes_no()));

    bot.answer_callback_query(query.id.clone())
        .text("Noted")
        .await
        .unwrap();
    assert_eq!(
        fake.wait_for_callback_answer(&query_id).await,
        CallbackAnswer {
            text: Some("Noted".into()),
            ..CallbackAnswer::default()
        }
    );
}

#[tokio::test]
async fn offset_confirms_updates() {
    let fake = FakeTelegram::start().await;
    let bot = bot(&fake);
    let alice = fake::User::new(42, "Alice").last_name("Liddell");
    let dm = alice.private_chat();
    fake.inject_message(IncomingMessage::new(&dm, &alice, "/start"));
    fake.inject_message(IncomingMessage::new(&dm, &alice, "second"));

    let first = bot.get_updates().await.unwrap();
    assert_eq!(first.len(), 2);
    let UpdateKind::Message(start) = &first[0].kind else {
        panic!("expected a message");
    };
    assert_eq!(start.chat.first_name(), Some("Alice"));
    assert_eq!(start.chat.last_name(), Some("Liddell"));
    let entities = start.entities().unwrap();
    assert_eq!(entities[0].kind, MessageEntityKind::BotCommand);
    assert_eq!((entities[0].offset, entities[0].length), (0, 6));

    // Not confirmed yet: the same two again.
    assert_eq!(bot.get_updates().await.unwrap().len(), 2);
    let next = i32::try_from(first[1].id.0).unwrap() + 1;
    assert!(bot.get_updates().offset(next).await.unwrap().is_empty());
    assert!(fake.pending_updates().is_empty());

    fake.inject_message(IncomingMessage::new(&dm, &alice, "third"));
    fake.inject_message(IncomingMessage::new(&dm, &alice, "fourth"));
    let limited = bot.get_updates().offset(next).limit(1).await.unwrap();
    assert_eq!(limited.len(), 1);
    assert_eq!(limited[0].id.0, u32::try_from(next).unwrap());
    assert_eq!(fake.pending_updates().len(), 2);
}

#[tokio::test]
async fn long_poll_is_woken_by_an_inject() {
    let fake = FakeTelegram::start().await;
    let bot = bot(&fake);
    let alice = fake::User::new(42, "Alice");

    let poll = tokio::spawn({
        let bot = bot.clone();
        async move { bot.get_updates().timeout(10).await }
    });
    fake.wait_for("a waiting long poll", |state| {
        (state.active_long_polls() == 1).then_some(())
    })
    .await;
    let woken = Instant::now();
    fake.inject_message(IncomingMessage::new(&alice.private_chat(), &alice, "hi"));
    let updates = poll.await.unwrap().unwrap();
    assert_eq!(updates.len(), 1);
    assert!(woken.elapsed() < Duration::from_secs(5));

    // A second poller ends the first one, like on Telegram.
    let next = i32::try_from(updates[0].id.0).unwrap() + 1;
    let first = tokio::spawn({
        let bot = bot.clone();
        async move { bot.get_updates().offset(next).timeout(10).await }
    });
    fake.wait_for("a waiting long poll", |state| {
        (state.active_long_polls() == 1).then_some(())
    })
    .await;
    assert!(bot.get_updates().offset(next).await.unwrap().is_empty());
    assert_eq!(
        api_error(first.await.unwrap()),
        ApiError::TerminatedByOtherGetUpdates
    );

    // With nothing to deliver, a poll returns after its timeout.
    let waited = Instant::now();
    let empty = bot.get_updates().offset(next).timeout(1).await.unwrap();
    assert!(empty.is_empty());
    assert!(waited.elapsed() >= Duration::from_millis(900));
}

#[tokio::test]
async fn edits_change_the_message_and_a_repeat_is_not_modified() {
    let fake = FakeTelegram::start().await;
    let bot = bot(&fake);
    let sent = bot
        .send_message(ChatId(42), "Pick one")
        .reply_markup(yes_no())
        .await
        .unwrap();

    // No reply_markup in the edit: the keyboard goes, as on Telegram.
    let edited = bot
        .edit_message_text(ChatId(42), sent.id, "Picked: Yes")
        .await
        .unwrap();
    assert_eq!(edited.text(), Some("Picked: Yes"));
    assert!(edited.edit_date().is_some());
    assert_eq!(edited.reply_markup(), None);
    let stored = fake.message(42, sent.id.0).unwrap();
    assert_eq!(stored.text, "Picked: Yes");
    assert!(stored.edited);
    assert!(!stored.has_inline_keyboard());

    let again = bot
        .edit_message_text(ChatId(42), sent.id, "Picked: Yes")
        .await;
    assert_eq!(api_error(again), ApiError::MessageNotModified);

    let with_keyboard = bot
        .edit_message_reply_markup(ChatId(42), sent.id)
        .reply_markup(yes_no())
        .await
        .unwrap();
    assert_eq!(with_keyboard.reply_markup(), Some(&yes_no()));
    let same = bot
        .edit_message_reply_markup(ChatId(42), sent.id)
        .reply_markup(yes_no())
        .await;
    assert_eq!(api_error(same), ApiError::MessageNotModified);
    assert_eq!(fake.message(42, sent.id.0).unwrap().edit_count, 2);

    let missing = bot.edit_message_text(ChatId(42), MessageId(99), "x").await;
    assert_eq!(api_error(missing), ApiError::MessageToEditNotFound);
    let alice = fake::User::new(42, "Alice");
    let theirs = fake.inject_message(IncomingMessage::new(&alice.private_chat(), &alice, "mine"));
    let foreign = bot
        .edit_message_text(ChatId(42), MessageId(theirs), "x")
        .await;
    assert_eq!(api_error(foreign), ApiError::MessageCantBeEdited);
    let too_long = bot
        .edit_message_text(ChatId(42), sent.id, "x".repeat(4097))
        .await;
    assert_eq!(api_error(too_long), ApiError::EditedMessageIsTooLong);
}

#[tokio::test]
async fn callback_data_over_64_bytes_is_refused() {
    let fake = FakeTelegram::start().await;
    let bot = bot(&fake);
    let keyboard =
        |data: String| InlineKeyboardMarkup::new([[InlineKeyboardButton::callback("B", data)]]);

    let too_long = bot
        .send_message(ChatId(42), "hi")
        .reply_markup(keyboard("x".repeat(65)))
        .await;
    assert_eq!(api_error(too_long), ApiError::ButtonDataInvalid);
    // Bytes, not characters: 32 × "é" is 64 bytes, 33 is 66.
    bot.send_message(ChatId(42), "hi")
        .reply_markup(keyboard("é".repeat(32)))
        .await
        .unwrap();
    let multibyte = bot
        .send_message(ChatId(42), "hi")
        .reply_markup(keyboard("é".repeat(33)))
        .await;
    assert_eq!(api_error(multibyte), ApiError::ButtonDataInvalid);
    assert_eq!(fake.messages_in(42).len(), 1);
}

#[tokio::test]
async fn text_length_is_counted_in_utf16() {
    let fake = FakeTelegram::start().await;
    let bot = bot(&fake);

    bot.send_message(ChatId(42), "a".repeat(4096))
        .await
        .unwrap();
    let long = bot.send_message(ChatId(42), "a".repeat(4097)).await;
    assert_eq!(api_error(long), ApiError::MessageIsTooLong);
    // 😀 is two UTF-16 code units.
    bot.send_message(ChatId(42), "😀".repeat(2048))
        .await
        .unwrap();
    let emoji = bot.send_message(ChatId(42), "😀".repeat(2049)).await;
    assert_eq!(api_error(emoji), ApiError::MessageIsTooLong);
    let empty = bot.send_message(ChatId(42), "").await;
    assert_eq!(api_error(empty), ApiError::MessageTextIsEmpty);
    assert_eq!(fake.sent_messages().len(), 2);
}

#[tokio::test]
async fn blocked_and_unknown_chats() {
    let fake = FakeTelegram::start().await;
    let bot = bot(&fake);
    fake.mark_blocked(42);
    fake.mark_unknown(43);

    let blocked = bot.send_message(ChatId(42), "hi").await;
    assert_eq!(api_error(blocked), ApiError::BotBlocked);
    let unknown = bot.send_message(ChatId(43), "hi").await;
    assert_eq!(api_error(unknown), ApiError::ChatNotFound);
    let no_such_name = bot
        .send_message(Recipient::ChannelUsername("@nobody_here".into()), "hi")
        .await;
    assert_eq!(api_error(no_such_name), ApiError::ChatNotFound);

    fake.mark_reachable(42);
    bot.send_message(ChatId(42), "hi again").await.unwrap();
    let public = fake::Chat::supergroup(-1_001_000_000_002, "Public").username("public_team");
    fake.add_chat(&public);
    let by_name = bot
        .send_message(Recipient::ChannelUsername("@public_team".into()), "hi")
        .await
        .unwrap();
    assert_eq!(by_name.chat.id, ChatId(public.id));
    assert_eq!(
        fake.calls_to("sendMessage")
            .iter()
            .map(|call| call.status)
            .collect::<Vec<_>>(),
        [403, 400, 400, 200, 200]
    );
}

#[tokio::test]
async fn a_callback_query_is_answered_once() {
    let fake = FakeTelegram::start().await;
    let bot = bot(&fake);
    let alice = fake::User::new(42, "Alice");
    let sent = bot
        .send_message(ChatId(42), "Sure?")
        .reply_markup(yes_no())
        .await
        .unwrap();
    let query = fake.press_button(&alice, 42, sent.id.0, "No");
    assert_eq!(fake.callback_answer(&query), None);

    bot.answer_callback_query(CallbackQueryId(query.clone()))
        .text("Thanks")
        .show_alert(true)
        .await
        .unwrap();
    let twice = bot
        .answer_callback_query(CallbackQueryId(query.clone()))
        .await;
    assert_eq!(api_error(twice), ApiError::InvalidQueryId);
    let never_issued = bot
        .answer_callback_query(CallbackQueryId("12345".into()))
        .await;
    assert_eq!(api_error(never_issued), ApiError::InvalidQueryId);
    assert_eq!(
        fake.callback_answer(&query),
        Some(CallbackAnswer {
            text: Some("Thanks".into()),
            show_alert: true,
            ..CallbackAnswer::default()
        })
    );
}

#[tokio::test]
async fn flood_control_answers_429_retry_after() {
    let fake = FakeTelegram::builder()
        .rate_limits(RateLimits {
            per_chat_per_sec: Some(1),
            ..RateLimits::OFF
        })
        .start()
        .await;
    let bot = bot(&fake);

    bot.send_message(ChatId(42), "one").await.unwrap();
    match bot.send_message(ChatId(42), "two").await {
        Err(RequestError::RetryAfter(after)) => assert_eq!(after.seconds(), 1),
        other => panic!("expected RetryAfter, got {other:?}"),
    }
    bot.send_message(ChatId(43), "elsewhere").await.unwrap();

    assert_eq!(fake.rate_limited_count(), 1);
    assert_eq!(fake.sent_messages().len(), 2);
    let refused = &fake.calls_to("sendMessage")[1];
    assert_eq!(refused.status, 429);
    assert_eq!(
        refused.description(),
        Some("Too Many Requests: retry after 1")
    );
    assert_eq!(refused.response["parameters"], json!({"retry_after": 1}));
}

#[tokio::test]
async fn teloxide_throttle_stays_within_telegram_limits() {
    let fake = FakeTelegram::builder()
        .rate_limits(RateLimits::TELEGRAM)
        .start()
        .await;
    let bot = bot(&fake).throttle(Limits::default());

    let burst: Vec<_> = (0..3)
        .map(|i| {
            let bot = bot.clone();
            tokio::spawn(async move { bot.send_message(ChatId(42), format!("burst {i}")).await })
        })
        .collect();
    for send in burst {
        send.await.unwrap().unwrap();
    }
    assert_eq!(fake.rate_limited_count(), 0);
    let mut texts: Vec<String> = fake.sent_messages().into_iter().map(|m| m.text).collect();
    texts.sort();
    assert_eq!(texts, ["burst 0", "burst 1", "burst 2"]);
}

/// What a webhook receiver saw: the secret header and the body of each POST.
type Seen = Arc<std::sync::Mutex<Vec<(Option<String>, Value)>>>;

/// A webhook receiver: records each request; answers 500 to the first
/// `failures` requests.
#[derive(Clone)]
struct Receiver {
    seen: Seen,
    failures: Arc<AtomicUsize>,
}

async fn receive(
    State(receiver): State<Receiver>,
    headers: HeaderMap,
    axum::Json(body): axum::Json<Value>,
) -> StatusCode {
    let secret = headers
        .get("x-telegram-bot-api-secret-token")
        .and_then(|value| value.to_str().ok())
        .map(str::to_owned);
    receiver.seen.lock().unwrap().push((secret, body));
    let failing = receiver
        .failures
        .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1))
        .is_ok();
    if failing {
        StatusCode::INTERNAL_SERVER_ERROR
    } else {
        StatusCode::OK
    }
}

#[tokio::test]
async fn webhook_delivers_with_secret_and_retries_until_2xx() {
    let fake = FakeTelegram::start().await;
    let bot = bot(&fake);
    let receiver = Receiver {
        seen: Arc::default(),
        failures: Arc::new(AtomicUsize::new(1)),
    };
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let hook = format!("http://{}/hook", listener.local_addr().unwrap());
    let app = axum::Router::new()
        .route("/hook", axum::routing::post(receive))
        .with_state(receiver.clone());
    tokio::spawn(async move { axum::serve(listener, app).await });

    // teloxide sends setWebhook as multipart/form-data.
    bot.set_webhook(hook.parse().unwrap())
        .secret_token("s3cr3t-Token_1")
        .await
        .unwrap();
    let config = fake.webhook().unwrap();
    assert_eq!(config.url, hook);
    assert_eq!(config.secret_token.as_deref(), Some("s3cr3t-Token_1"));

    let alice = fake::User::new(42, "Alice");
    let sent = fake.inject_message(IncomingMessage::new(
        &alice.private_chat(),
        &alice,
        "via hook",
    ));
    fake.wait_for_updates_consumed().await;

    let deliveries = fake.webhook_deliveries();
    assert_eq!(
        deliveries.iter().map(|d| d.status).collect::<Vec<_>>(),
        [Some(500), Some(200)]
    );
    assert_eq!(deliveries[0].update_id, deliveries[1].update_id);
    let seen = receiver.seen.lock().unwrap().clone();
    assert_eq!(seen.len(), 2);
    let (secret, body) = &seen[1];
    assert_eq!(secret.as_deref(), Some("s3cr3t-Token_1"));
    // Parsed from text, as teloxide's own webhook listener does.
    let update: teloxide::types::Update = serde_json::from_str(&body.to_string()).unwrap();
    let UpdateKind::Message(message) = update.kind else {
        panic!("expected a message, got {:?} from {body}", update.kind);
    };
    assert_eq!(
        (message.id, message.text()),
        (MessageId(sent), Some("via hook"))
    );

    let info = bot.get_webhook_info().await.unwrap();
    assert_eq!(info.url.unwrap().as_str(), hook);
    assert_eq!(info.pending_update_count, 0);
    assert_eq!(
        info.last_error_message.as_deref(),
        Some("Wrong response from the webhook: 500 Internal Server Error")
    );

    // Telegram's description is longer than the one teloxide matches for
    // ApiError::CantGetUpdates, so teloxide reports it as Unknown.
    match api_error(bot.get_updates().await) {
        ApiError::Unknown(description) => assert!(
            description
                .starts_with("Conflict: can't use getUpdates method while webhook is active"),
            "{description}"
        ),
        other => panic!("expected the webhook conflict, got {other:?}"),
    }
    assert_eq!(fake.calls_to("getUpdates")[0].status, 409);

    bot.delete_webhook().await.unwrap();
    assert!(fake.webhook().is_none());
    fake.inject_message(IncomingMessage::new(
        &alice.private_chat(),
        &alice,
        "polled",
    ));
    let updates = bot.get_updates().await.unwrap();
    assert_eq!(updates.len(), 1);
}

#[tokio::test]
async fn forum_topics() {
    let fake = FakeTelegram::start().await;
    let bot = bot(&fake);
    let forum = fake::Chat::supergroup(-1_001_234_567_890, "Ops").forum();
    let topic = fake.create_forum_topic(&forum, "Deploys");
    let alice = fake::User::new(7, "Alice");

    let sent = bot
        .send_message(ChatId(forum.id), "In the topic")
        .message_thread_id(ThreadId(MessageId(topic)))
        .await
        .unwrap();
    assert_eq!(sent.thread_id, Some(ThreadId(MessageId(topic))));
    assert!(sent.is_topic_message);
    let nowhere = bot
        .send_message(ChatId(forum.id), "?")
        .message_thread_id(ThreadId(MessageId(999)))
        .await;
    assert_eq!(
        api_error(nowhere),
        ApiError::Unknown("Bad Request: message thread not found".into())
    );

    // Replying to the bot's topic message lands in the topic; a plain topic
    // message replies (on the wire) to the topic's creation message.
    let answer =
        fake.inject_message(IncomingMessage::new(&forum, &alice, "ok").reply_to(sent.id.0));
    let plain = fake.inject_message(IncomingMessage::new(&forum, &alice, "hello").in_topic(topic));
    let updates = bot.get_updates().await.unwrap();
    let messages: Vec<_> = updates
        .iter()
        .map(|update| match &update.kind {
            UpdateKind::Message(message) => message.clone(),
            other => panic!("expected a message, got {other:?}"),
        })
        .collect();
    assert_eq!(messages[0].id, MessageId(answer));
    assert_eq!(messages[0].thread_id, Some(ThreadId(MessageId(topic))));
    assert_eq!(messages[0].reply_to_message().unwrap().id, sent.id);
    assert_eq!(messages[1].id, MessageId(plain));
    assert!(messages[1].is_topic_message);
    assert_eq!(messages[1].reply_to_message().unwrap().id, MessageId(topic));
    assert_eq!(
        fake.message(forum.id, plain).unwrap().thread_id,
        Some(topic)
    );
}

#[tokio::test]
async fn method_names_match_in_any_case() {
    let fake = FakeTelegram::start().await;
    let http = reqwest::Client::new();
    let url = |method: &str| format!("{}bot{TOKEN}/{method}", fake.api_url());

    let sent: Value = http
        .post(url("sEnDmEsSaGe"))
        .json(&json!({"chat_id": 42, "text": "odd case"}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(sent["ok"], json!(true));
    assert_eq!(sent["result"]["text"], json!("odd case"));
    // Query-string parameters work too (GET, as the Bot API allows).
    let me = http.get(url("GETME")).send().await.unwrap();
    assert_eq!(me.status(), 200);

    // Methods the fake does not implement answer 404 "Not Found", which
    // teloxide reads as InvalidToken.
    let unknown = bot(&fake).delete_message(ChatId(42), MessageId(1)).await;
    assert_eq!(api_error(unknown), ApiError::InvalidToken);

    let methods: Vec<_> = fake
        .calls()
        .into_iter()
        .map(|call| (call.method, call.status))
        .collect();
    assert_eq!(
        methods,
        [
            ("sendMessage".to_owned(), 200),
            ("getMe".to_owned(), 200),
            ("deleteMessage".to_owned(), 404),
        ]
    );
}

#[tokio::test]
async fn wrong_token_is_unauthorized() {
    let fake = FakeTelegram::start().await;
    let stranger = Bot::new("654321:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsawq")
        .set_api_url(fake.api_url().parse().unwrap());

    assert_eq!(api_error(stranger.get_me().await), ApiError::InvalidToken);
    let calls = fake.calls();
    assert_eq!(calls[0].status, 401);
    assert_eq!(calls[0].description(), Some("Unauthorized"));
}

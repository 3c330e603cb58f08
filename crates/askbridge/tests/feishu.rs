//! The Feishu channel end to end: the real daemon, its real Open API
//! client and long connection, and a faithful fake Feishu on 127.0.0.1
//! (`askbridge_testkit::feishu`). An agent asks over HTTP; people press
//! card buttons, fill in card forms and type replies in the fake; the
//! agent gets the outcome.
//!
//! Nothing sleeps: the fake's `wait_for*` helpers are woken by each change,
//! and the agent's side waits with `?wait=` long-polls.

#![allow(clippy::unwrap_used)]

mod daemon;

use askbridge_testkit::feishu::{FakeFeishu, Forgery, RateLimits, StoredMessage};
use daemon::{Builder, Daemon, create, outcome, status};
use serde_json::{Value, json};

const CHAT: &str = "oc_releases0000000000000000000001";
const ALICE: &str = "ou_alice000000000000000000000000001";
const BOB: &str = "ou_bob00000000000000000000000000002";

async fn fake_with(fake: FakeFeishu) -> FakeFeishu {
    fake.add_chat(CHAT, "releases");
    fake.add_user(ALICE, "Alice");
    fake.add_user(BOB, "Bob");
    fake
}

async fn fake() -> FakeFeishu {
    fake_with(FakeFeishu::start().await).await
}

/// A daemon whose Feishu channel talks to `fake` over the long connection.
fn daemon_for(fake: &FakeFeishu) -> Builder {
    Daemon::builder()
        .env("FEISHU_APP_ID", fake.app_id())
        .env("FEISHU_APP_SECRET", fake.app_secret())
        .env("FEISHU_VERIFICATION_TOKEN", fake.verification_token())
        .env("ASKBRIDGE_FEISHU_API_URL", fake.api_url())
        .env("ASKBRIDGE_FEISHU_LOCALE", "en")
}

/// A daemon connected to the fake's long connection.
async fn started(builder: Builder, fake: &FakeFeishu) -> Daemon {
    let daemon = builder.start();
    fake.wait_for_open_connections(1).await;
    daemon
}

/// The deploy question, for Alice only.
fn deploy_ask() -> Value {
    json!({
        "to": format!("feishu:{CHAT}@{ALICE}"),
        "questions": [{
            "id": "env", "header": "Deploy", "question": "Where should I deploy?",
            "options": ["Staging (Recommended)", "Production", "Canary"]
        }]
    })
}

/// Two questions: a text prompt on Feishu.
fn release_ask() -> Value {
    json!({
        "to": format!("feishu:{CHAT}"),
        "title": "Release 2.4",
        "questions": [
            {"id": "env", "header": "Deploy", "question": "Where?", "options": ["Staging", "Production"]},
            {"id": "notify", "header": "Notify", "question": "Who should be told?",
             "options": ["Team", "On-call", "Nobody"], "multiSelect": true}
        ]
    })
}

/// The n-th message the bot posted (1-based), once it has.
async fn posted(fake: &FakeFeishu, n: usize) -> StoredMessage {
    fake.wait_for_bot_messages(n).await.swap_remove(n - 1)
}

/// Every element of a card with `tag`, wherever it sits.
fn elements<'a>(value: &'a Value, tag: &str, found: &mut Vec<&'a Value>) {
    match value {
        Value::Object(object) => {
            if object.get("tag") == Some(&json!(tag)) {
                found.push(value);
            }
            object
                .values()
                .for_each(|child| elements(child, tag, found));
        }
        Value::Array(list) => list.iter().for_each(|child| elements(child, tag, found)),
        _ => {}
    }
}

/// The texts of a card's buttons, in order.
fn buttons(message: &StoredMessage) -> Vec<String> {
    let mut found = Vec::new();
    elements(message.card().unwrap(), "button", &mut found);
    found
        .iter()
        .map(|button| button["text"]["content"].as_str().unwrap().to_owned())
        .collect()
}

/// The `name` of the button showing `text`.
fn button(message: &StoredMessage, text: &str) -> String {
    let mut found = Vec::new();
    elements(message.card().unwrap(), "button", &mut found);
    found
        .iter()
        .find(|button| button["text"]["content"] == text)
        .and_then(|button| button["name"].as_str())
        .unwrap_or_else(|| panic!("no button {text:?} in {:?}", buttons(message)))
        .to_owned()
}

/// The card's text, once it was updated to show how the ask ended (no
/// buttons left).
async fn closed(fake: &FakeFeishu, message: &StoredMessage) -> String {
    let id = message.message_id.clone();
    fake.wait_for("the card to be closed", |state| {
        let message = state.message(&id)?;
        let card = message.card()?;
        let mut found = Vec::new();
        elements(card, "button", &mut found);
        (message.edit_count() > 0 && found.is_empty()).then(|| card.to_string())
    })
    .await
}

#[tokio::test]
async fn feishu_button_press_from_the_addressed_user_answers_the_agent() {
    let fake = fake().await;
    let daemon = started(daemon_for(&fake), &fake).await;
    let id = create(&daemon, &deploy_ask()).await;

    let question = posted(&fake, 1).await;
    assert_eq!(question.chat_id, CHAT);
    assert_eq!(question.msg_type, "interactive");
    assert_eq!(
        buttons(&question),
        ["Staging ⭐", "Production", "Canary", "Send", "Skip"]
    );

    // Bob may not answer: told so in a toast, nothing changes.
    let refused = fake
        .press(&question.message_id, BOB, &button(&question, "Production"))
        .await;
    assert_eq!(refused.toast.as_ref().unwrap()["type"], "error");
    assert_eq!(
        refused.toast.as_ref().unwrap()["content"],
        "This question is not for you."
    );
    assert_eq!(status(&daemon, &id).await["status"], "pending");
    assert_eq!(fake.message(&question.message_id).unwrap().edit_count(), 0);

    let taken = fake
        .press(
            &question.message_id,
            ALICE,
            &button(&question, "Production"),
        )
        .await;
    assert!(taken.failure.is_none(), "{:?}", taken.failure);
    let done = outcome(&daemon, &id).await;
    assert_eq!(done["status"], "answered");
    assert_eq!(done["answers"], json!({"env": ["Production"]}));
    assert_eq!(done["details"][0]["via"], "button");
    assert_eq!(done["answeredBy"]["userId"], ALICE);
    assert_eq!(done["answeredBy"]["name"], "Alice");
    let card = closed(&fake, &question).await;
    assert!(card.contains("✅ Production — answered by Alice"), "{card}");
}

#[tokio::test]
async fn feishu_own_words_come_from_the_cards_form() {
    let fake = fake().await;
    let daemon = started(daemon_for(&fake), &fake).await;
    let id = create(&daemon, &deploy_ask()).await;
    let question = posted(&fake, 1).await;
    let send = button(&question, "Send");
    let answer = fake
        .submit_form(
            &question.message_id,
            ALICE,
            &send,
            json!({"answer": "the blue cluster"}),
        )
        .await;
    assert!(answer.failure.is_none(), "{:?}", answer.failure);
    let done = outcome(&daemon, &id).await;
    assert_eq!(done["answers"], json!({"env": ["the blue cluster"]}));
    closed(&fake, &question).await;
}

/// Two messages of one person pushed back to back are applied in the
/// order sent, every time: "2" answers, and the "3" after it finds nothing
/// open.
#[tokio::test]
async fn feishu_a_persons_messages_pushed_back_to_back_apply_in_order() {
    let fake = fake().await;
    let daemon = started(daemon_for(&fake), &fake).await;
    for round in 1..=5 {
        let id = create(&daemon, &deploy_ask()).await;
        let question = posted(&fake, round).await;
        let pushes = ["@bot 2", "@bot 3"].map(|text| {
            fake.send_text(CHAT, ALICE, text, None)
                .push
                .expect("a mention is pushed")
        });
        let done = outcome(&daemon, &id).await;
        assert_eq!(
            done["answers"],
            json!({"env": ["Production"]}),
            "round {round}: {done}"
        );
        closed(&fake, &question).await;
        for push in pushes {
            fake.wait_for_answer(push).await;
        }
    }
}

#[tokio::test]
async fn feishu_typed_replies_resolve_numbers_labels_and_mentions() {
    let fake = fake().await;
    let daemon = started(daemon_for(&fake), &fake).await;

    let first = create(&daemon, &deploy_ask()).await;
    let question = posted(&fake, 1).await;
    fake.send_text(CHAT, ALICE, "@bot 2", Some(&question.message_id));
    let done = outcome(&daemon, &first).await;
    assert_eq!(done["answers"], json!({"env": ["Production"]}));
    assert_eq!(done["details"][0]["via"], "text");

    // Not a reply: the newest ask Alice may answer; Bob's chatter is left
    // alone.
    let second = create(&daemon, &deploy_ask()).await;
    posted(&fake, 2).await;
    fake.send_text(CHAT, BOB, "@bot lunch?", None);
    fake.send_text(CHAT, ALICE, "@bot staging", None);
    let done = outcome(&daemon, &second).await;
    assert_eq!(done["answers"], json!({"env": ["Staging (Recommended)"]}));
}

#[tokio::test]
async fn feishu_multi_question_reply_keeps_partial_answers() {
    let fake = fake().await;
    let daemon = started(daemon_for(&fake), &fake).await;
    let id = create(&daemon, &release_ask()).await;
    let prompt = posted(&fake, 1).await;
    assert!(buttons(&prompt).is_empty(), "a text prompt has no buttons");
    assert!(
        prompt.content().contains("Q2 Notify"),
        "{}",
        prompt.content()
    );

    fake.send_text(CHAT, ALICE, "@bot Q1: 2", Some(&prompt.message_id));
    let reask = posted(&fake, 2).await;
    assert!(reask.parent_id.is_some(), "a reply to the person");
    assert!(reask.content().contains("Notify"), "{}", reask.content());
    assert_eq!(status(&daemon, &id).await["status"], "pending");

    fake.send_text(CHAT, ALICE, "@bot 1, 2", Some(&prompt.message_id));
    let done = outcome(&daemon, &id).await;
    assert_eq!(
        done["answers"],
        json!({"env": ["Production"], "notify": ["Team", "On-call"]})
    );
}

#[tokio::test]
async fn feishu_skip_closes_the_card() {
    let fake = fake().await;
    let daemon = started(daemon_for(&fake), &fake).await;
    let id = create(&daemon, &deploy_ask()).await;
    let question = posted(&fake, 1).await;
    let skip = button(&question, "Skip");
    fake.press(&question.message_id, ALICE, &skip).await;
    let done = outcome(&daemon, &id).await;
    assert_eq!(done["reason"], "skipped");
    let card = closed(&fake, &question).await;
    assert!(card.contains("⏭ Skipped"), "{card}");
}

#[tokio::test]
async fn feishu_private_chat_target_opens_it_and_takes_the_answer_there() {
    let fake = fake().await;
    let daemon = started(daemon_for(&fake), &fake).await;
    let id = create(
        &daemon,
        &json!({
            "to": format!("feishu:user/{ALICE}"),
            "questions": [{"question": "Ship it?", "type": "confirm"}]
        }),
    )
    .await;
    let question = posted(&fake, 1).await;
    assert_eq!(question.chat_type, "p2p");
    assert_eq!(question.chat_id, fake.p2p_chat(ALICE));
    fake.send_text(&question.chat_id, ALICE, "yes", None);
    let done = outcome(&daemon, &id).await;
    assert_eq!(done["answers"].as_object().unwrap().len(), 1);
    assert_eq!(done["answeredBy"]["userId"], ALICE);
}

#[tokio::test]
async fn feishu_rich_mode_multi_select_menu_and_steps_in_place() {
    let fake = fake().await;
    let daemon = started(
        daemon_for(&fake).env("ASKBRIDGE_FEISHU_RENDER", "rich"),
        &fake,
    )
    .await;
    let id = create(&daemon, &release_ask()).await;
    let card = posted(&fake, 1).await;
    fake.press(&card.message_id, ALICE, &button(&card, "Production"))
        .await;
    let step = fake.wait_for_edits(&card.message_id, 1).await;
    let done_button = button(&step, "Done");
    let answer = fake
        .submit_form(
            &card.message_id,
            ALICE,
            &done_button,
            json!({"choice": ["0", "2"]}),
        )
        .await;
    assert!(answer.failure.is_none(), "{:?}", answer.failure);
    let done = outcome(&daemon, &id).await;
    assert_eq!(
        done["answers"],
        json!({"env": ["Production"], "notify": ["Team", "Nobody"]})
    );
    assert_eq!(fake.bot_messages().len(), 1, "one card, updated in place");
}

#[tokio::test]
async fn feishu_a_chat_without_the_bot_ends_the_ask_as_delivery_failed() {
    let fake = fake().await;
    fake.remove_bot_from(CHAT);
    let daemon = started(daemon_for(&fake), &fake).await;
    let id = create(&daemon, &deploy_ask()).await;
    let done = outcome(&daemon, &id).await;
    assert_eq!(done["reason"], "delivery_failed");
    assert!(
        done["failure"]
            .as_str()
            .unwrap_or_default()
            .contains("230002"),
        "{done}"
    );
}

/// Sends `count` asks to the chat at once; every one is posted once and
/// stays pending.
async fn burst(fake: &FakeFeishu, count: usize) {
    let daemon = started(daemon_for(fake), fake).await;
    let mut ids = Vec::new();
    for _ in 0..count {
        ids.push(create(&daemon, &deploy_ask()).await);
    }
    fake.wait_for_bot_messages(count).await;
    for id in &ids {
        assert_eq!(status(&daemon, id).await["status"], "pending");
    }
    assert_eq!(fake.bot_messages().len(), count, "every ask posted once");
}

#[tokio::test]
async fn feishu_rate_limits_are_kept_and_a_stricter_feishu_loses_nothing() {
    // Feishu's documented limits: the client keeps them, nothing refused.
    let fake = fake_with(
        FakeFeishu::builder()
            .rate_limits(RateLimits::feishu())
            .start()
            .await,
    )
    .await;
    burst(&fake, 8).await;
    assert_eq!(fake.rate_limited_count(), 0, "no request over the limits");

    // Stricter than documented: refused sends wait and go again.
    let fake = fake_with(
        FakeFeishu::builder()
            .rate_limits(RateLimits::off().chat_per_second(3))
            .start()
            .await,
    )
    .await;
    burst(&fake, 8).await;
    assert!(fake.rate_limited_count() > 0, "the limit was hit");
}

#[tokio::test]
async fn feishu_long_connection_drop_reconnects_and_a_redelivered_event_is_handled_once() {
    let fake = fake().await;
    let daemon = started(daemon_for(&fake), &fake).await;
    fake.drop_connections();
    fake.wait_for_connections(2).await;
    fake.wait_for_open_connections(1).await;

    let id = create(&daemon, &release_ask()).await;
    let prompt = posted(&fake, 1).await;
    let sent = fake.send_text(CHAT, ALICE, "@bot Q1: 2", Some(&prompt.message_id));
    posted(&fake, 2).await;
    fake.redeliver(sent.push.unwrap());
    fake.wait_for_answer(sent.push.unwrap()).await;
    fake.send_text(CHAT, ALICE, "@bot Q2: 1", Some(&prompt.message_id));
    let done = outcome(&daemon, &id).await;
    assert_eq!(
        done["answers"],
        json!({"env": ["Production"], "notify": ["Team"]})
    );
    let replies = fake
        .bot_messages()
        .into_iter()
        .filter(|m| m.parent_id.is_some())
        .count();
    assert_eq!(replies, 1, "the redelivered message was not answered twice");
}

#[tokio::test]
async fn feishu_webhook_mode_decrypts_checks_signatures_and_refuses_forgeries() {
    let fake = fake().await;
    let builder = daemon_for(&fake)
        .env("ASKBRIDGE_FEISHU_MODE", "webhook")
        .env("FEISHU_ENCRYPT_KEY", fake.encrypt_key().unwrap());
    let daemon = builder.start();
    fake.set_callback_url(Some(&daemon.url("/feishu/events")));
    let check = fake.url_verification().await;
    assert!(check.verified, "{check:?}");

    for forgery in [
        Forgery::BadSignature,
        Forgery::OldTimestamp,
        Forgery::Unencrypted,
        Forgery::WrongVerificationToken,
    ] {
        let delivery = fake.send_forged(forgery).await;
        assert!(
            (400..500).contains(&delivery.status),
            "{forgery:?}: {delivery:?}"
        );
    }

    let id = create(&daemon, &deploy_ask()).await;
    let question = posted(&fake, 1).await;
    let taken = fake
        .press(&question.message_id, ALICE, &button(&question, "Canary"))
        .await;
    assert!(taken.failure.is_none(), "{:?}", taken.failure);
    let done = outcome(&daemon, &id).await;
    assert_eq!(done["answers"], json!({"env": ["Canary"]}));
}

#[tokio::test]
async fn feishu_button_still_works_after_kill_and_restart() {
    let fake = fake().await;
    let mut daemon = started(daemon_for(&fake), &fake).await;
    let id = create(&daemon, &deploy_ask()).await;
    let question = posted(&fake, 1).await;
    daemon.restart();
    fake.wait_for_connections(2).await;
    fake.wait_for_open_connections(1).await;
    fake.press(&question.message_id, ALICE, &button(&question, "Canary"))
        .await;
    let done = outcome(&daemon, &id).await;
    assert_eq!(done["answers"], json!({"env": ["Canary"]}));
    assert_eq!(fake.bot_messages().len(), 1, "not posted again");
}

#[tokio::test]
async fn feishu_an_expired_token_is_fetched_again_and_nothing_is_lost() {
    let fake = fake().await;
    let daemon = started(daemon_for(&fake), &fake).await;
    create(&daemon, &deploy_ask()).await;
    posted(&fake, 1).await;
    let fetched = fake.calls_to("/tenant_access_token/internal").len();
    fake.expire_tokens();
    let id = create(&daemon, &deploy_ask()).await;
    let second = posted(&fake, 2).await;
    assert!(
        fake.calls_to("/tenant_access_token/internal").len() > fetched,
        "a new token was fetched"
    );
    fake.press(&second.message_id, ALICE, &button(&second, "Canary"))
        .await;
    assert_eq!(
        outcome(&daemon, &id).await["answers"],
        json!({"env": ["Canary"]})
    );
}

/// `@bot /askbridge` in a group is answered with the exact targets for
/// this chat, for the sender alone and for anyone there, in a card only
/// the sender sees.
#[tokio::test]
async fn feishu_askbridge_command_tells_the_sender_alone_the_targets_for_this_chat() {
    let fake = fake().await;
    let _daemon = started(daemon_for(&fake), &fake).await;
    fake.send_text(CHAT, ALICE, "@bot /askbridge", None);
    let answer = fake.wait_for_ephemerals(ALICE, 1).await;
    assert_eq!(answer[0].chat_id, CHAT);
    let text = answer[0].card.to_string();
    assert!(
        text.contains(&format!(
            "To ask here, use feishu:{CHAT}@{ALICE} (only you may answer) or \
             feishu:{CHAT} (anyone here may answer)."
        )),
        "{text}"
    );
    assert!(fake.bot_messages().is_empty(), "{:?}", fake.bot_messages());
}

/// An ask of an agent session's thread, for Alice.
fn session_ask(question: &str) -> Value {
    json!({
        "to": format!("feishu:{CHAT}@{ALICE}"),
        "thread": {"key": "claude-code:s1", "title": "Claude Code · api-server · session s1"},
        "questions": [{"question": question, "options": ["Staging", "Production", "Canary"]}]
    })
}

#[tokio::test]
async fn feishu_asks_of_one_session_share_a_thread_and_a_reply_there_answers_the_newest() {
    let fake = fake().await;
    let daemon = started(daemon_for(&fake), &fake).await;
    let first = create(&daemon, &session_ask("Where first?")).await;
    let root = posted(&fake, 1).await;
    assert!(
        root.json().to_string().contains("session s1"),
        "{}",
        root.json()
    );
    assert_eq!(root.parent_id, None, "the thread's first message");
    let question = posted(&fake, 2).await;
    assert_eq!(question.root_id.as_deref(), Some(root.message_id.as_str()));
    assert!(question.thread_id.is_some(), "in Feishu's thread");

    let second = create(&daemon, &session_ask("Where next?")).await;
    let next = posted(&fake, 3).await;
    assert_eq!(next.root_id.as_deref(), Some(root.message_id.as_str()));
    assert_eq!(next.thread_id, question.thread_id, "the same thread");

    fake.send_text(CHAT, ALICE, "@bot canary", Some(&root.message_id));
    let done = outcome(&daemon, &second).await;
    assert_eq!(done["answers"], json!({"where_next": ["Canary"]}));
    fake.send_text(CHAT, ALICE, "@bot 1", Some(&root.message_id));
    let done = outcome(&daemon, &first).await;
    assert_eq!(done["answers"], json!({"where_first": ["Staging"]}));
    assert_eq!(fake.calls_to("/reply").len(), 2, "both asks in the thread");
}

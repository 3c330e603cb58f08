//! The Discord channel end to end: the real daemon, its real serenity
//! client (REST and gateway), and a faithful fake Discord on 127.0.0.1
//! (`askbridge_testkit::discord`). An agent asks over HTTP or MCP; people
//! press buttons, choose from menus, submit modals and type in the fake;
//! the agent gets the outcome.
//!
//! Nothing sleeps: the fake's `wait_for*` helpers are woken by each change,
//! and the agent's side waits with `?wait=` long-polls.

#![allow(clippy::unwrap_used)]

mod daemon;
mod mcp_client;

use askbridge_testkit::discord::{
    Channel, FakeDiscord, IncomingMessage, Member, NoticeKind, RateLimits, StoredMessage, User,
};
use daemon::{Builder, Daemon, create, outcome, status};
use serde_json::{Value, json};

const GUILD: u64 = 800_000_000_000_000_001;
const CHANNEL: u64 = 810_000_000_000_000_001;
const ALICE: u64 = 100_000_000_000_000_001;
const BOB: u64 = 100_000_000_000_000_002;
const RELEASE_ROLE: u64 = 820_000_000_000_000_001;

fn alice() -> User {
    User::new(ALICE, "alice").global_name("Alice")
}

fn bob() -> User {
    User::new(BOB, "bob").global_name("Bob")
}

/// A fake with one server channel, Alice (nicknamed "Alice Liddell",
/// with the release role) and Bob in it.
async fn fake_with(fake: FakeDiscord) -> FakeDiscord {
    fake.add_channel(&Channel::guild_text(CHANNEL, GUILD, "releases"));
    fake.add_user(&alice());
    fake.add_user(&bob());
    fake.set_member(
        GUILD,
        &alice(),
        Member::new().nick("Alice Liddell").roles([RELEASE_ROLE]),
    );
    fake.set_member(GUILD, &bob(), Member::new());
    fake
}

async fn fake() -> FakeDiscord {
    fake_with(FakeDiscord::start().await).await
}

/// A daemon whose Discord channel talks to `fake`.
fn daemon_for(fake: &FakeDiscord) -> Builder {
    Daemon::builder()
        .env("DISCORD_BOT_TOKEN", fake.token())
        .env("ASKBRIDGE_DISCORD_API_URL", fake.api_url())
}

/// A daemon connected to the fake's gateway.
async fn started(builder: Builder, fake: &FakeDiscord) -> Daemon {
    let daemon = builder.start();
    fake.wait_for_ready().await;
    daemon
}

/// The deploy question, for Alice only.
fn deploy_ask() -> Value {
    json!({
        "to": format!("discord:{CHANNEL}@{ALICE}"),
        "questions": [{
            "id": "env", "header": "Deploy", "question": "Where should I deploy?",
            "options": ["Staging (Recommended)", "Production", "Canary"]
        }]
    })
}

/// Two questions: a text prompt on Discord.
fn release_ask() -> Value {
    json!({
        "to": format!("discord:{CHANNEL}"),
        "title": "Release 2.4",
        "questions": [
            {"id": "env", "header": "Deploy", "question": "Where?", "options": ["Staging", "Production"]},
            {"id": "notify", "header": "Notify", "question": "Who should be told?",
             "options": ["Team", "On-call", "Nobody"], "multiSelect": true}
        ]
    })
}

/// The n-th message the bot posted (1-based), once it has.
async fn posted(fake: &FakeDiscord, n: usize) -> StoredMessage {
    fake.wait_for_bot_messages(n).await.swap_remove(n - 1)
}

/// The message once an edit has closed it (its components removed).
async fn closed(fake: &FakeDiscord, message: &StoredMessage) -> StoredMessage {
    let id = message.id;
    fake.wait_for("the question message to be closed", |state| {
        state
            .message(id)
            .filter(|m| m.edited_ms.is_some() && m.components.is_empty())
            .cloned()
    })
    .await
}

fn custom_id(message: &StoredMessage, label: &str) -> String {
    message
        .custom_id_of(label)
        .unwrap_or_else(|| panic!("no button {label:?} in {:?}", message.button_labels()))
}

/// The text of the ephemeral notices `user` was shown.
async fn notices(fake: &FakeDiscord, user: u64, count: usize) -> Vec<String> {
    fake.wait_for_notices(user, count)
        .await
        .into_iter()
        .map(|notice| {
            assert_eq!(notice.kind, NoticeKind::Ephemeral, "{notice:?}");
            notice.text
        })
        .collect()
}

#[tokio::test]
async fn discord_button_press_from_the_addressed_user_answers_the_agent() {
    let fake = fake().await;
    let daemon = started(daemon_for(&fake), &fake).await;
    let id = create(&daemon, &deploy_ask()).await;

    let question = posted(&fake, 1).await;
    assert_eq!(question.channel_id, CHANNEL);
    assert_eq!(
        question.button_labels(),
        [
            vec!["Staging ⭐", "Production", "Canary"],
            vec!["Other…", "Skip"]
        ]
    );
    let styles: Vec<u64> = question.buttons()[0].iter().map(|b| b.style).collect();
    assert_eq!(styles, [1, 2, 2], "the recommended option is Primary");
    for custom_id in question.custom_ids() {
        assert!(custom_id.len() <= 100, "{custom_id}");
        assert!(
            !custom_id.contains("Production"),
            "content leaked into {custom_id}"
        );
    }

    // Bob may not answer: told so privately, nothing changes. Every press
    // is acknowledged as it arrives (a deferred update), whatever comes
    // of it; a refusal follows up.
    let refused = fake.press_button(&bob(), question.id, &custom_id(&question, "Production"));
    let response = fake.wait_for_response(refused).await;
    assert_eq!(response.kind, 6, "{response:?}");
    assert_eq!(
        notices(&fake, BOB, 1).await,
        ["This question is not for you."]
    );
    assert_eq!(status(&daemon, &id).await["status"], "pending");
    assert!(fake.message(question.id).unwrap().edited_ms.is_none());

    // Alice presses twice at once: the first press handled wins, the other
    // is told, privately, and changes nothing.
    let production = fake.press_button(&alice(), question.id, &custom_id(&question, "Production"));
    let canary = fake.press_button(&alice(), question.id, &custom_id(&question, "Canary"));
    let done = outcome(&daemon, &id).await;
    assert_eq!(done["status"], "answered");
    assert_eq!(done["details"][0]["via"], "button");
    assert_eq!(done["answeredBy"]["userId"], ALICE.to_string());
    assert_eq!(done["answeredBy"]["name"], "Alice Liddell");
    let (won, lost, label) = match done["answers"]["env"][0].as_str() {
        Some("Production") => (production, canary, "Production"),
        Some("Canary") => (canary, production, "Canary"),
        other => panic!("answered {other:?}"),
    };
    assert_eq!(
        fake.wait_for_response(won).await.kind,
        6,
        "a deferred update"
    );
    assert_eq!(fake.wait_for_response(lost).await.kind, 6);
    assert_eq!(
        notices(&fake, ALICE, 1).await,
        ["This question was already answered."]
    );
    let edited = closed(&fake, &question).await;
    assert!(
        edited
            .content
            .ends_with(&format!("\n\n✅ {label} — answered by Alice Liddell")),
        "{}",
        edited.content
    );
    assert_eq!(
        outcome(&daemon, &id).await["answers"]["env"],
        json!([label])
    );
}

#[tokio::test]
async fn discord_ask_over_mcp_is_answered_with_a_button() {
    let fake = fake().await;
    let daemon = started(
        daemon_for(&fake).env("ASKBRIDGE_DEFAULT_TARGET", format!("discord:{CHANNEL}")),
        &fake,
    )
    .await;
    let mut client = mcp_client::Client::http("answer", &daemon.url("/mcp"));
    let id = mcp_client::ask_id(&client.until("progress").await);
    let question = posted(&fake, 1).await;
    assert_eq!(question.button_labels()[0], ["Staging ⭐", "Production"]);
    fake.press_button(&alice(), question.id, &custom_id(&question, "Production"));
    let result = client.until("result").await["result"].clone();
    mcp_client::assert_answered(&result, &id, "Production");
    assert_eq!(result["structuredContent"]["details"][0]["via"], "button");
    client.finish().await;
}

#[tokio::test]
async fn discord_other_opens_a_modal_whose_text_is_the_answer() {
    let fake = fake().await;
    let daemon = started(daemon_for(&fake), &fake).await;
    let id = create(&daemon, &deploy_ask()).await;
    let question = posted(&fake, 1).await;

    // Bob cannot open it.
    let refused = fake.press_button(&bob(), question.id, &custom_id(&question, "Other…"));
    assert!(fake.wait_for_response(refused).await.is_ephemeral());

    let other = fake.press_button(&alice(), question.id, &custom_id(&question, "Other…"));
    let modal = fake.wait_for_modal(other).await;
    assert_eq!(modal.title, "Deploy");
    assert!(modal.custom_id.len() <= 100, "{}", modal.custom_id);
    let field = modal.components[0]["components"][0]["custom_id"]
        .as_str()
        .unwrap()
        .to_owned();
    let submit = fake.submit_modal(&alice(), other, &[(&field, "the blue cluster")]);
    let done = outcome(&daemon, &id).await;
    assert_eq!(done["status"], "answered");
    assert_eq!(done["answers"], json!({"env": ["the blue cluster"]}));
    assert_eq!(done["details"][0]["via"], "modal");
    assert_eq!(done["details"][0]["other"], "the blue cluster");
    assert_eq!(fake.wait_for_response(submit).await.kind, 6);
    closed(&fake, &question).await;
}

#[tokio::test]
async fn discord_typed_replies_resolve_numbers_and_labels() {
    let fake = fake().await;
    let daemon = started(daemon_for(&fake), &fake).await;

    // "2", not a reply to anything: the newest ask Alice may answer.
    let first = create(&daemon, &deploy_ask()).await;
    posted(&fake, 1).await;
    fake.inject_message(IncomingMessage::new(CHANNEL, &alice(), "2"));
    let done = outcome(&daemon, &first).await;
    assert_eq!(done["answers"], json!({"env": ["Production"]}));
    assert_eq!(done["details"][0]["via"], "text");

    // Bob's chatter is left alone; Alice's reply to the question,
    // mentioning the bot, matches "Staging (Recommended)".
    let second = create(&daemon, &deploy_ask()).await;
    let question = posted(&fake, 2).await;
    fake.inject_message(IncomingMessage::new(CHANNEL, &bob(), "lunch?"));
    let bot = fake.bot_user().mention();
    fake.inject_message(
        IncomingMessage::new(CHANNEL, &alice(), format!("{bot} staging")).reply_to(question.id),
    );
    let done = outcome(&daemon, &second).await;
    assert_eq!(done["answers"], json!({"env": ["Staging (Recommended)"]}));
    closed(&fake, &question).await;
}

/// Two messages a person sends back to back on the gateway apply in the
/// order Discord sent them: "2" answers, "3" comes too late, and does not
/// answer the next round's ask either, however late it is handled (it
/// was sent before that ask was posted).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn discord_a_persons_messages_sent_back_to_back_apply_in_order() {
    let fake = fake().await;
    let daemon = started(daemon_for(&fake), &fake).await;
    for round in 1..=5 {
        let id = create(&daemon, &deploy_ask()).await;
        let question = posted(&fake, round).await;
        let sent: Vec<u64> = ["2", "3"]
            .into_iter()
            .map(|text| fake.inject_message(IncomingMessage::new(CHANNEL, &alice(), text)))
            .collect();
        let done = outcome(&daemon, &id).await;
        // What the channel held, to tell an order broken in the daemon
        // from a question posted late: (id, reply to, text) of each message.
        let held: Vec<(u64, Option<u64>, String)> = fake
            .messages_in(CHANNEL)
            .into_iter()
            .map(|message| (message.id, message.reference, message.content))
            .collect();
        assert_eq!(
            done["answers"],
            json!({"env": ["Production"]}),
            "round {round}: question {}, typed {sent:?}; {done}; channel: {held:#?}",
            question.id
        );
        closed(&fake, &question).await;
    }
}

#[tokio::test]
async fn discord_multi_question_text_reply_keeps_partial_answers_and_reasks_the_rest() {
    let fake = fake().await;
    let daemon = started(daemon_for(&fake), &fake).await;
    let id = create(&daemon, &release_ask()).await;
    let prompt = posted(&fake, 1).await;
    assert!(prompt.components.is_empty(), "a text prompt has no buttons");
    assert!(prompt.content.contains("Q2 Notify"), "{}", prompt.content);

    let partial = fake.inject_message(IncomingMessage::new(CHANNEL, &alice(), "Q1: 2"));
    let reask = posted(&fake, 2).await;
    assert_eq!(
        reask.reference,
        Some(partial),
        "the re-ask replies to the person"
    );
    assert!(reask.content.contains("Notify"), "{}", reask.content);
    assert!(!reask.content.contains("Q1"), "{}", reask.content);
    assert_eq!(status(&daemon, &id).await["status"], "pending");

    fake.inject_message(IncomingMessage::new(CHANNEL, &alice(), "1, 2").reply_to(reask.id));
    let done = outcome(&daemon, &id).await;
    assert_eq!(
        done["answers"],
        json!({"env": ["Production"], "notify": ["Team", "On-call"]})
    );
    let edited = closed(&fake, &prompt).await;
    assert!(edited.content.contains("✅"), "{}", edited.content);
}

#[tokio::test]
async fn discord_skip_closes_the_question() {
    let fake = fake().await;
    let daemon = started(daemon_for(&fake), &fake).await;
    let id = create(&daemon, &deploy_ask()).await;
    let question = posted(&fake, 1).await;
    fake.press_button(&alice(), question.id, &custom_id(&question, "Skip"));
    let done = outcome(&daemon, &id).await;
    assert_eq!(
        (&done["status"], &done["reason"]),
        (&json!("no_answer"), &json!("skipped"))
    );
    let edited = closed(&fake, &question).await;
    assert!(
        edited.content.ends_with("\n\n⏭ Skipped"),
        "{}",
        edited.content
    );
}

#[tokio::test]
async fn discord_dm_target_opens_the_dm_and_takes_the_answer_there() {
    let fake = fake().await;
    let daemon = started(daemon_for(&fake), &fake).await;
    let id = create(
        &daemon,
        &json!({
            "to": format!("discord:user/{ALICE}"),
            "questions": [{"question": "Ship it?", "type": "confirm"}]
        }),
    )
    .await;
    let question = posted(&fake, 1).await;
    assert_eq!(question.channel_id, fake.dm_channel(&alice()));
    assert_eq!(question.guild_id, None);
    assert_eq!(question.button_labels(), [vec!["Yes", "No"], vec!["Skip"]]);
    fake.inject_message(IncomingMessage::new(question.channel_id, &alice(), "yes"));
    let done = outcome(&daemon, &id).await;
    let answers: Vec<&Value> = done["answers"].as_object().unwrap().values().collect();
    assert_eq!(answers, [&json!(["yes"])]);
    assert_eq!(done["details"][0]["via"], "text");
    closed(&fake, &question).await;
}

#[tokio::test]
async fn discord_rich_mode_select_menus_and_steps_in_place() {
    let fake = fake().await;
    let daemon = started(
        daemon_for(&fake).env("ASKBRIDGE_DISCORD_RENDER", "rich"),
        &fake,
    )
    .await;
    let mut ask = release_ask();
    ask["questions"].as_array_mut().unwrap().push(
        json!({"id": "notes", "header": "Notes", "question": "Anything else?", "type": "text"}),
    );
    let id = create(&daemon, &ask).await;
    let step = posted(&fake, 1).await;
    assert!(step.content.contains("1/3"), "{}", step.content);
    fake.press_button(&alice(), step.id, &custom_id(&step, "Staging"));

    // Step 2, edited in place: a select menu for the multi-select question.
    let second = fake.wait_for_edits(step.id, 1).await;
    assert!(second.content.contains("2/3"), "{}", second.content);
    let menu = second
        .custom_ids()
        .into_iter()
        .find(|key| !second.select_options(key).is_empty())
        .expect("a select menu");
    let options: Vec<String> = second
        .select_options(&menu)
        .into_iter()
        .map(|(label, _)| label)
        .collect();
    assert_eq!(options, ["Team", "On-call", "Nobody"]);
    let values: Vec<String> = second
        .select_options(&menu)
        .into_iter()
        .filter(|(label, _)| label != "Nobody")
        .map(|(_, value)| value)
        .collect();
    let values: Vec<&str> = values.iter().map(String::as_str).collect();
    fake.choose(&alice(), step.id, &menu, &values);

    // Step 3: the text question through a modal.
    let third = fake.wait_for_edits(step.id, 2).await;
    assert!(third.content.contains("3/3"), "{}", third.content);
    let answer = fake.press_button(&alice(), step.id, &custom_id(&third, "Answer…"));
    let modal = fake.wait_for_modal(answer).await;
    let field = modal.components[0]["components"][0]["custom_id"]
        .as_str()
        .unwrap()
        .to_owned();
    fake.submit_modal(&alice(), answer, &[(&field, "ship on Friday")]);

    let done = outcome(&daemon, &id).await;
    assert_eq!(
        done["answers"],
        json!({"env": ["Staging"], "notify": ["Team", "On-call"], "notes": ["ship on Friday"]})
    );
    let via: Vec<&str> = done["details"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["via"].as_str().unwrap())
        .collect();
    assert_eq!(via, ["button", "select", "modal"]);
    closed(&fake, &step).await;
}

#[tokio::test]
async fn discord_allow_list_admits_roles_and_refuses_others() {
    let fake = fake().await;
    let daemon = started(
        daemon_for(&fake).env("ASKBRIDGE_DISCORD_ALLOWED_USERS", RELEASE_ROLE.to_string()),
        &fake,
    )
    .await;
    let mut ask = deploy_ask();
    ask["to"] = json!(format!("discord:{CHANNEL}"));
    let id = create(&daemon, &ask).await;
    let question = posted(&fake, 1).await;
    fake.inject_message(IncomingMessage::new(CHANNEL, &bob(), "2"));
    let refused = fake.press_button(&bob(), question.id, &custom_id(&question, "Canary"));
    assert_eq!(fake.wait_for_response(refused).await.kind, 6);
    assert_eq!(notices(&fake, BOB, 1).await.len(), 1);
    assert_eq!(status(&daemon, &id).await["status"], "pending");
    fake.press_button(&alice(), question.id, &custom_id(&question, "Canary"));
    assert_eq!(
        outcome(&daemon, &id).await["answers"],
        json!({"env": ["Canary"]})
    );
}

#[tokio::test]
async fn discord_missing_access_ends_the_ask_as_delivery_failed() {
    let fake = fake().await;
    fake.deny_access(CHANNEL);
    let daemon = started(daemon_for(&fake), &fake).await;
    let id = create(&daemon, &deploy_ask()).await;
    let done = outcome(&daemon, &id).await;
    assert_eq!(done["reason"], "delivery_failed");
    let ask = status(&daemon, &id).await;
    assert!(ask.to_string().contains("Missing Access"), "{ask}");
}

#[tokio::test]
async fn discord_rate_limits_delay_but_lose_nothing() {
    let fake = fake_with(
        FakeDiscord::builder()
            .rate_limits(RateLimits::DISCORD)
            .start()
            .await,
    )
    .await;
    let daemon = started(daemon_for(&fake), &fake).await;
    let mut ids = Vec::new();
    for n in 0..8 {
        let mut ask = deploy_ask();
        ask["questions"][0]["question"] = json!(format!("Deploy build {n}?"));
        ids.push(create(&daemon, &ask).await);
    }
    let messages = fake.wait_for_bot_messages(8).await;
    assert!(
        fake.rate_limited_count() > 0,
        "the burst met Discord's limits"
    );
    for n in 0..8 {
        let wanted = format!("Deploy build {n}?");
        assert!(
            messages.iter().any(|m| m.content.contains(&wanted)),
            "{wanted} was not posted"
        );
    }
    for id in &ids {
        assert_eq!(status(&daemon, id).await["status"], "pending");
    }
}

#[tokio::test]
async fn discord_gateway_drop_resumes_and_loses_no_press() {
    let fake = fake().await;
    let daemon = started(daemon_for(&fake), &fake).await;
    let id = create(&daemon, &deploy_ask()).await;
    let question = posted(&fake, 1).await;
    fake.drop_connection();
    // Pressed while the gateway is down: delivered on resume.
    fake.press_button(&alice(), question.id, &custom_id(&question, "Canary"));
    fake.wait_for_resumed(1).await;
    let done = outcome(&daemon, &id).await;
    assert_eq!(done["answers"], json!({"env": ["Canary"]}));
    assert_eq!(
        fake.gateway_stats().identifies,
        1,
        "resumed, not identified again"
    );
}

#[tokio::test]
async fn discord_button_still_works_after_kill_and_restart() {
    let fake = fake().await;
    let mut daemon = started(daemon_for(&fake), &fake).await;
    let id = create(&daemon, &deploy_ask()).await;
    let question = posted(&fake, 1).await;
    daemon.kill();
    daemon.restart();
    fake.wait_for_identifies(2).await;
    fake.wait_for_ready().await;
    fake.press_button(&alice(), question.id, &custom_id(&question, "Production"));
    let done = outcome(&daemon, &id).await;
    assert_eq!(done["answers"], json!({"env": ["Production"]}));
    // Killed between posting and recording, the daemon posts the ask
    // again after the restart; every copy closes.
    closed(&fake, &question).await;
    for copy in fake.bot_messages() {
        closed(&fake, &copy).await;
    }
}

#[tokio::test]
async fn discord_refused_message_content_intent_is_reported_and_buttons_still_work() {
    let fake = fake_with(
        FakeDiscord::builder()
            .disallowed_intents(1 << 15)
            .start()
            .await,
    )
    .await;
    let daemon = started(daemon_for(&fake), &fake).await;
    assert!(
        fake.gateway_stats()
            .closes
            .iter()
            .any(|(code, _)| *code == 4014),
        "the first IDENTIFY was refused"
    );
    let id = create(&daemon, &deploy_ask()).await;
    let question = posted(&fake, 1).await;
    fake.press_button(&alice(), question.id, &custom_id(&question, "Production"));
    assert_eq!(outcome(&daemon, &id).await["status"], "answered");
    let log = daemon.stderr();
    assert!(log.contains("Message Content"), "{log}");
}

#[tokio::test]
async fn discord_http_interactions_check_the_signature() {
    let fake = fake().await;
    let daemon = started(
        daemon_for(&fake).env("DISCORD_PUBLIC_KEY", fake.public_key_hex()),
        &fake,
    )
    .await;
    let endpoint = daemon.url("/discord/interactions");

    let ping = fake
        .deliver_http_interaction(&endpoint, &fake.ping_http())
        .await;
    assert_eq!((ping.status, ping.body), (200, Some(json!({"type": 1}))));

    let id = create(&daemon, &deploy_ask()).await;
    let question = posted(&fake, 1).await;
    let press = fake.press_button_http(&alice(), question.id, &custom_id(&question, "Canary"));

    // Unsigned, and signed by someone else: refused, nothing changes.
    let client = daemon::client();
    let unsigned = client
        .post(&endpoint)
        .header("content-type", "application/json")
        .body(press.body_bytes())
        .send()
        .await
        .unwrap();
    assert_eq!(unsigned.status(), 401);
    let signed = fake.sign(&press);
    let mut forged = press.body.clone();
    forged["data"]["custom_id"] = json!(custom_id(&question, "Production"));
    let forged = client
        .post(&endpoint)
        .header("x-signature-ed25519", &signed.signature)
        .header("x-signature-timestamp", &signed.timestamp)
        .header("content-type", "application/json")
        .body(serde_json::to_vec(&forged).unwrap())
        .send()
        .await
        .unwrap();
    assert_eq!(forged.status(), 401);
    assert_eq!(status(&daemon, &id).await["status"], "pending");

    // Signed as Discord signs: answered in the HTTP response.
    let delivered = fake.deliver_http_interaction(&endpoint, &press).await;
    assert_eq!(delivered.status, 200);
    assert_eq!(delivered.inline_response, Some(Ok(())));
    let done = outcome(&daemon, &id).await;
    assert_eq!(done["answers"], json!({"env": ["Canary"]}));
    closed(&fake, &question).await;
}

#[tokio::test]
async fn discord_timeout_edits_the_message_to_expired_in_the_channel_locale() {
    use std::time::Duration;

    use askbridge::bridge::{Bridge, BridgeOptions, Clock, NewAsk, Tuning};
    use askbridge::channels::discord::Discord;
    use askbridge::config::{DiscordConfig, Secret};
    use askbridge_core::lifecycle::State;
    use askbridge_core::model::Target;
    use askbridge_core::model::Timestamp;
    use askbridge_core::normalize::normalize_json;
    use askbridge_core::render::{Locale, Mode};

    let fake = fake().await;
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
    let config = DiscordConfig {
        token: Secret::new(fake.token()),
        api_url: Some(fake.api_url()),
        public_key: None,
        render: Mode::Buttons,
        locale: Locale::Th,
        allowed_users: Vec::new(),
    };
    let _discord = Discord::new(&bridge, &config).unwrap();
    let ask = normalize_json(&json!({
        "to": format!("discord:{CHANNEL}"),
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
    let question = posted(&fake, 1).await;
    assert_eq!(question.button_labels().last().unwrap(), &["อื่นๆ…", "ข้าม"]);

    clock.advance(Duration::from_secs(61));
    let edited = closed(&fake, &question).await;
    assert!(
        edited.content.ends_with("\n\n⌛ หมดเวลาแล้ว"),
        "{}",
        edited.content
    );
    assert_eq!(bridge.get(&view.id).await.unwrap().state, State::TimedOut);
}

/// askbridge registers its slash command when it starts; `/askbridge` used
/// in a channel is answered with the exact targets for it, in a message
/// only the person who used it sees.
#[tokio::test]
async fn discord_slash_command_tells_the_user_alone_the_targets_for_this_channel() {
    let fake = fake().await;
    let _daemon = started(daemon_for(&fake), &fake).await;
    let commands = fake.wait_for_commands(1).await;
    assert_eq!(commands.len(), 1, "{commands:?}");
    assert_eq!(commands[0]["name"], "askbridge");
    assert_eq!(
        commands[0]["description"],
        "Show how an agent can ask you here"
    );
    let used = fake.use_command(&alice(), CHANNEL, "askbridge");
    let response = fake.wait_for_response(used).await;
    assert_eq!(response.kind, 4);
    assert!(response.is_ephemeral(), "{response:?}");
    assert_eq!(
        response.data["content"],
        format!(
            "To ask here, use discord:{CHANNEL}@{ALICE} (only you may answer) or \
             discord:{CHANNEL} (anyone here may answer)."
        )
    );
    assert!(
        fake.messages_in(CHANNEL)
            .iter()
            .all(|m| m.ephemeral_to.is_some())
    );
}

/// `/askbridge` typed in a channel is answered with the exact targets for
/// it, for the sender alone and for anyone there.
#[tokio::test]
async fn discord_askbridge_command_tells_the_targets_for_this_channel() {
    let fake = fake().await;
    let _daemon = started(daemon_for(&fake), &fake).await;
    fake.inject_message(IncomingMessage::new(CHANNEL, &alice(), "/askbridge"));
    let answer = posted(&fake, 1).await;
    assert_eq!(
        answer.content,
        format!(
            "To ask here, use discord:{CHANNEL}@{ALICE} (only you may answer) or \
             discord:{CHANNEL} (anyone here may answer)."
        )
    );
}

/// An ask of an agent session's thread, for Alice.
fn session_ask(question: &str) -> Value {
    json!({
        "to": format!("discord:{CHANNEL}@{ALICE}"),
        "thread": {"key": "codex:s1", "title": "Codex · app · session s1"},
        "questions": [{"question": question, "options": ["Staging", "Production", "Canary"]}]
    })
}

#[tokio::test]
async fn discord_asks_of_one_session_reply_to_its_first_message_and_a_reply_there_answers() {
    let fake = fake().await;
    let daemon = started(daemon_for(&fake), &fake).await;
    let first = create(&daemon, &session_ask("Where first?")).await;
    let root = posted(&fake, 1).await;
    assert_eq!(root.content, "Codex · app · session s1");
    assert_eq!(root.reference, None);
    let question = posted(&fake, 2).await;
    assert_eq!(question.reference, Some(root.id));
    let second = create(&daemon, &session_ask("Where next?")).await;
    let next = posted(&fake, 3).await;
    assert_eq!(
        next.reference,
        Some(root.id),
        "under the same first message"
    );

    fake.inject_message(IncomingMessage::new(CHANNEL, &alice(), "canary").reply_to(root.id));
    let done = outcome(&daemon, &second).await;
    assert_eq!(done["answers"], json!({"where_next": ["Canary"]}));
    fake.inject_message(IncomingMessage::new(CHANNEL, &alice(), "1").reply_to(root.id));
    let done = outcome(&daemon, &first).await;
    assert_eq!(done["answers"], json!({"where_first": ["Staging"]}));
}

//! The Slack channel end to end: the real daemon, its real slack-morphism
//! client (Web API and Socket Mode), and a faithful fake Slack on 127.0.0.1
//! (`askbridge_testkit::slack`). An agent asks over HTTP or MCP; people
//! press buttons, tick checkboxes, submit modals and type in threads in
//! the fake; the agent gets the outcome.
//!
//! Nothing sleeps: the fake's `wait_for*` helpers are woken by each change,
//! and the agent's side waits with `?wait=` long-polls.

#![allow(clippy::unwrap_used)]

mod daemon;
mod mcp_client;

use askbridge_testkit::slack::{
    Channel, EphemeralSource, FakeSlack, IncomingMessage, RateLimits, StoredMessage, User,
};
use daemon::{Builder, Daemon, create, outcome, status};
use serde_json::{Value, json};

const CHANNEL: &str = "C0RELEASES";
const ALICE: &str = "U0ALICE";
const BOB: &str = "U0BOB";

fn alice() -> User {
    User::new(ALICE, "alice").display_name("Alice Liddell")
}

fn bob() -> User {
    User::new(BOB, "bob").display_name("Bob")
}

async fn fake_with(fake: FakeSlack) -> FakeSlack {
    fake.add_channel(&Channel::public(CHANNEL, "releases"));
    fake.add_user(&alice());
    fake.add_user(&bob());
    fake
}

async fn fake() -> FakeSlack {
    fake_with(FakeSlack::start().await).await
}

/// The signing secret of the HTTP-mode tests.
const SECRET: &str = "8f742231b10e8888abcd99yyyzzz85a5";

/// A fake that signs with [`SECRET`] and a daemon taking Slack over HTTP.
async fn http_mode() -> (FakeSlack, Daemon) {
    let fake = fake_with(FakeSlack::builder().signing_secret(SECRET).start().await).await;
    let daemon = daemon_for(&fake)
        .env("ASKBRIDGE_SLACK_MODE", "http")
        .env("SLACK_SIGNING_SECRET", SECRET)
        .start();
    (fake, daemon)
}

/// A daemon whose Slack channel talks to `fake` in Socket Mode.
fn daemon_for(fake: &FakeSlack) -> Builder {
    Daemon::builder()
        .env("SLACK_BOT_TOKEN", fake.bot_token())
        .env("SLACK_APP_TOKEN", fake.app_token())
        .env("ASKBRIDGE_SLACK_API_URL", fake.api_url())
}

/// A daemon connected to the fake's Socket Mode.
async fn started(builder: Builder, fake: &FakeSlack) -> Daemon {
    let daemon = builder.start();
    fake.wait_for_connections(1).await;
    daemon
}

/// The deploy question, for Alice only.
fn deploy_ask() -> Value {
    json!({
        "to": format!("slack:{CHANNEL}@{ALICE}"),
        "questions": [{
            "id": "env", "header": "Deploy", "question": "Where should I deploy?",
            "options": ["Staging (Recommended)", "Production", "Canary"]
        }]
    })
}

/// Two questions: a text prompt on Slack.
fn release_ask() -> Value {
    json!({
        "to": format!("slack:{CHANNEL}"),
        "title": "Release 2.4",
        "questions": [
            {"id": "env", "header": "Deploy", "question": "Where?", "options": ["Staging", "Production"]},
            {"id": "notify", "header": "Notify", "question": "Who should be told?",
             "options": ["Team", "On-call", "Nobody"], "multiSelect": true}
        ]
    })
}

/// The n-th message the bot posted (1-based), once it has.
async fn posted(fake: &FakeSlack, n: usize) -> StoredMessage {
    fake.wait_for_bot_messages(n).await.swap_remove(n - 1)
}

/// The message once `chat.update` has closed it (no interactive elements
/// left).
async fn closed(fake: &FakeSlack, message: &StoredMessage) -> StoredMessage {
    let (channel, ts) = (message.channel.clone(), message.ts.clone());
    fake.wait_for("the question message to be closed", |state| {
        state
            .message(&channel, &ts)
            .filter(|m| m.edit_count() > 0 && m.action_ids().is_empty())
            .cloned()
    })
    .await
}

/// The labels of the buttons in each actions block.
fn button_rows(message: &StoredMessage) -> Vec<Vec<String>> {
    message
        .blocks
        .as_array()
        .into_iter()
        .flatten()
        .filter(|block| block["type"] == "actions")
        .map(|block| {
            block["elements"]
                .as_array()
                .into_iter()
                .flatten()
                .filter(|element| element["type"] == "button")
                .map(|element| element["text"]["text"].as_str().unwrap_or("?").to_owned())
                .collect()
        })
        .collect()
}

/// The `action_id` of the button labelled `label`.
fn action_id(message: &StoredMessage, label: &str) -> String {
    message
        .button_action(label)
        .unwrap_or_else(|| panic!("no button {label:?} in {:?}", button_rows(message)))
}

#[tokio::test]
async fn slack_button_press_from_the_addressed_user_answers_the_agent() {
    let fake = fake().await;
    let daemon = started(daemon_for(&fake), &fake).await;
    let id = create(&daemon, &deploy_ask()).await;

    let question = posted(&fake, 1).await;
    assert_eq!(question.channel, CHANNEL);
    assert_eq!(
        button_rows(&question),
        [
            vec!["Staging ⭐", "Production", "Canary"],
            vec!["Other…", "Skip"]
        ]
    );
    for action in question.action_ids() {
        assert!(action.len() <= 255, "{action}");
        assert!(
            !action.contains("Production"),
            "content leaked into {action}"
        );
    }
    assert!(
        question
            .blocks
            .to_string()
            .contains("\"style\":\"primary\"")
    );

    // Bob may not answer: told so privately, nothing changes.
    fake.press_button(
        &bob(),
        CHANNEL,
        &question.ts,
        &action_id(&question, "Production"),
    );
    let notices = fake.wait_for_ephemerals(BOB, 1).await;
    assert_eq!(notices[0].text, "This question is not for you.");
    assert_eq!(notices[0].source, EphemeralSource::ResponseUrl);
    assert_eq!(status(&daemon, &id).await["status"], "pending");
    assert_eq!(fake.message(CHANNEL, &question.ts).unwrap().edit_count(), 0);

    fake.press_button(
        &alice(),
        CHANNEL,
        &question.ts,
        &action_id(&question, "Production"),
    );
    let done = outcome(&daemon, &id).await;
    assert_eq!(done["status"], "answered");
    assert_eq!(done["answers"], json!({"env": ["Production"]}));
    assert_eq!(done["details"][0]["via"], "button");
    assert_eq!(done["answeredBy"]["userId"], ALICE);
    assert_eq!(done["answeredBy"]["name"], "Alice Liddell");
    let edited = closed(&fake, &question).await;
    assert!(
        edited
            .text
            .ends_with("✅ Production — answered by Alice Liddell"),
        "{}",
        edited.text
    );
}

#[tokio::test]
async fn slack_ask_over_mcp_is_answered_with_a_button() {
    let fake = fake().await;
    let daemon = started(
        daemon_for(&fake).env("ASKBRIDGE_DEFAULT_TARGET", format!("slack:{CHANNEL}")),
        &fake,
    )
    .await;
    let mut client = mcp_client::Client::http("answer", &daemon.url("/mcp"));
    let id = mcp_client::ask_id(&client.until("progress").await);
    let question = posted(&fake, 1).await;
    fake.press_button(
        &alice(),
        CHANNEL,
        &question.ts,
        &action_id(&question, "Production"),
    );
    let result = client.until("result").await["result"].clone();
    mcp_client::assert_answered(&result, &id, "Production");
    client.finish().await;
}

#[tokio::test]
async fn slack_other_opens_a_modal_whose_text_is_the_answer() {
    let fake = fake().await;
    let daemon = started(daemon_for(&fake), &fake).await;
    let id = create(&daemon, &deploy_ask()).await;
    let question = posted(&fake, 1).await;
    let press = fake.press_button(
        &alice(),
        CHANNEL,
        &question.ts,
        &action_id(&question, "Other…"),
    );
    let view = fake.wait_for_view(press.id).await;
    assert_eq!(view.view["title"]["text"], "Deploy");
    let input = view.view["blocks"][0]["element"]["action_id"]
        .as_str()
        .unwrap()
        .to_owned();
    fake.submit_view(&alice(), &view.id, &[(&input, "the blue cluster")]);
    let done = outcome(&daemon, &id).await;
    assert_eq!(done["answers"], json!({"env": ["the blue cluster"]}));
    assert_eq!(done["details"][0]["via"], "modal");
    closed(&fake, &question).await;
}

#[tokio::test]
async fn slack_typed_replies_in_the_thread_resolve_numbers_and_labels() {
    let fake = fake().await;
    let daemon = started(daemon_for(&fake), &fake).await;

    let first = create(&daemon, &deploy_ask()).await;
    let question = posted(&fake, 1).await;
    fake.inject_message(IncomingMessage::new(CHANNEL, ALICE, "2").in_thread(&question.ts));
    let done = outcome(&daemon, &first).await;
    assert_eq!(done["answers"], json!({"env": ["Production"]}));
    assert_eq!(done["details"][0]["via"], "text");

    // Top level, with a mention and Slack's escaping: the newest ask
    // Alice may answer; Bob's chatter is left alone.
    let second = create(&daemon, &deploy_ask()).await;
    posted(&fake, 2).await;
    fake.inject_message(IncomingMessage::new(CHANNEL, BOB, "lunch?"));
    fake.inject_message(IncomingMessage::new(
        CHANNEL,
        ALICE,
        "<@U0ASKBR1DG> staging &amp; go",
    ));
    let done = outcome(&daemon, &second).await;
    assert_eq!(done["answers"], json!({"env": ["Staging (Recommended)"]}));
}

#[tokio::test]
async fn slack_multi_question_reply_in_the_thread_keeps_partial_answers() {
    let fake = fake().await;
    let daemon = started(daemon_for(&fake), &fake).await;
    let id = create(&daemon, &release_ask()).await;
    let prompt = posted(&fake, 1).await;
    assert!(
        prompt.action_ids().is_empty(),
        "a text prompt has no buttons"
    );
    assert!(prompt.text.contains("Q2 Notify"), "{}", prompt.text);

    fake.inject_message(IncomingMessage::new(CHANNEL, ALICE, "Q1: 2").in_thread(&prompt.ts));
    let reask = fake.wait_for_replies(CHANNEL, &prompt.ts, 2).await;
    let reask = reask.iter().find(|m| m.by_bot()).expect("the re-ask");
    assert!(reask.text.contains("Notify"), "{}", reask.text);
    assert!(!reask.text.contains("Q1"), "{}", reask.text);
    assert_eq!(status(&daemon, &id).await["status"], "pending");

    fake.inject_message(IncomingMessage::new(CHANNEL, ALICE, "1, 2").in_thread(&prompt.ts));
    let done = outcome(&daemon, &id).await;
    assert_eq!(
        done["answers"],
        json!({"env": ["Production"], "notify": ["Team", "On-call"]})
    );
    closed(&fake, &prompt).await;
}

#[tokio::test]
async fn slack_skip_closes_the_question() {
    let fake = fake().await;
    let daemon = started(daemon_for(&fake), &fake).await;
    let id = create(&daemon, &deploy_ask()).await;
    let question = posted(&fake, 1).await;
    fake.press_button(
        &alice(),
        CHANNEL,
        &question.ts,
        &action_id(&question, "Skip"),
    );
    let done = outcome(&daemon, &id).await;
    assert_eq!(done["reason"], "skipped");
    let edited = closed(&fake, &question).await;
    assert!(edited.text.ends_with("⏭ Skipped"), "{}", edited.text);
}

#[tokio::test]
async fn slack_dm_target_opens_the_im_and_takes_the_answer_there() {
    let fake = fake().await;
    let daemon = started(daemon_for(&fake), &fake).await;
    let id = create(
        &daemon,
        &json!({
            "to": format!("slack:user/{ALICE}"),
            "questions": [{"question": "Ship it?", "type": "confirm"}]
        }),
    )
    .await;
    let question = posted(&fake, 1).await;
    let dm = fake.dm_channel(&alice());
    assert_eq!(question.channel, dm);
    assert_eq!(button_rows(&question), [vec!["Yes", "No"], vec!["Skip"]]);
    fake.inject_message(IncomingMessage::new(&dm, ALICE, "yes"));
    let done = outcome(&daemon, &id).await;
    let answers: Vec<&Value> = done["answers"].as_object().unwrap().values().collect();
    assert_eq!(answers, [&json!(["yes"])]);
    closed(&fake, &question).await;
}

#[tokio::test]
async fn slack_rich_mode_checkboxes_and_steps_in_place() {
    let fake = fake().await;
    let daemon = started(
        daemon_for(&fake).env("ASKBRIDGE_SLACK_RENDER", "rich"),
        &fake,
    )
    .await;
    let id = create(&daemon, &release_ask()).await;
    let step = posted(&fake, 1).await;
    assert!(step.text.contains("1/2"), "{}", step.text);
    fake.press_button(&alice(), CHANNEL, &step.ts, &action_id(&step, "Staging"));

    let second = fake.wait_for_edits(CHANNEL, &step.ts, 1).await;
    assert!(second.text.contains("2/2"), "{}", second.text);
    let boxes = second.blocks.to_string();
    assert!(boxes.contains("\"checkboxes\""), "{boxes}");
    let submit = action_id(&second, "Done");
    // Ticking does not submit; Submit (Done) does, with what is ticked.
    fake.choose(&alice(), CHANNEL, &step.ts, &submit, &["0", "1"]);
    assert_eq!(status(&daemon, &id).await["status"], "pending");
    fake.press_button(&alice(), CHANNEL, &step.ts, &submit);
    let done = outcome(&daemon, &id).await;
    assert_eq!(
        done["answers"],
        json!({"env": ["Staging"], "notify": ["Team", "On-call"]})
    );
    assert_eq!(done["details"][1]["via"], "select");
    closed(&fake, &step).await;
}

#[tokio::test]
async fn slack_channel_not_found_ends_the_ask_as_delivery_failed() {
    let fake = fake().await;
    let daemon = started(daemon_for(&fake), &fake).await;
    let id = create(
        &daemon,
        &json!({"to": "slack:C0NOWHERE", "questions": [{"question": "Ship it?", "type": "confirm"}]}),
    )
    .await;
    let done = outcome(&daemon, &id).await;
    assert_eq!(done["reason"], "delivery_failed");
    assert!(
        status(&daemon, &id)
            .await
            .to_string()
            .contains("channel_not_found")
    );
}

#[tokio::test]
async fn slack_rate_limits_delay_but_lose_nothing() {
    let fake = fake_with(
        FakeSlack::builder()
            .rate_limits(RateLimits::slack())
            .start()
            .await,
    )
    .await;
    let daemon = started(daemon_for(&fake), &fake).await;
    for n in 0..6 {
        let mut ask = deploy_ask();
        ask["questions"][0]["question"] = json!(format!("Deploy build {n}?"));
        create(&daemon, &ask).await;
    }
    let messages = fake.wait_for_bot_messages(6).await;
    assert!(
        fake.rate_limited_count() > 0,
        "the burst met Slack's limits"
    );
    for n in 0..6 {
        let wanted = format!("Deploy build {n}?");
        assert!(
            messages.iter().any(|m| m.text.contains(&wanted)),
            "{wanted} was not posted"
        );
    }
}

#[tokio::test]
async fn slack_socket_drop_reconnects_and_a_redelivered_envelope_is_handled_once() {
    let fake = fake().await;
    let daemon = started(daemon_for(&fake), &fake).await;
    let older = create(&daemon, &deploy_ask()).await;
    posted(&fake, 1).await;
    let newer = create(&daemon, &deploy_ask()).await;
    let question = posted(&fake, 2).await;

    fake.drop_connection();
    fake.wait_for_connections(2).await;
    // "2" answers the newest ask Alice may answer. Its ack is lost, so
    // Slack sends it again: were it handled again, it would answer the
    // older ask too.
    let typed = fake.inject_message(IncomingMessage::new(CHANNEL, ALICE, "2"));
    let envelope = typed.envelope_id;
    fake.wait_for_ack(&envelope).await;
    assert_eq!(
        outcome(&daemon, &newer).await["answers"],
        json!({"env": ["Production"]})
    );
    assert!(fake.lose_ack(&envelope));
    let again = fake.wait_for_deliveries(&envelope, 2).await;
    assert_eq!(again.retry_attempt, 1);
    fake.wait_for_ack(&envelope).await;
    closed(&fake, &question).await;

    fake.inject_message(IncomingMessage::new(CHANNEL, ALICE, "canary"));
    assert_eq!(
        outcome(&daemon, &older).await["answers"],
        json!({"env": ["Canary"]})
    );
}

#[tokio::test]
async fn slack_button_still_works_after_kill_and_restart() {
    let fake = fake().await;
    let mut daemon = started(daemon_for(&fake), &fake).await;
    let id = create(&daemon, &deploy_ask()).await;
    let question = posted(&fake, 1).await;
    daemon.kill();
    daemon.restart();
    fake.wait_for_connections(2).await;
    fake.press_button(
        &alice(),
        CHANNEL,
        &question.ts,
        &action_id(&question, "Production"),
    );
    let done = outcome(&daemon, &id).await;
    assert_eq!(done["answers"], json!({"env": ["Production"]}));
    for copy in fake.bot_messages() {
        closed(&fake, &copy).await;
    }
}

#[tokio::test]
async fn slack_http_mode_checks_signatures_and_refuses_replays() {
    let (fake, daemon) = http_mode().await;
    let events = daemon.url("/slack/events");
    let interactivity = daemon.url("/slack/interactivity");

    let check = fake
        .deliver_http(&events, &fake.url_verification_http("c-123"))
        .await;
    assert_eq!(check.status, 200);
    let body: Value = serde_json::from_str(&check.body).unwrap();
    assert_eq!(body, json!({"challenge": "c-123"}));

    let id = create(&daemon, &deploy_ask()).await;
    let question = posted(&fake, 1).await;
    let press = fake.press_button_http(
        &alice(),
        CHANNEL,
        &question.ts,
        &action_id(&question, "Canary"),
    );

    // Unsigned, signed with another secret, and signed ten minutes ago.
    let unsigned = daemon::client()
        .post(&interactivity)
        .header("content-type", press.content_type)
        .body(press.body.clone())
        .send()
        .await
        .unwrap();
    assert_eq!(unsigned.status(), 401);
    let forged = askbridge_testkit::slack::RequestSigner::new("not-the-secret")
        .sign_now(press.body.as_bytes());
    let refused = fake
        .deliver_http_signed(&interactivity, &press, &forged)
        .await;
    assert_eq!(refused.status, 401);
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    let stale = fake.signer().sign_at(now - 600, press.body.as_bytes());
    let replayed = fake
        .deliver_http_signed(&interactivity, &press, &stale)
        .await;
    assert_eq!(replayed.status, 401);
    assert_eq!(status(&daemon, &id).await["status"], "pending");

    let delivered = fake.deliver_http(&interactivity, &press).await;
    assert_eq!(delivered.status, 200);
    let done = outcome(&daemon, &id).await;
    assert_eq!(done["answers"], json!({"env": ["Canary"]}));
    closed(&fake, &question).await;
}

#[tokio::test]
async fn slack_timeout_edits_the_message_to_expired_in_the_channel_locale() {
    use std::time::Duration;

    use askbridge::bridge::{Bridge, BridgeOptions, Clock, NewAsk, Tuning};
    use askbridge::channels::slack::Slack;
    use askbridge::config::{Secret, SlackConfig, SlackMode};
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
    let config = SlackConfig {
        token: Secret::new(fake.bot_token()),
        api_url: Some(fake.api_url()),
        mode: SlackMode::Socket {
            app_token: Secret::new(fake.app_token()),
        },
        render: Mode::Buttons,
        locale: Locale::ZhCn,
        allowed_users: Vec::new(),
    };
    let _slack = Slack::new(&bridge, &config).unwrap();
    let ask = normalize_json(&json!({
        "to": format!("slack:{CHANNEL}"),
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
    assert_eq!(button_rows(&question).last().unwrap(), &["其他…", "跳过"]);

    clock.advance(Duration::from_secs(61));
    let edited = closed(&fake, &question).await;
    assert!(edited.text.ends_with("⌛ 已过期"), "{}", edited.text);
    assert_eq!(bridge.get(&view.id).await.unwrap().state, State::TimedOut);
}

/// In HTTP mode a press is recorded before Slack gets its 200: a crash
/// (`kill -9`) right after the acknowledgement loses nothing.
#[tokio::test]
async fn slack_http_mode_records_a_press_before_acknowledging_it() {
    let (fake, mut daemon) = http_mode().await;
    let id = create(&daemon, &deploy_ask()).await;
    let question = posted(&fake, 1).await;
    let press = fake.press_button_http(
        &alice(),
        CHANNEL,
        &question.ts,
        &action_id(&question, "Canary"),
    );
    let interactivity = daemon.url("/slack/interactivity");
    assert_eq!(fake.deliver_http(&interactivity, &press).await.status, 200);
    daemon.kill();
    daemon.restart();
    let done = outcome(&daemon, &id).await;
    assert_eq!(done["answers"], json!({"env": ["Canary"]}), "{done}");

    // A typed answer in the thread, likewise.
    let id = create(&daemon, &release_ask()).await;
    let prompt = posted(&fake, 2).await;
    let reply = fake
        .message_http(IncomingMessage::new(CHANNEL, BOB, "Q1: 2\nQ2: 1, 2").in_thread(&prompt.ts));
    let events = daemon.url("/slack/events");
    assert_eq!(fake.deliver_http(&events, &reply).await.status, 200);
    daemon.kill();
    daemon.restart();
    let done = outcome(&daemon, &id).await;
    assert_eq!(
        done["answers"],
        json!({"env": ["Production"], "notify": ["Team", "On-call"]}),
        "{done}"
    );
}

/// askbridge's slash command, in Socket Mode and over HTTP, is answered
/// through its response URL with the targets for that channel, to the
/// person who ran it alone.
#[tokio::test]
async fn slack_slash_command_tells_the_user_alone_the_targets_for_this_channel() {
    use askbridge_testkit::slack::EphemeralSource;
    let expected = format!(
        "To ask here, use slack:{CHANNEL}@{ALICE} (only you may answer) or \
         slack:{CHANNEL} (anyone here may answer)."
    );
    let fake = fake().await;
    let _daemon = started(daemon_for(&fake), &fake).await;
    fake.use_command(CHANNEL, ALICE, "/askbridge", "");
    let answer = fake.wait_for_ephemerals(ALICE, 1).await;
    assert_eq!(answer[0].channel, CHANNEL);
    assert_eq!(answer[0].text, expected);
    assert_eq!(answer[0].source, EphemeralSource::CommandResponse);
    assert!(fake.bot_messages().is_empty(), "{:?}", fake.bot_messages());

    let (fake, daemon) = http_mode().await;
    let command = fake.use_command_http(CHANNEL, ALICE, "/askbridge", "where");
    let commands = daemon.url("/slack/commands");
    assert_eq!(fake.deliver_http(&commands, &command).await.status, 200);
    let answer = fake.wait_for_ephemerals(ALICE, 1).await;
    assert_eq!(answer[0].text, expected);
}

/// The bot's mention with "where" (Slack keeps `/…` for slash commands)
/// is answered with the exact targets for this channel, to the sender
/// alone.
#[tokio::test]
async fn slack_mention_with_where_tells_the_sender_alone_the_targets_for_this_channel() {
    let fake = fake().await;
    let _daemon = started(daemon_for(&fake), &fake).await;
    fake.inject_message(IncomingMessage::new(CHANNEL, ALICE, "<@U0ASKBR1DG> where"));
    let answer = fake.wait_for_ephemerals(ALICE, 1).await;
    assert_eq!(answer[0].channel, CHANNEL);
    assert_eq!(
        answer[0].text,
        format!(
            "To ask here, use slack:{CHANNEL}@{ALICE} (only you may answer) or \
             slack:{CHANNEL} (anyone here may answer)."
        )
    );
    assert!(fake.bot_messages().is_empty(), "{:?}", fake.bot_messages());
}

/// An ask of an agent session's thread, for Alice.
fn session_ask(question: &str) -> Value {
    json!({
        "to": format!("slack:{CHANNEL}@{ALICE}"),
        "thread": {"key": "claude-code:s1", "title": "Claude Code · api-server · session s1"},
        "questions": [{"question": question, "options": ["Staging", "Production", "Canary"]}]
    })
}

#[tokio::test]
async fn slack_asks_of_one_session_share_a_thread_and_a_reply_there_answers_the_newest() {
    let fake = fake().await;
    let daemon = started(daemon_for(&fake), &fake).await;
    let first = create(&daemon, &session_ask("Where first?")).await;
    let root = posted(&fake, 1).await;
    assert_eq!(root.text, "Claude Code · api-server · session s1");
    assert_eq!(root.thread_ts, None, "the thread's first message");
    assert!(root.action_ids().is_empty());
    let question = posted(&fake, 2).await;
    assert_eq!(question.thread_ts.as_deref(), Some(root.ts.as_str()));
    assert!(question.text.contains("Where first?"), "{}", question.text);

    let second = create(&daemon, &session_ask("Where next?")).await;
    let next = posted(&fake, 3).await;
    assert!(next.text.contains("Where next?"), "{}", next.text);
    assert_eq!(
        next.thread_ts.as_deref(),
        Some(root.ts.as_str()),
        "the same thread, no second first message"
    );

    // Bob's word in the thread is not an answer: the asks are Alice's.
    fake.inject_message(IncomingMessage::new(CHANNEL, BOB, "Canary").in_thread(&root.ts));
    // Alice's answers the newest, then the one still open.
    fake.inject_message(IncomingMessage::new(CHANNEL, ALICE, "Canary").in_thread(&root.ts));
    let done = outcome(&daemon, &second).await;
    assert_eq!(done["answers"], json!({"where_next": ["Canary"]}));
    assert_eq!(done["answeredBy"]["userId"], ALICE);
    assert_eq!(status(&daemon, &first).await["status"], "pending");
    fake.inject_message(IncomingMessage::new(CHANNEL, ALICE, "2").in_thread(&root.ts));
    let done = outcome(&daemon, &first).await;
    assert_eq!(done["answers"], json!({"where_first": ["Production"]}));
    assert_eq!(done["answeredBy"]["userId"], ALICE);
    closed(&fake, &question).await;
    closed(&fake, &next).await;
    assert_eq!(
        fake.bot_messages()
            .iter()
            .filter(|message| message.thread_ts.is_none())
            .count(),
        1,
        "one message in the channel itself: the thread's"
    );
}

//! Self-tests of the fake Slack, driven by the real slack-morphism 2.31:
//! its hyper `SlackClient` on a plain HTTP connector (pointed at the fake
//! with `with_slack_api_url`), its Socket Mode listener, its response URL
//! client and its request-signature verifier. What slack-morphism sends,
//! the fake understands; what the fake answers and delivers,
//! slack-morphism deserialises into its model types and maps to the right
//! errors.

#![allow(clippy::unwrap_used)]

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use askbridge_testkit::slack::{
    APP_ID, BOT_ID, BOT_USER_ID, Channel, DEFAULT_BOT_SCOPES, EphemeralSource, FakeSlack,
    IncomingMessage, Limit, RateLimits, RequestSigner, TEAM_ID, User,
};
use axum::body::Bytes;
use axum::http::{HeaderMap, StatusCode};
use hyper_util::client::legacy::connect::HttpConnector;
use serde_json::{Value, json};
use slack_morphism::errors::{SlackClientApiError, SlackClientError};
use slack_morphism::prelude::*;
use slack_morphism::signature_verifier::SlackEventSignatureVerifier;
use tokio::sync::mpsc;

const GENERAL: &str = "C0GENERAL1";
const OPS: &str = "C0OPS00001";

type Connector = SlackClientHyperConnector<HttpConnector>;

/// How long a test waits for slack-morphism to report something.
const EVENT_TIMEOUT: Duration = Duration::from_secs(10);

fn alice() -> User {
    User::new("U0ALICE001", "alice")
        .real_name("Alice Liddell")
        .display_name("Alice")
}

fn bob() -> User {
    User::new("U0BOB00001", "bob")
}

/// A fake with #general (the bot in it) and #ops (without the bot); Alice
/// and Bob exist.
async fn started(builder: askbridge_testkit::slack::FakeSlackBuilder) -> FakeSlack {
    let fake = builder.start().await;
    fake.add_channel(&Channel::public(GENERAL, "general"));
    fake.add_channel(&Channel::public(OPS, "ops").without_bot());
    fake.add_user(&alice());
    fake.add_user(&bob());
    fake
}

/// slack-morphism's connector on plain HTTP, pointed at the fake.
fn connector(fake: &FakeSlack) -> Connector {
    SlackClientHyperConnector::with_connector(HttpConnector::new())
        .with_slack_api_url(&fake.api_url())
}

fn client(fake: &FakeSlack) -> SlackClient<Connector> {
    SlackClient::new(connector(fake))
}

fn token(value: &str) -> SlackApiToken {
    SlackApiToken::new(value.into())
}

fn blocks(value: Value) -> Vec<SlackBlock> {
    serde_json::from_value(value).unwrap()
}

fn question_blocks(prefix: &str) -> Value {
    json!([
        {"type": "section", "text": {"type": "mrkdwn", "text": "*Deploy* to prod?"}},
        {"type": "actions", "block_id": format!("{prefix}:actions"), "elements": [
            {"type": "button", "action_id": format!("{prefix}:yes"), "value": "yes",
             "style": "primary", "text": {"type": "plain_text", "text": "Yes"}},
            {"type": "button", "action_id": format!("{prefix}:no"), "value": "no",
             "text": {"type": "plain_text", "text": "No"}},
            {"type": "static_select", "action_id": format!("{prefix}:pick"),
             "placeholder": {"type": "plain_text", "text": "Pick one"},
             "options": [
                {"text": {"type": "plain_text", "text": "Red"}, "value": "red"},
                {"text": {"type": "plain_text", "text": "Blue"}, "value": "blue"}]},
            {"type": "multi_static_select", "action_id": format!("{prefix}:many"),
             "placeholder": {"type": "plain_text", "text": "Pick some"},
             "options": [
                {"text": {"type": "plain_text", "text": "A"}, "value": "a"},
                {"text": {"type": "plain_text", "text": "B"}, "value": "b"}]},
            {"type": "checkboxes", "action_id": format!("{prefix}:check"),
             "options": [
                {"text": {"type": "mrkdwn", "text": "*X*"}, "value": "x"},
                {"text": {"type": "plain_text", "text": "Y"}, "value": "y"}]},
        ]},
    ])
}

async fn post(
    session: &SlackClientSession<'_, Connector>,
    channel: &str,
    text: Option<&str>,
    blocks_json: Option<Value>,
) -> ClientResult<SlackApiChatPostMessageResponse> {
    let mut content = SlackMessageContent::new();
    if let Some(text) = text {
        content = content.with_text(text.to_owned());
    }
    if let Some(value) = blocks_json {
        content = content.with_blocks(blocks(value));
    }
    session
        .chat_post_message(&SlackApiChatPostMessageRequest::new(
            channel.into(),
            content,
        ))
        .await
}

/// Slack's error string as slack-morphism surfaces it.
fn api_error<T: std::fmt::Debug>(result: ClientResult<T>) -> SlackClientApiError {
    match result {
        Err(SlackClientError::ApiError(error)) => error,
        other => panic!("expected Slack's API error, got {other:?}"),
    }
}

#[tokio::test]
async fn auth_test_and_token_errors() {
    let fake = started(FakeSlack::builder()).await;
    let client = client(&fake);
    let bot = token(&fake.bot_token());
    let auth = client.open_session(&bot).auth_test().await.unwrap();
    assert_eq!(auth.user_id.value(), BOT_USER_ID);
    assert_eq!(auth.team_id.value(), TEAM_ID);
    assert_eq!(
        auth.bot_id.as_ref().map(|id| id.value().as_str()),
        Some(BOT_ID)
    );
    assert_eq!(
        auth.url.value().as_str(),
        "https://askbridge-test.slack.com/"
    );

    let wrong = token("xoxb-not-the-token");
    let refused = api_error(client.open_session(&wrong).auth_test().await);
    assert_eq!(refused.code, "invalid_auth");
    let app = token(&fake.app_token());
    let refused = api_error(client.open_session(&app).auth_test().await);
    assert_eq!(refused.code, "not_allowed_token_type");
    let refused = api_error(
        client
            .open_session(&bot)
            .apps_connections_open(&SlackApiAppsConnectionOpenRequest::new())
            .await,
    );
    assert_eq!(refused.code, "not_allowed_token_type");

    // No token at all, and a form-encoded body with the token as a
    // parameter and blocks as JSON text (HTTP 200 either way, as on Slack).
    let http = reqwest::Client::new();
    let url = format!("{}/chat.postMessage", fake.api_url());
    let answer: Value = http
        .post(&url)
        .form(&[("channel", GENERAL), ("text", "hi")])
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(answer, json!({"ok": false, "error": "not_authed"}));
    let bot_token = fake.bot_token();
    let form_blocks = r#"[{"type":"section","text":{"type":"plain_text","text":"form"}}]"#;
    let response = http
        .post(&url)
        .form(&[
            ("token", bot_token.as_str()),
            ("channel", GENERAL),
            ("blocks", form_blocks),
        ])
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    let answer: Value = response.json().await.unwrap();
    assert_eq!(answer["ok"], true, "{answer}");
    let stored = fake
        .message(GENERAL, answer["ts"].as_str().unwrap())
        .unwrap();
    assert_eq!(stored.blocks[0]["text"]["text"], "form");
    let calls = fake.calls();
    assert_eq!(calls[0].method, "auth.test");
    assert_eq!(calls[0].http_method, "GET");
    assert_eq!(calls[1].error.as_deref(), Some("invalid_auth"));
    assert!(calls.last().unwrap().params.get("token").is_none());
}

/// The `x-oauth-scopes` header of an answer to `auth.test` with `token`.
async fn scopes_header(fake: &FakeSlack, token: &str) -> Option<String> {
    let response = reqwest::Client::new()
        .get(format!("{}/auth.test", fake.api_url()))
        .bearer_auth(token)
        .send()
        .await
        .unwrap();
    response
        .headers()
        .get("x-oauth-scopes")
        .map(|value| value.to_str().unwrap().to_owned())
}

#[tokio::test]
async fn answers_list_the_token_scopes() {
    let fake = started(FakeSlack::builder()).await;
    assert_eq!(
        scopes_header(&fake, &fake.bot_token()).await,
        Some(DEFAULT_BOT_SCOPES.join(","))
    );
    // An app-level token's scope, though auth.test refuses it; no header
    // for a token Slack does not know.
    assert_eq!(
        scopes_header(&fake, &fake.app_token()).await.as_deref(),
        Some("connections:write")
    );
    assert_eq!(scopes_header(&fake, "xoxb-unknown").await, None);

    let fake = started(FakeSlack::builder().bot_scopes(["chat:write", "users:read"])).await;
    assert_eq!(
        scopes_header(&fake, &fake.bot_token()).await.as_deref(),
        Some("chat:write,users:read")
    );
}

#[tokio::test]
async fn messages_threads_edits_and_ephemerals() {
    let fake = started(FakeSlack::builder()).await;
    let client = client(&fake);
    let bot = token(&fake.bot_token());
    let session = client.open_session(&bot);

    let posted = post(
        &session,
        GENERAL,
        Some("Deploy?"),
        Some(question_blocks("q1")),
    )
    .await
    .unwrap();
    assert_eq!(posted.channel.value(), GENERAL);
    let ts = posted.ts.value().clone();
    assert_eq!(ts.len(), 17, "Slack's ts format: {ts}");
    assert_eq!(&ts[10..11], ".");
    assert_eq!(posted.message.origin.ts.value(), &ts);
    assert_eq!(
        posted
            .message
            .sender
            .bot_id
            .as_ref()
            .map(|id| id.value().as_str()),
        Some(BOT_ID)
    );
    let message_blocks = posted.message.content.blocks.clone().unwrap();
    assert_eq!(message_blocks.len(), 2);

    let stored = fake.wait_for_messages(GENERAL, 1).await.remove(0);
    assert_eq!(stored.text, "Deploy?");
    assert!(stored.by_bot());
    assert_eq!(stored.blocks[1]["block_id"], "q1:actions");
    assert!(
        stored.blocks[0]["block_id"].is_string(),
        "Slack fills in block ids"
    );
    assert_eq!(stored.action_ids()[..2], ["q1:yes", "q1:no"]);

    // A reply in the thread; its ts sorts after the parent's.
    let reply = session
        .chat_post_message(
            &SlackApiChatPostMessageRequest::new(
                GENERAL.into(),
                SlackMessageContent::new().with_text("details".into()),
            )
            .with_thread_ts(ts.clone().into()),
        )
        .await
        .unwrap();
    assert!(reply.ts.value() > &ts);
    let replies = fake.wait_for_replies(GENERAL, &ts, 1).await;
    assert_eq!(replies[0].text, "details");
    assert_eq!(
        fake.messages_in(GENERAL).len(),
        1,
        "replies are not top level"
    );

    // Edits keep their history; omitted blocks stay.
    let updated = session
        .chat_update(&SlackApiChatUpdateRequest::new(
            GENERAL.into(),
            SlackMessageContent::new().with_text("Deploy? (answered)".into()),
            ts.clone().into(),
        ))
        .await
        .unwrap();
    assert_eq!(updated.ts.value(), &ts);
    let edited = fake.wait_for_edits(GENERAL, &ts, 1).await;
    assert_eq!(edited.text, "Deploy? (answered)");
    assert_eq!(edited.history[0].text, "Deploy?");
    assert_eq!(edited.blocks.as_array().map(Vec::len), Some(2));

    let ephemeral = session
        .chat_post_ephemeral(&SlackApiChatPostEphemeralRequest::new(
            GENERAL.into(),
            alice().id.into(),
            SlackMessageContent::new().with_text("only you".into()),
        ))
        .await;
    assert!(ephemeral.is_ok(), "{ephemeral:?}");
    let shown = fake.wait_for_ephemerals(&alice().id, 1).await;
    assert_eq!(shown[0].text, "only you");
    assert_eq!(shown[0].source, EphemeralSource::PostEphemeral);
    let call = fake.calls_to("chat.postEphemeral").remove(0);
    assert!(call.response["message_ts"].is_string());
}

#[tokio::test]
async fn limits_refused_with_slacks_errors() {
    let fake = started(FakeSlack::builder()).await;
    let client = client(&fake);
    let bot = token(&fake.bot_token());
    let session = client.open_session(&bot);
    let button = |id: &str, text: &str| json!({"type": "button", "action_id": id, "text": {"type": "plain_text", "text": text}});
    let option = |n: usize, text: &str| json!({"text": {"type": "plain_text", "text": text}, "value": n.to_string()});
    let cases = [
        (
            json!([{"type": "section", "text": {"type": "mrkdwn", "text": "x".repeat(3001)}}]),
            "must be less than 3001 characters [json-pointer:/blocks/0/text/text]",
        ),
        (
            json!(
                (0..51)
                    .map(|_| json!({"type": "divider"}))
                    .collect::<Vec<_>>()
            ),
            "must provide no more than 50 items [json-pointer:/blocks]",
        ),
        (
            json!([{"type": "actions", "elements": [button("a", &"b".repeat(76))]}]),
            "must be less than 76 characters [json-pointer:/blocks/0/elements/0/text/text]",
        ),
        (
            json!([{"type": "actions", "elements": [button("a", "A"), button("a", "B")]}]),
            "duplicate action_id 'a' [json-pointer:/blocks/0/elements/1/action_id]",
        ),
        (
            json!([{"type": "actions", "elements": [button(&"a".repeat(256), "A")]}]),
            "must be less than 256 characters [json-pointer:/blocks/0/elements/0/action_id]",
        ),
        (
            json!([{"type": "actions", "elements":
                (0..26).map(|n| button(&format!("b{n}"), "B")).collect::<Vec<_>>()}]),
            "must provide no more than 25 items [json-pointer:/blocks/0/elements]",
        ),
        (
            json!([{"type": "actions", "elements": [{"type": "static_select", "action_id": "s",
                "placeholder": {"type": "plain_text", "text": "p"},
                "options": (0..101).map(|n| option(n, "o")).collect::<Vec<_>>()}]}]),
            "must provide no more than 100 items [json-pointer:/blocks/0/elements/0/options]",
        ),
        (
            json!([{"type": "actions", "elements": [{"type": "static_select", "action_id": "s",
                "placeholder": {"type": "plain_text", "text": "p"},
                "options": [option(1, &"o".repeat(76))]}]}]),
            "must be less than 76 characters [json-pointer:/blocks/0/elements/0/options/0/text/text]",
        ),
    ];
    for (bad, expected) in cases {
        let refused = api_error(post(&session, GENERAL, Some("fallback"), Some(bad)).await);
        assert_eq!(refused.code, "invalid_blocks");
        assert_eq!(refused.errors.as_deref(), Some(&[expected.to_owned()][..]));
    }
    let too_long = "x".repeat(40_001);
    let refused = api_error(post(&session, GENERAL, Some(&too_long), None).await);
    assert_eq!(refused.code, "msg_too_long");
    assert_eq!(
        api_error(post(&session, GENERAL, None, None).await).code,
        "no_text"
    );
    assert_eq!(
        api_error(post(&session, "C0NOWHERE1", Some("hi"), None).await).code,
        "channel_not_found"
    );
    assert_eq!(
        api_error(post(&session, OPS, Some("hi"), None).await).code,
        "not_in_channel"
    );
    fake.archive_channel(GENERAL);
    assert_eq!(
        api_error(post(&session, GENERAL, Some("hi"), None).await).code,
        "is_archived"
    );
    fake.unarchive_channel(GENERAL);

    let update = |ts: String| {
        SlackApiChatUpdateRequest::new(
            GENERAL.into(),
            SlackMessageContent::new().with_text("edit".into()),
            ts.into(),
        )
    };
    let missing = api_error(
        session
            .chat_update(&update("1700000000.000001".into()))
            .await,
    );
    assert_eq!(missing.code, "message_not_found");
    let theirs = fake.inject_message(IncomingMessage::new(GENERAL, alice().id, "mine"));
    let refused = api_error(session.chat_update(&update(theirs.ts)).await);
    assert_eq!(refused.code, "cant_update_message");
    assert_eq!(
        api_error(
            session
                .users_info(&SlackApiUsersInfoRequest::new("U0NOBODY01".into()))
                .await
        )
        .code,
        "user_not_found"
    );
    assert!(
        fake.messages_in(GENERAL)
            .iter()
            .all(|message| !message.by_bot())
    );
}

#[tokio::test]
async fn conversations_open_users_info_and_views_open_triggers() {
    let fake = started(FakeSlack::builder()).await;
    let client = client(&fake);
    let bot = token(&fake.bot_token());
    let session = client.open_session(&bot);

    let open = SlackApiConversationsOpenRequest::new().with_users(vec![alice().id.into()]);
    let first = session.conversations_open(&open).await.unwrap();
    let dm = first.channel.id.value().clone();
    assert!(dm.starts_with('D'), "{dm}");
    assert_eq!(first.already_open, None);
    let again = session.conversations_open(&open).await.unwrap();
    assert_eq!(again.channel.id.value(), &dm, "one DM per user");
    assert_eq!(again.already_open, Some(true));
    assert_eq!(fake.dm_channel(&alice()), dm);
    assert_eq!(
        api_error(
            session
                .conversations_open(
                    &SlackApiConversationsOpenRequest::new().with_users(vec!["U0NOBODY01".into()])
                )
                .await
        )
        .code,
        "user_not_found"
    );
    // Posting to the DM, and to the user id (the same DM).
    post(&session, &dm, Some("hello"), None).await.unwrap();
    let to_user = post(&session, &alice().id, Some("again"), None)
        .await
        .unwrap();
    assert_eq!(to_user.channel.value(), &dm);
    assert_eq!(fake.messages_in(&dm).len(), 2);

    let info = session
        .users_info(&SlackApiUsersInfoRequest::new(alice().id.into()))
        .await
        .unwrap();
    let profile = info.user.profile.unwrap();
    assert_eq!(profile.display_name.as_deref(), Some("Alice"));
    assert_eq!(profile.real_name.as_deref(), Some("Alice Liddell"));
    assert_eq!(info.user.name.as_deref(), Some("alice"));

    // A trigger opens one view; again, unknown or expired, it is refused.
    let posted = post(&session, GENERAL, Some("q"), Some(question_blocks("q2")))
        .await
        .unwrap();
    let press = fake.press_button(&alice(), GENERAL, posted.ts.value(), "q2:yes");
    let modal: SlackView = serde_json::from_value(json!({
        "type": "modal",
        "callback_id": "why",
        "private_metadata": "ask:2",
        "title": {"type": "plain_text", "text": "Why?"},
        "submit": {"type": "plain_text", "text": "Send"},
        "blocks": [{"type": "input", "block_id": "reason", "label": {"type": "plain_text", "text": "Reason"},
                    "element": {"type": "plain_text_input", "action_id": "reason_input", "multiline": true}}],
    }))
    .unwrap();
    let views_open = |trigger: &str| SlackApiViewsOpenRequest::new(trigger.into(), modal.clone());
    let opened = session
        .views_open(&views_open(&press.trigger_id))
        .await
        .unwrap();
    let view_id = opened.view.state_params.id.value().clone();
    assert!(view_id.starts_with('V'));
    assert!(matches!(opened.view.view, SlackView::Modal(_)));
    let stored = fake.wait_for_view(press.id).await;
    assert_eq!(stored.callback_id(), Some("why"));
    assert_eq!(stored.user, alice().id);
    let again = api_error(session.views_open(&views_open(&press.trigger_id)).await);
    assert_eq!(again.code, "exchanged_trigger_id");
    let unknown = api_error(session.views_open(&views_open("123.456.abc")).await);
    assert_eq!(unknown.code, "invalid_trigger_id");
    let late = fake.press_button(&alice(), GENERAL, posted.ts.value(), "q2:no");
    assert!(fake.expire_trigger(&late.trigger_id));
    let expired = api_error(session.views_open(&views_open(&late.trigger_id)).await);
    assert_eq!(expired.code, "expired_trigger_id");

    // The submission, as slack-morphism reads it.
    let submitted = fake.submit_view(&alice(), &view_id, &[("reason_input", "too risky")]);
    let event: SlackInteractionEvent = serde_json::from_value(submitted.payload).unwrap();
    let SlackInteractionEvent::ViewSubmission(submission) = event else {
        panic!("expected view_submission, got {event:?}");
    };
    let values = submission.view.state_params.state.unwrap().values;
    let reason = &values[&"reason".into()][&"reason_input".into()];
    assert_eq!(reason.value.as_deref(), Some("too risky"));
    let SlackView::Modal(modal) = submission.view.view else {
        panic!("a modal")
    };
    assert_eq!(modal.private_metadata.as_deref(), Some("ask:2"));
    assert!(
        fake.envelope(submitted.envelope_id.as_deref().unwrap())
            .unwrap()
            .accepts_response_payload
    );
}

#[tokio::test]
async fn choices_deserialize_as_slack_morphism_expects() {
    let fake = started(FakeSlack::builder()).await;
    let client = client(&fake);
    let bot = token(&fake.bot_token());
    let posted = post(
        &client.open_session(&bot),
        GENERAL,
        Some("q"),
        Some(question_blocks("q3")),
    )
    .await
    .unwrap();
    let ts = posted.ts.value().clone();
    let action = |payload: Value| -> SlackInteractionActionInfo {
        let event: SlackInteractionEvent = serde_json::from_value(payload).unwrap();
        let SlackInteractionEvent::BlockActions(actions) = event else {
            panic!("expected block_actions, got {event:?}");
        };
        assert_eq!(actions.api_app_id.value(), APP_ID);
        assert!(actions.response_url.is_some());
        assert!(actions.message.is_some());
        actions.actions.unwrap().remove(0)
    };
    let pressed = action(fake.press_button(&bob(), GENERAL, &ts, "q3:yes").payload);
    assert_eq!(pressed.value.as_deref(), Some("yes"));
    assert_eq!(
        pressed.block_id.as_ref().map(|id| id.value().as_str()),
        Some("q3:actions")
    );
    let picked = action(
        fake.choose(&bob(), GENERAL, &ts, "q3:pick", &["blue"])
            .payload,
    );
    assert_eq!(picked.selected_option.unwrap().value, "blue");
    let many = action(
        fake.choose(&bob(), GENERAL, &ts, "q3:many", &["a", "b"])
            .payload,
    );
    let values: Vec<_> = many
        .selected_options
        .unwrap()
        .into_iter()
        .map(|o| o.value)
        .collect();
    assert_eq!(values, ["a", "b"]);
    let checked = action(
        fake.choose(&bob(), GENERAL, &ts, "q3:check", &["x"])
            .payload,
    );
    assert_eq!(checked.selected_options.unwrap()[0].value, "x");
}

// --- Socket Mode -----------------------------------------------------------

/// What the listener reported.
#[derive(Debug)]
enum Seen {
    /// `hello`, as slack-morphism parsed it (re-serialised: its type,
    /// `models::socket_mode::SlackSocketModeHelloEvent`, cannot be named
    /// outside the crate).
    Hello(Value),
    Interaction(Box<SlackInteractionEvent>),
    Push(Box<SlackPushEventCallback>),
}

/// The listener's user state: where to forward events, and how many push
/// events to fail (unacked) first.
struct Forward {
    events: mpsc::UnboundedSender<Seen>,
    fail_pushes: AtomicUsize,
}

async fn on_hello<E: serde::Serialize>(
    event: E,
    _client: Arc<SlackClient<Connector>>,
    state: SlackClientEventsUserState,
) {
    let guard = state.read().await;
    if let Some(forward) = guard.get_user_state::<Forward>() {
        let _ = forward
            .events
            .send(Seen::Hello(serde_json::to_value(&event).unwrap()));
    }
}

async fn on_interaction(
    event: SlackInteractionEvent,
    _client: Arc<SlackClient<Connector>>,
    state: SlackClientEventsUserState,
) -> UserCallbackResult<()> {
    let guard = state.read().await;
    if let Some(forward) = guard.get_user_state::<Forward>() {
        let _ = forward.events.send(Seen::Interaction(Box::new(event)));
    }
    Ok(())
}

async fn on_push(
    event: SlackPushEventCallback,
    _client: Arc<SlackClient<Connector>>,
    state: SlackClientEventsUserState,
) -> UserCallbackResult<()> {
    let guard = state.read().await;
    let Some(forward) = guard.get_user_state::<Forward>() else {
        return Ok(());
    };
    let failed = forward
        .fail_pushes
        .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |left| {
            left.checked_sub(1)
        })
        .is_ok();
    if failed {
        return Err("not now".into());
    }
    let _ = forward.events.send(Seen::Push(Box::new(event)));
    Ok(())
}

/// An error handler that makes slack-morphism skip the ack.
fn no_ack(
    _error: Box<dyn std::error::Error + Send + Sync>,
    _client: Arc<SlackClient<Connector>>,
    _state: SlackClientEventsUserState,
) -> HttpStatusCode {
    HttpStatusCode::INTERNAL_SERVER_ERROR
}

struct Bot {
    events: mpsc::UnboundedReceiver<Seen>,
    listener: SlackClientSocketModeListener<Connector>,
}

impl Bot {
    async fn start(fake: &FakeSlack, fail_pushes: usize) -> Bot {
        let (sender, events) = mpsc::unbounded_channel();
        let client = Arc::new(client(fake));
        let environment = Arc::new(
            SlackClientEventsListenerEnvironment::new(client)
                .with_error_handler(no_ack)
                .with_user_state(Forward {
                    events: sender,
                    fail_pushes: AtomicUsize::new(fail_pushes),
                }),
        );
        let callbacks = SlackSocketModeListenerCallbacks::new()
            .with_hello_events(on_hello)
            .with_interaction_events(on_interaction)
            .with_push_events(on_push);
        let config = SlackClientSocketModeConfig::new().with_max_connections_count(1);
        let listener = SlackClientSocketModeListener::new(&config, environment, callbacks);
        listener
            .listen_for(&token(&fake.app_token()))
            .await
            .unwrap();
        listener.start().await;
        Bot { events, listener }
    }

    async fn next<T>(&mut self, what: &str, mut pick: impl FnMut(Seen) -> Option<T>) -> T {
        let deadline = tokio::time::Instant::now() + EVENT_TIMEOUT;
        loop {
            let seen = tokio::time::timeout_at(deadline, self.events.recv())
                .await
                .unwrap_or_else(|_| {
                    panic!("slack-morphism reported no {what} in {EVENT_TIMEOUT:?}")
                })
                .unwrap_or_else(|| panic!("the listener stopped before {what}"));
            if let Some(found) = pick(seen) {
                return found;
            }
        }
    }

    async fn hello(&mut self) -> Value {
        self.next("hello", |seen| match seen {
            Seen::Hello(hello) => Some(hello),
            _ => None,
        })
        .await
    }

    async fn interaction(&mut self) -> SlackInteractionEvent {
        self.next("interaction", |seen| match seen {
            Seen::Interaction(event) => Some(*event),
            _ => None,
        })
        .await
    }

    /// The next user message event (the bot's own are skipped).
    async fn user_message(&mut self) -> SlackMessageEvent {
        self.next("message event", |seen| match seen {
            Seen::Push(push) => match push.event {
                SlackEventCallbackBody::Message(message)
                    if message.sender.bot_id.as_ref().map(|id| id.value().as_str())
                        != Some(BOT_ID) =>
                {
                    Some(message)
                }
                _ => None,
            },
            _ => None,
        })
        .await
    }

    async fn stop(self) {
        self.listener.shutdown().await;
    }
}

#[tokio::test]
async fn socket_mode_hello_interactions_acks_and_response_url() {
    let fake = started(FakeSlack::builder()).await;
    let mut bot = Bot::start(&fake, 0).await;
    let hello = bot.hello().await;
    assert_eq!(hello["num_connections"], 1);
    assert_eq!(hello["connection_info"]["app_id"], APP_ID);
    assert!(hello["debug_info"]["host"].is_string());

    let client = client(&fake);
    let bot_token = token(&fake.bot_token());
    let session = client.open_session(&bot_token);
    let posted = post(
        &session,
        GENERAL,
        Some("Deploy?"),
        Some(question_blocks("q4")),
    )
    .await
    .unwrap();
    let ts = posted.ts.value().clone();

    let press = fake.press_button(&alice(), GENERAL, &ts, "q4:yes");
    let SlackInteractionEvent::BlockActions(actions) = bot.interaction().await else {
        panic!("expected block_actions");
    };
    assert_eq!(actions.user.as_ref().unwrap().id.value(), &alice().id);
    assert_eq!(actions.trigger_id.value(), &press.trigger_id);
    assert_eq!(
        actions.actions.as_ref().unwrap()[0].action_id.value(),
        "q4:yes"
    );
    let SlackInteractionActionContainer::Message(container) = &actions.container else {
        panic!("a message container");
    };
    assert_eq!(container.message_ts.value(), &ts);
    let envelope = fake
        .wait_for_ack(press.envelope_id.as_deref().unwrap())
        .await;
    assert_eq!(envelope.deliveries, 1);
    assert_eq!(
        envelope.acks[0],
        json!({"envelope_id": envelope.envelope_id})
    );

    // The response URL, through slack-morphism's own client.
    let response_url = actions.response_url.unwrap();
    client
        .respond_to_event(
            &response_url,
            &SlackApiPostWebhookMessageRequest::new(
                SlackMessageContent::new().with_text("Deploying.".into()),
            )
            .with_replace_original(true),
        )
        .await
        .unwrap();
    client
        .respond_to_event(
            &response_url,
            &SlackApiPostWebhookMessageRequest::new(
                SlackMessageContent::new().with_text("Only you see this.".into()),
            ),
        )
        .await
        .unwrap();
    let record = fake.wait_for_responses(press.id, 2).await;
    assert_eq!(record.responses[0]["replace_original"], true);
    let edited = fake.message(GENERAL, &ts).unwrap();
    assert_eq!(edited.text, "Deploying.");
    assert_eq!(edited.history.len(), 1);
    let shown = fake.ephemerals_for(&alice().id);
    assert_eq!(shown[0].source, EphemeralSource::ResponseUrl);

    // A modal opened from the press, submitted, delivered and acked.
    let modal: SlackView = serde_json::from_value(json!({
        "type": "modal",
        "title": {"type": "plain_text", "text": "Why?"},
        "blocks": [{"type": "input", "block_id": "r", "label": {"type": "plain_text", "text": "Reason"},
                    "element": {"type": "plain_text_input", "action_id": "why"}}],
    }))
    .unwrap();
    let opened = session
        .views_open(&SlackApiViewsOpenRequest::new(actions.trigger_id, modal))
        .await
        .unwrap();
    let submitted = fake.submit_view(
        &alice(),
        opened.view.state_params.id.value(),
        &[("why", "risky")],
    );
    let SlackInteractionEvent::ViewSubmission(submission) = bot.interaction().await else {
        panic!("expected view_submission");
    };
    assert_eq!(submission.user.id.value(), &alice().id);
    fake.wait_for_ack(submitted.envelope_id.as_deref().unwrap())
        .await;
    bot.stop().await;
}

#[tokio::test]
async fn socket_mode_message_events() {
    let fake = started(FakeSlack::builder()).await;
    let dm = fake.dm_channel(&alice());
    let mut bot = Bot::start(&fake, 0).await;
    bot.hello().await;

    let top = fake.inject_message(IncomingMessage::new(GENERAL, alice().id, "hello bot"));
    let event = bot.user_message().await;
    assert_eq!(event.origin.channel.as_ref().unwrap().value(), GENERAL);
    assert_eq!(
        event.origin.channel_type.as_ref().unwrap().value(),
        "channel"
    );
    assert_eq!(event.origin.ts.value(), &top.ts);
    assert_eq!(event.sender.user.as_ref().unwrap().value(), &alice().id);
    assert_eq!(
        event.content.as_ref().unwrap().text.as_deref(),
        Some("hello bot")
    );

    fake.inject_message(IncomingMessage::new(GENERAL, bob().id, "in thread").in_thread(&top.ts));
    let reply = bot.user_message().await;
    assert_eq!(reply.origin.thread_ts.as_ref().unwrap().value(), &top.ts);

    fake.inject_message(IncomingMessage::new(&dm, alice().id, "psst"));
    let direct = bot.user_message().await;
    assert_eq!(direct.origin.channel_type.as_ref().unwrap().value(), "im");

    fake.inject_message(IncomingMessage::from_bot(GENERAL, "B0OTHER001", "beep"));
    let other = bot.user_message().await;
    assert!(matches!(
        other.subtype,
        Some(SlackMessageEventType::BotMessage)
    ));
    assert_eq!(other.sender.bot_id.as_ref().unwrap().value(), "B0OTHER001");

    // The bot's own messages come back as events too (with its bot_id).
    let client = client(&fake);
    let bot_token = token(&fake.bot_token());
    post(
        &client.open_session(&bot_token),
        GENERAL,
        Some("mine"),
        None,
    )
    .await
    .unwrap();
    fake.wait_for_all_acked().await;
    assert_eq!(fake.envelopes().len(), 5);
    bot.stop().await;
}

#[tokio::test]
async fn unacked_envelope_is_redelivered_with_retry_attempt() {
    let fake = started(FakeSlack::builder().ack_timeout(Duration::from_millis(300))).await;
    let mut bot = Bot::start(&fake, 1).await;
    bot.hello().await;
    let started_at = Instant::now();
    let injected = fake.inject_message(IncomingMessage::new(GENERAL, alice().id, "again?"));
    // The first delivery fails in the callback: slack-morphism does not
    // ack it; the fake sends it again after the ack timeout.
    let event = bot.user_message().await;
    assert_eq!(event.origin.ts.value(), &injected.ts);
    let envelope = fake.wait_for_ack(&injected.envelope_id).await;
    assert_eq!(envelope.deliveries, 2);
    assert_eq!(envelope.retry_attempt, 1);
    assert!(started_at.elapsed() >= Duration::from_millis(300));
    bot.stop().await;
}

#[tokio::test]
async fn dropped_connection_reconnects_and_delivers_pending_envelopes() {
    let fake = started(FakeSlack::builder()).await;
    let mut bot = Bot::start(&fake, 0).await;
    bot.hello().await;
    fake.drop_connection();
    let pending = fake.inject_message(IncomingMessage::new(GENERAL, alice().id, "still there?"));
    let event = bot.user_message().await;
    assert_eq!(event.origin.ts.value(), &pending.ts);
    fake.wait_for_ack(&pending.envelope_id).await;
    let stats = fake.wait_for_connections(2).await;
    assert_eq!(stats.dropped, 1);
    assert_eq!(fake.calls_to("apps.connections.open").len(), 2);

    // `disconnect` (refresh_requested): slack-morphism reconnects too.
    fake.send_disconnect("refresh_requested");
    bot.hello().await;
    fake.wait_for_connections(3).await;
    let after = fake.inject_message(IncomingMessage::new(GENERAL, bob().id, "refreshed"));
    let event = bot.user_message().await;
    assert_eq!(event.origin.ts.value(), &after.ts);
    assert!(fake.socket_stats().connections >= 3);
    bot.stop().await;
}

#[tokio::test]
async fn rate_limits_answer_429_with_retry_after() {
    let limits = RateLimits::off()
        .with(
            "chat.postMessage",
            Limit::bucket(1, Duration::from_secs(1)).per_channel(),
        )
        .with("users.info", Limit::bucket(1, Duration::from_secs(1)));
    let fake = started(FakeSlack::builder().rate_limits(limits)).await;
    let client = client(&fake);
    let bot = token(&fake.bot_token());
    let session = client.open_session(&bot);
    post(&session, GENERAL, Some("one"), None).await.unwrap();
    match post(&session, GENERAL, Some("two"), None).await {
        Err(SlackClientError::RateLimitError(limited)) => {
            assert_eq!(limited.retry_after, Some(Duration::from_secs(1)));
            assert_eq!(limited.code.as_deref(), Some("ratelimited"));
        }
        other => panic!("expected a rate limit error, got {other:?}"),
    }
    let call = fake.calls().pop().unwrap();
    assert_eq!(call.status, 429);
    assert_eq!(call.error.as_deref(), Some("ratelimited"));
    // Per channel: another channel is not limited.
    let dm = fake.dm_channel(&alice());
    post(&session, &dm, Some("elsewhere"), None).await.unwrap();

    // With rate control and retries, slack-morphism waits `Retry-After`
    // and tries again.
    let retrying = SlackClient::new(
        connector(&fake).with_rate_control(SlackApiRateControlConfig::new().with_max_retries(2)),
    );
    let session = retrying.open_session(&bot);
    let info = SlackApiUsersInfoRequest::new(alice().id.into());
    session.users_info(&info).await.unwrap();
    let started_at = Instant::now();
    session.users_info(&info).await.unwrap();
    assert!(started_at.elapsed() >= Duration::from_millis(900));
    let statuses: Vec<u16> = fake
        .calls_to("users.info")
        .iter()
        .map(|call| call.status)
        .collect();
    assert!(statuses.contains(&429), "{statuses:?}");
    assert_eq!(statuses.last(), Some(&200));
    assert!(fake.rate_limited_count() >= 2);
}

// --- HTTP mode ---------------------------------------------------------------

/// A tiny app endpoint that checks Slack's signature with slack-morphism's
/// verifier and parses the body with its models.
async fn endpoint(secret: String) -> String {
    let verifier = SlackEventSignatureVerifier::new(&secret.into());
    let app = axum::Router::new().route(
        "/slack",
        axum::routing::post(move |headers: HeaderMap, body: Bytes| {
            let verifier = verifier.clone();
            async move {
                let header = |name: &str| {
                    headers
                        .get(name)
                        .and_then(|value| value.to_str().ok())
                        .unwrap_or_default()
                        .to_owned()
                };
                let body = String::from_utf8(body.to_vec()).unwrap();
                let signature = header(SlackEventSignatureVerifier::SLACK_SIGNED_HASH_HEADER);
                let timestamp = header(SlackEventSignatureVerifier::SLACK_SIGNED_TIMESTAMP);
                if let Err(error) = verifier.verify(&signature, &body, &timestamp) {
                    return (StatusCode::UNAUTHORIZED, error.to_string());
                }
                let kind = if header("content-type") == "application/json" {
                    match serde_json::from_str::<SlackPushEvent>(&body).unwrap() {
                        SlackPushEvent::UrlVerification(verification) => {
                            return (StatusCode::OK, verification.challenge);
                        }
                        SlackPushEvent::EventCallback(_) => "event_callback",
                        SlackPushEvent::AppRateLimited(_) => "app_rate_limited",
                    }
                } else {
                    let decoded = url_decode(&body);
                    assert_eq!(decoded[0].0, "payload");
                    match serde_json::from_str::<SlackInteractionEvent>(&decoded[0].1).unwrap() {
                        SlackInteractionEvent::BlockActions(_) => "block_actions",
                        _ => "other interaction",
                    }
                };
                (StatusCode::OK, kind.to_owned())
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await });
    format!("http://{addr}/slack")
}

/// Form decoding for the test endpoint (through axum's own extractor
/// types would hide the raw body the signature covers).
fn url_decode(body: &str) -> Vec<(String, String)> {
    let uri: axum::http::Uri = format!("/?{body}").parse().unwrap();
    let axum::extract::Query(pairs) =
        axum::extract::Query::<Vec<(String, String)>>::try_from_uri(&uri).unwrap();
    pairs
}

#[tokio::test]
async fn http_mode_bodies_are_signed_like_slack() {
    let fake = started(FakeSlack::builder().signing_secret("s3cr3t-for-tests")).await;
    let signer = fake.signer();
    assert_eq!(signer.secret(), "s3cr3t-for-tests");

    // slack-morphism's verifier accepts the signature of a fresh body…
    let event = fake.message_http(IncomingMessage::new(GENERAL, alice().id, "over http"));
    assert_eq!(event.json()["type"], "event_callback");
    assert_eq!(event.json()["event"]["text"], "over http");
    let verifier = SlackEventSignatureVerifier::new(&"s3cr3t-for-tests".into());
    let signed = fake.sign(&event);
    verifier
        .verify(&signed.signature, &event.body, &signed.timestamp)
        .unwrap();
    // …but not an old one, nor another secret's.
    let now = signed.timestamp.parse::<u64>().unwrap();
    let old = signer.sign_at(now - 600, event.body.as_bytes());
    assert!(
        verifier
            .verify(&old.signature, &event.body, &old.timestamp)
            .is_err()
    );
    let forged = RequestSigner::new("wrong").sign_at(now, event.body.as_bytes());
    assert!(
        verifier
            .verify(&forged.signature, &event.body, &forged.timestamp)
            .is_err()
    );

    // Delivered to an endpoint that checks and parses them.
    let url = endpoint("s3cr3t-for-tests".to_owned()).await;
    let delivered = fake.deliver_http(&url, &event).await;
    assert_eq!(
        (delivered.status, delivered.body.as_str()),
        (200, "event_callback")
    );
    let challenge =
        fake.url_verification_http("3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P");
    let delivered = fake.deliver_http(&url, &challenge).await;
    assert_eq!(
        delivered.body,
        "3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P"
    );
    let client = client(&fake);
    let bot = token(&fake.bot_token());
    let posted = post(
        &client.open_session(&bot),
        GENERAL,
        Some("q"),
        Some(question_blocks("q5")),
    )
    .await
    .unwrap();
    let press = fake.press_button_http(&bob(), GENERAL, posted.ts.value(), "q5:no");
    assert_eq!(press.content_type, "application/x-www-form-urlencoded");
    assert!(
        press
            .body
            .starts_with("payload=%7B%22type%22%3A%22block_actions%22")
    );
    assert_eq!(press.json()["actions"][0]["value"], "no");
    let delivered = fake.deliver_http(&url, &press).await;
    assert_eq!(
        (delivered.status, delivered.body.as_str()),
        (200, "block_actions")
    );
    let replayed = fake
        .deliver_http_signed(
            &url,
            &press,
            &signer.sign_at(now - 600, press.body.as_bytes()),
        )
        .await;
    assert_eq!(replayed.status, 401);
    // HTTP-mode interactions are not sent over Socket Mode, but their
    // trigger and response URL work.
    let record = fake.interaction(press.interaction.unwrap()).unwrap();
    assert_eq!(record.envelope_id, None);
    assert!(record.response_url.is_some());
}

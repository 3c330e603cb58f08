//! Self-tests of the fake Feishu, with `reqwest` and `tokio-tungstenite`
//! acting as the app: the Open API's shapes and errors, the long
//! connection's protobuf frames, and HTTP callbacks checked by a small
//! endpoint that decrypts and verifies them with its own code.

#![allow(clippy::unwrap_used)]

use std::sync::{Arc, Mutex};
use std::time::Duration;

use aes::Aes256;
use askbridge_testkit::feishu::{
    APP_ID, APP_SECRET, CardFrameType, ClientConfig, EditSource, FakeFeishu, Forgery, Frame,
    PushKind, RateLimits, TENANT_KEY, Via,
};
use axum::body::Bytes;
use axum::http::{HeaderMap, StatusCode};
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use cbc::cipher::block_padding::Pkcs7;
use cbc::cipher::{BlockDecryptMut, KeyIvInit};
use futures_util::{SinkExt, StreamExt};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use tokio_tungstenite::tungstenite::Message as WsMessage;

const GENERAL: &str = "oc_general000000000000000000000001";
const ALICE: &str = "ou_alice0000000000000000000000001";
const BOB: &str = "ou_bob000000000000000000000000001";

/// How long a test waits for the fake to send something.
const FRAME_TIMEOUT: Duration = Duration::from_secs(10);

/// A fake with #general (the bot in it) and Alice and Bob.
async fn started(builder: askbridge_testkit::feishu::FakeFeishuBuilder) -> FakeFeishu {
    let fake = builder.start().await;
    fake.add_chat(GENERAL, "general");
    fake.add_user(ALICE, "Alice");
    fake.add_user(BOB, "Bob");
    fake
}

fn http() -> reqwest::Client {
    reqwest::Client::builder().no_proxy().build().unwrap()
}

/// A request to the fake: status, JSON body, headers.
async fn call(
    fake: &FakeFeishu,
    method: reqwest::Method,
    path: &str,
    token: Option<&str>,
    body: Option<Value>,
) -> (u16, Value, reqwest::header::HeaderMap) {
    let mut request = http().request(method, format!("{}{path}", fake.api_url()));
    if let Some(token) = token {
        request = request.bearer_auth(token);
    }
    if let Some(body) = body {
        request = request.json(&body);
    }
    let response = request.send().await.unwrap();
    let status = response.status().as_u16();
    let headers = response.headers().clone();
    let json = response.json().await.unwrap_or(Value::Null);
    (status, json, headers)
}

async fn token(fake: &FakeFeishu) -> String {
    let (status, body, _) = call(
        fake,
        reqwest::Method::POST,
        "/open-apis/auth/v3/tenant_access_token/internal",
        None,
        Some(json!({"app_id": APP_ID, "app_secret": APP_SECRET})),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    body["tenant_access_token"].as_str().unwrap().to_owned()
}

/// `POST /open-apis/im/v1/messages?receive_id_type=…`.
async fn send(
    fake: &FakeFeishu,
    token: &str,
    receive_id_type: &str,
    receive_id: &str,
    msg_type: &str,
    content: &str,
    uuid: Option<&str>,
) -> (u16, Value) {
    let mut body = json!({"receive_id": receive_id, "msg_type": msg_type, "content": content});
    if let Some(uuid) = uuid {
        body["uuid"] = json!(uuid);
    }
    let path = format!("/open-apis/im/v1/messages?receive_id_type={receive_id_type}");
    let (status, json, _) = call(fake, reqwest::Method::POST, &path, Some(token), Some(body)).await;
    (status, json)
}

async fn send_card(fake: &FakeFeishu, token: &str, card: &Value) -> String {
    let (status, body) = send(
        fake,
        token,
        "chat_id",
        GENERAL,
        "interactive",
        &card.to_string(),
        None,
    )
    .await;
    assert_eq!(status, 200, "{body}");
    body["data"]["message_id"].as_str().unwrap().to_owned()
}

fn option(value: &str) -> Value {
    json!({"text": {"tag": "plain_text", "content": value.to_uppercase()}, "value": value})
}

/// A card JSON 2.0 question: two buttons, a select, and a form.
fn question_card(title: &str) -> Value {
    json!({
        "schema": "2.0",
        "config": {"update_multi": true},
        "header": {"title": {"tag": "plain_text", "content": title}},
        "body": {"elements": [
            {"tag": "markdown", "content": "**Deploy** to prod?"},
            {"tag": "column_set", "columns": [{"tag": "column", "elements": [
                {"tag": "button", "name": "yes", "text": {"tag": "plain_text", "content": "Yes"},
                 "type": "primary", "behaviors": [{"type": "callback", "value": {"ask": "1", "choice": "yes"}}]},
                {"tag": "button", "name": "no", "text": {"tag": "plain_text", "content": "No"},
                 "type": "danger", "behaviors": [{"type": "callback", "value": {"ask": "1", "choice": "no"}}]},
            ]}]},
            {"tag": "select_static", "name": "color",
             "placeholder": {"tag": "plain_text", "content": "Pick"},
             "options": [option("red"), option("blue")],
             "behaviors": [{"type": "callback", "value": {"ask": "1", "field": "color"}}]},
            {"tag": "hr"},
            {"tag": "form", "name": "details", "elements": [
                {"tag": "input", "name": "why", "max_length": 200, "required": true,
                 "placeholder": {"tag": "plain_text", "content": "Why?"}},
                {"tag": "multi_select_static", "name": "envs", "options": [option("dev"), option("prod")]},
                {"tag": "checker", "name": "sure", "text": {"tag": "plain_text", "content": "Sure"}},
                {"tag": "button", "name": "send", "text": {"tag": "plain_text", "content": "Send"},
                 "type": "primary_filled", "form_action_type": "submit",
                 "behaviors": [{"type": "callback", "value": {"ask": "1", "form": "details"}}]},
            ]},
        ]},
    })
}

fn answered_card(text: &str) -> Value {
    json!({"schema": "2.0", "body": {"elements": [{"tag": "markdown", "content": text}]}})
}

#[tokio::test]
async fn tokens_bot_info_and_authorization_errors() {
    let fake = started(FakeFeishu::builder()).await;
    let path = "/open-apis/auth/v3/tenant_access_token/internal";
    let (status, body, _) = call(
        &fake,
        reqwest::Method::POST,
        path,
        None,
        Some(json!({"app_id": APP_ID, "app_secret": APP_SECRET})),
    )
    .await;
    assert_eq!(status, 200);
    assert_eq!(body["code"], 0);
    assert_eq!(body["msg"], "ok");
    assert_eq!(body["expire"], 7200);
    assert!(
        body.get("data").is_none(),
        "token and expire are at the top level"
    );
    let first = body["tenant_access_token"].as_str().unwrap().to_owned();
    assert!(first.starts_with("t-"));
    assert_eq!(
        token(&fake).await,
        first,
        "a token with 2 h left is handed out again"
    );

    let (status, body, _) = call(
        &fake,
        reqwest::Method::POST,
        path,
        None,
        Some(json!({"app_id": APP_ID, "app_secret": "wrong"})),
    )
    .await;
    assert_eq!((status, body["code"].as_i64()), (400, Some(10014)));
    assert_eq!(body["msg"], "app secret invalid");

    let info = "/open-apis/bot/v3/info";
    let (status, body, _) = call(&fake, reqwest::Method::GET, info, Some(&first), None).await;
    assert_eq!(status, 200);
    assert_eq!(body["bot"]["app_name"], "askbridge");
    assert_eq!(body["bot"]["activate_status"], 2);
    assert_eq!(body["bot"]["open_id"], fake.bot_open_id().as_str());
    assert_eq!(body["bot"]["ip_white_list"], json!([]));

    let (status, body, _) = call(&fake, reqwest::Method::GET, info, None, None).await;
    assert_eq!((status, body["code"].as_i64()), (400, Some(99_991_661)));
    let (status, body, _) = call(&fake, reqwest::Method::GET, info, Some("t-nope"), None).await;
    assert_eq!((status, body["code"].as_i64()), (400, Some(99_991_663)));

    fake.expire_tokens();
    let (_, body, _) = call(&fake, reqwest::Method::GET, info, Some(&first), None).await;
    assert_eq!(body["code"], 99_991_663, "expired tokens are refused");
    let fresh = token(&fake).await;
    assert_ne!(fresh, first);
    let (status, _, _) = call(&fake, reqwest::Method::GET, info, Some(&fresh), None).await;
    assert_eq!(status, 200);
    assert!(fake.calls_to("/bot/v3/info").len() >= 5);
}

#[tokio::test]
async fn short_token_lifetimes_hand_out_new_tokens() {
    let fake = started(FakeFeishu::builder().token_lifetime(Duration::from_secs(5))).await;
    let path = "/open-apis/auth/v3/tenant_access_token/internal";
    let body = Some(json!({"app_id": APP_ID, "app_secret": APP_SECRET}));
    let (_, first, _) = call(&fake, reqwest::Method::POST, path, None, body.clone()).await;
    let (_, second, _) = call(&fake, reqwest::Method::POST, path, None, body).await;
    assert_eq!(first["expire"], 5);
    assert_ne!(
        first["tenant_access_token"], second["tenant_access_token"],
        "under 30 minutes left: a new token"
    );
    for token in [&first, &second] {
        let token = token["tenant_access_token"].as_str().unwrap();
        let (status, _, _) = call(
            &fake,
            reqwest::Method::GET,
            "/open-apis/bot/v3/info",
            Some(token),
            None,
        )
        .await;
        assert_eq!(status, 200, "the older token stays valid until it expires");
    }
}

#[tokio::test]
async fn ephemeral_cards_are_for_one_person_of_a_group() {
    let fake = started(FakeFeishu::builder()).await;
    let token = token(&fake).await;
    let card = json!({"schema": "2.0", "body": {"elements": [{"tag": "markdown", "content": "Only you"}]}});
    let send = |body: Value| {
        call(
            &fake,
            reqwest::Method::POST,
            "/open-apis/ephemeral/v1/send",
            Some(&token),
            Some(body),
        )
    };
    let (status, body, _) = send(
        json!({"chat_id": GENERAL, "open_id": ALICE, "msg_type": "interactive", "card": card}),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    let message_id = body["data"]["message_id"].as_str().unwrap().to_owned();
    let shown = fake.wait_for_ephemerals(ALICE, 1).await;
    assert_eq!(shown[0].message_id, message_id);
    assert_eq!(shown[0].chat_id, GENERAL);
    assert_eq!(shown[0].card, card);
    assert!(fake.bot_messages().is_empty());

    // (body, code): a text message, no card, a stranger, an unknown group.
    let refused = [
        (
            json!({"chat_id": GENERAL, "open_id": ALICE, "msg_type": "text", "card": card}),
            99_992_402,
        ),
        (
            json!({"chat_id": GENERAL, "open_id": ALICE, "msg_type": "interactive"}),
            99_992_402,
        ),
        (
            json!({"chat_id": GENERAL, "open_id": "ou_nobody", "msg_type": "interactive", "card": card}),
            230_001,
        ),
        (
            json!({"chat_id": "oc_elsewhere", "open_id": ALICE, "msg_type": "interactive", "card": card}),
            230_002,
        ),
    ];
    for (body, code) in refused {
        let (status, answer, _) = send(body.clone()).await;
        assert_eq!(
            (status, answer["code"].as_i64()),
            (400, Some(code)),
            "{body}: {answer}"
        );
    }
}

#[tokio::test]
async fn sends_replies_and_p2p_chats() {
    let fake = started(FakeFeishu::builder()).await;
    let token = token(&fake).await;
    let (status, body) = send(
        &fake,
        &token,
        "chat_id",
        GENERAL,
        "text",
        r#"{"text":"hello"}"#,
        None,
    )
    .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["msg"], "success");
    let data = &body["data"];
    let message_id = data["message_id"].as_str().unwrap().to_owned();
    assert!(message_id.starts_with("om_"));
    assert_eq!(data["chat_id"], GENERAL);
    assert_eq!(data["msg_type"], "text");
    assert_eq!(data["deleted"], false);
    assert_eq!(data["updated"], false);
    assert_eq!(data["body"]["content"], r#"{"text":"hello"}"#);
    assert_eq!(
        data["sender"],
        json!({"id": APP_ID, "id_type": "app_id", "sender_type": "app", "tenant_key": TENANT_KEY})
    );
    assert!(data["create_time"].as_str().unwrap().parse::<u64>().is_ok());
    assert!(data.get("root_id").is_none());

    let reply = format!("/open-apis/im/v1/messages/{message_id}/reply");
    let (status, body, _) = call(
        &fake,
        reqwest::Method::POST,
        &reply,
        Some(&token),
        Some(json!({"msg_type": "text", "content": r#"{"text":"in thread"}"#, "reply_in_thread": true})),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["data"]["parent_id"], message_id.as_str());
    assert_eq!(body["data"]["root_id"], message_id.as_str());
    assert!(
        body["data"]["thread_id"]
            .as_str()
            .unwrap()
            .starts_with("omt_")
    );
    assert_eq!(body["data"]["chat_id"], GENERAL);

    let (status, body) = send(
        &fake,
        &token,
        "open_id",
        ALICE,
        "text",
        r#"{"text":"hi"}"#,
        None,
    )
    .await;
    assert_eq!(status, 200, "{body}");
    let p2p = fake.p2p_chat(ALICE);
    assert_eq!(body["data"]["chat_id"], p2p.as_str());
    assert!(p2p.starts_with("oc_"));
    let messages = fake.messages_in(&p2p);
    assert_eq!(messages.len(), 1);
    assert_eq!(messages[0].chat_type, "p2p");
    assert_eq!(messages[0].text(), Some("hi"));
    assert_eq!(fake.wait_for_bot_messages(3).await.len(), 3);
}

#[tokio::test]
async fn refusals_use_feishus_codes() {
    let fake = started(FakeFeishu::builder()).await;
    let token = token(&fake).await;
    let text = r#"{"text":"x"}"#;
    let code = |body: &Value| body["code"].as_i64().unwrap();

    let (status, body, _) = call(
        &fake,
        reqwest::Method::POST,
        "/open-apis/im/v1/messages",
        Some(&token),
        Some(json!({"receive_id": GENERAL, "msg_type": "text", "content": text})),
    )
    .await;
    assert_eq!((status, code(&body)), (400, 99_992_402));
    assert_eq!(
        body["error"]["field_violations"][0]["field"],
        "receive_id_type"
    );

    let (status, body) = send(&fake, &token, "chat_id", "oc_unknown", "text", text, None).await;
    assert_eq!((status, code(&body)), (400, 230_002));
    assert_eq!(body["msg"], "The bot can not be outside the group.");
    let (_, body) = send(&fake, &token, "open_id", "ou_stranger", "text", text, None).await;
    assert_eq!(code(&body), 230_013);
    assert_eq!(body["msg"], "Bot has NO availability to this user.");

    let (_, body) = send(&fake, &token, "chat_id", GENERAL, "text", "not json", None).await;
    assert_eq!(code(&body), 230_001);
    assert!(body["msg"].as_str().unwrap().contains("not JSON"), "{body}");
    let (_, body) = send(&fake, &token, "chat_id", GENERAL, "post", text, None).await;
    assert_eq!(code(&body), 230_001);
    let long = json!({"text": "x".repeat(150 * 1024)}).to_string();
    let (_, body) = send(&fake, &token, "chat_id", GENERAL, "text", &long, None).await;
    assert_eq!(code(&body), 230_025);

    let bad_cards = [
        (json!({"schema": "1.0", "body": {"elements": []}}), "schema"),
        (
            json!({"schema": "2.0", "body": {"elements": [{"tag": "hr"}, {"tag": "hr"}, {"tag": "img"}]}}),
            "body.elements[2].tag",
        ),
        (
            json!({"schema": "2.0", "body": {"elements": [{"tag": "form", "name": "f", "elements": [
                {"tag": "input", "name": "i"}]}]}}),
            "submit",
        ),
        (
            json!({"schema": "2.0", "body": {"elements": [
                {"tag": "button", "name": "a", "text": {"content": "A"}},
                {"tag": "button", "name": "a", "text": {"content": "B"}}]}}),
            "used twice",
        ),
    ];
    for (card, expected) in bad_cards {
        let (status, body) = send(
            &fake,
            &token,
            "chat_id",
            GENERAL,
            "interactive",
            &card.to_string(),
            None,
        )
        .await;
        assert_eq!((status, code(&body)), (400, 230_099), "{body}");
        let msg = body["msg"].as_str().unwrap();
        assert!(msg.contains(expected), "{msg:?} should name {expected:?}");
    }
    let big = json!({"schema": "2.0", "body": {"elements": [
        {"tag": "markdown", "content": "x".repeat(31 * 1024)}]}});
    let (_, body) = send(
        &fake,
        &token,
        "chat_id",
        GENERAL,
        "interactive",
        &big.to_string(),
        None,
    )
    .await;
    assert_eq!(code(&body), 230_025);

    let card_id = send_card(&fake, &token, &question_card("Q")).await;
    let (_, sent) = send(&fake, &token, "chat_id", GENERAL, "text", text, None).await;
    let text_id = sent["data"]["message_id"].as_str().unwrap().to_owned();
    let patch = |id: &str| format!("/open-apis/im/v1/messages/{id}");
    let card = json!({"content": answered_card("done").to_string()});
    let (_, body, _) = call(
        &fake,
        reqwest::Method::PATCH,
        &patch(&text_id),
        Some(&token),
        Some(card.clone()),
    )
    .await;
    assert_eq!(code(&body), 230_001, "only cards can be patched: {body}");
    let users = fake.send_text(GENERAL, ALICE, "@bot hi", None);
    let (_, body, _) = call(
        &fake,
        reqwest::Method::PATCH,
        &patch(&users.message_id),
        Some(&token),
        Some(card.clone()),
    )
    .await;
    assert_eq!(code(&body), 230_012);
    let (_, body, _) = call(
        &fake,
        reqwest::Method::PATCH,
        &patch("om_unknown"),
        Some(&token),
        Some(card.clone()),
    )
    .await;
    assert_eq!(code(&body), 230_001);

    fake.recall(&text_id);
    let (_, body, _) = call(
        &fake,
        reqwest::Method::POST,
        &format!("/open-apis/im/v1/messages/{text_id}/reply"),
        Some(&token),
        Some(json!({"msg_type": "text", "content": text})),
    )
    .await;
    assert_eq!(code(&body), 230_011);

    fake.remove_bot_from(GENERAL);
    let (_, body) = send(&fake, &token, "chat_id", GENERAL, "text", text, None).await;
    assert_eq!(code(&body), 230_002);
    let (_, body, _) = call(
        &fake,
        reqwest::Method::PATCH,
        &patch(&card_id),
        Some(&token),
        Some(card.clone()),
    )
    .await;
    assert_eq!(code(&body), 230_002);
    fake.add_bot_to(GENERAL);
    let (status, _, _) = call(
        &fake,
        reqwest::Method::PATCH,
        &patch(&card_id),
        Some(&token),
        Some(card),
    )
    .await;
    assert_eq!(status, 200);
    fake.delete_chat(GENERAL);
    let (_, body) = send(&fake, &token, "chat_id", GENERAL, "text", text, None).await;
    assert_eq!(code(&body), 230_002);
    assert!(fake.calls().iter().filter(|call| !call.ok()).count() >= 15);
}

#[tokio::test]
async fn the_same_uuid_within_an_hour_sends_once() {
    let fake = started(FakeFeishu::builder()).await;
    let token = token(&fake).await;
    let content = r#"{"text":"once"}"#;
    let (_, first) = send(
        &fake,
        &token,
        "chat_id",
        GENERAL,
        "text",
        content,
        Some("ask-1"),
    )
    .await;
    let (_, again) = send(
        &fake,
        &token,
        "chat_id",
        GENERAL,
        "text",
        content,
        Some("ask-1"),
    )
    .await;
    assert_eq!(first["data"]["message_id"], again["data"]["message_id"]);
    let (_, other) = send(
        &fake,
        &token,
        "chat_id",
        GENERAL,
        "text",
        content,
        Some("ask-2"),
    )
    .await;
    assert_ne!(first["data"]["message_id"], other["data"]["message_id"]);
    assert_eq!(fake.messages_in(GENERAL).len(), 2);
    assert_eq!(
        fake.message(first["data"]["message_id"].as_str().unwrap())
            .unwrap()
            .uuid
            .as_deref(),
        Some("ask-1")
    );
}

#[tokio::test]
async fn rate_limits_answer_429_and_230020() {
    let fake =
        started(FakeFeishu::builder().rate_limits(RateLimits::off().app_per_second(3))).await;
    let token = token(&fake).await;
    let content = r#"{"text":"x"}"#;
    let chat_b = "oc_second000000000000000000000002";
    fake.add_chat(chat_b, "second");
    for chat in [GENERAL, chat_b, GENERAL] {
        let (status, body) = send(&fake, &token, "chat_id", chat, "text", content, None).await;
        assert_eq!(status, 200, "{body}");
    }
    let path = "/open-apis/im/v1/messages?receive_id_type=chat_id";
    let (status, body, headers) = call(
        &fake,
        reqwest::Method::POST,
        path,
        Some(&token),
        Some(json!({"receive_id": chat_b, "msg_type": "text", "content": content})),
    )
    .await;
    assert_eq!(status, 429);
    assert_eq!(
        body,
        json!({"code": 99_991_400, "msg": "request trigger frequency limit"})
    );
    assert_eq!(headers["x-ogw-ratelimit-limit"], "3");
    assert!(
        headers["x-ogw-ratelimit-reset"]
            .to_str()
            .unwrap()
            .parse::<u64>()
            .unwrap()
            >= 1
    );
    assert_eq!(fake.rate_limited_count(), 1);

    // Feishu's limits: 5 messages a second per chat (sends and replies),
    // 5 edits a second per message.
    fake.set_rate_limits(RateLimits::feishu());
    let mut last = String::new();
    for _ in 0..5 {
        let (status, body) = send(&fake, &token, "chat_id", chat_b, "text", content, None).await;
        assert_eq!(status, 200, "{body}");
        last = body["data"]["message_id"].as_str().unwrap().to_owned();
    }
    let reply = format!("/open-apis/im/v1/messages/{last}/reply");
    let (status, body, _) = call(
        &fake,
        reqwest::Method::POST,
        &reply,
        Some(&token),
        Some(json!({"msg_type": "text", "content": content})),
    )
    .await;
    assert_eq!(
        (status, body["code"].as_i64()),
        (400, Some(230_020)),
        "{body}"
    );
    assert_eq!(body["msg"], "This operation triggers the frequency limit.");
    let (status, _) = send(&fake, &token, "open_id", ALICE, "text", content, None).await;
    assert_eq!(status, 200, "another chat has its own count");
    assert_eq!(fake.rate_limited_count(), 2);

    fake.set_rate_limits(RateLimits::off().edits_per_second(1));
    let card_id = send_card(&fake, &token, &question_card("Q")).await;
    let patch = format!("/open-apis/im/v1/messages/{card_id}");
    let edit = json!({"content": answered_card("1").to_string()});
    let (status, _, _) = call(
        &fake,
        reqwest::Method::PATCH,
        &patch,
        Some(&token),
        Some(edit.clone()),
    )
    .await;
    assert_eq!(status, 200);
    let (status, body, _) = call(
        &fake,
        reqwest::Method::PATCH,
        &patch,
        Some(&token),
        Some(edit),
    )
    .await;
    assert_eq!((status, body["code"].as_i64()), (400, Some(230_020)));
    assert_eq!(fake.rate_limited_count(), 3);
    assert_eq!(fake.message(&card_id).unwrap().edit_count(), 1);
}

/// What the test's callback endpoint received, decrypted.
#[derive(Default)]
struct Received {
    payloads: Vec<Value>,
}

/// Decrypts like the Feishu guide says: base64, iv = first 16 bytes,
/// AES-256-CBC with SHA-256(key), PKCS#7.
fn decrypt(key: &str, encrypted: &str) -> Option<Vec<u8>> {
    let bytes = STANDARD.decode(encrypted).ok()?;
    let (iv, sealed) = bytes.split_at_checked(16)?;
    let key = Sha256::digest(key.as_bytes());
    cbc::Decryptor::<Aes256>::new_from_slices(&key, iv)
        .ok()?
        .decrypt_padded_vec_mut::<Pkcs7>(sealed)
        .ok()
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|byte| format!("{byte:02x}")).collect()
}

/// A callback endpoint: checks the signature (and timestamp age) when
/// there is a key, decrypts, checks the verification token, answers
/// challenges, toasts card callbacks (with a new card for "yes"), and
/// `{}` to events.
async fn endpoint(key: Option<String>, token: String) -> (String, Arc<Mutex<Received>>) {
    let received = Arc::new(Mutex::new(Received::default()));
    let shared = Arc::clone(&received);
    let handler = move |headers: HeaderMap, body: Bytes| {
        let key = key.clone();
        let token = token.clone();
        let shared = Arc::clone(&shared);
        async move {
            let header = |name: &str| {
                headers
                    .get(name)
                    .and_then(|value| value.to_str().ok())
                    .unwrap_or_default()
                    .to_owned()
            };
            let outer: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
            let plain: Value = match &key {
                Some(key) => {
                    let Some(encrypted) = outer["encrypt"].as_str() else {
                        return (StatusCode::BAD_REQUEST, "not encrypted".to_owned());
                    };
                    let Some(plain) = decrypt(key, encrypted) else {
                        return (StatusCode::BAD_REQUEST, "cannot decrypt".to_owned());
                    };
                    serde_json::from_slice(&plain).unwrap()
                }
                None => outer,
            };
            if plain["type"] == "url_verification" {
                if plain["token"] != token.as_str() {
                    return (StatusCode::UNAUTHORIZED, "bad token".to_owned());
                }
                return (
                    StatusCode::OK,
                    json!({"challenge": plain["challenge"]}).to_string(),
                );
            }
            if let Some(key) = &key {
                let timestamp = header("X-Lark-Request-Timestamp");
                let mut signed =
                    format!("{timestamp}{}{key}", header("X-Lark-Request-Nonce")).into_bytes();
                signed.extend_from_slice(&body);
                if hex(&Sha256::digest(&signed)) != header("X-Lark-Signature") {
                    return (StatusCode::UNAUTHORIZED, "bad signature".to_owned());
                }
                let now = std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .unwrap()
                    .as_secs();
                if timestamp
                    .parse::<u64>()
                    .map_or(true, |at| now.abs_diff(at) > 300)
                {
                    return (StatusCode::UNAUTHORIZED, "stale".to_owned());
                }
            }
            if plain["header"]["token"] != token.as_str() {
                return (StatusCode::UNAUTHORIZED, "bad token".to_owned());
            }
            shared.lock().unwrap().payloads.push(plain.clone());
            if plain["header"]["event_type"] == "card.action.trigger" {
                let action = &plain["event"]["action"];
                let mut answer = json!({"toast": {"type": "success", "content": format!("got {}", action["value"])}});
                if action["value"]["choice"] == "yes" {
                    answer["card"] = json!({"type": "raw", "data": answered_card("Answered: yes")});
                }
                return (StatusCode::OK, answer.to_string());
            }
            (StatusCode::OK, "{}".to_owned())
        }
    };
    let app = axum::Router::new().route("/feishu", axum::routing::post(handler));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/feishu", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    (url, received)
}

#[tokio::test]
async fn card_pressed_through_an_encrypted_webhook_then_patched() {
    let fake = started(FakeFeishu::builder()).await;
    let (url, received) = endpoint(fake.encrypt_key(), fake.verification_token()).await;
    fake.set_callback_url(Some(&url));
    let verification = fake.url_verification().await;
    assert!(verification.verified, "{verification:?}");

    let token = token(&fake).await;
    let card_id = send_card(&fake, &token, &question_card("Deploy?")).await;

    let outcome = fake.press(&card_id, ALICE, "No").await;
    assert!(outcome.succeeded(), "{outcome:?}");
    assert_eq!(outcome.status, Some(200));
    assert_eq!(outcome.toast.as_ref().unwrap()["type"], "success");
    assert!(outcome.toast_text().unwrap().contains("\"no\""));
    assert_eq!(outcome.card, None);
    assert_eq!(fake.message(&card_id).unwrap().edit_count(), 0);

    let outcome = fake.press(&card_id, ALICE, "yes").await;
    assert!(outcome.succeeded(), "{outcome:?}");
    assert_eq!(outcome.card, Some(answered_card("Answered: yes")));
    let answered = fake.wait_for_edits(&card_id, 1).await;
    assert_eq!(answered.latest().source, EditSource::CallbackAnswer);
    assert_eq!(answered.card(), Some(&answered_card("Answered: yes")));

    {
        let received = received.lock().unwrap();
        let payload = &received.payloads[1];
        assert_eq!(payload["schema"], "2.0");
        assert_eq!(payload["header"]["event_type"], "card.action.trigger");
        assert_eq!(payload["header"]["app_id"], APP_ID);
        let event = &payload["event"];
        assert_eq!(
            event["action"],
            json!({"value": {"ask": "1", "choice": "yes"}, "tag": "button", "name": "yes"})
        );
        assert_eq!(event["operator"]["open_id"], ALICE);
        assert_eq!(event["host"], "im_message");
        assert_eq!(event["context"]["open_message_id"], card_id.as_str());
        assert_eq!(event["context"]["open_chat_id"], GENERAL);
        assert!(event["token"].as_str().unwrap().starts_with("c-"));
    }

    // Buttons are read from the latest version: "yes" is gone now.
    let patch = format!("/open-apis/im/v1/messages/{card_id}");
    let (status, body, _) = call(
        &fake,
        reqwest::Method::PATCH,
        &patch,
        Some(&token),
        Some(json!({"content": question_card("Again?").to_string()})),
    )
    .await;
    assert_eq!((status, &body["code"]), (200, &json!(0)), "{body}");
    let message = fake.wait_for_edits(&card_id, 2).await;
    assert_eq!(message.versions.len(), 3);
    assert_eq!(message.latest().source, EditSource::Patch);
    assert_eq!(
        message.card().unwrap()["header"]["title"]["content"],
        "Again?"
    );

    let outcome = fake
        .submit_form(
            &card_id,
            BOB,
            "send",
            json!({"why": "tested", "envs": ["dev", "prod"], "sure": true}),
        )
        .await;
    assert!(outcome.succeeded(), "{outcome:?}");
    let outcome = fake.select(&card_id, BOB, "color", &["blue"]).await;
    assert!(outcome.succeeded(), "{outcome:?}");
    let received = received.lock().unwrap();
    let form = &received.payloads[2]["event"]["action"];
    assert_eq!(form["tag"], "button");
    assert_eq!(form["name"], "send");
    assert_eq!(form["value"], json!({"ask": "1", "form": "details"}));
    assert_eq!(
        form["form_value"],
        json!({"why": "tested", "envs": ["dev", "prod"], "sure": true})
    );
    let select = &received.payloads[3]["event"]["action"];
    assert_eq!(select["tag"], "select_static");
    assert_eq!(select["option"], "blue");
    assert_eq!(select["value"], json!({"ask": "1", "field": "color"}));

    let pushes = fake.pushes();
    assert_eq!(pushes.len(), 4);
    assert!(
        pushes
            .iter()
            .all(|push| push.kind == PushKind::CardCallback && push.succeeded())
    );
    assert!(matches!(pushes[0].deliveries[0].via, Via::Http { .. }));
    assert!(pushes[0].answer().unwrap().latency < Duration::from_secs(3));
}

#[tokio::test]
async fn the_webhook_refuses_forgeries() {
    let fake = started(FakeFeishu::builder()).await;
    let (url, received) = endpoint(fake.encrypt_key(), fake.verification_token()).await;
    fake.set_callback_url(Some(&url));
    for forgery in [
        Forgery::BadSignature,
        Forgery::OldTimestamp,
        Forgery::Unencrypted,
        Forgery::WrongVerificationToken,
    ] {
        let delivery = fake.send_forged(forgery).await;
        assert_ne!(
            delivery.status, 200,
            "{forgery:?} was accepted: {delivery:?}"
        );
    }
    assert!(received.lock().unwrap().payloads.is_empty());
    let sent = fake.send_text(&fake.p2p_chat(ALICE), ALICE, "a real one", None);
    let push = fake.wait_for_answer(sent.push.unwrap()).await;
    assert!(push.succeeded(), "{push:?}");
    assert_eq!(received.lock().unwrap().payloads.len(), 1);
}

#[tokio::test]
async fn without_an_encrypt_key_callbacks_are_plain() {
    let fake = started(FakeFeishu::builder().no_encrypt_key()).await;
    let (url, received) = endpoint(None, fake.verification_token()).await;
    fake.set_callback_url(Some(&url));
    assert!(fake.url_verification().await.verified);
    let sent = fake.send_text(GENERAL, BOB, "@bot status?", None);
    let push = fake.wait_for_answer(sent.push.unwrap()).await;
    assert!(push.succeeded(), "{push:?}");
    let payload = received.lock().unwrap().payloads[0].clone();
    assert_eq!(
        payload["event"]["message"]["content"],
        r#"{"text":"@_user_1 status?"}"#
    );
}

#[tokio::test]
async fn group_messages_reach_the_app_only_when_they_mention_the_bot() {
    let fake = started(FakeFeishu::builder()).await;
    let quiet = fake.send_text(GENERAL, ALICE, "just chatting", None);
    assert_eq!(quiet.push, None);
    let mention = fake.send_text(GENERAL, ALICE, "@bot 2", Some(&quiet.message_id));
    let push = fake.push(mention.push.unwrap()).unwrap();
    let message = &push.payload["event"]["message"];
    assert_eq!(message["content"], r#"{"text":"@_user_1 2"}"#);
    assert_eq!(message["chat_type"], "group");
    assert_eq!(message["parent_id"], quiet.message_id.as_str());
    assert_eq!(message["root_id"], quiet.message_id.as_str());
    assert_eq!(message["mentions"][0]["key"], "@_user_1");
    assert_eq!(
        message["mentions"][0]["id"]["open_id"],
        fake.bot_open_id().as_str()
    );
    assert_eq!(message["mentions"][0]["name"], "askbridge");
    assert_eq!(
        push.payload["event"]["sender"]["sender_id"]["open_id"],
        ALICE
    );
    assert_eq!(push.payload["event"]["sender"]["sender_type"], "user");
    assert_eq!(
        push.payload["header"]["event_type"],
        "im.message.receive_v1"
    );
    assert_eq!(
        push.deliveries[0].via,
        Via::Queued,
        "no long connection yet"
    );
    assert_eq!(fake.messages_in(GENERAL).len(), 2);

    let everything = started(FakeFeishu::builder().receive_all_group_messages(true)).await;
    assert!(
        everything
            .send_text(GENERAL, ALICE, "just chatting", None)
            .push
            .is_some()
    );
}

/// The long connection, as the app: the endpoint's URL, the WebSocket.
struct Connection {
    socket: tokio_tungstenite::WebSocketStream<
        tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>,
    >,
    service: i32,
}

async fn connect(fake: &FakeFeishu) -> (Connection, Value) {
    let response = http()
        .post(format!("{}/callback/ws/endpoint", fake.api_url()))
        .header("locale", "zh")
        .json(&json!({"AppID": APP_ID, "AppSecret": APP_SECRET}))
        .send()
        .await
        .unwrap();
    let body: Value = response.json().await.unwrap();
    assert_eq!(body["code"], 0, "{body}");
    let url = body["data"]["URL"].as_str().unwrap().to_owned();
    let service = url
        .split("service_id=")
        .nth(1)
        .and_then(|rest| rest.split('&').next())
        .and_then(|id| id.parse().ok())
        .unwrap();
    assert!(url.contains("device_id="), "{url}");
    let (socket, _) = tokio_tungstenite::connect_async(&url).await.unwrap();
    (
        Connection { socket, service },
        body["data"]["ClientConfig"].clone(),
    )
}

impl Connection {
    async fn next_frame(&mut self) -> Frame {
        loop {
            let message = tokio::time::timeout(FRAME_TIMEOUT, self.socket.next())
                .await
                .expect("a frame from the fake in time")
                .expect("the connection is open")
                .unwrap();
            if let WsMessage::Binary(bytes) = message {
                return Frame::from_bytes(&bytes).unwrap();
            }
        }
    }

    async fn send(&mut self, frame: &Frame) {
        self.socket
            .send(WsMessage::Binary(frame.to_bytes()))
            .await
            .unwrap();
    }

    /// Answers a data frame like Feishu's SDKs: the same frame, `biz_rt`
    /// added, payload `{"code", "headers", "data": base64(body)}`.
    async fn answer(&mut self, mut frame: Frame, code: u16, body: Option<&Value>) {
        frame.push_header("biz_rt", "3");
        let mut payload = json!({"code": code, "headers": {}});
        if let Some(body) = body {
            payload["data"] = json!(STANDARD.encode(body.to_string()));
        }
        frame.payload = Some(payload.to_string().into_bytes());
        self.send(&frame).await;
    }
}

#[tokio::test]
async fn long_connection_pings_pushes_and_answers() {
    let config = ClientConfig {
        reconnect_nonce: 0,
        ..ClientConfig::default()
    };
    let fake = started(FakeFeishu::builder().client_config(config).ping_interval(5)).await;
    let (mut conn, client_config) = connect(&fake).await;
    assert_eq!(
        client_config,
        json!({"ReconnectCount": -1, "ReconnectInterval": 120, "ReconnectNonce": 0, "PingInterval": 5})
    );
    fake.wait_for_open_connections(1).await;

    conn.send(&Frame::ping(conn.service)).await;
    let pong = conn.next_frame().await;
    assert_eq!(pong.method, 0);
    assert_eq!(pong.header("type"), Some("pong"));
    let pushed_config: Value = serde_json::from_slice(pong.payload_bytes()).unwrap();
    assert_eq!(pushed_config["PingInterval"], 5);

    let sent = fake.send_text(&fake.p2p_chat(ALICE), ALICE, "hello bot", None);
    let frame = conn.next_frame().await;
    assert_eq!(frame.method, 1);
    assert_eq!(frame.service, conn.service);
    assert_eq!(frame.header("type"), Some("event"));
    assert_eq!(frame.header("sum"), Some("1"));
    assert_eq!(frame.header("seq"), Some("0"));
    assert!(frame.header("trace_id").is_some());
    let event: Value = serde_json::from_slice(frame.payload_bytes()).unwrap();
    assert_eq!(event["header"]["event_type"], "im.message.receive_v1");
    assert_eq!(
        event["event"]["message"]["message_id"],
        sent.message_id.as_str()
    );
    assert_eq!(event["event"]["message"]["chat_type"], "p2p");
    conn.answer(frame, 200, None).await;
    let push = fake.wait_for_answer(sent.push.unwrap()).await;
    assert!(push.succeeded(), "{push:?}");
    let answer = push.answer().unwrap();
    assert!(answer.frame_headers.iter().any(|(key, _)| key == "biz_rt"));
    assert!(matches!(
        push.deliveries[0].via,
        Via::LongConnection { connection: 1, .. }
    ));

    // A card callback over the long connection, answered with a toast and
    // a new card.
    let token = token(&fake).await;
    let card_id = send_card(&fake, &token, &question_card("Deploy?")).await;
    let (pressed, ()) = tokio::join!(fake.press(&card_id, BOB, "yes"), async {
        let frame = conn.next_frame().await;
        assert_eq!(frame.header("type"), Some("event"));
        let callback: Value = serde_json::from_slice(frame.payload_bytes()).unwrap();
        assert_eq!(callback["header"]["event_type"], "card.action.trigger");
        assert_eq!(callback["event"]["action"]["value"]["choice"], "yes");
        let body = json!({"toast": {"type": "info", "content": "Recorded"},
                          "card": {"type": "raw", "data": answered_card("Yes, by Bob")}});
        conn.answer(frame, 200, Some(&body)).await;
    });
    assert!(pressed.succeeded(), "{pressed:?}");
    assert_eq!(pressed.toast_text(), Some("Recorded"));
    assert_eq!(
        fake.wait_for_edits(&card_id, 1).await.card(),
        Some(&answered_card("Yes, by Bob"))
    );

    // An invalid card in the answer: Feishu shows an error, nothing changes.
    let second = send_card(&fake, &token, &question_card("Again?")).await;
    let (pressed, ()) = tokio::join!(fake.press(&second, BOB, "No"), async {
        let frame = conn.next_frame().await;
        let bad = json!({"schema": "2.0", "body": {"elements": [{"tag": "video"}]}});
        conn.answer(
            frame,
            200,
            Some(&json!({"card": {"type": "raw", "data": bad}})),
        )
        .await;
    });
    let failure = pressed.failure.unwrap();
    assert!(failure.contains("body.elements[0].tag"), "{failure}");
    assert_eq!(fake.message(&second).unwrap().edit_count(), 0);

    // A handler error (500) is a failed callback too.
    let (pressed, ()) = tokio::join!(fake.select(&second, BOB, "color", &["red"]), async {
        let frame = conn.next_frame().await;
        conn.answer(frame, 500, None).await;
    });
    assert_eq!(pressed.status, Some(500));
    assert!(!pressed.succeeded());

    let stats = fake.connection_stats();
    assert_eq!((stats.opened, stats.open, stats.pings), (1, 1, 1));
    assert_eq!(stats.answers, 4);
    assert_eq!(stats.unexpected_frames, 0);
}

#[tokio::test]
async fn unanswered_pushes_time_out_and_events_are_redelivered() {
    let fake = started(FakeFeishu::builder().callback_timeout(Duration::from_millis(200))).await;
    let token = token(&fake).await;
    let card_id = send_card(&fake, &token, &question_card("Q")).await;
    // No connection: the user sees an error after the timeout.
    let pressed = fake.press(&card_id, ALICE, "yes").await;
    assert!(pressed.failure.unwrap().contains("no long connection"));
    assert_eq!(pressed.status, None);

    let (mut conn, _) = connect(&fake).await;
    let sent = fake.send_text(&fake.p2p_chat(ALICE), ALICE, "are you there?", None);
    let first = conn.next_frame().await;
    let push = fake.wait_for_answer(sent.push.unwrap()).await;
    assert!(
        push.deliveries[0]
            .failure
            .as_ref()
            .unwrap()
            .contains("no answer within")
    );

    fake.redeliver(push.id);
    let again = conn.next_frame().await;
    assert_ne!(again.header("message_id"), first.header("message_id"));
    let first_event: Value = serde_json::from_slice(first.payload_bytes()).unwrap();
    let again_event: Value = serde_json::from_slice(again.payload_bytes()).unwrap();
    assert_eq!(
        first_event["header"]["event_id"],
        again_event["header"]["event_id"]
    );
    conn.answer(again, 200, None).await;
    let push = fake.wait_for_answer(push.id).await;
    assert_eq!(push.deliveries.len(), 2);
    assert!(push.deliveries[1].succeeded(), "{push:?}");
    assert!(push.succeeded());
}

#[tokio::test]
async fn dropped_connections_reconnect_and_queued_events_wait() {
    let fake = started(FakeFeishu::builder().card_frame_type(CardFrameType::Card)).await;
    let (first, _) = connect(&fake).await;
    let (mut second, _) = connect(&fake).await;
    assert_eq!(fake.wait_for_open_connections(2).await.opened, 2);

    fake.drop_connections();
    let stats = fake.wait_for_open_connections(0).await;
    assert_eq!(stats.ended_by_fake, 2);
    let closed = tokio::time::timeout(FRAME_TIMEOUT, second.socket.next())
        .await
        .unwrap();
    assert!(
        !matches!(closed, Some(Ok(WsMessage::Binary(_)))),
        "{closed:?}"
    );
    drop(first);

    let sent = fake.send_text(&fake.p2p_chat(BOB), BOB, "while you were away", None);
    assert_eq!(
        fake.push(sent.push.unwrap()).unwrap().deliveries[0].via,
        Via::Queued
    );
    let (mut third, _) = connect(&fake).await;
    let frame = third.next_frame().await;
    let event: Value = serde_json::from_slice(frame.payload_bytes()).unwrap();
    assert_eq!(
        event["event"]["message"]["message_id"],
        sent.message_id.as_str()
    );
    third.answer(frame, 200, None).await;
    assert!(fake.wait_for_answer(sent.push.unwrap()).await.succeeded());

    // Card callbacks in frames of type "card" when asked.
    let token = token(&fake).await;
    let card_id = send_card(&fake, &token, &question_card("Q")).await;
    let (pressed, ()) = tokio::join!(fake.press(&card_id, BOB, "no"), async {
        let frame = third.next_frame().await;
        assert_eq!(frame.header("type"), Some("card"));
        third.answer(frame, 200, Some(&json!({}))).await;
    });
    assert!(pressed.succeeded(), "{pressed:?}");
    assert_eq!(pressed.answer, Some(json!({})));

    fake.close_connections();
    let closed = tokio::time::timeout(FRAME_TIMEOUT, third.socket.next())
        .await
        .unwrap();
    assert!(
        matches!(closed, Some(Ok(WsMessage::Close(_)))),
        "{closed:?}"
    );
    let stats = fake.wait_for_open_connections(0).await;
    assert_eq!((stats.opened, stats.endpoints), (3, 3));

    // Endpoint refusals: wrong secret; a used ticket.
    let (_, body, _) = call(
        &fake,
        reqwest::Method::POST,
        "/callback/ws/endpoint",
        None,
        Some(json!({"AppID": APP_ID, "AppSecret": "wrong"})),
    )
    .await;
    assert_eq!(body["code"], 10014);
}

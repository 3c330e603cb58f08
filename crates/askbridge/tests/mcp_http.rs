//! `/mcp`'s streamable HTTP itself, spoken by hand: a body that is not
//! JSON-RPC is a `400` with a JSON-RPC error, and a 2025-11-25 client that
//! resumes a dropped stream (`Last-Event-ID`) gets the result it missed —
//! and no other session's.

use std::time::Duration;

use serde_json::{Value, json};

mod daemon;
mod mcp_raw;
use daemon::{Api, Daemon};
use mcp_raw::{Http, deploy_ask};

/// POSTs `body` to `/mcp` as JSON; returns the status and the JSON body.
async fn post_raw(daemon: &Daemon, body: &'static str) -> (u16, Value) {
    let response = daemon::client()
        .post(daemon.url("/mcp"))
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .body(body)
        .send()
        .await
        .expect("POST /mcp");
    let status = response.status().as_u16();
    let body = response.json().await.expect("a JSON body");
    (status, body)
}

#[tokio::test]
async fn a_body_that_is_no_json_rpc_is_a_400_with_a_json_rpc_error() {
    let daemon = Daemon::start();
    let (status, body) = post_raw(&daemon, r#"{"jsonrpc": "2.0", "id": 1, "method": "#).await;
    assert_eq!(status, 400, "{body}");
    assert_eq!(body["jsonrpc"], json!("2.0"), "{body}");
    assert_eq!(body["id"], Value::Null, "{body}");
    assert_eq!(body["error"]["code"], json!(-32700), "{body}");

    let (status, body) = post_raw(&daemon, r#"{"id": 7, "hello": "there"}"#).await;
    assert_eq!(status, 400, "{body}");
    assert_eq!(body["id"], json!(7), "{body}");
    assert_eq!(body["error"]["code"], json!(-32600), "{body}");
}

#[tokio::test]
async fn a_result_given_while_the_stream_was_down_is_replayed_on_resume() {
    let daemon = Daemon::start();
    let mut mcp = Http::initialize(&daemon.url("/mcp"), json!({})).await;
    let mut call = mcp
        .start(
            "tools/call",
            json!({"name": "ask_user", "arguments": deploy_ask(), "_meta": {"progressToken": 1}}),
        )
        .await;
    let progress = call.next().await;
    assert_eq!(
        progress["method"],
        json!("notifications/progress"),
        "{progress}"
    );
    let last_seen = call
        .last_event_id()
        .expect("the progress event has an id")
        .to_owned();
    let request = call.id();
    drop(call);

    let api = Api::of(&daemon);
    let id = api.pending_ids().await.pop().expect("the ask");
    api.reply(&id, json!({"answers": {"deploy_target": ["Production"]}}))
        .await;
    // The result goes out while no stream is open.
    daemon.wait_for_log("ask_user returns the outcome", Duration::from_secs(30));

    let answer = mcp
        .resume(request, &last_seen)
        .await
        .answer()
        .await
        .unwrap_or_else(|error| panic!("the resumed call failed: {error}"));
    let outcome = &answer["structuredContent"];
    assert_eq!(outcome["id"], json!(id), "{answer}");
    assert_eq!(outcome["status"], json!("answered"), "{answer}");
    assert_eq!(
        outcome["answers"]["deploy_target"],
        json!(["Production"]),
        "{answer}"
    );
}

#[tokio::test]
async fn a_session_resuming_with_another_sessions_event_id_gets_nothing_of_it() {
    let daemon = Daemon::start();
    let mut alice = Http::initialize(&daemon.url("/mcp"), json!({})).await;
    let bob = Http::initialize(&daemon.url("/mcp"), json!({})).await;
    let mut call = alice
        .start(
            "tools/call",
            json!({"name": "ask_user", "arguments": deploy_ask(), "_meta": {"progressToken": 1}}),
        )
        .await;
    call.next().await;
    let alices = call
        .last_event_id()
        .expect("the progress event has an id")
        .to_owned();
    let request = call.id();
    drop(call);
    let api = Api::of(&daemon);
    let id = api.pending_ids().await.pop().expect("the ask");
    api.reply(&id, json!({"answers": {"deploy_target": ["Production"]}}))
        .await;
    daemon.wait_for_log("ask_user returns the outcome", Duration::from_secs(30));

    // What an id nobody was given gets: an empty event stream.
    let unknown = bob.resume_to_end("e-never-given").await;
    assert_eq!(unknown.0, 200, "{unknown:?}");
    assert!(!unknown.1.contains("data:"), "{unknown:?}");
    // Alice's real id, and guesses: the first ids ever given once, and
    // Alice's with its secret part changed.
    let refused = |given: String, got: (u16, String)| {
        assert_eq!(got, unknown, "Bob resuming after {given:?}");
        assert!(!got.1.contains(&id), "{got:?}");
        assert!(!got.1.contains("Production"), "{got:?}");
    };
    for given in [alices.as_str(), "e0", "e1", "0"] {
        refused(given.to_owned(), bob.resume_to_end(given).await);
    }
    let (number, _) = alices.split_once('-').expect("e{n}-{secret}");
    let guessed = format!("{number}-{}", "0".repeat(32));
    refused(guessed.clone(), bob.resume_to_end(&guessed).await);

    // The result was there all along, for Alice.
    let answer = alice
        .resume(request, &alices)
        .await
        .answer()
        .await
        .unwrap_or_else(|error| panic!("the resumed call failed: {error}"));
    assert_eq!(answer["structuredContent"]["id"], json!(id), "{answer}");
    assert_eq!(
        answer["structuredContent"]["answers"]["deploy_target"],
        json!(["Production"]),
        "{answer}"
    );
}

//! `ask_user` for MCP 2026-07-28 clients, end to end with the official
//! Python SDK pinned to that revision (`tests/mcp/rounds.py`): the host's
//! dialog by `input_required` round trips, a sealed `requestState` that
//! survives a restart and refuses tampering, and a dropped call whose ask
//! stays open for `get_answer`. A 2025-11-25 client talks to the same
//! daemon in the same test, unchanged.

use std::time::Duration;

use serde_json::{Value, json};

mod daemon;
mod mcp_client;
use daemon::{Api, Daemon};
use mcp_client::{Client, assert_answered};

/// How long the daemon may take to notice a closed stream.
const NOTICE: Duration = Duration::from_secs(30);

/// The one pending ask (the round trip created exactly one).
async fn the_only_ask(api: &Api<'_>) -> String {
    let pending = api.pending_ids().await;
    assert_eq!(pending.len(), 1, "one ask, not {pending:?}");
    pending[0].clone()
}

/// Checks an `input_required` result: the host's form for the deploy ask,
/// and an opaque state.
fn assert_asks_for_the_form(event: &Value) {
    let result = &event["result"];
    assert_eq!(result["resultType"], json!("input_required"), "{event}");
    let form = &result["inputRequests"]["form"];
    assert_eq!(form["method"], json!("elicitation/create"), "{event}");
    assert_eq!(form["params"]["message"], json!("Release 2.4"), "{event}");
    assert_eq!(
        form["params"]["requestedSchema"]["properties"]["deploy_target"]["default"],
        json!("Staging"),
        "{event}"
    );
    assert!(result["requestState"].is_string(), "{event}");
}

fn assert_via(result: &Value, via: &str) {
    assert_eq!(
        result["structuredContent"]["details"][0]["via"],
        json!(via),
        "{result}"
    );
}

#[tokio::test]
async fn the_host_answers_or_declines_by_round_trips_beside_a_2025_client() {
    let daemon = Daemon::start();
    let url = daemon.url("/mcp");

    let mut accept = Client::rounds_http("accept", &url, &[]);
    assert_eq!(
        accept.until("connected").await["protocol"],
        json!("2026-07-28")
    );
    let form = accept.until("elicitation").await;
    assert_eq!(form["params"]["message"], json!("Release 2.4"), "{form}");
    let result = accept.until("result").await["result"].clone();
    let id = result["structuredContent"]["id"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    assert_answered(&result, &id, "Production");
    assert_via(&result, "host");
    accept.finish().await;

    let mut decline = Client::rounds_http("decline", &url, &[]);
    let result = decline.until("result").await["result"].clone();
    assert_eq!(result["structuredContent"]["status"], json!("no_answer"));
    assert_eq!(
        result["structuredContent"]["reason"],
        json!("skipped"),
        "{result}"
    );
    decline.finish().await;

    // A 2025-11-25 client on the same daemon still gets the form sent to it.
    let mut legacy = Client::http("elicit_accept", &url);
    legacy.until("elicitation").await;
    let result = legacy.until("result").await["result"].clone();
    assert_via(&result, "host");
    legacy.finish().await;
}

#[tokio::test]
async fn a_web_answer_while_the_form_is_open_is_what_the_retry_returns() {
    let daemon = Daemon::start();
    let api = Api::of(&daemon);
    let mut client = Client::rounds_http("hold", &daemon.url("/mcp"), &[]);
    assert_asks_for_the_form(&client.until("input_required").await);
    let id = the_only_ask(&api).await;
    api.reply(
        &id,
        json!({"answers": {"deploy_target": ["Staging (Recommended)"]}}),
    )
    .await;
    client.say("retry").await;
    let result = client.until("result").await["result"].clone();
    assert_answered(&result, &id, "Staging (Recommended)");
    assert_via(&result, "web");
    client.finish().await;
}

#[tokio::test]
async fn a_retry_after_a_restart_finds_its_ask() {
    let mut daemon = Daemon::on_a_fixed_port();
    let mut client = Client::rounds_http("hold", &daemon.url("/mcp"), &[]);
    assert_asks_for_the_form(&client.until("input_required").await);
    let id = the_only_ask(&Api::of(&daemon)).await;
    daemon.restart();
    client.say("retry").await;
    let result = client.until("result").await["result"].clone();
    assert_answered(&result, &id, "Production");
    assert_via(&result, "host");
    client.finish().await;
    assert!(Api::of(&daemon).pending_ids().await.is_empty());
}

#[tokio::test]
async fn a_changed_or_foreign_state_is_refused_and_answers_nothing() {
    let daemon = Daemon::start();
    let api = Api::of(&daemon);
    let mut client = Client::rounds_http("tampered", &daemon.url("/mcp"), &[]);
    assert_asks_for_the_form(&client.until("input_required").await);
    for state in ["changed", "foreign"] {
        let refused = client.until("refused").await;
        assert_eq!(refused["state"], json!(state), "{refused}");
        assert_eq!(refused["code"], json!(-32602), "{refused}");
        assert!(
            refused["message"]
                .as_str()
                .is_some_and(|message| message.contains("requestState")),
            "{refused}"
        );
    }
    client.finish().await;
    let id = the_only_ask(&api).await;
    assert_eq!(api.ask(&id).await["status"], json!("pending"));
}

#[tokio::test]
async fn a_dropped_call_leaves_its_ask_open_for_get_answer() {
    let daemon = Daemon::start();
    let url = daemon.url("/mcp");
    let mut client = Client::rounds_http("abandon", &url, &[]);
    let id = client.until("abandoning").await["id"]
        .as_str()
        .expect("the ask id in the first progress message")
        .to_owned();
    daemon.wait_for_log("the ask stays open for get_answer", NOTICE);
    let api = Api::of(&daemon);
    assert_eq!(api.ask(&id).await["status"], json!("pending"));
    api.reply(&id, json!({"answers": {"deploy_target": ["Production"]}}))
        .await;

    let mut later = Client::rounds_http("get_answer", &url, &[&id]);
    let result = later.until("result").await["result"].clone();
    assert_answered(&result, &id, "Production");
    later.finish().await;
}

#[tokio::test]
async fn the_forwarder_passes_the_round_trips_through() {
    let daemon = Daemon::start();
    let base = daemon.base();
    let mut client = Client::rounds_stdio("accept", &["mcp", "--server", &base]);
    client.until("elicitation").await;
    let result = client.until("result").await["result"].clone();
    assert_via(&result, "host");
    assert_eq!(
        result["structuredContent"]["answers"]["deploy_target"],
        json!(["Production"]),
        "{result}"
    );
    client.finish().await;
}

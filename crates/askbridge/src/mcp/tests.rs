//! The tool handlers called directly with an in-process [`Bridge`]: no
//! transport, no daemon. Tests wait on progress reports and results, never
//! on the clock.

use std::time::Duration;

use askbridge_core::lifecycle::Input;
use askbridge_core::model::Responder;
use askbridge_core::model::{ChannelKind, Target};
use askbridge_core::outcome::Via;
use rmcp::model::{CallToolResult, JsonObject};
use serde_json::{Value, json};
use tokio::sync::{mpsc, oneshot};

use super::backend::{Backend, Snapshot};
use super::{Hangup, McpServer, ProgressUpdate};
use crate::bridge::{Bridge, BridgeOptions};

/// A bridge on an in-memory database (nothing left behind on disk).
async fn bridge() -> Bridge {
    let bridge = Bridge::open(BridgeOptions::new(
        "sqlite::memory:",
        Target::parse("web").expect("web is a target"),
    ))
    .await
    .expect("open the bridge");
    bridge.add_channel(crate::web::channel());
    bridge
}

fn server(bridge: &Bridge, interval: Duration) -> McpServer {
    McpServer::new(Backend::Local(bridge.clone()), interval)
}

fn args(value: Value) -> JsonObject {
    match value {
        Value::Object(map) => map,
        other => panic!("arguments must be an object, got {other}"),
    }
}

/// The ask every MCP test sends (shared with the end-to-end tests).
fn deploy_ask() -> JsonObject {
    args(serde_json::from_str(include_str!("../../tests/mcp/deploy_ask.json")).expect("valid JSON"))
}

fn text_of(result: &CallToolResult) -> String {
    result
        .content
        .iter()
        .filter_map(|c| c.as_text().map(|t| t.text.clone()))
        .collect::<Vec<_>>()
        .join("\n")
}

fn structured(result: &CallToolResult) -> Value {
    result
        .structured_content
        .clone()
        .unwrap_or_else(|| panic!("no structured content in {}", text_of(result)))
}

async fn answer(bridge: &Bridge, id: &str, label: &str) {
    let input = Input::Answers {
        from: Responder {
            channel: ChannelKind::Web,
            user_id: "alice".to_owned(),
            name: Some("Alice".to_owned()),
            place: None,
        },
        admitted: true,
        answers: vec![("deploy_target".to_owned(), vec![label.to_owned()])],
        via: Via::Web,
    };
    bridge.handle(id, input).await.expect("answer the ask");
}

/// Starts `ask_user` in a task; returns its progress reports, a switch that
/// cancels the call, and the call.
fn start_ask(
    server: &McpServer,
    arguments: JsonObject,
) -> (
    mpsc::UnboundedReceiver<ProgressUpdate>,
    oneshot::Sender<()>,
    tokio::task::JoinHandle<CallToolResult>,
) {
    let (progress, updates) = mpsc::unbounded_channel();
    let (cancel, cancelled) = oneshot::channel::<()>();
    let server = server.clone();
    let call = tokio::spawn(async move {
        server
            .ask_user(arguments, progress, async move {
                if cancelled.await.is_err() {
                    std::future::pending::<()>().await;
                }
            })
            .await
    });
    (updates, cancel, call)
}

async fn next(updates: &mut mpsc::UnboundedReceiver<ProgressUpdate>) -> ProgressUpdate {
    updates.recv().await.expect("a progress report")
}

#[tokio::test]
async fn an_invalid_ask_is_a_tool_error_naming_the_path() {
    let bridge = bridge().await;
    let result = server(&bridge, Duration::from_secs(15))
        .ask_user(
            args(json!({"questions": [{"question": "Which?", "type": "single", "options": [{"label": "Only"}]}]})),
            (),
            std::future::pending(),
        )
        .await;
    assert_eq!(result.is_error, Some(true));
    let text = text_of(&result);
    assert!(text.contains("questions[0].options"), "{text}");
    assert!(text.contains("at least 2 options"), "{text}");
}

#[tokio::test]
async fn an_invalid_elicitation_is_named_with_the_asks_own_problems() {
    let bridge = bridge().await;
    let result = server(&bridge, Duration::from_secs(15))
        .ask_user(
            args(json!({"elicitation": "sometimes", "questions": []})),
            (),
            std::future::pending(),
        )
        .await;
    assert_eq!(result.is_error, Some(true));
    let text = text_of(&result);
    assert!(text.contains("- questions:"), "{text}");
    assert!(
        text.contains(r#"- elicitation: expected "also", "only" or "off", got "sometimes""#),
        "{text}"
    );
}

#[test]
fn the_asks_own_elicitation_overrides_the_configured_one() {
    use crate::config::Elicitation;
    let server = |configured| {
        McpServer::new(
            Backend::Remote(
                crate::mcp::daemon::DaemonClient::new("http://127.0.0.1:1").expect("a URL"),
            ),
            Duration::from_secs(15),
        )
        .with_elicitation(configured)
    };
    let with = |elicitation: Value| {
        let mut arguments = deploy_ask();
        arguments.insert("to".into(), json!("telegram:42"));
        if !elicitation.is_null() {
            arguments.insert("elicitation".into(), elicitation);
        }
        arguments
    };
    let telegram = Some(Target::parse("telegram:42").expect("a target"));
    let web = Some(Target::parse("web").expect("a target"));
    for (configured, given, can, in_host, target) in [
        (Elicitation::Also, Value::Null, true, true, &telegram),
        (Elicitation::Also, json!("off"), true, false, &telegram),
        (Elicitation::Also, json!("only"), true, true, &web),
        (Elicitation::Also, json!("only"), false, false, &telegram),
        (Elicitation::Off, Value::Null, true, false, &telegram),
        (Elicitation::Off, json!("also"), true, true, &telegram),
        (Elicitation::Only, Value::Null, true, true, &web),
        (Elicitation::Only, json!("also"), true, true, &telegram),
    ] {
        let (ask, shown) = server(configured)
            .read_ask(with(given.clone()), can)
            .expect("a valid ask");
        assert_eq!(
            (shown, &ask.target),
            (in_host, target),
            "{configured:?} / {given} / can {can}"
        );
    }
}

#[tokio::test]
async fn ask_user_returns_the_outcome_once_answered() {
    let bridge = bridge().await;
    let server = server(&bridge, Duration::from_secs(15));
    let (mut updates, _cancel, call) = start_ask(&server, deploy_ask());
    let first = next(&mut updates).await;
    assert_eq!(first.progress, 0.0);
    assert!(
        first.message.contains(&format!("ask id {}", first.ask_id)),
        "{}",
        first.message
    );
    answer(&bridge, &first.ask_id, "Staging").await;
    let result = call.await.expect("the call finishes");
    assert_eq!(result.is_error, Some(false), "{}", text_of(&result));
    let outcome = structured(&result);
    assert_eq!(outcome["id"], json!(first.ask_id));
    assert_eq!(outcome["status"], json!("answered"));
    assert_eq!(outcome["reason"], Value::Null);
    assert_eq!(
        outcome["answers"],
        json!({"deploy_target": ["Staging (Recommended)"]})
    );
    assert!(text_of(&result).contains("Continue the previous task"));
}

#[tokio::test]
async fn ask_user_reports_progress_every_interval_while_waiting() {
    let bridge = bridge().await;
    let server = server(&bridge, Duration::from_millis(20));
    let (mut updates, _cancel, call) = start_ask(&server, deploy_ask());
    let first = next(&mut updates).await;
    let second = next(&mut updates).await;
    let third = next(&mut updates).await;
    assert!(first.progress < second.progress && second.progress < third.progress);
    for update in [&second, &third] {
        assert_eq!(update.ask_id, first.ask_id);
        assert!(update.message.contains(&first.ask_id), "{}", update.message);
        assert_eq!(update.total, Some(900.0));
    }
    answer(&bridge, &first.ask_id, "Production").await;
    let outcome = structured(&call.await.expect("the call finishes"));
    assert_eq!(outcome["answers"], json!({"deploy_target": ["Production"]}));
}

#[tokio::test]
async fn a_cancelled_call_cancels_the_ask() {
    let bridge = bridge().await;
    let server = server(&bridge, Duration::from_secs(15));
    let (mut updates, cancel, call) = start_ask(&server, deploy_ask());
    let id = next(&mut updates).await.ask_id;
    cancel.send(()).expect("the call is waiting");
    let outcome = structured(&call.await.expect("the call finishes"));
    assert_eq!(outcome["status"], json!("no_answer"));
    assert_eq!(outcome["reason"], json!("cancelled"));
    let view = bridge.get(&id).await.expect("the ask exists");
    assert_eq!(view.state.as_str(), "cancelled");
}

#[tokio::test]
async fn closing_the_connection_cancels_asks_still_waiting() {
    let bridge = bridge().await;
    let server = server(&bridge, Duration::from_secs(15));
    let (mut updates, _cancel, call) = start_ask(&server, deploy_ask());
    let id = next(&mut updates).await.ask_id;
    server.cancel_inflight().await;
    let outcome = structured(&call.await.expect("the call finishes"));
    assert_eq!(outcome["reason"], json!("cancelled"));
    assert_eq!(
        bridge
            .get(&id)
            .await
            .expect("the ask exists")
            .state
            .as_str(),
        "cancelled"
    );
}

#[tokio::test]
async fn get_answer_gives_the_pending_status_then_the_outcome() {
    let bridge = bridge().await;
    let server = server(&bridge, Duration::from_secs(15));
    let (mut updates, _cancel, call) = start_ask(&server, deploy_ask());
    let id = next(&mut updates).await.ask_id;

    let pending = server
        .get_answer(args(json!({"id": id})), (), std::future::pending())
        .await;
    assert_eq!(pending.is_error, Some(false), "{}", text_of(&pending));
    let status = structured(&pending);
    assert_eq!(status["status"], json!("pending"));
    assert_eq!(status["id"], json!(id));
    assert_eq!(status["open"], json!(["deploy_target"]));
    assert!(status.get("expiresAt").is_some());
    assert!(text_of(&pending).contains("get_answer"));

    let later = {
        let server = server.clone();
        let id = id.clone();
        tokio::spawn(async move {
            server
                .get_answer(
                    args(json!({"id": id, "waitSeconds": 600})),
                    (),
                    std::future::pending(),
                )
                .await
        })
    };
    answer(&bridge, &id, "Staging").await;
    let outcome = structured(&later.await.expect("get_answer finishes"));
    assert_eq!(outcome["status"], json!("answered"));
    assert_eq!(structured(&call.await.expect("ask_user finishes")), outcome);
}

#[tokio::test]
async fn get_answer_for_an_unknown_id_is_a_tool_error() {
    let bridge = bridge().await;
    let server = server(&bridge, Duration::from_secs(15));
    let result = server
        .get_answer(args(json!({"id": "ask_nope"})), (), std::future::pending())
        .await;
    assert_eq!(result.is_error, Some(true));
    assert!(
        text_of(&result).contains("ask_nope"),
        "{}",
        text_of(&result)
    );
    let missing = server
        .get_answer(args(json!({})), (), std::future::pending())
        .await;
    assert_eq!(missing.is_error, Some(true));
    assert!(
        text_of(&missing).starts_with("id:"),
        "{}",
        text_of(&missing)
    );
}

#[tokio::test]
async fn an_ask_past_its_deadline_reports_the_timeout_outcome() {
    let bridge = bridge().await;
    let backend = Backend::Local(bridge.clone());
    let ask = askbridge_core::normalize::normalize_json(&Value::Object(deploy_ask()))
        .expect("valid ask")
        .ask;
    let created = backend.create(&ask).await.expect("create");
    assert!(matches!(created.snapshot, Snapshot::Pending(_)));
    let outcome = backend.expire(&created.id, &ask).await.expect("expire");
    assert_eq!(outcome["status"], json!("no_answer"));
    assert_eq!(outcome["reason"], json!("timeout"));
    assert_eq!(outcome["id"], json!(created.id));
}

#[tokio::test]
async fn the_host_and_the_web_answering_at_once_give_one_answer() {
    let bridge = bridge().await;
    let backend = Backend::Local(bridge.clone());
    let ask = askbridge_core::normalize::normalize_json(&Value::Object(deploy_ask()))
        .expect("valid ask")
        .ask;
    for _ in 0..20 {
        let id = backend.create(&ask).await.expect("create").id;
        let host = backend.reply_from_host(
            &id,
            Some(vec![(
                "deploy_target".to_owned(),
                vec!["Production".to_owned()],
            )]),
            Some("claude-code".to_owned()),
        );
        let (host, ()) = tokio::join!(host, answer(&bridge, &id, "Staging"));
        let host_won = host.expect("the host's answer is recorded or refused");
        let outcome = match backend.wait(&id, Duration::ZERO).await.expect("read") {
            Snapshot::Ended(outcome) => outcome,
            Snapshot::Pending(pending) => panic!("still pending: {pending}"),
        };
        let (via, label) = if host_won {
            ("host", "Production")
        } else {
            ("web", "Staging (Recommended)")
        };
        assert_eq!(outcome["details"][0]["via"], json!(via), "{outcome}");
        assert_eq!(
            outcome["answers"]["deploy_target"],
            json!([label]),
            "{outcome}"
        );
    }
}

#[tokio::test]
async fn unknown_tools_are_protocol_errors() {
    let bridge = bridge().await;
    let error = server(&bridge, Duration::from_secs(15))
        .call_tool_with(
            "ask_someone",
            JsonObject::new(),
            None,
            (),
            std::future::pending(),
            Hangup::CancelsTheAsk,
        )
        .await
        .expect_err("unknown tool");
    assert!(error.message.contains("ask_someone"));
}

//! `askbridge ask` end to end: the binary against a real `askbridge serve`
//! (answered and cancelled through its HTTP API), and its errors without
//! one. Tests wait on process output, never on the clock.

use std::process::Output;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::AsyncReadExt;
use tokio::process::{Child, Command};

mod daemon;
use daemon::{Api, Daemon, client};

const BINARY: &str = env!("CARGO_BIN_EXE_askbridge");

/// How long any one step may take before the test gives up.
const STEP: Duration = Duration::from_secs(60);

const ASK: &str = r#"{
  "title": "Release 2.4",
  "questions": [{
    "id": "deploy_target",
    "header": "Deploy",
    "question": "Where should I deploy the build?",
    "options": [{"label": "Staging (Recommended)"}, {"label": "Production"}]
  }]
}"#;

/// `askbridge ask ARGS` with `stdin` as the ask; its output once it exits.
async fn ask(args: &[&str], stdin: &str) -> Output {
    ask_with_token(args, stdin, None).await
}

/// [`ask`] with `ASKBRIDGE_API_TOKEN` set to `token` (unset for `None`).
async fn ask_with_token(args: &[&str], stdin: &str, token: Option<&str>) -> Output {
    let mut command = Command::new(BINARY);
    command
        .arg("ask")
        .args(args)
        .env_remove("ASKBRIDGE_SERVER")
        .env_remove("ASKBRIDGE_API_TOKEN");
    if let Some(token) = token {
        command.env("ASKBRIDGE_API_TOKEN", token);
    }
    let child = client::spawn_with_input(command, stdin);
    tokio::time::timeout(STEP, child.wait_with_output())
        .await
        .expect("askbridge ask exits")
        .expect("run askbridge ask")
}

/// A running `askbridge ask --wait`, and the ask id it announced.
async fn ask_and_wait(daemon: &Daemon) -> (Child, String) {
    let server = daemon.base();
    let mut command = Command::new(BINARY);
    command
        .args(["ask", "--wait", "--server", &server, "-"])
        .env_remove("ASKBRIDGE_SERVER");
    let mut child = client::spawn_with_input(command, ASK);
    let id = client::announced(&mut child, "askbridge: ask ", " created").await;
    (child, id)
}

async fn finish(child: Child) -> (Option<i32>, Value) {
    let mut child = child;
    let mut stdout = String::new();
    if let Some(mut pipe) = child.stdout.take() {
        tokio::time::timeout(STEP, pipe.read_to_string(&mut stdout))
            .await
            .expect("askbridge ask prints its result")
            .expect("read stdout");
    }
    let status = tokio::time::timeout(STEP, child.wait())
        .await
        .expect("askbridge ask exits")
        .expect("wait for askbridge ask");
    let json = serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{e}: {stdout}"));
    (status.code(), json)
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[tokio::test]
async fn ask_names_the_url_of_an_unreachable_daemon() {
    // A loopback port nobody listens on: bind one, then let it go.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .expect("a free port")
        .port();
    let url = format!("http://127.0.0.1:{port}");
    let output = ask(&["--server", &url, "-"], ASK).await;
    assert_eq!(output.status.code(), Some(1));
    let stderr = text(&output.stderr);
    assert!(
        stderr.contains("cannot reach the askbridge daemon"),
        "{stderr}"
    );
    assert!(stderr.contains(&url), "{stderr}");
    assert!(output.stdout.is_empty());
}

#[tokio::test]
async fn ask_lists_the_problems_of_an_invalid_ask_by_path() {
    let invalid = r#"{"questions": [{"question": "Which?", "type": "single", "options": [{"label": "Only"}]}]}"#;
    let output = ask(&["--server", "http://127.0.0.1:1", "-"], invalid).await;
    assert_eq!(output.status.code(), Some(1));
    let stderr = text(&output.stderr);
    assert!(stderr.contains("is not a valid ask"), "{stderr}");
    assert!(stderr.contains("questions[0].options: "), "{stderr}");
}

#[tokio::test]
async fn ask_refuses_a_bad_target() {
    let output = ask(
        &[
            "--to",
            "carrier-pigeon:7",
            "--server",
            "http://127.0.0.1:1",
            "-",
        ],
        ASK,
    )
    .await;
    assert_eq!(output.status.code(), Some(1));
    assert!(
        text(&output.stderr).contains("--to"),
        "{}",
        text(&output.stderr)
    );
}

#[tokio::test]
async fn ask_without_wait_prints_the_pending_ask() {
    let daemon = Daemon::start();
    let output = ask(
        &["--to", "web:review", "--server", &daemon.base(), "-"],
        ASK,
    )
    .await;
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    let pending: Value = serde_json::from_slice(&output.stdout).expect("JSON on stdout");
    assert_eq!(pending["status"], json!("pending"), "{pending}");
    assert_eq!(pending["to"], json!("web:review"), "{pending}");
    let id = pending["id"].as_str().expect("an id");
    assert!(Api::of(&daemon).pending_ids().await.iter().any(|p| p == id));
}

#[tokio::test]
async fn ask_sends_the_api_token_from_the_environment() {
    let daemon = Daemon::builder().token("ask-cli-token").start();
    let args = ["--server", &daemon.base(), "-"];
    let refused = ask_with_token(&args, ASK, None).await;
    assert_ne!(refused.status.code(), Some(0));
    assert!(
        text(&refused.stderr).contains("401"),
        "{}",
        text(&refused.stderr)
    );
    let output = ask_with_token(&args, ASK, Some("ask-cli-token")).await;
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    let pending: Value = serde_json::from_slice(&output.stdout).expect("JSON on stdout");
    assert_eq!(pending["status"], json!("pending"), "{pending}");
}

#[tokio::test]
async fn ask_wait_prints_the_outcome_once_answered() {
    let daemon = Daemon::start();
    let api = Api::of(&daemon);
    let (child, id) = ask_and_wait(&daemon).await;
    assert!(api.pending_ids().await.contains(&id));
    api.reply(&id, json!({"text": "2"})).await;
    let (code, outcome) = finish(child).await;
    assert_eq!(code, Some(0), "{outcome}");
    assert_eq!(outcome["id"], json!(id));
    assert_eq!(outcome["status"], json!("answered"));
    assert_eq!(outcome["answers"], json!({"deploy_target": ["Production"]}));
    assert_eq!(api.ask(&id).await["status"], json!("answered"));
}

#[tokio::test]
async fn ask_wait_exits_2_when_the_ask_ends_unanswered() {
    let daemon = Daemon::start();
    let (child, id) = ask_and_wait(&daemon).await;
    Api::of(&daemon).cancel(&id).await;
    let (code, outcome) = finish(child).await;
    assert_eq!(code, Some(2), "{outcome}");
    assert_eq!(outcome["status"], json!("no_answer"));
    assert_eq!(outcome["reason"], json!("cancelled"));
}

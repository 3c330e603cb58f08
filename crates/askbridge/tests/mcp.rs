//! MCP end to end, with a real client nobody here wrote: the official
//! Python `mcp` SDK (`tests/mcp/client.py`) talks to `askbridge mcp` over
//! stdio — in-process and forwarding to a daemon — and to streamable HTTP
//! at `/mcp`, while the test answers or cancels through the HTTP API.
//!
//! The client prints what it sees as JSON lines; the test waits on those
//! lines (never on the clock) and asserts on the outcome, the progress
//! notifications and cancellation. Python is found through
//! `ASKBRIDGE_TEST_PYTHON`, else `~/.cache/askbridge/venv/bin/python`; the
//! tests fail, loudly, when it cannot `import mcp`.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;

use askbridge::bridge::{Bridge, BridgeOptions};
use askbridge::mcp::{McpOptions, router_with};
use askbridge_core::lifecycle::Input;
use askbridge_core::model::{ChannelKind, Target};
use askbridge_core::outcome::Responder;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, BufReader, Lines};
use tokio::process::{Child, ChildStdout, Command};

mod daemon;
use daemon::{Api, Daemon};

/// How long any one step may take before the test gives up.
const STEP: Duration = Duration::from_secs(60);

const BINARY: &str = env!("CARGO_BIN_EXE_askbridge");
const CLIENT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/mcp/client.py");

/// The Python interpreter with the MCP SDK; panics with what to do when
/// there is none.
fn python() -> PathBuf {
    let path = std::env::var_os("ASKBRIDGE_TEST_PYTHON")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            let home = std::env::var_os("HOME")
                .map(PathBuf::from)
                .unwrap_or_default();
            home.join(".cache/askbridge/venv/bin/python")
        });
    let check = std::process::Command::new(&path)
        .args(["-c", "import mcp"])
        .output();
    match check {
        Ok(output) if output.status.success() => path,
        Ok(output) => panic!(
            "the MCP tests need Python with the official `mcp` SDK, but `{} -c 'import mcp'` failed:\n{}\n\
             Run .ci/run, or: python3 -m venv ~/.cache/askbridge/venv && ~/.cache/askbridge/venv/bin/pip install mcp \
             (or point ASKBRIDGE_TEST_PYTHON at such an interpreter)",
            path.display(),
            String::from_utf8_lossy(&output.stderr)
        ),
        Err(error) => panic!(
            "the MCP tests need Python with the official `mcp` SDK, but {} cannot run ({error}).\n\
             Run .ci/run, or: python3 -m venv ~/.cache/askbridge/venv && ~/.cache/askbridge/venv/bin/pip install mcp \
             (or point ASKBRIDGE_TEST_PYTHON at such an interpreter)",
            path.display()
        ),
    }
}

/// The Python client running one scenario.
struct Client {
    child: Child,
    lines: Lines<BufReader<ChildStdout>>,
    seen: Vec<Value>,
}

impl Client {
    fn stdio(scenario: &str, args: &[&str]) -> Client {
        let mut all = vec!["stdio", scenario, BINARY];
        all.extend_from_slice(args);
        Client::spawn(&all)
    }

    fn http(scenario: &str, url: &str) -> Client {
        Client::spawn(&["http", scenario, url])
    }

    fn spawn(args: &[&str]) -> Client {
        let mut child = Command::new(python())
            .arg(CLIENT)
            .args(args)
            .env("NO_PROXY", "127.0.0.1,localhost")
            .env("no_proxy", "127.0.0.1,localhost")
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .expect("spawn the Python MCP client");
        let stdout = child.stdout.take().expect("piped stdout");
        Client {
            child,
            lines: BufReader::new(stdout).lines(),
            seen: Vec::new(),
        }
    }

    /// The next event the client prints.
    async fn next(&mut self) -> Value {
        let line = tokio::time::timeout(STEP, self.lines.next_line())
            .await
            .unwrap_or_else(|_| {
                panic!(
                    "the client said nothing for {STEP:?}; so far: {:?}",
                    self.seen
                )
            })
            .expect("read the client's output");
        match line {
            Some(line) => {
                let event: Value = serde_json::from_str(&line)
                    .unwrap_or_else(|e| panic!("not a JSON line ({e}): {line}"));
                self.seen.push(event.clone());
                event
            }
            None => {
                let mut stderr = String::new();
                if let Some(mut pipe) = self.child.stderr.take() {
                    let _ = pipe.read_to_string(&mut stderr).await;
                }
                panic!(
                    "the client exited early; events: {:?}\nstderr:\n{stderr}",
                    self.seen
                );
            }
        }
    }

    /// The next event named `name` (others are kept in `seen`).
    async fn until(&mut self, name: &str) -> Value {
        loop {
            let event = self.next().await;
            assert_ne!(event["event"], "error", "{event}");
            assert_ne!(event["event"], "unexpected_result", "{event}");
            if event["event"] == name {
                return event;
            }
        }
    }

    /// Waits for `done` and a clean exit.
    async fn finish(mut self) -> Vec<Value> {
        self.until("done").await;
        let status = tokio::time::timeout(STEP, self.child.wait())
            .await
            .expect("the client exits")
            .expect("wait for the client");
        assert!(status.success(), "client exit status {status}");
        self.seen
    }

    fn progress(&self) -> Vec<Value> {
        self.seen
            .iter()
            .filter(|e| e["event"] == "progress")
            .cloned()
            .collect()
    }
}

/// The ask id named in a progress message (`… ask id ask_01…; …`).
fn ask_id(progress: &Value) -> String {
    let message = progress["message"].as_str().unwrap_or_default();
    let start = message
        .find("ask id ")
        .unwrap_or_else(|| panic!("no ask id in {message:?}"))
        + "ask id ".len();
    message[start..]
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_' || *c == '-')
        .collect()
}

/// Checks an `answer` scenario's result: the SPEC §3 outcome, answered.
fn assert_answered(result: &Value, id: &str, label: &str) {
    assert_eq!(result["isError"], json!(false), "{result}");
    let outcome = &result["structuredContent"];
    assert_eq!(outcome["id"], json!(id), "{result}");
    assert_eq!(outcome["status"], json!("answered"), "{result}");
    assert_eq!(outcome["reason"], Value::Null, "{result}");
    assert_eq!(
        outcome["answers"],
        json!({"deploy_target": [label]}),
        "{result}"
    );
    assert_eq!(
        outcome["details"][0]["id"],
        json!("deploy_target"),
        "{result}"
    );
    for key in ["answeredAt", "text", "continuation"] {
        assert!(outcome[key].is_string(), "{key} in {result}");
    }
    let text = result["content"][0]["text"].as_str().unwrap_or_default();
    assert_eq!(
        text,
        outcome["continuation"].as_str().unwrap_or("?"),
        "{result}"
    );
}

/// Checks a `cancel` scenario: the call was cancelled at its first
/// progress notification and get_answer then reported the cancelled ask.
async fn assert_cancelled(client: Client) -> String {
    let mut client = client;
    let id = client.until("cancelled").await["id"]
        .as_str()
        .expect("an id")
        .to_owned();
    let result = client.until("result").await["result"].clone();
    assert_eq!(result["isError"], json!(false), "{result}");
    let outcome = &result["structuredContent"];
    assert_eq!(outcome["id"], json!(id), "{result}");
    assert_eq!(outcome["status"], json!("no_answer"), "{result}");
    assert_eq!(outcome["reason"], json!("cancelled"), "{result}");
    client.finish().await;
    id
}

#[tokio::test]
async fn stdio_in_process_lists_the_tools_and_refuses_an_invalid_ask_by_path() {
    let data = daemon::TempDir::new("mcp-basics");
    let data = data.path().to_str().expect("utf-8 path");
    let mut client = Client::stdio("basics", &["mcp", "--data-dir", data]);
    let init = client.until("initialized").await;
    assert_eq!(init["server"], json!("askbridge"));
    assert_eq!(init["tools"], json!(true));

    let tools = client.until("tools").await["tools"].clone();
    let names: Vec<&str> = tools
        .as_array()
        .expect("a list")
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    assert_eq!(names, ["ask_user", "get_answer"]);
    let ask_user = &tools[0];
    let description = ask_user["description"].as_str().unwrap_or_default();
    for phrase in [
        "truly the user's",
        "(Recommended)",
        "\"Other\"",
        "get_answer",
    ] {
        assert!(description.contains(phrase), "{phrase} in {description}");
    }
    let properties = &ask_user["inputSchema"]["properties"];
    for field in ["title", "questions", "timeoutSeconds", "to"] {
        assert!(properties.get(field).is_some(), "{field} in {properties}");
    }
    assert_eq!(tools[1]["inputSchema"]["required"], json!(["id"]));

    let result = client.until("result").await["result"].clone();
    assert_eq!(result["isError"], json!(true), "{result}");
    let text = result["content"][0]["text"].as_str().unwrap_or_default();
    assert!(text.contains("questions[0].options: "), "{text}");
    assert!(text.contains("at least 2 options"), "{text}");
    client.finish().await;
}

#[tokio::test]
async fn stdio_in_process_cancelling_the_call_cancels_the_ask() {
    let data = daemon::TempDir::new("mcp-cancel");
    let data = data.path().to_str().expect("utf-8 path");
    let client = Client::stdio("cancel", &["mcp", "--data-dir", data]);
    assert_cancelled(client).await;
}

#[tokio::test]
async fn stdio_forwarder_reports_progress_and_returns_the_daemons_outcome() {
    let daemon = Daemon::start();
    let api = Api::of(&daemon);
    let mut client = Client::stdio(
        "answer",
        &["mcp", "--server", &daemon.base(), "--progress-ms", "50"],
    );
    client.until("initialized").await;
    let first = client.until("progress").await;
    let id = ask_id(&first);
    assert_eq!(first["progress"], json!(0.0));
    assert_eq!(first["total"], json!(900.0));
    // Two more notifications: the interval is 50 ms.
    client.until("progress").await;
    client.until("progress").await;
    assert!(api.pending_ids().await.contains(&id), "{id} is pending");

    api.reply(&id, json!({"answers": {"deploy_target": ["Staging"]}}))
        .await;
    let result = client.until("result").await["result"].clone();
    assert_answered(&result, &id, "Staging (Recommended)");

    let progress = client.progress();
    assert!(progress.len() >= 3, "{progress:?}");
    let values: Vec<f64> = progress
        .iter()
        .filter_map(|p| p["progress"].as_f64())
        .collect();
    assert!(
        values.windows(2).all(|w| w[0] < w[1]),
        "progress grows: {values:?}"
    );
    for update in &progress {
        assert_eq!(ask_id(update), id, "{update}");
    }
    client.finish().await;
    assert_eq!(api.ask(&id).await["status"], json!("answered"));
}

#[tokio::test]
async fn stdio_forwarder_cancelling_the_call_cancels_the_daemons_ask() {
    let daemon = Daemon::start();
    let client = Client::stdio("cancel", &["mcp", "--server", &daemon.base()]);
    let id = assert_cancelled(client).await;
    let ask = Api::of(&daemon).ask(&id).await;
    assert_eq!(ask["status"], json!("no_answer"), "{ask}");
    assert_eq!(ask["reason"], json!("cancelled"), "{ask}");
}

#[tokio::test]
async fn streamable_http_in_the_daemon_returns_the_outcome() {
    let daemon = Daemon::start();
    let api = Api::of(&daemon);
    let mut client = Client::http("answer", &daemon.url("/mcp"));
    let init = client.until("initialized").await;
    assert_eq!(init["server"], json!("askbridge"));
    let id = ask_id(&client.until("progress").await);
    assert!(api.pending_ids().await.contains(&id), "{id} is pending");
    api.reply(&id, json!({"text": "production"})).await;
    let result = client.until("result").await["result"].clone();
    assert_answered(&result, &id, "Production");
    client.finish().await;
}

#[tokio::test]
async fn streamable_http_in_the_daemon_cancelling_the_call_cancels_the_ask() {
    let daemon = Daemon::start();
    let client = Client::http("cancel", &daemon.url("/mcp"));
    let id = assert_cancelled(client).await;
    assert_eq!(
        Api::of(&daemon).ask(&id).await["reason"],
        json!("cancelled")
    );
}

#[tokio::test]
async fn router_with_serves_streamable_http_with_its_progress_interval() {
    let data = daemon::TempDir::new("mcp-router");
    let bridge = Bridge::open(BridgeOptions {
        database_url: format!(
            "sqlite://{}?mode=rwc",
            data.path().join("askbridge.db").display()
        ),
        default_target: Target::parse("web").expect("a target"),
    })
    .await
    .expect("open the bridge");
    bridge.add_channel(askbridge::web::channel());
    let options = McpOptions {
        progress_interval: Duration::from_millis(50),
        ..McpOptions::default()
    };
    let app = axum::Router::new().nest("/mcp", router_with(bridge.clone(), options));
    let listener = tokio::net::TcpListener::bind(SocketAddr::from(([127, 0, 0, 1], 0)))
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("address");
    let server = tokio::spawn(async move { axum::serve(listener, app).await });

    let mut client = Client::http("answer", &format!("http://{addr}/mcp"));
    let id = ask_id(&client.until("progress").await);
    client.until("progress").await;
    client.until("progress").await;
    let from = Responder {
        channel: ChannelKind::Web,
        user_id: "alice".to_owned(),
        name: Some("Alice".to_owned()),
    };
    bridge
        .handle(
            &id,
            Input::Answers {
                from,
                admitted: true,
                answers: vec![("deploy_target".to_owned(), vec!["staging".to_owned()])],
            },
        )
        .await
        .expect("answer");
    let result = client.until("result").await["result"].clone();
    assert_answered(&result, &id, "Staging (Recommended)");
    assert_eq!(
        result["structuredContent"]["answeredBy"],
        json!({"channel": "web", "userId": "alice", "name": "Alice"})
    );
    assert!(client.progress().len() >= 3);
    client.finish().await;
    server.abort();
}

#[tokio::test]
async fn stdio_forwarder_cancels_the_ask_when_the_client_goes_away() {
    let daemon = Daemon::start();
    let mut client = Client::stdio("abandon", &["mcp", "--server", &daemon.base()]);
    let id = client.until("abandoning").await["id"]
        .as_str()
        .expect("an id")
        .to_owned();
    // The client is gone without a word; `askbridge mcp` sees its standard
    // input close and cancels the ask it was waiting on.
    let api = Api::of(&daemon);
    let ended = api
        .send(api.http.get(daemon.url(&format!("/v1/asks/{id}?wait=60"))))
        .await;
    assert_eq!(ended["status"], json!("no_answer"), "{ended}");
    assert_eq!(ended["reason"], json!("cancelled"), "{ended}");
}

#[tokio::test]
async fn stdio_forwarder_keeps_waiting_across_a_daemon_restart() {
    // A fixed port, so the daemon comes back where the forwarder looks.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .expect("a free port")
        .port();
    let mut daemon = Daemon::builder()
        .listen(&format!("127.0.0.1:{port}"))
        .start();
    let base = daemon.base();
    let mut client = Client::stdio("answer", &["mcp", "--server", &base]);
    let id = ask_id(&client.until("progress").await);

    daemon.restart();
    assert_eq!(daemon.base(), base);
    Api::of(&daemon)
        .reply(&id, json!({"answers": {"deploy_target": ["Production"]}}))
        .await;
    let result = client.until("result").await["result"].clone();
    assert_answered(&result, &id, "Production");
    client.finish().await;
}

//! A bare JSON-RPC MCP client, for what the Python SDK does not speak yet
//! (the tasks extension): requests are written by hand, over stdio (the
//! per-request envelope of protocol 2026-07-28, no `initialize`) or
//! streamable HTTP (an `initialize` session). Every wait is bounded by
//! [`STEP`]; nothing sleeps.

#![allow(dead_code)]

use std::process::Stdio;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, Lines};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};

/// How long any one request may take before the test gives up.
pub const STEP: Duration = Duration::from_secs(60);

pub const BINARY: &str = env!("CARGO_BIN_EXE_askbridge");

/// The tasks extension's id, as clients declare it.
pub const TASKS: &str = "io.modelcontextprotocol/tasks";

/// The ask every scenario sends (`tests/mcp/deploy_ask.json`, which the
/// Python client sends too).
pub fn deploy_ask() -> Value {
    serde_json::from_str(include_str!("../mcp/deploy_ask.json")).expect("valid JSON")
}

/// Checks the outcome of a `deploy_ask` the host's form (Production) and
/// the web page (Staging) answered at once: exactly one answer, whose
/// `via`, label and `answeredBy` agree, and the web page told `409` when
/// it lost (its reply got `web_status`). Returns who won.
pub fn one_answer_of_two(outcome: &Value, web_status: u16) -> String {
    let via = outcome["details"][0]["via"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    let label = match via.as_str() {
        "host" => "Production",
        "web" => "Staging (Recommended)",
        other => panic!("answered via {other:?}: {outcome}"),
    };
    assert_eq!(
        outcome["answers"]["deploy_target"],
        json!([label]),
        "{outcome}"
    );
    assert_eq!(outcome["answeredBy"]["channel"], json!(via), "{outcome}");
    let expected = if via == "web" { 200 } else { 409 };
    assert_eq!(web_status, expected, "{via} won: {outcome}");
    via
}

/// A JSON-RPC answer: the result, or the error object.
pub type Answer = Result<Value, Value>;

fn answer_of(message: &Value) -> Answer {
    match message.get("error") {
        Some(error) => Err(error.clone()),
        None => Ok(message["result"].clone()),
    }
}

/// `askbridge mcp …` over stdio, spoken to without `initialize`: every
/// request carries the protocol version and `capabilities` in `_meta`.
pub struct StdioClient {
    child: Child,
    stdin: ChildStdin,
    lines: Lines<BufReader<ChildStdout>>,
    capabilities: Value,
    next_id: u64,
}

impl StdioClient {
    pub fn spawn(args: &[&str], capabilities: Value) -> StdioClient {
        let mut child = Command::new(BINARY)
            .args(args)
            .env("NO_PROXY", "127.0.0.1,localhost")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .kill_on_drop(true)
            .spawn()
            .expect("spawn askbridge mcp");
        let stdin = child.stdin.take().expect("piped stdin");
        let stdout = child.stdout.take().expect("piped stdout");
        StdioClient {
            child,
            stdin,
            lines: BufReader::new(stdout).lines(),
            capabilities,
            next_id: 0,
        }
    }

    /// Sends `method` and returns its answer (notifications in between are
    /// skipped).
    pub async fn request(&mut self, method: &str, mut params: Value) -> Answer {
        self.next_id += 1;
        let id = self.next_id;
        params["_meta"] = json!({
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": self.capabilities,
            "io.modelcontextprotocol/clientInfo": {"name": "raw-test", "version": "1"}
        });
        let message = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        let mut line = message.to_string();
        line.push('\n');
        self.stdin
            .write_all(line.as_bytes())
            .await
            .expect("write to askbridge mcp");
        loop {
            let line = tokio::time::timeout(STEP, self.lines.next_line())
                .await
                .unwrap_or_else(|_| panic!("no answer to {method} within {STEP:?}"))
                .expect("read askbridge mcp")
                .unwrap_or_else(|| panic!("askbridge mcp exited before answering {method}"));
            let message: Value =
                serde_json::from_str(&line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}"));
            if message["id"] == json!(id) {
                return answer_of(&message);
            }
        }
    }

    /// Ends the process (as a client that goes away would).
    pub async fn kill(mut self) {
        let _ = self.child.kill().await;
    }
}

/// A streamable-HTTP session at `/mcp`.
pub struct Http {
    http: reqwest::Client,
    url: String,
    session: String,
    next_id: u64,
}

impl Http {
    /// Opens a session declaring `capabilities`.
    pub async fn initialize(url: &str, capabilities: Value) -> Http {
        let mut http = Http {
            http: reqwest::Client::builder()
                .no_proxy()
                .build()
                .expect("an HTTP client"),
            url: url.to_owned(),
            session: String::new(),
            next_id: 0,
        };
        let (session, answer) = http
            .post_request(
                "initialize",
                json!({
                    "protocolVersion": "2025-11-25",
                    "capabilities": capabilities,
                    "clientInfo": {"name": "raw-test", "version": "1"}
                }),
            )
            .await;
        answer.unwrap_or_else(|error| panic!("initialize failed: {error}"));
        http.session = session.expect("an Mcp-Session-Id header");
        let response = http
            .post(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
            .await;
        assert!(
            response.status().is_success(),
            "initialized: HTTP {}",
            response.status()
        );
        http
    }

    /// Sends `method` and returns its answer.
    pub async fn request(&mut self, method: &str, params: Value) -> Answer {
        self.post_request(method, params).await.1
    }

    /// Sends `method` and returns the stream of what comes back for it
    /// (notifications, then the answer).
    pub async fn start(&mut self, method: &str, params: Value) -> Call {
        self.next_id += 1;
        let id = self.next_id;
        let response = self
            .post(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
            .await;
        assert!(
            response.status().is_success(),
            "{method}: HTTP {}",
            response.status()
        );
        Call {
            method: method.to_owned(),
            id,
            response,
            buffer: String::new(),
            last_event_id: None,
        }
    }

    /// Resumes the stream of request `call` (its id) after the event
    /// `last_event_id` (`GET` with `Last-Event-ID`).
    pub async fn resume(&self, call: u64, last_event_id: &str) -> Call {
        let response = self
            .http
            .get(&self.url)
            .header("accept", "text/event-stream")
            .header("mcp-session-id", &self.session)
            .header("mcp-protocol-version", "2025-11-25")
            .header("last-event-id", last_event_id)
            .send()
            .await
            .expect("GET /mcp");
        assert!(
            response.status().is_success(),
            "resume: HTTP {}",
            response.status()
        );
        Call {
            method: format!("the resumed request {call}"),
            id: call,
            response,
            buffer: String::new(),
            last_event_id: None,
        }
    }

    /// Resumes a stream after `last_event_id` and reads the response to
    /// its end: the status and the whole body. For resumes that must
    /// replay nothing (an empty stream ends at once).
    pub async fn resume_to_end(&self, last_event_id: &str) -> (u16, String) {
        let response = self
            .http
            .get(&self.url)
            .header("accept", "text/event-stream")
            .header("mcp-session-id", &self.session)
            .header("mcp-protocol-version", "2025-11-25")
            .header("last-event-id", last_event_id)
            .send()
            .await
            .expect("GET /mcp");
        let status = response.status().as_u16();
        let body = tokio::time::timeout(STEP, response.text())
            .await
            .unwrap_or_else(|_| {
                panic!("the resume after {last_event_id:?} did not end within {STEP:?}")
            })
            .expect("read the response");
        (status, body)
    }

    /// Answers the server's request `id` (an `elicitation/create`, say)
    /// with `result`.
    pub async fn respond(&self, id: &Value, result: Value) {
        let response = self
            .post(json!({"jsonrpc": "2.0", "id": id, "result": result}))
            .await;
        assert!(
            response.status().is_success(),
            "response to {id}: HTTP {}",
            response.status()
        );
    }

    async fn post_request(&mut self, method: &str, params: Value) -> (Option<String>, Answer) {
        let call = self.start(method, params).await;
        let session = call
            .response
            .headers()
            .get("mcp-session-id")
            .and_then(|value| value.to_str().ok())
            .map(str::to_owned);
        (session, call.answer().await)
    }

    async fn post(&self, body: Value) -> reqwest::Response {
        let mut request = self
            .http
            .post(&self.url)
            .header("accept", "application/json, text/event-stream")
            .json(&body);
        if !self.session.is_empty() {
            request = request
                .header("mcp-session-id", &self.session)
                .header("mcp-protocol-version", "2025-11-25");
        }
        request.send().await.expect("POST /mcp")
    }
}

/// One request in flight over streamable HTTP.
pub struct Call {
    method: String,
    id: u64,
    response: reqwest::Response,
    buffer: String,
    last_event_id: Option<String>,
}

impl Call {
    /// The request's id.
    pub fn id(&self) -> u64 {
        self.id
    }

    /// The id of the last SSE event read, if it had one.
    pub fn last_event_id(&self) -> Option<&str> {
        self.last_event_id.as_deref()
    }

    /// The next JSON-RPC message for this request.
    pub async fn next(&mut self) -> Value {
        let is_json = self
            .response
            .headers()
            .get("content-type")
            .and_then(|value| value.to_str().ok())
            .is_some_and(|value| value.starts_with("application/json"));
        loop {
            if !is_json && let Some(end) = self.buffer.find("\n\n") {
                let event: String = self.buffer.drain(..end + 2).collect();
                if let Some(id) = event.lines().find_map(|line| line.strip_prefix("id:")) {
                    self.last_event_id = Some(id.trim().to_owned());
                }
                let data: String = event
                    .lines()
                    .filter_map(|line| line.strip_prefix("data:"))
                    .map(str::trim_start)
                    .collect();
                match serde_json::from_str(&data) {
                    Ok(message) => return message,
                    // Priming events and keep-alives carry no message.
                    Err(_) => continue,
                }
            }
            let chunk = tokio::time::timeout(STEP, self.response.chunk())
                .await
                .unwrap_or_else(|_| panic!("nothing for {} within {STEP:?}", self.method))
                .expect("read the response");
            match chunk {
                Some(chunk) => self.buffer.push_str(&String::from_utf8_lossy(&chunk)),
                None if is_json => {
                    return serde_json::from_str(&std::mem::take(&mut self.buffer))
                        .unwrap_or_else(|e| panic!("not JSON ({e}) for {}", self.method));
                }
                None => panic!(
                    "the stream ended without answering {}: {}",
                    self.method, self.buffer
                ),
            }
        }
    }

    /// The answer, skipping notifications.
    pub async fn answer(mut self) -> Answer {
        loop {
            let message = self.next().await;
            if message["id"] == json!(self.id) {
                return answer_of(&message);
            }
        }
    }
}

/// The client capabilities of a host with the tasks extension, and forms
/// when `forms`.
pub fn task_capabilities(forms: bool) -> Value {
    let mut capabilities = json!({"extensions": {TASKS: {}}});
    if forms {
        capabilities["elicitation"] = json!({"form": {}});
    }
    capabilities
}

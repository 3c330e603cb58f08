//! The official Python MCP SDK as a test client (`tests/mcp/client.py`,
//! and `tests/mcp/rounds.py` for protocol 2026-07-28):
//! found through `ASKBRIDGE_TEST_PYTHON`, else
//! `~/.cache/askbridge/venv/bin/python`; tests fail, loudly, when it
//! cannot `import mcp`. The client prints what it sees as JSON lines,
//! which [`Client`] reads (never waiting on the clock).

#![allow(dead_code)]

use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader, Lines};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};

/// How long any one step may take before the test gives up.
pub const STEP: Duration = Duration::from_secs(60);

pub const BINARY: &str = env!("CARGO_BIN_EXE_askbridge");
pub const CLIENT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/mcp/client.py");
pub const ROUNDS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/mcp/rounds.py");

/// The Python interpreter with the MCP SDK; panics with what to do when
/// there is none.
pub fn python() -> PathBuf {
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
pub struct Client {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Lines<BufReader<ChildStdout>>,
    seen: Vec<Value>,
}

impl Client {
    pub fn stdio(scenario: &str, args: &[&str]) -> Client {
        let mut all = vec!["stdio", scenario, BINARY];
        all.extend_from_slice(args);
        Client::spawn(&all)
    }

    pub fn http(scenario: &str, url: &str) -> Client {
        Client::spawn(&["http", scenario, url])
    }

    /// The 2026-07-28 client (`rounds.py`) running `scenario` against the
    /// streamable-HTTP endpoint `url`, with `args`.
    pub fn rounds_http(scenario: &str, url: &str, args: &[&str]) -> Client {
        let mut all = vec![ROUNDS, "http", scenario, url];
        all.extend_from_slice(args);
        Client::run(&all)
    }

    /// The 2026-07-28 client running `scenario` against `askbridge ARGS`
    /// over stdio.
    pub fn rounds_stdio(scenario: &str, args: &[&str]) -> Client {
        let mut all = vec![ROUNDS, "stdio", scenario, BINARY];
        all.extend_from_slice(args);
        Client::run(&all)
    }

    /// Writes `line` to the client's standard input (what `hold` waits for).
    pub async fn say(&mut self, line: &str) {
        let stdin = self.stdin.as_mut().expect("the client's stdin is open");
        stdin
            .write_all(format!("{line}\n").as_bytes())
            .await
            .expect("write to the client");
        stdin.flush().await.expect("flush the client's stdin");
    }

    fn spawn(args: &[&str]) -> Client {
        let mut all = vec![CLIENT];
        all.extend_from_slice(args);
        Client::run(&all)
    }

    /// Python running `args` (the script first).
    fn run(args: &[&str]) -> Client {
        let mut command = Command::new(python());
        command
            .args(args)
            .env("NO_PROXY", "127.0.0.1,localhost")
            .env("no_proxy", "127.0.0.1,localhost");
        Client::from_command(command)
    }

    /// Any client that prints what it sees as JSON lines (`{"event": …}`):
    /// `command`, with its standard streams piped.
    pub fn from_command(mut command: Command) -> Client {
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .expect("spawn the MCP client");
        let stdout = child.stdout.take().expect("piped stdout");
        Client {
            stdin: child.stdin.take(),
            child,
            lines: BufReader::new(stdout).lines(),
            seen: Vec::new(),
        }
    }

    /// The next event the client prints.
    pub async fn next(&mut self) -> Value {
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

    /// The next event named `name` (others are kept in `seen`); fails on
    /// an `error`, `session_error` or `unexpected_result` event.
    pub async fn until(&mut self, name: &str) -> Value {
        loop {
            let event = self.next().await;
            for bad in ["error", "session_error", "unexpected_result"] {
                assert_ne!(event["event"], bad, "{event}\nso far: {:?}", self.seen);
            }
            if event["event"] == name {
                return event;
            }
        }
    }

    /// Waits for `done` and a clean exit.
    pub async fn finish(mut self) -> Vec<Value> {
        self.until("done").await;
        let status = tokio::time::timeout(STEP, self.child.wait())
            .await
            .expect("the client exits")
            .expect("wait for the client");
        assert!(status.success(), "client exit status {status}");
        self.seen
    }

    /// Every event so far.
    pub fn seen(&self) -> &[Value] {
        &self.seen
    }

    pub fn progress(&self) -> Vec<Value> {
        self.seen
            .iter()
            .filter(|e| e["event"] == "progress")
            .cloned()
            .collect()
    }
}

/// The ask id named in a progress message (`… ask id ask_01…; …`).
pub fn ask_id(progress: &Value) -> String {
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

/// Checks an `answer` scenario's result: the outcome, answered.
pub fn assert_answered(result: &Value, id: &str, label: &str) {
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

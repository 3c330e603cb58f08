//! The real Claude Code and Codex, with askbridge's hook installed by
//! `askbridge hooks install`, answered from the chat.
//!
//! Claude Code (`@anthropic-ai/claude-code`) and Codex (`@openai/codex`),
//! pinned by `tests/node/package-lock.json` (native binaries), run fully
//! offline: their model API points at [`FakeModel`], a scripted fake of
//! the Anthropic Messages API and the OpenAI Responses API on 127.0.0.1
//! that streams the tool calls each test scripts and hands the test every
//! request it gets (the request after a tool call carries the call's
//! result). The person answers
//! through the daemon's HTTP API, as a chat reply would; the test waits
//! for the ask on the daemon's event stream. Nothing sleeps: every wait is
//! for an event, bounded so a broken build fails instead of hanging.
//!
//! The figures printed (`hook figures: …`) are the times from Claude
//! Code's start to the ask being posted, and from the answer to Claude
//! Code's end.

use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::Json;
use axum::extract::State;
use axum::response::IntoResponse;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, Command};
use tokio::sync::mpsc;

mod daemon;
mod node_env;
use daemon::events::EventReader;
use daemon::{Api, Daemon, TempDir};

const BINARY: &str = env!("CARGO_BIN_EXE_askbridge");
/// Claude Code's binary in the installed packages.
const CLAUDE: &str = "@anthropic-ai/claude-code/bin/claude.exe";
/// Codex's.
const CODEX: &str = "@openai/codex-linux-x64/vendor/x86_64-unknown-linux-musl/bin/codex";
/// Longest a Claude Code run may take.
const RUN: Duration = Duration::from_secs(120);

/// One scripted model turn.
#[derive(Debug, Clone)]
enum Turn {
    /// Call a tool with this input.
    Tool(&'static str, Value),
    /// Answer with text and end the turn.
    Text(&'static str),
}

/// A scripted fake of the Anthropic Messages API (streaming only, as
/// Claude Code calls it).
struct FakeModel {
    url: String,
    requests: mpsc::UnboundedReceiver<Value>,
}

#[derive(Clone)]
struct Script {
    turns: Arc<Mutex<VecDeque<Turn>>>,
    seen: mpsc::UnboundedSender<Value>,
}

impl FakeModel {
    /// Serves `turns` in order, one per request; "done" after them.
    async fn start(turns: Vec<Turn>) -> FakeModel {
        let (seen, requests) = mpsc::unbounded_channel();
        let script = Script {
            turns: Arc::new(Mutex::new(turns.into())),
            seen,
        };
        let app = axum::Router::new()
            .route("/v1/messages", axum::routing::post(messages))
            .route("/v1/responses", axum::routing::post(responses))
            .with_state(script);
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind the fake model");
        let addr = listener.local_addr().expect("its address");
        tokio::spawn(async move { axum::serve(listener, app).await });
        FakeModel {
            url: format!("http://{addr}"),
            requests,
        }
    }

    /// The next request Claude Code made.
    async fn request(&mut self) -> Value {
        tokio::time::timeout(RUN, self.requests.recv())
            .await
            .expect("Claude Code calls the model")
            .expect("the fake model is up")
    }

    /// The `tool_result` (Anthropic) or `function_call_output` (OpenAI)
    /// of the next request that carries one.
    async fn tool_result(&mut self) -> Value {
        loop {
            let request = self.request().await;
            let anthropic = request["messages"]
                .as_array()
                .and_then(|messages| messages.last())
                .and_then(|message| message["content"].as_array())
                .and_then(|content| content.iter().find(|block| block["type"] == "tool_result"));
            let openai = request["input"].as_array().and_then(|input| {
                input
                    .iter()
                    .find(|item| item["type"] == "function_call_output")
            });
            if let Some(result) = anthropic.or(openai) {
                return result.clone();
            }
        }
    }
}

/// Hands the test the request; the next scripted turn and its number.
fn next_turn(script: &Script, body: Value) -> (Turn, usize) {
    static COUNT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let _ = script.seen.send(body);
    let turn = script
        .turns
        .lock()
        .expect("script")
        .pop_front()
        .unwrap_or(Turn::Text("done"));
    (
        turn,
        COUNT.fetch_add(1, std::sync::atomic::Ordering::Relaxed),
    )
}

/// Server-sent events, all at once.
fn event_stream(events: &[(&str, Value)]) -> impl IntoResponse + use<> {
    let body: String = events
        .iter()
        .map(|(name, data)| format!("event: {name}\ndata: {data}\n\n"))
        .collect();
    (
        [(axum::http::header::CONTENT_TYPE, "text/event-stream")],
        body,
    )
}

/// `POST /v1/messages`: the next scripted turn as a message stream.
async fn messages(State(script): State<Script>, Json(body): Json<Value>) -> impl IntoResponse {
    let model = body["model"].clone();
    let (turn, n) = next_turn(&script, body);
    let (block, delta, stop) = match turn {
        Turn::Tool(name, input) => (
            json!({"type": "tool_use", "id": format!("toolu_{n}"), "name": name, "input": {}}),
            json!({"type": "input_json_delta", "partial_json": input.to_string()}),
            "tool_use",
        ),
        Turn::Text(text) => (
            json!({"type": "text", "text": ""}),
            json!({"type": "text_delta", "text": text}),
            "end_turn",
        ),
    };
    event_stream(&[
        (
            "message_start",
            json!({"type": "message_start", "message": {
            "id": format!("msg_{n}"), "type": "message", "role": "assistant", "model": model,
            "content": [], "stop_reason": null, "usage": {"input_tokens": 1, "output_tokens": 1}}}),
        ),
        (
            "content_block_start",
            json!({"type": "content_block_start", "index": 0, "content_block": block}),
        ),
        (
            "content_block_delta",
            json!({"type": "content_block_delta", "index": 0, "delta": delta}),
        ),
        (
            "content_block_stop",
            json!({"type": "content_block_stop", "index": 0}),
        ),
        (
            "message_delta",
            json!({"type": "message_delta", "delta": {"stop_reason": stop}, "usage": {"output_tokens": 1}}),
        ),
        ("message_stop", json!({"type": "message_stop"})),
    ])
}

/// `POST /v1/responses`: the next scripted turn as a response stream.
async fn responses(State(script): State<Script>, Json(body): Json<Value>) -> impl IntoResponse {
    let (turn, n) = next_turn(&script, body);
    let item = match turn {
        Turn::Tool(name, input) => json!({
            "type": "function_call", "id": format!("fc_{n}"), "call_id": format!("call_{n}"),
            "name": name, "arguments": input.to_string()}),
        Turn::Text(text) => json!({
            "type": "message", "id": format!("m_{n}"), "role": "assistant",
            "content": [{"type": "output_text", "text": text, "annotations": []}]}),
    };
    let usage = json!({"input_tokens": 1, "output_tokens": 1, "total_tokens": 2});
    event_stream(&[
        (
            "response.created",
            json!({"type": "response.created", "response": {"id": format!("resp_{n}")}}),
        ),
        (
            "response.output_item.added",
            json!({"type": "response.output_item.added", "output_index": 0, "item": item}),
        ),
        (
            "response.output_item.done",
            json!({"type": "response.output_item.done", "output_index": 0, "item": item}),
        ),
        (
            "response.completed",
            json!({"type": "response.completed", "response": {"id": format!("resp_{n}"), "usage": usage}}),
        ),
    ])
}

/// A project with askbridge's hook installed, asking `daemon` on the web
/// page, and a home of its own for Claude Code.
struct Project {
    dir: TempDir,
    home: TempDir,
}

impl Project {
    fn new(label: &str, server: &str) -> Project {
        Project::with(label, server, &[])
    }

    /// A project with askbridge's hooks installed with `extra` options.
    fn with(label: &str, server: &str, extra: &[&str]) -> Project {
        let project = Project {
            dir: TempDir::new(label),
            home: TempDir::new(&format!("{label}-home")),
        };
        let dir = project.dir.path().to_str().expect("a UTF-8 path");
        let mut args = vec![
            "claude-code",
            "--dir",
            dir,
            "--server",
            server,
            "--hold",
            "120",
        ];
        args.extend_from_slice(extra);
        install(&args, ("HOME", project.home.path()));
        project
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }

    /// Claude Code in this project, its model at `model`: `claude -p
    /// ARGS`, standard output piped.
    fn claude(&self, model: &FakeModel, args: &[&str]) -> Command {
        let modules = node_env::node_modules(&[CLAUDE]);
        let mut command = host(&modules.join(CLAUDE), self.path(), self.home.path());
        command
            .arg("-p")
            .args(args)
            .env("ANTHROPIC_BASE_URL", &model.url)
            .env("ANTHROPIC_API_KEY", "test-key")
            .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
            .env("DISABLE_AUTOUPDATER", "1");
        command
    }

    /// Runs `claude -p PROMPT --output-format json` with stdin closed.
    fn run(&self, model: &FakeModel, prompt: &str) -> Child {
        self.claude(model, &[prompt, "--output-format", "json"])
            .stdin(Stdio::null())
            .spawn()
            .expect("start Claude Code")
    }

    fn file(&self, name: &str) -> PathBuf {
        self.path().join(name)
    }
}

/// `askbridge hooks install ARGS --to web` with one variable set (where
/// the host's settings are).
fn install(args: &[&str], (key, value): (&str, &Path)) {
    let installed = std::process::Command::new(BINARY)
        .args(["hooks", "install"])
        .args(args)
        .args(["--to", "web"])
        .env(key, value)
        .output()
        .expect("run askbridge hooks install");
    assert!(
        installed.status.success(),
        "{}",
        String::from_utf8_lossy(&installed.stderr)
    );
}

/// A coding agent's binary, run in `dir` with a home of its own, loopback
/// without a proxy, none of the caller's askbridge settings, standard
/// output piped.
fn host(binary: &Path, dir: &Path, home: &Path) -> Command {
    let mut command = Command::new(binary);
    command
        .current_dir(dir)
        .env("HOME", home)
        .env("NO_PROXY", "127.0.0.1,localhost")
        .env_remove("ASKBRIDGE_SERVER")
        // The hooks approve on the web page, which needs the daemon's token.
        .env("ASKBRIDGE_API_TOKEN", TOKEN)
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .kill_on_drop(true);
    command
}

/// Waits for Claude Code to end; its result line.
async fn ended(child: Child) -> Value {
    let output = tokio::time::timeout(RUN, child.wait_with_output())
        .await
        .expect("Claude Code ends")
        .expect("run Claude Code");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let last = stdout.lines().last().unwrap_or_default();
    serde_json::from_str(last).unwrap_or_else(|error| panic!("{error}: {stdout}"))
}

/// The API token of the daemons the hosts' approvals go to: an approval
/// goes to the web page only when the daemon has one.
const TOKEN: &str = "hosts-tests-token";

/// The daemon and its event stream, open before anything is asked.
async fn daemon_and_events() -> (Daemon, EventReader) {
    let daemon = Daemon::builder().token(TOKEN).start();
    let api = Api::of(&daemon);
    let mut events = EventReader::open(&api.http, &daemon.url("/v1/events")).await;
    let (name, _) = events.next().await;
    assert_eq!(name, "ready");
    (daemon, events)
}

/// The next ask created.
async fn created(events: &mut EventReader) -> Value {
    loop {
        let (name, ask) = events.next().await;
        if name == "created" {
            return ask;
        }
    }
}

fn figure(what: &str, elapsed: Duration) {
    eprintln!("hook figures: {what}: {} ms", elapsed.as_millis());
}

#[tokio::test]
async fn claude_code_runs_a_command_allowed_from_the_chat() {
    let (daemon, mut events) = daemon_and_events().await;
    let project = Project::new("claude-allow", &daemon.base());
    let mut model = FakeModel::start(vec![Turn::Tool(
        "Bash",
        json!({"command": "echo hi > out.txt", "description": "write hi"}),
    )])
    .await;
    let started = Instant::now();
    let claude = project.run(&model, "write hi to out.txt");
    let ask = created(&mut events).await;
    figure("Claude Code start to the ask posted", started.elapsed());
    let call = ask["ask"]["context"]["text"].as_str().expect("the call");
    assert!(call.contains("$ echo hi > out.txt"), "{ask}");
    assert!(call.contains("write hi"), "{ask}");
    assert!(
        !project.file("out.txt").exists(),
        "nothing runs before the answer"
    );

    let answered = Instant::now();
    let id = ask["id"].as_str().expect("an id");
    Api::of(&daemon).reply(id, json!({"text": "1"})).await;
    let result = model.tool_result().await;
    figure(
        "answer to the tool's result at the model",
        answered.elapsed(),
    );
    assert_eq!(result["is_error"], false, "{result}");
    assert_eq!(
        std::fs::read_to_string(project.file("out.txt")).expect("the command ran"),
        "hi\n"
    );
    let end = ended(claude).await;
    assert_eq!(end["is_error"], false, "{end}");
}

#[tokio::test]
async fn claude_code_gets_the_persons_words_when_they_deny() {
    let (daemon, mut events) = daemon_and_events().await;
    let project = Project::new("claude-deny", &daemon.base());
    let mut model = FakeModel::start(vec![Turn::Tool(
        "Bash",
        json!({"command": "rm -rf build > gone.txt", "description": "clean"}),
    )])
    .await;
    let claude = project.run(&model, "clean up");
    let ask = created(&mut events).await;
    let id = ask["id"].as_str().expect("an id");
    Api::of(&daemon)
        .reply(id, json!({"text": "keep the build, it is Friday"}))
        .await;
    let result = model.tool_result().await;
    assert_eq!(result["is_error"], true, "{result}");
    assert!(
        result.to_string().contains("keep the build, it is Friday"),
        "{result}"
    );
    assert!(!project.file("gone.txt").exists(), "nothing ran");
    ended(claude).await;
}

#[tokio::test]
async fn claude_code_goes_on_with_the_reply_to_its_finished_turn() {
    let (daemon, mut events) = daemon_and_events().await;
    let project = Project::with("claude-continue", &daemon.base(), &["--continue"]);
    let mut model = FakeModel::start(vec![
        Turn::Text("Migrated the tables."),
        Turn::Text("Dropped the old ones."),
    ])
    .await;
    let claude = project.run(&model, "migrate the tables");
    let ask = created(&mut events).await;
    assert_eq!(
        ask["ask"]["context"]["text"], "Migrated the tables.",
        "{ask}"
    );
    let id = ask["id"].as_str().expect("an id");
    Api::of(&daemon)
        .reply(id, json!({"text": "now drop the old ones"}))
        .await;
    loop {
        let request = model.request().await;
        if request["messages"]
            .to_string()
            .contains("now drop the old ones")
        {
            break;
        }
    }
    // It finishes again: asked again, and Skip lets it stop.
    let again = created(&mut events).await;
    assert_eq!(
        again["ask"]["context"]["text"], "Dropped the old ones.",
        "{again}"
    );
    let id = again["id"].as_str().expect("an id");
    Api::of(&daemon).reply(id, json!({"text": "skip"})).await;
    let result = ended(claude).await;
    assert_eq!(result["result"], "Dropped the old ones.", "{result}");
}

#[tokio::test]
async fn without_the_daemon_claude_code_falls_back_and_nothing_is_allowed() {
    // A loopback port nobody listens on.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .expect("a free port")
        .port();
    let project = Project::new("claude-down", &format!("http://127.0.0.1:{port}"));
    let mut model = FakeModel::start(vec![Turn::Tool(
        "Bash",
        json!({"command": "echo hi > out.txt", "description": "write hi"}),
    )])
    .await;
    let started = Instant::now();
    let claude = project.run(&model, "write hi");
    let result = model.tool_result().await;
    figure(
        "daemon down: Claude Code start to its own decision",
        started.elapsed(),
    );
    // `-p` has no terminal to ask in: with no decision it denies.
    assert_eq!(result["is_error"], true, "{result}");
    assert!(!project.file("out.txt").exists(), "nothing ran");
    ended(claude).await;
}

#[tokio::test]
async fn claude_codes_own_questions_are_answered_from_the_chat() {
    let (daemon, mut events) = daemon_and_events().await;
    let project = Project::new("claude-questions", &daemon.base());
    let questions = json!({"questions": [
        {"question": "Which color should we use?", "header": "Color", "multiSelect": false,
         "options": [{"label": "Red", "description": "warm"}, {"label": "Blue", "description": "calm"}]},
        {"question": "What should we add?", "header": "Extras", "multiSelect": true,
         "options": [{"label": "Tests", "description": "unit tests"}, {"label": "Docs", "description": "a page"}]}
    ]});
    let mut model = FakeModel::start(vec![Turn::Tool("AskUserQuestion", questions)]).await;
    // AskUserQuestion needs a permission prompt tool in `-p`; with stdin
    // kept open and the host's own control request left unanswered, the
    // hook decides.
    let mut claude = project
        .claude(
            &model,
            &[
                "--input-format",
                "stream-json",
                "--output-format",
                "stream-json",
                "--verbose",
                "--permission-prompt-tool",
                "stdio",
            ],
        )
        .stdin(Stdio::piped())
        .spawn()
        .expect("start Claude Code");
    let mut stdin = claude.stdin.take().expect("piped stdin");
    let prompt = json!({"type": "user", "message": {"role": "user", "content": "pick a color"}});
    stdin
        .write_all(format!("{prompt}\n").as_bytes())
        .await
        .expect("write the prompt");
    let stdout = claude.stdout.take().expect("piped stdout");

    let ask = created(&mut events).await;
    assert_eq!(
        ask["ask"]["questions"].as_array().map(Vec::len),
        Some(2),
        "{ask}"
    );
    let id = ask["id"].as_str().expect("an id");
    Api::of(&daemon)
        .reply(id, json!({"text": "Q1: 2\nQ2: 1, 2"}))
        .await;
    let result = model.tool_result().await.to_string();
    assert!(
        result.contains(r#"\"Which color should we use?\"=\"Blue\""#),
        "{result}"
    );
    assert!(
        result.contains(r#"\"What should we add?\"=\"Tests, Docs\""#),
        "{result}"
    );
    // The run ends with its result line; then the host may go.
    let mut lines = BufReader::new(stdout).lines();
    tokio::time::timeout(RUN, async {
        while let Some(line) = lines.next_line().await.expect("read stdout") {
            if serde_json::from_str::<Value>(&line).is_ok_and(|line| line["type"] == "result") {
                return;
            }
        }
        panic!("Claude Code ended without a result");
    })
    .await
    .expect("a result line");
    drop(stdin);
    tokio::time::timeout(RUN, claude.wait())
        .await
        .expect("Claude Code ends")
        .expect("wait for Claude Code");
}

/// Codex in a project of its own, with askbridge's hook installed in its
/// `CODEX_HOME` and its model at the fake.
struct CodexProject {
    dir: TempDir,
    home: TempDir,
}

impl CodexProject {
    fn new(label: &str, server: &str, model: &FakeModel) -> CodexProject {
        let project = CodexProject {
            dir: TempDir::new(label),
            home: TempDir::new(&format!("{label}-home")),
        };
        let config = format!(
            "model = \"gpt-fake\"\nmodel_provider = \"fake\"\napproval_policy = \"on-request\"\n\
             sandbox_mode = \"read-only\"\n[model_providers.fake]\nname = \"fake\"\n\
             base_url = \"{}/v1\"\nwire_api = \"responses\"\nenv_key = \"FAKE_OPENAI_KEY\"\n\
             [projects.\"{}\"]\ntrust_level = \"trusted\"\n",
            model.url,
            project.dir.path().display()
        );
        std::fs::write(project.home.path().join("config.toml"), config).expect("write config.toml");
        install(
            &["codex", "--server", server],
            ("CODEX_HOME", project.home.path()),
        );
        project
    }

    /// `codex exec PROMPT`, approvals through hooks, stdin closed.
    fn run(&self, prompt: &str) -> Child {
        let modules = node_env::node_modules(&[CODEX]);
        host(&modules.join(CODEX), self.dir.path(), self.home.path())
            .args(["exec", "--skip-git-repo-check", "--disable", "plugins"])
            .args([
                "--disable",
                "remote_plugin",
                "--dangerously-bypass-hook-trust",
            ])
            .args(["--approve-for-me", "--json", prompt])
            .env("CODEX_HOME", self.home.path())
            .env("FAKE_OPENAI_KEY", "test-key")
            .stdin(Stdio::null())
            .spawn()
            .expect("start Codex")
    }
}

/// A shell call as Codex's model makes one that needs approval.
fn escalated(command: &str) -> Turn {
    Turn::Tool(
        "exec_command",
        json!({"cmd": command, "sandbox_permissions": "require_escalated", "justification": "make the flag"}),
    )
}

#[tokio::test]
async fn codex_runs_a_command_approved_from_the_chat() {
    let (daemon, mut events) = daemon_and_events().await;
    let mut model = FakeModel::start(vec![escalated("touch flag")]).await;
    let project = CodexProject::new("codex-allow", &daemon.base(), &model);
    let started = Instant::now();
    let codex = project.run("make the flag");
    let ask = created(&mut events).await;
    figure("Codex start to the ask posted", started.elapsed());
    let call = ask["ask"]["context"]["text"].as_str().expect("the call");
    assert!(call.contains("$ touch flag"), "{ask}");
    assert!(call.contains("make the flag"), "{ask}");
    let id = ask["id"].as_str().expect("an id");
    Api::of(&daemon).reply(id, json!({"text": "Allow"})).await;
    model.tool_result().await;
    assert!(project.dir.path().join("flag").exists(), "the command ran");
    let output = tokio::time::timeout(RUN, codex.wait_with_output())
        .await
        .expect("Codex ends")
        .expect("run Codex");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stdout)
    );
}

#[tokio::test]
async fn codex_tells_its_model_the_persons_words_when_they_deny() {
    let (daemon, mut events) = daemon_and_events().await;
    let mut model = FakeModel::start(vec![escalated("touch flag")]).await;
    let project = CodexProject::new("codex-deny", &daemon.base(), &model);
    let codex = project.run("make the flag");
    let ask = created(&mut events).await;
    let id = ask["id"].as_str().expect("an id");
    Api::of(&daemon)
        .reply(id, json!({"text": "no flags on Fridays"}))
        .await;
    let result = model.tool_result().await;
    assert!(
        result.to_string().contains("no flags on Fridays"),
        "{result}"
    );
    assert!(!project.dir.path().join("flag").exists(), "nothing ran");
    let ended = tokio::time::timeout(RUN, codex.wait_with_output()).await;
    assert!(ended.is_ok(), "Codex ends");
}

#[tokio::test]
async fn claude_code_calls_ask_user_and_a_cancelled_host_form_leaves_the_ask_to_the_chat() {
    let (daemon, mut events) = daemon_and_events().await;
    let project = Project::new("claude-mcp", &daemon.base());
    let mcp = json!({"mcpServers": {"askbridge": {
        "type": "stdio", "command": BINARY, "args": ["mcp", "--server", daemon.base()]
    }}});
    let mcp_config = project.file("mcp.json");
    std::fs::write(&mcp_config, mcp.to_string()).expect("write mcp.json");
    let mut model = FakeModel::start(vec![Turn::Tool(
        "mcp__askbridge__ask_user",
        json!({"title": "Release 2.4", "to": "web", "questions": [{
            "id": "deploy", "header": "Deploy", "question": "Where should I deploy the build?",
            "options": [{"label": "Staging"}, {"label": "Production"}]}]}),
    )])
    .await;
    // The hook allows askbridge's own tool without asking; Claude Code
    // shows the ask as a form, and with nobody at it answers `cancel`:
    // the ask must stay open for the chat.
    let claude = project
        .claude(
            &model,
            &[
                "answer the release question",
                "--output-format",
                "json",
                "--mcp-config",
                mcp_config.to_str().expect("a UTF-8 path"),
            ],
        )
        .env("ENABLE_TOOL_SEARCH", "false")
        .stdin(Stdio::null())
        .spawn()
        .expect("start Claude Code");
    let ask = created(&mut events).await;
    assert_eq!(ask["ask"]["title"], "Release 2.4", "{ask}");
    let id = ask["id"].as_str().expect("an id");
    Api::of(&daemon)
        .reply(id, json!({"text": "Production"}))
        .await;
    let result = model.tool_result().await;
    assert_ne!(result["is_error"], true, "{result}");
    assert!(
        result.to_string().contains(r#"\"status\":\"answered\""#),
        "{result}"
    );
    assert_eq!(
        daemon::outcome(&daemon, id).await["answers"],
        json!({"deploy": ["Production"]})
    );
    ended(claude).await;
}

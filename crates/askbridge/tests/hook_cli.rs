//! `askbridge hook` end to end: the binary, fed a coding agent's hook
//! event, against a real `askbridge serve` answered through its HTTP API;
//! and the fallbacks that print nothing. Tests wait on process output,
//! never on the clock.

use std::process::Output;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::AsyncReadExt;
use tokio::process::{Child, Command};

mod daemon;
use daemon::{Api, Daemon, client};

const BINARY: &str = env!("CARGO_BIN_EXE_askbridge");

/// Where the hooks of these tests note their waiting asks.
const STATE: &str = concat!(env!("CARGO_TARGET_TMPDIR"), "/hook-state");

/// How long any one step may take before the test gives up.
const STEP: Duration = Duration::from_secs(60);

/// The API token of the daemons these tests approve on the web page from:
/// an approval goes to the web page only when the daemon has one.
const TOKEN: &str = "hook-tests-token";

/// A daemon whose web page may approve (it has an API token).
fn approver() -> Daemon {
    Daemon::builder().token(TOKEN).start()
}

/// Claude Code's `PermissionRequest` for a Bash call.
fn bash_event(command: &str) -> Value {
    json!({
        "session_id": "79187ccd-1", "cwd": "/home/alice/api-server", "prompt_id": "p1",
        "permission_mode": "default", "hook_event_name": "PermissionRequest", "tool_name": "Bash",
        "tool_input": {"command": command, "description": "push the release"},
        "permission_suggestions": [{"type": "addDirectories", "directories": ["/tmp"], "destination": "session"}]
    })
}

/// `askbridge hook claude-code ARGS` with `event` on standard input.
fn spawn_hook(args: &[&str], event: &str) -> Child {
    spawn_hook_for("claude-code", args, event)
}

/// `askbridge hook HOST ARGS` with `event` on standard input.
fn spawn_hook_for(host: &str, args: &[&str], event: &str) -> Child {
    let mut command = Command::new(BINARY);
    command
        .args(["hook", host])
        .args(args)
        .env("ASKBRIDGE_HOOK_STATE", STATE)
        .env_remove("ASKBRIDGE_SERVER")
        .env("ASKBRIDGE_API_TOKEN", TOKEN);
    client::spawn_with_input(command, event)
}

/// A running hook against `daemon`, and the ask id it announced.
async fn hook_waiting(daemon: &Daemon, event: &Value) -> (Child, String) {
    hook_waiting_with(daemon, &[], event).await
}

/// [`hook_waiting`] with more options; `--to web` unless they say where.
async fn hook_waiting_with(daemon: &Daemon, args: &[&str], event: &Value) -> (Child, String) {
    let server = daemon.base();
    let to: &[&str] = if args.contains(&"--to") {
        &[]
    } else {
        &["--to", "web"]
    };
    let args: Vec<&str> = ["--server", server.as_str()]
        .iter()
        .chain(to)
        .chain(args)
        .copied()
        .collect();
    let mut child = spawn_hook(&args, &event.to_string());
    let id = client::announced(&mut child, "askbridge hook: ask ", " posted").await;
    (child, id)
}

/// The hook's exit code and what it printed.
async fn finish(mut child: Child) -> (Option<i32>, String) {
    let mut stdout = String::new();
    if let Some(mut pipe) = child.stdout.take() {
        tokio::time::timeout(STEP, pipe.read_to_string(&mut stdout))
            .await
            .expect("askbridge hook prints")
            .expect("read stdout");
    }
    let status = tokio::time::timeout(STEP, child.wait())
        .await
        .expect("askbridge hook exits")
        .expect("wait for askbridge hook");
    (status.code(), stdout)
}

async fn decision(child: Child) -> Value {
    let (code, stdout) = finish(child).await;
    assert_eq!(code, Some(0), "{stdout}");
    serde_json::from_str(&stdout).unwrap_or_else(|error| panic!("{error}: {stdout:?}"))
}

async fn output(args: &[&str], event: &str) -> Output {
    let child = spawn_hook(args, event);
    tokio::time::timeout(STEP, child.wait_with_output())
        .await
        .expect("askbridge hook exits")
        .expect("run askbridge hook")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[tokio::test]
async fn a_bash_call_is_shown_whole_and_allowed_from_the_chat() {
    let daemon = approver();
    let api = Api::of(&daemon);
    let (child, id) = hook_waiting(&daemon, &bash_event("git push --force origin main")).await;
    let ask = api.ask(&id).await;
    assert_eq!(
        ask["ask"]["questions"][0]["question"],
        "Claude Code asks in its terminal too: whichever answer comes first decides.\n\n\
         Allow Bash in api-server?"
    );
    let context = ask["ask"]["context"]["text"].as_str().expect("the call");
    assert!(
        context.starts_with("$ git push --force origin main"),
        "{ask}"
    );
    let labels: Vec<&str> = ask["ask"]["questions"][0]["options"]
        .as_array()
        .expect("options")
        .iter()
        .filter_map(|option| option["label"].as_str())
        .collect();
    assert_eq!(labels, ["Allow", "Allow for this session", "Deny"]);
    api.reply(&id, json!({"text": "allow"})).await;
    assert_eq!(
        decision(child).await,
        json!({"hookSpecificOutput": {"hookEventName": "PermissionRequest", "decision": {"behavior": "allow"}}})
    );
}

#[tokio::test]
async fn own_words_deny_the_call_and_reach_the_agent() {
    let daemon = approver();
    let (child, id) = hook_waiting(&daemon, &bash_event("rm -rf build")).await;
    Api::of(&daemon)
        .reply(&id, json!({"text": "keep the build, clean only target/"}))
        .await;
    assert_eq!(
        decision(child).await["hookSpecificOutput"]["decision"],
        json!({"behavior": "deny", "message": "keep the build, clean only target/"})
    );
}

#[tokio::test]
async fn the_agents_own_questions_are_answered_by_typed_replies() {
    let daemon = approver();
    let event = json!({
        "session_id": "s2", "cwd": "/tmp/proj", "hook_event_name": "PreToolUse",
        "tool_name": "AskUserQuestion", "tool_use_id": "toolu_1",
        "tool_input": {"questions": [
            {"question": "Which color should we use?", "header": "Color", "multiSelect": false,
             "options": [{"label": "Red"}, {"label": "Blue"}]},
            {"question": "What should we add?", "header": "Extras", "multiSelect": true,
             "options": [{"label": "Tests"}, {"label": "Docs"}, {"label": "Bench"}]}
        ]}
    });
    let (child, id) = hook_waiting(&daemon, &event).await;
    Api::of(&daemon)
        .reply(&id, json!({"text": "Q1: 2\nQ2: 1, 2"}))
        .await;
    let output = decision(child).await;
    let output = &output["hookSpecificOutput"];
    assert_eq!(output["permissionDecision"], "allow", "{output}");
    assert_eq!(
        output["updatedInput"]["answers"],
        json!({"Which color should we use?": "Blue", "What should we add?": "Tests, Docs"})
    );
    assert_eq!(
        output["updatedInput"]["questions"],
        event["tool_input"]["questions"]
    );
}

#[tokio::test]
async fn a_skipped_tool_call_is_left_to_the_terminal() {
    let daemon = approver();
    let (child, id) = hook_waiting(&daemon, &bash_event("make deploy")).await;
    Api::of(&daemon).reply(&id, json!({"text": "skip"})).await;
    let (code, stdout) = finish(child).await;
    assert_eq!(code, Some(0));
    assert_eq!(stdout, "", "no decision");
}

#[tokio::test]
async fn a_stopped_hook_cancels_its_ask_and_decides_nothing() {
    let daemon = approver();
    let (child, id) = hook_waiting(&daemon, &bash_event("make release")).await;
    let pid = child.id().expect("running");
    let killed = std::process::Command::new("kill")
        .args(["-TERM", &pid.to_string()])
        .status()
        .expect("kill");
    assert!(killed.success());
    let (code, stdout) = finish(child).await;
    assert_eq!(code, Some(0));
    assert_eq!(stdout, "");
    let ended = daemon::outcome(&daemon, &id).await;
    assert_eq!(ended["reason"], "cancelled", "{ended}");
}

#[tokio::test]
async fn a_hook_killed_outright_ends_its_ask_at_once() {
    // Codex kills its hook with SIGKILL on Escape: nothing runs in the
    // hook, so the daemon must see its held request drop.
    let daemon = Daemon::builder()
        .token(TOKEN)
        .env("ASKBRIDGE_LOG", "info,askbridge::http=debug")
        .start();
    let (mut child, id) = hook_waiting(&daemon, &bash_event("make publish")).await;
    // The request that holds the ask (`GET …?wait=…&hold=true`).
    daemon.wait_for_log(&format!("a request holds the ask ask_id={id}"), STEP);
    child.kill().await.expect("SIGKILL the hook");
    let ended = daemon::outcome(&daemon, &id).await;
    assert_eq!(ended["status"], "no_answer", "{ended}");
    assert_eq!(ended["reason"], "cancelled", "{ended}");
}

#[tokio::test]
async fn the_same_pending_call_is_asked_once_and_a_later_identical_call_again() {
    let daemon = approver();
    let api = Api::of(&daemon);
    let event = bash_event("cargo publish");
    let (first, id) = hook_waiting(&daemon, &event).await;
    // The host runs the hook again for the same call: the same ask.
    let (again, same) = hook_waiting(&daemon, &event).await;
    assert_eq!(same, id);
    assert_eq!(api.pending_ids().await, std::slice::from_ref(&id));
    api.reply(&id, json!({"text": "1"})).await;
    for child in [first, again] {
        assert_eq!(
            decision(child).await["hookSpecificOutput"]["decision"]["behavior"],
            "allow"
        );
    }
    // The same command later in the session is a new call: asked anew,
    // never allowed by the earlier answer.
    let (later, next) = hook_waiting(&daemon, &event).await;
    assert_ne!(next, id);
    api.reply(&next, json!({"text": "deny"})).await;
    assert_eq!(
        decision(later).await["hookSpecificOutput"]["decision"]["behavior"],
        "deny"
    );
}

#[tokio::test]
async fn askbridges_own_tools_are_allowed_without_asking() {
    let event = json!({
        "session_id": "s", "cwd": "/p", "hook_event_name": "PreToolUse",
        "tool_name": "mcp__askbridge__ask_user", "tool_input": {"questions": []}
    });
    // No daemon needed: nothing is asked.
    let output = output(&["--server", "http://127.0.0.1:1"], &event.to_string()).await;
    assert_eq!(output.status.code(), Some(0));
    let decision: Value = serde_json::from_slice(&output.stdout).expect("a decision");
    assert_eq!(
        decision["hookSpecificOutput"]["permissionDecision"],
        "allow"
    );
}

#[tokio::test]
async fn without_a_daemon_the_hook_prints_nothing_and_says_why() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .expect("a free port")
        .port();
    let url = format!("http://127.0.0.1:{port}");
    let output = output(&["--server", &url], &bash_event("ls").to_string()).await;
    assert_eq!(output.status.code(), Some(0));
    assert!(output.stdout.is_empty(), "{}", text(&output.stdout));
    let stderr = text(&output.stderr);
    assert!(
        stderr.contains("cannot reach the askbridge daemon"),
        "{stderr}"
    );
    assert!(
        stderr.contains("Claude Code decides in its terminal"),
        "{stderr}"
    );
}

#[tokio::test]
async fn an_unreadable_event_prints_nothing_and_says_why() {
    let output = output(
        &["--server", "http://127.0.0.1:1"],
        "{\"hook_event_name\": \"PreToolUse\"",
    )
    .await;
    assert_eq!(output.status.code(), Some(0));
    assert!(output.stdout.is_empty());
    assert!(
        text(&output.stderr).contains("the hook event is not JSON"),
        "{}",
        text(&output.stderr)
    );
}

#[tokio::test]
async fn a_group_target_naming_nobody_is_refused() {
    let output = output(
        &[
            "--server",
            "http://127.0.0.1:1",
            "--to",
            "telegram:-1001234",
        ],
        &bash_event("ls").to_string(),
    )
    .await;
    assert_eq!(output.status.code(), Some(0));
    assert!(output.stdout.is_empty());
    let stderr = text(&output.stderr);
    assert!(stderr.contains("names no person"), "{stderr}");
    assert!(stderr.contains("telegram:-1001234@USER_ID"), "{stderr}");
}

/// `askbridge hooks ARGS` run to its end.
fn hooks(args: &[&str], home: &std::path::Path) -> std::process::Output {
    std::process::Command::new(BINARY)
        .arg("hooks")
        .args(args)
        .env("HOME", home)
        .env_remove("CODEX_HOME")
        .output()
        .expect("run askbridge hooks")
}

#[test]
fn hooks_install_merges_into_the_projects_settings_and_uninstall_takes_it_out() {
    let project = daemon::TempDir::new("hooks-install");
    let dir = project.path().to_str().expect("a UTF-8 path");
    let settings = project.path().join(".claude/settings.json");
    std::fs::create_dir_all(settings.parent().expect("a parent")).expect("mkdir");
    let before = r#"{"permissions": {"allow": ["Read"]}, "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "notify.sh"}]}]}}"#;
    std::fs::write(&settings, before).expect("write settings");

    let install = [
        "install",
        "claude-code",
        "--dir",
        dir,
        "--to",
        "web",
        "--hold",
        "600",
    ];
    let output = hooks(&install, project.path());
    assert!(output.status.success(), "{}", text(&output.stderr));
    assert!(
        text(&output.stdout)
            .contains("PermissionRequest, Elicitation, PostToolUse, UserPromptSubmit, Stop run"),
        "{}",
        text(&output.stdout)
    );
    let installed: Value =
        serde_json::from_str(&std::fs::read_to_string(&settings).expect("read")).expect("JSON");
    assert_eq!(installed["permissions"], json!({"allow": ["Read"]}));
    assert_eq!(
        installed["hooks"]["Stop"][0]["hooks"][0]["command"],
        "notify.sh"
    );
    let hook = &installed["hooks"]["PermissionRequest"][0]["hooks"][0];
    assert_eq!(hook["timeout"], 630);
    let command = hook["command"].as_str().expect("a command");
    assert!(
        command.ends_with(" hook claude-code --to web --hold 600"),
        "{command}"
    );
    assert_eq!(
        std::fs::read_to_string(project.path().join(".claude/settings.json.askbridge.bak"))
            .expect("backup"),
        before
    );

    let again = hooks(&install, project.path());
    assert!(
        text(&again.stdout).contains("nothing changed"),
        "{}",
        text(&again.stdout)
    );
    let status = hooks(&["status", "--dir", dir], project.path());
    assert!(
        text(&status.stdout).contains("Claude Code (project): PermissionRequest runs"),
        "{}",
        text(&status.stdout)
    );

    let output = hooks(&["uninstall", "claude-code", "--dir", dir], project.path());
    assert!(output.status.success(), "{}", text(&output.stderr));
    let after: Value =
        serde_json::from_str(&std::fs::read_to_string(&settings).expect("read")).expect("JSON");
    assert_eq!(after, serde_json::from_str::<Value>(before).expect("JSON"));
}

#[test]
fn hooks_install_says_what_claude_codes_permission_mode_leaves_to_askbridge() {
    let project = daemon::TempDir::new("hooks-mode");
    let dir = project.path().to_str().expect("a UTF-8 path");
    let home = project.path().join("home");
    let install = ["install", "claude-code", "--dir", dir, "--to", "web"];
    // No file sets a mode: Claude Code's own default, auto mode.
    let said = text(&hooks(&install, &home).stdout);
    assert!(
        said.contains("Claude Code's permission mode is auto (Claude Code's default"),
        "{said}"
    );
    assert!(said.contains("askbridge is never asked about it"), "{said}");
    // The user's settings say bypassPermissions: nothing is ever asked.
    let user = home.join(".claude/settings.json");
    std::fs::create_dir_all(user.parent().expect("a parent")).expect("mkdir");
    std::fs::write(
        &user,
        r#"{"permissions": {"defaultMode": "bypassPermissions"}}"#,
    )
    .expect("write the user's settings");
    let said = text(&hooks(&install, &home).stdout);
    assert!(
        said.contains(&format!(
            "Claude Code's permission mode is bypassPermissions (set in {}): every call runs \
             without asking",
            user.display()
        )),
        "{said}"
    );
    // The project's local settings come first: asked in the chat.
    let local = project.path().join(".claude/settings.local.json");
    std::fs::write(&local, r#"{"permissions": {"defaultMode": "default"}}"#)
        .expect("write the local settings");
    let said = text(&hooks(&install, &home).stdout);
    assert!(!said.contains("permission mode"), "{said}");
}

#[test]
fn hooks_install_refuses_a_group_naming_nobody_and_writes_nothing() {
    let project = daemon::TempDir::new("hooks-refuse");
    let dir = project.path().to_str().expect("a UTF-8 path");
    let output = hooks(
        &["install", "claude-code", "--dir", dir, "--to", "slack:C123"],
        project.path(),
    );
    assert!(!output.status.success());
    assert!(
        text(&output.stderr).contains("names no person"),
        "{}",
        text(&output.stderr)
    );
    assert!(!project.path().join(".claude").exists());
}

#[tokio::test]
async fn a_default_target_naming_nobody_is_refused() {
    let daemon = Daemon::builder()
        .env("ASKBRIDGE_DEFAULT_TARGET", "telegram:-1001234")
        .start();
    let output = output(&["--server", &daemon.base()], &bash_event("ls").to_string()).await;
    assert_eq!(output.status.code(), Some(0));
    assert!(output.stdout.is_empty());
    let stderr = text(&output.stderr);
    assert!(
        stderr.contains("telegram:-1001234 names no person"),
        "{stderr}"
    );
    assert_eq!(
        Api::of(&daemon).list().await["asks"],
        json!([]),
        "nothing posted"
    );
}

#[test]
fn hooks_status_says_whether_the_daemon_each_hook_asks_answers() {
    let daemon = approver();
    let project = daemon::TempDir::new("hooks-status");
    let dir = project.path().to_str().expect("a UTF-8 path");
    let base = daemon.base();
    let install = ["install", "claude-code", "--dir", dir, "--server", &base];
    assert!(hooks(&install, project.path()).status.success());
    let status = text(&hooks(&["status", "--dir", dir], project.path()).stdout);
    assert!(
        status.contains(&format!("daemon at {base}: answers")),
        "{status}"
    );

    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .expect("a free port")
        .port();
    let down = format!("http://127.0.0.1:{port}");
    let install = ["install", "claude-code", "--dir", dir, "--server", &down];
    assert!(hooks(&install, project.path()).status.success());
    let status = text(&hooks(&["status", "--dir", dir], project.path()).stdout);
    assert!(
        status.contains(&format!("daemon at {down}: does not answer")),
        "{status}"
    );
}

/// The hook fed `event` (a later event of a session) to its end.
async fn later(daemon: &Daemon, event: Value) -> Output {
    output(&["--server", &daemon.base()], &event.to_string()).await
}

#[tokio::test]
async fn a_sessions_later_events_close_the_asks_they_show_stale() {
    let daemon = approver();
    let mut push = bash_event("git push");
    push["session_id"] = json!("stale-session");
    let mut tag = bash_event("git tag v1");
    tag["session_id"] = json!("stale-session");
    let (push_hook, push_id) = hook_waiting(&daemon, &push).await;
    let (tag_hook, tag_id) = hook_waiting(&daemon, &tag).await;

    // The push ran: answered in the terminal. Its ask closes, its hook
    // decides nothing; the tag's ask still waits.
    let mut ran = push.clone();
    ran["hook_event_name"] = json!("PostToolUse");
    ran["tool_response"] = json!({"stdout": ""});
    let quiet = later(&daemon, ran).await;
    assert_eq!(quiet.status.code(), Some(0));
    assert!(
        quiet.stdout.is_empty() && quiet.stderr.is_empty(),
        "{}",
        text(&quiet.stderr)
    );
    assert_eq!(finish(push_hook).await, (Some(0), String::new()));
    assert_eq!(
        daemon::outcome(&daemon, &push_id).await["reason"],
        "cancelled"
    );
    assert_eq!(daemon::status(&daemon, &tag_id).await["status"], "pending");

    // The turn ended: every ask of the session closes.
    later(
        &daemon,
        json!({"session_id": "stale-session", "hook_event_name": "Stop"}),
    )
    .await;
    assert_eq!(finish(tag_hook).await, (Some(0), String::new()));
    assert_eq!(
        daemon::outcome(&daemon, &tag_id).await["reason"],
        "cancelled"
    );
}

#[tokio::test]
async fn the_main_agents_stop_leaves_a_subagents_approval_open() {
    let daemon = approver();
    let mut call = bash_event("cargo test --workspace");
    call["session_id"] = json!("subagent-session");
    call["agent_id"] = json!("a7f3");
    let (hook, id) = hook_waiting(&daemon, &call).await;
    // The main agent stops 4 ms later: its Stop says nothing of the
    // subagent, still waiting for its person.
    let stop = json!({"session_id": "subagent-session", "hook_event_name": "Stop", "stop_hook_active": false});
    later(&daemon, stop).await;
    assert_eq!(daemon::status(&daemon, &id).await["status"], "pending");
    // The subagent's own next event shows its call ran: that closes it.
    let mut ran = call.clone();
    ran["hook_event_name"] = json!("PostToolUse");
    later(&daemon, ran).await;
    assert_eq!(finish(hook).await, (Some(0), String::new()));
    assert_eq!(daemon::outcome(&daemon, &id).await["reason"], "cancelled");
}

#[tokio::test]
async fn a_cursor_shell_command_is_allowed_from_the_chat() {
    let daemon = approver();
    let event = json!({
        "conversation_id": "c1", "generation_id": "g1", "hook_event_name": "beforeShellExecution",
        "command": "npm publish", "cwd": "/w/lib"
    });
    let child = spawn_hook_for(
        "cursor",
        &["--server", &daemon.base(), "--to", "web"],
        &event.to_string(),
    );
    let api = Api::of(&daemon);
    let mut events = daemon::events::EventReader::open(&api.http, &daemon.url("/v1/events")).await;
    let id = match api.pending_ids().await.pop() {
        Some(id) => id,
        None => loop {
            let (name, ask) = events.next().await;
            if name == "created" {
                break ask["id"].as_str().expect("an id").to_owned();
            }
        },
    };
    api.reply(&id, json!({"text": "Allow"})).await;
    assert_eq!(decision(child).await, json!({"permission": "allow"}));
}

/// A daemon whose `[hooks]` section is `hooks`.
fn daemon_with_hooks(hooks: &str) -> (Daemon, daemon::TempDir) {
    let dir = daemon::TempDir::new("hooks-config");
    let path = dir.path().join("askbridge.toml");
    std::fs::write(&path, format!("[hooks]\n{hooks}")).expect("write the config");
    let daemon = Daemon::builder()
        .token(TOKEN)
        .arg("--config")
        .arg(&path)
        .start();
    (daemon, dir)
}

#[tokio::test]
async fn the_daemons_hooks_section_sets_the_hold_and_the_tools_never_asked() {
    let (daemon, _dir) =
        daemon_with_hooks("hold_seconds = { claude-code = 45 }\nnever_ask = [\"WebFetch\"]\n");
    let mut fetch = bash_event("unused");
    fetch["tool_name"] = json!("WebFetch");
    fetch["tool_input"] = json!({"url": "https://example.com"});
    let output = output(&["--server", &daemon.base()], &fetch.to_string()).await;
    assert_eq!(output.status.code(), Some(0));
    assert_eq!(text(&output.stdout), "", "the terminal decides");
    let stderr = text(&output.stderr);
    assert!(
        stderr.contains("WebFetch is in the daemon's [hooks] never_ask"),
        "{stderr}"
    );
    assert_eq!(
        Api::of(&daemon).list().await["asks"],
        json!([]),
        "nothing asked"
    );

    let (child, id) = hook_waiting(&daemon, &bash_event("make test")).await;
    let ask = Api::of(&daemon).ask(&id).await;
    assert_eq!(ask["ask"]["timeoutSeconds"], 45, "{ask}");
    Api::of(&daemon).reply(&id, json!({"text": "Allow"})).await;
    let decided = decision(child).await;
    assert_eq!(
        decided["hookSpecificOutput"]["decision"]["behavior"],
        "allow"
    );
}

#[tokio::test]
async fn a_hold_that_runs_out_decides_nothing_and_ends_the_ask() {
    let daemon = approver();
    let mut child = spawn_hook(
        &["--server", &daemon.base(), "--to", "web", "--hold", "30"],
        &bash_event("make clean").to_string(),
    );
    let mut stderr = String::new();
    let mut pipe = child.stderr.take().expect("piped stderr");
    let (code, stdout) = finish(child).await;
    pipe.read_to_string(&mut stderr).await.expect("read stderr");
    assert_eq!(code, Some(0));
    assert_eq!(stdout, "", "no decision: the terminal asks");
    let asks = Api::of(&daemon).list().await;
    let ask = &asks["asks"][0];
    assert_eq!(ask["status"], "no_answer", "{asks}");
    assert_eq!(ask["reason"], "timeout", "{asks}");
    assert!(
        stderr.contains("ended without a decision (timeout)"),
        "{stderr}"
    );
}

#[tokio::test]
async fn a_hooks_section_target_naming_nobody_is_refused_like_to() {
    let (daemon, _dir) = daemon_with_hooks("to = \"telegram:-1001234\"\n");
    let output = output(&["--server", &daemon.base()], &bash_event("ls").to_string()).await;
    assert_eq!(output.status.code(), Some(0));
    assert_eq!(text(&output.stdout), "");
    let stderr = text(&output.stderr);
    assert!(
        stderr.contains("telegram:-1001234 names no person"),
        "{stderr}"
    );
    assert_eq!(
        Api::of(&daemon).list().await["asks"],
        json!([]),
        "nothing asked"
    );
}

#[tokio::test]
async fn with_continue_a_finished_turn_is_posted_and_the_reply_is_the_next_instruction() {
    let daemon = approver();
    let dir = daemon::TempDir::new("hook-stop");
    let transcript = dir.path().join("transcript.jsonl");
    std::fs::write(
        &transcript,
        "{\"type\":\"assistant\",\"message\":{\"content\":[{\"type\":\"text\",\"text\":\"Migrated 12 tables.\"}]}}\n",
    )
    .expect("write the transcript");
    let stop = json!({
        "session_id": "79187ccd-9", "cwd": "/home/alice/api-server", "hook_event_name": "Stop",
        "stop_hook_active": false, "transcript_path": transcript.to_str().expect("a UTF-8 path")
    });
    let server = daemon.base();
    let (child, id) = hook_waiting_with(&daemon, &["--continue"], &stop).await;
    let ask = Api::of(&daemon).ask(&id).await;
    assert_eq!(
        ask["ask"]["context"]["text"], "Migrated 12 tables.",
        "{ask}"
    );
    Api::of(&daemon)
        .reply(&id, json!({"text": "now drop the old ones"}))
        .await;
    assert_eq!(
        decision(child).await,
        json!({"decision": "block", "reason": "now drop the old ones"})
    );

    // Without --continue, a Stop only closes what went stale.
    let output = output(&["--server", &server], &stop.to_string()).await;
    assert_eq!(output.status.code(), Some(0));
    assert_eq!(text(&output.stdout), "");
    assert_eq!(Api::of(&daemon).pending_ids().await, Vec::<String>::new());

    // … unless the daemon's [hooks] section turns it on for every hook.
    let (daemon, _config) = daemon_with_hooks("continue_after_stop = true\n");
    let (child, id) = hook_waiting(&daemon, &stop).await;
    Api::of(&daemon).reply(&id, json!({"text": "skip"})).await;
    let (code, stdout) = finish(child).await;
    assert_eq!((code, stdout.as_str()), (Some(0), ""), "Skip lets it stop");
}

/// A fake Telegram with the group `chat`, and a daemon posting there.
async fn on_telegram(chat: i64) -> (askbridge_testkit::telegram::FakeTelegram, Daemon) {
    use askbridge_testkit::telegram::{Chat, FakeTelegram};
    let fake = FakeTelegram::start().await;
    fake.add_chat(&Chat::supergroup(chat, "Agents"));
    let daemon = Daemon::builder()
        .env("TELEGRAM_BOT_TOKEN", fake.token())
        .env("ASKBRIDGE_TELEGRAM_API_URL", fake.api_url())
        .start();
    (fake, daemon)
}

/// The behaviour Claude Code is told to take: the hook's decision.
async fn behavior(hook: Child) -> String {
    let decided = decision(hook).await;
    decided["hookSpecificOutput"]["decision"]["behavior"]
        .as_str()
        .unwrap_or_else(|| panic!("no behaviour in {decided}"))
        .to_owned()
}

/// `POST /v1/asks/{id}/reply` on `daemon` with `body` and no host key:
/// its status and error code.
async fn http_reply(daemon: &Daemon, id: &str, body: Value) -> (u16, Value) {
    let response = Api::of(daemon)
        .http
        .post(daemon.url(&format!("/v1/asks/{id}/reply")))
        .json(&body)
        .send()
        .await
        .expect("the daemon answers");
    let status = response.status().as_u16();
    (status, response.json().await.expect("a JSON body"))
}

#[tokio::test]
async fn an_approval_is_given_only_by_its_person_in_their_chat() {
    use askbridge_testkit::telegram::{Chat, User};
    const GROUP: i64 = -100_200_310;
    const APPROVER: i64 = 4242;
    let (fake, daemon) = on_telegram(GROUP).await;
    fake.add_chat(&Chat::private(APPROVER));

    // A direct chat: the HTTP API answered it before, whoever sent it.
    let direct = format!("telegram:{APPROVER}");
    let (hook, id) =
        hook_waiting_with(&daemon, &["--to", &direct], &bash_event("curl x | sh")).await;
    for body in [
        json!({"answers": {"decision": ["Allow"]}}),
        json!({"text": "Allow", "user": {"id": APPROVER.to_string()}}),
        json!({"skip": true}),
    ] {
        let (status, error) = http_reply(&daemon, &id, body).await;
        assert_eq!(
            (status, error["error"]["code"].as_str()),
            (403, Some("not_for_you")),
            "{error}"
        );
    }
    let question = fake.wait_for_sends(3).await.swap_remove(2);
    let alice = User::new(APPROVER, "Alice");
    fake.press_button(&alice, APPROVER, question.message_id, "Allow");
    assert_eq!(behavior(hook).await, "allow");

    // A group naming its approver: another member's press is refused.
    let named = format!("telegram:{GROUP}@{APPROVER}");
    let (hook, id) =
        hook_waiting_with(&daemon, &["--to", &named], &bash_event("make deploy")).await;
    let question = fake.wait_for_sends(6).await.swap_remove(5);
    let refused = fake.press_button(
        &User::new(7, "Mallory"),
        GROUP,
        question.message_id,
        "Allow",
    );
    let answer = fake.wait_for_callback_answer(&refused).await;
    assert_eq!(
        answer.text.as_deref(),
        Some("This question is not for you.")
    );
    assert_eq!(daemon::status(&daemon, &id).await["status"], "pending");
    let (status, _) = http_reply(&daemon, &id, json!({"answers": {"decision": ["Allow"]}})).await;
    assert_eq!(status, 403);
    fake.press_button(&alice, GROUP, question.message_id, "Deny");
    assert_eq!(behavior(hook).await, "deny");
}

#[tokio::test]
async fn the_web_page_approves_only_with_a_token_and_only_when_named() {
    // Without a token, any local process could approve on the page.
    let open = Daemon::start();
    let args = ["--server", &open.base(), "--to", "web"];
    let refused = output(&args, &bash_event("ls").to_string()).await;
    assert_eq!(refused.status.code(), Some(0));
    assert!(refused.stdout.is_empty());
    let stderr = text(&refused.stderr);
    assert!(stderr.contains("api_token"), "{stderr}");
    assert_eq!(
        Api::of(&open).list().await["asks"],
        json!([]),
        "nothing posted"
    );
    // With one, only when the hook says `--to web`: never by default.
    let daemon = approver();
    let refused = output(&["--server", &daemon.base()], &bash_event("ls").to_string()).await;
    assert!(refused.stdout.is_empty());
    let stderr = text(&refused.stderr);
    assert!(stderr.contains("\"to\": \"web\""), "{stderr}");
    assert_eq!(
        Api::of(&daemon).list().await["asks"],
        json!([]),
        "nothing posted"
    );
}

#[tokio::test]
async fn a_daemon_wide_escalation_never_passes_an_approval_to_a_group() {
    let dir = daemon::TempDir::new("hooks-escalate");
    let path = dir.path().join("askbridge.toml");
    std::fs::write(
        &path,
        "[defaults]\nescalate = [{ after_seconds = 60, to = \"telegram:-100999\" }]\n",
    )
    .expect("write the config");
    let daemon = Daemon::builder()
        .token(TOKEN)
        .arg("--config")
        .arg(&path)
        .start();
    let (hook, id) = hook_waiting(&daemon, &bash_event("git push --force")).await;
    let ask = Api::of(&daemon).ask(&id).await;
    assert!(
        ask["ask"]
            .get("escalate")
            .is_none_or(|steps| steps == &json!([])),
        "{ask}"
    );
    let places: Vec<&str> = ask["places"]
        .as_array()
        .expect("places")
        .iter()
        .filter_map(|place| place["target"].as_str())
        .collect();
    assert_eq!(places, ["web"], "{ask}");
    Api::of(&daemon).cancel(&id).await;
    assert_eq!(finish(hook).await, (Some(0), String::new()));
    // An ask anyone may answer still escalates.
    let plain = daemon::create(&daemon, &json!({"questions": [{"question": "Go?"}]})).await;
    let ask = Api::of(&daemon).ask(&plain).await;
    assert_eq!(ask["ask"]["escalate"][0]["to"], "telegram:-100999", "{ask}");
}

#[tokio::test]
async fn a_prompt_answered_in_the_terminal_closes_in_the_chat_saying_so() {
    const CHAT: i64 = -100_200_300;
    let (fake, daemon) = on_telegram(CHAT).await;
    let mut event = bash_event("cargo publish");
    event["session_id"] = json!("terminal-session");
    let to = format!("telegram:{CHAT}@42");
    let (hook, id) = hook_waiting_with(&daemon, &["--to", &to], &event).await;
    // The session's first message, then the call's block and the question
    // with its buttons under it.
    let mut sent = fake.wait_for_sends(3).await;
    let question = sent.swap_remove(2);
    let session = sent.swap_remove(0);
    assert_eq!(session.text, "Claude Code · api-server · session terminal");
    assert!(question.has_inline_keyboard(), "{}", question.text);
    assert_eq!(question.reply_to_message_id, Some(session.message_id));

    let mut ran = event.clone();
    ran["hook_event_name"] = json!("PostToolUse");
    later(&daemon, ran).await;
    assert_eq!(finish(hook).await, (Some(0), String::new()));
    assert_eq!(daemon::outcome(&daemon, &id).await["reason"], "cancelled");
    let closed = fake
        .wait_for("the question to close", |state| {
            state
                .message(CHAT, question.message_id)
                .filter(|message| message.edited && !message.has_inline_keyboard())
                .cloned()
        })
        .await;
    assert!(
        closed.text.ends_with("\n\n✅ Answered in the terminal"),
        "{}",
        closed.text
    );
}

#[tokio::test]
async fn a_chat_refusal_after_the_terminal_allowed_is_recorded_as_too_late() {
    use askbridge_testkit::telegram::User;
    const CHAT: i64 = -100_200_320;
    let (fake, daemon) = on_telegram(CHAT).await;
    let to = format!("telegram:{CHAT}@42");
    let mut event = bash_event("cargo build --release");
    event["session_id"] = json!("late-session");
    let (hook, id) = hook_waiting_with(&daemon, &["--to", &to], &event).await;
    let question = fake.wait_for_sends(3).await.swap_remove(2);
    // While it waits, the message says the terminal may answer first.
    assert!(
        question.text.contains(
            "Claude Code asks in its terminal too: whichever answer comes first decides."
        ),
        "{}",
        question.text
    );
    // "Yes" at the keyboard: the call runs. Alice, in the chat, denies it
    // meanwhile; the hook's deny reaches a host that already decided.
    fake.press_button(&User::new(42, "Alice"), CHAT, question.message_id, "Deny");
    assert_eq!(behavior(hook).await, "deny");
    assert_eq!(daemon::outcome(&daemon, &id).await["status"], "answered");
    // The call ran all the same (its PostToolUse): the chat answer came
    // too late, and the record does not present it as what happened.
    let mut ran = event.clone();
    ran["hook_event_name"] = json!("PostToolUse");
    let quiet = later(&daemon, ran).await;
    assert_eq!(quiet.status.code(), Some(0), "{}", text(&quiet.stderr));
    let outcome = daemon::outcome(&daemon, &id).await;
    assert_eq!(
        (&outcome["status"], &outcome["reason"], &outcome["answers"]),
        (&json!("no_answer"), &json!("cancelled"), &json!({})),
        "{outcome}"
    );
    let closed = fake
        .wait_for("the question to say the answer came too late", |state| {
            state
                .message(CHAT, question.message_id)
                .filter(|message| message.text.contains("too late"))
                .cloned()
        })
        .await;
    assert!(
        closed.text.ends_with(
            "\n\n⚠ Answered in the terminal first — Alice's answer here (Deny) came too late and decided nothing"
        ),
        "{}",
        closed.text
    );
}

#[tokio::test]
async fn a_chat_refusal_that_held_stays_the_decision() {
    use askbridge_testkit::telegram::User;
    const CHAT: i64 = -100_200_330;
    let (fake, daemon) = on_telegram(CHAT).await;
    let to = format!("telegram:{CHAT}@42");
    let alice = User::new(42, "Alice");
    let mut event = bash_event("rm -rf target");
    event["session_id"] = json!("held-session");
    let (hook, refused) = hook_waiting_with(&daemon, &["--to", &to], &event).await;
    let question = fake.wait_for_sends(3).await.swap_remove(2);
    fake.press_button(&alice, CHAT, question.message_id, "Deny");
    assert_eq!(behavior(hook).await, "deny");
    // The agent asks for the same call again (the refusal held: it did not
    // run), and this time Alice allows it, and it runs.
    let mut again = event.clone();
    again["prompt_id"] = json!("p2");
    let (hook, allowed) = hook_waiting_with(&daemon, &["--to", &to], &again).await;
    let question = fake.wait_for_sends(5).await.swap_remove(4);
    fake.press_button(&alice, CHAT, question.message_id, "Allow");
    assert_eq!(behavior(hook).await, "allow");
    let mut ran = again.clone();
    ran["hook_event_name"] = json!("PostToolUse");
    later(&daemon, ran).await;
    // The turn ends.
    later(
        &daemon,
        json!({"session_id": "held-session", "hook_event_name": "Stop"}),
    )
    .await;
    for id in [&refused, &allowed] {
        assert_eq!(
            daemon::outcome(&daemon, id).await["status"],
            "answered",
            "{id}"
        );
    }
    assert_eq!(
        daemon::outcome(&daemon, &refused).await["answers"]["decision"],
        json!(["Deny"])
    );
}

#[tokio::test]
async fn with_notify_a_finished_turn_is_a_notice_in_the_sessions_thread_and_nothing_waits() {
    const CHAT: i64 = -100_200_301;
    let (fake, daemon) = on_telegram(CHAT).await;
    let server = daemon.base();
    let to = format!("telegram:{CHAT}@42");
    let stop = json!({
        "session_id": "79187ccd-1", "cwd": "/home/alice/api-server", "hook_event_name": "Stop",
        "stop_hook_active": false, "last_assistant_message": "Migrated **12** tables."
    });
    let args = ["--server", server.as_str(), "--to", to.as_str(), "--notify"];
    let output = output(&args, &stop.to_string()).await;
    assert_eq!(output.status.code(), Some(0));
    assert_eq!(text(&output.stdout), "", "no decision: the agent stops");
    assert!(
        text(&output.stderr).contains("last message posted to telegram:"),
        "{}",
        text(&output.stderr)
    );
    let posted = fake.wait_for_sends(3).await;
    assert_eq!(
        posted[0].text,
        "Claude Code · api-server · session 79187ccd"
    );
    assert_eq!(posted[1].text, "Claude Code finished in api-server.");
    assert_eq!(posted[2].text, "Migrated **12** tables.");
    for message in &posted[1..] {
        assert_eq!(message.reply_to_message_id, Some(posted[0].message_id));
    }
    assert_eq!(
        Api::of(&daemon).list().await["asks"],
        json!([]),
        "nothing asked"
    );

    // The session's next approval goes under the same first message.
    let (hook, id) = hook_waiting_with(&daemon, &["--to", &to], &bash_event("ls")).await;
    let question = fake.wait_for_sends(5).await.swap_remove(4);
    assert!(question.has_inline_keyboard(), "{}", question.text);
    assert_eq!(question.reply_to_message_id, Some(posted[0].message_id));
    Api::of(&daemon).cancel(&id).await;
    assert_eq!(finish(hook).await, (Some(0), String::new()));
}

#[test]
fn notify_and_continue_are_refused_for_hosts_whose_stop_askbridge_does_not_read() {
    let project = daemon::TempDir::new("hooks-notify");
    let dir = project.path().to_str().expect("a UTF-8 path");
    for flag in ["--notify", "--continue"] {
        let output = hooks(
            &["install", "copilot", "--dir", dir, "--to", "web", flag],
            project.path(),
        );
        assert!(!output.status.success(), "{flag}");
        assert!(
            text(&output.stderr).contains(&format!("{flag} is for Claude Code and Codex")),
            "{}",
            text(&output.stderr)
        );
    }
}

#[test]
fn installing_for_codex_says_its_terminal_is_locked_for_the_hold() {
    let project = daemon::TempDir::new("hooks-codex");
    let dir = project.path().to_str().expect("a UTF-8 path");
    let install = [
        "install", "codex", "--scope", "project", "--dir", dir, "--to", "web", "--hold", "90",
    ];
    let output = hooks(&install, project.path());
    assert!(output.status.success(), "{}", text(&output.stderr));
    let said = text(&output.stdout);
    assert!(
        said.contains("Codex locks its terminal while the hook waits") && said.contains("90 s"),
        "{said}"
    );
}

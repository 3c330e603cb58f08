//! `askbridge hooks` and `askbridge hook` treating the user's machine with
//! care: the settings file keeps its mode, its symlink, its first backup
//! and every byte askbridge did not add; concurrent installs do not
//! corrupt it; `hooks status` sends no token and contacts no server a
//! repository alone names; Cursor is told `ask` whenever the hook decides
//! nothing; and the hook returns before the host's timeout, whatever the
//! daemon does. Tests wait on processes and sockets, never on the clock.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

mod daemon;
use daemon::TempDir;

const BINARY: &str = env!("CARGO_BIN_EXE_askbridge");

/// Where the hooks of these tests note their waiting asks.
const STATE: &str = concat!(env!("CARGO_TARGET_TMPDIR"), "/hook-state");

/// How long any one step may take before the test gives up.
const STEP: Duration = Duration::from_secs(60);

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// `askbridge hooks ARGS` with `home` as `HOME`, to its end.
fn hooks(args: &[&str], home: &Path) -> Output {
    Command::new(BINARY)
        .arg("hooks")
        .args(args)
        .env("HOME", home)
        .env_remove("CODEX_HOME")
        .env_remove("ASKBRIDGE_SERVER")
        .output()
        .expect("run askbridge hooks")
}

/// Runs `askbridge hooks ARGS` and checks it succeeded.
fn hooks_ok(args: &[&str], home: &Path) -> String {
    let output = hooks(args, home);
    assert!(output.status.success(), "{}", text(&output.stderr));
    text(&output.stdout)
}

/// `askbridge hook HOST ARGS` with `event` on standard input, to its end.
fn hook(host: &str, args: &[&str], event: &str) -> Output {
    let mut child = Command::new(BINARY)
        .args(["hook", host])
        .args(args)
        .env("ASKBRIDGE_HOOK_STATE", STATE)
        .env_remove("ASKBRIDGE_SERVER")
        .env_remove("ASKBRIDGE_API_TOKEN")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn askbridge hook");
    child
        .stdin
        .take()
        .expect("piped stdin")
        .write_all(event.as_bytes())
        .expect("write the event");
    child.wait_with_output().expect("run askbridge hook")
}

/// A free loopback port nothing listens on.
fn closed_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .expect("a free port")
        .port()
}

#[cfg(unix)]
fn mode(path: &Path) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).expect("stat").permissions().mode() & 0o777
}

/// The settings a user might have, as serde_json writes them, with an
/// empty list and a number written as an exponent.
const SETTINGS: &str = r#"{
  "env": {
    "ANTHROPIC_API_KEY": "sk-ant-secret"
  },
  "cleanupPeriodDays": 1e2,
  "hooks": {
    "Stop": [],
    "Notification": [
      {
        "hooks": [
          {
            "type": "command",
            "command": "notify.sh"
          }
        ]
      }
    ]
  }
}
"#;

#[cfg(unix)]
#[test]
fn install_and_uninstall_keep_the_mode_the_symlink_the_first_backup_and_every_other_byte() {
    use std::os::unix::fs::PermissionsExt;
    let home = TempDir::new("hooks-care");
    let dir = home.path().to_str().expect("a UTF-8 path");
    // .claude/settings.json is a link into a dotfiles folder, 0600.
    let real = home.path().join("dotfiles/claude-settings.json");
    std::fs::create_dir_all(real.parent().expect("a parent")).expect("mkdir");
    std::fs::write(&real, SETTINGS).expect("write");
    std::fs::set_permissions(&real, std::fs::Permissions::from_mode(0o600)).expect("chmod");
    let link = home.path().join(".claude/settings.json");
    std::fs::create_dir_all(link.parent().expect("a parent")).expect("mkdir");
    std::os::unix::fs::symlink(&real, &link).expect("symlink");

    let install = |hold: &str| {
        hooks_ok(
            &[
                "install",
                "claude-code",
                "--dir",
                dir,
                "--to",
                "web",
                "--hold",
                hold,
            ],
            home.path(),
        )
    };
    install("60");
    install("120");
    assert!(
        std::fs::symlink_metadata(&link)
            .expect("stat")
            .file_type()
            .is_symlink(),
        "the link stays a link"
    );
    assert_eq!(mode(&real), 0o600, "the API key stays private");
    let installed: Value =
        serde_json::from_str(&std::fs::read_to_string(&real).expect("read")).expect("JSON");
    let command = installed["hooks"]["PermissionRequest"][0]["hooks"][0]["command"]
        .as_str()
        .expect("installed in the real file");
    assert!(command.ends_with("--hold 120"), "{command}");
    assert_eq!(
        installed["hooks"]["PermissionRequest"]
            .as_array()
            .map(Vec::len),
        Some(1)
    );
    // The backup is the file before askbridge, not the first install.
    let backup = home
        .path()
        .join("dotfiles/claude-settings.json.askbridge.bak");
    assert_eq!(std::fs::read_to_string(&backup).expect("backup"), SETTINGS);
    assert_eq!(mode(&backup), 0o600);

    hooks_ok(&["uninstall", "claude-code", "--dir", dir], home.path());
    assert_eq!(
        std::fs::read_to_string(&real).expect("read"),
        SETTINGS,
        "exactly what was there: `\"Stop\": []` and `1e2` too"
    );
    assert_eq!(mode(&real), 0o600);
    assert!(
        std::fs::symlink_metadata(&link)
            .expect("stat")
            .file_type()
            .is_symlink()
    );
}

#[test]
fn concurrent_installs_leave_valid_json_with_the_hook_once() {
    let home = TempDir::new("hooks-race");
    let dir = home.path().to_str().expect("a UTF-8 path");
    let settings = home.path().join(".claude/settings.json");
    std::fs::create_dir_all(settings.parent().expect("a parent")).expect("mkdir");
    std::fs::write(&settings, SETTINGS).expect("write");
    // Twenty installs at once, each with its own hold: each one changes
    // the file.
    let children: Vec<_> = (0..20)
        .map(|n| {
            let hold = (60 + n).to_string();
            Command::new(BINARY)
                .args([
                    "hooks",
                    "install",
                    "claude-code",
                    "--dir",
                    dir,
                    "--to",
                    "web",
                    "--hold",
                    &hold,
                ])
                .env("HOME", home.path())
                .stdout(Stdio::null())
                .stderr(Stdio::piped())
                .spawn()
                .expect("spawn askbridge hooks install")
        })
        .collect();
    for child in children {
        let output = child.wait_with_output().expect("wait");
        assert!(output.status.success(), "{}", text(&output.stderr));
    }
    let text = std::fs::read_to_string(&settings).expect("read");
    let installed: Value =
        serde_json::from_str(&text).unwrap_or_else(|error| panic!("{error}: {text}"));
    for event in [
        "PermissionRequest",
        "Elicitation",
        "PostToolUse",
        "UserPromptSubmit",
    ] {
        assert_eq!(
            installed["hooks"][event].as_array().map(Vec::len),
            Some(1),
            "{event}: {text}"
        );
    }
    assert_eq!(
        installed["hooks"]["Stop"].as_array().map(Vec::len),
        Some(1),
        "{text}"
    );
    assert_eq!(
        installed["hooks"]["Notification"][0]["hooks"][0]["command"],
        "notify.sh"
    );
    assert_eq!(installed["env"]["ANTHROPIC_API_KEY"], "sk-ant-secret");
    // No temporary file is left beside it.
    let left: Vec<String> = std::fs::read_dir(settings.parent().expect("a parent"))
        .expect("list")
        .filter_map(Result::ok)
        .map(|entry| entry.file_name().to_string_lossy().into_owned())
        .filter(|name| name.ends_with(".tmp"))
        .collect();
    assert!(left.is_empty(), "{left:?}");
}

/// A fake daemon on loopback: each request's head is sent to the test,
/// and answered with `answer(request line)` as JSON; `None` never answers
/// (the connection stays open until the client drops it).
struct FakeDaemon {
    base: String,
    heads: mpsc::Receiver<String>,
}

impl FakeDaemon {
    fn start(answer: fn(&str) -> Option<Value>) -> FakeDaemon {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
        let base = format!("http://{}", listener.local_addr().expect("an address"));
        let (sender, heads) = mpsc::channel();
        std::thread::spawn(move || {
            for stream in listener.incoming().filter_map(Result::ok) {
                let sender = sender.clone();
                std::thread::spawn(move || serve(stream, answer, &sender));
            }
        });
        FakeDaemon { base, heads }
    }

    /// The next request's head.
    fn next_head(&self) -> String {
        self.heads.recv_timeout(STEP).expect("a request")
    }

    /// Every request's head received so far.
    fn heads_so_far(&self) -> Vec<String> {
        self.heads.try_iter().collect()
    }
}

/// Serves one connection's requests (kept alive) until the client goes.
fn serve(stream: TcpStream, answer: fn(&str) -> Option<Value>, heads: &mpsc::Sender<String>) {
    let mut writer = stream.try_clone().expect("clone the stream");
    let mut reader = BufReader::new(stream);
    loop {
        let mut head = String::new();
        loop {
            let mut line = String::new();
            match reader.read_line(&mut line) {
                Ok(0) | Err(_) => return,
                Ok(_) => {}
            }
            head.push_str(&line);
            if line == "\r\n" {
                break;
            }
        }
        let length = head
            .lines()
            .find_map(|line| {
                let (name, value) = line.split_once(':')?;
                name.eq_ignore_ascii_case("content-length")
                    .then(|| value.trim().parse::<usize>().ok())?
            })
            .unwrap_or(0);
        let mut body = vec![0; length];
        if reader.read_exact(&mut body).is_err() {
            return;
        }
        let _ = heads.send(head.clone());
        let Some(answer) = answer(head.lines().next().unwrap_or_default()) else {
            // Never answers: waits for the client to hang up.
            let _ = reader.read_to_end(&mut Vec::new());
            return;
        };
        let body = answer.to_string();
        let response = format!(
            "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{body}",
            body.len()
        );
        if writer.write_all(response.as_bytes()).is_err() {
            return;
        }
    }
}

/// A daemon that says it is healthy.
fn healthy(_request: &str) -> Option<Value> {
    Some(json!({"status": "ok"}))
}

#[test]
fn hooks_status_sends_no_token_and_contacts_no_server_a_repository_alone_names() {
    let fake = FakeDaemon::start(healthy);
    let project = TempDir::new("hooks-status-token");
    let dir = project.path().to_str().expect("a UTF-8 path");
    hooks_ok(
        &[
            "install",
            "claude-code",
            "--dir",
            dir,
            "--to",
            "web",
            "--server",
            &fake.base,
        ],
        project.path(),
    );
    // The repository's Copilot hook names a server elsewhere.
    let elsewhere = "http://192.0.2.1:8790";
    hooks_ok(
        &[
            "install", "copilot", "--dir", dir, "--to", "web", "--server", elsewhere,
        ],
        project.path(),
    );
    let output = Command::new(BINARY)
        .args(["hooks", "status", "--dir", dir])
        .env("HOME", project.path())
        .env_remove("CODEX_HOME")
        .env_remove("ASKBRIDGE_SERVER")
        .env("ASKBRIDGE_API_TOKEN", "the-secret-token")
        .output()
        .expect("run askbridge hooks status");
    let status = text(&output.stdout);
    assert!(output.status.success(), "{}", text(&output.stderr));
    assert!(
        status.contains(&format!("daemon at {}: answers", fake.base)),
        "{status}"
    );
    let head = fake.next_head();
    assert!(head.starts_with("GET /healthz "), "{head}");
    assert!(
        !head.to_ascii_lowercase().contains("authorization"),
        "no token to /healthz: {head}"
    );
    assert!(!head.contains("the-secret-token"), "{head}");
    assert!(
        status.contains(&format!(
            "daemon at {elsewhere}: not contacted: only a repository's hook file names it"
        )),
        "{status}"
    );
    assert!(
        status.contains(&format!("ASKBRIDGE_SERVER={elsewhere}")),
        "{status}"
    );
    assert_eq!(
        fake.heads_so_far(),
        Vec::<String>::new(),
        "one request only"
    );
}

#[test]
fn hooks_status_checks_the_configured_daemon_even_over_https() {
    let project = TempDir::new("hooks-status-https");
    let dir = project.path().to_str().expect("a UTF-8 path");
    let server = format!("https://127.0.0.1:{}", closed_port());
    hooks_ok(
        &[
            "install",
            "claude-code",
            "--dir",
            dir,
            "--to",
            "web",
            "--server",
            &server,
        ],
        project.path(),
    );
    let output = Command::new(BINARY)
        .args(["hooks", "status", "--dir", dir])
        .env("HOME", project.path())
        .env_remove("CODEX_HOME")
        .env("ASKBRIDGE_SERVER", &server)
        .output()
        .expect("run askbridge hooks status");
    let status = text(&output.stdout);
    assert!(
        status.contains(&format!(
            "daemon at {server}: does not answer (cannot reach"
        )),
        "an https daemon is a daemon, only not there: {status}"
    );
}

/// A Cursor shell command.
fn cursor_event() -> String {
    json!({
        "conversation_id": "c1", "generation_id": "g1", "hook_event_name": "beforeShellExecution",
        "command": "npm publish", "cwd": "/w/lib"
    })
    .to_string()
}

#[test]
fn cursor_is_told_ask_whenever_the_hook_decides_nothing() {
    let ask = json!({"permission": "ask"});
    let down = format!("http://127.0.0.1:{}", closed_port());
    for (why, args, event) in [
        ("no daemon", vec!["--server", down.as_str()], cursor_event()),
        (
            "an unreadable event",
            vec!["--server", down.as_str()],
            "{".to_owned(),
        ),
        (
            "a group naming nobody",
            vec!["--server", down.as_str(), "--to", "slack:C123"],
            cursor_event(),
        ),
    ] {
        let output = hook("cursor", &args, &event);
        assert_eq!(output.status.code(), Some(0), "{why}");
        let printed: Value = serde_json::from_slice(&output.stdout)
            .unwrap_or_else(|error| panic!("{why}: {error}: {}", text(&output.stdout)));
        assert_eq!(printed, ask, "{why}");
        assert!(
            text(&output.stderr).contains("Cursor decides in its terminal"),
            "{why}: {}",
            text(&output.stderr)
        );
    }
    // The other hosts still print nothing: their own prompt decides.
    let output = hook("copilot", &["--server", &down], "{");
    assert_eq!(text(&output.stdout), "");
}

/// A daemon that takes the ask and then never says how it ended.
fn silent_after_posting(request: &str) -> Option<Value> {
    if request.starts_with("GET /v1/hooks") {
        return Some(json!({"to": null, "holdSeconds": {}, "neverAsk": []}));
    }
    if request.starts_with("POST /v1/asks") {
        return Some(json!({"id": "ask_slow", "status": "pending", "to": "web"}));
    }
    if request.starts_with("DELETE ") || request.starts_with("POST /v1/asks/ask_slow") {
        return Some(json!({"id": "ask_slow", "status": "no_answer", "reason": "cancelled"}));
    }
    None
}

#[test]
fn the_hook_ends_before_the_hosts_timeout_even_when_the_daemon_stops_answering() {
    let fake = FakeDaemon::start(silent_after_posting);
    let event = json!({
        "session_id": "slow-1", "cwd": "/home/alice/api-server", "prompt_id": "p1",
        "hook_event_name": "PermissionRequest", "tool_name": "Bash",
        "tool_input": {"command": "make deploy"}
    });
    let started = Instant::now();
    let output = hook(
        "claude-code",
        &["--server", &fake.base, "--to", "web", "--hold", "30"],
        &event.to_string(),
    );
    let took = started.elapsed();
    // `hooks install --hold 30` sets the host's timeout to 60 s.
    assert!(took < Duration::from_secs(60), "took {took:?}");
    assert_eq!(output.status.code(), Some(0));
    assert_eq!(text(&output.stdout), "", "no decision");
    let heads: Vec<String> = std::iter::from_fn(|| fake.heads.try_recv().ok()).collect();
    assert!(
        heads
            .iter()
            .any(|head| head.starts_with("DELETE /v1/asks/ask_slow")
                || head.starts_with("POST /v1/asks/ask_slow")),
        "the ask is closed: {heads:?}"
    );
}

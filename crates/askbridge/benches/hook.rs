//! `askbridge hook` figures, printed, not asserted: p50 / p99 from the
//! hook's start to its ask being posted, and from the person's answer to
//! the decision printed, over `ASKBRIDGE_HOOK_RUNS` runs (default 200) of
//! the real binary against `askbridge serve` on loopback (SQLite, the web
//! page as the chat; the answer is a typed reply over HTTP).
//!
//! `cargo bench -p askbridge --bench hook`.

use std::time::{Duration, Instant};

use serde_json::json;
use tokio::io::AsyncReadExt;
use tokio::process::Command;

#[path = "../tests/daemon/mod.rs"]
mod daemon;

use daemon::{Api, Daemon, client};

#[tokio::main]
async fn main() {
    let runs: usize = std::env::var("ASKBRIDGE_HOOK_RUNS")
        .ok()
        .and_then(|runs| runs.parse().ok())
        .unwrap_or(200);
    // An approval goes to the web page only when the daemon has a token.
    let token = "hook-bench-token";
    let daemon = Daemon::builder().token(token).start();
    let api = Api::of(&daemon);
    let mut posted = Vec::with_capacity(runs);
    let mut decided = Vec::with_capacity(runs);
    for n in 0..runs {
        let event = json!({
            "session_id": "bench", "cwd": "/home/alice/api-server", "prompt_id": format!("p{n}"),
            "hook_event_name": "PermissionRequest", "tool_name": "Bash",
            "tool_input": {"command": format!("make release-{n}"), "description": "release"}
        });
        let started = Instant::now();
        let mut command = Command::new(env!("CARGO_BIN_EXE_askbridge"));
        command
            .args([
                "hook",
                "claude-code",
                "--to",
                "web",
                "--server",
                &daemon.base(),
            ])
            .env_remove("ASKBRIDGE_SERVER")
            .env("ASKBRIDGE_API_TOKEN", token);
        let mut hook = client::spawn_with_input(command, &event.to_string());
        let id = client::announced(&mut hook, "askbridge hook: ask ", " posted").await;
        posted.push(started.elapsed());
        let answered = Instant::now();
        api.reply(&id, json!({"text": "1"})).await;
        let mut stdout = String::new();
        hook.stdout
            .take()
            .expect("stdout")
            .read_to_string(&mut stdout)
            .await
            .expect("read the decision");
        decided.push(answered.elapsed());
        assert!(stdout.contains("\"allow\""), "{stdout}");
        hook.wait().await.expect("the hook ends");
    }
    report("hook start to the ask posted", &mut posted);
    report("answer to the decision printed", &mut decided);
}

fn report(what: &str, times: &mut [Duration]) {
    times.sort();
    let at = |q: f64| times[((times.len() as f64 - 1.0) * q).round() as usize];
    println!(
        "{what}: p50 {:.1} ms, p99 {:.1} ms ({} runs)",
        at(0.50).as_secs_f64() * 1e3,
        at(0.99).as_secs_f64() * 1e3,
        times.len()
    );
}

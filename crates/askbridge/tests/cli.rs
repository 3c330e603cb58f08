//! The `askbridge` executable as people and scripts call it: arguments,
//! standard input and output, exit codes.

use std::io::Write;
use std::process::{Command, Output, Stdio};

fn askbridge(args: &[&str], stdin: &str) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_askbridge"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start askbridge");
    // A command that reads a file instead may exit before taking its
    // input: a closed pipe is not a failure.
    match child
        .stdin
        .take()
        .expect("stdin")
        .write_all(stdin.as_bytes())
    {
        Ok(()) => {}
        Err(error) if error.kind() == std::io::ErrorKind::BrokenPipe => {}
        Err(error) => panic!("write stdin: {error}"),
    }
    child.wait_with_output().expect("wait for askbridge")
}

fn stdout_json(output: &Output) -> serde_json::Value {
    serde_json::from_slice(&output.stdout).unwrap_or_else(|e| {
        panic!(
            "stdout is not JSON ({e}): {}",
            String::from_utf8_lossy(&output.stdout)
        )
    })
}

#[test]
fn normalize_prints_the_canonical_ask() {
    let output = askbridge(
        &["normalize", "-"],
        r#"{"questions":[{"header":"Deploy","question":"Where?","options":[{"label":"Staging (Recommended)"},{"label":"Production"},{"label":"Other"}]}]}"#,
    );
    assert_eq!(output.status.code(), Some(0));
    let json = stdout_json(&output);
    assert_eq!(json["ok"], true);
    let question = &json["ask"]["questions"][0];
    assert_eq!(question["id"], "deploy");
    assert_eq!(question["type"], "single");
    assert_eq!(question["options"].as_array().map(Vec::len), Some(2));
    assert_eq!(json["ask"]["timeoutSeconds"], 900);
    assert!(!json["warnings"].as_array().expect("warnings").is_empty());
}

#[test]
fn normalize_refuses_with_path_named_errors_and_exit_1() {
    let output = askbridge(
        &["normalize"],
        r#"{"questions":[{"id":"a","header":"A","question":"One?","options":[{"label":"Only"}]}]}"#,
    );
    assert_eq!(output.status.code(), Some(1));
    let json = stdout_json(&output);
    assert_eq!(json["ok"], false);
    assert_eq!(json["errors"][0]["path"], "questions[0].options");
    let message = json["errors"][0]["message"].as_str().expect("message");
    assert!(message.contains("at least 2 options"), "{message}");
}

#[test]
fn normalize_reads_assistant_text() {
    let output = askbridge(&["normalize"], "Which way?\n\nA. Online\nB. Offline\n");
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&output.stdout)
    );
    let json = stdout_json(&output);
    assert_eq!(
        json["ask"]["questions"][0]["options"][1]["label"],
        "Offline"
    );
}

#[test]
fn normalize_of_unreadable_file_is_a_clear_error() {
    let output = askbridge(&["normalize", "/no/such/ask.json"], "");
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("cannot read /no/such/ask.json"), "{stderr}");
}

#[test]
fn resolve_jsonl_writes_one_line_per_input_in_order() {
    let input = concat!(
        r#"{"options":["Red","Green","Blue"],"multi":false,"letters":false,"reply":"the second one"}"#,
        "\n",
        r#"{"options":["Red","Green","Blue"],"multi":true,"letters":false,"reply":"1, 3"}"#,
        "\n",
        "\n",
        r#"{"options":["Python 3","Python 2","Go"],"multi":false,"letters":false,"reply":"3"}"#,
        "\n",
        r#"{"options":["Red","Green"],"multi":false,"letters":true,"reply":"b"}"#,
        "\n",
        r#"{"options":["Red","Green"],"reply":"can you explain 2?"}"#,
        "\n",
        r#"{"options":["Red","Green"],"reply":"skip"}"#,
        "\n",
    );
    let output = askbridge(&["resolve", "--jsonl"], input);
    assert_eq!(output.status.code(), Some(0));
    let lines: Vec<serde_json::Value> = String::from_utf8_lossy(&output.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).expect("json line"))
        .collect();
    let kinds: Vec<&str> = lines
        .iter()
        .map(|l| l["kind"].as_str().expect("kind"))
        .collect();
    assert_eq!(
        kinds,
        [
            "choice",
            "choices",
            "ambiguous",
            "choice",
            "free_text",
            "skip"
        ]
    );
    assert_eq!(lines[0]["values"], serde_json::json!(["Green"]));
    assert_eq!(lines[1]["values"], serde_json::json!(["Red", "Blue"]));
    assert_eq!(
        lines[2]["candidates"],
        serde_json::json!(["Python 3", "Go"])
    );
    assert_eq!(lines[3]["values"], serde_json::json!(["Green"]));
    assert_eq!(lines[4]["text"], "can you explain 2?");
}

#[test]
fn resolve_jsonl_reports_a_bad_line_in_place() {
    let input = "{\"options\":[\"A\",\"B\"],\"reply\":\"1\"}\nnot json\n{\"options\":[\"A\",\"B\"],\"reply\":\"2\"}\n";
    let output = askbridge(&["resolve", "--jsonl", "-"], input);
    assert_eq!(output.status.code(), Some(1));
    let text = String::from_utf8_lossy(&output.stdout);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 3);
    assert!(lines[1].contains("\"line\":2"), "{}", lines[1]);
    assert!(lines[2].contains("\"B\""), "{}", lines[2]);
}

#[test]
fn resolve_jsonl_reads_a_file_and_names_one_it_cannot_read() {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("resolve-jsonl-file");
    std::fs::create_dir_all(&dir).expect("a directory");
    let file = dir.join("replies.jsonl");
    // Blank lines are passed over; the line numbers still count them.
    std::fs::write(
        &file,
        "{\"options\":[\"A\",\"B\"],\"reply\":\"2\"}\n\nnot json",
    )
    .expect("write");
    let path = file.to_str().expect("a UTF-8 path");
    let output = askbridge(&["resolve", "--jsonl", path], "");
    assert_eq!(output.status.code(), Some(1));
    let text = String::from_utf8_lossy(&output.stdout);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 2, "{text}");
    assert!(lines[0].contains("\"B\""), "{}", lines[0]);
    assert!(lines[1].contains("\"line\":3"), "{}", lines[1]);

    let missing = dir.join("missing.jsonl");
    let output = askbridge(&["resolve", "--jsonl", missing.to_str().expect("path")], "");
    assert_ne!(output.status.code(), Some(0));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("cannot read") && stderr.contains("missing.jsonl"),
        "{stderr}"
    );
}

#[test]
fn resolve_with_options_on_the_command_line() {
    let output = askbridge(
        &[
            "resolve",
            "--options",
            "Red,Green,Blue",
            "--multi",
            "all but blue",
        ],
        "",
    );
    assert_eq!(output.status.code(), Some(0));
    let json = stdout_json(&output);
    assert_eq!(json["kind"], "choices");
    assert_eq!(json["values"], serde_json::json!(["Red", "Green"]));
}

#[test]
fn resolve_against_an_ask_file() {
    let ask = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/release.json");
    let output = askbridge(&["resolve", "--ask", ask, "Q1: 2"], "");
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let json = stdout_json(&output);
    assert_eq!(json["answers"][0]["id"], "deploy_target");
    assert_eq!(json["answers"][0]["kind"], "choice");
    assert_eq!(
        json["answers"][0]["values"],
        serde_json::json!(["Production"])
    );
    assert_eq!(json["unanswered"], serde_json::json!(["notify"]));
}

#[test]
fn resolve_without_a_source_says_what_is_missing() {
    let output = askbridge(&["resolve", "2"], "");
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("--jsonl") && stderr.contains("--options"),
        "{stderr}"
    );
}

#[test]
fn render_prints_the_text_prompt_in_each_locale() {
    let ask = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/release.json");
    let en = askbridge(&["render", "--channel", "text", ask], "");
    assert_eq!(en.status.code(), Some(0));
    let en = String::from_utf8_lossy(&en.stdout);
    assert!(en.starts_with("Release 2.4 — 2 questions."), "{en}");
    assert!(en.contains("  1. Staging ⭐ — safe, reversible"), "{en}");
    let zh = askbridge(&["render", "--locale", "zh-CN", ask], "");
    assert!(String::from_utf8_lossy(&zh.stdout).contains("跳过"));
    let th = askbridge(
        &["render", "--locale", "th", "-"],
        &std::fs::read_to_string(ask).expect("read"),
    );
    assert!(String::from_utf8_lossy(&th.stdout).contains("ข้าม"));
}

#[test]
fn render_reminders_prints_what_each_place_is_reminded_with() {
    let ask = r#"{"to": "slack:C0RELEASES@U0ALICE", "timeoutSeconds": 1800,
        "remindAfterSeconds": 300, "remindEverySeconds": 600,
        "questions": [{"id": "ship", "question": "Ship it?", "type": "confirm"}]}"#;
    let text = askbridge(&["render", "--reminders", "-"], ask);
    assert_eq!(text.status.code(), Some(0));
    assert_eq!(
        String::from_utf8_lossy(&text.stdout),
        "⏰ Still waiting for your answer — expires in 25 min\n\
         ⏰ Still waiting for your answer — expires in 15 min\n\
         ⏰ Still waiting for your answer — expires in 5 min\n"
    );
    for channel in ["telegram", "discord", "slack", "feishu", "matrix"] {
        let output = askbridge(&["render", "--reminders", "--channel", channel, "-"], ask);
        assert_eq!(output.status.code(), Some(0), "{channel}");
        let payloads: serde_json::Value =
            serde_json::from_slice(&output.stdout).expect("a JSON array of payloads");
        assert_eq!(payloads.as_array().map(Vec::len), Some(3), "{channel}");
    }
    let slack = askbridge(&["render", "--reminders", "--channel", "slack", "-"], ask);
    let slack: serde_json::Value = serde_json::from_slice(&slack.stdout).expect("JSON");
    assert_eq!(
        slack[0]["text"],
        "<@U0ALICE> ⏰ Still waiting for your answer — expires in 25 min"
    );
    assert_eq!(slack[0]["channel"], "C0RELEASES");

    let none = askbridge(
        &["render", "--reminders", "-"],
        r#"{"questions": [{"id": "ship", "question": "Ship it?", "type": "confirm"}]}"#,
    );
    assert_eq!(none.status.code(), Some(1));
    let report: serde_json::Value = serde_json::from_slice(&none.stdout).expect("JSON");
    assert_eq!(report["errors"][0]["path"], "remindAfterSeconds");
}

#[test]
fn render_for_email_prints_the_mail_and_its_reminders_in_its_thread() {
    let ask = r#"{"to": "email:Carol@Example.com", "timeoutSeconds": 1800, "remindAfterSeconds": 300,
        "context": {"text": "fn main() {}", "language": "rust"},
        "questions": [{"header": "Release", "question": "Ship <it>?", "type": "confirm"}]}"#;
    let output = askbridge(&["render", "--channel", "email", "-"], ask);
    assert_eq!(output.status.code(), Some(0));
    let mail = String::from_utf8_lossy(&output.stdout).replace("=\r\n", "");
    for expected in [
        "To: carol@example.com\r\n",
        "Subject: [askbridge] Release: Ship <it>?\r\n",
        "Reply-To: bot+",
        "Auto-Submitted: auto-generated\r\n",
        "Content-Type: multipart/alternative",
        "Content-Type: text/plain; charset=utf-8",
        "Content-Type: text/html; charset=utf-8",
        "Ship &lt;it&gt;?",
        "```rust",
    ] {
        assert!(mail.contains(expected), "{expected:?} in {mail}");
    }
    let reminders = askbridge(&["render", "--reminders", "--channel", "email", "-"], ask);
    assert_eq!(reminders.status.code(), Some(0));
    let reminders = String::from_utf8_lossy(&reminders.stdout);
    assert!(
        reminders.contains("Subject: Re: [askbridge] Release: Ship <it>?\r\n"),
        "{reminders}"
    );
    assert!(reminders.contains("In-Reply-To: <ask_"), "{reminders}");
}

#[test]
fn render_rejects_an_unknown_locale() {
    let output = askbridge(&["render", "--locale", "xx", "-"], "{}");
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("unknown locale"));
}

#[test]
fn render_for_telegram_prints_the_send_message_payloads() {
    let ask = r#"{"to": "telegram:-1001234/7", "questions": [{"header": "Release", "question": "Ship it?", "type": "confirm"}]}"#;
    let output = askbridge(&["render", "--channel", "telegram", "-"], ask);
    assert_eq!(output.status.code(), Some(0));
    let payloads: serde_json::Value =
        serde_json::from_slice(&output.stdout).expect("a JSON array of payloads");
    let message = &payloads[0];
    assert_eq!(message["chat_id"], -1_001_234);
    assert_eq!(message["message_thread_id"], 7);
    assert_eq!(message["text"], "Release — Ship it?");
    let labels: Vec<&str> = message["reply_markup"]["inline_keyboard"]
        .as_array()
        .expect("an inline keyboard")
        .iter()
        .flat_map(|row| row.as_array().expect("a row"))
        .map(|button| button["text"].as_str().expect("a label"))
        .collect();
    assert_eq!(labels, ["Yes", "No", "Skip"]);

    let rich = askbridge(
        &["render", "--channel", "telegram", "--mode", "fancy", "-"],
        ask,
    );
    assert_eq!(rich.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&rich.stderr).contains("unknown mode"));
}

#[test]
fn render_for_discord_prints_the_create_message_payloads() {
    let ask = r#"{"to": "discord:1100000000000000042", "questions": [{"header": "Deploy", "question": "Where?", "options": ["Staging (Recommended)", "Production"]}]}"#;
    let output = askbridge(&["render", "--channel", "discord", "-"], ask);
    assert_eq!(output.status.code(), Some(0));
    let payloads: serde_json::Value =
        serde_json::from_slice(&output.stdout).expect("a JSON array of payloads");
    let message = &payloads[0];
    assert_eq!(message["content"], "Deploy — Where?");
    let buttons: Vec<(&str, u64)> = message["components"]
        .as_array()
        .expect("action rows")
        .iter()
        .flat_map(|row| row["components"].as_array().expect("a row"))
        .map(|button| {
            let custom_id = button["custom_id"].as_str().expect("a custom_id");
            assert!(custom_id.len() <= 100, "{custom_id}");
            assert!(
                !custom_id.contains("Staging"),
                "content leaked into {custom_id}"
            );
            (
                button["label"].as_str().expect("a label"),
                button["style"].as_u64().expect("a style"),
            )
        })
        .collect();
    assert_eq!(
        buttons,
        [
            ("Staging ⭐", 1),
            ("Production", 2),
            ("Other…", 2),
            ("Skip", 2)
        ]
    );
}

#[test]
fn render_for_slack_prints_the_post_message_payloads() {
    let ask = r#"{"to": "slack:C0123", "questions": [{"header": "Deploy", "question": "Where <now>?", "options": ["Staging (Recommended)", "Production"]}]}"#;
    let output = askbridge(&["render", "--channel", "slack", "-"], ask);
    assert_eq!(output.status.code(), Some(0));
    let payloads: serde_json::Value =
        serde_json::from_slice(&output.stdout).expect("a JSON array of payloads");
    let message = &payloads[0];
    assert_eq!(message["channel"], "C0123");
    let blocks = message["blocks"].as_array().expect("blocks");
    assert_eq!(blocks[0]["text"]["text"], "Deploy — Where &lt;now&gt;?");
    let buttons: Vec<&str> = blocks
        .iter()
        .filter(|block| block["type"] == "actions")
        .flat_map(|block| block["elements"].as_array().expect("elements"))
        .map(|button| {
            let action = button["action_id"].as_str().expect("an action_id");
            assert!(!action.contains("Staging"), "content leaked into {action}");
            button["text"]["text"].as_str().expect("a label")
        })
        .collect();
    assert_eq!(buttons, ["Staging ⭐", "Production", "Other…", "Skip"]);
}

#[test]
fn render_for_feishu_prints_the_cards() {
    let ask = r#"{"to": "feishu:oc_1", "questions": [{"header": "Deploy", "question": "Where <at user_id=\"all\">?", "options": ["Staging (Recommended)", "Production"]}]}"#;
    let output = askbridge(
        &["render", "--channel", "feishu", "--locale", "zh-CN", "-"],
        ask,
    );
    assert_eq!(output.status.code(), Some(0));
    let cards: serde_json::Value =
        serde_json::from_slice(&output.stdout).expect("a JSON array of cards");
    let card = &cards[0];
    assert_eq!(card["schema"], "2.0");
    let text = &card["body"]["elements"][0]["text"];
    assert_eq!(text["tag"], "plain_text", "agent text is never markup");
    assert!(
        text["content"]
            .as_str()
            .unwrap_or("")
            .contains("<at user_id=\"all\">")
    );
    let rendered = card.to_string();
    assert!(
        rendered.contains("\"发送\""),
        "the own-words form's Send: {rendered}"
    );
    assert!(
        rendered.contains("\"跳过\""),
        "Skip in the locale: {rendered}"
    );
}

/// Runs `args` with standard output a pipe nobody reads: the reader is
/// closed before the command starts.
fn with_closed_stdout(args: &[&str]) -> Output {
    let (reader, writer) = std::io::pipe().expect("a pipe");
    drop(reader);
    Command::new(env!("CARGO_BIN_EXE_askbridge"))
        .args(args)
        .stdin(Stdio::null())
        .stdout(writer)
        .stderr(Stdio::piped())
        .output()
        .expect("run askbridge")
}

#[test]
fn a_closed_output_pipe_ends_quietly_not_in_a_panic() {
    let example = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/release.json");
    for args in [
        vec!["render", "--channel", "feishu", example],
        vec!["render", example],
        vec!["normalize", example],
        vec!["resolve", "--options", "Staging,Production", "2"],
    ] {
        let output = with_closed_stdout(&args);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
        assert_eq!(output.status.code(), Some(0), "{args:?}: {stderr}");
    }
}

#[test]
fn help_names_every_channel_and_every_coding_agent() {
    let output = askbridge(&["--help"], "");
    assert!(output.status.success());
    let help = String::from_utf8_lossy(&output.stdout);
    for name in [
        "Telegram",
        "Discord",
        "Slack",
        "Feishu",
        "Matrix",
        "web page",
        "Claude Code",
        "Codex",
        "Copilot CLI",
        "Cursor",
    ] {
        assert!(help.contains(name), "{name} not in\n{help}");
    }
}

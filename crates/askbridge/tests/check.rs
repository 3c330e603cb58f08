//! `askbridge check` as people run it: the real binary in a fresh working
//! directory, its configuration from files, variables and flags, the chat
//! platforms faked on 127.0.0.1 (`askbridge_testkit`), the database a
//! scratch SQLite file or Postgres database (`tests/db`).

#![allow(clippy::unwrap_used)]

mod daemon;
mod db;

use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use askbridge_testkit::discord::FakeDiscord;
use askbridge_testkit::feishu::FakeFeishu;
use askbridge_testkit::slack::FakeSlack;
use askbridge_testkit::telegram::FakeTelegram;
use daemon::{TempDir, askbridge_command};
use db::Scratch;
use serde_json::Value;

/// Every check, in the order `askbridge check` reports them.
const CHECKS: [&str; 11] = [
    "config",
    "database",
    "telegram",
    "discord",
    "slack",
    "feishu",
    "matrix",
    "teams",
    "email",
    "hooks",
    "approvals",
];

/// What one `askbridge check` printed, and its exit code.
#[derive(Debug)]
struct Checked {
    code: Option<i32>,
    stdout: String,
}

impl Checked {
    /// The line of check `name` (`telegram`, …), mark first.
    fn line(&self, name: &str) -> &str {
        self.stdout
            .lines()
            .find(|line| {
                line.split_once(' ')
                    .is_some_and(|(_, rest)| rest.starts_with(&format!("{name}: ")))
            })
            .unwrap_or_else(|| panic!("no {name} line in:\n{}", self.stdout))
    }

    /// The `--json` document.
    fn json(&self) -> Value {
        serde_json::from_str(&self.stdout)
            .unwrap_or_else(|error| panic!("not JSON ({error}):\n{}", self.stdout))
    }
}

/// Runs `askbridge check ARGS` with the variables `envs` (and no other
/// askbridge or platform variable) in `dir`.
async fn check_in(dir: &Path, args: &[&str], envs: &[(&str, String)]) -> Checked {
    let mut command = askbridge_command();
    command
        .arg("check")
        .args(args)
        .current_dir(dir)
        // The user's own hook settings are the test's.
        .env("HOME", dir.join("home"))
        .env_remove("CODEX_HOME")
        .envs(envs.iter().map(|(key, value)| (key, value)))
        .stdin(Stdio::null());
    let output = tokio::process::Command::from(command)
        .output()
        .await
        .expect("run askbridge check");
    let checked = Checked {
        code: output.status.code(),
        stdout: String::from_utf8(output.stdout).expect("UTF-8"),
    };
    eprintln!(
        "askbridge check {args:?} exited {:?}:\n{}{}",
        checked.code,
        checked.stdout,
        String::from_utf8_lossy(&output.stderr)
    );
    checked
}

/// Runs `askbridge check ARGS` in a fresh directory.
async fn check(args: &[&str], envs: &[(&str, String)]) -> Checked {
    let dir = TempDir::new("askbridge-check");
    check_in(dir.path(), args, envs).await
}

fn telegram_env(fake: &FakeTelegram) -> Vec<(&'static str, String)> {
    vec![
        ("TELEGRAM_BOT_TOKEN", fake.token().to_owned()),
        ("ASKBRIDGE_TELEGRAM_API_URL", fake.api_url()),
    ]
}

#[tokio::test]
async fn check_passes_with_telegram_and_names_the_bot() {
    let fake = FakeTelegram::builder().privacy_mode(false).start().await;
    let dir = TempDir::new("askbridge-check");
    let file = dir.path().join("askbridge.toml");
    std::fs::write(
        &file,
        format!("[telegram]\napi_url = \"{}\"\n", fake.api_url()),
    )
    .unwrap();
    let checked = check_in(
        dir.path(),
        &["--config", file.to_str().unwrap()],
        &[("TELEGRAM_BOT_TOKEN", fake.token().to_owned())],
    )
    .await;

    assert_eq!(checked.code, Some(0));
    assert_eq!(
        checked.line("config"),
        format!("✓ config: {}", file.display())
    );
    assert_eq!(
        checked.line("telegram"),
        "✓ telegram: @askbridge_test_bot (privacy mode off)"
    );
    assert!(
        checked.line("database").starts_with(
            "✓ database: sqlite://.askbridge/askbridge.db: not created yet; `askbridge serve` creates it"
        ),
        "{}",
        checked.stdout
    );
    assert_eq!(checked.line("discord"), "- discord: not configured");
    assert_eq!(checked.line("slack"), "- slack: not configured");
    assert_eq!(checked.line("feishu"), "- feishu: not configured");
    assert_eq!(checked.line("matrix"), "- matrix: not configured");
    assert!(checked.stdout.ends_with("\nAll checks passed.\n"));
    assert_eq!(fake.calls_to("getMe").len(), 1);
    // Read only: no data directory, no database.
    assert!(!dir.path().join(".askbridge").exists());
}

#[tokio::test]
async fn check_warns_that_privacy_mode_hides_group_replies() {
    let fake = FakeTelegram::start().await;
    let checked = check(&[], &telegram_env(&fake)).await;
    assert_eq!(checked.code, Some(0), "a warning is no failure");
    let line = checked.line("telegram");
    assert!(
        line.starts_with("! telegram: @askbridge_test_bot (privacy mode on): in groups, typed answers reach the bot only when they reply to its message"),
        "{line}"
    );
    assert!(line.contains("/setprivacy"), "{line}");
    assert!(
        checked
            .stdout
            .ends_with("\nAll checks passed, one with a warning.\n")
    );
}

#[tokio::test]
async fn check_names_a_bad_config_key_and_its_file() {
    let dir = TempDir::new("askbridge-check");
    let file = dir.path().join("askbridge.toml");
    std::fs::write(&file, "[http]\nmax_body_bytes = 10\n").unwrap();
    let checked = check_in(dir.path(), &["--config", file.to_str().unwrap()], &[]).await;
    assert_eq!(checked.code, Some(1));
    assert_eq!(
        checked.line("config"),
        format!(
            "✗ config: {}: http.max_body_bytes: must be at least 1024, got 10",
            file.display()
        )
    );
    for name in &CHECKS[1..] {
        assert_eq!(
            checked.line(name),
            format!("- {name}: not checked: the config has an error")
        );
    }
    assert!(checked.stdout.ends_with("\n1 check failed.\n"));
}

#[tokio::test]
async fn check_logs_in_to_both_mail_servers_and_says_which_refused() {
    use askbridge_testkit::mail::{Dovecot, SmtpSink};
    let dovecot = Dovecot::start().await;
    let smtp = SmtpSink::start_requiring("bot@example.com", "smtp-secret").await;
    let env = |imap_password: &str| {
        vec![
            (
                "ASKBRIDGE_EMAIL_SMTP_URL",
                format!("smtp://bot%40example.com@127.0.0.1:{}", smtp.port()),
            ),
            ("EMAIL_SMTP_PASSWORD", "smtp-secret".to_owned()),
            ("ASKBRIDGE_EMAIL_IMAP_URL", dovecot.imap_url()),
            ("EMAIL_IMAP_PASSWORD", imap_password.to_owned()),
        ]
    };
    let checked = check(&[], &env(dovecot.password())).await;
    assert_eq!(checked.code, Some(0), "{}", checked.stdout);
    let line = checked.line("email");
    assert!(
        line.starts_with(&format!(
            "✓ email: SMTP 127.0.0.1:{} takes the login; IMAP 127.0.0.1:{} folder \"INBOX\" opens as bot@example.com; replies are heard at once (IDLE)",
            smtp.port(),
            dovecot.imap_port()
        )),
        "{line}"
    );

    let checked = check(&[], &env("wrong")).await;
    assert_eq!(checked.code, Some(1));
    let line = checked.line("email");
    assert!(
        line.starts_with(&format!(
            "✗ email: IMAP 127.0.0.1:{}: the IMAP server refused the login of \"bot@example.com\"",
            dovecot.imap_port()
        )),
        "{line}"
    );
    assert!(line.contains("EMAIL_IMAP_PASSWORD"), "{line}");
}

#[tokio::test]
async fn check_names_a_bad_environment_variable() {
    let checked = check(&[], &[("ASKBRIDGE_HTTP_MAX_BODY_BYTES", "lots".to_owned())]).await;
    assert_eq!(checked.code, Some(1));
    assert_eq!(
        checked.line("config"),
        "✗ config: ASKBRIDGE_HTTP_MAX_BODY_BYTES: expected a number of bytes, got \"lots\""
    );

    // serve's rule on exposure, with where the address came from.
    let checked = check(&["--listen", "0.0.0.0:8790"], &[]).await;
    assert_eq!(checked.code, Some(1));
    assert!(
        checked.line("config").starts_with(
            "✗ config: --listen: refusing to listen on 0.0.0.0:8790 without an API token"
        ),
        "{}",
        checked.stdout
    );
}

#[tokio::test]
async fn check_warns_of_a_default_target_on_a_channel_that_is_off() {
    let checked = check(
        &[],
        &[("ASKBRIDGE_DEFAULT_TARGET", "telegram:-100123".to_owned())],
    )
    .await;
    assert_eq!(checked.code, Some(0));
    assert_eq!(
        checked.line("config"),
        "! config: no config file; defaults and environment: default_target is telegram:-100123, \
         but the telegram channel is off, so asks without a \"to\" would end undelivered (delivery_failed)"
    );
}

#[tokio::test]
async fn check_explains_a_refused_telegram_token() {
    let fake = FakeTelegram::start().await;
    let checked = check(
        &[],
        &[
            ("TELEGRAM_BOT_TOKEN", "999:not-the-token".to_owned()),
            ("ASKBRIDGE_TELEGRAM_API_URL", fake.api_url()),
        ],
    )
    .await;
    assert_eq!(checked.code, Some(1));
    assert_eq!(
        checked.line("telegram"),
        "✗ telegram: Telegram refused TELEGRAM_BOT_TOKEN: Invalid bot token; check the token BotFather gave"
    );
    assert!(checked.stdout.ends_with("\n1 check failed.\n"));
}

#[tokio::test]
async fn check_json_has_every_check_with_status_message_and_details() {
    let fake = FakeTelegram::builder().privacy_mode(false).start().await;
    let checked = check(&["--json"], &telegram_env(&fake)).await;
    assert_eq!(checked.code, Some(0));
    let json = checked.json();
    assert_eq!(json["ok"], true);
    let checks = json["checks"].as_array().unwrap();
    let names: Vec<&str> = checks.iter().map(|c| c["name"].as_str().unwrap()).collect();
    assert_eq!(names, CHECKS);
    let statuses: Vec<&str> = checks
        .iter()
        .map(|c| c["status"].as_str().unwrap())
        .collect();
    assert_eq!(
        statuses,
        [
            "ok", "ok", "ok", "skipped", "skipped", "skipped", "skipped", "skipped", "skipped",
            "skipped", "ok"
        ]
    );
    for check in checks {
        assert!(check["message"].is_string(), "{check}");
        assert!(check["details"].is_object(), "{check}");
    }
    let telegram = &checks[2];
    assert_eq!(
        telegram["message"],
        "@askbridge_test_bot (privacy mode off)"
    );
    assert_eq!(telegram["details"]["username"], "askbridge_test_bot");
    assert_eq!(telegram["details"]["id"], 123_456);
    assert_eq!(telegram["details"]["can_read_all_group_messages"], true);
    assert_eq!(
        checks[0]["details"]["channels"],
        serde_json::json!(["web", "telegram"])
    );
    assert_eq!(checks[1]["details"]["exists"], false);

    let checked = check(&["--json"], &[("ASKBRIDGE_LISTEN", "localhost".to_owned())]).await;
    assert_eq!(checked.code, Some(1));
    let json = checked.json();
    assert_eq!(json["ok"], false);
    let config = &json["checks"][0];
    assert_eq!(config["status"], "failed");
    assert_eq!(config["details"]["key"], "listen");
    assert_eq!(config["details"]["source"], "ASKBRIDGE_LISTEN");
    assert_eq!(json["checks"][4]["status"], "skipped");
}

#[tokio::test]
async fn check_reads_the_discord_bot_and_its_application() {
    let fake = FakeDiscord::start().await;
    let env = |token: &str| {
        vec![
            ("DISCORD_BOT_TOKEN", token.to_owned()),
            ("ASKBRIDGE_DISCORD_API_URL", fake.api_url()),
        ]
    };
    let checked = check(&[], &env(fake.token())).await;
    assert_eq!(checked.code, Some(0));
    assert_eq!(
        checked.line("discord"),
        "✓ discord: askbridge-test (Message Content intent on)"
    );

    // The interactions key checked against the application's.
    let mut with_key = env(fake.token());
    with_key.push(("DISCORD_PUBLIC_KEY", fake.public_key_hex()));
    assert_eq!(check(&[], &with_key).await.code, Some(0));
    with_key.pop();
    with_key.push(("DISCORD_PUBLIC_KEY", "ab".repeat(32)));
    let checked = check(&[], &with_key).await;
    assert_eq!(checked.code, Some(1));
    assert!(
        checked.line("discord").starts_with(
            "✗ discord: askbridge-test: DISCORD_PUBLIC_KEY is not this application's public key"
        ),
        "{}",
        checked.stdout
    );

    let checked = check(&[], &env("not-the-token")).await;
    assert_eq!(checked.code, Some(1));
    assert!(
        checked
            .line("discord")
            .starts_with("✗ discord: Discord refused DISCORD_BOT_TOKEN: "),
        "{}",
        checked.stdout
    );
}

#[tokio::test]
async fn check_warns_when_the_message_content_intent_is_off() {
    let fake = FakeDiscord::builder().application_flags(0).start().await;
    let checked = check(
        &["--json"],
        &[
            ("DISCORD_BOT_TOKEN", fake.token().to_owned()),
            ("ASKBRIDGE_DISCORD_API_URL", fake.api_url()),
        ],
    )
    .await;
    assert_eq!(checked.code, Some(0));
    let discord = &checked.json()["checks"][3];
    assert_eq!(discord["status"], "warning");
    let message = discord["message"].as_str().unwrap();
    assert!(
        message.starts_with("askbridge-test: the Message Content intent is off"),
        "{message}"
    );
    assert_eq!(discord["details"]["message_content"], false);
    assert_eq!(discord["details"]["application_flags"], 0);
}

fn slack_env(fake: &FakeSlack) -> Vec<(&'static str, String)> {
    vec![
        ("SLACK_BOT_TOKEN", fake.bot_token()),
        ("SLACK_APP_TOKEN", fake.app_token()),
        ("ASKBRIDGE_SLACK_API_URL", fake.api_url()),
    ]
}

#[tokio::test]
async fn check_reads_the_slack_bot_and_its_scopes() {
    let fake = FakeSlack::start().await;
    let checked = check(&[], &slack_env(&fake)).await;
    assert_eq!(checked.code, Some(0));
    assert_eq!(
        checked.line("slack"),
        "✓ slack: @askbridge in askbridge test (every scope askbridge uses granted)"
    );

    let fake = FakeSlack::builder()
        .bot_scopes(["chat:write", "im:write", "channels:history", "commands"])
        .start()
        .await;
    let checked = check(&[], &slack_env(&fake)).await;
    assert_eq!(checked.code, Some(0), "missing history scopes only warn");
    assert_eq!(
        checked.line("slack"),
        "! slack: @askbridge in askbridge test: missing scopes users:read (show who answered by name), \
         groups:history (read typed replies in private channels), im:history (read typed replies in \
         direct messages); add them under OAuth & Permissions → Bot Token Scopes, then reinstall the app"
    );

    let fake = FakeSlack::builder()
        .bot_scopes(["users:read"])
        .start()
        .await;
    let checked = check(&["--json"], &slack_env(&fake)).await;
    assert_eq!(checked.code, Some(1), "without chat:write nothing works");
    let slack = &checked.json()["checks"][4];
    assert_eq!(slack["status"], "failed");
    assert_eq!(slack["details"]["team"], "askbridge test");
    assert_eq!(
        slack["details"]["scopes"],
        serde_json::json!(["users:read"])
    );
    assert_eq!(slack["details"]["missing_scopes"][0], "chat:write");

    let mut wrong = slack_env(&fake);
    wrong[0].1 = "xoxb-not-the-token".to_owned();
    let checked = check(&[], &wrong).await;
    assert_eq!(checked.code, Some(1));
    assert!(
        checked
            .line("slack")
            .starts_with("✗ slack: Slack refused SLACK_BOT_TOKEN: invalid_auth"),
        "{}",
        checked.stdout
    );
}

fn feishu_env(fake: &FakeFeishu) -> Vec<(&'static str, String)> {
    vec![
        ("FEISHU_APP_ID", fake.app_id()),
        ("FEISHU_APP_SECRET", fake.app_secret()),
        ("ASKBRIDGE_FEISHU_API_URL", fake.api_url()),
    ]
}

#[tokio::test]
async fn check_reads_the_feishu_bot_and_what_webhook_mode_lacks() {
    let fake = FakeFeishu::start().await;
    let checked = check(&[], &feishu_env(&fake)).await;
    assert_eq!(checked.code, Some(0));
    assert!(
        checked
            .line("feishu")
            .starts_with("✓ feishu: bot askbridge (long connection); the app needs im:message"),
        "{}",
        checked.stdout
    );

    let mut webhook = feishu_env(&fake);
    webhook.push(("ASKBRIDGE_FEISHU_MODE", "webhook".to_owned()));
    webhook.push(("FEISHU_ENCRYPT_KEY", fake.encrypt_key().unwrap()));
    let checked = check(&[], &webhook).await;
    assert_eq!(
        checked.code,
        Some(0),
        "a missing verification token only warns"
    );
    assert!(
        checked
            .line("feishu")
            .starts_with("! feishu: bot askbridge (webhook): FEISHU_VERIFICATION_TOKEN is not set"),
        "{}",
        checked.stdout
    );

    let mut wrong = feishu_env(&fake);
    wrong[1].1 = "not-the-secret".to_owned();
    let checked = check(&[], &wrong).await;
    assert_eq!(checked.code, Some(1));
    assert!(
        checked
            .line("feishu")
            .starts_with("✗ feishu: Feishu refused FEISHU_APP_SECRET: Feishu error 10014"),
        "{}",
        checked.stdout
    );
}

#[tokio::test]
async fn check_gives_up_on_a_platform_that_never_answers() {
    // Connections are taken (the kernel's backlog) but never answered.
    let silent = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/", silent.local_addr().unwrap());
    let started = Instant::now();
    let checked = check(
        &["--timeout", "1"],
        &[
            (
                "TELEGRAM_BOT_TOKEN",
                askbridge_testkit::telegram::TOKEN.to_owned(),
            ),
            ("ASKBRIDGE_TELEGRAM_API_URL", url.clone()),
        ],
    )
    .await;
    assert_eq!(checked.code, Some(1));
    assert_eq!(
        checked.line("telegram"),
        format!("✗ telegram: no answer from the Bot API at {url} within 1 s")
    );
    assert!(
        started.elapsed() < Duration::from_secs(8),
        "{:?}",
        started.elapsed()
    );
}

#[tokio::test]
async fn check_a_migrated_sqlite_database_is_current() {
    let scratch = Scratch::sqlite();
    askbridge::store::open(&scratch.url()).await.unwrap();
    let checked = check(&[], &[("ASKBRIDGE_DATABASE_URL", scratch.url())]).await;
    assert_eq!(checked.code, Some(0));
    assert!(
        checked
            .line("database")
            .ends_with(": reachable, migrations current (11 applied)"),
        "{}",
        checked.stdout
    );
}

#[tokio::test]
async fn check_postgres_reachable_and_its_migrations() {
    let scratch = Scratch::postgres().await;
    let url = scratch.url();
    let shown = url.replace("askbridge:askbridge@", "[redacted]@");

    // A fresh database: reachable, nothing migrated yet — a warning, since
    // `serve` applies the migrations when it starts.
    let checked = check(&[], &[("ASKBRIDGE_DATABASE_URL", url.clone())]).await;
    assert_eq!(checked.code, Some(0));
    assert_eq!(
        checked.line("database"),
        format!(
            "! database: {shown}: askbridge's tables are not there yet: 9 migrations not applied \
             (#1 asks, #2 secrets, #3 ask places, #4 place due, #5 reminders, #6 reminders done, #7 threads, #8 channel values, #9 webhooks); `askbridge serve` applies them when it starts"
        )
    );
    // check changed nothing.
    let checked = check(&["--json"], &[("ASKBRIDGE_DATABASE_URL", url.clone())]).await;
    let database = &checked.json()["checks"][1];
    assert_eq!(database["details"]["backend"], "postgres");
    assert_eq!(database["details"]["applied"], 0);
    assert_eq!(database["details"]["pending"][0]["version"], 1);

    // Migrated: current.
    let store = askbridge::store::open(&url).await.unwrap();
    drop(store);
    let checked = check(&[], &[("ASKBRIDGE_DATABASE_URL", url.clone())]).await;
    assert_eq!(checked.code, Some(0));
    assert_eq!(
        checked.line("database"),
        format!("✓ database: {shown}: reachable, migrations current (9 applied)")
    );

    // Migrated by a newer build.
    {
        use sqlx::Connection;
        let mut connection = sqlx::PgConnection::connect(&url).await.unwrap();
        sqlx::query(
            "INSERT INTO _sqlx_migrations (version, description, success, checksum, execution_time) \
             VALUES (9999, 'from the future', true, '\\x00', 0)",
        )
        .execute(&mut connection)
        .await
        .unwrap();
        connection.close().await.unwrap();
    }
    let checked = check(&[], &[("ASKBRIDGE_DATABASE_URL", url.clone())]).await;
    assert_eq!(checked.code, Some(1));
    assert!(
        checked
            .line("database")
            .contains("the database is newer than this build: it has 1 migration this build does not know (#9999)"),
        "{}",
        checked.stdout
    );

    // Unreachable: a port nothing listens on.
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = closed.local_addr().unwrap().port();
    drop(closed);
    let checked = check(
        &[],
        &[(
            "ASKBRIDGE_DATABASE_URL",
            format!("postgres://askbridge:secret@127.0.0.1:{port}/askbridge"),
        )],
    )
    .await;
    assert_eq!(checked.code, Some(1));
    let line = checked.line("database");
    assert!(
        line.starts_with(&format!(
            "✗ database: cannot open postgres://[redacted]@127.0.0.1:{port}/askbridge: "
        )),
        "{line}"
    );
    assert!(!line.contains("secret"), "{line}");
}

#[tokio::test]
async fn check_lists_the_coding_agent_hooks_and_warns_when_they_ask_another_daemon() {
    let dir = TempDir::new("askbridge-check-hooks");
    let install = |server: &str| {
        let output = askbridge_command()
            .args([
                "hooks",
                "install",
                "claude-code",
                "--to",
                "web",
                "--server",
                server,
            ])
            .current_dir(dir.path())
            .env("HOME", dir.path().join("home"))
            .output()
            .expect("run askbridge hooks install");
        assert!(output.status.success(), "{output:?}");
    };
    let none = check_in(dir.path(), &[], &[]).await;
    assert_eq!(
        none.line("hooks"),
        "- hooks: no coding-agent hooks installed here (askbridge hooks install claude-code|codex|copilot|cursor)"
    );

    install("http://127.0.0.1:8790");
    // Claude Code's own default, auto mode, never asks about some calls.
    let checked = check_in(dir.path(), &[], &[]).await;
    assert_eq!(
        checked.line("hooks"),
        "! hooks: Claude Code's permission mode is auto (Claude Code's default: no settings \
         file sets permissions.defaultMode): its classifier decides most calls itself, and a \
         call it flags as person-only waits at the terminal: a hook may refuse it but not allow \
         it, so askbridge is never asked about it; to be asked in the chat, set \"permissions\": \
         {\"defaultMode\": \"default\"} (or \"acceptEdits\") in its settings"
    );
    let local = dir.path().join(".claude/settings.local.json");
    std::fs::write(&local, r#"{"permissions": {"defaultMode": "acceptEdits"}}"#)
        .expect("write the local settings");
    let checked = check_in(dir.path(), &["--json"], &[]).await;
    let hooks = &checked.json()["checks"][9];
    assert_eq!(hooks["status"], "ok", "{hooks}");
    assert_eq!(
        hooks["message"],
        "Claude Code (project) PermissionRequest, Elicitation, PostToolUse, UserPromptSubmit, Stop"
    );
    assert_eq!(hooks["details"]["installed"][0]["host"], "claude-code");
    assert_eq!(hooks["details"]["installed"][0]["scope"], "project");

    install("http://127.0.0.1:9999");
    let checked = check_in(dir.path(), &[], &[]).await;
    assert_eq!(
        checked.line("hooks"),
        "! hooks: Claude Code (project) asks http://127.0.0.1:9999, not this daemon (http://127.0.0.1:8790)"
    );
    assert_eq!(checked.code, Some(0), "a warning, not a failure");
}

#[tokio::test]
async fn check_warns_about_settings_that_let_others_approve() {
    let dir = TempDir::new("askbridge-check-approvals");
    let file = dir.path().join("askbridge.toml");
    std::fs::write(&file, "[hooks]\nto = \"web\"\n").expect("write the config");
    let config = file.to_str().expect("a UTF-8 path");
    let escalate = (
        "ASKBRIDGE_DEFAULTS_ESCALATE",
        "300=telegram:-100999".to_owned(),
    );
    let checked = check_in(
        dir.path(),
        &["--config", config],
        std::slice::from_ref(&escalate),
    )
    .await;
    let line = checked.line("approvals");
    assert!(
        line.starts_with("! approvals: the web page cannot approve without an api_token"),
        "{line}"
    );
    assert!(
        line.contains("escalate to telegram:-100999 is left out for approvals"),
        "{line}"
    );
    assert_eq!(checked.code, Some(0), "a warning, not a failure");

    let token = ("ASKBRIDGE_API_TOKEN", "s3cret".to_owned());
    let checked = check_in(dir.path(), &["--config", config], &[token]).await;
    assert_eq!(
        checked.line("approvals"),
        "✓ approvals: only the person each place names approves"
    );
}

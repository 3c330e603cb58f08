//! The built-in web channel end to end: the real daemon (`askbridge serve`),
//! its page and event stream over HTTP, and the page answering asks in a
//! real browser — Debian's Chromium driven by Python Playwright
//! (`tests/web/answer_ask.py`).
//!
//! The browser tests need `/usr/bin/chromium` and a Python with Playwright
//! (`ASKBRIDGE_TEST_PYTHON`, else `$HOME/.cache/askbridge/venv/bin/python`;
//! `.ci/run` installs both). They fail, never skip, when either is missing;
//! Playwright is never allowed to download a browser.
//!
//! Nothing here sleeps: every wait is for an event (a line on stdout, an SSE
//! event, an HTTP response, the browser script exiting), bounded by a
//! timeout so a broken build fails instead of hanging.

mod daemon;

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use daemon::Daemon;
use daemon::events::{EventReader, header};
use reqwest::header::{AUTHORIZATION, CONTENT_TYPE};
use serde_json::{Value, json};
use tokio::process::Command;
use tokio::time::timeout;

/// The API token of the test that runs the page with one.
const TOKEN: &str = "web-test-token";
/// Longest wait for anything the daemon does.
const STEP: Duration = Duration::from_secs(30);
/// Longest a browser script may run.
const BROWSER: Duration = Duration::from_secs(120);
/// Debian's Chromium.
const CHROMIUM: &str = "/usr/bin/chromium";

/// `POST /v1/asks` without waiting; the new ask's id.
async fn create_ask(client: &reqwest::Client, daemon: &Daemon, ask: &Value) -> String {
    created(client, daemon, ask).await["id"]
        .as_str()
        .expect("the new ask has an id")
        .to_owned()
}

/// Creates an ask over HTTP; returns the response.
async fn created(client: &reqwest::Client, daemon: &Daemon, ask: &Value) -> Value {
    let response = client
        .post(daemon.url("/v1/asks"))
        .json(ask)
        .send()
        .await
        .expect("POST /v1/asks");
    let status = response.status();
    let body: Value = response.json().await.expect("POST /v1/asks answers JSON");
    assert_eq!(status, 201, "POST /v1/asks: {body}");
    body
}

/// The Python that has Playwright, or a clear failure saying how to get it.
fn python() -> PathBuf {
    let python = std::env::var_os("ASKBRIDGE_TEST_PYTHON").map_or_else(
        || {
            let home =
                std::env::var_os("HOME").expect("HOME is set (or set ASKBRIDGE_TEST_PYTHON)");
            Path::new(&home).join(".cache/askbridge/venv/bin/python")
        },
        PathBuf::from,
    );
    assert!(
        python.exists(),
        "no Python at {}: run .ci/run, or create a venv with `pip install playwright` and set ASKBRIDGE_TEST_PYTHON",
        python.display()
    );
    let check = std::process::Command::new(&python)
        .args(["-c", "import playwright.sync_api"])
        .output()
        .expect("run the test Python");
    assert!(
        check.status.success(),
        "{} cannot import Playwright (`pip install playwright`; no browser download is needed): {}",
        python.display(),
        String::from_utf8_lossy(&check.stderr)
    );
    assert!(
        Path::new(CHROMIUM).exists(),
        "{CHROMIUM} is missing: `apt-get install chromium` (.ci/run does)"
    );
    python
}

/// Where screenshots go: `target/test-artifacts/`.
fn artifacts() -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .parent()
        .expect("the target tmp dir has a parent")
        .join("test-artifacts");
    std::fs::create_dir_all(&dir).expect("create target/test-artifacts");
    dir
}

/// Runs one scenario of `tests/web/answer_ask.py` against the daemon's page
/// (opened with `#token=…` when the daemon has a token).
async fn browser(python: &Path, daemon: &Daemon, scenario: &str, screenshot: &Path) {
    browser_with(python, daemon, scenario, screenshot, &[]).await;
}

/// [`browser`], with `env` set for the script.
async fn browser_with(
    python: &Path,
    daemon: &Daemon,
    scenario: &str,
    screenshot: &Path,
    env: &[(&str, &str)],
) {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/web/answer_ask.py");
    let url = match daemon.token() {
        Some(token) => daemon.url(&format!("/#token={token}")),
        None => daemon.url("/"),
    };
    let run = Command::new(python)
        .arg(&script)
        .args([
            "--url",
            &url,
            "--chromium",
            CHROMIUM,
            "--scenario",
            scenario,
            "--screenshot",
        ])
        .arg(screenshot)
        .env("PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD", "1")
        .envs(env.iter().copied())
        .stdin(Stdio::null())
        .kill_on_drop(true)
        .output();
    let output = timeout(BROWSER, run)
        .await
        .unwrap_or_else(|_| panic!("the browser scenario {scenario} finishes within {BROWSER:?}"))
        .expect("run the browser script");
    assert!(
        output.status.success(),
        "browser scenario {scenario} failed ({}):\n--- stdout\n{}\n--- stderr\n{}",
        output.status,
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
}

/// Creates `ask` with `POST /v1/asks?wait=60` in the background, lets the
/// browser answer it, and returns what the waiting agent got.
async fn ask_through_the_browser(
    daemon: &Daemon,
    ask: Value,
    scenario: &str,
    screenshot: &str,
) -> Value {
    let python = python();
    let client = daemon::client();
    let agent = tokio::spawn({
        let url = daemon.url("/v1/asks?wait=60");
        let token = daemon.token().map(|t| format!("Bearer {t}"));
        async move {
            let mut request = client.post(url).json(&ask);
            if let Some(token) = token {
                request = request.header(AUTHORIZATION, token);
            }
            let response = request.send().await.expect("POST /v1/asks?wait=60");
            let status = response.status();
            let body: Value = response
                .json()
                .await
                .expect("the waiting POST answers JSON");
            (status, body)
        }
    });
    browser(&python, daemon, scenario, &artifacts().join(screenshot)).await;
    let (status, body) = timeout(STEP, agent)
        .await
        .expect("the waiting agent is answered within 30 s of the browser finishing")
        .expect("the agent task");
    assert!(
        status.is_success(),
        "POST /v1/asks?wait=60: {status} {body}"
    );
    body
}

#[tokio::test]
async fn web_page_and_assets_are_served() {
    let daemon = Daemon::start();
    let client = daemon::client();
    for (path, content_type, marker) in [
        (
            "/",
            "text/html; charset=utf-8",
            "<script src=\"/assets/app.js\"",
        ),
        (
            "/assets/app.js",
            "text/javascript; charset=utf-8",
            "/v1/events",
        ),
        (
            "/assets/app.css",
            "text/css; charset=utf-8",
            "prefers-color-scheme",
        ),
    ] {
        let response = client.get(daemon.url(path)).send().await.expect("GET");
        assert_eq!(response.status(), 200, "GET {path}");
        assert_eq!(header(&response, CONTENT_TYPE), content_type, "GET {path}");
        if path == "/" {
            let csp = header(&response, reqwest::header::CONTENT_SECURITY_POLICY);
            assert!(csp.contains("script-src 'self'"), "CSP {csp}");
        }
        let body = response.text().await.expect("body");
        assert!(body.contains(marker), "GET {path} contains {marker}");
    }
}

/// `GET /` with an `Accept-Language` header (none when empty): the
/// `<html lang>` and `Content-Language` of the page, and its text.
async fn page_in(
    client: &reqwest::Client,
    daemon: &Daemon,
    accept_language: &str,
) -> (String, String) {
    let mut request = client.get(daemon.url("/"));
    if !accept_language.is_empty() {
        request = request.header(reqwest::header::ACCEPT_LANGUAGE, accept_language);
    }
    let response = request.send().await.expect("GET /");
    assert_eq!(response.status(), 200, "GET / ({accept_language:?})");
    assert_eq!(
        header(&response, reqwest::header::VARY),
        "accept-language",
        "the page varies with the browser's language"
    );
    let content_language = header(&response, reqwest::header::CONTENT_LANGUAGE);
    let body = response.text().await.expect("the page");
    let lang = body
        .split_once("<html lang=\"")
        .and_then(|(_, rest)| rest.split_once('"'))
        .map(|(lang, _)| lang.to_owned())
        .expect("<html lang>");
    assert_eq!(
        lang, content_language,
        "<html lang> and Content-Language agree"
    );
    (lang, body)
}

/// The browser's language picks the page's; `[web] locale` is the
/// fallback for browsers that name none askbridge speaks.
#[tokio::test]
async fn web_page_is_served_in_the_browser_language() {
    let daemon = Daemon::builder().env("ASKBRIDGE_WEB_LOCALE", "th").start();
    let client = daemon::client();
    for (accept_language, lang, send) in [
        ("", "th", "ส่ง"),
        ("fr-FR,fr;q=0.9", "th", "ส่ง"),
        ("zh-CN,zh;q=0.9,en;q=0.8", "zh-CN", "发送"),
        ("en-US,en;q=0.9,th;q=0.5", "en", "Send"),
        ("de;q=0.9, zh-Hans-SG;q=0.4", "zh-CN", "发送"),
    ] {
        let (served, body) = page_in(&client, &daemon, accept_language).await;
        assert_eq!(served, lang, "Accept-Language {accept_language:?}");
        assert!(
            body.contains(&format!("data-phrase=\"page_send\">{send}</button>")),
            "Accept-Language {accept_language:?}: the Send button says {send}"
        );
    }
    let (lang, _) = page_in(&client, &Daemon::start(), "fr").await;
    assert_eq!(lang, "en", "the default fallback is English");
}

#[test]
fn web_locale_must_be_one_askbridge_speaks() {
    let exited = Daemon::builder()
        .env("ASKBRIDGE_WEB_LOCALE", "fr")
        .run_to_exit();
    assert!(!exited.status.success());
    assert!(
        exited
            .stderr
            .contains("ASKBRIDGE_WEB_LOCALE: unsupported locale \"fr\"; expected en, zh-CN or th"),
        "{}",
        exited.stderr
    );
}

/// `POST /v1/asks/{id}/reply` with structured answers.
async fn reply(client: &reqwest::Client, daemon: &Daemon, id: &str, answers: Value) {
    let response = client
        .post(daemon.url(&format!("/v1/asks/{id}/reply")))
        .json(&json!({ "answers": answers }))
        .send()
        .await
        .expect("POST reply");
    assert_eq!(response.status(), 200, "POST /v1/asks/{id}/reply");
}

#[tokio::test]
async fn web_events_stream_created_updated_and_ended_for_web_asks() {
    let daemon = Daemon::start();
    let client = daemon::client();
    let mut events = EventReader::open(&client, &daemon.url("/v1/events")).await;
    let (name, _) = events.next().await;
    assert_eq!(name, "ready", "the stream starts with `ready`");

    let id = create_ask(
        &client,
        &daemon,
        &json!({"to": "web", "title": "Lunch", "questions": [
            {"id": "food", "header": "Food", "question": "What for lunch?", "options": ["Soup (Recommended)", "Salad"]},
            {"id": "drink", "header": "Drink", "question": "And to drink?", "type": "text"}
        ]}),
    )
    .await;
    let created = events.until("created", &id).await;
    assert_eq!(created["status"], "pending");
    assert_eq!(created["to"], "web");
    assert_eq!(created["open"], json!(["food", "drink"]));
    assert_eq!(
        created["ask"]["questions"][0]["options"][0]["label"],
        "Soup (Recommended)"
    );

    reply(&client, &daemon, &id, json!({"food": ["Salad"]})).await;
    let updated = events.until("updated", &id).await;
    assert_eq!(updated["answered"], json!(["food"]));
    assert_eq!(updated["open"], json!(["drink"]));

    reply(&client, &daemon, &id, json!({"drink": ["Water"]})).await;
    let ended = events.until("ended", &id).await;
    assert_eq!(ended["status"], "answered");
    assert_eq!(
        ended["answers"],
        json!({"food": ["Salad"], "drink": ["Water"]})
    );
}

#[tokio::test]
async fn web_page_answers_a_two_question_ask_in_chromium() {
    let outcome = ask_through_the_browser(
        &Daemon::start(),
        json!({"to": "web", "title": "Release 2.4", "questions": [
            {"id": "deploy_target", "header": "Deploy", "question": "Where should I deploy the build?", "options": [
                {"label": "Staging (Recommended)", "description": "safe, reversible"},
                {"label": "Production", "description": "customers see it at once"}
            ]},
            {"id": "notify", "header": "Notify", "question": "Who should be told?", "options": [
                {"label": "Team channel"}, {"label": "On-call"}
            ]}
        ]}),
        "two-questions",
        "web-answered.png",
    )
    .await;
    assert_eq!(outcome["status"], "answered", "{outcome}");
    assert_eq!(
        outcome["answers"],
        json!({"deploy_target": ["Staging (Recommended)"], "notify": ["Tell Alice in person"]}),
        "{outcome}"
    );
}

#[tokio::test]
async fn web_page_answers_every_question_type_in_chromium() {
    let outcome = ask_through_the_browser(
        &Daemon::start(),
        json!({"to": "web", "title": "Set-up", "questions": [
            {"id": "channels", "header": "Channels", "question": "Where should alerts go?", "multiSelect": true, "options": [
                {"label": "Email"}, {"label": "Pager", "recommended": true}, {"label": "Chat"}
            ]},
            {"id": "backup", "header": "Backup", "question": "Keep nightly backups?", "type": "confirm"},
            {"id": "nickname", "header": "Nickname", "question": "A name for the server?", "type": "text", "required": false, "placeholder": "e.g. atlas"},
            {"id": "notes", "header": "Notes", "question": "Anything else?", "type": "textarea", "placeholder": "Free text"}
        ]}),
        "all-types",
        "web-all-types.png",
    )
    .await;
    assert_eq!(outcome["status"], "answered", "{outcome}");
    assert_eq!(
        outcome["answers"],
        json!({
            "channels": ["Email", "Chat"],
            "backup": ["yes"],
            "nickname": [],
            "notes": ["first line\nsecond line"]
        }),
        "{outcome}"
    );
}

#[tokio::test]
async fn web_events_need_the_token_when_one_is_set() {
    let daemon = Daemon::builder().token(TOKEN).start();
    let client = daemon::client();
    let page = client.get(daemon.url("/")).send().await.expect("GET /");
    assert_eq!(page.status(), 200, "the page itself needs no token");
    let refused = client
        .get(daemon.url("/v1/events"))
        .send()
        .await
        .expect("GET /v1/events");
    assert_eq!(refused.status(), 401);
    let response = timeout(
        STEP,
        client
            .get(daemon.url("/v1/events"))
            .header(AUTHORIZATION, format!("Bearer {TOKEN}"))
            .send(),
    )
    .await
    .expect("the event stream answers within 30 s")
    .expect("GET /v1/events with the token");
    assert_eq!(response.status(), 200);
}

/// The page in Thai and in Chinese (Chromium with `th-TH` and `zh-CN`): its
/// buttons and status lines in that language, answering there, and the
/// language switch, remembered over a reload.
#[tokio::test]
async fn web_page_speaks_thai_and_chinese_in_chromium() {
    let daemon = Daemon::start();
    let client = daemon::client();
    let thai = create_ask(
        &client,
        &daemon,
        &json!({"to": "web:thai", "title": "Release 2.5", "questions": [
            {"id": "target", "header": "Deploy", "question": "Where should I deploy?", "options": [
                {"label": "Staging", "recommended": true}, {"label": "Production"}
            ]}
        ]}),
    )
    .await;
    let chinese = create_ask(
        &client,
        &daemon,
        &json!({"to": "web:chinese", "title": "Release 2.6", "questions": [
            {"id": "target", "header": "Deploy", "question": "Where should I deploy?", "options": ["Staging", "Production"]},
            {"id": "backup", "header": "Backup", "question": "Back up first?", "type": "confirm"}
        ]}),
    )
    .await;
    browser(
        &python(),
        &daemon,
        "locales",
        &artifacts().join("web-locales.png"),
    )
    .await;
    for (id, answers) in [
        (thai, json!({"target": ["Production"]})),
        (chinese, json!({"target": ["Staging"], "backup": ["yes"]})),
    ] {
        let response = client
            .get(daemon.url(&format!("/v1/asks/{id}")))
            .send()
            .await
            .expect("GET /v1/asks/{id}");
        let outcome: Value = response.json().await.expect("the ask as JSON");
        assert_eq!(outcome["status"], "answered", "{outcome}");
        assert_eq!(outcome["answers"], answers, "{outcome}");
    }
}

/// Skip (the whole ask), on a daemon with an API token: the page takes the token from
/// `#token=…` and sends it with every request and the event stream.
#[tokio::test]
async fn web_page_skip_all_skips_the_ask_in_chromium() {
    let outcome = ask_through_the_browser(
        &Daemon::builder().token(TOKEN).start(),
        json!({"to": "web", "questions": [
            {"id": "color", "header": "Color", "question": "Which colour?", "options": ["Red", "Blue"]}
        ]}),
        "skip-all",
        "web-skipped.png",
    )
    .await;
    assert_eq!(outcome["status"], "no_answer", "{outcome}");
    assert_eq!(outcome["reason"], "skipped", "{outcome}");
}

/// An ask in several places is on the page when one of them is the web,
/// which says where else it was asked (those places fail here: no Slack or
/// Telegram channel is configured, and the web still holds the ask).
#[tokio::test]
async fn web_page_shows_an_ask_in_several_places_and_where_else_in_chromium() {
    let outcome = ask_through_the_browser(
        &Daemon::builder().token(TOKEN).start(),
        json!({"to": ["slack:C0123@U0456", "web", "telegram:-100"], "questions": [
            {"id": "color", "header": "Color", "question": "Which colour?", "options": ["Red", "Blue"]}
        ]}),
        "several-places",
        "web-several-places.png",
    )
    .await;
    assert_eq!(outcome["reason"], "skipped", "{outcome}");
    assert_eq!(outcome["answeredBy"]["place"], "web", "{outcome}");
}

/// The page shows the reminder line once an ask's reminder is due, and an
/// ask passed on to the web (after its Slack place, which fails here: no
/// Slack channel) only from its time on, by the daemon's clock, saying so;
/// the pending list has it only from then too. The scenario runs the
/// page's clock for the reminder; the daemon's is its own.
#[tokio::test]
async fn web_page_shows_reminders_and_asks_passed_on_at_their_time_in_chromium() {
    let python = python();
    let daemon = Daemon::start();
    let client = daemon::client();
    let question = |text: &str| json!([{"id": "q", "header": "Q", "question": text, "options": ["Left", "Right"]}]);
    let reminded = create_ask(
        &client,
        &daemon,
        &json!({"to": "web", "title": "Reminded", "timeoutSeconds": 600,
                "remindAfterSeconds": 30, "questions": question("Which colour?")}),
    )
    .await;
    let later = create_ask(
        &client,
        &daemon,
        &json!({"to": "slack:C0123", "title": "Later", "timeoutSeconds": 1200,
                "escalate": [{"afterSeconds": 600, "to": "web"}], "questions": question("Which road?")}),
    )
    .await;
    let listed = |query: &'static str| {
        let client = client.clone();
        let url = daemon.url(&format!("/v1/asks?{query}"));
        async move {
            let list: Value = client
                .get(url)
                .send()
                .await
                .expect("GET the list")
                .json()
                .await
                .expect("JSON");
            let ids: Vec<String> = list["asks"]
                .as_array()
                .expect("asks")
                .iter()
                .map(|ask| ask["id"].as_str().expect("an id").to_owned())
                .collect();
            ids
        }
    };
    assert_eq!(
        listed("status=pending&channel=web").await,
        [reminded.as_str()]
    );
    assert_eq!(listed("channel=web").await, [reminded.as_str()]);
    assert_eq!(listed("channel=slack").await, [later.as_str()]);
    browser(
        &python,
        &daemon,
        "reach",
        &artifacts().join("web-reach.png"),
    )
    .await;
    let pending = listed("status=pending&channel=web").await;
    assert_eq!(
        pending.len(),
        2,
        "the one passed on in 2 s is listed now: {pending:?}"
    );
    assert!(!pending.contains(&later), "not yet: {pending:?}");
    for id in [reminded, later] {
        let ask: Value = client
            .get(daemon.url(&format!("/v1/asks/{id}")))
            .send()
            .await
            .expect("GET the ask")
            .json()
            .await
            .expect("JSON");
        assert_eq!(ask["status"], "pending", "{ask}");
    }
}

/// The link an agent host shows (`/#ask=<id>`) opens that one ask, which the
/// page answers; an ask answered in the host reads "Answered in the
/// terminal" on the page.
#[tokio::test]
async fn web_page_link_to_one_ask_and_an_answer_in_the_host_in_chromium() {
    let daemon = Daemon::start();
    let client = daemon::client();
    let linked = create_ask(
        &client,
        &daemon,
        &json!({"to": "web:elsewhere", "title": "Link only", "questions": [
            {"id": "color", "header": "Color", "question": "Which colour?", "options": ["Red", "Blue"]}
        ]}),
    )
    .await;
    let other = created(
        &client,
        &daemon,
        &json!({"to": "web", "title": "Release 2.4", "questions": [
            {"id": "deploy", "header": "Deploy", "question": "Where to?", "options": ["Staging", "Production"]}
        ]}),
    )
    .await;
    // The host answers with the key only the ask's creation gave.
    let host_key = other["hostKey"].as_str().expect("a hostKey");
    let other = other["id"].as_str().expect("an id").to_owned();
    browser_with(
        &python(),
        &daemon,
        "one-ask",
        &artifacts().join("web-answered-in-host.png"),
        &[("ASKBRIDGE_HOST_KEY", host_key)],
    )
    .await;
    let linked = daemon::outcome(&daemon, &linked).await;
    assert_eq!(linked["answers"], json!({"color": ["Blue"]}), "{linked}");
    assert_eq!(linked["details"][0]["via"], json!("web"), "{linked}");
    let other = daemon::outcome(&daemon, &other).await;
    assert_eq!(other["answeredBy"]["channel"], json!("host"), "{other}");
}

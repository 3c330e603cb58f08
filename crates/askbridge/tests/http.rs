//! The HTTP API end to end: the real `askbridge serve` binary,
//! spawned per test by the `daemon` helper, talked to with reqwest over
//! 127.0.0.1.
//!
//! Nothing sleeps: waiting is done by the API itself (`?wait=` long-polls)
//! or by the helper reading the daemon's `listening on` line.

mod daemon;

use std::time::Duration;

use daemon::Daemon;
use reqwest::header::{AUTHORIZATION, CONTENT_TYPE};
use serde_json::{Value, json};

/// The example ask of docs/ask.md, two questions.
fn release_ask() -> Value {
    json!({
        "title": "Release 2.4",
        "questions": [
            {"id": "deploy", "header": "Deploy", "question": "Where should I deploy the build?",
             "options": [{"label": "Staging (Recommended)", "description": "safe, reversible"}, {"label": "Production"}]},
            {"id": "notify", "header": "Notify", "question": "Who should be told?", "multiSelect": true,
             "options": ["Team channel", "On-call", "Nobody"]}
        ]
    })
}

fn one_question() -> Value {
    json!({"questions": [{"id": "color", "header": "Color", "question": "Which color?", "options": ["Red", "Blue"]}]})
}

/// Sends a request and reads the JSON body; panics if it is not JSON.
async fn call(request: reqwest::RequestBuilder) -> (u16, Value) {
    let response = request.send().await.expect("send the request");
    let status = response.status().as_u16();
    let text = response.text().await.expect("read the body");
    let json = serde_json::from_str(&text)
        .unwrap_or_else(|e| panic!("status {status}: body is not JSON ({e}): {text}"));
    (status, json)
}

async fn post(daemon: &Daemon, path: &str, body: &Value) -> (u16, Value) {
    call(daemon::client().post(daemon.url(path)).json(body)).await
}

async fn get(daemon: &Daemon, path: &str) -> (u16, Value) {
    call(daemon::client().get(daemon.url(path))).await
}

async fn delete(daemon: &Daemon, path: &str) -> (u16, Value) {
    call(daemon::client().delete(daemon.url(path))).await
}

/// Creates an ask and returns its id.
/// Replies to `id` while a `GET ?wait=` long-poll waits on it; returns the
/// reply's and then the long-poll's status and body.
async fn reply_while_waiting(
    daemon: &Daemon,
    id: &str,
    body: Value,
) -> ((u16, Value), (u16, Value)) {
    let waiting = tokio::spawn({
        let url = daemon.url(&format!("/v1/asks/{id}?wait=60"));
        async move { call(daemon::client().get(url)).await }
    });
    let reply = post(daemon, &format!("/v1/asks/{id}/reply"), &body).await;
    let outcome = tokio::time::timeout(Duration::from_secs(30), waiting)
        .await
        .expect("the long-poll returned")
        .expect("the task ran");
    (reply, outcome)
}

async fn create(daemon: &Daemon, body: &Value) -> String {
    let (status, ask) = post(daemon, "/v1/asks", body).await;
    assert_eq!(status, 201, "{ask}");
    ask["id"].as_str().expect("id").to_owned()
}

/// Checks an error response: status, `{"error": {"code", "message",
/// "path"}}` with this code and path; returns the error object.
#[track_caller]
fn check_error(got: (u16, Value), status: u16, code: &str, path: Option<&str>) -> Value {
    let (got_status, body) = got;
    assert_eq!(got_status, status, "{body}");
    let error = &body["error"];
    assert_eq!(error["code"], code, "{body}");
    assert!(
        error["message"].as_str().is_some_and(|m| !m.is_empty()),
        "{body}"
    );
    assert!(
        error.get("path").is_some(),
        "error without a path key: {body}"
    );
    match path {
        Some(path) => assert_eq!(error["path"], path, "{body}"),
        None => assert!(error["path"].is_null(), "{body}"),
    }
    error.clone()
}

#[tokio::test]
async fn http_create_in_every_dialect() {
    let daemon = Daemon::start();
    let cases = [
        ("canonical", release_ask(), "web", "deploy"),
        (
            "claude code",
            json!({"questions": [{"header": "Database", "question": "Which database?", "multiSelect": false,
                                  "options": [{"label": "PostgreSQL", "description": "robust"}, {"label": "SQLite"}]}]}),
            "web",
            "database",
        ),
        (
            "llm wiki",
            json!({"title": "Setup", "fields": [{"id": "name", "type": "input", "label": "Project name"},
                                                  {"id": "lang", "type": "radio", "label": "Language",
                                                   "options": [{"label": "Rust", "value": "rust"}, {"label": "Go", "value": "go"}]}]}),
            "web",
            "name",
        ),
        (
            "wrapper",
            json!({"ask": {"to": "web:elsewhere", "questions": [{"id": "ok", "question": "Ship it?", "type": "confirm"}]},
                   "to": "web:ops"}),
            "web:ops",
            "ok",
        ),
        (
            "wrapper with assistant text",
            json!({"ask": "Which way?\nA. Left\nB. Right"}),
            "web",
            "choice",
        ),
    ];
    for (name, body, to, first_id) in cases {
        let response = daemon::client()
            .post(daemon.url("/v1/asks"))
            .json(&body)
            .send()
            .await
            .expect("send");
        assert_eq!(response.status().as_u16(), 201, "{name}");
        let location = response
            .headers()
            .get("location")
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned);
        let ask: Value = response.json().await.expect("json");
        let id = ask["id"].as_str().expect("id");
        assert!(!id.is_empty(), "{name}: {ask}");
        assert_eq!(
            location.as_deref(),
            Some(format!("/v1/asks/{id}").as_str()),
            "{name}"
        );
        assert_eq!(ask["status"], "pending", "{name}: {ask}");
        assert_eq!(ask["to"], to, "{name}: {ask}");
        assert_eq!(ask["ask"]["questions"][0]["id"], first_id, "{name}: {ask}");
        assert!(
            ask["createdAt"].as_str().is_some_and(|t| t.ends_with('Z')),
            "{name}: {ask}"
        );
        assert!(
            ask["expiresAt"].as_str().is_some_and(|t| t.ends_with('Z')),
            "{name}: {ask}"
        );
        assert_eq!(ask["answered"], json!([]), "{name}: {ask}");
        assert!(
            !ask["open"].as_array().expect("open").is_empty(),
            "{name}: {ask}"
        );
    }
}

#[tokio::test]
async fn http_create_reports_the_normalisers_fixes() {
    let daemon = Daemon::start();
    let (status, ask) = post(
        &daemon,
        "/v1/asks",
        &json!({"questions": [{"id": "a", "header": "A", "question": "A?", "options": ["X", "Y", "Other"]}],
                "timeoutSeconds": 5}),
    )
    .await;
    assert_eq!(status, 201, "{ask}");
    assert_eq!(ask["ask"]["timeoutSeconds"], 30);
    let paths: Vec<&str> = ask["warnings"]
        .as_array()
        .expect("warnings")
        .iter()
        .filter_map(|w| w["path"].as_str())
        .collect();
    assert!(paths.contains(&"timeoutSeconds"), "{ask}");
    // Reading it back has no warnings: they belong to the creating response.
    let id = ask["id"].as_str().expect("id");
    let (status, again) = get(&daemon, &format!("/v1/asks/{id}")).await;
    assert_eq!(status, 200);
    assert!(again.get("warnings").is_none(), "{again}");
    assert_eq!(again["ask"], ask["ask"]);
}

#[tokio::test]
async fn http_get_then_reply_by_text_then_already_answered() {
    let daemon = Daemon::start();
    let id = create(&daemon, &release_ask()).await;

    let (status, ask) = get(&daemon, &format!("/v1/asks/{id}")).await;
    assert_eq!(status, 200);
    assert_eq!(ask["id"], id.as_str());
    assert_eq!(ask["status"], "pending");
    assert_eq!(ask["open"], json!(["deploy", "notify"]));

    // One question at a time: the first reply leaves the second open.
    let (status, reply) = post(
        &daemon,
        &format!("/v1/asks/{id}/reply"),
        &json!({"text": "Q1: 1"}),
    )
    .await;
    assert_eq!(status, 200, "{reply}");
    assert_eq!(reply["result"], "accepted", "{reply}");
    assert_eq!(reply["stillOpen"], json!(["notify"]), "{reply}");
    assert_eq!(reply["clarify"], json!([]), "{reply}");
    assert_eq!(reply["ask"]["answered"], json!(["deploy"]), "{reply}");

    let (status, reply) = post(
        &daemon,
        &format!("/v1/asks/{id}/reply"),
        &json!({"text": "Q2: 1, 2", "user": {"id": "alice", "name": "Alice"}}),
    )
    .await;
    assert_eq!(status, 200, "{reply}");
    assert_eq!(reply["result"], "answered", "{reply}");
    let outcome = &reply["ask"];
    assert_eq!(outcome["status"], "answered", "{reply}");
    assert!(outcome["reason"].is_null(), "{reply}");
    assert_eq!(
        outcome["answers"],
        json!({"deploy": ["Staging (Recommended)"], "notify": ["Team channel", "On-call"]})
    );
    assert_eq!(
        outcome["answeredBy"],
        json!({"channel": "web", "userId": "alice", "name": "Alice", "place": "web"})
    );
    assert!(
        outcome["continuation"]
            .as_str()
            .is_some_and(|c| c.contains("Release 2.4"))
    );
    assert_eq!(outcome["to"], "web");
    assert_eq!(outcome["ask"]["title"], "Release 2.4");

    let late = post(
        &daemon,
        &format!("/v1/asks/{id}/reply"),
        &json!({"text": "Q1: 2"}),
    )
    .await;
    let error = check_error(late, 409, "already_answered", None);
    assert_eq!(error["message"], "This question was already answered.");

    // And the ask did not change.
    let (_, ask) = get(&daemon, &format!("/v1/asks/{id}")).await;
    assert_eq!(ask["answers"]["deploy"], json!(["Staging (Recommended)"]));
}

#[tokio::test]
async fn http_reply_by_structured_answers() {
    let daemon = Daemon::start();
    let id = create(&daemon, &release_ask()).await;
    let (status, reply) = post(
        &daemon,
        &format!("/v1/asks/{id}/reply"),
        &json!({"answers": {"deploy": ["production"], "notify": ["Nobody", "the release manager"]}}),
    )
    .await;
    assert_eq!(status, 200, "{reply}");
    assert_eq!(reply["result"], "answered");
    let outcome = &reply["ask"];
    assert_eq!(
        outcome["answers"],
        json!({"deploy": ["Production"], "notify": ["Nobody", "the release manager"]})
    );
    assert_eq!(outcome["answeredBy"]["userId"], "web");
    assert_eq!(outcome["details"][0]["via"], "web");
    assert_eq!(outcome["details"][1]["other"], "the release manager");
}

#[tokio::test]
async fn http_reply_that_fits_several_options_asks_which() {
    let daemon = Daemon::start();
    let id = create(
        &daemon,
        &json!({"questions": [{"id": "lang", "header": "Language", "question": "Which one?",
                               "options": ["Python 3", "Python 2", "Rust"]}]}),
    )
    .await;
    let (status, reply) = post(
        &daemon,
        &format!("/v1/asks/{id}/reply"),
        &json!({"text": "python"}),
    )
    .await;
    assert_eq!(status, 200, "{reply}");
    assert_eq!(reply["result"], "accepted", "{reply}");
    assert_eq!(reply["stillOpen"], json!(["lang"]), "{reply}");
    assert_eq!(
        reply["clarify"],
        json!([{"id": "lang", "candidates": ["Python 3", "Python 2"]}]),
        "{reply}"
    );
}

#[tokio::test]
async fn http_reply_from_someone_else_is_not_for_them() {
    let daemon = Daemon::start();
    let mut ask = one_question();
    ask["to"] = json!("web@alice");
    let id = create(&daemon, &ask).await;
    let refused = post(
        &daemon,
        &format!("/v1/asks/{id}/reply"),
        &json!({"text": "Red"}),
    )
    .await;
    let error = check_error(refused, 403, "not_for_you", None);
    assert_eq!(error["message"], "This question is not for you.");
    let (status, reply) = post(
        &daemon,
        &format!("/v1/asks/{id}/reply"),
        &json!({"text": "Red", "user": {"id": "alice"}}),
    )
    .await;
    assert_eq!(status, 200, "{reply}");
    assert_eq!(reply["ask"]["answers"], json!({"color": ["Red"]}));
}

#[tokio::test]
async fn http_get_wait_returns_when_another_request_replies() {
    let daemon = Daemon::start();
    let id = create(&daemon, &one_question()).await;
    let ((reply_status, reply), (status, outcome)) =
        reply_while_waiting(&daemon, &id, json!({"text": "blue"})).await;
    assert_eq!(reply_status, 200, "{reply}");
    assert_eq!(status, 200, "{outcome}");
    assert_eq!(outcome["status"], "answered", "{outcome}");
    assert_eq!(outcome["answers"], json!({"color": ["Blue"]}));
}

#[tokio::test]
async fn http_wait_ends_with_the_ask_still_pending() {
    let daemon = Daemon::start();
    let (status, ask) = post(&daemon, "/v1/asks?wait=0.2", &one_question()).await;
    assert_eq!(status, 201, "{ask}");
    assert_eq!(ask["status"], "pending");
    let id = ask["id"].as_str().expect("id");
    let (status, ask) = get(&daemon, &format!("/v1/asks/{id}?wait=0.2")).await;
    assert_eq!(status, 200, "{ask}");
    assert_eq!(ask["status"], "pending");
}

#[tokio::test]
async fn http_post_wait_returns_the_outcome_and_retries_are_idempotent() {
    let daemon = Daemon::start();
    let client = daemon::client();
    let waiting = tokio::spawn({
        let request = client
            .post(daemon.url("/v1/asks?wait=60"))
            .header("Idempotency-Key", "release-42")
            .json(&release_ask());
        async move { call(request).await }
    });
    // A retry with the same key and body is the same ask, wherever the
    // first request is.
    let (status, retry) = call(
        client
            .post(daemon.url("/v1/asks"))
            .header("Idempotency-Key", "release-42")
            .json(&release_ask()),
    )
    .await;
    assert!(status == 200 || status == 201, "{status}: {retry}");
    let id = retry["id"].as_str().expect("id").to_owned();
    let (status, again) = call(
        client
            .post(daemon.url("/v1/asks"))
            .header("Idempotency-Key", "release-42")
            .json(&release_ask()),
    )
    .await;
    assert_eq!(status, 200, "{again}");
    assert_eq!(again["id"], id.as_str());

    // The same key for a different ask is a conflict.
    let conflict = call(
        client
            .post(daemon.url("/v1/asks"))
            .header("Idempotency-Key", "release-42")
            .json(&one_question()),
    )
    .await;
    check_error(
        conflict,
        409,
        "idempotency_conflict",
        Some("Idempotency-Key"),
    );

    let (status, reply) = post(
        &daemon,
        &format!("/v1/asks/{id}/reply"),
        &json!({"text": "Q1: staging\nQ2: nobody"}),
    )
    .await;
    assert_eq!(status, 200, "{reply}");
    let (status, outcome) = tokio::time::timeout(Duration::from_secs(30), waiting)
        .await
        .expect("the waiting POST returned")
        .expect("the task ran");
    assert_eq!(status, 200, "{outcome}");
    assert_eq!(outcome["id"], id.as_str());
    assert_eq!(outcome["status"], "answered");
    assert_eq!(
        outcome["answers"],
        json!({"deploy": ["Staging (Recommended)"], "notify": ["Nobody"]})
    );

    let (status, list) = get(&daemon, "/v1/asks").await;
    assert_eq!(status, 200);
    assert_eq!(list["asks"].as_array().map(Vec::len), Some(1), "{list}");
}

#[tokio::test]
async fn http_cancel() {
    let daemon = Daemon::start();
    let id = create(&daemon, &one_question()).await;
    let (status, refused) = delete(&daemon, &format!("/v1/asks/{id}?because=bored")).await;
    assert_eq!(status, 400, "{refused}");
    assert_eq!(refused["error"]["code"], "invalid_query", "{refused}");
    assert_eq!(
        refused["error"]["message"],
        "unknown value \"bored\"; expected agent or answered_in_host"
    );
    let (status, ask) = delete(&daemon, &format!("/v1/asks/{id}")).await;
    assert_eq!(status, 200, "{ask}");
    assert_eq!(ask["status"], "no_answer", "{ask}");
    assert_eq!(ask["reason"], "cancelled", "{ask}");
    // Cancelling again returns the ended ask as it is.
    let (status, again) = delete(&daemon, &format!("/v1/asks/{id}")).await;
    assert_eq!(status, 200);
    assert_eq!(again["reason"], "cancelled");
    let late = post(
        &daemon,
        &format!("/v1/asks/{id}/reply"),
        &json!({"text": "Red"}),
    )
    .await;
    let error = check_error(late, 409, "already_answered", None);
    // The words a person in a chat reads, from the core's locale table.
    assert_eq!(error["message"], "This question was cancelled.");
}

/// Reads a server-sent event stream until an event named `name`; returns
/// its data.
async fn next_event(stream: &mut reqwest::Response, buffer: &mut String, name: &str) -> Value {
    let marker = format!("event: {name}\n");
    loop {
        if let Some(start) = buffer.find(&marker) {
            let after = &buffer[start + marker.len()..];
            if let Some(end) = after.find("\n\n") {
                let data: String = after[..end]
                    .lines()
                    .filter_map(|line| line.strip_prefix("data:"))
                    .map(str::trim_start)
                    .collect();
                let rest = after[end + 2..].to_owned();
                *buffer = rest;
                return serde_json::from_str(&data).expect("event data is JSON");
            }
        }
        let chunk = tokio::time::timeout(Duration::from_secs(30), stream.chunk())
            .await
            .expect("an event within 30 s")
            .expect("read the event stream")
            .expect("the event stream is open");
        buffer.push_str(&String::from_utf8_lossy(&chunk));
    }
}

#[tokio::test]
async fn http_closing_a_waiting_create_cancels_the_ask() {
    use tokio::io::AsyncWriteExt;

    let daemon = Daemon::start();
    // The page's event stream tells when the ask exists (and so its
    // creator is waiting), without guessing at timing.
    let mut events = daemon::client()
        .get(daemon.url("/v1/events"))
        .send()
        .await
        .expect("open the event stream");
    let mut buffer = String::new();
    next_event(&mut events, &mut buffer, "ready").await;

    let body = one_question().to_string();
    let mut agent = tokio::net::TcpStream::connect(daemon.connect_addr())
        .await
        .expect("connect");
    let request = format!(
        "POST /v1/asks?wait=600 HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
        daemon.connect_addr(),
        body.len()
    );
    agent
        .write_all(request.as_bytes())
        .await
        .expect("send the request");
    let created = next_event(&mut events, &mut buffer, "created").await;
    let id = created["id"].as_str().expect("id").to_owned();

    // The agent goes away mid-wait.
    drop(agent);
    let ended = next_event(&mut events, &mut buffer, "ended").await;
    assert_eq!(ended["id"], id.as_str(), "{ended}");
    assert_eq!(ended["reason"], "cancelled", "{ended}");
    let (status, ask) = get(&daemon, &format!("/v1/asks/{id}")).await;
    assert_eq!(status, 200, "{ask}");
    assert_eq!(ask["reason"], "cancelled", "{ask}");
}

#[tokio::test]
async fn http_list_pending() {
    let daemon = Daemon::start();
    let answered = create(&daemon, &one_question()).await;
    let first = create(&daemon, &one_question()).await;
    let second = create(&daemon, &one_question()).await;
    let (status, _) = post(
        &daemon,
        &format!("/v1/asks/{answered}/reply"),
        &json!({"text": "red"}),
    )
    .await;
    assert_eq!(status, 200);

    let (status, list) = get(&daemon, "/v1/asks?status=pending&channel=web").await;
    assert_eq!(status, 200, "{list}");
    let ids: Vec<&str> = list["asks"]
        .as_array()
        .expect("asks")
        .iter()
        .filter_map(|a| a["id"].as_str())
        .collect();
    assert_eq!(
        ids,
        [second.as_str(), first.as_str()],
        "newest first, pending only"
    );

    let (_, list) = get(&daemon, "/v1/asks?status=pending&limit=1").await;
    assert_eq!(list["asks"].as_array().map(Vec::len), Some(1), "{list}");
    let (_, list) = get(&daemon, "/v1/asks").await;
    assert_eq!(list["asks"].as_array().map(Vec::len), Some(3), "{list}");
    let (_, list) = get(&daemon, "/v1/asks?channel=telegram").await;
    assert_eq!(list["asks"], json!([]));
}

#[tokio::test]
async fn http_bad_input_is_a_clear_4xx() {
    let daemon = Daemon::start();
    let client = daemon::client();
    let id = create(&daemon, &release_ask()).await;
    let raw = |path: &str, content_type: &str, body: &str| {
        client
            .post(daemon.url(path))
            .header(CONTENT_TYPE, content_type)
            .body(body.to_owned())
    };

    // Malformed JSON: where serde stopped.
    let error = check_error(
        call(raw("/v1/asks", "application/json", "{\"questions\": [")).await,
        400,
        "malformed_json",
        None,
    );
    assert!(
        error["message"]
            .as_str()
            .is_some_and(|m| m.contains("line 1 column")),
        "{error}"
    );
    check_error(
        call(raw("/v1/asks", "application/json", "")).await,
        400,
        "malformed_json",
        None,
    );
    check_error(
        call(raw(
            &format!("/v1/asks/{id}/reply"),
            "application/json",
            "{text: 1}",
        ))
        .await,
        400,
        "malformed_json",
        None,
    );

    // Not JSON at all.
    check_error(
        call(raw("/v1/asks", "text/plain", "{}")).await,
        415,
        "unsupported_media_type",
        None,
    );
    check_error(
        call(client.post(daemon.url("/v1/asks")).body("{}")).await,
        415,
        "unsupported_media_type",
        None,
    );

    // Invalid asks: the normaliser's path-named problems.
    let error = check_error(
        post(
            &daemon,
            "/v1/asks",
            &json!({"questions": [{"id": "a", "header": "A", "question": "A?", "options": ["Only"]}]}),
        )
        .await,
        422,
        "invalid_ask",
        Some("questions[0].options"),
    );
    assert!(
        error["message"]
            .as_str()
            .is_some_and(|m| m.contains("at least 2 options")),
        "{error}"
    );
    assert_eq!(
        error["errors"][0]["path"], "questions[0].options",
        "{error}"
    );
    let error = check_error(
        post(&daemon, "/v1/asks", &json!({"ask": {"questions": []}})).await,
        422,
        "invalid_ask",
        Some("ask.questions"),
    );
    assert!(error["errors"].is_array(), "{error}");
    check_error(
        post(&daemon, "/v1/asks", &json!(42)).await,
        422,
        "invalid_ask",
        Some("$"),
    );
    check_error(
        post(
            &daemon,
            "/v1/asks",
            &json!({"title": "T", "questions": "x"}),
        )
        .await,
        422,
        "invalid_ask",
        Some("questions"),
    );
    check_error(
        post(
            &daemon,
            "/v1/asks",
            &json!({"ask": one_question(), "to": "pager:1"}),
        )
        .await,
        422,
        "invalid_ask",
        Some("to"),
    );
    check_error(
        post(
            &daemon,
            "/v1/asks",
            &json!({"ask": one_question(), "to": 7}),
        )
        .await,
        422,
        "invalid_ask",
        Some("to"),
    );

    // Unknown ids.
    check_error(
        get(&daemon, "/v1/asks/ask_nope").await,
        404,
        "not_found",
        Some("id"),
    );
    check_error(
        delete(&daemon, "/v1/asks/ask_nope").await,
        404,
        "not_found",
        Some("id"),
    );
    check_error(
        post(&daemon, "/v1/asks/ask_nope/reply", &json!({"text": "1"})).await,
        404,
        "not_found",
        Some("id"),
    );

    // Bad query parameters.
    for wait in ["abc", "-1", ""] {
        check_error(
            get(&daemon, &format!("/v1/asks/{id}?wait={wait}")).await,
            400,
            "invalid_query",
            Some("wait"),
        );
    }
    check_error(
        post(&daemon, "/v1/asks?wait=soon", &one_question()).await,
        400,
        "invalid_query",
        Some("wait"),
    );
    check_error(
        get(&daemon, "/v1/asks?status=done").await,
        400,
        "invalid_query",
        Some("status"),
    );
    check_error(
        get(&daemon, "/v1/asks?limit=0").await,
        400,
        "invalid_query",
        Some("limit"),
    );
    check_error(
        get(&daemon, "/v1/asks?channel=irc").await,
        400,
        "invalid_query",
        Some("channel"),
    );
    check_error(
        get(&daemon, &format!("/v1/asks/{id}?wiat=5")).await,
        400,
        "invalid_query",
        Some("wiat"),
    );

    // Bad headers.
    check_error(
        call(
            client
                .post(daemon.url("/v1/asks"))
                .header("Idempotency-Key", "x".repeat(300))
                .json(&one_question()),
        )
        .await,
        400,
        "invalid_header",
        Some("Idempotency-Key"),
    );

    // Replies of the wrong shape or that do not fit the ask.
    let reply = format!("/v1/asks/{id}/reply");
    check_error(
        post(&daemon, &reply, &json!({"text": 5})).await,
        422,
        "invalid_request",
        Some("text"),
    );
    check_error(
        post(&daemon, &reply, &json!({"answers": ["a"]})).await,
        422,
        "invalid_request",
        Some("answers"),
    );
    check_error(
        post(&daemon, &reply, &json!({"answers": {"deploy": [1]}})).await,
        422,
        "invalid_request",
        Some("answers.deploy[0]"),
    );
    check_error(
        post(&daemon, &reply, &json!({"txt": "1"})).await,
        422,
        "invalid_request",
        Some("txt"),
    );
    check_error(
        post(&daemon, &reply, &json!({})).await,
        422,
        "invalid_request",
        Some("$"),
    );
    check_error(
        post(&daemon, &reply, &json!({"answers": {"nope": ["x"]}})).await,
        422,
        "invalid_answer",
        Some("answers.nope"),
    );
    check_error(
        post(
            &daemon,
            &reply,
            &json!({"answers": {"deploy": ["Staging", "Production"]}}),
        )
        .await,
        422,
        "invalid_answer",
        Some("answers.deploy"),
    );
    check_error(
        post(&daemon, &reply, &json!({"answers": {"deploy": []}})).await,
        422,
        "invalid_answer",
        Some("answers.deploy"),
    );

    // The ask is untouched by all of that.
    let (_, ask) = get(&daemon, &format!("/v1/asks/{id}")).await;
    assert_eq!(ask["status"], "pending");
    assert_eq!(ask["answered"], json!([]));

    // Routes and methods that do not exist are JSON errors too.
    check_error(get(&daemon, "/v1/nothing").await, 404, "not_found", None);
    check_error(
        call(client.put(daemon.url("/v1/asks")).json(&json!({}))).await,
        405,
        "method_not_allowed",
        None,
    );
}

#[tokio::test]
async fn http_oversized_body_is_413() {
    let daemon = Daemon::builder()
        .env("ASKBRIDGE_HTTP_MAX_BODY_BYTES", "4096")
        .start();
    let big = json!({"questions": [{"id": "a", "question": "x".repeat(8_000)}]});
    check_error(
        post(&daemon, "/v1/asks", &big).await,
        413,
        "body_too_large",
        None,
    );
    // Under the limit, fine.
    create(&daemon, &one_question()).await;
}

#[tokio::test]
async fn http_health_and_metrics() {
    let daemon = Daemon::start();
    let (status, health) = get(&daemon, "/healthz").await;
    assert_eq!(status, 200);
    // One SQLite instance, owning no bot connection (no chat configured),
    // named by the name kept in its data directory.
    let instance = std::fs::read_to_string(daemon.data_dir().join("instance"))
        .expect("the instance name is kept in the data directory");
    assert_eq!(
        health,
        json!({"status": "ok", "instance": instance.trim(), "database": "sqlite", "owns": []})
    );

    let id = create(&daemon, &one_question()).await;
    reply_while_waiting(&daemon, &id, json!({"text": "red"})).await;
    create(&daemon, &one_question()).await;

    let response = daemon::client()
        .get(daemon.url("/metrics"))
        .send()
        .await
        .expect("metrics");
    assert_eq!(response.status().as_u16(), 200);
    assert!(
        response
            .headers()
            .get(CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|t| t.starts_with("text/plain")),
    );
    let text = response.text().await.expect("text");
    for line in [
        "askbridge_asks_created_total 2",
        "askbridge_asks_ended_total{status=\"answered\"} 1",
        "askbridge_asks_pending 1",
        "askbridge_http_requests_total{method=\"POST\",route=\"/v1/asks\",status=\"201\"} 2",
        "askbridge_http_requests_total{method=\"GET\",route=\"/healthz\",status=\"200\"} 1",
    ] {
        assert!(
            text.lines().any(|l| l == line),
            "missing {line:?} in\n{text}"
        );
    }
    // Whether the long-poll was waiting before the reply is up to the
    // scheduler, so only the histogram's presence is certain.
    assert!(
        text.lines()
            .any(|l| l.starts_with("askbridge_answer_delivery_seconds_count ")),
        "{text}"
    );
}

#[tokio::test]
async fn http_openapi_document_is_valid_and_is_the_route_table() {
    let daemon = Daemon::start();
    let id = create(&daemon, &one_question()).await;
    let (status, doc) = get(&daemon, "/v1/openapi.json").await;
    assert_eq!(status, 200);
    assert_eq!(doc["openapi"], "3.1.0");
    assert_valid_openapi(&doc);
    let mut broken = doc.clone();
    broken["paths"]["/v1/asks"]["post"]["responses"] = json!("none");
    assert!(
        openapi_problem(&broken).is_some(),
        "the check finds nothing"
    );

    // The router registers routes only with their documentation, so each
    // documented operation is served, and no other method of its path.
    let client = daemon::client();
    let paths = doc["paths"].as_object().expect("paths");
    for (path, operations) in paths {
        for method in ["get", "put", "post", "delete", "patch"] {
            let url = daemon.url(&path.replace("{id}", &id));
            let request =
                reqwest::Method::from_bytes(method.to_uppercase().as_bytes()).expect("method");
            let response = client
                .request(request, url)
                .json(&json!({"text": "red"}))
                .send()
                .await
                .expect("send");
            let status = response.status().as_u16();
            if operations.get(method).is_some() {
                assert!(status != 404 && status != 405, "{method} {path}: {status}");
            } else {
                assert_eq!(status, 405, "{method} {path} is served but not documented");
            }
        }
    }
    // The document refuses what the server refuses.
    let schemas = &doc["components"]["schemas"];
    assert_eq!(
        schemas["QuestionInput"]["properties"]["question"]["minLength"], 1,
        "{}",
        schemas["QuestionInput"]
    );
    assert_eq!(
        schemas["SkipReply"]["properties"]["skip"]["enum"],
        json!([true]),
        "{}",
        schemas["SkipReply"]
    );
    assert_eq!(
        schemas["QuestionInput"]["properties"]["question"]["pattern"], "\\S",
        "a question of only spaces is refused"
    );
    assert_eq!(
        schemas["AnswersReply"]["properties"]["answers"]["minProperties"], 1,
        "{}",
        schemas["AnswersReply"]
    );
    // The web channel (on by default) adds its event stream to the API.
    assert!(paths.contains_key("/v1/events"), "{:?}", paths.keys());
    assert_eq!(
        schemas["NoticeRequest"]["properties"]["text"]["maxLength"], 4000,
        "{}",
        schemas["NoticeRequest"]
    );
    assert_eq!(paths.len(), 9, "{:?}", paths.keys());
}

/// Fails unless `doc` is a valid OpenAPI 3.1 document (see
/// [`openapi_problem`]).
#[track_caller]
fn assert_valid_openapi(doc: &Value) {
    if let Some(problem) = openapi_problem(doc) {
        panic!("{problem}");
    }
}

/// What is wrong with an OpenAPI 3.1 document, if anything: checked
/// against the official meta-schema (`tests/openapi/`), which covers the
/// document's structure, and each of its schemas compiled as JSON Schema
/// 2020-12 (which checks them against that meta-schema).
fn openapi_problem(doc: &Value) -> Option<String> {
    const DOCUMENT: &str = "urn:askbridge:openapi";
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/openapi/openapi-3.1-schema.json"
    );
    let text = std::fs::read_to_string(path).expect("the OpenAPI meta-schema");
    let meta: Value = serde_json::from_str(&text).expect("meta-schema JSON");
    let meta_id = meta["$id"].as_str().expect("$id").to_owned();
    let mut compiler = boon::Compiler::new();
    let mut schemas = boon::Schemas::new();
    compiler.add_resource(&meta_id, meta).expect("add");
    compiler.add_resource(DOCUMENT, doc.clone()).expect("add");
    let index = compiler
        .compile(&meta_id, &mut schemas)
        .expect("the meta-schema compiles");
    if let Err(error) = schemas.validate(doc, index) {
        return Some(format!("not OpenAPI 3.1: {error:#}"));
    }
    let names = doc["components"]["schemas"].as_object()?.keys();
    names
        .filter_map(|name| {
            let location = format!("{DOCUMENT}#/components/schemas/{name}");
            let error = compiler.compile(&location, &mut schemas).err()?;
            Some(format!("schema {name}: {error:#}"))
        })
        .next()
}

#[tokio::test]
async fn http_token_is_required_off_loopback() {
    // Without a token, serve refuses to listen beyond loopback.
    let refused = Daemon::builder().listen("0.0.0.0:0").run_to_exit();
    assert!(!refused.status.success());
    assert!(
        refused
            .stderr
            .contains("refusing to listen on 0.0.0.0:0 without an API token"),
        "{}",
        refused.stderr
    );

    // With one it starts; /v1, /mcp and /metrics need the bearer token.
    let token = "s3cret-token-for-tests";
    let daemon = Daemon::builder().listen("0.0.0.0:0").token(token).start();
    assert!(daemon.addr().ip().is_unspecified(), "{}", daemon.addr());
    let client = daemon::client();
    let missing = call(client.post(daemon.url("/v1/asks")).json(&one_question())).await;
    check_error(missing, 401, "unauthorized", None);
    let response = client
        .get(daemon.url("/v1/asks"))
        .send()
        .await
        .expect("send");
    assert_eq!(response.status().as_u16(), 401);
    assert_eq!(
        response
            .headers()
            .get("www-authenticate")
            .and_then(|v| v.to_str().ok()),
        Some("Bearer")
    );
    let wrong = call(
        client
            .get(daemon.url("/v1/asks"))
            .header(AUTHORIZATION, "Bearer s3cret-token-for-test"),
    )
    .await;
    check_error(wrong, 401, "unauthorized", None);
    check_error(
        call(client.get(daemon.url("/metrics"))).await,
        401,
        "unauthorized",
        None,
    );
    check_error(
        call(client.post(daemon.url("/mcp")).json(&json!({}))).await,
        401,
        "unauthorized",
        None,
    );
    check_error(
        call(client.get(daemon.url("/v1/events"))).await,
        401,
        "unauthorized",
        None,
    );

    let (status, ask) = call(
        client
            .post(daemon.url("/v1/asks"))
            .bearer_auth(token)
            .json(&one_question()),
    )
    .await;
    assert_eq!(status, 201, "{ask}");
    let (status, _) = call(client.get(daemon.url("/v1/asks")).bearer_auth(token)).await;
    assert_eq!(status, 200);

    // The page and the health check stay open.
    let (status, _) = call(client.get(daemon.url("/healthz"))).await;
    assert_eq!(status, 200);
    let page = client.get(daemon.url("/")).send().await.expect("page");
    assert_eq!(page.status().as_u16(), 200);

    assert!(!daemon.stderr().contains(token), "the token was logged");
}

#[test]
fn http_config_errors_name_the_key() {
    let dir = daemon::TempDir::new("config");
    let check = |name: &str, text: &str, expect: &[&str]| {
        let path = dir.path().join(name);
        std::fs::write(&path, text).expect("write config");
        let exited = Daemon::builder()
            .listen_from_config()
            .arg("--config")
            .arg(&path)
            .run_to_exit();
        assert!(!exited.status.success(), "{name}");
        for part in expect {
            assert!(
                exited.stderr.contains(part),
                "{name}: {part:?} not in\n{}",
                exited.stderr
            );
        }
    };
    check(
        "bad-listen.toml",
        "listen = \"x\"\n",
        &["bad-listen.toml: listen: invalid socket address \"x\""],
    );
    check(
        "unknown-key.toml",
        "[web]\nenabeld = true\n",
        &[
            "unknown-key.toml: web.enabeld: unknown field `enabeld`",
            "line 2, column 1",
        ],
    );
    check(
        "wrong-type.toml",
        "[http]\nmax_body_bytes = \"big\"\n",
        &["wrong-type.toml: http.max_body_bytes: invalid type"],
    );
    check(
        "bad-target.toml",
        "default_target = \"pager:1\"\n",
        &["bad-target.toml: default_target: unknown channel \"pager\""],
    );

    let exited = Daemon::builder()
        .arg("--config")
        .arg(dir.path().join("missing.toml"))
        .run_to_exit();
    assert!(
        exited.stderr.contains("cannot read config file"),
        "{}",
        exited.stderr
    );

    let exited = Daemon::builder()
        .listen_from_config()
        .env("ASKBRIDGE_LISTEN", "nowhere")
        .run_to_exit();
    assert!(
        exited
            .stderr
            .contains("ASKBRIDGE_LISTEN: invalid socket address \"nowhere\""),
        "{}",
        exited.stderr
    );
    let exited = Daemon::builder()
        .env("ASKBRIDGE_DEFAULT_TARGET", "pager:1")
        .run_to_exit();
    assert!(
        exited
            .stderr
            .contains("ASKBRIDGE_DEFAULT_TARGET: unknown channel \"pager\""),
        "{}",
        exited.stderr
    );
}

#[tokio::test]
async fn http_pending_ask_survives_kill_9() {
    let mut daemon = Daemon::start();
    let id = create(&daemon, &release_ask()).await;
    let (status, partial) = post(
        &daemon,
        &format!("/v1/asks/{id}/reply"),
        &json!({"text": "Q1: 2"}),
    )
    .await;
    assert_eq!(status, 200, "{partial}");

    daemon.kill();
    daemon.restart();

    let (status, ask) = get(&daemon, &format!("/v1/asks/{id}")).await;
    assert_eq!(status, 200, "{ask}");
    assert_eq!(ask["status"], "pending", "{ask}");
    assert_eq!(
        ask["answered"],
        json!(["deploy"]),
        "partial answers survive: {ask}"
    );

    let ((reply_status, reply), (status, outcome)) =
        reply_while_waiting(&daemon, &id, json!({"text": "on-call"})).await;
    assert_eq!(reply_status, 200, "{reply}");
    assert_eq!(status, 200, "{outcome}");
    assert_eq!(outcome["status"], "answered", "{outcome}");
    assert_eq!(
        outcome["answers"],
        json!({"deploy": ["Production"], "notify": ["On-call"]})
    );
}

#[tokio::test]
async fn http_sigterm_stops_gracefully_and_keeps_asks() {
    let mut daemon = Daemon::start();
    let id = create(&daemon, &one_question()).await;
    // A long-poll in flight must not hold the daemon up, nor cancel the ask.
    let waiting = tokio::spawn({
        let url = daemon.url(&format!("/v1/asks/{id}?wait=600"));
        async move {
            let response = daemon::client().get(url).send().await?;
            let status = response.status().as_u16();
            response.json::<Value>().await.map(|ask| (status, ask))
        }
    });
    let (status, _) = get(&daemon, "/healthz").await;
    assert_eq!(status, 200);
    let exit = daemon.terminate();
    assert!(exit.success(), "exit status {exit}");
    // Whether the long-poll reached the daemon before the signal is up to
    // the scheduler; if it did, it got the ask as it was.
    let finished = tokio::time::timeout(Duration::from_secs(30), waiting)
        .await
        .expect("the long-poll ended with the daemon")
        .expect("the task ran");
    if let Ok((status, ask)) = finished {
        assert_eq!(status, 200, "{ask}");
        assert_eq!(ask["status"], "pending", "{ask}");
    }
    daemon.restart();
    let (_, ask) = get(&daemon, &format!("/v1/asks/{id}")).await;
    assert_eq!(
        ask["status"], "pending",
        "not cancelled by the shutdown: {ask}"
    );
}

#[tokio::test]
async fn the_host_key_goes_only_to_the_request_that_created_the_ask() {
    let daemon = Daemon::start();
    let client = daemon::client();
    let send = || {
        client
            .post(daemon.url("/v1/asks"))
            .header("Idempotency-Key", "approve-7")
            .json(&one_question())
    };
    let (status, first) = call(send()).await;
    assert_eq!(status, 201, "{first}");
    let key = first["hostKey"].as_str().expect("the creator's host key");
    // Anyone who saw the key repeats the create: the ask, never its key.
    let (status, again) = call(send()).await;
    assert_eq!(status, 200, "{again}");
    assert_eq!(again["id"], first["id"]);
    assert!(
        again.get("hostKey").is_none(),
        "the host key leaked: {again}"
    );
    assert!(!key.is_empty());
}

/// `GET path` with `Host` and `Origin` as given.
async fn from_site(daemon: &Daemon, path: &str, host: &str, origin: Option<&str>) -> (u16, Value) {
    let mut request = daemon::client()
        .get(daemon.url(path))
        .header(reqwest::header::HOST, host);
    if let Some(origin) = origin {
        request = request.header(reqwest::header::ORIGIN, origin);
    }
    call(request).await
}

#[tokio::test]
async fn a_page_from_another_site_reads_and_answers_nothing() {
    let daemon = Daemon::start();
    let id = create(&daemon, &one_question()).await;
    let own = format!("127.0.0.1:{}", daemon.addr().port());
    // DNS rebinding: the attacker's name, resolved to 127.0.0.1.
    let rebound = format!("rebind.attacker.example:{}", daemon.addr().port());
    for path in [
        "/v1/asks",
        &format!("/v1/asks/{id}"),
        "/",
        "/v1/openapi.json",
    ] {
        let (status, body) = from_site(&daemon, path, &rebound, None).await;
        assert_eq!(
            (status, body["error"]["code"].as_str()),
            (403, Some("forbidden")),
            "{path}: {body}"
        );
    }
    let reply = daemon::client()
        .post(daemon.url(&format!("/v1/asks/{id}/reply")))
        .header(reqwest::header::HOST, &rebound)
        .json(&json!({"text": "Red"}));
    assert_eq!(call(reply).await.0, 403);
    // Cross-site: the daemon's own name, another site's page.
    let reply = daemon::client()
        .post(daemon.url(&format!("/v1/asks/{id}/reply")))
        .header(reqwest::header::ORIGIN, "https://attacker.example")
        .json(&json!({"text": "Red"}));
    check_error(call(reply).await, 403, "forbidden", None);
    assert_eq!(
        get(&daemon, &format!("/v1/asks/{id}")).await.1["status"],
        "pending"
    );
    // The daemon's own page and names; health from anywhere.
    let (status, _) = from_site(&daemon, "/v1/asks", &own, Some(&format!("http://{own}"))).await;
    assert_eq!(status, 200);
    let localhost = format!("localhost:{}", daemon.addr().port());
    assert_eq!(
        from_site(&daemon, "/v1/asks", &localhost, None).await.0,
        200
    );
    assert_eq!(from_site(&daemon, "/healthz", &rebound, None).await.0, 200);
}

#[tokio::test]
async fn a_long_polls_hold_is_true_or_false() {
    let daemon = Daemon::start();
    let id = create(&daemon, &one_question()).await;
    let bad = get(&daemon, &format!("/v1/asks/{id}?wait=1&hold=maybe")).await;
    check_error(bad, 400, "invalid_query", Some("hold"));
    let (status, ask) = get(&daemon, &format!("/v1/asks/{id}?hold=false")).await;
    assert_eq!(
        (status, ask["status"].as_str()),
        (200, Some("pending")),
        "{ask}"
    );
}

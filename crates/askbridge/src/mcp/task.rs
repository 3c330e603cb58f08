//! `ask_user` as an MCP task (the `io.modelcontextprotocol/tasks`
//! extension), for clients that declare it: the call returns at once with a
//! task whose id is the ask id, and
//!
//! - `tasks/get` reads the ask: `working` while it is open (or
//!   `input_required` with the host's form, when the client shows forms, or
//!   a link to the ask's page, when it opens links),
//!   `completed` with the same result a blocking call gives once it has
//!   ended, `cancelled` when it was cancelled;
//! - `tasks/update` takes the person's answer from that form (`via: "host"`),
//!   the first answer winning as everywhere (or what they did with the link);
//! - `tasks/cancel` cancels the ask.
//!
//! A task *is* its ask: nothing is kept in memory but which tasks ask for
//! the host's form otherwise than configured, so tasks survive a restart
//! of the daemon or of `askbridge mcp`, and any instance answers for any
//! task.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Instant;

use rmcp::model::{
    CallToolResponse, CreateTaskResult, DetailedTask, GetTaskResult, JsonObject, Task, TaskPayload,
    TaskStatus,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer};
use serde_json::Value;

use super::McpServer;
use super::backend::{BackendError, Snapshot, Status};
use super::call::{backend_error, invalid_ask, outcome_result};
use super::expiring::{ASK_LIFETIME, Expiring};
use super::host::{ClientDialog, HostReply, input_requests, reply_in};
use crate::config::Elicitation;
use crate::error_chain as chain;

/// How often clients are asked to poll `tasks/get`, in milliseconds.
pub const POLL_INTERVAL_MS: u64 = 1_000;

/// How many tasks' choices are cached at most; past that, the oldest go
/// (in process they are read back from the ask; a daemon's forwarder
/// falls back to the configuration).
const FORM_CHOICES_AT_MOST: usize = 10_000;

/// Whether each task seen asks for the host's form (or link), by task
/// id: what `[mcp] elicitation` says, unless the ask chose its own
/// `elicitation` or the person dismissed the form or opened the link (the
/// ask stays open on its channel). Those exceptions are also kept with the
/// ask ([`Backend::keep_form_choice`](super::backend::Backend::keep_form_choice)),
/// so they hold after a restart; this is the cache, forgotten once the
/// task is seen ended, or after the longest an ask can stay open.
#[derive(Debug, Clone)]
pub(super) struct FormChoices(Arc<Mutex<Expiring<bool>>>);

impl Default for FormChoices {
    fn default() -> FormChoices {
        FormChoices(Arc::new(Mutex::new(Expiring::new(
            ASK_LIFETIME,
            FORM_CHOICES_AT_MOST,
        ))))
    }
}

impl FormChoices {
    fn lock(&self) -> MutexGuard<'_, Expiring<bool>> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn set(&self, id: &str, wanted: bool) {
        let dropped = self.lock().put(id, wanted, Instant::now());
        if dropped > 0 {
            tracing::warn!(task_id = %id, dropped, "too many open tasks: forgot the form choices of the oldest");
        }
    }

    fn get(&self, id: &str) -> Option<bool> {
        self.lock().get(id, Instant::now()).copied()
    }

    fn forget(&self, id: &str) {
        self.lock().remove(id);
    }
}

impl McpServer {
    /// Whether tasks ask for the host's form unless told otherwise.
    fn forms_configured(&self) -> bool {
        self.elicitation != Elicitation::Off
    }

    /// Records whether task `id` asks for the host's form; kept with the
    /// ask when that is not what the configuration says (`always`: even
    /// then, as it may replace an earlier exception).
    async fn choose_form(&self, id: &str, wanted: bool, always: bool) -> Result<(), BackendError> {
        self.form_choices.set(id, wanted);
        if always || wanted != self.forms_configured() {
            self.backend.keep_form_choice(id, wanted).await?;
        }
        Ok(())
    }

    /// Whether task `id` asks for the host's form: its own choice, kept
    /// with the ask, or the configuration — and only while an answer there
    /// can be recorded (a restarted forwarder cannot: it lost the ask's
    /// host key).
    async fn wants_form(&self, id: &str) -> Result<bool, BackendError> {
        if !self.backend.answers_as_host(id) {
            return Ok(false);
        }
        if let Some(wanted) = self.form_choices.get(id) {
            return Ok(wanted);
        }
        let wanted = match self.backend.form_choice(id).await? {
            Some(kept) => kept,
            None => self.forms_configured(),
        };
        self.form_choices.set(id, wanted);
        Ok(wanted)
    }

    /// `ask_user` as a task: creates the ask and returns its task. An
    /// invalid ask, a failing backend or an ask that ended at once (it could
    /// not be delivered) is the ordinary tool result instead.
    /// `can`: whether the client can be asked anything in its host.
    pub(super) async fn ask_user_task(&self, arguments: JsonObject, can: bool) -> CallToolResponse {
        let (ask, in_host) = match self.read_ask(arguments, can) {
            Ok(read) => read,
            Err(problems) => return invalid_ask(&problems).into(),
        };
        let created = match self.backend.create(&ask).await {
            Ok(created) => created,
            Err(error) => return backend_error(&self.backend, &error, None).into(),
        };
        tracing::info!(ask_id = %created.id, "ask created over MCP as a task");
        if let Err(error) = self.choose_form(&created.id, in_host, false).await {
            tracing::warn!(ask_id = %created.id, error = %chain(&error), "cannot keep the task's own elicitation");
        }
        match created.snapshot {
            Snapshot::Ended(outcome) => outcome_result(outcome).into(),
            Snapshot::Pending(pending) => {
                let created_at = string(&pending, "createdAt");
                let task = Task::new(&created.id, TaskStatus::Working, &created_at, &created_at)
                    .with_status_message(waiting_message(&pending))
                    .with_poll_interval_ms(POLL_INTERVAL_MS);
                CallToolResponse::Task(CreateTaskResult::new(task))
            }
        }
    }

    /// `tasks/get`: the ask as a task, asking for what `dialog` can show
    /// in the host while it is open.
    pub(super) async fn task_of(
        &self,
        id: &str,
        dialog: &ClientDialog,
    ) -> Result<GetTaskResult, ErrorData> {
        let status = self
            .backend
            .status(id)
            .await
            .map_err(|error| task_error(&error, id))?;
        let asks = self
            .wants_form(id)
            .await
            .map_err(|error| task_error(&error, id))?;
        let detailed = detailed(id, status, asks.then_some(dialog));
        if detailed.status().is_terminal() {
            self.form_choices.forget(id);
        }
        Ok(GetTaskResult::new(detailed))
    }

    /// `tasks/update`: the person's reply in the host's form, or to the
    /// link ([`reply_in`]). A reply to an ask that has already ended
    /// (answered elsewhere first) is ignored.
    pub(super) async fn task_form_reply(
        &self,
        id: &str,
        responses: BTreeMap<String, Value>,
        context: &RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let status = self
            .backend
            .status(id)
            .await
            .map_err(|error| task_error(&error, id))?;
        let reply = reply_in(&status.ask, responses)
            .map_err(|message| ErrorData::invalid_params(message, None))?;
        let Some(reply) = reply else {
            return Ok(());
        };
        if matches!(status.snapshot, Snapshot::Ended(_)) {
            tracing::info!(ask_id = %id, "the host's answer came after the ask ended");
            return Ok(());
        }
        if matches!(reply, HostReply::Dismissed | HostReply::Opened) {
            self.choose_form(id, false, true)
                .await
                .map_err(|error| task_error(&error, id))?;
        }
        self.take_host_reply(id, reply, client_name(context))
            .await
            .map_err(|error| task_error(&error, id))
    }

    /// `tasks/cancel`: cancels the ask (an ended one stays as it is).
    pub(super) async fn task_cancel(&self, id: &str) -> Result<(), ErrorData> {
        self.backend
            .cancel(id)
            .await
            .map_err(|error| task_error(&error, id))?;
        tracing::info!(ask_id = %id, "task cancelled; ask cancelled");
        Ok(())
    }
}

/// The task of ask `id` as it is now, asking for what `dialog` can show in
/// the host while the ask is open (`None`: nothing).
fn detailed(id: &str, status: Status, dialog: Option<&ClientDialog>) -> DetailedTask {
    let Status {
        snapshot,
        ask,
        created_at,
    } = status;
    match snapshot {
        Snapshot::Pending(pending) => {
            let task = Task::new(id, TaskStatus::Working, &created_at, &created_at)
                .with_status_message(waiting_message(&pending))
                .with_poll_interval_ms(POLL_INTERVAL_MS);
            let input = dialog.and_then(|dialog| {
                input_requests(&ask, id, &pending, dialog.forms, dialog.page.as_deref())
            });
            let payload = match input {
                Some(input_requests) => TaskPayload::InputRequired { input_requests },
                None => TaskPayload::Working,
            };
            DetailedTask::new(task, payload)
        }
        Snapshot::Ended(outcome) => {
            let ended_at = string(&outcome, "answeredAt");
            let task = Task::new(id, TaskStatus::Completed, &created_at, &ended_at)
                .with_status_message(string(&outcome, "text"));
            let payload = if outcome.get("reason").and_then(Value::as_str) == Some("cancelled") {
                TaskPayload::Cancelled
            } else {
                TaskPayload::Completed {
                    result: result_object(outcome),
                }
            };
            DetailedTask::new(task, payload)
        }
    }
}

/// The tool result of an ended ask, as a JSON object.
fn result_object(outcome: Value) -> JsonObject {
    match serde_json::to_value(outcome_result(outcome)) {
        Ok(Value::Object(result)) => result,
        _ => JsonObject::new(),
    }
}

/// The status message of an open ask.
fn waiting_message(pending: &Value) -> String {
    let id = string(pending, "id");
    match pending.get("expiresAt").and_then(Value::as_str) {
        Some(until) => format!("Waiting for the user's answer (ask id {id}, open until {until})."),
        None => format!("Waiting for the user's answer (ask id {id})."),
    }
}

fn string(json: &Value, key: &str) -> String {
    json.get(key)
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned()
}

/// The client's name (`claude-code`): from the request's own metadata, else
/// from `initialize`.
pub(super) fn client_name(context: &RequestContext<RoleServer>) -> Option<String> {
    context
        .meta
        .client_info()
        .or_else(|| {
            context
                .peer
                .peer_info()
                .map(|info| info.client_info.clone())
        })
        .map(|info| info.name)
        .filter(|name| !name.trim().is_empty())
}

/// A backend failure as the protocol error of a `tasks/*` request: an
/// unknown id is invalid params, the rest an internal error naming why.
fn task_error(error: &BackendError, id: &str) -> ErrorData {
    match error {
        BackendError::NotFound(_) => ErrorData::invalid_params(
            format!("unknown task: {id} (a task id is the ask id ask_user returned)"),
            None,
        ),
        other => ErrorData::internal_error(format!("task {id}: {}", chain(other)), None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mcp::host::{FORM_KEY, LINK_KEY};
    use askbridge_core::normalize::normalize_json;
    use serde_json::json;

    fn status(snapshot: Snapshot) -> Status {
        let ask = normalize_json(&json!({"questions": [{
            "question": "Where to?", "header": "Deploy",
            "options": [{"label": "Staging"}, {"label": "Production"}]
        }]}))
        .expect("a valid ask")
        .ask;
        Status {
            snapshot,
            ask,
            created_at: "2026-12-04T10:00:00.000Z".to_owned(),
        }
    }

    fn wire(task: DetailedTask) -> Value {
        serde_json::to_value(task).expect("serialisable")
    }

    #[test]
    fn the_form_choices_of_so_many_tasks_are_cached_at_most() {
        let choices = FormChoices::default();
        for n in 0..=FORM_CHOICES_AT_MOST {
            choices.set(&format!("ask_{n}"), true);
        }
        assert_eq!(choices.lock().len(), FORM_CHOICES_AT_MOST);
        assert_eq!(choices.get("ask_0"), None);
        assert_eq!(choices.get("ask_1"), Some(true));
        choices.forget("ask_1");
        assert_eq!(choices.get("ask_1"), None);
    }

    #[test]
    fn an_open_ask_is_a_working_task_or_asks_for_the_hosts_form() {
        let pending = json!({"id": "ask_1", "status": "pending", "to": "telegram:1",
                             "createdAt": "2026-12-04T10:00:00.000Z",
                             "expiresAt": "2026-12-04T10:15:00.000Z"});
        let working = wire(detailed(
            "ask_1",
            status(Snapshot::Pending(pending.clone())),
            None,
        ));
        assert_eq!(working["status"], json!("working"), "{working}");
        assert_eq!(working["taskId"], json!("ask_1"));
        assert_eq!(working["createdAt"], json!("2026-12-04T10:00:00.000Z"));
        assert_eq!(working["pollIntervalMs"], json!(POLL_INTERVAL_MS));
        assert_eq!(
            working["statusMessage"],
            json!(
                "Waiting for the user's answer (ask id ask_1, open until 2026-12-04T10:15:00.000Z)."
            )
        );
        assert!(working.get("inputRequests").is_none(), "{working}");

        let forms = ClientDialog {
            forms: true,
            page: Some("http://127.0.0.1:8790".to_owned()),
        };
        let input = wire(detailed(
            "ask_1",
            status(Snapshot::Pending(pending.clone())),
            Some(&forms),
        ));
        assert_eq!(input["status"], json!("input_required"), "{input}");
        let form = &input["inputRequests"][FORM_KEY];
        assert_eq!(form["method"], json!("elicitation/create"), "{input}");
        assert_eq!(form["params"]["message"], json!("Where to?"), "{input}");
        assert_eq!(
            form["params"]["requestedSchema"]["properties"]["deploy"]["title"],
            json!("Deploy"),
            "{input}"
        );

        let links = ClientDialog {
            forms: false,
            page: Some("http://127.0.0.1:8790".to_owned()),
        };
        let input = wire(detailed(
            "ask_1",
            status(Snapshot::Pending(pending.clone())),
            Some(&links),
        ));
        let link = &input["inputRequests"][LINK_KEY]["params"];
        assert_eq!(link["mode"], json!("url"), "{input}");
        assert_eq!(
            link["url"],
            json!("http://127.0.0.1:8790/#ask=ask_1"),
            "{input}"
        );
        assert_eq!(link["elicitationId"], json!("ask_1"), "{input}");

        // Nothing to show: no page, or a page that may not answer the ask.
        let mut for_one = pending.clone();
        for_one["to"] = json!("telegram:1@42");
        for (pending, dialog) in [
            (pending.clone(), ClientDialog::default()),
            (for_one, links.clone()),
        ] {
            let task = wire(detailed(
                "ask_1",
                status(Snapshot::Pending(pending)),
                Some(&dialog),
            ));
            assert_eq!(task["status"], json!("working"), "{task}");
        }
    }

    #[test]
    fn an_ended_ask_is_a_completed_task_with_the_tools_result() {
        let outcome = json!({"id": "ask_1", "status": "answered", "reason": null,
                             "answers": {"deploy": ["Production"]},
                             "answeredAt": "2026-12-04T10:01:00.000Z",
                             "text": "Deploy: Production", "continuation": "Go on."});
        let task = wire(detailed(
            "ask_1",
            status(Snapshot::Ended(outcome.clone())),
            Some(&ClientDialog {
                forms: true,
                page: None,
            }),
        ));
        assert_eq!(task["status"], json!("completed"), "{task}");
        assert_eq!(task["lastUpdatedAt"], json!("2026-12-04T10:01:00.000Z"));
        assert_eq!(task["result"]["structuredContent"], outcome, "{task}");
        assert_eq!(task["result"]["isError"], json!(false), "{task}");
        assert_eq!(task["result"]["content"][0]["text"], json!("Go on."));
    }

    #[test]
    fn a_cancelled_ask_is_a_cancelled_task() {
        let outcome = json!({"id": "ask_1", "status": "no_answer", "reason": "cancelled",
                             "answeredAt": "2026-12-04T10:01:00.000Z",
                             "text": "The ask was cancelled."});
        let task = wire(detailed("ask_1", status(Snapshot::Ended(outcome)), None));
        assert_eq!(task["status"], json!("cancelled"), "{task}");
        assert_eq!(task["statusMessage"], json!("The ask was cancelled."));
        assert!(task.get("result").is_none(), "{task}");
    }
}

//! What the tools do: `ask_user` (normalise, create, wait with progress,
//! cancel on request) and `get_answer` (wait a while, report either way).
//!
//! The functions here take the progress sink and the cancellation signal as
//! arguments, so tests call them directly with a [`Bridge`](crate::bridge::Bridge)
//! and no transport. Tool failures (an invalid ask, an unreachable daemon)
//! are tool results with `isError: true` whose text says what went wrong;
//! only an unknown tool name is a protocol error. A daemon that restarts
//! while a tool waits is tried again for about 13 seconds.

use std::collections::HashSet;
use std::future::Future;
use std::pin::pin;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use askbridge_core::model::{Ask, Place, Target};
use askbridge_core::normalize::{Problem, normalize_json};
use rmcp::model::{
    CallToolResult, ContentBlock, JsonObject, ProgressNotificationParam, ProgressToken,
};
use rmcp::{ErrorData, Peer, RoleServer};
use serde_json::Value;
use tokio::time::{Instant, MissedTickBehavior};

use super::McpServer;
use super::backend::{Backend, BackendError, Snapshot};
use super::host::{HostDialog, HostReply, Pending};
use super::tools;
use crate::config::Elicitation;
use crate::error_chain as chain;

/// The `ask_user` argument that overrides `[mcp] elicitation` for one ask.
pub(super) const ELICITATION: &str = "elicitation";

/// How long past an ask's deadline `ask_user` keeps waiting for the bridge
/// to end it before it reports the timeout outcome itself.
const DEADLINE_GRACE: Duration = Duration::from_secs(5);

/// A wait that comes back sooner than this with nothing new is followed by
/// a pause of this length before the next one, so a backend that does not
/// block cannot make the loop spin.
const MIN_POLL: Duration = Duration::from_millis(100);

/// Transient failures in a row (the daemon restarting) tolerated while
/// waiting, with pauses doubling from [`RETRY_PAUSE`] up to
/// [`MAX_RETRY_PAUSE`]: about 13 seconds in all.
const RETRIES: u32 = 6;
/// The first pause after a transient failure.
const RETRY_PAUSE: Duration = Duration::from_millis(250);
/// The longest pause between attempts.
const MAX_RETRY_PAUSE: Duration = Duration::from_secs(5);

/// How long cancelling the asks of a closed connection may take.
const CANCEL_ON_CLOSE: Duration = Duration::from_secs(5);

/// One progress report while a tool waits.
#[derive(Debug, Clone, PartialEq)]
pub struct ProgressUpdate {
    /// The ask being waited on.
    pub ask_id: String,
    /// Seconds waited so far in this call; increases with every report.
    pub progress: f64,
    /// The ask's timeout in seconds, when known.
    pub total: Option<f64>,
    /// A sentence for the client, naming the ask id.
    pub message: String,
}

/// Where progress reports go: the MCP peer, a test's channel, or nowhere.
pub trait ProgressSink: Send {
    /// Reports one update; failures to deliver it are ignored.
    fn report(&mut self, update: ProgressUpdate) -> impl Future<Output = ()> + Send;
}

impl ProgressSink for () {
    async fn report(&mut self, _update: ProgressUpdate) {}
}

impl<S: ProgressSink> ProgressSink for Option<S> {
    async fn report(&mut self, update: ProgressUpdate) {
        if let Some(sink) = self {
            sink.report(update).await;
        }
    }
}

impl ProgressSink for tokio::sync::mpsc::UnboundedSender<ProgressUpdate> {
    async fn report(&mut self, update: ProgressUpdate) {
        let _ = self.send(update);
    }
}

/// `notifications/progress` to the MCP client, for the request that
/// carried this progress token.
#[derive(Debug, Clone)]
pub struct PeerProgress {
    peer: Peer<RoleServer>,
    token: ProgressToken,
}

impl PeerProgress {
    /// Progress for the request that sent `token`.
    pub fn new(peer: Peer<RoleServer>, token: ProgressToken) -> PeerProgress {
        PeerProgress { peer, token }
    }
}

impl ProgressSink for PeerProgress {
    async fn report(&mut self, update: ProgressUpdate) {
        let mut param = ProgressNotificationParam::new(self.token.clone(), update.progress)
            .with_message(update.message);
        if let Some(total) = update.total {
            param = param.with_total(total);
        }
        if let Err(error) = self.peer.notify_progress(param).await {
            tracing::debug!(ask_id = %update.ask_id, %error, "progress notification not sent");
        }
    }
}

/// The ids of asks whose `ask_user` call is still waiting, so that the asks
/// of a connection that closes can be cancelled.
#[derive(Debug, Clone, Default)]
pub(super) struct Inflight(Arc<Mutex<HashSet<String>>>);

impl Inflight {
    fn track(&self, id: &str) -> InflightGuard {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(id.to_owned());
        InflightGuard {
            set: self.clone(),
            id: id.to_owned(),
        }
    }

    fn take_all(&self) -> Vec<String> {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .drain()
            .collect()
    }
}

/// Removes its id from the in-flight set when the call ends.
struct InflightGuard {
    set: Inflight,
    id: String,
}

impl Drop for InflightGuard {
    fn drop(&mut self) {
        self.set
            .0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(&self.id);
    }
}

/// An ask shown in the host's dialog: the request, and the task that
/// records the person's reply there (and says whether they opened the
/// ask's page from a link).
struct ShownInHost {
    pending: Pending,
    relay: tokio::task::JoinHandle<bool>,
}

impl ShownInHost {
    /// The ask has ended (or the call was cancelled): closes the dialog if
    /// the person has not answered in it, and tells the host that the page
    /// of a link that was, or may have been, opened meanwhile is done with.
    async fn close(self) {
        let opened = if self.relay.is_finished() {
            matches!(self.relay.await, Ok(true))
        } else {
            self.relay.abort();
            self.pending
                .close("the question was answered elsewhere")
                .await;
            true
        };
        if opened {
            self.pending.complete().await;
        }
    }
}

/// What a call that ends before its ask (the client hung up) does to
/// the ask.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Hangup {
    /// The client cancelled the call (`notifications/cancelled`, its
    /// session closed): the ask is cancelled too.
    CancelsTheAsk,
    /// The call's stream closed (2026-07-28 over HTTP, where a client's
    /// timeout, a network blip and a cancel look the same): the ask stays
    /// open until its deadline, and `get_answer` collects its outcome.
    LeavesTheAskOpen,
}

/// A newly created ask that is open.
pub(super) struct Opened {
    /// Its id.
    pub id: String,
    /// Its pending status, as the backend reports it.
    pub pending: Value,
    /// Time left until its deadline, as of creation.
    pub remaining: Duration,
}

/// An open ask that a call waits on.
pub(super) struct Waiting<'a> {
    /// Its id.
    pub id: &'a str,
    /// What was asked.
    pub ask: &'a Ask,
    /// Time left until its deadline.
    pub remaining: Duration,
    /// The client's dialog to show it in too, with its pending status.
    pub host: Option<(&'a HostDialog, &'a Value)>,
}

/// How a wait ended.
enum Followed {
    /// The ask ended: its outcome.
    Ended(Value),
    /// The wait ran out; the ask is still pending.
    OutOfTime(Value),
    /// The client cancelled the call.
    Cancelled,
    /// The backend failed.
    Failed(BackendError),
}

impl McpServer {
    /// Runs the tool `name`. An unknown name is the only protocol error.
    pub async fn call_tool_with(
        &self,
        name: &str,
        arguments: JsonObject,
        host: Option<HostDialog>,
        progress: impl ProgressSink,
        cancelled: impl Future<Output = ()> + Send,
        hangup: Hangup,
    ) -> Result<CallToolResult, ErrorData> {
        match name {
            tools::ASK_USER => Ok(self
                .ask_user_in(arguments, host, progress, cancelled, hangup)
                .await),
            tools::GET_ANSWER => Ok(self.get_answer(arguments, progress, cancelled).await),
            other => Err(ErrorData::invalid_params(
                format!(
                    "unknown tool {other:?}; this server has {} and {}",
                    tools::ASK_USER,
                    tools::GET_ANSWER
                ),
                None,
            )),
        }
    }

    /// `ask_user` for a client without a dialog of its own.
    pub async fn ask_user(
        &self,
        arguments: JsonObject,
        progress: impl ProgressSink,
        cancelled: impl Future<Output = ()> + Send,
    ) -> CallToolResult {
        self.ask_user_in(arguments, None, progress, cancelled, Hangup::CancelsTheAsk)
            .await
    }

    /// `ask_user`: normalises the ask, creates it, shows it in the client's
    /// own dialog too (`host`, as configured), reports progress while it
    /// waits for the outcome, and stops waiting when `cancelled` resolves
    /// first, cancelling the ask or not as `hangup` says. Whatever ends the
    /// ask closes the host's dialog.
    pub async fn ask_user_in(
        &self,
        arguments: JsonObject,
        host: Option<HostDialog>,
        progress: impl ProgressSink,
        cancelled: impl Future<Output = ()> + Send,
        hangup: Hangup,
    ) -> CallToolResult {
        let (ask, host) = match self.read_ask(arguments, host.is_some()) {
            Ok((ask, in_host)) => (ask, host.filter(|_| in_host)),
            Err(problems) => return invalid_ask(&problems),
        };
        let (id, pending, remaining) = match self.create_ask(&ask).await {
            Ok(Opened {
                id,
                pending,
                remaining,
            }) => (id, pending, remaining),
            Err(result) => return result,
        };
        let waiting = Waiting {
            id: &id,
            ask: &ask,
            remaining,
            host: host.as_ref().map(|host| (host, &pending)),
        };
        self.wait_for_answer(waiting, progress, cancelled, hangup)
            .await
    }

    /// Creates `ask`: the open ask, or the tool result that ends the call
    /// (the backend failed, or the ask ended at once: undeliverable).
    pub(super) async fn create_ask(&self, ask: &Ask) -> Result<Opened, CallToolResult> {
        let created = match self.backend.create(ask).await {
            Ok(created) => created,
            Err(error) => return Err(backend_error(&self.backend, &error, None)),
        };
        tracing::info!(ask_id = %created.id, "ask created over MCP");
        match created.snapshot {
            Snapshot::Ended(outcome) => Err(outcome_result(outcome)),
            Snapshot::Pending(pending) => Ok(Opened {
                id: created.id,
                pending,
                remaining: created.remaining,
            }),
        }
    }

    /// Waits for an open ask's outcome as `ask_user` does: reports
    /// progress (the first report names the ask and its timeout), shows
    /// the ask in the host's dialog when `waiting.host` says so, and
    /// stops when `cancelled` resolves first, doing what `hangup` says.
    pub(super) async fn wait_for_answer(
        &self,
        waiting: Waiting<'_>,
        mut progress: impl ProgressSink,
        cancelled: impl Future<Output = ()> + Send,
        hangup: Hangup,
    ) -> CallToolResult {
        let Waiting {
            id,
            ask,
            remaining,
            host,
        } = waiting;
        let _tracked = (hangup == Hangup::CancelsTheAsk).then(|| self.inflight.track(id));
        let total = f64::from(ask.timeout_seconds);
        progress
            .report(ProgressUpdate {
                ask_id: id.to_owned(),
                progress: 0.0,
                total: Some(total),
                message: format!(
                    "Asked the user (ask id {id}); waiting up to {} s for the answer.",
                    ask.timeout_seconds
                ),
            })
            .await;
        let dialog = match host {
            Some((host, pending)) => self.show_in_host(host, ask, id, pending).await,
            None => None,
        };
        let started = Instant::now();
        let limit = started + remaining + DEADLINE_GRACE;
        let followed = self
            .follow(id, started, limit, Some(total), &mut progress, cancelled)
            .await;
        if let Some(dialog) = dialog {
            dialog.close().await;
        }
        match followed {
            Followed::Ended(outcome) => {
                tracing::info!(ask_id = %id, "ask_user returns the outcome");
                outcome_result(outcome)
            }
            Followed::OutOfTime(_) => match self.backend.expire(id, ask).await {
                Ok(outcome) => outcome_result(outcome),
                Err(error) => backend_error(&self.backend, &error, Some(id)),
            },
            Followed::Cancelled if hangup == Hangup::LeavesTheAskOpen => {
                tracing::info!(
                    ask_id = %id,
                    "the MCP call's stream closed; the ask stays open for get_answer"
                );
                match self.backend.wait(id, Duration::ZERO).await {
                    Ok(snapshot) => snapshot_result(snapshot),
                    Err(error) => backend_error(&self.backend, &error, Some(id)),
                }
            }
            Followed::Cancelled => {
                tracing::info!(ask_id = %id, "MCP call cancelled; cancelling the ask");
                match self.backend.cancel(id).await {
                    Ok(snapshot) => snapshot_result(snapshot),
                    Err(error) => backend_error(&self.backend, &error, Some(id)),
                }
            }
            Followed::Failed(error) => backend_error(&self.backend, &error, Some(id)),
        }
    }

    /// The ask in a call's `arguments`, normalised (fixes are logged), and
    /// whether it is shown in the host's dialog, for a client that `can`
    /// show it: the ask's own `elicitation` (`also`, `only`, `off`), else
    /// the configured one; or every problem with them. With `only` the
    /// host's dialog stands in for a chat: the ask goes to the web page,
    /// which posts nothing but keeps it answerable if the dialog fails.
    pub(super) fn read_ask(
        &self,
        mut arguments: JsonObject,
        can: bool,
    ) -> Result<(Ask, bool), Vec<Problem>> {
        let elicitation = match arguments.remove(ELICITATION) {
            None | Some(Value::Null) => Ok(self.elicitation),
            Some(value) => value.as_str().and_then(Elicitation::parse).ok_or_else(|| {
                Problem::new(
                    ELICITATION,
                    format!("expected \"also\", \"only\" or \"off\", got {value}"),
                )
            }),
        };
        let (normalized, elicitation) =
            match (normalize_json(&Value::Object(arguments)), elicitation) {
                (Ok(normalized), Ok(elicitation)) => (normalized, elicitation),
                (Err(mut problems), Err(problem)) => {
                    problems.push(problem);
                    return Err(problems);
                }
                (Err(problems), Ok(_)) => return Err(problems),
                (Ok(_), Err(problem)) => return Err(vec![problem]),
            };
        for warning in &normalized.warnings {
            tracing::info!(path = %warning.path, "ask fixed: {}", warning.message);
        }
        let mut ask = normalized.ask;
        let in_host = can && elicitation != Elicitation::Off;
        if in_host && elicitation == Elicitation::Only {
            ask.target = Some(Target {
                place: Place::Web { session: None },
                user: None,
            });
            ask.also.clear();
        }
        Ok((ask, in_host))
    }

    /// Shows ask `id` in the host's dialog; the person's reply there is
    /// recorded like any channel's (`via: "host"`), and a dismissed dialog
    /// leaves the ask open.
    async fn show_in_host(
        &self,
        host: &HostDialog,
        ask: &Ask,
        id: &str,
        snapshot: &Value,
    ) -> Option<ShownInHost> {
        let (pending, reply) = host.show(ask, id, snapshot).await?;
        let server = self.clone();
        let name = host.name.clone();
        let id = id.to_owned();
        let relay = tokio::spawn(async move {
            let reply = reply.await;
            let opened = reply == HostReply::Opened;
            if let Err(error) = server.take_host_reply(&id, reply, name).await {
                tracing::warn!(ask_id = %id, error = %chain(&error), "cannot record the host's answer");
            }
            opened
        });
        Some(ShownInHost { pending, relay })
    }

    /// Records what the person did in the host's dialog for ask `id`: an
    /// answer or a skip, the first answer winning as everywhere; a
    /// dismissed dialog or an opened link leaves the ask open. `name` is
    /// the client's (`claude-code`).
    pub(super) async fn take_host_reply(
        &self,
        id: &str,
        reply: HostReply,
        name: Option<String>,
    ) -> Result<(), BackendError> {
        let answers = match reply {
            HostReply::Answered(answers) => Some(answers),
            HostReply::Declined => None,
            HostReply::Dismissed => {
                tracing::info!(ask_id = %id, "the host's dialog was dismissed; the ask stays open");
                return Ok(());
            }
            HostReply::Opened => {
                tracing::info!(ask_id = %id, "the person opened the ask's page from the host");
                return Ok(());
            }
        };
        if self.backend.reply_from_host(id, answers, name).await? {
            tracing::info!(ask_id = %id, "answered in the host's dialog");
        } else {
            tracing::info!(ask_id = %id, "the host's answer came after another one");
        }
        Ok(())
    }

    /// `get_answer`: the outcome when the ask has ended (waiting up to
    /// `waitSeconds` for it), the pending status otherwise.
    pub async fn get_answer(
        &self,
        arguments: JsonObject,
        mut progress: impl ProgressSink,
        cancelled: impl Future<Output = ()> + Send,
    ) -> CallToolResult {
        let id = match arguments.get("id") {
            Some(Value::String(id)) if !id.trim().is_empty() => id.trim().to_owned(),
            _ => {
                return error_result(
                    "id: get_answer needs the ask id from ask_user, like {\"id\": \"ask_…\"}"
                        .to_owned(),
                );
            }
        };
        let wait = match wait_seconds(arguments.get("waitSeconds")) {
            Ok(wait) => wait,
            Err(message) => return error_result(message),
        };
        let started = Instant::now();
        let followed = if wait.is_zero() {
            match self.backend.wait(&id, Duration::ZERO).await {
                Ok(Snapshot::Ended(outcome)) => Followed::Ended(outcome),
                Ok(Snapshot::Pending(pending)) => Followed::OutOfTime(pending),
                Err(error) => Followed::Failed(error),
            }
        } else {
            self.follow(&id, started, started + wait, None, &mut progress, cancelled)
                .await
        };
        match followed {
            Followed::Ended(outcome) => outcome_result(outcome),
            Followed::OutOfTime(pending) => pending_result(pending),
            Followed::Cancelled => match self.backend.wait(&id, Duration::ZERO).await {
                Ok(snapshot) => snapshot_result(snapshot),
                Err(error) => backend_error(&self.backend, &error, Some(&id)),
            },
            Followed::Failed(error) => backend_error(&self.backend, &error, Some(&id)),
        }
    }

    /// Cancels the asks of `ask_user` calls still waiting: the connection
    /// they came over has closed.
    pub async fn cancel_inflight(&self) {
        let ids = self.inflight.take_all();
        if ids.is_empty() {
            return;
        }
        let cancel_all = async {
            for id in &ids {
                match self.backend.cancel(id).await {
                    Ok(_) => tracing::info!(ask_id = %id, "connection closed; ask cancelled"),
                    Err(error) => {
                        tracing::warn!(ask_id = %id, error = %chain(&error), "cannot cancel the ask");
                    }
                }
            }
        };
        if tokio::time::timeout(CANCEL_ON_CLOSE, cancel_all)
            .await
            .is_err()
        {
            tracing::warn!("gave up cancelling the asks of the closed connection");
        }
    }

    /// Waits for the ask to end until `limit`, reporting progress every
    /// interval, and stops early when `cancelled` resolves.
    async fn follow(
        &self,
        id: &str,
        started: Instant,
        limit: Instant,
        total: Option<f64>,
        progress: &mut impl ProgressSink,
        cancelled: impl Future<Output = ()> + Send,
    ) -> Followed {
        let mut cancelled = pin!(cancelled);
        let interval = self.progress_interval.max(Duration::from_millis(10));
        let mut ticker = tokio::time::interval_at(started + interval, interval);
        ticker.set_missed_tick_behavior(MissedTickBehavior::Delay);
        let backend = &self.backend;
        let poll_after = |pause: Duration, wait: Duration| async move {
            if !pause.is_zero() {
                tokio::time::sleep(pause).await;
            }
            let asked_at = Instant::now();
            (asked_at, backend.wait(id, wait).await)
        };
        let mut failures: u32 = 0;
        let mut poll = pin!(poll_after(
            Duration::ZERO,
            limit.saturating_duration_since(started)
        ));
        loop {
            tokio::select! {
                biased;
                () = &mut cancelled => return Followed::Cancelled,
                (asked_at, result) = &mut poll => match result {
                    Err(error) => {
                        let left = limit.saturating_duration_since(Instant::now());
                        if !error.is_transient() || failures >= RETRIES || left.is_zero() {
                            return Followed::Failed(error);
                        }
                        let pause = (RETRY_PAUSE * 2u32.pow(failures)).min(MAX_RETRY_PAUSE).min(left);
                        failures += 1;
                        tracing::warn!(
                            ask_id = %id,
                            attempt = failures,
                            error = %chain(&error),
                            "waiting for the ask failed; trying again"
                        );
                        poll.set(poll_after(pause, left.saturating_sub(pause)));
                    }
                    Ok(Snapshot::Ended(outcome)) => return Followed::Ended(outcome),
                    Ok(Snapshot::Pending(pending)) => {
                        failures = 0;
                        let now = Instant::now();
                        let left = limit.saturating_duration_since(now);
                        if left.is_zero() {
                            return Followed::OutOfTime(pending);
                        }
                        let pause = if now - asked_at < MIN_POLL && left > MIN_POLL {
                            MIN_POLL
                        } else {
                            Duration::ZERO
                        };
                        poll.set(poll_after(pause, left.saturating_sub(pause)));
                    }
                },
                _ = ticker.tick() => {
                    let waited = started.elapsed();
                    progress.report(waiting(id, waited, total)).await;
                }
            }
        }
    }
}

/// The progress report after `waited`.
fn waiting(id: &str, waited: Duration, total: Option<f64>) -> ProgressUpdate {
    let secs = waited.as_secs();
    let of = total.map_or_else(String::new, |total| format!(" of {total} s"));
    ProgressUpdate {
        ask_id: id.to_owned(),
        progress: waited.as_secs_f64(),
        total,
        message: format!(
            "Waiting for the user's answer (ask id {id}; {secs} s{of}). If this call times out, \
             call get_answer with {{\"id\": \"{id}\"}} to pick the answer up."
        ),
    }
}

/// `waitSeconds`: a number from 0 (the default) to [`tools::MAX_WAIT_SECONDS`]; larger
/// values are capped, negative ones are 0.
fn wait_seconds(value: Option<&Value>) -> Result<Duration, String> {
    let secs = match value {
        None | Some(Value::Null) => 0.0,
        Some(Value::Number(number)) => number.as_f64().unwrap_or(0.0),
        Some(Value::String(text)) => text
            .trim()
            .parse::<f64>()
            .map_err(|_| format!("waitSeconds: expected a number of seconds, got {text:?}"))?,
        Some(other) => {
            return Err(format!(
                "waitSeconds: expected a number of seconds, got {other}"
            ));
        }
    };
    #[allow(clippy::cast_precision_loss)] // 600 is exact
    let capped = secs.clamp(0.0, tools::MAX_WAIT_SECONDS as f64);
    Ok(Duration::from_secs_f64(if capped.is_finite() {
        capped
    } else {
        0.0
    }))
}

/// An ended ask: the outcome as structured content, the continuation (the
/// answer as a sentence) and the JSON as text.
pub(super) fn outcome_result(outcome: Value) -> CallToolResult {
    let readable = ["continuation", "text"]
        .iter()
        .filter_map(|key| outcome.get(*key).and_then(Value::as_str))
        .find(|text| !text.trim().is_empty())
        .unwrap_or("The ask has ended.")
        .to_owned();
    structured(readable, outcome)
}

/// The outcome of an ended ask, the status of an open one.
pub(super) fn snapshot_result(snapshot: Snapshot) -> CallToolResult {
    match snapshot {
        Snapshot::Ended(outcome) => outcome_result(outcome),
        Snapshot::Pending(pending) => pending_result(pending),
    }
}

/// A pending ask: its status as structured content, and how to keep waiting.
fn pending_result(pending: Value) -> CallToolResult {
    let id = pending.get("id").and_then(Value::as_str).unwrap_or("?");
    let until = pending
        .get("expiresAt")
        .and_then(Value::as_str)
        .map_or_else(String::new, |at| format!(", open until {at}"));
    let readable = format!(
        "The user has not answered yet (ask id {id}{until}). Call get_answer with \
         {{\"id\": \"{id}\", \"waitSeconds\": {}}} to keep waiting.",
        tools::MAX_WAIT_SECONDS
    );
    structured(readable, pending)
}

fn structured(readable: String, json: Value) -> CallToolResult {
    let mut result = CallToolResult::success(vec![
        ContentBlock::text(readable),
        ContentBlock::text(json.to_string()),
    ]);
    result.structured_content = Some(json);
    result
}

fn error_result(message: String) -> CallToolResult {
    CallToolResult::error(vec![ContentBlock::text(message)])
}

/// The normaliser refused the ask: list every problem with its path.
pub(super) fn invalid_ask(problems: &[Problem]) -> CallToolResult {
    let mut text = String::from("The ask is not valid; nothing was sent to the user.\n");
    for problem in problems {
        text.push_str(&format!("- {problem}\n"));
    }
    text.push_str("Fix these and call ask_user again.");
    error_result(text)
}

/// A backend failure, said so that the model (and its user) can act on it.
pub(super) fn backend_error(
    backend: &Backend,
    error: &BackendError,
    id: Option<&str>,
) -> CallToolResult {
    let mut text = match (error, backend) {
        (BackendError::NotFound(id), _) => {
            format!("There is no ask with id {id:?}. Use the id that ask_user reported.")
        }
        (BackendError::Daemon(error), Backend::Remote(client)) => {
            let hint = match error {
                super::daemon::DaemonError::Unreachable { .. } => format!(
                    " Is the askbridge daemon running (askbridge serve) at {}?",
                    client.url()
                ),
                _ => String::new(),
            };
            format!("{}.{hint}", chain(error))
        }
        _ => format!("{}.", chain(error)),
    };
    if let Some(id) = id
        && !matches!(error, BackendError::NotFound(_))
    {
        text.push_str(&format!(
            " The ask id is {id}; call get_answer with {{\"id\": \"{id}\"}} later to get the answer."
        ));
    }
    error_result(text)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn wait_seconds_defaults_to_zero_and_is_capped() {
        let secs = |value: Option<Value>| wait_seconds(value.as_ref()).map(|d| d.as_secs());
        assert_eq!(secs(None), Ok(0));
        assert_eq!(secs(Some(json!(null))), Ok(0));
        assert_eq!(secs(Some(json!(30))), Ok(30));
        assert_eq!(secs(Some(json!("45"))), Ok(45));
        assert_eq!(secs(Some(json!(-3))), Ok(0));
        assert_eq!(secs(Some(json!(1e9))), Ok(600));
        assert!(secs(Some(json!("soon"))).is_err());
        assert!(secs(Some(json!([1]))).is_err());
    }

    #[test]
    fn progress_names_the_ask_and_grows() {
        let first = waiting("ask_1", Duration::from_secs(15), Some(900.0));
        let second = waiting("ask_1", Duration::from_secs(30), Some(900.0));
        assert!(first.message.contains("ask id ask_1"));
        assert!(first.message.contains("get_answer"));
        assert!(second.progress > first.progress);
        assert_eq!(first.total, Some(900.0));
    }

    #[test]
    fn an_outcome_reads_as_its_continuation_and_carries_the_json() {
        let outcome = json!({"id": "ask_1", "status": "answered", "text": "Deploy: Staging", "continuation": "User provided answers."});
        let result = outcome_result(outcome.clone());
        assert_eq!(result.is_error, Some(false));
        assert_eq!(result.structured_content, Some(outcome.clone()));
        let texts: Vec<&str> = result
            .content
            .iter()
            .filter_map(|c| c.as_text().map(|t| t.text.as_str()))
            .collect();
        assert_eq!(
            texts,
            ["User provided answers.", outcome.to_string().as_str()]
        );
    }

    #[test]
    fn a_pending_result_says_how_to_keep_waiting() {
        let result = pending_result(
            json!({"id": "ask_1", "status": "pending", "expiresAt": "2026-12-02T12:15:00Z"}),
        );
        let text = result.content[0]
            .as_text()
            .map(|t| t.text.clone())
            .unwrap_or_default();
        assert!(
            text.contains("ask id ask_1, open until 2026-12-02T12:15:00Z"),
            "{text}"
        );
        assert!(text.contains("get_answer"), "{text}");
    }

    #[test]
    fn an_invalid_ask_lists_every_problem_with_its_path() {
        let result = invalid_ask(&[
            Problem::new(
                "questions[0].options",
                "a single-choice question needs at least 2 options, got 1",
            ),
            Problem::new("timeoutSeconds", "expected an integer"),
        ]);
        assert_eq!(result.is_error, Some(true));
        let text = result.content[0]
            .as_text()
            .map(|t| t.text.clone())
            .unwrap_or_default();
        assert!(text.contains(
            "- questions[0].options: a single-choice question needs at least 2 options, got 1\n"
        ));
        assert!(text.contains("- timeoutSeconds: expected an integer\n"));
    }
}

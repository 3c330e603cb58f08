//! `askbridge ask`: create an ask from the shell through a running daemon
//! and print the JSON it answers — the pending ask, or with `--wait` the
//! outcome.
//!
//! The ask is read in any dialect and normalised here first, so an invalid
//! ask is reported with every path-named problem before anything is sent;
//! the daemon gets the canonical JSON. With `--wait` the ask is created,
//! then long-polled (`GET /v1/asks/{id}?wait=…`) until it ends, across a
//! daemon restart of a few seconds; Ctrl-C cancels it.
//!
//! Exit codes: 0 answered (or created, without `--wait`), 2 no answer,
//! 1 for errors (unreadable file, invalid ask, daemon unreachable or
//! refusing), each explained on standard error.

use std::io::Write;
use std::path::PathBuf;
use std::time::Duration;

use askbridge_core::model::Target;
use askbridge_core::normalize::normalize_input;
use serde_json::Value;
use tokio::time::Instant;

use crate::mcp::daemon::{self, DaemonClient, DaemonError};
use crate::wire::ask::CanonicalAsk;

/// The daemon asked when neither `--server` nor `ASKBRIDGE_SERVER` names one.
pub const DEFAULT_SERVER: &str = "http://127.0.0.1:8790";

/// How long past the ask's deadline `--wait` keeps polling for the daemon
/// to end it.
const DEADLINE_GRACE: Duration = Duration::from_secs(30);

/// Transient failures in a row tolerated while waiting (a daemon restart),
/// with pauses doubling from [`RETRY_PAUSE`] up to [`MAX_RETRY_PAUSE`].
const RETRIES: u32 = 6;
/// The first pause after a transient failure.
const RETRY_PAUSE: Duration = Duration::from_millis(250);
/// The longest pause between attempts.
const MAX_RETRY_PAUSE: Duration = Duration::from_secs(5);

/// Exit code: answered, or created without `--wait`.
const EXIT_OK: u8 = 0;
/// Exit code: an error, explained on standard error.
const EXIT_ERROR: u8 = 1;
/// Exit code: the ask ended without an answer.
const EXIT_NO_ANSWER: u8 = 2;

/// Arguments of `askbridge ask`.
#[derive(Debug, Clone, clap::Args)]
pub struct AskArgs {
    /// Where to post it (`telegram:…`, `web`, …); default: the ask's own
    /// `to`, else the daemon's default target.
    #[arg(long)]
    pub to: Option<String>,
    /// Wait for the outcome (otherwise print the pending ask and return).
    #[arg(long)]
    pub wait: bool,
    /// The daemon (default: `$ASKBRIDGE_SERVER`, else http://127.0.0.1:8790).
    #[arg(long)]
    pub server: Option<String>,
    /// The ask, in any dialect; `-` for standard input.
    #[arg(default_value = "-")]
    pub file: PathBuf,
}

/// Creates the ask; returns the exit code: 0 answered (or created without
/// `--wait`), 2 no answer, 1 when something failed (said on standard error).
pub async fn run(args: AskArgs) -> anyhow::Result<u8> {
    match ask(&args).await {
        Ok(code) => Ok(code),
        Err(message) => {
            eprintln!("askbridge: {message}");
            Ok(EXIT_ERROR)
        }
    }
}

async fn ask(args: &AskArgs) -> Result<u8, String> {
    let input = crate::commands::read_input(&args.file)
        .map_err(|error| format!("cannot read {}: {error}", args.file.display()))?;
    let normalized = normalize_input(&input).map_err(|problems| {
        let listed: Vec<String> = problems.iter().map(ToString::to_string).collect();
        format!(
            "{} is not a valid ask:\n  {}",
            args.file.display(),
            listed.join("\n  ")
        )
    })?;
    for warning in &normalized.warnings {
        eprintln!("askbridge: warning: {warning}");
    }
    let mut ask = normalized.ask;
    if let Some(to) = &args.to {
        ask.target = Some(Target::parse(to).map_err(|error| format!("--to {to:?}: {error}"))?);
        ask.also.clear();
    }
    let body = serde_json::to_value(CanonicalAsk::from(&ask))
        .map_err(|error| format!("cannot write the ask as JSON: {error}"))?;

    let client = super::daemon_client(&server_url(args.server.as_deref()))
        .map_err(|error| explain(&error))?;
    let created = client
        .create(&body, None)
        .await
        .map_err(|error| explain(&error))?;
    if !args.wait {
        print(&created)?;
        return Ok(exit_code(&created));
    }

    let id = daemon::id_of(&created)
        .ok_or_else(|| {
            format!(
                "the daemon at {} answered without an ask id: {created}",
                client.url()
            )
        })?
        .to_owned();
    eprintln!("askbridge: ask {id} created; waiting for the answer (Ctrl-C cancels it)");
    let deadline =
        Instant::now() + Duration::from_secs(u64::from(ask.timeout_seconds)) + DEADLINE_GRACE;
    let outcome = tokio::select! {
        result = wait_for_end(&client, &id, created, deadline) => result.map_err(|error| explain(&error))?,
        _ = tokio::signal::ctrl_c() => {
            eprintln!("askbridge: interrupted; cancelling ask {id}");
            client.cancel(&id).await.map_err(|error| explain(&error))?
        }
    };
    print(&outcome)?;
    if daemon::status_of(&outcome) == Some("pending") {
        eprintln!("askbridge: ask {id} is still pending past its deadline");
        return Ok(EXIT_NO_ANSWER);
    }
    Ok(exit_code(&outcome))
}

/// The daemon named by `--server`, else by `ASKBRIDGE_SERVER`, else the
/// default address.
pub(crate) fn server_url(given: Option<&str>) -> String {
    given
        .map(str::to_owned)
        .or_else(|| {
            std::env::var(crate::commands::mcp::SERVER_ENV)
                .ok()
                .filter(|url| !url.trim().is_empty())
        })
        .unwrap_or_else(|| DEFAULT_SERVER.to_owned())
}

/// Long-polls the ask until it ends or `deadline` passes.
pub(crate) async fn wait_for_end(
    client: &DaemonClient,
    id: &str,
    latest: Value,
    deadline: Instant,
) -> Result<Value, DaemonError> {
    poll_until_end(latest, deadline, |left| client.get(id, Some(left))).await
}

/// [`wait_for_end`] with the long-poll `poll(left)` of one's choice: asked
/// again while the ask is pending and time is left, through a daemon that
/// restarts.
pub(crate) async fn poll_until_end<F, Fut>(
    mut latest: Value,
    deadline: Instant,
    mut poll: F,
) -> Result<Value, DaemonError>
where
    F: FnMut(Duration) -> Fut,
    Fut: std::future::Future<Output = Result<Value, DaemonError>>,
{
    let mut failures: u32 = 0;
    while daemon::status_of(&latest) == Some("pending") {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            break;
        }
        match poll(left).await {
            Ok(answer) => {
                latest = answer;
                failures = 0;
            }
            Err(error) if is_transient(&error) && failures < RETRIES => {
                let pause = (RETRY_PAUSE * 2u32.pow(failures)).min(MAX_RETRY_PAUSE);
                failures += 1;
                eprintln!("askbridge: {}; trying again", explain(&error));
                tokio::time::sleep(pause).await;
            }
            Err(error) => return Err(error),
        }
    }
    Ok(latest)
}

/// Whether the daemon may answer if asked again soon (it is restarting).
fn is_transient(error: &DaemonError) -> bool {
    match error {
        DaemonError::Unreachable { .. } => true,
        DaemonError::Refused { status, .. } => matches!(status, 502..=504),
        _ => false,
    }
}

/// 0 for an answered (or pending) ask, 2 for one that ended unanswered.
fn exit_code(answer: &Value) -> u8 {
    match daemon::status_of(answer) {
        Some("no_answer") => EXIT_NO_ANSWER,
        _ => EXIT_OK,
    }
}

fn print(value: &Value) -> Result<(), String> {
    let text = serde_json::to_string_pretty(value).map_err(|error| error.to_string())?;
    let mut out = std::io::stdout().lock();
    writeln!(out, "{text}").map_err(|error| format!("cannot write the result: {error}"))
}

/// A daemon error as a sentence a person can act on.
pub(crate) fn explain(error: &DaemonError) -> String {
    match error {
        DaemonError::Unreachable { url, source } => format!(
            "cannot reach the askbridge daemon at {url} ({}). Start it with `askbridge serve`, \
             or name another with --server.",
            root_cause(source)
        ),
        DaemonError::Refused {
            code,
            message,
            path,
            ..
        } if code == "invalid_ask" => match path {
            Some(path) if !path.is_empty() && !message.starts_with(path.as_str()) => {
                format!("the daemon refused the ask:\n  {path}: {message}")
            }
            _ => format!("the daemon refused the ask:\n  {message}"),
        },
        other => other.to_string(),
    }
}

/// The innermost cause of an error (for reqwest, the OS's words).
fn root_cause(error: &(dyn std::error::Error + 'static)) -> String {
    let mut cause = error;
    while let Some(next) = cause.source() {
        cause = next;
    }
    cause.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn no_answer_exits_2_and_everything_else_0() {
        assert_eq!(exit_code(&json!({"status": "answered"})), 0);
        assert_eq!(exit_code(&json!({"status": "pending"})), 0);
        assert_eq!(
            exit_code(&json!({"status": "no_answer", "reason": "timeout"})),
            2
        );
    }

    #[test]
    fn an_invalid_ask_refused_by_the_daemon_names_the_path() {
        let error = DaemonError::Refused {
            status: 400,
            code: "invalid_ask".to_owned(),
            message: "needs at least 2 options".to_owned(),
            path: Some("questions[0].options".to_owned()),
        };
        assert_eq!(
            explain(&error),
            "the daemon refused the ask:\n  questions[0].options: needs at least 2 options"
        );
    }
}

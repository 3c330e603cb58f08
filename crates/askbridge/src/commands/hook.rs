//! `askbridge hook HOST`: a coding agent's hook, answered from a chat.
//!
//! Claude Code or Codex runs it with one hook event on standard input
//! (a tool call waiting for permission, the agent's own questions, a
//! plan). It asks the person through the running daemon, waits for the
//! outcome and prints the host's decision JSON. The mapping both ways is
//! the core's ([`askbridge_core::hooks`]); this command only reads, calls
//! the daemon and prints.
//!
//! It never allows anything by default: when there is no answer — the
//! event does not read, the daemon is down or refuses, the hold runs out,
//! the person skips a tool call, the hook is stopped — it prints nothing
//! and exits 0, and the host asks in its terminal. Why goes to standard
//! error. A hook stopped by a signal cancels its ask, so the chat's
//! message closes.
//!
//! The ask is created with an idempotency key made from the event: a hook
//! run again for the same pending call waits on the same ask. An ask of
//! that key that has already ended belongs to an earlier identical call
//! (the same command twice in one prompt): the next key is taken, so
//! every call is asked.

use std::io::{Read, Write};
use std::time::Duration;

use askbridge_core::hooks::{HookEvent, Host, MovedOn, names_a_person};
use askbridge_core::model::Target;
use askbridge_core::model::limits::{MAX_TIMEOUT_SECONDS, MIN_TIMEOUT_SECONDS};
use serde_json::Value;
use tokio::time::Instant;

use super::ask::{explain, server_url, wait_for_end};
use super::hook_state::{self, Waiting};
use crate::mcp::daemon::{self, DaemonClient};

/// How long a main Claude Code session's call waits for the person.
const HOLD_MAIN: u32 = 1_800;
/// How long a subagent's call, or any Codex call, waits: Codex locks its
/// terminal while a hook runs, and a subagent's work should not stall.
const HOLD_SHORT: u32 = 120;
/// Largest hook event read.
const MAX_EVENT_BYTES: u64 = 8 * 1024 * 1024;
/// How long past the hold to wait for the daemon to end the ask.
const GRACE: Duration = Duration::from_secs(15);
/// How many identical calls one session may have asked before.
const MAX_REPEATS: u32 = 64;

/// Arguments of `askbridge hook`.
#[derive(Debug, Clone, clap::Args)]
pub struct HookArgs {
    /// The host running the hook: claude-code, codex, copilot or cursor.
    #[arg(value_parser = parse_host)]
    pub host: HostArg,
    #[command(flatten)]
    pub options: HookOptions,
}

/// How a hook asks: `askbridge hook`'s options, which `hooks install`
/// writes into the command it installs.
#[derive(Debug, Clone, clap::Args)]
pub struct HookOptions {
    /// Where to ask (`telegram:…@42`, `slack:C1@U1`, `web`, …); default:
    /// the daemon's default target.
    #[arg(long)]
    pub to: Option<String>,
    /// The daemon (default: `$ASKBRIDGE_SERVER`, else http://127.0.0.1:8790).
    #[arg(long)]
    pub server: Option<String>,
    /// Seconds to wait for the person (30–3600) before the host asks in its
    /// terminal; default 1800 for a Claude Code session, 120 for its
    /// subagents and for Codex.
    #[arg(long)]
    pub hold: Option<u32>,
    /// Accept a `--to` group that names no person, trusting the channel's
    /// `allowed_users` to say who may approve.
    #[arg(long)]
    pub trust_allowed_users: bool,
}

/// A host named on the command line.
#[derive(Debug, Clone, Copy)]
pub struct HostArg(pub Host);

pub fn parse_host(name: &str) -> Result<HostArg, String> {
    Host::parse(name).map(HostArg).ok_or_else(|| {
        let known: Vec<&str> = Host::ALL.iter().map(|host| host.id()).collect();
        format!(
            "unknown host {name:?}; askbridge answers {}",
            known.join(", ")
        )
    })
}

/// Reads the event from standard input, asks, and prints the decision
/// (or nothing). Never fails: what went wrong is said on standard error.
pub async fn run(args: HookArgs) -> anyhow::Result<()> {
    let host = args.host.0;
    let mut input = String::new();
    let read = std::io::stdin()
        .take(MAX_EVENT_BYTES)
        .read_to_string(&mut input);
    let decision = match read {
        Ok(_) => decide(&args, &input).await,
        Err(error) => Err(format!("cannot read the hook event: {error}")),
    };
    match decision {
        Ok(Some(decision)) => {
            let mut out = std::io::stdout().lock();
            writeln!(out, "{decision}").and_then(|()| out.flush())?;
        }
        Ok(None) => {}
        Err(message) => eprintln!(
            "askbridge hook: {message}; {} decides in its terminal",
            host.name()
        ),
    }
    Ok(())
}

/// The decision for one event; `Ok(None)` when the person made none.
async fn decide(args: &HookArgs, input: &str) -> Result<Option<Value>, String> {
    let event = match HookEvent::parse(args.host.0, input) {
        Ok(event) => event,
        Err(error) => match MovedOn::parse(input) {
            Some(moved) => {
                close_stale(&args.options, &moved).await;
                return Ok(None);
            }
            None => return Err(error.to_string()),
        },
    };
    let args = &args.options;
    if event.is_own_tool() {
        return Ok(Some(event.allow_own_tool()));
    }
    if event.is_own_form() {
        eprintln!("askbridge hook: askbridge's own form is already asked in the chat");
        return Ok(None);
    }
    args.check_target()?;
    let hold = args.hold(event.host, event.agent_id.is_some());
    let client = super::daemon_client(&server_url(args.server.as_deref()))
        .map_err(|error| explain(&error))?;
    let body = event.ask(args.to.as_deref(), hold);
    let deadline = Instant::now() + Duration::from_secs(u64::from(hold)) + GRACE;
    let key = idempotency_key(&event);
    let created = create(&client, &body, &key).await?;
    let id = daemon::id_of(&created)
        .ok_or_else(|| format!("the daemon answered without an ask id: {created}"))?
        .to_owned();
    // Without `--to`, the daemon's default target decides where: it must
    // name a person too.
    if args.to.is_none()
        && let Some(to) = created["to"].as_str()
        && let Err(refused) = args.check_approver("the daemon's default target", to)
    {
        cancel(&client, &id).await;
        return Err(refused);
    }
    // Noted while it waits (and no longer once this returns, before the
    // decision is printed): a later event of the session closes it.
    let _waiting = Waiting::note(&event.session_id, &event.call_key(), &id);
    eprintln!("askbridge hook: ask {id} posted; waiting up to {hold} s for the answer");
    let outcome = tokio::select! {
        result = wait_for_end(&client, &id, created, deadline) => {
            result.map_err(|error| explain(&error))?
        }
        signal = super::serve::shutdown_signal() => {
            cancel(&client, &id).await;
            return Err(format!("stopped by {signal}; ask {id} cancelled"));
        }
    };
    if daemon::status_of(&outcome) == Some("pending") {
        cancel(&client, &id).await;
        return Err(format!("no answer within {hold} s; ask {id} cancelled"));
    }
    let decision = event.decision(&outcome);
    if decision.is_none() {
        let reason = outcome["reason"].as_str().unwrap_or("no choice");
        eprintln!("askbridge hook: ask {id} ended without a decision ({reason})");
    }
    Ok(decision)
}

impl HookOptions {
    /// Refuses a `--to` that lets anyone in a group approve, unless
    /// `--trust-allowed-users` says the channel's allow-list is the
    /// approvers.
    pub fn check_target(&self) -> Result<(), String> {
        match &self.to {
            Some(to) => self.check_approver("--to", to),
            None => Ok(()),
        }
    }

    /// Refuses a target (`what`: where it came from) that lets anyone in
    /// a group approve, unless `--trust-allowed-users`.
    fn check_approver(&self, what: &str, to: &str) -> Result<(), String> {
        let target = Target::parse(to).map_err(|error| format!("{what} {to:?}: {error}"))?;
        if names_a_person(&target) || self.trust_allowed_users {
            return Ok(());
        }
        Err(format!(
            "{what} {to:?} names a group but no person: anyone there could approve what runs \
             on this machine. Name the approver (`{to}@USER_ID`), or pass \
             --trust-allowed-users if the channel's allowed_users lists only approvers"
        ))
    }

    /// Seconds a call waits for the person: `--hold` (kept within an
    /// ask's timeout limits), else long for a Claude Code session and
    /// short for its subagents and for Codex.
    pub fn hold(&self, host: Host, subagent: bool) -> u32 {
        let default = match host {
            Host::ClaudeCode if !subagent => HOLD_MAIN,
            _ => HOLD_SHORT,
        };
        self.hold
            .unwrap_or(default)
            .clamp(MIN_TIMEOUT_SECONDS, MAX_TIMEOUT_SECONDS)
    }
}

/// The event's idempotency key: its identity, hashed.
fn idempotency_key(event: &HookEvent) -> String {
    format!("hook-{}", hook_state::hashed(&event.identity()))
}

/// Creates the ask, or finds the pending one this call already made;
/// skips the keys of earlier identical calls, whose asks have ended.
async fn create(client: &DaemonClient, body: &Value, key: &str) -> Result<Value, String> {
    for repeat in 0..MAX_REPEATS {
        let key = match repeat {
            0 => key.to_owned(),
            n => format!("{key}-{n}"),
        };
        let created = client
            .create_keyed(body, None, Some(&key))
            .await
            .map_err(|error| explain(&error))?;
        if daemon::status_of(&created) == Some("pending") {
            return Ok(created);
        }
    }
    Err(format!(
        "this call was asked {MAX_REPEATS} times before in this session"
    ))
}

/// Closes the asks a later event of their session shows to be stale:
/// each is cancelled (its waiting hook then decides nothing) and its note
/// removed; one the daemon cannot be asked about now keeps its note.
async fn close_stale(args: &HookOptions, moved: &MovedOn) {
    let stale = hook_state::stale(moved);
    if stale.is_empty() {
        return;
    }
    let client = match super::daemon_client(&server_url(args.server.as_deref())) {
        Ok(client) => client,
        Err(error) => {
            eprintln!("askbridge hook: {}", explain(&error));
            return;
        }
    };
    for (id, note) in stale {
        match client.cancel(&id).await {
            Ok(_) => {}
            Err(error) if error.is_not_found() => {}
            Err(error) => {
                eprintln!(
                    "askbridge hook: could not close ask {id}: {}",
                    explain(&error)
                );
                continue;
            }
        }
        let _ = std::fs::remove_file(note);
    }
}

/// Cancels the ask so its message closes; a failure is only said.
async fn cancel(client: &DaemonClient, id: &str) {
    if let Err(error) = client.cancel(id).await {
        eprintln!(
            "askbridge hook: could not cancel ask {id}: {}",
            explain(&error)
        );
    }
}

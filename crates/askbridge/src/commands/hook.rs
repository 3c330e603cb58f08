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

use askbridge_core::hooks::{self, Finished, HookEvent, Host, MovedOn};
use askbridge_core::model::limits::{MAX_TIMEOUT_SECONDS, MIN_TIMEOUT_SECONDS};
use askbridge_core::model::{Target, Verified};
use askbridge_core::normalize::approver_problem;
use serde_json::Value;
use tokio::time::Instant;

use super::ask::{explain, poll_until_end, server_url};
use super::hook_state::{self, Waiting};
use crate::config::default_hold;
use crate::mcp::daemon::{self, DaemonClient};
use crate::wire::api::HookSettings;

/// Largest hook event read.
const MAX_EVENT_BYTES: u64 = 8 * 1024 * 1024;
/// How long past the hold to wait for the daemon to end the ask.
const GRACE: Duration = Duration::from_secs(15);
/// Seconds the host's hook timeout is set above the hold (`hooks
/// install`): the hook ends, and closes its ask, before the host kills it.
pub const TIMEOUT_SLACK: u32 = 30;
/// How long before the host's timeout the whole hook gives up.
const MARGIN: Duration = Duration::from_secs(10);
/// How long of the hook's time is kept for closing its ask.
const CLOSING: Duration = Duration::from_secs(5);
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
    /// the daemon's `[hooks] to`, else its default target.
    #[arg(long)]
    pub to: Option<String>,
    /// The daemon (default: `$ASKBRIDGE_SERVER`, else http://127.0.0.1:8790).
    #[arg(long)]
    pub server: Option<String>,
    /// Seconds to wait for the person (30–3600) before the host asks in its
    /// terminal; default: the daemon's `[hooks] hold_seconds` (1800 for a
    /// Claude Code session, 120 for its subagents and the other hosts).
    #[arg(long)]
    pub hold: Option<u32>,
    /// No longer has any effect (an approval is answered only by the
    /// person its place names); accepted so hooks installed with it still
    /// run.
    #[arg(long, hide = true)]
    pub trust_allowed_users: bool,
    /// When the agent finishes its turn (`Stop`), post its last message
    /// and wait for a reply: the agent goes on with it as its next
    /// instruction (Claude Code, Codex).
    #[arg(long = "continue")]
    pub continue_after_stop: bool,
    /// When the agent finishes its turn (`Stop`), post its last message
    /// as a notice in the session's thread, waiting for nothing (Claude
    /// Code, Codex).
    #[arg(long = "notify")]
    pub notify_on_stop: bool,
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

/// The host's timeout for a hook run with `--hold hold`, as `hooks
/// install` sets it: above the hold, or above the longest hold without one.
pub fn host_timeout(hold: Option<u32>) -> u32 {
    hold.map_or(MAX_TIMEOUT_SECONDS, |hold| {
        hold.clamp(MIN_TIMEOUT_SECONDS, MAX_TIMEOUT_SECONDS)
    }) + TIMEOUT_SLACK
}

/// When a hook started at `started` with `--hold hold` must have ended:
/// one deadline for all of it, below the host's timeout.
fn deadline(started: Instant, hold: Option<u32>) -> Instant {
    started + Duration::from_secs(u64::from(host_timeout(hold))) - MARGIN
}

/// Reads the event from standard input, asks, and prints the decision
/// (or, with none, what the host reads as none: [`Host::undecided`]).
/// Never fails: what went wrong is said on standard error.
pub async fn run(args: HookArgs) -> anyhow::Result<()> {
    let host = args.host.0;
    let deadline = deadline(Instant::now(), args.options.hold);
    let mut input = String::new();
    let read = std::io::stdin()
        .take(MAX_EVENT_BYTES)
        .read_to_string(&mut input);
    let decision = match read {
        Ok(_) => within(deadline, decide(&args, &input, deadline)).await,
        Err(error) => Err(format!("cannot read the hook event: {error}")),
    };
    let decision = decision.unwrap_or_else(|message| {
        eprintln!(
            "askbridge hook: {message}; {} decides in its terminal",
            host.name()
        );
        None
    });
    if let Some(decision) = decision.or_else(|| host.undecided()) {
        let mut out = std::io::stdout().lock();
        writeln!(out, "{decision}").and_then(|()| out.flush())?;
    }
    Ok(())
}

/// What `decided` gives, unless the hook's `deadline` comes first.
async fn within<T>(
    deadline: Instant,
    decided: impl Future<Output = Result<T, String>>,
) -> Result<T, String> {
    tokio::time::timeout_at(deadline, decided)
        .await
        .unwrap_or_else(|_| Err("the host's timeout for this hook is near".to_owned()))
}

/// The decision for one event; `Ok(None)` when the person made none.
async fn decide(args: &HookArgs, input: &str, deadline: Instant) -> Result<Option<Value>, String> {
    let host = args.host.0;
    let args = &args.options;
    let event = match HookEvent::parse(host, input) {
        Ok(event) => event,
        Err(error) => match MovedOn::parse(input) {
            Some(moved) => {
                close_stale(args, &moved).await;
                return match Finished::parse(host, input) {
                    Some(finished) => after_stop(args, &finished, deadline).await,
                    None => Ok(None),
                };
            }
            None => return Err(error.to_string()),
        },
    };
    if event.is_own_tool() {
        return Ok(Some(event.allow_own_tool()));
    }
    if event.is_own_form() {
        eprintln!("askbridge hook: askbridge's own form is already asked in the chat");
        return Ok(None);
    }
    let asking = Asking::start(args).await?;
    if asking.settings.never_ask.contains(&event.tool_name) {
        return Err(format!(
            "{} is in the daemon's [hooks] never_ask",
            event.tool_name
        ));
    }
    let hold = args.hold(event.host, event.agent_id.is_some(), &asking.settings);
    let body = event.ask(asking.to.as_deref(), hold);
    let key = idempotency_key(&event.identity());
    let session = hook_state::agent_session(&event.session_id, event.agent_id.as_deref());
    let call = event.call_key();
    // Asked again: an earlier refusal of the same call held.
    hook_state::forget_refused(&session, &call);
    let (outcome, waiting) = asking
        .ask(&body, &key, hold, deadline, &session, &call)
        .await?;
    if event.refuses_call(&outcome)
        && let Some(waiting) = waiting
    {
        // Should the call run all the same, the host had decided in its
        // own prompt first: its later event says so (`close_stale`).
        waiting.keep_refused();
    }
    let decision = event.decision(&outcome);
    if decision.is_none() {
        let reason = outcome["reason"].as_str().unwrap_or("no choice");
        eprintln!("askbridge hook: the ask ended without a decision ({reason})");
    }
    Ok(decision)
}

/// The agent finished its turn: with `--continue` or `[hooks]
/// continue_after_stop`, its last message is posted and the person's reply
/// is its next instruction; with `--notify` or `[hooks] notify_on_stop`
/// alone, it is posted as a notice and nothing waits.
async fn after_stop(
    args: &HookOptions,
    finished: &Finished,
    deadline: Instant,
) -> Result<Option<Value>, String> {
    if !Finished::continues(finished.host) {
        return args.check_continue(finished.host).map(|()| None);
    }
    let asking = Asking::start(args).await?;
    let continues = args.continue_after_stop || asking.settings.continue_after_stop;
    let notifies = args.notify_on_stop || asking.settings.notify_on_stop;
    if !continues && !notifies {
        return Ok(None);
    }
    let last = finished.last_message.clone().or_else(|| {
        let path = finished.transcript_path.as_deref()?;
        let transcript = std::fs::read_to_string(path).ok()?;
        hooks::last_assistant_text(&transcript)
    });
    if !continues {
        let notice = finished.notice(last.as_deref(), asking.to.as_deref());
        let identity = serde_json::json!(["Stop notice", finished.session_id, last]).to_string();
        let posted = asking
            .client
            .notify(&notice, &idempotency_key(&identity))
            .await
            .map_err(|error| explain(&error))?;
        eprintln!(
            "askbridge hook: the agent's last message posted to {}",
            posted["to"].as_str().unwrap_or("the default target")
        );
        return Ok(None);
    }
    let hold = args.hold(finished.host, false, &asking.settings);
    let body = finished.ask(last.as_deref(), asking.to.as_deref(), hold);
    let identity = serde_json::json!(["Stop", finished.session_id, last]).to_string();
    let (outcome, _) = asking
        .ask(
            &body,
            &idempotency_key(&identity),
            hold,
            deadline,
            &finished.session_id,
            "Stop",
        )
        .await?;
    Ok(finished.decision(&outcome))
}

/// The daemon, its `[hooks]` settings, and where to ask.
struct Asking {
    client: DaemonClient,
    settings: HookSettings,
    /// `--to`, else `[hooks] to`; `None`: the daemon's default target.
    to: Option<String>,
}

impl Asking {
    /// Checks `--to` and reads the daemon's settings; where the ask goes
    /// (`--to`, else `[hooks] to`, else the default target) the daemon
    /// checks when it is created, by the core's rule.
    async fn start(args: &HookOptions) -> Result<Asking, String> {
        args.check_target()?;
        if args.trust_allowed_users {
            eprintln!(
                "askbridge hook: --trust-allowed-users has no effect any more: only the person \
                 the target names approves"
            );
        }
        let client = super::daemon_client(&server_url(args.server.as_deref()))
            .map_err(|error| explain(&error))?;
        let settings = client
            .hook_settings()
            .await
            .map_err(|error| explain(&error))?;
        let to = args.to.clone().or_else(|| settings.to.clone());
        Ok(Asking {
            client,
            settings,
            to,
        })
    }

    /// Posts `body` (once per `key`) and waits up to `hold` seconds for
    /// its outcome, and never past the hook's `deadline` (less the time to
    /// close the ask); noted meanwhile as `session`'s ask for `call`, so a
    /// later event of the session closes it. A hold that runs out, or a
    /// stop, cancels the ask. The outcome comes with the note (removed
    /// when dropped).
    async fn ask(
        &self,
        body: &Value,
        key: &str,
        hold: u32,
        deadline: Instant,
        session: &str,
        call: &str,
    ) -> Result<(Value, Option<Waiting>), String> {
        let client = &self.client;
        let until = Instant::now() + Duration::from_secs(u64::from(hold)) + GRACE;
        let until = until.min(deadline - CLOSING);
        // Listening for a stop from before the ask exists: a stop that
        // comes at once (the host's Ctrl-C as the ask is posted) closes it
        // instead of killing the hook with the ask left open.
        let mut stopped = super::serve::Stop::listen();
        let created = create(client, body, key).await?;
        let id = daemon::id_of(&created)
            .ok_or_else(|| format!("the daemon answered without an ask id: {created}"))?
            .to_owned();
        // Noted while it waits (and, unless kept, no longer once the
        // decision is made, before it is printed): a later event of the
        // session closes it.
        let waiting = Waiting::note(session, call, &id);
        eprintln!("askbridge hook: ask {id} posted; waiting up to {hold} s for the answer");
        let outcome = tokio::select! {
            // Held by the waiting request (`hold=true`): a hook killed
            // outright (Codex's SIGKILL on Escape) drops it, and the
            // daemon cancels the ask at once (`cancel_on_disconnect`),
            // closing its chat message. A daemon slower than the deadline
            // leaves the ask pending.
            result = tokio::time::timeout_at(until, poll_until_end(created.clone(), until, |left| {
                client.get_holding(&id, left)
            })) => {
                result.unwrap_or(Ok(created)).map_err(|error| explain(&error))?
            }
            // The host stopped waiting (its timeout, Ctrl-C): it asks in
            // its terminal now, and the chat message says so.
            signal = stopped.wait() => {
                if let Err(error) = client.close_answered_in_host(&id).await {
                    eprintln!("askbridge hook: could not close ask {id}: {}", explain(&error));
                }
                return Err(format!("stopped by {signal}; ask {id} closed"));
            }
        };
        if daemon::status_of(&outcome) == Some("pending") {
            cancel(client, &id).await;
            return Err(format!("no answer within {hold} s; ask {id} cancelled"));
        }
        Ok((outcome, waiting))
    }
}

impl HookOptions {
    /// Refuses `--continue` and `--notify` for a host whose `Stop` hook
    /// askbridge does not read.
    pub fn check_continue(&self, host: Host) -> Result<(), String> {
        if Finished::continues(host) {
            return Ok(());
        }
        let flag = match (self.continue_after_stop, self.notify_on_stop) {
            (true, _) => "--continue",
            (false, true) => "--notify",
            (false, false) => return Ok(()),
        };
        Err(format!(
            "{} does not go on from a Stop hook; {flag} is for Claude Code and Codex",
            host.name()
        ))
    }

    /// Refuses a `--to` where the daemon would refuse an approval because
    /// it names no person (the core's rule, [`approver_problem`]; whether
    /// the daemon's token or email authentication lets the web page or
    /// email approve, the daemon says when asked).
    pub fn check_target(&self) -> Result<(), String> {
        let Some(to) = &self.to else {
            return Ok(());
        };
        let target = Target::parse(to).map_err(|error| format!("--to {to:?}: {error}"))?;
        let settings = Verified {
            web: true,
            email: true,
        };
        match approver_problem(&target, "--to", settings) {
            Some(problem) => Err(format!("--to {to:?}: {}", problem.message)),
            None => Ok(()),
        }
    }

    /// Seconds a call waits for the person: `--hold`, else the daemon's
    /// `[hooks] hold_seconds` for the host (or Claude Code's subagents);
    /// kept within an ask's timeout limits.
    pub fn hold(&self, host: Host, subagent: bool, settings: &HookSettings) -> u32 {
        let key = match host {
            Host::ClaudeCode if subagent => "subagent",
            host => host.id(),
        };
        let configured = settings.hold_seconds.get(key).copied();
        self.hold
            .or(configured)
            .unwrap_or_else(|| default_hold(key))
            .clamp(MIN_TIMEOUT_SECONDS, MAX_TIMEOUT_SECONDS)
    }
}

/// An event's idempotency key: its identity, hashed.
fn idempotency_key(identity: &str) -> String {
    format!("hook-{}", crate::hashed(identity))
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

/// Closes the asks a later event of their session shows to be stale,
/// as answered in the host's own prompt: one still waiting is cancelled
/// (its waiting hook then decides nothing); one the chat refused, whose
/// call ran all the same, is overtaken (the chat answer came too late).
/// Each note is then removed; one the daemon cannot be asked about now
/// is kept. At the end of a turn, a refused call that did not run is
/// only forgotten.
async fn close_stale(args: &HookOptions, moved: &MovedOn) {
    let mut stale = hook_state::stale(moved);
    if moved.call.is_none() {
        stale.retain(|noted| {
            if noted.refused {
                let _ = std::fs::remove_file(&noted.note);
            }
            !noted.refused
        });
    }
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
    for hook_state::Noted { id, note, .. } in stale {
        match client.close_answered_in_host(&id).await {
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

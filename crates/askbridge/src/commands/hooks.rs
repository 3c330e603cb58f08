//! `askbridge hooks install|uninstall|status`: askbridge's hook in a
//! coding agent's own settings file.
//!
//! Claude Code reads hooks from `.claude/settings.json` (in the project,
//! or `~/.claude/` for every project), Codex from `hooks.json` in
//! `$CODEX_HOME` (default `~/.codex`) or the project's `.codex/`. Both
//! take `{"hooks": {EVENT: [{"matcher"?, "hooks": [{"type": "command",
//! "command", "timeout"}]}]}}`. Installing adds a `PermissionRequest`
//! entry running `askbridge hook HOST …` (and, for Claude Code, an
//! `Elicitation` one: MCP servers' forms), and `PostToolUse`,
//! `UserPromptSubmit` and `Stop` entries that close asks gone stale, and
//! leaves every other hook and
//! setting as it was; a second run changes nothing; the old file is kept
//! beside it (`….askbridge.bak`). Uninstalling takes out exactly the
//! entries whose command is `askbridge hook`.

use std::path::{Path, PathBuf};
use std::time::Duration;

use askbridge_core::hooks::Host;
use askbridge_core::model::limits::{MAX_TIMEOUT_SECONDS, MIN_TIMEOUT_SECONDS};
use serde_json::{Map, Value, json};

use super::ask::{explain, server_url};
use super::hook::{HookOptions, HostArg, parse_host};

/// The hook events askbridge installs for `host`: those it asks for, then
/// the cheap ones that show an ask went stale (the person answered in the
/// terminal) and close it.
fn events(host: Host) -> &'static [&'static str] {
    match host {
        Host::ClaudeCode => &[
            "PermissionRequest",
            "Elicitation",
            "PostToolUse",
            "UserPromptSubmit",
            "Stop",
        ],
        Host::Codex => &[
            "PermissionRequest",
            "PostToolUse",
            "UserPromptSubmit",
            "Stop",
        ],
        // Copilot CLI runs no hook after a call that askbridge could
        // close a stale ask with.
        Host::Copilot => &["permissionRequest"],
        Host::Cursor => &["beforeShellExecution", "beforeMCPExecution"],
    }
}

/// Seconds the host's hook timeout is set above the hold, so the hook
/// ends (and cancels its ask) before the host kills it.
const TIMEOUT_SLACK: u32 = 30;

/// `askbridge hooks …`.
#[derive(Debug, Clone, clap::Subcommand)]
pub enum HooksCommand {
    /// Add askbridge's hook to a host's settings (other hooks stay).
    Install(InstallArgs),
    /// Take askbridge's hooks out of a host's settings.
    Uninstall(WhereArgs),
    /// Say where askbridge's hooks are installed, and whether the daemon each asks answers.
    Status(StatusArgs),
}

/// Which settings file.
#[derive(Debug, Clone, clap::Args)]
pub struct WhereArgs {
    /// The host: claude-code, codex, copilot or cursor.
    #[arg(value_parser = parse_host)]
    pub host: HostArg,
    /// `project` (the project's own settings) or `user` (every project);
    /// default: `project` for Claude Code, `user` (`$CODEX_HOME`) for Codex.
    #[arg(long, value_enum)]
    pub scope: Option<Scope>,
    /// The project directory (default: the current directory).
    #[arg(long)]
    pub dir: Option<PathBuf>,
}

/// `askbridge hooks install`.
#[derive(Debug, Clone, clap::Args)]
pub struct InstallArgs {
    #[command(flatten)]
    pub at: WhereArgs,
    #[command(flatten)]
    pub hook: HookOptions,
}

/// `askbridge hooks status`.
#[derive(Debug, Clone, clap::Args)]
pub struct StatusArgs {
    /// The project directory (default: the current directory).
    #[arg(long)]
    pub dir: Option<PathBuf>,
}

/// Whose settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Scope {
    Project,
    User,
}

impl WhereArgs {
    /// The scope asked for, or the host's usual one.
    fn scope(&self) -> Scope {
        self.scope.unwrap_or(match self.host.0 {
            Host::ClaudeCode | Host::Copilot | Host::Cursor => Scope::Project,
            Host::Codex => Scope::User,
        })
    }
}

impl Scope {
    fn name(self) -> &'static str {
        match self {
            Scope::Project => "project",
            Scope::User => "user",
        }
    }
}

/// How long `status` waits for a daemon's health.
const HEALTH_WITHIN: Duration = Duration::from_secs(3);

/// Runs a `hooks` command, printing what it did.
pub async fn run(command: HooksCommand, out: &mut dyn std::io::Write) -> anyhow::Result<()> {
    match command {
        HooksCommand::Install(args) => install(&args, out),
        HooksCommand::Uninstall(at) => uninstall(&at, out),
        HooksCommand::Status(args) => status(&args, out).await,
    }
}

fn install(install: &InstallArgs, out: &mut dyn std::io::Write) -> anyhow::Result<()> {
    let host = install.at.host.0;
    let args = &install.hook;
    args.check_target()
        .map_err(|message| anyhow::anyhow!(message))?;
    // Without `--hold`, the daemon's `[hooks] hold_seconds` decides, up to
    // an ask's longest timeout: the host must wait that long.
    let hold = args
        .hold
        .map(|hold| hold.clamp(MIN_TIMEOUT_SECONDS, MAX_TIMEOUT_SECONDS));
    let host_timeout = hold.unwrap_or(MAX_TIMEOUT_SECONDS) + TIMEOUT_SLACK;
    let program = std::env::current_exe()?;
    let mut words = vec![
        quote(&program.to_string_lossy()),
        "hook".to_owned(),
        host.id().to_owned(),
    ];
    for (flag, value) in [("--to", &args.to), ("--server", &args.server)] {
        if let Some(value) = value {
            words.extend([flag.to_owned(), quote(value)]);
        }
    }
    args.check_continue(host)
        .map_err(|message| anyhow::anyhow!(message))?;
    if args.continue_after_stop {
        words.push("--continue".to_owned());
    }
    if args.notify_on_stop {
        words.push("--notify".to_owned());
    }
    if let Some(hold) = hold {
        words.extend(["--hold".to_owned(), hold.to_string()]);
    }
    let command = words.join(" ");
    let path = settings_path(host, install.at.scope(), install.at.dir.as_deref())?;
    let before = read_settings(&path)?;
    let after = with_hook(host, &before, &command, host_timeout)
        .map_err(|problem| anyhow::anyhow!("{}: {problem}", path.display()))?;
    if Some(&after) == before.as_ref() {
        writeln!(
            out,
            "{}: already installed, nothing changed",
            path.display()
        )?;
        return Ok(());
    }
    write_settings(&path, before.is_some(), &after)?;
    writeln!(
        out,
        "{}: {} run `{command}` (host timeout {} s)",
        path.display(),
        events(host).join(", "),
        host_timeout
    )?;
    if host == Host::Codex {
        writeln!(
            out,
            "Codex runs a new hook only once trusted: review it with /hooks in Codex"
        )?;
    }
    Ok(())
}

fn uninstall(at: &WhereArgs, out: &mut dyn std::io::Write) -> anyhow::Result<()> {
    let path = settings_path(at.host.0, at.scope(), at.dir.as_deref())?;
    let Some(before) = read_settings(&path)? else {
        writeln!(out, "{}: no such file, nothing to take out", path.display())?;
        return Ok(());
    };
    let (after, removed) = without_hooks(&before)
        .map_err(|problem| anyhow::anyhow!("{}: {problem}", path.display()))?;
    if removed.is_empty() {
        writeln!(
            out,
            "{}: askbridge's hook is not there, nothing changed",
            path.display()
        )?;
        return Ok(());
    }
    write_settings(&path, true, &after)?;
    for command in removed {
        writeln!(out, "{}: took out `{command}`", path.display())?;
    }
    Ok(())
}

/// One host's settings file at one scope, and askbridge's hooks in it.
#[derive(Debug)]
pub struct Surveyed {
    pub host: Host,
    pub scope: Scope,
    pub path: PathBuf,
    /// (event, command) of each of askbridge's hooks; the reason when the
    /// file cannot be read.
    pub hooks: Result<Vec<(String, String)>, String>,
}

impl Surveyed {
    /// `Claude Code (project)`.
    pub fn label(&self) -> String {
        format!("{} ({})", self.host.name(), self.scope.name())
    }
}

/// Every host's settings for the project `dir` (default: the current
/// directory) and for the user.
pub fn survey(dir: Option<&Path>) -> anyhow::Result<Vec<Surveyed>> {
    let mut surveyed = Vec::new();
    for host in Host::ALL {
        for &scope in scopes(host) {
            let path = settings_path(host, scope, dir)?;
            let hooks = match read_settings(&path) {
                Ok(Some(settings)) => Ok(installed(&settings)),
                Ok(None) => Ok(Vec::new()),
                Err(error) => Err(format!("{error:#}")),
            };
            surveyed.push(Surveyed {
                host,
                scope,
                path,
                hooks,
            });
        }
    }
    Ok(surveyed)
}

/// The daemon a hook command asks.
pub fn server_asked(command: &str) -> String {
    server_url(server_of(command).as_deref())
}

async fn status(args: &StatusArgs, out: &mut dyn std::io::Write) -> anyhow::Result<()> {
    let mut servers = std::collections::BTreeSet::new();
    for settings in survey(args.dir.as_deref())? {
        let label = settings.label();
        let path = settings.path.display();
        match settings.hooks {
            Err(error) => writeln!(out, "{label}: {error}")?,
            Ok(found) if found.is_empty() => writeln!(out, "{label}: not installed ({path})")?,
            Ok(found) => {
                for (event, command) in found {
                    servers.insert(server_asked(&command));
                    writeln!(out, "{label}: {event} runs `{command}` ({path})")?;
                }
            }
        }
    }
    for server in servers {
        let answer = match super::daemon_client(&server) {
            Ok(client) => client.health(HEALTH_WITHIN).await.map(|_| ()),
            Err(error) => Err(error),
        };
        match answer {
            Ok(()) => writeln!(out, "daemon at {server}: answers")?,
            Err(error) => writeln!(
                out,
                "daemon at {server}: does not answer ({}); the hooks fall back to the terminal",
                explain(&error)
            )?,
        }
    }
    Ok(())
}

/// The scopes `host` reads hooks at.
fn scopes(host: Host) -> &'static [Scope] {
    match host {
        Host::Copilot => &[Scope::Project],
        Host::ClaudeCode | Host::Codex | Host::Cursor => &[Scope::Project, Scope::User],
    }
}

/// The settings file of `host` at `scope`.
fn settings_path(host: Host, scope: Scope, dir: Option<&Path>) -> anyhow::Result<PathBuf> {
    let home = || {
        std::env::var_os("HOME")
            .filter(|home| !home.is_empty())
            .map(PathBuf::from)
            .ok_or_else(|| anyhow::anyhow!("HOME is not set: cannot find the user's settings"))
    };
    let project = || -> anyhow::Result<PathBuf> {
        match dir {
            Some(dir) => Ok(dir.to_owned()),
            None => Ok(std::env::current_dir()?),
        }
    };
    Ok(match (host, scope) {
        (Host::ClaudeCode, Scope::Project) => project()?.join(".claude").join("settings.json"),
        (Host::ClaudeCode, Scope::User) => home()?.join(".claude").join("settings.json"),
        (Host::Codex, Scope::Project) => project()?.join(".codex").join("hooks.json"),
        (Host::Copilot, Scope::Project) => project()?
            .join(".github")
            .join("hooks")
            .join("askbridge.json"),
        (Host::Copilot, Scope::User) => anyhow::bail!(
            "Copilot CLI reads hooks from a repository's .github/hooks only: install with --scope project (in the repository, or --dir PATH)"
        ),
        (Host::Cursor, Scope::Project) => project()?.join(".cursor").join("hooks.json"),
        (Host::Cursor, Scope::User) => home()?.join(".cursor").join("hooks.json"),
        (Host::Codex, Scope::User) => {
            match std::env::var_os("CODEX_HOME").filter(|d| !d.is_empty()) {
                Some(codex_home) => PathBuf::from(codex_home).join("hooks.json"),
                None => home()?.join(".codex").join("hooks.json"),
            }
        }
    })
}

/// The settings as JSON; `None` when the file does not exist.
fn read_settings(path: &Path) -> anyhow::Result<Option<Value>> {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(error) => anyhow::bail!("cannot read {}: {error}", path.display()),
    };
    if text.trim().is_empty() {
        return Ok(Some(json!({})));
    }
    serde_json::from_str(&text).map(Some).map_err(|error| {
        anyhow::anyhow!("{} is not JSON ({error}); nothing changed", path.display())
    })
}

/// Writes `settings` to `path` through a temporary file and a rename,
/// keeping the old file as `….askbridge.bak` when there was one.
fn write_settings(path: &Path, existed: bool, settings: &Value) -> anyhow::Result<()> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)
            .map_err(|error| anyhow::anyhow!("cannot create {}: {error}", dir.display()))?;
    }
    let with_suffix = |suffix: &str| {
        let mut name = path.as_os_str().to_owned();
        name.push(suffix);
        PathBuf::from(name)
    };
    if existed {
        let backup = with_suffix(".askbridge.bak");
        std::fs::copy(path, &backup).map_err(|error| {
            anyhow::anyhow!("cannot keep a copy as {}: {error}", backup.display())
        })?;
    }
    let temporary = with_suffix(".askbridge.tmp");
    let mut text = serde_json::to_string_pretty(settings)?;
    text.push('\n');
    std::fs::write(&temporary, text)
        .and_then(|()| std::fs::rename(&temporary, path))
        .map_err(|error| anyhow::anyhow!("cannot write {}: {error}", path.display()))
}

/// `settings` with askbridge's hook (and no other askbridge hook) in it.
fn with_hook(
    host: Host,
    settings: &Option<Value>,
    command: &str,
    timeout: u32,
) -> Result<Value, String> {
    let (mut settings, _) = without_hooks(settings.as_ref().unwrap_or(&json!({})))?;
    let root = settings
        .as_object_mut()
        .ok_or("the settings are not a JSON object")?;
    // Cursor and Copilot CLI list the commands themselves, in a file with
    // a version.
    let entry = if host == Host::Cursor {
        root.entry("version").or_insert(json!(1));
        json!({"command": command, "timeout": timeout})
    } else if host == Host::Copilot {
        root.entry("version").or_insert(json!(1));
        json!({"type": "command", "bash": command, "timeoutSec": timeout})
    } else {
        let mut group = Map::new();
        if host == Host::ClaudeCode {
            group.insert("matcher".to_owned(), json!("*"));
        }
        group.insert(
            "hooks".to_owned(),
            json!([{"type": "command", "command": command, "timeout": timeout}]),
        );
        Value::Object(group)
    };
    let hooks = root
        .entry("hooks")
        .or_insert_with(|| json!({}))
        .as_object_mut()
        .ok_or("`hooks` is not an object")?;
    for event in events(host) {
        hooks
            .entry(*event)
            .or_insert_with(|| json!([]))
            .as_array_mut()
            .ok_or_else(|| format!("`hooks.{event}` is not a list"))?
            .push(entry.clone());
    }
    Ok(settings)
}

/// `settings` without askbridge's hooks (a group left empty goes, and
/// `hooks` itself when nothing is left), and the commands taken out.
fn without_hooks(settings: &Value) -> Result<(Value, Vec<String>), String> {
    let mut settings = settings.clone();
    let root = settings
        .as_object_mut()
        .ok_or("the settings are not a JSON object")?;
    let mut removed = Vec::new();
    let Some(hooks) = root.get_mut("hooks") else {
        return Ok((settings, removed));
    };
    let events = hooks.as_object_mut().ok_or("`hooks` is not an object")?;
    for groups in events.values_mut() {
        let Some(groups) = groups.as_array_mut() else {
            continue;
        };
        groups.retain_mut(|group| {
            // Cursor's and Copilot's entries are commands themselves.
            if let Some(command) = handler_command(group).filter(|c| is_ours(c)) {
                removed.push(command.to_owned());
                return false;
            }
            let Some(handlers) = group.get_mut("hooks").and_then(Value::as_array_mut) else {
                return true;
            };
            let before = handlers.len();
            handlers.retain(|handler| match handler_command(handler) {
                Some(command) if is_ours(command) => {
                    removed.push(command.to_owned());
                    false
                }
                _ => true,
            });
            !(before > 0 && handlers.is_empty())
        });
    }
    events.retain(|_, groups| groups.as_array().is_none_or(|groups| !groups.is_empty()));
    if events.is_empty() {
        root.remove("hooks");
    }
    Ok((settings, removed))
}

/// askbridge's hooks in `settings`: (event, command).
fn installed(settings: &Value) -> Vec<(String, String)> {
    let mut found = Vec::new();
    for (event, groups) in settings["hooks"].as_object().into_iter().flatten() {
        for group in groups.as_array().into_iter().flatten() {
            // A group of handlers, or (Cursor, Copilot) a handler itself.
            let handlers = group["hooks"]
                .as_array()
                .map_or(std::slice::from_ref(group), Vec::as_slice);
            for handler in handlers {
                if let Some(command) = handler_command(handler).filter(|c| is_ours(c)) {
                    found.push((event.clone(), command.to_owned()));
                }
            }
        }
    }
    found
}

/// A handler's command line: `command`, or Copilot CLI's `bash`.
fn handler_command(handler: &Value) -> Option<&str> {
    handler["command"]
        .as_str()
        .or_else(|| handler["bash"].as_str())
}

/// The `--server` a hook command names, if any.
fn server_of(command: &str) -> Option<String> {
    let mut words = command.split_whitespace();
    words.find(|word| *word == "--server")?;
    words.next().map(|word| word.trim_matches('\'').to_owned())
}

/// Whether a hook command runs `askbridge hook`: its program is named
/// `askbridge` and its first argument is `hook`.
fn is_ours(command: &str) -> bool {
    let command = command.trim_start();
    let (program, rest) = match command.strip_prefix('\'') {
        Some(quoted) => match quoted.split_once('\'') {
            Some((program, rest)) => (program, rest),
            None => return false,
        },
        None => command.split_once(' ').unwrap_or((command, "")),
    };
    let name = program.rsplit(['/', '\\']).next().unwrap_or(program);
    let name = name.strip_suffix(".exe").unwrap_or(name);
    name == "askbridge" && rest.trim_start().starts_with("hook ")
}

/// A word as the host's shell reads it back: as is when plain, else in
/// single quotes.
fn quote(word: &str) -> String {
    let plain = !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./:@,+=%".contains(c));
    if plain {
        word.to_owned()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const COMMAND: &str = "/usr/local/bin/askbridge hook claude-code --to telegram:42 --hold 1800";

    #[test]
    fn installing_keeps_every_other_hook_and_setting_and_twice_changes_nothing() {
        let settings = json!({
            "model": "opus",
            "hooks": {
                "PermissionRequest": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "audit.sh"}]}],
                "Stop": [{"hooks": [{"type": "command", "command": "notify.sh"}]}]
            }
        });
        let once = with_hook(Host::ClaudeCode, &Some(settings.clone()), COMMAND, 1_830)
            .expect("installed");
        let ours = json!({"matcher": "*", "hooks": [{"type": "command", "command": COMMAND, "timeout": 1_830}]});
        assert_eq!(once["model"], "opus");
        assert_eq!(
            once["hooks"]["PermissionRequest"],
            json!([{"matcher": "Bash", "hooks": [{"type": "command", "command": "audit.sh"}]}, ours])
        );
        assert_eq!(
            once["hooks"]["Stop"],
            json!([{"hooks": [{"type": "command", "command": "notify.sh"}]}, ours])
        );
        for event in ["Elicitation", "PostToolUse", "UserPromptSubmit"] {
            assert_eq!(once["hooks"][event], json!([ours]), "{event}");
        }
        let twice =
            with_hook(Host::ClaudeCode, &Some(once.clone()), COMMAND, 1_830).expect("installed");
        assert_eq!(twice, once);
        // Uninstalling gives back exactly what was there.
        let (back, removed) = without_hooks(&once).expect("uninstalled");
        assert_eq!(back, settings);
        assert_eq!(removed, [COMMAND; 5]);
    }

    #[test]
    fn a_new_install_replaces_the_old_one_and_an_empty_file_gets_just_the_hook() {
        let old =
            with_hook(Host::Codex, &None, "askbridge hook codex --hold 60", 90).expect("installed");
        let group = json!([{"hooks": [{"type": "command", "command": "askbridge hook codex --hold 60", "timeout": 90}]}]);
        assert_eq!(
            old,
            json!({"hooks": {"PermissionRequest": group, "PostToolUse": group, "UserPromptSubmit": group, "Stop": group}})
        );
        let new = with_hook(
            Host::Codex,
            &Some(old),
            "askbridge hook codex --hold 120",
            150,
        )
        .expect("installed");
        assert_eq!(
            installed(&new),
            [
                "PermissionRequest",
                "PostToolUse",
                "UserPromptSubmit",
                "Stop"
            ]
            .map(|event| (
                event.to_owned(),
                "askbridge hook codex --hold 120".to_owned()
            ))
        );
        let (empty, _) = without_hooks(&new).expect("uninstalled");
        assert_eq!(empty, json!({}));
    }

    #[test]
    fn copilot_gets_a_versioned_file_of_bash_commands_in_the_repository() {
        let once =
            with_hook(Host::Copilot, &None, "askbridge hook copilot", 150).expect("installed");
        let ours = json!({"type": "command", "bash": "askbridge hook copilot", "timeoutSec": 150});
        assert_eq!(
            once,
            json!({"version": 1, "hooks": {"permissionRequest": [ours]}})
        );
        assert_eq!(
            installed(&once),
            [(
                "permissionRequest".to_owned(),
                "askbridge hook copilot".to_owned()
            )]
        );
        let (left, removed) = without_hooks(&once).expect("uninstalled");
        assert_eq!(left, json!({"version": 1}));
        assert_eq!(removed, ["askbridge hook copilot"]);
        let dir = Path::new("/w/shop");
        assert_eq!(
            settings_path(Host::Copilot, Scope::Project, Some(dir)).expect("a path"),
            dir.join(".github/hooks/askbridge.json")
        );
        let user = settings_path(Host::Copilot, Scope::User, Some(dir)).expect_err("no user hooks");
        assert!(user.to_string().contains("--scope project"), "{user}");
    }

    #[test]
    fn cursor_gets_its_commands_listed_in_a_versioned_file() {
        let settings = json!({"hooks": {"afterFileEdit": [{"command": "fmt.sh"}]}});
        let once = with_hook(
            Host::Cursor,
            &Some(settings.clone()),
            "askbridge hook cursor",
            150,
        )
        .expect("installed");
        let ours = json!({"command": "askbridge hook cursor", "timeout": 150});
        assert_eq!(
            once,
            json!({"hooks": {
                "afterFileEdit": [{"command": "fmt.sh"}],
                "beforeShellExecution": [ours],
                "beforeMCPExecution": [ours]
            }, "version": 1})
        );
        assert_eq!(installed(&once).len(), 2);
        let (back, removed) = without_hooks(&once).expect("uninstalled");
        assert_eq!(removed.len(), 2);
        assert_eq!(back["hooks"], settings["hooks"]);
    }

    #[test]
    fn settings_that_are_not_the_expected_shape_are_refused_not_overwritten() {
        for (settings, problem) in [
            (json!([]), "the settings are not a JSON object"),
            (json!({"hooks": []}), "`hooks` is not an object"),
            (
                json!({"hooks": {"PermissionRequest": {}}}),
                "`hooks.PermissionRequest` is not a list",
            ),
        ] {
            assert_eq!(
                with_hook(Host::ClaudeCode, &Some(settings), COMMAND, 60),
                Err(problem.to_owned())
            );
        }
    }

    #[test]
    fn only_askbridge_hook_commands_are_ours() {
        for ours in [
            COMMAND,
            "askbridge hook codex",
            "'/home/a b/askbridge' hook claude-code --hold 60",
            "C:\\bin\\askbridge.exe hook codex",
        ] {
            assert!(is_ours(ours), "{ours}");
        }
        for theirs in [
            "askbridge ask --wait",
            "my-askbridge hook x",
            "hook askbridge",
            "audit.sh",
            "'unclosed hook",
        ] {
            assert!(!is_ours(theirs), "{theirs}");
        }
    }

    #[test]
    fn the_server_a_hook_asks_is_read_from_its_command() {
        assert_eq!(
            server_of("askbridge hook codex --server http://127.0.0.1:9 --hold 60").as_deref(),
            Some("http://127.0.0.1:9")
        );
        assert_eq!(
            server_of("'/a b/askbridge' hook codex --server 'http://h:1'").as_deref(),
            Some("http://h:1")
        );
        assert_eq!(server_of("askbridge hook codex"), None);
    }

    #[test]
    fn words_are_quoted_for_the_shell_only_when_needed() {
        assert_eq!(quote("telegram:-100@42"), "telegram:-100@42");
        assert_eq!(quote("/home/a b/askbridge"), "'/home/a b/askbridge'");
        assert_eq!(quote("it's"), r"'it'\''s'");
    }
}

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
use serde_json::value::RawValue;
use serde_json::{Map, Value, json};

use super::ask::{explain, server_url};
use super::hook::{HookOptions, HostArg, host_timeout, parse_host};
use super::settings_file::SettingsFile;
use crate::mcp::daemon::DaemonClient;

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
    let timeout = host_timeout(hold);
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
    let file = SettingsFile::lock(&path)?;
    let before = read_text(&file)?;
    let first = first_settings(&file);
    let after = with_hook(host, before.as_deref(), &command, timeout, first.as_ref())
        .map_err(|problem| anyhow::anyhow!("{}: {problem}", path.display()))?;
    if before
        .as_deref()
        .is_some_and(|before| same_json(before, &after))
    {
        writeln!(
            out,
            "{}: already installed, nothing changed",
            path.display()
        )?;
        return say_mode(host, install.at.dir.as_deref(), out);
    }
    file.write(before.as_deref(), &after)?;
    writeln!(
        out,
        "{}: {} run `{command}` (host timeout {} s)",
        path.display(),
        events(host).join(", "),
        timeout
    )?;
    say_mode(host, install.at.dir.as_deref(), out)?;
    if host == Host::Codex {
        let hold = hold.map_or_else(
            || "the daemon's [hooks] hold_seconds for codex (120 s unless set)".to_owned(),
            |hold| format!("{hold} s"),
        );
        writeln!(
            out,
            "Codex runs a new hook only once trusted: review it with /hooks in Codex\n\
             Codex locks its terminal while the hook waits (what you type is only queued): \
             for up to {hold} per prompt"
        )?;
    }
    Ok(())
}

/// Says what Claude Code's permission mode for the project `dir` leaves
/// askbridge unable to ask, if anything.
fn say_mode(host: Host, dir: Option<&Path>, out: &mut dyn std::io::Write) -> anyhow::Result<()> {
    if host == Host::ClaudeCode
        && let Some(limits) = claude_code_mode(dir)?.limits()
    {
        writeln!(out, "{limits}")?;
    }
    Ok(())
}

fn uninstall(at: &WhereArgs, out: &mut dyn std::io::Write) -> anyhow::Result<()> {
    let path = settings_path(at.host.0, at.scope(), at.dir.as_deref())?;
    let file = SettingsFile::lock(&path)?;
    let Some(before) = read_text(&file)? else {
        writeln!(out, "{}: no such file, nothing to take out", path.display())?;
        return Ok(());
    };
    let first = first_settings(&file);
    let (after, removed) = without_hooks(&before, first.as_ref())
        .map_err(|problem| anyhow::anyhow!("{}: {problem}", path.display()))?;
    if removed.is_empty() {
        writeln!(
            out,
            "{}: askbridge's hook is not there, nothing changed",
            path.display()
        )?;
        return Ok(());
    }
    file.write(Some(&before), &after)?;
    for command in removed {
        writeln!(out, "{}: took out `{command}`", path.display())?;
    }
    Ok(())
}

/// The locked file's text, refused (nothing changed) when it is not JSON;
/// `None` when there is no file.
fn read_text(file: &SettingsFile) -> anyhow::Result<Option<String>> {
    let Some(text) = file.read()? else {
        return Ok(None);
    };
    if !text.trim().is_empty() {
        serde_json::from_str::<Value>(&text).map_err(|error| {
            anyhow::anyhow!(
                "{} is not JSON ({error}); nothing changed",
                file.real().display()
            )
        })?;
    }
    Ok(Some(text))
}

/// The settings as they were before askbridge first changed them (the
/// first backup), when kept and readable.
fn first_settings(file: &SettingsFile) -> Option<Value> {
    serde_json::from_str(&file.first_backup()?).ok()
}

/// Whether two settings texts mean the same JSON.
fn same_json(a: &str, b: &str) -> bool {
    let parse = |text: &str| match text.trim() {
        "" => Some(json!({})),
        text => serde_json::from_str::<Value>(text).ok(),
    };
    parse(a).is_some_and(|a| Some(a) == parse(b))
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

/// Claude Code's permission mode for a project: `permissions.defaultMode`
/// from the first of its settings files that sets it, highest precedence
/// first (managed, the project's local, the project's, the user's).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClaudeCodeMode {
    /// The mode: `default`, `acceptEdits`, `plan`, `auto`,
    /// `bypassPermissions`, `dontAsk`, or whatever a file says.
    pub mode: String,
    /// The file that sets it; `None`: none does, and Claude Code's own
    /// default (auto mode since 2.1) applies.
    pub from: Option<PathBuf>,
}

/// Claude Code's managed settings, which override every other file.
const CLAUDE_CODE_MANAGED: &[&str] = &[
    "/etc/claude-code/managed-settings.json",
    "/Library/Application Support/ClaudeCode/managed-settings.json",
];

/// The permission mode Claude Code starts in for the project `dir`
/// (default: the current directory). A file that cannot be read is
/// passed over (`hooks status` and `check` say so of it elsewhere).
pub fn claude_code_mode(dir: Option<&Path>) -> anyhow::Result<ClaudeCodeMode> {
    let project = settings_path(Host::ClaudeCode, Scope::Project, dir)?;
    let mut files: Vec<PathBuf> = CLAUDE_CODE_MANAGED.iter().map(PathBuf::from).collect();
    files.push(project.with_file_name("settings.local.json"));
    files.push(project);
    files.push(settings_path(Host::ClaudeCode, Scope::User, dir)?);
    for path in files {
        if let Ok(Some(settings)) = read_settings(&path)
            && let Some(mode) = settings["permissions"]["defaultMode"].as_str()
        {
            return Ok(ClaudeCodeMode {
                mode: mode.to_owned(),
                from: Some(path),
            });
        }
    }
    Ok(ClaudeCodeMode {
        mode: "auto".to_owned(),
        from: None,
    })
}

impl ClaudeCodeMode {
    /// What askbridge cannot do in this mode, said plainly; `None` when
    /// Claude Code asks in the chat whenever it would prompt.
    pub fn limits(&self) -> Option<String> {
        let set = match &self.from {
            Some(path) => format!("set in {}", path.display()),
            None => {
                "Claude Code's default: no settings file sets permissions.defaultMode".to_owned()
            }
        };
        let what = match self.mode.as_str() {
            "auto" => {
                "its classifier decides most calls itself, and a call it flags as person-only \
                 waits at the terminal: a hook may refuse it but not allow it, so askbridge is \
                 never asked about it"
            }
            "bypassPermissions" => {
                "every call runs without asking, so askbridge is never asked about a call"
            }
            "dontAsk" => {
                "every call not already allowed is refused without asking, so askbridge is \
                 never asked about a call"
            }
            _ => return None,
        };
        Some(format!(
            "Claude Code's permission mode is {} ({set}): {what}; to be asked in the chat, set \
             \"permissions\": {{\"defaultMode\": \"default\"}} (or \"acceptEdits\") in its settings",
            self.mode
        ))
    }
}

/// The daemon a hook command asks.
pub fn server_asked(command: &str) -> String {
    server_url(server_of(command).as_deref())
}

async fn status(args: &StatusArgs, out: &mut dyn std::io::Write) -> anyhow::Result<()> {
    // Each daemon the hooks ask, and whether a file of the user's own (not
    // a repository's) names it.
    let mut servers = std::collections::BTreeMap::<String, bool>::new();
    for settings in survey(args.dir.as_deref())? {
        let label = settings.label();
        let path = settings.path.display();
        match settings.hooks {
            Err(error) => writeln!(out, "{label}: {error}")?,
            Ok(found) if found.is_empty() => writeln!(out, "{label}: not installed ({path})")?,
            Ok(found) => {
                for (event, command) in found {
                    let users = servers.entry(server_asked(&command)).or_default();
                    *users |= settings.scope == Scope::User;
                    writeln!(out, "{label}: {event} runs `{command}` ({path})")?;
                }
            }
        }
    }
    let configured = server_url(None);
    for (server, users) in servers {
        if !(users || is_loopback_url(&server) || same_server(&server, &configured)) {
            writeln!(
                out,
                "daemon at {server}: not contacted: only a repository's hook file names it, \
                 and a repository may name any server (set ASKBRIDGE_SERVER={server} to check it)"
            )?;
            continue;
        }
        // `/healthz` needs no token: none is sent.
        let answer = match DaemonClient::new(&server) {
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

/// Whether two daemon URLs are the same daemon (a trailing `/` aside).
fn same_server(a: &str, b: &str) -> bool {
    a.trim().trim_end_matches('/') == b.trim().trim_end_matches('/')
}

/// Whether a daemon URL's host is this machine: `localhost` or a
/// loopback address.
fn is_loopback_url(url: &str) -> bool {
    let Some(rest) = url
        .trim()
        .strip_prefix("http://")
        .or_else(|| url.trim().strip_prefix("https://"))
    else {
        return false;
    };
    let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
    if authority.contains('@') {
        return false;
    }
    let host = match authority.strip_prefix('[') {
        Some(bracketed) => bracketed.split(']').next().unwrap_or_default(),
        None => authority.split(':').next().unwrap_or_default(),
    };
    host.eq_ignore_ascii_case("localhost")
        || host
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
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

/// A JSON value as askbridge edits it: as read, or rebuilt. Written
/// back, a value askbridge did not change reads as it was written: a
/// number stays as written (`1e2`), an empty list stays.
#[derive(Debug)]
enum Node {
    /// The value's own text, as read.
    Read(Box<RawValue>),
    /// An object whose members askbridge looked into.
    Object(Members),
    /// A list whose items askbridge looked into.
    List(Vec<Node>),
    /// A value askbridge made.
    Made(Value),
}

/// An object's members, in their order.
#[derive(Debug, Default)]
struct Members(Vec<(String, Node)>);

impl Node {
    /// The node as an object's members; `None` when it is no object.
    fn into_object(self) -> Option<Members> {
        match self {
            Node::Read(text) => serde_json::from_str(text.get()).ok(),
            Node::Object(members) => Some(members),
            Node::List(_) | Node::Made(_) => None,
        }
    }

    /// The node as a list's items; `None` when it is no list.
    fn into_list(self) -> Option<Vec<Node>> {
        match self {
            Node::Read(text) => serde_json::from_str::<Vec<Box<RawValue>>>(text.get())
                .ok()
                .map(|items| items.into_iter().map(Node::Read).collect()),
            Node::List(items) => Some(items),
            Node::Object(_) | Node::Made(_) => None,
        }
    }

    /// The node as a JSON value (numbers as the value reads them).
    fn value(&self) -> Option<Value> {
        match self {
            Node::Read(text) => serde_json::from_str(text.get()).ok(),
            other => serde_json::to_value(other).ok(),
        }
    }
}

impl Members {
    /// Whether there is a member `name`.
    fn has(&self, name: &str) -> bool {
        self.0.iter().any(|(key, _)| key == name)
    }

    /// Takes the member `name` (the last, as a JSON reader reads it) to
    /// change it, leaving a placeholder for [`Members::put`].
    fn take(&mut self, name: &str) -> Option<Node> {
        let (_, node) = self.0.iter_mut().rev().find(|(key, _)| key == name)?;
        Some(std::mem::replace(node, Node::Made(Value::Null)))
    }

    /// Sets the member `name`, in its place, or last when new.
    fn put(&mut self, name: &str, node: Node) {
        match self.0.iter_mut().rev().find(|(key, _)| key == name) {
            Some((_, old)) => *old = node,
            None => self.0.push((name.to_owned(), node)),
        }
    }

    /// Takes out every member `name`.
    fn remove(&mut self, name: &str) {
        self.0.retain(|(key, _)| key != name);
    }
}

impl<'de> serde::Deserialize<'de> for Members {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Members, D::Error> {
        /// Reads an object's members as their own text.
        struct Visitor;
        impl<'de> serde::de::Visitor<'de> for Visitor {
            type Value = Members;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut map: A,
            ) -> Result<Members, A::Error> {
                let mut members = Vec::new();
                while let Some((key, text)) = map.next_entry::<String, Box<RawValue>>()? {
                    members.push((key, Node::Read(text)));
                }
                Ok(Members(members))
            }
        }
        deserializer.deserialize_map(Visitor)
    }
}

impl serde::Serialize for Members {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut map = serializer.serialize_map(Some(self.0.len()))?;
        for (key, node) in &self.0 {
            map.serialize_entry(key, node)?;
        }
        map.end()
    }
}

impl serde::Serialize for Node {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Node::Read(text) => text.serialize(serializer),
            Node::Object(members) => members.serialize(serializer),
            Node::List(items) => items.serialize(serializer),
            Node::Made(value) => value.serialize(serializer),
        }
    }
}

/// The settings text as an object's members: none when blank.
fn root_members(text: &str) -> Result<Members, String> {
    if text.trim().is_empty() {
        return Ok(Members::default());
    }
    serde_json::from_str(text).map_err(|_| "the settings are not a JSON object".to_owned())
}

/// The members back as the file's text.
fn settings_text(root: &Members) -> Result<String, String> {
    let mut text = serde_json::to_string_pretty(root).map_err(|error| error.to_string())?;
    text.push('\n');
    Ok(text)
}

/// `hooks` of the settings, to change; none when there is none.
fn take_hooks(root: &mut Members) -> Result<Members, String> {
    match root.take("hooks") {
        Some(hooks) => hooks
            .into_object()
            .ok_or_else(|| "`hooks` is not an object".to_owned()),
        None => Ok(Members::default()),
    }
}

/// The settings text with askbridge's hook (and no other askbridge hook)
/// in it; every other member as it was. `first` is the file before
/// askbridge first changed it ([`without_hooks`]).
fn with_hook(
    host: Host,
    settings: Option<&str>,
    command: &str,
    timeout: u32,
    first: Option<&Value>,
) -> Result<String, String> {
    let (text, _) = without_hooks(settings.unwrap_or("{}"), first)?;
    let mut root = root_members(&text)?;
    // Cursor and Copilot CLI list the commands themselves, in a file with
    // a version. Cursor's `failClosed`: a hook that fails, times out or
    // prints nothing blocks the call (askbridge always prints a decision
    // there, `ask` when it has none).
    let entry = if host == Host::Cursor {
        json!({"command": command, "timeout": timeout, "failClosed": true})
    } else if host == Host::Copilot {
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
    if matches!(host, Host::Cursor | Host::Copilot) && !root.has("version") {
        root.put("version", Node::Made(json!(1)));
    }
    let mut hooks = take_hooks(&mut root)?;
    for event in events(host) {
        let mut list = match hooks.take(event) {
            Some(list) => list
                .into_list()
                .ok_or_else(|| format!("`hooks.{event}` is not a list"))?,
            None => Vec::new(),
        };
        list.push(Node::Made(entry.clone()));
        hooks.put(event, Node::List(list));
    }
    root.put("hooks", Node::Object(hooks));
    settings_text(&root)
}

/// The settings text without askbridge's hooks, and the commands taken
/// out. A list or object askbridge empties goes, unless `first` (the file
/// before askbridge first changed it: its first backup) had it; every
/// member askbridge does not change is left as written, and with nothing
/// of askbridge's, the text as it is.
fn without_hooks(settings: &str, first: Option<&Value>) -> Result<(String, Vec<String>), String> {
    let mut root = root_members(settings)?;
    if !root.has("hooks") {
        return Ok((settings.to_owned(), Vec::new()));
    }
    let mut events = take_hooks(&mut root)?;
    let had = |event: &str| first.is_some_and(|first| first["hooks"][event].is_array());
    let mut removed = Vec::new();
    let mut emptied = Vec::new();
    for (event, groups) in &mut events.0 {
        let read = std::mem::replace(groups, Node::Made(Value::Null));
        let Node::Read(text) = read else {
            *groups = read;
            continue;
        };
        let Some(list) = Node::Read(text.clone()).into_list() else {
            *groups = Node::Read(text);
            continue;
        };
        let before = removed.len();
        let list: Vec<Node> = list
            .into_iter()
            .filter_map(|group| without_ours(group, &mut removed))
            .collect();
        if removed.len() == before {
            *groups = Node::Read(text);
            continue;
        }
        if list.is_empty() && !had(event.as_str()) {
            emptied.push(event.clone());
        }
        *groups = Node::List(list);
    }
    if removed.is_empty() {
        return Ok((settings.to_owned(), removed));
    }
    for event in &emptied {
        events.remove(event);
    }
    let had_hooks = first.is_some_and(|first| first["hooks"].is_object());
    if events.0.is_empty() && !had_hooks {
        root.remove("hooks");
    } else {
        root.put("hooks", Node::Object(events));
    }
    Ok((settings_text(&root)?, removed))
}

/// A group of handlers (or, for Cursor and Copilot CLI, a handler itself)
/// with askbridge's handlers taken out (their commands added to
/// `removed`); `None` when it held only askbridge's. A group with none of
/// askbridge's is left as it was.
fn without_ours(group: Node, removed: &mut Vec<String>) -> Option<Node> {
    let Some(value) = group.value() else {
        return Some(group);
    };
    if let Some(command) = handler_command(&value).filter(|c| is_ours(c)) {
        removed.push(command.to_owned());
        return None;
    }
    let Some(handlers) = value["hooks"].as_array() else {
        return Some(group);
    };
    let ours: Vec<Option<&str>> = handlers
        .iter()
        .map(|handler| handler_command(handler).filter(|c| is_ours(c)))
        .collect();
    if ours.iter().all(Option::is_none) {
        return Some(group);
    }
    removed.extend(ours.iter().flatten().map(|command| (*command).to_owned()));
    if ours.iter().all(Option::is_some) {
        return None;
    }
    // Some of the group's handlers are someone else's: only its list
    // changes, each of their handlers left as written.
    let mut members = group.into_object()?;
    let list = members.take("hooks")?.into_list()?;
    let theirs: Vec<Node> = list
        .into_iter()
        .zip(&ours)
        .filter(|(_, ours)| ours.is_none())
        .map(|(handler, _)| handler)
        .collect();
    members.put("hooks", Node::List(theirs));
    Some(Node::Object(members))
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

    /// [`with_hook`] on `settings` as JSON, its answer read back.
    fn install(
        host: Host,
        settings: Option<&Value>,
        command: &str,
        timeout: u32,
    ) -> Result<Value, String> {
        let text = settings.map(Value::to_string);
        with_hook(host, text.as_deref(), command, timeout, None).map(|text| parsed(&text))
    }

    /// [`without_hooks`] on `settings` as JSON, its answer read back.
    fn uninstall(settings: &Value) -> Result<(Value, Vec<String>), String> {
        without_hooks(&settings.to_string(), None).map(|(text, removed)| (parsed(&text), removed))
    }

    fn parsed(text: &str) -> Value {
        serde_json::from_str(text).unwrap_or_else(|error| panic!("{error}: {text}"))
    }

    #[test]
    fn installing_keeps_every_other_hook_and_setting_and_twice_changes_nothing() {
        let settings = json!({
            "model": "opus",
            "hooks": {
                "PermissionRequest": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "audit.sh"}]}],
                "Stop": [{"hooks": [{"type": "command", "command": "notify.sh"}]}]
            }
        });
        let once =
            install(Host::ClaudeCode, Some(&settings.clone()), COMMAND, 1_830).expect("installed");
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
            install(Host::ClaudeCode, Some(&once.clone()), COMMAND, 1_830).expect("installed");
        assert_eq!(twice, once);
        // Uninstalling gives back exactly what was there.
        let (back, removed) = uninstall(&once).expect("uninstalled");
        assert_eq!(back, settings);
        assert_eq!(removed, [COMMAND; 5]);
    }

    #[test]
    fn a_new_install_replaces_the_old_one_and_an_empty_file_gets_just_the_hook() {
        let old =
            install(Host::Codex, None, "askbridge hook codex --hold 60", 90).expect("installed");
        let group = json!([{"hooks": [{"type": "command", "command": "askbridge hook codex --hold 60", "timeout": 90}]}]);
        assert_eq!(
            old,
            json!({"hooks": {"PermissionRequest": group, "PostToolUse": group, "UserPromptSubmit": group, "Stop": group}})
        );
        let new = install(
            Host::Codex,
            Some(&old),
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
        let (empty, _) = uninstall(&new).expect("uninstalled");
        assert_eq!(empty, json!({}));
    }

    #[test]
    fn copilot_gets_a_versioned_file_of_bash_commands_in_the_repository() {
        let once = install(Host::Copilot, None, "askbridge hook copilot", 150).expect("installed");
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
        let (left, removed) = uninstall(&once).expect("uninstalled");
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
        let once = install(
            Host::Cursor,
            Some(&settings.clone()),
            "askbridge hook cursor",
            150,
        )
        .expect("installed");
        // failClosed: a hook that fails or prints nothing blocks the call.
        let ours = json!({"command": "askbridge hook cursor", "timeout": 150, "failClosed": true});
        assert_eq!(
            once,
            json!({"hooks": {
                "afterFileEdit": [{"command": "fmt.sh"}],
                "beforeShellExecution": [ours],
                "beforeMCPExecution": [ours]
            }, "version": 1})
        );
        assert_eq!(installed(&once).len(), 2);
        let (back, removed) = uninstall(&once).expect("uninstalled");
        assert_eq!(removed.len(), 2);
        assert_eq!(back["hooks"], settings["hooks"]);
    }

    #[test]
    fn uninstalling_takes_out_only_what_askbridge_added_and_leaves_the_rest_as_written() {
        let before = "{\n  \"cleanupPeriodDays\": 1e2,\n  \"env\": {\"ratio\": 0.50},\n  \"hooks\": {\n    \"Stop\": [],\n    \"Notification\": []\n  }\n}\n";
        let first: Value = parsed(before);
        let installed = with_hook(Host::ClaudeCode, Some(before), COMMAND, 1_830, Some(&first))
            .expect("installed");
        assert!(
            installed.contains("\"cleanupPeriodDays\": 1e2"),
            "{installed}"
        );
        assert_eq!(
            parsed(&installed)["hooks"]["Stop"][0]["hooks"][0]["command"],
            COMMAND
        );
        let (after, removed) = without_hooks(&installed, Some(&first)).expect("uninstalled");
        assert_eq!(removed, [COMMAND; 5]);
        // Every byte as it was: the number as written, the empty lists
        // the file had (its first backup says so), its order.
        assert_eq!(after, before);
        // Without the backup, a list askbridge emptied goes; one it did
        // not touch stays.
        let (after, _) = without_hooks(&installed, None).expect("uninstalled");
        assert_eq!(
            parsed(&after),
            json!({"cleanupPeriodDays": 100.0, "env": {"ratio": 0.5}, "hooks": {"Notification": []}})
        );
        assert!(after.contains("1e2") && after.contains("0.50"), "{after}");
    }

    #[test]
    fn a_group_shared_with_someone_elses_handler_keeps_that_handler_as_written() {
        let ours = format!("{{\"type\": \"command\", \"command\": \"{COMMAND}\"}}");
        let settings = format!(
            "{{\"hooks\": {{\"PostToolUse\": [{{\"matcher\": \"*\", \"hooks\": [{ours}, {{\"type\": \"command\", \"command\": \"log.sh\", \"timeout\": 1e1}}]}}]}}}}"
        );
        let (after, removed) = without_hooks(&settings, None).expect("uninstalled");
        assert_eq!(removed, [COMMAND]);
        assert!(after.contains("\"timeout\": 1e1"), "{after}");
        assert_eq!(
            parsed(&after)["hooks"]["PostToolUse"],
            json!([{"matcher": "*", "hooks": [{"type": "command", "command": "log.sh", "timeout": 10.0}]}])
        );
        // Nothing of askbridge's: the text is left alone.
        let (same, removed) = without_hooks(&after, None).expect("nothing");
        assert!(removed.is_empty());
        assert_eq!(same, after);
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
                install(Host::ClaudeCode, Some(&settings), COMMAND, 60),
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
    fn only_this_machines_daemons_are_loopback() {
        for loopback in [
            "http://127.0.0.1:8790",
            "http://localhost:1/",
            "https://LOCALHOST",
            "http://[::1]:8790",
            "http://127.1.2.3",
        ] {
            assert!(is_loopback_url(loopback), "{loopback}");
        }
        for elsewhere in [
            "http://192.0.2.1:8790",
            "https://askbridge.example.com",
            "http://127.0.0.1.example.com",
            "http://localhost@192.0.2.1",
            "http://[::2]:1",
            "ftp://127.0.0.1",
        ] {
            assert!(!is_loopback_url(elsewhere), "{elsewhere}");
        }
        assert!(same_server("http://h:1/", "http://h:1"));
    }

    #[test]
    fn words_are_quoted_for_the_shell_only_when_needed() {
        assert_eq!(quote("telegram:-100@42"), "telegram:-100@42");
        assert_eq!(quote("/home/a b/askbridge"), "'/home/a b/askbridge'");
        assert_eq!(quote("it's"), r"'it'\''s'");
    }
}

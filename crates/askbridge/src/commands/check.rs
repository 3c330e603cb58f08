//! `askbridge check`: whether a setup works, before serving it.
//!
//! It loads the configuration exactly as `serve` does (the file,
//! `ASKBRIDGE_*`, the flags, and the rule against listening beyond
//! loopback without a token), then looks at what the configuration names,
//! changing nothing:
//!
//! - **database** — reachable, and its migrations are this build's (none
//!   unknown; pending ones are a warning, since `serve` applies them). Read
//!   only: a SQLite file that is not there yet passes, since the first
//!   start creates it.
//! - **telegram**, **discord**, **slack**, **feishu**, **matrix**, **teams**, **email** — each configured platform,
//!   through the client its channel uses: Telegram's `getMe` (the bot's
//!   name, its privacy mode), Discord's current user and application (the
//!   Message Content intent, the interactions public key), Slack's
//!   `auth.test` (bot and workspace) and the scopes the token was granted,
//!   Feishu's bot info (the app's name; what webhook mode still needs),
//!   the Matrix homeserver's versions and the token's device and the
//!   bot's name (without opening the store a running daemon holds), the
//!   Teams bot's token from Microsoft and what Teams still needs.
//!   A platform that is not configured is listed as such.
//! - **hooks** — askbridge's coding-agent hooks in the hosts' settings
//!   (the current directory's project and the user's), and whether they
//!   ask the daemon this config runs.
//!
//! A config error is a failed check, not a crash; the checks that need the
//! config are then skipped. The others run at once, each within a time
//! limit, so a platform that never answers cannot hang the command.
//!
//! [`gather`] collects the results; [`render`] writes the list a person
//! reads, and `--json` the same as one JSON document. Exit code: 0 when no
//! check failed (warnings allowed), 1 otherwise.

use std::future::Future;
use std::io::{self, Write};
use std::time::Duration;

use askbridge_core::failure::{PlatformFailure, SetupError};
use askbridge_core::hooks::Host;
use askbridge_core::model::{ChannelKind, Place, Target};
use askbridge_discord::run::message_content_allowed;
use serde::Serialize;
use serde_json::{Map, Value, json};

use super::ConfigArgs;
use crate::config::{
    Config, ConfigError, DiscordConfig, EmailConfig, FeishuConfig, FeishuMode, MatrixConfig,
    SlackConfig, TeamsConfig, TelegramConfig,
};
use crate::error_chain as chain;
use crate::store::{self, Inspection, Migrations, StoreError};

/// How long each check may take unless `--timeout` says otherwise.
pub const DEFAULT_TIMEOUT_SECS: u64 = 10;

/// The checks after `config`, in the order they are listed.
const AFTER_CONFIG: [&str; 10] = [
    "database",
    "telegram",
    "discord",
    "slack",
    "feishu",
    "matrix",
    "teams",
    "email",
    "hooks",
    "approvals",
];

/// Arguments of `askbridge check`: the configuration as `serve` takes it,
/// and how to report.
#[derive(Debug, Clone, clap::Args)]
pub struct CheckArgs {
    /// The configuration to check.
    #[command(flatten)]
    pub config: ConfigArgs,
    /// Print one JSON document instead of the list.
    #[arg(long)]
    pub json: bool,
    /// Seconds each check may take before it fails.
    #[arg(long, value_name = "SECONDS", default_value_t = DEFAULT_TIMEOUT_SECS,
          value_parser = clap::value_parser!(u64).range(1..=300))]
    pub timeout: u64,
}

/// How a check came out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    /// It works.
    Ok,
    /// It works, with something worth knowing.
    Warning,
    /// It does not work: `serve` would fail or misbehave.
    Failed,
    /// Not checked: not configured, or the config has an error.
    Skipped,
}

impl Status {
    /// The mark the list shows.
    fn mark(self) -> &'static str {
        match self {
            Status::Ok => "✓",
            Status::Warning => "!",
            Status::Failed => "✗",
            Status::Skipped => "-",
        }
    }
}

/// One check's result.
#[derive(Debug, Clone, Serialize)]
pub struct Check {
    /// `config`, `database`, `telegram`, `discord` or `slack`.
    pub name: &'static str,
    /// How it came out.
    pub status: Status,
    /// One line for a person: what was found, or what is wrong and what to
    /// do.
    pub message: String,
    /// What was found, for scripts (names, ids, flags, versions).
    pub details: Map<String, Value>,
}

impl Check {
    fn new(name: &'static str, status: Status, message: impl Into<String>) -> Check {
        Check {
            name,
            status,
            message: message.into(),
            details: Map::new(),
        }
    }

    /// Adds one detail.
    fn with(mut self, key: &str, value: impl Into<Value>) -> Check {
        self.details.insert(key.to_owned(), value.into());
        self
    }
}

/// Every check, in order, and whether none failed.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    /// No check failed (warnings and skipped checks allowed).
    pub ok: bool,
    /// `config`, then `database`, `telegram`, `discord`, `slack`.
    pub checks: Vec<Check>,
}

impl Report {
    fn new(checks: Vec<Check>) -> Report {
        Report {
            ok: checks.iter().all(|check| check.status != Status::Failed),
            checks,
        }
    }
}

/// Runs every check against the real environment and prints the report;
/// returns whether no check failed.
pub async fn run(args: CheckArgs) -> anyhow::Result<bool> {
    let report = gather(args.config.load(), Duration::from_secs(args.timeout)).await;
    let mut out = io::stdout().lock();
    if args.json {
        serde_json::to_writer_pretty(&mut out, &report)?;
        writeln!(out)?;
    } else {
        render(&report, &mut out)?;
    }
    out.flush()?;
    Ok(report.ok)
}

/// Checks a configuration as `serve` would have loaded it (or why it was
/// refused) and what it names, each check within `limit`.
pub async fn gather(loaded: Result<Config, ConfigError>, limit: Duration) -> Report {
    let config = match loaded {
        Ok(config) => config,
        Err(error) => {
            let mut checks = vec![config_refused(&error)];
            checks.extend(AFTER_CONFIG.iter().map(|name| {
                Check::new(
                    name,
                    Status::Skipped,
                    "not checked: the config has an error",
                )
            }));
            return Report::new(checks);
        }
    };
    let (database, telegram, discord, slack, feishu, matrix, teams, email) = tokio::join!(
        within(
            limit,
            "database",
            store::redact_url(&config.database_url),
            database(&config.database_url),
        ),
        configured(limit, config.telegram.as_ref(), telegram),
        configured(limit, config.discord.as_ref(), discord),
        configured(limit, config.slack.as_ref(), slack),
        configured(limit, config.feishu.as_ref(), feishu),
        configured(limit, config.matrix.as_ref(), |matrix_config| matrix(
            matrix_config,
            &config.data_dir
        )),
        configured(limit, config.teams.as_ref(), teams),
        configured(limit, config.email.as_ref(), email),
    );
    Report::new(vec![
        config_loaded(&config),
        database,
        telegram,
        discord,
        slack,
        feishu,
        matrix,
        teams,
        email,
        hooks(&config),
        approvals(&config),
    ])
}

/// Writes the report as a person reads it: one line per check, then a
/// summary.
pub fn render(report: &Report, out: &mut impl Write) -> io::Result<()> {
    for check in &report.checks {
        writeln!(
            out,
            "{} {}: {}",
            check.status.mark(),
            check.name,
            check.message
        )?;
    }
    let count = |status| {
        report
            .checks
            .iter()
            .filter(|check| check.status == status)
            .count()
    };
    let (failed, warnings) = (count(Status::Failed), count(Status::Warning));
    writeln!(out)?;
    match (failed, warnings) {
        (0, 0) => writeln!(out, "All checks passed."),
        (0, 1) => writeln!(out, "All checks passed, one with a warning."),
        (0, n) => writeln!(out, "All checks passed, {n} with warnings."),
        (1, _) => writeln!(out, "1 check failed."),
        (n, _) => writeln!(out, "{n} checks failed."),
    }
}

/// Runs `check` within `limit`; past it, the check fails saying that
/// `counterpart` did not answer.
async fn within(
    limit: Duration,
    name: &'static str,
    counterpart: String,
    check: impl Future<Output = Check>,
) -> Check {
    match tokio::time::timeout(limit, check).await {
        Ok(check) => check,
        Err(_) => Check::new(
            name,
            Status::Failed,
            format!(
                "no answer from {counterpart} within {} s",
                limit.as_secs_f64()
            ),
        )
        .with("timeout_seconds", limit.as_secs_f64()),
    }
}

/// A platform's check when it is configured; `not configured` otherwise.
async fn configured<'a, C, F>(
    limit: Duration,
    config: Option<&'a C>,
    check: impl FnOnce(&'a C) -> F,
) -> Check
where
    C: Platform,
    F: Future<Output = Check>,
{
    match config {
        Some(config) => within(limit, C::NAME, config.counterpart(), check(config)).await,
        None => Check::new(C::NAME, Status::Skipped, "not configured"),
    }
}

/// A chat platform's configuration, as its check speaks of it.
trait Platform {
    /// The check's name.
    const NAME: &'static str;
    /// The platform's name.
    const PLATFORM: &'static str;
    /// The variable holding the bot token.
    const TOKEN_VAR: &'static str;
    /// Where a good token is found.
    const TOKEN_HINT: &'static str;
    /// The API it calls: the configured URL, else the platform's own.
    fn counterpart(&self) -> String;
}

impl Platform for TelegramConfig {
    const NAME: &'static str = "telegram";
    const PLATFORM: &'static str = "Telegram";
    const TOKEN_VAR: &'static str = "TELEGRAM_BOT_TOKEN";
    const TOKEN_HINT: &'static str = "check the token BotFather gave";
    fn counterpart(&self) -> String {
        api_name("the Bot API", self.api_url.as_deref(), "api.telegram.org")
    }
}

impl Platform for DiscordConfig {
    const NAME: &'static str = "discord";
    const PLATFORM: &'static str = "Discord";
    const TOKEN_VAR: &'static str = "DISCORD_BOT_TOKEN";
    const TOKEN_HINT: &'static str =
        "copy the token from Bot → Reset Token in the developer portal";
    fn counterpart(&self) -> String {
        api_name("Discord", self.api_url.as_deref(), "discord.com")
    }
}

impl Platform for SlackConfig {
    const NAME: &'static str = "slack";
    const PLATFORM: &'static str = "Slack";
    const TOKEN_VAR: &'static str = "SLACK_BOT_TOKEN";
    const TOKEN_HINT: &'static str =
        "copy the Bot User OAuth Token (xoxb-…) from OAuth & Permissions";
    fn counterpart(&self) -> String {
        api_name("Slack", self.api_url.as_deref(), "slack.com")
    }
}

impl Platform for FeishuConfig {
    const NAME: &'static str = "feishu";
    const PLATFORM: &'static str = "Feishu";
    const TOKEN_VAR: &'static str = "FEISHU_APP_SECRET";
    const TOKEN_HINT: &'static str =
        "copy the App ID and App Secret from Credentials & Basic Info in the developer console";
    fn counterpart(&self) -> String {
        api_name("Feishu", self.api_url.as_deref(), "open.feishu.cn")
    }
}

impl Platform for MatrixConfig {
    const NAME: &'static str = "matrix";
    const PLATFORM: &'static str = "Matrix";
    const TOKEN_VAR: &'static str = "MATRIX_ACCESS_TOKEN";
    const TOKEN_HINT: &'static str = "log the bot in once (Element: Settings → Help & About → Access Token), or set MATRIX_PASSWORD";
    fn counterpart(&self) -> String {
        format!("the homeserver at {}", self.homeserver)
    }
}

impl Platform for TeamsConfig {
    const NAME: &'static str = "teams";
    const PLATFORM: &'static str = "Teams";
    const TOKEN_VAR: &'static str = "TEAMS_APP_PASSWORD";
    const TOKEN_HINT: &'static str = "create a client secret for the bot's app (Azure portal → the bot → Configuration → Manage password, or the Teams Developer Portal → Tools → Bot management) and set app_id, TEAMS_APP_PASSWORD and, for a single-tenant bot, tenant_id";
    fn counterpart(&self) -> String {
        format!("Microsoft's login at {}", self.login_url)
    }
}

impl Platform for EmailConfig {
    const NAME: &'static str = "email";
    const PLATFORM: &'static str = "email";
    const TOKEN_VAR: &'static str = "EMAIL_SMTP_PASSWORD and EMAIL_IMAP_PASSWORD";
    const TOKEN_HINT: &'static str = "check smtp_url and imap_url (the user in the URL, @ written %40) and the passwords in EMAIL_SMTP_PASSWORD and EMAIL_IMAP_PASSWORD (an app password where the provider wants one)";
    fn counterpart(&self) -> String {
        format!(
            "the mail servers {}:{} (SMTP) and {}:{} (IMAP)",
            self.smtp.host, self.smtp.port, self.imap.host, self.imap.port
        )
    }
}

fn api_name(what: &str, api_url: Option<&str>, default: &str) -> String {
    format!("{what} at {}", api_url.unwrap_or(default))
}

/// Who the token belongs to: `ask` on the channel's own `client`. A
/// failed check when the client cannot be built, when the platform refuses
/// the token, or when it cannot be asked.
async fn identify<C, A, T>(
    config: &C,
    client: Result<A, SetupError>,
    ask: impl AsyncFnOnce(&A) -> Result<T, PlatformFailure>,
) -> Result<(A, T), Check>
where
    C: Platform,
{
    let api = client.map_err(|SetupError(message)| Check::new(C::NAME, Status::Failed, message))?;
    match ask(&api).await {
        Ok(found) => Ok((api, found)),
        Err(failure) => Err(Check::new(
            C::NAME,
            Status::Failed,
            match failure.refusal() {
                Some(reason) => format!(
                    "{} refused {}: {reason}; {}",
                    C::PLATFORM,
                    C::TOKEN_VAR,
                    C::TOKEN_HINT
                ),
                None => format!("cannot check with {}: {failure}", config.counterpart()),
            },
        )),
    }
}

// ----------------------------------------------------------------- hooks

/// `hooks`: askbridge's hooks in the coding agents' settings (the current
/// directory's project and the user's), and whether they ask the daemon
/// this config runs. None installed is not a failure: hooks are optional.
fn hooks(config: &Config) -> Check {
    let surveyed = match super::hooks::survey(None) {
        Ok(surveyed) => surveyed,
        Err(error) => {
            return Check::new(
                "hooks",
                Status::Warning,
                format!("cannot look for coding-agent hooks: {error:#}"),
            );
        }
    };
    let mut installed = Vec::new();
    let mut listed = Vec::new();
    let mut problems: Vec<String> = Vec::new();
    for settings in &surveyed {
        let found = match &settings.hooks {
            Ok(found) if found.is_empty() => continue,
            Ok(found) => found,
            Err(error) => {
                problems.push(format!("{}: {error}", settings.label()));
                continue;
            }
        };
        let events: Vec<&str> = found.iter().map(|(event, _)| event.as_str()).collect();
        listed.push(format!("{} {}", settings.label(), events.join(", ")));
        for (_, command) in found {
            let asked = super::hooks::server_asked(command);
            let problem = format!(
                "{} asks {asked}, not this daemon (http://{})",
                settings.label(),
                config.listen
            );
            if !asks(&asked, config.listen) && !problems.contains(&problem) {
                problems.push(problem);
            }
        }
        installed.push(json!({
            "host": settings.host.id(),
            "scope": settings.scope,
            "path": settings.path.display().to_string(),
            "events": events,
        }));
        if settings.host == Host::ClaudeCode
            && let Ok(mode) = super::hooks::claude_code_mode(None)
            && let Some(limits) = mode.limits()
            && !problems.contains(&limits)
        {
            problems.push(limits);
        }
    }
    let (status, message) = match (listed.is_empty(), problems.is_empty()) {
        (true, true) => (
            Status::Skipped,
            "no coding-agent hooks installed here (askbridge hooks install claude-code|codex|copilot|cursor)"
                .to_owned(),
        ),
        (_, true) => (Status::Ok, listed.join("; ")),
        (_, false) => (Status::Warning, problems.join("; ")),
    };
    Check::new("hooks", status, message).with("installed", installed)
}

// ------------------------------------------------------------- approvals

/// `approvals`: settings that let someone other than the approver answer
/// an approval, or that leave a channel unable to carry one — a warning
/// each, saying what it risks.
fn approvals(config: &Config) -> Check {
    let mut risks = Vec::new();
    let hooks_web = config
        .hooks
        .to
        .as_ref()
        .is_some_and(|to| matches!(to.place, Place::Web { .. }));
    if config.api_token.is_none() && hooks_web {
        risks.push(
            "the web page cannot approve without an api_token (any process on this machine \
             could otherwise approve itself): approvals to `web` are refused; set \
             ASKBRIDGE_API_TOKEN, or name a chat with --to"
                .to_owned(),
        );
    }
    if let Some(email) = &config.email
        && !email.require_authentication
    {
        risks.push(
            "email cannot approve without [email] require_authentication = true: anyone can \
             write a From: line, so approvals to email are refused"
                .to_owned(),
        );
    }
    if let Some(teams) = &config.teams
        && teams.insecure_skip_token_check
    {
        risks.push(
            "teams.insecure_skip_token_check is on: anyone who reaches /teams/messages can \
             answer as any Teams user, approvals included; for tests only"
                .to_owned(),
        );
    }
    let skipped: Vec<String> = config
        .defaults
        .escalate
        .iter()
        .filter(|step| step.to.person().is_none())
        .map(|step| step.to.to_string())
        .collect();
    let mut message = if risks.is_empty() {
        "only the person each place names approves".to_owned()
    } else {
        risks.join("; ")
    };
    if !skipped.is_empty() {
        message.push_str(&format!(
            " ([defaults] escalate to {} is left out for approvals: it names no person)",
            skipped.join(", ")
        ));
    }
    let status = if risks.is_empty() {
        Status::Ok
    } else {
        Status::Warning
    };
    Check::new("approvals", status, message)
}

/// Whether a hook asking `server` reaches a daemon listening on
/// `listen`: the same port, and the same address (`localhost` for a
/// loopback one; any, when it listens on all of them).
fn asks(server: &str, listen: std::net::SocketAddr) -> bool {
    let authority = server.strip_prefix("http://").unwrap_or(server);
    let Some((host, port)) = authority.trim_end_matches('/').rsplit_once(':') else {
        return false;
    };
    if port.parse::<u16>().ok() != Some(listen.port()) {
        return false;
    }
    let host = host.trim_start_matches('[').trim_end_matches(']');
    listen.ip().is_unspecified()
        || match host {
            "localhost" => listen.ip().is_loopback(),
            host => host.parse::<std::net::IpAddr>().ok() == Some(listen.ip()),
        }
}

// ---------------------------------------------------------------- config

/// The config loaded: which file, and what it turns on.
fn config_loaded(config: &Config) -> Check {
    let file = config.file.as_ref().map(|file| file.display().to_string());
    let on: Vec<&str> = config
        .channels()
        .into_iter()
        .map(ChannelKind::as_str)
        .collect();
    let read = file
        .clone()
        .unwrap_or_else(|| "no config file; defaults and environment".to_owned());
    let defaults = &config.defaults;
    let off = |target: &Target| !config.channels().contains(&target.place.channel());
    let check = if off(&defaults.target) {
        Check::new(
            "config",
            Status::Warning,
            format!(
                "{read}: default_target is {}, but the {} channel is off, so asks without a \"to\" would end undelivered (delivery_failed)",
                defaults.target,
                defaults.target.place.channel().as_str()
            ),
        )
    } else if let Some(step) = defaults.escalate.iter().find(|step| off(&step.to)) {
        Check::new(
            "config",
            Status::Warning,
            format!(
                "{read}: defaults.escalate passes asks on to {}, but the {} channel is off, so that step would not be posted",
                step.to,
                step.to.place.channel().as_str()
            ),
        )
    } else {
        Check::new("config", Status::Ok, read)
    };
    check
        .with("file", file)
        .with("listen", config.listen.to_string())
        .with("data_dir", config.data_dir.display().to_string())
        .with("database_url", store::redact_url(&config.database_url))
        .with("default_target", defaults.target.to_string())
        .with("channels", on)
}

/// The config refused: the error names the key and where it came from.
fn config_refused(error: &ConfigError) -> Check {
    Check::new("config", Status::Failed, error.to_string())
        .with("key", error.key())
        .with("source", error.origin().to_string())
}

// -------------------------------------------------------------- database

/// The database, looked at without changing it.
async fn database(url: &str) -> Check {
    let shown = store::redact_url(url);
    let check = match store::inspect(url).await {
        Ok(Inspection::Missing(path)) => Check::new(
            "database",
            Status::Ok,
            format!("{shown}: not created yet; `askbridge serve` creates it on first start"),
        )
        .with("backend", "sqlite")
        .with("exists", false)
        .with("path", path.display().to_string()),
        Ok(Inspection::InMemory) => Check::new(
            "database",
            Status::Ok,
            format!("{shown}: in memory; every start begins empty, asks do not survive a restart"),
        )
        .with("backend", "sqlite"),
        Ok(Inspection::Migrations(migrations)) => migrations_check(&shown, &migrations),
        Err(error) => Check::new(
            "database",
            Status::Failed,
            format!("cannot open {shown}: {}", store_reason(&error)),
        ),
    };
    check.with("url", shown)
}

/// Whether the migrations are this build's, and if not, what `serve`
/// would do about it: migrations still to apply are a warning (`serve`
/// applies them), any other difference a failure (`serve` would refuse).
fn migrations_check(shown: &str, found: &Migrations) -> Check {
    let listed = |versions: &[i64]| {
        versions
            .iter()
            .map(|version| format!("#{version}"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let mut problems = Vec::new();
    let refused =
        !found.unknown.is_empty() || !found.changed.is_empty() || !found.failed.is_empty();
    if !found.pending.is_empty() {
        let pending: Vec<String> = found
            .pending
            .iter()
            .map(|(version, description)| format!("#{version} {description}"))
            .collect();
        let what = if found.applied == 0 && found.unknown.is_empty() {
            "askbridge's tables are not there yet"
        } else {
            "the database is older than this build"
        };
        problems.push(format!(
            "{what}: {} not applied ({}); `askbridge serve` applies {} when it starts",
            plural(pending.len(), "migration"),
            pending.join(", "),
            if pending.len() == 1 { "it" } else { "them" }
        ));
    }
    if !found.unknown.is_empty() {
        problems.push(format!(
            "the database is newer than this build: it has {} this build does not know ({}); \
             upgrade askbridge (`serve` would refuse to start)",
            plural(found.unknown.len(), "migration"),
            listed(&found.unknown)
        ));
    }
    if !found.changed.is_empty() {
        problems.push(format!(
            "{} applied differently from this build's ({}); `serve` would refuse to start",
            plural(found.changed.len(), "migration was"),
            listed(&found.changed)
        ));
    }
    if !found.failed.is_empty() {
        problems.push(format!(
            "{} failed partway ({}); `serve` would refuse to start until it is repaired",
            plural(found.failed.len(), "migration"),
            listed(&found.failed)
        ));
    }
    let check = if problems.is_empty() {
        Check::new(
            "database",
            Status::Ok,
            format!(
                "{shown}: reachable, migrations current ({} applied)",
                found.applied
            ),
        )
    } else {
        Check::new(
            "database",
            if refused {
                Status::Failed
            } else {
                Status::Warning
            },
            format!("{shown}: {}", problems.join("; ")),
        )
    };
    let pending: Vec<Value> = found
        .pending
        .iter()
        .map(|(version, description)| json!({"version": version, "description": description}))
        .collect();
    check
        .with(
            "backend",
            format!("{:?}", found.backend).to_ascii_lowercase(),
        )
        .with("applied", found.applied)
        .with("pending", pending)
        .with("unknown", found.unknown.clone())
        .with("changed", found.changed.clone())
        .with("failed", found.failed.clone())
}

/// `n thing` or `n things` (`was` becomes `were`).
fn plural(n: usize, thing: &str) -> String {
    match (n, thing.strip_suffix(" was")) {
        (1, _) => format!("1 {thing}"),
        (_, Some(noun)) => format!("{n} {noun}s were"),
        (_, None) => format!("{n} {thing}s"),
    }
}

/// Why the database could not be opened, without the store's own
/// wrapping words.
fn store_reason(error: &StoreError) -> String {
    match error {
        StoreError::Database(error) => chain(error),
        other => chain(other),
    }
}

// -------------------------------------------------------------- telegram

/// `getMe`: the bot's name and privacy mode.
async fn telegram(config: &TelegramConfig) -> Check {
    let client = crate::channels::telegram::client(config);
    let me = match identify(config, client, async |api| api.me().await).await {
        Ok((_, me)) => me,
        Err(failed) => return failed,
    };
    let name = format!("@{}", me.user.username.as_deref().unwrap_or("?"));
    let reads_all = me.can_read_all_group_messages;
    let check = if reads_all {
        Check::new("telegram", Status::Ok, format!("{name} (privacy mode off)"))
    } else {
        Check::new(
            "telegram",
            Status::Warning,
            format!(
                "{name} (privacy mode on): in groups, typed answers reach the bot only when \
                 they reply to its message (buttons and private chats always work); to read \
                 every group message, make the bot a group admin, or turn privacy mode off \
                 (@BotFather → /setprivacy → Disable) and add the bot to its groups again"
            ),
        )
    };
    check
        .with("id", me.user.id.0)
        .with("username", me.user.username.clone())
        .with("can_read_all_group_messages", reads_all)
}

// --------------------------------------------------------------- discord

/// The bot user, and its application: the Message Content intent and the
/// interactions public key.
async fn discord(config: &DiscordConfig) -> Check {
    let client = crate::channels::discord::client(config);
    let (api, me) = match identify(config, client, async |api| api.me().await).await {
        Ok(found) => found,
        Err(failed) => return failed,
    };
    let name = me.name.clone();
    let base = |status, message: String| {
        Check::new("discord", status, message)
            .with("id", me.id.get().to_string())
            .with("username", name.clone())
    };
    let application = match api.application().await {
        Ok(application) => application,
        Err(failure) => {
            return base(
                Status::Warning,
                format!(
                    "{name}: cannot read its application ({failure}); the Message Content intent was not checked"
                ),
            );
        }
    };
    let flags = application.flags.map(|flags| flags.bits());
    let public_key_matches = config
        .public_key
        .as_deref()
        .map(|key| key.eq_ignore_ascii_case(application.verify_key.trim()));
    let (status, message) = if public_key_matches == Some(false) {
        (
            Status::Failed,
            format!(
                "{name}: DISCORD_PUBLIC_KEY is not this application's public key (General \
                 Information → Public Key): every interaction at /discord/interactions would be refused"
            ),
        )
    } else {
        match message_content_allowed(&application) {
            Some(true) => (Status::Ok, format!("{name} (Message Content intent on)")),
            Some(false) => (
                Status::Warning,
                format!(
                    "{name}: the Message Content intent is off, so typed replies in servers are \
                     seen only when they mention the bot (buttons, menus, modals and DMs work); \
                     switch on Bot → Privileged Gateway Intents → Message Content Intent in the \
                     developer portal"
                ),
            ),
            None => (
                Status::Warning,
                format!(
                    "{name}: Discord did not say the application's flags; the Message Content intent was not checked"
                ),
            ),
        }
    };
    base(status, message)
        .with("application_id", application.id.get().to_string())
        .with("application_flags", flags)
        .with("message_content", message_content_allowed(&application))
        .with("public_key_matches", public_key_matches)
}

// ----------------------------------------------------------------- slack

/// `auth.test`: the bot and its workspace; and the scopes the token was
/// granted, when Slack says.
async fn slack(config: &SlackConfig) -> Check {
    use crate::channels::slack::BOT_SCOPES;
    let client = crate::channels::slack::client(config);
    let (api, me) = match identify(config, client, async |api| api.auth_test().await).await {
        Ok(found) => found,
        Err(failed) => return failed,
    };
    let name = format!(
        "@{}{}",
        me.user.as_deref().unwrap_or(&me.user_id.0),
        me.team
            .as_deref()
            .map(|team| format!(" in {team}"))
            .unwrap_or_default()
    );
    let granted = api.granted_scopes().await.ok().flatten();
    let missing: Vec<(&str, &str)> = match &granted {
        Some(granted) => BOT_SCOPES
            .iter()
            .copied()
            .filter(|(scope, _)| !granted.iter().any(|g| g == scope))
            .collect(),
        None => Vec::new(),
    };
    let described: Vec<String> = missing
        .iter()
        .map(|(scope, why)| format!("{scope} ({why})"))
        .collect();
    let add = "add them under OAuth & Permissions → Bot Token Scopes, then reinstall the app";
    let (status, message) = match (&granted, missing.first()) {
        (None, _) => (
            Status::Ok,
            format!("{name} (the token's scopes were not reported)"),
        ),
        (Some(_), None) => (
            Status::Ok,
            format!("{name} (every scope askbridge uses granted)"),
        ),
        (Some(_), Some(_)) if missing.iter().any(|(scope, _)| *scope == "chat:write") => (
            Status::Failed,
            format!(
                "{name}: missing scopes {}: without chat:write nothing can be posted; {add}",
                described.join(", ")
            ),
        ),
        (Some(_), Some(_)) => (
            Status::Warning,
            format!("{name}: missing scopes {}; {add}", described.join(", ")),
        ),
    };
    Check::new("slack", status, message)
        .with("user_id", me.user_id.0.clone())
        .with("user", me.user.clone())
        .with("team_id", me.team_id.as_ref().map(|team| team.0.clone()))
        .with("team", me.team.clone())
        .with("scopes", granted)
        .with(
            "missing_scopes",
            missing.iter().map(|(scope, _)| *scope).collect::<Vec<_>>(),
        )
}

// ---------------------------------------------------------------- feishu

/// The bot's info: the app's name, and (webhook mode) whether pushes can
/// be told from forgeries beyond the encrypt key.
async fn feishu(config: &FeishuConfig) -> Check {
    let client = crate::channels::feishu::client(config);
    let (_, bot) = match identify(config, client, async |api| api.bot_info().await).await {
        Ok(found) => found,
        Err(failed) => return failed,
    };
    let mode = match config.mode {
        FeishuMode::LongConnection => "long connection",
        FeishuMode::Webhook { .. } => "webhook",
    };
    let (status, message) = match (&config.mode, &config.verification_token) {
        (FeishuMode::Webhook { .. }, None) => (
            Status::Warning,
            format!(
                "bot {} ({mode}): FEISHU_VERIFICATION_TOKEN is not set, so pushes are not matched to the app's token; copy it from Events & Callbacks → Encryption Strategy",
                bot.name
            ),
        ),
        _ => (
            Status::Ok,
            format!(
                "bot {} ({mode}); the app needs im:message and im:message:send_as_bot (contact:user.base:readonly for names), and the im.message.receive_v1 event and card callbacks subscribed",
                bot.name
            ),
        ),
    };
    Check::new("feishu", status, message)
        .with("bot", bot.name.clone())
        .with("open_id", bot.open_id.clone())
        .with("mode", mode)
}

// ---------------------------------------------------------------- matrix

/// The homeserver's versions and the bot's login: the token's device and
/// the bot's display name, or that the first start logs in by password.
async fn matrix(config: &MatrixConfig, data_dir: &std::path::Path) -> Check {
    let login = crate::channels::matrix::login(config, data_dir);
    let identity = match askbridge_matrix::run::identify(&login).await {
        Ok(identity) => identity,
        Err(reason) => {
            return Check::new(
                "matrix",
                Status::Failed,
                format!(
                    "{}: {reason}; {}",
                    config.counterpart(),
                    MatrixConfig::TOKEN_HINT
                ),
            );
        }
    };
    let newest = identity.versions.last().cloned().unwrap_or_default();
    let name = identity
        .display_name
        .clone()
        .unwrap_or_else(|| config.user_id.clone());
    let message = match &identity.device_id {
        Some(device) => format!(
            "bot {name} ({}, device {device}) on a homeserver speaking Matrix {newest}",
            config.user_id
        ),
        None => format!(
            "bot {} on a homeserver speaking Matrix {newest}; the first start logs in with MATRIX_PASSWORD and keeps the session",
            config.user_id
        ),
    };
    Check::new("matrix", Status::Ok, message)
        .with("user_id", config.user_id.clone())
        .with("display_name", identity.display_name)
        .with("device_id", identity.device_id)
        .with("homeserver_versions", identity.versions)
}

// ---------------------------------------------------------------- email

/// Both mail servers take the bot's login, and its folder opens.
async fn email(config: &EmailConfig) -> Check {
    let failed = |what: &str, error: PlatformFailure| {
        Check::new(
            "email",
            Status::Failed,
            format!("{what}: {error}; {}", EmailConfig::TOKEN_HINT),
        )
    };
    let smtp = match askbridge_email::run::Smtp::new(&config.smtp) {
        Ok(smtp) => smtp,
        Err(reason) => return Check::new("email", Status::Failed, reason.to_string()),
    };
    let smtp_at = format!("SMTP {}:{}", config.smtp.host, config.smtp.port);
    if let Err(error) = smtp.check().await {
        return failed(&smtp_at, error);
    }
    let imap_at = format!("IMAP {}:{}", config.imap.host, config.imap.port);
    let mailbox = match askbridge_email::run::Mailbox::open(&config.imap, &config.folder).await {
        Ok(mailbox) => mailbox,
        Err(error) => return failed(&imap_at, error),
    };
    let idle = mailbox.has_idle();
    mailbox.close().await;
    let waits = match idle {
        true => "replies are heard at once (IDLE)".to_owned(),
        false => format!(
            "the server has no IDLE: the folder is looked at every {} s",
            config.poll.as_secs()
        ),
    };
    Check::new(
        "email",
        Status::Ok,
        format!(
            "{smtp_at} takes the login; {imap_at} folder {:?} opens as {}; {waits}",
            config.folder,
            config.imap.user.as_deref().unwrap_or("(no user)")
        ),
    )
    .with("from", config.from.clone())
    .with("folder", config.folder.clone())
    .with("idle", idle)
}

// ---------------------------------------------------------------- teams

/// The bot's token from Microsoft: its app id and secret work. What
/// Teams itself needs is said too: the messaging endpoint, and the app
/// installed where asks go.
async fn teams(config: &TeamsConfig) -> Check {
    let connector = match crate::channels::teams::connector(config) {
        Ok(connector) => connector,
        Err(reason) => return Check::new("teams", Status::Failed, reason.to_string()),
    };
    if let Err(error) = connector.token().await {
        return Check::new(
            "teams",
            Status::Failed,
            format!(
                "{}: {error}; {}",
                config.counterpart(),
                TeamsConfig::TOKEN_HINT
            ),
        );
    }
    let tenancy = match &config.tenant_id {
        Some(tenant) => format!("single-tenant (tenant {tenant})"),
        None => "multi-tenant".to_owned(),
    };
    let mut message = format!(
        "bot {} ({tenancy}) has a token; Teams must post to https://<this host>{} \
         (the bot's messaging endpoint), and the app (its manifest naming this bot id, \
         scopes team, groupChat and personal) must be installed where asks go",
        config.app_id,
        crate::channels::teams::MESSAGES_PATH
    );
    let mut status = Status::Ok;
    if config.insecure_skip_token_check {
        status = Status::Warning;
        message.push_str(
            "; teams.insecure_skip_token_check is on: tokens of what Teams posts are not checked",
        );
    }
    Check::new("teams", status, message)
        .with("app_id", config.app_id.clone())
        .with("tenant_id", config.tenant_id.clone())
        .with("endpoint", crate::channels::teams::MESSAGES_PATH)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rendered(report: &Report) -> String {
        let mut out = Vec::new();
        render(report, &mut out).expect("render");
        String::from_utf8(out).expect("UTF-8")
    }

    #[test]
    fn check_the_list_has_one_line_per_check_and_a_summary() {
        let report = Report::new(vec![
            Check::new("config", Status::Ok, "config/askbridge.toml"),
            Check::new("telegram", Status::Warning, "@bot (privacy mode on): …"),
            Check::new("slack", Status::Skipped, "not configured"),
        ]);
        assert!(report.ok);
        assert_eq!(
            rendered(&report),
            "✓ config: config/askbridge.toml\n! telegram: @bot (privacy mode on): …\n\
             - slack: not configured\n\nAll checks passed, one with a warning.\n"
        );
        let report = Report::new(vec![
            Check::new("config", Status::Ok, "x"),
            Check::new("database", Status::Failed, "cannot open"),
        ]);
        assert!(!report.ok);
        assert!(rendered(&report).ends_with("✗ database: cannot open\n\n1 check failed.\n"));
    }

    #[test]
    fn check_the_json_shape() {
        let report = Report::new(vec![
            Check::new("config", Status::Ok, "x").with("file", Value::Null),
        ]);
        assert_eq!(
            serde_json::to_value(&report).expect("JSON"),
            json!({"ok": true, "checks": [
                {"name": "config", "status": "ok", "message": "x", "details": {"file": null}}
            ]})
        );
    }

    #[test]
    fn check_plurals() {
        assert_eq!(plural(1, "migration"), "1 migration");
        assert_eq!(plural(2, "migration"), "2 migrations");
        assert_eq!(plural(1, "migration was"), "1 migration was");
        assert_eq!(plural(3, "migration was"), "3 migrations were");
    }

    #[tokio::test]
    async fn check_a_config_error_skips_the_rest() {
        let loaded = crate::config::load(None, &crate::config::Flags::default(), |var| {
            (var == "ASKBRIDGE_LISTEN").then(|| "nope".to_owned())
        });
        let report = gather(loaded, Duration::from_secs(1)).await;
        assert!(!report.ok);
        let names: Vec<&str> = report.checks.iter().map(|check| check.name).collect();
        let expected: Vec<&str> = std::iter::once("config").chain(AFTER_CONFIG).collect();
        assert_eq!(names, expected);
        assert_eq!(report.checks[0].status, Status::Failed);
        assert_eq!(report.checks[0].details["key"], "listen");
        assert_eq!(report.checks[0].details["source"], "ASKBRIDGE_LISTEN");
        assert!(
            report.checks[1..]
                .iter()
                .all(|check| check.status == Status::Skipped)
        );
    }

    #[tokio::test]
    async fn check_a_silent_counterpart_fails_after_the_limit() {
        let check = within(
            Duration::from_millis(10),
            "telegram",
            "the Bot API at http://127.0.0.1:9/".to_owned(),
            std::future::pending(),
        )
        .await;
        assert_eq!(check.status, Status::Failed);
        assert_eq!(
            check.message,
            "no answer from the Bot API at http://127.0.0.1:9/ within 0.01 s"
        );
    }
}

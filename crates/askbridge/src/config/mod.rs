//! Configuration: `askbridge.toml` plus `ASKBRIDGE_*` overrides plus
//! command-line flags, validated into a typed [`Config`].
//!
//! Two stages, as ripgrep does with its flags:
//!
//! 1. [`RawConfig`]: plain serde structs read from TOML (unknown keys are
//!    errors), then [`RawConfig::apply_env`] and [`RawConfig::apply_flags`]
//!    lay the environment and the flags over it. Each value remembers where
//!    it came from, so an error names the file or the variable.
//! 2. [`RawConfig::validate`] turns it into a [`Config`] of typed values
//!    (`SocketAddr`, [`Target`], [`Secret`]) with every default filled in.
//!
//! Nothing here reads a file or the environment by itself except [`load`],
//! which the commands call; everything else takes text and values, so tests
//! run it in-process. Other crates never see this module: they take the
//! typed parts they need.
//!
//! What every part shares is here: [`Config`], [`RawConfig`] and its
//! `settings!` table, [`Origin`], [`ConfigError`], [`load`], the readers of
//! variables and the rule for the keys every chat platform has. Each chat
//! platform's section is in its own file (`telegram.rs`, `discord.rs`,
//! `slack.rs`, `feishu.rs`, `matrix.rs`, `teams.rs`, `email.rs`): its typed config, its section as
//! written, the rules it is checked by and their tests.
//!
//! With no config at all: listen on `127.0.0.1:8790`, the web page on,
//! SQLite at `.askbridge/askbridge.db` under the working directory.

use std::collections::BTreeMap;
use std::fmt;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};

use askbridge_core::model::limits::{MAX_TIMEOUT_SECONDS, MIN_TIMEOUT_SECONDS};
use askbridge_core::model::{AskDefaults, ChannelKind, Target, Verified};
use askbridge_core::render::{Locale, Mode};
use serde::{Deserialize, Serialize};

mod discord;
mod email;
mod feishu;
mod matrix;
mod slack;
mod teams;
mod telegram;

pub use self::discord::{DiscordConfig, RawDiscord};
pub use self::email::{EmailConfig, RawEmail};
pub use self::feishu::{FeishuConfig, FeishuMode, RawFeishu};
pub use self::matrix::{MatrixConfig, RawMatrix};
pub use self::slack::{RawSlack, SlackConfig, SlackMode};
pub use self::teams::{RawTeams, TeamsConfig};
pub use self::telegram::{RawTelegram, TelegramConfig, TelegramMode};

/// The address used when none is configured.
pub const DEFAULT_LISTEN: &str = "127.0.0.1:8790";
/// The data directory used when none is configured (relative to the
/// working directory).
pub const DEFAULT_DATA_DIR: &str = ".askbridge";
/// The config file read when it exists and no other is named.
pub const DEFAULT_CONFIG_FILE: &str = "config/askbridge.toml";
/// The default request body limit: 1 MiB.
pub const DEFAULT_MAX_BODY_BYTES: usize = 1024 * 1024;
/// The smallest request body limit accepted.
pub const MIN_MAX_BODY_BYTES: usize = 1024;
/// The file name of the default SQLite database inside the data directory.
pub const DATABASE_FILE: &str = "askbridge.db";

/// A secret (an API token): compared and sent, never printed.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    /// Wraps a secret value.
    pub fn new(value: impl Into<String>) -> Secret {
        Secret(value.into())
    }

    /// The secret itself, for comparing or sending; never log it.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("[redacted]")
    }
}

/// The validated configuration of the daemon.
#[derive(Debug, Clone)]
pub struct Config {
    /// Where the HTTP server listens.
    pub listen: SocketAddr,
    /// Where `listen` came from, for messages about it.
    pub listen_origin: Origin,
    /// Directory for the SQLite database (created on start).
    pub data_dir: PathBuf,
    /// `sqlite://…` (default `sqlite://<data_dir>/askbridge.db`) or
    /// `postgres://…` (several instances sharing one database).
    pub database_url: String,
    /// When set, every `/v1`, `/mcp` and `/metrics` request needs
    /// `Authorization: Bearer <token>`. Required to listen beyond loopback.
    pub api_token: Option<Secret>,
    /// What asks that do not say get: where they go (`default_target`,
    /// default `web`), their reminders and escalation (`[defaults]`, default
    /// none).
    pub defaults: AskDefaults,
    /// Cancel an ask when the agent's waiting `POST /v1/asks?wait=`
    /// connection closes before the outcome (default true).
    pub cancel_on_disconnect: bool,
    /// The daemon's address as people's browsers reach it
    /// (`https://askbridge.example.com`), for links in what it sends;
    /// `None`: no links.
    pub public_url: Option<String>,
    /// The built-in web channel.
    pub web: WebConfig,
    /// MCP over streamable HTTP at `/mcp`.
    pub mcp: McpConfig,
    /// HTTP limits.
    pub http: HttpConfig,
    /// Several instances on one database.
    pub cluster: ClusterConfig,
    /// The Telegram channel, when it is on.
    pub telegram: Option<TelegramConfig>,
    /// The Discord channel, when it is on.
    pub discord: Option<DiscordConfig>,
    /// The Slack channel, when it is on.
    pub slack: Option<SlackConfig>,
    /// The Feishu / Lark channel, when it is on.
    pub feishu: Option<FeishuConfig>,
    /// The Matrix channel, when it is on.
    pub matrix: Option<MatrixConfig>,
    /// The Microsoft Teams channel, when it is on.
    pub teams: Option<TeamsConfig>,
    /// The email channel, when it is on.
    pub email: Option<EmailConfig>,
    /// How coding agents' hooks ask (`[hooks]`).
    pub hooks: HooksConfig,
    /// Webhooks (`[webhooks]`), when a secret to sign them is set.
    pub webhooks: Option<WebhooksConfig>,
    /// The config file that was read, if any.
    pub file: Option<PathBuf>,
}

/// `[webhooks]`: where asks' `callbackUrl`s may point, and how their
/// deliveries are signed and retried.
#[derive(Debug, Clone)]
pub struct WebhooksConfig {
    /// `ASKBRIDGE_WEBHOOK_SECRET`: the secrets that sign each delivery,
    /// the first first (several while one is rotated out).
    pub secrets: Vec<Secret>,
    /// Hosts a `callbackUrl` may name: exact hosts, `*.example.com`, or
    /// `*` (any host with public addresses).
    pub allowed_hosts: Vec<String>,
    /// Follow redirects (each checked like the URL itself); default off.
    pub follow_redirects: bool,
    /// The wait before the first retry; doubled each time (default 1 s).
    pub first_retry: std::time::Duration,
}

/// The longest `webhooks.first_retry_ms`: an hour.
const MAX_FIRST_RETRY_MS: u64 = 3_600_000;

/// `[hooks]`: how `askbridge hook` asks for coding agents. The hooks read
/// it from the daemon (`GET /v1/hooks`); a hook's own flags come first.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HooksConfig {
    /// Where a hook without `--to` asks; `None`: the default target.
    pub to: Option<Target>,
    /// Seconds a call waits for the person before the host asks in its
    /// terminal, by who asks ([`HOLD_KEYS`]).
    pub hold_seconds: BTreeMap<&'static str, u32>,
    /// Tools never asked about in a chat: the host decides in its terminal.
    pub never_ask: Vec<String>,
    /// When an agent finishes its turn, post its last message and hand
    /// the reply back as its next instruction (as `--continue` does).
    pub continue_after_stop: bool,
    /// When an agent finishes its turn, post its last message as a notice
    /// that waits for nothing (as `--notify` does).
    pub notify_on_stop: bool,
}

/// Who a hold is for: each host, and Claude Code's subagents.
pub const HOLD_KEYS: [&str; 5] = ["claude-code", "subagent", "codex", "copilot", "cursor"];

/// How long a call waits unless `[hooks] hold_seconds` says: long for a
/// Claude Code session, short for its subagents (their work should not
/// stall) and for the hosts that lock their terminal while a hook runs.
pub fn default_hold(key: &str) -> u32 {
    match key {
        "claude-code" => 1_800,
        _ => 120,
    }
}

impl Default for HooksConfig {
    fn default() -> HooksConfig {
        HooksConfig {
            to: None,
            hold_seconds: HOLD_KEYS.map(|key| (key, default_hold(key))).into(),
            never_ask: Vec::new(),
            continue_after_stop: false,
            notify_on_stop: false,
        }
    }
}

/// `[cluster]`: several instances on one (Postgres) database.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClusterConfig {
    /// This instance's name; `None`: the one kept in `data_dir`
    /// ([`crate::instance`]).
    pub instance: Option<String>,
    /// How long a lease lasts unless renewed: the longest a dead
    /// instance's bot connections and undelivered asks wait for another
    /// to take them over (default 10 seconds).
    pub lease: std::time::Duration,
}

/// Default `[cluster] lease_seconds`.
pub const DEFAULT_LEASE_SECONDS: u64 = 10;
/// Allowed `[cluster] lease_seconds`.
pub const LEASE_SECONDS: std::ops::RangeInclusive<u64> = 1..=300;

/// `[web]`: the built-in web channel.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WebConfig {
    /// Serve the page at `/` and deliver `web` asks to it (default true).
    pub enabled: bool,
    /// The page's language when neither its own switch nor the browser's
    /// `Accept-Language` names a supported one (default `en`).
    pub locale: Locale,
}

/// `[mcp]`: the streamable-HTTP MCP endpoint.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct McpConfig {
    /// `Host` header values accepted at `/mcp` (DNS-rebinding protection):
    /// `localhost`, `127.0.0.1`, `::1` by default, plus the listen address
    /// when it is a specific non-loopback IP. `"*"` accepts any host.
    pub allowed_hosts: Vec<String>,
    /// Whether `ask_user` also asks in the MCP client's own dialog.
    pub elicitation: Elicitation,
}

/// `mcp.elicitation`: whether an ask is also shown in the agent host's own
/// dialog (an MCP elicitation form) when the MCP client can show one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Elicitation {
    /// In the host's dialog and on the ask's channel; the first answer
    /// wins (the default).
    #[default]
    Also,
    /// In the host's dialog only; the ask goes to the web page rather than
    /// a chat. A client that cannot show a form gets the ask as usual.
    Only,
    /// Never in the host's dialog.
    Off,
}

impl Elicitation {
    /// Reads `also`, `only` or `off`.
    pub fn parse(text: &str) -> Option<Elicitation> {
        match text.trim() {
            "also" => Some(Elicitation::Also),
            "only" => Some(Elicitation::Only),
            "off" => Some(Elicitation::Off),
            _ => None,
        }
    }
}

/// `[http]`: limits of the HTTP server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HttpConfig {
    /// Largest request body accepted, in bytes (default 1 MiB); larger
    /// bodies get `413 body_too_large`.
    pub max_body_bytes: usize,
    /// `Host` header values every route but `/healthz` and the platforms'
    /// own inbound routes accepts (DNS-rebinding protection): `localhost`,
    /// `127.0.0.1`, `::1`, the listen address when it is a specific
    /// non-loopback IP, and the host of `public_url`. `"*"` accepts any.
    pub allowed_hosts: Vec<String>,
}

impl Config {
    /// The channels that are on: `web` unless disabled, and each chat
    /// platform that is configured.
    pub fn channels(&self) -> Vec<ChannelKind> {
        [
            (ChannelKind::Web, self.web.enabled),
            (ChannelKind::Telegram, self.telegram.is_some()),
            (ChannelKind::Discord, self.discord.is_some()),
            (ChannelKind::Slack, self.slack.is_some()),
            (ChannelKind::Feishu, self.feishu.is_some()),
            (ChannelKind::Matrix, self.matrix.is_some()),
            (ChannelKind::Teams, self.teams.is_some()),
            (ChannelKind::Email, self.email.is_some()),
        ]
        .into_iter()
        .filter_map(|(kind, on)| on.then_some(kind))
        .collect()
    }

    /// Whether the listen address is a loopback address (no token needed).
    pub fn is_loopback(&self) -> bool {
        self.listen.ip().is_loopback()
    }

    /// Refuses a listen address beyond loopback without an API token.
    pub fn check_exposure(&self) -> Result<(), ConfigError> {
        if self.is_loopback() || self.api_token.is_some() {
            return Ok(());
        }
        Err(ConfigError::Exposed {
            listen: self.listen,
            origin: self.listen_origin.clone(),
        })
    }
}

/// Where a configured value came from, for error messages.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Origin {
    /// The config file at this path.
    File(PathBuf),
    /// This environment variable.
    Env(&'static str),
    /// This command-line flag.
    Flag(&'static str),
    /// Nothing set it: askbridge's default.
    Default,
}

impl fmt::Display for Origin {
    /// The file's path, the variable or the flag; `default`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Origin::File(path) => write!(f, "{}", path.display()),
            Origin::Env(var) => f.write_str(var),
            Origin::Flag(flag) => f.write_str(flag),
            Origin::Default => f.write_str("default"),
        }
    }
}

/// Why the configuration was refused. Each message names the file or the
/// variable and the key.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The config file could not be read.
    #[error("cannot read config file {}{}: {source}", path.display(), named_by.map(|by| format!(" (named by {by})")).unwrap_or_default())]
    Read {
        /// The file.
        path: PathBuf,
        /// `--config` or `ASKBRIDGE_CONFIG`; `None` for the default file.
        named_by: Option<&'static str>,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The config file is not valid TOML, has an unknown key or a value of
    /// the wrong type.
    #[error("{}: {}{message}{}", file.display(), key.as_ref().map(|k| format!("{k}: ")).unwrap_or_default(), location.as_ref().map(|l| format!(" ({l})")).unwrap_or_default())]
    Parse {
        /// The file.
        file: PathBuf,
        /// The dotted key the error is about, when it can be told.
        key: Option<String>,
        /// What is wrong.
        message: String,
        /// `line L, column C`, when known.
        location: Option<String>,
    },
    /// A value has the right type but is not acceptable.
    #[error("{}", invalid_message(origin, key, message))]
    Invalid {
        /// Where the value came from.
        origin: Origin,
        /// The key (`listen`, `http.max_body_bytes`).
        key: &'static str,
        /// What is wrong.
        message: String,
    },
    /// Listening beyond loopback without a token.
    #[error("{}", invalid_message(origin, "listen", &format!(
        "refusing to listen on {listen} without an API token: anyone who can reach it could read and answer asks; \
         set api_token in the config file or ASKBRIDGE_API_TOKEN in the environment, or listen on 127.0.0.1"
    )))]
    Exposed {
        /// The listen address.
        listen: SocketAddr,
        /// Where it came from.
        origin: Origin,
    },
}

impl ConfigError {
    /// The dotted key the error is about (`listen`, `telegram.token`),
    /// when it is about one.
    pub fn key(&self) -> Option<&str> {
        match self {
            ConfigError::Read { .. } => None,
            ConfigError::Parse { key, .. } => key.as_deref(),
            ConfigError::Invalid { key, .. } => Some(key),
            ConfigError::Exposed { .. } => Some("listen"),
        }
    }

    /// Where the refused value came from: the config file, the variable
    /// or the flag.
    pub fn origin(&self) -> Origin {
        match self {
            ConfigError::Read { path, .. } => Origin::File(path.clone()),
            ConfigError::Parse { file, .. } => Origin::File(file.clone()),
            ConfigError::Invalid { origin, .. } | ConfigError::Exposed { origin, .. } => {
                origin.clone()
            }
        }
    }
}

fn invalid_message(origin: &Origin, key: &str, message: &str) -> String {
    match origin {
        Origin::File(path) => format!("{}: {key}: {message}", path.display()),
        Origin::Env(var) => format!("{var}: {message}"),
        Origin::Flag(flag) => format!("{flag}: {message}"),
        Origin::Default => format!("{key} (default): {message}"),
    }
}

/// The config file as written: every key optional, unknown keys refused.
#[derive(Debug, Default, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawConfig {
    /// `listen = "127.0.0.1:8790"`.
    pub listen: Option<String>,
    /// `data_dir = ".askbridge"`.
    pub data_dir: Option<String>,
    /// `database_url = "sqlite://.askbridge/askbridge.db"`.
    pub database_url: Option<String>,
    /// `api_token = "…"` (better: `ASKBRIDGE_API_TOKEN`).
    pub api_token: Option<String>,
    /// `default_target = "web"`.
    pub default_target: Option<String>,
    /// `cancel_on_disconnect = true`.
    pub cancel_on_disconnect: Option<bool>,
    /// `public_url = "https://askbridge.example.com"`.
    pub public_url: Option<String>,
    /// `[defaults]`.
    #[serde(default)]
    pub defaults: RawDefaults,
    /// `[web]`.
    #[serde(default)]
    pub web: RawWeb,
    /// `[mcp]`.
    #[serde(default)]
    pub mcp: RawMcp,
    /// `[http]`.
    #[serde(default)]
    pub http: RawHttp,
    /// `[cluster]`.
    #[serde(default)]
    pub cluster: RawCluster,
    /// `[hooks]`.
    #[serde(default)]
    pub hooks: RawHooks,
    /// `[telegram]`.
    #[serde(default)]
    pub telegram: RawTelegram,
    /// `TELEGRAM_BOT_TOKEN` (never from the file).
    #[serde(skip)]
    pub telegram_token: Option<String>,
    /// `TELEGRAM_WEBHOOK_SECRET` (never from the file).
    #[serde(skip)]
    pub telegram_webhook_secret: Option<String>,
    /// `[discord]`.
    #[serde(default)]
    pub discord: RawDiscord,
    /// `DISCORD_BOT_TOKEN` (never from the file).
    #[serde(skip)]
    pub discord_token: Option<String>,
    /// `DISCORD_PUBLIC_KEY` (never from the file).
    #[serde(skip)]
    pub discord_public_key: Option<String>,
    /// `[slack]`.
    #[serde(default)]
    pub slack: RawSlack,
    /// `SLACK_BOT_TOKEN` (never from the file).
    #[serde(skip)]
    pub slack_token: Option<String>,
    /// `SLACK_APP_TOKEN` (never from the file).
    #[serde(skip)]
    pub slack_app_token: Option<String>,
    /// `SLACK_SIGNING_SECRET` (never from the file).
    #[serde(skip)]
    pub slack_signing_secret: Option<String>,
    /// `[feishu]`.
    #[serde(default)]
    pub feishu: RawFeishu,
    /// `FEISHU_APP_SECRET` (never from the file).
    #[serde(skip)]
    pub feishu_app_secret: Option<String>,
    /// `FEISHU_ENCRYPT_KEY` (never from the file).
    #[serde(skip)]
    pub feishu_encrypt_key: Option<String>,
    /// `FEISHU_VERIFICATION_TOKEN` (never from the file).
    #[serde(skip)]
    pub feishu_verification_token: Option<String>,
    /// `[matrix]`.
    #[serde(default)]
    pub matrix: RawMatrix,
    /// `MATRIX_ACCESS_TOKEN` (never from the file).
    #[serde(skip)]
    pub matrix_access_token: Option<String>,
    /// `MATRIX_PASSWORD` (never from the file).
    #[serde(skip)]
    pub matrix_password: Option<String>,
    /// `[teams]`.
    #[serde(default)]
    pub teams: RawTeams,
    /// `TEAMS_APP_PASSWORD` (never from the file).
    #[serde(skip)]
    pub teams_app_password: Option<String>,
    /// `[email]`.
    #[serde(default)]
    pub email: RawEmail,
    /// `EMAIL_SMTP_PASSWORD` (never from the file).
    #[serde(skip)]
    pub email_smtp_password: Option<String>,
    /// `EMAIL_IMAP_PASSWORD` (never from the file).
    #[serde(skip)]
    pub email_imap_password: Option<String>,
    /// `[webhooks]`.
    #[serde(default)]
    pub webhooks: RawWebhooks,
    /// `ASKBRIDGE_WEBHOOK_SECRET` (never from the file).
    #[serde(skip)]
    pub webhook_secret: Option<String>,
    /// Where each key's value came from (keys as in [`ConfigError::Invalid`]).
    #[serde(skip)]
    origins: BTreeMap<&'static str, Origin>,
}

/// `[defaults]` as written: what an ask that does not say gets.
#[derive(Debug, Default, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RawDefaults {
    /// `remind_after_seconds = 600` (0: no reminder).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub remind_after_seconds: Option<u64>,
    /// `remind_every_seconds = 600`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub remind_every_seconds: Option<u64>,
    /// `escalate = [{ after_seconds = 600, to = "slack:C0ONCALL" }]`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub escalate: Option<Vec<RawEscalation>>,
}

/// One step of `defaults.escalate` as written.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RawEscalation {
    /// Seconds after an ask is created.
    pub after_seconds: u64,
    /// Where it is passed on to.
    pub to: String,
}

/// `[webhooks]` as written.
#[derive(Debug, Default, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawWebhooks {
    /// `allowed_hosts = ["hooks.example.com", "*.example.org"]`.
    pub allowed_hosts: Option<Vec<String>>,
    /// `follow_redirects = false`.
    pub follow_redirects: Option<bool>,
    /// `first_retry_ms = 1000`.
    pub first_retry_ms: Option<u64>,
}

/// `[web]` as written.
#[derive(Debug, Default, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawWeb {
    /// `enabled = true`.
    pub enabled: Option<bool>,
    /// `locale = "en"`.
    pub locale: Option<String>,
}

/// `[mcp]` as written.
#[derive(Debug, Default, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawMcp {
    /// `allowed_hosts = ["localhost", "127.0.0.1", "::1"]`.
    pub allowed_hosts: Option<Vec<String>>,
    /// `elicitation = "also"`.
    pub elicitation: Option<String>,
}

/// `[http]` as written.
#[derive(Debug, Default, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawHttp {
    /// `max_body_bytes = 1048576`.
    pub max_body_bytes: Option<u64>,
    /// `allowed_hosts = ["askbridge.internal", "10.0.0.5:8790"]`.
    pub allowed_hosts: Option<Vec<String>>,
}

/// `[hooks]` as written.
#[derive(Debug, Default, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawHooks {
    /// `to = "telegram:123456789"`.
    pub to: Option<String>,
    /// `hold_seconds = { claude-code = 1800, subagent = 120, codex = 120 }`.
    pub hold_seconds: Option<BTreeMap<String, u64>>,
    /// `never_ask = ["WebSearch"]`.
    pub never_ask: Option<Vec<String>>,
    /// `continue_after_stop = true`.
    pub continue_after_stop: Option<bool>,
    /// `notify_on_stop = true`.
    pub notify_on_stop: Option<bool>,
}

/// `[cluster]` as written.
#[derive(Debug, Default, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawCluster {
    /// `instance = "db-host-a"`.
    pub instance: Option<String>,
    /// `lease_seconds = 10`.
    pub lease_seconds: Option<u64>,
}

/// Declares a chat platform's section as written: the keys every chat
/// platform has (`enabled`, `api_url`, `render`, `locale`,
/// `allowed_users`), then the platform's own, and [`ChatSection::common`]
/// to check the shared ones by one rule.
macro_rules! chat_section {
    ($(#[$doc:meta])* $name:ident { $($(#[$field_doc:meta])* $field:ident,)* }) => {
        $(#[$doc])*
        #[derive(Debug, Default, Clone, Deserialize)]
        #[serde(deny_unknown_fields)]
        pub struct $name {
            /// `enabled = true` (default: on when the platform's secret is
            /// set).
            pub enabled: Option<bool>,
            /// `api_url`: the platform's API somewhere else (a proxy, a
            /// regional host, a local fake).
            pub api_url: Option<String>,
            /// `render = "buttons"`, `"text"` or `"rich"`.
            pub render: Option<String>,
            /// `locale = "en"`, `"zh-CN"` or `"th"`.
            pub locale: Option<String>,
            /// `allowed_users = [...]`: who may answer asks that name no
            /// user.
            pub allowed_users: Option<Vec<String>>,
            $($(#[$field_doc])* pub $field: Option<String>,)*
        }

        impl ChatSection for $name {
            fn shared(&self) -> SharedKeys<'_> {
                SharedKeys {
                    api_url: self.api_url.as_deref(),
                    render: self.render.as_deref(),
                    locale: self.locale.as_deref(),
                    allowed_users: self.allowed_users.as_deref().unwrap_or_default(),
                }
            }
        }
    };
}
// Each platform's file names it as `super::chat_section`.
use chat_section;

/// The keys every chat section has, as written.
struct SharedKeys<'a> {
    api_url: Option<&'a str>,
    render: Option<&'a str>,
    locale: Option<&'a str>,
    allowed_users: &'a [String],
}

/// The keys every chat section has, checked.
struct Shared {
    api_url: Option<String>,
    render: Mode,
    locale: Locale,
    allowed_users: Vec<String>,
}

/// How one platform's shared keys are checked.
struct ChatRules {
    /// The keys errors name: `api_url`, `render`, `locale`,
    /// `allowed_users` under the platform's section.
    keys: [&'static str; 4],
    /// The locale when none is set.
    locale: Locale,
    /// Whether an `allowed_users` entry is one the platform can match.
    user: fn(&str) -> bool,
    /// What is wrong with an entry that is not (after its quoted text).
    not_a_user: &'static str,
}

/// A chat platform's section as written.
trait ChatSection {
    /// Its shared keys.
    fn shared(&self) -> SharedKeys<'_>;

    /// Its shared keys checked by `rules`: the API URL is an http(s) URL,
    /// the render mode and locale are known, every allowed user is one.
    fn common(
        &self,
        rules: &ChatRules,
        invalid: &impl Fn(&'static str, String) -> ConfigError,
    ) -> Result<Shared, ConfigError> {
        let raw = self.shared();
        let [api_url_key, render_key, locale_key, users_key] = rules.keys;
        let api_url = raw
            .api_url
            .map(|url| http_url(url).map_err(|message| invalid(api_url_key, message)))
            .transpose()?;
        let render = render_mode(raw.render, render_key, invalid)?;
        let locale = match raw.locale {
            None => rules.locale,
            text => locale(text, locale_key, invalid)?,
        };
        if let Some(bad) = raw
            .allowed_users
            .iter()
            .find(|user| !(rules.user)(user.trim()))
        {
            return Err(invalid(users_key, format!("{bad:?} {}", rules.not_a_user)));
        }
        Ok(Shared {
            api_url,
            render,
            locale,
            allowed_users: raw.allowed_users.to_vec(),
        })
    }
}

/// Command-line flags that override the file and the environment.
#[derive(Debug, Default, Clone)]
pub struct Flags {
    /// `--listen`.
    pub listen: Option<SocketAddr>,
    /// `--data-dir`.
    pub data_dir: Option<PathBuf>,
}

/// Every setting, once: its key (as the file spells it under its section,
/// and as `origins` records it), the environment variable that overrides
/// it, how that variable's text is read, and the field of [`RawConfig`] it
/// sets. `file` settings may also be in the file; `env` ones (secrets) are
/// read from the environment only.
macro_rules! settings {
    ($($place:ident $key:literal $var:literal $read:ident => $($field:ident).+;)*) => {
        const SETTINGS: &[Setting] = &[$(Setting {
            key: $key,
            var: $var,
            in_file: settings!(@in_file $place, $($field).+),
            set: |raw, text| {
                raw.$($field).+ = Some($read(text)?);
                Ok(())
            },
        }),*];
    };
    (@in_file file, $($field:ident).+) => { Some(|raw: &RawConfig| raw.$($field).+.is_some()) };
    (@in_file env, $($field:ident).+) => { None };
}

/// One setting of [`SETTINGS`].
struct Setting {
    /// `telegram.mode`.
    key: &'static str,
    /// `ASKBRIDGE_TELEGRAM_MODE`.
    var: &'static str,
    /// Whether the file set it (`None`: the file cannot).
    in_file: Option<fn(&RawConfig) -> bool>,
    /// Sets it from a variable's text, or says what is wrong with it.
    set: fn(&mut RawConfig, &str) -> Result<(), String>,
}

settings! {
    file "listen" "ASKBRIDGE_LISTEN" text => listen;
    file "data_dir" "ASKBRIDGE_DATA_DIR" text => data_dir;
    file "database_url" "ASKBRIDGE_DATABASE_URL" text => database_url;
    file "api_token" "ASKBRIDGE_API_TOKEN" text => api_token;
    file "default_target" "ASKBRIDGE_DEFAULT_TARGET" text => default_target;
    file "public_url" "ASKBRIDGE_PUBLIC_URL" text => public_url;
    file "cancel_on_disconnect" "ASKBRIDGE_CANCEL_ON_DISCONNECT" flag => cancel_on_disconnect;
    file "defaults.remind_after_seconds" "ASKBRIDGE_DEFAULTS_REMIND_AFTER_SECONDS" seconds => defaults.remind_after_seconds;
    file "defaults.remind_every_seconds" "ASKBRIDGE_DEFAULTS_REMIND_EVERY_SECONDS" seconds => defaults.remind_every_seconds;
    file "defaults.escalate" "ASKBRIDGE_DEFAULTS_ESCALATE" steps => defaults.escalate;
    file "web.enabled" "ASKBRIDGE_WEB_ENABLED" flag => web.enabled;
    file "web.locale" "ASKBRIDGE_WEB_LOCALE" text => web.locale;
    file "mcp.allowed_hosts" "ASKBRIDGE_MCP_ALLOWED_HOSTS" list => mcp.allowed_hosts;
    file "mcp.elicitation" "ASKBRIDGE_MCP_ELICITATION" text => mcp.elicitation;
    file "http.max_body_bytes" "ASKBRIDGE_HTTP_MAX_BODY_BYTES" bytes => http.max_body_bytes;
    file "http.allowed_hosts" "ASKBRIDGE_HTTP_ALLOWED_HOSTS" list => http.allowed_hosts;
    file "cluster.instance" "ASKBRIDGE_CLUSTER_INSTANCE" text => cluster.instance;
    file "cluster.lease_seconds" "ASKBRIDGE_CLUSTER_LEASE_SECONDS" seconds => cluster.lease_seconds;
    file "telegram.enabled" "ASKBRIDGE_TELEGRAM_ENABLED" flag => telegram.enabled;
    file "telegram.api_url" "ASKBRIDGE_TELEGRAM_API_URL" text => telegram.api_url;
    file "telegram.mode" "ASKBRIDGE_TELEGRAM_MODE" text => telegram.mode;
    file "telegram.render" "ASKBRIDGE_TELEGRAM_RENDER" text => telegram.render;
    file "telegram.locale" "ASKBRIDGE_TELEGRAM_LOCALE" text => telegram.locale;
    file "telegram.allowed_users" "ASKBRIDGE_TELEGRAM_ALLOWED_USERS" list => telegram.allowed_users;
    file "telegram.webhook_url" "ASKBRIDGE_TELEGRAM_WEBHOOK_URL" text => telegram.webhook_url;
    env "telegram.token" "TELEGRAM_BOT_TOKEN" text => telegram_token;
    env "telegram.webhook_secret" "TELEGRAM_WEBHOOK_SECRET" text => telegram_webhook_secret;
    file "discord.enabled" "ASKBRIDGE_DISCORD_ENABLED" flag => discord.enabled;
    file "discord.api_url" "ASKBRIDGE_DISCORD_API_URL" text => discord.api_url;
    file "discord.render" "ASKBRIDGE_DISCORD_RENDER" text => discord.render;
    file "discord.locale" "ASKBRIDGE_DISCORD_LOCALE" text => discord.locale;
    file "discord.allowed_users" "ASKBRIDGE_DISCORD_ALLOWED_USERS" list => discord.allowed_users;
    env "discord.token" "DISCORD_BOT_TOKEN" text => discord_token;
    env "discord.public_key" "DISCORD_PUBLIC_KEY" text => discord_public_key;
    file "slack.enabled" "ASKBRIDGE_SLACK_ENABLED" flag => slack.enabled;
    file "slack.api_url" "ASKBRIDGE_SLACK_API_URL" text => slack.api_url;
    file "slack.mode" "ASKBRIDGE_SLACK_MODE" text => slack.mode;
    file "slack.render" "ASKBRIDGE_SLACK_RENDER" text => slack.render;
    file "slack.locale" "ASKBRIDGE_SLACK_LOCALE" text => slack.locale;
    file "slack.allowed_users" "ASKBRIDGE_SLACK_ALLOWED_USERS" list => slack.allowed_users;
    env "slack.token" "SLACK_BOT_TOKEN" text => slack_token;
    env "slack.app_token" "SLACK_APP_TOKEN" text => slack_app_token;
    env "slack.signing_secret" "SLACK_SIGNING_SECRET" text => slack_signing_secret;
    file "feishu.enabled" "ASKBRIDGE_FEISHU_ENABLED" flag => feishu.enabled;
    file "feishu.app_id" "FEISHU_APP_ID" text => feishu.app_id;
    file "feishu.api_url" "ASKBRIDGE_FEISHU_API_URL" text => feishu.api_url;
    file "feishu.mode" "ASKBRIDGE_FEISHU_MODE" text => feishu.mode;
    file "feishu.render" "ASKBRIDGE_FEISHU_RENDER" text => feishu.render;
    file "feishu.locale" "ASKBRIDGE_FEISHU_LOCALE" text => feishu.locale;
    file "feishu.allowed_users" "ASKBRIDGE_FEISHU_ALLOWED_USERS" list => feishu.allowed_users;
    env "feishu.app_secret" "FEISHU_APP_SECRET" text => feishu_app_secret;
    env "feishu.encrypt_key" "FEISHU_ENCRYPT_KEY" text => feishu_encrypt_key;
    env "feishu.verification_token" "FEISHU_VERIFICATION_TOKEN" text => feishu_verification_token;
    file "matrix.enabled" "ASKBRIDGE_MATRIX_ENABLED" flag => matrix.enabled;
    file "matrix.homeserver" "ASKBRIDGE_MATRIX_HOMESERVER" text => matrix.homeserver;
    file "matrix.user_id" "ASKBRIDGE_MATRIX_USER_ID" text => matrix.user_id;
    file "matrix.render" "ASKBRIDGE_MATRIX_RENDER" text => matrix.render;
    file "matrix.locale" "ASKBRIDGE_MATRIX_LOCALE" text => matrix.locale;
    file "matrix.allowed_users" "ASKBRIDGE_MATRIX_ALLOWED_USERS" list => matrix.allowed_users;
    file "matrix.auto_join" "ASKBRIDGE_MATRIX_AUTO_JOIN" flag => matrix.auto_join;
    file "matrix.encrypt_direct" "ASKBRIDGE_MATRIX_ENCRYPT_DIRECT" flag => matrix.encrypt_direct;
    env "matrix.access_token" "MATRIX_ACCESS_TOKEN" text => matrix_access_token;
    env "matrix.password" "MATRIX_PASSWORD" text => matrix_password;
    file "teams.enabled" "ASKBRIDGE_TEAMS_ENABLED" flag => teams.enabled;
    file "teams.app_id" "TEAMS_APP_ID" text => teams.app_id;
    file "teams.tenant_id" "TEAMS_TENANT_ID" text => teams.tenant_id;
    file "teams.login_url" "ASKBRIDGE_TEAMS_LOGIN_URL" text => teams.login_url;
    file "teams.openid_metadata_url" "ASKBRIDGE_TEAMS_OPENID_METADATA_URL" text => teams.openid_metadata_url;
    file "teams.api_url" "ASKBRIDGE_TEAMS_API_URL" text => teams.api_url;
    file "teams.insecure_skip_token_check" "ASKBRIDGE_TEAMS_INSECURE_SKIP_TOKEN_CHECK" flag => teams.insecure_skip_token_check;
    file "teams.render" "ASKBRIDGE_TEAMS_RENDER" text => teams.render;
    file "teams.locale" "ASKBRIDGE_TEAMS_LOCALE" text => teams.locale;
    file "teams.allowed_users" "ASKBRIDGE_TEAMS_ALLOWED_USERS" list => teams.allowed_users;
    env "teams.app_password" "TEAMS_APP_PASSWORD" text => teams_app_password;
    file "email.enabled" "ASKBRIDGE_EMAIL_ENABLED" flag => email.enabled;
    file "email.smtp_url" "ASKBRIDGE_EMAIL_SMTP_URL" text => email.smtp_url;
    file "email.imap_url" "ASKBRIDGE_EMAIL_IMAP_URL" text => email.imap_url;
    file "email.from" "ASKBRIDGE_EMAIL_FROM" text => email.from;
    file "email.plus_addressing" "ASKBRIDGE_EMAIL_PLUS_ADDRESSING" flag => email.plus_addressing;
    file "email.folder" "ASKBRIDGE_EMAIL_FOLDER" text => email.folder;
    file "email.processed_folder" "ASKBRIDGE_EMAIL_PROCESSED_FOLDER" text => email.processed_folder;
    file "email.allowed_senders" "ASKBRIDGE_EMAIL_ALLOWED_SENDERS" list => email.allowed_senders;
    file "email.require_authentication" "ASKBRIDGE_EMAIL_REQUIRE_AUTHENTICATION" flag => email.require_authentication;
    file "email.trusted_authserv_id" "ASKBRIDGE_EMAIL_TRUSTED_AUTHSERV_ID" text => email.trusted_authserv_id;
    file "email.poll_seconds" "ASKBRIDGE_EMAIL_POLL_SECONDS" seconds => email.poll_seconds;
    file "email.locale" "ASKBRIDGE_EMAIL_LOCALE" text => email.locale;
    env "email.smtp_password" "EMAIL_SMTP_PASSWORD" text => email_smtp_password;
    env "email.imap_password" "EMAIL_IMAP_PASSWORD" text => email_imap_password;
    file "webhooks.allowed_hosts" "ASKBRIDGE_WEBHOOKS_ALLOWED_HOSTS" list => webhooks.allowed_hosts;
    file "webhooks.follow_redirects" "ASKBRIDGE_WEBHOOKS_FOLLOW_REDIRECTS" flag => webhooks.follow_redirects;
    file "webhooks.first_retry_ms" "ASKBRIDGE_WEBHOOKS_FIRST_RETRY_MS" millis => webhooks.first_retry_ms;
    env "webhooks.secret" "ASKBRIDGE_WEBHOOK_SECRET" text => webhook_secret;
}

/// The environment variable naming the config file.
pub const ENV_CONFIG: &str = "ASKBRIDGE_CONFIG";

impl RawConfig {
    /// Reads a config file's text; `file` is only used in messages.
    pub fn from_toml(text: &str, file: &Path) -> Result<RawConfig, ConfigError> {
        let mut raw: RawConfig = toml::from_str(text).map_err(|error| {
            let span = error.span();
            ConfigError::Parse {
                file: file.to_path_buf(),
                key: span.as_ref().and_then(|s| key_at(text, s.start)),
                message: error.message().trim().to_owned(),
                location: span.map(|s| line_column(text, s.start)),
            }
        })?;
        for setting in SETTINGS {
            if setting.in_file.is_some_and(|is_set| is_set(&raw)) {
                raw.origins
                    .insert(setting.key, Origin::File(file.to_path_buf()));
            }
        }
        Ok(raw)
    }

    /// Lays `ASKBRIDGE_*` variables over the file; `lookup` returns a
    /// variable's value (the real environment in [`load`], a map in tests).
    /// Empty values count as unset.
    pub fn apply_env(
        mut self,
        lookup: impl Fn(&str) -> Option<String>,
    ) -> Result<RawConfig, ConfigError> {
        for setting in SETTINGS {
            let Some(value) = lookup(setting.var).filter(|v| !v.trim().is_empty()) else {
                continue;
            };
            (setting.set)(&mut self, &value).map_err(|message| ConfigError::Invalid {
                origin: Origin::Env(setting.var),
                key: setting.key,
                message,
            })?;
            self.origins.insert(setting.key, Origin::Env(setting.var));
        }
        Ok(self)
    }

    /// Lays the command-line flags over everything else.
    pub fn apply_flags(mut self, flags: &Flags) -> RawConfig {
        if let Some(listen) = flags.listen {
            self.listen = Some(listen.to_string());
            self.origins.insert("listen", Origin::Flag("--listen"));
        }
        if let Some(dir) = &flags.data_dir {
            self.data_dir = Some(dir.to_string_lossy().into_owned());
            self.origins.insert("data_dir", Origin::Flag("--data-dir"));
        }
        self
    }

    /// Where `key`'s value came from: the file when nothing else set it
    /// (that is where to set it), the default when there is no file.
    fn origin(&self, key: &'static str, file: Option<&Path>) -> Origin {
        self.origins.get(key).cloned().unwrap_or_else(|| {
            file.map_or(Origin::Default, |file| Origin::File(file.to_path_buf()))
        })
    }

    /// Checks every value and fills in the defaults. `file` is the config
    /// file that was read, if any.
    pub fn validate(self, file: Option<&Path>) -> Result<Config, ConfigError> {
        let invalid = |key: &'static str, message: String| ConfigError::Invalid {
            origin: self.origin(key, file),
            key,
            message,
        };

        let listen_text = self.listen.as_deref().unwrap_or(DEFAULT_LISTEN).trim();
        let listen: SocketAddr = listen_text.parse().map_err(|_| {
            invalid(
                "listen",
                format!("invalid socket address {listen_text:?}; expected IP:PORT such as 127.0.0.1:8790"),
            )
        })?;

        let data_dir = match self.data_dir.as_deref().map(str::trim) {
            Some("") => return Err(invalid("data_dir", "must not be empty".to_owned())),
            Some(dir) => PathBuf::from(dir),
            None => PathBuf::from(DEFAULT_DATA_DIR),
        };

        let database_url = match self.database_url.as_deref().map(str::trim) {
            Some(url) => {
                let known = ["sqlite:", "postgres://", "postgresql://"];
                if !known.iter().any(|scheme| url.starts_with(scheme)) {
                    return Err(invalid(
                        "database_url",
                        format!(
                            "unsupported database URL {url:?}; expected sqlite://FILE or postgres://…"
                        ),
                    ));
                }
                url.to_owned()
            }
            None => {
                let path = data_dir.join(DATABASE_FILE);
                let Some(path) = path.to_str() else {
                    return Err(invalid(
                        "data_dir",
                        "is not valid UTF-8; set database_url instead".to_owned(),
                    ));
                };
                format!("sqlite://{path}")
            }
        };

        let api_token = match self.api_token.as_deref() {
            Some(token) if token.trim().is_empty() => None,
            Some(token) if token.trim() != token || token.chars().any(char::is_control) => {
                return Err(invalid(
                    "api_token",
                    "must not contain spaces at either end or control characters".to_owned(),
                ));
            }
            Some(token) => Some(Secret::new(token)),
            None => None,
        };

        let target_text = self.default_target.as_deref().unwrap_or("web");
        let default_target = Target::parse(target_text)
            .map_err(|error| invalid("default_target", format!("{error}")))?;
        let mut defaults = self.ask_defaults(default_target, &invalid)?;

        let max_body = self
            .http
            .max_body_bytes
            .unwrap_or(DEFAULT_MAX_BODY_BYTES as u64);
        let max_body_bytes = usize::try_from(max_body)
            .ok()
            .filter(|&bytes| bytes >= MIN_MAX_BODY_BYTES)
            .ok_or_else(|| {
                invalid(
                    "http.max_body_bytes",
                    format!("must be at least {MIN_MAX_BODY_BYTES}, got {max_body}"),
                )
            })?;

        let public_url = set(&self.public_url)
            .map(|url| http_url(url).map_err(|message| invalid("public_url", message)))
            .transpose()?;
        let http_hosts = match &self.http.allowed_hosts {
            Some(hosts) => host_list(hosts, "http.allowed_hosts", &invalid)?,
            None => {
                let mut hosts = default_allowed_hosts(listen);
                hosts.extend(public_url.as_deref().and_then(url_host));
                hosts
            }
        };
        let allowed_hosts = match &self.mcp.allowed_hosts {
            Some(hosts) => host_list(hosts, "mcp.allowed_hosts", &invalid)?,
            None => http_hosts.clone(),
        };

        let elicitation = match self.mcp.elicitation.as_deref() {
            None => Elicitation::default(),
            Some(text) => Elicitation::parse(text).ok_or_else(|| {
                invalid(
                    "mcp.elicitation",
                    format!("unknown value {text:?}; expected also, only or off"),
                )
            })?,
        };

        let cluster = self.cluster_config(&invalid)?;
        let hooks = self.hooks_config(&invalid)?;
        let telegram = self.telegram_config(&invalid)?;
        let discord = self.discord_config(&invalid)?;
        let slack = self.slack_config(&invalid)?;
        let feishu = self.feishu_config(&invalid)?;
        let matrix = self.matrix_config(&invalid)?;
        let teams = self.teams_config(&invalid)?;
        if teams
            .as_ref()
            .is_some_and(|teams| teams.insecure_skip_token_check)
            && !listen.ip().is_loopback()
        {
            return Err(invalid(
                "teams.insecure_skip_token_check",
                format!(
                    "refusing to listen on {listen} with the Teams token check off: anyone who can reach it \
                     could answer asks as anyone; turn it off, or listen on 127.0.0.1 (it is for Microsoft's \
                     Agents Playground on this machine only)"
                ),
            ));
        }
        let email = self.email_config(&invalid)?;
        defaults.verified = Verified {
            web: api_token.is_some(),
            email: email
                .as_ref()
                .is_some_and(|email| email.require_authentication),
        };
        let webhooks = self.webhooks_config(&invalid)?;

        Ok(Config {
            listen,
            listen_origin: self.origin("listen", file),
            data_dir,
            database_url,
            api_token,
            defaults,
            cancel_on_disconnect: self.cancel_on_disconnect.unwrap_or(true),
            public_url,
            web: WebConfig {
                enabled: self.web.enabled.unwrap_or(true),
                locale: locale(self.web.locale.as_deref(), "web.locale", &invalid)?,
            },
            mcp: McpConfig {
                allowed_hosts,
                elicitation,
            },
            http: HttpConfig {
                max_body_bytes,
                allowed_hosts: http_hosts,
            },
            cluster,
            telegram,
            discord,
            slack,
            feishu,
            matrix,
            teams,
            email,
            hooks,
            webhooks,
            file: file.map(Path::to_path_buf),
        })
    }

    /// `[webhooks]`: on when `ASKBRIDGE_WEBHOOK_SECRET` is set (several
    /// secrets comma-separated); hosts that are names, `*.name` or `*`.
    fn webhooks_config(
        &self,
        invalid: &impl Fn(&'static str, String) -> ConfigError,
    ) -> Result<Option<WebhooksConfig>, ConfigError> {
        let raw = &self.webhooks;
        let secrets: Vec<Secret> = set(&self.webhook_secret)
            .map(|value| comma_list(value).into_iter().map(Secret::new).collect())
            .unwrap_or_default();
        if secrets.is_empty() {
            if raw.allowed_hosts.is_some() {
                return Err(invalid(
                    "webhooks.secret",
                    "missing: set ASKBRIDGE_WEBHOOK_SECRET (the key that signs webhooks) to \
                     turn webhooks on"
                        .to_owned(),
                ));
            }
            return Ok(None);
        }
        let mut allowed_hosts = Vec::new();
        for host in raw.allowed_hosts.iter().flatten() {
            let host = host.trim().trim_end_matches('.').to_ascii_lowercase();
            let name = host.strip_prefix("*.").unwrap_or(&host);
            let valid = host == "*"
                || (!name.is_empty() && !name.contains(['/', ':', '@', '*', ' '])
                    || name.parse::<std::net::IpAddr>().is_ok()
                    || name.starts_with('[') && name.ends_with(']'));
            if !valid {
                return Err(invalid(
                    "webhooks.allowed_hosts",
                    format!(
                        "{host:?} is not a host; expected a name (hooks.example.com), \
                         *.example.com, an IP address or *"
                    ),
                ));
            }
            allowed_hosts.push(
                host.trim_start_matches('[')
                    .trim_end_matches(']')
                    .to_owned(),
            );
        }
        let first_retry_ms = raw.first_retry_ms.unwrap_or(1_000);
        if !(1..=MAX_FIRST_RETRY_MS).contains(&first_retry_ms) {
            return Err(invalid(
                "webhooks.first_retry_ms",
                format!(
                    "must be from 1 to {MAX_FIRST_RETRY_MS} milliseconds, got {first_retry_ms}"
                ),
            ));
        }
        Ok(Some(WebhooksConfig {
            secrets,
            allowed_hosts,
            follow_redirects: raw.follow_redirects.unwrap_or(false),
            first_retry: std::time::Duration::from_millis(first_retry_ms),
        }))
    }

    /// `[hooks]`: a target that parses, holds within an ask's timeout
    /// limits for the hosts known, tool names that are not blank.
    fn hooks_config(
        &self,
        invalid: &impl Fn(&'static str, String) -> ConfigError,
    ) -> Result<HooksConfig, ConfigError> {
        let mut hooks = HooksConfig::default();
        if let Some(to) = self.hooks.to.as_deref() {
            hooks.to = Some(
                Target::parse(to.trim())
                    .map_err(|error| invalid("hooks.to", format!("{error}")))?,
            );
        }
        for (key, seconds) in self.hooks.hold_seconds.iter().flatten() {
            let Some(&known) = HOLD_KEYS.iter().find(|known| **known == key) else {
                return Err(invalid(
                    "hooks.hold_seconds",
                    format!("unknown key {key:?}; expected {}", HOLD_KEYS.join(", ")),
                ));
            };
            let range = u64::from(MIN_TIMEOUT_SECONDS)..=u64::from(MAX_TIMEOUT_SECONDS);
            let held = u32::try_from(*seconds)
                .ok()
                .filter(|_| range.contains(seconds))
                .ok_or_else(|| {
                    invalid(
                        "hooks.hold_seconds",
                        format!(
                            "{key} must be from {MIN_TIMEOUT_SECONDS} to {MAX_TIMEOUT_SECONDS} seconds, got {seconds}"
                        ),
                    )
                })?;
            hooks.hold_seconds.insert(known, held);
        }
        for tool in self.hooks.never_ask.iter().flatten() {
            if tool.trim().is_empty() || tool.trim() != tool {
                return Err(invalid(
                    "hooks.never_ask",
                    format!(
                        "{tool:?} is no tool name (a host's name for it, such as \"WebSearch\" or \"mcp__github__create_issue\")"
                    ),
                ));
            }
            hooks.never_ask.push(tool.clone());
        }
        hooks.continue_after_stop = self.hooks.continue_after_stop.unwrap_or(false);
        hooks.notify_on_stop = self.hooks.notify_on_stop.unwrap_or(false);
        Ok(hooks)
    }

    /// `[defaults]`, read by the rules of an ask's own settings, and the
    /// default target.
    fn ask_defaults(
        &self,
        target: Target,
        invalid: &impl Fn(&'static str, String) -> ConfigError,
    ) -> Result<AskDefaults, ConfigError> {
        let settings = match serde_json::to_value(&self.defaults) {
            Ok(serde_json::Value::Object(settings)) => settings,
            _ => serde_json::Map::new(),
        };
        let (remind, escalate) = askbridge_core::normalize::normalize_defaults(
            &settings, "defaults",
        )
        .map_err(|problems| {
            let problem = &problems[0];
            let key = [
                "defaults.remind_after_seconds",
                "defaults.remind_every_seconds",
            ]
            .into_iter()
            .find(|key| problem.path == *key)
            .unwrap_or("defaults.escalate");
            let place = problem.path.strip_prefix(key).unwrap_or_default();
            let message = if place.is_empty() {
                problem.message.clone()
            } else {
                format!("{place}: {}", problem.message)
            };
            invalid(key, message)
        })?;
        Ok(AskDefaults {
            target,
            remind,
            escalate,
            verified: Verified::default(),
        })
    }

    /// `[cluster]`.
    fn cluster_config(
        &self,
        invalid: &impl Fn(&'static str, String) -> ConfigError,
    ) -> Result<ClusterConfig, ConfigError> {
        let instance = match self.cluster.instance.as_deref().map(str::trim) {
            Some(name) if !crate::instance::is_valid(name) => {
                return Err(invalid(
                    "cluster.instance",
                    format!(
                        "invalid instance name {name:?}; expected 1 to 100 letters, digits, \
                         `.`, `_`, `-` or `:`"
                    ),
                ));
            }
            Some(name) => Some(name.to_owned()),
            None => None,
        };
        let seconds = self.cluster.lease_seconds.unwrap_or(DEFAULT_LEASE_SECONDS);
        if !LEASE_SECONDS.contains(&seconds) {
            return Err(invalid(
                "cluster.lease_seconds",
                format!(
                    "must be from {} to {} seconds, got {seconds}",
                    LEASE_SECONDS.start(),
                    LEASE_SECONDS.end()
                ),
            ));
        }
        Ok(ClusterConfig {
            instance,
            lease: std::time::Duration::from_secs(seconds),
        })
    }
}

/// A secret from the environment, trimmed; `None` when unset or blank.
fn set(value: &Option<String>) -> Option<&str> {
    value.as_deref().map(str::trim).filter(|v| !v.is_empty())
}

/// A chat channel's bot token, when the channel is on: by its `enabled`
/// key, else because the token is set. `Ok(None)`: the channel is off.
/// `on` is the `enabled` key, the platform's name and the token variable.
fn bot_token<'a>(
    enabled: Option<bool>,
    token: &'a Option<String>,
    (key, platform, var): (&'static str, &str, &str),
    invalid: &impl Fn(&'static str, String) -> ConfigError,
) -> Result<Option<&'a str>, ConfigError> {
    let token = set(token);
    match (enabled.unwrap_or(token.is_some()), token) {
        (false, _) => Ok(None),
        (true, None) => Err(invalid(
            key,
            format!("{platform} is on but {var} is not set"),
        )),
        (true, Some(token)) => Ok(Some(token)),
    }
}

/// A channel's `render` key: `buttons` when unset.
fn render_mode(
    text: Option<&str>,
    key: &'static str,
    invalid: &impl Fn(&'static str, String) -> ConfigError,
) -> Result<Mode, ConfigError> {
    match text {
        None => Ok(Mode::Buttons),
        Some(text) => Mode::parse(text).ok_or_else(|| {
            invalid(
                key,
                format!("unknown render mode {text:?}; expected \"buttons\", \"text\" or \"rich\""),
            )
        }),
    }
}

/// A channel's `locale` key (`web.locale`, `telegram.locale`, …): `en`
/// when unset.
fn locale(
    text: Option<&str>,
    key: &'static str,
    invalid: &impl Fn(&'static str, String) -> ConfigError,
) -> Result<Locale, ConfigError> {
    match text {
        None => Ok(Locale::En),
        Some(text) => Locale::parse(text).ok_or_else(|| {
            invalid(
                key,
                format!("unsupported locale {text:?}; expected en, zh-CN or th"),
            )
        }),
    }
}

/// A comma-separated list from an environment variable.
fn comma_list(value: &str) -> Vec<String> {
    value
        .split(',')
        .map(str::trim)
        .filter(|item| !item.is_empty())
        .map(str::to_owned)
        .collect()
}

/// An `http://` or `https://` URL, trimmed.
fn http_url(url: &str) -> Result<String, String> {
    let url = url.trim();
    match reqwest::Url::parse(url) {
        Ok(parsed) if matches!(parsed.scheme(), "http" | "https") && parsed.host().is_some() => {
            Ok(url.to_owned())
        }
        Ok(_) => Err(format!("{url:?} is not an http:// or https:// URL")),
        Err(error) => Err(format!("{url:?} is not a URL: {error}")),
    }
}

/// A list of `Host` values as written (`key` names it), each a host name,
/// an IP, `HOST:PORT` or `"*"`.
fn host_list(
    hosts: &[String],
    key: &'static str,
    invalid: &impl Fn(&'static str, String) -> ConfigError,
) -> Result<Vec<String>, ConfigError> {
    match hosts
        .iter()
        .find(|h| h.trim().is_empty() || h.contains(char::is_whitespace) || h.contains('/'))
    {
        Some(bad) => Err(invalid(
            key,
            format!("invalid host {bad:?}; expected a host name, an IP, HOST:PORT or \"*\""),
        )),
        None => Ok(hosts.to_vec()),
    }
}

/// The host of an `http(s)://` URL (with its port when it names one), as
/// a `Host` header names it.
fn url_host(url: &str) -> Option<String> {
    let url = reqwest::Url::parse(url).ok()?;
    let host = url
        .host_str()?
        .trim_start_matches('[')
        .trim_end_matches(']');
    Some(match url.port() {
        Some(port) => format!("{host}:{port}"),
        None => host.to_owned(),
    })
}

/// Loopback names, plus the listen IP when it is a specific address.
fn default_allowed_hosts(listen: SocketAddr) -> Vec<String> {
    let mut hosts = vec![
        "localhost".to_owned(),
        "127.0.0.1".to_owned(),
        "::1".to_owned(),
    ];
    let ip = listen.ip();
    if !ip.is_loopback() && !ip.is_unspecified() {
        hosts.push(ip.to_string());
    }
    hosts
}

/// A variable's text as it is.
#[allow(clippy::unnecessary_wraps)] // one signature for every reader
fn text(value: &str) -> Result<String, String> {
    Ok(value.to_owned())
}

/// `true` / `false` (and `1`, `yes`, `on`, …).
fn flag(value: &str) -> Result<bool, String> {
    parse_bool(value)
}

/// A comma-separated list.
#[allow(clippy::unnecessary_wraps)] // one signature for every reader
fn list(value: &str) -> Result<Vec<String>, String> {
    Ok(comma_list(value))
}

/// A number of bytes.
fn bytes(value: &str) -> Result<u64, String> {
    value
        .trim()
        .parse()
        .map_err(|_| format!("expected a number of bytes, got {value:?}"))
}

/// Escalation steps as `SECONDS=TARGET`, comma-separated
/// (`600=slack:C0ONCALL,1200=telegram:-1009999`).
fn steps(value: &str) -> Result<Vec<RawEscalation>, String> {
    comma_list(value)
        .into_iter()
        .map(|step| {
            let (after, to) = step.split_once('=').ok_or_else(|| {
                format!("expected SECONDS=TARGET steps such as 600=slack:C0ONCALL, got {step:?}")
            })?;
            Ok(RawEscalation {
                after_seconds: seconds(after)?,
                to: to.trim().to_owned(),
            })
        })
        .collect()
}

/// A number of seconds.
/// A number of milliseconds.
fn millis(value: &str) -> Result<u64, String> {
    value
        .trim()
        .parse()
        .map_err(|_| format!("expected a number of milliseconds, got {value:?}"))
}

fn seconds(value: &str) -> Result<u64, String> {
    value
        .trim()
        .parse()
        .map_err(|_| format!("expected a number of seconds, got {value:?}"))
}

fn parse_bool(value: &str) -> Result<bool, String> {
    match value.trim().to_ascii_lowercase().as_str() {
        "1" | "true" | "yes" | "on" => Ok(true),
        "0" | "false" | "no" | "off" => Ok(false),
        _ => Err(format!("expected true or false, got {value:?}")),
    }
}

/// `line L, column C` (1-based) of a byte offset.
fn line_column(text: &str, offset: usize) -> String {
    let before = text.get(..offset).unwrap_or(text);
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    format!("line {line}, column {column}")
}

/// The dotted key at a byte offset of a TOML text: the table header above
/// the line and the key before its `=` (`web.enabled`), or the header
/// itself when the offset is in one (`[telegram]` → `telegram`). Good
/// enough for messages; `None` when it cannot be told.
fn key_at(text: &str, offset: usize) -> Option<String> {
    let offset = offset.min(text.len());
    let line_start = text.get(..offset)?.rfind('\n').map_or(0, |i| i + 1);
    let line = text.get(line_start..)?.lines().next().unwrap_or("");
    let unquote = |s: &str| s.trim().trim_matches(|c| c == '"' || c == '\'').to_owned();
    let header = |line: &str| -> Option<String> {
        let line = line.trim();
        let inner = line
            .strip_prefix("[[")
            .and_then(|l| l.split("]]").next())
            .or_else(|| line.strip_prefix('[').and_then(|l| l.split(']').next()))?;
        if inner.trim().is_empty() || inner.contains(['[', ']']) {
            return None;
        }
        Some(inner.split('.').map(unquote).collect::<Vec<_>>().join("."))
    };
    if let Some(table) = header(line) {
        return Some(table);
    }
    let key = line
        .split_once('=')
        .map(|(key, _)| key.split('.').map(unquote).collect::<Vec<_>>().join("."))?;
    if key.is_empty() {
        return None;
    }
    let table = text.get(..line_start)?.lines().rev().find_map(header);
    Some(match table {
        Some(table) if !table.is_empty() => format!("{table}.{key}"),
        _ => key,
    })
}

/// Reads the configuration the way the commands do: the config file named
/// by `--config` (which must exist), else by `ASKBRIDGE_CONFIG`, else
/// `config/askbridge.toml` when it exists; then `ASKBRIDGE_*` variables
/// through `env`; then the flags.
pub fn load(
    config_file: Option<&Path>,
    flags: &Flags,
    env: impl Fn(&str) -> Option<String>,
) -> Result<Config, ConfigError> {
    let named = config_file
        .map(|path| (path.to_path_buf(), "--config"))
        .or_else(|| {
            env(ENV_CONFIG)
                .filter(|v| !v.trim().is_empty())
                .map(|path| (PathBuf::from(path), ENV_CONFIG))
        });
    let (file, named_by) = match named {
        Some((path, by)) => (Some(path), Some(by)),
        None => (
            Some(PathBuf::from(DEFAULT_CONFIG_FILE)).filter(|p| p.is_file()),
            None,
        ),
    };
    let raw = match &file {
        Some(path) => {
            let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Read {
                path: path.clone(),
                named_by,
                source,
            })?;
            RawConfig::from_toml(&text, path)?
        }
        None => RawConfig::default(),
    };
    raw.apply_env(env)?
        .apply_flags(flags)
        .validate(file.as_deref())
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use super::*;

    pub(super) fn from(text: &str, env: &[(&str, &str)]) -> Result<Config, String> {
        let env: HashMap<String, String> = env
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect();
        let file = Path::new("config/askbridge.toml");
        RawConfig::from_toml(text, file)
            .and_then(|raw| raw.apply_env(|k| env.get(k).cloned()))
            .and_then(|raw| raw.validate(Some(file)))
            .map_err(|e| e.to_string())
    }

    #[track_caller]
    pub(super) fn check_error(text: &str, env: &[(&str, &str)], expect: &str) {
        match from(text, env) {
            Ok(config) => panic!("{text:?} was accepted: {config:?}"),
            Err(message) => assert_eq!(message, expect, "{text:?}"),
        }
    }

    // Valid secrets, for the tests here and beside each platform's rules.
    pub(super) const BOT_TOKEN: &str = "123456:ABC-DEF1234ghIkl-zyx57W2v1u123ew11";
    pub(super) const DISCORD_TOKEN: &str =
        "MTA4NzY1NDMyMQ.Gx1yZ2.abcdefghijklmnopqrstuvwxyz0123456789";
    pub(super) const SLACK_TOKEN: &str = "xoxb-1111-2222-abcdefghijklmnop";
    pub(super) const SLACK_APP_TOKEN: &str = "xapp-1-A111-2222-abcdef";

    #[test]
    fn config_defaults() {
        let config = from("", &[]).expect("valid");
        assert_eq!(config.listen.to_string(), "127.0.0.1:8790");
        assert_eq!(config.data_dir, PathBuf::from(".askbridge"));
        assert_eq!(config.database_url, "sqlite://.askbridge/askbridge.db");
        assert!(config.api_token.is_none());
        assert_eq!(config.defaults.target.to_string(), "web");
        assert!(config.web.enabled);
        assert_eq!(config.web.locale, Locale::En);
        assert!(config.cancel_on_disconnect);
        assert_eq!(config.http.max_body_bytes, 1024 * 1024);
        assert_eq!(config.mcp.allowed_hosts, ["localhost", "127.0.0.1", "::1"]);
        assert_eq!(config.mcp.elicitation, Elicitation::Also);
        assert!(config.check_exposure().is_ok());
    }

    #[test]
    fn config_every_key() {
        let config = from(
            r#"
listen = "0.0.0.0:9000"
data_dir = "/var/lib/askbridge"
api_token = "s3cret"
default_target = "telegram:-100123/7"
cancel_on_disconnect = false

[web]
enabled = false
locale = "th"

[mcp]
allowed_hosts = ["ask.example.com"]
elicitation = "only"

[http]
max_body_bytes = 4096
"#,
            &[],
        )
        .expect("valid");
        assert_eq!(config.listen.to_string(), "0.0.0.0:9000");
        assert_eq!(
            config.database_url,
            "sqlite:///var/lib/askbridge/askbridge.db"
        );
        assert_eq!(
            config.api_token.as_ref().map(Secret::expose),
            Some("s3cret")
        );
        assert_eq!(format!("{:?}", config.api_token), "Some([redacted])");
        assert!(!format!("{config:?}").contains("s3cret"));
        assert_eq!(config.defaults.target.to_string(), "telegram:-100123/7");
        assert!(!config.cancel_on_disconnect);
        assert!(!config.web.enabled);
        assert_eq!(config.web.locale, Locale::Th);
        assert_eq!(config.mcp.allowed_hosts, ["ask.example.com"]);
        assert_eq!(config.mcp.elicitation, Elicitation::Only);
        assert_eq!(config.http.max_body_bytes, 4096);
        assert!(config.check_exposure().is_ok());
    }

    #[test]
    fn config_env_overrides_the_file() {
        let config = from(
            "listen = \"x\"\ndefault_target = \"web\"\n",
            &[
                ("ASKBRIDGE_LISTEN", "127.0.0.1:1234"),
                ("ASKBRIDGE_DATA_DIR", "/tmp/ab"),
                ("ASKBRIDGE_API_TOKEN", "tok"),
                ("ASKBRIDGE_DEFAULT_TARGET", "slack:C1"),
                ("ASKBRIDGE_MCP_ALLOWED_HOSTS", "a.example, b.example:8790"),
                ("ASKBRIDGE_WEB_ENABLED", "off"),
                ("ASKBRIDGE_WEB_LOCALE", "zh-Hans"),
                ("ASKBRIDGE_CANCEL_ON_DISCONNECT", "0"),
                ("ASKBRIDGE_HTTP_MAX_BODY_BYTES", "2048"),
                ("ASKBRIDGE_DATABASE_URL", "sqlite::memory:"),
            ],
        )
        .expect("valid");
        assert_eq!(config.listen.to_string(), "127.0.0.1:1234");
        assert_eq!(config.data_dir, PathBuf::from("/tmp/ab"));
        assert_eq!(config.database_url, "sqlite::memory:");
        assert_eq!(config.api_token.as_ref().map(Secret::expose), Some("tok"));
        assert_eq!(config.defaults.target.to_string(), "slack:C1");
        assert_eq!(config.mcp.allowed_hosts, ["a.example", "b.example:8790"]);
        assert!(!config.web.enabled);
        assert_eq!(config.web.locale, Locale::ZhCn);
        assert!(!config.cancel_on_disconnect);
        assert_eq!(config.http.max_body_bytes, 2048);
    }

    #[test]
    fn config_hooks_set_the_target_holds_and_tools_never_asked() {
        let none = from("", &[]).expect("valid");
        assert_eq!(none.hooks, HooksConfig::default());
        assert_eq!(none.hooks.hold_seconds["claude-code"], 1_800);
        assert_eq!(none.hooks.hold_seconds["codex"], 120);
        let config = from(
            "[hooks]\nto = \"telegram:42\"\nhold_seconds = { codex = 300, subagent = 60 }\nnever_ask = [\"WebSearch\"]\ncontinue_after_stop = true\nnotify_on_stop = true\n",
            &[],
        )
        .expect("valid");
        assert_eq!(
            config.hooks.to.map(|to| to.to_string()).as_deref(),
            Some("telegram:42")
        );
        assert_eq!(config.hooks.hold_seconds["codex"], 300);
        assert_eq!(config.hooks.hold_seconds["subagent"], 60);
        assert_eq!(
            config.hooks.hold_seconds["claude-code"], 1_800,
            "the rest stay"
        );
        assert_eq!(config.hooks.never_ask, ["WebSearch"]);
        assert!(config.hooks.continue_after_stop);
        assert!(config.hooks.notify_on_stop);
        assert!(!none.hooks.notify_on_stop);

        check_error(
            "[hooks]\nhold_seconds = { gemini = 60 }\n",
            &[],
            "config/askbridge.toml: hooks.hold_seconds: unknown key \"gemini\"; expected claude-code, subagent, codex, copilot, cursor",
        );
        check_error(
            "[hooks]\nhold_seconds = { codex = 5 }\n",
            &[],
            "config/askbridge.toml: hooks.hold_seconds: codex must be from 30 to 3600 seconds, got 5",
        );
        check_error(
            "[hooks]\nnever_ask = [\" \"]\n",
            &[],
            "config/askbridge.toml: hooks.never_ask: \" \" is no tool name (a host's name for it, such as \"WebSearch\" or \"mcp__github__create_issue\")",
        );
        let error = from("[hooks]\nto = \"fax:1\"\n", &[]).expect_err("refused");
        assert!(
            error
                .to_string()
                .starts_with("config/askbridge.toml: hooks.to: "),
            "{error}"
        );
    }

    #[test]
    fn config_defaults_for_asks_from_the_file_and_the_environment() {
        let steps = |config: &Config| -> Vec<String> {
            config
                .defaults
                .escalate
                .iter()
                .map(|step| format!("{} {}", step.after_seconds, step.to))
                .collect()
        };
        let none = from("", &[]).expect("valid");
        assert_eq!(none.defaults.remind, None);
        assert!(none.defaults.escalate.is_empty());

        let file = r#"
[defaults]
remind_after_seconds = 600
escalate = [
  { after_seconds = 1200, to = "telegram:-1009999" },
  { after_seconds = 600, to = "slack:C0ONCALL" },
]
"#;
        let config = from(file, &[]).expect("valid");
        let remind = config.defaults.remind.expect("a reminder");
        assert_eq!((remind.after_seconds, remind.every_seconds), (600, None));
        assert_eq!(
            steps(&config),
            ["600 slack:C0ONCALL", "1200 telegram:-1009999"]
        );

        let config = from(
            file,
            &[
                ("ASKBRIDGE_DEFAULTS_REMIND_AFTER_SECONDS", "0"),
                ("ASKBRIDGE_DEFAULTS_ESCALATE", "300=discord:99, 900=web"),
            ],
        )
        .expect("valid");
        assert_eq!(config.defaults.remind, None);
        assert_eq!(steps(&config), ["300 discord:99", "900 web"]);

        check_error(
            "[defaults]\nremind_after_seconds = 5\n",
            &[],
            "config/askbridge.toml: defaults.remind_after_seconds: 5 is not 0 (off) or a whole number of seconds from 30",
        );
        check_error(
            "[defaults]\nescalate = [{ after_seconds = 60, to = \"slack:C1\" }, { after_seconds = 90, to = \"slack:C1\" }]\n",
            &[],
            "config/askbridge.toml: defaults.escalate: [1].to: slack:C1 is listed already, at defaults.escalate[0].to",
        );
        check_error(
            "[defaults]\nescalate = [{ after_seconds = 60, too = \"slack:C1\" }]\n",
            &[],
            "config/askbridge.toml: defaults.escalate: unknown field `too`, expected `after_seconds` or `to` (line 2, column 35)",
        );
        check_error(
            "",
            &[("ASKBRIDGE_DEFAULTS_ESCALATE", "600 slack:C1")],
            "ASKBRIDGE_DEFAULTS_ESCALATE: expected SECONDS=TARGET steps such as 600=slack:C0ONCALL, got \"600 slack:C1\"",
        );
    }

    #[test]
    fn config_flags_override_env() {
        let raw = RawConfig::default()
            .apply_env(|k| (k == "ASKBRIDGE_LISTEN").then(|| "127.0.0.1:1".to_owned()))
            .expect("env");
        let flags = Flags {
            listen: Some("127.0.0.1:2".parse().expect("addr")),
            data_dir: Some(PathBuf::from("d")),
        };
        let config = raw.apply_flags(&flags).validate(None).expect("valid");
        assert_eq!(config.listen.to_string(), "127.0.0.1:2");
        assert_eq!(config.database_url, "sqlite://d/askbridge.db");
    }

    #[test]
    fn config_errors_name_the_file_and_key() {
        check_error(
            "listen = \"x\"",
            &[],
            "config/askbridge.toml: listen: invalid socket address \"x\"; expected IP:PORT such as 127.0.0.1:8790",
        );
        check_error(
            "",
            &[("ASKBRIDGE_LISTEN", "nope")],
            "ASKBRIDGE_LISTEN: invalid socket address \"nope\"; expected IP:PORT such as 127.0.0.1:8790",
        );
        check_error(
            "default_target = \"irc:#x\"",
            &[],
            "config/askbridge.toml: default_target: unknown channel \"irc\"; expected telegram, discord, slack, feishu, matrix, teams, email or web",
        );
        check_error(
            "[http]\nmax_body_bytes = 10\n",
            &[],
            "config/askbridge.toml: http.max_body_bytes: must be at least 1024, got 10",
        );
        check_error(
            "database_url = \"mysql://x\"",
            &[],
            "config/askbridge.toml: database_url: unsupported database URL \"mysql://x\"; expected sqlite://FILE or postgres://…",
        );
        check_error(
            "",
            &[("ASKBRIDGE_WEB_ENABLED", "maybe")],
            "ASKBRIDGE_WEB_ENABLED: expected true or false, got \"maybe\"",
        );
        check_error(
            "[web]\nlocale = \"fr\"\n",
            &[],
            "config/askbridge.toml: web.locale: unsupported locale \"fr\"; expected en, zh-CN or th",
        );
        check_error(
            "[web]\nlocale = \"th\"\n",
            &[("ASKBRIDGE_WEB_LOCALE", "zh-TW")],
            "ASKBRIDGE_WEB_LOCALE: unsupported locale \"zh-TW\"; expected en, zh-CN or th",
        );
        check_error(
            "[mcp]\nallowed_hosts = [\"http://x/\"]\n",
            &[],
            "config/askbridge.toml: mcp.allowed_hosts: invalid host \"http://x/\"; expected a host name, an IP, HOST:PORT or \"*\"",
        );
        check_error(
            "",
            &[("ASKBRIDGE_MCP_ELICITATION", "sometimes")],
            "ASKBRIDGE_MCP_ELICITATION: unknown value \"sometimes\"; expected also, only or off",
        );
    }

    #[test]
    fn config_errors_say_where_the_value_came_from() {
        let error = from("[http]\nmax_body_bytes = 10\n", &[]).expect_err("refused");
        assert!(error.starts_with("config/askbridge.toml: http.max_body_bytes: "));

        // Without a file, a key nothing set is askbridge's default.
        let error = RawConfig::default()
            .apply_env(|var| (var == "SLACK_BOT_TOKEN").then(|| SLACK_TOKEN.to_owned()))
            .and_then(|raw| raw.validate(None))
            .expect_err("no app token");
        assert_eq!(error.key(), Some("slack.mode"));
        assert_eq!(error.origin(), Origin::Default);
        assert!(
            error
                .to_string()
                .starts_with("slack.mode (default): Socket Mode needs SLACK_APP_TOKEN"),
            "{error}"
        );

        let error = RawConfig::default()
            .apply_env(|var| (var == "ASKBRIDGE_CLUSTER_LEASE_SECONDS").then(|| "0".to_owned()))
            .and_then(|raw| raw.validate(None))
            .expect_err("lease 0");
        assert_eq!(error.key(), Some("cluster.lease_seconds"));
        assert_eq!(
            error.origin(),
            Origin::Env("ASKBRIDGE_CLUSTER_LEASE_SECONDS")
        );
        assert_eq!(
            error.origin().to_string(),
            "ASKBRIDGE_CLUSTER_LEASE_SECONDS"
        );

        let error = RawConfig::from_toml("lisen = 1", Path::new("a.toml")).expect_err("unknown");
        assert_eq!(error.key(), Some("lisen"));
        assert_eq!(error.origin().to_string(), "a.toml");
    }

    #[test]
    fn config_a_missing_file_says_what_named_it() {
        let missing = Path::new("/nonexistent/askbridge.toml");
        let error = load(Some(missing), &Flags::default(), |_| None).expect_err("missing");
        assert!(
            error.to_string().starts_with(
                "cannot read config file /nonexistent/askbridge.toml (named by --config): "
            ),
            "{error}"
        );
        let error = load(None, &Flags::default(), |var| {
            (var == ENV_CONFIG).then(|| missing.display().to_string())
        })
        .expect_err("missing");
        assert!(
            error.to_string().starts_with(
                "cannot read config file /nonexistent/askbridge.toml (named by ASKBRIDGE_CONFIG): "
            ),
            "{error}"
        );
        assert_eq!(error.key(), None);
    }

    #[test]
    fn config_unknown_keys_and_wrong_types_are_named() {
        let message = from("lisen = \"127.0.0.1:1\"\n", &[]).expect_err("unknown key");
        assert!(
            message.starts_with("config/askbridge.toml: lisen: unknown field `lisen`"),
            "{message}"
        );
        assert!(message.ends_with("(line 1, column 1)"), "{message}");

        let message = from("[web]\nenabled = 5\n", &[]).expect_err("wrong type");
        assert!(
            message.starts_with("config/askbridge.toml: web.enabled: invalid type: integer `5`"),
            "{message}"
        );

        // Secrets come from the environment only.
        let message =
            from("[telegram]\nbot_token = \"x\"\n", &[]).expect_err("a secret in the file");
        assert!(
            message.starts_with(
                "config/askbridge.toml: telegram.bot_token: unknown field `bot_token`"
            ),
            "{message}"
        );

        let message = from("[[[\n", &[]).expect_err("syntax");
        assert!(
            message.starts_with("config/askbridge.toml: unquoted keys"),
            "{message}"
        );

        let message = from("listen = ", &[]).expect_err("syntax");
        assert!(
            message.starts_with("config/askbridge.toml: listen: "),
            "{message}"
        );
    }

    #[test]
    fn config_exposed_without_token_is_refused() {
        let config = from("listen = \"0.0.0.0:8790\"", &[]).expect("valid");
        let error = config.check_exposure().expect_err("refused");
        assert!(
            error.to_string().starts_with(
                "config/askbridge.toml: listen: refusing to listen on 0.0.0.0:8790 without an API token"
            ),
            "{error}"
        );
        assert_eq!(error.key(), Some("listen"));
        let config = from("", &[("ASKBRIDGE_LISTEN", "0.0.0.0:8790")]).expect("valid");
        let error = config.check_exposure().expect_err("refused");
        assert!(
            error
                .to_string()
                .starts_with("ASKBRIDGE_LISTEN: refusing to listen on 0.0.0.0:8790"),
            "{error}"
        );
        assert_eq!(error.origin(), Origin::Env("ASKBRIDGE_LISTEN"));
        let config = from("listen = \"[::1]:8790\"", &[]).expect("valid");
        assert!(config.check_exposure().is_ok());
    }

    #[test]
    fn config_example_file_is_valid_and_documents_every_key() {
        let text = include_str!("../../../../config/askbridge.example.toml");
        let uncommented: String = text
            .lines()
            .map(|line| {
                line.strip_prefix("# ")
                    .filter(|l| looks_like_setting(l))
                    .unwrap_or(line)
            })
            .collect::<Vec<_>>()
            .join("\n");
        let file = Path::new("config/askbridge.example.toml");
        let raw =
            RawConfig::from_toml(&uncommented, file).expect("example parses when uncommented");
        for setting in SETTINGS {
            if let Some(is_set) = setting.in_file {
                assert!(
                    is_set(&raw),
                    "the example does not document {}",
                    setting.key
                );
            }
            assert!(
                text.contains(setting.var),
                "the example does not mention {}",
                setting.var
            );
        }
        raw.apply_env(|var| match var {
            "TELEGRAM_BOT_TOKEN" => Some(BOT_TOKEN.to_owned()),
            "DISCORD_BOT_TOKEN" => Some(DISCORD_TOKEN.to_owned()),
            "SLACK_BOT_TOKEN" => Some(SLACK_TOKEN.to_owned()),
            "SLACK_APP_TOKEN" => Some(SLACK_APP_TOKEN.to_owned()),
            "FEISHU_APP_SECRET" => Some("s3cret".to_owned()),
            "MATRIX_ACCESS_TOKEN" => Some("syt_s3cret".to_owned()),
            "TEAMS_APP_PASSWORD" => Some("pa55".to_owned()),
            "ASKBRIDGE_WEBHOOK_SECRET" => Some("whsec_new,whsec_old".to_owned()),
            _ => None,
        })
        .and_then(|raw| raw.validate(Some(file)))
        .expect("example values are valid");
    }

    #[test]
    fn config_webhooks_need_their_secret_and_hosts_that_are_hosts() {
        let load = |toml: &str, secret: Option<&str>| {
            RawConfig::from_toml(toml, Path::new("askbridge.toml"))
                .and_then(|raw| {
                    raw.apply_env(|var| {
                        (var == "ASKBRIDGE_WEBHOOK_SECRET")
                            .then(|| secret.map(str::to_owned))
                            .flatten()
                    })
                })
                .and_then(|raw| raw.validate(None))
        };
        let off = load("", None).expect("valid");
        assert!(off.webhooks.is_none());
        let on = load(
            "[webhooks]\nallowed_hosts = [\"Hooks.Example.com\", \"*.example.org\", \"[::1]\"]\n",
            Some(" new , old "),
        )
        .expect("valid")
        .webhooks
        .expect("on");
        assert_eq!(
            on.allowed_hosts,
            ["hooks.example.com", "*.example.org", "::1"]
        );
        let secrets: Vec<&str> = on.secrets.iter().map(Secret::expose).collect();
        assert_eq!(secrets, ["new", "old"]);
        assert_eq!(on.first_retry, std::time::Duration::from_secs(1));
        assert!(!on.follow_redirects);

        let error =
            load("[webhooks]\nallowed_hosts = [\"x.example.com\"]\n", None).expect_err("no secret");
        assert!(
            error.to_string().contains("ASKBRIDGE_WEBHOOK_SECRET"),
            "{error}"
        );
        for (toml, says) in [
            (
                "allowed_hosts = [\"https://x.example.com/\"]",
                "is not a host",
            ),
            ("allowed_hosts = [\"a.*.example.com\"]", "is not a host"),
            ("first_retry_ms = 0", "must be from 1"),
        ] {
            let error = load(&format!("[webhooks]\n{toml}\n"), Some("s"))
                .expect_err(toml)
                .to_string();
            assert!(error.contains(says), "{toml}: {error}");
        }
    }

    fn looks_like_setting(line: &str) -> bool {
        line.starts_with('[')
            || line
                .split_once(" = ")
                .is_some_and(|(k, _)| !k.contains(' '))
    }
}

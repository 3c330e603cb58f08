//! `askbridge mcp`: MCP over stdio for agent hosts (Claude Code, Codex,
//! Cursor).
//!
//! With `--server URL` (or `ASKBRIDGE_SERVER`) it forwards every ask to a
//! running daemon, so many agent processes share one daemon and its bot
//! connections; without one it runs the bridge in this process, configured
//! like `askbridge serve` (file, `ASKBRIDGE_*`, `--data-dir`). Standard output carries the protocol and
//! nothing else: logs go to standard error.

use std::path::PathBuf;
use std::time::Duration;

use anyhow::{Context, bail};

use crate::bridge::{Bridge, BridgeOptions, Tuning};
use crate::config::{self, Config, Elicitation, Flags};
use crate::mcp::backend::Backend;
use crate::mcp::{DEFAULT_PROGRESS_INTERVAL, McpServer};

/// The environment variable naming the daemon to forward to.
pub const SERVER_ENV: &str = "ASKBRIDGE_SERVER";

/// The environment variable setting the progress interval in milliseconds
/// (for tests; the default is 15 seconds).
pub const PROGRESS_ENV: &str = "ASKBRIDGE_MCP_PROGRESS_MS";
/// Whether a forwarder shows asks in the host's dialog (`also`, `only`, `off`).
const ELICITATION_ENV: &str = "ASKBRIDGE_MCP_ELICITATION";

/// Arguments of `askbridge mcp`.
#[derive(Debug, Clone, clap::Args)]
pub struct McpArgs {
    /// A running daemon to forward to (`http://127.0.0.1:8790`; default:
    /// `$ASKBRIDGE_SERVER`); without one the bridge runs in this process.
    #[arg(long)]
    pub server: Option<String>,
    /// Config file, for the in-process bridge (default: as `askbridge serve`).
    #[arg(long)]
    pub config: Option<PathBuf>,
    /// Directory for the SQLite database, for the in-process bridge
    /// (default `.askbridge`, or as configured).
    #[arg(long)]
    pub data_dir: Option<PathBuf>,
    /// Milliseconds between progress notifications (default 15000, or
    /// `$ASKBRIDGE_MCP_PROGRESS_MS`).
    #[arg(long, hide = true)]
    pub progress_ms: Option<u64>,
}

/// Serves MCP on standard input and output until it closes; asks still
/// waiting then are cancelled.
pub async fn run(args: McpArgs) -> anyhow::Result<()> {
    init_logging();
    let progress_interval = progress_interval(args.progress_ms)?;
    let server_url = args.server.clone().or_else(|| {
        std::env::var(SERVER_ENV)
            .ok()
            .filter(|url| !url.trim().is_empty())
    });
    let (backend, elicitation) = match server_url {
        Some(url) => {
            let client = super::daemon_client(&url).with_context(|| format!("--server {url}"))?;
            tracing::info!(server = client.url(), "forwarding asks to the daemon");
            (Backend::Remote(client), elicitation_from_env()?)
        }
        None => {
            let flags = Flags {
                listen: None,
                data_dir: args.data_dir.clone(),
            };
            let config = config::load(args.config.as_deref(), &flags, |name| {
                std::env::var(name).ok()
            })?;
            let bridge = open_bridge(&config).await?;
            (Backend::Local(bridge), config.mcp.elicitation)
        }
    };
    let server = McpServer::new(backend, progress_interval).with_elicitation(elicitation);
    server.serve_stdio().await?;
    Ok(())
}

/// A forwarder reads no config file (that is the daemon's): whether it
/// shows asks in the host's dialog comes from `ASKBRIDGE_MCP_ELICITATION`.
fn elicitation_from_env() -> anyhow::Result<Elicitation> {
    match std::env::var(ELICITATION_ENV) {
        Ok(text) if !text.trim().is_empty() => Elicitation::parse(&text)
            .with_context(|| format!("{ELICITATION_ENV}={text:?}: expected also, only or off")),
        _ => Ok(Elicitation::default()),
    }
}

/// The progress interval: the flag, else the environment, else 15 s.
fn progress_interval(flag: Option<u64>) -> anyhow::Result<Duration> {
    let millis = match flag {
        Some(millis) => Some(millis),
        None => match std::env::var(PROGRESS_ENV) {
            Ok(text) if !text.trim().is_empty() => {
                Some(text.trim().parse::<u64>().with_context(|| {
                    format!("{PROGRESS_ENV}={text:?} is not a number of milliseconds")
                })?)
            }
            _ => None,
        },
    };
    match millis {
        Some(0) => bail!("the progress interval must be at least 1 ms"),
        Some(millis) => Ok(Duration::from_millis(millis)),
        None => Ok(DEFAULT_PROGRESS_INTERVAL),
    }
}

/// Opens the in-process bridge the way `askbridge serve` would: the same
/// configuration (file, `ASKBRIDGE_*`, `--data-dir`), database and default
/// target, and the web channel when it is enabled.
async fn open_bridge(config: &Config) -> anyhow::Result<Bridge> {
    std::fs::create_dir_all(&config.data_dir).with_context(|| {
        format!(
            "cannot create the data directory {}",
            config.data_dir.display()
        )
    })?;
    tracing::info!(data_dir = %config.data_dir.display(), "running the bridge in this process");
    let instance = crate::instance::InstanceName::resolve(
        config.cluster.instance.as_deref(),
        &config.data_dir,
    )?;
    let bridge = Bridge::open_with(
        BridgeOptions::new(config.database_url.clone(), config.defaults.clone())
            .instance(instance.hold()),
        Tuning {
            lease: config.cluster.lease,
            ..Tuning::default()
        },
    )
    .await
    .with_context(|| format!("cannot open the database in {}", config.data_dir.display()))?;
    if config.web.enabled {
        // Asks to `web` wait for the page of a daemon sharing this
        // database; pass --server to forward to the daemon instead.
        bridge.add_channel(crate::web::channel());
    }
    Ok(bridge)
}

/// Logs to standard error (standard output is the protocol), filtered by
/// `ASKBRIDGE_LOG` (default `askbridge=info,rmcp=warn`). Leaves a subscriber set up earlier alone.
fn init_logging() {
    let filter = tracing_subscriber::EnvFilter::try_from_env("ASKBRIDGE_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("askbridge=info,rmcp=warn"));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(false)
        .try_init();
}

//! `askbridge serve`: the daemon.
//!
//! Reads the configuration (file, `ASKBRIDGE_*`, flags), refuses to listen
//! beyond loopback without an API token, sets up logging to standard error,
//! opens the bridge, mounts the web page and MCP next to the HTTP API, and
//! serves until Ctrl-C or SIGTERM. Once bound it prints exactly one line to
//! standard output, `listening on http://ADDR`, which scripts and tests
//! wait for.

use std::io::{IsTerminal, Write};
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use tracing_subscriber::EnvFilter;

use super::ConfigArgs;
use crate::bridge::{Bridge, BridgeOptions, Owned, Tuning};
use crate::config::Config;
use crate::http::{self, HttpOptions, Mounts, ShutdownSignal};
use crate::mcp::McpOptions;

/// How long open connections (event streams, MCP sessions) may take to
/// finish after a shutdown signal before the daemon exits anyway.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(5);

/// Arguments of `askbridge serve`.
#[derive(Debug, Clone, clap::Args)]
pub struct ServeArgs {
    /// The configuration.
    #[command(flatten)]
    pub config: ConfigArgs,
}

/// Runs the daemon until Ctrl-C or SIGTERM.
pub async fn run(args: ServeArgs) -> anyhow::Result<()> {
    init_logging();
    let config = args.config.load()?;
    serve(config).await
}

/// Logging: `ASKBRIDGE_LOG`, else `RUST_LOG`, else `info`; to standard
/// error, so standard output carries only the `listening on` line.
fn init_logging() {
    let filter = ["ASKBRIDGE_LOG", "RUST_LOG"]
        .iter()
        .find_map(|name| {
            std::env::var(name)
                .ok()
                .filter(|v| !v.trim().is_empty())
                .and_then(|v| EnvFilter::try_new(v).ok())
        })
        .unwrap_or_else(|| EnvFilter::new("info"));
    // A subscriber may already be set when serve runs inside another
    // command; keep that one.
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal())
        .try_init();
}

/// Serves a validated configuration until a shutdown signal.
pub async fn serve(config: Config) -> anyhow::Result<()> {
    if let Some(file) = &config.file {
        tracing::info!(file = %file.display(), "config read");
    }
    std::fs::create_dir_all(&config.data_dir).with_context(|| {
        format!(
            "cannot create the data directory {}",
            config.data_dir.display()
        )
    })?;
    // Kept (and its lock held) until the daemon exits.
    let instance = crate::instance::InstanceName::resolve(
        config.cluster.instance.as_deref(),
        &config.data_dir,
    )?;
    let bridge = Bridge::open_with(
        BridgeOptions::new(config.database_url.clone(), config.defaults.clone())
            .instance(instance.name.clone()),
        Tuning {
            lease: config.cluster.lease,
            ..Tuning::default()
        },
    )
    .await
    .with_context(|| {
        format!(
            "cannot open the database {}",
            crate::store::redact_url(&config.database_url)
        )
    })?;

    if let Some(webhooks) = &config.webhooks {
        let webhooks = Arc::new(crate::webhooks::Webhooks::new(webhooks).context("webhooks")?);
        bridge.set_callbacks(Arc::clone(&webhooks) as Arc<dyn crate::bridge::CallbackCheck>);
        tokio::spawn(crate::webhooks::run(bridge.downgrade(), webhooks));
    }

    let telegram = config
        .telegram
        .as_ref()
        .map(|telegram| crate::channels::telegram::Telegram::new(&bridge, telegram))
        .transpose()
        .map_err(|message| anyhow::anyhow!("telegram: {message}"))?;
    let discord = config
        .discord
        .as_ref()
        .map(|discord| crate::channels::discord::Discord::new(&bridge, discord))
        .transpose()
        .map_err(|message| anyhow::anyhow!("discord: {message}"))?;
    let slack = config
        .slack
        .as_ref()
        .map(|slack| crate::channels::slack::Slack::new(&bridge, slack))
        .transpose()
        .map_err(|message| anyhow::anyhow!("slack: {message}"))?;
    let feishu = config
        .feishu
        .as_ref()
        .map(|feishu| crate::channels::feishu::Feishu::new(&bridge, feishu))
        .transpose()
        .map_err(|message| anyhow::anyhow!("feishu: {message}"))?;
    let matrix = match &config.matrix {
        Some(matrix) => Some(
            crate::channels::matrix::Matrix::new(&bridge, matrix, &config.data_dir)
                .await
                .map_err(|message| anyhow::anyhow!("matrix: {message}"))?,
        ),
        None => None,
    };
    let teams = config
        .teams
        .as_ref()
        .map(|teams| crate::channels::teams::Teams::new(&bridge, teams))
        .transpose()
        .map_err(|message| anyhow::anyhow!("teams: {message}"))?;
    let email = config
        .email
        .as_ref()
        .map(|email| {
            crate::channels::email::Email::new(&bridge, email, config.public_url.as_deref())
        })
        .transpose()
        .map_err(|message| anyhow::anyhow!("email: {message}"))?;
    if config
        .teams
        .as_ref()
        .is_some_and(|teams| teams.insecure_skip_token_check)
    {
        tracing::warn!(
            "teams.insecure_skip_token_check is on: anyone who can reach /teams/messages can answer asks as anyone, approvals included, and write in any conversation's name; \
             only loopback serviceUrls are taken (so the bot's Bot Connector token goes to no other machine) and askbridge listens on loopback only; \
             use it only with Microsoft's Agents Playground, never in production"
        );
    }
    let mounts = Mounts {
        web: config.web.enabled.then(|| {
            bridge.add_channel(crate::web::channel());
            crate::web::router(bridge.clone(), config.web.locale)
        }),
        mcp: Some(crate::mcp::router_with(
            bridge.clone(),
            McpOptions {
                allowed_hosts: config.mcp.allowed_hosts.clone(),
                elicitation: config.mcp.elicitation,
                ..McpOptions::default()
            },
        )),
        webhooks: telegram
            .iter()
            .filter_map(crate::channels::telegram::Telegram::webhook_router)
            .chain(
                discord
                    .iter()
                    .filter_map(crate::channels::discord::Discord::interactions_router),
            )
            .chain(
                slack
                    .iter()
                    .filter_map(crate::channels::slack::Slack::http_router),
            )
            .chain(
                feishu
                    .iter()
                    .filter_map(crate::channels::feishu::Feishu::webhook_router),
            )
            .chain(teams.iter().map(crate::channels::teams::Teams::router))
            .chain(email.iter().map(crate::channels::email::Email::router))
            .collect(),
    };
    let (stop, shutdown) = ShutdownSignal::new();
    let app = http::app(
        bridge.clone(),
        HttpOptions {
            api_token: config.api_token.clone(),
            max_body_bytes: config.http.max_body_bytes,
            cancel_on_disconnect: config.cancel_on_disconnect,
            hooks: (&config.hooks).into(),
            allowed_hosts: config.http.allowed_hosts.clone(),
        },
        mounts,
        shutdown.clone(),
    );

    // Listening for a stop before anyone can know the daemon is up.
    let mut stop_signal = Stop::listen();
    let listener = tokio::net::TcpListener::bind(config.listen)
        .await
        .with_context(|| format!("cannot listen on {}", config.listen))?;
    let addr = listener
        .local_addr()
        .context("cannot read the bound address")?;
    announce(addr)?;
    tracing::info!(
        %addr,
        data_dir = %config.data_dir.display(),
        web = config.web.enabled,
        instance = %instance.name,
        database = ?bridge.backend(),
        telegram = config.telegram.is_some(),
        discord = config.discord.is_some(),
        slack = config.slack.is_some(),
        feishu = config.feishu.is_some(),
        matrix = config.matrix.is_some(),
        teams = config.teams.is_some(),
        email = config.email.is_some(),
        token = config.api_token.is_some(),
        "askbridge is serving"
    );

    // Connections that must run once across instances run under a lease;
    // the others run here whatever the other instances do.
    let mut owned: Vec<Owned> = Vec::new();
    let mut receiving = Vec::new();
    if let Some(telegram) = &telegram {
        match telegram.receiving_lease() {
            Some(lease) => {
                let telegram = telegram.clone();
                owned.push(bridge.run_owned(&lease, move || telegram.start(addr)));
            }
            None => receiving.push(telegram.start(addr)),
        }
    }
    if let Some(discord) = &discord {
        let discord = discord.clone();
        owned.push(bridge.run_owned(
            crate::channels::discord::Discord::RECEIVING_LEASE,
            move || discord.start(),
        ));
    }
    receiving.extend(slack.iter().map(crate::channels::slack::Slack::start));
    if let Some(feishu) = &feishu {
        match feishu.receiving_lease() {
            Some(lease) => {
                let feishu = feishu.clone();
                owned.push(bridge.run_owned(lease, move || feishu.start()));
            }
            None => receiving.push(feishu.start()),
        }
    }
    if let Some(matrix) = &matrix {
        owned.push(matrix.run(&bridge));
    }
    if let Some(email) = &email {
        let lease = email.receiving_lease();
        let email = email.clone();
        owned.push(bridge.run_owned(&lease, move || email.start()));
    }
    let mut server = tokio::spawn(http::serve(listener, app, shutdown.clone()));
    tokio::select! {
        result = &mut server => {
            return result.context("the server task failed")?.context("the server failed");
        }
        signal = stop_signal.wait() => {
            tracing::info!(signal, "shutting down");
        }
    }
    // Waits return their current state, idle connections close, requests in
    // flight finish; long-lived streams get a short grace period.
    let _ = stop.send(true);
    match tokio::time::timeout(SHUTDOWN_GRACE, &mut server).await {
        Ok(result) => result
            .context("the server task failed")?
            .context("the server failed")?,
        Err(_) => {
            tracing::warn!(
                grace_seconds = SHUTDOWN_GRACE.as_secs(),
                "connections still open; closing them"
            );
            server.abort();
        }
    }
    for task in receiving {
        task.abort();
    }
    drop(owned);
    // Others take over this instance's connections and undelivered asks
    // now rather than when its leases run out.
    if let Err(error) = bridge.leave().await {
        tracing::warn!(error = %error, "could not give up this instance's leases");
    }
    tracing::info!("stopped");
    Ok(())
}

/// Prints the one line scripts wait for, and flushes it.
fn announce(addr: SocketAddr) -> anyhow::Result<()> {
    let mut stdout = std::io::stdout().lock();
    writeln!(stdout, "listening on http://{addr}")
        .and_then(|()| stdout.flush())
        .context("cannot write to standard output")
}

/// Ctrl-C (SIGINT) and SIGTERM, listened for from when it is made: a
/// stop that comes before [`Stop::wait`] is awaited waits for it, rather
/// than ending the process at once as the signal otherwise would (a
/// supervisor's stop right after "listening on", a host's Ctrl-C right
/// after a hook posted its ask).
pub(crate) struct Stop {
    #[cfg(unix)]
    signals: Option<(tokio::signal::unix::Signal, tokio::signal::unix::Signal)>,
}

impl Stop {
    /// Starts listening. Call inside the runtime.
    pub(crate) fn listen() -> Stop {
        #[cfg(unix)]
        {
            use tokio::signal::unix::{SignalKind, signal};
            let signals = signal(SignalKind::interrupt())
                .and_then(|interrupt| Ok((interrupt, signal(SignalKind::terminate())?)))
                .ok();
            Stop { signals }
        }
        #[cfg(not(unix))]
        Stop {}
    }

    /// Resolves on Ctrl-C or SIGTERM, naming which.
    pub(crate) async fn wait(&mut self) -> &'static str {
        #[cfg(unix)]
        {
            let Some((interrupt, terminate)) = &mut self.signals else {
                return std::future::pending().await;
            };
            tokio::select! {
                _ = interrupt.recv() => "SIGINT",
                _ = terminate.recv() => "SIGTERM",
            }
        }
        #[cfg(not(unix))]
        {
            if tokio::signal::ctrl_c().await.is_err() {
                std::future::pending::<()>().await;
            }
            "SIGINT"
        }
    }
}

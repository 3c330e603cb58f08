//! The commands: the daemon (`serve`), whether its setup works (`check`),
//! MCP on stdio (`mcp`), asking from the shell (`ask`), a coding agent's
//! hook answered from a chat (`hook`), and the core as
//! tools (`normalize`, `resolve`, `render`).
//!
//! Each command reads its input as a string and writes to a writer, so the
//! tests run them in-process; `main.rs` only wires files and exit codes.

pub mod ask;
pub mod check;
pub mod hook;
mod hook_state;
pub mod hooks;
pub mod mcp;
pub mod normalize;
pub mod render;
pub mod resolve;
pub mod serve;
mod settings_file;

use std::io::{self, Read};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};

use crate::config::{self, Config, ConfigError, Flags};
use crate::mcp::daemon::{DaemonClient, DaemonError, TOKEN_ENV};

/// The daemon's configuration as the command line gives it: `serve` runs
/// it, `check` checks it. The flags override the config file and the
/// environment.
#[derive(Debug, Clone, clap::Args)]
pub struct ConfigArgs {
    /// Config file (default: `config/askbridge.toml` when it exists, or
    /// `ASKBRIDGE_CONFIG`).
    #[arg(long)]
    pub config: Option<PathBuf>,
    /// Address to listen on (default 127.0.0.1:8790; port 0 picks a free
    /// port, which `serve` prints on its `listening on` line).
    #[arg(long)]
    pub listen: Option<SocketAddr>,
    /// Directory for the SQLite database (default `.askbridge`).
    #[arg(long)]
    pub data_dir: Option<PathBuf>,
}

impl ConfigArgs {
    /// The configuration the daemon would run: the config file, then
    /// `ASKBRIDGE_*` from the environment, then these flags; refused
    /// beyond loopback without an API token.
    pub fn load(&self) -> Result<Config, ConfigError> {
        let flags = Flags {
            listen: self.listen,
            data_dir: self.data_dir.clone(),
        };
        let config = config::load(self.config.as_deref(), &flags, |name| {
            std::env::var(name).ok()
        })?;
        config.check_exposure()?;
        Ok(config)
    }
}

/// A client for the daemon at `url`, sending the token in
/// `ASKBRIDGE_API_TOKEN` (the variable the daemon itself reads) when it is
/// set.
pub fn daemon_client(url: &str) -> Result<DaemonClient, DaemonError> {
    let token = std::env::var(TOKEN_ENV).ok();
    DaemonClient::new(url)?.with_token(token.as_deref())
}

/// Reads a file, or standard input for `-`.
pub fn read_input(path: &Path) -> io::Result<String> {
    if path.as_os_str() == "-" {
        let mut text = String::new();
        io::stdin().read_to_string(&mut text)?;
        Ok(text)
    } else {
        std::fs::read_to_string(path)
    }
}

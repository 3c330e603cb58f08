//! A Postgres server of one test's own, for what would disturb the shared
//! one (a restart): `initdb` into a temp directory, `pg_ctl start` on a
//! free loopback port, trust authentication for the role `askbridge`.
//! Stopped (immediately) and removed when dropped.
//!
//! The server programs come from `ASKBRIDGE_TEST_POSTGRES_BIN` when set,
//! else the newest `/usr/lib/postgresql/*/bin` (Debian's layout, what
//! `.ci/run` installs), else `pg_ctl` on `PATH`. Postgres refuses to run
//! as root, so as root the programs run as the `postgres` user (through
//! `runuser`), who then owns the directory.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The variable naming the directory of `initdb` and `pg_ctl`.
pub const POSTGRES_BIN_VAR: &str = "ASKBRIDGE_TEST_POSTGRES_BIN";

/// How [`PrivateServer::restart`] stops the server.
#[derive(Debug, Clone, Copy)]
pub enum Shutdown {
    /// Sessions are ended and the server shuts down cleanly (a checkpoint
    /// written): `pg_ctl restart`'s default.
    Fast,
    /// Every process is killed at once, as in a crash: the server
    /// recovers from its write-ahead log when it starts again.
    Immediate,
}

/// A running private server.
#[derive(Debug)]
pub struct PrivateServer {
    bin: PathBuf,
    dir: PathBuf,
    port: u16,
}

impl PrivateServer {
    /// Creates and starts a server.
    ///
    /// # Panics
    /// When the server programs are not found or a step fails (with its
    /// output).
    pub fn start() -> PrivateServer {
        let bin = server_bin();
        let dir = std::env::temp_dir().join(format!("askbridge-pg-{}", uuid::Uuid::new_v4()));
        std::fs::create_dir_all(&dir).expect("the server's directory");
        if running_as_root() {
            run(Command::new("chown").arg("postgres").arg(&dir));
        }
        let port = free_port();
        let server = PrivateServer { bin, dir, port };
        run(server
            .program("initdb")
            .args([
                "--auth=trust",
                "--username=askbridge",
                "--encoding=UTF8",
                "--no-sync",
            ])
            .arg("-D")
            .arg(server.data()));
        let options = format!(
            "-p {port} -k {} -c listen_addresses=127.0.0.1 -c fsync=off",
            server.dir.display()
        );
        run(server.pg_ctl().arg("-o").arg(options).arg("start"));
        server
    }

    /// Its URL (the `postgres` database, as `askbridge`).
    pub fn url(&self) -> String {
        format!("postgres://askbridge@127.0.0.1:{}/postgres", self.port)
    }

    /// `pg_ctl restart` in `mode`; returns once the server accepts
    /// connections again.
    pub fn restart(&self, mode: Shutdown) {
        let mode = match mode {
            Shutdown::Fast => "fast",
            Shutdown::Immediate => "immediate",
        };
        run(self.pg_ctl().args(["-m", mode, "restart"]));
    }

    fn data(&self) -> PathBuf {
        self.dir.join("data")
    }

    /// `pg_ctl` for this server; the server's output goes to its log
    /// (a server left writing to our pipe would keep it open for good).
    fn pg_ctl(&self) -> Command {
        let mut command = self.program("pg_ctl");
        command
            .arg("-D")
            .arg(self.data())
            .arg("-l")
            .arg(self.dir.join("log"))
            .args(["-w", "-t", "60"]);
        command
    }

    fn program(&self, name: &str) -> Command {
        let program = self.bin.join(name);
        if running_as_root() {
            let mut command = Command::new("runuser");
            command.args(["-u", "postgres", "--"]).arg(program);
            command
        } else {
            Command::new(program)
        }
    }
}

impl Drop for PrivateServer {
    fn drop(&mut self) {
        let _ = self
            .program("pg_ctl")
            .arg("-D")
            .arg(self.data())
            .args(["-m", "immediate", "stop"])
            .output();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Runs `command`; panics with its output when it fails.
fn run(command: &mut Command) {
    let output = command
        .output()
        .unwrap_or_else(|error| panic!("cannot run {command:?}: {error}"));
    assert!(
        output.status.success(),
        "{command:?} failed ({}):\n{}{}",
        output.status,
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
}

fn running_as_root() -> bool {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata("/proc/self").is_ok_and(|proc| proc.uid() == 0)
}

/// The directory holding `initdb` and `pg_ctl`.
fn server_bin() -> PathBuf {
    if let Some(dir) = std::env::var_os(POSTGRES_BIN_VAR) {
        return dir.into();
    }
    let debian = std::fs::read_dir("/usr/lib/postgresql")
        .into_iter()
        .flatten();
    let newest = debian
        .flatten()
        .filter_map(|entry| {
            let version: u32 = entry.file_name().to_str()?.parse().ok()?;
            Some((version, entry.path().join("bin")))
        })
        .filter(|(_, bin)| bin.join("pg_ctl").exists())
        .max();
    if let Some((_, bin)) = newest {
        return bin;
    }
    let on_path = std::env::var_os("PATH")
        .into_iter()
        .flat_map(|path| std::env::split_paths(&path).collect::<Vec<_>>())
        .find(|dir| Path::new(dir).join("pg_ctl").exists());
    on_path.unwrap_or_else(|| {
        panic!(
            "no Postgres server programs (initdb, pg_ctl): install Postgres \
             (`.ci/run` does: apt-get install postgresql) or set {POSTGRES_BIN_VAR}"
        )
    })
}

/// A loopback port nothing listens on now.
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .expect("a free port")
        .port()
}

//! The real daemon for end-to-end tests: spawns `askbridge serve` on a free
//! loopback port with its own data directory, waits for its `listening on
//! http://ADDR` line (no sleeping), and kills it when dropped.
//!
//! Use it from any integration test file with `mod daemon;`:
//!
//! ```ignore
//! mod daemon;
//! use daemon::Daemon;
//!
//! let mut daemon = Daemon::start();                 // fresh data dir, 127.0.0.1:0
//! let client = daemon::client();                    // reqwest, no proxies
//! client.get(daemon.url("/healthz")).send().await;
//! daemon.kill();                                    // SIGKILL, like a crash
//! daemon.restart();                                 // same data dir, new port
//! let token = Daemon::builder().token("t").listen("0.0.0.0:0").start();
//! let failed = Daemon::builder().arg("--config").arg("bad.toml").run_to_exit();
//! ```
//!
//! The daemon runs in its data directory as working directory, with every
//! `ASKBRIDGE_*` (and platform `TELEGRAM_*`, `DISCORD_*`, `SLACK_*`) variable
//! of the caller removed, so no repository config
//! and no developer setting leaks in. Its standard error is kept (see
//! [`Daemon::stderr`]) and echoed to the test's output.
//!
//! The helpers are blocking (std::process); they are fine to call from
//! `#[tokio::test]` functions.

#![allow(dead_code)]

pub mod client;
pub mod events;

use std::ffi::OsString;
use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, mpsc};
use std::time::Duration;

use serde_json::Value;

/// Longest wait for the daemon to print its address.
const START_TIMEOUT: Duration = Duration::from_secs(60);

/// The line the daemon prints once bound.
const LISTENING: &str = "listening on http://";

/// What the daemon says when its port is taken (the OS's words, after
/// `cannot listen on ADDR:`).
const ADDRESS_IN_USE: &str = "Address already in use";

/// Ports [`Daemon::on_a_fixed_port`] tries.
const FIXED_PORT_TRIES: u32 = 3;

/// A reqwest client for talking to a daemon: no proxies (a developer's
/// `HTTP_PROXY` must not catch 127.0.0.1), no overall timeout (long-polls
/// are the point; tests bound them with `?wait=`).
pub fn client() -> reqwest::Client {
    reqwest::Client::builder()
        .no_proxy()
        .build()
        .expect("build the HTTP client")
}

/// A directory under the target directory, removed when the last owner
/// drops it.
#[derive(Debug)]
pub struct TempDir(PathBuf);

impl TempDir {
    /// A new empty directory named after `label`.
    pub fn new(label: &str) -> TempDir {
        static COUNTER: AtomicUsize = AtomicUsize::new(0);
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        let path = Path::new(env!("CARGO_TARGET_TMPDIR"))
            .join(format!("{label}-{}-{n}-{nanos}", std::process::id()));
        std::fs::create_dir_all(&path).expect("create a temporary directory");
        TempDir(path)
    }

    /// Its path.
    pub fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// The `askbridge` binary, with none of the caller's `ASKBRIDGE_*`,
/// `TELEGRAM_*`, `DISCORD_*` or `SLACK_*` variables: no developer setting
/// leaks in.
pub fn askbridge_command() -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_askbridge"));
    for (key, _) in std::env::vars_os() {
        let key_text = key.to_string_lossy();
        if ["ASKBRIDGE_", "TELEGRAM_", "DISCORD_", "SLACK_"]
            .iter()
            .any(|prefix| key_text.starts_with(prefix))
        {
            command.env_remove(key);
        }
    }
    command
}

/// How to start a daemon; see [`Daemon::builder`].
#[derive(Debug, Clone)]
pub struct Builder {
    listen: Option<String>,
    args: Vec<OsString>,
    envs: Vec<(OsString, OsString)>,
    data_dir: Option<PathBuf>,
    temp: Option<Arc<TempDir>>,
    token: Option<String>,
}

impl Builder {
    /// `--listen` (default `127.0.0.1:0`: a free loopback port).
    pub fn listen(mut self, addr: &str) -> Builder {
        self.listen = Some(addr.to_owned());
        self
    }

    /// Passes no `--listen`, so the config file or `ASKBRIDGE_LISTEN`
    /// decides — for tests of bad listen settings. A setting that works
    /// binds its own (fixed) port.
    pub fn listen_from_config(mut self) -> Builder {
        self.listen = None;
        self
    }

    /// One more argument after `serve` (e.g. `--config`, a path).
    pub fn arg(mut self, arg: impl Into<OsString>) -> Builder {
        self.args.push(arg.into());
        self
    }

    /// An environment variable for the daemon.
    pub fn env(mut self, key: impl Into<OsString>, value: impl Into<OsString>) -> Builder {
        self.envs.push((key.into(), value.into()));
        self
    }

    /// Sets `ASKBRIDGE_API_TOKEN`; [`Daemon::token`] returns it.
    pub fn token(mut self, token: &str) -> Builder {
        self.token = Some(token.to_owned());
        self.env("ASKBRIDGE_API_TOKEN", token)
    }

    /// Uses this data directory (kept afterwards) instead of a fresh
    /// temporary one.
    pub fn data_dir(mut self, dir: impl Into<PathBuf>) -> Builder {
        self.data_dir = Some(dir.into());
        self
    }

    fn dir(&mut self) -> PathBuf {
        if let Some(dir) = &self.data_dir {
            std::fs::create_dir_all(dir).expect("create the data directory");
            return dir.clone();
        }
        let temp = self
            .temp
            .get_or_insert_with(|| Arc::new(TempDir::new("askbridge-daemon")));
        temp.path().to_path_buf()
    }

    fn command(&mut self) -> Command {
        let dir = self.dir();
        let mut command = askbridge_command();
        command
            .arg("serve")
            .args(
                self.listen
                    .iter()
                    .flat_map(|addr| ["--listen", addr.as_str()]),
            )
            .arg("--data-dir")
            .arg(&dir)
            .args(&self.args)
            .current_dir(&dir)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        command.envs(self.envs.iter().map(|(k, v)| (k, v)));
        command
    }

    /// Starts the daemon and waits for its address; panics, with its
    /// standard error, if it exits or stays silent instead.
    pub fn start(mut self) -> Daemon {
        let (child, addr, stderr) = match self.spawn() {
            Started::Listening(child, addr, stderr) => (child, addr, stderr),
            Started::Exited(exited) => panic!(
                "askbridge serve exited with {} before listening; stderr:\n{}",
                exited.status, exited.stderr
            ),
        };
        Daemon {
            child: Some(child),
            addr,
            stderr,
            builder: self,
        }
    }

    /// Runs a daemon that is expected to refuse to start; panics if it
    /// starts listening instead.
    pub fn run_to_exit(mut self) -> Exited {
        match self.spawn() {
            Started::Exited(exited) => exited,
            Started::Listening(mut child, addr, stderr) => {
                let _ = child.kill();
                let _ = child.wait();
                let stderr = stderr.lock().map(|s| s.clone()).unwrap_or_default();
                panic!(
                    "askbridge serve started on {addr} but was expected to fail; stderr:\n{stderr}"
                )
            }
        }
    }

    fn spawn(&mut self) -> Started {
        let mut child = self.command().spawn().expect("start askbridge serve");
        let stderr = Arc::new(Stderr::default());
        let stderr_done = {
            let pipe = child.stderr.take().expect("stderr is piped");
            let stderr = Arc::clone(&stderr);
            let (done, finished) = mpsc::channel::<()>();
            std::thread::spawn(move || {
                for line in BufReader::new(pipe).lines() {
                    let Ok(line) = line else { break };
                    eprintln!("[askbridge] {line}");
                    if let Ok(mut all) = stderr.lock() {
                        all.push_str(&line);
                        all.push('\n');
                    }
                    stderr.grew.notify_all();
                }
                let _ = done.send(());
            });
            finished
        };
        let (found, address) = mpsc::channel::<Option<SocketAddr>>();
        let stdout = child.stdout.take().expect("stdout is piped");
        std::thread::spawn(move || {
            // Reads to the end, so the daemon never blocks on a full pipe.
            let mut reader = BufReader::new(stdout);
            let mut line = String::new();
            let mut sent = false;
            loop {
                line.clear();
                match reader.read_line(&mut line) {
                    Ok(0) | Err(_) => break,
                    Ok(_) => {
                        if !sent && let Some(rest) = line.trim().strip_prefix(LISTENING) {
                            let addr = rest.trim_end_matches('/').parse().ok();
                            let _ = found.send(addr);
                            sent = true;
                        } else {
                            eprintln!("[askbridge stdout] {}", line.trim_end());
                        }
                    }
                }
            }
            if !sent {
                let _ = found.send(None);
            }
        });
        match address.recv_timeout(START_TIMEOUT) {
            Ok(Some(addr)) => Started::Listening(child, addr, stderr),
            Ok(None) => {
                let status = child.wait().expect("wait for askbridge serve");
                // Standard error is complete once its reader saw the end.
                let _ = stderr_done.recv_timeout(START_TIMEOUT);
                let stderr = stderr.lock().map(|s| s.clone()).unwrap_or_default();
                Started::Exited(Exited { status, stderr })
            }
            Err(_) => {
                let _ = child.kill();
                let _ = child.wait();
                let stderr = stderr.lock().map(|s| s.clone()).unwrap_or_default();
                panic!(
                    "askbridge serve printed no address within {START_TIMEOUT:?}; stderr:\n{stderr}"
                )
            }
        }
    }
}

enum Started {
    Listening(Child, SocketAddr, Arc<Stderr>),
    Exited(Exited),
}

/// A daemon's standard error so far, and a signal when it grows.
#[derive(Debug, Default)]
struct Stderr {
    text: Mutex<String>,
    grew: Condvar,
}

impl Stderr {
    fn lock(&self) -> std::sync::LockResult<std::sync::MutexGuard<'_, String>> {
        self.text.lock()
    }
}

/// A daemon that exited on its own.
#[derive(Debug)]
pub struct Exited {
    /// Its exit status.
    pub status: ExitStatus,
    /// Everything it wrote to standard error.
    pub stderr: String,
}

/// A running `askbridge serve`; killed (SIGKILL) when dropped, and its
/// temporary data directory removed.
#[derive(Debug)]
pub struct Daemon {
    child: Option<Child>,
    addr: SocketAddr,
    stderr: Arc<Stderr>,
    builder: Builder,
}

impl Daemon {
    /// A daemon on `127.0.0.1:0` with a fresh data directory.
    pub fn start() -> Daemon {
        Daemon::builder().start()
    }

    /// A daemon on a free loopback port that stays its port across
    /// [`Daemon::restart`], so it comes back where clients look.
    ///
    /// The port is found by binding and releasing it, so another process
    /// can take it before the daemon binds it: then another port is tried
    /// (as the Synapse fixture does), at most [`FIXED_PORT_TRIES`] times.
    pub fn on_a_fixed_port() -> Daemon {
        for attempt in 1..=FIXED_PORT_TRIES {
            let port = std::net::TcpListener::bind("127.0.0.1:0")
                .and_then(|listener| listener.local_addr())
                .expect("a free port")
                .port();
            let mut builder = Daemon::builder().listen(&format!("127.0.0.1:{port}"));
            match builder.spawn() {
                Started::Listening(child, addr, stderr) => {
                    return Daemon {
                        child: Some(child),
                        addr,
                        stderr,
                        builder,
                    };
                }
                Started::Exited(exited)
                    if exited.stderr.contains(ADDRESS_IN_USE) && attempt < FIXED_PORT_TRIES =>
                {
                    eprintln!("port {port} was taken before the daemon bound it; trying another");
                }
                Started::Exited(exited) => panic!(
                    "askbridge serve exited with {} before listening on 127.0.0.1:{port} \
                     (try {attempt} of {FIXED_PORT_TRIES}); stderr:\n{}",
                    exited.status, exited.stderr
                ),
            }
        }
        unreachable!("the last try returns or panics")
    }

    /// Options for a daemon: listen address, arguments, environment, token,
    /// data directory.
    pub fn builder() -> Builder {
        Builder {
            listen: Some("127.0.0.1:0".to_owned()),
            args: Vec::new(),
            envs: Vec::new(),
            data_dir: None,
            temp: None,
            token: None,
        }
    }

    /// The address it printed (`0.0.0.0:PORT` when bound to all interfaces).
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The address to connect to: the printed one, with an unspecified IP
    /// (`0.0.0.0`, `::`) replaced by loopback.
    pub fn connect_addr(&self) -> SocketAddr {
        let mut addr = self.addr;
        if addr.ip().is_unspecified() {
            addr.set_ip(if addr.is_ipv4() {
                std::net::Ipv4Addr::LOCALHOST.into()
            } else {
                std::net::Ipv6Addr::LOCALHOST.into()
            });
        }
        addr
    }

    /// `http://ADDR` (connectable).
    pub fn base(&self) -> String {
        format!("http://{}", self.connect_addr())
    }

    /// `http://ADDR{path}`.
    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base())
    }

    /// The API token it was started with, if any.
    pub fn token(&self) -> Option<&str> {
        self.builder.token.as_deref()
    }

    /// Its data directory.
    pub fn data_dir(&self) -> PathBuf {
        let mut builder = self.builder.clone();
        builder.dir()
    }

    /// Its process id, while running.
    pub fn pid(&self) -> Option<u32> {
        self.child.as_ref().map(Child::id)
    }

    /// Everything it wrote to standard error so far (across restarts).
    pub fn stderr(&self) -> String {
        self.stderr.lock().map(|s| s.clone()).unwrap_or_default()
    }

    /// Waits until its standard error has a line containing `needle`
    /// (from now on or before); panics with what it has after `within`.
    pub fn wait_for_log(&self, needle: &str, within: Duration) {
        let text = self.stderr.lock().expect("stderr lock");
        let (text, waited) = self
            .stderr
            .grew
            .wait_timeout_while(text, within, |text| !text.contains(needle))
            .expect("stderr lock");
        assert!(
            !waited.timed_out(),
            "the daemon logged no {needle:?} within {within:?}; stderr:\n{}",
            *text
        );
    }

    /// Kills it with SIGKILL, like a crash, and reaps it.
    pub fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// Sends SIGTERM and waits for it to exit; returns its status.
    pub fn terminate(&mut self) -> ExitStatus {
        let mut child = self.child.take().expect("the daemon is running");
        let sent = Command::new("kill")
            .args(["-TERM", &child.id().to_string()])
            .status()
            .expect("run kill -TERM");
        assert!(sent.success(), "kill -TERM failed");
        child.wait().expect("wait for askbridge serve")
    }

    /// Kills it (SIGKILL) if running and starts it again with the same
    /// options and data directory; the port is new unless one was fixed.
    pub fn restart(&mut self) {
        self.kill();
        let old = std::mem::take(&mut *self.stderr.lock().expect("stderr lock"));
        let mut builder = self.builder.clone();
        match builder.spawn() {
            Started::Listening(child, addr, stderr) => {
                if let Ok(mut new) = stderr.lock() {
                    new.insert_str(0, &old);
                }
                self.child = Some(child);
                self.addr = addr;
                self.stderr = stderr;
            }
            Started::Exited(exited) => panic!(
                "askbridge serve exited with {} on restart; stderr:\n{}",
                exited.status, exited.stderr
            ),
        }
    }
}

impl Drop for Daemon {
    fn drop(&mut self) {
        self.kill();
    }
}

/// The HTTP API of a test daemon.
pub struct Api<'a> {
    daemon: &'a Daemon,
    pub http: reqwest::Client,
}

impl Api<'_> {
    /// The daemon's API, with its bearer token when it has one.
    pub fn of(daemon: &Daemon) -> Api<'_> {
        let mut builder = reqwest::Client::builder().no_proxy();
        if let Some(token) = daemon.token() {
            let mut headers = reqwest::header::HeaderMap::new();
            let value = format!("Bearer {token}").parse().expect("a header value");
            headers.insert(reqwest::header::AUTHORIZATION, value);
            builder = builder.default_headers(headers);
        }
        Api {
            daemon,
            http: builder.build().expect("build the HTTP client"),
        }
    }

    pub async fn send(&self, request: reqwest::RequestBuilder) -> Value {
        let response = request.send().await.expect("the daemon answers");
        let status = response.status();
        let body: Value = response.json().await.expect("a JSON body");
        assert!(status.is_success(), "HTTP {status}: {body}");
        body
    }

    /// `GET /v1/asks`: every ask, newest first.
    pub async fn list(&self) -> Value {
        self.send(self.http.get(self.daemon.url("/v1/asks"))).await
    }

    pub async fn pending_ids(&self) -> Vec<String> {
        let body = self
            .send(self.http.get(self.daemon.url("/v1/asks?status=pending")))
            .await;
        body["asks"]
            .as_array()
            .unwrap_or_else(|| panic!("no asks list in {body}"))
            .iter()
            .filter_map(|ask| ask["id"].as_str().map(str::to_owned))
            .collect()
    }

    pub async fn ask(&self, id: &str) -> Value {
        self.send(self.http.get(self.daemon.url(&format!("/v1/asks/{id}"))))
            .await
    }

    pub async fn reply(&self, id: &str, body: Value) -> Value {
        self.send(
            self.http
                .post(self.daemon.url(&format!("/v1/asks/{id}/reply")))
                .json(&body),
        )
        .await
    }

    pub async fn cancel(&self, id: &str) -> Value {
        self.send(self.http.delete(self.daemon.url(&format!("/v1/asks/{id}"))))
            .await
    }
}

/// Creates an ask over HTTP; returns its id.
pub async fn create(daemon: &Daemon, body: &Value) -> String {
    let response = Api::of(daemon)
        .http
        .post(daemon.url("/v1/asks"))
        .json(body)
        .send()
        .await
        .expect("create the ask");
    assert_eq!(response.status(), 201);
    let ask: Value = response.json().await.expect("JSON");
    ask["id"].as_str().expect("id").to_owned()
}

/// The ask once it has ended (long-polls; fails if it is still pending).
pub async fn outcome(daemon: &Daemon, id: &str) -> Value {
    let api = Api::of(daemon);
    let waiting = api.http.get(daemon.url(&format!("/v1/asks/{id}?wait=30")));
    let ask = api.send(waiting).await;
    assert_ne!(ask["status"], "pending", "still pending: {ask}");
    ask
}

/// The ask as it is now.
pub async fn status(daemon: &Daemon, id: &str) -> Value {
    Api::of(daemon).ask(id).await
}

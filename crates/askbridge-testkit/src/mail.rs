//! Real mail servers for the email channel's tests: Dovecot for the bot's
//! mailbox (IMAP, and LMTP to put mail in it), and an SMTP server that
//! records what it is sent.
//!
//! Like Matrix, mail is not faked. [`Dovecot::start`] runs a private
//! Dovecot from Debian's packages in a fresh temporary directory: its
//! configuration, sockets, state, log and the mail itself (maildir) are
//! all in there. It listens on `127.0.0.1` only, on two free ports: IMAP
//! (with `IDLE`; plain text, no TLS, `LOGIN` and `AUTHENTICATE PLAIN` /
//! `LOGIN` allowed) and LMTP. Its one account is [`Dovecot::user`]
//! (`bot@example.com`) with [`Dovecot::password`]; mail for
//! `bot+anything@example.com` lands in the same `INBOX`.
//!
//! - [`Dovecot::deliver`] puts a mail in the mailbox the way a mail server
//!   does, over LMTP (Dovecot adds `Return-Path`, `Delivered-To` and
//!   `Received`).
//! - [`Dovecot::messages`] reads a folder over IMAP, read-only (`EXAMINE`,
//!   `BODY.PEEK[]`): what a test asserts on, without disturbing the bot.
//! - [`Dovecot::wait_for`] waits, with `IDLE`, until a folder's messages
//!   pass a check: for what the bot does to the mailbox (marks read, moves
//!   to another folder).
//! - [`Dovecot::restart`] stops Dovecot and starts it again on the same
//!   ports and mail: every open connection is cut.
//! - [`DovecotOptions::folders`] are more folders that always exist
//!   (`Processed`, say), besides `INBOX`.
//!
//! [`SmtpSink::start`] runs an SMTP server (aiosmtpd) on a free port that
//! accepts every mail and records it, envelope included
//! ([`SmtpSink::wait_for`]). It offers `AUTH PLAIN` and `AUTH LOGIN` on the
//! plain connection and accepts any credentials;
//! [`SmtpSink::start_requiring`] makes authentication required and accepts
//! only the given ones.
//!
//! Dropping either fixture kills its processes; the temporary directory
//! goes with it. If the test process dies without dropping them, they exit
//! too (each notices its closed standard input, or a watchdog's).
//!
//! # What it needs
//!
//! - Dovecot: Debian's `dovecot-imapd` and `dovecot-lmtpd` (the fixture runs
//!   `/usr/sbin/dovecot`; the packages' own system service is not used).
//!   As root (CI), Dovecot's processes run as the packages' `dovecot` and
//!   `dovenull` users and the mail belongs to `dovecot`; as anyone else,
//!   everything runs as that user.
//! - The SMTP sink: `aiosmtpd` from PyPI (1.4.6) in the Python named by
//!   `ASKBRIDGE_TEST_PYTHON`, else in `$HOME/.cache/askbridge/venv/bin/python`
//!   (where `.ci/run` installs it).
//!
//! Without them, the start functions panic saying how to install them.
//!
//! # How long it takes
//!
//! Dovecot answers about 30 ms after it is started, and again after a
//! restart; the SMTP sink in about 100 ms (Python's start). Each start
//! prints the time it took. A delivery takes about 10 ms; Dovecot tells an
//! `IDLE` session (the bot's, or [`Dovecot::wait_for`]'s) of a change half
//! a second after it (Dovecot's fixed notification delay, which batches
//! changes).

use std::fmt;
use std::fs::{self, File};
use std::io::{BufRead, BufReader as StdBufReader};
use std::net::TcpListener;
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use base64::Engine;
use rustix::process::{Pid, Signal};
use serde_json::Value;
use tempfile::TempDir;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpStream;
use tokio::net::tcp::{OwnedReadHalf, OwnedWriteHalf};

use crate::watched::Watched;

/// Dovecot's master program, from Debian's `dovecot-core`.
const DOVECOT: &str = "/usr/sbin/dovecot";

const DOVECOT_MISSING: &str = "Dovecot is not installed: run .ci/run, or \
     `apt-get install dovecot-imapd dovecot-lmtpd`";

const AIOSMTPD_MISSING: &str = "aiosmtpd is not installed: run .ci/run, or \
     `pip install aiosmtpd==1.4.6` into a venv and set ASKBRIDGE_TEST_PYTHON";

/// Where the Python with aiosmtpd is looked for when `ASKBRIDGE_TEST_PYTHON`
/// is not set, relative to `$HOME` (the same as for Synapse).
const DEFAULT_PYTHON: &str = ".cache/askbridge/venv/bin/python";

/// The bot's account: its IMAP user name and mail address.
const BOT: &str = "bot@example.com";

/// The bot's IMAP password.
const BOT_PASSWORD: &str = "bot-password";

/// The envelope sender of a delivered mail without a `From` address.
const DEFAULT_SENDER: &str = "person@example.org";

/// How long a server may take to start.
const START_TIMEOUT: Duration = Duration::from_secs(30);

/// How often a starting Dovecot is asked whether it is up.
const START_POLL: Duration = Duration::from_millis(10);

/// How long one exchange with a server (a delivery, reading a folder) may
/// take, and how long [`Dovecot::wait_for`] and [`SmtpSink::wait_for`] wait.
const WAIT: Duration = Duration::from_secs(20);

/// How a [`Dovecot`] is configured.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DovecotOptions {
    /// Folders that exist from the start, besides `INBOX` (Dovecot's
    /// `mailbox NAME { auto = create }`), for example `Processed`. The
    /// hierarchy separator is `/`.
    pub folders: Vec<String>,
}

/// A running Dovecot on `127.0.0.1`, with one account; killed, and its
/// files removed, on drop.
pub struct Dovecot {
    /// Declared first, so dropped (killed) before its directory goes.
    running: Running,
    dir: TempDir,
    imap_port: u16,
    lmtp_port: u16,
}

impl fmt::Debug for Dovecot {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Dovecot")
            .field("imap", &self.imap_port)
            .field("lmtp", &self.lmtp_port)
            .field("pid", &self.running.master.id())
            .field("dir", &self.dir.path())
            .finish_non_exhaustive()
    }
}

/// A Dovecot master process, in a process group of its own, and the
/// watchdog that kills the group if the test process dies; the group is
/// killed on drop.
struct Running {
    master: Child,
    watchdog: Child,
    watchdog_stdin: Option<ChildStdin>,
    /// Already killed and reaped: its process group id may belong to
    /// another process by now.
    stopped: bool,
}

/// A message in a folder, as IMAP shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Message {
    /// Its IMAP UID in the folder.
    pub uid: u32,
    /// Its flags (`\Seen`, `\Answered`, keywords), without the per-session
    /// `\Recent`.
    pub flags: Vec<String>,
    /// The whole message as IMAP returns it (`BODY[]`, CRLF line endings),
    /// with the headers Dovecot added on delivery.
    pub raw: Vec<u8>,
}

impl Message {
    /// Whether it has `flag` (for example `\Seen`; case-insensitive).
    pub fn has_flag(&self, flag: &str) -> bool {
        self.flags
            .iter()
            .any(|have| have.eq_ignore_ascii_case(flag))
    }

    /// The first header called `name` (case-insensitive), unfolded, not
    /// decoded.
    pub fn header(&self, name: &str) -> Option<String> {
        header(&self.raw, name)
    }
}

impl Dovecot {
    /// Starts a Dovecot whose only folder is `INBOX`.
    pub async fn start() -> Dovecot {
        Dovecot::start_with(DovecotOptions::default()).await
    }

    /// Starts a Dovecot configured by `options`.
    ///
    /// # Panics
    ///
    /// If Dovecot is not installed (see the [module](self) documentation),
    /// exits while starting, or does not answer within 30 s; the panic
    /// shows Dovecot's log.
    pub async fn start_with(options: DovecotOptions) -> Dovecot {
        let began = Instant::now();
        assert!(Path::new(DOVECOT).exists(), "{DOVECOT_MISSING}");
        let identity = Identity::current();
        // The free ports are found by binding and releasing them, so another
        // process can take one before Dovecot binds it: then try again.
        for attempt in 1.. {
            let dir = tempfile::Builder::new()
                .prefix("askbridge-dovecot-")
                .tempdir()
                .expect("create Dovecot's temporary directory");
            let (imap_port, lmtp_port) = (free_port(), free_port());
            write_config(dir.path(), imap_port, lmtp_port, &identity, &options);
            let mut running = Running::spawn(dir.path());
            match wait_until_up(&mut running, dir.path(), imap_port, began).await {
                Ok(()) => {
                    eprintln!(
                        "Dovecot started (IMAP on port {imap_port}, LMTP on {lmtp_port}) in {:.2?}",
                        began.elapsed()
                    );
                    return Dovecot {
                        running,
                        dir,
                        imap_port,
                        lmtp_port,
                    };
                }
                Err(output) if output.contains("Address already in use") && attempt < 3 => {
                    drop(running);
                }
                Err(output) => {
                    drop(running);
                    panic!("Dovecot exited while starting:\n{output}");
                }
            }
        }
        unreachable!("the loop returns or panics")
    }

    /// `imap://bot%40example.com@127.0.0.1:PORT`: plain IMAP, no TLS.
    pub fn imap_url(&self) -> String {
        format!(
            "imap://{}@127.0.0.1:{}",
            BOT.replace('@', "%40"),
            self.imap_port
        )
    }

    /// The IMAP port on `127.0.0.1`.
    pub fn imap_port(&self) -> u16 {
        self.imap_port
    }

    /// The LMTP port on `127.0.0.1`.
    pub fn lmtp_port(&self) -> u16 {
        self.lmtp_port
    }

    /// The account's IMAP user name, which is also its mail address:
    /// `bot@example.com`.
    pub fn user(&self) -> &str {
        BOT
    }

    /// The account's IMAP password.
    pub fn password(&self) -> &str {
        BOT_PASSWORD
    }

    /// Dovecot's log (logins, deliveries, errors), for a failing test to
    /// show.
    pub fn log_path(&self) -> PathBuf {
        self.dir.path().join("dovecot.log")
    }

    /// Delivers `raw` (a whole mail, headers and body; LF or CRLF line
    /// endings) to the account's `INBOX` over LMTP. The envelope sender is
    /// the `From` header's address.
    ///
    /// # Panics
    ///
    /// If Dovecot refuses it or does not answer in time.
    pub async fn deliver(&self, raw: &[u8]) {
        self.deliver_to(BOT, raw).await;
    }

    /// Delivers `raw` like [`Dovecot::deliver`], with `recipient` as the
    /// envelope recipient: `bot@example.com`, or `bot+detail@example.com`
    /// (which lands in the same `INBOX`).
    ///
    /// # Panics
    ///
    /// If Dovecot refuses it (an unknown recipient, say) or does not answer
    /// in time.
    pub async fn deliver_to(&self, recipient: &str, raw: &[u8]) {
        let sender = header(raw, "From")
            .map(|from| address(&from))
            .unwrap_or_else(|| DEFAULT_SENDER.to_owned());
        let exchange = lmtp_deliver(self.lmtp_port, &sender, recipient, raw);
        match tokio::time::timeout(WAIT, exchange).await {
            Ok(Ok(())) => {}
            Ok(Err(error)) => panic!(
                "delivering to {recipient} over LMTP failed: {error}\n{}",
                self.output_tail()
            ),
            Err(_) => panic!(
                "delivering to {recipient} over LMTP took over {WAIT:?}\n{}",
                self.output_tail()
            ),
        }
    }

    /// The messages in `folder` (`INBOX`, `Processed`, ...), by UID, read
    /// over IMAP without changing anything (no `\Seen`, no `\Recent`
    /// taken).
    ///
    /// # Panics
    ///
    /// If the folder does not exist or Dovecot does not answer in time.
    pub async fn messages(&self, folder: &str) -> Vec<Message> {
        let read = async {
            let mut imap = Imap::login(self.imap_port).await?;
            imap.command(&format!("EXAMINE {}", quoted(folder))).await?;
            let messages = imap.fetch_all().await?;
            imap.command("LOGOUT").await?;
            Ok::<_, String>(messages)
        };
        match tokio::time::timeout(WAIT, read).await {
            Ok(Ok(messages)) => messages,
            Ok(Err(error)) => panic!(
                "reading {folder} over IMAP failed: {error}\n{}",
                self.output_tail()
            ),
            Err(_) => panic!(
                "reading {folder} over IMAP took over {WAIT:?}\n{}",
                self.output_tail()
            ),
        }
    }

    /// Waits until `check` returns `Some` for the messages in `folder` and
    /// returns its value. The folder is read again (read-only, as by
    /// [`Dovecot::messages`]) each time Dovecot reports a change to it
    /// during `IDLE`: a new, removed or re-flagged message.
    ///
    /// # Panics
    ///
    /// After 20 s, showing the folder's messages; or if the folder does not
    /// exist.
    pub async fn wait_for<T>(
        &self,
        folder: &str,
        mut check: impl FnMut(&[Message]) -> Option<T>,
    ) -> T {
        let deadline = tokio::time::Instant::now() + WAIT;
        let fail = |error: String| -> ! {
            panic!(
                "waiting on {folder} over IMAP failed: {error}\n{}",
                self.output_tail()
            )
        };
        let mut imap = match tokio::time::timeout_at(deadline, Imap::login(self.imap_port)).await {
            Ok(Ok(imap)) => imap,
            Ok(Err(error)) => fail(error),
            Err(_) => fail(format!("no login within {WAIT:?}")),
        };
        let examine = format!("EXAMINE {}", quoted(folder));
        match tokio::time::timeout_at(deadline, imap.command(&examine)).await {
            Ok(Ok(_)) => {}
            Ok(Err(error)) => fail(error),
            Err(_) => fail(format!("no EXAMINE within {WAIT:?}")),
        }
        let mut last = Vec::new();
        loop {
            match tokio::time::timeout_at(deadline, imap.fetch_all()).await {
                Ok(Ok(messages)) => last = messages,
                Ok(Err(error)) => fail(error),
                Err(_) => break,
            }
            if let Some(found) = check(&last) {
                return found;
            }
            match tokio::time::timeout_at(deadline, imap.idle_until_change()).await {
                Ok(Ok(())) => {}
                Ok(Err(error)) => fail(error),
                Err(_) => break,
            }
        }
        panic!(
            "{folder} did not become as expected within {WAIT:?}; it holds:\n{}",
            describe(&last)
        )
    }

    /// Stops Dovecot (every process of it, at once, so every IMAP
    /// connection is cut) and starts it again on the same ports with the
    /// same mail; returns once it answers again.
    ///
    /// # Panics
    ///
    /// If it does not start again (another process took a port, say).
    pub async fn restart(&mut self) {
        let began = Instant::now();
        self.running.stop();
        // Its processes are killed but may still be closing their sockets.
        for port in [self.imap_port, self.lmtp_port] {
            while TcpListener::bind(("127.0.0.1", port)).is_err() {
                assert!(
                    began.elapsed() < START_TIMEOUT,
                    "port {port} is still taken after stopping Dovecot"
                );
                tokio::time::sleep(START_POLL).await;
            }
        }
        self.running = Running::spawn(self.dir.path());
        if let Err(output) =
            wait_until_up(&mut self.running, self.dir.path(), self.imap_port, began).await
        {
            panic!("Dovecot did not start again:\n{output}");
        }
        eprintln!("Dovecot restarted in {:.2?}", began.elapsed());
    }

    /// The end of Dovecot's log and output.
    fn output_tail(&self) -> String {
        output_tail(self.dir.path())
    }
}

impl Running {
    /// Starts `dovecot -F` with the configuration in `dir`, in a new
    /// process group, and its watchdog.
    fn spawn(dir: &Path) -> Running {
        let output = |name: &str| {
            File::options()
                .create(true)
                .append(true)
                .open(dir.join(name))
                .expect("create Dovecot's output file")
        };
        let master = Command::new(DOVECOT)
            .arg("-F")
            .arg("-c")
            .arg(dir.join("dovecot.conf"))
            .current_dir(dir)
            .process_group(0)
            .stdin(Stdio::null())
            .stdout(output("stdout.txt"))
            .stderr(output("stderr.txt"))
            .spawn()
            .unwrap_or_else(|error| panic!("{DOVECOT_MISSING} (running {DOVECOT}: {error})"));
        // Dovecot does not watch its standard input; this does, for it: when
        // the test process dies, its end of the pipe closes and the read
        // fails. A line (written on stop) ends it without killing.
        let mut watchdog = Command::new("sh")
            .arg("-c")
            .arg(r#"read -r line || kill -KILL -"$0" 2>/dev/null"#)
            .arg(master.id().to_string())
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start Dovecot's watchdog");
        let watchdog_stdin = watchdog.stdin.take();
        Running {
            master,
            watchdog,
            watchdog_stdin,
            stopped: false,
        }
    }

    /// Kills Dovecot's whole process group: the master, and the processes
    /// serving connections that would outlive it. Waits for the master and
    /// ends the watchdog.
    fn stop(&mut self) {
        if std::mem::replace(&mut self.stopped, true) {
            return;
        }
        let _ = rustix::process::kill_process_group(Pid::from_child(&self.master), Signal::KILL);
        let _ = self.master.wait();
        if let Some(mut stdin) = self.watchdog_stdin.take() {
            let _ = std::io::Write::write_all(&mut stdin, b"stopped\n");
        }
        let _ = self.watchdog.wait();
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        self.stop();
    }
}

/// Connects to Dovecot's IMAP port until it greets; the error is Dovecot's
/// log and output if it exits first.
async fn wait_until_up(
    running: &mut Running,
    dir: &Path,
    imap_port: u16,
    began: Instant,
) -> Result<(), String> {
    loop {
        if imap_greets(imap_port).await {
            return Ok(());
        }
        if let Some(status) = running
            .master
            .try_wait()
            .expect("check on Dovecot's process")
        {
            return Err(format!("Dovecot exited: {status}\n{}", output_tail(dir)));
        }
        if began.elapsed() > START_TIMEOUT {
            running.stop();
            panic!(
                "Dovecot did not answer within {START_TIMEOUT:?}:\n{}",
                output_tail(dir)
            );
        }
        tokio::time::sleep(START_POLL).await;
    }
}

/// Whether the IMAP port answers with an `OK` greeting.
async fn imap_greets(port: u16) -> bool {
    let greeted = async {
        let stream = TcpStream::connect(("127.0.0.1", port)).await.ok()?;
        let mut greeting = String::new();
        BufReader::new(stream).read_line(&mut greeting).await.ok()?;
        Some(greeting.starts_with("* OK"))
    };
    tokio::time::timeout(Duration::from_secs(5), greeted)
        .await
        .ok()
        .flatten()
        .unwrap_or(false)
}

/// The last lines of Dovecot's log and output.
fn output_tail(dir: &Path) -> String {
    crate::logs::output_tail(dir, &["stderr.txt", "stdout.txt", "dovecot.log"])
}

/// Who Dovecot's processes run as, and who owns the mail.
struct Identity {
    /// `default_internal_user` and `default_internal_group`.
    internal: (String, String),
    /// `default_login_user`: the unprivileged pre-login processes.
    login: String,
    /// `mail_uid` and `mail_gid`.
    mail: (String, String),
    root: bool,
}

impl Identity {
    fn current() -> Identity {
        if rustix::process::geteuid().is_root() {
            // Dovecot will not touch mail as root: the Debian packages'
            // users (it refuses to start without them).
            let dovecot = ("dovecot".to_owned(), "dovecot".to_owned());
            Identity {
                internal: dovecot.clone(),
                login: "dovenull".to_owned(),
                mail: dovecot,
                root: true,
            }
        } else {
            // Dovecot takes user and group names only, not numbers.
            let id = |flag: &str| {
                let output = Command::new("id")
                    .arg(flag)
                    .output()
                    .expect("run `id` for the current user's name");
                assert!(output.status.success(), "`id {flag}` failed");
                String::from_utf8_lossy(&output.stdout).trim().to_owned()
            };
            let me = (id("-un"), id("-gn"));
            Identity {
                internal: me.clone(),
                login: me.0.clone(),
                mail: me,
                root: false,
            }
        }
    }
}

/// Writes `dovecot.conf` and the account's passwd-file into `dir`.
fn write_config(
    dir: &Path,
    imap_port: u16,
    lmtp_port: u16,
    identity: &Identity,
    options: &DovecotOptions,
) {
    let path = dir.to_str().expect("temporary paths are UTF-8");
    let mail = dir.join("mail");
    fs::create_dir(&mail).expect("create the mail directory");
    if identity.root {
        // As root, Dovecot's own users read the configuration's files and
        // write the mail.
        fs::set_permissions(dir, fs::Permissions::from_mode(0o755))
            .expect("open Dovecot's directory to its users");
        fs::set_permissions(&mail, fs::Permissions::from_mode(0o777))
            .expect("open the mail directory to Dovecot's mail user");
    }
    fs::write(
        dir.join("users"),
        format!("{BOT}:{{PLAIN}}{BOT_PASSWORD}::::::\n"),
    )
    .expect("write Dovecot's passwd-file");
    let mut folders = String::new();
    for folder in &options.folders {
        assert!(
            !folder.is_empty() && !folder.contains(['"', '\\', '{', '}', '\n', '\r']),
            "a folder name Dovecot's configuration cannot hold: {folder:?}"
        );
        folders.push_str(&format!(
            "  mailbox \"{folder}\" {{\n    auto = create\n  }}\n"
        ));
    }
    let Identity {
        internal: (internal_user, internal_group),
        login,
        mail: (mail_user, mail_group),
        ..
    } = identity;
    let config = format!(
        r#"# One test's private Dovecot, written by askbridge-testkit.
base_dir = {path}/run
state_dir = {path}/state
instance_name = askbridge-test
log_path = {path}/dovecot.log
info_log_path = {path}/dovecot.log
hostname = localhost
protocols = imap lmtp
listen = 127.0.0.1

# Plain text on loopback: no TLS, passwords in the clear.
ssl = no
disable_plaintext_auth = no
auth_mechanisms = plain login
auth_failure_delay = 0
auth_verbose = yes

default_internal_user = {internal_user}
default_internal_group = {internal_group}
default_login_user = {login}
mail_uid = {mail_user}
mail_gid = {mail_group}
first_valid_uid = 1
first_valid_gid = 0

mail_location = maildir:{path}/mail/%u
# The bot, a test's own sessions and its checks, side by side.
mail_max_userip_connections = 100
# IDLE hears of changes at once (inotify); this is only the fallback.
mailbox_idle_check_interval = 1 secs

# bot+anything@example.com is bot@example.com, and lands in INBOX.
recipient_delimiter = +
lmtp_save_to_detail_mailbox = no

passdb {{
  driver = passwd-file
  args = scheme=PLAIN username_format=%u {path}/users
}}
userdb {{
  driver = passwd-file
  args = username_format=%u {path}/users
}}

namespace inbox {{
  inbox = yes
  separator = /
{folders}}}

# No chroot: it needs root, and the fixture runs as anyone.
service imap-login {{
  chroot =
  inet_listener imap {{
    address = 127.0.0.1
    port = {imap_port}
  }}
  inet_listener imaps {{
    port = 0
  }}
}}
service anvil {{
  chroot =
}}
service lmtp {{
  inet_listener lmtp {{
    address = 127.0.0.1
    port = {lmtp_port}
  }}
}}
"#
    );
    fs::write(dir.join("dovecot.conf"), config).expect("write dovecot.conf");
}

/// One LMTP transaction: `LHLO`, `MAIL FROM`, `RCPT TO`, `DATA` (dot-stuffed,
/// CRLF line endings), `QUIT`, each reply checked.
async fn lmtp_deliver(port: u16, sender: &str, recipient: &str, raw: &[u8]) -> Result<(), String> {
    let stream = TcpStream::connect(("127.0.0.1", port))
        .await
        .map_err(|error| format!("connect: {error}"))?;
    let (read, mut write) = stream.into_split();
    let mut read = BufReader::new(read);
    expect_reply(&mut read, "greeting", 220).await?;
    for (command, code) in [
        ("LHLO localhost".to_owned(), 250),
        (format!("MAIL FROM:<{sender}>"), 250),
        (format!("RCPT TO:<{recipient}>"), 250),
        ("DATA".to_owned(), 354),
    ] {
        send(&mut write, format!("{command}\r\n").as_bytes()).await?;
        expect_reply(&mut read, &command, code).await?;
    }
    send(&mut write, &dot_stuffed(raw)).await?;
    // LMTP answers once per recipient; there is one.
    expect_reply(&mut read, "end of data", 250).await?;
    send(&mut write, b"QUIT\r\n").await?;
    expect_reply(&mut read, "QUIT", 221).await
}

async fn send(write: &mut OwnedWriteHalf, bytes: &[u8]) -> Result<(), String> {
    write
        .write_all(bytes)
        .await
        .map_err(|error| format!("write: {error}"))
}

/// Reads one (possibly multi-line) SMTP / LMTP reply and checks its code.
async fn expect_reply(
    read: &mut BufReader<OwnedReadHalf>,
    after: &str,
    code: u16,
) -> Result<(), String> {
    let mut reply = String::new();
    loop {
        let mut line = String::new();
        let n = read
            .read_line(&mut line)
            .await
            .map_err(|error| format!("read: {error}"))?;
        if n == 0 {
            return Err(format!("connection closed after {after}: {reply}"));
        }
        reply.push_str(&line);
        // `250-...` continues, `250 ...` ends.
        if line.as_bytes().get(3) != Some(&b'-') {
            break;
        }
    }
    if reply.starts_with(&code.to_string()) {
        Ok(())
    } else {
        Err(format!(
            "expected {code} after {after}, got: {}",
            reply.trim_end()
        ))
    }
}

/// `raw` as `DATA` sends it: CRLF line endings, a leading `.` doubled, and
/// the closing `.` line.
fn dot_stuffed(raw: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(raw.len() + 64);
    let body = raw.strip_suffix(b"\n").unwrap_or(raw);
    if !raw.is_empty() {
        for line in body.split(|&byte| byte == b'\n') {
            let line = line.strip_suffix(b"\r").unwrap_or(line);
            if line.starts_with(b".") {
                out.push(b'.');
            }
            out.extend_from_slice(line);
            out.extend_from_slice(b"\r\n");
        }
    }
    out.extend_from_slice(b".\r\n");
    out
}

/// A tiny IMAP client for the fixture's own reading: commands and their
/// responses, literals included, nothing more.
struct Imap {
    read: BufReader<OwnedReadHalf>,
    write: OwnedWriteHalf,
    tag: u32,
}

/// One IMAP response: its text with the literals' bytes taken out (each
/// still announced by `{N}`), and the literals in order.
struct Response {
    text: Vec<u8>,
    literals: Vec<Vec<u8>>,
}

impl Imap {
    /// Connects, reads the greeting and logs the account in.
    async fn login(port: u16) -> Result<Imap, String> {
        let stream = TcpStream::connect(("127.0.0.1", port))
            .await
            .map_err(|error| format!("connect: {error}"))?;
        let (read, write) = stream.into_split();
        let mut imap = Imap {
            read: BufReader::new(read),
            write,
            tag: 0,
        };
        let greeting = imap.response().await?;
        if !greeting.text.starts_with(b"* OK") {
            return Err(format!("greeting: {}", lossy(&greeting.text)));
        }
        imap.command(&format!("LOGIN {} {}", quoted(BOT), quoted(BOT_PASSWORD)))
            .await?;
        Ok(imap)
    }

    /// Sends `command` and returns the untagged responses before its
    /// tagged `OK`; another tagged status is an error.
    async fn command(&mut self, command: &str) -> Result<Vec<Response>, String> {
        let tag = self.send(command).await?;
        let mut untagged = Vec::new();
        loop {
            let response = self.response().await?;
            if let Some(status) = response.text.strip_prefix(tag.as_bytes()) {
                return if status.starts_with(b" OK") {
                    Ok(untagged)
                } else {
                    Err(format!("{command}: {}", lossy(&response.text)))
                };
            }
            untagged.push(response);
        }
    }

    /// Sends a tagged command; returns its tag.
    async fn send(&mut self, command: &str) -> Result<String, String> {
        self.tag += 1;
        let tag = format!("t{}", self.tag);
        self.write
            .write_all(format!("{tag} {command}\r\n").as_bytes())
            .await
            .map_err(|error| format!("write: {error}"))?;
        Ok(tag)
    }

    /// Every message of the selected folder, by UID.
    async fn fetch_all(&mut self) -> Result<Vec<Message>, String> {
        let responses = self
            .command("UID FETCH 1:* (UID FLAGS BODY.PEEK[])")
            .await?;
        let mut messages: Vec<Message> = responses.iter().filter_map(fetched).collect();
        messages.sort_by_key(|message| message.uid);
        messages.dedup_by_key(|message| message.uid);
        Ok(messages)
    }

    /// `IDLE` until Dovecot reports anything about the selected folder,
    /// then `DONE`.
    async fn idle_until_change(&mut self) -> Result<(), String> {
        let tag = self.send("IDLE").await?;
        loop {
            let response = self.response().await?;
            if response.text.starts_with(b"+") {
                continue;
            }
            if response.text.starts_with(tag.as_bytes()) {
                return Err(format!("IDLE: {}", lossy(&response.text)));
            }
            break;
        }
        self.write
            .write_all(b"DONE\r\n")
            .await
            .map_err(|error| format!("write: {error}"))?;
        loop {
            let response = self.response().await?;
            if let Some(status) = response.text.strip_prefix(tag.as_bytes()) {
                return if status.starts_with(b" OK") {
                    Ok(())
                } else {
                    Err(format!("IDLE: {}", lossy(&response.text)))
                };
            }
        }
    }

    /// Reads one response, with its literals.
    async fn response(&mut self) -> Result<Response, String> {
        let mut response = Response {
            text: Vec::new(),
            literals: Vec::new(),
        };
        loop {
            let mut line = Vec::new();
            let n = self
                .read
                .read_until(b'\n', &mut line)
                .await
                .map_err(|error| format!("read: {error}"))?;
            if n == 0 {
                return Err("Dovecot closed the connection".to_owned());
            }
            let line = line.strip_suffix(b"\n").unwrap_or(&line);
            let line = line.strip_suffix(b"\r").unwrap_or(line);
            response.text.extend_from_slice(line);
            let Some(length) = literal_length(line) else {
                return Ok(response);
            };
            let mut literal = vec![0; length];
            self.read
                .read_exact(&mut literal)
                .await
                .map_err(|error| format!("read a literal: {error}"))?;
            response.literals.push(literal);
        }
    }
}

/// The length `N` of a literal announced at the end of `line` (`{N}` or
/// `{N+}`).
fn literal_length(line: &[u8]) -> Option<usize> {
    let inside = line.strip_suffix(b"}")?;
    let open = inside.iter().rposition(|&byte| byte == b'{')?;
    let digits = &inside[open + 1..];
    let digits = digits.strip_suffix(b"+").unwrap_or(digits);
    std::str::from_utf8(digits).ok()?.parse().ok()
}

/// The message in a `* N FETCH (UID u FLAGS (...) BODY[] {n})` response;
/// `None` for other responses (and for flag updates without the body).
fn fetched(response: &Response) -> Option<Message> {
    let text = String::from_utf8_lossy(&response.text);
    let items = text.strip_prefix("* ")?.split_once(" FETCH (")?.1;
    let raw = response.literals.first()?.clone();
    let uid = items
        .split_once("UID ")?
        .1
        .split(|c: char| !c.is_ascii_digit())
        .next()?
        .parse()
        .ok()?;
    let flags = items
        .split_once("FLAGS (")?
        .1
        .split_once(')')?
        .0
        .split_whitespace()
        .filter(|flag| !flag.eq_ignore_ascii_case("\\Recent"))
        .map(str::to_owned)
        .collect();
    Some(Message { uid, flags, raw })
}

/// An IMAP quoted string.
fn quoted(text: &str) -> String {
    format!("\"{}\"", text.replace('\\', "\\\\").replace('"', "\\\""))
}

fn lossy(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// One line per message: UID, flags, subject.
fn describe(messages: &[Message]) -> String {
    if messages.is_empty() {
        return "  (no messages)".to_owned();
    }
    messages
        .iter()
        .map(|message| {
            format!(
                "  uid {} flags [{}] subject {:?}",
                message.uid,
                message.flags.join(" "),
                message.header("Subject").unwrap_or_default()
            )
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The first header `name` of the mail `raw` (case-insensitive), unfolded.
fn header(raw: &[u8], name: &str) -> Option<String> {
    let text = String::from_utf8_lossy(raw);
    let mut found: Option<String> = None;
    for line in text.split('\n') {
        let line = line.strip_suffix('\r').unwrap_or(line);
        if line.is_empty() {
            break;
        }
        if line.starts_with([' ', '\t']) {
            if let Some(value) = found.as_mut() {
                value.push(' ');
                value.push_str(line.trim());
            }
            continue;
        }
        if found.is_some() {
            break;
        }
        if let Some((field, value)) = line.split_once(':')
            && field.trim().eq_ignore_ascii_case(name)
        {
            found = Some(value.trim().to_owned());
        }
    }
    found
}

/// The address in a `From`-like header value: inside `<...>` if there are
/// angle brackets, else the whole value.
fn address(value: &str) -> String {
    match value.rsplit_once('<') {
        Some((_, rest)) => rest.split('>').next().unwrap_or(rest).trim().to_owned(),
        None => value.trim().to_owned(),
    }
}

/// Runs an SMTP server (aiosmtpd) on a free port and writes one JSON line
/// to standard output when it listens (`{"port": N}`) and one per mail it
/// accepts. Exits when its standard input closes: the test process that
/// started it is gone. Its argument is `null` (AUTH optional, any
/// credentials accepted) or `[login, password]` (AUTH required, only
/// those).
const SMTP_SINK: &str = r#"
import asyncio, base64, json, os, sys, threading
from aiosmtpd.smtp import SMTP, AuthResult, LoginPassword

def exit_when_parent_is_gone():
    while os.read(0, 4096):
        pass
    os._exit(0)

threading.Thread(target=exit_when_parent_is_gone, daemon=True).start()
required = json.loads(sys.argv[1])

def emit(record):
    sys.stdout.write(json.dumps(record) + "\n")
    sys.stdout.flush()

def authenticate(server, session, envelope, mechanism, auth_data):
    if not isinstance(auth_data, LoginPassword):
        return AuthResult(success=False, handled=False)
    login = auth_data.login.decode("utf-8", "replace")
    password = auth_data.password.decode("utf-8", "replace")
    if required is not None and [login, password] != required:
        return AuthResult(success=False, handled=False)
    return AuthResult(success=True, auth_data=login)

class Recorder:
    async def handle_DATA(self, server, session, envelope):
        emit({"mail": {
            "from": envelope.mail_from,
            "to": envelope.rcpt_tos,
            "login": session.auth_data if session.authenticated else None,
            "data": base64.b64encode(envelope.original_content).decode("ascii"),
        }})
        return "250 2.0.0 OK"

async def main():
    loop = asyncio.get_running_loop()
    server = await loop.create_server(
        lambda: SMTP(
            Recorder(),
            hostname="localhost",
            enable_SMTPUTF8=True,
            authenticator=authenticate,
            auth_require_tls=False,
            auth_required=required is not None,
            loop=loop,
        ),
        "127.0.0.1",
        0,
    )
    emit({"port": server.sockets[0].getsockname()[1]})
    await server.serve_forever()

asyncio.run(main())
"#;

/// A mail an [`SmtpSink`] accepted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SentMail {
    /// The envelope sender (`MAIL FROM`).
    pub from: String,
    /// The envelope recipients (`RCPT TO`), in order.
    pub to: Vec<String>,
    /// The user name the client authenticated as, if it did.
    pub login: Option<String>,
    /// The mail as sent (`DATA`, dot-stuffing undone; CRLF line endings).
    pub raw: Vec<u8>,
}

impl SentMail {
    /// The first header called `name` (case-insensitive), unfolded, not
    /// decoded.
    pub fn header(&self, name: &str) -> Option<String> {
        header(&self.raw, name)
    }
}

/// A running SMTP server on `127.0.0.1` that records every mail it is
/// sent; killed on drop.
pub struct SmtpSink {
    process: Child,
    /// Kept open: the server exits when it closes (see [`SMTP_SINK`]).
    _stdin: Option<ChildStdin>,
    port: u16,
    state: Arc<Watched<SinkState>>,
    stderr: tempfile::NamedTempFile,
}

impl fmt::Debug for SmtpSink {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SmtpSink")
            .field("url", &self.url())
            .field("pid", &self.process.id())
            .finish_non_exhaustive()
    }
}

/// What the sink's output said so far.
#[derive(Default)]
struct SinkState {
    port: Option<u16>,
    mails: Vec<SentMail>,
    /// Its output ended: it exited.
    closed: bool,
}

impl SmtpSink {
    /// Starts an SMTP sink that accepts mail with or without `AUTH`, and
    /// any credentials.
    ///
    /// # Panics
    ///
    /// If aiosmtpd is not installed (see the [module](self) documentation)
    /// or the server does not start within 30 s.
    pub async fn start() -> SmtpSink {
        SmtpSink::spawn(None).await
    }

    /// Starts an SMTP sink that requires `AUTH` (`PLAIN` or `LOGIN`) with
    /// `login` and `password`, and refuses other credentials (`535`) and
    /// mail without `AUTH` (`530`).
    ///
    /// # Panics
    ///
    /// Like [`SmtpSink::start`].
    pub async fn start_requiring(login: &str, password: &str) -> SmtpSink {
        SmtpSink::spawn(Some((login, password))).await
    }

    /// Starts aiosmtpd with [`SMTP_SINK`] and waits for its port.
    async fn spawn(credentials: Option<(&str, &str)>) -> SmtpSink {
        let began = Instant::now();
        let python = python();
        let stderr = tempfile::Builder::new()
            .prefix("askbridge-smtp-")
            .suffix(".log")
            .tempfile()
            .expect("create the SMTP sink's log");
        let mut process = Command::new(&python)
            .arg("-c")
            .arg(SMTP_SINK)
            .arg(serde_json::to_string(&credentials).expect("credentials as JSON"))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(stderr.reopen().expect("reopen the SMTP sink's log"))
            .spawn()
            .unwrap_or_else(|error| {
                panic!("{AIOSMTPD_MISSING} (running {}: {error})", python.display())
            });
        let stdin = process.stdin.take();
        let stdout = process.stdout.take().expect("the SMTP sink's output");
        let state = Arc::new(Watched::new(SinkState::default()));
        let recorder = Arc::clone(&state);
        std::thread::spawn(move || record(stdout, &recorder));
        let mut sink = SmtpSink {
            process,
            _stdin: stdin,
            port: 0,
            state,
            stderr,
        };
        let port = sink
            .state
            .wait_for(
                START_TIMEOUT,
                |state| state.port.map(Some).or(state.closed.then_some(None)),
                |_| format!("the SMTP sink did not start within {START_TIMEOUT:?}"),
            )
            .await;
        let Some(port) = port else {
            let output = sink.output();
            if output.contains("No module named") {
                panic!(
                    "{AIOSMTPD_MISSING} (Python: {})\n{output}",
                    python.display()
                );
            }
            panic!("the SMTP sink exited while starting:\n{output}");
        };
        sink.port = port;
        eprintln!(
            "SMTP sink started at {} in {:.2?}",
            sink.url(),
            began.elapsed()
        );
        sink
    }

    /// `smtp://127.0.0.1:PORT`: plain SMTP, no TLS.
    pub fn url(&self) -> String {
        format!("smtp://127.0.0.1:{}", self.port)
    }

    /// The port on `127.0.0.1`.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// The mails accepted so far, in order.
    pub fn sent(&self) -> Vec<SentMail> {
        self.state.lock().mails.clone()
    }

    /// Waits until at least `count` mails were accepted; returns all of
    /// them, in order.
    ///
    /// # Panics
    ///
    /// After 20 s, showing the mails accepted so far and the server's
    /// output.
    pub async fn wait_for(&self, count: usize) -> Vec<SentMail> {
        self.state
            .wait_for(
                WAIT,
                |state| (state.mails.len() >= count).then(|| state.mails.clone()),
                |state| {
                    let subjects: Vec<String> = state
                        .mails
                        .iter()
                        .map(|mail| {
                            format!(
                                "  to {:?} subject {:?}",
                                mail.to,
                                mail.header("Subject").unwrap_or_default()
                            )
                        })
                        .collect();
                    format!(
                        "the SMTP sink got {} mails within {WAIT:?}, not {count}:\n{}\n{}",
                        state.mails.len(),
                        subjects.join("\n"),
                        self.output()
                    )
                },
            )
            .await
    }

    /// The server's standard error (aiosmtpd's warnings, a traceback).
    fn output(&self) -> String {
        let text = fs::read_to_string(self.stderr.path()).unwrap_or_default();
        format!("--- SMTP sink's output ---\n{text}")
    }
}

impl Drop for SmtpSink {
    fn drop(&mut self) {
        let _ = self.process.kill();
        let _ = self.process.wait();
    }
}

/// Reads the sink's JSON lines into `state` until its output ends.
fn record(stdout: std::process::ChildStdout, state: &Watched<SinkState>) {
    for line in StdBufReader::new(stdout).lines() {
        let Ok(line) = line else { break };
        let Ok(value) = serde_json::from_str::<Value>(&line) else {
            continue;
        };
        if let Some(port) = value["port"].as_u64() {
            let port = u16::try_from(port).expect("a port number");
            state.mutate(|state| state.port = Some(port));
        } else if let Some(mail) = sent_mail(&value["mail"]) {
            state.mutate(|state| state.mails.push(mail));
        }
    }
    state.mutate(|state| state.closed = true);
}

fn sent_mail(value: &Value) -> Option<SentMail> {
    let text = |value: &Value| value.as_str().map(str::to_owned);
    Some(SentMail {
        from: text(&value["from"])?,
        to: value["to"].as_array()?.iter().filter_map(text).collect(),
        login: text(&value["login"]),
        raw: base64::engine::general_purpose::STANDARD
            .decode(value["data"].as_str()?)
            .ok()?,
    })
}

/// The Python to run aiosmtpd with.
fn python() -> PathBuf {
    if let Some(python) = std::env::var_os("ASKBRIDGE_TEST_PYTHON") {
        return PathBuf::from(python);
    }
    let home =
        std::env::var_os("HOME").unwrap_or_else(|| panic!("{AIOSMTPD_MISSING} (HOME is not set)"));
    Path::new(&home).join(DEFAULT_PYTHON)
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .expect("find a free port")
        .port()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dot_stuffing_doubles_leading_dots_and_ends_with_a_dot_line() {
        let check = |raw: &[u8], expect: &[u8]| {
            assert_eq!(lossy(&dot_stuffed(raw)), lossy(expect), "{:?}", lossy(raw));
        };
        check(b"a\n.b\n..c\n", b"a\r\n..b\r\n...c\r\n.\r\n");
        check(b"a\r\n.\r\nb", b"a\r\n..\r\nb\r\n.\r\n");
        check(b"", b".\r\n");
    }

    #[test]
    fn header_is_found_unfolded_and_only_in_the_head() {
        let raw = b"From: Person <p@example.org>\r\nSubject: one\r\n two\r\nX: y\r\n\r\nSubject: body\r\n";
        assert_eq!(header(raw, "subject").as_deref(), Some("one two"));
        assert_eq!(
            header(raw, "From").as_deref(),
            Some("Person <p@example.org>")
        );
        assert_eq!(header(raw, "To"), None);
        assert_eq!(address("Person <p@example.org>"), "p@example.org");
        assert_eq!(address(" p@example.org "), "p@example.org");
    }

    #[test]
    fn fetched_reads_uid_flags_and_the_literal() {
        let response = Response {
            text: b"* 2 FETCH (UID 7 FLAGS (\\Seen \\Recent $Label) BODY[] {5})".to_vec(),
            literals: vec![b"hello".to_vec()],
        };
        let message = fetched(&response).expect("a message");
        assert_eq!(message.uid, 7);
        assert_eq!(message.flags, ["\\Seen", "$Label"]);
        assert_eq!(message.raw, b"hello");
        let flags_only = Response {
            text: b"* 2 FETCH (UID 7 FLAGS (\\Seen))".to_vec(),
            literals: Vec::new(),
        };
        assert_eq!(fetched(&flags_only), None);
        assert_eq!(literal_length(b"BODY[] {12}"), Some(12));
        assert_eq!(literal_length(b"BODY[] {12+}"), Some(12));
        assert_eq!(literal_length(b"* OK done"), None);
    }
}

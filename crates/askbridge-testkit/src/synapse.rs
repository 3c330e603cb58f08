//! A real Matrix homeserver (Synapse) for tests, and a real Matrix client
//! acting as a test's person.
//!
//! Unlike the other platforms here, Matrix is not faked: [`Synapse::start`]
//! runs the reference homeserver itself, on `127.0.0.1` and a free port, in
//! a fresh temporary directory (SQLite database, generated signing key,
//! registration by shared secret only, no federation). Its server name is
//! `localhost`, so users are `@name:localhost`. Dropping the [`Synapse`]
//! kills the process and removes the directory; if the test process dies
//! without dropping it, Synapse notices its closed standard input and exits
//! too.
//!
//! [`Synapse::register`] creates an account in a few milliseconds through
//! Synapse's shared-secret admin API. [`Person::login`] logs an account in
//! with matrix-sdk (end-to-end encryption, SQLite store), so a person can
//! create and join encrypted rooms, send messages, thread replies, rich
//! replies, poll votes and reactions, and wait for (decrypted) events.
//! [`Person::login_holding_keys`] logs one in through a relay that can hold
//! back the room keys its device sends, so a test can make a message's key
//! arrive after the message.
//!
//! # What it needs
//!
//! Synapse from PyPI (`matrix-synapse`), in the Python named by the
//! environment variable `ASKBRIDGE_TEST_PYTHON`, else in
//! `$HOME/.cache/askbridge/venv/bin/python` (where `.ci/run` installs it).
//! Without it, [`Synapse::start`] panics saying how to install it.
//!
//! # How long it takes
//!
//! Starting Synapse (creating its database schema) takes about 1.5 to 2 s
//! on two cores; [`Synapse::start`] prints the time it took. Registering an
//! account takes a few milliseconds; logging a person in (password login,
//! key upload, first sync) well under a second.

use std::collections::{HashMap, HashSet};
use std::fmt;
use std::fs::{self, File};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use hmac::{Hmac, Mac};
use matrix_sdk::config::SyncSettings;
use matrix_sdk::deserialized_responses::EncryptionInfo;
use matrix_sdk::ruma::api::client::room::Visibility;
use matrix_sdk::ruma::api::client::room::create_room::v3::{
    Request as CreateRoomRequest, RoomPreset,
};
use matrix_sdk::ruma::events::room::encrypted::OriginalSyncRoomEncryptedEvent;
use matrix_sdk::ruma::events::room::encryption::RoomEncryptionEventContent;
use matrix_sdk::ruma::events::{AnySyncTimelineEvent, InitialStateEvent};
use matrix_sdk::ruma::serde::Raw;
use matrix_sdk::ruma::{EventId, OwnedRoomId, OwnedUserId, RoomId, UserId};
use matrix_sdk::{Client, Room};
use serde_json::{Value, json};
use sha1::Sha1;
use tempfile::TempDir;
use tokio::sync::watch;
use tokio::task::JoinHandle;

/// Where the Python with Synapse is looked for when `ASKBRIDGE_TEST_PYTHON`
/// is not set, relative to `$HOME`.
const DEFAULT_PYTHON: &str = ".cache/askbridge/venv/bin/python";

const NOT_INSTALLED: &str = "Synapse is not installed: run .ci/run, or `pip install matrix-synapse` \
     into a venv and set ASKBRIDGE_TEST_PYTHON";

/// How long Synapse may take to answer its first request.
const START_TIMEOUT: Duration = Duration::from_secs(60);

/// How often a starting Synapse is asked whether it is up.
const START_POLL: Duration = Duration::from_millis(50);

/// The long-poll timeout of a person's sync requests.
const SYNC_TIMEOUT: Duration = Duration::from_secs(1);

/// A rate limit no test reaches.
const UNLIMITED: (u64, u64) = (1_000_000, 1_000_000);

/// Runs `synapse.app.homeserver` like `python -m` does, and exits when its
/// standard input closes: the test process that started it is gone.
const LAUNCHER: &str = "\
import os, runpy, sys, threading
def exit_when_parent_is_gone():
    while os.read(0, 4096):
        pass
    os._exit(0)
threading.Thread(target=exit_when_parent_is_gone, daemon=True).start()
runpy.run_module('synapse.app.homeserver', run_name='__main__', alter_sys=True)
";

/// How a [`Synapse`] is configured.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SynapseOptions {
    /// Keep Synapse's own limit on sending messages (`rc_message`: 0.2 per
    /// second, bursts of 10), as a production homeserver has it; for a
    /// benchmark. Otherwise (the default) it is raised out of reach. Every
    /// other rate limit (logins, joins, invites, room creation, ...) is
    /// always raised, so that setting a test up is never throttled.
    pub default_rate_limits: bool,
}

/// A running Synapse on `127.0.0.1`; killed, and its files removed, on drop.
pub struct Synapse {
    process: Child,
    /// Kept open: Synapse exits when it closes (see [`LAUNCHER`]).
    _stdin: Option<ChildStdin>,
    port: u16,
    shared_secret: String,
    http: reqwest::Client,
    dir: TempDir,
}

impl fmt::Debug for Synapse {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Synapse")
            .field("url", &self.url())
            .field("pid", &self.process.id())
            .field("dir", &self.dir.path())
            .finish_non_exhaustive()
    }
}

/// An account registered on a [`Synapse`], with the device and access token
/// its registration created.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Account {
    /// `@localpart:localhost`.
    pub user_id: String,
    pub access_token: String,
    pub device_id: String,
    pub password: String,
}

impl Synapse {
    /// Starts a Synapse with every rate limit raised out of reach.
    pub async fn start() -> Synapse {
        Synapse::start_with(SynapseOptions::default()).await
    }

    /// Starts a Synapse configured by `options`.
    ///
    /// # Panics
    ///
    /// If Synapse is not installed (see the [module](self) documentation),
    /// exits while starting (the panic shows the end of its output), or
    /// does not answer within a minute.
    pub async fn start_with(options: SynapseOptions) -> Synapse {
        let began = Instant::now();
        let python = python();
        // The free port is found by binding and releasing it, so another
        // process can take it before Synapse binds it: then try again.
        for attempt in 1.. {
            let dir = tempfile::Builder::new()
                .prefix("askbridge-synapse-")
                .tempdir()
                .expect("create Synapse's temporary directory");
            let port = free_port();
            let shared_secret = random_hex(32);
            write_config(dir.path(), port, &shared_secret, options);
            let mut process = spawn(&python, dir.path());
            let stdin = process.stdin.take();
            let http = reqwest::Client::builder()
                // No pooled connections: a Synapse may outlive the runtime
                // that made a request.
                .pool_max_idle_per_host(0)
                .build()
                .expect("build an HTTP client");
            let mut synapse = Synapse {
                process,
                _stdin: stdin,
                port,
                shared_secret,
                http,
                dir,
            };
            match synapse.wait_until_up(began).await {
                Ok(()) => {
                    eprintln!(
                        "Synapse started at {} in {:.2?}",
                        synapse.url(),
                        began.elapsed()
                    );
                    return synapse;
                }
                Err(output) if output.contains("Address already in use") && attempt < 3 => {}
                Err(output) if output.contains("No module named") => {
                    panic!("{NOT_INSTALLED} (Python: {})\n{output}", python.display())
                }
                Err(output) => panic!("Synapse exited while starting:\n{output}"),
            }
        }
        unreachable!("the loop returns or panics")
    }

    /// Polls `GET /_matrix/client/versions` until it answers; the error is
    /// the end of Synapse's output if it exits first.
    async fn wait_until_up(&mut self, began: Instant) -> Result<(), String> {
        let versions = format!("{}/_matrix/client/versions", self.url());
        loop {
            let answered = self
                .http
                .get(&versions)
                .timeout(Duration::from_secs(1))
                .send()
                .await
                .is_ok_and(|response| response.status().is_success());
            if answered {
                return Ok(());
            }
            if let Some(status) = self.process.try_wait().expect("check on Synapse's process") {
                return Err(format!("Synapse exited: {status}\n{}", self.output_tail()));
            }
            assert!(
                began.elapsed() < START_TIMEOUT,
                "Synapse did not answer within {START_TIMEOUT:?}:\n{}",
                self.output_tail()
            );
            tokio::time::sleep(START_POLL).await;
        }
    }

    /// The last lines of Synapse's standard error and log.
    fn output_tail(&self) -> String {
        crate::logs::output_tail(
            self.dir.path(),
            &["stderr.txt", "stdout.txt", "homeserver.log"],
        )
    }

    /// The client-server API's base URL, `http://127.0.0.1:PORT`.
    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// The server name, `localhost`: user ids are `@name:localhost`.
    pub fn server_name(&self) -> &str {
        "localhost"
    }

    /// `@localpart:localhost`.
    pub fn user_id(&self, localpart: &str) -> String {
        format!("@{localpart}:{}", self.server_name())
    }

    /// Synapse's log (warnings and errors), for a failing test to show.
    pub fn log_path(&self) -> PathBuf {
        self.dir.path().join("homeserver.log")
    }

    /// Registers a (non-admin) account through the shared-secret admin API,
    /// `/_synapse/admin/v1/register`.
    ///
    /// # Panics
    ///
    /// If Synapse refuses (for example, the localpart is taken).
    pub async fn register(&self, localpart: &str, password: &str) -> Account {
        // A server error under load (Synapse's SQLite busy) is tried again,
        // with a fresh nonce; a refusal is not.
        let mut tries = 0;
        let body = loop {
            tries += 1;
            let (status, body) = self.register_once(localpart, password).await;
            if status.is_success() {
                break body;
            }
            assert!(
                status.is_server_error() && tries < 3,
                "registering {localpart} failed: {status} {body}"
            );
            eprintln!("registering {localpart}: {status} {body}; trying again");
        };
        let field = |name: &str| {
            body[name]
                .as_str()
                .unwrap_or_else(|| panic!("Synapse's registration answer has no {name}: {body}"))
                .to_owned()
        };
        Account {
            user_id: field("user_id"),
            access_token: field("access_token"),
            device_id: field("device_id"),
            password: password.to_owned(),
        }
    }

    /// One shared-secret registration: Synapse's status and answer.
    async fn register_once(&self, localpart: &str, password: &str) -> (reqwest::StatusCode, Value) {
        let endpoint = format!("{}/_synapse/admin/v1/register", self.url());
        let nonce: Value = self
            .http
            .get(&endpoint)
            .send()
            .await
            .expect("ask Synapse for a registration nonce")
            .json()
            .await
            .expect("read Synapse's registration nonce");
        let nonce = nonce["nonce"]
            .as_str()
            .expect("Synapse's nonce answer has a nonce");
        let mac = registration_mac(&self.shared_secret, nonce, localpart, password);
        let response = self
            .http
            .post(&endpoint)
            .json(&json!({
                "nonce": nonce,
                "username": localpart,
                "password": password,
                "admin": false,
                "mac": mac,
            }))
            .send()
            .await
            .expect("send the registration to Synapse");
        let status = response.status();
        let body = response
            .json()
            .await
            .unwrap_or_else(|error| json!({ "unreadable": error.to_string() }));
        (status, body)
    }
}

impl Drop for Synapse {
    fn drop(&mut self) {
        // Killed, not stopped: its database is thrown away anyway. Waiting
        // reaps it before its directory goes (with `dir`, after this).
        let _ = self.process.kill();
        let _ = self.process.wait();
    }
}

/// The Python to run Synapse with.
fn python() -> PathBuf {
    if let Some(python) = std::env::var_os("ASKBRIDGE_TEST_PYTHON") {
        return PathBuf::from(python);
    }
    let home =
        std::env::var_os("HOME").unwrap_or_else(|| panic!("{NOT_INSTALLED} (HOME is not set)"));
    Path::new(&home).join(DEFAULT_PYTHON)
}

fn spawn(python: &Path, dir: &Path) -> Child {
    let output = |name: &str| File::create(dir.join(name)).expect("create Synapse's output file");
    Command::new(python)
        .arg("-c")
        .arg(LAUNCHER)
        .arg("--config-path")
        .arg(dir.join("homeserver.yaml"))
        .current_dir(dir)
        .stdin(Stdio::piped())
        .stdout(output("stdout.txt"))
        .stderr(output("stderr.txt"))
        .spawn()
        .unwrap_or_else(|error| panic!("{NOT_INSTALLED} (running {}: {error})", python.display()))
}

/// Writes `homeserver.yaml`, its logging configuration and signing key into
/// `dir`. (The files are JSON, which YAML reads.)
fn write_config(dir: &Path, port: u16, shared_secret: &str, options: SynapseOptions) {
    let path = |name: &str| {
        dir.join(name)
            .to_str()
            .expect("temporary paths are UTF-8")
            .to_owned()
    };
    let limit = |(per_second, burst_count): (u64, u64)| json!({ "per_second": per_second, "burst_count": burst_count });
    let mut config = json!({
        "server_name": "localhost",
        "public_baseurl": format!("http://127.0.0.1:{port}/"),
        "pid_file": path("homeserver.pid"),
        "signing_key_path": path("signing.key"),
        "log_config": path("log.yaml"),
        "media_store_path": path("media"),
        "database": { "name": "sqlite3", "args": { "database": path("homeserver.db") } },
        "listeners": [{
            "port": port,
            "bind_addresses": ["127.0.0.1"],
            "type": "http",
            "tls": false,
            "x_forwarded": false,
            "resources": [{ "names": ["client"], "compress": false }],
        }],
        "registration_shared_secret": shared_secret,
        "enable_registration": false,
        "report_stats": false,
        "trusted_key_servers": [],
        "suppress_key_server_warning": true,
        "federation_domain_whitelist": [],
        "bcrypt_rounds": 4,
        "url_preview_enabled": false,
        "presence": { "enabled": false },
        "enable_metrics": false,
        "rc_registration": limit(UNLIMITED),
        "rc_registration_token_validity": limit(UNLIMITED),
        "rc_login": {
            "address": limit(UNLIMITED),
            "account": limit(UNLIMITED),
            "failed_attempts": limit(UNLIMITED),
        },
        "rc_admin_redaction": limit(UNLIMITED),
        "rc_joins": { "local": limit(UNLIMITED), "remote": limit(UNLIMITED) },
        "rc_joins_per_room": limit(UNLIMITED),
        "rc_invites": {
            "per_room": limit(UNLIMITED),
            "per_user": limit(UNLIMITED),
            "per_issuer": limit(UNLIMITED),
        },
        "rc_third_party_invite": limit(UNLIMITED),
        "rc_3pid_validation": limit(UNLIMITED),
        "rc_key_requests": limit(UNLIMITED),
        "rc_room_creation": limit(UNLIMITED),
        "rc_media_create": limit(UNLIMITED),
        "rc_delayed_event_mgmt": limit(UNLIMITED),
        "rc_reports": limit(UNLIMITED),
        "rc_user_directory": limit(UNLIMITED),
        "rc_profile": limit(UNLIMITED),
        "rc_presence": { "per_user": limit(UNLIMITED) },
    });
    if !options.default_rate_limits {
        config["rc_message"] = limit(UNLIMITED);
    }
    let logging = json!({
        "version": 1,
        "formatters": {
            "plain": { "format": "%(asctime)s %(levelname)s %(name)s: %(message)s" },
        },
        "handlers": {
            "file": {
                "class": "logging.FileHandler",
                "formatter": "plain",
                "filename": path("homeserver.log"),
            },
        },
        "root": { "level": "WARNING", "handlers": ["file"] },
        "disable_existing_loggers": false,
    });
    let write = |name: &str, text: String| {
        fs::write(dir.join(name), text).expect("write Synapse's configuration");
    };
    write(
        "homeserver.yaml",
        serde_json::to_string_pretty(&config).expect("serialize JSON"),
    );
    write(
        "log.yaml",
        serde_json::to_string_pretty(&logging).expect("serialize JSON"),
    );
    // An Ed25519 seed, in the format of `synapse --generate-keys`.
    let seed: Vec<u8> = (0..32).map(|_| fastrand::u8(..)).collect();
    write(
        "signing.key",
        format!("ed25519 a_test {}\n", base64_unpadded(&seed)),
    );
}

/// A port nothing listens on now.
fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .expect("find a free port")
        .port()
}

fn random_hex(bytes: usize) -> String {
    hex(&(0..bytes).map(|_| fastrand::u8(..)).collect::<Vec<u8>>())
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|byte| format!("{byte:02x}")).collect()
}

fn base64_unpadded(bytes: &[u8]) -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD_NO_PAD.encode(bytes)
}

/// The `mac` of a shared-secret registration: HMAC-SHA1, keyed by the
/// shared secret, of `nonce\0user\0password\0notadmin`, in hex.
fn registration_mac(shared_secret: &str, nonce: &str, user: &str, password: &str) -> String {
    let mut mac = Hmac::<Sha1>::new_from_slice(shared_secret.as_bytes())
        .expect("HMAC takes keys of any length");
    mac.update(nonce.as_bytes());
    mac.update(b"\0");
    mac.update(user.as_bytes());
    mac.update(b"\0");
    mac.update(password.as_bytes());
    mac.update(b"\0notadmin");
    hex(&mac.finalize().into_bytes())
}

/// A test's human: a real Matrix client (matrix-sdk, end-to-end encryption,
/// its own SQLite store) logged in as a new device of an [`Account`], with
/// its own sync loop. Every timeline event it receives is kept, decrypted,
/// for the `wait_for_*` methods and [`Person::events`].
///
/// Invites are not accepted by themselves: see [`Person::wait_for_invite`]
/// and [`Person::accept_invite`].
pub struct Person {
    client: Client,
    user_id: String,
    received: Arc<Received>,
    sync: JoinHandle<()>,
    /// The relay between the client and Synapse, when logged in through one
    /// ([`Person::login_holding_keys`]).
    relay: Option<KeyRelay>,
    /// Invites [`Person::wait_for_invite`] already returned.
    invites_seen: Mutex<HashSet<OwnedRoomId>>,
    _store: TempDir,
}

impl fmt::Debug for Person {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Person")
            .field("user_id", &self.user_id)
            .finish_non_exhaustive()
    }
}

/// The timeline events a person received, by room, in arrival order.
#[derive(Debug)]
struct Received {
    rooms: Mutex<HashMap<OwnedRoomId, Vec<ReceivedEvent>>>,
    /// Bumped after every sync and every new event.
    changes: watch::Sender<u64>,
}

#[derive(Debug)]
struct ReceivedEvent {
    /// The event as JSON, decrypted if it was encrypted and its key is here.
    event: Value,
    /// Whether it arrived as `m.room.encrypted`.
    encrypted: bool,
    /// Not decrypted yet (its room key has not arrived): tried again after
    /// every sync.
    undecrypted: Option<Raw<OriginalSyncRoomEncryptedEvent>>,
}

impl Received {
    fn rooms(&self) -> MutexGuard<'_, HashMap<OwnedRoomId, Vec<ReceivedEvent>>> {
        self.rooms.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn changed(&self) {
        self.changes.send_modify(|count| *count += 1);
    }

    fn record(&self, room_id: &RoomId, raw: &Raw<AnySyncTimelineEvent>, decrypted: bool) {
        let Ok(event) = serde_json::from_str::<Value>(raw.json().get()) else {
            return;
        };
        let undecrypted = (event["type"] == "m.room.encrypted").then(|| raw.clone().cast());
        let received = ReceivedEvent {
            encrypted: decrypted || undecrypted.is_some(),
            event,
            undecrypted,
        };
        let mut rooms = self.rooms();
        let events = rooms.entry(room_id.to_owned()).or_default();
        let id = &received.event["event_id"];
        match events
            .iter_mut()
            .find(|known| &known.event["event_id"] == id)
        {
            // A repeat (a sync overlapping an earlier one) only counts if it
            // decrypted what was not decrypted before.
            Some(known) => {
                if known.undecrypted.is_some() && received.undecrypted.is_none() {
                    *known = received;
                }
            }
            None => events.push(received),
        }
        drop(rooms);
        self.changed();
    }

    /// Tries again to decrypt the events whose room key had not arrived.
    async fn retry_decryption(&self, client: &Client) {
        let pending: Vec<(OwnedRoomId, Raw<OriginalSyncRoomEncryptedEvent>)> = self
            .rooms()
            .iter()
            .flat_map(|(room_id, events)| {
                events
                    .iter()
                    .filter_map(|event| Some((room_id.clone(), event.undecrypted.clone()?)))
            })
            .collect();
        for (room_id, raw) in pending {
            let Some(room) = client.get_room(&room_id) else {
                continue;
            };
            let Ok(decrypted) = room.decrypt_event(&raw).await else {
                continue;
            };
            if decrypted.encryption_info().is_some() {
                self.record(&room_id, decrypted.raw(), true);
            }
        }
    }

    fn find(&self, room_id: &RoomId, predicate: &dyn Fn(&Value) -> bool) -> Option<Value> {
        self.rooms()
            .get(room_id)?
            .iter()
            .map(|received| &received.event)
            .find(|event| predicate(event))
            .cloned()
    }
}

impl Person {
    /// Logs `account` in as a new device (password login), uploads its
    /// encryption keys, syncs once and starts syncing in the background.
    ///
    /// # Panics
    ///
    /// If the login or the first sync fails.
    pub async fn login(synapse: &Synapse, account: &Account) -> Person {
        Person::login_at(&synapse.url(), account, None).await
    }

    /// Logs `account` in like [`Person::login`], talking to Synapse through
    /// a relay on `127.0.0.1` that passes everything on except, while
    /// [`Person::hold_room_keys`] is on, the room keys this device sends:
    /// matrix-sdk hears they were sent, Synapse gets them only at
    /// [`Person::release_room_keys`]. A message sent meanwhile reaches the
    /// others before its key does.
    pub async fn login_holding_keys(synapse: &Synapse, account: &Account) -> Person {
        let relay = KeyRelay::start(synapse.url()).await;
        Person::login_at(&relay.url(), account, Some(relay)).await
    }

    async fn login_at(homeserver: &str, account: &Account, relay: Option<KeyRelay>) -> Person {
        let store = tempfile::Builder::new()
            .prefix("askbridge-person-")
            .tempdir()
            .expect("create the person's store directory");
        let client = Client::builder()
            .homeserver_url(homeserver)
            // Synapse's login answer names its public URL; this one (or the
            // relay's) is the one to use.
            .respect_login_well_known(false)
            .sqlite_store(store.path(), None)
            .build()
            .await
            .expect("build the person's Matrix client");
        client
            .matrix_auth()
            .login_username(&account.user_id, &account.password)
            .initial_device_display_name("askbridge-testkit person")
            .await
            .unwrap_or_else(|error| panic!("{} could not log in: {error}", account.user_id));

        let (changes, _) = watch::channel(0);
        let received = Arc::new(Received {
            rooms: Mutex::default(),
            changes,
        });
        // Timeline events reach handlers already decrypted when their key is
        // here; an `m.room.encrypted` one is kept and tried again later.
        client.add_event_handler({
            let received = received.clone();
            move |event: Raw<AnySyncTimelineEvent>,
                  room: Room,
                  encryption: Option<EncryptionInfo>| {
                let received = received.clone();
                async move { received.record(room.room_id(), &event, encryption.is_some()) }
            }
        });

        // The first sync sends the device's keys before it syncs, so others
        // can encrypt for this device once `login` returns.
        let first = client
            .sync_once(SyncSettings::default())
            .await
            .unwrap_or_else(|error| panic!("{}'s first sync failed: {error}", account.user_id));
        let sync = tokio::spawn(sync_forever(
            client.clone(),
            received.clone(),
            first.next_batch,
        ));

        Person {
            client,
            user_id: account.user_id.clone(),
            received,
            sync,
            relay,
            invites_seen: Mutex::default(),
            _store: store,
        }
    }

    /// From now on, the room keys this device sends (to-device
    /// `m.room.encrypted` messages) are held back until
    /// [`Person::release_room_keys`].
    ///
    /// # Panics
    ///
    /// Unless logged in with [`Person::login_holding_keys`].
    pub fn hold_room_keys(&self) {
        self.key_relay().holding(true);
    }

    /// Sends the room keys held back on to Synapse, in order, and stops
    /// holding; returns how many requests were held.
    ///
    /// # Panics
    ///
    /// Unless logged in with [`Person::login_holding_keys`], or if Synapse
    /// refuses one.
    pub async fn release_room_keys(&self) -> usize {
        self.key_relay().release().await
    }

    fn key_relay(&self) -> &KeyRelay {
        self.relay.as_ref().unwrap_or_else(|| {
            panic!(
                "{} was not logged in with Person::login_holding_keys",
                self.user_id
            )
        })
    }

    /// `@localpart:localhost`.
    pub fn user_id(&self) -> &str {
        &self.user_id
    }

    /// The matrix-sdk client, for anything this type does not cover.
    pub fn client(&self) -> &Client {
        &self.client
    }

    fn room(&self, room_id: &str) -> Room {
        let room_id = parse_room_id(room_id);
        self.client.get_room(&room_id).unwrap_or_else(|| {
            panic!(
                "{} does not know room {room_id} (not created, joined or invited yet?)",
                self.user_id
            )
        })
    }

    /// Creates a room inviting `invite` (user ids), end-to-end encrypted or
    /// not, marked as a direct chat or not; returns its id.
    pub async fn create_room(&self, invite: &[&str], encrypted: bool, direct: bool) -> String {
        let mut request = CreateRoomRequest::new();
        request.invite = invite.iter().map(|user| parse_user_id(user)).collect();
        request.is_direct = direct;
        request.visibility = Visibility::Private;
        request.preset = Some(if direct {
            RoomPreset::TrustedPrivateChat
        } else {
            RoomPreset::PrivateChat
        });
        if encrypted {
            request.initial_state = vec![
                InitialStateEvent::new(RoomEncryptionEventContent::with_recommended_defaults())
                    .to_raw_any(),
            ];
        }
        let room = self
            .client
            .create_room(request)
            .await
            .unwrap_or_else(|error| panic!("{} could not create a room: {error}", self.user_id));
        room.room_id().to_string()
    }

    /// Joins a room (by id).
    pub async fn join(&self, room_id: &str) {
        self.client
            .join_room_by_id(&parse_room_id(room_id))
            .await
            .unwrap_or_else(|error| panic!("{} could not join {room_id}: {error}", self.user_id));
    }

    /// Accepts the invite to a room.
    pub async fn accept_invite(&self, room_id: &str) {
        self.join(room_id).await;
    }

    /// Waits for an invite this method has not returned yet; returns the
    /// room's id.
    pub async fn wait_for_invite(&self, timeout: Duration) -> String {
        let deadline = tokio::time::Instant::now() + timeout;
        let mut changes = self.received.changes.subscribe();
        loop {
            changes.borrow_and_update();
            if let Some(room_id) = self.take_new_invite() {
                return room_id;
            }
            if tokio::time::timeout_at(deadline, changes.changed())
                .await
                .is_err()
            {
                panic!("{} got no new invite within {timeout:?}", self.user_id);
            }
        }
    }

    /// A pending invite not returned before, now marked as returned.
    fn take_new_invite(&self) -> Option<String> {
        let mut seen = self
            .invites_seen
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let room_id = self
            .client
            .invited_rooms()
            .into_iter()
            .map(|room| room.room_id().to_owned())
            .find(|room_id| !seen.contains(room_id))?;
        seen.insert(room_id.clone());
        Some(room_id.to_string())
    }

    /// Leaves a room.
    pub async fn leave(&self, room_id: &str) {
        self.room(room_id)
            .leave()
            .await
            .unwrap_or_else(|error| panic!("{} could not leave {room_id}: {error}", self.user_id));
    }

    /// Sends an event of any type with this content (encrypted if the room
    /// is, except `m.reaction`, which matrix-sdk sends in the clear like
    /// Element does); returns its event id.
    pub async fn send_raw(&self, room_id: &str, event_type: &str, content: Value) -> String {
        let response = self
            .room(room_id)
            .send_raw(event_type, content)
            .await
            .unwrap_or_else(|error| {
                panic!(
                    "{} could not send {event_type} in {room_id}: {error}",
                    self.user_id
                )
            });
        response.event_id.to_string()
    }

    /// Sends a plain text message.
    pub async fn send_text(&self, room_id: &str, body: &str) -> String {
        self.send_raw(
            room_id,
            "m.room.message",
            json!({ "msgtype": "m.text", "body": body }),
        )
        .await
    }

    /// Replies in the thread of `thread_root`, as Element does: `m.thread`
    /// relation, falling back to a reply to the thread's latest event.
    pub async fn send_thread_reply(&self, room_id: &str, thread_root: &str, body: &str) -> String {
        let in_thread = |event: &Value| {
            let relation = &event["content"]["m.relates_to"];
            relation["rel_type"] == "m.thread" && relation["event_id"] == thread_root
        };
        let latest = self
            .events(room_id)
            .iter()
            .rev()
            .find(|event| in_thread(event))
            .and_then(|event| event["event_id"].as_str().map(str::to_owned))
            .unwrap_or_else(|| thread_root.to_owned());
        let content = json!({
            "msgtype": "m.text",
            "body": body,
            "m.relates_to": {
                "rel_type": "m.thread",
                "event_id": thread_root,
                "is_falling_back": true,
                "m.in_reply_to": { "event_id": latest },
            },
        });
        self.send_raw(room_id, "m.room.message", content).await
    }

    /// A rich reply to `in_reply_to`, as older Element sends it: the body
    /// starts with the quoted event (`> <@sender:localhost> text`), then a
    /// blank line, then `body`.
    pub async fn send_reply(&self, room_id: &str, in_reply_to: &str, body: &str) -> String {
        let quoted = match self.received.find(&parse_room_id(room_id), &|event| {
            event["event_id"] == in_reply_to
        }) {
            Some(event) => event,
            None => self.fetch_event(room_id, in_reply_to).await,
        };
        let sender = quoted["sender"].as_str().unwrap_or_default();
        let mut fallback = String::new();
        for (index, line) in text_of(&quoted["content"]).lines().enumerate() {
            if index == 0 {
                fallback.push_str(&format!("> <{sender}> {line}\n"));
            } else {
                fallback.push_str(&format!("> {line}\n"));
            }
        }
        if fallback.is_empty() {
            fallback = format!("> <{sender}>\n");
        }
        let content = json!({
            "msgtype": "m.text",
            "body": format!("{fallback}\n{body}"),
            "m.relates_to": { "m.in_reply_to": { "event_id": in_reply_to } },
        });
        self.send_raw(room_id, "m.room.message", content).await
    }

    /// An event fetched from the homeserver (decrypted), as JSON.
    async fn fetch_event(&self, room_id: &str, event_id: &str) -> Value {
        let event_id = EventId::parse(event_id)
            .unwrap_or_else(|error| panic!("bad event id {event_id}: {error}"));
        let event = self
            .room(room_id)
            .event(&event_id, None)
            .await
            .unwrap_or_else(|error| panic!("{} could not fetch {event_id}: {error}", self.user_id));
        serde_json::from_str(event.raw().json().get()).expect("an event is JSON")
    }

    /// Votes in a poll with the unstable (MSC3381) event Element sends,
    /// `org.matrix.msc3381.poll.response`.
    pub async fn vote(&self, room_id: &str, poll_start: &str, answer_ids: &[&str]) -> String {
        let content = json!({
            "m.relates_to": { "rel_type": "m.reference", "event_id": poll_start },
            "org.matrix.msc3381.poll.response": { "answers": answer_ids },
        });
        self.send_raw(room_id, "org.matrix.msc3381.poll.response", content)
            .await
    }

    /// Votes in a poll with the stable event, `m.poll.response`.
    pub async fn vote_stable(
        &self,
        room_id: &str,
        poll_start: &str,
        answer_ids: &[&str],
    ) -> String {
        let content = json!({
            "m.relates_to": { "rel_type": "m.reference", "event_id": poll_start },
            "m.selections": answer_ids,
        });
        self.send_raw(room_id, "m.poll.response", content).await
    }

    /// Reacts to an event with `key` (an emoji, usually).
    pub async fn react(&self, room_id: &str, event_id: &str, key: &str) -> String {
        let content = json!({
            "m.relates_to": { "rel_type": "m.annotation", "event_id": event_id, "key": key },
        });
        self.send_raw(room_id, "m.reaction", content).await
    }

    /// Every timeline event received in the room so far, in arrival order
    /// (decrypted where the key is here; still `m.room.encrypted` if not).
    pub fn events(&self, room_id: &str) -> Vec<Value> {
        self.received
            .rooms()
            .get(&*parse_room_id(room_id))
            .map(|events| {
                events
                    .iter()
                    .map(|received| received.event.clone())
                    .collect()
            })
            .unwrap_or_default()
    }

    /// Whether the event arrived encrypted (`None`: not received).
    pub fn arrived_encrypted(&self, room_id: &str, event_id: &str) -> Option<bool> {
        self.received
            .rooms()
            .get(&*parse_room_id(room_id))?
            .iter()
            .find(|received| received.event["event_id"] == event_id)
            .map(|received| received.encrypted)
    }

    /// Waits for the first timeline event in the room, from anyone (this
    /// person included), that matches `predicate`, including events that
    /// arrived before the call; returns it as JSON (`type`, `sender`,
    /// `event_id`, `content`, ...), decrypted.
    ///
    /// # Panics
    ///
    /// After `timeout`, listing the events the room has.
    pub async fn wait_for_event(
        &self,
        room_id: &str,
        timeout: Duration,
        predicate: impl Fn(&Value) -> bool,
    ) -> Value {
        let room = parse_room_id(room_id);
        let deadline = tokio::time::Instant::now() + timeout;
        let mut changes = self.received.changes.subscribe();
        loop {
            changes.borrow_and_update();
            if let Some(event) = self.received.find(&room, &predicate) {
                return event;
            }
            if tokio::time::timeout_at(deadline, changes.changed())
                .await
                .is_err()
            {
                let seen: Vec<String> = self.events(room_id).iter().map(summary).collect();
                panic!(
                    "{} saw no matching event in {room_id} within {timeout:?}; it has:\n{}",
                    self.user_id,
                    seen.join("\n")
                );
            }
        }
    }

    /// Waits for a poll (`org.matrix.msc3381.poll.start` or `m.poll.start`).
    pub async fn wait_for_poll(&self, room_id: &str, timeout: Duration) -> Value {
        self.wait_for_event(room_id, timeout, |event| {
            event["type"] == "org.matrix.msc3381.poll.start" || event["type"] == "m.poll.start"
        })
        .await
    }

    /// Waits for an `m.room.message` whose body contains `contains`.
    pub async fn wait_for_text(&self, room_id: &str, timeout: Duration, contains: &str) -> Value {
        self.wait_for_event(room_id, timeout, |event| {
            event["type"] == "m.room.message"
                && event["content"]["body"]
                    .as_str()
                    .is_some_and(|body| body.contains(contains))
        })
        .await
    }

    /// Waits for an edit (`m.replace` relation) of `event_id`.
    pub async fn wait_for_edit(&self, room_id: &str, event_id: &str, timeout: Duration) -> Value {
        self.wait_for_event(room_id, timeout, |event| {
            let relation = &event["content"]["m.relates_to"];
            relation["rel_type"] == "m.replace" && relation["event_id"] == event_id
        })
        .await
    }

    /// Waits for the end of the poll `poll_start`
    /// (`org.matrix.msc3381.poll.end` or `m.poll.end`).
    pub async fn wait_for_poll_end(
        &self,
        room_id: &str,
        poll_start: &str,
        timeout: Duration,
    ) -> Value {
        self.wait_for_event(room_id, timeout, |event| {
            (event["type"] == "org.matrix.msc3381.poll.end" || event["type"] == "m.poll.end")
                && event["content"]["m.relates_to"]["event_id"] == poll_start
        })
        .await
    }

    /// Waits for `user_id`'s membership in the room to become `membership`
    /// (`join`, `invite`, `leave`, ...), as a timeline event.
    pub async fn wait_for_membership(
        &self,
        room_id: &str,
        user_id: &str,
        membership: &str,
        timeout: Duration,
    ) -> Value {
        self.wait_for_event(room_id, timeout, |event| {
            event["type"] == "m.room.member"
                && event["state_key"] == user_id
                && event["content"]["membership"] == membership
        })
        .await
    }
}

impl Drop for Person {
    fn drop(&mut self) {
        self.sync.abort();
    }
}

/// A relay between one person's client and Synapse that can hold back the
/// to-device `m.room.encrypted` messages the client sends (how room keys
/// travel): answered `{}` as Synapse would, passed on later. Stopped on
/// drop.
struct KeyRelay {
    addr: std::net::SocketAddr,
    state: Arc<RelayState>,
    server: JoinHandle<()>,
}

struct RelayState {
    synapse: String,
    http: reqwest::Client,
    /// `Some` while holding: the requests held, in order.
    held: Mutex<Option<Vec<HeldRequest>>>,
}

/// A request the relay has not passed on yet.
struct HeldRequest {
    path: String,
    authorization: Option<axum::http::HeaderValue>,
    body: axum::body::Bytes,
}

impl KeyRelay {
    async fn start(synapse: String) -> KeyRelay {
        let state = Arc::new(RelayState {
            synapse,
            http: reqwest::Client::builder()
                .pool_max_idle_per_host(0)
                .build()
                .expect("build an HTTP client"),
            held: Mutex::new(None),
        });
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind the key relay");
        let addr = listener.local_addr().expect("the key relay's address");
        let app = axum::Router::new()
            .fallback(relay)
            .with_state(Arc::clone(&state));
        let server = tokio::spawn(async move {
            if let Err(error) = axum::serve(listener, app).await {
                tracing::error!(%error, "the key relay failed");
            }
        });
        KeyRelay {
            addr,
            state,
            server,
        }
    }

    fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    fn holding(&self, on: bool) {
        let mut held = self.state.held();
        match (on, held.is_some()) {
            (true, false) => *held = Some(Vec::new()),
            (false, true) => *held = None,
            _ => {}
        }
    }

    async fn release(&self) -> usize {
        let held = self.state.held().take().unwrap_or_default();
        let count = held.len();
        for request in held {
            let (status, body) = self
                .state
                .forward(
                    axum::http::Method::PUT,
                    &request.path,
                    request.authorization,
                    request.body,
                )
                .await;
            assert!(
                status.is_success(),
                "Synapse refused a room key held back ({}): {status} {body:?}",
                request.path
            );
        }
        count
    }
}

impl Drop for KeyRelay {
    fn drop(&mut self) {
        self.server.abort();
    }
}

impl RelayState {
    fn held(&self) -> MutexGuard<'_, Option<Vec<HeldRequest>>> {
        self.held.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Sends one request on to Synapse; its status and body.
    async fn forward(
        &self,
        method: axum::http::Method,
        path: &str,
        authorization: Option<axum::http::HeaderValue>,
        body: axum::body::Bytes,
    ) -> (axum::http::StatusCode, axum::body::Bytes) {
        let mut request = self
            .http
            .request(method, format!("{}{path}", self.synapse))
            .header(axum::http::header::CONTENT_TYPE, "application/json")
            .body(body);
        if let Some(authorization) = authorization {
            request = request.header(axum::http::header::AUTHORIZATION, authorization);
        }
        match request.send().await {
            Ok(response) => {
                let status = response.status();
                (status, response.bytes().await.unwrap_or_default())
            }
            Err(error) => (
                axum::http::StatusCode::BAD_GATEWAY,
                axum::body::Bytes::from(format!("the key relay cannot reach Synapse: {error}")),
            ),
        }
    }
}

/// The relay's one route: a room key held back while holding, anything
/// else passed on.
async fn relay(
    axum::extract::State(state): axum::extract::State<Arc<RelayState>>,
    method: axum::http::Method,
    uri: axum::http::Uri,
    headers: axum::http::HeaderMap,
    body: axum::body::Bytes,
) -> axum::response::Response {
    use axum::response::IntoResponse;
    let path = uri
        .path_and_query()
        .map_or_else(|| uri.path().to_owned(), |path| path.as_str().to_owned());
    let authorization = headers.get(axum::http::header::AUTHORIZATION).cloned();
    let room_key =
        method == axum::http::Method::PUT && uri.path().contains("/sendToDevice/m.room.encrypted/");
    if room_key && let Some(held) = state.held().as_mut() {
        held.push(HeldRequest {
            path,
            authorization,
            body,
        });
        return axum::Json(json!({})).into_response();
    }
    let (status, body) = state.forward(method, &path, authorization, body).await;
    (
        status,
        [(axum::http::header::CONTENT_TYPE, "application/json")],
        body,
    )
        .into_response()
}

/// The person's sync loop: long-polls, runs the event handlers (which record
/// events), retries undecryptable events, and wakes the waiters.
async fn sync_forever(client: Client, received: Arc<Received>, mut token: String) {
    loop {
        let settings = SyncSettings::default()
            .timeout(SYNC_TIMEOUT)
            .token(token.clone());
        match client.sync_once(settings).await {
            Ok(response) => {
                token = response.next_batch;
                received.retry_decryption(&client).await;
                received.changed();
            }
            Err(error) => {
                tracing::debug!(%error, "a person's sync failed; syncing again");
                // Not a wait for a condition: a pause before retrying, so
                // that a stopped homeserver is not hammered.
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        }
    }
}

/// The text of an event's content, for a reply's quote.
fn text_of(content: &Value) -> String {
    let candidates = [
        &content["body"],
        &content["org.matrix.msc1767.text"],
        &content["m.text"][0]["body"],
        &content["org.matrix.msc3381.poll.start"]["question"]["org.matrix.msc1767.text"],
    ];
    candidates
        .into_iter()
        .find_map(Value::as_str)
        .unwrap_or_default()
        .to_owned()
}

/// One line about an event, for a timeout's panic message.
fn summary(event: &Value) -> String {
    let content = &event["content"];
    let text = text_of(content);
    format!(
        "  {} {} from {}: {}",
        event["event_id"].as_str().unwrap_or("?"),
        event["type"].as_str().unwrap_or("?"),
        event["sender"].as_str().unwrap_or("?"),
        if text.is_empty() {
            content.to_string()
        } else {
            text
        },
    )
}

fn parse_room_id(room_id: &str) -> OwnedRoomId {
    RoomId::parse(room_id).unwrap_or_else(|error| panic!("bad room id {room_id}: {error}"))
}

fn parse_user_id(user_id: &str) -> OwnedUserId {
    UserId::parse(user_id).unwrap_or_else(|error| panic!("bad user id {user_id}: {error}"))
}

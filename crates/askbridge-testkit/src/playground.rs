//! Microsoft 365 Agents Playground: Microsoft's own Teams emulator, run
//! offline from npm (`@microsoft/m365agentsplayground`, pinned by the Node
//! tests' lock file and installed at test time — its licence is
//! Microsoft's pre-release terms, so nothing of it is in this repository).
//!
//! [`Playground::start`] runs it headless on a free port against a bot's
//! messaging endpoint and connects to its stream of what the bot posts
//! and updates. The people are its mock users: the current user sends
//! messages ([`Playground::say`]); anyone presses a card's
//! `Action.Execute` ([`Playground::press`]) or sends a message through
//! its custom-activity route ([`Playground::say_as`]).

use std::path::Path;
use std::process::Stdio;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use futures_util::StreamExt;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};
use tokio::sync::Notify;

/// The Playground's mock tenant, with ids shaped as Teams' are (its own
/// defaults are not: `team-id`, `user-id-0`): a bot `28:<app id>`, people
/// `29:…` with GUID AAD object ids, a personal chat `a:…`, a group chat
/// `19:…@thread.v2`, a team whose General channel is `19:…@thread.tacv2`.
const CONFIG: &str = r#"version: "0.1.1"
tenantId: 72f988bf-86f1-41af-91ab-2d7cd011db47
bot:
  id: 28:11111111-2222-3333-4444-555555555555
  name: askbridge
currentUser:
  id: 29:alice-user-id
  name: Alice Example
  userPrincipleName: alice@example.com
  aadObjectId: aaaaaaaa-0000-0000-0000-000000000001
  givenName: Alice
  surname: Example
  email: alice@example.com
users:
  - id: 29:bob-user-id
    name: Bob Example
    userPrincipleName: bob@example.com
    aadObjectId: bbbbbbbb-0000-0000-0000-000000000002
    givenName: Bob
    surname: Example
    email: bob@example.com
  - id: 29:carol-user-id
    name: Carol Example
    userPrincipleName: carol@example.com
    aadObjectId: cccccccc-0000-0000-0000-000000000003
    givenName: Carol
    surname: Example
    email: carol@example.com
  - id: 29:dave-user-id
    name: Dave Example
    userPrincipleName: dave@example.com
    aadObjectId: dddddddd-0000-0000-0000-000000000004
    givenName: Dave
    surname: Example
    email: dave@example.com
  - id: 29:erin-user-id
    name: Erin Example
    userPrincipleName: erin@example.com
    aadObjectId: eeeeeeee-0000-0000-0000-000000000005
    givenName: Erin
    surname: Example
    email: erin@example.com
  - id: 29:frank-user-id
    name: Frank Example
    userPrincipleName: frank@example.com
    aadObjectId: ffffffff-0000-0000-0000-000000000006
    givenName: Frank
    surname: Example
    email: frank@example.com
personalChat:
  id: a:1alice-personal
groupChat:
  id: 19:group1@thread.v2
  name: Test Group
team:
  id: 19:team1@thread.tacv2
  name: Test Team
  aadGroupId: cccccccc-0000-0000-0000-000000000003
  channels:
    - id: 19:chan2@thread.tacv2
      name: Second
"#;

/// The bot's app id in [`CONFIG`].
pub const APP_ID: &str = "11111111-2222-3333-4444-555555555555";

/// How long the Playground may take to start and answer.
const WAIT: Duration = Duration::from_secs(30);

/// A running Playground.
pub struct Playground {
    child: Child,
    /// `http://127.0.0.1:<port>`.
    url: String,
    http: reqwest::Client,
    /// Its mock tenant, users, chats and team (`testConfig`'s `config`).
    pub config: Value,
    frames: Arc<Frames>,
    log: tempfile::NamedTempFile,
    /// Read at start; kept until then.
    _config: tempfile::NamedTempFile,
    counter: std::sync::atomic::AtomicU64,
}

/// What the bot posted and updated, as the stream said, in order.
#[derive(Default)]
struct Frames {
    seen: Mutex<Vec<Value>>,
    more: Notify,
}

/// A mock user.
#[derive(Debug, Clone)]
pub struct User {
    /// Their Teams id (`user-id-1`).
    pub id: String,
    /// Their display name.
    pub name: String,
    /// Their AAD object id.
    pub aad_object_id: String,
}

impl Playground {
    /// Starts the Playground (`node` running `cli`, the package's
    /// `cli.js`) for the bot at `endpoint`, and connects to its stream.
    ///
    /// # Panics
    ///
    /// If it does not start, exits, or does not answer in time (the panic
    /// shows its log).
    pub async fn start(mut node: Command, cli: &Path, endpoint: &str) -> Playground {
        let log = tempfile::Builder::new()
            .prefix("askbridge-playground-")
            .suffix(".log")
            .tempfile()
            .expect("a log file");
        let config_file = tempfile::Builder::new()
            .prefix("askbridge-playground-")
            .suffix(".yml")
            .tempfile()
            .expect("a config file");
        std::fs::write(config_file.path(), CONFIG).expect("write the config");
        let dir = log
            .path()
            .parent()
            .map(Path::to_path_buf)
            .unwrap_or_default();
        let mut child = node
            .arg(cli)
            .args([
                "start",
                "-e",
                endpoint,
                "-c",
                "msteams",
                "--disable-telemetry",
                "-p",
                "0",
            ])
            .env("TEAMSAPPTESTER_BROWSER", "none")
            .env("M365_AGENTS_PLAYGROUND_LOGFILE", log.path())
            .env("M365_AGENTS_PLAYGROUND_CONFIG_PATH", config_file.path())
            .current_dir(dir)
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .kill_on_drop(true)
            .spawn()
            .expect("start the Playground");
        let stdout = child.stdout.take().expect("its output");
        let mut lines = BufReader::new(stdout).lines();
        let port = tokio::time::timeout(WAIT, async {
            while let Ok(Some(line)) = lines.next_line().await {
                if let Some(port) = line.trim().strip_prefix("Listening on ") {
                    return port.trim().parse::<u16>().ok();
                }
            }
            None
        })
        .await
        .ok()
        .flatten()
        .unwrap_or_else(|| panic!("the Playground did not start: {}", read(log.path())));
        // Its output is not read after this; it says little.
        tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
        let url = format!("http://127.0.0.1:{port}");
        let http = reqwest::Client::builder()
            .no_proxy()
            .timeout(WAIT)
            .build()
            .expect("an HTTP client");
        let ready = tokio::time::timeout(WAIT, async {
            loop {
                let pong = http.get(format!("{url}/_debug/ping")).send().await;
                if let Ok(pong) = pong
                    && pong.text().await.is_ok_and(|text| text.contains("pong"))
                {
                    return;
                }
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        })
        .await;
        if ready.is_err() || child.try_wait().ok().flatten().is_some() {
            panic!("the Playground is not answering: {}", read(log.path()));
        }
        let config: Value = http
            .get(format!("{url}/_internal/v1/testConfig"))
            .send()
            .await
            .expect("its config")
            .json()
            .await
            .expect("JSON");
        let frames = Arc::new(Frames::default());
        let stream = format!("ws://127.0.0.1:{port}/_ws_conversation/v1/conversations/stream");
        let (socket, _) = tokio_tungstenite::connect_async(stream.as_str())
            .await
            .expect("the Playground's stream");
        let collected = Arc::clone(&frames);
        tokio::spawn(async move {
            let (_, mut incoming) = socket.split();
            while let Some(Ok(frame)) = incoming.next().await {
                let Ok(text) = frame.into_text() else {
                    continue;
                };
                if let Ok(value) = serde_json::from_str::<Value>(&text) {
                    collected.lock().push(value);
                    collected.more.notify_waiters();
                }
            }
        });
        Playground {
            child,
            url,
            http,
            config: config["config"].clone(),
            frames,
            log,
            _config: config_file,
            counter: std::sync::atomic::AtomicU64::new(0),
        }
    }

    /// Its Bot Connector, where the bot posts (`serviceUrl`).
    pub fn connector_url(&self) -> String {
        format!("{}/_connector", self.url)
    }

    /// The bot's id.
    pub fn bot_id(&self) -> String {
        text(&self.config["bot"]["id"])
    }

    /// The user the Playground sends messages as.
    pub fn me(&self) -> User {
        user(&self.config["currentUser"])
    }

    /// The other mock users.
    pub fn users(&self) -> Vec<User> {
        self.config["users"]
            .as_array()
            .map(|users| users.iter().map(user).collect())
            .unwrap_or_default()
    }

    /// The current user's personal chat with the bot.
    pub fn personal_chat(&self) -> String {
        text(&self.config["personalChat"]["id"])
    }

    /// The group chat (every user in it, the current one too).
    pub fn group_chat(&self) -> String {
        text(&self.config["groupChats"][0]["id"])
    }

    /// The team's General channel (a post there starts a thread).
    pub fn channel(&self) -> String {
        text(&self.config["teams"][0]["id"])
    }

    /// The Playground's log, for failure messages.
    pub fn log(&self) -> String {
        read(self.log.path())
    }

    /// The current user says `text` in `conversation` (mentioning the bot,
    /// as a group chat needs).
    pub async fn say(&self, conversation: &str, text: &str) -> Value {
        let bot = self.config["bot"]["name"].as_str().unwrap_or("Bot");
        let mention = format!("<at>{bot}</at>");
        let body = json!({
            "from": {"id": self.me().id},
            "text": format!("{mention} {text}"),
            "textFormat": "plain",
            "mentions": [{"mentioned": {"id": self.bot_id()}, "text": mention}],
        });
        let path = format!(
            "/_conversation/v1/conversations/{}/messages",
            segment(conversation)
        );
        self.post(&path, &body).await.1
    }

    /// `user` says `text` in `conversation` (a `groupChat` or `personal`
    /// one), sent to the bot as Teams would (its activity id returned).
    pub async fn say_as(&self, user: &User, conversation: &str, kind: &str, text: &str) -> String {
        let n = self
            .counter
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let id = format!("custom-{n}-{}", std::process::id());
        let activity = json!({
            "type": "message",
            "id": id,
            "channelId": "msteams",
            "serviceUrl": format!("{}/_connector", self.url.replace("127.0.0.1", "localhost")),
            "timestamp": "2026-12-07T00:00:00.000Z",
            "from": {"id": user.id, "name": user.name, "aadObjectId": user.aad_object_id},
            "recipient": {"id": self.bot_id(), "name": self.config["bot"]["name"]},
            "conversation": {"id": conversation, "conversationType": kind,
                             "tenantId": self.config["tenantId"]},
            "text": text,
            "textFormat": "plain",
            "channelData": {"tenant": {"id": self.config["tenantId"]}},
        });
        let (status, body) = self.post("/_internal/v1/customActivities", &activity).await;
        assert!((200..300).contains(&status), "{status} {body}");
        id
    }

    /// `user` presses an `Action.Execute` of the card `card` in
    /// `conversation`, its data (with the card's inputs) `data`; returns
    /// the HTTP status and the bot's invoke answer.
    pub async fn press(
        &self,
        user: &User,
        conversation: &str,
        card: &str,
        data: Value,
    ) -> (u16, Value) {
        let body = json!({
            "name": "adaptiveCard/action",
            "from": {"id": user.id},
            "conversation": {"id": conversation},
            "replyToId": card,
            "value": {"action": {"type": "Action.Execute", "verb": "askbridge", "data": data}},
        });
        self.post("/_conversation/v1/invoke", &body).await
    }

    /// The first post or update of the bot's, from the `from`-th on, that
    /// `wanted` takes; with its position.
    ///
    /// # Panics
    ///
    /// When none comes in time (the panic lists what did).
    pub async fn wait_for(&self, from: usize, wanted: impl Fn(&Value) -> bool) -> (usize, Value) {
        let found = tokio::time::timeout(WAIT, async {
            loop {
                let notified = self.frames.more.notified();
                if let Some(found) = self
                    .frames
                    .lock()
                    .iter()
                    .enumerate()
                    .skip(from)
                    .find(|(_, frame)| wanted(frame))
                {
                    return (found.0, found.1.clone());
                }
                notified.await;
            }
        })
        .await;
        found.unwrap_or_else(|_| {
            panic!(
                "the bot posted nothing wanted; the stream had {:#?}",
                self.frames.lock()
            )
        })
    }

    /// The next card the bot posted in `conversation` from the `from`-th
    /// frame on: its position, activity id and card.
    pub async fn next_card(&self, from: usize, conversation: &str) -> (usize, String, Value) {
        let (at, frame) = self
            .wait_for(from, |frame| {
                frame["action"] == "createMessage"
                    && frame["actionConversationId"] == conversation
                    && frame["message"]["attachments"][0]["content"]["type"] == "AdaptiveCard"
            })
            .await;
        let message = &frame["message"];
        (
            at,
            text(&message["messageId"]),
            message["attachments"][0]["content"].clone(),
        )
    }

    /// The next update of activity `id` from the `from`-th frame on: its
    /// card.
    pub async fn next_update(&self, from: usize, id: &str) -> Value {
        let (_, frame) = self
            .wait_for(from, |frame| {
                frame["action"] == "updateMessage" && frame["message"]["messageId"] == id
            })
            .await;
        frame["message"]["attachments"][0]["content"].clone()
    }

    /// How many frames the stream brought so far took `wanted`.
    pub fn frames(&self, wanted: impl Fn(&Value) -> bool) -> usize {
        self.frames
            .lock()
            .iter()
            .filter(|frame| wanted(frame))
            .count()
    }

    /// How many frames the stream brought so far.
    pub fn seen(&self) -> usize {
        self.frames.lock().len()
    }

    async fn post(&self, path: &str, body: &Value) -> (u16, Value) {
        let response = self
            .http
            .post(format!("{}{path}", self.url))
            .json(body)
            .send()
            .await
            .unwrap_or_else(|error| panic!("POST {path}: {error}; {}", self.log()));
        let status = response.status().as_u16();
        let text = response.text().await.unwrap_or_default();
        (
            status,
            serde_json::from_str(&text).unwrap_or(Value::String(text)),
        )
    }
}

impl std::fmt::Debug for Playground {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Playground")
            .field("url", &self.url)
            .finish_non_exhaustive()
    }
}

impl Drop for Playground {
    fn drop(&mut self) {
        let _ = self.child.start_kill();
    }
}

impl Frames {
    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<Value>> {
        self.seen.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// Every text of a card's body (text blocks and text runs), joined.
pub fn card_text(card: &Value) -> String {
    let mut texts = Vec::new();
    collect_texts(card, &mut texts);
    texts.join("\n")
}

fn collect_texts(value: &Value, texts: &mut Vec<String>) {
    match value {
        Value::Object(map) => {
            if matches!(
                map.get("type").and_then(Value::as_str),
                Some("TextRun" | "TextBlock")
            ) && let Some(text) = map.get("text").and_then(Value::as_str)
            {
                texts.push(text.to_owned());
            }
            map.values().for_each(|value| collect_texts(value, texts));
        }
        Value::Array(items) => items.iter().for_each(|value| collect_texts(value, texts)),
        _ => {}
    }
}

/// The data of the card's action titled `title` (starting so).
pub fn action_data(card: &Value, title: &str) -> Value {
    let mut found = None;
    find_action(card, title, &mut found);
    found.unwrap_or_else(|| panic!("no action {title:?} in {card:#}"))
}

fn find_action(value: &Value, title: &str, found: &mut Option<Value>) {
    match value {
        Value::Object(map) => {
            if map.get("type").and_then(Value::as_str) == Some("Action.Execute")
                && map
                    .get("title")
                    .and_then(Value::as_str)
                    .is_some_and(|t| t.starts_with(title))
                && found.is_none()
            {
                *found = map.get("data").cloned();
            }
            map.values()
                .for_each(|value| find_action(value, title, found));
        }
        Value::Array(items) => items
            .iter()
            .for_each(|value| find_action(value, title, found)),
        _ => {}
    }
}

fn user(value: &Value) -> User {
    User {
        id: text(&value["id"]),
        name: text(&value["name"]),
        aad_object_id: text(&value["aadObjectId"]),
    }
}

fn text(value: &Value) -> String {
    value.as_str().unwrap_or_default().to_owned()
}

/// An id as one URL path segment.
fn segment(id: &str) -> String {
    form_urlencoded::byte_serialize(id.as_bytes())
        .collect::<String>()
        .replace('+', "%20")
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_default()
}

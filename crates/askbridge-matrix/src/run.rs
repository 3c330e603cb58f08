//! The only async code of the Matrix channel: matrix-sdk's client, with
//! its SQLite store (room state and the end-to-end encryption keys) under
//! askbridge's data dir.
//!
//! - [`MatrixApi::connect`] restores the bot's session: from
//!   `MATRIX_ACCESS_TOKEN` (its device asked of the homeserver), or from
//!   the session a password login saved before, or by logging in with
//!   `MATRIX_PASSWORD` once and saving that session. A store that a device
//!   used before and that is now gone is refused, saying what to do: the
//!   device's keys went with it, so encrypted rooms could not be read.
//! - Sending ([`MatrixApi::send`]): each event with a transaction id, so a
//!   part sent again is posted once; matrix-sdk encrypts in encrypted rooms,
//!   waits out `M_LIMIT_EXCEEDED` for the time the homeserver names and
//!   retries a failing homeserver (for at most [`RETRY_FOR`]); what still
//!   fails is classified ([`classify`]). A room the bot is not in is
//!   refused with the homeserver's own reason.
//! - Receiving ([`MatrixApi::receive`]): `/sync` in a loop, each batch's
//!   events (decrypted) handed over in order, and the position saved only
//!   once the batch was taken, so a restart reads again what was not; an
//!   event whose room key comes later is kept until it is taken.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::time::Duration;

use askbridge_core::failure::{PlatformFailure, SetupError};
use askbridge_core::inbound::{Handled, Recent};
use matrix_sdk::authentication::matrix::{MatrixSession, MatrixSessionTokens};
use matrix_sdk::config::{RequestConfig, SyncSettings};
use matrix_sdk::ruma::api::client::room::create_room;
use matrix_sdk::ruma::events::room::encrypted::OriginalSyncRoomEncryptedEvent;
use matrix_sdk::ruma::events::room::encryption::RoomEncryptionEventContent;
use matrix_sdk::ruma::events::{AnySyncTimelineEvent, InitialStateEvent};
use matrix_sdk::ruma::serde::Raw;
use matrix_sdk::ruma::{
    EventId, OwnedDeviceId, OwnedRoomId, OwnedUserId, RoomAliasId, RoomId, TransactionId, UserId,
};
use matrix_sdk::{Client, HttpError, Room, RoomState, SessionMeta};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::parse::{self, Bot, Received};
use crate::render::Destination;

/// How long matrix-sdk retries a failing request (a 5xx, a rate limit)
/// before the failure is returned.
pub const RETRY_FOR: Duration = Duration::from_secs(30);
/// How long one `/sync` waits for something to happen.
const SYNC_WAIT: Duration = Duration::from_secs(25);
/// Event ids taken from a batch that is read again (part of it failed).
const REMEMBERED: usize = 1_024;
/// How many syncs an encrypted event waits for its room key (keys are sent
/// to the bot's device alongside, and usually come in the same sync).
const DECRYPT_TRIES: u32 = 20;

/// What the bot logs in with.
#[derive(Debug, Clone)]
pub struct Login {
    /// The homeserver's URL.
    pub homeserver: String,
    /// The bot's user id.
    pub user_id: String,
    /// `MATRIX_ACCESS_TOKEN`, if set.
    pub access_token: Option<String>,
    /// `MATRIX_PASSWORD`, if set.
    pub password: Option<String>,
    /// Where the session, the store and the sync position are kept.
    pub dir: PathBuf,
    /// Whether the direct chats the bot opens are encrypted.
    pub encrypt_direct: bool,
}

/// The session a password login made, kept in the data dir.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct SavedSession {
    user_id: String,
    device_id: String,
    access_token: String,
}

/// The bot's connection to its homeserver.
#[derive(Debug, Clone)]
pub struct MatrixApi {
    client: Client,
    user_id: OwnedUserId,
    dir: PathBuf,
    encrypt_direct: bool,
    /// One direct chat opened at a time, so two asks to one person at
    /// once make one room.
    opening: std::sync::Arc<tokio::sync::Mutex<()>>,
}

/// One event received in a room, with where and from whom.
#[derive(Debug, Clone)]
pub struct Incoming {
    /// The room's id.
    pub room: String,
    /// Whether the room is the bot's direct chat with the sender.
    pub direct: bool,
    /// The sender's display name in the room.
    pub name: Option<String>,
    /// What they did.
    pub received: Received,
}

impl MatrixApi {
    /// Logs in (see the module docs) and opens the store.
    pub async fn connect(login: &Login) -> Result<MatrixApi, SetupError> {
        let user_id = UserId::parse(login.user_id.as_str()).map_err(|error| {
            SetupError(format!(
                "[matrix] user_id {:?} is not a Matrix user id (@name:server): {error}",
                login.user_id
            ))
        })?;
        let session = session(login, &user_id).await?;
        let store = login.dir.join("store");
        let marker = login.dir.join("device");
        check_store(&store, &marker, &session.meta.device_id)?;
        std::fs::create_dir_all(&store)
            .map_err(|error| SetupError(format!("cannot create {}: {error}", store.display())))?;
        let client = Client::builder()
            .homeserver_url(&login.homeserver)
            // The homeserver's login answer may name a public URL that this
            // host cannot reach; the configured one is the one to use.
            .respect_login_well_known(false)
            .sqlite_store(&store, None)
            .request_config(RequestConfig::new().retry_timeout(RETRY_FOR))
            .build()
            .await
            .map_err(|error| SetupError(format!("[matrix] cannot start the client: {error}")))?;
        client
            .matrix_auth()
            .restore_session(session.clone())
            .await
            .map_err(|error| SetupError(format!("[matrix] cannot restore the session: {error}")))?;
        std::fs::write(&marker, session.meta.device_id.as_str())
            .map_err(|error| SetupError(format!("cannot write {}: {error}", marker.display())))?;
        Ok(MatrixApi {
            client,
            user_id,
            dir: login.dir.clone(),
            encrypt_direct: login.encrypt_direct,
            opening: Default::default(),
        })
    }

    /// The bot's user id.
    pub fn user_id(&self) -> &str {
        self.user_id.as_str()
    }

    /// The bot's device.
    pub fn device_id(&self) -> Option<String> {
        self.client.device_id().map(|id| id.to_string())
    }

    /// The bot's display name, as the homeserver has it.
    pub async fn display_name(&self) -> Result<Option<String>, PlatformFailure> {
        self.client
            .account()
            .get_display_name()
            .await
            .map_err(|error| classify(&error))
    }

    /// The Matrix versions the homeserver speaks, newest last.
    pub async fn versions(&self) -> Result<Vec<String>, PlatformFailure> {
        let versions = self
            .client
            .server_versions()
            .await
            .map_err(|error| classify_http(&error))?;
        Ok(versions.iter().map(|v| format!("{v:?}")).collect())
    }

    /// The room an ask for `destination` is posted in: the room itself, an
    /// alias resolved, or the direct chat with a user (made, with the user
    /// invited, when there is none yet).
    pub async fn room_for(&self, destination: &Destination) -> Result<String, PlatformFailure> {
        match destination {
            Destination::Room(room) if room.starts_with('#') => {
                let alias = RoomAliasId::parse(room.as_str()).map_err(|error| {
                    PlatformFailure::Permanent(format!("not a room alias: {error}"))
                })?;
                let resolved = self
                    .client
                    .resolve_room_alias(&alias)
                    .await
                    .map_err(|error| classify_http(&error))?;
                Ok(resolved.room_id.to_string())
            }
            Destination::Room(room) => Ok(room.clone()),
            Destination::User(user) => self.direct_room(user).await,
        }
    }

    async fn direct_room(&self, user: &str) -> Result<String, PlatformFailure> {
        let user = UserId::parse(user)
            .map_err(|error| PlatformFailure::Permanent(format!("not a user id: {error}")))?;
        let _one_at_a_time = self.opening.lock().await;
        if let Some(room) = self.client.get_dm_room(&user)
            && room.state() == RoomState::Joined
        {
            return Ok(room.room_id().to_string());
        }
        let mut request = create_room::v3::Request::new();
        request.invite = vec![user.clone()];
        request.is_direct = true;
        request.preset = Some(create_room::v3::RoomPreset::TrustedPrivateChat);
        if self.encrypt_direct {
            request.initial_state = vec![
                InitialStateEvent::new(RoomEncryptionEventContent::with_recommended_defaults())
                    .to_raw_any(),
            ];
        }
        let room = self
            .client
            .create_room(request)
            .await
            .map_err(|error| classify(&error))?;
        Ok(room.room_id().to_string())
    }

    /// Sends one event; `once` is its transaction id (the same part sent
    /// again is posted once). Returns the event's id.
    pub async fn send(
        &self,
        room: &str,
        event_type: &str,
        content: Value,
        once: Option<&str>,
    ) -> Result<String, PlatformFailure> {
        let room = self.joined(room).await?;
        let mut sending = room.send_raw(event_type, content);
        if let Some(once) = once {
            let once: &TransactionId = once.into();
            sending = sending.with_transaction_id(once);
        }
        let sent = sending.await.map_err(|error| classify(&error))?;
        Ok(sent.event_id.to_string())
    }

    /// Whether event `event` in `room` is a poll.
    pub async fn is_poll(&self, room: &str, event: &str) -> Result<bool, PlatformFailure> {
        let room = self.joined(room).await?;
        let event = EventId::parse(event)
            .map_err(|error| PlatformFailure::Permanent(format!("not an event id: {error}")))?;
        let found = room
            .event(&event, None)
            .await
            .map_err(|error| classify(&error))?;
        let event_type = found.raw().get_field::<String>("type").ok().flatten();
        Ok(event_type.is_some_and(|t| t.ends_with("poll.start")))
    }

    /// The room, if the bot is in it; else the homeserver's reason why it
    /// cannot post there.
    async fn joined(&self, room: &str) -> Result<Room, PlatformFailure> {
        let room_id = RoomId::parse(room)
            .map_err(|error| PlatformFailure::Permanent(format!("not a room id: {error}")))?;
        match self.client.get_room(&room_id) {
            Some(room) if room.state() == RoomState::Joined => Ok(room),
            _ => Err(self.why_not_in(&room_id).await),
        }
    }

    /// Asks the homeserver about a room the bot has not joined, for its
    /// own words (`M_FORBIDDEN: … not in room`).
    async fn why_not_in(&self, room: &RoomId) -> PlatformFailure {
        use matrix_sdk::ruma::api::client::membership::joined_members;
        let request = joined_members::v3::Request::new(room.to_owned());
        match self.client.send(request).await {
            Err(error) => match classify_http(&error) {
                PlatformFailure::Permanent(reason) => PlatformFailure::Permanent(reason),
                other => other,
            },
            Ok(_) => PlatformFailure::Transient(format!(
                "the bot is in room {room}, but its store has not caught up yet"
            )),
        }
    }

    /// Joins `room` (an accepted invite).
    pub async fn join(&self, room: &str) -> Result<(), PlatformFailure> {
        let room_id = RoomId::parse(room)
            .map_err(|error| PlatformFailure::Permanent(format!("not a room id: {error}")))?;
        self.client
            .join_room_by_id(&room_id)
            .await
            .map(|_| ())
            .map_err(|error| classify(&error))
    }

    /// Syncs until stopped: each batch's events, in order, go to `handle`,
    /// which says what became of each; invites go to `invited` (the room
    /// and who invited). The position is saved once every event of a batch
    /// was taken; otherwise the batch is read again (what was taken of it
    /// is not handed over twice). An encrypted event whose room key comes
    /// after it waits (kept in the data dir) and goes in the batch of the
    /// sync that brings its key, again until it is taken. Without a saved
    /// position (the first start), what came before is not handled.
    pub async fn receive<H, HF, I, IF>(&self, mut handle: H, mut invited: I) -> SetupError
    where
        H: FnMut(Vec<Incoming>) -> HF,
        HF: Future<Output = Vec<Handled>>,
        I: FnMut(String, Option<String>) -> IF,
        IF: Future<Output = ()>,
    {
        let position = self.dir.join("sync-position");
        let mut since = std::fs::read_to_string(&position)
            .ok()
            .map(|text| text.trim().to_owned());
        let mut taken = Recent::new(REMEMBERED);
        let kept = self.dir.join("undecrypted.json");
        let mut waiting = Waiting::load(&kept);
        let mut synced = false;
        let mut backoff = Duration::from_millis(250);
        loop {
            let mut settings = SyncSettings::default().timeout(SYNC_WAIT);
            if let Some(since) = &since {
                settings = settings.token(since.clone());
            }
            let response = match self.client.sync_once(settings).await {
                Ok(response) => response,
                Err(error) => {
                    if let Some(refused) = refused_login(&error) {
                        return refused;
                    }
                    tracing::warn!(error = %error, retry_in_ms = backoff.as_millis() as u64, "Matrix sync failed");
                    tokio::time::sleep(backoff).await;
                    backoff = (backoff * 2).min(Duration::from_secs(10));
                    continue;
                }
            };
            backoff = Duration::from_millis(250);
            if !synced {
                synced = true;
                tracing::info!("Matrix sync started: the bot's keys are on the homeserver");
            }
            for (room, invite) in &response.rooms.invite {
                let inviter = invite
                    .invite_state
                    .events
                    .iter()
                    .find_map(|event| inviter_of(event.json().get(), self.user_id()));
                invited(room.to_string(), inviter).await;
            }
            let fresh_start = since.is_none();
            let (mut events, late) = self.decrypted_late(&mut waiting).await;
            if !fresh_start {
                for (room_id, update) in &response.rooms.join {
                    for event in &update.timeline.events {
                        match self.decrypted(room_id, event.raw()).await {
                            Ok(raw) => events.push((room_id.clone(), raw)),
                            // Read again (after a crash, or with a batch
                            // not fully taken), it may be kept already.
                            Err(pending) => {
                                let event = pending.event_id().unwrap_or_default();
                                if waiting.add(pending) {
                                    tracing::info!(room = %room_id, event = %event, "a Matrix event waits for its room key");
                                }
                            }
                        }
                    }
                }
            }
            let mut batch: Vec<Incoming> = Vec::new();
            for (room_id, raw) in &events {
                let room = self.client.get_room(room_id);
                if let Some(incoming) = self.incoming(room.as_ref(), room_id, raw).await
                    && !taken.contains(&incoming.received.event_id)
                    && !batch
                        .iter()
                        .any(|other| other.received.event_id == incoming.received.event_id)
                {
                    batch.push(incoming);
                }
            }
            let ids: Vec<String> = batch
                .iter()
                .map(|incoming| incoming.received.event_id.clone())
                .collect();
            let handled = if batch.is_empty() {
                Vec::new()
            } else {
                handle(batch).await
            };
            let all_taken = handled.iter().all(|h| *h == Handled::Done);
            let mut again = HashSet::new();
            for (id, handled) in ids.iter().zip(&handled) {
                if *handled == Handled::Done {
                    taken.insert(id);
                } else {
                    again.insert(id.clone());
                }
            }
            // An event decrypted late is not in the batch read again: it
            // stays kept until its handling is done.
            waiting.handled(&late, &again);
            if all_taken {
                // What waits for its keys is kept before the position
                // moves past it.
                if let Err(error) = waiting.save(&kept) {
                    tracing::warn!(error = %error, "cannot keep the Matrix events waiting for their room keys");
                    tokio::time::sleep(backoff).await;
                    continue;
                }
                if let Err(error) = write_replacing(&position, response.next_batch.as_bytes()) {
                    tracing::warn!(error = %error, "cannot save the Matrix sync position");
                }
                since = Some(response.next_batch);
            } else {
                tracing::warn!("some Matrix events were not recorded; reading them again");
                tokio::time::sleep(backoff).await;
            }
        }
    }

    /// The event, decrypted if it came encrypted; an encrypted one whose
    /// room key has not arrived yet is tried again after the next syncs
    /// ([`MatrixApi::decrypted_late`]).
    async fn decrypted(
        &self,
        room_id: &OwnedRoomId,
        raw: &Raw<AnySyncTimelineEvent>,
    ) -> Result<Raw<AnySyncTimelineEvent>, Undecrypted> {
        let encrypted =
            raw.get_field::<String>("type").ok().flatten().as_deref() == Some("m.room.encrypted");
        if !encrypted {
            return Ok(raw.clone());
        }
        let pending = Undecrypted {
            room: room_id.clone(),
            event: raw.clone().cast(),
            tries: 0,
        };
        self.try_decrypt(&pending).await.ok_or(pending)
    }

    async fn try_decrypt(&self, pending: &Undecrypted) -> Option<Raw<AnySyncTimelineEvent>> {
        let room = self.client.get_room(&pending.room)?;
        let decrypted = room.decrypt_event(&pending.event).await.ok()?;
        decrypted
            .encryption_info()
            .is_some()
            .then(|| decrypted.raw().clone())
    }

    /// The waiting events whose room keys arrived since, in the order they
    /// came, and their ids. They stay in `waiting` until handled
    /// ([`Waiting::handled`]); one still undecryptable after
    /// [`DECRYPT_TRIES`] syncs is given up (logged).
    async fn decrypted_late(
        &self,
        waiting: &mut Waiting,
    ) -> (
        Vec<(OwnedRoomId, Raw<AnySyncTimelineEvent>)>,
        HashSet<String>,
    ) {
        let mut ready = Vec::new();
        let mut late = HashSet::new();
        for pending in waiting.events() {
            if let Some(raw) = self.try_decrypt(pending).await {
                late.extend(pending.event_id());
                ready.push((pending.room.clone(), raw));
            }
        }
        for gone in waiting.tried(&late) {
            tracing::warn!(room = %gone.room, event = ?gone.event_id(), "a Matrix event could not be decrypted: its room key never arrived");
        }
        (ready, late)
    }

    /// An event as [`Incoming`], if it is something a person did.
    async fn incoming(
        &self,
        room: Option<&Room>,
        room_id: &RoomId,
        raw: &Raw<AnySyncTimelineEvent>,
    ) -> Option<Incoming> {
        let json: Value = serde_json::from_str(raw.json().get()).ok()?;
        let own_name = member_name(room, &self.user_id).await;
        let bot = Bot {
            user_id: self.user_id(),
            display_name: own_name.as_deref(),
        };
        let received = parse::event(&json, bot)?;
        let (direct, name) = match room {
            Some(room) => {
                let direct = room.is_direct().await.unwrap_or(false)
                    && room.direct_targets().iter().any(|target| {
                        target.as_user_id().map(|u| u.as_str()) == Some(received.sender.as_str())
                    });
                let name = match UserId::parse(received.sender.as_str()) {
                    Ok(sender) => member_name(Some(room), &sender).await,
                    Err(_) => None,
                };
                (direct, name)
            }
            None => (false, None),
        };
        Some(Incoming {
            room: room_id.to_string(),
            direct,
            name,
            received,
        })
    }
}

/// An encrypted event whose room key had not arrived when it did.
#[derive(Debug, Serialize, Deserialize)]
struct Undecrypted {
    room: OwnedRoomId,
    event: Raw<OriginalSyncRoomEncryptedEvent>,
    /// Syncs since, each of which tried it again.
    tries: u32,
}

impl Undecrypted {
    /// The event's id (every event from a sync has one).
    fn event_id(&self) -> Option<String> {
        self.event.get_field::<String>("event_id").ok().flatten()
    }

    /// Whether `other` is the same event.
    fn is(&self, other: &Undecrypted) -> bool {
        let id = self.event_id();
        self.room == other.room && id.is_some() && id == other.event_id()
    }
}

/// The encrypted events waiting for their room keys, in the order they
/// came. One whose key came stays until its handling is done: when the
/// batch it was handed over in is read again (part of it failed), it is
/// not in that batch, so it must be handed over again from here.
#[derive(Debug, Default)]
struct Waiting {
    events: Vec<Undecrypted>,
}

impl Waiting {
    /// What [`Waiting::save`] kept in `path`; nothing when there is no
    /// file (or it cannot be read, which is logged).
    fn load(path: &Path) -> Waiting {
        let Ok(bytes) = std::fs::read(path) else {
            return Waiting::default();
        };
        let events = serde_json::from_slice(&bytes).unwrap_or_else(|error| {
            tracing::warn!(file = %path.display(), error = %error, "cannot read the Matrix events kept for their room keys");
            Vec::new()
        });
        Waiting { events }
    }

    /// Keeps the events in `path`, so a crash does not lose them once the
    /// sync position has moved past them ([`write_replacing`]); none
    /// removes the file.
    fn save(&self, path: &Path) -> std::io::Result<()> {
        if self.events.is_empty() {
            return match std::fs::remove_file(path) {
                Err(error) if error.kind() != std::io::ErrorKind::NotFound => Err(error),
                _ => Ok(()),
            };
        }
        let json = serde_json::to_vec(&self.events).map_err(std::io::Error::other)?;
        write_replacing(path, &json)
    }

    /// Keeps `event`; `false` if it is kept already (a batch read again)
    /// or has no id (it could never be handled).
    fn add(&mut self, event: Undecrypted) -> bool {
        let new = event.event_id().is_some() && !self.events.iter().any(|kept| kept.is(&event));
        if new {
            self.events.push(event);
        }
        new
    }

    /// The events kept, oldest first.
    fn events(&self) -> &[Undecrypted] {
        &self.events
    }

    /// Counts one more try for each event not decrypted this time (`late`:
    /// the ids of those that were); returns those given up after
    /// [`DECRYPT_TRIES`], no longer kept.
    fn tried(&mut self, late: &HashSet<String>) -> Vec<Undecrypted> {
        let mut gone = Vec::new();
        for mut event in std::mem::take(&mut self.events) {
            let decrypted = event.event_id().is_some_and(|id| late.contains(&id));
            if decrypted {
                self.events.push(event);
            } else if event.tries + 1 >= DECRYPT_TRIES {
                gone.push(event);
            } else {
                event.tries += 1;
                self.events.push(event);
            }
        }
        gone
    }

    /// Lets go of the events decrypted this time (`late`) once handled: all
    /// but those whose handling is to be tried again (`again`).
    fn handled(&mut self, late: &HashSet<String>, again: &HashSet<String>) {
        self.events.retain(|event| {
            event
                .event_id()
                .is_none_or(|id| !late.contains(&id) || again.contains(&id))
        });
    }
}

/// Writes `bytes` whole to a file beside `path`, then renames it over
/// `path`: a crash leaves the old contents or the new, never a part.
fn write_replacing(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let partial = path.with_extension("partial");
    std::fs::write(&partial, bytes)?;
    std::fs::rename(&partial, path)
}

/// A member's display name in `room`, from the store (no request).
async fn member_name(room: Option<&Room>, user: &UserId) -> Option<String> {
    let member = room?.get_member_no_sync(user).await.ok().flatten()?;
    member.display_name().map(str::to_owned)
}

/// Who the bot is, as `askbridge check` reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Identity {
    /// The Matrix versions the homeserver speaks.
    pub versions: Vec<String>,
    /// The bot's device, when a token (given or saved) was checked; `None`
    /// when only a password is set and the first start logs in.
    pub device_id: Option<String>,
    /// The bot's display name, when it has one.
    pub display_name: Option<String>,
}

/// Asks the homeserver who the bot is, without opening the store (a
/// running daemon holds it) and without logging in (which would make a
/// device): its versions, the token's device and the bot's name.
pub async fn identify(login: &Login) -> Result<Identity, String> {
    let user_id = UserId::parse(login.user_id.as_str())
        .map_err(|error| format!("user_id {:?}: {error}", login.user_id))?;
    let base = login.homeserver.trim_end_matches('/');
    let http = matrix_sdk::reqwest::Client::new();
    let get = |path: String, token: Option<&str>| {
        let mut request = http.get(format!("{base}{path}"));
        if let Some(token) = token {
            request = request.bearer_auth(token);
        }
        async move {
            let response = request
                .send()
                .await
                .map_err(|error| format!("cannot reach {base}: {error}"))?;
            let status = response.status();
            let text = response.text().await.unwrap_or_default();
            let body: Value = serde_json::from_str(&text).unwrap_or_default();
            match status.is_success() {
                true => Ok(body),
                false => Err(format!(
                    "{status} {} {}",
                    body["errcode"].as_str().unwrap_or_default(),
                    body["error"].as_str().unwrap_or_default()
                )),
            }
        }
    };
    let versions = get("/_matrix/client/versions".to_owned(), None)
        .await
        .map_err(|error| format!("not a Matrix homeserver: {error}"))?;
    let versions = versions["versions"]
        .as_array()
        .map(|all| {
            all.iter()
                .filter_map(|v| v.as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default();
    let saved = std::fs::read_to_string(login.dir.join("session.json"))
        .ok()
        .and_then(|text| serde_json::from_str::<SavedSession>(&text).ok())
        .filter(|saved| saved.user_id == user_id.as_str());
    let token = login
        .access_token
        .clone()
        .or(saved.map(|saved| saved.access_token));
    let Some(token) = token else {
        return match login.password {
            Some(_) => Ok(Identity {
                versions,
                device_id: None,
                display_name: None,
            }),
            None => Err("neither MATRIX_ACCESS_TOKEN nor MATRIX_PASSWORD is set".to_owned()),
        };
    };
    let device_id = whoami(&login.homeserver, &token, &user_id)
        .await
        .map_err(|SetupError(reason)| reason)?;
    let profile = get(
        format!("/_matrix/client/v3/profile/{user_id}/displayname"),
        Some(&token),
    )
    .await
    .unwrap_or_default();
    Ok(Identity {
        versions,
        device_id: Some(device_id.to_string()),
        display_name: profile["displayname"].as_str().map(str::to_owned),
    })
}

/// Who invited the bot, from a stripped `m.room.member` invite event.
fn inviter_of(event: &str, bot: &str) -> Option<String> {
    let event: Value = serde_json::from_str(event).ok()?;
    let invites_bot = event["type"] == "m.room.member"
        && event["state_key"] == bot
        && event["content"]["membership"] == "invite";
    invites_bot
        .then(|| event["sender"].as_str().map(str::to_owned))
        .flatten()
}

/// The session to restore: the access token's (its device asked of the
/// homeserver), a saved one, or a new password login (then saved).
async fn session(login: &Login, user_id: &UserId) -> Result<MatrixSession, SetupError> {
    let saved_path = login.dir.join("session.json");
    if let Some(token) = &login.access_token {
        let device_id = whoami(&login.homeserver, token, user_id).await?;
        return Ok(matrix_session(user_id, device_id, token.clone()));
    }
    if let Ok(text) = std::fs::read_to_string(&saved_path) {
        let saved: SavedSession = serde_json::from_str(&text).map_err(|error| {
            SetupError(format!(
                "{} is unreadable ({error}); delete it to log in again",
                saved_path.display()
            ))
        })?;
        if saved.user_id == user_id.as_str() {
            return Ok(matrix_session(
                user_id,
                OwnedDeviceId::from(saved.device_id.as_str()),
                saved.access_token,
            ));
        }
    }
    let Some(password) = &login.password else {
        return Err(SetupError(
            "[matrix] needs MATRIX_ACCESS_TOKEN, or MATRIX_PASSWORD to log in once".to_owned(),
        ));
    };
    let client = Client::builder()
        .homeserver_url(&login.homeserver)
        .respect_login_well_known(false)
        .build()
        .await
        .map_err(|error| SetupError(format!("[matrix] cannot start the client: {error}")))?;
    let response = client
        .matrix_auth()
        .login_username(user_id, password)
        .initial_device_display_name("askbridge")
        .send()
        .await
        .map_err(|error| {
            SetupError(format!(
                "[matrix] the homeserver refused the login of {user_id}: {error}"
            ))
        })?;
    std::fs::create_dir_all(&login.dir)
        .map_err(|error| SetupError(format!("cannot create {}: {error}", login.dir.display())))?;
    let saved = SavedSession {
        user_id: user_id.to_string(),
        device_id: response.device_id.to_string(),
        access_token: response.access_token.clone(),
    };
    write_private(
        &saved_path,
        &serde_json::to_string(&saved).unwrap_or_default(),
    )?;
    Ok(matrix_session(
        user_id,
        response.device_id,
        response.access_token,
    ))
}

fn matrix_session(user_id: &UserId, device_id: OwnedDeviceId, token: String) -> MatrixSession {
    MatrixSession {
        meta: SessionMeta {
            user_id: user_id.to_owned(),
            device_id,
        },
        tokens: MatrixSessionTokens {
            access_token: token,
            refresh_token: None,
        },
    }
}

/// The device of an access token, and that it is the configured user's.
async fn whoami(
    homeserver: &str,
    token: &str,
    user_id: &UserId,
) -> Result<OwnedDeviceId, SetupError> {
    let url = format!(
        "{}/_matrix/client/v3/account/whoami",
        homeserver.trim_end_matches('/')
    );
    let response = matrix_sdk::reqwest::Client::new()
        .get(&url)
        .bearer_auth(token)
        .send()
        .await
        .map_err(|error| SetupError(format!("[matrix] cannot reach {homeserver}: {error}")))?;
    let status = response.status();
    let body: Value = response
        .text()
        .await
        .ok()
        .and_then(|text| serde_json::from_str(&text).ok())
        .unwrap_or_default();
    if !status.is_success() {
        return Err(SetupError(format!(
            "[matrix] the homeserver refused MATRIX_ACCESS_TOKEN: {} {}",
            body["errcode"].as_str().unwrap_or(status.as_str()),
            body["error"].as_str().unwrap_or_default()
        )));
    }
    if body["user_id"] != user_id.as_str() {
        return Err(SetupError(format!(
            "[matrix] MATRIX_ACCESS_TOKEN is {}'s, not {user_id}'s (user_id)",
            body["user_id"].as_str().unwrap_or("someone else")
        )));
    }
    match body["device_id"].as_str() {
        Some(device) => Ok(OwnedDeviceId::from(device)),
        None => Err(SetupError(
            "[matrix] MATRIX_ACCESS_TOKEN has no device (an appservice token?); use a user's token"
                .to_owned(),
        )),
    }
}

/// Refuses a store that is gone when its device was used before: the
/// device's encryption keys went with it.
fn check_store(store: &Path, marker: &Path, device: &OwnedDeviceId) -> Result<(), SetupError> {
    let used = std::fs::read_to_string(marker).ok();
    let store_there = store.join("matrix-sdk-crypto.sqlite3").exists();
    match used {
        Some(used) if used.trim() == device.as_str() && !store_there => Err(SetupError(format!(
            "[matrix] the encryption store of device {device} is gone from {} (its keys with it), \
             so encrypted rooms could not be read. Log the bot in as a new device: set a new \
             MATRIX_ACCESS_TOKEN, or delete {} and {} and set MATRIX_PASSWORD",
            store.display(),
            marker.display(),
            marker.with_file_name("session.json").display(),
        ))),
        _ => Ok(()),
    }
}

fn write_private(path: &Path, text: &str) -> Result<(), SetupError> {
    use std::io::Write;
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    options
        .open(path)
        .and_then(|mut file| file.write_all(text.as_bytes()))
        .map_err(|error| SetupError(format!("cannot write {}: {error}", path.display())))
}

/// A sync error that means the login no longer works.
fn refused_login(error: &matrix_sdk::Error) -> Option<SetupError> {
    use matrix_sdk::ruma::api::client::error::ErrorKind;
    match error.client_api_error_kind()? {
        ErrorKind::UnknownToken { .. } | ErrorKind::Forbidden { .. } => Some(SetupError(format!(
            "the homeserver no longer accepts the bot's login: {error}"
        ))),
        _ => None,
    }
}

/// Why a matrix-sdk call failed, as the core's [`PlatformFailure`].
pub fn classify(error: &matrix_sdk::Error) -> PlatformFailure {
    match error {
        matrix_sdk::Error::Http(http) => classify_http(http),
        other => PlatformFailure::Transient(format!("matrix client: {other}")),
    }
}

/// Why a request failed: `M_LIMIT_EXCEEDED` waits, a 5xx or the network
/// is passing, any other answer (`M_FORBIDDEN`, `M_NOT_FOUND`, …) is the
/// homeserver's refusal in its own words.
pub fn classify_http(error: &HttpError) -> PlatformFailure {
    use matrix_sdk::ruma::api::client::error::{ErrorBody, ErrorKind, RetryAfter};
    let Some(api) = error.as_client_api_error() else {
        return match error {
            HttpError::Reqwest(_) => {
                PlatformFailure::Transient(format!("cannot reach the homeserver: {error}"))
            }
            _ => PlatformFailure::Permanent(format!("homeserver: {error}")),
        };
    };
    let kind = match &api.body {
        ErrorBody::Standard { kind, .. } => Some(kind),
        _ => None,
    };
    let words = format!("homeserver: {api}");
    match kind {
        Some(ErrorKind::LimitExceeded { retry_after }) => {
            let wait = match retry_after {
                Some(RetryAfter::Delay(delay)) => delay.as_secs_f64().ceil() as u64,
                _ => 1,
            };
            PlatformFailure::RetryAfter(wait.max(1))
        }
        _ if api.status_code.is_server_error() => PlatformFailure::Transient(words),
        _ => PlatformFailure::Permanent(words),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn waiting(room: &str, event_id: &str, tries: u32) -> Undecrypted {
        let event = serde_json::json!({
            "type": "m.room.encrypted", "event_id": event_id, "sender": "@alice:hs",
            "origin_server_ts": 1, "content": {"algorithm": "m.megolm.v1.aes-sha2",
            "ciphertext": "AwgA", "session_id": "s", "sender_key": "k", "device_id": "D"}
        });
        Undecrypted {
            room: OwnedRoomId::try_from(room).expect("a room id"),
            event: Raw::new(&event).expect("raw").cast(),
            tries,
        }
    }

    fn ids(waiting: &Waiting) -> Vec<String> {
        waiting
            .events()
            .iter()
            .map(|event| event.event_id().expect("an id"))
            .collect()
    }

    fn set(ids: &[&str]) -> HashSet<String> {
        ids.iter().map(|id| (*id).to_owned()).collect()
    }

    #[test]
    fn events_waiting_for_their_keys_survive_a_restart() {
        let dir =
            std::env::temp_dir().join(format!("askbridge-undecrypted-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("a temp dir");
        let path = dir.join("undecrypted.json");
        assert!(Waiting::load(&path).events().is_empty(), "nothing kept yet");

        let mut kept = Waiting::default();
        assert!(kept.add(waiting("!a:hs", "$one", 3)));
        assert!(kept.add(waiting("!b:hs", "$two", 0)));
        kept.save(&path).expect("saved");
        assert!(!path.with_extension("partial").exists(), "renamed over");
        let loaded = Waiting::load(&path);
        assert_eq!(loaded.events().len(), 2);
        let (loaded, kept) = (loaded.events(), kept.events());
        assert!(loaded[0].is(&kept[0]) && loaded[1].is(&kept[1]));
        assert_eq!(loaded[0].tries, 3);
        assert!(!loaded[0].is(&kept[1]));
        assert!(!waiting("!b:hs", "$one", 0).is(&kept[0]), "another room");

        Waiting::default().save(&path).expect("emptied");
        assert!(!path.exists(), "an empty list leaves no file");
        Waiting::default().save(&path).expect("emptied again");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn an_event_read_again_is_kept_once() {
        let mut kept = Waiting::default();
        assert!(kept.add(waiting("!a:hs", "$one", 0)));
        assert!(!kept.add(waiting("!a:hs", "$one", 0)), "read again");
        assert!(kept.add(waiting("!a:hs", "$two", 0)));
        assert_eq!(ids(&kept), ["$one", "$two"]);
    }

    /// The regression: events decrypted late were taken out before they
    /// were handled, so when handling failed (the batch read again) they
    /// were gone until a restart.
    #[test]
    fn an_event_decrypted_late_is_kept_until_its_handling_is_done() {
        let mut kept = Waiting::default();
        kept.add(waiting("!a:hs", "$one", 0));
        kept.add(waiting("!a:hs", "$two", 0));
        kept.add(waiting("!a:hs", "$three", 0));

        // $one and $two decrypted; $one's handling fails.
        let late = set(&["$one", "$two"]);
        assert!(kept.tried(&late).is_empty());
        kept.handled(&late, &set(&["$one"]));
        assert_eq!(ids(&kept), ["$one", "$three"]);
        assert_eq!(kept.events()[0].tries, 0, "decrypted: not a try");
        assert_eq!(kept.events()[1].tries, 1);

        // Handed over again, and done.
        let late = set(&["$one"]);
        assert!(kept.tried(&late).is_empty());
        kept.handled(&late, &HashSet::new());
        assert_eq!(ids(&kept), ["$three"]);

        // What was not decrypted is not let go, whatever was handled.
        kept.handled(&HashSet::new(), &HashSet::new());
        assert_eq!(ids(&kept), ["$three"]);
    }

    #[test]
    fn an_event_whose_key_never_comes_is_given_up_after_its_tries() {
        let mut kept = Waiting::default();
        kept.add(waiting("!a:hs", "$one", DECRYPT_TRIES - 2));
        assert!(kept.tried(&HashSet::new()).is_empty());
        let gone = kept.tried(&HashSet::new());
        assert_eq!(gone.len(), 1);
        assert_eq!(gone[0].event_id().as_deref(), Some("$one"));
        assert!(kept.events().is_empty());
    }

    #[test]
    fn the_sync_position_is_replaced_whole() {
        let dir = std::env::temp_dir().join(format!("askbridge-position-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("a temp dir");
        let path = dir.join("sync-position");
        write_replacing(&path, b"s1_long_token").expect("written");
        write_replacing(&path, b"s2").expect("replaced");
        assert_eq!(std::fs::read_to_string(&path).expect("read"), "s2");
        assert!(!path.with_extension("partial").exists());
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn an_invite_names_who_sent_it() {
        let invite = r#"{"type":"m.room.member","state_key":"@bot:hs","sender":"@alice:hs","content":{"membership":"invite"}}"#;
        assert_eq!(inviter_of(invite, "@bot:hs").as_deref(), Some("@alice:hs"));
        let join = r#"{"type":"m.room.member","state_key":"@alice:hs","sender":"@alice:hs","content":{"membership":"join"}}"#;
        assert_eq!(inviter_of(join, "@bot:hs"), None);
    }

    #[test]
    fn a_store_that_a_device_used_and_lost_is_refused() {
        let dir = std::env::temp_dir().join(format!("askbridge-matrix-{}", std::process::id()));
        let store = dir.join("store");
        let marker = dir.join("device");
        std::fs::create_dir_all(&dir).expect("a temp dir");
        let device = OwnedDeviceId::from("DEV1");
        assert!(check_store(&store, &marker, &device).is_ok(), "first start");
        std::fs::write(&marker, "DEV1").expect("marker");
        let refused = check_store(&store, &marker, &device).expect_err("store gone");
        assert!(refused.0.contains("new device"), "{}", refused.0);
        let other = OwnedDeviceId::from("DEV2");
        assert!(check_store(&store, &marker, &other).is_ok(), "a new device");
        std::fs::create_dir_all(&store).expect("store");
        std::fs::write(store.join("matrix-sdk-crypto.sqlite3"), "").expect("db");
        assert!(check_store(&store, &marker, &device).is_ok(), "store there");
        let _ = std::fs::remove_dir_all(&dir);
    }
}

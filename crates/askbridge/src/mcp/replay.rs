//! The recent events of the streamable-HTTP sessions (2025-11-25 clients),
//! so a client whose stream dropped gets what it missed when it resumes
//! with `Last-Event-ID` — above all the tool's result, which may come
//! while the stream is down (rmcp's own cache forgets a request's events
//! once its result is sent).
//!
//! A resumed stream replays the stream's events after the one named, then
//! follows it live until its result (a request's stream) or until the
//! client goes (the session's common stream). Events are kept in memory,
//! per daemon, for [`KEEP_FOR`], at most [`KEEP_AT_MOST`] of them and
//! about [`KEEP_BYTES`] (sessions live in one process anyway).
//!
//! A stream resumes only in its own session. An event id is `e{n}-{secret}`:
//! a sequence number and 122 random bits, all of which must match. A
//! stream belongs to the session whose client was handed one of its
//! events ([`ReplayingSessions`] sees every event on its way out; the
//! first of each stream is its priming event), and a resume names its
//! session: an id of another session's stream is refused exactly as an
//! unknown one is ([`UnknownEvent`]), and rmcp answers both with an empty
//! event stream — the spec lets a server replay nothing, never another
//! stream's events.
//!
//! Only sessions keep events: [`ReplayingSessions`] shows the transport no
//! event store, so a 2026-07-28 request's stream is not kept, and closing
//! it cancels the request, as that revision says (`call` decides what
//! that does to the ask).

use std::collections::{HashMap, VecDeque};
use std::fmt;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use futures_util::{Stream, StreamExt};
use rmcp::model::ClientJsonRpcMessage;
use rmcp::model::ServerJsonRpcMessage;
use rmcp::transport::common::server_side_http::ServerSseMessage;
use rmcp::transport::streamable_http_server::session::local::{
    LocalSessionManager, LocalSessionManagerError, SessionError,
};
use rmcp::transport::streamable_http_server::session::{
    EventId, EventStore, EventStoreError, EventStream, RestoreOutcome, SessionId, SessionManager,
};
use tokio::sync::broadcast;
use tokio::time::Instant;
use tokio_stream::wrappers::BroadcastStream;

/// How long an event can be replayed.
pub const KEEP_FOR: Duration = Duration::from_secs(30 * 60);

/// How many events are kept at most, over all sessions.
pub const KEEP_AT_MOST: usize = 20_000;

/// How many bytes of events are kept at most, over all sessions, as
/// [`size_of`] estimates them. One event larger than this is kept alone,
/// until the next.
pub const KEEP_BYTES: usize = 32 * 1024 * 1024;

/// Live events buffered for resumed streams that read slowly.
const LIVE_BUFFER: usize = 256;

/// What every event id of ours starts with (rmcp's own priming ids are
/// bare numbers, which must not name one of ours).
const ID_PREFIX: &str = "e";

/// What keeping an event costs beyond its message, its id and its
/// stream's name: the bookkeeping around it, roughly.
const OVERHEAD_BYTES: usize = 128;

/// The store's limits.
#[derive(Debug, Clone, Copy)]
struct Limits {
    /// How long an event is kept.
    keep_for: Duration,
    /// How many events are kept at most.
    at_most: usize,
    /// How many bytes of events are kept at most.
    bytes: usize,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            keep_for: KEEP_FOR,
            at_most: KEEP_AT_MOST,
            bytes: KEEP_BYTES,
        }
    }
}

/// An event id of ours: `e{seq}-{secret}`, the secret as 32 hex digits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Id {
    seq: u64,
    secret: u128,
}

impl Id {
    /// The id `text` spells, if it is one of ours.
    fn parse(text: &str) -> Option<Id> {
        let (seq, secret) = text.trim().strip_prefix(ID_PREFIX)?.split_once('-')?;
        let digits = !seq.is_empty() && seq.bytes().all(|b| b.is_ascii_digit());
        let hex = secret.len() == 32 && secret.bytes().all(|b| b.is_ascii_hexdigit());
        if !digits || !hex {
            return None;
        }
        Some(Id {
            seq: seq.parse().ok()?,
            secret: u128::from_str_radix(secret, 16).ok()?,
        })
    }
}

impl fmt::Display for Id {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{ID_PREFIX}{}-{:032x}", self.seq, self.secret)
    }
}

/// Why a resume replays nothing. One answer for an id never given, one no
/// longer kept and one of another session's stream, so a refusal tells
/// nothing about other sessions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("the Last-Event-ID names no event kept for this session")]
pub struct UnknownEvent;

/// One event kept.
#[derive(Debug, Clone)]
struct Kept {
    id: Id,
    stream: Arc<str>,
    at: Instant,
    bytes: usize,
    event: ServerSseMessage,
}

/// A stream with events kept: how many, and the session it belongs to
/// once its client has been handed one of them.
#[derive(Debug, Default)]
struct Owner {
    kept: usize,
    session: Option<SessionId>,
}

/// What a resume replays: the stream's events after the one named, and
/// whether its result is among them (or was the one named).
#[derive(Debug)]
struct Replay {
    stream: Arc<str>,
    missed: Vec<ServerSseMessage>,
    ended: bool,
}

/// The events kept, oldest first, and whose streams they are on. Time is
/// an argument; nothing here waits or reads a clock.
#[derive(Debug)]
struct Log {
    limits: Limits,
    next: u64,
    events: VecDeque<Kept>,
    /// The estimated size of `events`.
    bytes: usize,
    /// Every stream with an event in `events`, and no other.
    streams: HashMap<Arc<str>, Owner>,
}

impl Log {
    fn new(limits: Limits) -> Log {
        Log {
            limits,
            next: 0,
            events: VecDeque::new(),
            bytes: 0,
            streams: HashMap::new(),
        }
    }

    /// Keeps `event` of `stream` under a new id with `secret`; drops what
    /// is past the limits, oldest first. Returns what was kept.
    fn keep(&mut self, stream: &str, event: &ServerSseMessage, secret: u128, now: Instant) -> Kept {
        let id = Id {
            seq: self.next,
            secret,
        };
        self.next += 1;
        let stream: Arc<str> = match self.streams.get_key_value(stream) {
            Some((name, _)) => Arc::clone(name),
            None => Arc::from(stream),
        };
        self.streams.entry(Arc::clone(&stream)).or_default().kept += 1;
        let mut event = event.clone();
        event.event_id = Some(id.to_string());
        let bytes = size_of(&stream, &event);
        let kept = Kept {
            id,
            stream,
            at: now,
            bytes,
            event,
        };
        self.bytes += bytes;
        self.events.push_back(kept.clone());
        let pushed_out = self.prune(now);
        if pushed_out > 0 && bytes > self.limits.bytes / 16 {
            tracing::warn!(
                bytes,
                pushed_out,
                "a large MCP event pushed recent events out of the replay store; resuming their streams replays nothing"
            );
        }
        kept
    }

    /// Drops the events older than the limit, then the oldest while there
    /// are too many or too many bytes — but not the newest. Returns how
    /// many were dropped before their time.
    fn prune(&mut self, now: Instant) -> usize {
        let mut pushed_out = 0;
        while let Some(oldest) = self.events.front() {
            let expired = now.saturating_duration_since(oldest.at) > self.limits.keep_for;
            let crowded = self.events.len() > 1
                && (self.events.len() > self.limits.at_most || self.bytes > self.limits.bytes);
            if !(expired || crowded) {
                break;
            }
            pushed_out += usize::from(!expired);
            self.drop_oldest();
        }
        pushed_out
    }

    fn drop_oldest(&mut self) {
        let Some(oldest) = self.events.pop_front() else {
            return;
        };
        self.bytes -= oldest.bytes;
        if let Some(owner) = self.streams.get_mut(&oldest.stream) {
            owner.kept -= 1;
            if owner.kept == 0 {
                self.streams.remove(&oldest.stream);
            }
        }
    }

    /// The event `text` names, if it is kept: its whole id must match.
    fn find(&self, text: &str) -> Option<(usize, &Kept)> {
        let id = Id::parse(text)?;
        let first = self.events.front()?.id.seq;
        let index = usize::try_from(id.seq.checked_sub(first)?).ok()?;
        let kept = self.events.get(index)?;
        (kept.id == id).then_some((index, kept))
    }

    /// Binds the stream of the event `text` names to `session`: its client
    /// was handed the event. A stream stays with its first session.
    fn bind(&mut self, text: &str, session: &SessionId) {
        let Some((_, kept)) = self.find(text) else {
            return;
        };
        let stream = Arc::clone(&kept.stream);
        if let Some(owner) = self.streams.get_mut(&stream)
            && owner.session.is_none()
        {
            owner.session = Some(session.clone());
        }
    }

    /// What resuming after the event `text` replays to `session`: only
    /// events of a stream of its own.
    fn replay(
        &mut self,
        session: &SessionId,
        text: &str,
        now: Instant,
    ) -> Result<Replay, UnknownEvent> {
        self.prune(now);
        let (index, seen) = self.find(text).ok_or(UnknownEvent)?;
        let owner = self
            .streams
            .get(&seen.stream)
            .and_then(|owner| owner.session.as_ref());
        if owner != Some(session) {
            if owner.is_some() {
                tracing::warn!(
                    "a Last-Event-ID named an event of another MCP session; refused as unknown"
                );
            }
            return Err(UnknownEvent);
        }
        let stream = Arc::clone(&seen.stream);
        let missed: Vec<ServerSseMessage> = self
            .events
            .iter()
            .skip(index + 1)
            .filter(|event| event.stream == stream)
            .map(|event| event.event.clone())
            .collect();
        let ended = ends_stream(&seen.event) || missed.iter().any(ends_stream);
        Ok(Replay {
            stream,
            missed,
            ended,
        })
    }
}

/// An estimate of what keeping `event` of `stream` costs, in bytes: its
/// message as JSON, its id, its stream's name and [`OVERHEAD_BYTES`].
fn size_of(stream: &str, event: &ServerSseMessage) -> usize {
    /// Counts what is written, keeping nothing.
    struct Count(usize);
    impl std::io::Write for Count {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0 += buf.len();
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut count = Count(0);
    if let Some(message) = event.message.as_deref() {
        // Writing to a counter fails only if the message cannot be JSON,
        // and then it is not sent either.
        let _ = serde_json::to_writer(&mut count, message);
    }
    let id = event.event_id.as_deref().map_or(0, str::len);
    count.0 + id + stream.len() + OVERHEAD_BYTES
}

/// The events of every session, oldest first.
#[derive(Debug)]
pub struct RecentEvents {
    log: Mutex<Log>,
    live: broadcast::Sender<Kept>,
}

impl Default for RecentEvents {
    fn default() -> RecentEvents {
        RecentEvents::with_limits(Limits::default())
    }
}

impl RecentEvents {
    fn with_limits(limits: Limits) -> RecentEvents {
        RecentEvents {
            log: Mutex::new(Log::new(limits)),
            live: broadcast::channel(LIVE_BUFFER).0,
        }
    }

    fn lock(&self) -> MutexGuard<'_, Log> {
        self.log.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Binds the stream of event `id` to `session`, whose client is being
    /// handed the event.
    fn bind(&self, id: &str, session: &SessionId) {
        self.lock().bind(id, session);
    }

    /// `session`'s stream after the event `last_event_id`: the events it
    /// missed, then, until the stream's result, the live ones.
    fn resume(
        &self,
        session: &SessionId,
        last_event_id: &str,
    ) -> Result<EventStream, UnknownEvent> {
        let mut log = self.lock();
        let Replay {
            stream,
            missed,
            ended,
        } = log.replay(session, last_event_id, Instant::now())?;
        let live = self.live.subscribe();
        drop(log);
        let replayed = futures_util::stream::iter(missed);
        if ended {
            return Ok(Box::pin(replayed));
        }
        // Follow the stream until its result; a reader that fell behind
        // stops here and resumes again from what it has.
        let live = BroadcastStream::new(live)
            .take_while(|received| std::future::ready(received.is_ok()))
            .filter_map(move |received| {
                let event = received.ok().filter(|event| event.stream == stream);
                std::future::ready(event.map(|event| event.event))
            })
            .scan(false, |done, event| {
                let next = (!*done).then(|| {
                    *done = ends_stream(&event);
                    event
                });
                std::future::ready(next)
            });
        Ok(Box::pin(replayed.chain(live)))
    }
}

/// Whether `event` ends its stream: a request's result or error.
fn ends_stream(event: &ServerSseMessage) -> bool {
    event.message.as_deref().is_some_and(|message| {
        matches!(
            message,
            ServerJsonRpcMessage::Response(_) | ServerJsonRpcMessage::Error(_)
        )
    })
}

#[async_trait::async_trait]
impl EventStore for RecentEvents {
    async fn store_event(
        &self,
        stream_id: &str,
        event: &ServerSseMessage,
    ) -> Result<EventId, EventStoreError> {
        let secret = uuid::Uuid::new_v4().as_u128();
        let mut log = self.lock();
        let kept = log.keep(stream_id, event, secret, Instant::now());
        let id = kept.id.to_string();
        // Sent under the lock, so a resume sees each event once: kept, or
        // live.
        let _ = self.live.send(kept);
        Ok(id)
    }

    /// Replays nothing: a resume must say whose it is
    /// ([`ReplayingSessions`] does).
    async fn replay_events_after(
        &self,
        _last_event_id: &str,
    ) -> Result<EventStream, EventStoreError> {
        Err(Box::new(UnknownEvent))
    }
}

/// rmcp's in-memory sessions with their events in [`RecentEvents`]: every
/// stream handed to a client binds its events to the client's session,
/// and a resume replays only the resuming session's own. The transport is
/// shown no event store (see the module's docs).
#[derive(Debug)]
pub struct ReplayingSessions {
    sessions: LocalSessionManager,
    events: Arc<RecentEvents>,
}

impl Default for ReplayingSessions {
    fn default() -> ReplayingSessions {
        let events = Arc::new(RecentEvents::default());
        let store: Arc<dyn EventStore> = events.clone();
        ReplayingSessions {
            sessions: LocalSessionManager::default().with_event_store(store),
            events,
        }
    }
}

impl ReplayingSessions {
    /// `stream`, binding each event's stream to `session` as the event goes
    /// out to its client.
    fn bound(
        &self,
        session: &SessionId,
        stream: impl Stream<Item = ServerSseMessage> + Send + Sync + 'static,
    ) -> impl Stream<Item = ServerSseMessage> + Send + Sync + 'static {
        let events = Arc::clone(&self.events);
        let session = session.clone();
        stream.inspect(move |event| {
            if let Some(id) = event.event_id.as_deref() {
                events.bind(id, &session);
            }
        })
    }
}

impl SessionManager for ReplayingSessions {
    type Error = LocalSessionManagerError;
    type Transport = <LocalSessionManager as SessionManager>::Transport;

    async fn create_session(&self) -> Result<(SessionId, Self::Transport), Self::Error> {
        self.sessions.create_session().await
    }

    async fn initialize_session(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<ServerJsonRpcMessage, Self::Error> {
        self.sessions.initialize_session(id, message).await
    }

    async fn has_session(&self, id: &SessionId) -> Result<bool, Self::Error> {
        self.sessions.has_session(id).await
    }

    async fn close_session(&self, id: &SessionId) -> Result<(), Self::Error> {
        self.sessions.close_session(id).await
    }

    async fn create_stream(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        let stream = self.sessions.create_stream(id, message).await?;
        Ok(self.bound(id, stream))
    }

    async fn accept_message(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<(), Self::Error> {
        self.sessions.accept_message(id, message).await
    }

    async fn create_standalone_stream(
        &self,
        id: &SessionId,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        let stream = self.sessions.create_standalone_stream(id).await?;
        Ok(self.bound(id, stream))
    }

    /// Replays `id`'s own stream after `last_event_id`; any other id, of
    /// whichever session or none, is an [`UnknownEvent`].
    async fn resume(
        &self,
        id: &SessionId,
        last_event_id: String,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        let stream = self
            .events
            .resume(id, &last_event_id)
            .map_err(|unknown| SessionError::EventStore(Box::new(unknown)))?;
        Ok(self.bound(id, stream))
    }

    async fn restore_session(
        &self,
        id: SessionId,
    ) -> Result<RestoreOutcome<Self::Transport>, Self::Error> {
        self.sessions.restore_session(id).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rmcp::model::{EmptyResult, JsonRpcResponse, JsonRpcVersion2_0, RequestId, ServerResult};

    fn result(id: i64) -> ServerSseMessage {
        ServerSseMessage::from_message(ServerJsonRpcMessage::Response(JsonRpcResponse {
            jsonrpc: JsonRpcVersion2_0,
            id: RequestId::Number(id),
            result: ServerResult::EmptyResult(EmptyResult {}),
        }))
    }

    fn priming() -> ServerSseMessage {
        ServerSseMessage::retry(Duration::from_secs(1))
    }

    fn session(name: &str) -> SessionId {
        SessionId::from(name)
    }

    /// Stores `event` on `stream` and hands it to `session`'s client, as
    /// [`ReplayingSessions`] does; returns its id.
    async fn sent(
        events: &RecentEvents,
        session: &SessionId,
        stream: &str,
        event: ServerSseMessage,
    ) -> String {
        let id = events.store_event(stream, &event).await.expect("kept");
        events.bind(&id, session);
        id
    }

    async fn ids(stream: EventStream) -> Vec<String> {
        stream
            .map(|event| event.event_id.unwrap_or_default())
            .collect()
            .await
    }

    #[tokio::test]
    async fn a_result_sent_while_the_stream_was_down_is_replayed() {
        let events = RecentEvents::default();
        let a = session("a");
        let first = sent(&events, &a, "s/1", priming()).await;
        sent(&events, &a, "s/2", priming()).await;
        let answer = events.store_event("s/1", &result(1)).await.expect("kept");
        let replayed = events.resume(&a, &first).expect("replays");
        assert_eq!(ids(replayed).await, std::slice::from_ref(&answer));
        let after_the_end = events.resume(&a, &answer).expect("replays");
        assert!(after_the_end.boxed().next().await.is_none());
    }

    #[tokio::test]
    async fn a_stream_resumed_before_its_result_follows_it_until_the_result() {
        let events = RecentEvents::default();
        let a = session("a");
        let first = sent(&events, &a, "s/1", priming()).await;
        let resumed = events.resume(&a, &first).expect("replays");
        events.store_event("s/2", &result(2)).await.expect("kept");
        let answer = events.store_event("s/1", &result(1)).await.expect("kept");
        events.store_event("s/1", &priming()).await.expect("kept");
        assert_eq!(ids(resumed).await, [answer]);
    }

    #[tokio::test]
    async fn an_unknown_event_id_is_refused() {
        let events = RecentEvents::default();
        let a = session("a");
        sent(&events, &a, "s/1", priming()).await;
        // rmcp's own priming id, and ids of nobody.
        for unknown in [
            "0",
            "e0",
            "e7",
            "s/1:0",
            "",
            "e0-",
            "e1-00000000000000000000000000000000",
        ] {
            assert_eq!(
                events.resume(&a, unknown).err(),
                Some(UnknownEvent),
                "{unknown:?}"
            );
        }
    }

    #[tokio::test]
    async fn another_sessions_event_id_is_refused_as_unknown() {
        let events = RecentEvents::default();
        let (a, b) = (session("a"), session("b"));
        let first = sent(&events, &a, "s/1", priming()).await;
        events.store_event("s/1", &result(1)).await.expect("kept");
        assert_eq!(events.resume(&b, &first).err(), Some(UnknownEvent));
        // Its own session's resume still replays, and B's hand-over of the
        // same id later does not make the stream B's.
        events.bind(&first, &b);
        assert_eq!(events.resume(&b, &first).err(), Some(UnknownEvent));
        assert!(events.resume(&a, &first).is_ok());
        // Nor is the common stream named after a session replayed to
        // another one.
        let common = sent(&events, &a, "a:common", priming()).await;
        assert_eq!(events.resume(&b, &common).err(), Some(UnknownEvent));
    }

    #[tokio::test]
    async fn a_guessed_event_id_is_refused() {
        let events = RecentEvents::default();
        let a = session("a");
        let first = sent(&events, &a, "s/1", priming()).await;
        events.store_event("s/1", &result(1)).await.expect("kept");
        let real = Id::parse(&first).expect("one of ours");
        // The right number with another secret, even by the stream's own
        // session; and the bare sequence numbers ids once were.
        let guessed = Id {
            seq: real.seq,
            secret: real.secret ^ 1,
        };
        for guess in [guessed.to_string(), format!("e{}", real.seq)] {
            assert_eq!(
                events.resume(&a, &guess).err(),
                Some(UnknownEvent),
                "{guess}"
            );
        }
        assert!(events.resume(&a, &first).is_ok());
    }

    #[tokio::test]
    async fn a_stream_no_client_was_handed_cannot_be_resumed() {
        let events = RecentEvents::default();
        let a = session("a");
        let id = events.store_event("s/1", &priming()).await.expect("kept");
        events.store_event("s/1", &result(1)).await.expect("kept");
        assert_eq!(events.resume(&a, &id).err(), Some(UnknownEvent));
    }

    /// A log of at most `bytes` bytes (and many events, for long).
    fn log_of(bytes: usize) -> Log {
        Log::new(Limits {
            keep_for: Duration::from_secs(60),
            at_most: 1_000,
            bytes,
        })
    }

    fn kept_seqs(log: &Log) -> Vec<u64> {
        log.events.iter().map(|kept| kept.id.seq).collect()
    }

    #[test]
    fn the_byte_cap_drops_the_oldest_events() {
        let now = Instant::now();
        let one = size_of(
            "s/1",
            &Log::new(Limits::default())
                .keep("s/1", &result(1), 0, now)
                .event,
        );
        let mut log = log_of(3 * one);
        for secret in 0..5 {
            log.keep("s/1", &result(1), secret, now);
        }
        assert_eq!(kept_seqs(&log), [2, 3, 4]);
        assert_eq!(log.bytes, 3 * one);
        assert!(log.find(&Id { seq: 1, secret: 1 }.to_string()).is_none());
    }

    #[test]
    fn an_event_larger_than_the_cap_is_kept_alone_until_the_next() {
        let now = Instant::now();
        let mut log = log_of(400);
        log.keep("s/1", &priming(), 0, now);
        log.keep("s/2", &priming(), 1, now);
        let huge =
            ServerSseMessage::from_message(ServerJsonRpcMessage::Response(JsonRpcResponse {
                jsonrpc: JsonRpcVersion2_0,
                id: RequestId::String("x".repeat(1_000).into()),
                result: ServerResult::EmptyResult(EmptyResult {}),
            }));
        log.keep("s/3", &huge, 2, now);
        assert_eq!(kept_seqs(&log), [2]);
        log.keep("s/4", &priming(), 3, now);
        assert_eq!(kept_seqs(&log), [3]);
        assert!(log.bytes <= 400);
    }

    #[test]
    fn old_events_are_dropped_and_the_count_is_capped() {
        let start = Instant::now();
        let mut log = Log::new(Limits {
            keep_for: Duration::from_secs(60),
            at_most: 3,
            bytes: usize::MAX,
        });
        for secret in 0..4 {
            log.keep("s/1", &priming(), secret, start);
        }
        assert_eq!(kept_seqs(&log), [1, 2, 3]);
        log.keep("s/2", &priming(), 4, start + Duration::from_secs(61));
        assert_eq!(kept_seqs(&log), [4]);
    }

    #[test]
    fn a_stream_is_forgotten_with_its_last_event() {
        let now = Instant::now();
        let mut log = Log::new(Limits {
            keep_for: Duration::from_secs(60),
            at_most: 2,
            bytes: usize::MAX,
        });
        let a = session("a");
        for (secret, stream) in (0..).zip(["s/1", "s/1", "s/2", "s/3"]) {
            let kept = log.keep(stream, &priming(), secret, now);
            log.bind(&kept.id.to_string(), &a);
        }
        let mut streams: Vec<&str> = log.streams.keys().map(|name| &**name).collect();
        streams.sort_unstable();
        assert_eq!(streams, ["s/2", "s/3"]);
        assert!(log.streams.values().all(|owner| owner.kept == 1));
    }
}

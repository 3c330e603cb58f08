//! The recent events of the streamable-HTTP sessions (2025-11-25 clients),
//! so a client whose stream dropped gets what it missed when it resumes
//! with `Last-Event-ID` — above all the tool's result, which may come
//! while the stream is down (rmcp's own cache forgets a request's events
//! once its result is sent).
//!
//! A resumed stream replays the stream's events after the one named, then
//! follows it live until its result (a request's stream) or until the
//! client goes (the session's common stream). Events are kept in memory,
//! per daemon, for [`KEEP_FOR`] and at most [`KEEP_AT_MOST`] of them:
//! sessions live in one process anyway.
//!
//! Only sessions keep events: [`ReplayingSessions`] shows the transport no
//! event store, so a 2026-07-28 request's stream is not kept, and closing
//! it cancels the request, as that revision says (`call` decides what
//! that does to the ask).

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use futures_util::StreamExt;
use rmcp::model::ClientJsonRpcMessage;
use rmcp::model::ServerJsonRpcMessage;
use rmcp::transport::common::server_side_http::ServerSseMessage;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
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

/// Live events buffered for resumed streams that read slowly.
const LIVE_BUFFER: usize = 256;

/// What every event id of ours starts with (rmcp's own priming ids are
/// bare numbers, which must not name one of ours).
const ID_PREFIX: &str = "e";

/// One event kept.
#[derive(Debug, Clone)]
struct Kept {
    id: u64,
    stream: String,
    at: Instant,
    event: ServerSseMessage,
}

/// The events of every session, oldest first.
#[derive(Debug)]
pub struct RecentEvents {
    log: Mutex<Log>,
    live: broadcast::Sender<Kept>,
}

/// The events kept, and the next event's id.
#[derive(Debug, Default)]
struct Log {
    next: u64,
    events: VecDeque<Kept>,
}

impl Default for RecentEvents {
    fn default() -> RecentEvents {
        RecentEvents {
            log: Mutex::default(),
            live: broadcast::channel(LIVE_BUFFER).0,
        }
    }
}

impl RecentEvents {
    fn lock(&self) -> std::sync::MutexGuard<'_, Log> {
        self.log.lock().unwrap_or_else(PoisonError::into_inner)
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
        let now = Instant::now();
        let mut kept = self.lock();
        let id = kept.next;
        kept.next += 1;
        let mut event = event.clone();
        event.event_id = Some(format!("{ID_PREFIX}{id}"));
        let entry = Kept {
            id,
            stream: stream_id.to_owned(),
            at: now,
            event,
        };
        kept.events.push_back(entry.clone());
        while kept.events.len() > KEEP_AT_MOST
            || kept
                .events
                .front()
                .is_some_and(|oldest| now.duration_since(oldest.at) > KEEP_FOR)
        {
            kept.events.pop_front();
        }
        // Sent under the lock, so a resume sees each event once: kept, or
        // live.
        let _ = self.live.send(entry);
        Ok(format!("{ID_PREFIX}{id}"))
    }

    async fn replay_events_after(
        &self,
        last_event_id: &str,
    ) -> Result<EventStream, EventStoreError> {
        let last: u64 = last_event_id
            .trim()
            .strip_prefix(ID_PREFIX)
            .and_then(|number| number.parse().ok())
            .ok_or_else(|| format!("Last-Event-ID {last_event_id:?} is not one of ours"))?;
        let kept = self.lock();
        let seen = kept
            .events
            .iter()
            .find(|event| event.id == last)
            .ok_or_else(|| format!("event {last} is no longer kept (or never was)"))?;
        let stream = seen.stream.clone();
        let missed: Vec<ServerSseMessage> = kept
            .events
            .iter()
            .filter(|event| event.id > last && event.stream == stream)
            .map(|event| event.event.clone())
            .collect();
        let ended = ends_stream(&seen.event) || missed.iter().any(ends_stream);
        let live = self.live.subscribe();
        drop(kept);
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

/// rmcp's in-memory sessions with their events in [`RecentEvents`],
/// showing the transport no event store (see the module's docs).
#[derive(Debug)]
pub struct ReplayingSessions(LocalSessionManager);

impl Default for ReplayingSessions {
    fn default() -> ReplayingSessions {
        ReplayingSessions(
            LocalSessionManager::default().with_event_store(Arc::new(RecentEvents::default())),
        )
    }
}

impl SessionManager for ReplayingSessions {
    type Error = <LocalSessionManager as SessionManager>::Error;
    type Transport = <LocalSessionManager as SessionManager>::Transport;

    async fn create_session(&self) -> Result<(SessionId, Self::Transport), Self::Error> {
        self.0.create_session().await
    }

    async fn initialize_session(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<ServerJsonRpcMessage, Self::Error> {
        self.0.initialize_session(id, message).await
    }

    async fn has_session(&self, id: &SessionId) -> Result<bool, Self::Error> {
        self.0.has_session(id).await
    }

    async fn close_session(&self, id: &SessionId) -> Result<(), Self::Error> {
        self.0.close_session(id).await
    }

    async fn create_stream(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<
        impl futures_util::Stream<Item = ServerSseMessage> + Send + Sync + 'static,
        Self::Error,
    > {
        self.0.create_stream(id, message).await
    }

    async fn accept_message(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<(), Self::Error> {
        self.0.accept_message(id, message).await
    }

    async fn create_standalone_stream(
        &self,
        id: &SessionId,
    ) -> Result<
        impl futures_util::Stream<Item = ServerSseMessage> + Send + Sync + 'static,
        Self::Error,
    > {
        self.0.create_standalone_stream(id).await
    }

    async fn resume(
        &self,
        id: &SessionId,
        last_event_id: String,
    ) -> Result<
        impl futures_util::Stream<Item = ServerSseMessage> + Send + Sync + 'static,
        Self::Error,
    > {
        self.0.resume(id, last_event_id).await
    }

    async fn restore_session(
        &self,
        id: SessionId,
    ) -> Result<RestoreOutcome<Self::Transport>, Self::Error> {
        self.0.restore_session(id).await
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

    async fn ids(stream: EventStream) -> Vec<String> {
        stream
            .map(|event| event.event_id.unwrap_or_default())
            .collect()
            .await
    }

    #[tokio::test]
    async fn a_result_sent_while_the_stream_was_down_is_replayed() {
        let events = RecentEvents::default();
        let first = events.store_event("s/1", &priming()).await.expect("kept");
        events.store_event("s/2", &priming()).await.expect("kept");
        let answer = events.store_event("s/1", &result(1)).await.expect("kept");
        let replayed = events.replay_events_after(&first).await.expect("replays");
        assert_eq!(ids(replayed).await, std::slice::from_ref(&answer));
        let after_the_end = events.replay_events_after(&answer).await.expect("replays");
        assert!(after_the_end.boxed().next().await.is_none());
    }

    #[tokio::test]
    async fn a_stream_resumed_before_its_result_follows_it_until_the_result() {
        let events = RecentEvents::default();
        let first = events.store_event("s/1", &priming()).await.expect("kept");
        let resumed = events.replay_events_after(&first).await.expect("replays");
        events.store_event("s/2", &result(2)).await.expect("kept");
        let answer = events.store_event("s/1", &result(1)).await.expect("kept");
        events.store_event("s/1", &priming()).await.expect("kept");
        assert_eq!(ids(resumed).await, [answer]);
    }

    #[tokio::test]
    async fn an_unknown_event_id_is_an_error() {
        let events = RecentEvents::default();
        events.store_event("s/1", &priming()).await.expect("kept");
        // rmcp's own priming id, and ids of nobody.
        assert!(events.replay_events_after("0").await.is_err());
        assert!(events.replay_events_after("e7").await.is_err());
        assert!(events.replay_events_after("s/1:0").await.is_err());
    }
}

//! The gateway: WebSocket sessions with HELLO, IDENTIFY → READY, heartbeats,
//! RESUME with replay, INVALID_SESSION, and Discord's close codes.
//!
//! Every dispatch of a session is kept in its log with its sequence number;
//! a connection sends what the client has not had yet. RESUME points a new
//! connection at an existing session and the client's last sequence number,
//! so dispatches made while it was disconnected are replayed, then RESUMED.

use std::collections::HashMap;
use std::pin::pin;
use std::sync::Arc;

use axum::extract::ws::{CloseFrame, Message, WebSocket};
use serde_json::{Value, json};

use super::model::GatewayStats;
use super::server::Inner;
use super::util::{str_field, u64_field};

/// `GUILD_MESSAGES` intent: MESSAGE_CREATE in guild channels and threads.
pub(crate) const GUILD_MESSAGES: u64 = 1 << 9;
/// `DIRECT_MESSAGES` intent: MESSAGE_CREATE in DMs.
pub(crate) const DIRECT_MESSAGES: u64 = 1 << 12;
/// `MESSAGE_CONTENT` privileged intent.
pub(crate) const MESSAGE_CONTENT: u64 = 1 << 15;
/// The privileged intents: GUILD_MEMBERS, GUILD_PRESENCES, MESSAGE_CONTENT.
pub(crate) const PRIVILEGED: u64 = (1 << 1) | (1 << 8) | MESSAGE_CONTENT;
/// Intent bits beyond these are invalid (close code 4013).
const VALID_INTENTS: u64 = (1 << 26) - 1;
/// The API version in READY.
const API_VERSION: u64 = 10;

/// Gateway opcodes.
mod op {
    pub(super) const DISPATCH: u64 = 0;
    pub(super) const HEARTBEAT: u64 = 1;
    pub(super) const IDENTIFY: u64 = 2;
    pub(super) const PRESENCE_UPDATE: u64 = 3;
    pub(super) const VOICE_STATE_UPDATE: u64 = 4;
    pub(super) const RESUME: u64 = 6;
    pub(super) const REQUEST_GUILD_MEMBERS: u64 = 8;
    pub(super) const INVALID_SESSION: u64 = 9;
    pub(super) const HELLO: u64 = 10;
    pub(super) const HEARTBEAT_ACK: u64 = 11;
    pub(super) const REQUEST_SOUNDBOARD_SOUNDS: u64 = 31;
}

/// Close codes with Discord's reasons.
mod close {
    pub(super) const UNKNOWN_OPCODE: (u16, &str) = (4001, "Unknown opcode.");
    pub(super) const DECODE_ERROR: (u16, &str) = (4002, "Error while decoding payload.");
    pub(super) const NOT_AUTHENTICATED: (u16, &str) = (4003, "Not authenticated.");
    pub(super) const AUTHENTICATION_FAILED: (u16, &str) = (4004, "Authentication failed.");
    pub(super) const ALREADY_AUTHENTICATED: (u16, &str) = (4005, "Already authenticated.");
    pub(super) const INVALID_INTENTS: (u16, &str) = (4013, "Invalid intent(s).");
    pub(super) const DISALLOWED_INTENTS: (u16, &str) = (4014, "Disallowed intent(s).");
}

/// Something to dispatch, rendered per session (intents decide whether it
/// is sent and whether message content is kept).
#[derive(Debug, Clone)]
pub(crate) enum Pending {
    /// MESSAGE_CREATE for a stored message.
    MessageCreate(u64),
    /// INTERACTION_CREATE with this body.
    Interaction(Value),
    /// Any event, sent as is.
    Raw(String, Value),
}

/// An accepted IDENTIFY, before its session exists.
#[derive(Debug, Clone)]
pub(crate) struct Identify {
    pub(crate) conn: u64,
    pub(crate) intents: u64,
    pub(crate) shard: Option<Value>,
}

/// What READY says besides the session: the bot user, the application,
/// where to resume.
#[derive(Debug, Clone)]
pub(crate) struct ReadyInfo {
    pub(crate) user: Value,
    pub(crate) application: Value,
    pub(crate) resume_gateway_url: String,
}

#[derive(Debug)]
struct Frame {
    seq: u64,
    name: String,
    text: String,
}

#[derive(Debug)]
struct Session {
    intents: u64,
    seq: u64,
    log: Vec<Frame>,
    conn: Option<u64>,
}

#[derive(Debug, Default)]
struct Conn {
    session: Option<String>,
    /// The last sequence number sent on this connection.
    sent: u64,
    /// Non-dispatch payloads to send (HELLO, heartbeat ACKs, op 9).
    outbox: Vec<String>,
    /// A close frame to send, then end.
    close: Option<(u16, String)>,
    /// End abruptly: drop the socket without a close frame.
    drop: bool,
    identified: bool,
}

/// What a connection task should do next.
#[derive(Debug, Default)]
pub(crate) struct Output {
    pub(crate) frames: Vec<String>,
    pub(crate) close: Option<(u16, String)>,
    /// Drop the socket without a close frame and end.
    pub(crate) drop: bool,
}

impl Output {
    fn changed(&self) -> bool {
        !self.frames.is_empty() || self.close.is_some() || self.drop
    }
}

/// All sessions and connections.
#[derive(Debug)]
pub(crate) struct GatewayState {
    pub(crate) heartbeat_interval_ms: u64,
    /// Privileged intents the application is not allowed (4014 on IDENTIFY).
    pub(crate) disallowed: u64,
    /// Dispatches made before any session existed; the first session gets
    /// them after READY.
    pub(crate) backlog: Vec<Pending>,
    pub(crate) stats: GatewayStats,
    sessions: HashMap<String, Session>,
    current: Option<String>,
    conns: HashMap<u64, Conn>,
    next_conn: u64,
    next_session: u64,
}

fn payload(op: u64, d: Value) -> String {
    json!({ "op": op, "d": d, "s": null, "t": null }).to_string()
}

impl GatewayState {
    pub(crate) fn new(heartbeat_interval_ms: u64) -> Self {
        GatewayState {
            heartbeat_interval_ms,
            disallowed: 0,
            backlog: Vec::new(),
            stats: GatewayStats::default(),
            sessions: HashMap::new(),
            current: None,
            conns: HashMap::new(),
            next_conn: 1,
            next_session: 1,
        }
    }

    /// A new connection: HELLO goes out first.
    pub(crate) fn open(&mut self) -> u64 {
        let id = self.next_conn;
        self.next_conn += 1;
        let hello = payload(
            op::HELLO,
            json!({ "heartbeat_interval": self.heartbeat_interval_ms }),
        );
        self.conns.insert(
            id,
            Conn {
                outbox: vec![hello],
                ..Conn::default()
            },
        );
        self.stats.connections += 1;
        id
    }

    /// The connection ended (the client closed it, or sending failed).
    /// Closing with 1000 or 1001 ends its session, as on Discord.
    pub(crate) fn gone(&mut self, conn: u64, client_close: Option<u16>) {
        let Some(state) = self.conns.remove(&conn) else {
            return;
        };
        let Some(session_id) = state.session else {
            return;
        };
        if matches!(client_close, Some(1000 | 1001)) {
            self.sessions.remove(&session_id);
            if self.current.as_deref() == Some(session_id.as_str()) {
                self.current = None;
            }
        } else if let Some(session) = self.sessions.get_mut(&session_id)
            && session.conn == Some(conn)
        {
            session.conn = None;
        }
    }

    /// Drops every connection without a close frame; their sessions stay
    /// resumable.
    pub(crate) fn drop_all(&mut self) {
        for (id, conn) in &mut self.conns {
            if conn.drop {
                continue;
            }
            conn.drop = true;
            self.stats.dropped += 1;
            if let Some(session) = conn
                .session
                .as_ref()
                .and_then(|session| self.sessions.get_mut(session))
                && session.conn == Some(*id)
            {
                session.conn = None;
            }
        }
    }

    /// The intents of the session new dispatches go to, if there is one.
    pub(crate) fn current_intents(&self) -> Option<u64> {
        let current = self.current.as_ref()?;
        self.sessions.get(current).map(|session| session.intents)
    }

    /// The id of the current session.
    pub(crate) fn current_session(&self) -> Option<&str> {
        self.current.as_deref()
    }

    /// Whether the current session has a connection that sent its whole
    /// log.
    pub(crate) fn delivered(&self) -> bool {
        let Some(session) = self.current.as_ref().and_then(|id| self.sessions.get(id)) else {
            return false;
        };
        session
            .conn
            .and_then(|conn| self.conns.get(&conn))
            .is_some_and(|conn| conn.sent >= session.seq)
    }

    /// Appends a dispatch to the current session; returns its sequence
    /// number.
    pub(crate) fn push(&mut self, name: &str, data: Value) -> Option<u64> {
        let current = self.current.clone()?;
        let session = self.sessions.get_mut(&current)?;
        Some(Self::append(session, name, data))
    }

    fn append(session: &mut Session, name: &str, data: Value) -> u64 {
        session.seq += 1;
        let seq = session.seq;
        let text = json!({ "op": op::DISPATCH, "s": seq, "t": name, "d": data }).to_string();
        session.log.push(Frame {
            seq,
            name: name.to_owned(),
            text,
        });
        seq
    }

    /// Handles a payload from the client. An acceptable IDENTIFY is returned
    /// for the caller to start the session (it renders the backlog).
    pub(crate) fn receive(&mut self, conn: u64, text: &str, token: &str) -> Option<Identify> {
        let state = self.conns.get_mut(&conn)?;
        let Ok(message) = serde_json::from_str::<Value>(text) else {
            state.close = Some(owned(close::DECODE_ERROR));
            return None;
        };
        let data = message.get("d").cloned().unwrap_or(Value::Null);
        match u64_field(&message, "op") {
            Some(op::HEARTBEAT) => {
                self.stats.heartbeats += 1;
                state
                    .outbox
                    .push(json!({ "op": op::HEARTBEAT_ACK }).to_string());
                None
            }
            Some(op::IDENTIFY) => {
                self.stats.identifies += 1;
                let intents = u64_field(&data, "intents").unwrap_or(0);
                self.stats.last_intents = Some(intents);
                if state.identified || state.session.is_some() {
                    state.close = Some(owned(close::ALREADY_AUTHENTICATED));
                    return None;
                }
                if !token_matches(str_field(&data, "token"), token) {
                    state.close = Some(owned(close::AUTHENTICATION_FAILED));
                    return None;
                }
                if intents & !VALID_INTENTS != 0 {
                    state.close = Some(owned(close::INVALID_INTENTS));
                    return None;
                }
                if intents & PRIVILEGED & self.disallowed != 0 {
                    state.close = Some(owned(close::DISALLOWED_INTENTS));
                    return None;
                }
                state.identified = true;
                Some(Identify {
                    conn,
                    intents,
                    shard: data.get("shard").cloned(),
                })
            }
            Some(op::RESUME) => {
                self.stats.resume_attempts += 1;
                self.resume(conn, &data, token);
                None
            }
            Some(
                op::PRESENCE_UPDATE
                | op::VOICE_STATE_UPDATE
                | op::REQUEST_GUILD_MEMBERS
                | op::REQUEST_SOUNDBOARD_SOUNDS,
            ) => {
                if state.session.is_none() {
                    state.close = Some(owned(close::NOT_AUTHENTICATED));
                }
                None
            }
            _ => {
                state.close = Some(owned(close::UNKNOWN_OPCODE));
                None
            }
        }
    }

    fn resume(&mut self, conn: u64, data: &Value, token: &str) {
        let session_id = str_field(data, "session_id").unwrap_or_default().to_owned();
        let seq = u64_field(data, "seq").unwrap_or(0);
        let known = self.sessions.get(&session_id).is_some_and(|session| {
            token_matches(str_field(data, "token"), token) && seq <= session.seq
        });
        if !known {
            self.stats.invalid_sessions += 1;
            if let Some(state) = self.conns.get_mut(&conn) {
                state
                    .outbox
                    .push(payload(op::INVALID_SESSION, json!(false)));
            }
            return;
        }
        let Some(session) = self.sessions.get_mut(&session_id) else {
            return;
        };
        if let Some(old) = session.conn.replace(conn)
            && old != conn
            && let Some(old) = self.conns.get_mut(&old)
        {
            old.drop = true;
            old.session = None;
        }
        Self::append(session, "RESUMED", json!({}));
        if let Some(state) = self.conns.get_mut(&conn) {
            state.session = Some(session_id);
            state.sent = seq;
            state.identified = true;
        }
    }

    /// Starts the session of an accepted IDENTIFY: READY (sequence 1), then
    /// `backlog` (already rendered for its intents).
    pub(crate) fn start_session(
        &mut self,
        identify: Identify,
        ready: ReadyInfo,
        backlog: Vec<(String, Value)>,
    ) -> String {
        let id = format!("{:032x}", 0x5e55_1000_u64 * 0x1_0000 + self.next_session);
        self.next_session += 1;
        let mut ready_data = json!({
            "v": API_VERSION,
            "user": ready.user,
            "guilds": [],
            "session_id": id,
            "resume_gateway_url": ready.resume_gateway_url,
            "application": ready.application,
            "session_type": "normal",
            "private_channels": [],
            "presences": [],
            "relationships": [],
            "guild_join_requests": [],
            "geo_ordered_rtc_regions": ["us-west", "us-east"],
            "user_settings": {},
            "auth": {},
        });
        if let (Some(shard), Value::Object(object)) = (identify.shard, &mut ready_data) {
            object.insert("shard".into(), shard);
        }
        let mut session = Session {
            intents: identify.intents,
            seq: 0,
            log: Vec::new(),
            conn: Some(identify.conn),
        };
        Self::append(&mut session, "READY", ready_data);
        for (name, data) in backlog {
            Self::append(&mut session, &name, data);
        }
        self.sessions.insert(id.clone(), session);
        self.current = Some(id.clone());
        if let Some(state) = self.conns.get_mut(&identify.conn) {
            state.session = Some(id.clone());
            state.sent = 0;
        }
        id
    }

    /// What connection `conn` should send now; marks it sent.
    pub(crate) fn output(&mut self, conn: u64) -> Output {
        let Some(state) = self.conns.get_mut(&conn) else {
            return Output {
                drop: true,
                ..Output::default()
            };
        };
        if state.drop {
            self.conns.remove(&conn);
            return Output {
                drop: true,
                ..Output::default()
            };
        }
        let mut out = Output {
            frames: std::mem::take(&mut state.outbox),
            ..Output::default()
        };
        if let Some(session) = state
            .session
            .as_ref()
            .and_then(|session| self.sessions.get(session))
        {
            let already = state.sent;
            for frame in session.log.iter().filter(|frame| frame.seq > already) {
                out.frames.push(frame.text.clone());
                state.sent = frame.seq;
                self.stats.dispatches_sent += 1;
                match frame.name.as_str() {
                    "READY" => self.stats.ready += 1,
                    "RESUMED" => self.stats.resumed += 1,
                    _ => {}
                }
            }
        }
        if let Some(close) = state.close.take() {
            self.stats.closes.push(close.clone());
            out.close = Some(close);
            self.gone(conn, None);
        }
        out
    }
}

fn owned((code, reason): (u16, &str)) -> (u16, String) {
    (code, reason.to_owned())
}

/// Whether an IDENTIFY/RESUME token is the bot's (with or without the
/// `Bot ` prefix serenity adds).
fn token_matches(sent: Option<&str>, token: &str) -> bool {
    sent.is_some_and(|sent| sent.strip_prefix("Bot ").unwrap_or(sent) == token)
}

/// Serves one gateway WebSocket until it closes, the fake drops it, or the
/// fake shuts down.
pub(crate) async fn serve(inner: Arc<Inner>, mut socket: WebSocket) {
    let conn = inner.mutate(|state| state.gateway.open());
    loop {
        let mut changed = pin!(inner.changed.notified());
        changed.as_mut().enable();
        let out = inner.mutate_if(|state| {
            if state.closed {
                return (
                    Output {
                        drop: true,
                        ..Output::default()
                    },
                    false,
                );
            }
            let out = state.gateway.output(conn);
            let changed = out.changed();
            (out, changed)
        });
        for frame in out.frames {
            if socket.send(Message::Text(frame.into())).await.is_err() {
                inner.mutate(|state| state.gateway.gone(conn, None));
                return;
            }
        }
        if let Some((code, reason)) = out.close {
            let frame = CloseFrame {
                code,
                reason: reason.into(),
            };
            let _ = socket.send(Message::Close(Some(frame))).await;
            return;
        }
        if out.drop {
            // Dropping the socket closes the TCP connection without a
            // close frame: the client sees a reset and resumes.
            return;
        }
        tokio::select! {
            received = socket.recv() => match received {
                Some(Ok(Message::Text(text))) => {
                    inner.mutate(|state| state.gateway_receive(conn, text.as_str()));
                }
                Some(Ok(Message::Binary(_))) => {
                    // serenity sends text; binary (ETF, compressed) is not
                    // supported by the fake.
                    inner.mutate(|state| state.gateway_receive(conn, "\u{0}"));
                }
                Some(Ok(Message::Close(frame))) => {
                    let code = frame.map(|frame| frame.code);
                    inner.mutate(|state| state.gateway.gone(conn, code));
                    return;
                }
                Some(Ok(_)) => {}
                None | Some(Err(_)) => {
                    inner.mutate(|state| state.gateway.gone(conn, None));
                    return;
                }
            },
            () = &mut changed => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ready() -> ReadyInfo {
        ReadyInfo {
            user: json!({"id": "1"}),
            application: json!({"id": "1", "flags": 0}),
            resume_gateway_url: "ws://x/gateway".into(),
        }
    }

    fn texts(out: &Output) -> Vec<Value> {
        out.frames
            .iter()
            .map(|frame| serde_json::from_str(frame).expect("frames are JSON"))
            .collect()
    }

    #[test]
    fn identify_dispatch_drop_resume() {
        let mut gateway = GatewayState::new(41_250);
        let conn = gateway.open();
        let hello = texts(&gateway.output(conn));
        assert_eq!(hello[0]["op"], 10);
        assert_eq!(hello[0]["d"]["heartbeat_interval"], 41_250);

        let identify = json!({"op": 2, "d": {"token": "Bot t", "intents": 513}}).to_string();
        let accepted = gateway.receive(conn, &identify, "t").expect("accepted");
        let session = gateway.start_session(accepted, ready(), Vec::new());
        assert_eq!(gateway.push("MESSAGE_CREATE", json!({"n": 1})), Some(2));
        let sent = texts(&gateway.output(conn));
        assert_eq!(sent[0]["t"], "READY");
        assert_eq!(sent[0]["s"], 1);
        assert_eq!(sent[0]["d"]["session_id"], session.as_str());
        assert_eq!(sent[1]["s"], 2);

        gateway.drop_all();
        assert!(gateway.output(conn).drop);
        assert_eq!(gateway.push("MESSAGE_CREATE", json!({"n": 2})), Some(3));

        let again = gateway.open();
        gateway.output(again);
        let resume =
            json!({"op": 6, "d": {"token": "t", "session_id": session, "seq": 1}}).to_string();
        assert!(gateway.receive(again, &resume, "t").is_none());
        let replay = texts(&gateway.output(again));
        let seqs: Vec<_> = replay.iter().map(|frame| frame["s"].clone()).collect();
        assert_eq!(seqs, [json!(2), json!(3), json!(4)]);
        assert_eq!(replay[2]["t"], "RESUMED");
        assert_eq!(gateway.stats.resumed, 1);

        let stranger = gateway.open();
        gateway.output(stranger);
        let unknown =
            json!({"op": 6, "d": {"token": "t", "session_id": "nope", "seq": 1}}).to_string();
        gateway.receive(stranger, &unknown, "t");
        let invalid = texts(&gateway.output(stranger));
        assert_eq!(
            invalid[0],
            json!({"op": 9, "d": false, "s": null, "t": null})
        );
    }

    #[test]
    fn close_codes() {
        let mut gateway = GatewayState::new(1000);
        gateway.disallowed = MESSAGE_CONTENT;
        let conn = gateway.open();
        let identify =
            json!({"op": 2, "d": {"token": "t", "intents": MESSAGE_CONTENT | GUILD_MESSAGES}});
        assert!(gateway.receive(conn, &identify.to_string(), "t").is_none());
        let out = gateway.output(conn);
        assert_eq!(out.close, Some((4014, "Disallowed intent(s).".to_owned())));

        let conn = gateway.open();
        let wrong = json!({"op": 2, "d": {"token": "wrong", "intents": 0}});
        gateway.receive(conn, &wrong.to_string(), "t");
        assert_eq!(gateway.output(conn).close.map(|close| close.0), Some(4004));

        let conn = gateway.open();
        gateway.receive(conn, "not json", "t");
        assert_eq!(gateway.output(conn).close.map(|close| close.0), Some(4002));

        let conn = gateway.open();
        gateway.receive(conn, r#"{"op": 1, "d": null}"#, "t");
        let ack = texts(&gateway.output(conn));
        assert_eq!(ack.last(), Some(&json!({"op": 11})));
    }
}

//! The long connection: single-use tickets from `/callback/ws/endpoint`,
//! WebSocket connections carrying binary `pbbp2.Frame`s, pongs to pings,
//! data frames for pushes (each sent on one connection only: whichever
//! connection picks it up first), answers, and connections the fake ends.

use std::collections::{BTreeMap, HashMap};
use std::pin::pin;
use std::sync::Arc;
use std::time::Instant;

use axum::extract::ws::{Message, WebSocket};

use super::frame::{Frame, METHOD_CONTROL, METHOD_DATA};
use super::model::ConnectionStats;
use super::server::Inner;
use super::util::{pseudo_hex, random_hex, unix_millis};

/// How many connections one app may have open (Feishu: 50).
pub(crate) const MAX_CONNECTIONS: usize = 50;

/// How the fake ends a connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum End {
    /// Without a close frame, as a network failure would.
    Drop,
    /// With a close frame.
    Close,
}

/// A push waiting for a connection.
#[derive(Debug, Clone)]
pub(crate) struct Outgoing {
    pub(crate) push: u64,
    pub(crate) delivery: usize,
    pub(crate) frame_id: String,
    /// The frame's `type` header (`event` or `card`).
    pub(crate) frame_type: &'static str,
    pub(crate) payload: Vec<u8>,
}

#[derive(Debug, Default)]
struct Conn {
    outbox: Vec<Frame>,
    end: Option<End>,
}

/// What a connection task should do next.
#[derive(Debug, Default)]
pub(crate) struct Output {
    /// Frames to send, in order.
    pub(crate) frames: Vec<Frame>,
    /// End the connection after sending them.
    pub(crate) end: Option<End>,
}

/// Why a connection attempt was refused: the `Handshake-*` headers Feishu's
/// SDKs read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Refusal {
    /// `Handshake-Status` (514: authentication failed).
    pub(crate) status: u16,
    /// `Handshake-Msg`.
    pub(crate) message: &'static str,
    /// `Handshake-Autherrcode`.
    pub(crate) auth_code: u64,
}

/// Tickets, connections, the queue of pushes.
#[derive(Debug)]
pub(crate) struct SocketState {
    pub(crate) stats: ConnectionStats,
    /// `service_id` of every URL (Feishu's is a number per app).
    pub(crate) service_id: i32,
    /// Ticket → whether it was used.
    tickets: HashMap<String, bool>,
    conns: BTreeMap<u64, Conn>,
    queue: Vec<Outgoing>,
    next_conn: u64,
    next_seq: u64,
}

impl SocketState {
    pub(crate) fn new() -> SocketState {
        SocketState {
            stats: ConnectionStats::default(),
            service_id: 33_554_678,
            tickets: HashMap::new(),
            conns: BTreeMap::new(),
            queue: Vec::new(),
            next_conn: 1,
            next_seq: 1,
        }
    }

    /// A fresh URL's query: `device_id`, `service_id`, `access_key`,
    /// `ticket` (single-use).
    pub(crate) fn issue_url(&mut self, ws_base: &str) -> String {
        self.stats.endpoints += 1;
        let ticket = random_hex();
        self.tickets.insert(ticket.clone(), false);
        let n = u64::try_from(self.stats.endpoints).unwrap_or(u64::MAX);
        format!(
            "{ws_base}/ws/v2?fpid=493&aid=552564&device_id={}&access_key={}&service_id={}&ticket={}",
            7_300_000_000_000_000_000_u64 + n,
            pseudo_hex(0xacce55 + n, 32),
            self.service_id,
            ticket
        )
    }

    /// Opens a connection for `ticket`; its number, or why not.
    pub(crate) fn open(&mut self, ticket: Option<&str>) -> Result<u64, Refusal> {
        if self.conns.len() >= MAX_CONNECTIONS {
            self.stats.refused += 1;
            return Err(Refusal {
                status: 514,
                message: "the app has too many connections",
                auth_code: 1_000_040_350,
            });
        }
        let fresh = ticket
            .and_then(|ticket| self.tickets.get_mut(ticket))
            .filter(|used| !**used);
        let Some(used) = fresh else {
            self.stats.refused += 1;
            return Err(Refusal {
                status: 514,
                message: "ticket is invalid or was used",
                auth_code: 1_000_040_344,
            });
        };
        *used = true;
        let id = self.next_conn;
        self.next_conn += 1;
        self.conns.insert(id, Conn::default());
        self.stats.opened += 1;
        self.stats.open = self.conns.len();
        Ok(id)
    }

    /// The connection ended.
    pub(crate) fn gone(&mut self, conn: u64) {
        self.conns.remove(&conn);
        self.stats.open = self.conns.len();
    }

    /// Ends every open connection.
    pub(crate) fn end_all(&mut self, how: End) {
        for conn in self.conns.values_mut() {
            if conn.end.is_none() {
                conn.end = Some(how);
                self.stats.ended_by_fake += 1;
            }
        }
    }

    /// Queues a push for the next connection that asks.
    pub(crate) fn enqueue(&mut self, outgoing: Outgoing) {
        self.queue.push(outgoing);
    }

    /// Takes a queued push back (it expired before any connection took
    /// it). Returns whether it was queued.
    pub(crate) fn unqueue(&mut self, push: u64, delivery: usize) -> bool {
        let before = self.queue.len();
        self.queue
            .retain(|outgoing| !(outgoing.push == push && outgoing.delivery == delivery));
        self.queue.len() != before
    }

    /// Answers a ping on `conn` with a pong carrying `client_config`.
    pub(crate) fn pong(&mut self, conn: u64, service: i32, client_config: &[u8]) {
        self.stats.pings += 1;
        let mut pong = Frame {
            service,
            method: METHOD_CONTROL,
            payload: Some(client_config.to_vec()),
            ..Frame::default()
        };
        pong.push_header("type", "pong");
        if let Some(state) = self.conns.get_mut(&conn) {
            state.outbox.push(pong);
        }
    }

    /// What `conn` should send now, and the pushes it takes (push,
    /// delivery, frame id).
    pub(crate) fn output(&mut self, conn: u64) -> (Output, Vec<(u64, usize, String)>) {
        let Some(state) = self.conns.get_mut(&conn) else {
            return (
                Output {
                    end: Some(End::Drop),
                    ..Output::default()
                },
                Vec::new(),
            );
        };
        let mut out = Output {
            frames: std::mem::take(&mut state.outbox),
            end: state.end,
        };
        if let Some(end) = state.end {
            self.gone(conn);
            out.end = Some(end);
            return (out, Vec::new());
        }
        let mut taken = Vec::new();
        for outgoing in std::mem::take(&mut self.queue) {
            let seq = self.next_seq;
            self.next_seq += 1;
            let mut frame = Frame {
                seq_id: seq,
                log_id: 7_000_000 + seq,
                service: self.service_id,
                method: METHOD_DATA,
                payload: Some(outgoing.payload),
                ..Frame::default()
            };
            frame.push_header("type", outgoing.frame_type);
            frame.push_header("message_id", outgoing.frame_id.clone());
            frame.push_header("trace_id", pseudo_hex(0x7ace + seq, 32));
            frame.push_header("sum", "1");
            frame.push_header("seq", "0");
            frame.push_header("timestamp", unix_millis().to_string());
            out.frames.push(frame);
            self.stats.pushed += 1;
            taken.push((outgoing.push, outgoing.delivery, outgoing.frame_id));
        }
        (out, taken)
    }
}

/// Serves one long connection until the client closes it, the fake ends
/// it, or the fake shuts down.
pub(crate) async fn serve(inner: Arc<Inner>, mut socket: WebSocket, conn: u64) {
    loop {
        let mut changed = pin!(inner.changed.notified());
        changed.as_mut().enable();
        let out = inner.mutate_if(|state| {
            if state.closed {
                let out = Output {
                    end: Some(End::Drop),
                    ..Output::default()
                };
                return (out, false);
            }
            let out = state.socket_output(conn, Instant::now());
            let changed = !out.frames.is_empty() || out.end.is_some();
            (out, changed)
        });
        for frame in &out.frames {
            if socket
                .send(Message::Binary(frame.to_bytes().into()))
                .await
                .is_err()
            {
                inner.mutate(|state| state.socket.gone(conn));
                return;
            }
        }
        match out.end {
            Some(End::Drop) => return,
            Some(End::Close) => {
                let _ = socket.send(Message::Close(None)).await;
                return;
            }
            None => {}
        }
        tokio::select! {
            received = socket.recv() => match received {
                Some(Ok(Message::Binary(bytes))) => {
                    inner.mutate(|state| state.socket_receive(conn, &bytes, Instant::now()));
                }
                Some(Ok(Message::Text(_))) => {
                    inner.mutate(|state| state.socket.stats.unexpected_frames += 1);
                }
                Some(Ok(Message::Close(_))) | None | Some(Err(_)) => {
                    inner.mutate(|state| state.socket.gone(conn));
                    return;
                }
                Some(Ok(_)) => {}
            },
            () = &mut changed => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tickets_are_single_use_and_pushes_go_to_one_connection() {
        let mut socket = SocketState::new();
        let url = socket.issue_url("ws://127.0.0.1:1");
        let ticket = url
            .split("ticket=")
            .nth(1)
            .expect("the URL has a ticket")
            .to_owned();
        assert!(socket.open(Some("nope")).is_err());
        let first = socket.open(Some(&ticket)).expect("fresh ticket");
        assert!(
            socket.open(Some(&ticket)).is_err(),
            "tickets are single-use"
        );
        let second_url = socket.issue_url("ws://127.0.0.1:1");
        let second_ticket = second_url.split("ticket=").nth(1).unwrap_or_default();
        let second = socket.open(Some(second_ticket)).expect("fresh ticket");
        socket.enqueue(Outgoing {
            push: 1,
            delivery: 0,
            frame_id: "f1".into(),
            frame_type: "event",
            payload: b"{}".to_vec(),
        });
        let (out, taken) = socket.output(second);
        assert_eq!(out.frames.len(), 1);
        assert_eq!(out.frames[0].header("message_id"), Some("f1"));
        assert_eq!(out.frames[0].header("sum"), Some("1"));
        assert_eq!(taken, [(1, 0, "f1".to_owned())]);
        assert!(socket.output(first).0.frames.is_empty());
        socket.end_all(End::Drop);
        assert_eq!(socket.output(first).0.end, Some(End::Drop));
        assert_eq!(socket.stats.open, 1);
        assert_eq!(socket.stats.refused, 2);
    }
}

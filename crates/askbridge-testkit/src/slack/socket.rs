//! Socket Mode: WebSocket connections opened with a ticket from
//! `apps.connections.open`, `hello` on connect, envelopes with unique
//! `envelope_id`s, acks, redelivery of unacked envelopes (`retry_attempt`
//! one more, `retry_reason` `"timeout"`), `disconnect` messages, and
//! abrupt drops.
//!
//! Envelopes wait in one queue for the app; whichever live connection
//! asks first sends the next one (Slack spreads envelopes over an app's
//! connections). An envelope sent on a connection that died unacked, or
//! not acked within the ack timeout, is due again.

use std::collections::{BTreeMap, HashMap};
use std::pin::pin;
use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::extract::ws::{Message, WebSocket};
use serde_json::{Value, json};

use super::APP_ID;
use super::model::{EnvelopeKind, EnvelopeRecord, SocketStats};
use super::server::Inner;
use super::util::{pseudo_hex, str_field};

/// The `debug_info.host` Slack reports (one of its `applink` hosts).
const HOST: &str = "applink-askbridge-fake-0";

#[derive(Debug)]
struct Envelope {
    record: EnvelopeRecord,
    /// The connection it was last sent on, and when.
    sent: Option<(u64, Instant)>,
    /// Due now, whatever the timeout says ([`SocketState::force_redelivery`]).
    forced: bool,
}

#[derive(Debug, Default)]
struct Conn {
    outbox: Vec<String>,
    drop: bool,
}

/// What a connection task should do next.
#[derive(Debug, Default)]
pub(crate) struct Output {
    pub(crate) frames: Vec<String>,
    /// Drop the socket without a close frame and end.
    pub(crate) drop: bool,
    /// When an envelope sent on this connection times out.
    pub(crate) deadline: Option<Instant>,
}

/// Delivery rules.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Redelivery {
    /// How long an envelope may stay unacked.
    pub(crate) ack_timeout: Duration,
    /// Redeliveries after the first delivery.
    pub(crate) max_retries: u32,
    /// Whether `interactive` and `slash_commands` envelopes are redelivered
    /// too (Slack retries only Events API envelopes).
    pub(crate) interactive: bool,
}

/// Tickets, connections and envelopes.
#[derive(Debug)]
pub(crate) struct SocketState {
    pub(crate) rules: Redelivery,
    pub(crate) stats: SocketStats,
    tickets: HashMap<String, bool>,
    conns: BTreeMap<u64, Conn>,
    envelopes: Vec<Envelope>,
    next_conn: u64,
    next_ticket: u64,
    next_envelope: u64,
}

impl SocketState {
    pub(crate) fn new(rules: Redelivery) -> Self {
        SocketState {
            rules,
            stats: SocketStats::default(),
            tickets: HashMap::new(),
            conns: BTreeMap::new(),
            envelopes: Vec::new(),
            next_conn: 1,
            next_ticket: 1,
            next_envelope: 1,
        }
    }

    /// A fresh, single-use ticket for the WebSocket URL.
    pub(crate) fn issue_ticket(&mut self) -> String {
        let ticket = format!(
            "{}-{}",
            pseudo_hex(0x7_1c6e7 + self.next_ticket, 8),
            pseudo_hex(self.next_ticket, 24)
        );
        self.next_ticket += 1;
        self.tickets.insert(ticket.clone(), false);
        self.stats.tickets += 1;
        ticket
    }

    /// A connection with `ticket`: `hello` goes out first. `None` (and the
    /// upgrade refused) for unknown or used tickets.
    pub(crate) fn open(&mut self, ticket: Option<&str>) -> Option<u64> {
        let fresh = ticket
            .and_then(|ticket| self.tickets.get_mut(ticket))
            .filter(|used| !**used);
        let Some(used) = fresh else {
            self.stats.refused += 1;
            return None;
        };
        *used = true;
        let id = self.next_conn;
        self.next_conn += 1;
        self.conns.insert(id, Conn::default());
        let hello = json!({
            "type": "hello",
            "num_connections": self.conns.len(),
            "debug_info": {
                "host": HOST,
                "build_number": 118,
                "approximate_connection_time": 18_060,
            },
            "connection_info": { "app_id": APP_ID },
        });
        if let Some(conn) = self.conns.get_mut(&id) {
            conn.outbox.push(hello.to_string());
        }
        self.stats.connections += 1;
        self.stats.open = self.conns.len();
        Some(id)
    }

    /// The connection ended (closed by the client, or sending failed).
    pub(crate) fn gone(&mut self, conn: u64) {
        self.conns.remove(&conn);
        self.stats.open = self.conns.len();
    }

    /// Drops every connection without a close frame.
    pub(crate) fn drop_all(&mut self) {
        for conn in self.conns.values_mut() {
            if !conn.drop {
                conn.drop = true;
                self.stats.dropped += 1;
            }
        }
    }

    /// Sends `disconnect` with `reason` (`"refresh_requested"`,
    /// `"warning"`, `"link_disabled"`) on every connection.
    pub(crate) fn disconnect_all(&mut self, reason: &str) {
        let frame = json!({
            "type": "disconnect",
            "reason": reason,
            "debug_info": { "host": HOST },
        })
        .to_string();
        for conn in self.conns.values_mut() {
            conn.outbox.push(frame.clone());
            self.stats.disconnects += 1;
        }
    }

    /// Queues an envelope; returns its `envelope_id`.
    pub(crate) fn enqueue(&mut self, kind: EnvelopeKind, payload: Value, accepts: bool) -> String {
        let n = self.next_envelope;
        self.next_envelope += 1;
        let hex = pseudo_hex(0xe_4e10_0000 + n, 32);
        let envelope_id = format!(
            "{}-{}-4{}-a{}-{}",
            &hex[0..8],
            &hex[8..12],
            &hex[13..16],
            &hex[17..20],
            &hex[20..32]
        );
        self.envelopes.push(Envelope {
            record: EnvelopeRecord {
                envelope_id: envelope_id.clone(),
                kind,
                payload,
                accepts_response_payload: accepts,
                deliveries: 0,
                retry_attempt: 0,
                acks: Vec::new(),
                given_up: false,
            },
            sent: None,
            forced: false,
        });
        envelope_id
    }

    /// Makes envelope `id` (or every unacked one) due for redelivery now.
    pub(crate) fn force_redelivery(&mut self, id: Option<&str>) -> usize {
        let mut count = 0;
        for envelope in &mut self.envelopes {
            let matches = id.is_none_or(|id| envelope.record.envelope_id == id);
            if matches && !envelope.record.acked() && !envelope.record.given_up {
                envelope.forced = true;
                count += 1;
            }
        }
        count
    }

    /// Forgets the acks of envelope `id`, as if they never reached Slack,
    /// and makes it due for redelivery now. Returns whether it exists.
    pub(crate) fn lose_ack(&mut self, id: &str) -> bool {
        match self
            .envelopes
            .iter_mut()
            .find(|envelope| envelope.record.envelope_id == id)
        {
            Some(envelope) => {
                envelope.record.acks.clear();
                envelope.record.given_up = false;
                envelope.forced = true;
                true
            }
            None => false,
        }
    }

    /// Every envelope, in order.
    pub(crate) fn records(&self) -> Vec<&EnvelopeRecord> {
        self.envelopes
            .iter()
            .map(|envelope| &envelope.record)
            .collect()
    }

    /// One envelope.
    pub(crate) fn record(&self, id: &str) -> Option<&EnvelopeRecord> {
        self.envelopes
            .iter()
            .map(|envelope| &envelope.record)
            .find(|record| record.envelope_id == id)
    }

    /// Whether every envelope was acked or given up, and none is waiting.
    pub(crate) fn settled(&self) -> bool {
        self.envelopes
            .iter()
            .all(|envelope| envelope.record.acked() || envelope.record.given_up)
    }

    /// A frame from the client: an ack (`{"envelope_id": …}`, maybe with a
    /// `payload`), recorded with its envelope. Returns the acked
    /// envelope's record (with this ack last), if it was one.
    pub(crate) fn receive(&mut self, text: &str) -> Option<&EnvelopeRecord> {
        let parsed = serde_json::from_str::<Value>(text).ok();
        let envelope = parsed.as_ref().and_then(|frame| {
            let id = str_field(frame, "envelope_id")?;
            self.envelopes
                .iter_mut()
                .find(|envelope| envelope.record.envelope_id == id)
        });
        match (envelope, parsed) {
            (Some(envelope), Some(frame)) => {
                envelope.record.acks.push(frame);
                envelope.forced = false;
                Some(&envelope.record)
            }
            _ => {
                self.stats.unexpected_frames += 1;
                None
            }
        }
    }

    /// What connection `conn` should send now; marks it sent.
    pub(crate) fn output(&mut self, conn: u64, now: Instant) -> Output {
        let Some(state) = self.conns.get_mut(&conn) else {
            return Output {
                drop: true,
                ..Output::default()
            };
        };
        if state.drop {
            self.gone(conn);
            return Output {
                drop: true,
                ..Output::default()
            };
        }
        let mut out = Output {
            frames: std::mem::take(&mut state.outbox),
            ..Output::default()
        };
        let rules = self.rules;
        for envelope in &mut self.envelopes {
            let record = &mut envelope.record;
            if record.acked() || record.given_up {
                continue;
            }
            let retried = rules.interactive || record.kind == EnvelopeKind::EventsApi;
            let due = match envelope.sent {
                None => true,
                Some((on, at)) => {
                    let timed_out = now.saturating_duration_since(at) >= rules.ack_timeout;
                    let lost = !self.conns.contains_key(&on);
                    if !(timed_out || lost || envelope.forced) {
                        if on == conn {
                            let deadline = at + rules.ack_timeout;
                            out.deadline =
                                Some(out.deadline.map_or(deadline, |other| other.min(deadline)));
                        }
                        continue;
                    }
                    if !retried || record.retry_attempt >= rules.max_retries {
                        record.given_up = true;
                        continue;
                    }
                    record.retry_attempt += 1;
                    true
                }
            };
            if !due {
                continue;
            }
            envelope.forced = false;
            envelope.sent = Some((conn, now));
            record.deliveries += 1;
            self.stats.envelopes_sent += 1;
            let mut frame = json!({
                "envelope_id": record.envelope_id,
                "payload": record.payload,
                "type": record.kind.as_str(),
                "accepts_response_payload": record.accepts_response_payload,
            });
            if (record.kind == EnvelopeKind::EventsApi || record.retry_attempt > 0)
                && let Value::Object(object) = &mut frame
            {
                object.insert("retry_attempt".into(), json!(record.retry_attempt));
                let reason = if record.retry_attempt > 0 {
                    "timeout"
                } else {
                    ""
                };
                object.insert("retry_reason".into(), json!(reason));
            }
            out.frames.push(frame.to_string());
            let deadline = now + rules.ack_timeout;
            out.deadline = Some(out.deadline.map_or(deadline, |other| other.min(deadline)));
        }
        out
    }
}

/// Serves one Socket Mode WebSocket until the client closes it, the fake
/// drops it, or the fake shuts down.
pub(crate) async fn serve(inner: Arc<Inner>, mut socket: WebSocket, conn: u64) {
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
            let out = state.socket.output(conn, Instant::now());
            let changed = !out.frames.is_empty() || out.drop;
            (out, changed)
        });
        for frame in out.frames {
            if socket.send(Message::Text(frame.into())).await.is_err() {
                inner.mutate(|state| state.socket.gone(conn));
                return;
            }
        }
        if out.drop {
            // Dropping the socket ends the TCP connection without a close
            // frame: the client sees an error and reconnects.
            return;
        }
        let timeout = async {
            match out.deadline {
                Some(deadline) => tokio::time::sleep_until(deadline.into()).await,
                None => std::future::pending::<()>().await,
            }
        };
        tokio::select! {
            received = socket.recv() => match received {
                Some(Ok(Message::Text(text))) => {
                    inner.mutate(|state| state.receive_frame(text.as_str()));
                }
                Some(Ok(Message::Close(_))) | None | Some(Err(_)) => {
                    inner.mutate(|state| state.socket.gone(conn));
                    return;
                }
                Some(Ok(_)) => {}
            },
            () = &mut changed => {}
            () = timeout => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rules() -> Redelivery {
        Redelivery {
            ack_timeout: Duration::from_secs(3),
            max_retries: 3,
            interactive: false,
        }
    }

    fn texts(out: &Output) -> Vec<Value> {
        out.frames
            .iter()
            .map(|frame| serde_json::from_str(frame).expect("frames are JSON"))
            .collect()
    }

    #[test]
    fn hello_deliver_ack_redeliver() {
        let mut socket = SocketState::new(rules());
        assert_eq!(socket.open(Some("nope")), None);
        let ticket = socket.issue_ticket();
        let conn = socket.open(Some(&ticket)).expect("fresh ticket");
        assert_eq!(socket.open(Some(&ticket)), None, "tickets are single-use");
        let start = Instant::now();
        let hello = texts(&socket.output(conn, start));
        assert_eq!(hello[0]["type"], "hello");
        assert_eq!(hello[0]["num_connections"], 1);
        assert_eq!(hello[0]["connection_info"]["app_id"], APP_ID);

        let event = socket.enqueue(EnvelopeKind::EventsApi, json!({"n": 1}), false);
        let press = socket.enqueue(EnvelopeKind::Interactive, json!({"n": 2}), false);
        let out = socket.output(conn, start);
        let sent = texts(&out);
        assert_eq!(sent.len(), 2);
        assert_eq!(sent[0]["envelope_id"], event.as_str());
        assert_eq!(sent[0]["retry_attempt"], 0);
        assert_eq!(sent[0]["retry_reason"], "");
        assert!(sent[1].get("retry_attempt").is_none());
        assert_eq!(out.deadline, Some(start + Duration::from_secs(3)));
        assert!(socket.output(conn, start).frames.is_empty());

        let late = start + Duration::from_secs(3);
        let again = texts(&socket.output(conn, late));
        assert_eq!(again.len(), 1, "interactive envelopes are not retried");
        assert_eq!(again[0]["envelope_id"], event.as_str());
        assert_eq!(again[0]["retry_attempt"], 1);
        assert_eq!(again[0]["retry_reason"], "timeout");
        assert!(socket.record(&press).is_some_and(|record| record.given_up));

        let acked = socket.receive(&json!({"envelope_id": event}).to_string());
        assert_eq!(
            acked.map(|record| record.kind),
            Some(EnvelopeKind::EventsApi)
        );
        assert!(socket.receive(r#"{"type": "pong"}"#).is_none());
        assert_eq!(socket.stats.unexpected_frames, 1);
        assert!(socket.record(&event).is_some_and(EnvelopeRecord::acked));
        assert!(socket.settled());
        assert!(
            socket
                .output(conn, late + Duration::from_secs(10))
                .frames
                .is_empty()
        );
    }

    #[test]
    fn dropped_connections_lose_nothing() {
        let mut socket = SocketState::new(rules());
        let ticket = socket.issue_ticket();
        let first = socket.open(Some(&ticket)).expect("fresh ticket");
        let now = Instant::now();
        socket.output(first, now);
        let event = socket.enqueue(EnvelopeKind::EventsApi, json!({}), false);
        assert_eq!(socket.output(first, now).frames.len(), 1);
        socket.drop_all();
        assert!(socket.output(first, now).drop);
        let pending = socket.enqueue(EnvelopeKind::EventsApi, json!({}), false);

        let ticket = socket.issue_ticket();
        let second = socket.open(Some(&ticket)).expect("fresh ticket");
        let sent = texts(&socket.output(second, now));
        let ids: Vec<_> = sent
            .iter()
            .map(|frame| frame["envelope_id"].clone())
            .collect();
        assert_eq!(ids[1], json!(event));
        assert_eq!(sent[1]["retry_attempt"], 1);
        assert_eq!(ids[2], json!(pending));
        assert_eq!(sent[2]["retry_attempt"], 0);

        assert_eq!(socket.force_redelivery(Some(&pending)), 1);
        let forced = texts(&socket.output(second, now));
        assert_eq!(forced[0]["envelope_id"], json!(pending));
        assert_eq!(forced[0]["retry_attempt"], 1);
    }

    #[test]
    fn slash_commands_are_redelivered_only_when_interactive_ones_are() {
        for redeliver in [false, true] {
            let mut socket = SocketState::new(Redelivery {
                interactive: redeliver,
                ..rules()
            });
            let ticket = socket.issue_ticket();
            let conn = socket.open(Some(&ticket)).expect("fresh ticket");
            let start = Instant::now();
            socket.output(conn, start);
            let command = socket.enqueue(EnvelopeKind::SlashCommands, json!({"n": 1}), true);
            let first = texts(&socket.output(conn, start));
            assert_eq!(first[0]["type"], "slash_commands");
            assert_eq!(first[0]["accepts_response_payload"], true);
            assert!(first[0].get("retry_attempt").is_none());

            let late = start + Duration::from_secs(3);
            let again = texts(&socket.output(conn, late));
            let record = socket.record(&command).expect("recorded").clone();
            if redeliver {
                assert_eq!(again.len(), 1);
                assert_eq!(again[0]["envelope_id"], command.as_str());
                assert_eq!(again[0]["retry_attempt"], 1);
                assert_eq!(again[0]["retry_reason"], "timeout");
                assert_eq!(record.deliveries, 2);
            } else {
                assert!(again.is_empty(), "Slack does not retry slash commands");
                assert!(record.given_up);
                assert_eq!(record.deliveries, 1);
            }
        }
    }
}

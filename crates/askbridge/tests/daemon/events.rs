//! Server-Sent Events from the daemon (`GET /v1/events`), read event by
//! event; every wait is bounded.

use std::time::Duration;

use reqwest::header::CONTENT_TYPE;
use serde_json::Value;
use tokio::time::timeout;

/// Longest wait for the stream or its next event.
const STEP: Duration = Duration::from_secs(30);

/// Reads Server-Sent Events from a streaming response.
pub struct EventReader {
    response: reqwest::Response,
    buffer: Vec<u8>,
}

impl EventReader {
    pub async fn open(client: &reqwest::Client, url: &str) -> EventReader {
        let response = timeout(
            STEP,
            client.get(url).header("accept", "text/event-stream").send(),
        )
        .await
        .expect("the event stream answers within 30 s")
        .expect("GET /v1/events");
        assert_eq!(response.status(), 200, "GET /v1/events");
        let content_type = header(&response, CONTENT_TYPE);
        assert!(
            content_type.starts_with("text/event-stream"),
            "content type {content_type}"
        );
        EventReader {
            response,
            buffer: Vec::new(),
        }
    }

    /// The next event's name and JSON data; keep-alive comments skipped.
    pub async fn next(&mut self) -> (String, Value) {
        loop {
            if let Some(end) = self.buffer.windows(2).position(|w| w == b"\n\n") {
                let block: Vec<u8> = self.buffer.drain(..end + 2).collect();
                let block = String::from_utf8(block).expect("events are UTF-8");
                let mut name = "message".to_owned();
                let mut data = String::new();
                for line in block.lines() {
                    if let Some(value) = line.strip_prefix("event:") {
                        name = value.trim().to_owned();
                    } else if let Some(value) = line.strip_prefix("data:") {
                        data.push_str(value.strip_prefix(' ').unwrap_or(value));
                    }
                }
                if data.is_empty() {
                    continue;
                }
                let data = serde_json::from_str(&data)
                    .unwrap_or_else(|e| panic!("event data is JSON ({e}): {data}"));
                return (name, data);
            }
            let chunk = timeout(STEP, self.response.chunk())
                .await
                .expect("an event within 30 s")
                .expect("read the event stream")
                .expect("the event stream stays open");
            self.buffer.extend_from_slice(&chunk);
        }
    }

    /// Skips events until one named `name` about ask `id`.
    pub async fn until(&mut self, name: &str, id: &str) -> Value {
        loop {
            let (event, data) = self.next().await;
            if event == name && data["id"] == id {
                return data;
            }
        }
    }
}

/// A response header's value as text (empty when absent).
pub fn header(response: &reqwest::Response, name: reqwest::header::HeaderName) -> String {
    response
        .headers()
        .get(&name)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_owned()
}

//! The long connection's wire format: protobuf `pbbp2.Frame` (proto2), in
//! binary WebSocket messages, as Feishu's SDKs define it:
//!
//! ```text
//! message Header { required string key = 1; required string value = 2; }
//! message Frame {
//!   required uint64 SeqID = 1; required uint64 LogID = 2;
//!   required int32 service = 3; required int32 method = 4;
//!   repeated Header headers = 5;
//!   optional string payload_encoding = 6; optional string payload_type = 7;
//!   optional bytes payload = 8; optional string LogIDNew = 9;
//! }
//! ```
//!
//! `method` 0 is a control frame (`type` header `ping` or `pong`), 1 a data
//! frame (`type` `event` or `card`). Required fields are always encoded, as
//! the SDKs' decoders insist.

use prost::Message as _;

/// `method` of control frames (ping, pong).
pub const METHOD_CONTROL: i32 = 0;

/// `method` of data frames (events, callbacks and their answers).
pub const METHOD_DATA: i32 = 1;

/// One `key: value` header of a [`Frame`].
#[derive(Clone, PartialEq, Eq, prost::Message)]
pub struct Header {
    /// `key`.
    #[prost(string, required, tag = "1")]
    pub key: String,
    /// `value`.
    #[prost(string, required, tag = "2")]
    pub value: String,
}

/// `pbbp2.Frame`.
#[derive(Clone, PartialEq, Eq, prost::Message)]
pub struct Frame {
    /// `SeqID`.
    #[prost(uint64, required, tag = "1")]
    pub seq_id: u64,
    /// `LogID`.
    #[prost(uint64, required, tag = "2")]
    pub log_id: u64,
    /// `service`: the `service_id` of the connection URL.
    #[prost(int32, required, tag = "3")]
    pub service: i32,
    /// `method`: [`METHOD_CONTROL`] or [`METHOD_DATA`].
    #[prost(int32, required, tag = "4")]
    pub method: i32,
    /// `headers`, in order.
    #[prost(message, repeated, tag = "5")]
    pub headers: Vec<Header>,
    /// `payload_encoding`.
    #[prost(string, optional, tag = "6")]
    pub payload_encoding: Option<String>,
    /// `payload_type`.
    #[prost(string, optional, tag = "7")]
    pub payload_type: Option<String>,
    /// `payload`.
    #[prost(bytes = "vec", optional, tag = "8")]
    pub payload: Option<Vec<u8>>,
    /// `LogIDNew`.
    #[prost(string, optional, tag = "9")]
    pub log_id_new: Option<String>,
}

impl Frame {
    /// A client's ping: a control frame with `type: ping` on `service`.
    pub fn ping(service: i32) -> Frame {
        Frame {
            service,
            method: METHOD_CONTROL,
            headers: vec![Header {
                key: "type".into(),
                value: "ping".into(),
            }],
            ..Frame::default()
        }
    }

    /// The value of header `key`, if any.
    pub fn header(&self, key: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|header| header.key == key)
            .map(|header| header.value.as_str())
    }

    /// Appends a header.
    pub fn push_header(&mut self, key: &str, value: impl Into<String>) {
        self.headers.push(Header {
            key: key.to_owned(),
            value: value.into(),
        });
    }

    /// The frame's protobuf bytes.
    pub fn to_bytes(&self) -> Vec<u8> {
        self.encode_to_vec()
    }

    /// Decodes protobuf bytes.
    ///
    /// # Errors
    /// If `bytes` is not a `pbbp2.Frame`.
    pub fn from_bytes(bytes: &[u8]) -> Result<Frame, prost::DecodeError> {
        Frame::decode(bytes)
    }

    /// The payload, or nothing.
    pub fn payload_bytes(&self) -> &[u8] {
        self.payload.as_deref().unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The bytes Feishu's SDKs put on the wire for a ping on service 1
    /// (worked out by hand from the `.proto`: required zeros included).
    #[test]
    fn ping_bytes_match_the_proto() {
        let bytes = Frame::ping(1).to_bytes();
        let expected: Vec<u8> = [
            &[0x08, 0x00, 0x10, 0x00, 0x18, 0x01, 0x20, 0x00, 0x2a, 0x0c][..],
            &[0x0a, 0x04],
            b"type",
            &[0x12, 0x04],
            b"ping",
        ]
        .concat();
        assert_eq!(bytes, expected);
        let decoded = Frame::from_bytes(&bytes).expect("decodes");
        assert_eq!(decoded.header("type"), Some("ping"));
        assert_eq!(decoded.payload, None);
    }

    #[test]
    fn payload_round_trips() {
        let mut frame = Frame {
            seq_id: 7,
            log_id: 9,
            service: 33_554_678,
            method: METHOD_DATA,
            payload: Some(b"{}".to_vec()),
            ..Frame::default()
        };
        frame.push_header("type", "event");
        let decoded = Frame::from_bytes(&frame.to_bytes()).expect("decodes");
        assert_eq!(decoded, frame);
        assert_eq!(decoded.payload_bytes(), b"{}");
    }
}

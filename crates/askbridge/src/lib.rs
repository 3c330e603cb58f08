//! The askbridge executable's library half: the daemon (storage, the
//! lifecycle driver, HTTP, MCP, the web channel), wire formats (the JSON
//! that crosses process boundaries) and the command-line tools.
//!
//! Core types never derive `Serialize`; everything that leaves the process
//! goes through [`wire`]. This crate does the I/O; `askbridge-core` decides.
//!
//! The modules sit in layers, lowest first; each uses only those before it
//! (and itself), never one after it (`tests/layers.rs` checks this):
//! [`instance`] (this instance's name) → [`config`] → [`wire`] (pure data
//! shapes) → [`store`] → [`bridge`] (the lifecycle driver) → [`chat`] (what
//! the chat platforms share) → [`web`] → [`mcp`] → [`http`] (the server,
//! which mounts the web page and MCP) → [`channels`] (each chat platform's
//! wiring, whose webhooks answer through `http`) → [`commands`] (the
//! command-line tools, which put it all together). A conversion between two layers' types lives with the
//! higher one.

pub mod bridge;
pub mod channels;
pub mod chat;
pub mod commands;
pub mod config;
pub mod http;
pub mod instance;
pub mod mcp;
pub mod store;
pub mod web;
pub mod webhooks;
pub mod wire;

/// A text as a short, stable name (a name-based UUID, as 32 hex digits):
/// a file name, an idempotency key's body, a message's once key.
pub fn hashed(text: &str) -> String {
    uuid::Uuid::new_v5(&uuid::Uuid::NAMESPACE_OID, text.as_bytes())
        .simple()
        .to_string()
}

/// An error and its causes on one line, `: `-separated; a cause whose text
/// the line already holds is not repeated.
pub fn error_chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        let line = cause.to_string();
        if !text.contains(&line) {
            text.push_str(": ");
            text.push_str(&line);
        }
        source = cause.source();
    }
    text
}

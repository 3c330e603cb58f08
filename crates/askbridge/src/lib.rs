//! The askbridge executable's library half: the daemon (storage, the
//! lifecycle driver, HTTP, MCP, the web channel), wire formats (the JSON
//! that crosses process boundaries) and the command-line tools.
//!
//! Core types never derive `Serialize`; everything that leaves the process
//! goes through [`wire`]. This crate does the I/O; `askbridge-core` decides.

pub mod bridge;
pub mod chat;
pub mod commands;
pub mod config;
pub mod discord;
pub mod http;
pub mod instance;
pub mod mcp;
pub mod slack;
pub mod store;
pub mod telegram;
pub mod web;
pub mod wire;

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

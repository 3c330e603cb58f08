//! The daemon's modules read in layers, lowest first: `instance` →
//! `config` → `wire` → `store` → `bridge` → `chat` → `web` → `mcp` →
//! `http` → `channels` → `commands`.
//! A module uses only modules before it (and itself), never one after it,
//! so there is no import circle. Doc comments may point anywhere.

/// The modules of the crate, lowest layer first.
const ORDER: &[&str] = &[
    "instance", "config", "wire", "store", "bridge", "chat", "web", "mcp", "http", "webhooks",
    "channels", "commands",
];

#[path = "../../askbridge-core/tests/layering/mod.rs"]
mod layering;

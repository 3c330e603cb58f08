//! The askbridge executable's library half: wire formats (the JSON that
//! crosses process boundaries) and the command-line tools.
//!
//! Core types never derive `Serialize`; everything that leaves the process
//! goes through [`wire`]. This crate may do I/O; `askbridge-core` may not.

pub mod commands;
pub mod wire;

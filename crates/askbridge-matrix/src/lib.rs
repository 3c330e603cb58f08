//! askbridge's Matrix channel, in three parts:
//!
//! - [`render`] (pure): an ask's neutral [`View`](askbridge_core::render::View)
//!   as room events — a poll (MSC3381, as Element sends it) for one
//!   single-choice or yes/no question, whose answers carry the core's
//!   callback keys and whose text fallback is the numbered prompt; plain
//!   `m.text` messages for the numbered prompt; the poll's end or the
//!   prompt's edit with the status line when the ask ends; threaded
//!   answers.
//! - [`parse`] (pure): a room event as what a person did — a vote (either
//!   poll form), typed text with its reply fallback and the bot's mention
//!   taken off, a ⏭ reaction as "skip" — with who and where.
//! - [`run`] (the only async code): matrix-sdk's client with its SQLite
//!   store under the data dir (room state and end-to-end encryption keys),
//!   the bot's login, sending with transaction ids, failures classified,
//!   and the `/sync` loop.
//!
//! It depends on the core and matrix-sdk only: not on askbridge's server
//! crate, its storage or its HTTP framework. The server wires these parts
//! to its bridge.

pub mod parse;
pub mod render;
pub mod run;

pub use render::{Destination, Message};

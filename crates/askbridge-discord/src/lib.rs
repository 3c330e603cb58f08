//! askbridge's Discord channel, in three parts:
//!
//! - [`render`] (pure): an ask's neutral [`View`](askbridge_core::render::View)
//!   as Discord messages — buttons for one single-choice or yes/no question,
//!   the numbered prompt for the rest, one step per question in rich mode
//!   (a string select menu for multi-select) — and the payloads sent later:
//!   the own-words modal, ephemeral notices, interaction acknowledgements,
//!   the closing edit.
//! - [`parse`] (pure): serenity's interaction and message models as an
//!   [`parse::Event`] — a button press or select, a modal submit, a typed
//!   message — with who sent it and where; also HTTP interaction bodies.
//! - [`run`] (the only async code): Discord's REST API through serenity's
//!   [`Http`](serenity::http::Http) with failures classified for retries,
//!   the gateway listener, and the Ed25519 check of HTTP interactions.
//!
//! It depends on the core and serenity only: not on askbridge's server
//! crate, its storage or its HTTP framework. The server wires these parts
//! to its bridge (`askbridge::channels::discord`).

pub mod parse;
pub mod render;
pub mod run;

pub use render::{Destination, Message};

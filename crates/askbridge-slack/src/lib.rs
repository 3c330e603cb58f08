//! askbridge's Slack channel, in three parts:
//!
//! - [`render`] (pure): an ask's neutral [`View`](askbridge_core::render::View)
//!   as Block Kit messages — buttons for one single-choice or yes/no
//!   question, the numbered prompt for the rest, one step per question in
//!   rich mode (checkboxes or a multi-select menu with a Submit button for
//!   multi-select) — and the payloads sent later: the own-words modal,
//!   ephemeral notices, replies in a thread, the closing edit.
//! - [`parse`] (pure): slack-morphism's event and interaction models as an
//!   [`parse::Event`] — a button press, a modal submit, a typed message —
//!   with who sent it and where; also the raw bodies of the Events API and
//!   interactivity requests (HTTP mode).
//! - [`run`] (the only async code): Slack's Web API through slack-morphism's
//!   hyper client with failures classified for retries, the Socket Mode
//!   listener, and the signing-secret check of HTTP requests.
//!
//! It depends on the core and slack-morphism only: not on askbridge's
//! server crate, its storage or its HTTP framework. The server wires these
//! parts to its bridge.

pub mod parse;
pub mod render;
pub mod run;

pub use render::{Destination, Message};

//! askbridge's Feishu (Lark) channel, in three parts:
//!
//! - [`render`] (pure): an ask's neutral [`View`](askbridge_core::render::View)
//!   as interactive cards (JSON 2.0) — buttons for one single-choice or
//!   yes/no question with a form for the person's own words, the numbered
//!   prompt for the rest, one step per question in rich mode (a
//!   multi-select menu submitted by Done) — the closing update and the
//!   answer to a card callback (a toast).
//! - [`parse`] (pure): what Feishu pushes (`url_verification`,
//!   `card.action.trigger`, `im.message.receive_v1`) as a [`parse::Event`]
//!   — a press or form submitted, a typed message with its mentions undone
//!   — with who and where.
//! - [`run`] (the only async code): the Open API (tenant token, messages),
//!   failures classified for retries, the long connection, and the check
//!   of HTTP callbacks (decryption, signature, age, verification token).
//!
//! It depends on the core, `reqwest` and the WebSocket client only: not on
//! askbridge's server crate, its storage or its HTTP framework. The server
//! wires these parts to its bridge.

pub mod parse;
pub mod render;
pub mod run;

pub use render::{Destination, Message};

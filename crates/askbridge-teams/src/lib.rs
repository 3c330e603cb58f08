//! askbridge's Microsoft Teams channel, in four parts:
//!
//! - [`render`] (pure): an ask's neutral [`View`](askbridge_core::render::View)
//!   as Adaptive Cards (schema 1.5) — an `Action.Execute` per option of one
//!   single-choice or yes/no question with a field for the person's own
//!   words, the numbered prompt for the rest, one step per question in
//!   rich mode (a multi-select `Input.ChoiceSet` sent by Done) — the
//!   closing update, and the answers to a card's `adaptiveCard/action`
//!   invoke.
//! - [`parse`] (pure): Bot Framework activities (`message`, `invoke`) as
//!   what a person did — a press with its inputs, a typed message with the
//!   bot's `<at>` mention taken off — with who and where.
//! - [`auth`]: what is taken inbound — `msteams` activities only, and the
//!   check of their token (RS256 against the Bot Connector's OpenID
//!   metadata and keys, cached; issuer, audience, expiry, endorsement and
//!   the `serviceurl` claim), or, with the check skipped, loopback
//!   `serviceUrl`s only.
//! - [`run`]: the Bot Connector REST API (activities sent, updated, a
//!   personal conversation created) with the bot's OAuth token, cached and
//!   renewed; failures classified for retries.
//!
//! It depends on the core, `reqwest` and `jsonwebtoken` only: not on
//! askbridge's server crate, its storage or its HTTP framework. The server
//! wires these parts to its bridge.

pub mod auth;
pub mod parse;
pub mod render;
pub mod run;

pub use render::{Destination, Message};

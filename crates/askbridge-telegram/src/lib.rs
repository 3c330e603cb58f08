//! askbridge's Telegram channel, in three parts:
//!
//! - [`render`] (pure): an ask's neutral [`View`](askbridge_core::render::View)
//!   as Bot API `sendMessage` payloads — inline keyboards for one
//!   single-choice or yes/no question, the numbered prompt for the rest,
//!   one step per question in rich mode — and the texts sent later
//!   (forced-reply prompts, notices, the closing edit).
//! - [`parse`] (pure): a Bot API `Update` as an [`parse::Event`] — a button
//!   press or a typed message, with who sent it and where.
//! - [`run`] (the only async code): the Bot API through teloxide, behind
//!   its `Throttle` adaptor, with failures classified for retries, long
//!   polling and webhook registration.
//!
//! It depends on the core and teloxide only: not on askbridge's server
//! crate, its storage or its HTTP framework. The server wires these parts
//! to its bridge (`askbridge::channels::telegram`).

pub mod parse;
pub mod render;
pub mod run;

pub use render::ChatRef;

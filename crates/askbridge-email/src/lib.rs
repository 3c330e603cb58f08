//! askbridge's email channel: a question goes out as a mail, the person
//! answers by replying. Three parts:
//!
//! - [`render`] (pure): an ask, and the follow-ups in its thread, as the
//!   mails askbridge sends (`lettre` messages: a text and an HTML part,
//!   threading headers, a plus-address to reply to, and the headers that
//!   ask auto-responders not to answer).
//! - [`parse`] (pure): a reply as the mail server holds it (RFC 5322
//!   bytes) read into what askbridge needs — who sent it, which mail it
//!   answers (`In-Reply-To`, `References`, a plus-address token), whether
//!   a machine sent it (auto-replies, lists, bounces), what each receiving
//!   server's DMARC check said, and the part the person wrote (through
//!   [`askbridge_core::written`]).
//!
//! - [`link`] (pure): one-click answers, signed and expiring.
//! - [`run`] (the only I/O): sending by SMTP, reading the bot's folder by
//!   IMAP (IDLE where the server has it).
//!
//! It knows no askbridge server crate: the daemon wires these parts to
//! the bridge.

pub mod link;
pub mod parse;
pub mod render;
pub mod run;

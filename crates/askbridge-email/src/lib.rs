//! askbridge's email channel: a question goes out as a mail, the person
//! answers by replying. Two parts:
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
//! It depends on the core, `mail-parser` and `lettre`'s message builder
//! only: no SMTP, no IMAP, no async runtime, no askbridge server crate. Sending and fetching mail
//! belong in a `run` module that wires these parts to the bridge.

pub mod parse;
pub mod render;

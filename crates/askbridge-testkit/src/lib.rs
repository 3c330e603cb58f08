//! Test support for askbridge: faithful local fakes of the chat platforms'
//! APIs, served on `127.0.0.1`, so that askbridge's real platform clients can
//! be exercised end to end without the internet.
//!
//! This crate is for tests only; nothing in production may depend on it. It
//! must not depend on askbridge's own crates either: a fake describes the
//! platform, never askbridge, so that a test against it checks askbridge
//! against the platform's behaviour rather than against itself.
//!
//! - [`telegram`]: a fake of the Telegram Bot API ([`telegram::FakeTelegram`]).
//! - [`discord`]: a fake of Discord's REST API and gateway
//!   ([`discord::FakeDiscord`]).
//! - [`slack`]: a fake of Slack's Web API, Socket Mode and response URLs
//!   ([`slack::FakeSlack`]).
//! - [`feishu`]: a fake of Feishu / Lark's Open API, long connection and
//!   HTTP callbacks ([`feishu::FakeFeishu`]).
//! - [`synapse`]: not a fake but a real Matrix homeserver, Synapse, started
//!   for a test ([`synapse::Synapse`]), and a real Matrix client acting as a
//!   test's person ([`synapse::Person`]).
//! - [`mail`]: not a fake but real mail servers: Dovecot for the bot's
//!   mailbox, IMAP and LMTP ([`mail::Dovecot`]), and an SMTP server that
//!   records what it is sent ([`mail::SmtpSink`]).
//! - [`playground`]: not a fake but Microsoft's own Teams emulator, the
//!   Agents Playground from npm, run for a test
//!   ([`playground::Playground`]); [`teams`], a fake of the Bot Connector
//!   for what the Playground cannot say (rate limits, refused tokens, a
//!   bot removed from a conversation: [`teams::FakeConnector`]).
//!
//! Every fake can fail a chosen share of its API requests the same way
//! ([`faults`]): rate limits in the platform's form, `500`, `502`, closed
//! connections, no answer.

pub mod discord;
pub mod faults;
pub mod feishu;
mod logs;
pub mod mail;
pub mod playground;
pub mod slack;
pub mod synapse;
pub mod teams;
pub mod telegram;
mod watched;

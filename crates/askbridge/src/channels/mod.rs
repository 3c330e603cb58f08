//! The chat platforms' wiring: each platform crate's client, parser and
//! drawing joined to the bridge through the chat driver
//! ([`crate::chat::driver`]), with the platform's own routes and
//! connections. One file each; every rule they share is the driver's.

pub mod discord;
pub mod email;
pub mod feishu;
pub mod matrix;
pub mod slack;
pub mod teams;
pub mod telegram;

//! Soak runs against faulty platforms: the harness every platform shares
//! and each platform's side.

pub mod discord;
pub mod feishu;
pub mod harness;
pub mod slack;
pub mod telegram;

//! What the bridge needs from a channel: deliver an ask, show progress,
//! close the question when it ends. Implemented by the web channel, and for
//! Telegram, Discord and Slack by the chat driver (`crate::chat::driver`).

use std::future::Future;
use std::pin::Pin;

use askbridge_core::model::ChannelKind;

use super::AskView;

/// A boxed future, so the trait stays object-safe.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// Why a delivery failed, classified for retries.
#[derive(Debug, thiserror::Error)]
pub enum DeliveryError {
    /// The platform asked us to wait this many seconds.
    #[error("rate limited, retry after {0} s")]
    RetryAfter(u64),
    /// A passing failure (network, 5xx): retry with backoff.
    #[error("transient delivery failure: {0}")]
    Transient(String),
    /// It will never work (chat not found, bot blocked): the ask ends as
    /// `delivery_failed` with this reason.
    #[error("{0}")]
    Permanent(String),
}

/// A place asks are posted to and answers come from.
pub trait Channel: Send + Sync + std::fmt::Debug {
    /// Which targets this channel serves.
    fn kind(&self) -> ChannelKind;

    /// Posts a new ask.
    fn deliver<'a>(&'a self, ask: &'a AskView) -> BoxFuture<'a, Result<(), DeliveryError>>;

    /// Shows progress (partial answers, a clarifying question).
    fn update<'a>(&'a self, ask: &'a AskView) -> BoxFuture<'a, Result<(), DeliveryError>>;

    /// Closes the question: controls removed, status line added.
    fn end<'a>(&'a self, ask: &'a AskView) -> BoxFuture<'a, Result<(), DeliveryError>>;
}

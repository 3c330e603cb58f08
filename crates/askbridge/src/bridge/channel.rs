//! What the bridge needs from a channel: deliver an ask, show progress,
//! close the question when it ends. Implemented by the web channel, and for
//! Telegram, Discord and Slack by the chat driver (`crate::chat::driver`).

use std::future::Future;
use std::pin::Pin;

use askbridge_core::failure::PlatformFailure;
use askbridge_core::model::{ChannelKind, Notice, Target};

use super::AskView;

/// A boxed future, so the trait stays object-safe.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// A place asks are posted to and answers come from.
pub trait Channel: Send + Sync + std::fmt::Debug {
    /// Which targets this channel serves.
    fn kind(&self) -> ChannelKind;

    /// The lease an instance must hold to post, update and close asks on
    /// this channel (`None`: any instance may). Matrix's client knows the
    /// bot's rooms and keys only on the instance that syncs, so its asks
    /// follow its sync lease: that instance claims them, whichever
    /// instance created them, and closes them wherever they ended.
    fn lease(&self) -> Option<&'static str> {
        None
    }

    /// Posts a new ask in its place number `place` ([`AskView::places`]),
    /// one of this channel's. Called again after a failure or a crash, it
    /// posts only what is not posted there yet.
    fn deliver<'a>(
        &'a self,
        ask: &'a AskView,
        place: usize,
    ) -> BoxFuture<'a, Result<(), PlatformFailure>>;

    /// Shows progress (partial answers, a clarifying question) in place
    /// number `place`.
    fn update<'a>(
        &'a self,
        ask: &'a AskView,
        place: usize,
    ) -> BoxFuture<'a, Result<(), PlatformFailure>>;

    /// Reminds the person of the ask in place number `place` (reminder
    /// `number`, from 0), where it was posted: a reply to the question
    /// that mentions its user where the platform can. By default nothing
    /// (the web page shows how long is left already).
    fn remind<'a>(
        &'a self,
        ask: &'a AskView,
        place: usize,
        number: u32,
    ) -> BoxFuture<'a, Result<(), PlatformFailure>> {
        let _ = (ask, place, number);
        Box::pin(async { Ok(()) })
    }

    /// Posts `notice` at `target` (one of this channel's), once per
    /// `once` where the platform takes an idempotency key; returns how
    /// many messages it took. By default the channel shows no notices.
    fn notify<'a>(
        &'a self,
        notice: &'a Notice,
        target: &'a Target,
        once: &'a str,
    ) -> BoxFuture<'a, Result<usize, PlatformFailure>> {
        let _ = (notice, target, once);
        let kind = self.kind();
        Box::pin(async move {
            Err(PlatformFailure::Permanent(format!(
                "the {} channel shows asks, not notices; send notices to a chat",
                kind.as_str()
            )))
        })
    }

    /// Closes the question in place number `place`: controls removed,
    /// status line added.
    fn end<'a>(
        &'a self,
        ask: &'a AskView,
        place: usize,
    ) -> BoxFuture<'a, Result<(), PlatformFailure>>;
}

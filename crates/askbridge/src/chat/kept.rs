//! What a channel keeps of what its platform said, so that a restart, or
//! another instance, can still use it: Teams' service URLs and people's
//! ids, the subjects and reply tokens of the mails askbridge sent, a
//! mailbox's progress. Each value is stored under a key of the channel's
//! own (the bridge's channel values) and remembered once read or kept.

use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};

use askbridge_core::failure::PlatformFailure;
use askbridge_core::model::ChannelKind;

use crate::bridge::{Bridge, WeakBridge};

/// One channel's kept values.
#[derive(Debug)]
pub struct Kept {
    kind: ChannelKind,
    known: Mutex<HashMap<String, String>>,
    bridge: WeakBridge,
}

impl Kept {
    /// The values `kind` keeps with `bridge`.
    pub fn new(kind: ChannelKind, bridge: &Bridge) -> Kept {
        Kept {
            kind,
            known: Mutex::default(),
            bridge: bridge.downgrade(),
        }
    }

    /// The value kept under `key`: remembered, else read.
    pub async fn get(&self, key: &str) -> Result<Option<String>, PlatformFailure> {
        if let Some(value) = self.cached(key) {
            return Ok(Some(value));
        }
        let bridge = self.bridge()?;
        let stored = bridge
            .channel_value(self.kind, key)
            .await
            .map_err(transient)?;
        if let Some(value) = &stored {
            self.remember(key, value);
        }
        Ok(stored)
    }

    /// Keeps `value` under `key` (in the database, once it changes); a
    /// failure to store it is logged, and it is remembered all the same.
    pub async fn keep(&self, key: &str, value: &str) {
        if let Err(error) = self.store(key, value).await {
            tracing::warn!(error = %error, key, channel = self.kind.as_str(), "cannot keep a value");
        }
    }

    /// Keeps `value` under `key`, saying whether it was stored.
    pub async fn store(&self, key: &str, value: &str) -> Result<(), PlatformFailure> {
        if self.cached(key).as_deref() == Some(value) {
            return Ok(());
        }
        self.remember(key, value);
        let bridge = self.bridge()?;
        bridge
            .set_channel_value(self.kind, key, value)
            .await
            .map_err(transient)
    }

    /// The value under `key`: kept, else `value`, kept unless another
    /// instance kept one first (then that one).
    pub async fn first(&self, key: &str, value: &str) -> Result<String, PlatformFailure> {
        if let Some(kept) = self.cached(key) {
            return Ok(kept);
        }
        let bridge = self.bridge()?;
        let standing = bridge
            .first_channel_value(self.kind, key, value)
            .await
            .map_err(transient)?;
        self.remember(key, &standing);
        Ok(standing)
    }

    /// The bridge, unless it is shutting down.
    fn bridge(&self) -> Result<Bridge, PlatformFailure> {
        self.bridge
            .upgrade()
            .ok_or_else(|| PlatformFailure::Transient("the bridge is shutting down".to_owned()))
    }

    fn cached(&self, key: &str) -> Option<String> {
        self.lock().get(key).cloned()
    }

    fn remember(&self, key: &str, value: &str) {
        self.lock().insert(key.to_owned(), value.to_owned());
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, String>> {
        self.known.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// A store failure, as one that may pass.
fn transient(error: crate::bridge::BridgeError) -> PlatformFailure {
    PlatformFailure::Transient(error.to_string())
}

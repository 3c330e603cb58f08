//! Why a call to a chat platform failed, classified for retries: the one
//! type every platform crate's `classify` makes of its client's errors and
//! the daemon acts on (wait, retry, or end the ask as `delivery_failed`).

/// Why a call to a chat platform failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PlatformFailure {
    /// The platform asked us to wait this many seconds.
    #[error("rate limited, retry after {0} s")]
    RetryAfter(u64),
    /// A passing failure (network, a timeout, a 5xx, a garbled answer):
    /// retry with backoff.
    #[error("unreachable or failing: {0}")]
    Transient(String),
    /// It will not work if repeated (chat not found, bot blocked, no
    /// access, a bad request or token): the platform's own words, which
    /// end an ask as `delivery_failed`.
    #[error("{0}")]
    Permanent(String),
}

impl PlatformFailure {
    /// The platform's words when it refused for good.
    pub fn refusal(&self) -> Option<&str> {
        match self {
            PlatformFailure::Permanent(reason) => Some(reason),
            _ => None,
        }
    }
}

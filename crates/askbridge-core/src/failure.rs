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

/// A platform client that cannot work with its settings (a malformed
/// token, an API URL that is not http(s), a signing key that does not
/// read), or credentials the platform refused: only a change of
/// configuration helps, so it is never retried. The text says which
/// setting and what is wrong with it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct SetupError(pub String);

/// A request from a platform that is refused: its body does not read, or
/// it is not signed as the platform signs. Answered with a 4xx, never
/// retried; the text says what was wrong.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct BadRequest(pub String);

impl From<String> for SetupError {
    fn from(reason: String) -> SetupError {
        SetupError(reason)
    }
}

impl From<&str> for SetupError {
    fn from(reason: &str) -> SetupError {
        SetupError(reason.to_owned())
    }
}

impl From<&str> for BadRequest {
    fn from(reason: &str) -> BadRequest {
        BadRequest(reason.to_owned())
    }
}

impl From<String> for BadRequest {
    fn from(reason: String) -> BadRequest {
        BadRequest(reason)
    }
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

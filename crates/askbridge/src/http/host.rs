//! Who may answer as the agent's host over HTTP.
//!
//! The host (the agent host's own dialog, which may answer any ask) is
//! granted by a credential, never by a body field: `POST /v1/asks` gives
//! the ask's creator a `hostKey`, an HMAC of the ask id under a secret of
//! the database, and a reply that carries it in [`HEADER`] is the host's.
//! Every instance on the same database makes the same key, and it holds
//! across restarts; a client that did not create the ask (the web page, a
//! script, another local process) cannot make it.

use std::sync::Arc;

use hmac::{Hmac, Mac};
use sha2::Sha256;
use tokio::sync::OnceCell;

use crate::bridge::{Bridge, BridgeError};

pub use crate::wire::request::HOST_KEY_HEADER as HEADER;

/// The name of the database secret the keys are made with.
const SECRET: &str = "http/host-key";

/// The host keys of this database's asks. Cheap to clone; clones share
/// the secret, read from the database once.
#[derive(Debug, Clone, Default)]
pub struct HostKeys(Arc<OnceCell<String>>);

impl HostKeys {
    /// The key of ask `id`.
    pub async fn key(&self, bridge: &Bridge, id: &str) -> Result<String, BridgeError> {
        let secret = self.0.get_or_try_init(|| bridge.secret(SECRET)).await?;
        Ok(key(secret, id))
    }

    /// Whether `given` is ask `id`'s key (compared in constant time).
    pub async fn verify(
        &self,
        bridge: &Bridge,
        id: &str,
        given: &str,
    ) -> Result<bool, BridgeError> {
        let expected = self.key(bridge, id).await?;
        Ok(super::same_secret(
            given.trim().as_bytes(),
            expected.as_bytes(),
        ))
    }
}

fn key(secret: &str, id: &str) -> String {
    let mut mac =
        Hmac::<Sha256>::new_from_slice(secret.as_bytes()).expect("HMAC takes a key of any length");
    mac.update(b"askbridge host key v1\n");
    mac.update(id.as_bytes());
    hex::encode(mac.finalize().into_bytes())
}

#[cfg(test)]
mod tests {
    use super::key;

    #[test]
    fn a_key_belongs_to_one_ask_and_one_secret() {
        let one = key("secret", "ask_1");
        assert_eq!(one, key("secret", "ask_1"));
        assert_eq!(one.len(), 64);
        assert_ne!(one, key("secret", "ask_2"));
        assert_ne!(one, key("another secret", "ask_1"));
    }
}

//! A client for a running daemon's HTTP API (`askbridge serve`): create an
//! ask, long-poll it, cancel it.
//!
//! `askbridge mcp --server URL` forwards through it, so many agent processes
//! share one daemon and its bot connections; `askbridge ask` uses it too.
//! Responses stay JSON values: the daemon's wire format is the contract, and
//! this client only checks the parts it acts on (`id`, `status`, `error`).

use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use serde_json::Value;

use super::expiring::{ASK_LIFETIME, Expiring};
use crate::wire::api::HookSettings;
use crate::wire::request::HOST_KEY_HEADER;

/// The longest single long-poll asked of the daemon, in seconds; longer
/// waits are a loop of these.
pub const MAX_POLL_SECONDS: u64 = 300;

/// Extra time given to a long-poll request beyond its `wait`, so a slow
/// answer is not mistaken for a dead daemon.
const REQUEST_SLACK: Duration = Duration::from_secs(30);

/// How many asks' host keys one client keeps at most; past that, the
/// oldest go (and the host can no longer answer those asks as the host).
const HOST_KEYS_AT_MOST: usize = 10_000;

/// The daemon's API token, sent by clients that find it set.
pub const TOKEN_ENV: &str = "ASKBRIDGE_API_TOKEN";

/// Why a call to the daemon failed.
#[derive(Debug, thiserror::Error)]
pub enum DaemonError {
    /// The URL given for the daemon is not an `http://` or `https://` URL.
    #[error("{0:?} is not a daemon URL; expected http://HOST:PORT or https://HOST")]
    BadUrl(String),
    /// The API token cannot be sent in a header.
    #[error(
        "ASKBRIDGE_API_TOKEN cannot be sent as a bearer token (it has a line break or another control character)"
    )]
    BadToken,
    /// Nothing answered at the URL (refused, reset, timed out).
    #[error("cannot reach the askbridge daemon at {url}")]
    Unreachable {
        /// The daemon's base URL.
        url: String,
        /// What the connection attempt said.
        #[source]
        source: reqwest::Error,
    },
    /// The daemon answered with an API error (`{"error": {code, message, path}}`).
    #[error("the daemon refused the request ({status} {code}): {}", refusal(.path.as_deref(), .message))]
    Refused {
        /// The HTTP status.
        status: u16,
        /// The error code (`invalid_ask`, `not_found`, …).
        code: String,
        /// The daemon's message.
        message: String,
        /// The JSON path the error is about, when it names one.
        path: Option<String>,
    },
    /// The daemon's answer was not what its API promises.
    #[error("unexpected answer from the daemon at {url}: {detail}")]
    Protocol {
        /// The daemon's base URL.
        url: String,
        /// What was wrong.
        detail: String,
    },
}

fn refusal(path: Option<&str>, message: &str) -> String {
    match path {
        Some(path) if !path.is_empty() && !message.starts_with(path) => {
            format!("{path}: {message}")
        }
        _ => message.to_owned(),
    }
}

impl DaemonError {
    /// Whether the daemon said there is no such ask.
    pub fn is_not_found(&self) -> bool {
        matches!(self, DaemonError::Refused { status: 404, .. })
    }
}

/// A handle on one daemon. Cheap to clone. Its `Debug` leaves the token
/// out.
#[derive(Clone)]
pub struct DaemonClient {
    base: String,
    http: reqwest::Client,
    /// The API token sent, if any.
    token: Option<String>,
    /// The host keys of the asks this client created (or was handed in a
    /// round trip's state), by ask id: what makes its replies the host's.
    /// Forgotten when the ask is seen ended, and after the longest an ask
    /// can stay open.
    host_keys: Arc<Mutex<Expiring<String>>>,
}

impl std::fmt::Debug for DaemonClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DaemonClient")
            .field("base", &self.base)
            .field("token", &self.token.as_ref().map(|_| "…"))
            .finish_non_exhaustive()
    }
}

impl DaemonClient {
    /// A client for the daemon at `url` (`http://127.0.0.1:8790`, or an
    /// `https://` one behind TLS); a trailing slash is ignored. Nothing is
    /// contacted yet.
    pub fn new(url: &str) -> Result<DaemonClient, DaemonError> {
        let base = url.trim().trim_end_matches('/').to_owned();
        let Some(rest) = base
            .strip_prefix("http://")
            .or_else(|| base.strip_prefix("https://"))
        else {
            return Err(DaemonError::BadUrl(url.to_owned()));
        };
        if rest.is_empty() || rest.contains(['?', '#', ' ']) {
            return Err(DaemonError::BadUrl(url.to_owned()));
        }
        let http = reqwest::Client::builder()
            .connect_timeout(Duration::from_secs(10))
            .build()
            .map_err(|source| DaemonError::Unreachable {
                url: base.clone(),
                source,
            })?;
        Ok(DaemonClient {
            base,
            http,
            token: None,
            host_keys: Arc::new(Mutex::new(Expiring::new(ASK_LIFETIME, HOST_KEYS_AT_MOST))),
        })
    }

    /// The same client, sending `token` as the bearer token of every
    /// request (the daemon's `api_token`), when there is one.
    pub fn with_token(self, token: Option<&str>) -> Result<DaemonClient, DaemonError> {
        let Some(token) = token.map(str::trim).filter(|token| !token.is_empty()) else {
            return Ok(self);
        };
        let mut value = reqwest::header::HeaderValue::from_str(&format!("Bearer {token}"))
            .map_err(|_| DaemonError::BadToken)?;
        value.set_sensitive(true);
        let headers =
            reqwest::header::HeaderMap::from_iter([(reqwest::header::AUTHORIZATION, value)]);
        let http = reqwest::Client::builder()
            .connect_timeout(Duration::from_secs(10))
            .default_headers(headers)
            .build()
            .map_err(|source| DaemonError::Unreachable {
                url: self.base.clone(),
                source,
            })?;
        Ok(DaemonClient {
            base: self.base,
            http,
            token: Some(token.to_owned()),
            host_keys: self.host_keys,
        })
    }

    /// The daemon's base URL.
    pub fn url(&self) -> &str {
        &self.base
    }

    /// A key only this daemon's clients can make: its URL and API token.
    /// Every forwarder to the same daemon, new or restarted, makes the same
    /// one; without a token it is no more secret than the daemon's API.
    pub fn shared_key(&self) -> Vec<u8> {
        format!(
            "askbridge forwarder key\n{}\n{}",
            self.base,
            self.token.as_deref().unwrap_or_default()
        )
        .into_bytes()
    }

    /// `POST /v1/asks[?wait=…]`: creates an ask from `body` (any dialect,
    /// or `{"ask", "to"}`) and returns the daemon's answer: the pending ask,
    /// or the outcome when it ended within `wait`.
    pub async fn create(&self, body: &Value, wait: Option<Duration>) -> Result<Value, DaemonError> {
        self.create_keyed(body, wait, None).await
    }

    /// [`DaemonClient::create`] with an `Idempotency-Key`: the same key
    /// gives back the ask it created the first time.
    pub async fn create_keyed(
        &self,
        body: &Value,
        wait: Option<Duration>,
        key: Option<&str>,
    ) -> Result<Value, DaemonError> {
        let (query, wait) = wait_query(wait);
        let mut request = self
            .http
            .post(format!("{}/v1/asks{query}", self.base))
            .json(body)
            .timeout(wait + REQUEST_SLACK);
        if let Some(key) = key {
            request = request.header("idempotency-key", key);
        }
        let answer = self.send(request).await?;
        if let (Some(id), Some(key), Some("pending")) = (
            answer.get("id").and_then(Value::as_str),
            answer.get("hostKey").and_then(Value::as_str),
            status_of(&answer),
        ) {
            self.remember_host_key(id, key);
        }
        Ok(answer)
    }

    fn host_keys(&self) -> MutexGuard<'_, Expiring<String>> {
        self.host_keys
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// The host key of ask `id`, when this client knows it.
    pub fn host_key(&self, id: &str) -> Option<String> {
        self.host_keys().get(id, Instant::now()).cloned()
    }

    /// Keeps ask `id`'s host key, for [`DaemonClient::reply`].
    pub fn remember_host_key(&self, id: &str, key: &str) {
        let dropped = self.host_keys().put(id, key.to_owned(), Instant::now());
        if dropped > 0 {
            tracing::warn!(
                ask_id = %id,
                dropped,
                "too many open asks: forgot the host keys of the oldest (the host can no longer answer them)"
            );
        }
    }

    /// Forgets ask `id`'s host key once the host has answered it.
    pub fn forget_host_key(&self, id: &str) {
        self.host_keys().remove(id);
    }

    /// `GET /v1/asks/{id}[?wait=…]`: the ask as it is, or its outcome once
    /// it ends within `wait`.
    pub async fn get(&self, id: &str, wait: Option<Duration>) -> Result<Value, DaemonError> {
        self.get_with(id, wait, "").await
    }

    /// [`DaemonClient::get`] holding the ask (`hold=true`): the daemon
    /// cancels it if this request is dropped before it ends — the process
    /// waiting on it was killed.
    pub async fn get_holding(&self, id: &str, wait: Duration) -> Result<Value, DaemonError> {
        self.get_with(id, Some(wait), "&hold=true").await
    }

    async fn get_with(
        &self,
        id: &str,
        wait: Option<Duration>,
        more: &str,
    ) -> Result<Value, DaemonError> {
        let id = self.checked_id(id)?;
        let (query, wait) = wait_query(wait);
        let more = if query.is_empty() { "" } else { more };
        let request = self
            .http
            .get(format!("{}/v1/asks/{id}{query}{more}", self.base))
            .timeout(wait + REQUEST_SLACK);
        let answer = self.send(request).await?;
        self.note_ended(id, &answer);
        Ok(answer)
    }

    /// `GET /v1/hooks`: how coding agents' hooks ask (`[hooks]`).
    pub async fn hook_settings(&self) -> Result<HookSettings, DaemonError> {
        let request = self
            .http
            .get(format!("{}/v1/hooks", self.base))
            .timeout(REQUEST_SLACK);
        let answer = self.send(request).await?;
        serde_json::from_value(answer.clone()).map_err(|error| DaemonError::Protocol {
            url: self.base.clone(),
            detail: format!("unreadable hook settings ({error}): {answer}"),
        })
    }

    /// `POST /v1/notices` (named by `key`): posts a message that asks
    /// nothing; what the daemon answers.
    pub async fn notify(&self, body: &Value, key: &str) -> Result<Value, DaemonError> {
        let request = self
            .http
            .post(format!("{}/v1/notices", self.base))
            .header("idempotency-key", key)
            .json(body)
            .timeout(REQUEST_SLACK);
        self.send(request).await
    }

    /// `GET /healthz`: whether the daemon answers within `within`; what it
    /// says of itself.
    pub async fn health(&self, within: Duration) -> Result<Value, DaemonError> {
        let request = self
            .http
            .get(format!("{}/healthz", self.base))
            .timeout(within);
        self.send(request).await
    }

    /// `DELETE /v1/asks/{id}`: cancels a pending ask; returns what the
    /// daemon answers (normally the cancelled outcome).
    pub async fn cancel(&self, id: &str) -> Result<Value, DaemonError> {
        self.end(id, "agent").await
    }

    /// `DELETE /v1/asks/{id}?because=answered_in_host`: the person answered
    /// in the agent host's own prompt instead; the chat message closes
    /// saying so.
    pub async fn close_answered_in_host(&self, id: &str) -> Result<Value, DaemonError> {
        self.end(id, "answered_in_host").await
    }

    /// `DELETE /v1/asks/{id}?because=BECAUSE`.
    async fn end(&self, id: &str, because: &str) -> Result<Value, DaemonError> {
        let id = self.checked_id(id)?;
        let request = self
            .http
            .delete(format!("{}/v1/asks/{id}?because={because}", self.base))
            .timeout(REQUEST_SLACK);
        let answer = self.send(request).await?;
        self.note_ended(id, &answer);
        Ok(answer)
    }

    /// Forgets ask `id`'s host key once the daemon's `answer` says the ask
    /// has ended: no reply can be taken any more.
    fn note_ended(&self, id: &str, answer: &Value) {
        if matches!(status_of(answer), Some("answered" | "no_answer")) {
            self.forget_host_key(id);
        }
    }

    /// `POST /v1/asks/{id}/reply`: answers (or skips) a pending ask with
    /// `body`, as the host when this client knows the ask's host key; a
    /// refusal (already ended, not the host) is an error.
    pub async fn reply(&self, id: &str, body: &Value) -> Result<Value, DaemonError> {
        let id = self.checked_id(id)?;
        let request = self
            .http
            .post(format!("{}/v1/asks/{id}/reply", self.base))
            .json(body)
            .timeout(REQUEST_SLACK);
        let request = match self.host_key(id) {
            Some(key) => request.header(HOST_KEY_HEADER, key),
            None => request,
        };
        self.send(request).await
    }

    /// Refuses ids that would change the URL's meaning (`/`, `?`, …) as
    /// unknown, the way the daemon would answer for them.
    fn checked_id<'a>(&self, id: &'a str) -> Result<&'a str, DaemonError> {
        let plain = !id.is_empty()
            && id
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
        if plain {
            Ok(id)
        } else {
            Err(DaemonError::Refused {
                status: 404,
                code: "not_found".to_owned(),
                message: format!("no ask with id {id:?}"),
                path: None,
            })
        }
    }

    async fn send(&self, request: reqwest::RequestBuilder) -> Result<Value, DaemonError> {
        let response = request
            .send()
            .await
            .map_err(|source| self.transport(source))?;
        let status = response.status();
        let bytes = response
            .bytes()
            .await
            .map_err(|source| self.transport(source))?;
        let body: Value =
            serde_json::from_slice(&bytes).map_err(|error| DaemonError::Protocol {
                url: self.base.clone(),
                detail: format!(
                    "HTTP {status} with a body that is not JSON ({error}): {}",
                    String::from_utf8_lossy(&bytes[..bytes.len().min(200)])
                ),
            })?;
        if status.is_success() {
            return Ok(body);
        }
        let error = body.get("error");
        let field = |name: &str| {
            error
                .and_then(|e| e.get(name))
                .and_then(Value::as_str)
                .map(str::to_owned)
        };
        Err(DaemonError::Refused {
            status: status.as_u16(),
            code: field("code").unwrap_or_else(|| "error".to_owned()),
            message: field("message").unwrap_or_else(|| body.to_string()),
            path: field("path"),
        })
    }

    fn transport(&self, source: reqwest::Error) -> DaemonError {
        if source.is_decode() || source.is_body() {
            DaemonError::Protocol {
                url: self.base.clone(),
                detail: source.to_string(),
            }
        } else {
            DaemonError::Unreachable {
                url: self.base.clone(),
                source,
            }
        }
    }
}

/// The `?wait=` query for a wait (whole seconds, rounded up, at most
/// [`MAX_POLL_SECONDS`]) and the wait it stands for.
fn wait_query(wait: Option<Duration>) -> (String, Duration) {
    match wait {
        Some(wait) if !wait.is_zero() => {
            let secs = wait
                .as_secs()
                .saturating_add(u64::from(wait.subsec_nanos() > 0))
                .min(MAX_POLL_SECONDS);
            (format!("?wait={secs}"), Duration::from_secs(secs))
        }
        _ => (String::new(), Duration::ZERO),
    }
}

/// The `status` of a daemon answer: `pending`, `answered` or `no_answer`.
pub fn status_of(body: &Value) -> Option<&str> {
    body.get("status").and_then(Value::as_str)
}

/// The `id` of a daemon answer.
pub fn id_of(body: &Value) -> Option<&str> {
    body.get("id").and_then(Value::as_str)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wait_query_rounds_up_and_caps() {
        assert_eq!(wait_query(None).0, "");
        assert_eq!(wait_query(Some(Duration::ZERO)).0, "");
        assert_eq!(wait_query(Some(Duration::from_millis(200))).0, "?wait=1");
        assert_eq!(wait_query(Some(Duration::from_secs(5))).0, "?wait=5");
        assert_eq!(wait_query(Some(Duration::from_secs(4000))).0, "?wait=300");
    }

    #[test]
    fn urls_must_be_http_or_https() {
        assert!(DaemonClient::new("http://127.0.0.1:8790/").is_ok());
        assert_eq!(
            DaemonClient::new("http://127.0.0.1:8790/")
                .map(|c| c.url().to_owned())
                .ok(),
            Some("http://127.0.0.1:8790".to_owned())
        );
        assert!(matches!(
            DaemonClient::new("127.0.0.1:8790"),
            Err(DaemonError::BadUrl(_))
        ));
        assert_eq!(
            DaemonClient::new("https://askbridge.example.com/")
                .map(|c| c.url().to_owned())
                .ok(),
            Some("https://askbridge.example.com".to_owned())
        );
        assert!(matches!(
            DaemonClient::new("ftp://example.com"),
            Err(DaemonError::BadUrl(_))
        ));
    }

    #[test]
    fn ids_that_would_change_the_url_are_unknown() {
        let client = DaemonClient::new("http://127.0.0.1:1").expect("valid url");
        assert!(client.checked_id("ask_01JF").is_ok());
        for id in ["", "../healthz", "a?b", "a/b", "a b"] {
            assert!(
                client.checked_id(id).is_err_and(|e| e.is_not_found()),
                "{id}"
            );
        }
    }

    #[test]
    fn a_host_key_is_forgotten_once_its_ask_is_seen_ended() {
        let client = DaemonClient::new("http://127.0.0.1:1").expect("valid url");
        client.remember_host_key("ask_1", "key");
        client.note_ended(
            "ask_1",
            &serde_json::json!({"id": "ask_1", "status": "pending"}),
        );
        assert_eq!(client.host_key("ask_1").as_deref(), Some("key"));
        client.note_ended(
            "ask_1",
            &serde_json::json!({"id": "ask_1", "status": "answered"}),
        );
        assert_eq!(client.host_key("ask_1"), None);
    }

    #[test]
    fn a_client_keeps_the_host_keys_of_so_many_asks_at_most() {
        let client = DaemonClient::new("http://127.0.0.1:1").expect("valid url");
        for n in 0..=HOST_KEYS_AT_MOST {
            client.remember_host_key(&format!("ask_{n}"), "key");
        }
        assert_eq!(client.host_keys().len(), HOST_KEYS_AT_MOST);
        assert_eq!(client.host_key("ask_0"), None);
        assert!(client.host_key("ask_1").is_some());
    }

    #[test]
    fn refusals_name_the_path_once() {
        let error = DaemonError::Refused {
            status: 400,
            code: "invalid_ask".to_owned(),
            message: "needs at least 2 options".to_owned(),
            path: Some("questions[0].options".to_owned()),
        };
        assert_eq!(
            error.to_string(),
            "the daemon refused the request (400 invalid_ask): questions[0].options: needs at least 2 options"
        );
    }
}

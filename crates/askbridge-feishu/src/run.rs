//! Feishu's Open API, its long connection and the check of its HTTP
//! callbacks: the only async code of this crate.
//!
//! There is no Feishu client on the registries that this crate would
//! rather use: `open-lark` / `openlark` change shape between minor
//! versions and bring far more than three message calls need, so this is
//! a thin client on `reqwest`:
//!
//! - [`FeishuApi`]: the app's tenant access token, fetched on first use
//!   and again before it expires (or when Feishu says it is no longer
//!   valid); messages sent, replied to and updated; the bot's own info.
//!   Feishu's limits are kept on this side too (governor): 50 requests a
//!   second to each message endpoint, 5 messages a second to one chat.
//!   Failures are classified ([`classify`]): Feishu's app-wide limit
//!   (HTTP 429, code 99991400) waits what `x-ogw-ratelimit-reset` says,
//!   the per-chat limit (230020) a second, 5xx and network failures are
//!   passing, everything else is Feishu's refusal in its own words.
//! - [`CallbackCheck`]: a callback body decrypted with the encrypt key
//!   (AES-256-CBC, key = SHA-256 of the encrypt key, IV first) and its
//!   `X-Lark-Signature` checked; stale requests refused.
//! - [`LongConnection`]: the WebSocket Feishu pushes events and card
//!   callbacks over (no public URL needed): the endpoint asked for with
//!   the app's credentials, protobuf frames (`pbbp2.Frame`), pings at the
//!   interval Feishu names, every push answered in a frame of its own, and
//!   the connection made again when it drops.

use std::collections::HashMap;
use std::future::Future;
use std::num::NonZeroU32;
use std::sync::Arc;
use std::time::{Duration, Instant};

use aes::cipher::{BlockDecryptMut, KeyIvInit, block_padding::Pkcs7};
use askbridge_core::failure::{BadRequest, PlatformFailure, SetupError};
use base64::Engine;
use base64::engine::general_purpose::STANDARD as BASE64;
use futures_util::{SinkExt, StreamExt};
use governor::{DefaultDirectRateLimiter, DefaultKeyedRateLimiter, Quota, RateLimiter};
use prost::Message as _;
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;
use tokio::sync::{Mutex, mpsc};
use tokio_tungstenite::tungstenite::Message as WsMessage;
use url::Url;

use crate::render::{Destination, Message};

/// Feishu's Open API host; `https://open.larksuite.com` for Lark.
pub const FEISHU_API_URL: &str = "https://open.feishu.cn";
/// The longest a request may take.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(30);
/// A token is fetched again this long before Feishu says it expires (at
/// most half its life).
const TOKEN_MARGIN: Duration = Duration::from_secs(300);
/// Feishu codes for a token that is not (or no longer) valid.
const INVALID_TOKEN_CODES: &[i64] = &[99991661, 99991663, 99991668];
/// The app-wide rate limit.
const RATE_LIMITED_CODE: i64 = 99991400;
/// The per-chat send limit.
const CHAT_RATE_LIMITED_CODE: i64 = 230020;
/// Feishu codes that are worth retrying (internal errors).
const TRANSIENT_CODES: &[i64] = &[1000004, 1000005, 99991401, 230075];
/// A callback older (or newer) than this is refused.
pub const CALLBACK_WINDOW_SECS: u64 = 5 * 60;
/// The first and the longest wait before connecting again.
const RECONNECT_BACKOFF: (Duration, Duration) = (Duration::from_secs(1), Duration::from_secs(30));
/// The ping interval until Feishu names one.
const DEFAULT_PING: Duration = Duration::from_secs(120);
/// The longest Feishu error body quoted in a failure.
const MAX_QUOTED_BODY: usize = 200;
/// The spacing of requests to one message endpoint: Feishu allows 50 a
/// second per app, counted over any second, so they go out evenly and a
/// little slower.
const ENDPOINT_SPACING: Duration = Duration::from_millis(21);
/// The spacing of messages to one chat (Feishu: 5 a second).
const CHAT_SPACING: Duration = Duration::from_millis(201);
/// Chats whose send rate is remembered before the idle ones are dropped.
const REMEMBERED_CHATS: usize = 10_000;

/// The Open API client of one app.
#[derive(Debug, Clone)]
pub struct FeishuApi {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    http: reqwest::Client,
    base: Url,
    app_id: String,
    app_secret: String,
    token: Mutex<Option<Token>>,
    limits: Limits,
}

/// Feishu's send limits, waited for before each request.
#[derive(Debug)]
struct Limits {
    sends: DefaultDirectRateLimiter,
    replies: DefaultDirectRateLimiter,
    updates: DefaultDirectRateLimiter,
    chats: DefaultKeyedRateLimiter<String>,
}

impl Limits {
    fn new() -> Limits {
        let spaced = |spacing| {
            Quota::with_period(spacing).unwrap_or_else(|| Quota::per_second(NonZeroU32::MIN))
        };
        let endpoint = || RateLimiter::direct(spaced(ENDPOINT_SPACING));
        Limits {
            sends: endpoint(),
            replies: endpoint(),
            updates: endpoint(),
            chats: RateLimiter::keyed(spaced(CHAT_SPACING)),
        }
    }

    /// Waits until a message may go to `chat`.
    async fn send_to(&self, chat: &str) {
        self.sends.until_ready().await;
        if self.chats.len() > REMEMBERED_CHATS {
            self.chats.retain_recent();
        }
        self.chats.until_key_ready(&chat.to_owned()).await;
    }
}

#[derive(Debug, Clone)]
struct Token {
    value: String,
    refresh_at: Instant,
}

/// The bot, as `GET /bot/v3/info` describes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BotInfo {
    /// The app's name.
    pub name: String,
    /// The bot's `open_id` (its mentions are removed from messages).
    pub open_id: String,
}

/// A message Feishu took.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sent {
    /// Its id (`om_…`).
    pub message_id: String,
    /// The chat it is in (for a private chat, the one Feishu opened).
    pub chat_id: String,
}

impl FeishuApi {
    /// A client for the app on `api_url` (default [`FEISHU_API_URL`]; the
    /// `/open-apis/…` paths are appended).
    pub fn new(
        app_id: &str,
        app_secret: &str,
        api_url: Option<&str>,
    ) -> Result<FeishuApi, SetupError> {
        let base = api_url.unwrap_or(FEISHU_API_URL).trim_end_matches('/');
        let base = Url::parse(&format!("{base}/"))
            .map_err(|error| format!("api_url {base:?} is not a URL: {error}"))?;
        if !matches!(base.scheme(), "http" | "https") {
            return Err(format!("api_url {base} is not http(s)").into());
        }
        let http = reqwest::Client::builder()
            .timeout(REQUEST_TIMEOUT)
            .build()
            .map_err(|error| format!("cannot build the HTTP client: {error}"))?;
        Ok(FeishuApi {
            inner: Arc::new(Inner {
                http,
                base,
                app_id: app_id.to_owned(),
                app_secret: app_secret.to_owned(),
                token: Mutex::new(None),
                limits: Limits::new(),
            }),
        })
    }

    /// The bot's name and `open_id`.
    pub async fn bot_info(&self) -> Result<BotInfo, PlatformFailure> {
        let body = self
            .call(Method::GET, "open-apis/bot/v3/info", &[], None)
            .await?;
        let bot = &body["bot"];
        Ok(BotInfo {
            name: bot["app_name"].as_str().unwrap_or_default().to_owned(),
            open_id: bot["open_id"].as_str().unwrap_or_default().to_owned(),
        })
    }

    /// A person's name (`GET /contact/v3/users/{open_id}`, which needs the
    /// `contact:user.base:readonly` scope); `None` when Feishu gives none.
    pub async fn user_name(&self, open_id: &str) -> Result<Option<String>, PlatformFailure> {
        let path = format!("open-apis/contact/v3/users/{}", path_segment(open_id)?);
        let body = self
            .call(Method::GET, &path, &[("user_id_type", "open_id")], None)
            .await?;
        Ok(body["data"]["user"]["name"]
            .as_str()
            .map(str::trim)
            .filter(|name| !name.is_empty())
            .map(str::to_owned))
    }

    /// Sends `message` as a new message. `uuid` (at most 50 characters)
    /// makes it once: the same `uuid` within an hour is the message
    /// already sent.
    pub async fn send(
        &self,
        to: &Destination,
        message: &Message,
        uuid: &str,
    ) -> Result<Sent, PlatformFailure> {
        let (kind, id) = to.receive_id();
        self.inner.limits.send_to(id).await;
        let body = json!({
            "receive_id": id,
            "msg_type": "interactive",
            "content": message.content(),
            "uuid": uuid,
        });
        let answer = self
            .call(
                Method::POST,
                "open-apis/im/v1/messages",
                &[("receive_id_type", kind)],
                Some(body),
            )
            .await?;
        sent(&answer)
    }

    /// Sends `message` as a reply to `message_id` (in its thread, made
    /// if need be, with `in_thread`); `uuid`, as for [`FeishuApi::send`],
    /// makes it one reply however often it is sent within the hour.
    pub async fn reply(
        &self,
        message_id: &str,
        message: &Message,
        uuid: Option<&str>,
        in_thread: bool,
    ) -> Result<Sent, PlatformFailure> {
        let mut body = json!({
            "msg_type": "interactive",
            "content": message.content(),
        });
        if in_thread {
            body["reply_in_thread"] = json!(true);
        }
        if let Some(uuid) = uuid {
            body["uuid"] = json!(uuid);
        }
        let path = format!(
            "open-apis/im/v1/messages/{}/reply",
            path_segment(message_id)?
        );
        self.inner.limits.replies.until_ready().await;
        let answer = self.call(Method::POST, &path, &[], Some(body)).await?;
        sent(&answer)
    }

    /// Shows `message` to `open_id` alone in the group `chat_id`
    /// (`POST /open-apis/ephemeral/v1/send`; groups only, and only people
    /// online see it).
    pub async fn send_ephemeral(
        &self,
        chat_id: &str,
        open_id: &str,
        message: &Message,
    ) -> Result<(), PlatformFailure> {
        let body = json!({
            "chat_id": chat_id,
            "open_id": open_id,
            "msg_type": "interactive",
            "card": message.card,
        });
        self.inner.limits.replies.until_ready().await;
        self.call(Method::POST, "open-apis/ephemeral/v1/send", &[], Some(body))
            .await
            .map(drop)
    }

    /// Shows `message` in place of the card `message_id`.
    pub async fn update(&self, message_id: &str, message: &Message) -> Result<(), PlatformFailure> {
        let path = format!("open-apis/im/v1/messages/{}", path_segment(message_id)?);
        let body = json!({"content": message.content()});
        self.inner.limits.updates.until_ready().await;
        self.call(Method::PATCH, &path, &[], Some(body)).await?;
        Ok(())
    }

    /// The long connection's endpoint: its URL and Feishu's settings.
    async fn endpoint(&self) -> Result<(String, Value), PlatformFailure> {
        let url = self.url("callback/ws/endpoint")?;
        let body = json!({"AppID": self.inner.app_id, "AppSecret": self.inner.app_secret});
        let response = self
            .inner
            .http
            .post(url)
            .header("locale", "zh")
            .json(&body)
            .send()
            .await
            .map_err(network)?;
        let answer = read(response).await?;
        let data = &answer["data"];
        let url = data["URL"]
            .as_str()
            .filter(|url| !url.is_empty())
            .ok_or_else(|| PlatformFailure::Transient("no URL in the endpoint's answer".into()))?;
        Ok((url.to_owned(), data["ClientConfig"].clone()))
    }

    /// One Open API call with the tenant token, made again once with a new
    /// token if Feishu says the old one is not valid.
    async fn call(
        &self,
        method: Method,
        path: &str,
        query: &[(&str, &str)],
        body: Option<Value>,
    ) -> Result<Value, PlatformFailure> {
        let url = self.url(path)?;
        let mut fresh = false;
        loop {
            let token = self.token(fresh).await?;
            let mut request = self
                .inner
                .http
                .request(method.clone(), url.clone())
                .bearer_auth(&token)
                .query(query);
            if let Some(body) = &body {
                request = request.json(body);
            }
            let response = request.send().await.map_err(network)?;
            match read(response).await {
                Err(Refused::Token) if !fresh => fresh = true,
                other => return other.map_err(PlatformFailure::from),
            }
        }
    }

    /// The tenant access token: the one held, unless it is due or
    /// `renew`, else a new one.
    async fn token(&self, renew: bool) -> Result<String, PlatformFailure> {
        let mut held = self.inner.token.lock().await;
        if let Some(token) = held
            .as_ref()
            .filter(|t| !renew && Instant::now() < t.refresh_at)
        {
            return Ok(token.value.clone());
        }
        let url = self.url("open-apis/auth/v3/tenant_access_token/internal")?;
        let body = json!({"app_id": self.inner.app_id, "app_secret": self.inner.app_secret});
        let response = self
            .inner
            .http
            .post(url)
            .json(&body)
            .send()
            .await
            .map_err(network)?;
        let answer = read(response).await.map_err(PlatformFailure::from)?;
        let value = answer["tenant_access_token"]
            .as_str()
            .filter(|token| !token.is_empty())
            .ok_or_else(|| {
                PlatformFailure::Transient("no tenant_access_token in the answer".into())
            })?
            .to_owned();
        let life = Duration::from_secs(answer["expire"].as_u64().unwrap_or(0));
        let refresh_at = Instant::now() + life.saturating_sub(TOKEN_MARGIN.min(life / 2));
        *held = Some(Token {
            value: value.clone(),
            refresh_at,
        });
        Ok(value)
    }

    fn url(&self, path: &str) -> Result<Url, PlatformFailure> {
        self.inner
            .base
            .join(path)
            .map_err(|error| PlatformFailure::Permanent(format!("bad API path {path}: {error}")))
    }
}

/// An id as one path segment; ids are Feishu's own (`om_…`).
fn path_segment(id: &str) -> Result<&str, PlatformFailure> {
    match !id.is_empty()
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
    {
        true => Ok(id),
        false => Err(PlatformFailure::Permanent(format!(
            "{id:?} is not a Feishu message id"
        ))),
    }
}

fn sent(answer: &Value) -> Result<Sent, PlatformFailure> {
    let data = &answer["data"];
    let field = |name: &str| {
        data[name]
            .as_str()
            .filter(|value| !value.is_empty())
            .map(str::to_owned)
            .ok_or_else(|| PlatformFailure::Transient(format!("no {name} in Feishu's answer")))
    };
    Ok(Sent {
        message_id: field("message_id")?,
        chat_id: field("chat_id")?,
    })
}

/// Why Feishu did not do what was asked.
#[derive(Debug)]
enum Refused {
    /// The token is not valid: get a new one.
    Token,
    /// Anything else.
    Failed(PlatformFailure),
}

impl From<Refused> for PlatformFailure {
    fn from(refused: Refused) -> PlatformFailure {
        match refused {
            Refused::Token => PlatformFailure::Permanent(
                "Feishu refused the app's access token; check FEISHU_APP_ID and FEISHU_APP_SECRET"
                    .to_owned(),
            ),
            Refused::Failed(failure) => failure,
        }
    }
}

/// Reads an answer: its JSON when `code` is 0, else the failure.
async fn read(response: reqwest::Response) -> Result<Value, Refused> {
    let status = response.status();
    let reset = response
        .headers()
        .get("x-ogw-ratelimit-reset")
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.trim().parse::<u64>().ok());
    let text = response
        .text()
        .await
        .map_err(|error| Refused::Failed(network(error)))?;
    let body: Value = serde_json::from_str(&text).unwrap_or(Value::Null);
    let code = body["code"].as_i64();
    if status.is_success() && code == Some(0) {
        return Ok(body);
    }
    if code.is_some_and(|code| INVALID_TOKEN_CODES.contains(&code)) {
        return Err(Refused::Token);
    }
    Err(Refused::Failed(classify(
        status,
        code,
        body["msg"].as_str(),
        &text,
        reset,
    )))
}

/// A failed answer as a [`PlatformFailure`]: `status`, Feishu's `code` and
/// `msg` (the raw `text` when there is none), and the seconds
/// `x-ogw-ratelimit-reset` names.
pub fn classify(
    status: StatusCode,
    code: Option<i64>,
    msg: Option<&str>,
    text: &str,
    reset: Option<u64>,
) -> PlatformFailure {
    let words = match (code, msg) {
        (Some(code), Some(msg)) => format!("Feishu error {code}: {msg}"),
        _ => format!(
            "HTTP {status}: {}",
            text.chars().take(MAX_QUOTED_BODY).collect::<String>()
        ),
    };
    match code {
        Some(RATE_LIMITED_CODE) => PlatformFailure::RetryAfter(reset.unwrap_or(1).max(1)),
        Some(CHAT_RATE_LIMITED_CODE) => PlatformFailure::RetryAfter(1),
        _ if status == StatusCode::TOO_MANY_REQUESTS => {
            PlatformFailure::RetryAfter(reset.unwrap_or(1).max(1))
        }
        Some(code) if TRANSIENT_CODES.contains(&code) => PlatformFailure::Transient(words),
        _ if status.is_server_error() || code.is_none() => PlatformFailure::Transient(words),
        _ => PlatformFailure::Permanent(words),
    }
}

fn network(error: reqwest::Error) -> PlatformFailure {
    PlatformFailure::Transient(format!("cannot reach Feishu: {error}"))
}

/// The check of an HTTP callback: decryption with the encrypt key, the
/// signature, the request's age and the verification token.
#[derive(Clone)]
pub struct CallbackCheck {
    key: Option<String>,
    verification_token: Option<String>,
}

impl std::fmt::Debug for CallbackCheck {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CallbackCheck").finish_non_exhaustive()
    }
}

/// The headers a signed callback carries.
#[derive(Debug, Clone, Copy, Default)]
pub struct Signed<'a> {
    /// `X-Lark-Request-Timestamp` (Unix seconds).
    pub timestamp: &'a str,
    /// `X-Lark-Request-Nonce`.
    pub nonce: &'a str,
    /// `X-Lark-Signature`.
    pub signature: &'a str,
}

impl CallbackCheck {
    /// A check with the app's encrypt key (bodies are encrypted and
    /// signed) and verification token.
    pub fn new(encrypt_key: Option<&str>, verification_token: Option<&str>) -> CallbackCheck {
        CallbackCheck {
            key: encrypt_key.filter(|key| !key.is_empty()).map(str::to_owned),
            verification_token: verification_token
                .filter(|token| !token.is_empty())
                .map(str::to_owned),
        }
    }

    /// The plain body of a callback: decrypted when an encrypt key is set
    /// (and then required to be encrypted).
    pub fn decrypt(&self, body: &[u8]) -> Result<Vec<u8>, BadRequest> {
        let Some(key) = &self.key else {
            return Ok(body.to_vec());
        };
        let outer: Value =
            serde_json::from_slice(body).map_err(|error| format!("not JSON: {error}"))?;
        let sealed = outer["encrypt"]
            .as_str()
            .ok_or("not encrypted, though an encrypt key is set")?;
        let raw = BASE64
            .decode(sealed.trim())
            .map_err(|_| "encrypt is not base64".to_owned())?;
        if raw.len() < 32 || raw.len() % 16 != 0 {
            return Err("encrypt is not AES-256-CBC".to_owned().into());
        }
        let (iv, sealed) = raw.split_at(16);
        let key: [u8; 32] = Sha256::digest(key.as_bytes()).into();
        cbc::Decryptor::<aes::Aes256>::new(&key.into(), iv.into())
            .decrypt_padded_vec_mut::<Pkcs7>(sealed)
            .map_err(|_| BadRequest::from("cannot decrypt with the encrypt key"))
    }

    /// Whether `signed` signs `body` (the raw request body) with the
    /// encrypt key, within [`CALLBACK_WINDOW_SECS`] of `now` (Unix
    /// seconds). Without an encrypt key there is no signature to check.
    pub fn signed(&self, signed: Signed<'_>, body: &[u8], now: u64) -> Result<(), BadRequest> {
        let Some(key) = &self.key else {
            return Ok(());
        };
        let sent: u64 = signed
            .timestamp
            .trim()
            .parse()
            .map_err(|_| "missing or bad X-Lark-Request-Timestamp".to_owned())?;
        if sent.abs_diff(now) > CALLBACK_WINDOW_SECS {
            return Err("X-Lark-Request-Timestamp is more than 5 minutes off"
                .to_owned()
                .into());
        }
        let mut digest = Sha256::new();
        digest.update(signed.timestamp.as_bytes());
        digest.update(signed.nonce.as_bytes());
        digest.update(key.as_bytes());
        digest.update(body);
        let expected = hex::encode(digest.finalize());
        match expected
            .as_bytes()
            .ct_eq(signed.signature.trim().as_bytes())
            .into()
        {
            true => Ok(()),
            false => Err("missing or bad X-Lark-Signature".to_owned().into()),
        }
    }

    /// Whether a push's verification token is the app's (any token when
    /// none is configured).
    pub fn token_ok(&self, token: &str) -> bool {
        match &self.verification_token {
            Some(expected) => expected.as_bytes().ct_eq(token.as_bytes()).into(),
            None => true,
        }
    }
}

/// The long connection's frame (`pbbp2.Frame`).
#[derive(Clone, PartialEq, prost::Message)]
struct Frame {
    #[prost(uint64, tag = "1")]
    seq_id: u64,
    #[prost(uint64, tag = "2")]
    log_id: u64,
    #[prost(int32, tag = "3")]
    service: i32,
    #[prost(int32, tag = "4")]
    method: i32,
    #[prost(message, repeated, tag = "5")]
    headers: Vec<Header>,
    #[prost(string, optional, tag = "6")]
    payload_encoding: Option<String>,
    #[prost(string, optional, tag = "7")]
    payload_type: Option<String>,
    #[prost(bytes = "vec", optional, tag = "8")]
    payload: Option<Vec<u8>>,
    #[prost(string, optional, tag = "9")]
    log_id_new: Option<String>,
}

/// One frame header.
#[derive(Clone, PartialEq, prost::Message)]
struct Header {
    #[prost(string, tag = "1")]
    key: String,
    #[prost(string, tag = "2")]
    value: String,
}

impl Frame {
    fn header(&self, key: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|header| header.key == key)
            .map(|header| header.value.as_str())
    }
}

/// A control frame (pings, pongs).
const CONTROL: i32 = 0;
/// A data frame (pushes and their answers).
const DATA: i32 = 1;

/// What the long connection pushed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PushKind {
    /// An event (`type: event`); its answer is ignored by Feishu.
    Event,
    /// A card callback (`type: card`); its answer is the callback answer.
    Card,
}

/// Feishu's long connection for one app.
#[derive(Debug, Clone)]
pub struct LongConnection {
    api: FeishuApi,
}

impl LongConnection {
    /// The connection of `api`'s app.
    pub fn new(api: FeishuApi) -> LongConnection {
        LongConnection { api }
    }

    /// Connects and hands every push to `handle`, whose answer (the body
    /// of a callback answer) goes back in a frame with code 200; `None`
    /// answers with code 500, so Feishu sends an event again and shows a
    /// card press as failed. Connects again when
    /// the connection drops. Returns only when Feishu refuses the app's
    /// credentials for good; drop the future to close the connection.
    pub async fn run<H, F>(&self, handle: H) -> Result<(), SetupError>
    where
        H: Fn(PushKind, Vec<u8>) -> F + Send + Sync + Clone + 'static,
        F: Future<Output = Option<Value>> + Send + 'static,
    {
        let mut backoff = RECONNECT_BACKOFF.0;
        loop {
            match self.session(handle.clone()).await {
                Ok(()) => {
                    tracing::info!("the Feishu long connection closed; connecting again");
                    backoff = RECONNECT_BACKOFF.0;
                }
                Err(PlatformFailure::Permanent(reason)) => return Err(reason.into()),
                Err(failure) => {
                    tracing::warn!(error = %failure, "the Feishu long connection failed; connecting again");
                }
            }
            tokio::time::sleep(backoff).await;
            backoff = (backoff * 2).min(RECONNECT_BACKOFF.1);
        }
    }

    /// One connection, until it closes.
    async fn session<H, F>(&self, handle: H) -> Result<(), PlatformFailure>
    where
        H: Fn(PushKind, Vec<u8>) -> F + Send + Sync + Clone + 'static,
        F: Future<Output = Option<Value>> + Send + 'static,
    {
        let (url, config) = self.api.endpoint().await?;
        let service: i32 = Url::parse(&url)
            .ok()
            .and_then(|url| {
                url.query_pairs()
                    .find(|(key, _)| key == "service_id")
                    .and_then(|(_, value)| value.parse().ok())
            })
            .unwrap_or_default();
        let (socket, _) = tokio_tungstenite::connect_async(url.as_str())
            .await
            .map_err(|error| PlatformFailure::Transient(format!("cannot connect: {error}")))?;
        tracing::info!("the Feishu long connection is open");
        let (mut sink, mut stream) = socket.split();
        let (answers, mut outgoing) = mpsc::channel::<Frame>(64);
        let mut ping = tokio::time::interval(ping_interval(&config).unwrap_or(DEFAULT_PING));
        let mut parts = Parts::default();
        loop {
            tokio::select! {
                _ = ping.tick() => {
                    let frame = Frame {
                        service,
                        method: CONTROL,
                        headers: vec![Header { key: "type".into(), value: "ping".into() }],
                        ..Frame::default()
                    };
                    send_frame(&mut sink, &frame).await?;
                }
                Some(frame) = outgoing.recv() => send_frame(&mut sink, &frame).await?,
                message = stream.next() => {
                    let bytes = match message {
                        None | Some(Ok(WsMessage::Close(_))) => return Ok(()),
                        Some(Err(error)) => {
                            return Err(PlatformFailure::Transient(format!("connection lost: {error}")));
                        }
                        Some(Ok(WsMessage::Binary(bytes))) => bytes,
                        Some(Ok(_)) => continue,
                    };
                    let Ok(frame) = Frame::decode(bytes.as_ref()) else {
                        tracing::warn!("an unreadable frame on the Feishu long connection");
                        continue;
                    };
                    match frame.method {
                        CONTROL => {
                            if frame.header("type") == Some("pong")
                                && let Some(every) = frame
                                    .payload
                                    .as_deref()
                                    .and_then(|payload| serde_json::from_slice(payload).ok())
                                    .and_then(|config: Value| ping_interval(&config))
                                && every != ping.period()
                            {
                                ping = tokio::time::interval_at(tokio::time::Instant::now() + every, every);
                            }
                        }
                        DATA => {
                            if let Some((frame, payload)) = parts.whole(frame, Instant::now()) {
                                // Handed over in arrival order, answered
                                // on a task of its own: `handle` keeps a
                                // person's events in order.
                                let kind = match frame.header("type") {
                                    Some("card") => PushKind::Card,
                                    _ => PushKind::Event,
                                };
                                let handling = handle(kind, payload);
                                tokio::spawn(answer(frame, handling, answers.clone()));
                            }
                        }
                        _ => {}
                    }
                }
            }
        }
    }
}

/// The ping interval a `ClientConfig` names.
fn ping_interval(config: &Value) -> Option<Duration> {
    config["PingInterval"]
        .as_u64()
        .filter(|secs| *secs > 0)
        .map(Duration::from_secs)
}

/// At most how many parts one push may come in.
pub const MAX_PARTS: usize = 64;
/// At most how many bytes the parts of unfinished pushes may hold.
pub const MAX_PARTS_BYTES: usize = 8 * 1024 * 1024;
/// How long the first parts of a push wait for the rest.
pub const PARTS_WAIT: Duration = Duration::from_secs(60);

/// The parts of pushes that came in several frames (`sum` parts, numbered
/// by `seq`), until each is whole. Bounded: a frame claiming more than
/// [`MAX_PARTS`] parts is dropped, parts older than [`PARTS_WAIT`] are
/// dropped, and the oldest unfinished push goes when the parts would hold
/// more than [`MAX_PARTS_BYTES`] (each dropped and logged: Feishu sends a
/// push it was not answered for again).
#[derive(Debug, Default)]
struct Parts {
    pushes: HashMap<String, Unfinished>,
    bytes: usize,
}

/// One push's parts so far.
#[derive(Debug)]
struct Unfinished {
    slots: Vec<Option<Vec<u8>>>,
    since: Instant,
}

impl Parts {
    /// The frame and its whole payload, once every part of its push
    /// arrived.
    fn whole(&mut self, mut frame: Frame, now: Instant) -> Option<(Frame, Vec<u8>)> {
        let sum: usize = frame
            .header("sum")
            .and_then(|s| s.parse().ok())
            .unwrap_or(1);
        let payload = frame.payload.take().unwrap_or_default();
        if sum <= 1 {
            return Some((frame, payload));
        }
        let id = frame.header("message_id").unwrap_or_default().to_owned();
        if sum > MAX_PARTS {
            tracing::warn!(message_id = %id, sum, "a Feishu push in more parts than askbridge takes; dropped");
            return None;
        }
        let seq: usize = frame
            .header("seq")
            .and_then(|s| s.parse().ok())
            .unwrap_or(0);
        self.forget_old(now);
        let unfinished = self.pushes.entry(id.clone()).or_insert_with(|| Unfinished {
            slots: vec![None; sum],
            since: now,
        });
        if let Some(slot) = unfinished.slots.get_mut(seq) {
            self.bytes += payload.len();
            if let Some(earlier) = slot.replace(payload) {
                self.bytes -= earlier.len();
            }
        }
        if unfinished.slots.iter().any(Option::is_none) {
            self.make_room(&id);
            return None;
        }
        let whole: Vec<u8> = self
            .pushes
            .remove(&id)?
            .slots
            .into_iter()
            .flatten()
            .flatten()
            .collect();
        self.bytes -= whole.len();
        Some((frame, whole))
    }

    /// Drops the parts of pushes that waited too long for the rest.
    fn forget_old(&mut self, now: Instant) {
        let bytes = &mut self.bytes;
        self.pushes.retain(|id, unfinished| {
            let keep = now.duration_since(unfinished.since) < PARTS_WAIT;
            if !keep {
                *bytes -= unfinished.size();
                tracing::warn!(message_id = %id, "a Feishu push's parts never all arrived; dropped");
            }
            keep
        });
    }

    /// Drops the oldest unfinished pushes (but `keeping`) while the parts
    /// hold too much; `keeping` too if it alone does.
    fn make_room(&mut self, keeping: &str) {
        while self.bytes > MAX_PARTS_BYTES {
            let oldest = self
                .pushes
                .iter()
                .filter(|(id, _)| id.as_str() != keeping)
                .min_by_key(|(_, unfinished)| unfinished.since)
                .map(|(id, _)| id.clone())
                .unwrap_or_else(|| keeping.to_owned());
            let Some(dropped) = self.pushes.remove(&oldest) else {
                return;
            };
            self.bytes -= dropped.size();
            tracing::warn!(message_id = %oldest, "Feishu push parts over askbridge's bound; dropped");
        }
    }
}

impl Unfinished {
    fn size(&self) -> usize {
        self.slots.iter().flatten().map(Vec::len).sum()
    }
}

/// Waits for one push's handling and sends the answer frame.
async fn answer<F>(frame: Frame, handling: F, answers: mpsc::Sender<Frame>)
where
    F: Future<Output = Option<Value>> + Send + 'static,
{
    let started = Instant::now();
    let body = handling.await;
    let took = started.elapsed().as_millis().to_string();
    let response = match body {
        Some(body) => json!({
            "code": 200,
            "headers": {"biz_rt": took},
            "data": BASE64.encode(body.to_string()),
        }),
        None => json!({"code": 500, "headers": {"biz_rt": took}}),
    };
    let mut reply = frame;
    reply.headers.push(Header {
        key: "biz_rt".into(),
        value: took,
    });
    reply.payload = Some(response.to_string().into_bytes());
    // The connection may be gone; the push is Feishu's to send again.
    let _ = answers.send(reply).await;
}

async fn send_frame<S>(sink: &mut S, frame: &Frame) -> Result<(), PlatformFailure>
where
    S: futures_util::Sink<WsMessage, Error = tokio_tungstenite::tungstenite::Error> + Unpin,
{
    sink.send(WsMessage::Binary(frame.encode_to_vec().into()))
        .await
        .map_err(|error| PlatformFailure::Transient(format!("connection lost: {error}")))
}

#[cfg(test)]
mod tests {
    use aes::cipher::BlockEncryptMut;

    use super::*;

    fn seal(key: &str, plain: &[u8]) -> String {
        let key: [u8; 32] = Sha256::digest(key.as_bytes()).into();
        let iv = [7u8; 16];
        let sealed = cbc::Encryptor::<aes::Aes256>::new(&key.into(), &iv.into())
            .encrypt_padded_vec_mut::<Pkcs7>(plain);
        BASE64.encode([iv.as_slice(), &sealed].concat())
    }

    #[test]
    fn feishu_callback_bodies_decrypt_with_the_encrypt_key() {
        let check = CallbackCheck::new(Some("kudryavka"), Some("vt"));
        let body = json!({"encrypt": seal("kudryavka", b"{\"a\":1}")}).to_string();
        assert_eq!(check.decrypt(body.as_bytes()).expect("opens"), b"{\"a\":1}");
        let other = json!({"encrypt": seal("other", b"{\"a\":1}")}).to_string();
        assert!(check.decrypt(other.as_bytes()).is_err());
        assert_eq!(
            check.decrypt(b"{\"a\":1}"),
            Err(BadRequest::from(
                "not encrypted, though an encrypt key is set"
            ))
        );
        let plain = CallbackCheck::new(None, None);
        assert_eq!(plain.decrypt(b"{}").expect("plain"), b"{}");
    }

    #[test]
    fn feishu_signatures_are_checked_and_stale_ones_refused() {
        let check = CallbackCheck::new(Some("key"), None);
        let body = b"{\"encrypt\":\"x\"}";
        let mut digest = Sha256::new();
        digest.update(b"1700000000nonce1key");
        digest.update(body);
        let signature = hex::encode(digest.finalize());
        let signed = Signed {
            timestamp: "1700000000",
            nonce: "nonce1",
            signature: &signature,
        };
        assert_eq!(check.signed(signed, body, 1_700_000_100), Ok(()));
        assert!(
            check.signed(signed, b"{}", 1_700_000_100).is_err(),
            "another body"
        );
        assert!(
            check
                .signed(signed, body, 1_700_000_000 + CALLBACK_WINDOW_SECS + 1)
                .is_err_and(|e| e.0.contains("5 minutes"))
        );
        assert!(check.token_ok("anything"));
        assert!(!CallbackCheck::new(None, Some("vt")).token_ok("nope"));
    }

    #[test]
    fn feishu_failures_are_classified() {
        let limited = classify(
            StatusCode::TOO_MANY_REQUESTS,
            Some(99991400),
            Some("limit"),
            "",
            Some(3),
        );
        assert_eq!(limited, PlatformFailure::RetryAfter(3));
        let chat = classify(
            StatusCode::BAD_REQUEST,
            Some(230020),
            Some("freq"),
            "",
            None,
        );
        assert_eq!(chat, PlatformFailure::RetryAfter(1));
        let gone = classify(
            StatusCode::BAD_REQUEST,
            Some(230002),
            Some("The bot can not be outside the group."),
            "",
            None,
        );
        assert_eq!(
            gone,
            PlatformFailure::Permanent(
                "Feishu error 230002: The bot can not be outside the group.".to_owned()
            )
        );
        assert!(matches!(
            classify(StatusCode::BAD_GATEWAY, None, None, "<html>", None),
            PlatformFailure::Transient(_)
        ));
    }

    #[test]
    fn feishu_frames_round_trip_and_parts_join() {
        let frame = Frame {
            seq_id: 1,
            method: DATA,
            headers: vec![
                Header {
                    key: "type".into(),
                    value: "event".into(),
                },
                Header {
                    key: "message_id".into(),
                    value: "m1".into(),
                },
                Header {
                    key: "sum".into(),
                    value: "2".into(),
                },
                Header {
                    key: "seq".into(),
                    value: "1".into(),
                },
            ],
            payload: Some(b"world".to_vec()),
            ..Frame::default()
        };
        let decoded = Frame::decode(frame.encode_to_vec().as_slice()).expect("decodes");
        assert_eq!(decoded, frame);
        let mut parts = Parts::default();
        let now = Instant::now();
        assert_eq!(parts.whole(frame.clone(), now), None);
        let mut first = frame;
        first.headers[3].value = "0".into();
        first.payload = Some(b"hello ".to_vec());
        let (_, payload) = parts.whole(first, now).expect("whole");
        assert_eq!(payload, b"hello world");
        assert!(parts.pushes.is_empty());
        assert_eq!(parts.bytes, 0);
    }

    /// Part `seq` of `sum` of push `id`, carrying `payload`.
    fn part(id: &str, sum: usize, seq: usize, payload: &[u8]) -> Frame {
        let header = |key: &str, value: String| Header {
            key: key.into(),
            value,
        };
        Frame {
            method: DATA,
            headers: vec![
                header("message_id", id.to_owned()),
                header("sum", sum.to_string()),
                header("seq", seq.to_string()),
            ],
            payload: Some(payload.to_vec()),
            ..Frame::default()
        }
    }

    #[test]
    fn long_connection_parts_are_bounded_in_count_bytes_and_time() {
        let mut parts = Parts::default();
        let now = Instant::now();
        // A header claiming a huge number of parts allocates nothing.
        assert_eq!(parts.whole(part("huge", usize::MAX, 0, b"x"), now), None);
        assert_eq!(parts.whole(part("many", MAX_PARTS + 1, 0, b"x"), now), None);
        assert!(parts.pushes.is_empty());

        // Unfinished pushes beyond the byte bound: the oldest goes.
        let half = vec![0_u8; MAX_PARTS_BYTES / 2 + 1];
        assert_eq!(parts.whole(part("old", 2, 0, &half), now), None);
        let later = now + Duration::from_secs(1);
        assert_eq!(parts.whole(part("new", 2, 0, &half), later), None);
        assert_eq!(parts.pushes.keys().collect::<Vec<_>>(), ["new"]);
        assert_eq!(parts.bytes, half.len());
        assert_eq!(
            parts.whole(part("old", 2, 1, b"!"), later),
            None,
            "its first part is gone"
        );

        // Parts that wait too long for the rest are dropped.
        let much_later = later + PARTS_WAIT;
        assert_eq!(parts.whole(part("new", 2, 1, b"!"), much_later), None);
        assert_eq!(
            parts.pushes.keys().collect::<Vec<_>>(),
            ["new"],
            "only the part just received"
        );
        assert_eq!(parts.bytes, 1);
    }
}

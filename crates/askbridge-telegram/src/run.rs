//! The Bot API, through teloxide: the only async code of this crate.
//!
//! Sending goes through teloxide's [`Throttle`] adaptor, which keeps within
//! Telegram's published limits (one message a second per chat, twenty a
//! minute per group, thirty a second overall) and, when Telegram still
//! answers 429, waits the `retry_after` it names and sends again. What
//! fails anyway is classified ([`PlatformFailure`]) so the caller can retry
//! passing failures and give up on permanent ones.

use std::collections::HashSet;
use std::time::Duration;

use askbridge_core::failure::{PlatformFailure, SetupError};
use teloxide::adaptors::Throttle;
use teloxide::adaptors::throttle::Limits;
use teloxide::payloads::SendMessage;
use teloxide::prelude::*;
use teloxide::requests::HasPayload;
use teloxide::types::{InlineKeyboardMarkup, MessageId, Update};
use teloxide::{ApiError, RequestError};

use crate::render::ChatRef;

/// Seconds a `getUpdates` call waits for updates. Below teloxide's default
/// client timeout (17 s), so a quiet long poll is never cut short.
const LONG_POLL_SECS: u32 = 10;
/// The first and the longest wait after a failed `getUpdates`.
const POLL_BACKOFF: (Duration, Duration) = (Duration::from_millis(250), Duration::from_secs(30));

/// Classifies a teloxide error.
pub fn classify(error: &RequestError) -> PlatformFailure {
    match error {
        RequestError::RetryAfter(after) => PlatformFailure::RetryAfter(u64::from(after.seconds())),
        RequestError::Network(error) => PlatformFailure::Transient(error.to_string()),
        RequestError::Io(error) => PlatformFailure::Transient(error.to_string()),
        RequestError::InvalidJson { raw, .. } => {
            PlatformFailure::Transient(format!("unreadable answer from the Bot API: {raw:.200}"))
        }
        RequestError::MigrateToChatId(id) => PlatformFailure::Permanent(format!(
            "the group became a supergroup; target telegram:{} instead",
            id.0
        )),
        RequestError::Api(ApiError::Unknown(text)) if is_server_failure(text) => {
            PlatformFailure::Transient(text.clone())
        }
        RequestError::Api(error) => PlatformFailure::Permanent(api_reason(error)),
    }
}

/// Telegram's own words for an API error ("Forbidden: bot was blocked by
/// the user"), which is what a person debugging a delivery wants to see.
fn api_reason(error: &ApiError) -> String {
    match error {
        ApiError::Unknown(text) => text.clone(),
        other => other.to_string(),
    }
}

fn is_server_failure(text: &str) -> bool {
    let text = text.to_ascii_lowercase();
    [
        "internal server error",
        "bad gateway",
        "gateway timeout",
        "service unavailable",
        "too many requests",
    ]
    .iter()
    .any(|phrase| text.contains(phrase))
}

/// The Bot API client: teloxide's [`Bot`] behind its [`Throttle`]
/// adaptor. Cheap to clone. Its `Debug` never shows the token.
#[derive(Clone)]
pub struct TelegramApi {
    bot: Throttle<Bot>,
}

impl std::fmt::Debug for TelegramApi {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TelegramApi")
            .field("api_url", &self.bot.inner().api_url().as_str())
            .field("token", &"[redacted]")
            .finish()
    }
}

impl TelegramApi {
    /// A client for `token` on `api_url` (a self-hosted Bot API server, or
    /// a fake in tests; Telegram's own when `None`), throttled to `limits`.
    /// Spawns the throttle's worker, so call it inside a tokio runtime.
    pub fn new(
        token: &str,
        api_url: Option<&str>,
        limits: Limits,
    ) -> Result<TelegramApi, SetupError> {
        let mut bot = Bot::new(token);
        if let Some(url) = api_url {
            let url = url
                .parse()
                .map_err(|error| format!("api_url {url:?} is not a URL: {error}"))?;
            bot = bot.set_api_url(url);
        }
        Ok(TelegramApi {
            bot: Throttle::new_spawn(bot, limits),
        })
    }

    /// `getMe`: the bot's own account (checks the token).
    pub async fn me(&self) -> Result<teloxide::types::Me, PlatformFailure> {
        self.bot.get_me().await.map_err(|e| classify(&e))
    }

    /// `sendMessage`; returns the new message's id.
    pub async fn send(&self, payload: SendMessage) -> Result<i32, PlatformFailure> {
        let mut request = self.bot.send_message(payload.chat_id.clone(), "");
        *request.payload_mut() = payload;
        let message = request.await.map_err(|e| classify(&e))?;
        Ok(message.id.0)
    }

    /// `editMessageText` with the given keyboard (`None` removes it). An
    /// edit that changes nothing ("message is not modified") is a success.
    pub async fn edit(
        &self,
        chat: ChatRef,
        message_id: i32,
        text: &str,
        keyboard: Option<InlineKeyboardMarkup>,
    ) -> Result<(), PlatformFailure> {
        let mut request =
            self.bot
                .edit_message_text(ChatId(chat.chat_id), MessageId(message_id), text);
        request.payload_mut().reply_markup = keyboard;
        not_modified_is_fine(request.await.map(drop))
    }

    /// `editMessageReplyMarkup`: a new keyboard, the text unchanged.
    pub async fn edit_keyboard(
        &self,
        chat: ChatRef,
        message_id: i32,
        keyboard: InlineKeyboardMarkup,
    ) -> Result<(), PlatformFailure> {
        let mut request = self
            .bot
            .edit_message_reply_markup(ChatId(chat.chat_id), MessageId(message_id));
        request.payload_mut().reply_markup = Some(keyboard);
        not_modified_is_fine(request.await.map(drop))
    }

    /// `answerCallbackQuery`, with a short notice (a toast) or none.
    pub async fn answer(
        &self,
        query_id: &str,
        notice: Option<&str>,
    ) -> Result<(), PlatformFailure> {
        let mut request = self
            .bot
            .answer_callback_query(teloxide::types::CallbackQueryId(query_id.to_owned()));
        request.payload_mut().text = notice.map(str::to_owned);
        request.await.map(drop).map_err(|e| classify(&e))
    }

    /// `setWebhook`: Telegram posts updates to `url` with `secret` in the
    /// `X-Telegram-Bot-Api-Secret-Token` header.
    pub async fn set_webhook(&self, url: &str, secret: &str) -> Result<(), PlatformFailure> {
        let url = url
            .parse()
            .map_err(|error| PlatformFailure::Permanent(format!("webhook URL {url:?}: {error}")))?;
        let mut request = self.bot.set_webhook(url);
        request.payload_mut().secret_token = Some(secret.to_owned());
        request.await.map(drop).map_err(|e| classify(&e))
    }

    /// `deleteWebhook`, keeping pending updates (they are fetched next).
    pub async fn delete_webhook(&self) -> Result<(), PlatformFailure> {
        self.bot
            .delete_webhook()
            .await
            .map(drop)
            .map_err(|e| classify(&e))
    }

    /// Long polling, forever: fetches updates and hands each batch to
    /// `handle`, and confirms a batch (by asking for the next) only after
    /// `handle` has returned, so an update is never dropped by a crash
    /// mid-batch: at worst it is handled again. `handle` says which updates
    /// it took; from the first it did not (its database failed for now),
    /// the batch is fetched again after a backoff, and the later updates it
    /// did take are skipped then. Failures are retried with backoff. Removes a webhook first (Telegram refuses `getUpdates`
    /// while one is set).
    pub async fn poll<F, Fut>(&self, mut handle: F)
    where
        F: FnMut(Vec<Update>) -> Fut,
        Fut: std::future::Future<Output = Vec<bool>>,
    {
        let mut backoff = POLL_BACKOFF.0;
        while let Err(error) = self.delete_webhook().await {
            tracing::warn!(error = %error, "cannot remove the Telegram webhook; retrying");
            tokio::time::sleep(backoff).await;
            backoff = (backoff * 2).min(POLL_BACKOFF.1);
        }
        let mut offset: Option<i32> = None;
        // Updates after one that must be fetched again, already taken.
        let mut taken_ahead: HashSet<u32> = HashSet::new();
        backoff = POLL_BACKOFF.0;
        loop {
            match self.get_updates(offset).await {
                Ok(updates) => {
                    let Some(last) = updates.last().map(|update| update.id.0) else {
                        backoff = POLL_BACKOFF.0;
                        continue;
                    };
                    let fresh: Vec<Update> = updates
                        .into_iter()
                        .filter(|update| !taken_ahead.contains(&update.id.0))
                        .collect();
                    let ids: Vec<u32> = fresh.iter().map(|update| update.id.0).collect();
                    let taken = if fresh.is_empty() {
                        Vec::new()
                    } else {
                        handle(fresh).await
                    };
                    match ids.iter().zip(&taken).position(|(_, taken)| !taken) {
                        None => {
                            backoff = POLL_BACKOFF.0;
                            taken_ahead.clear();
                            offset = i32::try_from(last).ok().map(|id| id.saturating_add(1));
                        }
                        Some(first) => {
                            // Confirm what comes before it; fetch it again.
                            let again = ids[first];
                            taken_ahead.retain(|id| *id > again);
                            taken_ahead.extend(
                                ids.iter()
                                    .zip(&taken)
                                    .skip(first + 1)
                                    .filter(|(_, taken)| **taken)
                                    .map(|(id, _)| *id),
                            );
                            offset = i32::try_from(again).ok();
                            tracing::warn!(
                                update_id = again,
                                retry_in_ms = backoff.as_millis() as u64,
                                "an update was not recorded; fetching it again"
                            );
                            tokio::time::sleep(backoff).await;
                            backoff = (backoff * 2).min(POLL_BACKOFF.1);
                        }
                    }
                }
                Err(failure) => {
                    let wait = match failure {
                        PlatformFailure::RetryAfter(secs) => Duration::from_secs(secs),
                        _ => backoff,
                    };
                    tracing::warn!(error = %failure, retry_in_ms = wait.as_millis() as u64, "getUpdates failed");
                    tokio::time::sleep(wait).await;
                    backoff = (backoff * 2).min(POLL_BACKOFF.1);
                }
            }
        }
    }

    /// One long poll: `getUpdates` from `offset`, waiting up to
    /// [`LONG_POLL_SECS`] for updates.
    ///
    /// Sent with teloxide's own HTTP client but not through its request
    /// code, which waits 10 s after any 5xx answer before returning it
    /// (teloxide-core's `DELAY_ON_SERVER_ERROR`): one failed poll would
    /// hold every person's next press and message that long. The poll loop
    /// has its own backoff.
    async fn get_updates(&self, offset: Option<i32>) -> Result<Vec<Update>, PlatformFailure> {
        let bot = self.bot.inner();
        let url = bot
            .api_url()
            .join(&format!("/bot{}/getUpdates", bot.token()))
            .map_err(|error| PlatformFailure::Permanent(format!("no getUpdates URL: {error}")))?;
        let mut payload = serde_json::json!({"timeout": LONG_POLL_SECS});
        if let Some(offset) = offset {
            payload["offset"] = offset.into();
        }
        let response = bot
            .client()
            .post(url)
            .json(&payload)
            .send()
            .await
            .map_err(|error| PlatformFailure::Transient(error.without_url().to_string()))?;
        let status = response.status();
        let body = response
            .text()
            .await
            .map_err(|error| PlatformFailure::Transient(error.without_url().to_string()))?;
        read_updates(status.as_u16(), &body)
    }
}

/// A `getUpdates` answer: its updates, or why it failed (a 429's wait,
/// Telegram's own description).
fn read_updates(status: u16, body: &str) -> Result<Vec<Update>, PlatformFailure> {
    #[derive(serde::Deserialize)]
    struct Answer {
        ok: bool,
        result: Option<Vec<Update>>,
        description: Option<String>,
        parameters: Option<Parameters>,
    }
    #[derive(serde::Deserialize)]
    struct Parameters {
        retry_after: Option<u64>,
    }
    let Ok(answer) = serde_json::from_str::<Answer>(body) else {
        return Err(PlatformFailure::Transient(format!(
            "unreadable getUpdates answer (HTTP {status}): {body:.200}"
        )));
    };
    if let (true, Some(updates)) = (answer.ok, answer.result) {
        return Ok(updates);
    }
    if let Some(after) = answer.parameters.and_then(|p| p.retry_after) {
        return Err(PlatformFailure::RetryAfter(after));
    }
    let reason = answer
        .description
        .unwrap_or_else(|| format!("getUpdates failed with HTTP {status}"));
    if status >= 500 || is_server_failure(&reason) {
        Err(PlatformFailure::Transient(reason))
    } else {
        Err(PlatformFailure::Permanent(reason))
    }
}

fn not_modified_is_fine(result: Result<(), RequestError>) -> Result<(), PlatformFailure> {
    match result {
        Ok(()) | Err(RequestError::Api(ApiError::MessageNotModified)) => Ok(()),
        Err(error) => Err(classify(&error)),
    }
}

#[cfg(test)]
mod tests {
    use teloxide::types::{ChatId, Seconds};

    use super::*;

    #[test]
    fn get_updates_answers_are_read_and_failures_classified() {
        let update = r#"{"update_id": 7, "message": {"message_id": 1, "date": 0,
            "chat": {"id": 5, "type": "private", "first_name": "A"},
            "from": {"id": 5, "is_bot": false, "first_name": "A"}, "text": "2"}}"#;
        let ok = format!(r#"{{"ok": true, "result": [{update}]}}"#);
        let updates = read_updates(200, &ok).expect("updates");
        assert_eq!(updates.iter().map(|u| u.id.0).collect::<Vec<_>>(), [7]);
        let cases = [
            (
                429,
                r#"{"ok":false,"error_code":429,"description":"Too Many Requests: retry after 3","parameters":{"retry_after":3}}"#,
                PlatformFailure::RetryAfter(3),
            ),
            (
                500,
                r#"{"ok":false,"error_code":500,"description":"Internal Server Error"}"#,
                PlatformFailure::Transient("Internal Server Error".to_owned()),
            ),
            (
                502,
                "<html>Bad Gateway</html>",
                PlatformFailure::Transient(
                    "unreadable getUpdates answer (HTTP 502): <html>Bad Gateway</html>".to_owned(),
                ),
            ),
            (
                401,
                r#"{"ok":false,"error_code":401,"description":"Unauthorized"}"#,
                PlatformFailure::Permanent("Unauthorized".to_owned()),
            ),
        ];
        for (status, body, expected) in cases {
            assert_eq!(
                read_updates(status, body).map(|_| ()),
                Err(expected),
                "{body}"
            );
        }
    }

    #[test]
    fn run_failures_are_classified_for_retries() {
        let cases = [
            (
                RequestError::RetryAfter(Seconds::from_seconds(7)),
                PlatformFailure::RetryAfter(7),
            ),
            (
                RequestError::Api(ApiError::BotBlocked),
                PlatformFailure::Permanent("Forbidden: bot was blocked by the user".to_owned()),
            ),
            (
                RequestError::Api(ApiError::ChatNotFound),
                PlatformFailure::Permanent("Bad Request: chat not found".to_owned()),
            ),
            (
                RequestError::Api(ApiError::Unknown("Bad Gateway".to_owned())),
                PlatformFailure::Transient("Bad Gateway".to_owned()),
            ),
            (
                RequestError::Api(ApiError::Unknown("Bad Request: something new".to_owned())),
                PlatformFailure::Permanent("Bad Request: something new".to_owned()),
            ),
            (
                RequestError::MigrateToChatId(ChatId(-100_777)),
                PlatformFailure::Permanent(
                    "the group became a supergroup; target telegram:-100777 instead".to_owned(),
                ),
            ),
        ];
        for (error, expected) in cases {
            assert_eq!(classify(&error), expected, "{error:?}");
        }
    }

    #[tokio::test]
    async fn run_debug_never_shows_the_token() {
        let api = TelegramApi::new(
            "123:SECRET-token",
            Some("http://127.0.0.1:9/"),
            Limits::default(),
        )
        .unwrap_or_else(|error| panic!("{error}"));
        let shown = format!("{api:?}");
        assert!(!shown.contains("SECRET"), "{shown}");
        assert!(shown.contains("127.0.0.1:9"), "{shown}");
        assert!(TelegramApi::new("1:x", Some("not a url"), Limits::default()).is_err());
    }
}

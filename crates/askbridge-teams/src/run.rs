//! The Bot Connector REST API: what askbridge posts to Teams.
//!
//! - Activities are posted to `{serviceUrl}/v3/conversations/{id}/activities`
//!   and updated in place with `PUT …/activities/{activityId}`; a personal
//!   chat the bot starts is created with `POST {serviceUrl}/v3/conversations`
//!   for the person and the tenant.
//! - Every call carries the bot's token: an OAuth client-credentials token
//!   from `{login_url}/{tenant or botframework.com}/oauth2/v2.0/token` for
//!   the scope `https://api.botframework.com/.default`, kept until five
//!   minutes before it expires and fetched again when the connector
//!   refuses it (once per call).
//! - Failures are classified for retries ([`classify`]): a 429 waits its
//!   `Retry-After`, a 5xx or a network failure is passing, anything else
//!   is Teams' final word, in its own words (`error.message`).

use std::time::{Duration, Instant};

use askbridge_core::failure::{PlatformFailure, SetupError};
use reqwest::{Method, StatusCode};
use serde::Deserialize;
use serde_json::{Value, json};
use tokio::sync::Mutex;

/// Where tokens come from unless `login_url` says otherwise.
pub const LOGIN_URL: &str = "https://login.microsoftonline.com";
/// The tenant of multi-tenant bots' tokens.
const BOT_FRAMEWORK_TENANT: &str = "botframework.com";
/// The scope of the bot's token.
const SCOPE: &str = "https://api.botframework.com/.default";
/// A token is renewed this long before it expires.
const RENEW_BEFORE: Duration = Duration::from_secs(5 * 60);
/// One call's time limit.
const CALL_TIMEOUT: Duration = Duration::from_secs(15);

/// The bot's identity with Microsoft Entra ID.
#[derive(Debug, Clone)]
pub struct Credentials {
    /// The app (client) id.
    pub app_id: String,
    /// `TEAMS_APP_PASSWORD`, the client secret.
    pub password: String,
    /// The tenant of a single-tenant bot; `None`: multi-tenant.
    pub tenant: Option<String>,
    /// Where tokens come from ([`LOGIN_URL`]).
    pub login_url: String,
}

impl Credentials {
    /// The token endpoint.
    pub fn token_url(&self) -> String {
        let tenant = self.tenant.as_deref().unwrap_or(BOT_FRAMEWORK_TENANT);
        format!(
            "{}/{tenant}/oauth2/v2.0/token",
            self.login_url.trim_end_matches('/')
        )
    }
}

/// The Bot Connector client.
#[derive(Debug)]
pub struct Connector {
    http: reqwest::Client,
    credentials: Credentials,
    token: Mutex<Option<(String, Instant)>>,
}

#[derive(Debug, Deserialize)]
struct TokenResponse {
    access_token: String,
    #[serde(default)]
    expires_in: Option<u64>,
}

impl Connector {
    /// A client for the bot with `credentials`.
    pub fn new(credentials: Credentials) -> Result<Connector, SetupError> {
        if credentials.app_id.trim().is_empty() {
            return Err(SetupError::from("teams.app_id is empty"));
        }
        let url = reqwest::Url::parse(&credentials.token_url())
            .map_err(|error| SetupError(format!("teams.login_url is not a URL: {error}")))?;
        if !matches!(url.scheme(), "http" | "https") {
            return Err(SetupError::from("teams.login_url must be http(s)"));
        }
        let http = reqwest::Client::builder()
            .timeout(CALL_TIMEOUT)
            .build()
            .map_err(|error| SetupError(format!("cannot build the HTTP client: {error}")))?;
        Ok(Connector {
            http,
            credentials,
            token: Mutex::new(None),
        })
    }

    /// The HTTP client (for the token check's fetches).
    pub fn http(&self) -> &reqwest::Client {
        &self.http
    }

    /// The bot's app id.
    pub fn app_id(&self) -> &str {
        &self.credentials.app_id
    }

    /// The bot's token: kept, or fetched.
    pub async fn token(&self) -> Result<String, PlatformFailure> {
        let mut kept = self.token.lock().await;
        if let Some((token, renew_at)) = kept.as_ref()
            && Instant::now() < *renew_at
        {
            return Ok(token.clone());
        }
        let response = self
            .http
            .post(self.credentials.token_url())
            .form(&[
                ("grant_type", "client_credentials"),
                ("client_id", self.credentials.app_id.as_str()),
                ("client_secret", self.credentials.password.as_str()),
                ("scope", SCOPE),
            ])
            .send()
            .await
            .map_err(transport)?;
        let status = response.status();
        let body = response.text().await.map_err(transport)?;
        if !status.is_success() {
            return Err(match classify(status, None, &body) {
                PlatformFailure::Permanent(reason) => PlatformFailure::Permanent(format!(
                    "Microsoft refused the bot's credentials (teams.app_id, TEAMS_APP_PASSWORD, teams.tenant_id): {reason}"
                )),
                other => other,
            });
        }
        let token: TokenResponse = serde_json::from_str(&body).map_err(|error| {
            PlatformFailure::Transient(format!("unreadable token answer: {error}"))
        })?;
        let lasts = Duration::from_secs(token.expires_in.unwrap_or(3_600));
        let renew_at = Instant::now() + lasts.saturating_sub(RENEW_BEFORE);
        *kept = Some((token.access_token.clone(), renew_at));
        Ok(token.access_token)
    }

    /// Forgets the kept token (the connector refused it).
    async fn forget_token(&self) {
        *self.token.lock().await = None;
    }

    /// Posts `activity` in `conversation`; returns the new activity's id.
    pub async fn send(
        &self,
        service_url: &str,
        conversation: &str,
        activity: &Value,
    ) -> Result<String, PlatformFailure> {
        let url = format!(
            "{}/v3/conversations/{}/activities",
            service_url.trim_end_matches('/'),
            segment(conversation)
        );
        posted_id(self.call(Method::POST, &url, activity).await?)
    }

    /// Posts `activity` as a reply to activity `to` in `conversation` (in
    /// a channel, in `to`'s thread); returns the new activity's id.
    pub async fn reply(
        &self,
        service_url: &str,
        conversation: &str,
        to: &str,
        activity: &Value,
    ) -> Result<String, PlatformFailure> {
        let url = format!(
            "{}/v3/conversations/{}/activities/{}",
            service_url.trim_end_matches('/'),
            segment(conversation),
            segment(to)
        );
        let mut activity = activity.clone();
        activity["replyToId"] = json!(to);
        posted_id(self.call(Method::POST, &url, &activity).await?)
    }

    /// Replaces activity `id` in `conversation` with `activity`.
    pub async fn update(
        &self,
        service_url: &str,
        conversation: &str,
        id: &str,
        activity: &Value,
    ) -> Result<(), PlatformFailure> {
        let url = format!(
            "{}/v3/conversations/{}/activities/{}",
            service_url.trim_end_matches('/'),
            segment(conversation),
            segment(id)
        );
        let mut activity = activity.clone();
        activity["id"] = json!(id);
        self.call(Method::PUT, &url, &activity).await.map(|_| ())
    }

    /// Creates (or finds) the personal chat of the bot `bot` (its id as
    /// Teams addresses it; `None`: `28:<app id>`) with the person `member`
    /// (their Teams id, or AAD object id) of `tenant`; returns its
    /// conversation id.
    pub async fn personal_chat(
        &self,
        service_url: &str,
        bot: Option<&str>,
        member: &str,
        tenant: Option<&str>,
    ) -> Result<String, PlatformFailure> {
        let url = format!("{}/v3/conversations", service_url.trim_end_matches('/'));
        let bot = bot.map_or_else(|| format!("28:{}", self.credentials.app_id), str::to_owned);
        let mut body = json!({
            "bot": {"id": bot},
            "members": [{"id": member}],
            "isGroup": false,
        });
        if let Some(tenant) = tenant {
            body["tenantId"] = json!(tenant);
            body["channelData"] = json!({"tenant": {"id": tenant}});
        }
        let answer = self.call(Method::POST, &url, &body).await?;
        answer["id"]
            .as_str()
            .filter(|id| !id.is_empty())
            .map(str::to_owned)
            .ok_or_else(|| {
                PlatformFailure::Permanent(format!("Teams opened no personal chat: {answer}"))
            })
    }

    /// One call with the bot's token; a refused token is fetched again
    /// once.
    async fn call(
        &self,
        method: Method,
        url: &str,
        body: &Value,
    ) -> Result<Value, PlatformFailure> {
        let mut renewed = false;
        loop {
            let token = self.token().await?;
            let response = self
                .http
                .request(method.clone(), url)
                .bearer_auth(&token)
                .json(body)
                .send()
                .await
                .map_err(transport)?;
            let status = response.status();
            let retry_after = response
                .headers()
                .get(reqwest::header::RETRY_AFTER)
                .and_then(|value| value.to_str().ok())
                .and_then(|value| value.trim().parse::<u64>().ok());
            let text = response.text().await.map_err(transport)?;
            if status == StatusCode::UNAUTHORIZED && !renewed {
                self.forget_token().await;
                renewed = true;
                continue;
            }
            if !status.is_success() {
                return Err(classify(status, retry_after, &text));
            }
            return Ok(match text.trim().is_empty() {
                true => Value::Null,
                false => serde_json::from_str(&text).unwrap_or(Value::Null),
            });
        }
    }
}

/// The id of the activity the connector says it posted.
fn posted_id(answer: Value) -> Result<String, PlatformFailure> {
    answer["id"]
        .as_str()
        .filter(|id| !id.is_empty())
        .map(str::to_owned)
        .ok_or_else(|| {
            PlatformFailure::Transient(format!("the connector returned no activity id: {answer}"))
        })
}

/// A path segment: the conversation and activity ids hold `:`, `@`, `;`.
fn segment(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for byte in text.bytes() {
        match byte {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' | b':' | b'@' => {
                out.push(char::from(byte));
            }
            _ => out.push_str(&format!("%{byte:02X}")),
        }
    }
    out
}

/// A connection that failed or timed out: passing.
fn transport(error: reqwest::Error) -> PlatformFailure {
    PlatformFailure::Transient(format!("cannot reach Teams: {error}"))
}

/// A refused call: a 429 waits `Retry-After` (1 s if it says none), a 5xx
/// or 408 is passing, anything else is final, in Teams' words.
pub fn classify(status: StatusCode, retry_after: Option<u64>, body: &str) -> PlatformFailure {
    let said = serde_json::from_str::<Value>(body).ok().and_then(|value| {
        let error = &value["error"];
        let message = error["message"]
            .as_str()
            .or_else(|| value["error_description"].as_str())
            .or_else(|| value["message"].as_str())?;
        Some(match error["code"].as_str() {
            Some(code) => format!("{code}: {message}"),
            None => message.to_owned(),
        })
    });
    let reason = said.unwrap_or_else(|| format!("HTTP {status}"));
    match status {
        StatusCode::TOO_MANY_REQUESTS => {
            PlatformFailure::RetryAfter(retry_after.unwrap_or(1).max(1))
        }
        StatusCode::REQUEST_TIMEOUT => PlatformFailure::Transient(reason),
        status if status.is_server_error() => PlatformFailure::Transient(reason),
        _ => PlatformFailure::Permanent(reason),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn failures_are_classified_in_teams_words() {
        let body = r#"{"error": {"code": "ConversationBlockedByUser", "message": "User blocked the conversation with the bot."}}"#;
        assert_eq!(
            classify(StatusCode::FORBIDDEN, None, body),
            PlatformFailure::Permanent(
                "ConversationBlockedByUser: User blocked the conversation with the bot.".to_owned()
            )
        );
        assert_eq!(
            classify(StatusCode::TOO_MANY_REQUESTS, Some(7), ""),
            PlatformFailure::RetryAfter(7)
        );
        assert_eq!(
            classify(StatusCode::TOO_MANY_REQUESTS, None, ""),
            PlatformFailure::RetryAfter(1)
        );
        assert!(matches!(
            classify(StatusCode::BAD_GATEWAY, None, "oops"),
            PlatformFailure::Transient(_)
        ));
        assert_eq!(
            classify(StatusCode::NOT_FOUND, None, "not json"),
            PlatformFailure::Permanent("HTTP 404 Not Found".to_owned())
        );
    }

    #[test]
    fn ids_are_one_path_segment_each() {
        assert_eq!(
            segment("19:abc@thread.tacv2;messageid=17"),
            "19:abc@thread.tacv2%3Bmessageid%3D17"
        );
        assert_eq!(segment("a:1/2 3"), "a:1%2F2%203");
    }

    #[test]
    fn single_and_multi_tenant_tokens_come_from_their_tenant() {
        let credentials = |tenant: Option<&str>| Credentials {
            app_id: "app".to_owned(),
            password: "secret".to_owned(),
            tenant: tenant.map(str::to_owned),
            login_url: format!("{LOGIN_URL}/"),
        };
        assert_eq!(
            credentials(None).token_url(),
            "https://login.microsoftonline.com/botframework.com/oauth2/v2.0/token"
        );
        assert_eq!(
            credentials(Some("contoso-tenant")).token_url(),
            "https://login.microsoftonline.com/contoso-tenant/oauth2/v2.0/token"
        );
    }
}

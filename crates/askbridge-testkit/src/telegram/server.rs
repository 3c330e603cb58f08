//! HTTP: the Bot API endpoint, long polling, and webhook delivery.

use std::pin::pin;
use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::Router;
use axum::body::Body;
use axum::extract::State as Shared;
use axum::http::{Request, StatusCode, header::CONTENT_TYPE};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

use super::model::WebhookDelivery;
use super::params;
use super::state::{Reply, State, canonical_method, desc};
use crate::faults::PlatformAnswers;

/// First pause before re-POSTing an update the webhook refused.
const FIRST_RETRY: Duration = Duration::from_millis(50);
/// Longest pause between webhook attempts.
const MAX_RETRY: Duration = Duration::from_millis(500);
/// How long one webhook POST may take.
const WEBHOOK_TIMEOUT: Duration = Duration::from_secs(10);

/// The state and the signal that it changed.
pub(crate) type Inner = crate::watched::Watched<State>;

/// The Bot API's answers to injected faults.
pub(crate) const FAULT_ANSWERS: PlatformAnswers = PlatformAnswers {
    rate_limited: || respond(Reply::retry_after(1)),
    server_error: || respond(Reply::error(500, "Internal Server Error")),
};

/// The Bot API: every path and method goes through [`handle`].
pub(crate) fn router(inner: Arc<Inner>) -> Router {
    Router::new().fallback(handle).with_state(inner)
}

async fn handle(Shared(inner): Shared<Arc<Inner>>, request: Request<Body>) -> Response {
    let (parts, body) = request.into_parts();
    let body = axum::body::to_bytes(body, usize::MAX)
        .await
        .unwrap_or_default();
    let content_type = parts
        .headers
        .get(CONTENT_TYPE)
        .and_then(|value| value.to_str().ok());
    let params = params::parse(content_type, parts.uri.query(), &body);

    let Some((token, method)) = bot_path(parts.uri.path()) else {
        let method = parts.uri.path().trim_matches('/').to_owned();
        return finish(&inner, method, params, Reply::error(404, desc::NOT_FOUND));
    };
    let method = canonical_method(&method);
    if token != inner.lock().token() {
        return finish(
            &inner,
            method,
            params,
            Reply::error(401, desc::UNAUTHORIZED),
        );
    }
    tracing::debug!(%method, %params, "fake Telegram call");
    if method == "getUpdates" {
        let reply = get_updates(&inner, &params).await;
        return finish(&inner, method, params, reply);
    }
    let reply = inner.mutate(|state| {
        let reply = state.dispatch(&method, &params, Instant::now());
        state.record_call(method, params, &reply);
        reply
    });
    respond(reply)
}

fn finish(inner: &Inner, method: String, params: Value, reply: Reply) -> Response {
    inner.mutate(|state| state.record_call(method, params, &reply));
    respond(reply)
}

fn respond(reply: Reply) -> Response {
    let status = StatusCode::from_u16(reply.status).unwrap_or(StatusCode::OK);
    (status, axum::Json(reply.body)).into_response()
}

/// `(token, method)` from `…/bot<token>/<method>`.
fn bot_path(path: &str) -> Option<(String, String)> {
    let segments: Vec<&str> = path.split('/').filter(|s| !s.is_empty()).collect();
    let [.., token, method] = segments.as_slice() else {
        return None;
    };
    let token = token.strip_prefix("bot")?;
    Some((
        params::decode_path_segment(token),
        params::decode_path_segment(method),
    ))
}

/// `getUpdates`: returns at once if updates are queued, else waits for one
/// (or for `timeout` seconds), woken by state changes.
async fn get_updates(inner: &Arc<Inner>, params: &Value) -> Reply {
    let timeout = params::int(params, "timeout")
        .and_then(|secs| u64::try_from(secs).ok())
        .unwrap_or(0);
    let (generation, limit) = match inner.mutate(|state| state.begin_poll(params)) {
        Ok(turn) => turn,
        Err(reply) => return reply,
    };
    let deadline = tokio::time::Instant::now() + Duration::from_secs(timeout);
    let _polling = PollGuard::enter(inner);
    loop {
        let mut changed = pin!(inner.changed.notified());
        changed.as_mut().enable();
        let polled = inner.lock().poll(generation, limit);
        if let Some(reply) = polled {
            return reply;
        }
        if timeout == 0 || tokio::time::timeout_at(deadline, changed).await.is_err() {
            let polled = inner.lock().poll(generation, limit);
            return polled.unwrap_or_else(|| Reply::ok(json!([])));
        }
    }
}

/// Counts a waiting `getUpdates` while it waits (and when the client hangs
/// up, which drops the handler).
struct PollGuard<'a>(&'a Inner);

impl<'a> PollGuard<'a> {
    fn enter(inner: &'a Inner) -> Self {
        inner.mutate(|state| state.active_polls += 1);
        PollGuard(inner)
    }
}

impl Drop for PollGuard<'_> {
    fn drop(&mut self) {
        self.0
            .mutate(|state| state.active_polls = state.active_polls.saturating_sub(1));
    }
}

/// POSTs queued updates to the webhook, one at a time and in order, with
/// the secret header; an update stays queued and is retried after a short
/// backoff until the receiver answers 2xx, as on Telegram.
pub(crate) async fn deliver_webhooks(inner: Arc<Inner>) {
    let client = match reqwest::Client::builder()
        .no_proxy()
        .timeout(WEBHOOK_TIMEOUT)
        .build()
    {
        Ok(client) => client,
        Err(error) => {
            tracing::error!(%error, "fake Telegram: no HTTP client for webhooks");
            return;
        }
    };
    let mut retry = FIRST_RETRY;
    loop {
        let mut changed = pin!(inner.changed.notified());
        changed.as_mut().enable();
        let job = {
            let state = inner.lock();
            if state.closed {
                return;
            }
            state.next_delivery()
        };
        let Some((url, secret, update_id, body)) = job else {
            changed.await;
            continue;
        };
        let mut request = client.post(&url).json(&body);
        if let Some(secret) = &secret {
            request = request.header("X-Telegram-Bot-Api-Secret-Token", secret);
        }
        let delivery = match request.send().await {
            Ok(response) => WebhookDelivery {
                update_id,
                url,
                status: Some(response.status().as_u16()),
                error: None,
            },
            Err(error) => WebhookDelivery {
                update_id,
                url,
                status: None,
                error: Some(error.to_string()),
            },
        };
        let delivered = delivery.delivered();
        tracing::debug!(?delivery, "fake Telegram webhook attempt");
        inner.mutate(|state| state.record_delivery(delivery));
        if delivered {
            retry = FIRST_RETRY;
        } else {
            tokio::time::sleep(retry).await;
            retry = (retry * 2).min(MAX_RETRY);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bot_paths() {
        assert_eq!(
            bot_path("/bot123:ABC-x/SendMessage"),
            Some(("123:ABC-x".into(), "SendMessage".into()))
        );
        assert_eq!(
            bot_path("/prefix/bot1%3Ax/getMe"),
            Some(("1:x".into(), "getMe".into()))
        );
        assert_eq!(bot_path("/getMe"), None);
        assert_eq!(bot_path("/x/getMe"), None);
    }
}

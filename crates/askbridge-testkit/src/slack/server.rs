//! HTTP: the Web API at `/api/{method}`, the Socket Mode WebSocket at
//! `/socket`, and response URLs at `/actions/{team}/{id}/{secret}`
//! (block actions) and `/commands/{team}/{id}/{secret}` (slash commands).

use std::sync::Arc;
use std::time::Instant;

use axum::Router;
use axum::body::Body;
use axum::extract::ws::WebSocketUpgrade;
use axum::extract::{RawQuery, State as Shared};
use axum::http::header::{AUTHORIZATION, CONTENT_TYPE};
use axum::http::{HeaderName, HeaderValue, Request, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::any;
use serde_json::Value;

use super::socket;
use super::state::{ApiRequest, Reply, State};
use super::util::{form_decode, pairs_to_json};
use crate::faults::PlatformAnswers;

/// The state and the signal that it changed.
pub(crate) type Inner = crate::watched::Watched<State>;

/// Slack's answers to injected faults.
pub(crate) const FAULT_ANSWERS: PlatformAnswers = PlatformAnswers {
    rate_limited: || {
        respond(Reply {
            status: 429,
            body: serde_json::json!({"ok": false, "error": "ratelimited"}),
            headers: vec![("Retry-After", "1".to_owned())],
        })
    },
    server_error: || {
        respond(Reply {
            status: 500,
            body: serde_json::json!({"ok": false, "error": "internal_error"}),
            headers: Vec::new(),
        })
    },
};

/// The whole HTTP surface.
pub(crate) fn router(inner: Arc<Inner>) -> Router {
    Router::new()
        .route("/socket", any(socket_upgrade))
        .fallback(handle)
        .with_state(inner)
}

async fn socket_upgrade(
    Shared(inner): Shared<Arc<Inner>>,
    RawQuery(query): RawQuery,
    upgrade: WebSocketUpgrade,
) -> Response {
    let ticket = query.as_deref().and_then(|query| {
        form_decode(query)
            .into_iter()
            .find(|(key, _)| key == "ticket")
            .map(|(_, ticket)| ticket)
    });
    let Some(conn) = inner.mutate(|state| state.socket.open(ticket.as_deref())) else {
        return (StatusCode::UNAUTHORIZED, "invalid ticket").into_response();
    };
    upgrade.on_upgrade(move |socket| socket::serve(inner, socket, conn))
}

/// Request parameters from the query string and the body (form or JSON).
fn params(query: Option<&str>, content_type: &str, body: &[u8]) -> Value {
    let mut params = pairs_to_json(query.map(form_decode).unwrap_or_default());
    let body_params = if body.is_empty() {
        None
    } else if content_type.starts_with("application/json") {
        Some(
            serde_json::from_slice::<Value>(body)
                .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(body).into_owned())),
        )
    } else {
        Some(pairs_to_json(form_decode(&String::from_utf8_lossy(body))))
    };
    match (body_params, &mut params) {
        (Some(Value::Object(body)), Value::Object(params)) => {
            params.extend(body);
        }
        (Some(other), _) => return other,
        (None, _) => {}
    }
    params
}

async fn handle(Shared(inner): Shared<Arc<Inner>>, request: Request<Body>) -> Response {
    let (parts, body) = request.into_parts();
    let body = axum::body::to_bytes(body, usize::MAX)
        .await
        .unwrap_or_default();
    let content_type = parts
        .headers
        .get(CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .unwrap_or_default()
        .to_ascii_lowercase();
    let path = parts.uri.path().to_owned();
    let params = params(parts.uri.query(), &content_type, &body);
    let authorization = parts
        .headers
        .get(AUTHORIZATION)
        .and_then(|value| value.to_str().ok())
        .map(str::to_owned);
    tracing::debug!(%path, "fake Slack call");
    // `{api_url}/{method}`; slack-morphism joins the base URL and the
    // method with a `/`, so a base URL ending in `/` gives `//method`.
    let segments: Vec<&str> = path.split('/').filter(|part| !part.is_empty()).collect();
    let reply = match segments.as_slice() {
        ["api", method] => {
            let request = ApiRequest {
                http_method: parts.method.as_str().to_owned(),
                method: (*method).to_owned(),
                authorization,
                params,
            };
            inner.mutate(|state| state.api(request, Instant::now()))
        }
        // Response URLs: block actions' (`/actions/…`) and slash commands'
        // (`/commands/…`), as on `hooks.slack.com`.
        ["actions" | "commands", team, id, secret] => {
            let (team, id, secret) = ((*team).to_owned(), (*id).to_owned(), (*secret).to_owned());
            inner.mutate(|state| state.response_url(&team, &id, &secret, params, Instant::now()))
        }
        _ => Reply::not_found(),
    };
    respond(reply)
}

fn respond(reply: Reply) -> Response {
    let status = StatusCode::from_u16(reply.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let mut response = (status, axum::Json(reply.body)).into_response();
    let headers = response.headers_mut();
    for (name, value) in reply.headers {
        if let (Ok(name), Ok(value)) = (
            HeaderName::try_from(name),
            HeaderValue::try_from(value.as_str()),
        ) {
            headers.insert(name, value);
        }
    }
    response
}

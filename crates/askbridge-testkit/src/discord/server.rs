//! HTTP: the REST API under `/api/v10` and the gateway WebSocket at
//! `/gateway`.

use std::sync::Arc;
use std::time::Instant;

use axum::Router;
use axum::body::Body;
use axum::extract::State as Shared;
use axum::extract::ws::WebSocketUpgrade;
use axum::http::header::{AUTHORIZATION, CONTENT_TYPE};
use axum::http::{HeaderName, HeaderValue, Request, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::any;
use serde_json::Value;

use super::errors::Reply;
use super::gateway;
use super::state::{RestRequest, State};
use crate::faults::PlatformAnswers;

/// The API prefix serenity (and every client of API v10) uses.
const API_PREFIX: &str = "/api/v10";

/// The state and the signal that it changed.
pub(crate) type Inner = crate::watched::Watched<State>;

/// Discord's answers to injected faults.
pub(crate) const FAULT_ANSWERS: PlatformAnswers = PlatformAnswers {
    rate_limited: || {
        respond(Reply::rate_limited(
            1.0,
            false,
            vec![
                ("Retry-After", "1".to_owned()),
                ("X-RateLimit-Scope", "user".to_owned()),
            ],
        ))
    },
    server_error: || {
        respond(Reply {
            status: 500,
            body: Some(serde_json::json!({"message": "500: Internal Server Error", "code": 0})),
            headers: Vec::new(),
        })
    },
};

/// The whole HTTP surface.
pub(crate) fn router(inner: Arc<Inner>) -> Router {
    Router::new()
        .route("/gateway", any(gateway_upgrade))
        .fallback(handle)
        .with_state(inner)
}

async fn gateway_upgrade(Shared(inner): Shared<Arc<Inner>>, upgrade: WebSocketUpgrade) -> Response {
    upgrade.on_upgrade(move |socket| gateway::serve(inner, socket))
}

async fn handle(Shared(inner): Shared<Arc<Inner>>, request: Request<Body>) -> Response {
    let (parts, body) = request.into_parts();
    let body = axum::body::to_bytes(body, usize::MAX)
        .await
        .unwrap_or_default();
    let body = if body.is_empty() {
        None
    } else {
        Some(
            serde_json::from_slice::<Value>(&body)
                .map_err(|_| String::from_utf8_lossy(&body).into_owned()),
        )
    };
    let request = RestRequest {
        method: parts.method.as_str().to_owned(),
        path: parts.uri.path().to_owned(),
        query: parts.uri.query().map(str::to_owned),
        authorization: parts
            .headers
            .get(AUTHORIZATION)
            .and_then(|value| value.to_str().ok())
            .map(str::to_owned),
        body,
    };
    tracing::debug!(method = %request.method, path = %request.path, "fake Discord call");
    let reply = inner.mutate(|state| {
        let (route, path, reply) = match request.path.strip_prefix(API_PREFIX) {
            Some(path) => {
                let (route, reply) = state.rest(&request, path, Instant::now());
                (route, path.to_owned(), reply)
            }
            None => (
                request.path.clone(),
                request.path.clone(),
                Reply::api(super::errors::api::NOT_FOUND),
            ),
        };
        state.record_call(&request, path, route, &reply);
        reply
    });
    respond(reply)
}

fn respond(reply: Reply) -> Response {
    let status = StatusCode::from_u16(reply.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let mut response = match reply.body {
        Some(body) => (status, axum::Json(body)).into_response(),
        None => status.into_response(),
    };
    let headers = response.headers_mut();
    for (name, value) in reply.headers {
        if let (Ok(name), Ok(value)) = (
            HeaderName::try_from(name),
            HeaderValue::try_from(value.as_str()),
        ) {
            headers.insert(name, value);
        }
    }
    if status == StatusCode::NO_CONTENT {
        headers.remove(CONTENT_TYPE);
    }
    response
}

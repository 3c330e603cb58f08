//! HTTP: the Open API at `/open-apis/…`, the long connection's endpoint at
//! `/callback/ws/endpoint` and its WebSocket at `/ws/v2?…&ticket=…`.

use std::sync::Arc;
use std::time::Instant;

use axum::Router;
use axum::body::Body;
use axum::extract::ws::WebSocketUpgrade;
use axum::extract::{RawQuery, State as Shared};
use axum::http::header::AUTHORIZATION;
use axum::http::{HeaderName, HeaderValue, Request, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::any;

use super::socket;
use super::state::{ApiRequest, Reply, State};
use super::util::query_param;
use crate::faults::PlatformAnswers;

/// The state and the signal that it changed.
pub(crate) type Inner = crate::watched::Watched<State>;

/// Feishu's answers to injected faults.
pub(crate) const FAULT_ANSWERS: PlatformAnswers = PlatformAnswers {
    rate_limited: || {
        respond(Reply {
            status: 429,
            body: serde_json::json!({"code": 99_991_400, "msg": "request trigger frequency limit"}),
            headers: vec![
                ("x-ogw-ratelimit-limit", "50".to_owned()),
                ("x-ogw-ratelimit-reset", "1".to_owned()),
            ],
        })
    },
    server_error: || {
        respond(Reply {
            status: 500,
            body: serde_json::json!({"code": 500, "msg": "internal server error"}),
            headers: Vec::new(),
        })
    },
};

/// The whole HTTP surface.
pub(crate) fn router(inner: Arc<Inner>) -> Router {
    Router::new()
        .route("/ws/v2", any(socket_upgrade))
        .fallback(handle)
        .with_state(inner)
}

async fn socket_upgrade(
    Shared(inner): Shared<Arc<Inner>>,
    RawQuery(query): RawQuery,
    upgrade: WebSocketUpgrade,
) -> Response {
    let ticket = query_param(query.as_deref(), "ticket");
    match inner.mutate(|state| state.socket.open(ticket.as_deref())) {
        Ok(conn) => upgrade.on_upgrade(move |socket| socket::serve(inner, socket, conn)),
        Err(refusal) => {
            let mut response = (StatusCode::FORBIDDEN, refusal.message).into_response();
            let headers = response.headers_mut();
            headers.insert("Handshake-Status", HeaderValue::from(refusal.status));
            headers.insert(
                "Handshake-Autherrcode",
                HeaderValue::from(refusal.auth_code),
            );
            headers.insert("Handshake-Msg", HeaderValue::from_static(refusal.message));
            response
        }
    }
}

async fn handle(Shared(inner): Shared<Arc<Inner>>, request: Request<Body>) -> Response {
    let (parts, body) = request.into_parts();
    let body = axum::body::to_bytes(body, usize::MAX)
        .await
        .unwrap_or_default();
    let request = ApiRequest {
        http_method: parts.method.as_str().to_owned(),
        path: parts.uri.path().to_owned(),
        query: parts.uri.query().map(str::to_owned),
        authorization: parts
            .headers
            .get(AUTHORIZATION)
            .and_then(|value| value.to_str().ok())
            .map(str::to_owned),
        body: body.to_vec(),
    };
    tracing::debug!(path = %request.path, "fake Feishu call");
    let reply = inner.mutate(|state| state.api(request, Instant::now()));
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

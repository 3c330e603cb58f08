//! HTTP: the REST API under `/api/v10`, the gateway WebSocket at `/gateway`,
//! and the `CONNECT discord.com:443` tunnel for HTTPS clients.

use std::sync::{Arc, Mutex, MutexGuard, OnceLock, PoisonError};
use std::time::Instant;

use axum::Router;
use axum::body::Body;
use axum::extract::State as Shared;
use axum::extract::ws::WebSocketUpgrade;
use axum::http::header::{AUTHORIZATION, CONTENT_TYPE};
use axum::http::{HeaderName, HeaderValue, Method, Request, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::any;
use hyper_util::rt::TokioIo;
use hyper_util::service::TowerToHyperService;
use serde_json::Value;
use tokio::sync::Notify;

use super::errors::Reply;
use super::gateway;
use super::state::{RestRequest, State};
use super::tls::{self, Tls};

/// The API prefix serenity (and every client of API v10) uses.
const API_PREFIX: &str = "/api/v10";

/// The state, the signal that it changed, and the TLS material.
pub(crate) struct Inner {
    state: Mutex<State>,
    /// Woken (all waiters) after every change to the state.
    pub(crate) changed: Notify,
    tls: OnceLock<Result<Tls, String>>,
}

impl Inner {
    pub(crate) fn new(state: State) -> Inner {
        Inner {
            state: Mutex::new(state),
            changed: Notify::new(),
            tls: OnceLock::new(),
        }
    }

    /// The state; a test that panicked while holding it does not poison it
    /// for the others.
    pub(crate) fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Changes the state and wakes everyone waiting on it.
    pub(crate) fn mutate<T>(&self, change: impl FnOnce(&mut State) -> T) -> T {
        let out = change(&mut self.lock());
        self.changed.notify_waiters();
        out
    }

    /// Runs `change`; wakes the waiters only if it says it changed
    /// something.
    pub(crate) fn mutate_if<T>(&self, change: impl FnOnce(&mut State) -> (T, bool)) -> T {
        let (out, changed) = change(&mut self.lock());
        if changed {
            self.changed.notify_waiters();
        }
        out
    }

    /// The TLS certificate authority and acceptor, made on first use.
    pub(crate) fn tls(&self) -> Result<&Tls, String> {
        self.tls
            .get_or_init(tls::generate)
            .as_ref()
            .map_err(Clone::clone)
    }
}

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
    if request.method() == Method::CONNECT {
        return tunnel(inner, request);
    }
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

/// `CONNECT discord.com:443`: answers 200, then serves the same API over TLS
/// (with the fake's own certificate for `discord.com`) on the tunnel.
/// Nothing is forwarded anywhere: other targets are refused.
fn tunnel(inner: Arc<Inner>, mut request: Request<Body>) -> Response {
    let target = request
        .uri()
        .authority()
        .map(|authority| authority.as_str().to_owned())
        .unwrap_or_default();
    let allowed = tls::HOSTS
        .iter()
        .any(|host| target == format!("{host}:443"));
    if !allowed {
        return (
            StatusCode::FORBIDDEN,
            format!(
                "the fake Discord tunnels only to {:?} on port 443",
                tls::HOSTS
            ),
        )
            .into_response();
    }
    let acceptor = match inner.tls() {
        Ok(tls) => tls.acceptor.clone(),
        Err(error) => {
            return (
                StatusCode::INTERNAL_SERVER_ERROR,
                format!("no TLS: {error}"),
            )
                .into_response();
        }
    };
    let Some(on_upgrade) = request
        .extensions_mut()
        .remove::<hyper::upgrade::OnUpgrade>()
    else {
        return (
            StatusCode::INTERNAL_SERVER_ERROR,
            "connection cannot be upgraded",
        )
            .into_response();
    };
    tokio::spawn(async move {
        let upgraded = match on_upgrade.await {
            Ok(upgraded) => upgraded,
            Err(error) => {
                tracing::debug!(%error, "fake Discord tunnel: upgrade failed");
                return;
            }
        };
        let stream = match acceptor.accept(TokioIo::new(upgraded)).await {
            Ok(stream) => stream,
            Err(error) => {
                tracing::debug!(%error, "fake Discord tunnel: TLS handshake failed");
                return;
            }
        };
        inner.mutate(|state| state.tunnels += 1);
        let service = TowerToHyperService::new(router(inner));
        if let Err(error) = hyper::server::conn::http1::Builder::new()
            .serve_connection(TokioIo::new(stream), service)
            .with_upgrades()
            .await
        {
            tracing::debug!(%error, "fake Discord tunnel: connection ended");
        }
    });
    StatusCode::OK.into_response()
}

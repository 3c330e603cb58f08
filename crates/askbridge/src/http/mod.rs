//! The HTTP API (axum; docs/http-api.md): asks under `/v1`, `/healthz`, `/metrics`
//! and the OpenAPI document, plus the daemon's whole router: the web page
//! (merged at `/`) and MCP (nested at `/mcp`) come from their own modules
//! and are mounted here behind the same middleware.
//!
//! The API's routes are registered with utoipa-axum, each together with
//! its documentation (`api_routes`); the OpenAPI document served at
//! `/v1/openapi.json` is built from that same table ([`openapi`]).
//!
//! Middleware, outermost first: one tracing span per request (method and
//! path only — never headers or the query, so tokens stay out of logs);
//! `guard`, which counts requests by route and status and logs each error
//! once, rewrites bare error responses from outside the handlers (axum's
//! 404/405, the body limit's 413, another router's text) into the JSON
//! error shape, refuses requests from other sites ([`site`]: a `Host`
//! not the daemon's, another site's `Origin`) and checks the bearer token
//! for `/v1`, `/mcp` and `/metrics`; the body size limit.
//!
//! This module talks only to [`Bridge`]; it does not read files or the
//! environment (the `serve` command passes [`HttpOptions`] in).

pub(crate) mod asks;
mod auth;
pub mod error;
pub mod extract;
mod hooks;
pub mod host;
pub mod metrics;
mod notices;
pub mod openapi;
mod site;

pub(crate) use auth::same as same_secret;

use std::sync::Arc;

use axum::Router;
use axum::body::{Bytes, to_bytes};
use axum::extract::{DefaultBodyLimit, MatchedPath, Request, State};
use axum::http::{Method, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use hyper_util::rt::TokioIo;
use hyper_util::server::graceful::GracefulShutdown;
use hyper_util::service::TowerToHyperService;
use tokio::sync::watch;
use tower_http::limit::RequestBodyLimitLayer;
use tower_http::trace::{DefaultOnResponse, TraceLayer};
use tracing::Level;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::bridge::Bridge;
use crate::config::Secret;
pub use error::ApiError;
use error::{ErrorInfo, code_for, json_response};
use metrics::HttpMetrics;

use crate::wire::api::{HealthResponse, HookSettings};

/// What the HTTP layer needs from the configuration.
#[derive(Debug, Clone)]
pub struct HttpOptions {
    /// When set, `/v1`, `/mcp` and `/metrics` need `Authorization: Bearer`.
    pub api_token: Option<Secret>,
    /// Largest request body accepted, in bytes.
    pub max_body_bytes: usize,
    /// Cancel an ask when its creator's waiting `POST /v1/asks?wait=`
    /// connection closes before the outcome.
    pub cancel_on_disconnect: bool,
    /// The `[hooks]` settings `GET /v1/hooks` serves.
    pub hooks: HookSettings,
    /// The `Host` values every route but `/healthz` and the platforms'
    /// inbound routes answers to (`[http] allowed_hosts`).
    pub allowed_hosts: Vec<String>,
}

/// The routers other modules contribute to the daemon.
#[derive(Default)]
pub struct Mounts {
    /// The web page and its event stream, merged at the root; the event
    /// stream is documented with the API.
    pub web: Option<OpenApiRouter>,
    /// The MCP service, nested at `/mcp`.
    pub mcp: Option<Router>,
    /// Platform webhooks (`/telegram/webhook`, `/discord/interactions`),
    /// merged at the root; outside the bearer token, each checks its
    /// platform's own secret.
    pub webhooks: Vec<Router>,
}

impl std::fmt::Debug for Mounts {
    /// Which mounts there are (utoipa-axum's router has no `Debug`).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Mounts")
            .field("web", &self.web.is_some())
            .field("mcp", &self.mcp)
            .field("webhooks", &self.webhooks)
            .finish()
    }
}

/// Tells long waits that the daemon is stopping; created by the `serve`
/// command, which flips it on Ctrl-C or SIGTERM.
#[derive(Debug, Clone)]
pub struct ShutdownSignal(watch::Receiver<bool>);

impl ShutdownSignal {
    /// A signal and the sender that triggers it (send `true`).
    pub fn new() -> (watch::Sender<bool>, ShutdownSignal) {
        let (sender, receiver) = watch::channel(false);
        (sender, ShutdownSignal(receiver))
    }

    /// Whether shutdown has begun.
    pub fn is_triggered(&self) -> bool {
        *self.0.borrow()
    }

    /// Resolves once shutdown begins; never, if the sender is gone
    /// without triggering it.
    pub async fn triggered(&self) {
        let mut receiver = self.0.clone();
        if receiver.wait_for(|stopping| *stopping).await.is_err() {
            std::future::pending::<()>().await;
        }
    }
}

/// Shared by the handlers.
#[derive(Debug, Clone)]
pub struct AppState {
    bridge: Bridge,
    metrics: Arc<HttpMetrics>,
    shutdown: ShutdownSignal,
    cancel_on_disconnect: bool,
    max_body_bytes: usize,
    api_token: Option<Arc<Secret>>,
    /// The daemon's own names ([`site`]).
    sites: Arc<site::AllowedHosts>,
    host_keys: host::HostKeys,
    /// The `[hooks]` settings.
    hooks: Arc<HookSettings>,
    /// The OpenAPI document, as served.
    openapi: Bytes,
}

/// The API's routes, each registered together with its documentation:
/// `routes!` reads every handler's method and path from its
/// `#[utoipa::path]`, so the router and the OpenAPI document come from
/// this one table.
fn api_routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::with_openapi(openapi::frame())
        .routes(routes!(asks::create, asks::list))
        .routes(routes!(asks::get, asks::cancel))
        .routes(routes!(asks::reply))
        .routes(routes!(notices::create))
        .routes(routes!(hooks::settings))
        .routes(routes!(openapi_document))
        .routes(routes!(healthz))
        .routes(routes!(metrics_text))
}

/// The daemon's router: the API, the mounted web and MCP routers, and the
/// middleware around all of them.
pub fn app(
    bridge: Bridge,
    options: HttpOptions,
    mounts: Mounts,
    shutdown: ShutdownSignal,
) -> Router {
    let mut api = api_routes();
    if let Some(web) = mounts.web {
        api = api.merge(web.with_state(()));
    }
    let (api, mut document) = api.split_for_parts();
    openapi::finish(&mut document);
    let state = AppState {
        bridge,
        metrics: Arc::new(HttpMetrics::default()),
        shutdown,
        cancel_on_disconnect: options.cancel_on_disconnect,
        max_body_bytes: options.max_body_bytes,
        api_token: options.api_token.map(Arc::new),
        sites: Arc::new(site::AllowedHosts::new(&options.allowed_hosts)),
        host_keys: host::HostKeys::default(),
        hooks: Arc::new(options.hooks),
        openapi: openapi::to_json(&document),
    };
    let mut app = api.with_state(state.clone());
    for webhook in mounts.webhooks {
        app = app.merge(webhook);
    }
    if let Some(mcp) = mounts.mcp {
        app = app.nest("/mcp", mcp);
    }
    app.fallback(not_found)
        .method_not_allowed_fallback(method_not_allowed)
        .layer(RequestBodyLimitLayer::new(options.max_body_bytes))
        .layer(DefaultBodyLimit::max(options.max_body_bytes))
        .layer(middleware::from_fn_with_state(state, guard))
        .layer(
            TraceLayer::new_for_http()
                .make_span_with(|request: &Request| {
                    tracing::info_span!(
                        "request",
                        method = %request.method(),
                        path = %request.uri().path(),
                    )
                })
                .on_request(())
                .on_response(DefaultOnResponse::new().level(Level::DEBUG))
                .on_failure(()),
        )
}

/// Health: up, which instance, which database.
///
/// Never needs a token.
#[utoipa::path(
    get,
    path = "/healthz",
    operation_id = "health",
    responses((status = OK, body = HealthResponse, description = "Up.")),
)]
async fn healthz(State(state): State<AppState>) -> Response {
    let bridge = &state.bridge;
    let health = HealthResponse {
        status: "ok",
        instance: bridge.instance().to_owned(),
        database: bridge.backend().into(),
        owns: bridge.owned(),
    };
    json_response(StatusCode::OK, &health)
}

/// Serves `app` on `listener` over HTTP/1.1 until `shutdown` triggers,
/// then stops accepting and lets the requests in flight finish (waits
/// return at once on the same signal). The one way the daemon, tests and
/// benches start the HTTP server.
///
/// Every waiting agent holds a connection here, so what one connection
/// costs while its request waits is what bounds an instance. Hence hyper's
/// HTTP/1 connection rather than `axum::serve`, which for every connection
/// rebuilds the router's route table (about 10 KB) and runs hyper-util's
/// HTTP/1-or-2 connection, whose version sniffing doubles the read buffer
/// to 16 KB and whose task reserves room for an HTTP/2 connection. Nothing
/// here speaks cleartext HTTP/2 or upgrades a connection (WebSocket).
pub async fn serve(
    listener: tokio::net::TcpListener,
    app: Router,
    shutdown: ShutdownSignal,
) -> std::io::Result<()> {
    // Turns every handler into a route once; clones are then one `Arc`.
    let app = app.with_state(());
    let builder = hyper::server::conn::http1::Builder::new();
    let connections = GracefulShutdown::new();
    loop {
        let stream = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => stream,
                Err(error) => {
                    accept_failed(error).await;
                    continue;
                }
            },
            () = shutdown.triggered() => break,
        };
        let service = TowerToHyperService::new(app.clone());
        let connection = connections.watch(builder.serve_connection(TokioIo::new(stream), service));
        tokio::spawn(async move {
            if let Err(error) = connection.await {
                tracing::trace!(%error, "connection ended with an error");
            }
        });
    }
    drop(listener);
    connections.shutdown().await;
    Ok(())
}

/// After a failed accept: a connection reset before it was accepted is
/// nothing; anything else (out of file descriptors, say) is logged and
/// the loop pauses a second rather than spin.
async fn accept_failed(error: std::io::Error) {
    use std::io::ErrorKind;
    if matches!(
        error.kind(),
        ErrorKind::ConnectionRefused | ErrorKind::ConnectionAborted | ErrorKind::ConnectionReset
    ) {
        return;
    }
    tracing::error!(%error, "accept failed");
    tokio::time::sleep(std::time::Duration::from_secs(1)).await;
}

/// Prometheus metrics.
#[utoipa::path(
    get,
    path = "/metrics",
    operation_id = "metrics",
    responses((status = OK, body = String, content_type = "text/plain",
               description = "Prometheus text format 0.0.4 (docs/http-api.md lists the metrics).")),
)]
async fn metrics_text(State(state): State<AppState>) -> Response {
    let text = state.metrics.render(&state.bridge.metrics());
    (
        [(
            header::CONTENT_TYPE,
            "text/plain; version=0.0.4; charset=utf-8",
        )],
        text,
    )
        .into_response()
}

/// This document.
#[utoipa::path(
    get,
    path = "/v1/openapi.json",
    operation_id = "openapi",
    responses((status = OK, content_type = "application/json",
               description = "The HTTP API as an OpenAPI 3.1 document.")),
)]
async fn openapi_document(State(state): State<AppState>) -> Response {
    (
        [(header::CONTENT_TYPE, "application/json")],
        state.openapi.clone(),
    )
        .into_response()
}

async fn not_found(method: Method, uri: axum::http::Uri) -> ApiError {
    ApiError::new(
        StatusCode::NOT_FOUND,
        "not_found",
        format!("no route for {method} {}", uri.path()),
    )
}

async fn method_not_allowed(method: Method, uri: axum::http::Uri) -> ApiError {
    ApiError::new(
        StatusCode::METHOD_NOT_ALLOWED,
        "method_not_allowed",
        format!("{method} is not allowed on {}", uri.path()),
    )
}

/// The daemon's own middleware, in one layer because every layer's future
/// lives as long as its request and a waiting request may live for an
/// hour: refuses protected paths without the bearer token, rewrites bare
/// error responses into the JSON shape ([`json_error`]), and counts every
/// request by method, route and status, logging each error once ([`log`]).
async fn guard(State(state): State<AppState>, request: Request, next: Next) -> Response {
    let method = match *request.method() {
        Method::GET
        | Method::POST
        | Method::PUT
        | Method::PATCH
        | Method::DELETE
        | Method::HEAD
        | Method::OPTIONS => request.method().as_str().to_owned(),
        _ => "OTHER".to_owned(),
    };
    let route = request
        .extensions()
        .get::<MatchedPath>()
        .map_or_else(|| "unmatched".to_owned(), |path| path.as_str().to_owned());
    let refusal = site::refusal(&state.sites, &request)
        .or_else(|| auth::refusal(state.api_token.as_deref(), &request));
    let response = match refusal {
        Some(refusal) => refusal,
        None => json_error(&state, next.run(request).await).await,
    };
    state
        .metrics
        .request(&method, &route, response.status().as_u16());
    log(&response);
    response
}

/// Logs an error response once: server errors at `error` with their cause,
/// refusals at `debug`.
fn log(response: &Response) {
    let status = response.status();
    match response.extensions().get::<ErrorInfo>() {
        Some(info) if status.is_server_error() => tracing::error!(
            status = status.as_u16(),
            code = info.code,
            cause = info.cause.as_deref().unwrap_or("unknown"),
            "request failed"
        ),
        Some(info) => tracing::debug!(
            status = status.as_u16(),
            code = info.code,
            "request refused"
        ),
        None if status.is_server_error() => {
            tracing::error!(status = status.as_u16(), "request failed");
        }
        None => {}
    }
}

/// Rewrites a bare error response (no body, or plain text) into the JSON
/// error shape, keeping its status and headers.
async fn json_error(state: &AppState, response: Response) -> Response {
    let status = response.status();
    if !(status.is_client_error() || status.is_server_error())
        || response.extensions().get::<ErrorInfo>().is_some()
    {
        return response;
    }
    let plain = response
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_none_or(|ct| ct.starts_with("text/plain"));
    if !plain {
        return response;
    }
    let (parts, body) = response.into_parts();
    let error = if status == StatusCode::PAYLOAD_TOO_LARGE {
        ApiError::body_too_large(state.max_body_bytes)
    } else {
        let text = to_bytes(body, 16 * 1024)
            .await
            .map(|bytes| String::from_utf8_lossy(&bytes).trim().to_owned())
            .unwrap_or_default();
        let message = if text.is_empty() {
            status.canonical_reason().unwrap_or("error").to_owned()
        } else {
            text
        };
        let mut error = ApiError::new(status, code_for(status), message);
        if status.is_server_error() {
            error.cause = Some(error.message.clone());
        }
        error
    };
    let mut rewritten = error.into_response();
    for (name, value) in &parts.headers {
        if name != header::CONTENT_TYPE && name != header::CONTENT_LENGTH {
            rewritten.headers_mut().insert(name.clone(), value.clone());
        }
    }
    rewritten
}

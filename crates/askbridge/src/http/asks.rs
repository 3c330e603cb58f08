//! The ask endpoints: create, read (long-poll), cancel, list, reply.
//!
//! Request bodies are read from [`serde_json::Value`] by hand: an ask goes
//! through the core's normaliser (any dialect), a reply is checked key by
//! key, and every mistake names its path in the body.
//!
//! Each handler's `#[utoipa::path]` registers its method and path with the
//! router and describes it in the OpenAPI document; its doc comment is the
//! operation's summary (first line) and description.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use askbridge_core::lifecycle::{Input, Step, UnknownItems};
use askbridge_core::model::Responder;
use askbridge_core::model::{CallbackEvent, ChannelKind, Target, Timestamp};
use askbridge_core::normalize::{
    Normalized, Problem, kind_of, normalize_input, normalize_json, normalize_places,
};
use askbridge_core::outcome::Via;
use axum::extract::State;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::Response;
use serde_json::{Map, Value};
use utoipa::openapi::path::{Parameter, ParameterIn};
use utoipa::openapi::schema::{ObjectBuilder, Type};
use utoipa::{IntoParams, PartialSchema};

use super::AppState;
use super::error::{ApiError, json_response};
use super::extract::{AskId, Hold, JsonBody, QueryParams, Wait};
use super::host;
use super::openapi::parameter;
use crate::bridge::{AskView, Bridge, BridgeError, ListFilter, NewAsk};
use crate::web::PAGE_USER;
use crate::wire::api::{
    AskList, AskResponse, CallbackDelivery, CallbackJson, ErrorResponse, ReplyResponse,
};
use crate::wire::names::Channel;
use crate::wire::request::{AskRequest, ReplyRequest};

/// Default and largest `limit` of `GET /v1/asks`.
const DEFAULT_LIST_LIMIT: usize = 100;
const MAX_LIST_LIMIT: usize = 1_000;
/// Longest `Idempotency-Key` accepted, in bytes.
pub(super) const MAX_IDEMPOTENCY_KEY: usize = 255;

/// Create an ask; with `wait`, wait for its outcome.
///
/// The body is an ask in any dialect, or `{"ask": …, "to": …}` whose `to`
/// overrides the ask's own. With `wait`, the response comes when the ask
/// ends or the wait is over; if the client goes away first, the ask is
/// cancelled (`cancel_on_disconnect`, on by default): the agent is no longer
/// listening. An ask for a channel the daemon has not configured is created
/// and ends at once as `no_answer` / `delivery_failed`.
#[utoipa::path(
    post,
    path = "/v1/asks",
    operation_id = "createAsk",
    params(Wait, IdempotencyKey),
    request_body = AskRequest,
    responses(
        (status = CREATED, body = AskResponse,
         description = "Created, and still pending. `warnings` lists what the normaliser fixed.",
         headers(("Location" = String, description = "The ask: `/v1/asks/{id}`."))),
        (status = OK, body = AskResponse,
         description = "The ask ended within the wait (its outcome), or this is a retry with a \
                        known `Idempotency-Key` (the ask created the first time)."),
        (status = BAD_REQUEST, body = ErrorResponse,
         description = "`malformed_json`, `unreadable_body`, `invalid_query` or `invalid_header`."),
        (status = CONFLICT, body = ErrorResponse,
         description = "`idempotency_conflict`: the key was used before for a different ask."),
        (status = PAYLOAD_TOO_LARGE, body = ErrorResponse, description = "`body_too_large`."),
        (status = UNSUPPORTED_MEDIA_TYPE, body = ErrorResponse,
         description = "`unsupported_media_type`: no JSON `Content-Type`."),
        (status = UNPROCESSABLE_ENTITY, body = ErrorResponse,
         description = "`invalid_ask`: `path` and `message` name the first problem, `errors` \
                        lists every one."),
        (status = INTERNAL_SERVER_ERROR, body = ErrorResponse,
         description = "`internal`: storage failed; the cause is in the daemon's log."),
        (status = SERVICE_UNAVAILABLE, body = ErrorResponse,
         description = "`unavailable`: the database cannot be reached right now; try again."),
    )
)]
pub async fn create(
    State(state): State<AppState>,
    headers: HeaderMap,
    mut query: QueryParams,
    JsonBody(body): JsonBody,
) -> Result<Response, ApiError> {
    let wait = query.take_wait()?;
    query.finish(&["wait"])?;
    let idempotency_key = idempotency_key(&headers)?;
    let normalized = read_ask(&body)?;
    let (view, created) = state
        .bridge
        .create(NewAsk {
            ask: normalized.ask,
            idempotency_key,
        })
        .await?;
    tracing::debug!(ask_id = %view.id, created, "ask received");
    let view = match wait {
        Some(wait) if !wait.is_zero() && view.state.is_pending() => {
            wait_for(&state, &view.id, wait, state.cancel_on_disconnect).await?
        }
        _ => view,
    };
    let mut response = AskResponse::from(&view).with_warnings(&normalized.warnings);
    // The host key answers for anyone: only the request that created the
    // ask gets it, never one that repeats its Idempotency-Key.
    if created && !response.is_ended() {
        response = response.with_host_key(state.host_keys.key(&state.bridge, &view.id).await?);
    }
    let status = if created && !response.is_ended() {
        StatusCode::CREATED
    } else {
        StatusCode::OK
    };
    let mut http = json_response(status, &response);
    if let Ok(location) = HeaderValue::from_str(&format!("/v1/asks/{}", view.id)) {
        http.headers_mut().insert(header::LOCATION, location);
    }
    Ok(http)
}

/// Read an ask; with `wait`, long-poll until it ends.
///
/// The ask as it is now, or once it has ended or the wait is over (then
/// still pending). Closing a long-poll never cancels the ask — the agent may
/// be reconnecting — unless it says `hold=true`.
#[utoipa::path(
    get,
    path = "/v1/asks/{id}",
    operation_id = "getAsk",
    params(AskId, Wait, Hold),
    responses(
        (status = OK, body = AskResponse, description = "The ask: pending or ended."),
        (status = BAD_REQUEST, body = ErrorResponse,
         description = "`invalid_query` or `invalid_path`."),
        (status = NOT_FOUND, body = ErrorResponse, description = "`not_found`: no such ask."),
        (status = INTERNAL_SERVER_ERROR, body = ErrorResponse, description = "`internal`."),
        (status = SERVICE_UNAVAILABLE, body = ErrorResponse,
         description = "`unavailable`: the database cannot be reached right now; try again."),
    )
)]
pub async fn get(
    State(state): State<AppState>,
    AskId(id): AskId,
    mut query: QueryParams,
) -> Result<Response, ApiError> {
    let wait = query.take_wait()?;
    let hold = query.take_hold()?;
    query.finish(&["wait", "hold"])?;
    let view = match wait {
        Some(wait) if !wait.is_zero() => {
            if hold {
                tracing::debug!(ask_id = %id, "a request holds the ask");
            }
            wait_for(&state, &id, wait, hold && state.cancel_on_disconnect).await?
        }
        _ => state.bridge.get(&id).await?,
    };
    let callback = callback_json(&state.bridge, &view).await?;
    Ok(json_response(
        StatusCode::OK,
        &shown(&state.bridge, &view).await?.with_callback(callback),
    ))
}

/// The ask as `GET /v1/asks/{id}` shows it, webhook deliveries aside
/// (what a webhook sends).
pub(crate) async fn shown(bridge: &Bridge, view: &AskView) -> Result<AskResponse, BridgeError> {
    let refs = bridge.message_refs(&view.id).await?;
    let failed = bridge.failed_places(&view.id);
    let places = crate::chat::place_states(view, &refs, &failed, bridge.now());
    Ok(AskResponse::from(view).with_places(places))
}

/// The ask's webhook and how its deliveries stand, if it has one.
async fn callback_json(
    bridge: &Bridge,
    view: &AskView,
) -> Result<Option<CallbackJson>, BridgeError> {
    let Some(callback) = &view.ask.callback else {
        return Ok(None);
    };
    let deliveries = bridge
        .webhooks_of(&view.id)
        .await?
        .into_iter()
        .filter_map(|row| {
            let event = CallbackEvent::parse(&row.event)?;
            let state = match row.state.as_str() {
                "pending" if event == CallbackEvent::Ended && view.state.is_pending() => "waiting",
                "pending" => "pending",
                "delivered" => "delivered",
                "gone" => "gone",
                _ => "failed",
            };
            let at = |millis: i64| Timestamp(u64::try_from(millis).unwrap_or(0)).rfc3339();
            Some(CallbackDelivery {
                id: row.id,
                event: event.into(),
                state,
                attempts: u32::try_from(row.attempts).unwrap_or(u32::MAX),
                last_status: row
                    .last_status
                    .and_then(|status| u16::try_from(status).ok()),
                last_error: row.last_error,
                next_attempt_at: (state == "pending").then(|| at(row.due_at)),
                delivered_at: row.delivered_at.map(at),
            })
        })
        .collect();
    Ok(Some(CallbackJson {
        url: callback.url.clone(),
        events: callback.events.iter().copied().map(Into::into).collect(),
        deliveries,
    }))
}

/// Cancel an ask.
///
/// Ends a pending ask as `no_answer` / `cancelled` and returns it; the
/// question message in the chat gets its closing line. An ask that has
/// already ended is returned as it is.
#[utoipa::path(
    delete,
    path = "/v1/asks/{id}",
    operation_id = "cancelAsk",
    params(AskId, CancelParams),
    responses(
        (status = OK, body = AskResponse, description = "The ask after cancelling."),
        (status = BAD_REQUEST, body = ErrorResponse,
         description = "`invalid_query` or `invalid_path`."),
        (status = NOT_FOUND, body = ErrorResponse, description = "`not_found`: no such ask."),
        (status = INTERNAL_SERVER_ERROR, body = ErrorResponse, description = "`internal`."),
        (status = SERVICE_UNAVAILABLE, body = ErrorResponse,
         description = "`unavailable`: the database cannot be reached right now; try again."),
    )
)]
pub async fn cancel(
    State(state): State<AppState>,
    AskId(id): AskId,
    mut query: QueryParams,
) -> Result<Response, ApiError> {
    let input = match query.take("because").as_deref() {
        None | Some("agent") => Input::Cancel,
        Some("answered_in_host") => Input::AnsweredInHost,
        Some(other) => {
            return Err(ApiError::invalid_query(
                "because",
                format!("unknown value {other:?}; expected agent or answered_in_host"),
            ));
        }
    };
    query.finish(&["because"])?;
    let why = match input {
        Input::AnsweredInHost => "answered in the agent host's own prompt",
        _ => "cancelled by the agent",
    };
    let view = state.bridge.end(&id, input).await?;
    tracing::info!(ask_id = %view.id, state = view.state.as_str(), "ask ended: {why}");
    Ok(json_response(StatusCode::OK, &AskResponse::from(&view)))
}

/// List asks, newest first.
#[utoipa::path(
    get,
    path = "/v1/asks",
    operation_id = "listAsks",
    params(ListParams),
    responses(
        (status = OK, body = AskList, description = "The asks."),
        (status = BAD_REQUEST, body = ErrorResponse, description = "`invalid_query`."),
        (status = INTERNAL_SERVER_ERROR, body = ErrorResponse, description = "`internal`."),
        (status = SERVICE_UNAVAILABLE, body = ErrorResponse,
         description = "`unavailable`: the database cannot be reached right now; try again."),
    )
)]
pub async fn list(
    State(state): State<AppState>,
    mut query: QueryParams,
) -> Result<Response, ApiError> {
    let pending_only = match query.take("status").as_deref() {
        None | Some("all") => false,
        Some("pending") => true,
        Some(other) => {
            return Err(ApiError::invalid_query(
                "status",
                format!("expected pending or all, got {other:?}"),
            ));
        }
    };
    let channel = match query.take("channel") {
        None => None,
        Some(name) => Some(channel_kind(&name).ok_or_else(|| {
            ApiError::invalid_query(
                "channel",
                format!(
                    "expected telegram, discord, slack, feishu, matrix, teams, email or web, got {name:?}"
                ),
            )
        })?),
    };
    let limit = match query.take("limit") {
        None => DEFAULT_LIST_LIMIT,
        Some(text) => text
            .trim()
            .parse::<usize>()
            .ok()
            .filter(|&n| n >= 1)
            .map(|n| n.min(MAX_LIST_LIMIT))
            .ok_or_else(|| {
                ApiError::invalid_query(
                    "limit",
                    format!("expected a whole number from 1 to {MAX_LIST_LIMIT}, got {text:?}"),
                )
            })?,
    };
    query.finish(&["status", "channel", "limit"])?;
    let views = state
        .bridge
        .list(ListFilter {
            pending_only,
            channel,
            limit: Some(limit),
        })
        .await?;
    let list = AskList {
        asks: views.iter().map(AskResponse::from).collect(),
    };
    Ok(json_response(StatusCode::OK, &list))
}

/// Answer an ask.
///
/// What the web page uses, and any client may: typed text resolved like a
/// chat reply, or structured answers by question id, from the `web`
/// channel's user (`user`, default id `web`). Rejected answers change
/// nothing.
#[utoipa::path(
    post,
    path = "/v1/asks/{id}/reply",
    operation_id = "replyToAsk",
    params(AskId, HostKey),
    request_body = ReplyRequest,
    responses(
        (status = OK, body = ReplyResponse, description = "The reply was taken."),
        (status = BAD_REQUEST, body = ErrorResponse,
         description = "`malformed_json`, `unreadable_body`, `invalid_query` or `invalid_path`."),
        (status = FORBIDDEN, body = ErrorResponse,
         description = "`not_for_you`: the ask names another user; `not_host`: \
                        `\"via\": \"host\"` or an `Askbridge-Host-Key` without this \
                        ask's host key."),
        (status = NOT_FOUND, body = ErrorResponse, description = "`not_found`: no such ask."),
        (status = CONFLICT, body = ErrorResponse,
         description = "`already_answered`: the ask has ended (\"This question was already \
                        answered.\")."),
        (status = PAYLOAD_TOO_LARGE, body = ErrorResponse, description = "`body_too_large`."),
        (status = UNSUPPORTED_MEDIA_TYPE, body = ErrorResponse,
         description = "`unsupported_media_type`."),
        (status = UNPROCESSABLE_ENTITY, body = ErrorResponse,
         description = "`invalid_request` (a body of the wrong shape) or `invalid_answer` \
                        (answers that do not fit the ask; `path` names the question, \
                        `answers.notify`)."),
        (status = INTERNAL_SERVER_ERROR, body = ErrorResponse, description = "`internal`."),
        (status = SERVICE_UNAVAILABLE, body = ErrorResponse,
         description = "`unavailable`: the database cannot be reached right now; try again."),
    )
)]
pub async fn reply(
    State(state): State<AppState>,
    AskId(id): AskId,
    headers: HeaderMap,
    query: QueryParams,
    JsonBody(body): JsonBody,
) -> Result<Response, ApiError> {
    query.finish(&[])?;
    let host = match headers.get(host::HEADER) {
        None => false,
        Some(given) => {
            let given = given.to_str().unwrap_or_default();
            if !state.host_keys.verify(&state.bridge, &id, given).await? {
                return Err(not_host(
                    "the Askbridge-Host-Key header is not this ask's host key",
                ));
            }
            true
        }
    };
    let input = read_reply(&body, host)?;
    let (step, view) = state.bridge.handle(&id, input).await?;
    match (&step, ReplyResponse::from_step(&step, &view)) {
        (_, Some(response)) => {
            tracing::debug!(ask_id = %id, result = ?response.result, "reply taken");
            Ok(json_response(StatusCode::OK, &response))
        }
        (Step::Rejected(rejection), None) => Err(ApiError::rejection(rejection, &view.ask)),
        (_, None) => Err(ApiError::internal(
            "a step was neither accepted nor rejected",
        )),
    }
}

/// Waits for the ask to end, at most `wait`, and returns it as it then is.
///
/// Returns early (with the ask as it is) when the daemon shuts down. With
/// `cancel_on_disconnect`, the ask is cancelled if the caller goes away
/// (the handler future is dropped) before the wait is over.
async fn wait_for(
    state: &AppState,
    id: &str,
    wait: Duration,
    cancel_on_disconnect: bool,
) -> Result<AskView, ApiError> {
    let started = now_millis();
    let guard = CancelOnDrop {
        armed: cancel_on_disconnect,
        bridge: state.bridge.clone(),
        id: id.to_owned(),
        shutdown: state.shutdown.clone(),
    };
    let waiting = state.metrics.waiting();
    let waited = tokio::select! {
        result = state.bridge.wait(id, wait) => Some(result),
        () = state.shutdown.triggered() => None,
    };
    drop(waiting);
    // Boxed: the read after a shutdown would otherwise take room in this
    // future for the whole wait.
    let result = match waited {
        Some(result) => result,
        None => Box::pin(state.bridge.get(id)).await,
    };
    guard.disarm();
    let view = result?;
    if let Some(outcome) = &view.outcome
        && outcome.answered_by.is_some()
        && outcome.answered_at.0 >= started
    {
        let latency = now_millis().saturating_sub(outcome.answered_at.0);
        state.metrics.delivered(Duration::from_millis(latency));
    }
    Ok(view)
}

/// Cancels the ask when dropped while armed: the agent's waiting request
/// went away before the outcome. Not during shutdown, when pending asks
/// are meant to survive.
#[derive(Debug)]
struct CancelOnDrop {
    armed: bool,
    bridge: Bridge,
    id: String,
    shutdown: super::ShutdownSignal,
}

impl CancelOnDrop {
    fn disarm(mut self) {
        self.armed = false;
    }
}

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        if !self.armed || self.shutdown.is_triggered() {
            return;
        }
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let bridge = self.bridge.clone();
        let id = std::mem::take(&mut self.id);
        runtime.spawn(async move {
            match bridge.cancel(&id).await {
                Ok(view) => tracing::info!(
                    ask_id = %id,
                    state = view.state.as_str(),
                    "the waiting agent disconnected; ask cancelled"
                ),
                Err(error) => {
                    tracing::warn!(ask_id = %id, %error, "could not cancel after disconnect")
                }
            }
        });
    }
}

fn now_millis() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

/// The `Idempotency-Key` header in the OpenAPI document, as
/// [`idempotency_key`] reads it.
#[derive(Debug)]
pub struct IdempotencyKey;

impl IntoParams for IdempotencyKey {
    fn into_params(_: impl Fn() -> Option<ParameterIn>) -> Vec<Parameter> {
        vec![parameter(
            "Idempotency-Key",
            ParameterIn::Header,
            "A retry with the same key and the same ask returns the ask created the \
             first time (`200`) instead of asking again; the same key with a \
             different ask is `409 idempotency_conflict`. Visible ASCII.",
            ObjectBuilder::new()
                .schema_type(Type::String)
                .min_length(Some(1))
                .max_length(Some(MAX_IDEMPOTENCY_KEY)),
        )]
    }
}

/// The `Askbridge-Host-Key` header in the OpenAPI document, as [`reply`]
/// reads it.
#[derive(Debug)]
pub struct HostKey;

impl IntoParams for HostKey {
    fn into_params(_: impl Fn() -> Option<ParameterIn>) -> Vec<Parameter> {
        vec![parameter(
            "Askbridge-Host-Key",
            ParameterIn::Header,
            "The `hostKey` the ask's creation returned: the reply is the agent \
             host's own (`via: host`), which may answer any ask. A wrong key is \
             `403 not_host`.",
            ObjectBuilder::new().schema_type(Type::String),
        )]
    }
}

/// The query parameter of `DELETE /v1/asks/{id}` in the OpenAPI
/// document, as [`cancel`] reads it.
#[derive(Debug)]
pub struct CancelParams;

impl IntoParams for CancelParams {
    fn into_params(_: impl Fn() -> Option<ParameterIn>) -> Vec<Parameter> {
        vec![parameter(
            "because",
            ParameterIn::Query,
            "`agent` (the default): the agent gave up; `answered_in_host`: the person \
             answered in the agent host's own prompt instead (a coding agent's hook saw it), \
             and the chat message closes saying it was answered in the terminal; an ask \
             already answered in the chat becomes cancelled, its answer too late.",
            ObjectBuilder::new()
                .schema_type(Type::String)
                .enum_values(Some(["agent", "answered_in_host"]))
                .default(Some("agent".into())),
        )]
    }
}

/// The query parameters of `GET /v1/asks` in the OpenAPI document, as
/// [`list`] reads them.
#[derive(Debug)]
pub struct ListParams;

impl IntoParams for ListParams {
    fn into_params(_: impl Fn() -> Option<ParameterIn>) -> Vec<Parameter> {
        vec![
            parameter(
                "status",
                ParameterIn::Query,
                "`pending`: only asks still pending; `all` (the default): every ask.",
                ObjectBuilder::new()
                    .schema_type(Type::String)
                    .enum_values(Some(["pending", "all"]))
                    .default(Some("all".into())),
            ),
            parameter(
                "channel",
                ParameterIn::Query,
                "Only asks posted to this channel; every channel when absent.",
                Channel::schema(),
            ),
            parameter(
                "limit",
                ParameterIn::Query,
                format!("At most this many asks; larger values are cut to {MAX_LIST_LIMIT}."),
                ObjectBuilder::new()
                    .schema_type(Type::Integer)
                    .minimum(Some(1))
                    .default(Some(DEFAULT_LIST_LIMIT.into())),
            ),
        ]
    }
}

/// The `Idempotency-Key` header: visible ASCII, 1–255 bytes.
pub(super) fn idempotency_key(headers: &HeaderMap) -> Result<Option<String>, ApiError> {
    let Some(value) = headers.get("idempotency-key") else {
        return Ok(None);
    };
    let key = value
        .to_str()
        .ok()
        .map(str::trim)
        .filter(|key| !key.is_empty() && key.len() <= MAX_IDEMPOTENCY_KEY)
        .ok_or_else(|| {
            ApiError::new(
                StatusCode::BAD_REQUEST,
                "invalid_header",
                format!("Idempotency-Key must be 1–{MAX_IDEMPOTENCY_KEY} visible ASCII characters"),
            )
            .at("Idempotency-Key")
        })?;
    Ok(Some(key.to_owned()))
}

/// Keys that make an object an ask in its own right (not the wrapper).
const ASK_BODY_KEYS: &[&str] = &["questions", "fields", "question"];

/// Reads the body of `POST /v1/asks`: any dialect the normaliser reads, or
/// the wrapper `{"ask": <dialect or assistant text>, "to": <target>}`
/// whose `to` overrides the ask's own. Paths in problems are paths in the
/// body (`ask.questions[0]` inside the wrapper).
fn read_ask(body: &Value) -> Result<Normalized, ApiError> {
    let wrapper = match body {
        Value::Object(map)
            if map.contains_key("ask") && !ASK_BODY_KEYS.iter().any(|k| map.contains_key(*k)) =>
        {
            map
        }
        _ => return normalize_json(body).map_err(|problems| ApiError::invalid_ask(&problems)),
    };
    let mut warnings: Vec<Problem> = wrapper
        .keys()
        .filter(|key| *key != "ask" && *key != "to")
        .map(|key| Problem::new(key.clone(), "unknown field ignored"))
        .collect();
    let inner = match &wrapper["ask"] {
        Value::String(text) => normalize_input(text),
        other => normalize_json(other),
    };
    let mut normalized = inner.map_err(|problems| {
        let problems: Vec<Problem> = problems.iter().map(under_ask).collect();
        ApiError::invalid_ask(&problems)
    })?;
    if let Some(places) = read_places(wrapper, &mut warnings)? {
        let mut places = places.into_iter();
        normalized.ask.target = places.next();
        normalized.ask.also = places.collect();
    }
    warnings.extend(normalized.warnings.iter().map(under_ask));
    normalized.warnings = warnings;
    Ok(normalized)
}

/// A problem of the wrapped ask, its path moved under `ask`.
fn under_ask(problem: &Problem) -> Problem {
    let path = match problem.path.as_str() {
        "$" | "text" | "" => "ask".to_owned(),
        path if path.starts_with('[') => format!("ask{path}"),
        path => format!("ask.{path}"),
    };
    Problem::new(path, problem.message.clone())
}

/// The wrapper's `to`, read by the core's own rules for an ask's `to` (a
/// target string or `{channel, chat, thread, user}` object, or a list of
/// them); `None` when it names no place.
fn read_places(
    wrapper: &Map<String, Value>,
    warnings: &mut Vec<Problem>,
) -> Result<Option<Vec<Target>>, ApiError> {
    let Some(to) = wrapper.get("to") else {
        return Ok(None);
    };
    let (places, fixes) =
        normalize_places(to).map_err(|problems| ApiError::invalid_ask(&problems))?;
    warnings.extend(fixes);
    Ok((!places.is_empty()).then_some(places))
}

fn channel_kind(name: &str) -> Option<ChannelKind> {
    ChannelKind::ALL
        .into_iter()
        .find(|kind| kind.as_str().eq_ignore_ascii_case(name.trim()))
}

/// The refusal of a reply that claims the host without its key.
fn not_host(message: &str) -> ApiError {
    ApiError::new(StatusCode::FORBIDDEN, "not_host", message)
}

/// Reads a reply body into a core [`Input`]: from the web page's
/// responder, or — when `host`, the request carried the ask's host key —
/// from the agent host's dialog (what `askbridge mcp --server` sends for an
/// elicitation's answer). `"via": "host"` without the key is refused: the
/// body alone never makes the host.
fn read_reply(body: &Value, host: bool) -> Result<Input, ApiError> {
    let Value::Object(map) = body else {
        return Err(ApiError::invalid_request(
            "$",
            "expected an object: {\"text\": \"…\"} or {\"answers\": {\"question_id\": [\"…\"]}}",
        ));
    };
    if let Some(key) = map
        .keys()
        .find(|key| !["text", "answers", "skip", "user", "via"].contains(&key.as_str()))
    {
        return Err(ApiError::invalid_request(
            key.clone(),
            "unknown field; expected text, answers, skip, user or via",
        ));
    }
    let via = match (read_via(map.get("via"))?, host) {
        (_, true) => Via::Host,
        (Via::Host, false) => {
            return Err(not_host(
                "\"via\": \"host\" needs the Askbridge-Host-Key header with the hostKey \
                 the ask's creation returned",
            ));
        }
        (via, false) => via,
    };
    let mut from = read_user(map.get("user"))?;
    if via == Via::Host {
        from.channel = ChannelKind::Host;
    }
    let admitted = true;
    match map.get("skip") {
        None | Some(Value::Bool(false)) => {}
        Some(Value::Bool(true)) if map.get("text").is_none() && map.get("answers").is_none() => {
            return Ok(Input::Skip { from, admitted });
        }
        Some(Value::Bool(true)) => {
            return Err(ApiError::invalid_request(
                "skip",
                "skip the whole ask, or give text or answers, not both",
            ));
        }
        Some(other) => {
            return Err(ApiError::invalid_request(
                "skip",
                format!("expected true, got {}", kind_of(other)),
            ));
        }
    }
    match (map.get("text"), map.get("answers")) {
        (Some(_), Some(_)) => Err(ApiError::invalid_request(
            "$",
            "give either text or answers, not both",
        )),
        (None, None) => Err(ApiError::invalid_request(
            "$",
            "expected text, answers or skip",
        )),
        (Some(Value::String(text)), None) if !text.trim().is_empty() => Ok(Input::Reply {
            from,
            admitted,
            text: text.clone(),
            unknown_items: UnknownItems::OwnWords,
        }),
        (Some(Value::String(_)), None) => {
            Err(ApiError::invalid_request("text", "the reply is empty"))
        }
        (Some(other), None) => Err(ApiError::invalid_request(
            "text",
            format!("expected a string, got {}", kind_of(other)),
        )),
        (None, Some(Value::Object(answers))) => {
            let mut list = Vec::with_capacity(answers.len());
            for (id, value) in answers {
                list.push((id.clone(), answer_strings(id, value)?));
            }
            Ok(Input::Answers {
                from,
                admitted,
                answers: list,
                via,
            })
        }
        (None, Some(other)) => Err(ApiError::invalid_request(
            "answers",
            format!(
                "expected an object of question id → list of strings, got {}",
                kind_of(other)
            ),
        )),
    }
}

/// `via`: `web` (the default: the page, a script) or `host` (the agent
/// host's own dialog).
fn read_via(via: Option<&Value>) -> Result<Via, ApiError> {
    match via {
        None | Some(Value::Null) => Ok(Via::Web),
        Some(Value::String(name)) if name == "web" => Ok(Via::Web),
        Some(Value::String(name)) if name == "host" => Ok(Via::Host),
        Some(other) => Err(ApiError::invalid_request(
            "via",
            format!("expected \"web\" or \"host\", got {other}"),
        )),
    }
}

/// One question's answer: a list of strings; a single string, a boolean
/// (confirm: yes / no) or null (skip) are read as the list they mean.
fn answer_strings(id: &str, value: &Value) -> Result<Vec<String>, ApiError> {
    let one = |value: &Value, path: String| match value {
        Value::String(text) => Ok(text.clone()),
        Value::Bool(true) => Ok("yes".to_owned()),
        Value::Bool(false) => Ok("no".to_owned()),
        other => Err(ApiError::invalid_request(
            path,
            format!("expected a string, got {}", kind_of(other)),
        )),
    };
    match value {
        Value::Null => Ok(Vec::new()),
        Value::Array(items) => items
            .iter()
            .enumerate()
            .map(|(index, item)| one(item, format!("answers.{id}[{index}]")))
            .collect(),
        other => one(other, format!("answers.{id}")).map(|text| vec![text]),
    }
}

/// `user: {"id", "name"}`, default the web page's user `web`. Replies over
/// HTTP always come through the `web` channel.
fn read_user(user: Option<&Value>) -> Result<Responder, ApiError> {
    let responder = |user_id: String, name: Option<String>| Responder {
        channel: ChannelKind::Web,
        user_id,
        name,
        place: None,
    };
    let map = match user {
        None | Some(Value::Null) => return Ok(responder(PAGE_USER.to_owned(), None)),
        Some(Value::Object(map)) => map,
        Some(other) => {
            return Err(ApiError::invalid_request(
                "user",
                format!(
                    "expected an object {{\"id\", \"name\"}}, got {}",
                    kind_of(other)
                ),
            ));
        }
    };
    if let Some(key) = map
        .keys()
        .find(|key| !["id", "name"].contains(&key.as_str()))
    {
        return Err(ApiError::invalid_request(
            format!("user.{key}"),
            "unknown field; expected id or name",
        ));
    }
    let id = match map.get("id") {
        Some(Value::String(id)) if !id.trim().is_empty() => id.trim().to_owned(),
        Some(Value::Number(number)) => number.to_string(),
        None | Some(Value::Null) => PAGE_USER.to_owned(),
        Some(Value::String(_)) => {
            return Err(ApiError::invalid_request("user.id", "must not be empty"));
        }
        Some(other) => {
            return Err(ApiError::invalid_request(
                "user.id",
                format!("expected a string, got {}", kind_of(other)),
            ));
        }
    };
    let name = match map.get("name") {
        None | Some(Value::Null) => None,
        Some(Value::String(name)) => Some(name.trim().to_owned()).filter(|n| !n.is_empty()),
        Some(other) => {
            return Err(ApiError::invalid_request(
                "user.name",
                format!("expected a string, got {}", kind_of(other)),
            ));
        }
    };
    Ok(responder(id, name))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::wire::fits_schema;

    /// Reads a body that must be accepted with `read`, and checks that the
    /// OpenAPI document's request schema `T` takes it too.
    #[track_caller]
    fn accepted<T: utoipa::ToSchema, R>(
        body: &Value,
        read: fn(&Value) -> Result<R, ApiError>,
    ) -> R {
        if let Err(error) = fits_schema::<T>(body) {
            panic!("{error}");
        }
        read(body).unwrap_or_else(|error| panic!("{body}: {error:?}"))
    }

    #[track_caller]
    fn accepted_ask(body: &Value) -> Normalized {
        accepted::<AskRequest, _>(body, read_ask)
    }

    #[test]
    fn asks_canonical_examples_fit_the_documented_body() {
        for name in ["release.json", "claude-code.json"] {
            let path = format!("{}/../../examples/{name}", env!("CARGO_MANIFEST_DIR"));
            let text = std::fs::read_to_string(&path).expect("example");
            let body: Value = serde_json::from_str(&text).expect("json");
            accepted_ask(&body);
            accepted_ask(&json!({"ask": body, "to": "web:s1"}));
        }
    }

    #[track_caller]
    fn check_ask_error(body: Value, path: &str, message_part: &str) {
        match read_ask(&body) {
            Ok(normalized) => panic!("{body} was accepted: {normalized:?}"),
            Err(error) => {
                assert_eq!(error.code, "invalid_ask", "{body}");
                assert_eq!(error.path.as_deref(), Some(path), "{body}: {error:?}");
                assert!(error.message.contains(message_part), "{body}: {error:?}");
            }
        }
    }

    #[test]
    fn asks_wrapper_overrides_the_target() {
        let body = json!({"ask": {"to": "web", "questions": [{"id": "a", "question": "A?", "options": ["X", "Y"]}]},
                          "to": {"channel": "telegram", "chat": -100, "user": 42}});
        let normalized = accepted_ask(&body);
        let target = normalized.ask.target.expect("target");
        assert_eq!(target.to_string(), "telegram:-100@42");
    }

    #[test]
    fn asks_wrapper_takes_assistant_text() {
        let body = json!({"ask": "Which one?\nA. Left\nB. Right", "to": "web:s1"});
        let normalized = accepted_ask(&body);
        assert_eq!(normalized.ask.questions.len(), 1);
        assert_eq!(
            normalized.ask.target.map(|t| t.to_string()).as_deref(),
            Some("web:s1")
        );
    }

    #[test]
    fn asks_errors_name_body_paths() {
        check_ask_error(
            json!({"ask": {"questions": [{"id": "a", "question": "A?", "options": ["Only"]}]}}),
            "ask.questions[0].options",
            "at least 2 options",
        );
        check_ask_error(
            json!({"questions": [{"id": "a", "question": "A?", "options": ["Only"]}]}),
            "questions[0].options",
            "at least 2 options",
        );
        check_ask_error(
            json!({"ask": {"questions": [{"id": "a", "question": "A?"}]}, "to": "irc:1"}),
            "to",
            "unknown channel",
        );
        check_ask_error(
            json!({"ask": {"questions": [{"id": "a", "question": "A?"}]}, "to": 5}),
            "to",
            "expected a target",
        );
        check_ask_error(json!(5), "$", "got a number");
    }

    #[test]
    fn asks_wrapper_warnings() {
        let body =
            json!({"ask": {"questions": [{"id": "a", "question": "A?"}], "extra": 1}, "wait": 5});
        let normalized = accepted_ask(&body);
        let paths: Vec<&str> = normalized
            .warnings
            .iter()
            .map(|w| w.path.as_str())
            .collect();
        assert!(paths.contains(&"wait"), "{paths:?}");
        assert!(paths.contains(&"ask.extra"), "{paths:?}");
    }

    #[track_caller]
    fn accepted_reply(body: &Value) -> Input {
        accepted::<ReplyRequest, _>(body, |body| read_reply(body, false))
    }

    /// Checks that a reply body is refused, at `path`, and that the
    /// OpenAPI document's request schema refuses it too.
    #[track_caller]
    fn check_reply_error(body: Value, path: &str) {
        assert!(fits_schema::<ReplyRequest>(&body).is_err(), "{body} fits");
        match read_reply(&body, false) {
            Ok(input) => panic!("{body} was accepted: {input:?}"),
            Err(error) => {
                assert_eq!(error.status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
                assert_eq!(error.path.as_deref(), Some(path), "{body}: {error:?}");
            }
        }
    }

    #[test]
    fn asks_reply_bodies() {
        match accepted_reply(&json!({"text": "Q1: 2", "user": {"id": "alice", "name": "Alice"}})) {
            Input::Reply {
                from,
                admitted,
                text,
                unknown_items,
            } => {
                assert_eq!(unknown_items, UnknownItems::OwnWords);
                assert_eq!(from.user_id, "alice");
                assert_eq!(from.name.as_deref(), Some("Alice"));
                assert_eq!(from.channel, ChannelKind::Web);
                assert!(admitted);
                assert_eq!(text, "Q1: 2");
            }
            other => panic!("{other:?}"),
        }
        match accepted_reply(
            &json!({"answers": {"a": ["X", "own words"], "b": "one", "c": true, "d": null}}),
        ) {
            Input::Answers { from, answers, .. } => {
                assert_eq!(from.user_id, "web");
                assert_eq!(
                    answers,
                    vec![
                        ("a".to_owned(), vec!["X".to_owned(), "own words".to_owned()]),
                        ("b".to_owned(), vec!["one".to_owned()]),
                        ("c".to_owned(), vec!["yes".to_owned()]),
                        ("d".to_owned(), vec![]),
                    ]
                );
            }
            other => panic!("{other:?}"),
        }
        check_reply_error(json!([]), "$");
        check_reply_error(json!({}), "$");
        check_reply_error(json!({"text": "a", "answers": {}}), "$");
        check_reply_error(json!({"text": 5}), "text");
        check_reply_error(json!({"text": "  "}), "text");
        check_reply_error(json!({"answers": []}), "answers");
        check_reply_error(json!({"answers": {"a": [1]}}), "answers.a[0]");
        check_reply_error(json!({"answers": {"a": 1}}), "answers.a");
        check_reply_error(
            json!({"text": "x", "user": {"id": 5.5, "role": "x"}}),
            "user.role",
        );
        check_reply_error(json!({"text": "x", "user": {"id": []}}), "user.id");
        check_reply_error(json!({"txt": "x"}), "txt");
        check_reply_error(json!({"skip": "yes"}), "skip");
        check_reply_error(json!({"skip": true, "text": "x"}), "skip");
        check_reply_error(json!({"text": "x", "via": "button"}), "via");
    }

    #[test]
    fn asks_reply_bodies_from_the_host_and_skips() {
        match read_reply(
            &json!({"answers": {"a": "X"}, "via": "host",
                    "user": {"id": "host", "name": "Claude Code"}}),
            true,
        ) {
            Ok(Input::Answers { from, via, .. }) => {
                assert_eq!(via, Via::Host);
                assert_eq!(from.channel, ChannelKind::Host);
                assert_eq!(from.name.as_deref(), Some("Claude Code"));
            }
            other => panic!("{other:?}"),
        }
        match read_reply(&json!({"skip": true}), true) {
            Ok(Input::Skip { from, admitted }) => {
                assert_eq!(from.channel, ChannelKind::Host);
                assert!(admitted);
            }
            other => panic!("{other:?}"),
        }
        match read_reply(&json!({"answers": {"a": "X"}}), false) {
            Ok(Input::Answers { from, via, .. }) => {
                assert_eq!((from.channel, via), (ChannelKind::Web, Via::Web));
            }
            other => panic!("{other:?}"),
        }
        // The body alone never makes the host.
        for body in [
            json!({"answers": {"a": "X"}, "via": "host"}),
            json!({"skip": true, "via": "host"}),
        ] {
            match read_reply(&body, false) {
                Err(error) => {
                    assert_eq!(error.status, StatusCode::FORBIDDEN, "{body}");
                    assert_eq!(error.code, "not_host", "{body}");
                }
                Ok(input) => panic!("{body} was taken: {input:?}"),
            }
        }
    }
}

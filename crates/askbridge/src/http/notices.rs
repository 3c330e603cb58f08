//! `POST /v1/notices`: a message for the person that asks nothing ("Claude
//! Code finished in api-server"), posted now in a chat, in its thread
//! where it has one.

use askbridge_core::failure::PlatformFailure;
use askbridge_core::normalize::normalize_notice;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use utoipa::IntoParams;
use utoipa::openapi::path::{Parameter, ParameterIn};
use utoipa::openapi::schema::{ObjectBuilder, Type};

use super::AppState;
use super::asks::{MAX_IDEMPOTENCY_KEY, idempotency_key};
use super::error::{ApiError, json_response};
use super::extract::JsonBody;
use super::openapi::parameter;
use crate::bridge::NoticeError;
use crate::wire::api::{ErrorResponse, NoticeResponse, ProblemJson};
use crate::wire::request::NoticeRequest;

/// Post a notice: a message that asks nothing.
///
/// Posted at once where it says (one place; else the default target), in
/// its thread where the chat has threads: its text, then its `context` as
/// the chat's code block. It is not stored and never answered. With an
/// `Idempotency-Key`, the chats that take one (Matrix, Feishu) post a
/// notice sent again as the one already posted.
#[utoipa::path(
    post,
    path = "/v1/notices",
    operation_id = "postNotice",
    params(NoticeKey),
    request_body = NoticeRequest,
    responses(
        (status = CREATED, body = NoticeResponse, description = "Posted."),
        (status = BAD_REQUEST, body = ErrorResponse,
         description = "`malformed_json`, `unreadable_body` or `invalid_header`."),
        (status = PAYLOAD_TOO_LARGE, body = ErrorResponse, description = "`body_too_large`."),
        (status = UNSUPPORTED_MEDIA_TYPE, body = ErrorResponse,
         description = "`unsupported_media_type`: no JSON `Content-Type`."),
        (status = UNPROCESSABLE_ENTITY, body = ErrorResponse,
         description = "`invalid_notice`: `path` and `message` name the first problem, `errors` \
                        lists every one; `notice_refused`: the place cannot show it (the web \
                        page, a channel not configured) or its platform refused it."),
        (status = BAD_GATEWAY, body = ErrorResponse,
         description = "`platform_unavailable`: the chat could not be reached or is rate \
                        limiting; try again."),
    )
)]
pub async fn create(
    State(state): State<AppState>,
    headers: HeaderMap,
    JsonBody(body): JsonBody,
) -> Result<Response, ApiError> {
    let key = idempotency_key(&headers)?;
    let (notice, warnings) = normalize_notice(&body).map_err(|problems| {
        let mut error = ApiError::invalid_ask(&problems);
        error.code = "invalid_notice";
        error
    })?;
    let once = match key {
        Some(key) => format!("notice-{}", crate::hashed(&key)),
        None => format!("notice-{}", uuid::Uuid::new_v4().simple()),
    };
    let (target, messages) = state.bridge.notify(&notice, &once).await.map_err(refused)?;
    let response = NoticeResponse {
        to: target.to_string(),
        messages,
        warnings: warnings.iter().map(ProblemJson::from).collect(),
    };
    Ok(json_response(StatusCode::CREATED, &response))
}

/// The `Idempotency-Key` header of a notice in the OpenAPI document.
#[derive(Debug)]
pub struct NoticeKey;

impl IntoParams for NoticeKey {
    fn into_params(_: impl Fn() -> Option<ParameterIn>) -> Vec<Parameter> {
        vec![parameter(
            "Idempotency-Key",
            ParameterIn::Header,
            "Names the notice: the chats that take an idempotency key (Matrix, \
             Feishu) post a notice sent again with the same key once. Visible ASCII.",
            ObjectBuilder::new()
                .schema_type(Type::String)
                .min_length(Some(1))
                .max_length(Some(MAX_IDEMPOTENCY_KEY)),
        )]
    }
}

/// The API's error for a notice not posted.
fn refused(error: NoticeError) -> ApiError {
    match error {
        NoticeError::NoChannel(_) | NoticeError::Platform(PlatformFailure::Permanent(_)) => {
            ApiError::new(
                StatusCode::UNPROCESSABLE_ENTITY,
                "notice_refused",
                format!("the notice was not posted: {error}"),
            )
            .at("to")
        }
        NoticeError::Platform(failure) => ApiError::new(
            StatusCode::BAD_GATEWAY,
            "platform_unavailable",
            format!("the notice was not posted: {failure}; try again"),
        ),
    }
}

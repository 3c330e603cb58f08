//! `GET /v1/hooks`: the `[hooks]` settings, read by `askbridge hook` (the
//! coding agents' hooks run as clients of the daemon, wherever its config
//! file is).

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::Response;

use super::AppState;
use super::error::{ApiError, json_response};
use super::extract::QueryParams;
use crate::wire::api::{ErrorResponse, HookSettings};

/// How coding agents' hooks ask.
///
/// Where a hook that names no target asks, how long each host's calls
/// wait for the person, and which tools are never asked about in a chat.
/// A hook's own flags (`--to`, `--hold`) come first.
#[utoipa::path(
    get,
    path = "/v1/hooks",
    operation_id = "getHookSettings",
    responses(
        (status = OK, body = HookSettings, description = "The `[hooks]` settings."),
        (status = BAD_REQUEST, body = ErrorResponse, description = "`invalid_query`."),
    )
)]
pub async fn settings(
    State(state): State<AppState>,
    query: QueryParams,
) -> Result<Response, ApiError> {
    query.finish(&[])?;
    Ok(json_response(StatusCode::OK, &*state.hooks))
}

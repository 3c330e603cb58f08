//! Extractors whose rejections are [`ApiError`]s, so that even axum's own
//! refusals (wrong content type, unreadable body, bad path or query) come
//! back in the API's JSON error shape.

use std::time::Duration;

use axum::body::Bytes;
use axum::extract::{FromRequest, FromRequestParts, Path, Query, Request};
use axum::http::{StatusCode, header, request::Parts};
use serde_json::Value;
use utoipa::IntoParams;
use utoipa::openapi::path::{Parameter, ParameterIn};
use utoipa::openapi::schema::{ObjectBuilder, Type};

use super::AppState;
use super::error::ApiError;
use super::openapi::parameter;

/// The longest `?wait=` honoured, in seconds; longer waits are clamped.
pub const MAX_WAIT_SECONDS: u64 = 3_600;

/// A JSON request body, parsed into a [`Value`] (the handlers read it
/// by hand to name the path of each mistake).
///
/// Refuses a missing or non-JSON `Content-Type` (415), a body over the
/// configured limit (413) and malformed JSON (400, with line and column).
#[derive(Debug)]
pub struct JsonBody(pub Value);

impl FromRequest<AppState> for JsonBody {
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &AppState) -> Result<JsonBody, ApiError> {
        let content_type = req
            .headers()
            .get(header::CONTENT_TYPE)
            .map(|v| v.to_str().unwrap_or("(not text)").to_owned());
        if !content_type.as_deref().is_some_and(is_json) {
            return Err(ApiError::unsupported_media_type(content_type.as_deref()));
        }
        let bytes = Bytes::from_request(req, state).await.map_err(|rejection| {
            if rejection.status() == StatusCode::PAYLOAD_TOO_LARGE {
                ApiError::body_too_large(state.max_body_bytes)
            } else {
                ApiError::new(
                    StatusCode::BAD_REQUEST,
                    "unreadable_body",
                    format!(
                        "the request body could not be read: {}",
                        rejection.body_text()
                    ),
                )
            }
        })?;
        serde_json::from_slice(&bytes)
            .map(JsonBody)
            .map_err(|error| ApiError::malformed_json(&error))
    }
}

/// `application/json`, with parameters, or any `…+json` type.
fn is_json(content_type: &str) -> bool {
    let essence = content_type
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase();
    essence == "application/json"
        || essence
            .strip_prefix("application/")
            .is_some_and(|sub| sub.ends_with("+json"))
}

/// The query string as name–value pairs; each handler takes the ones it
/// knows and [`QueryParams::finish`] refuses the rest, so a typo such as
/// `?wiat=10` is a 400 rather than silently ignored.
#[derive(Debug, Default)]
pub struct QueryParams(Vec<(String, String)>);

impl<S: Send + Sync> FromRequestParts<S> for QueryParams {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<QueryParams, ApiError> {
        let Query(pairs) = Query::<Vec<(String, String)>>::from_request_parts(parts, state)
            .await
            .map_err(|rejection| {
                ApiError::new(
                    StatusCode::BAD_REQUEST,
                    "invalid_query",
                    format!(
                        "the query string could not be read: {}",
                        rejection.body_text()
                    ),
                )
            })?;
        Ok(QueryParams(pairs))
    }
}

impl QueryParams {
    /// Takes a parameter's value (the last one when repeated).
    pub fn take(&mut self, name: &str) -> Option<String> {
        let mut found = None;
        self.0.retain(|(key, value)| {
            if key == name {
                found = Some(value.clone());
                false
            } else {
                true
            }
        });
        found
    }

    /// Refuses any parameter not taken.
    pub fn finish(self, known: &[&str]) -> Result<(), ApiError> {
        match self.0.first() {
            None => Ok(()),
            Some((name, _)) => Err(ApiError::invalid_query(
                name,
                format!(
                    "unknown query parameter {name:?}; expected {}",
                    if known.is_empty() {
                        "none".to_owned()
                    } else {
                        known.join(", ")
                    }
                ),
            )),
        }
    }

    /// Takes `wait`: seconds from 0 to [`MAX_WAIT_SECONDS`] (longer waits
    /// are clamped; fractions allowed). `None` when absent.
    pub fn take_wait(&mut self) -> Result<Option<Duration>, ApiError> {
        let Some(text) = self.take("wait") else {
            return Ok(None);
        };
        parse_wait(&text).map(Some)
    }
}

impl QueryParams {
    /// Takes `hold`: `true` or `false` (absent: `false`).
    pub fn take_hold(&mut self) -> Result<bool, ApiError> {
        match self.take("hold").as_deref() {
            None | Some("false") => Ok(false),
            Some("true") => Ok(true),
            Some(other) => Err(ApiError::invalid_query(
                "hold",
                format!("expected true or false, got {other:?}"),
            )),
        }
    }
}

/// The `hold` query parameter of `GET /v1/asks/{id}` in the OpenAPI
/// document, as [`QueryParams::take_hold`] reads it.
#[derive(Debug)]
pub struct Hold;

impl IntoParams for Hold {
    fn into_params(_: impl Fn() -> Option<ParameterIn>) -> Vec<Parameter> {
        vec![parameter(
            "hold",
            ParameterIn::Query,
            "With `wait`: this request holds the ask — when it is closed before \
             the ask ends, the ask is cancelled (with `cancel_on_disconnect`, the \
             default), as a waiting creation's is. What a coding agent's hook uses: \
             a hook killed outright closes its chat message at once.",
            ObjectBuilder::new().schema_type(Type::Boolean),
        )]
    }
}

/// The `wait` query parameter in the OpenAPI document, as
/// [`QueryParams::take_wait`] reads it.
#[derive(Debug)]
pub struct Wait;

impl IntoParams for Wait {
    fn into_params(_: impl Fn() -> Option<ParameterIn>) -> Vec<Parameter> {
        vec![parameter(
            "wait",
            ParameterIn::Query,
            format!(
                "Seconds to wait for the ask to end: 0–{MAX_WAIT_SECONDS}, fractions \
                 allowed; longer waits are cut to {MAX_WAIT_SECONDS}."
            ),
            ObjectBuilder::new()
                .schema_type(Type::Number)
                .minimum(Some(0)),
        )]
    }
}

/// Parses a `wait` value.
pub fn parse_wait(text: &str) -> Result<Duration, ApiError> {
    let seconds = text
        .trim()
        .parse::<f64>()
        .ok()
        .filter(|s| s.is_finite() && *s >= 0.0)
        .ok_or_else(|| {
            ApiError::invalid_query(
                "wait",
                format!("expected a number of seconds from 0 to {MAX_WAIT_SECONDS}, got {text:?}"),
            )
        })?;
    Ok(Duration::from_secs_f64(
        seconds.min(MAX_WAIT_SECONDS as f64),
    ))
}

/// The `{id}` of `/v1/asks/{id}`.
#[derive(Debug)]
pub struct AskId(pub String);

impl<S: Send + Sync> FromRequestParts<S> for AskId {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<AskId, ApiError> {
        let Path(id) = Path::<String>::from_request_parts(parts, state)
            .await
            .map_err(|rejection| {
                ApiError::new(
                    StatusCode::BAD_REQUEST,
                    "invalid_path",
                    rejection.body_text(),
                )
                .at("id")
            })?;
        Ok(AskId(id))
    }
}

impl IntoParams for AskId {
    fn into_params(_: impl Fn() -> Option<ParameterIn>) -> Vec<Parameter> {
        vec![parameter(
            "id",
            ParameterIn::Path,
            "The ask id (`ask_…`).",
            ObjectBuilder::new().schema_type(Type::String),
        )]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn extract_json_content_types() {
        for ok in [
            "application/json",
            "application/json; charset=utf-8",
            "Application/JSON",
            "application/vnd.askbridge+json",
        ] {
            assert!(is_json(ok), "{ok}");
        }
        for bad in [
            "text/plain",
            "application/x-www-form-urlencoded",
            "",
            "json",
        ] {
            assert!(!is_json(bad), "{bad}");
        }
    }

    #[test]
    fn extract_wait_values() {
        let secs = |text: &str| {
            parse_wait(text)
                .map(|d| d.as_secs_f64())
                .map_err(|e| e.code)
        };
        assert_eq!(secs("0"), Ok(0.0));
        assert_eq!(secs("2.5"), Ok(2.5));
        assert_eq!(secs("99999"), Ok(3600.0));
        for bad in ["", "abc", "-1", "NaN", "inf"] {
            assert_eq!(secs(bad), Err("invalid_query"), "{bad}");
        }
    }
}

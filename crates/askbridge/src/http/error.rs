//! API errors: every one is JSON `{"error": {"code", "message", "path"}}`.
//!
//! The caller's mistakes are 4xx with a code that names the mistake; only a
//! failing store is `500 internal`, and its cause is kept in a response
//! extension for the `guard` middleware in `http`, which logs it — never
//! in the body, and never logged here.

use std::sync::Arc;

use askbridge_core::lifecycle::{Invalid, Rejection};
use askbridge_core::model::Ask;
use askbridge_core::normalize::Problem;
use askbridge_core::render::{self, Locale};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};

use crate::bridge::BridgeError;
use crate::wire::api::{ErrorBody, ErrorResponse, ProblemJson};

/// An error response of the API.
#[derive(Debug, Clone)]
pub struct ApiError {
    /// The HTTP status.
    pub status: StatusCode,
    /// The stable code (`invalid_ask`).
    pub code: &'static str,
    /// The sentence for people.
    pub message: String,
    /// Where in the request, if anywhere.
    pub path: Option<String>,
    /// Every problem, for `invalid_ask`.
    pub errors: Vec<ProblemJson>,
    /// The cause of a 500, for the log only.
    pub cause: Option<String>,
}

/// What the logging middleware learns about an error response.
#[derive(Debug, Clone)]
pub struct ErrorInfo {
    /// The error code.
    pub code: &'static str,
    /// The cause of a server error (a storage failure), for the log.
    pub cause: Option<Arc<str>>,
}

impl ApiError {
    /// An error with a status, a code and a message.
    pub fn new(status: StatusCode, code: &'static str, message: impl Into<String>) -> ApiError {
        ApiError {
            status,
            code,
            message: message.into(),
            path: None,
            errors: Vec::new(),
            cause: None,
        }
    }

    /// The same error, about this path of the request.
    pub fn at(mut self, path: impl Into<String>) -> ApiError {
        self.path = Some(path.into());
        self
    }

    /// `400 malformed_json`, with serde's line and column.
    pub fn malformed_json(error: &serde_json::Error) -> ApiError {
        ApiError::new(
            StatusCode::BAD_REQUEST,
            "malformed_json",
            format!("the request body is not valid JSON: {error}"),
        )
    }

    /// `400 invalid_query` about one query parameter.
    pub fn invalid_query(parameter: &str, message: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::BAD_REQUEST, "invalid_query", message).at(parameter)
    }

    /// `413 body_too_large`.
    pub fn body_too_large(limit: usize) -> ApiError {
        ApiError::new(
            StatusCode::PAYLOAD_TOO_LARGE,
            "body_too_large",
            format!("the request body is larger than the limit of {limit} bytes"),
        )
    }

    /// `415 unsupported_media_type`.
    pub fn unsupported_media_type(given: Option<&str>) -> ApiError {
        let given = given.map_or_else(|| "none".to_owned(), |g| format!("{g:?}"));
        ApiError::new(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "unsupported_media_type",
            format!("expected Content-Type: application/json, got {given}"),
        )
    }

    /// `404 not_found` for an ask id.
    pub fn unknown_ask(id: &str) -> ApiError {
        ApiError::new(
            StatusCode::NOT_FOUND,
            "not_found",
            format!("no ask with id {id:?}"),
        )
        .at("id")
    }

    /// `422 invalid_ask` from the normaliser's problems: the first one
    /// in `message` and `path`, all of them in `errors`.
    pub fn invalid_ask(problems: &[Problem]) -> ApiError {
        let (path, message) = problems.first().map_or_else(
            || ("$".to_owned(), "the ask is not valid".to_owned()),
            |p| (p.path.clone(), p.message.clone()),
        );
        let mut error =
            ApiError::new(StatusCode::UNPROCESSABLE_ENTITY, "invalid_ask", message).at(path);
        error.errors = problems.iter().map(ProblemJson::from).collect();
        error
    }

    /// `422 invalid_request`: a request body of the wrong shape.
    pub fn invalid_request(path: impl Into<String>, message: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::UNPROCESSABLE_ENTITY, "invalid_request", message).at(path)
    }

    /// `500 internal`: the cause goes to the log, not to the caller.
    pub fn internal(cause: impl Into<String>) -> ApiError {
        let mut error = ApiError::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            "internal",
            "askbridge could not complete the request; see its log",
        );
        error.cause = Some(cause.into());
        error
    }

    /// `503 unavailable`: the database is unreachable or busy for now;
    /// the same request may be sent again. `cause` goes to the log only.
    pub fn unavailable(cause: impl Into<String>) -> ApiError {
        ApiError::unavailable_saying(
            "askbridge cannot reach its database right now; try again (a retried create with the same Idempotency-Key asks once)",
            cause,
        )
    }

    /// `503 unavailable`, because the database's disk is full; the same
    /// request may be sent once there is room. `cause` goes to the log
    /// only.
    pub fn disk_full(cause: impl Into<String>) -> ApiError {
        ApiError::unavailable_saying(
            "askbridge's database has no room to write (its disk is full); nothing was changed: \
             try again once there is room (a retried create with the same Idempotency-Key asks once)",
            cause,
        )
    }

    fn unavailable_saying(message: &str, cause: impl Into<String>) -> ApiError {
        let mut error = ApiError::new(StatusCode::SERVICE_UNAVAILABLE, "unavailable", message);
        error.cause = Some(cause.into());
        error
    }

    /// The error for a rejected reply: `409 already_answered`,
    /// `403 not_for_you`, `422 invalid_answer`; the message is the one a
    /// person in a chat is told (in English).
    pub fn rejection(rejection: &Rejection, ask: &Ask) -> ApiError {
        let for_user = ask
            .target
            .as_ref()
            .and_then(|target| target.user.as_deref());
        let message = render::refusal(rejection, for_user, Locale::En);
        match rejection {
            Rejection::NotForYou => ApiError::new(StatusCode::FORBIDDEN, "not_for_you", message),
            Rejection::AlreadyEnded(_) => {
                ApiError::new(StatusCode::CONFLICT, "already_answered", message)
            }
            Rejection::Invalid(invalid) => {
                let (path, message) = invalid_path(invalid, ask);
                ApiError::new(StatusCode::UNPROCESSABLE_ENTITY, "invalid_answer", message).at(path)
            }
        }
    }
}

/// The request path and message of an invalid reply.
fn invalid_path(invalid: &Invalid, ask: &Ask) -> (String, String) {
    let by_index = |question: usize| {
        ask.questions
            .get(question)
            .map_or_else(|| "answers".to_owned(), |q| format!("answers.{}", q.id))
    };
    let by_id = |id: &str| format!("answers.{id}");
    match invalid {
        Invalid::UnknownQuestion { id } => (by_id(id), "no such question".to_owned()),
        Invalid::DuplicateQuestion { id } => (by_id(id), "answered twice".to_owned()),
        Invalid::Required { id } => (by_id(id), "the question is required".to_owned()),
        Invalid::SeveralAnswers { id, got } => (
            by_id(id),
            format!("the question takes one answer, got {got}"),
        ),
        Invalid::SeveralOwnAnswers { id, got } => (
            by_id(id),
            format!("{got} strings match no option; at most one own answer is allowed"),
        ),
        Invalid::NoAnswers => ("answers".to_owned(), "no question answered".to_owned()),
        Invalid::EmptyText { question } => (by_index(*question), "the answer is empty".to_owned()),
        Invalid::NoSuchQuestion { question }
        | Invalid::NoSuchOption { question, .. }
        | Invalid::NotAChoice { question }
        | Invalid::NothingPicked { question }
        | Invalid::SeveralPicks { question }
        | Invalid::UnsortedOptions { question } => (by_index(*question), invalid.to_string()),
    }
}

impl From<BridgeError> for ApiError {
    fn from(error: BridgeError) -> ApiError {
        match error {
            BridgeError::NotFound(id) => ApiError::unknown_ask(&id),
            BridgeError::IdempotencyConflict(key) => ApiError::new(
                StatusCode::CONFLICT,
                "idempotency_conflict",
                format!("Idempotency-Key {key:?} was already used for a different ask"),
            )
            .at("Idempotency-Key"),
            BridgeError::Callback(message) => {
                ApiError::invalid_ask(&[askbridge_core::normalize::Problem::new(
                    "callbackUrl",
                    message,
                )])
            }
            BridgeError::Refused(problems) => ApiError::invalid_ask(&problems),
            error if error.is_full() => ApiError::disk_full(crate::error_chain(&error)),
            error if error.is_retryable() => ApiError::unavailable(crate::error_chain(&error)),
            error => ApiError::internal(crate::error_chain(&error)),
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let info = ErrorInfo {
            code: self.code,
            cause: self.cause.map(Arc::from),
        };
        let body = ErrorResponse {
            error: ErrorBody {
                code: self.code,
                message: self.message,
                path: self.path,
                errors: self.errors,
            },
        };
        let mut response = json_response(self.status, &body);
        if self.status == StatusCode::UNAUTHORIZED {
            response
                .headers_mut()
                .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
        }
        response.extensions_mut().insert(info);
        response
    }
}

/// A JSON response; serialising the API's own types cannot fail, but if it
/// did the caller would still get JSON.
pub fn json_response(status: StatusCode, body: &impl serde::Serialize) -> Response {
    let bytes = serde_json::to_vec(body).unwrap_or_else(|_| {
        br#"{"error":{"code":"internal","message":"response could not be written","path":null}}"#
            .to_vec()
    });
    (
        status,
        [(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        )],
        bytes,
    )
        .into_response()
}

/// The code for a bare error status from outside the API's handlers
/// (axum's own 404/405, the body limit's 413, another router's text).
pub fn code_for(status: StatusCode) -> &'static str {
    match status {
        StatusCode::BAD_REQUEST => "bad_request",
        StatusCode::UNAUTHORIZED => "unauthorized",
        StatusCode::FORBIDDEN => "forbidden",
        StatusCode::NOT_FOUND => "not_found",
        StatusCode::METHOD_NOT_ALLOWED => "method_not_allowed",
        StatusCode::NOT_ACCEPTABLE => "not_acceptable",
        StatusCode::CONFLICT => "conflict",
        StatusCode::PAYLOAD_TOO_LARGE => "body_too_large",
        StatusCode::UNSUPPORTED_MEDIA_TYPE => "unsupported_media_type",
        StatusCode::UNPROCESSABLE_ENTITY => "unprocessable",
        StatusCode::TOO_MANY_REQUESTS => "too_many_requests",
        status if status.is_server_error() => "internal",
        _ => "error",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_retryable_storage_failure_is_503_and_a_bug_500() {
        let busy = ApiError::from(BridgeError::Contended("ask_1".to_owned()));
        assert_eq!(
            (busy.status, busy.code),
            (StatusCode::SERVICE_UNAVAILABLE, "unavailable")
        );
        let lost = ApiError::from(BridgeError::from(crate::store::StoreError::Database(
            sqlx::Error::PoolTimedOut,
        )));
        assert_eq!(lost.status, StatusCode::SERVICE_UNAVAILABLE);
        let bug = ApiError::from(BridgeError::NotLoaded);
        assert_eq!(
            (bug.status, bug.code),
            (StatusCode::INTERNAL_SERVER_ERROR, "internal")
        );
    }
}

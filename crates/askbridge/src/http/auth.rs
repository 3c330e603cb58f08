//! The bearer-token check: with an API token configured, every request
//! under `/v1`, `/mcp` and to `/metrics` needs `Authorization: Bearer
//! <token>`; the page (`/` and its assets) and `/healthz` stay open.
//! Tokens are compared in constant time and never logged.

use axum::extract::{OriginalUri, Request};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};

use super::error::ApiError;
use crate::config::Secret;

/// The refusal for a request to a protected path without the right bearer
/// token; `None` when the request may go on (no token configured, an open
/// path, or the right token).
pub fn refusal(token: Option<&Secret>, request: &Request) -> Option<Response> {
    let token = token?;
    let path = request
        .extensions()
        .get::<OriginalUri>()
        .map_or_else(|| request.uri().path(), |uri| uri.path());
    if !is_protected(path) {
        return None;
    }
    let given = request
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|value| value.to_str().ok())
        .and_then(bearer);
    match given {
        Some(given) if same(given.as_bytes(), token.expose().as_bytes()) => None,
        Some(_) => Some(
            ApiError::new(
                StatusCode::UNAUTHORIZED,
                "unauthorized",
                "the bearer token is not valid",
            )
            .into_response(),
        ),
        None => Some(
            ApiError::new(
                StatusCode::UNAUTHORIZED,
                "unauthorized",
                "this server needs an API token: send Authorization: Bearer <token>",
            )
            .into_response(),
        ),
    }
}

/// Whether a path needs the token.
pub(super) fn is_protected(path: &str) -> bool {
    let under = |prefix: &str| {
        path.strip_prefix(prefix)
            .is_some_and(|rest| rest.is_empty() || rest.starts_with('/'))
    };
    under("/v1") || under("/mcp") || path == "/metrics"
}

/// The token of an `Authorization: Bearer <token>` value.
fn bearer(value: &str) -> Option<&str> {
    let (scheme, token) = value.trim().split_once(' ')?;
    scheme
        .eq_ignore_ascii_case("bearer")
        .then(|| token.trim())
        .filter(|token| !token.is_empty())
}

/// Compares two byte strings in time that depends only on their lengths.
pub(crate) fn same(given: &[u8], expected: &[u8]) -> bool {
    let mut difference = given.len() ^ expected.len();
    for index in 0..given.len().max(expected.len()) {
        let a = given.get(index).copied().unwrap_or(0);
        let b = expected.get(index).copied().unwrap_or(0);
        difference |= usize::from(a ^ b);
    }
    std::hint::black_box(difference) == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn auth_protected_paths() {
        for path in ["/v1", "/v1/asks", "/v1/events", "/mcp", "/mcp/", "/metrics"] {
            assert!(is_protected(path), "{path}");
        }
        for path in ["/", "/healthz", "/v10", "/mcpx", "/app.js"] {
            assert!(!is_protected(path), "{path}");
        }
    }

    #[test]
    fn auth_bearer_and_compare() {
        assert_eq!(bearer("Bearer abc"), Some("abc"));
        assert_eq!(bearer("bearer  abc "), Some("abc"));
        assert_eq!(bearer("Basic abc"), None);
        assert_eq!(bearer("Bearer "), None);
        assert!(same(b"abc", b"abc"));
        assert!(!same(b"abc", b"abd"));
        assert!(!same(b"abc", b"abcd"));
        assert!(!same(b"", b"a"));
    }
}

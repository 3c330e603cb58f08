//! Requests only from the daemon's own names and its own page (DNS
//! rebinding and cross-site requests). A page on another site whose name
//! rebinds to 127.0.0.1 reaches the daemon with its own name in `Host`; a
//! page on another site that posts to `http://127.0.0.1:8790` sends its
//! own `Origin`. Either is refused on every route but `/healthz` and the
//! platforms' own inbound routes (which their platforms call from
//! anywhere, each checking its platform's signature): otherwise any page
//! the person opens could read pending approvals and answer them.

use axum::extract::{OriginalUri, Request};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};

use super::error::ApiError;

/// Path prefixes of the platforms' own inbound routes (`/telegram/webhook`,
/// `/slack/events`, `/teams/messages`, …).
const PLATFORM_PREFIXES: [&str; 5] = ["/telegram/", "/discord/", "/slack/", "/feishu/", "/teams/"];

/// The `Host` values the daemon answers to.
#[derive(Debug, Clone, Default)]
pub struct AllowedHosts {
    /// Lower-case hosts, each with the one port it is served on, or any
    /// port (`None`); empty with `any`.
    hosts: Vec<(String, Option<String>)>,
    /// `"*"` was listed: any `Host`.
    any: bool,
}

impl AllowedHosts {
    /// The list as configured (`[http] allowed_hosts`: names and IPs, any
    /// port, or `HOST:PORT`).
    pub fn new(hosts: &[String]) -> AllowedHosts {
        AllowedHosts {
            any: hosts.iter().any(|host| host.trim() == "*"),
            hosts: hosts.iter().map(|host| split_host(host)).collect(),
        }
    }

    /// Whether `value`, a `Host` header, names the daemon.
    fn admits(&self, value: &str) -> bool {
        let (host, port) = split_host(value);
        self.any
            || self.hosts.iter().any(|(allowed, allowed_port)| {
                *allowed == host && (allowed_port.is_none() || *allowed_port == port)
            })
    }
}

/// The lower-case host and port of `host[:port]`, `[v6][:port]` or a bare
/// IPv6 address.
fn split_host(value: &str) -> (String, Option<String>) {
    let value = value.trim().to_ascii_lowercase();
    if let Some(rest) = value.strip_prefix('[') {
        let (host, after) = rest.split_once(']').unwrap_or((rest, ""));
        let port = after.strip_prefix(':').map(str::to_owned);
        return (host.to_owned(), port);
    }
    match value.split_once(':') {
        Some((host, port)) if !port.contains(':') => (host.to_owned(), Some(port.to_owned())),
        _ => (value, None),
    }
}

/// The refusal for a request from another site: its `Host` is not one of
/// the daemon's names, or its `Origin` is not the site it was sent to;
/// `None` when it may go on. A request without `Host` or `Origin` (a
/// program, not a browser) is not judged by them.
pub fn refusal(allowed: &AllowedHosts, request: &Request) -> Option<Response> {
    let path = request
        .extensions()
        .get::<OriginalUri>()
        .map_or_else(|| request.uri().path(), |uri| uri.path());
    if path == "/healthz"
        || PLATFORM_PREFIXES
            .iter()
            .any(|prefix| path.starts_with(prefix))
    {
        return None;
    }
    let headers = request.headers();
    let host = headers
        .get(header::HOST)
        .map(|value| value.to_str().unwrap_or_default());
    if let Some(host) = host
        && !allowed.admits(host)
    {
        return Some(forbidden(format!(
            "this daemon does not answer to the name {host:?}: add it to [http] allowed_hosts \
             if it is the daemon's own"
        )));
    }
    let origin = headers
        .get(header::ORIGIN)
        .map(|value| value.to_str().unwrap_or_default());
    match (origin, host) {
        (None, _) => None,
        (Some(origin), Some(host)) if same_site(origin, host) => None,
        (Some(origin), _) => Some(forbidden(format!(
            "a page from another site ({origin}) may not call this daemon"
        ))),
    }
}

/// Whether an `Origin` value names the site `host` is: its authority is
/// the `Host` the request was sent to (`null` never is).
fn same_site(origin: &str, host: &str) -> bool {
    let authority = origin
        .strip_prefix("http://")
        .or_else(|| origin.strip_prefix("https://"));
    authority.is_some_and(|authority| authority.eq_ignore_ascii_case(host.trim()))
}

fn forbidden(message: String) -> Response {
    ApiError::new(StatusCode::FORBIDDEN, "forbidden", message).into_response()
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::body::Body;

    fn loopback() -> AllowedHosts {
        AllowedHosts::new(&[
            "localhost".to_owned(),
            "127.0.0.1".to_owned(),
            "::1".to_owned(),
            "askbridge.example.com".to_owned(),
        ])
    }

    fn request(path: &str, host: Option<&str>, origin: Option<&str>) -> Request {
        let mut builder = Request::builder().uri(path);
        if let Some(host) = host {
            builder = builder.header(header::HOST, host);
        }
        if let Some(origin) = origin {
            builder = builder.header(header::ORIGIN, origin);
        }
        builder.body(Body::empty()).expect("a request")
    }

    fn refused(path: &str, host: Option<&str>, origin: Option<&str>) -> bool {
        refusal(&loopback(), &request(path, host, origin)).is_some()
    }

    #[test]
    fn the_daemons_own_names_and_page_are_served() {
        for host in [
            "127.0.0.1:8790",
            "localhost:8790",
            "LOCALHOST",
            "[::1]:8790",
            "askbridge.example.com",
        ] {
            assert!(!refused("/v1/asks", Some(host), None), "{host}");
        }
        assert!(!refused(
            "/v1/asks/ask_1/reply",
            Some("127.0.0.1:8790"),
            Some("http://127.0.0.1:8790")
        ));
        assert!(!refused(
            "/",
            Some("askbridge.example.com"),
            Some("https://askbridge.example.com")
        ));
        assert!(!refused("/v1/asks", None, None), "a program without Host");
    }

    #[test]
    fn a_rebound_name_or_another_sites_page_is_refused() {
        // DNS rebinding: the attacker's name, resolved to 127.0.0.1.
        for path in [
            "/v1/asks",
            "/v1/asks/ask_1/reply",
            "/",
            "/v1/events",
            "/mcp",
            "/email/answer/a/1",
        ] {
            assert!(
                refused(path, Some("rebind.attacker.example:8790"), None),
                "{path}"
            );
        }
        // Cross-site: the right Host, another site's page.
        assert!(refused(
            "/v1/asks/ask_1/reply",
            Some("127.0.0.1:8790"),
            Some("https://attacker.example")
        ));
        assert!(refused("/v1/asks", Some("127.0.0.1:8790"), Some("null")));
        assert!(refused(
            "/v1/asks",
            Some("127.0.0.1:8790"),
            Some("http://localhost:3000")
        ));
    }

    #[test]
    fn health_and_the_platforms_inbound_routes_are_not_judged() {
        for path in [
            "/healthz",
            "/telegram/webhook",
            "/slack/events",
            "/discord/interactions",
            "/feishu/events",
            "/teams/messages",
        ] {
            assert!(
                !refused(path, Some("anything.example"), Some("https://x.example")),
                "{path}"
            );
        }
    }

    #[test]
    fn a_star_answers_to_any_name_but_still_refuses_another_sites_page() {
        let any = AllowedHosts::new(&["*".to_owned()]);
        assert!(refusal(&any, &request("/v1/asks", Some("whatever.example"), None)).is_none());
        assert!(
            refusal(
                &any,
                &request(
                    "/v1/asks",
                    Some("whatever.example"),
                    Some("https://attacker.example")
                )
            )
            .is_some()
        );
    }

    #[test]
    fn a_port_listed_is_the_only_port() {
        let hosts = AllowedHosts::new(&["10.0.0.5:8790".to_owned()]);
        assert!(refusal(&hosts, &request("/v1/asks", Some("10.0.0.5:8790"), None)).is_none());
        assert!(refusal(&hosts, &request("/v1/asks", Some("10.0.0.5:9999"), None)).is_some());
    }
}

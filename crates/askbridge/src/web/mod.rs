//! The built-in web channel: the page at `/`, its static assets, and the
//! live event stream at `/v1/events` the page listens to.
//!
//! The page is plain HTML, CSS and JavaScript embedded in the binary
//! (`assets/`, no build step, no external fonts or CDNs), served in the
//! reader's language with the core phrase table's words (`page`). It reads pending
//! asks from `GET /v1/asks?status=pending&channel=web` and answers through
//! `POST /v1/asks/{id}/reply` — the same path as every other client — so
//! this module adds only what the HTTP API does not have: the page itself
//! and a Server-Sent Events stream of the bridge's events for asks posted
//! to `web`.
//!
//! The event stream speaks these events, each `data:` a JSON object:
//!
//! - `ready` (`{}`): the subscription is live; fetch the pending list now
//!   (events after this one are not missed).
//! - `created`, `updated`, `ended`: the ask as the HTTP API returns it
//!   ([`AskResponse`]; pending: `id`, `status`, `ask`, `to`, `createdAt`,
//!   `expiresAt`, `answered`, `open`, `remindAt`; ended: the outcome's fields
//!   plus `ask`, `to`, `createdAt`).
//! - `resync` (`{"missed": n}`): this subscriber fell behind and missed
//!   events; fetch the pending list again.
//!
//! plus a keep-alive comment every 15 seconds.
//!
//! The web channel itself ([`WebChannel`]) posts nothing: the page listens
//! to the events, so delivering, updating and ending are no-ops.
//!
//! This module does not authenticate: the daemon's bearer-token layer
//! covers `/v1/events` like every other `/v1` route. The page sends the
//! token (from `#token=…` in its URL) as an `Authorization` header, which
//! is why it reads the stream with `fetch` rather than `EventSource`.

use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use askbridge_core::failure::PlatformFailure;
use askbridge_core::model::{ChannelKind, Timestamp};
use askbridge_core::render::Locale;
use axum::Router;
use axum::body::Body;
use axum::extract::{Query, State};
use axum::http::{HeaderMap, HeaderValue, header};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use futures_util::{Stream, StreamExt};
use serde::Deserialize;
use serde_json::{Value, json};
use tokio::sync::broadcast;
use tokio_stream::wrappers::BroadcastStream;
use tokio_stream::wrappers::errors::BroadcastStreamRecvError;
use utoipa::IntoParams;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::bridge::channel::{BoxFuture, Channel};
use crate::bridge::{AskView, Bridge, BridgeEvent, Clock};
use crate::wire::api::AskResponse;

mod page;

use page::Pages;

/// The user id of whoever answers on the page, and over HTTP when a reply
/// names nobody.
pub const PAGE_USER: &str = "web";

/// The page's script.
const APP_JS: &str = include_str!("assets/app.js");
/// The page's styles.
const APP_CSS: &str = include_str!("assets/app.css");

/// Content-Security-Policy of the page: everything from this origin, no
/// inline script, no third party.
const CSP: &str = "default-src 'none'; script-src 'self'; style-src 'self'; \
                   img-src 'self' data:; connect-src 'self'; base-uri 'none'; \
                   form-action 'none'; frame-ancestors 'none'";

/// How often an idle event stream sends a keep-alive comment.
const KEEP_ALIVE: Duration = Duration::from_secs(15);

/// The page, its assets and its event stream, merged into the daemon's
/// router at the root. `locale` is `[web] locale`: the page's language for
/// browsers that ask for none askbridge speaks.
///
/// Routes: `GET /`, `GET /assets/app.js`, `GET /assets/app.css`, and
/// `GET /v1/events`, which is part of the API and so in its OpenAPI
/// document (the page is not).
pub fn router(bridge: Bridge, locale: Locale) -> OpenApiRouter {
    let page = Router::new()
        .route("/", get(index))
        .with_state(Arc::new(Pages::new(locale)));
    OpenApiRouter::new()
        .route("/assets/app.js", get(app_js))
        .route("/assets/app.css", get(app_css))
        .routes(routes!(events))
        .with_state(bridge)
        .merge(OpenApiRouter::from(page))
}

/// The web channel for [`Bridge::add_channel`](crate::bridge::Bridge::add_channel).
pub fn channel() -> Arc<dyn Channel> {
    Arc::new(WebChannel)
}

/// The channel for asks posted to `web`: the page follows `/v1/events`, so
/// there is nothing to post, edit or close.
#[derive(Debug, Clone, Copy, Default)]
pub struct WebChannel;

impl Channel for WebChannel {
    fn kind(&self) -> ChannelKind {
        ChannelKind::Web
    }

    fn deliver<'a>(
        &'a self,
        _ask: &'a AskView,
        _place: usize,
    ) -> BoxFuture<'a, Result<(), PlatformFailure>> {
        Box::pin(async { Ok(()) })
    }

    fn update<'a>(
        &'a self,
        _ask: &'a AskView,
        _place: usize,
    ) -> BoxFuture<'a, Result<(), PlatformFailure>> {
        Box::pin(async { Ok(()) })
    }

    fn end<'a>(
        &'a self,
        _ask: &'a AskView,
        _place: usize,
    ) -> BoxFuture<'a, Result<(), PlatformFailure>> {
        Box::pin(async { Ok(()) })
    }
}

/// A static asset with its content type; revalidated on every load so a
/// new binary's page is picked up at once.
fn asset(content_type: &'static str, body: impl Into<Body>) -> Response {
    (
        [
            (header::CONTENT_TYPE, HeaderValue::from_static(content_type)),
            (header::CACHE_CONTROL, HeaderValue::from_static("no-cache")),
            (
                header::X_CONTENT_TYPE_OPTIONS,
                HeaderValue::from_static("nosniff"),
            ),
        ],
        body.into(),
    )
        .into_response()
}

/// `GET /`: the page, in the language the browser prefers
/// (`Accept-Language`), else the configured one.
async fn index(State(pages): State<Arc<Pages>>, request: HeaderMap) -> Response {
    let accept_language: Vec<&str> = request
        .get_all(header::ACCEPT_LANGUAGE)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .collect();
    let locale = pages.locale_for(&accept_language.join(","));
    let mut response = asset("text/html; charset=utf-8", pages.page(locale));
    let headers = response.headers_mut();
    headers.insert(header::VARY, HeaderValue::from_static("accept-language"));
    headers.insert(
        header::CONTENT_LANGUAGE,
        HeaderValue::from_static(locale.as_str()),
    );
    headers.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(CSP),
    );
    headers.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    headers.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    response
}

/// `GET /assets/app.js`.
async fn app_js() -> Response {
    asset("text/javascript; charset=utf-8", APP_JS)
}

/// `GET /assets/app.css`.
async fn app_css() -> Response {
    asset("text/css; charset=utf-8", APP_CSS)
}

/// The query of `GET /v1/events`.
#[derive(Debug, Default, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
struct EventsParams {
    /// Only this ask's events, wherever it was posted (the page opened as
    /// `/#ask=<id>`, the link an agent host shows); without it, the events
    /// of every ask posted to `web`.
    ask: Option<String>,
}

/// Live events of the asks posted to `web` (or of one ask), used by the
/// web page.
///
/// A Server-Sent Events stream; each event's `data` is JSON. `ready`
/// (`{}`): the stream is live; fetch `GET /v1/asks?status=pending&channel=web`
/// (or `GET /v1/asks/{id}`) now and miss nothing after. `created`, `updated`, `ended`: the ask as
/// `GET /v1/asks/{id}` shows it. `resync` (`{"missed": n}`): this listener
/// fell behind; fetch the pending list again. A keep-alive comment comes
/// every 15 seconds. Served only while the web channel is on.
///
/// The subscription is taken before the response starts, so a client that
/// has the response headers (or the `ready` event) misses nothing after it.
#[utoipa::path(
    get,
    path = "/v1/events",
    operation_id = "events",
    params(EventsParams),
    responses((status = OK, body = String, content_type = "text/event-stream",
               description = "The event stream.")),
)]
async fn events(State(bridge): State<Bridge>, Query(params): Query<EventsParams>) -> Response {
    let stream = event_stream(bridge.subscribe(), params.ask, bridge.clock().clone());
    let sse = Sse::new(stream).keep_alive(KeepAlive::new().interval(KEEP_ALIVE).text("keep-alive"));
    (
        [
            (header::CACHE_CONTROL, HeaderValue::from_static("no-cache")),
            (
                header::HeaderName::from_static("x-accel-buffering"),
                HeaderValue::from_static("no"),
            ),
        ],
        sse,
    )
        .into_response()
}

/// The SSE events for one subscriber: `ready`, then one event per bridge
/// event about a web ask (or about ask `only`), `resync` after missed
/// events; whether an ask is on the page yet is judged at `clock`'s time.
fn event_stream(
    receiver: broadcast::Receiver<BridgeEvent>,
    only: Option<String>,
    clock: Clock,
) -> impl Stream<Item = Result<Event, Infallible>> + Send + 'static {
    let ready = futures_util::stream::once(async {
        WebEvent {
            name: "ready",
            data: json!({}),
        }
    });
    let only = Arc::new(only);
    let rest = BroadcastStream::new(receiver).filter_map(move |item| {
        let only = Arc::clone(&only);
        let now = clock.now();
        async move { web_event(item, only.as_deref(), now) }
    });
    ready.chain(rest).map(|event| Ok(event.into_sse()))
}

/// One event for the page, before it is written as SSE.
#[derive(Debug, Clone, PartialEq)]
struct WebEvent {
    /// The SSE `event:` name.
    name: &'static str,
    /// The SSE `data:` JSON.
    data: Value,
}

impl WebEvent {
    fn into_sse(self) -> Event {
        Event::default()
            .event(self.name)
            .data(self.data.to_string())
    }
}

/// The page's event for one bridge event: `None` for asks not on the web
/// page at `now` (an escalation step to `web` whose time has not come;
/// with `only`: for every ask but that one); `created` when an ask
/// reaches the page later; `resync` when the subscriber lagged.
fn web_event(
    item: Result<BridgeEvent, BroadcastStreamRecvError>,
    only: Option<&str>,
    now: Timestamp,
) -> Option<WebEvent> {
    let (name, view) = match item {
        Ok(BridgeEvent::Created(view)) => ("created", view),
        Ok(BridgeEvent::Updated(view)) => ("updated", view),
        Ok(BridgeEvent::Ended(view)) => ("ended", view),
        // New to the page; one ask's page has had it from the start.
        Ok(BridgeEvent::Arrived(view)) if only.is_none() => ("created", view),
        Ok(BridgeEvent::Arrived(_)) => return None,
        Err(BroadcastStreamRecvError::Lagged(missed)) => {
            tracing::debug!(
                missed,
                "web event subscriber lagged; asking the page to resync"
            );
            return Some(WebEvent {
                name: "resync",
                data: json!({ "missed": missed }),
            });
        }
    };
    let wanted = match only {
        Some(id) => view.id == id,
        None => view.is_on(ChannelKind::Web, now),
    };
    if !wanted {
        return None;
    }
    Some(WebEvent {
        name,
        data: ask_json(&view),
    })
}

/// An ask as the page needs it: the HTTP API's [`AskResponse`], so the
/// page reads events and API answers alike.
fn ask_json(view: &AskView) -> Value {
    // AskResponse is strings, lists and maps: serialising cannot fail.
    serde_json::to_value(AskResponse::from(view)).unwrap_or(Value::Null)
}

#[cfg(test)]
mod tests {
    use askbridge_core::lifecycle::{Answer, State as AskState};
    use askbridge_core::model::Target;
    use askbridge_core::model::Timestamp;
    use askbridge_core::normalize::normalize_json;
    use askbridge_core::outcome::Via;

    use super::*;

    /// When the test asks are created.
    const CREATED: Timestamp = Timestamp::from_secs(1_800_000_000);

    /// The page's event at the asks' creation.
    fn at_creation(
        item: Result<BridgeEvent, BroadcastStreamRecvError>,
        only: Option<&str>,
    ) -> Option<WebEvent> {
        web_event(item, only, CREATED)
    }

    #[test]
    fn web_event_of_an_ask_passed_on_to_the_page_only_from_its_time() {
        let mut later = Arc::unwrap_or_clone(view("telegram:42", vec![None, None]));
        later.ask.escalate = vec![askbridge_core::model::Escalation {
            after_seconds: 60,
            to: Target::parse("web").expect("valid target"),
        }];
        let later = Arc::new(later);
        let created = || Ok(BridgeEvent::Created(Arc::clone(&later)));
        assert_eq!(
            web_event(created(), None, CREATED),
            None,
            "not on the page yet"
        );
        let before = CREATED.saturating_add_secs(59);
        let due = CREATED.saturating_add_secs(60);
        assert_eq!(web_event(created(), None, before), None);
        let arrived = || Ok(BridgeEvent::Arrived(Arc::clone(&later)));
        assert_eq!(
            web_event(arrived(), None, due).map(|e| e.name),
            Some("created"),
            "new to the page"
        );
        assert_eq!(
            web_event(arrived(), Some("ask_1"), due),
            None,
            "one ask's page had it from the start"
        );
        let updated = || Ok(BridgeEvent::Updated(Arc::clone(&later)));
        assert_eq!(web_event(updated(), None, before), None);
        assert_eq!(
            web_event(updated(), None, due).map(|e| e.name),
            Some("updated")
        );
        assert_eq!(
            web_event(created(), Some("ask_1"), CREATED).map(|e| e.name),
            Some("created")
        );
    }

    fn view(to: &str, answers: Vec<Option<Answer>>) -> Arc<AskView> {
        let mut ask = normalize_json(&json!({
            "title": "Release 2.4",
            "questions": [
                {"id": "deploy", "header": "Deploy", "question": "Where?", "options": ["Staging (Recommended)", "Production"]},
                {"id": "notify", "header": "Notify", "question": "Who?", "type": "text"}
            ]
        }))
        .expect("valid ask")
        .ask;
        let target = Target::parse(to).expect("valid target");
        // As the bridge stores every ask: its place named.
        ask.target = Some(target.clone());
        Arc::new(AskView {
            id: "ask_1".into(),
            ask,
            target,
            created_at: CREATED,
            deadline: Timestamp::from_secs(1_800_000_900),
            state: AskState::Pending,
            answers,
            outcome: None,
            late: None,
        })
    }

    #[test]
    fn web_event_says_when_an_asks_reminders_are_due() {
        let mut reminded = Arc::unwrap_or_clone(view("web", vec![None, None]));
        reminded.ask.remind = Some(askbridge_core::model::Reminders {
            after_seconds: 300,
            every_seconds: Some(300),
        });
        let event = at_creation(Ok(BridgeEvent::Created(Arc::new(reminded))), None)
            .expect("web asks are sent");
        // From creation, every 300 s, before the deadline 900 s on.
        let at = |secs: u64| Value::from(Timestamp::from_secs(1_800_000_000 + secs).rfc3339());
        assert_eq!(event.data["remindAt"], json!([at(300), at(600)]));
        let plain = at_creation(
            Ok(BridgeEvent::Created(view("web", vec![None, None]))),
            None,
        )
        .expect("web asks are sent");
        assert_eq!(plain.data.get("remindAt"), None);
    }

    #[test]
    fn web_event_for_a_pending_web_ask() {
        let answer = Answer {
            options: vec![0],
            text: None,
            via: Via::Web,
        };
        let event = at_creation(
            Ok(BridgeEvent::Updated(view("web", vec![Some(answer), None]))),
            None,
        );
        let event = event.expect("web asks are sent");
        assert_eq!(event.name, "updated");
        assert_eq!(
            event.data,
            json!({
                "id": "ask_1",
                "status": "pending",
                "answered": ["deploy"],
                "open": ["notify"],
                "ask": {
                    "title": "Release 2.4",
                    "questions": [
                        {"id": "deploy", "header": "Deploy", "question": "Where?", "type": "single",
                         "options": [{"label": "Staging (Recommended)", "recommended": true}, {"label": "Production"}]},
                        {"id": "notify", "header": "Notify", "question": "Who?", "type": "text"}
                    ],
                    "timeoutSeconds": 900,
                    "to": "web"
                },
                "to": "web",
                "createdAt": "2027-01-15T08:00:00Z",
                "expiresAt": "2027-01-15T08:15:00Z"
            })
        );
    }

    #[test]
    fn web_event_skips_asks_for_other_channels() {
        let created = at_creation(
            Ok(BridgeEvent::Created(view("telegram:42", vec![None, None]))),
            None,
        );
        assert_eq!(created, None);
        let created = at_creation(
            Ok(BridgeEvent::Created(view("web:alice", vec![None, None]))),
            None,
        );
        assert_eq!(
            created.map(|e| (e.name, e.data["to"].clone())),
            Some(("created", json!("web:alice")))
        );
    }

    #[test]
    fn web_event_for_one_ask_follows_it_wherever_it_was_posted() {
        let telegram = || Ok(BridgeEvent::Ended(view("telegram:42", vec![None, None])));
        let event = at_creation(telegram(), Some("ask_1"));
        assert_eq!(
            event.map(|e| (e.name, e.data["to"].clone())),
            Some(("ended", json!("telegram:42")))
        );
        assert_eq!(at_creation(telegram(), Some("ask_2")), None);
        let web = Ok(BridgeEvent::Created(view("web", vec![None, None])));
        assert_eq!(at_creation(web, Some("ask_2")), None);
    }

    #[test]
    fn web_event_resync_when_lagging() {
        let event = at_creation(Err(BroadcastStreamRecvError::Lagged(3)), None);
        assert_eq!(
            event,
            Some(WebEvent {
                name: "resync",
                data: json!({"missed": 3})
            })
        );
    }

    #[tokio::test]
    async fn web_events_resync_after_a_lag() {
        let (sender, receiver) = broadcast::channel(1);
        let stream = BroadcastStream::new(receiver)
            .filter_map(|item| async move { at_creation(item, None) });
        for to in ["web", "telegram:1", "web"] {
            sender
                .send(BridgeEvent::Created(view(to, vec![None, None])))
                .expect("a receiver exists");
        }
        drop(sender);
        let names: Vec<&str> = stream.map(|e| e.name).collect().await;
        assert_eq!(names, ["resync", "created"]);
    }

    #[tokio::test]
    async fn web_channel_is_a_no_op() {
        let channel = channel();
        assert_eq!(channel.kind(), ChannelKind::Web);
        let ask = view("web", vec![None, None]);
        assert!(channel.deliver(&ask, 0).await.is_ok());
        assert!(channel.update(&ask, 0).await.is_ok());
        assert!(channel.end(&ask, 0).await.is_ok());
    }

    #[test]
    fn page_links_only_its_own_assets() {
        use page::INDEX_HTML;
        assert!(INDEX_HTML.contains("/assets/app.js"));
        assert!(INDEX_HTML.contains("/assets/app.css"));
        for text in [INDEX_HTML, APP_JS, APP_CSS] {
            for external in [
                "src=\"http",
                "href=\"http",
                "url(http",
                "@import",
                "fetch(\"http",
                "//cdn",
            ] {
                assert!(
                    !text.contains(external),
                    "no external resources: {external}"
                );
            }
        }
        assert!(
            !APP_JS.contains("innerHTML"),
            "DOM is built with textContent"
        );
    }
}

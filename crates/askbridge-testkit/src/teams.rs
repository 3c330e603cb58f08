//! A fake of Microsoft's Bot Connector and login, for what the Agents
//! Playground ([`crate::playground`]) cannot say: rate limits, a token the
//! connector refuses, a conversation the bot was removed from.
//!
//! - `POST /{tenant}/oauth2/v2.0/token` gives tokens `t1`, `t2`, … (one
//!   more each time; they last an hour).
//! - `POST /v3/conversations/{id}/activities` (and `…/activities/{reply
//!   to}`) records the activity and answers `201 {"id"}` with a new id;
//!   `PUT …/activities/{id}` records an update; `POST /v3/conversations`
//!   opens a personal chat `a:personal-<member>` (what was asked for is
//!   recorded).
//! - What a conversation answers instead can be set: `429` with
//!   `Retry-After` a number of times ([`FakeConnector::busy`]), Teams'
//!   `403` for a bot not in the conversation ([`FakeConnector::removed`]),
//!   and a token may be refused with `401` ([`FakeConnector::refuse_token`]).

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use axum::Json;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use serde_json::{Value, json};
use tokio::sync::Notify;

/// How long [`FakeConnector::wait_for`] waits.
const WAIT: Duration = Duration::from_secs(60);

/// A running fake.
#[derive(Debug)]
pub struct FakeConnector {
    url: String,
    shared: Arc<Shared>,
}

#[derive(Debug, Default)]
struct Shared {
    state: Mutex<ConnectorState>,
    more: Notify,
}

/// One activity the bot posted or updated.
#[derive(Debug, Clone)]
pub struct Posted {
    /// Its conversation (with `;messageid=` for a channel thread).
    pub conversation: String,
    /// Its id.
    pub id: String,
    /// What the bot sent.
    pub activity: Value,
    /// The token it came with.
    pub token: String,
    /// When it arrived.
    pub at: Instant,
}

/// What the fake saw.
#[derive(Debug, Default)]
pub struct ConnectorState {
    /// Tokens handed out.
    pub tokens: u32,
    /// Activities posted, in order.
    pub posts: Vec<Posted>,
    /// Updates, in order.
    pub updates: Vec<Posted>,
    /// The bodies of the personal chats opened, in order.
    pub opened: Vec<Value>,
    /// Calls refused, as `(conversation, status, when)`.
    pub refused: Vec<(String, u16, Instant)>,
    busy: HashMap<String, (u32, u64)>,
    /// Teams' limit per conversation, if on: this many a second.
    per_second: Option<usize>,
    recent: HashMap<String, Vec<Instant>>,
    removed: HashMap<String, (String, String)>,
    refused_tokens: HashSet<String>,
    next_id: u64,
}

impl ConnectorState {
    /// The activities posted in `conversation`.
    pub fn posts_in(&self, conversation: &str) -> Vec<&Posted> {
        self.posts
            .iter()
            .filter(|posted| posted.conversation == conversation)
            .collect()
    }
}

impl FakeConnector {
    /// Starts the fake on a free loopback port.
    pub async fn start() -> FakeConnector {
        let shared = Arc::new(Shared::default());
        let app = axum::Router::new()
            .route("/{tenant}/oauth2/v2.0/token", post(token))
            .route("/v3/conversations", post(open_chat))
            .route("/v3/conversations/{conversation}/activities", post(send))
            .route(
                "/v3/conversations/{conversation}/activities/{id}",
                post(reply).put(update),
            )
            .with_state(Arc::clone(&shared));
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("a free port");
        let addr = listener.local_addr().expect("its address");
        tokio::spawn(async move { axum::serve(listener, app).await });
        FakeConnector {
            url: format!("http://{addr}"),
            shared,
        }
    }

    /// The connector's URL (`serviceUrl`), and the login's.
    pub fn url(&self) -> String {
        self.url.clone()
    }

    /// `conversation` answers `429` with `Retry-After: retry_after` to the
    /// next `times` calls.
    pub fn busy(&self, conversation: &str, times: u32, retry_after: u64) {
        self.state()
            .busy
            .insert(conversation.to_owned(), (times, retry_after));
    }

    /// The bot is not in `conversation`: every call there is refused as
    /// Teams does (`403`, `code` and `message`).
    pub fn removed(&self, conversation: &str, code: &str, message: &str) {
        self.state().removed.insert(
            conversation.to_owned(),
            (code.to_owned(), message.to_owned()),
        );
    }

    /// Each conversation takes `per_second` calls a second (Teams' own
    /// limit for a bot in one conversation is about 7); more answer `429`
    /// with `Retry-After: 1`.
    pub fn limit_per_second(&self, per_second: usize) {
        self.state().per_second = Some(per_second);
    }

    /// Calls with `token` are refused with `401`.
    pub fn refuse_token(&self, token: &str) {
        self.state().refused_tokens.insert(token.to_owned());
    }

    /// What the fake saw so far.
    pub fn state(&self) -> std::sync::MutexGuard<'_, ConnectorState> {
        self.shared.lock()
    }

    /// Waits until `wanted` finds something in the state.
    ///
    /// # Panics
    ///
    /// When nothing is found in time (naming `what`).
    pub async fn wait_for<T>(
        &self,
        what: &str,
        wanted: impl Fn(&ConnectorState) -> Option<T>,
    ) -> T {
        let found = tokio::time::timeout(WAIT, async {
            loop {
                let notified = self.shared.more.notified();
                if let Some(found) = wanted(&self.state()) {
                    return found;
                }
                notified.await;
            }
        })
        .await;
        found.unwrap_or_else(|_| panic!("the fake connector saw no {what}: {:#?}", self.state()))
    }
}

impl Shared {
    fn lock(&self) -> std::sync::MutexGuard<'_, ConnectorState> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Records a call to `conversation` (an update of `update`, else a
    /// new activity) and returns the activity's id, unless the call is
    /// refused: then the refusal.
    fn take(
        &self,
        headers: &HeaderMap,
        conversation: &str,
        activity: Value,
        update: Option<&str>,
    ) -> Result<String, Box<Response>> {
        let token = headers
            .get(header::AUTHORIZATION)
            .and_then(|value| value.to_str().ok())
            .and_then(|value| value.strip_prefix("Bearer "))
            .unwrap_or_default()
            .to_owned();
        let mut state = self.lock();
        let refusal = refusal(&mut state, conversation, &token);
        if let Some((status, response)) = refusal {
            state
                .refused
                .push((conversation.to_owned(), status, Instant::now()));
            drop(state);
            self.more.notify_waiters();
            return Err(Box::new(response));
        }
        let id = match update {
            Some(id) => id.to_owned(),
            None => {
                state.next_id += 1;
                format!("{}", 1_700_000_000_000 + state.next_id)
            }
        };
        let posted = Posted {
            conversation: conversation.to_owned(),
            id: id.clone(),
            activity,
            token,
            at: Instant::now(),
        };
        match update {
            Some(_) => state.updates.push(posted),
            None => state.posts.push(posted),
        }
        drop(state);
        self.more.notify_waiters();
        Ok(id)
    }
}

/// Why a call is refused, if it is: the status and the answer.
fn refusal(state: &mut ConnectorState, conversation: &str, token: &str) -> Option<(u16, Response)> {
    if state.refused_tokens.contains(token) {
        let body = json!({"error": {"code": "Unauthorized", "message": "Authorization has been denied for this request."}});
        return Some((401, (StatusCode::UNAUTHORIZED, Json(body)).into_response()));
    }
    let thread_free = conversation
        .split(";messageid=")
        .next()
        .unwrap_or(conversation);
    if let Some((code, message)) = state.removed.get(thread_free) {
        let body = json!({"error": {"code": code, "message": message}});
        return Some((403, (StatusCode::FORBIDDEN, Json(body)).into_response()));
    }
    let limited = state.per_second.is_some_and(|per_second| {
        let now = Instant::now();
        let recent = state.recent.entry(thread_free.to_owned()).or_default();
        recent.retain(|at| now.duration_since(*at) < Duration::from_secs(1));
        let over = recent.len() >= per_second;
        if !over {
            recent.push(now);
        }
        over
    });
    let busy = match state.busy.get_mut(thread_free) {
        Some((times, retry_after)) if *times > 0 => {
            *times -= 1;
            Some(*retry_after)
        }
        _ => None,
    };
    if let Some(retry_after) = busy.or(limited.then_some(1)) {
        let retry_after = retry_after.to_string();
        let body = json!({"error": {"code": "TooManyRequests", "message": "Too many requests."}});
        let response = (
            StatusCode::TOO_MANY_REQUESTS,
            [(header::RETRY_AFTER, retry_after)],
            Json(body),
        )
            .into_response();
        return Some((429, response));
    }
    None
}

async fn token(State(shared): State<Arc<Shared>>) -> Json<Value> {
    let n = {
        let mut state = shared.lock();
        state.tokens += 1;
        state.tokens
    };
    shared.more.notify_waiters();
    Json(json!({"token_type": "Bearer", "access_token": format!("t{n}"), "expires_in": 3600}))
}

async fn open_chat(State(shared): State<Arc<Shared>>, Json(body): Json<Value>) -> Response {
    let member = body["members"][0]["id"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    shared.lock().opened.push(body);
    shared.more.notify_waiters();
    (
        StatusCode::CREATED,
        Json(json!({"id": format!("a:personal-{member}")})),
    )
        .into_response()
}

async fn send(
    State(shared): State<Arc<Shared>>,
    Path(conversation): Path<String>,
    headers: HeaderMap,
    Json(activity): Json<Value>,
) -> Response {
    match shared.take(&headers, &conversation, activity, None) {
        Ok(id) => (StatusCode::CREATED, Json(json!({"id": id}))).into_response(),
        Err(response) => *response,
    }
}

/// A reply to an activity is a post in its conversation.
async fn reply(
    state: State<Arc<Shared>>,
    Path((conversation, _to)): Path<(String, String)>,
    headers: HeaderMap,
    activity: Json<Value>,
) -> Response {
    send(state, Path(conversation), headers, activity).await
}

async fn update(
    State(shared): State<Arc<Shared>>,
    Path((conversation, id)): Path<(String, String)>,
    headers: HeaderMap,
    Json(activity): Json<Value>,
) -> Response {
    match shared.take(&headers, &conversation, activity, Some(&id)) {
        Ok(id) => (StatusCode::OK, Json(json!({"id": id}))).into_response(),
        Err(response) => *response,
    }
}

//! MCP (rmcp): the `ask_user` and `get_answer` tools, served over stdio by
//! `askbridge mcp` and over streamable HTTP at `/mcp` by `askbridge serve`.
//!
//! - [`tools`] is what the model reads: names, descriptions, JSON Schemas.
//! - `call` is what the tools do, independent of the transport: normalise,
//!   create, wait with progress notifications, cancel on
//!   `notifications/cancelled` (or when the connection closes); a
//!   2026-07-28 call whose HTTP stream closes leaves its ask open.
//! - [`host`] shows the ask in the client's own dialog too (an MCP
//!   elicitation form) when the client can; the first answer wins.
//! - `task` serves `ask_user` as an MCP task to clients that declare the
//!   tasks extension: the task is the ask, so it outlives the connection
//!   and restarts.
//! - `rounds` shows the ask in the host's dialog to 2026-07-28 clients,
//!   which get no server requests: `ask_user` returns `input_required`
//!   and the client's retry carries the answer (multi round-trip
//!   requests).
//! - [`backend`] is where asks go: the in-process [`Bridge`], or a running
//!   daemon through [`daemon`] (HTTP), so many agent processes can share
//!   one daemon.
//!
//! - [`stdio`] serves one client over standard input and output
//!   (`askbridge mcp`); [`router`] serves `/mcp`.
//!
//! Only this module knows MCP (rmcp); it talks to the bridge through its
//! public API and to the daemon through its HTTP API, never to storage or
//! channels.

pub mod backend;
mod call;
pub mod daemon;
mod expiring;
pub mod host;
mod replay;
mod rounds;
pub mod stdio;
mod task;
pub mod tools;

use std::sync::Arc;
use std::time::Duration;

use axum::body::Body;
use axum::extract::Request;
use axum::http::request::Parts;
use axum::http::{Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CancelTaskParams, GetTaskParams, GetTaskResult,
    Implementation, ListToolsResult, PaginatedRequestParams, ProtocolVersion, ServerCapabilities,
    ServerConfig, Tool, UpdateTaskParams,
};
use rmcp::service::RequestContext;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{ErrorData, RoleServer, ServerHandler};
use serde_json::{Value, json};

pub use call::{Hangup, PeerProgress, ProgressSink, ProgressUpdate};

use self::backend::Backend;
use self::call::Inflight;
use self::host::{ClientDialog, HostDialog, opens_links, shows_forms};
use self::replay::ReplayingSessions;
use self::rounds::{Round, StateSeal};
use self::task::{FormChoices, client_name};
use crate::bridge::Bridge;
use crate::config::Elicitation;

/// The default interval between progress notifications while a tool waits.
pub const DEFAULT_PROGRESS_INTERVAL: Duration = Duration::from_secs(15);

/// The interval between SSE keep-alive comments on streamable HTTP.
const SSE_KEEP_ALIVE: Duration = Duration::from_secs(15);

const INSTRUCTIONS: &str = "askbridge lets you ask the user a few structured questions in the chat \
they already use and wait for the answer. Call ask_user only for decisions that are truly the \
user's. If an ask_user call times out, call get_answer with the ask id from its progress messages.";

/// Options of the streamable-HTTP MCP service.
#[derive(Debug, Clone)]
pub struct McpOptions {
    /// `Host` header values accepted (`localhost`, `127.0.0.1`, `example.com:8790`;
    /// a name without a port accepts any port), against DNS rebinding.
    /// Empty, or containing `"*"`, accepts any host.
    pub allowed_hosts: Vec<String>,
    /// Interval between progress notifications while a tool waits.
    pub progress_interval: Duration,
    /// Whether asks are also shown in the client's own dialog.
    pub elicitation: Elicitation,
}

impl Default for McpOptions {
    /// Loopback hosts only; progress every 15 seconds.
    fn default() -> McpOptions {
        McpOptions {
            allowed_hosts: vec!["localhost".into(), "127.0.0.1".into(), "::1".into()],
            progress_interval: DEFAULT_PROGRESS_INTERVAL,
            elicitation: Elicitation::default(),
        }
    }
}

/// The streamable-HTTP MCP service with default options, mounted at `/mcp`
/// by [`crate::http`].
pub fn router(bridge: Bridge) -> axum::Router {
    router_with(bridge, McpOptions::default())
}

/// The streamable-HTTP MCP service: stateful sessions (kept in memory),
/// SSE keep-alive, `Host` checked against `options.allowed_hosts`.
pub fn router_with(bridge: Bridge, options: McpOptions) -> axum::Router {
    let McpOptions {
        allowed_hosts,
        progress_interval,
        elicitation,
    } = options;
    let allowed_hosts = if allowed_hosts.iter().any(|host| host.trim() == "*") {
        Vec::new()
    } else {
        allowed_hosts
    };
    let config = StreamableHttpServerConfig::default()
        .with_allowed_hosts(allowed_hosts)
        .with_sse_keep_alive(Some(SSE_KEEP_ALIVE));
    // One server, cloned for each session: the sessions share which tasks
    // ask for the host's form otherwise than configured.
    let server =
        McpServer::new(Backend::Local(bridge), progress_interval).with_elicitation(elicitation);
    // Events are kept a while, so a client that resumes a dropped stream
    // still gets its result.
    let sessions = Arc::new(ReplayingSessions::default());
    let service = StreamableHttpService::new(move || Ok(server.clone()), sessions, config);
    axum::Router::new()
        .route_service("/", service.clone())
        .fallback_service(service)
        .layer(axum::middleware::from_fn(json_rpc_errors))
}

/// A POST of JSON to `/mcp` that does not parse is a `400` with a JSON-RPC
/// parse error (`-32700`), and JSON that is no JSON-RPC message a `400`
/// with an invalid-request error (`-32600`); rmcp answers both with `415`,
/// which says the content type was wrong.
async fn json_rpc_errors(request: Request, next: Next) -> Response {
    let declares_json = request
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.split(';').next())
        .is_some_and(|essence| essence.trim().eq_ignore_ascii_case("application/json"));
    if request.method() != Method::POST || !declares_json {
        return next.run(request).await;
    }
    let (parts, body) = request.into_parts();
    // The daemon's body limit applies further out; past it, reading fails.
    let Ok(bytes) = axum::body::to_bytes(body, usize::MAX).await else {
        return StatusCode::PAYLOAD_TOO_LARGE.into_response();
    };
    let id = match serde_json::from_slice::<Value>(&bytes) {
        Ok(message) => message.get("id").cloned().unwrap_or(Value::Null),
        Err(error) => return json_rpc_error(Value::Null, -32700, &format!("Parse error: {error}")),
    };
    let response = next
        .run(Request::from_parts(parts, Body::from(bytes)))
        .await;
    if response.status() != StatusCode::UNSUPPORTED_MEDIA_TYPE {
        return response;
    }
    let reason = axum::body::to_bytes(response.into_body(), 64 * 1024)
        .await
        .map(|bytes| String::from_utf8_lossy(&bytes).into_owned())
        .unwrap_or_default();
    json_rpc_error(
        id,
        -32600,
        &format!("Invalid request: not a JSON-RPC message this server takes ({reason})"),
    )
}

/// A `400` carrying a JSON-RPC error response.
fn json_rpc_error(id: Value, code: i64, message: &str) -> Response {
    let body = json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}});
    (StatusCode::BAD_REQUEST, axum::Json(body)).into_response()
}

/// The MCP server. Cheap to clone; clones share the record of asks still
/// being waited on (for stdio, to cancel them when the connection closes),
/// of tasks that ask for the host's form otherwise than configured, and
/// the seal of round-trip state.
#[derive(Debug, Clone)]
pub struct McpServer {
    backend: Backend,
    progress_interval: Duration,
    elicitation: Elicitation,
    inflight: Inflight,
    form_choices: FormChoices,
    seal: StateSeal,
}

impl McpServer {
    /// A server whose tools use `backend` and report progress every
    /// `progress_interval` while they wait.
    pub fn new(backend: Backend, progress_interval: Duration) -> McpServer {
        McpServer {
            backend,
            progress_interval,
            elicitation: Elicitation::default(),
            inflight: Inflight::default(),
            form_choices: FormChoices::default(),
            seal: StateSeal::default(),
        }
    }

    /// The same server, showing asks in the client's own dialog as
    /// `elicitation` says.
    pub fn with_elicitation(mut self, elicitation: Elicitation) -> McpServer {
        self.elicitation = elicitation;
        self
    }

    /// What the client of `context` can be asked in its host during a task.
    fn client_dialog(&self, context: &RequestContext<RoleServer>) -> ClientDialog {
        let capabilities = context.client_capabilities().unwrap_or_default();
        ClientDialog {
            forms: shows_forms(&capabilities),
            page: self.page(context).filter(|_| opens_links(&capabilities)),
        }
    }

    /// Whether asks may carry a `callbackUrl` here: an in-process bridge
    /// with webhooks on. (A forwarder cannot tell; the daemon behind it
    /// still takes one in the arguments.)
    fn callbacks(&self) -> bool {
        match &self.backend {
            Backend::Local(bridge) => bridge.has_callbacks(),
            Backend::Remote(_) => false,
        }
    }

    /// Where the client of `context` reaches the web page: the daemon the
    /// forwarder talks to, or this daemon as the client addressed it
    /// (`Host`, and `X-Forwarded-Proto` behind a TLS proxy); `None` over
    /// stdio in-process, where there is no page.
    fn page(&self, context: &RequestContext<RoleServer>) -> Option<String> {
        match &self.backend {
            Backend::Remote(client) => Some(client.url().to_owned()),
            Backend::Local(_) => {
                let parts = context.extensions.get::<Parts>()?;
                let host = parts.headers.get(header::HOST)?.to_str().ok()?;
                let scheme = parts
                    .headers
                    .get("x-forwarded-proto")
                    .and_then(|proto| proto.to_str().ok())
                    .filter(|proto| *proto == "https")
                    .unwrap_or("http");
                Some(format!("{scheme}://{host}"))
            }
        }
    }
}

impl ServerHandler for McpServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_tasks()
                .build(),
        )
        .with_server_info(
            Implementation::new("askbridge", env!("CARGO_PKG_VERSION"))
                .with_title("askbridge")
                .with_description("Ask the user structured questions in their chat"),
        )
        .with_instructions(INSTRUCTIONS)
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(tools::all(
            self.callbacks(),
        )))
    }

    async fn get_task(
        &self,
        request: GetTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetTaskResult, ErrorData> {
        let dialog = self.client_dialog(&context);
        self.task_of(&request.task_id, &dialog).await
    }

    async fn update_task(
        &self,
        request: UpdateTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.task_form_reply(&request.task_id, request.input_responses, &context)
            .await
    }

    async fn cancel_task(
        &self,
        request: CancelTaskParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.task_cancel(&request.task_id).await
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        tools::named(name, self.callbacks())
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let progress = context
            .meta
            .get_progress_token()
            .map(|token| PeerProgress::new(context.peer.clone(), token));
        let tasks = context
            .client_capabilities()
            .is_some_and(|capabilities| capabilities.supports_tasks());
        let rounds = context
            .protocol_version()
            .is_some_and(|version| version >= ProtocolVersion::V_2026_07_28);
        // At 2026-07-28 over HTTP, a closed stream is how a client cancels,
        // and also what a timeout or a network blip looks like: the ask
        // stays open, for get_answer. Elsewhere a cancel is explicit.
        let hangup = if rounds && context.extensions.get::<Parts>().is_some() {
            Hangup::LeavesTheAskOpen
        } else {
            Hangup::CancelsTheAsk
        };
        if request.name == tools::ASK_USER && tasks {
            let dialog = self.client_dialog(&context);
            let can = dialog.forms || dialog.page.is_some();
            let arguments = request.arguments.unwrap_or_default();
            return Ok(self.ask_user_task(arguments, can).await);
        }
        if request.name == tools::ASK_USER && rounds {
            let round = Round {
                dialog: self.client_dialog(&context),
                name: client_name(&context),
                hangup,
            };
            return self
                .ask_user_rounds(request, round, progress, context.ct.cancelled())
                .await;
        }
        // Before 2026-07-28 the server asks the host itself.
        let host = HostDialog::of(&context.peer)
            .filter(|_| !rounds)
            .map(|host| host.with_page(self.page(&context)))
            .filter(HostDialog::can_show);
        self.call_tool_with(
            &request.name,
            request.arguments.unwrap_or_default(),
            host,
            progress,
            context.ct.cancelled(),
            hangup,
        )
        .await
        .map(CallToolResponse::from)
    }
}

#[cfg(test)]
mod tests;

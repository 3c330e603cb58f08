//! Coding agents' hooks: the ask a host's hook event becomes, and the
//! decision the ask's outcome gives back.
//!
//! Claude Code and Codex run a hook program when a tool call needs a
//! person's word (`PermissionRequest`) or before any tool call
//! (`PreToolUse`), with the event as JSON on standard input; what the
//! program prints decides. [`HookEvent::parse`] reads the event,
//! [`HookEvent::ask`] writes the ask (the native JSON dialect) and
//! [`HookEvent::decision`] reads the ask's outcome (as `GET /v1/asks/{id}`
//! returns it) into the host's decision JSON; [`MovedOn`] reads a later
//! event of the session for the asks it shows stale. Silence is never
//! consent: every outcome that is not the person's explicit choice — a
//! timeout, a cancellation, a Skip on a tool call — gives `None`, and the
//! host asks in its terminal.
//!
//! A tool call or a plan is the ask's context block, whole; a chat shows
//! it split over messages (past a few, its head and tail with a line
//! saying how much is not shown between) and with values that look like
//! credentials masked. A call some chat would cut says so on its question.

pub use crate::render::mask_credentials;
use serde_json::{Map, Value, json};

/// A coding agent whose hooks askbridge answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Host {
    ClaudeCode,
    Codex,
    Copilot,
    Cursor,
}

impl Host {
    /// Every host, in the order the docs list them.
    pub const ALL: [Host; 4] = [Host::ClaudeCode, Host::Codex, Host::Copilot, Host::Cursor];

    /// The host named on the command line (`claude-code`, `codex`).
    pub fn parse(id: &str) -> Option<Host> {
        Host::ALL.into_iter().find(|host| host.id() == id)
    }

    /// Its command-line name.
    pub fn id(self) -> &'static str {
        match self {
            Host::ClaudeCode => "claude-code",
            Host::Codex => "codex",
            Host::Copilot => "copilot",
            Host::Cursor => "cursor",
        }
    }

    /// Its name for people.
    pub fn name(self) -> &'static str {
        match self {
            Host::ClaudeCode => "Claude Code",
            Host::Codex => "Codex",
            Host::Copilot => "Copilot CLI",
            Host::Cursor => "Cursor",
        }
    }

    /// What the hook prints when the person made no decision, so the
    /// host asks in its terminal: Cursor's explicit `{"permission":
    /// "ask"}` (installed with `failClosed`, printing nothing would block
    /// the call); nothing for the others, which ask when a hook prints
    /// nothing (Copilot CLI's `permissionRequest` too: only an `allow` or
    /// `deny` there cuts its own permission flow short).
    pub fn undecided(self) -> Option<Value> {
        match self {
            Host::Cursor => Some(json!({"permission": "ask"})),
            Host::ClaudeCode | Host::Codex | Host::Copilot => None,
        }
    }

    /// Whether a decision may change the call (`updatedInput`,
    /// `updatedPermissions`): reserved in Codex's schema.
    fn edits_calls(self) -> bool {
        matches!(self, Host::ClaudeCode)
    }
}

/// Which hook fired.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HookKind {
    /// The host would prompt for this call.
    PermissionRequest,
    /// Any tool call, before it runs.
    PreToolUse,
    /// An MCP server asks the host for a form (Claude Code).
    Elicitation,
    /// Cursor's `beforeShellExecution`, `beforeMCPExecution` and
    /// `preToolUse`: answered with a `permission`.
    BeforeExecution,
}

impl HookKind {
    fn name(self) -> &'static str {
        match self {
            HookKind::PermissionRequest => "PermissionRequest",
            HookKind::PreToolUse => "PreToolUse",
            HookKind::Elicitation => "Elicitation",
            HookKind::BeforeExecution => "BeforeExecution",
        }
    }
}

/// What a hook event asks the person.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Request {
    /// Whether a tool call may run.
    Tool,
    /// The agent's own questions (Claude Code's `AskUserQuestion`).
    Questions,
    /// Whether a plan is approved (Claude Code's `ExitPlanMode`).
    Plan,
    /// An MCP server's form (`Elicitation`): one question per field.
    Form,
}

/// A hook event that could not be read; the hook decides nothing.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HookError {
    #[error("the hook event is not JSON: {0}")]
    NotJson(String),
    #[error("the hook event is not a JSON object")]
    NotObject,
    #[error("the hook event has no `{0}`")]
    Missing(&'static str),
    #[error("the hook event's `{field}` is not {expected}")]
    WrongType {
        field: &'static str,
        expected: &'static str,
    },
    #[error(
        "`{0}` is not a hook event askbridge answers (PermissionRequest, PreToolUse and Elicitation are)"
    )]
    Unsupported(String),
}

/// One hook event: a tool call waiting for a decision.
#[derive(Debug, Clone, PartialEq)]
pub struct HookEvent {
    pub host: Host,
    pub kind: HookKind,
    /// The agent session.
    pub session_id: String,
    /// The project directory.
    pub cwd: String,
    pub tool_name: String,
    pub tool_input: Map<String, Value>,
    /// Set for a subagent's call.
    pub agent_id: Option<String>,
    /// What tells two identical calls apart: the call's id, else the
    /// prompt's (Claude Code) or the turn's (Codex).
    call: Option<String>,
    /// The `permission_suggestions` that last for the session: what
    /// "Allow for this session" grants.
    session_permissions: Vec<Value>,
}

/// A later event of a session, and what it says of the session's asks
/// still pending: the host does not tell a hook that the person answered
/// in its terminal, but what it does next shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MovedOn {
    /// The agent session.
    pub session_id: String,
    /// The call that ran or failed ([`HookEvent::call_key`]): decided, so
    /// its ask is stale. `None`: the turn is over (a new prompt, or the
    /// agent stopped), so every ask of the agent is.
    pub call: Option<String>,
    /// The subagent whose event it is (`agent_id`); `None`: the session's
    /// main agent. Only that agent's asks are stale: the main agent's
    /// `Stop` says nothing of a subagent still running.
    pub agent_id: Option<String>,
}

impl MovedOn {
    /// `PostToolUse` and `PostToolUseFailure` (that call was decided),
    /// `UserPromptSubmit` and `Stop` (the turn is over); `None` for any
    /// other event, or one without a session.
    pub fn parse(input: &str) -> Option<MovedOn> {
        let Value::Object(map) = serde_json::from_str::<Value>(input).ok()? else {
            return None;
        };
        let session_id = optional_string(&map, "session_id")?;
        let call = match map.get("hook_event_name")?.as_str()? {
            "PostToolUse" | "PostToolUseFailure" => Some(call_key(
                map.get("tool_name")?.as_str()?,
                map.get("tool_input").unwrap_or(&Value::Null),
            )),
            "UserPromptSubmit" | "Stop" => None,
            _ => return None,
        };
        let agent_id = optional_string(&map, "agent_id");
        Some(MovedOn {
            session_id,
            call,
            agent_id,
        })
    }
}

/// The agent finished its turn (`Stop`), for a hook that asks the person
/// what to do next (`--continue`): their reply becomes the agent's next
/// instruction.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finished {
    pub host: Host,
    /// The agent session.
    pub session_id: String,
    /// The project directory, when the event names it.
    pub cwd: String,
    /// The agent's last message, when the event carries it.
    pub last_message: Option<String>,
    /// The session's transcript (JSON lines), to read the last message
    /// from when the event does not carry it.
    pub transcript_path: Option<String>,
}

/// The id of the one question of a finished turn.
const NEXT_ID: &str = "next";

impl Finished {
    /// A `Stop` event; `None` for any other.
    pub fn parse(host: Host, input: &str) -> Option<Finished> {
        let Value::Object(map) = serde_json::from_str::<Value>(input).ok()? else {
            return None;
        };
        if map.get("hook_event_name")?.as_str()? != "Stop" {
            return None;
        }
        Some(Finished {
            host,
            session_id: optional_string(&map, "session_id")?,
            cwd: optional_string(&map, "cwd").unwrap_or_default(),
            last_message: optional_string(&map, "last_assistant_message")
                .filter(|text| !text.trim().is_empty()),
            transcript_path: optional_string(&map, "transcript_path"),
        })
    }

    /// The ask: the agent's last message as the context, one question
    /// for the next instruction; Skip lets the agent stop.
    pub fn ask(&self, last_message: Option<&str>, to: Option<&str>, timeout_seconds: u32) -> Value {
        let project = project_of(&self.cwd);
        let mut ask = json!({
            "title": format!("{} · {project}", self.host.name()),
            "questions": [{
                "id": NEXT_ID,
                "header": "Next",
                "type": "textarea",
                "question": format!(
                    "{} finished in {project}. Reply with what it should do next, or Skip to let it stop.",
                    self.host.name()
                ),
                "placeholder": "The next instruction",
            }],
            "timeoutSeconds": timeout_seconds,
            // The reply is the agent's next instruction: only its person
            // gives it.
            "approval": true,
        });
        self.in_session(&mut ask, last_message, to);
        ask
    }

    /// The notice when the agent finished and nothing waits for a reply
    /// (`--notify`): its last message as the block, in the session's
    /// thread.
    pub fn notice(&self, last_message: Option<&str>, to: Option<&str>) -> Value {
        let project = project_of(&self.cwd);
        let mut notice = json!({"text": format!("{} finished in {project}.", self.host.name())});
        self.in_session(&mut notice, last_message, to);
        notice
    }

    /// What the finished turn's ask and notice both carry: the session's
    /// thread, the last message as a markdown block, and where to post.
    fn in_session(&self, body: &mut Value, last_message: Option<&str>, to: Option<&str>) {
        body["thread"] = session_thread(self.host, &self.session_id, &self.cwd);
        if let Some(text) = last_message.filter(|text| !text.trim().is_empty()) {
            body["context"] = json!({"text": text, "language": "markdown"});
        }
        if let Some(to) = to {
            body["to"] = json!(to);
        }
    }

    /// `{"decision": "block", "reason": <the reply>}` once the person
    /// replied; `None` (the agent stops) otherwise.
    pub fn decision(&self, outcome: &Value) -> Option<Value> {
        if outcome["status"] != "answered" {
            return None;
        }
        let reply = outcome["answers"][NEXT_ID]
            .as_array()
            .and_then(|values| values.first())
            .and_then(Value::as_str)
            .filter(|text| !text.trim().is_empty())?;
        Some(json!({"decision": "block", "reason": reply}))
    }

    /// Whether `host` goes on from a `Stop` hook's `block` decision.
    pub fn continues(host: Host) -> bool {
        matches!(host, Host::ClaudeCode | Host::Codex)
    }
}

/// The thread every ask of one agent session is posted in, where the
/// platform has threads: its first message names the host, the project
/// and the session.
fn session_thread(host: Host, session_id: &str, cwd: &str) -> Value {
    let short: String = session_id.chars().take(8).collect();
    json!({
        "key": format!("{}:{session_id}", host.id()),
        "title": format!("{} · {} · session {short}", host.name(), project_of(cwd)),
    })
}

/// The last part of a project directory ("api-server").
fn project_of(cwd: &str) -> &str {
    cwd.trim_end_matches(['/', '\\'])
        .rsplit(['/', '\\'])
        .next()
        .filter(|name| !name.is_empty())
        .unwrap_or("?")
}

/// The text of the last assistant message in a Claude Code transcript
/// (JSON lines: `{"type": "assistant", "message": {"content": [{"type":
/// "text", "text": …}]}}`); `None` when there is none.
pub fn last_assistant_text(transcript: &str) -> Option<String> {
    transcript.lines().rev().find_map(|line| {
        let entry: Value = serde_json::from_str(line).ok()?;
        if entry["type"] != "assistant" {
            return None;
        }
        let text: Vec<&str> = entry["message"]["content"]
            .as_array()?
            .iter()
            .filter(|part| part["type"] == "text")
            .filter_map(|part| part["text"].as_str())
            .collect();
        let text = text.join("\n");
        (!text.trim().is_empty()).then_some(text)
    })
}

/// The same text for a call as its permission request and its result
/// name it: the tool and its input.
fn call_key(tool_name: &str, tool_input: &Value) -> String {
    json!([tool_name, tool_input]).to_string()
}

/// The option labels, matched exactly in the outcome.
const ALLOW: &str = "Allow";
const ALLOW_SESSION: &str = "Allow for this session";
const DENY: &str = "Deny";
const APPROVE: &str = "Approve";
const KEEP_PLANNING: &str = "Keep planning";

/// The id of the one question of a tool call or a plan.
const DECISION_ID: &str = "decision";

/// Added to a tool call's question when a chat would show the call cut to
/// its head and tail: nobody should allow a call they could not read whole.
const CUT_CALL: &str = " The call is too long to show whole in every chat: where it is cut, \
its middle is left out (the block says how much) — read it whole in the terminal before you allow it.";

/// askbridge's own MCP server name, as `hooks install` registers it.
const OWN_SERVER: &str = "askbridge";
/// askbridge's own tools: the question is already the ask.
const OWN_TOOLS: [&str; 2] = ["ask_user", "get_answer"];

impl HookEvent {
    /// Reads a hook event as `host` sends it on standard input.
    pub fn parse(host: Host, input: &str) -> Result<HookEvent, HookError> {
        let value: Value =
            serde_json::from_str(input).map_err(|error| HookError::NotJson(error.to_string()))?;
        let Value::Object(map) = value else {
            return Err(HookError::NotObject);
        };
        match host {
            Host::Cursor => return HookEvent::parse_cursor(&map),
            Host::Copilot => return HookEvent::parse_copilot(&map),
            Host::ClaudeCode | Host::Codex => {}
        }
        let kind = match string(&map, "hook_event_name")?.as_str() {
            "PermissionRequest" => HookKind::PermissionRequest,
            "PreToolUse" => HookKind::PreToolUse,
            "Elicitation" => HookKind::Elicitation,
            other => return Err(HookError::Unsupported(other.to_owned())),
        };
        if kind == HookKind::Elicitation {
            return HookEvent::parse_form(host, &map);
        }
        let tool_input = match map.get("tool_input") {
            None | Some(Value::Null) => Map::new(),
            Some(Value::Object(input)) => input.clone(),
            Some(_) => {
                return Err(HookError::WrongType {
                    field: "tool_input",
                    expected: "an object",
                });
            }
        };
        let session_permissions = match map.get("permission_suggestions") {
            Some(Value::Array(suggestions)) => suggestions
                .iter()
                .filter(|suggestion| suggestion["destination"] == "session")
                .cloned()
                .collect(),
            _ => Vec::new(),
        };
        let call = ["tool_use_id", "prompt_id", "turn_id"]
            .into_iter()
            .find_map(|key| optional_string(&map, key));
        Ok(HookEvent {
            host,
            kind,
            session_id: string(&map, "session_id")?,
            cwd: optional_string(&map, "cwd").unwrap_or_default(),
            tool_name: string(&map, "tool_name")?,
            tool_input,
            agent_id: optional_string(&map, "agent_id"),
            call,
            session_permissions,
        })
    }

    /// An `Elicitation` event: the server's name stands for the tool, its
    /// message and form for the input.
    fn parse_form(host: Host, map: &Map<String, Value>) -> Result<HookEvent, HookError> {
        let Some(Value::Object(_)) = map.get("requested_schema") else {
            return Err(HookError::Missing("requested_schema"));
        };
        let mut form = Map::new();
        for key in ["message", "requested_schema"] {
            form.insert(key.to_owned(), map.get(key).cloned().unwrap_or(Value::Null));
        }
        Ok(HookEvent {
            host,
            kind: HookKind::Elicitation,
            session_id: string(map, "session_id")?,
            cwd: optional_string(map, "cwd").unwrap_or_default(),
            tool_name: string(map, "mcp_server_name")?,
            tool_input: form,
            agent_id: optional_string(map, "agent_id"),
            call: optional_string(map, "prompt_id"),
            session_permissions: Vec::new(),
        })
    }

    /// A Copilot CLI event (its camelCase form): `toolArgs` is the call's
    /// arguments as JSON text. The payload need not name its event: a
    /// hook installed for `permissionRequest` gets no `hookEventName`.
    fn parse_copilot(map: &Map<String, Value>) -> Result<HookEvent, HookError> {
        let event = optional_string(map, "hookEventName")
            .or_else(|| optional_string(map, "hook_event_name"))
            .unwrap_or_else(|| "permissionRequest".to_owned());
        let kind = match event.as_str() {
            "permissionRequest" | "PermissionRequest" => HookKind::PermissionRequest,
            "preToolUse" | "PreToolUse" => HookKind::PreToolUse,
            other => return Err(HookError::Unsupported(other.to_owned())),
        };
        let tool_input = match map.get("toolArgs") {
            None | Some(Value::Null) => Map::new(),
            Some(Value::Object(input)) => input.clone(),
            Some(Value::String(text)) => match serde_json::from_str(text) {
                Ok(Value::Object(input)) => input,
                Ok(other) => Map::from_iter([("input".to_owned(), other)]),
                Err(_) => Map::from_iter([("input".to_owned(), json!(text))]),
            },
            Some(_) => {
                return Err(HookError::WrongType {
                    field: "toolArgs",
                    expected: "JSON text or an object",
                });
            }
        };
        Ok(HookEvent {
            host: Host::Copilot,
            kind,
            session_id: string(map, "sessionId")?,
            cwd: optional_string(map, "cwd").unwrap_or_default(),
            tool_name: string(map, "toolName")?,
            tool_input,
            agent_id: None,
            call: optional_string(map, "toolCallId"),
            session_permissions: Vec::new(),
        })
    }

    /// A Cursor event: a shell command, an MCP call or any tool call;
    /// the conversation stands for the session, the generation for the
    /// call's id.
    fn parse_cursor(map: &Map<String, Value>) -> Result<HookEvent, HookError> {
        let (tool_name, tool_input) = match string(map, "hook_event_name")?.as_str() {
            "beforeShellExecution" => {
                let command = string(map, "command")?;
                ("Shell".to_owned(), json!({"command": command}))
            }
            "beforeMCPExecution" | "preToolUse" => {
                // `tool_input` may come as JSON text.
                let input = match map.get("tool_input") {
                    Some(Value::String(text)) => {
                        serde_json::from_str(text).unwrap_or_else(|_| json!({"input": text}))
                    }
                    Some(Value::Object(input)) => Value::Object(input.clone()),
                    _ => json!({}),
                };
                (string(map, "tool_name")?, input)
            }
            other => return Err(HookError::Unsupported(other.to_owned())),
        };
        let cwd = optional_string(map, "cwd").or_else(|| {
            map.get("workspace_roots")?
                .as_array()?
                .first()?
                .as_str()
                .map(str::to_owned)
        });
        Ok(HookEvent {
            host: Host::Cursor,
            kind: HookKind::BeforeExecution,
            session_id: string(map, "conversation_id")?,
            cwd: cwd.unwrap_or_default(),
            tool_name,
            tool_input: match tool_input {
                Value::Object(input) => input,
                other => Map::from_iter([("input".to_owned(), other)]),
            },
            agent_id: None,
            call: optional_string(map, "generation_id"),
            session_permissions: Vec::new(),
        })
    }

    /// What the event asks the person.
    pub fn request(&self) -> Request {
        if self.kind == HookKind::Elicitation {
            return Request::Form;
        }
        match self.tool_name.as_str() {
            "AskUserQuestion"
                if self
                    .tool_input
                    .get("questions")
                    .is_some_and(Value::is_array) =>
            {
                Request::Questions
            }
            "ExitPlanMode" => Request::Plan,
            _ => Request::Tool,
        }
    }

    /// Whether the call is askbridge's own tool, allowed without asking:
    /// asking whether to ask would be a question about a question.
    pub fn is_own_tool(&self) -> bool {
        self.kind != HookKind::Elicitation
            && self
                .tool_name
                .strip_prefix("mcp__")
                .and_then(|rest| rest.split_once("__"))
                .is_some_and(|(server, tool)| server == OWN_SERVER && OWN_TOOLS.contains(&tool))
    }

    /// Whether the event is askbridge's own form (its `ask_user` shown in
    /// the host's dialog): the ask is already in the chat, so the hook
    /// leaves the dialog to the host.
    pub fn is_own_form(&self) -> bool {
        self.kind == HookKind::Elicitation && self.tool_name == OWN_SERVER
    }

    /// The last part of the project directory ("api-server").
    pub fn project(&self) -> &str {
        project_of(&self.cwd)
    }

    /// The same for the same event, and different for another call: the
    /// host, the session, the call's (or prompt's, or turn's) id and the
    /// call itself. The caller hashes it into an idempotency key.
    pub fn identity(&self) -> String {
        json!([
            self.host.id(),
            self.kind.name(),
            self.session_id,
            self.call,
            self.tool_name,
            self.tool_input,
        ])
        .to_string()
    }

    /// The call as the host's later events name it ([`MovedOn::call`]).
    pub fn call_key(&self) -> String {
        call_key(&self.tool_name, &Value::Object(self.tool_input.clone()))
    }

    /// The ask, in the native JSON dialect, posted to `to` (the daemon's
    /// default when `None`) and open for `timeout_seconds`.
    pub fn ask(&self, to: Option<&str>, timeout_seconds: u32) -> Value {
        let subagent = if self.agent_id.is_some() {
            " (subagent)"
        } else {
            ""
        };
        let title = format!("{}{subagent} · {}", self.host.name(), self.project());
        let questions = match self.request() {
            Request::Tool => vec![self.tool_question()],
            Request::Questions => self.agent_questions(),
            Request::Plan => vec![self.plan_question()],
            Request::Form => self.form_questions(),
        };
        let mut ask = json!({
            "title": title,
            "questions": questions,
            "timeoutSeconds": timeout_seconds,
            "thread": session_thread(self.host, &self.session_id, &self.cwd),
            "approval": true,
        });
        if self.request() == Request::Form {
            let message = self.tool_input["message"].as_str().unwrap_or_default();
            ask["description"] = json!(mask_credentials(&format!(
                "The MCP server {} asks: {message}",
                self.tool_name
            )));
        } else if let Some(note) = self.terminal_note() {
            ask["description"] = json!(note);
        }
        if let Some(context) = self.context() {
            ask["context"] = context;
        }
        if let Some(to) = to {
            ask["to"] = json!(to);
        }
        ask
    }

    /// What the message says of the host's own prompt while it waits:
    /// Claude Code asks in its terminal at the same time (an answer there
    /// comes first), but not for a subagent running in the background.
    fn terminal_note(&self) -> Option<&'static str> {
        if self.host != Host::ClaudeCode || self.kind != HookKind::PermissionRequest {
            return None;
        }
        Some(if self.agent_id.is_some() {
            "A subagent asks: Claude Code shows no prompt in its terminal for it, so only an answer here decides."
        } else {
            "Claude Code asks in its terminal too: whichever answer comes first decides."
        })
    }

    /// What the person must see to decide, shown whole as a preformatted
    /// block (masked only in chats): the call, or the plan.
    fn context(&self) -> Option<Value> {
        let (text, language) = match self.request() {
            Request::Tool => (self.shown_call(), None),
            Request::Plan => (
                self.tool_input
                    .get("plan")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_owned(),
                Some("markdown"),
            ),
            Request::Questions | Request::Form => return None,
        };
        if text.trim().is_empty() {
            return None;
        }
        Some(match language {
            Some(language) => json!({"text": text, "language": language}),
            None => json!(text),
        })
    }

    fn tool_question(&self) -> Value {
        let mut question = format!("Allow {} in {}?", self.tool_label(), self.project());
        if !crate::render::shown_whole_in_every_chat(&self.shown_call()) {
            question.push_str(CUT_CALL);
        }
        let mut options = vec![json!({"label": ALLOW})];
        if self.host.edits_calls() && !self.session_permissions.is_empty() {
            options.push(json!({"label": ALLOW_SESSION, "description": session_grant(&self.session_permissions)}));
        }
        options.push(json!({"label": DENY}));
        json!({
            "id": DECISION_ID,
            "header": header(&self.tool_name),
            "type": "single",
            "question": question,
            "options": options,
        })
    }

    /// The tool as people know it: `Bash`, or `server: tool` for MCP.
    fn tool_label(&self) -> String {
        match mcp_tool(&self.tool_name) {
            Some((server, tool)) => format!("{tool} (MCP server {server})"),
            None => self.tool_name.clone(),
        }
    }

    /// The call itself, whole: the command, the file and the edit, the
    /// address; any other tool's input as JSON.
    fn shown_call(&self) -> String {
        let input = &self.tool_input;
        let text = |key: &str| input.get(key).and_then(Value::as_str);
        let mut lines = Vec::new();
        match self.tool_name.as_str() {
            "Bash" | "Shell" | "exec_command" | "shell" | "bash" | "powershell" => {
                let command = match input.get("command").or_else(|| input.get("cmd")) {
                    Some(Value::String(command)) => command.clone(),
                    Some(Value::Array(words)) => words
                        .iter()
                        .map(|word| {
                            word.as_str()
                                .map_or_else(|| word.to_string(), str::to_owned)
                        })
                        .collect::<Vec<_>>()
                        .join(" "),
                    Some(other) => other.to_string(),
                    None => String::new(),
                };
                lines.push(format!("$ {command}"));
                if let Some(why) = text("description").or_else(|| text("justification")) {
                    lines.push(String::new());
                    lines.push(why.to_owned());
                }
            }
            "Edit" => {
                lines.extend(text("file_path").map(str::to_owned));
                diff(&mut lines, text("old_string"), text("new_string"));
                if input.get("replace_all") == Some(&Value::Bool(true)) {
                    lines.push("(every occurrence)".to_owned());
                }
            }
            "MultiEdit" => {
                lines.extend(text("file_path").map(str::to_owned));
                for edit in input
                    .get("edits")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                {
                    diff(
                        &mut lines,
                        edit["old_string"].as_str(),
                        edit["new_string"].as_str(),
                    );
                }
            }
            "Write" => {
                lines.extend(text("file_path").map(str::to_owned));
                lines.extend(text("content").map(str::to_owned));
            }
            "WebFetch" => {
                lines.extend(text("url").map(str::to_owned));
                lines.extend(text("prompt").map(str::to_owned));
            }
            "WebSearch" => lines.extend(text("query").map(str::to_owned)),
            _ => lines.push(
                serde_json::to_string_pretty(&Value::Object(input.clone())).unwrap_or_default(),
            ),
        }
        lines.join("\n")
    }

    fn agent_questions(&self) -> Vec<Value> {
        let asked = self.tool_input["questions"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        asked
            .iter()
            .enumerate()
            .map(|(n, asked)| {
                let options: Vec<Value> = asked["options"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .map(|option| {
                        let mut shown = json!({"label": option["label"]});
                        if let Some(description) = option["description"].as_str() {
                            shown["description"] = json!(description);
                        }
                        shown
                    })
                    .collect();
                let multi = asked["multiSelect"].as_bool().unwrap_or(false);
                let mut question = json!({
                    "id": question_id(n),
                    "type": if multi { "multi" } else { "single" },
                    "question": asked["question"],
                    "options": options,
                });
                if let Some(header) = asked["header"].as_str() {
                    question["header"] = json!(header);
                }
                question
            })
            .collect()
    }

    /// One question per field of the server's form: a choice for an
    /// `enum` / `oneOf` (its values given back), several for an array of
    /// them, yes / no for a boolean, text for the rest.
    fn form_questions(&self) -> Vec<Value> {
        let schema = &self.tool_input["requested_schema"];
        let required: Vec<&str> = schema["required"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .collect();
        let fields = schema["properties"].as_object().into_iter().flatten();
        fields
            .map(|(name, field)| {
                let title = field["title"].as_str().unwrap_or(name);
                let mut question = json!({
                    "id": name,
                    "question": title,
                    "required": required.contains(&name.as_str()),
                });
                if let Some(description) = field["description"].as_str() {
                    question["description"] = json!(description);
                }
                let (kind, options) = match field["type"].as_str() {
                    Some("boolean") => ("confirm", None),
                    Some("array") => ("multi", choices(&field["items"])),
                    _ => match choices(field) {
                        Some(options) => ("single", Some(options)),
                        None => ("text", None),
                    },
                };
                question["type"] = json!(kind);
                if let Some(options) = options {
                    question["options"] = Value::Array(options);
                }
                question
            })
            .collect()
    }

    /// The form's content from the outcome; `None` when an answer does not
    /// fit its field (own words for a choice, a number that is none).
    fn form_content(&self, outcome: &Value) -> Option<Map<String, Value>> {
        let schema = &self.tool_input["requested_schema"];
        let details = outcome["details"].as_array()?;
        let mut content = Map::new();
        for (name, field) in schema["properties"].as_object()? {
            let Some(detail) = details.iter().find(|detail| detail["id"] == name.as_str()) else {
                continue;
            };
            if detail["skipped"] == true {
                continue;
            }
            let values: Vec<&str> = detail["values"]
                .as_array()?
                .iter()
                .filter_map(Value::as_str)
                .collect();
            let chose = !detail["other"].is_string();
            let value = match field["type"].as_str() {
                Some("boolean") => match (chose, values.first().copied()) {
                    (true, Some("yes")) => json!(true),
                    (true, Some("no")) => json!(false),
                    _ => return None,
                },
                Some("array") if chose => json!(values),
                Some("array") => return None,
                Some("integer") => json!(values.first()?.trim().parse::<i64>().ok()?),
                Some("number") => json!(values.first()?.trim().parse::<f64>().ok()?),
                _ if !chose && choices(field).is_some() => return None,
                _ => json!(detail["other"].as_str().or(values.first().copied())?),
            };
            content.insert(name.clone(), value);
        }
        Some(content)
    }

    fn plan_question(&self) -> Value {
        json!({
            "id": DECISION_ID,
            "header": "Plan",
            "type": "single",
            "question": format!("Approve this plan for {}?", self.project()),
            "options": [{"label": APPROVE}, {"label": KEEP_PLANNING}],
        })
    }

    /// The host's decision from the ask's outcome (the JSON
    /// `GET /v1/asks/{id}` returns once it ended); `None` when the person
    /// made no choice, so the host asks in its terminal.
    pub fn decision(&self, outcome: &Value) -> Option<Value> {
        if self.request() == Request::Form {
            let output = match (outcome["status"].as_str()?, outcome["reason"].as_str()) {
                ("answered", _) => json!({
                    "hookEventName": "Elicitation",
                    "action": "accept",
                    "content": self.form_content(outcome)?,
                }),
                ("no_answer", Some("skipped")) => {
                    json!({"hookEventName": "Elicitation", "action": "decline"})
                }
                _ => return None,
            };
            return Some(json!({"hookSpecificOutput": output}));
        }
        let verdict = match outcome["status"].as_str()? {
            "answered" => self.verdict(outcome)?,
            "no_answer"
                if outcome["reason"] == "skipped" && self.request() == Request::Questions =>
            {
                Verdict::Deny(format!(
                    "{} chose not to answer these questions; go on without their answers.",
                    who(outcome)
                ))
            }
            _ => return None,
        };
        Some(self.render(verdict, outcome))
    }

    /// Whether the outcome refuses the call (a tool call or a plan
    /// denied in the chat): the call running afterwards shows the host
    /// had decided in its own prompt first, and the answer came too late.
    pub fn refuses_call(&self, outcome: &Value) -> bool {
        matches!(self.request(), Request::Tool | Request::Plan)
            && outcome["status"] == "answered"
            && matches!(self.verdict(outcome), Some(Verdict::Deny(_)))
    }

    fn verdict(&self, outcome: &Value) -> Option<Verdict> {
        if self.request() == Request::Questions {
            if !self.host.edits_calls() {
                return None;
            }
            let mut answers = Map::new();
            let asked = self.tool_input["questions"].as_array()?;
            for (n, asked) in asked.iter().enumerate() {
                let given = outcome["answers"][question_id(n)].as_array();
                let Some(given) = given.filter(|given| !given.is_empty()) else {
                    continue;
                };
                let words: Vec<&str> = given.iter().filter_map(Value::as_str).collect();
                answers.insert(
                    asked["question"].as_str()?.to_owned(),
                    json!(words.join(", ")),
                );
            }
            let mut input = self.tool_input.clone();
            input.insert("answers".to_owned(), Value::Object(answers));
            return Some(Verdict::Allow {
                input: Some(input),
                permissions: None,
            });
        }
        let detail = outcome["details"]
            .as_array()?
            .iter()
            .find(|detail| detail["id"] == DECISION_ID)?;
        if let Some(words) = detail["other"]
            .as_str()
            .filter(|words| !words.trim().is_empty())
        {
            return Some(Verdict::Deny(words.trim().to_owned()));
        }
        let allow = |permissions| Verdict::Allow {
            input: None,
            permissions,
        };
        Some(match detail["selected"].get(0)?.as_str()? {
            ALLOW | APPROVE => allow(None),
            ALLOW_SESSION => allow(Some(self.session_permissions.clone())),
            DENY => Verdict::Deny(format!("{} denied this.", who(outcome))),
            KEEP_PLANNING => Verdict::Deny(format!(
                "{} did not approve the plan yet: keep planning.",
                who(outcome)
            )),
            _ => return None,
        })
    }

    fn render(&self, verdict: Verdict, outcome: &Value) -> Value {
        let edits = self.host.edits_calls();
        let output = match (self.kind, verdict) {
            (HookKind::PermissionRequest, Verdict::Allow { input, permissions }) => {
                let mut decision = json!({"behavior": "allow"});
                if edits {
                    if let Some(input) = input {
                        decision["updatedInput"] = Value::Object(input);
                    }
                    if let Some(permissions) = permissions {
                        decision["updatedPermissions"] = Value::Array(permissions);
                    }
                }
                json!({"hookEventName": "PermissionRequest", "decision": decision})
            }
            (HookKind::PermissionRequest, Verdict::Deny(message)) => json!({
                "hookEventName": "PermissionRequest",
                "decision": {"behavior": "deny", "message": message},
            }),
            (HookKind::PreToolUse, Verdict::Allow { input, .. }) => {
                let mut output = json!({
                    "hookEventName": "PreToolUse",
                    "permissionDecision": "allow",
                    "permissionDecisionReason": format!("{} allowed this.", who(outcome)),
                });
                if edits && let Some(input) = input {
                    output["updatedInput"] = Value::Object(input);
                }
                output
            }
            (HookKind::PreToolUse, Verdict::Deny(message)) => json!({
                "hookEventName": "PreToolUse",
                "permissionDecision": "deny",
                "permissionDecisionReason": message,
            }),
            // A form's own answer is made in `decision`; a verdict on one
            // is accepting it empty or declining it.
            (HookKind::Elicitation, Verdict::Allow { .. }) => {
                json!({"hookEventName": "Elicitation", "action": "accept", "content": {}})
            }
            (HookKind::Elicitation, Verdict::Deny(_)) => {
                json!({"hookEventName": "Elicitation", "action": "decline"})
            }
            // Cursor: the answer itself, not wrapped.
            (HookKind::BeforeExecution, Verdict::Allow { .. }) => json!({"permission": "allow"}),
            (HookKind::BeforeExecution, Verdict::Deny(message)) => json!({
                "permission": "deny",
                "user_message": format!("Denied from the chat: {message}"),
                "agent_message": message,
            }),
        };
        if self.kind == HookKind::BeforeExecution {
            return output;
        }
        if self.host == Host::Copilot {
            // Copilot CLI: the decision itself, not wrapped.
            let mut output = match output.get("decision") {
                Some(decision) => decision.clone(),
                None => output,
            };
            if let Some(output) = output.as_object_mut() {
                output.remove("hookEventName");
            }
            return output;
        }
        json!({"hookSpecificOutput": output})
    }

    /// The decision for askbridge's own tools ([`HookEvent::is_own_tool`]).
    pub fn allow_own_tool(&self) -> Value {
        let verdict = Verdict::Allow {
            input: None,
            permissions: None,
        };
        self.render(verdict, &json!({"answeredBy": {"name": "askbridge"}}))
    }
}

/// What the person decided.
#[derive(Debug)]
enum Verdict {
    /// Run it (with these arguments, and these permissions for the
    /// session, where given).
    Allow {
        input: Option<Map<String, Value>>,
        permissions: Option<Vec<Value>>,
    },
    /// Do not run it; tell the agent this.
    Deny(String),
}

/// The options of a form field with an `enum` (labelled by `enumNames`
/// where given) or a `oneOf` / `anyOf` of `{const, title}`: each value
/// given back as the option's `value`.
fn choices(field: &Value) -> Option<Vec<Value>> {
    let text = |value: &Value| {
        value
            .as_str()
            .map_or_else(|| value.to_string(), str::to_owned)
    };
    if let Some(values) = field["enum"].as_array() {
        let names = field["enumNames"].as_array();
        let options = values.iter().enumerate().map(|(n, value)| {
            let value = text(value);
            let label = names
                .and_then(|names| names.get(n))
                .and_then(Value::as_str)
                .unwrap_or(&value);
            json!({"label": label, "value": value})
        });
        return Some(options.collect());
    }
    let listed = field["oneOf"]
        .as_array()
        .or_else(|| field["anyOf"].as_array())?;
    let options = listed.iter().map(|choice| {
        let value = text(&choice["const"]);
        let label = choice["title"].as_str().unwrap_or(&value);
        json!({"label": label, "value": value})
    });
    Some(options.collect())
}

/// The id of the agent's `n`th question (from 0) in the ask.
fn question_id(n: usize) -> String {
    format!("q{}", n + 1)
}

/// Who ended the ask, for the agent: "Alice (telegram)", or "The person".
fn who(outcome: &Value) -> String {
    let by = &outcome["answeredBy"];
    match (by["name"].as_str(), by["channel"].as_str()) {
        (Some(name), Some(channel)) => format!("{name} (in {channel})"),
        (Some(name), None) => name.to_owned(),
        (None, Some(channel)) => format!("The person in {channel}"),
        (None, None) => "The person".to_owned(),
    }
}

/// What "Allow for this session" grants, as the host offered it (its
/// `permission_suggestions` for the session): "For the rest of this
/// session: allow Bash(npm test:*)". Masked, as the chat shows it.
fn session_grant(permissions: &[Value]) -> String {
    let rule = |rule: &Value| {
        let tool = rule["toolName"].as_str().unwrap_or("?");
        match rule["ruleContent"].as_str() {
            Some(content) => format!("{tool}({content})"),
            None => tool.to_owned(),
        }
    };
    let grants: Vec<String> = permissions
        .iter()
        .map(|permission| {
            let list = |key: &str, each: &dyn Fn(&Value) -> String| {
                permission[key]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .map(each)
                    .collect::<Vec<_>>()
                    .join(", ")
            };
            let text = |value: &Value| {
                value
                    .as_str()
                    .map_or_else(|| value.to_string(), str::to_owned)
            };
            let behavior = permission["behavior"].as_str().unwrap_or("allow");
            match permission["type"].as_str() {
                Some("addRules" | "replaceRules") => format!("{behavior} {}", list("rules", &rule)),
                Some("removeRules") => format!("no longer {behavior} {}", list("rules", &rule)),
                Some("addDirectories") => format!("work in {}", list("directories", &text)),
                Some("removeDirectories") => {
                    format!("no longer work in {}", list("directories", &text))
                }
                Some("setMode") => format!("switch to {} mode", text(&permission["mode"])),
                _ => permission.to_string(),
            }
        })
        .collect();
    mask_credentials(&format!(
        "For the rest of this session: {}",
        grants.join("; ")
    ))
}

/// `(server, tool)` of an MCP tool name (`mcp__server__tool`).
fn mcp_tool(name: &str) -> Option<(&str, &str)> {
    name.strip_prefix("mcp__")?.split_once("__")
}

/// A short chip for the tool: the MCP tool's own name, else the tool's.
fn header(tool: &str) -> String {
    mcp_tool(tool).map_or(tool, |(_, tool)| tool).to_owned()
}

/// An edit as `- old` / `+ new` lines.
fn diff(lines: &mut Vec<String>, old: Option<&str>, new: Option<&str>) {
    lines.extend(
        old.into_iter()
            .flat_map(str::lines)
            .map(|line| format!("- {line}")),
    );
    lines.extend(
        new.into_iter()
            .flat_map(str::lines)
            .map(|line| format!("+ {line}")),
    );
}

fn string(map: &Map<String, Value>, key: &'static str) -> Result<String, HookError> {
    match map.get(key) {
        None | Some(Value::Null) => Err(HookError::Missing(key)),
        Some(Value::String(text)) => Ok(text.clone()),
        Some(_) => Err(HookError::WrongType {
            field: key,
            expected: "a string",
        }),
    }
}

fn optional_string(map: &Map<String, Value>, key: &str) -> Option<String> {
    map.get(key).and_then(Value::as_str).map(str::to_owned)
}

//! The fake workspace: users, channels, messages, interactions, views,
//! and the Web API methods that read and change them, with Slack's rules
//! and error strings.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::time::{Duration, Instant};

use serde_json::{Map, Value, json};

use super::model::{
    Call, Channel, ChannelKind, EnvelopeKind, Ephemeral, EphemeralSource, InteractionKind,
    InteractionRecord, OpenedView, Revision, StoredMessage, User,
};
use super::rate::{Limiter, RateLimits};
use super::sign::RequestSigner;
use super::socket::{Redelivery, SocketState};
use super::util::{
    Clock, bool_param, char_len, format_ts, json_param, pairs_to_json, pseudo_hex, str_field,
    unix_secs,
};
use super::validate::{check_blocks, check_view};
use super::{
    APP_ID, APP_SCOPES, BOT_ID, BOT_NAME, BOT_USER_ID, MAX_TEXT, TEAM_DOMAIN, TEAM_ID, TEAM_NAME,
    VERIFICATION_TOKEN,
};

/// Uses of one response URL (Slack allows five within 30 minutes).
const RESPONSE_URL_USES: usize = 5;
/// How long a response URL works.
const RESPONSE_URL_LIFETIME: Duration = Duration::from_secs(30 * 60);

/// Settings fixed at start (some changeable by test controls).
#[derive(Debug, Clone)]
pub(crate) struct Config {
    pub(crate) bot_token: String,
    pub(crate) app_token: String,
    /// Listed in `x-oauth-scopes` on answers to the bot token.
    pub(crate) bot_scopes: Vec<String>,
    pub(crate) signer: RequestSigner,
    pub(crate) rate_limits: RateLimits,
    pub(crate) trigger_window: Duration,
    pub(crate) echo_bot_messages: bool,
    /// `http://127.0.0.1:PORT`.
    pub(crate) base_url: String,
    /// `ws://127.0.0.1:PORT`.
    pub(crate) ws_base: String,
}

/// A Web API request, parsed.
#[derive(Debug)]
pub(crate) struct ApiRequest {
    pub(crate) http_method: String,
    pub(crate) method: String,
    pub(crate) authorization: Option<String>,
    /// Query, form or JSON parameters as one JSON object.
    pub(crate) params: Value,
}

/// An answer: status, JSON body, extra headers.
#[derive(Debug, Clone)]
pub(crate) struct Reply {
    pub(crate) status: u16,
    pub(crate) body: Value,
    pub(crate) headers: Vec<(&'static str, String)>,
}

impl Reply {
    fn ok(mut body: Value) -> Reply {
        if let Value::Object(object) = &mut body {
            let mut with_ok = Map::new();
            with_ok.insert("ok".into(), json!(true));
            with_ok.extend(std::mem::take(object));
            *object = with_ok;
        }
        Reply {
            status: 200,
            body,
            headers: Vec::new(),
        }
    }

    /// `{"ok": false, "error": …}` with HTTP 200, as Slack answers errors.
    fn error(error: &str) -> Reply {
        Reply {
            status: 200,
            body: json!({ "ok": false, "error": error }),
            headers: Vec::new(),
        }
    }

    /// An error with Slack's `errors` list and `response_metadata.messages`
    /// (`"[ERROR] …"`), as for `invalid_blocks` and `invalid_arguments`.
    fn error_with(error: &str, errors: &[String]) -> Reply {
        let messages: Vec<String> = errors.iter().map(|e| format!("[ERROR] {e}")).collect();
        Reply {
            status: 200,
            body: json!({
                "ok": false,
                "error": error,
                "errors": errors,
                "response_metadata": { "messages": messages },
            }),
            headers: Vec::new(),
        }
    }

    pub(crate) fn not_found() -> Reply {
        Reply {
            status: 404,
            body: json!({ "ok": false, "error": "unknown_method" }),
            headers: Vec::new(),
        }
    }

    fn ok_flag(&self) -> bool {
        self.body
            .get("ok")
            .and_then(Value::as_bool)
            .unwrap_or(false)
    }
}

#[derive(Debug, Clone)]
struct Trigger {
    user: String,
    created: Instant,
    used: bool,
    expired: bool,
}

#[derive(Debug, Clone)]
struct Hook {
    interaction: u64,
    secret: String,
    created: Instant,
    uses: usize,
}

/// Which token authorised a call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum TokenKind {
    Bot,
    App,
}

/// A slash command just run: its interaction id, the form fields Slack
/// sends (in order), and its envelope if it went over Socket Mode.
#[derive(Debug, Clone)]
pub(crate) struct RanCommand {
    pub(crate) id: u64,
    pub(crate) fields: Vec<(String, String)>,
    pub(crate) envelope_id: Option<String>,
}

/// What a user does to a message element.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Act<'a> {
    /// Presses the button.
    Press,
    /// Chooses these option values.
    Choose(&'a [&'a str]),
}

/// The fake's whole state, readable in [`FakeSlack::inspect`](super::FakeSlack::inspect)
/// and `wait_for` conditions.
#[derive(Debug)]
pub struct State {
    pub(crate) config: Config,
    pub(crate) socket: SocketState,
    pub(crate) closed: bool,
    calls: Vec<Call>,
    users: BTreeMap<String, User>,
    channels: BTreeMap<String, Channel>,
    dms: HashMap<String, String>,
    groups: HashMap<Vec<String>, String>,
    messages: Vec<StoredMessage>,
    ephemerals: Vec<Ephemeral>,
    interactions: Vec<InteractionRecord>,
    triggers: HashMap<String, Trigger>,
    hooks: HashMap<String, Hook>,
    views: Vec<OpenedView>,
    /// The `slash_commands` envelopes acked already (only the first ack
    /// answers a command).
    answered_commands: HashSet<String>,
    /// What each user chose in each message's inputs (by user, channel,
    /// message ts): Slack sends it all as `state.values` with every
    /// action on that message.
    inputs: HashMap<(String, String, String), Map<String, Value>>,
    limiter: Limiter,
    clock: Clock,
    counter: u64,
    rate_limited: usize,
}

/// Reading.
impl State {
    /// Every call answered so far, in order.
    pub fn calls(&self) -> &[Call] {
        &self.calls
    }

    /// The calls of `method` (`"chat.postMessage"`, or `"response_url"`).
    pub fn calls_to(&self, method: &str) -> Vec<&Call> {
        self.calls
            .iter()
            .filter(|call| call.method == method)
            .collect()
    }

    /// A message by channel and `ts` (deleted ones too).
    pub fn message(&self, channel: &str, ts: &str) -> Option<&StoredMessage> {
        self.messages
            .iter()
            .find(|message| message.channel == channel && message.ts == ts)
    }

    /// The top-level messages of a channel, in order (not deleted, not
    /// thread replies).
    pub fn messages_in(&self, channel: &str) -> Vec<&StoredMessage> {
        self.messages
            .iter()
            .filter(|message| message.channel == channel && !message.deleted && !message.is_reply())
            .collect()
    }

    /// The replies in the thread of `parent_ts`, in order.
    pub fn thread_replies(&self, channel: &str, parent_ts: &str) -> Vec<&StoredMessage> {
        self.messages
            .iter()
            .filter(|message| {
                message.channel == channel
                    && !message.deleted
                    && message.is_reply()
                    && message.thread_ts.as_deref() == Some(parent_ts)
            })
            .collect()
    }

    /// Every message the bot made, in order (deleted ones too).
    pub fn bot_messages(&self) -> Vec<&StoredMessage> {
        self.messages
            .iter()
            .filter(|message| message.by_bot())
            .collect()
    }

    /// The ephemeral messages `user` was shown, in order.
    pub fn ephemerals_for(&self, user: &str) -> Vec<&Ephemeral> {
        self.ephemerals
            .iter()
            .filter(|ephemeral| ephemeral.user == user)
            .collect()
    }

    /// An interaction by id.
    pub fn interaction(&self, id: u64) -> Option<&InteractionRecord> {
        id.checked_sub(1)
            .and_then(|index| usize::try_from(index).ok())
            .and_then(|index| self.interactions.get(index))
    }

    /// Every interaction, in order.
    pub fn interactions(&self) -> &[InteractionRecord] {
        &self.interactions
    }

    /// The slash commands run, in order.
    pub fn commands(&self) -> Vec<&InteractionRecord> {
        self.interactions
            .iter()
            .filter(|record| matches!(record.kind, InteractionKind::SlashCommand { .. }))
            .collect()
    }

    /// The views opened, in order.
    pub fn views(&self) -> &[OpenedView] {
        &self.views
    }

    /// A view by id.
    pub fn view(&self, id: &str) -> Option<&OpenedView> {
        self.views.iter().find(|view| view.id == id)
    }

    /// Every Socket Mode envelope, in order.
    pub fn envelopes(&self) -> Vec<&super::model::EnvelopeRecord> {
        self.socket.records()
    }

    /// One envelope.
    pub fn envelope(&self, id: &str) -> Option<&super::model::EnvelopeRecord> {
        self.socket.record(id)
    }

    /// Socket Mode counters.
    pub fn socket_stats(&self) -> &super::model::SocketStats {
        &self.socket.stats
    }

    /// How many `429`s were answered.
    pub fn rate_limited_count(&self) -> usize {
        self.rate_limited
    }

    /// A channel by id.
    pub fn channel(&self, id: &str) -> Option<&Channel> {
        self.channels.get(id)
    }

    /// A user by id.
    pub fn user(&self, id: &str) -> Option<&User> {
        self.users.get(id)
    }

    /// The DM channel with `user`, if opened.
    pub fn dm_of(&self, user: &str) -> Option<&str> {
        self.dms.get(user).map(String::as_str)
    }

    /// The calls so far, one a line, for failure messages.
    pub fn describe_calls(&self) -> String {
        if self.calls.is_empty() {
            return "  (no calls)".to_owned();
        }
        self.calls
            .iter()
            .enumerate()
            .map(|(index, call)| {
                let mut params = call.params.to_string();
                if params.len() > 300 {
                    let mut cut = 300;
                    while !params.is_char_boundary(cut) {
                        cut -= 1;
                    }
                    params.truncate(cut);
                    params.push('…');
                }
                let outcome = match &call.error {
                    Some(error) => format!("{} {error}", call.status),
                    None => format!("{} ok", call.status),
                };
                format!("  #{index} {} -> {outcome} {params}", call.method)
            })
            .collect::<Vec<_>>()
            .join("\n")
    }
}

impl State {
    pub(crate) fn new(config: Config, rules: Redelivery) -> State {
        let mut users = BTreeMap::new();
        let bot = User::new(BOT_USER_ID, BOT_NAME).real_name(BOT_NAME).bot();
        users.insert(bot.id.clone(), bot);
        State {
            config,
            socket: SocketState::new(rules),
            closed: false,
            calls: Vec::new(),
            users,
            channels: BTreeMap::new(),
            dms: HashMap::new(),
            groups: HashMap::new(),
            messages: Vec::new(),
            ephemerals: Vec::new(),
            interactions: Vec::new(),
            triggers: HashMap::new(),
            hooks: HashMap::new(),
            views: Vec::new(),
            answered_commands: HashSet::new(),
            inputs: HashMap::new(),
            limiter: Limiter::default(),
            clock: Clock::default(),
            counter: 0,
            rate_limited: 0,
        }
    }

    fn next_n(&mut self) -> u64 {
        self.counter += 1;
        self.counter
    }

    /// An id like Slack's: a prefix letter and ten upper-case characters.
    fn new_id(&mut self, prefix: char) -> String {
        let n = self.next_n();
        format!("{prefix}0{}", pseudo_hex(n, 9).to_ascii_uppercase())
    }

    fn record(&mut self, request: &ApiRequest, reply: &Reply) {
        let mut params = request.params.clone();
        if let Value::Object(object) = &mut params {
            object.remove("token");
        }
        self.calls.push(Call {
            method: request.method.clone(),
            http_method: request.http_method.clone(),
            params,
            ok: reply.ok_flag(),
            error: str_field(&reply.body, "error").map(str::to_owned),
            status: reply.status,
            response: reply.body.clone(),
        });
    }

    fn token_kind(&self, request: &ApiRequest) -> Result<TokenKind, &'static str> {
        let token = request
            .authorization
            .as_deref()
            .and_then(|header| header.strip_prefix("Bearer "))
            .map(str::trim)
            .or_else(|| str_field(&request.params, "token"))
            .filter(|token| !token.is_empty());
        match token {
            None => Err("not_authed"),
            Some(token) if token == self.config.bot_token => Ok(TokenKind::Bot),
            Some(token) if token == self.config.app_token => Ok(TokenKind::App),
            Some(_) => Err("invalid_auth"),
        }
    }

    /// Answers a Web API call and records it.
    pub(crate) fn api(&mut self, request: ApiRequest, now: Instant) -> Reply {
        let mut reply = self.api_reply(&request, now);
        self.record(&request, &reply);
        // Slack lists the token's scopes on every answer to a method it
        // knows, called with a token it knows.
        if reply.status != 404
            && let Ok(kind) = self.token_kind(&request)
        {
            let scopes = match kind {
                TokenKind::Bot => self.config.bot_scopes.join(","),
                TokenKind::App => APP_SCOPES.join(","),
            };
            reply.headers.push(("x-oauth-scopes", scopes));
        }
        reply
    }

    fn api_reply(&mut self, request: &ApiRequest, now: Instant) -> Reply {
        const METHODS: &[&str] = &[
            "auth.test",
            "apps.connections.open",
            "chat.postMessage",
            "chat.update",
            "chat.postEphemeral",
            "views.open",
            "conversations.open",
            "users.info",
        ];
        if !METHODS.contains(&request.method.as_str()) {
            return Reply::not_found();
        }
        let kind = match self.token_kind(request) {
            Ok(kind) => kind,
            Err(error) => return Reply::error(error),
        };
        let wanted = if request.method == "apps.connections.open" {
            TokenKind::App
        } else {
            TokenKind::Bot
        };
        if kind != wanted {
            return Reply::error("not_allowed_token_type");
        }
        let channel = str_field(&request.params, "channel");
        if let Err(retry_after) =
            self.limiter
                .check(&self.config.rate_limits, &request.method, channel, now)
        {
            self.rate_limited += 1;
            let mut reply = Reply::error("ratelimited");
            reply.status = 429;
            reply.headers.push(("Retry-After", retry_after.to_string()));
            return reply;
        }
        let params = &request.params;
        match request.method.as_str() {
            "auth.test" => Reply::ok(json!({
                "url": format!("https://{TEAM_DOMAIN}.slack.com/"),
                "team": TEAM_NAME,
                "user": BOT_NAME,
                "team_id": TEAM_ID,
                "user_id": BOT_USER_ID,
                "bot_id": BOT_ID,
                "is_enterprise_install": false,
            })),
            "apps.connections.open" => {
                let ticket = self.socket.issue_ticket();
                Reply::ok(json!({
                    "url": format!("{}/socket?ticket={ticket}&app_id={APP_ID}", self.config.ws_base),
                }))
            }
            "chat.postMessage" => self.post_message(params),
            "chat.update" => self.update(params),
            "chat.postEphemeral" => self.post_ephemeral(params),
            "views.open" => self.views_open(params, now),
            "conversations.open" => self.conversations_open(params),
            "users.info" => match str_field(params, "user").and_then(|id| self.users.get(id)) {
                Some(user) => Reply::ok(json!({ "user": user.to_json() })),
                None => Reply::error("user_not_found"),
            },
            _ => Reply::not_found(),
        }
    }

    /// Resolves a `channel` parameter for posting: a channel id, or a user
    /// id (the app's DM with that user). Errors as Slack's.
    fn postable(&mut self, channel: Option<&str>) -> Result<String, &'static str> {
        let Some(channel) = channel.filter(|channel| !channel.is_empty()) else {
            return Err("channel_not_found");
        };
        let id = if self.channels.contains_key(channel) {
            channel.to_owned()
        } else if let Some(user) = self.users.get(channel).cloned() {
            self.dm_channel(&user)
        } else {
            return Err("channel_not_found");
        };
        let Some(found) = self.channels.get(&id) else {
            return Err("channel_not_found");
        };
        if found.archived {
            return Err("is_archived");
        }
        if !found.bot_member {
            return Err("not_in_channel");
        }
        Ok(id)
    }

    /// Checks `text` and `blocks`: `Ok((text, blocks))` or the error reply.
    fn content(
        &mut self,
        params: &Value,
        require: bool,
    ) -> Result<(Option<String>, Option<Value>), Reply> {
        let text = str_field(params, "text").map(str::to_owned);
        let blocks = match params.get("blocks") {
            None | Some(Value::Null) => None,
            Some(Value::String(text)) if text.is_empty() => None,
            Some(raw) => match json_param(raw) {
                Ok(blocks) => Some(blocks),
                Err(_) => return Err(Reply::error("invalid_blocks_format")),
            },
        };
        if let Some(blocks) = &blocks {
            if !blocks.is_array() {
                return Err(Reply::error("invalid_blocks_format"));
            }
            let errors = check_blocks(blocks, "/blocks", false);
            if !errors.is_empty() {
                return Err(Reply::error_with("invalid_blocks", &errors));
            }
        }
        let has_text = text.as_deref().is_some_and(|text| !text.trim().is_empty());
        let has_blocks = blocks
            .as_ref()
            .and_then(Value::as_array)
            .is_some_and(|blocks| !blocks.is_empty());
        let has_attachments = params
            .get("attachments")
            .is_some_and(|value| !value.is_null());
        if require && !has_text && !has_blocks && !has_attachments {
            return Err(Reply::error("no_text"));
        }
        if text
            .as_deref()
            .is_some_and(|text| char_len(text) > MAX_TEXT)
        {
            return Err(Reply::error("msg_too_long"));
        }
        let blocks = blocks.map(|blocks| self.fill_block_ids(blocks));
        Ok((text, blocks))
    }

    /// Slack gives every block without a `block_id` a short random one.
    fn fill_block_ids(&mut self, mut blocks: Value) -> Value {
        if let Value::Array(list) = &mut blocks {
            for block in list {
                if let Value::Object(object) = block
                    && !object.contains_key("block_id")
                {
                    let n = self.next_n();
                    let id: String = pseudo_hex(n + 0xb10c, 5)
                        .chars()
                        .enumerate()
                        .map(|(i, c)| {
                            if i % 2 == 0 {
                                c.to_ascii_uppercase()
                            } else {
                                c
                            }
                        })
                        .collect();
                    object.insert("block_id".into(), json!(id));
                }
            }
        }
        blocks
    }

    /// The message object as Slack renders it (in `chat.postMessage`
    /// answers and interaction payloads).
    pub(crate) fn message_json(message: &StoredMessage) -> Value {
        let mut object = Map::new();
        if let Some(user) = &message.user {
            object.insert("user".into(), json!(user));
        }
        object.insert("type".into(), json!("message"));
        object.insert("ts".into(), json!(message.ts));
        if let Some(bot_id) = &message.bot_id {
            object.insert("bot_id".into(), json!(bot_id));
            if bot_id == BOT_ID {
                object.insert("app_id".into(), json!(APP_ID));
                object.insert(
                    "bot_profile".into(),
                    json!({
                        "id": BOT_ID,
                        "deleted": false,
                        "name": BOT_NAME,
                        "updated": 1_700_000_000,
                        "app_id": APP_ID,
                        "user_id": BOT_USER_ID,
                        "icons": {
                            "image_36": "https://a.slack-edge.com/80588/img/plugins/app/bot_36.png",
                            "image_48": "https://a.slack-edge.com/80588/img/plugins/app/bot_48.png",
                            "image_72": "https://a.slack-edge.com/80588/img/plugins/app/service_72.png",
                        },
                        "team_id": TEAM_ID,
                    }),
                );
            } else if message.user.is_none() {
                object.insert("subtype".into(), json!("bot_message"));
            }
        }
        object.insert("text".into(), json!(message.text));
        object.insert("team".into(), json!(TEAM_ID));
        if let Some(thread_ts) = &message.thread_ts {
            object.insert("thread_ts".into(), json!(thread_ts));
        }
        if !message.blocks.is_null() {
            object.insert("blocks".into(), message.blocks.clone());
        }
        if !message.history.is_empty() {
            object.insert(
                "edited".into(),
                json!({ "user": message.user.clone().unwrap_or_default(), "ts": message.ts }),
            );
        }
        Value::Object(object)
    }

    fn store_bot_message(
        &mut self,
        channel: &str,
        text: Option<String>,
        blocks: Option<Value>,
        thread_ts: Option<String>,
    ) -> StoredMessage {
        let ts = self.clock.next_ts();
        let message = StoredMessage {
            channel: channel.to_owned(),
            ts,
            thread_ts,
            user: Some(BOT_USER_ID.to_owned()),
            bot_id: Some(BOT_ID.to_owned()),
            text: text.unwrap_or_default(),
            blocks: blocks.unwrap_or(Value::Null),
            history: Vec::new(),
            deleted: false,
        };
        self.messages.push(message.clone());
        if self.config.echo_bot_messages {
            self.dispatch_message_event(&message);
        }
        message
    }

    fn post_message(&mut self, params: &Value) -> Reply {
        let channel = match self.postable(str_field(params, "channel")) {
            Ok(channel) => channel,
            Err(error) => return Reply::error(error),
        };
        let (text, blocks) = match self.content(params, true) {
            Ok(content) => content,
            Err(reply) => return reply,
        };
        let thread_ts = str_field(params, "thread_ts")
            .filter(|ts| !ts.is_empty())
            .map(str::to_owned);
        let message = self.store_bot_message(&channel, text, blocks, thread_ts);
        Reply::ok(json!({
            "channel": channel,
            "ts": message.ts,
            "message": State::message_json(&message),
        }))
    }

    fn update(&mut self, params: &Value) -> Reply {
        let Some(channel) =
            str_field(params, "channel").filter(|id| self.channels.contains_key(*id))
        else {
            return Reply::error("channel_not_found");
        };
        let channel = channel.to_owned();
        if self
            .channels
            .get(&channel)
            .is_some_and(|found| found.archived)
        {
            return Reply::error("is_archived");
        }
        let ts = str_field(params, "ts").unwrap_or_default().to_owned();
        let Some(index) = self
            .messages
            .iter()
            .position(|message| message.channel == channel && message.ts == ts && !message.deleted)
        else {
            return Reply::error("message_not_found");
        };
        if !self.messages[index].by_bot() {
            return Reply::error("cant_update_message");
        }
        let (text, blocks) = match self.content(params, false) {
            Ok(content) => content,
            Err(reply) => return reply,
        };
        let has_blocks = blocks
            .as_ref()
            .and_then(Value::as_array)
            .is_some_and(|list| !list.is_empty());
        let keeps_blocks = blocks.is_none() && !self.messages[index].blocks.is_null();
        if text.as_deref().is_none_or(|text| text.trim().is_empty()) && !has_blocks && !keeps_blocks
        {
            return Reply::error("no_text");
        }
        let message = &mut self.messages[index];
        message.history.push(Revision {
            text: message.text.clone(),
            blocks: message.blocks.clone(),
        });
        if let Some(text) = text {
            message.text = text;
        }
        if let Some(blocks) = blocks {
            message.blocks = if has_blocks { blocks } else { Value::Null };
        }
        let message = message.clone();
        let mut rendered = State::message_json(&message);
        if let Value::Object(object) = &mut rendered {
            object.remove("ts");
            object.remove("thread_ts");
        }
        Reply::ok(json!({
            "channel": channel,
            "ts": message.ts,
            "text": message.text,
            "message": rendered,
        }))
    }

    fn post_ephemeral(&mut self, params: &Value) -> Reply {
        let channel = match self.postable(str_field(params, "channel")) {
            Ok(channel) => channel,
            Err(error) => return Reply::error(error),
        };
        let Some(user) = str_field(params, "user").filter(|user| self.users.contains_key(*user))
        else {
            return Reply::error("user_not_found");
        };
        let user = user.to_owned();
        let (text, blocks) = match self.content(params, true) {
            Ok(content) => content,
            Err(reply) => return reply,
        };
        let ts = self.clock.next_ts();
        self.ephemerals.push(Ephemeral {
            channel,
            user,
            ts: ts.clone(),
            thread_ts: str_field(params, "thread_ts").map(str::to_owned),
            text: text.unwrap_or_default(),
            blocks: blocks.unwrap_or(Value::Null),
            source: EphemeralSource::PostEphemeral,
        });
        Reply::ok(json!({ "message_ts": ts }))
    }

    fn views_open(&mut self, params: &Value, now: Instant) -> Reply {
        let trigger_id = str_field(params, "trigger_id")
            .unwrap_or_default()
            .to_owned();
        let window = self.config.trigger_window;
        let Some(trigger) = self.triggers.get(&trigger_id).cloned() else {
            return Reply::error("invalid_trigger_id");
        };
        if trigger.used {
            return Reply::error("exchanged_trigger_id");
        }
        if trigger.expired || now.saturating_duration_since(trigger.created) > window {
            return Reply::error("expired_trigger_id");
        }
        let view = match params.get("view").map(json_param) {
            Some(Ok(view)) if view.is_object() => view,
            _ => {
                return Reply::error_with(
                    "invalid_arguments",
                    &["missing required field: view [json-pointer:/view]".to_owned()],
                );
            }
        };
        let errors = check_view(&view);
        if !errors.is_empty() {
            return Reply::error_with("invalid_arguments", &errors);
        }
        if let Some(found) = self.triggers.get_mut(&trigger_id) {
            found.used = true;
        }
        let id = self.new_id('V');
        let mut stateful = view.clone();
        if let Value::Object(object) = &mut stateful {
            let blocks = object.remove("blocks").unwrap_or_else(|| json!([]));
            let blocks = self.fill_block_ids(blocks);
            let hash = format!("{}.{}", unix_secs(), pseudo_hex(self.counter + 0x4a54, 8));
            object.insert("id".into(), json!(id));
            object.insert("team_id".into(), json!(TEAM_ID));
            object.insert("blocks".into(), blocks);
            for key in ["private_metadata", "callback_id", "external_id"] {
                object.entry(key).or_insert(json!(""));
            }
            object.insert("state".into(), json!({ "values": {} }));
            object.insert("hash".into(), json!(hash));
            object.entry("clear_on_close").or_insert(json!(false));
            object.entry("notify_on_close").or_insert(json!(false));
            object.insert("previous_view_id".into(), Value::Null);
            object.insert("root_view_id".into(), json!(id));
            object.insert("app_id".into(), json!(APP_ID));
            object.insert("app_installed_team_id".into(), json!(TEAM_ID));
            object.insert("bot_id".into(), json!(BOT_ID));
        }
        self.views.push(OpenedView {
            id,
            trigger_id,
            user: trigger.user,
            view,
            stateful: stateful.clone(),
            submissions: Vec::new(),
        });
        Reply::ok(json!({ "view": stateful }))
    }

    fn conversations_open(&mut self, params: &Value) -> Reply {
        let users: Vec<String> = match params.get("users") {
            Some(Value::Array(list)) => list
                .iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect(),
            Some(Value::String(text)) => text
                .split(',')
                .map(str::trim)
                .filter(|id| !id.is_empty())
                .map(str::to_owned)
                .collect(),
            _ => Vec::new(),
        };
        if users.is_empty() {
            return match str_field(params, "channel").and_then(|id| self.channels.get(id)) {
                Some(channel) => Reply::ok(json!({
                    "no_op": true,
                    "already_open": true,
                    "channel": { "id": channel.id },
                })),
                None if params.get("channel").is_some() => Reply::error("channel_not_found"),
                None => Reply::error("users_list_not_supplied"),
            };
        }
        if users.len() > 8 {
            return Reply::error("too_many_users");
        }
        let mut known = Vec::new();
        for id in &users {
            match self.users.get(id) {
                Some(user) => known.push(user.clone()),
                None => return Reply::error("user_not_found"),
            }
        }
        let (id, existed) = if let [user] = known.as_slice() {
            let existed = self.dms.contains_key(&user.id);
            (self.dm_channel(user), existed)
        } else {
            let mut key = users.clone();
            key.sort();
            let existed = self.groups.contains_key(&key);
            let id = match self.groups.get(&key) {
                Some(id) => id.clone(),
                None => {
                    let id = self.new_id('C');
                    let name = format!("mpdm-{}-1", key.join("--").to_ascii_lowercase());
                    self.channels
                        .insert(id.clone(), Channel::private(id.clone(), name));
                    self.groups.insert(key, id.clone());
                    id
                }
            };
            (id, existed)
        };
        let channel = if bool_param(params.get("return_im")) {
            json!({
                "id": id,
                "created": 1_700_000_000,
                "is_im": known.len() == 1,
                "is_mpim": known.len() > 1,
                "is_org_shared": false,
                "user": known.first().map(|user| user.id.clone()),
                "last_read": "0000000000.000000",
                "latest": null,
                "unread_count": 0,
                "unread_count_display": 0,
                "is_open": true,
                "priority": 0,
            })
        } else {
            json!({ "id": id })
        };
        if existed {
            Reply::ok(json!({ "no_op": true, "already_open": true, "channel": channel }))
        } else {
            Reply::ok(json!({ "channel": channel }))
        }
    }
}

/// The response URL.
impl State {
    pub(crate) fn response_url(
        &mut self,
        team: &str,
        id: &str,
        secret: &str,
        params: Value,
        now: Instant,
    ) -> Reply {
        let reply = self.response_url_reply(team, id, secret, &params, now);
        self.calls.push(Call {
            method: "response_url".to_owned(),
            http_method: "POST".to_owned(),
            params,
            ok: reply.ok_flag(),
            error: str_field(&reply.body, "error").map(str::to_owned),
            status: reply.status,
            response: reply.body.clone(),
        });
        reply
    }

    fn response_url_reply(
        &mut self,
        team: &str,
        id: &str,
        secret: &str,
        params: &Value,
        now: Instant,
    ) -> Reply {
        let hook = self
            .hooks
            .get(id)
            .filter(|hook| team == TEAM_ID && hook.secret == secret)
            .cloned();
        let Some(hook) = hook else {
            let mut reply = Reply::error("no_active_hooks");
            reply.status = 404;
            return reply;
        };
        if now.saturating_duration_since(hook.created) > RESPONSE_URL_LIFETIME {
            let mut reply = Reply::error("expired_url");
            reply.status = 404;
            return reply;
        }
        if hook.uses >= RESPONSE_URL_USES {
            let mut reply = Reply::error("used_url");
            reply.status = 404;
            return reply;
        }
        let Some(record) = self.interaction(hook.interaction).cloned() else {
            return Reply::not_found();
        };
        match record.kind.clone() {
            InteractionKind::BlockActions {
                channel,
                message_ts,
                ..
            } => {
                if let Err(reply) =
                    self.apply_action_response(&channel, &message_ts, &record.user, params)
                {
                    return reply;
                }
            }
            InteractionKind::SlashCommand { channel, .. } => {
                // There is no original message to replace or delete.
                if !bool_param(params.get("delete_original"))
                    && let Err(reply) = self.answer_command(
                        &channel,
                        &record.user,
                        params,
                        EphemeralSource::CommandResponse,
                    )
                {
                    return reply;
                }
            }
            InteractionKind::ViewSubmission { .. } => return Reply::not_found(),
        }
        if let Some(found) = self.hooks.get_mut(id) {
            found.uses += 1;
        }
        if let Some(index) = usize::try_from(hook.interaction)
            .ok()
            .and_then(|id| id.checked_sub(1))
            && let Some(found) = self.interactions.get_mut(index)
        {
            found.responses.push(params.clone());
        }
        Reply::ok(json!({}))
    }

    /// Applies a post to a block action's response URL to the message
    /// acted on.
    fn apply_action_response(
        &mut self,
        channel: &str,
        message_ts: &str,
        user: &str,
        params: &Value,
    ) -> Result<(), Reply> {
        if bool_param(params.get("delete_original")) {
            if let Some(message) = self
                .messages
                .iter_mut()
                .find(|message| message.channel == channel && message.ts == message_ts)
            {
                message.deleted = true;
            }
        } else {
            let (text, blocks) = self.content(params, true)?;
            if bool_param(params.get("replace_original")) {
                if let Some(message) = self
                    .messages
                    .iter_mut()
                    .find(|message| message.channel == channel && message.ts == message_ts)
                {
                    message.history.push(Revision {
                        text: message.text.clone(),
                        blocks: message.blocks.clone(),
                    });
                    message.text = text.unwrap_or_default();
                    message.blocks = blocks.unwrap_or(Value::Null);
                }
            } else {
                self.show(
                    channel,
                    user,
                    text,
                    blocks,
                    params,
                    EphemeralSource::ResponseUrl,
                );
            }
        }
        Ok(())
    }

    /// Answers a slash command run by `user` in `channel` (a post to its
    /// response URL, or its ack's `payload`): a message in the channel for
    /// `response_type: "in_channel"`, else an ephemeral one for the user.
    fn answer_command(
        &mut self,
        channel: &str,
        user: &str,
        params: &Value,
        source: EphemeralSource,
    ) -> Result<(), Reply> {
        let (text, blocks) = self.content(params, true)?;
        self.show(channel, user, text, blocks, params, source);
        Ok(())
    }

    /// A response's content shown: in the channel for `response_type:
    /// "in_channel"`, else to `user` only (`source`).
    fn show(
        &mut self,
        channel: &str,
        user: &str,
        text: Option<String>,
        blocks: Option<Value>,
        params: &Value,
        source: EphemeralSource,
    ) {
        let thread_ts = str_field(params, "thread_ts").map(str::to_owned);
        if str_field(params, "response_type") == Some("in_channel") {
            self.store_bot_message(channel, text, blocks, thread_ts);
        } else {
            let ts = self.clock.next_ts();
            self.ephemerals.push(Ephemeral {
                channel: channel.to_owned(),
                user: user.to_owned(),
                ts,
                thread_ts,
                text: text.unwrap_or_default(),
                blocks: blocks.unwrap_or(Value::Null),
                source,
            });
        }
    }
}

/// Socket Mode frames from the app.
impl State {
    /// A frame from a Socket Mode client. Acks are recorded with their
    /// envelopes; the first ack of a `slash_commands` envelope answers the
    /// command with its `payload`, if it has one with content.
    pub(crate) fn receive_frame(&mut self, text: &str) {
        let Some(record) = self.socket.receive(text) else {
            return;
        };
        if record.kind != EnvelopeKind::SlashCommands {
            return;
        }
        let envelope_id = record.envelope_id.clone();
        let payload = record
            .acks
            .last()
            .and_then(|ack| ack.get("payload"))
            .filter(|payload| payload.is_object())
            .cloned();
        if !self.answered_commands.insert(envelope_id.clone()) {
            return;
        }
        let Some(payload) = payload else {
            return;
        };
        let command = self
            .interactions
            .iter()
            .find(|found| found.envelope_id.as_deref() == Some(envelope_id.as_str()))
            .cloned();
        if let Some(InteractionRecord {
            kind: InteractionKind::SlashCommand { channel, .. },
            user,
            ..
        }) = command
        {
            // An ack payload Slack cannot show (no text, bad blocks) shows
            // nothing.
            let _ = self.answer_command(&channel, &user, &payload, EphemeralSource::CommandAck);
        }
    }
}

/// Test controls and users acting.
impl State {
    pub(crate) fn add_user(&mut self, user: &User) {
        self.users.insert(user.id.clone(), user.clone());
    }

    pub(crate) fn add_channel(&mut self, channel: &Channel) {
        self.channels.insert(channel.id.clone(), channel.clone());
    }

    pub(crate) fn set_archived(&mut self, id: &str, archived: bool) {
        if let Some(channel) = self.channels.get_mut(id) {
            channel.archived = archived;
        }
    }

    pub(crate) fn set_bot_member(&mut self, id: &str, member: bool) {
        if let Some(channel) = self.channels.get_mut(id) {
            channel.bot_member = member;
        }
    }

    pub(crate) fn set_rate_limits(&mut self, limits: RateLimits) {
        self.config.rate_limits = limits;
    }

    pub(crate) fn set_trigger_window(&mut self, window: Duration) {
        self.config.trigger_window = window;
    }

    /// The DM channel with `user`, made on first use (stable id).
    pub(crate) fn dm_channel(&mut self, user: &User) -> String {
        self.users
            .entry(user.id.clone())
            .or_insert_with(|| user.clone());
        if let Some(id) = self.dms.get(&user.id) {
            return id.clone();
        }
        let id = self.new_id('D');
        self.channels.insert(
            id.clone(),
            Channel {
                id: id.clone(),
                name: user.id.clone(),
                kind: ChannelKind::Im {
                    user: user.id.clone(),
                },
                bot_member: true,
                archived: false,
            },
        );
        self.dms.insert(user.id.clone(), id.clone());
        id
    }

    pub(crate) fn expire_trigger(&mut self, trigger_id: &str) -> bool {
        match self.triggers.get_mut(trigger_id) {
            Some(trigger) => {
                trigger.expired = true;
                true
            }
            None => false,
        }
    }

    fn new_trigger(&mut self, user: &str) -> String {
        let n = self.next_n();
        let trigger_id = format!(
            "{}{:03}.{}.{}",
            unix_secs(),
            n % 1000,
            4_711_000_000 + n,
            pseudo_hex(n + 0x7219, 32)
        );
        self.triggers.insert(
            trigger_id.clone(),
            Trigger {
                user: user.to_owned(),
                created: Instant::now(),
                used: false,
                expired: false,
            },
        );
        trigger_id
    }

    fn new_interaction(
        &mut self,
        kind: InteractionKind,
        user: &User,
        trigger_id: String,
        hook_path: Option<&str>,
    ) -> (u64, Option<String>) {
        let id = u64::try_from(self.interactions.len()).unwrap_or(u64::MAX - 1) + 1;
        let response_url = hook_path.map(|path| {
            let hook_id = format!("{}", 7_000_000_000_000 + id);
            let secret = pseudo_hex(id + 0x5ec, 24);
            self.hooks.insert(
                hook_id.clone(),
                Hook {
                    interaction: id,
                    secret: secret.clone(),
                    created: Instant::now(),
                    uses: 0,
                },
            );
            format!(
                "{}/{path}/{TEAM_ID}/{hook_id}/{secret}",
                self.config.base_url
            )
        });
        self.interactions.push(InteractionRecord {
            id,
            kind,
            user: user.id.clone(),
            trigger_id,
            response_url: response_url.clone(),
            envelope_id: None,
            payload: Value::Null,
            responses: Vec::new(),
        });
        (id, response_url)
    }

    fn set_interaction_payload(&mut self, id: u64, payload: Value, envelope_id: Option<String>) {
        if let Some(index) = usize::try_from(id).ok().and_then(|id| id.checked_sub(1))
            && let Some(record) = self.interactions.get_mut(index)
        {
            record.payload = payload;
            record.envelope_id = envelope_id;
        }
    }

    /// The `event_callback` wrapper of an event, as the Events API sends it.
    fn event_callback(&mut self, event: Value) -> Value {
        let n = self.next_n();
        json!({
            "token": VERIFICATION_TOKEN,
            "team_id": TEAM_ID,
            "context_team_id": TEAM_ID,
            "context_enterprise_id": null,
            "api_app_id": APP_ID,
            "event": event,
            "type": "event_callback",
            "event_id": format!("Ev0{}", pseudo_hex(n + 0xe7, 9).to_ascii_uppercase()),
            "event_time": unix_secs(),
            "authorizations": [{
                "enterprise_id": null,
                "team_id": TEAM_ID,
                "user_id": BOT_USER_ID,
                "is_bot": true,
                "is_enterprise_install": false,
            }],
            "is_ext_shared_channel": false,
            "event_context": format!("4-{}", pseudo_hex(n + 0xc0, 40)),
        })
    }

    /// The `message` event of a stored message.
    fn message_event(&self, message: &StoredMessage) -> Value {
        let mut event = State::message_json(message);
        if let Value::Object(object) = &mut event {
            object.remove("edited");
            object.insert("channel".into(), json!(message.channel));
            object.insert("event_ts".into(), json!(message.ts));
            let channel_type = self
                .channels
                .get(&message.channel)
                .map_or("channel", |channel| channel.kind.channel_type());
            object.insert("channel_type".into(), json!(channel_type));
            if message.is_reply()
                && let Some(parent) = message
                    .thread_ts
                    .as_deref()
                    .and_then(|parent| self.message(&message.channel, parent))
                && let Some(parent_user) = &parent.user
            {
                object.insert("parent_user_id".into(), json!(parent_user));
            }
        }
        event
    }

    fn dispatch_message_event(&mut self, message: &StoredMessage) -> String {
        let event = self.message_event(message);
        let payload = self.event_callback(event);
        self.socket.enqueue(EnvelopeKind::EventsApi, payload, false)
    }

    /// Stores a user's (or another bot's) message; returns it and its
    /// Events API payload.
    pub(crate) fn incoming(
        &mut self,
        incoming: super::model::IncomingMessage,
    ) -> Result<(StoredMessage, Value), String> {
        if !self.channels.contains_key(&incoming.channel) {
            return Err(format!("unknown channel {}", incoming.channel));
        }
        if let Some(user) = &incoming.user {
            self.users.entry(user.clone()).or_insert_with(|| {
                User::new(user.clone(), format!("user-{}", user.to_ascii_lowercase()))
            });
        }
        if let Some(parent) = &incoming.thread_ts
            && self.message(&incoming.channel, parent).is_none()
        {
            return Err(format!("no message {parent} in {}", incoming.channel));
        }
        let ts = self.clock.next_ts();
        let blocks = match (&incoming.blocks, &incoming.user) {
            (Some(blocks), _) => blocks.clone(),
            (None, Some(_)) => {
                let n = self.next_n();
                json!([{
                    "type": "rich_text",
                    "block_id": pseudo_hex(n + 0x51c, 5),
                    "elements": [{
                        "type": "rich_text_section",
                        "elements": [{ "type": "text", "text": incoming.text }],
                    }],
                }])
            }
            (None, None) => Value::Null,
        };
        let message = StoredMessage {
            channel: incoming.channel.clone(),
            ts,
            thread_ts: incoming.thread_ts.clone(),
            user: incoming.user.clone(),
            bot_id: incoming.bot_id.clone(),
            text: incoming.text.clone(),
            blocks,
            history: Vec::new(),
            deleted: false,
        };
        self.messages.push(message.clone());
        let mut event = self.message_event(&message);
        if incoming.user.is_some()
            && let Value::Object(object) = &mut event
        {
            let n = self.next_n();
            let hex = pseudo_hex(n + 0xc11e, 32);
            object.insert(
                "client_msg_id".into(),
                json!(format!(
                    "{}-{}-{}-{}-{}",
                    &hex[0..8],
                    &hex[8..12],
                    &hex[12..16],
                    &hex[16..20],
                    &hex[20..32]
                )),
            );
        }
        let payload = self.event_callback(event);
        Ok((message, payload))
    }

    pub(crate) fn enqueue_event(&mut self, payload: Value) -> String {
        self.socket.enqueue(EnvelopeKind::EventsApi, payload, false)
    }

    /// `user` acts on the element `action_id` of a message: the
    /// `block_actions` payload. `socket` decides whether it is queued as
    /// an envelope.
    pub(crate) fn act(
        &mut self,
        user: &User,
        channel: &str,
        message_ts: &str,
        action_id: &str,
        act: Act<'_>,
        socket: bool,
    ) -> Result<(u64, Value), String> {
        self.users
            .entry(user.id.clone())
            .or_insert_with(|| user.clone());
        let message = self
            .message(channel, message_ts)
            .filter(|message| !message.deleted)
            .cloned()
            .ok_or_else(|| format!("no message {message_ts} in {channel}"))?;
        // An action_id is unique within its block only: a press means a
        // button, a choice anything else.
        let wanted = |element: &Value| {
            (str_field(element, "type") == Some("button")) == matches!(act, Act::Press)
        };
        let (block_id, element) = find_element(&message.blocks, action_id, wanted)
            .or_else(|| find_element(&message.blocks, action_id, |_| true))
            .ok_or_else(|| format!("message {message_ts} has no element {action_id:?}"))?;
        let kind = str_field(&element, "type").unwrap_or_default().to_owned();
        let action_ts = format_ts(self.clock.next_micros());
        let mut action = json!({
            "type": kind,
            "action_id": action_id,
            "block_id": block_id,
            "action_ts": action_ts,
        });
        let mut state_value = json!({ "type": kind });
        match (act, kind.as_str()) {
            (Act::Press, "button") => {
                if let Value::Object(object) = &mut action {
                    for key in ["text", "value", "style"] {
                        if let Some(value) = element.get(key) {
                            object.insert(key.into(), value.clone());
                        }
                    }
                }
                state_value = Value::Null;
            }
            (Act::Choose(values), "static_select" | "radio_buttons") => {
                let [value] = values else {
                    return Err(format!("{kind} {action_id:?} takes exactly one value"));
                };
                let option = find_option(&element, value)?;
                if let (Value::Object(object), Value::Object(state)) =
                    (&mut action, &mut state_value)
                {
                    object.insert("selected_option".into(), option.clone());
                    if let Some(placeholder) = element.get("placeholder") {
                        object.insert("placeholder".into(), placeholder.clone());
                    }
                    state.insert("selected_option".into(), option);
                }
            }
            (Act::Choose(values), "multi_static_select" | "checkboxes") => {
                let options = values
                    .iter()
                    .map(|value| find_option(&element, value))
                    .collect::<Result<Vec<_>, _>>()?;
                if let Some(max) = element.get("max_selected_items").and_then(Value::as_u64)
                    && options.len() as u64 > max
                {
                    return Err(format!("{action_id:?} allows at most {max} items"));
                }
                if let (Value::Object(object), Value::Object(state)) =
                    (&mut action, &mut state_value)
                {
                    object.insert("selected_options".into(), json!(options));
                    if let Some(placeholder) = element.get("placeholder") {
                        object.insert("placeholder".into(), placeholder.clone());
                    }
                    state.insert("selected_options".into(), json!(options));
                }
            }
            (act, kind) => return Err(format!("cannot {act:?} a {kind} element ({action_id:?})")),
        }
        let inputs = self
            .inputs
            .entry((user.id.clone(), channel.to_owned(), message_ts.to_owned()))
            .or_default();
        if !state_value.is_null() {
            let block = inputs.entry(block_id.clone()).or_insert_with(|| json!({}));
            if let Value::Object(block) = block {
                block.insert(action_id.to_owned(), state_value);
            }
        }
        let values = inputs.clone();
        let trigger_id = self.new_trigger(&user.id);
        let kind = InteractionKind::BlockActions {
            channel: channel.to_owned(),
            message_ts: message_ts.to_owned(),
            action_id: action_id.to_owned(),
        };
        let (id, response_url) =
            self.new_interaction(kind, user, trigger_id.clone(), Some("actions"));
        let channel_name = self.payload_channel_name(channel);
        let mut container = json!({
            "type": "message",
            "message_ts": message_ts,
            "channel_id": channel,
            "is_ephemeral": false,
        });
        if message.is_reply()
            && let (Value::Object(object), Some(thread_ts)) = (&mut container, &message.thread_ts)
        {
            object.insert("thread_ts".into(), json!(thread_ts));
        }
        let payload = json!({
            "type": "block_actions",
            "user": user.basic_json(),
            "api_app_id": APP_ID,
            "token": VERIFICATION_TOKEN,
            "container": container,
            "trigger_id": trigger_id,
            "team": { "id": TEAM_ID, "domain": TEAM_DOMAIN },
            "enterprise": null,
            "is_enterprise_install": false,
            "channel": { "id": channel, "name": channel_name },
            "message": State::message_json(&message),
            "state": { "values": values },
            "response_url": response_url,
            "actions": [action],
        });
        let envelope = socket.then(|| {
            self.socket
                .enqueue(EnvelopeKind::Interactive, payload.clone(), false)
        });
        self.set_interaction_payload(id, payload.clone(), envelope);
        Ok((id, payload))
    }

    /// A channel's `name` in interaction payloads: `"directmessage"` for
    /// DMs.
    fn payload_channel_name(&self, channel: &str) -> String {
        match self.channels.get(channel) {
            Some(found) if matches!(found.kind, ChannelKind::Im { .. }) => {
                "directmessage".to_owned()
            }
            Some(found) => found.name.clone(),
            None => channel.to_owned(),
        }
    }

    /// `user` runs slash command `command` with `text` in `channel`: the
    /// fields Slack sends, in its order (a form body; every value a
    /// string). `socket` decides whether it is queued as a
    /// `slash_commands` envelope (its `envelope_id` returned).
    pub(crate) fn slash_command(
        &mut self,
        channel: &str,
        user: &str,
        command: &str,
        text: &str,
        socket: bool,
    ) -> Result<RanCommand, String> {
        let name = command.strip_prefix('/').unwrap_or_default();
        if name.is_empty() || name.contains(|c: char| c.is_whitespace() || c == '/') {
            return Err(format!(
                "{command:?} is not a slash command (\"/name\", no spaces)"
            ));
        }
        match self.channels.get(channel) {
            None => return Err(format!("unknown channel {channel}")),
            Some(found) if found.archived => {
                return Err(format!("channel {channel} is archived"));
            }
            Some(_) => {}
        }
        let user = self
            .users
            .entry(user.to_owned())
            .or_insert_with(|| User::new(user, format!("user-{}", user.to_ascii_lowercase())))
            .clone();
        let channel_name = self.payload_channel_name(channel);
        let trigger_id = self.new_trigger(&user.id);
        let kind = InteractionKind::SlashCommand {
            channel: channel.to_owned(),
            command: command.to_owned(),
            text: text.to_owned(),
        };
        let (id, response_url) =
            self.new_interaction(kind, &user, trigger_id.clone(), Some("commands"));
        let fields: Vec<(String, String)> = [
            ("token", VERIFICATION_TOKEN.to_owned()),
            ("team_id", TEAM_ID.to_owned()),
            ("team_domain", TEAM_DOMAIN.to_owned()),
            ("channel_id", channel.to_owned()),
            ("channel_name", channel_name),
            ("user_id", user.id.clone()),
            ("user_name", user.name.clone()),
            ("command", command.to_owned()),
            ("text", text.to_owned()),
            ("api_app_id", APP_ID.to_owned()),
            ("is_enterprise_install", "false".to_owned()),
            ("response_url", response_url.unwrap_or_default()),
            ("trigger_id", trigger_id),
        ]
        .into_iter()
        .map(|(key, value)| (key.to_owned(), value))
        .collect();
        let payload = pairs_to_json(fields.clone());
        let envelope = socket.then(|| {
            self.socket
                .enqueue(EnvelopeKind::SlashCommands, payload.clone(), true)
        });
        self.set_interaction_payload(id, payload, envelope.clone());
        Ok(RanCommand {
            id,
            fields,
            envelope_id: envelope,
        })
    }

    /// `user` submits view `view_id` with `(action_id, value)` for its
    /// inputs: the `view_submission` payload.
    pub(crate) fn submit_view(
        &mut self,
        user: &User,
        view_id: &str,
        fields: &[(&str, &str)],
        socket: bool,
    ) -> Result<(u64, Value), String> {
        let view = self
            .view(view_id)
            .cloned()
            .ok_or_else(|| format!("no view {view_id} was opened"))?;
        let blocks = view
            .stateful
            .get("blocks")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        let mut values = Map::new();
        let mut used = vec![false; fields.len()];
        for block in &blocks {
            if str_field(block, "type") != Some("input") {
                continue;
            }
            let Some(element) = block.get("element") else {
                continue;
            };
            let block_id = str_field(block, "block_id").unwrap_or_default();
            let action_id = str_field(element, "action_id").unwrap_or_default();
            let kind = str_field(element, "type").unwrap_or_default();
            let given = fields
                .iter()
                .position(|(field, _)| *field == action_id)
                .map(|index| {
                    used[index] = true;
                    fields[index].1
                });
            let value = match kind {
                "static_select" | "radio_buttons" => match given {
                    Some(value) => {
                        json!({ "type": kind, "selected_option": find_option(element, value)? })
                    }
                    None => json!({ "type": kind, "selected_option": null }),
                },
                "multi_static_select" | "checkboxes" => {
                    let options = given
                        .map(|value| {
                            value
                                .split(',')
                                .map(|value| find_option(element, value))
                                .collect::<Result<Vec<_>, _>>()
                        })
                        .transpose()?
                        .unwrap_or_default();
                    json!({ "type": kind, "selected_options": options })
                }
                _ => json!({ "type": kind, "value": given }),
            };
            let optional = block
                .get("optional")
                .and_then(Value::as_bool)
                .unwrap_or(false);
            if !optional && given.is_none_or(str::is_empty) {
                return Err(format!(
                    "input {action_id:?} of view {view_id} is required (Slack's client would not submit)"
                ));
            }
            values.insert(block_id.to_owned(), json!({ action_id: value }));
        }
        if let Some(index) = used.iter().position(|used| !used) {
            return Err(format!("view {view_id} has no input {:?}", fields[index].0));
        }
        self.users
            .entry(user.id.clone())
            .or_insert_with(|| user.clone());
        let mut stateful = view.stateful.clone();
        if let Value::Object(object) = &mut stateful {
            object.insert("state".into(), json!({ "values": values }));
        }
        let trigger_id = self.new_trigger(&user.id);
        let kind = InteractionKind::ViewSubmission {
            view_id: view_id.to_owned(),
        };
        let (id, _) = self.new_interaction(kind, user, trigger_id.clone(), None);
        let payload = json!({
            "type": "view_submission",
            "team": { "id": TEAM_ID, "domain": TEAM_DOMAIN },
            "user": user.basic_json(),
            "api_app_id": APP_ID,
            "token": VERIFICATION_TOKEN,
            "trigger_id": trigger_id,
            "view": stateful,
            "response_urls": [],
            "is_enterprise_install": false,
            "enterprise": null,
        });
        if let Some(found) = self.views.iter_mut().find(|found| found.id == view_id) {
            found.submissions.push(id);
        }
        let envelope = socket.then(|| {
            self.socket
                .enqueue(EnvelopeKind::Interactive, payload.clone(), true)
        });
        self.set_interaction_payload(id, payload.clone(), envelope);
        Ok((id, payload))
    }
}

/// The first element with `action_id` in `blocks` (actions elements,
/// section accessories, input elements) that is `wanted`, and its block's
/// id.
fn find_element(
    blocks: &Value,
    action_id: &str,
    wanted: impl Fn(&Value) -> bool,
) -> Option<(String, Value)> {
    for block in blocks.as_array()? {
        let block_id = str_field(block, "block_id").unwrap_or_default().to_owned();
        let mut candidates: Vec<&Value> = Vec::new();
        if let Some(elements) = block.get("elements").and_then(Value::as_array) {
            candidates.extend(elements);
        }
        candidates.extend(block.get("accessory"));
        candidates.extend(block.get("element"));
        if let Some(found) = candidates
            .into_iter()
            .find(|element| str_field(element, "action_id") == Some(action_id) && wanted(element))
        {
            return Some((block_id, found.clone()));
        }
    }
    None
}

/// The option with `value` of a select or choice element, as Slack echoes
/// it (`{"text": …, "value": …}`).
fn find_option(element: &Value, value: &str) -> Result<Value, String> {
    let groups = element
        .get("option_groups")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|group| group.get("options").and_then(Value::as_array))
        .flatten();
    element
        .get("options")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .chain(groups)
        .find(|option| str_field(option, "value") == Some(value))
        .map(|option| {
            let mut shown = json!({ "text": option.get("text").cloned().unwrap_or(Value::Null), "value": value });
            if let (Value::Object(object), Some(description)) = (&mut shown, option.get("description")) {
                object.insert("description".into(), description.clone());
            }
            shown
        })
        .ok_or_else(|| {
            format!(
                "{:?} is not an option of {:?}",
                value,
                str_field(element, "action_id").unwrap_or_default()
            )
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn state() -> State {
        let config = Config {
            bot_token: super::super::BOT_TOKEN.to_owned(),
            app_token: super::super::APP_TOKEN.to_owned(),
            bot_scopes: Vec::new(),
            signer: RequestSigner::default(),
            rate_limits: RateLimits::off(),
            trigger_window: super::super::TRIGGER_WINDOW,
            echo_bot_messages: false,
            base_url: "http://127.0.0.1:9".to_owned(),
            ws_base: "ws://127.0.0.1:9".to_owned(),
        };
        let rules = Redelivery {
            ack_timeout: Duration::from_secs(3),
            max_retries: 3,
            interactive: false,
        };
        let mut state = State::new(config, rules);
        state.add_channel(&Channel::public("C0GENERAL1", "general"));
        state.add_user(&User::new("U0ALICE001", "alice"));
        state
    }

    /// Sends what is queued on a fresh connection; returns the frames.
    fn sent(state: &mut State) -> Vec<Value> {
        let ticket = state.socket.issue_ticket();
        let conn = state.socket.open(Some(&ticket)).expect("fresh ticket");
        state
            .socket
            .output(conn, Instant::now())
            .frames
            .iter()
            .map(|frame| serde_json::from_str(frame).expect("frames are JSON"))
            .filter(|frame: &Value| frame["type"] != "hello")
            .collect()
    }

    /// Posts `body` to a response URL the way the server routes it.
    fn post(state: &mut State, url: &str, body: Value) -> Reply {
        let path = url
            .strip_prefix(&state.config.base_url)
            .expect("the fake's URL");
        let parts: Vec<&str> = path.split('/').filter(|part| !part.is_empty()).collect();
        let [_, team, id, secret] = parts.as_slice() else {
            panic!("unexpected response URL {url}");
        };
        let (team, id, secret) = ((*team).to_owned(), (*id).to_owned(), (*secret).to_owned());
        state.response_url(&team, &id, &secret, body, Instant::now())
    }

    #[test]
    fn slash_command_envelope_has_slacks_fields_as_strings() {
        let mut state = state();
        let RanCommand {
            id,
            fields,
            envelope_id: envelope,
        } = state
            .slash_command("C0GENERAL1", "U0ALICE001", "/askbridge", "status now", true)
            .expect("a command");
        let envelope = envelope.expect("queued");
        let keys: Vec<&str> = fields.iter().map(|(key, _)| key.as_str()).collect();
        assert_eq!(
            keys,
            [
                "token",
                "team_id",
                "team_domain",
                "channel_id",
                "channel_name",
                "user_id",
                "user_name",
                "command",
                "text",
                "api_app_id",
                "is_enterprise_install",
                "response_url",
                "trigger_id",
            ]
        );
        let frames = sent(&mut state);
        assert_eq!(frames.len(), 1);
        let frame = &frames[0];
        assert_eq!(frame["type"], "slash_commands");
        assert_eq!(frame["envelope_id"], envelope.as_str());
        assert_eq!(frame["accepts_response_payload"], true);
        assert!(frame.get("retry_attempt").is_none());
        let payload = &frame["payload"];
        assert!(
            payload
                .as_object()
                .expect("an object")
                .values()
                .all(Value::is_string),
            "every value is a string: {payload}"
        );
        assert_eq!(payload["token"], VERIFICATION_TOKEN);
        assert_eq!(payload["team_id"], TEAM_ID);
        assert_eq!(payload["team_domain"], TEAM_DOMAIN);
        assert_eq!(payload["channel_id"], "C0GENERAL1");
        assert_eq!(payload["channel_name"], "general");
        assert_eq!(payload["user_id"], "U0ALICE001");
        assert_eq!(payload["user_name"], "alice");
        assert_eq!(payload["command"], "/askbridge");
        assert_eq!(payload["text"], "status now");
        assert_eq!(payload["api_app_id"], APP_ID);
        assert_eq!(payload["is_enterprise_install"], "false");
        let url = payload["response_url"].as_str().expect("a response URL");
        assert!(url.starts_with(&format!("http://127.0.0.1:9/commands/{TEAM_ID}/")));
        let parsed: slack_morphism::prelude::SlackCommandEvent =
            serde_json::from_value(payload.clone()).expect("slack-morphism reads the payload");
        assert_eq!(parsed.command.0, "/askbridge");
        assert_eq!(parsed.text.as_deref(), Some("status now"));
        assert_eq!(parsed.response_url.0.as_str(), payload["response_url"]);
        let trigger = payload["trigger_id"].as_str().expect("a trigger");
        assert!(state.triggers.contains_key(trigger));

        let record = state.interaction(id).expect("recorded").clone();
        assert_eq!(state.commands(), [&record]);
        assert_eq!(record.envelope_id.as_deref(), Some(envelope.as_str()));
        assert_eq!(record.response_url.as_deref(), Some(url));
        assert_eq!(record.user, "U0ALICE001");
        assert_eq!(
            record.kind,
            InteractionKind::SlashCommand {
                channel: "C0GENERAL1".to_owned(),
                command: "/askbridge".to_owned(),
                text: "status now".to_owned(),
            }
        );

        let dm = state.dm_channel(&User::new("U0BOB00001", "bob"));
        let RanCommand { fields, .. } = state
            .slash_command(&dm, "U0BOB00001", "/askbridge", "", true)
            .expect("a command in a DM");
        assert!(fields.contains(&("channel_name".to_owned(), "directmessage".to_owned())));
        assert!(
            state
                .slash_command("C0NOPE0001", "U0ALICE001", "/askbridge", "", true)
                .is_err()
        );
        assert!(
            state
                .slash_command("C0GENERAL1", "U0ALICE001", "askbridge", "", true)
                .is_err()
        );
    }

    #[test]
    fn response_url_of_a_command_answers_the_user() {
        let mut state = state();
        let RanCommand { id, .. } = state
            .slash_command("C0GENERAL1", "U0ALICE001", "/askbridge", "status", true)
            .expect("a command");
        let url = state
            .interaction(id)
            .and_then(|record| record.response_url.clone())
            .expect("a response URL");

        let reply = post(
            &mut state,
            &url,
            json!({"response_type": "ephemeral", "text": "2 questions open"}),
        );
        assert_eq!(reply.status, 200);
        assert_eq!(reply.body, json!({"ok": true}));
        let shown = state.ephemerals_for("U0ALICE001");
        assert_eq!(shown.len(), 1);
        assert_eq!(shown[0].channel, "C0GENERAL1");
        assert_eq!(shown[0].text, "2 questions open");
        assert_eq!(shown[0].source, EphemeralSource::CommandResponse);

        // The default response_type is ephemeral too.
        post(&mut state, &url, json!({"text": "again"}));
        assert_eq!(state.ephemerals_for("U0ALICE001").len(), 2);

        post(
            &mut state,
            &url,
            json!({"response_type": "in_channel", "text": "for everyone"}),
        );
        let visible = state.messages_in("C0GENERAL1");
        assert_eq!(visible.len(), 1);
        assert_eq!(visible[0].text, "for everyone");
        assert!(visible[0].by_bot());
        assert_eq!(state.ephemerals_for("U0ALICE001").len(), 2);

        let empty = post(&mut state, &url, json!({"response_type": "ephemeral"}));
        assert_eq!(empty.body["error"], "no_text");
        assert_eq!(state.interaction(id).expect("recorded").responses.len(), 3);

        for _ in 0..2 {
            post(&mut state, &url, json!({"text": "more"}));
        }
        let used = post(&mut state, &url, json!({"text": "sixth"}));
        assert_eq!(
            (used.status, &used.body["error"]),
            (404, &json!("used_url"))
        );
    }

    #[test]
    fn unknown_response_url_is_refused() {
        let mut state = state();
        let RanCommand { id, .. } = state
            .slash_command("C0GENERAL1", "U0ALICE001", "/askbridge", "", true)
            .expect("a command");
        let url = state
            .interaction(id)
            .and_then(|record| record.response_url.clone())
            .expect("a response URL");
        let forged = format!("{url}0");
        let reply = post(&mut state, &forged, json!({"text": "hi"}));
        assert_eq!(reply.status, 404);
        assert_eq!(reply.body["error"], "no_active_hooks");
        let reply = state.response_url(
            TEAM_ID,
            "7000000000999",
            "secret",
            json!({"text": "hi"}),
            Instant::now(),
        );
        assert_eq!(reply.status, 404);
        assert!(state.ephemerals_for("U0ALICE001").is_empty());
        assert_eq!(state.calls_to("response_url").len(), 2);
    }

    #[test]
    fn ack_payload_answers_the_command_once() {
        let mut state = state();
        let RanCommand {
            envelope_id: envelope,
            ..
        } = state
            .slash_command("C0GENERAL1", "U0ALICE001", "/askbridge", "status", true)
            .expect("a command");
        let envelope = envelope.expect("queued");
        sent(&mut state);
        let ack = json!({
            "envelope_id": envelope,
            "payload": {"response_type": "ephemeral", "text": "nothing open"},
        });
        state.receive_frame(&ack.to_string());
        let record = state.envelope(&envelope).expect("recorded");
        assert!(record.acked());
        assert_eq!(
            record.ack_payload(),
            Some(&json!({"response_type": "ephemeral", "text": "nothing open"}))
        );
        let shown = state.ephemerals_for("U0ALICE001");
        assert_eq!(shown.len(), 1);
        assert_eq!(shown[0].channel, "C0GENERAL1");
        assert_eq!(shown[0].text, "nothing open");
        assert_eq!(shown[0].source, EphemeralSource::CommandAck);

        // A second ack of the same envelope answers nothing.
        state.receive_frame(&ack.to_string());
        assert_eq!(state.ephemerals_for("U0ALICE001").len(), 1);

        // A bare ack shows nothing; an in_channel payload posts a message.
        let RanCommand {
            envelope_id: bare, ..
        } = state
            .slash_command("C0GENERAL1", "U0ALICE001", "/askbridge", "", true)
            .expect("a command");
        state.receive_frame(&json!({ "envelope_id": bare }).to_string());
        let RanCommand {
            envelope_id: loud, ..
        } = state
            .slash_command("C0GENERAL1", "U0ALICE001", "/askbridge", "", true)
            .expect("a command");
        state.receive_frame(
            &json!({
                "envelope_id": loud,
                "payload": {"response_type": "in_channel", "text": "hello all"},
            })
            .to_string(),
        );
        assert_eq!(state.ephemerals_for("U0ALICE001").len(), 1);
        let visible = state.messages_in("C0GENERAL1");
        assert_eq!(visible.len(), 1);
        assert_eq!(visible[0].text, "hello all");
    }
}

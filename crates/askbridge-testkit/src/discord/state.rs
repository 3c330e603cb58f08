//! The fake's state and the REST API on it. Everything here is synchronous;
//! `server` does the HTTP and `gateway` the WebSocket connections.

use std::collections::{HashMap, HashSet};
use std::time::{Duration, Instant};

use serde_json::{Map, Value, json};

use super::errors::{FieldError, Reply, api, form};
use super::gateway::{
    DIRECT_MESSAGES, GUILD_MESSAGES, GatewayState, MESSAGE_CONTENT, Pending, ReadyInfo,
};
use super::model::{
    Call, Channel, GatewayStats, HttpInteraction, IncomingMessage, InteractionKind,
    InteractionRecord, InteractionResponse, Member, ModalRecord, Notice, NoticeKind, Revision,
    StoredMessage, User,
};
use super::rate::{Bucket, Limiter, RateLimits};
use super::sign::InteractionSigner;
use super::util::{
    Snowflakes, char_len, iso8601, snowflake, snowflake_ms, str_field, u64_field, unix_ms,
};
use super::validate::{self, LINK_STYLE, PREMIUM_STYLE, command_kind, kind};

/// Message flags a bot may set when creating a message: SUPPRESS_EMBEDS,
/// SUPPRESS_NOTIFICATIONS.
const CREATE_FLAGS: u64 = (1 << 2) | (1 << 12);
/// EPHEMERAL.
const EPHEMERAL: u64 = 1 << 6;
/// LOADING (a deferred response still thinking).
const LOADING: u64 = 1 << 7;
/// The permissions the app has where interactions happen (`app_permissions`).
const APP_PERMISSIONS: u64 = 2_248_473_465_835_073;
/// `attachment_size_limit` of interactions: 10 MiB.
const ATTACHMENT_SIZE_LIMIT: u64 = 10 * 1024 * 1024;
/// The most messages `GET /channels/{id}/messages` returns.
const MAX_LIST: usize = 100;
/// ADMINISTRATOR: every permission, commands' `default_member_permissions`
/// included.
const ADMINISTRATOR: u64 = 1 << 3;
/// USE_APPLICATION_COMMANDS: needed to use any command in a guild channel.
const USE_APPLICATION_COMMANDS: u64 = 1 << 31;
/// Message `type` of a response to a CHAT_INPUT command.
const CHAT_INPUT_COMMAND_MESSAGE: u8 = 20;

/// One REST request, as the server read it.
#[derive(Debug, Clone)]
pub(crate) struct RestRequest {
    pub(crate) method: String,
    pub(crate) path: String,
    pub(crate) query: Option<String>,
    pub(crate) authorization: Option<String>,
    /// `None`: no body; `Err`: not JSON (the text).
    pub(crate) body: Option<Result<Value, String>>,
}

/// What the fake is started with.
#[derive(Debug, Clone)]
pub(crate) struct Config {
    pub(crate) token: String,
    pub(crate) bot: User,
    pub(crate) application_id: u64,
    pub(crate) application_flags: u64,
    pub(crate) ws_url: String,
    pub(crate) deadline: Duration,
    pub(crate) token_lifetime: Duration,
    pub(crate) rate_limits: RateLimits,
    pub(crate) heartbeat_interval_ms: u64,
    pub(crate) signer: InteractionSigner,
}

#[derive(Debug)]
struct ChannelEntry {
    channel: Channel,
    messages: Vec<u64>,
    denied: bool,
}

#[derive(Debug)]
struct Issued {
    record: InteractionRecord,
    created: Instant,
    expired: bool,
}

/// A registered global application command.
#[derive(Debug, Clone)]
struct StoredCommand {
    id: u64,
    version: u64,
    kind: u64,
    name: String,
    /// The definition as sent (the fields a `PATCH` overwrites).
    source: Value,
    /// The application command object the API answers.
    json: Value,
}

/// How many global commands of a type an application may have, and the
/// error past that.
fn command_limit(kind: u64) -> (usize, super::errors::ApiError) {
    match kind {
        command_kind::CHAT_INPUT => (100, api::MAX_CHAT_INPUT_COMMANDS),
        command_kind::PRIMARY_ENTRY_POINT => (1, api::MAX_ENTRY_POINT_COMMANDS),
        _ => (15, api::MAX_CONTEXT_MENU_COMMANDS),
    }
}

/// A command body's `name` (validated: present).
fn command_name_of(command: &Value) -> String {
    match command.get("name") {
        Some(Value::String(name)) => name.clone(),
        Some(other) if !other.is_null() => other.to_string(),
        _ => String::new(),
    }
}

/// The application command object for a definition, with Discord's
/// defaults for what was not sent.
fn command_json(application_id: u64, id: u64, version: u64, kind: u64, source: &Value) -> Value {
    let present = |key: &str| source.get(key).filter(|value| !value.is_null()).cloned();
    let permissions = match source.get("default_member_permissions") {
        None | Some(Value::Null) => Value::Null,
        Some(Value::String(bits)) => json!(bits),
        Some(other) => json!(other.to_string()),
    };
    let chat_input = kind == command_kind::CHAT_INPUT;
    let description = match source.get("description") {
        Some(Value::String(text)) if chat_input => text.clone(),
        Some(other) if chat_input && !other.is_null() => other.to_string(),
        _ => String::new(),
    };
    let mut object = Map::new();
    object.insert("id".into(), json!(id.to_string()));
    object.insert("application_id".into(), json!(application_id.to_string()));
    object.insert("version".into(), json!(version.to_string()));
    object.insert("default_member_permissions".into(), permissions);
    object.insert("type".into(), json!(kind));
    object.insert("name".into(), json!(command_name_of(source)));
    // serenity sends `{}` when there are none: nothing to keep.
    let localizations = |key: &str| {
        present(key).filter(|value| value.as_object().is_none_or(|map| !map.is_empty()))
    };
    if let Some(localizations) = localizations("name_localizations") {
        object.insert("name_localizations".into(), localizations);
    }
    object.insert("description".into(), json!(description));
    if let Some(localizations) = localizations("description_localizations") {
        object.insert("description_localizations".into(), localizations);
    }
    if chat_input
        && let Some(options) = present("options").filter(|options| {
            options
                .as_array()
                .is_some_and(|options| !options.is_empty())
        })
    {
        object.insert("options".into(), options);
    }
    object.insert(
        "dm_permission".into(),
        json!(
            source
                .get("dm_permission")
                .and_then(Value::as_bool)
                .unwrap_or(true)
        ),
    );
    object.insert(
        "contexts".into(),
        present("contexts").unwrap_or(Value::Null),
    );
    object.insert(
        "integration_types".into(),
        present("integration_types").unwrap_or_else(|| json!([0])),
    );
    object.insert(
        "nsfw".into(),
        json!(source.get("nsfw").and_then(Value::as_bool).unwrap_or(false)),
    );
    Value::Object(object)
}

/// Content, components and embeds of a message body.
#[derive(Debug, Clone, Default)]
struct Parts {
    content: String,
    components: Vec<Value>,
    embeds: Vec<Value>,
}

impl Parts {
    fn from_body(body: &Value) -> Parts {
        Parts {
            content: str_field(body, "content").unwrap_or_default().to_owned(),
            components: array(body, "components"),
            embeds: array(body, "embeds"),
        }
    }

    fn is_empty(&self) -> bool {
        self.content.trim().is_empty() && self.components.is_empty() && self.embeds.is_empty()
    }
}

fn array(body: &Value, key: &str) -> Vec<Value> {
    body.get(key)
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default()
}

/// Whether a body has content the fake does not model (stickers, files,
/// polls): such a message is not empty.
fn has_other_content(body: &Value) -> bool {
    ["sticker_ids", "attachments"].iter().any(|key| {
        body.get(*key)
            .and_then(Value::as_array)
            .is_some_and(|list| !list.is_empty())
    }) || body.get("poll").is_some_and(|poll| !poll.is_null())
}

/// Who may call a route.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Auth {
    /// No authorisation needed (`GET /gateway`).
    Public,
    /// `Authorization: Bot <token>`.
    Bot,
    /// The interaction token in the path.
    InteractionToken,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Route {
    Gateway,
    GatewayBot,
    Me,
    Application,
    DmChannels,
    Channel(u64),
    Messages(u64),
    Message(u64, u64),
    Callback(u64, String),
    /// `/applications/{application.id}/commands`.
    Commands(u64),
    /// `/applications/{application.id}/commands/{command.id}`.
    Command(u64, u64),
    Webhook(u64, String),
    /// `None`: `@original`.
    WebhookMessage(u64, String, Option<u64>),
}

impl Route {
    fn template(&self) -> &'static str {
        match self {
            Route::Gateway => "/gateway",
            Route::GatewayBot => "/gateway/bot",
            Route::Me => "/users/@me",
            Route::Application => "/oauth2/applications/@me",
            Route::DmChannels => "/users/@me/channels",
            Route::Channel(_) => "/channels/{channel.id}",
            Route::Messages(_) => "/channels/{channel.id}/messages",
            Route::Message(..) => "/channels/{channel.id}/messages/{message.id}",
            Route::Callback(..) => "/interactions/{interaction.id}/{interaction.token}/callback",
            Route::Commands(_) => "/applications/{application.id}/commands",
            Route::Command(..) => "/applications/{application.id}/commands/{command.id}",
            Route::Webhook(..) => "/webhooks/{application.id}/{interaction.token}",
            Route::WebhookMessage(_, _, None) => {
                "/webhooks/{application.id}/{interaction.token}/messages/@original"
            }
            Route::WebhookMessage(_, _, Some(_)) => {
                "/webhooks/{application.id}/{interaction.token}/messages/{message.id}"
            }
        }
    }

    fn auth(&self) -> Auth {
        match self {
            Route::Gateway => Auth::Public,
            Route::Callback(..) | Route::Webhook(..) | Route::WebhookMessage(..) => {
                Auth::InteractionToken
            }
            _ => Auth::Bot,
        }
    }

    fn methods(&self) -> &'static [&'static str] {
        match self {
            Route::Gateway
            | Route::GatewayBot
            | Route::Me
            | Route::Application
            | Route::Channel(_) => &["GET"],
            Route::DmChannels | Route::Callback(..) | Route::Webhook(..) => &["POST"],
            Route::Messages(_) => &["GET", "POST"],
            Route::Commands(_) => &["GET", "PUT", "POST"],
            Route::Message(..) | Route::Command(..) | Route::WebhookMessage(..) => {
                &["GET", "PATCH", "DELETE"]
            }
        }
    }
}

/// The route template and the error answer, for the call log.
type RouteError = Box<(String, Reply)>;

fn parse_route(path: &str) -> Result<Route, RouteError> {
    let segments: Vec<&str> = path.trim_end_matches('/').split('/').skip(1).collect();
    let id = |segment: &str, key: &str, template: &str| -> Result<u64, RouteError> {
        segment.parse().map_err(|_| {
            Box::new((
                template.to_owned(),
                Reply::form(&[form::not_snowflake(&[key.to_owned()], segment)]),
            ))
        })
    };
    let route = match segments.as_slice() {
        ["gateway"] => Route::Gateway,
        ["gateway", "bot"] => Route::GatewayBot,
        ["users", "@me"] => Route::Me,
        ["users", "@me", "channels"] => Route::DmChannels,
        ["oauth2", "applications", "@me"] | ["applications", "@me"] => Route::Application,
        ["channels", channel] => {
            Route::Channel(id(channel, "channel_id", "/channels/{channel.id}")?)
        }
        ["channels", channel, "messages"] => Route::Messages(id(
            channel,
            "channel_id",
            "/channels/{channel.id}/messages",
        )?),
        ["channels", channel, "messages", message] => {
            let template = "/channels/{channel.id}/messages/{message.id}";
            Route::Message(
                id(channel, "channel_id", template)?,
                id(message, "message_id", template)?,
            )
        }
        ["applications", application, "commands"] => Route::Commands(id(
            application,
            "application_id",
            "/applications/{application.id}/commands",
        )?),
        ["applications", application, "commands", command] => {
            let template = "/applications/{application.id}/commands/{command.id}";
            Route::Command(
                id(application, "application_id", template)?,
                id(command, "command_id", template)?,
            )
        }
        ["interactions", interaction, token, "callback"] => Route::Callback(
            id(
                interaction,
                "interaction_id",
                "/interactions/{interaction.id}/{interaction.token}/callback",
            )?,
            (*token).to_owned(),
        ),
        ["webhooks", application, token] => Route::Webhook(
            id(
                application,
                "webhook_id",
                "/webhooks/{application.id}/{interaction.token}",
            )?,
            (*token).to_owned(),
        ),
        ["webhooks", application, token, "messages", message] => {
            let template = "/webhooks/{application.id}/{interaction.token}/messages/{message.id}";
            let application = id(application, "webhook_id", template)?;
            let message = if *message == "@original" {
                None
            } else {
                Some(id(message, "message_id", template)?)
            };
            Route::WebhookMessage(application, (*token).to_owned(), message)
        }
        _ => return Err(Box::new((path.to_owned(), Reply::api(api::NOT_FOUND)))),
    };
    Ok(route)
}

/// Mentions in content: `<@id>` and `<@!id>`.
fn mentioned_ids(content: &str) -> Vec<u64> {
    let mut ids = Vec::new();
    let mut rest = content;
    while let Some(start) = rest.find("<@") {
        rest = &rest[start + 2..];
        let digits = rest.strip_prefix('!').unwrap_or(rest);
        let end = digits
            .find(|c: char| !c.is_ascii_digit())
            .unwrap_or(digits.len());
        if end > 0
            && digits[end..].starts_with('>')
            && let Ok(id) = digits[..end].parse()
            && !ids.contains(&id)
        {
            ids.push(id);
        }
    }
    ids
}

/// Everything the fake knows: users, channels and their messages,
/// interactions and their responses, modals, the gateway, the call log.
/// Tests read it in [`FakeDiscord::wait_for`](super::FakeDiscord::wait_for)
/// closures and through [`FakeDiscord::inspect`](super::FakeDiscord::inspect).
#[derive(Debug)]
pub struct State {
    config: Config,
    users: HashMap<u64, User>,
    channels: HashMap<u64, ChannelEntry>,
    dms: HashMap<u64, u64>,
    no_dms: HashSet<u64>,
    members: HashMap<(u64, u64), Member>,
    joined_ms: u64,
    messages: HashMap<u64, StoredMessage>,
    bot_sent: Vec<u64>,
    interactions: HashMap<u64, Issued>,
    tokens: HashMap<String, u64>,
    modals: HashMap<u64, ModalRecord>,
    commands: Vec<StoredCommand>,
    calls: Vec<Call>,
    limiter: Limiter,
    rate_limited: usize,
    ids: Snowflakes,
    next_token: u64,
    pub(crate) gateway: GatewayState,
    pub(crate) closed: bool,
}

/// Read access for tests.
impl State {
    /// Every request answered so far, in order.
    pub fn calls(&self) -> &[Call] {
        &self.calls
    }

    /// The calls of `method` on `route` (Discord's route template, e.g.
    /// `"/channels/{channel.id}/messages"`).
    pub fn calls_to(&self, method: &str, route: &str) -> Vec<&Call> {
        self.calls
            .iter()
            .filter(|call| call.is(method, route))
            .collect()
    }

    /// One stored message (deleted ones included).
    pub fn message(&self, id: u64) -> Option<&StoredMessage> {
        self.messages.get(&id)
    }

    /// The messages of a channel in order, ephemeral ones included, deleted
    /// ones left out.
    pub fn messages_in(&self, channel_id: u64) -> Vec<&StoredMessage> {
        self.channels
            .get(&channel_id)
            .map(|entry| {
                entry
                    .messages
                    .iter()
                    .filter_map(|id| self.messages.get(id))
                    .filter(|message| !message.deleted)
                    .collect()
            })
            .unwrap_or_default()
    }

    /// Every message the bot made (channel messages, interaction responses,
    /// follow-ups), in order, as they are now (deleted ones included).
    pub fn bot_messages(&self) -> Vec<&StoredMessage> {
        self.bot_sent
            .iter()
            .filter_map(|id| self.messages.get(id))
            .collect()
    }

    /// A message as the REST API renders it now.
    pub fn message_json(&self, id: u64) -> Option<Value> {
        self.messages
            .get(&id)
            .map(|message| self.render(message, None, 0))
    }

    /// A channel the fake knows.
    pub fn channel(&self, id: u64) -> Option<&Channel> {
        self.channels.get(&id).map(|entry| &entry.channel)
    }

    /// An interaction and how it was answered.
    pub fn interaction(&self, id: u64) -> Option<&InteractionRecord> {
        self.interactions.get(&id).map(|issued| &issued.record)
    }

    /// Every interaction, oldest first.
    pub fn interactions(&self) -> Vec<&InteractionRecord> {
        let mut all: Vec<_> = self
            .interactions
            .values()
            .map(|issued| &issued.record)
            .collect();
        all.sort_by_key(|record| record.id);
        all
    }

    /// The follow-up messages of an interaction, in order.
    pub fn followups(&self, interaction_id: u64) -> Vec<&StoredMessage> {
        self.interaction(interaction_id)
            .map(|record| {
                record
                    .followups
                    .iter()
                    .filter_map(|id| self.messages.get(id))
                    .collect()
            })
            .unwrap_or_default()
    }

    /// The modal opened in answer to interaction `opened_by`.
    pub fn modal(&self, opened_by: u64) -> Option<&ModalRecord> {
        self.modals.get(&opened_by)
    }

    /// The registered global application commands, as `GET
    /// /applications/{application.id}/commands` answers them.
    pub fn commands(&self) -> Vec<&Value> {
        self.commands.iter().map(|command| &command.json).collect()
    }

    /// What `user_id` was shown privately, oldest first: ephemeral
    /// responses and follow-ups, modals, and "This interaction failed" for
    /// interactions without an accepted response past the deadline.
    pub fn notices_for(&self, user_id: u64) -> Vec<Notice> {
        let now = Instant::now();
        let mut issued: Vec<&Issued> = self
            .interactions
            .values()
            .filter(|issued| issued.record.user.id == user_id)
            .collect();
        issued.sort_by_key(|issued| issued.record.id);
        let mut notices = Vec::new();
        for issued in issued {
            let record = &issued.record;
            let mut shown = HashSet::new();
            let response_message = record.response.as_ref().and_then(|r| r.message_id);
            for id in response_message.iter().chain(&record.followups) {
                let Some(message) = self.messages.get(id) else {
                    continue;
                };
                if message.ephemeral_to == Some(user_id) && shown.insert(*id) {
                    notices.push(Notice {
                        kind: NoticeKind::Ephemeral,
                        interaction_id: record.id,
                        message_id: Some(*id),
                        text: message.content.clone(),
                    });
                }
            }
            if let Some(modal) = self.modals.get(&record.id) {
                notices.push(Notice {
                    kind: NoticeKind::Modal,
                    interaction_id: record.id,
                    message_id: None,
                    text: modal.title.clone(),
                });
            }
            let late = issued.expired || now.duration_since(issued.created) > self.config.deadline;
            if record.response.is_none() && late && record.kind != InteractionKind::Ping {
                notices.push(Notice {
                    kind: NoticeKind::InteractionFailed,
                    interaction_id: record.id,
                    message_id: None,
                    text: "This interaction failed".to_owned(),
                });
            }
        }
        notices
    }

    /// The gateway's counters.
    pub fn gateway_stats(&self) -> &GatewayStats {
        &self.gateway.stats
    }

    /// The current gateway session, if a client identified.
    pub fn session_id(&self) -> Option<&str> {
        self.gateway.current_session()
    }

    /// How many `429 Too Many Requests` the fake returned.
    pub fn rate_limited_count(&self) -> usize {
        self.rate_limited
    }

    /// The rate limits in force.
    pub fn rate_limits(&self) -> RateLimits {
        self.config.rate_limits
    }

    /// The bot's own user.
    pub fn bot_user(&self) -> &User {
        &self.config.bot
    }

    /// The application id.
    pub fn application_id(&self) -> u64 {
        self.config.application_id
    }
}

impl State {
    pub(crate) fn new(config: Config) -> State {
        let gateway = GatewayState::new(config.heartbeat_interval_ms);
        let mut users = HashMap::new();
        users.insert(config.bot.id, config.bot.clone());
        State {
            config,
            users,
            channels: HashMap::new(),
            dms: HashMap::new(),
            no_dms: HashSet::new(),
            members: HashMap::new(),
            joined_ms: unix_ms().saturating_sub(86_400_000),
            messages: HashMap::new(),
            bot_sent: Vec::new(),
            interactions: HashMap::new(),
            tokens: HashMap::new(),
            modals: HashMap::new(),
            commands: Vec::new(),
            calls: Vec::new(),
            limiter: Limiter::default(),
            rate_limited: 0,
            ids: Snowflakes::default(),
            next_token: 0,
            gateway,
            closed: false,
        }
    }

    pub(crate) fn set_rate_limits(&mut self, limits: RateLimits) {
        self.config.rate_limits = limits;
    }

    pub(crate) fn set_deadline(&mut self, deadline: Duration) {
        self.config.deadline = deadline;
    }

    pub(crate) fn signer(&self) -> &InteractionSigner {
        &self.config.signer
    }

    pub(crate) fn record_call(
        &mut self,
        request: &RestRequest,
        path: String,
        route: String,
        reply: &Reply,
    ) {
        let body = match &request.body {
            None => Value::Null,
            Some(Ok(body)) => body.clone(),
            Some(Err(text)) => Value::String(text.clone()),
        };
        self.calls.push(Call {
            method: request.method.clone(),
            path,
            route,
            query: request.query.clone(),
            body,
            status: reply.status,
            response: reply.body.clone().unwrap_or(Value::Null),
        });
    }

    pub(crate) fn describe_calls(&self) -> String {
        if self.calls.is_empty() {
            return "  (no calls)".to_owned();
        }
        self.calls
            .iter()
            .enumerate()
            .map(|(index, call)| {
                let mut body = call.body.to_string();
                if body.len() > 300 {
                    let mut cut = 300;
                    while !body.is_char_boundary(cut) {
                        cut -= 1;
                    }
                    body.truncate(cut);
                    body.push('…');
                }
                let outcome = match call.error_message() {
                    Some(message) => format!("{} {message}", call.status),
                    None => call.status.to_string(),
                };
                format!(
                    "  #{index} {} {} -> {outcome} {body}",
                    call.method, call.path
                )
            })
            .collect::<Vec<_>>()
            .join("\n")
    }

    fn authorized(&self, header: Option<&str>) -> bool {
        header
            .and_then(|header| header.strip_prefix("Bot "))
            .is_some_and(|token| token == self.config.token)
    }

    /// Answers a REST request for `path` (below `/api/v10`); returns the
    /// route template for the call log.
    pub(crate) fn rest(
        &mut self,
        request: &RestRequest,
        path: &str,
        now: Instant,
    ) -> (String, Reply) {
        let route = match parse_route(path) {
            Ok(route) => route,
            Err(error) => return *error,
        };
        let template = route.template().to_owned();
        let method = request.method.as_str();
        if !route.methods().contains(&method) {
            return (template, Reply::api(api::METHOD_NOT_ALLOWED));
        }
        let auth = route.auth();
        if auth == Auth::Bot && !self.authorized(request.authorization.as_deref()) {
            return (template, Reply::api(api::UNAUTHORIZED));
        }
        let body = match &request.body {
            None => Value::Null,
            Some(Ok(body)) => body.clone(),
            Some(Err(_)) => return (template, Reply::api(api::INVALID_JSON)),
        };
        let bucket = match (&route, method) {
            (Route::Messages(channel), "POST") => Some(Bucket::MessageCreate(*channel)),
            (Route::Message(channel, _), "PATCH") => Some(Bucket::MessageEdit(*channel)),
            _ => None,
        };
        let unix_secs = unix_ms() as f64 / 1000.0;
        let limits = self.config.rate_limits;
        let headers = match self
            .limiter
            .check(&limits, bucket, auth == Auth::Bot, now, unix_secs)
        {
            Ok(headers) => headers,
            Err(limited) => {
                self.rate_limited += 1;
                return (
                    template,
                    Reply::rate_limited(limited.retry_after, limited.global, limited.headers),
                );
            }
        };
        let query = request.query.as_deref();
        let mut reply = match (route, method) {
            (Route::Gateway, _) => Reply::ok(json!({ "url": self.config.ws_url })),
            (Route::GatewayBot, _) => Reply::ok(json!({
                "url": self.config.ws_url,
                "shards": 1,
                "session_start_limit": {
                    "total": 1000,
                    "remaining": 1000_usize.saturating_sub(self.gateway.stats.identifies),
                    "reset_after": 86_400_000,
                    "max_concurrency": 1,
                },
            })),
            (Route::Me, _) => Reply::ok(self.current_user_json()),
            (Route::Application, _) => Reply::ok(self.application_json()),
            (Route::DmChannels, _) => self.create_dm(&body),
            (Route::Channel(channel), _) => match self.bot_channel(channel) {
                Ok(channel) => Reply::ok(channel.to_json()),
                Err(reply) => reply,
            },
            (Route::Messages(channel), "POST") => self.create_message(channel, &body),
            (Route::Messages(channel), _) => self.list_messages(channel, query),
            (Route::Message(channel, message), "GET") => self.get_message(channel, message),
            (Route::Message(channel, message), "PATCH") => {
                self.edit_message(channel, message, &body)
            }
            (Route::Message(channel, message), _) => self.delete_message(channel, message),
            (Route::Callback(interaction, token), _) => {
                let with_response = query.is_some_and(|query| {
                    query
                        .split('&')
                        .any(|pair| pair.eq_ignore_ascii_case("with_response=true"))
                });
                self.callback(interaction, &token, &body, now, false, with_response)
            }
            (Route::Commands(application), "GET") => self.list_commands(application),
            (Route::Commands(application), "PUT") => self.overwrite_commands(application, &body),
            (Route::Commands(application), _) => self.create_command(application, &body),
            (Route::Command(application, command), "GET") => self.get_command(application, command),
            (Route::Command(application, command), "PATCH") => {
                self.edit_command(application, command, &body)
            }
            (Route::Command(application, command), _) => self.delete_command(application, command),
            (Route::Webhook(application, token), _) => {
                self.followup(application, &token, &body, now)
            }
            (Route::WebhookMessage(application, token, message), method) => {
                self.webhook_message(application, &token, message, method, &body, now)
            }
        };
        reply.headers.extend(headers);
        (template, reply)
    }

    fn current_user_json(&self) -> Value {
        let mut user = self.config.bot.to_json();
        if let Value::Object(object) = &mut user {
            object.insert("bot".into(), json!(true));
            object.insert("verified".into(), json!(true));
            object.insert("mfa_enabled".into(), json!(false));
            object.insert("email".into(), Value::Null);
            object.insert("locale".into(), json!("en-US"));
        }
        user
    }

    fn application_json(&self) -> Value {
        json!({
            "id": self.config.application_id.to_string(),
            "name": self.config.bot.username,
            "icon": null,
            "description": "",
            "summary": "",
            "type": null,
            "bot_public": true,
            "bot_require_code_grant": false,
            "verify_key": self.config.signer.public_key_hex(),
            "flags": self.config.application_flags,
            "team": null,
            "owner": null,
            "bot": self.current_user_json(),
            "rpc_origins": [],
            "tags": [],
            "redirect_uris": [],
            "interactions_endpoint_url": null,
            "role_connections_verification_url": null,
            "approximate_guild_count": self
                .channels
                .values()
                .filter_map(|entry| entry.channel.guild_id)
                .collect::<HashSet<_>>()
                .len(),
        })
    }

    fn bot_channel(&self, channel_id: u64) -> Result<&Channel, Reply> {
        let entry = self
            .channels
            .get(&channel_id)
            .ok_or_else(|| Reply::api(api::UNKNOWN_CHANNEL))?;
        if entry.denied {
            return Err(Reply::api(api::MISSING_ACCESS));
        }
        Ok(&entry.channel)
    }

    fn create_dm(&mut self, body: &Value) -> Reply {
        let path = ["recipient_id".to_owned()];
        let Some(raw) = body.get("recipient_id").filter(|raw| !raw.is_null()) else {
            return Reply::form(&[form::required(&path)]);
        };
        let Some(user_id) = snowflake(raw) else {
            let text = raw.as_str().map_or_else(|| raw.to_string(), str::to_owned);
            return Reply::form(&[form::not_snowflake(&path, &text)]);
        };
        let user = self
            .users
            .get(&user_id)
            .cloned()
            .unwrap_or_else(|| User::new(user_id, format!("user{user_id}")));
        self.users.insert(user_id, user.clone());
        let channel_id = self.dm_channel(&user);
        match self.channel(channel_id) {
            Some(channel) => Reply::ok(channel.to_json()),
            None => Reply::api(api::UNKNOWN_CHANNEL),
        }
    }

    fn create_message(&mut self, channel_id: u64, body: &Value) -> Reply {
        let channel = match self.bot_channel(channel_id) {
            Ok(channel) => channel.clone(),
            Err(reply) => return reply,
        };
        if let Some(recipient) = &channel.recipient
            && self.no_dms.contains(&recipient.id)
        {
            return Reply::api(api::CANNOT_DM);
        }
        let mut errors = validate::message(body, &[]);
        let reference = self.reference_of(body, channel_id, &mut errors);
        if !errors.is_empty() {
            return Reply::form(&errors);
        }
        let parts = Parts::from_body(body);
        if parts.is_empty() && !has_other_content(body) {
            return Reply::api(api::EMPTY_MESSAGE);
        }
        let flags = u64_field(body, "flags").unwrap_or(0) & CREATE_FLAGS;
        let bot = self.config.bot.clone();
        let id = self.store_message(&channel, bot, true, parts, flags, reference, None);
        self.dispatch(Pending::MessageCreate(id));
        self.reply_message(id)
    }

    /// The `message_reference` of a body, checked: it must name a message
    /// of this channel (unless `fail_if_not_exists` is false).
    fn reference_of(
        &self,
        body: &Value,
        channel_id: u64,
        errors: &mut Vec<FieldError>,
    ) -> Option<u64> {
        let reference = body.get("message_reference").filter(|r| !r.is_null())?;
        let message_id = reference.get("message_id").and_then(snowflake)?;
        let in_channel = reference
            .get("channel_id")
            .and_then(snowflake)
            .unwrap_or(channel_id);
        let exists = self.messages.get(&message_id).is_some_and(|message| {
            message.channel_id == channel_id
                && in_channel == channel_id
                && !message.deleted
                && message.ephemeral_to.is_none()
        });
        if exists {
            return Some(message_id);
        }
        if reference.get("fail_if_not_exists").and_then(Value::as_bool) != Some(false) {
            errors.push(form::unknown_reply(&["message_reference".to_owned()]));
        }
        None
    }

    #[allow(clippy::too_many_arguments)]
    fn store_message(
        &mut self,
        channel: &Channel,
        author: User,
        from_bot: bool,
        parts: Parts,
        flags: u64,
        reference: Option<u64>,
        interaction: Option<(u64, Option<u64>)>,
    ) -> u64 {
        let id = self.ids.next_id();
        let message = StoredMessage {
            id,
            channel_id: channel.id,
            guild_id: channel.guild_id,
            author,
            content: parts.content,
            components: parts.components,
            embeds: parts.embeds,
            flags,
            kind: if reference.is_some() { 19 } else { 0 },
            reference,
            ephemeral_to: interaction.and_then(|(_, to)| to),
            interaction_id: interaction.map(|(id, _)| id),
            webhook_id: interaction.map(|_| self.config.application_id),
            created_ms: snowflake_ms(id),
            edited_ms: None,
            history: Vec::new(),
            deleted: false,
            from_bot,
        };
        self.messages.insert(id, message);
        if let Some(entry) = self.channels.get_mut(&channel.id) {
            entry.messages.push(id);
        }
        if from_bot {
            self.bot_sent.push(id);
        }
        id
    }

    fn reply_message(&self, id: u64) -> Reply {
        match self.messages.get(&id) {
            Some(message) => Reply::ok(self.render(message, None, 0)),
            None => Reply::api(api::UNKNOWN_MESSAGE),
        }
    }

    /// A message the bot can read in a channel: not deleted, not ephemeral.
    fn channel_message(&self, channel_id: u64, message_id: u64) -> Result<&StoredMessage, Reply> {
        self.bot_channel(channel_id)?;
        self.messages
            .get(&message_id)
            .filter(|message| {
                message.channel_id == channel_id
                    && !message.deleted
                    && message.ephemeral_to.is_none()
            })
            .ok_or_else(|| Reply::api(api::UNKNOWN_MESSAGE))
    }

    fn get_message(&self, channel_id: u64, message_id: u64) -> Reply {
        match self.channel_message(channel_id, message_id) {
            Ok(message) => Reply::ok(self.render(message, None, 0)),
            Err(reply) => reply,
        }
    }

    fn list_messages(&self, channel_id: u64, query: Option<&str>) -> Reply {
        if let Err(reply) = self.bot_channel(channel_id) {
            return reply;
        }
        let limit = query
            .into_iter()
            .flat_map(|query| query.split('&'))
            .find_map(|pair| pair.strip_prefix("limit="))
            .and_then(|limit| limit.parse::<usize>().ok())
            .unwrap_or(50)
            .clamp(1, MAX_LIST);
        let listed: Vec<Value> = self
            .messages_in(channel_id)
            .into_iter()
            .rev()
            .filter(|message| message.ephemeral_to.is_none())
            .take(limit)
            .map(|message| self.render(message, None, 0))
            .collect();
        Reply::ok(Value::Array(listed))
    }

    fn edit_message(&mut self, channel_id: u64, message_id: u64, body: &Value) -> Reply {
        match self.channel_message(channel_id, message_id) {
            Ok(message) if !message.from_bot => return Reply::api(api::NOT_AUTHOR),
            Ok(_) => {}
            Err(reply) => return reply,
        }
        if let Err(reply) = self.apply_edit(message_id, body, &[]) {
            return reply;
        }
        self.reply_message(message_id)
    }

    fn delete_message(&mut self, channel_id: u64, message_id: u64) -> Reply {
        let (from_bot, in_dm) = match self.channel_message(channel_id, message_id) {
            Ok(message) => (message.from_bot, message.guild_id.is_none()),
            Err(reply) => return reply,
        };
        if !from_bot && in_dm {
            return Reply::api(api::MISSING_PERMISSIONS);
        }
        if let Some(message) = self.messages.get_mut(&message_id) {
            message.deleted = true;
        }
        Reply::no_content()
    }

    /// Applies an edit body (fields present replace, `null` clears) to a
    /// message, with Discord's checks; keeps the old version in `history`.
    fn apply_edit(&mut self, message_id: u64, body: &Value, base: &[String]) -> Result<(), Reply> {
        let errors = validate::message(body, base);
        if !errors.is_empty() {
            return Err(Reply::form(&errors));
        }
        let Some(message) = self.messages.get(&message_id) else {
            return Err(Reply::api(api::UNKNOWN_MESSAGE));
        };
        let content = match body.get("content") {
            None => message.content.clone(),
            Some(Value::Null) => String::new(),
            Some(Value::String(text)) => text.clone(),
            Some(other) => other.to_string(),
        };
        let replace = |key: &str, old: &[Value]| match body.get(key) {
            None => old.to_vec(),
            Some(value) => value.as_array().cloned().unwrap_or_default(),
        };
        let parts = Parts {
            content,
            components: replace("components", &message.components),
            embeds: replace("embeds", &message.embeds),
        };
        if parts.is_empty() && !has_other_content(body) {
            return Err(Reply::api(api::EMPTY_MESSAGE));
        }
        let now = unix_ms();
        let mut flags = message.flags & !LOADING;
        if let Some(new_flags) = u64_field(body, "flags") {
            flags = (flags & !(1 << 2)) | (new_flags & (1 << 2));
        }
        if let Some(message) = self.messages.get_mut(&message_id) {
            message.history.push(Revision {
                content: std::mem::take(&mut message.content),
                components: std::mem::take(&mut message.components),
                replaced_at_ms: now,
            });
            message.content = parts.content;
            message.components = parts.components;
            message.embeds = parts.embeds;
            message.flags = flags;
            message.edited_ms = Some(now);
        }
        Ok(())
    }

    /// A message object. `intents`: rendered for a gateway session with
    /// these intents (content emptied without MESSAGE_CONTENT, except in
    /// DMs, the bot's own messages, and messages mentioning the bot).
    fn render(&self, message: &StoredMessage, intents: Option<u64>, depth: u8) -> Value {
        let mentions = mentioned_ids(&message.content);
        let keep_content = intents.is_none_or(|intents| {
            intents & MESSAGE_CONTENT != 0
                || message.guild_id.is_none()
                || message.author.id == self.config.bot.id
                || mentions.contains(&self.config.bot.id)
        });
        let mention_users: Vec<Value> = mentions
            .iter()
            .map(|id| {
                let user = self
                    .users
                    .get(id)
                    .cloned()
                    .unwrap_or_else(|| User::new(*id, format!("user{id}")));
                let mut json = user.to_json();
                if intents.is_some()
                    && let (Some(guild_id), Value::Object(object)) = (message.guild_id, &mut json)
                {
                    object.insert("member".into(), self.member_json(guild_id, *id));
                }
                json
            })
            .collect();
        let mut object = Map::new();
        object.insert("id".into(), json!(message.id.to_string()));
        object.insert("channel_id".into(), json!(message.channel_id.to_string()));
        object.insert("author".into(), message.author.to_json());
        let (content, components, embeds) = if keep_content {
            (
                message.content.clone(),
                message.components.clone(),
                message.embeds.clone(),
            )
        } else {
            (String::new(), Vec::new(), Vec::new())
        };
        object.insert("content".into(), json!(content));
        object.insert("timestamp".into(), json!(iso8601(message.created_ms)));
        object.insert(
            "edited_timestamp".into(),
            json!(message.edited_ms.map(iso8601)),
        );
        object.insert("tts".into(), json!(false));
        object.insert("mention_everyone".into(), json!(false));
        object.insert("mentions".into(), json!(mention_users));
        object.insert("mention_roles".into(), json!([]));
        object.insert("attachments".into(), json!([]));
        object.insert("embeds".into(), json!(embeds));
        object.insert("pinned".into(), json!(false));
        object.insert("type".into(), json!(message.kind));
        object.insert("flags".into(), json!(message.flags));
        object.insert("components".into(), json!(components));
        if let Some(webhook_id) = message.webhook_id {
            object.insert("webhook_id".into(), json!(webhook_id.to_string()));
            object.insert(
                "application_id".into(),
                json!(self.config.application_id.to_string()),
            );
        }
        if let Some(reference) = message.reference {
            let mut reference_json = json!({
                "type": 0,
                "message_id": reference.to_string(),
                "channel_id": message.channel_id.to_string(),
            });
            if let (Some(guild_id), Value::Object(object)) = (message.guild_id, &mut reference_json)
            {
                object.insert("guild_id".into(), json!(guild_id.to_string()));
            }
            object.insert("message_reference".into(), reference_json);
            if depth == 0 {
                let referenced = self
                    .messages
                    .get(&reference)
                    .filter(|referenced| !referenced.deleted)
                    .map_or(Value::Null, |referenced| {
                        self.render(referenced, intents, depth + 1)
                    });
                object.insert("referenced_message".into(), referenced);
            }
        }
        if intents.is_some()
            && depth == 0
            && let Some(guild_id) = message.guild_id
        {
            object.insert("guild_id".into(), json!(guild_id.to_string()));
            object.insert(
                "member".into(),
                self.member_json(guild_id, message.author.id),
            );
        }
        Value::Object(object)
    }

    fn member(&self, guild_id: u64, user_id: u64) -> Member {
        self.members
            .get(&(guild_id, user_id))
            .cloned()
            .unwrap_or_default()
    }

    fn member_json(&self, guild_id: u64, user_id: u64) -> Value {
        self.member(guild_id, user_id).partial_json(self.joined_ms)
    }

    /// A MESSAGE_CREATE payload for a session with `intents`, or `None` if
    /// the session did not ask for it (GUILD_MESSAGES / DIRECT_MESSAGES).
    fn gateway_message(&self, message: &StoredMessage, intents: u64) -> Option<Value> {
        let needed = if message.guild_id.is_some() {
            GUILD_MESSAGES
        } else {
            DIRECT_MESSAGES
        };
        (intents & needed != 0).then(|| self.render(message, Some(intents), 0))
    }

    fn render_pending(&self, pending: &Pending, intents: u64) -> Option<(String, Value)> {
        match pending {
            Pending::MessageCreate(id) => {
                let message = self.messages.get(id)?;
                let data = self.gateway_message(message, intents)?;
                Some(("MESSAGE_CREATE".to_owned(), data))
            }
            Pending::Interaction(body) => Some(("INTERACTION_CREATE".to_owned(), body.clone())),
            Pending::Raw(name, data) => Some((name.clone(), data.clone())),
        }
    }

    /// Sends a dispatch to the current gateway session (or keeps it for the
    /// first one); returns its sequence number if a session got it.
    pub(crate) fn dispatch(&mut self, pending: Pending) -> Option<u64> {
        match self.gateway.current_intents() {
            None => {
                self.gateway.backlog.push(pending);
                None
            }
            Some(intents) => {
                let (name, data) = self.render_pending(&pending, intents)?;
                self.gateway.push(&name, data)
            }
        }
    }

    /// A payload from a gateway client.
    pub(crate) fn gateway_receive(&mut self, conn: u64, text: &str) {
        let token = self.config.token.clone();
        let Some(identify) = self.gateway.receive(conn, text, &token) else {
            return;
        };
        let backlog = std::mem::take(&mut self.gateway.backlog);
        let rendered = backlog
            .iter()
            .filter_map(|pending| self.render_pending(pending, identify.intents))
            .collect();
        let ready = ReadyInfo {
            user: self.current_user_json(),
            application: json!({
                "id": self.config.application_id.to_string(),
                "flags": self.config.application_flags,
            }),
            resume_gateway_url: self.config.ws_url.clone(),
        };
        self.gateway.start_session(identify, ready, rendered);
    }
}

/// Test controls and injected events.
impl State {
    pub(crate) fn add_user(&mut self, user: &User) {
        self.users.insert(user.id, user.clone());
    }

    pub(crate) fn add_channel(&mut self, channel: &Channel) {
        if let Some(recipient) = &channel.recipient {
            self.users.insert(recipient.id, recipient.clone());
            self.dms.insert(recipient.id, channel.id);
        }
        self.channels
            .entry(channel.id)
            .and_modify(|entry| entry.channel = channel.clone())
            .or_insert_with(|| ChannelEntry {
                channel: channel.clone(),
                messages: Vec::new(),
                denied: false,
            });
    }

    /// The DM channel with `user`, made on first use (stable id).
    pub(crate) fn dm_channel(&mut self, user: &User) -> u64 {
        self.users.entry(user.id).or_insert_with(|| user.clone());
        if let Some(id) = self.dms.get(&user.id) {
            return *id;
        }
        let id = self.ids.next_id();
        self.add_channel(&Channel::dm(id, user));
        id
    }

    pub(crate) fn set_member(&mut self, guild_id: u64, user: &User, member: Member) {
        self.users.insert(user.id, user.clone());
        self.members.insert((guild_id, user.id), member);
    }

    pub(crate) fn set_access(&mut self, channel_id: u64, allowed: bool) {
        if let Some(entry) = self.channels.get_mut(&channel_id) {
            entry.denied = !allowed;
        }
    }

    pub(crate) fn set_dms_allowed(&mut self, user_id: u64, allowed: bool) {
        if allowed {
            self.no_dms.remove(&user_id);
        } else {
            self.no_dms.insert(user_id);
        }
    }

    pub(crate) fn expire_interaction(&mut self, id: u64) {
        if let Some(issued) = self.interactions.get_mut(&id) {
            issued.expired = true;
        }
    }

    fn known_channel(&self, channel_id: u64, what: &str) -> Channel {
        self.channels
            .get(&channel_id)
            .map(|entry| entry.channel.clone())
            .unwrap_or_else(|| {
                panic!(
                    "{what}: channel {channel_id} is unknown; register it with add_channel \
                     (or use dm_channel)"
                )
            })
    }

    pub(crate) fn inject_message(&mut self, incoming: IncomingMessage) -> u64 {
        let channel = self.known_channel(incoming.channel_id, "inject_message");
        if let Some(recipient) = &channel.recipient {
            assert_eq!(
                recipient.id, incoming.author.id,
                "inject_message: only {} can write in the DM channel {}",
                recipient.username, channel.id
            );
        }
        if let Some(reply_to) = incoming.reply_to {
            let found = self.messages.get(&reply_to).is_some_and(|message| {
                message.channel_id == channel.id
                    && !message.deleted
                    && message.ephemeral_to.is_none()
            });
            assert!(
                found,
                "inject_message: message {reply_to} is not in channel {}",
                channel.id
            );
        }
        self.users
            .insert(incoming.author.id, incoming.author.clone());
        let parts = Parts {
            content: incoming.content,
            ..Parts::default()
        };
        let id = self.store_message(
            &channel,
            incoming.author,
            false,
            parts,
            0,
            incoming.reply_to,
            None,
        );
        self.dispatch(Pending::MessageCreate(id));
        id
    }

    pub(crate) fn inject_raw(&mut self, name: &str, data: Value) -> Option<u64> {
        self.dispatch(Pending::Raw(name.to_owned(), data))
    }

    /// A button press or select choice on `message_id`.
    pub(crate) fn press(
        &mut self,
        user: &User,
        message_id: u64,
        press: Press<'_>,
        via_gateway: bool,
    ) -> HttpInteraction {
        let message = self
            .messages
            .get(&message_id)
            .filter(|message| !message.deleted)
            .cloned()
            .unwrap_or_else(|| panic!("press: no message {message_id}"));
        if let Some(owner) = message.ephemeral_to {
            assert_eq!(
                owner, user.id,
                "press: message {message_id} is ephemeral, shown only to user {owner}"
            );
        }
        let custom_id = match press {
            Press::Button(id) | Press::Select(id, _) => id,
        };
        let component = message.component(custom_id).cloned().unwrap_or_else(|| {
            panic!(
                "press: message {message_id} has no component {custom_id:?}; its custom ids: {:?}",
                message.custom_ids()
            )
        });
        assert!(
            component.get("disabled").and_then(Value::as_bool) != Some(true),
            "press: component {custom_id:?} of message {message_id} is disabled"
        );
        let (kind, values, data) = match press {
            Press::Button(_) => {
                assert_eq!(
                    u64_field(&component, "type"),
                    Some(kind::BUTTON),
                    "press_button: {custom_id:?} is not a button"
                );
                let style = u64_field(&component, "style").unwrap_or(0);
                assert!(
                    style != LINK_STYLE && style != PREMIUM_STYLE,
                    "press_button: link and premium buttons send no interaction"
                );
                (
                    InteractionKind::Button,
                    Vec::new(),
                    json!({ "custom_id": custom_id, "component_type": 2 }),
                )
            }
            Press::Select(_, values) => {
                assert_eq!(
                    u64_field(&component, "type"),
                    Some(kind::STRING_SELECT),
                    "choose: {custom_id:?} is not a string select"
                );
                let options = message.select_options(custom_id);
                for value in values {
                    assert!(
                        options.iter().any(|(_, option)| option == value),
                        "choose: {value:?} is not an option of {custom_id:?}; options: {options:?}"
                    );
                }
                let min = u64_field(&component, "min_values").unwrap_or(1) as usize;
                let max = u64_field(&component, "max_values").unwrap_or(1) as usize;
                assert!(
                    (min..=max).contains(&values.len()),
                    "choose: {custom_id:?} takes {min} to {max} values, not {}",
                    values.len()
                );
                let values: Vec<String> = values.iter().map(|value| (*value).to_owned()).collect();
                let data = json!({ "custom_id": custom_id, "component_type": 3, "values": values });
                (InteractionKind::StringSelect, values, data)
            }
        };
        let spec = NewInteraction {
            kind,
            channel_id: message.channel_id,
            message_id: Some(message_id),
            custom_id: custom_id.to_owned(),
            values,
            fields: Vec::new(),
            command: None,
            data,
        };
        self.create_interaction(user, spec, via_gateway)
    }

    /// Submits the modal opened in answer to `opened_by`.
    pub(crate) fn submit_modal(
        &mut self,
        user: &User,
        opened_by: u64,
        fields: &[(&str, &str)],
        via_gateway: bool,
    ) -> HttpInteraction {
        let modal = self
            .modals
            .get(&opened_by)
            .cloned()
            .unwrap_or_else(|| panic!("submit_modal: interaction {opened_by} opened no modal"));
        assert!(
            modal.submitted_as.is_none(),
            "submit_modal: the modal of interaction {opened_by} was already submitted"
        );
        assert_eq!(
            modal.user_id, user.id,
            "submit_modal: the modal was shown to user {}",
            modal.user_id
        );
        let opener = self
            .interaction(opened_by)
            .cloned()
            .unwrap_or_else(|| panic!("submit_modal: no interaction {opened_by}"));
        let inputs = modal.inputs();
        for (id, _) in fields {
            assert!(
                inputs
                    .iter()
                    .any(|input| str_field(input, "custom_id") == Some(id)),
                "submit_modal: the modal has no text input {id:?}"
            );
        }
        let mut rows = Vec::new();
        let mut submitted = Vec::new();
        for input in inputs {
            let id = str_field(input, "custom_id").unwrap_or_default();
            let value = fields
                .iter()
                .find(|(field, _)| *field == id)
                .map(|(_, value)| (*value).to_owned())
                .unwrap_or_default();
            let length = char_len(&value) as u64;
            let required = input.get("required").and_then(Value::as_bool) != Some(false);
            assert!(
                !required || !value.is_empty(),
                "submit_modal: text input {id:?} is required"
            );
            if !value.is_empty() {
                let min = u64_field(input, "min_length").unwrap_or(0);
                let max = u64_field(input, "max_length").unwrap_or(validate::MAX_INPUT_VALUE);
                assert!(
                    (min..=max).contains(&length),
                    "submit_modal: text input {id:?} takes {min} to {max} characters, not {length}"
                );
            }
            rows.push(json!({
                "type": 1,
                "components": [{ "type": 4, "custom_id": id, "value": value }],
            }));
            submitted.push((id.to_owned(), value));
        }
        let data = json!({ "custom_id": modal.custom_id, "components": rows });
        let spec = NewInteraction {
            kind: InteractionKind::ModalSubmit,
            channel_id: opener.channel_id,
            message_id: opener.message_id,
            custom_id: modal.custom_id.clone(),
            values: Vec::new(),
            fields: submitted,
            command: None,
            data,
        };
        let made = self.create_interaction(user, spec, via_gateway);
        if let Some(modal) = self.modals.get_mut(&opened_by) {
            modal.submitted_as = Some(made.id);
        }
        made
    }

    /// `user` uses the CHAT_INPUT command `name` in `channel_id`.
    pub(crate) fn use_command(
        &mut self,
        user: &User,
        channel_id: u64,
        name: &str,
        via_gateway: bool,
    ) -> HttpInteraction {
        let command = self
            .commands
            .iter()
            .find(|command| command.kind == command_kind::CHAT_INPUT && command.name == name)
            .cloned()
            .unwrap_or_else(|| {
                let names: Vec<&str> = self
                    .commands
                    .iter()
                    .filter(|command| command.kind == command_kind::CHAT_INPUT)
                    .map(|command| command.name.as_str())
                    .collect();
                panic!(
                    "use_command: no slash command {name:?} is registered, so Discord would not \
                     offer it; registered: {names:?}"
                )
            });
        let channel = self.known_channel(channel_id, "use_command");
        if let Some(recipient) = &channel.recipient {
            assert_eq!(
                recipient.id, user.id,
                "use_command: only {} can use commands in the DM channel {}",
                recipient.username, channel.id
            );
        }
        // GUILD (0) or BOT_DM (1): where the Discord client offers it.
        let context = if channel.guild_id.is_some() { 0 } else { 1 };
        match command.json.get("contexts").and_then(Value::as_array) {
            Some(contexts) => assert!(
                contexts.iter().any(|item| item.as_u64() == Some(context)),
                "use_command: /{name} is not offered in interaction context {context}; its \
                 contexts are {contexts:?}"
            ),
            None => assert!(
                context == 0 || command.json.get("dm_permission") != Some(&json!(false)),
                "use_command: /{name} has dm_permission false: not offered in DMs"
            ),
        }
        if let Some(guild_id) = channel.guild_id {
            let permissions = self.member(guild_id, user.id).permissions;
            let required = command
                .json
                .get("default_member_permissions")
                .and_then(Value::as_str)
                .and_then(|bits| bits.parse::<u64>().ok())
                .unwrap_or(0)
                | USE_APPLICATION_COMMANDS;
            assert!(
                permissions & ADMINISTRATOR != 0 || permissions & required == required,
                "use_command: {} may not use /{name} in guild {guild_id}: it needs the \
                 permissions {required}, they have {permissions}",
                user.username
            );
        }
        let spec = NewInteraction {
            kind: InteractionKind::Command,
            channel_id,
            message_id: None,
            custom_id: String::new(),
            values: Vec::new(),
            fields: Vec::new(),
            command: Some(name.to_owned()),
            data: json!({
                "id": command.id.to_string(),
                "name": name,
                "type": command_kind::CHAT_INPUT,
            }),
        };
        self.create_interaction(user, spec, via_gateway)
    }

    /// A PING (type 1) for an HTTP interactions endpoint.
    pub(crate) fn ping(&mut self) -> HttpInteraction {
        let id = self.ids.next_id();
        let token = self.new_token(id);
        let body = json!({
            "id": id.to_string(),
            "application_id": self.config.application_id.to_string(),
            "type": 1,
            "token": token,
            "version": 1,
        });
        let record = InteractionRecord {
            id,
            token: token.clone(),
            kind: InteractionKind::Ping,
            custom_id: String::new(),
            command_name: None,
            values: Vec::new(),
            fields: Vec::new(),
            user: self.config.bot.clone(),
            channel_id: 0,
            guild_id: None,
            message_id: None,
            via_gateway: false,
            created_ms: snowflake_ms(id),
            response: None,
            followups: Vec::new(),
            refused_responses: 0,
        };
        self.register(record);
        HttpInteraction { id, token, body }
    }

    fn new_token(&mut self, id: u64) -> String {
        self.next_token += 1;
        format!("fake-interaction-token-{id}-{}", self.next_token)
    }

    fn register(&mut self, record: InteractionRecord) {
        self.tokens.insert(record.token.clone(), record.id);
        self.interactions.insert(
            record.id,
            Issued {
                record,
                created: Instant::now(),
                expired: false,
            },
        );
    }

    fn create_interaction(
        &mut self,
        user: &User,
        spec: NewInteraction,
        via_gateway: bool,
    ) -> HttpInteraction {
        self.users.insert(user.id, user.clone());
        let channel = self.known_channel(spec.channel_id, "interaction");
        let id = self.ids.next_id();
        let token = self.new_token(id);
        let mut channel_json = channel.to_json();
        let member = channel
            .guild_id
            .map(|guild_id| self.member(guild_id, user.id));
        if let Value::Object(object) = &mut channel_json {
            let permissions = member
                .as_ref()
                .map_or(super::model::DEFAULT_MEMBER_PERMISSIONS, |member| {
                    member.permissions
                });
            object.insert("permissions".into(), json!(permissions.to_string()));
        }
        let mut body = json!({
            "id": id.to_string(),
            "application_id": self.config.application_id.to_string(),
            "type": spec.kind.code(),
            "data": spec.data,
            "channel_id": channel.id.to_string(),
            "channel": channel_json,
            "token": token,
            "version": 1,
            "app_permissions": APP_PERMISSIONS.to_string(),
            "locale": "en-US",
            "entitlements": [],
            "attachment_size_limit": ATTACHMENT_SIZE_LIMIT,
        });
        if let Value::Object(object) = &mut body {
            match (channel.guild_id, &member) {
                (Some(guild_id), Some(member)) => {
                    object.insert("guild_id".into(), json!(guild_id.to_string()));
                    object.insert(
                        "guild".into(),
                        json!({ "id": guild_id.to_string(), "locale": "en-US", "features": [] }),
                    );
                    object.insert("guild_locale".into(), json!("en-US"));
                    object.insert(
                        "member".into(),
                        member.interaction_json(user, self.joined_ms),
                    );
                    object.insert(
                        "authorizing_integration_owners".into(),
                        json!({ "0": guild_id.to_string() }),
                    );
                    object.insert("context".into(), json!(0));
                }
                _ => {
                    object.insert("user".into(), user.to_json());
                    object.insert("authorizing_integration_owners".into(), json!({ "0": "0" }));
                    object.insert("context".into(), json!(1));
                }
            }
            if let Some(message) = spec.message_id.and_then(|id| self.messages.get(&id)) {
                object.insert("message".into(), self.render(message, None, 0));
            }
        }
        let record = InteractionRecord {
            id,
            token: token.clone(),
            kind: spec.kind,
            custom_id: spec.custom_id,
            command_name: spec.command,
            values: spec.values,
            fields: spec.fields,
            user: user.clone(),
            channel_id: channel.id,
            guild_id: channel.guild_id,
            message_id: spec.message_id,
            via_gateway,
            created_ms: snowflake_ms(id),
            response: None,
            followups: Vec::new(),
            refused_responses: 0,
        };
        self.register(record);
        if via_gateway {
            self.dispatch(Pending::Interaction(body.clone()));
        }
        HttpInteraction { id, token, body }
    }
}

/// Global application commands.
impl State {
    fn list_commands(&self, application_id: u64) -> Reply {
        if application_id != self.config.application_id {
            return Reply::api(api::NOT_APPLICATION_OWNER);
        }
        Reply::ok(Value::Array(
            self.commands
                .iter()
                .map(|command| command.json.clone())
                .collect(),
        ))
    }

    /// A stored command for a definition: a new one, or `previous` updated
    /// (same id; a new `version` only if something changed).
    fn make_command(
        &mut self,
        previous: Option<&StoredCommand>,
        kind: u64,
        source: Value,
    ) -> StoredCommand {
        let application_id = self.config.application_id;
        let name = command_name_of(&source);
        if let Some(previous) = previous {
            let json = command_json(application_id, previous.id, previous.version, kind, &source);
            if json == previous.json {
                return StoredCommand {
                    source,
                    ..previous.clone()
                };
            }
        }
        let id = previous.map_or_else(|| self.ids.next_id(), |previous| previous.id);
        let version = self.ids.next_id();
        let json = command_json(application_id, id, version, kind, &source);
        StoredCommand {
            id,
            version,
            kind,
            name,
            source,
            json,
        }
    }

    /// `PUT /applications/{application.id}/commands`: the list replaces
    /// every global command; commands keep their id when named (`id`) or
    /// of the same type and name.
    fn overwrite_commands(&mut self, application_id: u64, body: &Value) -> Reply {
        if application_id != self.config.application_id {
            return Reply::api(api::NOT_APPLICATION_OWNER);
        }
        let Some(list) = body.as_array() else {
            return Reply::form(&[form::not_a_list(&[])]);
        };
        let mut errors = Vec::new();
        let mut names = HashSet::new();
        for (index, item) in list.iter().enumerate() {
            let path = [index.to_string()];
            let item_errors = validate::command(item, &path);
            if item_errors.is_empty() {
                let kind = validate::command_type(item).unwrap_or(command_kind::CHAT_INPUT);
                if !names.insert((kind, command_name_of(item))) {
                    errors.push(form::duplicate_command_name(&path));
                }
            }
            errors.extend(item_errors);
        }
        if !errors.is_empty() {
            return Reply::form(&errors);
        }
        for kind in command_kind::ALL {
            let (limit, error) = command_limit(kind);
            if names.iter().filter(|(of, _)| *of == kind).count() > limit {
                return Reply::api(error);
            }
        }
        let mut claimed = HashSet::new();
        let mut stored = Vec::with_capacity(list.len());
        for item in list {
            let kind = validate::command_type(item).unwrap_or(command_kind::CHAT_INPUT);
            let name = command_name_of(item);
            let free =
                |command: &&StoredCommand| command.kind == kind && !claimed.contains(&command.id);
            let named = item.get("id").and_then(snowflake);
            let previous = self
                .commands
                .iter()
                .filter(free)
                .find(|command| Some(command.id) == named)
                .or_else(|| {
                    self.commands
                        .iter()
                        .filter(free)
                        .find(|command| command.name == name)
                })
                .cloned();
            let command = self.make_command(previous.as_ref(), kind, item.clone());
            claimed.insert(command.id);
            stored.push(command);
        }
        self.commands = stored;
        self.list_commands(application_id)
    }

    /// `POST /applications/{application.id}/commands`: an upsert by type
    /// and name (`201` when new, `200` when it replaced one).
    fn create_command(&mut self, application_id: u64, body: &Value) -> Reply {
        if application_id != self.config.application_id {
            return Reply::api(api::NOT_APPLICATION_OWNER);
        }
        let errors = validate::command(body, &[]);
        if !errors.is_empty() {
            return Reply::form(&errors);
        }
        let kind = validate::command_type(body).unwrap_or(command_kind::CHAT_INPUT);
        let name = command_name_of(body);
        if let Some(index) = self
            .commands
            .iter()
            .position(|command| command.kind == kind && command.name == name)
        {
            let previous = self.commands[index].clone();
            let command = self.make_command(Some(&previous), kind, body.clone());
            let json = command.json.clone();
            self.commands[index] = command;
            return Reply::ok(json);
        }
        let (limit, error) = command_limit(kind);
        if self
            .commands
            .iter()
            .filter(|command| command.kind == kind)
            .count()
            >= limit
        {
            return Reply::api(error);
        }
        let command = self.make_command(None, kind, body.clone());
        let json = command.json.clone();
        self.commands.push(command);
        Reply::created(json)
    }

    fn command_index(&self, application_id: u64, command_id: u64) -> Result<usize, Reply> {
        if application_id != self.config.application_id {
            return Err(Reply::api(api::NOT_APPLICATION_OWNER));
        }
        self.commands
            .iter()
            .position(|command| command.id == command_id)
            .ok_or_else(|| Reply::api(api::UNKNOWN_COMMAND))
    }

    fn get_command(&self, application_id: u64, command_id: u64) -> Reply {
        match self.command_index(application_id, command_id) {
            Ok(index) => Reply::ok(self.commands[index].json.clone()),
            Err(reply) => reply,
        }
    }

    /// `PATCH`: the fields sent replace the command's; its type stays.
    fn edit_command(&mut self, application_id: u64, command_id: u64, body: &Value) -> Reply {
        let index = match self.command_index(application_id, command_id) {
            Ok(index) => index,
            Err(reply) => return reply,
        };
        let Some(changes) = body.as_object() else {
            return Reply::form(&[form::not_a_dict(&[])]);
        };
        let previous = self.commands[index].clone();
        let mut source = previous.source.clone();
        if let Value::Object(fields) = &mut source {
            for (key, value) in changes {
                if key != "type" && key != "id" {
                    fields.insert(key.clone(), value.clone());
                }
            }
        }
        let errors = validate::command(&source, &[]);
        if !errors.is_empty() {
            return Reply::form(&errors);
        }
        let name = command_name_of(&source);
        let taken = self.commands.iter().any(|command| {
            command.id != previous.id && command.kind == previous.kind && command.name == name
        });
        if taken {
            return Reply::api(api::COMMAND_NAME_TAKEN);
        }
        let command = self.make_command(Some(&previous), previous.kind, source);
        let json = command.json.clone();
        self.commands[index] = command;
        Reply::ok(json)
    }

    fn delete_command(&mut self, application_id: u64, command_id: u64) -> Reply {
        match self.command_index(application_id, command_id) {
            Ok(index) => {
                self.commands.remove(index);
                Reply::no_content()
            }
            Err(reply) => reply,
        }
    }
}

/// What a user does to a component.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Press<'a> {
    /// Presses the button with this `custom_id`.
    Button(&'a str),
    /// Picks these values in the string select with this `custom_id`.
    Select(&'a str, &'a [&'a str]),
}

#[derive(Debug)]
struct NewInteraction {
    kind: InteractionKind,
    channel_id: u64,
    message_id: Option<u64>,
    custom_id: String,
    values: Vec<String>,
    fields: Vec<(String, String)>,
    /// The command's name, for APPLICATION_COMMAND interactions.
    command: Option<String>,
    data: Value,
}

/// Interaction responses and webhooks.
impl State {
    fn refuse(&mut self, interaction_id: u64, reply: Reply) -> Reply {
        if let Some(issued) = self.interactions.get_mut(&interaction_id) {
            issued.record.refused_responses += 1;
        }
        reply
    }

    /// The initial response (`POST /interactions/{id}/{token}/callback`, or
    /// the body an HTTP endpoint answered with when `inline`).
    pub(crate) fn callback(
        &mut self,
        interaction_id: u64,
        token: &str,
        body: &Value,
        now: Instant,
        inline: bool,
        with_response: bool,
    ) -> Reply {
        let Some(issued) = self.interactions.get(&interaction_id) else {
            return Reply::api(api::UNKNOWN_INTERACTION);
        };
        if issued.record.token != token {
            return Reply::api(api::UNKNOWN_INTERACTION);
        }
        if issued.record.response.is_some() {
            return self.refuse(interaction_id, Reply::api(api::ALREADY_ACKNOWLEDGED));
        }
        if issued.expired || now.duration_since(issued.created) > self.config.deadline {
            return self.refuse(interaction_id, Reply::api(api::UNKNOWN_INTERACTION));
        }
        let record = issued.record.clone();
        let allowed: &[u64] = match (record.kind, record.message_id) {
            (InteractionKind::Ping, _) => &[1],
            (InteractionKind::Command, _) => &[4, 5, 9],
            (InteractionKind::Button | InteractionKind::StringSelect, _) => &[4, 5, 6, 7, 9],
            (InteractionKind::ModalSubmit, Some(_)) => &[4, 5, 6, 7],
            (InteractionKind::ModalSubmit, None) => &[4, 5],
        };
        let type_path = ["type".to_owned()];
        let Some(callback_type) = u64_field(body, "type") else {
            return self.refuse(interaction_id, Reply::form(&[form::required(&type_path)]));
        };
        if !allowed.contains(&callback_type) {
            return self.refuse(
                interaction_id,
                Reply::form(&[form::choices(&type_path, allowed)]),
            );
        }
        let data = body.get("data").cloned().unwrap_or(Value::Null);
        let outcome = match callback_type {
            1 => Ok(None),
            4 | 5 => self.respond_with_message(&record, &data, callback_type == 5),
            6 => Ok(record.message_id),
            7 => {
                let target = record.message_id.unwrap_or_default();
                self.apply_edit(target, &data, &["data".to_owned()])
                    .map(|()| Some(target))
            }
            _ => self.open_modal(&record, &data).map(|()| None),
        };
        let message_id = match outcome {
            Ok(message_id) => message_id,
            Err(reply) => return self.refuse(interaction_id, reply),
        };
        let response = InteractionResponse {
            kind: callback_type as u8,
            data,
            message_id,
            inline,
        };
        if let Some(issued) = self.interactions.get_mut(&interaction_id) {
            issued.record.response = Some(response);
        }
        if !with_response {
            return Reply::no_content();
        }
        let message = message_id.and_then(|id| self.messages.get(&id));
        let mut resource = json!({ "type": callback_type });
        if let (Some(message), Value::Object(object)) = (message, &mut resource)
            && matches!(callback_type, 4 | 7)
        {
            object.insert("message".into(), self.render(message, None, 0));
        }
        let mut interaction = json!({
            "id": interaction_id.to_string(),
            "type": record.kind.code(),
        });
        if let (Some(message), Value::Object(object)) = (message, &mut interaction)
            && matches!(callback_type, 4 | 5)
        {
            object.insert("response_message_id".into(), json!(message.id.to_string()));
            object.insert(
                "response_message_loading".into(),
                json!(message.is_loading()),
            );
            object.insert(
                "response_message_ephemeral".into(),
                json!(message.is_ephemeral()),
            );
        }
        Reply::ok(json!({ "interaction": interaction, "resource": resource }))
    }

    fn respond_with_message(
        &mut self,
        record: &InteractionRecord,
        data: &Value,
        deferred: bool,
    ) -> Result<Option<u64>, Reply> {
        let flags = u64_field(data, "flags").unwrap_or(0);
        let ephemeral = flags & EPHEMERAL != 0;
        let parts = if deferred {
            Parts::default()
        } else {
            let errors = validate::message(data, &["data".to_owned()]);
            if !errors.is_empty() {
                return Err(Reply::form(&errors));
            }
            let parts = Parts::from_body(data);
            if parts.is_empty() && !has_other_content(data) {
                return Err(Reply::api(api::EMPTY_MESSAGE));
            }
            parts
        };
        let flags = if deferred {
            (flags & EPHEMERAL) | LOADING
        } else {
            flags & (CREATE_FLAGS | EPHEMERAL)
        };
        let channel = self.known_channel(record.channel_id, "interaction response");
        let bot = self.config.bot.clone();
        let audience = ephemeral.then_some(record.user.id);
        let id = self.store_message(
            &channel,
            bot,
            true,
            parts,
            flags,
            record.message_id,
            Some((record.id, audience)),
        );
        if record.kind == InteractionKind::Command
            && let Some(message) = self.messages.get_mut(&id)
        {
            message.kind = CHAT_INPUT_COMMAND_MESSAGE;
        }
        if !ephemeral {
            self.dispatch(Pending::MessageCreate(id));
        }
        Ok(Some(id))
    }

    fn open_modal(&mut self, record: &InteractionRecord, data: &Value) -> Result<(), Reply> {
        let errors = validate::modal(data, &["data".to_owned()]);
        if !errors.is_empty() {
            return Err(Reply::form(&errors));
        }
        self.modals.insert(
            record.id,
            ModalRecord {
                opened_by: record.id,
                user_id: record.user.id,
                custom_id: str_field(data, "custom_id").unwrap_or_default().to_owned(),
                title: str_field(data, "title").unwrap_or_default().to_owned(),
                components: array(data, "components"),
                submitted_as: None,
            },
        );
        Ok(())
    }

    /// The interaction behind a webhook route, checked like Discord: the
    /// application must match, the token be known and fresh, and the
    /// interaction already have its initial response.
    fn webhook_interaction(
        &self,
        application_id: u64,
        token: &str,
        now: Instant,
    ) -> Result<u64, Reply> {
        if application_id != self.config.application_id {
            return Err(Reply::api(api::UNKNOWN_WEBHOOK));
        }
        let Some(issued) = self
            .tokens
            .get(token)
            .and_then(|id| self.interactions.get(id))
        else {
            return Err(Reply::api(api::UNKNOWN_WEBHOOK));
        };
        if now.duration_since(issued.created) > self.config.token_lifetime {
            return Err(Reply::api(api::INVALID_WEBHOOK_TOKEN));
        }
        if issued.record.response.is_none() {
            return Err(Reply::api(api::UNKNOWN_WEBHOOK));
        }
        Ok(issued.record.id)
    }

    fn followup(&mut self, application_id: u64, token: &str, body: &Value, now: Instant) -> Reply {
        let interaction_id = match self.webhook_interaction(application_id, token, now) {
            Ok(id) => id,
            Err(reply) => return reply,
        };
        let errors = validate::message(body, &[]);
        if !errors.is_empty() {
            return Reply::form(&errors);
        }
        let parts = Parts::from_body(body);
        if parts.is_empty() && !has_other_content(body) {
            return Reply::api(api::EMPTY_MESSAGE);
        }
        let Some(record) = self.interaction(interaction_id).cloned() else {
            return Reply::api(api::UNKNOWN_WEBHOOK);
        };
        let flags = u64_field(body, "flags").unwrap_or(0) & (CREATE_FLAGS | EPHEMERAL);
        let ephemeral = flags & EPHEMERAL != 0;
        let channel = self.known_channel(record.channel_id, "follow-up");
        let bot = self.config.bot.clone();
        let audience = ephemeral.then_some(record.user.id);
        let id = self.store_message(
            &channel,
            bot,
            true,
            parts,
            flags,
            None,
            Some((interaction_id, audience)),
        );
        if let Some(issued) = self.interactions.get_mut(&interaction_id) {
            issued.record.followups.push(id);
        }
        if !ephemeral {
            self.dispatch(Pending::MessageCreate(id));
        }
        self.reply_message(id)
    }

    fn webhook_message(
        &mut self,
        application_id: u64,
        token: &str,
        message: Option<u64>,
        method: &str,
        body: &Value,
        now: Instant,
    ) -> Reply {
        let interaction_id = match self.webhook_interaction(application_id, token, now) {
            Ok(id) => id,
            Err(reply) => return reply,
        };
        let Some(record) = self.interaction(interaction_id) else {
            return Reply::api(api::UNKNOWN_WEBHOOK);
        };
        let original = record
            .response
            .as_ref()
            .and_then(|response| match response.kind {
                4..=7 => response.message_id,
                _ => None,
            });
        let target = match message {
            None => original,
            Some(id) => (record.followups.contains(&id) || original == Some(id)).then_some(id),
        };
        let Some(target) = target.filter(|id| {
            self.messages
                .get(id)
                .is_some_and(|message| !message.deleted)
        }) else {
            return Reply::api(api::UNKNOWN_MESSAGE);
        };
        match method {
            "GET" => self.reply_message(target),
            "PATCH" => match self.apply_edit(target, body, &[]) {
                Ok(()) => self.reply_message(target),
                Err(reply) => reply,
            },
            _ => {
                if let Some(message) = self.messages.get_mut(&target) {
                    message.deleted = true;
                }
                Reply::no_content()
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn routes() {
        assert_eq!(parse_route("/gateway/bot"), Ok(Route::GatewayBot));
        assert_eq!(
            parse_route("/channels/12/messages/34"),
            Ok(Route::Message(12, 34))
        );
        assert_eq!(
            parse_route("/webhooks/1/tok/messages/@original"),
            Ok(Route::WebhookMessage(1, "tok".into(), None))
        );
        let (template, reply) =
            *parse_route("/channels/abc/messages").expect_err("not a snowflake");
        assert_eq!(template, "/channels/{channel.id}/messages");
        assert_eq!(reply.status, 400);
        assert_eq!(
            reply.body.expect("body")["errors"]["channel_id"]["_errors"][0]["message"],
            "Value \"abc\" is not snowflake."
        );
        assert_eq!(
            parse_route("/nope").map_err(|error| error.1.status),
            Err(404)
        );
    }

    const GUILD: u64 = 800_000_000_000_000_001;
    const GENERAL: u64 = 810_000_000_000_000_001;
    const COMMANDS: &str = "/applications/1250000000000000001/commands";

    fn state() -> State {
        let mut state = State::new(Config {
            token: "t".into(),
            bot: User::new(super::super::BOT_ID, "bot").bot(),
            application_id: super::super::APPLICATION_ID,
            application_flags: 0,
            ws_url: "ws://127.0.0.1:1/gateway".into(),
            deadline: Duration::from_secs(3),
            token_lifetime: Duration::from_secs(900),
            rate_limits: RateLimits::OFF,
            heartbeat_interval_ms: 41_250,
            signer: InteractionSigner::default(),
        });
        state.add_channel(&Channel::guild_text(GENERAL, GUILD, "general"));
        state
    }

    fn alice() -> User {
        User::new(100_000_000_000_000_001, "alice")
    }

    /// Answers one REST call as the server would (bot token unless the
    /// path is an interaction callback) and logs it.
    fn call(state: &mut State, method: &str, path: &str, body: Option<Value>) -> Reply {
        let request = RestRequest {
            method: method.into(),
            path: format!("/api/v10{path}"),
            query: None,
            authorization: Some("Bot t".into()),
            body: body.map(Ok),
        };
        let (route, reply) = state.rest(&request, path, Instant::now());
        state.record_call(&request, path.to_owned(), route, &reply);
        reply
    }

    fn body(reply: &Reply) -> &Value {
        reply.body.as_ref().expect("a JSON body")
    }

    fn ask_and_status() -> Value {
        json!([
            {"name": "ask", "description": "Ask the team a question"},
            {"name": "status", "description": "What is pending", "type": 1,
             "dm_permission": false, "contexts": [0]},
        ])
    }

    #[test]
    fn command_routes() {
        assert_eq!(
            parse_route("/applications/12/commands"),
            Ok(Route::Commands(12))
        );
        assert_eq!(
            parse_route("/applications/12/commands/34"),
            Ok(Route::Command(12, 34))
        );
        let (template, reply) = *parse_route("/applications/@me/commands").expect_err("not an id");
        assert_eq!(template, "/applications/{application.id}/commands");
        assert_eq!(reply.status, 400);
    }

    #[test]
    fn bulk_overwrite_registers_commands() {
        let mut state = state();
        let put = call(&mut state, "PUT", COMMANDS, Some(ask_and_status()));
        assert_eq!(put.status, 200, "{:?}", put.body);
        let listed = body(&put).as_array().expect("an array").clone();
        assert_eq!(listed.len(), 2);
        let ask = &listed[0];
        assert_eq!(ask["name"], "ask");
        assert_eq!(ask["description"], "Ask the team a question");
        assert_eq!(ask["type"], 1);
        assert_eq!(ask["application_id"], APPLICATION_ID_STR);
        assert_eq!(ask["default_member_permissions"], Value::Null);
        assert_eq!(ask["dm_permission"], true);
        assert_eq!(ask["contexts"], Value::Null);
        assert_eq!(ask["integration_types"], json!([0]));
        assert_eq!(ask["nsfw"], false);
        assert!(
            ask["id"]
                .as_str()
                .and_then(|id| id.parse::<u64>().ok())
                .is_some()
        );
        assert!(ask["version"].as_str().is_some());
        assert_eq!(listed[1]["dm_permission"], false);
        assert_eq!(listed[1]["contexts"], json!([0]));
        // serenity (what askbridge uses) reads them as its `Command`s.
        let parsed: Vec<serenity::all::Command> =
            serde_json::from_value(body(&put).clone()).expect("serenity reads the commands");
        assert_eq!(parsed[0].name, "ask");

        let get = call(&mut state, "GET", COMMANDS, None);
        assert_eq!(body(&get), body(&put));
        assert_eq!(state.commands().len(), 2);
        assert_eq!(
            state
                .calls_to("PUT", "/applications/{application.id}/commands")
                .len(),
            1
        );

        // The same again: same ids, same versions.
        let again = call(&mut state, "PUT", COMMANDS, Some(ask_and_status()));
        assert_eq!(body(&again), body(&put));

        // `ask` changes and `status` goes: `ask` keeps its id, with a new
        // version; a new command gets a new id.
        let changed = json!([
            {"name": "ask", "description": "Ask something else"},
            {"name": "help", "description": "How to use the bot"},
        ]);
        let put2 = call(&mut state, "PUT", COMMANDS, Some(changed));
        assert_eq!(put2.status, 200);
        let listed2 = body(&put2).as_array().expect("an array").clone();
        assert_eq!(listed2[0]["id"], ask["id"]);
        assert_ne!(listed2[0]["version"], ask["version"]);
        assert_eq!(listed2[0]["description"], "Ask something else");
        assert_ne!(listed2[1]["id"], listed[1]["id"]);
        assert_eq!(listed2[1]["name"], "help");
        let names: Vec<&Value> = state
            .commands()
            .iter()
            .map(|command| &command["name"])
            .collect();
        assert_eq!(names, [&json!("ask"), &json!("help")]);

        // A rename keeps the id when the body names it.
        let renamed = json!([{"id": ask["id"], "name": "question", "description": "Ask"}]);
        let put3 = call(&mut state, "PUT", COMMANDS, Some(renamed));
        assert_eq!(body(&put3)[0]["id"], ask["id"]);
        assert_eq!(body(&put3)[0]["name"], "question");

        let cleared = call(&mut state, "PUT", COMMANDS, Some(json!([])));
        assert_eq!(body(&cleared), &json!([]));
        assert!(state.commands().is_empty());
    }

    const APPLICATION_ID_STR: &str = "1250000000000000001";

    #[test]
    fn invalid_commands_get_form_errors() {
        let mut state = state();
        let bad = json!([
            {"name": "Ask", "description": "upper case"},
            {"name": "two words", "description": "a space"},
            {"name": "x".repeat(33), "description": "too long"},
            {"name": "nodescription"},
            {"name": "longdescription", "description": "d".repeat(101)},
            {"name": "", "description": "empty"},
            {"name": "ok", "description": "fine", "type": 9},
            "not an object",
        ]);
        let reply = call(&mut state, "PUT", COMMANDS, Some(bad));
        assert_eq!(reply.status, 400);
        let error = body(&reply);
        assert_eq!(error["code"], 50035);
        assert_eq!(error["message"], "Invalid Form Body");
        let errors = &error["errors"];
        let first = |index: &str, field: &str| errors[index][field]["_errors"][0]["code"].clone();
        assert_eq!(first("0", "name"), "APPLICATION_COMMAND_INVALID_NAME");
        assert_eq!(
            errors["0"]["name"]["_errors"][0]["message"],
            "Command name is invalid"
        );
        assert_eq!(first("1", "name"), "STRING_TYPE_REGEX");
        assert_eq!(first("2", "name"), "BASE_TYPE_BAD_LENGTH");
        assert_eq!(
            errors["2"]["name"]["_errors"][0]["message"],
            "Must be between 1 and 32 in length."
        );
        assert_eq!(first("3", "description"), "BASE_TYPE_REQUIRED");
        assert_eq!(first("4", "description"), "BASE_TYPE_BAD_LENGTH");
        assert_eq!(first("5", "name"), "BASE_TYPE_BAD_LENGTH");
        assert_eq!(first("6", "type"), "BASE_TYPE_CHOICES");
        assert_eq!(errors["7"]["_errors"][0]["code"], "DICT_TYPE_CONVERT");
        assert!(state.commands().is_empty(), "nothing is stored");

        // Names are unique per type: a user command may share a slash
        // command's name, and may have capitals and spaces.
        let duplicated = json!([
            {"name": "ask", "description": "one"},
            {"name": "ask", "description": "two"},
        ]);
        let reply = call(&mut state, "PUT", COMMANDS, Some(duplicated));
        assert_eq!(reply.status, 400);
        assert_eq!(
            body(&reply)["errors"]["1"]["_errors"][0]["code"],
            "APPLICATION_COMMANDS_DUPLICATE_NAME"
        );
        let mixed = json!([
            {"name": "ask", "description": "one"},
            {"name": "ask", "type": 2},
            {"name": "Ask Alice", "type": 2, "description": ""},
        ]);
        let reply = call(&mut state, "PUT", COMMANDS, Some(mixed));
        assert_eq!(reply.status, 200, "{:?}", reply.body);
        assert_eq!(body(&reply)[2]["description"], "");

        let not_a_list = call(&mut state, "PUT", COMMANDS, Some(json!({"name": "ask"})));
        assert_eq!(
            body(&not_a_list)["errors"]["_errors"][0]["code"],
            "LIST_TYPE_CONVERT"
        );

        let many: Vec<Value> = (0..101)
            .map(|i| json!({"name": format!("c{i}"), "description": "d"}))
            .collect();
        let reply = call(&mut state, "PUT", COMMANDS, Some(Value::Array(many)));
        assert_eq!(reply.status, 400);
        assert_eq!(body(&reply)["code"], 30032);
        assert_eq!(state.commands().len(), 3, "the previous list stays");

        let foreign = call(
            &mut state,
            "PUT",
            "/applications/42/commands",
            Some(json!([])),
        );
        assert_eq!(foreign.status, 403);
        assert_eq!(body(&foreign)["code"], 20012);
        let foreign_get = call(&mut state, "GET", "/applications/42/commands", None);
        assert_eq!(foreign_get.status, 403);

        let request = RestRequest {
            method: "GET".into(),
            path: format!("/api/v10{COMMANDS}"),
            query: None,
            authorization: None,
            body: None,
        };
        assert_eq!(state.rest(&request, COMMANDS, Instant::now()).1.status, 401);
    }

    #[test]
    fn create_edit_delete_one_command() {
        let mut state = state();
        let body1 = json!({"name": "ask", "description": "Ask"});
        let created = call(&mut state, "POST", COMMANDS, Some(body1));
        assert_eq!(created.status, 201);
        let id = body(&created)["id"].as_str().expect("an id").to_owned();
        let replaced = call(
            &mut state,
            "POST",
            COMMANDS,
            Some(json!({"name": "ask", "description": "Ask again"})),
        );
        assert_eq!(replaced.status, 200);
        assert_eq!(body(&replaced)["id"], id.as_str());
        assert_eq!(state.commands().len(), 1);

        let one = format!("{COMMANDS}/{id}");
        let got = call(&mut state, "GET", &one, None);
        assert_eq!(body(&got)["description"], "Ask again");
        let other = call(
            &mut state,
            "POST",
            COMMANDS,
            Some(json!({"name": "help", "description": "Help"})),
        );
        assert_eq!(other.status, 201);
        let clash = call(&mut state, "PATCH", &one, Some(json!({"name": "help"})));
        assert_eq!(clash.status, 400);
        assert_eq!(body(&clash)["code"], 40041);
        let patched = call(&mut state, "PATCH", &one, Some(json!({"name": "question"})));
        assert_eq!(patched.status, 200);
        assert_eq!(body(&patched)["name"], "question");
        assert_eq!(body(&patched)["description"], "Ask again");
        let invalid = call(&mut state, "PATCH", &one, Some(json!({"name": "Question"})));
        assert_eq!(invalid.status, 400);

        let deleted = call(&mut state, "DELETE", &one, None);
        assert_eq!(deleted.status, 204);
        let gone = call(&mut state, "GET", &one, None);
        assert_eq!(gone.status, 404);
        assert_eq!(body(&gone)["code"], 10063);
        assert_eq!(body(&gone)["message"], "Unknown application command");
    }

    fn interaction_body(state: &State, index: usize) -> Value {
        match &state.gateway.backlog[index] {
            Pending::Interaction(body) => body.clone(),
            other => panic!("not an interaction: {other:?}"),
        }
    }

    #[test]
    fn use_command_dispatches_an_application_command() {
        let mut state = state();
        let put = call(&mut state, "PUT", COMMANDS, Some(ask_and_status()));
        let ask_id = body(&put)[0]["id"].clone();
        let made = state.use_command(&alice(), GENERAL, "ask", true);
        let sent = interaction_body(&state, 0);
        assert_eq!(sent, made.body);
        assert_eq!(sent["type"], 2);
        assert_eq!(
            sent["data"],
            json!({"id": ask_id, "name": "ask", "type": 1})
        );
        assert_eq!(sent["id"], made.id.to_string());
        assert_eq!(sent["channel_id"], GENERAL.to_string());
        assert_eq!(sent["channel"]["id"], GENERAL.to_string());
        assert_eq!(sent["guild_id"], GUILD.to_string());
        assert_eq!(sent["member"]["user"]["id"], alice().id.to_string());
        assert_eq!(sent["application_id"], APPLICATION_ID_STR);
        assert_eq!(sent["version"], 1);
        assert_eq!(sent["context"], 0);
        assert_eq!(sent["entitlements"], json!([]));
        assert!(sent.get("message").is_none());
        assert!(sent.get("user").is_none());
        let record = state.interaction(made.id).expect("recorded");
        assert_eq!(record.kind, InteractionKind::Command);
        assert_eq!(record.command_name.as_deref(), Some("ask"));
        assert_eq!(record.message_id, None);
        assert!(record.via_gateway);
        let parsed: serenity::all::Interaction =
            serde_json::from_value(sent).expect("serenity reads the interaction");
        let command = parsed.command().expect("a command interaction");
        assert_eq!(command.data.name, "ask");
        assert_eq!(
            command.data.id.get().to_string(),
            ask_id.as_str().expect("id")
        );

        // In a DM: `user`, no guild, context BOT_DM.
        let dm = state.dm_channel(&alice());
        let in_dm = state.use_command(&alice(), dm, "ask", false);
        assert_eq!(
            state.gateway.backlog.len(),
            1,
            "HTTP interactions are not dispatched"
        );
        assert_eq!(in_dm.body["type"], 2);
        assert_eq!(in_dm.body["user"]["id"], alice().id.to_string());
        assert_eq!(in_dm.body["context"], 1);
        assert!(in_dm.body.get("guild_id").is_none());
        assert!(in_dm.body.get("member").is_none());
        let parsed: serenity::all::Interaction =
            serde_json::from_value(in_dm.body).expect("serenity reads the DM interaction");
        assert!(parsed.command().is_some());
    }

    #[test]
    #[should_panic(expected = "no slash command \"nope\" is registered")]
    fn use_command_needs_a_registered_command() {
        let mut state = state();
        call(&mut state, "PUT", COMMANDS, Some(ask_and_status()));
        state.use_command(&alice(), GENERAL, "nope", true);
    }

    #[test]
    #[should_panic(expected = "not offered in interaction context 1")]
    fn use_command_respects_contexts() {
        let mut state = state();
        call(&mut state, "PUT", COMMANDS, Some(ask_and_status()));
        let dm = state.dm_channel(&alice());
        state.use_command(&alice(), dm, "status", true);
    }

    #[test]
    #[should_panic(expected = "may not use /admin")]
    fn use_command_respects_default_member_permissions() {
        let mut state = state();
        let admin =
            json!([{"name": "admin", "description": "d", "default_member_permissions": "8"}]);
        call(&mut state, "PUT", COMMANDS, Some(admin));
        state.use_command(&alice(), GENERAL, "admin", true);
    }

    #[test]
    fn ephemeral_reply_to_a_command_is_recorded() {
        let mut state = state();
        call(&mut state, "PUT", COMMANDS, Some(ask_and_status()));
        let made = state.use_command(&alice(), GENERAL, "ask", true);
        let callback = format!("/interactions/{}/{}/callback", made.id, made.token);

        // No message to update: UPDATE_MESSAGE and DEFERRED_UPDATE_MESSAGE
        // are refused, and do not count as the response.
        for refused in [6, 7] {
            let reply = call(
                &mut state,
                "POST",
                &callback,
                Some(json!({"type": refused})),
            );
            assert_eq!(reply.status, 400, "type {refused}");
            assert_eq!(body(&reply)["code"], 50035);
            assert_eq!(
                body(&reply)["errors"]["type"]["_errors"][0]["message"],
                "Value must be one of (4, 5, 9)."
            );
        }
        let answer = json!({"type": 4, "data": {"content": "Asked.", "flags": 64}});
        let reply = call(&mut state, "POST", &callback, Some(answer));
        assert_eq!(reply.status, 204, "{:?}", reply.body);

        let record = state.interaction(made.id).expect("recorded");
        assert_eq!(record.refused_responses, 2);
        let response = record.response.clone().expect("the initial response");
        assert_eq!(response.kind, 4);
        assert_eq!(response.content(), Some("Asked."));
        assert!(response.is_ephemeral());
        let message = state
            .message(response.message_id.expect("a message"))
            .expect("stored");
        assert_eq!(message.ephemeral_to, Some(alice().id));
        assert_eq!(message.kind, CHAT_INPUT_COMMAND_MESSAGE);
        assert_eq!(message.interaction_id, Some(made.id));
        let notices = state.notices_for(alice().id);
        assert_eq!(notices.len(), 1);
        assert_eq!(notices[0].kind, NoticeKind::Ephemeral);
        assert_eq!(notices[0].interaction_id, made.id);
        assert_eq!(notices[0].text, "Asked.");
        assert_eq!(
            state.gateway.backlog.len(),
            1,
            "ephemeral: no MESSAGE_CREATE"
        );

        // A second response is refused as on Discord.
        let again = call(
            &mut state,
            "POST",
            &callback,
            Some(json!({"type": 4, "data": {"content": "x"}})),
        );
        assert_eq!(body(&again)["code"], 40060);
    }

    #[test]
    fn a_command_can_open_a_modal() {
        let mut state = state();
        call(&mut state, "PUT", COMMANDS, Some(ask_and_status()));
        let made = state.use_command(&alice(), GENERAL, "ask", true);
        let callback = format!("/interactions/{}/{}/callback", made.id, made.token);
        let modal = json!({"type": 9, "data": {"custom_id": "m", "title": "Ask", "components": [
            {"type": 1, "components": [{"type": 4, "custom_id": "q", "style": 2, "label": "Question"}]}
        ]}});
        assert_eq!(call(&mut state, "POST", &callback, Some(modal)).status, 204);
        let submitted = state.submit_modal(&alice(), made.id, &[("q", "Why?")], true);
        let record = state.interaction(submitted.id).expect("recorded");
        assert_eq!(record.kind, InteractionKind::ModalSubmit);
        assert_eq!(record.message_id, None);
    }

    #[test]
    fn mentions() {
        assert_eq!(
            mentioned_ids("hi <@12> and <@!34>, <@12> <@x> <@5"),
            [12, 34]
        );
    }
}

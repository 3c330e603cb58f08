//! The fake tenant: users, chats, messages, tokens and pushes, and the Open
//! API endpoints that read and change them, with Feishu's rules, codes and
//! messages.

use std::collections::{BTreeMap, HashMap};
use std::time::{Duration, Instant};

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use serde_json::{Map, Value, json};

use super::card::{self, Found};
use super::crypto::{self, NONCE_HEADER, SIGNATURE_HEADER, TIMESTAMP_HEADER};
use super::frame::{Frame, METHOD_CONTROL, METHOD_DATA};
use super::model::{
    Answer, Call, CallbackOutcome, Chat, ChatType, Delivery, EditSource, Forgery, Push, PushKind,
    Sender, StoredMessage, User, Version, Via,
};
use super::rate::{Key, Limiter, RateLimits};
use super::socket::{Outgoing, Output, SocketState};
use super::util::{pseudo_hex, random_bytes, random_hex, str_field, unix_millis, unix_secs};
use super::{CardFrameType, ClientConfig, MAX_CARD_BYTES, MAX_TEXT_BYTES, TENANT_KEY, UUID_WINDOW};

/// A token with more than this left is handed out again by the token
/// endpoint; with less, a new one is made (Feishu's rule).
const TOKEN_REUSE_MARGIN: Duration = Duration::from_secs(30 * 60);

/// `code` of the app-wide rate limit (HTTP 429).
const CODE_RATE_LIMITED: i64 = 99_991_400;
/// `code` of the per-chat and per-message limits (HTTP 400).
const CODE_FREQUENCY: i64 = 230_020;

/// Toast `type`s Feishu shows.
const TOAST_TYPES: &[&str] = &["success", "info", "warning", "error"];

/// Settings fixed at start (some changeable by test controls).
#[derive(Debug, Clone)]
pub(crate) struct Config {
    pub(crate) app_id: String,
    pub(crate) app_secret: String,
    pub(crate) bot_name: String,
    pub(crate) bot_open_id: String,
    pub(crate) bot_union_id: String,
    pub(crate) verification_token: String,
    pub(crate) encrypt_key: Option<String>,
    pub(crate) token_lifetime: Duration,
    pub(crate) client_config: ClientConfig,
    pub(crate) callback_timeout: Duration,
    pub(crate) rate_limits: RateLimits,
    pub(crate) callback_url: Option<String>,
    pub(crate) card_frame_type: CardFrameType,
    pub(crate) all_group_messages: bool,
    /// `ws://127.0.0.1:PORT`.
    pub(crate) ws_base: String,
}

/// An HTTP request to the fake, read.
#[derive(Debug)]
pub(crate) struct ApiRequest {
    pub(crate) http_method: String,
    pub(crate) path: String,
    pub(crate) query: Option<String>,
    pub(crate) authorization: Option<String>,
    pub(crate) body: Vec<u8>,
}

/// An answer: status, JSON body, extra headers.
#[derive(Debug, Clone)]
pub(crate) struct Reply {
    pub(crate) status: u16,
    pub(crate) body: Value,
    pub(crate) headers: Vec<(&'static str, String)>,
}

impl Reply {
    /// `{"code": 0, "msg": "success", "data": …}`.
    fn data(data: Value) -> Reply {
        Reply {
            status: 200,
            body: json!({ "code": 0, "msg": "success", "data": data }),
            headers: Vec::new(),
        }
    }

    /// `{"code": …, "msg": …}` with this HTTP status.
    fn error(status: u16, code: i64, msg: impl Into<String>) -> Reply {
        Reply {
            status,
            body: json!({ "code": code, "msg": msg.into() }),
            headers: Vec::new(),
        }
    }

    /// 230001, Feishu's "invalid request parameter", with what was wrong.
    fn invalid(detail: &str) -> Reply {
        Reply::error(
            400,
            230_001,
            format!("Your request contains an invalid request parameter, ext={detail}"),
        )
    }

    /// 99992402: the gateway's check of required fields.
    fn field_violation(field: &str, description: &str) -> Reply {
        Reply {
            status: 400,
            body: json!({
                "code": 99_992_402,
                "msg": "field validation failed",
                "error": {
                    "field_violations": [{ "field": field, "description": description }],
                },
            }),
            headers: Vec::new(),
        }
    }

    /// 230002: the bot is not in the chat (or the chat is gone).
    fn outside_group() -> Reply {
        Reply::error(400, 230_002, "The bot can not be outside the group.")
    }

    /// 230099: the card was refused.
    fn bad_card(detail: &str) -> Reply {
        Reply::error(
            400,
            230_099,
            format!("Failed to create card content, ext=ErrMsg: {detail}"),
        )
    }

    /// 230025: the content is over its size limit.
    fn too_long(detail: &str) -> Reply {
        Reply::error(
            400,
            230_025,
            format!("The length of the message content reaches its limit. ext={detail}"),
        )
    }

    fn code(&self) -> i64 {
        self.body.get("code").and_then(Value::as_i64).unwrap_or(-1)
    }
}

/// What a user does to a card.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Act<'a> {
    /// Presses a button (by name or visible text).
    Press(&'a str),
    /// Submits a form with one of its submit buttons, with these values.
    Submit { button: &'a str, values: &'a Value },
    /// Chooses options in a select outside a form.
    Select {
        name: &'a str,
        values: &'a [&'a str],
    },
}

/// How a delivery goes out.
#[derive(Debug)]
pub(crate) enum Plan {
    /// Queued for the long connection.
    Queued,
    /// POSTed to the callback URL.
    Http { url: String, request: HttpRequest },
}

/// A request to POST to the callback URL.
#[derive(Debug, Clone)]
pub(crate) struct HttpRequest {
    pub(crate) body: Vec<u8>,
    pub(crate) headers: Vec<(&'static str, String)>,
}

/// The fake's whole state, readable in
/// [`FakeFeishu::inspect`](super::FakeFeishu::inspect) and `wait_for`
/// conditions.
#[derive(Debug)]
pub struct State {
    pub(crate) config: Config,
    pub(crate) socket: SocketState,
    pub(crate) closed: bool,
    calls: Vec<Call>,
    users: BTreeMap<String, User>,
    chats: BTreeMap<String, Chat>,
    /// open_id → the p2p chat with the bot.
    p2p: HashMap<String, String>,
    messages: Vec<StoredMessage>,
    /// uuid → (message_id, when).
    uuids: HashMap<String, (String, Instant)>,
    /// token → expiry.
    tokens: HashMap<String, Instant>,
    current_token: Option<String>,
    /// root message → thread id.
    threads: HashMap<String, String>,
    pushes: Vec<Push>,
    limiter: Limiter,
    counter: u64,
    rate_limited: usize,
    /// Cards sent to one person of a group (`ephemeral/v1/send`).
    ephemerals: Vec<Ephemeral>,
}

/// A card only one person of a group sees (`POST
/// /open-apis/ephemeral/v1/send`).
#[derive(Debug, Clone, PartialEq)]
pub struct Ephemeral {
    /// Its `om_…` id.
    pub message_id: String,
    /// The group.
    pub chat_id: String,
    /// The person who sees it.
    pub open_id: String,
    /// The card (JSON 1.0 or 2.0).
    pub card: Value,
}

/// Reading.
impl State {
    /// Every Open API call answered so far, in order.
    pub fn calls(&self) -> &[Call] {
        &self.calls
    }

    /// The calls whose path ends with `suffix` (`"/reply"`,
    /// `"/im/v1/messages"`).
    pub fn calls_to(&self, suffix: &str) -> Vec<&Call> {
        self.calls
            .iter()
            .filter(|call| call.path.ends_with(suffix))
            .collect()
    }

    /// A message by id.
    pub fn message(&self, message_id: &str) -> Option<&StoredMessage> {
        self.messages
            .iter()
            .find(|message| message.message_id == message_id)
    }

    /// The messages of a chat (replies included), in order.
    pub fn messages_in(&self, chat_id: &str) -> Vec<&StoredMessage> {
        self.messages
            .iter()
            .filter(|message| message.chat_id == chat_id)
            .collect()
    }

    /// The cards only `open_id` sees, in order.
    pub fn ephemerals_for(&self, open_id: &str) -> Vec<&Ephemeral> {
        self.ephemerals
            .iter()
            .filter(|ephemeral| ephemeral.open_id == open_id)
            .collect()
    }

    /// Every message the bot sent, in order.
    pub fn bot_messages(&self) -> Vec<&StoredMessage> {
        self.messages
            .iter()
            .filter(|message| message.by_bot())
            .collect()
    }

    /// A chat.
    pub fn chat(&self, chat_id: &str) -> Option<&Chat> {
        self.chats.get(chat_id)
    }

    /// A user.
    pub fn user(&self, open_id: &str) -> Option<&User> {
        self.users.get(open_id)
    }

    /// The bot's p2p chat with `open_id`, if it exists yet.
    pub fn p2p_chat_of(&self, open_id: &str) -> Option<&str> {
        self.p2p.get(open_id).map(String::as_str)
    }

    /// Every push (event or card callback), in order.
    pub fn pushes(&self) -> &[Push] {
        &self.pushes
    }

    /// One push.
    pub fn push(&self, id: u64) -> Option<&Push> {
        self.pushes.iter().find(|push| push.id == id)
    }

    /// The long connection's counters.
    pub fn connection_stats(&self) -> &super::ConnectionStats {
        &self.socket.stats
    }

    /// How many requests were refused by a rate limit (HTTP 429 /
    /// `99991400` and `230020`).
    pub fn rate_limited_count(&self) -> usize {
        self.rate_limited
    }

    pub(crate) fn describe_calls(&self) -> String {
        let lines: Vec<String> = self
            .calls
            .iter()
            .map(|call| {
                format!(
                    "  {} {} → {} code {}",
                    call.http_method, call.path, call.status, call.code
                )
            })
            .collect();
        if lines.is_empty() {
            "  (none)".into()
        } else {
            lines.join("\n")
        }
    }
}

/// Setup.
impl State {
    pub(crate) fn new(config: Config) -> State {
        State {
            config,
            socket: SocketState::new(),
            closed: false,
            calls: Vec::new(),
            users: BTreeMap::new(),
            chats: BTreeMap::new(),
            p2p: HashMap::new(),
            messages: Vec::new(),
            uuids: HashMap::new(),
            tokens: HashMap::new(),
            current_token: None,
            threads: HashMap::new(),
            pushes: Vec::new(),
            limiter: Limiter::default(),
            counter: 0,
            rate_limited: 0,
            ephemerals: Vec::new(),
        }
    }

    fn next(&mut self) -> u64 {
        self.counter += 1;
        self.counter
    }

    pub(crate) fn add_user(&mut self, user: User) {
        self.users.insert(user.open_id.clone(), user);
    }

    pub(crate) fn add_chat(&mut self, chat: Chat) {
        self.chats.insert(chat.chat_id.clone(), chat);
    }

    /// Sets whether the bot is in `chat_id`; whether the chat exists.
    pub(crate) fn set_bot_member(&mut self, chat_id: &str, member: bool) -> bool {
        self.chats
            .get_mut(chat_id)
            .map(|chat| chat.bot_member = member)
            .is_some()
    }

    /// Disbands a chat; whether it existed.
    pub(crate) fn delete_chat(&mut self, chat_id: &str) -> bool {
        self.chats
            .get_mut(chat_id)
            .map(|chat| chat.deleted = true)
            .is_some()
    }

    /// Recalls a message; whether it exists.
    pub(crate) fn recall(&mut self, message_id: &str) -> bool {
        self.messages
            .iter_mut()
            .find(|message| message.message_id == message_id)
            .map(|message| message.recalled = true)
            .is_some()
    }

    /// Makes every token handed out so far invalid.
    pub(crate) fn expire_tokens(&mut self, now: Instant) {
        for expiry in self.tokens.values_mut() {
            *expiry = now;
        }
    }

    pub(crate) fn set_rate_limits(&mut self, limits: RateLimits) {
        self.config.rate_limits = limits;
    }

    pub(crate) fn set_callback_url(&mut self, url: Option<String>) {
        self.config.callback_url = url;
    }

    /// The p2p chat of the bot with `open_id`, made on first use.
    pub(crate) fn p2p_chat(&mut self, open_id: &str) -> String {
        if let Some(chat_id) = self.p2p.get(open_id) {
            return chat_id.clone();
        }
        let n = self.next();
        let chat_id = format!("oc_{}", pseudo_hex(0xc4a7_0000 + n, 32));
        let name = self
            .users
            .get(open_id)
            .map_or_else(|| open_id.to_owned(), |user| user.name.clone());
        self.chats.insert(
            chat_id.clone(),
            Chat {
                chat_id: chat_id.clone(),
                name,
                chat_type: ChatType::P2p {
                    open_id: open_id.to_owned(),
                },
                bot_member: true,
                deleted: false,
            },
        );
        self.p2p.insert(open_id.to_owned(), chat_id.clone());
        chat_id
    }
}

/// The Open API.
impl State {
    /// Answers one request and records it.
    pub(crate) fn api(&mut self, request: ApiRequest, now: Instant) -> Reply {
        let parsed = if request.body.is_empty() {
            Ok(None)
        } else {
            serde_json::from_slice::<Value>(&request.body).map(Some)
        };
        let reply = self.route(
            &request,
            parsed.as_ref().ok().and_then(Option::as_ref),
            parsed.is_err(),
            now,
        );
        let body = match parsed {
            Ok(Some(json)) => json,
            Ok(None) => Value::Null,
            Err(_) => Value::String(String::from_utf8_lossy(&request.body).into_owned()),
        };
        self.calls.push(Call {
            http_method: request.http_method,
            path: request.path,
            query: request.query,
            body,
            status: reply.status,
            code: reply.code(),
            response: reply.body.clone(),
        });
        reply
    }

    fn route(
        &mut self,
        request: &ApiRequest,
        body: Option<&Value>,
        not_json: bool,
        now: Instant,
    ) -> Reply {
        let segments: Vec<&str> = request
            .path
            .split('/')
            .filter(|part| !part.is_empty())
            .collect();
        let empty = Value::Object(Map::new());
        let body_or_empty = body.unwrap_or(&empty);
        let query = request.query.as_deref();
        match (request.http_method.as_str(), segments.as_slice()) {
            ("POST", ["open-apis", "auth", "v3", "tenant_access_token", "internal"]) => {
                self.tenant_access_token(body_or_empty, now)
            }
            ("POST", ["callback", "ws", "endpoint"]) => self.ws_endpoint(body_or_empty),
            ("GET", ["open-apis", "bot", "v3", "info"]) => self
                .authorize(request.authorization.as_deref(), now)
                .map_or_else(|error| error, |()| self.bot_info()),
            ("GET", ["open-apis", "contact", "v3", "users", open_id]) => self
                .authorize(request.authorization.as_deref(), now)
                .map_or_else(|error| error, |()| self.contact_user(open_id, query)),
            ("POST", ["open-apis", "im", "v1", "messages"]) => {
                self.im(request, not_json, now, |state| {
                    state.create_message(query, body_or_empty, now)
                })
            }
            ("POST", ["open-apis", "im", "v1", "messages", message_id, "reply"]) => {
                self.im(request, not_json, now, |state| {
                    state.reply_message(message_id, body_or_empty, now)
                })
            }
            ("POST", ["open-apis", "ephemeral", "v1", "send"]) => {
                self.im(request, not_json, now, |state| {
                    state.send_ephemeral(body_or_empty, now)
                })
            }
            ("PATCH", ["open-apis", "im", "v1", "messages", message_id]) => {
                self.im(request, not_json, now, |state| {
                    state.patch_message(message_id, body_or_empty, now)
                })
            }
            _ => Reply::error(404, 404, "404 page not found"),
        }
    }

    /// An `im` endpoint: authorized, with a JSON body.
    fn im(
        &mut self,
        request: &ApiRequest,
        not_json: bool,
        now: Instant,
        handle: impl FnOnce(&mut State) -> Result<Value, Reply>,
    ) -> Reply {
        if let Err(error) = self.authorize(request.authorization.as_deref(), now) {
            return error;
        }
        if not_json {
            return Reply::invalid("the request body is not JSON");
        }
        handle(self).map_or_else(|error| error, Reply::data)
    }

    fn authorize(&self, authorization: Option<&str>, now: Instant) -> Result<(), Reply> {
        let token = authorization
            .and_then(|header| header.strip_prefix("Bearer "))
            .map(str::trim)
            .filter(|token| !token.is_empty());
        let Some(token) = token else {
            return Err(Reply::error(
                400,
                99_991_661,
                "Missing access token for authorization. Please make a request with token \
                 attached.",
            ));
        };
        match self.tokens.get(token) {
            Some(expiry) if *expiry > now => Ok(()),
            _ => Err(Reply::error(
                400,
                99_991_663,
                "Invalid access token for authorization. Please make a request with token \
                 attached.",
            )),
        }
    }

    /// `POST /open-apis/auth/v3/tenant_access_token/internal`: the token and
    /// `expire` at the top level, not in `data`.
    fn tenant_access_token(&mut self, body: &Value, now: Instant) -> Reply {
        let (Some(app_id), Some(app_secret)) =
            (str_field(body, "app_id"), str_field(body, "app_secret"))
        else {
            return Reply::error(400, 10_003, "invalid param");
        };
        if app_id != self.config.app_id {
            return Reply::error(400, 10_003, "invalid param: app_id not found");
        }
        if app_secret != self.config.app_secret {
            return Reply::error(400, 10_014, "app secret invalid");
        }
        let reusable = self.current_token.as_ref().and_then(|token| {
            let left = self.tokens.get(token)?.saturating_duration_since(now);
            (left > TOKEN_REUSE_MARGIN).then(|| (token.clone(), left))
        });
        let (token, left) = reusable.unwrap_or_else(|| {
            let token = format!("t-{}", random_hex());
            self.tokens
                .insert(token.clone(), now + self.config.token_lifetime);
            self.current_token = Some(token.clone());
            (token, self.config.token_lifetime)
        });
        Reply {
            status: 200,
            body: json!({
                "code": 0,
                "msg": "ok",
                "tenant_access_token": token,
                "expire": left.as_secs(),
            }),
            headers: Vec::new(),
        }
    }

    /// `GET /open-apis/bot/v3/info`: `bot` at the top level.
    fn bot_info(&self) -> Reply {
        Reply {
            status: 200,
            body: json!({
                "code": 0,
                "msg": "ok",
                "bot": {
                    "activate_status": 2,
                    "app_name": self.config.bot_name,
                    "avatar_url": "",
                    "ip_white_list": [],
                    "open_id": self.config.bot_open_id,
                },
            }),
            headers: Vec::new(),
        }
    }

    /// `GET /open-apis/contact/v3/users/{id}?user_id_type=open_id`: the
    /// user's basic info (the app holds `contact:user.base:readonly`).
    fn contact_user(&self, open_id: &str, query: Option<&str>) -> Reply {
        let by_open_id = query.is_some_and(|q| q.split('&').any(|p| p == "user_id_type=open_id"));
        match self.users.get(open_id).filter(|_| by_open_id) {
            Some(user) => Reply {
                status: 200,
                body: json!({
                    "code": 0,
                    "msg": "success",
                    "data": {"user": {
                        "open_id": user.open_id,
                        "union_id": user.union_id,
                        "user_id": user.user_id,
                        "name": user.name,
                        "en_name": user.name,
                    }},
                }),
                headers: Vec::new(),
            },
            None => Reply::error(400, 41_050, "no user authority error"),
        }
    }

    /// `POST /callback/ws/endpoint`: a long connection URL and the client's
    /// settings.
    fn ws_endpoint(&mut self, body: &Value) -> Reply {
        let known = str_field(body, "AppID") == Some(self.config.app_id.as_str())
            && str_field(body, "AppSecret") == Some(self.config.app_secret.as_str());
        if !known {
            return Reply::error(200, 10_014, "app secret invalid");
        }
        let url = self.socket.issue_url(&self.config.ws_base);
        Reply {
            status: 200,
            body: json!({
                "code": 0,
                "msg": "ok",
                "data": {
                    "URL": url,
                    "ClientConfig": self.config.client_config.to_json(),
                },
            }),
            headers: Vec::new(),
        }
    }

    /// The app-wide limit of `endpoint` (HTTP 429).
    fn app_limit(&mut self, endpoint: &'static str, now: Instant) -> Result<(), Reply> {
        let limit = self.config.rate_limits.app_per_second;
        let Some(per_second) = limit else {
            return Ok(());
        };
        let key = Key::Endpoint(endpoint);
        match self.limiter.check(&key, limit, now) {
            Ok(()) => {
                self.limiter.count(key, now);
                Ok(())
            }
            Err(reset) => {
                self.rate_limited += 1;
                Err(Reply {
                    status: 429,
                    body: json!({
                        "code": CODE_RATE_LIMITED,
                        "msg": "request trigger frequency limit",
                    }),
                    headers: vec![
                        ("x-ogw-ratelimit-limit", per_second.to_string()),
                        ("x-ogw-ratelimit-reset", reset.to_string()),
                    ],
                })
            }
        }
    }

    /// A per-chat or per-message limit (`230020`); counted when the
    /// message is stored.
    fn frequency_limit(
        &mut self,
        key: &Key,
        limit: Option<u32>,
        now: Instant,
    ) -> Result<(), Reply> {
        self.limiter.check(key, limit, now).map_err(|_| {
            self.rate_limited += 1;
            Reply::error(
                400,
                CODE_FREQUENCY,
                "This operation triggers the frequency limit.",
            )
        })
    }

    /// The message already sent with `uuid` within the hour, if any.
    fn idempotent(&self, uuid: Option<&str>, now: Instant) -> Option<Value> {
        let (message_id, at) = self.uuids.get(uuid?)?;
        if now.saturating_duration_since(*at) >= UUID_WINDOW {
            return None;
        }
        self.message(message_id)
            .map(|message| self.message_json(message))
    }

    /// The chat a message to `receive_id` goes to.
    fn receiver_chat(&mut self, receive_id_type: &str, receive_id: &str) -> Result<String, Reply> {
        match receive_id_type {
            "chat_id" => {
                self.chat_for_bot(receive_id)?;
                Ok(receive_id.to_owned())
            }
            "open_id" | "user_id" | "union_id" => {
                let user = self.users.values().find(|user| match receive_id_type {
                    "open_id" => user.open_id == receive_id,
                    "user_id" => user.user_id == receive_id,
                    _ => user.union_id == receive_id,
                });
                let Some(open_id) = user.map(|user| user.open_id.clone()) else {
                    return Err(Reply::error(
                        400,
                        230_013,
                        "Bot has NO availability to this user.",
                    ));
                };
                Ok(self.p2p_chat(&open_id))
            }
            _ => Err(Reply::invalid(
                "the fake knows no emails; use open_id, user_id, union_id or chat_id",
            )),
        }
    }

    /// The chat, if the bot can post there.
    fn chat_for_bot(&self, chat_id: &str) -> Result<&Chat, Reply> {
        match self.chats.get(chat_id) {
            Some(chat) if chat.bot_member && !chat.deleted => Ok(chat),
            _ => Err(Reply::outside_group()),
        }
    }

    /// `POST /open-apis/im/v1/messages?receive_id_type=…`.
    fn create_message(
        &mut self,
        query: Option<&str>,
        body: &Value,
        now: Instant,
    ) -> Result<Value, Reply> {
        self.app_limit("im.message.create", now)?;
        let Some(receive_id_type) = super::util::query_param(query, "receive_id_type") else {
            return Err(Reply::field_violation(
                "receive_id_type",
                "receive_id_type is required",
            ));
        };
        if !["open_id", "user_id", "union_id", "email", "chat_id"]
            .contains(&receive_id_type.as_str())
        {
            return Err(Reply::field_violation(
                "receive_id_type",
                "receive_id_type must be one of open_id, user_id, union_id, email, chat_id",
            ));
        }
        let receive_id = required(body, "receive_id")?;
        let msg_type = required(body, "msg_type")?;
        let content = required(body, "content")?;
        let uuid = str_field(body, "uuid");
        if let Some(sent) = self.idempotent(uuid, now) {
            return Ok(sent);
        }
        let chat_id = self.receiver_chat(&receive_id_type, receive_id)?;
        let json = check_content(msg_type, content)?;
        let limit = self.config.rate_limits.chat_per_second;
        self.frequency_limit(&Key::Chat(chat_id.clone()), limit, now)?;
        let message = self.store_bot_message(
            chat_id,
            msg_type,
            content,
            json,
            Threading::default(),
            uuid,
            now,
        );
        Ok(self.message_json(&message))
    }

    /// `POST /open-apis/ephemeral/v1/send`: a card only one person of a
    /// group sees. Only `interactive` cards, only in groups the bot is in;
    /// the person by `open_id` (the fake knows no other ids here).
    fn send_ephemeral(&mut self, body: &Value, now: Instant) -> Result<Value, Reply> {
        self.app_limit("ephemeral.send", now)?;
        let chat_id = required(body, "chat_id")?.to_owned();
        let open_id = required(body, "open_id")?.to_owned();
        if required(body, "msg_type")? != "interactive" {
            return Err(Reply::field_violation(
                "msg_type",
                "msg_type must be interactive",
            ));
        }
        let Some(card) = body.get("card").filter(|card| card.is_object()).cloned() else {
            return Err(Reply::field_violation("card", "card is required"));
        };
        let chat = self.chat_for_bot(&chat_id)?;
        if !matches!(chat.chat_type, ChatType::Group) {
            return Err(Reply::invalid("ephemeral cards are only for group chats"));
        }
        if !self.users.contains_key(&open_id) {
            return Err(Reply::invalid("open_id not found"));
        }
        let n = self.next();
        let message_id = format!("om_{}", pseudo_hex(0x0e9e_0000_0000 + n, 32));
        self.ephemerals.push(Ephemeral {
            message_id: message_id.clone(),
            chat_id,
            open_id,
            card,
        });
        Ok(serde_json::json!({ "message_id": message_id }))
    }

    /// `POST /open-apis/im/v1/messages/{message_id}/reply`.
    fn reply_message(
        &mut self,
        parent_id: &str,
        body: &Value,
        now: Instant,
    ) -> Result<Value, Reply> {
        self.app_limit("im.message.reply", now)?;
        let msg_type = required(body, "msg_type")?;
        let content = required(body, "content")?;
        let in_thread = body.get("reply_in_thread") == Some(&Value::Bool(true));
        let uuid = str_field(body, "uuid");
        if let Some(sent) = self.idempotent(uuid, now) {
            return Ok(sent);
        }
        let Some(parent) = self.message(parent_id).cloned() else {
            return Err(Reply::invalid("message_id not found"));
        };
        if parent.recalled {
            return Err(Reply::error(400, 230_011, "The message was recalled."));
        }
        self.chat_for_bot(&parent.chat_id)?;
        let json = check_content(msg_type, content)?;
        let limit = self.config.rate_limits.chat_per_second;
        self.frequency_limit(&Key::Chat(parent.chat_id.clone()), limit, now)?;
        let threading = self.threading_under(&parent, in_thread);
        let message = self.store_bot_message(
            parent.chat_id,
            msg_type,
            content,
            json,
            threading,
            uuid,
            now,
        );
        Ok(self.message_json(&message))
    }

    /// `PATCH /open-apis/im/v1/messages/{message_id}`: a new version of a
    /// card the bot sent.
    fn patch_message(
        &mut self,
        message_id: &str,
        body: &Value,
        now: Instant,
    ) -> Result<Value, Reply> {
        self.app_limit("im.message.patch", now)?;
        let content = required(body, "content")?;
        let Some(message) = self.message(message_id) else {
            return Err(Reply::invalid("message_id not found"));
        };
        if message.recalled {
            return Err(Reply::error(400, 230_011, "The message was recalled."));
        }
        if !message.by_bot() {
            return Err(Reply::error(
                400,
                230_012,
                "Bot is NOT the sender of the message.",
            ));
        }
        if message.msg_type != "interactive" {
            return Err(Reply::invalid(
                "only interactive (card) messages can be patched",
            ));
        }
        let chat_id = message.chat_id.clone();
        self.chat_for_bot(&chat_id)?;
        let limit = self.config.rate_limits.edits_per_second;
        self.frequency_limit(&Key::Message(message_id.to_owned()), limit, now)?;
        let json = check_content("interactive", content)?;
        if limit.is_some() {
            self.limiter.count(Key::Message(message_id.to_owned()), now);
        }
        self.add_version(message_id, content.to_owned(), json, EditSource::Patch);
        Ok(json!({}))
    }

    /// Root, parent and thread of a reply to `parent`.
    fn threading_under(&mut self, parent: &StoredMessage, in_thread: bool) -> Threading {
        let root_id = parent
            .root_id
            .clone()
            .unwrap_or_else(|| parent.message_id.clone());
        let thread_id = match (&parent.thread_id, in_thread) {
            (Some(thread), _) => Some(thread.clone()),
            (None, true) => Some(self.thread_of(&root_id)),
            (None, false) => None,
        };
        Threading {
            root_id: Some(root_id),
            parent_id: Some(parent.message_id.clone()),
            thread_id,
        }
    }

    /// The thread (`omt_…`) under `root_id`, made on first use (the root
    /// message joins it).
    fn thread_of(&mut self, root_id: &str) -> String {
        if let Some(thread) = self.threads.get(root_id) {
            return thread.clone();
        }
        let n = self.next();
        let thread = format!("omt_{}", pseudo_hex(0x7431_0000 + n, 16));
        self.threads.insert(root_id.to_owned(), thread.clone());
        if let Some(root) = self
            .messages
            .iter_mut()
            .find(|message| message.message_id == root_id)
        {
            root.thread_id = Some(thread.clone());
        }
        thread
    }

    #[allow(clippy::too_many_arguments)]
    fn store_bot_message(
        &mut self,
        chat_id: String,
        msg_type: &str,
        content: &str,
        json: Value,
        threading: Threading,
        uuid: Option<&str>,
        now: Instant,
    ) -> StoredMessage {
        if self.config.rate_limits.chat_per_second.is_some() {
            self.limiter.count(Key::Chat(chat_id.clone()), now);
        }
        let message = self.store(
            chat_id,
            msg_type,
            content.to_owned(),
            json,
            Sender::Bot,
            threading,
            uuid,
        );
        if let Some(uuid) = uuid {
            self.uuids
                .insert(uuid.to_owned(), (message.message_id.clone(), now));
        }
        message
    }

    #[allow(clippy::too_many_arguments)]
    fn store(
        &mut self,
        chat_id: String,
        msg_type: &str,
        content: String,
        json: Value,
        sender: Sender,
        threading: Threading,
        uuid: Option<&str>,
    ) -> StoredMessage {
        let n = self.next();
        let at_ms = unix_millis();
        let chat_type = self
            .chats
            .get(&chat_id)
            .map_or("group", |chat| chat.chat_type.as_str());
        let message = StoredMessage {
            message_id: format!("om_{}", pseudo_hex(0x0e55_a9e0_0000 + n, 32)),
            chat_id,
            chat_type: chat_type.to_owned(),
            msg_type: msg_type.to_owned(),
            sender,
            root_id: threading.root_id,
            parent_id: threading.parent_id,
            thread_id: threading.thread_id,
            uuid: uuid.map(str::to_owned),
            create_time: at_ms,
            versions: vec![Version {
                content,
                json,
                source: EditSource::Sent,
                at_ms,
            }],
            recalled: false,
        };
        self.messages.push(message.clone());
        message
    }

    fn add_version(&mut self, message_id: &str, content: String, json: Value, source: EditSource) {
        if let Some(message) = self
            .messages
            .iter_mut()
            .find(|message| message.message_id == message_id)
        {
            let at_ms = unix_millis().max(message.update_time());
            message.versions.push(Version {
                content,
                json,
                source,
                at_ms,
            });
        }
    }

    /// A message as the Open API answers it (`data` of create and reply).
    fn message_json(&self, message: &StoredMessage) -> Value {
        let sender = match &message.sender {
            Sender::Bot => json!({
                "id": self.config.app_id,
                "id_type": "app_id",
                "sender_type": "app",
                "tenant_key": TENANT_KEY,
            }),
            Sender::User(open_id) => json!({
                "id": open_id,
                "id_type": "open_id",
                "sender_type": "user",
                "tenant_key": TENANT_KEY,
            }),
        };
        let mut data = json!({
            "message_id": message.message_id,
            "msg_type": message.msg_type,
            "create_time": message.create_time.to_string(),
            "update_time": message.update_time().to_string(),
            "deleted": false,
            "updated": message.edit_count() > 0,
            "chat_id": message.chat_id,
            "sender": sender,
            "body": { "content": message.content() },
        });
        if let Value::Object(object) = &mut data {
            for (key, value) in [
                ("root_id", &message.root_id),
                ("parent_id", &message.parent_id),
                ("thread_id", &message.thread_id),
            ] {
                if let Some(value) = value {
                    object.insert(key.into(), json!(value));
                }
            }
        }
        data
    }
}

/// Where a message sits in a reply chain.
#[derive(Debug, Clone, Default)]
struct Threading {
    root_id: Option<String>,
    parent_id: Option<String>,
    thread_id: Option<String>,
}

/// A required string field of a request body (99992402 if missing).
fn required<'a>(body: &'a Value, field: &str) -> Result<&'a str, Reply> {
    match body.get(field) {
        Some(Value::String(value)) if !value.is_empty() => Ok(value),
        Some(Value::String(_)) | None | Some(Value::Null) => Err(Reply::field_violation(
            field,
            &format!("{field} is required"),
        )),
        Some(_) => Err(Reply::field_violation(
            field,
            &format!("{field} must be a string"),
        )),
    }
}

/// Checks `content` for `msg_type`; the parsed content.
fn check_content(msg_type: &str, content: &str) -> Result<Value, Reply> {
    match msg_type {
        "text" => {
            if content.len() > MAX_TEXT_BYTES {
                return Err(Reply::too_long(&format!(
                    "text content is {} bytes, over {MAX_TEXT_BYTES}",
                    content.len()
                )));
            }
            let json: Value = serde_json::from_str(content).map_err(|_| {
                Reply::invalid("content is not JSON (a text message's is {\"text\": …})")
            })?;
            if str_field(&json, "text").is_none() {
                return Err(Reply::invalid(
                    "content.text: a text message needs a text string",
                ));
            }
            Ok(json)
        }
        "interactive" => {
            if content.len() > MAX_CARD_BYTES {
                return Err(Reply::too_long(&format!(
                    "card content is {} bytes, over {MAX_CARD_BYTES}",
                    content.len()
                )));
            }
            let json: Value = serde_json::from_str(content)
                .map_err(|error| Reply::bad_card(&format!("content is not JSON: {error}")))?;
            card::validate(&json).map_err(|error| Reply::bad_card(&error))?;
            Ok(json)
        }
        other => Err(Reply::invalid(&format!(
            "msg_type {other:?}: the fake sends only text and interactive"
        ))),
    }
}

/// Users acting: messages and card callbacks.
impl State {
    /// A user's text message: stored; the `im.message.receive_v1` payload
    /// if Feishu would push it.
    pub(crate) fn user_message(
        &mut self,
        chat_id: &str,
        from: &str,
        text: &str,
        reply_to: Option<&str>,
    ) -> Result<(StoredMessage, Option<Value>), String> {
        let user = self
            .users
            .get(from)
            .cloned()
            .ok_or_else(|| format!("unknown user {from}: add_user first"))?;
        let chat = self
            .chats
            .get(chat_id)
            .cloned()
            .ok_or_else(|| format!("unknown chat {chat_id}: add_chat first"))?;
        if chat.deleted {
            return Err(format!("chat {chat_id} was disbanded"));
        }
        let threading = match reply_to {
            None => Threading::default(),
            Some(parent_id) => {
                let parent = self
                    .message(parent_id)
                    .filter(|parent| parent.chat_id == chat_id)
                    .cloned()
                    .ok_or_else(|| {
                        format!("no message {parent_id} in chat {chat_id} to reply to")
                    })?;
                self.threading_under(&parent, false)
            }
        };
        let (shown, mentions) = self.mention_bot(text);
        let content = json!({ "text": shown }).to_string();
        let json = json!({ "text": shown });
        let message = self.store(
            chat_id.to_owned(),
            "text",
            content.clone(),
            json,
            Sender::User(user.open_id.clone()),
            threading,
            None,
        );
        let pushed = match chat.chat_type {
            ChatType::P2p { .. } => true,
            ChatType::Group => {
                chat.bot_member && (!mentions.is_empty() || self.config.all_group_messages)
            }
        };
        if !pushed {
            return Ok((message, None));
        }
        let mut body = json!({
            "message_id": message.message_id,
            "create_time": message.create_time.to_string(),
            "update_time": message.create_time.to_string(),
            "chat_id": chat_id,
            "chat_type": chat.chat_type.as_str(),
            "message_type": "text",
            "content": content,
        });
        if let Value::Object(object) = &mut body {
            for (key, value) in [
                ("root_id", &message.root_id),
                ("parent_id", &message.parent_id),
                ("thread_id", &message.thread_id),
            ] {
                if let Some(value) = value {
                    object.insert(key.into(), json!(value));
                }
            }
            if !mentions.is_empty() {
                object.insert("mentions".into(), Value::Array(mentions));
            }
        }
        let event = json!({
            "sender": {
                "sender_id": user.ids_json(),
                "sender_type": "user",
                "tenant_key": TENANT_KEY,
            },
            "message": body,
        });
        let payload = self.event_payload("im.message.receive_v1", event);
        Ok((message, Some(payload)))
    }

    /// `@bot` in `text` → `@_user_N` with a mention of the bot.
    fn mention_bot(&self, text: &str) -> (String, Vec<Value>) {
        let mut shown = String::with_capacity(text.len());
        let mut mentions = Vec::new();
        let mut rest = text;
        while let Some(at) = rest.find("@bot") {
            let after = &rest[at + 4..];
            let whole_word = !after
                .chars()
                .next()
                .is_some_and(|next| next.is_alphanumeric() || next == '_');
            shown.push_str(&rest[..at]);
            if whole_word {
                let key = format!("@_user_{}", mentions.len() + 1);
                shown.push_str(&key);
                mentions.push(json!({
                    "key": key,
                    "id": {
                        "union_id": self.config.bot_union_id,
                        "user_id": "",
                        "open_id": self.config.bot_open_id,
                    },
                    "name": self.config.bot_name,
                    "tenant_key": TENANT_KEY,
                }));
            } else {
                shown.push_str("@bot");
            }
            rest = after;
        }
        shown.push_str(rest);
        (shown, mentions)
    }

    /// A whole schema 2.0 event: `header` and `event`.
    pub(crate) fn event_payload(&mut self, event_type: &str, event: Value) -> Value {
        let n = self.next();
        json!({
            "schema": "2.0",
            "header": {
                "event_id": pseudo_hex(0x0e7e_0000 + n, 32),
                "token": self.config.verification_token,
                "create_time": unix_millis().to_string(),
                "event_type": event_type,
                "tenant_key": TENANT_KEY,
                "app_id": self.config.app_id,
            },
            "event": event,
        })
    }

    /// A `card.action.trigger` payload for what `from` does to the card of
    /// `message_id`.
    pub(crate) fn card_action(
        &mut self,
        message_id: &str,
        from: &str,
        act: Act<'_>,
    ) -> Result<Value, String> {
        let user = self
            .users
            .get(from)
            .cloned()
            .ok_or_else(|| format!("unknown user {from}: add_user first"))?;
        let message = self
            .message(message_id)
            .ok_or_else(|| format!("no message {message_id}"))?;
        if message.recalled {
            return Err(format!("message {message_id} was recalled"));
        }
        let chat_id = message.chat_id.clone();
        let card = message
            .card()
            .cloned()
            .ok_or_else(|| format!("message {message_id} is {}, not a card", message.msg_type))?;
        let action = match act {
            Act::Press(key) => press_action(&card, key)?,
            Act::Submit { button, values } => submit_action(&card, button, values)?,
            Act::Select { name, values } => select_action(&card, name, values)?,
        };
        let event = json!({
            "operator": {
                "tenant_key": TENANT_KEY,
                "user_id": user.user_id,
                "open_id": user.open_id,
                "union_id": user.union_id,
            },
            "token": format!("c-{}", random_hex()),
            "action": action,
            "host": "im_message",
            "context": {
                "open_message_id": message_id,
                "open_chat_id": chat_id,
            },
        });
        Ok(self.event_payload("card.action.trigger", event))
    }
}

fn find_button<'a>(card: &'a Value, key: &str) -> Result<Found<'a>, String> {
    let all = card::elements(card);
    let buttons: Vec<Found<'a>> = all
        .into_iter()
        .filter(|found| found.tag() == "button")
        .collect();
    let matching: Vec<Found<'a>> = buttons
        .iter()
        .copied()
        .filter(|found| found.name() == Some(key) || found.text() == Some(key))
        .collect();
    match matching.as_slice() {
        [one] if one.disabled() => Err(format!("button {key:?} is disabled")),
        [one] => Ok(*one),
        [] => {
            let names: Vec<String> = buttons
                .iter()
                .map(|found| format!("{:?}", found.name().or(found.text()).unwrap_or_default()))
                .collect();
            Err(format!(
                "the card has no button {key:?} (by name or text); its buttons: [{}]",
                names.join(", ")
            ))
        }
        _ => Err(format!("several buttons match {key:?}: use a name")),
    }
}

fn press_action(card: &Value, key: &str) -> Result<Value, String> {
    let button = find_button(card, key)?;
    if let Some(form) = button.form {
        return Err(format!(
            "button {key:?} is in form {:?}: use submit_form",
            str_field(form, "name").unwrap_or_default()
        ));
    }
    let value = button.callback_value().ok_or_else(|| {
        format!("button {key:?} has no callback behavior: pressing it sends the app nothing")
    })?;
    let mut action = json!({ "value": value, "tag": "button" });
    if let (Some(name), Value::Object(object)) = (button.name(), &mut action) {
        object.insert("name".into(), json!(name));
    }
    Ok(action)
}

fn submit_action(card: &Value, key: &str, values: &Value) -> Result<Value, String> {
    let button = find_button(card, key)?;
    let form = button
        .form
        .ok_or_else(|| format!("button {key:?} is not in a form: use press"))?;
    if str_field(button.element, "form_action_type") != Some("submit") {
        return Err(format!("button {key:?} does not submit its form"));
    }
    let Value::Object(given) = values else {
        return Err("form values must be a JSON object of field name → value".into());
    };
    let fields = card::form_fields(form);
    for (name, value) in given {
        let field = fields
            .iter()
            .find(|field| field.name() == Some(name.as_str()))
            .ok_or_else(|| {
                let names: Vec<&str> = fields.iter().filter_map(Found::name).collect();
                format!("the form has no field {name:?}; its fields: {names:?}")
            })?;
        check_field_value(field, name, value)?;
    }
    for field in &fields {
        let required = field.element.get("required") == Some(&Value::Bool(true));
        let name = field.name().unwrap_or_default();
        if required && !given.contains_key(name) {
            return Err(format!(
                "field {name:?} is required: Feishu does not submit the form without it"
            ));
        }
    }
    let mut action = json!({
        "value": button.callback_value().cloned().unwrap_or_else(|| json!({})),
        "tag": "button",
        "form_value": values,
    });
    if let (Some(name), Value::Object(object)) = (button.name(), &mut action) {
        object.insert("name".into(), json!(name));
    }
    Ok(action)
}

fn check_field_value(field: &Found<'_>, name: &str, value: &Value) -> Result<(), String> {
    let options = field.option_values();
    match (field.tag(), value) {
        ("input", Value::String(text)) => {
            let max = field
                .element
                .get("max_length")
                .and_then(Value::as_u64)
                .unwrap_or(1000);
            if u64::try_from(text.chars().count()).unwrap_or(u64::MAX) > max {
                return Err(format!("field {name:?} takes at most {max} characters"));
            }
            Ok(())
        }
        ("select_static", Value::String(choice)) if options.contains(&choice.as_str()) => Ok(()),
        ("multi_select_static", Value::Array(choices))
            if choices.iter().all(|choice| {
                choice
                    .as_str()
                    .is_some_and(|choice| options.contains(&choice))
            }) =>
        {
            Ok(())
        }
        ("checker", Value::Bool(_)) => Ok(()),
        (tag, value) => Err(format!(
            "field {name:?} ({tag}) cannot take {value}: input → string, select_static → one of \
             {options:?}, multi_select_static → an array of them, checker → bool"
        )),
    }
}

fn select_action(card: &Value, name: &str, values: &[&str]) -> Result<Value, String> {
    let select = card::elements(card)
        .into_iter()
        .find(|found| {
            matches!(found.tag(), "select_static" | "multi_select_static")
                && found.name() == Some(name)
        })
        .ok_or_else(|| format!("the card has no select named {name:?}"))?;
    if select.form.is_some() {
        return Err(format!(
            "select {name:?} is in a form: its value goes with submit_form"
        ));
    }
    let options = select.option_values();
    if let Some(unknown) = values.iter().find(|value| !options.contains(value)) {
        return Err(format!(
            "{unknown:?} is not an option of {name:?}: {options:?}"
        ));
    }
    let mut action = match (select.tag(), values) {
        ("select_static", [one]) => json!({ "tag": "select_static", "option": one }),
        ("select_static", _) => {
            return Err(format!("select_static {name:?} takes exactly one value"));
        }
        (_, many) => json!({ "tag": "multi_select_static", "options": many }),
    };
    if let Value::Object(object) = &mut action {
        object.insert("name".into(), json!(name));
        if let Some(value) = select.callback_value() {
            object.insert("value".into(), value.clone());
        }
    }
    Ok(action)
}

/// Pushes: deliveries over the long connection or to the callback URL,
/// answers, timeouts.
impl State {
    /// Records a new push; its id.
    pub(crate) fn new_push(&mut self, kind: PushKind, payload: Value) -> u64 {
        let id = u64::try_from(self.pushes.len()).unwrap_or(u64::MAX) + 1;
        let header = payload.get("header").unwrap_or(&Value::Null);
        self.pushes.push(Push {
            id,
            kind,
            event_type: str_field(header, "event_type")
                .unwrap_or_default()
                .to_owned(),
            event_id: str_field(header, "event_id").unwrap_or_default().to_owned(),
            payload,
            deliveries: Vec::new(),
        });
        id
    }

    fn push_mut(&mut self, id: u64) -> Option<&mut Push> {
        self.pushes.iter_mut().find(|push| push.id == id)
    }

    /// Starts a delivery of push `id`: queued for the long connection, or
    /// a request to POST to the callback URL.
    pub(crate) fn deliver(&mut self, id: u64, now: Instant) -> Option<(usize, Plan)> {
        let push = self.push(id)?;
        let kind = push.kind;
        let payload = push.payload.clone();
        let (via, plan) = match self.config.callback_url.clone() {
            Some(url) => {
                let request = self.http_request(&payload, None);
                (Via::Http { url: url.clone() }, Plan::Http { url, request })
            }
            None => (Via::Queued, Plan::Queued),
        };
        let sent_at = matches!(plan, Plan::Http { .. }).then_some(now);
        let push = self.push_mut(id)?;
        push.deliveries.push(Delivery {
            via,
            created_at: now,
            sent_at,
            answer: None,
            failure: None,
            settled: false,
        });
        let delivery = push.deliveries.len() - 1;
        if matches!(plan, Plan::Queued) {
            let n = self.next();
            let frame_type = match (kind, self.config.card_frame_type) {
                (PushKind::CardCallback, CardFrameType::Card) => "card",
                _ => "event",
            };
            self.socket.enqueue(Outgoing {
                push: id,
                delivery,
                frame_id: pseudo_hex(0xf4a3_0000 + n, 32),
                frame_type,
                payload: payload.to_string().into_bytes(),
            });
        }
        Some((delivery, plan))
    }

    /// What long connection `conn` sends now; the pushes it takes are
    /// marked sent on it.
    pub(crate) fn socket_output(&mut self, conn: u64, now: Instant) -> Output {
        let (out, taken) = self.socket.output(conn);
        for (push, delivery, frame_id) in taken {
            if let Some(delivery) = self
                .push_mut(push)
                .and_then(|push| push.deliveries.get_mut(delivery))
            {
                delivery.via = Via::LongConnection {
                    connection: conn,
                    frame_id,
                };
                delivery.sent_at = Some(now);
            }
        }
        out
    }

    /// A frame from long connection `conn`: a ping (answered with a pong)
    /// or the answer to a push.
    pub(crate) fn socket_receive(&mut self, conn: u64, bytes: &[u8], now: Instant) {
        let Ok(frame) = Frame::from_bytes(bytes) else {
            self.socket.stats.unexpected_frames += 1;
            return;
        };
        match (frame.method, frame.header("type")) {
            (METHOD_CONTROL, Some("ping")) => {
                let config = self.config.client_config.to_json().to_string();
                self.socket.pong(conn, frame.service, config.as_bytes());
            }
            (METHOD_DATA, _) => {
                let frame_id = frame.header("message_id").unwrap_or_default();
                let found = self.pushes.iter().find_map(|push| {
                    push.deliveries.iter().position(|delivery| {
                        matches!(&delivery.via, Via::LongConnection { frame_id: id, .. } if id == frame_id)
                    })
                    .map(|index| (push.id, index))
                });
                let Some((push, delivery)) = found else {
                    self.socket.stats.unexpected_frames += 1;
                    return;
                };
                self.socket.stats.answers += 1;
                let sent_at = self
                    .push(push)
                    .and_then(|push| push.deliveries.get(delivery))
                    .and_then(|delivery| delivery.sent_at)
                    .unwrap_or(now);
                let answer = ws_answer(&frame, now.saturating_duration_since(sent_at));
                self.record_answer(push, delivery, answer);
            }
            _ => self.socket.stats.unexpected_frames += 1,
        }
    }

    /// The app answered delivery `delivery` of push `push`.
    pub(crate) fn record_answer(&mut self, push: u64, delivery: usize, answer: Answer) {
        let timeout = self.config.callback_timeout;
        let Some(record) = self.push(push) else {
            return;
        };
        let kind = record.kind;
        let message_id = record
            .payload
            .pointer("/event/context/open_message_id")
            .and_then(Value::as_str)
            .map(str::to_owned);
        let verdict = evaluate(kind, &answer, timeout);
        let Some(target) = self
            .push_mut(push)
            .and_then(|push| push.deliveries.get_mut(delivery))
        else {
            return;
        };
        let late = target.settled;
        target.answer = Some(answer);
        if late {
            if let Some(failure) = &mut target.failure {
                failure.push_str(" (an answer came later)");
            }
            return;
        }
        target.settled = true;
        match verdict {
            Ok(card) => {
                if let (Some(card), Some(message_id)) = (card, message_id) {
                    let content = card.to_string();
                    self.add_version(&message_id, content, card, EditSource::CallbackAnswer);
                }
            }
            Err(failure) => target.failure = Some(failure),
        }
    }

    /// A delivery to the callback URL failed without an answer.
    pub(crate) fn record_http_failure(&mut self, push: u64, delivery: usize, failure: String) {
        if let Some(target) = self
            .push_mut(push)
            .and_then(|push| push.deliveries.get_mut(delivery))
            .filter(|target| !target.settled)
        {
            target.settled = true;
            target.failure = Some(failure);
        }
    }

    /// Settles long connection deliveries that went unanswered for the
    /// callback timeout, and card callbacks that no connection took in
    /// that time. Whether anything changed.
    pub(crate) fn expire_overdue(&mut self, now: Instant) -> bool {
        let timeout = self.config.callback_timeout;
        let mut unqueue = Vec::new();
        let mut changed = false;
        for push in &mut self.pushes {
            for (index, delivery) in push.deliveries.iter_mut().enumerate() {
                if delivery.settled {
                    continue;
                }
                match (&delivery.via, delivery.sent_at) {
                    (Via::LongConnection { .. }, Some(sent)) if now >= sent + timeout => {
                        delivery.settled = true;
                        delivery.failure = Some(format!("no answer within {timeout:?}"));
                        changed = true;
                    }
                    (Via::Queued, _)
                        if push.kind == PushKind::CardCallback
                            && now >= delivery.created_at + timeout =>
                    {
                        delivery.settled = true;
                        delivery.failure = Some(format!(
                            "no long connection took it within {timeout:?} (none open?)"
                        ));
                        unqueue.push((push.id, index));
                        changed = true;
                    }
                    _ => {}
                }
            }
        }
        for (push, delivery) in unqueue {
            self.socket.unqueue(push, delivery);
        }
        changed
    }

    /// When the next long connection delivery times out, if any is
    /// pending.
    pub(crate) fn next_deadline(&self) -> Option<Instant> {
        let timeout = self.config.callback_timeout;
        self.pushes
            .iter()
            .flat_map(|push| {
                push.deliveries
                    .iter()
                    .filter(|delivery| !delivery.settled)
                    .filter_map(move |delivery| match (&delivery.via, delivery.sent_at) {
                        (Via::LongConnection { .. }, Some(sent)) => Some(sent + timeout),
                        (Via::Queued, _) if push.kind == PushKind::CardCallback => {
                            Some(delivery.created_at + timeout)
                        }
                        _ => None,
                    })
            })
            .min()
    }

    /// What the user saw of card callback `push`.
    pub(crate) fn outcome(&self, push: u64) -> CallbackOutcome {
        let delivery = self.push(push).and_then(Push::last);
        let answer = delivery.and_then(|delivery| delivery.answer.as_ref());
        let json = answer.map(|answer| answer.json.clone().unwrap_or_else(|| json!({})));
        let failure = match delivery {
            None => Some("never delivered".to_owned()),
            Some(delivery) if !delivery.settled => Some("still waiting for an answer".to_owned()),
            Some(delivery) => delivery.failure.clone(),
        };
        let card = json
            .as_ref()
            .filter(|_| failure.is_none())
            .and_then(|json| json.pointer("/card/data"))
            .cloned();
        CallbackOutcome {
            push,
            status: answer.map(|answer| answer.status),
            toast: json.as_ref().and_then(|json| json.get("toast")).cloned(),
            answer: json,
            card,
            latency: answer.map(|answer| answer.latency),
            failure,
        }
    }

    /// The request Feishu POSTs to the callback URL for `payload`:
    /// encrypted and signed when the app has an encrypt key, or a
    /// forgery of it.
    pub(crate) fn http_request(&self, payload: &Value, forgery: Option<Forgery>) -> HttpRequest {
        let plain = payload.to_string();
        let key = match (&self.config.encrypt_key, forgery) {
            (
                Some(key),
                None
                | Some(
                    Forgery::BadSignature | Forgery::OldTimestamp | Forgery::WrongVerificationToken,
                ),
            ) => key.clone(),
            _ => {
                return HttpRequest {
                    body: plain.into_bytes(),
                    headers: vec![("Content-Type", "application/json; charset=utf-8".into())],
                };
            }
        };
        let body = json!({ "encrypt": crypto::encrypt(&key, random_bytes(), plain.as_bytes()) })
            .to_string()
            .into_bytes();
        let timestamp = match forgery {
            Some(Forgery::OldTimestamp) => unix_secs().saturating_sub(6 * 60),
            _ => unix_secs(),
        }
        .to_string();
        let nonce = random_hex();
        let signing_key = match forgery {
            Some(Forgery::BadSignature) => format!("not-{key}"),
            _ => key,
        };
        let signature = crypto::signature(&timestamp, &nonce, &signing_key, &body);
        HttpRequest {
            body,
            headers: vec![
                ("Content-Type", "application/json; charset=utf-8".into()),
                (TIMESTAMP_HEADER, timestamp),
                (NONCE_HEADER, nonce),
                (SIGNATURE_HEADER, signature),
            ],
        }
    }

    /// The `url_verification` request: encrypted if the app has an encrypt
    /// key, and not signed (Feishu's SDKs check no signature on it).
    pub(crate) fn url_verification_request(&self, challenge: &str) -> HttpRequest {
        let plain = json!({
            "challenge": challenge,
            "token": self.config.verification_token,
            "type": "url_verification",
        })
        .to_string();
        let body = match &self.config.encrypt_key {
            Some(key) => {
                json!({ "encrypt": crypto::encrypt(key, random_bytes(), plain.as_bytes()) })
                    .to_string()
                    .into_bytes()
            }
            None => plain.into_bytes(),
        };
        HttpRequest {
            body,
            headers: vec![("Content-Type", "application/json; charset=utf-8".into())],
        }
    }
}

/// Reads an answer frame: payload `{"code": 200, "headers": {…}, "data":
/// base64}`.
fn ws_answer(frame: &Frame, latency: Duration) -> Answer {
    let frame_headers = frame
        .headers
        .iter()
        .map(|header| (header.key.clone(), header.value.clone()))
        .collect();
    let envelope: Option<Value> = serde_json::from_slice(frame.payload_bytes()).ok();
    let status = envelope
        .as_ref()
        .and_then(|envelope| envelope.get("code"))
        .and_then(Value::as_u64)
        .and_then(|code| u16::try_from(code).ok())
        .unwrap_or(0);
    let body = envelope
        .as_ref()
        .and_then(|envelope| envelope.get("data"))
        .and_then(Value::as_str)
        .filter(|data| !data.is_empty())
        .map(|data| {
            STANDARD
                .decode(data)
                .map(|bytes| String::from_utf8_lossy(&bytes).into_owned())
                .unwrap_or_else(|_| format!("<data is not base64: {data}>"))
        });
    let json = body
        .as_deref()
        .and_then(|body| serde_json::from_str(body).ok());
    Answer {
        status,
        body,
        json,
        latency,
        frame_headers,
    }
}

/// Whether Feishu takes `answer`: `Ok` with the card that replaces the
/// message's (card callbacks), or why it shows the user an error.
fn evaluate(kind: PushKind, answer: &Answer, timeout: Duration) -> Result<Option<Value>, String> {
    if answer.status != 200 {
        return Err(format!("answered {}, not 200", answer.status));
    }
    if answer.latency > timeout {
        return Err(format!(
            "answered after {:?}, over the {timeout:?} Feishu waits",
            answer.latency
        ));
    }
    if kind == PushKind::Event {
        return Ok(None);
    }
    let body = answer.body.as_deref().unwrap_or_default().trim();
    if body.is_empty() {
        return Ok(None);
    }
    let Some(Value::Object(object)) = &answer.json else {
        return Err(format!("the answer is not a JSON object: {body}"));
    };
    if let Some(toast) = object.get("toast") {
        let known = str_field(toast, "type").is_some_and(|kind| TOAST_TYPES.contains(&kind));
        if !known {
            return Err(format!(
                "toast.type must be one of {TOAST_TYPES:?}: {toast}"
            ));
        }
        let has_text = str_field(toast, "content").is_some() || toast.get("i18n").is_some();
        if !has_text {
            return Err(format!("toast needs content or i18n: {toast}"));
        }
    }
    let Some(card) = object.get("card") else {
        return Ok(None);
    };
    match str_field(card, "type") {
        Some("raw") => {
            let data = card.get("data").cloned().unwrap_or(Value::Null);
            if data.to_string().len() > MAX_CARD_BYTES {
                return Err(format!(
                    "the card in the answer is over {MAX_CARD_BYTES} bytes"
                ));
            }
            card::validate(&data)
                .map_err(|error| format!("the card in the answer is invalid: {error}"))?;
            Ok(Some(data))
        }
        Some("template") => Err("card.type \"template\": the fake only renders raw cards".into()),
        _ => Err(format!("card.type must be \"raw\" or \"template\": {card}")),
    }
}

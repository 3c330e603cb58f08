//! The fake's state and the Bot API methods on it. Everything here is
//! synchronous; `server` does the HTTP, long polling and webhook delivery.

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use serde_json::{Map, Value, json};

use super::model::{
    Call, CallbackAnswer, Chat, ChatStatus, IncomingMessage, StoredMessage, User, WebhookConfig,
    WebhookDelivery,
};
use super::params;
use super::rate::{Limiter, RateLimits};

/// Error descriptions, exactly as the Bot API sends them (teloxide maps
/// most of them to `ApiError` variants by exact string).
pub(crate) mod desc {
    pub(crate) const NOT_FOUND: &str = "Not Found";
    pub(crate) const UNAUTHORIZED: &str = "Unauthorized";
    pub(crate) const CHAT_NOT_FOUND: &str = "Bad Request: chat not found";
    pub(crate) const CHAT_ID_EMPTY: &str = "Bad Request: chat_id is empty";
    pub(crate) const BLOCKED: &str = "Forbidden: bot was blocked by the user";
    pub(crate) const TEXT_EMPTY: &str = "Bad Request: message text is empty";
    pub(crate) const TOO_LONG: &str = "Bad Request: message is too long";
    pub(crate) const EDIT_TOO_LONG: &str = "Bad Request: MESSAGE_TOO_LONG";
    pub(crate) const BUTTON_DATA_INVALID: &str = "Bad Request: BUTTON_DATA_INVALID";
    pub(crate) const BUTTON_URL_INVALID: &str = "Bad Request: BUTTON_URL_INVALID";
    pub(crate) const TEXT_BUTTONS: &str = "Bad Request: can't parse inline keyboard button: \
                                           Text buttons are unallowed in the inline keyboard";
    pub(crate) const BAD_MARKUP: &str =
        "Bad Request: can't parse reply keyboard markup JSON object";
    pub(crate) const NOT_MODIFIED: &str = "Bad Request: message is not modified: specified new \
                                           message content and reply markup are exactly the same \
                                           as a current content and reply markup of the message";
    pub(crate) const EDIT_NOT_FOUND: &str = "Bad Request: message to edit not found";
    pub(crate) const CANT_EDIT: &str = "Bad Request: message can't be edited";
    pub(crate) const NO_MESSAGE_ID: &str = "Bad Request: message identifier is not specified";
    pub(crate) const MESSAGE_ID_INVALID: &str = "Bad Request: MESSAGE_ID_INVALID";
    pub(crate) const REPLY_NOT_FOUND: &str = "Bad Request: message to be replied not found";
    pub(crate) const THREAD_NOT_FOUND: &str = "Bad Request: message thread not found";
    pub(crate) const QUERY_INVALID: &str =
        "Bad Request: query is too old and response timeout expired or query id is invalid";
    pub(crate) const WEBHOOK_ACTIVE: &str = "Conflict: can't use getUpdates method while webhook \
                                             is active; use deleteWebhook to delete the webhook \
                                             first";
    pub(crate) const TERMINATED: &str = "Conflict: terminated by other getUpdates request; make \
                                         sure that only one bot instance is running";
    pub(crate) const HTTPS_REQUIRED: &str =
        "Bad Request: bad webhook: HTTPS url must be provided for webhook";
}

/// The methods the fake implements, canonically spelled.
const METHODS: &[&str] = &[
    "getMe",
    "getUpdates",
    "sendMessage",
    "editMessageText",
    "editMessageReplyMarkup",
    "answerCallbackQuery",
    "setWebhook",
    "deleteWebhook",
    "getWebhookInfo",
];

/// The longest message text, in UTF-16 code units.
pub(crate) const MAX_TEXT_UTF16: usize = 4096;
/// The longest `callback_data`, in bytes.
pub(crate) const MAX_CALLBACK_DATA_BYTES: usize = 64;
/// The colour Telegram gives a topic created without one.
const TOPIC_ICON_COLOR: i64 = 7_322_096;
/// First update id handed out.
const FIRST_UPDATE_ID: i64 = 100_000_001;

/// `method` spelled canonically: Telegram matches method names
/// case-insensitively (teloxide sends `SendMessage`).
pub(crate) fn canonical_method(method: &str) -> String {
    if let Some(known) = METHODS
        .iter()
        .find(|known| known.eq_ignore_ascii_case(method))
    {
        return (*known).to_owned();
    }
    let mut chars = method.chars();
    match chars.next() {
        Some(first) => first.to_lowercase().chain(chars).collect(),
        None => String::new(),
    }
}

/// A response: HTTP status and JSON body.
#[derive(Debug, Clone)]
pub(crate) struct Reply {
    pub(crate) status: u16,
    pub(crate) body: Value,
}

impl Reply {
    pub(crate) fn ok(result: Value) -> Reply {
        Reply {
            status: 200,
            body: json!({ "ok": true, "result": result }),
        }
    }

    fn ok_described(result: Value, description: &str) -> Reply {
        Reply {
            status: 200,
            body: json!({ "ok": true, "result": result, "description": description }),
        }
    }

    pub(crate) fn error(code: u16, description: &str) -> Reply {
        Reply {
            status: code,
            body: json!({ "ok": false, "error_code": code, "description": description }),
        }
    }

    pub(crate) fn retry_after(secs: u64) -> Reply {
        Reply {
            status: 429,
            body: json!({
                "ok": false,
                "error_code": 429,
                "description": format!("Too Many Requests: retry after {secs}"),
                "parameters": { "retry_after": secs },
            }),
        }
    }
}

fn bad_request(description: &str) -> Reply {
    Reply::error(400, description)
}

/// Unix time now.
pub(crate) fn unix_now() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|elapsed| i64::try_from(elapsed.as_secs()).unwrap_or(i64::MAX))
        .unwrap_or(0)
}

/// Length as Telegram counts it: UTF-16 code units.
pub(crate) fn utf16_len(text: &str) -> usize {
    text.encode_utf16().count()
}

#[derive(Debug)]
struct ChatEntry {
    chat: Chat,
    status: ChatStatus,
    next_message_id: i32,
    messages: BTreeMap<i32, StoredMessage>,
}

impl ChatEntry {
    fn new(chat: Chat) -> Self {
        ChatEntry {
            chat,
            status: ChatStatus::Reachable,
            next_message_id: 1,
            messages: BTreeMap::new(),
        }
    }

    fn allocate_id(&mut self) -> i32 {
        let id = self.next_message_id;
        self.next_message_id += 1;
        id
    }
}

#[derive(Debug)]
struct PendingUpdate {
    id: i64,
    body: Value,
}

#[derive(Debug)]
struct IssuedCallback {
    answer: Option<CallbackAnswer>,
}

/// Everything the fake knows: chats and their messages, the update queue,
/// issued callback queries, the webhook, the call log. Tests read it in
/// [`FakeTelegram::wait_for`](super::FakeTelegram::wait_for) closures and
/// through [`FakeTelegram::inspect`](super::FakeTelegram::inspect).
#[derive(Debug)]
pub struct State {
    token: String,
    bot: User,
    chats: HashMap<i64, ChatEntry>,
    calls: Vec<Call>,
    updates: VecDeque<PendingUpdate>,
    next_update_id: i64,
    callbacks: HashMap<String, IssuedCallback>,
    next_callback: u64,
    webhook: Option<WebhookConfig>,
    deliveries: Vec<WebhookDelivery>,
    last_webhook_error: Option<(i64, String)>,
    limits: RateLimits,
    limiter: Limiter,
    rate_limited: usize,
    sent: Vec<(i64, i32)>,
    /// BotFather's privacy mode (`can_read_all_group_messages` is its
    /// opposite).
    pub(crate) privacy_mode: bool,
    pub(crate) poll_generation: u64,
    pub(crate) active_polls: usize,
    pub(crate) closed: bool,
}

/// Read access for tests.
impl State {
    /// Every request answered so far, in order.
    pub fn calls(&self) -> &[Call] {
        &self.calls
    }

    /// The calls to `method` (any case, e.g. `"sendMessage"`).
    pub fn calls_to(&self, method: &str) -> Vec<&Call> {
        self.calls
            .iter()
            .filter(|call| call.method.eq_ignore_ascii_case(method))
            .collect()
    }

    /// One stored message.
    pub fn message(&self, chat_id: i64, message_id: i32) -> Option<&StoredMessage> {
        self.chats.get(&chat_id)?.messages.get(&message_id)
    }

    /// The messages of a chat, bot's and users', by id.
    pub fn messages_in(&self, chat_id: i64) -> Vec<&StoredMessage> {
        self.chats
            .get(&chat_id)
            .map(|entry| entry.messages.values().collect())
            .unwrap_or_default()
    }

    /// The messages the bot sent (successful `sendMessage`s), in sending
    /// order, as they are now (edits applied).
    pub fn sent_messages(&self) -> Vec<&StoredMessage> {
        self.sent
            .iter()
            .filter_map(|(chat_id, message_id)| self.message(*chat_id, *message_id))
            .collect()
    }

    /// How many messages the bot sent successfully.
    pub fn sent_count(&self) -> usize {
        self.sent.len()
    }

    /// A message as the Bot API would render it now (the official Message
    /// object, with `reply_to_message` one level deep).
    pub fn message_json(&self, chat_id: i64, message_id: i32) -> Option<Value> {
        self.render(chat_id, message_id, false)
    }

    /// A chat the fake knows (registered, written in, or sent to).
    pub fn chat(&self, chat_id: i64) -> Option<&Chat> {
        self.chats.get(&chat_id).map(|entry| &entry.chat)
    }

    /// The updates not yet confirmed (by a later `getUpdates` offset) or
    /// delivered (2xx from the webhook), oldest first.
    pub fn pending_updates(&self) -> Vec<&Value> {
        self.updates.iter().map(|update| &update.body).collect()
    }

    /// How the bot answered callback query `id`; `None` if not (yet).
    pub fn callback_answer(&self, id: &str) -> Option<&CallbackAnswer> {
        self.callbacks.get(id)?.answer.as_ref()
    }

    /// How many `429 Too Many Requests` the fake returned.
    pub fn rate_limited_count(&self) -> usize {
        self.rate_limited
    }

    /// The webhook, if one is set.
    pub fn webhook(&self) -> Option<&WebhookConfig> {
        self.webhook.as_ref()
    }

    /// Every attempt to POST an update to a webhook, in order.
    pub fn webhook_deliveries(&self) -> &[WebhookDelivery] {
        &self.deliveries
    }

    /// How many `getUpdates` calls are waiting (long polling) right now.
    pub fn active_long_polls(&self) -> usize {
        self.active_polls
    }

    /// The bot's own user.
    pub fn bot_user(&self) -> &User {
        &self.bot
    }

    /// The rate limits in force.
    pub fn rate_limits(&self) -> RateLimits {
        self.limits
    }
}

impl State {
    pub(crate) fn new(token: String, bot: User, limits: RateLimits) -> State {
        State {
            token,
            bot,
            chats: HashMap::new(),
            calls: Vec::new(),
            updates: VecDeque::new(),
            next_update_id: FIRST_UPDATE_ID,
            callbacks: HashMap::new(),
            next_callback: 0,
            webhook: None,
            deliveries: Vec::new(),
            last_webhook_error: None,
            limits,
            limiter: Limiter::default(),
            rate_limited: 0,
            sent: Vec::new(),
            privacy_mode: true,
            poll_generation: 0,
            active_polls: 0,
            closed: false,
        }
    }

    pub(crate) fn token(&self) -> &str {
        &self.token
    }

    pub(crate) fn set_rate_limits(&mut self, limits: RateLimits) {
        self.limits = limits;
    }

    pub(crate) fn record_call(&mut self, method: String, params: Value, reply: &Reply) {
        if reply.status == 429 {
            self.rate_limited += 1;
        }
        self.calls.push(Call {
            method,
            params,
            status: reply.status,
            response: reply.body.clone(),
        });
    }

    /// Registers `chat` (or updates its details, keeping its messages).
    pub(crate) fn upsert_chat(&mut self, chat: &Chat) {
        self.chats
            .entry(chat.id)
            .and_modify(|entry| entry.chat = chat.clone())
            .or_insert_with(|| ChatEntry::new(chat.clone()));
    }

    pub(crate) fn set_chat_status(&mut self, chat_id: i64, status: ChatStatus) {
        self.entry(chat_id).status = status;
    }

    fn entry(&mut self, chat_id: i64) -> &mut ChatEntry {
        self.chats
            .entry(chat_id)
            .or_insert_with(|| ChatEntry::new(Chat::implied(chat_id)))
    }

    /// Runs a method other than `getUpdates` (see `begin_poll`/`poll`).
    pub(crate) fn dispatch(&mut self, method: &str, params: &Value, now: Instant) -> Reply {
        match method {
            "getMe" => Reply::ok(self.me_json()),
            "sendMessage" => self.send_message(params, now),
            "editMessageText" => self.edit_message_text(params),
            "editMessageReplyMarkup" => self.edit_message_reply_markup(params),
            "answerCallbackQuery" => self.answer_callback_query(params),
            "setWebhook" => self.set_webhook(params),
            "deleteWebhook" => self.delete_webhook(params),
            "getWebhookInfo" => Reply::ok(self.webhook_info()),
            _ => Reply::error(404, desc::NOT_FOUND),
        }
    }

    fn me_json(&self) -> Value {
        let mut me = self.bot.to_json();
        if let Value::Object(object) = &mut me {
            object.insert("can_join_groups".into(), json!(true));
            object.insert(
                "can_read_all_group_messages".into(),
                json!(!self.privacy_mode),
            );
            object.insert("supports_inline_queries".into(), json!(false));
            object.insert("can_connect_to_business".into(), json!(false));
            object.insert("has_main_web_app".into(), json!(false));
        }
        me
    }

    /// The chat a `chat_id` parameter names.
    fn resolve_chat(&self, params: &Value) -> Result<i64, Reply> {
        match params.get("chat_id") {
            None | Some(Value::Null) => Err(bad_request(desc::CHAT_ID_EMPTY)),
            Some(Value::String(name)) if name.trim().starts_with('@') => {
                let name = name.trim().trim_start_matches('@');
                self.chats
                    .values()
                    .find(|entry| {
                        entry
                            .chat
                            .username
                            .as_deref()
                            .is_some_and(|username| username.eq_ignore_ascii_case(name))
                    })
                    .map(|entry| entry.chat.id)
                    .ok_or_else(|| bad_request(desc::CHAT_NOT_FOUND))
            }
            Some(Value::String(text)) if text.trim().is_empty() => {
                Err(bad_request(desc::CHAT_ID_EMPTY))
            }
            Some(_) => match params::int(params, "chat_id") {
                Some(0) | None => Err(bad_request(desc::CHAT_NOT_FOUND)),
                Some(id) => Ok(id),
            },
        }
    }

    fn check_reachable(&self, chat_id: i64) -> Result<(), Reply> {
        match self.chats.get(&chat_id).map(|entry| entry.status) {
            Some(ChatStatus::Blocked) => Err(Reply::error(403, desc::BLOCKED)),
            Some(ChatStatus::Unknown) => Err(bad_request(desc::CHAT_NOT_FOUND)),
            _ => Ok(()),
        }
    }

    fn send_message(&mut self, params: &Value, now: Instant) -> Reply {
        self.try_send_message(params, now)
            .unwrap_or_else(|reply| reply)
    }

    fn try_send_message(&mut self, params: &Value, now: Instant) -> Result<Reply, Reply> {
        let chat_id = self.resolve_chat(params)?;
        self.check_reachable(chat_id)?;
        let text = checked_text(params::string(params, "text"), desc::TOO_LONG)?;
        let markup = params::object(params, "reply_markup");
        if let Some(markup) = &markup {
            validate_markup(markup)?;
        }

        let (reply_id, allow_without_reply) = match params::object(params, "reply_parameters") {
            Some(reply) => (
                params::int(&reply, "message_id"),
                params::boolean(&reply, "allow_sending_without_reply").unwrap_or(false),
            ),
            None => (
                params::int(params, "reply_to_message_id"),
                params::boolean(params, "allow_sending_without_reply").unwrap_or(false),
            ),
        };
        let thread_param = params::int(params, "message_thread_id").map(clamp_i32);

        let entry = self.entry(chat_id);
        let reply_to = match reply_id.map(clamp_i32) {
            Some(id) if entry.messages.contains_key(&id) => Some(id),
            Some(_) if !allow_without_reply => return Err(bad_request(desc::REPLY_NOT_FOUND)),
            _ => None,
        };
        let is_forum = entry.chat.is_forum;
        let thread_id = thread_param.or_else(|| {
            reply_to
                .filter(|_| is_forum)
                .and_then(|id| entry.messages.get(&id))
                .and_then(|message| message.thread_id)
        });
        if let Some(thread) = thread_id {
            let root = entry.messages.get(&thread);
            let exists = if is_forum {
                root.is_some_and(|root| root.forum_topic_created.is_some())
            } else {
                root.is_some()
            };
            if !exists {
                return Err(bad_request(desc::THREAD_NOT_FOUND));
            }
        }

        let limits = self.limits;
        if let Err(secs) = self.limiter.check(&limits, chat_id, now) {
            return Err(Reply::retry_after(secs));
        }
        self.limiter.record(&limits, chat_id, now);

        let bot = self.bot.clone();
        let entry = self.entry(chat_id);
        let message_id = entry.allocate_id();
        let is_topic_message = is_forum && thread_id.is_some();
        entry.messages.insert(
            message_id,
            StoredMessage {
                chat_id,
                message_id,
                thread_id,
                is_topic_message,
                from: bot,
                from_bot: true,
                date: unix_now(),
                text,
                reply_markup: markup,
                reply_to_message_id: reply_to.or(thread_id.filter(|_| is_topic_message)),
                edited: false,
                edit_date: None,
                edit_count: 0,
                forum_topic_created: None,
            },
        );
        self.sent.push((chat_id, message_id));
        Ok(Reply::ok(
            self.render(chat_id, message_id, false)
                .unwrap_or(Value::Null),
        ))
    }

    /// The bot's message an edit targets.
    fn edit_target(&self, params: &Value) -> Result<(i64, i32), Reply> {
        if params.get("inline_message_id").is_some() {
            return Err(bad_request(desc::MESSAGE_ID_INVALID));
        }
        let chat_id = self.resolve_chat(params)?;
        let message_id = params::int(params, "message_id")
            .map(clamp_i32)
            .ok_or_else(|| bad_request(desc::NO_MESSAGE_ID))?;
        self.check_reachable(chat_id)?;
        let message = self
            .message(chat_id, message_id)
            .ok_or_else(|| bad_request(desc::EDIT_NOT_FOUND))?;
        if !message.from_bot || message.forum_topic_created.is_some() {
            return Err(bad_request(desc::CANT_EDIT));
        }
        Ok((chat_id, message_id))
    }

    fn edit_message_text(&mut self, params: &Value) -> Reply {
        self.try_edit(params, true).unwrap_or_else(|reply| reply)
    }

    fn edit_message_reply_markup(&mut self, params: &Value) -> Reply {
        self.try_edit(params, false).unwrap_or_else(|reply| reply)
    }

    fn try_edit(&mut self, params: &Value, with_text: bool) -> Result<Reply, Reply> {
        let (chat_id, message_id) = self.edit_target(params)?;
        let text = if with_text {
            Some(checked_text(
                params::string(params, "text"),
                desc::EDIT_TOO_LONG,
            )?)
        } else {
            None
        };
        let markup = params::object(params, "reply_markup");
        if let Some(markup) = &markup {
            validate_markup(markup)?;
        }
        self.apply_edit(chat_id, message_id, text, markup)
    }

    /// An edit: a missing `reply_markup` removes the inline keyboard, as on
    /// Telegram; changing nothing is an error.
    fn apply_edit(
        &mut self,
        chat_id: i64,
        message_id: i32,
        text: Option<String>,
        markup: Option<Value>,
    ) -> Result<Reply, Reply> {
        let Some(message) = self
            .chats
            .get_mut(&chat_id)
            .and_then(|entry| entry.messages.get_mut(&message_id))
        else {
            return Err(bad_request(desc::EDIT_NOT_FOUND));
        };
        let new_inline = inline_keyboard(markup.as_ref());
        let old_inline = inline_keyboard(message.reply_markup.as_ref());
        let same_text = text.as_ref().is_none_or(|text| *text == message.text);
        if same_text && new_inline == old_inline {
            return Err(bad_request(desc::NOT_MODIFIED));
        }
        if let Some(text) = text {
            message.text = text;
        }
        if markup.is_some() || old_inline.is_some() {
            message.reply_markup = markup;
        }
        message.edited = true;
        message.edit_date = Some(unix_now());
        message.edit_count += 1;
        Ok(Reply::ok(
            self.render(chat_id, message_id, false)
                .unwrap_or(Value::Null),
        ))
    }

    fn answer_callback_query(&mut self, params: &Value) -> Reply {
        let id = params::string(params, "callback_query_id").unwrap_or_default();
        match self.callbacks.get_mut(&id) {
            Some(issued) if issued.answer.is_none() => {
                issued.answer = Some(CallbackAnswer {
                    text: params::string(params, "text"),
                    show_alert: params::boolean(params, "show_alert").unwrap_or(false),
                    url: params::string(params, "url"),
                    cache_time: params::int(params, "cache_time"),
                });
                Reply::ok(json!(true))
            }
            _ => bad_request(desc::QUERY_INVALID),
        }
    }

    fn set_webhook(&mut self, params: &Value) -> Reply {
        let url = params::string(params, "url").unwrap_or_default();
        if url.trim().is_empty() {
            return self.delete_webhook(params);
        }
        let lower = url.to_ascii_lowercase();
        if !(lower.starts_with("https://") || lower.starts_with("http://")) {
            return bad_request(desc::HTTPS_REQUIRED);
        }
        if params::boolean(params, "drop_pending_updates").unwrap_or(false) {
            self.updates.clear();
        }
        let config = WebhookConfig {
            url,
            secret_token: params::string(params, "secret_token").filter(|token| !token.is_empty()),
            max_connections: params::int(params, "max_connections")
                .and_then(|n| u32::try_from(n).ok())
                .unwrap_or(40),
        };
        let description = if self.webhook.as_ref() == Some(&config) {
            "Webhook is already set"
        } else {
            "Webhook was set"
        };
        self.webhook = Some(config);
        self.last_webhook_error = None;
        Reply::ok_described(json!(true), description)
    }

    fn delete_webhook(&mut self, params: &Value) -> Reply {
        if params::boolean(params, "drop_pending_updates").unwrap_or(false) {
            self.updates.clear();
        }
        let description = match self.webhook.take() {
            Some(_) => "Webhook was deleted",
            None => "Webhook is already deleted",
        };
        self.last_webhook_error = None;
        Reply::ok_described(json!(true), description)
    }

    fn webhook_info(&self) -> Value {
        let mut info = Map::new();
        let url = self
            .webhook
            .as_ref()
            .map(|w| w.url.clone())
            .unwrap_or_default();
        info.insert("url".into(), json!(url));
        info.insert("has_custom_certificate".into(), json!(false));
        info.insert("pending_update_count".into(), json!(self.updates.len()));
        if let Some(webhook) = &self.webhook {
            info.insert("ip_address".into(), json!("127.0.0.1"));
            info.insert("max_connections".into(), json!(webhook.max_connections));
            if let Some((date, message)) = &self.last_webhook_error {
                info.insert("last_error_date".into(), json!(date));
                info.insert("last_error_message".into(), json!(message));
            }
        }
        Value::Object(info)
    }

    /// Starts a `getUpdates`: confirms updates below `offset` and takes the
    /// polling turn (an older poll still waiting is then ended with 409).
    /// Returns the poll's generation and limit.
    pub(crate) fn begin_poll(&mut self, params: &Value) -> Result<(u64, usize), Reply> {
        if self.webhook.is_some() {
            return Err(Reply::error(409, desc::WEBHOOK_ACTIVE));
        }
        match params::int(params, "offset") {
            Some(offset) if offset > 0 => {
                self.updates.retain(|update| update.id >= offset);
            }
            Some(offset) if offset < 0 => {
                let keep = usize::try_from(offset.unsigned_abs()).unwrap_or(usize::MAX);
                while self.updates.len() > keep {
                    self.updates.pop_front();
                }
            }
            _ => {}
        }
        let limit = params::int(params, "limit")
            .filter(|limit| *limit > 0)
            .map_or(100, |limit| limit.min(100));
        self.poll_generation += 1;
        Ok((self.poll_generation, usize::try_from(limit).unwrap_or(100)))
    }

    /// The answer to a waiting `getUpdates`, if it should return now.
    pub(crate) fn poll(&self, generation: u64, limit: usize) -> Option<Reply> {
        if self.closed {
            return Some(Reply::ok(json!([])));
        }
        if self.poll_generation != generation {
            return Some(Reply::error(409, desc::TERMINATED));
        }
        if self.webhook.is_some() {
            return Some(Reply::error(409, desc::WEBHOOK_ACTIVE));
        }
        if self.updates.is_empty() {
            return None;
        }
        let batch: Vec<Value> = self
            .updates
            .iter()
            .take(limit)
            .map(|update| update.body.clone())
            .collect();
        Some(Reply::ok(Value::Array(batch)))
    }

    /// The next update to POST to the webhook: (url, secret, update id, body).
    pub(crate) fn next_delivery(&self) -> Option<(String, Option<String>, i64, Value)> {
        let webhook = self.webhook.as_ref()?;
        let update = self.updates.front()?;
        Some((
            webhook.url.clone(),
            webhook.secret_token.clone(),
            update.id,
            update.body.clone(),
        ))
    }

    pub(crate) fn record_delivery(&mut self, delivery: WebhookDelivery) {
        if delivery.delivered() {
            self.updates
                .retain(|update| update.id != delivery.update_id);
        } else {
            let message = match (delivery.status, &delivery.error) {
                (Some(status), _) => {
                    let reason = axum::http::StatusCode::from_u16(status)
                        .ok()
                        .and_then(|code| code.canonical_reason())
                        .unwrap_or("");
                    format!("Wrong response from the webhook: {status} {reason}")
                        .trim_end()
                        .to_owned()
                }
                (None, Some(error)) => error.clone(),
                (None, None) => "Connection failed".to_owned(),
            };
            self.last_webhook_error = Some((unix_now(), message));
        }
        self.deliveries.push(delivery);
    }

    fn push_update(&mut self, field: &str, payload: Value) -> i64 {
        let id = self.next_update_id;
        self.next_update_id += 1;
        let mut body = Map::new();
        body.insert("update_id".into(), json!(id));
        body.insert(field.into(), payload);
        self.updates.push_back(PendingUpdate {
            id,
            body: Value::Object(body),
        });
        id
    }

    /// Queues a raw update: `body` gets a fresh `update_id`.
    pub(crate) fn inject_raw(&mut self, body: Value) -> i64 {
        let id = self.next_update_id;
        self.next_update_id += 1;
        let mut body = match body {
            Value::Object(object) => object,
            other => panic!("an update is a JSON object, got {other}"),
        };
        body.insert("update_id".into(), json!(id));
        self.updates.push_back(PendingUpdate {
            id,
            body: Value::Object(body),
        });
        id
    }

    pub(crate) fn create_forum_topic(&mut self, chat: &Chat, name: &str) -> i32 {
        assert!(
            chat.is_forum,
            "chat {} is not a forum: use Chat::supergroup(..).forum()",
            chat.id
        );
        self.upsert_chat(chat);
        let bot = self.bot.clone();
        let entry = self.entry(chat.id);
        let message_id = entry.allocate_id();
        entry.messages.insert(
            message_id,
            StoredMessage {
                chat_id: chat.id,
                message_id,
                thread_id: Some(message_id),
                is_topic_message: true,
                from: bot,
                from_bot: true,
                date: unix_now(),
                text: String::new(),
                reply_markup: None,
                reply_to_message_id: None,
                edited: false,
                edit_date: None,
                edit_count: 0,
                forum_topic_created: Some(name.to_owned()),
            },
        );
        message_id
    }

    pub(crate) fn inject_message(&mut self, incoming: IncomingMessage) -> (i32, i64) {
        let IncomingMessage {
            chat,
            from,
            text,
            reply_to,
            thread_id,
        } = incoming;
        self.upsert_chat(&chat);
        let entry = self.entry(chat.id);
        let replied = reply_to.map(|id| {
            entry.messages.get(&id).unwrap_or_else(|| {
                panic!(
                    "inject_message: message {id} does not exist in chat {}; it has {:?}",
                    chat.id,
                    entry.messages.keys().collect::<Vec<_>>()
                )
            })
        });
        let thread_id =
            thread_id.or_else(|| replied.filter(|_| chat.is_forum).and_then(|m| m.thread_id));
        if let Some(thread) = thread_id
            && chat.is_forum
        {
            assert!(
                entry
                    .messages
                    .get(&thread)
                    .is_some_and(|root| root.forum_topic_created.is_some()),
                "inject_message: chat {} has no forum topic {thread}; make one with \
                 FakeTelegram::create_forum_topic",
                chat.id
            );
        }
        let is_topic_message = chat.is_forum && thread_id.is_some();
        let message_id = entry.allocate_id();
        entry.messages.insert(
            message_id,
            StoredMessage {
                chat_id: chat.id,
                message_id,
                thread_id,
                is_topic_message,
                from,
                from_bot: false,
                date: unix_now(),
                text,
                reply_markup: None,
                reply_to_message_id: reply_to.or(thread_id.filter(|_| is_topic_message)),
                edited: false,
                edit_date: None,
                edit_count: 0,
                forum_topic_created: None,
            },
        );
        let body = self
            .render(chat.id, message_id, false)
            .unwrap_or(Value::Null);
        let update_id = self.push_update("message", body);
        (message_id, update_id)
    }

    pub(crate) fn inject_callback(
        &mut self,
        from: &User,
        chat_id: i64,
        message_id: i32,
        data: &str,
    ) -> (String, i64) {
        let message = self.render(chat_id, message_id, false).unwrap_or_else(|| {
            panic!("inject_callback: no message {message_id} in chat {chat_id}")
        });
        self.next_callback += 1;
        let id = (4_300_000_000_000_000_000_u64 + self.next_callback * 7_919).to_string();
        let chat_instance = chat_id
            .wrapping_mul(0x2545_F491_4F6C_DD1D)
            .wrapping_abs()
            .to_string();
        let payload = json!({
            "id": id,
            "from": from.to_json(),
            "message": message,
            "chat_instance": chat_instance,
            "data": data,
        });
        self.callbacks
            .insert(id.clone(), IssuedCallback { answer: None });
        let update_id = self.push_update("callback_query", payload);
        (id, update_id)
    }

    /// The Message object; `nested` leaves out `reply_to_message` (the Bot
    /// API nests replies one level only).
    fn render(&self, chat_id: i64, message_id: i32, nested: bool) -> Option<Value> {
        let entry = self.chats.get(&chat_id)?;
        let message = entry.messages.get(&message_id)?;
        let mut object = Map::new();
        object.insert("message_id".into(), json!(message.message_id));
        if let Some(thread) = message.thread_id {
            object.insert("message_thread_id".into(), json!(thread));
        }
        object.insert("from".into(), message.from.to_json());
        object.insert("chat".into(), entry.chat.to_json());
        object.insert("date".into(), json!(message.date));
        if message.is_topic_message {
            object.insert("is_topic_message".into(), json!(true));
        }
        if !nested
            && let Some(reply) = message
                .reply_to_message_id
                .and_then(|id| self.render(chat_id, id, true))
        {
            object.insert("reply_to_message".into(), reply);
        }
        if let Some(name) = &message.forum_topic_created {
            object.insert(
                "forum_topic_created".into(),
                json!({ "name": name, "icon_color": TOPIC_ICON_COLOR }),
            );
            return Some(Value::Object(object));
        }
        if let Some(date) = message.edit_date {
            object.insert("edit_date".into(), json!(date));
        }
        object.insert("text".into(), json!(message.text));
        let entities = command_entities(&message.text);
        if !entities.is_empty() {
            object.insert("entities".into(), Value::Array(entities));
        }
        if let Some(markup) = inline_keyboard(message.reply_markup.as_ref()) {
            object.insert("reply_markup".into(), markup);
        }
        Some(Value::Object(object))
    }

    /// The call log, one line a call, for failure messages.
    pub(crate) fn describe_calls(&self) -> String {
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
                let outcome = match call.description() {
                    Some(description) => format!("{} {description}", call.status),
                    None => call.status.to_string(),
                };
                format!("  #{index} {} -> {outcome} {params}", call.method)
            })
            .collect::<Vec<_>>()
            .join("\n")
    }
}

fn clamp_i32(value: i64) -> i32 {
    i32::try_from(value).unwrap_or(if value < 0 { i32::MIN } else { i32::MAX })
}

/// A message text: present, not blank, at most 4096 UTF-16 code units.
fn checked_text(text: Option<String>, too_long: &str) -> Result<String, Reply> {
    let text = text.unwrap_or_default();
    if text.trim().is_empty() {
        return Err(bad_request(desc::TEXT_EMPTY));
    }
    if utf16_len(&text) > MAX_TEXT_UTF16 {
        return Err(bad_request(too_long));
    }
    Ok(text)
}

/// Checks an inline keyboard's buttons as Telegram does; other markups
/// (`force_reply`, reply keyboards) pass.
fn validate_markup(markup: &Value) -> Result<(), Reply> {
    let Some(object) = markup.as_object() else {
        return Err(bad_request(desc::BAD_MARKUP));
    };
    let Some(keyboard) = object.get("inline_keyboard") else {
        return Ok(());
    };
    let Some(rows) = keyboard.as_array() else {
        return Err(bad_request(desc::BAD_MARKUP));
    };
    const ACTIONS: &[&str] = &[
        "url",
        "login_url",
        "callback_data",
        "web_app",
        "switch_inline_query",
        "switch_inline_query_current_chat",
        "switch_inline_query_chosen_chat",
        "copy_text",
        "callback_game",
        "pay",
    ];
    for row in rows {
        let Some(buttons) = row.as_array() else {
            return Err(bad_request(desc::BAD_MARKUP));
        };
        for button in buttons {
            let Some(button) = button.as_object() else {
                return Err(bad_request(desc::BAD_MARKUP));
            };
            if !ACTIONS.iter().any(|action| button.contains_key(*action)) {
                return Err(bad_request(desc::TEXT_BUTTONS));
            }
            if let Some(data) = button.get("callback_data") {
                let valid = data
                    .as_str()
                    .is_some_and(|data| (1..=MAX_CALLBACK_DATA_BYTES).contains(&data.len()));
                if !valid {
                    return Err(bad_request(desc::BUTTON_DATA_INVALID));
                }
            }
            if let Some(url) = button.get("url") {
                let valid = url.as_str().is_some_and(|url| {
                    let url = url.to_ascii_lowercase();
                    ["http://", "https://", "tg://"]
                        .iter()
                        .any(|scheme| url.starts_with(scheme) && url.len() > scheme.len())
                });
                if !valid {
                    return Err(bad_request(desc::BUTTON_URL_INVALID));
                }
            }
        }
    }
    Ok(())
}

/// The markup as it appears in a Message: inline keyboards with at least one
/// button only.
fn inline_keyboard(markup: Option<&Value>) -> Option<Value> {
    let rows = markup?.get("inline_keyboard")?.as_array()?;
    if rows
        .iter()
        .all(|row| row.as_array().is_none_or(Vec::is_empty))
    {
        return None;
    }
    Some(json!({ "inline_keyboard": rows }))
}

/// `bot_command` entities, as Telegram adds them to texts with commands
/// (`/start`, `/help@some_bot`), at the start or after whitespace.
/// Offsets and lengths are in UTF-16 code units.
fn command_entities(text: &str) -> Vec<Value> {
    let is_word = |c: char| c.is_ascii_alphanumeric() || c == '_';
    let chars: Vec<char> = text.chars().collect();
    let mut entities = Vec::new();
    let mut offset = 0usize;
    let mut i = 0usize;
    while i < chars.len() {
        let starts = chars[i] == '/'
            && (i == 0 || chars[i - 1].is_whitespace())
            && chars.get(i + 1).is_some_and(|c| is_word(*c));
        if !starts {
            offset += chars[i].len_utf16();
            i += 1;
            continue;
        }
        let mut end = i + 1;
        while end < chars.len() && is_word(chars[end]) {
            end += 1;
        }
        if end + 1 < chars.len() && chars[end] == '@' && is_word(chars[end + 1]) {
            end += 1;
            while end < chars.len() && is_word(chars[end]) {
                end += 1;
            }
        }
        let length = end - i;
        entities.push(json!({ "offset": offset, "length": length, "type": "bot_command" }));
        offset += length;
        i = end;
    }
    entities
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn method_names_are_canonical() {
        assert_eq!(canonical_method("SendMessage"), "sendMessage");
        assert_eq!(canonical_method("GETUPDATES"), "getUpdates");
        assert_eq!(canonical_method("DeleteMessage"), "deleteMessage");
    }

    #[test]
    fn commands_become_entities() {
        assert_eq!(
            command_entities("/start now"),
            vec![json!({"offset": 0, "length": 6, "type": "bot_command"})]
        );
        assert_eq!(
            command_entities("👋 /help@ask_bot x/no"),
            vec![json!({"offset": 3, "length": 13, "type": "bot_command"})]
        );
        assert!(command_entities("a/b and / alone").is_empty());
    }

    #[test]
    fn text_limits_count_utf16() {
        assert!(checked_text(Some("x".repeat(4096)), desc::TOO_LONG).is_ok());
        assert!(checked_text(Some("x".repeat(4097)), desc::TOO_LONG).is_err());
        assert!(checked_text(Some("😀".repeat(2048)), desc::TOO_LONG).is_ok());
        assert!(checked_text(Some("😀".repeat(2049)), desc::TOO_LONG).is_err());
        assert!(checked_text(Some(" \n".into()), desc::TOO_LONG).is_err());
    }
}

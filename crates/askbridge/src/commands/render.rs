//! `askbridge render`: what a channel would be sent for an ask.

use askbridge_core::model::{Ask, Place, Timestamp};
use askbridge_core::normalize;
use askbridge_core::render::{self, Capabilities, Locale, Mode};
use askbridge_telegram::ChatRef;
use serenity::model::id::ChannelId;
use slack_morphism::prelude::SlackChannelId;

/// The ask id shown in rendered button payloads: as long as a real one, so
/// the payload sizes are the real sizes.
const SAMPLE_ASK_ID: &str = "ask_0190c3a0e0007a5b8c9d0e1f2a3b4c5d";
/// The chat used when the ask names no Telegram chat.
const SAMPLE_CHAT: ChatRef = ChatRef {
    chat_id: 123_456_789,
    thread_id: None,
};

/// The channel used when the ask names no Discord channel.
const SAMPLE_DISCORD_CHANNEL: ChannelId = ChannelId::new(1_100_000_000_000_000_001);

/// The channel used when the ask names no Slack channel.
const SAMPLE_SLACK_CHANNEL: &str = "C0123456789";

/// The question's message a reminder replies to, in every platform's
/// notation.
const SAMPLE_MESSAGE_ID: u64 = 1_100_000_000_000_000_002;
const SAMPLE_TELEGRAM_MESSAGE: i32 = 42;
const SAMPLE_SLACK_TS: &str = "1700000000.000100";
const SAMPLE_FEISHU_MESSAGE: &str = "om_0123456789abcdef";
const SAMPLE_MATRIX_EVENT: &str = "$question:example.org";
/// The bot's address in sample mails.
const SAMPLE_EMAIL_FROM: &str = "askbridge <bot@example.com>";
/// The ask's own address in sample mails.
const SAMPLE_EMAIL_REPLY_TO: &str = "bot+5f3c2a9e@example.com";
/// Whom a sample mail goes to when the ask names nobody.
const SAMPLE_EMAIL_TO: &str = "alice@example.com";
/// A sample mail's date: 2026-12-07 09:00 UTC.
const SAMPLE_EMAIL_DATE: u64 = 1_796_634_000;

/// Channels `render` can draw.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum RenderChannel {
    /// The numbered plain-text prompt, as a channel without buttons sends it.
    Text,
    /// The Bot API `sendMessage` payloads, as a JSON array (one per
    /// message; the last carries the keyboard).
    Telegram,
    /// Discord's create-message payloads, as a JSON array (one per
    /// message; the last carries the components).
    Discord,
    /// Slack's `chat.postMessage` payloads, as a JSON array (one per
    /// message; the last carries the buttons).
    Slack,
    /// Feishu / Lark interactive cards (JSON 2.0, each message's
    /// `content`), as a JSON array; the last carries the buttons.
    Feishu,
    /// Matrix room events (`{"type", "content"}`), as a JSON array; the
    /// last is the poll (in rich mode, the first question's).
    Matrix,
    /// Microsoft Teams activities (each an Adaptive Card), as a JSON
    /// array; the last carries the actions.
    Teams,
    /// The mail as sent (headers, a text and an HTML part); always the
    /// numbered prompt, with the context in the same mail.
    Email,
}

/// The ask in `input` (any dialect), or the normaliser's errors as JSON.
fn read(input: &str) -> Result<Ask, serde_json::Value> {
    normalize::normalize_input(input)
        .map(|normalized| normalized.ask)
        .map_err(|errors| {
            let (json, _) = super::normalize::run(input);
            debug_assert!(!errors.is_empty());
            json
        })
}

/// Renders the reminders of the ask in `input` for `channel`: what each
/// place is sent while nobody answers, in order — a reply to the question
/// (sample ids stand in for its message), mentioning the target's user,
/// saying how long is left at that time. Returns the text to print (the
/// texts a line each, or a JSON array of payloads), or the errors as JSON:
/// the normaliser's, or `remindAfterSeconds` when the ask sets none.
pub fn run_reminders(
    input: &str,
    channel: RenderChannel,
    locale: Locale,
) -> Result<String, serde_json::Value> {
    let ask = read(input)?;
    let Some(remind) = ask.remind else {
        return Err(serde_json::json!({"ok": false, "errors": [{
            "path": "remindAfterSeconds",
            "message": "the ask sets no reminder; add \"remindAfterSeconds\": 300"
        }]}));
    };
    let created = Timestamp::from_secs(0);
    let deadline = created.saturating_add_secs(u64::from(ask.timeout_seconds));
    let texts: Vec<String> = remind
        .times(created, deadline)
        .map(|at| render::reminder_text(deadline, at, locale))
        .collect();
    let target = ask.target.as_ref();
    let user = target.and_then(|target| target.user.as_deref());
    let json = |payloads: Vec<serde_json::Value>| {
        serde_json::to_string_pretty(&payloads).unwrap_or_default()
    };
    Ok(match channel {
        RenderChannel::Text => texts.join("\n"),
        RenderChannel::Telegram => {
            let chat = target
                .and_then(|target| ChatRef::of(&target.place))
                .unwrap_or(SAMPLE_CHAT);
            let user = user.and_then(|user| user.parse().ok());
            json(texts
                .iter()
                .map(|text| {
                    to_json(&askbridge_telegram::render::reminder(chat, SAMPLE_TELEGRAM_MESSAGE, text, user))
                })
                .collect())
        }
        RenderChannel::Discord => {
            let channel = discord_channel(&ask);
            let user = user
                .and_then(|user| user.parse::<u64>().ok())
                .and_then(std::num::NonZeroU64::new)
                .map(serenity::model::id::UserId::from);
            let question = serenity::model::id::MessageId::new(SAMPLE_MESSAGE_ID);
            json(texts
                .iter()
                .map(|text| {
                    to_json(&askbridge_discord::render::reminder(question, user, text).to_create(channel))
                })
                .collect())
        }
        RenderChannel::Slack => {
            let channel = SlackChannelId(slack_channel(&ask));
            let thread = slack_morphism::prelude::SlackTs(SAMPLE_SLACK_TS.to_owned());
            json(texts
                .iter()
                .map(|text| {
                    to_json(&askbridge_slack::render::reminder(&thread, user, text).to_post(&channel))
                })
                .collect())
        }
        RenderChannel::Feishu => json(texts
            .iter()
            .map(|text| {
                serde_json::json!({
                    "reply_to": SAMPLE_FEISHU_MESSAGE,
                    "card": askbridge_feishu::render::reminder(text, user).card,
                })
            })
            .collect()),
        RenderChannel::Matrix => json(texts
            .iter()
            .map(|text| {
                serde_json::json!({
                    "type": askbridge_matrix::render::MESSAGE,
                    "content": askbridge_matrix::render::reminder(SAMPLE_MATRIX_EVENT, text, user),
                })
            })
            .collect()),
        RenderChannel::Teams => {
            // The person as their AAD object id: the daemon knows their
            // Teams id and name once they wrote to the bot.
            let whom = user.map(|user| askbridge_teams::render::Mention {
                id: user.to_owned(),
                name: user.to_owned(),
            });
            json(texts
                .iter()
                .map(|text| askbridge_teams::render::reminder(text, whom.as_ref()).activity)
                .collect())
        }
        RenderChannel::Email => {
            let subject = askbridge_email::render::subject(&ask, locale);
            texts
                .iter()
                .enumerate()
                .map(|(n, text)| {
                    let out = sample_mail(&ask, format!("{SAMPLE_ASK_ID}.r{n}@example.com"), true);
                    askbridge_email::render::follow_up(text, &subject, &out, locale)
                        .map(|mail| String::from_utf8_lossy(&mail.formatted()).into_owned())
                        .unwrap_or_else(|error| error.to_string())
                })
                .collect::<Vec<_>>()
                .join("\n")
        }
    })
}

/// Who a sample mail is from and to: the ask's address, else Alice's; in
/// the thread of the ask's mail when `follow_up`.
fn sample_mail(
    ask: &Ask,
    message_id: String,
    follow_up: bool,
) -> askbridge_email::render::Outgoing<'_> {
    let to = match ask.target.as_ref().map(|target| &target.place) {
        Some(Place::Email { address }) => address.as_str(),
        _ => SAMPLE_EMAIL_TO,
    };
    let ask_mail = format!("{SAMPLE_ASK_ID}.0@example.com");
    askbridge_email::render::Outgoing {
        from: SAMPLE_EMAIL_FROM,
        to,
        reply_to: (!follow_up).then(|| SAMPLE_EMAIL_REPLY_TO.to_owned()),
        message_id,
        in_reply_to: follow_up.then(|| ask_mail.clone()),
        references: if follow_up {
            vec![ask_mail]
        } else {
            Vec::new()
        },
        date: std::time::UNIX_EPOCH + std::time::Duration::from_secs(SAMPLE_EMAIL_DATE),
        links: Vec::new(),
    }
}

/// A payload as JSON (they are plain data: this cannot fail).
fn to_json(payload: &impl serde::Serialize) -> serde_json::Value {
    serde_json::to_value(payload).unwrap_or_default()
}

/// The Discord channel an ask names, else the sample one.
fn discord_channel(ask: &Ask) -> ChannelId {
    match ask.target.as_ref().map(|target| &target.place) {
        Some(&Place::DiscordChannel { channel_id }) if channel_id != 0 => {
            ChannelId::new(channel_id)
        }
        _ => SAMPLE_DISCORD_CHANNEL,
    }
}

/// The Slack channel an ask names, else the sample one.
fn slack_channel(ask: &Ask) -> String {
    match ask.target.as_ref().map(|target| &target.place) {
        Some(Place::Slack { channel_id, .. }) => channel_id.clone(),
        _ => SAMPLE_SLACK_CHANNEL.to_owned(),
    }
}

/// Renders the ask in `input` (any dialect) for `channel` in render `mode`
/// (chat channels only). Returns the text to print, or the normaliser's
/// errors as JSON.
pub fn run(
    input: &str,
    channel: RenderChannel,
    locale: Locale,
    mode: Mode,
) -> Result<String, serde_json::Value> {
    let ask = &read(input)?;
    // The ask's context blocks first, as every channel posts them.
    let context = |caps: &Capabilities| render::context_blocks(ask, caps, locale);
    let pretty = |payloads: Vec<serde_json::Value>| {
        Ok(serde_json::to_string_pretty(&payloads).unwrap_or_default())
    };
    match channel {
        RenderChannel::Text => {
            let mut out = String::new();
            for block in context(&Capabilities::TELEGRAM) {
                out.push_str(&format!("```\n{}\n```\n\n", block.text));
            }
            out.push_str(&render::text_prompt(ask, locale));
            Ok(out)
        }
        RenderChannel::Telegram => {
            let chat = ask
                .target
                .as_ref()
                .and_then(|target| ChatRef::of(&target.place))
                .unwrap_or(SAMPLE_CHAT);
            let caps = Capabilities::TELEGRAM.with_mode(mode);
            let view = render::view(ask, SAMPLE_ASK_ID, &caps, locale);
            let blocks = context(&caps);
            let messages = blocks
                .iter()
                .map(|block| askbridge_telegram::render::context_message(block, chat))
                .chain(askbridge_telegram::render::ask_messages(&view, chat));
            pretty(messages.map(|message| to_json(&message)).collect())
        }
        RenderChannel::Discord => {
            let caps = Capabilities::DISCORD.with_mode(mode);
            let view = render::view(ask, SAMPLE_ASK_ID, &caps, locale);
            let channel = discord_channel(ask);
            let blocks = context(&caps);
            let messages = blocks
                .iter()
                .map(askbridge_discord::render::context_message)
                .chain(askbridge_discord::render::ask_messages(&view));
            pretty(
                messages
                    .map(|message| to_json(&message.to_create(channel)))
                    .collect(),
            )
        }
        RenderChannel::Slack => {
            let channel = SlackChannelId(slack_channel(ask));
            let caps = Capabilities::SLACK.with_mode(mode);
            let view = render::view(ask, SAMPLE_ASK_ID, &caps, locale);
            let blocks = context(&caps);
            let messages = blocks
                .iter()
                .map(askbridge_slack::render::Message::context)
                .chain(askbridge_slack::render::ask_messages(&view));
            pretty(
                messages
                    .map(|message| to_json(&message.to_post(&channel)))
                    .collect(),
            )
        }
        RenderChannel::Feishu => {
            let caps = Capabilities::FEISHU.with_mode(mode);
            let view = render::view(ask, SAMPLE_ASK_ID, &caps, locale);
            let blocks = context(&caps);
            let messages = blocks
                .iter()
                .map(askbridge_feishu::render::Message::context)
                .chain(askbridge_feishu::render::ask_messages(&view, locale));
            pretty(messages.map(|message| message.card).collect())
        }
        RenderChannel::Matrix => {
            let caps = Capabilities::MATRIX.with_mode(mode);
            let view = render::view(ask, SAMPLE_ASK_ID, &caps, locale);
            let blocks = context(&caps);
            let messages = blocks
                .iter()
                .map(askbridge_matrix::render::context_message)
                .chain(askbridge_matrix::render::ask_messages(&view, locale));
            pretty(
                messages
                    .map(|message| serde_json::json!({ "type": message.event_type, "content": message.content }))
                    .collect(),
            )
        }
        RenderChannel::Email => {
            let caps = Capabilities::EMAIL;
            let view = render::view(ask, SAMPLE_ASK_ID, &caps, locale);
            let out = sample_mail(ask, format!("{SAMPLE_ASK_ID}.0@example.com"), false);
            askbridge_email::render::ask_mail(&view, &context(&caps), ask, &out, locale)
                .map(|mail| String::from_utf8_lossy(&mail.formatted()).into_owned())
                .map_err(|error| serde_json::json!({"ok": false, "errors": [{"path": "", "message": error.to_string()}]}))
        }
        RenderChannel::Teams => {
            let caps = Capabilities::TEAMS.with_mode(mode);
            let view = render::view(ask, SAMPLE_ASK_ID, &caps, locale);
            let blocks = context(&caps);
            let messages = blocks
                .iter()
                .map(askbridge_teams::render::Message::context)
                .chain(askbridge_teams::render::ask_messages(&view, locale));
            pretty(messages.map(|message| message.activity).collect())
        }
    }
}

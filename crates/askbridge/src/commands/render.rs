//! `askbridge render`: what a channel would be sent for an ask.

use askbridge_core::model::Place;
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
    /// last is the poll. `rich` mode draws as `buttons`.
    Matrix,
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
    let normalized = normalize::normalize_input(input).map_err(|errors| {
        let (json, _) = super::normalize::run(input);
        debug_assert!(!errors.is_empty());
        json
    })?;
    let ask = &normalized.ask;
    match channel {
        RenderChannel::Text => Ok(render::text_prompt(ask, locale)),
        RenderChannel::Telegram => {
            let chat = ask
                .target
                .as_ref()
                .and_then(|target| ChatRef::of(&target.place))
                .unwrap_or(SAMPLE_CHAT);
            let caps = Capabilities::TELEGRAM.with_mode(mode);
            let view = render::view(ask, SAMPLE_ASK_ID, &caps, locale);
            let messages = askbridge_telegram::render::ask_messages(&view, chat);
            Ok(serde_json::to_string_pretty(&messages).unwrap_or_default())
        }
        RenderChannel::Discord => {
            let caps = Capabilities::DISCORD.with_mode(mode);
            let view = render::view(ask, SAMPLE_ASK_ID, &caps, locale);
            let channel = match ask.target.as_ref().map(|target| &target.place) {
                Some(&Place::DiscordChannel { channel_id }) if channel_id != 0 => {
                    ChannelId::new(channel_id)
                }
                _ => SAMPLE_DISCORD_CHANNEL,
            };
            let messages: Vec<_> = askbridge_discord::render::ask_messages(&view)
                .iter()
                .map(|message| message.to_create(channel))
                .collect();
            Ok(serde_json::to_string_pretty(&messages).unwrap_or_default())
        }
        RenderChannel::Slack => {
            let channel = match ask.target.as_ref().map(|target| &target.place) {
                Some(Place::Slack { channel_id, .. }) => channel_id.clone(),
                _ => SAMPLE_SLACK_CHANNEL.to_owned(),
            };
            let caps = Capabilities::SLACK.with_mode(mode);
            let view = render::view(ask, SAMPLE_ASK_ID, &caps, locale);
            let messages: Vec<_> = askbridge_slack::render::ask_messages(&view)
                .iter()
                .map(|message| message.to_post(&SlackChannelId(channel.clone())))
                .collect();
            Ok(serde_json::to_string_pretty(&messages).unwrap_or_default())
        }
        RenderChannel::Feishu => {
            let caps = Capabilities::FEISHU.with_mode(mode);
            let view = render::view(ask, SAMPLE_ASK_ID, &caps, locale);
            let cards: Vec<_> = askbridge_feishu::render::ask_messages(&view, locale)
                .into_iter()
                .map(|message| message.card)
                .collect();
            Ok(serde_json::to_string_pretty(&cards).unwrap_or_default())
        }
        RenderChannel::Matrix => {
            let mode = match mode {
                Mode::Rich => Mode::Buttons,
                mode => mode,
            };
            let caps = Capabilities::MATRIX.with_mode(mode);
            let view = render::view(ask, SAMPLE_ASK_ID, &caps, locale);
            let events: Vec<_> = askbridge_matrix::render::ask_messages(&view)
                .into_iter()
                .map(|message| serde_json::json!({ "type": message.event_type, "content": message.content }))
                .collect();
            Ok(serde_json::to_string_pretty(&events).unwrap_or_default())
        }
    }
}

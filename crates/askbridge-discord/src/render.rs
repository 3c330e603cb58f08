//! Asks as Discord messages. Pure: the payloads depend only on the
//! arguments.
//!
//! A [`Message`] is askbridge's own description of one message (serenity's
//! builders keep their fields private, and the server needs the text it
//! showed to write the closing edit); [`Message::to_create`],
//! [`Message::to_edit`] and [`update`] turn it into serenity's builders,
//! which serialise to exactly the JSON Discord's REST API takes.
//!
//! Whatever the view holds, nothing built here is refused by Discord:
//! content is 1–2,000 characters, a row holds at most 5 buttons, a message
//! at most 5 rows, labels at most 80 characters, `custom_id`s at most 100
//! and unique, select menus at most 25 options of at most 100 characters.
//! Lengths are measured in UTF-16 units by the core's [`cut`], never fewer
//! than the characters Discord counts. Mentions never ping: every payload
//! carries `allowed_mentions` with nothing allowed, so agent text such as
//! `@everyone` stays text.
//!
//! Button styles: [`ButtonStyle::Primary`] (the recommended option, a
//! checked toggle, the step's main action) is Discord's Primary; ordinary
//! options and controls are Secondary. Discord's design guidelines ask for
//! one Primary button per group and Secondary for buttons of equal weight;
//! Success and Danger would colour Yes / No as good and bad, which askbridge
//! does not know.

use std::collections::HashSet;
use std::num::NonZeroU64;

use askbridge_core::model::Place;
use askbridge_core::render::{
    Block, Button, ButtonStyle, Locale, OptionRef, Step, StepInput, Unit, View, cut,
};
use serenity::builder::{
    CreateActionRow, CreateAllowedMentions, CreateButton, CreateCommand, CreateInputText,
    CreateInteractionResponse, CreateInteractionResponseFollowup, CreateInteractionResponseMessage,
    CreateMessage, CreateModal, CreateSelectMenu, CreateSelectMenuKind, CreateSelectMenuOption,
    EditMessage,
};
use serenity::model::application::{ButtonStyle as DiscordStyle, InputTextStyle};
use serenity::model::channel::{MessageReference, MessageReferenceKind};
use serenity::model::id::{ChannelId, MessageId, UserId};

/// Longest message content (Discord counts characters).
pub const MAX_CONTENT_CHARS: usize = 2_000;
/// Longest button label.
pub const MAX_BUTTON_LABEL_CHARS: usize = 80;
/// Longest `custom_id` of a button, select menu or modal.
pub const MAX_CUSTOM_ID_CHARS: usize = 100;
/// Most buttons in one action row.
pub const MAX_BUTTONS_PER_ROW: usize = 5;
/// Most action rows on one message.
pub const MAX_ROWS: usize = 5;
/// Most options in a select menu.
pub const MAX_SELECT_OPTIONS: usize = 25;
/// Longest select option label and description.
pub const MAX_SELECT_OPTION_CHARS: usize = 100;
/// Longest modal title and text input label.
pub const MAX_MODAL_LABEL_CHARS: usize = 45;
/// Longest text input placeholder.
pub const MAX_INPUT_PLACEHOLDER_CHARS: usize = 100;
/// The `custom_id` of the one text input of the own-words modal.
pub const ANSWER_INPUT_ID: &str = "answer";

/// Shown instead of a blank text (Discord refuses empty messages and
/// labels).
const EMPTY_TEXT: &str = "❓";

/// Where a message is posted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Destination {
    /// A guild text channel, a thread or a forum post (threads and posts
    /// are channels of their own).
    Channel(ChannelId),
    /// A direct message to a user; the server opens the DM channel first
    /// ([`crate::run::DiscordApi::dm_channel`]).
    User(UserId),
}

impl Destination {
    /// The destination of a `discord:` target; `None` for other channels
    /// (and for the invalid snowflake 0).
    pub fn of(place: &Place) -> Option<Destination> {
        match place {
            Place::DiscordChannel { channel_id } => {
                NonZeroU64::new(*channel_id).map(|id| Destination::Channel(ChannelId::from(id)))
            }
            Place::DiscordUser { user_id } => {
                NonZeroU64::new(*user_id).map(|id| Destination::User(UserId::from(id)))
            }
            _ => None,
        }
    }
}

/// One Discord message as askbridge draws it: its text, its component rows
/// and, for a reply, the message it answers.
#[derive(Debug, Clone, PartialEq)]
pub struct Message {
    /// The message text (1–2,000 characters).
    pub content: String,
    /// Action rows of buttons or one select menu; empty for none.
    pub components: Vec<CreateActionRow>,
    /// The message this one replies to (in the same channel).
    pub reply_to: Option<MessageId>,
    /// The one user this message may ping (a reminder's); nobody else is
    /// ever pinged.
    pub ping: Option<UserId>,
}

impl Message {
    /// A plain message: `content`, fitted to Discord's limit, no components.
    pub fn text(content: &str) -> Message {
        Message {
            content: fit_content(content),
            components: Vec::new(),
            reply_to: None,
            ping: None,
        }
    }

    /// The `POST /channels/{channel_id}/messages` payload. `channel_id` is
    /// where it is sent; serenity's message reference needs it for a reply.
    /// A reply does not ping the person replied to, and is sent as an
    /// ordinary message if the message it answers is gone.
    pub fn to_create(&self, channel_id: ChannelId) -> CreateMessage {
        let mut payload = CreateMessage::new().content(fit_content(&self.content));
        if !self.components.is_empty() {
            payload = payload.components(self.components.clone());
        }
        let allowed = match self.ping {
            Some(user) => no_mentions().users([user]),
            None => no_mentions(),
        };
        match self.reply_to {
            Some(message_id) => payload
                .allowed_mentions(allowed.replied_user(false))
                .reference_message(
                    MessageReference::new(MessageReferenceKind::Default, channel_id)
                        .message_id(message_id)
                        .fail_if_not_exists(false),
                ),
            None => payload.allowed_mentions(allowed),
        }
    }

    /// The `PATCH /channels/{channel_id}/messages/{message_id}` payload:
    /// the new text and components. Components are always sent, so a
    /// message without any removes the old buttons.
    pub fn to_edit(&self) -> EditMessage {
        EditMessage::new()
            .content(fit_content(&self.content))
            .components(self.components.clone())
            .allowed_mentions(no_mentions())
    }
}

/// The messages an ask is posted as, in order. The last one carries the
/// controls (the buttons, or the first step in rich mode) and is the one
/// edited later.
pub fn ask_messages(view: &View) -> Vec<Message> {
    match view {
        View::Buttons(buttons) => {
            let mut messages: Vec<Message> = buttons
                .parts
                .iter()
                .map(|part| Message::text(part))
                .collect();
            let components = button_rows(buttons.rows.iter().map(Vec::as_slice), MAX_ROWS);
            if !components.is_empty() {
                match messages.last_mut() {
                    Some(last) => last.components = components,
                    None => messages.push(Message {
                        components,
                        ..Message::text(EMPTY_TEXT)
                    }),
                }
            }
            messages
        }
        View::Text(text) => text.parts.iter().map(|part| Message::text(part)).collect(),
        View::Rich(rich) => rich.steps.first().map(step_message).into_iter().collect(),
    }
}

/// One block of an ask's context as a fenced code block (with its
/// language); a fence inside the text is broken with a zero-width space
/// so it cannot end the block early.
pub fn context_message(block: &Block) -> Message {
    let text = block.text.replace("```", "`\u{200b}``");
    let language = block.language.as_deref().unwrap_or_default();
    Message::text(&format!("```{language}\n{text}\n```"))
}

/// One step of a rich view as a message with its controls.
///
/// Single-choice, confirm and text steps get their button rows. A
/// multi-select step gets a string select menu instead of the toggle
/// buttons: one option per question option (value: its index), the checked
/// ones preselected, any number but at least one to choose; choosing
/// submits it under the step's Done key. The other controls (Other…, Skip
/// question, Skip) follow in rows of their own. The menu has no
/// placeholder: the core has no phrase for one, and Discord's own ("Make a
/// selection") is shown in each person's client language.
pub fn step_message(step: &Step) -> Message {
    let components = match &step.input {
        StepInput::Pick | StepInput::Text { .. } => {
            button_rows(step.rows.iter().map(Vec::as_slice), MAX_ROWS)
        }
        StepInput::Toggle { selected, options } => {
            match select_menu(step, selected, options) {
                Some(menu) => {
                    let controls: Vec<Button> = step
                        .rows
                        .iter()
                        .flatten()
                        .filter(|b| !matches!(b.action, OptionRef::Index(_) | OptionRef::Done))
                        .cloned()
                        .collect();
                    let mut rows = vec![CreateActionRow::SelectMenu(menu)];
                    rows.extend(button_rows(
                        std::iter::once(controls.as_slice()),
                        MAX_ROWS - 1,
                    ));
                    rows
                }
                // No Done key or no options to choose from: the toggle
                // buttons still work.
                None => button_rows(step.rows.iter().map(Vec::as_slice), MAX_ROWS),
            }
        }
    };
    Message {
        components,
        ..Message::text(&step.text)
    }
}

/// The message of an ended ask: what it showed, a blank line, the status
/// line, with no components (as an edit, this removes the buttons). The
/// shown text is cut, never the status line, to stay within 2,000
/// characters.
pub fn closed(shown: &str, status: &str) -> Message {
    let status = cut(status.trim(), MAX_CONTENT_CHARS, Unit::Utf16);
    let room = MAX_CONTENT_CHARS.saturating_sub(Unit::Utf16.len(&status) + 2);
    let shown = cut(shown.trim_end(), room, Unit::Utf16);
    let content = match (shown.trim().is_empty(), status.is_empty()) {
        (true, _) => status,
        (false, true) => shown,
        (false, false) => format!("{shown}\n\n{status}"),
    };
    Message::text(&content)
}

/// A message answering one of the person's messages (a clarifying
/// question, the questions still open).
/// A reminder of the question in message `message_id`: a reply with
/// `text` that pings `user` (and no one else) when there is one.
pub fn reminder(message_id: MessageId, user: Option<UserId>, text: &str) -> Message {
    let content = match user {
        Some(user) => format!("<@{user}> {text}"),
        None => text.to_owned(),
    };
    Message {
        ping: user,
        ..reply_to(message_id, &content)
    }
}

pub fn reply_to(message_id: MessageId, text: &str) -> Message {
    Message {
        reply_to: Some(message_id),
        ..Message::text(text)
    }
}

/// The modal asking for the person's own words: one text input
/// ([`ANSWER_INPUT_ID`]), a paragraph when `multiline`. `custom_id` comes
/// back in the submit (the Other… / Answer… key); `title`, `label` and
/// `placeholder` are cut to 45, 45 and 100 characters.
pub fn own_words_modal(
    custom_id: &str,
    title: &str,
    label: &str,
    placeholder: Option<&str>,
    multiline: bool,
) -> CreateInteractionResponse {
    let style = if multiline {
        InputTextStyle::Paragraph
    } else {
        InputTextStyle::Short
    };
    let mut input = CreateInputText::new(style, fit(label, MAX_MODAL_LABEL_CHARS), ANSWER_INPUT_ID)
        .required(true);
    if let Some(placeholder) = placeholder.map(str::trim).filter(|p| !p.is_empty()) {
        input = input.placeholder(cut(placeholder, MAX_INPUT_PLACEHOLDER_CHARS, Unit::Utf16));
    }
    CreateInteractionResponse::Modal(
        CreateModal::new(custom_id, fit(title, MAX_MODAL_LABEL_CHARS))
            .components(vec![CreateActionRow::InputText(input)]),
    )
}

/// A short notice only the person who pressed sees (an ephemeral message:
/// "already answered", "not for you").
pub fn notice(text: &str) -> CreateInteractionResponse {
    CreateInteractionResponse::Message(
        CreateInteractionResponseMessage::new()
            .content(fit_content(text))
            .ephemeral(true)
            .allowed_mentions(no_mentions()),
    )
}

/// A notice for the presser alone, following up an interaction already
/// acknowledged (a refusal after the deferred update a press gets as it
/// arrives).
pub fn notice_follow_up(text: &str) -> CreateInteractionResponseFollowup {
    CreateInteractionResponseFollowup::new()
        .content(fit_content(text))
        .ephemeral(true)
        .allowed_mentions(no_mentions())
}

/// askbridge's slash command, `/askbridge`, for registering with Discord:
/// its description in `locale`, and in every other locale askbridge
/// speaks for people whose Discord is set to it.
pub fn command(locale: Locale) -> CreateCommand {
    let mut command =
        CreateCommand::new(crate::parse::COMMAND).description(locale.strings().where_command);
    for other in Locale::ALL.into_iter().filter(|other| *other != locale) {
        // Discord's own locale codes.
        let codes: &[&str] = match other {
            Locale::En => &["en-US", "en-GB"],
            Locale::ZhCn => &["zh-CN"],
            Locale::Th => &["th"],
        };
        for code in codes {
            command = command.description_localized(*code, other.strings().where_command);
        }
    }
    command
}

/// Acknowledges a press without changing anything now
/// (`DEFERRED_UPDATE_MESSAGE`); the message can be edited later.
pub fn acknowledge() -> CreateInteractionResponse {
    CreateInteractionResponse::Acknowledge
}

/// Answers a press by replacing the message it was on (`UPDATE_MESSAGE`):
/// the next step, a redrawn toggle, the closed ask. Components are always
/// sent, so none removes them.
pub fn update(message: &Message) -> CreateInteractionResponse {
    CreateInteractionResponse::UpdateMessage(
        CreateInteractionResponseMessage::new()
            .content(fit_content(&message.content))
            .components(message.components.clone())
            .allowed_mentions(no_mentions()),
    )
}

/// Button rows as action rows: at most 5 buttons a row (longer rows are
/// wrapped), at most `max_rows` rows (the rest is dropped), no empty rows,
/// no button whose key Discord would refuse or that repeats an earlier key.
fn button_rows<'a>(
    rows: impl Iterator<Item = &'a [Button]>,
    max_rows: usize,
) -> Vec<CreateActionRow> {
    let mut seen = HashSet::new();
    let mut out = Vec::new();
    for row in rows {
        let buttons: Vec<CreateButton> = row
            .iter()
            .filter(|b| valid_custom_id(&b.key) && seen.insert(b.key.as_str()))
            .map(button)
            .collect();
        let mut buttons = buttons.into_iter().peekable();
        while buttons.peek().is_some() {
            out.push(CreateActionRow::Buttons(
                buttons.by_ref().take(MAX_BUTTONS_PER_ROW).collect(),
            ));
        }
    }
    out.truncate(max_rows);
    out
}

fn button(b: &Button) -> CreateButton {
    let style = match b.style {
        ButtonStyle::Primary => DiscordStyle::Primary,
        ButtonStyle::Normal | ButtonStyle::Secondary => DiscordStyle::Secondary,
    };
    CreateButton::new(&b.key)
        .label(fit(&b.label, MAX_BUTTON_LABEL_CHARS))
        .style(style)
}

/// The select menu of a multi-select step, under its Done key; `None` when
/// the step has no usable Done key or no options.
fn select_menu(
    step: &Step,
    selected: &[usize],
    options: &[askbridge_core::render::StepOption],
) -> Option<CreateSelectMenu> {
    let key = step
        .rows
        .iter()
        .flatten()
        .find(|b| b.action == OptionRef::Done)
        .map(|b| b.key.as_str())
        .filter(|key| valid_custom_id(key))?;
    let mut seen = HashSet::new();
    let choices: Vec<CreateSelectMenuOption> = options
        .iter()
        .filter(|option| seen.insert(option.index))
        .take(MAX_SELECT_OPTIONS)
        .map(|option| {
            let mut choice = CreateSelectMenuOption::new(
                fit(&option.label, MAX_SELECT_OPTION_CHARS),
                option.index.to_string(),
            );
            if let Some(description) = option
                .description
                .as_deref()
                .map(str::trim)
                .filter(|d| !d.is_empty())
            {
                choice = choice.description(cut(description, MAX_SELECT_OPTION_CHARS, Unit::Utf16));
            }
            if selected.contains(&option.index) {
                choice = choice.default_selection(true);
            }
            choice
        })
        .collect();
    let count = u8::try_from(choices.len()).ok().filter(|&n| n > 0)?;
    Some(
        CreateSelectMenu::new(key, CreateSelectMenuKind::String { options: choices })
            .min_values(1)
            .max_values(count),
    )
}

fn valid_custom_id(key: &str) -> bool {
    !key.is_empty() && key.chars().count() <= MAX_CUSTOM_ID_CHARS
}

/// `text` within `max` characters, never blank.
fn fit(text: &str, max: usize) -> String {
    let text = text.trim();
    if text.is_empty() {
        EMPTY_TEXT.to_owned()
    } else {
        cut(text, max, Unit::Utf16)
    }
}

/// Message content within Discord's limit, never blank (leading
/// indentation is kept).
fn fit_content(text: &str) -> String {
    let text = text.trim_end();
    if text.trim().is_empty() {
        EMPTY_TEXT.to_owned()
    } else {
        cut(text, MAX_CONTENT_CHARS, Unit::Utf16)
    }
}

/// `allowed_mentions` with nothing allowed: no `@everyone`, no role or user
/// pings, whatever the text says.
fn no_mentions() -> CreateAllowedMentions {
    CreateAllowedMentions::new()
}

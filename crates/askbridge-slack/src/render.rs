//! Asks as Slack Block Kit messages. Pure: the payloads depend only on the
//! arguments.
//!
//! A [`Message`] is askbridge's own description of one message: the plain
//! text it shows (the notification fallback, and what the server records
//! as shown for the closing edit), its blocks and the thread it goes to.
//! [`Message::to_post`], [`Message::to_update`] and [`Message::to_ephemeral`]
//! turn it into slack-morphism's request models, which serialise to exactly
//! the JSON of `chat.postMessage`, `chat.update` and `chat.postEphemeral`.
//!
//! Whatever the view holds, nothing built here is refused by Slack: a
//! message has at most 50 blocks, a section's text is 1–3,000 characters,
//! an actions block holds at most 25 elements, button texts are at most 75
//! characters, `action_id`s are 1–255 characters, checkboxes hold at most
//! 10 options and a multi-select menu at most 100, option texts and
//! descriptions at most 75 characters; a modal's title, submit and close
//! texts at most 24. Lengths are measured in UTF-16 units by the core's
//! [`Unit::Utf16`], never fewer than the characters Slack counts.
//!
//! All text is `mrkdwn` with `verbatim` on, escaped by [`escape`] (`&`, `<`,
//! `>`): agent text such as `<!channel>` or `<@U123>` shows as typed and
//! pings nobody, and Slack does not turn names or channel names into links.
//!
//! Button styles: [`ButtonStyle::Primary`] (the recommended option, the
//! step's main action) is Slack's `primary`; every other button has no
//! style (Slack's default). `danger` is never used: askbridge does not know
//! which answer is the dangerous one.
//!
//! Multi-select steps ([`StepInput::Toggle`]) are drawn as one selection
//! element — checkboxes for up to 10 options (in an actions block), else a
//! multi-select menu (the accessory of the question's section) — followed
//! by the step's controls, Submit (the core's Done button) first. Both the
//! selection element and the Submit button carry the step's Done key as
//! `action_id`, in different blocks (Slack wants `action_id`s unique within
//! a block): Slack keeps the ticked options in the message's input state
//! and sends a `block_actions` on every tick, which askbridge ignores; the
//! Submit press carries the whole state, from which
//! [`crate::parse::interaction`] reads the choice. A choice is thus
//! submitted once, when the person presses Submit.

use std::collections::HashSet;

use askbridge_core::model::Place;
use askbridge_core::render::{
    Block, Button, ButtonStyle, Locale, OptionRef, Step, StepInput, StepOption, Unit, View, cut,
    split_message,
};
use serde::Serialize;
use slack_morphism::prelude::{
    SlackActionBlockElement, SlackActionId, SlackActionsBlock, SlackApiChatPostEphemeralRequest,
    SlackApiChatPostMessageRequest, SlackApiChatUpdateRequest, SlackBlock, SlackBlockButtonElement,
    SlackBlockButtonStyle, SlackBlockCheckboxesElement, SlackBlockChoiceItem, SlackBlockId,
    SlackBlockMarkDownText, SlackBlockMultiStaticSelectElement, SlackBlockPlainText,
    SlackBlockPlainTextInputElement, SlackBlockPlainTextOnly, SlackBlockText, SlackCallbackId,
    SlackChannelId, SlackInputBlock, SlackMessageContent, SlackModalView, SlackSectionBlock,
    SlackSectionBlockElement, SlackTs, SlackUserId, SlackView,
};

/// Longest text of a section block.
pub const MAX_SECTION_CHARS: usize = 3_000;
/// Most blocks in one message.
pub const MAX_BLOCKS: usize = 50;
/// Most elements in one actions block.
pub const MAX_ACTIONS_ELEMENTS: usize = 25;
/// Longest button text.
pub const MAX_BUTTON_TEXT_CHARS: usize = 75;
/// Longest `action_id` (and `block_id`, `callback_id`).
pub const MAX_ACTION_ID_CHARS: usize = 255;
/// Most options of a checkboxes element.
pub const MAX_CHECKBOX_OPTIONS: usize = 10;
/// Most options of a multi-select menu.
pub const MAX_SELECT_OPTIONS: usize = 100;
/// Longest option text and option description.
pub const MAX_OPTION_TEXT_CHARS: usize = 75;
/// Longest modal title, submit and close text.
pub const MAX_MODAL_TEXT_CHARS: usize = 24;
/// Longest input block label.
pub const MAX_INPUT_LABEL_CHARS: usize = 2_000;
/// Longest text input placeholder.
pub const MAX_PLACEHOLDER_CHARS: usize = 150;
/// Longest `private_metadata` of a modal.
pub const MAX_PRIVATE_METADATA_CHARS: usize = 3_000;
/// Longest top-level `text` sent (Slack truncates at 40,000 and advises at
/// most 4,000; the blocks carry the full text anyway).
pub const MAX_FALLBACK_TEXT_CHARS: usize = 4_000;
/// Longest shown text kept in a closing edit (the blocks stay well within
/// 50 sections).
pub const MAX_CLOSED_TEXT_CHARS: usize = 20_000;
/// The `block_id` of the own-words modal's input block.
pub const ANSWER_BLOCK_ID: &str = "ab-answer";
/// The `action_id` of the own-words modal's text input.
pub const ANSWER_ACTION_ID: &str = "answer";

/// Shown instead of a blank text (Slack refuses empty sections and labels).
const EMPTY_TEXT: &str = "❓";

/// Where a message is posted.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Destination {
    /// A channel, private channel or DM (`C…`, `G…`, `D…`), optionally a
    /// thread in it.
    Channel {
        /// The conversation id.
        channel: SlackChannelId,
        /// The `thread_ts` of the thread, if the message goes to one.
        thread_ts: Option<SlackTs>,
    },
    /// A direct message to a user (`U…`, `W…`); the server opens the IM
    /// first ([`crate::run::SlackApi::open_dm`]).
    User(SlackUserId),
}

impl Destination {
    /// The destination of a `slack:` target; `None` for other channels and
    /// for ids Slack does not use for conversations or users.
    /// `slack:user/<U…>` is a DM; so is a bare user id (`slack:U…`), as
    /// Slack's `chat.postMessage` reads it, and a thread on it is dropped
    /// (the DM is not open yet, so it has no threads).
    pub fn of(place: &Place) -> Option<Destination> {
        let valid = |id: &str| id.len() >= 2 && id.bytes().all(|b| b.is_ascii_alphanumeric());
        let (id, thread_ts) = match place {
            Place::Slack {
                channel_id,
                thread_ts,
            } => (channel_id.trim(), thread_ts.as_deref()),
            Place::SlackUser { user_id } => {
                let id = user_id.trim();
                return (valid(id) && matches!(id.as_bytes()[0], b'U' | b'W'))
                    .then(|| Destination::User(SlackUserId(id.to_owned())));
            }
            _ => return None,
        };
        if !valid(id) {
            return None;
        }
        let thread_ts = thread_ts
            .map(str::trim)
            .filter(|ts| !ts.is_empty())
            .map(|ts| SlackTs(ts.to_owned()));
        match id.as_bytes()[0] {
            b'C' | b'G' | b'D' => Some(Destination::Channel {
                channel: SlackChannelId(id.to_owned()),
                thread_ts,
            }),
            b'U' | b'W' => Some(Destination::User(SlackUserId(id.to_owned()))),
            _ => None,
        }
    }
}

/// One Slack message as askbridge draws it.
#[derive(Debug, Clone, PartialEq)]
pub struct Message {
    /// The plain text the message shows (not escaped): sent, escaped, as
    /// the notification fallback `text`, and what the server records as
    /// shown.
    pub text: String,
    /// The Block Kit blocks: the text as sections, then the controls.
    pub blocks: Vec<SlackBlock>,
    /// The thread the message goes to, if any.
    pub thread_ts: Option<SlackTs>,
    /// A user mentioned before the text (`<@U…>`), in the sections and
    /// the notification alike, so it notifies them.
    pub mention: Option<String>,
}

impl Message {
    /// A plain message: `text` as sections, no controls.
    pub fn text(text: &str) -> Message {
        let text = non_blank(text);
        Message {
            blocks: assemble(sections(&text), Vec::new()),
            text,
            thread_ts: None,
            mention: None,
        }
    }

    /// One block of an ask's context as code blocks (```), in sections
    /// that each open and close their own fence; Slack has no language
    /// highlighting.
    pub fn context(block: &Block) -> Message {
        let text = non_blank(&block.text);
        Message {
            blocks: assemble(code_sections(&text), Vec::new()),
            text,
            thread_ts: None,
            mention: None,
        }
    }

    /// The `chat.postMessage` request posting this message in `channel`
    /// (in its thread, if it has one). Names are not linked and links not
    /// unfurled.
    pub fn to_post(&self, channel: &SlackChannelId) -> SlackApiChatPostMessageRequest {
        let mut content = self.content();
        if self.blocks.is_empty() {
            content.blocks = None;
        }
        SlackApiChatPostMessageRequest::new(channel.clone(), content)
            .opt_thread_ts(self.thread_ts.clone())
            .with_link_names(false)
            .with_unfurl_links(false)
            .with_unfurl_media(false)
    }

    /// The `chat.update` request replacing message `ts` in `channel` with
    /// this one. The blocks are always sent, so a message without controls
    /// removes the old ones.
    pub fn to_update(&self, channel: &SlackChannelId, ts: &SlackTs) -> SlackApiChatUpdateRequest {
        SlackApiChatUpdateRequest::new(channel.clone(), self.content(), ts.clone())
            .with_link_names(false)
    }

    /// The `chat.postEphemeral` request showing this message to `user`
    /// only, in `channel` (in its thread, if it has one).
    pub fn to_ephemeral(
        &self,
        channel: &SlackChannelId,
        user: &SlackUserId,
    ) -> SlackApiChatPostEphemeralRequest {
        SlackApiChatPostEphemeralRequest::new(channel.clone(), user.clone(), self.content())
            .opt_thread_ts(self.thread_ts.clone())
            .with_link_names(false)
    }

    /// The text and blocks as slack-morphism's message content.
    fn content(&self) -> SlackMessageContent {
        let text = escape(&cut(
            &non_blank(&self.text),
            MAX_FALLBACK_TEXT_CHARS,
            Unit::Utf16,
        ));
        let text = match &self.mention {
            Some(user) => format!("<@{user}> {text}"),
            None => text,
        };
        SlackMessageContent::new()
            .with_text(text)
            .with_blocks(self.blocks.clone())
    }
}

/// A message posted to an interaction's `response_url`, shown only to the
/// person who pressed (`response_type: ephemeral`), leaving the message
/// they pressed on as it is.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct EphemeralResponse {
    /// Always `ephemeral`.
    pub response_type: &'static str,
    /// Always `false`: the pressed message stays.
    pub replace_original: bool,
    /// The escaped fallback text.
    pub text: String,
    /// The text as sections.
    pub blocks: Vec<SlackBlock>,
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
            let controls = actions_blocks(buttons.rows.iter().map(Vec::as_slice), MAX_BLOCKS - 1);
            if !controls.is_empty() {
                match messages.last_mut() {
                    Some(last) => last.blocks = assemble(sections(&last.text), controls),
                    None => messages.push(Message {
                        text: EMPTY_TEXT.to_owned(),
                        blocks: assemble(sections(EMPTY_TEXT), controls),
                        thread_ts: None,
                        mention: None,
                    }),
                }
            }
            messages
        }
        View::Text(text) => text.parts.iter().map(|part| Message::text(part)).collect(),
        View::Rich(rich) => rich.steps.first().map(step_message).into_iter().collect(),
    }
}

/// One step of a rich view as a message with its controls.
///
/// Single-choice, confirm and text steps get their button rows. A
/// multi-select step gets checkboxes (up to 10 options) or a multi-select
/// menu (up to 100) instead of the toggle buttons: one option per question
/// option (`value`: its index), the checked ones preselected, under the
/// step's Done key; then the other controls, Submit first (see the module
/// docs). The menu has no placeholder: the core has no phrase for one, and
/// Slack shows its own. Without a Done key or options the toggle buttons
/// are drawn as they are.
pub fn step_message(step: &Step) -> Message {
    let text = non_blank(&step.text);
    let mut text_blocks = sections(&text);
    let controls = match &step.input {
        StepInput::Pick | StepInput::Text { .. } => {
            actions_blocks(step.rows.iter().map(Vec::as_slice), MAX_BLOCKS - 1)
        }
        StepInput::Toggle { selected, options } => {
            match selection(step, selected, options) {
                Some(Selection::Checkboxes(checkboxes)) => {
                    let mut blocks = vec![SlackBlock::Actions(SlackActionsBlock::new(vec![
                        SlackActionBlockElement::Checkboxes(checkboxes),
                    ]))];
                    blocks.extend(step_controls(step, MAX_BLOCKS - 2));
                    blocks
                }
                Some(Selection::Menu(menu)) => {
                    if let Some(SlackBlock::Section(last)) = text_blocks.last_mut() {
                        last.accessory = Some(SlackSectionBlockElement::MultiStaticSelect(menu));
                    }
                    step_controls(step, MAX_BLOCKS - 1)
                }
                // No Done key or no options to choose from: the toggle
                // buttons still work.
                None => actions_blocks(step.rows.iter().map(Vec::as_slice), MAX_BLOCKS - 1),
            }
        }
    };
    Message {
        blocks: assemble(text_blocks, controls),
        text,
        thread_ts: None,
        mention: None,
    }
}

/// The message of an ended ask: what it showed, a blank line, the status
/// line, with no controls (as an update, this removes them). The shown
/// text is cut to [`MAX_CLOSED_TEXT_CHARS`], never the status line.
pub fn closed(shown: &str, status: &str) -> Message {
    Message::text(&askbridge_core::render::closed_text(
        shown,
        status,
        MAX_CLOSED_TEXT_CHARS,
    ))
}

/// A message in the thread of `thread_ts` (a clarifying question, the
/// questions still open).
pub fn reply_in_thread(thread_ts: &SlackTs, text: &str) -> Message {
    Message {
        thread_ts: Some(thread_ts.clone()),
        ..Message::text(text)
    }
}

/// A reminder in the thread of `thread_ts`: `text`, after a mention of
/// `user` when there is one (a Slack user id; anything else is not
/// mentioned).
pub fn reminder(thread_ts: &SlackTs, user: Option<&str>, text: &str) -> Message {
    let mention = user
        .filter(|user| !user.is_empty() && user.chars().all(|c| c.is_ascii_alphanumeric()))
        .map(str::to_owned);
    let text = non_blank(text);
    let shown = match &mention {
        Some(user) => format!("<@{user}> {}", escape(&text)),
        None => escape(&text),
    };
    Message {
        blocks: assemble(vec![section(shown)], Vec::new()),
        text,
        thread_ts: Some(thread_ts.clone()),
        mention,
    }
}

/// The `chat.postEphemeral` request showing `text` to `user` only, in
/// `channel` (in the thread of `thread_ts`, if any): "already answered",
/// "not for you".
pub fn ephemeral(
    channel: &SlackChannelId,
    user: &SlackUserId,
    text: &str,
    thread_ts: Option<&SlackTs>,
) -> SlackApiChatPostEphemeralRequest {
    Message {
        thread_ts: thread_ts.cloned(),
        ..Message::text(text)
    }
    .to_ephemeral(channel, user)
}

/// `text` as a message for an interaction's `response_url`, shown only to
/// the person who pressed.
pub fn ephemeral_response(text: &str) -> EphemeralResponse {
    let message = Message::text(text);
    EphemeralResponse {
        response_type: "ephemeral",
        replace_original: false,
        text: escape(&cut(&message.text, MAX_FALLBACK_TEXT_CHARS, Unit::Utf16)),
        blocks: message.blocks,
    }
}

/// The modal asking for the person's own words, for `views.open`: one
/// required text input ([`ANSWER_ACTION_ID`] in block [`ANSWER_BLOCK_ID`]),
/// several lines when `multiline`. `callback_id` comes back in the
/// `view_submission` (the Other… / Answer… key), and so does
/// `private_metadata` (dropped if longer than 3,000 characters, which
/// Slack refuses). `title` is cut to 24 characters, `label` to 2,000,
/// `placeholder` to 150; the submit and close texts are the core's Send
/// and Cancel in `locale`.
pub fn own_words_modal(
    callback_id: &str,
    title: &str,
    label: &str,
    placeholder: Option<&str>,
    multiline: bool,
    private_metadata: &str,
    locale: Locale,
) -> SlackView {
    let mut input = SlackBlockPlainTextInputElement::new()
        .with_action_id(SlackActionId(ANSWER_ACTION_ID.to_owned()))
        .with_focus_on_load(true);
    if multiline {
        input = input.with_multiline(true);
    }
    if let Some(placeholder) = placeholder.map(str::trim).filter(|p| !p.is_empty()) {
        input =
            input.with_placeholder(plain(&cut(placeholder, MAX_PLACEHOLDER_CHARS, Unit::Utf16)));
    }
    let block = SlackInputBlock::new(plain(&fit(label, MAX_INPUT_LABEL_CHARS)), input.into())
        .with_block_id(SlackBlockId(ANSWER_BLOCK_ID.to_owned()));
    let mut modal = SlackModalView::new(
        plain(&fit(title, MAX_MODAL_TEXT_CHARS)),
        vec![SlackBlock::Input(block)],
    )
    .with_submit(plain(&fit(
        locale.strings().page_send,
        MAX_MODAL_TEXT_CHARS,
    )))
    .with_close(plain(&fit(locale.strings().cancel, MAX_MODAL_TEXT_CHARS)))
    .with_callback_id(SlackCallbackId(callback_id.to_owned()));
    if !private_metadata.is_empty()
        && Unit::Utf16.len(private_metadata) <= MAX_PRIVATE_METADATA_CHARS
    {
        modal = modal.with_private_metadata(private_metadata.to_owned());
    }
    SlackView::Modal(modal)
}

/// Escapes text for Slack's `mrkdwn`: `&` → `&amp;`, `<` → `&lt;`,
/// `>` → `&gt;` (the three characters Slack's formatting reserves), so
/// nothing in it is read as a mention, a channel link or a URL.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            c => out.push(c),
        }
    }
    out
}

/// The selection element of a multi-select step.
enum Selection {
    Checkboxes(SlackBlockCheckboxesElement),
    Menu(SlackBlockMultiStaticSelectElement),
}

/// The checkboxes or menu of a multi-select step, under its Done key;
/// `None` when the step has no usable Done key or no options.
fn selection(step: &Step, selected: &[usize], options: &[StepOption]) -> Option<Selection> {
    let key = done_key(step)?;
    let mut seen = HashSet::new();
    let options: Vec<&StepOption> = options
        .iter()
        .filter(|option| seen.insert(option.index))
        .take(MAX_SELECT_OPTIONS)
        .collect();
    if options.is_empty() {
        return None;
    }
    let action_id = SlackActionId(key.to_owned());
    let checked = |option: &&&StepOption| selected.contains(&option.index);
    if options.len() <= MAX_CHECKBOX_OPTIONS {
        let item = |option: &&StepOption| {
            let mut item = SlackBlockChoiceItem::new(
                SlackBlockText::Plain(plain_text(&fit(&option.label, MAX_OPTION_TEXT_CHARS))),
                option.index.to_string(),
            );
            if let Some(description) = description(option) {
                item = item.with_description(plain(&description));
            }
            item
        };
        let initial: Vec<_> = options.iter().filter(checked).map(item).collect();
        let mut element = SlackBlockCheckboxesElement::new(options.iter().map(item).collect())
            .with_action_id(action_id);
        if !initial.is_empty() {
            element = element.with_initial_options(initial);
        }
        Some(Selection::Checkboxes(element))
    } else {
        let item = |option: &&StepOption| {
            let mut item = SlackBlockChoiceItem::new(
                plain(&fit(&option.label, MAX_OPTION_TEXT_CHARS)),
                option.index.to_string(),
            );
            if let Some(description) = description(option) {
                item = item.with_description(plain(&description));
            }
            item
        };
        let initial: Vec<_> = options.iter().filter(checked).map(item).collect();
        let mut element = SlackBlockMultiStaticSelectElement::new()
            .with_action_id(action_id)
            .with_options(options.iter().map(item).collect());
        if !initial.is_empty() {
            element = element.with_initial_options(initial);
        }
        Some(Selection::Menu(element))
    }
}

/// The step's Done key, when it is one Slack takes as an `action_id`.
fn done_key(step: &Step) -> Option<&str> {
    step.rows
        .iter()
        .flatten()
        .find(|b| b.action == OptionRef::Done)
        .map(|b| b.key.as_str())
        .filter(|key| valid_action_id(key))
}

fn description(option: &StepOption) -> Option<String> {
    option
        .description
        .as_deref()
        .map(str::trim)
        .filter(|d| !d.is_empty())
        .map(|d| cut(d, MAX_OPTION_TEXT_CHARS, Unit::Utf16))
}

/// The controls of a multi-select step (everything but the toggle
/// buttons), Submit (Done) first.
fn step_controls(step: &Step, max_blocks: usize) -> Vec<SlackBlock> {
    let mut controls: Vec<Button> = step
        .rows
        .iter()
        .flatten()
        .filter(|b| !matches!(b.action, OptionRef::Index(_)))
        .cloned()
        .collect();
    controls.sort_by_key(|b| b.action != OptionRef::Done);
    actions_blocks(std::iter::once(controls.as_slice()), max_blocks)
}

/// Button rows as actions blocks: at most 25 buttons a block (longer rows
/// are wrapped), at most `max_blocks` blocks (the rest is dropped), no
/// empty blocks, no button whose key Slack would refuse or that repeats an
/// earlier key.
fn actions_blocks<'a>(
    rows: impl Iterator<Item = &'a [Button]>,
    max_blocks: usize,
) -> Vec<SlackBlock> {
    let mut seen = HashSet::new();
    let mut out = Vec::new();
    for row in rows {
        let buttons: Vec<SlackActionBlockElement> = row
            .iter()
            .filter(|b| valid_action_id(&b.key) && seen.insert(b.key.as_str()))
            .map(|b| SlackActionBlockElement::Button(button(b)))
            .collect();
        let mut buttons = buttons.into_iter().peekable();
        while buttons.peek().is_some() {
            out.push(SlackBlock::Actions(SlackActionsBlock::new(
                buttons.by_ref().take(MAX_ACTIONS_ELEMENTS).collect(),
            )));
        }
    }
    out.truncate(max_blocks);
    out
}

/// One button: the key as `action_id` and as `value` (opaque, never
/// content).
fn button(b: &Button) -> SlackBlockButtonElement {
    let element = SlackBlockButtonElement::new(plain(&fit(&b.label, MAX_BUTTON_TEXT_CHARS)))
        .with_action_id(SlackActionId(b.key.clone()))
        .with_value(b.key.clone());
    match b.style {
        ButtonStyle::Primary => element.with_style(SlackBlockButtonStyle::Primary),
        ButtonStyle::Normal | ButtonStyle::Secondary => element,
    }
}

/// `text` as mrkdwn sections, each at most 3,000 characters once escaped.
fn sections(text: &str) -> Vec<SlackBlock> {
    wrapped_sections(text, 0, |escaped| escaped)
}

/// `text` as preformatted mrkdwn sections: each part fenced (```), a
/// fence inside broken with a zero-width space so it cannot end the block.
fn code_sections(text: &str) -> Vec<SlackBlock> {
    const FENCES: usize = 8;
    wrapped_sections(text, FENCES, |escaped| {
        format!("```\n{}\n```", escaped.replace("```", "`\u{200b}``"))
    })
}

/// `text` as mrkdwn sections of `wrap`ped, escaped parts, each at most
/// 3,000 characters; `overhead` is what `wrap` adds.
fn wrapped_sections(
    text: &str,
    overhead: usize,
    wrap: impl Fn(String) -> String,
) -> Vec<SlackBlock> {
    let mut out = Vec::new();
    let mut pending: Vec<String> = split_message(text, MAX_SECTION_CHARS - overhead, Unit::Utf16);
    pending.reverse();
    while let Some(part) = pending.pop() {
        let escaped = wrap(escape(&part));
        let len = Unit::Utf16.len(&part);
        if Unit::Utf16.len(&escaped) <= MAX_SECTION_CHARS || len <= 1 {
            out.push(section(escaped));
            continue;
        }
        // Escaping made it too long: split the part again, smaller.
        let mut pieces = split_message(&part, len.div_ceil(2), Unit::Utf16);
        pieces.reverse();
        pending.extend(pieces);
    }
    if out.is_empty() {
        out.push(section(EMPTY_TEXT.to_owned()));
    }
    out
}

fn section(escaped: String) -> SlackBlock {
    SlackBlock::Section(SlackSectionBlock::new().with_text(SlackBlockText::MarkDown(
        SlackBlockMarkDownText::new(escaped).with_verbatim(true),
    )))
}

/// Text blocks then controls, at most 50 in all (controls are dropped
/// first, one block of them is always kept), each with a `block_id` unique in the message
/// and new whenever the block changes: its position and a hash of its
/// content (Slack asks for new ids when a message is updated, so no input
/// state of an old block is carried over to a different one).
fn assemble(mut text: Vec<SlackBlock>, mut controls: Vec<SlackBlock>) -> Vec<SlackBlock> {
    let room = if controls.is_empty() {
        MAX_BLOCKS
    } else {
        MAX_BLOCKS - 1
    };
    text.truncate(room);
    controls.truncate(MAX_BLOCKS - text.len());
    let mut blocks = text;
    blocks.append(&mut controls);
    for (position, block) in blocks.iter_mut().enumerate() {
        let hash = serde_json::to_string(&*block)
            .map(|json| fnv1a(json.as_bytes()))
            .unwrap_or_default();
        let id = Some(SlackBlockId(format!("ab{position}-{hash:08x}")));
        match block {
            SlackBlock::Section(section) => section.block_id = id,
            SlackBlock::Actions(actions) => actions.block_id = id,
            _ => {}
        }
    }
    blocks
}

/// 32-bit FNV-1a: a small, stable content hash for block ids.
fn fnv1a(bytes: &[u8]) -> u32 {
    bytes.iter().fold(0x811c_9dc5, |hash, &byte| {
        (hash ^ u32::from(byte)).wrapping_mul(0x0100_0193)
    })
}

fn valid_action_id(key: &str) -> bool {
    !key.is_empty() && Unit::Utf16.len(key) <= MAX_ACTION_ID_CHARS
}

fn plain_text(text: &str) -> SlackBlockPlainText {
    SlackBlockPlainText::new(text.to_owned()).with_emoji(true)
}

fn plain(text: &str) -> SlackBlockPlainTextOnly {
    plain_text(text).into()
}

/// `text` trimmed within `max` characters, never blank.
fn fit(text: &str, max: usize) -> String {
    let text = text.trim();
    if text.is_empty() {
        EMPTY_TEXT.to_owned()
    } else {
        cut(text, max, Unit::Utf16)
    }
}

/// `text` without trailing whitespace, never blank (leading indentation is
/// kept).
fn non_blank(text: &str) -> String {
    let text = text.trim_end();
    if text.trim().is_empty() {
        EMPTY_TEXT.to_owned()
    } else {
        text.to_owned()
    }
}

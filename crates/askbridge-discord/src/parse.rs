//! Discord events as askbridge events: a button press or select, a modal
//! submit, a typed message, askbridge's `/askbridge` slash command, with
//! who sent it and where. Pure.
//!
//! Input is serenity's own models, as the gateway delivers them
//! (`INTERACTION_CREATE`, `MESSAGE_CREATE`) or as an HTTP interaction body
//! reads ([`http_interaction`]). Only what askbridge acts on is kept:
//! component and modal interactions, its own command, and text messages from people (not
//! bots, webhooks or system messages) that are ordinary messages or
//! replies. Anything else is `None`.

use askbridge_core::failure::BadRequest;
use askbridge_core::inbound::{self, Inbound, Person};
use askbridge_core::model::{ChannelKind, Place, Responder};
use askbridge_core::render::{CallbackRef, parse_callback_key};
use serenity::model::application::{
    ActionRowComponent, ComponentInteraction, ComponentInteractionDataKind, Interaction,
    ModalInteraction,
};
use serenity::model::channel::{Message, MessageReferenceKind, MessageType};
use serenity::model::guild::{Member, PartialMember};
use serenity::model::id::{ChannelId, GuildId, InteractionId, MessageId, RoleId, UserId};
use serenity::model::user::User;

/// Someone who pressed, submitted or wrote.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sender {
    /// Their user id.
    pub id: UserId,
    /// Their unique username.
    pub username: String,
    /// What Discord shows for them: the server nickname, else the global
    /// display name.
    pub display_name: Option<String>,
    /// Their roles in the server (empty in DMs).
    pub roles: Vec<RoleId>,
    /// The account is a bot.
    pub bot: bool,
}

impl Sender {
    fn of(user: &User, nick: Option<&str>, roles: &[RoleId]) -> Sender {
        let named = |name: Option<&str>| {
            name.map(str::trim)
                .filter(|n| !n.is_empty())
                .map(str::to_owned)
        };
        Sender {
            id: user.id,
            username: user.name.clone(),
            display_name: named(nick).or_else(|| named(user.global_name.as_deref())),
            roles: roles.to_vec(),
            bot: user.bot,
        }
    }

    fn of_member(member: &Member) -> Sender {
        Sender::of(&member.user, member.nick.as_deref(), &member.roles)
    }

    /// The sender as the core's person: the responder, the username and
    /// the role ids.
    pub fn person(&self) -> Person {
        Person {
            responder: self.responder(),
            username: Some(self.username.clone()),
            roles: self
                .roles
                .iter()
                .map(|role| role.get().to_string())
                .collect(),
        }
    }

    /// The sender as the core's responder: the snowflake in decimal, the
    /// display name else the username.
    pub fn responder(&self) -> Responder {
        Responder {
            channel: ChannelKind::Discord,
            user_id: self.id.get().to_string(),
            name: self
                .display_name
                .clone()
                .or_else(|| Some(self.username.clone()))
                .filter(|name| !name.trim().is_empty()),
            place: None,
        }
    }
}

/// The interaction to answer, by its id and token. The token is a secret
/// for 15 minutes (it can post in the channel): `Debug` never shows it.
#[derive(Clone, PartialEq, Eq)]
pub struct InteractionRef {
    /// The interaction id.
    pub id: InteractionId,
    /// The interaction token.
    pub token: String,
}

impl std::fmt::Debug for InteractionRef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("InteractionRef")
            .field("id", &self.id)
            .field("token", &"[redacted]")
            .finish()
    }
}

/// What happened.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Event {
    /// A button was pressed or a select menu chosen from.
    Press(Press),
    /// A modal was submitted.
    Submit(Submit),
    /// A text message was sent.
    Text(TextMessage),
    /// askbridge's slash command ([`COMMAND`]) was used.
    Command(Command),
}

/// The name of askbridge's slash command: `/askbridge` tells the person
/// the targets for where they used it.
pub const COMMAND: &str = "askbridge";

/// askbridge's slash command (`APPLICATION_COMMAND`). Answer it within 3
/// seconds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Command {
    /// The interaction to answer.
    pub interaction: InteractionRef,
    /// Where it was used.
    pub channel_id: ChannelId,
    /// The server, `None` in DMs.
    pub guild_id: Option<GuildId>,
    /// Who used it.
    pub from: Sender,
}

/// A button press or a string select (`MESSAGE_COMPONENT`). Answer it
/// within 3 seconds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Press {
    /// The interaction to answer.
    pub interaction: InteractionRef,
    /// The component's key, when it is one of askbridge's and readable.
    pub button: Option<CallbackRef>,
    /// A string select's chosen values as option indices, in Discord's
    /// order; `None` for a button.
    pub values: Option<Vec<usize>>,
    /// The channel (or thread) of the message.
    pub channel_id: ChannelId,
    /// The message the component is on.
    pub message_id: Option<MessageId>,
    /// The server, `None` in DMs.
    pub guild_id: Option<GuildId>,
    /// Who pressed.
    pub from: Sender,
}

/// A modal submit (`MODAL_SUBMIT`). Answer it within 3 seconds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Submit {
    /// The interaction to answer.
    pub interaction: InteractionRef,
    /// The modal's key (the Other… / Answer… button's), when it is one of
    /// askbridge's.
    pub key: Option<CallbackRef>,
    /// The first text input's value (empty if there is none).
    pub text: String,
    /// The channel the modal was opened in.
    pub channel_id: ChannelId,
    /// The message whose button opened the modal, when Discord says.
    pub message_id: Option<MessageId>,
    /// The server, `None` in DMs.
    pub guild_id: Option<GuildId>,
    /// Who submitted.
    pub from: Sender,
}

/// A text message from a person.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TextMessage {
    /// Where it was sent (a thread is a channel of its own).
    pub channel_id: ChannelId,
    /// Its message id.
    pub message_id: MessageId,
    /// The server, `None` in DMs.
    pub guild_id: Option<GuildId>,
    /// The message it replies to, if it is a reply.
    pub reply_to: Option<MessageId>,
    /// Who sent it.
    pub from: Sender,
    /// The text, without a leading mention of the bot; never blank.
    pub text: String,
}

/// An interaction as the HTTP interactions endpoint receives it.
// One per request, matched at once: not worth a box.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HttpInteraction {
    /// Discord checking the endpoint: answer with `PONG` (type 1).
    Ping,
    /// Anything else, read as for the gateway (`None`: not acted on).
    Event(Option<Event>),
}

/// An event in the core's vocabulary: a press or modal submission
/// (answered through its interaction), or a typed message — a DM's filed
/// under its user, since a DM channel's id is Discord's to choose.
pub fn inbound(event: Event) -> Inbound<ChannelId, MessageId, InteractionRef> {
    match event {
        Event::Press(press) => Inbound::Press(inbound::Press {
            reply: press.interaction,
            button: press.button,
            chosen: press.values,
            chat: Some(press.channel_id),
            message: press.message_id,
            from: press.from.person(),
        }),
        Event::Submit(submit) => Inbound::Submission(inbound::Submission {
            reply: submit.interaction,
            key: submit.key,
            chat: submit.channel_id,
            text: submit.text,
            from: submit.from.person(),
        }),
        Event::Command(command) => Inbound::Command(inbound::Command {
            reply: command.interaction,
            place: place(command.guild_id, command.channel_id, &command.from),
            chat: command.channel_id,
            from: command.from.person(),
        }),
        Event::Text(message) => Inbound::Typed(inbound::Typed {
            place: place(message.guild_id, message.channel_id, &message.from),
            chat: message.channel_id,
            message: message.message_id,
            reply_to: message.reply_to,
            text: message.text,
            from: message.from.person(),
        }),
    }
}

/// The place asks for a conversation are posted to: a server channel
/// itself, a DM under its user (a DM channel's id is Discord's to choose).
fn place(guild_id: Option<GuildId>, channel_id: ChannelId, from: &Sender) -> Place {
    match guild_id {
        Some(_) => Place::DiscordChannel {
            channel_id: channel_id.get(),
        },
        None => Place::DiscordUser {
            user_id: from.id.get(),
        },
    }
}

/// Reads an interaction; `None` for anything askbridge does not act on
/// (pings, other commands, autocomplete).
pub fn interaction(interaction: &Interaction) -> Option<Event> {
    match interaction {
        Interaction::Component(component) => Some(Event::Press(press(component))),
        Interaction::Modal(modal) => Some(Event::Submit(submit(modal))),
        Interaction::Command(command) if command.data.name == COMMAND => {
            Some(Event::Command(Command {
                interaction: InteractionRef {
                    id: command.id,
                    token: command.token.clone(),
                },
                channel_id: command.channel_id,
                guild_id: command.guild_id,
                from: interaction_sender(command.member.as_deref(), &command.user),
            }))
        }
        _ => None,
    }
}

/// Reads the body of an HTTP interaction (after its signature was checked
/// with [`crate::run::Verifier`]).
pub fn http_interaction(body: &[u8]) -> Result<HttpInteraction, BadRequest> {
    let parsed: Interaction = serde_json::from_slice(body)
        .map_err(|error| format!("unreadable Discord interaction: {error}"))?;
    Ok(match &parsed {
        Interaction::Ping(_) => HttpInteraction::Ping,
        other => HttpInteraction::Event(interaction(other)),
    })
}

/// Reads a `MESSAGE_CREATE`; `None` unless it is an ordinary message or a
/// reply from a person with some text. `bot_id` is askbridge's own bot,
/// whose leading mention (`<@id>` or `<@!id>`) is taken off the text.
pub fn message(message: &Message, bot_id: UserId) -> Option<TextMessage> {
    let author = &message.author;
    if author.bot || author.system || author.id == bot_id || message.webhook_id.is_some() {
        return None;
    }
    let reply_to = match message.kind {
        MessageType::Regular => None,
        MessageType::InlineReply => message
            .message_reference
            .as_ref()
            .filter(|reference| reference.kind == MessageReferenceKind::Default)
            .and_then(|reference| reference.message_id)
            .or_else(|| message.referenced_message.as_ref().map(|m| m.id)),
        _ => return None,
    };
    let text = clean_text(&message.content, bot_id, &message.mentions);
    let text = text.trim();
    if text.is_empty() {
        return None;
    }
    let member: Option<&PartialMember> = message.member.as_deref();
    Some(TextMessage {
        channel_id: message.channel_id,
        message_id: message.id,
        guild_id: message.guild_id,
        reply_to,
        from: Sender::of(
            author,
            member.and_then(|m| m.nick.as_deref()),
            member.map(|m| m.roles.as_slice()).unwrap_or_default(),
        ),
        text: text.to_owned(),
    })
}

fn press(component: &ComponentInteraction) -> Press {
    let key = parse_callback_key(&component.data.custom_id);
    let (button, values) = match &component.data.kind {
        ComponentInteractionDataKind::Button => (key, None),
        ComponentInteractionDataKind::StringSelect { values } => match indices(values) {
            Some(values) => (key, Some(values)),
            None => (None, None),
        },
        // Not a component askbridge draws.
        _ => (None, None),
    };
    Press {
        interaction: InteractionRef {
            id: component.id,
            token: component.token.clone(),
        },
        button,
        values,
        channel_id: component.channel_id,
        message_id: Some(component.message.id),
        guild_id: component.guild_id,
        from: interaction_sender(component.member.as_ref(), &component.user),
    }
}

fn submit(modal: &ModalInteraction) -> Submit {
    let text = modal
        .data
        .components
        .iter()
        .flat_map(|row| &row.components)
        .find_map(|component| match component {
            ActionRowComponent::InputText(input) => Some(input.value.clone().unwrap_or_default()),
            _ => None,
        })
        .unwrap_or_default();
    Submit {
        interaction: InteractionRef {
            id: modal.id,
            token: modal.token.clone(),
        },
        key: parse_callback_key(&modal.data.custom_id),
        text,
        channel_id: modal.channel_id,
        message_id: modal.message.as_ref().map(|m| m.id),
        guild_id: modal.guild_id,
        from: interaction_sender(modal.member.as_ref(), &modal.user),
    }
}

/// In a server Discord sends `member` (with its user); in a DM, `user`.
fn interaction_sender(member: Option<&Member>, user: &User) -> Sender {
    match member {
        Some(member) => Sender::of_member(member),
        None => Sender::of(user, None, &[]),
    }
}

/// Select values as option indices (the decimal strings askbridge puts in
/// `value`); `None` if any is something else.
fn indices(values: &[String]) -> Option<Vec<usize>> {
    values
        .iter()
        .map(|value| {
            let digits =
                !value.is_empty() && value.len() <= 4 && value.bytes().all(|b| b.is_ascii_digit());
            digits.then(|| value.parse().ok()).flatten()
        })
        .collect()
}

/// A message's text without Discord's markup: the bot's mention (`<@id>`,
/// `<@!id>`) is dropped, another person's becomes `@username` (from the
/// message's `mentions`, else `@id`); role and channel mentions (`<@&id>`,
/// `<#id>`) are dropped; custom emoji (`<:name:id>`, `<a:name:id>`) become
/// `:name:`. Anything else between `<` and `>` stays as typed.
pub fn clean_text(text: &str, bot_id: UserId, mentions: &[User]) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find('<') {
        out.push_str(&rest[..start]);
        let after = &rest[start + 1..];
        match after
            .find('>')
            .and_then(|end| Some((end, markup(&after[..end], bot_id, mentions)?)))
        {
            Some((end, plain)) => {
                out.push_str(&plain);
                rest = &after[end + 1..];
            }
            None => {
                out.push('<');
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

/// One `<…>` of Discord's markup as plain text; `None` when it is not
/// markup.
fn markup(inner: &str, bot_id: UserId, mentions: &[User]) -> Option<String> {
    let snowflake = |id: &str| !id.is_empty() && id.bytes().all(|b| b.is_ascii_digit());
    if let Some(role) = inner.strip_prefix("@&") {
        return snowflake(role).then(String::new);
    }
    if let Some(user) = inner.strip_prefix("@!").or_else(|| inner.strip_prefix('@')) {
        if !snowflake(user) {
            return None;
        }
        if user == bot_id.get().to_string() {
            return Some(String::new());
        }
        let named = mentions
            .iter()
            .find(|mentioned| mentioned.id.get().to_string() == user)
            .map_or(user, |mentioned| mentioned.name.as_str());
        return Some(format!("@{named}"));
    }
    if let Some(channel) = inner.strip_prefix('#') {
        return snowflake(channel).then(String::new);
    }
    let emoji = inner
        .strip_prefix("a:")
        .or_else(|| inner.strip_prefix(':'))?;
    let (name, id) = emoji.split_once(':')?;
    (!name.is_empty() && snowflake(id)).then(|| format!(":{name}:"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn user(id: u64, name: &str) -> User {
        let mut user = User::default();
        user.id = UserId::new(id);
        user.name = name.to_owned();
        user
    }

    #[test]
    fn markup_becomes_plain_text() {
        let bot = UserId::new(42);
        let mentioned = [user(7, "alice")];
        for (content, plain) in [
            ("<@42> 2", " 2"),
            ("<@!42> yes", " yes"),
            ("<@7> prod", "@alice prod"),
            ("ask <@8> first", "ask @8 first"),
            ("<@&9> <#10> 1", "  1"),
            ("<:party:998877> yes", ":party: yes"),
            ("<a:wave:1> hi", ":wave: hi"),
            ("a <b> c", "a <b> c"),
            ("1 < 2 > 0", "1 < 2 > 0"),
            ("<@42", "<@42"),
            ("R&amp;D", "R&amp;D"),
        ] {
            assert_eq!(clean_text(content, bot, &mentioned), plain, "{content}");
        }
    }
}

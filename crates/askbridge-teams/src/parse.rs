//! Bot Framework activities as what a person did. Pure: reads an
//! activity's JSON (as the Bot Connector posted it) and nothing else.
//!
//! - An `invoke` named `adaptiveCard/action` whose `verb` is askbridge's is
//!   a press: the action's callback key, and the card's inputs Teams sent
//!   with it — the own-words field's text, a choice set's options.
//! - A `message` is typed text, the bot's `<at>…</at>` mention taken off.
//!   A message in a channel thread (`conversation.id` ending in
//!   `;messageid=<root>`) answers the thread's first message; `@askbridge
//!   where` is askbridge's command.
//!
//! The bot's own activities and every other type (`conversationUpdate`,
//! `messageReaction`, `typing`, …) are nothing a person answers with.
//!
//! A person is their AAD object id (what targets and `allowed_users` name),
//! else their Teams user id (`29:…`).

use askbridge_core::inbound::{self, Inbound, Person};
use askbridge_core::model::{ChannelKind, Place, Responder};
use askbridge_core::render::{CallbackRef, parse_callback_key};
use serde_json::Value;

use crate::render::{CHOICE_INPUT, KEY, TEXT_INPUT, VERB};

/// The name of the invoke a card's `Action.Execute` sends.
pub const CARD_ACTION: &str = "adaptiveCard/action";

/// One activity, read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Activity {
    /// The activity's id: a delivery of it again has the same.
    pub id: String,
    /// Where replies to it go (`serviceUrl`).
    pub service_url: String,
    /// The conversation.
    pub conversation: Conversation,
    /// The tenant, when Teams says.
    pub tenant: Option<String>,
    /// Who sent it: their AAD object id, else their Teams id.
    pub sender: String,
    /// Their Teams id (`29:…`), what a conversation with them is opened
    /// for.
    pub teams_id: String,
    /// Their display name.
    pub name: Option<String>,
    /// The bot, as Teams addresses it (`recipient.id`: `28:<app id>`).
    pub bot: Option<String>,
    /// What it is.
    pub event: Event,
}

/// A conversation as an activity names it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Conversation {
    /// The conversation's id without a thread (`19:…@thread.tacv2`).
    pub id: String,
    /// The thread's first message, for a message in a channel thread.
    pub thread: Option<String>,
    /// A personal chat between the bot and the sender.
    pub personal: bool,
}

/// What an activity does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Event {
    /// A card's action: its callback key (`None`: not one of askbridge's),
    /// the card's activity, and the inputs sent with it.
    Action {
        /// The action's callback key.
        key: Option<CallbackRef>,
        /// The card's activity id (`replyToId`).
        card: Option<String>,
        /// The own-words field's text, when not blank.
        text: Option<String>,
        /// A choice set's options, when the card has one.
        chosen: Option<Vec<usize>>,
    },
    /// Typed text.
    Text {
        /// The message it answers: its thread's first message.
        reply_to: Option<String>,
        /// The text, the bot's mention taken off.
        text: String,
    },
}

/// Why an activity is not read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct BadActivity(pub String);

/// Reads one activity; `Ok(None)` for one nobody answers with (the bot's
/// own, a `conversationUpdate`, an invoke of another kind).
pub fn activity(raw: &Value, bot_id: Option<&str>) -> Result<Option<Activity>, BadActivity> {
    let field = |name: &str| {
        raw[name]
            .as_str()
            .filter(|value| !value.is_empty())
            .ok_or_else(|| BadActivity(format!("the activity has no {name}")))
    };
    let kind = field("type")?;
    let from = &raw["from"];
    let from_id = from["id"].as_str().unwrap_or_default();
    let to_self = raw["recipient"]["id"].as_str() == Some(from_id);
    if bot_id.is_some_and(|bot| bot == from_id) || to_self || from["role"] == "bot" {
        return Ok(None);
    }
    let event = match kind {
        "invoke" if raw["name"] == CARD_ACTION => match action(raw) {
            Some(event) => event,
            None => return Ok(None),
        },
        "message" => match text(raw) {
            Some(event) => event,
            None => return Ok(None),
        },
        _ => return Ok(None),
    };
    let conversation_id = raw["conversation"]["id"]
        .as_str()
        .filter(|id| !id.is_empty())
        .ok_or_else(|| BadActivity("the activity has no conversation.id".to_owned()))?;
    let (id, thread) = match conversation_id.split_once(";messageid=") {
        Some((id, root)) => (
            id.to_owned(),
            Some(root.to_owned()).filter(|r| !r.is_empty()),
        ),
        None => (conversation_id.to_owned(), None),
    };
    // AAD object ids are GUIDs, read in lower case as targets are.
    let sender = match from["aadObjectId"].as_str().filter(|id| !id.is_empty()) {
        Some(aad_object_id) => aad_object_id.to_ascii_lowercase(),
        None => from_id.to_owned(),
    };
    if sender.is_empty() {
        return Err(BadActivity("the activity has no from.id".to_owned()));
    }
    let event = match event {
        Event::Text { text, reply_to } => Event::Text {
            reply_to: reply_to.or_else(|| thread.clone()),
            text,
        },
        action => action,
    };
    Ok(Some(Activity {
        id: field("id")?.to_owned(),
        service_url: field("serviceUrl")?.to_owned(),
        conversation: Conversation {
            id,
            thread,
            personal: raw["conversation"]["conversationType"] == "personal",
        },
        tenant: raw["conversation"]["tenantId"]
            .as_str()
            .or_else(|| raw["channelData"]["tenant"]["id"].as_str())
            .map(str::to_owned),
        sender,
        teams_id: from_id.to_owned(),
        bot: raw["recipient"]["id"].as_str().map(str::to_owned),
        name: from["name"]
            .as_str()
            .filter(|n| !n.is_empty())
            .map(str::to_owned),
        event,
    }))
}

/// A card action of askbridge's: its key and inputs.
fn action(raw: &Value) -> Option<Event> {
    let action = &raw["value"]["action"];
    if action["verb"] != VERB {
        return None;
    }
    let data = &action["data"];
    let text = data[TEXT_INPUT]
        .as_str()
        .map(str::trim)
        .filter(|text| !text.is_empty())
        .map(str::to_owned);
    let chosen = data[CHOICE_INPUT].as_str().map(|value| {
        value
            .split(',')
            .filter_map(|index| index.trim().parse().ok())
            .collect()
    });
    Some(Event::Action {
        key: data[KEY].as_str().and_then(parse_callback_key),
        card: raw["replyToId"].as_str().map(str::to_owned),
        text,
        chosen,
    })
}

/// A message's text, the bot's mention taken off; `@bot where` is the
/// command.
fn text(raw: &Value) -> Option<Event> {
    let body = raw["text"].as_str()?;
    let (text, mentioned) = without_mention(body, raw);
    let text = match (mentioned, text.eq_ignore_ascii_case("where")) {
        (true, true) => "/askbridge".to_owned(),
        _ => text,
    };
    (!text.is_empty()).then_some(Event::Text {
        reply_to: None,
        text,
    })
}

/// The text without the mentions of the bot (`<at>Name</at>`, as the
/// activity's `mention` entities for the recipient say), and whether it
/// had one. Other people's mentions keep their names.
fn without_mention(body: &str, raw: &Value) -> (String, bool) {
    let bot = raw["recipient"]["id"].as_str();
    let mut text = body.to_owned();
    let mut mentioned = false;
    for entity in raw["entities"].as_array().into_iter().flatten() {
        if entity["type"] != "mention" {
            continue;
        }
        let Some(shown) = entity["text"].as_str() else {
            continue;
        };
        let of_bot = bot.is_some_and(|bot| entity["mentioned"]["id"] == bot);
        if of_bot && text.contains(shown) {
            text = text.replace(shown, " ");
            mentioned = true;
        }
    }
    // Whatever mention markup is left shows as the name it holds.
    let text = text.replace("<at>", "").replace("</at>", "");
    let text = text.replace("&nbsp;", " ");
    (
        text.split_whitespace().collect::<Vec<_>>().join(" "),
        mentioned,
    )
}

/// The activity in the core's vocabulary; `reply` answers a press.
pub fn inbound<R>(activity: Activity, reply: R) -> Inbound<String, String, R> {
    let from = person(&activity.sender, activity.name);
    match activity.event {
        Event::Action {
            key,
            card,
            text,
            chosen,
        } => match (key, text) {
            // The own-words field sent: its text answers the question.
            (Some(key), Some(text)) if key.option == askbridge_core::render::OptionRef::Other => {
                Inbound::Submission(inbound::Submission {
                    reply,
                    key: Some(key),
                    chat: activity.conversation.id,
                    text,
                    from,
                })
            }
            (key, _) => Inbound::Press(inbound::Press {
                reply,
                button: key,
                chosen,
                chat: Some(activity.conversation.id),
                message: card,
                from,
            }),
        },
        Event::Text { reply_to, text } => Inbound::Typed(inbound::Typed {
            place: match activity.conversation.personal {
                true => Place::TeamsUser {
                    aad_object_id: activity.sender,
                },
                false => Place::Teams {
                    conversation: activity.conversation.id.clone(),
                },
            },
            chat: activity.conversation.id,
            message: activity.id,
            reply_to,
            text,
            from,
        }),
    }
}

/// A Teams user as a person: their id (AAD object id, else Teams id).
pub fn person(user_id: &str, name: Option<String>) -> Person {
    Person {
        responder: Responder {
            channel: ChannelKind::Teams,
            user_id: user_id.to_owned(),
            name,
            place: None,
        },
        username: None,
        roles: Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use askbridge_core::render::{OptionRef, callback_key};
    use serde_json::json;

    use super::*;

    const BOT: &str = "28:bot-app-id";

    fn message(text: &str, conversation: &str, kind: &str) -> Value {
        json!({
            "type": "message", "id": "1700000000001", "serviceUrl": "https://smba.example/amer/",
            "channelId": "msteams",
            "from": {"id": "29:alice", "name": "Alice", "aadObjectId": "00000000-0000-0000-0000-00000000a11c"},
            "recipient": {"id": BOT, "name": "askbridge"},
            "conversation": {"id": conversation, "conversationType": kind, "tenantId": "tenant-1"},
            "text": text,
            "entities": [{"type": "mention", "text": "<at>askbridge</at>",
                          "mentioned": {"id": BOT, "name": "askbridge"}}],
        })
    }

    fn invoke(data: Value) -> Value {
        json!({
            "type": "invoke", "name": CARD_ACTION, "id": "f:1", "serviceUrl": "https://smba.example/amer/",
            "from": {"id": "29:bob", "name": "Bob", "aadObjectId": "B0B"},
            "recipient": {"id": BOT},
            "conversation": {"id": "19:room@thread.v2", "conversationType": "groupChat"},
            "replyToId": "card-1",
            "value": {"action": {"type": "Action.Execute", "verb": VERB, "data": data}, "trigger": "manual"},
        })
    }

    fn read(raw: &Value) -> Activity {
        activity(raw, Some(BOT))
            .expect("readable")
            .expect("an event")
    }

    #[test]
    fn a_message_loses_the_bots_mention_and_knows_its_thread() {
        let typed = read(&message(
            "<at>askbridge</at> 2, <at>Carol</at>",
            "19:c@thread.tacv2;messageid=177",
            "channel",
        ));
        assert_eq!(typed.sender, "00000000-0000-0000-0000-00000000a11c");
        assert_eq!(typed.conversation.id, "19:c@thread.tacv2");
        assert_eq!(typed.conversation.thread.as_deref(), Some("177"));
        assert_eq!(typed.tenant.as_deref(), Some("tenant-1"));
        assert_eq!(
            typed.event,
            Event::Text {
                reply_to: Some("177".to_owned()),
                text: "2, Carol".to_owned()
            }
        );
        let command = read(&message(
            "<at>askbridge</at> where",
            "a:personal",
            "personal",
        ));
        assert_eq!(
            command.event,
            Event::Text {
                reply_to: None,
                text: "/askbridge".to_owned()
            }
        );
        assert!(command.conversation.personal);
        let plain = read(&message("where", "a:personal", "personal"));
        assert_eq!(
            plain.event,
            Event::Text {
                reply_to: None,
                text: "where".to_owned()
            }
        );
    }

    #[test]
    fn a_card_action_carries_its_key_and_inputs() {
        let key = callback_key("k1", 0, OptionRef::Other);
        let pressed = read(&invoke(json!({KEY: key, TEXT_INPUT: "  blue-green "})));
        assert_eq!(pressed.sender, "b0b");
        let Event::Action {
            key,
            card,
            text,
            chosen,
        } = &pressed.event
        else {
            panic!("an action");
        };
        assert_eq!(key.as_ref().map(|k| k.option), Some(OptionRef::Other));
        assert_eq!(card.as_deref(), Some("card-1"));
        assert_eq!(text.as_deref(), Some("blue-green"));
        assert_eq!(*chosen, None);
        let Inbound::Submission(submission) = inbound(pressed, ()) else {
            panic!("own words");
        };
        assert_eq!(submission.text, "blue-green");

        let done = callback_key("k1", 1, OptionRef::Done);
        let pressed = read(&invoke(
            json!({KEY: done, CHOICE_INPUT: "0,2", TEXT_INPUT: ""}),
        ));
        let Inbound::Press(press) = inbound(pressed, ()) else {
            panic!("a press");
        };
        assert_eq!(press.chosen, Some(vec![0, 2]));
        assert_eq!(press.message.as_deref(), Some("card-1"));
        assert_eq!(press.button.map(|b| b.option), Some(OptionRef::Done));
    }

    #[test]
    fn nothing_to_answer_with() {
        let mut own = message("2", "a:1", "personal");
        own["from"] = json!({"id": BOT, "name": "askbridge"});
        assert_eq!(activity(&own, Some(BOT)), Ok(None));
        let update = json!({"type": "conversationUpdate", "id": "x", "serviceUrl": "s"});
        assert_eq!(activity(&update, Some(BOT)), Ok(None));
        let mut other_verb = invoke(json!({}));
        other_verb["value"]["action"]["verb"] = json!("someone-else");
        assert_eq!(activity(&other_verb, Some(BOT)), Ok(None));
        let mut blank = message("<at>askbridge</at>", "a:1", "personal");
        blank["id"] = json!("2");
        assert_eq!(activity(&blank, Some(BOT)), Ok(None));
        assert!(activity(&json!({"id": "1"}), Some(BOT)).is_err());
        let mut no_service = message("2", "a:1", "personal");
        no_service["serviceUrl"] = Value::Null;
        assert_eq!(
            activity(&no_service, Some(BOT)),
            Err(BadActivity("the activity has no serviceUrl".to_owned()))
        );
    }
}

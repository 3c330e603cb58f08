//! Room events as what a person did. Pure: reads an event's JSON (as the
//! homeserver sent it, decrypted when it was encrypted) and nothing else.
//!
//! - A poll response, in the unstable form Element sends
//!   (`org.matrix.msc3381.poll.response`, `answers`) or the stable one
//!   (`m.poll.response`, `m.selections`), is a vote: a press of the answer
//!   chosen, whose id is askbridge's callback key. A vote replaces the
//!   voter's earlier one, so a vote for options is the selection now
//!   (`chosen`: every option voted for, none for a vote for nothing).
//! - A text message (`m.text`, `m.emote`) is typed text. It answers the
//!   message it replies to (`m.in_reply_to`), else the root of its thread
//!   (`m.thread`), else nothing in particular. A reply's fallback quote
//!   (`> <@bot:hs> …`) and the bot's mention (its user id, or the display
//!   name Element writes before a colon) are taken off.
//! - A ⏭ reaction on one of askbridge's messages is a typed "skip" in
//!   reply to it; a ✅ reaction on a poll of options (a multi-select
//!   question in rich mode) sends the options voted for: a press of no
//!   key of askbridge's on that poll, which the driver reads as the
//!   step's Done.
//!
//! The bot's own events, edits, notices (other bots) and everything else
//! are ignored.

use askbridge_core::inbound::{self, Inbound, Person};
use askbridge_core::model::{ChannelKind, Place, Responder};
use askbridge_core::render::{CallbackRef, OptionRef, parse_callback_key};
use serde_json::Value;

/// The reaction that skips an ask.
pub const SKIP_REACTION: &str = "⏭";
/// The reaction that sends the options voted for in a poll of several.
pub const DONE_REACTION: &str = "✅";

/// Who the bot is, to ignore its own events and take its mention off.
#[derive(Debug, Clone, Copy)]
pub struct Bot<'a> {
    /// Its user id (`@askbridge:example.org`).
    pub user_id: &'a str,
    /// Its display name, if it has one.
    pub display_name: Option<&'a str>,
}

/// One event someone sent in a room.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Received {
    /// The event's id.
    pub event_id: String,
    /// Who sent it.
    pub sender: String,
    /// What it is.
    pub event: Event,
}

/// What an event does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Event {
    /// A vote in poll `poll` for these answer ids.
    Vote {
        /// The poll's event id.
        poll: String,
        /// The answers chosen.
        answers: Vec<String>,
    },
    /// A ✅ on this event (a poll): the options voted for are sent.
    Done {
        /// The event reacted to.
        target: String,
    },
    /// Typed text.
    Text {
        /// The message it answers: the one it replies to, else its
        /// thread's root.
        reply_to: Option<String>,
        /// The text, mention and reply fallback taken off.
        text: String,
    },
}

/// How a vote is answered: in the poll's thread, in its room.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Voted {
    /// The room.
    pub room: String,
    /// The poll.
    pub poll: String,
}

/// Reads one timeline event; `None` when it is nothing a person answers
/// with.
pub fn event(raw: &Value, bot: Bot<'_>) -> Option<Received> {
    let sender = raw["sender"].as_str()?;
    let event_id = raw["event_id"].as_str()?;
    if sender == bot.user_id {
        return None;
    }
    let content = &raw["content"];
    let event = match raw["type"].as_str()? {
        "org.matrix.msc3381.poll.response" | "m.poll.response" => vote(content)?,
        "m.reaction" => reaction(content)?,
        "m.room.message" => text(content, bot)?,
        _ => return None,
    };
    Some(Received {
        event_id: event_id.to_owned(),
        sender: sender.to_owned(),
        event,
    })
}

fn vote(content: &Value) -> Option<Event> {
    let relates = &content["m.relates_to"];
    if relates["rel_type"] != "m.reference" {
        return None;
    }
    let poll = relates["event_id"].as_str()?.to_owned();
    let chosen = content["org.matrix.msc3381.poll.response"]["answers"]
        .as_array()
        .or_else(|| content["m.selections"].as_array())?;
    let answers = chosen
        .iter()
        .filter_map(|answer| answer.as_str().map(str::to_owned))
        .collect();
    Some(Event::Vote { poll, answers })
}

fn reaction(content: &Value) -> Option<Event> {
    let relates = &content["m.relates_to"];
    if relates["rel_type"] != "m.annotation" {
        return None;
    }
    let target = relates["event_id"].as_str()?.to_owned();
    match relates["key"].as_str()?.trim_end_matches('\u{fe0f}') {
        SKIP_REACTION => Some(Event::Text {
            reply_to: Some(target),
            text: "skip".to_owned(),
        }),
        DONE_REACTION | "✔" | "☑" => Some(Event::Done { target }),
        _ => None,
    }
}

fn text(content: &Value, bot: Bot<'_>) -> Option<Event> {
    if !matches!(content["msgtype"].as_str()?, "m.text" | "m.emote") {
        return None;
    }
    let relates = &content["m.relates_to"];
    if relates["rel_type"] == "m.replace" {
        return None;
    }
    let body = content["body"].as_str()?;
    let in_reply_to = relates["m.in_reply_to"]["event_id"].as_str();
    let falling_back = relates["is_falling_back"].as_bool() == Some(true);
    let thread_root = match relates["rel_type"] == "m.thread" {
        true => relates["event_id"].as_str(),
        false => None,
    };
    let reply_to = match (in_reply_to, falling_back) {
        (Some(to), false) => Some(to),
        _ => thread_root,
    };
    let body = match in_reply_to {
        Some(_) => without_reply_fallback(body),
        None => body,
    };
    let text = without_mention(body, bot);
    (!text.is_empty()).then(|| Event::Text {
        reply_to: reply_to.map(str::to_owned),
        text,
    })
}

/// The body without the `> ` lines a reply starts with and the blank line
/// after them.
fn without_reply_fallback(body: &str) -> &str {
    if !body.starts_with("> ") {
        return body;
    }
    match body.split_once("\n\n") {
        Some((quote, rest)) if quote.lines().all(|line| line.starts_with('>')) => rest,
        _ => body,
    }
}

/// The text without the bot's mention: its user id anywhere, and its
/// display name (or localpart) before a colon or comma at the start, as
/// Element writes a mention pill into `body`.
fn without_mention(body: &str, bot: Bot<'_>) -> String {
    let text = body.replace(bot.user_id, " ");
    let mut text = text.trim();
    let localpart = bot
        .user_id
        .strip_prefix('@')
        .and_then(|id| id.split(':').next());
    for name in [bot.display_name, localpart].into_iter().flatten() {
        let starts = text
            .get(..name.len())
            .is_some_and(|head| head.eq_ignore_ascii_case(name));
        if starts && let Some(rest) = text[name.len()..].strip_prefix([':', ',']) {
            text = rest.trim_start();
            break;
        }
    }
    let text = text.trim_start_matches([':', ',']).trim();
    text.to_owned()
}

/// The event in the core's vocabulary, in room `room` (the direct chat
/// with its sender when `direct`), the sender known as `name`.
pub fn inbound(
    received: Received,
    room: &str,
    direct: bool,
    name: Option<String>,
) -> Inbound<String, String, Voted> {
    let from = person(&received.sender, name);
    let press = |poll: String, button: Option<CallbackRef>, chosen| {
        Inbound::Press(inbound::Press {
            reply: Voted {
                room: room.to_owned(),
                poll: poll.clone(),
            },
            button,
            chosen,
            chat: Some(room.to_owned()),
            message: Some(poll),
            from: from.clone(),
        })
    };
    match received.event {
        Event::Vote { poll, answers } => {
            let keys: Vec<CallbackRef> = answers
                .iter()
                .filter_map(|id| parse_callback_key(id))
                .collect();
            let chosen = chosen(&keys);
            press(poll, keys.into_iter().next(), chosen)
        }
        Event::Done { target } => press(target, None, None),
        Event::Text { reply_to, text } => Inbound::Typed(inbound::Typed {
            place: match direct {
                true => Place::MatrixUser {
                    user_id: received.sender,
                },
                false => Place::MatrixRoom {
                    room: room.to_owned(),
                },
            },
            chat: room.to_owned(),
            message: received.event_id,
            reply_to,
            text,
            from,
        }),
    }
}

/// What a vote chose, when it is options of one question: the selection
/// now (empty for a vote for nothing). `None` for a vote for a control
/// (Other…, Skip) and anything else.
fn chosen(keys: &[CallbackRef]) -> Option<Vec<usize>> {
    let first = keys.first();
    keys.iter()
        .map(|key| match key.option {
            OptionRef::Index(index)
                if first.is_some_and(|first| {
                    (&first.ask_key, first.question) == (&key.ask_key, key.question)
                }) =>
            {
                Some(index)
            }
            _ => None,
        })
        .collect()
}

/// A Matrix user as a person: their id, and as their username the id
/// without its `@` (the allow-list's `@name:server` entries name people).
pub fn person(user_id: &str, name: Option<String>) -> Person {
    Person {
        responder: Responder {
            channel: ChannelKind::Matrix,
            user_id: user_id.to_owned(),
            name,
            place: None,
        },
        username: user_id.strip_prefix('@').map(str::to_owned),
        roles: Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const BOT: Bot<'static> = Bot {
        user_id: "@askbridge:hs",
        display_name: Some("askbridge"),
    };

    fn read(event_type: &str, content: Value) -> Option<Event> {
        let raw = json!({
            "type": event_type,
            "sender": "@alice:hs",
            "event_id": "$e",
            "content": content,
        });
        event(&raw, BOT).map(|received| received.event)
    }

    fn typed(reply_to: Option<&str>, text: &str) -> Option<Event> {
        Some(Event::Text {
            reply_to: reply_to.map(str::to_owned),
            text: text.to_owned(),
        })
    }

    #[test]
    fn votes_in_both_forms() {
        let relates = json!({ "rel_type": "m.reference", "event_id": "$poll" });
        let vote = Some(Event::Vote {
            poll: "$poll".to_owned(),
            answers: vec!["k.0.1".to_owned()],
        });
        assert_eq!(
            read(
                "org.matrix.msc3381.poll.response",
                json!({ "m.relates_to": relates, "org.matrix.msc3381.poll.response": { "answers": ["k.0.1"] } })
            ),
            vote
        );
        assert_eq!(
            read(
                "m.poll.response",
                json!({ "m.relates_to": relates, "m.selections": ["k.0.1"] })
            ),
            vote
        );
        assert_eq!(
            read("m.poll.response", json!({ "m.selections": ["k.0.1"] })),
            None,
            "a response must refer to its poll"
        );
    }

    #[test]
    fn typed_text_by_table() {
        // (content, expected)
        let table = [
            (
                json!({ "msgtype": "m.text", "body": "2" }),
                typed(None, "2"),
            ),
            (
                json!({ "msgtype": "m.text", "body": "askbridge: Production" }),
                typed(None, "Production"),
            ),
            (
                json!({ "msgtype": "m.text", "body": "@askbridge:hs 2, 3" }),
                typed(None, "2, 3"),
            ),
            (
                json!({ "msgtype": "m.text", "body": "> <@askbridge:hs> Deploy where?\n> 1. Staging\n\nstaging",
                        "m.relates_to": { "m.in_reply_to": { "event_id": "$ask" } } }),
                typed(Some("$ask"), "staging"),
            ),
            (
                json!({ "msgtype": "m.text", "body": "the second",
                        "m.relates_to": { "rel_type": "m.thread", "event_id": "$poll", "is_falling_back": true,
                                          "m.in_reply_to": { "event_id": "$latest" } } }),
                typed(Some("$poll"), "the second"),
            ),
            (
                json!({ "msgtype": "m.text", "body": "mine",
                        "m.relates_to": { "rel_type": "m.thread", "event_id": "$poll", "is_falling_back": false,
                                          "m.in_reply_to": { "event_id": "$prompt" } } }),
                typed(Some("$prompt"), "mine"),
            ),
            (
                json!({ "msgtype": "m.text", "body": " * 3", "m.new_content": { "msgtype": "m.text", "body": "3" },
                        "m.relates_to": { "rel_type": "m.replace", "event_id": "$e0" } }),
                None,
            ),
            (json!({ "msgtype": "m.notice", "body": "2" }), None),
            (json!({ "msgtype": "m.image", "body": "x.png" }), None),
            (json!({ "msgtype": "m.text", "body": "askbridge:" }), None),
            (
                json!({ "msgtype": "m.text", "body": "> not a reply\n\nkept" }),
                typed(None, "> not a reply\n\nkept"),
            ),
        ];
        for (content, expected) in table {
            assert_eq!(
                read("m.room.message", content.clone()),
                expected,
                "{content}"
            );
        }
    }

    #[test]
    fn a_skip_reaction_is_a_typed_skip_in_reply() {
        for key in ["⏭", "⏭\u{fe0f}"] {
            let content = json!({ "m.relates_to": { "rel_type": "m.annotation", "event_id": "$poll", "key": key } });
            assert_eq!(read("m.reaction", content), typed(Some("$poll"), "skip"));
        }
        for key in ["✅", "✔\u{fe0f}", "☑\u{fe0f}"] {
            let content = json!({ "m.relates_to": { "rel_type": "m.annotation", "event_id": "$poll", "key": key } });
            assert_eq!(
                read("m.reaction", content),
                Some(Event::Done {
                    target: "$poll".to_owned()
                }),
                "{key}"
            );
        }
        let thumbs = json!({ "m.relates_to": { "rel_type": "m.annotation", "event_id": "$poll", "key": "👍" } });
        assert_eq!(read("m.reaction", thumbs), None);
    }

    #[test]
    fn a_vote_for_options_is_the_selection_now_and_a_done_names_its_poll() {
        use askbridge_core::render::callback_key;
        let press = |event: Event| {
            let received = Received {
                event_id: "$v".to_owned(),
                sender: "@alice:hs".to_owned(),
                event,
            };
            match inbound(received, "!r:hs", false, None) {
                Inbound::Press(press) => (press.button.map(|b| b.option), press.chosen),
                other => panic!("not a press: {other:?}"),
            }
        };
        let vote = |answers: Vec<String>| Event::Vote {
            poll: "$poll".to_owned(),
            answers,
        };
        let key = |question, option| callback_key("k1", question, option);
        // (answers, the press's key, chosen)
        let table = [
            (
                vec![key(1, OptionRef::Index(0)), key(1, OptionRef::Index(2))],
                Some(OptionRef::Index(0)),
                Some(vec![0, 2]),
            ),
            (
                vec![key(0, OptionRef::Index(1))],
                Some(OptionRef::Index(1)),
                Some(vec![1]),
            ),
            (vec![], None, Some(vec![])),
            (vec![key(0, OptionRef::Skip)], Some(OptionRef::Skip), None),
            (
                vec![key(0, OptionRef::Index(1)), key(1, OptionRef::Index(0))],
                Some(OptionRef::Index(1)),
                None,
            ),
        ];
        for (answers, option, chosen) in table {
            assert_eq!(
                press(vote(answers.clone())),
                (option, chosen),
                "{answers:?}"
            );
        }
        assert_eq!(
            press(Event::Done {
                target: "$poll".to_owned()
            }),
            (None, None)
        );
    }

    #[test]
    fn the_bots_own_events_and_others_are_ignored() {
        let own = json!({ "type": "m.room.message", "sender": "@askbridge:hs", "event_id": "$e",
                          "content": { "msgtype": "m.text", "body": "2" } });
        assert_eq!(event(&own, BOT), None);
        assert_eq!(read("m.room.member", json!({ "membership": "join" })), None);
        assert_eq!(event(&json!({ "type": "m.room.message" }), BOT), None);
    }

    #[test]
    fn inbound_places_a_direct_chat_under_its_sender() {
        let received = Received {
            event_id: "$e".to_owned(),
            sender: "@alice:hs".to_owned(),
            event: Event::Text {
                reply_to: None,
                text: "2".to_owned(),
            },
        };
        let Inbound::Typed(typed) = inbound(received.clone(), "!dm:hs", true, None) else {
            panic!("typed");
        };
        assert_eq!(
            typed.place,
            Place::MatrixUser {
                user_id: "@alice:hs".to_owned()
            }
        );
        assert_eq!(typed.from.username.as_deref(), Some("alice:hs"));
        let Inbound::Typed(typed) = inbound(received, "!r:hs", false, Some("Alice".to_owned()))
        else {
            panic!("typed");
        };
        assert_eq!(
            typed.place,
            Place::MatrixRoom {
                room: "!r:hs".to_owned()
            }
        );
        assert_eq!(typed.from.responder.name.as_deref(), Some("Alice"));

        let vote = Received {
            event_id: "$v".to_owned(),
            sender: "@bob:hs".to_owned(),
            event: Event::Vote {
                poll: "$poll".to_owned(),
                answers: vec![askbridge_core::render::callback_key(
                    "k1",
                    0,
                    askbridge_core::render::OptionRef::Index(1),
                )],
            },
        };
        let Inbound::Press(press) = inbound(vote, "!r:hs", false, None) else {
            panic!("press");
        };
        let button = press.button.expect("a callback key");
        assert_eq!(button.ask_key, "k1");
        assert_eq!(press.message.as_deref(), Some("$poll"));
        assert_eq!(
            press.reply,
            Voted {
                room: "!r:hs".to_owned(),
                poll: "$poll".to_owned()
            }
        );
    }
}

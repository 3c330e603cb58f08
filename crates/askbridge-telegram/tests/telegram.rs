//! The pure halves of the Telegram channel: drawing asks as `sendMessage`
//! payloads and reading Bot API updates (in the official JSON shapes).

#![allow(clippy::unwrap_used)]

use askbridge_core::model::Place;
use askbridge_core::normalize::normalize_json;
use askbridge_core::render::{Capabilities, Locale, Mode, OptionRef, context_blocks, view};
use askbridge_telegram::ChatRef;
use askbridge_telegram::parse::{Event, Update, parse};
use askbridge_telegram::render::{
    ask_messages, closed_text, context_message, own_words_prompt, reminder, reply_to,
};
use serde_json::{Value, json};

const ASK_ID: &str = "ask_0190c3a0e0007a5b8c9d0e1f2a3b4c5d";

fn chat() -> ChatRef {
    ChatRef {
        chat_id: -1_001_234,
        thread_id: Some(7),
    }
}

fn payloads(ask: Value, mode: Mode) -> Value {
    let ask = normalize_json(&ask).unwrap().ask;
    let caps = Capabilities::TELEGRAM.with_mode(mode);
    let drawn = view(&ask, ASK_ID, &caps, Locale::En);
    serde_json::to_value(ask_messages(&drawn, chat())).unwrap()
}

fn deploy() -> Value {
    json!({"questions": [{"id": "env", "header": "Deploy", "question": "Where?",
        "options": ["Staging (Recommended)", "Production"]}]})
}

#[test]
fn render_single_choice_is_one_message_with_an_inline_keyboard() {
    let sent = payloads(deploy(), Mode::Buttons);
    insta::assert_json_snapshot!(sent, @r#"
    [
      {
        "chat_id": -1001234,
        "text": "Deploy — Where?",
        "message_thread_id": 7,
        "reply_markup": {
          "inline_keyboard": [
            [
              {
                "text": "Staging ⭐",
                "callback_data": "ab1:ask_0190c3a0e0007a5b8c9d0e1f2a3b4c5d:0:0"
              }
            ],
            [
              {
                "text": "Production",
                "callback_data": "ab1:ask_0190c3a0e0007a5b8c9d0e1f2a3b4c5d:0:1"
              }
            ],
            [
              {
                "text": "Other…",
                "callback_data": "ab1:ask_0190c3a0e0007a5b8c9d0e1f2a3b4c5d:0:o"
              },
              {
                "text": "Skip",
                "callback_data": "ab1:ask_0190c3a0e0007a5b8c9d0e1f2a3b4c5d:0:s"
              }
            ]
          ]
        }
      }
    ]
    "#);
}

#[test]
fn render_callback_data_stays_within_64_bytes_and_carries_no_content() {
    let labels: Vec<String> = (0..25)
        .map(|i| format!("A rather long option label number {i}"))
        .collect();
    let sent = payloads(
        json!({"questions": [{"question": "Pick one", "options": labels}]}),
        Mode::Buttons,
    );
    let rows = sent[0]["reply_markup"]["inline_keyboard"]
        .as_array()
        .unwrap();
    assert_eq!(rows.len(), 26, "25 options, then Other… and Skip");
    for button in rows.iter().flat_map(|row| row.as_array().unwrap()) {
        let data = button["callback_data"].as_str().unwrap();
        assert!(data.len() <= 64, "{data}");
        assert!(!data.contains("option"), "{data}");
    }
}

#[test]
fn render_several_questions_are_plain_text_and_rich_mode_is_a_stepper() {
    let ask = json!({"questions": [
        {"question": "Where?", "options": ["Staging", "Production"]},
        {"question": "Who?", "options": ["Team", "On-call"], "multiSelect": true}
    ]});
    let text = payloads(ask.clone(), Mode::Buttons);
    assert_eq!(text.as_array().unwrap().len(), 1);
    assert!(text[0].get("reply_markup").is_none(), "{text}");
    assert!(text[0]["text"].as_str().unwrap().contains("Q2 — Who?"));

    let rich = payloads(ask, Mode::Rich);
    assert!(
        rich[0]["text"].as_str().unwrap().starts_with("1/2"),
        "{rich}"
    );
    assert!(rich[0]["reply_markup"]["inline_keyboard"].is_array());
}

#[test]
fn render_long_prompts_are_split_and_only_the_last_part_has_the_keyboard() {
    let options: Vec<Value> = (0..25)
        .map(|i| json!({"label": format!("Option {i}"), "description": "detail ".repeat(25)}))
        .collect();
    let sent = payloads(
        json!({"questions": [{"question": "word ".repeat(390), "options": options}]}),
        Mode::Buttons,
    );
    let parts = sent.as_array().unwrap();
    assert!(parts.len() >= 2, "{}", parts.len());
    for part in parts {
        assert!(part["text"].as_str().unwrap().encode_utf16().count() <= 4_096);
    }
    assert!(
        parts[..parts.len() - 1]
            .iter()
            .all(|p| p.get("reply_markup").is_none())
    );
    assert!(parts.last().unwrap().get("reply_markup").is_some());
}

/// Telegram counts a message in UTF-16 units once entities are parsed out:
/// a context of astral, joined or Chinese characters is sent in messages
/// of at most 4,096 of them, its `pre` entity covering each whole.
#[test]
fn render_a_wide_context_is_sent_within_4096_utf16_units() {
    let texts = [
        "🙂".repeat(3_000),
        "👩‍👩‍👧‍👦 🏳️‍🌈 👍🏽 🇯🇵 ".repeat(600),
        "中".repeat(19_000),
        format!("{}\n", "🙂".repeat(70)).repeat(200),
    ];
    for text in texts {
        let mut ask = deploy();
        ask["context"] = json!({"text": text, "language": "log"});
        let ask = normalize_json(&ask).unwrap().ask;
        let blocks = context_blocks(&ask, &Capabilities::TELEGRAM, Locale::En);
        assert!(
            blocks.len() > 1,
            "a context this long takes several messages"
        );
        for block in &blocks {
            let sent = serde_json::to_value(context_message(block, chat())).unwrap();
            let length = sent["text"].as_str().unwrap().encode_utf16().count();
            assert!(length <= 4_096, "a message of {length} UTF-16 units");
            assert_eq!(sent["entities"][0]["length"], length);
        }
    }
}

#[test]
fn render_prompts_replies_and_the_closing_text() {
    let prompt = serde_json::to_value(own_words_prompt(
        chat(),
        "Where?",
        Some("e.g. eu-west"),
        Locale::En,
    ))
    .unwrap();
    assert_eq!(prompt["text"], "Your answer to “Where?”:");
    assert_eq!(prompt["reply_markup"]["force_reply"], true);
    assert_eq!(
        prompt["reply_markup"]["input_field_placeholder"],
        "e.g. eu-west"
    );
    let reply = serde_json::to_value(reply_to(chat(), 12, "Which one?")).unwrap();
    assert_eq!(reply["reply_parameters"]["message_id"], 12);
    assert_eq!(
        closed_text("Deploy — Where?", "⌛ Expired"),
        "Deploy — Where?\n\n⌛ Expired"
    );
}

#[test]
fn render_a_reminder_mentions_the_asked_person_by_id() {
    let text = "⏰ Still waiting for your answer — expires in 5 min";
    let mentioning = serde_json::to_value(reminder(chat(), 12, text, Some(42))).unwrap();
    assert_eq!(mentioning["text"], text);
    assert_eq!(mentioning["reply_parameters"]["message_id"], 12);
    assert_eq!(
        mentioning["entities"],
        json!([{"type": "text_link", "url": "tg://user/?id=42", "offset": 0, "length": 1}])
    );
    let plain = serde_json::to_value(reminder(chat(), 12, text, None)).unwrap();
    assert!(plain.get("entities").is_none(), "{plain}");
}

#[test]
fn render_chat_refs_round_trip_through_conversations() {
    for chat in [
        ChatRef {
            chat_id: 42,
            thread_id: None,
        },
        ChatRef {
            chat_id: -1_001_234,
            thread_id: Some(7),
        },
    ] {
        assert_eq!(
            ChatRef::parse_conversation(&chat.conversation()),
            Some(chat)
        );
    }
    assert_eq!(ChatRef::parse_conversation("x"), None);
    let place = Place::Telegram {
        chat_id: -5,
        thread_id: Some(3),
    };
    assert_eq!(
        ChatRef::of(&place),
        Some(ChatRef {
            chat_id: -5,
            thread_id: Some(3)
        })
    );
    assert_eq!(ChatRef::of(&Place::Web { session: None }), None);
}

// ---------------------------------------------------------------------
// Updates, in the shapes of https://core.telegram.org/bots/api#update
// ---------------------------------------------------------------------

fn update(json: Value) -> Update {
    // As the webhook and teloxide's polling do: from text.
    serde_json::from_str(&json.to_string()).unwrap()
}

fn user(id: u64, name: &str) -> Value {
    json!({"id": id, "is_bot": false, "first_name": name, "username": name.to_lowercase()})
}

fn supergroup() -> Value {
    json!({"id": -1_001_234_i64, "type": "supergroup", "title": "Ops", "is_forum": true})
}

#[test]
fn parse_a_reply_in_a_group() {
    let got = parse(&update(json!({"update_id": 10, "message": {
        "message_id": 55, "date": 1_700_000_000, "chat": {"id": -4_321_i64, "type": "group", "title": "Team"},
        "from": user(42, "Alice"), "text": "2",
        // A reply thread in an ordinary group is not a topic.
        "message_thread_id": 50,
        "reply_to_message": {"message_id": 50, "date": 1_699_999_999,
            "chat": {"id": -4_321_i64, "type": "group", "title": "Team"},
            "from": {"id": 1, "is_bot": true, "first_name": "askbridge"}, "text": "Where?"}
    }})));
    let Some(Event::Text(message)) = got else {
        panic!("{got:?}")
    };
    assert_eq!(
        message.chat,
        ChatRef {
            chat_id: -4_321,
            thread_id: None
        }
    );
    assert_eq!(message.message_id, 55);
    assert_eq!(message.reply_to, Some(50));
    assert_eq!(message.text, "2");
    assert_eq!(message.from.user_id, 42);
    assert_eq!(message.from.username.as_deref(), Some("alice"));
    let responder = message.from.responder();
    assert_eq!(
        (responder.user_id.as_str(), responder.name.as_deref()),
        ("42", Some("Alice"))
    );
}

#[test]
fn parse_a_forum_topic_message_belongs_to_its_topic_not_to_the_topic_root() {
    let got = parse(&update(json!({"update_id": 11, "message": {
        "message_id": 90, "date": 1_700_000_000, "chat": supergroup(),
        "from": user(7, "Bob"), "text": "yes", "message_thread_id": 3, "is_topic_message": true,
        "reply_to_message": {"message_id": 3, "date": 1_699_000_000, "chat": supergroup(),
            "from": user(7, "Bob"), "message_thread_id": 3, "is_topic_message": true,
            "forum_topic_created": {"name": "Deploys", "icon_color": 7_322_096}}
    }})));
    let Some(Event::Text(message)) = got else {
        panic!("{got:?}")
    };
    assert_eq!(
        message.chat,
        ChatRef {
            chat_id: -1_001_234,
            thread_id: Some(3)
        }
    );
    assert_eq!(message.reply_to, None);
}

#[test]
fn parse_a_button_press() {
    let got = parse(&update(json!({"update_id": 12, "callback_query": {
        "id": "4382bfdwdsb323b2d9", "from": user(42, "Alice"), "chat_instance": "-86",
        "data": format!("ab1:{ASK_ID}:0:1"),
        "message": {"message_id": 60, "date": 1_700_000_000, "chat": supergroup(),
            "from": {"id": 1, "is_bot": true, "first_name": "askbridge"},
            "message_thread_id": 3, "is_topic_message": true, "text": "Where?",
            "reply_markup": {"inline_keyboard": [[{"text": "Production", "callback_data": format!("ab1:{ASK_ID}:0:1")}]]}}
    }})));
    let Some(Event::Press(press)) = got else {
        panic!("{got:?}")
    };
    assert_eq!(press.query_id, "4382bfdwdsb323b2d9");
    assert_eq!(
        press.chat,
        Some(ChatRef {
            chat_id: -1_001_234,
            thread_id: Some(3)
        })
    );
    assert_eq!(press.message_id, Some(60));
    let button = press.button.unwrap();
    assert_eq!(
        (button.ask_key.as_str(), button.question, button.option),
        (ASK_ID, 0, OptionRef::Index(1))
    );
}

#[test]
fn parse_leaves_out_what_askbridge_does_not_act_on() {
    let bot_message = json!({"update_id": 13, "message": {"message_id": 1, "date": 0,
        "chat": {"id": 5, "type": "private", "first_name": "X"},
        "from": {"id": 9, "is_bot": true, "first_name": "Other bot"}, "text": "2"}});
    let edited = json!({"update_id": 14, "edited_message": {"message_id": 1, "date": 0, "edit_date": 1,
        "chat": {"id": 5, "type": "private", "first_name": "X"}, "from": user(5, "X"), "text": "2"}});
    let sticker = json!({"update_id": 15, "message": {"message_id": 2, "date": 0,
        "chat": {"id": 5, "type": "private", "first_name": "X"}, "from": user(5, "X"),
        "sticker": {"file_id": "f", "file_unique_id": "u", "type": "regular", "width": 512, "height": 512,
                    "is_animated": false, "is_video": false}}});
    for json in [bot_message, edited, sticker] {
        assert_eq!(parse(&update(json.clone())), None, "{json}");
    }
    // Someone else's callback data is a press with no button of ours.
    let foreign = parse(&update(json!({"update_id": 16, "callback_query": {
        "id": "1", "from": user(5, "X"), "chat_instance": "1", "data": "vote:up"}})));
    let Some(Event::Press(press)) = foreign else {
        panic!("{foreign:?}")
    };
    assert_eq!(
        (press.button, press.chat, press.message_id),
        (None, None, None)
    );
}

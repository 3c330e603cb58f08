//! The pure halves of the Slack channel, and the request signature check:
//! drawing asks as Block Kit payloads and reading events and interactions
//! (recorded in the official JSON shapes under `tests/fixtures/`).

#![allow(clippy::unwrap_used)]

use std::collections::HashSet;

use askbridge_core::model::{ChannelKind, Place};
use askbridge_core::normalize::normalize_json;
use askbridge_core::render::{
    Button, ButtonStyle, ButtonsView, Capabilities, Locale, Mode, OptionRef, Step, StepInput,
    StepOption, View, rich_step, view,
};
use askbridge_slack::parse::{self, Event, EventsBody};
use askbridge_slack::render::{
    self, Destination, MAX_BLOCKS, MAX_SECTION_CHARS, Message, ask_messages, closed, escape,
    own_words_modal, reminder, reply_in_thread, step_message,
};
use askbridge_slack::run::{Refusal, SignatureCheck};
use serde_json::{Value, json};
use slack_morphism::prelude::{
    SlackChannelId, SlackInteractionEvent, SlackPushEventCallback, SlackTs, SlackUserId,
};

const KEY: &str = "k1";

fn bot() -> SlackUserId {
    SlackUserId("U0BOT00001".into())
}

fn channel() -> SlackChannelId {
    SlackChannelId("C0123456789".into())
}

fn ask(json: Value) -> askbridge_core::model::Ask {
    normalize_json(&json).unwrap().ask
}

fn drawn(json: Value, mode: Mode) -> View {
    let caps = Capabilities::SLACK.with_mode(mode);
    view(&ask(json), KEY, &caps, Locale::En)
}

fn posted(message: &Message) -> Value {
    serde_json::to_value(message.to_post(&channel())).unwrap()
}

fn deploy() -> Value {
    json!({"questions": [{"id": "env", "header": "Deploy", "question": "Where?",
        "options": ["Staging (Recommended)", "Production"]}]})
}

fn two_questions() -> Value {
    json!({"title": "Release", "questions": [
        {"header": "Where", "question": "Where?", "options": ["Staging", "Production"]},
        {"header": "Who", "question": "Who should know?",
         "options": [{"label": "Team", "description": "the #deploys channel"}, "On-call", "Managers"],
         "multiSelect": true}
    ]})
}

/// Every block of a posted message, checked against Slack's limits.
fn check_limits(sent: &Value) {
    let blocks = sent["blocks"].as_array().unwrap();
    assert!(!blocks.is_empty() && blocks.len() <= MAX_BLOCKS, "{sent}");
    let mut block_ids = HashSet::new();
    for block in blocks {
        let id = block["block_id"].as_str().unwrap();
        assert!(block_ids.insert(id.to_owned()), "repeated block_id {id}");
        match block["type"].as_str().unwrap() {
            "section" => {
                let text = block["text"]["text"].as_str().unwrap();
                let len = text.chars().count();
                assert!((1..=MAX_SECTION_CHARS).contains(&len), "section of {len}");
            }
            "actions" => {
                let elements = block["elements"].as_array().unwrap();
                assert!((1..=25).contains(&elements.len()));
                let mut ids = HashSet::new();
                for element in elements {
                    let id = element["action_id"].as_str().unwrap();
                    assert!(ids.insert(id.to_owned()) && id.len() <= 255, "{id}");
                    if element["type"] == "button" {
                        let text = element["text"]["text"].as_str().unwrap();
                        assert!(
                            !text.trim().is_empty() && text.chars().count() <= 75,
                            "{text}"
                        );
                        assert_eq!(element["value"], element["action_id"]);
                    }
                }
            }
            other => panic!("unexpected block {other}"),
        }
    }
}

// ---------------------------------------------------------------------
// Rendering
// ---------------------------------------------------------------------

#[test]
fn render_single_choice_is_one_message_with_buttons() {
    let messages = ask_messages(&drawn(deploy(), Mode::Buttons));
    assert_eq!(messages.len(), 1);
    let sent = posted(&messages[0]);
    check_limits(&sent);
    insta::assert_json_snapshot!("buttons_view", sent);
    assert_eq!(messages[0].text, "Deploy — Where?");
}

#[test]
fn render_several_questions_are_plain_text() {
    let view = drawn(two_questions(), Mode::Buttons);
    assert!(matches!(view, View::Text(_)), "{view:?}");
    let messages = ask_messages(&view);
    let sent: Vec<Value> = messages.iter().map(posted).collect();
    for message in &sent {
        check_limits(message);
        assert!(
            message["blocks"]
                .as_array()
                .unwrap()
                .iter()
                .all(|b| b["type"] == "section")
        );
    }
    insta::assert_json_snapshot!("text_view", sent);
}

#[test]
fn render_rich_mode_starts_with_the_first_step() {
    let view = drawn(two_questions(), Mode::Rich);
    let View::Rich(rich) = &view else {
        panic!("{view:?}")
    };
    let messages = ask_messages(&view);
    assert_eq!(messages.len(), 1);
    assert_eq!(messages[0], step_message(&rich.steps[0]));
    let sent = posted(&messages[0]);
    check_limits(&sent);
    assert!(messages[0].text.starts_with("Release · 1/2"), "{sent}");
    let buttons = &sent["blocks"][1]["elements"];
    assert_eq!(buttons[0]["action_id"], "ab1:k1:0:0");
    assert_eq!(buttons[1]["text"]["text"], "Production");
}

#[test]
fn render_a_multi_select_step_is_checkboxes_then_submit() {
    let ask = ask(two_questions());
    let caps = Capabilities::SLACK.with_mode(Mode::Rich);
    let step = rich_step(&ask, KEY, 1, &[2], &caps, Locale::En).unwrap();
    assert!(matches!(step.input, StepInput::Toggle { .. }), "{step:?}");
    let sent = posted(&step_message(&step));
    check_limits(&sent);
    insta::assert_json_snapshot!("rich_multi_select_step", sent);

    let blocks = sent["blocks"].as_array().unwrap();
    assert_eq!(blocks.len(), 3);
    let checkboxes = &blocks[1]["elements"][0];
    assert_eq!(checkboxes["type"], "checkboxes");
    assert_eq!(checkboxes["action_id"], "ab1:k1:1:d");
    assert_eq!(checkboxes["options"].as_array().unwrap().len(), 3);
    assert_eq!(
        checkboxes["initial_options"],
        json!([checkboxes["options"][2].clone()])
    );
    // No toggle buttons; Submit (Done) first, under the same key.
    let keys: Vec<&str> = blocks[2]["elements"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["action_id"].as_str().unwrap())
        .collect();
    assert_eq!(keys, ["ab1:k1:1:d", "ab1:k1:1:o", "ab1:k1:1:s"]);
    assert_eq!(blocks[2]["elements"][0]["style"], "primary");
}

fn many_options_step(count: usize) -> Step {
    Step {
        question: 0,
        position: 1,
        total: 1,
        text: "Pick".into(),
        input: StepInput::Toggle {
            selected: vec![1, 150],
            options: (0..count)
                .map(|index| StepOption {
                    index,
                    label: "o".repeat(120),
                    description: Some("d".repeat(120)),
                    recommended: false,
                })
                .collect(),
        },
        rows: vec![vec![Button {
            key: "ab1:k1:0:d".into(),
            action: OptionRef::Done,
            label: "Done".into(),
            style: ButtonStyle::Primary,
        }]],
    }
}

#[test]
fn render_a_step_with_many_options_is_a_menu_within_limits() {
    let sent = posted(&step_message(&many_options_step(150)));
    check_limits(&sent);
    let blocks = sent["blocks"].as_array().unwrap();
    let menu = &blocks[0]["accessory"];
    assert_eq!(menu["type"], "multi_static_select");
    assert_eq!(menu["action_id"], "ab1:k1:0:d");
    let options = menu["options"].as_array().unwrap();
    assert_eq!(options.len(), 100);
    for option in options {
        assert!(option["text"]["text"].as_str().unwrap().chars().count() <= 75);
        assert!(
            option["description"]["text"]
                .as_str()
                .unwrap()
                .chars()
                .count()
                <= 75
        );
    }
    // Only the options shown can be preselected.
    assert_eq!(menu["initial_options"].as_array().unwrap().len(), 1);
    assert_eq!(menu["initial_options"][0]["value"], "1");
    assert_eq!(blocks[1]["elements"][0]["action_id"], "ab1:k1:0:d");

    // Ten options still fit checkboxes.
    let sent = posted(&step_message(&many_options_step(10)));
    assert_eq!(sent["blocks"][1]["elements"][0]["type"], "checkboxes");
}

#[test]
fn render_the_closed_message_keeps_the_text_and_drops_the_controls() {
    let message = closed("Deploy — Where?", "✅ Production — answered by Mase");
    let update =
        serde_json::to_value(message.to_update(&channel(), &SlackTs("1700000000.000100".into())))
            .unwrap();
    insta::assert_json_snapshot!("closed", update);
    assert_eq!(
        message.text,
        "Deploy — Where?\n\n✅ Production — answered by Mase"
    );
    // An update always sends its blocks, so the buttons go.
    let blocks = update["blocks"].as_array().unwrap();
    assert!(blocks.iter().all(|b| b["type"] == "section"));

    // Too long: the shown text is cut, the status line never.
    let long = closed(&"word ".repeat(10_000), "⌛ Expired");
    assert!(long.text.ends_with("…\n\n⌛ Expired"), "{}", long.text);
    check_limits(&posted(&long));
}

#[test]
fn render_the_own_words_modal() {
    let modal = own_words_modal(
        "ab1:k1:0:o",
        "Your answer",
        "Deploy — Where?",
        Some("e.g. eu-west"),
        false,
        "C0123456789|1700000000.000100",
        Locale::En,
    );
    insta::assert_json_snapshot!("own_words_modal", serde_json::to_value(&modal).unwrap());
    let chinese = serde_json::to_value(own_words_modal(
        "ab1:k1:0:o",
        "T",
        "L",
        None,
        false,
        "",
        Locale::ZhCn,
    ))
    .unwrap();
    assert_eq!(
        (&chinese["submit"]["text"], &chinese["close"]["text"]),
        (&serde_json::json!("发送"), &serde_json::json!("取消")),
        "the modal's buttons speak the channel's language"
    );

    let long = serde_json::to_value(own_words_modal(
        "ab1:k1:1:o",
        &"T".repeat(60),
        &"L".repeat(2_100),
        Some(&"p".repeat(200)),
        true,
        &"m".repeat(3_001),
        Locale::En,
    ))
    .unwrap();
    assert_eq!(long["title"]["text"].as_str().unwrap().chars().count(), 24);
    let input = &long["blocks"][0];
    assert_eq!(
        input["label"]["text"].as_str().unwrap().chars().count(),
        2_000
    );
    assert_eq!(input["element"]["multiline"], true);
    assert_eq!(
        input["element"]["placeholder"]["text"]
            .as_str()
            .unwrap()
            .chars()
            .count(),
        150
    );
    assert!(long.get("private_metadata").is_none(), "too long: dropped");
}

#[test]
fn render_escapes_so_nothing_pings() {
    assert_eq!(
        escape("<!channel> & <@U123> <https://x|y> a>b"),
        "&lt;!channel&gt; &amp; &lt;@U123&gt; &lt;https://x|y&gt; a&gt;b"
    );
    assert_eq!(escape("plain *bold* é"), "plain *bold* é");
    let sent = posted(&Message::text("<!here> ship it & go"));
    assert_eq!(sent["text"], "&lt;!here&gt; ship it &amp; go");
    assert_eq!(
        sent["blocks"][0]["text"],
        json!({"type": "mrkdwn", "text": "&lt;!here&gt; ship it &amp; go", "verbatim": true})
    );
    assert_eq!(sent["link_names"], false);
    // What the server records is the text as shown, not escaped.
    assert_eq!(Message::text("a & b").text, "a & b");
}

fn button(key: String, label: String) -> Button {
    Button {
        key,
        action: OptionRef::Other,
        label,
        style: ButtonStyle::Normal,
    }
}

#[test]
fn render_never_emits_what_slack_refuses() {
    // A view drawn for other limits: a row of 30 long labels, 60 more rows,
    // an oversized and a repeated key, a blank label, and a text that grows
    // past 3,000 characters once escaped.
    let mut rows = vec![
        (0..30)
            .map(|i| button(format!("ab1:k1:0:{i}"), format!("{i} {}", "x".repeat(90))))
            .collect::<Vec<_>>(),
    ];
    rows.extend((30..90).map(|i| vec![button(format!("ab1:k1:0:{i}"), "ok".into())]));
    rows.push(vec![
        button("x".repeat(256), "too long a key".into()),
        button("ab1:k1:0:0".into(), "repeated".into()),
        button("ab1:k1:0:s".into(), "   ".into()),
    ]);
    let view = View::Buttons(ButtonsView {
        parts: vec!["a & b < c ".repeat(290)],
        rows,
    });
    let messages = ask_messages(&view);
    assert_eq!(messages.len(), 1);
    let sent = posted(&messages[0]);
    check_limits(&sent);
    let blocks = sent["blocks"].as_array().unwrap();
    assert_eq!(blocks.len(), MAX_BLOCKS);
    let sections = blocks.iter().filter(|b| b["type"] == "section").count();
    assert!(sections >= 2, "escaping split the text: {sections}");
    assert_eq!(blocks[sections]["elements"].as_array().unwrap().len(), 25);
    assert_eq!(
        blocks[sections + 1]["elements"].as_array().unwrap().len(),
        5,
        "wrapped"
    );
    // The whole text is there, in order.
    let shown: String = blocks[..sections]
        .iter()
        .map(|b| {
            b["text"]["text"]
                .as_str()
                .unwrap()
                .replace("&amp;", "&")
                .replace("&lt;", "<")
        })
        .collect::<Vec<_>>()
        .join(" ");
    assert_eq!(
        shown.split_whitespace().collect::<Vec<_>>(),
        "a & b < c "
            .repeat(290)
            .split_whitespace()
            .collect::<Vec<_>>()
    );

    // Blank texts become a placeholder, never an empty section.
    assert_eq!(Message::text("  \n").text, "❓");
    let empty = View::Buttons(ButtonsView {
        parts: vec![],
        rows: vec![vec![button("ab1:k1:0:s".into(), "Skip".into())]],
    });
    let sent = posted(&ask_messages(&empty)[0]);
    check_limits(&sent);
    assert_eq!(sent["blocks"][0]["text"]["text"], "❓");
}

#[test]
fn render_block_ids_change_with_the_content() {
    let a = posted(&Message::text("one"));
    let b = posted(&Message::text("two"));
    assert_ne!(a["blocks"][0]["block_id"], b["blocks"][0]["block_id"]);
    assert_eq!(a, posted(&Message::text("one")), "deterministic");
}

#[test]
fn render_replies_go_to_the_thread() {
    let reply = posted(&reply_in_thread(
        &SlackTs("1700000000.000100".into()),
        "Which one?",
    ));
    assert_eq!(reply["thread_ts"], "1700000000.000100");
    assert_eq!(reply["text"], "Which one?");
    assert!(posted(&Message::text("x")).get("thread_ts").is_none());

    let notice = serde_json::to_value(render::ephemeral(
        &channel(),
        &SlackUserId("U012AB3CD".into()),
        "This was already answered.",
        Some(&SlackTs("1700000000.000100".into())),
    ))
    .unwrap();
    assert_eq!(notice["user"], "U012AB3CD");
    assert_eq!(notice["channel"], "C0123456789");
    assert_eq!(notice["thread_ts"], "1700000000.000100");
    let response = serde_json::to_value(render::ephemeral_response("Not for you")).unwrap();
    assert_eq!(response["response_type"], "ephemeral");
    assert_eq!(response["replace_original"], false);
    assert_eq!(response["text"], "Not for you");
}

#[test]
fn render_destinations_of_targets() {
    let slack = |id: &str, thread: Option<&str>| Place::Slack {
        channel_id: id.into(),
        thread_ts: thread.map(Into::into),
    };
    assert_eq!(
        Destination::of(&slack("C0123456789", Some("1700000000.000100"))),
        Some(Destination::Channel {
            channel: channel(),
            thread_ts: Some(SlackTs("1700000000.000100".into())),
        })
    );
    assert_eq!(
        Destination::of(&slack("D0123456789", None)),
        Some(Destination::Channel {
            channel: SlackChannelId("D0123456789".into()),
            thread_ts: None,
        })
    );
    assert!(matches!(
        Destination::of(&slack("G0123456789", None)),
        Some(Destination::Channel { .. })
    ));
    assert_eq!(
        Destination::of(&slack("U012AB3CD", None)),
        Some(Destination::User(SlackUserId("U012AB3CD".into())))
    );
    assert_eq!(
        Destination::of(&Place::SlackUser {
            user_id: "U012AB3CD".into()
        }),
        Some(Destination::User(SlackUserId("U012AB3CD".into())))
    );
    assert_eq!(
        Destination::of(&Place::SlackUser {
            user_id: "C012AB3CD".into()
        }),
        None
    );
    assert_eq!(Destination::of(&slack("X123", None)), None);
    assert_eq!(Destination::of(&slack("", None)), None);
    assert_eq!(Destination::of(&Place::Web { session: None }), None);
}

// ---------------------------------------------------------------------
// Parsing, on the recorded shapes in tests/fixtures
// ---------------------------------------------------------------------

fn fixture(name: &str) -> String {
    let path = format!("{}/tests/fixtures/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn interaction(name: &str) -> SlackInteractionEvent {
    serde_json::from_str(&fixture(name)).unwrap_or_else(|e| panic!("{name}: {e}"))
}

fn callback(name: &str) -> SlackPushEventCallback {
    serde_json::from_str(&fixture(name)).unwrap_or_else(|e| panic!("{name}: {e}"))
}

fn text_event(name: &str) -> Option<parse::TextMessage> {
    match parse::push_event(&callback(name), &bot()) {
        Some(Event::Text(text)) => Some(text),
        None => None,
        other => panic!("{other:?}"),
    }
}

#[test]
fn parse_a_button_press() {
    let got = parse::interaction(&interaction("block_actions_button.json"));
    let Some(Event::Press(press)) = got else {
        panic!("{got:?}")
    };
    let button = press.button.clone().unwrap();
    assert_eq!(
        (button.ask_key.as_str(), button.question, button.option),
        (KEY, 0, OptionRef::Index(1))
    );
    assert_eq!(press.values, None);
    assert_eq!(press.channel, channel());
    assert_eq!(press.message_ts, Some(SlackTs("1700000000.000100".into())));
    assert_eq!(press.thread_ts, None);
    assert_eq!(
        press.trigger_id.unwrap().0,
        "6112233445566.1234567890.abcdef0123456789abcdef0123456789"
    );
    assert_eq!(
        press.response_url.unwrap().0.as_str(),
        "https://hooks.slack.com/actions/T0001ABCD/6112233445566/abcdefghijklmnopqrstuvwx"
    );
    assert_eq!(press.from.id, SlackUserId("U012AB3CD".into()));
    assert_eq!(press.from.username.as_deref(), Some("mason"));
    assert_eq!(press.from.name, None);
    let responder = press.from.responder();
    assert_eq!(responder.channel, ChannelKind::Slack);
    assert_eq!(
        (responder.user_id.as_str(), responder.name.as_deref()),
        ("U012AB3CD", Some("mason"))
    );
    let mut named = press.from.clone();
    named.name = Some("Mason M.".into());
    assert_eq!(named.responder().name.as_deref(), Some("Mason M."));
}

#[test]
fn parse_submit_reads_the_ticked_options_from_the_state() {
    let got = parse::interaction(&interaction("block_actions_submit.json"));
    let Some(Event::Press(press)) = got else {
        panic!("{got:?}")
    };
    let button = press.button.unwrap();
    assert_eq!((button.question, button.option), (1, OptionRef::Done));
    assert_eq!(press.values, Some(vec![0, 2]));
    assert_eq!(
        press.thread_ts,
        Some(SlackTs("1700000000.000100".into())),
        "the ask is in a thread"
    );

    // Nothing ticked: an empty choice. No state for the key: the server's
    // own toggles count.
    let mut json: Value = serde_json::from_str(&fixture("block_actions_submit.json")).unwrap();
    json["state"]["values"]["ab1-11223344"]["ab1:k1:1:d"]["selected_options"] = json!([]);
    let Some(Event::Press(press)) =
        parse::interaction(&serde_json::from_value(json.clone()).unwrap())
    else {
        panic!()
    };
    assert_eq!(press.values, Some(vec![]));
    json["state"] = json!({"values": {}});
    let Some(Event::Press(press)) =
        parse::interaction(&serde_json::from_value(json.clone()).unwrap())
    else {
        panic!()
    };
    assert_eq!((press.button.is_some(), press.values), (true, None));

    // Values that are not askbridge's indices: unreadable.
    json["state"] = json!({"values": {"b": {"ab1:k1:1:d": {"type": "checkboxes",
        "selected_options": [{"text": {"type": "plain_text", "text": "x"}, "value": "mage"}]}}}});
    let Some(Event::Press(press)) = parse::interaction(&serde_json::from_value(json).unwrap())
    else {
        panic!()
    };
    assert_eq!((press.button, press.values), (None, None));
}

#[test]
fn parse_ticking_a_checkbox_is_not_acted_on() {
    assert_eq!(
        parse::interaction(&interaction("block_actions_checkbox.json")),
        None
    );
}

#[test]
fn parse_a_modal_submit() {
    let got = parse::interaction(&interaction("view_submission.json"));
    let Some(Event::Submit(submit)) = got else {
        panic!("{got:?}")
    };
    let key = submit.key.unwrap();
    assert_eq!((key.question, key.option), (0, OptionRef::Other));
    assert_eq!(submit.text, "eu-west-3, after the freeze");
    assert_eq!(submit.private_metadata, "C0123456789|1700000000.000100");
    assert_eq!(submit.from.id, SlackUserId("U012AB3CD".into()));
}

#[test]
fn parse_a_message_in_a_channel_drops_the_markup() {
    let got = text_event("message_channel.json").unwrap();
    assert_eq!(
        got.text,
        "Production, but after 5pm & only if #release is green <3 see the runbook or https://example.com/x"
    );
    assert_eq!(got.channel, channel());
    assert_eq!(got.ts, SlackTs("1700000300.000300".into()));
    assert_eq!(got.thread_ts, None);
    assert_eq!(got.from.id, SlackUserId("U012AB3CD".into()));
}

#[test]
fn parse_a_reply_in_a_thread_and_a_dm() {
    let reply = text_event("message_thread.json").unwrap();
    assert_eq!(reply.thread_ts, Some(SlackTs("1700000000.000100".into())));
    assert_eq!(reply.text, "Q1: 2\nQ2: team, on-call");
    let dm = text_event("message_im.json").unwrap();
    assert_eq!(dm.channel, SlackChannelId("D0123456789".into()));
    assert_eq!(dm.text, "yes");
}

#[test]
fn parse_leaves_out_what_askbridge_does_not_act_on() {
    assert_eq!(text_event("message_bot.json"), None);
    assert_eq!(text_event("message_changed.json"), None);

    let base: Value = serde_json::from_str(&fixture("message_im.json")).unwrap();
    let with = |change: &dyn Fn(&mut Value)| {
        let mut json = base.clone();
        change(&mut json);
        let callback: SlackPushEventCallback = serde_json::from_value(json).unwrap();
        parse::push_event(&callback, &bot())
    };
    assert!(with(&|_| {}).is_some());
    // The bot itself, only its mention, no text, a deletion, a join.
    assert_eq!(with(&|j| j["event"]["user"] = json!("U0BOT00001")), None);
    assert_eq!(with(&|j| j["event"]["text"] = json!("<@U0BOT00001>")), None);
    assert_eq!(with(&|j| j["event"]["text"] = json!("  ")), None);
    assert_eq!(
        with(&|j| j["event"]["subtype"] = json!("message_deleted")),
        None
    );
    assert_eq!(
        with(&|j| j["event"]["subtype"] = json!("channel_join")),
        None
    );
    assert_eq!(with(&|j| j["event"]["bot_id"] = json!("B0OTHER001")), None);
    // Another event type.
    assert_eq!(
        with(
            &|j| j["event"] = json!({"type": "reaction_added", "user": "U012AB3CD",
            "reaction": "thumbsup", "item": {"type": "message", "channel": "D0123456789",
            "ts": "1700000500.000500"}, "event_ts": "1700000800.000800"})
        ),
        None
    );
    // A reply broadcast to the channel is a person's message.
    let broadcast = with(&|j| {
        j["event"]["subtype"] = json!("thread_broadcast");
        j["event"]["thread_ts"] = json!("1700000000.000100");
    });
    assert!(matches!(broadcast, Some(Event::Text(_))), "{broadcast:?}");
}

#[test]
fn parse_clean_text_undoes_slack_markup() {
    let bot = bot();
    let clean = |text: &str| parse::clean_text(text, Some(&bot));
    assert_eq!(clean("<@U0BOT00001> hi"), " hi");
    assert_eq!(clean("ask <@U042|ana> or <@U043>"), "ask @ana or @U043");
    assert_eq!(
        clean("<!here> <!subteam^S1|@devs> <!channel>"),
        "@here @devs @channel"
    );
    assert_eq!(clean("<mailto:a@b.c|a@b.c> &amp;lt;"), "a@b.c &lt;");
    assert_eq!(clean("a < b"), "a < b");
    assert_eq!(clean("1 &lt; 2 &amp;&amp; 3 &gt; 2"), "1 < 2 && 3 > 2");
}

#[test]
fn parse_http_bodies() {
    assert_eq!(
        parse::events_body(fixture("url_verification.json").as_bytes(), &bot()),
        Ok(EventsBody::UrlVerification {
            challenge: "3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P".into()
        })
    );
    let got = parse::events_body(fixture("message_im.json").as_bytes(), &bot()).unwrap();
    let EventsBody::Event(Some(delivered)) = got else {
        panic!("not an event: {got:?}");
    };
    assert!(matches!(delivered.event, Event::Text(_)), "{delivered:?}");
    assert!(delivered.key.starts_with("event:Ev"), "{}", delivered.key);
    let got = parse::events_body(fixture("message_bot.json").as_bytes(), &bot()).unwrap();
    assert_eq!(got, EventsBody::Event(None));
    assert!(parse::events_body(b"{not json", &bot()).is_err());

    let payload = fixture("view_submission.json");
    let form: String = form_encode(&[("payload", &payload)]);
    let got = parse::interactivity_body(form.as_bytes())
        .unwrap()
        .expect("a submission");
    assert!(matches!(got.event, Event::Submit(_)), "{got:?}");
    assert!(
        got.key.starts_with("trigger:") || got.key.starts_with("view:"),
        "{}",
        got.key
    );
    assert!(parse::interactivity_body(b"other=1").is_err());
    assert!(parse::interactivity_body(b"payload=%7Bnope").is_err());
}

/// `application/x-www-form-urlencoded`, as Slack sends interactions.
fn form_encode(fields: &[(&str, &str)]) -> String {
    fields
        .iter()
        .map(|(name, value)| {
            let encoded: String = value
                .bytes()
                .map(|b| match b {
                    b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'*' => {
                        (b as char).to_string()
                    }
                    b' ' => "+".to_owned(),
                    b => format!("%{b:02X}"),
                })
                .collect();
            format!("{name}={encoded}")
        })
        .collect::<Vec<_>>()
        .join("&")
}

#[test]
fn parse_what_render_draws_round_trips() {
    // The action_ids and values askbridge draws are what it reads back.
    let ask = ask(two_questions());
    let caps = Capabilities::SLACK.with_mode(Mode::Rich);
    let step = rich_step(&ask, KEY, 1, &[], &caps, Locale::En).unwrap();
    let sent = posted(&step_message(&step));
    let checkboxes = &sent["blocks"][1]["elements"][0];
    let submit = &sent["blocks"][2]["elements"][0];
    let mut json: Value = serde_json::from_str(&fixture("block_actions_submit.json")).unwrap();
    json["state"] = json!({"values": {sent["blocks"][1]["block_id"].as_str().unwrap(): {
        checkboxes["action_id"].as_str().unwrap(): {"type": "checkboxes",
            "selected_options": [checkboxes["options"][1], checkboxes["options"][2]]}}}});
    json["actions"][0]["action_id"] = submit["action_id"].clone();
    json["actions"][0]["value"] = submit["value"].clone();
    let got = parse::interaction(&serde_json::from_value(json).unwrap());
    let Some(Event::Press(press)) = got else {
        panic!("{got:?}")
    };
    assert_eq!(press.button.unwrap().option, OptionRef::Done);
    assert_eq!(press.values, Some(vec![1, 2]));

    // The modal's ids are what a submit is read by.
    let modal = serde_json::to_value(own_words_modal(
        "ab1:k1:0:o",
        "T",
        "L",
        None,
        true,
        "",
        Locale::En,
    ))
    .unwrap();
    assert_eq!(modal["blocks"][0]["block_id"], render::ANSWER_BLOCK_ID);
    assert_eq!(
        modal["blocks"][0]["element"]["action_id"],
        render::ANSWER_ACTION_ID
    );
}

// ---------------------------------------------------------------------
// The signing-secret check of HTTP requests
// ---------------------------------------------------------------------

fn sign(secret: &str, timestamp: &str, body: &[u8]) -> String {
    use hmac::{Hmac, KeyInit, Mac};
    let mut mac = Hmac::<sha2::Sha256>::new_from_slice(secret.as_bytes()).unwrap();
    mac.update(format!("v0:{timestamp}:").as_bytes());
    mac.update(body);
    format!("v0={}", hex::encode(mac.finalize().into_bytes()))
}

#[test]
fn run_signature_check_accepts_fresh_slack_requests_only() {
    const SECRET: &str = "8f742231b10e8888abcd99yyyzzz85a5";
    let check = SignatureCheck::new(SECRET).unwrap();
    let body = fixture("url_verification.json");
    let body = body.as_bytes();
    let timestamp = "1531420618";
    let now = 1_531_420_618 + 60;
    let good = sign(SECRET, timestamp, body);
    assert_eq!(check.verify(timestamp, &good, body, now), Ok(()));

    // Another body, timestamp or secret: refused.
    assert_eq!(
        check.verify(timestamp, &good, b"{\"type\":\"x\"}", now),
        Err(Refusal::BadSignature)
    );
    assert_eq!(
        check.verify("1531420619", &good, body, now),
        Err(Refusal::BadSignature)
    );
    let other = sign("another secret", timestamp, body);
    assert_eq!(
        check.verify(timestamp, &other, body, now),
        Err(Refusal::BadSignature)
    );
    assert_eq!(
        check.verify(timestamp, "v0=zz", body, now),
        Err(Refusal::BadSignature)
    );

    // Stale (a replay) or from the future, however well signed.
    assert_eq!(
        check.verify(timestamp, &good, body, 1_531_420_618 + 301),
        Err(Refusal::Stale { age: 301 })
    );
    assert_eq!(
        check.verify(timestamp, &good, body, 1_531_420_618 - 400),
        Err(Refusal::Stale { age: 400 })
    );
    assert_eq!(
        check.verify(timestamp, &good, body, 1_531_420_618 + 300),
        Ok(()),
        "5 minutes is still fine"
    );
    assert_eq!(
        check.verify("yesterday", &good, body, now),
        Err(Refusal::BadTimestamp("yesterday".into()))
    );
}

#[test]
fn ts_orders_by_seconds_then_microseconds() {
    let ts = |text: &str| text.parse::<parse::Ts>().unwrap();
    assert_eq!(ts("1700000000.000100").order(), Some((1_700_000_000, 100)));
    assert!(ts("999999999.999999").order() < ts("1700000000.000001").order());
    assert!(ts("1700000000.000002").order() > ts("1700000000.000001").order());
    assert_eq!(ts("1700000000").order(), None);
}

#[test]
fn parse_the_bots_mention_and_where_is_askbridges_command() {
    let bot = bot();
    let command = |text: &str| parse::command_text(text, &bot);
    let mention = format!("<@{}>", bot.0);
    assert_eq!(
        command(&format!("{mention} where")).as_deref(),
        Some("askbridge where")
    );
    assert_eq!(
        command(&format!(" {mention}  WHERE ")).as_deref(),
        Some("askbridge where")
    );
    assert_eq!(command(&format!("{mention} where now")), None);
    assert_eq!(command(&format!("{mention} 2")), None);
    assert_eq!(command("<@U0SOMEONE> where"), None);
    assert_eq!(command("where"), None);
}

#[test]
fn render_a_reminder_mentions_the_asked_person_in_the_thread_and_the_notification() {
    let thread = SlackTs::new("1700000000.000100".to_owned());
    let message = posted(&reminder(
        &thread,
        Some("U0ALICE"),
        "⏰ Still waiting <b> & co",
    ));
    let expected = "<@U0ALICE> ⏰ Still waiting &lt;b&gt; &amp; co";
    assert_eq!(message["text"], expected);
    assert_eq!(message["blocks"][0]["text"]["text"], expected);
    assert_eq!(message["thread_ts"], "1700000000.000100");
    // Only a user id is mentioned: anything else is left out.
    let odd = posted(&reminder(&thread, Some("<!channel>"), "⏰ Still waiting"));
    assert_eq!(odd["text"], "⏰ Still waiting");
    let nobody = posted(&reminder(&thread, None, "⏰ Still waiting"));
    assert_eq!(nobody["text"], "⏰ Still waiting");
}

#[test]
fn parse_the_askbridge_slash_command_and_leave_others_alone() {
    let body = |command: &str, text: &str| {
        form_urlencoded::Serializer::new(String::new())
            .append_pair("token", "gIkuvaNzQIHg97ATvDxqgjtO")
            .append_pair("team_id", "T0001")
            .append_pair("team_domain", "example")
            .append_pair("channel_id", "C0RELEASES")
            .append_pair("channel_name", "releases")
            .append_pair("user_id", "U0ALICE")
            .append_pair("user_name", "alice")
            .append_pair("command", command)
            .append_pair("text", text)
            .append_pair("api_app_id", "A0ASKBR1DG")
            .append_pair("is_enterprise_install", "false")
            .append_pair(
                "response_url",
                "https://hooks.slack.com/commands/T0001/1234/abcd",
            )
            .append_pair("trigger_id", "13345224609.738474920.8088930838d88f008e0")
            .finish()
    };
    let delivered = parse::command_body(body("/askbridge", "").as_bytes())
        .expect("readable")
        .expect("askbridge's command");
    assert_eq!(
        delivered.key,
        "trigger:13345224609.738474920.8088930838d88f008e0"
    );
    let askbridge_core::inbound::Inbound::Command(command) = parse::inbound(delivered.event) else {
        panic!("not a command");
    };
    assert_eq!(
        command.place,
        Place::Slack {
            channel_id: "C0RELEASES".to_owned(),
            thread_ts: None
        }
    );
    assert_eq!(command.from.responder.user_id, "U0ALICE");
    assert_eq!(
        command.reply.response_url.map(|url| url.0.to_string()),
        Some("https://hooks.slack.com/commands/T0001/1234/abcd".to_owned())
    );
    // `where` is the same question; anything else, or another command, is not askbridge's.
    assert!(
        parse::command_body(body("/askbridge", "where").as_bytes())
            .expect("readable")
            .is_some()
    );
    for (command, text) in [("/askbridge", "deploy now"), ("/deploy", "")] {
        assert_eq!(
            parse::command_body(body(command, text).as_bytes()).expect("readable"),
            None
        );
    }
    assert!(parse::command_body(b"command=%2Faskbridge").is_err());
}

#[test]
fn render_a_context_block_is_fenced_sections_escaped_within_limits() {
    let long: String = (0..400).map(|n| format!("<tag> & line {n}\n")).collect();
    let ask = ask(json!({"questions": [{"question": "Apply?"}], "context": long}));
    let blocks = askbridge_core::render::context_blocks(&ask, &Capabilities::SLACK, Locale::En);
    for block in &blocks {
        let sent = posted(&Message::context(block));
        check_limits(&sent);
        for section in sent["blocks"].as_array().unwrap() {
            let text = section["text"]["text"].as_str().unwrap();
            assert!(
                text.starts_with("```\n") && text.ends_with("\n```"),
                "{text}"
            );
            assert!(text.contains("&lt;tag&gt; &amp; line"), "{text}");
        }
    }
    let shown: Vec<String> = blocks.iter().map(|b| b.text.clone()).collect();
    assert!(
        shown
            .join("\n")
            .starts_with("<tag> & line 0\n<tag> & line 1")
    );
}

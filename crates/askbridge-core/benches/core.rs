//! Throughput of the reply resolver and the normaliser.
//!
//! `cargo bench -p askbridge-core` prints replies (and asks) per second; the
//! resolver's target is 500,000 short replies a second on one core, with each
//! question's labels prepared once, outside the timed loop. The approval
//! rules decide one hook call against 10,000 rules well under 10 ms (the
//! rules indexed once, outside the loop).

use askbridge_core::hooks::{HookEvent, Host};
use askbridge_core::model::Timestamp;
use askbridge_core::normalize;
use askbridge_core::resolve::OptionMatcher;
use askbridge_core::rules::{Effect, Rule, Ruleset, Scope};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use std::hint::black_box;

/// A realistic mix: mostly numbers and labels, some sentences, lists,
/// Chinese and Thai, platform markup and free text.
const MIX: &[(usize, &str)] = &[
    (0, "2"),
    (0, "1"),
    (0, "staging"),
    (0, "Production"),
    (0, "prod"),
    (0, "the second one"),
    (0, "staging please"),
    (0, "I'll go with production"),
    (0, "<@U024BE7LH> 2"),
    (0, "skip"),
    (0, "not production"),
    (0, "can you explain 2?"),
    (0, "2️⃣"),
    (0, "２"),
    (0, "recommended"),
    (1, "1, 3"),
    (1, "1 and 2"),
    (1, "all"),
    (1, "team channel and on-call"),
    (1, "2"),
    (1, "all except 3"),
    (1, "1 3"),
    (2, "第二个"),
    (2, "生产"),
    (2, "用测试环境吧"),
    (3, "ข้อ 2"),
    (3, "เอาพรุ่งนี้ครับ"),
    (4, "3"),
    (4, "python 3"),
    (4, "go"),
    (0, "deploy to staging because it's safer"),
    (0, "hold off until tomorrow please"),
    (4, "rust or python, you decide"),
    (1, "1, 4"),
    (0, "Staging (Recommended)"),
    (2, "2"),
];

fn matchers() -> Vec<OptionMatcher> {
    vec![
        OptionMatcher::new(&["Staging (Recommended)", "Production"], false, false),
        OptionMatcher::new(&["Team channel", "On-call", "Nobody"], true, false),
        OptionMatcher::new(&["生产环境", "测试环境"], false, false),
        OptionMatcher::new(&["ตอนนี้", "พรุ่งนี้"], false, false),
        OptionMatcher::new(&["Python 3", "Python 2", "Go"], false, false),
    ]
}

fn resolver(c: &mut Criterion) {
    let matchers = matchers();
    let mut group = c.benchmark_group("resolve");
    group.throughput(Throughput::Elements(MIX.len() as u64));
    group.bench_function("mixed replies", |b| {
        b.iter(|| {
            for (question, reply) in MIX {
                black_box(matchers[*question].resolve(black_box(reply)));
            }
        })
    });
    let short: Vec<&(usize, &str)> = MIX.iter().filter(|(_, r)| r.len() <= 12).collect();
    group.throughput(Throughput::Elements(short.len() as u64));
    group.bench_function("short replies", |b| {
        b.iter(|| {
            for (question, reply) in &short {
                black_box(matchers[*question].resolve(black_box(reply)));
            }
        })
    });
    group.finish();
    c.bench_function("prepare a question (5 labels)", |b| {
        b.iter(|| {
            black_box(OptionMatcher::new(
                black_box(&[
                    "Staging (Recommended)",
                    "Production",
                    "Canary",
                    "Local",
                    "Skip deploy",
                ]),
                false,
                false,
            ))
        })
    });
}

const CANONICAL: &str = r#"{"title":"Release 2.4","questions":[{"id":"deploy_target","header":"Deploy","question":"Where should I deploy the build?","options":[{"label":"Staging (Recommended)","description":"safe, reversible"},{"label":"Production"}],"multiSelect":false},{"id":"notify","header":"Notify","question":"Who should be told?","options":[{"label":"Team channel"},{"label":"On-call"},{"label":"Nobody"}],"multiSelect":true}],"timeoutSeconds":900}"#;
const CLAUDE: &str = r#"{"questions":[{"header":"Auth method","question":"Which authentication should the API use?","options":[{"label":"OAuth 2.0 (Recommended)","description":"standard"},{"label":"API keys","description":"simple"},{"label":"Other"}],"multiSelect":false}]}"#;
const AGENT_CHOICE: &str = "I found two ways to fix the flaky test. Which should I do?\n\n<!-- agent-choice {\"options\":[{\"label\":\"A\",\"title\":\"Retry the request\",\"description\":\"quick\",\"prompt\":\"Add a retry.\"},{\"label\":\"B\",\"title\":\"Mock the clock\",\"prompt\":\"Mock the clock.\"}]} -->";

fn normaliser(c: &mut Criterion) {
    let mut group = c.benchmark_group("normalize");
    group.throughput(Throughput::Elements(1));
    for (name, input) in [
        ("canonical", CANONICAL),
        ("claude code", CLAUDE),
        ("agent-choice", AGENT_CHOICE),
    ] {
        group.bench_function(name, |b| {
            b.iter(|| black_box(normalize::normalize_input(black_box(input))))
        });
    }
    group.finish();
}

/// 10,000 rules as a long-used install might have them: mostly commands
/// (a few hundred on `git`, `npm` and `cargo`, the rest spread over many
/// programs), paths, domains and MCP tools; some for a session, a project
/// or a host, some expired.
fn many_rules() -> Vec<Rule> {
    let programs = ["git", "npm", "cargo"];
    (0..10_000u64)
        .map(|n| {
            let pattern = match n % 20 {
                0..=5 => format!("Bash({} sub{}:*)", programs[(n % 3) as usize], n),
                6..=11 => format!("Bash(tool{} arg{}:*)", n % 2_000, n),
                12 => format!("Bash(tool{} --exact {n})", n % 2_000),
                13..=15 => format!("Edit(dir{}/sub{n}/**/*.rs)", n % 50),
                16 => format!("Read(./docs{}/*.md)", n % 40),
                17 => format!("WebFetch(domain:site{n}.example)"),
                18 => format!("WebFetch(domain:*.zone{n}.example)"),
                _ => format!("mcp__server{}__tool{n}", n % 30),
            };
            let effect = match n % 7 {
                0 => Effect::Deny("no".to_owned()),
                1 => Effect::Ask,
                _ => Effect::Allow,
            };
            let scope = Scope {
                host: (n % 5 == 0).then_some(Host::ClaudeCode),
                project: (n % 3 == 0).then(|| format!("/work/project{}", n % 10)),
                session: (n % 11 == 0).then(|| format!("session-{n}")),
            };
            let mut rule = Rule::parse(&pattern, effect, scope).expect("a bench rule");
            rule.expires_at = (n % 13 == 0).then_some(Timestamp(n));
            rule
        })
        .collect()
}

fn call(tool: &str, input: serde_json::Value) -> HookEvent {
    let event = serde_json::json!({
        "session_id": "session-0", "cwd": "/work/project0", "hook_event_name": "PreToolUse",
        "tool_name": tool, "tool_input": input,
    });
    HookEvent::parse(Host::ClaudeCode, &event.to_string()).expect("a bench event")
}

fn approval_rules(c: &mut Criterion) {
    let rules = Ruleset::new(many_rules());
    let now = Timestamp(1_000_000);
    let calls = [
        (
            "compound command",
            call(
                "Bash",
                serde_json::json!({"command": "git status && npm test -- --watch | tee log; cargo sub42 x"}),
            ),
        ),
        (
            "edit",
            call(
                "Edit",
                serde_json::json!({"file_path": "/work/project0/dir7/sub1357/a/b.rs"}),
            ),
        ),
        (
            "fetch",
            call(
                "WebFetch",
                serde_json::json!({"url": "https://a.zone18.example/x"}),
            ),
        ),
        (
            "mcp tool",
            call("mcp__server7__tool1357", serde_json::json!({})),
        ),
    ];
    let mut group = c.benchmark_group("rules (10,000)");
    group.throughput(Throughput::Elements(1));
    for (name, event) in &calls {
        group.bench_function(*name, |b| {
            b.iter(|| black_box(rules.decide(black_box(event), now, Some("/home/u"))))
        });
    }
    group.finish();
    c.bench_function("index 10,000 rules", |b| {
        b.iter_batched(
            many_rules,
            |rules| black_box(Ruleset::new(rules)),
            criterion::BatchSize::LargeInput,
        )
    });
}

criterion_group!(benches, resolver, normaliser, approval_rules);
criterion_main!(benches);

//! `askbridge resolve --jsonl` against botbuilder-js's `recognizeChoices`:
//! replies per second of each over the same typed replies, printed, not
//! asserted.
//!
//! The replies are typed answers in English, Chinese and Thai to 2–4-option
//! questions (numbers, labels, parts of labels, letters, own words, lists
//! for multi-select questions), `ASKBRIDGE_RESOLVE_REPLIES` of them
//! (default 100,000), written once as JSON lines. askbridge reads them as
//! one process (`askbridge resolve --jsonl FILE`, the release binary,
//! output to a file); botbuilder-js runs in one Node process on the same
//! lines, the locale taken from the reply's script. Both prepare the
//! options for every reply. Each side is run three times; the best run
//! counts.
//!
//! botbuilder-dialogs (pinned) is installed with npm into
//! `~/.cache/askbridge/botbuilder` on first use; without `node` and `npm`
//! only askbridge's figure is printed.
//!
//! `cargo bench -p askbridge --bench resolver`.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::json;

/// The botbuilder-dialogs release compared against.
const BOTBUILDER: &str = "botbuilder-dialogs@4.23.3";

/// Runs of each side; the best counts.
const RUNS: usize = 3;

/// Questions and typed replies to them: options, then replies.
const QUESTIONS: &[(&[&str], &[&str])] = &[
    (
        &["Production", "Staging", "Development"],
        &[
            "2",
            "staging",
            "prod please",
            "the second one",
            "Staging!",
            "dev",
            "1",
            "production",
            "neither, wait",
            "3",
        ],
    ),
    (
        &["Yes", "No"],
        &[
            "yes",
            "no",
            "y",
            "nope",
            "sure",
            "1",
            "2",
            "yes please",
            "absolutely not",
            "ok",
        ],
    ),
    (
        &["Rebase", "Merge", "Squash and merge", "Cancel"],
        &[
            "squash",
            "merge",
            "rebase it",
            "4",
            "cancel",
            "B",
            "squash and merge",
            "c",
            "let's merge",
            "1 and 3",
        ],
    ),
    (
        &["部署到生产环境", "部署到测试环境", "取消"],
        &[
            "生产",
            "测试环境",
            "2",
            "取消",
            "第一个",
            "部署到测试",
            "不要",
            "3",
            "生产环境吧",
            "好",
        ],
    ),
    (
        &["是", "否"],
        &[
            "是", "否", "是的", "不是", "1", "2", "好的", "不", "对", "不要",
        ],
    ),
    (
        &["ใช่", "ไม่ใช่"],
        &[
            "ใช่",
            "ไม่ใช่",
            "1",
            "2",
            "ใช่ครับ",
            "ไม่",
            "ได้",
            "โอเค",
            "ไม่เอา",
            "ใช่ค่ะ",
        ],
    ),
    (
        &["เซิร์ฟเวอร์หลัก", "เซิร์ฟเวอร์สำรอง", "ยกเลิก"],
        &[
            "หลัก",
            "สำรอง",
            "3",
            "ยกเลิก",
            "เซิร์ฟเวอร์หลัก",
            "อันที่สอง",
            "2",
            "1",
            "สำรองครับ",
            "ไม่",
        ],
    ),
];

/// botbuilder-js's side: `node bb.js FILE` prints `{replies, secs}`.
const NODE_SIDE: &str = r#"
const { recognizeChoices } = require('botbuilder-dialogs');
const fs = require('fs');
const lines = fs.readFileSync(process.argv[2], 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l));
const start = process.hrtime.bigint();
let found = 0;
for (const line of lines) {
  const locale = /[\u0E00-\u0E7F]/.test(line.reply) ? 'th-th' : /[\u4E00-\u9FFF]/.test(line.reply) ? 'zh-cn' : 'en-us';
  if (recognizeChoices(line.reply, line.options, { locale }).length) found++;
}
const secs = Number(process.hrtime.bigint() - start) / 1e9;
console.log(JSON.stringify({ replies: lines.length, secs, found }));
"#;

fn main() {
    let replies: usize = std::env::var("ASKBRIDGE_RESOLVE_REPLIES")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(100_000);
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("resolver-bench");
    std::fs::create_dir_all(&dir).expect("a directory for the replies");
    let input = dir.join("replies.jsonl");
    std::fs::write(&input, corpus(replies)).expect("write the replies");

    let ours = best(|| askbridge(&input, &dir.join("resolved.jsonl")));
    let ours_rate = replies as f64 / ours.as_secs_f64();
    println!(
        "askbridge resolve --jsonl: {replies} replies in {:.3} s = {ours_rate:.0} replies/s (best of {RUNS}, whole process)",
        ours.as_secs_f64()
    );
    match botbuilder() {
        Ok(module_dir) => {
            let script = dir.join("bb.js");
            std::fs::write(&script, NODE_SIDE).expect("write the Node side");
            let theirs = best(|| node(&module_dir, &script, &input));
            let theirs_rate = replies as f64 / theirs.as_secs_f64();
            println!(
                "botbuilder-js recognizeChoices ({BOTBUILDER}): {replies} replies in {:.3} s = {theirs_rate:.0} replies/s (best of {RUNS}, in-process loop only)",
                theirs.as_secs_f64()
            );
            println!("askbridge / botbuilder-js: {:.1}×", ours_rate / theirs_rate);
        }
        Err(why) => println!("botbuilder-js not run: {why}"),
    }
}

/// `count` JSON lines, the same every run: questions and replies in turn,
/// every third multi-select question (of three or more options) and every
/// other one lettered.
fn corpus(count: usize) -> String {
    let mut out = String::with_capacity(count * 120);
    for n in 0..count {
        let (options, replies) = QUESTIONS[n % QUESTIONS.len()];
        let reply = replies[(n / QUESTIONS.len()) % replies.len()];
        let line = json!({
            "options": options,
            "multi": options.len() > 2 && n % 3 == 0,
            "letters": options.len() > 2 && n % 2 == 0,
            "reply": reply,
        });
        out.push_str(&line.to_string());
        out.push('\n');
    }
    out
}

fn best(mut run: impl FnMut() -> Duration) -> Duration {
    (0..RUNS).map(|_| run()).min().expect("at least one run")
}

/// The whole `askbridge resolve --jsonl` process, start to exit.
fn askbridge(input: &Path, output: &Path) -> Duration {
    let out = std::fs::File::create(output).expect("create the output");
    let started = Instant::now();
    let status = Command::new(env!("CARGO_BIN_EXE_askbridge"))
        .args(["resolve", "--jsonl"])
        .arg(input)
        .stdout(out)
        .status()
        .expect("run askbridge resolve");
    let took = started.elapsed();
    assert!(status.success(), "askbridge resolve failed: {status}");
    took
}

/// The Node loop's own time (module loading left out, in its favour).
fn node(module_dir: &Path, script: &Path, input: &Path) -> Duration {
    let out = Command::new("node")
        .arg(script)
        .arg(input)
        .env("NODE_PATH", module_dir.join("node_modules"))
        .stderr(Stdio::inherit())
        .output()
        .expect("run node");
    assert!(out.status.success(), "node failed: {}", out.status);
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).expect("node's figures");
    Duration::from_secs_f64(report["secs"].as_f64().expect("secs"))
}

/// Where botbuilder-dialogs is installed, installing it on first use.
fn botbuilder() -> Result<PathBuf, String> {
    let home = std::env::var_os("HOME").ok_or("HOME is not set")?;
    let dir = Path::new(&home).join(".cache/askbridge/botbuilder");
    if dir.join("node_modules/botbuilder-dialogs").is_dir() {
        return Ok(dir);
    }
    std::fs::create_dir_all(&dir).map_err(|error| format!("{}: {error}", dir.display()))?;
    // Its install scripts only tidy its own folders; they need npx.
    let status = Command::new("npm")
        .args(["install", "--no-save", "--ignore-scripts", "--prefix"])
        .arg(&dir)
        .arg(BOTBUILDER)
        .stdout(Stdio::null())
        .status()
        .map_err(|error| format!("npm: {error}"))?;
    if !status.success() {
        return Err(format!("npm install {BOTBUILDER} failed: {status}"));
    }
    Ok(dir)
}

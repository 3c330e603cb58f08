//! The reply resolver as a table (docs/replies.md): one row a reply.
//!
//! Each row is `options | reply => expected`, where options are
//! comma-separated labels (`;` when labels contain commas), and the
//! expectation is `choice LABEL`, `choices A|B`, `ambiguous A|B`, `free` or
//! `skip`.

use askbridge_core::model::{Ask, Choice, Question, QuestionKind, Unset};
use askbridge_core::resolve::{AskMatcher, OptionMatcher, Resolution};

fn describe(labels: &[&str], resolution: &Resolution) -> String {
    let names = |v: &[usize]| v.iter().map(|&i| labels[i]).collect::<Vec<_>>().join("|");
    match resolution {
        Resolution::Choice(i) => format!("choice {}", labels[*i]),
        Resolution::Choices(v) => format!("choices {}", names(v)),
        Resolution::Ambiguous(v) => format!("ambiguous {}", names(v)),
        Resolution::FreeText(_) => "free".to_owned(),
        Resolution::Skip => "skip".to_owned(),
    }
}

fn split_labels(options: &str) -> Vec<&str> {
    let separator = if options.contains(';') { ';' } else { ',' };
    options.split(separator).map(str::trim).collect()
}

/// Runs a table of `(options, reply, expected)` rows and reports every row
/// that disagrees, not just the first.
fn check(multi: bool, letters: bool, rows: &[(&str, &str, &str)]) {
    let mut failures = Vec::new();
    for (options, reply, expect) in rows {
        let labels = split_labels(options);
        let matcher = OptionMatcher::new(&labels, multi, letters);
        let got = describe(&labels, &matcher.resolve(reply));
        if got != *expect {
            failures.push(format!(
                "[{options}] {reply:?}: expected {expect:?}, got {got:?}"
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} rows failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

const DEPLOY: &str = "Staging (Recommended), Production";
const COLORS: &str = "Red, Green, Blue";
const LANGS: &str = "Python 3, Python 2, Go";

#[test]
fn exact_labels_win() {
    check(
        false,
        false,
        &[
            (DEPLOY, "Staging", "choice Staging (Recommended)"),
            (DEPLOY, "staging", "choice Staging (Recommended)"),
            (DEPLOY, "  PRODUCTION  ", "choice Production"),
            (
                DEPLOY,
                "Staging (Recommended)",
                "choice Staging (Recommended)",
            ),
            (
                DEPLOY,
                "staging (recommended)",
                "choice Staging (Recommended)",
            ),
            (DEPLOY, "Staging ⭐", "choice Staging (Recommended)"),
            (DEPLOY, "\"Production\"", "choice Production"),
            (DEPLOY, "**production**", "choice Production"),
            (DEPLOY, "`staging`", "choice Staging (Recommended)"),
            (DEPLOY, "production.", "choice Production"),
            (DEPLOY, "Production!", "choice Production"),
            ("Python, Python 3", "python", "choice Python"),
            ("Python, Python 3", "Python 3", "choice Python 3"),
            ("On-call, Team channel", "on call", "choice On-call"),
            ("On-call, Team channel", "oncall", "choice On-call"),
            ("Postgres, SQLite, MySQL", "my sql", "choice MySQL"),
            (
                "Red, green and blue; Red",
                "red, green and blue",
                "choice Red, green and blue",
            ),
            ("1, 2, 5", "5", "choice 5"),
            (
                "ＳＴＡＧＩＮＧ, Production",
                "staging",
                "choice ＳＴＡＧＩＮＧ",
            ),
            ("C++, Rust", "c++", "choice C++"),
        ],
    );
}

#[test]
fn sharp_s_and_other_full_case_folds_match_labels() {
    check(
        false,
        false,
        &[
            // One edit from "grüsse" once ß folds to ss: the misspelling rule.
            ("Grüße, Hallo", "GRUSSE", "choice Grüße"),
            ("Grüße, Hallo", "GRÜSSE", "choice Grüße"),
            ("Grüße, Hallo", "grüsse", "choice Grüße"),
            ("Grüße, Hallo", "Grüße!", "choice Grüße"),
            ("Weiß, Schwarz", "WEISS", "choice Weiß"),
            ("Weiß, Schwarz", "weiss", "choice Weiß"),
            ("Weiß, Schwarz", "weiß bitte", "choice Weiß"),
            ("Straße, Weg", "STRAẞE", "choice Straße"),
            ("STRASSE, WEG", "straße", "choice STRASSE"),
            ("Ofﬁce, Home", "OFFICE", "choice Ofﬁce"),
            ("Café, Bar", "CAFÉ", "choice Café"),
            ("Café, Bar", "cafe\u{301}", "choice Café"),
            ("ΟΔΟΣ, ΠΛΑΤΕΙΑ", "οδος", "choice ΟΔΟΣ"),
            (
                "Grüße, Hallo, Tschüss",
                "2, GRÜSSE",
                "ambiguous Grüße|Hallo",
            ),
        ],
    );
    check(
        true,
        false,
        &[("Grüße, Hallo, Weiß", "GRÜSSE, WEISS", "choices Grüße|Weiß")],
    );
}

#[test]
fn index_forms_pick_by_number() {
    check(
        false,
        false,
        &[
            (COLORS, "2", "choice Green"),
            (COLORS, "#2", "choice Green"),
            (COLORS, "(2)", "choice Green"),
            (COLORS, "2.", "choice Green"),
            (COLORS, "2)", "choice Green"),
            (COLORS, "[2]", "choice Green"),
            (COLORS, "option 2", "choice Green"),
            (COLORS, "Option #2", "choice Green"),
            (COLORS, "number 2", "choice Green"),
            (COLORS, "no. 2", "choice Green"),
            (COLORS, "the second one", "choice Green"),
            (COLORS, "second", "choice Green"),
            (COLORS, "2nd", "choice Green"),
            (COLORS, "the 2nd option", "choice Green"),
            (COLORS, "two", "choice Green"),
            (COLORS, "one", "choice Red"),
            (COLORS, "the first", "choice Red"),
            (COLORS, "last", "choice Blue"),
            (COLORS, "the last one", "choice Blue"),
            (COLORS, "third", "choice Blue"),
            (COLORS, "2️⃣", "choice Green"),
            (COLORS, "２", "choice Green"),
            (COLORS, "2 please", "choice Green"),
            (COLORS, "I'll go with 2", "choice Green"),
            (COLORS, "let's do option 3", "choice Blue"),
            (COLORS, "pick 1", "choice Red"),
            (COLORS, "I choose the third one", "choice Blue"),
            (COLORS, "0", "free"),
            (COLORS, "4", "free"),
            (COLORS, "2.5", "free"),
            (COLORS, "-1", "free"),
            (COLORS, "02", "free"),
            (COLORS, "fourth", "free"),
            (COLORS, "100", "free"),
        ],
    );
}

#[test]
fn chinese_and_thai_index_forms() {
    check(
        false,
        false,
        &[
            (COLORS, "第二个", "choice Green"),
            (COLORS, "第2个", "choice Green"),
            (COLORS, "选第三个吧", "choice Blue"),
            (COLORS, "选2", "choice Green"),
            (COLORS, "二", "choice Green"),
            (COLORS, "最后一个", "choice Blue"),
            (COLORS, "第一个", "choice Red"),
            (COLORS, "ข้อ 2", "choice Green"),
            (COLORS, "ข้อ2", "choice Green"),
            (COLORS, "อันที่สอง", "choice Green"),
            (COLORS, "เอาข้อ 3 ครับ", "choice Blue"),
            (COLORS, "ตัวเลือกที่ 1", "choice Red"),
            (COLORS, "อันแรก", "choice Red"),
            (COLORS, "๒", "choice Green"),
            (COLORS, "第五个", "free"),
        ],
    );
}

#[test]
fn letters_only_when_shown_as_letters() {
    check(
        false,
        true,
        &[
            ("Postgres, SQLite, MySQL", "A", "choice Postgres"),
            ("Postgres, SQLite, MySQL", "b)", "choice SQLite"),
            ("Postgres, SQLite, MySQL", "option C", "choice MySQL"),
            ("Postgres, SQLite, MySQL", "(c)", "choice MySQL"),
            ("Postgres, SQLite, MySQL", "B please", "choice SQLite"),
            ("Postgres, SQLite, MySQL", "A. Postgres", "choice Postgres"),
            (
                "Postgres, SQLite, MySQL",
                "A. SQLite",
                "ambiguous Postgres|SQLite",
            ),
            ("Postgres, SQLite, MySQL", "d", "free"),
            ("Postgres, SQLite, MySQL", "2", "choice SQLite"),
            (
                "Postgres, SQLite, MySQL",
                "a sqlite database please",
                "choice SQLite",
            ),
        ],
    );
    check(
        false,
        false,
        &[
            ("Postgres, SQLite, MySQL", "A", "free"),
            ("Postgres, SQLite, MySQL", "b", "free"),
            (
                "Postgres, SQLite, MySQL",
                "a sqlite database please",
                "choice SQLite",
            ),
            ("Plan A, Plan B", "B", "choice Plan B"),
            ("Plan A, Plan B", "plan b", "choice Plan B"),
        ],
    );
}

#[test]
fn words_prefixes_and_substrings() {
    check(
        false,
        false,
        &[
            (DEPLOY, "prod", "choice Production"),
            (DEPLOY, "stag", "choice Staging (Recommended)"),
            (DEPLOY, "deploy to staging", "choice Staging (Recommended)"),
            (
                DEPLOY,
                "let's go with production please",
                "choice Production",
            ),
            (DEPLOY, "staging for now", "choice Staging (Recommended)"),
            (DEPLOY, "yes, staging", "choice Staging (Recommended)"),
            (
                DEPLOY,
                "production because it's faster",
                "choice Production",
            ),
            (DEPLOY, "pr", "free"),
            (DEPLOY, "prodution", "choice Production"),
            (DEPLOY, "stagign", "choice Staging (Recommended)"),
            (
                "Team channel, On-call, Nobody",
                "team",
                "choice Team channel",
            ),
            (
                "Team channel, On-call, Nobody",
                "the channel",
                "choice Team channel",
            ),
            ("Python, PyPy, Go", "py", "free"),
            ("Python, PyPy, Go", "pyt", "choice Python"),
            ("Python 3.12, PyPy 3.10", "pyp", "choice PyPy 3.10"),
            (
                "Dark mode, Light mode",
                "mode",
                "ambiguous Dark mode|Light mode",
            ),
            ("Dark mode, Light mode", "dark", "choice Dark mode"),
            (
                "Use Postgres, Use SQLite",
                "postgres",
                "choice Use Postgres",
            ),
            (
                "Use Postgres, Use SQLite",
                "sqlite please",
                "choice Use SQLite",
            ),
            ("Keep going, Stop here", "keep", "choice Keep going"),
            (
                "Yes, deploy now; No, wait until Monday",
                "yes",
                "choice Yes, deploy now",
            ),
            (
                "Yes, deploy now; No, wait until Monday",
                "wait",
                "choice No, wait until Monday",
            ),
            ("🚀 Ship it, 🐢 Wait", "🚀", "choice 🚀 Ship it"),
            ("🚀 Ship it, 🐢 Wait", "ship", "choice 🚀 Ship it"),
            ("Red ❤️, Blue 💙", "💙", "choice Blue 💙"),
            ("Red ❤️, Blue 💙", "red", "choice Red ❤️"),
        ],
    );
}

#[test]
fn chinese_japanese_thai_labels() {
    check(
        false,
        false,
        &[
            ("生产环境, 测试环境", "生产环境", "choice 生产环境"),
            ("生产环境, 测试环境", "生产", "choice 生产环境"),
            ("生产环境, 测试环境", "用测试环境吧", "choice 测试环境"),
            ("生产环境, 测试环境", "测试", "choice 测试环境"),
            ("生产环境, 测试环境", "环境", "ambiguous 生产环境|测试环境"),
            ("生产环境, 测试环境", "第一个", "choice 生产环境"),
            ("生产环境, 测试环境", "「测试环境」", "choice 测试环境"),
            ("红色, 绿色, 蓝色", "蓝", "choice 蓝色"),
            ("红色, 绿色, 蓝色", "选蓝色", "choice 蓝色"),
            ("本番, ステージング", "ステージング", "choice ステージング"),
            ("本番, ステージング", "本番で", "choice 本番"),
            ("ตอนนี้, พรุ่งนี้", "พรุ่งนี้", "choice พรุ่งนี้"),
            ("ตอนนี้, พรุ่งนี้", "เอาพรุ่งนี้ครับ", "choice พรุ่งนี้"),
            ("ตอนนี้, พรุ่งนี้", "ขอเป็นตอนนี้เลย", "choice ตอนนี้"),
            ("ตอนนี้, พรุ่งนี้", "ข้อ 1", "choice ตอนนี้"),
            ("Staging, Production", "staging 吧", "choice Staging"),
        ],
    );
}

#[test]
fn index_and_label_that_disagree_are_ambiguous() {
    check(
        false,
        false,
        &[
            (LANGS, "3", "ambiguous Python 3|Go"),
            (LANGS, "2", "choice Python 2"),
            ("Python 2, Python 3, Go", "2", "ambiguous Python 2|Python 3"),
            (LANGS, "1", "choice Python 3"),
            (LANGS, "python 3", "choice Python 3"),
            (LANGS, "go", "choice Go"),
            ("Python 3, Go", "3", "choice Python 3"),
            ("1 hour, 2 hours, 1 day", "2", "choice 2 hours"),
            ("1 hour, 2 hours, 1 day", "1", "choice 1 hour"),
            ("1 hour, 2 hours, 1 day", "3", "choice 1 day"),
            ("10, 20, 30", "2", "choice 20"),
            (
                "Option 1 (fast), Option 2 (slow)",
                "2",
                "choice Option 2 (slow)",
            ),
            (
                "Option 1 (fast), Option 2 (slow)",
                "option 2",
                "choice Option 2 (slow)",
            ),
            (COLORS, "2. Green", "choice Green"),
            (COLORS, "2. Blue", "ambiguous Green|Blue"),
            (COLORS, "1 - red", "choice Red"),
        ],
    );
}

#[test]
fn several_picks_for_single_select_are_ambiguous() {
    check(
        false,
        false,
        &[
            (COLORS, "1, 2", "ambiguous Red|Green"),
            (COLORS, "1 or 2", "ambiguous Red|Green"),
            (COLORS, "red and blue", "ambiguous Red|Blue"),
            (COLORS, "red or green", "ambiguous Red|Green"),
            (COLORS, "2, option 2", "choice Green"),
            (COLORS, "1 3", "ambiguous Red|Blue"),
            (COLORS, "both", "ambiguous Red|Green|Blue"),
            ("Red, Green", "both", "ambiguous Red|Green"),
            (
                "Rock and roll, Metal",
                "rock and roll please",
                "choice Rock and roll",
            ),
            (
                "Rock and roll, Metal",
                "rock and metal",
                "ambiguous Rock and roll|Metal",
            ),
        ],
    );
}

#[test]
fn multi_select_lists() {
    let notify = "Team channel, On-call, Nobody";
    check(
        true,
        false,
        &[
            (notify, "1, 3", "choices Team channel|Nobody"),
            (notify, "1,3", "choices Team channel|Nobody"),
            (notify, "1 3", "choices Team channel|Nobody"),
            (notify, "1 and 3", "choices Team channel|Nobody"),
            (notify, "1 & 2", "choices Team channel|On-call"),
            (notify, "1+2", "choices Team channel|On-call"),
            (notify, "1;2", "choices Team channel|On-call"),
            (notify, "1，2", "choices Team channel|On-call"),
            (notify, "1、2", "choices Team channel|On-call"),
            (notify, "1\n2", "choices Team channel|On-call"),
            (notify, "2", "choices On-call"),
            (notify, "3, 1", "choices Team channel|Nobody"),
            (notify, "1, 1, 2", "choices Team channel|On-call"),
            (
                notify,
                "team channel and on-call",
                "choices Team channel|On-call",
            ),
            (notify, "team, on call", "choices Team channel|On-call"),
            (notify, "On-call", "choices On-call"),
            (notify, "all", "choices Team channel|On-call|Nobody"),
            (notify, "All of them", "choices Team channel|On-call|Nobody"),
            (notify, "everything", "choices Team channel|On-call|Nobody"),
            (notify, "all except 3", "choices Team channel|On-call"),
            (notify, "all but nobody", "choices Team channel|On-call"),
            (notify, "1-2", "choices Team channel|On-call"),
            (
                notify,
                "1, 2 and 3 please",
                "choices Team channel|On-call|Nobody",
            ),
            (
                notify,
                "the first and the last",
                "choices Team channel|Nobody",
            ),
            (notify, "1, 4", "free"),
            (notify, "1, pizza", "free"),
            (notify, "2 and maybe the CEO", "free"),
            (notify, "skip", "skip"),
            ("Red, Green", "both", "choices Red|Green"),
            ("Red, Green", "both of them", "choices Red|Green"),
            ("Red, Green, Blue", "全部", "choices Red|Green|Blue"),
            ("Red, Green, Blue", "ทั้งหมด", "choices Red|Green|Blue"),
            ("红色, 绿色, 蓝色", "红色、蓝色", "choices 红色|蓝色"),
            ("红色, 绿色, 蓝色", "红色，绿色", "choices 红色|绿色"),
            ("红色, 绿色, 蓝色", "1、3", "choices 红色|蓝色"),
        ],
    );
    check(
        true,
        true,
        &[
            ("Postgres, SQLite, MySQL", "a, c", "choices Postgres|MySQL"),
            ("Postgres, SQLite, MySQL", "A C", "choices Postgres|MySQL"),
            ("Postgres, SQLite, MySQL", "b and c", "choices SQLite|MySQL"),
        ],
    );
}

#[test]
fn a_list_with_an_unknown_item_is_free_text_not_a_partial_pick() {
    const CHECKS: &str = "Lint, Test, Build";
    check(
        true,
        false,
        &[
            (CHECKS, "lint, deploy", "free"),
            (CHECKS, "Lint, Deploy", "free"),
            (CHECKS, "lint and deploy", "free"),
            (CHECKS, "lint; test; deploy", "free"),
            (CHECKS, "lint\ndeploy", "free"),
            (CHECKS, "1, deploy", "free"),
            (CHECKS, "1, 2, 7", "free"),
            (CHECKS, "deploy, lint", "free"),
            (CHECKS, "lint + ship it", "free"),
            (CHECKS, "lint, test", "choices Lint|Test"),
            (CHECKS, "lint, test, please", "choices Lint|Test"),
            (CHECKS, "ok, lint and test", "choices Lint|Test"),
            (CHECKS, "lint and test thanks", "choices Lint|Test"),
            ("测试, 构建, 发布", "测试、部署", "free"),
            ("测试, 构建, 发布", "测试，构建", "choices 测试|构建"),
            ("ทดสอบ, สร้าง, ปล่อย", "ทดสอบ และ ติดตั้ง", "free"),
            ("ทดสอบ, สร้าง, ปล่อย", "ทดสอบ และ สร้าง", "choices ทดสอบ|สร้าง"),
        ],
    );
    check(
        false,
        false,
        &[
            (DEPLOY, "staging, tonight", "free"),
            (DEPLOY, "production, and roll back on errors", "free"),
            (DEPLOY, "yes, staging", "choice Staging (Recommended)"),
            (DEPLOY, "staging, please", "choice Staging (Recommended)"),
        ],
    );
}

#[test]
fn unknown_items_name_what_a_list_reply_left_over() {
    let checks = OptionMatcher::new(&["Lint", "Test", "Build"], true, false);
    let rows: &[(&str, &[&str])] = &[
        ("lint, deploy", &["deploy"]),
        ("Lint, Deploy!", &["Deploy"]),
        ("lint and DEPLOY and ship it", &["DEPLOY", "ship it"]),
        ("1, 7-9", &["7-9"]),
        ("1, 2, 7", &["7"]),
        ("测试、部署", &[]),
        ("lint, test", &[]),
        ("deploy", &[]),
        ("deploy, ship", &[]),
        ("2-9", &[]),
        ("can you explain lint, deploy?", &[]),
        ("skip", &[]),
    ];
    for (reply, expect) in rows {
        assert_eq!(checks.unknown_items(reply), *expect, "{reply:?}");
    }
    let chinese = OptionMatcher::new(&["测试", "构建", "发布"], true, false);
    assert_eq!(chinese.unknown_items("测试、部署"), ["部署"]);
    let single = OptionMatcher::new(&["Staging", "Production"], false, false);
    assert_eq!(single.unknown_items("staging, tonight"), ["tonight"]);
}

#[test]
fn ranges_pick_every_option_between() {
    const FOUR: &str = "Lint, Test, Build, Docs";
    check(
        true,
        false,
        &[
            (FOUR, "2-4", "choices Test|Build|Docs"),
            (FOUR, "2–4", "choices Test|Build|Docs"),
            (FOUR, "2 - 4", "choices Test|Build|Docs"),
            (FOUR, "2 to 4", "choices Test|Build|Docs"),
            (FOUR, "from 2 to 4", "choices Test|Build|Docs"),
            (FOUR, "2~4", "choices Test|Build|Docs"),
            (FOUR, "2～4", "choices Test|Build|Docs"),
            (FOUR, "2到4", "choices Test|Build|Docs"),
            (FOUR, "2至4", "choices Test|Build|Docs"),
            (FOUR, "从2到4", "choices Test|Build|Docs"),
            (FOUR, "2 ถึง 4", "choices Test|Build|Docs"),
            (FOUR, "ข้อ 2 ถึง 4", "choices Test|Build|Docs"),
            (FOUR, "1-2, 4", "choices Lint|Test|Docs"),
            (FOUR, "1 and 3-4", "choices Lint|Build|Docs"),
            (FOUR, "2-4 please", "choices Test|Build|Docs"),
            (FOUR, "1-4", "choices Lint|Test|Build|Docs"),
            (FOUR, "4-2", "free"),
            (FOUR, "2-9", "free"),
            (FOUR, "0-2", "free"),
            (FOUR, "1, 3-9", "free"),
            (FOUR, "2-4 days", "free"),
        ],
    );
    check(
        false,
        false,
        &[
            (FOUR, "2-4", "ambiguous Test|Build|Docs"),
            (FOUR, "2 to 3", "ambiguous Test|Build"),
            (FOUR, "2到3", "ambiguous Test|Build"),
            (FOUR, "4-2", "free"),
            (FOUR, "2-9", "free"),
            (COLORS, "1 - red", "choice Red"),
        ],
    );
    // A label that reads like a range is that label (docs/replies.md).
    const WEEKS: &str = "1 week, 2-4 weeks, More than a month";
    check(
        false,
        false,
        &[
            (WEEKS, "2-4 weeks", "choice 2-4 weeks"),
            (WEEKS, "2–4 weeks", "choice 2-4 weeks"),
            (WEEKS, "2-4", "choice 2-4 weeks"),
            (WEEKS, "2", "choice 2-4 weeks"),
        ],
    );
    check(
        true,
        false,
        &[
            (WEEKS, "2-4 weeks", "choices 2-4 weeks"),
            (WEEKS, "1 week, 2-4 weeks", "choices 1 week|2-4 weeks"),
        ],
    );
}

#[test]
fn questions_negations_and_counts_are_free_text() {
    check(
        false,
        false,
        &[
            (COLORS, "can you explain 2?", "free"),
            (COLORS, "what's the difference between 1 and 2?", "free"),
            (COLORS, "why red", "free"),
            (COLORS, "is blue safer?", "free"),
            (DEPLOY, "not production", "free"),
            (DEPLOY, "don't deploy to production", "free"),
            (DEPLOY, "neither", "free"),
            (DEPLOY, "no", "free"),
            (DEPLOY, "none", "free"),
            (DEPLOY, "I want 2 servers", "free"),
            (DEPLOY, "give me 2 minutes", "free"),
            (DEPLOY, "staging, but only after the tests pass", "free"),
            (DEPLOY, "production if the tests pass", "free"),
            (DEPLOY, "hold off until tomorrow", "free"),
            (DEPLOY, "ask the release manager first", "free"),
            (DEPLOY, "生产环境是什么意思", "free"),
            (DEPLOY, "不要生产", "free"),
            (DEPLOY, "staging?", "choice Staging (Recommended)"),
            (DEPLOY, "2?", "choice Production"),
            (
                DEPLOY,
                "staging, as planned",
                "choice Staging (Recommended)",
            ),
            ("None, Some, All", "none", "choice None"),
            (
                "Do not deploy, Deploy",
                "do not deploy",
                "choice Do not deploy",
            ),
            ("Nobody, Team", "nobody", "choice Nobody"),
        ],
    );
}

#[test]
fn idioms_and_hedges_that_start_like_an_answer_are_free_text() {
    const YES_NO: &str = "Yes, No";
    const ALWAYS: &str = "Always, Never";
    check(
        false,
        false,
        &[
            (YES_NO, "no clue", "free"),
            (YES_NO, "No idea", "free"),
            (YES_NO, "no worries", "free"),
            (YES_NO, "no problem", "free"),
            (YES_NO, "not sure", "free"),
            (YES_NO, "I'm not sure", "free"),
            (YES_NO, "I don't know", "free"),
            (YES_NO, "dunno", "free"),
            (YES_NO, "idk", "free"),
            (YES_NO, "maybe", "free"),
            (YES_NO, "maybe yes", "free"),
            (YES_NO, "yes, maybe", "free"),
            (YES_NO, "yes, but only on Fridays", "free"),
            (YES_NO, "yes but later", "free"),
            (YES_NO, "depends", "free"),
            (YES_NO, "it depends on the budget", "free"),
            (YES_NO, "let me think", "free"),
            (YES_NO, "hard to say", "free"),
            (YES_NO, "doesn't matter", "free"),
            (YES_NO, "no", "choice No"),
            (YES_NO, "no thanks", "choice No"),
            (YES_NO, "No, thank you", "choice No"),
            (YES_NO, "yes please", "choice Yes"),
            (YES_NO, "yes", "choice Yes"),
            (YES_NO, "no, not yet", "choice No"),
            (YES_NO, "not really", "choice No"),
            (YES_NO, "no way", "choice No"),
            (YES_NO, "sure thing", "choice Yes"),
            (YES_NO, "yes, definitely", "choice Yes"),
            (ALWAYS, "never mind, let me think", "free"),
            (ALWAYS, "never mind", "free"),
            (ALWAYS, "Never mind that", "free"),
            (ALWAYS, "nevermind", "free"),
            (ALWAYS, "always?", "choice Always"),
            (ALWAYS, "never", "choice Never"),
            (ALWAYS, "never please", "choice Never"),
            (ALWAYS, "always, thanks", "choice Always"),
            (DEPLOY, "maybe staging", "free"),
            (DEPLOY, "staging maybe", "free"),
            (DEPLOY, "perhaps production", "free"),
            (DEPLOY, "production, not sure though", "free"),
            (DEPLOY, "no idea, you pick", "free"),
            (DEPLOY, "up to you", "free"),
            (DEPLOY, "yes, production", "choice Production"),
            (DEPLOY, "2 please", "choice Production"),
            (DEPLOY, "production please", "choice Production"),
            ("Yes, No, Maybe", "maybe", "choice Maybe"),
            ("Yes, No, Maybe", "maybe later", "choice Maybe"),
            ("Never mind, Continue", "never mind", "choice Never mind"),
            (
                "No idea yet, Some idea",
                "no idea yet",
                "choice No idea yet",
            ),
            // Chinese: 不知道, 随便, 看情况, 再说吧, 是的，但是…
            ("是, 否", "不知道", "free"),
            ("是, 否", "随便", "free"),
            ("是, 否", "看情况吧", "free"),
            ("是, 否", "再说吧", "free"),
            ("是, 否", "是的，但是要先测试", "free"),
            ("是, 否", "是的但是要先测试", "free"),
            ("是, 否", "可能吧", "free"),
            ("是, 否", "是", "choice 是"),
            ("是, 否", "是的", "choice 是"),
            ("是, 否", "否", "choice 否"),
            ("生产环境, 测试环境", "生产环境，但是明天再说", "free"),
            ("生产环境, 测试环境", "不确定", "free"),
            ("生产环境, 测试环境", "用测试环境吧", "choice 测试环境"),
            // Thai: ไม่รู้, แล้วแต่, ไม่แน่ใจ, ใช่ แต่…
            ("ใช่, ไม่ใช่", "ไม่รู้", "free"),
            ("ใช่, ไม่ใช่", "แล้วแต่", "free"),
            ("ใช่, ไม่ใช่", "ไม่แน่ใจครับ", "free"),
            ("ใช่, ไม่ใช่", "ใช่ แต่ขอคิดก่อน", "free"),
            ("ใช่, ไม่ใช่", "อาจจะ", "free"),
            ("ใช่, ไม่ใช่", "ใช่", "choice ใช่"),
            ("ใช่, ไม่ใช่", "ใช่ครับ", "choice ใช่"),
            ("ใช่, ไม่ใช่", "ไม่ใช่", "choice ไม่ใช่"),
            ("ตอนนี้, พรุ่งนี้", "พรุ่งนี้ แต่ต้องถามหัวหน้าก่อน", "free"),
            ("ตอนนี้, พรุ่งนี้", "เอาพรุ่งนี้ครับ", "choice พรุ่งนี้"),
            ("แต่งตัว, นอน", "แต่งตัว", "choice แต่งตัว"),
        ],
    );
}

#[test]
fn corrections_keep_the_last_pick() {
    check(
        false,
        false,
        &[
            (COLORS, "1, actually 2", "choice Green"),
            (COLORS, "2, no wait, 3", "choice Blue"),
            (COLORS, "2 sorry 3", "choice Blue"),
            (COLORS, "red, I mean blue", "choice Blue"),
            (COLORS, "red... actually green", "choice Green"),
            (COLORS, "1, actually 2, no wait, 3", "choice Blue"),
            (COLORS, "2, sorry, I mean 3", "choice Blue"),
            (COLORS, "option 1 - or rather option 3", "choice Blue"),
            (COLORS, "1, actually 2 and 3", "ambiguous Green|Blue"),
            (COLORS, "2, actually can you explain 3?", "free"),
            (COLORS, "2, actually skip", "skip"),
            (COLORS, "2, actually", "choice Green"),
            (COLORS, "actually, 2", "choice Green"),
            // A correction takes back a pick; without one it is no correction.
            (COLORS, "hold on, actually 2", "free"),
            (DEPLOY, "Staging, I mean Production", "choice Production"),
            (
                DEPLOY,
                "production, no wait, staging",
                "choice Staging (Recommended)",
            ),
            ("Yes, No", "yes, actually no", "choice No"),
            (
                "Merge now, Wait for CI, Close the PR",
                "let's wait",
                "choice Wait for CI",
            ),
            ("红色, 绿色, 蓝色", "红色，我是说蓝色", "choice 蓝色"),
            ("红色, 绿色, 蓝色", "第一个，不对，第二个", "choice 绿色"),
            ("红色, 绿色, 蓝色", "1 不对 2", "choice 绿色"),
            ("红色, 绿色, 蓝色", "1 改成 3", "choice 蓝色"),
            (
                "红色, 绿色, 蓝色",
                "选红色，不对，应该是绿色",
                "choice 绿色",
            ),
            (COLORS, "ข้อ 1 ไม่ใช่ ข้อ 2", "choice Green"),
            (COLORS, "1 หมายถึง 3", "choice Blue"),
            ("ตอนนี้, พรุ่งนี้", "ตอนนี้ เอ้ย พรุ่งนี้", "choice พรุ่งนี้"),
        ],
    );
    let notify = "Team channel, On-call, Nobody";
    check(
        true,
        false,
        &[
            (notify, "1, 2, actually 3", "choices Nobody"),
            (notify, "1 and 2, I mean 2 and 3", "choices On-call|Nobody"),
            (notify, "team, no wait, nobody", "choices Nobody"),
            (notify, "1，2，不对，3", "choices Nobody"),
            (notify, "1 2 หมายถึง 3", "choices Nobody"),
            (notify, "1, actually 2-3", "choices On-call|Nobody"),
        ],
    );
}

#[test]
fn skip_words() {
    check(
        false,
        false,
        &[
            (COLORS, "skip", "skip"),
            (COLORS, "/skip", "skip"),
            (COLORS, "Skip.", "skip"),
            (COLORS, "跳过", "skip"),
            (COLORS, "ข้าม", "skip"),
            ("Skip tests, Run tests", "skip tests", "choice Skip tests"),
            ("Skip, Continue", "skip", "choice Skip"),
        ],
    );
}

/// Platform markup is undone by each platform's `parse`; the core sees
/// plain text, in which a leading mention of the bot remains.
#[test]
fn a_leading_mention_and_a_quote_marker_are_removed() {
    check(
        false,
        false,
        &[
            (DEPLOY, "@U024BE7LH 2", "choice Production"),
            (DEPLOY, "@alice staging", "choice Staging (Recommended)"),
            (DEPLOY, "@askbridge_bot 1", "choice Staging (Recommended)"),
            (DEPLOY, "@john.doe: prod", "choice Production"),
            ("R&D, Sales", "r&d", "choice R&D"),
            ("<none>, Some", "<none>", "choice <none>"),
            (DEPLOY, "> production", "choice Production"),
        ],
    );
}

#[test]
fn free_text_keeps_the_words_as_typed() {
    let matcher = OptionMatcher::new(&["Staging", "Production"], false, false);
    assert_eq!(
        matcher.resolve("  @U1 Deploy to Canary first  "),
        Resolution::FreeText("Deploy to Canary first".to_owned())
    );
    let multi = OptionMatcher::new(&["Red", "Green"], true, false);
    for reply in [
        "All except Red and Green",
        "Lint, Deploy",
        "Red, MAYBE Green",
    ] {
        assert_eq!(
            multi.resolve(reply),
            Resolution::FreeText(reply.to_owned()),
            "{reply:?}"
        );
    }
}

fn question(id: &str, header: &str, kind: QuestionKind, labels: &[&str]) -> Question {
    Question {
        id: id.to_owned(),
        header: header.to_owned(),
        text: format!("{header}?"),
        kind,
        options: labels
            .iter()
            .map(|l| Choice {
                label: (*l).to_owned(),
                description: None,
                value: None,
                recommended: false,
                prompt: None,
            })
            .collect(),
        default: None,
        placeholder: None,
        required: true,
        letters: false,
    }
}

#[test]
fn confirm_questions() {
    let confirm = OptionMatcher::for_question(&question("go", "Go", QuestionKind::Confirm, &[]));
    let rows: &[(&str, &str)] = &[
        ("yes", "choice yes"),
        ("Y", "choice yes"),
        ("yep", "choice yes"),
        ("sure, go ahead", "choice yes"),
        ("yes please", "choice yes"),
        ("👍", "choice yes"),
        ("lgtm", "choice yes"),
        ("是的", "choice yes"),
        ("好", "choice yes"),
        ("ใช่", "choice yes"),
        ("ได้ครับ", "choice yes"),
        ("no", "choice no"),
        ("nope", "choice no"),
        ("no, not yet", "choice no"),
        ("不要", "choice no"),
        ("ไม่", "choice no"),
        ("👎", "choice no"),
        ("yes, because it's safe", "choice yes"),
        ("yes but only on staging", "free"),
        ("what would it change?", "free"),
        ("skip", "skip"),
        ("maybe later", "free"),
        ("no clue", "free"),
        ("not sure", "free"),
        ("never mind", "free"),
        ("I don't know", "free"),
        ("maybe", "free"),
        ("yes, but not today", "free"),
        ("no problem", "free"),
        ("no thanks", "choice no"),
        ("yes, actually no", "choice no"),
        ("no, I mean yes", "choice yes"),
        ("不知道", "free"),
        ("是的，但是要先测试", "free"),
        ("随便", "free"),
        ("看情况", "free"),
        ("再说吧", "free"),
        ("是的，不对，不要", "choice no"),
        ("ไม่รู้", "free"),
        ("แล้วแต่", "free"),
        ("ไม่แน่ใจ", "free"),
        ("ใช่ แต่ขอดูก่อน", "free"),
        ("ใช่ครับ", "choice yes"),
    ];
    let labels = ["yes", "no"];
    let failures: Vec<String> = rows
        .iter()
        .filter_map(|(reply, expect)| {
            let got = describe(&labels, &confirm.resolve(reply));
            (got != *expect).then(|| format!("{reply:?}: expected {expect:?}, got {got:?}"))
        })
        .collect();
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn text_questions_take_the_words() {
    let text = OptionMatcher::for_question(&question("why", "Why", QuestionKind::Text, &[]));
    assert_eq!(text.resolve("2"), Resolution::FreeText("2".to_owned()));
    assert_eq!(
        text.resolve("Because."),
        Resolution::FreeText("Because.".to_owned())
    );
    assert_eq!(text.resolve("skip"), Resolution::Skip);
}

fn release_ask() -> Ask {
    Ask {
        title: Some("Release 2.4".to_owned()),
        context: None,
        thread: None,
        questions: vec![
            question(
                "deploy_target",
                "Deploy",
                QuestionKind::Single,
                &["Staging (Recommended)", "Production"],
            ),
            question(
                "notify",
                "Notify",
                QuestionKind::Multi,
                &["Team channel", "On-call", "Nobody"],
            ),
            question("notes", "Notes", QuestionKind::Text, &[]),
        ],
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

/// Runs a multi-question reply and describes each answered question as
/// `id=expectation`, joined by `; `.
fn check_ask(reply: &str, open: &[usize], expect: &str) {
    let ask = release_ask();
    let matcher = AskMatcher::new(&ask);
    let got: Vec<String> = matcher
        .resolve(reply, open)
        .iter()
        .map(|(q, resolution)| {
            let question = &ask.questions[*q];
            let labels: Vec<&str> = question.options.iter().map(|o| o.label.as_str()).collect();
            let described = match resolution {
                Resolution::FreeText(text) => format!("free {text}"),
                other => describe(&labels, other),
            };
            format!("{}={described}", question.id)
        })
        .collect();
    assert_eq!(got.join("; "), expect, "{reply:?}");
}

#[test]
fn multi_question_replies() {
    let all = [0, 1, 2];
    check_ask(
        "Deploy: staging; Notify: all",
        &all,
        "deploy_target=choice Staging (Recommended); notify=choices Team channel|On-call|Nobody",
    );
    check_ask(
        "1: prod 2: nobody",
        &all,
        "deploy_target=choice Production; notify=choices Nobody",
    );
    check_ask(
        "deploy_target=2, notify=1",
        &all,
        "deploy_target=choice Production; notify=choices Team channel",
    );
    check_ask(
        "deploy_target = 1; notify = 2",
        &all,
        "deploy_target=choice Staging (Recommended); notify=choices On-call",
    );
    check_ask("Q3: meet at 10:30", &all, "notes=free meet at 10:30");
    check_ask(
        "Q3: note: check the logs first",
        &all,
        "notes=free note: check the logs first",
    );
    check_ask(
        "Q1: 2\nQ2: 1, 3\nQ3: ship it friday",
        &all,
        "deploy_target=choice Production; notify=choices Team channel|Nobody; notes=free ship it friday",
    );
    check_ask(
        "q1 2 q2 1,3",
        &all,
        "deploy_target=choice Production; notify=choices Team channel|Nobody",
    );
    check_ask(
        "Q1: 2, Q2: 1 3",
        &all,
        "deploy_target=choice Production; notify=choices Team channel|Nobody",
    );
    check_ask(
        "1: staging\n2: all",
        &all,
        "deploy_target=choice Staging (Recommended); notify=choices Team channel|On-call|Nobody",
    );
    check_ask(
        "deploy: prod\nnotify: on-call",
        &all,
        "deploy_target=choice Production; notify=choices On-call",
    );
    check_ask(
        "deploy_target = 1",
        &all,
        "deploy_target=choice Staging (Recommended)",
    );
    check_ask(
        "Notify: team\nDeploy: production",
        &all,
        "deploy_target=choice Production; notify=choices Team channel",
    );
    check_ask(
        "2\n1, 3\nlooks good",
        &all,
        "deploy_target=choice Production; notify=choices Team channel|Nobody; notes=free looks good",
    );
    check_ask("2", &all, "deploy_target=choice Production");
    check_ask(
        "1) 2\n2) 1, 3",
        &all,
        "deploy_target=choice Production; notify=choices Team channel|Nobody",
    );
    check_ask(
        "1. staging\n2. on-call\n3. none",
        &all,
        "deploy_target=choice Staging (Recommended); notify=choices On-call; notes=free none",
    );
    check_ask(
        "2; 1,3; fine",
        &all,
        "deploy_target=choice Production; notify=choices Team channel|Nobody; notes=free fine",
    );
    check_ask("Q2: 1", &all, "notify=choices Team channel");
    check_ask(
        "Q1: skip\nQ2: 2",
        &all,
        "deploy_target=skip; notify=choices On-call",
    );
    check_ask("skip", &all, "deploy_target=skip; notify=skip; notes=skip");
    check_ask("Q1: 3", &all, "deploy_target=free 3");
    check_ask(
        "Q3: line one\nline two",
        &all,
        "notes=free line one\nline two",
    );
    // Only open questions are answered: Q1 was answered before.
    check_ask("1, 3", &[1, 2], "notify=choices Team channel|Nobody");
    check_ask("Q1: 2\nQ2: 3", &[1], "notify=choices Nobody");
    check_ask("", &all, "");
    check_ask("anything", &[], "");
}

#[test]
fn unknown_items_of_a_multi_question_reply_are_named_per_question() {
    let matcher = AskMatcher::new(&release_ask());
    let all = [0, 1, 2];
    // `question index=items|…`, questions joined by `; `.
    let rows: &[(&str, &[usize], &str)] = &[
        ("Q1: 2\nQ2: 1, the CEO", &all, "1=the CEO"),
        ("2\nteam, CEO, board", &all, "1=CEO|board"),
        ("Q2: 1, 3", &all, ""),
        ("Q2: 1, the CEO", &[0], ""),
        ("Q3: notes, more notes", &all, ""),
        ("skip", &all, ""),
    ];
    for (reply, open, expect) in rows {
        let got: Vec<String> = matcher
            .unknown_items(reply, open)
            .iter()
            .map(|(q, items)| format!("{q}={}", items.join("|")))
            .collect();
        assert_eq!(got.join("; "), *expect, "{reply:?}");
    }
}

#[test]
fn everyday_phrasings() {
    check(
        false,
        false,
        &[
            (DEPLOY, "recommended", "choice Staging (Recommended)"),
            (
                DEPLOY,
                "go with the recommended one",
                "choice Staging (Recommended)",
            ),
            (DEPLOY, "the default", "choice Staging (Recommended)"),
            (
                DEPLOY,
                "whatever you recommend",
                "choice Staging (Recommended)",
            ),
            (DEPLOY, "what do you recommend?", "free"),
            (COLORS, "recommended", "free"),
            (DEPLOY, "deploy it to prod", "choice Production"),
            (DEPLOY, "stage", "choice Staging (Recommended)"),
            (DEPLOY, "up to you", "free"),
            (DEPLOY, "either is fine", "free"),
            (COLORS, "give me option 2", "choice Green"),
            (COLORS, "either 1 or 2", "ambiguous Red|Green"),
            (COLORS, "I want 2", "choice Green"),
            (COLORS, "2 works for me", "choice Green"),
            (COLORS, "explain option 2", "free"),
            (COLORS, "tell me more about 2", "free"),
            (COLORS, "①", "choice Red"),
            (
                "Postgres, SQLite, MySQL",
                "I'd prefer postgres over mysql",
                "choice Postgres",
            ),
            (
                "Postgres, SQLite, MySQL",
                "sqlite or postgres",
                "ambiguous Postgres|SQLite",
            ),
            ("Go, Rust, Zig", "let's go with rust", "choice Rust"),
            ("Go, Rust, Zig", "go", "choice Go"),
            ("Yes, No", "yeah", "choice Yes"),
            ("Yes, No", "nope", "choice No"),
            ("Yes, No", "nah, not now", "choice No"),
            ("Yes, No", "definitely not", "choice No"),
            ("Yes, No", "of course not", "choice No"),
            ("Yes, No", "yes, definitely", "choice Yes"),
            ("Yes, No", "sure thing", "choice Yes"),
            ("Red, Green, Blue", "2 🙏", "choice Green"),
            (
                "Merge now, Wait for CI, Close the PR",
                "let's wait",
                "choice Wait for CI",
            ),
            (
                "Merge now, Wait for CI, Close the PR",
                "close it",
                "choice Close the PR",
            ),
            (
                "Merge now, Wait for CI, Close the PR",
                "don't merge",
                "free",
            ),
            (
                "Small (1 vCPU), Medium (2 vCPU), Large (4 vCPU)",
                "2 vCPU",
                "choice Medium (2 vCPU)",
            ),
            ("方案1, 方案2, 方案3", "第二个", "choice 方案2"),
            ("方案1, 方案2, 方案3", "2", "choice 方案2"),
            ("東京, 大阪, 名古屋", "2番", "choice 大阪"),
            ("東京, 大阪, 名古屋", "大阪で", "choice 大阪"),
            (
                "Fix now, Fix later, Won't fix",
                "wont fix",
                "choice Won't fix",
            ),
            (
                "Fix now, Fix later, Won't fix",
                "won’t fix",
                "choice Won't fix",
            ),
            ("Fix now, Fix later, Won't fix", "don't fix", "free"),
            ("👍 Approve, 👎 Reject", "👎", "choice 👎 Reject"),
            ("👍 Approve, 👎 Reject", "yes", "choice 👍 Approve"),
            ("Q&A session, Demo, Workshop", "q&a", "choice Q&A session"),
        ],
    );
    check(
        false,
        true,
        &[("Red, Green, Blue", "I think B", "choice Green")],
    );
    check(
        true,
        false,
        &[
            (
                "React, Vue, Svelte, Angular",
                "the last two",
                "choices Svelte|Angular",
            ),
            (
                "React, Vue, Svelte, Angular",
                "first 2",
                "choices React|Vue",
            ),
            (
                "React, Vue, Svelte, Angular",
                "only svelte",
                "choices Svelte",
            ),
            (
                "React, Vue, Svelte, Angular",
                "everything except angular",
                "choices React|Vue|Svelte",
            ),
            ("React, Vue, Svelte, Angular", "none of them", "free"),
            ("红色, 绿色, 蓝色", "1和3", "choices 红色|蓝色"),
            ("红色, 绿色, 蓝色", "红色和蓝色", "choices 红色|蓝色"),
            ("红色, 绿色, 蓝色", "都要", "choices 红色|绿色|蓝色"),
            ("红色, 绿色, 蓝色", "第一和第三", "choices 红色|蓝色"),
            (
                "Team channel, On-call, Nobody",
                "1 2 and 3",
                "choices Team channel|On-call|Nobody",
            ),
            ("Team channel, On-call, Nobody", "2 🙏", "choices On-call"),
            (
                "Team channel, On-call, Nobody",
                "1 และ 3",
                "choices Team channel|Nobody",
            ),
            (
                "Team channel, On-call, Nobody",
                "２，３",
                "choices On-call|Nobody",
            ),
            (
                "Team channel, On-call, Nobody",
                "1 & 2",
                "choices Team channel|On-call",
            ),
        ],
    );
}

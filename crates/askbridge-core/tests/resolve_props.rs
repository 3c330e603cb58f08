//! Properties of the resolver: it never panics, is deterministic, only
//! ever names options that exist, and names unknown items only for a reply
//! that is free text.

use askbridge_core::model::{Ask, Choice, Question, QuestionKind, Unset};
use askbridge_core::resolve::{AskMatcher, OptionMatcher, Resolution};
use proptest::prelude::*;

fn reply_strategy() -> impl Strategy<Value = String> {
    prop_oneof![
        any::<String>(),
        "[0-9 ,;.#()a-zA-Z]{0,20}",
        proptest::collection::vec(
            prop_oneof![
                Just("1"),
                Just("2"),
                Just("skip"),
                Just("and"),
                Just(","),
                Just("第二个"),
                Just("ข้อ"),
                Just("not"),
                Just("?"),
                Just("all"),
                Just("q1:"),
                Just("\n"),
                Just("@U1"),
                Just("&"),
                Just("staging"),
                Just("a"),
                Just("２"),
                Just("2️⃣"),
                Just("2-4"),
                Just("to"),
                Just("actually"),
                Just("no wait"),
                Just("不对"),
                Just("maybe"),
                Just("no clue"),
                Just("但是"),
                Just("ß"),
                Just("deploy"),
            ],
            0..8,
        )
        .prop_map(|parts| parts.join(" ")),
    ]
}

fn labels_strategy() -> impl Strategy<Value = Vec<String>> {
    proptest::collection::vec(
        prop_oneof![
            any::<String>(),
            "[a-zA-Z0-9 ]{1,12}",
            Just("Staging (Recommended)".to_owned())
        ],
        1..6,
    )
}

fn in_range(resolution: &Resolution, count: usize) -> bool {
    match resolution {
        Resolution::Choice(i) => *i < count,
        Resolution::Choices(v) | Resolution::Ambiguous(v) => {
            !v.is_empty() && v.iter().all(|i| *i < count) && v.windows(2).all(|w| w[0] < w[1])
        }
        Resolution::FreeText(_) | Resolution::Skip => true,
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(600))]

    #[test]
    fn option_matcher_never_panics_and_is_deterministic(
        labels in labels_strategy(),
        multi in any::<bool>(),
        letters in any::<bool>(),
        reply in reply_strategy(),
    ) {
        let refs: Vec<&str> = labels.iter().map(String::as_str).collect();
        let matcher = OptionMatcher::new(&refs, multi, letters);
        let first = matcher.resolve(&reply);
        prop_assert_eq!(&first, &matcher.resolve(&reply));
        prop_assert!(in_range(&first, refs.len()), "{:?}", first);
        if !multi {
            prop_assert!(!matches!(first, Resolution::Choices(_)));
        }
        // Items are named only for a reply that resolved to free text.
        let unknown = matcher.unknown_items(&reply);
        prop_assert!(unknown.is_empty() || matches!(first, Resolution::FreeText(_)), "{:?}", unknown);
    }

    #[test]
    fn ask_matcher_never_panics(reply in reply_strategy(), open in proptest::collection::vec(0usize..5, 0..5)) {
        let question = |id: &str, kind: QuestionKind, labels: &[&str]| Question {
            id: id.to_owned(),
            header: id.to_owned(),
            text: format!("{id}?"),
            kind,
            options: labels.iter().map(|l| Choice {
                label: (*l).to_owned(), description: None, value: None, recommended: false, prompt: None,
            }).collect(),
            default: None,
            placeholder: None,
            required: true,
            letters: false,
        };
        let ask = Ask {
            title: None,
            context: None,
            thread: None,
            questions: vec![
                question("deploy", QuestionKind::Single, &["Staging", "Production"]),
                question("notify", QuestionKind::Multi, &["Team", "On-call", "Nobody"]),
                question("go", QuestionKind::Confirm, &[]),
                question("notes", QuestionKind::Textarea, &[]),
            ],
            timeout_seconds: 900,
            target: None,
            also: Vec::new(),
            escalate: Vec::new(),
            remind: None,
            callback: None,
            approval: false,
            unset: Unset::default(),
        };
        let matcher = AskMatcher::new(&ask);
        let resolved = matcher.resolve(&reply, &open);
        prop_assert_eq!(&resolved, &matcher.resolve(&reply, &open));
        for (q, _) in &resolved {
            prop_assert!(open.contains(q));
        }
    }
}

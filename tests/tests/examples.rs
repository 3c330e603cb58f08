//! Every ask file under `examples/` is valid and renders in every locale: the
//! README points newcomers at them, so they must keep working.

use std::path::{Path, PathBuf};

use askbridge_core::normalize::normalize_input;
use askbridge_core::render::{Locale, text_prompt};

fn examples() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("examples/ exists")
        .map(|entry| entry.expect("dir entry").path())
        // Folders hold programs that use askbridge (examples/langgraph).
        .filter(|path| path.is_file())
        .collect();
    files.sort();
    assert!(
        files.len() >= 5,
        "expected the shipped examples in {}",
        dir.display()
    );
    files
}

#[test]
fn every_example_normalizes_and_renders() {
    for path in examples() {
        let input = std::fs::read_to_string(&path).expect("read example");
        let normalized = normalize_input(&input)
            .unwrap_or_else(|errors| panic!("{}: {errors:?}", path.display()));
        assert!(!normalized.ask.questions.is_empty(), "{}", path.display());
        for locale in [Locale::En, Locale::ZhCn, Locale::Th] {
            let prompt = text_prompt(&normalized.ask, locale);
            assert!(
                !prompt.trim().is_empty(),
                "{} in {locale:?}",
                path.display()
            );
        }
    }
}

#[test]
fn the_claude_code_example_loses_its_other_option_with_a_warning() {
    let input = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/claude-code.json"),
    )
    .expect("read example");
    let normalized = normalize_input(&input).expect("valid");
    let question = &normalized.ask.questions[0];
    assert_eq!(question.id, "auth_method");
    assert!(question.options.iter().all(|o| o.label != "Other"));
    assert!(
        normalized
            .warnings
            .iter()
            .any(|w| w.message.to_lowercase().contains("other")),
        "{:?}",
        normalized.warnings
    );
}

#[test]
fn the_release_example_answers_through_the_cli_resolver() {
    let input = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/release.json"),
    )
    .expect("read example");
    let ask = normalize_input(&input).expect("valid").ask;
    let resolved = askbridge::commands::resolve::against_ask(&ask, "Q1: 2\nQ2: 1, 3");
    let json = serde_json::to_value(&resolved).expect("json");
    assert_eq!(json["answers"][0]["id"], "deploy_target");
    assert_eq!(
        json["answers"][0]["values"],
        serde_json::json!(["Production"])
    );
    assert_eq!(
        json["answers"][1]["values"],
        serde_json::json!(["Team channel", "Nobody"])
    );
    assert_eq!(json["unanswered"], serde_json::json!([]));
}

//! Any input, JSON or text: the normaliser must not panic, and a valid ask
//! must respect the hard limits.
#![no_main]

use askbridge_core::model::limits;
use askbridge_core::normalize::normalize_input;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    if let Ok(normalized) = normalize_input(&text) {
        let ask = normalized.ask;
        assert!(!ask.questions.is_empty() && ask.questions.len() <= limits::MAX_QUESTIONS);
        assert!((limits::MIN_TIMEOUT_SECONDS..=limits::MAX_TIMEOUT_SECONDS).contains(&ask.timeout_seconds));
        for question in &ask.questions {
            assert!(question.options.len() <= limits::MAX_OPTIONS);
            assert!(question.header.chars().count() <= limits::MAX_HEADER_CHARS);
        }
    }
});

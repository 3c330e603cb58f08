//! Any labels, any reply: the resolver must not panic and must name only
//! options that exist. Input: lines; the first byte picks multi/letters, the
//! last line is the reply, the others are labels.
#![no_main]

use askbridge_core::resolve::{AskMatcher, OptionMatcher, Resolution};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&flags, rest)) = data.split_first() else {
        return;
    };
    let text = String::from_utf8_lossy(rest);
    let mut lines: Vec<&str> = text.split('\n').collect();
    let reply = lines.pop().unwrap_or_default();
    if lines.is_empty() {
        return;
    }
    let matcher = OptionMatcher::new(&lines, flags & 1 == 1, flags & 2 == 2);
    match matcher.resolve(reply) {
        Resolution::Choice(i) => assert!(i < lines.len()),
        Resolution::Choices(v) | Resolution::Ambiguous(v) => {
            assert!(!v.is_empty() && v.iter().all(|i| *i < lines.len()));
        }
        Resolution::FreeText(_) | Resolution::Skip => {}
    }
    if let Ok(normalized) = askbridge_core::normalize::normalize_input(&text) {
        let open: Vec<usize> = (0..normalized.ask.questions.len()).collect();
        let _ = AskMatcher::new(&normalized.ask).resolve(reply, &open);
    }
});

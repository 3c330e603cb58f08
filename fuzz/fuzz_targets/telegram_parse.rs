//! Any bytes as a Bot API update (webhook body or `getUpdates` entry): if
//! it reads as an `Update`, `parse` and `inbound` must not panic, and they
//! must agree on whether askbridge acts on it.
#![no_main]

use askbridge_telegram::parse::{self, Update};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(update) = serde_json::from_slice::<Update>(data) else {
        return;
    };
    let event = parse::parse(&update);
    let inbound = parse::inbound(&update);
    assert_eq!(event.is_some(), inbound.is_some());
});

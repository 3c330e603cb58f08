//! Any bytes as an Events API body and as an interactivity form body
//! (`payload=…`): reading them, turning what askbridge acts on into the
//! core's inbound, and cleaning the bytes as message text must not panic;
//! a message kept is never blank.
#![no_main]

use askbridge_slack::parse::{self, Delivered, Event, EventsBody};
use libfuzzer_sys::fuzz_target;
use slack_morphism::prelude::SlackUserId;

fuzz_target!(|data: &[u8]| {
    // The bot user of the fixtures in crates/askbridge-slack/tests/fixtures.
    let bot = SlackUserId("U0BOT00001".to_owned());
    if let Ok(EventsBody::Event(Some(Delivered { key, event }))) = parse::events_body(data, &bot) {
        assert!(key.starts_with("event:"));
        if let Event::Text(message) = &event {
            assert!(!message.text.trim().is_empty());
        }
        let _ = parse::inbound(event);
    }
    if let Ok(Some(delivered)) = parse::interactivity_body(data) {
        let _ = parse::inbound(delivered.event);
    }
    let text = String::from_utf8_lossy(data);
    let _ = parse::clean_text(&text, Some(&bot));
    let _ = parse::clean_text(&text, None);
});

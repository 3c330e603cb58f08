//! Any bytes as a pushed body, plain and as an HTTP callback encrypted
//! with a known key: reading it (with and without the bot's `open_id`),
//! turning what askbridge acts on into the core's inbound, and undoing
//! mentions in the bytes as message text must not panic; a message kept is
//! never blank.
#![no_main]

use askbridge_feishu::parse::{self, Event, Push};
use askbridge_feishu::run::CallbackCheck;
use libfuzzer_sys::fuzz_target;
use serde_json::{Value, json};

/// The encrypt key the encrypted seeds in fuzz/corpus/feishu_parse use.
const ENCRYPT_KEY: &str = "fuzz-encrypt-key";

fn read(body: &[u8]) {
    for bot in [Some("ou_bot"), None] {
        if let Ok(Push::Pushed {
            event: Some(event), ..
        }) = parse::push(body, bot)
        {
            if let Event::Text(message) = &event {
                assert!(!message.text.trim().is_empty());
            }
            let _ = parse::inbound(event);
        }
    }
}

fuzz_target!(|data: &[u8]| {
    read(data);
    if let Ok(plain) = CallbackCheck::new(Some(ENCRYPT_KEY), None).decrypt(data) {
        read(&plain);
    }
    let text = String::from_utf8_lossy(data);
    let mentions: [Value; 2] = [
        json!({"key": "@_user_1", "id": {"open_id": "ou_bot"}, "name": "askbridge"}),
        json!({"key": "@_user_2", "id": {"open_id": "ou_carol"}, "name": "Carol"}),
    ];
    for bot in [Some("ou_bot"), None] {
        let _ = parse::undo_mentions(&text, &[], bot);
        let _ = parse::undo_mentions(&text, &mentions, bot);
    }
});

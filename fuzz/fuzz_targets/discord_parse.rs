//! Any bytes as an HTTP interaction body and as a gateway `MESSAGE_CREATE`
//! (`d`): reading them, turning what askbridge acts on into the core's
//! inbound, and cleaning the bytes as message text must not panic; a
//! message kept is never blank.
//!
//! Known upstream panic: serenity 0.12.5's `ImageHash::from_str`
//! (src/model/misc.rs:146) slices a 32- or 34-byte `avatar`/`icon`/… hash
//! two bytes at a time and panics when the string is not ASCII. With
//! `ASKBRIDGE_FUZZ_SKIP_SERENITY_IMAGEHASH=1` that one panic (by its
//! location) is caught and the input skipped, so the rest of the parsing can
//! still be fuzzed; without it, it crashes like any other panic.
#![no_main]

use std::panic::{self, AssertUnwindSafe};
use std::sync::OnceLock;

use askbridge_discord::parse::{self, HttpInteraction};
use libfuzzer_sys::fuzz_target;
use serenity::model::channel::Message;
use serenity::model::id::UserId;

/// The bot user of the fixtures in crates/askbridge-discord/tests/fixtures.
const BOT: u64 = 1_100_000_000_000_000_001;

static SKIP_IMAGEHASH: OnceLock<bool> = OnceLock::new();

/// The known serenity panic's location.
fn is_imagehash_panic(info: &panic::PanicHookInfo<'_>) -> bool {
    info.location().is_some_and(|at| {
        at.file().contains("serenity-0.12.") && at.file().ends_with("src/model/misc.rs")
    })
}

/// Installs (once) a panic hook that lets the known serenity panic unwind
/// quietly and hands any other panic to libFuzzer's hook (which aborts).
fn skip_imagehash() -> bool {
    *SKIP_IMAGEHASH.get_or_init(|| {
        let skip =
            std::env::var_os("ASKBRIDGE_FUZZ_SKIP_SERENITY_IMAGEHASH").is_some_and(|v| v == "1");
        if skip {
            let fuzzer_hook = panic::take_hook();
            panic::set_hook(Box::new(move |info| {
                if !is_imagehash_panic(info) {
                    fuzzer_hook(info);
                }
            }));
        }
        skip
    })
}

fn run(data: &[u8], bot_id: UserId) {
    if let Ok(HttpInteraction::Event(Some(event))) = parse::http_interaction(data) {
        let _ = parse::inbound(event);
    }
    if let Ok(message) = serde_json::from_slice::<Message>(data)
        && let Some(text) = parse::message(&message, bot_id)
    {
        assert!(!text.text.trim().is_empty());
        let _ = parse::inbound(parse::Event::Text(text));
    }
}

fuzz_target!(|data: &[u8]| {
    let bot_id = UserId::new(BOT);
    if skip_imagehash() {
        // Only the serenity panic reaches here: the hook aborts on any other.
        let _ = panic::catch_unwind(AssertUnwindSafe(|| run(data, bot_id)));
    } else {
        run(data, bot_id);
    }
    let text = String::from_utf8_lossy(data);
    let _ = parse::clean_text(&text, bot_id, &[]);
});

//! Feishu delivery and card-callback answers under a burst, printed, not
//! asserted: 1,000 asks to 100 chats created as fast as possible,
//! delivered through the real Feishu channel (its Open API client) to the
//! local fake Feishu with Feishu's limits switched on (50 messages a
//! second per app, 5 a second per chat); then a button pressed on every
//! card at once, over the fake's real long connection.
//!
//! Figures: time to create the asks; time until the fake has stored every
//! card; messages a second as a share of the most the app-wide limit
//! allows; the `429`s and `230020`s the fake returned (each waited out by
//! askbridge's outbox); asks lost; and for the presses, how long each
//! callback waited for its answer as the fake measured it, and how many
//! Feishu would have shown as failed (answered later than 3 s, or not at
//! all: must be zero).
//!
//! `cargo bench -p askbridge --bench feishu_burst` sends 1,000 asks (about
//! 20 s, set by the limits); `-- 300` sends 300. Everything talks to
//! 127.0.0.1 only and stops by itself.

mod burst;

use std::sync::Arc;
use std::time::{Duration, Instant};

use askbridge::bridge::{Bridge, BridgeOptions};
use askbridge::channels::feishu::Feishu;
use askbridge::config::{FeishuConfig, FeishuMode, Secret};
use askbridge_core::model::Target;
use askbridge_core::normalize::normalize_json;
use askbridge_core::render::{Locale, Mode};
use askbridge_testkit::feishu::{FakeFeishu, RateLimits};
use serde_json::{Value, json};

/// Asks sent unless the command line says otherwise.
const DEFAULT_ASKS: usize = 1_000;
/// Chats the asks go to, round robin.
const CHATS: usize = 100;
const ALICE: &str = "ou_alice000000000000000000000000001";

fn chat(n: usize) -> String {
    format!("oc_burst{:03}", n % CHATS)
}

fn ask_json(n: usize) -> Value {
    json!({
        "to": format!("feishu:{}", chat(n)),
        "questions": [{
            "question": format!("Ship build {n}?"),
            "options": ["Staging (Recommended)", "Production"]
        }]
    })
}

/// The moment this bench saw each card appear.
async fn watch_posts(fake: Arc<FakeFeishu>, total: usize) -> Vec<Instant> {
    let mut seen: Vec<Instant> = Vec::with_capacity(total);
    while seen.len() < total {
        let done = seen.len();
        let fresh = fake
            .wait_for("more posted cards", |state| {
                let posted = state.bot_messages().len();
                (posted > done).then_some(posted - done)
            })
            .await;
        let now = Instant::now();
        seen.extend(std::iter::repeat_n(now, fresh));
    }
    seen
}

/// The `name` of the button showing `text`.
fn button(card: &Value, text: &str) -> Option<String> {
    match card {
        Value::Object(object) => {
            if object.get("tag") == Some(&json!("button")) && object["text"]["content"] == text {
                return object["name"].as_str().map(str::to_owned);
            }
            object.values().find_map(|child| button(child, text))
        }
        Value::Array(list) => list.iter().find_map(|child| button(child, text)),
        _ => None,
    }
}

async fn run(dir: &std::path::Path, total: usize) {
    let fake = Arc::new(
        FakeFeishu::builder()
            .rate_limits(RateLimits::feishu())
            .wait_timeout(Duration::from_secs(300))
            .start()
            .await,
    );
    let chats = total.min(CHATS);
    for n in 0..chats {
        fake.add_chat(&chat(n), &format!("c{n}"));
    }
    fake.add_user(ALICE, "Alice");

    let url = burst::database_url(dir);
    let bridge = Bridge::open(BridgeOptions::new(url, Target::parse("web").expect("web")))
        .await
        .expect("open bridge");
    let feishu = Feishu::new(
        &bridge,
        &FeishuConfig {
            app_id: fake.app_id(),
            app_secret: Secret::new(fake.app_secret()),
            api_url: Some(fake.api_url()),
            mode: FeishuMode::LongConnection,
            verification_token: Some(Secret::new(fake.verification_token())),
            render: Mode::Buttons,
            locale: Locale::En,
            allowed_users: vec![],
        },
    )
    .expect("Feishu channel");
    let _connection = feishu.start();
    fake.wait_for_open_connections(1).await;

    let asks: Vec<_> = (0..total)
        .map(|n| normalize_json(&ask_json(n)).expect("valid ask").ask)
        .collect();
    let watcher = tokio::spawn(watch_posts(Arc::clone(&fake), total));
    let started = Instant::now();
    burst::create_all(&bridge, asks).await;
    let created = started.elapsed();
    println!(
        "create: {total} asks to {chats} chats in {:.3} s = {:.0} asks/s",
        created.as_secs_f64(),
        total as f64 / created.as_secs_f64()
    );

    let posts = watcher.await.expect("watcher");
    let last = posts[total - 1];
    let start_to_last = last.duration_since(started).as_secs_f64();
    let rate = total as f64 / start_to_last;
    // 50 a second per app; 5 a second per chat is looser with 100 chats.
    let allowed = 50.0_f64.min(5.0 * chats as f64);
    println!(
        "posted: {total} cards in {start_to_last:.2} s = {rate:.1}/s, {:.0} % of the {allowed:.0}/s the limits allow",
        100.0 * rate / allowed
    );
    let sends = fake.calls_to("/im/v1/messages");
    println!(
        "limited answers from the fake: {} ({} send calls; each limited one waited out and sent again)",
        fake.rate_limited_count(),
        sends.len(),
    );
    let cards = fake.bot_messages();
    println!(
        "cards stored: {} for {total} asks ({} lost, {} doubled)",
        cards.len(),
        total.saturating_sub(cards.len()),
        cards.len().saturating_sub(total)
    );

    let presses: Vec<_> = cards
        .iter()
        .filter_map(|card| {
            let name = button(card.card()?, "Production")?;
            let fake = Arc::clone(&fake);
            let message = card.message_id.clone();
            Some(tokio::spawn(async move {
                fake.press(&message, ALICE, &name).await
            }))
        })
        .collect();
    let pressed = presses.len();
    let mut waits = Vec::with_capacity(pressed);
    let mut failed = 0;
    for press in presses {
        let outcome = press.await.expect("press");
        match (outcome.failure, outcome.latency) {
            (None, Some(latency)) => waits.push(latency),
            _ => failed += 1,
        }
    }
    waits.sort_unstable();
    println!(
        "presses: {pressed} at once over the long connection; answered after {}; \
         shown as failed by Feishu (later than 3 s or no answer): {failed}",
        burst::spread(&waits),
    );

    burst::report_answered(&bridge, total).await;
}

fn main() {
    burst::main("feishu-burst", DEFAULT_ASKS, |dir, total| async move {
        run(&dir, total).await;
    });
}

//! Slack delivery and interaction acks under a burst, printed, not
//! asserted: 1,000 asks to 100 channels created as fast as possible,
//! delivered through the real Slack channel (slack-morphism's Web API
//! client) to the local fake Slack with Slack's limits switched on
//! (`chat.postMessage` about 1 a second per channel, short bursts
//! allowed); then a button pressed on every question at once, over the
//! fake's real Socket Mode.
//!
//! Figures: time to create the asks; time until the fake has stored every
//! question; messages a second as a share of the most the limits allow;
//! `429`s the fake returned (with an `api_url` slack-morphism's rate
//! control is off, so each reaches askbridge's outbox, which waits the
//! `Retry-After` out); asks lost; and for the presses, how long each
//! envelope waited for its ack as seen by the bench, and how many were
//! acked later than Slack's 3 seconds (must be zero). The closing
//! `chat.update`s are not waited for: at Slack's 50 a minute, 1,000 of
//! them take 20 minutes.
//!
//! `cargo bench -p askbridge --bench slack_burst` sends 1,000 asks (about
//! 15 s, set by the limits); `-- 300` sends 300. Everything talks to
//! 127.0.0.1 only and stops by itself.

mod burst;

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use askbridge::bridge::{Bridge, BridgeOptions, ListFilter};
use askbridge::channels::slack::Slack;
use askbridge::config::{Secret, SlackConfig, SlackMode};
use askbridge_core::model::Target;
use askbridge_core::normalize::normalize_json;
use askbridge_core::render::{Locale, Mode};
use askbridge_testkit::slack::{Channel, FakeSlack, RateLimits, User};
use serde_json::{Value, json};

/// Asks sent unless the command line says otherwise.
const DEFAULT_ASKS: usize = 1_000;
/// Channels the asks go to, round robin.
const CHANNELS: usize = 100;
const ALICE: &str = "U0ALICE";

fn channel(n: usize) -> String {
    format!("C0BURST{:03}", n % CHANNELS)
}

fn ask_json(n: usize) -> Value {
    json!({
        "to": format!("slack:{}", channel(n)),
        "questions": [{
            "question": format!("Ship build {n}?"),
            "options": ["Staging (Recommended)", "Production"]
        }]
    })
}

/// The moment this bench saw each bot message appear.
async fn watch_posts(fake: Arc<FakeSlack>, total: usize) -> Vec<Instant> {
    let mut seen: Vec<Instant> = Vec::with_capacity(total);
    while seen.len() < total {
        let done = seen.len();
        let fresh = fake
            .wait_for("more posted questions", |state| {
                let posted = state.bot_messages().len();
                (posted > done).then_some(posted - done)
            })
            .await;
        let now = Instant::now();
        seen.extend(std::iter::repeat_n(now, fresh));
    }
    seen
}

/// When each envelope was acked, as seen here.
async fn watch_acks(fake: Arc<FakeSlack>, envelopes: Vec<String>) -> HashMap<String, Instant> {
    let mut acked: HashMap<String, Instant> = HashMap::with_capacity(envelopes.len());
    while acked.len() < envelopes.len() {
        let fresh: Vec<String> = fake
            .wait_for("more acks", |state| {
                let fresh: Vec<String> = envelopes
                    .iter()
                    .filter(|id| !acked.contains_key(*id))
                    .filter(|id| state.envelope(id).is_some_and(|e| e.acked()))
                    .cloned()
                    .collect();
                (!fresh.is_empty()).then_some(fresh)
            })
            .await;
        let now = Instant::now();
        acked.extend(fresh.into_iter().map(|id| (id, now)));
    }
    acked
}

/// The `action_id` of the button labelled `label`.
fn button(blocks: &Value, label: &str) -> Option<String> {
    match blocks {
        Value::Object(object) => {
            if object.get("type") == Some(&json!("button")) && object["text"]["text"] == label {
                return object["action_id"].as_str().map(str::to_owned);
            }
            object.values().find_map(|child| button(child, label))
        }
        Value::Array(list) => list.iter().find_map(|child| button(child, label)),
        _ => None,
    }
}

async fn run(dir: &std::path::Path, total: usize) {
    let fake = Arc::new(
        FakeSlack::builder()
            .rate_limits(RateLimits::slack())
            .wait_timeout(Duration::from_secs(300))
            .start()
            .await,
    );
    let channels = total.min(CHANNELS);
    for n in 0..channels {
        fake.add_channel(&Channel::public(channel(n), format!("c{n}")));
    }
    let alice = User::new(ALICE, "alice");
    fake.add_user(&alice);

    let url = burst::database_url(dir);
    let bridge = Bridge::open(BridgeOptions::new(url, Target::parse("web").expect("web")))
        .await
        .expect("open bridge");
    let slack = Slack::new(
        &bridge,
        &SlackConfig {
            token: Secret::new(fake.bot_token()),
            api_url: Some(fake.api_url()),
            mode: SlackMode::Socket {
                app_token: Secret::new(fake.app_token()),
            },
            render: Mode::Buttons,
            locale: Locale::En,
            allowed_users: vec![],
        },
    )
    .expect("Slack channel");
    let _socket = slack.start();
    fake.wait_for_connections(1).await;

    let asks: Vec<_> = (0..total)
        .map(|n| normalize_json(&ask_json(n)).expect("valid ask").ask)
        .collect();
    let watcher = tokio::spawn(watch_posts(Arc::clone(&fake), total));
    let started = Instant::now();
    burst::create_all(&bridge, asks).await;
    let created = started.elapsed();
    println!(
        "create: {total} asks to {channels} channels in {:.3} s = {:.0} asks/s",
        created.as_secs_f64(),
        total as f64 / created.as_secs_f64()
    );

    let posts = watcher.await.expect("watcher");
    let (first, last) = (posts[0], posts[total - 1]);
    let first_to_last = last.duration_since(first).as_secs_f64();
    let start_to_last = last.duration_since(started).as_secs_f64();
    // 1 a second per channel, after a burst of 3 each.
    let burst_allowance = (3 * channels).min(total) as f64;
    let max_seconds = ((total as f64 - burst_allowance) / channels as f64).max(0.0);
    println!(
        "posted: {total} questions, first → last {first_to_last:.2} s, create-start → last {start_to_last:.2} s; \
         the limits allow it in {max_seconds:.2} s at best (a burst of 3 per channel, then 1/s × {channels} channels)"
    );
    let posts_calls = fake.calls_to("chat.postMessage");
    println!(
        "429s returned by the fake: {} ({} chat.postMessage calls: {} ok, {} refused and retried by the outbox)",
        fake.rate_limited_count(),
        posts_calls.len(),
        posts_calls.iter().filter(|call| call.ok).count(),
        posts_calls.iter().filter(|call| call.status == 429).count()
    );

    let questions = fake.bot_messages();
    let pressed_at = Instant::now();
    let envelopes: Vec<String> = questions
        .iter()
        .filter_map(|question| {
            let key = button(&question.blocks, "Production")?;
            fake.press_button(&alice, &question.channel, &question.ts, &key)
                .envelope_id
        })
        .collect();
    let injected = pressed_at.elapsed();
    let acked = watch_acks(Arc::clone(&fake), envelopes.clone()).await;
    let mut waits: Vec<Duration> = acked
        .values()
        .map(|at| at.duration_since(pressed_at))
        .collect();
    waits.sort_unstable();
    let late = waits
        .iter()
        .filter(|wait| **wait > Duration::from_secs(3))
        .count();
    println!(
        "presses: {} injected in {:.3} s; acked after p50 {:.3} s, p99 {:.3} s, max {:.3} s \
         (from the first injection, as seen by the bench); acked later than 3 s: {late}",
        envelopes.len(),
        injected.as_secs_f64(),
        burst::percentile(&waits, 0.5).as_secs_f64(),
        burst::percentile(&waits, 0.99).as_secs_f64(),
        burst::percentile(&waits, 1.0).as_secs_f64(),
    );

    // The answers are recorded as the presses are handled.
    let mut answered = 0;
    for _ in 0..300 {
        let views = bridge.list(ListFilter::default()).await.expect("list");
        answered = views
            .iter()
            .filter(|view| view.state.as_str() == "answered")
            .count();
        if answered == total {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    println!(
        "asks: {answered} of {total} answered, {} lost",
        total - answered
    );
}

fn main() {
    burst::main("slack-burst", DEFAULT_ASKS, |dir, total| async move {
        run(&dir, total).await;
    });
}

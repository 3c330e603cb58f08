//! Telegram delivery under a burst, printed, not asserted: 1,000 asks to
//! 100 private chats created as fast as possible, delivered through the
//! real Telegram channel (teloxide behind its `Throttle` adaptor) to the
//! local fake Bot API with Telegram's published limits switched on.
//!
//! Figures: time to create the asks; time until the fake has stored every
//! sent message; messages a second as a share of the most the limits allow;
//! `429`s the fake returned; asks lost (ended, `delivery_failed` above all,
//! or never delivered); and the shortest gap between two messages to one
//! chat.
//!
//! `cargo bench -p askbridge --bench telegram_burst` sends 1,000 asks (about
//! 35 s, set by the limits); `-- 300` sends 300. Everything talks to
//! 127.0.0.1 only and stops by itself.

mod burst;

use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::time::{Duration, Instant};

use askbridge::bridge::{Bridge, BridgeOptions, ListFilter, NewAsk};
use askbridge::channels::telegram::Telegram;
use askbridge::config::{Secret, TelegramConfig, TelegramMode};
use askbridge_core::model::Target;
use askbridge_core::normalize::normalize_json;
use askbridge_core::render::{Locale, Mode};
use askbridge_testkit::telegram::{FakeTelegram, RateLimits};
use serde_json::json;

/// Asks sent unless the command line says otherwise.
const DEFAULT_ASKS: usize = 1_000;
/// Private chats the asks go to, round robin.
const CHATS: usize = 100;
/// How long the asks may take to be recorded as delivered after the last
/// message reached the fake.
const SETTLE: Duration = Duration::from_secs(10);

fn ask_json(n: usize) -> serde_json::Value {
    let chat = n % CHATS + 1;
    json!({
        "to": format!("telegram:{chat}"),
        "questions": [{
            "question": format!("Ship build {n}?"),
            "options": ["Staging (Recommended)", "Production"]
        }]
    })
}

/// Every message the fake stores, with its chat and the moment this bench
/// saw it appear. The fake keeps only whole-second dates, so the times are
/// taken here, woken by each change to the fake's state.
async fn watch_sends(fake: Arc<FakeTelegram>, total: usize) -> Vec<(i64, Instant)> {
    let mut seen: Vec<(i64, Instant)> = Vec::with_capacity(total);
    while seen.len() < total {
        let done = seen.len();
        let fresh: Vec<i64> = fake
            .wait_for("more sent messages", |state| {
                (state.sent_count() > done).then(|| {
                    state
                        .sent_messages()
                        .into_iter()
                        .skip(done)
                        .map(|message| message.chat_id)
                        .collect()
                })
            })
            .await;
        let now = Instant::now();
        seen.extend(fresh.into_iter().map(|chat| (chat, now)));
    }
    seen
}

/// The theoretical maximum, in messages a second, for `chats` private
/// chats under `limits`: the overall limit, or every chat at its own limit,
/// whichever is lower.
fn theoretical_max(limits: &RateLimits, chats: usize) -> f64 {
    let overall = limits.overall_per_sec.map_or(f64::INFINITY, f64::from);
    let per_chat = limits
        .per_chat_per_sec
        .map_or(f64::INFINITY, |limit| f64::from(limit) * chats as f64);
    overall.min(per_chat)
}

fn limit_text(limit: Option<u32>) -> String {
    limit.map_or_else(|| "unlimited".to_owned(), |limit| limit.to_string())
}

async fn run(dir: &std::path::Path, total: usize) {
    let limits = RateLimits::TELEGRAM;
    let fake = Arc::new(
        FakeTelegram::builder()
            .rate_limits(limits)
            .wait_timeout(Duration::from_secs(300))
            .start()
            .await,
    );
    let url = burst::database_url(dir);
    let bridge = Bridge::open(BridgeOptions::new(
        url,
        Target::parse("web").expect("web target"),
    ))
    .await
    .expect("open bridge");
    let _telegram = Telegram::new(
        &bridge,
        &TelegramConfig {
            token: Secret::new(fake.token()),
            api_url: Some(fake.api_url()),
            mode: TelegramMode::Polling,
            render: Mode::Buttons,
            locale: Locale::En,
            allowed_users: vec![],
        },
    )
    .expect("Telegram channel");
    let asks: Vec<_> = (0..total)
        .map(|n| normalize_json(&ask_json(n)).expect("valid ask").ask)
        .collect();
    let chats = total.min(CHATS);

    let watcher = tokio::spawn(watch_sends(Arc::clone(&fake), total));
    let started = Instant::now();
    let mut ids = Vec::with_capacity(total);
    for ask in asks {
        let (view, _) = bridge
            .create(NewAsk {
                ask,
                idempotency_key: None,
            })
            .await
            .expect("create");
        ids.push(view.id);
    }
    let created = started.elapsed();
    println!(
        "create: {total} asks to {chats} chats in {:.3} s = {:.0} asks/s",
        created.as_secs_f64(),
        total as f64 / created.as_secs_f64()
    );

    let sends = watcher.await.expect("watcher");
    let (first, last) = (sends[0].1, sends[total - 1].1);
    let first_to_last = last.duration_since(first).as_secs_f64();
    let start_to_last = last.duration_since(started).as_secs_f64();
    println!(
        "sent: {total} messages stored by the fake: first send {:.3} s after create-start, \
         first → last send {first_to_last:.2} s, create-start → last send {start_to_last:.2} s",
        first.duration_since(started).as_secs_f64()
    );

    let max = theoretical_max(&limits, chats);
    println!(
        "limits: overall {}/s, per chat {}/s × {chats} chats → theoretical maximum {max:.0} msg/s",
        limit_text(limits.overall_per_sec),
        limit_text(limits.per_chat_per_sec)
    );
    for (label, seconds) in [
        ("first → last send", first_to_last),
        ("create-start → last send", start_to_last),
    ] {
        let rate = total as f64 / seconds;
        println!(
            "rate ({label}): {total} / {seconds:.2} s = {rate:.2} msg/s = {:.1} % of {max:.0} msg/s",
            rate / max * 100.0
        );
    }

    // Give the last deliveries a moment to be recorded, then count.
    let deadline = Instant::now() + SETTLE;
    let mut undelivered: Vec<&String> = ids.iter().collect();
    loop {
        let mut still = Vec::new();
        for id in undelivered {
            if bridge
                .message_refs(id)
                .await
                .expect("message refs")
                .is_empty()
            {
                still.push(id);
            }
        }
        undelivered = still;
        if undelivered.is_empty() || Instant::now() >= deadline {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let undelivered: HashSet<&str> = undelivered.into_iter().map(String::as_str).collect();
    let views = bridge.list(ListFilter::default()).await.expect("list");
    let mut states: HashMap<&'static str, usize> = HashMap::new();
    let mut lost = 0;
    for view in &views {
        *states.entry(view.state.as_str()).or_default() += 1;
        if !view.state.is_pending() || undelivered.contains(view.id.as_str()) {
            lost += 1;
        }
    }
    lost += total.saturating_sub(views.len());
    let failed = states.get("delivery_failed").copied().unwrap_or(0);
    let mut states: Vec<_> = states.into_iter().collect();
    states.sort();
    let states = states
        .iter()
        .map(|(state, count)| format!("{count} {state}"))
        .collect::<Vec<_>>()
        .join(", ");
    let metrics = bridge.metrics();
    let calls = fake.calls_to("sendMessage");
    let ok = calls.iter().filter(|call| call.is_ok()).count();
    println!(
        "429s returned by the fake: {} (sendMessage calls: {} = {ok} ok + {} refused)",
        fake.rate_limited_count(),
        calls.len(),
        calls.len() - ok
    );
    println!(
        "asks lost: {lost} ({failed} delivery_failed, {} never delivered; states: {states}; \
         bridge metrics: {} created, {} pending)",
        undelivered.len(),
        metrics.created,
        metrics.pending
    );

    let window = Duration::from_secs(1).saturating_sub(limits.slack);
    let mut previous: HashMap<i64, Instant> = HashMap::new();
    let mut shortest: Option<Duration> = None;
    let mut too_close = 0;
    for &(chat, at) in &sends {
        if let Some(before) = previous.insert(chat, at) {
            let gap = at.duration_since(before);
            shortest = Some(shortest.map_or(gap, |shortest| shortest.min(gap)));
            if gap < window {
                too_close += 1;
            }
        }
    }
    match shortest {
        Some(shortest) => println!(
            "per chat: {too_close} pairs of messages to one chat less than {:.1} s apart \
             (1 s minus the fake's {} ms slack); shortest gap {:.3} s (times as seen by the bench)",
            window.as_secs_f64(),
            limits.slack.as_millis(),
            shortest.as_secs_f64()
        ),
        None => println!("per chat: no chat got two messages"),
    }
}

fn main() {
    burst::main("telegram-burst", DEFAULT_ASKS, |dir, total| async move {
        run(&dir, total).await;
    });
}

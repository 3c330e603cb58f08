//! Discord delivery and interaction answers under a burst, printed, not
//! asserted: 1,000 asks to 100 server channels created as fast as
//! possible, delivered through the real Discord channel (serenity's REST
//! client) to the local fake Discord with Discord's limits switched on
//! (50 requests a second overall, 5 messages per 5 seconds per channel);
//! then a button pressed on every question at once, over the fake's real
//! gateway.
//!
//! Figures: time to create the asks; time until the fake has stored every
//! question; messages a second as a share of the most the limits allow;
//! `429`s the fake returned (with a REST proxy serenity's own limiter is
//! off, so each one reaches askbridge's outbox, which retries); asks lost;
//! and for the presses, how long each waited for its initial response as
//! seen by the bench, and how many Discord would have shown as failed
//! (no accepted response within 3 seconds: must be zero); then how long
//! until every answer was stored (a press is acknowledged before that).
//!
//! `cargo bench -p askbridge --bench discord_burst` sends 1,000 asks (about
//! 25 s, set by the limits); `-- 300` sends 300. `-- --busy=2` runs two
//! child processes that spin on a core each for the whole run, as other
//! work on a busy machine would (they end with the bench). Everything
//! talks to 127.0.0.1 only and stops by itself.

mod burst;

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use askbridge::bridge::{Bridge, BridgeOptions};
use askbridge::channels::discord::Discord;
use askbridge::config::{DiscordConfig, Secret};
use askbridge_core::model::Target;
use askbridge_core::normalize::normalize_json;
use askbridge_core::render::{Locale, Mode};
use askbridge_testkit::discord::{Channel, FakeDiscord, NoticeKind, RateLimits, User};
use serde_json::json;

/// Asks sent unless the command line says otherwise.
const DEFAULT_ASKS: usize = 1_000;
/// Server channels the asks go to, round robin.
const CHANNELS: u64 = 100;
const GUILD: u64 = 800_000_000_000_000_001;
const FIRST_CHANNEL: u64 = 810_000_000_000_000_001;
const ALICE: u64 = 100_000_000_000_000_001;

fn ask_json(n: usize) -> serde_json::Value {
    let channel = FIRST_CHANNEL + n as u64 % CHANNELS;
    json!({
        "to": format!("discord:{channel}"),
        "questions": [{
            "question": format!("Ship build {n}?"),
            "options": ["Staging (Recommended)", "Production"]
        }]
    })
}

/// The moment this bench saw each of the first `total` bot messages
/// appear (woken by each change to the fake's state).
async fn watch_posts(fake: Arc<FakeDiscord>, total: usize) -> Vec<(u64, Instant)> {
    let mut seen: Vec<(u64, Instant)> = Vec::with_capacity(total);
    while seen.len() < total {
        let done = seen.len();
        let fresh: Vec<u64> = fake
            .wait_for("more posted questions", |state| {
                let posted = state.bot_messages();
                (posted.len() > done).then(|| posted.iter().skip(done).map(|m| m.id).collect())
            })
            .await;
        let now = Instant::now();
        seen.extend(fresh.into_iter().map(|id| (id, now)));
    }
    seen
}

/// When each interaction got its accepted initial response, as seen here.
async fn watch_responses(fake: Arc<FakeDiscord>, ids: Vec<u64>) -> HashMap<u64, Instant> {
    let mut answered: HashMap<u64, Instant> = HashMap::with_capacity(ids.len());
    while answered.len() < ids.len() {
        let fresh: Vec<u64> = fake
            .wait_for("more interaction responses", |state| {
                let fresh: Vec<u64> = ids
                    .iter()
                    .copied()
                    .filter(|id| !answered.contains_key(id))
                    .filter(|id| {
                        state
                            .interaction(*id)
                            .is_some_and(|i| i.response.is_some() || i.refused_responses > 0)
                    })
                    .collect();
                (!fresh.is_empty()).then_some(fresh)
            })
            .await;
        let now = Instant::now();
        answered.extend(fresh.into_iter().map(|id| (id, now)));
    }
    answered
}

async fn run(dir: &std::path::Path, total: usize) {
    let limits = RateLimits::DISCORD;
    let fake = Arc::new(
        FakeDiscord::builder()
            .rate_limits(limits)
            .wait_timeout(Duration::from_secs(300))
            .start()
            .await,
    );
    let channels = (total as u64).min(CHANNELS);
    for n in 0..channels {
        fake.add_channel(&Channel::guild_text(
            FIRST_CHANNEL + n,
            GUILD,
            format!("c{n}"),
        ));
    }
    let alice = User::new(ALICE, "alice");
    fake.add_user(&alice);

    let url = burst::database_url(dir);
    let bridge = Bridge::open(BridgeOptions::new(url, Target::parse("web").expect("web")))
        .await
        .expect("open bridge");
    let discord = Discord::new(
        &bridge,
        &DiscordConfig {
            token: Secret::new(fake.token()),
            api_url: Some(fake.api_url()),
            public_key: None,
            render: Mode::Buttons,
            locale: Locale::En,
            allowed_users: vec![],
        },
    )
    .expect("Discord channel");
    let _gateway = discord.start();
    fake.wait_for_ready().await;

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
    let (first, last) = (posts[0].1, posts[total - 1].1);
    let first_to_last = last.duration_since(first).as_secs_f64();
    let start_to_last = last.duration_since(started).as_secs_f64();
    // 5 per 5 s per channel against 50 a second overall.
    let per_channel_max = channels as f64;
    let max = per_channel_max.min(50.0);
    println!(
        "posted: {total} questions, first → last {first_to_last:.2} s, create-start → last {start_to_last:.2} s"
    );
    for (label, seconds) in [
        ("first → last", first_to_last),
        ("create-start → last", start_to_last),
    ] {
        let rate = total as f64 / seconds;
        println!(
            "rate ({label}): {rate:.2} msg/s = {:.1} % of the {max:.0} msg/s the limits allow \
             (50/s overall, 1/s × {channels} channels)",
            rate / max * 100.0
        );
    }
    let creates = fake.calls_to("POST", "/channels/{channel.id}/messages");
    let refused = creates.iter().filter(|call| call.status == 429).count();
    println!(
        "429s returned by the fake: {} ({} message creates: {} ok, {refused} refused and retried by the outbox)",
        fake.rate_limited_count(),
        creates.len(),
        creates.iter().filter(|call| call.is_ok()).count()
    );

    // Every question pressed at once.
    let questions = fake.bot_messages();
    let pressed_at = Instant::now();
    let pressed: Vec<(u64, Instant)> = questions
        .iter()
        .map(|question| {
            let key = question
                .custom_id_of("Production")
                .expect("a Production button");
            (fake.press_button(&alice, question.id, &key), Instant::now())
        })
        .collect();
    let presses: Vec<u64> = pressed.iter().map(|(id, _)| *id).collect();
    let injected = pressed_at.elapsed();
    let answered = watch_responses(Arc::clone(&fake), presses.clone()).await;
    let mut waits: Vec<Duration> = answered
        .values()
        .map(|at| at.duration_since(pressed_at))
        .collect();
    waits.sort_unstable();
    // Each press from its own injection: what the person waited.
    let mut own: Vec<Duration> = pressed
        .iter()
        .filter_map(|(id, at)| answered.get(id).map(|seen| seen.duration_since(*at)))
        .collect();
    own.sort_unstable();
    let over_3s = own
        .iter()
        .filter(|wait| **wait > Duration::from_secs(3))
        .count();
    let failed = fake
        .inspect(|state| {
            presses
                .iter()
                .filter(|id| state.interaction(**id).is_none_or(|i| i.response.is_none()))
                .count()
        })
        .max(
            fake.notices_for(ALICE)
                .iter()
                .filter(|notice| notice.kind == NoticeKind::InteractionFailed)
                .count(),
        );
    println!(
        "presses: {} injected in {:.3} s; initial response after p50 {:.3} s, p99 {:.3} s, max {:.3} s \
         (from the first injection, as seen by the bench); answered later than 3 s or not at all: {failed}",
        presses.len(),
        injected.as_secs_f64(),
        burst::percentile(&waits, 0.5).as_secs_f64(),
        burst::percentile(&waits, 0.99).as_secs_f64(),
        burst::percentile(&waits, 1.0).as_secs_f64(),
    );
    println!(
        "press → initial response, each from its own injection: p50 {:.3} s, p99 {:.3} s, max {:.3} s; \
         over 3 s: {over_3s}",
        burst::percentile(&own, 0.5).as_secs_f64(),
        burst::percentile(&own, 0.99).as_secs_f64(),
        burst::percentile(&own, 1.0).as_secs_f64(),
    );

    // A press is acknowledged before its answer is stored: wait for every
    // ask to end (each wait woken by its change), for at most a minute.
    let views = bridge
        .list(askbridge::bridge::ListFilter::default())
        .await
        .expect("list");
    for view in &views {
        bridge
            .wait(&view.id, Duration::from_secs(60))
            .await
            .expect("wait");
    }
    println!(
        "answers stored: every press's within {:.3} s of the first injection",
        pressed_at.elapsed().as_secs_f64()
    );
    burst::report_answered(&bridge, total).await;
}

/// `--busy=N`: how many spinning child processes to run meanwhile.
fn busy_children() -> usize {
    std::env::args()
        .find_map(|arg| arg.strip_prefix("--busy=").map(str::to_owned))
        .map_or(0, |n| n.parse().expect("--busy=N, a number of processes"))
}

/// Child processes spinning on a core each, ended when dropped.
struct Busy(Vec<std::process::Child>);

impl Busy {
    fn start(count: usize) -> Busy {
        let me = std::env::current_exe().expect("the bench's own path");
        let parent = std::process::id().to_string();
        Busy(
            (0..count)
                .map(|_| {
                    std::process::Command::new(&me)
                        .args(["--spin-for", &parent])
                        .stdin(std::process::Stdio::null())
                        .spawn()
                        .expect("a busy child process")
                })
                .collect(),
        )
    }
}

impl Drop for Busy {
    fn drop(&mut self) {
        for child in &mut self.0 {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// A busy child: spins until its parent is gone (killed, or ended
/// without dropping [`Busy`]).
fn spin_for(parent: u32) -> ! {
    loop {
        for _ in 0..50_000_000u64 {
            std::hint::spin_loop();
        }
        if std::os::unix::process::parent_id() != parent {
            std::process::exit(0);
        }
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if let Some(at) = args.iter().position(|arg| arg == "--spin-for") {
        spin_for(args[at + 1].parse().expect("the parent's pid"));
    }
    let busy = Busy::start(busy_children());
    if !busy.0.is_empty() {
        println!("busy: {} child processes spinning meanwhile", busy.0.len());
    }
    burst::main("discord-burst", DEFAULT_ASKS, |dir, total| async move {
        run(&dir, total).await;
    });
    drop(busy);
}

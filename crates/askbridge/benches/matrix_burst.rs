//! Matrix delivery under a burst and vote-to-agent latency, printed, not
//! asserted, against a real Synapse on 127.0.0.1 (from the test venv, as
//! the end-to-end tests start it): asks to 30 rooms created as fast as
//! possible and posted as polls through the real Matrix channel
//! (matrix-sdk); then Alice, a real matrix-sdk client, votes in each poll
//! one after another and each vote's way to the agent is timed.
//!
//! Figures: time to create the asks; polls delivered a second (from the
//! first ask created to the last poll's arrival on the homeserver, by its
//! `origin_server_ts`); polls stored, lost and doubled; and for the votes,
//! the time from the homeserver taking the vote to the agent's long wait
//! returning (p50, p99, max).
//!
//! `cargo bench -p askbridge --bench matrix_burst` sends 300 asks with
//! Synapse's message rate limit raised; `-- 40 --default-limits` keeps
//! Synapse's own limit (0.2 messages a second per user after a burst of
//! 10), so 300 asks would take 25 minutes: the figure to read there is
//! that nothing is lost and the rate follows the limit.

mod burst;

use std::collections::HashSet;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use askbridge::bridge::{Bridge, BridgeOptions};
use askbridge::channels::matrix::Matrix;
use askbridge::config::{MatrixConfig, Secret};
use askbridge_core::model::Target;
use askbridge_core::normalize::normalize_json;
use askbridge_core::render::{Locale, Mode};
use askbridge_testkit::synapse::{Person, Synapse, SynapseOptions};
use serde_json::{Value, json};

/// Asks sent unless the command line says otherwise.
const DEFAULT_ASKS: usize = 300;
/// Rooms the asks go to, round robin.
const ROOMS: usize = 30;
/// How long one poll or one outcome may take before the bench gives up.
const PATIENCE: Duration = Duration::from_secs(1_800);

fn ask_json(room: &str, n: usize) -> Value {
    json!({
        "to": format!("matrix:{room}"),
        "questions": [{
            "question": format!("Ship build {n}?"),
            "options": ["Staging (Recommended)", "Production"]
        }]
    })
}

fn is_poll(event: &Value) -> bool {
    event["type"] == "org.matrix.msc3381.poll.start"
}

/// The id of the poll's answer labelled `label`, and the ask it belongs
/// to (answer ids are the core's callback keys, which name the ask).
fn answer(poll: &Value, label: &str) -> (String, String) {
    let answers = poll["content"]["org.matrix.msc3381.poll.start"]["answers"]
        .as_array()
        .expect("a poll has answers");
    let id = answers
        .iter()
        .find(|answer| answer["org.matrix.msc1767.text"] == label)
        .and_then(|answer| answer["id"].as_str())
        .expect("the answer")
        .to_owned();
    let ask = id
        .split(':')
        .nth(1)
        .expect("the key names its ask")
        .to_owned();
    (id, ask)
}

fn millis_since_epoch() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or_default()
}

async fn run(dir: &std::path::Path, total: usize, default_limits: bool) {
    let synapse = Synapse::start_with(SynapseOptions {
        default_rate_limits: default_limits,
    })
    .await;
    let bot = synapse.register("askbridge", "bot-password").await;
    let alice = synapse.register("alice", "alice-password").await;
    let alice = Person::login(&synapse, &alice).await;

    let url = burst::database_url(dir);
    let bridge = Bridge::open(BridgeOptions::new(url, Target::parse("web").expect("web")))
        .await
        .expect("open bridge");
    let matrix = Matrix::new(
        &bridge,
        &MatrixConfig {
            homeserver: synapse.url(),
            user_id: bot.user_id.clone(),
            access_token: Some(Secret::new(bot.access_token.clone())),
            password: None,
            render: Mode::Buttons,
            locale: Locale::En,
            allowed_users: vec![],
            auto_join: true,
            encrypt_direct: true,
        },
        dir,
    )
    .await
    .expect("Matrix channel");
    let _sync = matrix.run(&bridge);

    let rooms_wanted = total.min(ROOMS);
    let mut rooms = Vec::with_capacity(rooms_wanted);
    for _ in 0..rooms_wanted {
        rooms.push(alice.create_room(&[&bot.user_id], false, false).await);
    }
    for room in &rooms {
        alice
            .wait_for_membership(room, &bot.user_id, "join", PATIENCE)
            .await;
    }

    let asks: Vec<_> = (0..total)
        .map(|n| {
            normalize_json(&ask_json(&rooms[n % rooms.len()], n))
                .expect("valid ask")
                .ask
        })
        .collect();
    let started_ms = millis_since_epoch();
    let started = Instant::now();
    burst::create_all(&bridge, asks).await;
    let created = started.elapsed();
    println!(
        "create: {total} asks to {} rooms in {:.3} s = {:.0} asks/s (Synapse's {} message limit)",
        rooms.len(),
        created.as_secs_f64(),
        total as f64 / created.as_secs_f64(),
        if default_limits { "own" } else { "raised" }
    );

    // Every room's polls, as Alice's client received them.
    let mut polls = Vec::with_capacity(total);
    for (index, room) in rooms.iter().enumerate() {
        let expected = (index..total).step_by(rooms.len()).count();
        let mut seen = HashSet::new();
        while seen.len() < expected {
            let poll = alice
                .wait_for_event(room, PATIENCE, |event| {
                    is_poll(event) && !seen.contains(event["event_id"].as_str().unwrap_or_default())
                })
                .await;
            seen.insert(poll["event_id"].as_str().unwrap_or_default().to_owned());
            polls.push((room.clone(), poll));
        }
    }
    let last_ms = polls
        .iter()
        .filter_map(|(_, poll)| poll["origin_server_ts"].as_u64())
        .max()
        .unwrap_or(started_ms);
    let span = (last_ms.saturating_sub(started_ms)) as f64 / 1_000.0;
    println!(
        "delivered: {} polls in {span:.2} s = {:.1} polls/s",
        polls.len(),
        polls.len() as f64 / span.max(0.001)
    );
    let stored: usize = rooms
        .iter()
        .map(|room| alice.events(room).iter().filter(|e| is_poll(e)).count())
        .sum();
    println!(
        "polls stored: {stored} for {total} asks ({} lost, {} doubled)",
        total.saturating_sub(stored),
        stored.saturating_sub(total)
    );

    let mut latencies = Vec::with_capacity(polls.len());
    for (room, poll) in &polls {
        let (answer_id, ask_id) = answer(poll, "Production");
        let poll_id = poll["event_id"].as_str().expect("an event id");
        alice.vote(room, poll_id, &[&answer_id]).await;
        let voted = Instant::now();
        let view = bridge.wait(&ask_id, PATIENCE).await.expect("wait");
        latencies.push(voted.elapsed());
        assert_eq!(view.state.as_str(), "answered", "{ask_id}");
    }
    latencies.sort_unstable();
    println!(
        "votes: {} one after another; vote taken by the homeserver → agent: p50 {:.1} ms, p99 {:.1} ms, max {:.1} ms",
        latencies.len(),
        burst::percentile(&latencies, 0.5).as_secs_f64() * 1_000.0,
        burst::percentile(&latencies, 0.99).as_secs_f64() * 1_000.0,
        burst::percentile(&latencies, 1.0).as_secs_f64() * 1_000.0,
    );
}

fn main() {
    let default_limits = std::env::args().any(|arg| arg == "--default-limits");
    burst::main("matrix-burst", DEFAULT_ASKS, |dir, total| async move {
        run(&dir, total, default_limits).await;
    });
}

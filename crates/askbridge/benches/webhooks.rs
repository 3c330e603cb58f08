//! Webhook figures, printed, not asserted (the real daemon on SQLite, a
//! receiver on loopback):
//!
//! - from the reply that ends an ask to its webhook at the receiver, p50 /
//!   p99 over `ASKBRIDGE_WEBHOOK_RUNS` asks (default 200), one at a time,
//!   with `ASKBRIDGE_WEBHOOK_OPEN` other asks (default 10,000) open with
//!   a callback meanwhile (their `ask.ended` deliveries waiting);
//! - a burst: `ASKBRIDGE_WEBHOOK_BURST` asks (default 1,000) answered at
//!   once, to a receiver that refuses every delivery's first attempt
//!   (`503`): how long until every webhook was taken, and how many were
//!   lost or doubled.
//!
//! `cargo bench -p askbridge --bench webhooks`.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use serde_json::{Value, json};
use tokio::sync::mpsc;

#[path = "../tests/daemon/mod.rs"]
mod daemon;

use daemon::{Api, Daemon};

/// What the receiver does and tells.
struct Receiving {
    /// Refuse each delivery's first attempt.
    refuse_first: bool,
    attempts: Mutex<HashMap<String, u32>>,
    taken: mpsc::UnboundedSender<(String, Instant)>,
}

async fn receive(
    State(state): State<Arc<Receiving>>,
    headers: HeaderMap,
    body: Bytes,
) -> StatusCode {
    let delivery = headers
        .get("askbridge-delivery")
        .and_then(|value| value.to_str().ok())
        .unwrap_or_default()
        .to_owned();
    let nth = {
        let mut attempts = state.attempts.lock().expect("lock");
        let count = attempts.entry(delivery).or_default();
        *count += 1;
        *count
    };
    if state.refuse_first && nth == 1 {
        return StatusCode::SERVICE_UNAVAILABLE;
    }
    let ask: Value = serde_json::from_slice(&body).expect("JSON");
    let id = ask["id"].as_str().unwrap_or_default().to_owned();
    let _ = state.taken.send((id, Instant::now()));
    StatusCode::NO_CONTENT
}

/// A receiver's URL, the webhooks it took, and its attempt counts.
async fn receiver(
    refuse_first: bool,
) -> (
    String,
    mpsc::UnboundedReceiver<(String, Instant)>,
    Arc<Receiving>,
) {
    let (taken, webhooks) = mpsc::unbounded_channel();
    let state = Arc::new(Receiving {
        refuse_first,
        attempts: Mutex::new(HashMap::new()),
        taken,
    });
    let app = axum::Router::new()
        .route("/hook", axum::routing::post(receive))
        .with_state(Arc::clone(&state));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let port = listener.local_addr().expect("address").port();
    tokio::spawn(async move { axum::serve(listener, app).await });
    (format!("http://127.0.0.1:{port}/hook"), webhooks, state)
}

fn ask(url: &str, n: usize) -> Value {
    json!({
        "callbackUrl": url,
        "questions": [{"id": "go", "question": format!("Ship build {n}?"), "type": "confirm"}],
    })
}

fn percentile(sorted: &[Duration], share: f64) -> Duration {
    let index = ((sorted.len() as f64 * share).ceil() as usize).clamp(1, sorted.len()) - 1;
    sorted[index]
}

fn env_count(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|value| value.parse().ok())
        .unwrap_or(default)
}

#[tokio::main]
async fn main() {
    if std::env::args().any(|arg| arg == "--list") {
        return;
    }
    let runs = env_count("ASKBRIDGE_WEBHOOK_RUNS", 200);
    let burst = env_count("ASKBRIDGE_WEBHOOK_BURST", 1_000);
    let daemon = Daemon::builder()
        .env("ASKBRIDGE_WEBHOOK_SECRET", "whsec_bench")
        .env("ASKBRIDGE_WEBHOOKS_ALLOWED_HOSTS", "127.0.0.1")
        .env("ASKBRIDGE_WEBHOOKS_FIRST_RETRY_MS", "200")
        .start();
    let api = Api::of(&daemon);

    let (url, mut webhooks, _) = receiver(false).await;
    let open = env_count("ASKBRIDGE_WEBHOOK_OPEN", 10_000);
    let started = Instant::now();
    let mut creating = tokio::task::JoinSet::new();
    for n in 0..open {
        if creating.len() >= 64 {
            creating.join_next().await;
        }
        let http = api.http.clone();
        let create = daemon.url("/v1/asks");
        let body = ask(&url, n);
        creating.spawn(async move {
            http.post(create)
                .json(&body)
                .send()
                .await
                .expect("create")
                .error_for_status()
                .expect("created");
        });
    }
    while creating.join_next().await.is_some() {}
    println!(
        "{open} asks with a callback left open (created in {:.1} s)",
        started.elapsed().as_secs_f64()
    );
    let mut latencies = Vec::with_capacity(runs);
    for n in 0..runs {
        let id = daemon::create(&daemon, &ask(&url, n)).await;
        let replied = Instant::now();
        api.reply(&id, json!({"answers": {"go": "yes"}})).await;
        let (got, at) = webhooks.recv().await.expect("a webhook");
        assert_eq!(got, id);
        latencies.push(at - replied);
    }
    latencies.sort_unstable();
    println!(
        "reply → webhook at the receiver: p50 {:.1} ms, p99 {:.1} ms, max {:.1} ms ({runs} asks, {open} others open)",
        percentile(&latencies, 0.5).as_secs_f64() * 1e3,
        percentile(&latencies, 0.99).as_secs_f64() * 1e3,
        percentile(&latencies, 1.0).as_secs_f64() * 1e3,
    );

    let (url, mut webhooks, state) = receiver(true).await;
    let mut ids = Vec::with_capacity(burst);
    for n in 0..burst {
        ids.push(daemon::create(&daemon, &ask(&url, n)).await);
    }
    let started = Instant::now();
    let replies: Vec<_> = ids
        .iter()
        .map(|id| {
            let http = api.http.clone();
            let url = daemon.url(&format!("/v1/asks/{id}/reply"));
            tokio::spawn(async move {
                http.post(url)
                    .json(&json!({"answers": {"go": "yes"}}))
                    .send()
                    .await
                    .expect("reply")
                    .error_for_status()
                    .expect("answered");
            })
        })
        .collect();
    for reply in replies {
        reply.await.expect("reply task");
    }
    let answered = started.elapsed();
    let mut taken: HashMap<String, u32> = HashMap::new();
    while taken.len() < burst {
        let (id, _) = tokio::time::timeout(Duration::from_secs(120), webhooks.recv())
            .await
            .expect("every webhook within two minutes")
            .expect("the receiver runs");
        *taken.entry(id).or_default() += 1;
    }
    let all = started.elapsed();
    let doubled = taken.values().filter(|count| **count > 1).count();
    let lost = ids.iter().filter(|id| !taken.contains_key(*id)).count();
    let attempts: u32 = state.attempts.lock().expect("lock").values().sum();
    println!(
        "{burst} asks answered at once in {:.2} s; every webhook taken {:.2} s after the first reply \
         (each refused once with 503, {attempts} attempts); lost {lost}, doubled {doubled}",
        answered.as_secs_f64(),
        all.as_secs_f64(),
    );
}

//! Cluster figures, printed, not asserted: several `askbridge serve`
//! processes on one Postgres database, for 1, 2 and 3 instances:
//!
//! 1. asks created and answered per second, by 32 clients each creating on
//!    one instance and replying on the next;
//! 2. (2 or more) p50/p99/max from a reply to the waiting agent's response
//!    headers when the agent long-polls another instance, one ask at a time;
//! 3. (2 or more) takeover after `kill -9` of the instance polling Telegram
//!    (the fake Bot API): until a survivor's `/healthz` owns the poll, and
//!    until the fake sees that survivor's `getUpdates`, with the default
//!    lease.
//!
//! `cargo bench -p askbridge --bench cluster`; needs the test Postgres
//! server in `ASKBRIDGE_TEST_POSTGRES_URL` (as the `cluster` tests do).
//! Everything talks to 127.0.0.1 only and stops by itself.

#[path = "../tests/daemon/mod.rs"]
mod daemon;
#[path = "../tests/db/mod.rs"]
mod db;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use askbridge::config::DEFAULT_LEASE_SECONDS;
use askbridge_testkit::telegram::FakeTelegram;
use daemon::{Api, Builder, Daemon};
use db::Scratch;
use serde_json::{Value, json};

/// Concurrent clients in the throughput run.
const CLIENTS: usize = 32;
/// How long each throughput client keeps going.
const THROUGHPUT_RUN: Duration = Duration::from_secs(3);
/// Asks answered one after another for the reply → waiter latency.
const WAITS: usize = 300;
/// How often `/healthz` is asked who owns the Telegram poll.
const HEALTH_POLL: Duration = Duration::from_millis(20);

fn deploy_ask() -> Value {
    json!({"questions": [{"id": "deploy", "question": "Where?",
                          "options": ["Staging", "Production"]}]})
}

/// An instance on `db`, named after its index.
fn instance(db: &Scratch, index: usize) -> Builder {
    Daemon::builder()
        .env("ASKBRIDGE_DATABASE_URL", db.url())
        .env("ASKBRIDGE_CLUSTER_INSTANCE", format!("bench-{index}"))
        .env("ASKBRIDGE_LOG", "askbridge=warn")
}

/// Creates an ask on `daemon` through `api` (its client); returns its id.
async fn create(daemon: &Daemon, api: &Api<'_>) -> String {
    let request = api.http.post(daemon.url("/v1/asks")).json(&deploy_ask());
    let ask = api.send(request).await;
    ask["id"].as_str().expect("an ask id").to_owned()
}

/// Answers ask `id` through `api`.
async fn answer(api: &Api<'_>, id: &str) {
    let reply = api.reply(id, json!({"text": "1"})).await;
    assert_eq!(reply["result"], "answered", "{reply}");
}

/// Asks created and answered per second: each round trip creates on
/// instance `k % n` and replies on instance `(k + 1) % n`.
async fn throughput(cluster: Arc<Vec<Daemon>>) -> f64 {
    let started = Instant::now();
    let next = Arc::new(AtomicUsize::new(0));
    let clients: Vec<_> = (0..CLIENTS)
        .map(|_| {
            let (cluster, next) = (Arc::clone(&cluster), Arc::clone(&next));
            tokio::spawn(async move {
                let apis: Vec<Api> = cluster.iter().map(Api::of).collect();
                let n = cluster.len();
                let mut finished = 0_usize;
                while started.elapsed() < THROUGHPUT_RUN {
                    let k = next.fetch_add(1, Ordering::Relaxed);
                    let id = create(&cluster[k % n], &apis[k % n]).await;
                    answer(&apis[(k + 1) % n], &id).await;
                    finished += 1;
                }
                finished
            })
        })
        .collect();
    let mut finished = 0;
    for client in clients {
        finished += client.await.expect("a throughput client");
    }
    finished as f64 / started.elapsed().as_secs_f64()
}

/// Long-polls `url`; returns when its response headers arrived.
fn long_poll(client: reqwest::Client, url: String) -> tokio::task::JoinHandle<Instant> {
    tokio::spawn(async move {
        let response = client.get(url).send().await.expect("the long-poll");
        let heard = Instant::now();
        assert_eq!(response.status(), 200);
        let ask: Value = response.json().await.expect("a JSON ask");
        assert_eq!(ask["status"], "answered", "{ask}");
        heard
    })
}

/// Waits until `daemon`'s `/metrics` shows one long-poll parked.
async fn until_one_waits(daemon: &Daemon, api: &Api<'_>) {
    loop {
        let request = api.http.get(daemon.url("/metrics"));
        let metrics = request.send().await.expect("/metrics");
        let metrics = metrics.text().await.expect("/metrics text");
        let waiting = metrics
            .lines()
            .find_map(|line| line.strip_prefix("askbridge_http_waiting "))
            .expect("an askbridge_http_waiting gauge in /metrics");
        if waiting == "1" {
            return;
        }
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
}

/// For [`WAITS`] asks, one at a time: created on instance 0, waited on at
/// instance 1, answered on the last instance (instance 0 when there are
/// two); the time from just before the reply to the waiter's headers.
async fn reply_to_remote_waiter(cluster: &[Daemon]) -> Vec<Duration> {
    let (creator, waiter) = (&cluster[0], &cluster[1]);
    let replier = &cluster[if cluster.len() > 2 {
        cluster.len() - 1
    } else {
        0
    }];
    let (creator_api, waiter_api, replier_api) =
        (Api::of(creator), Api::of(waiter), Api::of(replier));
    let poller = daemon::client();
    let mut latencies = Vec::with_capacity(WAITS);
    for _ in 0..WAITS {
        let id = create(creator, &creator_api).await;
        let heard = long_poll(
            poller.clone(),
            waiter.url(&format!("/v1/asks/{id}?wait=60")),
        );
        until_one_waits(waiter, &waiter_api).await;
        let sent = Instant::now();
        answer(&replier_api, &id).await;
        let heard = heard.await.expect("the long-poll task");
        latencies.push(heard.saturating_duration_since(sent));
    }
    latencies
}

/// The live instance whose `/healthz` says it runs the Telegram poll, if
/// one does.
async fn telegram_owner(cluster: &[Daemon], http: &reqwest::Client) -> Option<usize> {
    for (index, daemon) in cluster.iter().enumerate() {
        if daemon.pid().is_none() {
            continue;
        }
        let health: Value = http
            .get(daemon.url("/healthz"))
            .send()
            .await
            .expect("/healthz")
            .json()
            .await
            .expect("/healthz JSON");
        let owns = health["owns"].as_array().expect("owns is a list");
        if owns
            .iter()
            .any(|lease| lease.as_str().is_some_and(|l| l.starts_with("telegram/")))
        {
            return Some(index);
        }
    }
    None
}

/// Polls `/healthz` every [`HEALTH_POLL`] until a live instance owns the
/// Telegram poll; returns its index.
async fn until_telegram_owned(cluster: &[Daemon], http: &reqwest::Client) -> usize {
    loop {
        if let Some(owner) = telegram_owner(cluster, http).await {
            return owner;
        }
        tokio::time::sleep(HEALTH_POLL).await;
    }
}

/// Waits until a new `getUpdates` waits at the fake: either the dead
/// owner's poll went (its socket closed with it) and another began, or a
/// new poll ended the old one with 409. Only the lease owner polls.
async fn until_new_poll(fake: &FakeTelegram) {
    let ended_before = fake.calls_to("getUpdates").len();
    let mut idle = false;
    fake.wait_for("a getUpdates from the new owner", |state| {
        idle |= state.active_long_polls() == 0;
        let superseded = state.calls_to("getUpdates")[ended_before..]
            .iter()
            .any(|call| call.status == 409);
        (superseded || idle && state.active_long_polls() > 0).then_some(())
    })
    .await;
}

/// Starts `n` instances polling the fake Telegram, kills the poll's owner
/// with SIGKILL, and returns how long until a survivor's `/healthz` owns
/// the poll and until its `getUpdates` reaches the fake.
async fn takeover(n: usize) -> (Duration, Duration) {
    let db = Scratch::postgres().await;
    let fake = FakeTelegram::builder()
        .wait_timeout(Duration::from_secs(120))
        .start()
        .await;
    let mut cluster: Vec<Daemon> = (0..n)
        .map(|index| {
            instance(&db, index)
                .env("TELEGRAM_BOT_TOKEN", fake.token())
                .env("ASKBRIDGE_TELEGRAM_API_URL", fake.api_url())
                .start()
        })
        .collect();
    let http = daemon::client();
    let owner = until_telegram_owned(&cluster, &http).await;
    fake.wait_for("the owner's first getUpdates", |state| {
        (state.active_long_polls() > 0).then_some(())
    })
    .await;

    cluster[owner].kill();
    let killed = Instant::now();
    tokio::join!(
        async {
            until_telegram_owned(&cluster, &http).await;
            killed.elapsed()
        },
        async {
            until_new_poll(&fake).await;
            killed.elapsed()
        },
    )
}

/// The value at quantile `q` (0..=1) of sorted `values`.
fn quantile(sorted: &[Duration], q: f64) -> Duration {
    let rank = ((sorted.len() - 1) as f64 * q).round() as usize;
    sorted[rank]
}

fn millis(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1_000.0
}

async fn measure(n: usize) {
    let label = format!("cluster: {n} instance{}", if n == 1 { "" } else { "s" });
    let db = Scratch::postgres().await;
    let cluster = Arc::new((0..n).map(|i| instance(&db, i).start()).collect::<Vec<_>>());
    let rate = throughput(Arc::clone(&cluster)).await;
    println!("{label}: {rate:.0} asks/s created and answered ({CLIENTS} clients)");
    if n < 2 {
        return;
    }

    let mut latencies = reply_to_remote_waiter(&cluster).await;
    latencies.sort();
    println!(
        "{label}: reply → waiter on another instance: p50 {:.2} ms, p99 {:.2} ms, max {:.1} ms ({WAITS} asks)",
        millis(quantile(&latencies, 0.50)),
        millis(quantile(&latencies, 0.99)),
        millis(quantile(&latencies, 1.0)),
    );
    drop(cluster);

    let (leased, polled) = takeover(n).await;
    println!(
        "{label}: takeover after kill -9 of the Telegram poll owner: {:.1} s to /healthz, {:.1} s to its getUpdates (lease {DEFAULT_LEASE_SECONDS} s)",
        leased.as_secs_f64(),
        polled.as_secs_f64(),
    );
}

fn main() {
    if std::env::args().any(|arg| arg == "--list") {
        return; // `cargo bench -- --list` and `cargo test --benches`
    }
    if std::env::var_os(db::POSTGRES_URL_VAR).is_none() {
        eprintln!(
            "the cluster bench needs a Postgres server: set {} to a URL whose role may \
             create databases, e.g. postgres://askbridge:askbridge@127.0.0.1:5432/postgres",
            db::POSTGRES_URL_VAR
        );
        std::process::exit(1);
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("a tokio runtime");
    runtime.block_on(async {
        for n in 1..=3 {
            measure(n).await;
        }
    });
}

//! Load figures for the daemon (issue 3), printed, not asserted:
//!
//! 1. asks created and answered per second over HTTP with SQLite;
//! 2. p50/p99 from a reply to the waiting agent's response, with 1,000
//!    asks waited on at once (target p99 under 2 ms on loopback);
//! 3. resident memory with 100,000 pending asks (target under 300 MB);
//! 4. time to reload 100,000 pending asks on start (target under 2 s);
//! 5. the daemon's resident memory per waiting connection with 10,000
//!    long-polls (`GET /v1/asks/{id}?wait=120`) parked at once, one per
//!    ask and connection (target under 10 KB each), and p50/p99 from a
//!    reply to the waiting agent's response at that size.
//!
//! `cargo bench -p askbridge --bench load` runs all five; set
//! `ASKBRIDGE_LOAD_PENDING` for a smaller pending count and
//! `ASKBRIDGE_LOAD_WAITS` for fewer waits. Phases 3 and 4 run the bridge in
//! a child process each so the memory reported is its own; phase 5 measures
//! the `askbridge serve` binary itself (its clients stay in the bench's
//! process). Everything talks to 127.0.0.1 only and stops by itself.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

#[path = "../tests/daemon/mod.rs"]
mod daemon;

use askbridge::bridge::{Bridge, BridgeOptions, NewAsk};
use askbridge::http::{self, HttpOptions, Mounts, ShutdownSignal};
use askbridge_core::model::Target;
use askbridge_core::normalize::normalize_json;
use serde_json::json;

fn ask_json(n: usize) -> serde_json::Value {
    json!({
        "title": format!("Release {n}"),
        "questions": [{
            "id": "deploy_target", "header": "Deploy", "question": "Where should I deploy the build?",
            "options": [{"label": "Staging (Recommended)", "description": "safe, reversible"}, {"label": "Production"}]
        }],
        "timeoutSeconds": 3600
    })
}

async fn open(dir: &Path) -> Bridge {
    let url = format!("sqlite://{}", dir.join("load.db").display());
    let target = Target::parse("web").expect("web target");
    let bridge = Bridge::open(BridgeOptions::new(url, target))
        .await
        .expect("open bridge");
    bridge.add_channel(askbridge::web::channel());
    bridge
}

/// Long-polls opened at a time in phase 5, each batch parked before the next.
const WAIT_BATCH: usize = 1_000;

async fn serve(bridge: Bridge) -> SocketAddr {
    let (stop, shutdown) = ShutdownSignal::new();
    // Never stopped: the server lives as long as the process.
    std::mem::forget(stop);
    let app = http::app(
        bridge,
        HttpOptions {
            api_token: None,
            max_body_bytes: 1 << 20,
            cancel_on_disconnect: false,
            hooks: (&askbridge::config::HooksConfig::default()).into(),
            allowed_hosts: vec!["127.0.0.1".to_owned()],
        },
        Mounts::default(),
        shutdown.clone(),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("addr");
    tokio::spawn(http::serve(listener, app, shutdown));
    addr
}

fn client() -> reqwest::Client {
    reqwest::Client::builder()
        .no_proxy()
        .pool_max_idle_per_host(2048)
        .build()
        .expect("client")
}

async fn create(client: &reqwest::Client, base: &str, n: usize) -> String {
    let response: serde_json::Value = client
        .post(format!("{base}/v1/asks"))
        .json(&ask_json(n))
        .send()
        .await
        .expect("create")
        .json()
        .await
        .expect("create json");
    response["id"].as_str().expect("id").to_owned()
}

async fn reply(client: &reqwest::Client, base: &str, id: &str) {
    let response = client
        .post(format!("{base}/v1/asks/{id}/reply"))
        .json(&json!({"answers": {"deploy_target": ["Production"]}}))
        .send()
        .await
        .expect("reply");
    let status = response.status();
    if !status.is_success() {
        let body = response.text().await.unwrap_or_default();
        let ask = client
            .get(format!("{base}/v1/asks/{id}"))
            .send()
            .await
            .expect("get")
            .text()
            .await
            .unwrap_or_default();
        panic!("reply: {status}: {body}\n{ask}");
    }
}

async fn throughput(dir: &Path) {
    let base = format!("http://{}", serve(open(dir).await).await);
    let client = client();
    let total = 4_000;
    let workers = 32;
    let started = Instant::now();
    let mut tasks = Vec::new();
    for w in 0..workers {
        let (client, base) = (client.clone(), base.clone());
        tasks.push(tokio::spawn(async move {
            for n in (w..total).step_by(workers) {
                let id = create(&client, &base, n).await;
                reply(&client, &base, &id).await;
            }
        }));
    }
    for task in tasks {
        task.await.expect("worker");
    }
    let seconds = started.elapsed().as_secs_f64();
    println!(
        "throughput: {total} asks created and answered over HTTP in {seconds:.2} s = {:.0} asks/s ({workers} clients)",
        total as f64 / seconds
    );
}

async fn latency(dir: &Path) {
    let base = format!("http://{}", serve(open(dir).await).await);
    let client = client();
    let count = 1_000;
    let mut ids = Vec::new();
    for n in 0..count {
        ids.push(create(&client, &base, n).await);
    }
    let waiters = ids.iter().map(|id| wait_on(&client, &base, id)).collect();
    // Let every long-poll reach the daemon before the first reply.
    tokio::time::sleep(Duration::from_secs(2)).await;
    let samples = answer(&client, &base, &ids, waiters).await;
    println!(
        "latency: reply → waiting agent's response, {count} concurrent waits: {}",
        percentiles(&samples)
    );
}

/// A long-poll on one ask, on its own connection: when its response
/// arrived, and the ask's status in it.
type Waiter = tokio::task::JoinHandle<(Instant, String)>;

fn wait_on(client: &reqwest::Client, base: &str, id: &str) -> Waiter {
    let (client, url) = (client.clone(), format!("{base}/v1/asks/{id}?wait=120"));
    tokio::spawn(async move {
        let response = client.get(url).send().await.expect("wait");
        let arrived = Instant::now();
        let body: serde_json::Value = response.json().await.expect("wait json");
        (arrived, body["status"].as_str().unwrap_or("").to_owned())
    })
}

/// Replies to each ask in turn, each once its waiter's response is in;
/// returns the sorted times from sending a reply to its waiter's response.
async fn answer(
    client: &reqwest::Client,
    base: &str,
    ids: &[String],
    waiters: Vec<Waiter>,
) -> Vec<Duration> {
    let mut samples = Vec::with_capacity(ids.len());
    for (id, waiter) in ids.iter().zip(waiters) {
        let sent = Instant::now();
        reply(client, base, id).await;
        let (arrived, status) = waiter.await.expect("waiter");
        assert_eq!(status, "answered");
        samples.push(arrived.saturating_duration_since(sent));
    }
    samples.sort();
    samples
}

/// `p50 …, p99 …, max …` of sorted durations, in milliseconds.
fn percentiles(samples: &[Duration]) -> String {
    let at = |q: f64| samples[((samples.len() as f64 * q) as usize).min(samples.len() - 1)];
    format!(
        "p50 {:.2} ms, p99 {:.2} ms, max {:.2} ms",
        at(0.50).as_secs_f64() * 1e3,
        at(0.99).as_secs_f64() * 1e3,
        samples[samples.len() - 1].as_secs_f64() * 1e3
    )
}

/// The resident memory of a process (`self` or a pid), in megabytes.
fn rss_mb(process: &str) -> f64 {
    let status = std::fs::read_to_string(format!("/proc/{process}/status")).unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
        .map_or(f64::NAN, |kb| kb / 1024.0)
}

async fn populate(dir: &Path, pending: usize) {
    let bridge = open(dir).await;
    let ask = normalize_json(&ask_json(0)).expect("valid").ask;
    let started = Instant::now();
    for _ in 0..pending {
        bridge
            .create(NewAsk {
                ask: ask.clone(),
                idempotency_key: None,
            })
            .await
            .expect("create");
    }
    println!(
        "populate: {pending} pending asks created in {:.1} s; RSS with them pending: {:.0} MB",
        started.elapsed().as_secs_f64(),
        rss_mb("self")
    );
}

async fn reload(dir: &Path) {
    let before = rss_mb("self");
    let started = Instant::now();
    let bridge = open(dir).await;
    let took = started.elapsed();
    let pending = bridge.metrics().pending;
    println!(
        "reload: {pending} pending asks reloaded in {:.2} s; RSS {:.0} MB (process start {before:.0} MB)",
        took.as_secs_f64(),
        rss_mb("self")
    );
}

/// Phase 5: `count` asks on a real `askbridge serve` (its allocator, its
/// log subscriber, SQLite and the web channel), one long-poll on each
/// parked at once; the daemon's RSS growth per waiting connection, then
/// reply → waiter p50/p99 with all of them parked.
fn waits(runtime: &tokio::runtime::Runtime, count: usize) {
    // Warnings only: a log line per request is not what is measured.
    let daemon = daemon::Daemon::builder()
        .env("ASKBRIDGE_LOG", "askbridge=warn")
        .start();
    let pid = daemon.pid().expect("the daemon runs").to_string();
    runtime.block_on(park_and_answer(&pid, &daemon.base(), count));
}

async fn park_and_answer(pid: &str, base: &str, count: usize) {
    let client = client();
    let ids = create_many(&client, base, count).await;
    // Each ask read once first (as each wait reads it), so that what the
    // reads leave behind (SQLite's page cache, bounded per connection) is
    // in the figure before the waits and not counted per connection.
    read_all(&client, base, &ids).await;
    let before = rss_mb(pid);
    // A pool of its own, so that every wait holds a connection of its own.
    let waiting = reqwest::Client::builder()
        .no_proxy()
        .build()
        .expect("client");
    let started = Instant::now();
    let mut waiters = Vec::with_capacity(count);
    for batch in ids.chunks(WAIT_BATCH) {
        waiters.extend(batch.iter().map(|id| wait_on(&waiting, base, id)));
        until_waiting(&client, base, waiters.len()).await;
    }
    let parked_in = started.elapsed();
    // Every wait has reached its handler; let the last few finish their
    // version check with the database before measuring.
    tokio::time::sleep(Duration::from_secs(1)).await;
    let after = rss_mb(pid);
    assert_eq!(
        server_waiting(&client, base).await,
        count,
        "a wait ended early"
    );
    println!(
        "waits: {count} concurrent long-polls parked in {:.1} s; daemon RSS {before:.0} → {after:.0} MB = {:.1} KB per waiting connection",
        parked_in.as_secs_f64(),
        (after - before) * 1024.0 / count as f64
    );
    let samples = answer(&client, base, &ids, waiters).await;
    println!(
        "waits: reply → waiting agent's response, {count} concurrent waits: {}; daemon RSS after answering all {:.0} MB",
        percentiles(&samples),
        rss_mb(pid)
    );
}

/// Creates `count` asks over HTTP from a few clients at once; their ids in
/// creation order.
async fn create_many(client: &reqwest::Client, base: &str, count: usize) -> Vec<String> {
    let workers = 16;
    let mut tasks = Vec::new();
    for w in 0..workers {
        let (client, base) = (client.clone(), base.to_owned());
        tasks.push(tokio::spawn(async move {
            let mut ids = Vec::new();
            for n in (w..count).step_by(workers) {
                ids.push(create(&client, &base, n).await);
            }
            ids
        }));
    }
    let mut ids = Vec::with_capacity(count);
    for task in tasks {
        ids.extend(task.await.expect("creator"));
    }
    ids
}

/// `GET /v1/asks/{id}` (no wait) for every id, from a few clients at once.
async fn read_all(client: &reqwest::Client, base: &str, ids: &[String]) {
    let workers = 16;
    let mut tasks = Vec::new();
    for w in 0..workers {
        let (client, base) = (client.clone(), base.to_owned());
        let ids: Vec<String> = ids.iter().skip(w).step_by(workers).cloned().collect();
        tasks.push(tokio::spawn(async move {
            for id in ids {
                let response = client.get(format!("{base}/v1/asks/{id}")).send().await;
                assert_eq!(response.expect("read").status(), 200);
            }
        }));
    }
    for task in tasks {
        task.await.expect("reader");
    }
}

/// The daemon's count of long-polls waiting now (`/metrics`).
async fn server_waiting(client: &reqwest::Client, base: &str) -> usize {
    let text = client
        .get(format!("{base}/metrics"))
        .send()
        .await
        .expect("metrics")
        .text()
        .await
        .expect("metrics text");
    text.lines()
        .find_map(|line| line.strip_prefix("askbridge_http_waiting "))
        .and_then(|n| n.parse().ok())
        .expect("askbridge_http_waiting in /metrics")
}

/// Returns once the daemon counts at least `count` waiting long-polls;
/// panics after a minute.
async fn until_waiting(client: &reqwest::Client, base: &str, count: usize) {
    let started = Instant::now();
    loop {
        let waiting = server_waiting(client, base).await;
        if waiting >= count {
            return;
        }
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "only {waiting} of {count} long-polls reached the daemon"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

fn child(phase: &str, dir: &Path, pending: usize) {
    let status = std::process::Command::new(std::env::current_exe().expect("exe"))
        .args([
            "--phase",
            phase,
            &dir.display().to_string(),
            &pending.to_string(),
        ])
        .status()
        .expect("run phase");
    assert!(status.success(), "phase {phase} failed");
}

fn fresh_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("askbridge-load-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.iter().any(|a| a == "--list") {
        return; // `cargo bench -- --list` and `cargo test --benches`
    }
    // Phase 5 needs a socket per wait on each side; the daemon inherits it.
    let files = rlimit::increase_nofile_limit(u64::MAX).expect("raise the open-file limit");
    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    if let Some(at) = args.iter().position(|a| a == "--phase") {
        let dir = PathBuf::from(&args[at + 2]);
        let count = || args[at + 3].parse::<usize>().expect("count");
        match args[at + 1].as_str() {
            "populate" => runtime.block_on(populate(&dir, count())),
            "reload" => runtime.block_on(reload(&dir)),
            other => panic!("unknown phase {other}"),
        }
        return;
    }
    let count = |name: &str, default: usize| {
        std::env::var(name)
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(default)
    };
    let pending = count("ASKBRIDGE_LOAD_PENDING", 100_000);
    let waiting = count("ASKBRIDGE_LOAD_WAITS", 10_000);
    assert!(
        files >= waiting as u64 + 1_024,
        "{waiting} waits need more open files than the limit of {files}"
    );
    let dir = fresh_dir("throughput");
    runtime.block_on(throughput(&dir));
    let _ = std::fs::remove_dir_all(&dir);
    let dir = fresh_dir("latency");
    runtime.block_on(latency(&dir));
    let _ = std::fs::remove_dir_all(&dir);
    let dir = fresh_dir("pending");
    child("populate", &dir, pending);
    child("reload", &dir, pending);
    let _ = std::fs::remove_dir_all(&dir);
    waits(&runtime, waiting);
}

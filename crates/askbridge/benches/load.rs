//! Load figures for the daemon (issue 3), printed, not asserted:
//!
//! 1. asks created and answered per second over HTTP with SQLite;
//! 2. p50/p99 from a reply to the waiting agent's response, with 1,000
//!    asks waited on at once (target p99 under 2 ms on loopback);
//! 3. resident memory with 100,000 pending asks (target under 300 MB);
//! 4. time to reload 100,000 pending asks on start (target under 2 s).
//!
//! `cargo bench -p askbridge --bench load` runs all four; set
//! `ASKBRIDGE_LOAD_PENDING` for a smaller pending count. Phases 3 and 4 run in
//! a child process each so their memory is their own. Everything talks to
//! 127.0.0.1 only and stops by itself.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

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

async fn serve(bridge: Bridge) -> SocketAddr {
    let (_stop, shutdown) = ShutdownSignal::new();
    std::mem::forget(_stop);
    let app = http::app(
        bridge,
        HttpOptions {
            api_token: None,
            max_body_bytes: 1 << 20,
            cancel_on_disconnect: false,
        },
        Mounts::default(),
        shutdown,
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("addr");
    tokio::spawn(async move { axum::serve(listener, app).await });
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
    let mut waiters = Vec::new();
    for id in &ids {
        let (client, url) = (client.clone(), format!("{base}/v1/asks/{id}?wait=120"));
        waiters.push(tokio::spawn(async move {
            let response = client.get(url).send().await.expect("wait");
            let arrived = Instant::now();
            let body: serde_json::Value = response.json().await.expect("wait json");
            (arrived, body["status"].as_str().unwrap_or("").to_owned())
        }));
    }
    // Let every long-poll reach the daemon before the first reply.
    tokio::time::sleep(Duration::from_secs(2)).await;
    let mut samples = Vec::new();
    for (id, waiter) in ids.iter().zip(waiters) {
        let sent = Instant::now();
        reply(&client, &base, id).await;
        let (arrived, status) = waiter.await.expect("waiter");
        assert_eq!(status, "answered");
        samples.push(arrived.saturating_duration_since(sent));
    }
    samples.sort();
    let at = |q: f64| samples[((samples.len() as f64 * q) as usize).min(samples.len() - 1)];
    println!(
        "latency: reply → waiting agent's response, {count} concurrent waits: p50 {:.2} ms, p99 {:.2} ms, max {:.2} ms",
        at(0.50).as_secs_f64() * 1e3,
        at(0.99).as_secs_f64() * 1e3,
        samples[samples.len() - 1].as_secs_f64() * 1e3
    );
}

fn rss_mb() -> f64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
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
        rss_mb()
    );
}

async fn reload(dir: &Path) {
    let before = rss_mb();
    let started = Instant::now();
    let bridge = open(dir).await;
    let took = started.elapsed();
    let pending = bridge.metrics().pending;
    println!(
        "reload: {pending} pending asks reloaded in {:.2} s; RSS {:.0} MB (process start {before:.0} MB)",
        took.as_secs_f64(),
        rss_mb()
    );
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
    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    if let Some(at) = args.iter().position(|a| a == "--phase") {
        let dir = PathBuf::from(&args[at + 2]);
        let pending: usize = args[at + 3].parse().expect("count");
        match args[at + 1].as_str() {
            "populate" => runtime.block_on(populate(&dir, pending)),
            "reload" => runtime.block_on(reload(&dir)),
            other => panic!("unknown phase {other}"),
        }
        return;
    }
    if args.iter().any(|a| a == "--list") {
        return; // `cargo bench -- --list` and `cargo test --benches`
    }
    let pending: usize = std::env::var("ASKBRIDGE_LOAD_PENDING")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(100_000);
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
}

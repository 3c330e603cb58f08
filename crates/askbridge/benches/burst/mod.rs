//! What the burst benches share: the command line (`-- 300` for the
//! number of asks; `--list` does nothing, for `cargo test --benches`), a
//! runtime, a scratch folder removed afterwards, and percentiles.

#![allow(dead_code)]

use std::future::Future;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Runs `burst(dir, asks)` on a fresh runtime in a fresh scratch folder
/// named after `name`; `asks` is the command line's number, else
/// `default_asks`.
pub fn main<F, Fut>(name: &str, default_asks: usize, burst: F)
where
    F: FnOnce(PathBuf, usize) -> Fut,
    Fut: Future<Output = ()>,
{
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.iter().any(|a| a == "--list") {
        return;
    }
    let total = args
        .iter()
        .find(|a| !a.starts_with("--"))
        .map_or(default_asks, |a| {
            a.parse().expect("the number of asks, e.g. 300")
        });
    assert!(total > 0, "at least one ask");
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let dir = fresh_dir(name);
    runtime.block_on(burst(dir.clone(), total));
    drop(runtime);
    let _ = std::fs::remove_dir_all(&dir);
}

fn fresh_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("askbridge-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir
}

/// The SQLite URL of the bench's database in `dir`.
pub fn database_url(dir: &Path) -> String {
    format!("sqlite://{}", dir.join("bench.db").display())
}

/// Creates `asks` one after another, as an agent in a hurry would.
pub async fn create_all(bridge: &askbridge::bridge::Bridge, asks: Vec<askbridge_core::model::Ask>) {
    for ask in asks {
        bridge
            .create(askbridge::bridge::NewAsk {
                ask,
                idempotency_key: None,
            })
            .await
            .expect("create");
    }
}

/// The `share` percentile (0–1] of sorted durations.
pub fn percentile(sorted: &[Duration], share: f64) -> Duration {
    let index = ((sorted.len() as f64 * share).ceil() as usize).clamp(1, sorted.len()) - 1;
    sorted[index]
}

/// `p50 0.162 s, p99 0.262 s, max 0.263 s` of sorted durations.
pub fn spread(sorted: &[Duration]) -> String {
    format!(
        "p50 {:.3} s, p99 {:.3} s, max {:.3} s",
        percentile(sorted, 0.5).as_secs_f64(),
        percentile(sorted, 0.99).as_secs_f64(),
        percentile(sorted, 1.0).as_secs_f64(),
    )
}

/// Prints how many of the `total` asks ended answered, and how many not.
pub async fn report_answered(bridge: &askbridge::bridge::Bridge, total: usize) {
    let views = bridge
        .list(askbridge::bridge::ListFilter::default())
        .await
        .expect("list");
    let answered = views
        .iter()
        .filter(|view| view.state.as_str() == "answered")
        .count();
    println!(
        "asks: {answered} of {total} answered, {} lost",
        total - answered
    );
}

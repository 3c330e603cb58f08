//! Soak runs at 20 % faults, printed: 1,000 asks a platform to 100 places
//! through the real channel to its fake, which fails one request in five
//! (the platform's own 429, `500`, `502`, a closed connection, or no answer
//! at all, so the client's own timeout runs out) and drops its live
//! connection every 2 s; each ask is answered by a press or a typed reply.
//! Figures: asks answered or failed, faults injected, duplicates, answers
//! acknowledged, delivery and answer delays; a lost or doubled ask fails
//! the run.
//!
//! `cargo bench -p askbridge --bench soak` runs every platform;
//! `-- 300 slack` runs 300 asks on Slack only. Everything talks to
//! 127.0.0.1 only and stops by itself.

#[path = "../tests/soak/mod.rs"]
mod soak;

use std::time::Duration;

use askbridge_testkit::faults::Faults;
use soak::harness::{self, Plan};
use soak::{discord, feishu, slack, telegram};

const DEFAULT_ASKS: usize = 1_000;
const PLACES: usize = 100;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.iter().any(|a| a == "--list") {
        return;
    }
    let asks = args
        .iter()
        .find_map(|a| a.parse().ok())
        .unwrap_or(DEFAULT_ASKS);
    let only: Vec<&str> = args
        .iter()
        .filter(|a| !a.starts_with("--") && a.parse::<usize>().is_err())
        .map(String::as_str)
        .collect();
    let wanted = |name: &str| only.is_empty() || only.contains(&name);
    let plan = Plan {
        asks,
        places: PLACES.min(asks),
        faults: Faults::share(0.2).seed(2026),
        drop_every: Some(Duration::from_secs(2)),
        budget: Duration::from_secs(1_800),
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("runtime");
    runtime.block_on(async {
        if wanted("telegram") {
            let mut platform = telegram::TelegramSoak::start(plan.faults.clone()).await;
            harness::run_clean(&mut platform, &plan).await;
        }
        if wanted("discord") {
            let mut platform = discord::DiscordSoak::start(plan.faults.clone(), plan.places).await;
            harness::run_clean(&mut platform, &plan).await;
        }
        if wanted("slack") {
            let mut platform = slack::SlackSoak::start(plan.faults.clone(), plan.places).await;
            harness::run_clean(&mut platform, &plan).await;
        }
        if wanted("feishu") {
            let mut platform = feishu::FeishuSoak::start(plan.faults.clone(), plan.places).await;
            harness::run_clean(&mut platform, &plan).await;
        }
    });
}

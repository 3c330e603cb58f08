//! Soak runs at 20 % faults, one per platform: asks posted through the real
//! channel to a fake that fails one request in five (429 in the platform's
//! form, 500, 502, closed connections, no answer for a while) and drops its
//! live connection now and then. Every ask must be posted exactly once,
//! answered as the person said (by press or typed reply), and closed
//! exactly once — or end `delivery_failed` with the platform's reason.
//!
//! Small runs here (100 asks to 10 places); each prints its figures with
//! `--nocapture`.

mod soak;

use std::time::Duration;

use askbridge_testkit::faults::Faults;
use soak::harness::{self, Plan};
use soak::{discord, feishu, slack, telegram};

/// Asks a run sends here.
const ASKS: usize = 100;

fn plan(seed: u64) -> Plan {
    Plan {
        asks: ASKS,
        places: 10,
        // Unanswered requests are held 1 s, then closed: waiting out the
        // clients' own timeouts (17–60 s) would make a slow test.
        faults: Faults::share(0.2).hang(Duration::from_secs(1)).seed(seed),
        drop_every: Some(Duration::from_millis(700)),
        budget: Duration::from_secs(120),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn telegram_at_20_percent_faults_loses_and_doubles_nothing() {
    let plan = plan(24);
    let mut platform = telegram::TelegramSoak::start(plan.faults.clone()).await;
    let figures = harness::run_clean(&mut platform, &plan).await;
    assert!(figures.faults.total() > 0, "no faults were injected");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn discord_at_20_percent_faults_loses_and_doubles_nothing() {
    let plan = plan(25);
    let mut platform = discord::DiscordSoak::start(plan.faults.clone(), plan.places).await;
    let figures = harness::run_clean(&mut platform, &plan).await;
    assert!(figures.faults.total() > 0, "no faults were injected");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slack_at_20_percent_faults_loses_and_doubles_nothing() {
    let plan = plan(26);
    let mut platform = slack::SlackSoak::start(plan.faults.clone(), plan.places).await;
    let figures = harness::run_clean(&mut platform, &plan).await;
    assert!(figures.faults.total() > 0, "no faults were injected");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn feishu_at_20_percent_faults_loses_and_doubles_nothing() {
    let plan = plan(27);
    let mut platform = feishu::FeishuSoak::start(plan.faults.clone(), plan.places).await;
    let figures = harness::run_clean(&mut platform, &plan).await;
    assert!(figures.faults.total() > 0, "no faults were injected");
}

/// Without faults, replies come right after each post: a reply to a
/// question that is posted but not yet on record must wait for the record,
/// not fall through to the newest pending ask (which answered an ask not
/// yet shown and left this one open).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn telegram_replies_right_after_each_post_answer_that_post() {
    let plan = Plan {
        faults: Faults::NONE,
        drop_every: None,
        ..plan(0)
    };
    let mut platform = telegram::TelegramSoak::start(plan.faults.clone()).await;
    harness::run_clean(&mut platform, &plan).await;
}

//! A soak run against a faulty platform, the same for every platform: many
//! one-question asks go out through the real channel to a fake that fails a
//! share of its requests (and drops its live connection now and then); the
//! person answers each by a press or a typed reply; then every ask must
//! have been posted exactly once and closed exactly once, answered as the
//! person said, or ended `delivery_failed` with the platform's reason.
//!
//! Used by `tests/faults.rs`.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::fmt;
use std::time::{Duration, Instant};

use askbridge::bridge::{Bridge, BridgeEvent, BridgeOptions, NewAsk};
use askbridge_core::model::Target;
use askbridge_core::normalize::normalize_json;
use askbridge_testkit::faults::{FaultCounts, Faults};
use futures_util::future::join_all;
use serde_json::json;

/// The label every ask is answered with, by press or by typing `2`.
pub const CHOSEN: &str = "Production";

/// At most one ask in this many may end `delivery_failed` (see
/// [`Figures::assert_clean`]).
pub const MOST_FAILED_PER: usize = 1_000;

/// What to run.
#[derive(Debug, Clone)]
pub struct Plan {
    /// Asks created.
    pub asks: usize,
    /// Places they go to, round robin.
    pub places: usize,
    /// What the fake fails.
    pub faults: Faults,
    /// Drop the platform's live connection this often (none: never).
    pub drop_every: Option<Duration>,
    /// How long the run may take before it is called stuck.
    pub budget: Duration,
}

/// One question message seen in the fake.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Post {
    /// The soak ask it belongs to (from its text).
    pub ask: usize,
    /// The place it is in, as the platform names it.
    pub place: String,
    /// The message's id on the platform.
    pub message: String,
}

/// A platform's side of a soak run: its fake, already started with
/// `plan.faults`, and its channel wired to the bridge.
pub trait Platform {
    /// The platform's name in figures.
    fn name(&self) -> &'static str;
    /// Registers the channel with `bridge` and starts receiving.
    fn connect(&mut self, bridge: &Bridge) -> impl Future<Output = ()>;
    /// The ask's `to` for place number `place`.
    fn target(&self, place: usize) -> String;
    /// Every question message the bot has posted so far (successful
    /// posts only), once there are more than `seen`.
    fn posts_beyond(&self, seen: usize) -> impl Future<Output = Vec<Post>>;
    /// The person presses [`CHOSEN`]'s button under `post`.
    fn press(&self, post: &Post) -> impl Future<Output = ()>;
    /// The person types `2` in reply to `post`.
    fn type_reply(&self, post: &Post) -> impl Future<Output = ()>;
    /// Successful closing edits of `post` so far, once there is at least
    /// one for each of `posts`.
    fn closings(&self, posts: &[Post]) -> impl Future<Output = HashMap<Post, usize>>;
    /// Presses and typed replies the platform saw answered (acknowledged,
    /// `answerCallbackQuery`ed, …) in time, and those it did not.
    fn acknowledged(&self) -> (usize, usize);
    /// Drops the live connection (gateway, socket, long connection); a
    /// no-op where there is none.
    fn drop_connection(&self);
    /// Faults injected so far.
    fn fault_counts(&self) -> FaultCounts;
}

/// What a run found.
#[derive(Debug, Default)]
pub struct Figures {
    pub platform: &'static str,
    pub asks: usize,
    pub answered: usize,
    pub delivery_failed: Vec<(usize, String)>,
    /// Asks not answered as the person said (id, state, answers).
    pub wrong: Vec<String>,
    /// Asks posted more than once, with the count.
    pub doubled_posts: Vec<(usize, usize)>,
    /// Posts closed more than once, with the count.
    pub doubled_closings: Vec<(Post, usize)>,
    pub faults: FaultCounts,
    pub connection_drops: usize,
    pub acknowledged: usize,
    pub unacknowledged: usize,
    /// Create → question seen in the fake, sorted.
    pub delivery: Vec<Duration>,
    /// Answer sent → ask answered (by the ask's own clock), sorted.
    pub answer: Vec<Duration>,
    pub took: Duration,
}

impl Figures {
    /// Nothing lost, nothing doubled, every answer as given.
    pub fn assert_clean(&self) {
        assert!(
            self.wrong.is_empty(),
            "{}: wrong outcomes: {:?}",
            self.platform,
            self.wrong
        );
        assert!(
            self.doubled_posts.is_empty(),
            "{}: asks posted twice: {:?}",
            self.platform,
            self.doubled_posts
        );
        assert!(
            self.doubled_closings.is_empty(),
            "{}: posts closed twice: {:?}",
            self.platform,
            self.doubled_closings
        );
        assert_eq!(
            self.answered + self.delivery_failed.len(),
            self.asks,
            "{}: asks neither answered nor failed",
            self.platform
        );
        for (ask, reason) in &self.delivery_failed {
            assert!(
                !reason.is_empty(),
                "{}: ask {ask} failed without a reason",
                self.platform
            );
        }
        // Every fault the fakes inject can be retried (a rate limit is
        // waited out without using up an attempt; a 5xx, a closed or an
        // unanswered connection is transient), and the outbox tries a
        // delivery 6 times (`RetryPolicy::default`). At 20 % faults, 16 %
        // of requests meet a transient one, so a one-request delivery
        // fails only when 6 tries in a row do: 0.16^6, about 2 in 100,000.
        // The runs here see none (0 of 100 on every platform; 1,000 in the
        // benchmark): more than 1 in 1,000 asks (so any in the tests' 100)
        // means retrying broke.
        assert!(
            self.delivery_failed.len() <= self.asks / MOST_FAILED_PER,
            "{}: {} of {} asks delivery_failed (at most 1 in {MOST_FAILED_PER}): {:?}",
            self.platform,
            self.delivery_failed.len(),
            self.asks,
            self.delivery_failed
        );
    }
}

impl fmt::Display for Figures {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let FaultCounts {
            requests,
            rate_limited,
            server_errors,
            bad_gateways,
            resets,
            unanswered,
        } = self.faults;
        writeln!(
            f,
            "{}: {} asks in {:.1} s: {} answered, {} delivery_failed, {} wrong",
            self.platform,
            self.asks,
            self.took.as_secs_f64(),
            self.answered,
            self.delivery_failed.len(),
            self.wrong.len()
        )?;
        writeln!(
            f,
            "  faults: {} of {requests} requests ({:.1} %): {rate_limited} rate limited, \
             {server_errors} × 500, {bad_gateways} × 502, {resets} closed, {unanswered} unanswered; \
             {} connection drops",
            self.faults.total(),
            self.faults.total() as f64 * 100.0 / requests.max(1) as f64,
            self.connection_drops
        )?;
        writeln!(
            f,
            "  duplicates: {} asks posted twice, {} posts closed twice",
            self.doubled_posts.len(),
            self.doubled_closings.len()
        )?;
        writeln!(
            f,
            "  answers acknowledged: {}, not: {}",
            self.acknowledged, self.unacknowledged
        )?;
        for (label, sorted) in [("delivery", &self.delivery), ("answer", &self.answer)] {
            if sorted.is_empty() {
                continue;
            }
            writeln!(
                f,
                "  {label} delay: p50 {:.3} s, p99 {:.3} s, max {:.3} s",
                percentile(sorted, 0.5).as_secs_f64(),
                percentile(sorted, 0.99).as_secs_f64(),
                percentile(sorted, 1.0).as_secs_f64()
            )?;
        }
        Ok(())
    }
}

/// The `share` percentile (0–1] of sorted durations.
pub fn percentile(sorted: &[Duration], share: f64) -> Duration {
    let index = ((sorted.len() as f64 * share).ceil() as usize).clamp(1, sorted.len()) - 1;
    sorted[index]
}

/// The soak ask number in a message's text (`Soak ask 17?`).
pub fn ask_number(text: &str) -> Option<usize> {
    let rest = &text[text.find("Soak ask ")? + "Soak ask ".len()..];
    let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
    digits.parse().ok()
}

fn ask_json(n: usize, to: &str) -> serde_json::Value {
    json!({
        "to": to,
        "questions": [{
            "question": format!("Soak ask {n}?"),
            "options": ["Staging (Recommended)", CHOSEN]
        }]
    })
}

/// A background task that stops when dropped (a channel's receiving
/// side).
#[derive(Default)]
pub struct Running(Option<tokio::task::JoinHandle<()>>);

impl Running {
    pub fn new(task: tokio::task::JoinHandle<()>) -> Running {
        Running(Some(task))
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        if let Some(task) = self.0.take() {
            task.abort();
        }
    }
}

/// [`run`] in a scratch folder of its own, removed afterwards; prints the
/// figures and fails on anything lost, doubled or answered wrongly.
pub async fn run_clean<P: Platform>(platform: &mut P, plan: &Plan) -> Figures {
    static RUNS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let run_number = RUNS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!(
        "askbridge-soak-{}-{}-{run_number}",
        platform.name(),
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch dir");
    let figures = run(platform, plan, &dir).await;
    let _ = std::fs::remove_dir_all(&dir);
    println!("{figures}");
    figures.assert_clean();
    figures
}

/// Runs `plan` against `platform` with a fresh SQLite database in `dir`.
pub async fn run<P: Platform>(platform: &mut P, plan: &Plan, dir: &std::path::Path) -> Figures {
    let started = Instant::now();
    let url = format!("sqlite://{}", dir.join("soak.db").display());
    let bridge = Bridge::open(BridgeOptions::new(url, Target::parse("web").expect("web")))
        .await
        .expect("open bridge");
    platform.connect(&bridge).await;

    let mut figures = Figures {
        platform: platform.name(),
        asks: plan.asks,
        ..Figures::default()
    };
    let mut ids = Vec::with_capacity(plan.asks);
    let mut created_at = Vec::with_capacity(plan.asks);
    for n in 0..plan.asks {
        let ask = normalize_json(&ask_json(n, &platform.target(n % plan.places)))
            .expect("valid ask")
            .ask;
        let (view, _) = bridge
            .create(NewAsk {
                ask,
                idempotency_key: None,
            })
            .await
            .expect("create");
        ids.push(view.id);
        created_at.push(Instant::now());
    }

    // Watch the posts appear, answering each as it comes, while the live
    // connection drops now and then.
    let mut first_seen: BTreeMap<usize, Post> = BTreeMap::new();
    let mut answered_at: HashMap<usize, u64> = HashMap::new();
    let mut all_posts: Vec<Post> = Vec::new();
    let mut drops = plan.drop_every.map(tokio::time::interval);
    if let Some(drops) = &mut drops {
        drops.tick().await;
    }
    let deadline = tokio::time::Instant::now() + plan.budget;
    let mut events = bridge.subscribe();
    let mut failed = failed_ids(&bridge, &ids).await;
    while first_seen.len() + failed.len() < plan.asks {
        let posts = tokio::select! {
            posts = platform.posts_beyond(all_posts.len()) => posts,
            event = events.recv() => {
                match event {
                    Ok(BridgeEvent::Ended(view)) if view.state.as_str() == "delivery_failed" => {
                        failed.insert(view.id.clone());
                    }
                    Ok(_) => {}
                    Err(_) => failed = failed_ids(&bridge, &ids).await,
                }
                continue;
            }
            () = tick(&mut drops) => {
                platform.drop_connection();
                figures.connection_drops += 1;
                continue;
            }
            () = tokio::time::sleep_until(deadline) => panic!(
                "{}: posts stopped coming: {} of {} asks posted, {} failed; unposted: {:?}",
                platform.name(),
                first_seen.len(),
                plan.asks,
                failed.len(),
                unposted(&bridge, &ids, &first_seen).await
            ),
        };
        let now = Instant::now();
        let mut fresh = Vec::new();
        for post in posts.iter().skip(all_posts.len()) {
            if first_seen.contains_key(&post.ask) {
                continue;
            }
            figures
                .delivery
                .push(now.duration_since(created_at[post.ask]));
            answered_at.insert(post.ask, unix_millis());
            first_seen.insert(post.ask, post.clone());
            fresh.push(post);
        }
        // Answered together, so a slow answer does not hold up seeing
        // the next posts.
        let answering: &P = platform;
        join_all(fresh.into_iter().map(|post| async move {
            if post.ask % 2 == 0 {
                answering.press(post).await;
            } else {
                answering.type_reply(post).await;
            }
        }))
        .await;
        all_posts = posts;
    }

    // Every ask ends: answered as the person said, or failed.
    let views = tokio::select! {
        views = join_all(ids.iter().map(|id| bridge.wait(id, plan.budget))) => views,
        () = drop_while(&mut drops, platform, &mut figures.connection_drops) => unreachable!(),
    };
    for ((n, id), view) in ids.iter().enumerate().zip(views) {
        let view = view.expect("wait");
        let outcome = view.outcome.as_ref();
        match view.state.as_str() {
            "answered"
                if outcome.is_some_and(|o| {
                    o.answers.len() == 1 && o.answers[0].1 == [CHOSEN.to_owned()]
                }) =>
            {
                figures.answered += 1;
                if let (Some(sent), Some(outcome)) = (answered_at.get(&n), outcome) {
                    let took = outcome.answered_at.0.saturating_sub(*sent);
                    figures.answer.push(Duration::from_millis(took));
                }
            }
            "delivery_failed" => figures.delivery_failed.push((
                n,
                outcome.and_then(|o| o.failure.clone()).unwrap_or_default(),
            )),
            state => figures.wrong.push(format!(
                "{n} {id}: {state} {:?}",
                outcome.map(|o| &o.answers)
            )),
        }
    }

    // Every post closed once; nothing posted twice.
    let closings = platform.closings(&all_posts).await;
    let mut per_ask: BTreeMap<usize, usize> = BTreeMap::new();
    for post in &all_posts {
        *per_ask.entry(post.ask).or_default() += 1;
    }
    figures.doubled_posts = per_ask
        .into_iter()
        .filter(|(_, count)| *count > 1)
        .collect();
    let mut doubled: Vec<(Post, usize)> = closings
        .into_iter()
        .filter(|(_, count)| *count > 1)
        .collect();
    doubled.sort_by_key(|(post, _)| post.ask);
    figures.doubled_closings = doubled;
    (figures.acknowledged, figures.unacknowledged) = platform.acknowledged();
    figures.faults = platform.fault_counts();
    figures.delivery.sort_unstable();
    figures.answer.sort_unstable();
    figures.took = started.elapsed();
    bridge.leave().await.expect("leave");
    figures
}

fn unix_millis() -> u64 {
    let since = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("after 1970");
    u64::try_from(since.as_millis()).expect("a sane clock")
}

/// The asks not seen posted, with their state and message refs.
async fn unposted(bridge: &Bridge, ids: &[String], seen: &BTreeMap<usize, Post>) -> Vec<String> {
    let mut unposted = Vec::new();
    for (n, id) in ids
        .iter()
        .enumerate()
        .filter(|(n, _)| !seen.contains_key(n))
    {
        let view = bridge.get(id).await.expect("get");
        let refs = bridge.message_refs(id).await.expect("refs");
        unposted.push(format!("{n} {id} {} {refs:?}", view.state.as_str()));
    }
    unposted
}

/// Those of `ids` that ended without being delivered.
async fn failed_ids(bridge: &Bridge, ids: &[String]) -> HashSet<String> {
    let mut failed = HashSet::new();
    for id in ids {
        if bridge.get(id).await.expect("get").state.as_str() == "delivery_failed" {
            failed.insert(id.clone());
        }
    }
    failed
}

async fn tick(drops: &mut Option<tokio::time::Interval>) {
    match drops {
        Some(drops) => {
            drops.tick().await;
        }
        None => std::future::pending().await,
    }
}

/// Drops the platform's connection on every tick, forever.
async fn drop_while<P: Platform>(
    drops: &mut Option<tokio::time::Interval>,
    platform: &P,
    count: &mut usize,
) {
    loop {
        tick(drops).await;
        platform.drop_connection();
        *count += 1;
    }
}

#[cfg(test)]
mod tests {
    /// The regression: any number of `delivery_failed` passed, so a soak
    /// whose retrying broke still did.
    #[test]
    fn more_than_one_failed_delivery_in_a_thousand_asks_is_not_clean() {
        let figures = |asks: usize, failed: usize| super::Figures {
            platform: "fake",
            asks,
            answered: asks - failed,
            delivery_failed: (0..failed).map(|n| (n, "500".to_owned())).collect(),
            ..super::Figures::default()
        };
        figures(100, 0).assert_clean();
        figures(1_000, 1).assert_clean();
        let refused = std::panic::catch_unwind(|| figures(100, 1).assert_clean())
            .expect_err("1 failed delivery in 100 asks passed");
        let message = refused
            .downcast_ref::<String>()
            .expect("a formatted panic message");
        assert!(
            message.contains("1 of 100 asks delivery_failed (at most 1 in 1000)"),
            "{message}"
        );
    }
}

//! Teams delivery and card presses under a burst, printed, not asserted:
//! 300 asks to 30 group chats created as fast as possible, delivered
//! through the real Teams channel (the Bot Connector client and its
//! token) to the local fake connector with Teams' limit of 7 messages a
//! second per conversation switched on; then "Yes" pressed on every card
//! at once, as `adaptiveCard/action` invokes posted to the channel's
//! messaging endpoint, as the Bot Connector posts them.
//!
//! Figures: time to create the asks; time until the fake has every card;
//! cards a second; `429`s the fake returned (each waited out by the
//! ask's outbox and sent again); cards lost and doubled; for the presses,
//! how long each invoke took to be answered (the answer is sent once the
//! press is stored: the agent waiting on the ask is woken then), and how
//! many asks ended answered.
//!
//! `cargo bench -p askbridge --bench teams_burst` sends 300 asks; `-- 1000`
//! sends 1,000. Everything talks to 127.0.0.1 only and stops by itself.

mod burst;

use std::sync::Arc;
use std::time::Instant;

use askbridge::bridge::{Bridge, BridgeOptions};
use askbridge::channels::teams::Teams;
use askbridge::config::{Secret, TeamsConfig};
use askbridge_core::model::Target;
use askbridge_core::normalize::normalize_json;
use askbridge_core::render::{Locale, Mode};
use askbridge_testkit::teams::FakeConnector;
use serde_json::{Value, json};

/// Asks sent unless the command line says otherwise.
const DEFAULT_ASKS: usize = 300;
/// Conversations the asks go to, round robin.
const CHATS: usize = 30;
/// Teams' limit for a bot in one conversation, a second.
const PER_SECOND: usize = 7;
const APP_ID: &str = "11111111-2222-3333-4444-555555555555";
const ALICE: &str = "aaaaaaaa-0000-0000-0000-000000000001";

fn chat(n: usize) -> String {
    format!("19:burst{:02}@thread.v2", n % CHATS)
}

fn ask_json(n: usize) -> Value {
    json!({
        "to": format!("teams:{}", chat(n)),
        "questions": [{"question": format!("Ship build {n}?"), "type": "confirm"}]
    })
}

/// The data of the card's action titled `title`.
fn action(value: &Value, title: &str) -> Option<Value> {
    match value {
        Value::Object(object) => {
            if object.get("type") == Some(&json!("Action.Execute")) && object["title"] == title {
                return object.get("data").cloned();
            }
            object.values().find_map(|child| action(child, title))
        }
        Value::Array(list) => list.iter().find_map(|child| action(child, title)),
        _ => None,
    }
}

/// Alice presses the action with `data` on card `card` in `chat`, as the
/// Bot Connector posts it to `endpoint`; returns how long the answer took.
async fn press(
    http: reqwest::Client,
    endpoint: String,
    service_url: String,
    chat: String,
    card: String,
    data: Value,
) -> Option<std::time::Duration> {
    let invoke = json!({
        "type": "invoke", "name": "adaptiveCard/action",
        "id": uuid::Uuid::new_v4().to_string(),
        "channelId": "msteams", "serviceUrl": service_url,
        "from": {"id": "29:alice", "name": "Alice", "aadObjectId": ALICE},
        "recipient": {"id": format!("28:{APP_ID}"), "name": "askbridge"},
        "conversation": {"id": chat, "conversationType": "groupChat", "isGroup": true},
        "replyToId": card,
        "value": {"action": {"type": "Action.Execute", "verb": "askbridge", "data": data}},
    });
    let started = Instant::now();
    let response = http.post(&endpoint).json(&invoke).send().await.ok()?;
    let answered = response.status().is_success() && response.bytes().await.is_ok();
    answered.then(|| started.elapsed())
}

async fn run(dir: &std::path::Path, total: usize) {
    let fake = Arc::new(FakeConnector::start().await);
    fake.limit_per_second(PER_SECOND);

    let url = burst::database_url(dir);
    let bridge = Bridge::open(BridgeOptions::new(url, Target::parse("web").expect("web")))
        .await
        .expect("open bridge");
    let teams = Teams::new(
        &bridge,
        &TeamsConfig {
            app_id: APP_ID.to_owned(),
            app_password: Secret::new("secret".to_owned()),
            tenant_id: None,
            login_url: fake.url(),
            openid_metadata_url: String::new(),
            service_url: fake.url(),
            insecure_skip_token_check: true,
            render: Mode::Buttons,
            locale: Locale::En,
            allowed_users: vec![],
        },
    )
    .expect("Teams channel");
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("a free port");
    let endpoint = format!(
        "http://{}/teams/messages",
        listener.local_addr().expect("its address")
    );
    let router = teams.router();
    tokio::spawn(async move { axum::serve(listener, router).await });

    let asks: Vec<_> = (0..total)
        .map(|n| normalize_json(&ask_json(n)).expect("valid ask").ask)
        .collect();
    let started = Instant::now();
    burst::create_all(&bridge, asks).await;
    let created = started.elapsed();
    println!(
        "create: {total} asks to {CHATS} chats in {:.3} s = {:.0} asks/s",
        created.as_secs_f64(),
        total as f64 / created.as_secs_f64()
    );

    let last = fake
        .wait_for("every card", |state| {
            (state.posts.len() >= total).then(|| state.posts[total - 1].at)
        })
        .await;
    let seconds = last.duration_since(started).as_secs_f64();
    let allowed = (PER_SECOND * CHATS) as f64;
    println!(
        "posted: {total} cards in {seconds:.2} s = {:.1}/s (the limit allows {allowed:.0}/s over {CHATS} chats)",
        total as f64 / seconds
    );
    let (cards, limited): (Vec<_>, usize) = {
        let state = fake.state();
        let limited = state
            .refused
            .iter()
            .filter(|(_, code, _)| *code == 429)
            .count();
        (state.posts.clone(), limited)
    };
    let mut texts: Vec<String> = cards
        .iter()
        .map(|card| card.activity["summary"].to_string())
        .collect();
    texts.sort_unstable();
    texts.dedup();
    println!(
        "cards stored: {} for {total} asks ({} lost, {} doubled); 429s from the fake: {limited}, each waited out",
        cards.len(),
        total.saturating_sub(texts.len()),
        cards.len().saturating_sub(texts.len())
    );

    let http = reqwest::Client::new();
    let presses: Vec<_> = cards
        .iter()
        .filter_map(|card| {
            let data = action(&card.activity, "Yes")?;
            Some(tokio::spawn(press(
                http.clone(),
                endpoint.clone(),
                fake.url(),
                card.conversation.clone(),
                card.id.clone(),
                data,
            )))
        })
        .collect();
    let pressed = presses.len();
    let mut waits = Vec::with_capacity(pressed);
    let mut failed = 0;
    for press in presses {
        match press.await.expect("press") {
            Some(wait) => waits.push(wait),
            None => failed += 1,
        }
    }
    waits.sort_unstable();
    println!(
        "presses: {pressed} at once; answered after {}; failed: {failed}",
        burst::spread(&waits),
    );

    burst::report_answered(&bridge, total).await;
}

fn main() {
    burst::main("teams-burst", DEFAULT_ASKS, |dir, total| async move {
        run(&dir, total).await;
    });
}

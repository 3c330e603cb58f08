//! Several `askbridge serve` processes on one Postgres database: an ask
//! created on one instance is waited on at another and answered at a
//! third; an instance killed with SIGKILL loses nothing it acknowledged;
//! when the instance polling Telegram (the fake Bot API) is killed, another
//! takes the poll over and a press on a message posted before resolves;
//! when the database is cut off and comes back, nothing acknowledged is
//! lost and nothing is asked twice, and what a person does meanwhile is
//! not acknowledged (Telegram, Slack, Feishu) until it is recorded; when
//! Postgres itself restarts mid-loop, every acknowledged ask and answer is
//! there and every parked waiter hears its answer.
//!
//! Needs the test Postgres server (`ASKBRIDGE_TEST_POSTGRES_URL`, see
//! `db`), and the server programs for a private one (`db::server`). Nothing sleeps: waiting is the API's own long-poll.

mod daemon;
mod db;
mod proxy;

use std::time::{Duration, Instant};

use askbridge_testkit::telegram::{Chat, FakeTelegram, User};
use daemon::{Api, Builder, Daemon};
use db::Scratch;
use db::server::Shutdown;
use proxy::Proxy;
use serde_json::{Value, json};

/// Leases short enough that a takeover happens within a test.
const LEASE_SECONDS: &str = "2";

fn instance(db: &Scratch, name: &str) -> Daemon {
    instance_builder(db, name).start()
}

fn instance_builder(db: &Scratch, name: &str) -> Builder {
    Daemon::builder()
        .env("ASKBRIDGE_DATABASE_URL", db.url())
        .env("ASKBRIDGE_CLUSTER_INSTANCE", name)
        .env("ASKBRIDGE_CLUSTER_LEASE_SECONDS", LEASE_SECONDS)
}

/// An instance whose Telegram channel talks to `fake`.
fn telegram_instance(db: &Scratch, name: &str, fake: &FakeTelegram) -> Daemon {
    instance_builder(db, name)
        .env("TELEGRAM_BOT_TOKEN", fake.token())
        .env("ASKBRIDGE_TELEGRAM_API_URL", fake.api_url())
        .start()
}

/// Whether `daemon` says it runs the Telegram poll (`/healthz` `owns`).
async fn polls_telegram(daemon: &Daemon) -> bool {
    let health = Api::of(daemon)
        .send(daemon::client().get(daemon.url("/healthz")))
        .await;
    let owns = health["owns"].as_array().expect("owns is a list");
    owns.iter()
        .any(|lease| lease.as_str().is_some_and(|l| l.starts_with("telegram/")))
}

fn deploy_ask() -> Value {
    json!({"questions": [{"id": "deploy", "question": "Where should I deploy?",
                          "options": ["Staging", "Production"]}]})
}

/// [`deploy_ask`] to `target`.
fn deploy_ask_to(target: String) -> Value {
    let mut ask = deploy_ask();
    ask["to"] = json!(target);
    ask
}

/// Asserts that ask `id`, seen from `daemon`, ended with `choice` for
/// its one question.
async fn assert_answered(daemon: &Daemon, id: &str, choice: &str) {
    let outcome = daemon::outcome(daemon, id).await;
    assert_eq!(outcome["answers"]["deploy"], json!([choice]), "{outcome}");
}

/// Long-polls the ask on `daemon` until it ends (or 60 s pass).
fn wait_on(daemon: &Daemon, id: &str) -> tokio::task::JoinHandle<Value> {
    let url = daemon.url(&format!("/v1/asks/{id}?wait=60"));
    tokio::spawn(async move {
        let response = daemon::client()
            .get(url)
            .send()
            .await
            .expect("the long-poll");
        assert_eq!(response.status(), 200);
        response.json().await.expect("JSON")
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_ask_created_on_one_instance_is_answered_on_another_and_heard_on_a_third() {
    let db = Scratch::postgres().await;
    let a = instance(&db, "a");
    let b = instance(&db, "b");
    let c = instance(&db, "c");
    for (daemon, name) in [(&a, "a"), (&b, "b"), (&c, "c")] {
        let health = Api::of(daemon)
            .send(daemon::client().get(daemon.url("/healthz")))
            .await;
        assert_eq!(health["instance"], name, "{health}");
        assert_eq!(health["database"], "postgres", "{health}");
    }

    let id = daemon::create(&a, &deploy_ask()).await;
    let waiter = wait_on(&c, &id);
    let reply = Api::of(&b)
        .reply(&id, json!({"text": "production", "user": {"id": "alice"}}))
        .await;
    assert_eq!(reply["result"], "answered", "{reply}");

    let heard = tokio::time::timeout(Duration::from_secs(30), waiter)
        .await
        .expect("the waiter on c heard the answer")
        .expect("task");
    assert_eq!(heard["status"], "answered", "{heard}");
    assert_eq!(heard["answers"]["deploy"], json!(["Production"]), "{heard}");
    assert_eq!(daemon::status(&a, &id).await["status"], "answered");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_instance_killed_mid_stream_loses_no_acknowledged_ask() {
    let db = Scratch::postgres().await;
    let mut a = instance(&db, "a");
    let b = instance(&db, "b");
    let mut created = Vec::new();
    for _ in 0..50 {
        created.push(daemon::create(&a, &deploy_ask()).await);
    }
    // Answer half on a, then kill it with no chance to clean up.
    for id in &created[..25] {
        let reply = Api::of(&a).reply(id, json!({"text": "1"})).await;
        assert_eq!(reply["result"], "answered", "{reply}");
    }
    a.kill();

    for (n, id) in created.iter().enumerate() {
        let ask = daemon::status(&b, id).await;
        let expected = if n < 25 { "answered" } else { "pending" };
        assert_eq!(ask["status"], expected, "ask {n}: {ask}");
    }
    for id in &created[25..] {
        let waiter = wait_on(&b, id);
        let reply = Api::of(&b).reply(id, json!({"text": "2"})).await;
        assert_eq!(reply["result"], "answered", "{reply}");
        let heard = waiter.await.expect("task");
        assert_eq!(heard["answers"]["deploy"], json!(["Production"]), "{heard}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn when_the_telegram_poller_is_killed_another_instance_takes_over_and_old_buttons_work() {
    const CHAT: i64 = -100_200_300;
    let alice = User::new(42, "Alice").username("alice");
    let db = Scratch::postgres().await;
    let fake = FakeTelegram::start().await;
    fake.add_chat(&Chat::supergroup(CHAT, "Releases"));

    // a starts alone, so the poll is a's once it polls.
    let mut a = telegram_instance(&db, "a", &fake);
    fake.wait_for_call("getUpdates", |_| true).await;
    assert!(polls_telegram(&a).await);
    let b = telegram_instance(&db, "b", &fake);
    assert!(!polls_telegram(&b).await);

    let id = daemon::create(&a, &deploy_ask_to(format!("telegram:{CHAT}@42"))).await;
    let question = fake.wait_for_sends(1).await.swap_remove(0);
    a.kill();
    let killed = Instant::now();

    // Pressed while nobody polls: b takes the poll over and reads it.
    let press = fake.press_button(&alice, CHAT, question.message_id, "Production");
    let notice = fake.wait_for_callback_answer(&press).await;
    eprintln!(
        "a press after the poller was killed was answered {:.2} s later",
        killed.elapsed().as_secs_f64()
    );
    assert_eq!(notice.text.as_deref(), Some("Answer submitted"));
    let outcome = daemon::outcome(&b, &id).await;
    assert_eq!(outcome["status"], "answered", "{outcome}");
    assert_eq!(
        outcome["answers"]["deploy"],
        json!(["Production"]),
        "{outcome}"
    );
    assert!(polls_telegram(&b).await);
}

/// Whether `daemon` says it holds the Feishu long connection.
async fn holds_feishu(daemon: &Daemon) -> bool {
    let health = Api::of(daemon)
        .send(daemon::client().get(daemon.url("/healthz")))
        .await;
    let owns = health["owns"].as_array().expect("owns is a list");
    owns.iter().any(|lease| lease == "feishu/long-connection")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_instance_holds_the_feishu_long_connection_and_another_takes_it_over() {
    const CHAT: &str = "oc_releases0000000000000000000001";
    const ALICE: &str = "ou_alice000000000000000000000000001";
    let db = Scratch::postgres().await;
    let fake = askbridge_testkit::feishu::FakeFeishu::start().await;
    fake.add_chat(CHAT, "releases");
    fake.add_user(ALICE, "Alice");
    let feishu_instance = |name: &str| {
        instance_builder(&db, name)
            .env("FEISHU_APP_ID", fake.app_id())
            .env("FEISHU_APP_SECRET", fake.app_secret())
            .env("ASKBRIDGE_FEISHU_API_URL", fake.api_url())
            .start()
    };

    // a starts alone and connects; b, started after, does not.
    let mut a = feishu_instance("a");
    fake.wait_for_open_connections(1).await;
    assert!(holds_feishu(&a).await);
    let b = feishu_instance("b");
    assert!(!holds_feishu(&b).await);
    assert_eq!(fake.connection_stats().opened, 1, "one connection per app");

    let id = daemon::create(&a, &deploy_ask_to(format!("feishu:{CHAT}@{ALICE}"))).await;
    let card = fake.wait_for_bot_messages(1).await.swap_remove(0);
    a.kill();
    let killed = Instant::now();

    // b takes the connection over; a press on the old card reaches it.
    fake.wait_for_connections(2).await;
    fake.wait_for_open_connections(1).await;
    eprintln!(
        "b held the Feishu connection {:.2} s after a was killed",
        killed.elapsed().as_secs_f64()
    );
    let pressed = fake
        .press(&card.message_id, ALICE, &feishu_button(&card, "Production"))
        .await;
    assert!(pressed.failure.is_none(), "{:?}", pressed.failure);
    assert_answered(&b, &id, "Production").await;
    assert!(holds_feishu(&b).await);
    assert_eq!(fake.connection_stats().open, 1);
}

/// The `name` of the card's button showing `text`.
fn feishu_button(card: &askbridge_testkit::feishu::StoredMessage, text: &str) -> String {
    let name = card.card().and_then(|card| {
        card["body"]["elements"]
            .as_array()?
            .iter()
            .find(|element| element["text"]["content"] == text)?["name"]
            .as_str()
            .map(str::to_owned)
    });
    name.unwrap_or_else(|| panic!("no button {text:?}"))
}

/// `url` with its `host:port` replaced by `addr`.
fn through(url: &str, addr: std::net::SocketAddr) -> String {
    let (scheme_user, rest) = url.split_once('@').expect("a user in the URL");
    let (_, path) = rest.split_once('/').expect("a database in the URL");
    format!("{scheme_user}@{addr}/{path}")
}

/// The `host:port` of `url`.
fn server_of(url: &str) -> std::net::SocketAddr {
    let (_, rest) = url.split_once('@').expect("a user in the URL");
    let (host, _) = rest.split_once('/').expect("a database in the URL");
    host.parse()
        .expect("an IP address and port in the test Postgres URL")
}

/// Posts an ask with `key` until the database answers; returns the id and
/// how many `503 unavailable` came first. Every other answer fails.
async fn create_until_taken(daemon: &Daemon, key: &str) -> (String, usize) {
    let mut refused = 0;
    loop {
        let response = daemon::client()
            .post(daemon.url("/v1/asks"))
            .header("Idempotency-Key", key)
            .json(&deploy_ask())
            .send()
            .await
            .expect("the daemon answers");
        let status = response.status().as_u16();
        let body: Value = response.json().await.expect("JSON");
        match status {
            200 | 201 => return (body["id"].as_str().expect("id").to_owned(), refused),
            503 => {
                assert_eq!(body["error"]["code"], "unavailable", "{body}");
                refused += 1;
                assert!(refused < 60, "the database never came back: {body}");
                // A client's retry pause, as the 503 asks for.
                tokio::time::sleep(Duration::from_millis(500)).await;
            }
            other => panic!("HTTP {other}: {body}"),
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_cut_off_and_back_loses_nothing_acknowledged_and_asks_once() {
    let db = Scratch::postgres().await;
    let proxy = Proxy::start(server_of(&db.url())).await;
    let url = through(&db.url(), proxy.addr());
    let daemons: Vec<Daemon> = ["a", "b", "c"]
        .into_iter()
        .map(|name| {
            Daemon::builder()
                .env("ASKBRIDGE_DATABASE_URL", &url)
                .env("ASKBRIDGE_CLUSTER_INSTANCE", name)
                .env("ASKBRIDGE_CLUSTER_LEASE_SECONDS", LEASE_SECONDS)
                .start()
        })
        .collect();
    let mut acknowledged = Vec::new();
    for n in 0..12 {
        acknowledged.push(daemon::create(&daemons[n % 3], &deploy_ask()).await);
    }

    // Cut off: a create and a reply are refused as retryable, not lost
    // silently and not left hanging.
    proxy.cut();
    let during = daemon::client()
        .post(daemons[1].url("/v1/asks"))
        .header("Idempotency-Key", "made-during-the-cut")
        .json(&deploy_ask())
        .send()
        .await
        .expect("the daemon answers");
    assert_eq!(during.status(), 503);
    let reply = daemon::client()
        .post(daemons[2].url(&format!("/v1/asks/{}/reply", acknowledged[0])))
        .json(&json!({"text": "1"}))
        .send()
        .await
        .expect("the daemon answers");
    assert_eq!(reply.status(), 503, "{:?}", reply.text().await);

    // Back: the create retried with its key asks once, on any instance.
    proxy.restore();
    let (id, _) = create_until_taken(&daemons[1], "made-during-the-cut").await;
    let (again, refused) = create_until_taken(&daemons[0], "made-during-the-cut").await;
    assert_eq!((again.as_str(), refused), (id.as_str(), 0));
    acknowledged.push(id);

    // Every ask made before or during the cut is there and is answered
    // exactly once, on another instance than its maker.
    for (n, id) in acknowledged.iter().enumerate() {
        let answering = &daemons[(n + 1) % 3];
        let first = Api::of(answering).reply(id, json!({"text": "2"})).await;
        assert_eq!(first["result"], "answered", "ask {n}: {first}");
        let second = daemon::client()
            .post(daemons[(n + 2) % 3].url(&format!("/v1/asks/{id}/reply")))
            .json(&json!({"text": "1"}))
            .send()
            .await
            .expect("the daemon answers");
        assert_eq!(second.status(), 409, "ask {n} answered twice");
        let ask = daemon::outcome(&daemons[n % 3], id).await;
        assert_eq!(
            ask["answers"]["deploy"],
            json!(["Production"]),
            "ask {n}: {ask}"
        );
    }
    let pending = Api::of(&daemons[0]).pending_ids().await;
    assert!(pending.is_empty(), "left pending: {pending:?}");
}

/// A press read from Telegram while Postgres is cut off cannot be
/// recorded: it is not confirmed to Telegram (the next `getUpdates` asks
/// for it again), and once the database is back it answers the ask.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_telegram_press_read_while_postgres_is_cut_off_is_fetched_again_and_counts() {
    const CHAT: i64 = -100_200_301;
    let alice = User::new(42, "Alice").username("alice");
    let db = Scratch::postgres().await;
    let proxy = Proxy::start(server_of(&db.url())).await;
    let fake = FakeTelegram::start().await;
    fake.add_chat(&Chat::supergroup(CHAT, "Releases"));
    let a = Daemon::builder()
        .env("ASKBRIDGE_DATABASE_URL", through(&db.url(), proxy.addr()))
        .env("ASKBRIDGE_CLUSTER_INSTANCE", "a")
        // Long enough that the cut does not cost the poll its lease.
        .env("ASKBRIDGE_CLUSTER_LEASE_SECONDS", "60")
        .env("TELEGRAM_BOT_TOKEN", fake.token())
        .env("ASKBRIDGE_TELEGRAM_API_URL", fake.api_url())
        .start();
    let id = daemon::create(&a, &deploy_ask_to(format!("telegram:{CHAT}@42"))).await;
    let question = fake.wait_for_sends(1).await.swap_remove(0);
    // The question is on record (its delivery ends once its message is)
    // and the poll is waiting.
    a.wait_for_log(
        &format!("ask delivered ask_id={id}"),
        Duration::from_secs(30),
    );
    fake.wait_for("the poll", |state| {
        (state.active_long_polls() > 0).then_some(())
    })
    .await;
    assert!(polls_telegram(&a).await);

    proxy.cut();
    let press = fake.press_button(&alice, CHAT, question.message_id, "Production");
    let update_id = fake.inspect(|state| {
        state.pending_updates()[0]["update_id"]
            .as_i64()
            .expect("the press's update id")
    });
    // The poll after the one that handed it out does not confirm it.
    let next_offset = fake.wait_for_poll_after(&press).await;
    assert_eq!(
        next_offset,
        Some(update_id),
        "the press was confirmed unrecorded"
    );
    assert_eq!(
        fake.callback_answer(&press),
        None,
        "an unrecorded press was answered"
    );

    proxy.restore();
    let notice = fake.wait_for_callback_answer(&press).await;
    assert_eq!(notice.text.as_deref(), Some("Answer submitted"));
    assert_answered(&a, &id, "Production").await;
}

/// A daemon on `db` through `proxy`, with leases long enough that a cut
/// does not cost it its bot connections.
fn behind(proxy: &Proxy, db: &Scratch) -> Builder {
    Daemon::builder()
        .env("ASKBRIDGE_DATABASE_URL", through(&db.url(), proxy.addr()))
        .env("ASKBRIDGE_CLUSTER_INSTANCE", "a")
        .env("ASKBRIDGE_CLUSTER_LEASE_SECONDS", "60")
}

/// A typed reply read from Slack's socket while Postgres is cut off
/// cannot be recorded: its envelope is not acknowledged, however often
/// Slack sends it, and once the database is back a delivery answers the
/// ask.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_slack_reply_read_while_postgres_is_cut_off_is_acknowledged_only_once_recorded() {
    use askbridge_testkit::slack::{Channel, FakeSlack, IncomingMessage, User};
    const CHANNEL: &str = "C0RELEASES";
    const ALICE: &str = "U0ALICE";
    let db = Scratch::postgres().await;
    let proxy = Proxy::start(server_of(&db.url())).await;
    let fake = FakeSlack::builder()
        .ack_timeout(Duration::from_secs(1))
        .max_retries(1_000)
        .start()
        .await;
    fake.add_channel(&Channel::public(CHANNEL, "releases"));
    fake.add_user(&User::new(ALICE, "alice"));
    let a = behind(&proxy, &db)
        .env("SLACK_BOT_TOKEN", fake.bot_token())
        .env("SLACK_APP_TOKEN", fake.app_token())
        .env("ASKBRIDGE_SLACK_API_URL", fake.api_url())
        .start();
    fake.wait_for_connections(1).await;
    let id = daemon::create(&a, &deploy_ask_to(format!("slack:{CHANNEL}@{ALICE}"))).await;
    let question = fake.wait_for_bot_messages(1).await.swap_remove(0);

    proxy.cut();
    let typed =
        fake.inject_message(IncomingMessage::new(CHANNEL, ALICE, "2").in_thread(&question.ts));
    let delivered = fake.wait_for_deliveries(&typed.envelope_id, 4).await;
    assert!(
        !delivered.acked(),
        "acknowledged while it could not be recorded: {delivered:?}"
    );

    proxy.restore();
    fake.wait_for_ack(&typed.envelope_id).await;
    assert_answered(&a, &id, "Production").await;
}

/// A typed reply and a card press pushed by Feishu while Postgres is cut
/// off cannot be recorded: both are answered as failures (the press is
/// not shown as taken), and the reply Feishu sends again once the
/// database is back answers the ask.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_feishu_push_while_postgres_is_cut_off_fails_and_its_redelivery_counts() {
    const CHAT: &str = "oc_releases0000000000000000000001";
    const ALICE: &str = "ou_alice000000000000000000000000001";
    let db = Scratch::postgres().await;
    let proxy = Proxy::start(server_of(&db.url())).await;
    let fake = askbridge_testkit::feishu::FakeFeishu::start().await;
    fake.add_chat(CHAT, "releases");
    fake.add_user(ALICE, "Alice");
    let a = behind(&proxy, &db)
        .env("FEISHU_APP_ID", fake.app_id())
        .env("FEISHU_APP_SECRET", fake.app_secret())
        .env("ASKBRIDGE_FEISHU_API_URL", fake.api_url())
        .start();
    fake.wait_for_open_connections(1).await;
    let id = daemon::create(&a, &deploy_ask_to(format!("feishu:{CHAT}@{ALICE}"))).await;
    let card = fake.wait_for_bot_messages(1).await.swap_remove(0);

    proxy.cut();
    let typed = fake.send_text(CHAT, ALICE, "@bot 2", Some(&card.message_id));
    let push = typed.push.expect("a reply to the bot is pushed");
    let answered = fake.wait_for_answer(push).await;
    let failure = answered
        .last()
        .and_then(|delivery| delivery.failure.clone());
    assert!(failure.is_some(), "taken while it could not be recorded");
    let pressed = fake
        .press(&card.message_id, ALICE, &feishu_button(&card, "Production"))
        .await;
    assert!(
        pressed.failure.is_some(),
        "a press shown as taken while it could not be recorded: {pressed:?}"
    );

    proxy.restore();
    // Feishu sends a failed event again, with pauses; a delivery while the
    // first handling still runs fails too.
    for attempt in 1.. {
        fake.redeliver(push);
        let again = fake.wait_for_answer(push).await;
        match again.last().and_then(|delivery| delivery.failure.clone()) {
            None => break,
            Some(failure) => assert!(attempt < 60, "never taken: {failure}"),
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    assert_answered(&a, &id, "Production").await;
}

/// An instance whose link to Postgres hangs (no error, no answer) gives up
/// the Telegram poll before its lease runs out; another instance takes
/// the poll over within the lease + 5 s and reads a press made meanwhile;
/// when the link comes back the first rejoins without polling a second
/// time.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_instance_whose_database_link_hangs_hands_its_poll_over_and_rejoins_without_a_second() {
    const CHAT: i64 = -100_200_302;
    let alice = User::new(42, "Alice").username("alice");
    let db = Scratch::postgres().await;
    let proxy = Proxy::start(server_of(&db.url())).await;
    let fake = FakeTelegram::start().await;
    fake.add_chat(&Chat::supergroup(CHAT, "Releases"));
    let a = instance_builder(&db, "a")
        .env("ASKBRIDGE_DATABASE_URL", through(&db.url(), proxy.addr()))
        .env("TELEGRAM_BOT_TOKEN", fake.token())
        .env("ASKBRIDGE_TELEGRAM_API_URL", fake.api_url())
        .start();
    fake.wait_for_call("getUpdates", |_| true).await;
    assert!(polls_telegram(&a).await);
    let b = telegram_instance(&db, "b", &fake);
    assert!(!polls_telegram(&b).await);
    let id = daemon::create(&b, &deploy_ask_to(format!("telegram:{CHAT}@42"))).await;
    let question = fake.wait_for_sends(1).await.swap_remove(0);

    proxy.hang();
    let hung = Instant::now();
    let press = fake.press_button(&alice, CHAT, question.message_id, "Production");
    let notice = fake.wait_for_callback_answer(&press).await;
    let taken_over = hung.elapsed();
    eprintln!(
        "a press after a's database link hung was answered {:.2} s later",
        taken_over.as_secs_f64()
    );
    let lease: u64 = LEASE_SECONDS.parse().expect("lease seconds");
    assert!(
        taken_over < Duration::from_secs(lease + 5),
        "taken over after {taken_over:?}"
    );
    assert_eq!(notice.text.as_deref(), Some("Answer submitted"));
    assert_answered(&b, &id, "Production").await;
    assert!(polls_telegram(&b).await);
    assert!(!polls_telegram(&a).await, "a polls without its database");

    proxy.restore();
    let calls_before = fake.inspect(|state| state.calls_to("getUpdates").len());
    // a works again, and a press on its new ask is read by b's poll.
    let id = daemon::create(&a, &deploy_ask_to(format!("telegram:{CHAT}@42"))).await;
    let question = fake.wait_for_sends(2).await.swap_remove(1);
    let press = fake.press_button(&alice, CHAT, question.message_id, "Staging");
    fake.wait_for_callback_answer(&press).await;
    assert_answered(&a, &id, "Staging").await;
    assert!(polls_telegram(&b).await);
    assert!(!polls_telegram(&a).await, "a polls a second time");
    let conflicts = fake.inspect(|state| {
        state.calls_to("getUpdates")[calls_before..]
            .iter()
            .filter(|call| call.response["error_code"] == 409)
            .count()
    });
    assert_eq!(conflicts, 0, "two instances polled at once");
}

/// Postgres restarted (`pg_ctl restart`) in the middle of a create, wait
/// and answer loop on three instances: see [`restart_mid_loop`].
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_restarted_mid_loop_keeps_every_acknowledged_ask_and_answer() {
    restart_mid_loop(Shutdown::Fast).await;
}

/// Postgres crashed (`pg_ctl restart -m immediate`: every server process
/// killed) and recovered from its log in the middle of the loop: see
/// [`restart_mid_loop`].
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_crashed_mid_loop_keeps_every_acknowledged_ask_and_answer() {
    restart_mid_loop(Shutdown::Immediate).await;
}

/// Restarts Postgres (stopped as `mode` says) in the middle of a create,
/// wait and answer loop on three instances. Every acknowledged ask and
/// answer is there afterwards, each ask has exactly one answer, and the
/// waiters parked before the restart are woken by answers given after it
/// on other instances (their first long-poll returns the answer; nothing
/// re-reads). Requests that meet the restart get `503` and are sent
/// again, as the API asks.
async fn restart_mid_loop(mode: Shutdown) {
    const BEFORE: usize = 12;
    let server = tokio::task::spawn_blocking(db::server::PrivateServer::start)
        .await
        .expect("the private server");
    let server = std::sync::Arc::new(server);
    let daemons: Vec<Daemon> = ["a", "b", "c"]
        .into_iter()
        .map(|name| {
            Daemon::builder()
                .env("ASKBRIDGE_DATABASE_URL", server.url())
                .env("ASKBRIDGE_CLUSTER_INSTANCE", name)
                .env("ASKBRIDGE_CLUSTER_LEASE_SECONDS", LEASE_SECONDS)
                .start()
        })
        .collect();
    // Ask n is made on instance n % 3, waited on at n + 1, answered at
    // n + 2, with option 1 or 2 by its parity.
    let choice = |n: usize| ["Staging", "Production"][n % 2];
    let mut ids = Vec::new();
    let mut parked = Vec::new();
    for n in 0..BEFORE {
        ids.push(
            create_until_taken(&daemons[n % 3], &format!("loop-{n}"))
                .await
                .0,
        );
        parked.push(wait_on(&daemons[(n + 1) % 3], &ids[n]));
    }
    while waiting(&daemons).await < BEFORE {
        tokio::task::yield_now().await;
    }

    let restarting = tokio::task::spawn_blocking({
        let server = std::sync::Arc::clone(&server);
        move || server.restart(mode)
    });
    // The loop goes on while Postgres restarts, and for a few asks after.
    let mut refused = 0;
    let mut after = 0;
    while after < 6 {
        if restarting.is_finished() {
            after += 1;
        }
        let n = ids.len();
        let (id, retries) = create_until_taken(&daemons[n % 3], &format!("loop-{n}")).await;
        refused += retries;
        refused += reply_until_taken(&daemons[(n + 2) % 3], &id, n).await;
        ids.push(id);
    }
    restarting.await.expect("pg_ctl restart");
    // The asks waited on since before the restart, answered after it.
    for (n, id) in ids.iter().enumerate().take(BEFORE) {
        refused += reply_until_taken(&daemons[(n + 2) % 3], id, n).await;
    }

    for (n, waiter) in parked.into_iter().enumerate() {
        let heard = waiter.await.expect("the waiter");
        assert_eq!(heard["status"], "answered", "waiter {n}: {heard}");
        assert_eq!(heard["answers"]["deploy"], json!([choice(n)]), "waiter {n}");
    }
    for (n, id) in ids.iter().enumerate() {
        assert_answered(&daemons[(n + 1) % 3], id, choice(n)).await;
        let again = daemon::client()
            .post(daemons[n % 3].url(&format!("/v1/asks/{id}/reply")))
            .json(&json!({"text": "1"}))
            .send()
            .await
            .expect("the daemon answers");
        assert_eq!(again.status(), 409, "ask {n} answered twice");
    }
    let all = Api::of(&daemons[0])
        .send(daemon::client().get(daemons[0].url("/v1/asks?limit=100")))
        .await;
    assert_eq!(
        all["asks"].as_array().map(Vec::len),
        Some(ids.len()),
        "an ask lost or made twice"
    );
    eprintln!(
        "{mode:?}: {} asks made and answered while Postgres restarted; {refused} requests \
         met the restart and were sent again",
        ids.len() - BEFORE - 6
    );
}

/// Long-polls waiting now, over every instance (`/metrics`).
async fn waiting(daemons: &[Daemon]) -> usize {
    let mut total = 0;
    for daemon in daemons {
        let metrics = daemon::client()
            .get(daemon.url("/metrics"))
            .send()
            .await
            .expect("metrics")
            .text()
            .await
            .expect("text");
        total += metrics
            .lines()
            .find_map(|line| line.strip_prefix("askbridge_http_waiting "))
            .and_then(|value| value.trim().parse::<usize>().ok())
            .expect("the waiting gauge");
    }
    total
}

/// Answers ask `id` (the n-th) with option 1 or 2 by n's parity, sending
/// again after `503`; returns how many `503` came first. A `409` after a
/// `503` is the first try's answer having landed: the ask must then hold
/// it (checked by the caller).
async fn reply_until_taken(daemon: &Daemon, id: &str, n: usize) -> usize {
    let mut refused = 0;
    loop {
        let response = daemon::client()
            .post(daemon.url(&format!("/v1/asks/{id}/reply")))
            .json(&json!({"text": (n % 2 + 1).to_string()}))
            .send()
            .await
            .expect("the daemon answers");
        match response.status().as_u16() {
            200 => return refused,
            409 if refused > 0 => return refused,
            503 => {
                refused += 1;
                assert!(refused < 60, "the database never came back");
                // A client's retry pause, as the 503 asks for.
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
            other => panic!("HTTP {other}: {:?}", response.text().await),
        }
    }
}

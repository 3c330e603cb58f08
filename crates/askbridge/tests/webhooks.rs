//! Webhooks from a real `askbridge serve` to a receiver on 127.0.0.1:
//! signed (checked with an HMAC computed here), retried with the same
//! delivery id until the receiver takes it, stopped by `410 Gone`, kept
//! across a `kill -9`, never sent where the daemon may not call, and with
//! three instances on one Postgres database, each attempt made once.
//!
//! Nothing sleeps: the tests wait on the receiver's requests, the API's
//! long-poll and the daemon's log.

mod daemon;
mod db;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use daemon::{Api, Builder, Daemon};
use db::Scratch;
use hmac::{Hmac, Mac};
use serde_json::{Value, json};
use sha2::Sha256;
use tokio::sync::mpsc;

const SECRET: &str = "whsec_test_one";
const OLD_SECRET: &str = "whsec_test_old";
/// The longest any step here is waited for.
const WITHIN: Duration = Duration::from_secs(30);

/// One request the receiver got.
#[derive(Debug, Clone)]
struct Received {
    headers: HeaderMap,
    body: Bytes,
}

impl Received {
    fn header(&self, name: &str) -> &str {
        self.headers
            .get(name)
            .and_then(|value| value.to_str().ok())
            .unwrap_or_default()
    }

    fn json(&self) -> Value {
        serde_json::from_slice(&self.body).expect("a JSON body")
    }
}

/// What the receiver answers: the statuses of each delivery's first
/// requests, then `then`.
#[derive(Debug, Clone)]
struct Script {
    first: Vec<u16>,
    then: u16,
    /// A `Location` for the 3xx answers.
    location: Option<String>,
}

#[derive(Debug)]
struct Receiving {
    script: Script,
    seen: Mutex<HashMap<String, usize>>,
    sink: mpsc::UnboundedSender<Received>,
}

/// A webhook receiver on 127.0.0.1 that answers by its script and hands
/// every request to the test.
struct Receiver {
    url: String,
    requests: mpsc::UnboundedReceiver<Received>,
}

impl Receiver {
    async fn start(script: Script) -> Receiver {
        let (sink, requests) = mpsc::unbounded_channel();
        let state = Arc::new(Receiving {
            script,
            seen: Mutex::new(HashMap::new()),
            sink,
        });
        let app = axum::Router::new()
            .route("/hook", axum::routing::post(receive))
            .with_state(state);
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind the receiver");
        let addr = listener.local_addr().expect("its address");
        tokio::spawn(async move { axum::serve(listener, app).await });
        Receiver {
            url: format!("http://127.0.0.1:{}/hook", addr.port()),
            requests,
        }
    }

    /// The next request, within [`WITHIN`].
    async fn next(&mut self) -> Received {
        tokio::time::timeout(WITHIN, self.requests.recv())
            .await
            .expect("a webhook request in time")
            .expect("the receiver runs")
    }
}

async fn receive(
    State(state): State<Arc<Receiving>>,
    headers: HeaderMap,
    body: Bytes,
) -> (StatusCode, HeaderMap) {
    let delivery = headers
        .get("askbridge-delivery")
        .and_then(|value| value.to_str().ok())
        .unwrap_or_default()
        .to_owned();
    let nth = {
        let mut seen = state.seen.lock().expect("lock");
        let count = seen.entry(delivery).or_default();
        *count += 1;
        *count - 1
    };
    let _ = state.sink.send(Received { headers, body });
    let status = state
        .script
        .first
        .get(nth)
        .copied()
        .unwrap_or(state.script.then);
    let mut answer = HeaderMap::new();
    if let Some(location) = &state.script.location {
        answer.insert("location", location.parse().expect("a header value"));
    }
    (StatusCode::from_u16(status).expect("a status"), answer)
}

fn statuses(first: &[u16], then: u16) -> Script {
    Script {
        first: first.to_vec(),
        then,
        location: None,
    }
}

/// A daemon whose webhooks may call 127.0.0.1, retrying after `first_ms`.
fn with_webhooks(first_ms: u64) -> Builder {
    Daemon::builder()
        .env("ASKBRIDGE_WEBHOOK_SECRET", format!("{SECRET},{OLD_SECRET}"))
        .env("ASKBRIDGE_WEBHOOKS_ALLOWED_HOSTS", "127.0.0.1")
        .env("ASKBRIDGE_WEBHOOKS_FIRST_RETRY_MS", first_ms.to_string())
}

fn ask_with_callback(url: &str) -> Value {
    json!({
        "title": "Deploy",
        "callbackUrl": url,
        "questions": [{"id": "env", "question": "Where to?", "options": ["Staging", "Production"]}],
    })
}

/// `hex(HMAC-SHA256(secret, "<t>.<body>"))`, computed here.
fn hmac_hex(secret: &str, t: &str, body: &[u8]) -> String {
    let mut mac = Hmac::<Sha256>::new_from_slice(secret.as_bytes()).expect("any key length");
    mac.update(t.as_bytes());
    mac.update(b".");
    mac.update(body);
    hex::encode(mac.finalize().into_bytes())
}

/// Checks the request's signature against both secrets and the clock.
fn assert_signed(request: &Received) {
    let header = request.header("askbridge-signature");
    let mut parts = header.split(',');
    let t = parts
        .next()
        .and_then(|part| part.strip_prefix("t="))
        .expect("t= first");
    let signatures: Vec<&str> = parts.filter_map(|part| part.strip_prefix("v1=")).collect();
    assert_eq!(
        signatures,
        [
            hmac_hex(SECRET, t, &request.body),
            hmac_hex(OLD_SECRET, t, &request.body)
        ],
        "{header}"
    );
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .expect("after 1970")
        .as_secs();
    let t: u64 = t.parse().expect("t is whole seconds");
    assert!(t.abs_diff(now) <= 60, "t={t}, now={now}");
}

async fn create(daemon: &Daemon, body: &Value) -> String {
    daemon::create(daemon, body).await
}

async fn answer(daemon: &Daemon, id: &str) {
    let replied = Api::of(daemon)
        .reply(id, json!({"answers": {"env": "Production"}}))
        .await;
    assert_eq!(replied["result"], "answered", "{replied}");
}

/// The ask's only delivery as `GET /v1/asks/{id}` shows it.
async fn delivery(daemon: &Daemon, id: &str) -> Value {
    let ask = daemon::status(daemon, id).await;
    let deliveries = ask["callback"]["deliveries"]
        .as_array()
        .unwrap_or_else(|| panic!("no deliveries in {ask}"));
    assert_eq!(deliveries.len(), 1, "{ask}");
    deliveries[0].clone()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_webhook_is_signed_and_sent_again_with_the_same_id_until_the_receiver_takes_it() {
    let mut receiver = Receiver::start(statuses(&[500, 503, 500], 200)).await;
    let daemon = with_webhooks(20).start();
    let id = create(&daemon, &ask_with_callback(&receiver.url)).await;
    assert_eq!(delivery(&daemon, &id).await["state"], "waiting");
    answer(&daemon, &id).await;

    let requests = [
        receiver.next().await,
        receiver.next().await,
        receiver.next().await,
        receiver.next().await,
    ];
    let first = &requests[0];
    let delivery_id = first.header("askbridge-delivery").to_owned();
    assert!(delivery_id.starts_with("whd_"), "{delivery_id}");
    for request in &requests {
        assert_eq!(request.header("askbridge-delivery"), delivery_id);
        assert_eq!(request.header("idempotency-key"), delivery_id);
        assert_eq!(request.header("askbridge-event"), "ask.ended");
        assert_eq!(request.header("content-type"), "application/json");
        assert_eq!(request.body, first.body, "the same body every time");
        assert_signed(request);
    }
    let body = first.json();
    assert_eq!(body["event"], "ask.ended");
    assert_eq!(body["deliveryId"], delivery_id.as_str());
    assert_eq!(body["id"], id.as_str());
    assert_eq!(body["status"], "answered");
    assert_eq!(body["answers"], json!({"env": ["Production"]}));
    assert!(body.get("callback").is_none(), "{body}");

    daemon.wait_for_log("state=\"delivered\"", WITHIN);
    let delivered = delivery(&daemon, &id).await;
    assert_eq!(delivered["state"], "delivered", "{delivered}");
    assert_eq!(delivered["attempts"], 4, "{delivered}");
    assert_eq!(delivered["lastStatus"], 200, "{delivered}");
    assert_eq!(delivered["id"], delivery_id.as_str());
    assert!(delivered["deliveredAt"].is_string(), "{delivered}");

    let metrics = Api::of(&daemon)
        .http
        .get(daemon.url("/metrics"))
        .send()
        .await
        .expect("metrics")
        .text()
        .await
        .expect("text");
    for line in [
        "askbridge_webhook_attempts_total{result=\"delivered\"} 1",
        "askbridge_webhook_attempts_total{result=\"retry\"} 3",
    ] {
        assert!(metrics.lines().any(|l| l == line), "{line} in\n{metrics}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_ask_posted_webhook_sent_after_the_answer_still_says_the_ask_as_it_was_posted() {
    // The receiver refuses the first tries: the one it takes is sent well
    // after the ask was answered.
    let mut receiver = Receiver::start(statuses(&[500, 500, 500], 200)).await;
    let daemon = with_webhooks(300).start();
    let mut body = ask_with_callback(&receiver.url);
    body["callbackEvents"] = json!(["ask.posted"]);
    let id = create(&daemon, &body).await;
    let first = receiver.next().await;
    assert_eq!(first.header("askbridge-event"), "ask.posted");
    answer(&daemon, &id).await;
    // Its four tries (the ended ask's own webhook comes meanwhile).
    let mut posted = vec![first];
    while posted.len() < 4 {
        let request = receiver.next().await;
        if request.header("askbridge-event") == "ask.posted" {
            posted.push(request);
        }
    }
    for request in &posted {
        assert_eq!(request.body, posted[0].body, "the same body every time");
        let said = request.json();
        assert_eq!(said["status"], "pending", "{said}");
        assert_eq!(said["answered"], json!([]), "{said}");
        assert_eq!(said["open"], json!(["env"]), "{said}");
    }
    daemon.wait_for_log("state=\"delivered\"", WITHIN);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_410_gone_stops_the_deliveries_at_once() {
    let mut receiver = Receiver::start(statuses(&[], 410)).await;
    let daemon = with_webhooks(20).start();
    let id = create(&daemon, &ask_with_callback(&receiver.url)).await;
    let cancelled = Api::of(&daemon).cancel(&id).await;
    assert_eq!(cancelled["reason"], "cancelled", "{cancelled}");
    let request = receiver.next().await;
    assert_eq!(request.json()["reason"], "cancelled");
    daemon.wait_for_log("state=\"gone\"", WITHIN);
    let gone = delivery(&daemon, &id).await;
    assert_eq!(gone["state"], "gone", "{gone}");
    assert_eq!(gone["attempts"], 1, "{gone}");
    assert!(gone.get("nextAttemptAt").is_none(), "{gone}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_delivery_pending_when_the_daemon_is_killed_is_made_after_restart() {
    let mut receiver = Receiver::start(statuses(&[500], 204)).await;
    // A second long first retry: the daemon is killed before it comes.
    let mut daemon = with_webhooks(2_000).start();
    let id = create(&daemon, &ask_with_callback(&receiver.url)).await;
    answer(&daemon, &id).await;
    let first = receiver.next().await;
    daemon.wait_for_log("webhook attempt recorded", WITHIN);
    let pending = delivery(&daemon, &id).await;
    assert_eq!(pending["state"], "pending", "{pending}");
    assert_eq!(pending["lastStatus"], 500, "{pending}");
    assert!(pending["nextAttemptAt"].is_string(), "{pending}");

    daemon.kill();
    daemon.restart();
    let second = receiver.next().await;
    assert_eq!(
        second.header("askbridge-delivery"),
        first.header("askbridge-delivery")
    );
    assert_eq!(second.body, first.body);
    daemon.wait_for_log("state=\"delivered\"", WITHIN);
    let delivered = delivery(&daemon, &id).await;
    assert_eq!(delivered["state"], "delivered", "{delivered}");
    assert_eq!(delivered["attempts"], 2, "{delivered}");
    assert!(receiver.requests.try_recv().is_err(), "no third request");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn callback_urls_the_daemon_may_not_call_are_refused_when_the_ask_is_created() {
    let daemon = Daemon::builder()
        .env("ASKBRIDGE_WEBHOOK_SECRET", SECRET)
        .env(
            "ASKBRIDGE_WEBHOOKS_ALLOWED_HOSTS",
            "*,hooks.localhost,localhost",
        )
        .start();
    let refused = |url: &str| {
        let daemon = &daemon;
        let body = ask_with_callback(url);
        async move {
            let response = Api::of(daemon)
                .http
                .post(daemon.url("/v1/asks"))
                .json(&body)
                .send()
                .await
                .expect("create");
            let status = response.status();
            let error: Value = response.json().await.expect("JSON");
            assert_eq!(status, 422, "{error}");
            assert_eq!(error["error"]["code"], "invalid_ask", "{error}");
            assert_eq!(error["error"]["path"], "callbackUrl", "{error}");
            error["error"]["message"]
                .as_str()
                .unwrap_or_default()
                .to_owned()
        }
    };
    // Cloud metadata, by address: only a host listed by itself may be
    // anything but public.
    let metadata = refused("https://169.254.169.254/latest/meta-data").await;
    assert!(metadata.contains("is not allowed"), "{metadata}");
    // Loopback by address, not listed.
    let loopback = refused("http://127.0.0.1:9/hook").await;
    assert!(loopback.contains("is not allowed"), "{loopback}");
    // A name that resolves to a loopback address, allowed only by `*`.
    let resolves = refused("https://localhost.localdomain/hook").await;
    assert!(
        resolves.contains("loopback") || resolves.contains("cannot resolve"),
        "{resolves}"
    );
    // http:// beyond a listed loopback host.
    let plain = refused("http://hooks.example.com/hook").await;
    assert!(plain.contains("must be https://"), "{plain}");
    // Not a URL at all: the ask's own rule.
    let words = refused("hooks.example.com/hook").await;
    assert!(words.contains("absolute https:// URL"), "{words}");

    // Listed by name, loopback is fine, over http too.
    let listed = daemon::create(&daemon, &ask_with_callback("http://localhost:9/hook")).await;
    assert!(listed.starts_with("ask_"));

    // A daemon without a webhook secret takes no callbackUrl.
    let off = Daemon::start();
    let response = Api::of(&off)
        .http
        .post(off.url("/v1/asks"))
        .json(&ask_with_callback("https://hooks.example.com/hook"))
        .send()
        .await
        .expect("create");
    assert_eq!(response.status(), 422);
    let error: Value = response.json().await.expect("JSON");
    assert_eq!(error["error"]["path"], "callbackUrl", "{error}");
    assert!(
        error["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("ASKBRIDGE_WEBHOOK_SECRET")),
        "{error}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_callback_to_a_listed_name_is_resolved_through_the_rules_and_delivered() {
    let mut receiver = Receiver::start(statuses(&[], 200)).await;
    let by_name = receiver.url.replace("127.0.0.1", "localhost");
    let daemon = Daemon::builder()
        .env("ASKBRIDGE_WEBHOOK_SECRET", SECRET)
        .env("ASKBRIDGE_WEBHOOKS_ALLOWED_HOSTS", "localhost")
        .start();
    let id = create(&daemon, &ask_with_callback(&by_name)).await;
    answer(&daemon, &id).await;
    let request = receiver.next().await;
    assert_eq!(request.json()["id"], id.as_str());
    daemon.wait_for_log("state=\"delivered\"", WITHIN);
    assert_eq!(delivery(&daemon, &id).await["state"], "delivered");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_redirect_is_not_followed_and_a_followed_one_to_a_private_address_is_refused() {
    let script = Script {
        first: Vec::new(),
        then: 302,
        location: Some("http://169.254.169.254/latest/meta-data".to_owned()),
    };
    let mut receiver = Receiver::start(script.clone()).await;
    let daemon = with_webhooks(60_000).start();
    let id = create(&daemon, &ask_with_callback(&receiver.url)).await;
    answer(&daemon, &id).await;
    receiver.next().await;
    daemon.wait_for_log("webhook attempt recorded", WITHIN);
    let redirected = delivery(&daemon, &id).await;
    assert_eq!(redirected["state"], "pending", "{redirected}");
    assert_eq!(redirected["lastStatus"], 302, "{redirected}");
    let error = redirected["lastError"].as_str().unwrap_or_default();
    assert!(error.contains("redirects are not followed"), "{error}");

    let mut receiver = Receiver::start(script).await;
    let following = with_webhooks(60_000)
        .env("ASKBRIDGE_WEBHOOKS_FOLLOW_REDIRECTS", "true")
        .start();
    let id = create(&following, &ask_with_callback(&receiver.url)).await;
    answer(&following, &id).await;
    receiver.next().await;
    following.wait_for_log("webhook attempt recorded", WITHIN);
    let refused = delivery(&following, &id).await;
    assert_eq!(refused["state"], "pending", "{refused}");
    assert!(refused.get("lastStatus").is_none(), "{refused}");
    let error = refused["lastError"].as_str().unwrap_or_default();
    assert!(
        error.contains("redirected to http://169.254.169.254/latest/meta-data")
            && error.contains("is not allowed"),
        "{error}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_instances_on_postgres_make_each_attempt_once() {
    const ASKS: usize = 8;
    let db = Scratch::postgres().await;
    let mut receiver = Receiver::start(statuses(&[500, 500], 200)).await;
    let instance = |name: &str| {
        with_webhooks(20)
            .env("ASKBRIDGE_DATABASE_URL", db.url())
            .env("ASKBRIDGE_CLUSTER_INSTANCE", name)
            .start()
    };
    let instances = [instance("a"), instance("b"), instance("c")];
    let mut ids = Vec::new();
    for n in 0..ASKS {
        ids.push(create(&instances[n % 3], &ask_with_callback(&receiver.url)).await);
    }
    for (n, id) in ids.iter().enumerate() {
        answer(&instances[(n + 1) % 3], id).await;
    }
    let mut by_delivery: HashMap<String, usize> = HashMap::new();
    for _ in 0..ASKS * 3 {
        let request = receiver.next().await;
        *by_delivery
            .entry(request.header("askbridge-delivery").to_owned())
            .or_default() += 1;
    }
    for id in &ids {
        let ask = daemon::outcome(&instances[0], id).await;
        assert_eq!(ask["status"], "answered");
    }
    // Every delivery is recorded delivered after its third attempt: no
    // attempt is left to make, so the counts above are final. The record
    // is written by whichever instance made the attempt, moments after the
    // receiver's answer; nothing tells another instance, so this looks
    // again, as a client would, a bounded number of times.
    for id in &ids {
        let mut looks = 0;
        let shown = loop {
            let shown = delivery(&instances[looks % 3], id).await;
            if shown["state"] == "delivered" {
                break shown;
            }
            looks += 1;
            assert!(looks < 200, "never recorded as delivered: {shown}");
            tokio::time::sleep(Duration::from_millis(50)).await;
        };
        assert_eq!(shown["attempts"], 3, "{shown}");
    }
    assert_eq!(by_delivery.len(), ASKS, "{by_delivery:?}");
    assert!(
        by_delivery.values().all(|count| *count == 3),
        "each delivery's attempts: {by_delivery:?}"
    );
    assert!(receiver.requests.try_recv().is_err(), "no attempt beyond");
}

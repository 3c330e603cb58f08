//! Webhooks: telling an agent that cannot wait how its ask went.
//!
//! An ask with a `callbackUrl` has a delivery row written with it
//! (`ask.ended`), due once the ask ends, and one per further event it
//! asked for (`ask.posted`, `ask.reminded`, `ask.escalated`), written when
//! the event happens. The sender here finds due rows, claims an attempt
//! (a compare-and-set, so with several instances one makes each attempt),
//! POSTs the ask as `GET /v1/asks/{id}` shows it plus `event` and
//! `deliveryId`, signed, and records how it went: delivered on a 2xx,
//! stopped on `410 Gone`, else tried again with exponential backoff and
//! jitter for up to a day. The rows are the only state, so a restart or a
//! crash loses none: an attempt cut short is made again once its claim
//! runs out (at least once, never silently dropped).
//!
//! Where a URL may point is [`policy`]'s to say.

pub mod policy;

use std::sync::Arc;
use std::time::Duration;

use askbridge_core::model::{CallbackEvent, Timestamp};
use hmac::{Hmac, Mac};
use serde_json::Value;
use sha2::Sha256;
use tokio::sync::broadcast::error::{RecvError, TryRecvError};

use crate::bridge::{Bridge, BridgeEvent, CallbackCheck, WeakBridge};
use crate::config::{Secret, WebhooksConfig};
use crate::store::{WebhookAttempt, WebhookRow};

use self::policy::{Policy, Resolver};

/// How long one attempt may take, connection and answer included.
pub const ATTEMPT_TIMEOUT: Duration = Duration::from_secs(10);
/// How long a claimed attempt keeps others off: past it (the instance
/// died mid-attempt), the delivery is due again.
const CLAIM: Duration = Duration::from_secs(60);
/// The longest wait between attempts.
const MAX_BACKOFF: Duration = Duration::from_secs(3_600);
/// How long a delivery is tried, from its first attempt.
pub const GIVE_UP_AFTER: Duration = Duration::from_secs(24 * 3_600);
/// Due deliveries read at a time.
const BATCH: i64 = 64;
/// The longest the sender sleeps without looking: asks ended by another
/// instance whose news did not reach this one, claims run out.
const LOOK_EVERY: Duration = Duration::from_secs(5);
/// How often every ended ask's `ask.ended` delivery is brought forward
/// regardless of what this instance heard.
const CATCH_UP_EVERY: Duration = Duration::from_secs(60);
/// How soon a delivery that was due but could not be claimed is looked
/// at again.
const UNCLAIMED_AGAIN: Duration = Duration::from_millis(250);
/// What the sender says it is.
const USER_AGENT: &str = concat!("askbridge/", env!("CARGO_PKG_VERSION"));
/// The header carrying the signature.
pub const SIGNATURE_HEADER: &str = "askbridge-signature";

/// The daemon's webhooks: the rules, the secrets, the HTTP client.
#[derive(Debug)]
pub struct Webhooks {
    policy: Arc<Policy>,
    secrets: Vec<Secret>,
    first_retry: Duration,
    client: reqwest::Client,
}

impl Webhooks {
    /// Webhooks as configured.
    pub fn new(config: &WebhooksConfig) -> anyhow::Result<Webhooks> {
        let policy = Arc::new(Policy::new(&config.allowed_hosts));
        let redirects = if config.follow_redirects {
            let policy = Arc::clone(&policy);
            reqwest::redirect::Policy::custom(move |attempt| {
                if attempt.previous().len() >= 5 {
                    attempt.error("more than 5 redirects")
                } else if let Err(problem) = policy.check_before_call(attempt.url()) {
                    let to = attempt.url().to_string();
                    attempt.error(format!("redirected to {to}: {problem}"))
                } else {
                    attempt.follow()
                }
            })
        } else {
            reqwest::redirect::Policy::none()
        };
        let client = reqwest::Client::builder()
            .dns_resolver(Arc::new(Resolver(Arc::clone(&policy))))
            .redirect(redirects)
            // A proxy would connect where the policy never looked.
            .no_proxy()
            .timeout(ATTEMPT_TIMEOUT)
            .user_agent(USER_AGENT)
            .build()?;
        Ok(Webhooks {
            policy,
            secrets: config.secrets.clone(),
            first_retry: config.first_retry,
            client,
        })
    }
}

#[async_trait::async_trait]
impl CallbackCheck for Webhooks {
    async fn check(&self, url: &str) -> Result<(), String> {
        self.policy.check(url).await
    }

    /// Every event but `ask.ended` is sent as the ask was when it
    /// happened (an ask posted and answered at once is still `pending` in
    /// its `ask.posted`); `ask.ended`'s is built when sent, the ask having
    /// ended by then.
    async fn body(
        &self,
        bridge: &Bridge,
        id: &str,
        event: CallbackEvent,
        delivery: &str,
    ) -> Option<String> {
        if event == CallbackEvent::Ended {
            return None;
        }
        match payload(bridge, id, event.as_str(), delivery).await {
            Ok(body) => Some(body),
            Err(error) => {
                tracing::warn!(ask_id = %id, delivery, error = %error, "cannot build a webhook's body now; it is built when sent");
                None
            }
        }
    }
}

/// The `askbridge-signature` header's value for `body` sent at `t` (Unix
/// seconds): `t=<t>,v1=<hex HMAC-SHA256 of "<t>.<body>">`, one `v1` per
/// secret.
pub fn signature(secrets: &[Secret], t: i64, body: &[u8]) -> String {
    let mut header = format!("t={t}");
    for secret in secrets {
        // HMAC takes a key of any length.
        let Ok(mut mac) = Hmac::<Sha256>::new_from_slice(secret.expose().as_bytes()) else {
            continue;
        };
        mac.update(t.to_string().as_bytes());
        mac.update(b".");
        mac.update(body);
        header.push_str(",v1=");
        header.push_str(&hex::encode(mac.finalize().into_bytes()));
    }
    header
}

/// Sends due deliveries until the bridge is dropped.
///
/// An `ask.ended` delivery waits for its ask's deadline unless brought
/// forward: for each ask with a callback that this instance hears end
/// (its own ends and, on Postgres, the others'), and for every ended ask
/// at start, after missed events and every [`CATCH_UP_EVERY`] (an end
/// whose instance died before bringing it forward).
pub async fn run(bridge: WeakBridge, webhooks: Arc<Webhooks>) {
    let (mut events, wake) = match bridge.upgrade() {
        Some(bridge) => (bridge.subscribe(), bridge.webhook_wake()),
        None => return,
    };
    let mut failures = 0u32;
    let mut ended = Ended::Unknown;
    let mut caught_up = None;
    loop {
        let Some(live) = bridge.upgrade() else { return };
        let now = live.now();
        if caught_up.is_none_or(|at| since(now, at) >= CATCH_UP_EVERY) {
            ended = Ended::Unknown;
        }
        let brought = bring_forward(&live, &ended).await;
        match &brought {
            Ok(()) if ended == Ended::Unknown => caught_up = Some(now),
            Ok(()) => {}
            // Whatever was heard is looked for again next time.
            Err(_) => caught_up = None,
        }
        let next = match brought.and(send_due(&live, &webhooks).await) {
            Ok(next) => {
                failures = 0;
                next
            }
            Err(error) => {
                failures = failures.saturating_add(1);
                let wait = Duration::from_millis(100) * 2u32.pow(failures.min(6));
                tracing::warn!(error = %error, retry_in_ms = wait.as_millis() as u64, "cannot read webhook deliveries");
                Some(live.clock().after(wait))
            }
        };
        let now = live.now();
        // Due now after a pass: what could not be claimed (its ask could
        // not be read, or is still open at its deadline); looked at again
        // shortly, not at once.
        let sleep = match next {
            None => LOOK_EVERY,
            Some(next) if next <= now => UNCLAIMED_AGAIN,
            Some(next) => since(next, now).min(LOOK_EVERY),
        };
        let clock = live.clock().clone();
        drop(live);
        let heard = async {
            loop {
                match events.recv().await {
                    Ok(BridgeEvent::Ended(view)) if view.ask.callback.is_some() => {
                        return Some(Ended::These(vec![view.id.clone()]));
                    }
                    Err(RecvError::Lagged(_)) => return Some(Ended::Unknown),
                    Ok(_) => {}
                    Err(RecvError::Closed) => return None,
                }
            }
        };
        let heard = tokio::select! {
            () = wake.notified() => Some(Ended::These(Vec::new())),
            () = clock.sleep(sleep) => Some(Ended::These(Vec::new())),
            heard = heard => heard,
        };
        let Some(mut heard) = heard else { return };
        // Every other end heard meanwhile, at once.
        loop {
            match (&mut heard, events.try_recv()) {
                (Ended::These(ids), Ok(BridgeEvent::Ended(view)))
                    if view.ask.callback.is_some() =>
                {
                    ids.push(view.id.clone());
                }
                (_, Err(TryRecvError::Lagged(_))) => heard = Ended::Unknown,
                (_, Ok(_)) => {}
                (_, Err(TryRecvError::Empty | TryRecvError::Closed)) => break,
            }
        }
        ended = heard;
    }
}

/// Which asks ended since the sender last looked.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Ended {
    /// These (possibly none).
    These(Vec<String>),
    /// Not known: any of them.
    Unknown,
}

/// Brings the `ask.ended` deliveries of the asks that ended forward to
/// now.
async fn bring_forward(bridge: &Bridge, ended: &Ended) -> Result<(), crate::store::StoreError> {
    let now = millis(bridge.now());
    match ended {
        Ended::Unknown => bridge.store().webhook_ended(None, now).await,
        Ended::These(ids) => {
            for id in ids {
                bridge.store().webhook_ended(Some(id), now).await?;
            }
            Ok(())
        }
    }
}

/// Claims and starts every delivery due now; returns when the next one
/// that can be is due.
async fn send_due(
    bridge: &Bridge,
    webhooks: &Arc<Webhooks>,
) -> Result<Option<Timestamp>, crate::store::StoreError> {
    let store = bridge.store();
    loop {
        let now = bridge.now();
        let due = store.due_webhooks(millis(now), BATCH).await?;
        let full = due.len() as i64 == BATCH;
        let mut claimed = false;
        for row in due {
            let Some(body) = claim(bridge, &row).await else {
                continue;
            };
            claimed = true;
            let bridge = bridge.clone();
            let webhooks = Arc::clone(webhooks);
            tokio::spawn(async move { attempt(&bridge, &webhooks, row, body).await });
        }
        // A full batch of which nothing could be claimed would come back
        // the same: leave it to the next look.
        if !full || !claimed {
            break;
        }
    }
    Ok(store.next_webhook_at().await?.map(timestamp))
}

/// Claims the next attempt of `row`; the body to send, unless another
/// instance made the attempt (or the ask cannot be read: then it is left
/// due, and looked at again).
async fn claim(bridge: &Bridge, row: &WebhookRow) -> Option<String> {
    let body = match &row.body {
        Some(body) => body.clone(),
        None => match payload(bridge, &row.ask_id, &row.event, &row.id).await {
            Ok(body) => body,
            Err(error) => {
                tracing::warn!(ask_id = %row.ask_id, delivery = %row.id, error = %error, "cannot build a webhook's body");
                return None;
            }
        },
    };
    let now = bridge.now();
    let until = later(now, CLAIM);
    match bridge
        .store()
        .claim_webhook(&row.id, row.attempts, millis(now), millis(until), &body)
        .await
    {
        Ok(claimed) => claimed,
        Err(error) => {
            tracing::warn!(delivery = %row.id, error = %error, "cannot claim a webhook attempt");
            None
        }
    }
}

/// The JSON delivery `delivery` of `event` sends: ask `id` as `GET
/// /v1/asks/{id}` shows it now, `event` and `deliveryId` added.
async fn payload(bridge: &Bridge, id: &str, event: &str, delivery: &str) -> anyhow::Result<String> {
    let view = bridge.get(id).await?;
    let shown = crate::http::asks::shown(bridge, &view).await?;
    let mut json = serde_json::to_value(shown)?;
    if let Value::Object(map) = &mut json {
        map.insert("event".to_owned(), Value::from(event));
        map.insert("deliveryId".to_owned(), Value::from(delivery));
    }
    Ok(serde_json::to_string(&json)?)
}

/// How one attempt went.
#[derive(Debug)]
enum Sent {
    /// A 2xx.
    Delivered(u16),
    /// `410 Gone`: the receiver wants no more.
    Gone,
    /// Anything else: the status, if the receiver answered, and why.
    Failed(Option<u16>, String),
}

/// Makes one claimed attempt and records it.
async fn attempt(bridge: &Bridge, webhooks: &Webhooks, row: WebhookRow, body: String) {
    let attempts = row.attempts + 1;
    let sent = post(bridge, webhooks, &row, body).await;
    let now = bridge.now();
    let first = row.first_attempt_at.map_or(now, timestamp);
    let Settled {
        state,
        due_at,
        status,
        error,
        result,
    } = settle(&sent, attempts, first, now, webhooks.first_retry);
    bridge.count_webhook(result);
    let record = WebhookAttempt {
        id: &row.id,
        attempts,
        state,
        due_at: millis(due_at),
        status: status.map(i64::from),
        error: error.as_deref(),
        at: millis(now),
    };
    match bridge.store().finish_webhook(&record).await {
        Ok(true) => {
            tracing::info!(ask_id = %row.ask_id, delivery = %row.id, event = %row.event, attempt = attempts, state, status = ?status, error = ?error, "webhook attempt recorded");
            // The sender slept past this claim's end: the retry may be
            // due sooner.
            if state == "pending" {
                bridge.webhook_wake().notify_one();
            }
        }
        Ok(false) => {
            tracing::warn!(delivery = %row.id, "a webhook attempt outlived its claim; another was made meanwhile")
        }
        // Left claimed: made again once the claim runs out.
        Err(error) => {
            tracing::warn!(delivery = %row.id, error = %error, "cannot record a webhook attempt; it will be made again")
        }
    }
}

/// How an attempt is recorded.
#[derive(Debug, PartialEq, Eq)]
struct Settled {
    /// The delivery's state after it.
    state: &'static str,
    /// The next attempt's time (`pending`), else now.
    due_at: Timestamp,
    status: Option<u16>,
    error: Option<String>,
    /// How it counts in `/metrics` ([`crate::bridge::WEBHOOK_RESULTS`]).
    result: &'static str,
}

/// What attempt `attempts` (the first made at `first`) that went as
/// `sent` at `now` leaves: delivered, gone, given up once the next try
/// would be more than [`GIVE_UP_AFTER`] after the first, else pending
/// until after the [`backoff`].
fn settle(
    sent: &Sent,
    attempts: i64,
    first: Timestamp,
    now: Timestamp,
    first_retry: Duration,
) -> Settled {
    let (state, due_at, status, error, result) = match sent {
        Sent::Delivered(status) => ("delivered", now, Some(*status), None, "delivered"),
        Sent::Gone => (
            "gone",
            now,
            Some(410),
            Some("410 Gone: the receiver wants no more".to_owned()),
            "gone",
        ),
        Sent::Failed(status, why) => {
            let next = later(now, backoff(first_retry, attempts));
            if since(next, first) > GIVE_UP_AFTER {
                let why = format!(
                    "{why}; gave up after {attempts} attempts over {} hours",
                    GIVE_UP_AFTER.as_secs() / 3_600
                );
                ("failed", now, *status, Some(why), "failed")
            } else {
                ("pending", next, *status, Some(why.clone()), "retry")
            }
        }
    };
    Settled {
        state,
        due_at,
        status,
        error,
        result,
    }
}

/// POSTs `body` to the delivery's URL, signed now.
async fn post(bridge: &Bridge, webhooks: &Webhooks, row: &WebhookRow, body: String) -> Sent {
    let url = match reqwest::Url::parse(&row.url) {
        Ok(url) => url,
        Err(error) => return Sent::Failed(None, format!("not a URL: {error}")),
    };
    if let Err(problem) = webhooks.policy.check_before_call(&url) {
        return Sent::Failed(None, format!("refused: {problem}"));
    }
    let t = i64::try_from(bridge.now().0 / 1_000).unwrap_or(i64::MAX);
    let request = webhooks
        .client
        .post(url)
        .header(reqwest::header::CONTENT_TYPE, "application/json")
        .header(
            SIGNATURE_HEADER,
            signature(&webhooks.secrets, t, body.as_bytes()),
        )
        .header("askbridge-event", &row.event)
        .header("askbridge-delivery", &row.id)
        .header("idempotency-key", &row.id)
        .body(body);
    match request.send().await {
        Ok(response) => {
            let status = response.status();
            if status.is_success() {
                Sent::Delivered(status.as_u16())
            } else if status == reqwest::StatusCode::GONE {
                Sent::Gone
            } else if status.is_redirection() {
                let to = response
                    .headers()
                    .get(reqwest::header::LOCATION)
                    .and_then(|value| value.to_str().ok())
                    .unwrap_or("nowhere");
                Sent::Failed(
                    Some(status.as_u16()),
                    format!(
                        "{status}: redirected to {to}; redirects are not followed ([webhooks] follow_redirects)"
                    ),
                )
            } else {
                Sent::Failed(
                    Some(status.as_u16()),
                    format!("the receiver answered {status}"),
                )
            }
        }
        Err(error) => Sent::Failed(None, describe(&error)),
    }
}

/// A failed request in words, its causes included ("error sending
/// request" alone says nothing).
fn describe(error: &reqwest::Error) -> String {
    let mut words = if error.is_timeout() {
        format!("no answer within {} s", ATTEMPT_TIMEOUT.as_secs())
    } else {
        error.to_string()
    };
    let mut source = std::error::Error::source(error);
    while let Some(cause) = source {
        words.push_str(": ");
        words.push_str(&cause.to_string());
        source = cause.source();
    }
    words
}

/// The wait after attempt `attempts` failed: `first` doubled for each
/// attempt before, at most an hour, then a random part of its second
/// half taken off (so receivers that failed together are not called
/// together again).
fn backoff(first: Duration, attempts: i64) -> Duration {
    let doublings = u32::try_from(attempts.saturating_sub(1))
        .unwrap_or(u32::MAX)
        .min(31);
    let full = first
        .saturating_mul(2u32.saturating_pow(doublings))
        .min(MAX_BACKOFF);
    let half = full / 2;
    half + half.mul_f64(fastrand::f64())
}

fn millis(at: Timestamp) -> i64 {
    i64::try_from(at.0).unwrap_or(i64::MAX)
}

fn timestamp(millis: i64) -> Timestamp {
    Timestamp(u64::try_from(millis).unwrap_or(0))
}

/// `at` plus `by`.
fn later(at: Timestamp, by: Duration) -> Timestamp {
    Timestamp(at.0.saturating_add(u64::try_from(by.as_millis()).unwrap_or(u64::MAX)))
}

/// How long from `earlier` to `at` (zero if `at` is earlier).
fn since(at: Timestamp, earlier: Timestamp) -> Duration {
    Duration::from_millis(at.0.saturating_sub(earlier.0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn webhook_signature_is_hmac_sha256_of_the_time_and_the_body() {
        // An independent HMAC (RFC 2104 by hand over SHA-256) of
        // "1700000000.{\"a\":1}" with the key "whsec_test".
        let body = br#"{"a":1}"#;
        let message = [b"1700000000.".as_slice(), body].concat();
        let key = b"whsec_test";
        let mut block = [0u8; 64];
        block[..key.len()].copy_from_slice(key);
        let inner: Vec<u8> = block.iter().map(|b| b ^ 0x36).chain(message).collect();
        let inner = <Sha256 as sha2::Digest>::digest(&inner);
        let outer: Vec<u8> = block.iter().map(|b| b ^ 0x5c).chain(inner).collect();
        let expected = hex::encode(<Sha256 as sha2::Digest>::digest(&outer));

        let header = signature(&[Secret::new("whsec_test")], 1_700_000_000, body);
        assert_eq!(header, format!("t=1700000000,v1={expected}"));

        let two = signature(
            &[Secret::new("new"), Secret::new("whsec_test")],
            1_700_000_000,
            body,
        );
        let parts: Vec<&str> = two.split(',').collect();
        assert_eq!(parts.len(), 3, "{two}");
        assert_eq!(parts[2], format!("v1={expected}"));
        assert_ne!(parts[1], parts[2]);
    }

    #[test]
    fn webhook_attempts_are_delivered_gone_retried_or_given_up_after_a_day() {
        let second = Duration::from_secs(1);
        let first = Timestamp(1_800_000_000_000);
        let delivered = settle(
            &Sent::Delivered(204),
            3,
            first,
            later(first, second),
            second,
        );
        assert_eq!(
            (delivered.state, delivered.status, delivered.result),
            ("delivered", Some(204), "delivered")
        );
        let gone = settle(&Sent::Gone, 1, first, first, second);
        assert_eq!(
            (gone.state, gone.status, gone.result),
            ("gone", Some(410), "gone")
        );

        let failed = Sent::Failed(Some(503), "the receiver answered 503".to_owned());
        let retry = settle(&failed, 3, first, first, second);
        assert_eq!((retry.state, retry.result), ("pending", "retry"));
        // The third attempt failed: 4 s, less up to half.
        let wait = since(retry.due_at, first);
        assert!(
            wait >= Duration::from_secs(2) && wait <= Duration::from_secs(4),
            "{wait:?}"
        );
        assert_eq!(retry.error.as_deref(), Some("the receiver answered 503"));

        // 23 h after the first attempt, a wait of up to an hour passes the
        // day only when it is long enough; 24 h after, always.
        let late = later(first, Duration::from_secs(23 * 3_600 + 59 * 60));
        let ended = settle(&failed, 30, first, late, second);
        assert_eq!(
            (ended.state, ended.result, ended.due_at),
            ("failed", "failed", late)
        );
        assert!(
            ended
                .error
                .as_deref()
                .is_some_and(|error| error.ends_with("gave up after 30 attempts over 24 hours")),
            "{ended:?}"
        );
        let early = later(first, Duration::from_secs(3_600));
        assert_eq!(settle(&failed, 12, first, early, second).state, "pending");
    }

    #[test]
    fn webhook_backoff_doubles_with_jitter_up_to_an_hour() {
        let first = Duration::from_secs(1);
        for attempts in 1..=40 {
            let full = first
                .saturating_mul(2u32.saturating_pow((attempts - 1) as u32))
                .min(MAX_BACKOFF);
            for _ in 0..20 {
                let wait = backoff(first, attempts);
                assert!(
                    wait >= full / 2 && wait <= full,
                    "attempt {attempts}: {wait:?} of {full:?}"
                );
            }
        }
        assert!(backoff(first, 40) >= MAX_BACKOFF / 2);
    }
}

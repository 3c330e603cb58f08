//! The fault layer, as a client sees it on each fake: the platform's own
//! rate limit with its retry hint, `500`, `502`, a connection closed
//! without an answer, no answer at all; and a faulted request never
//! reaches the fake's state.

use std::time::Duration;

use askbridge_testkit::discord::FakeDiscord;
use askbridge_testkit::faults::{Fault, Faults};
use askbridge_testkit::feishu::FakeFeishu;
use askbridge_testkit::slack::FakeSlack;
use askbridge_testkit::telegram::FakeTelegram;
use serde_json::Value;

fn client() -> reqwest::Client {
    reqwest::Client::builder()
        .no_proxy()
        .timeout(Duration::from_millis(500))
        .build()
        .expect("client")
}

fn only(kind: Fault) -> Faults {
    Faults::share(1.0).kinds(&[kind])
}

/// What one request met: the status, a header and the body, or the error.
async fn call(
    request: reqwest::RequestBuilder,
    header: &str,
) -> Result<(u16, Option<String>, Value), reqwest::Error> {
    let response = request.send().await?;
    let status = response.status().as_u16();
    let hint = response
        .headers()
        .get(header)
        .and_then(|value| value.to_str().ok())
        .map(str::to_owned);
    let text = response.text().await?;
    Ok((
        status,
        hint,
        serde_json::from_str(&text).unwrap_or(Value::String(text)),
    ))
}

#[tokio::test]
async fn telegram_faults_look_like_telegrams_and_never_reach_its_state() {
    let fake = FakeTelegram::start().await;
    let url = format!("{}/bot{}/getMe", fake.api_url(), fake.token());
    let client = client();

    fake.set_faults(only(Fault::RateLimited));
    let (status, _, body) = call(client.get(&url), "retry-after").await.expect("answer");
    assert_eq!(status, 429);
    assert_eq!(body["parameters"]["retry_after"], 1);
    assert_eq!(body["ok"], false);

    fake.set_faults(only(Fault::ServerError));
    let (status, _, body) = call(client.get(&url), "").await.expect("answer");
    assert_eq!((status, body["error_code"].as_i64()), (500, Some(500)));

    fake.set_faults(only(Fault::BadGateway));
    let (status, _, body) = call(client.get(&url), "").await.expect("answer");
    assert_eq!(status, 502);
    assert!(
        body.as_str()
            .is_some_and(|html| html.contains("502 Bad Gateway"))
    );

    fake.set_faults(only(Fault::Reset));
    let error = call(client.get(&url), "").await.expect_err("closed");
    assert!(!error.is_timeout(), "{error}");

    fake.set_faults(only(Fault::NoAnswer).hang(Duration::from_secs(60)));
    let error = call(client.get(&url), "").await.expect_err("no answer");
    assert!(error.is_timeout(), "{error}");

    assert!(fake.calls().is_empty(), "faulted calls reached the fake");
    let counts = fake.fault_counts();
    assert_eq!(
        (
            counts.rate_limited,
            counts.server_errors,
            counts.bad_gateways,
            counts.resets,
            counts.unanswered
        ),
        (1, 1, 1, 1, 1)
    );

    fake.set_faults(Faults::NONE);
    let (status, _, body) = call(client.get(&url), "").await.expect("answer");
    assert_eq!((status, body["ok"].as_bool()), (200, Some(true)));
    assert_eq!(fake.calls().len(), 1);
    assert_eq!(fake.fault_counts().requests, 6);
}

#[tokio::test]
async fn at_most_ends_the_faults_after_so_many() {
    let fake = FakeTelegram::start().await;
    let url = format!("{}/bot{}/getMe", fake.api_url(), fake.token());
    let client = client();
    fake.set_faults(only(Fault::ServerError).at_most(2));
    for expected in [500, 500, 200, 200] {
        let (status, _, _) = call(client.get(&url), "").await.expect("answer");
        assert_eq!(status, expected);
    }
    // Set again: two more.
    fake.set_faults(only(Fault::ServerError).at_most(2));
    for expected in [500, 500, 200] {
        let (status, _, _) = call(client.get(&url), "").await.expect("answer");
        assert_eq!(status, expected);
    }
    assert_eq!(fake.fault_counts().server_errors, 4);
}

#[tokio::test]
async fn discord_rate_limit_fault_carries_discords_retry_hint() {
    let fake = FakeDiscord::builder()
        .faults(only(Fault::RateLimited))
        .start()
        .await;
    let request = client()
        .get(format!("{}/api/v10/users/@me", fake.api_url()))
        .header("Authorization", format!("Bot {}", fake.token()));
    let (status, hint, body) = call(request, "retry-after").await.expect("answer");
    assert_eq!((status, hint.as_deref()), (429, Some("1")));
    assert_eq!(body["retry_after"], 1.0);
    assert_eq!(body["global"], false);
    assert!(fake.calls().is_empty());
}

#[tokio::test]
async fn slack_rate_limit_fault_carries_slacks_retry_hint() {
    let fake = FakeSlack::builder()
        .faults(only(Fault::RateLimited))
        .start()
        .await;
    let request = client()
        .post(format!("{}/auth.test", fake.api_url()))
        .bearer_auth(fake.bot_token());
    let (status, hint, body) = call(request, "retry-after").await.expect("answer");
    assert_eq!((status, hint.as_deref()), (429, Some("1")));
    assert_eq!(body["error"], "ratelimited");
    assert_eq!(fake.fault_counts().rate_limited, 1);
}

#[tokio::test]
async fn feishu_rate_limit_fault_carries_feishus_retry_hint() {
    let fake = FakeFeishu::builder()
        .faults(only(Fault::RateLimited))
        .start()
        .await;
    let request = client()
        .post(format!(
            "{}/open-apis/auth/v3/tenant_access_token/internal",
            fake.api_url()
        ))
        .json(&serde_json::json!({"app_id": "x", "app_secret": "y"}));
    let (status, hint, body) = call(request, "x-ogw-ratelimit-reset")
        .await
        .expect("answer");
    assert_eq!((status, hint.as_deref()), (429, Some("1")));
    assert_eq!(body["code"], 99_991_400);
    assert_eq!(fake.fault_counts().rate_limited, 1);
}

//! HTTP callback mode: POSTing events and card callbacks to the app's
//! callback URL, as Feishu does, and reading the answers.

use std::time::{Duration, Instant};

use super::model::Answer;
use super::state::HttpRequest;

/// POSTs `request` to `url`, waiting at most `timeout` for the whole
/// answer (Feishu gives up after 3 seconds).
///
/// # Errors
/// If the URL cannot be reached or does not answer in time.
pub(crate) async fn post(
    client: &reqwest::Client,
    url: &str,
    request: &HttpRequest,
    timeout: Duration,
) -> Result<Answer, String> {
    let mut builder = client.post(url).timeout(timeout);
    for (name, value) in &request.headers {
        builder = builder.header(*name, value);
    }
    let started = Instant::now();
    let response = builder
        .body(request.body.clone())
        .send()
        .await
        .map_err(|error| describe(url, &error, timeout))?;
    let status = response.status().as_u16();
    let body = response
        .text()
        .await
        .map_err(|error| describe(url, &error, timeout))?;
    let latency = started.elapsed();
    let json = serde_json::from_str(&body).ok();
    Ok(Answer {
        status,
        body: (!body.is_empty()).then_some(body),
        json,
        latency,
        frame_headers: Vec::new(),
    })
}

fn describe(url: &str, error: &reqwest::Error, timeout: Duration) -> String {
    if error.is_timeout() {
        format!("no answer from {url} within {timeout:?}")
    } else {
        format!("POST {url} failed: {error}")
    }
}

//! `GET /metrics`: Prometheus text exposition of the bridge's counters,
//! HTTP requests by route and status, the long-polls waiting now, and the
//! time from the answer that ended an ask to the waiting agent's response.

use std::collections::BTreeMap;
use std::fmt::Write;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use crate::bridge::Metrics;

/// Upper bounds (seconds) of the answer-delivery histogram's buckets.
const BUCKETS: &[f64] = &[
    0.001, 0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5,
];

/// Counters kept by the HTTP layer.
#[derive(Debug, Default)]
pub struct HttpMetrics {
    requests: Mutex<BTreeMap<(String, String, u16), u64>>,
    waiting: AtomicU64,
    delivery: Mutex<Histogram>,
}

/// One long-poll counted in [`HttpMetrics`] as waiting, until dropped.
#[derive(Debug)]
pub struct Waiting<'a>(&'a AtomicU64);

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
    }
}

/// A counter by one label: a line per value of `values` (in that order),
/// its count from `counts` (0 when it has none).
fn by_label(
    out: &mut String,
    name: &str,
    help: &str,
    label: &str,
    values: &[&str],
    counts: &[(&'static str, u64)],
) -> std::fmt::Result {
    writeln!(out, "# HELP {name} {help}")?;
    writeln!(out, "# TYPE {name} counter")?;
    for value in values {
        let count: u64 = counts
            .iter()
            .filter(|(v, _)| v == value)
            .map(|(_, n)| n)
            .sum();
        writeln!(out, "{name}{{{label}=\"{value}\"}} {count}")?;
    }
    Ok(())
}

#[derive(Debug, Default)]
struct Histogram {
    /// Cumulative counts, one per bucket of [`BUCKETS`].
    counts: Vec<u64>,
    count: u64,
    sum: f64,
}

impl HttpMetrics {
    /// Counts one request.
    pub fn request(&self, method: &str, route: &str, status: u16) {
        if let Ok(mut requests) = self.requests.lock() {
            *requests
                .entry((method.to_owned(), route.to_owned(), status))
                .or_default() += 1;
        }
    }

    /// Counts a long-poll as waiting for as long as the guard lives.
    pub fn waiting(&self) -> Waiting<'_> {
        self.waiting.fetch_add(1, Ordering::Relaxed);
        Waiting(&self.waiting)
    }

    /// Records how long after an ask ended its waiting agent got the answer.
    pub fn delivered(&self, latency: Duration) {
        let seconds = latency.as_secs_f64();
        if let Ok(mut histogram) = self.delivery.lock() {
            if histogram.counts.is_empty() {
                histogram.counts = vec![0; BUCKETS.len()];
            }
            for (count, bound) in histogram.counts.iter_mut().zip(BUCKETS) {
                if seconds <= *bound {
                    *count += 1;
                }
            }
            histogram.count += 1;
            histogram.sum += seconds;
        }
    }

    /// The Prometheus text for these counters and the bridge's.
    pub fn render(&self, bridge: &Metrics) -> String {
        let mut out = String::new();
        // Writing to a String cannot fail.
        let _ = self.write(bridge, &mut out);
        out
    }

    fn write(&self, bridge: &Metrics, out: &mut String) -> std::fmt::Result {
        writeln!(
            out,
            "# HELP askbridge_asks_created_total Asks created since start."
        )?;
        writeln!(out, "# TYPE askbridge_asks_created_total counter")?;
        writeln!(out, "askbridge_asks_created_total {}", bridge.created)?;
        by_label(
            out,
            "askbridge_asks_ended_total",
            "Asks ended since start, by final status.",
            "status",
            &[
                "answered",
                "skipped",
                "timed_out",
                "cancelled",
                "delivery_failed",
            ],
            &bridge.ended,
        )?;
        writeln!(out, "# HELP askbridge_asks_pending Asks pending now.")?;
        writeln!(out, "# TYPE askbridge_asks_pending gauge")?;
        writeln!(out, "askbridge_asks_pending {}", bridge.pending)?;
        for (name, kind, help, value) in [
            (
                "askbridge_announcements_total",
                "counter",
                "Changes announced by the database (Postgres), this instance's own included.",
                bridge.announcements,
            ),
            (
                "askbridge_change_feed_resyncs_total",
                "counter",
                "Times the change feed was interrupted and every pending ask re-read.",
                bridge.resyncs,
            ),
            (
                "askbridge_lease_takeovers_total",
                "counter",
                "Bot connections this instance took over from a dead instance.",
                bridge.lease_takeovers,
            ),
            (
                "askbridge_delivery_takeovers_total",
                "counter",
                "Undelivered asks this instance took over from a dead instance.",
                bridge.delivery_takeovers,
            ),
        ] {
            writeln!(out, "# HELP {name} {help}")?;
            writeln!(out, "# TYPE {name} {kind}")?;
            writeln!(out, "{name} {value}")?;
        }
        by_label(
            out,
            "askbridge_webhook_attempts_total",
            "Webhook attempts this instance made, by how they went: delivered, retry (to be tried again), gone (410), failed (given up).",
            "result",
            &crate::bridge::WEBHOOK_RESULTS,
            &bridge.webhooks,
        )?;
        writeln!(
            out,
            "# HELP askbridge_http_waiting Long-polls (?wait=) waiting for an ask to end now."
        )?;
        writeln!(out, "# TYPE askbridge_http_waiting gauge")?;
        writeln!(
            out,
            "askbridge_http_waiting {}",
            self.waiting.load(Ordering::Relaxed)
        )?;

        writeln!(
            out,
            "# HELP askbridge_http_requests_total HTTP requests by method, route and status."
        )?;
        writeln!(out, "# TYPE askbridge_http_requests_total counter")?;
        if let Ok(requests) = self.requests.lock() {
            for ((method, route, status), count) in requests.iter() {
                writeln!(
                    out,
                    "askbridge_http_requests_total{{method=\"{method}\",route=\"{}\",status=\"{status}\"}} {count}",
                    escape(route)
                )?;
            }
        }

        writeln!(
            out,
            "# HELP askbridge_answer_delivery_seconds Time from the answer that ended an ask to the waiting agent's response."
        )?;
        writeln!(out, "# TYPE askbridge_answer_delivery_seconds histogram")?;
        if let Ok(histogram) = self.delivery.lock() {
            for (index, bound) in BUCKETS.iter().enumerate() {
                let count = histogram.counts.get(index).copied().unwrap_or(0);
                writeln!(
                    out,
                    "askbridge_answer_delivery_seconds_bucket{{le=\"{bound}\"}} {count}"
                )?;
            }
            writeln!(
                out,
                "askbridge_answer_delivery_seconds_bucket{{le=\"+Inf\"}} {}",
                histogram.count
            )?;
            writeln!(
                out,
                "askbridge_answer_delivery_seconds_sum {}",
                histogram.sum
            )?;
            writeln!(
                out,
                "askbridge_answer_delivery_seconds_count {}",
                histogram.count
            )?;
        }
        Ok(())
    }
}

/// Escapes a label value.
fn escape(value: &str) -> String {
    value
        .replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metrics_text() {
        let metrics = HttpMetrics::default();
        metrics.request("POST", "/v1/asks", 201);
        metrics.request("POST", "/v1/asks", 201);
        metrics.delivered(Duration::from_millis(3));
        let waiting = metrics.waiting();
        let ended = metrics.waiting();
        drop(ended);
        let text = metrics.render(&Metrics {
            created: 2,
            ended: vec![("answered", 1)],
            pending: 1,
            announcements: 7,
            resyncs: 1,
            lease_takeovers: 2,
            delivery_takeovers: 3,
            webhooks: vec![("delivered", 4), ("retry", 5)],
        });
        for line in [
            "askbridge_asks_created_total 2",
            "askbridge_asks_ended_total{status=\"answered\"} 1",
            "askbridge_asks_ended_total{status=\"timed_out\"} 0",
            "askbridge_asks_pending 1",
            "askbridge_announcements_total 7",
            "askbridge_change_feed_resyncs_total 1",
            "askbridge_lease_takeovers_total 2",
            "askbridge_delivery_takeovers_total 3",
            "askbridge_webhook_attempts_total{result=\"delivered\"} 4",
            "askbridge_webhook_attempts_total{result=\"retry\"} 5",
            "askbridge_webhook_attempts_total{result=\"failed\"} 0",
            "askbridge_http_waiting 1",
            "askbridge_http_requests_total{method=\"POST\",route=\"/v1/asks\",status=\"201\"} 2",
            "askbridge_answer_delivery_seconds_bucket{le=\"0.002\"} 0",
            "askbridge_answer_delivery_seconds_bucket{le=\"0.005\"} 1",
            "askbridge_answer_delivery_seconds_count 1",
        ] {
            assert!(
                text.lines().any(|l| l == line),
                "missing {line:?} in\n{text}"
            );
        }
        drop(waiting);
        assert!(
            metrics
                .render(&Metrics::default())
                .lines()
                .any(|l| l == "askbridge_http_waiting 0")
        );
    }
}

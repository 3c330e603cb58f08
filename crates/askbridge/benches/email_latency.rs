//! Email figures, printed, not asserted: from a reply delivered into the
//! bot's mailbox to the agent woken with the answer, p50 / p99 over
//! `ASKBRIDGE_EMAIL_RUNS` asks (default 50), and from the ask created to
//! its mail at the SMTP server. Real servers on loopback: a private
//! Dovecot (the reply delivered by LMTP, heard by IDLE), aiosmtpd
//! (`ASKBRIDGE_TEST_PYTHON`, as the tests), the real daemon on SQLite.
//!
//! `cargo bench -p askbridge --bench email_latency`.

use std::time::{Duration, Instant};

use askbridge_testkit::mail::{Dovecot, SmtpSink};
use serde_json::json;

#[path = "../tests/daemon/mod.rs"]
mod daemon;

use daemon::{Daemon, create, outcome};

fn percentile(sorted: &[Duration], share: f64) -> Duration {
    let index = ((sorted.len() as f64 * share).ceil() as usize).clamp(1, sorted.len()) - 1;
    sorted[index]
}

fn show(what: &str, mut times: Vec<Duration>) {
    times.sort_unstable();
    println!(
        "{what}: p50 {:.1} ms, p99 {:.1} ms, max {:.1} ms ({} runs)",
        percentile(&times, 0.5).as_secs_f64() * 1e3,
        percentile(&times, 0.99).as_secs_f64() * 1e3,
        percentile(&times, 1.0).as_secs_f64() * 1e3,
        times.len()
    );
}

#[tokio::main]
async fn main() {
    if std::env::args().any(|arg| arg == "--list") {
        return;
    }
    let runs: usize = std::env::var("ASKBRIDGE_EMAIL_RUNS")
        .ok()
        .and_then(|runs| runs.parse().ok())
        .unwrap_or(50);
    let dovecot = Dovecot::start().await;
    let smtp = SmtpSink::start().await;
    let daemon = Daemon::builder()
        .env(
            "ASKBRIDGE_EMAIL_SMTP_URL",
            format!("smtp://127.0.0.1:{}", smtp.port()),
        )
        .env("ASKBRIDGE_EMAIL_IMAP_URL", dovecot.imap_url())
        .env("EMAIL_IMAP_PASSWORD", dovecot.password())
        .start();
    let mut sent = Vec::with_capacity(runs);
    let mut woken = Vec::with_capacity(runs);
    for n in 0..runs {
        let started = Instant::now();
        let id = create(
            &daemon,
            &json!({"to": "email:alice@example.com",
                    "questions": [{"id": "go", "question": format!("Ship build {n}?"), "type": "confirm"}]}),
        )
        .await;
        let mail = smtp.wait_for(2 * n + 1).await.swap_remove(2 * n);
        sent.push(started.elapsed());
        let asked = mail.header("Message-ID").expect("a Message-ID");
        let reply = format!(
            "From: alice@example.com\r\nTo: bot@example.com\r\nSubject: Re: ship\r\n\
             Message-ID: <bench-{n}@example.com>\r\nIn-Reply-To: {asked}\r\n\r\nyes\r\n"
        );
        let delivered = Instant::now();
        dovecot.deliver(reply.as_bytes()).await;
        let done = outcome(&daemon, &id).await;
        woken.push(delivered.elapsed());
        assert_eq!(done["answers"]["go"][0], "yes", "{done}");
        // The closing mail, before the next ask.
        smtp.wait_for(2 * n + 2).await;
    }
    show("ask created → its mail at the SMTP server", sent);
    show("reply delivered → agent woken (IDLE)", woken);
}

//! Deliveries from platforms that want to hear within seconds whether an
//! event arrived, and deliver again what they did not hear about (Slack's
//! envelopes and HTTP requests, Feishu's pushes): each event is handled on
//! a task of its own, acknowledged only once what it carries is recorded,
//! and handled once however often it arrives.
//!
//! Which delivery is new, taken or still in flight is the core's rule
//! ([`Deliveries`]); this module only adds the clock and the task.

use std::future::Future;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use askbridge_core::inbound::{Deliveries, Delivery, Handled};

/// How long an event's handling may take before the platform is answered:
/// Slack and Feishu want an answer within 3 seconds.
pub const ANSWER_WITHIN: Duration = Duration::from_millis(2_500);
/// How many taken deliveries are remembered per connection.
const REMEMBERED: usize = 1_024;

/// One platform connection's deliveries.
#[derive(Debug)]
pub struct Inbox {
    deliveries: Mutex<Deliveries>,
    answer_within: Duration,
}

impl Default for Inbox {
    fn default() -> Inbox {
        Inbox::answering_within(ANSWER_WITHIN)
    }
}

impl Inbox {
    /// An inbox whose platform wants its answer within `answer_within`.
    pub fn answering_within(answer_within: Duration) -> Inbox {
        Inbox {
            deliveries: Mutex::new(Deliveries::new(REMEMBERED)),
            answer_within,
        }
    }

    /// Handles delivery `key` with `handling`, on a task of its own, and
    /// waits for it at most the time the platform allows ([`ANSWER_WITHIN`]).
    ///
    /// [`Handled::Done`]: taken (now, or by an earlier delivery):
    /// acknowledge it. [`Handled::Retry`]: not taken, or not finished in
    /// time: leave it unacknowledged, so the platform delivers it again
    /// (or shows a press as failed). A handling that runs late goes on
    /// alone; a delivery of the same key meanwhile is not acknowledged
    /// either, and one after it is taken already (or handled afresh, if
    /// the first was not taken).
    pub async fn take<F>(self: &Arc<Self>, key: &str, handling: F) -> Handled
    where
        F: Future<Output = Handled> + Send + 'static,
    {
        match self.lock().begin(key) {
            Delivery::Taken => return Handled::Done,
            Delivery::InFlight => return Handled::Retry,
            Delivery::New => {}
        }
        let inbox = Arc::clone(self);
        let owned = key.to_owned();
        let task = tokio::spawn(async move {
            // Settles even if the handling panics (as taken: it would not
            // go better delivered again), so the key is not held in flight
            // for good.
            let mut settle = Settle {
                inbox,
                key: owned,
                handled: Handled::Done,
            };
            settle.handled = handling.await;
            settle.handled
        });
        match tokio::time::timeout(self.answer_within, task).await {
            Ok(Ok(handled)) => handled,
            // It panicked, and was settled as taken.
            Ok(Err(_)) => Handled::Done,
            Err(_) => {
                tracing::warn!(
                    within_ms = self.answer_within.as_millis() as u64,
                    "a chat event is not handled in time; it is left unacknowledged"
                );
                Handled::Retry
            }
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Deliveries> {
        self.deliveries
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }
}

/// Settles a delivery when its handling ends, however it ends.
struct Settle {
    inbox: Arc<Inbox>,
    key: String,
    handled: Handled,
}

impl Drop for Settle {
    fn drop(&mut self) {
        self.inbox.lock().settle(&self.key, self.handled);
    }
}

#[cfg(test)]
mod tests {
    use tokio::sync::oneshot;

    use super::*;
    use crate::chat::serial::Turns;

    #[tokio::test]
    async fn inbox_a_delivery_is_acknowledged_once_taken_and_handled_once() {
        let inbox = Arc::new(Inbox::default());
        assert_eq!(
            inbox.take("a", async { Handled::Done }).await,
            Handled::Done
        );
        let again = inbox.take("a", async { panic!("handled twice") }).await;
        assert_eq!(again, Handled::Done);

        assert_eq!(
            inbox.take("b", async { Handled::Retry }).await,
            Handled::Retry
        );
        assert_eq!(
            inbox.take("b", async { Handled::Done }).await,
            Handled::Done
        );
    }

    #[tokio::test]
    async fn inbox_a_late_handling_is_not_acknowledged_until_it_settles() {
        let inbox = Arc::new(Inbox::answering_within(Duration::from_millis(20)));
        let (finish, finished) = oneshot::channel::<Handled>();
        let late = inbox
            .take("a", async move { finished.await.unwrap_or(Handled::Retry) })
            .await;
        assert_eq!(late, Handled::Retry, "not finished in time");
        let meanwhile = inbox.take("a", async { panic!("handled twice") }).await;
        assert_eq!(meanwhile, Handled::Retry, "still in flight");

        finish
            .send(Handled::Done)
            .expect("the late handling still waits");
        // The late handling settles on its own task; until then a
        // delivery is still in flight, after it taken (a handler that ran
        // again would say Retry).
        let mut tries = 0;
        while inbox.take("a", async { Handled::Retry }).await == Handled::Retry {
            tries += 1;
            assert!(tries < 100, "the late handling never settled as taken");
            tokio::task::yield_now().await;
        }
    }

    /// The Feishu case of a slow database: an event whose handling runs
    /// past the platform's answer window is left unacknowledged, and the
    /// same person's next event must wait for it rather than overtake it.
    #[tokio::test]
    async fn inbox_a_persons_next_event_waits_for_one_still_running_past_its_window() {
        let inbox = Arc::new(Inbox::answering_within(Duration::from_millis(20)));
        let turns = Turns::default();
        let seen = Arc::new(Mutex::new(Vec::new()));
        let (finish, finished) = oneshot::channel::<()>();
        let first = turns.line_up("alice", Some("e1"));
        let second = turns.line_up("alice", Some("e2"));
        let late = {
            let seen = Arc::clone(&seen);
            inbox
                .take("e1", async move {
                    first
                        .run(async move {
                            let _ = finished.await;
                            seen.lock().expect("seen").push("2");
                            Handled::Done
                        })
                        .await
                })
                .await
        };
        assert_eq!(late, Handled::Retry, "not finished in time");
        let next = {
            let seen = Arc::clone(&seen);
            inbox
                .take("e2", async move {
                    second
                        .run(async move {
                            seen.lock().expect("seen").push("no, 3");
                            Handled::Done
                        })
                        .await
                })
                .await
        };
        assert_eq!(
            next,
            Handled::Retry,
            "waits for the first, past its window too"
        );
        assert!(seen.lock().expect("seen").is_empty(), "nothing overtook");
        finish.send(()).expect("the first still waits");
        // Both settle on their own tasks, in order; a delivery again of the
        // second is then taken already.
        let mut tries = 0;
        while inbox.take("e2", async { Handled::Retry }).await == Handled::Retry {
            tries += 1;
            assert!(tries < 100, "the second never settled as taken");
            tokio::task::yield_now().await;
        }
        assert_eq!(*seen.lock().expect("seen"), ["2", "no, 3"]);
    }

    #[tokio::test]
    async fn inbox_a_handling_that_panics_is_settled() {
        let inbox = Arc::new(Inbox::default());
        let panicked = inbox.take("a", async { panic!("a bug") }).await;
        assert_eq!(panicked, Handled::Done);
        assert_eq!(
            inbox.take("a", async { Handled::Retry }).await,
            Handled::Done
        );
    }
}

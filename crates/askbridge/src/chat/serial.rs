//! Putting what people do in order.
//!
//! - [`PerAsk`]: every change to one ask's or one of its messages' state
//!   (a press, a toggle, a typed answer, own words) runs alone, so two
//!   quick taps cannot both read the same selection and lose one.
//! - [`Turns`]: what one person does in one conversation is handled in
//!   the order it arrived, one event at a time, while different people
//!   and conversations go on at once; an event not taken holds back that
//!   person's later ones. Every platform's events go through it, whether
//!   they come in batches (Telegram's `getUpdates`, a Matrix sync) or one
//!   by one (a gateway, a webhook, a long connection).

use std::collections::{BTreeSet, HashMap};
use std::fmt;
use std::future::Future;
use std::hash::Hash;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use askbridge_core::inbound::Handled;
use tokio::sync::{OwnedMutexGuard, watch};
use tokio::time::Instant;

/// One lock per ask, held while its state changes; a lock lives only
/// while someone holds or waits for it.
#[derive(Debug, Default)]
pub struct PerAsk(Mutex<HashMap<String, Arc<tokio::sync::Mutex<()>>>>);

/// Ask `ask`'s lock, held until dropped.
#[derive(Debug)]
pub struct AskGuard<'a> {
    locks: &'a PerAsk,
    ask: String,
    held: Option<OwnedMutexGuard<()>>,
}

impl PerAsk {
    fn map(&self) -> MutexGuard<'_, HashMap<String, Arc<tokio::sync::Mutex<()>>>> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Waits until nothing else changes ask `ask`, first come first served.
    pub async fn lock(&self, ask: &str) -> AskGuard<'_> {
        let lock = Arc::clone(self.map().entry(ask.to_owned()).or_default());
        let held = lock.lock_owned().await;
        AskGuard {
            locks: self,
            ask: ask.to_owned(),
            held: Some(held),
        }
    }

    /// How many asks have a lock now (held or waited for).
    #[cfg(test)]
    fn len(&self) -> usize {
        self.map().len()
    }
}

impl Drop for AskGuard<'_> {
    fn drop(&mut self) {
        drop(self.held.take());
        let mut map = self.locks.map();
        // Only the map's own handle left: nobody holds or waits for it.
        if map
            .get(&self.ask)
            .is_some_and(|lock| Arc::strong_count(lock) == 1)
        {
            map.remove(&self.ask);
        }
    }
}

/// How many events of one person in one conversation may wait their
/// turn; one more is not taken ([`Handled::Retry`]) rather than queued
/// without end.
pub const MAX_IN_LINE: u64 = 32;

/// How long a person's new events are held back behind one of theirs that
/// was not taken, waiting for the platform to deliver it again.
pub const HOLD_BACK: Duration = Duration::from_secs(60);

/// How many lines are kept before idle ones are swept.
const SWEEP_ABOVE: usize = 1_024;

/// What people do, put in order — the one rule for every platform: the
/// events of one key (a person in a conversation) are handled one at a
/// time, in the order they arrived (the order [`Turns::line_up`] was
/// called in, whatever task then runs them), different keys at once.
///
/// An event that is not taken ([`Handled::Retry`]: the platform should
/// deliver it again) holds back its person's later events, which would
/// overtake it: those already in line are not handled (not taken either),
/// and when the event has a delivery key, neither are new ones until that
/// delivery comes again, for at most [`HOLD_BACK`]. A line holds at most
/// [`MAX_IN_LINE`] events; a line with nobody in it and nothing held back
/// is forgotten.
#[derive(Debug)]
pub struct Turns<K> {
    lines: Arc<Mutex<HashMap<K, Line>>>,
}

impl<K> Default for Turns<K> {
    fn default() -> Turns<K> {
        Turns {
            lines: Arc::default(),
        }
    }
}

/// One key's line.
#[derive(Debug)]
struct Line {
    /// The next ticket's number.
    next: u64,
    /// The number of the ticket whose turn it is.
    serving: watch::Sender<u64>,
    /// Tickets given up before their turn came.
    gone: BTreeSet<u64>,
    /// Tickets below this number are not handled: they were in line
    /// behind one that was not taken.
    refuse_below: u64,
    /// The delivery not taken that new events wait for, and until when.
    held: Option<(String, Instant)>,
}

impl Line {
    fn new() -> Line {
        Line {
            next: 0,
            serving: watch::Sender::new(0),
            gone: BTreeSet::new(),
            refuse_below: 0,
            held: None,
        }
    }

    /// Nobody in line and nothing held back (at `now`).
    fn idle(&self, now: Instant) -> bool {
        *self.serving.borrow() == self.next
            && self.held.as_ref().is_none_or(|(_, until)| *until <= now)
    }

    /// Ticket `number` is done: the next one not given up gets its turn.
    fn advance(&mut self, number: u64) {
        let mut next = number + 1;
        while self.gone.remove(&next) {
            next += 1;
        }
        self.serving.send_replace(next);
    }
}

impl<K: Eq + Hash + Clone + fmt::Debug + Send + 'static> Turns<K> {
    /// Takes a place in `key`'s line for an event that arrived now;
    /// `delivery` names the delivery where the platform delivers an event
    /// again under the same name (Slack's envelope, Feishu's event id).
    pub fn line_up(&self, key: K, delivery: Option<&str>) -> Ticket<K> {
        let now = Instant::now();
        let mut lines = lock(&self.lines);
        if lines.len() > SWEEP_ABOVE {
            lines.retain(|_, line| !line.idle(now));
        }
        let line = lines.entry(key.clone()).or_insert_with(Line::new);
        let waiting_for = match &line.held {
            Some((held, until)) if *until > now => Some(held.as_str()),
            _ => None,
        };
        let refused = if waiting_for.is_some_and(|held| delivery != Some(held)) {
            Some("held back behind an earlier event of theirs that was not taken")
        } else if line.next - *line.serving.borrow() >= MAX_IN_LINE {
            Some("too many events of one person waiting")
        } else {
            None
        };
        if let Some(why) = refused {
            tracing::warn!(key = ?key, why, "a chat event is not taken now; it may be offered again");
            if line.idle(now) {
                lines.remove(&key);
            }
            return Ticket {
                lines: Arc::clone(&self.lines),
                key,
                number: None,
                delivery: None,
                started: false,
            };
        }
        let number = line.next;
        line.next += 1;
        Ticket {
            lines: Arc::clone(&self.lines),
            key,
            number: Some(number),
            delivery: delivery.map(str::to_owned),
            started: false,
        }
    }

    /// How many lines are kept.
    #[cfg(test)]
    fn len(&self) -> usize {
        lock(&self.lines).len()
    }
}

fn lock<K>(lines: &Mutex<HashMap<K, Line>>) -> MutexGuard<'_, HashMap<K, Line>> {
    lines.lock().unwrap_or_else(PoisonError::into_inner)
}

/// A place in a line ([`Turns::line_up`]); dropping it gives the place up.
#[derive(Debug)]
pub struct Ticket<K: Eq + Hash> {
    lines: Arc<Mutex<HashMap<K, Line>>>,
    key: K,
    /// `None`: refused when lining up.
    number: Option<u64>,
    delivery: Option<String>,
    /// Its turn came.
    started: bool,
}

impl<K: Eq + Hash> Ticket<K> {
    /// Waits for the ticket's turn, then handles the event with
    /// `handling`; [`Handled::Retry`] without handling it where it must
    /// not be handled now (see [`Turns`]).
    pub async fn run(mut self, handling: impl Future<Output = Handled>) -> Handled {
        let Some(number) = self.number else {
            return Handled::Retry;
        };
        let Some(mut serving) = lock(&self.lines)
            .get(&self.key)
            .map(|line| line.serving.subscribe())
        else {
            return Handled::Retry;
        };
        if serving
            .wait_for(|serving| *serving >= number)
            .await
            .is_err()
        {
            return Handled::Retry;
        }
        self.started = true;
        if lock(&self.lines)
            .get(&self.key)
            .is_none_or(|line| number < line.refuse_below)
        {
            return Handled::Retry;
        }
        let handled = handling.await;
        let mut lines = lock(&self.lines);
        if let Some(line) = lines.get_mut(&self.key) {
            match handled {
                Handled::Retry => {
                    line.refuse_below = line.next;
                    if let Some(delivery) = self.delivery.take() {
                        line.held = Some((delivery, Instant::now() + HOLD_BACK));
                    }
                }
                Handled::Done => {
                    if line
                        .held
                        .as_ref()
                        .is_some_and(|(held, _)| Some(held) == self.delivery.as_ref())
                    {
                        line.held = None;
                    }
                }
            }
        }
        handled
    }
}

impl<K: Eq + Hash> Drop for Ticket<K> {
    fn drop(&mut self) {
        let Some(number) = self.number else {
            return;
        };
        let mut lines = lock(&self.lines);
        let Some(line) = lines.get_mut(&self.key) else {
            return;
        };
        if self.started || *line.serving.borrow() == number {
            line.advance(number);
        } else {
            line.gone.insert(number);
        }
        if line.idle(Instant::now()) {
            lines.remove(&self.key);
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use super::*;

    #[tokio::test]
    async fn one_ask_changes_alone_and_its_lock_goes_away() {
        let locks = Arc::new(PerAsk::default());
        let inside = Arc::new(AtomicUsize::new(0));
        let most = Arc::new(AtomicUsize::new(0));
        let tasks: Vec<_> = (0..20)
            .map(|_| {
                let (locks, inside, most) = (locks.clone(), inside.clone(), most.clone());
                tokio::spawn(async move {
                    let _held = locks.lock("ask_1").await;
                    let now = inside.fetch_add(1, Ordering::SeqCst) + 1;
                    most.fetch_max(now, Ordering::SeqCst);
                    tokio::task::yield_now().await;
                    inside.fetch_sub(1, Ordering::SeqCst);
                })
            })
            .collect();
        for task in tasks {
            task.await.expect("the task");
        }
        assert_eq!(most.load(Ordering::SeqCst), 1);
        assert_eq!(locks.len(), 0);
        // Another ask is not held up by the first.
        let _one = locks.lock("ask_1").await;
        let _two = locks.lock("ask_2").await;
        assert_eq!(locks.len(), 2);
    }

    /// Runs the ticket with a handling that records `name` and gives
    /// `handled`.
    fn record(
        ticket: Ticket<&'static str>,
        seen: &Arc<Mutex<Vec<&'static str>>>,
        name: &'static str,
        handled: Handled,
    ) -> impl Future<Output = Handled> + use<> {
        let seen = Arc::clone(seen);
        ticket.run(async move {
            seen.lock().expect("seen").push(name);
            handled
        })
    }

    #[tokio::test]
    async fn turns_keep_each_persons_arrival_order_whatever_order_their_tasks_run_in() {
        let turns = Turns::default();
        let seen = Arc::new(Mutex::new(Vec::new()));
        let lined: Vec<_> = [
            ("a", "a1"),
            ("b", "b1"),
            ("a", "a2"),
            ("a", "a3"),
            ("b", "b2"),
        ]
        .into_iter()
        .map(|(key, name)| record(turns.line_up(key, None), &seen, name, Handled::Done))
        .collect();
        // Started last first.
        let tasks: Vec<_> = lined.into_iter().rev().map(tokio::spawn).collect();
        for task in tasks {
            assert_eq!(task.await.expect("the task"), Handled::Done);
        }
        let seen = seen.lock().expect("seen").clone();
        let of = |who: &str| {
            seen.iter()
                .filter(|name| name.starts_with(who))
                .copied()
                .collect::<Vec<_>>()
        };
        assert_eq!(of("a"), ["a1", "a2", "a3"]);
        assert_eq!(of("b"), ["b1", "b2"]);
        assert_eq!(turns.len(), 0, "idle lines are forgotten");
    }

    #[tokio::test]
    async fn turns_run_one_event_of_a_person_at_a_time_and_others_meanwhile() {
        let turns = Turns::default();
        let (finish, finished) = tokio::sync::oneshot::channel::<()>();
        let first = tokio::spawn(turns.line_up("a", None).run(async move {
            let _ = finished.await;
            Handled::Done
        }));
        let second = tokio::spawn(turns.line_up("a", None).run(async { Handled::Done }));
        // Another person is not held up by the first.
        assert_eq!(
            turns.line_up("b", None).run(async { Handled::Done }).await,
            Handled::Done
        );
        assert!(!second.is_finished());
        finish.send(()).expect("the first waits");
        assert_eq!(first.await.expect("first"), Handled::Done);
        assert_eq!(second.await.expect("second"), Handled::Done);
    }

    #[tokio::test]
    async fn turns_a_persons_events_in_line_behind_one_not_taken_are_not_handled() {
        let turns = Turns::default();
        let seen = Arc::new(Mutex::new(Vec::new()));
        let a1 = record(turns.line_up("a", None), &seen, "a1", Handled::Retry);
        let b1 = record(turns.line_up("b", None), &seen, "b1", Handled::Done);
        let a2 = record(turns.line_up("a", None), &seen, "a2", Handled::Done);
        let results = futures_util::future::join_all([
            Box::pin(a1) as std::pin::Pin<Box<dyn Future<Output = Handled>>>,
            Box::pin(b1),
            Box::pin(a2),
        ])
        .await;
        assert_eq!(results, [Handled::Retry, Handled::Done, Handled::Retry]);
        assert_eq!(*seen.lock().expect("seen"), ["a1", "b1"]);
        // Without a delivery key nothing is waited for: the next is handled.
        let a3 = record(turns.line_up("a", None), &seen, "a3", Handled::Done);
        assert_eq!(a3.await, Handled::Done);
    }

    #[tokio::test(start_paused = true)]
    async fn turns_hold_a_persons_new_events_until_the_one_not_taken_comes_again() {
        let turns = Turns::default();
        let seen = Arc::new(Mutex::new(Vec::new()));
        let failed = record(turns.line_up("a", Some("d1")), &seen, "d1", Handled::Retry);
        assert_eq!(failed.await, Handled::Retry);
        let overtaking = record(turns.line_up("a", Some("d2")), &seen, "d2", Handled::Done);
        assert_eq!(overtaking.await, Handled::Retry, "d2 must not overtake d1");
        assert_eq!(
            record(turns.line_up("b", Some("e1")), &seen, "e1", Handled::Done).await,
            Handled::Done,
            "another person goes on"
        );
        let again = record(turns.line_up("a", Some("d1")), &seen, "d1", Handled::Done);
        assert_eq!(again.await, Handled::Done);
        let after = record(turns.line_up("a", Some("d2")), &seen, "d2", Handled::Done);
        assert_eq!(after.await, Handled::Done);
        assert_eq!(*seen.lock().expect("seen"), ["d1", "e1", "d1", "d2"]);

        // One that never comes again holds the person back for a while only.
        let lost = record(turns.line_up("a", Some("d3")), &seen, "d3", Handled::Retry);
        assert_eq!(lost.await, Handled::Retry);
        tokio::time::advance(HOLD_BACK - Duration::from_secs(1)).await;
        assert_eq!(
            record(turns.line_up("a", Some("d4")), &seen, "d4", Handled::Done).await,
            Handled::Retry
        );
        tokio::time::advance(Duration::from_secs(1)).await;
        assert_eq!(
            record(turns.line_up("a", Some("d4")), &seen, "d4", Handled::Done).await,
            Handled::Done
        );
        assert_eq!(turns.len(), 0);
    }

    #[tokio::test]
    async fn turns_a_line_is_bounded_and_a_place_given_up_is_skipped() {
        let turns = Turns::default();
        let (finish, finished) = tokio::sync::oneshot::channel::<()>();
        let first = tokio::spawn(turns.line_up("a", None).run(async move {
            let _ = finished.await;
            Handled::Done
        }));
        let given_up = turns.line_up("a", None);
        let waiting: Vec<_> = (2..MAX_IN_LINE)
            .map(|_| tokio::spawn(turns.line_up("a", None).run(async { Handled::Done })))
            .collect();
        let one_too_many = turns
            .line_up("a", None)
            .run(async { panic!("handled beyond the bound") });
        assert_eq!(one_too_many.await, Handled::Retry);
        drop(given_up);
        finish.send(()).expect("the first waits");
        assert_eq!(first.await.expect("first"), Handled::Done);
        for task in waiting {
            assert_eq!(task.await.expect("waiting"), Handled::Done);
        }
        assert_eq!(turns.len(), 0);
    }
}

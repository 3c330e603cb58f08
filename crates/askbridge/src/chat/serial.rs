//! Putting what people do in order.
//!
//! - [`PerAsk`]: every change to one ask's or one of its messages' state
//!   (a press, a toggle, a typed answer, own words) runs alone, so two
//!   quick taps cannot both read the same selection and lose one.
//! - [`in_order`]: a batch of events (Telegram's `getUpdates`) is handled
//!   one person at a time per conversation, in the order the platform
//!   sent them, while different people and conversations go on at once.

use std::collections::HashMap;
use std::future::Future;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use futures_util::future::join_all;
use tokio::sync::OwnedMutexGuard;

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

/// Handles `events` with `handle`: the events of one `key` (a person in a
/// conversation) one after another in the order given, different keys at
/// once. A key's events stop at the first whose result `go_on` refuses (a
/// later one must not overtake it). Returns each event's result, in the
/// order given; `None` for those not handled.
pub async fn in_order<E, K, T, F, Fut>(
    events: Vec<E>,
    key: impl Fn(&E) -> K,
    handle: F,
    go_on: impl Fn(&T) -> bool,
) -> Vec<Option<T>>
where
    K: Eq + std::hash::Hash,
    F: Fn(E) -> Fut,
    Fut: Future<Output = T>,
{
    let count = events.len();
    let mut queues: Vec<Vec<(usize, E)>> = Vec::new();
    let mut index: HashMap<K, usize> = HashMap::new();
    for (at, event) in events.into_iter().enumerate() {
        let queue = *index.entry(key(&event)).or_insert_with(|| {
            queues.push(Vec::new());
            queues.len() - 1
        });
        queues[queue].push((at, event));
    }
    let (handle, go_on) = (&handle, &go_on);
    let done = join_all(queues.into_iter().map(|queue| async move {
        let mut done = Vec::with_capacity(queue.len());
        for (at, event) in queue {
            let result = handle(event).await;
            let stop = !go_on(&result);
            done.push((at, result));
            if stop {
                break;
            }
        }
        done
    }))
    .await;
    let mut results: Vec<Option<T>> = (0..count).map(|_| None).collect();
    for (at, result) in done.into_iter().flatten() {
        results[at] = Some(result);
    }
    results
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

    #[tokio::test]
    async fn a_batch_keeps_each_persons_order() {
        let seen = Mutex::new(Vec::new());
        let events = vec![("a", 1), ("b", 1), ("a", 2), ("a", 3), ("b", 2)];
        in_order(
            events,
            |(who, _)| *who,
            |event| {
                let seen = &seen;
                async move {
                    // The first of each person waits a turn, so order
                    // across people is free to change.
                    if event.1 == 1 {
                        tokio::task::yield_now().await;
                    }
                    seen.lock().expect("seen").push(event);
                }
            },
            |()| true,
        )
        .await;
        let seen = seen.into_inner().expect("seen");
        let of = |who| {
            seen.iter()
                .filter(|(w, _)| *w == who)
                .map(|(_, n)| *n)
                .collect::<Vec<_>>()
        };
        assert_eq!(of("a"), [1, 2, 3]);
        assert_eq!(of("b"), [1, 2]);
    }

    #[tokio::test]
    async fn a_persons_events_stop_at_the_first_refused_and_results_keep_their_places() {
        // a2 is not taken: a3 must wait for it, b goes on.
        let events = vec![("a", 1), ("b", 1), ("a", 2), ("a", 3), ("b", 2)];
        let results = in_order(
            events,
            |(who, _)| *who,
            |(who, n)| async move { format!("{who}{n}") },
            |result: &String| result != "a2",
        )
        .await;
        let results: Vec<Option<&str>> = results.iter().map(Option::as_deref).collect();
        assert_eq!(
            results,
            [Some("a1"), Some("b1"), Some("a2"), None, Some("b2")]
        );
    }
}

//! A map by ask id whose entries end: what the MCP side remembers about an
//! ask is of no use once the ask has ended, and an ask ends by its
//! deadline at the latest ([`ASK_LIFETIME`]). Callers forget an entry when
//! they see its ask end; [`Expiring`] drops the rest when they are older
//! than their lifetime, and the oldest first when it holds its most.
//!
//! Time is an argument: nothing here reads a clock.

use std::collections::{BTreeMap, HashMap};
use std::time::{Duration, Instant};

use askbridge_core::model::limits::MAX_TIMEOUT_SECONDS;

/// The longest an ask stays open, and some slack for a daemon whose clock
/// or answer runs late: an entry this old is about an ended ask.
pub(super) const ASK_LIFETIME: Duration = Duration::from_secs(MAX_TIMEOUT_SECONDS as u64 + 10 * 60);

/// Entries by ask id, each ending [`Expiring::lifetime`] after it was first
/// put, and at most [`Expiring::at_most`] of them.
#[derive(Debug)]
pub(super) struct Expiring<V> {
    lifetime: Duration,
    at_most: usize,
    next: u64,
    entries: HashMap<String, Entry<V>>,
    /// Every entry's key by when it was put, oldest first: the same
    /// entries as `entries`.
    order: BTreeMap<u64, (Instant, String)>,
}

#[derive(Debug)]
struct Entry<V> {
    value: V,
    ticket: u64,
}

impl<V> Expiring<V> {
    /// An empty map of entries that end `lifetime` after they are put, and
    /// at most `at_most` of them.
    pub(super) fn new(lifetime: Duration, at_most: usize) -> Expiring<V> {
        Expiring {
            lifetime,
            at_most,
            next: 0,
            entries: HashMap::new(),
            order: BTreeMap::new(),
        }
    }

    /// Puts `value` under `key`. An entry already there takes the value and
    /// keeps its age (an ask's deadline does not move). Returns how many
    /// entries were dropped before their time to make room.
    pub(super) fn put(&mut self, key: &str, value: V, now: Instant) -> usize {
        self.drop_expired(now);
        if let Some(entry) = self.entries.get_mut(key) {
            entry.value = value;
            return 0;
        }
        let ticket = self.next;
        self.next += 1;
        self.entries.insert(key.to_owned(), Entry { value, ticket });
        self.order.insert(ticket, (now, key.to_owned()));
        let mut dropped = 0;
        while self.entries.len() > self.at_most {
            let Some((_, (_, oldest))) = self.order.pop_first() else {
                break;
            };
            self.entries.remove(&oldest);
            dropped += 1;
        }
        dropped
    }

    /// The value under `key`, unless it has ended.
    pub(super) fn get(&mut self, key: &str, now: Instant) -> Option<&V> {
        self.drop_expired(now);
        self.entries.get(key).map(|entry| &entry.value)
    }

    /// Forgets `key`.
    pub(super) fn remove(&mut self, key: &str) {
        if let Some(entry) = self.entries.remove(key) {
            self.order.remove(&entry.ticket);
        }
    }

    /// How many entries there are (ended ones included until the next
    /// call that takes the time).
    #[cfg(test)]
    pub(super) fn len(&self) -> usize {
        self.entries.len()
    }

    fn drop_expired(&mut self, now: Instant) {
        while let Some(entry) = self.order.first_entry() {
            let (put, _) = entry.get();
            if now.saturating_duration_since(*put) < self.lifetime {
                break;
            }
            let (_, key) = entry.remove();
            self.entries.remove(&key);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MINUTE: Duration = Duration::from_secs(60);

    #[test]
    fn an_entry_ends_after_its_lifetime_counted_from_when_it_was_first_put() {
        let start = Instant::now();
        let mut map = Expiring::new(10 * MINUTE, 100);
        map.put("ask_1", 1, start);
        map.put("ask_2", 2, start + 5 * MINUTE);
        // Putting again changes the value, not the age.
        map.put("ask_1", 3, start + 9 * MINUTE);
        assert_eq!(map.get("ask_1", start + 9 * MINUTE), Some(&3));
        assert_eq!(map.get("ask_1", start + 10 * MINUTE), None);
        assert_eq!(map.get("ask_2", start + 10 * MINUTE), Some(&2));
        assert_eq!(map.get("ask_2", start + 15 * MINUTE), None);
        assert_eq!(map.len(), 0);
        assert!(map.order.is_empty());
    }

    #[test]
    fn the_oldest_entries_go_first_when_the_map_is_full() {
        let now = Instant::now();
        let mut map = Expiring::new(10 * MINUTE, 3);
        for (value, key) in (0..).zip(["a", "b", "c"]) {
            assert_eq!(map.put(key, value, now), 0);
        }
        map.remove("b");
        assert_eq!(map.put("d", 3, now), 0);
        assert_eq!(map.put("e", 4, now), 1);
        assert_eq!(map.put("f", 5, now), 1);
        assert_eq!(map.len(), 3);
        assert_eq!(map.order.len(), 3);
        for (key, kept) in [("a", None), ("c", None), ("d", Some(&3)), ("e", Some(&4))] {
            assert_eq!(map.get(key, now), kept, "{key}");
        }
        for _ in 0..1_000 {
            map.put("g", 6, now);
            map.remove("g");
        }
        assert_eq!((map.len(), map.order.len()), (2, 2));
    }
}

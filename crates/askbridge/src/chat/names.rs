//! People's display names, looked up from a platform's API by user id
//! (Slack's `users.info`, Feishu's contact API) when its events carry only
//! ids: one lookup per person at a time, however many of their events
//! arrive at once; a name kept for [`KEEP_FOR`], at most [`KEEP_AT_MOST`]
//! of them; a lookup that failed is not kept, so it is tried again.

use std::collections::HashMap;
use std::future::Future;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use tokio::sync::OnceCell;
use tokio::time::Instant;

/// How long a name is kept (people rename themselves).
pub const KEEP_FOR: Duration = Duration::from_secs(60 * 60);
/// How many names are kept at most.
pub const KEEP_AT_MOST: usize = 4_096;

/// A user's name: `None` where the platform has none for them.
type Cell = Arc<OnceCell<Option<String>>>;

/// The names looked up, by user id, with when each entry was made.
#[derive(Debug, Default)]
pub struct Names(Mutex<HashMap<String, (Cell, Instant)>>);

impl Names {
    /// `user_id`'s name: kept, or looked up with `look_up` (an `Err` is
    /// not kept: the name is `None` this time and looked up again next).
    pub async fn get<F, Fut, E>(&self, user_id: &str, look_up: F) -> Option<String>
    where
        F: FnOnce() -> Fut,
        Fut: Future<Output = Result<Option<String>, E>>,
    {
        let cell = self.cell(user_id, Instant::now());
        cell.get_or_try_init(look_up).await.ok().cloned().flatten()
    }

    /// The cell for `user_id`, made afresh where there is none or it is
    /// old; makes room for it first.
    fn cell(&self, user_id: &str, now: Instant) -> Cell {
        let mut names = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some((cell, made)) = names.get(user_id)
            && now.duration_since(*made) < KEEP_FOR
        {
            return Arc::clone(cell);
        }
        if names.len() >= KEEP_AT_MOST {
            names.retain(|_, (_, made)| now.duration_since(*made) < KEEP_FOR);
        }
        if names.len() >= KEEP_AT_MOST
            && let Some(oldest) = names
                .iter()
                .min_by_key(|(_, (_, made))| *made)
                .map(|(id, _)| id.clone())
        {
            names.remove(&oldest);
        }
        let cell = Cell::default();
        names.insert(user_id.to_owned(), (Arc::clone(&cell), now));
        cell
    }

    /// How many entries are kept.
    #[cfg(test)]
    fn len(&self) -> usize {
        self.0.lock().unwrap_or_else(PoisonError::into_inner).len()
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use super::*;

    #[tokio::test(start_paused = true)]
    async fn names_are_looked_up_once_kept_a_while_and_a_failure_is_tried_again() {
        let names = Names::default();
        let lookups = AtomicUsize::new(0);
        let look_up = |answer: Result<Option<String>, ()>| {
            lookups.fetch_add(1, Ordering::SeqCst);
            async move { answer }
        };
        assert_eq!(names.get("u1", || look_up(Err(()))).await, None);
        assert_eq!(
            names
                .get("u1", || look_up(Ok(Some("Alice".into()))))
                .await
                .as_deref(),
            Some("Alice"),
            "a failed lookup is tried again"
        );
        assert_eq!(
            names
                .get("u1", || look_up(Ok(Some("Bob".into()))))
                .await
                .as_deref(),
            Some("Alice"),
            "a name is kept"
        );
        assert_eq!(lookups.load(Ordering::SeqCst), 2);
        tokio::time::advance(KEEP_FOR).await;
        assert_eq!(
            names
                .get("u1", || look_up(Ok(Some("Alice Liddell".into()))))
                .await
                .as_deref(),
            Some("Alice Liddell"),
            "an old name is looked up again"
        );
    }

    #[tokio::test]
    async fn names_keep_a_bounded_number() {
        let names = Names::default();
        for n in 0..KEEP_AT_MOST + 10 {
            let name = names
                .get(&format!("u{n}"), || async {
                    Ok::<_, ()>(Some(format!("User {n}")))
                })
                .await;
            assert_eq!(name, Some(format!("User {n}")));
        }
        assert_eq!(names.len(), KEEP_AT_MOST);
    }
}

//! The receiving loop ([`MatrixApi::receive`]) against a real homeserver:
//! Synapse from PyPI on 127.0.0.1 (`askbridge_testkit::synapse`), the bot's
//! matrix-sdk client as the daemon runs it, and a person on a real
//! matrix-sdk client whose room keys a test can hold back
//! ([`Person::login_holding_keys`]), so a message reaches the bot before
//! its key does. The handling step is the test's: it sees each batch and
//! says what became of each event.
//!
//! Nothing sleeps: each batch the bot hands over is a message on a channel
//! the test waits on.

#![allow(clippy::unwrap_used)]

use std::sync::{Arc, Mutex};
use std::time::Duration;

use askbridge_core::inbound::Handled;
use askbridge_matrix::parse::{Event, SKIP_REACTION};
use askbridge_matrix::run::{Incoming, Login, MatrixApi};
use askbridge_testkit::synapse::{Person, Synapse};
use tokio::sync::mpsc;

/// Longest wait for the bot to hand over a batch.
const WAIT: Duration = Duration::from_secs(30);

/// One event the bot handed over: its id, and what it was.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Seen {
    event_id: String,
    text: String,
}

fn seen(incoming: &Incoming) -> Seen {
    let text = match &incoming.received.event {
        Event::Text { text, .. } => text.clone(),
        Event::Vote { answers, .. } => format!("vote {answers:?}"),
        Event::Done { target } => format!("done {target}"),
    };
    Seen {
        event_id: incoming.received.event_id.clone(),
        text,
    }
}

/// A homeserver, the bot receiving on it, and Alice (her room keys held
/// back on request) in an encrypted room with the bot.
struct World {
    _synapse: Synapse,
    _dir: tempfile::TempDir,
    alice: Person,
    room: String,
    /// Each batch handed over, as the handling step saw it.
    batches: mpsc::UnboundedReceiver<Vec<Seen>>,
    /// Texts whose handling fails the first time they are handed over.
    fail_once: Arc<Mutex<Vec<String>>>,
    receiving: tokio::task::JoinHandle<()>,
}

impl World {
    async fn new() -> World {
        let synapse = Synapse::start().await;
        let bot = synapse.register("askbridge", "bot-password").await;
        let alice = synapse.register("alice", "alice-password").await;
        let alice = Person::login_holding_keys(&synapse, &alice).await;
        let dir = tempfile::tempdir().unwrap();
        let api = MatrixApi::connect(&Login {
            homeserver: synapse.url(),
            user_id: bot.user_id.clone(),
            access_token: Some(bot.access_token.clone()),
            password: None,
            dir: dir.path().to_owned(),
            encrypt_direct: true,
        })
        .await
        .unwrap();

        let (batches_tx, batches) = mpsc::unbounded_channel();
        let fail_once: Arc<Mutex<Vec<String>>> = Arc::default();
        let receiving = tokio::spawn({
            let api = api.clone();
            let fail_once = Arc::clone(&fail_once);
            async move {
                let joining = api.clone();
                let stopped = api
                    .receive(
                        |batch: Vec<Incoming>| {
                            let seen: Vec<Seen> = batch.iter().map(seen).collect();
                            let handled = seen
                                .iter()
                                .map(|event| {
                                    let mut failing = fail_once.lock().unwrap();
                                    match failing.iter().position(|text| *text == event.text) {
                                        Some(at) => {
                                            failing.remove(at);
                                            Handled::Retry
                                        }
                                        None => Handled::Done,
                                    }
                                })
                                .collect();
                            let _ = batches_tx.send(seen);
                            std::future::ready(handled)
                        },
                        |room: String, _inviter| {
                            let joining = joining.clone();
                            async move { joining.join(&room).await.unwrap() }
                        },
                    )
                    .await;
                panic!("the bot stopped receiving: {stopped}");
            }
        });

        // Made once the bot synced (its invite is read then): what Alice
        // sends from here on comes after the bot's first sync.
        let room = alice.create_room(&[&bot.user_id], true, false).await;
        alice
            .wait_for_membership(&room, &bot.user_id, "join", WAIT)
            .await;
        World {
            _synapse: synapse,
            _dir: dir,
            alice,
            room,
            batches,
            fail_once,
            receiving,
        }
    }

    /// The next batch the bot hands over.
    async fn next_batch(&mut self) -> Vec<Seen> {
        tokio::time::timeout(WAIT, self.batches.recv())
            .await
            .unwrap_or_else(|_| panic!("the bot handed nothing over within {WAIT:?}"))
            .expect("the bot is receiving")
    }

    /// Alice sends `text` while her room key is held back, then a ⏭
    /// reaction to it, which goes unencrypted: once the bot hands the
    /// reaction over, it has read the message before it and found it
    /// undecryptable. Returns the message's id.
    async fn send_before_its_key(&mut self, text: &str) -> String {
        self.alice.hold_room_keys();
        let message = self.alice.send_text(&self.room, text).await;
        let reaction = self.alice.react(&self.room, &message, SKIP_REACTION).await;
        let batch = self.next_batch().await;
        assert_eq!(
            batch.iter().map(|e| &e.event_id).collect::<Vec<_>>(),
            [&reaction],
            "only the reaction: the message waits for its key"
        );
        message
    }
}

impl Drop for World {
    fn drop(&mut self) {
        self.receiving.abort();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_message_whose_room_key_comes_later_is_handed_over_once_it_comes() {
    let mut world = World::new().await;
    let message = world.send_before_its_key("deploy to canary").await;

    assert!(world.alice.release_room_keys().await > 0, "a key was held");
    let batch = world.next_batch().await;
    assert_eq!(
        batch,
        [Seen {
            event_id: message.clone(),
            text: "deploy to canary".to_owned()
        }]
    );

    // Handled: not handed over again.
    let next = world.alice.send_text(&world.room, "and tag it").await;
    let batch = world.next_batch().await;
    assert_eq!(
        batch.iter().map(|e| &e.event_id).collect::<Vec<_>>(),
        [&next]
    );
}

/// The regression: an event decrypted late was taken out of those waiting
/// before it was handled, so when its handling failed and the batch was
/// read again, it was not in it: lost until a restart.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_message_decrypted_late_whose_handling_fails_once_is_handed_over_again() {
    let mut world = World::new().await;
    let message = world.send_before_its_key("deploy to canary").await;
    world
        .fail_once
        .lock()
        .unwrap()
        .push("deploy to canary".to_owned());

    world.alice.release_room_keys().await;
    let expected = [Seen {
        event_id: message.clone(),
        text: "deploy to canary".to_owned(),
    }];
    assert_eq!(world.next_batch().await, expected, "handling fails");
    assert_eq!(world.next_batch().await, expected, "handed over again");

    // Handled this time: not again.
    let next = world.alice.send_text(&world.room, "and tag it").await;
    let batch = world.next_batch().await;
    assert_eq!(
        batch.iter().map(|e| &e.event_id).collect::<Vec<_>>(),
        [&next]
    );
}

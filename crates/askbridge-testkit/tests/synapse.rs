//! Self-tests of the Synapse fixture: a real Synapse, real matrix-sdk
//! clients. One Synapse serves every scenario (starting one takes a couple
//! of seconds), so they run in one test, one after the other.

use std::time::{Duration, Instant};

use askbridge_testkit::synapse::{Person, Synapse};
use serde_json::json;

const WAIT: Duration = Duration::from_secs(20);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn synapse_fixture() {
    let began = Instant::now();
    let synapse = Synapse::start().await;

    let step = Instant::now();
    registration_by_shared_secret(&synapse).await;
    eprintln!("registration: {:.2?}", step.elapsed());

    let step = Instant::now();
    poll_and_vote_in_an_encrypted_room(&synapse).await;
    eprintln!("encrypted room, poll and vote: {:.2?}", step.elapsed());

    let step = Instant::now();
    text_and_thread_reply_in_a_plain_room(&synapse).await;
    eprintln!(
        "plain room, text, thread reply, reply, reaction: {:.2?}",
        step.elapsed()
    );

    eprintln!("all: {:.2?}", began.elapsed());
}

/// Registering gives a working access token, without a Python process per
/// user.
async fn registration_by_shared_secret(synapse: &Synapse) {
    let began = Instant::now();
    let carol = synapse.register("carol", "carol-password").await;
    eprintln!("one registration: {:.2?}", began.elapsed());
    assert_eq!(carol.user_id, "@carol:localhost");
    assert_eq!(carol.user_id, synapse.user_id("carol"));
    assert!(!carol.device_id.is_empty());

    let whoami: serde_json::Value = reqwest::Client::new()
        .get(format!(
            "{}/_matrix/client/v3/account/whoami",
            synapse.url()
        ))
        .header("authorization", format!("Bearer {}", carol.access_token))
        .send()
        .await
        .expect("ask whoami")
        .json()
        .await
        .expect("read whoami");
    assert_eq!(whoami["user_id"], "@carol:localhost");
    assert_eq!(whoami["device_id"], carol.device_id.as_str());
}

async fn poll_and_vote_in_an_encrypted_room(synapse: &Synapse) {
    let began = Instant::now();
    let alice = Person::login(synapse, &synapse.register("alice", "alice-password").await).await;
    let bob = Person::login(synapse, &synapse.register("bob", "bob-password").await).await;
    eprintln!("two registrations and logins: {:.2?}", began.elapsed());

    let room = alice.create_room(&[bob.user_id()], true, false).await;
    assert_eq!(bob.wait_for_invite(WAIT).await, room);
    bob.accept_invite(&room).await;

    let poll = alice
        .send_raw(
            &room,
            "org.matrix.msc3381.poll.start",
            json!({
                "org.matrix.msc3381.poll.start": {
                    "question": { "org.matrix.msc1767.text": "Deploy?" },
                    "kind": "org.matrix.msc3381.poll.disclosed",
                    "max_selections": 1,
                    "answers": [{ "id": "a1", "org.matrix.msc1767.text": "Staging" }],
                },
                "org.matrix.msc1767.text": "Deploy?\n1. Staging",
            }),
        )
        .await;

    let seen = bob.wait_for_poll(&room, WAIT).await;
    assert_eq!(seen["event_id"], poll.as_str());
    assert_eq!(seen["sender"], alice.user_id());
    assert_eq!(
        seen["content"]["org.matrix.msc3381.poll.start"]["answers"][0]["id"],
        "a1"
    );
    assert_eq!(bob.arrived_encrypted(&room, &poll), Some(true));

    let vote = bob.vote(&room, &poll, &["a1"]).await;
    let seen = alice
        .wait_for_event(&room, WAIT, |event| event["event_id"] == vote.as_str())
        .await;
    assert_eq!(seen["type"], "org.matrix.msc3381.poll.response");
    assert_eq!(seen["sender"], bob.user_id());
    assert_eq!(
        seen["content"]["org.matrix.msc3381.poll.response"]["answers"],
        json!(["a1"])
    );
    assert_eq!(seen["content"]["m.relates_to"]["event_id"], poll.as_str());
    assert_eq!(alice.arrived_encrypted(&room, &vote), Some(true));

    let stable = bob.vote_stable(&room, &poll, &["a1"]).await;
    let seen = alice
        .wait_for_event(&room, WAIT, |event| event["event_id"] == stable.as_str())
        .await;
    assert_eq!(seen["type"], "m.poll.response");
    assert_eq!(seen["content"]["m.selections"], json!(["a1"]));
}

async fn text_and_thread_reply_in_a_plain_room(synapse: &Synapse) {
    let dave = Person::login(synapse, &synapse.register("dave", "dave-password").await).await;
    let erin = Person::login(synapse, &synapse.register("erin", "erin-password").await).await;

    let room = dave.create_room(&[erin.user_id()], false, true).await;
    assert_eq!(erin.wait_for_invite(WAIT).await, room);
    erin.accept_invite(&room).await;
    dave.wait_for_membership(&room, erin.user_id(), "join", WAIT)
        .await;

    let root = dave
        .send_text(&room, "Which environment?\nAnswer in the thread.")
        .await;
    let seen = erin.wait_for_text(&room, WAIT, "Which environment?").await;
    assert_eq!(seen["event_id"], root.as_str());
    assert_eq!(erin.arrived_encrypted(&room, &root), Some(false));

    let reply = erin.send_thread_reply(&room, &root, "staging").await;
    let seen = dave.wait_for_text(&room, WAIT, "staging").await;
    assert_eq!(seen["event_id"], reply.as_str());
    let relation = &seen["content"]["m.relates_to"];
    assert_eq!(relation["rel_type"], "m.thread");
    assert_eq!(relation["event_id"], root.as_str());
    assert_eq!(relation["is_falling_back"], true);
    assert_eq!(relation["m.in_reply_to"]["event_id"], root.as_str());

    let rich = erin.send_reply(&room, &root, "production, actually").await;
    let seen = dave
        .wait_for_event(&room, WAIT, |event| event["event_id"] == rich.as_str())
        .await;
    assert_eq!(
        seen["content"]["body"],
        "> <@dave:localhost> Which environment?\n> Answer in the thread.\n\nproduction, actually"
    );
    assert_eq!(
        seen["content"]["m.relates_to"]["m.in_reply_to"]["event_id"],
        root.as_str()
    );

    let reaction = erin.react(&room, &root, "👍").await;
    let seen = dave
        .wait_for_event(&room, WAIT, |event| event["event_id"] == reaction.as_str())
        .await;
    assert_eq!(seen["content"]["m.relates_to"]["key"], "👍");

    // Every event of the room is kept, the earlier ones included (Dave has
    // seen each; Erin's own may still be on their way back to her).
    let events = dave.events(&room);
    for id in [&root, &reply, &rich, &reaction] {
        assert!(
            events.iter().any(|event| event["event_id"] == id.as_str()),
            "{id} is missing from {events:#?}"
        );
    }

    erin.leave(&room).await;
    dave.wait_for_membership(&room, erin.user_id(), "leave", WAIT)
        .await;
}

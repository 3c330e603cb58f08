//! The Matrix channel end to end against a real homeserver: Synapse from
//! PyPI on 127.0.0.1 (`askbridge_testkit::synapse`), the real daemon with
//! matrix-sdk, and people driven by real matrix-sdk clients (end-to-end
//! encryption included). An agent asks over HTTP; people vote in polls,
//! react and type replies; the agent gets the outcome.
//!
//! Each test has its own Synapse (a fresh homeserver state). Nothing
//! sleeps: the people's `wait_for_*` wake on each synced event, the
//! daemon's log is waited on, and the agent's side long-polls.

#![allow(clippy::unwrap_used)]

mod daemon;
mod db;

use std::time::Duration;

use askbridge_testkit::synapse::{Account, Person, Synapse};
use daemon::{Api, Builder, Daemon, create, outcome, status};
use serde_json::{Value, json};

/// How long a person waits for the bot's events.
const WAIT: Duration = Duration::from_secs(30);

/// The bot account's password.
const BOT_PASSWORD: &str = "bot-password";

/// A homeserver with the bot and two people on it.
struct World {
    synapse: Synapse,
    bot: Account,
    alice: Person,
    bob: Person,
}

impl World {
    async fn new() -> World {
        World::start(false).await
    }

    /// A world whose Alice can hold back her room keys
    /// ([`Person::hold_room_keys`]).
    async fn holding_alices_keys() -> World {
        World::start(true).await
    }

    async fn start(alice_holds_keys: bool) -> World {
        let synapse = Synapse::start().await;
        let bot = synapse.register("askbridge", BOT_PASSWORD).await;
        let alice = synapse.register("alice", "alice-password").await;
        let bob = synapse.register("bob", "bob-password").await;
        let login_alice = async {
            match alice_holds_keys {
                true => Person::login_holding_keys(&synapse, &alice).await,
                false => Person::login(&synapse, &alice).await,
            }
        };
        let (alice, bob) = tokio::join!(login_alice, Person::login(&synapse, &bob));
        World {
            synapse,
            bot,
            alice,
            bob,
        }
    }

    /// A daemon logged in as the bot with its access token.
    fn daemon(&self) -> Builder {
        self.as_bot(Daemon::builder().env("MATRIX_ACCESS_TOKEN", &self.bot.access_token))
    }

    /// A daemon that logs in as the bot with its password, so on a device
    /// of its own.
    fn daemon_by_password(&self) -> Builder {
        self.as_bot(Daemon::builder().env("MATRIX_PASSWORD", BOT_PASSWORD))
    }

    fn as_bot(&self, builder: Builder) -> Builder {
        builder
            .env("ASKBRIDGE_MATRIX_HOMESERVER", self.synapse.url())
            .env("ASKBRIDGE_MATRIX_USER_ID", &self.bot.user_id)
            .env(
                "ASKBRIDGE_LOG",
                "info,matrix_sdk=warn,matrix_sdk_base=warn,matrix_sdk_crypto=error",
            )
    }

    /// Starts the daemon and waits for its first sync (the bot's keys are
    /// then on the homeserver, so people can encrypt for it).
    async fn started(&self, builder: Builder) -> Daemon {
        let daemon = builder.start();
        tokio::task::block_in_place(|| {
            daemon.wait_for_log("Matrix sync started", WAIT);
        });
        daemon
    }

    /// A room Alice made, with Bob and the bot in it (the bot joined by
    /// itself: `auto_join`).
    async fn room(&self, encrypted: bool) -> String {
        let bot = self.bot.user_id.as_str();
        let room = self
            .alice
            .create_room(&[bot, self.bob.user_id()], encrypted, false)
            .await;
        self.bob.accept_invite(&room).await;
        self.alice
            .wait_for_membership(&room, bot, "join", WAIT)
            .await;
        self.alice
            .wait_for_membership(&room, self.bob.user_id(), "join", WAIT)
            .await;
        room
    }
}

/// The deploy question, for Alice only.
fn deploy_ask(room: &str, alice: &Person) -> Value {
    json!({
        "to": format!("matrix:{room}@{}", alice.user_id()),
        "questions": [{
            "id": "env", "header": "Deploy", "question": "Where should I deploy?",
            "options": ["Staging (Recommended)", "Production", "Canary"]
        }]
    })
}

/// Two questions: a numbered text prompt on Matrix.
fn release_ask(room: &str) -> Value {
    json!({
        "to": format!("matrix:{room}"),
        "title": "Release 2.4",
        "questions": [
            {"id": "env", "header": "Deploy", "question": "Where?", "options": ["Staging", "Production"]},
            {"id": "notify", "header": "Notify", "question": "Who should be told?",
             "options": ["Team", "On-call", "Nobody"], "multiSelect": true}
        ]
    })
}

fn id_of(event: &Value) -> String {
    event["event_id"].as_str().unwrap().to_owned()
}

/// The id of the poll answer labelled `label`.
fn answer(poll: &Value, label: &str) -> String {
    let answers = poll["content"]["org.matrix.msc3381.poll.start"]["answers"]
        .as_array()
        .unwrap();
    answers
        .iter()
        .find(|answer| answer["org.matrix.msc1767.text"] == label)
        .unwrap_or_else(|| panic!("no answer {label:?} in {answers:?}"))["id"]
        .as_str()
        .unwrap()
        .to_owned()
}

fn is_poll(event: &Value) -> bool {
    event["type"] == "org.matrix.msc3381.poll.start"
}

/// The first poll in the room that is none of `before`.
async fn next_poll(person: &Person, room: &str, before: &[&Value]) -> Value {
    person
        .wait_for_event(room, WAIT, |event| {
            is_poll(event)
                && !before
                    .iter()
                    .any(|seen| event["event_id"] == seen["event_id"])
        })
        .await
}

/// How many polls `person` has seen in the room.
fn polls_in(person: &Person, room: &str) -> usize {
    person
        .events(room)
        .iter()
        .filter(|event| is_poll(event))
        .count()
}

/// The answer of a one-question ask.
fn only_answer(done: &Value) -> Value {
    let answers = done["answers"].as_object().unwrap();
    assert_eq!(answers.len(), 1, "{done}");
    answers.values().next().unwrap().clone()
}

/// The text the poll ended with.
async fn poll_end(person: &Person, room: &str, poll: &Value) -> String {
    let end = person.wait_for_poll_end(room, &id_of(poll), WAIT).await;
    end["content"]["org.matrix.msc1767.text"]
        .as_str()
        .unwrap()
        .to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn matrix_poll_vote_by_the_addressed_person_answers_and_anyone_elses_changes_nothing() {
    let world = World::new().await;
    let daemon = world.started(world.daemon()).await;
    let room = world.room(false).await;
    let id = create(&daemon, &deploy_ask(&room, &world.alice)).await;

    let poll = world.alice.wait_for_poll(&room, WAIT).await;
    assert_eq!(poll["sender"], world.bot.user_id.as_str());
    let start = &poll["content"]["org.matrix.msc3381.poll.start"];
    assert_eq!(start["max_selections"], 1);
    assert_eq!(
        start["question"]["org.matrix.msc1767.text"],
        "Deploy — Where should I deploy?"
    );
    let fallback = poll["content"]["org.matrix.msc1767.text"].as_str().unwrap();
    assert!(fallback.contains("2. Production"), "{fallback}");

    // Bob's vote counts for nothing; the bot says so in the poll's thread.
    world
        .bob
        .vote(&room, &id_of(&poll), &[&answer(&poll, "Canary")])
        .await;
    let notice = world
        .bob
        .wait_for_text(&room, WAIT, "This question is for")
        .await;
    assert_eq!(notice["content"]["m.relates_to"]["rel_type"], "m.thread");
    assert_eq!(notice["content"]["m.relates_to"]["event_id"], id_of(&poll));
    assert_eq!(status(&daemon, &id).await["status"], "pending");

    // Alice's vote, in the stable form, answers.
    world
        .alice
        .vote_stable(&room, &id_of(&poll), &[&answer(&poll, "Production")])
        .await;
    let done = outcome(&daemon, &id).await;
    assert_eq!(done["answers"], json!({"env": ["Production"]}));
    assert_eq!(done["answeredBy"]["userId"], world.alice.user_id());
    let ended = poll_end(&world.alice, &room, &poll).await;
    assert!(ended.contains("Production"), "{ended}");
    assert!(ended.contains("alice"), "{ended}");
}

/// A log of 19,000 Chinese characters, sent as `body` and again as
/// `formatted_body`, is 114 KB: split so each event is within Matrix's
/// 65,536 bytes, and the question still reaches the room after it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn matrix_a_huge_chinese_context_fits_each_event_and_the_question_still_arrives() {
    let world = World::new().await;
    let daemon = world.started(world.daemon()).await;
    let room = world.room(false).await;
    let log = format!("{}\n", "部署日志：服务已启动，正在检查数据库连接".repeat(5)).repeat(190);
    assert!(log.chars().count() >= 19_000);
    let mut ask = deploy_ask(&room, &world.alice);
    ask["context"] = json!({"text": log, "language": "log"});
    let id = create(&daemon, &ask).await;

    let poll = world.alice.wait_for_poll(&room, WAIT).await;
    let blocks: Vec<Value> = world
        .alice
        .events(&room)
        .into_iter()
        .filter(|event| {
            event["sender"] == world.bot.user_id.as_str()
                && event["content"]["format"] == "org.matrix.custom.html"
        })
        .collect();
    assert!(
        (2..=3).contains(&blocks.len()),
        "{} blocks before the question",
        blocks.len()
    );
    for event in blocks.iter().chain([&poll]) {
        let size = event.to_string().len();
        assert!(size <= 65_536, "an event of {size} bytes");
    }
    let first = blocks[0]["content"]["body"].as_str().unwrap();
    assert!(log.starts_with(first), "the head comes first");
    assert_eq!(status(&daemon, &id).await["status"], "pending");
}

/// `/askbridge` in a room is answered with the exact targets for it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn matrix_askbridge_command_tells_the_targets_for_this_room() {
    let world = World::new().await;
    let _daemon = world.started(world.daemon()).await;
    let room = world.room(false).await;
    world.alice.send_text(&room, "/askbridge").await;
    let answer = world.alice.wait_for_text(&room, WAIT, "To ask here").await;
    let alice = world.alice.user_id();
    assert_eq!(
        answer["content"]["body"],
        format!(
            "To ask here, use matrix:{room}@{alice} (only you may answer) or \
             matrix:{room} (anyone here may answer)."
        )
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn matrix_typed_replies_by_number_in_the_thread_and_by_label_as_a_reply() {
    let world = World::new().await;
    let daemon = world.started(world.daemon()).await;
    let room = world.room(false).await;

    let first = create(&daemon, &deploy_ask(&room, &world.alice)).await;
    let poll = world.alice.wait_for_poll(&room, WAIT).await;
    world
        .alice
        .send_thread_reply(&room, &id_of(&poll), "2")
        .await;
    let done = outcome(&daemon, &first).await;
    assert_eq!(done["answers"], json!({"env": ["Production"]}));
    assert_eq!(done["details"][0]["via"], "text");

    let second = create(&daemon, &deploy_ask(&room, &world.alice)).await;
    let poll = next_poll(&world.alice, &room, &[&poll]).await;
    world
        .alice
        .send_reply(&room, &id_of(&poll), "askbridge: canary")
        .await;
    let done = outcome(&daemon, &second).await;
    assert_eq!(done["answers"], json!({"env": ["Canary"]}));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn matrix_multi_question_prompt_keeps_partial_answers_and_asks_the_rest() {
    let world = World::new().await;
    let daemon = world.started(world.daemon()).await;
    let room = world.room(false).await;
    let id = create(&daemon, &release_ask(&room)).await;

    let prompt = world.alice.wait_for_text(&room, WAIT, "Q2 Notify").await;
    assert_eq!(prompt["sender"], world.bot.user_id.as_str());
    world
        .alice
        .send_reply(&room, &id_of(&prompt), "Q1: 2")
        .await;
    let reask = world
        .alice
        .wait_for_event(&room, WAIT, |event| {
            event["sender"] == world.bot.user_id.as_str()
                && event["content"]["m.relates_to"]["m.in_reply_to"].is_object()
        })
        .await;
    let text = reask["content"]["body"].as_str().unwrap();
    assert!(text.contains("Notify"), "{text}");
    assert_eq!(status(&daemon, &id).await["status"], "pending");

    world.alice.send_text(&room, "1, 2").await;
    let done = outcome(&daemon, &id).await;
    assert_eq!(
        done["answers"],
        json!({"env": ["Production"], "notify": ["Team", "On-call"]})
    );
    let edit = world
        .alice
        .wait_for_edit(&room, &id_of(&prompt), WAIT)
        .await;
    let shown = edit["content"]["m.new_content"]["body"].as_str().unwrap();
    assert!(
        shown.contains("Q2 Notify") && shown.contains("✅"),
        "{shown}"
    );
}

/// Rich mode: a poll per question, the next posted when one is answered;
/// a multi-select poll takes several votes, the latest vote is the
/// selection, and a ✅ reaction sends it. Bob's votes change nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn matrix_rich_mode_is_a_poll_per_question_and_a_check_sends_the_votes() {
    let world = World::new().await;
    let daemon = world
        .started(world.daemon().env("ASKBRIDGE_MATRIX_RENDER", "rich"))
        .await;
    let room = world.room(false).await;
    let mut ask = release_ask(&room);
    ask["to"] = json!(format!("matrix:{room}@{}", world.alice.user_id()));
    let id = create(&daemon, &ask).await;

    let first = world.alice.wait_for_poll(&room, WAIT).await;
    let start = &first["content"]["org.matrix.msc3381.poll.start"];
    assert_eq!(start["max_selections"], 1);
    let question = start["question"]["org.matrix.msc1767.text"]
        .as_str()
        .unwrap();
    assert!(
        question.contains("1/2") && question.contains("Where?"),
        "{question}"
    );
    world
        .alice
        .vote(&room, &id_of(&first), &[&answer(&first, "Production")])
        .await;

    let second = next_poll(&world.alice, &room, &[&first]).await;
    let ended = poll_end(&world.alice, &room, &first).await;
    assert!(ended.contains("Answer submitted"), "{ended}");
    let start = &second["content"]["org.matrix.msc3381.poll.start"];
    assert_eq!(start["max_selections"], 3);
    let question = start["question"]["org.matrix.msc1767.text"]
        .as_str()
        .unwrap();
    assert!(
        question.contains("2/2") && question.contains("react ✅"),
        "{question}"
    );
    let (team, on_call, nobody) = (
        answer(&second, "Team"),
        answer(&second, "On-call"),
        answer(&second, "Nobody"),
    );
    let poll = id_of(&second);
    world.bob.vote(&room, &poll, &[&nobody]).await;
    world
        .bob
        .wait_for_text(&room, WAIT, "This question is for")
        .await;
    // Alice changes her mind: her latest vote is her choice.
    world.alice.vote(&room, &poll, &[&team, &nobody]).await;
    world.alice.vote(&room, &poll, &[&team, &on_call]).await;
    assert_eq!(status(&daemon, &id).await["status"], "pending");
    world.alice.react(&room, &poll, "✅").await;

    let done = outcome(&daemon, &id).await;
    assert_eq!(
        done["answers"],
        json!({"env": ["Production"], "notify": ["Team", "On-call"]})
    );
    assert_eq!(done["answeredBy"]["userId"], world.alice.user_id());
    let ended = poll_end(&world.alice, &room, &second).await;
    assert!(ended.contains("✅"), "{ended}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn matrix_skip_by_reaction_and_own_words_in_the_polls_thread() {
    let world = World::new().await;
    let daemon = world.started(world.daemon()).await;
    let room = world.room(false).await;

    let first = create(&daemon, &deploy_ask(&room, &world.alice)).await;
    let poll = world.alice.wait_for_poll(&room, WAIT).await;
    world.alice.react(&room, &id_of(&poll), "⏭").await;
    let done = outcome(&daemon, &first).await;
    assert_eq!(done["reason"], "skipped");
    let ended = poll_end(&world.alice, &room, &poll).await;
    assert!(ended.contains("Skipped"), "{ended}");

    let second = create(&daemon, &deploy_ask(&room, &world.alice)).await;
    let poll = next_poll(&world.alice, &room, &[&poll]).await;
    world
        .alice
        .vote(&room, &id_of(&poll), &[&answer(&poll, "Other…")])
        .await;
    let prompt = world
        .alice
        .wait_for_event(&room, WAIT, |event| {
            event["sender"] == world.bot.user_id.as_str()
                && event["content"]["m.relates_to"]["rel_type"] == "m.thread"
                && event["content"]["m.relates_to"]["event_id"] == poll["event_id"]
        })
        .await;
    let asked = prompt["content"]["body"].as_str().unwrap();
    assert!(asked.contains("Where should I deploy?"), "{asked}");
    world
        .alice
        .send_thread_reply(&room, &id_of(&poll), "blue-green, please")
        .await;
    let done = outcome(&daemon, &second).await;
    assert_eq!(done["answers"], json!({"env": ["blue-green, please"]}));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn matrix_direct_chat_is_created_encrypted_and_answered_there() {
    let world = World::new().await;
    let daemon = world.started(world.daemon()).await;
    let id = create(
        &daemon,
        &json!({
            "to": format!("matrix:user/{}", world.alice.user_id()),
            "questions": [{"question": "Ship it?", "type": "confirm"}]
        }),
    )
    .await;

    let room = world.alice.wait_for_invite(WAIT).await;
    world.alice.accept_invite(&room).await;
    let poll = world.alice.wait_for_poll(&room, WAIT).await;
    assert_eq!(
        world.alice.arrived_encrypted(&room, &id_of(&poll)),
        Some(true),
        "a direct chat is encrypted"
    );
    world
        .alice
        .vote(&room, &id_of(&poll), &[&answer(&poll, "Yes")])
        .await;
    let done = outcome(&daemon, &id).await;
    assert_eq!(only_answer(&done), json!(["yes"]), "{done}");

    // The next ask to Alice reuses the direct chat.
    let again = create(
        &daemon,
        &json!({
            "to": format!("matrix:user/{}", world.alice.user_id()),
            "questions": [{"question": "And tag it?", "type": "confirm"}]
        }),
    )
    .await;
    world
        .alice
        .wait_for_event(&room, WAIT, |event| {
            event["content"]["org.matrix.msc1767.text"]
                .as_str()
                .is_some_and(|text| text.starts_with("And tag it?"))
        })
        .await;
    world.alice.send_text(&room, "no").await;
    assert_eq!(only_answer(&outcome(&daemon, &again).await), json!(["no"]));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn matrix_encrypted_room_is_read_and_answered_in() {
    let world = World::new().await;
    let daemon = world.started(world.daemon()).await;
    let room = world.room(true).await;
    let id = create(&daemon, &release_ask(&room)).await;

    let prompt = world.alice.wait_for_text(&room, WAIT, "Q2 Notify").await;
    assert_eq!(
        world.alice.arrived_encrypted(&room, &id_of(&prompt)),
        Some(true)
    );
    world
        .alice
        .send_reply(&room, &id_of(&prompt), "Q1 1; Q2 3")
        .await;
    let done = outcome(&daemon, &id).await;
    assert_eq!(
        done["answers"],
        json!({"env": ["Staging"], "notify": ["Nobody"]})
    );
}

/// A reply whose room key reaches the bot after the reply does (Alice's
/// client sends the key, the homeserver gets it later) answers once the
/// key comes: the bot keeps the event and decrypts it then.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn matrix_a_reply_whose_room_key_comes_later_still_answers() {
    let world = World::holding_alices_keys().await;
    let daemon = world.started(world.daemon()).await;
    let room = world.room(true).await;
    let id = create(&daemon, &release_ask(&room)).await;
    let prompt = world.alice.wait_for_text(&room, WAIT, "Q2 Notify").await;

    world.alice.hold_room_keys();
    let reply = world
        .alice
        .send_reply(&room, &id_of(&prompt), "Q1 2; Q2 1")
        .await;
    tokio::task::block_in_place(|| {
        daemon.wait_for_log(
            &format!("a Matrix event waits for its room key room={room} event={reply}"),
            WAIT,
        );
    });
    assert_eq!(status(&daemon, &id).await["status"], "pending");

    assert!(world.alice.release_room_keys().await > 0, "a key was held");
    let done = outcome(&daemon, &id).await;
    assert_eq!(
        done["answers"],
        json!({"env": ["Production"], "notify": ["Team"]})
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn matrix_vote_after_kill_and_restart_still_answers() {
    let world = World::new().await;
    let mut daemon = world.started(world.daemon()).await;
    let room = world.room(true).await;
    let id = create(&daemon, &deploy_ask(&room, &world.alice)).await;
    let poll = world.alice.wait_for_poll(&room, WAIT).await;

    daemon.kill();
    world
        .alice
        .vote(&room, &id_of(&poll), &[&answer(&poll, "Canary")])
        .await;
    daemon.restart();
    let done = outcome(&daemon, &id).await;
    assert_eq!(done["answers"], json!({"env": ["Canary"]}));
    // The poll's end is the last the ask's outbox posts: a second post of
    // the poll (a delivery offered again after the restart) comes before.
    poll_end(&world.alice, &room, &poll).await;
    assert_eq!(polls_in(&world.alice, &room), 1, "not posted again");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn matrix_a_room_the_bot_left_ends_the_ask_as_delivery_failed() {
    let world = World::new().await;
    let daemon = world.started(world.daemon()).await;
    let room = world.room(false).await;
    let bot = Person::login(&world.synapse, &world.bot).await;
    bot.leave(&room).await;
    world
        .alice
        .wait_for_membership(&room, &world.bot.user_id, "leave", WAIT)
        .await;

    let id = create(&daemon, &deploy_ask(&room, &world.alice)).await;
    let done = outcome(&daemon, &id).await;
    assert_eq!(done["reason"], "delivery_failed", "{done}");
    let failure = done["failure"].as_str().unwrap_or_default();
    assert!(failure.contains("M_FORBIDDEN"), "{done}");
}

/// Several instances on one Postgres database, each on a device of its
/// own: only the instance that syncs posts, whichever instance an ask was
/// created on, and it ends the poll of an ask that ended on another; when
/// it dies, the next one takes the sync and the posting over.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn matrix_with_several_instances_the_one_that_syncs_posts_every_ask() {
    let world = World::new().await;
    let db = db::Scratch::postgres().await;
    let instance = |name: &str| {
        world
            .daemon_by_password()
            .env("ASKBRIDGE_DATABASE_URL", db.url())
            .env("ASKBRIDGE_CLUSTER_INSTANCE", name)
            .env("ASKBRIDGE_CLUSTER_LEASE_SECONDS", "2")
    };
    let mut a = world.started(instance("a")).await;
    let b = instance("b").start();
    let room = world.room(false).await;

    // Created on b, which does not sync: a posts it, and the vote answers.
    let first = create(&b, &deploy_ask(&room, &world.alice)).await;
    let poll = world.alice.wait_for_poll(&room, WAIT).await;
    world
        .alice
        .vote(&room, &id_of(&poll), &[&answer(&poll, "Production")])
        .await;
    let done = outcome(&b, &first).await;
    assert_eq!(done["answers"], json!({"env": ["Production"]}));
    let ended = poll_end(&world.alice, &room, &poll).await;
    assert!(ended.contains("Production"), "{ended}");

    // Cancelled on b: a ends its poll.
    let second = create(&b, &deploy_ask(&room, &world.alice)).await;
    let cancelled = next_poll(&world.alice, &room, &[&poll]).await;
    Api::of(&b).cancel(&second).await;
    assert_eq!(outcome(&b, &second).await["reason"], "cancelled");
    poll_end(&world.alice, &room, &cancelled).await;

    // a dies: b takes the sync over and posts what is asked meanwhile.
    a.kill();
    let third = create(&b, &deploy_ask(&room, &world.alice)).await;
    let poll = next_poll(&world.alice, &room, &[&poll, &cancelled]).await;
    world
        .alice
        .send_thread_reply(&room, &id_of(&poll), "3")
        .await;
    let done = outcome(&b, &third).await;
    assert_eq!(done["answers"], json!({"env": ["Canary"]}));
    // Counted once every post is over: a is gone, and the third poll's end
    // is the last b posts (its outbox posts in order).
    poll_end(&world.alice, &room, &poll).await;
    assert_eq!(polls_in(&world.alice, &room), 3, "each ask posted once");
}

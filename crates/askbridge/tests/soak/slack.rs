//! Slack's side of a soak run: the fake Web API and Socket Mode, questions
//! in public channels, typed replies in each question's thread.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Duration;

use askbridge::bridge::Bridge;
use askbridge::channels::slack::Slack;
use askbridge::config::{Secret, SlackConfig, SlackMode};
use askbridge_core::render::{Locale, Mode};
use askbridge_testkit::faults::{FaultCounts, Faults};
use askbridge_testkit::slack::{Channel, FakeSlack, IncomingMessage, User};
use serde_json::Value;

use super::harness::{CHOSEN, Platform, Post, Running, ask_number};

const ALICE: &str = "U0ALICE";

fn channel(place: usize) -> String {
    format!("C0SOAK{place:03}")
}

pub struct SlackSoak {
    fake: FakeSlack,
    alice: User,
    socket: Running,
    /// The envelope of each press and typed reply.
    envelopes: Mutex<Vec<String>>,
}

impl SlackSoak {
    pub async fn start(faults: Faults, places: usize) -> SlackSoak {
        let fake = FakeSlack::builder()
            .faults(faults)
            .wait_timeout(Duration::from_secs(300))
            .start()
            .await;
        for place in 0..places {
            fake.add_channel(&Channel::public(channel(place), format!("c{place}")));
        }
        let alice = User::new(ALICE, "alice");
        fake.add_user(&alice);
        SlackSoak {
            fake,
            alice,
            socket: Running::default(),
            envelopes: Mutex::default(),
        }
    }
}

/// The `action_id` of the button labelled `label`.
fn button(blocks: &Value, label: &str) -> Option<String> {
    match blocks {
        Value::Object(object) => {
            if object.get("type").and_then(Value::as_str) == Some("button")
                && object["text"]["text"]
                    .as_str()
                    .is_some_and(|text| text.contains(label))
            {
                return object["action_id"].as_str().map(str::to_owned);
            }
            object.values().find_map(|child| button(child, label))
        }
        Value::Array(list) => list.iter().find_map(|child| button(child, label)),
        _ => None,
    }
}

impl Platform for SlackSoak {
    fn name(&self) -> &'static str {
        "slack"
    }

    async fn connect(&mut self, bridge: &Bridge) {
        let slack = Slack::new(
            bridge,
            &SlackConfig {
                token: Secret::new(self.fake.bot_token()),
                api_url: Some(self.fake.api_url()),
                mode: SlackMode::Socket {
                    app_token: Secret::new(self.fake.app_token()),
                },
                render: Mode::Buttons,
                locale: Locale::En,
                allowed_users: vec![],
            },
        )
        .expect("Slack channel");
        self.socket = Running::new(slack.start());
        self.fake.wait_for_connections(1).await;
    }

    fn target(&self, place: usize) -> String {
        format!("slack:{}", channel(place))
    }

    async fn posts_beyond(&self, seen: usize) -> Vec<Post> {
        self.fake
            .wait_for("more questions posted", |state| {
                let posts: Vec<Post> = state
                    .bot_messages()
                    .into_iter()
                    .filter(|message| message.thread_ts.is_none())
                    .filter_map(|message| {
                        Some(Post {
                            ask: ask_number(&message.text)
                                .or_else(|| ask_number(&message.blocks.to_string()))?,
                            place: message.channel.clone(),
                            message: message.ts.clone(),
                        })
                    })
                    .collect();
                (posts.len() > seen).then_some(posts)
            })
            .await
    }

    async fn press(&self, post: &Post) {
        let blocks = self
            .fake
            .message(&post.place, &post.message)
            .expect("the posted question")
            .blocks;
        let action = button(&blocks, CHOSEN).expect("a button for the chosen option");
        let record = self
            .fake
            .press_button(&self.alice, &post.place, &post.message, &action);
        if let Some(envelope) = record.envelope_id {
            self.envelopes.lock().expect("envelopes").push(envelope);
        }
    }

    async fn type_reply(&self, post: &Post) {
        let injected = self
            .fake
            .inject_message(IncomingMessage::new(&post.place, ALICE, "2").in_thread(&post.message));
        self.envelopes
            .lock()
            .expect("envelopes")
            .push(injected.envelope_id);
    }

    async fn closings(&self, posts: &[Post]) -> HashMap<Post, usize> {
        let by_message: HashMap<(&str, &str), &Post> = posts
            .iter()
            .map(|post| ((post.place.as_str(), post.message.as_str()), post))
            .collect();
        self.fake
            .wait_for("every question closed", |state| {
                let mut closings: HashMap<Post, usize> = HashMap::new();
                for call in state.calls_to("chat.update") {
                    let closing = call.ok && call.params.to_string().contains('✅');
                    let message = (
                        call.params["channel"].as_str().unwrap_or_default(),
                        call.params["ts"].as_str().unwrap_or_default(),
                    );
                    if let (true, Some(post)) = (closing, by_message.get(&message)) {
                        *closings.entry((*post).clone()).or_default() += 1;
                    }
                }
                (closings.len() == posts.len()).then_some(closings)
            })
            .await
    }

    fn acknowledged(&self) -> (usize, usize) {
        let envelopes = self.envelopes.lock().expect("envelopes");
        let acked = envelopes
            .iter()
            .filter(|id| self.fake.envelope(id).is_some_and(|e| e.acked()))
            .count();
        (acked, envelopes.len() - acked)
    }

    fn drop_connection(&self) {
        self.fake.drop_connection();
    }

    fn fault_counts(&self) -> FaultCounts {
        self.fake.fault_counts()
    }
}

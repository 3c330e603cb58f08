//! Discord's side of a soak run: the fake REST API and gateway, questions
//! in server channels.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Duration;

use askbridge::bridge::Bridge;
use askbridge::channels::discord::Discord;
use askbridge::config::{DiscordConfig, Secret};
use askbridge_core::render::{Locale, Mode};
use askbridge_testkit::discord::{Channel, FakeDiscord, IncomingMessage, User};
use askbridge_testkit::faults::{FaultCounts, Faults};

use super::harness::{CHOSEN, Platform, Post, Running, ask_number};

const GUILD: u64 = 800_000_000_000_000_001;
const FIRST_CHANNEL: u64 = 810_000_000_000_000_001;
const ALICE: u64 = 100_000_000_000_000_001;
/// The route of a message edit, as the fake records it.
const EDIT_ROUTE: &str = "/channels/{channel.id}/messages/{message.id}";

pub struct DiscordSoak {
    fake: FakeDiscord,
    alice: User,
    gateway: Running,
    presses: Mutex<Vec<u64>>,
}

impl DiscordSoak {
    pub async fn start(faults: Faults, places: usize) -> DiscordSoak {
        let fake = FakeDiscord::builder()
            .faults(faults)
            .wait_timeout(Duration::from_secs(300))
            .start()
            .await;
        for n in 0..places as u64 {
            fake.add_channel(&Channel::guild_text(
                FIRST_CHANNEL + n,
                GUILD,
                format!("c{n}"),
            ));
        }
        let alice = User::new(ALICE, "alice");
        fake.add_user(&alice);
        DiscordSoak {
            fake,
            alice,
            gateway: Running::default(),
            presses: Mutex::default(),
        }
    }
}

impl Platform for DiscordSoak {
    fn name(&self) -> &'static str {
        "discord"
    }

    async fn connect(&mut self, bridge: &Bridge) {
        let discord = Discord::new(
            bridge,
            &DiscordConfig {
                token: Secret::new(self.fake.token()),
                api_url: Some(self.fake.api_url()),
                public_key: None,
                render: Mode::Buttons,
                locale: Locale::En,
                allowed_users: vec![],
            },
        )
        .expect("Discord channel");
        self.gateway = Running::new(discord.start());
        self.fake.wait_for_ready().await;
    }

    fn target(&self, place: usize) -> String {
        format!("discord:{}", FIRST_CHANNEL + place as u64)
    }

    async fn posts_beyond(&self, seen: usize) -> Vec<Post> {
        self.fake
            .wait_for("more questions posted", |state| {
                let posts: Vec<Post> = state
                    .bot_messages()
                    .into_iter()
                    .filter_map(|message| {
                        Some(Post {
                            ask: ask_number(&message.content)?,
                            place: message.channel_id.to_string(),
                            message: message.id.to_string(),
                        })
                    })
                    .collect();
                (posts.len() > seen).then_some(posts)
            })
            .await
    }

    async fn press(&self, post: &Post) {
        let id: u64 = post.message.parse().expect("message id");
        let key = self
            .fake
            .message(id)
            .expect("the posted question")
            .custom_id_of(CHOSEN)
            .expect("a button for the chosen option");
        let interaction = self.fake.press_button(&self.alice, id, &key);
        self.presses.lock().expect("presses").push(interaction);
    }

    async fn type_reply(&self, post: &Post) {
        let channel: u64 = post.place.parse().expect("channel id");
        let id: u64 = post.message.parse().expect("message id");
        self.fake
            .inject_message(IncomingMessage::new(channel, &self.alice, "2").reply_to(id));
    }

    async fn closings(&self, posts: &[Post]) -> HashMap<Post, usize> {
        let by_message: HashMap<&str, &Post> = posts
            .iter()
            .map(|post| (post.message.as_str(), post))
            .collect();
        self.fake
            .wait_for("every question closed", |state| {
                let mut closings: HashMap<Post, usize> = HashMap::new();
                for call in state.calls_to("PATCH", EDIT_ROUTE) {
                    let closing = call.is_ok()
                        && call.body["content"]
                            .as_str()
                            .is_some_and(|text| text.contains('✅'));
                    let message = call.path.rsplit('/').next().unwrap_or_default();
                    if let (true, Some(post)) = (closing, by_message.get(message)) {
                        *closings.entry((*post).clone()).or_default() += 1;
                    }
                }
                (closings.len() == posts.len()).then_some(closings)
            })
            .await
    }

    fn acknowledged(&self) -> (usize, usize) {
        let presses = self.presses.lock().expect("presses");
        let answered = presses
            .iter()
            .filter(|id| {
                self.fake
                    .interaction(**id)
                    .is_some_and(|interaction| interaction.response.is_some())
            })
            .count();
        (answered, presses.len() - answered)
    }

    fn drop_connection(&self) {
        self.fake.drop_connection();
    }

    fn fault_counts(&self) -> FaultCounts {
        self.fake.fault_counts()
    }
}

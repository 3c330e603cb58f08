//! Feishu's side of a soak run: the fake Open API and long connection,
//! questions as cards in group chats, typed replies as replies to them.

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use askbridge::bridge::Bridge;
use askbridge::channels::feishu::Feishu;
use askbridge::config::{FeishuConfig, FeishuMode, Secret};
use askbridge_core::render::{Locale, Mode};
use askbridge_testkit::faults::{FaultCounts, Faults};
use askbridge_testkit::feishu::FakeFeishu;

use super::harness::{CHOSEN, Platform, Post, Running, ask_number};

const ALICE: &str = "ou_alice000000000000000000000000001";
/// Presses of one card before the person gives up (Feishu does not
/// retry a card callback; the person sees it fail and presses again).
const PRESSES: usize = 5;

fn chat(place: usize) -> String {
    format!("oc_soak{place:03}")
}

pub struct FeishuSoak {
    fake: FakeFeishu,
    connection: Running,
    pressed: AtomicUsize,
    failed_presses: AtomicUsize,
}

impl FeishuSoak {
    pub async fn start(faults: Faults, places: usize) -> FeishuSoak {
        let fake = FakeFeishu::builder()
            .faults(faults)
            .receive_all_group_messages(true)
            .wait_timeout(Duration::from_secs(300))
            .start()
            .await;
        fake.add_user(ALICE, "Alice");
        for place in 0..places {
            fake.add_chat(&chat(place), &format!("c{place}"));
        }
        FeishuSoak {
            fake,
            connection: Running::default(),
            pressed: AtomicUsize::new(0),
            failed_presses: AtomicUsize::new(0),
        }
    }
}

impl Platform for FeishuSoak {
    fn name(&self) -> &'static str {
        "feishu"
    }

    async fn connect(&mut self, bridge: &Bridge) {
        let feishu = Feishu::new(
            bridge,
            &FeishuConfig {
                app_id: self.fake.app_id(),
                app_secret: Secret::new(self.fake.app_secret()),
                api_url: Some(self.fake.api_url()),
                mode: FeishuMode::LongConnection,
                verification_token: Some(Secret::new(self.fake.verification_token())),
                render: Mode::Buttons,
                locale: Locale::En,
                allowed_users: vec![],
            },
        )
        .expect("Feishu channel");
        self.connection = Running::new(feishu.start());
        self.fake.wait_for_open_connections(1).await;
    }

    fn target(&self, place: usize) -> String {
        format!("feishu:{}", chat(place))
    }

    async fn posts_beyond(&self, seen: usize) -> Vec<Post> {
        self.fake
            .wait_for("more questions posted", |state| {
                let posts: Vec<Post> = state
                    .bot_messages()
                    .into_iter()
                    .filter(|message| message.parent_id.is_none())
                    .filter_map(|message| {
                        Some(Post {
                            ask: ask_number(&message.versions.first()?.content)?,
                            place: message.chat_id.clone(),
                            message: message.message_id.clone(),
                        })
                    })
                    .collect();
                (posts.len() > seen).then_some(posts)
            })
            .await
    }

    async fn press(&self, post: &Post) {
        self.pressed.fetch_add(1, Ordering::Relaxed);
        for _ in 0..PRESSES {
            self.fake.wait_for_open_connections(1).await;
            if self
                .fake
                .press(&post.message, ALICE, CHOSEN)
                .await
                .succeeded()
            {
                return;
            }
            self.failed_presses.fetch_add(1, Ordering::Relaxed);
        }
    }

    async fn type_reply(&self, post: &Post) {
        self.fake
            .send_text(&post.place, ALICE, "2", Some(&post.message));
    }

    async fn closings(&self, posts: &[Post]) -> HashMap<Post, usize> {
        self.fake
            .wait_for("every question closed", |state| {
                let mut closings: HashMap<Post, usize> = HashMap::new();
                for post in posts {
                    let Some(message) = state.message(&post.message) else {
                        continue;
                    };
                    let closed = message
                        .versions
                        .iter()
                        .filter(|version| version.content.contains('✅'))
                        .count();
                    if closed > 0 {
                        closings.insert(post.clone(), closed);
                    }
                }
                (closings.len() == posts.len()).then_some(closings)
            })
            .await
    }

    /// Presses that worked, and presses the person saw fail (and pressed
    /// again).
    fn acknowledged(&self) -> (usize, usize) {
        let failed = self.failed_presses.load(Ordering::Relaxed);
        (self.pressed.load(Ordering::Relaxed), failed)
    }

    fn drop_connection(&self) {
        self.fake.drop_connections();
    }

    fn fault_counts(&self) -> FaultCounts {
        self.fake.fault_counts()
    }
}

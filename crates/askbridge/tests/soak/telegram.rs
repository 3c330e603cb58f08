//! Telegram's side of a soak run: the fake Bot API, long polling.

use std::collections::HashMap;
use std::sync::Mutex;

use askbridge::bridge::Bridge;
use askbridge::channels::telegram::Telegram;
use askbridge::config::{Secret, TelegramConfig, TelegramMode};
use askbridge_core::render::{Locale, Mode};
use askbridge_testkit::faults::{FaultCounts, Faults};
use askbridge_testkit::telegram::{Chat, FakeTelegram, IncomingMessage, User};

use super::harness::{CHOSEN, Platform, Post, Running, ask_number};

pub struct TelegramSoak {
    fake: FakeTelegram,
    receiving: Running,
    presses: Mutex<Vec<String>>,
}

impl TelegramSoak {
    pub async fn start(faults: Faults) -> TelegramSoak {
        let fake = FakeTelegram::builder()
            .faults(faults)
            .wait_timeout(std::time::Duration::from_secs(300))
            .start()
            .await;
        TelegramSoak {
            fake,
            receiving: Running::default(),
            presses: Mutex::default(),
        }
    }
}

/// The person: a private chat's id is its user's.
fn person(chat: i64) -> User {
    User::new(chat, "Alice")
}

impl Platform for TelegramSoak {
    fn name(&self) -> &'static str {
        "telegram"
    }

    async fn connect(&mut self, bridge: &Bridge) {
        let telegram = Telegram::new(
            bridge,
            &TelegramConfig {
                token: Secret::new(self.fake.token()),
                api_url: Some(self.fake.api_url()),
                mode: TelegramMode::Polling,
                render: Mode::Buttons,
                locale: Locale::En,
                allowed_users: vec![],
            },
        )
        .expect("Telegram channel");
        self.receiving = Running::new(telegram.start("127.0.0.1:0".parse().expect("address")));
    }

    fn target(&self, place: usize) -> String {
        format!("telegram:{}", place + 1)
    }

    async fn posts_beyond(&self, seen: usize) -> Vec<Post> {
        self.fake
            .wait_for("more questions posted", |state| {
                let posts: Vec<Post> = state
                    .sent_messages()
                    .into_iter()
                    .filter_map(|message| {
                        Some(Post {
                            ask: ask_number(&message.text)?,
                            place: message.chat_id.to_string(),
                            message: message.message_id.to_string(),
                        })
                    })
                    .collect();
                (posts.len() > seen).then_some(posts)
            })
            .await
    }

    async fn press(&self, post: &Post) {
        let (chat, message) = ids(post);
        let label = self
            .fake
            .message(chat, message)
            .expect("the posted question")
            .buttons()
            .into_iter()
            .flatten()
            .find(|button| button.text.contains(CHOSEN))
            .expect("a button for the chosen option")
            .text;
        let query = self.fake.press_button(&person(chat), chat, message, &label);
        self.presses.lock().expect("presses").push(query);
    }

    async fn type_reply(&self, post: &Post) {
        let (chat, message) = ids(post);
        self.fake.inject_message(
            IncomingMessage::new(&Chat::private(chat), &person(chat), "2").reply_to(message),
        );
    }

    async fn closings(&self, posts: &[Post]) -> HashMap<Post, usize> {
        let by_message: HashMap<(i64, i32), &Post> =
            posts.iter().map(|post| (ids(post), post)).collect();
        self.fake
            .wait_for("every question closed", |state| {
                let mut closings: HashMap<Post, usize> = HashMap::new();
                for call in state.calls_to("editMessageText") {
                    let closing = call.status == 200
                        && call.params["text"]
                            .as_str()
                            .is_some_and(|text| text.contains('✅'));
                    let message = (
                        call.params["chat_id"].as_i64().unwrap_or_default(),
                        call.params["message_id"]
                            .as_i64()
                            .and_then(|id| i32::try_from(id).ok())
                            .unwrap_or_default(),
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
        let presses = self.presses.lock().expect("presses");
        let answered = presses
            .iter()
            .filter(|query| self.fake.callback_answer(query).is_some())
            .count();
        (answered, presses.len() - answered)
    }

    fn drop_connection(&self) {}

    fn fault_counts(&self) -> FaultCounts {
        self.fake.fault_counts()
    }
}

fn ids(post: &Post) -> (i64, i32) {
    (
        post.place.parse().expect("chat id"),
        post.message.parse().expect("message id"),
    )
}

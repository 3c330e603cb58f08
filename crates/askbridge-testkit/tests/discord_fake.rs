//! Self-tests of the fake Discord, driven by the real serenity 0.12.5:
//! its `Http` (through `HttpBuilder::proxy`, and through the HTTPS tunnel
//! with its rate limiter on) and its gateway `Client`. What serenity sends,
//! the fake understands; what the fake answers, serenity deserialises and
//! maps to the right errors.

#![allow(clippy::unwrap_used)]

use std::time::Duration;

use askbridge_testkit::discord::{
    self as fake, APPLICATION_ID, BOT_ID, Channel, FakeDiscord, IncomingMessage, Member,
    NoticeKind, RateLimits, TOKEN, User, Window,
};
use axum::body::Bytes;
use axum::http::{HeaderMap, StatusCode};
use futures_util::{SinkExt, StreamExt};
use serde_json::{Value, json};
use serenity::all::{
    ActionRowComponent, ApplicationId, ButtonStyle, ChannelId, ClientBuilder, ComponentInteraction,
    ComponentInteractionDataKind, Context, CreateActionRow, CreateButton, CreateInputText,
    CreateInteractionResponse, CreateInteractionResponseFollowup, CreateInteractionResponseMessage,
    CreateMessage, CreateModal, CreateSelectMenu, CreateSelectMenuKind, CreateSelectMenuOption,
    EditInteractionResponse, EditMessage, ErrorResponse, EventHandler, GatewayError,
    GatewayIntents, Http, HttpBuilder, HttpError, InputTextStyle, Interaction, InteractionId,
    Message, MessageId, ModalInteraction, ModelError, Ready, UserId, Verifier,
};
use tokio::sync::mpsc;
use tokio_tungstenite::tungstenite;

const GUILD: u64 = 800_000_000_000_000_001;
const GENERAL: u64 = 810_000_000_000_000_001;
const THREAD: u64 = 820_000_000_000_000_001;
const ROLE: u64 = 900_000_000_000_000_001;

/// How long a test waits for serenity to report an event.
const EVENT_TIMEOUT: Duration = Duration::from_secs(10);

fn alice() -> User {
    User::new(100_000_000_000_000_001, "alice").global_name("Alice")
}

fn bob() -> User {
    User::new(100_000_000_000_000_002, "bob")
}

/// A fake with #general and a thread in it; Alice is a member with a nick
/// and a role.
async fn started(builder: fake::FakeDiscordBuilder) -> FakeDiscord {
    let fake = builder.start().await;
    fake.add_channel(&Channel::guild_text(GENERAL, GUILD, "general"));
    fake.add_channel(&Channel::thread(THREAD, GUILD, GENERAL, "deploy?"));
    fake.set_member(GUILD, &alice(), Member::new().nick("Al").roles([ROLE]));
    fake
}

/// serenity's `Http` through the proxy: the rate limiter must be off, or
/// serenity sends to discord.com itself.
fn http(fake: &FakeDiscord) -> Http {
    HttpBuilder::new(TOKEN)
        .proxy(fake.api_url())
        .ratelimiter_disabled(true)
        .application_id(ApplicationId::new(APPLICATION_ID))
        .build()
}

fn yes_no(prefix: &str) -> Vec<CreateActionRow> {
    vec![CreateActionRow::Buttons(vec![
        CreateButton::new(format!("{prefix}:yes"))
            .label("Yes")
            .style(ButtonStyle::Success),
        CreateButton::new(format!("{prefix}:no"))
            .label("No")
            .style(ButtonStyle::Danger),
    ])]
}

fn discord_error<T: std::fmt::Debug>(result: serenity::Result<T>) -> ErrorResponse {
    match result {
        Err(serenity::Error::Http(HttpError::UnsuccessfulRequest(response))) => response,
        other => panic!("expected Discord's error response, got {other:?}"),
    }
}

/// `(path, code)` of each form error, as serenity flattens them.
fn form_errors(response: &ErrorResponse) -> Vec<(String, String)> {
    response
        .error
        .errors
        .iter()
        .map(|error| (error.path.clone(), error.code.clone()))
        .collect()
}

/// What the gateway client reported.
enum Seen {
    Ready(Box<Ready>),
    Interaction(Context, Box<Interaction>),
    Message(Box<Message>),
}

struct Forward(mpsc::UnboundedSender<Seen>);

#[serenity::async_trait]
impl EventHandler for Forward {
    async fn ready(&self, _: Context, ready: Ready) {
        let _ = self.0.send(Seen::Ready(Box::new(ready)));
    }

    async fn interaction_create(&self, ctx: Context, interaction: Interaction) {
        let _ = self.0.send(Seen::Interaction(ctx, Box::new(interaction)));
    }

    async fn message(&self, _: Context, message: Message) {
        let _ = self.0.send(Seen::Message(Box::new(message)));
    }
}

/// A serenity `Client` on the fake, started in the background.
struct Bot {
    events: mpsc::UnboundedReceiver<Seen>,
    client: tokio::task::JoinHandle<serenity::Result<()>>,
}

impl Bot {
    async fn start(fake: &FakeDiscord, intents: GatewayIntents) -> Bot {
        let (sender, events) = mpsc::unbounded_channel();
        let mut client = ClientBuilder::new_with_http(http(fake), intents)
            .event_handler(Forward(sender))
            .await
            .unwrap();
        let client = tokio::spawn(async move { client.start().await });
        Bot { events, client }
    }

    async fn next<T>(&mut self, what: &str, mut pick: impl FnMut(Seen) -> Option<T>) -> T {
        let deadline = tokio::time::Instant::now() + EVENT_TIMEOUT;
        loop {
            let seen = tokio::time::timeout_at(deadline, self.events.recv())
                .await
                .unwrap_or_else(|_| panic!("serenity reported no {what} in {EVENT_TIMEOUT:?}"))
                .unwrap_or_else(|| panic!("serenity's client stopped before {what}"));
            if let Some(found) = pick(seen) {
                return found;
            }
        }
    }

    async fn ready(&mut self) -> Ready {
        self.next("READY", |seen| match seen {
            Seen::Ready(ready) => Some(*ready),
            _ => None,
        })
        .await
    }

    async fn interaction(&mut self) -> (Context, Interaction) {
        self.next("interaction", |seen| match seen {
            Seen::Interaction(ctx, interaction) => Some((ctx, *interaction)),
            _ => None,
        })
        .await
    }

    async fn component(&mut self) -> (Context, ComponentInteraction) {
        let (ctx, interaction) = self.interaction().await;
        match interaction {
            Interaction::Component(component) => (ctx, component),
            other => panic!("expected a component interaction, got {other:?}"),
        }
    }

    async fn modal(&mut self) -> (Context, ModalInteraction) {
        let (ctx, interaction) = self.interaction().await;
        match interaction {
            Interaction::Modal(modal) => (ctx, modal),
            other => panic!("expected a modal submit, got {other:?}"),
        }
    }

    /// The next message from someone other than the bot.
    async fn user_message(&mut self) -> Message {
        self.next("user message", |seen| match seen {
            Seen::Message(message) if message.author.id != UserId::new(BOT_ID) => Some(*message),
            _ => None,
        })
        .await
    }
}

#[tokio::test]
async fn rest_basics_describe_the_bot_and_the_gateway() {
    let fake = started(FakeDiscord::builder()).await;
    let http = http(&fake);

    let me = http.get_current_user().await.unwrap();
    assert_eq!(me.id, UserId::new(BOT_ID));
    assert!(me.bot);
    assert_eq!(me.name, fake::BOT_USERNAME);
    let app = http.get_current_application_info().await.unwrap();
    assert_eq!(app.id, ApplicationId::new(APPLICATION_ID));
    assert_eq!(app.verify_key, fake.public_key_hex());
    assert_eq!(http.get_gateway().await.unwrap().url, fake.gateway_url());
    let bot_gateway = http.get_bot_gateway().await.unwrap();
    assert_eq!(bot_gateway.url, fake.gateway_url());
    assert_eq!(bot_gateway.shards, 1);
    assert_eq!(bot_gateway.session_start_limit.max_concurrency, 1);

    let calls = fake.calls();
    let routes: Vec<_> = calls.iter().map(|call| call.route.as_str()).collect();
    assert_eq!(
        routes,
        [
            "/users/@me",
            "/oauth2/applications/@me",
            "/gateway",
            "/gateway/bot"
        ]
    );
    assert!(calls.iter().all(|call| call.status == 200));
}

#[tokio::test]
async fn send_message_with_buttons_read_it_back_edit_and_reply() {
    let fake = started(FakeDiscord::builder()).await;
    let http = http(&fake);
    let general = ChannelId::new(GENERAL);

    let sent = general
        .send_message(
            &http,
            CreateMessage::new()
                .content("Deploy to production?")
                .components(yes_no("ask:1")),
        )
        .await
        .unwrap();
    assert_eq!(sent.channel_id, general);
    assert_eq!(sent.content, "Deploy to production?");
    assert_eq!(sent.author.id, UserId::new(BOT_ID));
    assert_eq!(sent.components.len(), 1);
    let ActionRowComponent::Button(yes) = &sent.components[0].components[0] else {
        panic!("expected a button, got {:?}", sent.components[0]);
    };
    assert_eq!(yes.label.as_deref(), Some("Yes"));

    let stored = fake.message(sent.id.get()).unwrap();
    assert!(stored.from_bot);
    assert_eq!(stored.button_labels(), [["Yes", "No"]]);
    assert_eq!(stored.custom_id_of("No").as_deref(), Some("ask:1:no"));
    let call = fake
        .wait_for_call("POST", "/channels/{channel.id}/messages", |_| true)
        .await;
    assert_eq!(
        call.body["components"][0]["components"][1]["custom_id"],
        "ask:1:no"
    );

    let read = general.message(&http, sent.id).await.unwrap();
    assert_eq!(read.id, sent.id);
    assert_eq!(read.content, sent.content);

    let edited = general
        .edit_message(
            &http,
            sent.id,
            EditMessage::new()
                .content("Deploy to production? (answered: Yes)")
                .components(Vec::new()),
        )
        .await
        .unwrap();
    assert!(edited.edited_timestamp.is_some());
    assert!(edited.components.is_empty());
    let stored = fake.wait_for_edits(sent.id.get(), 1).await;
    assert_eq!(stored.history[0].content, "Deploy to production?");
    assert_eq!(stored.history[0].components.len(), 1);
    assert!(stored.buttons().is_empty());

    let reply = general
        .send_message(
            &http,
            CreateMessage::new()
                .content("Deploying")
                .reference_message((general, sent.id)),
        )
        .await
        .unwrap();
    assert_eq!(
        reply.referenced_message.as_ref().map(|message| message.id),
        Some(sent.id)
    );
    assert_eq!(
        fake.message(reply.id.get()).unwrap().reference,
        Some(sent.id.get())
    );
    let missing = general
        .send_message(
            &http,
            CreateMessage::new()
                .content("?")
                .reference_message((general, MessageId::new(42))),
        )
        .await;
    let error = discord_error(missing);
    assert_eq!(error.error.code, 50035);
    assert_eq!(
        form_errors(&error),
        [(
            "message_reference".to_owned(),
            "REPLIES_UNKNOWN_MESSAGE".to_owned()
        )]
    );

    // A thread is a channel of its own.
    ChannelId::new(THREAD)
        .say(&http, "in the thread")
        .await
        .unwrap();
    assert_eq!(fake.messages_in(THREAD).len(), 1);
    assert_eq!(fake.messages_in(GENERAL).len(), 2);
}

#[tokio::test]
async fn limits_are_refused_with_discords_errors() {
    let fake = started(FakeDiscord::builder()).await;
    let http = http(&fake);
    let general = ChannelId::new(GENERAL);
    let raw = |body: Value| {
        let http = &http;
        async move { http.send_message(general, Vec::new(), &body).await }
    };
    let button = |id: &str| json!({"type": 2, "style": 1, "label": "x", "custom_id": id});
    let row = |components: Vec<Value>| json!({"type": 1, "components": components});

    // serenity's own builder refuses long content before sending anything.
    let local = general
        .send_message(&http, CreateMessage::new().content("x".repeat(2001)))
        .await;
    assert!(
        matches!(
            local,
            Err(serenity::Error::Model(ModelError::MessageTooLong(1)))
        ),
        "{local:?}"
    );
    assert!(fake.calls().is_empty());

    let cases = [
        (
            json!({"content": "x".repeat(2001)}),
            ("content", "BASE_TYPE_MAX_LENGTH"),
        ),
        (
            json!({"components": (0..6).map(|i| row(vec![button(&i.to_string())])).collect::<Vec<_>>()}),
            ("components", "BASE_TYPE_MAX_LENGTH"),
        ),
        (
            json!({"components": [row((0..6).map(|i| button(&i.to_string())).collect())]}),
            ("components.0.components", "BASE_TYPE_BAD_LENGTH"),
        ),
        (
            json!({"components": [row(vec![
                json!({"type": 3, "custom_id": "pick", "options": [{"label": "A", "value": "a"}]}),
                button("b"),
            ])]}),
            (
                "components.0.components.1",
                "COMPONENT_LAYOUT_WIDTH_EXCEEDED",
            ),
        ),
        (
            json!({"components": [row(vec![json!({"type": 2, "style": 1, "label": "l".repeat(81), "custom_id": "a"})])]}),
            ("components.0.components.0.label", "BASE_TYPE_MAX_LENGTH"),
        ),
        (
            json!({"components": [row(vec![button("same")]), row(vec![button("same")])]}),
            (
                "components.1.components.0.custom_id",
                "COMPONENT_CUSTOM_ID_DUPLICATED",
            ),
        ),
        (
            json!({"components": [row(vec![button(&"i".repeat(101))])]}),
            (
                "components.0.components.0.custom_id",
                "BASE_TYPE_MAX_LENGTH",
            ),
        ),
        (
            json!({"components": [row(vec![json!({"type": 2, "style": 1, "label": "x"})])]}),
            (
                "components.0.components.0.custom_id",
                "BUTTON_COMPONENT_CUSTOM_ID_REQUIRED",
            ),
        ),
        (
            json!({"components": [row(vec![json!({"type": 3, "custom_id": "pick", "options":
                (0..26).map(|i| json!({"label": i.to_string(), "value": i.to_string()})).collect::<Vec<_>>()})])]}),
            ("components.0.components.0.options", "BASE_TYPE_BAD_LENGTH"),
        ),
        (
            json!({"components": [row(vec![json!({"type": 3, "custom_id": "pick", "max_values": 3,
                "options": [{"label": "A", "value": "a"}, {"label": "B", "value": "b"}]})])]}),
            ("components.0.components.0.options", "BASE_TYPE_MIN_LENGTH"),
        ),
    ];
    for (body, (path, code)) in cases {
        let error = discord_error(raw(body.clone()).await);
        assert_eq!(error.status_code, 400, "{body}");
        assert_eq!(error.error.code, 50035, "{body}");
        assert_eq!(error.error.message, "Invalid Form Body");
        assert_eq!(
            form_errors(&error),
            [(path.to_owned(), code.to_owned())],
            "{body}"
        );
    }

    let empty = discord_error(raw(json!({"content": "", "embeds": []})).await);
    assert_eq!((empty.status_code.as_u16(), empty.error.code), (400, 50006));
    assert_eq!(empty.error.message, "Cannot send an empty message");

    let unknown = discord_error(ChannelId::new(42).say(&http, "hello?").await);
    assert_eq!(
        (unknown.status_code.as_u16(), unknown.error.code),
        (404, 10003)
    );
    assert_eq!(unknown.error.message, "Unknown Channel");

    fake.deny_access(GENERAL);
    let denied = discord_error(general.say(&http, "hello?").await);
    assert_eq!(
        (denied.status_code.as_u16(), denied.error.code),
        (403, 50001)
    );
    assert_eq!(denied.error.message, "Missing Access");
    fake.allow_access(GENERAL);
    general.say(&http, "hello again").await.unwrap();

    // Nothing refused was stored.
    assert_eq!(fake.messages_in(GENERAL).len(), 1);
}

#[tokio::test]
async fn wrong_token_is_401_but_get_gateway_needs_none() {
    let fake = started(FakeDiscord::builder()).await;
    let http = HttpBuilder::new("not-the-token")
        .proxy(fake.api_url())
        .ratelimiter_disabled(true)
        .build();
    let error = discord_error(http.get_current_user().await);
    assert_eq!(error.status_code, 401);
    assert_eq!(error.error.code, 0);
    assert_eq!(error.error.message, "401: Unauthorized");
    let error = discord_error(ChannelId::new(GENERAL).say(&http, "hi").await);
    assert_eq!(error.status_code, 401);
    assert!(fake.messages_in(GENERAL).is_empty());
    assert_eq!(http.get_gateway().await.unwrap().url, fake.gateway_url());
}

#[tokio::test]
async fn dm_channels_are_stable_and_can_refuse_messages() {
    let fake = started(FakeDiscord::builder()).await;
    let http = http(&fake);
    let alice = alice();
    fake.add_user(&alice);

    let dm = UserId::new(alice.id)
        .create_dm_channel(&http)
        .await
        .unwrap();
    assert_eq!(dm.recipient.id, UserId::new(alice.id));
    assert_eq!(dm.recipient.global_name.as_deref(), Some("Alice"));
    let again = UserId::new(alice.id)
        .create_dm_channel(&http)
        .await
        .unwrap();
    assert_eq!(again.id, dm.id);
    assert_eq!(fake.dm_channel(&alice), dm.id.get());
    assert_eq!(
        fake.inspect(|state| state.channel(dm.id.get()).unwrap().kind),
        fake::ChannelKind::Dm
    );

    dm.id.say(&http, "A question for you").await.unwrap();
    assert_eq!(fake.messages_in(dm.id.get()).len(), 1);

    fake.block_dms(&alice);
    let refused = discord_error(dm.id.say(&http, "again").await);
    assert_eq!(
        (refused.status_code.as_u16(), refused.error.code),
        (403, 50007)
    );
    assert_eq!(refused.error.message, "Cannot send messages to this user");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gateway_client_gets_ready_and_answers_a_press_once() {
    let fake = started(FakeDiscord::builder()).await;
    let intents = GatewayIntents::GUILDS
        | GatewayIntents::GUILD_MESSAGES
        | GatewayIntents::DIRECT_MESSAGES
        | GatewayIntents::MESSAGE_CONTENT;
    let mut bot = Bot::start(&fake, intents).await;
    let ready = bot.ready().await;
    assert_eq!(ready.user.id, UserId::new(BOT_ID));
    assert_eq!(ready.application.id, ApplicationId::new(APPLICATION_ID));
    assert_eq!(ready.version, 10);
    assert_eq!(ready.resume_gateway_url, fake.gateway_url());
    assert_eq!(fake.wait_for_ready().await, ready.session_id);
    let stats = fake.gateway_stats();
    assert_eq!(stats.identifies, 1);
    assert_eq!(stats.last_intents, Some(intents.bits()));
    // serenity asks for GET /gateway when the client is built, nothing else.
    let routes: Vec<_> = fake.calls().into_iter().map(|call| call.route).collect();
    assert_eq!(routes, ["/gateway"]);

    let question = ChannelId::new(GENERAL)
        .send_message(
            &http(&fake),
            CreateMessage::new()
                .content("Ship it?")
                .components(yes_no("ask:7")),
        )
        .await
        .unwrap();
    let pressed = fake.press_button(&alice(), question.id.get(), "ask:7:yes");

    let (ctx, press) = bot.component().await;
    assert_eq!(press.id, InteractionId::new(pressed));
    assert_eq!(press.data.custom_id, "ask:7:yes");
    assert!(matches!(
        press.data.kind,
        ComponentInteractionDataKind::Button
    ));
    assert_eq!(press.user.id, UserId::new(alice().id));
    assert_eq!(press.guild_id.map(|id| id.get()), Some(GUILD));
    assert_eq!(press.channel_id, ChannelId::new(GENERAL));
    assert_eq!(press.message.id, question.id);
    let member = press.member.as_ref().unwrap();
    assert_eq!(member.nick.as_deref(), Some("Al"));
    assert_eq!(
        member
            .roles
            .iter()
            .map(|role| role.get())
            .collect::<Vec<_>>(),
        [ROLE]
    );
    assert_eq!(press.user.global_name.as_deref(), Some("Alice"));

    press
        .create_response(
            &ctx.http,
            CreateInteractionResponse::Message(
                CreateInteractionResponseMessage::new()
                    .content("Recorded: Yes")
                    .ephemeral(true),
            ),
        )
        .await
        .unwrap();
    let second = press
        .create_response(&ctx.http, CreateInteractionResponse::Acknowledge)
        .await;
    let error = discord_error(second);
    assert_eq!((error.status_code.as_u16(), error.error.code), (400, 40060));
    assert_eq!(
        error.error.message,
        "Interaction has already been acknowledged."
    );

    let response = fake.wait_for_response(pressed).await;
    assert_eq!(response.kind, 4);
    assert!(response.is_ephemeral());
    assert_eq!(response.content(), Some("Recorded: Yes"));
    let record = fake.interaction(pressed).unwrap();
    assert_eq!(record.refused_responses, 1);
    let notices = fake.notices_for(alice().id);
    assert_eq!(notices.len(), 1);
    assert_eq!(notices[0].kind, NoticeKind::Ephemeral);
    assert_eq!(notices[0].text, "Recorded: Yes");
    assert!(fake.notices_for(bob().id).is_empty());

    // A follow-up through the interaction webhook, and editing @original.
    let followup = press
        .create_followup(
            &ctx.http,
            CreateInteractionResponseFollowup::new().content("Deploying now"),
        )
        .await
        .unwrap();
    assert_eq!(
        fake.wait_for_followups(pressed, 1).await[0].id,
        followup.id.get()
    );
    let original = press
        .edit_response(
            &ctx.http,
            EditInteractionResponse::new().content("Recorded: Yes ✔"),
        )
        .await
        .unwrap();
    assert_eq!(Some(original.id.get()), response.message_id);
    assert_eq!(
        fake.message(original.id.get()).unwrap().content,
        "Recorded: Yes ✔"
    );

    // User messages arrive with member, reply and content.
    fake.inject_message(
        IncomingMessage::new(GENERAL, &alice(), "yes, ship it").reply_to(question.id.get()),
    );
    let message = bot.user_message().await;
    assert_eq!(message.content, "yes, ship it");
    assert_eq!(message.guild_id.map(|id| id.get()), Some(GUILD));
    assert_eq!(message.member.as_ref().unwrap().nick.as_deref(), Some("Al"));
    assert_eq!(
        message
            .referenced_message
            .as_ref()
            .map(|replied| replied.id),
        Some(question.id)
    );
    assert_eq!(
        message
            .message_reference
            .as_ref()
            .and_then(|reference| reference.message_id),
        Some(question.id)
    );
    bot.client.abort();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn select_menus_modals_and_update_message() {
    let fake = started(FakeDiscord::builder()).await;
    let mut bot = Bot::start(&fake, GatewayIntents::GUILD_MESSAGES).await;
    bot.ready().await;
    let http = http(&fake);
    let select = CreateSelectMenu::new(
        "env",
        CreateSelectMenuKind::String {
            options: vec![
                CreateSelectMenuOption::new("Staging", "staging"),
                CreateSelectMenuOption::new("Production", "prod"),
                CreateSelectMenuOption::new("Both", "both"),
            ],
        },
    )
    .min_values(1)
    .max_values(2);
    let question = ChannelId::new(THREAD)
        .send_message(
            &http,
            CreateMessage::new().content("Where?").components(vec![
                CreateActionRow::SelectMenu(select),
                CreateActionRow::Buttons(vec![CreateButton::new("why").label("Other…")]),
            ]),
        )
        .await
        .unwrap();
    assert_eq!(
        fake.message(question.id.get())
            .unwrap()
            .select_options("env")[1],
        ("Production".to_owned(), "prod".to_owned())
    );

    let chosen = fake.choose(&alice(), question.id.get(), "env", &["staging", "prod"]);
    let (ctx, choice) = bot.component().await;
    assert_eq!(choice.id.get(), chosen);
    let ComponentInteractionDataKind::StringSelect { values } = &choice.data.kind else {
        panic!("expected a string select, got {:?}", choice.data.kind);
    };
    assert_eq!(values, &["staging", "prod"]);
    assert_eq!(choice.channel_id, ChannelId::new(THREAD));
    choice
        .create_response(
            &ctx.http,
            CreateInteractionResponse::UpdateMessage(
                CreateInteractionResponseMessage::new()
                    .content("Where? → staging, prod")
                    .components(Vec::new()),
            ),
        )
        .await
        .unwrap();
    let updated = fake.wait_for_edits(question.id.get(), 1).await;
    assert_eq!(updated.content, "Where? → staging, prod");
    assert!(updated.components.is_empty());
    assert_eq!(fake.wait_for_response(chosen).await.kind, 7);

    // Another question; "Other…" opens a modal, its submission updates it.
    let question =
        ChannelId::new(GENERAL)
            .send_message(
                &http,
                CreateMessage::new().content("Approve?").components(vec![
                    CreateActionRow::Buttons(vec![CreateButton::new("why").label("Other…")]),
                ]),
            )
            .await
            .unwrap();
    let pressed = fake.press_button(&alice(), question.id.get(), "why");
    let (ctx, press) = bot.component().await;
    let too_long =
        CreateModal::new("why-modal", "t".repeat(46)).components(vec![CreateActionRow::InputText(
            CreateInputText::new(InputTextStyle::Paragraph, "Why?", "reason"),
        )]);
    let refused = discord_error(
        press
            .create_response(&ctx.http, CreateInteractionResponse::Modal(too_long))
            .await,
    );
    assert_eq!(
        form_errors(&refused),
        [("data.title".to_owned(), "BASE_TYPE_MAX_LENGTH".to_owned())]
    );
    let modal = CreateModal::new("why-modal", "Tell me more").components(vec![
        CreateActionRow::InputText(
            CreateInputText::new(InputTextStyle::Paragraph, "Why?", "reason").max_length(200),
        ),
        CreateActionRow::InputText(
            CreateInputText::new(InputTextStyle::Short, "Ticket", "ticket").required(false),
        ),
    ]);
    press
        .create_response(&ctx.http, CreateInteractionResponse::Modal(modal))
        .await
        .unwrap();
    let opened = fake.wait_for_modal(pressed).await;
    assert_eq!(opened.title, "Tell me more");
    assert_eq!(opened.inputs().len(), 2);
    assert_eq!(
        fake.notices_for(alice().id).last().unwrap().kind,
        NoticeKind::Modal
    );

    let submitted = fake.submit_modal(&alice(), pressed, &[("reason", "needs a review first")]);
    let (ctx, submit) = bot.modal().await;
    assert_eq!(submit.id.get(), submitted);
    assert_eq!(submit.data.custom_id, "why-modal");
    let ActionRowComponent::InputText(reason) = &submit.data.components[0].components[0] else {
        panic!("expected a text input, got {:?}", submit.data.components[0]);
    };
    assert_eq!(reason.custom_id, "reason");
    assert_eq!(reason.value.as_deref(), Some("needs a review first"));
    assert_eq!(
        submit.message.as_ref().map(|message| message.id),
        Some(question.id)
    );
    assert_eq!(
        fake.interaction(submitted).unwrap().fields,
        [
            ("reason".to_owned(), "needs a review first".to_owned()),
            ("ticket".to_owned(), String::new())
        ]
    );
    submit
        .create_response(
            &ctx.http,
            CreateInteractionResponse::UpdateMessage(
                CreateInteractionResponseMessage::new()
                    .content("Approve? → Other: needs a review first")
                    .components(Vec::new()),
            ),
        )
        .await
        .unwrap();
    let updated = fake.wait_for_edits(question.id.get(), 1).await;
    assert_eq!(updated.content, "Approve? → Other: needs a review first");
    bot.client.abort();
}

#[tokio::test]
async fn late_and_unanswered_interactions() {
    let fake = started(FakeDiscord::builder()).await;
    let http = http(&fake);
    let question = ChannelId::new(GENERAL)
        .send_message(
            &http,
            CreateMessage::new()
                .content("Ok?")
                .components(yes_no("late")),
        )
        .await
        .unwrap();

    // Follow-ups need the initial response first.
    let early = fake.press_button_http(&alice(), question.id.get(), "late:yes");
    let error = discord_error(
        http.create_followup_message(
            &early.token,
            &CreateInteractionResponseFollowup::new().content("too early"),
            Vec::new(),
        )
        .await,
    );
    assert_eq!((error.status_code.as_u16(), error.error.code), (404, 10015));
    assert_eq!(error.error.message, "Unknown Webhook");

    // Aged past its 3 seconds: refused, and the user sees the failure.
    fake.expire_interaction(early.id);
    let late = http
        .create_interaction_response(
            InteractionId::new(early.id),
            &early.token,
            &CreateInteractionResponse::Acknowledge,
            Vec::new(),
        )
        .await;
    let error = discord_error(late);
    assert_eq!((error.status_code.as_u16(), error.error.code), (404, 10062));
    assert_eq!(error.error.message, "Unknown interaction");
    let notices = fake.notices_for(alice().id);
    assert_eq!(notices.len(), 1);
    assert_eq!(notices[0].kind, NoticeKind::InteractionFailed);
    assert_eq!(notices[0].text, "This interaction failed");

    // A wrong token is an unknown interaction too.
    let other = fake.press_button_http(&alice(), question.id.get(), "late:no");
    let error = discord_error(
        http.create_interaction_response(
            InteractionId::new(other.id),
            "not-the-token",
            &CreateInteractionResponse::Acknowledge,
            Vec::new(),
        )
        .await,
    );
    assert_eq!(error.error.code, 10062);

    // The deadline is configurable: with none left, every response is late.
    fake.set_interaction_deadline(Duration::ZERO);
    let error = discord_error(
        http.create_interaction_response(
            InteractionId::new(other.id),
            &other.token,
            &CreateInteractionResponse::Acknowledge,
            Vec::new(),
        )
        .await,
    );
    assert_eq!(error.error.code, 10062);
    assert!(fake.interaction(other.id).unwrap().response.is_none());
}

#[tokio::test]
async fn deferred_responses_follow_ups_and_original_edits() {
    let fake = started(FakeDiscord::builder()).await;
    let http = http(&fake);
    let question = ChannelId::new(GENERAL)
        .send_message(
            &http,
            CreateMessage::new()
                .content("Run it?")
                .components(yes_no("d")),
        )
        .await
        .unwrap();
    let press = fake.press_button_http(&bob(), question.id.get(), "d:yes");
    http.create_interaction_response(
        InteractionId::new(press.id),
        &press.token,
        &CreateInteractionResponse::Defer(CreateInteractionResponseMessage::new().ephemeral(true)),
        Vec::new(),
    )
    .await
    .unwrap();
    let response = fake.wait_for_response(press.id).await;
    assert_eq!(response.kind, 5);
    let thinking = fake.message(response.message_id.unwrap()).unwrap();
    assert!(thinking.is_loading() && thinking.is_ephemeral());
    assert_eq!(thinking.ephemeral_to, Some(bob().id));

    let edited = http
        .edit_original_interaction_response(
            &press.token,
            &EditInteractionResponse::new().content("Done: 3 hosts"),
            Vec::new(),
        )
        .await
        .unwrap();
    assert_eq!(edited.content, "Done: 3 hosts");
    let done = fake.message(edited.id.get()).unwrap();
    assert!(!done.is_loading());
    assert_eq!(done.edit_count(), 1);
    assert_eq!(
        http.get_original_interaction_response(&press.token)
            .await
            .unwrap()
            .id,
        edited.id
    );
    let followup = http
        .create_followup_message(
            &press.token,
            &CreateInteractionResponseFollowup::new()
                .content("Details are in the log")
                .ephemeral(true),
            Vec::new(),
        )
        .await
        .unwrap();
    assert_eq!(fake.followups(press.id)[0].id, followup.id.get());
    let notices = fake.notices_for(bob().id);
    let texts: Vec<_> = notices.iter().map(|notice| notice.text.as_str()).collect();
    assert_eq!(texts, ["Done: 3 hosts", "Details are in the log"]);
    http.delete_original_interaction_response(&press.token)
        .await
        .unwrap();
    assert!(fake.message(edited.id.get()).unwrap().deleted);
    let gone = discord_error(http.get_original_interaction_response(&press.token).await);
    assert_eq!(gone.error.code, 10008);
}

#[tokio::test]
async fn callbacks_with_response_and_expired_webhook_tokens() {
    let fake = started(FakeDiscord::builder().interaction_token_lifetime(Duration::ZERO)).await;
    let http = http(&fake);
    let question = ChannelId::new(GENERAL)
        .send_message(
            &http,
            CreateMessage::new().content("Go?").components(yes_no("w")),
        )
        .await
        .unwrap();
    let press = fake.press_button_http(&alice(), question.id.get(), "w:yes");
    let url = format!(
        "{}/api/v10/interactions/{}/{}/callback?with_response=true",
        fake.api_url(),
        press.id,
        press.token
    );
    let answer: Value = reqwest::Client::builder()
        .no_proxy()
        .build()
        .unwrap()
        .post(url)
        .json(&json!({"type": 4, "data": {"content": "Going"}}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let message_id = fake
        .interaction(press.id)
        .unwrap()
        .response
        .unwrap()
        .message_id
        .unwrap();
    assert_eq!(answer["interaction"]["id"], press.id.to_string());
    assert_eq!(
        answer["interaction"]["response_message_id"],
        message_id.to_string()
    );
    assert_eq!(answer["resource"]["type"], 4);
    assert_eq!(answer["resource"]["message"]["content"], "Going");
    let created = fake.message(message_id).unwrap();
    assert_eq!(
        (created.kind, created.reference),
        (19, Some(question.id.get()))
    );

    // The token outlived its (here: zero) lifetime.
    let error = discord_error(
        http.create_followup_message(
            &press.token,
            &CreateInteractionResponseFollowup::new().content("later"),
            Vec::new(),
        )
        .await,
    );
    assert_eq!((error.status_code.as_u16(), error.error.code), (401, 50027));
    assert_eq!(error.error.message, "Invalid Webhook Token");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dropped_connection_resumes_and_loses_nothing() {
    let fake = started(FakeDiscord::builder()).await;
    let mut bot = Bot::start(&fake, GatewayIntents::GUILD_MESSAGES).await;
    let ready = bot.ready().await;
    let http = http(&fake);
    let question = ChannelId::new(GENERAL)
        .send_message(
            &http,
            CreateMessage::new()
                .content("Still there?")
                .components(yes_no("r")),
        )
        .await
        .unwrap();
    fake.wait_for_gateway_idle().await;

    fake.drop_connection();
    let pressed = fake.press_button(&alice(), question.id.get(), "r:yes");
    fake.wait_for_resumed(1).await;
    let (ctx, press) = bot.component().await;
    assert_eq!(press.id.get(), pressed);
    press
        .create_response(&ctx.http, CreateInteractionResponse::Acknowledge)
        .await
        .unwrap();
    assert_eq!(fake.wait_for_response(pressed).await.kind, 6);

    let stats = fake.gateway_stats();
    assert_eq!(stats.dropped, 1);
    assert_eq!(
        stats.identifies, 1,
        "serenity resumed instead of identifying again"
    );
    assert_eq!(stats.resume_attempts, 1);
    assert_eq!(stats.resumed, 1);
    assert_eq!(
        fake.inspect(|state| state.session_id().map(str::to_owned)),
        Some(ready.session_id)
    );
    bot.client.abort();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serenitys_heartbeats_are_acknowledged() {
    let fake = started(FakeDiscord::builder().heartbeat_interval(Duration::from_millis(50))).await;
    let mut bot = Bot::start(&fake, GatewayIntents::GUILD_MESSAGES).await;
    bot.ready().await;
    fake.wait_for("two heartbeats", |state| {
        (state.gateway_stats().heartbeats >= 2).then_some(())
    })
    .await;
    let stats = fake.gateway_stats();
    assert_eq!((stats.connections, stats.identifies), (1, 1));
    assert_eq!(
        stats.resume_attempts, 0,
        "an unacknowledged heartbeat makes serenity reconnect"
    );
    bot.client.abort();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn refused_message_content_intent_closes_with_4014() {
    let fake = started(FakeDiscord::builder()).await;
    fake.disallow_intents(1 << 15);
    let bot = Bot::start(
        &fake,
        GatewayIntents::GUILD_MESSAGES | GatewayIntents::MESSAGE_CONTENT,
    )
    .await;
    let outcome = tokio::time::timeout(EVENT_TIMEOUT, bot.client)
        .await
        .unwrap()
        .unwrap();
    assert!(
        matches!(
            outcome,
            Err(serenity::Error::Gateway(
                GatewayError::DisallowedGatewayIntents
            ))
        ),
        "{outcome:?}"
    );
    assert_eq!(
        fake.wait_for_close().await,
        (4014, "Disallowed intent(s).".to_owned())
    );
    assert_eq!(fake.gateway_stats().ready, 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_message_content_guild_messages_arrive_empty() {
    let fake = started(FakeDiscord::builder()).await;
    let mut bot = Bot::start(
        &fake,
        GatewayIntents::GUILD_MESSAGES | GatewayIntents::DIRECT_MESSAGES,
    )
    .await;
    bot.ready().await;
    let alice = alice();
    let dm = fake.dm_channel(&alice);

    fake.inject_message(IncomingMessage::new(GENERAL, &alice, "secret plans"));
    assert_eq!(bot.user_message().await.content, "");
    let mention = format!("<@{BOT_ID}> option B");
    fake.inject_message(IncomingMessage::new(GENERAL, &alice, mention.clone()));
    let message = bot.user_message().await;
    assert_eq!(message.content, mention);
    assert!(
        message
            .mentions
            .iter()
            .any(|user| user.id == UserId::new(BOT_ID))
    );
    fake.inject_message(IncomingMessage::new(dm, &alice, "in private"));
    let message = bot.user_message().await;
    assert_eq!(message.content, "in private");
    assert_eq!(message.guild_id, None);
    // The fake keeps the real content.
    assert_eq!(fake.messages_in(GENERAL)[0].content, "secret plans");
    bot.client.abort();
}

#[tokio::test]
async fn rate_limits_answer_429_with_discords_body_and_headers() {
    let limits = RateLimits {
        message_create: Some(Window::new(2, Duration::from_secs(60))),
        ..RateLimits::OFF
    };
    let fake = started(FakeDiscord::builder().rate_limits(limits)).await;
    let client = reqwest::Client::builder().no_proxy().build().unwrap();
    let url = format!("{}/api/v10/channels/{GENERAL}/messages", fake.api_url());
    let mut statuses = Vec::new();
    let mut last = None;
    for _ in 0..3 {
        let response = client
            .post(&url)
            .header("Authorization", format!("Bot {TOKEN}"))
            .json(&json!({"content": "burst"}))
            .send()
            .await
            .unwrap();
        statuses.push(response.status().as_u16());
        last = Some(response);
    }
    assert_eq!(statuses, [200, 200, 429]);
    let refused = last.unwrap();
    let header = |name: &str| {
        refused
            .headers()
            .get(name)
            .and_then(|value| value.to_str().ok())
            .map(str::to_owned)
    };
    assert_eq!(header("retry-after").as_deref(), Some("60"));
    assert_eq!(header("x-ratelimit-limit").as_deref(), Some("2"));
    assert_eq!(header("x-ratelimit-remaining").as_deref(), Some("0"));
    assert_eq!(header("x-ratelimit-scope").as_deref(), Some("user"));
    assert!(header("x-ratelimit-bucket").is_some());
    let reset_after: f64 = header("x-ratelimit-reset-after").unwrap().parse().unwrap();
    assert!(reset_after > 55.0 && reset_after <= 60.0, "{reset_after}");
    let reset: f64 = header("x-ratelimit-reset").unwrap().parse().unwrap();
    assert!(reset > 1.7e9, "{reset}");
    let body: Value = refused.json().await.unwrap();
    assert_eq!(body["message"], "You are being rate limited.");
    assert_eq!(body["global"], false);
    let retry_after = body["retry_after"].as_f64().unwrap();
    assert!(retry_after > 55.0 && retry_after <= 60.0, "{retry_after}");
    assert_eq!(fake.rate_limited_count(), 1);

    // With serenity's rate limiter off (as with a proxy), the 429 reaches
    // the caller, and serenity cannot decode the body: it has no `code`.
    let error = discord_error(ChannelId::new(GENERAL).say(&http(&fake), "more").await);
    assert_eq!(error.status_code, 429);
    assert_eq!(error.error.code, -1);
    assert!(
        error.error.message.contains("missing field `code`"),
        "{}",
        error.error.message
    );
    assert_eq!(fake.rate_limited_count(), 2);
    // Other channels have their own bucket.
    ChannelId::new(THREAD)
        .say(&http(&fake), "elsewhere")
        .await
        .unwrap();
}

type RawSocket =
    tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

async fn next(socket: &mut RawSocket) -> tungstenite::Message {
    match tokio::time::timeout(EVENT_TIMEOUT, socket.next()).await {
        Ok(Some(Ok(message))) => message,
        other => panic!("no gateway message: {other:?}"),
    }
}

#[tokio::test]
async fn raw_gateway_heartbeats_invalid_sessions_and_close_codes() {
    let fake =
        started(FakeDiscord::builder().heartbeat_interval(Duration::from_millis(1234))).await;
    let url = format!("{}?v=10&encoding=json", fake.gateway_url());
    let (mut socket, _) = tokio_tungstenite::connect_async(&url).await.unwrap();
    let json_of = |message: tungstenite::Message| -> Value {
        serde_json::from_str(message.to_text().unwrap()).unwrap()
    };
    let hello = json_of(next(&mut socket).await);
    assert_eq!(hello["op"], 10);
    assert_eq!(hello["d"]["heartbeat_interval"], 1234);

    socket
        .send(tungstenite::Message::Text(
            json!({"op": 1, "d": null}).to_string(),
        ))
        .await
        .unwrap();
    assert_eq!(json_of(next(&mut socket).await)["op"], 11);

    socket
        .send(tungstenite::Message::Text(
            json!({"op": 6, "d": {"token": TOKEN, "session_id": "unknown", "seq": 3}}).to_string(),
        ))
        .await
        .unwrap();
    let invalid = json_of(next(&mut socket).await);
    assert_eq!(
        (invalid["op"].clone(), invalid["d"].clone()),
        (json!(9), json!(false))
    );

    socket
        .send(tungstenite::Message::Text(
            json!({"op": 2, "d": {"token": "wrong", "intents": 513, "properties": {}}}).to_string(),
        ))
        .await
        .unwrap();
    match next(&mut socket).await {
        tungstenite::Message::Close(Some(frame)) => {
            assert_eq!(u16::from(frame.code), 4004);
            assert_eq!(frame.reason, "Authentication failed.");
        }
        other => panic!("expected a close frame, got {other:?}"),
    }
    let stats = fake.gateway_stats();
    assert_eq!(
        (stats.heartbeats, stats.invalid_sessions, stats.identifies),
        (1, 1, 1)
    );
}

#[tokio::test]
async fn interaction_payloads_deserialise_into_serenitys_models() {
    let fake = started(FakeDiscord::builder()).await;
    let http = http(&fake);
    let alice = alice();
    let dm = fake.dm_channel(&alice);
    let mut bodies = Vec::new();
    for channel in [GENERAL, THREAD, dm] {
        let question = ChannelId::new(channel)
            .send_message(
                &http,
                CreateMessage::new().content("?").components(yes_no("p")),
            )
            .await
            .unwrap();
        bodies.push(
            fake.press_button_http(&alice, question.id.get(), "p:no")
                .body,
        );
    }
    let user_message = fake.inject_message(IncomingMessage::new(dm, &alice, "hello"));
    let reply = fake.inject_message(
        IncomingMessage::new(GENERAL, &alice, "re").reply_to(fake.messages_in(GENERAL)[0].id),
    );
    for body in &bodies {
        let interaction: Interaction =
            serde_json::from_value(body.clone()).unwrap_or_else(|error| panic!("{error}: {body}"));
        let component = interaction.message_component().unwrap();
        assert_eq!(component.user.id, UserId::new(alice.id));
    }
    assert_eq!(bodies[0]["member"]["nick"], "Al");
    assert_eq!(bodies[1]["channel"]["type"], 11);
    assert_eq!(bodies[2]["user"]["username"], "alice");
    assert!(bodies[2].get("member").is_none());
    for id in [user_message, reply] {
        let json = fake.message_json(id).unwrap();
        let message: Message =
            serde_json::from_value(json.clone()).unwrap_or_else(|error| panic!("{error}: {json}"));
        assert_eq!(message.id.get(), id);
    }
    let ping: Interaction = serde_json::from_value(fake.ping_http().body).unwrap();
    assert!(matches!(ping, Interaction::Ping(_)));
}

/// A tiny HTTP interactions endpoint, as an app would run it: checks the
/// signature with serenity's `Verifier`, answers PING with PONG and a press
/// with a message.
async fn endpoint(public_key: String) -> String {
    let verifier = Verifier::new(&public_key);
    let app = axum::Router::new().route(
        "/interactions",
        axum::routing::post(move |headers: HeaderMap, body: Bytes| {
            let verifier = verifier.clone();
            async move {
                let header = |name: &str| {
                    headers
                        .get(name)
                        .and_then(|value| value.to_str().ok())
                        .unwrap_or_default()
                        .to_owned()
                };
                if verifier
                    .verify(
                        &header(fake::SIGNATURE_HEADER),
                        &header(fake::TIMESTAMP_HEADER),
                        &body,
                    )
                    .is_err()
                {
                    return (
                        StatusCode::UNAUTHORIZED,
                        axum::Json(json!({"error": "bad signature"})),
                    );
                }
                let interaction: Interaction = serde_json::from_slice(&body).unwrap();
                let answer = match interaction {
                    Interaction::Ping(_) => json!({"type": 1}),
                    _ => json!({"type": 4, "data": {"content": "Thanks!", "flags": 64}}),
                };
                (StatusCode::OK, axum::Json(answer))
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/interactions", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    url
}

#[tokio::test]
async fn http_interactions_are_signed_like_discords() {
    let fake = started(FakeDiscord::builder()).await;
    let url = endpoint(fake.public_key_hex()).await;
    let question = ChannelId::new(GENERAL)
        .send_message(
            &http(&fake),
            CreateMessage::new().content("?").components(yes_no("h")),
        )
        .await
        .unwrap();

    let ping = fake.ping_http();
    let delivered = fake.deliver_http_interaction(&url, &ping).await;
    assert_eq!(delivered.status, 200);
    assert_eq!(delivered.inline_response, Some(Ok(())));
    assert_eq!(fake.interaction(ping.id).unwrap().response.unwrap().kind, 1);

    let press = fake.press_button_http(&alice(), question.id.get(), "h:yes");
    let delivered = fake.deliver_http_interaction(&url, &press).await;
    assert_eq!(delivered.inline_response, Some(Ok(())));
    let response = fake.interaction(press.id).unwrap().response.unwrap();
    assert!(response.inline && response.is_ephemeral());
    assert_eq!(fake.notices_for(alice().id)[0].text, "Thanks!");

    // Signed by someone else: the endpoint refuses it.
    let forged = fake::InteractionSigner::from_seed([9; 32]).sign_now(&press.body_bytes());
    let status = reqwest::Client::builder()
        .no_proxy()
        .build()
        .unwrap()
        .post(&url)
        .header(fake::SIGNATURE_HEADER, forged.signature)
        .header(fake::TIMESTAMP_HEADER, forged.timestamp)
        .body(press.body_bytes())
        .send()
        .await
        .unwrap()
        .status();
    assert_eq!(status, 401);
    let signed = fake.sign(&press);
    assert!(
        Verifier::new(&fake.public_key_hex())
            .verify(&signed.signature, &signed.timestamp, &press.body_bytes())
            .is_ok()
    );
}

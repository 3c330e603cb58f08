//! The email channel end to end against real mail servers
//! (`askbridge_testkit::mail`): a private Dovecot holds the bot's mailbox
//! (IMAP with IDLE; the person's replies are delivered into it by LMTP),
//! aiosmtpd records what askbridge sends, and the real daemon sits
//! between them. An agent asks over HTTP; the person replies by mail.
//!
//! Nothing sleeps: mails are handled in the order they arrive, so a mail
//! delivered after others is handled after them, and the agent's side
//! long-polls.

mod daemon;

use askbridge_testkit::mail::{Dovecot, DovecotOptions, SentMail, SmtpSink};
use daemon::{Api, Builder, Daemon, create, outcome, status};
use serde_json::{Value, json};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

const ALICE: &str = "alice@example.com";

/// How long a line the daemon logged may take to reach the test.
const LOGGED: Duration = Duration::from_secs(10);

/// A daemon sending through the sink and reading Dovecot's mailbox.
struct World {
    dovecot: Dovecot,
    smtp: SmtpSink,
    daemon: Daemon,
}

impl World {
    async fn new() -> World {
        World::with(|builder| builder).await
    }

    async fn with(configure: impl FnOnce(Builder) -> Builder) -> World {
        World::with_mailbox(|builder, _| configure(builder)).await
    }

    /// A daemon configured by `configure`, which may see the mailbox.
    async fn with_mailbox(configure: impl FnOnce(Builder, &Dovecot) -> Builder) -> World {
        let dovecot = Dovecot::start_with(DovecotOptions {
            folders: vec!["Processed".to_owned()],
        })
        .await;
        let smtp = SmtpSink::start_requiring("bot@example.com", "smtp-secret").await;
        let builder = Daemon::builder()
            .env(
                "ASKBRIDGE_EMAIL_SMTP_URL",
                format!("smtp://bot%40example.com@127.0.0.1:{}", smtp.port()),
            )
            .env("EMAIL_SMTP_PASSWORD", "smtp-secret")
            .env("ASKBRIDGE_EMAIL_IMAP_URL", dovecot.imap_url())
            .env("EMAIL_IMAP_PASSWORD", dovecot.password())
            .env("ASKBRIDGE_EMAIL_FROM", "askbridge <bot@example.com>");
        let daemon = configure(builder, &dovecot).start();
        World {
            dovecot,
            smtp,
            daemon,
        }
    }

    /// The `n`-th mail askbridge sent (from 0), waiting for it.
    async fn sent(&self, n: usize) -> SentMail {
        self.smtp.wait_for(n + 1).await.swap_remove(n)
    }
}

fn deploy_ask() -> Value {
    json!({
        "to": format!("email:{ALICE}"),
        "questions": [{
            "id": "env", "header": "Deploy", "question": "Where should I deploy?",
            "options": ["Staging (Recommended)", "Production", "Canary"]
        }]
    })
}

/// A mail's `Message-ID`, without its angle brackets.
fn message_id(mail: &SentMail) -> String {
    let id = mail.header("Message-ID").expect("a Message-ID");
    id.trim().trim_matches(['<', '>']).to_owned()
}

/// A reply by `from` to the mail `to` (`None`: a new mail), sent to
/// `recipient`, saying `body`; `extra` headers first.
fn reply(from: &str, recipient: &str, to: Option<&str>, extra: &str, body: &str) -> Vec<u8> {
    let threading = match to {
        Some(id) => format!("In-Reply-To: <{id}>\r\nReferences: <{id}>\r\n"),
        None => String::new(),
    };
    let n = rand_id();
    format!(
        "{extra}From: {from}\r\nTo: {recipient}\r\nSubject: Re: [askbridge] Deploy\r\n\
         Message-ID: <reply-{n}@example.com>\r\n{threading}Date: Mon, 7 Dec 2026 10:00:00 +0000\r\n\
         MIME-Version: 1.0\r\nContent-Type: text/plain; charset=utf-8\r\n\r\n{body}\r\n"
    )
    .into_bytes()
}

fn rand_id() -> String {
    uuid::Uuid::new_v4().simple().to_string()
}

/// The text of a mail's `text/plain` part.
fn text_of(mail: &SentMail) -> String {
    String::from_utf8_lossy(&mail.raw).replace("=\r\n", "")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn email_an_ask_is_a_mail_and_a_reply_below_the_quote_answers_it() {
    let world =
        World::with(|builder| builder.env("ASKBRIDGE_EMAIL_PROCESSED_FOLDER", "Processed")).await;
    let id = create(&world.daemon, &deploy_ask()).await;

    let question = world.sent(0).await;
    assert_eq!(question.to, [ALICE]);
    assert_eq!(question.login.as_deref(), Some("bot@example.com"));
    assert_eq!(
        question.header("Subject").as_deref(),
        Some("[askbridge] Deploy: Where should I deploy?")
    );
    assert_eq!(
        question.header("Auto-Submitted").as_deref(),
        Some("auto-generated")
    );
    let reply_to = question.header("Reply-To").expect("a Reply-To");
    assert!(reply_to.starts_with("bot+"), "{reply_to}");
    let text = text_of(&question);
    assert!(text.contains("multipart/alternative"), "{text}");
    assert!(text.contains("text/html"), "{text}");
    assert!(text.contains("Where should I deploy?"), "{text}");

    // Below a quote of the question, whose numbers must not answer.
    let asked = message_id(&question);
    let answer = reply(
        "Alice <alice@example.com>",
        &reply_to,
        Some(&asked),
        "",
        "On Mon, 7 Dec 2026 at 09:00, askbridge <bot@example.com> wrote:\r\n\
         > Where should I deploy?\r\n> 1. Staging\r\n> 3. Canary\r\n\r\nProduction, please.\r\n\r\n-- \r\nAlice",
    );
    world.dovecot.deliver(&answer).await;
    let done = outcome(&world.daemon, &id).await;
    assert_eq!(done["answers"], json!({"env": ["Production"]}));
    assert_eq!(done["answeredBy"]["userId"], ALICE);
    assert_eq!(done["answeredBy"]["name"], "Alice");

    // The closing line is a mail in the question's thread.
    let closing = world.sent(1).await;
    assert_eq!(closing.to, [ALICE]);
    assert_eq!(
        closing.header("In-Reply-To").as_deref(),
        Some(format!("<{asked}>").as_str())
    );
    assert_eq!(
        closing.header("Subject").as_deref(),
        Some("Re: [askbridge] Deploy: Where should I deploy?")
    );
    assert!(
        text_of(&closing).contains("Production"),
        "{}",
        text_of(&closing)
    );

    // The reply is kept, flagged, in the processed folder.
    let kept = world
        .dovecot
        .wait_for("Processed", |mails| {
            mails.iter().find(|m| m.has_flag("\\Flagged")).cloned()
        })
        .await;
    assert!(kept.has_flag("\\Seen"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn email_forgers_and_robots_are_not_answers_and_are_never_answered() {
    let world = World::new().await;
    let id = create(&world.daemon, &deploy_ask()).await;
    let question = world.sent(0).await;
    let asked = message_id(&question);
    let reply_to = question.header("Reply-To").expect("a Reply-To");

    // Someone else, in the question's thread.
    let forged = reply("mallory@example.com", &reply_to, Some(&asked), "", "3");
    world.dovecot.deliver(&forged).await;
    // Someone else, with Alice's address as a second sender: neither is
    // taken.
    for (extra, from) in [
        ("From: mallory@example.com\r\n", ALICE),
        ("", "<alice@example.com>, Mallory <mallory@example.com>"),
    ] {
        let two = reply(from, &reply_to, Some(&asked), extra, "3");
        world.dovecot.deliver(&two).await;
    }
    // Alice's out-of-office.
    let away = reply(
        ALICE,
        &reply_to,
        Some(&asked),
        "Auto-Submitted: auto-replied\r\n",
        "I am away until Monday.",
    );
    world.dovecot.deliver(&away).await;
    // A new mail (no thread headers) to the ask's own address, on top of
    // a quote: the plus-address names the ask.
    let answer = reply(
        ALICE,
        &reply_to,
        None,
        "",
        "1\r\n\r\nSent from my iPhone\r\n\r\n> 2. Production\r\n",
    );
    world.dovecot.deliver(&answer).await;

    let done = outcome(&world.daemon, &id).await;
    assert_eq!(done["answers"], json!({"env": ["Staging (Recommended)"]}));
    assert_eq!(done["answeredBy"]["userId"], ALICE);
    // Only the question and its closing line went out: nobody else was
    // told anything.
    let closing = world.sent(1).await;
    assert_eq!(closing.to, [ALICE]);
    assert!(world.smtp.sent().iter().all(|mail| mail.to == [ALICE]));
    assert_eq!(world.smtp.sent().len(), 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn email_with_require_authentication_only_a_dmarc_pass_of_the_trusted_server_counts() {
    let world = World::with(|builder| {
        builder
            .env("ASKBRIDGE_EMAIL_REQUIRE_AUTHENTICATION", "true")
            .env("ASKBRIDGE_EMAIL_TRUSTED_AUTHSERV_ID", "mx.example.com")
    })
    .await;
    let id = create(&world.daemon, &deploy_ask()).await;
    let asked = message_id(&world.sent(0).await);
    let result = |server: &str, dmarc: &str, domain: &str| {
        format!(
            "Authentication-Results: {server}; spf=pass; dmarc={dmarc} header.from={domain}\r\n"
        )
    };
    let results = |server: &str, dmarc: &str| result(server, dmarc, "example.com");
    let trusted = results("mx.example.com", "pass");
    // Each answers Canary, and none counts.
    for (headers, from) in [
        (results("mx.example.com", "fail"), ALICE),
        (results("mx.attacker.example", "pass"), ALICE),
        // A forged From, with no authentication at all.
        (String::new(), ALICE),
        // The attacker's own domain passed; the From is Alice's.
        (result("mx.example.com", "pass", "evil.example"), ALICE),
        // A trusted-looking pass below a topmost result of another's.
        (
            format!("{}{trusted}", results("mx.attacker.example", "none")),
            ALICE,
        ),
        // A pass, and a second From or a second address besides Alice's.
        (format!("{trusted}From: mallory@evil.example\r\n"), ALICE),
        (
            trusted.clone(),
            "<alice@example.com>, Mallory <mallory@evil.example>",
        ),
    ] {
        let mail = reply(from, "bot@example.com", Some(&asked), &headers, "3");
        world.dovecot.deliver(&mail).await;
    }
    let passed = reply(ALICE, "bot@example.com", Some(&asked), &trusted, "staging");
    world.dovecot.deliver(&passed).await;
    let done = outcome(&world.daemon, &id).await;
    assert_eq!(done["answers"], json!({"env": ["Staging (Recommended)"]}));
    assert_eq!(status(&world.daemon, &id).await["status"], "answered");
    // Each refusal says why.
    for reason in [
        "the trusted server's DMARC result is fail, not pass",
        "the topmost Authentication-Results header is \"mx.attacker.example\"'s",
        "the mail has no Authentication-Results header",
        "dmarc=pass is for header.from=evil.example, not the sender's domain",
        "the mail has 2 From headers; a reply has one",
        "the mail's From names 2 addresses; a reply has one sender",
    ] {
        world.daemon.wait_for_log(reason, LOGGED);
    }
    // Only the question and its closing line went out.
    assert_eq!(world.smtp.wait_for(2).await.len(), 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn email_a_reply_that_came_while_askbridge_was_down_is_handled_once_after_the_restart() {
    let mut world = World::new().await;
    let first = create(&world.daemon, &deploy_ask()).await;
    let asked = message_id(&world.sent(0).await);
    world.daemon.kill();
    let answer = reply(ALICE, "bot@example.com", Some(&asked), "", "canary");
    world.dovecot.deliver(&answer).await;
    world.daemon.restart();
    let done = outcome(&world.daemon, &first).await;
    assert_eq!(done["answers"], json!({"env": ["Canary"]}));
    world.sent(1).await;

    // Restarted again: the reply is not read again (the next ask is not
    // answered by it, and nothing more is said about the first).
    world.daemon.kill();
    world.daemon.restart();
    let second = create(&world.daemon, &deploy_ask()).await;
    let asked = message_id(&world.sent(2).await);
    let answer = reply(ALICE, "bot@example.com", Some(&asked), "", "2");
    world.dovecot.deliver(&answer).await;
    let done = outcome(&world.daemon, &second).await;
    assert_eq!(done["answers"], json!({"env": ["Production"]}));
    let sent = world.smtp.wait_for(4).await;
    assert_eq!(sent.len(), 4, "two questions and their closing lines");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn email_the_mailbox_server_restarted_is_reconnected_to_and_nothing_is_lost() {
    let mut world = World::new().await;
    let id = create(&world.daemon, &deploy_ask()).await;
    let asked = message_id(&world.sent(0).await);
    world.dovecot.restart().await;
    let answer = reply(ALICE, "bot@example.com", Some(&asked), "", "Canary");
    world.dovecot.deliver(&answer).await;
    let done = outcome(&world.daemon, &id).await;
    assert_eq!(done["answers"], json!({"env": ["Canary"]}));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn email_two_questions_answered_in_two_mails_the_second_asked_again_in_the_thread() {
    let world = World::new().await;
    let id = create(
        &world.daemon,
        &json!({
            "to": format!("email:{ALICE}"),
            "questions": [
                {"id": "env", "header": "部署", "question": "部署到哪里？", "options": ["预发布", "生产"]},
                {"id": "notify", "header": "Notify", "question": "Who should be told?",
                 "options": ["Team", "On-call", "Nobody"], "multiSelect": true}
            ]
        }),
    )
    .await;
    let question = world.sent(0).await;
    let asked = message_id(&question);
    // The header is left out where the question starts with it.
    let read = askbridge_email::parse::mail(&question.raw).expect("a mail");
    assert_eq!(
        read.subject.as_deref(),
        Some("[askbridge] 部署到哪里？ (+1 more)")
    );

    // The first answer in GB2312, base64: the first question only.
    let (body, _, _) = encoding_rs::GB18030.encode("Q1: 生产\r\n");
    let gb2312 = format!(
        "From: {ALICE}\r\nTo: bot@example.com\r\nSubject: Re: deploy\r\n\
         Message-ID: <gb-{}@example.com>\r\nIn-Reply-To: <{asked}>\r\nMIME-Version: 1.0\r\n\
         Content-Type: text/plain; charset=gb2312\r\nContent-Transfer-Encoding: base64\r\n\r\n{}\r\n",
        rand_id(),
        base64::Engine::encode(&base64::engine::general_purpose::STANDARD, &body)
    );
    world.dovecot.deliver(gb2312.as_bytes()).await;
    // What is still open is asked again, in the thread.
    let again = world.sent(1).await;
    assert!(
        again
            .header("In-Reply-To")
            .is_some_and(|id| id.contains("gb-")),
        "{again:?}"
    );
    assert!(
        text_of(&again).contains("Who should be told?"),
        "{}",
        text_of(&again)
    );
    assert_eq!(status(&world.daemon, &id).await["status"], "pending");

    // A reply to the re-ask: its thread goes back to the question, even
    // with another ask of Alice's open meanwhile.
    let other = create(&world.daemon, &deploy_ask()).await;
    world.sent(2).await;
    let second = reply(
        ALICE,
        "bot@example.com",
        Some(&message_id(&again)),
        "",
        "Q2: 1, 2",
    );
    world.dovecot.deliver(&second).await;
    let done = outcome(&world.daemon, &id).await;
    assert_eq!(
        done["answers"],
        json!({"env": ["生产"], "notify": ["Team", "On-call"]})
    );
    assert_eq!(status(&world.daemon, &other).await["status"], "pending");
}

/// The link of the mail's one-click answer `label` (its HTML part's).
fn link(mail: &SentMail, label: &str) -> String {
    let raw = String::from_utf8_lossy(&mail.raw)
        .replace("=\r\n", "")
        .replace("=3D", "=");
    let end = raw
        .find(&format!("\">{label}</a>"))
        .unwrap_or_else(|| panic!("no link {label:?} in {raw}"));
    let start = raw[..end].rfind("href=\"").expect("its href") + "href=\"".len();
    raw[start..end].replace("&amp;", "&")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn email_a_one_click_link_shows_a_confirmation_and_only_its_post_answers() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .expect("a free port")
        .port();
    let base = format!("http://127.0.0.1:{port}");
    let world = World::with(|builder| {
        builder
            .listen(&format!("127.0.0.1:{port}"))
            .env("ASKBRIDGE_PUBLIC_URL", &base)
    })
    .await;
    let id = create(&world.daemon, &deploy_ask()).await;
    let question = world.sent(0).await;
    let production = link(&question, "Production");
    assert!(
        production.starts_with(&format!(
            "{base}/email/answer/{id}/1?to=alice%40example.com&exp="
        )),
        "{production}"
    );
    let http = daemon::client();

    // Opening it (as a mail scanner would) changes nothing.
    let page = http.get(&production).send().await.expect("GET");
    assert_eq!(page.status(), 200);
    let text = page.text().await.expect("a page");
    assert!(
        text.contains("Answer “Production”?") && text.contains("Confirm"),
        "{text}"
    );
    assert_eq!(status(&world.daemon, &id).await["status"], "pending");

    // Changed, it counts for nothing.
    let canary = production.replacen(&format!("/{id}/1?"), &format!("/{id}/2?"), 1);
    for tampered in [canary, production.replace("alice%40", "mallory%40")] {
        let refused = http.post(&tampered).send().await.expect("POST");
        assert_eq!(refused.status(), 403, "{tampered}");
    }
    assert_eq!(status(&world.daemon, &id).await["status"], "pending");

    let answered = http.post(&production).send().await.expect("POST");
    assert_eq!(answered.status(), 200);
    let text = answered.text().await.expect("a page");
    assert!(text.contains("✅ Answered: Production"), "{text}");
    let done = outcome(&world.daemon, &id).await;
    assert_eq!(done["answers"], json!({"env": ["Production"]}));
    assert_eq!(done["answeredBy"]["userId"], ALICE);

    // Once answered, the link takes nothing more.
    let again = http
        .post(link(&question, "Canary"))
        .send()
        .await
        .expect("POST");
    assert_eq!(again.status(), 409);
    assert_eq!(
        outcome(&world.daemon, &id).await["answers"],
        json!({"env": ["Production"]})
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn email_an_allowed_sender_answers_in_the_thread_for_the_person_asked() {
    let world =
        World::with(|builder| builder.env("ASKBRIDGE_EMAIL_ALLOWED_SENDERS", "Deputy@example.com"))
            .await;
    let id = create(&world.daemon, &deploy_ask()).await;
    let asked = message_id(&world.sent(0).await);
    // Not allowed: nothing. Allowed, in the thread: the answer.
    let mallory = reply(
        "mallory@example.com",
        "bot@example.com",
        Some(&asked),
        "",
        "3",
    );
    world.dovecot.deliver(&mallory).await;
    let deputy = reply(
        "Dee Puty <deputy@example.com>",
        "bot@example.com",
        Some(&asked),
        "",
        "2",
    );
    world.dovecot.deliver(&deputy).await;
    let done = outcome(&world.daemon, &id).await;
    assert_eq!(done["answers"], json!({"env": ["Production"]}));
    assert_eq!(done["answeredBy"]["userId"], "deputy@example.com");
    assert_eq!(done["answeredBy"]["name"], "Dee Puty");
}

/// A TCP proxy on 127.0.0.1 to `port`: its own port, and how many bytes
/// the server has sent through it so far. Call inside the runtime.
fn counting_proxy(port: u16) -> (u16, Arc<AtomicUsize>) {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind the proxy");
    listener
        .set_nonblocking(true)
        .expect("a non-blocking socket");
    let listener = tokio::net::TcpListener::from_std(listener).expect("a tokio listener");
    let proxy = listener.local_addr().expect("the proxy's address").port();
    let sent = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&sent);
    tokio::spawn(async move {
        while let Ok((client, _)) = listener.accept().await {
            let counter = Arc::clone(&counter);
            tokio::spawn(async move {
                let Ok(server) = tokio::net::TcpStream::connect(("127.0.0.1", port)).await else {
                    return;
                };
                let (mut client_read, mut client_write) = client.into_split();
                let (mut server_read, mut server_write) = server.into_split();
                let up = tokio::io::copy(&mut client_read, &mut server_write);
                let down = async {
                    let mut buffer = vec![0; 64 * 1024];
                    loop {
                        let n = match server_read.read(&mut buffer).await {
                            Ok(0) | Err(_) => break,
                            Ok(n) => n,
                        };
                        counter.fetch_add(n, Ordering::SeqCst);
                        if client_write.write_all(&buffer[..n]).await.is_err() {
                            break;
                        }
                    }
                };
                let _ = tokio::join!(up, down);
            });
        }
    });
    (proxy, sent)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn email_a_mail_over_the_size_limit_is_skipped_unfetched_and_the_next_is_answered() {
    let mut through = None;
    let world = World::with_mailbox(|builder, dovecot| {
        // The bot reads the mailbox through a proxy that counts what
        // Dovecot sends it.
        let (port, sent) = counting_proxy(dovecot.imap_port());
        through = Some(sent);
        builder
            .env(
                "ASKBRIDGE_EMAIL_IMAP_URL",
                format!("imap://bot%40example.com@127.0.0.1:{port}"),
            )
            .env("ASKBRIDGE_EMAIL_PROCESSED_FOLDER", "Processed")
    })
    .await;
    let sent = through.expect("the proxy");
    let id = create(&world.daemon, &deploy_ask()).await;
    let asked = message_id(&world.sent(0).await);

    // Four MiB of attachment under "3", in the thread, then "staging".
    let limit = askbridge_email::parse::MAX_MAIL_BYTES;
    let attachment = "A".repeat(76);
    let lines = 4 * limit / 78;
    let big = format!(
        "3\r\n\r\n{}",
        std::iter::repeat_n(attachment.as_str(), lines)
            .collect::<Vec<_>>()
            .join("\r\n")
    );
    let big = reply(ALICE, "bot@example.com", Some(&asked), "", &big);
    assert!(big.len() > 4 * limit - 1024, "{}", big.len());
    world.dovecot.deliver(&big).await;
    let small = reply(ALICE, "bot@example.com", Some(&asked), "", "staging");
    world.dovecot.deliver(&small).await;

    let done = outcome(&world.daemon, &id).await;
    assert_eq!(done["answers"], json!({"env": ["Staging (Recommended)"]}));
    world
        .daemon
        .wait_for_log("a mail over the size limit skipped, not fetched", LOGGED);
    // The big mail is marked processed and moved, like any mail read.
    let skipped = world
        .dovecot
        .wait_for("Processed", |mails| {
            mails
                .iter()
                .find(|mail| mail.raw.len() > limit && mail.has_flag("\\Flagged"))
                .cloned()
        })
        .await;
    assert!(skipped.has_flag("\\Seen"));
    // And it never came down whole: less than the limit went through.
    let through = sent.load(Ordering::SeqCst);
    assert!(through < limit, "{through} bytes fetched");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn email_an_approval_is_answered_only_by_its_person_replying_in_its_thread() {
    // Without require_authentication, email cannot carry an approval at all.
    let plain = World::new().await;
    let mut approval = deploy_ask();
    approval["approval"] = json!(true);
    let refused = Api::of(&plain.daemon)
        .http
        .post(plain.daemon.url("/v1/asks"))
        .json(&approval)
        .send()
        .await
        .expect("the daemon answers");
    assert_eq!(refused.status(), 422);
    let body: Value = refused.json().await.expect("JSON");
    assert!(
        body["error"]["message"]
            .as_str()
            .is_some_and(|message| message.contains("require_authentication")),
        "{body}"
    );

    let world = World::with(|builder| {
        builder
            .env("ASKBRIDGE_EMAIL_REQUIRE_AUTHENTICATION", "true")
            .env("ASKBRIDGE_EMAIL_TRUSTED_AUTHSERV_ID", "mx.example.com")
            .env("ASKBRIDGE_EMAIL_ALLOWED_SENDERS", "deputy@example.com")
    })
    .await;
    let pass = |domain: &str| {
        format!("Authentication-Results: mx.example.com; dmarc=pass header.from={domain}\r\n")
    };
    let id = create(&world.daemon, &approval).await;
    let asked = message_id(&world.sent(0).await);
    // Alice's own authenticated mail, but in no thread: never "the newest
    // open ask" for an approval.
    let bare = reply(ALICE, "bot@example.com", None, &pass("example.com"), "3");
    world.dovecot.deliver(&bare).await;
    // Someone allowed to answer for others, in the thread: not for an
    // approval, which only its person gives.
    let deputy = reply(
        "deputy@example.com",
        "bot@example.com",
        Some(&asked),
        &pass("example.com"),
        "3",
    );
    world.dovecot.deliver(&deputy).await;
    let alice = reply(
        ALICE,
        "bot@example.com",
        Some(&asked),
        &pass("example.com"),
        "1",
    );
    world.dovecot.deliver(&alice).await;
    let done = outcome(&world.daemon, &id).await;
    assert_eq!(
        done["answers"],
        json!({"env": ["Staging (Recommended)"]}),
        "{done}"
    );
    assert_eq!(done["answeredBy"]["userId"], ALICE);
}

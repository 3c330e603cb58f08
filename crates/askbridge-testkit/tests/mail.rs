//! Self-tests of the mail fixture: a real Dovecot and a real SMTP server
//! (aiosmtpd), driven by the clients the email channel is built on:
//! async-imap (plain TCP, tokio) and lettre (tokio, no TLS).

use std::time::{Duration, Instant};

use askbridge_testkit::mail::{Dovecot, DovecotOptions, Message, SmtpSink};
use async_imap::extensions::idle::IdleResponse;
use async_imap::imap_proto::{MailboxDatum, Response};
use futures_util::TryStreamExt;
use lettre::transport::smtp::authentication::Credentials;
use lettre::{AsyncSmtpTransport, AsyncTransport, Tokio1Executor};
use tokio::net::TcpStream;

/// How long a test waits for anything.
const WAIT: Duration = Duration::from_secs(20);

/// A session of the IMAP client the email channel uses.
type Session = async_imap::Session<TcpStream>;

fn mail(subject: &str, body: &str) -> Vec<u8> {
    format!(
        "From: Person <person@example.org>\n\
         To: bot@example.com\n\
         Subject: {subject}\n\
         Message-ID: <{subject}@example.org>\n\
         \n\
         {body}\n"
    )
    .into_bytes()
}

fn text(message: &Message) -> String {
    String::from_utf8_lossy(&message.raw).into_owned()
}

/// Logs in with async-imap over plain TCP: the greeting is read by hand
/// (`Client::new` does not), then `LOGIN`.
async fn log_in(dovecot: &Dovecot, password: &str) -> async_imap::error::Result<Session> {
    let tcp = TcpStream::connect(("127.0.0.1", dovecot.imap_port())).await?;
    let mut client = async_imap::Client::new(tcp);
    let greeting = client.read_response().await?.expect("a greeting");
    assert!(
        matches!(greeting.parsed(), Response::Data { .. }),
        "greeting: {:?}",
        greeting.parsed()
    );
    client
        .login(dovecot.user(), password)
        .await
        .map_err(|(error, _client)| error)
}

#[tokio::test]
async fn a_delivered_mail_is_read_back_over_imap() {
    let dovecot = Dovecot::start().await;
    dovecot
        .deliver(&mail("first", "Hello.\n.dotted line"))
        .await;
    dovecot
        .deliver_to("bot+abc@example.com", &mail("second", "Plus-addressed."))
        .await;

    let inbox = dovecot.messages("INBOX").await;
    assert_eq!(inbox.len(), 2, "{inbox:#?}");
    assert_eq!(
        inbox.iter().map(|m| m.uid).collect::<Vec<_>>(),
        [1, 2],
        "UIDs"
    );
    let first = &inbox[0];
    assert_eq!(first.header("Subject").as_deref(), Some("first"));
    assert_eq!(
        first.header("Return-Path").as_deref(),
        Some("<person@example.org>")
    );
    assert!(
        text(first).contains("\r\n\r\nHello.\r\n.dotted line\r\n"),
        "{}",
        text(first)
    );
    assert!(
        first.flags.is_empty(),
        "unread and unflagged: {:?}",
        first.flags
    );
    let second = &inbox[1];
    assert_eq!(second.header("Subject").as_deref(), Some("second"));
    assert_eq!(
        second.header("Delivered-To").as_deref(),
        Some("bot+abc@example.com")
    );

    // The configuration draws no complaint.
    let log = std::fs::read_to_string(dovecot.log_path()).expect("Dovecot's log");
    assert!(log.contains("starting up for imap, lmtp"), "{log}");
    assert!(
        !log.contains("Warning:") && !log.contains("Error:") && !log.contains("Fatal:"),
        "{log}"
    );

    // Reading did not mark anything read.
    assert!(
        dovecot
            .messages("INBOX")
            .await
            .iter()
            .all(|m| !m.has_flag("\\Seen"))
    );
}

#[tokio::test]
async fn async_imap_idle_hears_a_delivery() {
    let dovecot = Dovecot::start().await;
    let mut session = log_in(&dovecot, dovecot.password())
        .await
        .expect("log in with async-imap");
    let inbox = session.select("INBOX").await.expect("SELECT INBOX");
    assert_eq!(inbox.exists, 0);
    let uid_validity = inbox.uid_validity.expect("a UIDVALIDITY");

    let mut idle = session.idle();
    idle.init().await.expect("IDLE");
    let (heard, _stop) = idle.wait_with_timeout(WAIT);
    let wake_up = mail("idle", "Wake up.");
    let delivered = Instant::now();
    let delivery = async {
        dovecot.deliver(&wake_up).await;
        delivered.elapsed()
    };
    let (heard, delivery) = tokio::join!(heard, delivery);
    let latency = delivered.elapsed();
    match heard.expect("IDLE's answer") {
        IdleResponse::NewData(data) => assert!(
            matches!(
                data.parsed(),
                Response::MailboxData(MailboxDatum::Exists(1))
            ),
            "expected `* 1 EXISTS`, got {:?}",
            data.parsed()
        ),
        other => panic!("expected new data, got {other:?}"),
    }
    // Dovecot reports a change to an IDLE session half a second after it
    // sees it (its NOTIFY_DELAY_MSECS), to batch changes.
    eprintln!(
        "IDLE heard the delivery {latency:.2?} after it began; the delivery took {delivery:.2?}"
    );
    let mut session = idle.done().await.expect("DONE");

    let fetched: Vec<_> = session
        .uid_fetch("1:*", "(UID FLAGS BODY.PEEK[])")
        .await
        .expect("UID FETCH")
        .try_collect()
        .await
        .expect("the fetched messages");
    assert_eq!(fetched.len(), 1);
    assert_eq!(fetched[0].uid, Some(1));
    let body = String::from_utf8_lossy(fetched[0].body().expect("BODY[]"));
    assert!(body.contains("Subject: idle"), "{body}");
    assert_eq!(
        session.select("INBOX").await.expect("SELECT").uid_validity,
        Some(uid_validity)
    );
    session.logout().await.expect("LOGOUT");
}

#[tokio::test]
#[should_panic(expected = "reading Nowhere over IMAP failed")]
async fn reading_a_missing_folder_fails_the_test() {
    let dovecot = Dovecot::start().await;
    dovecot.messages("Nowhere").await;
}

#[tokio::test]
async fn a_wrong_password_is_refused() {
    let dovecot = Dovecot::start().await;
    let error = log_in(&dovecot, "not-the-password")
        .await
        .expect_err("a wrong password");
    assert!(
        matches!(error, async_imap::error::Error::No(_)),
        "expected NO, got {error:?}"
    );
}

#[tokio::test]
async fn wait_for_sees_the_mail_marked_read_and_moved_to_processed() {
    let dovecot = Dovecot::start_with(DovecotOptions {
        folders: vec!["Processed".to_owned()],
    })
    .await;
    assert!(dovecot.messages("Processed").await.is_empty());
    dovecot.deliver(&mail("reply", "Yes.")).await;

    let mut session = log_in(&dovecot, dovecot.password())
        .await
        .expect("log in with async-imap");
    session.select("INBOX").await.expect("SELECT INBOX");
    let waited = dovecot.wait_for("INBOX", |messages| {
        messages
            .first()
            .is_some_and(|m| m.has_flag("\\Seen"))
            .then_some(())
    });
    let marked = async {
        let _: Vec<_> = session
            .uid_store("1", "+FLAGS (\\Seen)")
            .await
            .expect("UID STORE")
            .try_collect()
            .await
            .expect("its answer");
    };
    tokio::join!(waited, marked);

    let waited = dovecot.wait_for("Processed", |messages| {
        (messages.len() == 1).then(|| messages[0].clone())
    });
    let moved = async { session.uid_mv("1", "Processed").await.expect("UID MOVE") };
    let (processed, ()) = tokio::join!(waited, moved);
    assert_eq!(processed.header("Subject").as_deref(), Some("reply"));
    assert!(processed.has_flag("\\Seen"), "{:?}", processed.flags);
    assert!(dovecot.messages("INBOX").await.is_empty());
    session.logout().await.expect("LOGOUT");
}

#[tokio::test]
async fn a_restart_cuts_connections_and_keeps_the_mail() {
    let mut dovecot = Dovecot::start().await;
    dovecot.deliver(&mail("kept", "Still here.")).await;
    let mut session = log_in(&dovecot, dovecot.password())
        .await
        .expect("log in with async-imap");
    let uid_validity = session.select("INBOX").await.expect("SELECT").uid_validity;
    let mut idle = session.idle();
    idle.init().await.expect("IDLE");

    let began = Instant::now();
    dovecot.restart().await;
    eprintln!("restart: {:.2?}", began.elapsed());

    // The IDLE connection was cut: async-imap ends the wait, or fails.
    let (ended, _stop) = idle.wait_with_timeout(WAIT);
    let ended = tokio::time::timeout(WAIT, ended)
        .await
        .expect("the cut connection noticed");
    eprintln!("async-imap's IDLE wait on the cut connection: {ended:?}");
    assert!(
        !matches!(
            ended,
            Ok(IdleResponse::NewData(_)) | Ok(IdleResponse::Timeout)
        ),
        "expected the connection to end, got {ended:?}"
    );
    assert!(idle.done().await.is_err(), "DONE on a cut connection");

    let inbox = dovecot.messages("INBOX").await;
    assert_eq!(inbox.len(), 1);
    assert_eq!(inbox[0].uid, 1);
    assert_eq!(inbox[0].header("Subject").as_deref(), Some("kept"));
    let mut session = log_in(&dovecot, dovecot.password())
        .await
        .expect("log in again after the restart");
    assert_eq!(
        session.select("INBOX").await.expect("SELECT").uid_validity,
        uid_validity,
        "UIDVALIDITY survives a restart"
    );
    dovecot.deliver(&mail("after", "New.")).await;
    assert_eq!(dovecot.messages("INBOX").await.len(), 2);
}

fn lettre_message(subject: &str) -> lettre::Message {
    lettre::Message::builder()
        .from("Bot <bot@example.com>".parse().expect("an address"))
        .to("Person <person@example.org>".parse().expect("an address"))
        .subject(subject)
        .body("Which one?\r\n.leading dot".to_owned())
        .expect("a message")
}

#[tokio::test]
async fn the_smtp_sink_records_a_mail_sent_by_lettre() {
    let sink = SmtpSink::start().await;
    assert!(sink.url().starts_with("smtp://127.0.0.1:"));
    let transport = AsyncSmtpTransport::<Tokio1Executor>::builder_dangerous("127.0.0.1")
        .port(sink.port())
        .build();
    transport
        .send(lettre_message("question"))
        .await
        .expect("send");

    let sent = sink.wait_for(1).await;
    assert_eq!(sent.len(), 1);
    assert_eq!(sent[0].from, "bot@example.com");
    assert_eq!(sent[0].to, ["person@example.org"]);
    assert_eq!(sent[0].login, None);
    assert_eq!(sent[0].header("Subject").as_deref(), Some("question"));
    let raw = String::from_utf8_lossy(&sent[0].raw);
    assert!(raw.contains("\r\n\r\nWhich one?\r\n.leading dot"), "{raw}");
    assert_eq!(sink.sent(), sent);
}

#[tokio::test]
async fn the_smtp_sink_requiring_auth_takes_only_its_credentials() {
    let sink = SmtpSink::start_requiring("bot@example.com", "smtp-password").await;
    let transport = |password: &str| {
        AsyncSmtpTransport::<Tokio1Executor>::builder_dangerous("127.0.0.1")
            .port(sink.port())
            .credentials(Credentials::new(
                "bot@example.com".to_owned(),
                password.to_owned(),
            ))
            .build()
    };
    let refused = transport("wrong")
        .send(lettre_message("refused"))
        .await
        .expect_err("wrong credentials");
    assert!(refused.is_permanent(), "{refused:?}");
    let unauthenticated = AsyncSmtpTransport::<Tokio1Executor>::builder_dangerous("127.0.0.1")
        .port(sink.port())
        .build()
        .send(lettre_message("no auth"))
        .await;
    assert!(unauthenticated.is_err(), "sent without AUTH");

    transport("smtp-password")
        .send(lettre_message("accepted"))
        .await
        .expect("send with AUTH");
    let sent = sink.wait_for(1).await;
    assert_eq!(sent.len(), 1, "only the authenticated mail");
    assert_eq!(sent[0].login.as_deref(), Some("bot@example.com"));
    assert_eq!(sent[0].header("Subject").as_deref(), Some("accepted"));
}

//! Sending to addresses that are not ASCII through a mail server without
//! SMTPUTF8 (RFC 6531), as many still are: a Unicode domain goes out in
//! its ASCII form, a Unicode local part fails for good at once.
//!
//! The server is a small SMTP server on 127.0.0.1 in this test that
//! offers only `8BITMIME` and records every command it is sent.

use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use askbridge_core::failure::PlatformFailure;
use askbridge_core::render::Locale;
use askbridge_email::render::{Outgoing, follow_up};
use askbridge_email::run::{Account, Smtp};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::{TcpListener, TcpStream};

/// What the server was sent: each command line, and each mail's data.
#[derive(Debug, Default)]
struct Heard {
    commands: Vec<String>,
    data: Vec<String>,
}

/// Starts an SMTP server without SMTPUTF8 on 127.0.0.1; its port and
/// what it hears.
async fn server_without_smtputf8() -> (u16, Arc<Mutex<Heard>>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let port = listener.local_addr().expect("an address").port();
    let heard = Arc::new(Mutex::new(Heard::default()));
    let recorder = Arc::clone(&heard);
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            tokio::spawn(converse(stream, Arc::clone(&recorder)));
        }
    });
    (port, heard)
}

/// One SMTP conversation: everything accepted, nothing but `8BITMIME`
/// offered.
async fn converse(stream: TcpStream, heard: Arc<Mutex<Heard>>) {
    let (read, mut write) = stream.into_split();
    let mut lines = BufReader::new(read).lines();
    let _ = write.write_all(b"220 fake ESMTP\r\n").await;
    while let Ok(Some(line)) = lines.next_line().await {
        heard.lock().expect("lock").commands.push(line.clone());
        let verb = line.split([' ', ':']).next().unwrap_or_default();
        let answer: &[u8] = match verb.to_ascii_uppercase().as_str() {
            "EHLO" => b"250-fake\r\n250 8BITMIME\r\n",
            "DATA" => {
                let _ = write.write_all(b"354 go on\r\n").await;
                let mut data = String::new();
                while let Ok(Some(line)) = lines.next_line().await {
                    if line == "." {
                        break;
                    }
                    data.push_str(&line);
                    data.push('\n');
                }
                heard.lock().expect("lock").data.push(data);
                b"250 2.0.0 queued\r\n"
            }
            "QUIT" => {
                let _ = write.write_all(b"221 bye\r\n").await;
                return;
            }
            _ => b"250 ok\r\n",
        };
        let _ = write.write_all(answer).await;
    }
}

/// A mail from the bot to `to`.
fn mail_to(to: &str) -> lettre::Message {
    let out = Outgoing {
        from: "askbridge <bot@example.com>",
        to,
        reply_to: None,
        message_id: "closed.ask_1@example.com".to_owned(),
        in_reply_to: Some("ask_1@example.com".to_owned()),
        references: vec!["ask_1@example.com".to_owned()],
        date: SystemTime::UNIX_EPOCH + Duration::from_secs(1_800_000_000),
        links: Vec::new(),
    };
    follow_up(
        "✅ Production",
        "[askbridge] Deploy",
        &out,
        Locale::default(),
    )
    .expect("a mail")
}

fn smtp(port: u16) -> Smtp {
    Smtp::new(&Account {
        tls: false,
        host: "127.0.0.1".to_owned(),
        port,
        user: None,
        password: None,
    })
    .expect("an SMTP client")
}

#[tokio::test]
async fn a_unicode_domain_is_sent_to_its_ascii_form() {
    let (port, heard) = server_without_smtputf8().await;
    smtp(port)
        .send(mail_to("Jörg <joerg@bücher.example>"))
        .await
        .expect("sent");
    let heard = heard.lock().expect("lock");
    assert!(
        heard
            .commands
            .iter()
            .any(|line| line == "RCPT TO:<joerg@xn--bcher-kva.example>"),
        "{:?}",
        heard.commands
    );
    let data = heard.data.first().expect("a mail");
    let to = data
        .lines()
        .find(|line| line.starts_with("To:"))
        .expect("a To header");
    assert!(to.contains("<joerg@xn--bcher-kva.example>"), "{to}");
}

#[tokio::test]
async fn a_unicode_local_part_without_smtputf8_fails_for_good_and_says_why() {
    let (port, heard) = server_without_smtputf8().await;
    let failure = smtp(port)
        .send(mail_to("josé@bücher.example"))
        .await
        .expect_err("not sent");
    let PlatformFailure::Permanent(reason) = &failure else {
        panic!("not permanent: {failure:?}");
    };
    assert!(
        reason.contains("SMTPUTF8") && reason.contains("josé@xn--bcher-kva.example"),
        "{reason}"
    );
    let heard = heard.lock().expect("lock");
    assert!(
        !heard
            .commands
            .iter()
            .any(|line| line.starts_with("MAIL") || line.starts_with("RCPT")),
        "nothing was sent: {:?}",
        heard.commands
    );
}

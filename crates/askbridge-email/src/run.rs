//! Sending by SMTP and reading by IMAP: the email channel's only I/O.
//!
//! - [`Smtp`] sends a built mail (lettre's SMTP transport): `smtp://`
//!   upgrades with STARTTLS when the server offers it, `smtps://` is TLS
//!   from the start; the user is in the URL, the password from the
//!   environment.
//! - [`Mailbox`] is one IMAP session on the bot's folder (async-imap):
//!   `imap://` (plain, for a server on loopback) or `imaps://`. It lists
//!   the mails after a UID with their sizes, fetches the few it is asked
//!   for (each within a time), marks one processed (`\Seen \Flagged`, and
//!   moved to a folder if one is set), and waits for news with IDLE where
//!   the server offers it, else for a poll's interval.
//!
//! Failures are classified as every channel's are: a refused login or a
//! folder that does not exist is final (the setup is wrong), anything
//! else is passing (the server may come back).

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use askbridge_core::failure::{PlatformFailure, SetupError};
use async_imap::extensions::idle::IdleResponse;
use async_imap::types::UnsolicitedResponse;
use futures_util::TryStreamExt;
use lettre::transport::smtp::authentication::Credentials;
use lettre::transport::smtp::client::{Tls, TlsParameters};
use lettre::{AsyncSmtpTransport, AsyncTransport, Tokio1Executor};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::TcpStream;

/// How long one SMTP or IMAP step may take.
const STEP_TIMEOUT: Duration = Duration::from_secs(60);

/// How long one mail of a [`Mailbox::fetch`] may take to arrive.
pub const MAIL_TIMEOUT: Duration = Duration::from_secs(30);

/// A server's address and the account on it, read from a URL.
#[derive(Clone, PartialEq, Eq)]
pub struct Account {
    /// TLS from the start (`smtps://`, `imaps://`).
    pub tls: bool,
    /// The host.
    pub host: String,
    /// The port.
    pub port: u16,
    /// The user, percent-decoded (`bot@example.com`); `None`: no login.
    pub user: Option<String>,
    /// The password, from the environment.
    pub password: Option<String>,
}

impl fmt::Debug for Account {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Account")
            .field("tls", &self.tls)
            .field("host", &self.host)
            .field("port", &self.port)
            .field("user", &self.user)
            .finish_non_exhaustive()
    }
}

impl Account {
    /// Reads `url` for `plain` and `secure`, the schemes without and with
    /// TLS from the start, whose ports default to `ports`; the password
    /// is `password` (never in the URL).
    pub fn parse(
        url: &str,
        (plain, secure): (&str, &str),
        ports: (u16, u16),
        password: Option<String>,
    ) -> Result<Account, String> {
        let parsed =
            url::Url::parse(url).map_err(|error| format!("{url:?} is not a URL: {error}"))?;
        let tls = match parsed.scheme() {
            scheme if scheme == plain => false,
            scheme if scheme == secure => true,
            other => return Err(format!("{other}:// is not {plain}:// or {secure}://")),
        };
        if parsed.password().is_some() {
            return Err("the URL holds a password; give it in the environment instead".to_owned());
        }
        let host = parsed
            .host_str()
            .filter(|host| !host.is_empty())
            .ok_or_else(|| format!("{url:?} names no host"))?
            .trim_start_matches('[')
            .trim_end_matches(']')
            .to_owned();
        let user = match parsed.username() {
            "" => None,
            user => Some(
                percent_encoding::percent_decode_str(user)
                    .decode_utf8()
                    .map_err(|_| format!("the user in {url:?} is not UTF-8"))?
                    .into_owned(),
            ),
        };
        Ok(Account {
            tls,
            host,
            port: parsed.port().unwrap_or(if tls { ports.1 } else { ports.0 }),
            user,
            password,
        })
    }

    fn is_loopback(&self) -> bool {
        self.host == "localhost"
            || self
                .host
                .parse::<std::net::IpAddr>()
                .is_ok_and(|ip| ip.is_loopback())
    }
}

/// The SMTP client.
#[derive(Clone)]
pub struct Smtp {
    transport: AsyncSmtpTransport<Tokio1Executor>,
}

impl fmt::Debug for Smtp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Smtp").finish_non_exhaustive()
    }
}

impl Smtp {
    /// A client for `account`: TLS from the start, or STARTTLS when the
    /// server offers it (required beyond loopback).
    pub fn new(account: &Account) -> Result<Smtp, SetupError> {
        let params = TlsParameters::new(account.host.clone())
            .map_err(|error| SetupError(format!("cannot set up TLS for SMTP: {error}")))?;
        let tls = match (account.tls, account.is_loopback()) {
            (true, _) => Tls::Wrapper(params),
            (false, true) => Tls::Opportunistic(params),
            (false, false) => Tls::Required(params),
        };
        let mut builder = AsyncSmtpTransport::<Tokio1Executor>::builder_dangerous(&account.host)
            .port(account.port)
            .tls(tls)
            .timeout(Some(STEP_TIMEOUT));
        if let (Some(user), Some(password)) = (&account.user, &account.password) {
            builder = builder.credentials(Credentials::new(user.clone(), password.clone()));
        }
        Ok(Smtp {
            transport: builder.build(),
        })
    }

    /// Sends `mail`. An address whose local part is not ASCII, to a
    /// server without SMTPUTF8, fails for good: no retry will help.
    pub async fn send(&self, mail: lettre::Message) -> Result<(), PlatformFailure> {
        let envelope = mail.envelope();
        let unicode = envelope
            .from()
            .into_iter()
            .chain(envelope.to())
            .find(|address| !address.user().is_ascii())
            .map(ToString::to_string);
        match self.transport.send(mail).await {
            Ok(_) => Ok(()),
            Err(error) if error.is_permanent() => Err(PlatformFailure::Permanent(format!(
                "the mail server refused the mail: {error}"
            ))),
            // lettre refuses before sending: the server has no SMTPUTF8.
            Err(error) if error.is_client() && unicode.is_some() => {
                Err(PlatformFailure::Permanent(format!(
                    "the mail server does not take addresses that are not ASCII (it has no \
                     SMTPUTF8), and the part before the @ of {} is not: {error}",
                    unicode.unwrap_or_default()
                )))
            }
            Err(error) => Err(PlatformFailure::Transient(format!(
                "cannot send the mail: {error}"
            ))),
        }
    }

    /// Checks that the server answers and takes the login.
    pub async fn check(&self) -> Result<(), PlatformFailure> {
        match self.transport.test_connection().await {
            Ok(true) => Ok(()),
            Ok(false) => Err(PlatformFailure::Transient(
                "the SMTP server did not answer".to_owned(),
            )),
            Err(error) => Err(PlatformFailure::Permanent(format!(
                "the SMTP server refused: {error}"
            ))),
        }
    }
}

/// A byte stream IMAP runs over: plain TCP or TLS.
trait Stream: AsyncRead + AsyncWrite + Unpin + Send + fmt::Debug {}
impl<T: AsyncRead + AsyncWrite + Unpin + Send + fmt::Debug> Stream for T {}

type Session = async_imap::Session<Box<dyn Stream>>;

/// One mail in the folder, listed before it is fetched.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Listed {
    /// Its UID in the folder.
    pub uid: u32,
    /// Its size in bytes, as the server says (`RFC822.SIZE`).
    pub size: u32,
}

/// One mail fetched.
#[derive(Debug, Clone)]
pub struct Fetched {
    /// Its UID in the folder.
    pub uid: u32,
    /// The mail as the server holds it.
    pub raw: Vec<u8>,
}

/// One IMAP session on the bot's folder.
pub struct Mailbox {
    session: Session,
    folder: String,
    /// The folder's UIDVALIDITY: UIDs count only with it.
    pub uid_validity: u32,
    idle: bool,
}

impl fmt::Debug for Mailbox {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Mailbox")
            .field("folder", &self.folder)
            .field("uid_validity", &self.uid_validity)
            .finish_non_exhaustive()
    }
}

/// A failure of the IMAP server or the connection: passing.
fn imap(error: async_imap::error::Error) -> PlatformFailure {
    PlatformFailure::Transient(format!("IMAP: {error}"))
}

async fn step<T>(
    what: &str,
    future: impl Future<Output = Result<T, PlatformFailure>>,
) -> Result<T, PlatformFailure> {
    tokio::time::timeout(STEP_TIMEOUT, future)
        .await
        .unwrap_or_else(|_| Err(PlatformFailure::Transient(format!("IMAP {what} timed out"))))
}

impl Mailbox {
    /// Logs in to `account` and selects `folder`.
    pub async fn open(account: &Account, folder: &str) -> Result<Mailbox, PlatformFailure> {
        step("login", async {
            let tcp = TcpStream::connect((account.host.as_str(), account.port))
                .await
                .map_err(|error| {
                    PlatformFailure::Transient(format!(
                        "cannot reach the IMAP server {}:{}: {error}",
                        account.host, account.port
                    ))
                })?;
            let stream: Box<dyn Stream> = match account.tls {
                true => Box::new(tls(&account.host, tcp).await?),
                false => Box::new(tcp),
            };
            let mut client = async_imap::Client::new(stream);
            client
                .read_response()
                .await
                .map_err(|error| PlatformFailure::Transient(format!("IMAP greeting: {error}")))?
                .ok_or_else(|| {
                    PlatformFailure::Transient("the IMAP server said nothing".to_owned())
                })?;
            let user = account.user.as_deref().unwrap_or_default();
            let password = account.password.as_deref().unwrap_or_default();
            let mut session =
                client
                    .login(user, password)
                    .await
                    .map_err(|(error, _)| match error {
                        async_imap::error::Error::No(said)
                        | async_imap::error::Error::Bad(said) => PlatformFailure::Permanent(
                            format!("the IMAP server refused the login of {user:?}: {said}"),
                        ),
                        other => imap(other),
                    })?;
            let selected = session.select(folder).await.map_err(|error| match error {
                async_imap::error::Error::No(said) => PlatformFailure::Permanent(format!(
                    "the IMAP folder {folder:?} cannot be opened: {said}"
                )),
                other => imap(other),
            })?;
            let idle = session.capabilities().await.map_err(imap)?.has_str("IDLE");
            Ok(Mailbox {
                session,
                folder: folder.to_owned(),
                uid_validity: selected.uid_validity.unwrap_or(0),
                idle,
            })
        })
        .await
    }

    /// Whether the server offers IDLE (else the folder is polled).
    pub fn has_idle(&self) -> bool {
        self.idle
    }

    /// The mails after UID `after`, oldest first, by UID and size
    /// (`RFC822.SIZE`): nothing of them is fetched. A mail whose size the
    /// server does not say is listed as size 0.
    pub async fn list_after(&mut self, after: u32) -> Result<Vec<Listed>, PlatformFailure> {
        let set = format!("{}:*", after.saturating_add(1));
        step("fetch sizes", async {
            let fetches: Vec<_> = self
                .session
                .uid_fetch(&set, "(UID RFC822.SIZE)")
                .await
                .map_err(imap)?
                .try_collect()
                .await
                .map_err(imap)?;
            let mut listed: Vec<Listed> = fetches
                .iter()
                .filter_map(|fetch| {
                    let uid = fetch.uid?;
                    // `n:*` answers the last mail even when it is older.
                    (uid > after).then(|| Listed {
                        uid,
                        size: fetch.size.unwrap_or(0),
                    })
                })
                .collect();
            listed.sort_by_key(|mail| mail.uid);
            listed.dedup_by_key(|mail| mail.uid);
            Ok(listed)
        })
        .await
    }

    /// The mails `uids`, whole, in one command (keep them few: each is
    /// held in memory), oldest first; each must arrive within
    /// [`MAIL_TIMEOUT`] of the one before. A UID no longer in the folder
    /// is left out.
    pub async fn fetch(&mut self, uids: &[u32]) -> Result<Vec<Fetched>, PlatformFailure> {
        if uids.is_empty() {
            return Ok(Vec::new());
        }
        let set = uids
            .iter()
            .map(u32::to_string)
            .collect::<Vec<_>>()
            .join(",");
        let fetches = step("fetch", async {
            self.session
                .uid_fetch(&set, "(UID BODY.PEEK[])")
                .await
                .map_err(imap)
        })
        .await?;
        let mut fetches = std::pin::pin!(fetches);
        let mut fetched = Vec::with_capacity(uids.len());
        loop {
            let next = tokio::time::timeout(MAIL_TIMEOUT, fetches.try_next())
                .await
                .map_err(|_| {
                    PlatformFailure::Transient(format!(
                        "IMAP: a mail of {set} took more than {MAIL_TIMEOUT:?} to fetch"
                    ))
                })?
                .map_err(imap)?;
            let Some(fetch) = next else { break };
            // A FETCH the server volunteers (a flag changed) has no body.
            if let (Some(uid), Some(body)) = (fetch.uid, fetch.body())
                && uids.contains(&uid)
            {
                fetched.push(Fetched {
                    uid,
                    raw: body.to_vec(),
                });
            }
        }
        fetched.sort_by_key(|mail| mail.uid);
        fetched.dedup_by_key(|mail| mail.uid);
        Ok(fetched)
    }

    /// Marks mail `uid` processed: seen and flagged, and moved to
    /// `processed_folder` when one is set. Never deleted.
    pub async fn processed(
        &mut self,
        uid: u32,
        processed_folder: Option<&str>,
    ) -> Result<(), PlatformFailure> {
        let set = uid.to_string();
        step("store", async {
            let _: Vec<_> = self
                .session
                .uid_store(&set, "+FLAGS (\\Seen \\Flagged)")
                .await
                .map_err(imap)?
                .try_collect()
                .await
                .map_err(imap)?;
            if let Some(folder) = processed_folder {
                self.session.uid_mv(&set, folder).await.map_err(imap)?;
            }
            Ok(())
        })
        .await
    }

    /// Waits until the folder may have changed — IDLE (renewed every 25
    /// minutes, as servers end it after 30), else `poll` — and gives the
    /// session back.
    pub async fn wait(self, poll: Duration) -> Result<Mailbox, PlatformFailure> {
        let Mailbox {
            session,
            folder,
            uid_validity,
            idle,
        } = self;
        // What the server said between commands: mail that arrived while
        // the last ones ran is news already.
        let said = session.unsolicited_responses.clone();
        if heard_of_mail(&said) {
            return Ok(Mailbox {
                session,
                folder,
                uid_validity,
                idle,
            });
        }
        if !idle {
            tokio::time::sleep(poll).await;
            return Ok(Mailbox {
                session,
                folder,
                uid_validity,
                idle,
            });
        }
        let mut waiting = session.idle();
        waiting.init().await.map_err(imap)?;
        // Mail that arrived just before IDLE began is said before the
        // server's go-ahead, which async-imap files away: look there.
        if heard_of_mail(&said) {
            let session = step("done", async { waiting.done().await.map_err(imap) }).await?;
            return Ok(Mailbox {
                session,
                folder,
                uid_validity,
                idle,
            });
        }
        let (heard, stop) = waiting.wait_with_timeout(Duration::from_secs(25 * 60));
        let heard = heard.await.map_err(imap)?;
        drop(stop);
        // A connection the server closed ends the wait as if stopped here.
        if heard == IdleResponse::ManualInterrupt {
            return Err(PlatformFailure::Transient(
                "the IMAP server closed the connection".to_owned(),
            ));
        }
        let session = step("done", async { waiting.done().await.map_err(imap) }).await?;
        Ok(Mailbox {
            session,
            folder,
            uid_validity,
            idle,
        })
    }

    /// Logs out (best effort).
    pub async fn close(mut self) {
        let _ = tokio::time::timeout(Duration::from_secs(5), self.session.logout()).await;
    }
}

/// Whether the server said, outside an answer, that mail arrived
/// (`EXISTS`, `RECENT`); takes what it said. async-imap keeps at most 100
/// such words and drops the rest: a full queue may have dropped news.
fn heard_of_mail(said: &async_channel::Receiver<UnsolicitedResponse>) -> bool {
    let (mut heard, mut count) = (false, 0);
    while let Ok(word) = said.try_recv() {
        count += 1;
        heard |= matches!(
            word,
            UnsolicitedResponse::Exists(_) | UnsolicitedResponse::Recent(_)
        );
    }
    heard || count >= 100
}

/// A TLS connection to `host` over `tcp`, checked against the web's
/// roots.
async fn tls(
    host: &str,
    tcp: TcpStream,
) -> Result<tokio_rustls::client::TlsStream<TcpStream>, PlatformFailure> {
    let mut roots = rustls::RootCertStore::empty();
    roots.extend(webpki_roots::TLS_SERVER_ROOTS.iter().cloned());
    let config = rustls::ClientConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .map_err(|error| PlatformFailure::Permanent(format!("TLS: {error}")))?
    .with_root_certificates(roots)
    .with_no_client_auth();
    let name = rustls::pki_types::ServerName::try_from(host.to_owned())
        .map_err(|error| PlatformFailure::Permanent(format!("{host:?} is no TLS name: {error}")))?;
    tokio_rustls::TlsConnector::from(Arc::new(config))
        .connect(name, tcp)
        .await
        .map_err(|error| PlatformFailure::Transient(format!("TLS with {host}: {error}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accounts_are_read_from_urls_the_password_never() {
        let imap = ("imap", "imaps");
        let account = Account::parse(
            "imaps://bot%40example.com@mail.example.com",
            imap,
            (143, 993),
            Some("pw".to_owned()),
        )
        .expect("an account");
        assert!(account.tls);
        assert_eq!(account.port, 993);
        assert_eq!(account.user.as_deref(), Some("bot@example.com"));
        let plain = Account::parse("imap://127.0.0.1:1143", imap, (143, 993), None).expect("plain");
        assert!(!plain.tls && plain.is_loopback());
        assert_eq!((plain.port, plain.user), (1143, None));
        for (url, error) in [
            ("imap://bot:secret@host", "password"),
            ("pop3://host", "is not imap:// or imaps://"),
            ("not a url", "is not a URL"),
        ] {
            let got = Account::parse(url, imap, (143, 993), None).expect_err(url);
            assert!(got.contains(error), "{url}: {got}");
        }
        let debug = format!(
            "{:?}",
            Account {
                password: Some("secret".to_owned()),
                ..account
            }
        );
        assert!(!debug.contains("secret"), "{debug}");
    }
}

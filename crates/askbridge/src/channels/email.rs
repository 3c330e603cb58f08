//! The email channel wired to the bridge.
//!
//! [`askbridge_email`] draws asks as mails, reads replies and talks SMTP
//! and IMAP; this module only translates for the shared [`ChatDriver`]:
//!
//! - [`EmailPlatform`] is email as a [`ChatPlatform`]: the "chat" is the
//!   person's address, a message is a mail named by its `Message-ID`
//!   (the same when a part is sent again after a crash, so the person's
//!   client shows it once). An ask is one mail, its context included; a
//!   reply, a reminder and the closing line are mails in its thread
//!   (`In-Reply-To`, `References`, `Re:` its subject). Nothing is edited
//!   and nothing is pressed.
//! - [`Email`] reads the bot's folder (under a lease: one instance reads,
//!   every instance sends): each new mail, by UID, is read down to what
//!   the person wrote and handed to the driver as a typed reply to the
//!   mail it answers — by `In-Reply-To` / `References`, else by the
//!   plus-address token of the ask's `Reply-To`. Mails are listed by
//!   size first and fetched a few at a time; one larger than a reply is
//!   read at is skipped unfetched (logged, marked processed). Mail a
//!   machine sent (an auto-reply, a list, a bounce) is nothing; so is a
//!   mail without exactly one `From` naming exactly one address; with
//!   `require_authentication`, so is mail whose topmost
//!   `Authentication-Results` is not the trusted receiving server's
//!   `dmarc=pass` for the sender's domain. None is answered. Each mail
//!   handled is marked processed (`\Seen \Flagged`, moved if a folder is
//!   set), and the folder's progress (UIDVALIDITY and the last UID) is
//!   kept in the database, so a restart neither loses a reply nor acts on
//!   one twice.
//! - With the daemon's `public_url`, an ask of one single-choice or
//!   yes/no question carries a one-click link per option
//!   ([`askbridge_email::link`], signed with a secret kept in the
//!   database, expiring with the ask). `GET /email/answer/…` only shows a
//!   confirmation (mail scanners open every link); its `POST` answers, as
//!   the number typed in a reply to the ask's mail by the address it went
//!   to would.

use std::sync::Arc;
use std::time::{Duration, SystemTime};

use askbridge_core::failure::{PlatformFailure, SetupError};
use askbridge_core::inbound::{self, Handled, Inbound, Person};
use askbridge_core::model::{Ask, ChannelKind, Place, Responder, Target};
use askbridge_core::render::{
    self, Block, ButtonsView, Capabilities, Locale, View, fill, pick_labels,
};
use askbridge_email::link::{self, ANSWER_PATH, Claim, LinkError};
use askbridge_email::parse::{self, Mail};
use askbridge_email::render::{self as draw, Link, Outgoing};
use askbridge_email::run::{Account, Fetched, Listed, Mailbox, Smtp};
use axum::Router;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::{Html, IntoResponse, Response};
use axum::routing::get;
use tokio::task::JoinHandle;

use crate::bridge::{AskView, Bridge, WeakBridge};
use crate::chat::driver::{Ack, ChatDriver, ChatPlatform, Drawing, OwnWords, Reminder};
use crate::chat::kept::Kept;
use crate::chat::{self, AllowList};
use crate::config::EmailConfig;

/// The longest wait between tries to reach the mailbox.
const MAX_BACKOFF: Duration = Duration::from_secs(60);

/// How many mails are fetched in one command: each is held in memory
/// (at most [`parse::MAX_MAIL_BYTES`]) until handled.
const FETCH_BATCH: usize = 8;

/// Whether a listed mail is larger than a reply is read at.
fn too_big(listed: &Listed) -> bool {
    usize::try_from(listed.size).map_or(true, |size| size > parse::MAX_MAIL_BYTES)
}

/// The email channel and its reader, built from the config.
#[derive(Debug, Clone)]
pub struct Email {
    reader: Arc<Reader>,
}

impl Email {
    /// Builds the SMTP client and registers the channel with the bridge.
    /// Call inside the runtime.
    pub fn new(
        bridge: &Bridge,
        config: &EmailConfig,
        public_url: Option<&str>,
    ) -> Result<Email, SetupError> {
        let smtp = Smtp::new(&config.smtp)?;
        let kept = Arc::new(Kept::new(ChannelKind::Email, bridge));
        // Who may answer for others: nobody but those listed.
        let answer_for_others = AllowList::only(config.allowed_senders.iter().cloned());
        let driver = ChatDriver::register(
            bridge,
            EmailPlatform {
                smtp,
                from: config.from.clone(),
                address: config.address.clone(),
                plus_addressing: config.plus_addressing,
                public_url: public_url.map(str::to_owned),
                kept: Arc::clone(&kept),
                locale: config.locale,
            },
            Drawing {
                caps: Capabilities::EMAIL,
                locale: config.locale,
            },
            answer_for_others.clone(),
        );
        Ok(Email {
            reader: Arc::new(Reader {
                driver,
                answer_for_others,
                config: config.clone(),
                kept,
                bridge: bridge.downgrade(),
            }),
        })
    }

    /// `GET` and `POST /email/answer/{ask}/{option}`: one-click answers.
    pub fn router(&self) -> Router {
        Router::new()
            .route(
                &format!("{ANSWER_PATH}/{{ask}}/{{option}}"),
                get(confirm_page).post(answer_by_link),
            )
            .with_state(Arc::clone(&self.reader))
    }

    /// The lease the mailbox is read under: one instance reads it.
    pub fn receiving_lease(&self) -> String {
        format!("email/{}", self.reader.config.address)
    }

    /// Starts reading the mailbox, reconnecting after failures.
    pub fn start(&self) -> JoinHandle<()> {
        let reader = Arc::clone(&self.reader);
        tokio::spawn(async move { reader.run().await })
    }
}

/// The bot's mailbox, read for replies.
#[derive(Debug)]
struct Reader {
    driver: Arc<ChatDriver<EmailPlatform>>,
    /// Who may answer for others: `allowed_senders`.
    answer_for_others: AllowList,
    config: EmailConfig,
    kept: Arc<Kept>,
    bridge: WeakBridge,
}

/// The stored key of a mailbox folder's progress (`<uidvalidity>:<uid>`):
/// the account's and the folder's.
fn progress_key(account: &Account, folder: &str) -> String {
    let user = account.user.as_deref().unwrap_or_default();
    format!("progress/{user}@{}:{}/{folder}", account.host, account.port)
}

/// The stored key of the subject of a mail askbridge sent.
fn sent_key(message_id: &str) -> String {
    format!("sent/{message_id}")
}

/// The stored key of the subject of a mail the person sent.
fn received_key(message_id: &str) -> String {
    format!("received/{message_id}")
}

/// The stored key of an ask mail's plus-address token.
fn token_key(token: &str) -> String {
    format!("token/{token}")
}

/// The stored key of the mail of askbridge's a mail in a thread goes
/// back to: the question (or reminder) the thread is about.
fn root_key(message_id: &str) -> String {
    format!("root/{message_id}")
}

/// The mail of askbridge's that mail `id` goes back to: kept, else
/// itself.
async fn root_of(kept: &Kept, id: &str) -> Result<String, PlatformFailure> {
    Ok(kept
        .get(&root_key(id))
        .await?
        .unwrap_or_else(|| id.to_owned()))
}

/// The stored key of whom a mail askbridge sent went to.
fn to_key(message_id: &str) -> String {
    format!("to/{message_id}")
}

/// The stored key of the mail an ask was sent as.
fn ask_key(ask_id: &str) -> String {
    format!("ask/{ask_id}")
}

/// The stored key of the secret links are signed with.
const SECRET_KEY: &str = "link-secret";

/// The secret links are signed with: kept, else made and kept — by the
/// first instance to make one, which every instance then uses.
async fn secret(kept: &Kept) -> Result<Vec<u8>, PlatformFailure> {
    if let Some(secret) = kept.get(SECRET_KEY).await? {
        return Ok(secret.into_bytes());
    }
    let made = format!(
        "{}{}",
        uuid::Uuid::new_v4().simple(),
        uuid::Uuid::new_v4().simple()
    );
    Ok(kept.first(SECRET_KEY, &made).await?.into_bytes())
}

impl Reader {
    async fn run(self: Arc<Self>) {
        let mut backoff = Duration::from_secs(1);
        loop {
            match self.session(&mut backoff).await {
                Ok(()) => {}
                Err(PlatformFailure::Permanent(reason)) => {
                    tracing::error!(reason = %reason, "the bot's mailbox refused askbridge; retrying");
                }
                Err(error) => {
                    tracing::warn!(error = %error, "the bot's mailbox is not reachable; retrying");
                }
            }
            tokio::time::sleep(backoff).await;
            backoff = (backoff * 2).min(MAX_BACKOFF);
        }
    }

    /// One session: what arrived since the last mail handled, then each
    /// mail as it comes.
    async fn session(&self, backoff: &mut Duration) -> Result<(), PlatformFailure> {
        let config = &self.config;
        let mut mailbox = Mailbox::open(&config.imap, &config.folder).await?;
        tracing::info!(folder = %config.folder, "reading the bot's mailbox");
        *backoff = Duration::from_secs(1);
        loop {
            let key = progress_key(&config.imap, &config.folder);
            let last = match self.kept.get(&key).await? {
                Some(progress) => match progress.split_once(':') {
                    Some((validity, uid)) if validity == mailbox.uid_validity.to_string() => {
                        uid.parse().unwrap_or(0)
                    }
                    // A new UIDVALIDITY: the folder's UIDs start over.
                    _ => 0,
                },
                None => 0,
            };
            let listed = mailbox.list_after(last).await?;
            for batch in listed.chunks(FETCH_BATCH) {
                self.batch(&mut mailbox, batch, &key).await?;
            }
            mailbox = mailbox.wait(config.poll).await?;
        }
    }

    /// Handles a few listed mails, oldest first: those within
    /// [`parse::MAX_MAIL_BYTES`] fetched in one go, the larger skipped
    /// unfetched; each marked processed and the folder's progress `key`
    /// moved past it.
    async fn batch(
        &self,
        mailbox: &mut Mailbox,
        batch: &[Listed],
        key: &str,
    ) -> Result<(), PlatformFailure> {
        let wanted: Vec<u32> = batch
            .iter()
            .filter(|listed| !too_big(listed))
            .map(|listed| listed.uid)
            .collect();
        let mut fetched = mailbox.fetch(&wanted).await?.into_iter().peekable();
        for listed in batch {
            let mail = fetched.next_if(|mail| mail.uid == listed.uid);
            let handled = match (&mail, too_big(listed)) {
                (Some(mail), _) => self.take(mail, mailbox.uid_validity).await,
                (None, true) => {
                    tracing::warn!(
                        uid = listed.uid,
                        size = listed.size,
                        limit = parse::MAX_MAIL_BYTES,
                        "a mail over the size limit skipped, not fetched"
                    );
                    Handled::Done
                }
                (None, false) => {
                    tracing::info!(uid = listed.uid, "a mail gone before it was fetched");
                    Handled::Done
                }
            };
            if handled == Handled::Retry {
                return Err(PlatformFailure::Transient(
                    "a reply could not be recorded; reading it again".to_owned(),
                ));
            }
            if mail.is_some() || too_big(listed) {
                mailbox
                    .processed(listed.uid, self.config.processed_folder.as_deref())
                    .await?;
            }
            let progress = format!("{}:{}", mailbox.uid_validity, listed.uid);
            self.kept.store(key, &progress).await?;
        }
        Ok(())
    }

    /// Hands one mail to the driver, unless nobody answers with it.
    async fn take(&self, fetched: &Fetched, uid_validity: u32) -> Handled {
        let mail = match parse::mail(&fetched.raw) {
            Ok(mail) => mail,
            Err(bad) => {
                tracing::warn!(uid = fetched.uid, reason = %bad, "a mail not read");
                return Handled::Done;
            }
        };
        if let Some(automatic) = mail.automatic {
            tracing::info!(uid = fetched.uid, from = %mail.from.address, ?automatic, "a machine's mail ignored");
            return Handled::Done;
        }
        if mail.from.address == self.config.address {
            return Handled::Done;
        }
        if let Err(reason) = self.authenticated(&mail) {
            // Never answered: a forger learns nothing.
            tracing::warn!(uid = fetched.uid, from = %mail.from.address, reason = %reason, "a mail not authenticated refused");
            return Handled::Done;
        }
        let message = mail
            .message_id
            .clone()
            .unwrap_or_else(|| format!("uid-{uid_validity}-{}@askbridge", fetched.uid));
        if let Some(subject) = &mail.subject {
            self.kept.keep(&received_key(&message), subject).await;
        }
        let reply_to = match self.answered(&mail).await {
            Ok(reply_to) => reply_to,
            Err(_) => return Handled::Retry,
        };
        if let Some(root) = &reply_to
            && self.kept.store(&root_key(&message), root).await.is_err()
        {
            return Handled::Retry;
        }
        // A reply in the thread of a mail to someone else is in their
        // conversation when the core's one rule lets its sender answer
        // there (one of `allowed_senders`, who answer for others; never for
        // an approval, which the lifecycle refuses them); otherwise, as
        // any mail, in the sender's own.
        let from = person(&mail.from.address, mail.from.name.clone());
        let mut conversation = mail.from.address.clone();
        if let Some(id) = &reply_to {
            match self.kept.get(&to_key(id)).await {
                Ok(Some(to)) => {
                    let theirs = Target {
                        place: Place::Email {
                            address: to.clone(),
                        },
                        user: None,
                    };
                    if chat::may_answer(&theirs, &from, &self.answer_for_others) {
                        conversation = to;
                    }
                }
                Ok(None) => {}
                Err(_) => return Handled::Retry,
            }
        }
        let typed = inbound::Typed {
            chat: conversation.clone(),
            place: Place::Email {
                address: conversation,
            },
            message: message.clone(),
            reply_to,
            text: mail.text.clone(),
            from,
        };
        self.driver
            .line_up(Inbound::Typed(typed), Some(&message))
            .await
    }

    /// Whether `mail` counts as its sender's, when authentication is
    /// required: the trusted receiving server's `Authentication-Results`,
    /// the topmost, says `dmarc=pass` for the sender's domain
    /// ([`Mail::authenticated`]).
    fn authenticated(&self, mail: &Mail) -> Result<(), parse::Unauthenticated> {
        match (
            self.config.require_authentication,
            &self.config.trusted_authserv_id,
        ) {
            (true, Some(trusted)) => mail.authenticated(trusted),
            // The configuration refuses one without the other.
            (true, None) => Err(parse::Unauthenticated::NoResult),
            (false, _) => Ok(()),
        }
    }

    /// The mail of askbridge's `mail` answers: the newest of its thread
    /// that askbridge sent, else the one whose plus-address it went to.
    async fn answered(&self, mail: &Mail) -> Result<Option<String>, PlatformFailure> {
        let thread = mail.in_reply_to.iter().chain(mail.references.iter().rev());
        for id in thread {
            if self.kept.get(&sent_key(id)).await?.is_some() {
                // A reply to a re-ask or a closing line answers what the
                // thread is about.
                return root_of(&self.kept, id).await.map(Some);
            }
        }
        let local = self
            .config
            .address
            .split('@')
            .next()
            .unwrap_or_default()
            .to_owned();
        for recipient in &mail.recipients {
            if let Some(token) = parse::plus_token(recipient, &local)
                && let Some(id) = self.kept.get(&token_key(token)).await?
            {
                return Ok(Some(id));
            }
        }
        Ok(None)
    }
}

/// Someone by their address, and their name when known.
fn person(address: &str, name: Option<String>) -> Person {
    Person {
        responder: Responder {
            channel: ChannelKind::Email,
            user_id: address.to_owned(),
            name,
            place: None,
        },
        username: None,
        roles: Vec::new(),
    }
}

/// One mail to send.
#[derive(Debug)]
pub struct Message {
    /// What it shows, as text.
    text: String,
    /// What it is.
    kind: Kind,
}

#[derive(Debug)]
enum Kind {
    /// An ask: its view and context, drawn when sent.
    Ask {
        id: String,
        ask: Box<Ask>,
        view: View,
        context: Vec<Block>,
        /// When the ask ends (Unix seconds): its links' expiry.
        deadline: u64,
    },
    /// A plain mail with a subject of its own (a notice).
    Text,
}

/// Email as a [`ChatPlatform`]: SMTP out.
#[derive(Debug, Clone)]
pub struct EmailPlatform {
    smtp: Smtp,
    /// The bot's mailbox as mails show it.
    from: String,
    /// The bot's address.
    address: String,
    plus_addressing: bool,
    /// The daemon's public URL: one-click links when set.
    public_url: Option<String>,
    kept: Arc<Kept>,
    locale: Locale,
}

impl EmailPlatform {
    /// The one-click links of ask `id` for `to`: one per option of its
    /// one single-choice or yes/no question, with a public URL to point to.
    async fn links(
        &self,
        id: &str,
        ask: &Ask,
        to: &str,
        deadline: u64,
    ) -> Result<Vec<Link>, PlatformFailure> {
        let (Some(base), [question]) = (&self.public_url, ask.questions.as_slice()) else {
            return Ok(Vec::new());
        };
        let Some(labels) = pick_labels(question, self.locale) else {
            return Ok(Vec::new());
        };
        let secret = secret(&self.kept).await?;
        Ok(labels
            .into_iter()
            .enumerate()
            .map(|(option, label)| Link {
                label,
                url: link::url(
                    base,
                    &secret,
                    &Claim {
                        ask: id.to_owned(),
                        option,
                        to: to.to_owned(),
                        expires: deadline,
                    },
                ),
            })
            .collect())
    }

    /// The `Message-ID` of the mail `once` names: the same whenever it is
    /// sent again.
    fn message_id(&self, once: &str) -> String {
        let domain = self.address.rsplit('@').next().unwrap_or("askbridge");
        let local: String = once
            .chars()
            .map(
                |c| match c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                    true => c,
                    false => '.',
                },
            )
            .collect();
        format!("{local}@{domain}")
    }

    /// A plus-address for replies to mail `message_id`, kept.
    async fn reply_to(&self, message_id: &str) -> Result<Option<String>, PlatformFailure> {
        if !self.plus_addressing {
            return Ok(None);
        }
        let token = uuid::Uuid::new_v4().simple().to_string();
        self.kept.store(&token_key(&token), message_id).await?;
        let (local, domain) = self
            .address
            .split_once('@')
            .unwrap_or((self.address.as_str(), ""));
        Ok(Some(format!("{local}+{token}@{domain}")))
    }

    /// A mail in the thread of mail `to`: `text`, `Re:` its subject.
    async fn follow_up(
        &self,
        chat: &str,
        to: &str,
        text: &str,
        message_id: String,
    ) -> Result<String, PlatformFailure> {
        let subject = match self.kept.get(&sent_key(to)).await? {
            Some(subject) => subject,
            None => self
                .kept
                .get(&received_key(to))
                .await?
                .unwrap_or_else(|| draw::SUBJECT_PREFIX.trim().to_owned()),
        };
        let out = Outgoing {
            from: &self.from,
            to: chat,
            reply_to: None,
            message_id: message_id.clone(),
            in_reply_to: Some(to.to_owned()),
            references: vec![to.to_owned()],
            date: SystemTime::now(),
            links: Vec::new(),
        };
        let mail = draw::follow_up(text, &subject, &out, self.locale).map_err(built)?;
        self.kept.store(&sent_key(&message_id), &subject).await?;
        let root = root_of(&self.kept, to).await?;
        self.kept.store(&root_key(&message_id), &root).await?;
        self.smtp.send(mail).await?;
        Ok(message_id)
    }
}

/// A mail that cannot be built: final.
fn built(error: draw::RenderError) -> PlatformFailure {
    PlatformFailure::Permanent(format!("cannot write the mail: {error}"))
}

impl ChatPlatform for EmailPlatform {
    type Chat = String;
    type MessageId = String;
    type Message = Message;
    type Reply = ();

    const KIND: ChannelKind = ChannelKind::Email;

    fn conversation(chat: &String) -> String {
        chat.clone()
    }

    fn parse_conversation(text: &str) -> Option<String> {
        (!text.is_empty()).then(|| text.to_owned())
    }

    fn place_of(chat: &String) -> Place {
        Place::Email {
            address: chat.clone(),
        }
    }

    async fn open(&self, place: &Place) -> Result<String, PlatformFailure> {
        match place {
            Place::Email { address } => Ok(address.clone()),
            _ => Err(PlatformFailure::Permanent("not an email target".to_owned())),
        }
    }

    /// One mail: the prompt, then the context.
    fn post_messages(
        &self,
        ask: &AskView,
        view: &View,
        context: &[Block],
        _chat: &String,
    ) -> Vec<Message> {
        vec![Message {
            text: draw::prompt(view, &ask.ask, self.locale),
            kind: Kind::Ask {
                id: ask.id.clone(),
                ask: Box::new(ask.ask.clone()),
                view: view.clone(),
                context: context.to_vec(),
                deadline: ask.deadline.0 / 1_000,
            },
        }]
    }

    /// What a view's message says. Asks are drawn by
    /// [`EmailPlatform::post_messages`] (one mail with its context), and
    /// nothing is pressed in a mail, so only text views reach here.
    fn ask_messages(&self, view: &View, _chat: &String) -> Vec<Message> {
        let text = match view {
            View::Text(text) => text.parts.join("\n"),
            View::Buttons(ButtonsView { parts, .. }) => parts.join("\n"),
            View::Rich(_) => String::new(),
        };
        vec![Message {
            text,
            kind: Kind::Text,
        }]
    }

    fn context_message(&self, block: &Block, _chat: &String) -> Message {
        Message {
            text: block.text.clone(),
            kind: Kind::Text,
        }
    }

    fn text_message(&self, text: &str, _chat: &String) -> Message {
        Message {
            text: text.to_owned(),
            kind: Kind::Text,
        }
    }

    fn text_of(message: &Message) -> &str {
        &message.text
    }

    /// The mail's `Message-ID` comes from `once`: sent again after a
    /// crash, it is the same mail to the person's client.
    async fn send(
        &self,
        chat: &String,
        message: Message,
        once: &str,
    ) -> Result<String, PlatformFailure> {
        let message_id = self.message_id(once);
        let mut out = Outgoing {
            from: &self.from,
            to: chat,
            reply_to: None,
            message_id: message_id.clone(),
            in_reply_to: None,
            references: Vec::new(),
            date: SystemTime::now(),
            links: Vec::new(),
        };
        let (mail, subject) = match &message.kind {
            Kind::Ask {
                id,
                ask,
                view,
                context,
                deadline,
            } => {
                out.reply_to = self.reply_to(&message_id).await?;
                out.links = self.links(id, ask, chat, *deadline).await?;
                self.kept.store(&ask_key(id), &message_id).await?;
                let subject = draw::subject(ask, self.locale);
                let mail = draw::ask_mail(view, context, ask, &out, self.locale).map_err(built)?;
                (mail, subject)
            }
            Kind::Text => {
                let first = message.text.lines().next().unwrap_or_default();
                let subject = format!(
                    "{}{}",
                    draw::SUBJECT_PREFIX,
                    render::cut(first.trim(), draw::MAX_SUBJECT_CHARS, render::Unit::Utf16)
                );
                let mail =
                    draw::follow_up(&message.text, &subject, &out, self.locale).map_err(built)?;
                (mail, subject)
            }
        };
        self.kept.store(&sent_key(&message_id), &subject).await?;
        self.kept.store(&to_key(&message_id), chat).await?;
        self.smtp.send(mail).await?;
        Ok(message_id)
    }

    /// Never asked: an email ask is text.
    async fn show_step(
        &self,
        _chat: &String,
        _message: String,
        _step: &render::Step,
    ) -> Result<Option<String>, PlatformFailure> {
        Ok(None)
    }

    /// A mail cannot be edited: the status line is a mail in its thread.
    async fn close(
        &self,
        chat: &String,
        message: String,
        _shown: &str,
        status: &str,
    ) -> Result<(), PlatformFailure> {
        let id = self.message_id(&format!("closed.{message}"));
        self.follow_up(chat, &message, status, id).await.map(|_| ())
    }

    fn reply(&self, chat: &String, to: String, text: String) {
        let id = self.message_id(&format!("re.{}", uuid::Uuid::new_v4().simple()));
        let (platform, chat) = (self.clone(), chat.clone());
        tokio::spawn(async move {
            if let Err(error) = platform.follow_up(&chat, &to, &text, id).await {
                tracing::warn!(error = %error, "cannot answer a mail");
            }
        });
    }

    /// A reminder in the ask mail's thread.
    async fn remind(
        &self,
        chat: &String,
        to: String,
        reminder: Reminder<'_>,
    ) -> Result<String, PlatformFailure> {
        let id = self.message_id(reminder.once);
        self.follow_up(chat, &to, reminder.text, id).await
    }

    /// Nothing is pressed in a mail.
    async fn acknowledge(&self, _reply: (), _ack: Ack) {}

    /// Nothing is pressed in a mail.
    async fn ask_own_words(
        &self,
        _reply: (),
        _chat: &String,
        _prompt: OwnWords<'_>,
    ) -> Result<Option<String>, PlatformFailure> {
        Ok(None)
    }
}

/// What a one-click link carries besides its path.
#[derive(Debug, serde::Deserialize)]
struct LinkQuery {
    to: String,
    exp: u64,
    sig: String,
}

/// A page saying `title` alone, with `status`.
fn page(status: StatusCode, locale: Locale, title: &str) -> Response {
    (status, Html(draw::page(locale, title, ""))).into_response()
}

impl Reader {
    /// The claim of a link, if its signature and time hold, with the
    /// ask it names and the option's label.
    async fn claimed(
        &self,
        ask: String,
        option: usize,
        query: LinkQuery,
    ) -> Result<(Claim, AskView, String), Response> {
        let locale = self.config.locale;
        let invalid = |status| {
            let text = locale.strings().email_link_invalid;
            page(status, locale, text)
        };
        let bridge = self
            .bridge
            .upgrade()
            .ok_or_else(|| invalid(StatusCode::SERVICE_UNAVAILABLE))?;
        let claim = Claim {
            ask,
            option,
            to: query.to,
            expires: query.exp,
        };
        let secret = secret(&self.kept)
            .await
            .map_err(|_| invalid(StatusCode::SERVICE_UNAVAILABLE))?;
        let now = bridge.now().0 / 1_000;
        match link::verify(&secret, &claim, &query.sig, now) {
            Ok(()) => {}
            Err(LinkError::Forged) => return Err(invalid(StatusCode::FORBIDDEN)),
            Err(LinkError::Expired) => return Err(invalid(StatusCode::GONE)),
        }
        let view = bridge
            .get(&claim.ask)
            .await
            .map_err(|_| invalid(StatusCode::NOT_FOUND))?;
        let label = match view.ask.questions.as_slice() {
            [question] => pick_labels(question, locale)
                .and_then(|mut labels| (option < labels.len()).then(|| labels.swap_remove(option))),
            _ => None,
        }
        .ok_or_else(|| invalid(StatusCode::NOT_FOUND))?;
        Ok((claim, view, label))
    }
}

/// `GET /email/answer/{ask}/{option}`: what the link would answer, and a
/// button that does. Nothing changes.
async fn confirm_page(
    State(reader): State<Arc<Reader>>,
    Path((ask, option)): Path<(String, usize)>,
    Query(query): Query<LinkQuery>,
) -> Response {
    let locale = reader.config.locale;
    let (_, view, label) = match reader.claimed(ask, option, query).await {
        Ok(claimed) => claimed,
        Err(refused) => return refused,
    };
    if view.state.as_str() != "pending" {
        return page(
            StatusCode::OK,
            locale,
            locale.strings().email_link_not_taken,
        );
    }
    let question = view
        .ask
        .questions
        .first()
        .map(|question| question.text.as_str())
        .unwrap_or_default();
    Html(draw::confirm_page(question, &label, locale)).into_response()
}

/// `POST /email/answer/{ask}/{option}`: answers, as the option's number
/// in a reply to the ask's mail from the address it went to.
async fn answer_by_link(
    State(reader): State<Arc<Reader>>,
    Path((ask, option)): Path<(String, usize)>,
    Query(query): Query<LinkQuery>,
) -> Response {
    let locale = reader.config.locale;
    let s = locale.strings();
    let signature = query.sig.clone();
    let (claim, view, label) = match reader.claimed(ask, option, query).await {
        Ok(claimed) => claimed,
        Err(refused) => return refused,
    };
    if view.state.as_str() != "pending" {
        return page(StatusCode::CONFLICT, locale, s.email_link_not_taken);
    }
    let Ok(Some(mail)) = reader.kept.get(&ask_key(&claim.ask)).await else {
        return page(StatusCode::OK, locale, s.email_link_not_taken);
    };
    let typed = inbound::Typed {
        chat: claim.to.clone(),
        place: Place::Email {
            address: claim.to.clone(),
        },
        message: format!(
            "link.{}.{}",
            claim.ask,
            &signature[..signature.len().min(16)]
        ),
        reply_to: Some(mail),
        text: (claim.option + 1).to_string(),
        from: person(&claim.to, None),
    };
    let delivery = typed.message.clone();
    if reader
        .driver
        .line_up(Inbound::Typed(typed), Some(&delivery))
        .await
        == Handled::Retry
    {
        return page(
            StatusCode::SERVICE_UNAVAILABLE,
            locale,
            s.email_link_invalid,
        );
    }
    let taken = match reader.bridge.upgrade() {
        Some(bridge) => bridge.get(&claim.ask).await.ok().is_some_and(|view| {
            view.outcome
                .and_then(|outcome| outcome.answered_by)
                .is_some_and(|by| by.user_id == claim.to)
                && view.answers.first().is_some_and(Option::is_some)
        }),
        None => false,
    };
    match taken {
        true => page(
            StatusCode::OK,
            locale,
            &fill(s.email_link_done, &[("a", &label)]),
        ),
        false => page(StatusCode::CONFLICT, locale, s.email_link_not_taken),
    }
}

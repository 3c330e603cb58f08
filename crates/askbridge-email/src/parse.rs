//! A reply mail as what askbridge needs of it. Pure: reads the bytes of
//! one mail (RFC 5322, as IMAP fetches it) and nothing else.
//!
//! - Threading: `Message-ID`, `In-Reply-To`, `References` (ids without
//!   angle brackets), and the addresses it went to (`To`, `Cc`,
//!   `Delivered-To`, `X-Original-To`), whose plus-address token
//!   ([`plus_token`]) names the ask.
//! - The sender (`From`, address lowercased) and the `Subject`. Only a
//!   mail with exactly one `From` header naming exactly one address has
//!   a sender; any other is a [`BadMail`], since which of several senders
//!   authentication would speak for cannot be told.
//! - Whether a machine sent it ([`Automatic`]): an auto-reply, a list's
//!   mail, a bounce. Nobody answers with those.
//! - Every `Authentication-Results` header with its DMARC result and the
//!   domain that result is for (`header.from`), in order; and
//!   [`Mail::authenticated`], the rule that trusts only the topmost one
//!   (the one the receiving server added last), only from the receiving
//!   server named, and only for the sender's own domain.
//! - The body the person wrote: the `text/plain` part (RFC 3676 flowed
//!   lines joined), else the `text/html` one as text, then only their own
//!   lines ([`askbridge_core::written`]).
//!
//! A mail larger than [`MAX_MAIL_BYTES`], or without headers or sender,
//! is a [`BadMail`]; MIME damage (an unterminated boundary, a bad
//! charset) gives what can be read.

use std::collections::HashSet;

use askbridge_core::written::{html_text, written_part};
use mail_parser::{Addr, Message, MessageParser, MessagePart, MimeHeaders, PartType};

/// The largest mail read, in bytes: a reply is text; one larger carries
/// attachments nobody answers with.
pub const MAX_MAIL_BYTES: usize = 1024 * 1024;

/// One reply mail, read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mail {
    /// Its `Message-ID`, without angle brackets.
    pub message_id: Option<String>,
    /// The mails it answers (`In-Reply-To`), without angle brackets.
    pub in_reply_to: Vec<String>,
    /// The thread it is in (`References`), oldest first, without angle
    /// brackets.
    pub references: Vec<String>,
    /// Who sent it.
    pub from: Sender,
    /// The addresses it went to (`To`, `Cc`, `Delivered-To`,
    /// `X-Original-To`), lowercased, each once.
    pub recipients: Vec<String>,
    /// Its subject, decoded.
    pub subject: Option<String>,
    /// Why a machine sent it, when one did.
    pub automatic: Option<Automatic>,
    /// Every `Authentication-Results` header, in order (the newest, added
    /// by the last receiving server, first).
    pub authentication: Vec<AuthResult>,
    /// What the person wrote: no quote, signature or footer; may be
    /// empty.
    pub text: String,
}

/// The sender of a mail (`From`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sender {
    /// The address, lowercased.
    pub address: String,
    /// The display name, when there is one.
    pub name: Option<String>,
}

/// The sign that a machine sent a mail.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Automatic {
    /// `Auto-Submitted` other than `no` (RFC 3834).
    AutoSubmitted,
    /// `Precedence: bulk`, `junk`, `list` or `auto_reply`.
    Precedence,
    /// `X-Autoreply`.
    Autoreply,
    /// `X-Autorespond`.
    Autorespond,
    /// `List-Id`: a mailing list's mail.
    List,
    /// `Return-Path: <>`: a bounce or other notification.
    NullReturnPath,
}

/// One `Authentication-Results` header (RFC 8601).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuthResult {
    /// The server that checked (`mx.example.com`), lowercased; empty when
    /// the header names none.
    pub authserv_id: String,
    /// Its DMARC result (`pass`, `fail`, `none`, …), lowercased; `None`
    /// when it has none.
    pub dmarc: Option<String>,
    /// The domain its DMARC result is for (`header.from`), lowercased;
    /// `None` when it names none.
    pub header_from: Option<String>,
}

/// Why a mail does not count as sent by its `From` address.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Unauthenticated {
    /// No `Authentication-Results` header at all.
    #[error("the mail has no Authentication-Results header")]
    NoResult,
    /// The topmost `Authentication-Results` header is another server's
    /// (anyone may write one lower down).
    #[error(
        "the topmost Authentication-Results header is {found:?}'s, not the trusted {trusted:?}'s"
    )]
    Untrusted {
        /// The authserv-id it names.
        found: String,
        /// The one trusted.
        trusted: String,
    },
    /// The trusted server's DMARC result is not `pass`.
    #[error("the trusted server's DMARC result is {}, not pass", .0.as_deref().unwrap_or("missing"))]
    NotPassed(Option<String>),
    /// The trusted server's `dmarc=pass` is for another domain than the
    /// sender's.
    #[error("dmarc=pass is for header.from={}, not the sender's domain {domain:?}", .passed.as_deref().unwrap_or("(none)"))]
    OtherDomain {
        /// The domain the result is for, if it names one.
        passed: Option<String>,
        /// The sender's domain.
        domain: String,
    },
}

/// Why a mail is not read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BadMail {
    /// Larger than [`MAX_MAIL_BYTES`].
    #[error("the mail is {size} bytes, more than {limit}")]
    TooBig {
        /// Its size in bytes.
        size: usize,
        /// The limit.
        limit: usize,
    },
    /// No header could be read: not a mail.
    #[error("the mail has no readable header")]
    Unreadable,
    /// `From` names no address.
    #[error("the mail has no sender address")]
    NoSender,
    /// More than one `From` header: which sender counts cannot be told.
    #[error("the mail has {0} From headers; a reply has one")]
    SenderHeaders(usize),
    /// A `From` naming more than one address: which of them wrote it
    /// cannot be told.
    #[error("the mail's From names {0} addresses; a reply has one sender")]
    SenderAddresses(usize),
}

impl Mail {
    /// Whether the receiving server `trusted_authserv_id` found that the
    /// sender's domain sent this mail: its `Authentication-Results` header
    /// is the topmost one (the one it added last; any below may be the
    /// sender's own forgeries), says `dmarc=pass`, and says it for the
    /// `From` address's domain (`header.from`, ASCII case and IDNA forms
    /// ignored). The receiving server must add that header and take out
    /// any of its name the mail came with.
    pub fn authenticated(&self, trusted_authserv_id: &str) -> Result<(), Unauthenticated> {
        let trusted = trusted_authserv_id.trim().to_ascii_lowercase();
        let topmost = self
            .authentication
            .first()
            .ok_or(Unauthenticated::NoResult)?;
        if topmost.authserv_id != trusted {
            return Err(Unauthenticated::Untrusted {
                found: topmost.authserv_id.clone(),
                trusted,
            });
        }
        if topmost.dmarc.as_deref() != Some("pass") {
            return Err(Unauthenticated::NotPassed(topmost.dmarc.clone()));
        }
        let domain = self
            .from
            .address
            .rsplit_once('@')
            .map(|(_, domain)| domain)
            .unwrap_or_default();
        match &topmost.header_from {
            Some(passed) if same_domain(passed, domain) => Ok(()),
            passed => Err(Unauthenticated::OtherDomain {
                passed: passed.clone(),
                domain: domain.to_owned(),
            }),
        }
    }
}

/// Whether two domains are one: ASCII case ignored, and a Unicode name
/// the same as its punycode (IDNA) form.
fn same_domain(a: &str, b: &str) -> bool {
    let ascii = |domain: &str| {
        let domain = domain.trim().trim_end_matches('.');
        idna::domain_to_ascii(domain).unwrap_or_else(|_| domain.to_ascii_lowercase())
    };
    !a.trim().is_empty() && ascii(a) == ascii(b)
}

/// Reads one mail.
pub fn mail(raw: &[u8]) -> Result<Mail, BadMail> {
    if raw.len() > MAX_MAIL_BYTES {
        return Err(BadMail::TooBig {
            size: raw.len(),
            limit: MAX_MAIL_BYTES,
        });
    }
    let message = MessageParser::new()
        .parse(raw)
        .filter(|message| !message.headers().is_empty())
        .ok_or(BadMail::Unreadable)?;
    let headers: Vec<(&str, String)> = message
        .headers_raw()
        .map(|(name, value)| (name, unfold(value)))
        .collect();
    let from = sender(&message, &headers)?;
    Ok(Mail {
        message_id: message
            .message_id()
            .map(bare_id)
            .filter(|id| !id.is_empty()),
        in_reply_to: ids(message.in_reply_to().as_text_list()),
        references: ids(message.references().as_text_list()),
        recipients: recipients(&message, &headers),
        subject: message.subject().map(|subject| subject.trim().to_owned()),
        automatic: headers
            .iter()
            .find_map(|(name, value)| automatic(name, value)),
        authentication: headers
            .iter()
            .filter(|(name, _)| name.eq_ignore_ascii_case("Authentication-Results"))
            .map(|(_, value)| auth_result(value))
            .collect(),
        text: written_part(&body(&message)),
        from,
    })
}

/// The token of a plus address: `ab12cd` of `bot+ab12cd@example.com`
/// when the bot's local part is `bot` (compared ignoring ASCII case);
/// `None` for any other address or an empty token.
pub fn plus_token<'a>(address: &'a str, bot_local: &str) -> Option<&'a str> {
    let address = address.trim();
    let address = address
        .strip_prefix('<')
        .and_then(|inner| inner.strip_suffix('>'))
        .unwrap_or(address);
    let (local, _domain) = address.rsplit_once('@')?;
    let rest = local
        .get(..bot_local.len())
        .filter(|head| head.eq_ignore_ascii_case(bot_local))
        .and(local.get(bot_local.len()..))?;
    rest.strip_prefix('+').filter(|token| !token.is_empty())
}

/// The one sender of a mail: its one `From` header's one address.
fn sender(message: &Message<'_>, headers: &[(&str, String)]) -> Result<Sender, BadMail> {
    match headers
        .iter()
        .filter(|(name, _)| name.eq_ignore_ascii_case("From"))
        .count()
    {
        0 => return Err(BadMail::NoSender),
        1 => {}
        more => return Err(BadMail::SenderHeaders(more)),
    }
    let listed: Vec<&Addr<'_>> = message
        .from()
        .map(|from| from.iter().collect())
        .unwrap_or_default();
    let from = match listed.as_slice() {
        [] => return Err(BadMail::NoSender),
        [one] => one,
        more => return Err(BadMail::SenderAddresses(more.len())),
    };
    let address = from
        .address()
        .map(str::trim)
        .filter(|address| !address.is_empty())
        .ok_or(BadMail::NoSender)?;
    Ok(Sender {
        address: address.to_lowercase(),
        name: from
            .name()
            .map(str::trim)
            .filter(|name| !name.is_empty())
            .map(str::to_owned),
    })
}

/// A header's raw value on one line.
fn unfold(value: &str) -> String {
    value.replace(['\r', '\n'], "").trim().to_owned()
}

/// A message id without its angle brackets.
fn bare_id(id: &str) -> String {
    id.trim()
        .trim_start_matches('<')
        .trim_end_matches('>')
        .trim()
        .to_owned()
}

/// The ids of `In-Reply-To` or `References`.
fn ids<T: AsRef<str>>(list: Option<&[T]>) -> Vec<String> {
    list.unwrap_or_default()
        .iter()
        .map(|id| bare_id(id.as_ref()))
        .filter(|id| !id.is_empty())
        .collect()
}

/// The addresses a mail went to, lowercased, each once.
fn recipients(message: &Message<'_>, headers: &[(&str, String)]) -> Vec<String> {
    let listed = message
        .all_to()
        .chain(message.all_cc())
        .flat_map(|list| list.iter())
        .filter_map(|addr| addr.address())
        .map(str::to_owned);
    let delivered = headers
        .iter()
        .filter(|(name, _)| {
            name.eq_ignore_ascii_case("Delivered-To") || name.eq_ignore_ascii_case("X-Original-To")
        })
        .map(|(_, value)| bare_id(value));
    let mut seen = HashSet::new();
    listed
        .chain(delivered)
        .map(|address| address.trim().to_lowercase())
        .filter(|address| !address.is_empty() && seen.insert(address.clone()))
        .collect()
}

/// The sign of an automatic mail one header gives, if any.
fn automatic(name: &str, value: &str) -> Option<Automatic> {
    let is = |header: &str| name.eq_ignore_ascii_case(header);
    let word = value
        .split(';')
        .next()
        .unwrap_or_default()
        .trim()
        .to_ascii_lowercase();
    if is("Auto-Submitted") {
        (!word.is_empty() && word != "no").then_some(Automatic::AutoSubmitted)
    } else if is("Precedence") {
        ["bulk", "junk", "list", "auto_reply"]
            .contains(&word.as_str())
            .then_some(Automatic::Precedence)
    } else if is("X-Autoreply") {
        (!matches!(word.as_str(), "no" | "false")).then_some(Automatic::Autoreply)
    } else if is("X-Autorespond") {
        (!matches!(word.as_str(), "no" | "false")).then_some(Automatic::Autorespond)
    } else if is("List-Id") {
        Some(Automatic::List)
    } else if is("Return-Path") {
        (value.split_whitespace().collect::<String>() == "<>").then_some(Automatic::NullReturnPath)
    } else {
        None
    }
}

/// One `Authentication-Results` value: its authserv-id, DMARC result
/// and the domain that result is for. `mx.example.com; dkim=pass
/// header.d=example.com; dmarc=pass (p=REJECT) header.from=example.com`.
/// A value that does not read is a result of nobody's, kept in its place.
fn auth_result(value: &str) -> AuthResult {
    let parts = statements(value);
    let mut parts = parts.iter();
    // The authserv-id, maybe followed by a version number.
    let authserv_id = parts
        .next()
        .and_then(|part| part.split_whitespace().next())
        .unwrap_or_default()
        .to_ascii_lowercase();
    let dmarc = parts.find_map(|part| {
        let (method, rest) = part.split_once('=')?;
        // A method may name its version: `dmarc/1=pass`.
        let method = method.split('/').next().unwrap_or_default().trim();
        method.eq_ignore_ascii_case("dmarc").then_some(rest)
    });
    // `header.from = example.com` is `header.from=example.com`.
    let dmarc = dmarc
        .unwrap_or_default()
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .replace(" =", "=")
        .replace("= ", "=");
    let mut words = dmarc.split_whitespace();
    let result = words.next().map(str::to_ascii_lowercase);
    let header_from = words.find_map(|word| {
        let (property, value) = word.split_once('=')?;
        property
            .eq_ignore_ascii_case("header.from")
            .then(|| value.trim_matches('"').to_ascii_lowercase())
            .filter(|domain| !domain.is_empty())
    });
    AuthResult {
        authserv_id,
        dmarc: result,
        header_from,
    }
}

/// The `;`-separated statements of a header value, comments (nested
/// parentheses) taken out; a `;` or `(` in a quoted string is text.
fn statements(value: &str) -> Vec<String> {
    let mut parts = Vec::new();
    let mut part = String::new();
    let mut comment = 0usize;
    let mut quoted = false;
    let mut escaped = false;
    for c in value.chars() {
        let text = comment == 0;
        if escaped {
            escaped = false;
        } else if c == '\\' {
            escaped = true;
        } else if quoted {
            quoted = c != '"';
        } else if c == '(' {
            comment += 1;
            continue;
        } else if c == ')' && comment > 0 {
            comment -= 1;
            continue;
        } else if c == ';' && text {
            parts.push(std::mem::take(&mut part).trim().to_owned());
            continue;
        } else if c == '"' && text {
            quoted = true;
        }
        if text && comment == 0 {
            part.push(c);
        }
    }
    parts.push(part.trim().to_owned());
    parts
}

/// The text of a mail's body: its plain-text parts, else its HTML parts
/// as text, else (MIME gone wrong) the whole body if it is text.
fn body(message: &Message<'_>) -> String {
    let plain: Vec<String> = message
        .text_bodies()
        .filter_map(|part| match &part.body {
            PartType::Text(text) if is_plain(part) => Some(match flowed(part) {
                Some(delsp) => unflow(text, delsp),
                None => text.to_string(),
            }),
            _ => None,
        })
        .collect();
    if !plain.is_empty() {
        return plain.join("\n");
    }
    let html: Vec<String> = message
        .html_bodies()
        .filter_map(|part| match &part.body {
            PartType::Html(html) => Some(html_text(html)),
            _ => None,
        })
        .collect();
    if !html.is_empty() {
        return html.join("\n");
    }
    // A multipart whose boundary never comes is read as one text.
    match &message.root_part().body {
        PartType::Text(text) => text.to_string(),
        _ => String::new(),
    }
}

/// Whether a text part is `text/plain` (or has no type, which means it).
fn is_plain(part: &MessagePart<'_>) -> bool {
    part.content_type().is_none_or(|kind| {
        kind.ctype().eq_ignore_ascii_case("text")
            && kind
                .subtype()
                .is_none_or(|sub| sub.eq_ignore_ascii_case("plain"))
    })
}

/// For a `format=flowed` part (RFC 3676), whether its soft breaks delete
/// their space (`delsp=yes`); `None` for a fixed one.
fn flowed(part: &MessagePart<'_>) -> Option<bool> {
    let kind = part.content_type()?;
    kind.attribute("format")
        .filter(|format| format.eq_ignore_ascii_case("flowed"))?;
    Some(
        kind.attribute("delsp")
            .is_some_and(|delsp| delsp.eq_ignore_ascii_case("yes")),
    )
}

/// A `format=flowed` text with its soft line breaks (a line ending in a
/// space, within one quote depth) joined and its space-stuffing taken
/// off; quoted lines come out as `> …`.
fn unflow(text: &str, delsp: bool) -> String {
    let text = text.replace("\r\n", "\n");
    let mut out = String::with_capacity(text.len());
    // The quote depth of the paragraph being joined, if one is open.
    let mut open: Option<usize> = None;
    for line in text.split('\n') {
        let depth = line.bytes().take_while(|&b| b == b'>').count();
        let content = &line[depth..];
        let content = content.strip_prefix(' ').unwrap_or(content);
        let soft = content.ends_with(' ') && content != "-- ";
        if open.is_some_and(|open| open != depth) {
            out.push('\n');
            open = None;
        }
        if open.is_none() && depth > 0 {
            out.push_str(&">".repeat(depth));
            out.push(' ');
        }
        if soft {
            out.push_str(if delsp {
                &content[..content.len() - 1]
            } else {
                content
            });
            open = Some(depth);
        } else {
            out.push_str(content);
            out.push('\n');
            open = None;
        }
    }
    out
}

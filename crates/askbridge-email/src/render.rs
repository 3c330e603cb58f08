//! The mails askbridge sends, built as `lettre` messages. Pure: the
//! message depends only on the arguments (the date is one, and the MIME
//! boundary is derived from the message id), so a `run` module only hands
//! it to lettre's SMTP transport.
//!
//! - [`ask_mail`]: an ask as one `multipart/alternative` mail. The text
//!   part is the core's numbered prompt, a line saying how to answer by
//!   replying, and the ask's context blocks fenced; the HTML part shows the
//!   same text escaped, line breaks kept, the context blocks as `<pre>`.
//! - [`follow_up`]: a plain text mail in the ask's thread (a re-ask, a
//!   clarification, a reminder, the closing line), subject `Re: …`.
//! - [`subject`]: an ask's subject, `[askbridge] {header}: {question}`.
//!
//! Every mail carries its `Message-ID`, `In-Reply-To` and `References`
//! when given, `Reply-To` (the plus-address that names the ask) when
//! given, `Content-Language`, and `Auto-Submitted: auto-generated` with
//! `X-Auto-Response-Suppress: All`, so that auto-responders leave it be.

use std::fmt::Write as _;
use std::time::SystemTime;

use askbridge_core::model::Ask;
use askbridge_core::render::html_escape as escape;
use askbridge_core::render::{
    Block, ButtonsView, EMPTY_TEXT, Locale, RichView, TextView, Unit, View, cut, fill, non_blank,
    text_prompt,
};
use lettre::address::AddressError;
use lettre::message::header::{HeaderName, HeaderValue};
use lettre::message::{Mailbox, MessageBuilder, MultiPart, SinglePart};
use lettre::{Address, Message};

/// What every subject starts with.
pub const SUBJECT_PREFIX: &str = "[askbridge] ";
/// Longest subject, in characters (prefix and "(+N more)" included).
pub const MAX_SUBJECT_CHARS: usize = 150;

/// Who a mail is from and to, and where it sits in its thread.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outgoing<'a> {
    /// The bot's mailbox, such as `askbridge <bot@example.com>`.
    pub from: &'a str,
    /// The person's address (a mailbox with a name is taken too).
    pub to: &'a str,
    /// Where replies go, such as the plus-address `bot+TOKEN@example.com`
    /// that names the ask.
    pub reply_to: Option<String>,
    /// The mail's own id, without angle brackets (`ask_123.0@askbridge`).
    pub message_id: String,
    /// The id of the mail this one answers, without angle brackets.
    pub in_reply_to: Option<String>,
    /// The ids of the thread, oldest first, without angle brackets.
    pub references: Vec<String>,
    /// The mail's `Date`.
    pub date: SystemTime,
    /// One-click answers shown in the HTML part (none: replying is the
    /// way).
    pub links: Vec<Link>,
}

/// A one-click answer: an option, and the link that answers with it
/// (after a confirmation: mail scanners open every link).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Link {
    /// The option's label.
    pub label: String,
    /// The signed link.
    pub url: String,
}

/// Why a mail could not be built.
#[derive(Debug, thiserror::Error)]
pub enum RenderError {
    /// An address (`from`, `to`, `reply-to`) is not a mailbox.
    #[error("bad {field} address {value:?}")]
    BadAddress {
        /// Which address.
        field: &'static str,
        /// The address as given.
        value: String,
        /// Why lettre refused it.
        #[source]
        source: AddressError,
    },
    /// A message id is empty or holds spaces, angle brackets or non-ASCII.
    #[error("bad message id {0:?}")]
    BadMessageId(String),
    /// lettre refused the message.
    #[error("mail not built")]
    Build(#[from] lettre::error::Error),
}

/// An ask's subject: `[askbridge] {header}: {question}` for its first
/// question (`[askbridge] {question}` without a header, or when the
/// question starts with it, as a header the core drew from the question
/// does), then the
/// localised "(+N more)" when it has more, on one line and cut to
/// [`MAX_SUBJECT_CHARS`] (the question is cut, the count kept).
pub fn subject(ask: &Ask, locale: Locale) -> String {
    let first = ask.questions.first();
    let question = first
        .map(|q| one_line(&q.text))
        .filter(|t| !t.is_empty())
        .or_else(|| ask.title.as_deref().map(one_line))
        .filter(|t| !t.is_empty())
        .unwrap_or_else(|| EMPTY_TEXT.to_owned());
    let header = first
        .map(|q| one_line(&q.header))
        .filter(|h| !h.is_empty() && !starts_with_caseless(&question, h));
    let head = match header {
        Some(header) => format!("{header}: {question}"),
        None => question,
    };
    let more = ask.questions.len().saturating_sub(1);
    let suffix = match more {
        0 => String::new(),
        n => fill(
            locale.strings().email_more_questions,
            &[("n", &n.to_string())],
        ),
    };
    let room = MAX_SUBJECT_CHARS
        .saturating_sub(Unit::Utf16.len(SUBJECT_PREFIX) + Unit::Utf16.len(&suffix))
        .max(1);
    format!("{SUBJECT_PREFIX}{}{suffix}", cut(&head, room, Unit::Utf16))
}

/// An ask as a mail: [`subject`], a text part (the prompt `view` draws,
/// how to answer, the `context` blocks fenced) and an HTML part showing
/// the same. A view that is not text (email is drawn as text, so only a
/// mis-set channel gives one) is replaced by the core's numbered prompt:
/// a mail is answered by typing.
pub fn ask_mail(
    view: &View,
    context: &[Block],
    ask: &Ask,
    out: &Outgoing,
    locale: Locale,
) -> Result<Message, RenderError> {
    let prompt = non_blank(&prompt(view, ask, locale));
    let how = locale.strings().email_how_to_answer;

    let mut text = format!("{prompt}\n\n{how}\n");
    for block in context {
        text.push('\n');
        text.push_str(&fenced(block));
    }

    let mut html = format!(
        "<!DOCTYPE html>\n<html lang=\"{lang}\">\n<head><meta charset=\"utf-8\"></head>\n<body>\n\
         <div style=\"white-space: pre-wrap\">{prompt}</div>\n\
         <p style=\"color: #555555\">{how}</p>\n",
        lang = locale.as_str(),
        prompt = escape(&prompt),
        how = escape(how),
    );
    if !out.links.is_empty() {
        let _ = writeln!(
            html,
            "<p>{}</p>\n<ul>",
            escape(locale.strings().email_or_click)
        );
        for link in &out.links {
            let _ = writeln!(
                html,
                "<li><a href=\"{}\">{}</a></li>",
                escape(&link.url),
                escape(&link.label)
            );
        }
        html.push_str("</ul>\n");
    }
    for block in context {
        if let Some(language) = language(block) {
            let _ = writeln!(
                html,
                "<div style=\"color: #555555; font-size: small\">{}</div>",
                escape(language)
            );
        }
        let _ = writeln!(
            html,
            "<pre style=\"white-space: pre-wrap; background: #f6f8fa; padding: 8px\">{}</pre>",
            escape(&block.text)
        );
    }
    html.push_str("</body>\n</html>\n");

    let body = MultiPart::alternative()
        .boundary(boundary(&out.message_id))
        .singlepart(SinglePart::plain(text))
        .singlepart(SinglePart::html(html));
    Ok(headers(out, subject(ask, locale), locale)?.multipart(body)?)
}

/// The prompt a mail shows for `view` of `ask`: the numbered prompt the
/// core drew, else (a view that is not text: only a mis-set channel draws
/// one) the core's numbered prompt for the ask, since a mail is answered
/// by typing.
pub fn prompt(view: &View, ask: &Ask, locale: Locale) -> String {
    match view {
        View::Text(TextView { parts }) => parts.join("\n"),
        View::Buttons(ButtonsView { parts: _, rows: _ }) | View::Rich(RichView { steps: _ }) => {
            text_prompt(ask, locale)
        }
    }
}

/// A plain text mail in an ask's thread: subject `Re: {subject_of_ask}`
/// (not doubled when it already starts with `Re:`), `text` as its only
/// part.
pub fn follow_up(
    text: &str,
    subject_of_ask: &str,
    out: &Outgoing,
    locale: Locale,
) -> Result<Message, RenderError> {
    let subject = one_line(subject_of_ask);
    let subject = match subject.get(..3) {
        Some(re) if re.eq_ignore_ascii_case("re:") => subject,
        _ => format!("Re: {subject}"),
    };
    let part = SinglePart::plain(non_blank(text));
    Ok(headers(out, subject, locale)?.singlepart(part)?)
}

/// The headers every mail carries.
fn headers(out: &Outgoing, subject: String, locale: Locale) -> Result<MessageBuilder, RenderError> {
    let mut builder = Message::builder()
        .from(mailbox("from", out.from)?)
        .to(mailbox("to", out.to)?)
        .subject(subject)
        .date(out.date)
        .message_id(Some(angled(&out.message_id)?));
    if let Some(reply_to) = &out.reply_to {
        builder = builder.reply_to(mailbox("reply-to", reply_to)?);
    }
    if let Some(id) = &out.in_reply_to {
        builder = builder.in_reply_to(angled(id)?);
    }
    if !out.references.is_empty() {
        let ids: Vec<String> = out
            .references
            .iter()
            .map(|id| angled(id))
            .collect::<Result<_, _>>()?;
        builder = builder.references(ids.join(" "));
    }
    let raw = |name: &'static str, value: &str| {
        HeaderValue::new(HeaderName::new_from_ascii_str(name), value.to_owned())
    };
    Ok(builder
        .raw_header(raw("Content-Language", locale.as_str()))
        .raw_header(raw("Auto-Submitted", "auto-generated"))
        .raw_header(raw("X-Auto-Response-Suppress", "All")))
}

/// `value` as a mailbox, or why it is not one. A domain that is not
/// ASCII is written in its ASCII form (IDNA: `bücher.example` is
/// `xn--bcher-kva.example`), which every SMTP server takes; a local part
/// that is not ASCII stays, for a server with SMTPUTF8.
fn mailbox(field: &'static str, value: &str) -> Result<Mailbox, RenderError> {
    let bad = |source| RenderError::BadAddress {
        field,
        value: value.to_owned(),
        source,
    };
    let mailbox: Mailbox = value.trim().parse().map_err(bad)?;
    let domain = mailbox.email.domain();
    if domain.is_ascii() {
        return Ok(mailbox);
    }
    let ascii = idna::domain_to_ascii(domain).map_err(|_| bad(AddressError::InvalidDomain))?;
    let email = Address::new(mailbox.email.user(), ascii).map_err(bad)?;
    Ok(Mailbox::new(mailbox.name, email))
}

/// A message id in angle brackets; refused when empty or when it holds
/// anything but visible ASCII (brackets and spaces included).
fn angled(id: &str) -> Result<String, RenderError> {
    let ok = !id.is_empty()
        && id
            .chars()
            .all(|c| c.is_ascii_graphic() && c != '<' && c != '>');
    match ok {
        true => Ok(format!("<{id}>")),
        false => Err(RenderError::BadMessageId(id.to_owned())),
    }
}

/// The MIME boundary of a mail: fixed by its id (FNV-1a), so the same
/// arguments give the same bytes. `=_` never occurs in quoted-printable or
/// base64 text.
fn boundary(message_id: &str) -> String {
    let hash = message_id.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    });
    format!("=_askbridge_{hash:016x}")
}

/// A context block as plain text: fenced (a fence longer than any run of
/// backticks in it), its language after the opening fence.
fn fenced(block: &Block) -> String {
    let longest = block
        .text
        .split(|c| c != '`')
        .map(str::len)
        .max()
        .unwrap_or(0);
    let fence = "`".repeat(longest.max(2) + 1);
    let language = language(block).unwrap_or_default();
    format!(
        "{fence}{language}\n{}\n{fence}\n",
        block.text.trim_end_matches('\n')
    )
}

/// A block's language, when it names one.
fn language(block: &Block) -> Option<&str> {
    block
        .language
        .as_deref()
        .map(str::trim)
        .filter(|l| !l.is_empty())
}

/// `text` on one line: every run of white space one space.
fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Whether `text` starts with `prefix`, ignoring case.
fn starts_with_caseless(text: &str, prefix: &str) -> bool {
    text.to_lowercase().starts_with(&prefix.to_lowercase())
}

/// `text` safe inside HTML text and attribute values.
/// A small page in `locale` titled `title`, `body` (HTML) under it: what
/// a one-click link shows.
pub fn page(locale: Locale, title: &str, body: &str) -> String {
    format!(
        "<!DOCTYPE html>\n<html lang=\"{}\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width\"><title>askbridge</title></head>\
         <body style=\"font-family: sans-serif; max-width: 36em; margin: 3em auto\">\
         <h1 style=\"font-size: 1.3em\">{}</h1>{body}</body></html>\n",
        locale.as_str(),
        escape(title)
    )
}

/// A one-click link's confirmation: "Answer “{label}”?", the question,
/// and the button that answers (the form posts back to the link).
pub fn confirm_page(question: &str, label: &str, locale: Locale) -> String {
    let s = locale.strings();
    let body = format!(
        "<p style=\"white-space: pre-wrap\">{}</p>\
         <form method=\"post\"><button type=\"submit\" style=\"font-size: 1.1em\">{}</button></form>",
        escape(question),
        escape(s.email_link_button)
    );
    page(locale, &fill(s.email_link_confirm, &[("a", label)]), &body)
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use askbridge_core::normalize::normalize_input;
    use askbridge_core::render::{Capabilities, context_blocks, view};
    use mail_parser::MessageParser;
    use serde_json::json;

    use super::*;

    fn ask(json: &str) -> Ask {
        normalize_input(json).expect("a valid ask").ask
    }

    fn outgoing() -> Outgoing<'static> {
        Outgoing {
            from: "askbridge <bot@example.com>",
            to: "alice@example.org",
            reply_to: Some("bot+tok123@example.com".to_owned()),
            message_id: "ask_123.0@askbridge".to_owned(),
            in_reply_to: Some("first@example.org".to_owned()),
            references: vec![
                "root@example.org".to_owned(),
                "first@example.org".to_owned(),
            ],
            date: SystemTime::UNIX_EPOCH + Duration::from_secs(1_800_000_000),
            links: Vec::new(),
        }
    }

    /// The ask of `json` as a mail in `locale`, formatted.
    fn mail(json: &str, locale: Locale) -> Vec<u8> {
        let ask = ask(json);
        let view = view(&ask, "k1", &Capabilities::EMAIL, locale);
        let context = context_blocks(&ask, &Capabilities::EMAIL, locale);
        ask_mail(&view, &context, &ask, &outgoing(), locale)
            .expect("a mail")
            .formatted()
    }

    /// The decoded text and HTML parts of a formatted mail.
    fn parts(bytes: &[u8]) -> (String, String) {
        let message = MessageParser::default().parse(bytes).expect("a mail");
        let text = message.body_text(0).expect("a text part");
        let html = message.body_html(0).expect("an html part");
        (text.replace("\r\n", "\n"), html.replace("\r\n", "\n"))
    }

    fn check_subject(json: &str, locale: Locale, expect: &str) {
        assert_eq!(subject(&ask(json), locale), expect, "{json}");
    }

    #[test]
    fn a_subject_without_a_header() {
        let mut ask = ask(r#"{"questions": [{"question": "Go?", "header": "Ship"}]}"#);
        ask.questions[0].header.clear();
        assert_eq!(subject(&ask, Locale::En), "[askbridge] Go?");
    }

    #[test]
    fn subjects() {
        check_subject(
            r#"{"questions": [{"question": "Ship it now?", "header": "Deploy"}]}"#,
            Locale::En,
            "[askbridge] Deploy: Ship it now?",
        );
        // A header the question starts with says nothing more.
        check_subject(
            r#"{"questions": [{"question": "Deploy now?", "header": "deploy"}]}"#,
            Locale::En,
            "[askbridge] Deploy now?",
        );
        // The core draws a header from the question when none is given.
        check_subject(
            r#"{"questions": [{"question": "Which   database\nshould we use?"}]}"#,
            Locale::En,
            "[askbridge] Which database should we use?",
        );
        check_subject(
            r#"{"questions": [{"question": "用哪个数据库？", "header": "数据库"}]}"#,
            Locale::ZhCn,
            "[askbridge] 数据库: 用哪个数据库？",
        );
        check_subject(
            r#"{"questions": [{"question": "A?"}, {"question": "B?"}]}"#,
            Locale::ZhCn,
            "[askbridge] A?（另有 1 个问题）",
        );
        let many = json!({"questions": (0..12).map(|i| json!({
            "id": format!("q{i}"), "question": format!("Question {i}?"),
        })).collect::<Vec<_>>()});
        check_subject(
            &many.to_string(),
            Locale::En,
            "[askbridge] Question 0? (+11 more)",
        );
    }

    #[test]
    fn a_long_subject_is_cut_and_keeps_the_count() {
        let many = json!({"questions": [
            {"id": "a", "question": "word ".repeat(200)},
            {"id": "b", "question": "B?"},
        ]});
        let subject = subject(&ask(&many.to_string()), Locale::En);
        assert!(Unit::Utf16.len(&subject) <= MAX_SUBJECT_CHARS, "{subject}");
        assert!(subject.ends_with("… (+1 more)"), "{subject}");
        assert!(!subject.contains('\n'));
    }

    #[test]
    fn the_mail_has_a_text_and_an_html_part() {
        let bytes = mail(
            r#"{"questions": [{"question": "Pick one", "options": [{"label": "red", "recommended": true}, {"label": "blue"}]}]}"#,
            Locale::En,
        );
        let raw = String::from_utf8_lossy(&bytes);
        assert!(raw.contains("multipart/alternative"), "{raw}");
        let (text, html) = parts(&bytes);
        for part in [&text, &html] {
            assert!(part.contains("Pick one"), "{part}");
            assert!(part.contains("red"), "{part}");
            assert!(part.contains("blue"), "{part}");
            assert!(part.contains("To answer, reply to this mail."), "{part}");
        }
        assert!(html.contains("white-space: pre-wrap"), "{html}");
        // What the core drew, recommended marker included, is all there.
        let ask = ask(
            r#"{"questions": [{"question": "Pick one", "options": [{"label": "red", "recommended": true}, {"label": "blue"}]}]}"#,
        );
        let prompt = text_prompt(&ask, Locale::En);
        assert!(text.contains(prompt.trim_end()), "{text}\n---\n{prompt}");
        assert!(html.contains(&escape(prompt.trim_end())), "{html}");
    }

    #[test]
    fn html_is_escaped() {
        let bytes = mail(
            r#"{"questions": [{"question": "Run <script>alert(\"x\")</script> & 'y'?"}]}"#,
            Locale::En,
        );
        let (text, html) = parts(&bytes);
        assert!(
            text.contains(r#"Run <script>alert("x")</script> & 'y'?"#),
            "{text}"
        );
        assert!(!html.contains("<script>"), "{html}");
        assert!(
            html.contains(
                "Run &lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &#39;y&#39;?"
            ),
            "{html}"
        );
    }

    #[test]
    fn escape_table() {
        for (input, expect) in [
            ("plain", "plain"),
            ("a & b", "a &amp; b"),
            ("<b>", "&lt;b&gt;"),
            (r#""'"#, "&quot;&#39;"),
            ("ไทย 中文", "ไทย 中文"),
        ] {
            assert_eq!(escape(input), expect);
        }
    }

    #[test]
    fn context_blocks_are_in_both_parts() {
        let bytes = mail(
            r#"{"questions": [{"question": "Apply?"}], "context": {"text": "-old <b>\n+new ```", "language": "diff"}}"#,
            Locale::En,
        );
        let (text, html) = parts(&bytes);
        assert!(
            text.contains("````diff\n-old <b>\n+new ```\n````"),
            "{text}"
        );
        assert!(html.contains("-old &lt;b&gt;\n+new ```</pre>"), "{html}");
        assert!(html.contains(">diff</div>"), "{html}");
    }

    #[test]
    fn threading_and_auto_headers() {
        let bytes = mail(r#"{"questions": [{"question": "Go?"}]}"#, Locale::En);
        let raw = String::from_utf8_lossy(&bytes);
        for header in [
            "Message-ID: <ask_123.0@askbridge>",
            "In-Reply-To: <first@example.org>",
            "References: <root@example.org> <first@example.org>",
            "Reply-To: bot+tok123@example.com",
            "Auto-Submitted: auto-generated",
            "X-Auto-Response-Suppress: All",
            "Content-Language: en",
            "Date: Fri, 15 Jan 2027 08:00:00 +0000",
        ] {
            assert!(raw.contains(header), "{header} in\n{raw}");
        }
        assert!(!raw.contains("Precedence"), "{raw}");
    }

    #[test]
    fn the_same_arguments_give_the_same_bytes() {
        let json = r#"{"questions": [{"question": "Go?"}]}"#;
        assert_eq!(mail(json, Locale::En), mail(json, Locale::En));
    }

    #[test]
    fn the_parser_reads_the_mail_back() {
        for (json, locale) in [
            (
                r#"{"questions": [{"question": "Deploy now?", "header": "Deploy"}]}"#,
                Locale::En,
            ),
            (
                r#"{"questions": [{"question": "ใช้ฐานข้อมูลไหนดี", "header": "ฐานข้อมูล"}]}"#,
                Locale::Th,
            ),
            (
                r#"{"questions": [{"question": "用哪个数据库？", "options": [{"label": "甲"}, {"label": "乙"}]}]}"#,
                Locale::ZhCn,
            ),
        ] {
            let ask = ask(json);
            let bytes = mail(json, locale);
            let read = crate::parse::mail(&bytes).expect("a readable mail");
            assert_eq!(read.from.address, "bot@example.com");
            assert_eq!(read.from.name.as_deref(), Some("askbridge"));
            assert_eq!(read.message_id.as_deref(), Some("ask_123.0@askbridge"));
            assert_eq!(read.in_reply_to, ["first@example.org"]);
            assert_eq!(read.references, ["root@example.org", "first@example.org"]);
            assert_eq!(
                read.subject.as_deref(),
                Some(subject(&ask, locale).as_str())
            );
            assert!(read.automatic.is_some(), "marked as sent by a machine");
            let question = &ask.questions[0].text;
            assert!(read.text.contains(question.as_str()), "{}", read.text);
            let (text, html) = parts(&bytes);
            assert!(text.contains(question.as_str()), "{text}");
            assert!(html.contains(question.as_str()), "{html}");
            assert!(
                text.contains(locale.strings().email_how_to_answer),
                "{text}"
            );
        }
    }

    #[test]
    fn a_follow_up_is_plain_text_in_the_thread() {
        let out = outgoing();
        let message = follow_up(
            "✅ Answered — thank you",
            "[askbridge] Deploy: Deploy now?",
            &out,
            Locale::En,
        )
        .expect("a mail");
        let bytes = message.formatted();
        let raw = String::from_utf8_lossy(&bytes);
        assert!(!raw.contains("multipart"), "{raw}");
        assert!(raw.contains("text/plain"), "{raw}");
        assert!(raw.contains("In-Reply-To: <first@example.org>"), "{raw}");
        assert!(raw.contains("Auto-Submitted: auto-generated"), "{raw}");
        let read = crate::parse::mail(&bytes).expect("a readable mail");
        assert_eq!(
            read.subject.as_deref(),
            Some("Re: [askbridge] Deploy: Deploy now?")
        );
        assert_eq!(read.text, "✅ Answered — thank you");

        let again = follow_up("x", "RE: [askbridge] Go?", &out, Locale::En)
            .expect("a mail")
            .formatted();
        let read = crate::parse::mail(&again).expect("a readable mail");
        assert_eq!(read.subject.as_deref(), Some("RE: [askbridge] Go?"));
    }

    #[test]
    fn bad_addresses_and_ids_are_errors() {
        let ask = ask(r#"{"questions": [{"question": "Go?"}]}"#);
        let view = view(&ask, "k1", &Capabilities::EMAIL, Locale::En);
        let cases: [(Outgoing, &str); 4] = [
            (
                Outgoing {
                    to: "not an address",
                    ..outgoing()
                },
                "bad to address",
            ),
            (
                Outgoing {
                    from: "",
                    ..outgoing()
                },
                "bad from address",
            ),
            (
                Outgoing {
                    reply_to: Some("bot+@".to_owned()),
                    ..outgoing()
                },
                "bad reply-to address",
            ),
            (
                Outgoing {
                    message_id: "<a b>".to_owned(),
                    ..outgoing()
                },
                "bad message id",
            ),
        ];
        for (out, expect) in cases {
            let error = ask_mail(&view, &[], &ask, &out, Locale::En).expect_err("refused");
            assert!(error.to_string().starts_with(expect), "{error}");
            let error = follow_up("x", "s", &out, Locale::En).expect_err("refused");
            assert!(error.to_string().starts_with(expect), "{error}");
        }
    }

    #[test]
    fn one_click_answers_are_links_in_the_html_part_only() {
        let ask = ask(r#"{"question": "Deploy where?", "options": ["Staging", "Production"]}"#);
        let drawn = view(&ask, "k1", &Capabilities::EMAIL, Locale::En);
        let out = Outgoing {
            links: vec![Link {
                label: "Production <now>".to_owned(),
                url: "https://askbridge.example.com/email/answer/a/1?exp=9&sig=ab".to_owned(),
            }],
            ..outgoing()
        };
        let mail = ask_mail(&drawn, &[], &ask, &out, Locale::En).expect("a mail");
        let raw = String::from_utf8(mail.formatted())
            .expect("UTF-8")
            .replace("=\r\n", "");
        let parsed = MessageParser::default()
            .parse(raw.as_bytes())
            .expect("parsed");
        let html = parsed.body_html(0).expect("an HTML part").into_owned();
        assert!(
            html.contains(
                "<li><a href=\"https://askbridge.example.com/email/answer/a/1?exp=9&amp;sig=ab\">Production &lt;now&gt;</a></li>"
            ),
            "{html}"
        );
        assert!(html.contains("Or answer with one click"), "{html}");
        let text = parsed.body_text(0).expect("a text part").into_owned();
        assert!(!text.contains("https://"), "{text}");
    }
}

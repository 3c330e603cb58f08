//! Reply mails as mail clients and servers write them (RFC 5322 text,
//! CRLF line ends), read by `parse::mail`.

use askbridge_email::parse::{
    AuthResult, Automatic, BadMail, MAX_MAIL_BYTES, Mail, Sender, Unauthenticated, mail, plus_token,
};
use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use proptest::prelude::*;

/// `text` with CRLF line ends, as bytes.
fn crlf(text: &str) -> Vec<u8> {
    text.replace('\n', "\r\n").into_bytes()
}

/// Reads a mail written as text.
#[track_caller]
fn read(text: &str) -> Mail {
    match mail(&crlf(text)) {
        Ok(mail) => mail,
        Err(error) => panic!("not read ({error}):\n{text}"),
    }
}

/// Base64 in 76-character lines.
fn base64_lines(bytes: &[u8]) -> String {
    let encoded = STANDARD.encode(bytes);
    encoded
        .as_bytes()
        .chunks(76)
        .map(|line| String::from_utf8_lossy(line).into_owned())
        .collect::<Vec<_>>()
        .join("\n")
}

/// Quoted-printable: bytes outside printable ASCII, and `=`, as `=XX`
/// (lines are short enough to need no soft breaks).
fn quoted_printable(bytes: &[u8]) -> String {
    let mut out = String::new();
    for &b in bytes {
        match b {
            b'\n' => out.push('\n'),
            b'=' | 0x80..=0xff => out.push_str(&format!("={b:02X}")),
            _ => out.push(char::from(b)),
        }
    }
    out
}

/// The headers of a reply from Alice to the bot's question `ask-1`.
const HEADERS: &str = "Return-Path: <alice@example.com>
Delivered-To: bot+ab12cd@example.com
Received: from mail.example.org (mail.example.org [192.0.2.1])
\tby mx.example.com with ESMTPS id 1234
\tfor <bot+ab12cd@example.com>; Mon, 7 Dec 2026 10:05:00 +0000
Authentication-Results: mx.example.com;
       dkim=pass header.d=example.org header.s=s1 header.b=abc;
       spf=pass (mx.example.com: domain of alice@example.org designates 192.0.2.1 as permitted sender) smtp.mailfrom=alice@example.org;
       dmarc=pass (p=REJECT sp=REJECT dis=NONE) header.from=example.org
From: Alice Example <Alice@Example.ORG>
To: askbridge <bot+ab12cd@example.com>
Cc: \"Bob\" <bob@example.org>, carol@example.org
Subject: Re: Where should I deploy?
Date: Mon, 7 Dec 2026 10:05:00 +0000
Message-ID: <CAF=reply-1@mail.example.org>
In-Reply-To: <ask-1@askbridge.example.com>
References: <thread-0@askbridge.example.com>
 <ask-1@askbridge.example.com>
MIME-Version: 1.0
";

#[test]
fn a_gmail_reply_with_both_parts_reads_its_threading_and_its_plain_text() {
    let raw = format!(
        "{HEADERS}Content-Type: multipart/alternative; boundary=\"000000000000abcdef\"

--000000000000abcdef
Content-Type: text/plain; charset=\"UTF-8\"
Content-Transfer-Encoding: quoted-printable

Production, caf=C3=A9 is closed =3D no staging

On Mon, Dec 7, 2026 at 10:00 AM askbridge <bot+ab12cd@example.com> wrote:

> Where should I deploy?
>
> 1. Staging
> 2. Production
>

--000000000000abcdef
Content-Type: text/html; charset=\"UTF-8\"
Content-Transfer-Encoding: quoted-printable

<div dir=3D\"ltr\">Not this: the plain part wins</div>

--000000000000abcdef--
"
    );
    let reply = read(&raw);
    assert_eq!(
        reply,
        Mail {
            message_id: Some("CAF=reply-1@mail.example.org".to_owned()),
            in_reply_to: vec!["ask-1@askbridge.example.com".to_owned()],
            references: vec![
                "thread-0@askbridge.example.com".to_owned(),
                "ask-1@askbridge.example.com".to_owned()
            ],
            from: Sender {
                address: "alice@example.org".to_owned(),
                name: Some("Alice Example".to_owned()),
            },
            recipients: vec![
                "bot+ab12cd@example.com".to_owned(),
                "bob@example.org".to_owned(),
                "carol@example.org".to_owned(),
            ],
            subject: Some("Re: Where should I deploy?".to_owned()),
            automatic: None,
            authentication: vec![AuthResult {
                authserv_id: "mx.example.com".to_owned(),
                dmarc: Some("pass".to_owned()),
                header_from: Some("example.org".to_owned()),
            }],
            text: "Production, café is closed = no staging".to_owned(),
        }
    );
    let token = reply
        .recipients
        .iter()
        .find_map(|address| plus_token(address, "bot"));
    assert_eq!(token, Some("ab12cd"));
}

#[test]
fn a_base64_body_and_encoded_words_are_decoded() {
    let body = base64_lines("选 2\n\n在 2026年12月7日 10:00，askbridge <bot@example.com> 写道：\n> 1. 预发布\n> 2. 生产\n".as_bytes());
    let raw = format!(
        "From: =?UTF-8?B?5byg5LiJ?= <zhang@example.cn>
To: bot@example.com
Subject: =?UTF-8?B?UmU6IOmDqOe9suWIsOWTqumHjO+8nw==?=
Message-ID: <z1@example.cn>
Content-Type: text/plain; charset=utf-8
Content-Transfer-Encoding: base64

{body}
"
    );
    let reply = read(&raw);
    assert_eq!(reply.from.name.as_deref(), Some("张三"));
    assert_eq!(reply.subject.as_deref(), Some("Re: 部署到哪里？"));
    assert_eq!(reply.text, "选 2");
    assert_eq!(reply.in_reply_to, Vec::<String>::new());
    assert_eq!(reply.authentication, vec![]);
}

/// How a test body is put in the mail.
#[derive(Debug, Clone, Copy)]
enum Transfer {
    Base64,
    QuotedPrintable,
    EightBit,
}

#[test]
fn legacy_charsets_decode() {
    use encoding_rs::{
        BIG5, EUC_KR, GB18030, GBK, ISO_8859_2, SHIFT_JIS, WINDOWS_874, WINDOWS_1252,
    };
    // charset label, encoder, how sent, body, what the person wrote.
    let rows = [
        (
            "gb2312",
            GBK,
            Transfer::Base64,
            "选 2\n\n在 2026年12月7日 10:00，askbridge <bot@example.com> 写道：\n> 1. 预发布\n",
            "选 2",
        ),
        (
            "GB18030",
            GB18030,
            Transfer::QuotedPrintable,
            "生产环境\n\naskbridge <bot@example.com> 于2026年12月7日周一 10:00写道：\n> 1. 预发布\n",
            "生产环境",
        ),
        (
            "gbk",
            GBK,
            Transfer::EightBit,
            "第一个\n\n发件人: askbridge <bot@example.com>\n发送时间: 2026年12月7日 10:00\n收件人: 张三\n主题: 部署到哪里？\n\n1. 预发布\n",
            "第一个",
        ),
        (
            "big5",
            BIG5,
            Transfer::Base64,
            "第二個\n\naskbridge <bot@example.com> 於 2026年12月7日 上午10:00 寫道：\n> 1. 預發布\n",
            "第二個",
        ),
        (
            "TIS-620",
            WINDOWS_874,
            Transfer::Base64,
            "เลือก 2 ครับ\n\nเมื่อ จ. 7 ธ.ค. 2026 เวลา 10:00 askbridge <bot@example.com> เขียนว่า:\n> 1. Staging\n",
            "เลือก 2 ครับ",
        ),
        (
            "windows-874",
            WINDOWS_874,
            Transfer::QuotedPrintable,
            "ข้อ 1\n\nส่งจาก iPhone ของฉัน\n",
            "ข้อ 1",
        ),
        (
            "iso-8859-11",
            WINDOWS_874,
            Transfer::EightBit,
            "ใช้ Staging\n",
            "ใช้ Staging",
        ),
        (
            "ISO-8859-1",
            WINDOWS_1252,
            Transfer::QuotedPrintable,
            "Café: Produktion\n\nAm 07.12.26 um 10:00 schrieb askbridge:\n> 1. Staging\n",
            "Café: Produktion",
        ),
        (
            "iso-8859-2",
            ISO_8859_2,
            Transfer::QuotedPrintable,
            "Produkcja, dziękuję\n",
            "Produkcja, dziękuję",
        ),
        (
            "shift_jis",
            SHIFT_JIS,
            Transfer::Base64,
            "本番でお願いします\n",
            "本番でお願いします",
        ),
        ("euc-kr", EUC_KR, Transfer::Base64, "스테이징\n", "스테이징"),
    ];
    for (charset, encoding, transfer, body, expect) in rows {
        let (bytes, _, unmappable) = encoding.encode(body);
        assert!(!unmappable, "{charset}: {body}");
        let mut raw = crlf(&format!(
            "From: someone@example.com\nTo: bot@example.com\nSubject: Re: Deploy\nContent-Type: text/plain; charset=\"{charset}\"\nContent-Transfer-Encoding: {}\n\n",
            match transfer {
                Transfer::Base64 => "base64",
                Transfer::QuotedPrintable => "quoted-printable",
                Transfer::EightBit => "8bit",
            }
        ));
        match transfer {
            Transfer::Base64 => raw.extend(crlf(&base64_lines(&bytes))),
            Transfer::QuotedPrintable => raw.extend(crlf(&quoted_printable(&bytes))),
            Transfer::EightBit => raw.extend(bytes.iter().flat_map(|&b| {
                if b == b'\n' {
                    vec![b'\r', b'\n']
                } else {
                    vec![b]
                }
            })),
        }
        let reply = mail(&raw).unwrap_or_else(|error| panic!("{charset}: {error}"));
        assert_eq!(reply.text, expect, "{charset} as {transfer:?}");
    }
}

#[test]
fn a_gb2312_subject_and_name_decode() {
    let name = gbk("张三");
    let subject = gbk("回复: 部署到哪里？");
    let raw = format!(
        "From: =?gb2312?B?{}?= <zhang@example.cn>\nSubject: =?GB2312?B?{}?=\nContent-Type: text/plain; charset=gb2312\n\n2\n",
        STANDARD.encode(&name),
        STANDARD.encode(&subject)
    );
    let reply = read(&raw);
    assert_eq!(reply.from.name.as_deref(), Some("张三"));
    assert_eq!(reply.subject.as_deref(), Some("回复: 部署到哪里？"));
    assert_eq!(reply.text, "2");
}

/// Encoded in GBK (what `gb2312` labels in practice).
fn gbk(text: &str) -> Vec<u8> {
    let (bytes, _, unmappable) = encoding_rs::GBK.encode(text);
    assert!(!unmappable, "{text}");
    bytes.into_owned()
}

#[test]
fn an_html_only_outlook_reply_is_read_as_text() {
    let raw = "From: Alice <alice@example.org>
To: bot@example.com
Subject: RE: Where should I deploy?
Message-ID: <AM0PR01MB1234@eurprd01.prod.outlook.com>
In-Reply-To: <ask-1@askbridge.example.com>
Thread-Topic: Where should I deploy?
X-MS-Has-Attach:
Content-Type: text/html; charset=\"utf-8\"
Content-Transfer-Encoding: quoted-printable

<html><head>
<meta http-equiv=3D\"Content-Type\" content=3D\"text/html; charset=3Dutf-8\">
<style type=3D\"text/css\" style=3D\"display:none;\"> P {margin-top:0;margin-bo=
ttom:0;} </style>
</head>
<body dir=3D\"ltr\">
<div class=3D\"elementToProof\" style=3D\"font-family: Aptos; font-size: 12pt;=
\">
Production&nbsp;=E2=80=93 after 6pm</div>
<div id=3D\"appendonsend\"></div>
<hr style=3D\"display:inline-block;width:98%\" tabindex=3D\"-1\">
<div id=3D\"divRplyFwdMsg\" dir=3D\"ltr\"><font face=3D\"Calibri, sans-serif\"=
 style=3D\"font-size:11pt\" color=3D\"#000000\"><b>From:</b> askbridge &lt;bot=
@example.com&gt;<br>
<b>Sent:</b> Monday, December 7, 2026 10:00 AM<br>
<b>Subject:</b> Where should I deploy?</font>
<div>&nbsp;</div></div>
<div>1. Staging<br>2. Production</div>
</body>
</html>
";
    let reply = read(raw);
    assert_eq!(reply.text, "Production – after 6pm");
    assert_eq!(reply.in_reply_to, ["ask-1@askbridge.example.com"]);
    assert_eq!(reply.automatic, None);
}

#[test]
fn a_flowed_plain_part_has_its_soft_breaks_joined() {
    let raw = "From: alice@example.org
Subject: Re: Why?
Content-Type: text/plain; charset=UTF-8; format=flowed
Content-Transfer-Encoding: 7bit

Staging is frozen this week and production needs the change review 
first, so neither until Monday.
 >= 3 replicas once we do.

On 12/7/26 10:00, askbridge wrote:
> Why not production? The freeze ends on 
> Monday.
";
    assert_eq!(
        read(raw).text,
        "Staging is frozen this week and production needs the change review first, so neither until Monday.\n>= 3 replicas once we do."
    );
    let delsp = "From: alice@example.org
Content-Type: text/plain; charset=UTF-8; format=flowed; delsp=yes

Produc 
tion
";
    assert_eq!(read(delsp).text, "Production");
}

#[test]
fn automatic_mails_are_known_by_each_header() {
    let rows: &[(&str, Option<Automatic>)] = &[
        (
            "Auto-Submitted: auto-replied",
            Some(Automatic::AutoSubmitted),
        ),
        (
            "Auto-Submitted: auto-generated; owner-email=\"x@example.org\"",
            Some(Automatic::AutoSubmitted),
        ),
        ("Auto-Submitted: no", None),
        ("auto-submitted: No", None),
        ("Precedence: bulk", Some(Automatic::Precedence)),
        ("Precedence: junk", Some(Automatic::Precedence)),
        ("Precedence: list", Some(Automatic::Precedence)),
        ("Precedence: first-class", None),
        ("X-Autoreply: yes", Some(Automatic::Autoreply)),
        ("X-Autorespond: Out of office", Some(Automatic::Autorespond)),
        // A request not to be answered automatically, which some clients
        // send with mails people wrote: not a sign of a machine.
        ("X-Auto-Response-Suppress: All", None),
        (
            "X-Auto-Response-Suppress: DR, RN, NRN, OOF, AutoReply",
            None,
        ),
        (
            "List-Id: Ops team <ops.lists.example.org>",
            Some(Automatic::List),
        ),
        ("Return-Path: <>", Some(Automatic::NullReturnPath)),
        ("Return-Path: < >", Some(Automatic::NullReturnPath)),
        ("Return-Path: <alice@example.org>", None),
        ("X-Mailer: Apple Mail (2.3774)", None),
    ];
    for (header, expect) in rows {
        let raw = format!(
            "{header}\nFrom: alice@example.org\nTo: bot@example.com\nSubject: Automatic reply: Where should I deploy?\n\nI am out of the office until Monday.\n"
        );
        assert_eq!(read(&raw).automatic, *expect, "{header}");
    }
}

#[test]
fn every_authentication_results_header_is_kept_with_its_dmarc_result() {
    let raw = "Authentication-Results: mx.example.com 1;
 dkim=fail (signature did not verify; key=s1) header.d=example.org;
 dmarc=FAIL (p=REJECT) header.from=example.org
Authentication-Results: spoofed.example.net; dmarc=pass header.from=Example.ORG
Authentication-Results: relay.example.com; spf=pass smtp.mailfrom=example.org
Authentication-Results: mx2.example.com; none
Authentication-Results: mx3.example.com; dmarc/1=pass (\"quoted ; paren (\") header.from=example.org
Authentication-Results: ;
Authentication-Results: mx4.example.com; dmarc=pass policy.dmarc=none header.from = \"example.net\"
From: alice@example.org
Subject: Re: Deploy

2
";
    let got = read(raw).authentication;
    let want = [
        ("mx.example.com", Some("fail"), Some("example.org")),
        ("spoofed.example.net", Some("pass"), Some("example.org")),
        ("relay.example.com", None, None),
        ("mx2.example.com", None, None),
        // Quotes are text in a comment: its `(` opens one more, which
        // never closes, so `header.from` is in the comment too.
        ("mx3.example.com", Some("pass"), None),
        // One that names no server is kept in its place, as nobody's.
        ("", None, None),
        ("mx4.example.com", Some("pass"), Some("example.net")),
    ]
    .map(|(id, dmarc, from)| AuthResult {
        authserv_id: id.to_owned(),
        dmarc: dmarc.map(str::to_owned),
        header_from: from.map(str::to_owned),
    });
    assert_eq!(got, want);
}

#[test]
fn a_sender_is_one_from_header_naming_one_address() {
    let one = read("From: Alice <Alice@Example.org>\nSubject: x\n\n2\n");
    assert_eq!(one.from.address, "alice@example.org");
    let rows: &[(&str, BadMail)] = &[
        (
            "From: alice@example.org\nFrom: mallory@evil.example\n",
            BadMail::SenderHeaders(2),
        ),
        (
            "FROM: mallory@evil.example\nSubject: x\nfrom: alice@example.org\n",
            BadMail::SenderHeaders(2),
        ),
        (
            "From: alice@example.org, mallory@evil.example\n",
            BadMail::SenderAddresses(2),
        ),
        (
            "From: Alice <alice@example.org>, \"Mal\" <mallory@evil.example>, c@example.org\n",
            BadMail::SenderAddresses(3),
        ),
        (
            "From: team: alice@example.org, mallory@evil.example;\n",
            BadMail::SenderAddresses(2),
        ),
    ];
    for (headers, error) in rows {
        let raw = crlf(&format!("{headers}Subject: Re: Deploy\n\n2\n"));
        assert_eq!(mail(&raw).as_ref(), Err(error), "{headers}");
    }
    assert_eq!(
        BadMail::SenderHeaders(2).to_string(),
        "the mail has 2 From headers; a reply has one"
    );
    assert_eq!(
        BadMail::SenderAddresses(2).to_string(),
        "the mail's From names 2 addresses; a reply has one sender"
    );
}

/// A mail from `from` with `results` (whole `Authentication-Results`
/// lines, topmost first) above it.
fn authenticated(results: &[&str], from: &str) -> Result<(), Unauthenticated> {
    let headers: String = results
        .iter()
        .map(|result| format!("Authentication-Results: {result}\n"))
        .collect();
    read(&format!(
        "{headers}From: {from}\nSubject: Re: Deploy\n\n2\n"
    ))
    .authenticated("MX.example.com")
}

#[test]
fn only_the_topmost_result_of_the_trusted_server_for_the_senders_domain_authenticates() {
    let pass = "mx.example.com; spf=pass; dmarc=pass (p=reject) header.from=victim.example";
    let victim = "Alice <alice@victim.example>";
    assert_eq!(authenticated(&[pass], victim), Ok(()));
    assert_eq!(
        authenticated(
            &["MX.Example.COM 1; dmarc=pass header.from=Victim.Example"],
            "ALICE@VICTIM.EXAMPLE"
        ),
        Ok(()),
        "case is ignored"
    );
    assert_eq!(
        authenticated(
            &["mx.example.com; dmarc=pass header.from=xn--bcher-kva.example"],
            "alice@bücher.example"
        ),
        Ok(()),
        "a Unicode domain is its punycode"
    );
    let other = |passed: Option<&str>, domain: &str| Unauthenticated::OtherDomain {
        passed: passed.map(str::to_owned),
        domain: domain.to_owned(),
    };
    let untrusted = |found: &str| Unauthenticated::Untrusted {
        found: found.to_owned(),
        trusted: "mx.example.com".to_owned(),
    };
    let rows: Vec<(Vec<&str>, &str, Unauthenticated)> = vec![
        // No result at all: a forged From is all there is.
        (vec![], victim, Unauthenticated::NoResult),
        // The attacker's own domain passes; the From is the victim's.
        (
            vec!["mx.example.com; dmarc=pass header.from=evil.example"],
            victim,
            other(Some("evil.example"), "victim.example"),
        ),
        // A subdomain is another domain.
        (
            vec!["mx.example.com; dmarc=pass header.from=mail.victim.example"],
            victim,
            other(Some("mail.victim.example"), "victim.example"),
        ),
        // A pass that names no domain says nothing of the sender's.
        (
            vec!["mx.example.com; dmarc=pass"],
            victim,
            other(None, "victim.example"),
        ),
        (
            vec!["mx.example.com; dmarc=fail header.from=victim.example"],
            victim,
            Unauthenticated::NotPassed(Some("fail".to_owned())),
        ),
        (
            vec!["mx.example.com; spf=pass smtp.mailfrom=victim.example"],
            victim,
            Unauthenticated::NotPassed(None),
        ),
        // A trusted-looking pass below the topmost header came with the
        // mail: whoever sent it wrote it.
        (
            vec![
                "mx.other.example; dmarc=fail header.from=victim.example",
                pass,
            ],
            victim,
            untrusted("mx.other.example"),
        ),
        (vec!["; nothing", pass], victim, untrusted("")),
        (
            vec![
                "mx.example.com; dmarc=fail header.from=victim.example",
                pass,
            ],
            victim,
            Unauthenticated::NotPassed(Some("fail".to_owned())),
        ),
    ];
    for (results, from, want) in rows {
        assert_eq!(
            authenticated(&results, from),
            Err(want),
            "{results:?} {from}"
        );
    }
    assert_eq!(
        untrusted("mx.other.example").to_string(),
        "the topmost Authentication-Results header is \"mx.other.example\"'s, not the trusted \"mx.example.com\"'s"
    );
    assert_eq!(
        other(Some("evil.example"), "victim.example").to_string(),
        "dmarc=pass is for header.from=evil.example, not the sender's domain \"victim.example\""
    );
}

#[test]
fn broken_mails_are_an_error_or_a_best_effort_never_a_panic() {
    // An unterminated boundary: the part that is there is read.
    let unterminated = read(
        "From: alice@example.org
Content-Type: multipart/alternative; boundary=\"b1\"

--b1
Content-Type: text/plain; charset=utf-8

Staging
",
    );
    assert_eq!(unterminated.text, "Staging");
    // A boundary that never comes, an unknown charset, bad base64.
    let nothing = read(
        "From: alice@example.org
Content-Type: multipart/mixed; boundary=\"never\"

Staging
",
    );
    assert!(nothing.text.contains("Staging"), "{nothing:?}");
    let odd = read(
        "From: alice@example.org
Content-Type: text/plain; charset=x-no-such-charset
Content-Transfer-Encoding: base64

!!!not base64!!!
",
    );
    assert_eq!(odd.from.address, "alice@example.org");

    assert_eq!(mail(b""), Err(BadMail::Unreadable));
    assert_eq!(mail(b"\r\n\r\njust a body\r\n"), Err(BadMail::Unreadable));
    assert_eq!(
        mail(&crlf("Subject: no sender\n\n2\n")),
        Err(BadMail::NoSender)
    );
    assert_eq!(
        mail(&crlf("From: undisclosed-recipients:;\nSubject: x\n\n2\n")),
        Err(BadMail::NoSender)
    );
    assert!(mail(&[0xff, 0xfe, 0x00, 0x9c, b'\n', b':', 0x80]).is_err());
}

#[test]
fn every_truncation_of_a_mail_reads_without_panicking() {
    let raw = crlf(&format!(
        "{HEADERS}Content-Type: multipart/mixed; boundary=\"outer\"

--outer
Content-Type: multipart/alternative; boundary=\"inner\"

--inner
Content-Type: text/plain; charset=gb2312
Content-Transfer-Encoding: base64

{}
--inner
Content-Type: text/html; charset=utf-8
Content-Transfer-Encoding: quoted-printable

<div>2</div><blockquote type=3D\"cite\">1. Staging</blockquote>
--inner--

--outer
Content-Type: application/pdf; name=\"a.pdf\"
Content-Disposition: attachment; filename=\"a.pdf\"
Content-Transfer-Encoding: base64

JVBERi0xLjQK
--outer--
",
        base64_lines(&gbk("选 2\n> 1. 预发布\n"))
    ));
    assert_eq!(mail(&raw).map(|reply| reply.text), Ok("选 2".to_owned()));
    for end in 0..raw.len() {
        let _ = mail(&raw[..end]);
    }
}

#[test]
fn a_mail_over_the_limit_is_refused() {
    let mut raw = crlf("From: alice@example.org\nSubject: big\n\n");
    raw.resize(MAX_MAIL_BYTES + 1, b'a');
    assert_eq!(
        mail(&raw),
        Err(BadMail::TooBig {
            size: MAX_MAIL_BYTES + 1,
            limit: MAX_MAIL_BYTES
        })
    );
    assert_eq!(
        BadMail::TooBig { size: 2, limit: 1 }.to_string(),
        "the mail is 2 bytes, more than 1"
    );
    raw.truncate(MAX_MAIL_BYTES);
    assert!(mail(&raw).is_ok());
}

#[test]
fn plus_tokens() {
    let rows: &[(&str, &str, Option<&str>)] = &[
        ("bot+ab12cd@example.com", "bot", Some("ab12cd")),
        ("<bot+ab12cd@example.com>", "bot", Some("ab12cd")),
        (" Bot+AB12cd@Example.com ", "bot", Some("AB12cd")),
        ("bot+a+b@example.com", "bot", Some("a+b")),
        ("bot@example.com", "bot", None),
        ("bot+@example.com", "bot", None),
        ("robot+ab12@example.com", "bot", None),
        ("bots+ab12@example.com", "bot", None),
        ("bot+ab12", "bot", None),
        ("ask-bot+x1@example.com", "ask-bot", Some("x1")),
        ("测试+x1@example.com", "bot", None),
        ("", "bot", None),
    ];
    for (address, local, expect) in rows {
        assert_eq!(plus_token(address, local), *expect, "{address} / {local}");
    }
}

proptest! {
    #[test]
    fn arbitrary_bytes_never_panic(raw in proptest::collection::vec(any::<u8>(), 0..600)) {
        let _ = mail(&raw);
    }

    #[test]
    fn arbitrary_bodies_never_panic(
        body in "(?s).{0,300}",
        kind in prop_oneof![
            Just("text/plain; format=flowed; delsp=yes"),
            Just("text/html"),
            Just("multipart/alternative; boundary=\"b\""),
        ],
        encoding in prop_oneof![Just("7bit"), Just("base64"), Just("quoted-printable")],
    ) {
        let raw = format!(
            "From: a@example.org\r\nContent-Type: {kind}\r\nContent-Transfer-Encoding: {encoding}\r\n\r\n{body}"
        );
        let reply = mail(raw.as_bytes());
        prop_assert!(reply.is_ok());
    }
}

//! What part of a mail reply the person wrote, table-driven: each row is a
//! name, a body as a mail client writes it, and the person's part.

use askbridge_core::written::{html_text, written_part};
use proptest::prelude::*;

/// Compares `written_part(input)` with `expect`, and checks that it is a
/// fixed point (the person's part has nothing more to take off).
#[track_caller]
fn check(name: &str, input: &str, expect: &str) {
    let actual = written_part(input);
    assert!(
        actual == expect,
        "\n{name}\ninput:\n{input}\n\nexpected:\n{expect}\n\nactual:\n{actual}\n"
    );
    assert_eq!(written_part(&actual), actual, "{name}: not a fixed point");
}

/// Compares `written_part(html_text(input))` with `expect`.
#[track_caller]
fn check_html(name: &str, input: &str, expect: &str) {
    let actual = written_part(&html_text(input));
    assert!(
        actual == expect,
        "\n{name}\ninput:\n{input}\n\nexpected:\n{expect}\n\nactual:\n{actual}\n\nhtml_text:\n{}\n",
        html_text(input)
    );
}

/// The question askbridge sends, as a reply quotes it.
const QUESTION: &str =
    "Where should I deploy?\n\n1. Staging\n2. Production\n\nReply with a number or your own words.";

/// `text` with every line quoted (`> `).
fn quoted(text: &str) -> String {
    text.lines()
        .map(|line| {
            if line.is_empty() {
                ">".to_owned()
            } else {
                format!("> {line}")
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn plain_text_replies() {
    let q = quoted(QUESTION);
    let long = format!("{}and that is what I wrote:", "word ".repeat(70));
    let rows: Vec<(&str, String, &str)> = vec![
        (
            "gmail en, top-posted",
            format!(
                "2\n\nOn Mon, Dec 7, 2026 at 10:00 AM askbridge <bot@example.com> wrote:\n\n{q}\n"
            ),
            "2",
        ),
        (
            "gmail en, attribution wrapped after the <",
            format!(
                "Staging\r\n\r\nOn Mon, Dec 7, 2026 at 10:00 AM askbridge <\r\nbot@example.com> wrote:\r\n\r\n{}\r\n",
                q.replace('\n', "\r\n")
            ),
            "Staging",
        ),
        (
            "gmail en, attribution wrapped over three lines",
            format!(
                "skip\n\nOn Mon, Dec 7, 2026 at 10:00 AM Deployment Bot of the Platform Team\n<\nbot@example.com> wrote:\n\n{q}"
            ),
            "skip",
        ),
        (
            "gmail zh-CN",
            format!(
                "选 2\n\naskbridge <bot@example.com> 于2026年12月7日周一 10:00写道：\n\n{q}\n"
            ),
            "选 2",
        ),
        (
            "gmail zh-CN, wrapped after the sender",
            format!(
                "生产环境\n\naskbridge <bot@example.com>\n于2026年12月7日周一 10:00写道：\n\n{q}\n"
            ),
            "生产环境",
        ),
        (
            "apple mail zh-CN",
            format!("1\n\n在 2026年12月7日 10:00，askbridge <bot@example.com> 写道：\n\n{q}"),
            "1",
        ),
        (
            "apple mail zh-TW",
            format!(
                "第二個\n\naskbridge <bot@example.com> 於 2026年12月7日 上午10:00 寫道：\n\n{q}"
            ),
            "第二個",
        ),
        (
            "gmail th",
            format!(
                "Staging ครับ\n\nเมื่อ จ. 7 ธ.ค. 2026 เวลา 10:00 askbridge <bot@example.com> เขียนว่า:\n\n{q}\n"
            ),
            "Staging ครับ",
        ),
        (
            "gmail de: the sender after the verb",
            format!(
                "Produktion\n\nAm Mo., 7. Dez. 2026 um 10:00 Uhr schrieb askbridge <\nbot@example.com>:\n\n{q}\n"
            ),
            "Produktion",
        ),
        (
            "gmail fr",
            format!(
                "La 2\n\nLe lun. 7 déc. 2026 à 10:00, askbridge <bot@example.com> a écrit :\n\n{q}\n"
            ),
            "La 2",
        ),
        (
            "'Sent from my' in a sentence stays",
            "Sent from my laptop, the answer is 2".to_owned(),
            "Sent from my laptop, the answer is 2",
        ),
        (
            "apple mail en, with an iPhone footer",
            format!(
                "Production\n\nSent from my iPhone\n\n> On Dec 7, 2026, at 10:00, askbridge <bot@example.com> wrote:\n>\n{q}"
            ),
            "Production",
        ),
        (
            "iPhone mail, the footer right after the answer",
            format!(
                "2\nSent from my iPhone\n\nOn Dec 7, 2026, at 10:00, askbridge <bot@example.com> wrote:\n\n{q}"
            ),
            "2",
        ),
        (
            "iPad, zh footer",
            format!("2\n\n发自我的iPad\n\n{q}"),
            "2",
        ),
        (
            "iPhone, zh footer, the other wording",
            format!("生产\n\n从我的 iPhone 发送\n\n{q}"),
            "生产",
        ),
        (
            "iPhone, th footer",
            format!("1\n\nส่งจาก iPhone ของฉัน\n\n{q}"),
            "1",
        ),
        (
            "samsung footer",
            format!("2\n\nSent from my Galaxy\n\n{q}"),
            "2",
        ),
        (
            "outlook for iOS footer with its link",
            format!(
                "Staging\n\nGet Outlook for iOS<https://aka.ms/o0ukef>\n________________________________\nFrom: askbridge <bot@example.com>\nSent: Monday, December 7, 2026 10:00:00 AM\nTo: Alice <alice@example.com>\nSubject: Where should I deploy?\n\n{QUESTION}"
            ),
            "Staging",
        ),
        (
            "outlook for Android footer",
            format!("2\n\nSent from Outlook for Android\n\n{q}"),
            "2",
        ),
        (
            "mail for windows footer",
            format!("Production\n\nSent from Mail for Windows\n\n{q}"),
            "Production",
        ),
        (
            "outlook desktop en: an unquoted message under its header block",
            format!(
                "Q1: 2\r\nQ2: Team, On-call\r\n\r\n-----Original Message-----\r\nFrom: askbridge <bot@example.com> \r\nSent: Monday, December 7, 2026 10:00 AM\r\nTo: Alice <alice@example.com>\r\nSubject: Two questions\r\n\r\n{}",
                QUESTION.replace('\n', "\r\n")
            ),
            "Q1: 2\nQ2: Team, On-call",
        ),
        (
            "outlook desktop en: header block with no separator line",
            format!(
                "Staging\n\nFrom: askbridge <bot@example.com>\nSent: Monday, December 7, 2026 10:00 AM\nTo: Alice <alice@example.com>\nSubject: Where should I deploy?\n\n{QUESTION}"
            ),
            "Staging",
        ),
        (
            "outlook (from HTML): bold labels after an underscore line",
            format!(
                "2\n\n________________________________\n*From:* askbridge <bot@example.com>\n*Sent:* Monday, December 7, 2026 10:00 AM\n*To:* Alice\n*Subject:* Where should I deploy?\n\n{QUESTION}"
            ),
            "2",
        ),
        (
            "outlook desktop zh-CN: localised header block, full-width colons",
            format!(
                "选生产环境。\n\n发件人: askbridge <bot@example.com>\n发送时间: 2026年12月7日 10:00\n收件人: 张三 <zhang@example.com>\n主题: 部署到哪里？\n\n{QUESTION}"
            ),
            "选生产环境。",
        ),
        (
            "outlook desktop zh-CN, full-width colons",
            format!(
                "2\n\n发件人：askbridge <bot@example.com>\n发送时间：2026年12月7日 10:00\n收件人：张三\n主题：部署到哪里？\n\n{QUESTION}"
            ),
            "2",
        ),
        (
            "outlook zh: original-message separator",
            format!("1\n\n-----原始邮件-----\n发件人: askbridge\n\n{QUESTION}"),
            "1",
        ),
        (
            "gmail forward with a note",
            format!(
                "Please answer this one, Bob.\n\n---------- Forwarded message ---------\nFrom: askbridge <bot@example.com>\nDate: Mon, Dec 7, 2026 at 10:00 AM\nSubject: Where should I deploy?\nTo: <alice@example.com>\n\n{QUESTION}"
            ),
            "Please answer this one, Bob.",
        ),
        (
            "thunderbird, bottom-posted",
            format!(
                "On 12/7/26 10:00, askbridge wrote:\n{q}\n\nStaging, please.\n\n-- \nAlice Example\nPlatform team\n"
            ),
            "Staging, please.",
        ),
        (
            "interleaved: an answer under each quoted question",
            "On Mon, Dec 7, 2026 at 10:00 AM askbridge <bot@example.com> wrote:\n> Q1: Where should I deploy?\n> 1. Staging\n> 2. Production\n\n2\n\n> Q2: Who should be told?\n> 1. Team\n> 2. On-call\n\nTeam, On-call\n\n> Reply with a number or your own words.\n".to_owned(),
            "2\n\nTeam, On-call",
        ),
        (
            "nested quotes with spaces before the marks",
            "Yes\n\n  > > older\n  > newer\n   >> oldest\n".to_owned(),
            "Yes",
        ),
        (
            "a signature after a bare --",
            "skip\n--\nAlice\n+1 555 0100\n".to_owned(),
            "skip",
        ),
        (
            "own words over several lines, nothing quoted",
            "Neither, really.\n\nStaging is frozen this week and production needs\nthe change review first. Let's wait until Monday.\n".to_owned(),
            "Neither, really.\n\nStaging is frozen this week and production needs\nthe change review first. Let's wait until Monday.",
        ),
        (
            "the quoted numbered options do not survive",
            format!("> Where should I deploy?\n>\n> 1. Staging\n> 2. Production\n\n{}", "my own words"),
            "my own words",
        ),
        (
            "the whole mail is a quote",
            format!("On Mon, Dec 7, 2026 at 10:00 AM askbridge <bot@example.com> wrote:\n{q}\n"),
            "",
        ),
        ("an empty body", String::new(), ""),
        (
            "'From:' mid-sentence and '>=' arithmetic stay",
            "Deploy from: staging first.\n>= 3 replicas, please\nFrom: the logs it looks fine\n".to_owned(),
            "Deploy from: staging first.\n>= 3 replicas, please\nFrom: the logs it looks fine",
        ),
        (
            "a date range is not a header block",
            "From: Monday\nTo: Friday\n".to_owned(),
            "From: Monday\nTo: Friday",
        ),
        (
            "'wrote:' in the answer with nothing quoted after it stays",
            "Here is what I wrote:\nStaging first, then production.".to_owned(),
            "Here is what I wrote:\nStaging first, then production.",
        ),
        (
            "an attribution introducing an unquoted message (Yahoo)",
            format!(
                "2\n\nOn Monday, December 7, 2026, 10:00:00 AM GMT+1, askbridge <bot@example.com> wrote:\n\n{QUESTION}"
            ),
            "2",
        ),
        (
            "blank-line runs become one, trailing spaces go",
            "\u{feff}\n\nfirst  \n\n\n\nsecond\t\n\n".to_owned(),
            "first\n\nsecond",
        ),
        (
            "a line too long for an attribution is the person's",
            format!("{long}\n{q}"),
            &long,
        ),
    ];
    for (name, input, expect) in &rows {
        check(name, input, expect);
    }
    assert!(rows.len() >= 25, "{} rows", rows.len());
}

#[test]
fn html_replies() {
    let rows: &[(&str, &str, &str)] = &[
        (
            "gmail: gmail_quote with its attribution",
            r##"<div dir="ltr">Staging</div><br><div class="gmail_quote gmail_quote_container"><div dir="ltr" class="gmail_attr">On Mon, Dec 7, 2026 at 10:00 AM askbridge &lt;<a href="mailto:bot@example.com">bot@example.com</a>&gt; wrote:<br></div><blockquote class="gmail_quote" style="margin:0px 0px 0px 0.8ex;border-left:1px solid rgb(204,204,204);padding-left:1ex"><div dir="ltr"><div>Where should I deploy?</div><div><br></div><div>1. Staging</div><div>2. Production</div></div></blockquote></div>"##,
            "Staging",
        ),
        (
            "gmail: several lines and a signature",
            r##"<div dir="ltr"><div>Q1: 2</div><div>Q2: Team, On-call</div><br clear="all"><div><br></div><span class="gmail_signature_prefix">-- </span><br><div dir="ltr" class="gmail_signature"><div>Alice Example</div></div></div><br><div class="gmail_quote"><div class="gmail_attr">On Mon askbridge wrote:</div><blockquote class="gmail_quote">1. Staging</blockquote></div>"##,
            "Q1: 2\nQ2: Team, On-call",
        ),
        (
            "outlook web: appendonsend and divRplyFwdMsg, everything after dropped",
            r##"<html><head>
<meta http-equiv="Content-Type" content="text/html; charset=utf-8">
<style type="text/css" style="display:none;"> P {margin-top:0;margin-bottom:0;} </style>
</head>
<body dir="ltr">
<div class="elementToProof" style="font-family: Aptos, Aptos_EmbeddedFont, Calibri, Helvetica, sans-serif; font-size: 12pt; color: rgb(0, 0, 0);">
Production&nbsp;&ndash; after 6pm please</div>
<div id="appendonsend"></div>
<hr style="display:inline-block;width:98%" tabindex="-1">
<div id="divRplyFwdMsg" dir="ltr"><font face="Calibri, sans-serif" style="font-size:11pt" color="#000000"><b>From:</b> askbridge &lt;bot@example.com&gt;<br>
<b>Sent:</b> Monday, December 7, 2026 10:00 AM<br>
<b>To:</b> Alice &lt;alice@example.com&gt;<br>
<b>Subject:</b> Where should I deploy?</font>
<div>&nbsp;</div>
</div>
<div>Where should I deploy?<br>1. Staging<br>2. Production</div>
</body>
</html>"##,
            "Production – after 6pm please",
        ),
        (
            "outlook desktop (Word HTML): header block found in the text",
            r##"<html xmlns:o="urn:schemas-microsoft-com:office:office"><head><style><!-- p.MsoNormal {margin:0cm;} --></style><!--[if gte mso 9]><xml><o:shapedefaults v:ext="edit" spidmax="1026" /></xml><![endif]--></head><body lang="EN-US"><div class="WordSection1"><p class="MsoNormal">2<o:p></o:p></p><p class="MsoNormal"><o:p>&nbsp;</o:p></p><div style="border:none;border-top:solid #E1E1E1 1.0pt;padding:3.0pt 0cm 0cm 0cm"><p class="MsoNormal"><b>From:</b> askbridge &lt;bot@example.com&gt; <br><b>Sent:</b> Monday, December 7, 2026 10:00 AM<br><b>To:</b> Alice &lt;alice@example.com&gt;<br><b>Subject:</b> Where should I deploy?<o:p></o:p></p></div><p class="MsoNormal">1. Staging<o:p></o:p></p></div></body></html>"##,
            "2",
        ),
        (
            "outlook desktop zh-CN (Word HTML)",
            r##"<div class="WordSection1"><p class="MsoNormal"><span lang="ZH-CN">预发布环境</span></p><div><div style="border:none;border-top:solid #E1E1E1 1.0pt"><p class="MsoNormal"><b>发件人<span lang="EN-US">:</span></b> askbridge &lt;bot@example.com&gt;<br><b>发送时间<span lang="EN-US">:</span></b> 2026年12月7日 10:00<br><b>收件人<span lang="EN-US">:</span></b> 张三<br><b>主题<span lang="EN-US">:</span></b> 部署到哪里？</p></div></div><p>1. Staging</p></div>"##,
            "预发布环境",
        ),
        (
            "apple mail: blockquote type=cite, the attribution outside it",
            r##"<html><head><meta http-equiv="content-type" content="text/html; charset=utf-8"></head><body dir="auto">Staging<br id="lineBreakAtBeginningOfSignature"><div dir="ltr">Sent from my iPhone</div><div dir="ltr"><br><blockquote type="cite">On Dec 7, 2026, at 10:00, askbridge &lt;bot@example.com&gt; wrote:<br><br></blockquote></div><blockquote type="cite"><div dir="ltr"><div>Where should I deploy?</div><div>1. Staging</div></div></blockquote></body></html>"##,
            "Staging",
        ),
        (
            "apple mail, bottom-posted: the attribution goes with the quote",
            r##"<html><body><div>On Dec 7, 2026, at 10:00, askbridge &lt;bot@example.com&gt; wrote:<br></div><br><blockquote type="cite"><div>Where should I deploy?</div><div>1. Staging</div><blockquote type="cite"><div>older</div></blockquote><div>2. Production</div></blockquote><div>Production, after the freeze.</div></body></html>"##,
            "Production, after the freeze.",
        ),
        (
            "thunderbird: moz-cite-prefix and blockquote cite",
            r##"<html><head><meta http-equiv="Content-Type" content="text/html; charset=UTF-8"></head><body><p>skip</p><div class="moz-cite-prefix">On 12/7/26 10:00, askbridge wrote:<br></div><blockquote type="cite" cite="mid:ask-1@askbridge.example.com"><pre class="moz-quote-pre" wrap="">Where should I deploy?
1. Staging
2. Production</pre></blockquote><pre class="moz-signature" cols="72">-- 
Alice</pre></body></html>"##,
            "skip",
        ),
        (
            "yahoo: yahoo_quoted",
            r##"<html><body><div class="ydp1" style="font-family:Helvetica"><div>Q1: 2</div><div dir="ltr">Q2: Team, On-call</div></div><div id="yahoo_quoted_0123456789" class="yahoo_quoted"><div style="font-family:'Helvetica Neue'">On Monday, December 7, 2026, 10:00:00 AM GMT+1, askbridge &lt;bot@example.com&gt; wrote:<div><div>1. Staging</div></div></div></div></body></html>"##,
            "Q1: 2\nQ2: Team, On-call",
        ),
        (
            "entities, numeric and named; script and comments dropped",
            "<p>a &amp; b &lt;c&gt; &quot;d&quot; &#39;e&#39; &#x263A; &#8364;5 &bogus; &amp</p><script>if (a < b) { x = '</p>'; }</script><!-- <p>hidden</p> --><p>done</p>",
            "a & b <c> \"d\" 'e' ☺ €5 &bogus; &amp\ndone",
        ),
        (
            "nested divs inside a gmail_quote are counted",
            r##"<div>Yes</div><div class="gmail_quote"><div><div>deep</div></div><div>still quoted</div></div><div>and this too</div>"##,
            "Yes\nand this too",
        ),
        (
            "lists, tables and a literal <",
            "<ul><li>one</li><li>two</li></ul><table><tr><td>a</td><td>b</td></tr><tr><td>c</td></tr></table>3 < 4",
            "one\ntwo\na b\nc\n3 < 4",
        ),
    ];
    for (name, input, expect) in rows {
        check_html(name, input, expect);
    }
}

#[test]
fn html_text_keeps_lines_and_drops_quotes() {
    assert_eq!(
        html_text(
            "<div>Q1: 2</div><div>Q2: Team,\n   On-call</div><div><br></div><div>Thanks</div>"
        ),
        "Q1: 2\nQ2: Team, On-call\n\nThanks"
    );
    assert_eq!(
        html_text("<pre>  indented\n  kept</pre>after"),
        "indented\n  kept\nafter"
    );
    assert_eq!(
        html_text(r##"Answer<div id="divRplyFwdMsg">From: bot</div><div>1. Staging</div>"##),
        "Answer"
    );
    assert_eq!(html_text("<blockquote>all quoted</blockquote>"), "");
    // Unterminated markup and stray brackets: no panic, best effort.
    assert_eq!(html_text("ok<div class=\"x"), "ok");
    assert_eq!(html_text("<<>>"), "<<>>");
    assert_eq!(html_text("<style>never closed"), "");
    assert_eq!(html_text("<div>a</div></div></span>b"), "a\nb");
}

#[test]
fn a_mail_sized_input_of_many_quotes_takes_one_pass() {
    // About 1 MiB each: an input that costs quadratic time would not end
    // in a test's time.
    let same = |actual: String, expect: String| {
        assert!(
            actual == expect,
            "{} bytes, not the {} expected",
            actual.len(),
            expect.len()
        );
    };
    let html = "<div>On 7 Dec askbridge wrote:</div><blockquote>q</blockquote><div>a</div><style>s</style>"
        .repeat(12_000);
    same(html_text(&html), vec!["a"; 12_000].join("\n"));
    let plain = "On 7 Dec 2026, askbridge <bot@example.com> wrote:\n\n\n> q\nkept\n".repeat(16_000);
    same(written_part(&plain), vec!["kept"; 16_000].join("\n\n"));
    let long_line = format!(
        "<div>{}</div><blockquote>q</blockquote>",
        "x".repeat(1 << 20)
    );
    same(html_text(&long_line), "x".repeat(1 << 20));
}

proptest! {
    #[test]
    fn written_part_and_html_text_never_panic(text in "(?s).{0,400}") {
        let written = written_part(&text);
        prop_assert_eq!(written.trim(), written.as_str());
        let _ = html_text(&text);
    }

    #[test]
    fn markup_soup_never_panics(
        pieces in proptest::collection::vec(
            prop_oneof![
                Just("<div>"), Just("</div>"), Just("<blockquote type=\"cite\">"),
                Just("</blockquote>"), Just("<div class=\"gmail_quote\">"), Just("<br>"),
                Just("&amp;"), Just("&#x"), Just("&#99999999;"), Just("<!--"), Just("-->"),
                Just("<style>"), Just("</style>"), Just("<a href='x>"), Just("\""),
                Just("On Mon, 7 Dec 2026 askbridge wrote:"), Just("> quoted"), Just("text"),
                Just("\n"), Just("<"), Just(">"), Just("&"), Just("ไทย"), Just("写道："),
            ],
            0..40,
        )
    ) {
        let html: String = pieces.concat();
        let text = html_text(&html);
        let _ = written_part(&text);
    }
}

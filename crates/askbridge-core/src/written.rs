//! What part of a mail reply the person wrote. Pure text in, text out.
//!
//! A reply carries much more than its answer: the question it quotes, the
//! line that introduces the quote, the header block Outlook writes instead
//! of quoting, a signature, a phone's footer. [`written_part`] keeps only
//! the person's own lines of a plain-text body; [`html_text`] turns an
//! HTML-only body into such plain text first, dropping the quotes mail
//! clients mark up in HTML.
//!
//! The rules, in the order a body is read from its top:
//!
//! - A quoted line (`>`, `> >`, `>` after spaces; not `>=`) is dropped
//!   wherever it is, so top-posted, bottom-posted and interleaved answers
//!   all keep every line the person wrote.
//! - An attribution ("On … wrote:", "在 … 写道：", "… 於 … 寫道：",
//!   "เมื่อ … เขียนว่า:", wrapped over up to three lines) is dropped when a
//!   quoted line follows it; followed by unquoted text, it introduces a
//!   quote the client did not mark, and the rest is dropped.
//! - An original-message or forwarded-message separator, Outlook's header
//!   block (a `From:` line followed within a few lines by two of
//!   `Sent:`, `Date:`, `To:`, `Subject:` — or one, when the `From:` line
//!   names an address — in English, Chinese, Thai and a few European
//!   languages), a signature separator (`--` alone on its line)
//!   and a phone's "Sent from my iPhone" end the person's part.

/// The longest attribution, in characters; a longer line is the person's.
const MAX_ATTRIBUTION: usize = 300;

/// How attributions end (after trimming).
const ATTRIBUTION_ENDINGS: &[&str] = &[
    "wrote:",
    "写道：",
    "写道:",
    "寫道：",
    "寫道:",
    "เขียนว่า:",
    "schrieb:",
    "a écrit :",
    "a écrit:",
    "escribió:",
    "escreveu:",
    "ha scritto:",
    "geschreven:",
];

/// Attributions that name the sender after the verb and end with their
/// address and a colon: how they begin, and the verb.
const VERB_FIRST: &[(&str, &str)] = &[("Am ", " schrieb "), ("Op ", " schreef ")];

/// How attributions a client wraps over lines begin.
const ATTRIBUTION_STARTS: &[&str] = &[
    "On ",
    "在",
    "於",
    "于",
    "เมื่อ",
    "Am ",
    "Le ",
    "El ",
    "Em ",
    "Il ",
    "Op ",
];

/// The label that starts a header block of a quoted message.
const FROM_LABELS: &[&str] = &[
    "from",
    "发件人",
    "寄件者",
    "寄件人",
    "จาก",
    "von",
    "de",
    "van",
    "da",
];

/// The labels that follow it within a few lines.
const HEADER_LABELS: &[&str] = &[
    "sent",
    "date",
    "to",
    "cc",
    "subject",
    "发送时间",
    "时间",
    "日期",
    "收件人",
    "抄送",
    "主题",
    "寄件日期",
    "傳送時間",
    "收件者",
    "副本",
    "主旨",
    "ส่ง",
    "วันที่",
    "ถึง",
    "สำเนาถึง",
    "เรื่อง",
    "gesendet",
    "datum",
    "an",
    "betreff",
    "envoyé",
    "à",
    "objet",
    "enviado",
    "fecha",
    "para",
    "asunto",
];

/// What a separator line says between its dashes (lowercased).
const SEPARATORS: &[&str] = &[
    "original message",
    "forwarded message",
    "原始邮件",
    "邮件原件",
    "原始郵件",
    "郵件原件",
    "转发的邮件",
    "轉寄的郵件",
    "ข้อความต้นฉบับ",
    "ursprüngliche nachricht",
    "weitergeleitete nachricht",
    "message d'origine",
    "message transféré",
    "mensaje original",
    "mensaje reenviado",
    "mensagem original",
];

/// How many lines after a `From:` line the other header labels may be.
const HEADER_REACH: usize = 5;

/// The part of a reply's plain-text body the person wrote, trimmed: no
/// quoted lines, no attribution, no quoted message after a header block
/// or separator, no signature, no phone footer. Empty when nothing is
/// left (the whole body was a quote).
pub fn written_part(text: &str) -> String {
    let text = text
        .replace("\r\n", "\n")
        .replace('\r', "\n")
        .replace('\u{feff}', "");
    let lines: Vec<&str> = text.split('\n').collect();
    let mut kept = Vec::new();
    let mut at = 0;
    while at < lines.len() {
        let line = lines[at];
        if is_quoted(line) {
            at += 1;
            continue;
        }
        if let Some(length) = attribution_at(&lines, at) {
            let next = lines[at + length..]
                .iter()
                .find(|line| !line.trim().is_empty());
            if next.is_some_and(|line| is_quoted(line)) {
                at += length;
                continue;
            }
            let joined = lines[at..at + length].join(" ");
            if joined.contains(|c: char| c.is_ascii_digit() || c == '@') {
                break;
            }
        }
        if is_signature(line) || is_footer(line) || starts_quoted_message(&lines, at) {
            break;
        }
        kept.push(line);
        at += 1;
    }
    tidy(&kept)
}

/// Whether a line is quoted: `>` first (after spaces), but not `>=`.
fn is_quoted(line: &str) -> bool {
    let line = line.trim_start();
    line.starts_with('>') && !line.starts_with(">=")
}

/// A signature separator: `-- ` (or `--`) alone on its line.
fn is_signature(line: &str) -> bool {
    line.trim_end() == "--"
}

/// A phone's or mail app's footer ("Sent from my iPhone").
fn is_footer(line: &str) -> bool {
    let mut line = line.trim();
    // Outlook's apps add their link: "Get Outlook for iOS<https://aka.ms/…>".
    if line.ends_with('>')
        && let Some(open) = line.find('<')
    {
        line = line[..open].trim_end();
    }
    let line = line.trim_end_matches('.').to_lowercase();
    let length = line.chars().count();
    let english = [
        "sent from outlook",
        "get outlook for",
        "sent from mail for windows",
        "sent from yahoo mail",
    ];
    if english.iter().any(|start| line.starts_with(start)) && length <= 60 {
        return true;
    }
    if line.starts_with("sent from my ") {
        return line.split_whitespace().count() <= 6
            && !line.contains([',', ';', ':', '?', '!'])
            && length <= 60;
    }
    let chinese = line.starts_with("发自我的")
        || line.starts_with("来自我的")
        || (line.starts_with("从我的") && line.ends_with("发送"))
        || (line.starts_with("從我的") && line.ends_with("傳送"));
    let thai = line.starts_with("ส่งจาก") && line.ends_with("ของฉัน");
    (chinese || thai) && length <= 30
}

/// The attribution starting at line `at`, as the number of lines it
/// spans (1 to 3): it ends with "wrote:" or its translation; over more
/// than one line, its first line begins like one ("On ") or leaves an
/// address's `<` open.
fn attribution_at(lines: &[&str], at: usize) -> Option<usize> {
    let first = lines.get(at)?.trim();
    if first.is_empty() {
        return None;
    }
    let ends = |text: &str| {
        ATTRIBUTION_ENDINGS.iter().any(|end| text.ends_with(end))
            || (text.ends_with(':')
                && VERB_FIRST
                    .iter()
                    .any(|(start, verb)| text.starts_with(start) && text.contains(verb)))
    };
    if ends(first) {
        return (first.chars().count() <= MAX_ATTRIBUTION).then_some(1);
    }
    // Gmail in Chinese starts with the sender and may break after it:
    // "askbridge <bot@example.com>" / "于2026年12月7日周一 10:00写道：".
    let sender_then_date = first.ends_with('>')
        && first.contains('@')
        && lines.get(at + 1).is_some_and(|next| {
            let next = next.trim_start();
            ["于", "於", "在"].iter().any(|s| next.starts_with(s))
        });
    let opens = ATTRIBUTION_STARTS.iter().any(|s| first.starts_with(s))
        || first.matches('<').count() > first.matches('>').count()
        || sender_then_date;
    if !opens {
        return None;
    }
    let mut length = first.chars().count();
    for span in 2..=3 {
        let line = lines.get(at + span - 1)?.trim();
        if line.is_empty() || is_quoted(line) {
            return None;
        }
        length += 1 + line.chars().count();
        if length > MAX_ATTRIBUTION {
            return None;
        }
        if ends(lines[at..at + span].join(" ").trim()) {
            return Some(span);
        }
    }
    None
}

/// Whether the quoted message, unmarked, starts at line `at`: a separator
/// line ("-----Original Message-----", "---------- Forwarded message
/// ---------", "Begin forwarded message:"), Outlook's header block, or
/// the line of underscores Outlook puts before it.
fn starts_quoted_message(lines: &[&str], at: usize) -> bool {
    let line = lines[at].trim();
    if line.starts_with("--") || line.starts_with("==") {
        let words = line
            .trim_matches(|c: char| c == '-' || c == '=' || c.is_whitespace())
            .to_lowercase();
        if SEPARATORS.contains(&words.as_str()) {
            return true;
        }
    }
    if line.eq_ignore_ascii_case("begin forwarded message:") {
        return true;
    }
    if line.len() >= 10 && line.chars().all(|c| c == '_') {
        return next_lines(lines, at, 2).any(|next| header_block_at(lines, next));
    }
    header_block_at(lines, at)
}

/// The indexes of up to `reach` lines after `at` that are not blank.
fn next_lines<'a>(lines: &'a [&str], at: usize, reach: usize) -> impl Iterator<Item = usize> + 'a {
    (at + 1..lines.len().min(at + 1 + reach)).filter(|&i| !lines[i].trim().is_empty())
}

/// Whether a header block starts at line `at`: a `From:` label, then
/// within [`HEADER_REACH`] lines two other headers' labels (`Sent:`,
/// `To:`), or one when the `From:` line names an address. "From: Monday"
/// / "To: Friday" is an answer.
fn header_block_at(lines: &[&str], at: usize) -> bool {
    let is = |line: &str, labels: &[&str]| {
        label(line).is_some_and(|label| labels.contains(&label.to_lowercase().as_str()))
    };
    if !is(lines[at], FROM_LABELS) {
        return false;
    }
    let others = next_lines(lines, at, HEADER_REACH)
        .filter(|&next| !is_quoted(lines[next]) && is(lines[next], HEADER_LABELS))
        .count();
    others >= 2 || (others == 1 && lines[at].contains('@'))
}

/// A header line's label: `From` of `From: …`, also `*From:*` (bold
/// turned to text) and with a full-width colon (`发件人：`).
fn label(line: &str) -> Option<&str> {
    let line = line.trim_start().trim_start_matches('*');
    let colon = line.find([':', '：'])?;
    let label = line[..colon].trim_end_matches('*').trim();
    let plausible = !label.is_empty()
        && label.chars().count() <= 20
        && !label.contains(|c: char| c.is_ascii_punctuation() && c != '-');
    plausible.then_some(label)
}

/// The kept lines as text: right-trimmed, blank runs made one blank
/// line, blank lines at either end dropped.
fn tidy(lines: &[&str]) -> String {
    let mut out: Vec<&str> = Vec::with_capacity(lines.len());
    for line in lines {
        let line = line.trim_end();
        if line.is_empty() && out.last().is_none_or(|last| last.is_empty()) {
            continue;
        }
        out.push(line);
    }
    while out.last().is_some_and(|last| last.is_empty()) {
        out.pop();
    }
    out.join("\n").trim().to_owned()
}

/// Elements whose content is text, not markup, and never shown.
const RAW_TEXT: &[&str] = &["script", "style", "title", "textarea"];

/// Elements that are not shown, with all they contain.
const HIDDEN: &[&str] = &["head", "blockquote"];

/// Classes of the elements clients put quotes and signatures in.
const QUOTE_CLASSES: &[&str] = &[
    "gmail_quote",
    "gmail_quote_container",
    "gmail_attr",
    "gmail_signature",
    "yahoo_quoted",
    "moz-cite-prefix",
    "protonmail_quote",
];

/// Ids of the elements Outlook puts before the message it quotes: they and
/// everything after them are the quote.
const QUOTE_STARTS: &[&str] = &[
    "divrplyfwdmsg",
    "appendonsend",
    "mail-editor-reference-message-container",
];

/// Elements that start and end a line.
const BLOCKS: &[&str] = &[
    "address",
    "article",
    "blockquote",
    "center",
    "dd",
    "div",
    "dl",
    "dt",
    "footer",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "header",
    "hr",
    "li",
    "ol",
    "p",
    "pre",
    "section",
    "table",
    "tr",
    "ul",
];

/// Elements that never have an end tag.
const VOID: &[&str] = &[
    "area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "param", "source",
    "track", "wbr",
];

/// The plain text of an HTML body, good enough for a reply: no head,
/// styles or scripts; `<br>` and block ends as line breaks; entities
/// decoded; the quotes clients mark up dropped (Gmail's `gmail_quote`,
/// every `<blockquote>`, Yahoo's `yahoo_quoted`, Thunderbird's cite
/// prefix) with the attribution line just before them, and Outlook's
/// `divRplyFwdMsg` / `appendonsend` with everything after them.
pub fn html_text(html: &str) -> String {
    let mut out = Text::default();
    // The element being skipped, and how many of its kind are open.
    let mut hidden: Option<(String, usize)> = None;
    let mut at = 0;
    while at < html.len() {
        let rest = &html[at..];
        if !rest.starts_with('<') {
            let end = rest.find('<').unwrap_or(rest.len());
            if hidden.is_none() {
                out.push(&decode_entities(&rest[..end]));
            }
            at += end;
            continue;
        }
        let Some(markup) = markup(rest) else {
            if hidden.is_none() {
                out.push("<");
            }
            at += 1;
            continue;
        };
        at += markup.length;
        let Some(tag) = markup.tag else { continue };
        if !tag.end && RAW_TEXT.contains(&tag.name.as_str()) {
            at += raw_text_length(&html[at..], &tag.name);
            continue;
        }
        if let Some((name, open)) = &mut hidden {
            if *name == tag.name && !tag.self_closing {
                if tag.end {
                    *open -= 1;
                } else {
                    *open += 1;
                }
                if *open == 0 {
                    hidden = None;
                }
            }
            continue;
        }
        if tag.end {
            out.end_tag(&tag.name);
            continue;
        }
        if QUOTE_STARTS.contains(&tag.id.to_ascii_lowercase().as_str()) {
            break;
        }
        let quote = HIDDEN.contains(&tag.name.as_str())
            || tag
                .class
                .split_ascii_whitespace()
                .any(|class| QUOTE_CLASSES.contains(&class))
            || tag.id.starts_with("yahoo_quoted");
        if quote {
            if tag.name != "head" {
                out.drop_attribution();
            }
            if !tag.self_closing && !VOID.contains(&tag.name.as_str()) {
                hidden = Some((tag.name, 1));
            }
            continue;
        }
        out.start_tag(&tag.name);
    }
    out.finish()
}

/// Text as a browser would show it, being built.
#[derive(Debug, Default)]
struct Text {
    /// The text so far.
    text: String,
    /// Whitespace seen since the last character, to show as one space.
    space: bool,
    /// How many `<pre>` are open.
    pre: usize,
}

impl Text {
    /// Text of the document: whitespace collapsed outside `<pre>`.
    fn push(&mut self, text: &str) {
        for c in text.chars() {
            if self.pre > 0 {
                if c != '\r' {
                    self.text.push(c);
                }
            } else if c.is_ascii_whitespace() {
                self.space = true;
            } else {
                if self.space && !self.text.is_empty() && !self.text.ends_with('\n') {
                    self.text.push(' ');
                }
                self.space = false;
                self.text.push(c);
            }
        }
    }

    /// A line break.
    fn line_break(&mut self) {
        self.text.push('\n');
        self.space = false;
    }

    /// A line break unless the line is empty.
    fn block(&mut self) {
        if !self.text.is_empty() && !self.text.ends_with('\n') {
            self.line_break();
        }
    }

    fn start_tag(&mut self, name: &str) {
        match name {
            "br" => self.line_break(),
            "pre" => {
                self.block();
                self.pre += 1;
            }
            "td" | "th" => self.space = true,
            _ if BLOCKS.contains(&name) => self.block(),
            _ => {}
        }
    }

    fn end_tag(&mut self, name: &str) {
        match name {
            "pre" => {
                self.pre = self.pre.saturating_sub(1);
                self.block();
            }
            "td" | "th" => self.space = true,
            _ if BLOCKS.contains(&name) => self.block(),
            _ => {}
        }
    }

    /// Takes off the last line when it introduces a quote ("On … wrote:",
    /// as Apple Mail writes it before its `<blockquote>`). Only the tail
    /// an attribution fits in is looked at, so many quotes cost no more
    /// than one each.
    fn drop_attribution(&mut self) {
        let kept = self.text.trim_end();
        let mut tail = kept.len().saturating_sub(3 * 4 * MAX_ATTRIBUTION);
        while !kept.is_char_boundary(tail) {
            tail += 1;
        }
        if tail > 0 {
            // From the first whole line of the tail on.
            match kept[tail..].find('\n') {
                Some(newline) => tail += newline + 1,
                None => return,
            }
        }
        let lines: Vec<&str> = kept[tail..].split('\n').collect();
        let last = lines.len() - 1;
        for span in 1..=3.min(lines.len()) {
            let first = last + 1 - span;
            if attribution_at(&lines, first) == Some(span) {
                let cut = tail
                    + lines[..first]
                        .iter()
                        .map(|line| line.len() + 1)
                        .sum::<usize>();
                self.text.truncate(cut);
                self.space = false;
                return;
            }
        }
    }

    fn finish(self) -> String {
        let text: String = self
            .text
            .chars()
            .filter(|c| !matches!(c, '\u{200b}' | '\u{200c}' | '\u{200d}' | '\u{feff}'))
            .map(|c| if c == '\u{a0}' { ' ' } else { c })
            .collect();
        let lines: Vec<&str> = text.split('\n').collect();
        tidy(&lines)
    }
}

/// A piece of markup at the start of the text: a tag, a comment, a
/// declaration; its length in bytes.
#[derive(Debug)]
struct Markup {
    length: usize,
    tag: Option<Tag>,
}

/// A start or end tag, with what of its attributes matters here.
#[derive(Debug)]
struct Tag {
    /// The element's name, lowercased.
    name: String,
    end: bool,
    self_closing: bool,
    class: String,
    id: String,
}

/// The markup `text` starts with (it starts with `<`); `None` when the
/// `<` is text ("a < b"). Unterminated markup runs to the end.
fn markup(text: &str) -> Option<Markup> {
    let bytes = text.as_bytes();
    let until = |from: usize, end: &str| {
        text.get(from..)
            .and_then(|rest| rest.find(end))
            .map_or(text.len(), |at| from + at + end.len())
    };
    if text.starts_with("<!--") {
        return Some(Markup {
            length: until(4, "-->"),
            tag: None,
        });
    }
    match bytes.get(1) {
        Some(b'!' | b'?') => {
            return Some(Markup {
                length: until(2, ">"),
                tag: None,
            });
        }
        Some(b'/') if bytes.get(2).is_some_and(u8::is_ascii_alphabetic) => {}
        Some(c) if c.is_ascii_alphabetic() => {}
        _ => return None,
    }
    let end = bytes[1] == b'/';
    let start = if end { 2 } else { 1 };
    let name_end = text[start..]
        .find(|c: char| c.is_ascii_whitespace() || c == '/' || c == '>')
        .map_or(text.len(), |at| start + at);
    let mut tag = Tag {
        name: text[start..name_end].to_ascii_lowercase(),
        end,
        self_closing: false,
        class: String::new(),
        id: String::new(),
    };
    // Attributes: name, name=value, name="value", name='value'.
    let mut at = name_end;
    loop {
        while at < bytes.len() && bytes[at].is_ascii_whitespace() {
            at += 1;
        }
        match bytes.get(at) {
            None => break,
            Some(b'>') => {
                at += 1;
                break;
            }
            Some(b'/') => {
                tag.self_closing = bytes.get(at + 1) == Some(&b'>');
                at += 1;
                continue;
            }
            Some(_) => {}
        }
        let name_start = at;
        while at < bytes.len()
            && !bytes[at].is_ascii_whitespace()
            && !matches!(bytes[at], b'=' | b'>' | b'/')
        {
            at += 1;
        }
        let name = text[name_start..at].to_ascii_lowercase();
        while at < bytes.len() && bytes[at].is_ascii_whitespace() {
            at += 1;
        }
        if bytes.get(at) != Some(&b'=') {
            if at == name_start {
                at += 1;
            }
            continue;
        }
        at += 1;
        while at < bytes.len() && bytes[at].is_ascii_whitespace() {
            at += 1;
        }
        let value = match bytes.get(at) {
            Some(&quote @ (b'"' | b'\'')) => {
                let from = at + 1;
                let to = text[from..]
                    .find(char::from(quote))
                    .map_or(text.len(), |end| from + end);
                at = (to + 1).min(text.len());
                &text[from..to]
            }
            _ => {
                let from = at;
                while at < bytes.len() && !bytes[at].is_ascii_whitespace() && bytes[at] != b'>' {
                    at += 1;
                }
                &text[from..at]
            }
        };
        match name.as_str() {
            "class" => tag.class = value.to_owned(),
            "id" => tag.id = value.to_owned(),
            _ => {}
        }
    }
    Some(Markup {
        length: at,
        tag: Some(tag),
    })
}

/// The length of a raw-text element's content and end tag (`</style>`,
/// in any case), or of the rest when it has none.
fn raw_text_length(text: &str, name: &str) -> usize {
    let bytes = text.as_bytes();
    let mut from = 0;
    while let Some(found) = text[from..].find("</") {
        let at = from + found;
        let after = &bytes[at + 2..];
        if after.len() >= name.len() && after[..name.len()].eq_ignore_ascii_case(name.as_bytes()) {
            return text[at..].find('>').map_or(text.len(), |end| at + end + 1);
        }
        from = at + 2;
    }
    text.len()
}

/// Text with its character references decoded: the named ones replies
/// use, decimal `&#NNN;` and hexadecimal `&#xHH;`. Unknown ones stay.
fn decode_entities(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(amp) = rest.find('&') {
        out.push_str(&rest[..amp]);
        rest = &rest[amp..];
        let decoded = rest[1..]
            .char_indices()
            .take(32)
            .find(|&(_, c)| c == ';')
            .and_then(|(semi, _)| Some((entity(&rest[1..=semi])?, semi + 2)));
        match decoded {
            Some((c, length)) => {
                out.push_str(c.as_deref().unwrap_or(""));
                rest = &rest[length..];
            }
            None => {
                out.push('&');
                rest = &rest[1..];
            }
        }
    }
    out.push_str(rest);
    out
}

/// What a character reference's name (between `&` and `;`) stands for:
/// `Some(None)` for one that shows nothing (`&zwnj;`), `None` for an
/// unknown one.
fn entity(name: &str) -> Option<Option<String>> {
    if let Some(number) = name.strip_prefix('#') {
        let code = match number.strip_prefix(['x', 'X']) {
            Some(hex) => u32::from_str_radix(hex, 16).ok()?,
            None => number.parse().ok()?,
        };
        let c = char::from_u32(code)
            .filter(|&c| c != '\0')
            .unwrap_or('\u{fffd}');
        return Some(Some(c.to_string()));
    }
    let c = match name {
        "amp" => '&',
        "lt" => '<',
        "gt" => '>',
        "quot" => '"',
        "apos" => '\'',
        "nbsp" => '\u{a0}',
        "ensp" | "emsp" | "thinsp" => ' ',
        "ndash" => '–',
        "mdash" => '—',
        "hellip" => '…',
        "lsquo" => '‘',
        "rsquo" => '’',
        "ldquo" => '“',
        "rdquo" => '”',
        "laquo" => '«',
        "raquo" => '»',
        "middot" => '·',
        "bull" => '•',
        "copy" => '©',
        "reg" => '®',
        "trade" => '™',
        "euro" => '€',
        "zwnj" | "zwj" | "shy" | "lrm" | "rlm" => return Some(None),
        _ => return None,
    };
    Some(Some(c.to_string()))
}

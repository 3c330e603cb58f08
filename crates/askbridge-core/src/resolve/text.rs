//! Text normalisation and tokenising for replies and labels (docs/replies.md).
//!
//! Both sides of every comparison go through [`fold`], so a label and a reply
//! that a person would call "the same" compare equal.

use caseless::Caseless;
use unicode_normalization::char::is_combining_mark;
use unicode_normalization::{IsNormalized, UnicodeNormalization, is_nfkc_quick};

/// A reply after cleaning.
#[derive(Debug, Clone)]
pub(crate) struct Cleaned {
    /// Platform artefacts removed and trimmed; otherwise as typed.
    pub display: String,
    /// Folded ([`fold`]) line by line, wrapping quotes and markdown and
    /// trailing punctuation stripped, "(Recommended)" and ⭐ removed.
    pub norm: String,
    /// The reply ended in a question mark.
    pub question_mark: bool,
}

/// Cleans one reply (or one line or item of a reply).
pub(crate) fn clean(reply: &str) -> Cleaned {
    let display = strip_artefacts(reply).trim().to_owned();
    // Line breaks separate list items (docs/replies.md), so they stay.
    let folded = if display.contains('\n') {
        display
            .lines()
            .map(fold)
            .filter(|line| !line.is_empty())
            .collect::<Vec<_>>()
            .join("\n")
    } else {
        fold(&display)
    };
    let (norm, question_mark) = clean_folded(folded);
    Cleaned {
        display,
        norm,
        question_mark,
    }
}

/// Strips wrapping quotes and markdown, trailing punctuation, "(Recommended)"
/// and stars from an already folded string. Returns whether a question mark
/// was at the end.
pub(crate) fn clean_folded(folded: String) -> (String, bool) {
    // Most replies are plain words and numbers: nothing to strip.
    if folded
        .bytes()
        .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b' ')
    {
        return (folded, false);
    }
    let mut s = folded.trim();
    let mut question_mark = false;
    loop {
        let before = s.len();
        s = s.trim_start_matches('>').trim();
        s = strip_wrapping(s);
        if let Some(rest) = s.strip_suffix(['?', '？']) {
            question_mark = true;
            s = rest.trim_end();
        }
        s = s
            .trim_end_matches(['.', '!', ',', ';', '~', '…', '。', '！', '，', '；', '、'])
            .trim_end();
        s = crate::model::strip_recommended_marker(s);
        if s.len() == before {
            break;
        }
    }
    let mut out = if s.contains('⭐') {
        collapse_whitespace(&s.replace('⭐', " "))
    } else if s.len() == folded.len() {
        // Nothing stripped (a label in Chinese or Thai, say).
        folded
    } else {
        s.to_owned()
    };
    // "no. 2" and "nr. 2" are numbers, not a "no".
    let abbreviations: &[&str] = if out.contains(['.', '№']) {
        &["no.", "nr.", "№"]
    } else {
        &[]
    };
    for abbreviation in abbreviations {
        while let Some(at) = out.find(abbreviation) {
            let before_ok = out[..at]
                .chars()
                .next_back()
                .is_none_or(|c| !c.is_alphanumeric());
            let after = out[at + abbreviation.len()..].trim_start();
            if !(before_ok && after.starts_with(|c: char| c.is_ascii_digit())) {
                break;
            }
            out.replace_range(at..at + abbreviation.len(), "#");
        }
    }
    (out, question_mark)
}

fn strip_wrapping(s: &str) -> &str {
    const PAIRS: &[(&str, &str)] = &[
        ("**", "**"),
        ("__", "__"),
        ("~~", "~~"),
        ("*", "*"),
        ("_", "_"),
        ("`", "`"),
        ("\"", "\""),
        ("'", "'"),
        ("“", "”"),
        ("‘", "’"),
        ("「", "」"),
        ("『", "』"),
        ("«", "»"),
        ("【", "】"),
        ("(", ")"),
        ("[", "]"),
    ];
    for (open, close) in PAIRS {
        if s.len() > open.len() + close.len()
            && let Some(inner) = s.strip_prefix(open).and_then(|r| r.strip_suffix(close))
            && !inner.contains(open)
            && !inner.contains(close)
        {
            return inner.trim();
        }
    }
    s
}

/// Whether `s` is its own NFKC for a reason cheap to see: only ASCII, CJK
/// unified ideographs and Thai letters, vowels, digits and marks — none
/// of which decomposes or composes — except SARA AM (`ำ`, which NFKC
/// splits) and two Thai marks in a row (which NFKC may reorder). Anything
/// else goes through the normaliser.
fn is_plain_nfkc(s: &str) -> bool {
    let thai_mark = |c: char| matches!(c, '\u{0E38}'..='\u{0E3A}' | '\u{0E48}'..='\u{0E4B}');
    let mut previous_mark = false;
    s.chars().all(|c| {
        let mark = thai_mark(c);
        let plain = c.is_ascii()
            || matches!(c, '\u{4E00}'..='\u{9FFF}')
            || (matches!(c, '\u{0E01}'..='\u{0E5B}')
                && c != '\u{0E33}'
                && !(mark && previous_mark));
        previous_mark = mark;
        plain
    })
}

/// Unicode NFKC with full case folding (CaseFolding.txt, statuses C and F:
/// `ß` and `ẞ` are `ss`, `ﬀ` is `ff`, final `ς` is `σ`), invisible and
/// presentation characters removed, Thai digits as ASCII digits, whitespace
/// collapsed. Labels and replies both go through it, so "GRÜSSE" and
/// "Grüße" fold alike.
///
/// Non-ASCII text is normalised (NFKC), folded, and normalised again when
/// folding left combining marks to compose ("ǰ" folds to "j" and a caron):
/// the compatibility caseless match of Unicode §3.13, as one key.
pub(crate) fn fold(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut space = false;
    let mut push = |out: &mut String, c: char| {
        if c.is_whitespace() {
            space = !out.is_empty();
        } else {
            if space {
                out.push(' ');
                space = false;
            }
            out.push(c);
        }
    };
    // An apostrophe inside a word is dropped: "won't" and "wont" are one word.
    if s.is_ascii() {
        let mut previous = ' ';
        for c in s.chars() {
            if !(c == '\'' && previous.is_ascii_alphanumeric()) {
                push(&mut out, c.to_ascii_lowercase());
            }
            previous = c;
        }
        return out;
    }
    let mut previous_is_alphanumeric = false;
    let mut marks = false;
    // Chinese and Thai words as typed are their own NFKC: spare them the
    // normaliser.
    let normalized: Box<dyn Iterator<Item = char> + '_> = if is_plain_nfkc(s) {
        Box::new(s.chars())
    } else {
        Box::new(s.nfkc())
    };
    for c in normalized {
        let c = match c {
            '\u{FE0E}'
            | '\u{FE0F}'
            | '\u{20E3}'
            | '\u{200B}'..='\u{200D}'
            | '\u{2060}'
            | '\u{FEFF}' => continue,
            '๐'..='๙' => char::from(b'0' + (c as u32 - '๐' as u32) as u8),
            '\'' | '’' | '‘' | '`' if previous_is_alphanumeric => continue,
            _ => c,
        };
        if c.is_ascii() {
            previous_is_alphanumeric = c.is_ascii_alphanumeric();
            push(&mut out, c.to_ascii_lowercase());
        } else if is_spaceless_script(c) {
            // Chinese, Japanese, Korean and Thai have no case.
            previous_is_alphanumeric = true;
            push(&mut out, c);
        } else {
            // A combining mark continues the letter before it.
            if !is_combining_mark(c) {
                previous_is_alphanumeric = c.is_alphanumeric();
            }
            for folded in std::iter::once(c).default_case_fold() {
                marks |= is_combining_mark(folded);
                push(&mut out, folded);
            }
        }
    }
    if marks && is_nfkc_quick(out.chars()) != IsNormalized::Yes {
        out = out.nfkc().collect();
    }
    out
}

fn collapse_whitespace(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Removes what is not part of what the person said: a leading `@name`
/// (the bot, addressed in a group). Platform markup (Slack's `<@U…>` and
/// `&amp;`, Discord's `<@id>`) never gets here: each platform's `parse`
/// undoes its own.
pub(crate) fn strip_artefacts(reply: &str) -> String {
    strip_leading_mention(reply.trim()).to_owned()
}

/// `s` without a leading `@name` (letters, digits, `_`, `.`, `-`) and the
/// `,` or `:` after it.
fn strip_leading_mention(s: &str) -> &str {
    let Some(rest) = s.strip_prefix('@') else {
        return s;
    };
    let end = rest
        .find(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-')))
        .unwrap_or(rest.len());
    if end == 0 {
        return s;
    }
    rest[end..].trim_start_matches([',', ':']).trim_start()
}

/// The kind of a token.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// Letters (Latin, Cyrillic, …) possibly with digits and inner apostrophes.
    Word,
    /// ASCII digits only.
    Number,
    /// A number with a decimal point or a sign (`2.5`, `-1`): never an index.
    Decimal,
    /// A run containing Chinese, Japanese, Korean or Thai script: matched by
    /// substring, since these scripts do not separate words with spaces.
    Script,
    /// One emoji or other symbol.
    Symbol,
}

/// One token of a folded string.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Token<'a> {
    pub text: &'a str,
    pub kind: Kind,
}

/// Whether a character belongs to a script written without spaces.
pub(crate) fn is_spaceless_script(c: char) -> bool {
    matches!(c,
        '\u{0E00}'..='\u{0E7F}'   // Thai
        | '\u{0E80}'..='\u{0EFF}' // Lao
        | '\u{1000}'..='\u{109F}' // Myanmar
        | '\u{1780}'..='\u{17FF}' // Khmer
        | '\u{3040}'..='\u{30FF}' // Hiragana, Katakana
        | '\u{3400}'..='\u{4DBF}' // CJK extension A
        | '\u{4E00}'..='\u{9FFF}' // CJK unified
        | '\u{AC00}'..='\u{D7AF}' // Hangul
        | '\u{F900}'..='\u{FAFF}' // CJK compatibility
        | '\u{20000}'..='\u{2FA1F}')
}

fn is_word_char(c: char) -> bool {
    if c.is_ascii() {
        return c.is_ascii_alphanumeric();
    }
    is_spaceless_script(c) || is_mark(c) || c.is_alphanumeric()
}

fn is_mark(c: char) -> bool {
    matches!(c, '\u{0300}'..='\u{036F}' | '\u{1AB0}'..='\u{1AFF}' | '\u{20D0}'..='\u{20FF}')
}

fn is_punctuation(c: char) -> bool {
    c.is_ascii_punctuation()
        || matches!(c,
            '\u{2000}'..='\u{206F}' // general punctuation: dashes, quotes, …
            | '\u{3000}'..='\u{303F}' // CJK punctuation
            | '\u{FF00}'..='\u{FF65}' // full-width forms (mostly folded already)
            | '¡' | '¿' | '«' | '»' | '·' | '§' | '¶' | '°' | '×' | '÷')
}

/// Splits a folded string into tokens. Punctuation separates tokens and is
/// dropped; an apostrophe inside a word and the point of a decimal number
/// are kept.
pub(crate) fn tokenize(s: &str) -> Vec<Token<'_>> {
    let mut tokens = Vec::new();
    let mut chars = s.char_indices().peekable();
    let mut previous = ' ';
    while let Some((start, c)) = chars.next() {
        let signed = c == '-'
            && previous.is_whitespace()
            && chars.peek().is_some_and(|&(_, next)| next.is_ascii_digit());
        previous = c;
        if signed {
            let mut end = start + 1;
            while let Some(&(i, next)) = chars.peek() {
                if !(next.is_ascii_digit() || next == '.') {
                    break;
                }
                end = i + 1;
                chars.next();
            }
            tokens.push(Token {
                text: &s[start..end],
                kind: Kind::Decimal,
            });
            continue;
        }
        if is_word_char(c) {
            let mut end = start + c.len_utf8();
            let mut digits_only = c.is_ascii_digit();
            let mut script = is_spaceless_script(c);
            let mut decimal = false;
            while let Some(&(i, next)) = chars.peek() {
                if is_word_char(next) {
                    // Digits and Chinese or Thai split: "第2个" → 第 2 个, "1和3" → 1 和 3.
                    let last = s[start..end].chars().next_back().unwrap_or(c);
                    if (last.is_ascii_digit() && is_spaceless_script(next))
                        || (is_spaceless_script(last) && next.is_ascii_digit())
                    {
                        break;
                    }
                    digits_only &= next.is_ascii_digit();
                    script |= is_spaceless_script(next);
                } else if next == '\'' || (next == '.' && digits_only && !decimal) {
                    let mut ahead = s[i + 1..].chars();
                    let joins = match ahead.next() {
                        Some(after) if next == '.' => after.is_ascii_digit(),
                        Some(after) => after.is_alphabetic(),
                        None => false,
                    };
                    if !joins {
                        break;
                    }
                    decimal |= next == '.';
                } else {
                    break;
                }
                end = i + next.len_utf8();
                previous = next;
                chars.next();
            }
            let kind = if decimal {
                Kind::Decimal
            } else if digits_only {
                Kind::Number
            } else if script {
                Kind::Script
            } else {
                Kind::Word
            };
            tokens.push(Token {
                text: &s[start..end],
                kind,
            });
        } else if !c.is_whitespace() && !is_punctuation(c) {
            tokens.push(Token {
                text: &s[start..start + c.len_utf8()],
                kind: Kind::Symbol,
            });
        }
    }
    tokens
}

/// The part of `s` after `token`, which must be a token of `s`.
pub(crate) fn after<'a>(s: &'a str, token: &Token<'_>) -> &'a str {
    let start = (token.text.as_ptr() as usize).saturating_sub(s.as_ptr() as usize);
    s.get(start + token.text.len()..).unwrap_or("")
}

/// The part of `s` before `token` (plus `extra` bytes into it).
pub(crate) fn before<'a>(s: &'a str, token: &Token<'_>, extra: usize) -> &'a str {
    let start = (token.text.as_ptr() as usize).saturating_sub(s.as_ptr() as usize);
    s.get(..start + extra).unwrap_or(s)
}

/// The part of `s` between two of its tokens.
pub(crate) fn between<'a>(s: &'a str, first: &Token<'_>, second: &Token<'_>) -> &'a str {
    let base = s.as_ptr() as usize;
    let start = (first.text.as_ptr() as usize).saturating_sub(base) + first.text.len();
    let end = (second.text.as_ptr() as usize).saturating_sub(base);
    s.get(start..end).unwrap_or("")
}

/// Whether `key` is the tokens joined by `separator`, without building the
/// joined string.
pub(crate) fn is_key_of(key: &str, tokens: &[Token<'_>], separator: &str) -> bool {
    let mut rest = key;
    for (i, token) in tokens.iter().enumerate() {
        if i > 0 {
            match rest.strip_prefix(separator) {
                Some(after) => rest = after,
                None => return false,
            }
        }
        match rest.strip_prefix(token.text) {
            Some(after) => rest = after,
            None => return false,
        }
    }
    rest.is_empty()
}

/// The tokens of a folded string joined by single spaces: the form in which
/// labels and replies are compared, so "On-call" equals "on call".
pub(crate) fn key_of(tokens: &[Token<'_>]) -> String {
    let mut key = String::new();
    for token in tokens {
        if !key.is_empty() {
            key.push(' ');
        }
        key.push_str(token.text);
    }
    key
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// The shortcut is taken only for text that is its own NFKC.
        #[test]
        fn text_taken_as_its_own_nfkc_is(s in "[a-zA-Z0-9 .'ก-๛\u{0E33}\u{0E38}-\u{0E3A}\u{0E48}-\u{0E4B}部署生产测试é\u{0301}\u{3000}ｆ]{0,12}") {
            if is_plain_nfkc(&s) {
                prop_assert_eq!(s.nfkc().collect::<String>(), s);
            }
        }
    }

    #[test]
    fn chinese_and_thai_as_typed_skip_the_normaliser_and_fold_the_same() {
        for plain in ["生产环境", "ใช่ครับ", "เซิร์ฟเวอร์หลัก", "Deploy 2 生产"]
        {
            assert!(is_plain_nfkc(plain), "{plain}");
        }
        // SARA AM splits, marks may reorder, full-width letters fold.
        for not in ["ทำ", "\u{0E01}\u{0E48}\u{0E38}", "ｆｕｌｌ", "e\u{0301}"] {
            assert!(!is_plain_nfkc(not), "{not}");
        }
        assert_eq!(fold("ทำ"), "ท\u{0E4D}\u{0E32}");
        assert_eq!(fold("\u{0E01}\u{0E48}\u{0E38}"), "\u{0E01}\u{0E38}\u{0E48}");
    }

    fn check_clean(input: &str, norm: &str) {
        assert_eq!(clean(input).norm, norm, "{input:?}");
    }

    #[test]
    fn cleaning() {
        check_clean("  Staging  ", "staging");
        check_clean("**Staging**", "staging");
        check_clean("\"production\".", "production");
        check_clean("２", "2");
        check_clean("2️⃣", "2");
        check_clean("๒", "2");
        check_clean("@askbridge_bot 3", "3");
        check_clean("@john.doe, 2", "2");
        check_clean("R&D", "r&d");
        check_clean("Staging (Recommended)", "staging");
        check_clean("Staging ⭐", "staging");
        check_clean("「生产环境」", "生产环境");
        check_clean("> 2", "2");
        check_clean("ＳＴＡＧＩＮＧ", "staging");
    }

    #[test]
    fn full_case_folding() {
        let same = [
            ("GRÜSSE", "Grüße"),
            ("WEISS", "Weiß"),
            ("STRASSE", "Straẞe"),
            ("ﬀ", "FF"),
            ("ΟΔΟΣ", "οδος"),
            ("ΣΊΣΥΦΟΣ", "σίσυφος"),
            ("ǰ", "J\u{30C}"),
            ("ΐ", "Ϊ\u{301}"),
            ("ᾳ", "ΑΙ"),
            ("Cafe\u{301}", "CAFÉ"),
            ("İstanbul", "i\u{307}stanbul"),
            ("ꭰ", "Ꭰ"),
            ("ＧＲＵＳＳＥ", "grusse"),
        ];
        for (a, b) in same {
            assert_eq!(fold(a), fold(b), "{a:?} ≡ {b:?}");
        }
        assert_eq!(fold("Grüße"), "grüsse");
        assert_ne!(fold("ı"), fold("i"));
        // Folding is stable: a folded string folds to itself.
        for s in ["Grüße", "ǰ", "ΐ", "ᾳ", "生产环境", "พรุ่งนี้", "한국어", "Ꭰ"]
        {
            assert_eq!(fold(&fold(s)), fold(s), "{s:?}");
        }
    }

    #[test]
    fn spaceless_scripts_have_no_case() {
        let ranges = [
            '\u{0E00}'..='\u{0EFF}',
            '\u{1000}'..='\u{109F}',
            '\u{1780}'..='\u{17FF}',
            '\u{3040}'..='\u{30FF}',
            '\u{3400}'..='\u{9FFF}',
            '\u{AC00}'..='\u{D7AF}',
            '\u{F900}'..='\u{FAFF}',
        ];
        for c in ranges.into_iter().flatten() {
            assert!(is_spaceless_script(c) || !c.is_alphabetic(), "{c:?}");
            if is_spaceless_script(c) {
                let folded: String = std::iter::once(c).default_case_fold().collect();
                assert_eq!(folded, c.to_string(), "{c:?}");
            }
        }
    }

    #[test]
    fn question_mark_is_noticed_and_stripped() {
        let cleaned = clean("can you explain 2?");
        assert!(cleaned.question_mark);
        assert_eq!(cleaned.norm, "can you explain 2");
    }

    fn check_tokens(input: &str, expect: &[(&str, Kind)]) {
        let folded = fold(input);
        let got: Vec<_> = tokenize(&folded).iter().map(|t| (t.text, t.kind)).collect();
        assert_eq!(got, expect, "{input:?}");
    }

    #[test]
    fn tokens() {
        use Kind::*;
        check_tokens("On-call", &[("on", Word), ("call", Word)]);
        check_tokens("2.5", &[("2.5", Decimal)]);
        check_tokens("2.", &[("2", Number)]);
        check_tokens("1,3", &[("1", Number), ("3", Number)]);
        check_tokens(
            "I'll take 2nd",
            &[("ill", Word), ("take", Word), ("2nd", Word)],
        );
        check_tokens("第二个", &[("第二个", Script)]);
        check_tokens("ข้อ 2", &[("ข้อ", Script), ("2", Number)]);
        check_tokens("ข้อ2", &[("ข้อ", Script), ("2", Number)]);
        check_tokens("1和3", &[("1", Number), ("和", Script), ("3", Number)]);
        check_tokens("🚀 ship", &[("🚀", Symbol), ("ship", Word)]);
        check_tokens("C++", &[("c", Word)]);
    }
}

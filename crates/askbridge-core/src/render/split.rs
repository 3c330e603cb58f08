//! Clean splitting and cutting of text to a platform's length limit.
//!
//! Length is measured in the platform's own [`Unit`], by [`Unit::len`]
//! alone: every part a channel is sent (the prompt, a button's card, a
//! context block) is split or cut by the same count. The channel limits
//! in [`super::Capabilities`] keep a further margin for the adapter's
//! markup.
//!
//! Text is never cut inside a `char`, and only as a last resort between a
//! base character and what attaches to it (combining marks such as Thai
//! vowels and tone marks, variation selectors, zero-width joiners, emoji
//! modifiers, regional-indicator pairs, Thai leading vowels).

use unicode_normalization::char::is_combining_mark;

/// What a platform counts a text's length in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Unit {
    /// UTF-16 code units: what Telegram counts (after entities are parsed
    /// out), and never fewer than the characters Discord, Slack, Feishu and
    /// Teams count, so a text that fits by it fits them too.
    Utf16,
    /// The bytes a text takes in a JSON event that carries it twice, as it
    /// is and HTML-escaped, both UTF-8 (Matrix: `body` and
    /// `formatted_body`, a poll's question and its fallback, an edit's
    /// `body` and `m.new_content`), whose limit is on the whole event's
    /// bytes.
    EventBytes,
}

impl Unit {
    /// The length of `text` in this unit.
    pub fn len(self, text: &str) -> usize {
        text.chars().map(|c| self.char_len(c)).sum()
    }

    /// The length of one character: every unit here is a sum over them,
    /// so a text can be cut anywhere by adding them up.
    fn char_len(self, c: char) -> usize {
        match self {
            Unit::Utf16 => c.len_utf16(),
            Unit::EventBytes => json_len(c) + html_json_len(c),
        }
    }
}

/// The bytes of `c` in a JSON string: a quote, a backslash and a control
/// character are escaped (`\"`, `\n`, `\u0001`).
fn json_len(c: char) -> usize {
    match c {
        '"' | '\\' | '\n' | '\r' | '\t' | '\u{8}' | '\u{c}' => 2,
        '\0'..='\u{1f}' => 6,
        _ => c.len_utf8(),
    }
}

/// The bytes of `c` HTML-escaped (as [`super::html_escape`] and the Matrix
/// adapter do), in a JSON string.
fn html_json_len(c: char) -> usize {
    match c {
        '&' => "&amp;".len(),
        '<' | '>' => "&lt;".len(),
        '"' => "&quot;".len(),
        '\'' => "&#39;".len(),
        _ => json_len(c),
    }
}

/// Splits `text` into parts of at most `max` in `unit` ([`Unit::len`]).
///
/// Breaks are chosen, in this order of preference, at the last paragraph
/// break, line break, space, punctuation mark, character cluster boundary
/// or character boundary that still fits. The whitespace at a break is
/// dropped and parts are trimmed at the end (indentation at the start of a
/// line is kept), so no part is empty and every non-whitespace character
/// appears exactly once, in order. Text that fits is returned unchanged as
/// one part; blank text gives no parts. A `max` of 0 counts as 1; a
/// part is longer than `max` only when a single character is (an astral
/// character with `max` 1).
pub fn split_message(text: &str, max: usize, unit: Unit) -> Vec<String> {
    let max = max.max(1);
    if text.trim().is_empty() {
        return Vec::new();
    }
    if unit.len(text) <= max {
        return vec![text.to_owned()];
    }
    let mut parts = Vec::new();
    let mut rest = text.trim_start_matches(['\r', '\n']);
    while !rest.trim().is_empty() {
        if unit.len(rest) <= max {
            parts.push(rest.trim_end().to_owned());
            break;
        }
        let (end, next) = split_point(rest, max, unit);
        let part = rest[..end].trim_end();
        if !part.trim_start().is_empty() {
            parts.push(part.to_owned());
        }
        rest = &rest[next..];
    }
    parts
}

/// Cuts `text` to at most `max` in `unit` ([`Unit::len`]), ending in "…"
/// when anything was cut. Prefers a word boundary near the end, never cuts
/// inside a character cluster unless one cluster is longer than the limit.
pub fn cut(text: &str, max: usize, unit: Unit) -> String {
    if unit.len(text) <= max {
        return text.to_owned();
    }
    let Some(budget) = max.checked_sub(unit.len("…")) else {
        return String::new();
    };
    let limit = fit_limit(text, budget, unit);
    let first_ink = first_ink(text);
    let lower = limit - limit / 3;
    let at_space = last_boundary(text, limit, first_ink, |p| {
        p >= lower && next_char(text, p).is_some_and(is_break_space)
    });
    let end = at_space
        .or_else(|| last_boundary(text, limit, first_ink, |p| cluster_boundary(text, p)))
        .unwrap_or(limit);
    let mut out = text[..end].trim_end().to_owned();
    out.push('…');
    out
}

/// Where to end the current part and where the next one starts (byte
/// offsets into `rest`, `0 < end <= next`).
fn split_point(rest: &str, max: usize, unit: Unit) -> (usize, usize) {
    let mut limit = fit_limit(rest, max, unit);
    if limit == 0 {
        // One character wider than the limit: it goes alone.
        limit = rest.chars().next().map_or(rest.len(), char::len_utf8);
    }
    let ink = first_ink(rest);

    let newline_run_end = |p: usize| {
        let run = &rest[p..];
        let ws = run.len() - run.trim_start().len();
        p + run[..ws].rfind('\n').map_or(0, |i| i + 1)
    };
    if let Some(p) = last_boundary(rest, limit, ink, |p| paragraph_break(rest, p)) {
        return (p, newline_run_end(p));
    }
    if let Some(p) = last_boundary(rest, limit, ink, |p| line_break(rest, p)) {
        return (p, newline_run_end(p));
    }
    if let Some(p) = last_boundary(rest, limit, ink, |p| {
        next_char(rest, p).is_some_and(is_break_space)
    }) {
        let run = &rest[p..];
        return (p, p + run.len() - run.trim_start().len());
    }
    if let Some(p) = last_boundary(rest, limit, ink, |p| punctuation_break(rest, p)) {
        return (p, p);
    }
    if let Some(p) = last_boundary(rest, limit, ink, |p| cluster_boundary(rest, p)) {
        return (p, p);
    }
    (limit, limit)
}

/// The largest byte offset such that `text[..offset]` fits in `max`.
pub(super) fn fit_limit(text: &str, max: usize, unit: Unit) -> usize {
    let mut width = 0;
    for (i, c) in text.char_indices() {
        width += unit.char_len(c);
        if width > max {
            return i;
        }
    }
    text.len()
}

/// Byte offset of the first non-whitespace character (or the length).
fn first_ink(text: &str) -> usize {
    text.len() - text.trim_start().len()
}

/// The last char boundary `p` in `1..=limit` with ink before it for which
/// `accept(p)` holds.
fn last_boundary(
    text: &str,
    limit: usize,
    first_ink: usize,
    accept: impl Fn(usize) -> bool,
) -> Option<usize> {
    (first_ink + 1..=limit)
        .rev()
        .filter(|&p| text.is_char_boundary(p))
        .find(|&p| accept(p))
}

fn next_char(text: &str, p: usize) -> Option<char> {
    text[p..].chars().next()
}

fn prev_char(text: &str, p: usize) -> Option<char> {
    text[..p].chars().next_back()
}

/// A line break followed by a blank line.
fn paragraph_break(text: &str, p: usize) -> bool {
    let Some(after) = strip_newline(&text[p..]) else {
        return false;
    };
    strip_newline(after.trim_start_matches([' ', '\t'])).is_some()
}

fn line_break(text: &str, p: usize) -> bool {
    strip_newline(&text[p..]).is_some()
}

fn strip_newline(text: &str) -> Option<&str> {
    text.strip_prefix("\r\n")
        .or_else(|| text.strip_prefix('\n'))
}

/// Whitespace that may be broken at (not a no-break space).
fn is_break_space(c: char) -> bool {
    c.is_whitespace() && !matches!(c, '\u{00A0}' | '\u{2007}' | '\u{202F}')
}

/// After a punctuation mark and not before another one.
fn punctuation_break(text: &str, p: usize) -> bool {
    match (prev_char(text, p), next_char(text, p)) {
        (Some(prev), Some(next)) => {
            is_punctuation(prev) && !is_punctuation(next) && cluster_boundary(text, p)
        }
        _ => false,
    }
}

fn is_punctuation(c: char) -> bool {
    matches!(
        c,
        '。' | '，'
            | '、'
            | '；'
            | '：'
            | '！'
            | '？'
            | '…'
            | '）'
            | '」'
            | '』'
            | '”'
            | '’'
            | '.'
            | ','
            | ';'
            | ':'
            | '!'
            | '?'
            | ')'
            | ']'
            | '"'
            | '\''
            | '\u{0E2F}' // Thai paiyannoi
            | '\u{0E46}' // Thai mai yamok
            | '\u{0E5A}' // Thai angkhankhu
            | '\u{0E5B}' // Thai khomut
    )
}

/// Whether `p` is between two character clusters (grapheme-ish: not before
/// a mark or joiner, not after a joiner or a Thai/Lao leading vowel, not
/// inside CR LF or a regional-indicator pair).
fn cluster_boundary(text: &str, p: usize) -> bool {
    let (Some(prev), Some(next)) = (prev_char(text, p), next_char(text, p)) else {
        return true;
    };
    if (prev == '\r' && next == '\n') || attaches_to_previous(next) || attaches_to_next(prev) {
        return false;
    }
    if is_regional_indicator(prev) && is_regional_indicator(next) {
        let run = text[..p]
            .chars()
            .rev()
            .take_while(|&c| is_regional_indicator(c))
            .count();
        return run % 2 == 0;
    }
    true
}

fn attaches_to_previous(c: char) -> bool {
    is_combining_mark(c)
        || matches!(c,
            '\u{200C}' | '\u{200D}'            // ZWNJ, ZWJ
            | '\u{FE00}'..='\u{FE0F}'          // variation selectors
            | '\u{E0100}'..='\u{E01EF}'
            | '\u{1F3FB}'..='\u{1F3FF}'        // emoji skin tones
            | '\u{E0020}'..='\u{E007F}'        // emoji tags
            | '\u{0E30}' | '\u{0E32}' | '\u{0E33}' | '\u{0E45}' // Thai following vowels
            | '\u{0EB0}' | '\u{0EB2}' | '\u{0EB3}' // Lao following vowels
        )
}

fn attaches_to_next(c: char) -> bool {
    matches!(c,
        '\u{200D}'
        | '\u{0E40}'..='\u{0E44}'   // Thai leading vowels
        | '\u{0EC0}'..='\u{0EC4}'   // Lao leading vowels
    )
}

fn is_regional_indicator(c: char) -> bool {
    ('\u{1F1E6}'..='\u{1F1FF}').contains(&c)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(text: &str, max: usize, expect: &[&str]) {
        let got = split_message(text, max, Unit::Utf16);
        assert_eq!(got, expect, "split {text:?} at {max}");
    }

    #[test]
    fn splits() {
        check("", 10, &[]);
        check("  \n ", 10, &[]);
        check("short", 10, &["short"]);
        check("para one\n\npara two", 12, &["para one", "para two"]);
        check(
            "line one\nline two\nline three",
            18,
            &["line one\nline two", "line three"],
        );
        check("one two three four", 9, &["one two", "three", "four"]);
        check("abcdefghij", 4, &["abcd", "efgh", "ij"]);
        check("a\n  b c d e f", 8, &["a", "  b c d", "e f"]);
        check(
            "第一句。第二句。第三句。",
            9,
            &["第一句。第二句。", "第三句。"],
        );
        // Thai: never between a consonant and its vowel or tone mark.
        check("กี่ที่", 3, &["กี่", "ที่"]);
        // A cluster longer than the limit is split as a last resort.
        check("กี่", 2, &["กี", "่"]);
        // A leading vowel stays with the consonant after it.
        check("เกเก", 3, &["เก", "เก"]);
        // Flags stay whole.
        check("🇹🇭🇨🇳", 4, &["🇹🇭", "🇨🇳"]);
        // An astral character with max 1 goes alone.
        check("😀😀", 1, &["😀", "😀"]);
    }

    #[test]
    fn lengths_are_counted_in_the_platforms_unit() {
        let rows = [
            ("a", 1, 2),
            ("中", 1, 6),
            ("🙂", 2, 8),
            ("👍🏽", 4, 16),
            ("<", 1, 5),
            ("&", 1, 6),
            ("\"", 1, 8),
            ("'", 1, 6),
            ("\\", 1, 4),
            ("\n", 1, 4),
            ("\u{1}", 1, 12),
        ];
        for (text, utf16, event_bytes) in rows {
            assert_eq!(Unit::Utf16.len(text), utf16, "{text:?}");
            assert_eq!(Unit::EventBytes.len(text), event_bytes, "{text:?}");
        }
        assert_eq!(
            split_message("中中中 中中", 18, Unit::EventBytes),
            ["中中中", "中中"]
        );
        assert_eq!(cut("🙂🙂🙂", 22, Unit::EventBytes), "🙂🙂…");
        assert_eq!(cut("🙂🙂🙂", 21, Unit::EventBytes), "🙂…");
    }

    #[test]
    fn cuts() {
        assert_eq!(cut("Staging", 10, Unit::Utf16), "Staging");
        assert_eq!(
            cut("Deploy to the staging cluster", 16, Unit::Utf16),
            "Deploy to the…"
        );
        assert_eq!(cut("abcdefghij", 5, Unit::Utf16), "abcd…");
        assert_eq!(cut("abc", 0, Unit::Utf16), "");
        assert_eq!(cut("abc", 1, Unit::Utf16), "…");
        assert_eq!(cut("ที่ที่ที่", 5, Unit::Utf16), "ที่…");
    }
}

//! An ask's context block as a chat shows it: credentials masked, a long
//! run of blank characters shown as one marker saying how long it was,
//! split line by line over messages that fit the platform, and past
//! [`MAX_CONTEXT_MESSAGES`] cut in the middle: the first messages show its
//! head, the last a marker saying how many characters are not shown, then
//! its tail — so what a padded command hides at its end is still seen.
//! Each [`Block`] is drawn as the platform's code block, posted before the
//! question.

use super::decide::Capabilities;
use super::locale::{Locale, fill};
use super::mask::mask_credentials;
use super::split::{Unit, fit_limit};
use crate::model::{Ask, ChannelKind, Context};

/// Most messages an ask's context takes in a chat.
pub const MAX_CONTEXT_MESSAGES: usize = 3;

/// Room kept in each message for the platform's code-block markup (fences,
/// a language name), in the platform's unit.
const MARKUP_RESERVE: usize = 64;

/// Least room a block has, in the platform's unit, however small the
/// platform's messages.
const MIN_BLOCK_LEN: usize = 200;

/// Longest run of blank characters (spaces, tabs, line breaks, invisible
/// spaces) a chat shows as it is; a longer one is shown as one marker.
const MAX_BLANK_RUN: usize = 40;

/// How far into the tail a cut may move to start it at a line.
const MAX_TAIL_SNAP: usize = 100;

/// One message's share of an ask's context, to draw as a code block.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Block {
    /// The lines, masked; at most the platform's message length less room
    /// for the markup, counted in the platform's unit.
    pub text: String,
    /// The context's language, for highlighting.
    pub language: Option<String>,
}

/// The ask's context for a channel with `caps`: no block when it has
/// none.
pub fn context_blocks(ask: &Ask, caps: &Capabilities, locale: Locale) -> Vec<Block> {
    ask.context
        .as_ref()
        .map(|context| blocks_of(context, caps, locale))
        .unwrap_or_default()
}

/// A context block (an ask's, a notice's) for a channel with `caps`: each
/// block fits its messages ([`Capabilities::max_text_len`], in its
/// [`Capabilities::unit`]).
pub fn blocks_of(context: &Context, caps: &Capabilities, locale: Locale) -> Vec<Block> {
    let shown = shown_text(&context.text, locale);
    layout(&shown, caps, locale)
        .0
        .into_iter()
        .map(|text| Block {
            text,
            language: context.language.clone(),
        })
        .collect()
}

/// Whether every chat shows `text`, as a context block, whole: no channel,
/// in no locale, cuts it to its head and tail. A hook says so on its
/// question when one would.
pub fn shown_whole_in_every_chat(text: &str) -> bool {
    Locale::ALL.into_iter().all(|locale| {
        let shown = shown_text(text, locale);
        ChannelKind::ALL
            .into_iter()
            .all(|channel| !layout(&shown, &Capabilities::for_channel(channel), locale).1)
    })
}

/// What a chat shows of a context's text: masked, long blank runs as
/// markers.
fn shown_text(text: &str, locale: Locale) -> String {
    collapse_blank_runs(&mask_credentials(text), locale)
}

/// The messages of a shown text, and whether its middle was cut.
fn layout(shown: &str, caps: &Capabilities, locale: Locale) -> (Vec<String>, bool) {
    let budget = caps
        .max_text_len
        .saturating_sub(MARKUP_RESERVE)
        .max(MIN_BLOCK_LEN);
    let unit = caps.unit;
    let ranges = pack(shown, budget, unit);
    if ranges.len() <= MAX_CONTEXT_MESSAGES {
        let messages = ranges
            .into_iter()
            .map(|(start, end)| shown[start..end].to_owned())
            .collect();
        return (messages, false);
    }
    let head = &ranges[..MAX_CONTEXT_MESSAGES - 1];
    let head_end = head.last().map_or(0, |(_, end)| *end);
    let mut messages: Vec<String> = head
        .iter()
        .map(|&(start, end)| shown[start..end].to_owned())
        .collect();
    let (last, cut) = tail_message(shown, head_end, budget, unit, locale);
    messages.push(last);
    (messages, cut)
}

/// Byte ranges of `text`, one a message of at most `budget` in `unit`:
/// whole lines while they fit, a line longer than a message split.
fn pack(text: &str, budget: usize, unit: Unit) -> Vec<(usize, usize)> {
    let newline = unit.len("\n");
    let mut ranges: Vec<(usize, usize)> = Vec::new();
    let mut current: Option<(usize, usize)> = None;
    let mut used = 0;
    let mut line_start = 0;
    for line in text.split('\n') {
        let mut rest = line;
        let mut at = line_start;
        loop {
            let (piece, after) = split_at_len(rest, budget, unit);
            let length = unit.len(piece) + newline;
            if used + length > budget
                && let Some(full) = current.take()
            {
                ranges.push(full);
                used = 0;
            }
            used += length;
            let end = at + piece.len();
            current = Some(current.map_or((at, end), |(start, _)| (start, end)));
            if after.is_empty() {
                break;
            }
            at = end;
            rest = after;
        }
        line_start += line.len() + 1;
    }
    ranges.extend(current);
    ranges
}

/// The last message of a cut text, at most `budget` in `unit`: a marker
/// saying how many characters are not shown, then as much of the text's
/// end as fits (starting at a line when one starts near the cut). Not cut
/// when the rest fits whole.
fn tail_message(
    text: &str,
    head_end: usize,
    budget: usize,
    unit: Unit,
    locale: Locale,
) -> (String, bool) {
    let rest = text[head_end..]
        .strip_prefix('\n')
        .unwrap_or(&text[head_end..]);
    let rest_start = text.len() - rest.len();
    if unit.len(rest) <= budget {
        return (rest.to_owned(), false);
    }
    let longest_marker = unit.len(&cut_marker(rest.chars().count(), locale));
    let room = budget
        .saturating_sub(longest_marker + unit.len("\n"))
        .max(1);
    let mut tail_start = tail_start(rest, room, unit);
    if let Some(newline) = rest[tail_start..].find('\n')
        && rest[tail_start..tail_start + newline].chars().count() < MAX_TAIL_SNAP
    {
        tail_start += newline + 1;
    }
    // The line break before a tail that starts at a line is not hidden.
    let hidden = rest[..tail_start].chars().count()
        - usize::from(tail_start > 0 && rest[..tail_start].ends_with('\n'));
    let marker = cut_marker(hidden, locale);
    let tail = &text[rest_start + tail_start..];
    (format!("{marker}\n{tail}"), true)
}

/// The line between a cut text's head and tail.
fn cut_marker(hidden: usize, locale: Locale) -> String {
    fill(locale.strings().context_cut, &[("n", &thousands(hidden))])
}

/// Whether a character shows as nothing: white space, and the invisible
/// spaces and joiners that pad as well as it does.
fn is_blank(c: char) -> bool {
    c.is_whitespace()
        || matches!(
            c,
            '\u{00AD}' | '\u{200B}'..='\u{200F}' | '\u{2060}' | '\u{2800}' | '\u{FEFF}'
        )
}

/// `text` with each run of more than [`MAX_BLANK_RUN`] blank characters
/// shown as one marker saying how many there were: on a line of its own
/// when the run held a line break, between spaces otherwise.
fn collapse_blank_runs(text: &str, locale: Locale) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find(is_blank) {
        out.push_str(&rest[..start]);
        let run = &rest[start..];
        let end = run.find(|c| !is_blank(c)).unwrap_or(run.len());
        let (blank, after) = run.split_at(end);
        let count = blank.chars().count();
        if count > MAX_BLANK_RUN {
            let marker = fill(locale.strings().context_blank, &[("n", &thousands(count))]);
            let edge = if blank.contains('\n') { "\n" } else { " " };
            out.push_str(edge);
            out.push_str(&marker);
            out.push_str(edge);
        } else {
            out.push_str(blank);
        }
        rest = after;
    }
    out.push_str(rest);
    out
}

/// A count with its thousands grouped: `12,345`.
fn thousands(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (at, digit) in digits.chars().enumerate() {
        if at > 0 && (digits.len() - at).is_multiple_of(3) {
            out.push(',');
        }
        out.push(digit);
    }
    out
}

/// `text` split after at most `max` in `unit`, and after one character
/// at least.
fn split_at_len(text: &str, max: usize, unit: Unit) -> (&str, &str) {
    let at = match fit_limit(text, max, unit) {
        0 => text.chars().next().map_or(0, char::len_utf8),
        at => at,
    };
    text.split_at(at)
}

/// Where the longest end of `text` that fits in `room` (in `unit`)
/// starts: a byte offset.
fn tail_start(text: &str, room: usize, unit: Unit) -> usize {
    let mut used = 0;
    for (at, c) in text.char_indices().rev() {
        used += unit.len(c.encode_utf8(&mut [0; 4]));
        if used > room {
            return at + c.len_utf8();
        }
    }
    0
}

#[cfg(test)]
mod tests {
    use super::thousands;

    #[test]
    fn counts_are_grouped_by_thousands() {
        let rows = [
            (0, "0"),
            (999, "999"),
            (1_000, "1,000"),
            (12_345, "12,345"),
            (1_234_567, "1,234,567"),
        ];
        for (n, text) in rows {
            assert_eq!(thousands(n), text);
        }
    }
}

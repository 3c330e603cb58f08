//! An ask's context block as a chat shows it: credentials masked, split
//! line by line over messages that fit the platform, and past
//! [`MAX_CONTEXT_MESSAGES`] cut with a visible marker saying how many
//! lines are not shown. Each [`Block`] is drawn as the platform's code
//! block, posted before the question.

use std::borrow::Cow;

use super::locale::{Locale, fill};
use super::mask::mask_credentials;
use crate::model::{Ask, Context};

/// Most messages an ask's context takes in a chat.
pub const MAX_CONTEXT_MESSAGES: usize = 3;

/// Room kept in each message for the platform's code-block markup (fences,
/// a language name, escapes).
const MARKUP_RESERVE: usize = 64;

/// Fewest characters a block holds, however small the platform's messages.
const MIN_BLOCK_CHARS: usize = 200;

/// One message's share of an ask's context, to draw as a code block.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Block {
    /// The lines, masked; at most the platform's message length less room
    /// for the markup.
    pub text: String,
    /// The context's language, for highlighting.
    pub language: Option<String>,
}

/// A piece of one line: the line's number, the text, and whether the line
/// ends here.
type Piece<'a> = (usize, Cow<'a, str>, bool);

/// The ask's context for a channel whose messages hold `max_text_chars`
/// characters: no block when it has none.
pub fn context_blocks(ask: &Ask, max_text_chars: usize, locale: Locale) -> Vec<Block> {
    ask.context
        .as_ref()
        .map(|context| blocks_of(context, max_text_chars, locale))
        .unwrap_or_default()
}

/// A context block (an ask's, a notice's) for a channel whose messages
/// hold `max_text_chars` characters.
pub fn blocks_of(context: &Context, max_text_chars: usize, locale: Locale) -> Vec<Block> {
    let text = mask_credentials(&context.text);
    let budget = max_text_chars
        .saturating_sub(MARKUP_RESERVE)
        .max(MIN_BLOCK_CHARS);
    let lines: Vec<&str> = text.lines().collect();
    let mut messages: Vec<Vec<Piece>> = vec![Vec::new()];
    let mut used = 0;
    for (number, line) in lines.iter().enumerate() {
        let mut rest = *line;
        loop {
            let (piece, after) = split_at_chars(rest, budget);
            let length = piece.chars().count() + 1;
            if used + length > budget && !messages.last().is_some_and(Vec::is_empty) {
                messages.push(Vec::new());
                used = 0;
            }
            used += length;
            if let Some(current) = messages.last_mut() {
                current.push((number, Cow::Borrowed(piece), after.is_empty()));
            }
            if after.is_empty() {
                break;
            }
            rest = after;
        }
    }
    if messages.len() > MAX_CONTEXT_MESSAGES {
        messages.truncate(MAX_CONTEXT_MESSAGES);
        cut_last(&mut messages, lines.len(), budget, locale);
    }
    messages
        .into_iter()
        .map(|pieces| Block {
            text: pieces
                .iter()
                .map(|(_, piece, _)| piece.as_ref())
                .collect::<Vec<_>>()
                .join("\n"),
            language: context.language.clone(),
        })
        .collect()
}

/// Ends the last message with the marker, dropping its last lines until
/// the marker fits.
fn cut_last(messages: &mut [Vec<Piece>], total_lines: usize, budget: usize, locale: Locale) {
    let Some(last) = messages.last_mut() else {
        return;
    };
    loop {
        let shown = match last.last() {
            Some((number, _, true)) => number + 1,
            Some((number, _, false)) => *number,
            None => 0,
        };
        let marker = fill(
            locale.strings().context_cut,
            &[("n", &(total_lines - shown).to_string())],
        );
        let used: usize = last
            .iter()
            .map(|(_, piece, _)| piece.chars().count() + 1)
            .sum();
        if used + marker.chars().count() <= budget || last.is_empty() {
            last.push((total_lines, Cow::Owned(marker), true));
            return;
        }
        last.pop();
    }
}

/// `text` split after at most `max` characters.
fn split_at_chars(text: &str, max: usize) -> (&str, &str) {
    match text.char_indices().nth(max) {
        Some((at, _)) => text.split_at(at),
        None => (text, ""),
    }
}

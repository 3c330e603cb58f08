//! Replies to a whole ask (docs/replies.md): keyed lines (`Q1: 2`, `1: 2`,
//! `deploy: staging`, `deploy_target = 1`) or one line per open question in
//! order. Answers given are returned; questions a reply does not address
//! are left out so the caller asks only for those again.

use super::option::OptionMatcher;
use super::{Resolution, lexicon, text};
use crate::model::Ask;

/// A whole ask, prepared for resolving replies that may address several
/// questions.
#[derive(Debug, Clone)]
pub struct AskMatcher {
    questions: Vec<PreparedQuestion>,
}

#[derive(Debug, Clone)]
struct PreparedQuestion {
    matcher: OptionMatcher,
    /// Folded forms a keyed line may name the question by.
    names: Vec<String>,
}

impl AskMatcher {
    /// Prepares every question of the ask.
    pub fn new(ask: &Ask) -> AskMatcher {
        let questions = ask
            .questions
            .iter()
            .map(|q| {
                let mut names = vec![text::fold(&q.id), text::fold(&q.id.replace('_', " "))];
                let header = text::fold(&q.header);
                if !header.is_empty() {
                    names.push(header);
                }
                names.dedup();
                PreparedQuestion {
                    matcher: OptionMatcher::for_question(q),
                    names,
                }
            })
            .collect();
        AskMatcher { questions }
    }

    /// The prepared matcher of one question.
    pub fn question(&self, index: usize) -> Option<&OptionMatcher> {
        self.questions.get(index).map(|q| &q.matcher)
    }

    /// Resolves a reply against the questions still open (indices into the
    /// ask's questions). Returns the questions the reply answered, in
    /// question order; open questions it did not address are absent.
    pub fn resolve(&self, reply: &str, open: &[usize]) -> Vec<(usize, Resolution)> {
        let whole = text::clean(reply);
        if lexicon::is_skip(&whole.norm) {
            return self
                .open(open)
                .iter()
                .map(|&q| (q, Resolution::Skip))
                .collect();
        }
        self.parts(reply, open)
            .into_iter()
            .map(|(q, text)| (q, self.questions[q].matcher.resolve(&text)))
            .collect()
    }

    /// The items of a reply that named no option, per question, where
    /// another item of the same answer did
    /// ([`OptionMatcher::unknown_items`]): `Q2: lint, deploy` → `[(1,
    /// ["deploy"])]`. Questions without such items are absent.
    pub fn unknown_items(&self, reply: &str, open: &[usize]) -> Vec<(usize, Vec<String>)> {
        self.parts(reply, open)
            .into_iter()
            .map(|(q, text)| (q, self.questions[q].matcher.unknown_items(&text)))
            .filter(|(_, items)| !items.is_empty())
            .collect()
    }

    /// The open questions, valid, sorted and unique.
    fn open(&self, open: &[usize]) -> Vec<usize> {
        let mut open: Vec<usize> = open
            .iter()
            .copied()
            .filter(|&i| i < self.questions.len())
            .collect();
        open.sort_unstable();
        open.dedup();
        open
    }

    /// The part of a reply each open question gets, in question order;
    /// questions the reply does not address are absent.
    fn parts(&self, reply: &str, open: &[usize]) -> Vec<(usize, String)> {
        let open = self.open(open);
        if open.is_empty() || text::clean(reply).norm.is_empty() {
            return Vec::new();
        }
        let cleaned = text::strip_artefacts(reply);
        let lines: Vec<&str> = cleaned
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .collect();

        let mut parts: Vec<(usize, String)> = self
            .keyed(&lines, &open)
            .unwrap_or_else(|| positional(&lines, &open))
            .into_iter()
            .filter(|(_, text)| !text.trim().is_empty())
            .collect();
        parts.sort_by_key(|(q, _)| *q);
        parts
    }

    /// Splits keyed lines; `None` when no line is keyed.
    fn keyed(&self, lines: &[&str], open: &[usize]) -> Option<Vec<(usize, String)>> {
        let mut parts: Vec<(usize, String)> = Vec::new();
        let mut unkeyed_before: Vec<&str> = Vec::new();
        let mut any = false;
        for line in lines {
            let segments = self.segments(line);
            if segments.is_empty() {
                match parts.last_mut() {
                    Some((_, text)) => {
                        text.push('\n');
                        text.push_str(line);
                    }
                    None => unkeyed_before.push(line),
                }
                continue;
            }
            any = true;
            for (question, answer) in segments {
                if open.contains(&question) {
                    match parts.iter_mut().find(|(q, _)| *q == question) {
                        Some((_, text)) => {
                            text.push('\n');
                            text.push_str(answer);
                        }
                        None => parts.push((question, answer.to_owned())),
                    }
                }
            }
        }
        if !any {
            return self.numbered(lines, open);
        }
        if !unkeyed_before.is_empty()
            && let Some(&first_free) = open.iter().find(|q| parts.iter().all(|(p, _)| p != *q))
        {
            parts.push((first_free, unkeyed_before.join("\n")));
        }
        Some(parts)
    }

    /// Lines numbered `1)` `2)` or `1.` `2.` in order, one per question:
    /// the numbers name questions, not options.
    fn numbered(&self, lines: &[&str], open: &[usize]) -> Option<Vec<(usize, String)>> {
        if lines.len() < 2 || lines.len() > self.questions.len() {
            return None;
        }
        let mut parts = Vec::new();
        for (expected, line) in (1..).zip(lines) {
            let digits = line.bytes().take_while(u8::is_ascii_digit).count();
            let number: usize = line[..digits].parse().ok()?;
            let rest = line[digits..].strip_prefix([')', '.'])?;
            if number != expected || rest.trim().is_empty() {
                return None;
            }
            if open.contains(&(number - 1)) {
                parts.push((number - 1, rest.trim().to_owned()));
            }
        }
        Some(parts)
    }

    /// The keyed segments of one line: `Q1: 2 Q2: 1,3` → [(0, "2"), (1, "1,3")].
    fn segments<'a>(&self, line: &'a str) -> Vec<(usize, &'a str)> {
        let mut markers: Vec<(usize, usize, usize)> = Vec::new(); // (start, end, question)
        if let Some((question, end)) = self.leading_key(line) {
            markers.push((0, end, question));
        }
        // Further `Q2` markers inside the line.
        let bytes = line.as_bytes();
        let mut i = markers.first().map_or(0, |m| m.1);
        while i < bytes.len() {
            let boundary = i == 0 || !bytes[i - 1].is_ascii_alphanumeric();
            if boundary && (bytes[i] == b'q' || bytes[i] == b'Q') {
                let digits = bytes[i + 1..]
                    .iter()
                    .take_while(|b| b.is_ascii_digit())
                    .count();
                let after = i + 1 + digits;
                let ends_word = bytes.get(after).is_none_or(|b| !b.is_ascii_alphanumeric());
                if digits > 0
                    && ends_word
                    && let Ok(n) = line[i + 1..after].parse::<usize>()
                    && (1..=self.questions.len()).contains(&n)
                {
                    let end = skip_separator(line, after);
                    markers.push((i, end, n - 1));
                    i = end;
                    continue;
                }
            }
            // In a keyed line, `2: nobody` or `notify: all` after a space,
            // `;` or `,` starts the next question's answer.
            let after_separator = i > 0 && matches!(bytes[i - 1], b' ' | b';' | b',');
            if !markers.is_empty()
                && after_separator
                && bytes[i] != b' '
                && let Some((question, end)) = self.inline_key(&line[i..])
            {
                markers.push((i, i + end, question));
                i += end;
                continue;
            }
            i += 1;
        }
        markers
            .iter()
            .enumerate()
            .map(|(k, &(_, end, question))| {
                let until = markers.get(k + 1).map_or(line.len(), |next| next.0);
                let answer = line[end..until]
                    .trim()
                    .trim_end_matches([',', ';', '，', '；']);
                (question, answer.trim())
            })
            .collect()
    }

    /// A key inside a keyed line: a question number, id or header directly
    /// followed by `:` or `=` and a space.
    fn inline_key(&self, rest: &str) -> Option<(usize, usize)> {
        let at = rest.find([':', '=', '：'])?;
        let key = rest[..at].trim_end();
        let mut from_separator = rest[at..].chars();
        let separator = from_separator.next();
        // "10:30" is a time, not question 10: a colon needs a space after it.
        let spaced =
            separator == Some('=') || from_separator.next().is_some_and(char::is_whitespace);
        if key.is_empty() || key.contains(' ') || !spaced {
            return None;
        }
        self.leading_key(rest)
    }

    /// A key at the start of a line: `Q1`, `Question 1`, `1:`, `deploy:`,
    /// `deploy_target =`. Returns the question and where its answer starts.
    fn leading_key(&self, line: &str) -> Option<(usize, usize)> {
        let lower = line.to_ascii_lowercase();
        for prefix in ["question ", "question", "q "] {
            if let Some(rest) = lower.strip_prefix(prefix) {
                let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
                if digits > 0
                    && let Ok(n) = rest[..digits].parse::<usize>()
                    && (1..=self.questions.len()).contains(&n)
                {
                    let after = prefix.len() + digits;
                    if line[after..].starts_with(|c: char| c.is_alphanumeric()) {
                        continue;
                    }
                    return Some((n - 1, skip_separator(line, after)));
                }
            }
        }
        let (key, after) = split_key(line)?;
        let key_folded = text::fold(key.trim());
        if let Ok(n) = key_folded.trim_start_matches('#').parse::<usize>() {
            return (1..=self.questions.len())
                .contains(&n)
                .then(|| (n - 1, after));
        }
        let key_folded = key_folded
            .trim_start_matches(['*', '_'])
            .trim_end_matches(['*', '_']);
        self.questions
            .iter()
            .position(|q| q.names.iter().any(|name| name == key_folded))
            .map(|q| (q, after))
    }
}

/// `key: answer` / `key = answer` / `key：answer`: the key and where the
/// answer starts.
fn split_key(line: &str) -> Option<(&str, usize)> {
    let at = line.find([':', '=', '：'])?;
    let key = &line[..at];
    if key.trim().is_empty() || key.chars().count() > 40 {
        return None;
    }
    let sep_len = line[at..].chars().next().map_or(1, char::len_utf8);
    Some((key, at + sep_len))
}

/// Skips `:`, `=`, `)`, `.`, `-` and spaces after a key.
fn skip_separator(line: &str, from: usize) -> usize {
    let rest = &line[from..];
    let trimmed = rest.trim_start_matches([' ', ':', '：', '=', ')', '.', '-', '—', '\t']);
    from + (rest.len() - trimmed.len())
}

/// One line per open question, in order.
fn positional(lines: &[&str], open: &[usize]) -> Vec<(usize, String)> {
    if open.len() == 1 {
        return vec![(open[0], lines.join("\n"))];
    }
    if let [line] = lines {
        let parts: Vec<&str> = line.split([';', '；', '|']).map(str::trim).collect();
        if parts.len() == open.len() {
            return open
                .iter()
                .zip(parts)
                .map(|(&q, part)| (q, part.to_owned()))
                .collect();
        }
    }
    let mut parts: Vec<(usize, String)> = open
        .iter()
        .zip(lines)
        .map(|(&q, line)| (q, (*line).to_owned()))
        .collect();
    if lines.len() > open.len()
        && let Some((_, last)) = parts.last_mut()
    {
        for line in &lines[open.len()..] {
            last.push('\n');
            last.push_str(line);
        }
    }
    parts
}

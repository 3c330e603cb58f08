//! One question's reply resolution (docs/replies.md).
//!
//! The labels are folded and tokenised once in [`OptionMatcher::new`];
//! [`OptionMatcher::resolve`] then only works on the reply.

use super::Resolution;
use super::lexicon::{self, Position};
use super::text::{self, Cleaned, Kind, Token};
use crate::model::{Question, QuestionKind};

/// How many words a reply may carry besides the label it names
/// ("production for now please" → production) before it counts as the
/// person's own words.
const MAX_LEFTOVER_WORDS: usize = 3;

/// One question's options, prepared for resolving replies.
#[derive(Debug, Clone)]
pub struct OptionMatcher {
    mode: Mode,
    letters: bool,
    options: Vec<Prepared>,
    /// The option marked as recommended, which "recommended" or "the
    /// default" names.
    recommended: Option<usize>,
    /// The options that are plainly yes and no, when both exist.
    yes_no: Option<(usize, usize)>,
    /// Some label has a number among its words ("Python 3"), so a number
    /// in a reply may be a label reading as well as an index.
    numeric_labels: bool,
    /// Folded words of the question text and header: a reply may repeat them
    /// ("deploy to prod") without them counting against a match.
    context_words: Vec<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    Single,
    Multi,
    Confirm,
    FreeText,
}

/// One option's label in every form the resolver compares.
#[derive(Debug, Clone)]
struct Prepared {
    /// Folded label without "(Recommended)".
    folded: String,
    /// Token key ([`text::key_of`]).
    key: String,
    /// The label without a leading enumerator ("A. Postgres" → "postgres").
    alias: Option<String>,
    /// Tokens of the label.
    words: Vec<String>,
    /// Key without spaces, for substring matching in spaceless scripts.
    compact: String,
    /// The label is written in a spaceless script.
    script: bool,
    /// Words of the description, the weakest evidence.
    description_words: Vec<String>,
}

impl Prepared {
    fn new(label: &str, description: Option<&str>) -> Prepared {
        let (folded, _) =
            text::clean_folded(text::fold(crate::model::strip_recommended_marker(label)));
        let tokens = text::tokenize(&folded);
        let key = text::key_of(&tokens);
        let alias = match tokens.as_slice() {
            [first, rest @ ..]
                if !rest.is_empty()
                    && (first.kind == Kind::Number || first.text.chars().count() == 1)
                    && text::after(&folded, first).starts_with(['.', ')', ':', ' ']) =>
            {
                Some(text::key_of(rest))
            }
            _ => None,
        };
        let words: Vec<String> = tokens.iter().map(|t| t.text.to_owned()).collect();
        let compact: String = words.concat();
        let script = tokens.iter().any(|t| t.kind == Kind::Script);
        let description_words = description
            .map(|d| {
                let folded = text::fold(d);
                text::tokenize(&folded)
                    .iter()
                    .filter(|t| t.text.chars().count() >= 3 && !lexicon::is_filler(t.text))
                    .map(|t| t.text.to_owned())
                    .collect()
            })
            .unwrap_or_default();
        Prepared {
            folded,
            key,
            alias,
            words,
            compact,
            script,
            description_words,
        }
    }

    fn all_filler(&self) -> bool {
        self.words.iter().all(|w| lexicon::is_filler(w))
    }
}

/// A reply read as a list of picks.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Listed<'a> {
    /// Not a list: one item, or words that do not all pick.
    NotAList,
    /// Every item names options (or a range of them), in reply order.
    Picks(Vec<usize>),
    /// Some item names no option, or is a range that is not one: the
    /// whole reply is the person's own words.
    Refused {
        /// The items that name nothing, folded.
        unknown: Vec<&'a str>,
        /// Another item did name an option.
        named: bool,
    },
}

/// A choice reply as read, before it becomes a [`Resolution`].
#[derive(Debug, Clone, PartialEq, Eq)]
enum Read<'a> {
    /// Resolved.
    Resolved(Resolution),
    /// A list where some items named options and these (folded) named
    /// none: the person's own words, and the chat may ask about them.
    Unknown(Vec<&'a str>),
}

/// An item read as a range of options.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Range {
    /// Not written as a range.
    Absent,
    /// Every option of the range, in order.
    Picks(std::ops::RangeInclusive<usize>),
    /// Written as a range, but reversed or past the options.
    Invalid,
}

/// What one item of a reply names.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Pick {
    /// Exactly this option.
    One(usize),
    /// Several labels are named outright: a list for a multi-select question,
    /// ambiguous for a single-select one.
    Several(Vec<usize>),
    /// Several options fit equally.
    Ambiguous(Vec<usize>),
    /// Names no option.
    Nothing,
}

impl OptionMatcher {
    /// Prepares a plain option list (the `resolve --jsonl` form).
    pub fn new(labels: &[&str], multi: bool, letters: bool) -> OptionMatcher {
        OptionMatcher::prepared(
            if multi { Mode::Multi } else { Mode::Single },
            letters,
            labels.iter().map(|l| Prepared::new(l, None)).collect(),
            labels
                .iter()
                .position(|l| crate::model::has_recommended_marker(l)),
            Vec::new(),
        )
    }

    /// Prepares a question: choice questions by their labels, confirm as
    /// yes/no (index 0 = yes, 1 = no), text questions as free text.
    pub fn for_question(question: &Question) -> OptionMatcher {
        let mode = match question.kind {
            QuestionKind::Single => Mode::Single,
            QuestionKind::Multi => Mode::Multi,
            QuestionKind::Confirm => Mode::Confirm,
            QuestionKind::Text | QuestionKind::Textarea => Mode::FreeText,
        };
        let options = match mode {
            Mode::Confirm => vec![Prepared::new("yes", None), Prepared::new("no", None)],
            Mode::FreeText => Vec::new(),
            Mode::Single | Mode::Multi => question
                .options
                .iter()
                .map(|o| Prepared::new(&o.label, o.description.as_deref()))
                .collect(),
        };
        let context = text::fold(&format!("{} {}", question.header, question.text));
        let context_words = text::tokenize(&context)
            .iter()
            .filter(|t| t.kind == Kind::Word && !lexicon::is_filler(t.text))
            .map(|t| t.text.to_owned())
            .collect();
        let recommended = match mode {
            Mode::Single | Mode::Multi => question.options.iter().position(|o| o.recommended),
            Mode::Confirm | Mode::FreeText => None,
        };
        OptionMatcher::prepared(mode, question.letters, options, recommended, context_words)
    }

    fn prepared(
        mode: Mode,
        letters: bool,
        options: Vec<Prepared>,
        recommended: Option<usize>,
        context_words: Vec<String>,
    ) -> OptionMatcher {
        let numeric_labels = options
            .iter()
            .flat_map(|o| &o.words)
            .any(|w| w.bytes().any(|b| b.is_ascii_digit()));
        let plain = |test: fn(&str) -> bool| {
            options
                .iter()
                .position(|o| o.words.len() == 1 && test(&o.words[0]))
        };
        let yes_no = match mode {
            Mode::Single => plain(lexicon::is_yes).zip(plain(lexicon::is_no)),
            Mode::Multi | Mode::Confirm | Mode::FreeText => None,
        };
        OptionMatcher {
            mode,
            letters,
            options,
            recommended,
            yes_no,
            numeric_labels,
            context_words,
        }
    }

    /// Resolves one reply to this question.
    pub fn resolve(&self, reply: &str) -> Resolution {
        let cleaned = text::clean(reply);
        self.resolve_cleaned(&cleaned)
    }

    /// [`OptionMatcher::resolve`], with the reply as it is shown
    /// ([`super::clean_reply`]), cleaned once for both.
    pub fn resolve_shown(&self, reply: &str) -> (Resolution, String) {
        let cleaned = text::clean(reply);
        let resolution = self.resolve_cleaned(&cleaned);
        (resolution, cleaned.display)
    }

    /// The items of a list reply that name no option, as typed, when
    /// another item of the same reply did name one: `lint, deploy` →
    /// `["deploy"]`. Such a reply resolves to [`Resolution::FreeText`]
    /// (nothing is dropped silently), and a chat can ask about these items
    /// ([`crate::render::unknown_items_prompt`]). Empty for every other
    /// reply, and for confirm and text questions.
    pub fn unknown_items(&self, reply: &str) -> Vec<String> {
        if !matches!(self.mode, Mode::Single | Mode::Multi) {
            return Vec::new();
        }
        let cleaned = text::clean(reply);
        match self.read_choice(&cleaned, &cleaned.norm) {
            Read::Unknown(items) => {
                let typed = typed_items(&cleaned.display);
                items
                    .iter()
                    .map(|item| {
                        typed
                            .iter()
                            .find(|t| text::clean_folded(text::fold(t)).0 == *item)
                            .map_or_else(|| (*item).to_owned(), |t| (*t).to_owned())
                    })
                    .collect()
            }
            Read::Resolved(_) => Vec::new(),
        }
    }

    pub(crate) fn resolve_cleaned(&self, reply: &Cleaned) -> Resolution {
        match self.mode {
            Mode::FreeText => {
                if lexicon::is_skip(&reply.norm) {
                    Resolution::Skip
                } else {
                    Resolution::FreeText(reply.display.clone())
                }
            }
            Mode::Confirm => self.resolve_confirm(reply),
            Mode::Single | Mode::Multi => self.resolve_choice(reply),
        }
    }

    /// The reply as the person's own words.
    pub(crate) fn free_text(reply: &Cleaned) -> Resolution {
        Resolution::FreeText(reply.display.clone())
    }

    fn resolve_confirm(&self, reply: &Cleaned) -> Resolution {
        self.resolve_yes_no(reply, &reply.norm, 0, 1)
    }

    /// A yes/no reading of a reply (`norm`: its folded text, or the part
    /// after a correction), picking `yes` or `no` (option indices).
    fn resolve_yes_no(&self, reply: &Cleaned, norm: &str, yes: usize, no: usize) -> Resolution {
        if lexicon::is_yes(norm) {
            return Resolution::Choice(yes);
        }
        if lexicon::is_no(norm) {
            return Resolution::Choice(no);
        }
        if lexicon::is_skip(norm) {
            return Resolution::Skip;
        }
        let tokens = text::tokenize(norm);
        // "yes, actually no": the last answer wins.
        if let Some((before, after)) = self.correction(norm, &tokens)
            && let Resolution::Choice(_) = self.resolve_yes_no(reply, before, yes, no)
        {
            return self.resolve_yes_no(reply, after, yes, no);
        }
        if self.is_hedged(&tokens) || self.is_question(reply, norm, &tokens) {
            return Self::free_text(reply);
        }
        let head = cut_justification(norm, &tokens);
        let head_tokens = text::tokenize(head);
        if head_tokens.iter().any(|t| lexicon::is_condition(t.text)) {
            return Self::free_text(reply);
        }
        // "yes, go ahead", "definitely not", "nope, not yet": every word is a
        // yes-word, a no-word or filler; a no-word outweighs "definitely".
        let is_no = |w: &str| lexicon::is_no(w) || lexicon::is_negation(w) || w == "yet";
        let mut says_yes = false;
        let mut says_no = false;
        let mut plain_yes = false;
        for token in &head_tokens {
            let w = match token.kind {
                Kind::Script => lexicon::strip_script_affixes(token.text),
                _ => token.text,
            };
            if is_no(w) {
                says_no = true;
            } else if lexicon::is_yes(w) {
                says_yes = true;
                plain_yes |= !matches!(w, "definitely" | "absolutely" | "certainly" | "sure");
            } else if !lexicon::is_filler(w) {
                says_yes = false;
                says_no = false;
                break;
            }
        }
        // "yes and no" says both: the person's own words.
        let (says_yes, says_no) = match (says_yes, says_no) {
            (true, true) if plain_yes => (false, false),
            (yes, no) => (yes && !no, no),
        };
        match (says_yes, says_no) {
            (true, false) => Resolution::Choice(yes),
            (false, true) => Resolution::Choice(no),
            _ => match self.pick(head) {
                Pick::One(i) => Resolution::Choice(i),
                _ => Self::free_text(reply),
            },
        }
    }

    fn resolve_choice(&self, reply: &Cleaned) -> Resolution {
        match self.read_choice(reply, &reply.norm) {
            Read::Resolved(resolution) => resolution,
            Read::Unknown(_) => Self::free_text(reply),
        }
    }

    /// Resolves a reply to a choice question, keeping the items of a list
    /// that named no option.
    /// `norm` is the reply's folded text, or the part of it after a
    /// correction.
    fn read_choice<'a>(&self, reply: &Cleaned, norm: &'a str) -> Read<'a> {
        let multi = self.mode == Mode::Multi;
        let one = |i: usize| {
            if multi {
                Resolution::Choices(vec![i])
            } else {
                Resolution::Choice(i)
            }
        };
        // The most common reply, a bare number, when no label has numbers.
        if !self.numeric_labels
            && !norm.is_empty()
            && norm.len() <= 3
            && norm.bytes().all(|b| b.is_ascii_digit())
        {
            return Read::Resolved(
                match lexicon::position(norm, false).and_then(|p| p.index(self.options.len())) {
                    Some(i) => one(i),
                    None => Self::free_text(reply),
                },
            );
        }
        let tokens = text::tokenize(norm);
        if let Some(i) = self.exact_with(norm, &tokens) {
            return Read::Resolved(one(i));
        }
        if lexicon::is_skip(norm) {
            return Read::Resolved(Resolution::Skip);
        }
        // "1, actually 2": the last pick wins; a list after a correction
        // replaces the list before it.
        if let Some((before, after)) = self.correction(norm, &tokens)
            && matches!(
                self.read_choice(reply, before),
                Read::Resolved(
                    Resolution::Choice(_) | Resolution::Choices(_) | Resolution::Ambiguous(_)
                )
            )
        {
            return self.read_choice(reply, after);
        }
        if self.is_hedged(&tokens) {
            return Read::Resolved(Self::free_text(reply));
        }
        // Options "Yes" and "No" read like a confirm question ("nah, not now").
        if !multi
            && let Some((yes, no)) = self.yes_no
            && let Resolution::Choice(i) = self.resolve_yes_no(reply, norm, yes, no)
        {
            return Read::Resolved(one(i));
        }
        if let Some(all) = self.all_of(norm, &tokens) {
            // "both" picks every option: a list for multi-select, several
            // picks (so ambiguous) for single-select (docs/replies.md).
            return Read::Resolved(match all {
                Resolution::Choices(v) if !multi => Resolution::Ambiguous(v),
                // "all except all three": the words as typed, not folded.
                Resolution::FreeText(_) => Self::free_text(reply),
                other => other,
            });
        }
        if self.is_question(reply, norm, &tokens) || self.is_negated(&tokens) {
            return Read::Resolved(Self::free_text(reply));
        }
        let head = cut_justification(norm, &tokens);
        if tokens
            .iter()
            .take_while(|t| text::before(norm, t, 0).len() < head.len())
            .any(|t| lexicon::is_condition(t.text) && !self.is_label_word(t.text))
        {
            return Read::Resolved(Self::free_text(reply));
        }
        // A single word is no list.
        let one_word = match tokens.as_slice() {
            [] => true,
            [only] => !(only.kind == Kind::Script && only.text.contains(['和', '跟', '与', '及'])),
            _ => false,
        };
        let list = if one_word {
            Listed::NotAList
        } else if head.len() == norm.len() {
            self.read_list(norm, &tokens)
        } else {
            self.read_list(head, &text::tokenize(head))
        };
        match list {
            Listed::Picks(picks) if multi => {
                return Read::Resolved(Resolution::Choices(sorted(picks)));
            }
            Listed::Picks(picks) => {
                let picks = sorted(picks);
                return Read::Resolved(match picks.as_slice() {
                    [one] => Resolution::Choice(*one),
                    _ => Resolution::Ambiguous(picks),
                });
            }
            Listed::Refused {
                unknown,
                named: true,
            } => return Read::Unknown(unknown),
            Listed::Refused { named: false, .. } => return Read::Resolved(Self::free_text(reply)),
            Listed::NotAList => {}
        }
        let picked = if head.len() == norm.len() {
            self.pick_with(norm, &tokens)
        } else {
            self.pick(head)
        };
        Read::Resolved(match picked {
            Pick::One(i) if multi => Resolution::Choices(vec![i]),
            Pick::One(i) => Resolution::Choice(i),
            Pick::Several(v) if multi => Resolution::Choices(v),
            Pick::Several(v) | Pick::Ambiguous(v) => Resolution::Ambiguous(v),
            Pick::Nothing => Self::free_text(reply),
        })
    }

    /// "all", "both", "all except 2".
    fn all_of(&self, norm: &str, tokens: &[Token<'_>]) -> Option<Resolution> {
        let everything = || (0..self.options.len()).collect::<Vec<_>>();
        if lexicon::is_all(norm)
            || (tokens.len() > 1
                && tokens
                    .iter()
                    .all(|t| lexicon::is_filler(t.text) || lexicon::is_all(t.text))
                && tokens.iter().any(|t| lexicon::is_all(t.text)))
        {
            return Some(Resolution::Choices(everything()));
        }
        let starts_with_all = tokens
            .first()
            .is_some_and(|t| lexicon::is_all(t.text) || t.text == "select");
        if !starts_with_all && !norm.starts_with(['全', '都', 'ท']) {
            return None;
        }
        for marker in [
            " except ",
            " but ",
            " besides ",
            " other than ",
            " minus ",
            "除了",
            "除",
        ] {
            let Some(at) = norm.find(marker) else {
                continue;
            };
            let (head, rest) = (&norm[..at], &norm[at + marker.len()..]);
            let head = head.trim_end_matches([',', ' ']);
            if !(lexicon::is_all(head) || lexicon::is_all(head.trim_start_matches("select "))) {
                continue;
            }
            let rest = ["都要", "都", "全要", "以外", "之外"]
                .iter()
                .fold(rest, |r, suffix| r.strip_suffix(suffix).unwrap_or(r))
                .trim();
            let excluded = self.pick_list(rest).or_else(|| match self.pick(rest) {
                Pick::One(i) => Some(vec![i]),
                Pick::Several(v) => Some(v),
                _ => None,
            })?;
            let kept: Vec<usize> = everything()
                .into_iter()
                .filter(|i| !excluded.contains(i))
                .collect();
            return Some(if kept.is_empty() {
                Resolution::FreeText(norm.to_owned())
            } else {
                Resolution::Choices(kept)
            });
        }
        None
    }

    /// A reply that asks something back ("can you explain 2?").
    fn is_question(&self, reply: &Cleaned, norm: &str, tokens: &[Token<'_>]) -> bool {
        let content = tokens
            .iter()
            .filter(|t| !lexicon::is_filler(t.text))
            .count();
        if reply.question_mark && (content >= 2 || tokens.len() >= 3) {
            return true;
        }
        if let [first, second, ..] = tokens {
            let opener = lexicon::is_question_start(first.text)
                && !self.is_label_word(first.text)
                && match first.text {
                    "can" | "could" | "would" | "does" | "do" | "is" | "are" | "will" => matches!(
                        second.text,
                        "you" | "i" | "we" | "it" | "this" | "that" | "there" | "they" | "u"
                    ),
                    _ => true,
                };
            if opener {
                return true;
            }
        }
        tokens.iter().any(|t| t.kind == Kind::Script)
            && lexicon::has_question_marker(norm)
            && !self
                .options
                .iter()
                .any(|o| o.script && norm.contains(&o.compact))
    }

    /// A reply that hedges or says something else as a whole (docs/replies.md):
    /// a hedge word ("maybe", "idk"), an idiom that starts like an answer
    /// ("no clue", "never mind", "not sure"), a hedge phrase ("let me
    /// think", "it depends"), and in Chinese and Thai a hedge or a "but"
    /// inside a run ("不知道", "是的，但是…", "ไม่แน่ใจ", "ใช่ แต่…"). Words of
    /// the labels do not count: an option may be called "Maybe".
    fn is_hedged(&self, tokens: &[Token<'_>]) -> bool {
        for (i, token) in tokens.iter().enumerate() {
            match token.kind {
                Kind::Word => {
                    let hedged = lexicon::is_hedge(token.text)
                        || (i > 0 && lexicon::is_idiom(tokens[i - 1].text, token.text))
                        || (lexicon::may_start_phrase(token.text) && {
                            let words: Vec<&str> =
                                tokens[i..].iter().take(4).map(|t| t.text).collect();
                            lexicon::hedge_phrase_at(&words).is_some()
                        });
                    if hedged && !self.is_label_word(token.text) {
                        return true;
                    }
                }
                Kind::Script => {
                    let in_label = |part: &str| {
                        self.options
                            .iter()
                            .any(|o| o.script && o.compact.contains(part))
                    };
                    if lexicon::script_hedge_in(token.text).is_some_and(|h| !in_label(h)) {
                        return true;
                    }
                    if lexicon::has_script_condition(token.text) && !in_label(token.text) {
                        return true;
                    }
                }
                Kind::Number | Kind::Decimal | Kind::Symbol => {}
            }
        }
        false
    }

    /// A correction between picks ("1, actually 2", "2, no wait, 3", "红色，
    /// 我是说蓝色", "ข้อ 1 ไม่ใช่ ข้อ 2"): the reply before the first
    /// correction and after the last, both non-empty. Correction words that
    /// are words of a label ("Wait for CI") do not count.
    fn correction<'a>(&self, norm: &'a str, tokens: &[Token<'_>]) -> Option<(&'a str, &'a str)> {
        let base = norm.as_ptr() as usize;
        let offset = |token: &Token<'_>| (token.text.as_ptr() as usize).saturating_sub(base);
        let mut first: Option<usize> = None;
        let mut last: Option<usize> = None;
        let mut mark = |start: usize, end: usize| {
            first = Some(first.map_or(start, |f| f.min(start)));
            last = Some(last.map_or(end, |l| l.max(end)));
        };
        for (i, token) in tokens.iter().enumerate() {
            match token.kind {
                Kind::Word if lexicon::may_start_phrase(token.text) => {
                    let words: Vec<&str> = tokens[i..].iter().take(4).map(|t| t.text).collect();
                    if let Some(len) = lexicon::correction_at(&words)
                        && !words[..len].iter().any(|w| self.is_label_word(w))
                    {
                        let end = &tokens[i + len - 1];
                        mark(offset(token), offset(end) + end.text.len());
                    }
                }
                Kind::Script => {
                    for (start, end) in lexicon::script_corrections_in(token.text) {
                        let marker = &token.text[start..end];
                        if !self
                            .options
                            .iter()
                            .any(|o| o.script && o.compact.contains(marker))
                        {
                            mark(offset(token) + start, offset(token) + end);
                        }
                    }
                }
                _ => {}
            }
        }
        let separators: &[char] = &[' ', ',', ';', '，', '、', '；', '\n', '-', '—', '.', '…'];
        let before = norm.get(..first?)?.trim_matches(separators);
        let after = norm.get(last?..)?.trim_matches(separators);
        (!before.is_empty() && !after.is_empty()).then_some((before, after))
    }

    /// A reply that rules something out ("not production").
    fn is_negated(&self, tokens: &[Token<'_>]) -> bool {
        tokens.iter().any(|t| match t.kind {
            Kind::Word => lexicon::is_negation(t.text) && !self.is_label_word(t.text),
            Kind::Script => {
                lexicon::starts_with_script_negation(lexicon::strip_script_affixes(t.text))
                    && !self
                        .options
                        .iter()
                        .any(|o| o.script && o.compact.contains(t.text))
                    && !lexicon::is_no(t.text)
            }
            _ => false,
        })
    }

    /// Whether `word` is a word of some label (a handful of options with a
    /// few words each: a scan, no set to build for every question).
    fn is_label_word(&self, word: &str) -> bool {
        self.options
            .iter()
            .any(|o| o.words.iter().any(|w| w == word))
    }

    /// The option whose label the (tokenised) reply is, exactly.
    fn exact_with(&self, norm: &str, tokens: &[Token<'_>]) -> Option<usize> {
        if let Some(i) = self.options.iter().position(|o| o.folded == norm) {
            return Some(i);
        }
        if tokens.is_empty() {
            return None;
        }
        let by_key = self.unique(|o| {
            text::is_key_of(&o.key, tokens, " ")
                || o.alias
                    .as_deref()
                    .is_some_and(|a| text::is_key_of(a, tokens, " "))
        });
        by_key
            .or_else(|| self.unique(|o| text::is_key_of(&o.compact, tokens, "")))
            .or_else(|| {
                // "y" / "nope" for options that start with Yes / No.
                let first_word = |o: &Prepared, yes: bool| {
                    o.words.first().is_some_and(|w| {
                        if yes {
                            lexicon::is_yes(w)
                        } else {
                            lexicon::is_no(w)
                        }
                    })
                };
                if lexicon::is_yes(norm) {
                    self.unique(|o| first_word(o, true))
                } else if lexicon::is_no(norm) {
                    self.unique(|o| first_word(o, false))
                } else {
                    None
                }
            })
    }

    /// The only option that satisfies `test`.
    fn unique(&self, test: impl Fn(&Prepared) -> bool) -> Option<usize> {
        let mut found = self.options.iter().enumerate().filter(|(_, o)| test(o));
        match (found.next(), found.next()) {
            (Some((i, _)), None) => Some(i),
            _ => None,
        }
    }

    /// Splits a reply into list items and picks each; `None` when it is not
    /// a list whose every item names options.
    fn pick_list(&self, norm: &str) -> Option<Vec<usize>> {
        match self.read_list(norm, &text::tokenize(norm)) {
            Listed::Picks(picks) => Some(picks),
            Listed::NotAList | Listed::Refused { .. } => None,
        }
    }

    /// Reads a reply as a list of picks (docs/replies.md): items separated by
    /// `,` `;` `，` `、` new lines, "and", "&", "+", "or"…, each naming
    /// options or a range of them; or, without separators, every word a
    /// pick ("1 3", "a c").
    fn read_list<'a>(&self, norm: &'a str, tokens: &[Token<'_>]) -> Listed<'a> {
        if let Some(span) = self.first_or_last(tokens) {
            return Listed::Picks(span);
        }
        let items = split_list(norm);
        if let [only] = items.as_slice() {
            return match self.range(only) {
                Range::Picks(range) => Listed::Picks(range.collect()),
                Range::Invalid => Listed::Refused {
                    unknown: vec![only],
                    named: false,
                },
                Range::Absent => self.read_words_as_list(tokens),
            };
        }
        let mut picks = Vec::new();
        let mut unknown = Vec::new();
        for item in items {
            match self.range(item) {
                Range::Picks(range) => {
                    picks.extend(range);
                    continue;
                }
                Range::Invalid => {
                    unknown.push(item);
                    continue;
                }
                Range::Absent => {}
            }
            match self.pick(item) {
                Pick::One(i) => picks.push(i),
                Pick::Nothing => {
                    // "1 2" inside "1 2 and 3": an item of several picks;
                    // "please" alone names nothing and drops nothing.
                    let tokens = text::tokenize(item);
                    let mut content = tokens.iter().filter(|t| !self.is_filler_token(t));
                    let before = picks.len();
                    let mut named = true;
                    for token in content.by_ref() {
                        match self.pick(token.text) {
                            Pick::One(i) => picks.push(i),
                            _ => {
                                named = false;
                                break;
                            }
                        }
                    }
                    if !named {
                        picks.truncate(before);
                        unknown.push(item);
                    }
                }
                Pick::Several(_) | Pick::Ambiguous(_) => return Listed::NotAList,
            }
        }
        if !unknown.is_empty() {
            // Nothing is dropped silently (docs/replies.md): an item that names no
            // option makes the whole reply the person's own words.
            return Listed::Refused {
                unknown,
                named: !picks.is_empty(),
            };
        }
        if picks.is_empty() {
            Listed::NotAList
        } else {
            Listed::Picks(picks)
        }
    }

    /// "1 3", "a c", "team nobody": a list without separators, read only
    /// when every word picks an option.
    fn read_words_as_list<'a>(&self, tokens: &[Token<'_>]) -> Listed<'a> {
        let content: Vec<&Token<'_>> = tokens
            .iter()
            .filter(|t| {
                // Here a filler that is also a label ("Go") stays a filler:
                // "let's go with rust" is not a list.
                let shown_letter =
                    self.letters && lexicon::letter(t.text).is_some_and(|i| i < self.options.len());
                shown_letter
                    || !(self.is_filler_token(t)
                        || lexicon::is_filler(t.text)
                        || lexicon::LIST_WORDS.contains(&t.text))
            })
            .collect();
        if content.len() < 2 || content.len() > self.options.len() {
            return Listed::NotAList;
        }
        let mut picks = Vec::with_capacity(content.len());
        for token in content {
            match self.pick(token.text) {
                Pick::One(i) => picks.push(i),
                _ => return Listed::NotAList,
            }
        }
        Listed::Picks(picks)
    }

    /// "the first two", "last 3": a run of options at one end.
    fn first_or_last(&self, tokens: &[Token<'_>]) -> Option<Vec<usize>> {
        if tokens.len() < 2 {
            return None;
        }
        let content: Vec<&str> = tokens
            .iter()
            .filter(|t| !self.is_filler_token(t) || t.text == "one")
            .map(|t| t.text)
            .collect();
        let [end, count] = content.as_slice() else {
            return None;
        };
        let count = match lexicon::position(count, true)? {
            Position::Nth(n) if (2..=self.options.len()).contains(&n) => n,
            _ => return None,
        };
        let total = self.options.len();
        match *end {
            "first" | "top" => Some((0..count).collect()),
            "last" | "bottom" => Some((total - count..total).collect()),
            _ => None,
        }
    }

    /// "2-4", "2–4", "2 to 4", "2~4", "2到4", "2至4", "2 ถึง 4": every
    /// option from the first number to the second. A reversed range or one
    /// past the options is not a pick. Where labels carry numbers, a range
    /// that names a label ("2-4" for "2-4 weeks") is that label instead.
    fn range(&self, item: &str) -> Range {
        // Two numbers with something between them, or no range at all.
        let bytes = item.as_bytes();
        let Some(first) = bytes.iter().position(u8::is_ascii_digit) else {
            return Range::Absent;
        };
        let Some(gap) = bytes[first..].iter().position(|b| !b.is_ascii_digit()) else {
            return Range::Absent;
        };
        if !bytes[first + gap..].iter().any(u8::is_ascii_digit) {
            return Range::Absent;
        }
        let tokens = text::tokenize(item);
        let mut content = tokens
            .iter()
            .filter(|t| !(self.is_filler_token(t) || lexicon::is_range_word(t.text)));
        let (Some(from), Some(to), None) = (content.next(), content.next(), content.next()) else {
            return Range::Absent;
        };
        if from.kind != Kind::Number || to.kind != Kind::Number {
            return Range::Absent;
        }
        let between = text::between(item, from, to).trim();
        if !lexicon::is_range_separator(between) {
            return Range::Absent;
        }
        if self.numeric_labels && matches!(self.pick(item), Pick::One(_)) {
            return Range::Absent;
        }
        match (from.text.parse::<usize>(), to.text.parse::<usize>()) {
            (Ok(from), Ok(to)) if 1 <= from && from <= to && to <= self.options.len() => {
                Range::Picks(from - 1..=to - 1)
            }
            _ => Range::Invalid,
        }
    }

    fn is_filler_token(&self, token: &Token<'_>) -> bool {
        match token.kind {
            Kind::Word => {
                lexicon::is_filler(token.text)
                    && !(self.letters
                        && lexicon::letter(token.text).is_some_and(|i| i < self.options.len()))
                    && !self.is_label_word(token.text)
            }
            Kind::Script => {
                lexicon::is_script_filler(token.text)
                    || lexicon::is_script_filler(lexicon::strip_script_affixes(token.text))
            }
            // "2 🙏": an emoji that is in no label is a gesture, not a pick.
            Kind::Symbol => !self.is_label_word(token.text),
            _ => false,
        }
    }

    /// What one item (a whole reply, or one element of a list) names.
    fn pick(&self, item: &str) -> Pick {
        self.pick_with(item, &text::tokenize(item))
    }

    /// [`Self::pick`] for an already tokenised item.
    fn pick_with(&self, item: &str, tokens: &[Token<'_>]) -> Pick {
        if let Some(i) = self.exact_with(item, tokens) {
            return Pick::One(i);
        }
        let content: Vec<Token<'_>> = tokens
            .iter()
            .filter(|t| !self.is_filler_token(t))
            .map(|t| match t.kind {
                Kind::Script => Token {
                    text: lexicon::strip_script_affixes(t.text),
                    kind: Kind::Script,
                },
                _ => *t,
            })
            .collect();
        if content.is_empty() {
            // "one", "option one", "the one": the word "one" alone.
            return match tokens.last() {
                Some(last)
                    if last.text == "one"
                        && tokens.len() <= 2
                        && tokens.first().is_some_and(|t| {
                            matches!(t.text, "one" | "option" | "number" | "choice")
                        }) =>
                {
                    self.position_pick(Position::Nth(1))
                }
                _ => Pick::Nothing,
            };
        }
        if let Some(recommended) = self.recommended {
            let words: Vec<&str> = content.iter().map(|t| t.text).collect();
            if lexicon::names_recommended(&words) {
                return Pick::One(recommended);
            }
        }
        let index = match content.as_slice() {
            [only] => self.index_reading(only),
            _ => None,
        };
        if let Some(index) = index {
            let label = match content[0].kind {
                Kind::Number | Kind::Word | Kind::Script => self.label_pick(tokens, &content),
                _ => Pick::Nothing,
            };
            return combine(index, label);
        }
        // "2. Production", "A) Postgres": an index that agrees with a label.
        if let [first, rest @ ..] = content.as_slice()
            && !rest.is_empty()
            && let Some(index) = self.index_reading(first)
        {
            // A letter needs punctuation after it, or it is the article "a".
            let separators: &[char] = if first.kind == Kind::Number {
                &['.', ')', ':', '-', ' ']
            } else {
                &['.', ')', ':', '-']
            };
            let punctuated = item
                .strip_prefix(first.text)
                .is_some_and(|after| after.starts_with(separators));
            if punctuated {
                let rest_tokens: Vec<Token<'_>> = rest.to_vec();
                match (index, self.label_pick(&rest_tokens, &rest_tokens)) {
                    (IndexReading::At(i), Pick::One(j)) if i == j => return Pick::One(i),
                    (IndexReading::At(i), Pick::One(j)) => {
                        return Pick::Ambiguous(sorted(vec![i, j]));
                    }
                    _ => {}
                }
            }
        }
        self.label_pick(tokens, &content)
    }

    fn position_pick(&self, position: Position) -> Pick {
        match position.index(self.options.len()) {
            Some(i) => Pick::One(i),
            None => Pick::Nothing,
        }
    }

    fn index_reading(&self, token: &Token<'_>) -> Option<IndexReading> {
        let count = self.options.len();
        if self.letters
            && token.kind == Kind::Word
            && let Some(i) = lexicon::letter(token.text)
        {
            return Some(if i < count {
                IndexReading::At(i)
            } else {
                IndexReading::OutOfRange
            });
        }
        let position = match token.kind {
            Kind::Number | Kind::Word | Kind::Script => lexicon::position(token.text, true)?,
            Kind::Decimal | Kind::Symbol => return None,
        };
        Some(match position.index(count) {
            Some(i) => IndexReading::At(i),
            None => IndexReading::OutOfRange,
        })
    }

    /// Reads the labels a reply names (docs/replies.md): labels named outright,
    /// then a part of one label, then words and prefixes, then misspellings,
    /// then words of the descriptions.
    fn label_pick(&self, tokens: &[Token<'_>], content: &[Token<'_>]) -> Pick {
        let mentioned = self.mentioned(tokens);
        if !mentioned.is_empty() {
            let covered = |word: &str| {
                mentioned
                    .iter()
                    .any(|&i| self.options[i].words.iter().any(|w| w == word))
            };
            let leftover = content
                .iter()
                .filter(|t| !covered(t.text) && !self.is_context_word(t.text))
                .filter(|t| {
                    t.kind != Kind::Script
                        || !mentioned
                            .iter()
                            .any(|&i| t.text.contains(&self.options[i].compact))
                })
                .count();
            if leftover > MAX_LEFTOVER_WORDS {
                return Pick::Nothing;
            }
            return match mentioned.as_slice() {
                [one] => Pick::One(*one),
                _ => Pick::Several(mentioned),
            };
        }
        let content: Vec<&Token<'_>> = content
            .iter()
            .filter(|t| !self.is_context_word(t.text) || self.is_label_word(t.text))
            .collect();
        if content.is_empty() {
            return Pick::Nothing;
        }
        for level in [
            Level::Part,
            Level::Words,
            Level::Stem,
            Level::Typo,
            Level::Description,
        ] {
            let found: Vec<usize> = (0..self.options.len())
                .filter(|&i| self.matches_at(level, i, &content))
                .collect();
            match found.as_slice() {
                [] => continue,
                [one] => return Pick::One(*one),
                _ => return Pick::Ambiguous(found),
            }
        }
        Pick::Nothing
    }

    fn is_context_word(&self, word: &str) -> bool {
        self.context_words.iter().any(|w| w == word)
    }

    /// Options whose whole label appears in the reply, minus labels inside
    /// a longer named label and filler-only labels when others are named.
    fn mentioned(&self, tokens: &[Token<'_>]) -> Vec<usize> {
        let compact: String = if self.options.iter().any(|o| o.script) {
            tokens.iter().map(|t| t.text).collect()
        } else {
            String::new()
        };
        let mut found: Vec<usize> = (0..self.options.len())
            .filter(|&i| {
                let option = &self.options[i];
                if option.words.is_empty() {
                    return false;
                }
                if option.script {
                    return compact.contains(&option.compact);
                }
                tokens
                    .windows(option.words.len())
                    .any(|window| window.iter().zip(&option.words).all(|(a, b)| a.text == b))
            })
            .collect();
        if found.len() < 2 {
            return found;
        }
        let snapshot = found.clone();
        found.retain(|&i| {
            !snapshot.iter().any(|&j| {
                j != i
                    && self.options[j].compact.len() > self.options[i].compact.len()
                    && self.options[j].compact.contains(&self.options[i].compact)
            })
        });
        if found.len() > 1 {
            let substantive: Vec<usize> = found
                .iter()
                .copied()
                .filter(|&i| !self.options[i].all_filler())
                .collect();
            if !substantive.is_empty() {
                found = substantive;
            }
        }
        found
    }

    fn matches_at(&self, level: Level, option: usize, content: &[&Token<'_>]) -> bool {
        let option = &self.options[option];
        match level {
            Level::Part => {
                if option.script || content.iter().any(|t| t.kind == Kind::Script) {
                    let needle: String = content.iter().map(|t| t.text).collect();
                    return needle.chars().count() >= 1 && option.compact.contains(&needle);
                }
                option
                    .words
                    .windows(content.len())
                    .any(|window| window.iter().zip(content).all(|(w, t)| *w == t.text))
            }
            Level::Words => {
                // Every word names this option, or all but one of two or more
                // ("deploy it to prod").
                let matched = content
                    .iter()
                    .filter(|t| {
                        option.words.iter().any(|w| {
                            w == t.text
                                || (t.kind == Kind::Word
                                    && t.text.chars().count() >= 3
                                    && w.starts_with(t.text))
                        })
                    })
                    .count();
                matched == content.len() || (matched >= 1 && content.len() - matched == 1)
            }
            Level::Stem => content.iter().all(|t| {
                t.kind == Kind::Word
                    && t.text.chars().count() >= 4
                    && option
                        .words
                        .iter()
                        .any(|w| lexicon::stem(w) == lexicon::stem(t.text))
            }),
            Level::Typo => content.iter().all(|t| {
                t.kind == Kind::Word
                    && option.words.iter().any(|w| {
                        let len = t.text.chars().count().min(w.chars().count());
                        let allowed = match len {
                            0..=4 => 0,
                            5..=7 => 1,
                            _ => 2,
                        };
                        allowed > 0 && within_edits(t.text, w, allowed)
                    })
            }),
            Level::Description => content.iter().all(|t| {
                t.kind == Kind::Word && option.description_words.iter().any(|w| w == t.text)
            }),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Level {
    Part,
    Words,
    Stem,
    Typo,
    Description,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum IndexReading {
    At(usize),
    OutOfRange,
}

/// Index and label readings together (docs/replies.md): when they disagree, the
/// reply is ambiguous.
fn combine(index: IndexReading, label: Pick) -> Pick {
    match (index, label) {
        (IndexReading::At(i), Pick::Nothing) => Pick::One(i),
        (IndexReading::At(i), Pick::One(j)) if i == j => Pick::One(i),
        (IndexReading::At(i), Pick::One(j)) => Pick::Ambiguous(sorted(vec![i, j])),
        (IndexReading::At(i), Pick::Several(v) | Pick::Ambiguous(v)) => {
            if v.contains(&i) {
                Pick::One(i)
            } else {
                let mut all = v;
                all.push(i);
                Pick::Ambiguous(sorted(all))
            }
        }
        (IndexReading::OutOfRange, Pick::One(j)) => Pick::One(j),
        (IndexReading::OutOfRange, _) => Pick::Nothing,
    }
}

fn sorted(mut v: Vec<usize>) -> Vec<usize> {
    v.sort_unstable();
    v.dedup();
    v
}

/// Cuts a reply before its justification ("production because it's safer"
/// → "production").
fn cut_justification<'a>(norm: &'a str, tokens: &[Token<'_>]) -> &'a str {
    for (position, token) in tokens.iter().enumerate() {
        if position > 0 && lexicon::is_justification(token.text) {
            return text::before(norm, token, 0)
                .trim_end_matches([' ', ',', '-', '—'])
                .trim_end();
        }
        if token.kind == Kind::Script
            && let Some(at) = lexicon::script_justification_at(token.text)
            && (at > 0 || position > 0)
        {
            return text::before(norm, token, at).trim_end();
        }
    }
    norm
}

/// Splits a reply into list items at `,` `;` `，` `、` new lines and the
/// words "and", "&", "+", "or", ….
pub(crate) fn split_list(norm: &str) -> Vec<&str> {
    let mut items = Vec::new();
    for part in norm.split([',', ';', '，', '、', '；', '\n']) {
        let mut start = 0;
        let mut offset = 0;
        for word in part.split(' ') {
            let word_start = offset;
            offset += word.len() + 1;
            if lexicon::LIST_WORDS.contains(&word) || lexicon::OR_WORDS.contains(&word) {
                items.push(part[start..word_start].trim());
                start = (word_start + word.len() + 1).min(part.len());
            }
        }
        items.push(part[start..].trim());
    }
    items.retain(|item| !item.is_empty());
    // Chinese joins list items without spaces: "第一和第三".
    if items.len() == 1 && items[0].chars().any(text::is_spaceless_script) {
        let item = items[0];
        let parts: Vec<&str> = item
            .split(['和', '跟', '与', '及'])
            .map(str::trim)
            .filter(|p| !p.is_empty())
            .collect();
        if parts.len() > 1 {
            return parts;
        }
    }
    items
}

/// The items of a reply as typed, split like [`split_list`] splits the
/// folded reply, trailing punctuation trimmed.
fn typed_items<'a>(display: &'a str) -> Vec<&'a str> {
    let mut items: Vec<&str> = Vec::new();
    let mut push = |item: &'a str| {
        let item = item
            .trim()
            .trim_end_matches(['.', '!', '?', '？', '。', '！'])
            .trim_end();
        if !item.is_empty() {
            items.push(item);
        }
    };
    for part in display.split([',', ';', '，', '、', '；', '\n']) {
        let mut start = 0;
        let mut offset = 0;
        for word in part.split(' ') {
            let word_start = offset;
            offset += word.len() + 1;
            let folded = text::fold(word);
            if lexicon::LIST_WORDS.contains(&folded.as_str())
                || lexicon::OR_WORDS.contains(&folded.as_str())
            {
                push(&part[start..word_start]);
                start = (word_start + word.len() + 1).min(part.len());
            }
        }
        push(&part[start..]);
    }
    items
}

/// Optimal-string-alignment distance at most `limit`.
fn within_edits(a: &str, b: &str, limit: usize) -> bool {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    if a.len().abs_diff(b.len()) > limit {
        return false;
    }
    let mut rows = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for (i, row) in rows.iter_mut().enumerate() {
        row[0] = i;
    }
    for (j, cell) in rows[0].iter_mut().enumerate() {
        *cell = j;
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut best = (rows[i - 1][j] + 1)
                .min(rows[i][j - 1] + 1)
                .min(rows[i - 1][j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                best = best.min(rows[i - 2][j - 2] + 1);
            }
            rows[i][j] = best;
        }
    }
    rows[a.len()][b.len()] <= limit
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn list_splitting() {
        assert_eq!(split_list("1, 3 and 4"), vec!["1", "3", "4"]);
        assert_eq!(split_list("1 or 2"), vec!["1", "2"]);
        assert_eq!(split_list("team channel"), vec!["team channel"]);
        assert_eq!(split_list("红、绿"), vec!["红", "绿"]);
    }

    #[test]
    fn edits() {
        assert!(within_edits("prodution", "production", 2));
        assert!(within_edits("stagign", "staging", 1));
        assert!(!within_edits("stage", "staging", 1));
    }
}

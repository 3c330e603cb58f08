//! Resolving a typed reply (docs/replies.md): one resolver for every channel.
//!
//! [`OptionMatcher`] prepares one question's labels once; resolving a reply
//! is then a pass over the reply only. [`AskMatcher`] splits a reply to a
//! multi-question ask into per-question parts.
//!
//! The order of the rules, for a choice question:
//! 1. clean the reply (`text`): NFKC, full Unicode case folding (`ß` is
//!    `ss`, `ﬀ` is `ff`), platform markup, quotes; labels are folded the
//!    same way, once, in [`OptionMatcher::new`];
//! 2. an exact label wins, even one that reads like a range (`2-4 weeks`);
//! 3. skip words;
//! 4. a correction between picks ("1, actually 2", "2, no wait, 3", "2
//!    sorry 3", "Staging, I mean Production", "红色，我是说蓝色", "1 改成 3",
//!    "ข้อ 1 ไม่ใช่ ข้อ 2"): what follows the last correction is the answer,
//!    so the last pick wins and a list after it replaces the list before
//!    it; only when what came before the first correction was a pick;
//! 5. hedges and idioms that start like an answer are the person's own
//!    words: a hedge word ("maybe", "idk"), a negation followed by an idiom
//!    tail ("no clue", "never mind", "not sure", "don't know"), a hedge
//!    phrase ("let me think", "it depends"), and in Chinese and Thai a hedge
//!    or a "but" inside a run ("不知道", "随便", "看情况", "是的，但是…",
//!    "ไม่รู้", "แล้วแต่", "ใช่ แต่…"); a word of a label (an option "Maybe")
//!    is not a hedge;
//! 6. options plainly "Yes" and "No" read like a confirm question; "all",
//!    "both", "all except 3";
//! 7. questions, negations and conditions make it the person's own words;
//! 8. a list of picks (`1, 3`, `staging and prod`, `1 3`): several picks
//!    are a list for multi-select and ambiguous for single-select. A range
//!    (`2-4`, `2–4`, `2 to 4`, `2~4`, `2到4`, `2至4`, `2 ถึง 4`) is every
//!    option between; a reversed or out-of-range one is not a pick. When an
//!    item of a list with separators names no option (`lint, deploy`), the
//!    whole reply is free text, never a partial pick, and
//!    [`OptionMatcher::unknown_items`] names those items;
//! 9. one pick: an index (`2`, `second`, `第二个`, letters where shown), a
//!    label named in the reply, a part of a label, words and prefixes,
//!    misspellings, description words; an index and a label that disagree
//!    are ambiguous;
//! 10. anything else is free text.
//!
//! A confirm question reads yes and no words first, then skip words, steps
//! 4, 5 and 7, then a reply made only of yes or no words and fillers.

mod ask;
mod lexicon;
mod option;
mod text;

pub use ask::AskMatcher;
pub use option::OptionMatcher;

/// How a reply resolved for one question.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Resolution {
    /// One option, by index (single-select and confirm: 0 = yes, 1 = no).
    Choice(usize),
    /// One or more options of a multi-select question, by index, ascending.
    Choices(Vec<usize>),
    /// The person's own words (cleaned of platform artefacts, otherwise as typed).
    FreeText(String),
    /// Several options fit equally; ask which one. Indices ascending.
    Ambiguous(Vec<usize>),
    /// The person skipped the question.
    Skip,
}

/// Whether a reply, as a whole, skips (`skip`, `/skip`, `跳过`, `ข้าม`).
pub fn is_skip(reply: &str) -> bool {
    lexicon::is_skip(&text::clean(reply).norm)
}

/// The key under which two labels are the same label (labels are unique,
/// trimmed and case-insensitive): the "(Recommended)" marker removed, NFKC,
/// full case folding (the fold the resolver uses, so `Weiß` and `WEISS` are
/// one label), invisible characters dropped, whitespace collapsed. Used
/// wherever labels are compared: duplicate detection, structured answers,
/// defaults.
pub fn label_key(label: &str) -> String {
    text::fold(crate::model::strip_recommended_marker(label))
}

/// A reply as shown back to people and agents: platform markup (mentions,
/// Slack escapes and links, a leading `@botname`) removed and trimmed,
/// otherwise as typed.
pub fn clean_reply(reply: &str) -> String {
    text::clean(reply).display
}

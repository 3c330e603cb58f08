//! The words the resolver knows, in English, Chinese and Thai: fillers,
//! skip words, yes/no, numbers and ordinals, question and negation words,
//! hedges and idioms, range words, corrections.
//!
//! Every list is folded (lower case, NFKC) so it compares with folded text.

use std::collections::{HashMap, HashSet};
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::LazyLock;

/// Words that carry no choice of their own ("I'll go with the second one,
/// please"). Removed before looking for an index or counting leftovers.
#[rustfmt::skip]
const FILLERS: &[&str] = &[
    "a", "ahead", "alright", "an", "answer", "are", "as", "be", "best", "choice", "choose",
    "choosing", "chose", "definitely", "do", "does", "fine", "for", "go", "going", "good",
    "great", "guess", "hmm", "i", "id", "ill", "im", "ill", "im", "is", "it", "its", "its",
    "just", "k", "let", "lets", "lets", "like", "looks", "me", "mine", "my", "need",
    "num", "number", "of", "ok", "okay", "on", "one", "opt", "option", "options", "our",
    "pick", "picking", "please", "pls", "plz", "prefer", "probably", "right", "say",
    "select", "selecting", "settle", "should", "sounds", "sure", "take", "taking", "thank",
    "thanks", "that", "thats", "the", "then", "think", "this", "thx", "to", "ty", "uh", "um",
    "us", "use", "using", "vote", "wanna", "want", "we", "well", "well", "will", "with",
    "works", "would", "ya", "yeah", "yep", "yes", "you", "choice", "selection", "reply",
    "going", "gonna", "hm", "so", "whatever", "anyway", "give", "gimme", "try", "get", "have",
    "make", "either", "here", "there", "now", "can", "could", "youre", "actually",
];

/// Affixes without a choice of their own in Chinese and Thai, which write
/// words without spaces ("选第二个吧", "เอาข้อ 2 ครับ").
#[rustfmt::skip]
const SCRIPT_PREFIXES: &[&str] = &[
    "我选择", "我选", "我要", "我想要", "我觉得", "选择", "选项", "就选", "就用", "那就", "还是", "选", "要", "用", "就",
    "请", "那", "第", "ขอเลือก", "เลือก", "เอา", "ขอ", "ใช้", "ตัวเลือกที่", "ตัวเลือก", "ข้อที่",
    "ข้อ", "อันที่", "อัน", "ที่", "เบอร์", "หมายเลข", "ผมเลือก", "ฉันเลือก", "ผม", "ฉัน",
    "หนู",
];

#[rustfmt::skip]
const SCRIPT_SUFFIXES: &[&str] = &[
    "吧", "番目", "番", "个选项", "选项", "个", "項", "项", "号", "條", "条", "种", "的", "啦", "呀", "了", "好了", "就好", "就行",
    "谢谢", "嗯", "哦", "ครับผม", "ครับ", "ค่ะ", "คะ", "คับ", "นะ", "จ้า", "จ้ะ", "ละกัน",
    "แล้วกัน", "เลย", "ก็ได้", "ดีกว่า", "นะครับ", "นะคะ", "จ๊ะ",
];

/// Whole replies that skip (docs/replies.md).
#[rustfmt::skip]
const SKIP_WORDS: &[&str] = &[
    "skip", "/skip", "skip it", "skip this", "skip this one", "skip please", "please skip",
    "pass", "skip for now", "skipped", "跳过", "跳過", "略过", "ข้าม", "ข้ามไป", "ข้ามข้อนี้",
];

/// Replies that mean yes to a confirm question.
#[rustfmt::skip]
const YES_WORDS: &[&str] = &[
    "yes", "y", "yeah", "yea", "yep", "yup", "ya", "sure", "ok", "okay", "k", "confirm",
    "confirmed", "approve", "approved", "go", "go ahead", "do it", "lgtm", "affirmative",
    "correct", "true", "absolutely", "of course", "definitely", "yes please", "please do",
    "sounds good", "sure thing", "go for it", "yes indeed", "ship it", "proceed", "agreed", "agree", "👍", "✅", "✔", "☑", "👌", "🆗", "是",
    "是的", "好", "好的", "可以", "行", "确认", "对", "同意", "没问题", "嗯", "要", "ใช่", "ได้", "ตกลง", "โอเค",
    "ใช่ครับ", "ใช่ค่ะ", "ได้ครับ", "ได้ค่ะ", "ตกลงครับ", "ตกลงค่ะ", "เอา", "เอาเลย", "ยืนยัน",
    "จัดไป",
];

/// Replies that mean no to a confirm question.
#[rustfmt::skip]
const NO_WORDS: &[&str] = &[
    "no", "n", "nope", "nah", "no thanks", "no thank you", "dont", "dont", "do not", "false",
    "negative", "reject", "rejected", "deny", "denied", "decline", "declined", "stop", "abort",
    "cancel", "not now", "no way", "never", "of course not", "not yet", "not really", "👎", "❌", "✖", "🚫", "不", "不是", "不要", "否", "不行",
    "不可以", "不用", "取消", "拒绝", "不同意", "算了", "ไม่", "ไม่ใช่", "ไม่เอา", "ไม่ได้", "ไม่ครับ",
    "ไม่ค่ะ", "ยกเลิก", "ไม่ต้อง",
];

/// Replies that select every option of a multi-select question.
#[rustfmt::skip]
const ALL_WORDS: &[&str] = &[
    "all", "both", "everything", "all of them", "all of the above", "all the above",
    "both of them", "every one", "everyone", "each", "all options", "all three", "all four",
    "every", "every option", "all options please", "全部都要", "都选", "全部", "都", "都要", "全选", "所有",
    "两个都要", "两个都", "全都要", "都可以", "ทั้งหมด", "ทุกข้อ", "ทั้งสอง", "ทั้งคู่", "ทุกอัน", "เอาหมด",
    "เอาทั้งหมด",
];

/// Words that turn a reply into a question (at its start).
const QUESTION_STARTS: &[&str] = &[
    "what", "whats", "whats", "why", "how", "can", "could", "explain", "tell", "wdym", "huh",
    "wait", "which", "does", "is", "are", "will", "who", "where", "when", "do you",
];

/// Words that make a reply a question wherever they stand (Chinese, Thai).
#[rustfmt::skip]
const QUESTION_MARKERS: &[&str] = &[
    "什么", "为什么", "怎么", "哪个", "是不是", "吗", "呢", "区别", "อะไร", "ทำไม", "ยังไง", "อย่างไร", "ไหม",
    "มั้ย", "หรือเปล่า", "หรือไม่", "ต่างกัน",
];

/// Negations: a reply with one is the person's own words (docs/replies.md).
#[rustfmt::skip]
const NEGATIONS: &[&str] = &[
    "not", "dont", "dont", "never", "neither", "nor", "no", "without", "except", "doesnt",
    "isnt", "wont", "shouldnt", "avoid", "none", "nothing", "nobody",
];

const SCRIPT_NEGATIONS: &[&str] = &["不", "别", "没", "ไม่", "อย่า", "ห้าม"];

/// Words that start a condition: "yes, but only after…" is not a plain yes.
#[rustfmt::skip]
const CONDITIONS: &[&str] = &[
    "but", "unless", "if", "except", "after", "before", "once", "when", "until", "但", "但是",
    "不过", "除非", "如果", "แต่", "ถ้า", "เว้นแต่", "หลังจาก",
];

/// Words that hedge wherever they stand: "maybe staging", "idk" are the
/// person's own words, not a pick (docs/replies.md).
#[rustfmt::skip]
const HEDGES: &[&str] = &[
    "maybe", "perhaps", "possibly", "unsure", "undecided", "idk", "dunno", "idc", "depends",
    "depending", "nevermind", "nvm", "whichever",
];

/// Words that, after a negation, make an idiom rather than an answer:
/// "no clue", "no idea", "never mind", "not sure", "don't know", "doesn't
/// matter", "no worries". ("no thanks", "not yet", "not now" stay answers.)
#[rustfmt::skip]
const IDIOM_TAILS: &[&str] = &[
    "clue", "idea", "ideas", "mind", "worries", "worry", "problem", "problems", "prob", "probs",
    "matter", "doubt", "wonder", "kidding", "offense", "offence", "comment", "biggie", "sweat",
    "rush", "hurry", "pressure", "preference", "difference", "care", "know", "knowing", "sure",
    "certain", "decided", "decide", "clear", "bother", "bothered", "opinion",
];

/// Words that make a following idiom tail an idiom ("no", "never", "not",
/// "don't", "haven't", "can't").
#[rustfmt::skip]
const IDIOM_HEADS: &[&str] = &[
    "no", "never", "not", "dont", "doesnt", "didnt", "havent", "hasnt", "cant", "cannot",
    "wont", "isnt", "aint",
];

/// Hedges of several words, matched as whole words anywhere in a reply.
#[rustfmt::skip]
const HEDGE_PHRASES: &[&[&str]] = &[
    &["let", "me", "think"], &["let", "me", "check"], &["think", "about", "it"],
    &["hard", "to", "say"], &["who", "knows"], &["it", "depends"], &["your", "call"],
    &["you", "decide"], &["you", "choose"], &["up", "to", "you"], &["either", "way"],
    &["get", "back", "to", "you"], &["ask", "me", "later"], &["not", "decided"],
    &["no", "strong", "opinion"], &["no", "strong", "feelings"],
];

/// Hedges and idioms in Chinese and Thai, found inside a run of text:
/// "不知道", "随便", "看情况", "再说吧", "ไม่รู้", "แล้วแต่", "ไม่แน่ใจ".
#[rustfmt::skip]
const SCRIPT_HEDGES: &[&str] = &[
    "不知道", "不清楚", "不确定", "不一定", "说不好", "不好说", "说不准", "随便", "无所谓", "看情况",
    "再说", "再看看", "想想", "考虑一下", "考虑考虑", "没想好", "可能", "也许", "或许", "大概",
    "你定", "你决定", "你看着办", "都行", "ไม่รู้", "ไม่ทราบ", "ไม่แน่ใจ", "ไม่แน่", "แล้วแต่",
    "อาจจะ", "บางที", "คิดก่อน", "คิดดู", "ยังไม่ได้ตัดสินใจ", "ตามสบาย", "อะไรก็ได้", "ยังไงก็ได้",
];

/// Words inside a Chinese or Thai run that start a condition: "是的，但是…",
/// "ใช่ แต่…" are not a plain yes.
const SCRIPT_CONDITIONS: &[&str] = &["但是", "不过", "可是", "除非", "如果", "แต่", "ถ้า", "เว้นแต่"];

/// Thai words that contain "แต่" without meaning "but".
const NOT_SCRIPT_CONDITIONS: &[&str] = &["แต่ง", "แต่ละ"];

/// Corrections between two picks: the person takes back what came before
/// ("1, actually 2", "2, no wait, 3", "Staging, I mean Production").
#[rustfmt::skip]
const CORRECTIONS: &[&[&str]] = &[
    &["actually"], &["no", "wait"], &["wait", "no"], &["wait"], &["sorry"], &["i", "mean"],
    &["i", "meant"], &["or", "rather"], &["correction"], &["scratch", "that"],
    &["make", "that"], &["make", "it"], &["change", "that", "to"], &["change", "it", "to"],
    &["change", "to"], &["oops"], &["no", "sorry"], &["err"],
];

/// Corrections in Chinese and Thai, found inside a run of text.
#[rustfmt::skip]
const SCRIPT_CORRECTIONS: &[&str] = &[
    "不对", "我是说", "我的意思是", "改成", "改为", "换成", "应该是", "更正", "说错了", "哦不",
    "ไม่ใช่", "หมายถึง", "ขอแก้เป็น", "แก้เป็น", "ขอเปลี่ยนเป็น", "เปลี่ยนเป็น", "ไม่สิ", "เอ้ย",
];

/// Words that start a justification, cut off before matching
/// ("production because staging is down").
const JUSTIFICATIONS: &[&str] = &[
    "because", "since", "cause", "cause", "cuz", "coz", "as", "over", "rather", "instead",
];
const SCRIPT_JUSTIFICATIONS: &[&str] = &["因为", "由于", "เพราะ"];

/// Words that name the recommended option ("go with your recommendation").
#[rustfmt::skip]
const RECOMMENDED_WORDS: &[&str] = &[
    "recommended", "recommend", "recommendation", "default", "suggested", "suggestion",
    "suggest", "推荐", "推荐的", "默认", "建议", "建议的", "แนะนำ", "ตามที่แนะนำ", "ค่าเริ่มต้น",
];

/// Words that may stand beside a recommended-word without changing it.
const RECOMMENDED_COMPANIONS: &[&str] = &["your", "whatever", "what", "as", "按", "ตาม", "ที่"];

/// Whether every word names the recommended option ("the recommended one").
pub(crate) fn names_recommended(words: &[&str]) -> bool {
    words.iter().any(|w| RECOMMENDED_WORDS.contains(w))
        && words
            .iter()
            .all(|w| RECOMMENDED_WORDS.contains(w) || RECOMMENDED_COMPANIONS.contains(w))
}

/// A crude English stem: "staging", "stage" and "staged" share "stag".
pub(crate) fn stem(word: &str) -> &str {
    for suffix in [
        "ations", "ation", "ings", "ing", "ions", "ion", "ed", "es", "s", "e", "y",
    ] {
        if let Some(stem) = word.strip_suffix(suffix)
            && stem.chars().count() >= 3
        {
            return stem;
        }
    }
    word
}

/// Whole-word separators between the items of a list.
#[rustfmt::skip]
pub(crate) const LIST_WORDS: &[&str] = &[
    "and", "&", "+", "plus", "also", "和", "跟", "与", "และ", "กับ",
];

/// What may stand between the two numbers of a range ("2-4", "2 to 4",
/// "2到4", "2 ถึง 4"), folded.
#[rustfmt::skip]
const RANGE_SEPARATORS: &[&str] = &[
    "-", "–", "—", "~", "〜", "..", "...", "to", "through", "thru", "till", "until",
    "到", "至", "ถึง", "จนถึง",
];

/// Words around a range that add nothing to it ("from 2 to 4", "从2到4",
/// "ตั้งแต่ 2 ถึง 4").
#[rustfmt::skip]
const RANGE_WORDS: &[&str] = &[
    "from", "to", "through", "thru", "till", "until", "从", "到", "至", "ตั้งแต่", "ถึง", "จนถึง",
];

/// Whether the text between two numbers makes them a range.
pub(crate) fn is_range_separator(between: &str) -> bool {
    RANGE_SEPARATORS.contains(&between)
}

/// Whether a word only frames a range.
pub(crate) fn is_range_word(word: &str) -> bool {
    RANGE_WORDS.contains(&word)
}

/// A word that offers alternatives: "1 or 2" for a single question is ambiguous.
pub(crate) const OR_WORDS: &[&str] = &["or", "或", "或者", "还是", "หรือ"];

/// Word lists as sets, built on first use: lookups happen per token, so
/// they must not scan the lists.
macro_rules! word_set {
    ($name:ident = $list:ident) => {
        static $name: LazyLock<WordSet> = LazyLock::new(|| $list.iter().copied().collect());
    };
}

/// A set of words hashed with FNV-1a: the words are short and trusted, so
/// SipHash's protection against crafted collisions is not needed here.
type WordSet = HashSet<&'static str, BuildHasherDefault<Fnv>>;

/// The FNV-1a hash.
#[derive(Debug)]
struct Fnv(u64);

impl Default for Fnv {
    fn default() -> Fnv {
        Fnv(0xcbf2_9ce4_8422_2325)
    }
}

impl Hasher for Fnv {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &byte in bytes {
            self.0 = (self.0 ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3);
        }
    }
}

word_set!(FILLER_SET = FILLERS);
word_set!(SCRIPT_PREFIX_SET = SCRIPT_PREFIXES);
word_set!(SCRIPT_SUFFIX_SET = SCRIPT_SUFFIXES);
word_set!(SKIP_SET = SKIP_WORDS);
word_set!(ALL_SET = ALL_WORDS);
word_set!(YES_SET = YES_WORDS);
word_set!(NO_SET = NO_WORDS);
word_set!(QUESTION_START_SET = QUESTION_STARTS);
word_set!(NEGATION_SET = NEGATIONS);
word_set!(CONDITION_SET = CONDITIONS);
word_set!(JUSTIFICATION_SET = JUSTIFICATIONS);
word_set!(HEDGE_SET = HEDGES);
word_set!(IDIOM_TAIL_SET = IDIOM_TAILS);
word_set!(IDIOM_HEAD_SET = IDIOM_HEADS);

fn contains(set: &LazyLock<WordSet>, word: &str) -> bool {
    set.contains(word)
}

pub(crate) fn is_filler(word: &str) -> bool {
    contains(&FILLER_SET, word)
}

pub(crate) fn is_skip(norm: &str) -> bool {
    contains(&SKIP_SET, norm)
}

pub(crate) fn is_all(norm: &str) -> bool {
    contains(&ALL_SET, norm)
}

pub(crate) fn is_yes(norm: &str) -> bool {
    contains(&YES_SET, norm)
}

pub(crate) fn is_no(norm: &str) -> bool {
    contains(&NO_SET, norm)
}

pub(crate) fn is_question_start(word: &str) -> bool {
    contains(&QUESTION_START_SET, word)
}

pub(crate) fn has_question_marker(norm: &str) -> bool {
    script_phrases(norm).any(|(_, _, role)| role == ScriptRole::Question)
}

pub(crate) fn is_negation(word: &str) -> bool {
    contains(&NEGATION_SET, word)
}

pub(crate) fn starts_with_script_negation(run: &str) -> bool {
    SCRIPT_NEGATIONS.iter().any(|n| run.starts_with(n))
}

pub(crate) fn is_condition(word: &str) -> bool {
    contains(&CONDITION_SET, word)
}

/// Whether a word hedges ("maybe", "idk").
pub(crate) fn is_hedge(word: &str) -> bool {
    contains(&HEDGE_SET, word)
}

/// Whether two words in a row make an idiom ("no clue", "never mind").
pub(crate) fn is_idiom(head: &str, tail: &str) -> bool {
    contains(&IDIOM_HEAD_SET, head) && contains(&IDIOM_TAIL_SET, tail)
}

/// The length, in words, of a hedge phrase starting at `words[0]`.
pub(crate) fn hedge_phrase_at(words: &[&str]) -> Option<usize> {
    phrase_at(HEDGE_PHRASES, words)
}

/// The length, in words, of a correction starting at `words[0]`.
pub(crate) fn correction_at(words: &[&str]) -> Option<usize> {
    phrase_at(CORRECTIONS, words)
}

/// The longest phrase of `phrases` that `words` start with.
fn phrase_at(phrases: &[&[&str]], words: &[&str]) -> Option<usize> {
    phrases
        .iter()
        .filter(|phrase| words.starts_with(phrase))
        .map(|phrase| phrase.len())
        .max()
}

/// A Chinese or Thai hedge inside a run ("不知道", "แล้วแต่").
pub(crate) fn script_hedge_in(run: &str) -> Option<&str> {
    script_phrases(run)
        .find(|(_, _, role)| *role == ScriptRole::Hedge)
        .map(|(start, end, _)| &run[start..end])
}

/// Whether a Chinese or Thai run holds a condition ("但是", "แต่").
pub(crate) fn has_script_condition(run: &str) -> bool {
    script_phrases(run).any(|(start, _, role)| {
        role == ScriptRole::Condition
            && !NOT_SCRIPT_CONDITIONS
                .iter()
                .any(|word| run[start..].starts_with(word))
    })
}

/// Byte ranges of the Chinese and Thai corrections inside a run, in order.
pub(crate) fn script_corrections_in(run: &str) -> impl Iterator<Item = (usize, usize)> + '_ {
    script_phrases(run)
        .filter(|(_, _, role)| *role == ScriptRole::Correction)
        .map(|(start, end, _)| (start, end))
}

/// What a Chinese or Thai phrase found inside a run does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ScriptRole {
    Hedge,
    Condition,
    Correction,
    Question,
}

/// The Chinese and Thai phrase lists by their first character, so a run is
/// scanned once for all of them, without a substring search per phrase.
type ScriptIndex = HashMap<char, Vec<(&'static str, ScriptRole)>, BuildHasherDefault<Fnv>>;

static SCRIPT_INDEX: LazyLock<ScriptIndex> = LazyLock::new(|| {
    let mut index = ScriptIndex::default();
    for (list, role) in [
        (SCRIPT_HEDGES, ScriptRole::Hedge),
        (SCRIPT_CONDITIONS, ScriptRole::Condition),
        (SCRIPT_CORRECTIONS, ScriptRole::Correction),
        (QUESTION_MARKERS, ScriptRole::Question),
    ] {
        for phrase in list {
            if let Some(first) = phrase.chars().next() {
                index.entry(first).or_default().push((phrase, role));
            }
        }
    }
    index
});

/// Every listed Chinese or Thai phrase inside `text`: start, end, role.
fn script_phrases(text: &str) -> impl Iterator<Item = (usize, usize, ScriptRole)> + '_ {
    text.char_indices()
        .filter(|(_, c)| !c.is_ascii())
        .filter_map(|(at, c)| Some((at, SCRIPT_INDEX.get(&c)?)))
        .flat_map(move |(at, phrases)| {
            phrases
                .iter()
                .filter(move |(phrase, _)| text[at..].starts_with(phrase))
                .map(move |(phrase, role)| (at, at + phrase.len(), *role))
        })
}

/// Whether a word can start a correction, a hedge phrase or an idiom; a
/// quick test before the phrase lists are scanned.
pub(crate) fn may_start_phrase(word: &str) -> bool {
    contains(&PHRASE_START_SET, word)
}

static PHRASE_START_SET: LazyLock<WordSet> = LazyLock::new(|| {
    CORRECTIONS
        .iter()
        .chain(HEDGE_PHRASES)
        .filter_map(|phrase| phrase.first().copied())
        .collect()
});

pub(crate) fn is_justification(word: &str) -> bool {
    contains(&JUSTIFICATION_SET, word)
}

pub(crate) fn script_justification_at(run: &str) -> Option<usize> {
    SCRIPT_JUSTIFICATIONS
        .iter()
        .filter_map(|j| run.find(j))
        .min()
}

/// Strips filler prefixes and suffixes from a Chinese or Thai run, as often
/// as they occur ("选第二个吧" → "二").
pub(crate) fn strip_script_affixes(mut run: &str) -> &str {
    loop {
        let before = run.len();
        // Longest affix first, at most six characters.
        let starts: Vec<usize> = run.char_indices().map(|(i, _)| i).skip(1).take(6).collect();
        if let Some(&cut) = starts
            .iter()
            .rev()
            .find(|&&i| SCRIPT_PREFIX_SET.contains(&run[..i]))
        {
            run = &run[cut..];
        }
        let ends: Vec<usize> = run.char_indices().rev().map(|(i, _)| i).take(6).collect();
        if let Some(&cut) = ends
            .iter()
            .rev()
            .find(|&&i| i > 0 && SCRIPT_SUFFIX_SET.contains(&run[i..]))
        {
            run = &run[..cut];
        }
        if run.len() == before {
            return run;
        }
    }
}

/// Whether a Chinese or Thai run is nothing but filler.
pub(crate) fn is_script_filler(run: &str) -> bool {
    SCRIPT_PREFIX_SET.contains(run) || SCRIPT_SUFFIX_SET.contains(run)
}

/// A position in the option list named by a reply.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Position {
    /// 1-based.
    Nth(usize),
    /// The last option.
    Last,
}

impl Position {
    /// The 0-based option index, if it is within `1..=count`.
    pub(crate) fn index(self, count: usize) -> Option<usize> {
        match self {
            Position::Nth(n) if (1..=count).contains(&n) => Some(n - 1),
            Position::Nth(_) => None,
            Position::Last => count.checked_sub(1),
        }
    }
}

#[rustfmt::skip]
const CARDINALS: &[&str] = &[
    "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven",
    "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen",
    "twenty",
];

#[rustfmt::skip]
const ORDINALS: &[&str] = &[
    "first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth",
    "tenth", "eleventh", "twelfth", "thirteenth", "fourteenth", "fifteenth", "sixteenth",
    "seventeenth", "eighteenth", "nineteenth", "twentieth",
];

#[rustfmt::skip]
const THAI_NUMBERS: &[&str] = &[
    "หนึ่ง", "สอง", "สาม", "สี่", "ห้า", "หก", "เจ็ด", "แปด", "เก้า", "สิบ",
];

/// Reads one token as a position: `2`, `2nd`, `second`, `two` (the
/// cardinal only when `cardinal_words`), `last`, Chinese `第二个` / `二`,
/// Thai `ข้อสอง` / `ที่ 2` forms.
pub(crate) fn position(token: &str, cardinal_words: bool) -> Option<Position> {
    if let Ok(n) = token.parse::<usize>() {
        return (!token.starts_with('0') || token == "0").then_some(Position::Nth(n));
    }
    if let Some(digits) = token
        .strip_suffix("st")
        .or_else(|| token.strip_suffix("nd"))
        .or_else(|| token.strip_suffix("rd"))
        .or_else(|| token.strip_suffix("th"))
        && !digits.is_empty()
        && digits.bytes().all(|b| b.is_ascii_digit())
    {
        return digits.parse().ok().map(Position::Nth);
    }
    if let Some(i) = ORDINALS.iter().position(|w| *w == token) {
        return Some(Position::Nth(i + 1));
    }
    if cardinal_words && let Some(i) = CARDINALS.iter().position(|w| *w == token) {
        return Some(Position::Nth(i + 1));
    }
    match token {
        "last"
        | "final"
        | "bottom"
        | "最后"
        | "最后一个"
        | "最后那个"
        | "สุดท้าย"
        | "อันสุดท้าย"
        | "ข้อสุดท้าย" => return Some(Position::Last),
        "top" | "首个" | "头一个" | "แรก" | "อันแรก" | "ข้อแรก" =>
        {
            return Some(Position::Nth(1));
        }
        _ => {}
    }
    script_position(token)
}

fn script_position(token: &str) -> Option<Position> {
    if !token.chars().any(crate::resolve::text::is_spaceless_script) {
        return None;
    }
    let had_ordinal_marker = token.contains('第') || token.contains("ที่") || token.contains("ข้อ");
    let core = strip_script_affixes(token);
    if let Ok(n) = core.parse::<usize>() {
        return Some(Position::Nth(n));
    }
    if let Some(n) = chinese_number(core) {
        return Some(Position::Nth(n));
    }
    if let Some(i) = THAI_NUMBERS.iter().position(|w| *w == core) {
        return Some(Position::Nth(i + 1));
    }
    match core {
        "แรก" => Some(Position::Nth(1)),
        "สุดท้าย" | "最后" | "最后一" => Some(Position::Last),
        "一" if had_ordinal_marker => Some(Position::Nth(1)),
        _ => None,
    }
}

/// 一 … 九十九 (and 两 for two).
fn chinese_number(s: &str) -> Option<usize> {
    fn digit(c: char) -> Option<usize> {
        Some(match c {
            '一' | '壹' => 1,
            '二' | '两' | '贰' => 2,
            '三' | '叁' => 3,
            '四' | '肆' => 4,
            '五' | '伍' => 5,
            '六' | '陆' => 6,
            '七' | '柒' => 7,
            '八' | '捌' => 8,
            '九' | '玖' => 9,
            _ => return None,
        })
    }
    let chars: Vec<char> = s.chars().collect();
    match chars.as_slice() {
        ['十'] => Some(10),
        [d] => digit(*d),
        ['十', d] => Some(10 + digit(*d)?),
        [d, '十'] => Some(digit(*d)? * 10),
        [d, '十', e] => Some(digit(*d)? * 10 + digit(*e)?),
        _ => None,
    }
}

/// A letter pick: `a` → 0 … `y` → 24.
pub(crate) fn letter(token: &str) -> Option<usize> {
    let mut chars = token.chars();
    match (chars.next(), chars.next()) {
        (Some(c @ 'a'..='y'), None) => Some(c as usize - 'a' as usize),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positions() {
        let cases: &[(&str, Option<Position>)] = &[
            ("2", Some(Position::Nth(2))),
            ("2nd", Some(Position::Nth(2))),
            ("second", Some(Position::Nth(2))),
            ("two", Some(Position::Nth(2))),
            ("last", Some(Position::Last)),
            ("第二个", Some(Position::Nth(2))),
            ("第2个", Some(Position::Nth(2))),
            ("选第三个吧", Some(Position::Nth(3))),
            ("二", Some(Position::Nth(2))),
            ("十二", Some(Position::Nth(12))),
            ("最后一个", Some(Position::Last)),
            ("ข้อสอง", Some(Position::Nth(2))),
            ("อันที่3", Some(Position::Nth(3))),
            ("อันแรก", Some(Position::Nth(1))),
            ("เอาข้อ2ครับ", Some(Position::Nth(2))),
            ("02", None),
            ("staging", None),
            ("生产", None),
        ];
        for (token, expect) in cases {
            assert_eq!(position(token, true), *expect, "{token}");
        }
    }

    #[test]
    fn letters() {
        assert_eq!(letter("a"), Some(0));
        assert_eq!(letter("c"), Some(2));
        assert_eq!(letter("z"), None);
        assert_eq!(letter("ab"), None);
    }

    #[test]
    fn affixes() {
        assert_eq!(strip_script_affixes("选第二个吧"), "二");
        assert_eq!(strip_script_affixes("เอาพรุ่งนี้ครับ"), "พรุ่งนี้");
        assert_eq!(strip_script_affixes("生产环境"), "生产环境");
    }
}

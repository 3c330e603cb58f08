//! askbridge's own words in every supported language, in one table.
//!
//! Every fixed phrase askbridge shows (button labels, prompt hints, footers,
//! status lines) lives in [`Strings`], once per [`Locale`]. Phrases with a
//! `{name}` placeholder are templates filled by [`fill`]. Agent text
//! (titles, questions, labels) is never translated.
//!
//! The words a person is told to type (`skip`, `yes`, `no`) must be words
//! the resolver accepts: en `skip`/`yes`/`no`, zh-CN `跳过`/`是`/`否`,
//! th `ข้าม`/`ใช่`/`ไม่ใช่`.

use std::fmt;

/// A language for askbridge's own words: `en`, `zh-CN`, `th`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Locale {
    /// English.
    #[default]
    En,
    /// Simplified Chinese.
    ZhCn,
    /// Thai.
    Th,
}

impl Locale {
    /// Every supported locale, in a fixed order.
    pub const ALL: [Locale; 3] = [Locale::En, Locale::ZhCn, Locale::Th];

    /// Reads a BCP 47-ish tag, case-insensitive, `_` or `-`: `en`, `en-US`,
    /// `zh`, `zh-CN`, `zh-SG`, `zh-Hans`, `th`, `th-TH`. Traditional Chinese
    /// tags (`zh-TW`, `zh-HK`, `zh-Hant`) and unknown languages give `None`.
    pub fn parse(tag: &str) -> Option<Locale> {
        let tag = tag.trim().to_ascii_lowercase().replace('_', "-");
        let mut parts = tag.split('-');
        let language = parts.next().unwrap_or_default();
        let rest: Vec<&str> = parts.collect();
        match language {
            "en" => Some(Locale::En),
            "th" => Some(Locale::Th),
            "zh" => {
                let traditional = rest
                    .iter()
                    .any(|p| matches!(*p, "tw" | "hk" | "mo" | "hant"));
                (!traditional).then_some(Locale::ZhCn)
            }
            _ => None,
        }
    }

    /// The canonical tag: `en`, `zh-CN` or `th`.
    pub fn as_str(self) -> &'static str {
        match self {
            Locale::En => "en",
            Locale::ZhCn => "zh-CN",
            Locale::Th => "th",
        }
    }

    /// The phrase table of this locale.
    pub fn strings(self) -> &'static Strings {
        match self {
            Locale::En => &EN,
            Locale::ZhCn => &ZH_CN,
            Locale::Th => &TH,
        }
    }
}

impl fmt::Display for Locale {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// askbridge's own words in one language. Templates name their
/// placeholders in braces; fill them with [`fill`].
#[derive(Debug)]
pub struct Strings {
    /// Button that opens the free-text path of a choice question.
    pub other: &'static str,
    /// Button that skips the whole ask.
    pub skip: &'static str,
    /// Button that leaves one optional question unanswered (stepper).
    pub skip_question: &'static str,
    /// Confirm button: yes.
    pub yes: &'static str,
    /// Confirm button: no.
    pub no: &'static str,
    /// Button that submits the toggled options of a multi-select question.
    pub done: &'static str,
    /// Button that opens a text input (modal or forced reply).
    pub answer: &'static str,
    /// The recommended marker as a word, where the ⭐ emoji cannot be shown.
    pub recommended: &'static str,

    /// The word to type to skip; the resolver accepts it.
    pub skip_word: &'static str,
    /// The word to type for yes; the resolver accepts it.
    pub yes_word: &'static str,
    /// The word to type for no; the resolver accepts it.
    pub no_word: &'static str,

    /// Intro of a multi-question prompt. `{n}`: question count; `{eg}`: a
    /// keyed example answer such as `Q1: 2`.
    pub intro_multi: &'static str,
    /// Example answer to a text question, used in `{eg}` of `intro_multi`.
    pub eg_text_answer: &'static str,
    /// Opens the hint after a question (with the space before it, if any).
    pub hint_open: &'static str,
    /// Closes the hint after a question.
    pub hint_close: &'static str,
    /// Separates parts of one hint.
    pub hint_sep: &'static str,
    /// Hint of a multi-select question. `{eg}`: example picks.
    pub hint_multi: &'static str,
    /// Hint of a confirm question.
    pub hint_confirm: &'static str,
    /// Hint of a text question.
    pub hint_text: &'static str,
    /// Hint of a text question with a placeholder. `{eg}`: the placeholder.
    pub hint_text_eg: &'static str,
    /// Hint of a multi-line text question.
    pub hint_textarea: &'static str,
    /// An example, after `hint_textarea`. `{eg}`: the placeholder.
    pub hint_eg: &'static str,
    /// Marks a question that may be left unanswered.
    pub hint_optional: &'static str,
    /// Shows the default answer. `{d}`: the default.
    pub hint_default: &'static str,
    /// Separates items of a list (defaults).
    pub list_sep: &'static str,

    /// Footer: one single-select question with numbered options.
    pub reply_number: &'static str,
    /// Footer: several picks or several questions, numbered options.
    pub reply_numbers: &'static str,
    /// Footer: one single-select question with lettered options.
    pub reply_letter: &'static str,
    /// Footer: several picks or several questions, lettered options.
    pub reply_letters: &'static str,
    /// Footer: one confirm question.
    pub reply_confirm: &'static str,
    /// Footer: one text question.
    pub reply_text: &'static str,
    /// Footer: several questions, none with options.
    pub reply_answers: &'static str,
    /// Footer: how to skip.
    pub reply_skip: &'static str,
    /// Separates the sentences of the footer.
    pub sentence_sep: &'static str,

    /// Status word of an answered ask with no summary.
    pub answered: &'static str,
    /// Status suffix naming who answered. `{name}`.
    pub answered_by: &'static str,
    /// Status of an answered ask with no summary, naming who. `{name}`.
    pub answered_by_alone: &'static str,
    /// Status suffix of an ask answered in the agent host's own dialog.
    pub answered_in_host: &'static str,
    /// Status of such an ask with no summary.
    pub answered_in_host_alone: &'static str,
    /// Status of a skipped ask.
    pub skipped: &'static str,
    /// Status of an ask that timed out.
    pub expired: &'static str,
    /// Status of a cancelled ask.
    pub cancelled: &'static str,
    /// Status of an ask that could not be delivered.
    pub delivery_failed: &'static str,

    /// Told to someone who answers an ask that has already ended.
    pub already_answered: &'static str,
    /// Told to someone who may not answer this ask.
    pub not_for_you: &'static str,
    /// Told to someone who may not answer an ask addressed to one person.
    /// `{name}`: that person.
    pub not_for_you_named: &'static str,
    /// Told when a click was taken.
    pub submitted: &'static str,
    /// Asks for the person's own words (a forced reply). `{q}`: the
    /// question.
    pub own_words: &'static str,
    /// Opens the re-ask of the questions still open after a partial reply.
    pub still_open: &'static str,
    /// Asks which option an ambiguous reply meant. `{q}`: the question,
    /// `{options}`: the numbered candidates.
    pub clarify: &'static str,
    /// Told when a reply matched no open question of a multi-question ask.
    /// `{eg}`: a keyed example such as `Q1: 2`.
    pub not_understood: &'static str,
    /// One item of a reply that named no option, quoted. `{item}`: the
    /// item as typed.
    pub unknown_item: &'static str,
    /// Asks about the items of a list reply that named no option, on a
    /// question with numbered options. `{items}`: the quoted items;
    /// `{q}`: the question.
    pub unknown_items: &'static str,
    /// [`Strings::unknown_items`] for a question with lettered options.
    pub unknown_items_letters: &'static str,
}

static EN: Strings = Strings {
    other: "Other…",
    skip: "Skip",
    skip_question: "Skip question",
    yes: "Yes",
    no: "No",
    done: "Done",
    answer: "Answer…",
    recommended: "Recommended",

    skip_word: "skip",
    yes_word: "yes",
    no_word: "no",

    intro_multi: "{n} questions. Answer each on its own line, like \"{eg}\".",
    eg_text_answer: "your answer",
    hint_open: " (",
    hint_close: ")",
    hint_sep: "; ",
    hint_multi: "choose any: e.g. {eg}",
    hint_confirm: "yes / no",
    hint_text: "write your answer",
    hint_text_eg: "write your answer, e.g. {eg}",
    hint_textarea: "write your answer; several lines are fine",
    hint_eg: "e.g. {eg}",
    hint_optional: "optional",
    hint_default: "default: {d}",
    list_sep: ", ",

    reply_number: "Reply with a number or option text, or write your own answer.",
    reply_numbers: "Reply with numbers or option text, or write your own answer.",
    reply_letter: "Reply with a letter or option text, or write your own answer.",
    reply_letters: "Reply with letters or option text, or write your own answer.",
    reply_confirm: "Reply \"yes\" or \"no\".",
    reply_text: "Reply with your answer.",
    reply_answers: "Reply with your answers.",
    reply_skip: "Reply \"skip\" to skip.",
    sentence_sep: " ",

    answered: "Answered",
    answered_by: "answered by {name}",
    answered_by_alone: "Answered by {name}",
    answered_in_host: "answered in the terminal",
    answered_in_host_alone: "Answered in the terminal",
    skipped: "Skipped",
    expired: "Expired",
    cancelled: "Cancelled",
    delivery_failed: "Not delivered",

    already_answered: "This question was already answered.",
    not_for_you: "This question is not for you.",
    not_for_you_named: "This question is for {name}.",
    submitted: "Answer submitted",
    own_words: "Your answer to “{q}”:",
    still_open: "Got it. Still open:",
    clarify: "Which did you mean for “{q}”: {options}? Reply with the number.",
    not_understood: "I could not match that to a question. Answer each on its own line, like \"{eg}\".",
    unknown_item: "\"{item}\"",
    unknown_items: "I didn't understand {items} for “{q}” — reply with option numbers or names, or write your own answer.",
    unknown_items_letters: "I didn't understand {items} for “{q}” — reply with option letters or names, or write your own answer.",
};

static ZH_CN: Strings = Strings {
    other: "其他…",
    skip: "跳过",
    skip_question: "跳过此题",
    yes: "是",
    no: "否",
    done: "完成",
    answer: "填写答案…",
    recommended: "推荐",

    skip_word: "跳过",
    yes_word: "是",
    no_word: "否",

    intro_multi: "共 {n} 个问题，请每行回答一题，例如“{eg}”。",
    eg_text_answer: "你的答案",
    hint_open: "（",
    hint_close: "）",
    hint_sep: "；",
    hint_multi: "可多选，例如 {eg}",
    hint_confirm: "是 / 否",
    hint_text: "请填写答案",
    hint_text_eg: "请填写答案，例如：{eg}",
    hint_textarea: "请填写答案，可以写多行",
    hint_eg: "例如：{eg}",
    hint_optional: "选填",
    hint_default: "默认：{d}",
    list_sep: "、",

    reply_number: "请回复编号或选项文字，也可以直接写下你的答案。",
    reply_numbers: "请回复编号或选项文字，也可以直接写下你的答案。",
    reply_letter: "请回复字母或选项文字，也可以直接写下你的答案。",
    reply_letters: "请回复字母或选项文字，也可以直接写下你的答案。",
    reply_confirm: "请回复“是”或“否”。",
    reply_text: "请直接回复你的答案。",
    reply_answers: "请直接回复你的答案。",
    reply_skip: "回复“跳过”以跳过。",
    sentence_sep: "",

    answered: "已回答",
    answered_by: "由 {name} 回答",
    answered_by_alone: "由 {name} 回答",
    answered_in_host: "已在终端中回答",
    answered_in_host_alone: "已在终端中回答",
    skipped: "已跳过",
    expired: "已过期",
    cancelled: "已取消",
    delivery_failed: "发送失败",

    already_answered: "这个问题已经有人回答了。",
    not_for_you: "这个问题不是问你的。",
    not_for_you_named: "这个问题是问 {name} 的。",
    submitted: "已提交",
    own_words: "请回复你对“{q}”的答案：",
    still_open: "收到。还有这些问题：",
    clarify: "“{q}”你指的是哪一个：{options}？请回复编号。",
    not_understood: "没能对应到任何问题。请每行回答一题，例如“{eg}”。",
    unknown_item: "“{item}”",
    unknown_items: "“{q}”的回答里有没看懂的内容：{items}。请回复选项编号或名称，也可以直接写下你的答案。",
    unknown_items_letters: "“{q}”的回答里有没看懂的内容：{items}。请回复选项字母或名称，也可以直接写下你的答案。",
};

static TH: Strings = Strings {
    other: "อื่นๆ…",
    skip: "ข้าม",
    skip_question: "ข้ามข้อนี้",
    yes: "ใช่",
    no: "ไม่ใช่",
    done: "เสร็จแล้ว",
    answer: "พิมพ์คำตอบ…",
    recommended: "แนะนำ",

    skip_word: "ข้าม",
    yes_word: "ใช่",
    no_word: "ไม่ใช่",

    intro_multi: "มี {n} คำถาม ตอบบรรทัดละหนึ่งข้อ เช่น “{eg}”",
    eg_text_answer: "คำตอบ",
    hint_open: " (",
    hint_close: ")",
    hint_sep: "; ",
    hint_multi: "เลือกได้หลายข้อ เช่น {eg}",
    hint_confirm: "ใช่ / ไม่ใช่",
    hint_text: "พิมพ์คำตอบ",
    hint_text_eg: "พิมพ์คำตอบ เช่น {eg}",
    hint_textarea: "พิมพ์คำตอบ เขียนได้หลายบรรทัด",
    hint_eg: "เช่น {eg}",
    hint_optional: "ไม่บังคับ",
    hint_default: "ค่าเริ่มต้น: {d}",
    list_sep: ", ",

    reply_number: "ตอบเป็นหมายเลขหรือข้อความของตัวเลือก หรือพิมพ์คำตอบของคุณเอง",
    reply_numbers: "ตอบเป็นหมายเลขหรือข้อความของตัวเลือก หรือพิมพ์คำตอบของคุณเอง",
    reply_letter: "ตอบเป็นตัวอักษรหรือข้อความของตัวเลือก หรือพิมพ์คำตอบของคุณเอง",
    reply_letters: "ตอบเป็นตัวอักษรหรือข้อความของตัวเลือก หรือพิมพ์คำตอบของคุณเอง",
    reply_confirm: "ตอบ “ใช่” หรือ “ไม่ใช่”",
    reply_text: "พิมพ์คำตอบของคุณ",
    reply_answers: "พิมพ์คำตอบของคุณ",
    reply_skip: "ตอบ “ข้าม” เพื่อข้าม",
    sentence_sep: " ",

    answered: "ตอบแล้ว",
    answered_by: "ตอบโดย {name}",
    answered_by_alone: "ตอบโดย {name}",
    answered_in_host: "ตอบในเทอร์มินัลแล้ว",
    answered_in_host_alone: "ตอบในเทอร์มินัลแล้ว",
    skipped: "ข้ามแล้ว",
    expired: "หมดเวลาแล้ว",
    cancelled: "ยกเลิกแล้ว",
    delivery_failed: "ส่งไม่สำเร็จ",

    already_answered: "คำถามนี้มีคนตอบแล้ว",
    not_for_you: "คำถามนี้ไม่ได้ถามคุณ",
    not_for_you_named: "คำถามนี้ถาม {name}",
    submitted: "ส่งคำตอบแล้ว",
    own_words: "พิมพ์คำตอบของคุณสำหรับ “{q}”:",
    still_open: "รับทราบ ยังเหลือคำถามเหล่านี้:",
    clarify: "“{q}” หมายถึงข้อไหน: {options}? ตอบเป็นหมายเลข",
    not_understood: "จับคู่คำตอบกับคำถามไม่ได้ ตอบบรรทัดละหนึ่งข้อ เช่น “{eg}”",
    unknown_item: "“{item}”",
    unknown_items: "ไม่เข้าใจ {items} ในคำตอบของ “{q}” ตอบเป็นหมายเลขหรือชื่อตัวเลือก หรือพิมพ์คำตอบของคุณเอง",
    unknown_items_letters: "ไม่เข้าใจ {items} ในคำตอบของ “{q}” ตอบเป็นตัวอักษรหรือชื่อตัวเลือก หรือพิมพ์คำตอบของคุณเอง",
};

/// Fills a template's `{name}` placeholders in one pass; inserted values
/// are never scanned again. Unknown placeholders are left as written.
pub fn fill(template: &str, values: &[(&str, &str)]) -> String {
    let mut out = String::with_capacity(template.len() + 16);
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        out.push_str(&rest[..open]);
        let after = &rest[open + 1..];
        let replaced = after.find('}').and_then(|close| {
            let name = &after[..close];
            values
                .iter()
                .find(|(key, _)| *key == name)
                .map(|(_, value)| (*value, close))
        });
        match replaced {
            Some((value, close)) => {
                out.push_str(value);
                rest = &after[close + 1..];
            }
            None => {
                out.push('{');
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_tags() {
        let table: &[(&str, Option<Locale>)] = &[
            ("en", Some(Locale::En)),
            ("en-US", Some(Locale::En)),
            ("EN_gb", Some(Locale::En)),
            ("zh", Some(Locale::ZhCn)),
            ("zh-CN", Some(Locale::ZhCn)),
            ("zh_cn", Some(Locale::ZhCn)),
            ("zh-Hans-CN", Some(Locale::ZhCn)),
            ("zh-SG", Some(Locale::ZhCn)),
            ("zh-TW", None),
            ("zh-Hant", None),
            ("th", Some(Locale::Th)),
            ("th-TH", Some(Locale::Th)),
            (" th ", Some(Locale::Th)),
            ("fr", None),
            ("", None),
            ("english", None),
        ];
        for (tag, expect) in table {
            assert_eq!(Locale::parse(tag), *expect, "{tag:?}");
        }
        for locale in Locale::ALL {
            assert_eq!(Locale::parse(locale.as_str()), Some(locale));
        }
    }

    #[test]
    fn fill_placeholders() {
        assert_eq!(fill("{n} questions", &[("n", "2")]), "2 questions");
        assert_eq!(fill("a {x} b", &[("x", "{x}")]), "a {x} b");
        assert_eq!(fill("{unknown} {", &[]), "{unknown} {");
        assert_eq!(fill("by {name}", &[("name", "Alice")]), "by Alice");
    }
}

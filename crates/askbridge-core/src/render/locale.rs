//! askbridge's own words in every supported language, in one table.
//!
//! Every fixed phrase askbridge shows (button labels, prompt hints, footers,
//! status lines) lives in [`Strings`], once per [`Locale`]. Phrases with a
//! `{name}` placeholder are templates filled by [`fill`]. Agent text
//! (titles, questions, labels) is never translated.
//!
//! The built-in web page takes its words from the same table: the shared
//! buttons and status words, and its own `page_*` phrases. Which locale a
//! browser gets is [`Locale::from_accept_language`].
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

    /// Picks the locale a reader prefers from an HTTP `Accept-Language`
    /// header (`th-TH,th;q=0.9,en;q=0.5`): the range with the highest `q`
    /// (1 when not given; the first written on a tie) that [`Locale::parse`]
    /// reads. `q=0` ("not this one"), `*`, other languages and ranges with
    /// an unreadable `q` are passed over; `None` when nothing is left, so
    /// the caller falls back to its default.
    pub fn from_accept_language(header: &str) -> Option<Locale> {
        let mut best: Option<(u16, Locale)> = None;
        for range in header.split(',') {
            let mut parts = range.split(';');
            let tag = parts.next().unwrap_or_default();
            let Some(weight) = quality(parts) else {
                continue;
            };
            let Some(locale) = Locale::parse(tag) else {
                continue;
            };
            if weight > 0 && best.is_none_or(|(most, _)| weight > most) {
                best = Some((weight, locale));
            }
        }
        best.map(|(_, locale)| locale)
    }

    /// The language's own name, for a language switch: `English`, `中文`,
    /// `ไทย`.
    pub fn name(self) -> &'static str {
        match self {
            Locale::En => "English",
            Locale::ZhCn => "中文",
            Locale::Th => "ไทย",
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

/// The weight of one `Accept-Language` range in thousandths, from its
/// parameters (`q=0.8` → 800; none → 1000); `None` when `q` is not a
/// quality value (`0` to `1` with up to three decimals).
fn quality<'a>(parameters: impl Iterator<Item = &'a str>) -> Option<u16> {
    let mut weight = 1000;
    for parameter in parameters {
        let Some((name, value)) = parameter.split_once('=') else {
            continue;
        };
        if !name.trim().eq_ignore_ascii_case("q") {
            continue;
        }
        let value = value.trim();
        let (whole, decimals) = value.split_once('.').unwrap_or((value, ""));
        let digits_ok = decimals.len() <= 3 && decimals.bytes().all(|b| b.is_ascii_digit());
        let thousandths = format!("{decimals:0<3}").parse::<u16>().ok()?;
        weight = match whole {
            "0" if digits_ok => thousandths,
            "1" if digits_ok && thousandths == 0 => 1000,
            _ => return None,
        };
    }
    Some(weight)
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
    /// Button that closes a form without sending it (a modal's Cancel).
    pub cancel: &'static str,
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
    /// Status suffix naming who answered, and in which other place the ask
    /// was posted to (`in Slack`). `{name}`, `{place}`.
    pub answered_by_in: &'static str,
    /// Status suffix naming the other place only. `{place}`.
    pub answered_in: &'static str,
    /// The web page, as the place an ask was answered in.
    pub web_page: &'static str,
    /// Above an ask passed on to an escalation place. `{place}`, `{after}`.
    pub passed_on: &'static str,
    /// Between the head and the tail of a context block cut to fit the
    /// chat. `{n}`: characters not shown (grouped: `12,345`).
    pub context_cut: &'static str,
    /// Stands for a long run of blank characters in a context block.
    /// `{n}`: how many (grouped).
    pub context_blank: &'static str,
    /// A duration in whole minutes. `{m}`.
    pub duration_min: &'static str,
    /// A duration in seconds. `{s}`.
    pub duration_s: &'static str,
    /// A reminder of an ask nobody has answered.
    pub still_waiting: &'static str,
    /// Status suffix of an ask answered in the agent host's own dialog.
    pub answered_in_host: &'static str,
    /// Status of such an ask with no summary.
    pub answered_in_host_alone: &'static str,
    /// Status of an ask answered here after the agent's host had decided
    /// in its own dialog: what was answered here, too late. `{answer}`,
    /// `{name}`.
    pub answered_in_host_first: &'static str,
    /// The same with nobody's name. `{answer}`.
    pub answered_in_host_first_alone: &'static str,
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
    /// Told to someone who answers an ask that timed out.
    pub already_expired: &'static str,
    /// Told to someone who answers an ask the agent cancelled.
    pub already_cancelled: &'static str,
    /// Told to someone who may not answer this ask.
    pub not_for_you: &'static str,
    /// Told to someone who may not answer an ask addressed to one person.
    /// `{name}`: that person.
    pub not_for_you_named: &'static str,
    /// Told when a click was taken.
    pub submitted: &'static str,
    /// Under a poll that takes several answers (Matrix): how to send them.
    pub poll_many: &'static str,
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
    /// Answers `/askbridge` in a shared conversation. `{mine}`: the target
    /// for asks only the sender may answer, `{anyone}`: for anyone there.
    pub where_here: &'static str,
    /// Answers `/askbridge` in a direct chat. `{mine}`: its target.
    pub where_direct: &'static str,
    /// What askbridge's registered command (`/askbridge`) is for, shown
    /// in the platform's command list (at most 100 characters).
    pub where_command: &'static str,
    /// One item of a reply that named no option, quoted. `{item}`: the
    /// item as typed.
    pub unknown_item: &'static str,
    /// Asks about the items of a list reply that named no option, on a
    /// question with numbered options. `{items}`: the quoted items;
    /// `{q}`: the question.
    pub unknown_items: &'static str,
    /// [`Strings::unknown_items`] for a question with lettered options.
    pub unknown_items_letters: &'static str,

    // The web page's own words (`page_*`): only the built-in page shows
    // these; it also uses the shared buttons and status words above.
    /// Status of the page's live connection while it opens.
    pub page_connecting: &'static str,
    /// Status of the page's live connection when it is open.
    pub page_live: &'static str,
    /// Status of the page's live connection when it was lost.
    pub page_offline: &'static str,
    /// Status of the page's live connection when the API token is missing.
    pub page_token_needed: &'static str,
    /// Names the page's language switch.
    pub page_language: &'static str,
    /// Names the page's timeline.
    pub page_conversation: &'static str,
    /// Heading of the empty timeline.
    pub page_empty_title: &'static str,
    /// Text of the empty timeline.
    pub page_empty_body: &'static str,
    /// Shown when the browser runs no JavaScript.
    pub page_noscript: &'static str,
    /// Names the reply field when no question waits.
    pub page_reply: &'static str,
    /// Names the reply field. `{title}`: the ask's title.
    pub page_reply_to: &'static str,
    /// Placeholder of the reply field when no question waits.
    pub page_no_questions: &'static str,
    /// Placeholder of the reply field for one question.
    pub page_type_reply: &'static str,
    /// Placeholder of the reply field for several questions.
    pub page_type_reply_keyed: &'static str,
    /// Button that sends the reply field.
    pub page_send: &'static str,
    /// Button that sends the answers of the last question.
    pub page_submit: &'static str,
    /// Button that goes on to the next question.
    pub page_next: &'static str,
    /// Button that goes back to the previous question.
    pub page_back: &'static str,
    /// The submit button while the answers are sent.
    pub page_sending: &'static str,
    /// Tooltip of the button that skips the whole ask ([`Strings::skip`]).
    pub page_skip_title: &'static str,
    /// A question without a header.
    pub page_question: &'static str,
    /// An ask of several questions without a title.
    pub page_questions_from_agent: &'static str,
    /// Which question is shown. `{n}`: its number; `{total}`: how many.
    pub page_question_n_of: &'static str,
    /// How many questions a collapsed ask has. `{n}`.
    pub page_n_questions: &'static str,
    /// The other places an ask is posted in, on the web page. `{places}`.
    pub page_also_in: &'static str,
    /// Which waiting ask is shown. `{n}`: its number; `{total}`: how many.
    pub page_n_of_waiting: &'static str,
    /// Names the switch between waiting asks.
    pub page_waiting_questions: &'static str,
    /// Button that shows the newer waiting ask.
    pub page_newer: &'static str,
    /// Button that shows the older waiting ask.
    pub page_older: &'static str,
    /// Tooltip of the button that expands the question panel.
    pub page_expand: &'static str,
    /// Tooltip of the button that collapses the question panel.
    pub page_collapse: &'static str,
    /// Names the button that expands the question panel.
    pub page_expand_question: &'static str,
    /// Names the button that collapses the question panel.
    pub page_collapse_question: &'static str,
    /// Shown when an ask has no open question left.
    pub page_nothing_left: &'static str,
    /// Marks an ask that waits for the person.
    pub page_waiting_for_you: &'static str,
    /// Read out after an answered question (with the space before it, if any).
    pub page_answered_mark: &'static str,
    /// Who wrote an ask, and when. `{time}`: the time.
    pub page_agent_at: &'static str,
    /// Placeholder of the own-words field of a choice question.
    pub page_write_own: &'static str,
    /// Placeholder of a multi-line text question.
    pub page_write_answer: &'static str,
    /// Placeholder of a text question.
    pub page_your_answer: &'static str,
    /// A single-choice question was left empty.
    pub page_choose_one: &'static str,
    /// A multi-choice question was left empty.
    pub page_choose_some: &'static str,
    /// A text question was left empty. `{skip}`: the skip button.
    pub page_write_or_skip: &'static str,
    /// Keyboard hint. `{key}`: the key that goes on.
    pub page_key_continue: &'static str,
    /// Keyboard hint. `{key}`: the key that submits.
    pub page_key_submit: &'static str,
    /// Keyboard hint: Esc collapses the panel.
    pub page_key_collapse: &'static str,
    /// Keyboard hint: digits pick options. `{n}`: the highest digit.
    pub page_key_pick: &'static str,
    /// Status of an ask answered in another tab or channel.
    pub page_answered_elsewhere: &'static str,
    /// Status of an ask answered on another channel. `{channel}`.
    pub page_answered_on: &'static str,
    /// Status of an ask answered by someone on another channel. `{name}`, `{channel}`.
    pub page_answered_by_on: &'static str,
    /// Status of an ask skipped in another tab or channel.
    pub page_skipped_elsewhere: &'static str,
    /// Status of an ask the server no longer knows.
    pub page_gone: &'static str,
    /// Status of an ask that ended for a reason the page does not know.
    pub page_ended: &'static str,
    /// Notice: an ask was answered elsewhere. `{title}`.
    pub page_notice_answered: &'static str,
    /// Notice: an ask ended. `{title}`; `{status}`: its status.
    pub page_notice_ended: &'static str,
    /// Time left: none.
    pub page_expiring: &'static str,
    /// Time left: under two minutes.
    pub page_expires_soon: &'static str,
    /// Time left in minutes. `{m}`.
    pub page_expires_min: &'static str,
    /// Time left in hours and minutes. `{h}`, `{m}`.
    pub page_expires_h_min: &'static str,
    /// The server could not be reached.
    pub page_unreachable: &'static str,
    /// The server wants the API token.
    pub page_needs_token: &'static str,
    /// The server failed otherwise. `{status}`: the HTTP status.
    pub page_http_error: &'static str,
    /// Asks which option a typed reply meant. `{q}`: the question's header; `{options}`: the candidates.
    pub page_clarify: &'static str,
    /// Asks for a question again. `{q}`: its header.
    pub page_answer_again: &'static str,

    // The email channel's own words (`email_*`).
    /// Under a question mail's prompt (whose footer says what to write):
    /// that the answer is a reply to the mail.
    pub email_how_to_answer: &'static str,
    /// Ends a mail's subject (with the space before it, if any) when the
    /// ask has more questions than the one it names. `{n}`: how many more.
    pub email_more_questions: &'static str,
    /// Above a mail's one-click answers (a link per option).
    pub email_or_click: &'static str,
    /// A one-click answer's confirmation page asks. `{a}`: the option.
    pub email_link_confirm: &'static str,
    /// Its button.
    pub email_link_button: &'static str,
    /// Shown once the click answered. `{a}`: the option.
    pub email_link_done: &'static str,
    /// A link that is forged, changed or out of date.
    pub email_link_invalid: &'static str,
    /// A link to an ask that is no longer open, or not the person's.
    pub email_link_not_taken: &'static str,
}

static EN: Strings = Strings {
    other: "Other…",
    skip: "Skip",
    skip_question: "Skip question",
    yes: "Yes",
    no: "No",
    done: "Done",
    answer: "Answer…",
    cancel: "Cancel",
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
    answered_by_in: "answered by {name} in {place}",
    answered_in: "answered in {place}",
    web_page: "the web page",
    passed_on: "Passed on from {place} after {after} without an answer",
    context_cut: "… {n} characters not shown …",
    context_blank: "⟨{n} blank characters⟩",
    duration_min: "{m} min",
    duration_s: "{s} s",
    still_waiting: "Still waiting for your answer",
    answered_in_host: "answered in the terminal",
    answered_in_host_alone: "Answered in the terminal",
    answered_in_host_first: "Answered in the terminal first — {name}'s answer here ({answer}) came too late and decided nothing",
    answered_in_host_first_alone: "Answered in the terminal first — the answer here ({answer}) came too late and decided nothing",
    skipped: "Skipped",
    expired: "Expired",
    cancelled: "Cancelled",
    delivery_failed: "Not delivered",

    already_answered: "This question was already answered.",
    already_expired: "This question has expired.",
    already_cancelled: "This question was cancelled.",
    not_for_you: "This question is not for you.",
    not_for_you_named: "This question is for {name}.",
    submitted: "Answer submitted",
    poll_many: "Vote for every option that applies, then react ✅ to send your choice.",
    own_words: "Your answer to “{q}”:",
    still_open: "Got it. Still open:",
    clarify: "Which did you mean for “{q}”: {options}? Reply with the number.",
    not_understood: "I could not match that to a question. Answer each on its own line, like \"{eg}\".",
    where_here: "To ask here, use {mine} (only you may answer) or {anyone} (anyone here may answer).",
    where_direct: "To ask you here, use {mine}.",
    where_command: "Show how an agent can ask you here",
    unknown_item: "\"{item}\"",
    unknown_items: "I didn't understand {items} for “{q}” — reply with option numbers or names, or write your own answer.",
    unknown_items_letters: "I didn't understand {items} for “{q}” — reply with option letters or names, or write your own answer.",

    page_connecting: "Connecting…",
    page_live: "Live",
    page_offline: "Offline — reconnecting…",
    page_token_needed: "Token needed — open this page with #token=…",
    page_language: "Language",
    page_conversation: "Conversation",
    page_empty_title: "No questions yet",
    page_empty_body: "When an agent asks you something, it appears here. Keep this page open.",
    page_noscript: "This page needs JavaScript to show and answer questions.",
    page_reply: "Reply",
    page_reply_to: "Reply to “{title}”",
    page_no_questions: "No questions waiting",
    page_type_reply: "Or type a reply",
    page_type_reply_keyed: "Or type a reply, e.g. Q1: 2",
    page_send: "Send",
    page_submit: "Submit",
    page_next: "Next",
    page_back: "Back",
    page_sending: "Sending…",
    page_skip_title: "Skip every question of this ask",
    page_question: "Question",
    page_questions_from_agent: "Questions from your agent",
    page_question_n_of: "Question {n} of {total}",
    page_n_questions: "{n} questions",
    page_also_in: "Also asked in {places}",
    page_n_of_waiting: "{n} of {total} waiting",
    page_waiting_questions: "Waiting questions",
    page_newer: "Newer question",
    page_older: "Older question",
    page_expand: "Expand",
    page_collapse: "Collapse (Esc)",
    page_expand_question: "Expand the question",
    page_collapse_question: "Collapse the question",
    page_nothing_left: "Nothing left to answer.",
    page_waiting_for_you: "Waiting for your answer",
    page_answered_mark: " (answered)",
    page_agent_at: "Agent · {time}",
    page_write_own: "Write your own answer",
    page_write_answer: "Write your answer",
    page_your_answer: "Your answer",
    page_choose_one: "Choose an option or write your own answer.",
    page_choose_some: "Choose at least one option or write your own answer.",
    page_write_or_skip: "Write an answer, or press “{skip}”.",
    page_key_continue: "{key} to continue",
    page_key_submit: "{key} to submit",
    page_key_collapse: "Esc to collapse",
    page_key_pick: "1–{n} to pick",
    page_answered_elsewhere: "Answered elsewhere",
    page_answered_on: "Answered on {channel}",
    page_answered_by_on: "Answered by {name} on {channel}",
    page_skipped_elsewhere: "Skipped elsewhere",
    page_gone: "No longer available",
    page_ended: "Ended",
    page_notice_answered: "“{title}” was answered elsewhere.",
    page_notice_ended: "“{title}”: {status}.",
    page_expiring: "expiring…",
    page_expires_soon: "expires in under 2 min",
    page_expires_min: "expires in {m} min",
    page_expires_h_min: "expires in {h} h {m} min",
    page_unreachable: "Could not reach askbridge. Check the connection and try again.",
    page_needs_token: "This page needs the API token: open it with #token=… in the address.",
    page_http_error: "Something went wrong (HTTP {status}). Try again.",
    page_clarify: "{q}: which did you mean: {options}?",
    page_answer_again: "{q}: please answer again.",
    email_how_to_answer: "To answer, reply to this mail.",
    email_more_questions: " (+{n} more)",
    email_or_click: "Or answer with one click (you will be asked to confirm):",
    email_link_confirm: "Answer “{a}”?",
    email_link_button: "Confirm",
    email_link_done: "✅ Answered: {a}. You can close this page.",
    email_link_invalid: "This link is not valid, or it has expired.",
    email_link_not_taken: "This answer was not taken: the question is no longer open.",
};

static ZH_CN: Strings = Strings {
    other: "其他…",
    skip: "跳过",
    skip_question: "跳过此题",
    yes: "是",
    no: "否",
    done: "完成",
    answer: "填写答案…",
    cancel: "取消",
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
    answered_by_in: "由 {name} 在 {place} 回答",
    answered_in: "已在 {place} 回答",
    web_page: "网页",
    passed_on: "{place} 上 {after} 无人回答，已转到这里",
    context_cut: "… 中间 {n} 个字符未显示 …",
    context_blank: "⟨{n} 个空白字符⟩",
    duration_min: "{m} 分钟",
    duration_s: "{s} 秒",
    still_waiting: "还在等你的回答",
    answered_in_host: "已在终端中回答",
    answered_in_host_alone: "已在终端中回答",
    answered_in_host_first: "已先在终端中回答 — {name} 在此的回答（{answer}）来得太晚，未起作用",
    answered_in_host_first_alone: "已先在终端中回答 — 此处的回答（{answer}）来得太晚，未起作用",
    skipped: "已跳过",
    expired: "已过期",
    cancelled: "已取消",
    delivery_failed: "发送失败",

    already_answered: "这个问题已经有人回答了。",
    already_expired: "这个问题已过期。",
    already_cancelled: "这个问题已取消。",
    not_for_you: "这个问题不是问你的。",
    not_for_you_named: "这个问题是问 {name} 的。",
    submitted: "已提交",
    poll_many: "请为所有适用的选项投票，然后用 ✅ 回应以提交。",
    own_words: "请回复你对“{q}”的答案：",
    still_open: "收到。还有这些问题：",
    clarify: "“{q}”你指的是哪一个：{options}？请回复编号。",
    not_understood: "没能对应到任何问题。请每行回答一题，例如“{eg}”。",
    where_here: "要在这里提问，请用 {mine}（只有你能回答）或 {anyone}（这里的任何人都能回答）。",
    where_direct: "要在这里向你提问，请用 {mine}。",
    where_command: "查看智能体如何在这里向你提问",
    unknown_item: "“{item}”",
    unknown_items: "“{q}”的回答里有没看懂的内容：{items}。请回复选项编号或名称，也可以直接写下你的答案。",
    unknown_items_letters: "“{q}”的回答里有没看懂的内容：{items}。请回复选项字母或名称，也可以直接写下你的答案。",

    page_connecting: "正在连接…",
    page_live: "已连接",
    page_offline: "已断开，正在重新连接…",
    page_token_needed: "需要令牌：请用 #token=… 打开此页面",
    page_language: "语言",
    page_conversation: "对话",
    page_empty_title: "还没有问题",
    page_empty_body: "智能体向你提问时，问题会显示在这里。请保持此页面打开。",
    page_noscript: "此页面需要启用 JavaScript 才能显示和回答问题。",
    page_reply: "回复",
    page_reply_to: "回复“{title}”",
    page_no_questions: "没有待回答的问题",
    page_type_reply: "或直接输入回复",
    page_type_reply_keyed: "或直接输入回复，例如 Q1: 2",
    page_send: "发送",
    page_submit: "提交",
    page_next: "下一题",
    page_back: "上一题",
    page_sending: "正在发送…",
    page_skip_title: "跳过这次提问的所有问题",
    page_question: "问题",
    page_questions_from_agent: "来自智能体的问题",
    page_question_n_of: "第 {n} 题，共 {total} 题",
    page_n_questions: "{n} 个问题",
    page_also_in: "也在 {places} 提问",
    page_n_of_waiting: "第 {n} 个，共 {total} 个待回答",
    page_waiting_questions: "待回答的问题",
    page_newer: "较新的问题",
    page_older: "较早的问题",
    page_expand: "展开",
    page_collapse: "收起（Esc）",
    page_expand_question: "展开问题",
    page_collapse_question: "收起问题",
    page_nothing_left: "没有需要回答的问题了。",
    page_waiting_for_you: "等待你的回答",
    page_answered_mark: "（已回答）",
    page_agent_at: "智能体 · {time}",
    page_write_own: "自己填写答案",
    page_write_answer: "请填写你的答案",
    page_your_answer: "你的答案",
    page_choose_one: "请选择一个选项，或自己填写答案。",
    page_choose_some: "请至少选择一个选项，或自己填写答案。",
    page_write_or_skip: "请填写答案，或点击“{skip}”。",
    page_key_continue: "按 {key} 继续",
    page_key_submit: "按 {key} 提交",
    page_key_collapse: "按 Esc 收起",
    page_key_pick: "按 1–{n} 选择",
    page_answered_elsewhere: "已在别处回答",
    page_answered_on: "已在 {channel} 上回答",
    page_answered_by_on: "由 {name} 在 {channel} 上回答",
    page_skipped_elsewhere: "已在别处跳过",
    page_gone: "已不存在",
    page_ended: "已结束",
    page_notice_answered: "“{title}”已在别处回答。",
    page_notice_ended: "“{title}”：{status}。",
    page_expiring: "即将过期…",
    page_expires_soon: "不到 2 分钟后过期",
    page_expires_min: "{m} 分钟后过期",
    page_expires_h_min: "{h} 小时 {m} 分钟后过期",
    page_unreachable: "无法连接 askbridge。请检查网络连接后重试。",
    page_needs_token: "此页面需要 API 令牌：请在地址后加上 #token=… 再打开。",
    page_http_error: "出错了（HTTP {status}），请重试。",
    page_clarify: "{q}：你指的是哪一个：{options}？",
    page_answer_again: "{q}：请重新回答。",
    email_how_to_answer: "直接回复此邮件即可作答。",
    email_more_questions: "（另有 {n} 个问题）",
    email_or_click: "也可以一键作答（会请你确认）：",
    email_link_confirm: "回答“{a}”？",
    email_link_button: "确认",
    email_link_done: "✅ 已回答：{a}。可以关闭此页面。",
    email_link_invalid: "此链接无效或已过期。",
    email_link_not_taken: "未采纳此回答：该问题已不再开放。",
};

static TH: Strings = Strings {
    other: "อื่นๆ…",
    skip: "ข้าม",
    skip_question: "ข้ามข้อนี้",
    yes: "ใช่",
    no: "ไม่ใช่",
    done: "เสร็จแล้ว",
    answer: "พิมพ์คำตอบ…",
    cancel: "ยกเลิก",
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
    answered_by_in: "ตอบโดย {name} ใน {place}",
    answered_in: "ตอบแล้วใน {place}",
    web_page: "หน้าเว็บ",
    passed_on: "ส่งต่อจาก {place} หลังจากไม่มีคำตอบ {after}",
    context_cut: "… ไม่ได้แสดง {n} อักขระ …",
    context_blank: "⟨อักขระว่าง {n} ตัว⟩",
    duration_min: "{m} นาที",
    duration_s: "{s} วินาที",
    still_waiting: "ยังรอคำตอบของคุณอยู่",
    answered_in_host: "ตอบในเทอร์มินัลแล้ว",
    answered_in_host_alone: "ตอบในเทอร์มินัลแล้ว",
    answered_in_host_first: "ตอบในเทอร์มินัลก่อนแล้ว — คำตอบของ {name} ที่นี่ ({answer}) มาช้าเกินไปและไม่มีผล",
    answered_in_host_first_alone: "ตอบในเทอร์มินัลก่อนแล้ว — คำตอบที่นี่ ({answer}) มาช้าเกินไปและไม่มีผล",
    skipped: "ข้ามแล้ว",
    expired: "หมดเวลาแล้ว",
    cancelled: "ยกเลิกแล้ว",
    delivery_failed: "ส่งไม่สำเร็จ",

    already_answered: "คำถามนี้มีคนตอบแล้ว",
    already_expired: "คำถามนี้หมดเวลาแล้ว",
    already_cancelled: "คำถามนี้ถูกยกเลิกแล้ว",
    not_for_you: "คำถามนี้ไม่ได้ถามคุณ",
    not_for_you_named: "คำถามนี้ถาม {name}",
    submitted: "ส่งคำตอบแล้ว",
    poll_many: "โหวตทุกตัวเลือกที่ใช้ได้ แล้วกดรีแอคชัน ✅ เพื่อส่งคำตอบ",
    own_words: "พิมพ์คำตอบของคุณสำหรับ “{q}”:",
    still_open: "รับทราบ ยังเหลือคำถามเหล่านี้:",
    clarify: "“{q}” หมายถึงข้อไหน: {options}? ตอบเป็นหมายเลข",
    not_understood: "จับคู่คำตอบกับคำถามไม่ได้ ตอบบรรทัดละหนึ่งข้อ เช่น “{eg}”",
    where_here: "ถามที่นี่ได้ด้วย {mine} (เฉพาะคุณตอบได้) หรือ {anyone} (ทุกคนที่นี่ตอบได้)",
    where_direct: "ถามคุณที่นี่ได้ด้วย {mine}",
    where_command: "ดูวิธีที่เอเจนต์ถามคุณที่นี่ได้",
    unknown_item: "“{item}”",
    unknown_items: "ไม่เข้าใจ {items} ในคำตอบของ “{q}” ตอบเป็นหมายเลขหรือชื่อตัวเลือก หรือพิมพ์คำตอบของคุณเอง",
    unknown_items_letters: "ไม่เข้าใจ {items} ในคำตอบของ “{q}” ตอบเป็นตัวอักษรหรือชื่อตัวเลือก หรือพิมพ์คำตอบของคุณเอง",

    page_connecting: "กำลังเชื่อมต่อ…",
    page_live: "เชื่อมต่อแล้ว",
    page_offline: "ออฟไลน์ — กำลังเชื่อมต่อใหม่…",
    page_token_needed: "ต้องใช้โทเคน — เปิดหน้านี้ด้วย #token=…",
    page_language: "ภาษา",
    page_conversation: "บทสนทนา",
    page_empty_title: "ยังไม่มีคำถาม",
    page_empty_body: "เมื่อเอเจนต์ถามอะไรคุณ คำถามจะแสดงที่นี่ เปิดหน้านี้ค้างไว้",
    page_noscript: "หน้านี้ต้องใช้ JavaScript เพื่อแสดงและตอบคำถาม",
    page_reply: "ตอบกลับ",
    page_reply_to: "ตอบกลับ “{title}”",
    page_no_questions: "ไม่มีคำถามที่รออยู่",
    page_type_reply: "หรือพิมพ์คำตอบ",
    page_type_reply_keyed: "หรือพิมพ์คำตอบ เช่น Q1: 2",
    page_send: "ส่ง",
    page_submit: "ส่งคำตอบ",
    page_next: "ถัดไป",
    page_back: "ย้อนกลับ",
    page_sending: "กำลังส่ง…",
    page_skip_title: "ข้ามทุกคำถามในชุดนี้",
    page_question: "คำถาม",
    page_questions_from_agent: "คำถามจากเอเจนต์ของคุณ",
    page_question_n_of: "คำถามที่ {n} จาก {total}",
    page_n_questions: "{n} คำถาม",
    page_also_in: "ถามใน {places} ด้วย",
    page_n_of_waiting: "{n} จาก {total} ที่รออยู่",
    page_waiting_questions: "คำถามที่รออยู่",
    page_newer: "คำถามที่ใหม่กว่า",
    page_older: "คำถามที่เก่ากว่า",
    page_expand: "ขยาย",
    page_collapse: "ย่อ (Esc)",
    page_expand_question: "ขยายคำถาม",
    page_collapse_question: "ย่อคำถาม",
    page_nothing_left: "ไม่มีคำถามเหลือให้ตอบแล้ว",
    page_waiting_for_you: "รอคำตอบจากคุณ",
    page_answered_mark: " (ตอบแล้ว)",
    page_agent_at: "เอเจนต์ · {time}",
    page_write_own: "พิมพ์คำตอบของคุณเอง",
    page_write_answer: "พิมพ์คำตอบของคุณ",
    page_your_answer: "คำตอบของคุณ",
    page_choose_one: "เลือกหนึ่งตัวเลือก หรือพิมพ์คำตอบของคุณเอง",
    page_choose_some: "เลือกอย่างน้อยหนึ่งตัวเลือก หรือพิมพ์คำตอบของคุณเอง",
    page_write_or_skip: "พิมพ์คำตอบ หรือกด “{skip}”",
    page_key_continue: "กด {key} เพื่อไปต่อ",
    page_key_submit: "กด {key} เพื่อส่ง",
    page_key_collapse: "กด Esc เพื่อย่อ",
    page_key_pick: "กด 1–{n} เพื่อเลือก",
    page_answered_elsewhere: "ตอบจากที่อื่นแล้ว",
    page_answered_on: "ตอบแล้วทาง {channel}",
    page_answered_by_on: "ตอบโดย {name} ทาง {channel}",
    page_skipped_elsewhere: "ข้ามจากที่อื่นแล้ว",
    page_gone: "ไม่มีคำถามนี้แล้ว",
    page_ended: "สิ้นสุดแล้ว",
    page_notice_answered: "“{title}” ได้รับคำตอบจากที่อื่นแล้ว",
    page_notice_ended: "“{title}”: {status}",
    page_expiring: "กำลังจะหมดเวลา…",
    page_expires_soon: "หมดเวลาในไม่ถึง 2 นาที",
    page_expires_min: "หมดเวลาใน {m} นาที",
    page_expires_h_min: "หมดเวลาใน {h} ชม. {m} นาที",
    page_unreachable: "ติดต่อ askbridge ไม่ได้ ตรวจสอบการเชื่อมต่อแล้วลองอีกครั้ง",
    page_needs_token: "หน้านี้ต้องใช้โทเคน API เปิดโดยใส่ #token=… ต่อท้ายที่อยู่เว็บ",
    page_http_error: "เกิดข้อผิดพลาด (HTTP {status}) ลองอีกครั้ง",
    page_clarify: "{q}: หมายถึงข้อไหน: {options}?",
    page_answer_again: "{q}: กรุณาตอบอีกครั้ง",
    email_how_to_answer: "ตอบได้โดยตอบกลับอีเมลนี้",
    email_more_questions: " (และอีก {n} คำถาม)",
    email_or_click: "หรือตอบด้วยคลิกเดียว (จะมีให้ยืนยัน):",
    email_link_confirm: "ตอบ “{a}” ใช่ไหม?",
    email_link_button: "ยืนยัน",
    email_link_done: "✅ ตอบแล้ว: {a} ปิดหน้านี้ได้เลย",
    email_link_invalid: "ลิงก์นี้ไม่ถูกต้องหรือหมดอายุแล้ว",
    email_link_not_taken: "ไม่ได้รับคำตอบนี้: คำถามปิดไปแล้ว",
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
    fn accept_language_picks_the_preferred_supported_locale() {
        let table: &[(&str, Option<Locale>)] = &[
            ("th", Some(Locale::Th)),
            ("th-TH,th;q=0.9,en-US;q=0.8,en;q=0.7", Some(Locale::Th)),
            ("zh-CN,zh;q=0.9", Some(Locale::ZhCn)),
            ("zh", Some(Locale::ZhCn)),
            ("zh-Hans", Some(Locale::ZhCn)),
            ("zh-Hans-SG", Some(Locale::ZhCn)),
            ("zh-SG", Some(Locale::ZhCn)),
            ("en-US,en;q=0.9", Some(Locale::En)),
            // The highest q wins, wherever it is written.
            ("en;q=0.5, th;q=0.8", Some(Locale::Th)),
            ("en;q=0.5,zh-CN", Some(Locale::ZhCn)),
            ("th;q=0.800, zh;q=0.801", Some(Locale::ZhCn)),
            // On a tie, the first written.
            ("th;q=0.5,en;q=0.5", Some(Locale::Th)),
            ("en,th", Some(Locale::En)),
            // Unsupported languages are passed over, not defaulted to.
            ("fr-FR,fr;q=0.9,th;q=0.1", Some(Locale::Th)),
            ("zh-TW,zh-HK;q=0.9,zh-CN;q=0.5", Some(Locale::ZhCn)),
            ("de, *;q=0.5", None),
            ("zh-TW", None),
            // q=0 means "not this one".
            ("th;q=0, en;q=0.1", Some(Locale::En)),
            ("th;q=0.000", None),
            // Spacing and case.
            (" TH-th ; Q=0.9 ,  en ; q=0.5", Some(Locale::Th)),
            ("en;level=1;q=0.4,th;q=0.3", Some(Locale::En)),
            ("1.", None),
            // Unreadable quality values drop their range.
            ("th;q=2, en;q=0.2", Some(Locale::En)),
            ("th;q=1.5, en;q=0.2", Some(Locale::En)),
            ("th;q=0.1234, en;q=0.2", Some(Locale::En)),
            ("th;q=abc, en;q=0.2", Some(Locale::En)),
            ("th;q=, en;q=0.2", Some(Locale::En)),
            ("th;q=-0.5, en;q=0.2", Some(Locale::En)),
            ("th;q=1.000", Some(Locale::Th)),
            ("th;q=1.", Some(Locale::Th)),
            ("th;q=0.", None),
            ("", None),
            (",,;", None),
            ("*", None),
        ];
        for (header, expect) in table {
            assert_eq!(Locale::from_accept_language(header), *expect, "{header:?}");
        }
    }

    #[test]
    fn every_locale_has_a_distinct_name() {
        let names: std::collections::HashSet<&str> = Locale::ALL.iter().map(|l| l.name()).collect();
        assert_eq!(names.len(), Locale::ALL.len());
    }

    #[test]
    fn fill_placeholders() {
        assert_eq!(fill("{n} questions", &[("n", "2")]), "2 questions");
        assert_eq!(fill("a {x} b", &[("x", "{x}")]), "a {x} b");
        assert_eq!(fill("{unknown} {", &[]), "{unknown} {");
        assert_eq!(fill("by {name}", &[("name", "Alice")]), "by Alice");
    }
}
